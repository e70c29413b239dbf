/*
 * landing.c - partition buffers, sealing into landing files, the landing index and the
 * idempotency answers (DESIGN.md "The four paths" 2, I1, I2, I5).
 *
 * Buffers. The WAL writer hands every durable frame to srv_landing_apply, which appends
 * each records section (one zstd frame of NDJSON) to the buffer of its (table, partition)
 * and each quarantine section to the table's quarantine buffer. A buffer therefore holds
 * a contiguous run of frame ids per partition, in order.
 *
 * Sealing (the sealer thread). A buffer past its size or age is detached, written as an
 * immutable file (zstd frames concatenated = one valid .zst stream) with fsync of file
 * and folder, and registered in the index with the first and last frame id it holds.
 * Only then are the WAL segments it came from released.
 *
 * Why replay cannot duplicate: at recovery a records section of frame F for partition P
 * is skipped when the index holds a file of this node for P whose last frame is >= F (a
 * buffer always seals a prefix of P's frames). A file on disk without an index row is
 * deleted at start: its records are still in the WAL (segments are released only after
 * registration) and will be sealed again.
 *
 * Invariant: a segment is deleted only when (a) no buffer or sealing job holds a record
 * from it, (b) every idempotency answer written before it was closed is in the index, and
 * (c) it is not the segment being written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "floe/io.h"
#include "floe/quarantine.h"
#include "server_internal.h"

#define PBUF_BUCKETS 1024
#define IDEM_BUCKETS 4096

static uint64_t hash_str(const char *s, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

/* ---- the index ------------------------------------------------------------------- */

static const char index_schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS landing_files("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " node TEXT NOT NULL, seq INTEGER NOT NULL,"
    " tbl TEXT NOT NULL, part TEXT NOT NULL, kind INTEGER NOT NULL,"
    " uri TEXT NOT NULL, bytes INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,"
    " records INTEGER NOT NULL, first_frame INTEGER NOT NULL, last_frame INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL, state TEXT NOT NULL,"
    " lease_until_ms INTEGER, snapshot_id INTEGER,"
    " UNIQUE(node, seq));"
    "CREATE INDEX IF NOT EXISTS landing_by_state ON landing_files(tbl, state, part);"
    /* the start-up reconcile looks every landing file up by uri: without this, a scan
     * per file (start-up time grew with the square of the files kept; bench/soak) */
    "CREATE INDEX IF NOT EXISTS landing_by_uri ON landing_files(uri);"
    "CREATE TABLE IF NOT EXISTS idempotency("
    " tbl_key TEXT PRIMARY KEY, created_ms INTEGER NOT NULL, answer TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS node_state(node TEXT PRIMARY KEY, next_frame INTEGER);";

int srv_index_exec(floe_server *s, const char *sql, floe_error *err) {
    char *msg = NULL;
    int rc = sqlite3_exec(s->land.db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        floe_error_sys(err, rc == SQLITE_BUSY ? FLOE_EBUSY : FLOE_EIO, rc,
                       "landing index: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return err ? err->code : FLOE_EIO;
    }
    return 0;
}

static int db_fail(floe_server *s, floe_error *err, const char *what) {
    int rc = sqlite3_errcode(s->land.db);
    return floe_error_sys(err, rc == SQLITE_BUSY ? FLOE_EBUSY : FLOE_EIO, rc,
                          "landing index: %s: %s", what, sqlite3_errmsg(s->land.db));
}

/* ---- buffers --------------------------------------------------------------------- */

static pbuf *pbuf_find(srv_landing *l, const char *table, const char *part, size_t partlen,
                       int kind, bool create) {
    size_t tl = strlen(table);
    uint64_t h = hash_str(table, tl, 14695981039346656037ull);
    h = hash_str(part, partlen, h ^ 0xff) + (uint64_t)kind;
    pbuf **slot = &l->buckets[h % l->nbuckets];
    for (pbuf *b = *slot; b; b = b->next)
        if (b->kind == kind && !strcmp(b->table, table) && strlen(b->part) == partlen &&
            !memcmp(b->part, part, partlen))
            return b;
    if (!create)
        return NULL;
    pbuf *b = floe_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->table = floe_strdup(table);
    b->part = floe_strndup(part, partlen);
    if (!b->table || !b->part) {
        floe_free(b->table);
        floe_free(b->part);
        floe_free(b);
        return NULL;
    }
    b->kind = kind;
    floe_buf_init(&b->data, 0);
    b->next = *slot;
    *slot = b;
    l->nbufs++;
    return b;
}

static int segref_add(seg_ref **arr, size_t *n, size_t *cap, uint64_t segno, int64_t d) {
    for (size_t i = *n; i-- > 0;)
        if ((*arr)[i].segno == segno) {
            (*arr)[i].refs += d;
            return 0;
        }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        seg_ref *a = floe_realloc(*arr, nc * sizeof *a);
        if (!a)
            return FLOE_ENOMEM;
        *arr = a;
        *cap = nc;
    }
    /* keep ascending order */
    size_t i = *n;
    while (i > 0 && (*arr)[i - 1].segno > segno) {
        (*arr)[i] = (*arr)[i - 1];
        i--;
    }
    (*arr)[i].segno = segno;
    (*arr)[i].refs = d;
    (*n)++;
    return 0;
}

void srv_landing_segment_opened(floe_server *s, uint64_t segno) {
    srv_landing *l = &s->land;
    pthread_mutex_lock(&l->mu);
    (void)segref_add(&l->segs, &l->nsegs, &l->segs_cap, segno, 0);
    pthread_mutex_unlock(&l->mu);
}

/* ---- idempotency ------------------------------------------------------------------ */

static idem_entry **idem_slot(srv_landing *l, const char *k) {
    uint64_t h = hash_str(k, strlen(k), 14695981039346656037ull);
    idem_entry **p = &l->ibuckets[h % l->nibuckets];
    while (*p && strcmp((*p)->key, k))
        p = &(*p)->next;
    return p;
}

static char *idem_key(const char *table, const char *key) {
    return floe_asprintf("%s\n%s", table, key);
}

int srv_idem_begin(floe_server *s, const char *table, const char *key, char **answer) {
    srv_landing *l = &s->land;
    char *k = idem_key(table, key);
    if (!k)
        return FLOE_ENOMEM;
    int rc = 0;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        idem_entry **p = idem_slot(l, k);
        if (!*p)
            break;
        if ((*p)->done) {
            *answer = floe_strdup((*p)->answer);
            rc = *answer ? 1 : FLOE_ENOMEM;
            goto done;
        }
        /* the same key is in flight: its answer is the one to give */
        pthread_cond_wait(&l->cv_idem, &l->mu);
    }
    pthread_mutex_lock(&l->idx_mu);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(l->db, "SELECT answer FROM idempotency WHERE tbl_key=?1 AND "
                           "created_ms>=?2", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, floe_wall_ms() - s->cfg.idempotency_window_ms);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *answer = floe_strdup((const char *)sqlite3_column_text(st, 0));
            rc = *answer ? 1 : FLOE_ENOMEM;
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc)
        goto done;
    idem_entry *e = floe_calloc(1, sizeof *e);
    if (!e) {
        rc = FLOE_ENOMEM;
        goto done;
    }
    e->key = k;
    k = NULL;
    e->created_ms = floe_wall_ms();
    idem_entry **p = idem_slot(l, e->key);
    *p = e;
done:
    pthread_mutex_unlock(&l->mu);
    floe_free(k);
    return rc;
}

void srv_idem_abort(floe_server *s, const char *table, const char *key) {
    srv_landing *l = &s->land;
    char *k = idem_key(table, key);
    if (!k)
        return; /* the entry stays in flight: a retry would wait; nothing else can */
    pthread_mutex_lock(&l->mu);
    idem_entry **p = idem_slot(l, k);
    if (*p && !(*p)->done) {
        idem_entry *e = *p;
        *p = e->next;
        floe_free(e->key);
        floe_free(e->answer);
        floe_free(e);
    }
    pthread_cond_broadcast(&l->cv_idem);
    pthread_mutex_unlock(&l->mu);
    floe_free(k);
}

/* Called with l->mu held. */
static int idem_done(floe_server *s, const char *table, size_t tl, const uint8_t *key,
                     size_t kl, const uint8_t *ans, size_t al, uint64_t frame_id,
                     uint64_t time_ms) {
    srv_landing *l = &s->land;
    char *k = floe_asprintf("%.*s\n%.*s", (int)tl, table, (int)kl, (const char *)key);
    char *a = floe_asprintf("{\"batch_id\":\"%s-%llu\",%.*s", s->node,
                            (unsigned long long)frame_id, (int)al, (const char *)ans);
    if (!k || !a) {
        floe_free(k);
        floe_free(a);
        return FLOE_ENOMEM;
    }
    idem_entry **p = idem_slot(l, k);
    idem_entry *e = *p;
    if (!e) {
        e = floe_calloc(1, sizeof *e);
        if (!e) {
            floe_free(k);
            floe_free(a);
            return FLOE_ENOMEM;
        }
        e->key = k;
        e->created_ms = (int64_t)time_ms;
        *p = e;
    } else {
        floe_free(k);
        if (e->done) { /* replay of a key already known: keep the first answer */
            floe_free(a);
            return 0;
        }
    }
    floe_free(e->answer);
    e->answer = a;
    e->done = true;
    pthread_cond_broadcast(&l->cv_idem);
    return 0;
}

/* Write the answers not yet in the index, then forget them in memory. */
static int idem_persist(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    size_t n = 0, cap = 0;
    idem_entry **todo = NULL;
    int rc = 0;
    pthread_mutex_lock(&l->mu);
    for (size_t b = 0; b < l->nibuckets; b++)
        for (idem_entry *e = l->ibuckets[b]; e; e = e->next)
            if (e->done && !e->persisted) {
                if (n == cap) {
                    size_t nc = cap ? cap * 2 : 64;
                    idem_entry **t = floe_realloc(todo, nc * sizeof *t);
                    if (!t) {
                        rc = FLOE_ENOMEM;
                        break;
                    }
                    todo = t;
                    cap = nc;
                }
                todo[n++] = e; /* entries are only freed by this thread (below) */
            }
    pthread_mutex_unlock(&l->mu);
    if (rc < 0 || n == 0)
        goto done;
    pthread_mutex_lock(&l->idx_mu);
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(l->db, "INSERT OR IGNORE INTO idempotency(tbl_key, created_ms, "
                           "answer) VALUES(?1,?2,?3)", -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(s, err, "store answers");
    } else {
        for (size_t i = 0; i < n && rc == 0; i++) {
            sqlite3_bind_text(st, 1, todo[i]->key, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, todo[i]->created_ms);
            sqlite3_bind_text(st, 3, todo[i]->answer, -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = db_fail(s, err, "store answer");
            sqlite3_reset(st);
        }
    }
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_fail(s, err, "commit answers");
    if (rc < 0)
        sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc < 0)
        goto done;
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < n; i++) {
        idem_entry **p = idem_slot(l, todo[i]->key);
        if (*p == todo[i]) {
            *p = todo[i]->next;
            floe_free(todo[i]->key);
            floe_free(todo[i]->answer);
            floe_free(todo[i]);
        }
    }
    pthread_mutex_unlock(&l->mu);
done:
    floe_free(todo);
    return rc;
}

/* ---- apply a durable frame ---------------------------------------------------------- */

int srv_landing_apply(floe_server *s, const floe_frame_view *f, uint64_t segno, bool replay,
                      floe_error *err) {
    srv_landing *l = &s->land;
    int rc = 0;
    size_t pos = 0;
    floe_frame_section sec;
    pthread_mutex_lock(&l->mu);
    while (floe_frame_next_section(f, &pos, &sec)) {
        if (sec.kind == FLOE_SECTION_ANSWER) {
            const uint8_t *nul = memchr(sec.route, 0, sec.route_len);
            if (!nul)
                continue;
            size_t tl = (size_t)(nul - sec.route);
            rc = idem_done(s, (const char *)sec.route, tl, nul + 1, sec.route_len - tl - 1,
                           sec.stored, sec.stored_len, f->frame_id, f->time_ms);
            if (rc < 0)
                break;
            continue;
        }
        const uint8_t *nul = memchr(sec.route, 0, sec.route_len);
        size_t tl = nul ? (size_t)(nul - sec.route) : sec.route_len;
        char table[256];
        if (tl == 0 || tl >= sizeof table)
            continue; /* not a route this server writes */
        memcpy(table, sec.route, tl);
        table[tl] = 0;
        const char *part = nul ? (const char *)nul + 1 : "";
        size_t partlen = nul ? sec.route_len - tl - 1 : 0;
        pbuf *b = pbuf_find(l, table, part, partlen, sec.kind, true);
        if (!b) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
        if (replay && f->frame_id <= b->watermark)
            continue; /* already in a registered landing file */
        if (sec.kind == FLOE_SECTION_QUARANTINE && sec.codec == FLOE_CODEC_ZSTD_) {
            /* quarantine lines are kept plain: decode once here */
            unsigned long long sz = ZSTD_getFrameContentSize(sec.stored, sec.stored_len);
            if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
                sz != sec.raw_len || floe_buf_reserve(&b->data, (size_t)sz) < 0) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "frame %llu: bad quarantine section",
                                    (unsigned long long)f->frame_id);
                break;
            }
            size_t got = ZSTD_decompress(b->data.data + b->data.len, (size_t)sz, sec.stored,
                                         sec.stored_len);
            if (ZSTD_isError(got) || got != sz) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "frame %llu: bad quarantine section",
                                    (unsigned long long)f->frame_id);
                break;
            }
            b->data.len += got;
        } else if ((rc = floe_buf_append(&b->data, sec.stored, sec.stored_len)) < 0) {
            floe_error_set(err, rc, "out of memory");
            break;
        }
        if (b->records == 0) {
            b->first_frame = f->frame_id;
            b->created_ms = replay ? (int64_t)f->time_ms : floe_wall_ms();
        }
        b->records += sec.records;
        b->raw_bytes += sec.raw_len;
        b->last_frame = f->frame_id;
        if ((rc = segref_add(&b->segs, &b->nsegs, &b->segs_cap, segno, 1)) < 0 ||
            (rc = segref_add(&l->segs, &l->nsegs, &l->segs_cap, segno, 1)) < 0) {
            floe_error_set(err, rc, "out of memory");
            break;
        }
        atomic_fetch_add(&l->buffered_bytes, (int64_t)sec.stored_len);
    }
    bool wake = false;
    if (!replay && rc == 0)
        wake = true;
    if (wake)
        pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ---- sealing ---------------------------------------------------------------------- */

typedef struct seal_job {
    char *table, *part;
    int kind;
    floe_buf data;
    int64_t raw_bytes, records, created_ms;
    uint64_t first_frame, last_frame;
    seg_ref *segs;
    size_t nsegs;
} seal_job;

static void job_free(seal_job *j) {
    floe_free(j->table);
    floe_free(j->part);
    floe_buf_free(&j->data);
    floe_free(j->segs);
}

static int seal_write(floe_server *s, seal_job *j, floe_error *err) {
    srv_landing *l = &s->land;
    int64_t seq = l->next_seq; /* only the sealer thread touches next_seq */
    char name[128];
    char *uri = NULL;
    int rc = 0;
    if (j->kind == FLOE_SECTION_RECORDS) {
        snprintf(name, sizeof name, "%s-%010lld.ndjson.zst", s->node, (long long)seq);
        uri = *j->part ? floe_asprintf("%s/%s/%s/%s", s->landing_root, j->table, j->part, name)
                       : floe_asprintf("%s/%s/%s", s->landing_root, j->table, name);
    } else {
        snprintf(name, sizeof name, "%s-%010lld.ndjson", s->node, (long long)seq);
        uri = floe_asprintf("%s/%s/%s", s->quarantine_root, j->table, name);
    }
    if (!uri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_output_options oo = {.fsync = true, .no_overwrite = false};
    FLOE_CHECK(floe_io_write_all(uri, j->data.data, j->data.len, &oo, err));
    pthread_mutex_lock(&l->idx_mu);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(l->db,
                           "INSERT INTO landing_files(node, seq, tbl, part, kind, uri, bytes, "
                           "raw_bytes, records, first_frame, last_frame, created_ms, state) "
                           "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(s, err, "register landing file");
    } else {
        sqlite3_bind_text(st, 1, s->node, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, seq);
        sqlite3_bind_text(st, 3, j->table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, j->part, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, j->kind);
        sqlite3_bind_text(st, 6, uri, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, (int64_t)j->data.len);
        sqlite3_bind_int64(st, 8, j->raw_bytes);
        sqlite3_bind_int64(st, 9, j->records);
        sqlite3_bind_int64(st, 10, (int64_t)j->first_frame);
        sqlite3_bind_int64(st, 11, (int64_t)j->last_frame);
        sqlite3_bind_int64(st, 12, floe_wall_ms());
        sqlite3_bind_text(st, 13, j->kind == FLOE_SECTION_RECORDS ? "pending" : "quarantine",
                          -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_fail(s, err, "register landing file");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc < 0) {
        /* unregistered: remove it now (a restart would too); the WAL still has it */
        floe_io_delete(uri, NULL);
        goto done;
    }
    l->next_seq = seq + 1;
    atomic_fetch_add(&s->m.sealed_files, 1);
    atomic_fetch_add(&s->m.sealed_bytes, j->data.len);
done:
    floe_free(uri);
    return rc;
}

static int64_t table_setting(floe_server *s, const char *table, int which) {
    return srv_table_setting(s, table, which);
}

/* Delete WAL segments that nothing needs (see the invariant at the top). */
static void release_segments(floe_server *s, uint64_t closed_upto) {
    srv_landing *l = &s->land;
    for (;;) {
        uint64_t victim = 0;
        bool found = false;
        pthread_mutex_lock(&l->mu);
        for (size_t i = 0; i < l->nsegs; i++)
            if (l->segs[i].segno <= closed_upto && l->segs[i].refs == 0) {
                victim = l->segs[i].segno;
                memmove(&l->segs[i], &l->segs[i + 1], (l->nsegs - i - 1) * sizeof *l->segs);
                l->nsegs--;
                found = true;
                break;
            }
        pthread_mutex_unlock(&l->mu);
        if (!found)
            return;
        char *p = floe_asprintf("%s/wal-%020llu.log", s->wal_dir, (unsigned long long)victim);
        if (p) {
            if (unlink(p) != 0 && errno != ENOENT)
                floe_log(FLOE_LOG_WARN, "serve: cannot delete %s: %s", p, strerror(errno));
            floe_free(p);
        }
    }
}

void srv_landing_refresh_metrics(floe_server *s) {
    srv_landing *l = &s->land;
    pthread_mutex_lock(&l->idx_mu);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(l->db, "SELECT COUNT(*), COALESCE(SUM(bytes),0), MIN(created_ms) "
                           "FROM landing_files WHERE kind=1 AND state IN ('pending',"
                           "'compacting')", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        atomic_store(&l->pending_files, sqlite3_column_int64(st, 0));
        atomic_store(&l->pending_bytes, sqlite3_column_int64(st, 1));
        int64_t oldest = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0
                                                                  : sqlite3_column_int64(st, 2);
        atomic_store(&l->oldest_pending_ms, oldest);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&l->idx_mu);
}

static void *sealer_main(void *arg) {
    floe_server *s = arg;
    srv_landing *l = &s->land;
    seal_job *jobs = NULL;
    size_t njobs = 0, jobs_cap = 0;
    int64_t last_metrics = 0, last_expire = 0;
    int stop_rounds = 0;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        if (!l->stop && !l->force_seal && njobs == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 250 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&l->cv, &l->mu, &ts);
        }
        bool stop = l->stop, force = l->force_seal || l->stop;
        uint64_t gen = l->flush_gen;
        l->force_seal = false;
        int64_t now = floe_wall_ms();
        /* Detach buffers due for sealing, unless an older job of the same partition is
         * still waiting to be retried (its frames must be registered first). */
        for (size_t bi = 0; bi < l->nbuckets; bi++)
            for (pbuf *b = l->buckets[bi]; b; b = b->next) {
                if (b->records == 0)
                    continue;
                bool blocked = false;
                for (size_t k = 0; k < njobs && !blocked; k++)
                    blocked = jobs[k].kind == b->kind && !strcmp(jobs[k].table, b->table) &&
                              !strcmp(jobs[k].part, b->part);
                if (blocked)
                    continue;
                if (!force && b->raw_bytes < table_setting(s, b->table, SET_SEAL_BYTES) &&
                    now - b->created_ms < table_setting(s, b->table, SET_SEAL_AGE) &&
                    (int64_t)b->data.len < (64 << 20))
                    continue;
                if (njobs == jobs_cap) {
                    size_t nc = jobs_cap ? jobs_cap * 2 : 16;
                    seal_job *nj = floe_realloc(jobs, nc * sizeof *nj);
                    if (!nj)
                        continue;
                    jobs = nj;
                    jobs_cap = nc;
                }
                seal_job *j = &jobs[njobs];
                memset(j, 0, sizeof *j);
                j->table = floe_strdup(b->table);
                j->part = floe_strdup(b->part);
                if (!j->table || !j->part) {
                    job_free(j);
                    continue;
                }
                j->kind = b->kind;
                j->data = b->data;
                floe_buf_init(&b->data, 0);
                j->raw_bytes = b->raw_bytes;
                j->records = b->records;
                j->created_ms = b->created_ms;
                j->first_frame = b->first_frame;
                j->last_frame = b->last_frame;
                j->segs = b->segs;
                j->nsegs = b->nsegs;
                b->segs = NULL;
                b->nsegs = b->segs_cap = 0;
                b->raw_bytes = b->records = 0;
                b->first_frame = b->last_frame = 0;
                njobs++;
            }
        uint64_t active = atomic_load(&s->wal.active_seg);
        pthread_mutex_unlock(&l->mu);

        /* Seal in order; a failed job stays for the next round. */
        size_t kept = 0;
        char first_error[256] = "";
        for (size_t i = 0; i < njobs; i++) {
            floe_error e;
            floe_error_clear(&e);
            int rc = seal_write(s, &jobs[i], &e);
            if (rc < 0) {
                floe_log(FLOE_LOG_ERROR, "serve: sealing %s/%s failed (will retry): %s",
                         jobs[i].table, jobs[i].part, e.msg);
                if (!first_error[0])
                    snprintf(first_error, sizeof first_error, "sealing %.60s/%.60s: %.120s",
                             jobs[i].table, jobs[i].part, e.msg);
                jobs[kept++] = jobs[i];
                continue;
            }
            pthread_mutex_lock(&l->mu);
            for (size_t k = 0; k < jobs[i].nsegs; k++)
                segref_add(&l->segs, &l->nsegs, &l->segs_cap, jobs[i].segs[k].segno,
                           -jobs[i].segs[k].refs);
            atomic_fetch_sub(&l->buffered_bytes, (int64_t)jobs[i].data.len);
            pthread_mutex_unlock(&l->mu);
            job_free(&jobs[i]);
        }
        njobs = kept;
        floe_error e;
        floe_error_clear(&e);
        bool answers_ok = idem_persist(s, &e) == 0;
        if (!answers_ok)
            floe_log(FLOE_LOG_ERROR, "serve: storing idempotency answers: %s", e.msg);
        else if (active > 0)
            release_segments(s, active - 1);
        if (now - last_metrics >= 1000 || force) {
            srv_landing_refresh_metrics(s);
            last_metrics = now;
        }
        if (now - last_expire >= 60000) {
            char sql[160];
            snprintf(sql, sizeof sql, "DELETE FROM idempotency WHERE created_ms < %lld",
                     (long long)(now - s->cfg.idempotency_window_ms));
            pthread_mutex_lock(&l->idx_mu);
            srv_index_exec(s, sql, NULL);
            pthread_mutex_unlock(&l->idx_mu);
            last_expire = now;
        }
        if (force) {
            pthread_mutex_lock(&l->mu);
            if (njobs == 0 && gen > l->flush_done_gen) {
                l->flush_done_gen = gen;
            } else if (njobs && gen > l->flush_failed_gen) {
                /* the flush answers now (the records are safe in the WAL) */
                l->flush_failed_gen = gen;
                snprintf(l->flush_error, sizeof l->flush_error, "%s",
                         first_error[0] ? first_error : "sealing failed");
            }
            pthread_cond_broadcast(&l->cv_flush);
            pthread_mutex_unlock(&l->mu);
        }
        /* Stopping with jobs that keep failing (disk full, no file descriptors): give up
         * after a few rounds. Their records stay in the WAL (their segments keep their
         * references, so nothing deletes them) and the next start seals them again. */
        if (stop && njobs && ++stop_rounds >= 5)
            floe_log(FLOE_LOG_ERROR, "serve: stopping with %zu unsealed buffers: their "
                     "records stay in the WAL for the next start", njobs);
        if (stop && (njobs == 0 || !answers_ok || stop_rounds >= 5))
            break;
        if (njobs) /* retrying: do not spin */
            usleep(200000);
    }
    for (size_t i = 0; i < njobs; i++)
        job_free(&jobs[i]);
    floe_free(jobs);
    return NULL;
}

void srv_landing_release_all(floe_server *s) {
    srv_landing *l = &s->land;
    bool empty = true;
    pthread_mutex_lock(&l->mu);
    for (size_t bi = 0; bi < l->nbuckets && empty; bi++)
        for (pbuf *b = l->buckets[bi]; b && empty; b = b->next)
            empty = b->records == 0;
    pthread_mutex_unlock(&l->mu);
    if (empty && idem_persist(s, NULL) == 0)
        release_segments(s, UINT64_MAX);
}

int srv_landing_flush(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    pthread_mutex_lock(&l->mu);
    uint64_t gen = ++l->flush_gen;
    l->force_seal = true;
    pthread_cond_signal(&l->cv);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    int rc = 0;
    while (l->flush_done_gen < gen && l->flush_failed_gen < gen && rc == 0)
        if (pthread_cond_timedwait(&l->cv_flush, &l->mu, &ts) != 0)
            rc = floe_error_set(err, FLOE_ETIMEOUT, "flush: sealing did not finish in 60 s");
    if (rc == 0 && l->flush_done_gen < gen)
        rc = floe_error_set(err, FLOE_EIO, "flush: %s (the records stay in the WAL; sealing "
                            "is retried)", l->flush_error);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ---- open: index, watermarks, reconcile files ------------------------------------- */

typedef struct reconcile_ctx {
    floe_server *s;
    floe_strlist victims;
    size_t prefix_len;
} reconcile_ctx;

static int reconcile_file(void *ctx, const floe_io_entry *e) {
    reconcile_ctx *rc = ctx;
    floe_server *s = rc->s;
    const char *base = strrchr(e->uri, '/');
    base = base ? base + 1 : e->uri;
    size_t nl = strlen(s->node);
    if (strncmp(base, s->node, nl) != 0 || base[nl] != '-')
        return 0; /* another node's file, or the compactor's */
    bool tmp = strstr(base, ".floe-tmp-") != NULL;
    bool known = false;
    if (!tmp) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(s->land.db, "SELECT 1 FROM landing_files WHERE uri=?1", -1,
                               &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, e->uri, -1, SQLITE_STATIC);
            known = sqlite3_step(st) == SQLITE_ROW;
        }
        sqlite3_finalize(st);
    }
    if (!known)
        floe_strlist_push(&rc->victims, e->uri, NULL);
    return 0;
}

int srv_landing_open(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    int rc = 0;
    l->nbuckets = PBUF_BUCKETS;
    l->nibuckets = IDEM_BUCKETS;
    l->buckets = floe_calloc(l->nbuckets, sizeof *l->buckets);
    l->ibuckets = floe_calloc(l->nibuckets, sizeof *l->ibuckets);
    if (!l->buckets || !l->ibuckets)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_io_mkdirs(s->landing_root, err));
    FLOE_CHECK(floe_io_mkdirs(s->quarantine_root, err));
    char *path = floe_asprintf("%s/_index.db", s->landing_root);
    if (!path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    int src = sqlite3_open_v2(path, &l->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                              SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK) {
        rc = floe_error_sys(err, FLOE_EIO, src, "landing index %s: %s", path,
                            l->db ? sqlite3_errmsg(l->db) : sqlite3_errstr(src));
        floe_free(path);
        goto done;
    }
    floe_free(path);
    sqlite3_busy_timeout(l->db, 10000);
    FLOE_CHECK(srv_index_exec(s, index_schema, err));

    /* watermarks: the last frame of each partition already in a landing file */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(l->db, "SELECT tbl, part, kind, MAX(last_frame) FROM "
                           "landing_files WHERE node=?1 GROUP BY tbl, part, kind", -1, &st,
                           NULL) != SQLITE_OK)
        FLOE_FAIL(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(l->db));
    sqlite3_bind_text(st, 1, s->node, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        const char *p = (const char *)sqlite3_column_text(st, 1);
        pbuf *b = pbuf_find(l, t, p, strlen(p), sqlite3_column_int(st, 2), true);
        if (!b) {
            sqlite3_finalize(st);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        b->watermark = (uint64_t)sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(l->db, "SELECT COALESCE(MAX(seq),-1) FROM landing_files WHERE "
                           "node=?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, s->node, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            l->next_seq = sqlite3_column_int64(st, 0) + 1;
    }
    sqlite3_finalize(st);

    /* files without an index row: their records are still in the WAL */
    reconcile_ctx rctx = {.s = s};
    const char *roots[2] = {s->landing_root, s->quarantine_root};
    for (int i = 0; i < 2; i++)
        FLOE_CHECK(floe_io_list(roots[i], reconcile_file, &rctx, err));
    for (size_t i = 0; i < rctx.victims.n; i++) {
        floe_log(FLOE_LOG_INFO, "serve: removing unregistered landing file %s",
                 rctx.victims.items[i]);
        floe_io_delete(rctx.victims.items[i], NULL);
    }
    floe_strlist_free(&rctx.victims);

    /* rows whose file is gone; leases this node held before it stopped */
    st = NULL;
    if (sqlite3_prepare_v2(l->db, "SELECT id, uri FROM landing_files WHERE node=?1 AND "
                           "state IN ('pending','compacting')", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, s->node, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *u = (const char *)sqlite3_column_text(st, 1);
            bool ex = false;
            if (floe_io_exists(u, &ex, NULL) == 0 && !ex) {
                char sql[128];
                floe_log(FLOE_LOG_ERROR, "serve: landing file %s is registered but missing", u);
                snprintf(sql, sizeof sql, "UPDATE landing_files SET state='missing' WHERE id=%lld",
                         (long long)sqlite3_column_int64(st, 0));
                srv_index_exec(s, sql, NULL);
            }
        }
    }
    sqlite3_finalize(st);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE landing_files SET state='pending', lease_until_ms=NULL "
             "WHERE state='compacting' AND node='%s'", s->node);
    FLOE_CHECK(srv_index_exec(s, sql, err));
    srv_landing_refresh_metrics(s);
done:
    return rc;
}

uint64_t srv_landing_max_frame(floe_server *s) {
    uint64_t m = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->land.db, "SELECT COALESCE(MAX(last_frame),0) FROM landing_files "
                           "WHERE node=?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, s->node, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            m = (uint64_t)sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return m;
}

int srv_landing_start(floe_server *s, floe_error *err) {
    if (pthread_create(&s->land.thr, NULL, sealer_main, s) != 0)
        return floe_error_set(err, FLOE_EINTERNAL, "cannot start the sealer thread");
    s->land.thr_started = true;
    return 0;
}

void srv_landing_stop(floe_server *s) {
    srv_landing *l = &s->land;
    if (!l->thr_started)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thr, NULL);
    l->thr_started = false;
}

void srv_landing_close(floe_server *s) {
    srv_landing *l = &s->land;
    for (size_t i = 0; l->buckets && i < l->nbuckets; i++) {
        pbuf *b = l->buckets[i];
        while (b) {
            pbuf *n = b->next;
            floe_free(b->table);
            floe_free(b->part);
            floe_buf_free(&b->data);
            floe_free(b->segs);
            floe_free(b);
            b = n;
        }
    }
    for (size_t i = 0; l->ibuckets && i < l->nibuckets; i++) {
        idem_entry *e = l->ibuckets[i];
        while (e) {
            idem_entry *n = e->next;
            floe_free(e->key);
            floe_free(e->answer);
            floe_free(e);
            e = n;
        }
    }
    floe_free(l->buckets);
    floe_free(l->ibuckets);
    floe_free(l->segs);
    if (l->db)
        sqlite3_close(l->db);
    l->db = NULL;
}
