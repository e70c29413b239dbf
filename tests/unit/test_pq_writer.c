/* test_pq_writer.c - Parquet writer: statistics rules, truncation, dictionary fallback,
 * page cutting at row boundaries, row groups, file metrics, determinism. Files are read
 * back through our own footer/page-index decoders (values are checked against DuckDB in
 * tests/integration/pq_writer_duckdb.sh). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "floe/column.h"
#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "harness.h"
#include "parquet/metadata.h"
#include "common/testing.h"
#include "io/io_faults.h"

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
    if (memcmp(f->data, "PAR1", 4) || memcmp(f->data + f->len - 4, "PAR1", 4))
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

static const char *tmp_path(const char *name) {
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", harness_tmpdir(), name);
    return p;
}

static floe_pq_write_options plain_opts(void) {
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.codec = FLOE_CODEC_UNCOMPRESSED;
    o.output.fsync = false;
    return o;
}

static double dbl_of(floe_pq_bytes b) {
    double d;
    memcpy(&d, b.p, 8);
    return d;
}

/* ---- truncation ----------------------------------------------------------------------- */

TEST(test_truncate_binary) {
    floe_buf b;
    floe_buf_init(&b, 0);
    bool t;
    const uint8_t v[] = {'a', 0xFF, 0xFF, 0xFF, 'z'};
    CHECK_OK(floe_pq_truncate_lower(v, 5, 3, false, &b, &t), err);
    CHECK(t);
    CHECK_EQ_INT(b.len, 3);
    floe_buf_reset(&b);
    /* carry: the 0xFF tail is dropped and 'a' becomes 'b' */
    CHECK_OK(floe_pq_truncate_upper(v, 5, 3, false, &b, &t), err);
    CHECK(t);
    CHECK_EQ_INT(b.len, 1);
    CHECK_EQ_INT(b.data[0], 'b');
    floe_buf_reset(&b);
    const uint8_t ff[] = {0xFF, 0xFF, 0xFF, 0x01};
    CHECK_EQ_INT(floe_pq_truncate_upper(ff, 4, 2, false, &b, &t), FLOE_ENOTFOUND);
    CHECK_EQ_INT(b.len, 0);
    /* short values are not truncated */
    CHECK_OK(floe_pq_truncate_upper(v, 2, 16, false, &b, &t), err);
    CHECK(!t);
    CHECK_EQ_INT(b.len, 2);
    floe_buf_reset(&b);
    const uint8_t mid[] = {'a', 'b', 0x7F, 'c'};
    CHECK_OK(floe_pq_truncate_upper(mid, 4, 3, false, &b, &t), err);
    CHECK_EQ_INT(b.len, 3);
    CHECK_EQ_INT(b.data[2], 0x80);
    floe_buf_free(&b);
}

TEST(test_truncate_utf8) {
    floe_buf b;
    floe_buf_init(&b, 0);
    bool t;
    /* "aé€x": a(1) é(2) €(3) x(1); cut at 5 bytes falls inside € */
    const char *s = "a\xC3\xA9\xE2\x82\xAC" "x";
    CHECK_OK(floe_pq_truncate_lower((const uint8_t *)s, 7, 5, true, &b, &t), err);
    CHECK(t);
    CHECK_EQ_INT(b.len, 3); /* "aé" */
    floe_buf_reset(&b);
    CHECK_OK(floe_pq_truncate_upper((const uint8_t *)s, 7, 5, true, &b, &t), err);
    CHECK(t);
    /* "a" + (é + 1 = ê, C3 AA) */
    CHECK_EQ_INT(b.len, 3);
    CHECK(b.data[0] == 'a' && b.data[1] == 0xC3 && b.data[2] == 0xAA);
    floe_buf_reset(&b);
    /* last char U+10FFFF cannot grow: the one before it is incremented */
    const char *m = "ab\xF4\x8F\xBF\xBF" "cd";
    CHECK_OK(floe_pq_truncate_upper((const uint8_t *)m, 8, 6, true, &b, &t), err);
    CHECK_EQ_INT(b.len, 2);
    CHECK(b.data[0] == 'a' && b.data[1] == 'c');
    floe_buf_reset(&b);
    /* U+D7FF + 1 skips the surrogates to U+E000 */
    const char *d = "\xED\x9F\xBF" "zz";
    CHECK_OK(floe_pq_truncate_upper((const uint8_t *)d, 5, 3, true, &b, &t), err);
    CHECK_EQ_INT(b.len, 3);
    CHECK(b.data[0] == 0xEE && b.data[1] == 0x80 && b.data[2] == 0x80);
    floe_buf_free(&b);
}

/* ---- statistics ----------------------------------------------------------------------- */

TEST(test_float_stats_nan_and_zero) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
        "{\"id\":2,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
        "{\"id\":3,\"name\":\"nan_only\",\"required\":false,\"type\":\"double\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    double dv[] = {NAN, -0.0, 0.0, 2.5, NAN, -7.25};
    for (int i = 0; i < 6; i++) {
        REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, &dv[i], 8) == 0);
        float fv = i == 3 ? 0.0f : (float)(i + 1);
        REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, &fv, 4) == 0);
        if (i == 5)
            REQUIRE(floe_colbuf_push_null(&b.cols[2], 0, 0) == 0);
        else
            REQUIRE(floe_colbuf_push_value(&b.cols[2], 0, &dv[0], 8) == 0);
    }
    b.nrows = 6;
    floe_pq_write_options o = plain_opts();
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("floats.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);

    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    const floe_pq_column_chunk *c0 = &f.md.row_groups[0].columns[0];
    const floe_pq_statistics *st = &c0->meta_data.statistics;
    REQUIRE(st->has_min_value && st->has_max_value);
    CHECK(dbl_of(st->min_value) == -7.25);
    CHECK(dbl_of(st->max_value) == 2.5);
    CHECK(st->has_nan_count && st->nan_count == 2);
    CHECK(st->has_null_count && st->null_count == 0);
    CHECK(st->has_min && st->has_max); /* signed order: deprecated fields too */
    CHECK(c0->has_column_index);

    /* zero handling: f = {1,2,3,0,5,6}: the zero minimum is written as -0.0 */
    const floe_pq_statistics *sf = &f.md.row_groups[0].columns[1].meta_data.statistics;
    float fmin, fmax;
    memcpy(&fmin, sf->min_value.p, 4);
    memcpy(&fmax, sf->max_value.p, 4);
    CHECK(fmin == 0.0f && signbit(fmin)); /* zero minimum written as -0.0 */
    CHECK(fmax == 6.0f);

    /* all-NaN column: no bounds, nan_count set, no ColumnIndex (parquet.thrift) */
    const floe_pq_column_chunk *c2 = &f.md.row_groups[0].columns[2];
    CHECK(!c2->meta_data.statistics.has_min_value);
    CHECK(!c2->meta_data.statistics.has_max_value);
    CHECK_EQ_INT(c2->meta_data.statistics.nan_count, 5);
    CHECK_EQ_INT(c2->meta_data.statistics.null_count, 1);
    CHECK(!c2->has_column_index);
    CHECK(c2->has_offset_index);

    /* file info */
    CHECK_EQ_INT(fi.record_count, 6);
    CHECK_EQ_INT(fi.ncolumns, 3);
    CHECK(fi.columns[0].has_nan_count && fi.columns[0].nan_value_count == 2);
    CHECK(fi.columns[0].has_bounds);
    double lo, hi;
    memcpy(&lo, fi.columns[0].lower_bound, 8);
    memcpy(&hi, fi.columns[0].upper_bound, 8);
    CHECK(lo == -7.25 && hi == 2.5);
    CHECK(!fi.columns[2].has_bounds);
    CHECK_EQ_INT(fi.columns[2].null_value_count, 1);
    CHECK_EQ_INT(fi.file_size_in_bytes, (int64_t)f.len);
    floe_pq_file_info_free(&fi);
    pq_free(&f);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_zero_bounds) {
    /* only zeros: min must be -0.0 and max +0.0 whatever their signs in the data */
    floe_schema *s = harness_schema_of("{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                               "{\"id\":1,\"name\":\"d\",\"required\":true,\"type\":\"double\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    double z[] = {0.0, -0.0, 0.0};
    for (int i = 0; i < 3; i++)
        REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, &z[i], 8) == 0);
    b.nrows = 3;
    floe_pq_write_options o = plain_opts();
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("zeros.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    const floe_pq_statistics *st = &f.md.row_groups[0].columns[0].meta_data.statistics;
    CHECK(dbl_of(st->min_value) == 0.0 && signbit(dbl_of(st->min_value)));
    CHECK(dbl_of(st->max_value) == 0.0 && !signbit(dbl_of(st->max_value)));
    pq_free(&f);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_orderings) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"i\",\"required\":true,\"type\":\"int\"},"
        "{\"id\":2,\"name\":\"s\",\"required\":true,\"type\":\"string\"},"
        "{\"id\":3,\"name\":\"dec\",\"required\":true,\"type\":\"decimal(30, 2)\"},"
        "{\"id\":4,\"name\":\"long_s\",\"required\":true,\"type\":\"string\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    int32_t iv[] = {5, -3, 100, -2000000000};
    const char *sv[] = {"z", "\xC3\xA9t\xC3\xA9", "a", "Z"};
    int width = b.cols[2].width;
    REQUIRE(width > 1);
    for (int i = 0; i < 4; i++) {
        REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, &iv[i], 4) == 0);
        REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, sv[i], strlen(sv[i])) == 0);
        uint8_t dec[32];
        /* i=1: -1 (all 0xFF), i=0: +1, i=2: +0x7F..., i=3: large negative 0x80 00.. */
        memset(dec, i == 1 ? 0xFF : 0, (size_t)width);
        if (i == 0)
            dec[width - 1] = 1;
        if (i == 2) {
            dec[0] = 0x7F;
        }
        if (i == 3)
            dec[0] = 0x80;
        REQUIRE(floe_colbuf_push_value(&b.cols[2], 0, dec, (size_t)width) == 0);
        char longv[200];
        memset(longv, 'm', sizeof longv);
        longv[0] = (char)('a' + i);
        REQUIRE(floe_colbuf_push_value(&b.cols[3], 0, longv, sizeof longv) == 0);
    }
    b.nrows = 4;
    floe_pq_write_options o = plain_opts();
    o.stats_truncate_length = 16;
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("orders.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    const floe_pq_row_group *rg = &f.md.row_groups[0];
    int32_t mn, mx;
    memcpy(&mn, rg->columns[0].meta_data.statistics.min_value.p, 4);
    memcpy(&mx, rg->columns[0].meta_data.statistics.max_value.p, 4);
    CHECK_EQ_INT(mn, -2000000000);
    CHECK_EQ_INT(mx, 100);
    /* strings: unsigned byte order, so "été" (0xC3...) is the max; no deprecated fields */
    const floe_pq_statistics *ss = &rg->columns[1].meta_data.statistics;
    CHECK(ss->min_value.n == 1 && ss->min_value.p[0] == 'Z');
    CHECK(ss->max_value.n == 5 && ss->max_value.p[0] == 0xC3);
    CHECK(!ss->has_min && !ss->has_max);
    /* decimal FLBA: signed, so 0x80.. is the min and 0x7F.. the max */
    const floe_pq_statistics *ds = &rg->columns[2].meta_data.statistics;
    CHECK_EQ_INT(ds->min_value.p[0], 0x80);
    CHECK_EQ_INT(ds->max_value.p[0], 0x7F);
    /* long strings truncated to 16 bytes, exactness flags set */
    const floe_pq_statistics *ls = &rg->columns[3].meta_data.statistics;
    CHECK_EQ_INT(ls->min_value.n, 16);
    CHECK_EQ_INT(ls->max_value.n, 16);
    CHECK(ls->has_is_min_value_exact && !ls->is_min_value_exact);
    CHECK(ls->has_is_max_value_exact && !ls->is_max_value_exact);
    CHECK_EQ_INT(ls->min_value.p[0], 'a');
    CHECK_EQ_INT(ls->max_value.p[0], 'd');
    CHECK_EQ_INT(ls->max_value.p[15], 'n'); /* 'm' + 1 */
    /* the file info keeps the exact values (the table's metrics mode truncates them) */
    CHECK(!fi.columns[3].lower_truncated && !fi.columns[3].upper_truncated);
    CHECK_EQ_INT(fi.columns[3].lower_len, 200);
    CHECK_EQ_INT(fi.columns[3].upper_len, 200);
    CHECK(fi.columns[3].lower_bound[0] == 'a' && fi.columns[3].lower_bound[199] == 'm');
    CHECK(fi.columns[3].upper_bound[0] == 'd' && fi.columns[3].upper_bound[199] == 'm');
    CHECK(!fi.columns[0].lower_truncated);
    /* column orders and schema annotations */
    CHECK_EQ_INT(f.md.n_column_orders, 4);
    CHECK_EQ_INT(f.md.column_orders[0], FLOE_PQ_ORDER_TYPE_DEFINED);
    CHECK_EQ_INT(f.md.schema[2].logical_type.kind, FLOE_PQ_LT_STRING);
    CHECK_EQ_INT(f.md.schema[2].converted_type, FLOE_PQ_CT_UTF8);
    CHECK_EQ_INT(f.md.schema[3].type, FLOE_PQ_FIXED_LEN_BYTE_ARRAY);
    CHECK_EQ_INT(f.md.schema[3].logical_type.kind, FLOE_PQ_LT_DECIMAL);
    CHECK_EQ_INT(f.md.schema[3].precision, 30);
    CHECK_EQ_INT(f.md.schema[3].field_id, 3);
    floe_pq_file_info_free(&fi);
    pq_free(&f);
    floe_batch_free(&b);
    floe_schema_free(s);
}

/* ---- encodings ------------------------------------------------------------------------ */

static bool has_encoding(const floe_pq_column_metadata *m, int enc) {
    for (size_t i = 0; i < m->n_encodings; i++)
        if (m->encodings[i] == enc)
            return true;
    return false;
}

TEST(test_dictionary_fallback_and_delta) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"low\",\"required\":true,\"type\":\"string\"},"
        "{\"id\":2,\"name\":\"uniq\",\"required\":true,\"type\":\"string\"},"
        "{\"id\":3,\"name\":\"ts\",\"required\":true,\"type\":\"timestamptz\"},"
        "{\"id\":4,\"name\":\"b\",\"required\":true,\"type\":\"boolean\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    const int n = 50000;
    for (int i = 0; i < n; i++) {
        const char *lv = (i % 3) == 0 ? "alpha" : (i % 3) == 1 ? "beta" : "gamma";
        REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, lv, strlen(lv)) == 0);
        char u[64];
        int ul = snprintf(u, sizeof u, "unique-value-%08d-with-some-padding", i * 7919 % n);
        REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, u, (size_t)ul) == 0);
        int64_t ts = 1700000000000000LL + (int64_t)i * 1000003;
        REQUIRE(floe_colbuf_push_value(&b.cols[2], 0, &ts, 8) == 0);
        uint8_t bv = (uint8_t)(i & 1);
        REQUIRE(floe_colbuf_push_value(&b.cols[3], 0, &bv, 1) == 0);
    }
    b.nrows = (size_t)n;
    floe_pq_write_options o = plain_opts();
    o.dict_page_size_limit = 64 * 1024;
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("dict.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    REQUIRE(f.md.n_row_groups == 1);
    const floe_pq_column_metadata *low = &f.md.row_groups[0].columns[0].meta_data;
    CHECK(low->has_dictionary_page_offset);
    CHECK(has_encoding(low, FLOE_PQ_ENC_RLE_DICTIONARY));
    CHECK(!has_encoding(low, FLOE_PQ_ENC_DELTA_BINARY_PACKED));
    CHECK_EQ_INT(low->num_values, n);
    /* unique strings: the 64 KiB dictionary overflows within the first page, so the chunk
     * has one dictionary-encoded page and PLAIN for the rest, or no dictionary at all when
     * the first page shows it does not pay */
    const floe_pq_column_metadata *uq = &f.md.row_groups[0].columns[1].meta_data;
    CHECK(has_encoding(uq, FLOE_PQ_ENC_PLAIN));
    int64_t plain_pages = 0, dict_pages = 0;
    for (size_t i = 0; i < uq->n_encoding_stats; i++) {
        if (uq->encoding_stats[i].encoding == FLOE_PQ_ENC_PLAIN &&
            uq->encoding_stats[i].page_type == FLOE_PQ_DATA_PAGE)
            plain_pages += uq->encoding_stats[i].count;
        if (uq->encoding_stats[i].encoding == FLOE_PQ_ENC_RLE_DICTIONARY)
            dict_pages += uq->encoding_stats[i].count;
    }
    CHECK(plain_pages >= 1);
    CHECK(dict_pages <= 1);
    CHECK(uq->has_dictionary_page_offset == (dict_pages == 1));
    /* sorted unique timestamps: dictionary abandoned, DELTA_BINARY_PACKED wins */
    const floe_pq_column_metadata *ts = &f.md.row_groups[0].columns[2].meta_data;
    CHECK(!ts->has_dictionary_page_offset);
    CHECK(has_encoding(ts, FLOE_PQ_ENC_DELTA_BINARY_PACKED));
    CHECK(ts->total_compressed_size < (int64_t)n * 8 / 2);
    const floe_pq_column_metadata *bm = &f.md.row_groups[0].columns[3].meta_data;
    CHECK(has_encoding(bm, FLOE_PQ_ENC_PLAIN));
    CHECK(!bm->has_dictionary_page_offset);
    CHECK(bm->total_uncompressed_size < n); /* bit-packed, not a byte per value */
    /* schema annotations */
    CHECK_EQ_INT(f.md.schema[3].logical_type.kind, FLOE_PQ_LT_TIMESTAMP);
    CHECK(f.md.schema[3].logical_type.is_adjusted_to_utc);
    CHECK_EQ_INT(f.md.schema[3].converted_type, FLOE_PQ_CT_TIMESTAMP_MICROS);
    pq_free(&f);
    floe_batch_free(&b);
    floe_schema_free(s);
}

/* ---- pages and row groups ------------------------------------------------------------- */

/* rows: list<int> of i % 5 elements (0 = empty list), every 7th row null */
static void fill_lists(floe_batch *b, int first, int nrows) {
    for (int r = first; r < first + nrows; r++) {
        floe_colbuf *c = &b->cols[0];
        if (r % 7 == 6) {
            floe_colbuf_push_null(c, 0, 0);
        } else if (r % 5 == 0) {
            floe_colbuf_push_null(c, 1, 0);
        } else {
            for (int k = 0; k < r % 5; k++) {
                int32_t v = r * 10 + k;
                if (k == 2)
                    floe_colbuf_push_null(c, 2, 1);
                else
                    floe_colbuf_push_value(c, k == 0 ? 0 : 1, &v, 4);
            }
        }
        int64_t id = r;
        floe_colbuf_push_value(&b->cols[1], 0, &id, 8);
    }
    b->nrows += (size_t)nrows;
}

static int64_t slots_before_row(int64_t row) {
    int64_t s = 0;
    for (int64_t r = 0; r < row; r++)
        s += (r % 7 == 6 || r % 5 == 0) ? 1 : r % 5;
    return s;
}

TEST(test_page_cutting_row_boundaries) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":3,\"element-required\":false,\"element\":\"int\"}},"
        "{\"id\":2,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    CHECK_EQ_INT(b.cols[0].max_def, 3);
    CHECK_EQ_INT(b.cols[0].max_rep, 1);
    const int nrows = 30000;
    fill_lists(&b, 0, nrows);
    floe_pq_write_options o = plain_opts();
    o.page_size = 2000;      /* many pages */
    o.page_row_limit = 1000;
    o.dictionary = false;
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("pages.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    const floe_pq_column_chunk *cc = &f.md.row_groups[0].columns[0];
    REQUIRE(cc->has_offset_index);
    floe_pq_offset_index oi;
    REQUIRE_OK(floe_pq_offset_index_decode(f.data + cc->offset_index_offset,
                                           (size_t)cc->offset_index_length, 0, &f.arena, &oi,
                                           &err),
               err);
    CHECK(oi.n_pages > 5);
    int64_t slots = 0;
    for (size_t i = 0; i < oi.n_pages; i++) {
        const floe_pq_page_location *pl = &oi.page_locations[i];
        if (i > 0)
            CHECK(pl->first_row_index > oi.page_locations[i - 1].first_row_index);
        CHECK(pl->first_row_index - (i ? oi.page_locations[i - 1].first_row_index : 0) <= 1000);
        /* the slots before this page are exactly the slots of the rows before it */
        CHECK_EQ_INT(slots, slots_before_row(pl->first_row_index));
        floe_pq_page_header ph;
        size_t used;
        REQUIRE_OK(floe_pq_page_header_decode(f.data + pl->offset, f.len - (size_t)pl->offset,
                                              pl->offset, &ph, &used, &err),
                   err);
        CHECK_EQ_INT((int64_t)used + ph.compressed_page_size, pl->compressed_page_size);
        CHECK(ph.has_crc);
        CHECK_EQ_INT((uint32_t)ph.crc,
                     floe_crc32(0, f.data + pl->offset + used, (size_t)ph.compressed_page_size));
        slots += ph.data_page_header.num_values;
    }
    CHECK_EQ_INT(slots, cc->meta_data.num_values);
    CHECK_EQ_INT(slots, slots_before_row(nrows));
    /* column index: one entry per page, null counts add up */
    floe_pq_column_index ci;
    REQUIRE(cc->has_column_index);
    REQUIRE_OK(floe_pq_column_index_decode(f.data + cc->column_index_offset,
                                           (size_t)cc->column_index_length, 0, &f.arena, &ci,
                                           &err),
               err);
    CHECK_EQ_INT(ci.n_pages, oi.n_pages);
    int64_t nulls = 0;
    for (size_t i = 0; i < ci.n_pages; i++)
        nulls += ci.null_counts[i];
    CHECK_EQ_INT(nulls, cc->meta_data.statistics.null_count);
    CHECK_EQ_INT(nulls, fi.columns[0].null_value_count);
    CHECK_EQ_INT(fi.columns[0].value_count, slots);
    CHECK(fi.columns[0].repeated);
    /* ids column is sorted: ascending boundary order */
    const floe_pq_column_chunk *idc = &f.md.row_groups[0].columns[1];
    floe_pq_column_index ci2;
    REQUIRE_OK(floe_pq_column_index_decode(f.data + idc->column_index_offset,
                                           (size_t)idc->column_index_length, 0, &f.arena, &ci2,
                                           &err),
               err);
    CHECK_EQ_INT(ci2.boundary_order, FLOE_PQ_ASCENDING);
    /* page index sits between the last chunk and the footer */
    CHECK(cc->column_index_offset > idc->meta_data.data_page_offset);
    CHECK(cc->offset_index_offset > cc->column_index_offset);
    /* schema: 3-level list with ids */
    CHECK_EQ_STR(f.md.schema[1].name, "l");
    CHECK_EQ_INT(f.md.schema[1].converted_type, FLOE_PQ_CT_LIST);
    CHECK_EQ_STR(f.md.schema[2].name, "list");
    CHECK_EQ_INT(f.md.schema[2].repetition_type, FLOE_PQ_REPEATED);
    CHECK(!f.md.schema[2].has_field_id);
    CHECK_EQ_STR(f.md.schema[3].name, "element");
    CHECK_EQ_INT(f.md.schema[3].field_id, 3);
    CHECK_EQ_INT(cc->meta_data.n_path, 3);
    CHECK_EQ_STR(cc->meta_data.path_in_schema[1], "list");
    floe_pq_file_info_free(&fi);
    pq_free(&f);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_row_groups_rolling_and_determinism) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":3,\"element-required\":false,\"element\":\"int\"}},"
        "{\"id\":2,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.dictionary = false; /* plain values: sizes we can predict */
    o.delta_ints = false;
    o.row_group_size = 64 * 1024;
    o.target_file_size = 200 * 1024;
    const char *paths[2] = {tmp_path("rg1.parquet"), tmp_path("rg2.parquet")};
    floe_pq_file_info fi[2];
    for (int run = 0; run < 2; run++) {
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, paths[run], s, &o, &w, &err), err);
        bool rolled = false;
        for (int k = 0; k < 40; k++) {
            floe_batch_clear(&b);
            fill_lists(&b, k * 1000, 1000);
            REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
            if (floe_pq_writer_should_roll(w))
                rolled = true;
        }
        CHECK(rolled);
        if (!rolled)
            fprintf(stderr, "bytes_written %lld\n", (long long)floe_pq_writer_bytes_written(w));
        CHECK_EQ_INT(floe_pq_writer_rows(w), 40000);
        REQUIRE_OK(floe_pq_writer_close(w, &fi[run], &err), err);
    }
    size_t n1, n2;
    char *d1 = harness_read_file(paths[0], &n1);
    char *d2 = harness_read_file(paths[1], &n2);
    REQUIRE(d1 && d2);
    CHECK_EQ_INT(n1, n2);
    CHECK(n1 == n2 && memcmp(d1, d2, n1) == 0);
    free(d1);
    free(d2);
    pq_file f;
    REQUIRE_OK(pq_load(paths[0], &f), err);
    CHECK(f.md.n_row_groups > 2);
    CHECK_EQ_INT(fi[0].nsplits, f.md.n_row_groups);
    CHECK_EQ_INT(fi[0].record_count, 40000);
    CHECK_EQ_INT(f.md.num_rows, 40000);
    int64_t rows = 0, csize = 0;
    for (size_t g = 0; g < f.md.n_row_groups; g++) {
        rows += f.md.row_groups[g].num_rows;
        CHECK_EQ_INT(fi[0].split_offsets[g], f.md.row_groups[g].file_offset);
        CHECK_EQ_INT(f.md.row_groups[g].ordinal, (int)g);
        csize += f.md.row_groups[g].columns[1].meta_data.total_compressed_size;
        int64_t first = f.md.row_groups[g].columns[0].meta_data.has_dictionary_page_offset
                            ? f.md.row_groups[g].columns[0].meta_data.dictionary_page_offset
                            : f.md.row_groups[g].columns[0].meta_data.data_page_offset;
        CHECK_EQ_INT(first, f.md.row_groups[g].file_offset);
    }
    CHECK_EQ_INT(rows, 40000);
    CHECK_EQ_INT(fi[0].columns[1].column_size, csize);
    CHECK_EQ_INT(fi[0].columns[1].value_count, 40000);
    int64_t lo, hi;
    memcpy(&lo, fi[0].columns[1].lower_bound, 8);
    memcpy(&hi, fi[0].columns[1].upper_bound, 8);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 39999);
    CHECK(strstr(f.md.created_by, "floe version") == f.md.created_by);
    pq_free(&f);
    floe_pq_file_info_free(&fi[0]);
    floe_pq_file_info_free(&fi[1]);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_bad_batches_and_abort) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
        "{\"id\":2,\"name\":\"b\",\"required\":true,\"type\":\"int\"}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    int32_t v = 1;
    floe_colbuf_push_value(&b.cols[0], 0, &v, 4);
    floe_colbuf_push_value(&b.cols[0], 0, &v, 4);
    floe_colbuf_push_value(&b.cols[1], 0, &v, 4); /* one row short */
    b.nrows = 2;
    floe_pq_write_options o = plain_opts();
    floe_pq_writer *w = NULL;
    const char *path = tmp_path("bad.parquet");
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    CHECK_EQ_INT(floe_pq_writer_write_batch(w, &b, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "rows") != NULL);
    /* a failed writer refuses more work; close discards */
    CHECK(floe_pq_writer_close(w, NULL, &err) < 0);
    FILE *fp = fopen(path, "rb");
    CHECK(fp == NULL);
    if (fp)
        fclose(fp);
    /* abort leaves nothing either */
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    floe_pq_writer_abort(w);
    fp = fopen(path, "rb");
    CHECK(fp == NULL);
    if (fp)
        fclose(fp);
    /* an out-of-range definition level is rejected */
    floe_batch_clear(&b);
    floe_colbuf_push_null(&b.cols[0], 5, 0);
    floe_colbuf_push_value(&b.cols[1], 0, &v, 4);
    b.nrows = 1;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    CHECK_EQ_INT(floe_pq_writer_write_batch(w, &b, &err), FLOE_EINVALID);
    floe_pq_writer_abort(w);
    /* an empty file is valid */
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
    CHECK_EQ_INT(fi.record_count, 0);
    CHECK_EQ_INT(fi.nsplits, 0);
    pq_file f;
    REQUIRE_OK(pq_load(path, &f), err);
    CHECK_EQ_INT(f.md.n_row_groups, 0);
    CHECK_EQ_INT(f.md.n_schema, 3);
    pq_free(&f);
    floe_pq_file_info_free(&fi);
    floe_batch_free(&b);
    floe_schema_free(s);
}

/* ---- write-behind --------------------------------------------------------------------- */

/* A schema of 12 columns (so a flush hands over 12-24 buffers, past the ring's first
 * capacity of 16) and batch k of it: strings that do not compress, longs, a list. */
static floe_schema *wb_schema(void) {
    char json[4096];
    size_t n = (size_t)snprintf(json, sizeof json, "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[");
    for (int i = 0; i < 10; i++)
        n += (size_t)snprintf(json + n, sizeof json - n,
                              "{\"id\":%d,\"name\":\"c%d\",\"required\":false,\"type\":\"%s\"},",
                              i + 1, i, i % 2 ? "long" : "string");
    snprintf(json + n, sizeof json - n,
             "{\"id\":11,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
             "\"element-id\":13,\"element-required\":false,\"element\":\"int\"}},"
             "{\"id\":12,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}");
    return harness_schema_of(json);
}

static void wb_fill(floe_batch *b, int k) {
    floe_batch_clear(b);
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15u + 1;
    for (int r = 0; r < 500; r++) {
        for (size_t c = 0; c < 10; c++) {
            harness_xorshift64(&x);
            if (x % 11 == 0) {
                floe_colbuf_push_null(&b->cols[c], 0, 0);
            } else if (c % 2 == 0) {
                char str[64];
                for (size_t i = 0; i < sizeof str; i++)
                    str[i] = (char)('a' + (x >> (i % 58)) % 26);
                floe_colbuf_push_value(&b->cols[c], 0, str, 16 + x % 48);
            } else {
                int64_t v = (int64_t)x;
                floe_colbuf_push_value(&b->cols[c], 0, &v, 8);
            }
        }
        int32_t e = r;
        floe_colbuf_push_value(&b->cols[10], 0, &e, 4);
        floe_colbuf_push_value(&b->cols[10], 1, &e, 4);
        int64_t id = (int64_t)k * 500 + r;
        floe_colbuf_push_value(&b->cols[11], 0, &id, 8);
    }
    b->nrows = 500;
}

/* Written behind, through a plain or a direct output: the same file as written inline,
 * across many row groups (two of them larger than a direct block). */
TEST(test_write_behind_same_bytes) {
    floe_schema *s = wb_schema();
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    const char *paths[3] = {tmp_path("inline.parquet"), tmp_path("behind.parquet"),
                            tmp_path("behind-direct.parquet")};
    for (int run = 0; run < 3; run++) {
        floe_pq_write_options o = plain_opts();
        o.row_group_size = 200 * 1024;
        o.write_behind = run > 0;
        o.output.direct = run == 2;
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, paths[run], s, &o, &w, &err), err);
        for (int k = 0; k < 160; k++) {
            wb_fill(&b, k);
            REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
            if (k == 100) /* an explicit flush, then a big row group */
                REQUIRE_OK(floe_pq_writer_flush(w, &err), err);
        }
        floe_pq_file_info fi;
        REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
        CHECK_EQ_INT(fi.record_count, 160 * 500);
        CHECK(fi.nsplits > 20);
        floe_pq_file_info_free(&fi);
    }
    size_t n0, n;
    char *d0 = harness_read_file(paths[0], &n0);
    REQUIRE(d0 != NULL);
    CHECK(n0 > ((size_t)10 << 20)); /* more than a direct block */
    for (int run = 1; run < 3; run++) {
        char *d = harness_read_file(paths[run], &n);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(n, n0);
        CHECK(n == n0 && memcmp(d, d0, n) == 0);
        free(d);
    }
    free(d0);
    floe_batch_free(&b);
    floe_schema_free(s);
}

/* A write that fails behind the writer's back is returned by a later call before close
 * (the writer does not keep accepting rows for a file that cannot be written), and
 * nothing is left at the path. */
TEST(test_write_behind_error) {
    floe_schema *s = wb_schema();
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    for (int direct = 0; direct < 2; direct++) {
        floe_pq_write_options o = plain_opts();
        o.row_group_size = 200 * 1024;
        o.write_behind = true;
        o.output.direct = direct;
        const char *path = tmp_path(direct ? "fail-direct.parquet" : "fail.parquet");
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        floe_io_fault_inject(NULL, FLOE_IO_FAULT_WRITE, 1, ENOSPC);
        int rc = 0, k;
        for (k = 0; k < 400 && rc == 0; k++) {
            wb_fill(&b, k);
            rc = floe_pq_writer_write_batch(w, &b, &err);
        }
        CHECK_EQ_INT(rc, FLOE_ENOSPACE);
        CHECK(strstr(err.msg, direct ? "fail-direct.parquet" : "fail.parquet") != NULL);
        CHECK(k < 400);
        /* the writer stays failed; close discards */
        CHECK(floe_pq_writer_write_batch(w, &b, &err) < 0);
        CHECK(floe_pq_writer_close(w, NULL, &err) < 0);
        floe_io_fault_clear(NULL);
        FILE *fp = fopen(path, "rb");
        CHECK(fp == NULL);
        if (fp)
            fclose(fp);
    }
    /* abort with buffers still queued: they are dropped, nothing is left */
    floe_pq_write_options o = plain_opts();
    o.row_group_size = 64 * 1024;
    o.write_behind = true;
    const char *path = tmp_path("aborted.parquet");
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    for (int k = 0; k < 20; k++) {
        wb_fill(&b, k);
        REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    }
    floe_pq_writer_abort(w);
    FILE *fp = fopen(path, "rb");
    CHECK(fp == NULL);
    if (fp)
        fclose(fp);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_alloc_failures_clean) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":2,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":3,"
        "\"key\":\"string\",\"value-id\":4,\"value-required\":false,\"value\":\"long\"}}]}");
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    for (int i = 0; i < 100; i++) {
        char k[16];
        int kl = snprintf(k, sizeof k, "k%d", i % 4);
        floe_colbuf_push_value(&b.cols[0], 0, k, (size_t)kl);
        floe_colbuf_push_value(&b.cols[1], 0, k, (size_t)kl);
        int64_t v = i;
        floe_colbuf_push_value(&b.cols[2], 0, &v, 8);
    }
    b.nrows = 100;
    const char *path = tmp_path("oom.parquet");
    floe_pq_write_options o = plain_opts();
    for (int behind = 0; behind < 2; behind++) {
        o.write_behind = behind; /* the writer thread's start-up and hand-overs fail too */
        int ok_runs = 0;
        for (uint64_t nth = 1; nth < 400; nth++) {
            floe_pq_writer *w = NULL;
            floe_alloc_fail_after(nth);
            int rc = floe_pq_writer_open(NULL, path, s, &o, &w, &err);
            if (rc == 0)
                rc = floe_pq_writer_write_batch(w, &b, &err);
            if (w) {
                int crc = floe_pq_writer_close(w, NULL, &err);
                if (rc == 0)
                    rc = crc;
            }
            floe_alloc_fail_after(0);
            if (rc == 0)
                ok_runs++;
            else
                CHECK(rc < 0);
        }
        CHECK(ok_runs > 0); /* the later runs get far enough to succeed */
    }
    floe_batch_free(&b);
    floe_schema_free(s);
}

/* Threads of this process other than the caller with scheduling policy `policy` and
 * real-time priority `prio` (/proc/self/task/TID/stat, fields 40 and 41). -1 without
 * /proc. */
static int threads_with_priority(int policy, int prio) {
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    long self = (long)gettid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atol(e->d_name) == self)
            continue;
        char path[300], line[2048];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = 0;
        char *p = strrchr(line, ')'); /* after the name: field 3 (state) on */
        if (!p)
            continue;
        int field = 2, rt = -1, pol = -1;
        for (char *t = strtok(p + 1, " \n"); t; t = strtok(NULL, " \n")) {
            field++;
            if (field == 40)
                rt = atoi(t);
            else if (field == 41)
                pol = atoi(t);
        }
        n += rt == prio && pol == policy;
    }
    closedir(d);
    return n;
}

/* Under SCHED_FIFO the write-behind thread runs one priority above the thread starting it:
 * threads of one priority never preempt each other there, and encoding threads that never
 * block would keep it off the CPU until the end. Not checked where the process may not use
 * SCHED_FIFO (not root, no RLIMIT_RTPRIO) or has no /proc. */
TEST(test_write_behind_rt_priority) {
    int policy;
    struct sched_param old_sp, sp = {.sched_priority = 1};
    REQUIRE(pthread_getschedparam(pthread_self(), &policy, &old_sp) == 0);
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
        printf("# test_write_behind_rt_priority: SCHED_FIFO not allowed here, not checked\n");
        return;
    }
    floe_schema *s = wb_schema();
    REQUIRE(s != NULL);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    floe_pq_write_options o = plain_opts();
    o.row_group_size = 64 * 1024;
    o.write_behind = true; /* a plain output: no AIO threads */
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, tmp_path("rt.parquet"), s, &o, &w, &err), err);
    wb_fill(&b, 0);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    REQUIRE_OK(floe_pq_writer_end_row_group(w, &err), err);
    CHECK_EQ_INT(floe_pq_writer_row_groups(w), 1);
    int above = threads_with_priority(1 /* SCHED_FIFO */, 2);
    int same = threads_with_priority(1, 1);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    REQUIRE(pthread_setschedparam(pthread_self(), policy, &old_sp) == 0);
    if (above >= 0) {
        CHECK_EQ_INT(above, 1);
        CHECK_EQ_INT(same, 0);
    }
    floe_batch_free(&b);
    floe_schema_free(s);
}

int main(void) {
    RUN(test_truncate_binary);
    RUN(test_truncate_utf8);
    RUN(test_float_stats_nan_and_zero);
    RUN(test_zero_bounds);
    RUN(test_orderings);
    RUN(test_dictionary_fallback_and_delta);
    RUN(test_page_cutting_row_boundaries);
    RUN(test_row_groups_rolling_and_determinism);
    RUN(test_bad_batches_and_abort);
    RUN(test_write_behind_same_bytes);
    RUN(test_write_behind_error);
    RUN(test_write_behind_rt_priority);
    RUN(test_alloc_failures_clean);
    return harness_finish();
}
