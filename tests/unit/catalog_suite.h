/*
 * catalog_suite.h - table-commit checks shared by the catalog tests of every back end
 * (test_catalog.c: SQLite and file system; test_pg_catalog.c: PostgreSQL). Include after
 * harness.h. A back end is a suite_open_fn: it opens its catalog over the folder dir
 * (the warehouse is dir/wh) or fails the test.
 */
#ifndef FLOE_TEST_CATALOG_SUITE_H
#define FLOE_TEST_CATALOG_SUITE_H

#include <dirent.h>
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

#endif
