/*
 * Reader fast paths (one-pass PLAIN byte arrays with fixed 32-byte copies, runs of
 * equal-length values compacted without waiting on each length, vectorized level
 * counting, run fills, dictionary bounds check and gathers): values of every length
 * around the copy sizes, placed at page ends, alone and in runs of one length, with and
 * without nulls and dictionaries, must read back exactly as written; a length prefix
 * that breaks a run with a lie must fail the read.
 */
#include <stdlib.h>
#include <string.h>

#include "floe/codec.h"
#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"
#include "parquet/metadata.h"

/* Lengths in runs: when set, rows come in runs of 37 of one length (0..40 in turn), the
 * shape of hash and id columns; else the length changes every row. */
static bool g_runs;

/* value of row i: length cycles 0..70 so every length meets the 16/32-byte copy edges
 * and the page end; content depends on the row so a shifted copy is caught */
static size_t row_len(size_t i) { return g_runs ? (i / 37) % 41 : i % 71; }
static uint8_t row_byte(size_t i, size_t k) { return (uint8_t)('A' + (i * 7 + k * 13) % 53); }
static bool row_null(size_t i, bool nulls) { return nulls && i % 5 == 3; }

static void round_trip(size_t nrows, size_t page_rows, bool dictionary, floe_codec codec,
                       bool nulls, int iter) {
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
                     "{\"id\":2,\"name\":\"v\",\"required\":false,\"type\":\"long\"}]}";
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    floe_batch in;
    REQUIRE(floe_batch_init(&in, s) == 0);
    uint8_t v[80];
    for (size_t i = 0; i < nrows; i++) {
        if (row_null(i, nulls)) {
            REQUIRE(floe_colbuf_push_null(&in.cols[0], 0, 0) == 0);
            REQUIRE(floe_colbuf_push_null(&in.cols[1], 0, 0) == 0);
            continue;
        }
        size_t n = row_len(i);
        for (size_t k = 0; k < n; k++)
            v[k] = row_byte(i, k);
        REQUIRE(floe_colbuf_push_value(&in.cols[0], 0, v, n) == 0);
        /* few distinct longs so the dictionary path gathers 8-byte values */
        floe_store_le64(v, (uint64_t)(i % 9) * 1000003u);
        REQUIRE(floe_colbuf_push_value(&in.cols[1], 0, v, 8) == 0);
    }
    in.nrows = nrows;
    char path[1024];
    snprintf(path, sizeof path, "%s/fast%d.parquet", harness_tmpdir(), iter);
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.page_row_limit = page_rows;
    o.dictionary = dictionary;
    o.codec = codec;
    floe_pq_writer *w = NULL;
    int rc = floe_pq_writer_open(NULL, path, s, &o, &w, &err);
    if (rc == 0)
        rc = floe_pq_writer_write_batch(w, &in, &err);
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else if (w)
        floe_pq_writer_abort(w);
    CHECK_OK(rc, err);
    floe_pq_reader *r = NULL;
    if (rc == 0)
        rc = floe_pq_reader_open(NULL, path, NULL, &r, &err);
    CHECK_OK(rc, err);
    size_t row = 0, bad = 0;
    const floe_pq_rowset *set = NULL;
    while (rc == 0 && (rc = floe_pq_reader_next(r, &set, &err)) > 0) {
        rc = 0;
        const floe_colbuf *cs = &set->cols[0], *cv = &set->cols[1];
        REQUIRE(cs->nlevels == cv->nlevels);
        size_t vi = 0;
        for (size_t l = 0; l < cs->nlevels; l++, row++) {
            bool isnull = cs->def[l] != cs->max_def;
            if (isnull != row_null(row, nulls) || (cv->def[l] != cv->max_def) != isnull) {
                bad++;
                continue;
            }
            if (isnull)
                continue;
            size_t n = cs->offsets[vi + 1] - cs->offsets[vi];
            const uint8_t *p = cs->values + cs->offsets[vi];
            bool ok = n == row_len(row);
            for (size_t k = 0; ok && k < n; k++)
                ok = p[k] == row_byte(row, k);
            ok = ok && floe_load_le64(cv->values + vi * 8) == (uint64_t)(row % 9) * 1000003u;
            bad += !ok;
            vi++;
        }
        CHECK_EQ_INT((int64_t)vi, (int64_t)cs->nvalues);
    }
    CHECK_OK(rc < 0 ? rc : 0, err);
    CHECK_EQ_INT((int64_t)row, (int64_t)nrows);
    floe_pq_read_stats st;
    floe_pq_reader_stats(r, &st);
    /* compressed PLAIN strings are decompressed into the column buffer and compacted in
     * place (plain_bytes_inplace): every data page of s, and of v (fixed, no nulls) */
    if (!dictionary && codec != FLOE_CODEC_UNCOMPRESSED)
        CHECK(st.pages_direct >= st.pages_read / 2);
    else if (codec == FLOE_CODEC_UNCOMPRESSED)
        CHECK_EQ_INT(st.pages_direct, 0);
    if (bad)
        harness_fail(__FILE__, __LINE__, "iter %d: %zu rows differ", iter, bad);
    floe_pq_reader_close(r);
    floe_batch_free(&in);
    floe_schema_free(s);
}

TEST(byte_arrays_of_every_length_at_page_ends) {
    const size_t page_rows[] = {1, 3, 16, 17, 71, 1000};
    const floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_ZSTD};
    int iter = 0;
    for (size_t p = 0; p < sizeof page_rows / sizeof page_rows[0]; p++)
        for (int dict = 0; dict < 2; dict++)
            for (size_t c = 0; c < 2; c++)
                for (int nulls = 0; nulls < 2; nulls++)
                    round_trip(2000 + p, page_rows[p], dict, codecs[c], nulls, iter++);
}

/* Runs of equal lengths (plain_bytes_inplace's run loop, and the dictionary gathers): a
 * run that starts, ends or breaks anywhere, in pages of every size, reads back exactly. */
TEST(byte_arrays_in_runs_of_one_length) {
    const size_t page_rows[] = {1, 17, 100, 1000, 5000};
    const floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_ZSTD};
    int iter = 100;
    g_runs = true;
    for (size_t p = 0; p < sizeof page_rows / sizeof page_rows[0]; p++)
        for (int dict = 0; dict < 2; dict++)
            for (size_t c = 0; c < 2; c++)
                for (int nulls = 0; nulls < 2; nulls++)
                    round_trip(5000 + p, page_rows[p], dict, codecs[c], nulls, iter++);
    g_runs = false;
}

/* Write `nrows` 32-byte strings (no nulls, PLAIN, zstd, one page), then rewrite the page
 * with the uncompressed bytes at `at` (offset from the first value's length prefix)
 * replaced by the little-endian `len`, recompressed: the file stays well formed but the
 * page lies. Returns the path of the liar. */
static const char *write_lying_page(size_t nrows, size_t at, uint32_t len) {
    static char path[1024], liar[1024];
    snprintf(path, sizeof path, "%s/runs.parquet", harness_tmpdir());
    snprintf(liar, sizeof liar, "%s/runs-liar.parquet", harness_tmpdir());
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    floe_batch in;
    REQUIRE(floe_batch_init(&in, s) == 0);
    uint8_t v[32];
    for (size_t i = 0; i < nrows; i++) {
        for (size_t k = 0; k < 32; k++)
            v[k] = row_byte(i, k);
        REQUIRE(floe_colbuf_push_value(&in.cols[0], 0, v, 32) == 0);
    }
    in.nrows = nrows;
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.page_row_limit = nrows;
    o.dictionary = false;
    o.codec = FLOE_CODEC_ZSTD;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &in, &err), err);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    floe_batch_free(&in);
    floe_schema_free(s);

    floe_buf f, page, body, out;
    floe_buf_init(&f, 0);
    floe_buf_init(&page, 0);
    floe_buf_init(&body, 0);
    floe_buf_init(&out, 0);
    REQUIRE_OK(floe_io_read_all(NULL, path, 0, &f, &err), err);
    uint32_t flen = floe_load_le32(f.data + f.len - 8);
    size_t fstart = f.len - 8 - flen;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_pq_file_metadata md;
    REQUIRE_OK(floe_pq_file_metadata_decode(f.data + fstart, flen, (int64_t)fstart, &a, &md,
                                            &err),
               err);
    REQUIRE(md.n_row_groups == 1 && md.row_groups[0].n_columns == 1);
    floe_pq_column_chunk *cc = &md.row_groups[0].columns[0];
    floe_pq_column_metadata *m = &cc->meta_data;
    int64_t start = m->data_page_offset;
    floe_pq_page_header ph;
    size_t hl = 0;
    REQUIRE_OK(floe_pq_page_header_decode(f.data + start, fstart - (size_t)start, start, &ph,
                                          &hl, &err),
               err);
    REQUIRE(ph.type == FLOE_PQ_DATA_PAGE && ph.data_page_header.encoding == FLOE_PQ_ENC_PLAIN);
    size_t ulen = (size_t)ph.uncompressed_page_size;
    REQUIRE(floe_buf_reserve(&page, ulen) == 0);
    REQUIRE_OK(floe_codec_decompress(NULL, FLOE_CODEC_ZSTD, f.data + start + hl,
                                     (size_t)ph.compressed_page_size, page.data, ulen, &err),
               err);
    /* the level prefix, then the values: 4-byte length and 32 bytes each */
    size_t values = ulen - nrows * 36;
    REQUIRE(floe_load_le32(page.data + values) == 32 && at + 4 <= nrows * 36);
    floe_store_le32(page.data + values + at, len);
    REQUIRE_OK(floe_codec_compress(NULL, FLOE_CODEC_ZSTD, 0, page.data, ulen, &body, &err), err);
    ph.compressed_page_size = (int32_t)body.len;
    ph.has_crc = false;
    REQUIRE(floe_buf_append(&out, f.data, (size_t)start) == 0);
    REQUIRE_OK(floe_pq_page_header_encode(&ph, &out, &err), err);
    REQUIRE(floe_buf_append(&out, body.data, body.len) == 0);
    m->total_compressed_size = (int64_t)(out.len - (size_t)start);
    md.row_groups[0].has_total_compressed_size = false;
    cc->has_offset_index = cc->has_column_index = false;
    m->has_bloom_filter_offset = m->has_bloom_filter_length = false;
    size_t nf = out.len;
    REQUIRE_OK(floe_pq_file_metadata_encode(&md, &out, &err), err);
    uint8_t tail[8];
    floe_store_le32(tail, (uint32_t)(out.len - nf));
    memcpy(tail + 4, "PAR1", 4);
    REQUIRE(floe_buf_append(&out, tail, 8) == 0);
    REQUIRE_OK(floe_io_write_all(NULL, liar, out.data, out.len, NULL, &err), err);
    floe_arena_reset(&a);
    floe_buf_free(&f);
    floe_buf_free(&page);
    floe_buf_free(&body);
    floe_buf_free(&out);
    return liar;
}

/* A dictionary with one long entry: count times the longest entry passes gather_dict's
 * bound (16 MiB), so it sums the lengths instead of reserving the bound; values must still
 * read back exactly. */
TEST(dictionary_with_a_long_entry) {
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"s\",\"required\":true,\"type\":\"string\"}]}";
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    floe_batch in;
    REQUIRE(floe_batch_init(&in, s) == 0);
    const size_t nrows = 400, long_len = 100000;
    uint8_t *big = malloc(long_len);
    for (size_t k = 0; k < long_len; k++)
        big[k] = (uint8_t)('a' + k % 23);
    for (size_t i = 0; i < nrows; i++) {
        if (i % 50 == 7)
            REQUIRE(floe_colbuf_push_value(&in.cols[0], 0, big, long_len) == 0);
        else
            REQUIRE(floe_colbuf_push_value(&in.cols[0], 0, (const uint8_t *)"abcdefgh", i % 8) == 0);
    }
    in.nrows = nrows;
    char path[1024];
    snprintf(path, sizeof path, "%s/longdict.parquet", harness_tmpdir());
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.dictionary = true;
    o.codec = FLOE_CODEC_ZSTD;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &in, &err), err);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    floe_pq_reader *r = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    floe_pq_chunk_info ci;
    floe_pq_reader_chunk_info(r, 0, 0, &ci);
    bool dict = false;
    for (size_t e = 0; e < ci.n_encodings; e++)
        dict |= ci.encodings[e] == FLOE_PQ_ENC_RLE_DICTIONARY ||
                ci.encodings[e] == FLOE_PQ_ENC_PLAIN_DICTIONARY;
    CHECK(dict); /* else this would not test the dictionary gather */
    const floe_pq_rowset *set = NULL;
    size_t row = 0, bad = 0;
    int rc;
    while ((rc = floe_pq_reader_next(r, &set, &err)) > 0) {
        const floe_colbuf *c = &set->cols[0];
        for (size_t v = 0; v < c->nvalues; v++, row++) {
            size_t n = c->offsets[v + 1] - c->offsets[v];
            const uint8_t *p = c->values + c->offsets[v];
            bool ok = row % 50 == 7 ? n == long_len && memcmp(p, big, n) == 0
                                    : n == row % 8 && memcmp(p, "abcdefgh", n) == 0;
            bad += !ok;
        }
    }
    CHECK_OK(rc, err);
    CHECK_EQ_INT((int64_t)row, (int64_t)nrows);
    CHECK_EQ_INT((int64_t)bad, 0);
    floe_pq_read_stats st;
    floe_pq_reader_stats(r, &st);
    CHECK(st.pages_read > 0);
    floe_pq_reader_close(r);
    free(big);
    floe_batch_free(&in);
    floe_schema_free(s);
}

/* Null pattern of row i (within its row group) of row group g: row groups without nulls
 * between ones with nulls in one page, in all pages, in a whole page, and a short one. */
static bool memo_null(size_t g, size_t i) {
    switch (g % 8) {
    case 1: return i >= 1000 && i < 2000 && i % 7 == 2;
    case 3: return i < 1000;
    case 5: return i % 3 == 0;
    default: return false;
    }
}
static size_t memo_rows(size_t g) { return g % 8 == 6 ? 1500 : 3000; }

/* A page without nulls skips writing definition levels the reused buffer already holds
 * (reader def_all): row groups and pages with nulls in between must still read back
 * their own levels, and those without nulls all present, in every order. */
TEST(levels_reused_across_row_groups) {
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"v\",\"required\":false,\"type\":\"long\"},"
                     "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    char path[1024];
    snprintf(path, sizeof path, "%s/memo.parquet", harness_tmpdir());
    const size_t ngroups = 17;
    for (int dict = 0; dict < 2; dict++) {
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.output.fsync = false;
        o.page_row_limit = 1000;
        o.dictionary = dict;
        o.codec = FLOE_CODEC_ZSTD;
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        for (size_t g = 0; g < ngroups; g++) {
            floe_batch in;
            REQUIRE(floe_batch_init(&in, s) == 0);
            for (size_t i = 0; i < memo_rows(g); i++) {
                if (memo_null(g, i)) {
                    REQUIRE(floe_colbuf_push_null(&in.cols[0], 0, 0) == 0);
                    REQUIRE(floe_colbuf_push_null(&in.cols[1], 0, 0) == 0);
                    continue;
                }
                uint8_t v[8];
                floe_store_le64(v, (uint64_t)(g * 100000 + i));
                REQUIRE(floe_colbuf_push_value(&in.cols[0], 0, v, 8) == 0);
                REQUIRE(floe_colbuf_push_value(&in.cols[1], 0, v, 1 + i % 8) == 0);
            }
            in.nrows = memo_rows(g);
            REQUIRE_OK(floe_pq_writer_write_batch(w, &in, &err), err);
            REQUIRE_OK(floe_pq_writer_flush(w, &err), err);
            floe_batch_free(&in);
        }
        REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
        /* twice: in order, then a slice of a row group with nulls between full reads */
        for (int pass = 0; pass < 2; pass++) {
            floe_pq_reader *r = NULL;
            REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
            size_t bad = 0, groups = 0;
            for (size_t g = 0; g < ngroups; g++) {
                const floe_pq_rowset *set = NULL;
                if (pass == 1 && g % 4 == 2) {
                    REQUIRE_OK(floe_pq_reader_read_rows(r, g - 1, 500, 1700, &set, &err), err);
                    const floe_colbuf *c = &set->cols[0];
                    for (size_t l = 0; l < c->nlevels; l++)
                        bad += (c->def[l] != c->max_def) != memo_null(g - 1, 500 + l);
                }
                REQUIRE_OK(floe_pq_reader_read_row_group(r, g, &set, &err), err);
                groups++;
                for (size_t k = 0; k < 2; k++) {
                    const floe_colbuf *c = &set->cols[k];
                    size_t vi = 0;
                    if (c->nlevels != memo_rows(g))
                        bad++;
                    for (size_t l = 0; l < c->nlevels && l < memo_rows(g); l++) {
                        bool isnull = c->def[l] != c->max_def;
                        if (isnull != memo_null(g, l)) {
                            bad++;
                            continue;
                        }
                        if (isnull)
                            continue;
                        uint64_t want = (uint64_t)(g * 100000 + l);
                        if (k == 0)
                            bad += floe_load_le64(c->values + vi * 8) != want;
                        else
                            bad += c->offsets[vi + 1] - c->offsets[vi] != 1 + l % 8 ||
                                   memcmp(c->values + c->offsets[vi], &want, 1 + l % 8) != 0;
                        vi++;
                    }
                    bad += vi != c->nvalues;
                }
            }
            CHECK_EQ_INT((int64_t)groups, (int64_t)ngroups);
            if (bad)
                harness_fail(__FILE__, __LINE__, "dict %d pass %d: %zu levels or values differ",
                             dict, pass, bad);
            floe_pq_reader_close(r);
        }
    }
    floe_schema_free(s);
}

/* Read every row group of path; the first error's code, 0 when all read. */
static int read_whole(const char *path, floe_error *err) {
    floe_pq_reader *r = NULL;
    int rc = floe_pq_reader_open(NULL, path, NULL, &r, err);
    const floe_pq_rowset *set = NULL;
    while (rc == 0 && (rc = floe_pq_reader_next(r, &set, err)) > 0)
        rc = 0;
    floe_pq_reader_close(r);
    return rc;
}

/* A run of 32-byte values whose length prefixes lie: too long for the page in mid-run,
 * one byte past the page end on the last value, or swallowing the next value (the page
 * then runs out before its count). Each must fail as corrupt, never read past the page
 * (ASan) nor succeed. The untouched page reads. */
TEST(lying_length_in_a_run_fails) {
    const size_t nrows = 300;
    floe_error err;
    floe_error_clear(&err);
    const char *ok = write_lying_page(nrows, 0, 32); /* the truth */
    CHECK_OK(read_whole(ok, &err), err);
    const struct {
        size_t at;
        uint32_t len;
    } lies[] = {
        {150 * 36, 0x7fffffffu},        /* mid-run, far past the end */
        {(nrows - 1) * 36, 33},         /* the last value, one byte past the end */
        {(nrows - 2) * 36, 33 + 36},    /* the one before, past the end by one */
        {150 * 36, 32 + 36},            /* swallows the next value: one value short */
        {7 * 36, 31},                   /* a run broken before the copies are exact */
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        const char *liar = write_lying_page(nrows, lies[i].at, lies[i].len);
        floe_error_clear(&err);
        int rc = read_whole(liar, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "lie %zu: want FLOE_ECORRUPT, got %d (%s)", i, rc,
                         err.msg);
    }
}

int main(void) {
    RUN(byte_arrays_of_every_length_at_page_ends);
    RUN(byte_arrays_in_runs_of_one_length);
    RUN(lying_length_in_a_run_fails);
    RUN(dictionary_with_a_long_entry);
    RUN(levels_reused_across_row_groups);
    return harness_finish();
}
