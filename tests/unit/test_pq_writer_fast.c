/* test_pq_writer_fast.c - the Parquet writer's fast paths against independent oracles.
 *
 * Page and chunk statistics of byte-array and fixed-length columns are kept per
 * dictionary entry while a chunk is dictionary-encoded, and per value otherwise; both
 * must give the min/max a plain memcmp over the page's values gives. Pages without nulls
 * write their definition levels without reading them. The files are read back through our
 * own footer and page-index decoders, and the statistics compared with ones computed here
 * from the rows of each page (OffsetIndex first_row_index). */
#include <math.h>
#include <stdlib.h>

#include "floe/column.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "floe/schema.h"
#include "harness.h"
#include "parquet/metadata.h"

static floe_error err;

typedef struct pq_file {
    uint8_t *data;
    size_t len;
    floe_arena arena;
    floe_pq_file_metadata md;
} pq_file;

static int pq_load(const char *path, pq_file *f) {
    memset(f, 0, sizeof *f);
    f->data = (uint8_t *)harness_read_file(path, &f->len);
    if (!f->data || f->len < 12)
        return -1;
    uint32_t flen = floe_load_le32(f->data + f->len - 8);
    if (flen > f->len - 12)
        return -1;
    floe_arena_init(&f->arena, 4096);
    return floe_pq_file_metadata_decode(f->data + f->len - 8 - flen, flen,
                                        (int64_t)(f->len - 8 - flen), &f->arena, &f->md, &err);
}

static void pq_free(pq_file *f) {
    free(f->data);
    floe_arena_reset(&f->arena);
}

/* The reference order: unsigned bytes, then length. */
static int ref_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, bool sgn) {
    if (sgn && an && bn && ((a[0] ^ b[0]) & 0x80)) /* decimals of different signs */
        return (a[0] & 0x80) ? -1 : 1;
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    return c ? c : (an < bn ? -1 : an > bn);
}

/* A value of row r: NULL (len 0) for a null. */
typedef struct rowval {
    const uint8_t *p;
    size_t n;
    bool null;
} rowval;

static bool has_encoding(const floe_pq_column_metadata *m, int enc) {
    for (size_t i = 0; i < m->n_encodings; i++)
        if (m->encodings[i] == enc)
            return true;
    return false;
}

/* Every page of column col of every row group: the ColumnIndex min/max equal the
 * reference min/max of the rows of the page; the chunk statistics those of the chunk.
 * Values are flat (one slot per row). Returns the number of pages checked. */
static size_t check_page_stats(const pq_file *f, size_t col, const rowval *rows,
                               size_t nrows, bool signed_fixed) {
    size_t pages = 0, row0 = 0;
    for (size_t g = 0; g < f->md.n_row_groups; g++) {
        const floe_pq_row_group *rg = &f->md.row_groups[g];
        const floe_pq_column_chunk *cc = &rg->columns[col];
        if (!cc->has_offset_index || !cc->has_column_index) {
            CHECK(cc->has_offset_index && cc->has_column_index);
            return pages;
        }
        floe_pq_offset_index oi;
        floe_pq_column_index ci;
        floe_arena a;
        floe_arena_init(&a, 4096);
        if (floe_pq_offset_index_decode(f->data + cc->offset_index_offset,
                                        (size_t)cc->offset_index_length, 0, &a, &oi, &err) < 0 ||
            floe_pq_column_index_decode(f->data + cc->column_index_offset,
                                        (size_t)cc->column_index_length, 0, &a, &ci, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "page index: %s", err.msg);
            floe_arena_reset(&a);
            return pages;
        }
        CHECK_EQ_INT(ci.n_pages, oi.n_pages);
        const uint8_t *cmin = NULL, *cmax = NULL;
        size_t cminn = 0, cmaxn = 0;
        for (size_t p = 0; p < oi.n_pages && p < ci.n_pages; p++) {
            size_t first = row0 + (size_t)oi.page_locations[p].first_row_index;
            size_t end = p + 1 < oi.n_pages
                             ? row0 + (size_t)oi.page_locations[p + 1].first_row_index
                             : row0 + (size_t)rg->num_rows;
            const uint8_t *mn = NULL, *mx = NULL;
            size_t mnn = 0, mxn = 0;
            bool any = false;
            int64_t nulls = 0;
            for (size_t r = first; r < end && r < nrows; r++) {
                if (rows[r].null) {
                    nulls++;
                    continue;
                }
                bool lo = !any || ref_cmp(rows[r].p, rows[r].n, mn, mnn, signed_fixed) < 0;
                bool hi = !any || ref_cmp(rows[r].p, rows[r].n, mx, mxn, signed_fixed) > 0;
                if (lo) {
                    mn = rows[r].p;
                    mnn = rows[r].n;
                }
                if (hi) {
                    mx = rows[r].p;
                    mxn = rows[r].n;
                }
                any = true;
            }
            CHECK_EQ_INT(ci.null_counts[p], nulls);
            CHECK_EQ_INT(ci.null_pages[p], !any);
            if (any) {
                bool ok_min = ci.min_values[p].n == mnn &&
                              (mnn == 0 || memcmp(ci.min_values[p].p, mn, mnn) == 0);
                bool ok_max = ci.max_values[p].n == mxn &&
                              (mxn == 0 || memcmp(ci.max_values[p].p, mx, mxn) == 0);
                if (!ok_min || !ok_max)
                    harness_fail(__FILE__, __LINE__,
                                 "column %zu row group %zu page %zu (rows %zu..%zu): min %s "
                                 "max %s", col, g, p, first, end, ok_min ? "ok" : "WRONG",
                                 ok_max ? "ok" : "WRONG");
                if (!cmin || ref_cmp(mn, mnn, cmin, cminn, signed_fixed) < 0) {
                    cmin = mn;
                    cminn = mnn;
                }
                if (!cmax || ref_cmp(mx, mxn, cmax, cmaxn, signed_fixed) > 0) {
                    cmax = mx;
                    cmaxn = mxn;
                }
            }
            pages++;
        }
        const floe_pq_statistics *st = &cc->meta_data.statistics;
        CHECK_EQ_INT(st->has_min_value, cmin != NULL);
        if (cmin && st->has_min_value) {
            CHECK(st->min_value.n == cminn &&
                  (cminn == 0 || memcmp(st->min_value.p, cmin, cminn) == 0));
            CHECK(st->max_value.n == cmaxn &&
                  (cmaxn == 0 || memcmp(st->max_value.p, cmax, cmaxn) == 0));
        }
        row0 += (size_t)rg->num_rows;
        floe_arena_reset(&a);
    }
    return pages;
}

/* The file at path holds rows[0..nrows) (ncols flat columns, row-major), value for value,
 * read back by our reader. */
static void check_rows(const char *path, const rowval *rows, size_t ncols, size_t nrows) {
    floe_pq_reader *rd = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &rd, &err), err);
    size_t row = 0;
    for (;;) {
        const floe_pq_rowset *x = NULL;
        int rc = floe_pq_reader_next(rd, &x, &err);
        REQUIRE(rc >= 0);
        if (rc == 0)
            break;
        for (size_t c = 0; c < ncols; c++) {
            const floe_colbuf *cb = &x->cols[c];
            size_t vi = 0;
            for (size_t k = 0; k < cb->nlevels; k++) {
                const rowval *v = &rows[(row + k) * ncols + c];
                bool null = cb->max_def && cb->def[k] < cb->max_def;
                CHECK_EQ_INT(null, v->null);
                if (null || v->null)
                    continue;
                const uint8_t *p = cb->width ? cb->values + vi * (size_t)cb->width
                                             : cb->values + cb->offsets[vi];
                size_t n = cb->width ? (size_t)cb->width : cb->offsets[vi + 1] - cb->offsets[vi];
                vi++;
                if (n != v->n || (n && memcmp(p, v->p, n) != 0)) {
                    harness_fail(__FILE__, __LINE__, "%s: row %zu column %zu differs", path,
                                 row + k, c);
                    break;
                }
            }
        }
        row += (size_t)x->nrows;
    }
    CHECK_EQ_INT(row, nrows);
    floe_pq_reader_close(rd);
}

/* Strings of every length 0..40 over a small alphabet (shared prefixes, repeats), binary
 * with 0x00 and 0xFF bytes, a 16-byte fixed (uuid) and a signed decimal, every 9th row
 * null, written with the dictionary on (overflowing its page limit mid-chunk, and
 * abandoned on a near-unique column) and off, in several batches and row groups: the
 * page statistics always equal the reference ones. */
TEST(test_dict_page_stats_match_reference) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"binary\"},"
        "{\"id\":3,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
        "{\"id\":4,\"name\":\"d\",\"required\":false,\"type\":\"decimal(30, 2)\"},"
        "{\"id\":5,\"name\":\"low\",\"required\":true,\"type\":\"string\"},"
        "{\"id\":6,\"name\":\"uniq\",\"required\":true,\"type\":\"string\"},"
        "{\"id\":7,\"name\":\"same_len\",\"required\":true,\"type\":\"string\"}]}");
    REQUIRE(s != NULL);
    const size_t nrows = 60000;
    const size_t ncols = 7;
    rowval *rows = calloc(nrows * ncols, sizeof *rows);
    uint8_t *pool = malloc(nrows * ncols * 48);
    REQUIRE(rows && pool);
    int dw = 0;
    {
        floe_batch tb;
        REQUIRE(floe_batch_init(&tb, s) == 0);
        dw = tb.cols[3].width;
        floe_batch_free(&tb);
    }
    REQUIRE(dw > 0 && dw <= 48);
    harness_rng_seed(0x243F6A8885A308D3ull);
    /* pools of distinct values the rows draw from: repeats make the dictionary pay, and
     * there are more than its page limit holds */
    enum { POOL = 1200 };
    static uint8_t spool[POOL][41], bpool[POOL][25], upool[POOL][16];
    static size_t slen[POOL], blen[POOL];
    for (size_t i = 0; i < POOL; i++) {
        slen[i] = i % 41; /* every length 0..40 */
        for (size_t k = 0; k < slen[i]; k++)
            spool[i][k] = (uint8_t)('a' + (harness_rnd() & 1));
        static const uint8_t al[4] = {0x00, 0x7F, 0x80, 0xFF};
        blen[i] = i % 25;
        for (size_t k = 0; k < blen[i]; k++)
            bpool[i][k] = al[harness_rnd() & 3];
        for (size_t k = 0; k < 16; k++)
            upool[i][k] = (uint8_t)(k < 2 ? harness_rnd() % 3 : harness_rnd());
    }
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < ncols; c++) {
            rowval *v = &rows[r * ncols + c];
            uint8_t *p = pool + (r * ncols + c) * 48;
            v->p = p;
            v->null = c < 4 && (r % 9 == 4 || (r / 3000) % 7 == 3); /* also all-null pages */
            if (v->null)
                continue;
            switch (c) {
            case 0: { /* alphabet "ab": many shared prefixes, lengths 0..40 */
                size_t i = (size_t)(harness_rnd() % POOL);
                v->n = slen[i];
                memcpy(p, spool[i], v->n);
                break;
            }
            case 1: { /* bytes 0x00, 0x7F, 0x80, 0xFF; lengths 0..24 */
                size_t i = (size_t)(harness_rnd() % POOL);
                v->n = blen[i];
                memcpy(p, bpool[i], v->n);
                break;
            }
            case 2: /* uuid: few distinct first bytes */
                v->n = 16;
                memcpy(p, upool[harness_rnd() % POOL], 16);
                break;
            case 3: /* decimal: negative and positive, repeats */
                v->n = (size_t)dw;
                memset(p, (harness_rnd() & 1) ? 0xFF : 0x00, (size_t)dw);
                p[dw - 1] = (uint8_t)(harness_rnd() % 50);
                if (harness_rnd() % 5 == 0)
                    p[0] = (uint8_t)(harness_rnd() & 0xFF);
                break;
            case 4: { /* low cardinality, lengths 0..12 */
                static const char *const w[] = {"", "a", "ab", "abc", "b", "ba", "zz",
                                                "abcdefgh", "abcdefghi", "abcdefghijkl", "\xff"};
                const char *x = w[harness_rnd() % 11];
                v->n = strlen(x);
                memcpy(p, x, v->n);
                break;
            }
            case 6: { /* pages of strings of one length 0..16 over "ab\xff": the short
                       * comparisons decide on equal lengths */
                size_t m = (r / 500) % 17;
                v->n = m;
                for (size_t k = 0; k < m; k++) {
                    uint64_t x = harness_rnd() % 3;
                    p[k] = x == 0 ? 'a' : x == 1 ? 'b' : 0xff;
                }
                break;
            }
            default: /* near unique: the dictionary is dropped after its probe */
                v->n = (size_t)snprintf((char *)p, 48, "u-%016llx",
                                        (unsigned long long)(harness_rnd() >> 1));
                break;
            }
        }
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s", harness_tmpdir());
    for (int dict = 0; dict < 2; dict++) {
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.codec = FLOE_CODEC_UNCOMPRESSED;
        o.output.fsync = false;
        o.dictionary = dict == 1;
        o.dict_page_size_limit = 12 * 1024; /* overflows mid-chunk for s, b, u */
        o.page_size = 4096;
        o.page_row_limit = 700;
        o.row_group_size = 1200 * 1024;
        o.stats_truncate_length = 64; /* no value is truncated */
        char path[512];
        snprintf(path, sizeof path, "%s/stats-%d.parquet", dir, dict);
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        floe_batch b;
        REQUIRE(floe_batch_init(&b, s) == 0);
        size_t r = 0;
        while (r < nrows) {
            size_t n = 1 + (size_t)(harness_rnd() % 5000);
            if (n > nrows - r)
                n = nrows - r;
            floe_batch_clear(&b);
            for (size_t k = r; k < r + n; k++) {
                for (size_t c = 0; c < ncols; c++) {
                    const rowval *v = &rows[k * ncols + c];
                    int rc = v->null ? floe_colbuf_push_null(&b.cols[c], 0, 0)
                                     : floe_colbuf_push_value(&b.cols[c], 0, v->p, v->n);
                    REQUIRE(rc == 0);
                }
            }
            b.nrows = n;
            REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
            r += n;
        }
        floe_batch_free(&b);
        REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
        pq_file f;
        REQUIRE_OK(pq_load(path, &f), err);
        CHECK(f.md.n_row_groups >= 2);
        rowval *colv = calloc(nrows, sizeof *colv);
        REQUIRE(colv);
        for (size_t c = 0; c < ncols; c++) {
            for (size_t k = 0; k < nrows; k++)
                colv[k] = rows[k * ncols + c];
            size_t pages = check_page_stats(&f, c, colv, nrows, c == 3);
            CHECK(pages > 10);
        }
        free(colv);
        const floe_pq_column_metadata *m0 = &f.md.row_groups[0].columns[0].meta_data;
        const floe_pq_column_metadata *m4 = &f.md.row_groups[0].columns[4].meta_data;
        const floe_pq_column_metadata *m5 = &f.md.row_groups[0].columns[5].meta_data;
        if (dict) {
            /* s: dictionary pages, then PLAIN once the dictionary overflowed */
            CHECK(has_encoding(m0, FLOE_PQ_ENC_RLE_DICTIONARY));
            int64_t plain = 0;
            for (size_t i = 0; i < m0->n_encoding_stats; i++)
                if (m0->encoding_stats[i].page_type == FLOE_PQ_DATA_PAGE &&
                    m0->encoding_stats[i].encoding == FLOE_PQ_ENC_PLAIN)
                    plain += m0->encoding_stats[i].count;
            CHECK(plain > 0);
            CHECK(has_encoding(m4, FLOE_PQ_ENC_RLE_DICTIONARY));
            for (size_t c = 1; c <= 3; c++)
                CHECK(f.md.row_groups[0].columns[c].meta_data.has_dictionary_page_offset);
            CHECK(!m5->has_dictionary_page_offset);
        } else {
            CHECK(!m0->has_dictionary_page_offset && !m4->has_dictionary_page_offset);
        }
        pq_free(&f);
    }
    /* both files hold the rows written, value for value (read back by our reader) */
    for (int dict = 0; dict < 2; dict++) {
        char pa[512];
        snprintf(pa, sizeof pa, "%s/stats-%d.parquet", dir, dict);
        check_rows(pa, rows, ncols, nrows);
    }
    free(rows);
    free(pool);
    floe_schema_free(s);
}

/* Numbers: page min/max by value (NaNs counted and left out, zero bounds written as -0.0
 * min / +0.0 max), int32/int64 extremes, infinities, with the dictionary on and off. */
static double num_at(const uint8_t *p, int kind) {
    switch (kind) {
    case 0: { int32_t x; memcpy(&x, p, 4); return (double)x; }
    case 1: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case 2: { float x; memcpy(&x, p, 4); return (double)x; }
    default: { double x; memcpy(&x, p, 8); return x; }
    }
}

TEST(test_numeric_page_stats_match_reference) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
        "{\"id\":2,\"name\":\"l\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":3,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
        "{\"id\":4,\"name\":\"d\",\"required\":false,\"type\":\"double\"}]}");
    REQUIRE(s != NULL);
    const size_t nrows = 40000;
    uint8_t *vals = calloc(nrows * 4, 8);
    bool *nulls = calloc(nrows * 4, sizeof *nulls);
    REQUIRE(vals && nulls);
    harness_rng_seed(0x13198A2E03707344ull);
    for (size_t r = 0; r < nrows; r++) {
        for (int c = 0; c < 4; c++) {
            uint8_t *p = vals + (r * 4 + (size_t)c) * 8;
            nulls[r * 4 + (size_t)c] = r % 11 == 3;
            uint64_t k = harness_rnd() % 64;
            /* small ranges per 1000 rows (so the extremes vary by page), plus specials */
            int64_t base = (int64_t)((r / 1000) % 7) * 1000 - 3000;
            int64_t iv = base + (int64_t)(harness_rnd() % 2000);
            switch (c) {
            case 0: {
                int32_t x = k == 0 ? INT32_MIN : k == 1 ? INT32_MAX : (int32_t)iv;
                memcpy(p, &x, 4);
                break;
            }
            case 1: {
                int64_t x = k == 0 ? INT64_MIN : k == 1 ? INT64_MAX : iv * 1000003;
                memcpy(p, &x, 8);
                break;
            }
            case 2: {
                float x = k == 0 ? NAN : k == 1 ? -0.0f : k == 2 ? 0.0f : k == 3 ? INFINITY
                          : (r / 1000) % 5 == 2 ? (k & 1 ? -0.0f : 0.0f) /* zero-only pages */
                          : (float)iv / 8.0f;
                memcpy(p, &x, 4);
                break;
            }
            default: {
                double x = k == 0 ? NAN : k == 1 ? -0.0 : k == 2 ? -INFINITY
                           : (r / 1000) % 5 == 2 ? (k & 1 ? 0.0 : -0.0) : (double)iv / 3.0;
                memcpy(p, &x, 8);
                break;
            }
            }
        }
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s", harness_tmpdir());
    for (int dict = 0; dict < 2; dict++) {
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.codec = FLOE_CODEC_UNCOMPRESSED;
        o.output.fsync = false;
        o.dictionary = dict == 1;
        o.page_row_limit = 900;
        char path[512];
        snprintf(path, sizeof path, "%s/num-%d.parquet", dir, dict);
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        floe_batch b;
        REQUIRE(floe_batch_init(&b, s) == 0);
        /* batches of 1..40 rows and of thousands: spans shorter and longer than the
         * min/max blocks */
        for (size_t r0 = 0; r0 < nrows;) {
            size_t n = (r0 / 10000) % 2 ? 1 + (size_t)(harness_rnd() % 40) : 5000;
            if (n > nrows - r0)
                n = nrows - r0;
            floe_batch_clear(&b);
            for (size_t r = r0; r < r0 + n; r++)
                for (int c = 0; c < 4; c++) {
                    int rc = nulls[r * 4 + (size_t)c]
                                 ? floe_colbuf_push_null(&b.cols[c], 0, 0)
                                 : floe_colbuf_push_value(&b.cols[c], 0,
                                                          vals + (r * 4 + (size_t)c) * 8,
                                                          (size_t)b.cols[c].width);
                    REQUIRE(rc == 0);
                }
            b.nrows = n;
            REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
            r0 += n;
        }
        floe_batch_free(&b);
        REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
        pq_file f;
        REQUIRE_OK(pq_load(path, &f), err);
        REQUIRE(f.md.n_row_groups == 1);
        for (int c = 0; c < 4; c++) {
            const floe_pq_column_chunk *cc = &f.md.row_groups[0].columns[c];
            REQUIRE(cc->has_offset_index && cc->has_column_index);
            floe_pq_offset_index oi;
            floe_pq_column_index ci;
            REQUIRE_OK(floe_pq_offset_index_decode(f.data + cc->offset_index_offset,
                                                   (size_t)cc->offset_index_length, 0, &f.arena,
                                                   &oi, &err), err);
            REQUIRE_OK(floe_pq_column_index_decode(f.data + cc->column_index_offset,
                                                   (size_t)cc->column_index_length, 0, &f.arena,
                                                   &ci, &err), err);
            REQUIRE(ci.n_pages == oi.n_pages && oi.n_pages > 10);
            for (size_t p = 0; p < oi.n_pages; p++) {
                size_t first = (size_t)oi.page_locations[p].first_row_index;
                size_t end = p + 1 < oi.n_pages ? (size_t)oi.page_locations[p + 1].first_row_index
                                                : nrows;
                double lo = 0, hi = 0;
                bool any = false;
                int64_t nn = 0;
                for (size_t r = first; r < end; r++) {
                    if (nulls[r * 4 + (size_t)c])
                        continue;
                    double x = num_at(vals + (r * 4 + (size_t)c) * 8, c);
                    if (x != x) {
                        nn++;
                        continue;
                    }
                    if (!any || x < lo)
                        lo = x;
                    if (!any || x > hi)
                        hi = x;
                    any = true;
                }
                if (c >= 2) {
                    CHECK(ci.nan_counts != NULL);
                    if (ci.nan_counts)
                        CHECK_EQ_INT(ci.nan_counts[p], nn);
                }
                REQUIRE(any); /* no all-NaN or all-null page in this data */
                double gl = num_at(ci.min_values[p].p, c), gh = num_at(ci.max_values[p].p, c);
                if (gl != lo || gh != hi)
                    harness_fail(__FILE__, __LINE__, "column %d page %zu: [%g, %g] want [%g, %g]",
                                 c, p, gl, gh, lo, hi);
                if (c >= 2 && lo == 0)
                    CHECK(signbit(gl)); /* zero min written as -0.0 */
                if (c >= 2 && hi == 0)
                    CHECK(!signbit(gh)); /* zero max written as +0.0 */
            }
        }
        pq_free(&f);
    }
    free(vals);
    free(nulls);
    floe_schema_free(s);
}

/* Dictionary-encoded 4- and 8-byte columns with runs of equal values (1 to 60 long, a
 * file number, a date), alternations, nulls inside runs, -0.0 next to 0.0 and NaN runs
 * (distinct bit patterns are distinct entries): a value equal to the one before takes its
 * index without a lookup, and every value reads back as written, from batches of 1 to
 * 3,000 rows. */
TEST(test_dict_runs_read_back) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
        "{\"id\":2,\"name\":\"l\",\"required\":true,\"type\":\"long\"},"
        "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"double\"}]}");
    REQUIRE(s != NULL);
    const size_t nrows = 30000, ncols = 3;
    uint8_t *vals = calloc(nrows * ncols, 8);
    rowval *rows = calloc(nrows * ncols, sizeof *rows);
    REQUIRE(vals && rows);
    harness_rng_seed(0x243F6A8885A308D3ull);
    int32_t iv = 0;
    int64_t lv = 0;
    double dv = 0;
    size_t left[3] = {0, 0, 0};
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < ncols; c++) {
            if (left[c] == 0) { /* a new run: its length and value */
                left[c] = 1 + (size_t)(harness_rnd() % 60);
                uint64_t k = harness_rnd() % 40;
                if (c == 0)
                    iv = (int32_t)(k % 13) - 6;
                else if (c == 1)
                    lv = k % 2 ? (int64_t)(k * 1000003) : INT64_MIN + (int64_t)k;
                else
                    dv = k == 0 ? NAN : k == 1 ? -0.0 : k == 2 ? 0.0 : (double)(k % 9) / 4.0;
            }
            left[c]--;
            uint8_t *p = vals + (r * ncols + c) * 8;
            size_t w = c == 0 ? 4 : 8;
            if (c == 0)
                memcpy(p, &iv, 4);
            else if (c == 1)
                memcpy(p, &lv, 8);
            else
                memcpy(p, r % 97 == 5 ? (const void *)&(double){-0.0} : (const void *)&dv, 8);
            rows[r * ncols + c] = (rowval){p, w, c != 1 && r % 13 == 4};
        }
    }
    char path[512];
    snprintf(path, sizeof path, "%s/dict-runs.parquet", harness_tmpdir());
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.codec = FLOE_CODEC_UNCOMPRESSED;
    o.output.fsync = false;
    o.page_row_limit = 2000;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    for (size_t r0 = 0; r0 < nrows;) {
        size_t n = 1 + (size_t)(harness_rnd() % 3000);
        if (n > nrows - r0)
            n = nrows - r0;
        floe_batch_clear(&b);
        for (size_t r = r0; r < r0 + n; r++)
            for (size_t c = 0; c < ncols; c++) {
                const rowval *v = &rows[r * ncols + c];
                REQUIRE((v->null ? floe_colbuf_push_null(&b.cols[c], 0, 0)
                                 : floe_colbuf_push_value(&b.cols[c], 0, v->p, v->n)) == 0);
            }
        b.nrows = n;
        REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
        r0 += n;
    }
    floe_batch_free(&b);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    for (size_t c = 0; c < ncols; c++) /* the dictionary was kept: the runs went through it */
        CHECK(has_encoding(&f.md.row_groups[0].columns[c].meta_data, FLOE_PQ_ENC_RLE_DICTIONARY));
    pq_free(&f);
    check_rows(path, rows, ncols, nrows);
    free(vals);
    free(rows);
    floe_schema_free(s);
}

/* PLAIN pages are compressed in place, their levels put in the room kept before the
 * values; a page whose levels do not fit that room is copied whole and the room grows for
 * the next pages. Levels from a few bytes (no nulls) to kilobytes (random nulls, lists),
 * with and without compression: every value, null and list comes back. */
TEST(test_plain_pages_levels_in_place) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":2,\"name\":\"t\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":4,\"element\":\"string\",\"element-required\":true}},"
        "{\"id\":3,\"name\":\"i\",\"required\":false,\"type\":\"long\"}]}");
    REQUIRE(s != NULL);
    const size_t nrows = 30000;
    floe_batch all;
    REQUIRE(floe_batch_init(&all, s) == 0);
    harness_rng_seed(0x13198A2E03707344ull);
    for (size_t r = 0; r < nrows; r++) {
        /* stretches of 2000 rows: no nulls, every 9th null, half null, all null */
        size_t mode = (r / 2000) % 4;
        bool null = mode == 3 || (mode == 1 && r % 9 == 0) || (mode == 2 && (harness_rnd() & 1));
        char v[40];
        size_t n = (size_t)(harness_rnd() % 31);
        for (size_t k = 0; k < n; k++)
            v[k] = (char)('a' + harness_rnd() % 26);
        REQUIRE((null ? floe_colbuf_push_null(&all.cols[0], 0, 0)
                      : floe_colbuf_push_value(&all.cols[0], 0, v, n)) == 0);
        size_t items = null ? 0 : (size_t)(harness_rnd() % 7);
        if (null || harness_rnd() % 5 == 0) {
            REQUIRE(floe_colbuf_push_null(&all.cols[1], null ? 0 : 1, 0) == 0);
        } else {
            for (size_t k = 0; k <= items; k++)
                REQUIRE(floe_colbuf_push_value(&all.cols[1], k ? 1 : 0, v, n / (k + 1)) == 0);
        }
        int64_t x = (int64_t)(harness_rnd() >> 1);
        REQUIRE((null ? floe_colbuf_push_null(&all.cols[2], 0, 0)
                      : floe_colbuf_push_value(&all.cols[2], 0, &x, 8)) == 0);
    }
    all.nrows = nrows;
    for (int codec = 0; codec < 2; codec++) {
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.codec = codec ? FLOE_CODEC_SNAPPY : FLOE_CODEC_UNCOMPRESSED;
        o.output.fsync = false;
        o.dictionary = false;
        o.delta_ints = false;
        o.page_size = 1500 + 3000 * (size_t)codec;
        o.row_group_size = 300 * 1024;
        char path[512];
        snprintf(path, sizeof path, "%s/inplace-%d.parquet", harness_tmpdir(), codec);
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        REQUIRE_OK(floe_pq_writer_write_batch(w, &all, &err), err);
        REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
        floe_pq_reader *rd = NULL;
        REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &rd, &err), err);
        size_t lv[3] = {0, 0, 0}, vi[3] = {0, 0, 0}, rows = 0;
        bool same = true;
        for (;;) {
            const floe_pq_rowset *x = NULL;
            int rc = floe_pq_reader_next(rd, &x, &err);
            REQUIRE(rc >= 0);
            if (rc == 0)
                break;
            rows += (size_t)x->nrows;
            for (size_t c = 0; c < 3 && same; c++) {
                const floe_colbuf *got = &x->cols[c], *want = &all.cols[c];
                for (size_t k = 0; k < got->nlevels && same; k++, lv[c]++) {
                    if (lv[c] >= want->nlevels || got->def[k] != want->def[lv[c]] ||
                        (want->max_rep && got->rep[k] != want->rep[lv[c]])) {
                        same = false;
                        break;
                    }
                }
                for (size_t k = 0; k < got->nvalues && same; k++, vi[c]++) {
                    if (vi[c] >= want->nvalues) {
                        same = false;
                    } else if (c < 2) {
                        size_t gn = got->offsets[k + 1] - got->offsets[k];
                        size_t wn = want->offsets[vi[c] + 1] - want->offsets[vi[c]];
                        same = gn == wn && (gn == 0 || memcmp(got->values + got->offsets[k],
                                                              want->values + want->offsets[vi[c]],
                                                              gn) == 0);
                    } else {
                        same = memcmp(got->values + k * 8, want->values + vi[c] * 8, 8) == 0;
                    }
                }
                if (!same)
                    harness_fail(__FILE__, __LINE__, "codec %d column %zu differs near level %zu",
                                 codec, c, lv[c]);
            }
        }
        floe_pq_reader_close(rd);
        CHECK_EQ_INT(rows, nrows);
        for (size_t c = 0; c < 3; c++) {
            CHECK_EQ_INT(lv[c], all.cols[c].nlevels);
            CHECK_EQ_INT(vi[c], all.cols[c].nvalues);
        }
    }
    floe_batch_free(&all);
    floe_schema_free(s);
}

/* Page carry (floe_colbuf_page): a file written with PLAIN pages is read back into batches
 * that keep the stored pages, and the batches written to a second file with them and to a
 * third without. Both hold the rows, value for value; the carried file has pages placed
 * as stored (and its statistics, page index and file metrics are those of the re-encoded
 * one); what cannot be carried is encoded as usual (a dictionary before its fallback,
 * short last pages, another codec, pages over the page size); and a carried page whose
 * levels do not match its values is refused. */
static void metrics_equal(const floe_pq_file_info *a, const floe_pq_file_info *b) {
    CHECK_EQ_INT(a->record_count, b->record_count);
    REQUIRE(a->ncolumns == b->ncolumns);
    for (size_t c = 0; c < a->ncolumns; c++) {
        const floe_pq_column_info *x = &a->columns[c], *y = &b->columns[c];
        CHECK_EQ_INT(x->value_count, y->value_count);
        CHECK_EQ_INT(x->null_value_count, y->null_value_count);
        CHECK_EQ_INT(x->has_nan_count, y->has_nan_count);
        CHECK_EQ_INT(x->nan_value_count, y->nan_value_count);
        CHECK_EQ_INT(x->has_bounds, y->has_bounds);
        if (x->has_bounds && y->has_bounds) {
            CHECK(x->lower_len == y->lower_len &&
                  memcmp(x->lower_bound, y->lower_bound, x->lower_len) == 0);
            CHECK(x->upper_len == y->upper_len &&
                  memcmp(x->upper_bound, y->upper_bound, x->upper_len) == 0);
        }
    }
}

TEST(test_carried_pages_match_reencoded) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":2,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
        "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
        "{\"id\":4,\"name\":\"l\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":5,\"name\":\"r\",\"required\":true,\"type\":\"string\"}]}");
    REQUIRE(s != NULL);
    enum { NCOLS = 5 };
    const size_t nrows = 30000;
    rowval *rows = calloc(nrows * NCOLS, sizeof *rows);
    uint8_t *pool = malloc(nrows * NCOLS * 64);
    REQUIRE(rows && pool);
    harness_rng_seed(0x13198A2E03707344ull);
    for (size_t r = 0; r < nrows; r++)
        for (size_t c = 0; c < NCOLS; c++) {
            rowval *v = &rows[r * NCOLS + c];
            uint8_t *p = pool + (r * NCOLS + c) * 64;
            v->p = p;
            v->null = c < 4 && (r % 7 == 3 || (r / 2500) % 5 == 2); /* and null pages */
            if (v->null)
                continue;
            if (c == 0) { /* 400 strings of 20..40 bytes: the dictionary pays, then
                             * overflows its 4 KiB */
                uint64_t k0 = harness_rnd() % 400, x = k0 * 0x9E3779B97F4A7C15ull;
                v->n = 20 + (size_t)(k0 % 21);
                for (size_t k = 0; k < v->n; k++, x = x * 6364136223846793005ull + 1)
                    p[k] = (uint8_t)(x >> 56);
            } else if (c == 4) { /* near unique, lengths 0..60 */
                v->n = (size_t)(harness_rnd() % 61);
                for (size_t k = 0; k < v->n; k++)
                    p[k] = (uint8_t)('a' + harness_rnd() % 26);
            } else if (c == 1) {
                v->n = 16;
                for (size_t k = 0; k < 16; k++)
                    p[k] = (uint8_t)harness_rnd();
            } else {
                v->n = 8;
                uint64_t x = harness_rnd();
                if (c == 2 && r % 97 == 5) {
                    double nan = NAN;
                    memcpy(&x, &nan, 8);
                }
                memcpy(p, &x, 8);
            }
        }
    const char *dir = harness_tmpdir();
    char src[512], path[3][512];
    snprintf(src, sizeof src, "%s/carry-src.parquet", dir);
    /* the source: PLAIN pages of about 12 KiB, Snappy, several row groups */
    floe_pq_write_options so;
    floe_pq_write_options_init(&so);
    so.output.fsync = false;
    so.dictionary = false;
    so.delta_ints = false;
    so.page_size = 12 * 1024;
    so.row_group_size = 300 * 1024;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, src, s, &so, &w, &err), err);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    for (size_t r = 0; r < nrows; r += 1000) {
        floe_batch_clear(&b);
        for (size_t k = r; k < r + 1000; k++)
            for (size_t c = 0; c < NCOLS; c++) {
                const rowval *v = &rows[k * NCOLS + c];
                REQUIRE((v->null ? floe_colbuf_push_null(&b.cols[c], 0, 0)
                                 : floe_colbuf_push_value(&b.cols[c], 0, v->p, v->n)) == 0);
            }
        b.nrows = 1000;
        REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    }
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);

    /* outputs: 0 carries (dictionary first, 16 KiB pages), 1 re-encodes the same batches
     * (the carried pages dropped), 2 asks for ZSTD (no carry), also with 4 KiB pages */
    floe_pq_write_options o[3];
    floe_pq_writer *ow[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        floe_pq_write_options_init(&o[i]);
        o[i].output.fsync = false;
        o[i].delta_ints = false;
        o[i].dict_page_size_limit = 4096;
        o[i].page_size = 16 * 1024;
        o[i].row_group_size = 1 << 20;
        snprintf(path[i], sizeof path[i], "%s/carry-%d.parquet", dir, i);
    }
    o[2].codec = FLOE_CODEC_ZSTD;
    CHECK_EQ_INT(floe_pq_write_options_carry_min(&o[0]), 8192);
    CHECK_EQ_INT(floe_pq_write_options_carry_min(&o[2]), 0);
    for (int i = 0; i < 3; i++)
        REQUIRE_OK(floe_pq_writer_open(NULL, path[i], s, &o[i], &ow[i], &err), err);

    floe_pq_reader *rd = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, src, NULL, &rd, &err), err);
    floe_pq_reader_file rf;
    floe_pq_reader_file_info(rd, &rf);
    REQUIRE(rf.num_row_groups >= 3);
    size_t kept = 0, kept_s = 0;
    for (size_t g = 0; g < (size_t)rf.num_row_groups; g++) {
        floe_batch_clear(&b);
        floe_colbuf *into[NCOLS];
        for (size_t c = 0; c < NCOLS; c++) {
            b.cols[c].carry_min = floe_pq_write_options_carry_min(&o[0]);
            b.cols[c].carry_codec = FLOE_CODEC_SNAPPY;
            into[c] = &b.cols[c];
        }
        const floe_pq_rowset *rs = NULL;
        REQUIRE_OK(floe_pq_reader_read_row_group_into(rd, g, into, &rs, &err), err);
        b.nrows = (size_t)rs->nrows;
        for (size_t c = 0; c < NCOLS; c++) {
            REQUIRE(into[c] == &b.cols[c]); /* decoded into the batch */
            kept += b.cols[c].ncarry;
            for (size_t k = 0; k < b.cols[c].ncarry; k++) {
                const floe_colbuf_page *pg = &b.cols[c].carry[k];
                CHECK(pg->ulen >= 8192 && pg->level0 + pg->nlevels <= b.cols[c].nlevels);
                CHECK(pg->value0 + pg->nvalues <= b.cols[c].nvalues);
            }
        }
        kept_s += b.cols[0].ncarry;
        REQUIRE_OK(floe_pq_writer_write_batch(ow[0], &b, &err), err);
        REQUIRE_OK(floe_pq_writer_write_batch(ow[2], &b, &err), err);
        for (size_t c = 0; c < NCOLS; c++)
            b.cols[c].ncarry = 0;
        REQUIRE_OK(floe_pq_writer_write_batch(ow[1], &b, &err), err);
    }
    floe_pq_reader_close(rd);
    CHECK(kept_s > 10);
    CHECK(kept > kept_s);
    int64_t carried = floe_pq_writer_carried_pages(ow[0]);
    CHECK(carried > 10 && carried < (int64_t)kept); /* not those before the fallback */
    CHECK_EQ_INT(floe_pq_writer_carried_pages(ow[1]), 0);
    CHECK_EQ_INT(floe_pq_writer_carried_pages(ow[2]), 0);
    floe_pq_file_info fi[3];
    for (int i = 0; i < 3; i++)
        REQUIRE_OK(floe_pq_writer_close(ow[i], &fi[i], &err), err);
    metrics_equal(&fi[0], &fi[1]);
    metrics_equal(&fi[0], &fi[2]);
    for (int i = 0; i < 3; i++)
        floe_pq_file_info_free(&fi[i]);

    /* every file: the rows, value for value; the carried one: page statistics those of
     * its rows */
    for (int i = 0; i < 3; i++)
        check_rows(path[i], rows, NCOLS, nrows);
    pq_file f;
    REQUIRE_OK(pq_load(path[0], &f), err);
    rowval *colv = calloc(nrows, sizeof *colv);
    REQUIRE(colv);
    for (size_t c = 0; c < NCOLS; c += 4) { /* s, r: byte order is the value order */
        for (size_t k = 0; k < nrows; k++)
            colv[k] = rows[k * NCOLS + c];
        CHECK(check_page_stats(&f, c, colv, nrows, false) > 10);
    }
    free(colv);
    /* s: a dictionary up to its fallback, PLAIN pages after it */
    const floe_pq_column_metadata *m0 = &f.md.row_groups[0].columns[0].meta_data;
    CHECK(has_encoding(m0, FLOE_PQ_ENC_RLE_DICTIONARY) && has_encoding(m0, FLOE_PQ_ENC_PLAIN));
    pq_free(&f);

    /* pages over 1.5 x the writer's page size are encoded again; a page whose levels disagree
     * with its value count is refused */
    REQUIRE_OK(floe_pq_reader_open(NULL, src, NULL, &rd, &err), err);
    floe_batch_clear(&b);
    floe_colbuf *into[NCOLS];
    for (size_t c = 0; c < NCOLS; c++) {
        b.cols[c].carry_min = 8192;
        b.cols[c].carry_codec = FLOE_CODEC_SNAPPY;
        into[c] = &b.cols[c];
    }
    const floe_pq_rowset *rs = NULL;
    REQUIRE_OK(floe_pq_reader_read_row_group_into(rd, 0, into, &rs, &err), err);
    b.nrows = (size_t)rs->nrows;
    floe_pq_reader_close(rd);
    REQUIRE(b.cols[4].ncarry >= 2);
    floe_pq_write_options small = o[0];
    small.page_size = 5000; /* 1.5 x that is below every page kept (>= 8 KiB) */
    char p2[512];
    snprintf(p2, sizeof p2, "%s/carry-small.parquet", dir);
    REQUIRE_OK(floe_pq_writer_open(NULL, p2, s, &small, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    CHECK_EQ_INT(floe_pq_writer_carried_pages(w), 0);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    /* an uncompressed page must be as long as it says it is: these bodies (Snappy) are
     * shorter, so an uncompressed writer does not take them for its own */
    floe_pq_write_options unc = o[0];
    unc.codec = FLOE_CODEC_UNCOMPRESSED;
    for (size_t c = 0; c < NCOLS; c++)
        for (size_t k = 0; k < b.cols[c].ncarry; k++)
            b.cols[c].carry[k].codec = FLOE_CODEC_UNCOMPRESSED;
    snprintf(p2, sizeof p2, "%s/carry-unc.parquet", dir);
    REQUIRE_OK(floe_pq_writer_open(NULL, p2, s, &unc, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    CHECK_EQ_INT(floe_pq_writer_carried_pages(w), 0);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    for (size_t c = 0; c < NCOLS; c++)
        for (size_t k = 0; k < b.cols[c].ncarry; k++)
            b.cols[c].carry[k].codec = FLOE_CODEC_SNAPPY;
    floe_pq_write_options plain = o[0];
    plain.dictionary = false;
    snprintf(p2, sizeof p2, "%s/carry-bad.parquet", dir);
    REQUIRE_OK(floe_pq_writer_open(NULL, p2, s, &plain, &w, &err), err);
    size_t bad = 0; /* a page within the page size: it would be carried */
    while (bad < b.cols[4].ncarry && b.cols[4].carry[bad].ulen > plain.page_size)
        bad++;
    REQUIRE(bad < b.cols[4].ncarry);
    b.cols[4].carry[bad].nvalues--; /* r is required: every slot holds a value */
    CHECK_EQ_INT(floe_pq_writer_write_batch(w, &b, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "carried page") != NULL);
    floe_pq_writer_abort(w);
    b.cols[4].carry[bad].nvalues++;

    /* truncating the buffer drops the pages it no longer holds whole */
    floe_colbuf *r4 = &b.cols[4];
    size_t n0 = r4->ncarry;
    const floe_colbuf_page last = r4->carry[n0 - 1];
    floe_colbuf_truncate(r4, last.level0 + 1, last.value0 + 1);
    CHECK_EQ_INT(r4->ncarry, n0 - 1);
    CHECK_EQ_INT(r4->carry_bytes.len, last.at);
    floe_colbuf_clear(r4);
    CHECK_EQ_INT(r4->ncarry, 0);
    floe_batch_free(&b);
    free(rows);
    free(pool);
    floe_schema_free(s);
}

int main(void) {
    RUN(test_dict_page_stats_match_reference);
    RUN(test_numeric_page_stats_match_reference);
    RUN(test_dict_runs_read_back);
    RUN(test_plain_pages_levels_in_place);
    RUN(test_carried_pages_match_reencoded);
    return harness_finish();
}
