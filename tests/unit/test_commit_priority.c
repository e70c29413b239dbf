/*
 * test_commit_priority.c - maintenance under steady commits from other writers finishes
 * in a bounded number of attempts (DESIGN.md "Commit", C5 in src/table/commit.c).
 *
 * Two handles on one SQLite catalog, as two processes would have: M runs maintenance (a
 * bin-pack rewrite, an expiry), W appends. A race hook (floe_table_commit_set_race) makes
 * W commit inside every one of M's attempts, after M's apply and before its swap: without
 * priority M loses every time and gives up after commit.retry.num-retries. W's appends add
 * new files and touch none of M's inputs, so M re-applies on the fresh base; after losing
 * twice M takes the table's commit lease, W's next commit waits for it (and gives up at
 * its commit.retry.total-timeout-ms), and M's third attempt wins. Deterministic: who wins
 * each swap is fixed by the hook, not by timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/lease.h"
#include "floe/maint.h"
#include "floe/rewrite.h"
#include "harness.h"
#include "harness_table.h"
#include "table/commit_testing.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";

/* The total timeout bounds M's first two attempts, W's appends inside them included (over
 * 1.5 s under the sanitizers on a loaded machine), and is how long W waits out M's priority
 * in the third: long enough for the first, short enough for the second. */
static const floe_kv PROPS[] = {
    {"commit.retry.num-retries", "4"},
    {"commit.retry.min-wait-ms", "1"},
    {"commit.retry.max-wait-ms", "5"},
    {"commit.retry.total-timeout-ms", "8000"},
};

typedef struct race {
    harness_table *e;
    floe_table *m;      /* the maintenance handle */
    floe_table *w;      /* the writer's handle */
    int m_attempts;     /* M's attempts that reached the swap */
    int w_ok, w_busy;   /* W's commits inside them: committed / waited out M's priority */
    int w_other;        /* W's commits that failed otherwise */
    int next_id;
} race;

static int append_rows(harness_table *e, floe_table *t, int tag, int from, int n,
                       floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = from; i < from + n; i++)
        floe_buf_printf(&b, "{\"id\":%d,\"s\":\"r%d\"}\n", i, i);
    char path[4300];
    snprintf(path, sizeof path, "%s/in-%d.ndjson", e->dir, tag);
    int rc = harness_write_file(path, b.data, b.len) == 0 ? 0 : FLOE_EIO;
    floe_buf_free(&b);
    if (rc < 0)
        return floe_error_set(err, rc, "cannot write %s", path);
    const char *in[1] = {path};
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    rc = floe_table_append_files(t, in, 1, &o, &r, err);
    floe_table_append_result_reset(&r);
    return rc;
}

/* M is between apply and swap: W commits (a compaction worker landing files). */
static void on_race(void *ctx, floe_table *t) {
    race *r = ctx;
    if (t != r->m)
        return;
    r->m_attempts++;
    floe_error err;
    floe_error_clear(&err);
    int rc = append_rows(r->e, r->w, 1000 + r->m_attempts, r->next_id, 5, &err);
    if (rc == 0) {
        r->w_ok++;
        r->next_id += 5;
    } else if (rc == FLOE_EBUSY && strstr(err.msg, "commit lease")) {
        r->w_busy++;
    } else {
        fprintf(stderr, "  writer: unexpected %d: %s\n", rc, err.msg);
        r->w_other++;
    }
}

/* ns.t with three small files (ids 0..29); W is a second catalog handle on it. */
static void setup(harness_table *e, race *r, floe_catalog **wcat) {
    harness_table_open(e, "t", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    floe_error err;
    for (int k = 0; k < 3; k++)
        REQUIRE_OK(append_rows(e, e->t, k, 10 * k, 10, &err), err);
    char db[4200];
    snprintf(db, sizeof db, "%s/catalog.db", e->dir);
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", e->dir);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, wcat, &err), err);
    memset(r, 0, sizeof *r);
    r->e = e;
    r->m = e->t;
    REQUIRE_OK(floe_table_load(*wcat, "ns", "t", &r->w, &err), err);
    r->next_id = 1000;
}

static void teardown(harness_table *e, race *r, floe_catalog *wcat) {
    floe_table_commit_set_race(NULL, NULL);
    floe_table_close(r->w);
    floe_catalog_close(wcat);
    harness_table_close(e);
}

/* Nobody holds the table's commit lease any more. */
static void check_lease_released(harness_table *e) {
    floe_lease_store *s = floe_catalog_commit_leases(e->cat);
    REQUIRE(s != NULL);
    floe_lease_key k = {"default", "ns", "t", "commit"};
    floe_lease_info li;
    floe_error err;
    CHECK_EQ_INT(floe_lease_get(s, &k, &li, &err), FLOE_ENOTFOUND);
}

TEST(rewrite_wins_within_three_attempts) {
    harness_table e;
    race r;
    floe_catalog *wcat = NULL;
    setup(&e, &r, &wcat);
    floe_table_commit_set_race(on_race, &r);
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_error err;
    REQUIRE_OK(floe_rewrite_option_set(&o, "min-input-files", "2", &err), err);
    floe_rewrite_result res;
    memset(&res, 0, sizeof res);
    int rc = floe_rewrite(e.t, &o, &res, &err);
    floe_table_commit_set_race(NULL, NULL);
    CHECK_OK(rc, err);
    printf("  rewrite: %d attempts; the writer committed %d times, waited out priority %d\n",
           r.m_attempts, r.w_ok, r.w_busy);
    CHECK_EQ_INT(res.rewritten_data_files_count, 3);
    CHECK_EQ_INT(res.failed_data_files_count, 0);
    CHECK_EQ_INT(r.m_attempts, 3); /* lost twice, then priority */
    CHECK_EQ_INT(r.w_ok, 2);
    CHECK_EQ_INT(r.w_busy, 1);
    CHECK_EQ_INT(r.w_other, 0);
    /* every row is there once: the rewritten ones and the writer's */
    int64_t n = -1;
    char *rows = harness_table_rows(e.t, &n);
    CHECK_EQ_INT(n, 30 + 5 * r.w_ok);
    floe_free(rows);
    check_lease_released(&e);
    /* with priority released, the writer commits at once */
    REQUIRE_OK(append_rows(&e, r.w, 99, 5000, 1, &err), err);
    teardown(&e, &r, wcat);
}

TEST(expire_wins_within_three_attempts) {
    harness_table e;
    race r;
    floe_catalog *wcat = NULL;
    setup(&e, &r, &wcat);
    floe_table_commit_set_race(on_race, &r);
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.retain_last = 1;
    o.older_than_ms = floe_wall_ms() + 60000;
    floe_expire_result res;
    floe_error err;
    int rc = floe_maint_expire(e.t, &o, &res, &err);
    floe_table_commit_set_race(NULL, NULL);
    CHECK_OK(rc, err);
    if (rc == 0) {
        CHECK_EQ_INT(res.attempts, 3);
        /* the snapshots before the winning base go: 3 appends + the writer's first */
        CHECK_EQ_INT(res.snapshots_expired, 4);
        floe_expire_result_reset(&res);
    }
    CHECK_EQ_INT(r.m_attempts, 3);
    CHECK_EQ_INT(r.w_ok, 2);
    CHECK_EQ_INT(r.w_busy, 1);
    int64_t n = -1;
    char *rows = harness_table_rows(e.t, &n);
    CHECK_EQ_INT(n, 30 + 5 * r.w_ok);
    floe_free(rows);
    check_lease_released(&e);
    teardown(&e, &r, wcat);
}

int main(void) {
    RUN(rewrite_wins_within_three_attempts);
    RUN(expire_wins_within_three_attempts);
    return harness_finish();
}
