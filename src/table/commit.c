/*
 * commit.c - the optimistic commit protocol: build new metadata from the current one,
 * write it, swap the catalog pointer, and on a conflict reload and re-apply.
 *
 * Spec: format/spec.md "Commit Conflict Resolution and Retry", "Metastore Tables", "File
 * System Tables"; table properties commit.retry.*, write.metadata.delete-after-commit.
 * enabled and write.metadata.previous-versions-max (Iceberg configuration docs).
 *
 * States of one commit (DESIGN.md) and who moves it along:
 *
 *   staged ──apply()──> files written ──(caller's manifests)──> manifests written
 *      │                                                               │
 *      │            floe_metadata_builder_finish + write_metadata()    │
 *      └──────────────────────────> metadata written <─────────────────┘
 *                                        │ swap(): floe_catalog_swap, or for the
 *                                        │ filesystem store the create-if-absent write
 *              ┌─────────────────────────┼──────────────────────────┐
 *              v                         v                          v
 *          committed                 conflict                    unknown
 *      (install new metadata,   (delete our metadata file,   (resolve_unknown(): read the
 *       clean old metadata       refresh, back off, apply     catalog; -> committed, or
 *       files per properties)    again: back to staged;       -> conflict when provably
 *                                give up after num-retries    not applied, else report
 *                                or total-timeout-ms)         FLOE_EUNKNOWN_STATE and keep
 *                                                             every file)
 *
 * "files written" and "manifests written" belong to the caller: apply() writes what the
 * new snapshot needs (it runs again on every attempt, on fresh metadata).
 *
 * Invariants:
 *   C1. Nothing the table may reference is deleted while the outcome is unknown.
 *   C2. Our metadata file is deleted only after the swap definitely did not happen, and
 *       never in the filesystem store when the create failed (the file is someone else's).
 *   C3. A conflict never leaves the table object stale: it is refreshed before apply()
 *       runs again.
 *   C4. apply() failing because a file is missing (FLOE_ENOTFOUND) is a conflict when
 *       the table has moved on from the base (floe_table_base_gone: an expiry that
 *       committed after the base may delete the files only the base's snapshots
 *       reached), and an error only when the base is still current.
 *   C5. Commit priority: a committer that lost PRIORITY_AFTER_LOSSES swaps in a row takes
 *       the table's commit lease (job "commit" in floe_catalog_commit_leases), renews it
 *       before each attempt and retries without backing off. Every other committer
 *       waits for a lease held by someone else before its attempt (outside the gate, not
 *       counted as an attempt, up to commit.retry.total-timeout-ms) and, finding it
 *       taken just before its swap, yields that attempt. So the holder meets no floe
 *       commit racing it from its next attempt on: maintenance whose apply takes long
 *       finishes under steady landing commits. Priority is best effort: a lease that
 *       cannot be read or taken changes nothing, and writers that are not floe ignore it.
 *
 * Commit gate (floe_catalog_set_commit_gate): writers of one process that share a gate
 * hold it over each attempt - refresh, apply, swap - and never while backing off, so they
 * never conflict with each other; conflicts come only from other processes. floe serve
 * gives its landing committer and its maintenance thread one gate: without it, landing
 * commits every second or so won every race against a maintenance commit whose apply
 * writes manifests for a few hundred milliseconds.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/keyset.h"
#include "floe/io.h"
#include "floe/lease.h"
#include "floe/sql.h"
#include "table_internal.h"
#include "table/commit_testing.h"

/* ---------------------------------------------------------------------------------------
 * fault injection
 * ------------------------------------------------------------------------------------- */

static _Atomic int fault_countdown; /* swaps left before the fault; 0 = off */
static _Atomic int fault_code;
static _Atomic bool fault_after_apply;
static _Atomic bool fault_fail_resolve;

void floe_table_commit_inject(const floe_commit_fault *f) {
    atomic_store(&fault_code, f ? f->code : 0);
    atomic_store(&fault_after_apply, f ? f->after_apply : false);
    atomic_store(&fault_fail_resolve, f ? f->fail_resolve : false);
    atomic_store(&fault_countdown, f ? f->nth_swap : 0);
}

/* The injected fault for this swap (0 = none). */
static int next_fault(bool *after_apply, bool *fail_resolve) {
    int left = atomic_load(&fault_countdown);
    while (left > 0 && !atomic_compare_exchange_weak(&fault_countdown, &left, left - 1)) {
    }
    if (left != 1)
        return 0;
    *after_apply = atomic_load(&fault_after_apply);
    *fail_resolve = atomic_load(&fault_fail_resolve);
    return atomic_load(&fault_code);
}

/* ---------------------------------------------------------------------------------------
 * retry settings
 * ------------------------------------------------------------------------------------- */

void floe_commit_retry_from(const floe_table_metadata *m, floe_commit_retry *out) {
    out->num_retries = floe_table_metadata_property_int(m, FLOE_PROP_COMMIT_NUM_RETRIES, 4);
    out->min_wait_ms = floe_table_metadata_property_int(m, FLOE_PROP_COMMIT_MIN_WAIT_MS, 100);
    out->max_wait_ms = floe_table_metadata_property_int(m, FLOE_PROP_COMMIT_MAX_WAIT_MS, 60000);
    out->total_timeout_ms =
        floe_table_metadata_property_int(m, FLOE_PROP_COMMIT_TOTAL_TIMEOUT_MS, 1800000);
    if (out->num_retries < 0)
        out->num_retries = 0;
    if (out->min_wait_ms < 0)
        out->min_wait_ms = 0;
    if (out->max_wait_ms < out->min_wait_ms)
        out->max_wait_ms = out->min_wait_ms;
    if (out->total_timeout_ms < 0)
        out->total_timeout_ms = 0;
}

static void sleep_ms(int64_t ms) {
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* min(max, min * 2^(attempt-1)), then jittered to [d/2, d] so that writers which
 * collided do not collide again in lockstep. */
static int64_t backoff_ms(const floe_commit_retry *r, int attempt) {
    int64_t d = r->min_wait_ms;
    for (int i = 1; i < attempt && d < r->max_wait_ms; i++)
        d = d > INT64_MAX / 2 ? INT64_MAX : d * 2;
    if (d > r->max_wait_ms)
        d = r->max_wait_ms;
    if (d <= 1)
        return d;
    uint32_t rnd;
    floe_random_bytes(&rnd, sizeof rnd);
    return d / 2 + (int64_t)(rnd % (uint32_t)(d / 2 + 1));
}

/* ---------------------------------------------------------------------------------------
 * unknown state
 * ------------------------------------------------------------------------------------- */

enum { OUTCOME_APPLIED = 1, OUTCOME_NOT_APPLIED = 2, OUTCOME_UNKNOWN = 3 };

/* After an unknown swap from base_loc to new_loc, decide what happened by reading. The
 * winner of a swap from base is the file right after base in the lineage (the current
 * file's metadata-log, then the current file itself). */
static int resolve_unknown(floe_table *t, const char *base_loc, const char *base_logged,
                           const char *new_loc, bool fail_reads) {
    char *cur = NULL;
    int rc = FLOE_EIO;
    for (int i = 0; i < 3 && rc < 0; i++) {
        floe_error e;
        floe_error_clear(&e);
        rc = fail_reads ? FLOE_EIO : floe_catalog_load_table(t->catalog, t->ns, t->name, &cur, &e);
        if (rc < 0) {
            floe_log(FLOE_LOG_WARN, "commit: reading the catalog to settle an unknown state: %s",
                     fail_reads ? "injected failure" : e.msg);
            sleep_ms(50 << i);
        }
    }
    if (rc < 0)
        return OUTCOME_UNKNOWN;
    int outcome = OUTCOME_UNKNOWN;
    floe_table_metadata *m = NULL;
    if (!strcmp(cur, new_loc)) {
        outcome = OUTCOME_APPLIED;
    } else if (!strcmp(cur, base_loc)) {
        /* nothing moved: final only where a returned call leaves nothing in flight */
        outcome = floe_catalog_swap_outcome_final(t->catalog) ? OUTCOME_NOT_APPLIED
                                                              : OUTCOME_UNKNOWN;
    } else if (floe_table_metadata_read(floe_table_io(t), cur, &m, NULL) == 0) { /* cur: written absolute */
        const char *successor = NULL;
        for (size_t i = 0; i < m->n_metadata_log; i++)
            if (!strcmp(m->metadata_log[i].metadata_file, base_logged)) {
                successor = i + 1 < m->n_metadata_log ? m->metadata_log[i + 1].metadata_file : cur;
            }
        if (successor)
            outcome = !strcmp(successor, new_loc) ? OUTCOME_APPLIED : OUTCOME_NOT_APPLIED;
        /* base pruned from the log: cannot tell */
    }
    floe_table_metadata_free(m);
    floe_free(cur);
    return outcome;
}

/* ---------------------------------------------------------------------------------------
 * old metadata files
 * ------------------------------------------------------------------------------------- */

/* Length of the folder part of a location ("a/b/c" -> 3), 0 without a '/'. */
static size_t folder_len(const char *loc) {
    const char *slash = strrchr(loc, '/');
    return slash ? (size_t)(slash - loc) : 0;
}

/* Whether the recorded path `other` names the file whose recorded key is key and whose
 * resolved key is phys_key (compared as recorded and as resolved: a reference may spell
 * the file either way). An allocation failure counts as the same file. */
static bool names_file(const floe_table *t, const char *other, const char *key,
                       const char *phys_key) {
    char *ok = floe_io_uri_key(other), *u = NULL, *uk = NULL;
    floe_error e;
    bool same = !ok || !strcmp(ok, key);
    if (!same && floe_table_resolve_path(t, other, &u, &e) == 0) {
        uk = floe_io_uri_key(u);
        same = !uk || !strcmp(uk, phys_key);
    }
    floe_free(ok);
    floe_free(u);
    floe_free(uk);
    return same;
}

typedef struct reach_ctx {
    const floe_table *t;
    const char *key, *phys_key;
} reach_ctx;

static int on_statistics_file(void *vctx, int64_t snapshot_id, const char *path,
                              bool partition, floe_error *err) {
    (void)snapshot_id;
    (void)partition;
    (void)err;
    const reach_ctx *c = vctx;
    return names_file(c->t, path, c->key, c->phys_key);
}

/* Whether committed still reaches the old metadata file f (resolved: phys) in a role other
 * than its metadata-log: a snapshot's manifest list (format v1: manifest), a statistics
 * or partition statistics file. Another writer's metadata may name one file in two roles,
 * and the file the log drops is then still the table's. An allocation failure counts as
 * reached (the file is kept; orphan removal judges it later). */
static bool reached_otherwise(const floe_table *t, const floe_table_metadata *committed,
                              const char *f, const char *phys) {
    char *key = floe_io_uri_key(f), *phys_key = floe_io_uri_key(phys);
    bool reached = !key || !phys_key;
    for (size_t i = 0; !reached && i < committed->n_snapshots; i++) {
        const floe_snapshot *s = &committed->snapshots[i];
        reached = s->manifest_list && names_file(t, s->manifest_list, key, phys_key);
        for (size_t k = 0; !reached && k < s->n_manifests; k++)
            reached = names_file(t, s->manifests[k], key, phys_key);
    }
    reach_ctx c = {t, key, phys_key};
    if (!reached)
        reached = floe_table_metadata_foreach_statistics(committed, on_statistics_file, &c,
                                                         NULL) != 0;
    floe_free(key);
    floe_free(phys_key);
    return reached;
}

/* Whether the file at phys is a table metadata file: named as one (".metadata.json", or
 * gzip's ".gz.metadata.json" / ".metadata.json.gz") and holding a JSON object or gzip data.
 * A metadata log is the writer's word, and a registered or hand-made one may name any file
 * of the table's folders there; no other Iceberg file starts so (Parquet "PAR1", Avro
 * "Obj", ORC "ORC", Puffin "PFA1"), so a manifest or a data file never passes. A file that
 * cannot be read does not pass either (it is kept; orphan removal judges it later). */
static bool is_metadata_file(floe_io *io, const char *phys) {
    if (!floe_metadata_file_name(phys))
        return false;
    floe_input *in = NULL;
    floe_error e;
    uint8_t head[64];
    bool ok = false;
    if (floe_input_open(io, phys, &in, &e) == 0) {
        int64_t size = floe_input_size(in);
        size_t want = size < (int64_t)sizeof head ? (size_t)(size > 0 ? size : 0) : sizeof head;
        if (want >= 2 && floe_input_read_at(in, 0, head, want, &e) == 0) {
            size_t i = 0;
            if (want >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF)
                i = 3; /* a UTF-8 byte order mark */
            while (i < want && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' ||
                                head[i] == '\r'))
                i++;
            ok = (i < want && head[i] == '{') || (head[0] == 0x1F && head[1] == 0x8B);
        }
        floe_input_close(in);
    }
    return ok;
}

void floe_table_clean_old_metadata(const floe_table *t, const floe_table_metadata *base,
                                   const floe_table_metadata *committed,
                                   const char *committed_loc) {
    if (!floe_table_metadata_property_bool(committed, FLOE_PROP_METADATA_DELETE_AFTER_COMMIT,
                                           false))
        return;
    size_t dl = folder_len(committed_loc);
    if (!dl)
        return;
    floe_table_confinement *conf = NULL;
    for (size_t i = 0; i < base->n_metadata_log; i++) {
        const char *f = base->metadata_log[i].metadata_file;
        bool kept = false;
        for (size_t k = 0; k < committed->n_metadata_log && !kept; k++)
            kept = !strcmp(committed->metadata_log[k].metadata_file, f);
        if (kept)
            continue;
        char *phys = NULL;
        floe_error e;
        floe_error_clear(&e);
        if (floe_table_resolve_path(t, f, &phys, &e) < 0) {
            floe_log(FLOE_LOG_WARN, "commit: old metadata %s not deleted: %s", f, e.msg);
            continue;
        }
        /* only a metadata file beside the new one: the table's metadata folder, wherever
         * write.metadata.path puts it, and inside the table's own folders (floe/table.h,
         * "Confinement"); never the new file itself, nor a file the new metadata reaches
         * in another role */
        int rc = 0;
        if (folder_len(phys) == dl && !strncmp(phys, committed_loc, dl) &&
            strcmp(phys, committed_loc) && !reached_otherwise(t, committed, f, phys) &&
            is_metadata_file(floe_table_io(t), phys)) {
            if (!conf)
                rc = floe_table_confinement_open(t, &conf, &e);
            if (rc == 0)
                rc = floe_table_confinement_admit(conf, phys, &e);
            if (rc > 0 && floe_io_delete(floe_table_io(t), phys, &e) < 0)
                floe_log(FLOE_LOG_WARN, "commit: old metadata %s not deleted: %s", phys, e.msg);
        }
        floe_free(phys);
        if (rc < 0) {
            floe_log(FLOE_LOG_WARN, "commit: old metadata files kept: %s", e.msg);
            break;
        }
    }
    const char *report = floe_table_confinement_report(conf);
    if (report)
        floe_log(FLOE_LOG_WARN, "commit: old metadata files: %s", report);
    floe_table_confinement_free(conf);
}

/* ---------------------------------------------------------------------------------------
 * commit priority
 * ------------------------------------------------------------------------------------- */

/* A committer that lost this many swaps in a row takes the table's commit lease. */
#define PRIORITY_AFTER_LOSSES 2
/* The lease lasts 4 times the longest attempt so far, within these bounds; the holder
 * renews it before each attempt, so only a holder that died makes others wait it out. */
#define PRIORITY_TTL_MIN_MS 10000
#define PRIORITY_TTL_MAX_MS 120000
/* A committer waiting for another's lease looks again this often (at most). */
#define PRIORITY_POLL_MAX_MS 250

typedef struct priority {
    floe_lease_store *store; /* NULL: the catalog keeps no leases */
    floe_lease_key key;
    char owner[200];
    bool held;
    int64_t longest_ms;      /* the longest attempt so far */
} priority;

static void prio_init(priority *p, floe_table *t) {
    memset(p, 0, sizeof *p);
    p->store = floe_catalog_commit_leases(t->catalog);
    p->key = (floe_lease_key){floe_catalog_name(t->catalog), t->ns, t->name, "commit"};
    char base[128];
    floe_lease_owner_id(base);
    uint32_t rnd;
    floe_random_bytes(&rnd, sizeof rnd);
    snprintf(p->owner, sizeof p->owner, "%s:%08x", base, rnd);
}

static int64_t prio_ttl(const priority *p) {
    int64_t ttl = p->longest_ms > PRIORITY_TTL_MAX_MS / 4 ? PRIORITY_TTL_MAX_MS
                                                          : 4 * p->longest_ms;
    return ttl < PRIORITY_TTL_MIN_MS ? PRIORITY_TTL_MIN_MS : ttl;
}

/* Another committer holds the lease: true, with its owner and the ms it still has. A
 * lease that cannot be read counts as free: priority never fails a commit. */
static bool prio_other(priority *p, char *holder, size_t n, int64_t *left_ms) {
    if (!p->store || p->held)
        return false;
    floe_lease_info li;
    floe_error e;
    floe_error_clear(&e);
    if (floe_lease_get(p->store, &p->key, &li, &e) < 0 || !li.owner[0] ||
        li.expires_at <= li.now || !strcmp(li.owner, p->owner))
        return false;
    snprintf(holder, n, "%s", li.owner);
    *left_ms = li.expires_at - li.now;
    return true;
}

/* Before an attempt: wait while another committer holds the lease, up to deadline_ns;
 * FLOE_EBUSY when it still holds it then. The holder renews it. */
static int prio_wait(priority *p, floe_table *t, int64_t deadline_ns, floe_error *err) {
    if (p->held) {
        bool held = false;
        floe_error e;
        floe_error_clear(&e);
        if (floe_lease_renew(p->store, &p->key, p->owner, prio_ttl(p), &held, &e) < 0 ||
            !held)
            p->held = false; /* lost it (expired and taken): compete as everyone does */
        return 0;
    }
    char holder[256];
    int64_t left_ms = 0;
    bool said = false;
    while (prio_other(p, holder, sizeof holder, &left_ms)) {
        int64_t now = floe_now_ns();
        if (now >= deadline_ns)
            return floe_error_set(err, FLOE_EBUSY,
                                  "table %s.%s: commit gave up waiting for %s, which holds the "
                                  "table's commit lease (a committer that kept losing) for "
                                  "another %" PRId64 " ms", t->ns, t->name, holder, left_ms);
        if (!said) {
            floe_log(FLOE_LOG_INFO, "commit: %s.%s: waiting for %s, which has priority",
                     t->ns, t->name, holder);
            said = true;
        }
        int64_t wait = left_ms < PRIORITY_POLL_MAX_MS ? left_ms : PRIORITY_POLL_MAX_MS;
        if (wait > (deadline_ns - now) / 1000000)
            wait = (deadline_ns - now) / 1000000;
        sleep_ms(wait > 0 ? wait : 1);
    }
    return 0;
}

/* After losing a swap: take the lease once the losses add up (best effort). */
static void prio_take(priority *p, floe_table *t, int losses) {
    if (!p->store || p->held || losses < PRIORITY_AFTER_LOSSES)
        return;
    bool got = false;
    floe_error e;
    floe_error_clear(&e);
    if (floe_lease_acquire(p->store, &p->key, p->owner, prio_ttl(p), &got, &e) == 0 && got) {
        p->held = true;
        floe_log(FLOE_LOG_INFO, "commit: %s.%s: lost %d times in a row: taking priority (the "
                 "table's commit lease) for the next attempts", t->ns, t->name, losses);
    }
}

static void prio_release(priority *p) {
    if (!p->held)
        return;
    floe_error e;
    floe_error_clear(&e);
    FLOE_IGNORE_RESULT(floe_lease_release(p->store, &p->key, p->owner, &e));
    p->held = false;
}

/* ---------------------------------------------------------------------------------------
 * test hook
 * ------------------------------------------------------------------------------------- */

static floe_commit_race_fn race_fn;
static void *race_ctx;

void floe_table_commit_set_race(floe_commit_race_fn fn, void *ctx) {
    race_ctx = ctx;
    race_fn = fn;
}

/* ---------------------------------------------------------------------------------------
 * the commit
 * ------------------------------------------------------------------------------------- */

/* Write the new metadata file for a store where writing is not the swap; the uuid in the
 * name makes a clash practically impossible, but a clash is handled (new name). */
static int write_unique(floe_table *t, const floe_table_metadata *m, const char *base_loc,
                        bool gzip, char **loc, floe_error *err) {
    char *md_dir = floe_table_metadata_dir(m);
    if (!md_dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (!floe_io_uri_is_relative(md_dir)) { /* recorded as an absolute URI */
        char *abs = NULL;
        int rc = floe_io_uri_absolute(md_dir, NULL, &abs, err);
        floe_free(md_dir);
        if (rc < 0)
            return rc;
        md_dir = abs;
    }
    for (int i = 0; i < 3; i++) {
        int rc = floe_catalog_new_metadata_location(t->catalog, md_dir, base_loc, gzip, loc, err);
        if (rc == 0)
            rc = floe_table_metadata_write(floe_table_io(t), m, *loc, gzip, true, err);
        if (rc != FLOE_EEXISTS) {
            floe_free(md_dir);
            return rc;
        }
        floe_free(*loc);
        *loc = NULL;
    }
    floe_free(md_dir);
    return floe_error_set(err, FLOE_EEXISTS, "could not find a free metadata file name");
}

/* The metadata-log entry for the base file: the pointer as the catalog stores it, or for
 * a table opened by path, the base file under the table's recorded location; while the
 * table's paths are migrated, its migrated form. Caller frees. */
static int base_log_entry(const floe_table *t, char **out, floe_error *err) {
    if (t->migrating)
        return floe_table_migrated_path(t, t->pointer, out, err);
    const char *loc = t->metadata->location;
    size_t rl = strlen(t->root);
    const char *base = t->metadata_location;
    if (!t->catalog && !floe_io_uri_is_relative(loc) && !strncmp(base, t->root, rl) &&
        base[rl] == '/') {
        char *rec = floe_io_join(loc, base + rl + 1);
        if (!rec)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *out = rec;
        return 0;
    }
    char *copy = floe_strdup(t->catalog ? t->pointer : base);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = copy;
    return 0;
}

/* Staged: the caller's change applied on a builder from the current metadata and the
 * new document made (*m). FLOE_COMMIT_NOOP when apply says there is nothing to do (*m
 * stays NULL); FLOE_ECONFLICT when apply failed for a file of a base the table has moved
 * on from (C4). The outputs are the caller's to free in every case. */
static int stage(floe_table *t, floe_commit_apply_fn apply, void *ctx, floe_metadata_builder **b,
                 floe_table_metadata **m, char **log_entry, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_metadata_builder_new(t->metadata, b, err));
    int rc = apply(ctx, *b, err);
    if (rc < 0 && floe_table_base_gone(t, rc)) {
        floe_error_prefix(err, "the table moved on from the snapshot this commit "
                          "started from (a concurrent expiry deletes its files): ");
        if (err)
            err->code = FLOE_ECONFLICT;
        return FLOE_ECONFLICT;
    }
    if (rc != 0)
        return rc;
    FLOE_FORWARD_IF_ERROR(base_log_entry(t, log_entry, err));
    FLOE_FORWARD_IF_ERROR(floe_metadata_builder_finish(*b, *log_entry, m, err));
    return floe_table_metadata_size_check(t->catalog, t->ns, t->name, *m, t->metadata, err);
}

int floe_table_metadata_size_check(const floe_catalog *c, const char *ns, const char *name,
                                   const floe_table_metadata *m,
                                   const floe_table_metadata *base, floe_error *err) {
    size_t cap = floe_catalog_max_metadata_bytes(c);
    if (cap == 0)
        return 0;
    size_t size = floe_table_metadata_json_size(m, cap);
    if (size <= cap)
        return 0;
    /* past the cap: refused when it grows (the base counted as far as the new size) */
    size = floe_table_metadata_json_size(m, SIZE_MAX - 1);
    if (base && floe_table_metadata_json_size(base, size) >= size)
        return 0;
    return floe_error_set(err, FLOE_ELIMIT,
                          "table %s.%s: the new metadata would be %zu bytes of JSON%s; a "
                          "commit may write at most %zu (floe catalog serve "
                          "--max-metadata-bytes): expire snapshots, remove statistics or "
                          "properties first (docs/DESIGN.md, \"Property caps\")",
                          ns ? ns : "", name ? name : "", size,
                          base ? ", more than the table has now" : "", cap);
}

static void sleep_backoff(const floe_commit_retry *r, int attempt, int64_t start) {
    int64_t elapsed_ms = (floe_now_ns() - start) / 1000000;
    int64_t wait = backoff_ms(r, attempt);
    if (elapsed_ms + wait > r->total_timeout_ms)
        wait = r->total_timeout_ms - elapsed_ms;
    sleep_ms(wait);
}

typedef struct max_ver {
    const char *dir; /* the metadata folder listed */
    size_t dir_len;
    int64_t max;
} max_ver;

/* Highest version among the metadata files directly in the folder (not manifests, not
 * files of sub-folders). */
static int ver_cb(void *ctx, const floe_io_entry *e) {
    max_ver *m = ctx;
    const char *slash = strrchr(e->uri, '/');
    int64_t v;
    if (slash && (size_t)(slash - e->uri) == m->dir_len && !strncmp(e->uri, m->dir, m->dir_len) &&
        floe_metadata_file_version(slash + 1, &v) && v > m->max)
        m->max = v;
    return 0;
}

/* A table opened by path commits as a Hadoop table does: v<N+1>.metadata.json created
 * if absent beside the current file (N the highest version there), then the version
 * hint. Losing the create is a conflict. */
static int path_commit(floe_table *t, floe_commit_apply_fn apply, void *ctx, floe_error *err) {
    floe_commit_retry retry;
    floe_commit_retry_from(t->metadata, &retry);
    int64_t start = floe_now_ns();
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        if (attempt > 1) {
            sleep_backoff(&retry, attempt - 1, start);
            FLOE_FORWARD_IF_ERROR(floe_table_refresh(t, err));
        }
        const char *base_loc = t->metadata_location;
        floe_metadata_builder *b = NULL;
        floe_table_metadata *m = NULL;
        char *dir = NULL, *loc = NULL, *hint = NULL, *log_entry = NULL;
        rc = stage(t, apply, ctx, &b, &m, &log_entry, err);
        if (rc == FLOE_COMMIT_NOOP)
            rc = 0;
        if (rc < 0 || !m)
            goto attempt_done;
        {
            const char *slash = strrchr(base_loc, '/');
            dir = slash ? floe_strndup(base_loc, (size_t)(slash - base_loc)) : floe_strdup(".");
            if (!dir)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            max_ver mv = {dir, strlen(dir), 0};
            FLOE_CHECK(floe_io_list(floe_table_io(t), dir, ver_cb, &mv, err));
            /* a newer version than our base exists: someone committed since (building on
             * the stale base would drop their commit; with old versions deleted, naming
             * ours after the base could even bring a deleted one back) */
            int64_t base_v;
            if (floe_metadata_file_version(base_loc, &base_v) && mv.max > base_v) {
                rc = floe_error_set(err, FLOE_ECONFLICT,
                                    "%s is not the newest metadata file any more (v%" PRId64
                                    " is)", base_loc, mv.max);
                goto attempt_done;
            }
            bool gz = floe_table_metadata_wants_gzip(m);
            loc = floe_asprintf("%s/v%" PRId64 "%s.metadata.json", dir, mv.max + 1,
                                gz ? ".gz" : "");
            hint = floe_io_join(dir, "version-hint.text");
            if (!loc || !hint)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            rc = floe_table_metadata_write(floe_table_io(t), m, loc, gz, true, err);
            if (rc == FLOE_EEXISTS) {
                rc = floe_error_set(err, FLOE_ECONFLICT, "%s was created by another commit", loc);
                goto attempt_done;
            }
            if (rc < 0)
                goto attempt_done;
            /* committed: the hint names the new version (best effort, as Hadoop tables) */
            char num[32];
            int nn = snprintf(num, sizeof num, "%" PRId64, mv.max + 1);
            floe_output_options oo = {.fsync = true};
            floe_error e2;
            floe_error_clear(&e2);
            if (floe_io_write_all(floe_table_io(t), hint, num, (size_t)nn, &oo, &e2) < 0)
                floe_log(FLOE_LOG_WARN, "commit: could not update %s: %s", hint, e2.msg);
            if (!t->migrating)
                floe_table_clean_old_metadata(t, t->metadata, m, loc);
            rc = floe_table_install(t, NULL, loc, m, err);
            loc = NULL;
            m = NULL;
        }
    attempt_done:
        floe_metadata_builder_free(b);
        floe_table_metadata_free(m);
        floe_free(dir);
        floe_free(loc);
        floe_free(hint);
        floe_free(log_entry);
        if (rc != FLOE_ECONFLICT)
            return rc;
        if (attempt > retry.num_retries ||
            (floe_now_ns() - start) / 1000000 > retry.total_timeout_ms)
            return rc;
        floe_error_clear(err);
        continue;
    done:
        goto attempt_done;
    }
}

/* The commit landed but `t` could not install the new metadata (C1): the caller must load
 * the table again. Turns the install error in `err` into the unknown-state error. */
static int committed_not_taken(const floe_table *t, const char *what, floe_error *err) {
    char why[FLOE_ERROR_MSG_MAX]; /* the whole cause */
    snprintf(why, sizeof why, "%s", err ? err->msg : "?");
    return floe_error_set(err, FLOE_EUNKNOWN_STATE,
                          "table %s.%s: committed, but %s (%s); load the table again", t->ns,
                          t->name, what, why);
}

/* After an unknown outcome of a change sent to a catalog that commits changes (REST):
 * read the table again and look for the snapshot the change added. Found: committed (the
 * table now holds the catalog's metadata). Anything else stays unknown: the server may
 * still be applying it, and a change that adds no snapshot leaves no mark to look for. */
static int resolve_changes(floe_table *t, const floe_table_metadata *m, bool fail_reads) {
    const floe_snapshot *ms = floe_table_metadata_current_snapshot(m);
    if (!ms || floe_table_metadata_snapshot(t->metadata, ms->snapshot_id) || fail_reads)
        return OUTCOME_UNKNOWN;
    const int64_t want = ms->snapshot_id; /* m stays valid; t->metadata does not */
    for (int i = 0; i < 3; i++) {
        floe_error e;
        floe_error_clear(&e);
        if (floe_table_refresh(t, &e) == 0)
            return floe_table_metadata_snapshot(t->metadata, want) ? OUTCOME_APPLIED
                                                                   : OUTCOME_UNKNOWN;
        floe_log(FLOE_LOG_WARN, "commit: reading the catalog to settle an unknown state: %s",
                 e.msg);
        sleep_ms(50 << i);
    }
    return OUTCOME_UNKNOWN;
}

/* One attempt on a catalog that commits changes (REST): send the difference between the
 * table's metadata and m, and adopt the metadata the catalog answers with. Returns 0
 * (committed and installed), FLOE_ECONFLICT, FLOE_EUNKNOWN_STATE (C1: nothing is
 * deleted; this writer wrote no metadata file) or another error. */
static int commit_changes(floe_table *t, const floe_table_metadata *m, int fault,
                          bool after_apply, bool fail_resolve, floe_error *err) {
    char *base_json = NULL, *new_json = NULL, *loc = NULL, *answer = NULL;
    size_t bl = 0, nl = 0;
    floe_table_metadata *adopted = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_metadata_to_json(t->metadata, false, &base_json, &bl, err));
    FLOE_CHECK(floe_table_metadata_to_json(m, false, &new_json, &nl, err));
    if (fault && !after_apply) {
        rc = floe_error_set(err, fault, "injected swap failure");
    } else {
        rc = floe_catalog_commit_changes(t->catalog, t->ns, t->name, base_json, new_json, &loc,
                                         &answer, err);
        if (rc == 0 && fault)
            rc = floe_error_set(err, fault, "injected swap failure (after the swap)");
    }
    if (rc == FLOE_EUNKNOWN_STATE) {
        char why[FLOE_ERROR_MSG_MAX]; /* the whole cause */
        snprintf(why, sizeof why, "%s", err ? err->msg : "?");
        int outcome = resolve_changes(t, m, fail_resolve);
        if (outcome == OUTCOME_APPLIED) {
            floe_log(FLOE_LOG_INFO, "commit: unknown state settled: %s.%s committed", t->ns,
                     t->name);
            rc = 0;
            floe_error_clear(err);
        } else {
            rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                "table %s.%s: commit state unknown (%s); the catalog may or may "
                                "not have applied it: refresh before doing anything else",
                                t->ns, t->name, why);
        }
        goto done;
    }
    if (rc < 0 || !answer)
        goto done;
    rc = floe_table_metadata_parse(answer, strlen(answer), loc, &adopted, err);
    char *ptr = rc == 0 ? floe_strdup(loc) : NULL;
    if (rc == 0 && !ptr)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0) {
        rc = floe_table_install(t, ptr, loc, adopted, err);
        loc = NULL;
        adopted = NULL;
    }
    if (rc < 0) /* committed, but this object could not take it: C1 */
        rc = committed_not_taken(t, "the catalog's metadata could not be taken", err);
done:
    floe_table_metadata_free(adopted);
    floe_free(base_json);
    floe_free(new_json);
    floe_free(loc);
    floe_free(answer);
    return rc;
}

static int commit_attempts(floe_table *t, floe_commit_apply_fn apply, void *ctx,
                           priority *pr, floe_error *err) {
    floe_commit_retry retry;
    floe_commit_retry_from(t->metadata, &retry);
    const int64_t start = floe_now_ns();
    const int64_t deadline = start + retry.total_timeout_ms * 1000000;
    const bool by_create = floe_catalog_swap_by_create(t->catalog);
    pthread_mutex_t *gate = floe_catalog_commit_gate(t->catalog);
    int rc = 0;
    int losses = 0; /* swaps lost in a row */
    int waived = 0; /* attempts not counted: stopped because another had priority */
    for (int attempt = 1;; attempt++) {
        floe_metadata_builder *b = NULL;
        floe_table_metadata *m = NULL;
        char *loc = NULL, *log_entry = NULL;
        bool ours_on_disk = false; /* a file we wrote that the table does not reference */
        bool yielded = false;      /* stopped before the swap: another has priority (C5) */
        /* C5: not while another committer has priority (outside the gate: it may be a
         * thread of this process) */
        FLOE_FORWARD_IF_ERROR(prio_wait(pr, t, deadline, err));
        const int64_t attempt_start = floe_now_ns();
        /* C3, and under a gate: the base is the newest pointer no gated writer can move
         * until this attempt ends */
        if (gate)
            pthread_mutex_lock(gate);
        if (gate || attempt > 1) {
            rc = floe_table_refresh(t, err);
            if (rc < 0) {
                if (gate)
                    pthread_mutex_unlock(gate);
                return rc;
            }
        }
        const char *base_loc = t->pointer;

        /* staged */
        rc = stage(t, apply, ctx, &b, &m, &log_entry, err);
        if (rc == FLOE_COMMIT_NOOP)
            rc = 0;
        if (rc < 0 || !m)
            goto attempt_done;
        bool gzip = floe_table_metadata_wants_gzip(m);
        if (race_fn)
            race_fn(race_ctx, t);
        {
            char holder[256];
            int64_t left_ms;
            if (prio_other(pr, holder, sizeof holder, &left_ms)) {
                yielded = true;
                rc = floe_error_set(err, FLOE_ECONFLICT, "%s has priority (the table's commit "
                                    "lease): this attempt yields", holder);
                goto attempt_done;
            }
        }

        /* metadata written -> swap */
        bool after_apply = false, fail_resolve = false;
        int fault = next_fault(&after_apply, &fail_resolve);
        if (floe_catalog_commits_changes(t->catalog)) {
            /* the catalog applies the change itself and writes the metadata file */
            rc = commit_changes(t, m, fault, after_apply, fail_resolve, err);
            if (rc == 0 || (rc != FLOE_ECONFLICT && rc != FLOE_EBUSY))
                goto attempt_done;
        } else if (by_create) {
            /* (the store puts v<N+1> beside the base; the folder argument is unused) */
            FLOE_CHECK(floe_catalog_new_metadata_location(t->catalog, base_loc, base_loc, gzip,
                                                          &loc, err));
            if (fault && !after_apply) {
                rc = floe_error_set(err, fault, "injected swap failure");
            } else {
                rc = floe_table_metadata_write(floe_table_io(t), m, loc, gzip, true, err);
                if (rc == FLOE_EEXISTS) /* C2: that file is another writer's commit */
                    rc = floe_error_set(err, FLOE_ECONFLICT, "%s was created by another commit",
                                        loc);
                else if (rc == 0)
                    rc = floe_catalog_swap(t->catalog, t->ns, t->name, base_loc, loc, err);
                else
                    goto attempt_done; /* the write failed; the io layer left nothing */
                if (rc == 0 && fault)
                    rc = floe_error_set(err, fault, "injected swap failure (after the swap)");
            }
        } else {
            FLOE_CHECK(write_unique(t, m, base_loc, gzip, &loc, err));
            ours_on_disk = true;
            if (fault && !after_apply) {
                rc = floe_error_set(err, fault, "injected swap failure");
            } else {
                rc = floe_catalog_swap(t->catalog, t->ns, t->name, base_loc, loc, err);
                if (rc == 0 && fault)
                    rc = floe_error_set(err, fault, "injected swap failure (after the swap)");
            }
        }

        if (rc == FLOE_EUNKNOWN_STATE) {
            int outcome = resolve_unknown(t, base_loc, log_entry, loc, fail_resolve);
            if (outcome == OUTCOME_APPLIED) {
                floe_log(FLOE_LOG_INFO, "commit: unknown swap state settled: %s is committed", loc);
                rc = 0;
            } else if (outcome == OUTCOME_NOT_APPLIED) {
                floe_log(FLOE_LOG_INFO, "commit: unknown swap state settled: not applied");
                rc = floe_error_set(err, FLOE_ECONFLICT, "swap to %s did not happen", loc);
            } else {
                ours_on_disk = false; /* C1: keep everything */
                rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                    "table %s.%s: commit state unknown: the catalog may or may "
                                    "not point at %s; refresh before doing anything else",
                                    t->ns, t->name, loc);
                goto attempt_done;
            }
        }
        if (rc == 0) { /* committed */
            ours_on_disk = false;
            /* (the migration renames metadata-log entries: nothing leaves the log) */
            if (!t->migrating)
                floe_table_clean_old_metadata(t, t->metadata, m, loc);
            char *phys = floe_strdup(loc);
            if (!phys) {
                floe_free(loc);
                floe_table_metadata_free(m);
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            } else {
                rc = floe_table_install(t, loc, phys, m, err);
            }
            loc = NULL;
            m = NULL;
            if (rc < 0) /* committed, but this object could not take it: C1 */
                rc = committed_not_taken(t, "the new metadata could not be loaded", err);
            goto attempt_done;
        }
        if (rc != FLOE_ECONFLICT && rc != FLOE_EBUSY)
            goto attempt_done; /* definite failure */

    attempt_done:
        if (ours_on_disk && loc) /* C2: the swap definitely did not happen */
            floe_io_delete(floe_table_io(t), loc, NULL);
        floe_free(loc);
        floe_free(log_entry);
        floe_table_metadata_free(m);
        floe_metadata_builder_free(b);
        if (gate)
            pthread_mutex_unlock(gate);
        if (rc != FLOE_ECONFLICT && rc != FLOE_EBUSY)
            return rc;

        /* conflict: back off, refresh (C3), apply again */
        int64_t attempt_ms = (floe_now_ns() - attempt_start) / 1000000;
        if (attempt_ms > pr->longest_ms)
            pr->longest_ms = attempt_ms;
        int64_t elapsed_ms = (floe_now_ns() - start) / 1000000;
        if (yielded) {
            waived++; /* the wait before the next attempt is the back-off */
        } else {
            losses++;
            prio_take(pr, t, losses);
        }
        int counted = attempt - waived;
        if (counted > retry.num_retries || elapsed_ms >= retry.total_timeout_ms)
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "table %s.%s: commit gave up after %d attempt%s (%" PRId64
                                  " ms): other commits kept winning",
                                  t->ns, t->name, attempt, attempt == 1 ? "" : "s", elapsed_ms);
        if (!yielded && !pr->held) {
            int64_t wait = backoff_ms(&retry, counted);
            if (elapsed_ms + wait > retry.total_timeout_ms)
                wait = retry.total_timeout_ms - elapsed_ms;
            sleep_ms(wait);
        }
        floe_error_clear(err);
        continue;
    done: /* FLOE_CHECK failures before the swap: nothing on disk is ours to keep */
        goto attempt_done;
    }
}

int floe_table_commit(floe_table *t, floe_commit_apply_fn apply, void *ctx, floe_error *err) {
    if (t->migrate && !t->migrating)
        FLOE_FORWARD_IF_ERROR(floe_table_migrate(t, err));
    if (!t->catalog)
        return path_commit(t, apply, ctx, err);
    /* before apply writes anything: a catalog that cannot commit says so now */
    FLOE_FORWARD_IF_ERROR(floe_catalog_check_commit(t->catalog, err));
    priority pr;
    prio_init(&pr, t);
    int rc = commit_attempts(t, apply, ctx, &pr, err);
    prio_release(&pr);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * several tables at once
 * ------------------------------------------------------------------------------------- */

typedef struct staged_table {
    floe_metadata_builder *b;
    floe_table_metadata *m; /* NULL: nothing to commit on this table */
    char *loc;              /* our new metadata file, once written */
    char *log_entry;
} staged_table;

static void staged_free(staged_table *st, size_t n, floe_table *const *ts, bool delete_ours) {
    for (size_t i = 0; i < n; i++) {
        if (delete_ours && st[i].loc) /* C2: the swaps definitely did not happen */
            floe_io_delete(floe_table_io(ts[i]), st[i].loc, NULL);
        floe_metadata_builder_free(st[i].b);
        floe_table_metadata_free(st[i].m);
        floe_free(st[i].loc);
        floe_free(st[i].log_entry);
        memset(&st[i], 0, sizeof st[i]);
    }
}

static int tables_check(floe_table *const *ts, size_t n, floe_sql **db, floe_error *err) {
    floe_catalog *c = ts[0]->catalog;
    *db = c ? floe_catalog_sql(c) : NULL;
    if (!*db)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "a commit to several tables at once needs a SQL catalog");
    for (size_t i = 0; i < n; i++)
        if (ts[i]->catalog != c)
            return floe_error_set(err, FLOE_EINVALID,
                                  "table %zu of a commit to several tables is not of the same "
                                  "catalog handle", i);
    /* hashed, not pairwise: a commit may name many tables */
    const char **nss = floe_calloc(n, sizeof *nss), **names = floe_calloc(n, sizeof *names);
    size_t dup = n;
    int rc = nss && names ? 0 : FLOE_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        nss[i] = ts[i]->ns;
        names[i] = ts[i]->name;
    }
    if (rc == 0)
        rc = floe_pairs_first_repeat(nss, names, n, &dup, NULL);
    floe_free(nss);
    floe_free(names);
    if (rc < 0)
        return floe_error_set(err, rc, "a commit to %zu tables: %s", n, floe_strerror(rc));
    if (dup < n)
        return floe_error_set(err, FLOE_EINVALID, "table %s.%s is named twice in one commit",
                              ts[dup]->ns, ts[dup]->name);
    if (floe_sql_in_transaction(*db))
        return floe_error_set(err, FLOE_EINVALID,
                              "a transaction is already open on the catalog's connection");
    return 0;
}

/* One attempt: stage every table, write the new metadata files, swap every pointer in one
 * transaction, install. On return st holds what is left to delete or free. */
static int tables_attempt(floe_table *const *ts, size_t n, floe_commit_apply_fn apply,
                          void *const *ctxs, floe_commit_wanted_fn wanted, void *wanted_ctx,
                          floe_sql *db, staged_table *st, size_t *failed, bool *keep_files,
                          floe_error *err) {
    size_t first = SIZE_MAX; /* the first table with a change */
    for (size_t i = 0; i < n; i++) {
        int rc = stage(ts[i], apply, ctxs[i], &st[i].b, &st[i].m, &st[i].log_entry, err);
        if (rc == FLOE_COMMIT_NOOP)
            continue;
        if (rc < 0) {
            if (rc != FLOE_ECONFLICT && failed)
                *failed = i;
            return rc;
        }
        if (race_fn)
            race_fn(race_ctx, ts[i]);
        if (first == SIZE_MAX)
            first = i;
    }
    if (first == SIZE_MAX)
        return 0; /* nothing to commit anywhere */
    for (size_t i = first; i < n; i++) {
        if (!st[i].m)
            continue;
        /* each write syncs a file: a commit to many tables asks between them */
        if (wanted && !wanted(wanted_ctx))
            return floe_error_set(err, FLOE_ECANCELLED, "commit to %zu tables: abandoned before "
                                  "the swaps; nothing was committed", n);
        FLOE_FORWARD_IF_ERROR(write_unique(ts[i], st[i].m, ts[i]->pointer,
                                           floe_table_metadata_wants_gzip(st[i].m), &st[i].loc,
                                           err));
    }
    floe_catalog *c = ts[first]->catalog;
    FLOE_FORWARD_IF_ERROR(floe_sql_begin(db, err));
    int rc = 0;
    for (size_t i = first; i < n && rc == 0; i++)
        if (st[i].m)
            rc = floe_catalog_swap(c, ts[i]->ns, ts[i]->name, ts[i]->pointer, st[i].loc, err);
    if (rc < 0) {
        floe_sql_rollback(db); /* inside the transaction nothing was applied */
        if (rc == FLOE_EUNKNOWN_STATE) {
            if (err)
                err->code = FLOE_EIO;
            rc = FLOE_EIO;
        }
        return rc;
    }
    rc = floe_sql_commit(db, err);
    if (rc == FLOE_EUNKNOWN_STATE) {
        /* the swaps committed together or not at all: the first table tells */
        int outcome = resolve_unknown(ts[first], ts[first]->pointer, st[first].log_entry,
                                      st[first].loc, false);
        if (outcome == OUTCOME_APPLIED) {
            rc = 0;
        } else if (outcome == OUTCOME_NOT_APPLIED) {
            rc = floe_error_set(err, FLOE_ECONFLICT, "the swaps did not happen");
        } else {
            *keep_files = true; /* C1 */
            return floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                  "commit to %zu tables: state unknown: the catalog may or may "
                                  "not point at the new metadata (%s.%s: %s); refresh before "
                                  "doing anything else",
                                  n, ts[first]->ns, ts[first]->name, st[first].loc);
        }
    }
    if (rc < 0)
        return rc;
    *keep_files = true; /* committed: the files are the tables' now */
    for (size_t i = first; i < n; i++) {
        if (!st[i].m)
            continue;
        floe_table_clean_old_metadata(ts[i], ts[i]->metadata, st[i].m, st[i].loc);
        char *phys = floe_strdup(st[i].loc);
        int irc = phys ? floe_table_install(ts[i], st[i].loc, phys, st[i].m, err)
                       : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        st[i].loc = NULL;
        st[i].m = NULL;
        if (irc < 0 && rc == 0) /* committed, but this object could not take it: C1 */
            rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                "table %s.%s: committed, but the new metadata could not be "
                                "loaded; load the table again", ts[i]->ns, ts[i]->name);
    }
    return rc;
}

int floe_tables_commit(floe_table *const *ts, size_t n, floe_commit_apply_fn apply,
                       void *const *ctxs, size_t *failed, floe_error *err) {
    return floe_tables_commit_while(ts, n, apply, ctxs, NULL, NULL, failed, err);
}

int floe_tables_commit_while(floe_table *const *ts, size_t n, floe_commit_apply_fn apply,
                             void *const *ctxs, floe_commit_wanted_fn wanted, void *wanted_ctx,
                             size_t *failed, floe_error *err) {
    if (failed)
        *failed = SIZE_MAX;
    if (n == 0)
        return 0;
    floe_sql *db = NULL;
    FLOE_FORWARD_IF_ERROR(tables_check(ts, n, &db, err));
    for (size_t i = 0; i < n; i++)
        if (ts[i]->migrate && !ts[i]->migrating)
            FLOE_FORWARD_IF_ERROR(floe_table_migrate(ts[i], err));
    staged_table *st = floe_calloc(n, sizeof *st);
    if (!st)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_commit_retry retry;
    floe_commit_retry_from(ts[0]->metadata, &retry);
    const int64_t start = floe_now_ns();
    pthread_mutex_t *gate = floe_catalog_commit_gate(ts[0]->catalog);
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        if (gate)
            pthread_mutex_lock(gate);
        rc = 0;
        for (size_t i = 0; i < n && rc == 0 && (gate || attempt > 1); i++)
            rc = floe_table_refresh(ts[i], err);
        bool keep_files = false;
        if (rc == 0)
            rc = tables_attempt(ts, n, apply, ctxs, wanted, wanted_ctx, db, st, failed,
                                &keep_files, err);
        staged_free(st, n, ts, !keep_files);
        if (gate)
            pthread_mutex_unlock(gate);
        if (rc != FLOE_ECONFLICT && rc != FLOE_EBUSY)
            break;
        int64_t elapsed_ms = (floe_now_ns() - start) / 1000000;
        if (attempt > retry.num_retries || elapsed_ms >= retry.total_timeout_ms) {
            rc = floe_error_set(err, FLOE_ECONFLICT,
                                "commit to %zu tables gave up after %d attempt%s (%" PRId64
                                " ms): other commits kept winning",
                                n, attempt, attempt == 1 ? "" : "s", elapsed_ms);
            break;
        }
        sleep_backoff(&retry, attempt, start);
        floe_error_clear(err);
    }
    floe_free(st);
    return rc;
}
