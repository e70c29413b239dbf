/*
 * test_maint.c - table maintenance: expiry retention and reachability cleanup, orphan
 * removal, manifest rewrites, the landing lifecycle, the scheduler's configuration and
 * leases.
 *
 * Tables are built with the append producer over dummy data files (bytes that exist on
 * disk: maintenance only needs their paths); reachability is recomputed independently in
 * the test by reading every manifest list and manifest with the manifest reader.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "floe/append.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"
#include "table/commit_testing.h"

#define DAY FLOE_MAINT_DAY_MS

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"k\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":2,\"name\":\"v\",\"required\":false,\"type\":\"long\"}]}";
static const char *SPEC = "{\"fields\":[{\"source-id\":1,\"transform\":\"identity\",\"name\":\"k\"}]}";

typedef struct env {
    char dir[512];
    char wh[600];
    floe_catalog *cat;
    floe_table *t;
    int nfile;
} env;

static void env_open(env *e, const floe_kv *props, size_t nprops) {
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", harness_tmpdir());
    snprintf(e->wh, sizeof e->wh, "%s/wh", e->dir);
    char db[700];
    snprintf(db, sizeof db, "%s/catalog.db", e->dir);
    floe_error err;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", e->wh, &e->cat, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(e->cat, "ns", NULL, NULL, 0, &err), err);
    floe_table_create_options co = {.spec_json = SPEC, .props = props, .nprops = nprops};
    REQUIRE_OK(floe_table_create(e->cat, "ns", "t", SCHEMA, &co, &e->t, &err), err);
}

static void env_close(env *e) {
    floe_table_close(e->t);
    floe_catalog_close(e->cat);
}

/* One append of n dummy files in partition k (merge off unless merge). */
static int64_t append_files(floe_table *t, int *counter, int n, const char *k, bool merge) {
    floe_error err;
    floe_append *a = NULL;
    char *dir = NULL;
    REQUIRE_OK(floe_table_data_dir(t, &dir, &err), err);
    REQUIRE_OK(floe_append_new(t, &a, &err), err);
    floe_append_set_merge(a, merge ? 1 : 0, 0, 0);
    for (int i = 0; i < n; i++) {
        char path[900];
        snprintf(path, sizeof path, "%s/k=%s/f%06d-%d.parquet", dir, k, (*counter)++, getpid());
        REQUIRE_OK(floe_io_write_all(NULL, path, "PAR1dummyPAR1", 13, NULL, &err), err);
        floe_value pv = floe_value_string(k, strlen(k));
        floe_data_file f;
        memset(&f, 0, sizeof f);
        f.content = FLOE_CONTENT_DATA;
        f.file_path = path;
        f.file_format = "parquet";
        f.partition = &pv;
        f.npartition = 1;
        f.record_count = 10 + i;
        f.file_size_in_bytes = 13;
        REQUIRE_OK(floe_append_add_file(a, &f, &err), err);
    }
    floe_append_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_append_commit(a, &r, &err), err);
    harness_check_summary_totals(t);
    int64_t id = r.snapshot_id;
    floe_append_result_reset(&r);
    floe_append_free(a);
    floe_free(dir);
    return id;
}

/* ---- an independent reachability walk --------------------------------------------- */

typedef struct strset {
    char **s;
    size_t n, cap;
} strset;

static bool ss_has(const strset *ss, const char *s) {
    for (size_t i = 0; i < ss->n; i++)
        if (!strcmp(ss->s[i], s))
            return true;
    return false;
}

static void ss_add(strset *ss, const char *s) {
    if (ss_has(ss, s))
        return;
    if (ss->n == ss->cap) {
        ss->cap = ss->cap ? ss->cap * 2 : 64;
        ss->s = realloc(ss->s, ss->cap * sizeof *ss->s);
    }
    ss->s[ss->n++] = strdup(s);
}

static void ss_free(strset *ss) {
    for (size_t i = 0; i < ss->n; i++)
        free(ss->s[i]);
    free(ss->s);
    memset(ss, 0, sizeof *ss);
}

/* Lists, manifests and files (live only when live_only) a snapshot reaches. */
static void reach(const floe_snapshot *s, bool live_only, strset *out) {
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    ss_add(out, s->manifest_list);
    REQUIRE_OK(floe_manifest_list_read(NULL, s->manifest_list, NULL, &a, &ml, &err), err);
    for (size_t i = 0; i < ml.nfiles; i++) {
        ss_add(out, ml.files[i].manifest_path);
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options o = {.manifest = &ml.files[i]};
        REQUIRE_OK(floe_manifest_reader_open(NULL, ml.files[i].manifest_path, &o, &r, &err), err);
        const floe_manifest_entry *e;
        while (floe_manifest_reader_next(r, &e, &err) == 1)
            if (!live_only || e->status != FLOE_ENTRY_DELETED)
                ss_add(out, e->file.file_path);
        floe_manifest_reader_close(r);
    }
    floe_arena_reset(&a);
}

static int64_t live_records(const floe_snapshot *s) {
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    int64_t n = 0;
    if (floe_manifest_list_read(NULL, s->manifest_list, NULL, &a, &ml, &err) < 0)
        return -1;
    for (size_t i = 0; i < ml.nfiles; i++) {
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options o = {.manifest = &ml.files[i]};
        if (floe_manifest_reader_open(NULL, ml.files[i].manifest_path, &o, &r, &err) < 0)
            return -1;
        const floe_manifest_entry *e;
        while (floe_manifest_reader_next(r, &e, &err) == 1)
            if (e->status != FLOE_ENTRY_DELETED)
                n += e->file.record_count;
        floe_manifest_reader_close(r);
    }
    floe_arena_reset(&a);
    return n;
}

/* A "delete" snapshot: every entry of the head whose path contains `needle` is marked
 * DELETED in a rewritten manifest (the other entries become EXISTING). */
typedef struct del_ctx {
    floe_table *t;
    const char *needle;
    int n;
} del_ctx;

static int delete_apply(void *vctx, floe_metadata_builder *b, floe_error *err) {
    del_ctx *c = vctx;
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    const floe_snapshot *head = floe_table_metadata_current_snapshot(m);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    int rc = floe_manifest_list_read(NULL, head->manifest_list, NULL, &a, &ml, err);
    if (rc < 0)
        return rc;
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *mp = floe_table_metadata_default_spec(m);
    if (floe_schema_parse(ms->json, strlen(ms->json), &schema, err) < 0 ||
        floe_partition_spec_parse_json(mp->json, strlen(mp->json), schema, &spec, err) < 0) {
        floe_schema_free(schema);
        floe_arena_reset(&a);
        return err->code;
    }
    floe_manifest_file *out = floe_arena_alloc(&a, ml.nfiles * sizeof *out);
    int64_t id = floe_metadata_new_snapshot_id();
    char md[900];
    snprintf(md, sizeof md, "%s/metadata", m->location);
    for (size_t i = 0; i < ml.nfiles; i++) {
        char *path = floe_manifest_path_new(md, NULL, (int)i);
        floe_manifest_write_options wo;
        floe_manifest_write_options_init(&wo);
        wo.schema = schema;
        wo.spec = spec;
        wo.has_snapshot_id = true;
        wo.snapshot_id = id;
        floe_manifest_writer *w = NULL;
        rc = floe_manifest_writer_open(NULL, path, &wo, &w, err);
        if (rc < 0) {
            floe_free(path);
            break;
        }
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options ro = {.manifest = &ml.files[i]};
        if (floe_manifest_reader_open(NULL, ml.files[i].manifest_path, &ro, &r, err) < 0)
            harness_fail(__FILE__, __LINE__, "%s", err->msg);
        const floe_manifest_entry *e;
        while (floe_manifest_reader_next(r, &e, err) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            if (strstr(e->file.file_path, c->needle)) {
                if (floe_manifest_writer_delete(w, e, err) < 0)
                    harness_fail(__FILE__, __LINE__, "%s", err->msg);
                c->n++;
            } else {
                if (floe_manifest_writer_existing(w, e, err) < 0)
                    harness_fail(__FILE__, __LINE__, "%s", err->msg);
            }
        }
        floe_manifest_reader_close(r);
        rc = floe_manifest_writer_close(w, NULL, &a, &out[i], err);
        floe_free(path);
        if (rc < 0)
            break;
    }
    char list[1000];
    snprintf(list, sizeof list, "%s/snap-%lld-del.avro", md, (long long)id);
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = id;
    lo.has_parent = true;
    lo.parent_snapshot_id = head->snapshot_id;
    lo.sequence_number = floe_metadata_builder_next_sequence_number(b);
    if (rc == 0)
        rc = floe_manifest_list_write(NULL, list, &lo, out, ml.nfiles, NULL, NULL, err);
    floe_snapshot_new sn = {.snapshot_id = id, .operation = "delete", .manifest_list = list,
                            .schema_id = -1};
    if (rc == 0)
        rc = floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    floe_arena_reset(&a);
    return rc;
}

/* ---- expiry: retention rules ------------------------------------------------------- */

static void write_retention_table(const char *dir, const char *extra_props) {
    char md[700], path[800];
    snprintf(md, sizeof md, "%s/metadata", dir);
    mkdir(dir, 0755);
    mkdir(md, 0755);
    snprintf(path, sizeof path, "%s/v1.metadata.json", md);
    /* main: s1 <- s2 <- s3 <- s4 <- s5; dev: s3 <- s6; s7, s8 children of s2 without refs */
    static const struct { int id, parent; int day; } snaps[] = {
        {1, 0, 10}, {2, 1, 20}, {3, 2, 30}, {4, 3, 90}, {5, 4, 99},
        {6, 3, 50}, {7, 2, 98}, {8, 2, 60}};
    char buf[8192];
    int n = snprintf(buf, sizeof buf,
        "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
        "\"location\":\"%s\",\"last-sequence-number\":8,\"last-updated-ms\":%lld,"
        "\"last-column-id\":2,\"current-schema-id\":0,\"schemas\":[%s],"
        "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"last-partition-id\":999,\"default-sort-order-id\":0,"
        "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{%s},"
        "\"current-snapshot-id\":5,\"refs\":{"
        "\"main\":{\"snapshot-id\":5,\"type\":\"branch\"},"
        "\"dev\":{\"snapshot-id\":6,\"type\":\"branch\",\"min-snapshots-to-keep\":2,"
        "\"max-snapshot-age-ms\":%lld},"
        "\"old\":{\"snapshot-id\":1,\"type\":\"tag\",\"max-ref-age-ms\":%lld},"
        "\"keep\":{\"snapshot-id\":2,\"type\":\"tag\"}},\"snapshots\":[",
        dir, 100 * DAY, SCHEMA, extra_props, (long long)DAY, (long long)DAY);
    for (size_t i = 0; i < sizeof snaps / sizeof snaps[0]; i++) {
        char parent[48] = "";
        if (snaps[i].parent)
            snprintf(parent, sizeof parent, "\"parent-snapshot-id\":%d,", snaps[i].parent);
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s{\"snapshot-id\":%d,%s"
                      "\"sequence-number\":%d,\"timestamp-ms\":%lld,"
                      "\"manifest-list\":\"%s/metadata/snap-%d.avro\","
                      "\"summary\":{\"operation\":\"append\"},\"schema-id\":0}",
                      i ? "," : "", snaps[i].id, parent, snaps[i].id,
                      (long long)snaps[i].day * DAY, dir, snaps[i].id);
    }
    n += snprintf(buf + n, sizeof buf - (size_t)n, "]}");
    REQUIRE(harness_write_file(path, buf, strlen(buf)) == 0);
}

static void expired_ids(const char *dir, const floe_expire_options *o, int *out, size_t *n,
                        int *rc_out, int64_t *refs_removed) {
    floe_error err;
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_open_path(dir, NULL, &t, &err), err);
    floe_expire_result r;
    int rc = floe_maint_expire(t, o, &r, &err);
    *rc_out = rc;
    *n = 0;
    if (rc == 0) {
        for (size_t i = 0; i < r.n_expired_ids; i++)
            out[(*n)++] = (int)r.expired_ids[i];
        *refs_removed = r.refs_removed;
        floe_expire_result_reset(&r);
    }
    floe_table_close(t);
}

static bool same_ids(const int *got, size_t n, const int *want, size_t m) {
    if (n != m)
        return false;
    for (size_t i = 0; i < m; i++) {
        bool f = false;
        for (size_t k = 0; k < n; k++)
            f |= got[k] == want[i];
        if (!f)
            return false;
    }
    return true;
}

TEST(expire_retention_rules) {
    char dir[700];
    snprintf(dir, sizeof dir, "%s/ret", harness_tmpdir());
    write_retention_table(dir, "");
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.dry_run = true;
    o.keep_files = true;
    o.now_ms = 100 * DAY;
    int got[16], rc;
    size_t n;
    int64_t refs = 0;
    /* defaults: cutoff now-5d; main keeps s5; dev keeps s6 and s3 (min 2); tag keep: s2;
     * s7 young and unreferenced; tag old is past its max-ref-age */
    expired_ids(dir, &o, got, &n, &rc, &refs);
    CHECK_EQ_INT(rc, 0);
    int want1[] = {1, 4, 8};
    CHECK(same_ids(got, n, want1, 3));
    CHECK_EQ_INT(refs, 1);
    /* retain-last 3 keeps s5, s4, s3 of main */
    o.retain_last = 3;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    int want2[] = {1, 8};
    CHECK(same_ids(got, n, want2, 2));
    /* older-than a time before everything: only the expired tag's snapshot... none go,
     * since every snapshot is younger than the cutoff */
    o.retain_last = 0;
    o.older_than_ms = 5 * DAY;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    CHECK_EQ_INT(n, 0);
    /* explicit ids: s7 (kept only for being young) goes; s3 (dev keeps it) is refused,
     * and so is s5 (main points at it) */
    o.older_than_ms = -1;
    int64_t ids[1] = {7};
    o.snapshot_ids = ids;
    o.n_snapshot_ids = 1;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    int want3[] = {1, 4, 7, 8};
    CHECK(same_ids(got, n, want3, 4));
    ids[0] = 3;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    ids[0] = 5;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
}

TEST(expire_retention_properties) {
    char dir[700];
    snprintf(dir, sizeof dir, "%s/retp", harness_tmpdir());
    /* max age 1 day: s7 (2 days old) goes too; min 2 keeps s4 on main; max-ref-age 1 day
     * removes the tags (the keep tag too) */
    write_retention_table(dir, "\"history.expire.max-snapshot-age-ms\":\"86400000\","
                               "\"history.expire.min-snapshots-to-keep\":\"2\","
                               "\"history.expire.max-ref-age-ms\":\"86400000\"");
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.dry_run = true;
    o.keep_files = true;
    o.now_ms = 100 * DAY;
    int got[16], rc;
    size_t n;
    int64_t refs = 0;
    expired_ids(dir, &o, got, &n, &rc, &refs);
    CHECK_EQ_INT(rc, 0);
    /* kept: s5, s4 (main, min 2); s6, s3 (dev, its own min 2); dev itself is younger
     * than the 1-day max-ref-age? s6 is 50 days old: dev goes too -> s6, s3 go */
    int want[] = {1, 2, 3, 6, 7, 8};
    CHECK(same_ids(got, n, want, 6));
    CHECK_EQ_INT(refs, 3);
}

/* ---- expiry: files --------------------------------------------------------------- */

/* A manifest list that is already gone is neither deleted nor counted as deleted. */
TEST(expire_counts_only_files_that_were_there) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    floe_error_clear(&err);
    for (int i = 0; i < 3; i++)
        append_files(e.t, &e.nfile, 1, "a", false);
    const floe_table_metadata *m = floe_table_metadata_get(e.t);
    REQUIRE(m->n_snapshots == 3);
    /* the oldest snapshot's manifest list disappears */
    char *gone = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, m->snapshots[0].manifest_list, &gone, &err), err);
    REQUIRE_OK(floe_io_delete(NULL, gone, &err), err);
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.older_than_ms = floe_wall_ms() + 1;
    o.retain_last = 1;
    floe_expire_result r;
    REQUIRE_OK(floe_maint_expire(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.snapshots_expired, 2);
    /* two lists expired, one of them was not there */
    CHECK_EQ_INT(r.files[FLOE_MAINT_MANIFEST_LIST], 1);
    CHECK_EQ_INT(r.unreadable, 1);
    floe_expire_result_reset(&r);
    floe_free(gone);
    env_close(&e);
}

TEST(expire_deletes_exactly_the_difference) {
    env e;
    floe_kv props[] = {{"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "3"}};
    env_open(&e, props, 2);
    floe_error err;
    for (int i = 0; i < 6; i++)
        append_files(e.t, &e.nfile, 2, i % 2 ? "a" : "b", i == 3);
    /* delete some files, then append more */
    del_ctx dc = {e.t, "f000001", 0};
    REQUIRE_OK(floe_table_commit(e.t, delete_apply, &dc, &err), err);
    CHECK_EQ_INT(dc.n, 1);
    append_files(e.t, &e.nfile, 2, "c", false);
    const floe_table_metadata *m = floe_table_metadata_get(e.t);
    REQUIRE(m->n_snapshots == 8);

    /* the truth before: what each snapshot reaches */
    strset all = {0}, keep = {0};
    const floe_snapshot *head = floe_table_metadata_current_snapshot(m);
    int64_t head_id = head->snapshot_id;
    for (size_t i = 0; i < m->n_snapshots; i++)
        reach(&m->snapshots[i], false, &all);
    reach(head, true, &keep);
    for (size_t i = 0; i < all.n; i++)
        CHECK(harness_file_exists(all.s[i]));

    /* dry run: nothing changes */
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.older_than_ms = floe_wall_ms() + 1;
    o.dry_run = true;
    floe_expire_result dry;
    REQUIRE_OK(floe_maint_expire(e.t, &o, &dry, &err), err);
    CHECK_EQ_INT(dry.snapshots_expired, 7);
    CHECK_EQ_INT(floe_table_metadata_get(e.t)->n_snapshots, 8);
    for (size_t i = 0; i < all.n; i++)
        CHECK(harness_file_exists(all.s[i]));

    o.dry_run = false;
    floe_expire_result r;
    REQUIRE_OK(floe_maint_expire(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.snapshots_expired, 7);
    harness_check_summary_totals(e.t);
    m = floe_table_metadata_get(e.t);
    REQUIRE(m->n_snapshots == 1);
    CHECK(m->snapshots[0].snapshot_id == head_id);
    /* every retained file exists, everything else reachable before is gone */
    size_t gone = 0;
    for (size_t i = 0; i < all.n; i++) {
        bool kept = ss_has(&keep, all.s[i]);
        if (kept && !harness_file_exists(all.s[i]))
            harness_fail(__FILE__, __LINE__, "retained %s was deleted", all.s[i]);
        if (!kept && harness_file_exists(all.s[i]))
            harness_fail(__FILE__, __LINE__, "expired-only %s still exists", all.s[i]);
        gone += !kept;
    }
    /* the deleted data file (added by an expired snapshot) is among what went */
    int64_t total = 0;
    for (int k = 0; k < FLOE_MAINT_NKINDS; k++)
        total += r.files[k];
    CHECK_EQ_INT(total - r.files[FLOE_MAINT_METADATA], (int64_t)gone);
    CHECK_EQ_INT(r.files[FLOE_MAINT_DATA], 1);
    CHECK_EQ_INT(r.files[FLOE_MAINT_MANIFEST_LIST], 7);
    /* the dry run predicted the same */
    CHECK_EQ_INT(dry.files[FLOE_MAINT_DATA], r.files[FLOE_MAINT_DATA]);
    CHECK_EQ_INT(dry.files[FLOE_MAINT_MANIFEST], r.files[FLOE_MAINT_MANIFEST]);
    CHECK_EQ_INT(dry.files[FLOE_MAINT_MANIFEST_LIST], r.files[FLOE_MAINT_MANIFEST_LIST]);
    /* the remaining snapshot plans in full: its live files, as the manifests hold them */
    floe_scan_plan *plan = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &plan, &err), err);
    CHECK_EQ_INT(plan->records, live_records(&m->snapshots[0]));
    CHECK_EQ_INT(plan->ntasks, 13); /* 6x2 + 2 appended - 1 deleted */
    floe_scan_plan_free(plan);
    /* metadata files: only those the log keeps (3) and the current one remain */
    CHECK(m->n_metadata_log <= 3);
    char mdir[800];
    snprintf(mdir, sizeof mdir, "%s/ns/t/metadata", e.wh);
    char cmd[900];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c 'metadata.json$'", mdir);
    char *outp = NULL;
    harness_run_cmd(cmd, &outp);
    CHECK(outp && atoi(outp) == (int)m->n_metadata_log + 1);
    free(outp);
    floe_expire_result_reset(&dry);
    floe_expire_result_reset(&r);
    /* nothing left to expire: a no-op */
    REQUIRE_OK(floe_maint_expire(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.snapshots_expired, 0);
    floe_expire_result_reset(&r);
    ss_free(&all);
    ss_free(&keep);
    env_close(&e);
}

/* Appends from another process while expiry runs: every file a snapshot of the final
 * metadata reaches must exist. */
TEST(expire_and_orphans_with_concurrent_writer) {
    env e;
    floe_kv props[] = {{"commit.retry.num-retries", "50"}, {"commit.retry.min-wait-ms", "5"},
                       {"commit.retry.max-wait-ms", "50"}};
    env_open(&e, props, 3);
    floe_error err;
    for (int i = 0; i < 3; i++)
        append_files(e.t, &e.nfile, 1, "a", false);
    char db[700];
    snprintf(db, sizeof db, "%s/catalog.db", e.dir);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        floe_catalog *c = NULL;
        floe_table *t = NULL;
        int counter = 100000;
        if (floe_catalog_open_sqlite(NULL, db, "default", e.wh, &c, &err) < 0 ||
            floe_table_load(c, "ns", "t", &t, &err) < 0)
            _exit(2);
        for (int i = 0; i < 25; i++)
            append_files(t, &counter, 2, i % 3 ? "a" : "b", i % 4 == 0);
        floe_table_close(t);
        floe_catalog_close(c);
        _exit(0);
    }
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.retain_last = 1;
    floe_orphan_options oo;
    floe_orphan_options_init(&oo);
    oo.older_than_ms = floe_wall_ms() - 60000; /* the writer's files are all younger */
    int runs = 0;
    for (;;) {
        int status = 0;
        pid_t w = waitpid(pid, &status, WNOHANG);
        o.older_than_ms = floe_wall_ms();
        floe_expire_result r;
        int rc = floe_maint_expire(e.t, &o, &r, &err);
        if (rc == 0)
            floe_expire_result_reset(&r);
        else
            CHECK(rc == FLOE_ECONFLICT);
        floe_orphan_result orr;
        CHECK_OK(floe_maint_orphans(e.t, &oo, &orr, &err), err);
        runs++;
        if (w == pid) {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            break;
        }
    }
    CHECK(runs > 1);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(e.t);
    strset live = {0};
    for (size_t i = 0; i < m->n_snapshots; i++)
        reach(&m->snapshots[i], false, &live);
    for (size_t i = 0; i < live.n; i++)
        if (!harness_file_exists(live.s[i]))
            harness_fail(__FILE__, __LINE__, "reachable %s was deleted", live.s[i]);
    /* and the current snapshot holds every file appended: 3 + 25*2 */
    floe_scan_plan *plan = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &plan, &err), err);
    CHECK_EQ_INT(plan->ntasks, 53);
    floe_scan_plan_free(plan);
    ss_free(&live);
    env_close(&e);
}

/* ---- orphans --------------------------------------------------------------------- */

static void set_old(const char *path, int64_t age_ms) {
    struct timeval tv[2];
    int64_t t = floe_wall_ms() - age_ms;
    tv[0].tv_sec = tv[1].tv_sec = (time_t)(t / 1000);
    tv[0].tv_usec = tv[1].tv_usec = 0;
    utimes(path, tv);
}

static void age_tree(const char *dir, int64_t age_ms) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "find %s -type f", dir);
    char *out = NULL;
    harness_run_cmd(cmd, &out);
    for (char *line = out ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n"))
        set_old(line, age_ms);
    free(out);
}

static void plant(const char *path, int64_t age_ms) {
    floe_error err;
    REQUIRE_OK(floe_io_write_all(NULL, path, "x", 1, NULL, &err), err);
    if (age_ms)
        set_old(path, age_ms);
}

typedef struct seen {
    strset s;
} seen;

static void on_seen(void *ctx, floe_maint_file_kind k, const char *uri) {
    (void)k;
    char *local = floe_io_local_path(uri); /* the test plants files by local path */
    ss_add(&((seen *)ctx)->s, local ? local : uri);
    floe_free(local);
}

TEST(orphans_delete_exactly_the_planted_old_files) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    for (int i = 0; i < 4; i++)
        append_files(e.t, &e.nfile, 2, "a", i == 2);
    char root[800];
    snprintf(root, sizeof root, "%s/ns/t", e.wh);
    age_tree(root, 10 * DAY); /* referenced files are old too: only references save them */
    char p[6][1000];
    snprintf(p[0], sizeof p[0], "%s/data/k=a/orphan-1.parquet", root);
    snprintf(p[1], sizeof p[1], "%s/metadata/stray-m0.avro", root);
    snprintf(p[2], sizeof p[2], "%s/data/young.parquet", root);
    snprintf(p[3], sizeof p[3], "%s/_landing/x.ndjson.zst", root);
    snprintf(p[4], sizeof p[4], "%s/data/.hidden/x.parquet", root);
    snprintf(p[5], sizeof p[5], "%s/data/_tmp/y.parquet", root);
    plant(p[0], 5 * DAY);
    plant(p[1], 4 * DAY);
    plant(p[2], 0);
    plant(p[3], 9 * DAY);
    plant(p[4], 9 * DAY);
    plant(p[5], 9 * DAY);
    strset before = {0};
    const floe_table_metadata *m = floe_table_metadata_get(e.t);
    for (size_t i = 0; i < m->n_snapshots; i++)
        reach(&m->snapshots[i], false, &before);

    floe_orphan_options o;
    floe_orphan_options_init(&o);
    o.dry_run = true;
    seen s = {0};
    o.on_file = on_seen;
    o.on_file_ctx = &s;
    floe_orphan_result r;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.orphans, 2);
    CHECK_EQ_INT(r.hidden, 3);
    CHECK(r.too_recent >= 1);
    CHECK(ss_has(&s.s, p[0]) && ss_has(&s.s, p[1]));
    for (int i = 0; i < 6; i++)
        CHECK(harness_file_exists(p[i])); /* dry run */
    /* a threshold older than the planted orphans: nothing */
    o.older_than_ms = floe_wall_ms() - 6 * DAY;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.orphans, 0);
    /* for real */
    o.dry_run = false;
    o.older_than_ms = -1;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.orphans, 2);
    CHECK(!harness_file_exists(p[0]) && !harness_file_exists(p[1]));
    for (int i = 2; i < 6; i++)
        CHECK(harness_file_exists(p[i]));
    for (size_t i = 0; i < before.n; i++)
        if (!harness_file_exists(before.s[i]))
            harness_fail(__FILE__, __LINE__, "referenced %s was deleted", before.s[i]);
    CHECK(harness_file_exists(floe_table_metadata_location(e.t)));
    /* a location outside the table is refused */
    o.location = e.wh;
    CHECK_EQ_INT(floe_maint_orphans(e.t, &o, &r, &err), FLOE_EINVALID);
    ss_free(&s.s);
    ss_free(&before);
    env_close(&e);
}

/* An expiry that commits between orphans' read of the table and its walk of the
 * snapshots deletes the manifest lists orphans is about to read: those snapshots are gone
 * from the re-read table, so they are skipped (not a failure). A missing manifest list of
 * a snapshot the table still has stays a failure, and nothing is deleted. */
TEST(orphans_snapshot_expired_meanwhile) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    for (int i = 0; i < 3; i++)
        append_files(e.t, &e.nfile, 1, "a", false);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(e.cat, "ns", "t", &t2, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(e.t);
    REQUIRE(m->n_snapshots == 3);
    char first_list[1000];
    snprintf(first_list, sizeof first_list, "%s", m->snapshots[0].manifest_list);
    /* e.t keeps the three snapshots it read; the expiry goes through t2 */
    floe_expire_options xo;
    floe_expire_options_init(&xo);
    xo.retain_last = 1;
    xo.older_than_ms = floe_wall_ms() + 1;
    floe_expire_result xr;
    REQUIRE_OK(floe_maint_expire(t2, &xo, &xr, &err), err);
    CHECK_EQ_INT(xr.snapshots_expired, 2);
    floe_expire_result_reset(&xr);
    char uri[1000];
    snprintf(uri, sizeof uri, "%s", first_list + (strncmp(first_list, "file://", 7) ? 0 : 7));
    CHECK(!harness_file_exists(uri));

    char root[800], orphan[1000];
    snprintf(root, sizeof root, "%s/ns/t", e.wh);
    age_tree(root, 10 * DAY);
    snprintf(orphan, sizeof orphan, "%s/data/k=a/orphan-1.parquet", root);
    plant(orphan, 5 * DAY);
    floe_orphan_options o;
    floe_orphan_options_init(&o);
    floe_orphan_result r;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.orphans, 1);
    CHECK(!harness_file_exists(orphan));
    REQUIRE_OK(floe_table_refresh(t2, &err), err);
    m = floe_table_metadata_get(t2);
    strset live = {0};
    for (size_t i = 0; i < m->n_snapshots; i++)
        reach(&m->snapshots[i], false, &live);
    CHECK(live.n > 0);
    for (size_t i = 0; i < live.n; i++)
        if (!harness_file_exists(live.s[i]))
            harness_fail(__FILE__, __LINE__, "referenced %s was deleted", live.s[i]);

    /* the current snapshot's manifest list lost: a failure, nothing deleted */
    const char *cur = m->snapshots[m->n_snapshots - 1].manifest_list;
    char lost[1000]; /* as recorded (t2's metadata may be replaced below) */
    snprintf(lost, sizeof lost, "%s", cur);
    snprintf(uri, sizeof uri, "%s", cur + (strncmp(cur, "file://", 7) ? 0 : 7));
    REQUIRE(unlink(uri) == 0);
    plant(orphan, 5 * DAY);
    CHECK_EQ_INT(floe_maint_orphans(t2, &o, &r, &err), FLOE_ENOTFOUND);
    CHECK(harness_file_exists(orphan));
    for (size_t i = 0; i < live.n; i++)
        if (strcmp(live.s[i], lost) && !harness_file_exists(live.s[i])) /* (lost: unlinked above) */
            harness_fail(__FILE__, __LINE__, "referenced %s was deleted", live.s[i]);
    ss_free(&live);
    floe_table_close(t2);
    env_close(&e);
}

TEST(orphans_scheme_mismatch_stops) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    append_files(e.t, &e.nfile, 1, "a", false);
    char root[800], local[1000], remote[1100];
    snprintf(root, sizeof root, "%s/ns/t", e.wh);
    snprintf(local, sizeof local, "%s/data/k=a/mismatch.parquet", root);
    snprintf(remote, sizeof remote, "s3a://bucket%s", local);
    /* the metadata references s3a://bucket/<the same path> */
    floe_append *a = NULL;
    REQUIRE_OK(floe_append_new(e.t, &a, &err), err);
    floe_value pv = floe_value_string("a", 1);
    floe_data_file f;
    memset(&f, 0, sizeof f);
    f.file_path = remote;
    f.file_format = "parquet";
    f.partition = &pv;
    f.npartition = 1;
    f.record_count = 1;
    f.file_size_in_bytes = 1;
    REQUIRE_OK(floe_append_add_file(a, &f, &err), err);
    REQUIRE_OK(floe_append_commit(a, NULL, &err), err);
    floe_append_free(a);
    plant(local, 0);
    age_tree(root, 10 * DAY);
    char orphan[1000];
    snprintf(orphan, sizeof orphan, "%s/data/k=a/plain-orphan.parquet", root);
    plant(orphan, 10 * DAY);

    floe_orphan_options o;
    floe_orphan_options_init(&o);
    floe_orphan_result r;
    CHECK_EQ_INT(floe_maint_orphans(e.t, &o, &r, &err), FLOE_ECONFLICT);
    CHECK(strstr(err.msg, "mismatch.parquet") != NULL);
    CHECK(harness_file_exists(local) && harness_file_exists(orphan)); /* nothing deleted */
    o.prefix_mismatch = FLOE_PREFIX_MISMATCH_IGNORE;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.conflicts, 1);
    CHECK(harness_file_exists(local) && !harness_file_exists(orphan));
    o.prefix_mismatch = FLOE_PREFIX_MISMATCH_DELETE;
    REQUIRE_OK(floe_maint_orphans(e.t, &o, &r, &err), err);
    CHECK(!harness_file_exists(local));
    env_close(&e);
}

TEST(uri_split_rules) {
    char buf[256];
    floe_uri_parts p;
    REQUIRE(floe_maint_uri_split("S3A://bkt/a//b", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.scheme, "s3");
    CHECK_EQ_STR(p.authority, "bkt");
    CHECK_EQ_STR(p.path, "/a//b"); /* object keys keep their slashes */
    REQUIRE(floe_maint_uri_split("file:///x//y", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.scheme, "");
    CHECK_EQ_STR(p.authority, "");
    CHECK_EQ_STR(p.path, "/x/y");
    REQUIRE(floe_maint_uri_split("file:/x/y", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.path, "/x/y");
    REQUIRE(floe_maint_uri_split("file://localhost/x", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.authority, "");
    REQUIRE(floe_maint_uri_split("/plain/p:q", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.scheme, "");
    CHECK_EQ_STR(p.path, "/plain/p:q");
    REQUIRE(floe_maint_uri_split("s3n://b", buf, sizeof buf, &p));
    CHECK_EQ_STR(p.scheme, "s3");
    CHECK_EQ_STR(p.path, "");
    CHECK(!floe_maint_uri_split("", buf, sizeof buf, &p));
    CHECK(!floe_maint_uri_split("s3://b/very/long", buf, 4, &p));
}

/* ---- manifest rewrite ------------------------------------------------------------ */

typedef struct live_entry {
    char path[512];
    int64_t snap, seq, fseq;
    char k[8];
} live_entry;

static size_t live_entries(floe_table *t, live_entry *out, size_t max, size_t *nmanifests) {
    floe_error err;
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(t));
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    size_t n = 0;
    REQUIRE_OK(floe_manifest_list_read(NULL, s->manifest_list, NULL, &a, &ml, &err), err);
    *nmanifests = ml.nfiles;
    for (size_t i = 0; i < ml.nfiles; i++) {
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options o = {.manifest = &ml.files[i]};
        REQUIRE_OK(floe_manifest_reader_open(NULL, ml.files[i].manifest_path, &o, &r, &err), err);
        const floe_manifest_entry *e;
        while (floe_manifest_reader_next(r, &e, &err) == 1) {
            if (e->status == FLOE_ENTRY_DELETED || n == max)
                continue;
            snprintf(out[n].path, sizeof out[n].path, "%s", e->file.file_path);
            out[n].snap = e->snapshot_id;
            out[n].seq = e->sequence_number;
            out[n].fseq = e->file_sequence_number;
            snprintf(out[n].k, sizeof out[n].k, "%.*s", (int)e->file.partition[0].v.bytes.n,
                     (const char *)e->file.partition[0].v.bytes.p);
            n++;
        }
        floe_manifest_reader_close(r);
    }
    floe_arena_reset(&a);
    return n;
}

static int cmp_live(const void *a, const void *b) {
    return strcmp(((const live_entry *)a)->path, ((const live_entry *)b)->path);
}

static void check_same_entries(live_entry *x, size_t nx, live_entry *y, size_t ny) {
    CHECK_EQ_INT(nx, ny);
    if (nx != ny)
        return;
    qsort(x, nx, sizeof *x, cmp_live);
    qsort(y, ny, sizeof *y, cmp_live);
    for (size_t i = 0; i < nx; i++) {
        if (strcmp(x[i].path, y[i].path) || x[i].snap != y[i].snap || x[i].seq != y[i].seq ||
            x[i].fseq != y[i].fseq)
            harness_fail(__FILE__, __LINE__, "entry %s changed", x[i].path);
    }
}

TEST(rewrite_manifests_regroups_and_keeps_entries) {
    env e;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}};
    env_open(&e, props, 1);
    floe_error err;
    static const char *keys[] = {"c", "a", "b"};
    for (int i = 0; i < 12; i++)
        append_files(e.t, &e.nfile, 3, keys[i % 3], false);
    static live_entry before[64], after[64];
    size_t nm_before = 0, nm_after = 0;
    size_t nb = live_entries(e.t, before, 64, &nm_before);
    CHECK_EQ_INT(nb, 36);
    CHECK_EQ_INT(nm_before, 12);
    const floe_snapshot *head = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    char *tr = NULL;
    for (size_t i = 0; i < head->n_summary; i++)
        if (!strcmp(head->summary[i].key, "total-records"))
            tr = strdup(head->summary[i].value);

    /* bytes per entry as the rewrite estimates it, for a target of ~10 entries */
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    REQUIRE_OK(floe_manifest_list_read(NULL, head->manifest_list, NULL, &a, &ml, &err), err);
    int64_t bytes = 0;
    for (size_t i = 0; i < ml.nfiles; i++)
        bytes += ml.files[i].manifest_length;
    floe_arena_reset(&a);
    int64_t per_entry = bytes / 36;

    floe_rewrite_manifests_options o;
    floe_rewrite_manifests_options_init(&o);
    o.target_size_bytes = per_entry * 10;
    floe_rewrite_manifests_result r;
    REQUIRE_OK(floe_maint_rewrite_manifests(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.manifests_created, 4);
    CHECK_EQ_INT(r.manifests_replaced, 12);
    CHECK_EQ_INT(r.entries_processed, 36);
    harness_check_summary_totals(e.t);
    size_t na = live_entries(e.t, after, 64, &nm_after);
    CHECK_EQ_INT(nm_after, 4);
    check_same_entries(before, nb, after, na);
    /* clustered: partitions come in order across the new manifests */
    size_t nmx = 0;
    na = live_entries(e.t, after, 64, &nmx);
    for (size_t i = 1; i < na; i++)
        CHECK(strcmp(after[i - 1].k, after[i].k) <= 0);
    /* the snapshot says what happened and keeps the totals */
    head = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    CHECK_EQ_STR(head->operation, "replace");
    int found = 0;
    for (size_t i = 0; i < head->n_summary; i++) {
        const floe_kv *kv = &head->summary[i];
        found += !strcmp(kv->key, "manifests-created") && !strcmp(kv->value, "4");
        found += !strcmp(kv->key, "manifests-replaced") && !strcmp(kv->value, "12");
        found += !strcmp(kv->key, "manifests-kept") && !strcmp(kv->value, "0");
        found += !strcmp(kv->key, "entries-processed") && !strcmp(kv->value, "36");
        found += tr && !strcmp(kv->key, "total-records") && !strcmp(kv->value, tr);
    }
    CHECK_EQ_INT(found, 5);
    /* the scan plan of the rewritten snapshot still adds up */
    floe_scan_plan *plan = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &plan, &err), err);
    CHECK_EQ_INT(plan->records, tr ? atoll(tr) : -1);
    CHECK_EQ_INT(plan->ntasks, 36);
    floe_scan_plan_free(plan);
    free(tr);

    /* one injected conflict: re-applied on the fresh metadata */
    floe_commit_fault f = {.nth_swap = 1, .code = FLOE_ECONFLICT};
    floe_table_commit_inject(&f);
    o.target_size_bytes = 8 << 20;
    REQUIRE_OK(floe_maint_rewrite_manifests(e.t, &o, &r, &err), err);
    floe_table_commit_inject(NULL);
    CHECK_EQ_INT(r.attempts, 2);
    CHECK_EQ_INT(r.manifests_after, 1);
    harness_check_summary_totals(e.t);
    na = live_entries(e.t, after, 64, &nm_after);
    check_same_entries(before, nb, after, na);
    env_close(&e);
}

TEST(rewrite_manifests_on_a_moved_table) {
    env e;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}};
    env_open(&e, props, 1);
    floe_error err;
    for (int i = 0; i < 5; i++)
        append_files(e.t, &e.nfile, 2, "a", false);
    /* a second handle commits while ours is stale: an append (kept) */
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(e.cat, "ns", "t", &t2, &err), err);
    append_files(t2, &e.nfile, 2, "b", false);
    floe_rewrite_manifests_options o;
    floe_rewrite_manifests_options_init(&o);
    floe_rewrite_manifests_result r;
    REQUIRE_OK(floe_maint_rewrite_manifests(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.recomputed, 0);
    CHECK(r.attempts >= 2);
    CHECK_EQ_INT(r.manifests_kept, 1); /* the other writer's manifest */
    static live_entry after[64];
    size_t nm = 0;
    CHECK_EQ_INT(live_entries(e.t, after, 64, &nm), 12);
    CHECK_EQ_INT(nm, 2);
    /* now the other handle rewrites too, from stale metadata: its replaced manifests are
     * gone -> planned again */
    REQUIRE_OK(floe_maint_rewrite_manifests(t2, &o, &r, &err), err);
    CHECK_EQ_INT(r.recomputed, 1);
    CHECK_EQ_INT(live_entries(t2, after, 64, &nm), 12);
    CHECK_EQ_INT(nm, 1);
    floe_table_close(t2);
    env_close(&e);
}

/* ---- landing lifecycle ----------------------------------------------------------- */

TEST(landing_lifecycle_deletes_committed_old_files_only) {
    char wh[700], land[800], db[900];
    snprintf(wh, sizeof wh, "%s/lwh", harness_tmpdir());
    snprintf(land, sizeof land, "%s/_landing", wh);
    snprintf(db, sizeof db, "%s/_index.db", land);
    floe_error err;
    floe_landing_lifecycle_result r;
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, NULL, &r, &err), err);
    CHECK(r.no_index);
    REQUIRE_OK(floe_io_mkdirs(NULL, land, &err), err);
    sqlite3 *s = NULL;
    REQUIRE(sqlite3_open(db, &s) == SQLITE_OK);
    REQUIRE(sqlite3_exec(s,
        "CREATE TABLE landing_files(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL,"
        " seq INTEGER NOT NULL, tbl TEXT NOT NULL, part TEXT NOT NULL, kind INTEGER NOT NULL,"
        " uri TEXT NOT NULL, bytes INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,"
        " records INTEGER NOT NULL, first_frame INTEGER NOT NULL, last_frame INTEGER NOT NULL,"
        " created_ms INTEGER NOT NULL, state TEXT NOT NULL, lease_until_ms INTEGER,"
        " snapshot_id INTEGER, UNIQUE(node, seq))", NULL, NULL, NULL) == SQLITE_OK);
    int64_t now = floe_wall_ms();
    struct { const char *state; int64_t age; const char *where; const char *tbl; } rows[] = {
        {"committed", 4 * DAY, "_landing/ns.t", "ns.t"},   /* 1: goes */
        {"committed", 1 * DAY, "_landing/ns.t", "ns.t"},   /* 2: too young */
        {"pending", 9 * DAY, "_landing/ns.t", "ns.t"},     /* 3: uncommitted */
        {"compacting", 9 * DAY, "_landing/ns.t", "ns.t"},  /* 4: uncommitted */
        {"quarantine", 9 * DAY, "_quarantine/ns.t", "ns.t"}, /* 5: retention decides */
        {"committed", 9 * DAY, "elsewhere", "ns.t"},       /* 6: outside: left alone */
        {"committed", 9 * DAY, "_landing/ns.u", "ns.u"},   /* 7: another table */
    };
    char paths[7][1000];
    for (int i = 0; i < 7; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s/node1-%010d.ndjson.zst", wh, rows[i].where, i);
        plant(paths[i], 0);
        char *sql = sqlite3_mprintf(
            "INSERT INTO landing_files(node, seq, tbl, part, kind, uri, bytes, raw_bytes, "
            "records, first_frame, last_frame, created_ms, state) VALUES('node1', %d, %Q, '', "
            "%d, %Q, 1, 1, 1, %d, %d, %lld, %Q)", i, rows[i].tbl, i == 4 ? 2 : 1, paths[i], i,
            i, (long long)(now - rows[i].age), rows[i].state);
        REQUIRE(sqlite3_exec(s, sql, NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_free(sql);
    }
    floe_landing_lifecycle_options o;
    floe_landing_lifecycle_options_init(&o);
    o.table = "ns.t";
    o.dry_run = true;
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK_EQ_INT(r.landing_deleted, 1);
    CHECK(harness_file_exists(paths[0]));
    o.dry_run = false;
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK_EQ_INT(r.landing_deleted, 1);
    CHECK_EQ_INT(r.quarantine_deleted, 0);
    CHECK_EQ_INT(r.kept_uncommitted, 2);
    CHECK(!harness_file_exists(paths[0]));
    for (int i = 1; i < 7; i++)
        CHECK(harness_file_exists(paths[i]));
    o.quarantine_retention_ms = 7 * DAY;
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK_EQ_INT(r.quarantine_deleted, 1);
    CHECK(!harness_file_exists(paths[4]));
    sqlite3_stmt *st = NULL;
    REQUIRE(sqlite3_prepare_v2(s, "SELECT id, state FROM landing_files ORDER BY id", -1, &st,
                               NULL) == SQLITE_OK);
    static const char *want[] = {"deleted", "committed", "pending", "compacting", "deleted",
                                 "committed", "committed"};
    int i = 0;
    while (sqlite3_step(st) == SQLITE_ROW && i < 7)
        CHECK_EQ_STR((const char *)sqlite3_column_text(st, 1), want[i++]);
    CHECK_EQ_INT(i, 7);
    sqlite3_finalize(st);
    sqlite3_close(s);
}

/* The index file is opened with the caller's connection options: a row another
 * connection holds the write lock over fails its marking after busy_timeout_ms (here
 * 100 ms), not after the 30 s default. */
TEST(landing_lifecycle_takes_sql_options) {
    char wh[700], land[800], db[900], file[1000];
    snprintf(wh, sizeof wh, "%s/lwh_busy", harness_tmpdir());
    snprintf(land, sizeof land, "%s/_landing", wh);
    snprintf(db, sizeof db, "%s/_index.db", land);
    snprintf(file, sizeof file, "%s/ns.t/node1-0000000001.ndjson.zst", land);
    floe_error err;
    REQUIRE_OK(floe_io_mkdirs(NULL, land, &err), err);
    plant(file, 0);
    sqlite3 *s = NULL;
    REQUIRE(sqlite3_open(db, &s) == SQLITE_OK);
    char *sql = sqlite3_mprintf(
        "CREATE TABLE landing_files(id INTEGER PRIMARY KEY, node TEXT, seq INTEGER, tbl TEXT,"
        " part TEXT, kind INTEGER, uri TEXT, bytes INTEGER, raw_bytes INTEGER, records INTEGER,"
        " first_frame INTEGER, last_frame INTEGER, created_ms INTEGER, state TEXT,"
        " lease_until_ms INTEGER, snapshot_id INTEGER);"
        "INSERT INTO landing_files VALUES(1, 'node1', 1, 'ns.t', '', 1, %Q, 1, 1, 1, 1, 1, %lld,"
        " 'committed', NULL, NULL);"
        "BEGIN IMMEDIATE", file, (long long)(floe_wall_ms() - 9 * DAY));
    REQUIRE(sqlite3_exec(s, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(sql);
    floe_landing_lifecycle_options o;
    floe_landing_lifecycle_options_init(&o);
    o.sql.busy_timeout_ms = 100;
    floe_landing_lifecycle_result r;
    int64_t t0 = floe_wall_ms();
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    int64_t took = floe_wall_ms() - t0;
    CHECK_EQ_INT(r.failures, 1); /* the file went; its row could not be marked */
    CHECK(took < 10000);
    REQUIRE(sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(s);
}

/* ---- scheduler configuration ----------------------------------------------------- */

TEST(maint_config_parse) {
    floe_maint_config c;
    floe_maint_config_init(&c);
    const char *text = "lease-ttl = 30s\n"
                       "[table ns.t]\n"
                       "expire.retain-last = 5\n"
                       "orphans.enabled = false\n"
                       "[defaults]\n"
                       "expire.interval = 2h\n"
                       "rewrite-manifests.min-manifests = 7\n"
                       "landing-lifecycle.quarantine-retention = 30d\n";
    floe_error err;
    REQUIRE_OK(floe_maint_config_parse(&c, text, strlen(text), "t.conf", &err), err);
    CHECK_EQ_INT(c.lease_ttl_ms, 30000);
    const floe_maint_job_config *j = floe_maint_config_job(&c, "ns.t", FLOE_JOB_EXPIRE);
    CHECK_EQ_INT(j->retain_last, 5);
    CHECK_EQ_INT(j->interval_ms, 7200000); /* defaults apply to tables in any order */
    CHECK(!floe_maint_config_job(&c, "ns.t", FLOE_JOB_ORPHANS)->enabled);
    CHECK(floe_maint_config_job(&c, "ns.other", FLOE_JOB_ORPHANS)->enabled);
    CHECK_EQ_INT(floe_maint_config_job(&c, "ns.other", FLOE_JOB_REWRITE_MANIFESTS)->min_manifests, 7);
    CHECK_EQ_INT(floe_maint_config_job(&c, NULL, FLOE_JOB_LANDING_LIFECYCLE)->quarantine_retention_ms,
                 30 * DAY);
    floe_maint_config_reset(&c);
    const char *bad = "[defaults]\nexpire.interval = soon\n";
    CHECK_EQ_INT(floe_maint_config_parse(&c, bad, strlen(bad), "b.conf", &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "b.conf:2") != NULL);
    const char *bad2 = "[nope]\n";
    CHECK_EQ_INT(floe_maint_config_parse(&c, bad2, strlen(bad2), "b.conf", &err), FLOE_EINVALID);
    floe_maint_config_reset(&c);
    /* cadences: unset or "auto" follow the commit rate, a duration fixes them */
    const floe_maint_job_config *d = floe_maint_config_job(&c, NULL, FLOE_JOB_REWRITE_DATA);
    CHECK(d->interval_auto);
    CHECK_EQ_INT(d->planner, FLOE_MAINT_PLANNER_AUTO);
    CHECK_EQ_INT(floe_maint_config_job(&c, NULL, FLOE_JOB_REWRITE_MANIFESTS)->min_manifests, 10);
    const char *rw = "[defaults]\nrewrite-data.planner = generational\n"
                     "rewrite-data.options = tier-fanout=4, max-files-per-partition=8\n"
                     "rewrite-data.interval = 30s\n"
                     "[table ns.t]\nrewrite-data.interval = auto\nrewrite-data.planner = bin-pack\n";
    REQUIRE_OK(floe_maint_config_parse(&c, rw, strlen(rw), "rw.conf", &err), err);
    d = floe_maint_config_job(&c, NULL, FLOE_JOB_REWRITE_DATA);
    CHECK(!d->interval_auto);
    CHECK_EQ_INT(d->interval_ms, 30000);
    CHECK_EQ_INT(d->planner, FLOE_MAINT_PLANNER_GENERATIONAL);
    CHECK_EQ_STR(d->rewrite_options, "tier-fanout=4, max-files-per-partition=8");
    d = floe_maint_config_job(&c, "ns.t", FLOE_JOB_REWRITE_DATA);
    CHECK(d->interval_auto);
    CHECK_EQ_INT(d->planner, FLOE_MAINT_PLANNER_BINPACK);
    floe_maint_config_reset(&c);
    const char *bad3 = "[defaults]\nrewrite-data.planner = lsm\n";
    CHECK_EQ_INT(floe_maint_config_parse(&c, bad3, strlen(bad3), "b.conf", &err), FLOE_EINVALID);
    floe_maint_config_reset(&c);
    const char *bad4 = "[defaults]\nexpire.planner = generational\n";
    CHECK_EQ_INT(floe_maint_config_parse(&c, bad4, strlen(bad4), "b.conf", &err), FLOE_EINVALID);
    floe_maint_config_reset(&c);
}

/* The scheduler skips a job whose lease another owner holds. */
typedef struct runs {
    int ok, busy, skipped;
} runs;

static void count_run(void *ctx, const floe_maint_run *r) {
    runs *c = ctx;
    if (r->lease_busy)
        c->busy++;
    else if (r->skipped)
        c->skipped++;
    else if (r->rc == 0)
        c->ok++;
}

TEST(maint_scheduler_respects_leases) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    for (int i = 0; i < 3; i++)
        append_files(e.t, &e.nfile, 1, "a", false);
    char db[700];
    snprintf(db, sizeof db, "%s/catalog.db", e.dir);
    floe_lease_store *ls = NULL;
    REQUIRE_OK(floe_lease_store_open_sqlite(db, NULL, &ls, &err), err);
    floe_maint_config c;
    floe_maint_config_init(&c);
    floe_maint *m = NULL;
    REQUIRE_OK(floe_maint_new(e.cat, ls, &c, NULL, &m, &err), err);
    REQUIRE_OK(floe_maint_add_table(m, "ns", "t", &err), err);
    runs rc = {0};
    floe_maint_on_run(m, count_run, &rc);
    /* someone else holds expire */
    floe_lease_key k = {"default", "ns", "t", "expire"};
    bool got = false;
    REQUIRE_OK(floe_lease_acquire(ls, &k, "other", 60000, &got, &err), err);
    REQUIRE(got);
    REQUIRE_OK(floe_maint_run_once(m, &err), err);
    CHECK_EQ_INT(rc.busy, 1);
    /* landing-compact, rewrite-data (no hooks), rewrite-manifests (3 <= 100) and
     * rewrite-deletes (a v2 table) skip */
    CHECK_EQ_INT(rc.skipped, 4);
    CHECK_EQ_INT(rc.ok, 2); /* orphans, landing lifecycle */
    floe_maint_metrics mm;
    floe_maint_metrics_get(m, &mm);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_EXPIRE].lease_busy, 1);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_ORPHANS].ok, 1);
    REQUIRE_OK(floe_lease_release(ls, &k, "other", &err), err);
    memset(&rc, 0, sizeof rc);
    REQUIRE_OK(floe_maint_run_once(m, &err), err);
    CHECK_EQ_INT(rc.busy, 0);
    CHECK_EQ_INT(rc.ok, 3);
    floe_maint_free(m);
    floe_lease_store_close(ls);
    floe_maint_config_reset(&c);
    env_close(&e);
}

/* New settings between ticks (floe serve's SIGHUP): a job planned an hour away runs once
 * its new, shorter interval has passed; a job turned off stops. */
TEST(maint_scheduler_takes_new_settings) {
    env e;
    env_open(&e, NULL, 0);
    floe_error err;
    floe_error_clear(&err);
    append_files(e.t, &e.nfile, 1, "a", false);
    floe_maint_config c;
    floe_maint_config_init(&c);
    const char *hourly = "[defaults]\nexpire.interval = 1h\norphans.interval = 1h\n";
    REQUIRE_OK(floe_maint_config_parse(&c, hourly, strlen(hourly), "test", &err), err);
    floe_maint *m = NULL;
    REQUIRE_OK(floe_maint_new(e.cat, NULL, &c, NULL, &m, &err), err);
    REQUIRE_OK(floe_maint_add_table(m, "ns", "t", &err), err);
    int stop = 0;
    REQUIRE_OK(floe_maint_tick(m, &stop, &err), err); /* every job is due at first */
    floe_maint_metrics mm;
    floe_maint_metrics_get(m, &mm);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_EXPIRE].runs, 1);
    REQUIRE_OK(floe_maint_tick(m, &stop, &err), err);
    floe_maint_metrics_get(m, &mm);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_EXPIRE].runs, 1); /* an hour away */
    floe_maint_config fresh;
    floe_maint_config_init(&fresh);
    const char *quick = "[defaults]\nexpire.interval = 50ms\norphans.enabled = false\n";
    REQUIRE_OK(floe_maint_config_parse(&fresh, quick, strlen(quick), "test", &err), err);
    REQUIRE_OK(floe_maint_set_config(m, &fresh, &err), err);
    floe_maint_config_reset(&fresh); /* copied */
    int64_t orphans_before = mm.jobs[FLOE_JOB_ORPHANS].runs;
    struct timespec ts = {0, 80 * 1000000L};
    nanosleep(&ts, NULL);
    REQUIRE_OK(floe_maint_tick(m, &stop, &err), err);
    floe_maint_metrics_get(m, &mm);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_EXPIRE].runs, 2);
    CHECK_EQ_INT(mm.jobs[FLOE_JOB_ORPHANS].runs, orphans_before);
    floe_maint_free(m);
    floe_maint_config_reset(&c);
    env_close(&e);
}

/* A table with frequent commits is maintained for streaming: the rewrite job gets the
 * generational planner and runs again within seconds, expiry keeps minutes instead of
 * days; settings given in the configuration still win. */
typedef struct rate_probe {
    int calls;
    bool generational;
    char options[64];
    char expire_detail[256];
    int expire_runs, orphans_runs;
} rate_probe;

static int probe_rewrite(void *ctx, floe_table *t, const floe_maint_rewrite_params *p,
                         floe_maint_job_stats *st, char *detail, size_t dn, floe_error *err) {
    (void)t;
    (void)err;
    rate_probe *pr = ctx;
    pr->calls++;
    pr->generational = p->generational;
    snprintf(pr->options, sizeof pr->options, "%s", p->options ? p->options : "");
    st->files_read = 3;
    snprintf(detail, dn, "probe");
    return 0;
}

static void probe_run(void *ctx, const floe_maint_run *r) {
    rate_probe *pr = ctx;
    if (r->job == FLOE_JOB_EXPIRE) {
        pr->expire_runs++;
        snprintf(pr->expire_detail, sizeof pr->expire_detail, "%s", r->detail);
    } else if (r->job == FLOE_JOB_ORPHANS) {
        pr->orphans_runs++;
    } else if (r->job == FLOE_JOB_REWRITE_DATA) {
        CHECK_EQ_INT(r->stats.files_read, 3);
        CHECK(r->commit_interval_ms >= 0 || !((rate_probe *)ctx)->generational);
    }
}

static int set_max_age(void *ctx, floe_metadata_builder *b, floe_error *err) {
    (void)ctx;
    return floe_metadata_builder_set_property(b, "history.expire.max-snapshot-age-ms",
                                              "86400000", err);
}

static void rate_run(env *e, const char *cfg_text, rate_probe *pr, int ticks) {
    floe_error err;
    floe_error_clear(&err);
    floe_maint_config c;
    floe_maint_config_init(&c);
    if (cfg_text)
        REQUIRE_OK(floe_maint_config_parse(&c, cfg_text, strlen(cfg_text), "t", &err), err);
    floe_maint_hooks h = {.rewrite_data = probe_rewrite, .ctx = pr};
    floe_maint *m = NULL;
    REQUIRE_OK(floe_maint_new(e->cat, NULL, &c, &h, &m, &err), err);
    REQUIRE_OK(floe_maint_add_table(m, "ns", "t", &err), err);
    floe_maint_on_run(m, probe_run, pr);
    int stop = 0;
    for (int i = 0; i < ticks; i++) {
        if (i) {
            struct timespec ts = {2, 500 * 1000000L};
            nanosleep(&ts, NULL);
        }
        REQUIRE_OK(floe_maint_tick(m, &stop, &err), err);
    }
    floe_maint_free(m);
    floe_maint_config_reset(&c);
}

TEST(maint_scheduler_follows_commit_rate) {
    env e;
    env_open(&e, NULL, 0);
    /* one commit: no rate, Iceberg's bin-pack and the table's 5-day retention */
    append_files(e.t, &e.nfile, 1, "a", false);
    rate_probe pr = {0};
    rate_run(&e, NULL, &pr, 1);
    CHECK_EQ_INT(pr.calls, 1);
    CHECK(!pr.generational);
    CHECK(strstr(pr.expire_detail, "older than") == NULL);
    /* a commit every few hundred ms */
    for (int i = 0; i < 5; i++)
        append_files(e.t, &e.nfile, 1, "a", false);
    memset(&pr, 0, sizeof pr);
    rate_run(&e, NULL, &pr, 2);
    CHECK(pr.generational);
    CHECK_EQ_INT(pr.calls, 2);      /* due again after a second or two, not an hour */
    CHECK_EQ_INT(pr.orphans_runs, 1); /* daily */
    CHECK_EQ_INT(pr.expire_runs, 1);  /* every minute at most */
    CHECK(strstr(pr.expire_detail, "older than 300 s") != NULL);
    /* the configuration wins: planner, options and a fixed interval */
    memset(&pr, 0, sizeof pr);
    rate_run(&e,
             "[defaults]\nrewrite-data.planner = bin-pack\nrewrite-data.interval = 1h\n"
             "rewrite-data.options = tier-fanout=4\nexpire.older-than = 2d\n",
             &pr, 2);
    CHECK(!pr.generational);
    CHECK_EQ_INT(pr.calls, 1);
    CHECK_EQ_STR(pr.options, "tier-fanout=4");
    CHECK(strstr(pr.expire_detail, "older than 172800 s") != NULL);
    /* a quiet table that speeds up: the hourly rewrite is pulled in once a probe of the
     * commit rate sees it (rate-probe) */
    {
        env q;
        env_open(&q, NULL, 0);
        append_files(q.t, &q.nfile, 1, "a", false);
        floe_maint_config qc;
        floe_maint_config_init(&qc);
        const char *probe = "rate-probe = 100ms\n";
        floe_error qe;
        REQUIRE_OK(floe_maint_config_parse(&qc, probe, strlen(probe), "t", &qe), qe);
        CHECK_EQ_INT(qc.rate_probe_ms, 100);
        rate_probe qp = {0};
        floe_maint_hooks qh = {.rewrite_data = probe_rewrite, .ctx = &qp};
        floe_maint *qm = NULL;
        REQUIRE_OK(floe_maint_new(q.cat, NULL, &qc, &qh, &qm, &qe), qe);
        REQUIRE_OK(floe_maint_add_table(qm, "ns", "t", &qe), qe);
        int qstop = 0;
        REQUIRE_OK(floe_maint_tick(qm, &qstop, &qe), qe);
        CHECK_EQ_INT(qp.calls, 1);
        CHECK(!qp.generational);
        for (int i = 0; i < 5; i++)
            append_files(q.t, &q.nfile, 1, "a", false);
        /* within seconds, not the hour the quiet table's interval says */
        for (int i = 0; i < 100 && qp.calls < 2; i++) {
            struct timespec ts = {0, 100 * 1000000L};
            nanosleep(&ts, NULL);
            REQUIRE_OK(floe_maint_tick(qm, &qstop, &qe), qe);
        }
        CHECK_EQ_INT(qp.calls, 2);
        CHECK(qp.generational);
        floe_maint_free(qm);
        floe_maint_config_reset(&qc);
        env_close(&q);
    }
    /* and so does the table's own retention */
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_commit(e.t, set_max_age, NULL, &err), err);
    memset(&pr, 0, sizeof pr);
    rate_run(&e, NULL, &pr, 1);
    CHECK(pr.generational);
    CHECK_EQ_INT(pr.expire_runs, 1);
    CHECK(strstr(pr.expire_detail, "older than") == NULL);
    env_close(&e);
}

/* The run-log line: one JSON object per run, strings escaped, the outcome in one word. */
TEST(run_log_line) {
    floe_maint_run r = {.table = "ns.t\"q", .job = FLOE_JOB_REWRITE_DATA, .owner = "host:1\\",
                        .start_ms = 1000, .end_ms = 2500, .rc = 0,
                        .detail = "two\nlines\x01",
                        .stats = {.files_read = 7, .bytes_read = 7000, .files_written = 1,
                                  .bytes_written = 6900, .snapshots_expired = 3,
                                  .commits = 1, .attempts = 2, .conflicts = 1},
                        .commit_interval_ms = 2000};
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_maint_run_json(&r, &b) == 0);
    REQUIRE(floe_buf_append_byte(&b, 0) == 0);
    CHECK_EQ_STR((const char *)b.data,
                 "{\"table\":\"ns.t\\\"q\",\"job\":\"rewrite-data\",\"owner\":\"host:1\\\\\","
                 "\"start_ms\":1000,\"end_ms\":2500,\"result\":\"ok\","
                 "\"detail\":\"two\\nlines\\u0001\",\"files_read\":7,\"bytes_read\":7000,"
                 "\"files_written\":1,\"bytes_written\":6900,\"files_deleted\":0,"
                 "\"bytes_deleted\":0,\"snapshots_expired\":3,\"commits\":1,"
                 "\"attempts\":2,\"conflicts\":1,"
                 "\"commit_interval_ms\":2000}\n");
    CHECK_EQ_STR(floe_maint_run_result(&r), "ok");
    r.skipped = true;
    CHECK_EQ_STR(floe_maint_run_result(&r), "skipped");
    r.rc = FLOE_EIO;
    CHECK_EQ_STR(floe_maint_run_result(&r), "failed");
    r.lease_busy = true;
    CHECK_EQ_STR(floe_maint_run_result(&r), "busy");
    /* no owner or detail: empty strings */
    floe_maint_run z = {.table = "t", .job = FLOE_JOB_EXPIRE};
    floe_buf_reset(&b);
    REQUIRE(floe_maint_run_json(&z, &b) == 0);
    CHECK(memmem(b.data, b.len, "\"owner\":\"\"", 10) != NULL);
    floe_buf_free(&b);
}

int main(void) {
    RUN(maint_scheduler_follows_commit_rate);
    RUN(run_log_line);
    RUN(expire_retention_rules);
    RUN(expire_retention_properties);
    RUN(expire_deletes_exactly_the_difference);
    RUN(expire_counts_only_files_that_were_there);
    RUN(expire_and_orphans_with_concurrent_writer);
    RUN(orphans_delete_exactly_the_planted_old_files);
    RUN(orphans_snapshot_expired_meanwhile);
    RUN(orphans_scheme_mismatch_stops);
    RUN(uri_split_rules);
    RUN(rewrite_manifests_regroups_and_keeps_entries);
    RUN(rewrite_manifests_on_a_moved_table);
    RUN(landing_lifecycle_deletes_committed_old_files_only);
    RUN(landing_lifecycle_takes_sql_options);
    RUN(maint_config_parse);
    RUN(maint_scheduler_respects_leases);
    RUN(maint_scheduler_takes_new_settings);
    return harness_finish();
}
