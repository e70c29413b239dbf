/*
 * Reader paths that avoid copies: column chunks decoded straight from an mmap of the file
 * (floe_input_mmap, guarded against the file shrinking), and PLAIN fixed-width pages
 * decompressed straight into the column buffer (floe_codec_decompress_split for zstd v1
 * pages with a level prefix). Each must return exactly what the copying paths return, on
 * pages spanning several zstd blocks, with and without nulls, with statistics that lie,
 * and a file truncated after it was opened must fail with an error, not a bus error
 * (floe/mapguard.h; test_mapguard covers the handler itself).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floe/codec.h"
#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"
#include "parquet/metadata.h"

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* Columns: a required long (compressible), b optional double without nulls, c optional
 * long with a null every 7th row, e optional long of random bits (zstd raw blocks), f
 * required int that is constant (zstd RLE blocks). */
static bool row_null_c(size_t i) { return i % 7 == 3; }
static int64_t val_a(size_t i) { return (int64_t)(i * 3 + (i >> 9)); }
static double val_b(size_t i) { return (double)(i % 10007) * 0.25; }
static int64_t val_c(size_t i) { return (int64_t)(i % 1000) - 500; }
static uint64_t val_e(size_t i) { return mix(i + 1); }

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"a\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":3,\"name\":\"c\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":4,\"name\":\"e\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":5,\"name\":\"f\",\"required\":true,\"type\":\"int\"}]}";

static void fill_batch(floe_batch *in, size_t first, size_t nrows) {
    uint8_t v[8];
    for (size_t i = first; i < first + nrows; i++) {
        floe_store_le64(v, (uint64_t)val_a(i));
        REQUIRE(floe_colbuf_push_value(&in->cols[0], 0, v, 8) == 0);
        double d = val_b(i);
        memcpy(v, &d, 8);
        REQUIRE(floe_colbuf_push_value(&in->cols[1], 0, v, 8) == 0);
        if (row_null_c(i)) {
            REQUIRE(floe_colbuf_push_null(&in->cols[2], 0, 0) == 0);
        } else {
            floe_store_le64(v, (uint64_t)val_c(i));
            REQUIRE(floe_colbuf_push_value(&in->cols[2], 0, v, 8) == 0);
        }
        floe_store_le64(v, val_e(i));
        REQUIRE(floe_colbuf_push_value(&in->cols[3], 0, v, 8) == 0);
        floe_store_le32(v, 42);
        REQUIRE(floe_colbuf_push_value(&in->cols[4], 0, v, 4) == 0);
    }
    in->nrows = nrows;
}

/* nrows rows in batches of batch_rows (the writer cuts row groups between batches once
 * row_group_bytes are buffered; 0 = its default). */
static void write_file(const char *path, size_t nrows, floe_codec codec, size_t page_rows,
                       size_t row_group_bytes, size_t batch_rows) {
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err), err);
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.codec = codec;
    o.dictionary = false;
    o.delta_ints = false;
    o.page_row_limit = page_rows;
    o.page_size = (size_t)64 << 20;
    if (row_group_bytes)
        o.row_group_size = row_group_bytes;
    floe_pq_writer *w = NULL;
    int rc = floe_pq_writer_open(NULL, path, s, &o, &w, &err);
    for (size_t first = 0; rc == 0 && first < nrows; first += batch_rows) {
        floe_batch in;
        REQUIRE(floe_batch_init(&in, s) == 0);
        fill_batch(&in, first, nrows - first < batch_rows ? nrows - first : batch_rows);
        rc = floe_pq_writer_write_batch(w, &in, &err);
        floe_batch_free(&in);
    }
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else if (w)
        floe_pq_writer_abort(w);
    REQUIRE_OK(rc, err);
    floe_schema_free(s);
}

/* Reads the whole file and checks every value; returns the reader's stats. */
static floe_pq_read_stats read_check(const char *path, size_t nrows, bool no_map) {
    floe_pq_reader_options ro;
    memset(&ro, 0, sizeof ro);
    ro.no_map = no_map;
    floe_pq_reader *r = NULL;
    floe_error err;
    floe_error_clear(&err);
    floe_pq_read_stats st;
    memset(&st, 0, sizeof st);
    int rc = floe_pq_reader_open(NULL, path, &ro, &r, &err);
    CHECK_OK(rc, err);
    if (rc < 0)
        return st;
    size_t row = 0, bad = 0;
    const floe_pq_rowset *set = NULL;
    while ((rc = floe_pq_reader_next(r, &set, &err)) > 0) {
        REQUIRE(set->ncols == 5);
        const floe_colbuf *ca = &set->cols[0], *cb = &set->cols[1], *cc = &set->cols[2],
                          *ce = &set->cols[3], *cf = &set->cols[4];
        size_t n = ca->nlevels, ci = 0;
        REQUIRE(ca->nvalues == n && cb->nvalues == n && ce->nvalues == n && cf->nvalues == n);
        for (size_t l = 0; l < n; l++, row++) {
            bool ok = (int64_t)floe_load_le64(ca->values + l * 8) == val_a(row);
            double d;
            memcpy(&d, cb->values + l * 8, 8);
            ok = ok && d == val_b(row) && cb->def[l] == cb->max_def;
            bool isnull = cc->def[l] != cc->max_def;
            ok = ok && isnull == row_null_c(row);
            if (!isnull)
                ok = ok && (int64_t)floe_load_le64(cc->values + ci++ * 8) == val_c(row);
            ok = ok && floe_load_le64(ce->values + l * 8) == val_e(row);
            ok = ok && floe_load_le32(cf->values + l * 4) == 42;
            bad += !ok;
        }
        CHECK_EQ_INT((int64_t)ci, (int64_t)cc->nvalues);
    }
    CHECK_OK(rc < 0 ? rc : 0, err);
    CHECK_EQ_INT((int64_t)row, (int64_t)nrows);
    if (bad)
        harness_fail(__FILE__, __LINE__, "%s (no_map %d): %zu rows differ", path, no_map, bad);
    floe_pq_reader_stats(r, &st);
    floe_pq_reader_close(r);
    return st;
}

TEST(split_decompression_equals_whole) {
    /* 600 KB over several 128 KiB zstd blocks; split at every interesting place */
    size_t n = 600000;
    uint8_t *src = malloc(n), *body = malloc(n + 1);
    REQUIRE(src && body);
    for (size_t i = 0; i < n; i++)
        src[i] = (uint8_t)(i % 251 < 120 ? mix(i / 3) : i % 17); /* some matches, some noise */
    floe_buf z;
    floe_buf_init(&z, 0);
    floe_error err;
    floe_error_clear(&err);
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    REQUIRE(ctx);
    REQUIRE_OK(floe_codec_compress(ctx, FLOE_CODEC_ZSTD, 3, src, n, &z, &err), err);
    const size_t heads[] = {0, 1, 6, 4096, 131071, 131072, 131073, 262144, 599999, 600000};
    floe_buf head;
    floe_buf_init(&head, 0);
    for (size_t k = 0; k < sizeof heads / sizeof heads[0]; k++) {
        size_t h = heads[k];
        memset(body, 0xAB, n + 1);
        int rc = floe_codec_decompress_split(ctx, FLOE_CODEC_ZSTD, z.data, z.len, &head, h, body,
                                             n - h, &err);
        CHECK_OK(rc, err);
        CHECK(rc == 0 && head.len == h && memcmp(head.data, src, h) == 0 &&
              memcmp(body, src + h, n - h) == 0 && body[n - h] == 0xAB);
    }
    /* NULL ctx works too */
    CHECK_OK(floe_codec_decompress_split(NULL, FLOE_CODEC_ZSTD, z.data, z.len, &head, 6, body,
                                         n - 6, &err),
             err);
    CHECK(memcmp(body, src + 6, n - 6) == 0);
    /* wrong announced size: not the shape (the frame says 600000) */
    CHECK_EQ_INT(floe_codec_decompress_split(ctx, FLOE_CODEC_ZSTD, z.data, z.len, &head, 6, body,
                                             n - 7, &err),
                 1);
    /* other codecs: not supported, nothing written */
    CHECK_EQ_INT(floe_codec_decompress_split(ctx, FLOE_CODEC_SNAPPY, z.data, z.len, &head, 6,
                                             body, n - 6, &err),
                 1);
    /* a corrupt block (not the frame header) is an error, never a crash or a short read */
    uint8_t *bad = malloc(z.len);
    REQUIRE(bad);
    size_t corrupt = 0;
    for (size_t at = 20; at < z.len; at += z.len / 13) {
        memcpy(bad, z.data, z.len);
        bad[at] ^= 0x5A;
        int rc = floe_codec_decompress_split(ctx, FLOE_CODEC_ZSTD, bad, z.len, &head, 6, body,
                                             n - 6, &err);
        if (rc < 0) {
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            corrupt++;
        } else if (rc == 0) { /* a flip zstd cannot notice must still give n bytes */
            CHECK(head.len == 6);
        }
    }
    CHECK(corrupt > 0);
    /* truncated frame */
    CHECK(floe_codec_decompress_split(ctx, FLOE_CODEC_ZSTD, z.data, z.len - 1, &head, 6, body,
                                      n - 6, &err) != 0);
    free(bad);
    floe_buf_free(&head);
    floe_buf_free(&z);
    floe_codec_ctx_free(ctx);
    free(src);
    free(body);
}

TEST(direct_pages_read_like_copied_pages) {
    const floe_codec codecs[] = {FLOE_CODEC_ZSTD, FLOE_CODEC_SNAPPY, FLOE_CODEC_UNCOMPRESSED};
    /* 70,000-row pages are 560 KB of longs: several zstd blocks each; 1-row and 1000-row
     * pages put the level prefix and a block end in every position */
    const size_t page_rows[] = {70000, 1000, 1};
    for (size_t ci = 0; ci < 3; ci++) {
        for (size_t pi = 0; pi < 3; pi++) {
            size_t nrows = page_rows[pi] == 1 ? 300 : 150001;
            char path[1024];
            snprintf(path, sizeof path, "%s/direct-%zu-%zu.parquet", harness_tmpdir(), ci, pi);
            write_file(path, nrows, codecs[ci], page_rows[pi], 0, nrows);
            floe_pq_read_stats mapped = read_check(path, nrows, false);
            floe_pq_read_stats copied = read_check(path, nrows, true);
            struct stat fst;
            REQUIRE(stat(path, &fst) == 0);
            /* files under 1 MiB are read, not mapped */
            CHECK_EQ_INT(mapped.bytes_mapped, fst.st_size >= (1 << 20) ? mapped.bytes_read : 0);
            CHECK(mapped.bytes_read > 0);
            CHECK_EQ_INT(copied.bytes_mapped, 0);
            CHECK_EQ_INT(mapped.pages_read, copied.pages_read);
            CHECK_EQ_INT(mapped.pages_direct, copied.pages_direct);
            /* a, b, e (optional without nulls under zstd) and f go direct; c has nulls.
             * Uncompressed pages need no decompression, so nothing to gain there. */
            int64_t pages_per_col = mapped.pages_read / 5;
            if (codecs[ci] == FLOE_CODEC_ZSTD)
                CHECK_EQ_INT(mapped.pages_direct, 4 * pages_per_col);
            else if (codecs[ci] == FLOE_CODEC_SNAPPY) /* no split: required columns only */
                CHECK_EQ_INT(mapped.pages_direct, 2 * pages_per_col);
            else
                CHECK_EQ_INT(mapped.pages_direct, 0);
        }
    }
}

/* Rewrite path's footer so that every column chunk claims no nulls: column c's pages
 * then look direct-eligible but are not, and must be put back together. */
static void lie_about_nulls(const char *path, const char *out) {
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_io_read_all(NULL, path, 0, &f, &err), err);
    REQUIRE(f.len > 12);
    uint32_t flen = floe_load_le32(f.data + f.len - 8);
    REQUIRE(flen < f.len - 12);
    size_t fstart = f.len - 8 - flen;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_pq_file_metadata md;
    REQUIRE_OK(floe_pq_file_metadata_decode(f.data + fstart, flen, (int64_t)fstart, &a, &md,
                                            &err),
               err);
    size_t changed = 0;
    for (size_t g = 0; g < md.n_row_groups; g++)
        for (size_t c = 0; c < md.row_groups[g].n_columns; c++) {
            floe_pq_column_metadata *m = &md.row_groups[g].columns[c].meta_data;
            if (m->has_statistics && m->statistics.has_null_count &&
                m->statistics.null_count > 0) {
                m->statistics.null_count = 0;
                changed++;
            }
        }
    REQUIRE(changed > 0);
    floe_buf nf;
    floe_buf_init(&nf, 0);
    REQUIRE(floe_buf_append(&nf, f.data, fstart) == 0);
    REQUIRE_OK(floe_pq_file_metadata_encode(&md, &nf, &err), err);
    uint8_t tail[8];
    floe_store_le32(tail, (uint32_t)(nf.len - fstart));
    memcpy(tail + 4, "PAR1", 4);
    REQUIRE(floe_buf_append(&nf, tail, 8) == 0);
    REQUIRE_OK(floe_io_write_all(NULL, out, nf.data, nf.len, NULL, &err), err);
    floe_buf_free(&nf);
    floe_arena_reset(&a);
    floe_buf_free(&f);
}

TEST(direct_pages_survive_statistics_that_lie) {
    char path[1024], liar[1024];
    snprintf(path, sizeof path, "%s/honest.parquet", harness_tmpdir());
    snprintf(liar, sizeof liar, "%s/liar.parquet", harness_tmpdir());
    const size_t page_rows[] = {70000, 13};
    for (size_t pi = 0; pi < 2; pi++) {
        /* the last page holds a null too (140003 % 7 == 3), so every page of c has one */
        size_t nrows = 140004;
        write_file(path, nrows, FLOE_CODEC_ZSTD, page_rows[pi], 0, nrows);
        lie_about_nulls(path, liar);
        floe_pq_read_stats honest = read_check(path, nrows, false);
        floe_pq_read_stats lying = read_check(liar, nrows, false);
        /* the liar's chunk statistics promise no nulls in c, so each of c's pages is
         * decompressed split, found to hold nulls and put back together: same values, and
         * only the other columns' pages count as direct */
        CHECK_EQ_INT(lying.pages_direct, honest.pages_direct);
        CHECK(honest.pages_direct > 0);
    }
}

/* A file truncated after it was opened: reading the rest must fail cleanly (the mapping
 * would raise SIGBUS past the new end; the guard makes it read zeros and the reader fails
 * the chunk). Several zstd columns: their decoders see zeros mid-frame. */
TEST(mapped_file_truncated_after_open_fails_cleanly) {
    char path[1024];
    snprintf(path, sizeof path, "%s/shrink.parquet", harness_tmpdir());
    const bool truncate_first[] = {false, true};
    for (int t = 0; t < 2; t++) {
        /* several row groups of a few hundred KB each */
        write_file(path, 200000, FLOE_CODEC_ZSTD, 10000, (size_t)1 << 20, 20000);
        floe_pq_reader *r = NULL;
        floe_error err;
        floe_error_clear(&err);
        REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
        floe_pq_reader_file info;
        floe_pq_reader_file_info(r, &info);
        REQUIRE(info.num_row_groups >= 3);
        const floe_pq_rowset *set = NULL;
        int rc = 0;
        if (!truncate_first[t]) {
            rc = floe_pq_reader_next(r, &set, &err);
            CHECK_EQ_INT(rc, 1);
        }
        /* keep the first 4 KiB (the first row group's start): everything later is gone */
        REQUIRE(truncate(path, 4096) == 0);
        while ((rc = floe_pq_reader_next(r, &set, &err)) > 0) {
        }
        CHECK_EQ_INT(rc, FLOE_EIO);
        CHECK(strstr(err.msg, "shrank") != NULL);
        floe_pq_read_stats st;
        floe_pq_reader_stats(r, &st);
        CHECK(st.bytes_mapped > 0);
        floe_pq_reader_close(r);
        /* the guard is disarmed: the next reader of an intact file works */
        write_file(path, 1000, FLOE_CODEC_ZSTD, 100, 0, 1000);
        read_check(path, 1000, false);
    }
}

int main(void) {
    RUN(split_decompression_equals_whole);
    RUN(direct_pages_read_like_copied_pages);
    RUN(direct_pages_survive_statistics_that_lie);
    RUN(mapped_file_truncated_after_open_fails_cleanly);
    return harness_finish();
}
