/* test_server_flush.c - what POST /v1/admin/flush?compact=1 answers (issue 18 item 5):
 *
 *   - it says what it did (events and landing files committed) and what is still pending
 *     and why: a partition whose lease another worker holds is named with the holder and
 *     until when; wait=true rounds on until nothing is pending, answering 202 (still
 *     pending) when its timeout runs out first and 200 once everything is committed;
 *   - the partitions due at one moment are committed in one snapshot: 200 events over 16
 *     partitions, flushed with compaction, make one new snapshot holding every partition's
 *     file and every landing id, each event once (it took 15 snapshots before);
 *   - a restarted node takes over the leases of its own previous incarnation (same node
 *     id) at once: a flush right after the restart commits every landing file the dead
 *     process held, instead of waiting for their leases to run out.
 * On the embedded default (SQLite catalog, local warehouse); leases are taken from outside
 * through the lease API and the landing index rows, as a dead or stalled worker leaves
 * them. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/lease.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "floe/table_metadata.h"
#include "harness.h"
#include "harness_serve.h"

static void server_config(floe_server_config *c, const char *dir) {
    char wh[4300];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    hs_server_config(c, dir, wh, "maintain = false\n", "partition = name\n");
}

/* POST /v1/admin/flush?<query>: the status, the answer in *answer (floe_malloc'ed). */
static long flush_http(uint16_t port, const char *query, char **answer) {
    floe_buf out;
    floe_buf_init(&out, 0);
    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/admin/flush?%s", port, query);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, hs_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    floe_buf_append_byte(&out, 0);
    size_t len;
    *answer = floe_buf_detach(&out, &len);
    return code;
}

/* The integer after "key": in a JSON text (-1 when absent). */
static long long json_int(const char *text, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = text ? strstr(text, pat) : NULL;
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static void check_rows(const char *dir, int nevents) {
    char db[4300], wh[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    int counts[256];
    hs_check_once(counts, hs_count_ids_sqlite(db, wh, "shop", "t", counts, 256), nevents);
}

static floe_lease_key partition_key(const char *part, char *job, size_t n) {
    snprintf(job, n, "landing/%s", part);
    floe_lease_key k = {.catalog_name = "default", .table_namespace = "shop",
                        .table_name = "t", .job = job};
    return k;
}

TEST(test_flush_answer_names_what_is_pending) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    const char *names[2] = {"a", "b"};
    REQUIRE(hs_post_ids(port, "shop.t", 1, 20, names, 2) == 200); /* 10 in a, 10 in b */

    /* another worker holds partition a for 3 s */
    char db[4300], job[64];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    floe_lease_store *ls = NULL;
    REQUIRE_OK(floe_lease_store_open_sqlite(db, NULL, &ls, &err), err);
    floe_lease_key k = partition_key("name=b", job, sizeof job);
    bool got = false;
    REQUIRE_OK(floe_lease_acquire(ls, &k, "other-node/worker-7", 3000, &got, &err), err);
    REQUIRE(got);

    char *ans = NULL;
    CHECK_EQ_INT(flush_http(port, "compact=1", &ans), 200);
    CHECK(strstr(ans, "\"complete\":false") != NULL);
    CHECK_EQ_INT(json_int(ans, "events"), 10);        /* partition a */
    CHECK_EQ_INT(json_int(ans, "landing_files"), 1);  /* committed: a's file */
    const char *pend = ans ? strstr(ans, "\"pending\":") : NULL;
    REQUIRE(pend);
    CHECK_EQ_INT(json_int(pend, "landing_files"), 1);
    CHECK_EQ_INT(json_int(pend, "partitions"), 1);
    CHECK(strstr(pend, "\"partition\":\"name=b\"") != NULL);
    CHECK(strstr(pend, "held by other-node/worker-7 until 20") != NULL);
    floe_free(ans);

    /* waiting less than the lease has left: 202, still pending */
    CHECK_EQ_INT(flush_http(port, "wait=true&timeout=1", &ans), 202);
    CHECK(strstr(ans, "\"complete\":false") != NULL && strstr(ans, "other-node/worker-7"));
    floe_free(ans);
    /* waiting long enough: the lease runs out, the next round commits b */
    CHECK_EQ_INT(flush_http(port, "wait=true&timeout=30", &ans), 200);
    CHECK(strstr(ans, "\"complete\":true") != NULL);
    CHECK_EQ_INT(json_int(ans, "events"), 10);
    CHECK(strstr(ans, "\"by_partition\":[]") != NULL);
    floe_free(ans);
    CHECK_EQ_INT(flush_http(port, "timeout=x&wait=1", &ans), 400);
    floe_free(ans);

    floe_lease_store_close(ls);
    CHECK_OK(floe_server_close(s, &err), err);
    check_rows(dir, 20);
    floe_server_config_reset(&cfg);
}

TEST(test_restart_takes_over_its_own_leases) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    const char *names[1] = {"a"};
    REQUIRE(hs_post_ids(floe_server_port(s), "shop.t", 1, 12, names, 1) == 200);
    REQUIRE_OK(floe_server_close(s, &err), err); /* sealed: one pending landing file */

    /* as a previous incarnation of node1 that died mid-compaction leaves them: the
     * partition's lease and the file's lease held for 10 more minutes */
    char db[4300], job[64];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    floe_lease_store *ls = NULL;
    REQUIRE_OK(floe_lease_store_open_sqlite(db, NULL, &ls, &err), err);
    floe_lease_key k = partition_key("name=a", job, sizeof job);
    bool got = false;
    const char *dead = "node1/deadhost:4242:0badc0de";
    REQUIRE_OK(floe_lease_acquire(ls, &k, dead, 600000, &got, &err), err);
    REQUIRE(got);
    floe_lease_store_close(ls);
    floe_sql *sql = NULL;
    REQUIRE_OK(floe_sql_open(db, &sql, &err), err);
    const char *p[] = {dead};
    int64_t changed = 0;
    REQUIRE_OK(floe_sql_exec(sql, "UPDATE landing_files SET state='compacting', lease_owner=?, "
                             "lease_until_ms=CAST(strftime('%s','now') AS INTEGER)*1000+600000 "
                             "WHERE kind=1", p, 1, &changed, &err), err);
    CHECK_EQ_INT(changed, 1);
    floe_sql_close(sql);

    /* restarted (same node id): the flush commits at once */
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    char *ans = NULL;
    CHECK_EQ_INT(flush_http(floe_server_port(s), "compact=1", &ans), 200);
    CHECK(strstr(ans, "\"complete\":true") != NULL);
    CHECK_EQ_INT(json_int(ans, "events"), 12);
    floe_free(ans);
    CHECK_OK(floe_server_close(s, &err), err);
    check_rows(dir, 12);
    floe_server_config_reset(&cfg);
}

/* The value of a summary entry of snapshot sn (NULL when absent). */
static const char *summary_value(const floe_snapshot *sn, const char *key) {
    for (size_t i = 0; sn && i < sn->n_summary; i++)
        if (!strcmp(sn->summary[i].key, key))
            return sn->summary[i].value;
    return NULL;
}

TEST(test_flush_commits_due_partitions_in_one_snapshot) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    char names_buf[16][16];
    const char *names[16];
    for (int i = 0; i < 16; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "p%02d", i);
        names[i] = names_buf[i];
    }
    uint16_t port = floe_server_port(s);
    REQUIRE(hs_post_ids(port, "shop.t", 1, 100, names, 16) == 200);
    REQUIRE(hs_post_ids(port, "shop.t", 101, 200, names, 16) == 200);

    char db[4300], wh[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_catalog *cat = NULL;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err), err);
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_load(cat, "shop", "t", &t, &err), err);
    size_t before = floe_table_metadata_get(t)->n_snapshots;
    floe_table_close(t);

    char *ans = NULL;
    CHECK_EQ_INT(flush_http(port, "compact=1", &ans), 200);
    CHECK(ans && strstr(ans, "\"complete\":true") != NULL);
    CHECK_EQ_INT(json_int(ans, "events"), 200);
    long long landing = json_int(ans, "landing_files"); /* committed by the flush */
    CHECK(landing >= 16);
    floe_free(ans);

    REQUIRE_OK(floe_table_load(cat, "shop", "t", &t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    CHECK_EQ_INT(m->n_snapshots, before + 1);
    const floe_snapshot *sn = floe_table_metadata_current_snapshot(m);
    REQUIRE(sn);
    const char *files = summary_value(sn, "added-data-files");
    const char *records = summary_value(sn, "added-records");
    const char *ids = summary_value(sn, "floe.landing-ids");
    const char *parts = summary_value(sn, "floe.partition");
    CHECK(files && atoi(files) == 16); /* one per partition */
    CHECK(records && atoi(records) == 200);
    int nids = ids ? 1 : 0;
    for (const char *p = ids; p && *p; p++)
        nids += *p == ',';
    CHECK_EQ_INT(nids, landing); /* every landing file of every partition */
    CHECK(parts && strstr(parts, "name=p00") && strstr(parts, "name=p15"));
    floe_table_close(t);
    floe_catalog_close(cat);

    CHECK_OK(floe_server_close(s, &err), err);
    check_rows(dir, 200);
    floe_server_config_reset(&cfg);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_flush_answer_names_what_is_pending);
    RUN(test_flush_commits_due_partitions_in_one_snapshot);
    RUN(test_restart_takes_over_its_own_leases);
    curl_global_cleanup();
    return harness_finish();
}
