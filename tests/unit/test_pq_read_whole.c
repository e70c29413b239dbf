/*
 * Small files read whole (floe_pq_reader_options.read_whole, and the projection test in
 * prepare): one read of the file instead of one per column chunk, for files under 1 MiB.
 * The rows must be exactly those of the chunk-by-chunk and in-memory paths, larger files
 * keep the chunk path, and a file that is truncated or corrupt fails with an error that
 * names it, never a crash (the whole-file buffer is file_size bytes; every offset is
 * still checked against it).
 * And floe_pq_reader_read_row_group_into (rewrite decodes into its batch): the rows it
 * appends equal the row set's, a buffer of another layout is handed back (NULL) and its
 * column read as usual, and a failed read leaves the buffers as they were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* a: required long (small once compressed), s: optional string with a null every 5th
 * row (most of the bytes: 24 random hex digits), d: optional double. */
static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"a\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"double\"}]}";

static void write_file(const char *path, size_t nrows, size_t batch_rows, bool flush_each) {
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err), err);
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.codec = FLOE_CODEC_SNAPPY;
    o.page_row_limit = 1000;
    floe_pq_writer *w = NULL;
    int rc = floe_pq_writer_open(NULL, path, s, &o, &w, &err);
    for (size_t first = 0; rc == 0 && first < nrows; first += batch_rows) {
        floe_batch b;
        REQUIRE(floe_batch_init(&b, s) == 0);
        size_t n = nrows - first < batch_rows ? nrows - first : batch_rows;
        for (size_t i = first; i < first + n; i++) {
            uint8_t v[8];
            floe_store_le64(v, (uint64_t)(i * 7));
            REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, v, 8) == 0);
            if (i % 5 == 2) {
                REQUIRE(floe_colbuf_push_null(&b.cols[1], 0, 0) == 0);
            } else {
                char t[32];
                int tn = snprintf(t, sizeof t, "%012llx%012llx",
                                  (unsigned long long)(mix(i) & 0xffffffffffffULL),
                                  (unsigned long long)(mix(i + 99) & 0xffffffffffffULL));
                REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, t, (size_t)tn) == 0);
            }
            double d = (double)i * 0.5;
            memcpy(v, &d, 8);
            REQUIRE(floe_colbuf_push_value(&b.cols[2], 0, v, 8) == 0);
        }
        b.nrows = n;
        rc = floe_pq_writer_write_batch(w, &b, &err);
        if (rc == 0 && flush_each) /* a row group per batch */
            rc = floe_pq_writer_flush(w, &err);
        floe_batch_free(&b);
    }
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else if (w)
        floe_pq_writer_abort(w);
    REQUIRE_OK(rc, err);
    floe_schema_free(s);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Digest of every row set's levels and values, in order. */
static uint64_t digest_reader(floe_pq_reader *r, int64_t *rows, floe_error *err, int *rcp) {
    uint64_t h = 1469598103934665603ULL;
    const floe_pq_rowset *set = NULL;
    int rc;
    *rows = 0;
    while ((rc = floe_pq_reader_next(r, &set, err)) > 0) {
        *rows += set->nrows;
        for (size_t c = 0; c < set->ncols; c++) {
            const floe_colbuf *cb = &set->cols[c];
            h = fnv(h, &cb->nlevels, sizeof cb->nlevels);
            if (cb->max_def)
                h = fnv(h, cb->def, cb->nlevels * sizeof *cb->def);
            h = fnv(h, &cb->nvalues, sizeof cb->nvalues);
            h = fnv(h, cb->values, cb->values_len);
            for (size_t k = 0; cb->width == 0 && k < cb->nvalues; k++) {
                uint32_t len = cb->offsets[k + 1] - cb->offsets[k];
                h = fnv(h, &len, sizeof len);
            }
        }
    }
    *rcp = rc;
    return h;
}

/* Selects the column named only (all when NULL), digests r and closes it. */
static uint64_t digest_projected(floe_pq_reader *r, const char *only, int64_t *rows) {
    floe_error err;
    floe_error_clear(&err);
    if (only && floe_pq_reader_select_paths(r, &only, 1, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "select %s: %s", only, err.msg);
        floe_pq_reader_close(r);
        return 0;
    }
    int rc = 0;
    uint64_t h = digest_reader(r, rows, &err, &rc);
    CHECK_OK(rc, err);
    floe_pq_reader_close(r);
    return h;
}

/* Reads path with the options (projection: the columns named, or all) and returns the
 * digest; *gets: the input reads (GETs) it took. */
static uint64_t read_digest(const char *path, bool whole, bool no_map, const char *only,
                            int64_t *gets, int64_t *rows) {
    floe_pq_reader_options ro;
    memset(&ro, 0, sizeof ro);
    ro.read_whole = whole;
    ro.no_map = no_map;
    floe_io_stats a, b;
    floe_io_stats_get(NULL, &a);
    floe_pq_reader *r = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_pq_reader_open(NULL, path, &ro, &r, &err), err);
    uint64_t h = digest_projected(r, only, rows);
    floe_io_stats_get(NULL, &b);
    *gets = b.get_requests - a.get_requests;
    return h;
}

static uint64_t memory_digest(const char *path, const char *only, int64_t *rows) {
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_io_read_all(NULL, path, 0, &f, &err), err);
    floe_pq_reader *r = NULL;
    REQUIRE_OK(floe_pq_reader_open_memory(f.data, f.len, path, NULL, &r, &err), err);
    uint64_t h = digest_projected(r, only, rows);
    floe_buf_free(&f);
    return h;
}

static int64_t file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL);
    REQUIRE(fseek(f, 0, SEEK_END) == 0);
    long n = ftell(f);
    fclose(f);
    return n;
}

TEST(small_file_read_whole_gives_the_same_rows) {
    char path[1024];
    snprintf(path, sizeof path, "%s/small.parquet", harness_tmpdir());
    /* 6000 rows in row groups of 1000: a few hundred KB */
    write_file(path, 6000, 1000, true);
    int64_t size = file_size(path);
    REQUIRE(size > (16 << 10) && size < (1 << 20));
    floe_pq_reader *r = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    floe_pq_reader_close(r);
    REQUIRE(fi.num_row_groups >= 3);

    int64_t rows_m = 0, rows = 0, gets = 0;
    uint64_t want = memory_digest(path, NULL, &rows_m);
    CHECK_EQ_INT(rows_m, 6000);
    /* read_whole: the one read at open is the only one */
    CHECK(read_digest(path, true, false, NULL, &gets, &rows) == want);
    CHECK_EQ_INT(rows, 6000);
    CHECK_EQ_INT(gets, 1);
    /* all columns without the option: tail, head, footer, then the file once */
    CHECK(read_digest(path, false, false, NULL, &gets, &rows) == want);
    CHECK_EQ_INT(rows, 6000);
    CHECK_EQ_INT(gets, 4);
    CHECK(read_digest(path, false, true, NULL, &gets, &rows) == want);
    CHECK_EQ_INT(gets, 4);
    /* a projection onto a small column: a read per chunk, as before */
    uint64_t want_a = memory_digest(path, "a", &rows_m);
    CHECK(read_digest(path, false, false, "a", &gets, &rows) == want_a);
    CHECK_EQ_INT(rows, 6000);
    CHECK_EQ_INT(gets, 3 + (int64_t)fi.num_row_groups);
    /* with the option the projection reads from the buffered file */
    CHECK(read_digest(path, true, false, "a", &gets, &rows) == want_a);
    CHECK_EQ_INT(gets, 1);
}

TEST(large_file_keeps_the_chunk_path) {
    char path[1024];
    snprintf(path, sizeof path, "%s/large.parquet", harness_tmpdir());
    write_file(path, 90000, 10000, true);
    REQUIRE(file_size(path) > (1 << 20));
    int64_t rows_m = 0, rows = 0, gets = 0;
    uint64_t want = memory_digest(path, NULL, &rows_m);
    CHECK_EQ_INT(rows_m, 90000);
    /* read, not mapped: one read per column chunk after the footer's */
    CHECK(read_digest(path, true, true, NULL, &gets, &rows) == want);
    CHECK_EQ_INT(rows, 90000);
    CHECK(gets > 4);
    /* mapped */
    CHECK(read_digest(path, true, false, NULL, &gets, &rows) == want);
    CHECK_EQ_INT(rows, 90000);
}

/* Reads every row group of path; returns the first error (0 when all read). */
static int read_all(const char *path, bool whole, floe_error *err) {
    floe_pq_reader_options ro;
    memset(&ro, 0, sizeof ro);
    ro.read_whole = whole;
    floe_pq_reader *r = NULL;
    int rc = floe_pq_reader_open(NULL, path, &ro, &r, err);
    if (rc < 0)
        return rc;
    const floe_pq_rowset *set = NULL;
    while ((rc = floe_pq_reader_next(r, &set, err)) > 0) {
    }
    floe_pq_reader_close(r);
    return rc;
}

TEST(truncated_or_corrupt_small_file_fails_naming_it) {
    char path[1024], bad[1024];
    snprintf(path, sizeof path, "%s/small2.parquet", harness_tmpdir());
    snprintf(bad, sizeof bad, "%s/small2-bad.parquet", harness_tmpdir());
    write_file(path, 3000, 500, true);
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_io_read_all(NULL, path, 0, &f, &err), err);
    REQUIRE(f.len > 4096);

    /* cut short (footer gone), on both paths */
    for (int whole = 0; whole < 2; whole++) {
        REQUIRE(harness_write_file(bad, f.data, f.len / 2) == 0);
        floe_error_clear(&err);
        int rc = read_all(bad, whole, &err);
        CHECK_EQ_INT(rc, FLOE_ECORRUPT);
        CHECK(strstr(err.msg, bad) != NULL);
    }

    /* bytes changed in the data (page CRCs, or the decoders, notice) */
    size_t flipped = 0;
    for (size_t at = 64; at + 64 < f.len / 2; at += f.len / 16) {
        uint8_t *c = floe_malloc(f.len);
        REQUIRE(c != NULL);
        memcpy(c, f.data, f.len);
        for (size_t k = 0; k < 16; k++)
            c[at + k] ^= 0x5a;
        REQUIRE(harness_write_file(bad, c, f.len) == 0);
        floe_free(c);
        floe_error_clear(&err);
        int rc = read_all(bad, true, &err);
        CHECK(rc < 0);
        if (rc < 0)
            CHECK(strstr(err.msg, bad) != NULL);
        flipped++;
    }
    CHECK(flipped >= 4);

    /* truncated after the reader opened it, before the lazy whole read (no option: the
     * file is read whole once the projection is known) */
    REQUIRE(harness_write_file(bad, f.data, f.len) == 0);
    floe_pq_reader *r = NULL;
    floe_error_clear(&err);
    REQUIRE_OK(floe_pq_reader_open(NULL, bad, NULL, &r, &err), err);
    REQUIRE(truncate(bad, (off_t)(f.len / 3)) == 0);
    const floe_pq_rowset *set = NULL;
    int rc = floe_pq_reader_next(r, &set, &err);
    CHECK(rc < 0);
    if (rc < 0)
        CHECK(strstr(err.msg, bad) != NULL);
    floe_pq_reader_close(r);
    floe_buf_free(&f);
}

/* ---- floe_pq_reader_read_row_group_into ------------------------------------------------ */

/* into's rows from level l0 / value v0 on equal the row set column's. */
static void check_tail(const floe_colbuf *in, size_t l0, size_t v0, const floe_colbuf *rs) {
    CHECK_EQ_INT((int64_t)(in->nlevels - l0), (int64_t)rs->nlevels);
    CHECK_EQ_INT((int64_t)(in->nvalues - v0), (int64_t)rs->nvalues);
    if (in->nlevels - l0 != rs->nlevels || in->nvalues - v0 != rs->nvalues)
        return;
    if (rs->max_def)
        CHECK(memcmp(in->def + l0, rs->def, rs->nlevels * sizeof *rs->def) == 0);
    if (rs->width) {
        CHECK(memcmp(in->values + v0 * (size_t)rs->width, rs->values,
                     rs->nvalues * (size_t)rs->width) == 0);
    } else {
        uint32_t b0 = in->offsets[v0], r0 = rs->offsets[0];
        CHECK_EQ_INT((int64_t)(in->values_len - b0), (int64_t)(rs->values_len - r0));
        CHECK(memcmp(in->values + b0, rs->values + r0, rs->values_len - r0) == 0);
        size_t bad = 0;
        for (size_t k = 0; k <= rs->nvalues; k++)
            bad += in->offsets[v0 + k] - b0 != rs->offsets[k] - r0;
        CHECK_EQ_INT((int64_t)bad, 0);
    }
}

TEST(read_into_appends_what_the_row_set_holds) {
    char path[1024];
    snprintf(path, sizeof path, "%s/into.parquet", harness_tmpdir());
    write_file(path, 3000, 1000, true);
    floe_error err;
    floe_error_clear(&err);
    floe_pq_reader *plain = NULL, *r = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &plain, &err), err);
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    floe_colbuf buf[3];
    floe_colbuf *into[3];
    const floe_pq_rowset *ps = NULL, *rs = NULL;
    REQUIRE_OK(floe_pq_reader_read_row_group(plain, 0, &ps, &err), err);
    REQUIRE(ps->ncols == 3);
    for (int c = 0; c < 3; c++) { /* the row set's layout, empty */
        memset(&buf[c], 0, sizeof buf[c]);
        buf[c].phys = ps->cols[c].phys;
        buf[c].width = ps->cols[c].width;
        buf[c].max_def = ps->cols[c].max_def;
        buf[c].max_rep = ps->cols[c].max_rep;
    }
    buf[2].width = 4; /* d: another layout, read into the row set instead */
    size_t l0[3] = {0}, v0[3] = {0};
    for (size_t rg = 0; rg < 3; rg++) {
        for (int c = 0; c < 3; c++) {
            into[c] = &buf[c];
            l0[c] = buf[c].nlevels;
            v0[c] = buf[c].nvalues;
        }
        REQUIRE_OK(floe_pq_reader_read_row_group(plain, rg, &ps, &err), err);
        REQUIRE_OK(floe_pq_reader_read_row_group_into(r, rg, into, &rs, &err), err);
        CHECK_EQ_INT(rs->nrows, 1000);
        CHECK(into[0] == &buf[0] && into[1] == &buf[1] && into[2] == NULL);
        check_tail(&buf[0], l0[0], v0[0], &ps->cols[0]);
        check_tail(&buf[1], l0[1], v0[1], &ps->cols[1]);
        CHECK_EQ_INT((int64_t)rs->cols[0].nlevels, 0); /* left empty */
        CHECK_EQ_INT((int64_t)rs->cols[1].nlevels, 0);
        check_tail(&rs->cols[2], 0, 0, &ps->cols[2]);
        CHECK_EQ_INT((int64_t)buf[2].nlevels, 0);
    }
    CHECK_EQ_INT((int64_t)buf[0].nlevels, 3000);
    floe_pq_reader_close(r);
    floe_pq_reader_close(plain);

    /* a corrupt last row group: the buffers keep exactly the rows they held */
    floe_buf f;
    floe_buf_init(&f, 0);
    REQUIRE_OK(floe_io_read_all(NULL, path, 0, &f, &err), err);
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    floe_pq_chunk_info ci;
    floe_pq_reader_chunk_info(r, 2, 1, &ci);
    floe_pq_reader_close(r);
    int64_t start = ci.data_page_offset;
    if (ci.dictionary_page_offset >= 0 && ci.dictionary_page_offset < start)
        start = ci.dictionary_page_offset;
    size_t at = (size_t)start + (size_t)ci.compressed_size / 2;
    REQUIRE(at + 8 < f.len);
    for (int k = 0; k < 8; k++)
        f.data[at + k] ^= 0x33;
    char bad[1024];
    snprintf(bad, sizeof bad, "%s/into-bad.parquet", harness_tmpdir());
    REQUIRE(harness_write_file(bad, f.data, f.len) == 0);
    floe_buf_free(&f);
    REQUIRE_OK(floe_pq_reader_open(NULL, bad, NULL, &r, &err), err);
    size_t held_l[2], held_v[2], held_b[2];
    for (int c = 0; c < 2; c++) {
        held_l[c] = buf[c].nlevels;
        held_v[c] = buf[c].nvalues;
        held_b[c] = buf[c].values_len;
    }
    for (size_t rg = 0; rg < 3; rg++) {
        into[0] = &buf[0];
        into[1] = &buf[1];
        into[2] = NULL;
        floe_error_clear(&err);
        int rc = floe_pq_reader_read_row_group_into(r, rg, into, &rs, &err);
        if (rg < 2) {
            CHECK_OK(rc, err);
            for (int c = 0; c < 2; c++) {
                held_l[c] = buf[c].nlevels;
                held_v[c] = buf[c].nvalues;
                held_b[c] = buf[c].values_len;
            }
            continue;
        }
        CHECK(rc < 0);
        CHECK(strstr(err.msg, bad) != NULL);
        for (int c = 0; c < 2; c++) {
            CHECK_EQ_INT((int64_t)buf[c].nlevels, (int64_t)held_l[c]);
            CHECK_EQ_INT((int64_t)buf[c].nvalues, (int64_t)held_v[c]);
            CHECK_EQ_INT((int64_t)buf[c].values_len, (int64_t)held_b[c]);
        }
    }
    CHECK_EQ_INT((int64_t)buf[0].nlevels, 5000);
    floe_pq_reader_close(r);
    for (int c = 0; c < 3; c++)
        floe_colbuf_free(&buf[c]);
}

int main(void) {
    RUN(small_file_read_whole_gives_the_same_rows);
    RUN(large_file_keeps_the_chunk_path);
    RUN(truncated_or_corrupt_small_file_fails_naming_it);
    RUN(read_into_appends_what_the_row_set_holds);
    return harness_finish();
}
