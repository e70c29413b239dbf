/* test_server_idem.c - Idempotency-Keys of `floe serve` on the embedded default (SQLite
 * catalog, local warehouse), where the answers live in the catalog database once stored:
 *
 *   - fail closed: when the stored answers cannot be looked up, a keyed request is
 *     refused with 503 + Retry-After (never taken as new: it may be a retry of one
 *     already taken), a keyless one is still taken; once the index is back, the retry
 *     gets the first answer, and every event is in the table once;
 *   - the idempotency window is judged by the database's clock: a node whose clock runs
 *     a day fast still finds an answer stored a moment ago.
 *
 * The index is made unreachable deterministically by renaming its idempotency table from
 * another connection (every statement is prepared afresh, so the next look-up fails). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/server.h"
#include "floe/sql.h"
#include "harness.h"
#include "harness_serve.h"
#include "common/testing.h"

static void server_config(floe_server_config *c, const char *dir) {
    char wh[4300];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    hs_server_config(c, dir, wh, "maintain = false\n", "");
}

static void catalog_exec(const char *dir, const char *sql) {
    char db[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    floe_sql *c = NULL;
    floe_error err;
    REQUIRE_OK(floe_sql_open(db, &c, &err), err);
    REQUIRE_OK(floe_sql_exec(c, sql, NULL, 0, NULL, &err), err);
    floe_sql_close(c);
}

/* The "batch_id" of an answer (empty when there is none). */
static void batch_id(const char *answer, char *out, size_t n);

/* POST with a key; the answer's batch id (128 bytes) into id. Returns the status. */
static long post_keyed(uint16_t port, const char *body, const char *key, char *id) {
    char *ans = NULL;
    long code = hs_post(port, "shop.t", body, key, &ans, NULL);
    batch_id(ans, id, 128);
    floe_free(ans);
    return code;
}

static void batch_id(const char *answer, char *out, size_t n) {
    const char *p = answer ? strstr(answer, "\"batch_id\":\"") : NULL;
    out[0] = 0;
    if (!p)
        return;
    p += 12;
    const char *e = strchr(p, '"');
    if (e && (size_t)(e - p) < n)
        snprintf(out, n, "%.*s", (int)(e - p), p);
}

static void check_rows(const char *dir, int nevents) {
    char db[4300], wh[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    int counts[64];
    hs_check_once(counts, hs_count_ids_sqlite(db, wh, "shop", "t", counts, 64), nevents);
}

TEST(test_keyed_request_fails_closed_without_the_index) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    const char *names[1] = {"a"};
    char *a_body = hs_ids_body(1, 10, names, 1), *b_body = hs_ids_body(11, 20, names, 1);
    char first[128], again[128];
    long ra = 0;

    CHECK_EQ_INT(post_keyed(port, a_body, "key-a", first), 200);
    REQUIRE(first[0]);
    /* the sealer stores the answer in the index and forgets it in memory */
    CHECK_OK(floe_server_flush(s, false, &err), err);

    catalog_exec(dir, "ALTER TABLE idempotency RENAME TO idempotency_away");
    /* the retry of A and a new key B: refused, to be retried */
    CHECK_EQ_INT(hs_post(port, "shop.t", a_body, "key-a", NULL, &ra), 503);
    CHECK(ra >= 1);
    CHECK_EQ_INT(hs_post(port, "shop.t", b_body, "key-b", NULL, &ra), 503);
    CHECK(ra >= 1);
    /* a request without a key needs no look-up */
    CHECK_EQ_INT(hs_post_ids(port, "shop.t", 21, 30, names, 1), 200);
    catalog_exec(dir, "ALTER TABLE idempotency_away RENAME TO idempotency");

    /* back: A's retry gets A's answer; B is taken now, once */
    CHECK_EQ_INT(post_keyed(port, a_body, "key-a", again), 200);
    CHECK_EQ_STR(again, first);
    CHECK_EQ_INT(post_keyed(port, b_body, "key-b", first), 200);
    CHECK_EQ_INT(post_keyed(port, b_body, "key-b", again), 200);
    CHECK_EQ_STR(again, first);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);
    check_rows(dir, 30);
    floe_free(a_body);
    floe_free(b_body);
    floe_server_config_reset(&cfg);
}

TEST(test_idempotency_window_by_database_clock) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    const char *names[1] = {"a"};
    char *body = hs_ids_body(1, 10, names, 1);
    char first[128], again[128];
    CHECK_EQ_INT(post_keyed(port, body, "key-a", first), 200);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    /* this node's clock jumps 25 hours ahead (the window is 24 h): the answer stored a
     * moment ago is still the one to give */
    floe_wall_clock_skew(25LL * 3600 * 1000);
    CHECK_EQ_INT(post_keyed(port, body, "key-a", again), 200);
    CHECK_EQ_STR(again, first);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    floe_wall_clock_skew(0);
    CHECK_OK(floe_server_close(s, &err), err);
    check_rows(dir, 10);
    floe_free(body);
    floe_server_config_reset(&cfg);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_keyed_request_fails_closed_without_the_index);
    RUN(test_idempotency_window_by_database_clock);
    curl_global_cleanup();
    return harness_finish();
}
