/*
 * ingest.c - one POST of events: decode, shred-validate against the table schema, route
 * the accepted records to their partitions, build the WAL frame, wait for its fsync, and
 * answer (DESIGN.md "The four paths" 1; I1, I5, I6).
 *
 * The shredder decides which records are accepted (the same rules as `floe convert`).
 * The accepted records travel on as their original NDJSON text (array elements become
 * one line each), so landing compaction re-shreds exactly what was validated here; the
 * shredded batch is used only to compute partition values. Rejected records travel in the
 * same frame to the quarantine, so a request is durable as a whole or not at all.
 *
 * Scratch state (shredder, batch, buffers, zstd context) is pooled per table and reused,
 * so the hot path does not allocate per record or, once warm, per request.
 *
 * Memory (I6). An NDJSON body is shredded in pieces of about PIECE_BYTES: each piece's
 * records are checked, their rejects quarantined and the accepted ones routed (their text
 * copied into their partition's group) before the next piece, so the shredded batch never
 * holds more than a piece whatever the body's size; a JSON array body goes the same way
 * (floe_shredder_feed_array_part). What a request's scratch holds (groups, quarantine
 * lines, answer, frame, the piece's batch) is taken from the server's in-flight budget
 * (max_inflight_bytes, shared with the raw and decoded body that http.c holds): before a
 * buffer grows, and for the batch before each piece with a margin then trued up after it.
 * The budget spent by other requests answers 503 + Retry-After; a request that alone
 * would need more than the whole budget answers 413. The answer lists the first
 * MAX_ERRORS_LISTED rejected records (all of them go to the quarantine).
 *
 * Content-Encoding: srv_decoder decodes gzip or zstd as the body arrives, so the encoded
 * body is never held, and stops as soon as the decoded size passes max_decoded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/quarantine.h"
#include "server_internal.h"
#include "codec/zstream.h"

typedef struct reject_rec {
    int64_t offset, line;
    int32_t reason;
    uint32_t msg_len;
    uint32_t rec_len;     /* raw record bytes follow the message */
} reject_rec;

#define MAX_PART_FIELDS 16
#define PIECE_BYTES ((size_t)1 << 20) /* NDJSON / array elements shredded per step */
#define PIECE_MARGIN 4               /* budget taken ahead for a piece: x its bytes */
#define MAX_ERRORS_LISTED 1000        /* rejected records listed in an answer */
#define SCRATCH_KEEP ((size_t)4 << 20) /* a pooled scratch drops buffers larger than this */
#define POOL_BYTES ((int64_t)32 << 20) /* what a table's idle scratches may hold together */
#define POOL_SHARE 4 /* all tables' idle scratches: at most the budget / POOL_SHARE */

typedef struct part_group {
    floe_buf path;
    floe_buf raw;
    uint32_t records;
    uint64_t hash;                     /* of its tuple (tuple_hash) */
} part_group;

struct srv_scratch {
    srv_scratch *next;    /* must stay first (tables.c walks the pool through it) */
    floe_server *srv;
    int64_t pooled;       /* what it held when it went to the pool (srv_table.pool_bytes) */
    bool in_pool;         /* counted in srv_table.pool_bytes and floe_server.pooled_bytes */
    int64_t held;         /* of the in-flight budget: for this request, or while pooled
                           * for the bytes it keeps (taken over by the next request) */
    int64_t other;        /* what the same request holds elsewhere (http.c's body) */
    floe_arena tarena;    /* group tuples' string values (the batch is cleared per piece) */
    const floe_schema *schema;
    int gen;
    floe_unknown_policy policy; /* compiled into the shredder */
    floe_shredder *sh;
    floe_batch batch;
    bool batch_ok;
    floe_buf rejects;     /* reject_rec + message + record, repeated (this piece) */
    size_t nrejects;      /* this piece */
    size_t *spans;        /* start, end per record of this piece (offsets in the body) */
    size_t nspans, spans_cap;
    uint8_t *rejected;
    size_t rejected_cap;
    part_group *groups;
    size_t ngroups, groups_cap;
    floe_value *tuples;   /* group i's partition tuple: nf values from i * nf; strings
                             borrow from the batch of this request */
    size_t tuples_cap;    /* values */
    uint32_t *gslots;     /* groups by tuple hash: open addressing, group index + 1 */
    size_t gslots_cap;    /* a power of two, at least twice ngroups; 0 = none yet */
    floe_buf qlines, comp, frame, errors, pathbuf, rest;
    floe_section_coder *coder;
};

void srv_scratch_free(srv_scratch *sc) {
    if (!sc)
        return;
    floe_shredder_free(sc->sh);
    if (sc->batch_ok)
        floe_batch_free(&sc->batch);
    floe_buf_free(&sc->rejects);
    floe_free(sc->spans);
    floe_free(sc->rejected);
    for (size_t i = 0; i < sc->groups_cap; i++) {
        floe_buf_free(&sc->groups[i].path);
        floe_buf_free(&sc->groups[i].raw);
    }
    floe_free(sc->groups);
    floe_free(sc->gslots);
    floe_free(sc->tuples);
    floe_buf_free(&sc->qlines);
    floe_buf_free(&sc->comp);
    floe_buf_free(&sc->frame);
    floe_buf_free(&sc->errors);
    floe_buf_free(&sc->pathbuf);
    floe_buf_free(&sc->rest);
    floe_arena_reset(&sc->tarena);
    floe_section_coder_free(sc->coder);
    if (sc->srv && sc->in_pool)
        atomic_fetch_sub(&sc->srv->pooled_bytes, sc->pooled);
    if (sc->srv)
        srv_budget_release(sc->srv, &sc->held);
    floe_free(sc);
}

/* ---- the in-flight budget ------------------------------------------------------------ */

int srv_budget_hold(floe_server *s, int64_t *held, int64_t want, int64_t other) {
    return floe_budget_hold(&s->budget, held, want, other);
}

void srv_budget_release(floe_server *s, int64_t *held) {
    floe_budget_release(&s->budget, held);
}

/* Bytes the scratch has allocated (capacities, not lengths). */
static int64_t batch_bytes(const floe_batch *b) {
    int64_t t = 0;
    for (size_t i = 0; i < b->ncols; i++) {
        const floe_colbuf *c = &b->cols[i];
        size_t lv = (c->max_def ? 2 : 0) + (c->max_rep ? 2 : 0);
        t += (int64_t)(c->levels_cap * lv + c->values_cap + c->offsets_cap * 4 +
                       c->carry_cap * sizeof *c->carry + c->carry_bytes.cap);
    }
    return t;
}

static int64_t scratch_bytes(const srv_scratch *sc) {
    int64_t t = (int64_t)(sizeof *sc + sc->rejects.cap + sc->spans_cap * sizeof *sc->spans +
                          sc->rejected_cap + sc->groups_cap * sizeof *sc->groups +
                          sc->tuples_cap * sizeof *sc->tuples +
                          sc->gslots_cap * sizeof *sc->gslots + sc->qlines.cap + sc->comp.cap +
                          sc->frame.cap + sc->errors.cap + sc->pathbuf.cap + sc->rest.cap);
    if (sc->tarena.head)
        t += (int64_t)(sc->tarena.total + sc->tarena.block_size);
    if (sc->batch_ok)
        t += batch_bytes(&sc->batch);
    for (size_t i = 0; i < sc->groups_cap; i++)
        t += (int64_t)(sc->groups[i].path.cap + sc->groups[i].raw.cap);
    return t;
}

/* Hold what the scratch has allocated now, plus `ahead` bytes it is about to take. */
static int scratch_charge(srv_scratch *sc, int64_t ahead) {
    return srv_budget_hold(sc->srv, &sc->held, scratch_bytes(sc) + ahead, sc->other);
}

int srv_buf_room(floe_server *s, int64_t *held, int64_t other, floe_buf *b, size_t extra) {
    return floe_budget_buf_room(&s->budget, held, other, b, extra);
}

static int sc_room(srv_scratch *sc, floe_buf *b, size_t extra) {
    return srv_buf_room(sc->srv, &sc->held, sc->other, b, extra);
}

/* Room in a buffer whose final size is known (the frame, a compressed section): exactly
 * that, not the next power of two (a 5 MB body's frame and section took 8 MiB each). */
static int sc_room_exact(srv_scratch *sc, floe_buf *b, size_t extra) {
    return floe_budget_buf_room_exact(&sc->srv->budget, &sc->held, sc->other, b, extra);
}

/* Room in a group's copy of its records: doubling up to GROUP_PACE bytes, then by a
 * quarter at a time, so a group of one large body holds (and is charged) at most 1.25 x
 * its records, not up to 2 x. */
#define GROUP_PACE ((size_t)1 << 20)
static int group_room(srv_scratch *sc, floe_buf *b, size_t extra) {
    if (b->cap < GROUP_PACE || b->len + extra + 1 <= b->cap)
        return sc_room(sc, b, extra);
    return sc_room_exact(sc, b, extra > b->len / 4 ? extra : b->len / 4);
}

/* A scratch compiled for the table's current schema (caller holds schema_lock). */
static int scratch_get(floe_server *s, srv_table *t, floe_unknown_policy policy,
                       srv_scratch **out, floe_error *err) {
    srv_scratch *sc = NULL, *stale = NULL;
    pthread_mutex_lock(&t->pool_mu);
    for (srv_scratch **p = &t->pool; *p;) {
        srv_scratch *x = *p;
        if (x->gen != t->schema_gen) { /* compiled for a schema that is gone */
            *p = x->next;
            t->pool_bytes -= x->pooled;
            x->next = stale;
            stale = x;
        } else if (!sc && x->policy == policy) {
            *p = x->next;
            t->pool_bytes -= x->pooled;
            atomic_fetch_sub(&s->pooled_bytes, x->pooled);
            x->in_pool = false;
            sc = x;
        } else {
            p = &x->next;
        }
    }
    pthread_mutex_unlock(&t->pool_mu);
    while (stale) {
        srv_scratch *n = stale->next;
        srv_scratch_free(stale);
        stale = n;
    }
    if (!sc) {
        sc = floe_calloc(1, sizeof *sc);
        if (!sc)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_buf_init(&sc->rejects, 0);
        floe_buf_init(&sc->qlines, 0);
        floe_buf_init(&sc->comp, 0);
        floe_buf_init(&sc->frame, 0);
        floe_buf_init(&sc->errors, 0);
        floe_buf_init(&sc->pathbuf, 0);
        floe_buf_init(&sc->rest, 0);
        floe_arena_init(&sc->tarena, 16384);
        sc->srv = s;
        sc->coder = floe_section_coder_new();
        floe_shred_options so = {.max_record = (size_t)s->cfg.max_record, .unknown = policy};
        int32_t *hours = NULL; /* a record whose hour() partition cannot be made: rejected */
        int rc = 0;
        if (!sc->coder)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (rc == 0)
            rc = floe_partition_spec_hour_sources(t->spec, &hours, &so.nhour_sources, err);
        so.hour_sources = hours;
        if (rc == 0)
            rc = floe_shredder_new(t->schema, &so, &sc->sh, err);
        floe_free(hours);
        if (rc == 0) {
            rc = floe_batch_init(&sc->batch, t->schema);
            sc->batch_ok = rc == 0;
            if (rc < 0)
                floe_error_set(err, rc, "out of memory");
        }
        if (rc < 0) {
            srv_scratch_free(sc);
            return rc;
        }
        sc->schema = t->schema;
        sc->gen = t->schema_gen;
        sc->policy = policy;
    }
    floe_batch_clear(&sc->batch);
    floe_buf_reset(&sc->rejects);
    sc->nrejects = 0;
    sc->nspans = 0;
    for (size_t i = 0; i < sc->ngroups; i++) {
        floe_buf_reset(&sc->groups[i].path);
        floe_buf_reset(&sc->groups[i].raw);
        sc->groups[i].records = 0;
    }
    sc->ngroups = 0;
    if (sc->gslots)
        memset(sc->gslots, 0, sc->gslots_cap * sizeof *sc->gslots);
    floe_buf_reset(&sc->qlines);
    floe_buf_reset(&sc->errors);
    floe_buf_reset(&sc->rest);
    floe_arena_reset(&sc->tarena);
    sc->other = 0; /* sc->held: what it holds from the pool, now this request's */
    *out = sc;
    return 0;
}

static void buf_trim(floe_buf *b) {
    if (b->cap > SCRATCH_KEEP)
        floe_buf_free(b);
}

/* Whether the server's idle scratches may grow by `bytes`: at most budget / POOL_SHARE
 * together, so however many tables there are, idle scratch never takes more than that
 * share of the in-flight budget it is counted in. */
static bool pool_room(floe_server *s, int64_t bytes) {
    int64_t limit = atomic_load(&s->budget.limit) / POOL_SHARE;
    int64_t cur = atomic_load(&s->pooled_bytes);
    do {
        if (cur + bytes > limit)
            return false;
    } while (!atomic_compare_exchange_weak(&s->pooled_bytes, &cur, cur + bytes));
    return true;
}

/* Back to the table's pool, without what one large request grew it to: idle scratches of
 * at most 2 x SCRATCH_KEEP each, POOL_BYTES together per table and budget / POOL_SHARE
 * over all tables, held in the in-flight budget while they wait; anything else is freed. */
static void scratch_put(srv_table *t, srv_scratch *sc) {
    buf_trim(&sc->frame);
    buf_trim(&sc->comp);
    buf_trim(&sc->qlines);
    buf_trim(&sc->errors);
    buf_trim(&sc->rejects);
    buf_trim(&sc->rest);
    for (size_t i = 0; i < sc->groups_cap; i++) {
        if (i >= 64) {
            floe_buf_free(&sc->groups[i].path);
            floe_buf_free(&sc->groups[i].raw);
        } else {
            buf_trim(&sc->groups[i].raw);
        }
    }
    if (sc->gslots_cap > 1024) {
        floe_free(sc->gslots);
        sc->gslots = NULL;
        sc->gslots_cap = 0;
    }
    if (sc->tuples_cap > 1024) {
        floe_free(sc->tuples);
        sc->tuples = NULL;
        sc->tuples_cap = 0;
    }
    if (sc->spans_cap * sizeof *sc->spans > SCRATCH_KEEP) {
        floe_free(sc->spans);
        sc->spans = NULL;
        sc->spans_cap = 0;
    }
    floe_arena_reset(&sc->tarena);
    floe_server *s = sc->srv;
    int64_t bytes = scratch_bytes(sc);
    bool keep = sc->gen == t->schema_gen && bytes <= (int64_t)(2 * SCRATCH_KEEP);
    /* the request's hold becomes the pooled bytes' hold (it only shrinks here) */
    if (!keep || srv_budget_hold(s, &sc->held, bytes, 0) < 0) {
        srv_scratch_free(sc);
        return;
    }
    pthread_mutex_lock(&t->pool_mu);
    if (t->pool_bytes + bytes <= POOL_BYTES && pool_room(s, bytes)) {
        sc->pooled = bytes;
        sc->in_pool = true;
        t->pool_bytes += bytes;
        sc->next = t->pool;
        t->pool = sc;
    } else {
        keep = false;
    }
    pthread_mutex_unlock(&t->pool_mu);
    if (!keep)
        srv_scratch_free(sc);
}

static int on_reject(void *ctx, const floe_reject *r) {
    srv_scratch *sc = ctx;
    size_t ml = strlen(r->message);
    if (ml > 512)
        ml = 512;
    reject_rec rr = {.offset = r->offset, .line = r->line, .reason = (int32_t)r->reason,
                     .msg_len = (uint32_t)ml, .rec_len = (uint32_t)r->record_len};
    int rc = sc_room(sc, &sc->rejects, sizeof rr + ml + r->record_len + 8);
    if (rc < 0)
        return rc; /* stops the feed: the budget (503 / 413) or memory */
    rc = floe_buf_append(&sc->rejects, &rr, sizeof rr);
    if (rc == 0)
        rc = floe_buf_append(&sc->rejects, r->message, ml);
    if (rc == 0)
        rc = floe_buf_append(&sc->rejects, r->record, r->record_len);
    /* keep the next header aligned */
    while (rc == 0 && sc->rejects.len % 8)
        rc = floe_buf_append_byte(&sc->rejects, 0);
    sc->nrejects++;
    return rc;
}

static int push_span(srv_scratch *sc, size_t a, size_t b) {
    if (sc->nspans * 2 + 2 > sc->spans_cap) {
        size_t nc = sc->spans_cap ? sc->spans_cap * 2 : 1024;
        size_t *ns = floe_realloc(sc->spans, nc * sizeof *ns);
        if (!ns)
            return FLOE_ENOMEM;
        sc->spans = ns;
        sc->spans_cap = nc;
    }
    sc->spans[sc->nspans * 2] = a;
    sc->spans[sc->nspans * 2 + 1] = b;
    sc->nspans++;
    return 0;
}

/* Records of p[from, n): non-blank lines (blank = only spaces, tabs, '\r'), as the
 * shredder counts them; *lines = the lines seen, blank or not. */
static int split_lines(srv_scratch *sc, const uint8_t *p, size_t from, size_t n,
                       int64_t *lines) {
    size_t i = from;
    while (i < n) {
        ++*lines;
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - p) : n;
        bool blank = true;
        for (size_t k = i; k < e && blank; k++)
            blank = p[k] == ' ' || p[k] == '\t' || p[k] == '\r';
        if (!blank) {
            size_t end = e;
            if (end > i && p[end - 1] == '\r')
                end--;
            FLOE_FORWARD_IF_ERROR(push_span(sc, i, end));
        }
        i = e + 1;
    }
    return 0;
}

static bool json_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int srv_json_array_elements(const uint8_t *p, size_t i, size_t n,
                            int (*fn)(void *ctx, size_t start, size_t end), void *ctx,
                            size_t *pos) {
    int depth = 0;
    bool in_str = false;
    size_t start = SIZE_MAX;
    for (; i < n; i++) {
        uint8_t c = p[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (json_ws(c))
            continue;
        if (start == SIZE_MAX && c != ']' && c != ',')
            start = i;
        if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        } else if ((c == ',' || c == ']') && depth == 0) {
            if (start != SIZE_MAX) {
                size_t e = i;
                while (e > start && json_ws(p[e - 1]))
                    e--;
                int rc = fn(ctx, start, e);
                if (rc < 0)
                    return rc;
            } else if (c == ',') {
                return FLOE_ECORRUPT; /* an empty element */
            }
            start = SIZE_MAX;
            if (c == ']') {
                if (pos)
                    *pos = i + 1;
                return 1;
            }
        }
    }
    if (pos)
        *pos = n;
    return 0;
}

static int span_cb(void *ctx, size_t start, size_t end) { return push_span(ctx, start, end); }

/* Elements of a JSON array the shredder has already found well formed, from p + from (0:
 * the body's start; else the first byte of an element) up to `to` (the end of the body,
 * or the first byte of the element after the last one wanted). */
static int split_array(srv_scratch *sc, const uint8_t *p, size_t from, size_t to) {
    size_t i = from;
    if (from == 0) {
        while (i < to && p[i] != '[')
            i++;
        i++;
    }
    int rc = srv_json_array_elements(p, i, to, span_cb, sc, NULL);
    return rc < 0 ? rc : 0;
}

/* The tuple's string, binary and fixed values copied into the scratch's arena (the batch
 * they point into is cleared after each piece). */
static int tuple_own(srv_scratch *sc, floe_value *tuple, size_t nf) {
    for (size_t k = 0; k < nf; k++) {
        floe_value *v = &tuple[k];
        if (v->is_null || (v->type != FLOE_TYPE_STRING && v->type != FLOE_TYPE_BINARY &&
                           v->type != FLOE_TYPE_FIXED) || v->v.bytes.n == 0)
            continue;
        uint8_t *c = floe_arena_memdup(&sc->tarena, v->v.bytes.p, v->v.bytes.n);
        if (!c)
            return FLOE_ENOMEM;
        v->v.bytes.p = c;
    }
    return 0;
}

static size_t span_index(const srv_scratch *sc, int64_t off) {
    size_t lo = 0, hi = sc->nspans;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((int64_t)sc->spans[mid * 2] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

/* The value of a (non-repeated) leaf for row `row`; cursor counts values consumed. */
static floe_value leaf_value(const floe_colbuf *c, size_t row, size_t *cursor) {
    const floe_field *f = c->field;
    if (c->max_def > 0 && c->def[row] != c->max_def)
        return floe_value_null(f->type);
    size_t vi = (*cursor)++;
    const uint8_t *v = c->phys == FLOE_PHYS_BYTE_ARRAY ? c->values + c->offsets[vi]
                                                      : c->values + vi * (size_t)c->width;
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: return floe_value_bool(v[0] != 0);
    case FLOE_TYPE_INT: return floe_value_int((int32_t)floe_load_le32(v));
    case FLOE_TYPE_DATE: return floe_value_date((int32_t)floe_load_le32(v));
    case FLOE_TYPE_LONG: return floe_value_long((int64_t)floe_load_le64(v));
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: return floe_value_i64(f->type, (int64_t)floe_load_le64(v));
    case FLOE_TYPE_FLOAT: {
        float x;
        memcpy(&x, v, 4);
        return floe_value_float(x);
    }
    case FLOE_TYPE_DOUBLE: {
        double x;
        memcpy(&x, v, 8);
        return floe_value_double(x);
    }
    case FLOE_TYPE_STRING:
        return floe_value_string((const char *)v, c->offsets[vi + 1] - c->offsets[vi]);
    case FLOE_TYPE_BINARY: return floe_value_binary(v, c->offsets[vi + 1] - c->offsets[vi]);
    case FLOE_TYPE_FIXED: return floe_value_fixed(v, (size_t)c->width);
    case FLOE_TYPE_UUID: return floe_value_uuid(v);
    case FLOE_TYPE_DECIMAL: {
        floe_i128 u = 0;
        if (c->phys == FLOE_PHYS_INT32)
            u = (int32_t)floe_load_le32(v);
        else if (c->phys == FLOE_PHYS_INT64)
            u = (int64_t)floe_load_le64(v);
        else {
            u = (v[0] & 0x80) ? -1 : 0;
            for (int k = 0; k < c->width; k++)
                u = (floe_i128)(((unsigned __int128)u << 8) | v[k]);
        }
        return floe_value_decimal(u, f->precision, f->scale);
    }
    default: return floe_value_null(f->type);
    }
}

static bool tuple_equal(const floe_value *a, const floe_value *b, size_t nf) {
    for (size_t k = 0; k < nf; k++)
        if (a[k].is_null != b[k].is_null || (!a[k].is_null && !floe_value_equal(&a[k], &b[k])))
            return false;
    return true;
}

static uint64_t mix64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

/* A hash of a partition tuple that agrees with tuple_equal: equal tuples hash alike
 * (-0.0 is hashed as 0.0, every NaN alike; unequal tuples may collide). seed is the
 * server's, random per process, so partition values chosen to collide cannot be
 * prepared in advance; a collision costs a comparison, and a request holds at most
 * max_request_partitions groups anyway. */
static uint64_t tuple_hash(const floe_value *t, size_t nf, uint64_t seed) {
    uint64_t h = seed;
    for (size_t k = 0; k < nf; k++) {
        const floe_value *v = &t[k];
        if (v->is_null) {
            h = mix64(h, 0x6e756c6cu);
            continue;
        }
        switch (v->type) {
        case FLOE_TYPE_BOOLEAN: h = mix64(h, v->v.b); break;
        case FLOE_TYPE_INT:
        case FLOE_TYPE_DATE: h = mix64(h, (uint64_t)(int64_t)v->v.i32); break;
        case FLOE_TYPE_FLOAT:
        case FLOE_TYPE_DOUBLE: {
            double d = v->type == FLOE_TYPE_FLOAT ? (double)v->v.f : v->v.d;
            uint64_t bits = 0x7ff8000000000000ull;
            if (d == 0)
                bits = 0;
            else if (d == d)
                memcpy(&bits, &d, sizeof bits);
            h = mix64(h, bits);
            break;
        }
        case FLOE_TYPE_STRING:
        case FLOE_TYPE_BINARY:
        case FLOE_TYPE_FIXED: {
            uint64_t f = 14695981039346656037ull;
            for (size_t i = 0; i < v->v.bytes.n; i++)
                f = (f ^ v->v.bytes.p[i]) * 1099511628211ull;
            h = mix64(h, f ^ v->v.bytes.n);
            break;
        }
        case FLOE_TYPE_DECIMAL: {
            unsigned __int128 u = (unsigned __int128)v->v.dec.unscaled;
            h = mix64(mix64(h, (uint64_t)u), (uint64_t)(u >> 64));
            break;
        }
        case FLOE_TYPE_UUID: {
            uint64_t a, b;
            memcpy(&a, v->v.uuid, 8);
            memcpy(&b, v->v.uuid + 8, 8);
            h = mix64(mix64(h, a), b);
            break;
        }
        default: h = mix64(h, (uint64_t)v->v.i64); break; /* long, time, timestamps */
        }
    }
    return h;
}

/* Room for one more group, its tuple of nf values and its slot. */
static int groups_grow(srv_scratch *sc, size_t nf) {
    if (sc->ngroups == sc->groups_cap) {
        size_t nc = sc->groups_cap ? sc->groups_cap * 2 : 8;
        part_group *g = floe_realloc(sc->groups, nc * sizeof *g);
        if (!g)
            return FLOE_ENOMEM;
        for (size_t i = sc->groups_cap; i < nc; i++) {
            floe_buf_init(&g[i].path, 0);
            floe_buf_init(&g[i].raw, 0);
            g[i].records = 0;
        }
        sc->groups = g;
        sc->groups_cap = nc;
    }
    if ((sc->ngroups + 1) * nf > sc->tuples_cap) {
        size_t nc = sc->tuples_cap ? sc->tuples_cap * 2 : 8 * nf;
        floe_value *t = floe_realloc(sc->tuples, nc * sizeof *t);
        if (!t)
            return FLOE_ENOMEM;
        sc->tuples = t;
        sc->tuples_cap = nc;
    }
    if ((sc->ngroups + 1) * 2 > sc->gslots_cap) {
        size_t nc = sc->gslots_cap ? sc->gslots_cap * 2 : 64;
        uint32_t *slots = floe_calloc(nc, sizeof *slots);
        if (!slots)
            return FLOE_ENOMEM;
        for (size_t i = 0; i < sc->ngroups; i++) {
            size_t k = (size_t)sc->groups[i].hash & (nc - 1);
            while (slots[k])
                k = (k + 1) & (nc - 1);
            slots[k] = (uint32_t)i + 1;
        }
        floe_free(sc->gslots);
        sc->gslots = slots;
        sc->gslots_cap = nc;
    }
    return 0;
}

/* A new group at index ngroups for path (and, partitioned, tuple with hash h). */
static int group_add(srv_scratch *sc, const uint8_t *path, size_t n, const floe_value *tuple,
                     size_t nf, uint64_t h, size_t *out) {
    FLOE_FORWARD_IF_ERROR(groups_grow(sc, nf));
    part_group *g = &sc->groups[sc->ngroups];
    floe_buf_reset(&g->path);
    floe_buf_reset(&g->raw);
    g->records = 0;
    g->hash = h;
    if (nf) {
        floe_value *own = sc->tuples + sc->ngroups * nf;
        memcpy(own, tuple, nf * sizeof *tuple);
        FLOE_FORWARD_IF_ERROR(tuple_own(sc, own, nf));
    }
    FLOE_FORWARD_IF_ERROR(floe_buf_append(&g->path, path, n));
    size_t k = (size_t)h & (sc->gslots_cap - 1);
    while (sc->gslots[k])
        k = (k + 1) & (sc->gslots_cap - 1);
    sc->gslots[k] = (uint32_t)sc->ngroups + 1;
    *out = sc->ngroups++;
    return 0;
}

/* The group of tuple (hash h), or ngroups when there is none yet. */
static size_t group_find(const srv_scratch *sc, const floe_value *tuple, size_t nf, uint64_t h) {
    if (!sc->gslots_cap)
        return sc->ngroups;
    for (size_t k = (size_t)h & (sc->gslots_cap - 1); sc->gslots[k];
         k = (k + 1) & (sc->gslots_cap - 1)) {
        size_t gi = sc->gslots[k] - 1;
        if (sc->groups[gi].hash == h && tuple_equal(tuple, sc->tuples + gi * nf, nf))
            return sc->gslots[k] - 1;
    }
    return sc->ngroups;
}

/* Route every accepted record to its partition group: a hash look-up per change of
 * tuple, so a request costs time linear in its records whatever the number of
 * partitions. The path of a tuple is rendered once per request and group (paths format
 * dates and escape values: not per record). More than max_parts groups: FLOE_ELIMIT
 * (the caller refuses the whole request). */
static int route_records(srv_table *t, srv_scratch *sc, const uint8_t *body, bool array,
                         int64_t max_parts, uint64_t seed, floe_error *err) {
    const floe_partition_spec *spec = t->spec;
    size_t nf = spec->nfields;
    if (nf > MAX_PART_FIELDS)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "more than %d partition fields",
                              MAX_PART_FIELDS);
    floe_value src[MAX_PART_FIELDS], tuple[MAX_PART_FIELDS], prev[MAX_PART_FIELDS];
    size_t cursor[MAX_PART_FIELDS] = {0};
    const floe_colbuf *cols[MAX_PART_FIELDS];
    for (size_t k = 0; k < nf; k++) {
        const floe_field *f = spec->fields[k].source;
        if (!f || f->leaf < 0 || f->rep_level > 0)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "partition source %s is not a "
                                  "plain column", spec->fields[k].name);
        cols[k] = &sc->batch.cols[f->leaf];
    }
    size_t row = 0, cur_group = 0;
    bool have_prev = false;
    for (size_t r = 0; r < sc->nspans; r++) {
        if (sc->rejected[r])
            continue;
        if (nf > 0) {
            for (size_t k = 0; k < nf; k++)
                src[k] = leaf_value(cols[k], row, &cursor[k]);
            FLOE_FORWARD_IF_ERROR(floe_partition_spec_tuple(spec, src, tuple, err));
            if (!have_prev || !tuple_equal(tuple, prev, nf)) {
                uint64_t h = tuple_hash(tuple, nf, seed);
                size_t gi = group_find(sc, tuple, nf, h);
                if (gi == sc->ngroups) {
                    if ((int64_t)sc->ngroups >= max_parts)
                        return floe_error_set(err, FLOE_ELIMIT, "the body holds records of "
                                              "more than %lld partitions (max_request_"
                                              "partitions): nothing was taken; send them in "
                                              "smaller requests", (long long)max_parts);
                    floe_buf_reset(&sc->pathbuf);
                    FLOE_FORWARD_IF_ERROR(
                        floe_partition_spec_path(spec, tuple, &sc->pathbuf, err));
                    if (group_add(sc, sc->pathbuf.data, sc->pathbuf.len, tuple, nf, h, &gi) < 0)
                        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
                    /* new groups cost a little each: counted when the piece is trued up */
                }
                cur_group = gi;
                memcpy(prev, tuple, nf * sizeof *tuple);
                have_prev = true;
            }
        } else if (sc->ngroups == 0 &&
                   group_add(sc, (const uint8_t *)"", 0, NULL, 0, 0, &cur_group) < 0) {
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
        part_group *g = &sc->groups[cur_group];
        size_t a = sc->spans[r * 2], b = sc->spans[r * 2 + 1];
        size_t at = g->raw.len;
        int rc = group_room(sc, &g->raw, b - a + 1);
        if (rc < 0)
            return floe_error_set(err, rc, "%s", rc == FLOE_ENOMEM ? "out of memory"
                                                                   : "in-flight memory budget");
        if (floe_buf_append(&g->raw, body + a, b - a) < 0 ||
            floe_buf_append_byte(&g->raw, '\n') < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (array) /* whitespace newlines inside a pretty-printed element */
            for (size_t k = at; k < g->raw.len - 1; k++)
                if (g->raw.data[k] == '\n' || g->raw.data[k] == '\r')
                    g->raw.data[k] = ' ';
        g->records++;
        row++;
    }
    return 0;
}

/* The section codec the configuration asks for (floe_landing_codec -> frame.h codec). */
static uint8_t section_codec(const floe_server *s) {
    switch (s->cfg.landing_codec) {
    case FLOE_LANDING_ZSTD: return FLOE_CODEC_ZSTD_;
    case FLOE_LANDING_NONE: return FLOE_CODEC_NONE_;
    default: return FLOE_CODEC_LZ4_;
    }
}

static int compress_into(srv_scratch *sc, uint8_t codec, const uint8_t *p, size_t n,
                         int level) {
    return floe_section_encode(sc->coder, codec, level, p, n, &sc->comp);
}

static char *answer_error(int status, const char *msg, size_t *len) {
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_buf_printf(&b, "{\"error\":{\"status\":%d,\"message\":", status) < 0 ||
        floe_json_append_string(&b, (const uint8_t *)msg, strlen(msg)) < 0 ||
        floe_buf_printf(&b, "}}") < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_detach(&b, len);
}

/* The rejects of the piece just shredded: mark their records, list the first ones in
 * the answer (errors), and write every one as a quarantine line. base = the index of the
 * piece's first record in the body. */
static int take_rejects(srv_scratch *sc, const srv_post *p, size_t base, size_t *listed,
                        uint64_t *rej_bytes) {
    size_t off = 0;
    for (size_t i = 0; i < sc->nrejects; i++) {
        reject_rec rr;
        memcpy(&rr, sc->rejects.data + off, sizeof rr);
        const uint8_t *msg = sc->rejects.data + off + sizeof rr;
        const uint8_t *rec = msg + rr.msg_len;
        off += sizeof rr + rr.msg_len + rr.rec_len;
        off = (off + 7) & ~(size_t)7;
        size_t idx = span_index(sc, rr.offset);
        sc->rejected[idx] = 1;
        *rej_bytes += rr.rec_len;
        const char *reason = floe_reject_reason_name((floe_reject_reason)rr.reason);
        /* JSON escapes cost at most 6 bytes per byte, base64 4 per 3 */
        size_t worst = 256 + strlen(p->source) * 6 + (size_t)rr.msg_len * 6 +
                       (size_t)rr.rec_len * 6;
        if (*listed < MAX_ERRORS_LISTED) {
            FLOE_FORWARD_IF_ERROR(sc_room(sc, &sc->errors, 96 + (size_t)rr.msg_len * 6));
            if (floe_buf_printf(&sc->errors, "%s{\"index\":%zu,\"reason\":\"%s\",\"message\":",
                                *listed ? "," : "", base + idx, reason) < 0 ||
                floe_json_append_string(&sc->errors, msg, rr.msg_len) < 0 ||
                floe_buf_append_byte(&sc->errors, '}') < 0)
                return FLOE_ENOMEM;
            ++*listed;
        }
        FLOE_FORWARD_IF_ERROR(sc_room(sc, &sc->qlines, worst));
        if (floe_buf_printf(&sc->qlines, "{\"source\":") < 0 ||
            floe_json_append_string(&sc->qlines, (const uint8_t *)p->source,
                                    strlen(p->source)) < 0 ||
            floe_buf_printf(&sc->qlines, ",\"index\":%zu,\"line\":%lld,\"offset\":%lld,"
                            "\"reason\":\"%s\",\"message\":", base + idx, (long long)rr.line,
                            (long long)rr.offset, reason) < 0 ||
            floe_json_append_string(&sc->qlines, msg, rr.msg_len) < 0)
            return FLOE_ENOMEM;
        if (floe_utf8_valid(rec, rr.rec_len)) {
            if (floe_buf_printf(&sc->qlines, ",\"record\":") < 0 ||
                floe_json_append_string(&sc->qlines, rec, rr.rec_len) < 0)
                return FLOE_ENOMEM;
        } else if (floe_buf_printf(&sc->qlines, ",\"record_base64\":\"") < 0 ||
                   floe_base64_append(&sc->qlines, rec, rr.rec_len) < 0 ||
                   floe_buf_append_byte(&sc->qlines, '"') < 0) {
            return FLOE_ENOMEM;
        }
        if (floe_buf_printf(&sc->qlines, "}\n") < 0)
            return FLOE_ENOMEM;
    }
    return 0;
}

int srv_budget_status(floe_server *s, int rc, int *retry_after, const char **msg) {
    if (rc == FLOE_EBUSY) {
        atomic_fetch_add(&s->m.budget_refusals, 1);
        *retry_after = 1;
        *msg = "the server's in-flight memory (max_inflight_bytes) is in use by other "
               "requests; retry later";
        return 503;
    }
    if (rc == FLOE_ELIMIT) {
        *msg = "this request needs more memory than max_inflight_bytes allows; send it in "
               "smaller requests";
        return 413;
    }
    *msg = "out of memory";
    return 500;
}

/* The status for a failure of the budget or of memory while taking a request. */
static int budget_status(floe_server *s, int rc, int *retry_after, floe_error *err) {
    const char *msg;
    int status = srv_budget_status(s, rc, retry_after, &msg);
    floe_error_set(err, rc, "%s", msg);
    return status;
}

/* One POST being taken (srv_ingest): what its phases share. A phase that fails sets
 * status (500 unless it says otherwise), *retry_after and err, and returns < 0. */
typedef struct ingest_req {
    floe_server *s;
    const srv_post *p;
    int *retry_after;
    floe_error err;
    int status;
    srv_table *t;
    srv_scratch *sc;
    bool key_held, locked, evolved;
    bool array;                        /* the body is a JSON array, not NDJSON */
    floe_schema_mode mode;
    size_t records, accepted, rejected, listed;
    uint64_t rej_bytes, unknown;
    uint64_t acc_bytes;
} ingest_req;

static int ingest_nomem(ingest_req *q) {
    q->status = 500;
    return floe_error_set(&q->err, FLOE_ENOMEM, "out of memory");
}

static int ingest_budget(ingest_req *q, int rc) {
    q->status = budget_status(q->s, rc, q->retry_after, &q->err);
    return rc;
}

/* The table, then backpressure before any work (I6): memory first, then the landing
 * backlog. */
static int ingest_admit(ingest_req *q) {
    floe_server *s = q->s;
    int rc = srv_table_get(s, q->p->table, q->p->body, q->p->n, &q->t, &q->err);
    if (rc == FLOE_ENOTFOUND)
        q->status = 404;
    else if (rc == FLOE_EINVALID)
        q->status = 400;
    if (rc == FLOE_EBUSY) { /* the catalog does not answer */
        q->status = 503;
        *q->retry_after = 5;
    }
    if (rc < 0)
        return rc;
    if (atomic_load(&s->land.buffered_bytes) + srv_wal_queued(s) > s->cfg.buffer_cap ||
        srv_landing_wait_backlog(s, s->cfg.read_timeout_ms) < 0) {
        q->status = 503;
        *q->retry_after = 1;
        return floe_error_set(&q->err, FLOE_EBUSY, "buffers are full; retry later");
    }
    return 0;
}

/* The request's Idempotency-Key is held for it; 1 with *prior when it was answered
 * before. */
static int ingest_hold_key(ingest_req *q, char **prior) {
    int rc = srv_idem_begin(q->s, q->p->table, q->p->key, prior);
    if (rc == 1)
        return 1;
    if (rc == FLOE_EBUSY) { /* another node is taking this very request */
        q->status = 409;
        *q->retry_after = 1;
        return floe_error_set(&q->err, rc, "a request with this Idempotency-Key is in "
                              "progress on another node; retry later for its answer");
    }
    if (rc == FLOE_ENOMEM)
        return floe_error_set(&q->err, rc, "out of memory");
    if (rc < 0) { /* fail closed: taking it might take a retry twice */
        q->status = 503;
        *q->retry_after = 2;
        return floe_error_set(&q->err, rc, "the idempotency index cannot be reached to look "
                              "this Idempotency-Key up; retry later (requests without a key "
                              "are still taken)");
    }
    q->key_held = true;
    return 0;
}

/* Returned by ingest_piece when the table schema evolved: shred the body again. */
#define INGEST_RESHRED 1

/* One piece of the body from *pos: shred it, quarantine the rejects, route the rest,
 * clear the batch. */
static int ingest_piece(ingest_req *q, size_t *pos, int64_t *line) {
    floe_server *s = q->s;
    const srv_post *p = q->p;
    srv_table *t = q->t;
    srv_scratch *sc = q->sc;
    size_t from = *pos, piece = p->n - *pos < PIECE_BYTES ? p->n - *pos : PIECE_BYTES;
    int rc;
    if ((rc = scratch_charge(sc, (int64_t)(PIECE_MARGIN * piece + 65536))) < 0)
        return ingest_budget(q, rc);
    floe_shred_stats before, after;
    floe_shredder_stats(sc->sh, &before);
    if (q->array) {
        rc = floe_shredder_feed_array_part(sc->sh, p->body, p->n, p->source, 0, pos,
                                           PIECE_BYTES, &sc->batch, on_reject, sc, &q->err);
    } else {
        size_t end = p->n;
        if (p->n - *pos > PIECE_BYTES) {
            const uint8_t *nl = memchr(p->body + *pos + PIECE_BYTES - 1, '\n',
                                       p->n - *pos - PIECE_BYTES + 1);
            end = nl ? (size_t)(nl - p->body) + 1 : p->n;
        }
        rc = floe_shredder_feed(sc->sh, p->body + *pos, end - *pos, p->source, *line,
                                (int64_t)*pos, &sc->batch, on_reject, sc, &q->err);
        *pos = end;
    }
    if (rc == FLOE_ECORRUPT)
        q->status = 400;
    if (rc == FLOE_EBUSY || rc == FLOE_ELIMIT)
        return ingest_budget(q, rc);
    if (rc < 0)
        return rc;
    floe_shredder_stats(sc->sh, &after);
    uint64_t unk = after.unknown_fields - before.unknown_fields;
    if (q->mode == FLOE_SCHEMA_EVOLVE && unk > 0 && !q->evolved) {
        /* new fields: add them to the table schema, then shred again against it */
        pthread_rwlock_unlock(&t->schema_lock);
        q->locked = false;
        scratch_put(t, sc);
        q->sc = NULL;
        q->evolved = true;
        if ((rc = srv_table_evolve(s, t, p->body, p->n, q->array, &q->err)) < 0) {
            floe_log(FLOE_LOG_WARN, "serve: table %s: schema evolution failed: %s",
                     t->name, q->err.msg);
            floe_error_clear(&q->err);
        }
        return INGEST_RESHRED;
    }
    q->unknown += unk;
    sc->nspans = 0;
    if ((rc = q->array ? split_array(sc, p->body, from, *pos)
                       : split_lines(sc, p->body, from, *pos, line)) < 0)
        return ingest_nomem(q);
    if (sc->nspans > sc->rejected_cap) {
        uint8_t *nr = floe_realloc(sc->rejected, sc->nspans);
        if (!nr)
            return ingest_nomem(q);
        sc->rejected = nr;
        sc->rejected_cap = sc->nspans;
    }
    memset(sc->rejected, 0, sc->nspans);
    if ((rc = take_rejects(sc, p, q->records, &q->listed, &q->rej_bytes)) < 0)
        return ingest_budget(q, rc);
    if (sc->nrejects > sc->nspans || sc->nspans - sc->nrejects != sc->batch.nrows)
        return floe_error_set(&q->err, FLOE_EINTERNAL, "record split disagrees with the "
                              "shredder (%zu records, %zu rejected, %zu rows)", sc->nspans,
                              sc->nrejects, sc->batch.nrows);
    if ((rc = route_records(t, sc, p->body, q->array, s->cfg.max_request_partitions,
                            s->route_seed, &q->err)) < 0) {
        if (rc == FLOE_ELIMIT)
            q->status = 413;
        else if (rc == FLOE_EBUSY)
            ingest_budget(q, rc);
        return rc;
    }
    q->records += sc->nspans;
    q->accepted += sc->batch.nrows;
    q->rejected += sc->nrejects;
    floe_batch_clear(&sc->batch);
    floe_buf_reset(&sc->rejects);
    sc->nrejects = 0;
    return 0;
}

/* The whole body, piece by piece, under the table's schema lock (again from the start
 * when the schema evolved). */
static int ingest_shred(ingest_req *q) {
    const srv_post *p = q->p;
    srv_table *t = q->t;
    int rc;
    for (;;) {
        /* evolve: fields first collected, then added to the table; a field still unknown
         * after that (one evolution cannot add: an empty key, a value of no type) rejects
         * its record now, with the reason, as the compactor would reject it later: an
         * acknowledged event never goes to the quarantine afterwards */
        floe_unknown_policy policy =
            q->mode == FLOE_SCHEMA_STRICT || q->evolved ? FLOE_UNKNOWN_REJECT
            : q->mode == FLOE_SCHEMA_IGNORE             ? FLOE_UNKNOWN_IGNORE
                                                        : FLOE_UNKNOWN_COLLECT;
        pthread_rwlock_rdlock(&t->schema_lock);
        q->locked = true;
        if ((rc = scratch_get(q->s, t, policy, &q->sc, &q->err)) < 0)
            return rc;
        q->sc->other = p->held;
        q->records = q->accepted = q->rejected = q->listed = 0;
        q->rej_bytes = q->unknown = 0;
        if ((rc = floe_buf_printf(&q->sc->errors, "[")) < 0)
            return ingest_budget(q, rc);
        size_t pos = 0;
        int64_t line = 1;
        bool more = q->array || p->n > 0;
        rc = 0;
        while (more && rc == 0) {
            rc = ingest_piece(q, &pos, &line);
            more = pos < p->n;
        }
        if (rc != INGEST_RESHRED)
            break;
    }
    if (rc < 0)
        return rc;
    pthread_rwlock_unlock(&t->schema_lock);
    q->locked = false;
    if (q->unknown)
        atomic_fetch_add(&t->unknown_fields, q->unknown);
    if (q->records == 0) {
        q->status = 400;
        return floe_error_set(&q->err, FLOE_EINVALID, "the body holds no records");
    }
    if (floe_buf_printf(&q->sc->errors, "]") < 0)
        return ingest_nomem(q);
    return 0;
}

/* The frame: one section per partition, the quarantine lines, the answer; its growth is
 * taken from the budget first (compressed sections are at most a little larger than
 * their input). */
static int ingest_frame(ingest_req *q) {
    floe_server *s = q->s;
    const srv_post *p = q->p;
    srv_table *t = q->t;
    srv_scratch *sc = q->sc;
    int rc;
    size_t frame_bound = 4096 + sc->qlines.len + sc->qlines.len / 64;
    for (size_t g = 0; g < sc->ngroups; g++)
        frame_bound += 96 + sc->groups[g].path.len + sc->groups[g].raw.len +
                       sc->groups[g].raw.len / 64;
    if ((rc = sc_room_exact(sc, &sc->frame, frame_bound + strlen(t->name) *
                            (sc->ngroups + 2) + sc->errors.len + 256)) < 0)
        return ingest_budget(q, rc);
    int pr = q->rejected > q->listed
                 ? floe_buf_printf(&sc->rest, "\"accepted\":%zu,\"rejected\":%zu,\"errors_listed\":"
                                   "%zu,\"errors\":%.*s}", q->accepted, q->rejected, q->listed,
                                   (int)sc->errors.len, (const char *)sc->errors.data)
                 : floe_buf_printf(&sc->rest, "\"accepted\":%zu,\"rejected\":%zu,\"errors\":%.*s}",
                                   q->accepted, q->rejected, (int)sc->errors.len,
                                   (const char *)sc->errors.data);
    if (pr < 0)
        return ingest_nomem(q);
    if (floe_frame_begin(&sc->frame) < 0)
        return ingest_nomem(q);
    int level = (int)s->cfg.compression_level;
    uint8_t codec = section_codec(s);
    size_t tl = strlen(t->name);
    for (size_t g = 0; g < sc->ngroups; g++) {
        part_group *pg = &sc->groups[g];
        if (pg->records == 0)
            continue;
        q->acc_bytes += pg->raw.len;
        floe_buf_reset(&sc->pathbuf);
        if ((rc = sc_room_exact(sc, &sc->comp, pg->raw.len + pg->raw.len / 64 + 4096)) < 0)
            return ingest_budget(q, rc);
        if (floe_buf_append(&sc->pathbuf, t->name, tl + 1) < 0 ||
            floe_buf_append(&sc->pathbuf, pg->path.data, pg->path.len) < 0 ||
            compress_into(sc, codec, pg->raw.data, pg->raw.len, level) < 0 ||
            floe_frame_add_section(&sc->frame, FLOE_SECTION_RECORDS, codec,
                                   sc->pathbuf.data, sc->pathbuf.len, pg->records,
                                   (uint32_t)pg->raw.len, sc->comp.data, sc->comp.len) < 0)
            return ingest_nomem(q);
    }
    if (q->rejected) {
        if ((rc = sc_room_exact(sc, &sc->comp, sc->qlines.len + sc->qlines.len / 64 + 4096)) < 0)
            return ingest_budget(q, rc);
        if (compress_into(sc, codec, sc->qlines.data, sc->qlines.len, level) < 0 ||
            floe_frame_add_section(&sc->frame, FLOE_SECTION_QUARANTINE, codec, t->name,
                                   tl, (uint32_t)q->rejected, (uint32_t)sc->qlines.len,
                                   sc->comp.data, sc->comp.len) < 0)
            return ingest_nomem(q);
    }
    if (p->key) {
        floe_buf_reset(&sc->pathbuf);
        if (floe_buf_append(&sc->pathbuf, t->name, tl + 1) < 0 ||
            floe_buf_append(&sc->pathbuf, p->key, strlen(p->key)) < 0 ||
            floe_frame_add_section(&sc->frame, FLOE_SECTION_ANSWER, FLOE_CODEC_NONE_,
                                   sc->pathbuf.data, sc->pathbuf.len, 0,
                                   (uint32_t)sc->rest.len, sc->rest.data, sc->rest.len) < 0)
            return ingest_nomem(q);
    }
    floe_frame_end(&sc->frame);
    (void)scratch_charge(sc, 0); /* what it really took; giving back never fails */
    return 0;
}

int srv_ingest(floe_server *s, const srv_post *p, char **answer, size_t *answer_len,
               int *retry_after) {
    ingest_req q;
    memset(&q, 0, sizeof q);
    q.s = s;
    q.p = p;
    q.retry_after = retry_after;
    floe_error_clear(&q.err);
    q.status = 500;
    char *ans = NULL;
    int rc;
    if ((rc = ingest_admit(&q)) < 0)
        goto fail;
    if (p->key) {
        char *prior = NULL;
        if ((rc = ingest_hold_key(&q, &prior)) == 1) {
            atomic_fetch_add(&s->m.idempotent_replays, 1);
            *answer = prior;
            *answer_len = strlen(prior);
            return 200;
        }
        if (rc < 0)
            goto fail;
    }
    for (size_t i = 0; i < p->n; i++) {
        uint8_t c = p->body[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        q.array = c == '[';
        break;
    }
    q.mode = srv_table_mode(s, q.t);
    if ((rc = ingest_shred(&q)) < 0 || (rc = ingest_frame(&q)) < 0)
        goto fail;
    srv_table *t = q.t;
    wal_req wr = {.frame = &q.sc->frame};
    rc = srv_wal_submit(s, &wr);
    if (rc < 0) {
        q.status = 503;
        *retry_after = 5;
        floe_error_set(&q.err, rc, "the write-ahead log is not accepting writes (%s)",
                       floe_strerror(rc));
        goto fail;
    }
    q.key_held = false; /* the WAL thread has recorded the answer */
    ans = floe_asprintf("{\"batch_id\":\"%s-%llu\",%.*s", s->node,
                        (unsigned long long)wr.frame_id, (int)q.sc->rest.len,
                        (const char *)q.sc->rest.data);
    if (!ans) {
        rc = ingest_nomem(&q);
        goto fail;
    }
    atomic_fetch_add(&t->events_accepted, q.accepted);
    atomic_fetch_add(&t->events_rejected, q.rejected);
    atomic_fetch_add(&t->bytes_accepted, q.acc_bytes);
    atomic_fetch_add(&t->bytes_rejected, q.rej_bytes);
    scratch_put(t, q.sc);
    *answer = ans;
    *answer_len = strlen(ans);
    return 200;
fail:
    if (q.locked)
        pthread_rwlock_unlock(&q.t->schema_lock);
    if (q.sc)
        scratch_put(q.t, q.sc);
    if (q.key_held)
        srv_idem_abort(s, p->table, p->key);
    if (q.status == 500)
        floe_log(FLOE_LOG_ERROR, "serve: %s: %s", p->table, q.err.msg);
    ans = answer_error(q.status, q.err.msg[0] ? q.err.msg : floe_strerror(rc), answer_len);
    *answer = ans;
    if (!ans)
        *answer_len = 0;
    return q.status;
}

/* ---- Content-Encoding ------------------------------------------------------------- */

/* zstd windows past 8 MiB are refused (RFC 9659: encoders for HTTP keep to 8 MiB), so a
 * decoder never holds more than that plus its block buffers. */
#define ZSTD_WINDOW_LOG_MAX 23
#define DECODE_STEP ((size_t)64 << 10)

struct srv_decoder {
    floe_zstream *z;
};

int srv_decoder_new(const char *encoding, srv_decoder **out, floe_error *err) {
    bool gzip = !strcasecmp(encoding, "gzip") || !strcasecmp(encoding, "x-gzip");
    if (!gzip && strcasecmp(encoding, "zstd"))
        return floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported Content-Encoding '%s'",
                              encoding);
    srv_decoder *d = floe_calloc(1, sizeof *d);
    if (!d)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_zstream_options o = {.kind = gzip ? FLOE_ZSTREAM_GZIP : FLOE_ZSTREAM_ZSTD,
                              .what = "decoded body",
                              .zstd_window_log_max = ZSTD_WINDOW_LOG_MAX};
    int rc = floe_zstream_new(&o, &d->z, err);
    if (rc < 0) {
        floe_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void srv_decoder_free(srv_decoder *d) {
    if (!d)
        return;
    floe_zstream_free(d->z);
    floe_free(d);
}

size_t srv_decoder_bytes(const srv_decoder *d) {
    return sizeof *d + floe_zstream_bytes(d->z);
}

size_t srv_decoder_ahead(const srv_decoder *d, const uint8_t *p, size_t n) {
    return sizeof *d + floe_zstream_bytes_ahead(d->z, p, n);
}

/* Free room in out for the next decoded bytes (at most cap + 1 - len: one byte past the
 * cap is enough to tell a body that is too large). */
static int decode_room(floe_buf *out, size_t cap, srv_room_fn room, void *ctx, size_t *avail) {
    size_t left = out->len > cap ? 1 : cap + 1 - out->len;
    if (out->cap <= out->len + 1) {
        FLOE_FORWARD_IF_ERROR(room(ctx, out, left < DECODE_STEP ? left : DECODE_STEP));
        if (out->cap <= out->len + 1)
            return FLOE_ENOMEM;
    }
    size_t a = out->cap - out->len - 1; /* floe_buf keeps a byte for a NUL */
    *avail = a < left ? a : left;
    return 0;
}

int srv_decoder_feed(srv_decoder *d, const uint8_t *p, size_t n, size_t cap, floe_buf *out,
                     srv_room_fn room, void *ctx, floe_error *err) {
    floe_zstream_set_cap(d->z, cap, "decoded body");
    for (;;) {
        size_t avail, used, got;
        int rc = decode_room(out, cap, room, ctx, &avail);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: %s", floe_zstream_name(d->z), floe_strerror(rc));
        rc = floe_zstream_decode(d->z, p, n, &used, out->data + out->len, avail, &got, err);
        out->len += got;
        if (rc < 0)
            return rc;
        p += used;
        n -= used;
        if (n == 0 && got < avail)
            return 0; /* everything taken, nothing held back */
    }
}

int srv_decoder_finish(srv_decoder *d, floe_error *err) {
    if (!floe_zstream_complete(d->z))
        return floe_error_set(err, FLOE_ECORRUPT, "%s: truncated stream",
                              floe_zstream_name(d->z));
    return 0;
}

static int room_free(void *ctx, floe_buf *out, size_t want) {
    (void)ctx;
    return floe_buf_reserve(out, want);
}

int srv_decode_body(const uint8_t *p, size_t n, const char *encoding, size_t cap,
                    floe_buf *out, floe_error *err) {
    floe_buf_reset(out);
    srv_decoder *d = NULL;
    FLOE_FORWARD_IF_ERROR(srv_decoder_new(encoding, &d, err));
    int rc = srv_decoder_feed(d, p, n, cap, out, room_free, NULL, err);
    if (rc == 0)
        rc = srv_decoder_finish(d, err);
    srv_decoder_free(d);
    return rc;
}
