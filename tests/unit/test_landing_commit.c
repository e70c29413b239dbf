/* test_landing_commit.c - exactly-once landing compaction into an Iceberg table (I2).
 *
 *   - floe_append_set_check: the caller's rule runs before anything is written and on
 *     every attempt; noop and errors leave no file behind;
 *   - a crash between the commit and the landing index update (simulated by a hook that
 *     commits through floe_server_commit_iceberg and then reports an unknown state, so the
 *     files stay leased), newer files landed meanwhile, restart: the committed ids are
 *     settled from the table's history, only the new ones are converted and committed,
 *     and the table holds every record exactly once;
 *   - another worker commits one of the leased ids between the history check and the
 *     commit: the append commits nothing (conflict), its files are deleted, the landing
 *     files go back to pending, and the next round settles that id and commits the rest.
 *
 * The server is driven over HTTP with libcurl on 127.0.0.1 (port 0). */
#include <curl/curl.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/scan.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_serve.h"
#include "table/commit_testing.h"

#define MAX_ID 1000

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
    "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"name\",\"required\":false,"
    "\"type\":\"string\"}]}";

/* ---- helpers ---------------------------------------------------------------------- */

static void server_config(floe_server_config *c, const char *dir, char *wh, size_t whn) {
    char schema[4300], text[9000];
    floe_server_config_init(c);
    snprintf(wh, whn, "%s/wh", dir);
    snprintf(schema, sizeof schema, "%s/schema.json", dir);
    harness_write_file(schema, schema_json, strlen(schema_json));
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncompact = false\n"
             "[table shop.t]\nschema = %s\npartition = name\n", wh, schema);
    floe_error err;
    if (floe_server_config_parse(c, text, strlen(text), "test", &err) != 0)
        harness_fail(__FILE__, __LINE__, "config: %s", err.msg);
}

typedef struct row_counts {
    int n[MAX_ID + 1];
    int64_t rows;
} row_counts;

static int count_row(void *ctx, const void *p, size_t n) {
    row_counts *rc = ctx;
    const char *s = p, *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *k = s;
        while (k + 5 < (nl ? nl : end) && memcmp(k, "\"id\":", 5))
            k++;
        if (k + 5 < (nl ? nl : end)) {
            long id = strtol(k + 5, NULL, 10);
            if (id >= 0 && id <= MAX_ID)
                rc->n[id]++;
            rc->rows++;
        }
        s = nl ? nl + 1 : end;
    }
    return 0;
}

typedef struct table_view {
    row_counts rows;
    size_t nsnapshots;
    int64_t snap_of[64];     /* per landing seq: snapshot whose floe.landing-ids names it */
} table_view;

static void read_table(const char *wh, table_view *tv) {
    memset(tv, 0, sizeof *tv);
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    floe_error err;
    REQUIRE(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err) == 0);
    REQUIRE(floe_table_load(cat, "shop", "t", &t, &err) == 0);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    tv->nsnapshots = m->n_snapshots;
    for (size_t i = 0; i < m->n_snapshots; i++)
        for (size_t k = 0; k < m->snapshots[i].n_summary; k++) {
            const floe_kv *kv = &m->snapshots[i].summary[k];
            if (strcmp(kv->key, "floe.landing-ids"))
                continue;
            for (const char *p = kv->value; p && *p;) {
                /* "node1-0000000003,...": the seq follows the id's last '-' */
                const char *comma = strchr(p, ',');
                const char *end = comma ? comma : p + strlen(p), *dash = NULL;
                for (const char *d = p; d < end; d++)
                    if (*d == '-')
                        dash = d;
                long seq = dash ? strtol(dash + 1, NULL, 10) : -1;
                if (seq >= 0 && seq < 64) {
                    CHECK(tv->snap_of[seq] == 0); /* no id in two snapshots */
                    tv->snap_of[seq] = m->snapshots[i].snapshot_id;
                }
                p = comma ? comma + 1 : NULL;
            }
        }
    floe_scan_options so;
    memset(&so, 0, sizeof so);
    if (m->n_snapshots) {
        REQUIRE(floe_scan_plan_files(t, &so, &plan, &err) == 0);
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
        REQUIRE(floe_scan_read(t, plan, &ro, count_row, &tv->rows, NULL, &err) == 0);
    }
    floe_scan_plan_free(plan);
    floe_table_close(t);
    floe_catalog_close(cat);
}

typedef struct index_row {
    long seq;
    char state[16];
    int64_t snapshot;
} index_row;

/* Data rows (kind 1) of the landing index, by seq. */
static size_t read_index(const char *wh, index_row *out, size_t cap) {
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh); /* the index is in the catalog database */
    sqlite3 *d = NULL;
    sqlite3_stmt *st = NULL;
    size_t n = 0;
    REQUIRE(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(d, "SELECT seq, state, COALESCE(snapshot_id,0) FROM "
                               "landing_files WHERE kind=1 ORDER BY seq", -1, &st,
                               NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW && n < cap) {
        out[n].seq = (long)sqlite3_column_int64(st, 0);
        snprintf(out[n].state, sizeof out[n].state, "%s", sqlite3_column_text(st, 1));
        out[n].snapshot = sqlite3_column_int64(st, 2);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(d);
    return n;
}

static size_t count_state(const index_row *r, size_t n, const char *state) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !strcmp(r[i].state, state);
    return k;
}

/* Parquet files anywhere under dir. */
static int count_parquet(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        size_t l = strlen(e->d_name);
        if (l > 8 && !strcmp(e->d_name + l - 8, ".parquet"))
            n++;
        else
            n += count_parquet(p);
    }
    closedir(d);
    return n;
}

/* ---- the test hook ------------------------------------------------------------------ */

enum { HOOK_PASS, HOOK_CRASH_AFTER_COMMIT, HOOK_STEAL, HOOK_TAKEOVER };

typedef struct wrap {
    floe_server *s;
    int mode;
    int calls;
    int last_rc;
    char seen[64][32];       /* landing ids handed to the hook */
    size_t nseen;
    char first_file[4400];   /* a data file of the last call */
    const char *wh;
    int64_t stolen_snapshot;
    char stolen_id[32];
    floe_server *other;      /* HOOK_TAKEOVER: the worker that takes the job over */
    int other_rc;
    bool expire_meanwhile;   /* ... and the snapshot it commits is expired at once */
} wrap;

static void append_and_expire(const char *wh);

/* The leases of everything in flight run out (as when the worker holding them stalls
 * past their end), by the database's clock. */
static void expire_leases(const char *wh) {
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    floe_sql *sql = NULL;
    floe_error err;
    REQUIRE(floe_sql_open(db, &sql, &err) == 0);
    REQUIRE(floe_sql_exec(sql, "UPDATE floe_leases SET expires_at = 0", NULL, 0, NULL,
                          &err) == 0);
    REQUIRE(floe_sql_exec(sql, "UPDATE landing_files SET lease_until_ms = 0 WHERE "
                          "state = 'compacting'", NULL, 0, NULL, &err) == 0);
    floe_sql_close(sql);
}

/* Another worker's commit: an append naming one landing id (and no rows). */
static int64_t commit_other_worker(const char *wh, const char *landing_id) {
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_append *a = NULL;
    floe_append_result res;
    memset(&res, 0, sizeof res);
    floe_error err;
    REQUIRE(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err) == 0);
    REQUIRE(floe_table_load(cat, "shop", "t", &t, &err) == 0);
    REQUIRE(floe_append_new(t, &a, &err) == 0);
    REQUIRE(floe_append_set_summary(a, "floe.landing-ids", landing_id, &err) == 0);
    int rc = floe_append_commit(a, &res, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "other worker's commit: %s", err.msg);
    int64_t snap = res.snapshot_id;
    floe_append_result_reset(&res);
    floe_append_free(a);
    floe_table_close(t);
    floe_catalog_close(cat);
    return snap;
}

static int wrap_hook(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                     floe_error *err) {
    wrap *w = ctx;
    w->calls++;
    for (size_t i = 0; i < c->nlanding && w->nseen < 64; i++)
        snprintf(w->seen[w->nseen++], sizeof w->seen[0], "%s", c->landing_ids[i]);
    snprintf(w->first_file, sizeof w->first_file, "%s",
             c->nfiles ? c->files[0].file_path : "");
    if (w->mode == HOOK_STEAL && c->nlanding >= 2) {
        snprintf(w->stolen_id, sizeof w->stolen_id, "%s", c->landing_ids[1]);
        w->stolen_snapshot = commit_other_worker(w->wh, w->stolen_id);
    }
    if (w->mode == HOOK_TAKEOVER) {
        /* this worker stalls before its swap; its leases run out; another worker takes the
         * partition over and commits the same landing files; then this one goes on */
        expire_leases(w->wh);
        floe_error e2;
        w->other_rc = floe_server_flush(w->other, true, &e2);
        if (w->expire_meanwhile)
            append_and_expire(w->wh);
    }
    int rc = floe_server_commit_iceberg(w->s, c, snapshot_id, err);
    w->last_rc = rc;
    if (rc == 0 && w->mode == HOOK_CRASH_AFTER_COMMIT)
        /* the table has the snapshot; the index will not hear of it (a crash) */
        return floe_error_set(err, FLOE_EUNKNOWN_STATE, "test: crash after the commit");
    return rc;
}

static bool seen(const wrap *w, long seq) {
    for (size_t i = 0; i < w->nseen; i++) {
        const char *dash = strrchr(w->seen[i], '-');
        if (dash && strtol(dash + 1, NULL, 10) == seq)
            return true;
    }
    return false;
}

static floe_server *open_server(const floe_server_config *cfg, wrap *w) {
    floe_server_hooks hooks = {.commit = wrap_hook, .commit_ctx = w};
    floe_server *s = NULL;
    floe_error err;
    if (floe_server_open(cfg, &hooks, &s, &err) != 0)
        harness_fail(__FILE__, __LINE__, "open: %s", err.msg);
    w->s = s;
    return s;
}

/* ---- tests ---------------------------------------------------------------------------- */

typedef struct check_ctx {
    int calls;
    int noop_from;           /* the call from which the check reports noop (0 = never) */
    int fail_at;             /* the call that fails with FLOE_EINVALID (0 = never) */
} check_ctx;

static int counting_check(void *ctx, const floe_table_metadata *base, floe_error *err) {
    check_ctx *c = ctx;
    CHECK(base != NULL);
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at)
        return floe_error_set(err, FLOE_EINVALID, "test: check failed");
    if (c->noop_from && c->calls >= c->noop_from)
        return FLOE_COMMIT_NOOP;
    return 0;
}

static int count_avro(const char *dir) {
    DIR *d = opendir(dir);
    REQUIRE(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        n += l > 5 && !strcmp(e->d_name + l - 5, ".avro");
    }
    closedir(d);
    return n;
}

static int commit_with_check(floe_table *t, check_ctx *ck, floe_append_result *res,
                             floe_error *err) {
    floe_append *a = NULL;
    REQUIRE(floe_append_new(t, &a, err) == 0);
    floe_data_file df;
    memset(&df, 0, sizeof df);
    df.content = FLOE_CONTENT_DATA;
    df.file_path = "/nowhere/a.parquet";
    df.file_format = "parquet";
    df.record_count = 3;
    df.file_size_in_bytes = 100;
    REQUIRE(floe_append_add_file(a, &df, err) == 0);
    floe_append_set_check(a, counting_check, ck);
    memset(res, 0, sizeof *res);
    int rc = floe_append_commit(a, res, err);
    floe_append_free(a);
    return rc;
}

TEST(test_append_check_per_attempt) {
    const char *dir = harness_tmpdir();
    char db[4400], wh[4400], md[4500];
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_error err;
    REQUIRE(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err) == 0);
    REQUIRE(floe_catalog_create_namespace(cat, "ns", NULL, NULL, 0, &err) == 0);
    REQUIRE(floe_table_create(cat, "ns", "t", schema_json, NULL, &t, &err) == 0);
    snprintf(md, sizeof md, "%s/ns/t/metadata", wh);
    floe_append_result res;

    /* noop at once: nothing written at all */
    check_ctx ck = {.noop_from = 1};
    CHECK_EQ_INT(commit_with_check(t, &ck, &res, &err), 0);
    CHECK(res.noop);
    CHECK_EQ_INT(ck.calls, 1);
    CHECK_EQ_INT(count_avro(md), 0);
    CHECK(floe_table_metadata_current_snapshot(floe_table_metadata_get(t)) == NULL);
    floe_append_result_reset(&res);

    /* a conflict on the first swap: the check runs again on the fresh base (call 3) and
     * stops the commit; the manifest and both lists are deleted */
    ck = (check_ctx){.noop_from = 3};
    floe_commit_fault f = {.nth_swap = 1, .code = FLOE_ECONFLICT};
    floe_table_commit_inject(&f);
    CHECK_EQ_INT(commit_with_check(t, &ck, &res, &err), 0);
    floe_table_commit_inject(&(floe_commit_fault){0});
    CHECK(res.noop);
    CHECK_EQ_INT(ck.calls, 3);
    CHECK_EQ_INT(count_avro(md), 0);
    CHECK(floe_table_metadata_current_snapshot(floe_table_metadata_get(t)) == NULL);
    floe_append_result_reset(&res);

    /* an error from the check in an attempt aborts with it, leaving nothing */
    ck = (check_ctx){.fail_at = 2};
    CHECK_EQ_INT(commit_with_check(t, &ck, &res, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "test: check failed") != NULL);
    CHECK_EQ_INT(count_avro(md), 0);
    floe_append_result_reset(&res);

    /* the check passing: committed after one pre-check and one attempt */
    ck = (check_ctx){0};
    CHECK_EQ_INT(commit_with_check(t, &ck, &res, &err), 0);
    CHECK(!res.noop);
    CHECK_EQ_INT(ck.calls, 2);
    CHECK(res.snapshot_id != 0);
    CHECK_EQ_INT(count_avro(md), 2); /* manifest + list */
    floe_append_result_reset(&res);
    floe_table_close(t);
    floe_catalog_close(cat);
}

TEST(test_crash_between_commit_and_index_mixed_lease) {
    const char *dir = harness_tmpdir();
    char wh[4200];
    floe_server_config cfg;
    server_config(&cfg, dir, wh, sizeof wh);
    static wrap w;
    memset(&w, 0, sizeof w);
    w.wh = wh;
    const char *names[2] = {"a", "b"};
    floe_error err;

    /* 1: ids 1-40 land in two partitions; their one commit (both partitions were due
     * together) reaches the table, the index does not hear of it */
    w.mode = HOOK_CRASH_AFTER_COMMIT;
    floe_server *s = open_server(&cfg, &w);
    CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", 1, 40, names, 2), 200);
    /* the flush reports the round's outcome: unknown */
    CHECK_EQ_INT(floe_server_flush(s, true, &err), FLOE_EUNKNOWN_STATE);
    CHECK(strstr(err.msg, "crash after the commit") != NULL);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(w.last_rc, 0);
    /* 2: ids 41-80 land after it: pending files beside the leased ones */
    CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", 41, 80, names, 2), 200);
    REQUIRE(floe_server_flush(s, false, &err) == 0);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));

    /* the swap itself marked the first two committed (one transaction with the catalog
     * pointer), although the compactor never heard back */
    index_row ix[16];
    size_t nix = read_index(wh, ix, 16);
    REQUIRE(nix == 4);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 2);
    CHECK_EQ_INT((int)count_state(ix, nix, "pending"), 2);
    static table_view tv;
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.nsnapshots, 1);
    CHECK_EQ_INT((int)tv.rows.rows, 40);

    /* 3: restart; only the new files are compacted, both partitions in one commit */
    memset(&w, 0, sizeof w);
    w.wh = wh;
    w.mode = HOOK_PASS;
    s = open_server(&cfg, &w);
    REQUIRE(floe_server_flush(s, true, &err) == 0);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    CHECK_EQ_INT(w.calls, 1);
    nix = read_index(wh, ix, 16);
    REQUIRE(nix == 4);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 4);
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.nsnapshots, 2);
    CHECK_EQ_INT((int)tv.rows.rows, 80);
    for (int id = 1; id <= 80; id++)
        if (tv.rows.n[id] != 1)
            harness_fail(__FILE__, __LINE__, "id %d is in the table %d times", id,
                         tv.rows.n[id]);
    for (size_t i = 0; i < nix; i++) {
        /* the first two files were not handed to the hook again and carry the snapshot
         * that consumed them; the other two were committed now */
        bool old = ix[i].seq < 2;
        CHECK(seen(&w, ix[i].seq) == !old);
        CHECK(ix[i].snapshot != 0);
        CHECK(ix[i].seq < 64 && ix[i].snapshot == tv.snap_of[ix[i].seq]);
    }
    floe_server_config_reset(&cfg);
}

TEST(test_id_committed_by_another_worker_meanwhile) {
    const char *dir = harness_tmpdir();
    char wh[4200];
    floe_server_config cfg;
    server_config(&cfg, dir, wh, sizeof wh);
    static wrap w;
    memset(&w, 0, sizeof w);
    w.wh = wh;
    const char *names[1] = {"a"};
    floe_error err;
    w.mode = HOOK_STEAL;
    floe_server *s = open_server(&cfg, &w);
    /* three landing files in partition name=a */
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", k * 10 + 1, k * 10 + 10,
                                 names, 1), 200);
        REQUIRE(floe_server_flush(s, false, &err) == 0);
    }
    CHECK_EQ_INT(floe_server_flush(s, true, &err), FLOE_ECONFLICT);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(w.last_rc, FLOE_ECONFLICT);
    CHECK(w.stolen_snapshot != 0);
    /* nothing of the job stays: its data file is gone; the stolen file is settled as
     * committed at once (in the other worker's snapshot), the other two are pending */
    bool ex = true;
    REQUIRE(w.first_file[0]);
    CHECK(floe_io_exists(NULL, w.first_file, &ex, &err) == 0 && !ex);
    char data[4400];
    snprintf(data, sizeof data, "%s/shop/t/data", wh);
    CHECK_EQ_INT(count_parquet(data), 0);
    index_row ix[16];
    size_t nix = read_index(wh, ix, 16);
    REQUIRE(nix == 3);
    CHECK_EQ_INT((int)count_state(ix, nix, "pending"), 2);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 1);
    for (size_t i = 0; i < nix; i++)
        if (!strcmp(ix[i].state, "committed"))
            CHECK(ix[i].snapshot == w.stolen_snapshot);

    /* the next round commits the other two */
    w.mode = HOOK_PASS;
    w.calls = 0;
    w.nseen = 0;
    REQUIRE(floe_server_flush(s, true, &err) == 0);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT((int)w.nseen, 2);
    nix = read_index(wh, ix, 16);
    REQUIRE(nix == 3);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 3);
    static table_view tv;
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.nsnapshots, 2);
    const char *dash = strrchr(w.stolen_id, '-');
    REQUIRE(dash);
    long stolen = strtol(dash + 1, NULL, 10);
    for (size_t i = 0; i < nix; i++) {
        CHECK(seen(&w, ix[i].seq) == (ix[i].seq != stolen));
        CHECK(ix[i].snapshot == tv.snap_of[ix[i].seq]);
        if (ix[i].seq == stolen)
            CHECK(ix[i].snapshot == w.stolen_snapshot);
    }
    /* the other worker's snapshot carried no rows: the table holds the other 20 once */
    CHECK_EQ_INT((int)tv.rows.rows, 20);
    for (int id = 1; id <= 30; id++)
        CHECK(tv.rows.n[id] <= 1);
    floe_server_config_reset(&cfg);
}

/* Another writer's snapshot, then expiry keeping only it. */
static void append_and_expire(const char *wh) {
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    hs_append_and_expire_sqlite(db, wh, "shop", "t");
}

/* A worker stalls before its pointer swap, its leases run out, a second worker takes the
 * partition over and commits its landing files; the first one goes on. Either its commit
 * finds them in the table (a no-op), or - when the winner's snapshot was expired in
 * between - its swap finds them no longer its own and is rolled back. Either way the
 * files stay committed (the first worker's release must not put the winner's committed
 * files back to pending), and after the winning snapshot is expired nothing is committed
 * twice. */
static void takeover(const char *dir, bool expire_meanwhile) {
    char wh[4200];
    floe_server_config cfg, cfg2;
    server_config(&cfg, dir, wh, sizeof wh);
    server_config(&cfg2, dir, wh, sizeof wh);
    cfg2.role = FLOE_SERVER_ROLE_COMPACTOR;
    REQUIRE((cfg2.node_id = floe_strdup("w2")) != NULL);
    /* no lease renewal during the test: the leases end only when the test says so */
    cfg.compact_lease_ms = cfg2.compact_lease_ms = 3600000;
    static wrap w;
    memset(&w, 0, sizeof w);
    w.wh = wh;
    w.mode = HOOK_TAKEOVER;
    w.expire_meanwhile = expire_meanwhile;
    const char *names[1] = {"a"};
    floe_error err;
    floe_server *s = open_server(&cfg, &w);
    floe_server *s2 = NULL;
    REQUIRE(floe_server_open(&cfg2, NULL, &s2, &err) == 0);
    w.other = s2;
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", k * 10 + 1, k * 10 + 10,
                                 names, 1), 200);
        REQUIRE(floe_server_flush(s, false, &err) == 0);
    }
    /* the first worker's commit is a no-op: nothing committed by it */
    CHECK_EQ_INT(floe_server_flush(s, true, &err), FLOE_ECONFLICT);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(w.other_rc, 0);
    CHECK_EQ_INT(w.last_rc, FLOE_ECONFLICT);
    index_row ix[16];
    size_t nix = read_index(wh, ix, 16);
    REQUIRE(nix == 2);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 2);
    static table_view tv;
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.rows.rows, 20);

    /* the winner's snapshot is expired; later rounds find nothing to do */
    append_and_expire(wh);
    w.mode = HOOK_PASS;
    w.calls = 0;
    REQUIRE(floe_server_flush(s, true, &err) == 0);
    REQUIRE(floe_server_flush(s2, true, &err) == 0);
    CHECK_EQ_INT(w.calls, 0);
    FLOE_IGNORE_RESULT(floe_server_close(s2, &err));
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    nix = read_index(wh, ix, 16);
    CHECK_EQ_INT((int)count_state(ix, nix, "committed"), 2);
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.rows.rows, 20);
    for (int id = 1; id <= 20; id++)
        if (tv.rows.n[id] != 1)
            harness_fail(__FILE__, __LINE__, "id %d is in the table %d times", id,
                         tv.rows.n[id]);
    floe_server_config_reset(&cfg);
    floe_server_config_reset(&cfg2);
}

TEST(test_noop_after_takeover_keeps_files_committed) {
    takeover(harness_tmpdir(), false);
}

TEST(test_swap_after_takeover_and_expiry_commits_nothing) {
    takeover(harness_tmpdir(), true);
}

/* Earlier releases kept the index of the embedded default in _landing/_index.db. Its rows
 * (a file left leased by a crash, an idempotency answer) move into the catalog database at
 * the next start, the old file is kept aside, and the moved file is compacted once. */
TEST(test_legacy_index_moves_into_catalog) {
    const char *dir = harness_tmpdir();
    char wh[4200], path[4600], land[4400], legacy[4600];
    floe_server_config cfg;
    server_config(&cfg, dir, wh, sizeof wh);
    snprintf(land, sizeof land, "%s/_landing/shop.t/name=a", wh);
    REQUIRE(floe_io_mkdirs(NULL, land, NULL) == 0);
    snprintf(path, sizeof path, "%s/node1-0000000000.ndjson", land);
    static const char rec[] = "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"a\"}\n";
    REQUIRE(harness_write_file(path, rec, strlen(rec)) == 0);
    snprintf(legacy, sizeof legacy, "%s/_landing/_index.db", wh);
    sqlite3 *d = NULL;
    REQUIRE(sqlite3_open(legacy, &d) == SQLITE_OK);
    char sql[9000];
    snprintf(sql, sizeof sql,
             "CREATE TABLE landing_files(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT "
             "NULL, seq INTEGER NOT NULL, tbl TEXT NOT NULL, part TEXT NOT NULL, kind INTEGER "
             "NOT NULL, uri TEXT NOT NULL, bytes INTEGER NOT NULL, raw_bytes INTEGER NOT NULL, "
             "records INTEGER NOT NULL, first_frame INTEGER NOT NULL, last_frame INTEGER NOT "
             "NULL, created_ms INTEGER NOT NULL, state TEXT NOT NULL, lease_until_ms INTEGER, "
             "snapshot_id INTEGER, UNIQUE(node, seq));"
             "CREATE TABLE idempotency(tbl_key TEXT PRIMARY KEY, created_ms INTEGER NOT NULL, "
             "answer TEXT NOT NULL);"
             "INSERT INTO landing_files(node, seq, tbl, part, kind, uri, bytes, raw_bytes, "
             "records, first_frame, last_frame, created_ms, state, lease_until_ms) VALUES("
             "'node1', 0, 'shop.t', 'name=a', 1, '%s', %zu, %zu, 2, 1, 1, %lld, 'compacting', "
             "%lld);"
             "INSERT INTO idempotency VALUES('shop.t' || char(10) || 'key-1', %lld, "
             "'{\"batch_id\":\"node1-1\",\"accepted\":2,\"rejected\":0}');",
             path, strlen(rec), strlen(rec), (long long)floe_wall_ms(),
             (long long)floe_wall_ms() + 3600000, (long long)floe_wall_ms());
    REQUIRE(sqlite3_exec(d, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(d);

    static wrap w;
    memset(&w, 0, sizeof w);
    w.wh = wh;
    floe_server *s = open_server(&cfg, &w);
    bool ex = true;
    floe_error err;
    CHECK(floe_io_exists(NULL, legacy, &ex, &err) == 0 && !ex);
    char moved[4700];
    snprintf(moved, sizeof moved, "%s.migrated", legacy);
    CHECK(floe_io_exists(NULL, moved, &ex, &err) == 0 && ex);
    /* the answer stored by the old index is found */
    char *ans = NULL;
    char *body = hs_ids_body(1, 2, (const char *const[]){"a"}, 1);
    CHECK_EQ_INT(hs_post(floe_server_port(s), "shop.t", body, "key-1", &ans, NULL), 200);
    CHECK(ans && strstr(ans, "node1-1") != NULL);
    floe_free(ans);
    floe_free(body);
    REQUIRE(floe_server_flush(s, true, &err) == 0);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    CHECK_EQ_INT(w.calls, 1);
    index_row ix[4];
    size_t nix = read_index(wh, ix, 4);
    REQUIRE(nix == 1);
    CHECK_EQ_STR(ix[0].state, "committed");
    static table_view tv;
    read_table(wh, &tv);
    CHECK_EQ_INT((int)tv.rows.rows, 2);
    CHECK_EQ_INT(tv.rows.n[1], 1);
    CHECK_EQ_INT(tv.rows.n[2], 1);
    floe_server_config_reset(&cfg);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_append_check_per_attempt);
    RUN(test_crash_between_commit_and_index_mixed_lease);
    RUN(test_id_committed_by_another_worker_meanwhile);
    RUN(test_noop_after_takeover_keeps_files_committed);
    RUN(test_swap_after_takeover_and_expiry_commits_nothing);
    RUN(test_legacy_index_moves_into_catalog);
    curl_global_cleanup();
    return harness_finish();
}
