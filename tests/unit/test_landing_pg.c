/* test_landing_pg.c - with the catalog on PostgreSQL, the landing index is in the catalog
 * database and the commit's pointer swap marks the consumed landing files committed in
 * its own transaction (DESIGN.md I2; floe_catalog_set_swap_hook).
 *
 * The commit hook wraps the default one and, after it committed, reports a crash
 * (FLOE_EUNKNOWN_STATE): the compactor then leaves its own index update undone (the files
 * stay as the swap left them). With a separate index (SQLite, test_landing_commit) they
 * stay "compacting"; here they must already be "committed" - only the swap's transaction
 * can have done that - and a second compaction finds nothing to do: each event is in the
 * table once.
 *
 * Needs a PostgreSQL server: FLOE_PG_URI (tests/integration/serve_remote.sh runs this
 * program with its throwaway server). Without it the test passes as skipped. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/catalog.h"
#include "floe/scan.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"

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

typedef struct states {
    int committed, compacting, pending, other, with_snapshot;
} states;

static int count_state(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    states *st = ctx;
    if (n < 2 || !cols[0])
        return 0;
    if (!strcmp(cols[0], "committed"))
        st->committed++;
    else if (!strcmp(cols[0], "compacting"))
        st->compacting++;
    else if (!strcmp(cols[0], "pending"))
        st->pending++;
    else
        st->other++;
    st->with_snapshot += cols[1] != NULL;
    return 0;
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
    /* the round's outcome is reported: unknown (both partitions still tried) */
    CHECK_EQ_INT(floe_server_flush(s, true, &err), FLOE_EUNKNOWN_STATE);
    CHECK_EQ_INT(w.calls, 2);     /* partitions name=a and name=b */
    CHECK_EQ_INT(w.committed, 2);

    /* the compactor heard "unknown" and did not touch the index: what is there, the
     * swap's transaction wrote */
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    const char *params[] = {node};
    states st = {0};
    REQUIRE_OK(floe_sql_query(db, "SELECT state, snapshot_id FROM landing_files WHERE node=? "
                              "AND kind=1", params, 1, count_state, &st, &err), err);
    CHECK_EQ_INT(st.committed, 2);
    CHECK_EQ_INT(st.compacting + st.pending + st.other, 0);
    CHECK_EQ_INT(st.with_snapshot, 0); /* the compactor's own update never ran */

    /* nothing is left to compact: the hook is not called again */
    REQUIRE_OK(floe_server_flush(s, true, &err), err);
    CHECK_EQ_INT(w.calls, 2);
    floe_server_close(s, &err);

    /* every event once */
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    char wh[4300];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    REQUIRE_OK(floe_catalog_open_postgres(uri, "default", wh, &cat, &err), err);
    REQUIRE_OK(floe_table_load(cat, ns, "t", &t, &err), err);
    CHECK_EQ_INT((int)floe_table_metadata_get(t)->n_snapshots, 2);
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

int main(void) {
    if (!getenv("FLOE_PG_URI")) {
        printf("test_landing_pg: skipped (FLOE_PG_URI unset; serve_remote.sh runs it)\n");
        return 0;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_swap_marks_landing_files_committed);
    curl_global_cleanup();
    return harness_finish();
}
