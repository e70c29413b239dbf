/*
 * test_catalog.c - catalogs (SQLite, filesystem) and the commit protocol: namespaces,
 * table lifecycle, compare-and-swap conflicts, retries that re-apply on fresh metadata,
 * injected conflicts and unknown states, metadata cleanup, many processes committing to
 * one table, configuration files, and the SQLite layout PyIceberg expects.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "catalog_suite.h"
#include "table/commit_testing.h"

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

static floe_catalog *open_cb(const void *ctx, const char *dir) {
    return open_kind(*(const kind *)ctx, dir);
}


static bool uri_exists(const char *uri) {
    bool yes = false;
    floe_io_exists(NULL, uri, &yes, NULL);
    return yes;
}

/* ---------------------------------------------------------------------------------------
 * namespaces and tables
 * ------------------------------------------------------------------------------------- */

static void namespace_suite(kind k) {
    floe_catalog *c = open_kind(k, harness_tmpdir());
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    bool ex = true;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "sales", &ex, &err), err);
    CHECK(!ex);
    const char *keys[] = {"owner"}, *vals[] = {"team-a"};
    if (k == KIND_SQLITE)
        REQUIRE_OK(floe_catalog_create_namespace(c, "sales", keys, vals, 1, &err), err);
    else
        REQUIRE_OK(floe_catalog_create_namespace(c, "sales", NULL, NULL, 0, &err), err);
    CHECK_EQ_INT(floe_catalog_create_namespace(c, "sales", NULL, NULL, 0, &err), FLOE_EEXISTS);
    REQUIRE_OK(floe_catalog_create_namespace(c, "sales.eu", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "ops", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_namespace_exists(c, "sales", &ex, &err), err);
    CHECK(ex);
    floe_strlist l = {0};
    REQUIRE_OK(floe_catalog_list_namespaces(c, NULL, &l, &err), err);
    REQUIRE(l.n == 2);
    CHECK_EQ_STR(l.items[0], "ops");
    CHECK_EQ_STR(l.items[1], "sales");
    floe_strlist_free(&l);
    REQUIRE_OK(floe_catalog_list_namespaces(c, "sales", &l, &err), err);
    REQUIRE(l.n == 1);
    CHECK_EQ_STR(l.items[0], "sales.eu");
    floe_strlist_free(&l);
    CHECK_EQ_INT(floe_catalog_list_namespaces(c, "nope", &l, &err), FLOE_ENOTFOUND);
    /* bad names never reach a store */
    const char *bad[] = {"", "a..b", ".", "a/../b", "..", "x\ny", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(floe_catalog_create_namespace(c, bad[i], NULL, NULL, 0, &err), FLOE_EINVALID);
    /* properties */
    floe_strlist pk = {0}, pv = {0};
    if (k == KIND_SQLITE) {
        REQUIRE_OK(floe_catalog_load_namespace_properties(c, "sales", &pk, &pv, &err), err);
        REQUIRE(pk.n == 1);
        CHECK_EQ_STR(pk.items[0], "owner");
        CHECK_EQ_STR(pv.items[0], "team-a");
        floe_strlist_free(&pk);
        floe_strlist_free(&pv);
        const char *rm[] = {"owner"}, *nk[] = {"region", "tier"}, *nv[] = {"eu", "gold"};
        REQUIRE_OK(floe_catalog_update_namespace_properties(c, "sales", rm, 1, nk, nv, 2, &err), err);
        REQUIRE_OK(floe_catalog_load_namespace_properties(c, "sales", &pk, &pv, &err), err);
        REQUIRE(pk.n == 2);
        CHECK_EQ_STR(pk.items[0], "region");
        CHECK_EQ_STR(pv.items[1], "gold");
        /* namespace without properties stores exists=true (PyIceberg) */
        floe_strlist_free(&pk);
        floe_strlist_free(&pv);
        REQUIRE_OK(floe_catalog_load_namespace_properties(c, "ops", &pk, &pv, &err), err);
        REQUIRE(pk.n == 1);
        CHECK_EQ_STR(pk.items[0], "exists");
        CHECK_EQ_STR(pv.items[0], "true");
    } else {
        CHECK_EQ_INT(floe_catalog_update_namespace_properties(c, "sales", NULL, 0, keys, vals, 1, &err),
                     FLOE_EUNSUPPORTED);
    }
    floe_strlist_free(&pk);
    floe_strlist_free(&pv);
    /* only empty namespaces go */
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "sales", &err), FLOE_EINVALID);
    REQUIRE_OK(floe_catalog_drop_namespace(c, "sales.eu", &err), err);
    REQUIRE_OK(floe_catalog_drop_namespace(c, "sales", &err), err);
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "sales", &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_catalog_namespace_exists(c, "sales", &ex, &err), err);
    CHECK(!ex);
    floe_catalog_close(c);
}

TEST(namespaces_sqlite) { namespace_suite(KIND_SQLITE); }
TEST(namespaces_fs) { namespace_suite(KIND_FS); }

static void table_suite(kind k) {
    floe_catalog *c = open_kind(k, harness_tmpdir());
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    CHECK_EQ_INT(floe_table_create(c, "db", "events", SCHEMA, NULL, &t, &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "db2", NULL, NULL, 0, &err), err);
    floe_kv props[] = {{"owner", "floe"}};
    floe_table_create_options opts = {.props = props, .nprops = 1};
    REQUIRE_OK(floe_table_create(c, "db", "events", SCHEMA, &opts, &t, &err), err);
    const char *loc = floe_table_metadata_location(t);
    CHECK(uri_exists(loc));
    if (k == KIND_SQLITE)
        CHECK(strstr(loc, "/db/events/metadata/00000-") != NULL);
    else
        CHECK(strstr(loc, "/db/events/metadata/v1.metadata.json") != NULL);
    CHECK_EQ_STR(floe_table_metadata_property(floe_table_metadata_get(t), "owner"), "floe");
    floe_table *dup = NULL;
    CHECK_EQ_INT(floe_table_create(c, "db", "events", SCHEMA, NULL, &dup, &err), FLOE_EEXISTS);
    CHECK(dup == NULL);
    floe_strlist l = {0};
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &l, &err), err);
    REQUIRE(l.n == 1);
    CHECK_EQ_STR(l.items[0], "events");
    floe_strlist_free(&l);
    /* a namespace holding a table is not empty */
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "db", &err), FLOE_EINVALID);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "events", &t2, &err), err);
    CHECK_EQ_STR(floe_table_metadata_location(t2), loc);
    CHECK_EQ_STR(floe_table_metadata_get(t2)->table_uuid, floe_table_metadata_get(t)->table_uuid);
    floe_table_close(t2);
    CHECK_EQ_INT(floe_table_load(c, "db", "nope", &t2, &err), FLOE_ENOTFOUND);
    if (k == KIND_SQLITE) {
        REQUIRE_OK(floe_catalog_rename_table(c, "db", "events", "db2", "ev", &err), err);
        CHECK_EQ_INT(floe_table_load(c, "db", "events", &t2, &err), FLOE_ENOTFOUND);
        REQUIRE_OK(floe_table_load(c, "db2", "ev", &t2, &err), err);
        floe_table_close(t2);
        CHECK_EQ_INT(floe_catalog_rename_table(c, "db", "events", "db2", "x", &err), FLOE_ENOTFOUND);
        CHECK_EQ_INT(floe_catalog_rename_table(c, "db2", "ev", "nons", "x", &err), FLOE_ENOTFOUND);
        REQUIRE_OK(floe_catalog_drop_table(c, "db2", "ev", &err), err);
        CHECK_EQ_INT(floe_catalog_drop_table(c, "db2", "ev", &err), FLOE_ENOTFOUND);
        CHECK(uri_exists(loc)); /* drop forgets; purging is the caller's */
    } else {
        CHECK_EQ_INT(floe_catalog_rename_table(c, "db", "events", "db2", "ev", &err),
                     FLOE_EUNSUPPORTED);
        REQUIRE_OK(floe_catalog_drop_table(c, "db", "events", &err), err);
        CHECK_EQ_INT(floe_table_load(c, "db", "events", &t2, &err), FLOE_ENOTFOUND);
    }
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &l, &err), err);
    CHECK_EQ_INT(l.n, 0);
    floe_strlist_free(&l);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(tables_sqlite) { table_suite(KIND_SQLITE); }
TEST(tables_fs) { table_suite(KIND_FS); }

/* Version numbers come from metadata file names only: a manifest named with a leading
 * number made a rewrite through a folder write v78371393.metadata.json. */
TEST(metadata_file_versions) {
    int64_t v = -1;
    CHECK(floe_metadata_file_version("v12.metadata.json", &v) && v == 12);
    CHECK(floe_metadata_file_version("/a/b/v3.gz.metadata.json", &v) && v == 3);
    CHECK(floe_metadata_file_version("00007-3c0f-uuid.metadata.json", &v) && v == 7);
    CHECK(floe_metadata_file_version("00008-x.metadata.json.gz", &v) && v == 8);
    CHECK(!floe_metadata_file_version("78371392-1111-2222-m1001.avro", &v));
    CHECK(!floe_metadata_file_version("snap-1-1-x.avro", &v));
    CHECK(!floe_metadata_file_version("vfinal.metadata.json", &v));
    CHECK(!floe_metadata_file_version("12.metadata.json", &v));
    CHECK(!floe_metadata_file_version("version-hint.text", &v));
}

static void check_resolved(const char *wh, const char *ns, const char *name,
                           const char *recorded, const char *want) {
    char *out = NULL;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_catalog_resolve_location_in(wh, ns, name, recorded, &out, &err);
    if (rc != 0 || strcmp(out, want))
        harness_fail(__FILE__, __LINE__, "resolve(%s, %s.%s, %s) = %s (%s), want %s", wh,
                     ns ? ns : "-", name ? name : "-", recorded, out ? out : "error", err.msg,
                     want);
    floe_free(out);
}

/* Relative locations written by earlier releases, read against the warehouse. */
TEST(legacy_relative_locations) {
    const char *wh = "file:///srv/wh2";
    /* the table's own folders, whatever the warehouse was called when written */
    check_resolved(wh, "demo", "events", "warehouse/demo/events", "file:///srv/wh2/demo/events");
    check_resolved(wh, "demo", "events",
                   "./warehouse/demo/events/metadata/00001-x.metadata.json",
                   "file:///srv/wh2/demo/events/metadata/00001-x.metadata.json");
    check_resolved(wh, "a.b", "t", "file://old/wh/a/b/t/data/x.parquet",
                   "file:///srv/wh2/a/b/t/data/x.parquet");
    /* the warehouse's own folder name first */
    check_resolved(wh, "demo", "renamed", "wh2/demo/events", "file:///srv/wh2/demo/events");
    /* anything else: where the warehouse is */
    check_resolved(wh, "demo", "renamed", "tables/x", "file:///srv/tables/x");
    check_resolved(wh, NULL, NULL, "../up/x", "file:///up/x");
    /* absolute locations are kept as they are */
    check_resolved(wh, "demo", "events", "s3a://b/wh/demo/events", "s3a://b/wh/demo/events");
    check_resolved(wh, "demo", "events", "file:/old/wh/demo/events", "file:/old/wh/demo/events");
}

/* The embedded default with a relative warehouse records absolute URIs. */
TEST(relative_warehouse_records_absolute) {
    const char *dir = harness_tmpdir();
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd) != NULL);
    REQUIRE(chdir(dir) == 0);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    int rc = floe_catalog_open_sqlite(NULL, "warehouse/catalog.db", "default", "warehouse", &c, &err);
    if (chdir(cwd) != 0)
        harness_fail(__FILE__, __LINE__, "chdir back");
    REQUIRE_OK(rc, err);
    char want[4300];
    snprintf(want, sizeof want, "file://%s/warehouse", dir);
    CHECK_EQ_STR(floe_catalog_warehouse(c), want);
    floe_table *t = NULL;
    REQUIRE_OK(floe_catalog_create_namespace(c, "demo", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(c, "demo", "events", SCHEMA, NULL, &t, &err), err);
    snprintf(want, sizeof want, "file://%s/warehouse/demo/events", dir);
    CHECK_EQ_STR(floe_table_metadata_get(t)->location, want);
    char *ptr = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "demo", "events", &ptr, &err), err);
    CHECK(!strncmp(ptr, want, strlen(want)));
    floe_free(ptr);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(placement_sqlite) {
    kind k = KIND_SQLITE;
    suite_placement(open_cb, &k, harness_tmpdir(), true);
}
TEST(placement_fs) {
    kind k = KIND_FS;
    suite_placement(open_cb, &k, harness_tmpdir(), false);
}
/* The filesystem catalog's placement lock lives in <warehouse>/_leases.db, opened with
 * the catalog's connection options: while another connection holds that file's write
 * lock, a create fails after busy_timeout_ms (here 100 ms), not after the 30 s default. */
TEST(placement_fs_takes_sql_options) {
    char wh[4096], leases[4200];
    snprintf(wh, sizeof wh, "%s/busy_wh", harness_tmpdir());
    snprintf(leases, sizeof leases, "%s/_leases.db", wh);
    floe_catalog_config cfg = {0};
    cfg.type = "filesystem";
    cfg.warehouse = wh;
    cfg.sql.busy_timeout_ms = 100;
    floe_error err;
    floe_catalog *c = NULL;
    REQUIRE_OK(floe_catalog_open(&cfg, &c, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "demo", NULL, NULL, 0, &err), err);
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(leases, &db, &err), err);
    REQUIRE_OK(floe_sql_exec(db, "CREATE TABLE IF NOT EXISTS held(x INTEGER)", NULL, 0, NULL,
                             &err), err);
    REQUIRE_OK(floe_sql_begin(db, &err), err);
    REQUIRE_OK(floe_sql_exec(db, "INSERT INTO held VALUES(1)", NULL, 0, NULL, &err), err);
    floe_table *t = NULL;
    int64_t t0 = floe_wall_ms();
    CHECK(floe_table_create(c, "demo", "events", SCHEMA, NULL, &t, &err) < 0);
    CHECK(floe_wall_ms() - t0 < 10000);
    CHECK(t == NULL);
    floe_sql_rollback(db);
    floe_sql_close(db);
    REQUIRE_OK(floe_table_create(c, "demo", "events", SCHEMA, NULL, &t, &err), err);
    floe_table_close(t);
    floe_catalog_close(c);
}
TEST(namespace_location_sqlite) {
    kind k = KIND_SQLITE;
    suite_namespace_location(open_cb, &k, harness_tmpdir());
}

/* ---------------------------------------------------------------------------------------
 * commits
 * ------------------------------------------------------------------------------------- */

static floe_table *fresh_table(kind k, const char *dir, floe_catalog **cat, const floe_kv *props,
                               size_t nprops) {
    return suite_fresh_table(open_cb, &k, dir, cat, props, nprops);
}

static void conflict_suite(kind k) {
    suite_conflict_and_retry(open_cb, &k, harness_tmpdir(), k == KIND_SQLITE);
}

TEST(cas_conflict_and_retry_sqlite) { conflict_suite(KIND_SQLITE); }
TEST(cas_conflict_and_retry_fs) { conflict_suite(KIND_FS); }
TEST(drop_at_sqlite) { suite_drop_at(open_cb, &(kind){KIND_SQLITE}, harness_tmpdir()); }
TEST(drop_at_fs) { suite_drop_at(open_cb, &(kind){KIND_FS}, harness_tmpdir()); }

/* The filesystem catalog's drop at a version keeps its claims of v<N+1> (tombstones): a
 * commit that read v<N> before the drop and creates v<N+1> after it - however late -
 * finds the name taken (before, the drop removed its claims as its last step, and such a
 * commit brought the table back with the files a purge had deleted). The dropped name is
 * neither a table nor a namespace; a create of it starts past the claims; a commit on the
 * new table works, and a drop of it spares the old claims. */
static bool strlist_has(const floe_strlist *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i], s))
            return true;
    return false;
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

TEST(drop_at_fs_tombstone) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tombstone", harness_tmpdir());
    mkdir(dir, 0777);
    floe_catalog *c = NULL;
    floe_table *t1 = suite_fresh_table(open_cb, &(kind){KIND_FS}, dir, &c, NULL, 0);
    REQUIRE(t1 != NULL);
    floe_error err;
    floe_error_clear(&err);
    work a = {.key = "a"};
    REQUIRE_OK(floe_table_commit(t1, apply_work, &a, &err), err);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK(ends_with(cur, "/v2.metadata.json"));
    char *v3 = floe_strdup(cur);
    REQUIRE(v3 != NULL);
    v3[strlen(v3) - strlen("2.metadata.json")] = '3';
    REQUIRE_OK(floe_catalog_drop_table_at(c, "db", "t", cur, &err), err);
    /* the late commit of v3 (a fully written file, linked if absent) */
    const char *doc = "{\"format-version\":2}";
    floe_output_options oo = {.fsync = false, .no_overwrite = true};
    CHECK_EQ_INT(floe_io_write_all(NULL, v3, doc, strlen(doc), &oo, &err), FLOE_EEXISTS);
    floe_table *t2 = NULL;
    CHECK_EQ_INT(floe_table_load(c, "db", "t", &t2, &err), FLOE_ENOTFOUND);
    floe_table_close(t2);
    t2 = NULL;
    floe_strlist names = {0};
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &names, &err), err);
    CHECK(!strlist_has(&names, "t"));
    floe_strlist_free(&names);
    REQUIRE_OK(floe_catalog_list_namespaces(c, "db", &names, &err), err);
    CHECK(!strlist_has(&names, "db.t"));
    floe_strlist_free(&names);
    bool ns = true;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "db.t", &ns, &err), err);
    CHECK(!ns);
    CHECK_EQ_INT(floe_catalog_drop_table(c, "db", "t", &err), FLOE_ENOTFOUND);
    /* created again: past the claims */
    floe_table_create_options opts = {0};
    REQUIRE_OK(floe_table_create(c, "db", "t", SCHEMA, &opts, &t2, &err), err);
    CHECK(ends_with(floe_table_metadata_location(t2), "/v4.metadata.json"));
    work b = {.key = "b"};
    REQUIRE_OK(floe_table_commit(t2, apply_work, &b, &err), err);
    CHECK(ends_with(floe_table_metadata_location(t2), "/v5.metadata.json"));
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &names, &err), err);
    CHECK(strlist_has(&names, "t"));
    floe_strlist_free(&names);
    /* a create over a live table: already exists */
    floe_table *t3 = NULL;
    CHECK_EQ_INT(floe_table_create(c, "db", "t", SCHEMA, &opts, &t3, &err), FLOE_EEXISTS);
    /* dropped again: v6 claimed, the claims of v3 kept, the old commit still refused */
    floe_free(cur);
    cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    REQUIRE_OK(floe_catalog_drop_table_at(c, "db", "t", cur, &err), err);
    CHECK(uri_exists(v3));
    CHECK_EQ_INT(floe_io_write_all(NULL, v3, doc, strlen(doc), &oo, &err), FLOE_EEXISTS);
    CHECK_EQ_INT(floe_table_load(c, "db", "t", &t3, &err), FLOE_ENOTFOUND);
    floe_table_close(t3);
    floe_free(cur);
    floe_free(v3);
    floe_table_close(t2);
    floe_table_close(t1);
    floe_catalog_close(c);
}

static int apply_zero_retries(void *ctx, floe_metadata_builder *b, floe_error *err) {
    (void)ctx;
    return floe_metadata_builder_set_property(b, "commit.retry.num-retries", "0", err);
}

static void retries_exhausted(kind k) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.num-retries", "0"}};
    floe_table *t1 = fresh_table(k, harness_tmpdir(), &c, props, 1);
    REQUIRE(t1 != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &t2, &err), err);
    REQUIRE_OK(floe_table_commit(t1, apply_zero_retries, NULL, &err), err);
    size_t files = suite_count_metadata_files(t1);
    work w = {.key = "late"};
    CHECK_EQ_INT(floe_table_commit(t2, apply_work, &w, &err), FLOE_ECONFLICT);
    CHECK(strstr(err.msg, "gave up") != NULL);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(suite_count_metadata_files(t1), files); /* nothing left behind */
    floe_table_close(t2);
    floe_table_close(t1);
    floe_catalog_close(c);
}

TEST(retries_exhausted_sqlite) { retries_exhausted(KIND_SQLITE); }
TEST(retries_exhausted_fs) { retries_exhausted(KIND_FS); }

static void gate_suite(kind k) { suite_commit_gate(open_cb, &k, harness_tmpdir()); }

TEST(commit_gate_sqlite) { gate_suite(KIND_SQLITE); }
TEST(commit_gate_fs) { gate_suite(KIND_FS); }

static void injected_suite(kind k) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}, {"commit.retry.max-wait-ms", "5"}};
    floe_table *t = fresh_table(k, harness_tmpdir(), &c, props, 2);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);

    /* 1. injected conflict: retried, lands once */
    floe_commit_fault f = {.nth_swap = 1, .code = FLOE_ECONFLICT};
    floe_table_commit_inject(&f);
    size_t files = suite_count_metadata_files(t);
    work w1 = {.key = "k1", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w1, &err), err);
    CHECK_EQ_INT(w1.calls, 2);
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 1);

    /* 2. unknown, but the swap really happened: settled as committed, no retry */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .after_apply = true};
    floe_table_commit_inject(&f);
    work w2 = {.key = "k2", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w2, &err), err);
    CHECK_EQ_INT(w2.calls, 1);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, floe_table_metadata_location(t));
    floe_free(cur);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 2);

    /* 3. unknown, swap did not happen, provably: retried, the orphan attempt removed */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE};
    floe_table_commit_inject(&f);
    files = suite_count_metadata_files(t);
    work w3 = {.key = "k3", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w3, &err), err);
    CHECK_EQ_INT(w3.calls, 2);
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 3);

    /* 4. unknown and unresolvable: reported as such, nothing deleted, nothing retried */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .fail_resolve = true};
    floe_table_commit_inject(&f);
    files = suite_count_metadata_files(t);
    char *before = floe_strdup(floe_table_metadata_location(t));
    work w4 = {.key = "k4", .add_snapshot = true};
    CHECK_EQ_INT(floe_table_commit(t, apply_work, &w4, &err), FLOE_EUNKNOWN_STATE);
    CHECK(strstr(err.msg, "unknown") != NULL);
    CHECK_EQ_INT(w4.calls, 1);
    if (k == KIND_SQLITE) /* the file we wrote is kept (it may be the table's now) */
        CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, before); /* (injected before the swap: the pointer did not move) */
    floe_free(cur);
    floe_free(before);
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    CHECK(floe_table_metadata_property(floe_table_metadata_get(t), "k4") == NULL);

    /* 5. unknown after the swap, with the resolution reads failing: still kept */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .after_apply = true,
                            .fail_resolve = true};
    floe_table_commit_inject(&f);
    work w5 = {.key = "k5"};
    CHECK_EQ_INT(floe_table_commit(t, apply_work, &w5, &err), FLOE_EUNKNOWN_STATE);
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    CHECK_EQ_STR(floe_table_metadata_property(floe_table_metadata_get(t), "k5"), "1");
    floe_table_commit_inject(NULL);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(injected_faults_sqlite) { injected_suite(KIND_SQLITE); }
TEST(injected_faults_fs) { injected_suite(KIND_FS); }

static void cleanup_suite(kind k) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "2"}};
    floe_table *t = fresh_table(k, harness_tmpdir(), &c, props, 2);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    char *first = floe_strdup(floe_table_metadata_location(t));
    for (int i = 0; i < 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "c%d", i);
        work w = {.key = key};
        REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    }
    const floe_table_metadata *m = floe_table_metadata_get(t);
    CHECK_EQ_INT(m->n_metadata_log, 2);
    CHECK_EQ_INT(suite_count_metadata_files(t), 3); /* current + 2 previous */
    CHECK(!uri_exists(first));
    for (size_t i = 0; i < m->n_metadata_log; i++)
        CHECK(uri_exists(m->metadata_log[i].metadata_file));
    floe_free(first);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(old_metadata_cleanup_sqlite) { cleanup_suite(KIND_SQLITE); }
TEST(old_metadata_cleanup_fs) { cleanup_suite(KIND_FS); }

/* A committer whose base is older than every metadata file the cleanup kept: its commit
 * must conflict and re-apply on the current metadata, never bring a deleted version back
 * (in the filesystem store, creating the deleted v<N+1> again used to "win" and make
 * loading stop there, dropping every later commit). */
static void stale_after_cleanup_suite(kind k) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "1"}};
    floe_table *t = fresh_table(k, harness_tmpdir(), &c, props, 2);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *stale = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &stale, &err), err);
    char *stale_loc = floe_strdup(floe_table_metadata_location(stale));
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "c%d", i);
        work w = {.key = key};
        REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    }
    CHECK(!uri_exists(stale_loc)); /* its base and the version after it are gone */
    work s = {.key = "late", .seen_key = "c3"};
    REQUIRE_OK(floe_table_commit(stale, apply_work, &s, &err), err);
    CHECK_EQ_INT(s.calls, 2);
    CHECK(!s.saw_key[0]);
    CHECK(s.saw_key[1]);
    floe_table *now = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &now, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(now);
    CHECK_EQ_STR(floe_table_metadata_location(now), floe_table_metadata_location(stale));
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "c%d", i);
        CHECK_EQ_STR(floe_table_metadata_property(m, key), "1");
    }
    CHECK_EQ_STR(floe_table_metadata_property(m, "late"), "1");
    CHECK_EQ_INT(suite_count_metadata_files(now), 2); /* current + 1 previous */
    floe_free(stale_loc);
    floe_table_close(now);
    floe_table_close(stale);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(stale_commit_after_cleanup_sqlite) { stale_after_cleanup_suite(KIND_SQLITE); }
TEST(stale_commit_after_cleanup_fs) { stale_after_cleanup_suite(KIND_FS); }

TEST(gzip_metadata_commits) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"write.metadata.compression-codec", "gzip"}};
    floe_table *t = fresh_table(KIND_SQLITE, harness_tmpdir(), &c, props, 1);
    REQUIRE(t != NULL);
    CHECK(strstr(floe_table_metadata_location(t), ".gz.metadata.json") != NULL);
    floe_error err;
    floe_error_clear(&err);
    work w = {.key = "g"};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    CHECK(strstr(floe_table_metadata_location(t), "/00001-") != NULL);
    CHECK(strstr(floe_table_metadata_location(t), ".gz.metadata.json") != NULL);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &t2, &err), err);
    CHECK_EQ_STR(floe_table_metadata_property(floe_table_metadata_get(t2), "g"), "1");
    floe_table_close(t2);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(write_metadata_path_honoured) {
    const char *dir = harness_tmpdir();
    char custom[4200];
    snprintf(custom, sizeof custom, "%s/custom_md", dir);
    floe_catalog *c = NULL;
    floe_kv props[] = {{"write.metadata.path", custom}};
    floe_table *t = fresh_table(KIND_SQLITE, dir, &c, props, 1);
    REQUIRE(t != NULL);
    /* recorded as an absolute URI */
    char want[4300];
    snprintf(want, sizeof want, "file://%s/", custom);
    CHECK(!strncmp(floe_table_metadata_location(t), want, strlen(want)));
    floe_error err;
    floe_error_clear(&err);
    work w = {.key = "m"};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    CHECK(!strncmp(floe_table_metadata_location(t), want, strlen(want)));
    CHECK(strstr(floe_table_metadata_location(t), "/00001-") != NULL);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* floe_defaults: floe's properties for the tables it creates, unless given */
TEST(created_defaults) {
    floe_catalog *c = open_kind(KIND_SQLITE, harness_tmpdir());
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err), err);
    floe_kv props[] = {{"write.metadata.previous-versions-max", "3"}};
    floe_table_create_options o = {.props = props, .nprops = 1, .floe_defaults = true};
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_create(c, "db", "d", SCHEMA, &o, &t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    CHECK_EQ_STR(floe_table_metadata_property(m, "write.metadata.previous-versions-max"), "3");
    CHECK_EQ_STR(floe_table_metadata_property(m, "write.metadata.delete-after-commit.enabled"),
                 "true");
    CHECK_EQ_STR(floe_table_metadata_property(m, "commit.manifest.min-count-to-merge"), "8");
    floe_table_close(t);
    floe_table_create_options plain = {.props = props, .nprops = 1};
    REQUIRE_OK(floe_table_create(c, "db", "p", SCHEMA, &plain, &t, &err), err);
    m = floe_table_metadata_get(t);
    CHECK(floe_table_metadata_property(m, "write.metadata.delete-after-commit.enabled") == NULL);
    CHECK(floe_table_metadata_property(m, "commit.manifest.min-count-to-merge") == NULL);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* delete-after-commit cleans the folder write.metadata.path names, too */
TEST(write_metadata_path_cleanup) {
    const char *dir = harness_tmpdir();
    char custom[4200];
    snprintf(custom, sizeof custom, "%s/custom_md", dir);
    floe_catalog *c = NULL;
    floe_kv props[] = {{"write.metadata.path", custom},
                       {"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "1"}};
    floe_table *t = fresh_table(KIND_SQLITE, dir, &c, props, 3);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "m%d", i);
        work w = {.key = key};
        REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    }
    DIR *d = opendir(custom);
    REQUIRE(d != NULL);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strstr(de->d_name, ".metadata.json") != NULL;
    closedir(d);
    CHECK_EQ_INT(n, 2); /* current + 1 previous */
    const floe_table_metadata *m = floe_table_metadata_get(t);
    REQUIRE(m->n_metadata_log == 1);
    CHECK(uri_exists(m->metadata_log[0].metadata_file));
    CHECK(uri_exists(floe_table_metadata_location(t)));
    floe_table_close(t);
    floe_catalog_close(c);
}

/* ---------------------------------------------------------------------------------------
 * many processes, one table
 * ------------------------------------------------------------------------------------- */

#define PROCS 4
#define COMMITS 50

/* The logic under test is the swap, not the disk: run on tmpfs when there is one, where
 * fsync is free (on this kind of disk each costs ~10 ms and 200 commits queue on them). */
static void concurrency_suite(kind k) {
    suite_concurrent_commits(open_cb, &k, k == KIND_SQLITE ? "sqlite" : "fs", PROCS, COMMITS);
}

TEST(concurrent_commits_sqlite) { concurrency_suite(KIND_SQLITE); }
TEST(concurrent_commits_fs) { concurrency_suite(KIND_FS); }

/* ---------------------------------------------------------------------------------------
 * configuration
 * ------------------------------------------------------------------------------------- */

TEST(config_floe_conf) {
    const char *text = "# floe catalogs\n"
                       "catalog = prod\n"
                       "[catalog.dev]\n"
                       "type = filesystem\n"
                       "warehouse = /tmp/dev\n"
                       "[catalog.prod]\n"
                       "type = sql   # the default anyway\n"
                       "uri = \"sqlite:////var/floe/catalog.db\"\n"
                       "warehouse = /var/floe/wh\n"
                       "unknown = ignored\n";
    floe_catalog_config cfg = {0};
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_catalog_config_from_floe_conf(text, strlen(text), NULL, &cfg, &err), err);
    CHECK_EQ_STR(cfg.name, "prod");
    CHECK_EQ_STR(cfg.type, "sql");
    CHECK_EQ_STR(cfg.uri, "sqlite:////var/floe/catalog.db");
    CHECK_EQ_STR(cfg.warehouse, "/var/floe/wh");
    floe_catalog_config_reset(&cfg);
    REQUIRE_OK(floe_catalog_config_from_floe_conf(text, strlen(text), "dev", &cfg, &err), err);
    CHECK_EQ_STR(cfg.type, "filesystem");
    CHECK(cfg.uri == NULL);
    floe_catalog_config_reset(&cfg);
    CHECK_EQ_INT(floe_catalog_config_from_floe_conf(text, strlen(text), "nope", &cfg, &err),
                 FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_catalog_config_from_floe_conf("[catalog.x\n", 11, NULL, &cfg, &err),
                 FLOE_EINVALID);
    CHECK_EQ_INT(floe_catalog_config_from_floe_conf("[catalog.x]\njunk\n", 17, NULL, &cfg, &err),
                 FLOE_EINVALID);
    char *longline = malloc(10000);
    memset(longline, 'a', 9999);
    longline[9999] = '\0';
    CHECK_EQ_INT(floe_catalog_config_from_floe_conf(longline, 9999, NULL, &cfg, &err), FLOE_ELIMIT);
    free(longline);
}

TEST(config_pyiceberg_yaml) {
    const char *text = "# PyIceberg\n"
                       "catalog:\n"
                       "  rest:\n"
                       "    uri: http://rest:8181/\n"
                       "    credential: 't-1234:secret'\n"
                       "  local:\n"
                       "    type: sql\n"
                       "    uri: \"sqlite:////tmp/pyiceberg_catalog.db\"   # comment\n"
                       "    warehouse: file:///tmp/warehouse\n"
                       "other:\n"
                       "  uri: not-this\n";
    floe_catalog_config cfg = {0};
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_catalog_config_from_pyiceberg_yaml(text, strlen(text), "local", &cfg, &err), err);
    CHECK_EQ_STR(cfg.name, "local");
    CHECK_EQ_STR(cfg.type, "sql");
    CHECK_EQ_STR(cfg.uri, "sqlite:////tmp/pyiceberg_catalog.db");
    CHECK_EQ_STR(cfg.warehouse, "file:///tmp/warehouse");
    floe_catalog_config_reset(&cfg);
    REQUIRE_OK(floe_catalog_config_from_pyiceberg_yaml(text, strlen(text), NULL, &cfg, &err), err);
    CHECK_EQ_STR(cfg.name, "rest"); /* the first one */
    CHECK_EQ_STR(cfg.uri, "http://rest:8181/");
    floe_catalog_config_reset(&cfg);
    /* type inferred from a sqlite uri */
    const char *t2 = "catalog:\n  default:\n    uri: sqlite:///x.db\n";
    REQUIRE_OK(floe_catalog_config_from_pyiceberg_yaml(t2, strlen(t2), "default", &cfg, &err), err);
    CHECK_EQ_STR(cfg.type, "sql");
    floe_catalog_config_reset(&cfg);
    /* hostile: deep nesting, tabs, junk, no catalog */
    char deep[4096] = "";
    size_t pos = 0;
    for (int i = 0; i < 60 && pos + 140 < sizeof deep; i++) {
        pos += (size_t)snprintf(deep + pos, sizeof deep - pos, "%*sk%d:\n", i, "", i);
    }
    CHECK_EQ_INT(floe_catalog_config_from_pyiceberg_yaml(deep, strlen(deep), NULL, &cfg, &err),
                 FLOE_ENOTFOUND);
    const char *junk = "catalog:\n\tlocal:\n  - [a, b]\n  x: {y: z}\n: :\n'unterminated: \"\n";
    CHECK_EQ_INT(floe_catalog_config_from_pyiceberg_yaml(junk, strlen(junk), "local", &cfg, &err),
                 FLOE_ENOTFOUND);
}

TEST(config_load_sources) {
    const char *dir = harness_tmpdir();
    floe_catalog_config cfg = {0};
    floe_error err;
    floe_error_clear(&err);
    setenv("FLOE_WAREHOUSE", dir, 1);
    unsetenv("FLOE_CATALOG_URI");
    REQUIRE_OK(floe_catalog_config_load(NULL, NULL, harness_getenv, NULL, &cfg, &err), err);
    CHECK_EQ_STR(cfg.source, "environment");
    CHECK_EQ_STR(cfg.type, "sql");
    char expect[4200];
    snprintf(expect, sizeof expect, "%s/catalog.db", dir);
    CHECK_EQ_STR(cfg.uri, expect);
    floe_catalog *c = NULL;
    REQUIRE_OK(floe_catalog_open(&cfg, &c, &err), err);
    CHECK_EQ_STR(floe_catalog_type(c), "sql");
    floe_catalog_close(c);
    floe_catalog_config_reset(&cfg);
    unsetenv("FLOE_WAREHOUSE");
    /* a config file given explicitly */
    char path[4200];
    snprintf(path, sizeof path, "%s/floe.conf", dir);
    const char *conf = "[catalog.fs]\ntype = filesystem\nwarehouse = /tmp/fs-wh\n";
    harness_write_file(path, conf, strlen(conf));
    REQUIRE_OK(floe_catalog_config_load("fs", path, harness_getenv, NULL, &cfg, &err), err);
    CHECK_EQ_STR(cfg.type, "filesystem");
    CHECK_EQ_STR(cfg.source, path);
    floe_catalog_config_reset(&cfg);
    /* PyIceberg's file through PYICEBERG_HOME */
    snprintf(path, sizeof path, "%s/.pyiceberg.yaml", dir);
    const char *yaml = "catalog:\n  py:\n    type: sql\n    uri: sqlite:////tmp/py.db\n";
    harness_write_file(path, yaml, strlen(yaml));
    setenv("PYICEBERG_HOME", dir, 1);
    REQUIRE_OK(floe_catalog_config_load("py", NULL, harness_getenv, NULL, &cfg, &err), err);
    CHECK_EQ_STR(cfg.uri, "sqlite:////tmp/py.db");
    floe_catalog_config_reset(&cfg);
    CHECK_EQ_INT(floe_catalog_config_load("missing", NULL, harness_getenv, NULL, &cfg, &err), FLOE_ENOTFOUND);
    unsetenv("PYICEBERG_HOME");
}

/* ---------------------------------------------------------------------------------------
 * PyIceberg interop (python3's sqlite3 module as the independent reader)
 * ------------------------------------------------------------------------------------- */

TEST(sqlite_layout_matches_pyiceberg) {
    if (system("python3 -c 'import sqlite3' >/dev/null 2>&1") != 0) {
        printf("skip: python3 with sqlite3 not available\n");
        return;
    }
    const char *dir = harness_tmpdir();
    floe_catalog *c = open_kind(KIND_SQLITE, dir);
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    REQUIRE_OK(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(c, "db", "t", SCHEMA, NULL, &t, &err), err);
    work w = {.key = "x"};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    floe_table_close(t);
    floe_catalog_close(c);
    /* Columns (name, declared type, notnull, pk position) of PyIceberg's SqlCatalog models
     * (String(255)/String(1000), nullable flags, composite primary keys), plus Java's
     * iceberg_type VARCHAR(5). */
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "python3 - <<'EOF'\n"
             "import sqlite3\n"
             "db = sqlite3.connect('%s/catalog.db')\n"
             "want = {\n"
             " 'iceberg_tables': [('catalog_name','VARCHAR(255)',1,1),('table_namespace','VARCHAR(255)',1,2),\n"
             "   ('table_name','VARCHAR(255)',1,3),('metadata_location','VARCHAR(1000)',0,0),\n"
             "   ('previous_metadata_location','VARCHAR(1000)',0,0),('iceberg_type','VARCHAR(5)',0,0)],\n"
             " 'iceberg_namespace_properties': [('catalog_name','VARCHAR(255)',1,1),('namespace','VARCHAR(255)',1,2),\n"
             "   ('property_key','VARCHAR(255)',1,3),('property_value','VARCHAR(1000)',1,0)],\n"
             "}\n"
             "for t, cols in want.items():\n"
             "  got = [(r[1], r[2], r[3], r[5]) for r in db.execute('PRAGMA table_info(%%s)' %% t)]\n"
             "  assert got == cols, (t, got)\n"
             "rows = db.execute(\"SELECT catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables\").fetchall()\n"
             "assert len(rows) == 1 and rows[0][:3] == ('test','db','t') and rows[0][5] == 'TABLE', rows\n"
             "assert '/metadata/00001-' in rows[0][3] and '/metadata/00000-' in rows[0][4], rows\n"
             "ns = db.execute('SELECT namespace, property_key, property_value FROM iceberg_namespace_properties').fetchall()\n"
             "assert ns == [('db','exists','true')], ns\n"
             "print('ok')\n"
             "EOF",
             dir);
    char *out = NULL;
    int rc = harness_run_cmd(cmd, &out);
    CHECK_EQ_INT(rc, 0);
    CHECK(out && strstr(out, "ok"));
    free(out);
}

TEST(pyiceberg_made_database) {
    if (system("python3 -c 'import sqlite3' >/dev/null 2>&1") != 0) {
        printf("skip: python3 with sqlite3 not available\n");
        return;
    }
    const char *dir = harness_tmpdir();
    /* The DDL SQLAlchemy emits for PyIceberg's models: no iceberg_type column. */
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "python3 - <<'EOF'\n"
             "import sqlite3\n"
             "db = sqlite3.connect('%s/catalog.db')\n"
             "db.execute('CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))')\n"
             "db.execute('CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, property_key))')\n"
             "db.execute(\"INSERT INTO iceberg_namespace_properties VALUES ('test','py','exists','true')\")\n"
             "db.commit()\n"
             "EOF",
             dir);
    REQUIRE(harness_run_cmd(cmd, NULL) == 0);
    floe_catalog *c = open_kind(KIND_SQLITE, dir);
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    bool ex = false;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "py", &ex, &err), err);
    CHECK(ex);
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_create(c, "py", "t", SCHEMA, NULL, &t, &err), err);
    work w = {.key = "y", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    char *loc = floe_strdup(floe_table_metadata_location(t));
    floe_table_close(t);
    floe_catalog_close(c);
    snprintf(cmd, sizeof cmd,
             "python3 - <<'EOF'\n"
             "import sqlite3\n"
             "db = sqlite3.connect('%s/catalog.db')\n"
             "cols = [r[1] for r in db.execute('PRAGMA table_info(iceberg_tables)')]\n"
             "assert 'iceberg_type' not in cols, cols\n"
             "r = db.execute(\"SELECT metadata_location FROM iceberg_tables WHERE catalog_name='test' AND table_namespace='py' AND table_name='t'\").fetchone()\n"
             "assert r[0] == '%s', r\n"
             "print('ok')\n"
             "EOF",
             dir, loc);
    char *out = NULL;
    CHECK_EQ_INT(harness_run_cmd(cmd, &out), 0);
    CHECK(out && strstr(out, "ok"));
    free(out);
    floe_free(loc);
}

/* The SQLite driver's process-local write gate: connections of one process to one file
 * queue on it for the write lock. A second writer waits for the first and then gets in;
 * one that waits past its busy timeout gets FLOE_EBUSY; a transaction ended on another
 * thread than began it lets the next writer in. */
typedef struct gate_writer {
    floe_sql *db;
    int rc;
    int64_t began_ms;
} gate_writer;

static void *gate_write(void *arg) {
    gate_writer *w = arg;
    floe_error err;
    w->rc = floe_sql_begin(w->db, &err);
    w->began_ms = floe_wall_ms();
    if (w->rc == 0)
        w->rc = floe_sql_exec(w->db, "INSERT INTO g VALUES(2)", NULL, 0, NULL, &err);
    if (w->rc == 0)
        w->rc = floe_sql_commit(w->db, &err);
    return NULL;
}

static void *gate_begin_only(void *arg) {
    gate_writer *w = arg;
    floe_error err;
    w->rc = floe_sql_begin(w->db, &err);
    return NULL;
}

static int count_row(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    (void)err;
    if (ncols == 1 && cols[0])
        *(int64_t *)ctx = strtoll(cols[0], NULL, 10);
    return 0;
}

TEST(sqlite_write_gate) {
    char path[4096];
    snprintf(path, sizeof path, "%s/gate.db", harness_tmpdir());
    floe_error err;
    floe_sql *a = NULL, *b = NULL, *quick = NULL;
    floe_sql_options slow = {.busy_timeout_ms = 10000}, fast = {.busy_timeout_ms = 100};
    REQUIRE_OK(floe_sql_open_with(path, &slow, &a, &err), err);
    REQUIRE_OK(floe_sql_open_with(path, &slow, &b, &err), err);
    REQUIRE_OK(floe_sql_open_with(path, &fast, &quick, &err), err);
    REQUIRE_OK(floe_sql_exec(a, "CREATE TABLE IF NOT EXISTS g(x INTEGER)", NULL, 0, NULL, &err),
               err);
    /* b waits for a's transaction, then commits its own */
    REQUIRE_OK(floe_sql_begin(a, &err), err);
    REQUIRE_OK(floe_sql_exec(a, "INSERT INTO g VALUES(1)", NULL, 0, NULL, &err), err);
    gate_writer w = {.db = b};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, gate_write, &w) == 0);
    /* a writer past its busy timeout is refused, having changed nothing */
    int64_t t0 = floe_wall_ms();
    CHECK_EQ_INT(floe_sql_exec(quick, "INSERT INTO g VALUES(3)", NULL, 0, NULL, &err),
                 FLOE_EBUSY);
    CHECK(floe_wall_ms() - t0 >= 90);
    CHECK(floe_wall_ms() - t0 < 5000);
    int64_t released = floe_wall_ms();
    REQUIRE_OK(floe_sql_commit(a, &err), err);
    pthread_join(th, NULL);
    CHECK_EQ_INT(w.rc, 0);
    CHECK(w.began_ms >= released);
    int64_t rows = -1;
    REQUIRE_OK(floe_sql_query(a, "SELECT count(*) FROM g", NULL, 0, count_row, &rows, &err),
               err);
    CHECK_EQ_INT(rows, 2);
    /* begun on a thread, committed on this one: the gate is free after */
    gate_writer o = {.db = a};
    REQUIRE(pthread_create(&th, NULL, gate_begin_only, &o) == 0);
    pthread_join(th, NULL);
    REQUIRE_OK(o.rc, err);
    REQUIRE_OK(floe_sql_exec(a, "INSERT INTO g VALUES(4)", NULL, 0, NULL, &err), err);
    REQUIRE_OK(floe_sql_commit(a, &err), err);
    CHECK_EQ_INT(floe_sql_exec(quick, "INSERT INTO g VALUES(5)", NULL, 0, NULL, &err), 0);
    /* a connection closed inside its transaction gives the gate back */
    REQUIRE_OK(floe_sql_begin(b, &err), err);
    floe_sql_close(b);
    CHECK_EQ_INT(floe_sql_exec(quick, "INSERT INTO g VALUES(6)", NULL, 0, NULL, &err), 0);
    REQUIRE_OK(floe_sql_query(a, "SELECT count(*) FROM g", NULL, 0, count_row, &rows, &err),
               err);
    CHECK_EQ_INT(rows, 5); /* 1, 2, 4, 5, 6 */
    floe_sql_close(quick);
    floe_sql_close(a);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(namespaces_sqlite);
    RUN(namespaces_fs);
    RUN(tables_sqlite);
    RUN(tables_fs);
    RUN(metadata_file_versions);
    RUN(legacy_relative_locations);
    RUN(relative_warehouse_records_absolute);
    RUN(placement_sqlite);
    RUN(placement_fs);
    RUN(placement_fs_takes_sql_options);
    RUN(sqlite_write_gate);
    RUN(namespace_location_sqlite);
    RUN(cas_conflict_and_retry_sqlite);
    RUN(cas_conflict_and_retry_fs);
    RUN(drop_at_sqlite);
    RUN(drop_at_fs);
    RUN(drop_at_fs_tombstone);
    RUN(retries_exhausted_sqlite);
    RUN(retries_exhausted_fs);
    RUN(commit_gate_sqlite);
    RUN(commit_gate_fs);
    RUN(injected_faults_sqlite);
    RUN(injected_faults_fs);
    RUN(old_metadata_cleanup_sqlite);
    RUN(old_metadata_cleanup_fs);
    RUN(stale_commit_after_cleanup_sqlite);
    RUN(stale_commit_after_cleanup_fs);
    RUN(gzip_metadata_commits);
    RUN(write_metadata_path_honoured);
    RUN(write_metadata_path_cleanup);
    RUN(created_defaults);
    RUN(concurrent_commits_sqlite);
    RUN(concurrent_commits_fs);
    RUN(config_floe_conf);
    RUN(config_pyiceberg_yaml);
    RUN(config_load_sources);
    RUN(sqlite_layout_matches_pyiceberg);
    RUN(pyiceberg_made_database);
    return harness_finish();
}
