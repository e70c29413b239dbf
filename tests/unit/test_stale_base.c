/*
 * test_stale_base.c - committers whose base snapshot a concurrent expiry deleted.
 *
 * A writer loads the table (snapshot S), another process appends (S') and expires with
 * retain-last 1, which deletes S's manifest list. The writer, still on S, then appends,
 * rewrites or rewrites manifests: reading S's files fails with "No such file", and
 * because the table moved on that is a conflict: refresh and run again under
 * commit.retry.* (floe_table_base_gone). A file missing from the table's current state
 * stays an error, after one attempt.
 *
 * Deterministic: the stale handle is simply loaded before the other handle's commits.
 * Also: an append whose base gained a new default partition spec commits its files with
 * the spec they were written with.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";

static const floe_kv PROPS[] = {
    {"commit.retry.min-wait-ms", "1"},
    {"commit.retry.max-wait-ms", "5"},
};

static void append_rows(harness_table *e, floe_table *t, int64_t tag, int from, int n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = from; i < from + n; i++)
        floe_buf_printf(&b, "{\"id\":%d,\"s\":\"r%d\"}\n", i, i);
    harness_table w = *e;
    w.t = t;
    harness_table_append_ndjson(&w, tag, &b);
    floe_buf_free(&b);
}

/* A table of three appends (ids 0..29), a handle loaded now (stale from here on), then
 * one more append (30..39) and an expiry keeping only that last snapshot: the stale
 * handle's snapshot and its manifest list are gone. */
static floe_table *stale_setup(harness_table *e) {
    harness_table_open(e, "t", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    for (int k = 0; k < 3; k++)
        append_rows(e, e->t, k, 10 * k, 10);
    floe_table *stale = NULL;
    floe_error err;
    REQUIRE_OK(floe_table_load(e->cat, "ns", "t", &stale, &err), err);
    const char *old_list =
        floe_table_metadata_current_snapshot(floe_table_metadata_get(stale))->manifest_list;
    append_rows(e, e->t, 3, 30, 10);
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.retain_last = 1;
    o.older_than_ms = floe_wall_ms() + 1000;
    floe_expire_result r;
    REQUIRE_OK(floe_maint_expire(e->t, &o, &r, &err), err);
    CHECK_EQ_INT(r.snapshots_expired, 3);
    floe_expire_result_reset(&r);
    /* the stale handle's current snapshot is gone, files and all */
    char *phys = NULL;
    REQUIRE_OK(floe_table_resolve_path(stale, old_list, &phys, &err), err);
    bool exists = true;
    REQUIRE_OK(floe_io_exists(NULL, phys, &exists, &err), err);
    CHECK(!exists);
    floe_free(phys);
    return stale;
}

static void check_rows(floe_table *t, int64_t want) {
    int64_t n = -1;
    char *rows = harness_table_rows(t, &n);
    CHECK_EQ_INT(n, want);
    floe_free(rows);
}

TEST(append_on_an_expired_base_retries) {
    harness_table e;
    floe_table *stale = stale_setup(&e);
    append_rows(&e, stale, 4, 40, 10); /* REQUIRE_OK inside: fails on a missing file */
    check_rows(e.t, 50);
    floe_table_close(stale);
    harness_table_close(&e);
}

TEST(rewrite_on_an_expired_base_plans_again) {
    harness_table e;
    floe_table *stale = stale_setup(&e);
    /* a second small file, so there is something to rewrite */
    append_rows(&e, e.t, 5, 50, 10);
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_error err;
    REQUIRE_OK(floe_rewrite_option_set(&o, "min-input-files", "2", &err), err);
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_rewrite(stale, &o, &r, &err), err);
    CHECK_EQ_INT(r.rewritten_data_files_count, 5);
    CHECK_EQ_INT(r.added_data_files_count, 1);
    check_rows(e.t, 50);
    floe_table_close(stale);
    harness_table_close(&e);
}

TEST(rewrite_manifests_on_an_expired_base_plans_again) {
    harness_table e;
    floe_table *stale = stale_setup(&e);
    append_rows(&e, e.t, 5, 50, 10);
    floe_rewrite_manifests_options o;
    floe_rewrite_manifests_options_init(&o);
    floe_rewrite_manifests_result r;
    floe_error err;
    REQUIRE_OK(floe_maint_rewrite_manifests(stale, &o, &r, &err), err);
    CHECK(r.manifests_replaced >= 2);
    CHECK_EQ_INT(r.manifests_created, 1);
    check_rows(e.t, 50);
    floe_table_close(stale);
    harness_table_close(&e);
}

/* A file of the current snapshot that is missing is an error: no retry can help. */
TEST(missing_file_of_the_current_snapshot_is_an_error) {
    harness_table e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    append_rows(&e, e.t, 0, 0, 10);
    floe_error err;
    const char *list =
        floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t))->manifest_list;
    char *phys = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, list, &phys, &err), err);
    REQUIRE_OK(floe_io_delete(NULL, phys, &err), err);
    floe_free(phys);
    CHECK(!floe_table_base_gone(e.t, FLOE_ENOTFOUND)); /* the table did not move */

    floe_append *a = NULL;
    REQUIRE_OK(floe_append_new(e.t, &a, &err), err);
    floe_data_file f = {.content = FLOE_CONTENT_DATA, .file_path = "/nonexistent/x.parquet",
                        .file_format = "PARQUET", .record_count = 1,
                        .file_size_in_bytes = 100};
    REQUIRE_OK(floe_append_add_file(a, &f, &err), err);
    floe_append_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(floe_append_commit(a, &r, &err), FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "gave up") == NULL); /* no retries: an error at once */
    floe_append_free(a);

    floe_rewrite_manifests_options mo;
    floe_rewrite_manifests_options_init(&mo);
    floe_rewrite_manifests_result mr;
    memset(&mr, 0, sizeof mr);
    CHECK_EQ_INT(floe_maint_rewrite_manifests(e.t, &mo, &mr, &err), FLOE_ENOTFOUND);
    harness_table_close(&e);
}


/* A rewrite planned on a snapshot whose data files another rewrite then replaced and an
 * expiry deleted (between planning and reading: the window of every floe rewrite). Its
 * inputs are gone because the table moved on, not because it is broken, so this is a
 * conflict: nothing is committed by the stale plan, and the rewrite plans again on the
 * table as it is (or says why it could not). Before, the group failed with a bare
 * "open ...: No such file or directory" and the rewrite stopped. */
static floe_rewrite_plan *replaced_setup(harness_table *e, floe_table **stale,
                                         floe_rewrite_options *o) {
    harness_table_open(e, "t", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    for (int k = 0; k < 4; k++)
        append_rows(e, e->t, k, 10 * k, 10);
    floe_error err;
    REQUIRE_OK(floe_table_load(e->cat, "ns", "t", stale, &err), err);
    floe_rewrite_options_init(o);
    REQUIRE_OK(floe_rewrite_option_set(o, "min-input-files", "2", &err), err);
    floe_rewrite_plan *p = NULL;
    REQUIRE_OK(floe_rewrite_plan_new(*stale, o, &p, &err), err);
    REQUIRE(p->ngroups == 1);
    /* meanwhile: another rewrite replaces the four files, and an expiry deletes them */
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_rewrite(e->t, o, &r, &err), err);
    CHECK_EQ_INT(r.rewritten_data_files_count, 4);
    floe_expire_options eo;
    floe_expire_options_init(&eo);
    eo.retain_last = 1;
    eo.older_than_ms = floe_wall_ms() + 1000;
    floe_expire_result er;
    REQUIRE_OK(floe_maint_expire(e->t, &eo, &er, &err), err);
    CHECK(er.files[FLOE_MAINT_DATA] >= 4);
    floe_expire_result_reset(&er);
    return p;
}

TEST(rewrite_of_files_replaced_and_expired_meanwhile) {
    harness_table e;
    floe_table *stale = NULL;
    floe_rewrite_options o;
    floe_rewrite_plan *p = replaced_setup(&e, &stale, &o);
    int64_t planned = p->snapshot_id;
    size_t snaps = floe_table_metadata_get(e.t)->n_snapshots;
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_rewrite_execute(stale, p, &o, &r, &err);
    CHECK_EQ_INT(rc, FLOE_ENOTFOUND);
    char want[96];
    snprintf(want, sizeof want, "planned from snapshot %" PRId64 ", is no longer there", planned);
    CHECK(strstr(err.msg, want) != NULL);
    CHECK(strstr(err.msg, "concurrent commit replaced it") != NULL);
    CHECK(strstr(err.msg, "nothing committed") != NULL);
    CHECK(strstr(err.msg, ".parquet") != NULL);
    CHECK_EQ_INT(r.commits, 0);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    CHECK_EQ_INT(floe_table_metadata_get(e.t)->n_snapshots, snaps);
    /* the table moved on: plan again (the other rewrite left one file: nothing to do) */
    CHECK(floe_rewrite_again(stale, rc, 1, &err));
    floe_rewrite_plan_free(p);
    p = NULL;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_rewrite(stale, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_failed, 0);
    check_rows(e.t, 40);
    floe_table_close(stale);
    harness_table_close(&e);
}

/* The same with partial progress: the group is left out (replaced), not failed, and the
 * run succeeds committing nothing for it. */
TEST(partial_rewrite_leaves_out_groups_replaced_meanwhile) {
    harness_table e;
    floe_table *stale = NULL;
    floe_rewrite_options o;
    floe_error err;
    floe_rewrite_plan *p = replaced_setup(&e, &stale, &o);
    REQUIRE_OK(floe_rewrite_option_set(&o, "partial-progress.enabled", "true", &err), err);
    size_t snaps = floe_table_metadata_get(e.t)->n_snapshots;
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_rewrite_execute(stale, p, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_replaced, 1);
    CHECK_EQ_INT(r.groups_failed, 0);
    CHECK_EQ_INT(r.failed_data_files_count, 0);
    CHECK_EQ_INT(r.commits, 0);
    CHECK_EQ_INT(r.first_failure[0], 0);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    CHECK_EQ_INT(floe_table_metadata_get(e.t)->n_snapshots, snaps);
    check_rows(e.t, 40);
    floe_rewrite_plan_free(p);
    floe_table_close(stale);
    harness_table_close(&e);
}

static int add_spec_s(void *ctx, floe_metadata_builder *b, floe_error *err) {
    (void)ctx;
    int32_t id = -1;
    FLOE_FORWARD_IF_ERROR(floe_metadata_builder_add_spec(
        b, "{\"fields\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"s\"}]}", &id,
        err));
    return floe_metadata_builder_set_default_spec(b, id, err);
}

/* An append whose files were staged under spec 0 while another process made a new
 * default spec commits them as they are, with spec 0 (partition evolution leaves written
 * files valid); before, it failed ("stage the files again") and the work was lost. */
TEST(append_across_a_partition_spec_change) {
    harness_table e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    append_rows(&e, e.t, 0, 0, 10);
    floe_error err;
    /* the append's file: a copy of the first append's, staged under spec 0 */
    floe_scan_plan *plan = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &plan, &err), err);
    REQUIRE(plan->ntasks == 1);
    floe_data_file f = *plan->tasks[0].file;
    char *phys = NULL, copy[4200];
    REQUIRE_OK(floe_table_resolve_path(e.t, f.file_path, &phys, &err), err);
    size_t len = 0;
    char *bytes = harness_read_file(phys, &len);
    REQUIRE(bytes != NULL);
    snprintf(copy, sizeof copy, "%s/copy.parquet", e.dir);
    REQUIRE(harness_write_file(copy, bytes, len) == 0);
    free(bytes);
    floe_free(phys);
    f.file_path = copy;
    floe_append *a = NULL;
    REQUIRE_OK(floe_append_new(e.t, &a, &err), err);
    REQUIRE_OK(floe_append_add_file(a, &f, &err), err);

    floe_table *other = NULL;
    REQUIRE_OK(floe_table_load(e.cat, "ns", "t", &other, &err), err);
    REQUIRE_OK(floe_table_commit(other, add_spec_s, NULL, &err), err);
    CHECK_EQ_INT(floe_table_metadata_get(other)->default_spec_id, 1);

    floe_append_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_append_commit(a, &r, &err), err);
    floe_append_result_reset(&r);
    floe_append_free(a);
    floe_scan_plan_free(plan);
    check_rows(e.t, 20);
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &plan, &err), err);
    CHECK_EQ_INT(plan->ntasks, 2);
    for (size_t i = 0; i < plan->ntasks; i++)
        CHECK_EQ_INT(plan->tasks[i].spec_id, 0);
    floe_scan_plan_free(plan);
    CHECK_EQ_INT(floe_table_metadata_get(e.t)->default_spec_id, 1);
    floe_table_close(other);
    harness_table_close(&e);
}

int main(void) {
    RUN(append_on_an_expired_base_retries);
    RUN(rewrite_on_an_expired_base_plans_again);
    RUN(rewrite_manifests_on_an_expired_base_plans_again);
    RUN(missing_file_of_the_current_snapshot_is_an_error);
    RUN(append_across_a_partition_spec_change);
    RUN(rewrite_of_files_replaced_and_expired_meanwhile);
    RUN(partial_rewrite_leaves_out_groups_replaced_meanwhile);
    return harness_finish();
}
