/*
 * landing.c - partition buffers, sealing into landing files, the landing index and the
 * idempotency answers (DESIGN.md "The four paths" 2, I1, I2, I5).
 *
 * Buffers. The WAL writer hands every durable frame to srv_landing_apply, which appends
 * each records section (one lz4 or zstd frame of NDJSON, or plain NDJSON; frame.h) to the
 * buffer of its (table, partition)
 * and each quarantine section to the table's quarantine buffer. A buffer therefore holds
 * a contiguous run of frame ids per partition, in order.
 *
 * Sealing (the sealer thread). A buffer past its size or age is detached, written as an
 * immutable file (frames of one codec concatenated = one valid .lz4 / .zst stream, or
 * plain NDJSON; a section of another codec is re-encoded on apply), made durable (fsync
 * of file and folder; a round of many buffers: one syncer for all, seal_batch), and
 * registered in the index with the first and last frame id it holds. Only then are the
 * WAL segments it came from released.
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

#include "common/keyset.h"
#include "floe/io.h"
#include "floe/quarantine.h"
#include "server_internal.h"

#define PBUF_BUCKETS 1024
#define IDEM_BUCKETS 4096
#define SEAL_BATCH_MIN 16 /* a round of fewer jobs seals each on its own (seal_one) */
#define SEAL_CHUNK 4096   /* jobs synced and registered together (seal_batch) */

/* ---- the index ------------------------------------------------------------------- */

/* One schema, two dialects: only the surrogate key differs. Tables:
 *   landing_files  one row per landing (kind 1) or quarantine (kind 2) file: who wrote it
 *                  (node, seq), where it is (uri), the frames it holds, its state
 *                  (pending, compacting + lease_until_ms + lease_owner, committed +
 *                  snapshot_id, quarantine, missing; `floe maintain` sets deleted)
 *   idempotency    answers by "<table>\n<key>" for the idempotency window
 *   idempotency_claims  keys being taken by a node (shared index)
 *   node_state     reserved
 * Times (created_ms, lease_until_ms) are the database's clock. */
static const char *const index_ddl_sqlite[] = {
    ("CREATE TABLE IF NOT EXISTS landing_files("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " node TEXT NOT NULL, seq INTEGER NOT NULL,"
    " tbl TEXT NOT NULL, part TEXT NOT NULL, kind INTEGER NOT NULL,"
    " uri TEXT NOT NULL, bytes INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,"
    " records INTEGER NOT NULL, first_frame INTEGER NOT NULL, last_frame INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL, state TEXT NOT NULL,"
    " lease_until_ms INTEGER, snapshot_id INTEGER, lease_owner TEXT,"
    " UNIQUE(node, seq))"),
    ("CREATE TABLE IF NOT EXISTS idempotency("
     " tbl_key TEXT PRIMARY KEY, created_ms INTEGER NOT NULL, answer TEXT NOT NULL)"),
    "CREATE TABLE IF NOT EXISTS node_state(node TEXT PRIMARY KEY, next_frame INTEGER)",
    ("CREATE TABLE IF NOT EXISTS idempotency_claims("
     " tbl_key TEXT PRIMARY KEY, node TEXT NOT NULL, created_ms INTEGER NOT NULL)"),
};
static const char *const index_ddl_pg[] = {
    ("CREATE TABLE IF NOT EXISTS landing_files("
    " id BIGSERIAL PRIMARY KEY,"
    " node TEXT NOT NULL, seq BIGINT NOT NULL,"
    " tbl TEXT NOT NULL, part TEXT NOT NULL, kind INTEGER NOT NULL,"
    " uri TEXT NOT NULL, bytes BIGINT NOT NULL, raw_bytes BIGINT NOT NULL,"
    " records BIGINT NOT NULL, first_frame BIGINT NOT NULL, last_frame BIGINT NOT NULL,"
    " created_ms BIGINT NOT NULL, state TEXT NOT NULL,"
    " lease_until_ms BIGINT, snapshot_id BIGINT, lease_owner TEXT,"
    " UNIQUE(node, seq))"),
    ("CREATE TABLE IF NOT EXISTS idempotency("
     " tbl_key TEXT PRIMARY KEY, created_ms BIGINT NOT NULL, answer TEXT NOT NULL)"),
    "CREATE TABLE IF NOT EXISTS node_state(node TEXT PRIMARY KEY, next_frame BIGINT)",
    ("CREATE TABLE IF NOT EXISTS idempotency_claims("
     " tbl_key TEXT PRIMARY KEY, node TEXT NOT NULL, created_ms BIGINT NOT NULL)"),
};
static const char index_by_state[] =
    "CREATE INDEX IF NOT EXISTS landing_by_state ON landing_files(tbl, state, part)";
/* the start-up reconcile looks every landing file up by uri: without this, a scan per
 * file (start-up time grew with the square of the files kept; bench/soak) */
static const char index_by_uri[] =
    "CREATE INDEX IF NOT EXISTS landing_by_uri ON landing_files(uri)";

/* The statements of the SQ_* enum (server_internal.h); $NOW stands for the database's
 * clock in milliseconds since the epoch. */
static const char *const sq_text[SQ_COUNT] = {
    [SQ_REGISTER] =
        "INSERT INTO landing_files(node, seq, tbl, part, kind, uri, bytes, raw_bytes, "
        "records, first_frame, last_frame, created_ms, state) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?,$NOW,?)",
    [SQ_IDEM_LOOKUP] = "SELECT answer FROM idempotency WHERE tbl_key=? AND "
                       "created_ms >= $NOW - CAST(? AS BIGINT)",
    /* (key, age, answer, window): an expired answer left under the key is replaced */
    [SQ_IDEM_STORE] =
        "INSERT INTO idempotency(tbl_key, created_ms, answer) "
        "VALUES(?, $NOW - CAST(? AS BIGINT), ?) ON CONFLICT (tbl_key) DO UPDATE SET "
        "created_ms = excluded.created_ms, answer = excluded.answer WHERE "
        "idempotency.created_ms < excluded.created_ms - CAST(? AS BIGINT)",
    [SQ_IDEM_EXPIRE] = "DELETE FROM idempotency WHERE created_ms < $NOW - CAST(? AS BIGINT)",
    /* (key, node, ttl): ours, new, or taken over when older than ttl */
    [SQ_IDEM_CLAIM] =
        "INSERT INTO idempotency_claims(tbl_key, node, created_ms) VALUES(?, ?, $NOW) "
        "ON CONFLICT (tbl_key) DO UPDATE SET node = excluded.node, created_ms = "
        "excluded.created_ms WHERE idempotency_claims.created_ms < excluded.created_ms - "
        "CAST(? AS BIGINT) OR idempotency_claims.node = excluded.node",
    /* rows: tbl, part, SUM(bytes), age of the oldest file in ms */
    [SQ_DUE] = "SELECT tbl, part, SUM(bytes), $NOW - MIN(created_ms) FROM landing_files "
               "WHERE kind=1 AND (state='pending' OR (state='compacting' AND "
               "lease_until_ms < $NOW)) GROUP BY tbl, part ORDER BY tbl, part",
    [SQ_LEASE_SELECT] =
        "SELECT id, node, seq, uri, bytes FROM landing_files WHERE tbl=? AND part=? AND "
        "kind=1 AND (state='pending' OR (state='compacting' AND lease_until_ms < $NOW)) "
        "ORDER BY id LIMIT 2000",
    /* (ttl, owner, id): the row changes only while it is still free */
    [SQ_LEASE_TAKE] =
        "UPDATE landing_files SET state='compacting', lease_until_ms = $NOW + "
        "CAST(? AS BIGINT), lease_owner = ? WHERE id=? AND kind=1 AND (state='pending' OR "
        "(state='compacting' AND lease_until_ms < $NOW))",
    [SQ_PENDING] = "SELECT COUNT(*), COALESCE(SUM(bytes),0), $NOW - MIN(created_ms) FROM "
                   "landing_files WHERE kind=1 AND state IN ('pending','compacting')",
};

/* b's bytes as a C string (b is given up), or NULL when rc < 0 or out of memory. */
static char *buf_string(floe_buf *b, int rc) {
    if (rc == 0)
        rc = floe_buf_append_byte(b, 0);
    if (rc < 0) {
        floe_buf_free(b);
        return NULL;
    }
    size_t len;
    return floe_buf_detach(b, &len);
}

/* tmpl with every $NOW replaced by the dialect's clock expression. Caller frees. */
static char *with_db_clock(const char *tmpl, const char *now) {
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = 0;
    for (const char *p = tmpl; *p && rc == 0;) {
        const char *at = strstr(p, "$NOW");
        size_t n = at ? (size_t)(at - p) : strlen(p);
        rc = floe_buf_append(&b, p, n);
        if (at && rc == 0)
            rc = floe_buf_append(&b, now, strlen(now));
        p = at ? at + 4 : p + n;
    }
    return buf_string(&b, rc);
}

const char *srv_i64(char buf[24], int64_t v) {
    snprintf(buf, 24, "%lld", (long long)v);
    return buf;
}

int64_t srv_atoi64(const char *v) {
    return v ? strtoll(v, NULL, 10) : 0;
}

int srv_index_exec(floe_server *s, const char *sql, const char *const *params,
                   size_t nparams, floe_error *err) {
    return floe_sql_exec(s->land.db, sql, params, nparams, NULL, err);
}

/* The first row's columns as numbers (NULL = 0, null[i] set). */
typedef struct row_nums {
    int64_t v[4];
    bool null[4];
    bool got;
} row_nums;

static int first_row_nums(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    row_nums *r = ctx;
    if (r->got)
        return 0;
    r->got = true;
    for (size_t i = 0; i < n && i < 4; i++) {
        r->null[i] = cols[i] == NULL;
        r->v[i] = srv_atoi64(cols[i]);
    }
    return 0;
}

static int first_row_str(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    char **out = ctx;
    if (*out || n < 1)
        return 0;
    *out = floe_strdup(cols[0] ? cols[0] : "");
    return *out ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

static int ignore_rows(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)ctx;
    (void)cols;
    (void)n;
    (void)err;
    return 0;
}

int srv_index_mark_committed(floe_sql *db, const char *const *ids, size_t n,
                             const char *owner, int64_t snapshot, floe_error *err) {
    for (size_t i = 0; i < n; i++) {
        /* "<node>-<seq>": the node may hold '-', the sequence never does */
        const char *dash = strrchr(ids[i], '-');
        if (!dash || dash == ids[i])
            return floe_error_set(err, FLOE_EINVALID, "landing id %s: no <node>-<seq>", ids[i]);
        char *node = floe_strndup(ids[i], (size_t)(dash - ids[i]));
        if (!node)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        char seq[24], snap[24];
        const char *params[] = {snapshot ? srv_i64(snap, snapshot) : NULL, node,
                                srv_i64(seq, srv_atoi64(dash + 1)), owner};
        int64_t changed = 0;
        int rc = floe_sql_exec(db, "UPDATE landing_files SET state='committed', "
                               "lease_until_ms=NULL, lease_owner=NULL, snapshot_id=CAST(? AS "
                               "BIGINT) WHERE node=? AND seq=? AND kind=1 AND "
                               "state='compacting' AND lease_owner=?", params, 4, &changed,
                               err);
        floe_free(node);
        if (rc < 0)
            return rc;
        if (changed != 1)
            return floe_error_set(err, FLOE_ECANCELLED, "landing file %s is no longer leased "
                                  "to this worker (taken over, or committed by another): "
                                  "nothing committed", ids[i]);
    }
    return 0;
}

/* ---- buffers --------------------------------------------------------------------- */

static void pbuf_free(pbuf *b) {
    floe_free(b->table);
    floe_free(b->part);
    floe_buf_free(&b->data);
    floe_free(b->segs);
    floe_free(b);
}

/* What a buffer holds in memory, counted in buffered_bytes (what buffer_cap bounds): its
 * data's capacity (not the stored bytes: a quarantine section is decoded, a transcoded
 * one re-encoded), its keys and segment list, the structure and its bucket, and about
 * 16 bytes of allocator header each. Charging only the stored bytes let tens of
 * thousands of partitions of one small record each take ~20x buffer_cap, and made the
 * count drift below zero at every sealed quarantine buffer (decoded bytes subtracted
 * where compressed ones were added). */
static int64_t pbuf_mem(const pbuf *b) {
    return (int64_t)(sizeof *b + 2 * sizeof(pbuf *) + strlen(b->table) + strlen(b->part) + 2 +
                     b->data.cap + b->segs_cap * sizeof(seg_ref) + 4 * 16);
}

/* Count b's memory as it is now. Called with l->mu held. */
static void pbuf_recharge(srv_landing *l, pbuf *b) {
    int64_t m = pbuf_mem(b);
    atomic_fetch_add(&l->buffered_bytes, m - b->charged);
    b->charged = m;
}

static uint64_t pbuf_hash(const char *table, const char *part, size_t partlen, int kind) {
    uint64_t h = floe_fnv1a(table, strlen(table), FLOE_FNV1A_SEED);
    return floe_fnv1a(part, partlen, h ^ 0xff) + (uint64_t)kind;
}

/* Twice the buckets once there are twice as many buffers (a failed allocation keeps the
 * old table: only longer chains). Called with l->mu held. */
static void pbuf_rehash(srv_landing *l) {
    size_t nb = l->nbuckets * 2;
    pbuf **nt = floe_calloc(nb, sizeof *nt);
    if (!nt)
        return;
    for (size_t i = 0; i < l->nbuckets; i++)
        for (pbuf *b = l->buckets[i], *next; b; b = next) {
            next = b->next;
            pbuf **slot = &nt[pbuf_hash(b->table, b->part, strlen(b->part), b->kind) % nb];
            b->next = *slot;
            *slot = b;
        }
    floe_free(l->buckets);
    l->buckets = nt;
    l->nbuckets = nb;
}

static pbuf *pbuf_find(srv_landing *l, const char *table, const char *part, size_t partlen,
                       int kind, bool create) {
    uint64_t h = pbuf_hash(table, part, partlen, kind);
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
    pbuf_recharge(l, b);
    b->next = *slot;
    *slot = b;
    l->nbufs++;
    if (l->nbufs > 2 * l->nbuckets)
        pbuf_rehash(l);
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
    uint64_t h = floe_fnv1a(k, strlen(k), FLOE_FNV1A_SEED);
    idem_entry **p = &l->ibuckets[h % l->nibuckets];
    while (*p && strcmp((*p)->key, k))
        p = &(*p)->next;
    return p;
}

static char *idem_key(const char *table, const char *key) {
    return floe_asprintf("%s\n%s", table, key);
}

/* Drop this node's claim of k (shared index). Called with idx_mu. */
static void idem_unclaim(floe_server *s, const char *k) {
    const char *p[] = {k, s->node};
    FLOE_IGNORE_RESULT(floe_sql_exec(s->land.db,
                                     "DELETE FROM idempotency_claims WHERE tbl_key=? AND node=?",
                                     p, 2, NULL, NULL));
}

/* Shared index (several ingest nodes): claim the key before taking the request, so that
 * a retry reaching another node while this one works on it, or before its answer is
 * stored (the sealer stores answers every ~250 ms), is not taken as new. 0: claimed, or
 * answered meanwhile (*found set); FLOE_EBUSY: another node holds the key; another
 * negative code: the index could not be asked, and the request must not be taken (fail
 * closed: a retry is refused rather than maybe taken twice). A claim older than
 * IDEM_CLAIM_TTL_MS by the database's clock is a dead node's and is taken over (a node
 * drops its own claims when it starts again). Called with idx_mu. */
#define IDEM_CLAIM_TTL_MS (10 * 60 * 1000LL)

static int idem_claim(floe_server *s, const char *k, char **found) {
    srv_landing *l = &s->land;
    char ttl[24], window[24];
    const char *cp[] = {k, s->node, srv_i64(ttl, IDEM_CLAIM_TTL_MS)};
    int64_t claimed = 0;
    int rc = floe_sql_exec(l->db, l->q[SQ_IDEM_CLAIM], cp, 3, &claimed, NULL);
    if (rc == FLOE_EUNKNOWN_STATE) /* ours or not: claiming again settles it (same node) */
        rc = floe_sql_exec(l->db, l->q[SQ_IDEM_CLAIM], cp, 3, &claimed, NULL);
    if (rc < 0)
        return rc;
    /* the holder may have stored its answer and dropped its claim since our look-up */
    const char *ap[] = {k, srv_i64(window, s->cfg.idempotency_window_ms)};
    rc = floe_sql_query(l->db, l->q[SQ_IDEM_LOOKUP], ap, 2, first_row_str, found, NULL);
    if (rc < 0 || *found) {
        if (claimed > 0)
            idem_unclaim(s, k);
        return rc;
    }
    return claimed > 0 ? 0 : FLOE_EBUSY;
}

int srv_idem_begin(floe_server *s, const char *table, const char *key, char **answer) {
    srv_landing *l = &s->land;
    if (atomic_load(&s->offline))
        return FLOE_EIO; /* the index, and the answers in the WAL not replayed yet */
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
    {
        char window[24];
        char *found = NULL;
        const char *params[] = {k, srv_i64(window, s->cfg.idempotency_window_ms)};
        pthread_mutex_lock(&l->idx_mu);
        /* answers stored in the index are no longer in memory: a look-up that cannot be
         * made must not count as "not seen" */
        rc = floe_sql_query(l->db, l->q[SQ_IDEM_LOOKUP], params, 2, first_row_str, &found,
                            NULL);
        if (rc == 0 && !found && l->shared)
            rc = idem_claim(s, k, &found);
        pthread_mutex_unlock(&l->idx_mu);
        if (found) {
            *answer = found;
            rc = 1;
        } else if (rc < 0 && rc != FLOE_EBUSY && rc != FLOE_ENOMEM) {
            rc = FLOE_EIO;
        }
    }
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
        if (l->shared) { /* not taken: a retry may go anywhere */
            pthread_mutex_lock(&l->idx_mu);
            idem_unclaim(s, k);
            pthread_mutex_unlock(&l->idx_mu);
        }
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
    rc = floe_sql_begin(l->db, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* the answer's age by this node's clock, its time by the database's */
        char age[24], window[24];
        int64_t a = floe_wall_ms() - todo[i]->created_ms;
        const char *params[] = {todo[i]->key, srv_i64(age, a > 0 ? a : 0), todo[i]->answer,
                                srv_i64(window, s->cfg.idempotency_window_ms)};
        rc = floe_sql_exec(l->db, l->q[SQ_IDEM_STORE], params, 4, NULL, err);
        /* answer and claim change together: a look-up sees one or the other */
        const char *cp[] = {todo[i]->key, s->node};
        if (rc == 0 && l->shared)
            rc = floe_sql_exec(l->db, "DELETE FROM idempotency_claims WHERE tbl_key=? AND "
                               "node=?", cp, 2, NULL, err);
    }
    if (rc == 0)
        rc = floe_sql_commit(l->db, err);
    else
        floe_sql_rollback(l->db);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc == FLOE_EUNKNOWN_STATE)
        rc = FLOE_EIO; /* kept in memory and stored again: the insert is idempotent */
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

/* A records section whose codec is not its buffer's (landing_codec changed, or a WAL
 * written before the change is replayed into a buffer that already holds new frames):
 * re-encode it in the buffer's codec so the landing file stays one stream of one codec.
 * Rare; called with l->mu held. */
static int transcode_append(floe_server *s, pbuf *b, const floe_frame_section *sec,
                            floe_error *err) {
    srv_landing *l = &s->land;
    if (!l->coder && !(l->coder = floe_section_coder_new()))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_buf_reset(&l->xraw);
    FLOE_FORWARD_IF_ERROR(floe_section_decode(sec->codec, sec->stored, sec->stored_len,
                                              sec->raw_len, &l->xraw, err));
    int rc = floe_section_encode(l->coder, b->codec, (int)s->cfg.compression_level,
                                 l->xraw.data, l->xraw.len, &l->xenc);
    if (rc == 0)
        rc = floe_buf_append(&b->data, l->xenc.data, l->xenc.len);
    if (rc < 0)
        return floe_error_set(err, rc, "re-encoding a section: %s", floe_strerror(rc));
    /* do not pin a large section's buffers */
    if (l->xraw.cap > (8u << 20))
        floe_buf_free(&l->xraw);
    if (l->xenc.cap > (8u << 20))
        floe_buf_free(&l->xenc);
    return 0;
}

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
        if (sec.kind == FLOE_SECTION_QUARANTINE) {
            /* quarantine lines are kept plain: decode once here */
            if ((rc = floe_section_decode(sec.codec, sec.stored, sec.stored_len, sec.raw_len,
                                          &b->data, err)) < 0) {
                floe_error_prefix(err, "frame %llu: quarantine section: ",
                                  (unsigned long long)f->frame_id);
                break;
            }
        } else if (b->data.len == 0 || sec.codec == b->codec) {
            b->codec = sec.codec;
            if ((rc = floe_buf_append(&b->data, sec.stored, sec.stored_len)) < 0) {
                floe_error_set(err, rc, "out of memory");
                break;
            }
        } else if ((rc = transcode_append(s, b, &sec, err)) < 0) {
            floe_error_prefix(err, "frame %llu: ", (unsigned long long)f->frame_id);
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
        pbuf_recharge(l, b);
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
    uint8_t codec;          /* of data (records files) */
    floe_buf data;
    int64_t raw_bytes, records, created_ms;
    uint64_t first_frame, last_frame;
    seg_ref *segs;
    size_t nsegs;
    int64_t charged;        /* of buffered_bytes: the memory taken over from its buffer */
    int64_t seq;            /* its file's sequence once written (-1 before): kept for the
                             * retries, so a registration of unknown outcome is read back
                             * under the same (node, seq) and never made twice */
    char *uri;              /* its file once written */
    bool failed;            /* this round: left for the next one */
} seal_job;

static void job_free(seal_job *j) {
    floe_free(j->table);
    floe_free(j->part);
    floe_buf_free(&j->data);
    floe_free(j->segs);
    floe_free(j->uri);
}

/* Register the file of job j (as j->seq, at j->uri, `bytes` long) in the index. A file
 * of records ends up `state` (pending, or quarantine when its records could not be
 * sealed); a quarantine section's file is kind 2. 0, or an error after which the file is
 * not registered (FLOE_EUNKNOWN_STATE: maybe it is - keep the file, the retry decides). */
static int register_file(floe_server *s, const seal_job *j, int64_t seq, const char *uri,
                         int64_t bytes, const char *state, floe_error *err);

/* The parameters of SQ_REGISTER for j's file (p: 7 numbers' room). */
static void register_params(floe_server *s, const seal_job *j, int64_t seq, const char *uri,
                            int64_t bytes, const char *state, char p[7][24],
                            const char *params[12]) {
    const char *v[12] = {
        s->node, srv_i64(p[0], seq), j->table, j->part, srv_i64(p[1], j->kind), uri,
        srv_i64(p[2], bytes), srv_i64(p[3], j->raw_bytes), srv_i64(p[4], j->records),
        srv_i64(p[5], (int64_t)j->first_frame), srv_i64(p[6], (int64_t)j->last_frame), state};
    memcpy(params, v, sizeof v);
}

static int register_file(floe_server *s, const seal_job *j, int64_t seq, const char *uri,
                         int64_t bytes, const char *state, floe_error *err) {
    srv_landing *l = &s->land;
    char p[7][24];
    const char *params[12];
    register_params(s, j, seq, uri, bytes, state, p, params);
    pthread_mutex_lock(&l->idx_mu);
    int rc = floe_sql_exec(l->db, l->q[SQ_REGISTER], params, 12, NULL, err);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc == FLOE_EUNKNOWN_STATE || rc == FLOE_EEXISTS) {
        /* The insert may have been applied (connection lost), or an earlier attempt's was:
         * read what is there (final: see floe/sql.h) before deciding. */
        char *have = NULL;
        const char *kp[] = {s->node, p[0]};
        pthread_mutex_lock(&l->idx_mu);
        int qrc = floe_sql_query(l->db, "SELECT uri FROM landing_files WHERE node=? AND seq=?",
                                 kp, 2, first_row_str, &have, NULL);
        pthread_mutex_unlock(&l->idx_mu);
        if (qrc == 0 && have && !strcmp(have, uri))
            rc = 0;
        else if (qrc < 0)
            rc = FLOE_EUNKNOWN_STATE;
        floe_free(have);
    }
    return rc;
}

/* Whether writing a landing file failed because of what the file is - its name, which
 * the file system or the object store refuses - rather than the state of the disk or the
 * store: trying again would fail the same way. */
static bool seal_error_permanent(const floe_error *e) {
    return e->sys == ENAMETOOLONG || e->sys == EILSEQ ||
           (e->sys == 400 && (strstr(e->msg, "KeyTooLongError") ||
                              strstr(e->msg, "InvalidObjectName")));
}

/* Write j's file, fsynced (file and folder) or not, under j->seq (the next sequence of
 * the node when j has none yet; only the sealer thread touches next_seq). *permanent is
 * set when the file could not be written for good (seal_error_permanent). */
static int job_write(floe_server *s, seal_job *j, bool fsync, bool *permanent,
                     floe_error *err) {
    srv_landing *l = &s->land;
    int64_t seq = j->seq >= 0 ? j->seq : l->next_seq;
    char name[128];
    *permanent = false;
    if (!j->uri) {
        if (j->kind == FLOE_SECTION_RECORDS) {
            /* the reader sniffs the codec from the bytes; the suffix is for people */
            snprintf(name, sizeof name, "%s-%010lld.ndjson%s", s->node, (long long)seq,
                     j->codec == FLOE_CODEC_ZSTD_  ? ".zst"
                     : j->codec == FLOE_CODEC_LZ4_ ? ".lz4"
                                                   : "");
            j->uri = *j->part
                         ? floe_asprintf("%s/%s/%s/%s", s->landing_root, j->table, j->part, name)
                         : floe_asprintf("%s/%s/%s", s->landing_root, j->table, name);
        } else {
            snprintf(name, sizeof name, "%s-%010lld.ndjson", s->node, (long long)seq);
            j->uri = floe_asprintf("%s/%s/%s", s->quarantine_root, j->table, name);
        }
        if (!j->uri)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_output_options oo = {.fsync = fsync, .no_overwrite = false};
    int rc = floe_io_write_all(s->cfg.io, j->uri, j->data.data, j->data.len, &oo, err);
    if (rc < 0) {
        *permanent = j->kind == FLOE_SECTION_RECORDS && seal_error_permanent(err);
        if (j->seq < 0) { /* the name goes with the sequence: made again with the next */
            floe_free(j->uri);
            j->uri = NULL;
        }
        return rc;
    }
    if (j->seq < 0) {
        j->seq = seq;
        l->next_seq = seq + 1;
    }
    return 0;
}

/* j's file is registered (rc 0), or is not (an error): keep the file when its
 * registration's outcome is unknown (the retry decides), else delete it (a restart
 * would too; the WAL still has its records). Counts a registered file. */
static int job_registered(floe_server *s, seal_job *j, int rc) {
    srv_landing *l = &s->land;
    if (rc == FLOE_EUNKNOWN_STATE)
        return rc;
    if (rc < 0) {
        floe_io_delete(s->cfg.io, j->uri, NULL);
        return rc;
    }
    if (j->kind == FLOE_SECTION_RECORDS) /* the backlog grows now, not at the next refresh */
        atomic_fetch_add(&l->pending_bytes, (int64_t)j->data.len);
    atomic_fetch_add(&s->m.sealed_files, 1);
    atomic_fetch_add(&s->m.sealed_bytes, j->data.len);
    return 0;
}

/* The records of a job whose landing file cannot be written (job_write's *permanent)
 * go to the table's quarantine instead, one line each with the reason, in a file
 * registered like a landing file of the partition but in state 'quarantine': never
 * compacted, and the WAL replay skips its frames as it skips sealed ones. Accepted events
 * are then never retried forever; they are counted in /metrics and reported by
 * /healthz. */
static int seal_quarantine(floe_server *s, seal_job *j, const char *why, floe_error *err) {
    srv_landing *l = &s->land;
    int64_t seq = l->next_seq;
    floe_buf raw;
    floe_buf_init(&raw, 0);
    floe_quarantine *q = NULL;
    char *uri = floe_asprintf("%s/%s/%s-%010lld.ndjson", s->quarantine_root, j->table, s->node,
                              (long long)seq);
    char *reason = floe_asprintf("the landing file of partition %s cannot be written: %s",
                                 j->part, why);
    char *source = floe_asprintf("serve %s frames %llu-%llu", j->table,
                                 (unsigned long long)j->first_frame,
                                 (unsigned long long)j->last_frame);
    bool written = false;
    int rc = 0;
    if (!uri || !reason || !source)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_section_decode_all(j->codec, j->data.data, j->data.len,
                                       (size_t)j->raw_bytes, &raw, err));
    FLOE_CHECK(floe_quarantine_open(s->cfg.io, uri, &q, err));
    int64_t line = 0;
    for (size_t off = 0; off < raw.len;) {
        const uint8_t *nl = memchr(raw.data + off, '\n', raw.len - off);
        size_t end = nl ? (size_t)(nl - raw.data) : raw.len;
        if (end > off)
            FLOE_CHECK(floe_quarantine_add(q, source, ++line, (int64_t)off, reason,
                                           raw.data + off, end - off, err));
        off = end + 1;
    }
    rc = floe_quarantine_close(q, err);
    q = NULL;
    if (rc < 0)
        goto done;
    written = true;
    rc = register_file(s, j, seq, uri, (int64_t)raw.len, "quarantine", err);
    if (rc == FLOE_EUNKNOWN_STATE)
        written = false; /* maybe registered: keep the file */
    if (rc < 0)
        goto done;
    l->next_seq = seq + 1;
    atomic_fetch_add(&s->m.seal_quarantined_records, (uint64_t)j->records);
    pthread_mutex_lock(&l->mu);
    srv_note(l->seal_quarantine_reason, sizeof l->seal_quarantine_reason, "%s", reason);
    pthread_mutex_unlock(&l->mu);
    floe_log(FLOE_LOG_ERROR, "serve: %s: %lld records moved to the quarantine %s: %s",
             j->table, (long long)j->records, uri, reason);
done:
    if (q)
        FLOE_IGNORE_RESULT(floe_quarantine_close(q, NULL)); /* rc already says it failed */
    if (rc < 0 && written)
        floe_io_delete(s->cfg.io, uri, NULL);
    floe_buf_free(&raw);
    floe_free(uri);
    floe_free(reason);
    floe_free(source);
    return rc;
}

/* A job that failed this round: logged, its error the round's first one if it is. */
static void job_failed(seal_job *j, const floe_error *e, char *first_error) {
    j->failed = true;
    floe_log(FLOE_LOG_ERROR, "serve: sealing %s/%s failed (will retry): %s", j->table, j->part,
             e->msg);
    if (!first_error[0])
        srv_note(first_error, SRV_NOTE_MAX, "sealing %s/%s: %s", j->table, j->part, e->msg);
}

/* A job whose file could not be written: its records go to the quarantine when that is
 * for good (*permanent), else it fails this round. */
static void job_write_failed(floe_server *s, seal_job *j, bool permanent, const floe_error *e,
                             char *first_error) {
    atomic_fetch_add(&s->m.seal_failures, 1);
    floe_error qe;
    floe_error_clear(&qe);
    if (permanent && seal_quarantine(s, j, e->msg, &qe) == 0)
        return;
    if (permanent)
        floe_log(FLOE_LOG_ERROR, "serve: moving the records of %s/%s to the quarantine: %s",
                 j->table, j->part, qe.msg);
    job_failed(j, e, first_error);
}

/* One job on its own: written, fsynced (file and folder) and registered. */
static void seal_one(floe_server *s, seal_job *j, char *first_error) {
    floe_error e;
    floe_error_clear(&e);
    bool permanent = false;
    int rc = job_write(s, j, true, &permanent, &e);
    if (rc < 0) {
        job_write_failed(s, j, permanent, &e, first_error);
        return;
    }
    rc = register_file(s, j, j->seq, j->uri, (int64_t)j->data.len,
                       j->kind == FLOE_SECTION_RECORDS ? "pending" : "quarantine", &e);
    if (job_registered(s, j, rc) < 0) {
        atomic_fetch_add(&s->m.seal_failures, 1);
        job_failed(j, &e, first_error);
    }
}

/* INSERT of n rows: SQ_REGISTER's VALUES tuple n times. Caller frees. */
static char *register_rows_sql(const char *one, size_t n) {
    const char *values = strstr(one, "VALUES");
    if (!values)
        return NULL;
    const char *tuple = values + 6;
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = floe_buf_append(&b, one, strlen(one));
    for (size_t i = 1; i < n && rc == 0; i++) {
        rc = floe_buf_append_byte(&b, ',');
        if (rc == 0)
            rc = floe_buf_append(&b, tuple, strlen(tuple));
    }
    return buf_string(&b, rc);
}

/* Register the files of jobs idx[0..n) in one transaction, REGISTER_ROWS rows a
 * statement (a statement is parsed at every call: one a row cost more than the insert).
 * All or none: an error leaves none registered, or (FLOE_EUNKNOWN_STATE) all or none. */
#define REGISTER_ROWS 64 /* x 12 parameters: within SQLite's and PostgreSQL's limits */
static int register_many(floe_server *s, const seal_job *jobs, const size_t *idx, size_t n,
                         floe_error *err) {
    srv_landing *l = &s->land;
    size_t nrest = n % REGISTER_ROWS;
    char *full = n >= REGISTER_ROWS ? register_rows_sql(l->q[SQ_REGISTER], REGISTER_ROWS) : NULL;
    char *rest = nrest ? register_rows_sql(l->q[SQ_REGISTER], nrest) : NULL;
    const char **params = floe_malloc(REGISTER_ROWS * 12 * sizeof *params);
    char(*nums)[7][24] = floe_malloc(REGISTER_ROWS * sizeof *nums);
    int rc = 0;
    if ((n >= REGISTER_ROWS && !full) || (nrest && !rest) || !params || !nums) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto done;
    }
    pthread_mutex_lock(&l->idx_mu);
    rc = floe_sql_begin(l->db, err);
    for (size_t k = 0; k < n && rc == 0; k += REGISTER_ROWS) {
        size_t m = n - k < REGISTER_ROWS ? n - k : REGISTER_ROWS;
        for (size_t r = 0; r < m; r++) {
            const seal_job *j = &jobs[idx[k + r]];
            register_params(s, j, j->seq, j->uri, (int64_t)j->data.len, "pending", nums[r],
                            params + 12 * r);
        }
        rc = floe_sql_exec(l->db, m == REGISTER_ROWS ? full : rest, params, 12 * m,
                           NULL, err);
    }
    if (rc == 0)
        rc = floe_sql_commit(l->db, err);
    if (rc < 0)
        floe_sql_rollback(l->db);
    pthread_mutex_unlock(&l->idx_mu);
done:
    floe_free(full);
    floe_free(rest);
    floe_free(params);
    floe_free(nums);
    return rc;
}

/* Many jobs together (a round of SEAL_BATCH_MIN or more; at most SEAL_CHUNK at once):
 * every landing file is written without its own fsync, all are made durable by one
 * syncer (floe/io.h: one syncfs of the warehouse's file system where it can, instead of
 * a fsync of every file and of its folder - two device flushes a partition made sealing
 * 15,000 one-record partitions take over a minute), and only then registered, in one
 * transaction (one commit of the index instead of one a file). A failed transaction is
 * redone one file at a time, reading back what it may have left (register_file), so a
 * file is registered once. Quarantine files (kind 2) go one by one, as before. */
static void seal_batch(floe_server *s, seal_job *jobs, size_t n, char *first_error) {
    floe_error e;
    floe_error_clear(&e);
    floe_io_syncer *sy = NULL;
    const char **uris = floe_malloc(n * sizeof *uris);
    size_t *idx = floe_malloc(n * sizeof *idx);
    if (!uris || !idx ||
        floe_io_syncer_open(s->cfg.io, s->landing_root, SEAL_BATCH_MIN, &sy, &e) < 0) {
        if (e.msg[0])
            floe_log(FLOE_LOG_WARN, "serve: sealing one file at a time: %s", e.msg);
        for (size_t i = 0; i < n; i++)
            seal_one(s, &jobs[i], first_error);
        goto done;
    }
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
        seal_job *j = &jobs[i];
        if (j->kind != FLOE_SECTION_RECORDS) {
            seal_one(s, j, first_error);
            continue;
        }
        bool permanent = false;
        floe_error_clear(&e);
        if (job_write(s, j, false, &permanent, &e) < 0) {
            job_write_failed(s, j, permanent, &e, first_error);
            continue;
        }
        uris[nw] = j->uri;
        idx[nw++] = i;
    }
    floe_error_clear(&e);
    if (nw && floe_io_syncer_sync(sy, uris, nw, &e) < 0) {
        for (size_t k = 0; k < nw; k++) {
            atomic_fetch_add(&s->m.seal_failures, 1);
            FLOE_IGNORE_RESULT(job_registered(s, &jobs[idx[k]], FLOE_EIO)); /* deletes it */
            job_failed(&jobs[idx[k]], &e, first_error);
        }
        goto done;
    }
    int rc = nw ? register_many(s, jobs, idx, nw, &e) : 0;
    if (rc < 0)
        floe_log(FLOE_LOG_WARN, "serve: registering %zu landing files together: %s "
                 "(registered one at a time)", nw, e.msg);
    for (size_t k = 0; k < nw; k++) {
        seal_job *j = &jobs[idx[k]];
        int r = rc;
        if (rc < 0) {
            floe_error_clear(&e);
            r = register_file(s, j, j->seq, j->uri, (int64_t)j->data.len, "pending", &e);
        }
        if (job_registered(s, j, r) < 0) {
            atomic_fetch_add(&s->m.seal_failures, 1);
            job_failed(j, &e, first_error);
        }
    }
done:
    floe_io_syncer_close(sy);
    floe_free(uris);
    floe_free(idx);
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
    row_nums r = {0};
    pthread_mutex_lock(&l->idx_mu);
    int rc = floe_sql_query(l->db, l->q[SQ_PENDING], NULL, 0, first_row_nums, &r, NULL);
    pthread_mutex_unlock(&l->idx_mu);
    if (rc == 0 && r.got) {
        atomic_store(&l->pending_files, r.v[0]);
        atomic_store(&l->pending_bytes, r.v[1]);
        /* the oldest file's age by the database's clock, as a time on this node's */
        atomic_store(&l->oldest_pending_ms, r.null[2] ? 0 : floe_wall_ms() - r.v[2]);
        pthread_mutex_lock(&l->mu);
        pthread_cond_broadcast(&l->cv_backlog);
        pthread_mutex_unlock(&l->mu);
    }
}

bool srv_landing_health(floe_server *s, floe_buf *b) {
    srv_landing *l = &s->land;
    uint64_t quarantined = atomic_load(&s->m.seal_quarantined_records);
    pthread_mutex_lock(&l->mu);
    int64_t since = l->seal_failing_since_ms;
    bool ok = !since || floe_wall_ms() - since < 60000;
    if (since)
        floe_buf_printf(b, "sealing: failing for %lld s (the records are safe in the WAL and "
                        "sealing is retried): %s\n", (long long)(floe_wall_ms() - since) / 1000,
                        l->seal_error);
    if (quarantined)
        floe_buf_printf(b, "sealing: %llu accepted records could not be written to a landing "
                        "file and are in the quarantine (last: %s)\n",
                        (unsigned long long)quarantined, l->seal_quarantine_reason);
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* Flow control between ingest and compaction: a closed loop of clients can post faster
 * than one compactor turns landing files into Parquet, and the landing backlog would then
 * grow without bound (bench/ingest saw 843 MiB after 20 s). Past max_pending_bytes a post
 * waits here for the compactor (which treats the backlog as due: compactor.c) before any
 * work is done, so the acknowledged rate settles at the rate compaction sustains. */
int srv_landing_wait_backlog(floe_server *s, int64_t wait_ms) {
    srv_landing *l = &s->land;
    int64_t cap = s->cfg.max_pending_bytes;
    if (cap <= 0 || atomic_load(&l->pending_bytes) <= cap)
        return 0;
    int64_t t0 = floe_now_ns() / 1000, deadline = t0 + wait_ms * 1000;
    int rc = 0;
    pthread_mutex_lock(&s->comp_mu); /* the compactor: the backlog is due now */
    pthread_cond_broadcast(&s->comp_cv);
    pthread_mutex_unlock(&s->comp_mu);
    pthread_mutex_lock(&l->mu);
    while (atomic_load(&l->pending_bytes) > cap && !l->stop && !atomic_load(&s->stopping)) {
        int64_t now = floe_now_ns() / 1000;
        if (now >= deadline) {
            rc = FLOE_EBUSY;
            break;
        }
        int64_t step = deadline - now < 100000 ? deadline - now : 100000;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(step * 1000);
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&l->cv_backlog, &l->mu, &ts);
    }
    pthread_mutex_unlock(&l->mu);
    atomic_fetch_add(&s->m.backlog_waits, 1);
    atomic_fetch_add(&s->m.backlog_wait_us, (uint64_t)(floe_now_ns() / 1000 - t0));
    return rc;
}

static void *sealer_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-seal");
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
         * still waiting to be retried (its frames must be registered first). Only jobs
         * kept from earlier rounds can block: each buffer is detached once per round. */
        for (size_t bi = 0; bi < l->nbuckets; bi++)
            for (pbuf **pb = &l->buckets[bi]; *pb;) {
                pbuf *b = *pb;
                if (b->records == 0 && !b->sealing) {
                    /* nothing to seal and no job in flight: a buffer is made again by
                     * the next record of its partition (so partitions seen once do not
                     * cost the sealer's rounds for ever) */
                    *pb = b->next;
                    atomic_fetch_sub(&l->buffered_bytes, b->charged);
                    pbuf_free(b);
                    l->nbufs--;
                    continue;
                }
                pb = &b->next;
                if (b->records == 0 || b->sealing)
                    continue; /* an older job of this partition is registered first */
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
                j->seq = -1;
                j->table = floe_strdup(b->table);
                j->part = floe_strdup(b->part);
                if (!j->table || !j->part) {
                    job_free(j);
                    continue;
                }
                j->kind = b->kind;
                j->codec = b->codec;
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
                b->sealing = true;
                /* the data and segment list move to the job, with their charge */
                int64_t before = b->charged;
                b->charged = pbuf_mem(b);
                j->charged = before - b->charged;
                njobs++;
            }
        uint64_t active = atomic_load(&s->wal.active_seg);
        pthread_mutex_unlock(&l->mu);

        /* Seal in order; a failed job stays for the next round. */
        size_t kept = 0;
        char first_error[SRV_NOTE_MAX] = "";
        if (njobs < SEAL_BATCH_MIN) {
            for (size_t i = 0; i < njobs; i++)
                seal_one(s, &jobs[i], first_error);
        } else {
            for (size_t i = 0; i < njobs; i += SEAL_CHUNK)
                seal_batch(s, jobs + i, njobs - i < SEAL_CHUNK ? njobs - i : SEAL_CHUNK,
                           first_error);
        }
        for (size_t i = 0; i < njobs; i++) {
            if (jobs[i].failed) {
                jobs[i].failed = false;
                jobs[kept++] = jobs[i];
                continue;
            }
            pthread_mutex_lock(&l->mu);
            pbuf *b = pbuf_find(l, jobs[i].table, jobs[i].part, strlen(jobs[i].part),
                                jobs[i].kind, false);
            if (b)
                b->sealing = false;
            for (size_t k = 0; k < jobs[i].nsegs; k++)
                segref_add(&l->segs, &l->nsegs, &l->segs_cap, jobs[i].segs[k].segno,
                           -jobs[i].segs[k].refs);
            atomic_fetch_sub(&l->buffered_bytes, jobs[i].charged);
            pthread_mutex_unlock(&l->mu);
            job_free(&jobs[i]);
        }
        njobs = kept;
        pthread_mutex_lock(&l->mu);
        if (njobs && !l->seal_failing_since_ms)
            l->seal_failing_since_ms = now;
        else if (!njobs)
            l->seal_failing_since_ms = 0;
        if (njobs)
            snprintf(l->seal_error, sizeof l->seal_error, "%s", first_error);
        pthread_mutex_unlock(&l->mu);
        floe_error e;
        floe_error_clear(&e);
        bool answers_ok = idem_persist(s, &e) == 0;
        if (!answers_ok)
            floe_log(FLOE_LOG_ERROR, "serve: storing idempotency answers: %s", e.msg);
        else if (active > 0)
            release_segments(s, active - 1);
        if (njobs)
            srv_health_fail(s, SRV_H_SEALER, "%s (%zu buffers wait; their records are safe "
                            "in the WAL, sealing is retried)", first_error, njobs);
        else if (!answers_ok)
            srv_health_fail(s, SRV_H_SEALER, "storing idempotency answers: %s (retried)",
                            e.msg);
        else
            srv_health_ok(s, SRV_H_SEALER);
        if (now - last_metrics >= 1000 || force) {
            srv_landing_refresh_metrics(s);
            last_metrics = now;
        }
        if (now - last_expire >= 60000) {
            char window[24];
            const char *params[] = {srv_i64(window, s->cfg.idempotency_window_ms)};
            pthread_mutex_lock(&l->idx_mu);
            srv_index_exec(s, l->q[SQ_IDEM_EXPIRE], params, 1, NULL);
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
        row_nums r = {0};
        const char *params[] = {e->uri};
        if (floe_sql_query(s->land.db, "SELECT 1 FROM landing_files WHERE uri=?", params, 1,
                           first_row_nums, &r, NULL) < 0)
            return 0; /* unknown: keep it */
        known = r.got;
    }
    if (!known) /* out of memory: the file is kept, as an unknown one is */
        FLOE_IGNORE_RESULT(floe_strlist_push(&rc->victims, e->uri, NULL));
    return 0;
}

static int watermark_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    srv_landing *l = ctx;
    if (n < 4 || !cols[0] || !cols[1])
        return floe_error_set(err, FLOE_ECORRUPT, "landing index: bad watermark row");
    pbuf *b = pbuf_find(l, cols[0], cols[1], strlen(cols[1]), (int)srv_atoi64(cols[2]), true);
    if (!b)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    b->watermark = (uint64_t)srv_atoi64(cols[3]);
    return 0;
}

typedef struct row_list {
    floe_strlist ids, uris;
} row_list;

static int collect_id_uri(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    row_list *r = ctx;
    if (n < 2 || !cols[0] || !cols[1])
        return 0;
    FLOE_FORWARD_IF_ERROR(floe_strlist_push(&r->ids, cols[0], err));
    return floe_strlist_push(&r->uris, cols[1], err);
}

static int has_column_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    /* PRAGMA table_info: cid, name, type, notnull, dflt_value, pk */
    if (n > 1 && cols[1] && !strcmp(cols[1], "lease_owner"))
        *(bool *)ctx = true;
    return 0;
}

/* Create the index tables, and add what earlier releases' tables lack (lease_owner).
 * Several nodes starting at once may race on CREATE TABLE IF NOT EXISTS (PostgreSQL then
 * reports a duplicate type): try again. */
static int index_create(floe_server *s, floe_error *err) {
    bool pg = !strcmp(floe_sql_dialect(s->land.db), "postgresql");
    const char *const *ddl = pg ? index_ddl_pg : index_ddl_sqlite;
    int rc = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        rc = 0;
        for (size_t i = 0; i < 4 && rc == 0; i++)
            rc = srv_index_exec(s, ddl[i], NULL, 0, err);
        if (rc == 0 && pg) {
            rc = srv_index_exec(s, "ALTER TABLE landing_files ADD COLUMN IF NOT EXISTS "
                                "lease_owner TEXT", NULL, 0, err);
        } else if (rc == 0) {
            bool has = false;
            rc = floe_sql_query(s->land.db, "PRAGMA table_info(landing_files)", NULL, 0,
                                has_column_row, &has, err);
            if (rc == 0 && !has)
                rc = srv_index_exec(s, "ALTER TABLE landing_files ADD COLUMN lease_owner "
                                    "TEXT", NULL, 0, err);
        }
        if (rc == 0)
            rc = srv_index_exec(s, index_by_state, NULL, 0, err);
        if (rc == 0)
            rc = srv_index_exec(s, index_by_uri, NULL, 0, err);
        if (rc == 0 || (rc != FLOE_EEXISTS && rc != FLOE_ECONFLICT && rc != FLOE_EBUSY))
            return rc;
        usleep(100000 * (useconds_t)(attempt + 1));
    }
    return rc;
}

/* ---- the index of earlier releases ---------------------------------------------------- */

/* Earlier releases kept the index of a SQLite catalog with a local warehouse in a file of
 * its own, <warehouse>/_landing/_index.db, so that the commit and the index update were
 * two transactions. Its rows move into the catalog's database once, in one transaction
 * (rows already there win: a crash before the file is renamed only repeats the copy), and
 * the file is renamed _index.db.migrated. Files it had leased go back to pending: this is
 * the node's start, nobody works on them, and the compactor's history check settles
 * those a commit consumed. */
typedef struct legacy_copy {
    floe_sql *to;
    int64_t rows;
} legacy_copy;

/* node, seq, tbl, part, kind, uri, bytes, raw_bytes, records, first_frame, last_frame,
 * created_ms, state, snapshot_id */
static int legacy_file_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    legacy_copy *lc = ctx;
    if (n < 14)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: bad landing_files row", "_index.db");
    const char *state = cols[12] && !strcmp(cols[12], "compacting") ? "pending" : cols[12];
    const char *p[] = {cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6],
                       cols[7], cols[8], cols[9], cols[10], cols[11], state, cols[13]};
    lc->rows++;
    return floe_sql_exec(lc->to, "INSERT INTO landing_files(node, seq, tbl, part, kind, uri, "
                         "bytes, raw_bytes, records, first_frame, last_frame, created_ms, "
                         "state, snapshot_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                         "ON CONFLICT (node, seq) DO NOTHING", p, 14, NULL, err);
}

static int legacy_answer_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    legacy_copy *lc = ctx;
    if (n < 3)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: bad idempotency row", "_index.db");
    const char *p[] = {cols[0], cols[1], cols[2]};
    return floe_sql_exec(lc->to, "INSERT INTO idempotency(tbl_key, created_ms, answer) "
                         "VALUES(?,?,?) ON CONFLICT (tbl_key) DO NOTHING", p, 3, NULL, err);
}

static int index_migrate_legacy(floe_server *s, const char *landing_dir, floe_error *err) {
    char *path = floe_asprintf("%s/_index.db", landing_dir);
    char *dest = floe_asprintf("%s/_index.db.migrated", landing_dir);
    floe_sql *old = NULL;
    legacy_copy lc = {.to = s->land.db};
    int rc = 0;
    if (!path || !dest)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (access(path, F_OK) != 0)
        goto done;
    FLOE_CHECK(floe_sql_open_with(path, &s->catcfg.sql, &old, err));
    FLOE_CHECK(floe_sql_begin(s->land.db, err));
    rc = floe_sql_query(old, "SELECT node, seq, tbl, part, kind, uri, bytes, raw_bytes, "
                        "records, first_frame, last_frame, created_ms, state, snapshot_id "
                        "FROM landing_files ORDER BY id", NULL, 0, legacy_file_row, &lc, err);
    if (rc == 0)
        rc = floe_sql_query(old, "SELECT tbl_key, created_ms, answer FROM idempotency", NULL,
                            0, legacy_answer_row, &lc, err);
    if (rc == 0)
        rc = floe_sql_commit(s->land.db, err);
    else
        floe_sql_rollback(s->land.db);
    if (rc < 0) {
        floe_error_prefix(err, "moving the landing index %s into the catalog: ", path);
        goto done;
    }
    floe_sql_close(old); /* the last connection: SQLite folds its WAL into the file */
    old = NULL;
    if (rename(path, dest) != 0)
        FLOE_FAIL(err, FLOE_EIO, "%s: rename to %s: %s", path, dest, strerror(errno));
    floe_log(FLOE_LOG_INFO, "serve: the landing index %s (%lld files) is now in the catalog "
             "database; the old file is kept as %s", path, (long long)lc.rows, dest);
done:
    floe_sql_close(old);
    floe_free(path);
    floe_free(dest);
    return rc;
}

/* The index lives in the catalog's database (its own connection): the pointer swap of a
 * landing commit marks the landing files committed in the swap's own transaction
 * (compactor.c's swap hook), so the snapshot and the index change become visible together
 * on every catalog (I2). With PostgreSQL, or with a remote warehouse, several nodes may
 * share it (shared: keys are claimed). */
static int index_open(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    const char *cat = srv_state_uri(s);
    char *local = NULL;
    int rc = 0;
    if (!cat)
        FLOE_FAIL(err, FLOE_EINVALID, "landing index: no catalog database");
    FLOE_CHECK(floe_sql_open_with(cat, &s->catcfg.sql, &l->db, err));
    bool pg = !strcmp(floe_sql_dialect(l->db), "postgresql");
    local = floe_io_local_path(s->landing_root);
    l->shared = pg || !local;
    if (!pg) {
        /* Write-ahead log mode: the index's frequent small commits (every seal) do not
         * block the catalog's readers. Kept when another process holds the file busy
         * (the rollback journal is as safe, only slower). */
        floe_error e;
        floe_error_clear(&e);
        if (floe_sql_query(l->db, "PRAGMA journal_mode=WAL", NULL, 0, ignore_rows, NULL,
                           &e) < 0)
            floe_log(FLOE_LOG_WARN, "serve: %s: staying in rollback-journal mode: %s", cat,
                     e.msg);
        FLOE_CHECK(floe_sql_exec(l->db, "PRAGMA synchronous=FULL", NULL, 0, NULL, err));
    }
    const char *now = floe_sql_clock_ms_expr(l->db);
    for (int i = 0; i < SQ_COUNT; i++)
        if (!(l->q[i] = with_db_clock(sq_text[i], now)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(index_create(s, err));
    if (!pg && local && s->role != FLOE_SERVER_ROLE_COMPACTOR)
        FLOE_CHECK(index_migrate_legacy(s, local, err));
done:
    floe_free(local);
    return rc;
}

int srv_landing_open(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    int rc = 0;
    row_list rows = {0};
    reconcile_ctx rctx = {.s = s};
    floe_buf_init(&l->xraw, 0);
    floe_buf_init(&l->xenc, 0);
    l->nbuckets = PBUF_BUCKETS;
    l->nibuckets = IDEM_BUCKETS;
    l->buckets = floe_calloc(l->nbuckets, sizeof *l->buckets);
    l->ibuckets = floe_calloc(l->nibuckets, sizeof *l->ibuckets);
    if (!l->buckets || !l->ibuckets)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(index_open(s, err));
    if (s->role == FLOE_SERVER_ROLE_COMPACTOR)
        goto metrics; /* no WAL, no landing files of its own */
    FLOE_CHECK(floe_io_mkdirs(s->cfg.io, s->landing_root, err));
    FLOE_CHECK(floe_io_mkdirs(s->cfg.io, s->quarantine_root, err));

    /* watermarks: the last frame of each partition already in a landing file */
    const char *pnode[] = {s->node};
    FLOE_CHECK(floe_sql_query(l->db, "SELECT tbl, part, kind, MAX(last_frame) FROM "
                              "landing_files WHERE node=? GROUP BY tbl, part, kind", pnode, 1,
                              watermark_row, l, err));
    row_nums r = {0};
    FLOE_CHECK(floe_sql_query(l->db, "SELECT COALESCE(MAX(seq),-1) FROM landing_files WHERE "
                              "node=?", pnode, 1, first_row_nums, &r, err));
    l->next_seq = r.got ? r.v[0] + 1 : 0;

    /* files without an index row: their records are still in the WAL */
    const char *roots[2] = {s->landing_root, s->quarantine_root};
    for (int i = 0; i < 2; i++)
        FLOE_CHECK(floe_io_list(s->cfg.io, roots[i], reconcile_file, &rctx, err));
    for (size_t i = 0; i < rctx.victims.n; i++) {
        floe_log(FLOE_LOG_INFO, "serve: removing unregistered landing file %s",
                 rctx.victims.items[i]);
        floe_io_delete(s->cfg.io, rctx.victims.items[i], NULL);
    }

    /* rows whose file is gone */
    FLOE_CHECK(floe_sql_query(l->db, "SELECT id, uri FROM landing_files WHERE node=? AND "
                              "state IN ('pending','compacting')", pnode, 1, collect_id_uri,
                              &rows, err));
    for (size_t i = 0; i < rows.ids.n && i < rows.uris.n; i++) {
        bool ex = false;
        if (floe_io_exists(s->cfg.io, rows.uris.items[i], &ex, NULL) == 0 && !ex) {
            floe_log(FLOE_LOG_ERROR, "serve: landing file %s is registered but missing",
                     rows.uris.items[i]);
            const char *pid[] = {rows.ids.items[i]};
            srv_index_exec(s, "UPDATE landing_files SET state='missing' WHERE id=? AND "
                           "state IN ('pending','compacting')", pid, 1, NULL);
        }
    }
metrics:
    srv_landing_refresh_metrics(s);
done:
    floe_strlist_free(&rctx.victims);
    floe_strlist_free(&rows.ids);
    floe_strlist_free(&rows.uris);
    return rc;
}

int srv_landing_max_id(floe_server *s, int64_t *out, floe_error *err) {
    row_nums r = {0};
    pthread_mutex_lock(&s->land.idx_mu);
    int rc = floe_sql_query(s->land.db, "SELECT COALESCE(MAX(id),0) FROM landing_files", NULL,
                            0, first_row_nums, &r, err);
    pthread_mutex_unlock(&s->land.idx_mu);
    if (rc == 0)
        *out = r.got ? r.v[0] : 0;
    return rc;
}

uint64_t srv_landing_max_frame(floe_server *s) {
    row_nums r = {0};
    const char *pnode[] = {s->node};
    pthread_mutex_lock(&s->land.idx_mu);
    FLOE_IGNORE_RESULT(floe_sql_query(s->land.db,
                                      "SELECT COALESCE(MAX(last_frame),0) FROM landing_files "
                                      "WHERE node=?",
                                      pnode, 1, first_row_nums, &r, NULL));
    pthread_mutex_unlock(&s->land.idx_mu);
    return r.got ? (uint64_t)r.v[0] : 0;
}

int srv_landing_start(floe_server *s, floe_error *err) {
    srv_landing *l = &s->land;
    if (l->shared) {
        /* Claims of this node from before it stopped: the WAL replay has answered the
         * requests that were taken; store those answers, then the rest were never taken
         * and their keys are free again. (HTTP is not started yet: no claim is live.) */
        FLOE_FORWARD_IF_ERROR(idem_persist(s, err));
        const char *p[] = {s->node};
        FLOE_FORWARD_IF_ERROR(srv_index_exec(s, "DELETE FROM idempotency_claims WHERE node=?",
                                             p, 1, err));
    }
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

void srv_landing_unopen(floe_server *s) {
    srv_landing *l = &s->land;
    seg_ref *segs = l->segs;
    size_t nsegs = l->nsegs, cap = l->segs_cap;
    l->segs = NULL;
    srv_landing_close(s);
    l->segs = segs;
    l->nsegs = nsegs;
    l->segs_cap = cap;
    l->buckets = NULL;
    l->ibuckets = NULL;
    l->nbuckets = l->nibuckets = l->nbufs = 0;
    l->next_seq = 0;
    l->shared = false;
}

void srv_landing_close(floe_server *s) {
    srv_landing *l = &s->land;
    for (size_t i = 0; l->buckets && i < l->nbuckets; i++) {
        pbuf *b = l->buckets[i];
        while (b) {
            pbuf *n = b->next;
            pbuf_free(b);
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
    floe_sql_close(l->db);
    l->db = NULL;
    for (int i = 0; i < SQ_COUNT; i++) {
        floe_free(l->q[i]);
        l->q[i] = NULL;
    }
    floe_section_coder_free(l->coder);
    l->coder = NULL;
    floe_buf_free(&l->xraw);
    floe_buf_free(&l->xenc);
}
