/*
 * test_fault_server.c - failure injection over a whole server round (issue 10, part 2):
 * floe_server_open (WAL replay, landing index, table creation checks), one POST of 40
 * events over two partitions with an Idempotency-Key, floe_server_flush with compaction
 * (landing files -> Parquet -> one commit per partition) and floe_server_close. For every
 * N (strided: FLOE_FAULT_MAX_RUNS, default 8 here; FLOE_FAULT_FULL=1 for every N) the Nth
 * allocation, open, read, write, fsync or rename fails, sticky from N on, in any of the
 * server's threads; and separately the catalog swap fails (EIO before it, unknown state
 * before and after it).
 *
 * After every run, faults cleared:
 *   - the table loads and reads; no event is in it twice; each partition's events are
 *     all there or none (a commit is one landing file: all or nothing);
 *   - a failed step has an error message; a POST that was not acknowledged is fine, one
 *     that was must survive;
 *   - recovery: the server opens again (WAL replay), the client retries the POST with the
 *     same key if it was not acknowledged (answered from the idempotency record or stored
 *     now), flush + compact + close succeed, and then every event is in the table exactly
 *     once - none lost, none twice;
 *   - no FileIO temporary file is left anywhere in the warehouse.
 * No leak: this program runs under ASan/LSan. A watchdog alarm turns a hang into a
 * failure.
 */
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/scan.h"
#include "floe/server.h"
#include "floe/table.h"
#include "harness.h"
#include "table/commit_testing.h"

#define NIDS 40

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
    "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"name\",\"required\":false,"
    "\"type\":\"string\"}]}";

typedef struct sctx {
    char dir[4096];
    char wh[4200];
    char tmpl[4200];
    floe_server_config cfg;
    bool acked;     /* the POST of the last run was answered 200 */
    char key[64];   /* its Idempotency-Key (new per run) */
    int seq;
    /* outcome counts */
    int64_t ok, failed, committed_before_recovery, not_acked, deferred;
} sctx;

static size_t discard(char *p, size_t sz, size_t n, void *ctx) {
    (void)p;
    (void)ctx;
    return sz * n;
}

/* POST ids 1..NIDS, name a (even) or b (odd). Returns the HTTP status (0: no answer). */
static long post_events(uint16_t port, const char *key) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 1; i <= NIDS; i++)
        floe_buf_printf(&b, "{\"id\":%d,\"name\":\"%s\"}\n", i, i % 2 ? "b" : "a");
    floe_buf_append_byte(&b, 0);
    CURL *c = curl_easy_init();
    REQUIRE(c);
    char url[128], kh[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/tables/shop.t/events", port);
    snprintf(kh, sizeof kh, "Idempotency-Key: %s", key);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    h = curl_slist_append(h, kh);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)b.data);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    floe_buf_free(&b);
    return code;
}

/* The whole round. */
static int run_round(void *vctx, floe_error *err) {
    sctx *c = vctx;
    c->acked = false;
    floe_server *s = NULL;
    alarm(120); /* watchdog: a hang is a failure (SIGALRM ends the program) */
    int rc = floe_server_open(&c->cfg, NULL, &s, err);
    if (rc == 0) {
        long code = post_events(floe_server_port(s), c->key);
        c->acked = code == 200;
        if (!c->acked)
            rc = floe_error_set(err, FLOE_EIO, "POST answered %ld", code);
        if (rc == 0)
            rc = floe_server_flush(s, true, err);
        floe_error e2;
        floe_error_clear(&e2);
        int crc = floe_server_close(s, &e2);
        if (rc == 0 && crc < 0) {
            rc = crc;
            *err = e2;
        }
    }
    alarm(0);
    return rc;
}

static void reset_round(void *vctx) {
    sctx *c = vctx;
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", c->wh, c->tmpl, c->wh);
    if (system(cmd) != 0)
        harness_fail(__FILE__, __LINE__, "command failed: %s", cmd);
    snprintf(c->key, sizeof c->key, "fault-%d", ++c->seq);
}

static int count_row(void *ctx, const void *p, size_t n) {
    int *cnt = ctx;
    const char *s = p, *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *k = s;
        while (k + 5 < (nl ? nl : end) && memcmp(k, "\"id\":", 5))
            k++;
        if (k + 5 < (nl ? nl : end)) {
            long id = strtol(k + 5, NULL, 10);
            cnt[id >= 1 && id <= NIDS ? id : 0]++;
        }
        s = nl ? nl + 1 : end;
    }
    return 0;
}

/* Rows of shop.t by id (cnt[0]: unknown ids). */
static void table_counts(const sctx *c, int cnt[NIDS + 1], const char *what) {
    memset(cnt, 0, (NIDS + 1) * sizeof *cnt);
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", c->wh);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_catalog_open_sqlite(NULL, db, "default", c->wh, &cat, &err) < 0 ||
        floe_table_load(cat, "shop", "t", &t, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s: table does not load: %s", what, err.msg);
    } else if (floe_table_metadata_get(t)->n_snapshots) {
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
        if (floe_scan_plan_files(t, NULL, &plan, &err) < 0 ||
            floe_scan_read(t, plan, &ro, count_row, cnt, NULL, &err) < 0)
            harness_fail(__FILE__, __LINE__, "%s: table does not read: %s", what, err.msg);
    }
    floe_scan_plan_free(plan);
    floe_table_close(t);
    floe_catalog_close(cat);
}

/* No id twice, no unknown id, each partition all or nothing. Returns the rows. */
static int check_consistent(const int cnt[NIDS + 1], const char *what) {
    int rows = 0, part[2] = {0, 0};
    CHECK_EQ_INT(cnt[0], 0);
    for (int i = 1; i <= NIDS; i++) {
        if (cnt[i] > 1)
            harness_fail(__FILE__, __LINE__, "%s: id %d is in the table %d times", what, i,
                         cnt[i]);
        rows += cnt[i];
        part[i % 2] += cnt[i] > 0;
    }
    for (int p = 0; p < 2; p++)
        if (part[p] != 0 && part[p] != NIDS / 2)
            harness_fail(__FILE__, __LINE__, "%s: partition %s half committed (%d of %d)",
                         what, p ? "b" : "a", part[p], NIDS / 2);
    return rows;
}

static void verify_round(void *vctx, int rc, const floe_error *err) {
    sctx *c = vctx;
    char what[FLOE_ERROR_MSG_MAX + 64];
    snprintf(what, sizeof what, "server round (rc %d: %s)", rc, rc < 0 ? err->msg : "");
    CHECK(fault_walk(c->wh, fault_no_temp, NULL) >= 0);
    int cnt[NIDS + 1];
    table_counts(c, cnt, what);
    int rows = check_consistent(cnt, what);
    if (rc == 0) {
        c->ok++;
        /* flush(compact) reports a failed compaction round: success means committed */
        if (rows != NIDS) {
            c->deferred++;
            harness_fail(__FILE__, __LINE__, "%s: flush succeeded with %d of %d events "
                         "committed", what, rows, NIDS);
        }
    } else {
        c->failed++;
        if (rows)
            c->committed_before_recovery++;
    }
    if (!c->acked)
        c->not_acked++;
    /* recovery: restart, the client retries until acknowledged, flush, stop */
    bool was_acked = c->acked;
    floe_server *s = NULL;
    floe_error e;
    floe_error_clear(&e);
    alarm(120);
    int orc = floe_server_open(&c->cfg, NULL, &s, &e);
    if (orc < 0) {
        harness_fail(__FILE__, __LINE__, "%s: recovery: open: %s", what, e.msg);
        alarm(0);
        return;
    }
    if (!was_acked)
        CHECK_EQ_INT(post_events(floe_server_port(s), c->key), 200);
    CHECK_OK(floe_server_flush(s, true, &e), e);
    CHECK_OK(floe_server_close(s, &e), e);
    alarm(0);
    table_counts(c, cnt, what);
    rows = check_consistent(cnt, what);
    if (rows != NIDS)
        harness_fail(__FILE__, __LINE__, "%s: after recovery %d of %d events in the table",
                     what, rows, NIDS);
    CHECK(fault_walk(c->wh, fault_no_temp, NULL) >= 0);
}

/* fault_loop's shape, but threads: a run may not reach operation N (the counts vary with
 * timing), and a fault in a background thread need not fail the round (see verify). */
static void server_loop(sctx *c, fault_kind k, int errnum) {
    floe_error err;
    floe_error_clear(&err);
    reset_round(c);
    fault_arm(k, 0, 0);
    int rc = run_round(c, &err);
    uint64_t ops = fault_seen(k);
    fault_clear_all();
    REQUIRE_OK(rc, err);
    verify_round(c, rc, &err);
    uint64_t stride = fault_stride(ops, fault_max_runs(8)), runs = 0;
    int64_t failed0 = c->failed;
    for (uint64_t n = 1; n <= ops; n = fault_next(n, ops, stride)) {
        floe_error_clear(&err);
        reset_round(c);
        fault_arm(k, n, errnum);
        rc = run_round(c, &err);
        fault_clear_all();
        runs++;
        if (rc < 0 && !err.msg[0])
            harness_fail(__FILE__, __LINE__, "%s fault at %llu: error %d without a message",
                         fault_kind_name(k), (unsigned long long)n, rc);
        verify_round(c, rc, &err);
    }
    fprintf(stderr, "  server: %s: %llu operations, %llu faulted runs, %lld failed\n",
            fault_kind_name(k), (unsigned long long)ops, (unsigned long long)runs,
            (long long)(c->failed - failed0));
}

static void swap_faults(sctx *c) {
    static const struct {
        const char *name;
        floe_commit_fault f;
    } v[] = {
        {"EIO before", {1, FLOE_EIO, false, false}},
        {"EIO on the second commit", {2, FLOE_EIO, false, false}},
        {"unknown before, unsettled", {1, FLOE_EUNKNOWN_STATE, false, true}},
        {"unknown after, unsettled", {1, FLOE_EUNKNOWN_STATE, true, true}},
        {"unknown after, settled", {1, FLOE_EUNKNOWN_STATE, true, false}},
        {"conflict", {1, FLOE_ECONFLICT, false, false}},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        floe_error err;
        floe_error_clear(&err);
        reset_round(c);
        floe_table_commit_inject(&v[i].f);
        int rc = run_round(c, &err);
        floe_table_commit_inject(NULL);
        CHECK(c->acked);
        verify_round(c, rc, &err);
    }
    fprintf(stderr, "  server: swap: %zu variants\n", sizeof v / sizeof v[0]);
}

TEST(server_round_survives_every_fault) {
    sctx *c = calloc(1, sizeof *c);
    REQUIRE(c);
    snprintf(c->dir, sizeof c->dir, "%s", harness_tmpdir());
    snprintf(c->wh, sizeof c->wh, "%s/wh", c->dir);
    snprintf(c->tmpl, sizeof c->tmpl, "%s/template", c->dir);
    char schema[4300], text[9000];
    snprintf(schema, sizeof schema, "%s/schema.json", c->dir);
    REQUIRE(harness_write_file(schema, schema_json, strlen(schema_json)) == 0);
    /* the background compactor off: compaction happens in the flush, deterministically */
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncompact = false\n"
             "[table shop.t]\nschema = %s\npartition = name\n", c->wh, schema);
    floe_server_config_init(&c->cfg);
    floe_error err;
    REQUIRE_OK(floe_server_config_parse(&c->cfg, text, strlen(text), "test", &err), err);
    /* the template: the table exists, nothing landed yet */
    floe_server *s = NULL;
    REQUIRE_OK(floe_server_open(&c->cfg, NULL, &s, &err), err);
    REQUIRE_OK(floe_server_close(s, &err), err);
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", c->wh, c->tmpl);
    REQUIRE(system(cmd) == 0);

    server_loop(c, FAULT_ALLOC, 0);
    server_loop(c, FAULT_OPEN, EMFILE);
    server_loop(c, FAULT_READ, EIO);
    server_loop(c, FAULT_WRITE, ENOSPC);
    server_loop(c, FAULT_FSYNC, EIO);
    server_loop(c, FAULT_RENAME, EIO);
    swap_faults(c);
    fprintf(stderr,
            "  server: outcomes: %lld ok (%lld with the commit deferred to the next round), "
            "%lld failed (%lld with some partition committed), %lld POSTs not acknowledged\n",
            (long long)c->ok, (long long)c->deferred, (long long)c->failed,
            (long long)c->committed_before_recovery, (long long)c->not_acked);
    CHECK(c->failed > 0);
    floe_server_config_reset(&c->cfg);
    free(c);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    RUN(server_round_survives_every_fault);
    curl_global_cleanup();
    return harness_finish();
}
