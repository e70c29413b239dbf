/*
 * test_rewrite_zorder.c - `floe rewrite --strategy sort --sort-order "zorder(...)"`:
 *   - the z-value of a row, byte for byte, as Iceberg Spark builds it (8 order-preserving
 *     bytes per number, date and timestamp, var-length-contribution bytes per string,
 *     nulls as zeros, bits interleaved round-robin skipping exhausted columns, cut to
 *     max-output-size), and the order it gives negative/positive numbers and doubles;
 *   - the zorder(...) text: unknown and unsupported columns refused, identity partition
 *     columns left out, options refused without a zorder;
 *   - end to end, on (long, long), (date, timestamp) and (string, long) column pairs:
 *     the rows survive and the share of files a two-column point query reads (files
 *     whose lower and upper bounds hold both values) falls to under a third of what it
 *     was over the appended files (which, like bin-packed ones, each span the whole
 *     range); bench/zorder compares with bin-pack and a linear sort at scale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact/rewrite_internal.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"y\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":4,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":5,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":6,\"name\":\"f\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":7,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":8,\"name\":\"k\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":9,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"}]}";

static floe_schema *schema(void) {
    floe_schema *s = NULL;
    floe_error err;
    if (floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err) < 0)
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
    return s;
}

static rw_zorder *parse(const floe_schema *s, const char *text, int64_t var_len, int64_t max) {
    rw_zorder *z = NULL;
    floe_error err;
    if (rw_zorder_parse(text, s, NULL, var_len, max, &z, &err) < 0)
        harness_fail(__FILE__, __LINE__, "%s: %s", text, err.msg);
    return z;
}

/* one row: a long column value or a null */
static void push_long(floe_batch *b, int leaf, const int64_t *v) {
    if (v)
        CHECK(floe_colbuf_push_value(&b->cols[leaf], 0, v, 8) == 0);
    else
        CHECK(floe_colbuf_push_null(&b->cols[leaf], 0, 0) == 0);
}

static void fill_nulls(floe_batch *b, size_t rows) {
    for (size_t c = 0; c < b->ncols; c++)
        while (b->cols[c].nlevels < rows)
            CHECK(floe_colbuf_push_null(&b->cols[c], 0, 0) == 0);
    b->nrows = rows;
}

static uint8_t *zvals(const rw_zorder *z, const floe_batch *b) {
    uint8_t *v = calloc(b->nrows ? b->nrows : 1, z->out_len);
    floe_error err;
    if (rw_zorder_values(z, b, v, &err) < 0)
        harness_fail(__FILE__, __LINE__, "values: %s", err.msg);
    return v;
}

TEST(test_zorder_bytes_longs) {
    floe_schema *s = schema();
    rw_zorder *z = parse(s, "zorder(x, y)", 0, 0);
    REQUIRE(z && z->ncols == 2 && z->out_len == 16);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    int64_t one = 1, zero = 0, minus = -1, big = 1000;
    push_long(&b, 0, &one), push_long(&b, 1, &zero);    /* (1, 0) */
    push_long(&b, 0, NULL), push_long(&b, 1, &zero);    /* (null, 0) */
    push_long(&b, 0, &minus), push_long(&b, 1, &zero);  /* (-1, 0) */
    push_long(&b, 0, &zero), push_long(&b, 1, &zero);   /* (0, 0) */
    push_long(&b, 0, &big), push_long(&b, 1, &minus);   /* (1000, -1) */
    fill_nulls(&b, 5);
    uint8_t *v = zvals(z, &b);
    /* (1, 0): sign bits flipped (x 80..01, y 80..00); bit 7 of byte 0 of x, of y, bit 6
     * of x, ...: 0xC0 first, and x's last bit lands second to last */
    uint8_t want[16] = {0xC0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};
    CHECK(!memcmp(v, want, 16));
    /* a null is all zeros: only y's flipped sign bit is set */
    uint8_t want_null[16] = {0x40};
    CHECK(!memcmp(v + 16, want_null, 16));
    /* -1 < 0 < 1 with y equal; x = 1000, y = -1 lies between (x's sign bit is first) */
    CHECK(memcmp(v + 32, v + 48, 16) < 0);
    CHECK(memcmp(v + 48, v, 16) < 0);
    CHECK(memcmp(v + 32, v + 64, 16) < 0 && memcmp(v + 64, v + 48, 16) < 0);
    free(v);
    floe_batch_free(&b);
    rw_zorder_free(z);
    floe_schema_free(s);
}

TEST(test_zorder_bytes_doubles_dates_timestamps) {
    floe_schema *s = schema();
    rw_zorder *z = parse(s, "zorder(f)", 0, 0);
    REQUIRE(z && z->out_len == 8);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    const double ds[] = {-2.5, -0.5, 0.0, 0.5, 1.0, 3.0};
    for (size_t i = 0; i < 6; i++)
        CHECK(floe_colbuf_push_value(&b.cols[5], 0, &ds[i], 8) == 0);
    fill_nulls(&b, 6);
    uint8_t *v = zvals(z, &b);
    for (size_t i = 0; i + 1 < 6; i++)
        CHECK(memcmp(v + i * 8, v + (i + 1) * 8, 8) < 0);
    /* 1.0 is 3FF0000000000000: a positive double gets its sign bit set */
    uint8_t one[8] = {0xBF, 0xF0, 0, 0, 0, 0, 0, 0};
    CHECK(!memcmp(v + 32, one, 8));
    free(v);
    floe_batch_free(&b);
    rw_zorder_free(z);

    /* dates widen to 8 bytes (a day before the epoch sorts first), timestamps too */
    z = parse(s, "ZORDER ( d , ts )", 0, 0);
    REQUIRE(z && z->ncols == 2 && z->out_len == 16);
    REQUIRE(floe_batch_init(&b, s) == 0);
    const int32_t days[] = {-1, 0, 20000};
    const int64_t us[] = {0, 0, 0};
    for (size_t i = 0; i < 3; i++) {
        CHECK(floe_colbuf_push_value(&b.cols[2], 0, &days[i], 4) == 0);
        CHECK(floe_colbuf_push_value(&b.cols[3], 0, &us[i], 8) == 0);
    }
    fill_nulls(&b, 3);
    v = zvals(z, &b);
    CHECK(memcmp(v, v + 16, 16) < 0 && memcmp(v + 16, v + 32, 16) < 0);
    /* date -1: 7FFF...; timestamp 0: 8000...: interleaved 0x6A 0xAA ... */
    CHECK(v[0] == 0x6A && v[1] == 0xAA && v[15] == 0xAA);
    free(v);
    floe_batch_free(&b);
    rw_zorder_free(z);
    floe_schema_free(s);
}

TEST(test_zorder_bytes_strings_and_sizes) {
    floe_schema *s = schema();
    /* var-length-contribution 3: "abcdef" gives abc, "a" a\0\0 */
    rw_zorder *z = parse(s, "zorder(s)", 3, 0);
    REQUIRE(z && z->out_len == 3);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    CHECK(floe_colbuf_push_value(&b.cols[4], 0, "abcdef", 6) == 0);
    CHECK(floe_colbuf_push_value(&b.cols[4], 0, "a", 1) == 0);
    fill_nulls(&b, 2);
    uint8_t *v = zvals(z, &b);
    CHECK(!memcmp(v, "abc", 3) && !memcmp(v + 3, "a\0\0", 3));
    free(v);
    floe_batch_free(&b);
    rw_zorder_free(z);

    /* a 2-byte string beside an 8-byte long: bytes 0 and 1 interleave bit by bit, then
     * the long alone (the string is out of bytes) */
    REQUIRE(floe_batch_init(&b, s) == 0);
    int64_t x = 0x0102030405060708;
    CHECK(floe_colbuf_push_value(&b.cols[4], 0, "\xff\xff", 2) == 0);
    CHECK(floe_colbuf_push_value(&b.cols[0], 0, &x, 8) == 0);
    fill_nulls(&b, 1);
    z = parse(s, "zorder(s, x)", 2, 0);
    REQUIRE(z && z->out_len == 10);
    v = zvals(z, &b);
    uint8_t want[10] = {0xEA, 0xAB, 0xAA, 0xAE, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    CHECK(!memcmp(v, want, 10));
    free(v);
    rw_zorder_free(z);
    /* max-output-size cuts the value */
    z = parse(s, "zorder(s, x)", 2, 3);
    REQUIRE(z && z->out_len == 3);
    v = zvals(z, &b);
    CHECK(!memcmp(v, want, 3));
    free(v);
    rw_zorder_free(z);
    floe_batch_free(&b);
    floe_schema_free(s);
}

TEST(test_zorder_parse) {
    floe_schema *s = schema();
    floe_error err;
    rw_zorder *z = NULL;
    CHECK(rw_is_zorder(" zorder (a)") && rw_is_zorder("ZORDER(a, b)"));
    CHECK(!rw_is_zorder("zordered DESC") && !rw_is_zorder("x ASC"));
    CHECK(rw_zorder_parse("zorder(x, nope)", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(strstr(err.msg, "cannot find field 'nope'") != NULL);
    CHECK(rw_zorder_parse("zorder(b)", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(strstr(err.msg, "'b' (boolean) cannot be z-ordered") != NULL);
    CHECK(rw_zorder_parse("zorder(dec)", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(rw_zorder_parse("zorder(x, x)", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(rw_zorder_parse("zorder()", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(rw_zorder_parse("zorder(x) y", s, NULL, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(z == NULL);
    /* identity partition columns are left out; all of them is an error */
    floe_partition_spec *spec = NULL;
    REQUIRE_OK(floe_partition_spec_parse(s, "k, bucket(4, x)", 0, 1000, &spec, &err), err);
    REQUIRE_OK(rw_zorder_parse("zorder(k, x)", s, spec, 0, 0, &z, &err), err);
    CHECK(z->ncols == 1 && z->cols[0]->id == 1 && z->out_len == 8);
    rw_zorder_free(z);
    z = NULL;
    CHECK(rw_zorder_parse("zorder(k)", s, spec, 0, 0, &z, &err) == FLOE_EINVALID);
    CHECK(strstr(err.msg, "all columns provided were identity partition columns") != NULL);
    floe_partition_spec_free(spec);
    floe_schema_free(s);

    /* the options: bounds, and only with a zorder */
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    CHECK(floe_rewrite_option_set(&o, "var-length-contribution", "0", &err) == FLOE_EINVALID);
    CHECK(floe_rewrite_option_set(&o, "max-output-size", "0", &err) == FLOE_EINVALID);
    CHECK(floe_rewrite_option_set(&o, "sort-buffer-bytes", "0", &err) == FLOE_EINVALID);
    CHECK(floe_rewrite_option_set(&o, "var-length-contribution", "4", &err) == 0);
    CHECK(o.zorder_var_length_contribution == 4);
}

/* ---- end to end ------------------------------------------------------------------- */

typedef harness_table env;

/* A generated row: the values probed, as bounds serialize them. */
typedef struct row {
    int64_t x, y, ts;
    int32_t days;
    char s[4];
} row;

#define ROWS_PER_FILE 1500
#define FILES 8
static row rows[FILES * ROWS_PER_FILE];

static int32_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    int era = y / 400, yoe = y - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void fill(env *e) {
    uint64_t r = 12345;
    for (int f = 0; f < FILES; f++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        for (int i = 0; i < ROWS_PER_FILE; i++) {
            uint64_t v[6];
            for (int k = 0; k < 6; k++) {
                r = r * 6364136223846793005ULL + 1442695040888963407ULL;
                v[k] = r >> 33;
            }
            row *w = &rows[f * ROWS_PER_FILE + i];
            w->x = (int64_t)(v[0] % 100000) - 50000;
            w->y = (int64_t)(v[1] % 100000);
            int yy = 1990 + (int)(v[2] % 30), mm = 1 + (int)(v[2] / 30 % 12),
                dd = 1 + (int)(v[2] / 360 % 28);
            w->days = days_from_civil(yy, mm, dd);
            int h = (int)(v[3] % 24), mi = (int)(v[3] / 24 % 60), se = (int)(v[3] / 1440 % 60);
            w->ts = (1767225600LL + h * 3600 + mi * 60 + se) * 1000000;
            for (int k = 0, div = 1; k < 4; k++, div *= 26)
                w->s[k] = (char)('a' + (int)(v[4] / (uint64_t)div % 26));
            floe_buf_printf(&b,
                            "{\"x\":%lld,\"y\":%lld,\"d\":\"%04d-%02d-%02d\","
                            "\"ts\":\"2026-01-01T%02d:%02d:%02dZ\",\"s\":\"%.4s\","
                            "\"f\":%lld.25,\"b\":true,\"k\":\"const\"}\n",
                            (long long)w->x, (long long)w->y, yy, mm, dd, h, mi, se, w->s,
                            (long long)(v[5] % 1000));
        }
        harness_table_append_ndjson(e, f, &b);
        floe_buf_free(&b);
    }
}

/* Column id's value of w as its bound would serialize it into buf; its length. */
static size_t probe_value(const row *w, int32_t id, uint8_t *buf) {
    switch (id) {
    case 1: floe_store_le64(buf, (uint64_t)w->x); return 8;
    case 2: floe_store_le64(buf, (uint64_t)w->y); return 8;
    case 3: floe_store_le32(buf, (uint32_t)w->days); return 4;
    case 4: floe_store_le64(buf, (uint64_t)w->ts); return 8;
    default: memcpy(buf, w->s, 4); return 4;
    }
}

/* Compare the single-value serialization of a bound with a value of the same column:
 * little-endian integers (4 bytes for dates, 8 otherwise) or bytes. */
static int cmp_bound(floe_type_id t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    if (t == FLOE_TYPE_STRING) {
        size_t m = an < bn ? an : bn;
        int c = memcmp(a, b, m);
        return c ? c : (an > bn) - (an < bn);
    }
    int64_t x = 0, y = 0;
    if (t == FLOE_TYPE_DATE) {
        x = (int32_t)floe_load_le32(a);
        y = (int32_t)floe_load_le32(b);
    } else {
        x = (int64_t)floe_load_le64(a);
        y = (int64_t)floe_load_le64(b);
    }
    return (x > y) - (x < y);
}

static const floe_column_bound *bound(const floe_bound_map *m, int32_t id) {
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id)
            return &m->items[i];
    return NULL;
}

/* Mean number of files whose bounds of columns ida and idb hold both values of a row
 * (every 37th generated row). */
static double files_per_probe(floe_table *t, int32_t ida, int32_t idb, floe_type_id ta,
                              floe_type_id tb, int64_t *nfiles) {
    floe_scan_plan *p = NULL;
    floe_error err;
    floe_scan_options so = {.keep_metrics = true};
    if (floe_table_refresh(t, &err) < 0 || floe_scan_plan_files(t, &so, &p, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "plan: %s", err.msg);
        return 0;
    }
    *nfiles = (int64_t)p->ntasks;
    int64_t hits = 0, probes = 0;
    for (size_t q = 0; q < FILES * ROWS_PER_FILE; q += 37) {
        uint8_t va[8], vb[8];
        size_t na = probe_value(&rows[q], ida, va), nb = probe_value(&rows[q], idb, vb);
        probes++;
        for (size_t i = 0; i < p->ntasks; i++) {
            const floe_data_file *f = p->tasks[i].file;
            const floe_column_bound *la = bound(&f->lower_bounds, ida),
                                    *ua = bound(&f->upper_bounds, ida),
                                    *lb = bound(&f->lower_bounds, idb),
                                    *ub = bound(&f->upper_bounds, idb);
            REQUIRE(la && ua && lb && ub);
            hits += cmp_bound(ta, la->p, la->n, va, na) <= 0 &&
                    cmp_bound(ta, va, na, ua->p, ua->n) <= 0 &&
                    cmp_bound(tb, lb->p, lb->n, vb, nb) <= 0 &&
                    cmp_bound(tb, vb, nb, ub->p, ub->n) <= 0;
        }
    }
    floe_scan_plan_free(p);
    return (double)hits / (double)probes;
}

static void rewrite(env *e, const char *order) {
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.fsync = false;
    o.threads = 1;
    o.rewrite_all = true;
    o.target_file_size = 16 * 1024;
    if (order) {
        o.strategy = FLOE_RW_SORT;
        o.sort_order = order;
    }
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e->t, &o, &r, &err), err);
    CHECK(r.added_data_files_count >= 1);
}

static void zorder_end_to_end(const char *order, int32_t ida, int32_t idb, floe_type_id ta,
                              floe_type_id tb) {
    env e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, NULL, 0);
    fill(&e);
    int64_t n0 = 0, n1 = 0, f0 = 0, f1 = 0;
    char *before = harness_table_rows(e.t, &n0);
    /* appended (or bin-packed) files each hold rows from all over: a point query reads
     * nearly every file */
    double q0 = files_per_probe(e.t, ida, idb, ta, tb, &f0);
    rewrite(&e, order);
    char *after = harness_table_rows(e.t, &n1);
    CHECK(before && after && n0 == FILES * ROWS_PER_FILE && n1 == n0 && !strcmp(before, after));
    /* z-ordered files each hold a region: a point query reads a few of many */
    double q1 = files_per_probe(e.t, ida, idb, ta, tb, &f1);
    printf("# %s: a point query reads %.2f of %lld files, before %.2f of %lld\n", order, q1,
           (long long)f1, q0, (long long)f0);
    CHECK(f0 == FILES && f1 >= 8);
    if (!(q1 / (double)f1 * 3 < q0 / (double)f0))
        harness_fail(__FILE__, __LINE__, "%s: a point query reads %.2f of %lld files, before %.2f of %lld",
                     order, q1, (long long)f1, q0, (long long)f0);
    /* files carry no sort order id: zorder is not one of the table's orders */
    floe_scan_plan *p = NULL;
    floe_error err;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &p, &err), err);
    for (size_t i = 0; i < p->ntasks; i++)
        CHECK(!p->tasks[i].file->has_sort_order_id);
    floe_scan_plan_free(p);
    floe_free(before);
    floe_free(after);
    harness_table_close(&e);
}

TEST(test_zorder_longs) { zorder_end_to_end("zorder(x, y)", 1, 2, FLOE_TYPE_LONG, FLOE_TYPE_LONG); }
TEST(test_zorder_date_timestamp) {
    zorder_end_to_end("zorder(d, ts)", 3, 4, FLOE_TYPE_DATE, FLOE_TYPE_TIMESTAMPTZ);
}
TEST(test_zorder_string_long) {
    zorder_end_to_end("zorder(s, y)", 5, 2, FLOE_TYPE_STRING, FLOE_TYPE_LONG);
}

/* A plain sort order given to the rewrite (not the table's): files sorted by it, no id */
TEST(test_given_sort_order) {
    env e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, NULL, 0);
    fill(&e);
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.fsync = false;
    o.rewrite_all = true;
    o.strategy = FLOE_RW_SORT;
    o.sort_order = "x DESC";
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.added_data_files_count, 1);
    /* options a zorder alone takes are refused with it, and a sort order with bin-pack */
    o.zorder_var_length_contribution = 4;
    CHECK(floe_rewrite(e.t, &o, &r, &err) == FLOE_EINVALID);
    CHECK(strstr(err.msg, "var-length-contribution") != NULL);
    o.zorder_var_length_contribution = 0;
    o.strategy = FLOE_RW_BINPACK;
    CHECK(floe_rewrite(e.t, &o, &r, &err) == FLOE_EINVALID);
    harness_table_close(&e);
}

int main(void) {
    RUN(test_zorder_bytes_longs);
    RUN(test_zorder_bytes_doubles_dates_timestamps);
    RUN(test_zorder_bytes_strings_and_sizes);
    RUN(test_zorder_parse);
    RUN(test_zorder_longs);
    RUN(test_zorder_date_timestamp);
    RUN(test_zorder_string_long);
    RUN(test_given_sort_order);
    return harness_finish();
}
