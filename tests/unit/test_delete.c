/*
 * test_delete.c - floe_table_delete_rows against concurrent writers (floe/delete.h).
 *
 * Two handles on one SQLite catalog, as two processes would have: D runs the delete, W
 * commits inside D's first commit attempt (a race hook, floe_table_commit_set_race,
 * between D's apply and its swap), so D's swap loses and D's next attempt sees W's
 * commit. Each case checks the outcome the spec's rules demand:
 *   - W deletes other rows of the same data file: D plans again, and the file ends with
 *     one deletion vector holding both deletes (v3) / both position deletes apply (v2);
 *   - W appends rows the filter matches: D plans again and deletes them too;
 *   - W appends rows the filter cannot match (column bounds): D commits on the fresh base
 *     without planning again;
 *   - D deletes every row of a file: the file is removed with its vector.
 * floe_table_rewrite_deletes (equality deletes resolved into vectors) against the same
 * writer, W committing inside its first attempt:
 *   - W appends rows (higher sequence numbers): no new plan, the appended rows stay;
 *   - W deletes rows of the planned file (a vector): plan again, one vector with both;
 *   - W commits another equality delete: no new plan, that delete file stays and applies;
 *   - W compacts the files appended after the equality delete, not the planned one (floe
 *     rewrite keeps the starting sequence number: a data file added with a sequence
 *     number not above the planned head's, which a removed delete might apply to): plan
 *     again.
 * Every case ends with the table's rows against the expected ids and the summary totals
 * against the manifests.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/delete.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "eq_deletes.h"
#include "harness.h"
#include "harness_table.h"
#include "iceberg/puffin.h"
#include "table/commit_testing.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";

static const floe_kv PROPS_V3[] = {
    {"format-version", "3"},
    {"commit.retry.min-wait-ms", "1"},
    {"commit.retry.max-wait-ms", "5"},
};
static const floe_kv PROPS_V2[] = {
    {"commit.retry.min-wait-ms", "1"},
    {"commit.retry.max-wait-ms", "5"},
};

typedef enum { W_DELETE, W_APPEND_MATCHING, W_APPEND_OTHER, W_EQ_DELETE, W_COMPACT } w_action;

typedef struct race {
    harness_table *e;
    floe_table *d;  /* the deleting handle */
    floe_table *w;  /* the other writer's */
    w_action what;
    bool every;     /* W commits inside each of D's attempts, not the first only */
    int fired;
    int w_failed;
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

/* Commit an equality delete file on column id holding values ("3,4"), as an upsert
 * stream does (floe_append with a delete file). */
static int eq_commit(floe_table *t, const char *values, floe_error *err) {
    floe_schema *schema = NULL;
    floe_append *a = NULL;
    floe_arena arena;
    floe_arena_init(&arena, 4096);
    floe_data_file del;
    const floe_metadata_schema *ms =
        floe_table_metadata_current_schema(floe_table_metadata_get(t));
    int rc = floe_schema_parse(ms->json, strlen(ms->json), &schema, err);
    if (rc == 0)
        rc = eq_delete_file_write(t, floe_schema_find_path(schema, "id"), values, &arena, &del,
                                  err);
    if (rc == 0)
        rc = floe_append_new(t, &a, err);
    if (rc == 0)
        rc = floe_append_add_file(a, &del, err);
    if (rc == 0)
        rc = floe_append_commit(a, NULL, err);
    floe_append_free(a);
    floe_schema_free(schema);
    floe_arena_reset(&arena);
    return rc;
}

/* D is between apply and swap, the first time only: W commits. */
static void on_race(void *ctx, floe_table *t) {
    race *r = ctx;
    if (t != r->d || (r->fired++ && !r->every))
        return;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_table_refresh(r->w, &err);
    char one[32];
    snprintf(one, sizeof one, "id = %d", r->fired - 1);
    if (rc == 0 && r->what == W_DELETE) {
        floe_delete_options o = {.where = r->every ? one : "id < 5"};
        floe_delete_result res;
        rc = floe_table_delete_rows(r->w, &o, &res, &err);
    } else if (rc == 0 && r->what == W_EQ_DELETE) {
        rc = eq_commit(r->w, "7", &err);
    } else if (rc == 0 && r->what == W_COMPACT) {
        floe_rewrite_options o;
        floe_rewrite_options_init(&o);
        floe_rewrite_result res;
        o.where = "id >= 40"; /* the files appended after the equality delete only */
        rc = floe_rewrite_option_set(&o, "rewrite-all", "true", &err);
        if (rc == 0)
            rc = floe_rewrite_option_set(&o, "min-input-files", "1", &err);
        if (rc == 0)
            rc = floe_rewrite(r->w, &o, &res, &err);
    } else if (rc == 0) {
        rc = r->what == W_APPEND_MATCHING ? append_rows(r->e, r->w, 100, 100, 5, &err)
                                          : append_rows(r->e, r->w, 101, -10, 5, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "  writer: %d: %s\n", rc, err.msg);
        r->w_failed++;
    }
}

/* ns.t with one data file of ids 0..29; W is a second catalog handle on it. */
static void setup(harness_table *e, race *r, floe_catalog **wcat, bool v3) {
    harness_table_open(e, "t", SCHEMA, NULL, NULL, v3 ? PROPS_V3 : PROPS_V2,
                       v3 ? sizeof PROPS_V3 / sizeof PROPS_V3[0]
                          : sizeof PROPS_V2 / sizeof PROPS_V2[0]);
    floe_error err;
    REQUIRE_OK(append_rows(e, e->t, 0, 0, 30, &err), err);
    char db[4200], wh[4200];
    snprintf(db, sizeof db, "%s/catalog.db", e->dir);
    snprintf(wh, sizeof wh, "%s/wh", e->dir);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, wcat, &err), err);
    memset(r, 0, sizeof *r);
    r->e = e;
    r->d = e->t;
    REQUIRE_OK(floe_table_load(*wcat, "ns", "t", &r->w, &err), err);
}

static void teardown(harness_table *e, race *r, floe_catalog *wcat) {
    floe_table_commit_set_race(NULL, NULL);
    floe_table_close(r->w);
    floe_catalog_close(wcat);
    harness_table_close(e);
}

/* The ids of the table's rows, ascending, as "a b c". */
static int row_cb(void *ctx, size_t n, const char *const *labels, const floe_pq_text *v) {
    (void)labels;
    if (!v || n < 1)
        return 0;
    floe_buf *b = ctx;
    return floe_buf_printf(b, "%.*s\n", (int)v[0].n, v[0].p) < 0 ? FLOE_ENOMEM : 0;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static char *ids(floe_table *t) {
    floe_error err;
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    const char *cols[1] = {"id"};
    floe_scan_options so = {.columns = cols, .ncolumns = 1};
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_scan_plan_files(t, &so, &p, &err), err);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .row = row_cb, .row_ctx = &b,
                                 .limit = -1};
    REQUIRE_OK(floe_scan_read(t, p, &ro, NULL, NULL, NULL, &err), err);
    floe_scan_plan_free(p);
    long v[256];
    size_t n = 0;
    for (char *s = (char *)b.data; s && s < (char *)b.data + b.len && n < 256;) {
        v[n++] = strtol(s, &s, 10);
        while (*s == '\n')
            s++;
    }
    qsort(v, n, sizeof *v, cmp_long);
    floe_buf out;
    floe_buf_init(&out, 0);
    for (size_t i = 0; i < n; i++)
        floe_buf_printf(&out, "%s%ld", i ? " " : "", v[i]);
    floe_buf_append_byte(&out, 0);
    floe_buf_free(&b);
    return floe_buf_detach(&out, NULL);
}

static char *range_ids(long from, long to, const char *more) {
    floe_buf out;
    floe_buf_init(&out, 0);
    if (more)
        floe_buf_printf(&out, "%s", more);
    for (long i = from; i < to; i++)
        floe_buf_printf(&out, "%s%ld", out.len ? " " : "", i);
    floe_buf_append_byte(&out, 0);
    return floe_buf_detach(&out, NULL);
}

/* W deletes a row of the planned file inside each of D's commits: D plans 5 times (the
 * first plan and 4 re-plans, max_replans 0 = 4), then gives up saying so, with nothing
 * of its own committed. */
TEST(delete_gives_up_after_four_replans) {
    harness_table e;
    race r;
    floe_catalog *wcat = NULL;
    setup(&e, &r, &wcat, true);
    r.what = W_DELETE;
    r.every = true;
    floe_table_commit_set_race(on_race, &r);
    floe_delete_options o = {.where = "id >= 25"};
    floe_delete_result res;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_table_delete_rows(e.t, &o, &res, &err);
    floe_table_commit_set_race(NULL, NULL);
    CHECK_EQ_INT(rc, FLOE_ECONFLICT);
    CHECK_EQ_INT(r.fired, 5);
    CHECK_EQ_INT(r.w_failed, 0);
    CHECK(strstr(err.msg, "gave up after planning 5 times (the first plan and 4 re-plans)"));
    char *got = ids(e.t);
    char *want = range_ids(5, 30, NULL); /* W's 5 single-row deletes, none of D's */
    CHECK_EQ_STR(got, want);
    free(got);
    floe_free(want);
    teardown(&e, &r, wcat);
}

/* The live delete files of the current snapshot applying to the planned files: how many,
 * their records; each must be scoped to its one data file (referenced_data_file: a
 * vector, or a position delete file covering one data file). */
static void live_deletes(floe_table *t, size_t *ntasks, size_t *ndeletes, int64_t *records) {
    floe_error err;
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_scan_plan_files(t, NULL, &p, &err), err);
    *ntasks = p->ntasks;
    *ndeletes = 0;
    *records = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        *ndeletes += p->tasks[i].ndeletes;
        for (size_t d = 0; d < p->tasks[i].ndeletes; d++) {
            const floe_data_file *df = p->tasks[i].deletes[d];
            *records += df->record_count;
            CHECK(df->referenced_data_file &&
                  !strcmp(df->referenced_data_file, p->tasks[i].file->file_path));
        }
    }
    floe_scan_plan_free(p);
}

static void run_race(bool v3, w_action what, const char *where, floe_delete_result *res,
                     char **got) {
    harness_table e;
    race r;
    floe_catalog *wcat = NULL;
    setup(&e, &r, &wcat, v3);
    r.what = what;
    floe_table_commit_set_race(on_race, &r);
    floe_delete_options o = {.where = where};
    floe_error err;
    memset(res, 0, sizeof *res);
    int rc = floe_table_delete_rows(e.t, &o, res, &err);
    floe_table_commit_set_race(NULL, NULL);
    CHECK_OK(rc, err);
    CHECK_EQ_INT(r.w_failed, 0);
    *got = ids(e.t);
    harness_check_summary_totals(e.t);
    size_t ntasks, ndel;
    int64_t recs;
    live_deletes(e.t, &ntasks, &ndel, &recs);
    if (what == W_DELETE && v3) {
        /* one vector for the one file, holding W's 5 deletes and D's 5 */
        CHECK_EQ_INT(ntasks, 1);
        CHECK_EQ_INT(ndel, 1);
        CHECK_EQ_INT(recs, 10);
    } else if (what == W_DELETE) {
        /* W's position delete file and D's: 5 positions each */
        CHECK_EQ_INT(ntasks, 1);
        CHECK_EQ_INT(ndel, 2);
        CHECK_EQ_INT(recs, 10);
    }
    teardown(&e, &r, wcat);
}

TEST(concurrent_delete_same_file_v3) {
    floe_delete_result res;
    char *got = NULL;
    run_race(true, W_DELETE, "id >= 25", &res, &got);
    char *want = range_ids(5, 25, NULL);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 2);
    CHECK_EQ_INT(res.rows_deleted, 5);
    CHECK_EQ_INT(res.delete_files_removed, 1); /* W's vector, merged */
    free(got);
    floe_free(want);
}

TEST(concurrent_delete_same_file_v2) {
    floe_delete_result res;
    char *got = NULL;
    run_race(false, W_DELETE, "id >= 25", &res, &got);
    char *want = range_ids(5, 25, NULL);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 2);
    CHECK_EQ_INT(res.rows_deleted, 5);
    free(got);
    floe_free(want);
}

TEST(concurrent_matching_append_is_deleted_too) {
    floe_delete_result res;
    char *got = NULL;
    run_race(true, W_APPEND_MATCHING, "id >= 25", &res, &got);
    char *want = range_ids(0, 25, NULL);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 2);
    CHECK_EQ_INT(res.rows_deleted, 10); /* 25..29 and the appended 100..104 (file removed) */
    CHECK_EQ_INT(res.data_files_removed, 1);
    free(got);
    floe_free(want);
}

TEST(concurrent_unrelated_append_needs_no_new_plan) {
    floe_delete_result res;
    char *got = NULL;
    run_race(true, W_APPEND_OTHER, "id >= 25", &res, &got);
    char *want = range_ids(0, 25, "-10 -9 -8 -7 -6");
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 1);
    CHECK_EQ_INT(res.attempts, 2);
    CHECK_EQ_INT(res.rows_deleted, 5);
    free(got);
    floe_free(want);
}

/* A vector, then every remaining row of the file: the file goes with its vector. */
TEST(delete_whole_file_removes_it_and_its_vector) {
    harness_table e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, PROPS_V3,
                       sizeof PROPS_V3 / sizeof PROPS_V3[0]);
    floe_error err;
    REQUIRE_OK(append_rows(&e, e.t, 0, 0, 30, &err), err);
    REQUIRE_OK(append_rows(&e, e.t, 1, 30, 10, &err), err);
    floe_delete_options o = {.where = "id < 10"};
    floe_delete_result res;
    REQUIRE_OK(floe_table_delete_rows(e.t, &o, &res, &err), err);
    CHECK_EQ_INT(res.rows_deleted, 10);
    CHECK_EQ_INT(res.data_files_removed, 0);
    o.where = "id < 30 OR id = 35";
    REQUIRE_OK(floe_table_delete_rows(e.t, &o, &res, &err), err);
    CHECK_EQ_INT(res.rows_deleted, 21); /* 10..29 and 35: rows deleted before not again */
    CHECK_EQ_INT(res.data_files_removed, 1);
    CHECK_EQ_INT(res.delete_files_removed, 1);
    char *got = ids(e.t);
    CHECK_EQ_STR(got, "30 31 32 33 34 36 37 38 39");
    free(got);
    size_t ntasks, ndel;
    int64_t recs;
    live_deletes(e.t, &ntasks, &ndel, &recs);
    CHECK_EQ_INT(ntasks, 1);
    CHECK_EQ_INT(ndel, 1);
    CHECK_EQ_INT(recs, 1);
    harness_check_summary_totals(e.t);
    /* nothing matches any more: nothing committed */
    int64_t before = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t))->snapshot_id;
    REQUIRE_OK(floe_table_delete_rows(e.t, &o, &res, &err), err);
    CHECK(res.noop);
    CHECK_EQ_INT(floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t))->snapshot_id,
                 before);
    harness_table_close(&e);
}

/* ns.t (v3): ids 0..29, then an equality delete of 3 and 4; D resolves it while W
 * commits. */
static void run_resolve_race(w_action what, floe_rewrite_deletes_result *res, char **got,
                             size_t *ntasks, size_t *ndel) {
    harness_table e;
    race r;
    floe_catalog *wcat = NULL;
    setup(&e, &r, &wcat, true);
    floe_error err;
    REQUIRE_OK(eq_commit(e.t, "3,4", &err), err);
    if (what == W_COMPACT) { /* files after the equality delete, for W to compact */
        REQUIRE_OK(append_rows(&e, e.t, 1, 40, 2, &err), err);
        REQUIRE_OK(append_rows(&e, e.t, 2, 42, 2, &err), err);
    }
    r.what = what;
    floe_table_commit_set_race(on_race, &r);
    memset(res, 0, sizeof *res);
    int rc = floe_table_rewrite_deletes(e.t, NULL, res, &err);
    floe_table_commit_set_race(NULL, NULL);
    CHECK_OK(rc, err);
    CHECK_EQ_INT(r.w_failed, 0);
    *got = ids(e.t);
    harness_check_summary_totals(e.t);
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &p, &err), err);
    *ntasks = p->ntasks;
    *ndel = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        size_t dvs = 0;
        for (size_t d = 0; d < p->tasks[i].ndeletes; d++) {
            dvs += floe_data_file_is_dv(p->tasks[i].deletes[d]);
            /* only W's equality delete may be left */
            CHECK(floe_data_file_is_dv(p->tasks[i].deletes[d]) || what == W_EQ_DELETE);
        }
        CHECK(dvs <= 1);
        *ndel += p->tasks[i].ndeletes;
    }
    floe_scan_plan_free(p);
    teardown(&e, &r, wcat);
}

TEST(resolve_with_concurrent_append_needs_no_new_plan) {
    floe_rewrite_deletes_result res;
    char *got = NULL;
    size_t ntasks, ndel;
    run_resolve_race(W_APPEND_OTHER, &res, &got, &ntasks, &ndel);
    char *want = range_ids(5, 30, "-10 -9 -8 -7 -6 0 1 2");
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 1);
    CHECK_EQ_INT(res.attempts, 2);
    CHECK_EQ_INT(res.equality_delete_files_removed, 1);
    CHECK_EQ_INT(res.rows_resolved, 2);
    CHECK_EQ_INT(ntasks, 2);
    CHECK_EQ_INT(ndel, 1); /* the vector of the first file */
    free(got);
    floe_free(want);
}

TEST(resolve_with_concurrent_delete_plans_again) {
    floe_rewrite_deletes_result res;
    char *got = NULL;
    size_t ntasks, ndel;
    run_resolve_race(W_DELETE, &res, &got, &ntasks, &ndel);
    char *want = range_ids(5, 30, NULL);
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 2);
    CHECK_EQ_INT(res.dvs_removed, 1); /* W's vector (0 1 2), merged */
    CHECK_EQ_INT(res.equality_delete_files_removed, 1);
    CHECK_EQ_INT(ntasks, 1);
    CHECK_EQ_INT(ndel, 1);
    free(got);
    floe_free(want);
}

TEST(resolve_with_concurrent_equality_delete_keeps_it) {
    floe_rewrite_deletes_result res;
    char *got = NULL;
    size_t ntasks, ndel;
    run_resolve_race(W_EQ_DELETE, &res, &got, &ntasks, &ndel);
    char *want = range_ids(8, 30, "0 1 2 5 6");
    CHECK_EQ_STR(got, want);
    CHECK_EQ_INT(res.plans, 1);
    CHECK_EQ_INT(res.attempts, 2);
    CHECK_EQ_INT(res.equality_delete_files_removed, 1);
    CHECK_EQ_INT(ntasks, 1);
    CHECK_EQ_INT(ndel, 2); /* D's vector and W's equality delete */
    free(got);
    floe_free(want);
}

TEST(resolve_with_concurrent_compaction_plans_again) {
    floe_rewrite_deletes_result res;
    char *got = NULL;
    size_t ntasks, ndel;
    run_resolve_race(W_COMPACT, &res, &got, &ntasks, &ndel);
    char *want = range_ids(5, 30, "0 1 2");
    char *want2 = NULL;
    {
        floe_buf b;
        floe_buf_init(&b, 0);
        floe_buf_printf(&b, "%s 40 41 42 43", want);
        floe_buf_append_byte(&b, 0);
        want2 = floe_buf_detach(&b, NULL);
    }
    CHECK_EQ_STR(got, want2);
    CHECK_EQ_INT(res.plans, 2);
    CHECK_EQ_INT(res.equality_delete_files_removed, 1);
    CHECK_EQ_INT(ntasks, 2);
    CHECK_EQ_INT(ndel, 1);
    free(got);
    floe_free(want);
    floe_free(want2);
}

int main(void) {
    RUN(concurrent_delete_same_file_v3);
    RUN(concurrent_delete_same_file_v2);
    RUN(concurrent_matching_append_is_deleted_too);
    RUN(concurrent_unrelated_append_needs_no_new_plan);
    RUN(delete_whole_file_removes_it_and_its_vector);
    RUN(delete_gives_up_after_four_replans);
    RUN(resolve_with_concurrent_append_needs_no_new_plan);
    RUN(resolve_with_concurrent_delete_plans_again);
    RUN(resolve_with_concurrent_equality_delete_keeps_it);
    RUN(resolve_with_concurrent_compaction_plans_again);
    return harness_finish();
}
