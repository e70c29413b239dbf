/*
 * Reader fast paths (one-pass PLAIN byte arrays with fixed 32-byte copies, vectorized
 * level counting, run fills and dictionary bounds check): values of every length around
 * the copy sizes, placed at page ends, with and without nulls and dictionaries, must read
 * back exactly as written.
 */
#include <stdlib.h>
#include <string.h>

#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"

/* value of row i: length cycles 0..70 so every length meets the 16/32-byte copy edges
 * and the page end; content depends on the row so a shifted copy is caught */
static size_t row_len(size_t i) { return i % 71; }
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
    int rc = floe_pq_writer_open(path, s, &o, &w, &err);
    if (rc == 0)
        rc = floe_pq_writer_write_batch(w, &in, &err);
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else if (w)
        floe_pq_writer_abort(w);
    CHECK_OK(rc, err);
    floe_pq_reader *r = NULL;
    if (rc == 0)
        rc = floe_pq_reader_open(path, NULL, &r, &err);
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

int main(void) {
    RUN(byte_arrays_of_every_length_at_page_ends);
    return harness_finish();
}
