/* test_landing_pg.c - with the catalog on PostgreSQL, the landing index is in the catalog
 * database and the commit's pointer swap marks the consumed landing files committed in
 * its own transaction (DESIGN.md I2; floe_catalog_set_swap_hook).
 *
 * Also, on a shared index (DESIGN.md, exactly once across nodes):
 *   - a worker stalled inside its pointer swap (a statement trigger waits on an advisory
 *     lock the test holds) while its leases run out and a second worker commits the same
 *     landing files: its commit turns out a no-op, the files stay committed, and after
 *     the winning snapshot is expired nothing is committed twice;
 *   - an Idempotency-Key whose claim cannot be made is refused with 503 (fail closed);
 *   - a claim's age is judged by the database's clock: a node whose clock runs 11
 *     minutes fast does not take over a live claim of another node.
 *
 * The commit hook wraps the default one and, after it committed, reports a crash
 * (FLOE_EUNKNOWN_STATE): the compactor then leaves its own index update undone (the files
 * stay as the swap left them). With a separate index (SQLite, test_landing_commit) they
 * stay "compacting"; here they must already be "committed" - only the swap's transaction
 * can have done that - and a second compaction finds nothing to do: each event is in the
 * table once.
 *
 * Needs a PostgreSQL server: FLOE_PG_URI (tests/integration/serve_remote.sh runs this
 * program with its throwaway server). Without it the test exits 77: ctest reports a skip. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/maint.h"
#include "floe/scan.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_serve.h"
#include "common/testing.h"

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
    "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"name\",\"required\":false,"
    "\"type\":\"string\"}]}";

static size_t discard(char *p, size_t sz, size_t n, void *ctx) {
    (void)p;
    (void)ctx;
    return sz * n;
}

static long post_ids(uint16_t port, const char *table, int from, int to) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = from; i <= to; i++)
        floe_buf_printf(&b, "{\"id\":%d,\"name\":\"%s\"}\n", i, i % 2 ? "a" : "b");
    floe_buf_append_byte(&b, 0);
    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/tables/%s/events", port, table);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)b.data);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    floe_buf_free(&b);
    return code;
}

typedef struct wrap {
    floe_server *s;
    int calls, committed;
} wrap;

static int crash_after_commit(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                              floe_error *err) {
    wrap *w = ctx;
    w->calls++;
    int rc = floe_server_commit_iceberg(w->s, c, snapshot_id, err);
    if (rc != 0)
        return rc;
    w->committed++;
    return floe_error_set(err, FLOE_EUNKNOWN_STATE, "test: crash after the commit");
}

static int count_row(void *ctx, const void *p, size_t n) {
    int64_t *rows = ctx;
    for (size_t i = 0; i < n; i++)
        *rows += ((const char *)p)[i] == '\n';
    return 0;
}

TEST(test_swap_marks_landing_files_committed) {
    const char *uri = getenv("FLOE_PG_URI");
    char dir[4200], schema[4300], text[9000], node[32], table[64], ns[32];
    snprintf(dir, sizeof dir, "%s", harness_tmpdir());
    snprintf(schema, sizeof schema, "%s/schema.json", dir);
    harness_write_file(schema, schema_json, strlen(schema_json));
    /* names of this run: the database may hold other runs' rows */
    unsigned r = (unsigned)getpid();
    snprintf(node, sizeof node, "u%u", r);
    snprintf(ns, sizeof ns, "unit%u", r);
    snprintf(table, sizeof table, "%s.t", ns);
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s/wh\ncatalog = %s\n"
             "node_id = %s\ncompact = false\nmaintain = false\n"
             "[table %s]\nschema = %s\npartition = name\n", dir, uri, node, table, schema);
    floe_server_config cfg;
    floe_server_config_init(&cfg);
    floe_error err;
    REQUIRE_OK(floe_server_config_parse(&cfg, text, strlen(text), "test", &err), err);
    static wrap w;
    floe_server_hooks hooks = {.commit = crash_after_commit, .commit_ctx = &w};
    floe_server *s = NULL;
    REQUIRE_OK(floe_server_open(&cfg, &hooks, &s, &err), err);
    w.s = s;
    CHECK_EQ_INT(post_ids(floe_server_port(s), table, 1, 40), 200);
    /* the round's outcome is reported: unknown; partitions name=a and name=b, due
     * together, went into one commit */
    CHECK_EQ_INT(floe_server_flush(s, true, &err), FLOE_EUNKNOWN_STATE);
    CHECK_EQ_INT(w.calls, 1);
    CHECK_EQ_INT(w.committed, 1);

    /* the compactor heard "unknown" and did not touch the index: what is there, the
     * swap's transaction wrote */
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    hs_states st = hs_landing_states(db, table);
    CHECK_EQ_INT(st.committed, 2);
    CHECK_EQ_INT(st.compacting + st.pending + st.other, 0);
    CHECK_EQ_INT(st.with_snapshot, 2); /* the swap recorded the snapshot too */

    /* nothing is left to compact: the hook is not called again */
    REQUIRE_OK(floe_server_flush(s, true, &err), err);
    CHECK_EQ_INT(w.calls, 1);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));

    /* every event once */
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    char wh[4300];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    REQUIRE_OK(floe_catalog_open_postgres(NULL, uri, "default", wh, &cat, &err), err);
    REQUIRE_OK(floe_table_load(cat, ns, "t", &t, &err), err);
    CHECK_EQ_INT((int)floe_table_metadata_get(t)->n_snapshots, 1);
    floe_scan_options so;
    memset(&so, 0, sizeof so);
    REQUIRE_OK(floe_scan_plan_files(t, &so, &plan, &err), err);
    int64_t rows = 0;
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
    REQUIRE_OK(floe_scan_read(t, plan, &ro, count_row, &rows, NULL, &err), err);
    CHECK_EQ_INT((int)rows, 40);
    floe_scan_plan_free(plan);
    floe_table_close(t);
    floe_catalog_close(cat);
    floe_sql_close(db);
    floe_server_config_reset(&cfg);
}

/* ---- shared-index tests --------------------------------------------------------------- */

typedef struct pg_env {
    char dir[4200], wh[4300], node[32], ns[32], table[64];
    floe_server_config cfg;
} pg_env;

static void pg_env_init(pg_env *e, const char *node_suffix, const char *extra) {
    const char *uri = getenv("FLOE_PG_URI");
    char schema[4300], text[9000];
    snprintf(e->dir, sizeof e->dir, "%s", harness_tmpdir());
    snprintf(e->wh, sizeof e->wh, "%s/wh", e->dir);
    snprintf(schema, sizeof schema, "%s/schema.json", e->dir);
    harness_write_file(schema, hs_schema_json, strlen(hs_schema_json));
    static unsigned run;
    unsigned r = (unsigned)getpid() * 100 + ++run;
    snprintf(e->node, sizeof e->node, "u%u%s", r, node_suffix);
    snprintf(e->ns, sizeof e->ns, "unit%u", r);
    snprintf(e->table, sizeof e->table, "%s.t", e->ns);
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncatalog = %s\n"
             "node_id = %s\ncompact = false\nmaintain = false\n%s"
             "[table %s]\nschema = %s\npartition = name\n", e->wh, uri, e->node,
             extra ? extra : "", e->table, schema);
    floe_server_config_init(&e->cfg);
    floe_error err;
    if (floe_server_config_parse(&e->cfg, text, strlen(text), "test", &err) != 0)
        harness_fail(__FILE__, __LINE__, "config: %s", err.msg);
}

static void pg_exec(floe_sql *db, const char *sql) {
    floe_error err;
    if (floe_sql_exec(db, sql, NULL, 0, NULL, &err) != 0)
        harness_fail(__FILE__, __LINE__, "%s: %s", sql, err.msg);
}

static int one_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    if (n >= 1 && cols[0])
        *(int64_t *)ctx = strtoll(cols[0], NULL, 10);
    return 0;
}

typedef struct flush_job {
    floe_server *s;
    int rc;
    floe_error err;
} flush_job;

static void *flush_thread(void *arg) {
    flush_job *j = arg;
    j->rc = floe_server_flush(j->s, true, &j->err);
    return NULL;
}

TEST(test_noop_after_stall_in_swap_keeps_files_committed) {
    const char *uri = getenv("FLOE_PG_URI");
    pg_env a, b;
    pg_env_init(&a, "", NULL);
    b = a;
    memset(&b.cfg, 0, sizeof b.cfg);
    {   /* the second worker: same table and warehouse, its own name, compaction only */
        char text[9000], schema[4300];
        snprintf(schema, sizeof schema, "%s/schema.json", a.dir);
        snprintf(text, sizeof text,
                 "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncatalog = %s\n"
                 "node_id = %sw\nrole = compactor\ncompact = false\nmaintain = false\n"
                 "[table %s]\nschema = %s\npartition = name\n", a.wh, uri, a.node, a.table,
                 schema);
        floe_server_config_init(&b.cfg);
        floe_error e;
        REQUIRE_OK(floe_server_config_parse(&b.cfg, text, strlen(text), "test", &e), e);
    }
    floe_error err;
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    /* the first swap after the sequence is reset waits for advisory lock 4242; the
     * trigger fires before the UPDATE locks any row */
    pg_exec(db, "CREATE SEQUENCE IF NOT EXISTS floe_test_stall_seq");
    pg_exec(db, "CREATE OR REPLACE FUNCTION floe_test_stall() RETURNS trigger AS $$ BEGIN "
                "IF nextval('floe_test_stall_seq') = 1 THEN PERFORM pg_advisory_lock(4242); "
                "PERFORM pg_advisory_unlock(4242); END IF; RETURN NULL; END $$ "
                "LANGUAGE plpgsql");
    pg_exec(db, "DROP TRIGGER IF EXISTS floe_test_stall ON iceberg_tables");
    floe_server *s1 = NULL, *s2 = NULL;
    a.cfg.compact_lease_ms = b.cfg.compact_lease_ms = 3600000; /* no renewal during the test */
    REQUIRE_OK(floe_server_open(&a.cfg, NULL, &s1, &err), err);
    REQUIRE_OK(floe_server_open(&b.cfg, NULL, &s2, &err), err);
    pg_exec(db, "CREATE TRIGGER floe_test_stall BEFORE UPDATE ON iceberg_tables FOR EACH "
                "STATEMENT EXECUTE FUNCTION floe_test_stall()");
    const char *names[1] = {"a"};
    CHECK_EQ_INT(hs_post_ids(floe_server_port(s1), a.table, 1, 20, names, 1), 200);
    CHECK_OK(floe_server_flush(s1, false, &err), err);

    /* worker 1 compacts and stalls inside its swap */
    pg_exec(db, "SELECT setval('floe_test_stall_seq', 1, false)");
    int64_t got = 0;
    REQUIRE_OK(floe_sql_query(db, "SELECT 1 FROM (SELECT pg_advisory_lock(4242)) x", NULL, 0,
                              one_row, &got, &err), err);
    flush_job j1 = {.s = s1};
    pthread_t thr;
    REQUIRE(pthread_create(&thr, NULL, flush_thread, &j1) == 0);
    int64_t waiting = 0;
    for (int i = 0; i < 6000 && !waiting; i++) {
        REQUIRE_OK(floe_sql_query(db, "SELECT COUNT(*) FROM pg_locks WHERE locktype = "
                                  "'advisory' AND objid = 4242 AND NOT granted", NULL, 0,
                                  one_row, &waiting, &err), err);
        if (!waiting)
            usleep(10000);
    }
    REQUIRE(waiting == 1);
    /* its leases run out; worker 2 takes the partition over and commits */
    pg_exec(db, "UPDATE floe_leases SET expires_at = 0");
    pg_exec(db, "UPDATE landing_files SET lease_until_ms = 0 WHERE state = 'compacting'");
    CHECK_OK(floe_server_flush(s2, true, &err), err);
    /* worker 1 goes on: its swap conflicts, and on the fresh table its files are there */
    REQUIRE_OK(floe_sql_query(db, "SELECT 1 FROM (SELECT pg_advisory_unlock(4242)) x", NULL,
                              0, one_row, &got, &err), err);
    pthread_join(thr, NULL);
    CHECK_EQ_INT(j1.rc, FLOE_ECONFLICT);
    pg_exec(db, "DROP TRIGGER floe_test_stall ON iceberg_tables");
    hs_states st = hs_landing_states(db, a.table);
    CHECK_EQ_INT(st.committed, 1);
    CHECK_EQ_INT(st.pending + st.compacting + st.other, 0);

    /* the winner's snapshot is expired; nothing is left to compact */
    floe_catalog *cat = NULL;
    REQUIRE_OK(floe_catalog_open_postgres(NULL, uri, "default", a.wh, &cat, &err), err);
    hs_append_and_expire(cat, a.ns, "t");
    CHECK_OK(floe_server_flush(s1, true, &err), err);
    CHECK_OK(floe_server_flush(s2, true, &err), err);
    FLOE_IGNORE_RESULT(floe_server_close(s2, &err));
    FLOE_IGNORE_RESULT(floe_server_close(s1, &err));
    int counts[32];
    hs_check_once(counts, hs_count_ids(cat, a.ns, "t", counts, 32), 20);
    floe_catalog_close(cat);
    floe_sql_close(db);
    floe_server_config_reset(&a.cfg);
    floe_server_config_reset(&b.cfg);
}

TEST(test_keyed_request_fails_closed_without_claims) {
    const char *uri = getenv("FLOE_PG_URI");
    pg_env e;
    pg_env_init(&e, "", NULL);
    floe_error err;
    floe_server *s = NULL;
    REQUIRE_OK(floe_server_open(&e.cfg, NULL, &s, &err), err);
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    uint16_t port = floe_server_port(s);
    const char *names[1] = {"a"};
    char *body = hs_ids_body(1, 10, names, 1);
    long ra = 0;
    /* the look-up works, the claim cannot be made */
    pg_exec(db, "ALTER TABLE idempotency_claims RENAME TO idempotency_claims_away");
    CHECK_EQ_INT(hs_post(port, e.table, body, "key-1", NULL, &ra), 503);
    CHECK(ra >= 1);
    CHECK_EQ_INT(hs_post_ids(port, e.table, 11, 20, names, 1), 200);
    pg_exec(db, "ALTER TABLE idempotency_claims_away RENAME TO idempotency_claims");
    CHECK_EQ_INT(hs_post(port, e.table, body, "key-1", NULL, NULL), 200);
    CHECK_EQ_INT(hs_post(port, e.table, body, "key-1", NULL, NULL), 200);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    floe_catalog *cat = NULL;
    REQUIRE_OK(floe_catalog_open_postgres(NULL, uri, "default", e.wh, &cat, &err), err);
    int counts[32];
    hs_check_once(counts, hs_count_ids(cat, e.ns, "t", counts, 32), 20);
    floe_catalog_close(cat);
    floe_sql_close(db);
    floe_free(body);
    floe_server_config_reset(&e.cfg);
}

TEST(test_claim_age_by_database_clock) {
    const char *uri = getenv("FLOE_PG_URI");
    pg_env e;
    pg_env_init(&e, "", NULL);
    floe_error err;
    floe_server *s = NULL;
    REQUIRE_OK(floe_server_open(&e.cfg, NULL, &s, &err), err);
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    /* another node claimed key-1 a minute ago (by the database's clock) and died */
    char sql[1024];
    snprintf(sql, sizeof sql, "INSERT INTO idempotency_claims(tbl_key, node, created_ms) "
             "VALUES('%s' || chr(10) || 'key-1', 'crashed-node', %s - 60000)", e.table,
             floe_sql_clock_ms_expr(db));
    pg_exec(db, sql);
    const char *names[1] = {"a"};
    char *body = hs_ids_body(1, 10, names, 1);
    /* this node's clock runs 11 minutes fast: the claim is still live (10 minutes) */
    floe_wall_clock_skew(11LL * 60 * 1000);
    long code = hs_post(floe_server_port(s), e.table, body, "key-1", NULL, NULL);
    floe_wall_clock_skew(0);
    CHECK_EQ_INT(code, 409);
    /* the dead node's claim, 11 minutes old by the database: taken over */
    snprintf(sql, sizeof sql, "UPDATE idempotency_claims SET created_ms = %s - 660000 WHERE "
             "node = 'crashed-node'", floe_sql_clock_ms_expr(db));
    pg_exec(db, sql);
    CHECK_EQ_INT(hs_post(floe_server_port(s), e.table, body, "key-1", NULL, NULL), 200);
    /* nothing left pending for the other users of this database (serve_remote.sh) */
    CHECK_OK(floe_server_flush(s, true, &err), err);
    FLOE_IGNORE_RESULT(floe_server_close(s, &err));
    floe_sql_close(db);
    floe_free(body);
    floe_server_config_reset(&e.cfg);
}

int main(void) {
    if (!getenv("FLOE_PG_URI")) {
        printf("test_landing_pg: skipped (FLOE_PG_URI unset; serve_remote.sh runs it)\n");
        return 77;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_swap_marks_landing_files_committed);
    RUN(test_noop_after_stall_in_swap_keeps_files_committed);
    RUN(test_keyed_request_fails_closed_without_claims);
    RUN(test_claim_age_by_database_clock);
    curl_global_cleanup();
    return harness_finish();
}
