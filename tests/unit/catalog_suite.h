/*
 * catalog_suite.h - table-commit checks shared by the catalog tests of every back end
 * (test_catalog.c: SQLite and file system; test_pg_catalog.c: PostgreSQL). Include after
 * harness.h. A back end is a suite_open_fn: it opens its catalog over the folder dir
 * (the warehouse is dir/wh) or fails the test.
 */
#ifndef FLOE_TEST_CATALOG_SUITE_H
#define FLOE_TEST_CATALOG_SUITE_H

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/table.h"
#include "harness.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"event\",\"required\":false,\"type\":\"string\"}]}";

typedef floe_catalog *(*suite_open_fn)(const void *ctx, const char *dir);

/* A commit's work: set a property (and maybe add a snapshot), recording every base the
 * apply step saw. */
typedef struct work {
    const char *key;          /* property to set */
    int calls;                /* how often apply ran */
    int64_t base_seq[8];      /* last-sequence-number of each base it saw */
    bool saw_key[8];          /* whether each base already had `seen_key` */
    const char *seen_key;
    bool add_snapshot;
} work;

static inline int apply_work(void *ctx, floe_metadata_builder *b, floe_error *err) {
    work *w = ctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    if (w->calls < 8) {
        w->base_seq[w->calls] = base->last_sequence_number;
        w->saw_key[w->calls] = w->seen_key && floe_table_metadata_property(base, w->seen_key);
    }
    w->calls++;
    int rc = floe_metadata_builder_set_property(b, w->key, "1", err);
    if (rc == 0 && w->add_snapshot) {
        floe_kv sum[] = {{"floe.test.id", w->key}};
        floe_snapshot_new s = {.operation = "append", .manifest_list = "dummy.avro",
                               .summary = sum, .n_summary = 1, .schema_id = -1};
        rc = floe_metadata_builder_add_snapshot(b, &s, NULL, NULL, err);
    }
    return rc;
}

/* Namespace db and table db.t (SCHEMA, props) in a freshly opened catalog. */
static inline floe_table *suite_fresh_table(suite_open_fn open, const void *octx,
                                            const char *dir, floe_catalog **cat,
                                            const floe_kv *props, size_t nprops) {
    floe_catalog *c = open(octx, dir);
    if (!c)
        return NULL;
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    floe_table_create_options opts = {.props = props, .nprops = nprops};
    if (floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err) != 0 ||
        floe_table_create(c, "db", "t", SCHEMA, &opts, &t, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "setup: %s", err.msg);
        floe_catalog_close(c);
        return NULL;
    }
    *cat = c;
    return t;
}

/* The *.metadata.json files in the table's metadata folder (local tables only). */
static inline size_t suite_count_metadata_files(const floe_table *t) {
    char *md = floe_io_join(floe_table_root(t), "metadata");
    char *local = floe_io_local_path(md);
    DIR *d = opendir(local);
    size_t n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len > 14 && !strcmp(de->d_name + len - 14, ".metadata.json"))
            n++;
    }
    if (d)
        closedir(d);
    floe_free(local);
    floe_free(md);
    return n;
}

/* A stale table object's commit conflicts, reloads and re-applies on the winner's
 * metadata; the losing attempt leaves no file. raw_swap: also check that a raw swap from
 * the stale base is a conflict and changes nothing (pointer stores). */
static inline void suite_conflict_and_retry(suite_open_fn open, const void *octx,
                                            const char *dir, bool raw_swap) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}, {"commit.retry.max-wait-ms", "5"}};
    floe_table *t1 = suite_fresh_table(open, octx, dir, &c, props, 2);
    REQUIRE(t1 != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &t2, &err), err);
    char *stale = floe_strdup(floe_table_metadata_location(t2));
    /* t1 commits first */
    work a = {.key = "a", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t1, apply_work, &a, &err), err);
    CHECK_EQ_INT(a.calls, 1);
    CHECK(strcmp(floe_table_metadata_location(t1), stale) != 0);
    if (raw_swap) {
        CHECK_EQ_INT(floe_catalog_swap(c, "db", "t", stale, "/tmp/x.metadata.json", &err),
                     FLOE_ECONFLICT);
        char *cur = NULL;
        REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
        CHECK_EQ_STR(cur, floe_table_metadata_location(t1));
        floe_free(cur);
    }
    /* t2 is stale: its commit conflicts, reloads and re-applies on t1's metadata */
    work b = {.key = "b", .seen_key = "a", .add_snapshot = true};
    size_t files_before = suite_count_metadata_files(t2);
    REQUIRE_OK(floe_table_commit(t2, apply_work, &b, &err), err);
    CHECK_EQ_INT(b.calls, 2);
    CHECK(!b.saw_key[0]);
    CHECK(b.saw_key[1]);
    CHECK_EQ_INT(b.base_seq[0], 0);
    CHECK_EQ_INT(b.base_seq[1], 1);
    const floe_table_metadata *m = floe_table_metadata_get(t2);
    CHECK_EQ_STR(floe_table_metadata_property(m, "a"), "1");
    CHECK_EQ_STR(floe_table_metadata_property(m, "b"), "1");
    CHECK_EQ_INT(m->n_snapshots, 2);
    CHECK_EQ_INT(m->last_sequence_number, 2);
    /* the losing attempt's file is gone: exactly one new file */
    CHECK_EQ_INT(suite_count_metadata_files(t2), files_before + 1);
    REQUIRE(m->n_metadata_log == 2);
    CHECK_EQ_STR(m->metadata_log[0].metadata_file, stale);
    floe_free(stale);
    floe_table_close(t2);
    floe_table_close(t1);
    floe_catalog_close(c);
}

/* floe_catalog_drop_table_at: a pointer that moved since it was read is a conflict that
 * changes nothing (the table loads at the commit that moved it, no file is left by the
 * attempt); at the current pointer the table is dropped; then not found, and a stale
 * writer's commit does not bring it back. floe_table_drop_purge drops and deletes. */
static inline bool suite_uri_exists(const char *uri) {
    bool yes = false;
    FLOE_IGNORE_RESULT(floe_io_exists(NULL, uri, &yes, NULL));
    return yes;
}

static inline void suite_drop_at(suite_open_fn open, const void *octx, const char *dir) {
    floe_catalog *c = NULL;
    floe_table *t1 = suite_fresh_table(open, octx, dir, &c, NULL, 0);
    REQUIRE(t1 != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &t2, &err), err);
    char *stale = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &stale, &err), err);
    work a = {.key = "a", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t1, apply_work, &a, &err), err);
    size_t files = suite_count_metadata_files(t1);
    CHECK_EQ_INT(floe_catalog_drop_table_at(c, "db", "t", stale, &err), FLOE_ECONFLICT);
    CHECK(strstr(err.msg, "not dropped") != NULL);
    CHECK_EQ_INT(suite_count_metadata_files(t1), files);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    floe_table *t3 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "t", &t3, &err), err);
    CHECK_EQ_STR(floe_table_metadata_location(t3), floe_table_metadata_location(t1));
    floe_table_close(t3);
    REQUIRE_OK(floe_catalog_drop_table_at(c, "db", "t", cur, &err), err);
    CHECK_EQ_INT(floe_table_load(c, "db", "t", &t3, &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_catalog_drop_table_at(c, "db", "t", cur, &err), FLOE_ENOTFOUND);
    /* a stale writer's commit after the drop does not bring the table back */
    work b = {.key = "b"};
    CHECK(floe_table_commit(t2, apply_work, &b, &err) < 0);
    CHECK_EQ_INT(floe_table_load(c, "db", "t", &t3, &err), FLOE_ENOTFOUND);
    floe_free(cur);
    floe_free(stale);
    floe_table_close(t2);
    /* another table, dropped with its files (its metadata files: apply_work's snapshot
     * names a manifest list that is not there) */
    floe_table_create_options opts = {0};
    floe_table *t4 = NULL;
    REQUIRE_OK(floe_table_create(c, "db", "u", SCHEMA, &opts, &t4, &err), err);
    work d = {.key = "d"};
    REQUIRE_OK(floe_table_commit(t4, apply_work, &d, &err), err);
    char *ml = floe_strdup(floe_table_metadata_location(t4));
    CHECK(suite_uri_exists(ml));
    bool dropped = false;
    size_t deleted = 0;
    REQUIRE_OK(floe_table_drop_purge(c, "db", "u", &dropped, &deleted, &err), err);
    CHECK(dropped);
    CHECK(deleted >= 2);
    CHECK(!suite_uri_exists(ml));
    CHECK_EQ_INT(floe_table_load(c, "db", "u", &t3, &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_table_drop_purge(c, "db", "u", &dropped, &deleted, &err), FLOE_ENOTFOUND);
    CHECK(!dropped);
    floe_free(ml);
    floe_table_close(t4);
    floe_table_close(t1);
    floe_catalog_close(c);
}

/* Handles that share a commit gate (floe serve's landing committer and maintenance
 * thread) never make each other's commits conflict. With commit.retry.num-retries 0 any
 * conflict fails a commit, and each writer's table object goes stale at the other's every
 * commit: only the refresh under the gate lets all of them through on the first attempt. */
#define SUITE_GATE_COMMITS 20

typedef struct suite_gate_writer {
    floe_catalog *c;
    int id, ok, applies;
    char error[1024];
} suite_gate_writer;

static inline void *suite_gate_writer_main(void *arg) {
    suite_gate_writer *g = arg;
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    if (floe_table_load(g->c, "db", "t", &t, &err) != 0) {
        snprintf(g->error, sizeof g->error, "load: %.900s", err.msg);
        return NULL;
    }
    for (int i = 0; i < SUITE_GATE_COMMITS; i++) {
        char key[32];
        snprintf(key, sizeof key, "w%d.%d", g->id, i);
        work w = {.key = key, .add_snapshot = true};
        if (floe_table_commit(t, apply_work, &w, &err) == 0)
            g->ok++;
        else if (!g->error[0])
            snprintf(g->error, sizeof g->error, "commit %d: %.900s", i, err.msg);
        g->applies += w.calls;
    }
    floe_table_close(t);
    return NULL;
}

static inline void suite_commit_gate(suite_open_fn open, const void *octx, const char *dir) {
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.num-retries", "0"}};
    floe_table *t = suite_fresh_table(open, octx, dir, &c, props, 1);
    REQUIRE(t != NULL);
    pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
    suite_gate_writer g[2] = {{.c = open(octx, dir), .id = 0}, {.c = open(octx, dir), .id = 1}};
    pthread_t thr[2];
    for (int i = 0; i < 2; i++) {
        floe_catalog_set_commit_gate(g[i].c, &gate);
        CHECK(floe_catalog_commit_gate(g[i].c) == &gate);
        REQUIRE(pthread_create(&thr[i], NULL, suite_gate_writer_main, &g[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(thr[i], NULL);
        if (g[i].error[0])
            harness_fail(__FILE__, __LINE__, "writer %d: %s", i, g[i].error);
        CHECK_EQ_INT(g[i].ok, SUITE_GATE_COMMITS);
        CHECK_EQ_INT(g[i].applies, SUITE_GATE_COMMITS); /* never a second attempt */
    }
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 2 * SUITE_GATE_COMMITS);
    /* the same stale commit on a handle without the gate conflicts */
    floe_table *stale = NULL;
    REQUIRE_OK(floe_table_load(g[0].c, "db", "t", &stale, &err), err);
    work w = {.key = "stale"};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    floe_catalog_set_commit_gate(g[0].c, NULL);
    work w2 = {.key = "late"};
    CHECK_EQ_INT(floe_table_commit(stale, apply_work, &w2, &err), FLOE_ECONFLICT);
    floe_table_close(stale);
    for (int i = 0; i < 2; i++)
        floe_catalog_close(g[i].c);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* procs processes commit `commits` snapshots each to one table with retries: every
 * commit lands exactly once, as one lineage with gapless sequence numbers. */
static inline void suite_concurrent_commits(suite_open_fn open, const void *octx,
                                            const char *label, int procs, int commits) {
    char tmpl[] = "/dev/shm/floe-cat-XXXXXX";
    char *d = mkdtemp(tmpl);
    char *dir = strdup(d ? d : harness_tmpdir());
    REQUIRE(dir != NULL);
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.num-retries", "10000"},
                       {"commit.retry.min-wait-ms", "1"},
                       {"commit.retry.max-wait-ms", "20"}};
    floe_table *t = suite_fresh_table(open, octx, dir, &c, props, 3);
    REQUIRE(t != NULL);
    floe_table_close(t);
    floe_catalog_close(c);
    pid_t *pids = calloc((size_t)procs, sizeof *pids);
    REQUIRE(pids != NULL);
    for (int p = 0; p < procs; p++) {
        pids[p] = fork();
        REQUIRE(pids[p] >= 0);
        if (pids[p] == 0) {
            int failures = 0, calls = 0;
            floe_catalog *cc = open(octx, dir);
            floe_table *tt = NULL;
            floe_error err;
            floe_error_clear(&err);
            if (!cc || floe_table_load(cc, "db", "t", &tt, &err) != 0)
                _exit(2);
            for (int i = 0; i < commits; i++) {
                char key[32];
                snprintf(key, sizeof key, "p%d_%d", p, i);
                work w = {.key = key, .add_snapshot = true};
                if (floe_table_commit(tt, apply_work, &w, &err) != 0) {
                    fprintf(stderr, "child %d commit %d: %s\n", p, i, err.msg);
                    failures++;
                }
                calls += w.calls;
            }
            char cpath[4200], num[32];
            snprintf(cpath, sizeof cpath, "%s/calls.%d", dir, p);
            int nlen = snprintf(num, sizeof num, "%d", calls);
            harness_write_file(cpath, num, (size_t)nlen);
            floe_table_close(tt);
            floe_catalog_close(cc);
            _exit(failures ? 1 : 0); /* _exit: no atexit cleanup of the shared tmp dir */
        }
    }
    for (int p = 0; p < procs; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    int attempts = 0;
    for (int p = 0; p < procs; p++) {
        char cpath[4200];
        snprintf(cpath, sizeof cpath, "%s/calls.%d", dir, p);
        char *num = harness_read_file(cpath, NULL);
        attempts += num ? atoi(num) : 0;
        free(num);
    }
    printf("%s: %d commits from %d processes took %d attempts\n", label, procs * commits,
           procs, attempts);
    CHECK(attempts >= procs * commits);
    c = open(octx, dir);
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_load(c, "db", "t", &t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    CHECK_EQ_INT(m->n_snapshots, procs * commits);
    CHECK_EQ_INT(m->last_sequence_number, procs * commits);
    /* every commit exactly once */
    for (int p = 0; p < procs; p++)
        for (int i = 0; i < commits; i++) {
            char key[32];
            snprintf(key, sizeof key, "p%d_%d", p, i);
            if (!floe_table_metadata_property(m, key))
                harness_fail(__FILE__, __LINE__, "commit %s is missing", key);
            int seen = 0;
            for (size_t s = 0; s < m->n_snapshots; s++)
                for (size_t kk = 0; kk < m->snapshots[s].n_summary; kk++)
                    if (!strcmp(m->snapshots[s].summary[kk].key, "floe.test.id") &&
                        !strcmp(m->snapshots[s].summary[kk].value, key))
                        seen++;
            if (seen != 1)
                harness_fail(__FILE__, __LINE__, "commit %s landed %d times", key, seen);
        }
    /* lineage: one chain from the current snapshot back to the first, sequence numbers
     * counting down by one */
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    int64_t expect_seq = procs * commits;
    size_t chain = 0;
    while (s) {
        chain++;
        CHECK_EQ_INT(s->sequence_number, expect_seq);
        expect_seq--;
        if (!s->has_parent)
            break;
        s = floe_table_metadata_snapshot(m, s->parent_snapshot_id);
        if (chain > (size_t)(procs * commits))
            break;
    }
    CHECK_EQ_INT(chain, procs * commits);
    CHECK_EQ_INT(expect_seq, 0);
    floe_table_close(t);
    floe_catalog_close(c);
    if (!strncmp(dir, "/dev/shm/", 9)) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            printf("note: could not remove %s\n", dir);
    }
    free(pids);
    free(dir);
}

/* ---------------------------------------------------------------------------------------
 * placement: a table location is a folder of its own (issue: a table created inside
 * another one's folder had its files deleted by the other's orphan removal)
 * ------------------------------------------------------------------------------------- */

static inline void suite_expect_refused(int rc, const floe_error *err, const char *needle) {
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    if (rc == FLOE_EINVALID && !strstr(err->msg, needle))
        harness_fail(__FILE__, __LINE__, "message \"%s\" does not name \"%s\"", err->msg,
                     needle);
}

/* sql: the store can place tables anywhere (--location, register); the filesystem store
 * keeps them at <warehouse>/<ns>/<name>. */
static inline void suite_placement(suite_open_fn open, const void *octx, const char *dir,
                                   bool sql) {
    floe_catalog *c = open(octx, dir);
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL, *t2 = NULL;
    REQUIRE_OK(floe_catalog_create_namespace(c, "shop", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(c, "shop", "events", SCHEMA, NULL, &t, &err), err);
    /* every location recorded is an absolute URI */
    CHECK(!strncmp(floe_table_metadata_get(t)->location, "file:///", 8));
    CHECK(!strncmp(floe_table_metadata_location(t), "file:///", 8));
    char *ptr = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "shop", "events", &ptr, &err), err);
    CHECK(!strncmp(ptr, "file:///", 8));
    floe_free(ptr);
    /* shop.events.data would have its location inside shop.events's */
    int rc = floe_catalog_create_namespace(c, "shop.events", NULL, NULL, 0, &err);
    if (sql) {
        REQUIRE_OK(rc, err);
        rc = floe_table_create(c, "shop.events", "data", SCHEMA, NULL, &t2, &err);
        suite_expect_refused(rc, &err, "inside the location of table shop.events");
        CHECK(t2 == NULL);
        bool exists = true;
        /* nothing registered */
        CHECK_EQ_INT(floe_catalog_load_table(c, "shop.events", "data", &ptr, &err),
                     FLOE_ENOTFOUND);
        (void)exists;
        /* and the other way round: a table whose location holds shop.events */
        char loc[4200];
        snprintf(loc, sizeof loc, "%s/wh/shop", dir);
        floe_table_create_options o = {.location = loc};
        REQUIRE_OK(floe_catalog_create_namespace(c, "other", NULL, NULL, 0, &err), err);
        rc = floe_table_create(c, "other", "all", SCHEMA, &o, &t2, &err);
        suite_expect_refused(rc, &err, "contains the location of table shop.events");
        /* the warehouse itself, and floe serve's folders in it */
        snprintf(loc, sizeof loc, "%s/wh", dir);
        rc = floe_table_create(c, "other", "wh", SCHEMA, &o, &t2, &err);
        suite_expect_refused(rc, &err, "contains the warehouse");
        snprintf(loc, sizeof loc, "%s/wh/_landing/t", dir);
        rc = floe_table_create(c, "other", "land", SCHEMA, &o, &t2, &err);
        suite_expect_refused(rc, &err, "landing");
        snprintf(loc, sizeof loc, "%s/wh/_quarantine", dir);
        rc = floe_table_create(c, "other", "quar", SCHEMA, &o, &t2, &err);
        suite_expect_refused(rc, &err, "quarantine");
        /* a location beside it is fine, spelled relative or not */
        snprintf(loc, sizeof loc, "%s/wh/shop/events2", dir);
        REQUIRE_OK(floe_table_create(c, "other", "beside", SCHEMA, &o, &t2, &err), err);
        floe_table_close(t2);
        t2 = NULL;
        /* register: a metadata file inside shop.events's folder */
        char md[4300];
        snprintf(md, sizeof md, "%s/wh/shop/events/sub/metadata/x.metadata.json", dir);
        char *copy_cmd = floe_asprintf("mkdir -p %s/wh/shop/events/sub/metadata && cp %s %s",
                                       dir, floe_table_metadata_location(t) + 7, md);
        REQUIRE(copy_cmd && system(copy_cmd) == 0);
        floe_free(copy_cmd);
        rc = floe_table_register(c, "other", "reg", md, &err);
        /* its recorded location is shop.events's own: the same folder */
        suite_expect_refused(rc, &err, "shop.events");
        /* rename keeps the location: still refused to land next to... nothing: allowed */
        REQUIRE_OK(floe_table_rename(c, "other", "beside", "other", "beside2", &err), err);
    } else {
        /* the filesystem store: the namespace folder would be the table's */
        CHECK(rc < 0);
        REQUIRE_OK(floe_catalog_create_namespace(c, "cellar", NULL, NULL, 0, &err), err);
        REQUIRE_OK(floe_catalog_create_namespace(c, "cellar.inner", NULL, NULL, 0, &err), err);
        REQUIRE_OK(floe_table_create(c, "cellar.inner", "t", SCHEMA, NULL, &t2, &err), err);
        floe_table_close(t2);
        t2 = NULL;
        /* cellar.inner (a namespace holding a table) cannot become a table */
        rc = floe_table_create(c, "cellar", "inner", SCHEMA, NULL, &t2, &err);
        suite_expect_refused(rc, &err, "contains the location of table cellar.inner.t");
        REQUIRE_OK(floe_catalog_create_namespace(c, "_landing", NULL, NULL, 0, &err), err);
        rc = floe_table_create(c, "_landing", "t", SCHEMA, NULL, &t2, &err);
        suite_expect_refused(rc, &err, "landing");
    }
    floe_table_close(t2);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* A namespace's location property holds its tables (PyIceberg, Iceberg Java). */
static inline void suite_namespace_location(suite_open_fn open, const void *octx,
                                            const char *dir) {
    floe_catalog *c = open(octx, dir);
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    char nsloc[4200];
    snprintf(nsloc, sizeof nsloc, "%s/elsewhere/sales/", dir);
    const char *keys[] = {"location"}, *vals[] = {nsloc};
    REQUIRE_OK(floe_catalog_create_namespace(c, "sales", keys, vals, 1, &err), err);
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_create(c, "sales", "orders", SCHEMA, NULL, &t, &err), err);
    char want[4300];
    snprintf(want, sizeof want, "file://%s/elsewhere/sales/orders", dir);
    CHECK_EQ_STR(floe_table_metadata_get(t)->location, want);
    snprintf(want, sizeof want, "file://%s/elsewhere/sales/orders/metadata/", dir);
    CHECK(!strncmp(floe_table_metadata_location(t), want, strlen(want)));
    floe_table_close(t);
    floe_catalog_close(c);
}

#endif
