/*
 * compactor.c - landing compaction and its Iceberg commit (DESIGN.md "The four paths" 3,
 * I2, I3, I4).
 *
 * Per partition, when its pending landing bytes reach compact_bytes or its oldest pending
 * file is compact_age old, the compactor
 *   1. leases the partition's pending files (state compacting, with a lease deadline);
 *   2. settles: looks the leased ids up in the table's history (floe.landing-ids of every
 *      snapshot). Ids found are marked committed with the snapshot holding them and leave
 *      the job: a crash between a commit and the index update left them leased, possibly
 *      together with newer files no commit has consumed;
 *   3. converts the rest with the `floe convert` pipeline (same shredder, quarantine for
 *      what no longer fits the schema) into Parquet files under the table's data dir,
 *      routed by the table's default spec into <data>/<partition path>/;
 *   4. hands the data files and the landing ids to the commit hook (default:
 *      floe_server_commit_iceberg, one append whose every attempt re-checks the ids).
 * Steps 1-3 run partition by partition; step 4 takes every partition of the table that
 * the round claimed and converted together, so the partitions due at one moment become
 * one snapshot (compact_table: a batch ends early at MAX_JOB_FILES landing files or
 * MAX_JOB_BYTES, or when the table's default spec changes). Each partition's lease is
 * held, and renewed, until the batch's commit is over.
 *
 * Outcomes (see floe_server_commit_fn), for every partition of the batch alike:
 *   committed / already committed -> landing files committed (+ snapshot id)
 *   conflict / failure            -> new data files deleted; ids the table holds now (a
 *                                    no-op: another worker was first) settled committed;
 *                                    the rest given back (pending) if still ours
 *   unknown                       -> nothing deleted; the landing files stay leased until a
 *                                    restart (or the lease's end) and step 2 settles them
 *
 * Why each landing file reaches the table once (I2). The landing index is in the catalog
 * database, and the default hook's pointer swap marks the job's landing files committed
 * in the swap's own transaction (swap_hook) - but only files still compacting under this
 * worker's lease (compare-and-set on state and lease_owner); any other file rolls the
 * swap back. So a file is committed by at most one snapshot, and once committed the
 * index says so whatever later happens to that snapshot (expiry): no file goes from
 * committed back to pending (releases are compare-and-sets on the releasing worker's
 * own lease, settles only ever mark committed). The table's history (floe.landing-ids,
 * checked before converting and on every commit attempt) is the second line: it catches
 * custom hooks that commit without the swap hook, and files an earlier release's index
 * left leased after a crash.
 *
 * State changes of a landing file (rows of landing_files) and who makes them:
 *   -> pending              landing.c register_file / seal_batch (INSERT)
 *   pending -> compacting   lease_take, compare-and-set (still pending, or its file lease
 *                           ran out by the database's clock), lease_owner = this worker
 *   compacting -> committed swap_hook (compare-and-set on owner), lease_settle (the table
 *                           holds it: any state but deleted), lease_settle owned_only
 *                           (all its records went to the quarantine)
 *   compacting -> pending   lease_release (compare-and-set on owner), release_predecessor
 *                           (owner is this node's earlier process)
 *   pending|compacting -> missing   landing.c at start (the file is gone)
 *   committed -> deleted    floe maintain's landing lifecycle (compare-and-set on state)
 *
 * Parquet settings: the table's write.* properties (floe_table_parquet_options), except
 * that landing output keeps floe's own defaults where the table sets nothing: Snappy, and
 * a target file size of the server's target_file_size (128 MB) - which, when configured
 * for the table or in [defaults], wins over write.target-file-size-bytes.
 *
 * Scale-out. Any number of processes (floe serve --role all|compactor, floe work) compact
 * the landing files of one shared index, whichever node wrote them. A partition is
 * compacted only under its lease (floe/lease.h: job "landing/<partition>" of the table,
 * claimed with SELECT ... FOR UPDATE SKIP LOCKED among the due partitions), renewed every
 * ttl/3 by a renewer thread while the job runs; a worker that dies loses it after the ttl
 * (floe_server_config.compact_lease_ms, default 60 s; at once when its node starts again) and the files
 * it had leased (state compacting, lease_until_ms = the same ttl, by the database's clock)
 * are taken by the next holder, which settles them against the history first. Two
 * holders in a row (a stalled worker whose lease ran out) cannot commit a file twice: the
 * swap hook's compare-and-set on the file's lease decides.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/keyset.h"
#include "common/scratch.h"
#include "floe/append.h"
#include "floe/convert.h"
#include "floe/input.h"
#include "floe/io.h"
#include "floe/quarantine.h"
#include "floe/table_metadata.h"
#include "server_internal.h"

#define DEFAULT_LEASE_MS (60LL * 1000)
#define MAX_JOB_FILES 2000
#define MAX_JOB_BYTES (4LL << 30)
#define SRV_MAX_HELD 256 /* partitions of one table per round, leases held at once */
#define STAGE_THREADS 8  /* landing files copied at once */
#define STAGE_CHUNK ((size_t)1 << 20) /* bytes of one ranged GET while staging */
#define SUMMARY_LANDING_IDS "floe.landing-ids"
#define SUMMARY_NODE "floe.node"
#define SUMMARY_PARTITION "floe.partition"

/* ---- landing ids and the table's history ---------------------------------------------- */

/* The ids of one job, hashed, with the snapshot found holding each. */
typedef struct id_set {
    const char *const *ids;  /* borrowed */
    size_t n;
    int64_t *snap;           /* per id: the snapshot holding it, 0 = none seen */
    uint32_t *slots;         /* open addressing: id index + 1, 0 = empty */
    size_t mask;
} id_set;

static void id_set_free(id_set *s) {
    floe_free(s->snap);
    floe_free(s->slots);
    memset(s, 0, sizeof *s);
}

static int id_set_init(id_set *s, const char *const *ids, size_t n, floe_error *err) {
    memset(s, 0, sizeof *s);
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    s->ids = ids;
    s->n = n;
    s->mask = cap - 1;
    s->snap = floe_calloc(n ? n : 1, sizeof *s->snap);
    s->slots = floe_calloc(cap, sizeof *s->slots);
    if (!s->snap || !s->slots) {
        id_set_free(s);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = floe_fnv1a(ids[i], strlen(ids[i]), FLOE_FNV1A_SEED) & s->mask;
        while (s->slots[k])
            k = (k + 1) & s->mask;
        s->slots[k] = (uint32_t)i + 1;
    }
    return 0;
}

static long id_set_find(const id_set *s, const char *p, size_t n) {
    size_t k = floe_fnv1a(p, n, FLOE_FNV1A_SEED) & s->mask;
    for (; s->slots[k]; k = (k + 1) & s->mask) {
        const char *id = s->ids[s->slots[k] - 1];
        if (strlen(id) == n && !memcmp(id, p, n))
            return (long)s->slots[k] - 1;
    }
    return -1;
}

/* Look every snapshot of m (all of them, not only the main lineage: a branch commit
 * consumed its ids too) up for the set's ids; snap[] is rewritten. Returns how many ids
 * were found. The summary is table metadata, i.e. input: tokens are only compared. */
static size_t history_find(id_set *s, const floe_table_metadata *m) {
    size_t found = 0;
    memset(s->snap, 0, (s->n ? s->n : 1) * sizeof *s->snap);
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *sn = &m->snapshots[i];
        const char *v = NULL;
        for (size_t k = 0; k < sn->n_summary && !v; k++)
            if (sn->summary[k].key && !strcmp(sn->summary[k].key, SUMMARY_LANDING_IDS))
                v = sn->summary[k].value;
        while (v && *v) {
            const char *e = strchr(v, ',');
            size_t len = e ? (size_t)(e - v) : strlen(v);
            long at = id_set_find(s, v, len);
            if (at >= 0 && s->snap[at] == 0) {
                s->snap[at] = sn->snapshot_id ? sn->snapshot_id : -1;
                found++;
            }
            v = e ? e + 1 : NULL;
        }
    }
    return found;
}

/* The compactor's state: its lease stores, its name as a lease owner, the partition it
 * works on (renewed by the renewer thread). */
typedef struct srv_comp {
    floe_lease_store *store;   /* the compactor thread's */
    floe_lease_store *rstore;  /* the renewer's: one connection per thread */
    char owner[128];
    int64_t ttl_ms;
    pthread_t thr;
    bool thr_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    char ns[256], tname[256], job[256]; /* job: the key's, for claiming */
    char held[SRV_MAX_HELD][256];       /* mu: the partition leases held now, renewed */
    size_t nheld;
    _Atomic bool lost;                  /* one of them was lost since nheld was last 0 */
    _Atomic uint64_t claimed, skipped;
} srv_comp;

/* ---- the default commit hook: an Iceberg append ---------------------------------------- */

typedef struct id_check {
    id_set set;
    long hit;                /* an id found by the last check, -1 = none */
} id_check;

/* floe_append_check_fn: no id of the job may be in any snapshot of the attempt's base. */
static int ids_unconsumed(void *ctx, const floe_table_metadata *base, floe_error *err) {
    (void)err;
    id_check *ck = ctx;
    ck->hit = -1;
    if (history_find(&ck->set, base) == 0)
        return 0;
    for (size_t i = 0; i < ck->set.n && ck->hit < 0; i++)
        if (ck->set.snap[i])
            ck->hit = (long)i;
    return FLOE_COMMIT_NOOP;
}

int floe_server_commit_iceberg(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                               floe_error *err) {
    floe_server *s = ctx;
    floe_table *ft = NULL;
    floe_append *a = NULL;
    floe_append_result res;
    memset(&res, 0, sizeof res);
    floe_buf ids;
    floe_buf_init(&ids, 0);
    id_check ck = {.hit = -1};
    char *ns = NULL;
    bool locked = false;
    int rc = 0;
    const char *dot = strrchr(c->table, '.');
    if (!dot || dot == c->table || !dot[1])
        FLOE_FAIL(err, FLOE_EINVALID, "commit: bad table name %s", c->table);
    if (!(ns = floe_strndup(c->table, (size_t)(dot - c->table))))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nlanding; i++)
        if (floe_buf_printf(&ids, "%s%s", i ? "," : "", c->landing_ids[i]) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (floe_buf_append_byte(&ids, 0) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(id_set_init(&ck.set, c->landing_ids, c->nlanding, err));

    pthread_mutex_lock(&s->cat_mu);
    locked = true;
    FLOE_CHECK(floe_table_load(s->catalog, ns, dot + 1, &ft, err));
    const floe_metadata_spec *spec =
        floe_table_metadata_default_spec(floe_table_metadata_get(ft));
    if (!spec || spec->spec_id != c->spec_id)
        FLOE_FAIL(err, FLOE_ECONFLICT, "table %s: the default partition spec is now %d, the "
                  "files follow spec %d: convert again", c->table, spec ? spec->spec_id : -1,
                  (int)c->spec_id);
    FLOE_CHECK(floe_append_new(ft, &a, err));
    for (size_t i = 0; i < c->nfiles; i++)
        FLOE_CHECK(floe_append_add_file(a, &c->files[i], err));
    FLOE_CHECK(floe_append_set_summary(a, SUMMARY_LANDING_IDS, (const char *)ids.data, err));
    FLOE_CHECK(floe_append_set_summary(a, SUMMARY_NODE, s->node, err));
    FLOE_CHECK(floe_append_set_summary(a, SUMMARY_PARTITION, c->partition, err));
    floe_append_set_check(a, ids_unconsumed, &ck);
    s->swap_job = c; /* the swap hook marks c's landing files committed */
    s->swap_append = a;
    rc = floe_append_commit(a, &res, err);
    s->swap_job = NULL;
    s->swap_append = NULL;
    if (rc == FLOE_ECANCELLED) { /* the swap hook: the files are no longer this job's */
        char why[FLOE_ERROR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err ? err->msg : "landing files taken over");
        rc = floe_error_set(err, FLOE_ECONFLICT, "table %s: %s", c->table, why);
    }
    if (rc < 0)
        goto done;
    if (res.noop) {
        /* Someone else (a worker whose lease on these files ran out, then took them again)
         * committed some of them since the history check. Which ones exactly is settled by
         * the next round's history check; nothing of this job is committed. */
        rc = floe_error_set(err, FLOE_ECONFLICT, "table %s: landing file %s is already in "
                            "snapshot %lld: nothing committed", c->table,
                            ck.hit >= 0 ? c->landing_ids[ck.hit] : "?",
                            ck.hit >= 0 ? (long long)ck.set.snap[ck.hit] : 0LL);
        goto done;
    }
    c->retries = res.attempts > 1 ? res.attempts - 1 : 0;
    *snapshot_id = res.snapshot_id;
done:
    floe_append_free(a);
    floe_table_close(ft);
    if (locked)
        pthread_mutex_unlock(&s->cat_mu);
    floe_append_result_reset(&res);
    id_set_free(&ck.set);
    floe_buf_free(&ids);
    floe_free(ns);
    return rc;
}

/* floe_catalog_swap_hook_fn: inside the swap's transaction, on the catalog's connection
 * (cat_mu is held by the committer), record the landing files of the commit in progress
 * as committed - each only if it is still compacting under this worker's lease. A file
 * that is not (another worker took it over and committed it, or released it) fails the
 * hook, which rolls the swap back: the landing index, not the table's history (which
 * expiry shortens), is what keeps a landing file from being committed twice. Swaps of
 * other tables (schema evolution) pass. */
static int swap_hook(void *ctx, floe_sql *db, const char *ns, const char *name,
                     const char *expected, const char *new_location, floe_error *err) {
    (void)expected;
    (void)new_location;
    floe_server *s = ctx;
    const floe_landing_commit *c = s->swap_job;
    if (!c)
        return 0;
    size_t nl = strlen(ns);
    if (strncmp(c->table, ns, nl) != 0 || c->table[nl] != '.' || strcmp(c->table + nl + 1, name))
        return 0;
    return srv_index_mark_committed(db, c->landing_ids, c->nlanding, s->comp->owner,
                                    floe_append_snapshot_id(s->swap_append), err);
}

/* ---- partition leases ------------------------------------------------------------------ */


static void comp_key(srv_comp *c, floe_lease_key *k, const char *catalog) {
    k->catalog_name = catalog;
    k->table_namespace = c->ns;
    k->table_name = c->tname;
    k->job = c->job;
}

static void *renewer_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-renew");
    srv_comp *c = s->comp;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wait = c->ttl_ms / 3;
        ts.tv_sec += (time_t)(wait / 1000);
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        if (c->stop)
            continue;
        /* renewing under mu: no job can end (and release) in the middle */
        for (size_t i = 0; i < c->nheld; i++) {
            floe_lease_key k;
            comp_key(c, &k, floe_catalog_name(s->catalog));
            k.job = c->held[i];
            bool held = true;
            floe_error e;
            floe_error_clear(&e);
            int rc = floe_lease_renew(c->rstore, &k, c->owner, c->ttl_ms, &held, &e);
            if (rc < 0)
                floe_log(FLOE_LOG_WARN, "serve: renewing the lease of %s.%s %s: %s", c->ns,
                         c->tname, c->held[i], e.msg);
            else if (!held) {
                floe_log(FLOE_LOG_ERROR, "serve: lost the lease of %s.%s %s", c->ns,
                         c->tname, c->held[i]);
                atomic_store(&c->lost, true);
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* The lease job of a partition: "landing/<partition>". */
static void job_name(const char *part, char out[256]) {
    if (strlen(part) + 8 < 255) {
        snprintf(out, 256, "landing/%s", part);
    } else { /* over the lease store's name limit: a hash names it */
        uint64_t h = 14695981039346656037ull;
        for (const char *p = part; *p; p++)
            h = (h ^ (uint8_t)*p) * 1099511628211ull;
        snprintf(out, 256, "landing/#%016llx", (unsigned long long)h);
    }
}

/* Split "ns.table" (at the last dot) and name the partition's job into c. */
static int comp_set_key(srv_comp *c, const char *tbl, const char *part) {
    const char *dot = strrchr(tbl, '.');
    if (!dot || dot == tbl || (size_t)(dot - tbl) >= sizeof c->ns ||
        strlen(dot + 1) >= sizeof c->tname)
        return FLOE_EINVALID;
    memcpy(c->ns, tbl, (size_t)(dot - tbl));
    c->ns[dot - tbl] = 0;
    snprintf(c->tname, sizeof c->tname, "%s", dot + 1);
    job_name(part, c->job);
    return 0;
}

/* ---- the landing files of a job --------------------------------------------------------- */

typedef struct lease {
    int64_t *ids;            /* index rows */
    char **landing_ids;      /* "<node>-<seq>" */
    char **uris;
    size_t n, cap;
    int64_t bytes;
} lease;

static void lease_free(lease *l) {
    for (size_t i = 0; i < l->n; i++) {
        floe_free(l->landing_ids[i]);
        floe_free(l->uris[i]);
    }
    floe_free(l->ids);
    floe_free(l->landing_ids);
    floe_free(l->uris);
    memset(l, 0, sizeof *l);
}

/* Row: id, node, seq, uri, bytes. */
static int lease_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    lease *l = ctx;
    if (n < 5 || !cols[0] || !cols[1] || !cols[2] || !cols[3])
        return floe_error_set(err, FLOE_ECORRUPT, "landing index: bad row");
    if (l->n >= MAX_JOB_FILES || l->bytes >= MAX_JOB_BYTES)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        int64_t *ni = floe_realloc(l->ids, cap * sizeof *ni);
        if (ni)
            l->ids = ni;
        char **nl = floe_realloc(l->landing_ids, cap * sizeof *nl);
        if (nl)
            l->landing_ids = nl;
        char **nu = floe_realloc(l->uris, cap * sizeof *nu);
        if (nu)
            l->uris = nu;
        if (!ni || !nl || !nu)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        l->cap = cap;
    }
    l->ids[l->n] = srv_atoi64(cols[0]);
    l->landing_ids[l->n] = floe_asprintf("%s-%010lld", cols[1], (long long)srv_atoi64(cols[2]));
    l->uris[l->n] = floe_strdup(cols[3]);
    l->n++;
    l->bytes += srv_atoi64(cols[4]);
    if (!l->landing_ids[l->n - 1] || !l->uris[l->n - 1])
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* Drop the files whose per_file entry is non-zero from the lease (order kept). */
static void lease_drop(lease *l, const int64_t *per_file) {
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (per_file[i]) {
            floe_free(l->landing_ids[i]);
            floe_free(l->uris[i]);
            continue;
        }
        l->ids[k] = l->ids[i];
        l->landing_ids[k] = l->landing_ids[i];
        l->uris[k] = l->uris[i];
        k++;
    }
    l->n = k;
}

/* Take the partition's pending files (and those whose file lease ran out) for ttl, under
 * this worker's name (lease_owner). The caller holds the partition's lease, so nobody
 * else should take files of it meanwhile; each row still changes only while it is free
 * (compare-and-set), and a row that is not is left out of the job. */
static int lease_take(floe_server *s, const char *tbl, const char *part, int64_t ttl_ms,
                      lease *out, floe_error *err) {
    srv_landing *L = &s->land;
    char p_ttl[24], p_id[24];
    const char *sel[] = {tbl, part};
    srv_i64(p_ttl, ttl_ms);
    lease cand = {0};
    int64_t *took = NULL;
    pthread_mutex_lock(&L->idx_mu);
    int rc = floe_sql_begin(L->db, err);
    if (rc == 0)
        rc = floe_sql_query(L->db, L->q[SQ_LEASE_SELECT], sel, 2, lease_row, &cand, err);
    if (rc == 0 && cand.n && !(took = floe_calloc(cand.n, sizeof *took)))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < cand.n && rc == 0; i++) {
        const char *up[] = {p_ttl, s->comp->owner, srv_i64(p_id, cand.ids[i])};
        int64_t changed = 0;
        rc = floe_sql_exec(L->db, L->q[SQ_LEASE_TAKE], up, 3, &changed, err);
        took[i] = changed == 1 ? 0 : 1; /* lease_drop removes the non-zero ones */
    }
    if (rc == 0)
        rc = floe_sql_commit(L->db, err);
    else
        floe_sql_rollback(L->db);
    pthread_mutex_unlock(&L->idx_mu);
    if (rc == FLOE_EUNKNOWN_STATE)
        rc = FLOE_EIO; /* files leased or not: the lease runs out either way */
    if (rc == 0) {
        if (cand.n)
            lease_drop(&cand, took);
        *out = cand;
        memset(&cand, 0, sizeof cand);
    }
    lease_free(&cand);
    floe_free(took);
    return rc;
}

/* The lease's files are in the table: committed, with the snapshot holding each
 * (per_file[i], or snapshot for all; 0 = not known). Truthful whoever holds the file
 * now, so it needs no lease (only a file already deleted by the lifecycle is left
 * alone); a snapshot id already recorded is kept. With per_file, files whose entry is 0
 * are not touched. With owned_only, a file changes only while it is still compacting
 * under this worker's lease (for "committed" that rests on this job's own judgement, not
 * on the table). */
static int lease_settle(floe_server *s, const lease *l, int64_t snapshot,
                        const int64_t *per_file, bool owned_only, floe_error *err) {
    srv_landing *L = &s->land;
    pthread_mutex_lock(&L->idx_mu);
    int rc = floe_sql_begin(L->db, err);
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        int64_t snap = per_file ? per_file[i] : snapshot;
        if (per_file && !snap)
            continue;
        char p_id[24], p_snap[24];
        const char *params[] = {snap > 0 ? srv_i64(p_snap, snap) : NULL,
                                srv_i64(p_id, l->ids[i]), s->comp->owner};
        rc = floe_sql_exec(L->db, owned_only
                           ? "UPDATE landing_files SET state='committed', lease_until_ms=NULL, "
                             "lease_owner=NULL, snapshot_id=COALESCE(snapshot_id, "
                             "CAST(? AS BIGINT)) WHERE id=? AND state='compacting' AND "
                             "lease_owner=?"
                           : "UPDATE landing_files SET state='committed', lease_until_ms=NULL, "
                             "lease_owner=NULL, snapshot_id=COALESCE(snapshot_id, "
                             "CAST(? AS BIGINT)) WHERE id=? AND state<>'deleted'",
                           params, owned_only ? 3 : 2, NULL, err);
    }
    if (rc == 0)
        rc = floe_sql_commit(L->db, err);
    else
        floe_sql_rollback(L->db);
    pthread_mutex_unlock(&L->idx_mu);
    return rc;
}

/* Give the lease's files back (pending): only those still compacting under this
 * worker's lease, so a release never undoes another worker's lease or commit - a
 * committed file never goes back to pending. */
static int lease_release(floe_server *s, const lease *l, floe_error *err) {
    srv_landing *L = &s->land;
    pthread_mutex_lock(&L->idx_mu);
    int rc = floe_sql_begin(L->db, err);
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        char p_id[24];
        const char *params[] = {srv_i64(p_id, l->ids[i]), s->comp->owner};
        rc = floe_sql_exec(L->db, "UPDATE landing_files SET state='pending', "
                           "lease_until_ms=NULL, lease_owner=NULL WHERE id=? AND "
                           "state='compacting' AND lease_owner=?", params, 2, NULL, err);
    }
    if (rc == 0)
        rc = floe_sql_commit(L->db, err);
    else
        floe_sql_rollback(L->db);
    pthread_mutex_unlock(&L->idx_mu);
    return rc;
}

/* ---- one partition ------------------------------------------------------------------- */

void srv_job_table_free(srv_job_table *jt) {
    floe_schema_free(jt->schema);
    floe_partition_spec_free(jt->spec);
    floe_metrics_config_free(jt->metrics);
    floe_free(jt->rec_dir);
    floe_free(jt->phys_dir);
    floe_table_confinement_free(jt->conf);
    memset(jt, 0, sizeof *jt);
}

/* The target file size the server's configuration sets explicitly, or -1. */
int64_t srv_configured_target(floe_server *s, const char *tbl) {
    int64_t v = -1;
    pthread_mutex_lock(&s->cfg_mu);
    for (size_t i = 0; i < s->cfg.ntables; i++)
        if (s->cfg.tables[i].name && !strcmp(s->cfg.tables[i].name, tbl))
            v = s->cfg.tables[i].target_file_size;
    if (v < 0)
        v = s->cfg.defaults.target_file_size;
    pthread_mutex_unlock(&s->cfg_mu);
    return v;
}

int srv_job_table_read(const srv_table *t, floe_table *ft, int64_t target, srv_job_table *jt,
                       floe_error *err) {
    int rc = 0;
    const floe_table_metadata *m = floe_table_metadata_get(ft);
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
    if (!ms || !sp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table %s: no current schema or default spec", t->name);
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &jt->schema, err));
    FLOE_CHECK(floe_partition_spec_parse_json(sp->json, strlen(sp->json), jt->schema,
                                              &jt->spec, err));
    FLOE_CHECK(floe_metrics_config_new(m->properties, m->n_properties, jt->schema, NULL,
                                       &jt->metrics, err));
    FLOE_CHECK(floe_table_parquet_options(m, &jt->write, err));
    if (!floe_table_metadata_property(m, "write.parquet.compression-codec")) {
        jt->write.codec = FLOE_CODEC_SNAPPY;
        jt->write.codec_level = 0;
    }
    if (target > 0 || !floe_table_metadata_property(m, "write.target-file-size-bytes"))
        jt->write.target_file_size = target > 0 ? target : 128LL << 20;
    FLOE_CHECK(floe_table_data_dir(ft, &jt->rec_dir, err));
    FLOE_CHECK(floe_table_resolve_path(ft, jt->rec_dir, &jt->phys_dir, err));
    FLOE_CHECK(floe_table_confinement_open(ft, &jt->conf, err));
done:
    if (rc < 0)
        srv_job_table_free(jt);
    return rc;
}

/* Load the table, settle the lease against its history (settled[i] = snapshot holding
 * file i, or 0) and read what the conversion needs. */
static int job_table_load(floe_server *s, const srv_table *t, const lease *l,
                          int64_t *settled, srv_job_table *jt, floe_error *err) {
    floe_table *ft = NULL;
    id_set set = {0};
    int rc = 0;
    int64_t target = srv_configured_target(s, t->name); /* cfg_mu is never held with cat_mu */
    pthread_mutex_lock(&s->cat_mu);
    FLOE_CHECK(floe_table_load(s->catalog, t->ns, t->tname, &ft, err));
    const floe_table_metadata *m = floe_table_metadata_get(ft);
    FLOE_CHECK(id_set_init(&set, (const char *const *)l->landing_ids, l->n, err));
    if (history_find(&set, m))
        memcpy(settled, set.snap, l->n * sizeof *settled);
    FLOE_CHECK(srv_job_table_read(t, ft, target, jt, err));
done:
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    id_set_free(&set);
    return rc;
}

int srv_files_on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                      const floe_value *partition, size_t npartition, floe_error *err) {
    srv_files *fc = ctx;
    /* first, so a failure below still deletes the file */
    FLOE_FORWARD_IF_ERROR(floe_strlist_push(&fc->uris, uri, err));
    if (fc->n == fc->cap) {
        size_t nc = fc->cap ? fc->cap * 2 : 8;
        floe_data_file *nf = floe_realloc(fc->files, nc * sizeof *nf);
        if (!nf)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        fc->files = nf;
        fc->cap = nc;
    }
    floe_data_file df;
    memset(&df, 0, sizeof df);
    FLOE_FORWARD_IF_ERROR(floe_data_file_from_parquet(fi, fc->jt->metrics, &fc->arena, &df,
                                                      err));
    size_t pl = strlen(fc->jt->phys_dir);
    const char *rec = uri;
    if (!strncmp(uri, fc->jt->phys_dir, pl) && (uri[pl] == '/' || uri[pl] == 0)) {
        char *r = floe_asprintf("%s%s", fc->jt->rec_dir, uri + pl);
        rec = r ? floe_arena_strdup(&fc->arena, r) : NULL;
        floe_free(r);
    }
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    df.content = FLOE_CONTENT_DATA;
    df.file_path = rec;
    df.partition = partition; /* borrowed for the call: the copy below keeps it */
    df.npartition = npartition;
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(&df, &fc->arena, &fc->files[fc->n], err));
    fc->n++;
    return 0;
}

void srv_files_init(srv_files *fc, const srv_job_table *jt) {
    memset(fc, 0, sizeof *fc);
    floe_arena_init(&fc->arena, 64 * 1024);
    fc->jt = jt;
}

void srv_files_free(srv_files *fc) {
    floe_free(fc->files);
    floe_strlist_free(&fc->uris);
    floe_arena_reset(&fc->arena);
}

void srv_files_delete(floe_io *io, srv_files *fc) {
    floe_table_confinement *conf = fc->jt->conf;
    if (!conf || fc->uris.n == 0)
        return; /* no table read: nothing of it to delete */
    int64_t kept = floe_table_confinement_kept(conf);
    floe_table_confinement_delete(conf, io, (const char *const *)fc->uris.items, fc->uris.n,
                                  "serve");
    if (floe_table_confinement_kept(conf) > kept)
        floe_log(FLOE_LOG_WARN, "serve: %s", floe_table_confinement_report(conf));
}

/* The monotonic clock in ms, for the debug log's timings. */
static int64_t mono_ms(void) { return floe_now_ns() / 1000000; }

/* Local copies of remote landing files (the NDJSON reader reads local files): each
 * object is streamed into <TMPDIR>/floe-compact-XXXXXX/<i>; local files are used in
 * place. paths[i] is what the conversion reads. The folder is removed when the job ends,
 * whatever its outcome (staged_free); while it exists its process holds a flock on it, so
 * a folder nobody holds is a killed process's, which staging_sweep removes. */
typedef struct staged {
    char dir[512];            /* "" = nothing staged */
    int dir_fd;               /* the folder, flock'ed; valid while dir[0] (-1: none) */
    char **paths;
    size_t n;
} staged;

#define STAGING_PREFIX "floe-compact-"

static const char *staging_root(const char *tmp) {
    return tmp && *tmp && strlen(tmp) < 400 ? tmp : "/tmp";
}

static void staged_free(staged *st) {
    for (size_t i = 0; i < st->n; i++) {
        if (st->dir[0] && st->paths[i] && !strncmp(st->paths[i], st->dir, strlen(st->dir)))
            unlink(st->paths[i]);
        floe_free(st->paths[i]);
    }
    if (st->dir[0]) {
        rmdir(st->dir);
        if (st->dir_fd >= 0)
            close(st->dir_fd);
    }
    floe_free(st->paths);
    memset(st, 0, sizeof *st);
}

/* Remove the staging folders under tmp that no live process holds: those of processes
 * killed while staging (SIGKILL, a crash, the machine's end), whose files nothing else
 * removes. A folder is taken only when its lock can be had and it is over a minute old
 * (one made a moment ago may not be locked yet); only its own files (<i>.ndjson.zst) are
 * deleted, so a folder holding anything else stays. */
static void staging_sweep(const char *tmp) {
    const char *root = staging_root(tmp);
    DIR *d = opendir(root);
    int64_t removed = 0;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, STAGING_PREFIX, strlen(STAGING_PREFIX)) ||
            strlen(e->d_name) != strlen(STAGING_PREFIX) + 6)
            continue;
        int fd = floe_scratch_take_stale(dirfd(d), e->d_name, 60);
        if (fd >= 0) {
            int lfd = dup(fd);
            DIR *sub = lfd >= 0 ? fdopendir(lfd) : NULL;
            if (!sub && lfd >= 0)
                close(lfd);
            struct dirent *f;
            while (sub && (f = readdir(sub))) {
                const char *p = f->d_name;
                size_t digits = strspn(p, "0123456789");
                if (digits > 0 && !strcmp(p + digits, ".ndjson.zst"))
                    unlinkat(fd, p, 0);
            }
            if (sub)
                closedir(sub);
            if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
                removed++;
            close(fd);
        }
    }
    closedir(d);
    if (removed)
        floe_log(FLOE_LOG_INFO, "serve: removed %lld staging folder%s of killed processes "
                 "under %s", (long long)removed, removed == 1 ? "" : "s", root);
}

/* Copy one remote landing file to path: a sequential open (its first GET brings the
 * first window and the size, no HEAD) and then the rest in reads of up to STAGE_CHUNK,
 * each one ranged GET. */
static int stage_one(floe_io *io, const char *uri, const char *path, uint8_t *buf,
                     floe_error *err) {
    floe_input *in = NULL;
    int fd = -1, rc = 0;
    FLOE_CHECK(floe_input_open_sequential(io, uri, &in, err));
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        FLOE_FAIL(err, FLOE_EIO, "%s: %s", path, strerror(errno));
    int64_t size = floe_input_size(in);
    for (int64_t off = 0; off < size;) {
        size_t n = size - off < (int64_t)STAGE_CHUNK ? (size_t)(size - off) : STAGE_CHUNK;
        FLOE_CHECK(floe_input_read_at(in, off, buf, n, err));
        for (size_t w = 0; w < n;) {
            ssize_t k = write(fd, buf + w, n - w);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                FLOE_FAIL(err, FLOE_EIO, "%s: %s", path, strerror(errno));
            w += (size_t)k;
        }
        off += (int64_t)n;
    }
done:
    if (fd >= 0)
        close(fd);
    floe_input_close(in);
    return rc;
}

/* The copies of one job, STAGE_THREADS at a time: each thread takes the next remote file
 * until none is left or one failed (the first failure is the job's). */
typedef struct stage_run {
    floe_io *io;
    char *const *uris;
    staged *st;
    const bool *remote;
    pthread_mutex_t mu;
    size_t next;     /* mu */
    int rc;          /* mu: the first failure */
    floe_error err;  /* mu */
} stage_run;

static void *stage_thread(void *arg) {
    stage_run *r = arg;
    uint8_t *buf = floe_malloc(STAGE_CHUNK);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t i = r->next;
        while (i < r->st->n && !r->remote[i])
            i++;
        r->next = i + 1;
        bool go = i < r->st->n && r->rc == 0;
        if (go && !buf)
            r->rc = floe_error_set(&r->err, FLOE_ENOMEM, "out of memory");
        go = go && buf;
        pthread_mutex_unlock(&r->mu);
        if (!go)
            break;
        floe_error e;
        floe_error_clear(&e);
        if (stage_one(r->io, r->uris[i], r->st->paths[i], buf, &e) < 0) {
            pthread_mutex_lock(&r->mu);
            if (r->rc == 0) {
                r->rc = e.code;
                r->err = e;
            }
            pthread_mutex_unlock(&r->mu);
            break;
        }
    }
    floe_free(buf);
    return NULL;
}

/* Local paths of the landing files uris: local ones as they are, remote ones copied into a
 * fresh folder under tmp (NULL: /tmp), up to STAGE_THREADS at once (each copy waits on
 * the object store's latency more than it works). */
static int stage_inputs(floe_io *io, const char *tmp, char *const *uris, size_t n, staged *st,
                        floe_error *err) {
    int rc = 0;
    size_t nremote = 0;
    bool *remote = NULL;
    memset(st, 0, sizeof *st);
    if (!(st->paths = floe_calloc(n ? n : 1, sizeof *st->paths)) ||
        !(remote = floe_calloc(n ? n : 1, sizeof *remote))) {
        floe_free(remote);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    st->n = n;
    for (size_t i = 0; i < n; i++) {
        char *local = floe_io_local_path(uris[i]);
        if (local) {
            st->paths[i] = local;
            continue;
        }
        if (!st->dir[0]) {
            snprintf(st->dir, sizeof st->dir, "%s/" STAGING_PREFIX "XXXXXX", staging_root(tmp));
            if (!mkdtemp(st->dir)) {
                int e = errno;
                st->dir[0] = 0;
                FLOE_FAIL(err, FLOE_EIO, "staging landing files: mkdtemp: %s", strerror(e));
            }
            /* held until staged_free: staging_sweep passes over a held folder */
            if ((st->dir_fd = floe_scratch_hold(st->dir)) < 0)
                FLOE_FAIL(err, FLOE_EIO, "staging landing files: %s: %s", st->dir,
                          strerror(errno));
        }
        if (!(st->paths[i] = floe_asprintf("%s/%zu.ndjson.zst", st->dir, i)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        remote[i] = true;
        nremote++;
    }
    if (nremote == 0)
        goto done;
    stage_run r = {.io = io, .uris = uris, .st = st, .remote = remote};
    floe_error_clear(&r.err);
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th[STAGE_THREADS];
    size_t nth = 0, want = nremote < STAGE_THREADS ? nremote : STAGE_THREADS;
    for (; nth + 1 < want; nth++)
        if (pthread_create(&th[nth], NULL, stage_thread, &r) != 0)
            break;
    stage_thread(&r); /* this thread copies too */
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&r.mu);
    if (r.rc < 0) {
        if (err)
            *err = r.err;
        rc = r.rc;
    }
done:
    floe_free(remote);
    return rc;
}

/* Mark the files whose settled[i] (the snapshot holding file i) is non-zero committed
 * and drop them from the lease. */
static int settle_found(floe_server *s, const char *tbl, lease *l, const int64_t *settled,
                        floe_error *err) {
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += settled[i] != 0;
    if (n == 0)
        return 0;
    FLOE_FORWARD_IF_ERROR(lease_settle(s, l, 0, settled, false, err));
    for (size_t i = 0; i < l->n; i++)
        if (settled[i])
            floe_log(FLOE_LOG_INFO, "serve: %s: landing file %s is already in snapshot %lld: "
                     "marked committed", tbl, l->landing_ids[i], (long long)settled[i]);
    atomic_fetch_add(&s->m.settled, n);
    atomic_fetch_add(&s->m.landing_committed, n);
    lease_drop(l, settled);
    return 0;
}

/* Look the lease's ids up in the table's current history and settle those found. */
static int settle_from_history(floe_server *s, const srv_table *t, lease *l,
                               floe_error *err) {
    floe_table *ft = NULL;
    id_set set = {0};
    int64_t *found = NULL;
    int rc = 0;
    if (l->n == 0)
        return 0;
    if (!(found = floe_calloc(l->n, sizeof *found)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_lock(&s->cat_mu);
    rc = floe_table_load(s->catalog, t->ns, t->tname, &ft, err);
    if (rc == 0)
        rc = id_set_init(&set, (const char *const *)l->landing_ids, l->n, err);
    if (rc == 0 && history_find(&set, floe_table_metadata_get(ft)))
        memcpy(found, set.snap, l->n * sizeof *found);
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    if (rc == 0)
        rc = settle_found(s, t->name, l, found, err);
    id_set_free(&set);
    floe_free(found);
    return rc;
}

/* ---- partitions, and their commit in one snapshot ------------------------------------- */

/* One partition of a commit: the landing files leased and what converting them wrote.
 * Allocated one by one, since fc points at jt. */
typedef struct part_job {
    const char *part;         /* borrowed from the round's list */
    char job[256];            /* its lease's job name (job_name) */
    lease l;
    srv_job_table jt;
    srv_files fc;
    int64_t records;          /* rows in fc's files */
    bool release;             /* on the way out: the leased files go back to pending */
    /* prepare_stage's part (steps 1-2 and the staging of step 3), on a thread of its own
     * while the partition before converts (prep_start) */
    staged stg;               /* the landing files' local copies */
    bool convert;             /* prepared, with files left to convert (in stg) */
    bool bg;                  /* prep is running or not joined yet */
    pthread_t prep;
    floe_server *s;           /* what prep_main needs */
    srv_table *t;
    const char *tbl, *gone;
    int prep_rc;              /* prepare_stage's outcome; its error in prep_err */
    floe_error prep_err;
    int64_t lease_ms, stage_ms; /* for the debug log */
} part_job;

static void part_job_free(part_job *j) {
    if (!j)
        return;
    if (j->bg)
        pthread_join(j->prep, NULL);
    staged_free(&j->stg);
    srv_files_free(&j->fc);
    srv_job_table_free(&j->jt);
    lease_free(&j->l);
    floe_free(j);
}

/* ---- a table dropped while served ---------------------------------------------------- */

/* An oversized line of a landing file, streamed whole to the quarantine. */
typedef struct dropped_ctx {
    floe_quarantine *q;
    const char *reason;
    floe_error *err;
    int rc;
} dropped_ctx;

static int dropped_oversize(void *ctx, const char *source, int64_t line, int64_t offset,
                            const uint8_t *p, size_t n, bool first, bool last,
                            int64_t total_len) {
    (void)total_len;
    dropped_ctx *d = ctx;
    if (d->rc == 0 && first)
        d->rc = floe_quarantine_stream_begin(d->q, source, line, offset, d->reason, d->err);
    if (d->rc == 0)
        d->rc = floe_quarantine_stream_piece(d->q, p, n, d->err);
    if (d->rc == 0 && last)
        d->rc = floe_quarantine_stream_end(d->q, d->err);
    return d->rc;
}

/* Every record of the landing file at path (source: its uri) into q with reason. */
static int quarantine_file(floe_server *s, const char *path, const char *source,
                           dropped_ctx *d, int64_t *records, floe_error *err) {
    floe_line_reader_options ro = {.max_record = (size_t)s->cfg.max_record,
                                   .oversize = dropped_oversize, .oversize_ctx = d};
    floe_line_reader *r = NULL;
    floe_chunk ch;
    memset(&ch, 0, sizeof ch);
    floe_buf_init(&ch.data, 0);
    int rc = floe_line_reader_open(path, &ro, &r, err);
    while (rc == 0 && (rc = floe_line_reader_next(r, &ch, err)) == 1) {
        rc = 0;
        int64_t line = ch.first_line, off = ch.first_offset;
        for (size_t i = 0; i < ch.len && rc == 0;) {
            const uint8_t *nl = memchr(ch.bytes + i, '\n', ch.len - i);
            size_t end = nl ? (size_t)(nl - ch.bytes) : ch.len;
            if (end > i) {
                rc = floe_quarantine_add(d->q, source, line, off, d->reason, ch.bytes + i,
                                         end - i, err);
                (*records)++;
            }
            off += (int64_t)(end + 1 - i);
            line++;
            i = end + 1;
        }
    }
    if (rc == 0 && d->rc < 0)
        rc = d->rc;
    floe_line_reader_close(r);
    floe_buf_free(&ch.data);
    return rc < 0 ? rc : 0;
}

/* The job's table is gone from the catalog and will not be created again: every record of
 * its leased landing files goes to the quarantine with reason, and the files are settled
 * (as when every record was rejected), so the events are neither lost nor retried for
 * ever. */
static int quarantine_dropped(floe_server *s, const char *tbl, part_job *j,
                              const char *reason, floe_error *err) {
    lease *l = &j->l;
    staged stg = {0};
    floe_quarantine *q = NULL;
    char *uri = NULL;
    int64_t records = 0;
    char uuid[37];
    floe_uuid4(uuid);
    uuid[8] = 0;
    int rc = 0;
    if (!(uri = floe_asprintf("%s/%s/dropped-%s-%s.ndjson", s->quarantine_root, tbl, s->node,
                              uuid)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(stage_inputs(s->cfg.io, s->cfg.staging_dir, l->uris, l->n, &stg, err));
    FLOE_CHECK(floe_quarantine_open(s->cfg.io, uri, &q, err));
    dropped_ctx d = {.q = q, .reason = reason, .err = err};
    for (size_t i = 0; i < l->n; i++)
        FLOE_CHECK(quarantine_file(s, stg.paths[i], l->uris[i], &d, &records, err));
    rc = floe_quarantine_close(q, err);
    q = NULL;
    if (rc < 0)
        goto done;
    /* published: from here a crash leaves the records quarantined and the files leased,
     * and the next job quarantines them again (twice in the quarantine, never lost) */
    FLOE_CHECK(lease_settle(s, l, 0, NULL, true, err));
    j->release = false;
    atomic_fetch_add(&s->m.landing_committed, l->n);
    floe_log(FLOE_LOG_WARN, "serve: %s: %lld record%s of %zu landing file%s moved to the "
             "quarantine %s: %s", tbl, (long long)records, records == 1 ? "" : "s", l->n,
             l->n == 1 ? "" : "s", uri, reason);
done:
    if (q) {
        floe_error e;
        floe_error_clear(&e);
        FLOE_IGNORE_RESULT(floe_quarantine_close(q, &e));
    }
    staged_free(&stg);
    floe_free(uri);
    return rc;
}

/* Steps 1-2 and the staging of step 3 for one partition whose lease this worker holds:
 * lease its landing files, settle those the history holds, copy the rest to local files.
 * Afterwards j->convert says whether there is something to convert (prepare_convert);
 * otherwise the job is over (nothing pending, everything settled, or every record
 * quarantined). On failure j->release says whether the leased files still need giving
 * back. A table gone from the catalog is created again or its records quarantined
 * (srv_table_recreate, quarantine_dropped); t == NULL: the table is gone and this node
 * does not serve it, gone says why. Runs on the compactor's thread or on a prep thread
 * (prep_start) while the compactor converts another partition: what it touches of the
 * server is under its locks (the landing index under idx_mu, the catalog under cat_mu). */
static int prepare_stage(floe_server *s, srv_table *t, const char *tbl, const char *gone,
                         part_job *j, floe_error *err) {
    lease *l = &j->l;
    int64_t *settled = NULL;
    int rc = 0;
    int64_t t0 = mono_ms(), t1 = 0;
    FLOE_CHECK(lease_take(s, tbl, j->part, s->comp->ttl_ms, l, err));
    if (l->n == 0)
        goto done;
    j->release = true;
    if (!t) {
        rc = quarantine_dropped(s, tbl, j, gone, err);
        goto done;
    }
    if (!(settled = floe_calloc(l->n, sizeof *settled)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    rc = job_table_load(s, t, l, settled, &j->jt, err);
    if (rc == FLOE_ENOTFOUND) {
        /* dropped? (a missing metadata file is not: the catalog still names the table) */
        floe_error e;
        floe_error_clear(&e);
        rc = srv_table_recreate(s, t, &e);
        if (rc == 0) {
            rc = job_table_load(s, t, l, settled, &j->jt, err);
        } else if (rc == FLOE_ENOTFOUND) {
            rc = quarantine_dropped(s, tbl, j, e.msg, err);
            goto done;
        } else {
            *err = e;
        }
    }
    if (rc < 0)
        goto done;

    /* step 2: what the history already holds is done */
    size_t nsettled = 0;
    for (size_t i = 0; i < l->n; i++)
        nsettled += settled[i] != 0;
    if (nsettled) {
        FLOE_CHECK(settle_found(s, t->name, l, settled, err));
        if (l->n == 0) {
            j->release = false;
            goto done;
        }
    }
    t1 = mono_ms();
    FLOE_CHECK(stage_inputs(s->cfg.io, s->cfg.staging_dir, l->uris, l->n, &j->stg, err));
    j->convert = true;
    j->lease_ms = t1 - t0;
    j->stage_ms = mono_ms() - t1;
done:
    if (rc < 0)
        staged_free(&j->stg);
    floe_free(settled);
    return rc;
}

/* The rest of step 3 for a partition prepare_stage staged: convert its landing files with
 * the `floe convert` pipeline into Parquet files under the table's data dir. Afterwards
 * j->fc.n > 0 when there is something to commit. On failure the new data files are
 * deleted. */
static int prepare_convert(floe_server *s, srv_table *t, const char *tbl, part_job *j,
                           floe_error *err) {
    lease *l = &j->l;
    char *quarantine = NULL, *prefix = NULL;
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    char uuid[37];
    floe_uuid4(uuid);
    uuid[8] = 0;
    quarantine = floe_asprintf("%s/%s/compact-%s-%s.ndjson", s->quarantine_root, t->name,
                               s->node, uuid);
    prefix = floe_asprintf("%s-%s", l->landing_ids[0], uuid);
    if (!quarantine || !prefix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_convert_options co;
    floe_convert_options_init(&co);
    co.io = s->cfg.io;
    co.schema = j->jt.schema;
    co.write = j->jt.write;
    /* One thread, so ingest keeps the other core; two while posts are held for the
     * backlog (landing.c): ingest is idle then, and one thread would leave a core so; two
     * in a compactor-only node (floe work), which has no ingest to leave a core to. */
    int64_t cap = s->cfg.max_pending_bytes;
    co.threads = s->role == FLOE_SERVER_ROLE_COMPACTOR ||
                 (cap > 0 && atomic_load(&s->land.pending_bytes) > cap) ? 2 : 1;
    co.shred.max_record = (size_t)s->cfg.max_record;
    /* A field the table does not have (any more: dropped or renamed since the post was
     * accepted) is quarantined with its record, not dropped, unless the mode says to
     * ignore unknown fields. */
    co.shred.unknown = srv_table_mode(s, t) == FLOE_SCHEMA_IGNORE ? FLOE_UNKNOWN_IGNORE
                                                                  : FLOE_UNKNOWN_REJECT;
    co.out_dir = j->jt.phys_dir;
    co.file_prefix = prefix;
    co.spec = j->jt.spec->nfields ? j->jt.spec : NULL;
    co.quarantine_uri = quarantine;
    co.on_file = srv_files_on_file;
    co.on_file_ctx = &j->fc;
    int64_t t0 = mono_ms();
    rc = floe_convert((const char *const *)j->stg.paths, l->n, &co, &res, err);
    floe_log(FLOE_LOG_DEBUG, "serve: %s/%s: %zu landing files (%lld bytes): leased and "
             "settled in %lld ms, staged in %lld ms, converted in %lld ms", tbl, j->part, l->n,
             (long long)l->bytes, (long long)j->lease_ms, (long long)j->stage_ms,
             (long long)(mono_ms() - t0));
    if (rc < 0) {
        srv_files_delete(s->cfg.io, &j->fc);
        goto done;
    }
    j->records = res.records_out;
    if (j->fc.n == 0) {
        /* every record went to the quarantine: nothing to commit */
        j->release = false;
        rc = lease_settle(s, l, 0, NULL, true, err);
        if (rc == 0)
            atomic_fetch_add(&s->m.landing_committed, l->n);
    }
done:
    staged_free(&j->stg); /* the staged copies are read: gone at once, not at the commit */
    floe_convert_result_free(&res);
    floe_free(quarantine);
    floe_free(prefix);
    return rc;
}

static void *prep_main(void *arg) {
    part_job *j = arg;
    srv_thread_name("floe-prep");
    j->prep_rc = prepare_stage(j->s, j->t, j->tbl, j->gone, j, &j->prep_err);
    return NULL;
}

/* prepare_stage for j on a thread of its own (prep_wait joins it): the next partition's
 * lease, settling and staging wait on the database and the object store while the
 * compactor's thread converts the one before. Without a thread, at once. */
static void prep_start(floe_server *s, srv_table *t, const char *tbl, const char *gone,
                       part_job *j) {
    j->s = s;
    j->t = t;
    j->tbl = tbl;
    j->gone = gone;
    floe_error_clear(&j->prep_err);
    if (pthread_create(&j->prep, NULL, prep_main, j) == 0)
        j->bg = true;
    else
        j->prep_rc = prepare_stage(s, t, tbl, gone, j, &j->prep_err);
}

/* prep_start's outcome (its error into err). */
static int prep_wait(part_job *j, floe_error *err) {
    if (j->bg) {
        pthread_join(j->prep, NULL);
        j->bg = false;
    }
    if (j->prep_rc < 0 && err)
        *err = j->prep_err;
    return j->prep_rc;
}

/* "a,b,c" for the snapshot summary: the partitions of a commit, for people reading the
 * history (the landing ids are what counts); past about 1000 bytes, "... and N more". */
static char *parts_label(part_job *const *jobs, size_t n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    size_t i = 0;
    for (; i < n && b.len < 1000; i++)
        if (floe_buf_printf(&b, "%s%s", i ? "," : "", jobs[i]->part) < 0)
            goto oom;
    if (i < n && floe_buf_printf(&b, " and %zu more", n - i) < 0)
        goto oom;
    if (floe_buf_append_byte(&b, 0) < 0)
        goto oom;
    return (char *)b.data;
oom:
    floe_buf_free(&b);
    return NULL;
}

/* Step 4: commit the converted files of jobs[0..n) - partitions of one table, written
 * with one partition spec - in one snapshot, unless a partition's lease was lost
 * meanwhile (another worker may be converting the same files: its commit or ours would
 * find them no longer ours). Outcomes as in the header, for every job alike. */
static int commit_jobs(floe_server *s, const srv_table *t, part_job *const *jobs, size_t n,
                       floe_error *err) {
    size_t nfiles = 0, nlanding = 0;
    int64_t records = 0;
    for (size_t i = 0; i < n; i++) {
        nfiles += jobs[i]->fc.n;
        nlanding += jobs[i]->l.n;
        records += jobs[i]->records;
    }
    floe_data_file *files = floe_calloc(nfiles ? nfiles : 1, sizeof *files);
    const char **ids = floe_calloc(nlanding ? nlanding : 1, sizeof *ids);
    char *label = parts_label(jobs, n);
    int rc = 0;
    if (!files || !ids || !label) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto failed;
    }
    size_t kf = 0, kl = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(files + kf, jobs[i]->fc.files, jobs[i]->fc.n * sizeof *files);
        kf += jobs[i]->fc.n;
        for (size_t k = 0; k < jobs[i]->l.n; k++)
            ids[kl++] = jobs[i]->l.landing_ids[k];
    }
    if (atomic_load(&s->comp->lost)) {
        rc = floe_error_set(err, FLOE_ECONFLICT, "%s: the lease of a partition (%s) was lost",
                            t->name, label);
        goto failed;
    }
    const part_job *last = jobs[n - 1]; /* the newest schema of the batch */
    floe_landing_commit c = {
        .table = t->name, .partition = label, .schema = last->jt.schema,
        .spec_id = last->jt.spec->spec_id, .files = files, .nfiles = nfiles,
        .landing_ids = ids, .nlanding = nlanding, .records = records,
    };
    floe_server_commit_fn hook = s->hooks.commit ? s->hooks.commit : floe_server_commit_iceberg;
    void *hctx = s->hooks.commit ? s->hooks.commit_ctx : s;
    int64_t snapshot = 0;
    rc = hook(hctx, &c, &snapshot, err);
    atomic_fetch_add(&s->m.retries, (uint64_t)(c.retries > 0 ? c.retries : 0));
    if (rc == 0 || rc == FLOE_COMMIT_NOOP) {
        if (rc == FLOE_COMMIT_NOOP)
            floe_log(FLOE_LOG_INFO, "serve: %s (%s): landing files already committed in "
                     "snapshot %lld", t->name, label, (long long)snapshot);
        atomic_fetch_add(&s->m.commits, 1);
        atomic_fetch_add(&s->m.landing_committed, nlanding);
        if (rc == 0)
            atomic_fetch_add(&s->m.events_committed, (uint64_t)records);
        int noop = rc;
        rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (noop)
                srv_files_delete(s->cfg.io, &jobs[i]->fc);
            /* from here on a failure leaves the files leased: step 2 settles them later
             * (the default hook's swap has marked them committed already) */
            jobs[i]->release = false;
            if (rc == 0)
                rc = lease_settle(s, &jobs[i]->l, snapshot, NULL, false, err);
        }
        goto done;
    }
    atomic_fetch_add(&s->m.commit_failures, 1);
    if (rc == FLOE_EUNKNOWN_STATE) {
        /* I3: nothing may be deleted; after a restart or the lease's end, step 2 tells */
        for (size_t i = 0; i < n; i++)
            jobs[i]->release = false;
        goto done;
    }
    if (rc == FLOE_ECONFLICT)
        atomic_fetch_add(&s->m.conflicts, 1);
failed:
    /* Nothing was committed. Ids that are in the table now (a no-op: another worker
     * committed them first) are settled as committed at once; the release gives back
     * only the rest, and only what is still ours. */
    for (size_t i = 0; i < n; i++) {
        srv_files_delete(s->cfg.io, &jobs[i]->fc);
        floe_error e2;
        floe_error_clear(&e2);
        if (settle_from_history(s, t, &jobs[i]->l, &e2) < 0)
            floe_log(FLOE_LOG_WARN, "serve: %s/%s: settling after the failed commit: %s (the "
                     "next round does)", t->name, jobs[i]->part, e2.msg);
    }
done:
    floe_free(files);
    floe_free(ids);
    floe_free(label);
    return rc;
}

typedef struct due_ctx {
    floe_server *s;
    bool force;
    bool pressure;          /* the backlog is over half of max_pending_bytes */
    int64_t over;           /* bytes to take off the backlog under pressure */
    floe_strlist ptbls, pparts; /* not due: candidates under pressure, with their bytes */
    int64_t *pbytes;
    size_t npcap;
    int64_t lag;
    floe_strlist tbls, parts;
} due_ctx;

/* Row: tbl, part, SUM(bytes), age of the oldest file (ms, by the database's clock). */
static int due_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    due_ctx *d = ctx;
    if (n < 4 || !cols[0] || !cols[1])
        return 0;
    int64_t bytes = srv_atoi64(cols[2]), age = srv_atoi64(cols[3]);
    if (age > d->lag)
        d->lag = age;
    if (d->force || bytes >= srv_table_setting(d->s, cols[0], SET_COMPACT_BYTES) ||
        age >= srv_table_setting(d->s, cols[0], SET_COMPACT_AGE)) {
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->tbls, cols[0], err));
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->parts, cols[1], err));
        d->over -= bytes;
    } else if (d->pressure) {
        if (d->ptbls.n == d->npcap) {
            size_t nc = d->npcap ? d->npcap * 2 : 16;
            int64_t *nb = floe_realloc(d->pbytes, nc * sizeof *nb);
            if (!nb)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            d->pbytes = nb;
            d->npcap = nc;
        }
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->ptbls, cols[0], err));
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->pparts, cols[1], err));
        d->pbytes[d->ptbls.n - 1] = bytes;
    }
    return 0;
}

/* Under pressure (posts are about to wait, or waiting, for the backlog: landing.c), the
 * due partitions may not be enough to bring the backlog down, for instance when many
 * partitions each hold a little less than compact_bytes. Then the largest of the others
 * become due too, largest first, until what is due covers the excess over half the cap:
 * fewer, larger jobs than compacting everything, and no wait for compact_age. */
static int add_pressure_jobs(due_ctx *d, floe_error *err) {
    while (d->over > 0 && d->ptbls.n > 0) {
        size_t best = 0;
        for (size_t i = 1; i < d->ptbls.n; i++)
            if (d->pbytes[i] > d->pbytes[best])
                best = i;
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->tbls, d->ptbls.items[best], err));
        FLOE_FORWARD_IF_ERROR(floe_strlist_push(&d->parts, d->pparts.items[best], err));
        d->over -= d->pbytes[best];
        size_t last = d->ptbls.n - 1;
        floe_free(d->ptbls.items[best]);
        floe_free(d->pparts.items[best]);
        d->ptbls.items[best] = d->ptbls.items[last];
        d->pparts.items[best] = d->pparts.items[last];
        d->pbytes[best] = d->pbytes[last];
        d->ptbls.n--;
        d->pparts.n--;
    }
    return 0;
}

/* A partition's job failed: log it, list it for the flush's answer, keep the first error. */
static void job_failed(const char *tbl, const char *part, const floe_error *e,
                       floe_strlist *fails, int *rc, floe_error *err) {
    floe_log(FLOE_LOG_ERROR, "serve: compacting %s/%s: %s", tbl, part, e->msg);
    if (fails) {
        char *f = floe_asprintf("%s\t%s\t%s", tbl, part, e->msg);
        if (f)
            FLOE_IGNORE_RESULT(floe_strlist_push(fails, f, NULL));
        floe_free(f);
    }
    if (*rc == 0)
        *rc = floe_error_set(err, e->code, "compacting %s/%s: %s", tbl, part, e->msg);
}

/* End a partition's job: give back the landing files it still leases, release the
 * partition's lease (under mu: the renewer cannot be renewing it meanwhile), free it. */
static void finish_job(floe_server *s, part_job *j, bool ok) {
    srv_comp *c = s->comp;
    floe_error e;
    floe_error_clear(&e);
    if (j->release && j->l.n && lease_release(s, &j->l, &e) < 0)
        floe_log(FLOE_LOG_ERROR, "serve: %s.%s/%s: %s (the lease runs out instead)", c->ns,
                 c->tname, j->part, e.msg);
    if (ok && j->l.n)
        atomic_fetch_add(&s->m.compactions, 1);
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->nheld; i++)
        if (!strcmp(c->held[i], j->job)) {
            memmove(c->held[i], c->held[c->nheld - 1], sizeof c->held[i]);
            c->nheld--;
            break;
        }
    floe_lease_key k;
    comp_key(c, &k, floe_catalog_name(s->catalog));
    k.job = j->job;
    floe_error_clear(&e);
    if (floe_lease_release(c->store, &k, c->owner, &e) < 0)
        floe_log(FLOE_LOG_WARN, "serve: releasing the lease of %s.%s/%s: %s (it runs out)",
                 c->ns, c->tname, j->part, e.msg);
    pthread_mutex_unlock(&c->mu);
    part_job_free(j);
}

/* Commit the batch (commit_jobs) and end its jobs. */
static void commit_batch(floe_server *s, const srv_table *t, part_job **batch, size_t *nb,
                         floe_strlist *fails, int *rc, floe_error *err) {
    floe_error e;
    floe_error_clear(&e);
    int64_t t0 = mono_ms();
    int crc = commit_jobs(s, t, batch, *nb, &e);
    floe_log(FLOE_LOG_DEBUG, "serve: %s: commit of %zu partitions in %lld ms", t->name, *nb,
             (long long)(mono_ms() - t0));
    for (size_t i = 0; i < *nb; i++) {
        if (crc < 0)
            job_failed(t->name, batch[i]->part, &e, fails, rc, err);
        finish_job(s, batch[i], crc >= 0);
        batch[i] = NULL;
    }
    *nb = 0;
    srv_landing_refresh_metrics(s); /* the backlog shrank: waiting posts may go on */
}

/* Claim one of the due partitions jobs[0..*n) (SKIP LOCKED among them) for a new job,
 * taken out of the lists: 1 with *out, 0 when every one left is someone else's, < 0 on
 * failure (the first failure of the round into *rc and err). */
static int claim_one(floe_server *s, const char *tbl, char **jobs, const char **cand_parts,
                     size_t *n, part_job **out, int *rc, floe_error *err) {
    srv_comp *c = s->comp;
    floe_error e;
    floe_error_clear(&e);
    part_job *j = floe_calloc(1, sizeof *j);
    if (!j) {
        if (*rc == 0)
            *rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return -1;
    }
    floe_lease_key k;
    comp_key(c, &k, floe_catalog_name(s->catalog));
    size_t which = *n;
    if (floe_lease_acquire_any(c->store, &k, (const char *const *)jobs, *n, c->owner,
                               c->ttl_ms, &which, &e) < 0) {
        floe_log(FLOE_LOG_ERROR, "serve: claiming a partition of %s: %s", tbl, e.msg);
        if (*rc == 0)
            *rc = floe_error_set(err, e.code, "claiming a partition of %s: %s", tbl, e.msg);
        floe_free(j);
        return -1;
    }
    if (which >= *n) {
        atomic_fetch_add(&c->skipped, *n);
        floe_free(j);
        return 0; /* every due partition is someone else's now */
    }
    atomic_fetch_add(&c->claimed, 1);
    j->part = cand_parts[which];
    snprintf(j->job, sizeof j->job, "%s", jobs[which]);
    srv_files_init(&j->fc, &j->jt);
    pthread_mutex_lock(&c->mu);
    if (c->nheld == 0)
        atomic_store(&c->lost, false);
    memcpy(c->held[c->nheld++], j->job, sizeof j->job);
    pthread_mutex_unlock(&c->mu);
    floe_free(jobs[which]);
    jobs[which] = jobs[*n - 1];
    cand_parts[which] = cand_parts[*n - 1];
    (*n)--;
    *out = j;
    return 1;
}

/* Compact the due partitions of one table: claim them one by one, each under its lease
 * (SKIP LOCKED among the candidates), and convert each; commit what the claimed ones
 * wrote in one snapshot - several when a batch reaches MAX_JOB_FILES landing files or
 * MAX_JOB_BYTES, or the default spec changes in between - then release their leases. */
static int compact_table(floe_server *s, const char *tbl, const char *const *parts,
                         size_t nparts, floe_strlist *fails, floe_error *err) {
    srv_comp *c = s->comp;
    int rc = 0;
    srv_table *t = NULL;
    char **jobs = floe_calloc(nparts ? nparts : 1, sizeof *jobs);
    const char **cand_parts = floe_calloc(nparts ? nparts : 1, sizeof *cand_parts);
    part_job **batch = floe_calloc(nparts ? nparts : 1, sizeof *batch);
    size_t n = 0, nb = 0, bfiles = 0;
    int64_t bbytes = 0;
    if (!jobs || !cand_parts || !batch) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto done;
    }
    pthread_mutex_lock(&c->mu);
    int krc = comp_set_key(c, tbl, "");
    pthread_mutex_unlock(&c->mu);
    if (krc < 0)
        goto done;
    floe_error te;
    floe_error_clear(&te);
    /* one this node serves is taken as it is, dropped or not (prepare_stage sees) */
    if (!(t = srv_table_find(s, tbl)) && srv_table_get(s, tbl, NULL, 0, &t, &te) < 0) {
        bool gone = false;
        if (te.code == FLOE_ENOTFOUND && srv_table_gone(s, tbl, &gone, &te) == 0 && gone) {
            floe_error_set(&te, FLOE_ENOTFOUND, "table %s was dropped", tbl);
        } else {
            for (size_t i = 0; i < nparts; i++)
                job_failed(tbl, parts[i], &te, fails, &rc, err);
            goto done;
        }
    }
    for (size_t i = 0; i < nparts && n < SRV_MAX_HELD; i++) {
        char name[256];
        job_name(parts[i], name);
        if (!(jobs[n] = floe_strdup(name)))
            continue;
        cand_parts[n++] = parts[i];
    }
    /* Partitions are claimed one by one; while one converts, the next is claimed and
     * prepared (leased, settled, staged) on a prep thread, so its waits on the database
     * and the object store overlap the conversion. */
    part_job *j = NULL, *next = NULL;
    bool more = true; /* partitions may be left to claim */
    for (;;) {
        floe_error e;
        floe_error_clear(&e);
        bool ahead = next != NULL; /* claimed before the one before was converted */
        if (next) {
            j = next;
            next = NULL;
        } else {
            int k = more && n > 0 && !atomic_load(&s->stopping)
                        ? claim_one(s, tbl, jobs, cand_parts, &n, &j, &rc, err) : 0;
            if (k <= 0)
                break;
            prep_start(s, t, tbl, te.msg, j);
        }
        int prc = prep_wait(j, &e);
        if (ahead && atomic_load(&s->stopping)) {
            /* stopping: one claimed ahead is given back, not converted */
            finish_job(s, j, false);
            continue;
        }
        if (prc == 0 && j->convert && more && n > 0) {
            int k = claim_one(s, tbl, jobs, cand_parts, &n, &next, &rc, err);
            if (k > 0) {
                floe_log(FLOE_LOG_DEBUG, "serve: %s/%s: claimed ahead, prepared while %s "
                         "converts", tbl, next->part, j->part);
                prep_start(s, t, tbl, te.msg, next);
            } else {
                more = false;
            }
        }
        if (prc == 0 && j->convert)
            prc = prepare_convert(s, t, tbl, j, &e);
        if (prc < 0) {
            job_failed(tbl, j->part, &e, fails, &rc, err);
            finish_job(s, j, false);
            continue;
        }
        if (t && j->jt.schema && j->jt.spec &&
            srv_table_sync(s, t, j->jt.schema->schema_id, j->jt.spec->spec_id, &e) < 0) {
            /* posts keep the schema they had until the next round or evolution */
            floe_log(FLOE_LOG_WARN, "serve: table %s: %s", tbl, e.msg);
            floe_error_clear(&e);
        }
        if (j->fc.n == 0) {
            finish_job(s, j, true);
            continue;
        }
        if (nb && batch[0]->jt.spec->spec_id != j->jt.spec->spec_id) {
            commit_batch(s, t, batch, &nb, fails, &rc, err);
            bfiles = 0;
            bbytes = 0;
        }
        batch[nb++] = j;
        bfiles += j->l.n;
        bbytes += j->l.bytes;
        if (bfiles >= MAX_JOB_FILES || bbytes >= MAX_JOB_BYTES) {
            commit_batch(s, t, batch, &nb, fails, &rc, err);
            bfiles = 0;
            bbytes = 0;
        }
    }
    if (nb)
        commit_batch(s, t, batch, &nb, fails, &rc, err);
done:
    for (size_t i = 0; jobs && i < n; i++)
        floe_free(jobs[i]);
    floe_free(jobs);
    floe_free(cand_parts);
    floe_free(batch);
    return rc;
}

/* Partitions due for compaction (all with pending files when force), of every node.
 * Returns the first failure (the round goes on with the other partitions); a partition
 * another worker holds is not one. */
static int compact_round(floe_server *s, bool force, floe_strlist *fails, floe_error *err) {
    srv_landing *L = &s->land;
    due_ctx d = {.s = s, .force = force};
    int64_t cap = s->cfg.max_pending_bytes, backlog = atomic_load(&L->pending_bytes);
    if (!force && cap > 0 && backlog > cap / 2) {
        d.pressure = true;
        d.over = backlog - cap / 2;
    }
    floe_error e;
    floe_error_clear(&e);
    pthread_mutex_lock(&L->idx_mu);
    int rc = floe_sql_query(L->db, L->q[SQ_DUE], NULL, 0, due_row, &d, &e);
    pthread_mutex_unlock(&L->idx_mu);
    if (rc < 0) {
        floe_log(FLOE_LOG_ERROR, "serve: landing index: %s", e.msg);
        rc = floe_error_set(err, e.code, "landing index: %s", e.msg);
    }
    if (rc == 0 && d.pressure && (rc = add_pressure_jobs(&d, &e)) < 0)
        rc = floe_error_set(err, e.code, "%s", e.msg);
    atomic_store(&s->compact_lag_ms, d.lag);
    for (size_t i = 0; i < d.tbls.n && i < d.parts.n;) {
        size_t j = i;
        while (j < d.tbls.n && !strcmp(d.tbls.items[j], d.tbls.items[i]))
            j++;
        floe_error te;
        floe_error_clear(&te);
        if (compact_table(s, d.tbls.items[i], (const char *const *)d.parts.items + i, j - i,
                          fails, &te) < 0 && rc == 0) {
            rc = te.code;
            if (err)
                *err = te;
        }
        i = j;
    }
    if (d.tbls.n) /* so /metrics agrees with the index right after a flush */
        srv_landing_refresh_metrics(s);
    floe_strlist_free(&d.tbls);
    floe_strlist_free(&d.parts);
    floe_strlist_free(&d.ptbls);
    floe_strlist_free(&d.pparts);
    floe_free(d.pbytes);
    return rc;
}

static void *compactor_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-compact");
    /* the last round compacted something: look again at once. So is the first: a worker
     * started on a backlog (a restart, a worker added) does not wait a poll for it. */
    bool again = true;
    for (;;) {
        pthread_mutex_lock(&s->comp_mu);
        if (!s->comp_stop && !s->comp_force && !again) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&s->comp_cv, &s->comp_mu, &ts);
        }
        bool stop = s->comp_stop, force = s->comp_force;
        uint64_t gen = s->comp_gen;
        s->comp_force = false;
        pthread_mutex_unlock(&s->comp_mu);
        if (stop)
            break;
        floe_error re;
        floe_error_clear(&re);
        int rrc = 0;
        uint64_t done_before = atomic_load(&s->m.compactions);
        uint64_t ev0 = atomic_load(&s->m.events_committed);
        uint64_t lf0 = atomic_load(&s->m.landing_committed);
        floe_strlist fails = {0};
        if (s->cfg.compact || force) {
            rrc = compact_round(s, force, force ? &fails : NULL, &re);
            if (rrc < 0)
                srv_health_fail(s, SRV_H_COMPACTOR, "%s (the landing files stay pending for "
                                "the next round)", re.msg);
            else
                srv_health_ok(s, SRV_H_COMPACTOR);
        }
        again = atomic_load(&s->m.compactions) != done_before && rrc == 0;
        if (force) {
            pthread_mutex_lock(&s->comp_mu);
            if (gen > s->comp_done_gen) {
                s->comp_done_gen = gen;
                s->comp_round_rc = rrc; /* for the waiters of gens up to gen */
                s->comp_round_err = re;
                s->comp_round_events = (int64_t)(atomic_load(&s->m.events_committed) - ev0);
                s->comp_round_files = (int64_t)(atomic_load(&s->m.landing_committed) - lf0);
                floe_strlist_free(&s->comp_round_fails);
                s->comp_round_fails = fails;
                memset(&fails, 0, sizeof fails);
            }
            pthread_cond_broadcast(&s->comp_cv);
            pthread_mutex_unlock(&s->comp_mu);
        }
        floe_strlist_free(&fails);
    }
    pthread_mutex_lock(&s->comp_mu);
    s->comp_done_gen = s->comp_gen; /* release waiters */
    pthread_cond_broadcast(&s->comp_cv);
    pthread_mutex_unlock(&s->comp_mu);
    return NULL;
}

static void comp_free(floe_server *s) {
    srv_comp *c = s->comp;
    if (!c)
        return;
    floe_lease_store_close(c->store);
    floe_lease_store_close(c->rstore);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    floe_free(c);
    s->comp = NULL;
}

/* The partition leases and file leases this node's compactor held before it stopped (a
 * crash, kill -9) are released now rather than at their end: owners "<node>/..." (see
 * srv_compactor_start) name this node's processes only, and this one is starting. Were
 * such a process still alive, its commit would find its files no longer its own and
 * commit nothing (swap_hook). */
static int release_predecessor(floe_server *s, floe_error *err) {
    srv_comp *c = s->comp;
    char prefix[64], plen[24];
    snprintf(prefix, sizeof prefix, "%.40s/", s->node); /* as c->owner begins */
    int64_t leases = 0, files = 0;
    FLOE_FORWARD_IF_ERROR(floe_lease_release_prefix(c->store, floe_catalog_name(s->catalog),
                                                    prefix, "landing/", &leases, err));
    const char *pp[] = {srv_i64(plen, (int64_t)strlen(prefix)), prefix};
    pthread_mutex_lock(&s->land.idx_mu);
    int rc = floe_sql_exec(s->land.db, "UPDATE landing_files SET state='pending', "
                           "lease_until_ms=NULL, lease_owner=NULL WHERE state='compacting' AND "
                           "substr(lease_owner, 1, CAST(? AS INTEGER)) = ?", pp, 2, &files, err);
    pthread_mutex_unlock(&s->land.idx_mu);
    if (rc == 0 && (leases || files))
        floe_log(FLOE_LOG_INFO, "serve: released %lld partition leases and %lld landing files "
                 "of this node's earlier process", (long long)leases, (long long)files);
    return rc;
}

int srv_compactor_start(floe_server *s, floe_error *err) {
    int rc = 0;
    srv_comp *c = floe_calloc(1, sizeof *c);
    if (!c)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    s->comp = c;
    c->ttl_ms = s->cfg.compact_lease_ms > 0 ? s->cfg.compact_lease_ms : DEFAULT_LEASE_MS;
    char id[128];
    floe_lease_owner_id(id);
    /* "<node>/...": a restart of this node releases its earlier processes' leases by that
     * prefix (release_predecessor) */
    snprintf(c->owner, sizeof c->owner, "%.40s/%.80s", s->node, id);
    FLOE_CHECK(floe_lease_store_open(&s->catcfg, &c->store, err));
    FLOE_CHECK(floe_lease_store_open(&s->catcfg, &c->rstore, err));
    /* A REST catalog's commit is the server's: no swap of ours to mark the landing files
     * in. Its commits settle them after the answer (lease_settle), and the table's
     * floe.landing-ids, checked on every commit attempt, keep a file from being
     * committed twice in between. */
    if (floe_catalog_sql(s->catalog))
        FLOE_CHECK(floe_catalog_set_swap_hook(s->catalog, swap_hook, s, err));
    FLOE_CHECK(release_predecessor(s, err));
    staging_sweep(s->cfg.staging_dir);
    if (pthread_create(&c->thr, NULL, renewer_main, s) != 0)
        FLOE_FAIL(err, FLOE_EINTERNAL, "cannot start the lease renewer thread");
    c->thr_started = true;
    if (pthread_create(&s->comp_thr, NULL, compactor_main, s) != 0)
        FLOE_FAIL(err, FLOE_EINTERNAL, "cannot start the compactor thread");
    s->comp_started = true;
done:
    return rc;
}

void srv_compactor_stop(floe_server *s) {
    if (s->comp_started) {
        pthread_mutex_lock(&s->comp_mu);
        s->comp_stop = true;
        pthread_cond_broadcast(&s->comp_cv);
        pthread_mutex_unlock(&s->comp_mu);
        pthread_join(s->comp_thr, NULL);
        s->comp_started = false;
    }
    srv_comp *c = s->comp;
    if (!c)
        return;
    if (c->thr_started) {
        pthread_mutex_lock(&c->mu);
        c->stop = true;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thr, NULL);
        c->thr_started = false;
    }
    if (s->catalog)
        FLOE_IGNORE_RESULT(floe_catalog_set_swap_hook(s->catalog, NULL, NULL, NULL));
    comp_free(s);
}

int srv_compactor_run_now(floe_server *s, srv_round *round, floe_error *err) {
    pthread_mutex_lock(&s->comp_mu);
    uint64_t gen = ++s->comp_gen;
    s->comp_force = true;
    pthread_cond_broadcast(&s->comp_cv);
    while (s->comp_done_gen < gen && !s->comp_stop)
        pthread_cond_wait(&s->comp_cv, &s->comp_mu);
    /* the round that served us is the newest one: a later round may already have
     * overwritten its result, which is then the fresher answer for these files too */
    bool served = s->comp_done_gen >= gen && !s->comp_stop;
    int rc = served ? s->comp_round_rc : 0;
    if (rc < 0 && err)
        *err = s->comp_round_err;
    if (round) {
        memset(round, 0, sizeof *round);
        if (served) {
            round->events = s->comp_round_events;
            round->files = s->comp_round_files;
            for (size_t i = 0; i < s->comp_round_fails.n; i++)
                if (floe_strlist_push(&round->fails, s->comp_round_fails.items[i], NULL) < 0)
                    break;
        }
    }
    pthread_mutex_unlock(&s->comp_mu);
    return rc;
}

/* ---- what a flush leaves pending, and why ------------------------------------------- */

#define PENDING_LISTED 100

typedef struct pending_ctx {
    floe_server *s;
    const floe_strlist *fails;
    floe_lease_store *leases;  /* NULL: not openable (the reasons say less) */
    floe_buf *json;
    int64_t files, parts;
} pending_ctx;

/* Row: tbl, part, files, bytes, files under a live file lease, its end, its holder. */
static int pending_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    pending_ctx *p = ctx;
    if (n < 7 || !cols[0] || !cols[1])
        return 0;
    int64_t files = srv_atoi64(cols[2]), leased = srv_atoi64(cols[4]);
    p->files += files;
    if (p->parts++ >= PENDING_LISTED)
        return 0;
    floe_buf *b = p->json;
    char reason[SRV_NOTE_MAX] = "", until[32];
    size_t tl = strlen(cols[0]), pl = strlen(cols[1]);
    for (size_t i = 0; p->fails && i < p->fails->n && !reason[0]; i++) {
        const char *f = p->fails->items[i];
        if (!strncmp(f, cols[0], tl) && f[tl] == '\t' && !strncmp(f + tl + 1, cols[1], pl) &&
            f[tl + 1 + pl] == '\t')
            srv_note(reason, sizeof reason, "compaction failed: %s", f + tl + pl + 2);
    }
    if (!reason[0] && leased > 0 && cols[5]) {
        srv_iso_ms(srv_atoi64(cols[5]), until);
        srv_note(reason, sizeof reason, "%lld landing files are being compacted by %s (file "
                 "lease until %s)", (long long)leased, cols[6] ? cols[6] : "?", until);
    }
    if (!reason[0] && p->leases) {
        char ns[256], job[256];
        const char *dot = strrchr(cols[0], '.');
        floe_lease_info li;
        floe_error e;
        floe_error_clear(&e);
        if (dot && dot != cols[0] && (size_t)(dot - cols[0]) < sizeof ns) {
            memcpy(ns, cols[0], (size_t)(dot - cols[0]));
            ns[dot - cols[0]] = 0;
            job_name(cols[1], job);
            floe_lease_key k = {.catalog_name = floe_catalog_name(p->s->catalog),
                                .table_namespace = ns, .table_name = dot + 1, .job = job};
            if (floe_lease_get(p->leases, &k, &li, &e) == 0 && li.expires_at > li.now) {
                srv_iso_ms(li.expires_at, until);
                srv_note(reason, sizeof reason, "the partition's lease is held by %s "
                         "until %s", li.owner, until);
            }
        }
    }
    if (!reason[0])
        snprintf(reason, sizeof reason, "not compacted in this round (a round takes at most "
                 "256 partitions of a table and a job at most %d files)", MAX_JOB_FILES);
    if (floe_buf_printf(b, "%s{\"table\":", p->parts > 1 ? "," : "") < 0 ||
        floe_json_append_string(b, (const uint8_t *)cols[0], tl) < 0 ||
        floe_buf_printf(b, ",\"partition\":") < 0 ||
        floe_json_append_string(b, (const uint8_t *)cols[1], pl) < 0 ||
        floe_buf_printf(b, ",\"landing_files\":%lld,\"bytes\":%lld,\"reason\":",
                        (long long)files, (long long)srv_atoi64(cols[3])) < 0 ||
        floe_json_append_string(b, (const uint8_t *)reason, strlen(reason)) < 0 ||
        floe_buf_append_byte(b, '}') < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

int srv_compactor_pending(floe_server *s, int64_t cutoff, const floe_strlist *fails,
                          floe_buf *json, int64_t *files, int64_t *parts, floe_error *err) {
    srv_landing *L = &s->land;
    pending_ctx p = {.s = s, .fails = fails, .json = json};
    floe_error e;
    floe_error_clear(&e);
    /* a connection of this thread's own (the compactor's are its threads') */
    if (floe_lease_store_open(&s->catcfg, &p.leases, &e) < 0)
        p.leases = NULL;
    const char *now = floe_sql_clock_ms_expr(L->db);
    char *q = floe_asprintf(
        "SELECT tbl, part, COUNT(*), COALESCE(SUM(bytes),0), SUM(CASE WHEN state='compacting' "
        "AND lease_until_ms >= %s THEN 1 ELSE 0 END), MAX(CASE WHEN state='compacting' AND "
        "lease_until_ms >= %s THEN lease_until_ms END), MAX(CASE WHEN state='compacting' AND "
        "lease_until_ms >= %s THEN lease_owner END) FROM landing_files WHERE kind=1 AND "
        "id <= CAST(? AS BIGINT) AND state IN ('pending','compacting') GROUP BY tbl, part "
        "ORDER BY tbl, part", now, now, now);
    char p_cut[24];
    const char *params[] = {srv_i64(p_cut, cutoff)};
    int rc = q ? floe_buf_append_byte(json, '[') : FLOE_ENOMEM;
    if (rc < 0) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    } else {
        pthread_mutex_lock(&L->idx_mu);
        rc = floe_sql_query(L->db, q, params, 1, pending_row, &p, err);
        pthread_mutex_unlock(&L->idx_mu);
        if (rc == 0 && floe_buf_append_byte(json, ']') < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_free(q);
    floe_lease_store_close(p.leases);
    if (rc == 0) {
        *files = p.files;
        *parts = p.parts;
    }
    return rc;
}
