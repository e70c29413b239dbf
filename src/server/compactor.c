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
 *
 * Outcomes (see floe_server_commit_fn):
 *   committed / already committed -> landing files committed (+ snapshot id)
 *   conflict / failure            -> new data files deleted, landing files pending again
 *   unknown                       -> nothing deleted; the landing files stay leased until a
 *                                    restart (or the lease's end) and step 2 settles them
 *
 * Why each id reaches the table once (I2): an id enters a snapshot only through an append
 * whose every attempt found it in no snapshot of the attempt's base, and the catalog moves
 * only by compare-and-swap from that base; so no two snapshots share an id. An id is
 * converted again only when step 2 finds it in no snapshot, i.e. nothing committed holds
 * its records. Both rest on the history still holding the snapshot: expiry must not
 * remove a snapshot whose landing ids the index has not yet marked committed (the
 * default retention of days is far longer than a lease).
 *
 * Parquet settings: the table's write.* properties (floe_table_parquet_options), except
 * that landing output keeps floe's own defaults where the table sets nothing: Snappy, and
 * a target file size of the server's target_file_size (128 MB) - which, when configured
 * for the table or in [defaults], wins over write.target-file-size-bytes.
 *
 * The landing index (SQLite, landing.c) and the catalog are two stores: the commit and the
 * index update are two steps, and step 2 is what makes a crash between them harmless.
 */
#include <stdio.h>
#include <string.h>

#include "floe/append.h"
#include "floe/convert.h"
#include "floe/io.h"
#include "floe/quarantine.h"
#include "floe/table_metadata.h"
#include "server_internal.h"

#define LEASE_MS (30LL * 60 * 1000)
#define MAX_JOB_FILES 2000
#define MAX_JOB_BYTES (4LL << 30)
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

static uint64_t id_hash(const char *p, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

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
        size_t k = id_hash(ids[i], strlen(ids[i])) & s->mask;
        while (s->slots[k])
            k = (k + 1) & s->mask;
        s->slots[k] = (uint32_t)i + 1;
    }
    return 0;
}

static long id_set_find(const id_set *s, const char *p, size_t n) {
    size_t k = id_hash(p, n) & s->mask;
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
    rc = floe_append_commit(a, &res, err);
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

/* ---- leases ---------------------------------------------------------------------------- */

typedef struct lease {
    int64_t *ids;            /* index rows */
    char **landing_ids;      /* "<node>-<seq>" */
    char **uris;
    size_t n;
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

static int lease_take(floe_server *s, const char *tbl, const char *part, lease *out,
                      floe_error *err) {
    srv_landing *L = &s->land;
    int rc = 0;
    int64_t now = floe_wall_ms();
    sqlite3_stmt *st = NULL, *up = NULL;
    pthread_mutex_lock(&L->idx_mu);
    if (sqlite3_exec(L->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EBUSY, "landing index: %s", sqlite3_errmsg(L->db));
        goto done;
    }
    if (sqlite3_prepare_v2(L->db, "SELECT id, node, seq, uri, bytes FROM landing_files WHERE "
                           "tbl=?1 AND part=?2 AND kind=1 AND (state='pending' OR (state="
                           "'compacting' AND lease_until_ms<?3)) ORDER BY id", -1, &st,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(L->db, "UPDATE landing_files SET state='compacting', "
                           "lease_until_ms=?2 WHERE id=?1", -1, &up, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
        goto rollback;
    }
    sqlite3_bind_text(st, 1, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, part, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, now);
    size_t cap = 0;
    int64_t bytes = 0;
    while (sqlite3_step(st) == SQLITE_ROW && out->n < MAX_JOB_FILES && bytes < MAX_JOB_BYTES) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *ni = floe_realloc(out->ids, cap * sizeof *ni);
            if (ni)
                out->ids = ni;
            char **nl = floe_realloc(out->landing_ids, cap * sizeof *nl);
            if (nl)
                out->landing_ids = nl;
            char **nu = floe_realloc(out->uris, cap * sizeof *nu);
            if (nu)
                out->uris = nu;
            if (!ni || !nl || !nu) {
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                goto rollback;
            }
        }
        out->ids[out->n] = sqlite3_column_int64(st, 0);
        out->landing_ids[out->n] = floe_asprintf("%s-%010lld", sqlite3_column_text(st, 1),
                                                 (long long)sqlite3_column_int64(st, 2));
        out->uris[out->n] = floe_strdup((const char *)sqlite3_column_text(st, 3));
        bytes += sqlite3_column_int64(st, 4);
        out->n++;
        if (!out->landing_ids[out->n - 1] || !out->uris[out->n - 1]) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            goto rollback;
        }
        sqlite3_bind_int64(up, 1, out->ids[out->n - 1]);
        sqlite3_bind_int64(up, 2, now + LEASE_MS);
        if (sqlite3_step(up) != SQLITE_DONE) {
            rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
            goto rollback;
        }
        sqlite3_reset(up);
    }
    if (sqlite3_exec(L->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
        goto rollback;
    }
    goto done;
rollback:
    sqlite3_exec(L->db, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_finalize(st);
    sqlite3_finalize(up);
    pthread_mutex_unlock(&L->idx_mu);
    return rc;
}

/* Set the lease's files to `state` with `snapshot` (0 = none). With per_file, only the
 * files whose entry is non-zero change, each to committed in that snapshot. */
static int lease_finish(floe_server *s, const lease *l, const char *state, int64_t snapshot,
                        const int64_t *per_file, floe_error *err) {
    srv_landing *L = &s->land;
    int rc = 0;
    sqlite3_stmt *up = NULL;
    pthread_mutex_lock(&L->idx_mu);
    if (sqlite3_exec(L->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EBUSY, "landing index: %s", sqlite3_errmsg(L->db));
        pthread_mutex_unlock(&L->idx_mu);
        return rc;
    }
    if (sqlite3_prepare_v2(L->db, "UPDATE landing_files SET state=?2, lease_until_ms=NULL, "
                           "snapshot_id=?3 WHERE id=?1", -1, &up, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
    } else {
        for (size_t i = 0; i < l->n && rc == 0; i++) {
            int64_t snap = per_file ? per_file[i] : snapshot;
            if (per_file && !snap)
                continue;
            sqlite3_bind_int64(up, 1, l->ids[i]);
            sqlite3_bind_text(up, 2, state, -1, SQLITE_STATIC);
            if (snap > 0)
                sqlite3_bind_int64(up, 3, snap);
            else
                sqlite3_bind_null(up, 3);
            if (sqlite3_step(up) != SQLITE_DONE)
                rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
            sqlite3_reset(up);
        }
    }
    sqlite3_finalize(up);
    if (rc == 0 && sqlite3_exec(L->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
    if (rc < 0)
        sqlite3_exec(L->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&L->idx_mu);
    return rc;
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

/* ---- one partition ------------------------------------------------------------------- */

/* What a job needs from the table, read under cat_mu in one go. */
typedef struct job_table {
    floe_schema *schema;            /* current schema */
    floe_partition_spec *spec;      /* default spec, bound to schema */
    floe_metrics_config *metrics;   /* write.metadata.metrics.* */
    floe_pq_write_options write;
    char *rec_dir;                  /* data dir as the table records paths */
    char *phys_dir;                 /* ... and where it is */
} job_table;

static void job_table_free(job_table *jt) {
    floe_schema_free(jt->schema);
    floe_partition_spec_free(jt->spec);
    floe_metrics_config_free(jt->metrics);
    floe_free(jt->rec_dir);
    floe_free(jt->phys_dir);
    memset(jt, 0, sizeof *jt);
}

/* The target file size the server's configuration sets explicitly, or -1. */
static int64_t configured_target(floe_server *s, const char *tbl) {
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

/* Load the table, settle the lease against its history (settled[i] = snapshot holding
 * file i, or 0) and read what the conversion needs. */
static int job_table_load(floe_server *s, const srv_table *t, const lease *l,
                          int64_t *settled, job_table *jt, floe_error *err) {
    floe_table *ft = NULL;
    id_set set = {0};
    int rc = 0;
    int64_t target = configured_target(s, t->name); /* cfg_mu is never held with cat_mu */
    pthread_mutex_lock(&s->cat_mu);
    FLOE_CHECK(floe_table_load(s->catalog, t->ns, t->tname, &ft, err));
    const floe_table_metadata *m = floe_table_metadata_get(ft);
    FLOE_CHECK(id_set_init(&set, (const char *const *)l->landing_ids, l->n, err));
    if (history_find(&set, m))
        memcpy(settled, set.snap, l->n * sizeof *settled);
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
done:
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    id_set_free(&set);
    return rc;
}

/* The data files a job wrote, as the table will record them. */
typedef struct files_ctx {
    const job_table *jt;
    floe_arena arena;               /* the records and everything they point at */
    floe_data_file *files;
    size_t n, cap;
    floe_strlist uris;              /* where they are, for deleting */
} files_ctx;

static int on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                   const floe_value *partition, size_t npartition, floe_error *err) {
    files_ctx *fc = ctx;
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

static void files_delete(files_ctx *fc) {
    for (size_t i = 0; i < fc->uris.n; i++)
        floe_io_delete(fc->uris.items[i], NULL);
}

static int compact_partition(floe_server *s, const char *tbl, const char *part,
                             floe_error *err) {
    lease l = {0};
    job_table jt;
    memset(&jt, 0, sizeof jt);
    files_ctx fc;
    memset(&fc, 0, sizeof fc);
    floe_arena_init(&fc.arena, 64 * 1024);
    fc.jt = &jt;
    int64_t *settled = NULL;
    char *quarantine = NULL, *prefix = NULL;
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    bool release = false; /* on the way out: the leased files go back to pending */
    int rc = 0;
    srv_table *t = NULL;
    FLOE_CHECK(srv_table_get(s, tbl, NULL, 0, &t, err));
    FLOE_CHECK(lease_take(s, tbl, part, &l, err));
    if (l.n == 0)
        goto done;
    release = true;
    if (!(settled = floe_calloc(l.n, sizeof *settled)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(job_table_load(s, t, &l, settled, &jt, err));

    /* step 2: what the history already holds is done */
    size_t nsettled = 0;
    for (size_t i = 0; i < l.n; i++)
        nsettled += settled[i] != 0;
    if (nsettled) {
        FLOE_CHECK(lease_finish(s, &l, "committed", 0, settled, err));
        for (size_t i = 0; i < l.n; i++)
            if (settled[i])
                floe_log(FLOE_LOG_INFO, "serve: %s: landing file %s is already in snapshot "
                         "%lld: marked committed", tbl, l.landing_ids[i],
                         (long long)settled[i]);
        atomic_fetch_add(&s->m.settled, nsettled);
        lease_drop(&l, settled);
        if (l.n == 0) {
            release = false;
            goto done;
        }
    }

    /* step 3: convert the rest */
    char uuid[37];
    floe_uuid4(uuid);
    uuid[8] = 0;
    quarantine = floe_asprintf("%s/%s/compact-%s-%s.ndjson", s->quarantine_root, tbl, s->node,
                               uuid);
    prefix = floe_asprintf("%s-%s", l.landing_ids[0], uuid);
    if (!quarantine || !prefix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_convert_options co;
    floe_convert_options_init(&co);
    co.schema = jt.schema;
    co.write = jt.write;
    co.threads = 1; /* ingest keeps the other core */
    co.shred.max_record = (size_t)s->cfg.max_record;
    co.shred.unknown = srv_table_mode(s, t) == FLOE_SCHEMA_STRICT ? FLOE_UNKNOWN_REJECT
                                                                  : FLOE_UNKNOWN_IGNORE;
    co.out_dir = jt.phys_dir;
    co.file_prefix = prefix;
    co.spec = jt.spec->nfields ? jt.spec : NULL;
    co.quarantine_uri = quarantine;
    co.on_file = on_file;
    co.on_file_ctx = &fc;
    rc = floe_convert((const char *const *)l.uris, l.n, &co, &res, err);
    if (rc < 0) {
        files_delete(&fc);
        goto done;
    }
    if (fc.n == 0) {
        /* every record went to the quarantine: nothing to commit */
        release = false;
        rc = lease_finish(s, &l, "committed", 0, NULL, err);
        goto done;
    }

    /* step 4: commit */
    floe_landing_commit c = {
        .table = tbl, .partition = part, .schema = jt.schema, .spec_id = jt.spec->spec_id,
        .files = fc.files, .nfiles = fc.n,
        .landing_ids = (const char *const *)l.landing_ids, .nlanding = l.n,
        .records = res.records_out,
    };
    floe_server_commit_fn hook = s->hooks.commit ? s->hooks.commit : floe_server_commit_iceberg;
    void *hctx = s->hooks.commit ? s->hooks.commit_ctx : s;
    int64_t snapshot = 0;
    rc = hook(hctx, &c, &snapshot, err);
    atomic_fetch_add(&s->m.retries, (uint64_t)(c.retries > 0 ? c.retries : 0));
    if (rc == 0 || rc == FLOE_COMMIT_NOOP) {
        if (rc == FLOE_COMMIT_NOOP) {
            floe_log(FLOE_LOG_INFO, "serve: %s/%s: landing files already committed in "
                     "snapshot %lld", tbl, part, (long long)snapshot);
            files_delete(&fc);
        }
        atomic_fetch_add(&s->m.commits, 1);
        /* from here on a failure leaves the files leased: step 2 settles them later */
        release = false;
        rc = lease_finish(s, &l, "committed", snapshot, NULL, err);
        goto done;
    }
    atomic_fetch_add(&s->m.commit_failures, 1);
    if (rc == FLOE_EUNKNOWN_STATE) {
        /* I3: nothing may be deleted; after a restart or the lease's end, step 2 tells */
        release = false;
        goto done;
    }
    if (rc == FLOE_ECONFLICT)
        atomic_fetch_add(&s->m.conflicts, 1);
    files_delete(&fc);
done:
    if (release) {
        floe_error e2;
        floe_error_clear(&e2);
        if (lease_finish(s, &l, "pending", 0, NULL, &e2) < 0)
            floe_log(FLOE_LOG_ERROR, "serve: %s/%s: %s (the lease runs out instead)", tbl,
                     part, e2.msg);
    }
    if (rc >= 0 && l.n)
        atomic_fetch_add(&s->m.compactions, 1);
    floe_free(fc.files);
    floe_strlist_free(&fc.uris);
    floe_arena_reset(&fc.arena);
    job_table_free(&jt);
    floe_convert_result_free(&res);
    floe_free(settled);
    floe_free(quarantine);
    floe_free(prefix);
    lease_free(&l);
    return rc < 0 ? rc : 0;
}

/* Partitions due for compaction (all with pending files when force). */
static int compact_round(floe_server *s, bool force) {
    srv_landing *L = &s->land;
    floe_strlist tbls = {0}, parts = {0};
    int64_t now = floe_wall_ms(), lag = 0;
    pthread_mutex_lock(&L->idx_mu);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(L->db, "SELECT tbl, part, SUM(bytes), MIN(created_ms) FROM "
                           "landing_files WHERE kind=1 AND (state='pending' OR (state="
                           "'compacting' AND lease_until_ms<?1)) GROUP BY tbl, part", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            const char *p = (const char *)sqlite3_column_text(st, 1);
            int64_t bytes = sqlite3_column_int64(st, 2), oldest = sqlite3_column_int64(st, 3);
            if (now - oldest > lag)
                lag = now - oldest;
            if (force || bytes >= srv_table_setting(s, t, SET_COMPACT_BYTES) ||
                now - oldest >= srv_table_setting(s, t, SET_COMPACT_AGE)) {
                floe_strlist_push(&tbls, t, NULL);
                floe_strlist_push(&parts, p, NULL);
            }
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&L->idx_mu);
    atomic_store(&s->compact_lag_ms, lag);
    for (size_t i = 0; i < tbls.n && i < parts.n; i++) {
        floe_error e;
        floe_error_clear(&e);
        if (compact_partition(s, tbls.items[i], parts.items[i], &e) < 0)
            floe_log(FLOE_LOG_ERROR, "serve: compacting %s/%s: %s", tbls.items[i],
                     parts.items[i], e.msg);
    }
    if (tbls.n) /* so /metrics agrees with the index right after a flush */
        srv_landing_refresh_metrics(s);
    floe_strlist_free(&tbls);
    floe_strlist_free(&parts);
    return 0;
}

static void *compactor_main(void *arg) {
    floe_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->comp_mu);
        if (!s->comp_stop && !s->comp_force) {
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
        if (s->cfg.compact || force)
            compact_round(s, force);
        if (force) {
            pthread_mutex_lock(&s->comp_mu);
            if (gen > s->comp_done_gen)
                s->comp_done_gen = gen;
            pthread_cond_broadcast(&s->comp_cv);
            pthread_mutex_unlock(&s->comp_mu);
        }
    }
    pthread_mutex_lock(&s->comp_mu);
    s->comp_done_gen = s->comp_gen; /* release waiters */
    pthread_cond_broadcast(&s->comp_cv);
    pthread_mutex_unlock(&s->comp_mu);
    return NULL;
}

int srv_compactor_start(floe_server *s, floe_error *err) {
    if (pthread_create(&s->comp_thr, NULL, compactor_main, s) != 0)
        return floe_error_set(err, FLOE_EINTERNAL, "cannot start the compactor thread");
    s->comp_started = true;
    return 0;
}

void srv_compactor_stop(floe_server *s) {
    if (!s->comp_started)
        return;
    pthread_mutex_lock(&s->comp_mu);
    s->comp_stop = true;
    pthread_cond_broadcast(&s->comp_cv);
    pthread_mutex_unlock(&s->comp_mu);
    pthread_join(s->comp_thr, NULL);
    s->comp_started = false;
}

int srv_compactor_run_now(floe_server *s, floe_error *err) {
    (void)err;
    pthread_mutex_lock(&s->comp_mu);
    uint64_t gen = ++s->comp_gen;
    s->comp_force = true;
    pthread_cond_broadcast(&s->comp_cv);
    while (s->comp_done_gen < gen && !s->comp_stop)
        pthread_cond_wait(&s->comp_cv, &s->comp_mu);
    pthread_mutex_unlock(&s->comp_mu);
    return 0;
}
