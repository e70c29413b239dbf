/*
 * compactor.c - landing compaction (DESIGN.md "The four paths" 3, I2, I4).
 *
 * Per partition, when its pending landing bytes reach compact_bytes or its oldest pending
 * file is compact_age old, the compactor leases the partition's pending files (state
 * compacting, with a lease deadline), converts them with the `floe convert` pipeline
 * (same shredder, quarantine for what no longer fits the schema) into Snappy Parquet files
 * of the table's target size under <table>/data/<partition>/, and hands the files and
 * the landing ids to the commit hook. Outcomes (see floe_server_commit_fn):
 *
 *   committed / already committed -> landing files committed (+ snapshot id)
 *   conflict / failure            -> new data files deleted, landing files pending again
 *   unknown                       -> nothing deleted; the lease runs out and the retry's
 *                                    history check settles it
 *
 * The stand-in hook (until the table layer's append exists) keeps an fsynced commit log
 * and performs the same exactly-once check against it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "floe/convert.h"
#include "floe/io.h"
#include "floe/quarantine.h"
#include "floe/table_metadata.h"
#include "server_internal.h"

#define LEASE_MS (30LL * 60 * 1000)
#define MAX_JOB_FILES 2000
#define MAX_JOB_BYTES (4LL << 30)

/* ---- the stand-in commit hook ----------------------------------------------------- */

int srv_commit_log_hook(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                        floe_error *err) {
    floe_server *s = ctx;
    char *path = floe_asprintf("%s/_commits.ndjson", s->landing_root);
    floe_buf log, line;
    floe_buf_init(&log, 0);
    floe_buf_init(&line, 0);
    int rc = 0, fd = -1;
    if (!path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    bool ex = false;
    FLOE_CHECK(floe_io_exists(path, &ex, err));
    if (ex)
        FLOE_CHECK(floe_io_read_all(path, (size_t)1 << 31, &log, err));
    /* exactly once: are these landing files already consumed? */
    for (size_t i = 0; i < c->nlanding && log.len; i++) {
        char needle[160];
        snprintf(needle, sizeof needle, "\"%s\"", c->landing_ids[i]);
        FLOE_CHECK(floe_buf_append_byte(&log, 0));
        log.len--;
        const char *hit = strstr((const char *)log.data, needle);
        if (hit) {
            const char *ls = hit;
            while (ls > (const char *)log.data && ls[-1] != '\n')
                ls--;
            long long sid = 0;
            sscanf(ls, "{\"snapshot_id\":%lld", &sid);
            *snapshot_id = sid;
            rc = FLOE_COMMIT_NOOP;
            goto done;
        }
    }
    int64_t sid = floe_metadata_new_snapshot_id();
    floe_buf_printf(&line, "{\"snapshot_id\":%lld,\"table\":\"%s\",\"partition\":",
                    (long long)sid, c->table);
    floe_json_append_string(&line, (const uint8_t *)c->partition, strlen(c->partition));
    floe_buf_printf(&line, ",\"records\":%lld,\"landing_ids\":[", (long long)c->records);
    for (size_t i = 0; i < c->nlanding; i++)
        floe_buf_printf(&line, "%s\"%s\"", i ? "," : "", c->landing_ids[i]);
    floe_buf_printf(&line, "],\"data_files\":[");
    for (size_t i = 0; i < c->nfiles; i++) {
        floe_buf_printf(&line, "%s{\"uri\":", i ? "," : "");
        floe_json_append_string(&line, (const uint8_t *)c->data_files[i],
                                strlen(c->data_files[i]));
        if (floe_buf_printf(&line, ",\"records\":%lld,\"bytes\":%lld}",
                            (long long)c->infos[i].record_count,
                            (long long)c->infos[i].file_size_in_bytes) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (floe_buf_printf(&line, "]}\n") < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line.data, line.len) != (ssize_t)line.len || fdatasync(fd) != 0)
        FLOE_FAIL(err, FLOE_EUNKNOWN_STATE, "commit log %s: %s", path, strerror(errno));
    *snapshot_id = sid;
done:
    if (fd >= 0)
        close(fd);
    floe_buf_free(&log);
    floe_buf_free(&line);
    floe_free(path);
    return rc;
}

/* ---- one partition ------------------------------------------------------------------ */

typedef struct lease {
    int64_t *ids;
    char **landing_ids;
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

static int lease_finish(floe_server *s, const lease *l, const char *state, int64_t snapshot,
                        floe_error *err) {
    srv_landing *L = &s->land;
    int rc = 0;
    sqlite3_stmt *up = NULL;
    pthread_mutex_lock(&L->idx_mu);
    sqlite3_exec(L->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (sqlite3_prepare_v2(L->db, "UPDATE landing_files SET state=?2, lease_until_ms=NULL, "
                           "snapshot_id=?3 WHERE id=?1", -1, &up, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
    } else {
        for (size_t i = 0; i < l->n && rc == 0; i++) {
            sqlite3_bind_int64(up, 1, l->ids[i]);
            sqlite3_bind_text(up, 2, state, -1, SQLITE_STATIC);
            if (snapshot)
                sqlite3_bind_int64(up, 3, snapshot);
            else
                sqlite3_bind_null(up, 3);
            if (sqlite3_step(up) != SQLITE_DONE)
                rc = floe_error_set(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(L->db));
            sqlite3_reset(up);
        }
    }
    sqlite3_finalize(up);
    sqlite3_exec(L->db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&L->idx_mu);
    return rc;
}

typedef struct files_ctx {
    char **uris;
    floe_pq_file_info *infos;
    size_t n, cap;
} files_ctx;

static int copy_info(const floe_pq_file_info *src, floe_pq_file_info *dst) {
    memset(dst, 0, sizeof *dst);
    *dst = *src;
    dst->columns = floe_calloc(src->ncolumns ? src->ncolumns : 1, sizeof *dst->columns);
    dst->split_offsets = floe_calloc(src->nsplits ? src->nsplits : 1, sizeof(int64_t));
    if (!dst->columns || !dst->split_offsets)
        goto nomem;
    memcpy(dst->split_offsets, src->split_offsets, src->nsplits * sizeof(int64_t));
    for (size_t i = 0; i < src->ncolumns; i++) {
        dst->columns[i] = src->columns[i];
        dst->columns[i].lower_bound = NULL;
        dst->columns[i].upper_bound = NULL;
        if (src->columns[i].lower_bound &&
            !(dst->columns[i].lower_bound = floe_malloc(src->columns[i].lower_len + 1)))
            goto nomem;
        if (src->columns[i].upper_bound &&
            !(dst->columns[i].upper_bound = floe_malloc(src->columns[i].upper_len + 1)))
            goto nomem;
        if (src->columns[i].lower_bound)
            memcpy(dst->columns[i].lower_bound, src->columns[i].lower_bound,
                   src->columns[i].lower_len);
        if (src->columns[i].upper_bound)
            memcpy(dst->columns[i].upper_bound, src->columns[i].upper_bound,
                   src->columns[i].upper_len);
    }
    return 0;
nomem:
    floe_pq_file_info_free(dst);
    return FLOE_ENOMEM;
}

static int on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                   const floe_value *partition, size_t npartition, floe_error *err) {
    (void)partition; /* landing files of one partition: the tuple is the partition's */
    (void)npartition;
    files_ctx *fc = ctx;
    if (fc->n == fc->cap) {
        size_t nc = fc->cap ? fc->cap * 2 : 4;
        char **nu = floe_realloc(fc->uris, nc * sizeof *nu);
        if (nu)
            fc->uris = nu;
        floe_pq_file_info *ni = floe_realloc(fc->infos, nc * sizeof *ni);
        if (ni)
            fc->infos = ni;
        if (!nu || !ni)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        fc->cap = nc;
    }
    fc->uris[fc->n] = floe_strdup(uri);
    if (!fc->uris[fc->n])
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (copy_info(fi, &fc->infos[fc->n]) < 0) {
        floe_free(fc->uris[fc->n]);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    fc->n++;
    return 0;
}

static void files_free(files_ctx *fc, bool delete_files) {
    for (size_t i = 0; i < fc->n; i++) {
        if (delete_files)
            floe_io_delete(fc->uris[i], NULL);
        floe_free(fc->uris[i]);
        floe_pq_file_info_free(&fc->infos[i]);
    }
    floe_free(fc->uris);
    floe_free(fc->infos);
    memset(fc, 0, sizeof *fc);
}

static int compact_partition(floe_server *s, const char *tbl, const char *part,
                             floe_error *err) {
    lease l = {0};
    files_ctx fc = {0};
    floe_schema *schema = NULL;
    char *out_dir = NULL, *quarantine = NULL, *prefix = NULL;
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    srv_table *t = NULL;
    FLOE_CHECK(srv_table_get(s, tbl, NULL, 0, &t, err));
    FLOE_CHECK(lease_take(s, tbl, part, &l, err));
    if (l.n == 0)
        goto done;
    pthread_rwlock_rdlock(&t->schema_lock);
    rc = floe_schema_clone(t->schema, &schema, err);
    pthread_rwlock_unlock(&t->schema_lock);
    if (rc < 0)
        goto release;
    char uuid[37];
    floe_uuid4(uuid);
    uuid[8] = 0;
    out_dir = *part ? floe_asprintf("%s/data/%s", t->location, part)
                    : floe_asprintf("%s/data", t->location);
    quarantine = floe_asprintf("%s/%s/compact-%s-%s.ndjson", s->quarantine_root, tbl, s->node,
                               uuid);
    prefix = floe_asprintf("%s-%s", l.landing_ids[0], uuid);
    if (!out_dir || !quarantine || !prefix) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto release;
    }
    floe_convert_options co;
    floe_convert_options_init(&co);
    co.schema = schema;
    floe_pq_write_options_init(&co.write);
    co.write.codec = FLOE_CODEC_SNAPPY;
    co.write.target_file_size = srv_table_setting(s, tbl, SET_TARGET);
    co.threads = 1; /* ingest keeps the other core */
    co.shred.max_record = (size_t)s->cfg.max_record;
    co.shred.unknown = srv_table_mode(s, t) == FLOE_SCHEMA_STRICT ? FLOE_UNKNOWN_REJECT
                                                                  : FLOE_UNKNOWN_IGNORE;
    co.out_dir = out_dir;
    co.file_prefix = prefix;
    co.quarantine_uri = quarantine;
    co.on_file = on_file;
    co.on_file_ctx = &fc;
    rc = floe_convert((const char *const *)l.uris, l.n, &co, &res, err);
    if (rc < 0) {
        files_free(&fc, true);
        goto release;
    }
    int64_t snapshot = 0;
    if (fc.n == 0) {
        /* every record went to the quarantine: nothing to commit */
        rc = lease_finish(s, &l, "committed", 0, err);
        goto done;
    }
    floe_landing_commit c = {
        .table = tbl, .partition = part, .schema = schema,
        .data_files = (const char *const *)fc.uris, .infos = fc.infos, .nfiles = fc.n,
        .landing_ids = (const char *const *)l.landing_ids, .nlanding = l.n,
        .records = res.records_out,
    };
    floe_server_commit_fn hook = s->hooks.commit ? s->hooks.commit : srv_commit_log_hook;
    void *hctx = s->hooks.commit ? s->hooks.commit_ctx : s;
    rc = hook(hctx, &c, &snapshot, err);
    atomic_fetch_add(&s->m.retries, (uint64_t)(c.retries > 0 ? c.retries : 0));
    if (rc == 0 || rc == FLOE_COMMIT_NOOP) {
        if (rc == FLOE_COMMIT_NOOP)
            floe_log(FLOE_LOG_INFO, "serve: %s/%s: landing files already committed in "
                     "snapshot %lld", tbl, part, (long long)snapshot);
        files_free(&fc, rc == FLOE_COMMIT_NOOP);
        atomic_fetch_add(&s->m.commits, 1);
        rc = lease_finish(s, &l, "committed", snapshot, err);
        goto done;
    }
    if (rc == FLOE_EUNKNOWN_STATE) {
        /* nothing may be deleted; the lease expires and the retry settles it */
        files_free(&fc, false);
        atomic_fetch_add(&s->m.commit_failures, 1);
        goto done;
    }
    if (rc == FLOE_ECONFLICT)
        atomic_fetch_add(&s->m.conflicts, 1);
    atomic_fetch_add(&s->m.commit_failures, 1);
    files_free(&fc, true);
release : {
    floe_error e2;
    floe_error_clear(&e2);
    lease_finish(s, &l, "pending", 0, &e2);
}
done:
    if (rc >= 0 && l.n)
        atomic_fetch_add(&s->m.compactions, 1);
    files_free(&fc, false);
    floe_convert_result_free(&res);
    floe_schema_free(schema);
    floe_free(out_dir);
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
