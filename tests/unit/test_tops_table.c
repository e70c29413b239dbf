/*
 * test_tops_table.c - table operations: the append snapshot producer (summaries, manifest
 * merging, exactly-once marker, cleanup after failed and unknown commits), scan planning
 * (partition and metrics pruning, time travel) and reading, filter expressions, and 8
 * processes appending to one table at once on the SQLite and the filesystem catalog.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"
#include "iceberg/scan_internal.h"
#include "table/commit_testing.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"}]}";

typedef enum { KIND_SQLITE, KIND_FS } kind;

static floe_catalog *open_kind(kind k, const char *dir) {
    char db[4096], wh[4096];
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    int rc = k == KIND_SQLITE ? floe_catalog_open_sqlite(NULL, db, "test", wh, &c, &err)
                              : floe_catalog_open_fs(NULL, wh, &c, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "open catalog: %s", err.msg);
    return c;
}

static floe_table *create_table(floe_catalog *c, const char *spec, const floe_kv *props,
                                size_t nprops) {
    floe_error err;
    floe_error_clear(&err);
    FLOE_IGNORE_RESULT(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err)); /* may exist */
    floe_error_clear(&err);
    floe_table_create_options o = {.spec_json = spec, .props = props, .nprops = nprops};
    floe_table *t = NULL;
    if (floe_table_create(c, "db", "t", SCHEMA, &o, &t, &err) != 0)
        harness_fail(__FILE__, __LINE__, "create: %s", err.msg);
    return t;
}

/* One NDJSON file with rows id = first..first+n-1, kind cycling a/b/c, ts on day+id%3. */
static char *write_ndjson(const char *dir, const char *name, int64_t first, int n) {
    char *path = floe_asprintf("%s/%s", dir, name);
    floe_buf b;
    floe_buf_init(&b, 0);
    static const char *kinds[] = {"a", "b", "c"};
    for (int i = 0; i < n; i++) {
        int64_t id = first + i;
        floe_buf_printf(&b, "{\"id\":%" PRId64 ",\"kind\":\"%s\",\"ts\":\"2026-10-0%dT12:00:00Z\"}\n",
                        id, kinds[id % 3], (int)(id % 3) + 1);
    }
    harness_write_file(path, b.data, b.len);
    floe_buf_free(&b);
    return path;
}

static int append_ndjson(floe_table *t, const char *path, const char *once_value,
                         floe_table_append_result *res, floe_error *err) {
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    if (once_value) {
        o.once_key = "test.batch";
        o.once_value = once_value;
    }
    const char *in[] = {path};
    return floe_table_append_files(t, in, 1, &o, res, err);
}

typedef struct sink_buf {
    floe_buf b;
} sink_buf;

static int to_buf(void *ctx, const void *p, size_t n) {
    return floe_buf_append(&((sink_buf *)ctx)->b, p, n);
}

static int64_t count_lines(const floe_buf *b) {
    int64_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

/* Rows of a scan with where (NULL = all). -1 on error. */
static int64_t scan_rows(floe_table *t, const char *where, const floe_scan_options *base,
                         floe_scan_plan **plan_out) {
    floe_scan_options o;
    if (base)
        o = *base;
    else
        memset(&o, 0, sizeof o);
    o.where = where;
    floe_scan_plan *p = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_scan_plan_files(t, &o, &p, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "plan: %s", err.msg);
        return -1;
    }
    sink_buf s;
    floe_buf_init(&s.b, 0);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
    int64_t n = -1;
    if (floe_scan_read(t, p, &ro, to_buf, &s, NULL, &err) != 0)
        harness_fail(__FILE__, __LINE__, "read: %s", err.msg);
    else
        n = count_lines(&s.b);
    floe_buf_free(&s.b);
    if (plan_out)
        *plan_out = p;
    else
        floe_scan_plan_free(p);
    return n;
}

static size_t count_files(const char *dir, const char *suffix) {
    char *local = floe_io_local_path(dir); /* tables record file:/// URIs */
    DIR *d = opendir(local ? local : dir);
    floe_free(local);
    size_t n = 0, sl = strlen(suffix);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len > sl && !strcmp(de->d_name + len - sl, suffix))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static const char *summary(const floe_snapshot *s, const char *k) {
    for (size_t i = 0; s && i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, k))
            return s->summary[i].value;
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * expressions
 * ------------------------------------------------------------------------------------- */

typedef struct row_vals {
    floe_value v[4];
} row_vals;

static int get_val(void *ctx, int32_t id, floe_value *out) {
    row_vals *r = ctx;
    if (id < 1 || id > 3)
        return -1;
    *out = r->v[id];
    return 0;
}

TEST(test_expr_rows_and_pruning) {
    floe_error err;
    floe_error_clear(&err);
    floe_schema *s = NULL;
    REQUIRE(floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err) == 0);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_expr *e = NULL;
    REQUIRE(floe_expr_parse(s, "kind = 'a' AND (id >= 10 OR ts < '2026-10-02') AND NOT id IN (12, 13)",
                            &a, &e, &err) == 0);
    row_vals r;
    r.v[1] = floe_value_long(11);
    r.v[2] = floe_value_string("a", 1);
    r.v[3] = floe_value_null(FLOE_TYPE_TIMESTAMPTZ);
    CHECK_EQ_INT(floe_expr_eval_row(e, get_val, &r), 1);
    r.v[1] = floe_value_long(12);
    CHECK_EQ_INT(floe_expr_eval_row(e, get_val, &r), 0);
    r.v[1] = floe_value_long(3); /* id < 10 and ts null: unknown, not a match */
    CHECK_EQ_INT(floe_expr_eval_row(e, get_val, &r), -1);
    r.v[2] = floe_value_null(FLOE_TYPE_STRING);
    CHECK(floe_expr_eval_row(e, get_val, &r) != 1);

    /* errors name the problem */
    CHECK(floe_expr_parse(s, "nope = 1", &a, &e, &err) == FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "nope") != NULL);
    CHECK(floe_expr_parse(s, "id = 'x'", &a, &e, &err) == FLOE_EINVALID);
    CHECK(floe_expr_parse(s, "id = null", &a, &e, &err) == FLOE_EINVALID);
    CHECK(floe_expr_parse(s, "id = 1 AND", &a, &e, &err) == FLOE_EINVALID);

    /* metrics: bounds prune, missing metrics never prune */
    floe_expr *p = NULL;
    REQUIRE(floe_expr_parse(s, "id > 100", &a, &p, &err) == 0);
    floe_data_file f;
    memset(&f, 0, sizeof f);
    CHECK(floe_expr_file_may_match(p, s, &f)); /* nothing known */
    uint8_t lo[8], hi[8];
    floe_store_le64(lo, 1);
    floe_store_le64(hi, 50);
    floe_column_bound lb = {1, lo, 8}, ub = {1, hi, 8};
    f.lower_bounds = (floe_bound_map){true, &lb, 1};
    f.upper_bounds = (floe_bound_map){true, &ub, 1};
    CHECK(!floe_expr_file_may_match(p, s, &f));
    floe_store_le64(hi, 101);
    CHECK(floe_expr_file_may_match(p, s, &f));
    /* NOT (id <= 100) is the same predicate once pushed down */
    REQUIRE(floe_expr_parse(s, "NOT id <= 100", &a, &p, &err) == 0);
    floe_store_le64(hi, 50);
    CHECK(!floe_expr_file_may_match(p, s, &f));
    /* IS NULL: null count 0 prunes, absent null counts do not */
    REQUIRE(floe_expr_parse(s, "kind IS NULL", &a, &p, &err) == 0);
    floe_column_count nc = {2, 0};
    CHECK(floe_expr_file_may_match(p, s, &f));
    f.null_value_counts = (floe_count_map){true, &nc, 1};
    CHECK(!floe_expr_file_may_match(p, s, &f));

    /* partition projection through day(ts) */
    floe_partition_spec *spec = NULL;
    REQUIRE(floe_partition_spec_parse(s, "day(ts)", 0, 0, &spec, &err) == 0);
    REQUIRE(floe_expr_parse(s, "ts >= '2026-10-02T10:00:00Z'", &a, &p, &err) == 0);
    floe_value day1 = floe_value_date((int32_t)floe_days_from_civil(2026, 10, 1));
    floe_value day2 = floe_value_date((int32_t)floe_days_from_civil(2026, 10, 2));
    CHECK(!floe_expr_partition_may_match(p, spec, &day1, 1));
    CHECK(floe_expr_partition_may_match(p, spec, &day2, 1));
    floe_partition_spec_free(spec);
    floe_arena_reset(&a);
    floe_schema_free(s);
}

TEST(test_canonical_values) {
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_error err;
    floe_error_clear(&err);
    floe_buf b;
    floe_buf_init(&b, 0);
    struct {
        const char *type_json, *text;
    } cases[] = {
        {"\"timestamptz\"", "\"2026-10-06T12:00:00.000123Z\""},
        {"\"timestamp\"", "\"1969-12-31T23:59:59.999999\""},
        {"\"date\"", "\"2026-02-28\""},
        {"\"time\"", "\"23:59:59.000001\""},
        {"\"decimal(10, 2)\"", "\"-0.50\""},
        {"\"double\"", "0.1"},
        {"\"double\"", "1e+21"},
        {"\"float\"", "0.10000000149011612"},
        {"\"string\"", "\"a\\\"b\\n\""},
        {"\"uuid\"", "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\""},
        {"\"binary\"", "\"00ff10\""},
        {"\"long\"", "-9223372036854775808"},
        /* the ends of the nanosecond range (the first second overflowed sec * 10^9) */
        {"\"timestamp_ns\"", "\"1677-09-21T00:12:43.145224192\""},
        {"\"timestamptz_ns\"", "\"1677-09-21T00:12:43.999999999Z\""},
        {"\"timestamp_ns\"", "\"2262-04-11T23:47:16.854775807\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char js[256];
        snprintf(js, sizeof js,
                 "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"c\",\"required\":false,"
                 "\"type\":%s}]}",
                 cases[i].type_json);
        floe_schema *s = NULL;
        REQUIRE(floe_schema_parse(js, strlen(js), &s, &err) == 0);
        floe_value v;
        int rc = floe_sv_from_canonical(&s->root.children[0], cases[i].text,
                                        strlen(cases[i].text), &a, &v, &err);
        CHECK_EQ_INT(rc, 0);
        floe_buf_reset(&b);
        if (rc == 0) {
            CHECK(floe_sv_to_canonical(&v, &b) == 0);
            floe_buf_append_byte(&b, 0);
            CHECK_EQ_STR((const char *)b.data, cases[i].text);
        }
        floe_schema_free(s);
    }
    floe_buf_free(&b);
    floe_arena_reset(&a);
}

/* ---------------------------------------------------------------------------------------
 * append + scan
 * ------------------------------------------------------------------------------------- */

TEST(test_append_scan_partitioned) {
    const char *dir = harness_tmpdir();
    floe_catalog *c = open_kind(KIND_SQLITE, dir);
    floe_table *t = create_table(c, "{\"fields\":[{\"source-id\":2,\"transform\":\"identity\","
                                    "\"name\":\"kind\"},{\"source-id\":3,\"transform\":\"day\","
                                    "\"name\":\"ts_day\"}]}",
                                 NULL, 0);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    char *f1 = write_ndjson(dir, "a.ndjson", 0, 30);
    floe_table_append_result res;
    memset(&res, 0, sizeof res);
    REQUIRE(append_ndjson(t, f1, NULL, &res, &err) == 0);
    CHECK_EQ_INT(res.commit.added_records, 30);
    CHECK_EQ_INT(res.commit.added_files, 3); /* id%3 fixes both kind and day */
    int64_t snap1 = res.commit.snapshot_id;
    floe_table_append_result_reset(&res);
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(t));
    REQUIRE(s != NULL);
    CHECK_EQ_STR(s->operation, "append");
    CHECK_EQ_STR(summary(s, "added-records"), "30");
    CHECK_EQ_STR(summary(s, "total-records"), "30");
    CHECK_EQ_STR(summary(s, "changed-partition-count"), "3");
    CHECK_EQ_STR(summary(s, "total-delete-files"), "0");

    char *f2 = write_ndjson(dir, "b.ndjson", 30, 15);
    REQUIRE(append_ndjson(t, f2, NULL, &res, &err) == 0);
    floe_table_append_result_reset(&res);
    s = floe_table_metadata_current_snapshot(floe_table_metadata_get(t));
    CHECK_EQ_STR(summary(s, "total-records"), "45");
    CHECK_EQ_STR(summary(s, "total-data-files"), "6");

    CHECK_EQ_INT(scan_rows(t, NULL, NULL, NULL), 45);
    floe_scan_plan *p = NULL;
    CHECK_EQ_INT(scan_rows(t, "kind = 'b'", NULL, &p), 15);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->stats.files_skipped_partition, 4);
    floe_scan_plan_free(p);
    /* metrics pruning on id, and an exact row filter */
    CHECK_EQ_INT(scan_rows(t, "id >= 40", NULL, &p), 5);
    CHECK(p->stats.files_skipped_metrics >= 3);
    floe_scan_plan_free(p);
    CHECK_EQ_INT(scan_rows(t, "ts < '2026-10-02'", NULL, NULL), 15);
    /* time travel */
    floe_scan_options o;
    memset(&o, 0, sizeof o);
    o.has_snapshot_id = true;
    o.snapshot_id = snap1;
    CHECK_EQ_INT(scan_rows(t, NULL, &o, NULL), 30);
    memset(&o, 0, sizeof o);
    o.has_as_of = true;
    o.as_of_ms = 1000; /* before the first snapshot */
    floe_scan_plan *bad = NULL;
    CHECK(floe_scan_plan_files(t, &o, &bad, &err) == FLOE_ENOTFOUND);
    memset(&o, 0, sizeof o);
    o.has_as_of = true;
    o.as_of_ms = floe_wall_ms() + 1000;
    CHECK_EQ_INT(scan_rows(t, NULL, &o, NULL), 45);
    floe_free(f1);
    floe_free(f2);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(test_manifest_merge) {
    const char *dir = harness_tmpdir();
    floe_catalog *c = open_kind(KIND_FS, dir);
    floe_kv props[] = {{"commit.manifest.min-count-to-merge", "4"}};
    floe_table *t = create_table(c, NULL, props, 1);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    int64_t manifests[8];
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%d.ndjson", i);
        char *f = write_ndjson(dir, name, i * 10, 10);
        floe_table_append_result res;
        memset(&res, 0, sizeof res);
        REQUIRE(append_ndjson(t, f, NULL, &res, &err) == 0);
        manifests[i] = res.commit.manifests;
        floe_table_append_result_reset(&res);
        floe_free(f);
    }
    /* 1, 2, 3 manifests, then the 4th commit merges the four into one, ... */
    CHECK_EQ_INT(manifests[0], 1);
    CHECK_EQ_INT(manifests[2], 3);
    CHECK_EQ_INT(manifests[3], 1);
    CHECK_EQ_INT(manifests[4], 2);
    CHECK_EQ_INT(manifests[6], 1);
    floe_scan_plan *p = NULL;
    CHECK_EQ_INT(scan_rows(t, NULL, NULL, &p), 80);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->ntasks, 8);
    /* entries kept their sequence numbers through the merges */
    bool seen[9] = {0};
    for (size_t i = 0; i < p->ntasks; i++) {
        int64_t sq = p->tasks[i].data_sequence_number;
        CHECK(sq >= 1 && sq <= 8);
        if (sq >= 1 && sq <= 8)
            seen[sq] = true;
    }
    for (int i = 1; i <= 8; i++)
        CHECK(seen[i]);
    floe_scan_plan_free(p);
    /* a point query on id reads one file's worth */
    CHECK_EQ_INT(scan_rows(t, "id = 42", NULL, &p), 1);
    CHECK_EQ_INT(p->ntasks, 1);
    floe_scan_plan_free(p);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(test_once_and_cleanup) {
    const char *dir = harness_tmpdir();
    floe_catalog *c = open_kind(KIND_SQLITE, dir);
    floe_kv props[] = {{"commit.retry.num-retries", "0"}};
    floe_table *t = create_table(c, NULL, props, 1);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    char *f = write_ndjson(dir, "o.ndjson", 0, 5);
    char *md = floe_io_join(floe_table_root(t), "metadata");
    char *data = floe_io_join(floe_table_root(t), "data");
    floe_table_append_result res;
    memset(&res, 0, sizeof res);
    REQUIRE(append_ndjson(t, f, "batch-1", &res, &err) == 0);
    CHECK(!res.commit.noop);
    floe_table_append_result_reset(&res);
    size_t avro = count_files(md, ".avro"), pq = count_files(data, ".parquet");
    CHECK_EQ_INT(avro, 2);
    CHECK_EQ_INT(pq, 1);
    /* the same batch again: nothing committed, nothing left behind */
    REQUIRE(append_ndjson(t, f, "batch-1", &res, &err) == 0);
    CHECK(res.commit.noop);
    floe_table_append_result_reset(&res);
    CHECK_EQ_INT(count_files(md, ".avro"), avro);
    CHECK_EQ_INT(count_files(data, ".parquet"), pq);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 1);

    /* a conflict with no retries left: the append's files are removed */
    floe_commit_fault fault = {.nth_swap = 1, .code = FLOE_ECONFLICT};
    floe_table_commit_inject(&fault);
    CHECK(append_ndjson(t, f, NULL, &res, &err) == FLOE_ECONFLICT);
    floe_table_commit_inject(&(floe_commit_fault){0});
    CHECK_EQ_INT(count_files(md, ".avro"), avro);
    CHECK_EQ_INT(count_files(data, ".parquet"), pq);
    /* unknown state that cannot be resolved: everything written stays */
    fault = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .fail_resolve = true};
    floe_table_commit_inject(&fault);
    CHECK(append_ndjson(t, f, NULL, &res, &err) == FLOE_EUNKNOWN_STATE);
    floe_table_commit_inject(&(floe_commit_fault){0});
    CHECK_EQ_INT(count_files(md, ".avro"), avro + 2);
    CHECK_EQ_INT(count_files(data, ".parquet"), pq + 1);
    floe_free(md);
    floe_free(data);
    floe_free(f);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* ---------------------------------------------------------------------------------------
 * 8 processes x 25 commits
 * ------------------------------------------------------------------------------------- */

#define NPROC 8
#define NCOMMITS 25

/* Each child converts one 2-row file once, then commits 25 copies of it, one per append
 * (the copies are what makes each commit's data file distinct). */
static int child_appends(kind k, const char *dir, int who) {
    floe_catalog *c = open_kind(k, dir);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    if (!c || floe_table_load(c, "db", "t", &t, &err) != 0)
        return 1;
    char name[64];
    snprintf(name, sizeof name, "p%d.ndjson", who);
    char *nd = write_ndjson(dir, name, (int64_t)who * 1000, 2);
    char *outdir = floe_asprintf("%s/src%d", dir, who);
    floe_schema *s = NULL;
    floe_convert_options co;
    floe_convert_options_init(&co);
    floe_convert_result cr;
    memset(&cr, 0, sizeof cr);
    floe_buf file;
    floe_buf_init(&file, 0);
    const char *in[] = {nd};
    int failures = 0;
    int64_t attempts = 0, t0 = floe_now_ns();
    if (floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err) != 0)
        return 1;
    co.schema = s;
    co.out_dir = outdir;
    co.write.output.fsync = false;
    if (floe_convert(in, 1, &co, &cr, &err) != 0 || cr.files != 1 ||
        floe_io_read_all(NULL, cr.file_uris[0], 1 << 20, &file, &err) != 0) {
        fprintf(stderr, "child %d: convert: %s\n", who, err.msg);
        return 1;
    }
    for (int i = 0; i < NCOMMITS; i++) {
        char marker[32];
        snprintf(marker, sizeof marker, "%d-%d", who, i);
        char *path = floe_asprintf("%s/f%d.parquet", outdir, i);
        floe_output_options oo = {.fsync = false};
        floe_arena a;
        floe_arena_init(&a, 4096);
        floe_data_file df;
        floe_append *ap = NULL;
        floe_append_result res;
        memset(&res, 0, sizeof res);
        floe_error_clear(&err);
        /* the table object may be stale: the commit refreshes it on conflict */
        int rc = floe_io_write_all(NULL, path, file.data, file.len, &oo, &err);
        if (rc == 0)
            rc = floe_data_file_from_parquet_footer(NULL, floe_table_metadata_get(t), path, path, NULL,
                                                    0, &a, &df, NULL, &err);
        if (rc == 0)
            rc = floe_append_new(t, &ap, &err);
        if (rc == 0)
            rc = floe_append_add_file(ap, &df, &err);
        if (rc == 0)
            rc = floe_append_set_once(ap, "test.batch", marker, &err);
        if (rc == 0)
            rc = floe_append_commit(ap, &res, &err);
        attempts += res.attempts;
        if (rc != 0 || res.noop) {
            fprintf(stderr, "child %d commit %d: %s\n", who, i, rc ? err.msg : "noop");
            failures++;
        }
        floe_append_result_reset(&res);
        floe_append_free(ap);
        floe_arena_reset(&a);
        floe_free(path);
    }
    if (getenv("TOPS_VERBOSE"))
        fprintf(stderr, "child %d: %d commits, %" PRId64 " attempts, %.1f s\n", who, NCOMMITS,
                attempts, (double)(floe_now_ns() - t0) / 1e9);
    floe_buf_free(&file);
    floe_convert_result_free(&cr);
    floe_schema_free(s);
    floe_free(outdir);
    floe_free(nd);
    floe_table_close(t);
    floe_catalog_close(c);
    return failures ? 1 : 0;
}

static void concurrent(kind k) {
    const char *dir = harness_tmpdir();
    floe_catalog *c = open_kind(k, dir);
    floe_kv props[] = {{"commit.retry.num-retries", "1000"},
                       {"commit.retry.min-wait-ms", "2"},
                       {"commit.retry.max-wait-ms", "100"},
                       {"commit.manifest.min-count-to-merge", "20"}};
    floe_table *t = create_table(c, NULL, props, 4);
    REQUIRE(t != NULL);
    floe_table_close(t);
    floe_catalog_close(c);
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        if (pids[p] == 0)
            _exit(child_appends(k, dir, p));
    }
    int bad = 0;
    for (int p = 0; p < NPROC; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    c = open_kind(k, dir);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE(floe_table_load(c, "db", "t", &t, &err) == 0);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    /* one chain: walking parents from the head visits every snapshot, each marker once */
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    int chain = 0;
    bool seen[NPROC][NCOMMITS];
    memset(seen, 0, sizeof seen);
    int dupes = 0;
    int64_t prev_seq = INT64_MAX;
    while (s && chain <= NPROC * NCOMMITS) {
        chain++;
        CHECK(s->sequence_number < prev_seq);
        prev_seq = s->sequence_number;
        const char *mk = summary(s, "test.batch");
        int w = -1, i = -1;
        if (mk && sscanf(mk, "%d-%d", &w, &i) == 2 && w >= 0 && w < NPROC && i >= 0 &&
            i < NCOMMITS) {
            dupes += seen[w][i];
            seen[w][i] = true;
        }
        s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
    }
    CHECK_EQ_INT(chain, NPROC * NCOMMITS);
    CHECK_EQ_INT((int64_t)m->n_snapshots, NPROC * NCOMMITS);
    CHECK_EQ_INT(dupes, 0);
    char total[24];
    snprintf(total, sizeof total, "%d", NPROC * NCOMMITS * 2);
    CHECK_EQ_STR(summary(floe_table_metadata_current_snapshot(m), "total-records"), total);
    /* no manifest lost: every data file is reachable from the head */
    floe_scan_plan *p = NULL;
    CHECK_EQ_INT(scan_rows(t, NULL, NULL, &p), NPROC * NCOMMITS * 2);
    if (p)
        CHECK_EQ_INT(p->ntasks, NPROC * NCOMMITS);
    floe_scan_plan_free(p);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(test_concurrent_sqlite) { concurrent(KIND_SQLITE); }
TEST(test_concurrent_fs) { concurrent(KIND_FS); }

int main(void) {
    RUN(test_expr_rows_and_pruning);
    RUN(test_canonical_values);
    RUN(test_append_scan_partitioned);
    RUN(test_manifest_merge);
    RUN(test_once_and_cleanup);
    RUN(test_concurrent_sqlite);
    RUN(test_concurrent_fs);
    return harness_finish();
}
