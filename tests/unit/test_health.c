/*
 * test_health.c - floe health: the figures of small tables built here with the manifest
 * and metadata layers (data files need not exist: health reads metadata only), the JSON
 * structure, the recommendations and their order, the conformance tables, and the HTML
 * report rendered in headless Chromium.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "floe/catalog.h"
#include "floe/health.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/partition.h"
#include "floe/rewrite.h"
#include "floe/schema.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_table.h"
#include "common/testing.h"

#define MiB (1LL << 20)
#define DAY_MS 86400000LL

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"event_type\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"id\",\"required\":false,\"type\":\"long\"}]}";
static const char spec_json[] =
    "{\"fields\":[{\"source-id\":1,\"transform\":\"identity\",\"name\":\"event_type\"},"
    "{\"source-id\":2,\"transform\":\"day\",\"name\":\"ts_day\"}]}";

/* 2026-10-06 as days since the epoch. */
static int32_t day0(void) { return (int32_t)floe_days_from_civil(2026, 10, 6); }

/* ---------------------------------------------------------------------------------------
 * Building tables
 * ------------------------------------------------------------------------------------- */
typedef struct fake_file {
    floe_file_content content;
    const char *event_type;
    int32_t day;
    int64_t size;
    int row_groups;
} fake_file;

typedef struct commit_ctx {
    floe_table *t;
    const fake_file *files;
    size_t n;
    int64_t ts_ms;
    int64_t snapshot_id; /* out */
} commit_ctx;

static int write_manifest(floe_table *t, const floe_table_metadata *m, const fake_file *files,
                          size_t n, floe_manifest_content content, floe_arena *a,
                          floe_manifest_file *out, floe_error *err) {
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    char *dir = NULL, *path = NULL;
    int rc = floe_schema_parse(floe_table_metadata_current_schema(m)->json,
                               strlen(floe_table_metadata_current_schema(m)->json), &schema, err);
    if (rc == 0)
        rc = floe_partition_spec_parse_json(floe_table_metadata_default_spec(m)->json,
                                            strlen(floe_table_metadata_default_spec(m)->json),
                                            schema, &spec, err);
    if (rc < 0)
        goto done;
    dir = floe_io_join(floe_table_root(t), "metadata");
    path = floe_manifest_path_new(dir, NULL, (int)content);
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.content = content;
    o.schema = schema;
    o.spec = spec;
    floe_manifest_writer *w = NULL;
    rc = floe_manifest_writer_open(NULL, path, &o, &w, err);
    if (rc < 0)
        goto done;
    static int seq;
    for (size_t i = 0; i < n; i++) {
        const fake_file *ff = &files[i];
        if ((ff->content == FLOE_CONTENT_DATA) != (content == FLOE_MANIFEST_DATA))
            continue;
        char fp[256];
        snprintf(fp, sizeof fp, "%s/data/f%d.parquet", floe_table_root(t), ++seq);
        floe_value part[2] = {floe_value_string(ff->event_type, strlen(ff->event_type)),
                              floe_value_date(ff->day)};
        int64_t offsets[8];
        for (int k = 0; k < ff->row_groups && k < 8; k++)
            offsets[k] = 4 + k * 1000;
        int64_t lo = 7, hi = 99;
        uint8_t lob[8], hib[8];
        floe_store_le64(lob, (uint64_t)lo);
        floe_store_le64(hib, (uint64_t)hi);
        floe_column_bound lbs[1] = {{3, lob, 8}}, ubs[1] = {{3, hib, 8}};
        floe_data_file df = {0};
        df.content = ff->content;
        df.file_path = fp;
        df.file_format = "parquet";
        df.partition = part;
        df.npartition = 2;
        df.record_count = ff->size / 100 + 1;
        df.file_size_in_bytes = ff->size;
        df.lower_bounds = (floe_bound_map){true, lbs, 1};
        df.upper_bounds = (floe_bound_map){true, ubs, 1};
        if (ff->row_groups > 1) {
            df.has_split_offsets = true;
            df.split_offsets = offsets;
            df.nsplit_offsets = (size_t)ff->row_groups;
        }
        int32_t eq_ids[1] = {3};
        if (ff->content == FLOE_CONTENT_EQUALITY_DELETES) {
            df.has_equality_ids = true;
            df.equality_ids = eq_ids;
            df.nequality_ids = 1;
        }
        rc = floe_manifest_writer_add(w, &df, -1, err);
        if (rc < 0) {
            floe_manifest_writer_abort(w);
            goto done;
        }
    }
    rc = floe_manifest_writer_close(w, NULL, a, out, err);
done:
    floe_free(dir);
    floe_free(path);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    return rc;
}

static int apply_commit(void *ctx, floe_metadata_builder *b, floe_error *err) {
    commit_ctx *c = ctx;
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    floe_arena a;
    floe_arena_init(&a, 1 << 16);
    floe_manifest_file files[64];
    size_t nf = 0;
    char *dir = NULL, *lpath = NULL;
    int rc = 0;
    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    if (cur) {
        char *uri = NULL;
        floe_manifest_list ml;
        rc = floe_table_resolve_path(c->t, cur->manifest_list, &uri, err);
        if (rc == 0)
            rc = floe_manifest_list_read(NULL, uri, NULL, &a, &ml, err);
        floe_free(uri);
        if (rc < 0)
            goto done;
        for (size_t i = 0; i < ml.nfiles && nf < 60; i++)
            files[nf++] = ml.files[i];
    }
    bool has_data = false, has_del = false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->files[i].content == FLOE_CONTENT_DATA)
            has_data = true;
        else
            has_del = true;
    }
    if (has_data) {
        rc = write_manifest(c->t, m, c->files, c->n, FLOE_MANIFEST_DATA, &a, &files[nf++], err);
        if (rc < 0)
            goto done;
    }
    if (has_del) {
        rc = write_manifest(c->t, m, c->files, c->n, FLOE_MANIFEST_DELETES, &a, &files[nf++], err);
        if (rc < 0)
            goto done;
    }
    int64_t sid = floe_metadata_new_snapshot_id();
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    dir = floe_io_join(floe_table_root(c->t), "metadata");
    lpath = floe_manifest_list_path_new(dir, sid, 1, NULL);
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = sid;
    lo.has_parent = cur != NULL;
    lo.parent_snapshot_id = cur ? cur->snapshot_id : 0;
    lo.sequence_number = seq;
    rc = floe_manifest_list_write(NULL, lpath, &lo, files, nf, NULL, NULL, err);
    if (rc < 0)
        goto done;
    floe_snapshot_new sn = {.snapshot_id = sid,
                            .operation = has_data ? "append" : "overwrite",
                            .manifest_list = lpath,
                            .timestamp_ms = c->ts_ms,
                            .schema_id = -1};
    rc = floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err);
    if (rc == 0)
        c->snapshot_id = sid;
done:
    floe_free(dir);
    floe_free(lpath);
    floe_arena_reset(&a);
    return rc;
}

static int64_t commit_files(floe_table *t, const fake_file *files, size_t n, int64_t ts_ms) {
    floe_error err;
    commit_ctx c = {.t = t, .files = files, .n = n, .ts_ms = ts_ms};
    int rc = floe_table_commit(t, apply_commit, &c, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "commit: %s", err.msg);
    return c.snapshot_id;
}

typedef struct built {
    floe_catalog *cat;
    floe_table *t;
    int64_t now_ms;
    int64_t s1, s2, s3;
} built;

/* The table the number tests use:
 *   s1 (10 days old): orders/D 6 x 100 KB; clicks/D 200 MB (2 row groups), 600 MB (3)
 *   s2 (8 days old):  orders/D 5 MB; views/D+1 3 x 20 MB
 *   s3 (1 day old):   views/D+1 80 MB; a position delete (1 KB) in clicks/D */
static void build_table(built *bt, const char *props_key, const char *props_val) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char db[4096], wh[4096];
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/warehouse", dir);
    memset(bt, 0, sizeof *bt);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &bt->cat, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(bt->cat, "ns", NULL, NULL, 0, &err), err);
    floe_kv props[1] = {{props_key, props_val}};
    floe_table_create_options co = {.spec_json = spec_json, .props = props,
                                    .nprops = props_key ? 1 : 0};
    REQUIRE_OK(floe_table_create(bt->cat, "ns", "t", schema_json, &co, &bt->t, &err), err);
    bt->now_ms = floe_wall_ms();
    int32_t d = day0();
    fake_file f1[8] = {
        {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1}, {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1},
        {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1}, {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1},
        {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1}, {FLOE_CONTENT_DATA, "orders", d, 100 * 1024, 1},
        {FLOE_CONTENT_DATA, "clicks", d, 200 * MiB, 2},  {FLOE_CONTENT_DATA, "clicks", d, 600 * MiB, 3},
    };
    bt->s1 = commit_files(bt->t, f1, 8, bt->now_ms - 10 * DAY_MS);
    fake_file f2[4] = {
        {FLOE_CONTENT_DATA, "orders", d, 5 * MiB, 1},
        {FLOE_CONTENT_DATA, "views", d + 1, 20 * MiB, 1},
        {FLOE_CONTENT_DATA, "views", d + 1, 20 * MiB, 1},
        {FLOE_CONTENT_DATA, "views", d + 1, 20 * MiB, 1},
    };
    bt->s2 = commit_files(bt->t, f2, 4, bt->now_ms - 8 * DAY_MS);
    fake_file f3[2] = {
        {FLOE_CONTENT_DATA, "views", d + 1, 80 * MiB, 1},
        {FLOE_CONTENT_POSITION_DELETES, "clicks", d, 1024, 1},
    };
    bt->s3 = commit_files(bt->t, f3, 2, bt->now_ms - 1 * DAY_MS);
}

static void free_built(built *bt) {
    floe_table_close(bt->t);
    floe_catalog_close(bt->cat);
}

static const floe_health_partition *find_part(const floe_health_view *v, const char *prefix) {
    for (size_t i = 0; i < v->npartitions; i++)
        if (!strncmp(v->partitions[i].path, prefix, strlen(prefix)))
            return &v->partitions[i];
    return NULL;
}

static floe_health_report *analyze(built *bt, int runs, bool compare) {
    floe_error err;
    floe_health_options o;
    floe_health_options_init(&o);
    o.table_ref = "ns.t";
    o.timing_runs = runs;
    o.now_ms = bt->now_ms;
    if (compare) {
        o.has_compare_id = true;
        o.compare_id = bt->s1;
    }
    floe_health_report *r = NULL;
    int rc = floe_health_analyze(bt->t, &o, &r, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "analyze: %s", err.msg);
    return r;
}

/* ---------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------- */
TEST(test_buckets) {
    CHECK_EQ_INT(floe_health_bucket_of(0), 0);
    CHECK_EQ_INT(floe_health_bucket_of(MiB - 1), 0);
    CHECK_EQ_INT(floe_health_bucket_of(MiB), 1);
    CHECK_EQ_INT(floe_health_bucket_of(10 * MiB - 1), 1);
    CHECK_EQ_INT(floe_health_bucket_of(10 * MiB), 2);
    CHECK_EQ_INT(floe_health_bucket_of(64 * MiB), 3);
    CHECK_EQ_INT(floe_health_bucket_of(128 * MiB - 1), 3);
    CHECK_EQ_INT(floe_health_bucket_of(128 * MiB), 4);
    CHECK_EQ_INT(floe_health_bucket_of(512 * MiB - 1), 4);
    CHECK_EQ_INT(floe_health_bucket_of(512 * MiB), 5);
    CHECK_EQ_INT(floe_health_bucket_of(INT64_MAX), 5);
}

TEST(test_escape_and_quote) {
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_health_html_escape(&b, "<a href=\"x\">&'</a>") == 0);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK_EQ_STR((const char *)b.data, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    floe_buf_reset(&b);
    REQUIRE(floe_health_shell_quote(&b, "ns.t") == 0);
    REQUIRE(floe_health_shell_quote(&b, " event_type = 'x'") == 0);
    REQUIRE(floe_health_shell_quote(&b, " $HOME's") == 0);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK_EQ_STR((const char *)b.data, "ns.t\" event_type = 'x'\"' $HOME'\\''s'");
    /* control characters from partition values another engine wrote: a $'...' word that
     * stays one line and keeps the terminal safe; in HTML, shown as \xHH text */
    floe_buf_reset(&b);
    REQUIRE(floe_health_shell_quote(&b, "k = 'a\033[2J\nb\\'") == 0);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK_EQ_STR((const char *)b.data, "$'k = \\'a\\x1b[2J\\x0ab\\\\\\''");
    floe_buf_reset(&b);
    REQUIRE(floe_health_html_escape(&b, "a\033[2J\x7f<\n") == 0);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK_EQ_STR((const char *)b.data, "a\\x1b[2J\\x7f&lt;\n");
    floe_buf_free(&b);
}

TEST(test_numbers) {
    built bt;
    build_table(&bt, NULL, NULL);
    floe_health_report *r = analyze(&bt, 3, false);
    REQUIRE(r);
    const floe_health_view *v = &r->current;
    CHECK(v->has_snapshot);
    CHECK_EQ_INT(v->snapshot_id, bt.s3);
    CHECK_EQ_INT(r->target_file_size, 512 * MiB);
    CHECK_EQ_INT(r->min_file_size, 384 * MiB);
    /* Totals and histogram. */
    CHECK_EQ_INT(v->total.data_files, 13);
    CHECK_EQ_INT(v->total.data_bytes, 6 * 100 * 1024 + 5 * MiB + 60 * MiB + 80 * MiB + 800 * MiB);
    int64_t want[FLOE_HEALTH_NBUCKETS] = {6, 1, 3, 1, 1, 1};
    for (int i = 0; i < FLOE_HEALTH_NBUCKETS; i++)
        CHECK_EQ_INT(v->total.buckets[i], want[i]);
    CHECK_EQ_INT(v->total.bucket_bytes[5], 600 * MiB);
    CHECK_EQ_INT(v->total.small_files, 12);
    CHECK_EQ_INT(v->total.row_groups, 6 + 1 + 2 + 3 + 3 + 1);
    CHECK_EQ_INT(v->total.pos_delete_files, 1);
    CHECK_EQ_INT(v->total.pos_delete_bytes, 1024);
    CHECK_EQ_INT(v->total.eq_delete_files, 0);
    /* Partitions, by data files. */
    REQUIRE(v->npartitions == 3);
    CHECK(!strncmp(v->partitions[0].path, "event_type=orders/ts_day=2026-10-06", 40));
    CHECK(!strncmp(v->partitions[1].path, "event_type=views/ts_day=2026-10-07", 40));
    CHECK(!strncmp(v->partitions[2].path, "event_type=clicks/ts_day=2026-10-06", 40));
    const floe_health_partition *orders = find_part(v, "event_type=orders");
    const floe_health_partition *clicks = find_part(v, "event_type=clicks");
    const floe_health_partition *views = find_part(v, "event_type=views");
    REQUIRE(orders && clicks && views);
    CHECK_EQ_INT(orders->files.data_files, 7);
    CHECK_EQ_INT(orders->files.small_files, 7);
    CHECK_EQ_INT(orders->files.buckets[0], 6);
    CHECK_EQ_INT(orders->files.buckets[1], 1);
    CHECK_EQ_INT(clicks->files.data_files, 2);
    CHECK_EQ_INT(clicks->files.small_files, 1);
    CHECK_EQ_INT(clicks->files.pos_delete_files, 1);
    CHECK_EQ_INT(views->files.data_files, 4);
    CHECK_EQ_INT(views->files.buckets[2], 3);
    CHECK_EQ_INT(views->files.buckets[3], 1);
    CHECK_EQ_STR(orders->where,
                 "event_type = 'orders' AND ts >= '2026-10-06' AND ts < '2026-10-07'");
    /* Metadata. */
    CHECK_EQ_INT(v->meta.manifests, 4);
    CHECK_EQ_INT(v->meta.data_manifests, 3);
    CHECK_EQ_INT(v->meta.delete_manifests, 1);
    CHECK_EQ_INT(v->meta.manifest_entries, 14);
    CHECK(v->meta.manifest_bytes > 0);
    CHECK(v->meta.manifest_list_bytes > 0);
    CHECK(v->meta.metadata_json_bytes > 0);
    CHECK_EQ_INT(v->meta.snapshots, 3);
    CHECK_EQ_INT(v->meta.oldest_age_ms, 10 * DAY_MS);
    CHECK_EQ_INT(v->meta.manifest_lists, 3);
    CHECK_EQ_INT(v->meta.ideal_manifests, 1);
    /* Request model: plan = 2 + manifests; scan = files + row groups (deletes too). */
    CHECK_EQ_INT(v->req.plan_get, 6);
    CHECK_EQ_INT(v->req.plan_list, 0);
    CHECK_EQ_INT(v->req.scan_get, 13 + 16 + 1 + 1);
    double month = 100.0 * 30;
    CHECK(v->req.monthly_get == month * 37);
    CHECK(v->req.monthly_cost > 0.0444 - 1e-9 && v->req.monthly_cost < 0.0444 + 1e-9);
    /* Point query: event_type = 'orders' reads the two manifests holding orders. */
    CHECK_EQ_STR(v->point_filter, "event_type = 'orders'");
    CHECK_EQ_INT(v->req.point_manifests, 2);
    CHECK_EQ_INT(v->req.point_files, 7);
    CHECK_EQ_INT(v->req.point_plan_get, 4);
    CHECK_EQ_INT(v->req.point_scan_get, 14);
    CHECK_EQ_INT(v->timing.runs, 3);
    CHECK(v->timing.full_ns > 0 && v->timing.point_ns > 0);
    CHECK(v->timing.full_min_ns <= v->timing.full_ns && v->timing.full_ns <= v->timing.full_max_ns);
    /* History. */
    REQUIRE(r->nhistory == 3);
    CHECK_EQ_INT(r->history[0].snapshot_id, bt.s1);
    CHECK_EQ_INT(r->history[0].manifests, 1);
    CHECK_EQ_INT(r->history[0].data_files, 8);
    CHECK_EQ_INT(r->history[1].manifests, 2);
    CHECK_EQ_INT(r->history[1].data_files, 12);
    CHECK_EQ_INT(r->history[2].manifests, 4);
    CHECK_EQ_INT(r->history[2].data_files, 13);
    CHECK_EQ_INT(r->history[2].delete_files, 1);
    /* Recommendations: rewrite orders (saves 14 - 2 GETs per scan), then expire s1, s2.
     * clicks (2 files, a delete) would not get cheaper to scan; views has 4 small files,
     * under min-input-files; 3 data manifests is no reason to rewrite them. */
    REQUIRE(r->nrecs == 2);
    CHECK_EQ_INT(r->recs[0].kind, FLOE_HEALTH_REC_REWRITE_PARTITION);
    CHECK_EQ_STR(r->recs[0].command,
                 "floe rewrite ns.t --where \"event_type = 'orders' AND ts >= '2026-10-06' "
                 "AND ts < '2026-10-07'\"");
    CHECK_EQ_INT(r->recs[0].requests_saved, 12);
    CHECK_EQ_INT(r->recs[0].files_before, 7);
    CHECK_EQ_INT(r->recs[0].files_after, 1);
    CHECK(r->recs[0].monthly_requests_saved == 12 * month);
    CHECK(r->recs[0].metadata_bytes_saved > 0);
    CHECK_EQ_INT(r->recs[1].kind, FLOE_HEALTH_REC_EXPIRE);
    CHECK_EQ_STR(r->recs[1].command, "floe expire ns.t --retain-last 1");
    CHECK_EQ_INT(r->recs[1].files_before, 3);
    CHECK_EQ_INT(r->recs[1].files_after, 1);
    CHECK(r->recs[1].metadata_bytes_saved > 0);
    floe_health_report_free(r);
    free_built(&bt);
}

TEST(test_compare_and_snapshot) {
    built bt;
    build_table(&bt, NULL, NULL);
    floe_health_report *r = analyze(&bt, 0, true);
    REQUIRE(r);
    REQUIRE(r->has_compare);
    CHECK_EQ_INT(r->compare.snapshot_id, bt.s1);
    CHECK_EQ_INT(r->compare.total.data_files, 8);
    CHECK_EQ_INT(r->compare.total.buckets[0], 6);
    CHECK_EQ_INT(r->compare.meta.manifests, 1);
    CHECK_EQ_INT(r->compare.meta.snapshots, 1);
    CHECK_EQ_INT(r->compare.req.plan_get, 3);
    CHECK_EQ_INT(r->compare.npartitions, 2);
    CHECK_EQ_INT(r->current.total.data_files, 13);
    CHECK_EQ_INT(r->current.timing.runs, 0);
    floe_health_report_free(r);

    /* --snapshot: the figures at s2. */
    floe_error err;
    floe_health_options o;
    floe_health_options_init(&o);
    o.timing_runs = 1;
    o.has_snapshot_id = true;
    o.snapshot_id = bt.s2;
    REQUIRE_OK(floe_health_analyze(bt.t, &o, &r, &err), err);
    CHECK_EQ_INT(r->current.total.data_files, 12);
    CHECK_EQ_INT(r->current.meta.snapshots, 2);
    floe_health_report_free(r);
    o.snapshot_id = 12345;
    CHECK(floe_health_analyze(bt.t, &o, &r, &err) == FLOE_ENOTFOUND);
    o.has_snapshot_id = false;
    o.queries_per_day = -1;
    CHECK(floe_health_analyze(bt.t, &o, &r, &err) == FLOE_EINVALID);
    free_built(&bt);
}

/* A smaller target moves the rewrite minimum, and many manifests ask for a rewrite. */
TEST(test_target_and_manifests) {
    built bt;
    build_table(&bt, "write.target-file-size-bytes", "16777216"); /* 16 MiB -> min 12 MiB */
    int32_t d = day0();
    for (int i = 0; i < 4; i++) {
        fake_file f = {FLOE_CONTENT_DATA, "pings", d, 2 * MiB, 1};
        commit_files(bt.t, &f, 1, bt.now_ms - 1000 * (10 - i));
    }
    floe_health_report *r = analyze(&bt, 0, false);
    REQUIRE(r);
    CHECK_EQ_INT(r->min_file_size, 12 * MiB);
    /* Under 12 MiB: 6 x 100 KB, 5 MB, 4 x 2 MB. */
    CHECK_EQ_INT(r->current.total.small_files, 11);
    CHECK_EQ_INT(r->current.meta.data_manifests, 7);
    /* 7 tiny data manifests where 1 would do: rewrite-manifests, 6 GETs per plan. */
    const floe_health_rec *rm = NULL;
    for (size_t i = 0; i < r->nrecs; i++)
        if (r->recs[i].kind == FLOE_HEALTH_REC_REWRITE_MANIFESTS)
            rm = &r->recs[i];
    REQUIRE(rm);
    CHECK_EQ_STR(rm->command, "floe rewrite-manifests ns.t");
    CHECK_EQ_INT(rm->requests_saved, 6);
    /* Ordered by requests saved: each is no smaller than the next. */
    for (size_t i = 1; i < r->nrecs; i++)
        CHECK(r->recs[i - 1].monthly_requests_saved >= r->recs[i].monthly_requests_saved);
    /* The views partition (20, 20, 20, 80 MB) now has no small file; orders and pings
     * (4 files < 5) have: only orders is rewritten. */
    size_t rewrites = 0;
    for (size_t i = 0; i < r->nrecs; i++)
        if (r->recs[i].kind == FLOE_HEALTH_REC_REWRITE_PARTITION) {
            rewrites++;
            CHECK(strstr(r->recs[i].command, "orders") != NULL);
        }
    CHECK_EQ_INT(rewrites, 1);
    floe_health_report_free(r);
    free_built(&bt);
}

/* Churn: appends and a compaction of them, nothing expired: write amplification is the
 * rewrite's output over the appended bytes, the disk holds both (the replaced files stay
 * for the snapshots that reach them), and JSON and text say so. */
TEST(test_churn) {
    static const char schema[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                                 "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                                 "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    harness_table e;
    harness_table_open(&e, "c", schema, NULL, NULL, NULL, 0);
    for (int k = 0; k < 4; k++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        for (int i = 0; i < 200; i++)
            floe_buf_printf(&b, "{\"id\":%d,\"s\":\"row %d of batch %d\"}\n", k * 1000 + i, i, k);
        harness_table_append_ndjson(&e, k, &b);
        floe_buf_free(&b);
    }
    floe_error err;
    floe_health_options o;
    floe_health_options_init(&o);
    o.timing_runs = 0;
    floe_health_report *r = NULL;
    REQUIRE_OK(floe_health_analyze(e.t, &o, &r, &err), err);
    int64_t appended = r->churn.bytes_appended;
    CHECK_EQ_INT(r->churn.writer_commits, 4);
    CHECK_EQ_INT(r->churn.rewrite_commits, 0);
    CHECK(appended > 0 && appended == r->churn.live_bytes);
    CHECK(r->churn.write_amplification == 0);
    CHECK(r->churn.listed);
    CHECK_EQ_INT(r->churn.disk_data_bytes, appended);
    CHECK_EQ_INT(r->churn.disk_data_files, 4);
    CHECK(r->churn.disk_metadata_bytes > 0);
    CHECK(r->churn.storage_amplification == 1.0);
    floe_health_report_free(r);

    floe_rewrite_options ro;
    floe_rewrite_options_init(&ro);
    ro.min_input_files = 2;
    ro.fsync = false;
    floe_rewrite_result rr;
    REQUIRE_OK(floe_rewrite(e.t, &ro, &rr, &err), err);
    REQUIRE(rr.commits == 1);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    REQUIRE_OK(floe_health_analyze(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r->churn.rewrite_commits, 1);
    CHECK_EQ_INT(r->churn.bytes_appended, appended);
    CHECK_EQ_INT(r->churn.bytes_rewritten, rr.bytes_written);
    CHECK_EQ_INT(r->churn.live_bytes, rr.bytes_written);
    CHECK(r->churn.write_amplification > 0 &&
          fabs(r->churn.write_amplification - (double)rr.bytes_written / (double)appended) < 1e-9);
    CHECK_EQ_INT(r->churn.disk_data_bytes, appended + rr.bytes_written);
    CHECK(fabs(r->churn.storage_amplification -
               (double)(appended + rr.bytes_written) / (double)rr.bytes_written) < 1e-9);
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE_OK(floe_health_report_json(r, &b, &err), err);
    json_error_t je;
    json_t *root = json_loadb((const char *)b.data, b.len, 0, &je);
    REQUIRE(root != NULL);
    json_t *ch = json_object_get(root, "churn");
    CHECK(json_is_object(ch));
    CHECK_EQ_INT(json_integer_value(json_object_get(ch, "bytes_rewritten")), rr.bytes_written);
    CHECK(json_is_number(json_object_get(ch, "write_amplification")));
    CHECK(json_is_number(json_object_get(ch, "storage_amplification")));
    json_decref(root);
    floe_buf_reset(&b);
    REQUIRE_OK(floe_health_report_text(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK(strstr((const char *)b.data, "write amplification") != NULL);
    CHECK(strstr((const char *)b.data, "storage amplification (disk / live)") != NULL);
    floe_buf_free(&b);
    floe_health_report_free(r);
    /* a window that ends before the commits counts nothing; no listing, no disk figures */
    o.now_ms = floe_wall_ms() + 3 * 3600000LL;
    o.no_listing = true;
    REQUIRE_OK(floe_health_analyze(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r->churn.writer_commits, 0);
    CHECK(r->churn.write_amplification < 0);
    CHECK(!r->churn.listed);
    CHECK(r->churn.storage_amplification < 0);
    floe_health_report_free(r);
    harness_table_close(&e);
}

TEST(test_json_structure) {
    built bt;
    build_table(&bt, NULL, NULL);
    floe_health_report *r = analyze(&bt, 1, true);
    REQUIRE(r);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    REQUIRE_OK(floe_health_report_json(r, &b, &err), err);
    json_error_t je;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &je);
    if (!j)
        harness_fail(__FILE__, __LINE__, "JSON does not parse: %s at %d", je.text, je.position);
    REQUIRE(j);
    CHECK_EQ_STR(json_string_value(json_object_get(j, "table")), "ns.t");
    json_t *set = json_object_get(j, "settings");
    CHECK_EQ_INT(json_integer_value(json_object_get(set, "min_file_size")), 384 * MiB);
    CHECK(json_is_string(json_object_get(set, "request_model")));
    CHECK_EQ_INT(json_array_size(json_object_get(set, "buckets")), 6);
    json_t *cur = json_object_get(j, "current");
    json_t *files = json_object_get(cur, "files");
    CHECK_EQ_INT(json_integer_value(json_object_get(files, "data_files")), 13);
    CHECK_EQ_INT(json_integer_value(json_object_get(files, "small_files")), 12);
    json_t *hist = json_object_get(files, "histogram");
    REQUIRE(json_array_size(hist) == 6);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(hist, 0), "label")), "< 1 MB");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(hist, 0), "files")), 6);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(json_object_get(files,
                 "delete_files"), "position"), "files")), 1);
    json_t *parts = json_object_get(cur, "partitions");
    CHECK_EQ_INT(json_integer_value(json_object_get(cur, "partition_count")), 3);
    REQUIRE(json_array_size(parts) == 3);
    json_t *p0 = json_array_get(parts, 0);
    CHECK(json_is_string(json_object_get(p0, "where")));
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(p0, "files"), "data_files")), 7);
    json_t *meta = json_object_get(cur, "metadata");
    CHECK_EQ_INT(json_integer_value(json_object_get(meta, "manifests")), 4);
    CHECK_EQ_INT(json_integer_value(json_object_get(meta, "snapshots")), 3);
    json_t *req = json_object_get(cur, "requests");
    json_t *full = json_object_get(req, "full_scan");
    CHECK_EQ_INT(json_integer_value(json_object_get(full, "plan_get")), 6);
    CHECK_EQ_INT(json_integer_value(json_object_get(full, "scan_get")), 31);
    CHECK_EQ_INT(json_integer_value(json_object_get(full, "total_get")), 37);
    CHECK(json_is_number(json_object_get(full, "monthly_cost_usd")));
    json_t *point = json_object_get(req, "point_query");
    CHECK_EQ_STR(json_string_value(json_object_get(point, "filter")), "event_type = 'orders'");
    CHECK_EQ_INT(json_integer_value(json_object_get(point, "manifests_read")), 2);
    json_t *plan = json_object_get(cur, "planning");
    CHECK_EQ_INT(json_integer_value(json_object_get(plan, "runs")), 1);
    CHECK(json_number_value(json_object_get(plan, "full_scan_ms")) > 0);
    json_t *cmp = json_object_get(j, "compare");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(cmp, "files"), "data_files")), 8);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "history")), 3);
    json_t *recs = json_object_get(j, "recommendations");
    REQUIRE(json_array_size(recs) == 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(recs, 0), "kind")), "rewrite-partition");
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(recs, 1), "kind")), "expire");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(recs, 0), "requests_saved_per_scan")), 12);
    json_decref(j);

    /* Text: the headline figures and the commands. */
    floe_buf_reset(&b);
    REQUIRE_OK(floe_health_report_text(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    const char *txt = (const char *)b.data;
    CHECK(strstr(txt, "floe rewrite ns.t --where") != NULL);
    CHECK(strstr(txt, "floe expire ns.t --retain-last 1") != NULL);
    CHECK(strstr(txt, "request model:") != NULL);
    floe_buf_free(&b);
    floe_health_report_free(r);
    free_built(&bt);
}

/* Table-derived strings are escaped in the page; the page has charts and no script. */
TEST(test_html_escaping) {
    built bt;
    build_table(&bt, NULL, NULL);
    int32_t d = day0();
    fake_file evil[5];
    for (int i = 0; i < 5; i++)
        evil[i] = (fake_file){FLOE_CONTENT_DATA, "<script>alert(1)</script>", d, 1000, 1};
    commit_files(bt.t, evil, 5, bt.now_ms - 1000);
    floe_error err;
    floe_health_options o;
    floe_health_options_init(&o);
    o.table_ref = "ns.<b>t</b>";
    o.timing_runs = 1;
    floe_health_report *r = NULL;
    REQUIRE_OK(floe_health_analyze(bt.t, &o, &r, &err), err);
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE_OK(floe_health_report_html(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    const char *page = (const char *)b.data;
    CHECK(strstr(page, "<script") == NULL);
    CHECK(strstr(page, "<b>t</b>") == NULL);
    CHECK(strstr(page, "ns.&lt;b&gt;t&lt;/b&gt;") != NULL);
    CHECK(strstr(page, "http://") == NULL && strstr(page, "https://") == NULL);
    int svgs = 0;
    for (const char *p = page; (p = strstr(p, "<svg")) != NULL; p++)
        svgs++;
    CHECK_EQ_INT(svgs, 5); /* histogram, partitions, 3 growth panels */
    floe_buf_free(&b);
    floe_health_report_free(r);
    free_built(&bt);
}

/* ---------------------------------------------------------------------------------------
 * Conformance tables (read-only: health writes nothing)
 * ------------------------------------------------------------------------------------- */
static floe_health_report *analyze_path(const char *rel) {
    floe_error err;
    floe_table *t = NULL;
    int rc = floe_table_open_path(harness_conformance(rel), NULL, &t, &err);
    if (rc != 0) {
        harness_fail(__FILE__, __LINE__, "open %s: %s", rel, err.msg);
        return NULL;
    }
    floe_health_options o;
    floe_health_options_init(&o);
    o.timing_runs = 1;
    floe_health_report *r = NULL;
    rc = floe_health_analyze(t, &o, &r, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "analyze %s: %s", rel, err.msg);
    floe_table_close(t);
    return r;
}

TEST(test_conformance_tables) {
    /* 5000 entries in one manifest, files of unknown size: metadata only. */
    floe_health_report *r = analyze_path("iceberg/duckdb-iceberg/generated_bounds");
    REQUIRE(r);
    CHECK_EQ_INT(r->current.total.data_files, 5000);
    CHECK_EQ_INT(r->current.meta.manifests, 1);
    CHECK(r->current.meta.manifest_bytes > 800000); /* manifest_length is 0: the file's size */
    CHECK_EQ_INT(r->current.req.plan_get, 3);
    CHECK_EQ_INT(r->current.req.plan_list, 0); /* version-hint.text present */
    floe_health_report_free(r);

    /* Partition evolution: two specs, both in use. */
    r = analyze_path("iceberg/duckdb-iceberg/hive_partitioned_table");
    REQUIRE(r);
    CHECK_EQ_INT(r->current.total.data_files, 6);
    bool spec0 = false, spec1 = false;
    for (size_t i = 0; i < r->current.npartitions; i++) {
        if (r->current.partitions[i].spec_id == 0)
            spec0 = true;
        if (r->current.partitions[i].spec_id == 1) {
            spec1 = true;
            CHECK(strstr(r->current.partitions[i].path, "event_type=") != NULL);
        }
    }
    CHECK(spec0 && spec1);
    floe_health_report_free(r);

    /* An equality delete file (and a position delete file). */
    r = analyze_path("iceberg/icebird/java_bunnies");
    REQUIRE(r);
    CHECK_EQ_INT(r->current.total.eq_delete_files, 1);
    CHECK(r->current.total.eq_delete_bytes > 0);
    CHECK_EQ_INT(r->current.total.pos_delete_files, 1);
    floe_health_report_free(r);
    /* A snapshot id past the signed 64-bit range: the table is refused, naming it. */
    floe_table *bad = NULL;
    floe_error berr;
    CHECK_EQ_INT(floe_table_open_path(harness_conformance("iceberg/duckdb-iceberg/"
                                                          "equality_delete_extra_column/"
                                                          "warehouse/ns/t"),
                                      NULL, &bad, &berr),
                 FLOE_ECORRUPT);
    CHECK(strstr(berr.msg, "\"current-snapshot-id\" is 9876543210123456789") != NULL);

    /* Format v1, gzip metadata, no version hint: found by listing. */
    r = analyze_path("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz_no_hint");
    REQUIRE(r);
    CHECK_EQ_INT(r->format_version, 1);
    CHECK(r->current.total.data_files >= 1);
    CHECK_EQ_INT(r->current.req.plan_list, 1);
    floe_health_report_free(r);

    /* A deletion vector (format v3): counted apart from position delete files; planning
     * pairs it without reading it (this one is a bare blob, which a scan refuses). */
    r = analyze_path("iceberg/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/"
                     "legacy_bare_deletion_vector");
    REQUIRE(r);
    CHECK(r->current.planning_error == NULL);
    CHECK_EQ_INT(r->current.total.data_files, 1);
    CHECK_EQ_INT(r->current.total.pos_delete_files, 0);
    CHECK_EQ_INT(r->current.total.dv_count, 1);
    CHECK_EQ_INT(r->current.total.dv_bytes, 42);
    CHECK_EQ_INT(r->current.total.dv_records, 1);
    floe_health_report_free(r);

    /* A timestamptz identity partition: the point query the planner runs. */
    r = analyze_path("iceberg/duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz");
    REQUIRE(r);
    CHECK_EQ_STR(r->current.point_filter, "partition_col = '2023-05-15T14:30:45.000000+00:00'");
    CHECK(r->current.planning_error == NULL);
    CHECK_EQ_INT(r->current.req.point_files, 1);
    floe_health_report_free(r);

    /* An empty table: no snapshot, one GET for the metadata, nothing to recommend. */
    r = analyze_path("iceberg/duckdb-iceberg/custom_write_paths");
    REQUIRE(r);
    CHECK(!r->current.has_snapshot);
    CHECK_EQ_INT(r->current.req.plan_get, 1);
    CHECK_EQ_INT(r->nrecs, 0);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    CHECK_OK(floe_health_report_html(r, &b, &err), err);
    CHECK_OK(floe_health_report_json(r, &b, &err), err);
    CHECK_OK(floe_health_report_text(r, &b, &err), err);
    floe_buf_free(&b);
    floe_health_report_free(r);
}

/* Allocation failures end in a clean error, never a crash or a leak (ASan checks). */
TEST(test_alloc_failures) {
    built bt;
    build_table(&bt, NULL, NULL);
    floe_health_options o;
    floe_health_options_init(&o);
    o.timing_runs = 1;
    int failures = 0;
    for (uint64_t n = 1; n < 4000; n += 7) {
        floe_error err;
        floe_health_report *r = NULL;
        floe_alloc_fail_after(n);
        int rc = floe_health_analyze(bt.t, &o, &r, &err);
        floe_alloc_fail_after(0);
        if (rc < 0)
            failures++;
        else
            floe_health_report_free(r);
        if (rc == 0)
            break;
    }
    CHECK(failures > 0);
    free_built(&bt);
}

/* ---------------------------------------------------------------------------------------
 * The page in a browser: floe health --html, rendered by headless Chromium
 * ------------------------------------------------------------------------------------- */
static const char *chromium_bin(void) {
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    static char found[64];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", names[i]);
        if (system(cmd) == 0) {
            snprintf(found, sizeof found, "%s", names[i]);
            return found;
        }
    }
    return NULL;
}

TEST(test_html_in_chromium) {
    const char *chrome = chromium_bin();
    if (!chrome) {
        harness_fail(__FILE__, __LINE__,
                     "chromium is not installed (scripts/setup --test installs it)");
        return;
    }
    built bt;
    build_table(&bt, NULL, NULL);
    char table_dir[4096];
    snprintf(table_dir, sizeof table_dir, "%s", floe_table_root(bt.t));
    int64_t s1 = bt.s1;
    free_built(&bt);
    const char *dir = harness_tmpdir();
    char html[4200], png[4200], cmd[16384], profile[4200];
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(png, sizeof png, "%s/report.png", dir);
    snprintf(profile, sizeof profile, "%s/profile", dir);
    snprintf(cmd, sizeof cmd, "'%s' health '%s' --compare %lld --html '%s' --runs 3 --json",
             harness_floe_bin(), table_dir, (long long)s1, html);
    char *out = NULL;
    CHECK_EQ_INT(harness_run_cmd(cmd, &out), 0);
    CHECK(out && strstr(out, "\"recommendations\"") != NULL);
    free(out);
    out = NULL;
    static const char flags[] =
        "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync "
        "--hide-scrollbars";
    /* Screenshot. */
    snprintf(cmd, sizeof cmd,
             "%s %s --user-data-dir='%s' --screenshot='%s' --window-size=1400,2000 "
             "'file://%s' >/dev/null 2>&1",
             chrome, flags, profile, png, html);
    CHECK_EQ_INT(harness_run_cmd(cmd, NULL), 0);
    struct stat st;
    REQUIRE(stat(png, &st) == 0 && st.st_size > 10000);
    /* Not blank: many distinct colours (python3's zlib reads the PNG). */
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s'", harness_source_path("tests/unit/png_stats.py"),
             png);
    CHECK_EQ_INT(harness_run_cmd(cmd, &out), 0);
    int w = 0, h = 0, colours = 0;
    REQUIRE(out && sscanf(out, "%d %d %d", &w, &h, &colours) == 3);
    CHECK_EQ_INT(w, 1400);
    CHECK_EQ_INT(h, 2000);
    /* A blank page has 1 colour; the report's charts, text and cards give hundreds. */
    CHECK(colours > 20);
    free(out);
    out = NULL;
    /* The DOM after load: the charts and headline numbers, and no console errors. */
    char log[4300];
    snprintf(log, sizeof log, "%s/console.log", dir);
    snprintf(cmd, sizeof cmd,
             "%s %s --user-data-dir='%s' --enable-logging=stderr --v=0 --dump-dom "
             "'file://%s' 2>'%s'",
             chrome, flags, profile, html, log);
    CHECK_EQ_INT(harness_run_cmd(cmd, &out), 0);
    REQUIRE(out);
    int svgs = 0;
    for (const char *p = out; (p = strstr(p, "<svg")) != NULL; p++)
        svgs++;
    CHECK_EQ_INT(svgs, 6); /* histogram, partitions, 3 growth panels, before/after */
    CHECK(strstr(out, "13 data files") != NULL);
    CHECK(strstr(out, "floe rewrite ") != NULL);
    CHECK(strstr(out, "--retain-last 1") != NULL);
    CHECK(strstr(out, "Before and after") != NULL);
    free(out);
    size_t loglen = 0;
    char *logtext = harness_read_file(log, &loglen);
    if (logtext) {
        CHECK(strstr(logtext, "CONSOLE") == NULL);
        CHECK(strstr(logtext, "Uncaught") == NULL);
        free(logtext);
    }
}

/* An empty table ns.t in a catalog of its own (catalog<tag>.db, warehouse<tag>). */
static void empty_table(int tag, floe_catalog **cat, floe_table **t) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char db[4096], wh[4096];
    snprintf(db, sizeof db, "%s/catalog%d.db", dir, tag);
    snprintf(wh, sizeof wh, "%s/warehouse%d", dir, tag);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, cat, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(*cat, "ns", NULL, NULL, 0, &err), err);
    floe_table_create_options co = {.spec_json = spec_json};
    REQUIRE_OK(floe_table_create(*cat, "ns", "t", schema_json, &co, t, &err), err);
}

/* No "1 files", "1 runs", ... in out: a count of one takes the singular. */
static void check_plurals(const char *out, const char *what) {
    static const char *const words[] = {"files", "runs", "snapshots", "commits",
                                        "partitions", "GETs", "manifests", "manifest lists"};
    for (size_t i = 0; out && i < sizeof words / sizeof words[0]; i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "1 %s", words[i]);
        for (const char *p = out; (p = strstr(p, pat)) != NULL; p++) {
            char prev = p > out ? p[-1] : ' ';
            if ((prev >= '0' && prev <= '9') || prev == ',' || prev == '.')
                continue; /* 11 files, 2,001 files, 0.1 files */
            harness_fail(__FILE__, __LINE__, "%s says \"%.40s\"", what, p);
            break;
        }
    }
}

/* A small, healthy table (one 100 KB file in one partition with a long path, taken at
 * 13:45 UTC): not headlined in red although its file is under the rewrite minimum, the
 * partition label keeps both ends, time axes show the time of day, and counts of one
 * are singular in the text, JSON and HTML renderings. */
TEST(test_small_table_papercuts) {
    floe_error err;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    empty_table(0, &cat, &t);
    int32_t d = day0();
    const char *type = "add_to_cart_from_the_recommendations_carousel";
    fake_file f[1] = {{FLOE_CONTENT_DATA, type, d, 100 * 1024, 1}};
    int64_t ts = (int64_t)d * DAY_MS + 13 * 3600000LL + 45 * 60000LL;
    commit_files(t, f, 1, ts);

    floe_health_options o;
    floe_health_options_init(&o);
    o.table_ref = "ns.t";
    o.timing_runs = 1;
    o.now_ms = ts + 60000;
    floe_health_report *r = NULL;
    REQUIRE_OK(floe_health_analyze(t, &o, &r, &err), err);
    CHECK_EQ_INT(r->current.total.small_files, 1);
    CHECK_EQ_INT(r->current.total.fragmented_files, 0);
    CHECK_EQ_INT(r->nrecs, 0);

    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE_OK(floe_health_report_html(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    const char *page = (const char *)b.data;
    CHECK(strstr(page, "class=\"hl\"") == NULL);
    CHECK(strstr(page, "1 data file, <span class=\"good\">100% under the 384 MB rewrite "
                       "minimum, but no partition holds more files than its data needs") != NULL);
    /* the label: 19 characters, an ellipsis, the last 20, all in view; the whole path in
     * the title */
    char path[256], label[300];
    snprintf(path, sizeof path, "event_type=%s/ts_day=2026-10-06", type);
    size_t pl = strlen(path);
    snprintf(label, sizeof label, ">%.19s\xe2\x80\xa6%s</text>", path, path + pl - 20);
    CHECK(strstr(page, label) != NULL);
    snprintf(label, sizeof label, "<title>%s: 1 file, 1 small</title>", path);
    CHECK(strstr(page, label) != NULL);
    const char *svg = strstr(page, "aria-label=\"files per partition\"");
    REQUIRE(svg);
    const char *anchor = strstr(svg, "text-anchor=\"end\">event_type");
    REQUIRE(anchor);
    double lx = 0;
    for (const char *q = anchor; q > svg; q--)
        if (!strncmp(q, "<text x=\"", 9)) {
            lx = atof(q + 9);
            break;
        }
    CHECK(lx >= 7 * 40); /* 40 characters of at most 7 px fit left of the axis */
    CHECK(strstr(page, ">2026-10-06 13:45</text>") != NULL);
    check_plurals(page, "the HTML report");
    floe_buf_reset(&b);
    REQUIRE_OK(floe_health_report_text(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    check_plurals((const char *)b.data, "the text report");
    CHECK(strstr((const char *)b.data, "in fragmented partitions") != NULL);
    floe_buf_reset(&b);
    REQUIRE_OK(floe_health_report_json(r, &b, &err), err);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK(strstr((const char *)b.data, "\"fragmented_files\":0") != NULL);
    floe_buf_free(&b);
    floe_health_report_free(r);
    floe_table_close(t);
    floe_catalog_close(cat);
}

/* Partition rewrites: up to FLOE_HEALTH_MAX_PARTITION_RECS (3) each get their command;
 * more collapse into one table-wide floe rewrite. The small files of those partitions
 * (5 of 100 KB each) are fragmented, and headlined in red. */
TEST(test_rewrite_recs_collapse) {
    for (int nparts = 3; nparts <= 4; nparts++) {
        floe_error err;
        floe_catalog *cat = NULL;
        floe_table *t = NULL;
        empty_table(nparts, &cat, &t);
        static const char *const types[4] = {"a", "b", "c", "d"};
        fake_file f[20];
        for (int i = 0; i < 5 * nparts; i++)
            f[i] = (fake_file){FLOE_CONTENT_DATA, types[i / 5], day0(), 100 * 1024, 1};
        commit_files(t, f, (size_t)(5 * nparts), floe_wall_ms() - 60000);
        floe_health_options o;
        floe_health_options_init(&o);
        o.table_ref = "ns.t";
        o.timing_runs = 0;
        floe_health_report *r = NULL;
        REQUIRE_OK(floe_health_analyze(t, &o, &r, &err), err);
        CHECK_EQ_INT(r->current.total.fragmented_files, 5 * nparts);
        size_t rewrites = 0;
        for (size_t i = 0; i < r->nrecs; i++) {
            if (r->recs[i].kind == FLOE_HEALTH_REC_REWRITE_PARTITION) {
                rewrites++;
                CHECK(strstr(r->recs[i].command, "--where") != NULL);
            } else if (r->recs[i].kind == FLOE_HEALTH_REC_REWRITE_TABLE) {
                rewrites++;
                CHECK_EQ_STR(r->recs[i].command, "floe rewrite ns.t");
                CHECK(strstr(r->recs[i].reason, "4 partitions hold 20 small files") != NULL);
            }
        }
        CHECK_EQ_INT(rewrites, nparts == 3 ? 3 : 1);
        floe_buf b;
        floe_buf_init(&b, 0);
        REQUIRE_OK(floe_health_report_html(r, &b, &err), err);
        REQUIRE(floe_buf_append_byte(&b, 0) == 0);
        CHECK(strstr((const char *)b.data, "<span class=\"hl\">100% under 1 MB</span>") != NULL);
        floe_buf_free(&b);
        floe_health_report_free(r);
        floe_table_close(t);
        floe_catalog_close(cat);
    }
}

/* --html into a folder that does not exist fails at once, naming the folder, and creates
 * nothing. */
TEST(test_html_missing_folder) {
    built bt;
    build_table(&bt, NULL, NULL);
    char table_dir[4096];
    snprintf(table_dir, sizeof table_dir, "%s", floe_table_root(bt.t));
    free_built(&bt);
    const char *dir = harness_tmpdir();
    char cmd[12000], missing[4200];
    snprintf(missing, sizeof missing, "%s/no/such", dir);
    snprintf(cmd, sizeof cmd, "'%s' health '%s' --runs 0 --html '%s/report.html' 2>&1",
             harness_floe_bin(), table_dir, missing);
    char *out = NULL;
    CHECK(harness_run_cmd(cmd, &out) != 0);
    char want[4300];
    snprintf(want, sizeof want, "folder %s does not exist", missing);
    CHECK(out && strstr(out, want) != NULL);
    free(out);
    struct stat st;
    snprintf(missing, sizeof missing, "%s/no", dir);
    CHECK(stat(missing, &st) != 0);
}

int main(void) {
    RUN(test_buckets);
    RUN(test_escape_and_quote);
    RUN(test_numbers);
    RUN(test_small_table_papercuts);
    RUN(test_rewrite_recs_collapse);
    RUN(test_html_missing_folder);
    RUN(test_compare_and_snapshot);
    RUN(test_target_and_manifests);
    RUN(test_json_structure);
    RUN(test_churn);
    RUN(test_html_escaping);
    RUN(test_conformance_tables);
    RUN(test_alloc_failures);
    RUN(test_html_in_chromium);
    return harness_finish();
}
