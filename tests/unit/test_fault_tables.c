/*
 * test_fault_tables.c - failure injection over whole table operations (issue 10, part 2):
 *   append   floe_table_append_files of one NDJSON file to a partitioned table,
 *   rewrite  floe_rewrite (bin-pack, one commit) of a table of small files,
 *   expire   floe_maint_expire of every snapshot but the current one, deleting the files
 *            only the expired snapshots reached.
 * Each run opens the SQLite catalog, loads the table, runs the operation and closes all,
 * so catalog and metadata reads are part of it. For every N (strided, see below) the Nth
 * allocation, open, read, write, fsync or rename fails, sticky from N on; and separately
 * the catalog swap fails (floe_table_commit_inject): FLOE_EIO before the swap,
 * FLOE_EUNKNOWN_STATE before and after a real swap (with the catalog reads that settle it
 * failing too, and without), and a conflict.
 *
 * After every run, faults cleared, the table is reloaded and must be either unchanged
 * (same current snapshot, same rows) or fully changed (the rows, snapshot count and live
 * data file count of a clean run); every file a retained snapshot reaches exists and reads
 * (nothing reachable was deleted: the expire promise); no FileIO temporary file is left;
 * a failed run that left the table unchanged, not in unknown state, left no new file; and
 * an error has a message. No leak: this program runs under ASan/LSan. After each loop the
 * operation runs clean once more and must succeed.
 *
 * Runs per loop: FLOE_FAULT_MAX_RUNS (default 10 here; strided over N, always including
 * the first and last N). FLOE_FAULT_FULL=1 tries every N.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fault.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/manifest.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_table.h"
#include "table/commit_testing.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":4,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":5,\"name\":\"info\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":6,\"name\":\"a\",\"required\":false,\"type\":\"int\"}]}}]}";
static const char *SPEC =
    "{\"fields\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"kind\"}]}";

enum op { OP_APPEND, OP_REWRITE, OP_EXPIRE };

/* What a table looks like, for comparing states. */
typedef struct tstate {
    int64_t snapshot;  /* current snapshot id */
    int64_t nsnaps;    /* snapshots in the metadata */
    int64_t files;     /* live data files */
    int64_t nrows;
    char *rows;        /* sorted canonical rows, '\n'-joined */
} tstate;

typedef struct tcase {
    const char *name;
    enum op op;
    char work[4096];  /* catalog.db + wh/: where every run happens */
    char tmpl[4200];  /* the starting state, copied over work before each run */
    char input[4200]; /* append: the NDJSON file */
    tstate before, after;
    char *files0;     /* files under work/wh at the start, relative, sorted */
    /* outcome counts over all loops */
    int64_t unchanged, changed, ok;
    int64_t orphaned; /* failed unchanged runs that left complete files behind */
    int64_t unreadable; /* expire: expired lists/manifests it could not read, last run */
    int64_t tolerated;  /* runs that succeeded with a fault (see io_loop) */
} tcase;

/* ---- building blocks ----------------------------------------------------------------- */

static void write_ndjson(const char *path, int64_t base, int n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 0; i < n; i++) {
        int64_t id = base + i;
        floe_buf_printf(&b, "{\"id\":%lld,\"kind\":\"%s\"", (long long)id,
                        id % 3 == 0 ? "a" : (id % 3 == 1 ? "b" : "c"));
        if (id % 4 == 1)
            floe_buf_printf(&b, ",\"tags\":[\"x\",null,\"y%lld\"]", (long long)id);
        else if (id % 4 == 2)
            floe_buf_printf(&b, ",\"tags\":[]");
        if (id % 5 == 1)
            floe_buf_printf(&b, ",\"info\":{\"a\":%lld}", (long long)id);
        floe_buf_printf(&b, "}\n");
    }
    REQUIRE(harness_write_file(path, b.data, b.len) == 0);
    floe_buf_free(&b);
}

static int open_table(const tcase *c, floe_catalog **cat, floe_table **t, floe_error *err) {
    char db[4200], wh[4200];
    snprintf(db, sizeof db, "%s/catalog.db", c->work);
    snprintf(wh, sizeof wh, "%s/wh", c->work);
    *cat = NULL;
    *t = NULL;
    int rc = floe_catalog_open_sqlite(NULL, db, "default", wh, cat, err);
    if (rc == 0)
        rc = floe_table_load(*cat, "ns", "t", t, err);
    return rc;
}

static int do_append(floe_table *t, const char *input, floe_error *err) {
    const char *in[1] = {input};
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.threads = 1;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    int rc = floe_table_append_files(t, in, 1, &o, &r, err);
    floe_table_append_result_reset(&r);
    return rc;
}

static int do_rewrite(floe_table *t, floe_error *err) {
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.target_file_size = 4 * 1024 * 1024;
    o.min_input_files = 2;
    o.threads = 1;
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    return floe_rewrite(t, &o, &r, err);
}

static int do_expire(floe_table *t, int64_t *unreadable, floe_error *err) {
    floe_expire_options o;
    floe_expire_options_init(&o);
    o.older_than_ms = floe_wall_ms() + 3600 * 1000; /* everything is older */
    o.retain_last = 1;
    o.threads = 1;
    floe_expire_result r;
    memset(&r, 0, sizeof r);
    int rc = floe_maint_expire(t, &o, &r, err);
    *unreadable = rc == 0 ? r.unreadable : 0;
    floe_expire_result_reset(&r);
    return rc;
}

/* The whole operation: open the catalog, load, operate, close. */
static int run_op(tcase *c, floe_error *err) {
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    c->unreadable = 0;
    int rc = open_table(c, &cat, &t, err);
    if (rc == 0) {
        switch (c->op) {
        case OP_APPEND: rc = do_append(t, c->input, err); break;
        case OP_REWRITE: rc = do_rewrite(t, err); break;
        case OP_EXPIRE: rc = do_expire(t, &c->unreadable, err); break;
        }
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    return rc;
}

/* rm -rf to, then cp -a from to */
static void copy_tree(const char *from, const char *to) {
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
    if (system(cmd) != 0)
        harness_fail(__FILE__, __LINE__, "command failed: %s", cmd);
}

static void reset(tcase *c) {
    copy_tree(c->tmpl, c->work);
}

/* ---- reading a state ----------------------------------------------------------------- */

/* Every file a snapshot reaches (list, manifests, live data files) exists and the list
 * and manifests read. */
static void check_reachable(floe_table *t, const floe_snapshot *s, const char *what) {
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    char *list = NULL;
    REQUIRE_OK(floe_table_resolve_path(t, s->manifest_list, &list, &err), err);
    floe_manifest_list ml;
    if (floe_manifest_list_read(NULL, list, NULL, &a, &ml, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s: snapshot %lld: list %s: %s", what,
                     (long long)s->snapshot_id, list, err.msg);
        goto done;
    }
    for (size_t i = 0; i < ml.nfiles; i++) {
        char *mp = NULL;
        REQUIRE_OK(floe_table_resolve_path(t, ml.files[i].manifest_path, &mp, &err), err);
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options o = {.manifest = &ml.files[i]};
        if (floe_manifest_reader_open(NULL, mp, &o, &r, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s: snapshot %lld: manifest %s: %s", what,
                         (long long)s->snapshot_id, mp, err.msg);
            floe_free(mp);
            continue;
        }
        const floe_manifest_entry *e;
        int n;
        while ((n = floe_manifest_reader_next(r, &e, &err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            char *dp = NULL;
            REQUIRE_OK(floe_table_resolve_path(t, e->file.file_path, &dp, &err), err);
            bool there = false;
            if (floe_io_exists(NULL, dp, &there, NULL) < 0 || !there)
                harness_fail(__FILE__, __LINE__, "%s: snapshot %lld reaches %s: deleted", what,
                             (long long)s->snapshot_id, dp);
            floe_free(dp);
        }
        if (n < 0)
            harness_fail(__FILE__, __LINE__, "%s: manifest %s: %s", what, mp, err.msg);
        floe_manifest_reader_close(r);
        floe_free(mp);
    }
done:
    floe_free(list);
    floe_arena_reset(&a);
}

/* Load the table (no faults armed) and describe it; every snapshot's files checked. */
static void read_state(tcase *c, tstate *out, const char *what) {
    memset(out, 0, sizeof *out);
    floe_error err;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    if (open_table(c, &cat, &t, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s: table does not load: %s", what, err.msg);
        floe_table_close(t);
        floe_catalog_close(cat);
        harness_abort_test();
    }
    const floe_table_metadata *m = floe_table_metadata_get(t);
    out->snapshot = m->current_snapshot_id;
    out->nsnaps = (int64_t)m->n_snapshots;
    for (size_t i = 0; i < m->n_snapshots; i++)
        check_reachable(t, &m->snapshots[i], what);
    floe_scan_plan *p = NULL;
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_scan_plan_files(t, NULL, &p, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s: scan plan: %s", what, err.msg);
    } else {
        out->files = (int64_t)p->ntasks;
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
        if (floe_scan_read(t, p, &ro, harness_buf_sink, &b, NULL, &err) < 0)
            harness_fail(__FILE__, __LINE__, "%s: scan read: %s", what, err.msg);
        floe_scan_plan_free(p);
    }
    floe_buf_append_byte(&b, 0);
    out->rows = harness_sorted_lines((char *)b.data, &out->nrows);
    floe_buf_free(&b);
    floe_table_close(t);
    floe_catalog_close(cat);
}

static void state_free(tstate *s) {
    free(s->rows);
    s->rows = NULL;
}

/* The files under work/wh, relative to work, sorted. */
typedef struct listing {
    floe_buf b;
    size_t skip;
} listing;

static bool list_file(void *ctx, const char *path, const struct stat *st) {
    (void)st;
    listing *l = ctx;
    floe_buf_printf(&l->b, "%s\n", path + l->skip);
    return true;
}

static char *list_files(const tcase *c) {
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", c->work);
    listing l;
    floe_buf_init(&l.b, 0);
    l.skip = strlen(c->work);
    fault_walk(wh, list_file, &l);
    floe_buf_append_byte(&l.b, 0);
    char *s = harness_sorted_lines((char *)l.b.data, NULL);
    floe_buf_free(&l.b);
    return s;
}

/* ---- the check after a run ------------------------------------------------------------- */

static void verify(tcase *c, int rc, const floe_error *err, const char *what) {
    if (rc < 0 && !err->msg[0])
        harness_fail(__FILE__, __LINE__, "%s: error %d without a message", what, rc);
    CHECK(fault_walk(c->work, fault_no_temp, NULL) >= 0);
    tstate s;
    read_state(c, &s, what);
    bool unchanged = s.snapshot == c->before.snapshot && s.nsnaps == c->before.nsnaps;
    const tstate *want = unchanged ? &c->before : &c->after;
    if (!unchanged && s.snapshot == c->after.snapshot && c->op != OP_EXPIRE)
        harness_fail(__FILE__, __LINE__, "%s: snapshot id reused?", what);
    if (s.nsnaps != want->nsnaps || s.files != want->files || s.nrows != want->nrows ||
        strcmp(s.rows, want->rows))
        harness_fail(__FILE__, __LINE__,
                     "%s (rc %d: %s): table neither unchanged nor fully changed: %lld snapshots,"
                     " %lld files, %lld rows; want (%s) %lld, %lld, %lld",
                     what, rc, rc < 0 ? err->msg : "", (long long)s.nsnaps, (long long)s.files,
                     (long long)s.nrows, unchanged ? "unchanged" : "changed",
                     (long long)want->nsnaps, (long long)want->files, (long long)want->nrows);
    if (rc == 0 && unchanged)
        harness_fail(__FILE__, __LINE__, "%s: succeeded but the table did not change", what);
    /* A failure that did not commit deleted nothing. It should also have taken back
     * every file it wrote; complete files it could not (the cleanup itself needs memory,
     * or a file was published before its folder's fsync failed) are orphans, harmless
     * and counted: a temporary or partial file would have failed above. */
    if (rc < 0 && unchanged) {
        char *now = list_files(c);
        int64_t extra = 0;
        for (const char *y = c->files0; *y;) {
            const char *ny = strchr(y, '\n');
            size_t len = (size_t)(ny - y);
            bool found = false;
            for (const char *x = now; *x && !found;) {
                const char *nx = strchr(x, '\n');
                found = (size_t)(nx - x) == len && !strncmp(x, y, len);
                x = nx + 1;
            }
            if (!found)
                harness_fail(__FILE__, __LINE__, "%s (rc %d: %s): deleted %.*s", what, rc,
                             err->msg, (int)len, y);
            y = ny + 1;
        }
        for (const char *x = now; *x; x = strchr(x, '\n') + 1)
            extra++;
        for (const char *y = c->files0; *y; y = strchr(y, '\n') + 1)
            extra--;
        if (extra > 0)
            c->orphaned++;
        free(now);
    }
    if (rc == 0)
        c->ok++;
    else if (unchanged)
        c->unchanged++;
    else
        c->changed++;
    state_free(&s);
}

/* ---- loops ------------------------------------------------------------------------------ */

/* Kind k, sticky from the Nth operation on. Every fault that fires must surface as an
 * error (everything a clean run does is needed for its result). */
static void io_loop(tcase *c, fault_kind k, int errnum) {
    char what[200];
    floe_error err;
    floe_error_clear(&err);
    reset(c);
    fault_arm(k, 0, 0);
    int rc = run_op(c, &err);
    uint64_t ops = fault_seen(k);
    fault_clear_all();
    snprintf(what, sizeof what, "%s: %s: clean", c->name, fault_kind_name(k));
    REQUIRE_OK(rc, err);
    verify(c, rc, &err, what);
    uint64_t stride = fault_stride(ops, fault_max_runs(10)), runs = 0;
    for (uint64_t n = 1; n <= ops; n = fault_next(n, ops, stride)) {
        floe_error_clear(&err);
        reset(c);
        fault_arm(k, n, errnum);
        rc = run_op(c, &err);
        uint64_t seen = fault_seen(k);
        fault_clear_all();
        runs++;
        if (rc >= 0 && seen < n) { /* a worker thread's timing: the fault never fired */
            verify(c, rc, &err, "not reached");
            continue;
        }
        snprintf(what, sizeof what, "%s: %s fault at %llu of %llu", c->name, fault_kind_name(k),
                 (unsigned long long)n, (unsigned long long)ops);
        /* Successes allowed with a fault, the table fully changed (verify checks):
         * expire, after its commit, leaves the files of expired lists or manifests it
         * cannot read to orphan removal (maint.h S3) and reports them as unreadable; an
         * append's last allocation only copies the new metadata location for the result. */
        bool tolerated = rc >= 0 && ((c->op == OP_EXPIRE && c->unreadable > 0) ||
                                     (k == FAULT_ALLOC && n == ops && c->op == OP_APPEND));
        if (tolerated)
            c->tolerated++;
        else if (rc >= 0)
            harness_fail(__FILE__, __LINE__, "%s: succeeded anyway", what);
        verify(c, rc, &err, what);
    }
    floe_error_clear(&err);
    reset(c);
    rc = run_op(c, &err);
    snprintf(what, sizeof what, "%s: %s: clean after", c->name, fault_kind_name(k));
    CHECK_OK(rc, err);
    verify(c, rc, &err, what);
    fprintf(stderr, "  %s: %s: %llu operations, %llu faulted runs\n", c->name,
            fault_kind_name(k), (unsigned long long)ops, (unsigned long long)runs);
}

/* The catalog swap. Each operation swaps once: the fault on swap 2 never fires. */
static void swap_loop(tcase *c) {
    static const struct {
        const char *name;
        floe_commit_fault f;
        int want_rc;
        bool want_changed;
    } v[] = {
        {"EIO before", {1, FLOE_EIO, false, false}, FLOE_EIO, false},
        {"conflict before (retried)", {1, FLOE_ECONFLICT, false, false}, 0, true},
        {"unknown before, settled", {1, FLOE_EUNKNOWN_STATE, false, false}, 0, true},
        {"unknown before, unsettled", {1, FLOE_EUNKNOWN_STATE, false, true},
         FLOE_EUNKNOWN_STATE, false},
        {"unknown after, settled", {1, FLOE_EUNKNOWN_STATE, true, false}, 0, true},
        {"unknown after, unsettled", {1, FLOE_EUNKNOWN_STATE, true, true},
         FLOE_EUNKNOWN_STATE, true},
        {"EIO on swap 2 (never reached)", {2, FLOE_EIO, false, false}, 0, true},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char what[200];
        snprintf(what, sizeof what, "%s: swap %s", c->name, v[i].name);
        floe_error err;
        floe_error_clear(&err);
        reset(c);
        floe_table_commit_inject(&v[i].f);
        int rc = run_op(c, &err);
        floe_table_commit_inject(NULL);
        if (rc != v[i].want_rc)
            harness_fail(__FILE__, __LINE__, "%s: rc %d (%s), want %d", what, rc, err.msg,
                         v[i].want_rc);
        int64_t changed = c->changed + c->ok;
        verify(c, rc, &err, what);
        if ((c->changed + c->ok > changed) != v[i].want_changed)
            harness_fail(__FILE__, __LINE__, "%s: table %s", what,
                         v[i].want_changed ? "unchanged" : "changed");
    }
    fprintf(stderr, "  %s: swap: %zu variants\n", c->name, sizeof v / sizeof v[0]);
}

/* ---- the cases ---------------------------------------------------------------------------- */

static void setup(tcase *c, const char *name, enum op op) {
    memset(c, 0, sizeof *c);
    c->name = name;
    c->op = op;
    const char *dir = harness_tmpdir();
    snprintf(c->work, sizeof c->work, "%s/work", dir);
    snprintf(c->tmpl, sizeof c->tmpl, "%s/template", dir);
    snprintf(c->input, sizeof c->input, "%s/new.ndjson", dir);
    floe_io_mkdirs(NULL, c->work, NULL);
    floe_error err;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    char db[4200], wh[4200];
    snprintf(db, sizeof db, "%s/catalog.db", c->work);
    snprintf(wh, sizeof wh, "%s/wh", c->work);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(cat, "ns", NULL, NULL, 0, &err), err);
    /* short conflict backoff: the swap loop retries */
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}, {"commit.retry.max-wait-ms", "5"}};
    floe_table_create_options co = {.spec_json = SPEC, .props = props, .nprops = 2};
    REQUIRE_OK(floe_table_create(cat, "ns", "t", SCHEMA, &co, &t, &err), err);
    for (int k = 0; k < 3; k++) {
        char in[4300];
        snprintf(in, sizeof in, "%s/seed-%d.ndjson", dir, k);
        write_ndjson(in, k * 100, 30);
        REQUIRE_OK(do_append(t, in, &err), err);
    }
    if (op == OP_EXPIRE) {
        /* a replace (the first files are only reachable from old snapshots) and one more
         * append: expiry deletes data files, manifests and lists */
        REQUIRE_OK(do_rewrite(t, &err), err);
        char in[4300];
        snprintf(in, sizeof in, "%s/seed-3.ndjson", dir);
        write_ndjson(in, 300, 20);
        REQUIRE_OK(do_append(t, in, &err), err);
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    write_ndjson(c->input, 1000, 25);
    copy_tree(c->work, c->tmpl);
    read_state(c, &c->before, "before");
    c->files0 = list_files(c);
    /* the fully changed state, from a clean run */
    floe_error_clear(&err);
    REQUIRE_OK(run_op(c, &err), err);
    read_state(c, &c->after, "after");
    REQUIRE(c->after.snapshot != c->before.snapshot || c->after.nsnaps != c->before.nsnaps);
    reset(c);
}

static void teardown(tcase *c) {
    fprintf(stderr,
            "  %s: outcomes: %lld ok, %lld failed unchanged (%lld leaving orphan files), %lld "
            "failed but committed, %lld tolerated successes\n",
            c->name, (long long)c->ok, (long long)c->unchanged, (long long)c->orphaned,
            (long long)c->changed, (long long)c->tolerated);
    state_free(&c->before);
    state_free(&c->after);
    free(c->files0);
}

static void all_loops(tcase *c) {
    io_loop(c, FAULT_ALLOC, 0);
    io_loop(c, FAULT_OPEN, EACCES);
    io_loop(c, FAULT_READ, EIO);
    io_loop(c, FAULT_WRITE, ENOSPC);
    io_loop(c, FAULT_FSYNC, EIO);
    io_loop(c, FAULT_RENAME, EIO);
    swap_loop(c);
}

TEST(append_survives_every_fault) {
    tcase c;
    setup(&c, "append", OP_APPEND);
    CHECK_EQ_INT(c.after.nrows, c.before.nrows + 25);
    all_loops(&c);
    teardown(&c);
}

TEST(rewrite_survives_every_fault) {
    tcase c;
    setup(&c, "rewrite", OP_REWRITE);
    CHECK(c.after.files < c.before.files);
    CHECK_EQ_INT(c.after.nrows, c.before.nrows);
    all_loops(&c);
    teardown(&c);
}

TEST(expire_survives_every_fault) {
    tcase c;
    setup(&c, "expire", OP_EXPIRE);
    CHECK_EQ_INT(c.after.nsnaps, 1);
    CHECK(c.before.nsnaps >= 5);
    all_loops(&c);
    teardown(&c);
}

int main(void) {
    RUN(append_survives_every_fault);
    RUN(rewrite_survives_every_fault);
    RUN(expire_survives_every_fault);
    return harness_finish();
}
