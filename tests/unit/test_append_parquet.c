/*
 * test_append_parquet.c - the data file of an existing Parquet file (append_parquet.c):
 * bounds over every row group, bounds from the values where statistics are truncated or
 * missing, and the one-partition-per-file check for monotone transforms (bounds), bucket
 * (every row), nulls and NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/json.h"
#include "floe/parquet.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":4,\"name\":\"k\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":5,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":6,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(20,2)\"}]}";

/* NaN has no JSON form: a double of exactly 1e300 in the input is written as NaN. */
#define NAN_SENTINEL 1e300

/* Write groups[0..n) (NDJSON text each) as one row group each, with schema_json (NaN
 * sentinels in column d of SCHEMA). */
static void write_groups_schema(const char *path, const char *schema_json,
                                const char *const *groups, size_t n,
                                const floe_pq_write_options *wo) {
    floe_error err;
    floe_error_clear(&err);
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(schema_json, strlen(schema_json), &s, &err), err);
    floe_shredder *sh = NULL;
    REQUIRE_OK(floe_shredder_new(s, NULL, &sh, &err), err);
    floe_pq_write_options o;
    if (wo)
        o = *wo;
    else
        floe_pq_write_options_init(&o);
    o.output.fsync = false;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    for (size_t g = 0; g < n; g++) {
        floe_batch_clear(&b);
        REQUIRE_OK(floe_shredder_feed(sh, (const uint8_t *)groups[g], strlen(groups[g]), "t", 1,
                                      0, &b, NULL, NULL, &err),
                   err);
        floe_colbuf *dc = &b.cols[2];
        for (size_t i = 0; schema_json == SCHEMA && i < dc->nvalues; i++) {
            double v;
            memcpy(&v, dc->values + 8 * i, 8);
            if (v == NAN_SENTINEL) {
                v = NAN;
                memcpy(dc->values + 8 * i, &v, 8);
            }
        }
        REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
        REQUIRE_OK(floe_pq_writer_flush(w, &err), err);
    }
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
    CHECK_EQ_INT(fi.row_group_count, (int64_t)n);
    floe_pq_file_info_free(&fi);
    floe_batch_free(&b);
    floe_shredder_free(sh);
    floe_schema_free(s);
}

static void write_groups(const char *path, const char *const *groups, size_t n,
                         const floe_pq_write_options *wo) {
    write_groups_schema(path, SCHEMA, groups, n, wo);
}

typedef struct added {
    int rc;
    floe_error err;
    floe_data_file df;
    floe_parquet_file_report rep;
    floe_arena arena;
} added;

static void add_file(harness_table *e, const char *path, added *a) {
    floe_error_clear(&a->err);
    floe_arena_init(&a->arena, 4096);
    memset(&a->df, 0, sizeof a->df);
    a->rc = floe_data_file_from_parquet_footer(NULL, floe_table_metadata_get(e->t), path, path, NULL,
                                               0, &a->arena, &a->df, &a->rep, &a->err);
}

static const floe_column_bound *bound(const floe_bound_map *m, int32_t id) {
    for (size_t i = 0; m->present && i < m->n; i++)
        if (m->items[i].field_id == id)
            return &m->items[i];
    return NULL;
}

static bool count(const floe_count_map *m, int32_t id, int64_t *v) {
    for (size_t i = 0; m->present && i < m->n; i++)
        if (m->items[i].field_id == id) {
            *v = m->items[i].value;
            return true;
        }
    return false;
}

static int64_t bound_long(const floe_data_file *df, int32_t id, bool upper) {
    const floe_column_bound *b = bound(upper ? &df->upper_bounds : &df->lower_bounds, id);
    REQUIRE(b != NULL && b->n == 8);
    return (int64_t)floe_load_le64(b->p);
}

static double bound_double(const floe_data_file *df, int32_t id, bool upper) {
    const floe_column_bound *b = bound(upper ? &df->upper_bounds : &df->lower_bounds, id);
    REQUIRE(b != NULL && b->n == 8);
    double d;
    memcpy(&d, b->p, 8);
    return d;
}

/* Bounds span every row group: the minimum sits in the first, the maximum in the last
 * (the first row group's maximum used to stand for the lower bound). */
TEST(test_bounds_every_row_group) {
    harness_table e;
    harness_table_open(&e, "rg", SCHEMA, NULL, NULL, NULL, 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/rg.parquet", e.dir);
    const char *groups[] = {
        "{\"id\":1,\"s\":\"apple\",\"d\":-7.5,\"k\":-3,\"ts\":\"2026-01-01T00:00:00Z\","
        "\"dec\":\"-12.50\"}\n{\"id\":10,\"s\":\"banana\",\"d\":-1,\"k\":5,\"dec\":\"1.00\"}\n",
        "{\"id\":11,\"s\":\"cherry\",\"d\":2.25,\"k\":7,\"ts\":\"2026-03-01T00:00:00Z\"}\n"
        "{\"id\":20,\"d\":3,\"k\":9,\"dec\":\"99.99\"}\n",
        "{\"id\":21,\"s\":\"\\u00e9t\\u00e9\",\"d\":4,\"k\":11}\n"
        "{\"id\":30,\"s\":\"date\",\"d\":8.5,\"k\":12,\"ts\":\"2026-06-30T23:59:59.999999Z\"}\n"};
    write_groups(path, groups, 3, NULL);
    added a;
    add_file(&e, path, &a);
    REQUIRE_OK(a.rc, a.err);
    CHECK_EQ_INT(a.df.record_count, 6);
    CHECK_EQ_INT(bound_long(&a.df, 1, false), 1);
    CHECK_EQ_INT(bound_long(&a.df, 1, true), 30);
    CHECK(bound_double(&a.df, 3, false) == -7.5);
    CHECK(bound_double(&a.df, 3, true) == 8.5);
    const floe_column_bound *sl = bound(&a.df.lower_bounds, 2), *su = bound(&a.df.upper_bounds, 2);
    REQUIRE(sl && su);
    CHECK(sl->n == 5 && !memcmp(sl->p, "apple", 5));
    CHECK(su->n == 5 && !memcmp(su->p, "\xc3\xa9t\xc3\xa9", 5)); /* été sorts after date */
    const floe_column_bound *kl = bound(&a.df.lower_bounds, 4);
    REQUIRE(kl && kl->n == 4);
    CHECK_EQ_INT((int32_t)floe_load_le32(kl->p), -3);
    /* decimal: minimal big-endian two's complement of the unscaled value (-1250, 9999) */
    const floe_column_bound *dl = bound(&a.df.lower_bounds, 6), *du = bound(&a.df.upper_bounds, 6);
    REQUIRE(dl && du);
    CHECK(dl->n == 2 && dl->p[0] == 0xfb && dl->p[1] == 0x1e);
    CHECK(du->n == 2 && du->p[0] == 0x27 && du->p[1] == 0x0f);
    CHECK_EQ_INT(bound_long(&a.df, 5, false), 1767225600000000LL);
    CHECK_EQ_INT(bound_long(&a.df, 5, true), 1782863999999999LL);
    int64_t nulls = -1;
    CHECK(count(&a.df.null_value_counts, 5, &nulls) && nulls == 3);
    CHECK_EQ_INT(a.rep.columns_read, 0); /* floe's statistics are exact */
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

/* Truncated statistics (strings longer than the writer's limit) are bounds, not the values:
 * the column is read, and a table with full metrics gets the exact values. */
TEST(test_bounds_from_values_when_truncated) {
    floe_kv props[] = {{"write.metadata.metrics.default", "full"}};
    harness_table e;
    harness_table_open(&e, "trunc", SCHEMA, NULL, NULL, props, 1);
    char path[4200];
    snprintf(path, sizeof path, "%s/trunc.parquet", e.dir);
    char lo[200], hi[200], g0[600];
    memset(lo, 'm', 99);
    lo[99] = 'a';
    lo[100] = 0;
    memset(hi, 'm', 99);
    hi[99] = 'z';
    hi[100] = 0;
    snprintf(g0, sizeof g0, "{\"id\":1,\"s\":\"%s\"}\n{\"id\":2,\"s\":\"%s\"}\n", hi, lo);
    const char *groups[] = {g0};
    floe_pq_write_options wo;
    floe_pq_write_options_init(&wo);
    wo.stats_truncate_length = 8;
    write_groups(path, groups, 1, &wo);
    added a;
    add_file(&e, path, &a);
    REQUIRE_OK(a.rc, a.err);
    CHECK(a.rep.columns_read >= 1);
    const floe_column_bound *sl = bound(&a.df.lower_bounds, 2), *su = bound(&a.df.upper_bounds, 2);
    REQUIRE(sl && su);
    CHECK(sl->n == 100 && !memcmp(sl->p, lo, 100));
    CHECK(su->n == 100 && !memcmp(su->p, hi, 100));
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

/* identity: two values in one file are refused, naming the column and both values. */
TEST(test_partition_identity_two_values) {
    harness_table e;
    harness_table_open(&e, "ident", SCHEMA, "[{\"source-id\":4,\"field-id\":1000,\"name\":\"k\","
                       "\"transform\":\"identity\"}]", NULL, NULL, 0);
    char p1[4200], p2[4200], p3[4200];
    snprintf(p1, sizeof p1, "%s/two.parquet", e.dir);
    snprintf(p2, sizeof p2, "%s/one.parquet", e.dir);
    snprintf(p3, sizeof p3, "%s/null.parquet", e.dir);
    const char *two[] = {"{\"id\":1,\"k\":41}\n", "{\"id\":2,\"k\":42}\n"};
    const char *one[] = {"{\"id\":1,\"k\":42}\n", "{\"id\":2,\"k\":42}\n"};
    const char *withnull[] = {"{\"id\":1,\"k\":42}\n", "{\"id\":2}\n"};
    write_groups(p1, two, 2, NULL);
    write_groups(p2, one, 2, NULL);
    write_groups(p3, withnull, 2, NULL);
    added a;
    add_file(&e, p1, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions);
    CHECK(strstr(a.err.msg, "two.parquet") && strstr(a.err.msg, "column k") &&
          strstr(a.err.msg, "41") && strstr(a.err.msg, "42"));
    floe_arena_reset(&a.arena);
    add_file(&e, p2, &a);
    REQUIRE_OK(a.rc, a.err);
    REQUIRE(a.df.npartition == 1);
    CHECK(!a.df.partition[0].is_null && a.df.partition[0].v.i32 == 42);
    floe_arena_reset(&a.arena);
    add_file(&e, p3, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions && strstr(a.err.msg, "null") && strstr(a.err.msg, "42"));
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

static int32_t bucket4(int64_t v) {
    floe_value in = floe_value_long(v), out;
    floe_error err;
    floe_transform t = {FLOE_XF_BUCKET, 4};
    REQUIRE(floe_transform_apply(t, &in, &out, &err) == 0);
    return out.v.i32;
}

/* bucket is not monotone: a file whose minimum and maximum share a bucket may still
 * hold other buckets, so every row is hashed. */
TEST(test_partition_bucket_by_rows) {
    harness_table e;
    harness_table_open(&e, "buck", SCHEMA, "[{\"source-id\":1,\"field-id\":1000,\"name\":"
                       "\"id_bucket\",\"transform\":\"bucket[4]\"}]", NULL, NULL, 0);
    int64_t lo = 1, mid = 2, hi = 3;
    while (bucket4(mid) == bucket4(lo))
        mid++;
    hi = mid + 1;
    while (bucket4(hi) != bucket4(lo))
        hi++;
    int64_t same[3] = {lo, hi, hi + 1};
    while (bucket4(same[2]) != bucket4(lo))
        same[2]++;
    char g[3][128], h[3][128], p1[4200], p2[4200];
    snprintf(g[0], sizeof g[0], "{\"id\":%lld}\n", (long long)lo);
    snprintf(g[1], sizeof g[1], "{\"id\":%lld}\n", (long long)mid);
    snprintf(g[2], sizeof g[2], "{\"id\":%lld}\n", (long long)hi);
    for (int i = 0; i < 3; i++)
        snprintf(h[i], sizeof h[i], "{\"id\":%lld}\n", (long long)same[i]);
    snprintf(p1, sizeof p1, "%s/mixed.parquet", e.dir);
    snprintf(p2, sizeof p2, "%s/same.parquet", e.dir);
    const char *mixed[] = {g[0], g[1], g[2]};
    const char *one[] = {h[0], h[1], h[2]};
    write_groups(p1, mixed, 3, NULL);
    write_groups(p2, one, 3, NULL);
    added a;
    add_file(&e, p1, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions && a.rep.columns_read >= 1);
    CHECK(strstr(a.err.msg, "column id") && strstr(a.err.msg, "bucket[4]"));
    floe_arena_reset(&a.arena);
    add_file(&e, p2, &a);
    REQUIRE_OK(a.rc, a.err);
    REQUIRE(a.df.npartition == 1);
    CHECK_EQ_INT(a.df.partition[0].v.i32, bucket4(lo));
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

/* A float column's bounds leave NaN out: identity on it needs the values. */
TEST(test_partition_float_nan) {
    harness_table e;
    harness_table_open(&e, "flt", SCHEMA, "[{\"source-id\":3,\"field-id\":1000,\"name\":\"d\","
                       "\"transform\":\"identity\"}]", NULL, NULL, 0);
    char p1[4200], p2[4200];
    snprintf(p1, sizeof p1, "%s/nan.parquet", e.dir);
    snprintf(p2, sizeof p2, "%s/plain.parquet", e.dir);
    const char *nan[] = {"{\"id\":1,\"d\":1.5}\n{\"id\":2,\"d\":1e300}\n"};
    const char *plain[] = {"{\"id\":1,\"d\":1.5}\n{\"id\":2,\"d\":1.5}\n"};
    write_groups(p1, nan, 1, NULL);
    write_groups(p2, plain, 1, NULL);
    added a;
    add_file(&e, p1, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions && strstr(a.err.msg, "NaN") && strstr(a.err.msg, "1.5"));
    floe_arena_reset(&a.arena);
    add_file(&e, p2, &a);
    REQUIRE_OK(a.rc, a.err);
    REQUIRE(a.df.npartition == 1);
    CHECK(a.df.partition[0].v.d == 1.5);
    int64_t nans = -1;
    CHECK(count(&a.df.nan_value_counts, 3, &nans) && nans == 0);
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

/* day(ts): bounds decide; nulls and other days refuse. */
TEST(test_partition_day) {
    harness_table e;
    harness_table_open(&e, "day", SCHEMA, "[{\"source-id\":5,\"field-id\":1000,\"name\":"
                       "\"ts_day\",\"transform\":\"day\"}]", NULL, NULL, 0);
    char p1[4200], p2[4200];
    snprintf(p1, sizeof p1, "%s/oneday.parquet", e.dir);
    snprintf(p2, sizeof p2, "%s/twodays.parquet", e.dir);
    const char *oneday[] = {"{\"id\":1,\"ts\":\"1969-12-31T00:00:00Z\"}\n",
                            "{\"id\":2,\"ts\":\"1969-12-31T23:59:59.999999Z\"}\n"};
    const char *twodays[] = {"{\"id\":1,\"ts\":\"1969-12-31T23:59:59.999999Z\"}\n",
                             "{\"id\":2,\"ts\":\"1970-01-01T00:00:00Z\"}\n"};
    write_groups(p1, oneday, 2, NULL);
    write_groups(p2, twodays, 2, NULL);
    added a;
    add_file(&e, p1, &a);
    REQUIRE_OK(a.rc, a.err);
    REQUIRE(a.df.npartition == 1);
    CHECK_EQ_INT(a.df.partition[0].v.i32, -1);
    CHECK_EQ_INT(a.rep.columns_read, 0);
    floe_arena_reset(&a.arena);
    add_file(&e, p2, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(strstr(a.err.msg, "1969-12-31") && strstr(a.err.msg, "1970-01-01"));
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

/* truncate is order-preserving, so the transform of a column's min and max decides: equal
 * means one partition, different means the file is refused naming both values. Strings by
 * their first W code points; integers towards negative infinity (truncate[10] of -1 is
 * -10, so -10 and -1 share a partition). */
TEST(test_partition_truncate) {
    harness_table e;
    harness_table_open(&e, "trunc", SCHEMA,
                       "[{\"source-id\":2,\"field-id\":1000,\"name\":\"s_trunc\","
                       "\"transform\":\"truncate[3]\"},"
                       "{\"source-id\":4,\"field-id\":1001,\"name\":\"k_trunc\","
                       "\"transform\":\"truncate[10]\"}]",
                       NULL, NULL, 0);
    char p1[4200], p2[4200], p3[4200];
    snprintf(p1, sizeof p1, "%s/same.parquet", e.dir);
    snprintf(p2, sizeof p2, "%s/strings.parquet", e.dir);
    snprintf(p3, sizeof p3, "%s/ints.parquet", e.dir);
    const char *same[] = {"{\"id\":1,\"s\":\"abc1\",\"k\":-10}\n",
                          "{\"id\":2,\"s\":\"abczzz\",\"k\":-1}\n"};
    const char *strings[] = {"{\"id\":1,\"s\":\"abc9\",\"k\":40}\n",
                             "{\"id\":2,\"s\":\"abd0\",\"k\":49}\n"};
    const char *ints[] = {"{\"id\":1,\"s\":\"abc\",\"k\":49}\n",
                          "{\"id\":2,\"s\":\"abc\",\"k\":50}\n"};
    write_groups(p1, same, 2, NULL);
    write_groups(p2, strings, 2, NULL);
    write_groups(p3, ints, 2, NULL);
    added a;
    add_file(&e, p1, &a);
    REQUIRE_OK(a.rc, a.err);
    REQUIRE(a.df.npartition == 2);
    CHECK(!a.df.partition[0].is_null && a.df.partition[0].v.bytes.n == 3 &&
          memcmp(a.df.partition[0].v.bytes.p, "abc", 3) == 0);
    CHECK_EQ_INT(a.df.partition[1].v.i32, -10);
    floe_arena_reset(&a.arena);
    add_file(&e, p2, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions);
    CHECK(strstr(a.err.msg, "strings.parquet") && strstr(a.err.msg, "column s") &&
          strstr(a.err.msg, "abc") && strstr(a.err.msg, "abd"));
    floe_arena_reset(&a.arena);
    add_file(&e, p3, &a);
    CHECK_EQ_INT(a.rc, FLOE_EINVALID);
    CHECK(a.rep.several_partitions);
    CHECK(strstr(a.err.msg, "column k") && strstr(a.err.msg, "40") && strstr(a.err.msg, "50"));
    floe_arena_reset(&a.arena);
    harness_table_close(&e);
}

static int sink_none(void *ctx, const void *p, size_t n) {
    (void)ctx;
    (void)p;
    (void)n;
    return 0;
}

/* The files of a folder and below (count), for "nothing left behind". */
static int count_files(const char *dir) {
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -name '*.parquet' 2>/dev/null | wc -l", dir);
    char *out = NULL;
    int rc = harness_run_cmd(cmd, &out);
    int n = rc == 0 && out ? atoi(out) : -1;
    free(out);
    return n;
}

/* --split: a file spanning partitions becomes one file per partition, rows unchanged,
 * each with its own tuple; a failing append leaves none of them behind. */
TEST(test_split) {
    harness_table e;
    harness_table_open(&e, "split", SCHEMA, "[{\"source-id\":4,\"field-id\":1000,\"name\":\"k\","
                       "\"transform\":\"identity\"},{\"source-id\":1,\"field-id\":1001,"
                       "\"name\":\"id_bucket\",\"transform\":\"bucket[2]\"}]", NULL, NULL, 0);
    char path[4200], flat_rows_path[4200];
    snprintf(path, sizeof path, "%s/mixed.parquet", e.dir);
    snprintf(flat_rows_path, sizeof flat_rows_path, "%s/missing.parquet", e.dir);
    floe_buf g0, g1;
    floe_buf_init(&g0, 0);
    floe_buf_init(&g1, 0);
    for (int i = 0; i < 200; i++)
        floe_buf_printf(i < 120 ? &g0 : &g1, "{\"id\":%d,\"s\":\"v%d\",\"d\":%d.5,\"k\":%d%s}\n",
                        i, i, i - 100, i % 3, i % 7 == 0 ? ",\"ts\":\"2026-01-01T00:00:00Z\"" : "");
    floe_buf_append_byte(&g0, 0);
    floe_buf_append_byte(&g1, 0);
    const char *groups[] = {(const char *)g0.data, (const char *)g1.data};
    write_groups(path, groups, 2, NULL);

    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    floe_error_clear(&err);
    /* refused without --split */
    const char *one[] = {path};
    CHECK_EQ_INT(floe_table_append_files(e.t, one, 1, &o, &r, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "column k") != NULL);
    /* a failing input after the split: nothing committed, nothing left behind */
    char datadir[4300];
    snprintf(datadir, sizeof datadir, "%s/wh", e.dir);
    int before = count_files(datadir);
    o.split = floe_rewrite_split_file;
    const char *two[] = {path, flat_rows_path};
    CHECK(floe_table_append_files(e.t, two, 2, &o, &r, &err) < 0);
    CHECK_EQ_INT(count_files(datadir), before);
    /* split */
    REQUIRE_OK(floe_table_append_files(e.t, one, 1, &o, &r, &err), err);
    CHECK_EQ_INT(r.parquet_files, 0);
    CHECK_EQ_INT(r.parquet_files_split, 1);
    CHECK_EQ_INT(r.split_files, 6); /* k in {0,1,2} x two buckets */
    CHECK_EQ_INT(r.commit.added_records, 200);
    floe_table_append_result_reset(&r);
    int64_t n = 0;
    char *rows = harness_table_rows(e.t, &n);
    CHECK_EQ_INT(n, 200);
    free(rows);
    /* every file holds its tuple's rows only, with bounds that say so */
    floe_scan_plan *p = NULL;
    floe_scan_options keep = {.keep_metrics = true};
    REQUIRE_OK(floe_scan_plan_files(e.t, &keep, &p, &err), err);
    CHECK_EQ_INT(p->ntasks, 6);
    for (size_t i = 0; i < p->ntasks; i++) {
        const floe_data_file *df = p->tasks[i].file;
        REQUIRE(df->npartition == 2);
        const floe_column_bound *kl = bound(&df->lower_bounds, 4), *ku = bound(&df->upper_bounds, 4);
        REQUIRE(kl && ku);
        CHECK_EQ_INT((int32_t)floe_load_le32(kl->p), df->partition[0].v.i32);
        CHECK_EQ_INT((int32_t)floe_load_le32(ku->p), df->partition[0].v.i32);
        CHECK(strstr(df->file_path, "/data/k=") != NULL);
    }
    floe_scan_plan_free(p);
    const char *where[] = {"k = 1", "id < 10", "id >= 150 AND k = 2"};
    const int64_t want[] = {67, 10, 16};
    for (int q = 0; q < 3; q++) {
        floe_scan_options so = {.where = where[q]};
        REQUIRE_OK(floe_scan_plan_files(e.t, &so, &p, &err), err);
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
        floe_scan_read_stats st;
        REQUIRE_OK(floe_scan_read(e.t, p, &ro, sink_none, NULL, &st, &err), err);
        CHECK_EQ_INT(st.rows_out, want[q]);
        floe_scan_plan_free(p);
    }
    floe_buf_free(&g0);
    floe_buf_free(&g1);
    harness_table_close(&e);
}

/* Rows of scan with where, canonical, in buf; returns the row count. */
static int64_t scan_rows(floe_table *t, const char *where, floe_buf *buf) {
    floe_error err;
    floe_error_clear(&err);
    floe_scan_options so = {.where = where};
    floe_scan_plan *p = NULL;
    floe_buf_reset(buf);
    REQUIRE_OK(floe_scan_plan_files(t, &so, &p, &err), err);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
    floe_scan_read_stats st;
    REQUIRE_OK(floe_scan_read(t, p, &ro, harness_buf_sink, buf, &st, &err), err);
    floe_scan_plan_free(p);
    REQUIRE(floe_buf_append_byte(buf, 0) == 0);
    return st.rows_out;
}

/* A file whose writer left uuids as FIXED_LEN_BYTE_ARRAY(16) without the UUID annotation
 * (arrow-rs does) reads as the table's uuid columns, top-level, in a struct and in a
 * list: uuid text, and filters on them match (hex text would be no uuid to the row
 * filter, which would then drop every row). */
TEST(test_unannotated_uuid) {
    static const char *FILE_SCHEMA =
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"u\",\"required\":false,\"type\":\"fixed[16]\"},"
        "{\"id\":3,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\","
        "\"fields\":[{\"id\":4,\"name\":\"x\",\"required\":false,\"type\":\"fixed[16]\"}]}},"
        "{\"id\":5,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":6,\"element\":\"fixed[16]\",\"element-required\":false}}]}";
    static const char *TABLE_SCHEMA =
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
        "{\"id\":3,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\","
        "\"fields\":[{\"id\":4,\"name\":\"x\",\"required\":false,\"type\":\"uuid\"}]}},"
        "{\"id\":5,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":6,\"element\":\"uuid\",\"element-required\":false}}]}";
    harness_table e;
    harness_table_open(&e, "uuid", TABLE_SCHEMA, NULL, NULL, NULL, 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/fixed.parquet", e.dir);
    const char *groups[] = {
        "{\"id\":1,\"u\":\"AAECAwQFBgcICQoLDA0ODw==\",\"st\":{\"x\":\"/////////////////////w==\"},"
        "\"l\":[\"AAECAwQFBgcICQoLDA0ODw==\"]}\n"
        "{\"id\":2,\"u\":\"/////////////////////w==\",\"st\":{\"x\":null}}\n"
        "{\"id\":3}\n"};
    write_groups_schema(path, FILE_SCHEMA, groups, 1, NULL);
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    floe_error_clear(&err);
    const char *one[] = {path};
    REQUIRE_OK(floe_table_append_files(e.t, one, 1, &o, &r, &err), err);
    floe_table_append_result_reset(&r);
    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK_EQ_INT(scan_rows(e.t, "u = '00010203-0405-0607-0809-0a0b0c0d0e0f'", &b), 1);
    CHECK(strstr((const char *)b.data,
                 "\"u\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\",\"st\":{\"x\":"
                 "\"ffffffff-ffff-ffff-ffff-ffffffffffff\"},\"l\":[\"00010203-0405-0607-0809-0a0b0c0d0e0f\"]") != NULL);
    CHECK_EQ_INT(scan_rows(e.t, "st.x = 'ffffffff-ffff-ffff-ffff-ffffffffffff'", &b), 1);
    CHECK_EQ_INT(scan_rows(e.t, "u > '00010203-0405-0607-0809-0a0b0c0d0e0f'", &b), 1);
    CHECK_EQ_INT(scan_rows(e.t, "u IS NOT NULL", &b), 2);
    CHECK_EQ_INT(scan_rows(e.t, "u IS NULL", &b), 1);
    floe_buf_free(&b);
    harness_table_close(&e);
}

/* An existing file is added once: given twice in one append (under two spellings of its
 * path) or again once it is live, it is refused, and nothing is committed; it is recorded
 * as a file:// URI of its absolute path. */
TEST(test_added_once) {
    harness_table e;
    harness_table_open(&e, "once", SCHEMA, NULL, NULL, NULL, 0);
    char path[4200], other[4300];
    snprintf(path, sizeof path, "%s/once.parquet", e.dir);
    snprintf(other, sizeof other, "%s/./../%s/once.parquet", e.dir, strrchr(e.dir, '/') + 1);
    const char *groups[] = {"{\"id\":1,\"s\":\"a\"}\n{\"id\":2,\"s\":\"b\"}\n"};
    write_groups(path, groups, 1, NULL);
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    floe_error_clear(&err);
    const char *twice[] = {path, other};
    CHECK_EQ_INT(floe_table_append_files(e.t, twice, 2, &o, &r, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "is given twice") != NULL);
    CHECK(!floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t)));
    const char *one[] = {path};
    REQUIRE_OK(floe_table_append_files(e.t, one, 1, &o, &r, &err), err);
    floe_table_append_result_reset(&r);
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    REQUIRE(s);
    int64_t snap = s->snapshot_id;
    const char *again[] = {other};
    CHECK_EQ_INT(floe_table_append_files(e.t, again, 1, &o, &r, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "is already a data file of the table") != NULL);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    s = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    CHECK(s && s->snapshot_id == snap);
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &p, &err), err);
    REQUIRE(p->ntasks == 1);
    char want[4300];
    snprintf(want, sizeof want, "file://%s", path);
    CHECK_EQ_STR(p->tasks[0].file->file_path, want);
    CHECK_EQ_INT(p->records, 2);
    floe_scan_plan_free(p);
    harness_table_close(&e);
}

int main(void) {
    RUN(test_bounds_every_row_group);
    RUN(test_bounds_from_values_when_truncated);
    RUN(test_partition_identity_two_values);
    RUN(test_partition_bucket_by_rows);
    RUN(test_partition_float_nan);
    RUN(test_partition_day);
    RUN(test_partition_truncate);
    RUN(test_split);
    RUN(test_unannotated_uuid);
    RUN(test_added_once);
    return harness_finish();
}
