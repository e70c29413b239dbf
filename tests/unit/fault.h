/*
 * fault.h - failure-injection loops for unit tests (include after harness.h).
 *
 * The promise under test (STYLE.md "Failure injection", issue 10): whatever allocation,
 * open, read, write, fsync or rename fails during a whole operation, the operation ends in
 * a clean error (no crash, no leak: the tests run under ASan/LSan), leaves no partial
 * output (only complete published files, or nothing), and succeeds again once the fault
 * is gone.
 *
 * A module describes its operation as a fault_case and calls fault_loop() once per kind:
 *
 *     static int run(void *ctx, floe_error *err)    { ... the whole operation ... }
 *     static void reset(void *ctx)                  { ... empty the output folder ... }
 *     static void verify(void *ctx, int rc, const floe_error *err) {
 *         ... CHECKs: rc == 0 -> complete output; rc < 0 -> nothing partial ...
 *     }
 *     fault_case fc = {"convert", run, reset, verify, &my_ctx};
 *     fault_loop(&fc, FAULT_ALLOC, 0);
 *     fault_loop(&fc, FAULT_WRITE, ENOSPC);
 *     fault_loop_all(&fc);                  (every kind with a typical errno)
 *
 * fault_loop first runs the operation clean, counting the operations of that kind (T);
 * then for every N in 1..T it fails the Nth one and every later one (sticky, like a full
 * disk or exhausted memory), requires a negative return with a message, calls verify,
 * and finally runs the operation clean once more and verifies success. Faults are always
 * cleared before verify runs, so verify may allocate and read freely.
 *
 * FLOE_FAULT_MAX_RUNS (environment) caps the runs per loop by striding over N (default:
 * every N); the last operation is always faulted too. Helpers below check folders for temporary or partial files.
 */
#ifndef FLOE_TEST_FAULT_H
#define FLOE_TEST_FAULT_H

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "floe/common.h"
#include "floe/io.h"
#include "harness.h"
#include "common/testing.h"
#include "io/io_faults.h"

typedef enum fault_kind {
    FAULT_ALLOC = -1, /* floe_malloc & co (floe_alloc_fail_after) */
    FAULT_OPEN = FLOE_IO_FAULT_OPEN,
    FAULT_READ = FLOE_IO_FAULT_READ,
    FAULT_WRITE = FLOE_IO_FAULT_WRITE,
    FAULT_FSYNC = FLOE_IO_FAULT_FSYNC,
    FAULT_RENAME = FLOE_IO_FAULT_RENAME,
} fault_kind;

typedef struct fault_case {
    const char *name;
    /* The whole operation; returns 0 or a negative floe code; cleans up after itself. */
    int (*run)(void *ctx, floe_error *err);
    /* Before every run: remove what the previous run left (may be NULL). */
    void (*reset)(void *ctx);
    /* After every run, faults cleared: CHECK the state for this outcome. */
    void (*verify)(void *ctx, int rc, const floe_error *err);
    void *ctx;
} fault_case;

static inline const char *fault_kind_name(fault_kind k) {
    switch (k) {
    case FAULT_ALLOC: return "alloc";
    case FAULT_OPEN: return "open";
    case FAULT_READ: return "read";
    case FAULT_WRITE: return "write";
    case FAULT_FSYNC: return "fsync";
    case FAULT_RENAME: return "rename";
    }
    return "?";
}

static inline void fault_clear_all(void) {
    floe_alloc_fail_after(0);
    floe_io_fault_clear(NULL);
}

/* Arm kind to fail its nth operation from now on (0: just count). */
static inline void fault_arm(fault_kind k, uint64_t nth, int errnum) {
    fault_clear_all();
    if (k == FAULT_ALLOC)
        floe_alloc_fail_after(nth);
    else
        floe_io_fault_inject(NULL, (floe_io_fault_kind)k, nth, errnum);
}

static inline uint64_t fault_seen(fault_kind k) {
    return k == FAULT_ALLOC ? floe_alloc_count() : floe_io_fault_count(NULL, (floe_io_fault_kind)k);
}

/* How many faulted runs a loop may make: every N with FLOE_FAULT_FULL=1, at most
 * FLOE_FAULT_MAX_RUNS when that is set, else dflt. */
static inline uint64_t fault_max_runs(uint64_t dflt) {
    const char *full = getenv("FLOE_FAULT_FULL");
    if (full && atoi(full) > 0)
        return UINT64_MAX;
    const char *cap = getenv("FLOE_FAULT_MAX_RUNS");
    if (cap && atoll(cap) > 0)
        return (uint64_t)atoll(cap);
    return dflt;
}

/* Striding over operations 1..ops in at most about cap runs: the step, and the next N
 * after n. The last operation is always among them (it is often the commit). Loop with
 *     for (n = 1; n <= ops; n = fault_next(n, ops, stride)) */
static inline uint64_t fault_stride(uint64_t ops, uint64_t cap) {
    return ops > cap ? (ops + cap - 1) / cap : 1;
}

static inline uint64_t fault_next(uint64_t n, uint64_t ops, uint64_t stride) {
    return n + stride > ops && n < ops ? ops : n + stride;
}

/* Which failures fault_loop saw, for the caller to assert on and print. */
typedef struct fault_stats {
    uint64_t ops;       /* operations of the kind in one clean run */
    uint64_t runs;      /* faulted runs */
    uint64_t not_reached; /* runs that performed fewer than N operations (threads) */
    uint64_t by_code[20]; /* runs by -code (index 0: runs that returned 0) */
} fault_stats;

/* One clean run: must succeed. Returns the operations of kind it performed. */
static inline uint64_t fault_clean_run(const fault_case *fc, fault_kind k) {
    floe_error err;
    floe_error_clear(&err);
    if (fc->reset)
        fc->reset(fc->ctx);
    fault_arm(k, 0, 0);
    int rc = fc->run(fc->ctx, &err);
    uint64_t n = fault_seen(k);
    fault_clear_all();
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "%s: clean run failed (%d): %s", fc->name, rc,
                     err.msg);
    fc->verify(fc->ctx, rc, &err);
    return n;
}

static inline fault_stats fault_loop(const fault_case *fc, fault_kind k, int errnum) {
    fault_stats st;
    memset(&st, 0, sizeof st);
    st.ops = fault_clean_run(fc, k);
    uint64_t stride = fault_stride(st.ops, fault_max_runs(UINT64_MAX));
    for (uint64_t n = 1; n <= st.ops; n = fault_next(n, st.ops, stride)) {
        floe_error err;
        floe_error_clear(&err);
        if (fc->reset)
            fc->reset(fc->ctx);
        fault_arm(k, n, errnum);
        int rc = fc->run(fc->ctx, &err);
        uint64_t seen = fault_seen(k);
        fault_clear_all();
        st.runs++;
        if (rc >= 0 && seen < n) {
            /* threads made this run take fewer operations: the fault never fired */
            st.not_reached++;
            fc->verify(fc->ctx, rc, &err);
            continue;
        }
        int idx = rc < 0 && -rc < 20 ? -rc : 0;
        st.by_code[idx]++;
        /* A sticky fault from operation n on must surface: every one of the T operations
         * a clean run performs is needed for its result. */
        if (rc >= 0)
            harness_fail(__FILE__, __LINE__, "%s: %s fault at %llu of %llu: succeeded anyway",
                         fc->name, fault_kind_name(k), (unsigned long long)n,
                         (unsigned long long)st.ops);
        else if (!err.msg[0])
            harness_fail(__FILE__, __LINE__, "%s: %s fault at %llu: error %d without a message",
                         fc->name, fault_kind_name(k), (unsigned long long)n, rc);
        fc->verify(fc->ctx, rc, &err);
    }
    /* the fault is gone: the same operation works again */
    (void)fault_clean_run(fc, k);
    fprintf(stderr, "  %s: %s: %llu operations, %llu faulted runs, all clean\n", fc->name,
            fault_kind_name(k), (unsigned long long)st.ops, (unsigned long long)st.runs);
    return st;
}

/* Every kind in turn, each with the errno a real failure of it would most likely carry:
 * allocation, open (EACCES), read (EIO), write (ENOSPC: a full disk), fsync (EIO),
 * rename (EIO). Returns the number of faulted runs. */
static inline uint64_t fault_loop_all(const fault_case *fc) {
    static const struct {
        fault_kind kind;
        int errnum;
    } kinds[] = {{FAULT_ALLOC, 0},     {FAULT_OPEN, EACCES}, {FAULT_READ, EIO},
                 {FAULT_WRITE, ENOSPC}, {FAULT_FSYNC, EIO},  {FAULT_RENAME, EIO}};
    uint64_t runs = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        runs += fault_loop(fc, kinds[i].kind, kinds[i].errnum).runs;
    return runs;
}

/* ---- folder checks ------------------------------------------------------------------ */

/* Called for every regular file under a folder; returns false to flag it. */
typedef bool (*fault_file_fn)(void *ctx, const char *path, const struct stat *st);

/* Walk dir recursively (a missing dir is empty). Returns the number of files seen, or -1
 * after reporting a flagged file through harness_fail. */
static inline long fault_walk(const char *dir, fault_file_fn fn, void *ctx) {
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    long n = 0;
    bool bad = false;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        char *path = malloc(len);
        if (!path)
            abort();
        snprintf(path, len, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                long m = fault_walk(path, fn, ctx);
                if (m < 0)
                    bad = true;
                else
                    n += m;
            } else {
                n++;
                if (fn && !fn(ctx, path, &st)) {
                    harness_fail(__FILE__, __LINE__, "unexpected or partial file: %s", path);
                    bad = true;
                }
            }
        }
        free(path);
    }
    closedir(d);
    return bad ? -1 : n;
}

/* FileIO's temporary outputs ("<name>.floe-tmp-<pid>-<n>") must never outlive a call. */
static inline bool fault_no_temp(void *ctx, const char *path, const struct stat *st) {
    (void)ctx;
    (void)st;
    return strstr(path, ".floe-tmp-") == NULL;
}

/* Remove everything under dir (dir itself stays). */
static inline void fault_empty_dir(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.[!.]* 2>/dev/null", dir, dir);
    if (system(cmd) != 0) {
        /* rm -rf with no match is fine; anything else shows up in the checks */
    }
}

#endif
