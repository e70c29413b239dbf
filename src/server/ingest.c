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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "floe/quarantine.h"
#include "server_internal.h"

typedef struct reject_rec {
    int64_t offset, line;
    int32_t reason;
    uint32_t msg_len;
    uint32_t rec_len;     /* raw record bytes follow the message */
} reject_rec;

#define MAX_PART_FIELDS 16

typedef struct part_group {
    floe_buf path;
    floe_buf raw;
    uint32_t records;
    uint64_t hash;                     /* of its tuple (tuple_hash) */
} part_group;

struct srv_scratch {
    srv_scratch *next;    /* must stay first (tables.c walks the pool through it) */
    const floe_schema *schema;
    int gen;
    floe_unknown_policy policy; /* compiled into the shredder */
    floe_shredder *sh;
    floe_batch batch;
    bool batch_ok;
    floe_buf rejects;     /* reject_rec + message + record, repeated */
    size_t nrejects;
    size_t *spans;        /* start, end per record */
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
    floe_section_coder_free(sc->coder);
    floe_free(sc);
}

/* A scratch compiled for the table's current schema (caller holds schema_lock). */
static int scratch_get(floe_server *s, srv_table *t, floe_unknown_policy policy,
                       srv_scratch **out, floe_error *err) {
    srv_scratch *sc = NULL;
    pthread_mutex_lock(&t->pool_mu);
    srv_scratch **p = &t->pool;
    while (*p && ((*p)->gen != t->schema_gen || (*p)->policy != policy))
        p = &(*p)->next;
    if (*p) {
        sc = *p;
        *p = sc->next;
    }
    pthread_mutex_unlock(&t->pool_mu);
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
        sc->coder = floe_section_coder_new();
        floe_shred_options so = {.max_record = (size_t)s->cfg.max_record, .unknown = policy};
        int rc = 0;
        if (!sc->coder)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (rc == 0)
            rc = floe_shredder_new(t->schema, &so, &sc->sh, err);
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
    *out = sc;
    return 0;
}

static void scratch_put(srv_table *t, srv_scratch *sc) {
    /* Do not pool giant buffers: one huge request must not pin memory forever (I6). */
    if (sc->frame.cap > (32u << 20))
        floe_buf_free(&sc->frame);
    if (sc->comp.cap > (32u << 20))
        floe_buf_free(&sc->comp);
    pthread_mutex_lock(&t->pool_mu);
    sc->next = t->pool;
    t->pool = sc;
    pthread_mutex_unlock(&t->pool_mu);
}

static int on_reject(void *ctx, const floe_reject *r) {
    srv_scratch *sc = ctx;
    size_t ml = strlen(r->message);
    if (ml > 512)
        ml = 512;
    reject_rec rr = {.offset = r->offset, .line = r->line, .reason = (int32_t)r->reason,
                     .msg_len = (uint32_t)ml, .rec_len = (uint32_t)r->record_len};
    int rc = floe_buf_append(&sc->rejects, &rr, sizeof rr);
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

/* Records of an NDJSON body: non-blank lines (blank = only spaces, tabs, '\r'), as the
 * shredder counts them. */
static int split_lines(srv_scratch *sc, const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
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

/* Elements of a JSON array the shredder has already found well formed. */
static int split_array(srv_scratch *sc, const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n && p[i] != '[')
        i++;
    i++;
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
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
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
                while (e > start && (p[e - 1] == ' ' || p[e - 1] == '\t' || p[e - 1] == '\r' ||
                                     p[e - 1] == '\n'))
                    e--;
                FLOE_FORWARD_IF_ERROR(push_span(sc, start, e));
            }
            start = SIZE_MAX;
            if (c == ']')
                break;
        }
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
    if (nf)
        memcpy(sc->tuples + sc->ngroups * nf, tuple, nf * sizeof *tuple);
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

int srv_ingest(floe_server *s, const srv_post *p, char **answer, size_t *answer_len,
               int *retry_after) {
    floe_error err;
    floe_error_clear(&err);
    srv_table *t = NULL;
    srv_scratch *sc = NULL;
    bool key_held = false, locked = false, evolved = false;
    int status = 500;
    char *ans = NULL;
    int rc = srv_table_get(s, p->table, p->body, p->n, &t, &err);
    if (rc == FLOE_ENOTFOUND) {
        status = 404;
        goto fail;
    }
    if (rc == FLOE_EINVALID) {
        status = 400;
        goto fail;
    }
    if (rc < 0)
        goto fail;
    /* backpressure before any work (I6): memory first, then the landing backlog */
    if (atomic_load(&s->land.buffered_bytes) + srv_wal_queued(s) > s->cfg.buffer_cap ||
        srv_landing_wait_backlog(s, s->cfg.read_timeout_ms) < 0) {
        status = 503;
        *retry_after = 1;
        floe_error_set(&err, FLOE_EBUSY, "buffers are full; retry later");
        goto fail;
    }
    if (p->key) {
        char *prior = NULL;
        rc = srv_idem_begin(s, p->table, p->key, &prior);
        if (rc == 1) {
            atomic_fetch_add(&s->m.idempotent_replays, 1);
            *answer = prior;
            *answer_len = strlen(prior);
            return 200;
        }
        if (rc == FLOE_EBUSY) { /* another node is taking this very request */
            status = 409;
            *retry_after = 1;
            floe_error_set(&err, rc, "a request with this Idempotency-Key is in progress on "
                           "another node; retry later for its answer");
            goto fail;
        }
        if (rc == FLOE_ENOMEM) {
            floe_error_set(&err, rc, "out of memory");
            goto fail;
        }
        if (rc < 0) { /* fail closed: taking it might take a retry twice */
            status = 503;
            *retry_after = 2;
            floe_error_set(&err, rc, "the idempotency index cannot be reached to look this "
                           "Idempotency-Key up; retry later (requests without a key are "
                           "still taken)");
            goto fail;
        }
        key_held = true;
    }
    bool array = false;
    for (size_t i = 0; i < p->n; i++) {
        uint8_t c = p->body[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        array = c == '[';
        break;
    }
    floe_schema_mode mode = srv_table_mode(s, t);
    floe_unknown_policy policy = mode == FLOE_SCHEMA_STRICT ? FLOE_UNKNOWN_REJECT
                                 : mode == FLOE_SCHEMA_IGNORE ? FLOE_UNKNOWN_IGNORE
                                                              : FLOE_UNKNOWN_COLLECT;
shred:
    pthread_rwlock_rdlock(&t->schema_lock);
    locked = true;
    if ((rc = scratch_get(s, t, policy, &sc, &err)) < 0)
        goto fail;
    floe_shred_stats before, after;
    floe_shredder_stats(sc->sh, &before);
    if (array)
        rc = floe_shredder_feed_array(sc->sh, p->body, p->n, p->source, 0, &sc->batch,
                                      on_reject, sc, &err);
    else
        rc = floe_shredder_feed(sc->sh, p->body, p->n, p->source, 1, 0, &sc->batch, on_reject,
                                sc, &err);
    if (rc == FLOE_ECORRUPT) {
        status = 400;
        goto fail;
    }
    if (rc == FLOE_ELIMIT) {
        status = 413;
        goto fail;
    }
    if (rc < 0)
        goto fail;
    floe_shredder_stats(sc->sh, &after);
    uint64_t unknown = after.unknown_fields - before.unknown_fields;
    if (mode == FLOE_SCHEMA_EVOLVE && unknown > 0 && !evolved) {
        /* new fields: add them to the table schema, then shred again against it */
        pthread_rwlock_unlock(&t->schema_lock);
        locked = false;
        scratch_put(t, sc);
        sc = NULL;
        evolved = true;
        if ((rc = srv_table_evolve(s, t, p->body, p->n, array, &err)) < 0) {
            floe_log(FLOE_LOG_WARN, "serve: table %s: schema evolution failed: %s", t->name,
                     err.msg);
            floe_error_clear(&err);
        }
        goto shred;
    }
    if (unknown)
        atomic_fetch_add(&t->unknown_fields, unknown);
    if ((rc = array ? split_array(sc, p->body, p->n) : split_lines(sc, p->body, p->n)) < 0)
        goto fail;
    if (sc->nspans == 0) {
        status = 400;
        floe_error_set(&err, FLOE_EINVALID, "the body holds no records");
        goto fail;
    }
    if (sc->nspans > sc->rejected_cap) {
        uint8_t *nr = floe_realloc(sc->rejected, sc->nspans);
        if (!nr) {
            rc = FLOE_ENOMEM;
            goto fail;
        }
        sc->rejected = nr;
        sc->rejected_cap = sc->nspans;
    }
    memset(sc->rejected, 0, sc->nspans);
    /* rejected records: mark, answer, quarantine line */
    floe_buf_printf(&sc->errors, "[");
    size_t off = 0;
    uint64_t rej_bytes = 0;
    for (size_t i = 0; i < sc->nrejects; i++) {
        reject_rec rr;
        memcpy(&rr, sc->rejects.data + off, sizeof rr);
        const uint8_t *msg = sc->rejects.data + off + sizeof rr;
        const uint8_t *rec = msg + rr.msg_len;
        off += sizeof rr + rr.msg_len + rr.rec_len;
        off = (off + 7) & ~(size_t)7;
        size_t idx = span_index(sc, rr.offset);
        sc->rejected[idx] = 1;
        rej_bytes += rr.rec_len;
        const char *reason = floe_reject_reason_name((floe_reject_reason)rr.reason);
        if (floe_buf_printf(&sc->errors, "%s{\"index\":%zu,\"reason\":\"%s\",\"message\":",
                            i ? "," : "", idx, reason) < 0 ||
            floe_json_append_string(&sc->errors, msg, rr.msg_len) < 0 ||
            floe_buf_append_byte(&sc->errors, '}') < 0)
            goto nomem;
        if (floe_buf_printf(&sc->qlines, "{\"source\":") < 0 ||
            floe_json_append_string(&sc->qlines, (const uint8_t *)p->source,
                                    strlen(p->source)) < 0 ||
            floe_buf_printf(&sc->qlines, ",\"index\":%zu,\"line\":%lld,\"offset\":%lld,"
                            "\"reason\":\"%s\",\"message\":", idx, (long long)rr.line,
                            (long long)rr.offset, reason) < 0 ||
            floe_json_append_string(&sc->qlines, msg, rr.msg_len) < 0)
            goto nomem;
        if (floe_utf8_valid(rec, rr.rec_len)) {
            if (floe_buf_printf(&sc->qlines, ",\"record\":") < 0 ||
                floe_json_append_string(&sc->qlines, rec, rr.rec_len) < 0)
                goto nomem;
        } else if (floe_buf_printf(&sc->qlines, ",\"record_base64\":\"") < 0 ||
                   floe_base64_append(&sc->qlines, rec, rr.rec_len) < 0 ||
                   floe_buf_append_byte(&sc->qlines, '"') < 0) {
            goto nomem;
        }
        if (floe_buf_printf(&sc->qlines, "}\n") < 0)
            goto nomem;
    }
    if (floe_buf_printf(&sc->errors, "]") < 0)
        goto nomem;
    size_t accepted = sc->nspans - sc->nrejects;
    if (sc->nrejects > sc->nspans || accepted != sc->batch.nrows) {
        floe_error_set(&err, FLOE_EINTERNAL, "record split disagrees with the shredder "
                       "(%zu records, %zu rejected, %zu rows)", sc->nspans, sc->nrejects,
                       sc->batch.nrows);
        goto fail;
    }
    if ((rc = route_records(t, sc, p->body, array, s->cfg.max_request_partitions,
                            s->route_seed, &err)) < 0) {
        if (rc == FLOE_ELIMIT)
            status = 413;
        goto fail;
    }
    pthread_rwlock_unlock(&t->schema_lock);
    locked = false;

    /* the frame: one section per partition, the quarantine lines, the answer */
    if (floe_buf_printf(&sc->rest, "\"accepted\":%zu,\"rejected\":%zu,\"errors\":%.*s}",
                        accepted, sc->nrejects, (int)sc->errors.len,
                        (const char *)sc->errors.data) < 0 ||
        floe_frame_begin(&sc->frame) < 0)
        goto nomem;
    int level = (int)s->cfg.compression_level;
    uint8_t codec = section_codec(s);
    size_t tl = strlen(t->name);
    uint64_t acc_bytes = 0;
    for (size_t g = 0; g < sc->ngroups; g++) {
        part_group *pg = &sc->groups[g];
        if (pg->records == 0)
            continue;
        acc_bytes += pg->raw.len;
        floe_buf_reset(&sc->pathbuf);
        if (floe_buf_append(&sc->pathbuf, t->name, tl + 1) < 0 ||
            floe_buf_append(&sc->pathbuf, pg->path.data, pg->path.len) < 0 ||
            compress_into(sc, codec, pg->raw.data, pg->raw.len, level) < 0 ||
            floe_frame_add_section(&sc->frame, FLOE_SECTION_RECORDS, codec,
                                   sc->pathbuf.data, sc->pathbuf.len, pg->records,
                                   (uint32_t)pg->raw.len, sc->comp.data, sc->comp.len) < 0)
            goto nomem;
    }
    if (sc->nrejects &&
        (compress_into(sc, codec, sc->qlines.data, sc->qlines.len, level) < 0 ||
         floe_frame_add_section(&sc->frame, FLOE_SECTION_QUARANTINE, codec, t->name,
                                tl, (uint32_t)sc->nrejects, (uint32_t)sc->qlines.len,
                                sc->comp.data, sc->comp.len) < 0))
        goto nomem;
    if (p->key) {
        floe_buf_reset(&sc->pathbuf);
        if (floe_buf_append(&sc->pathbuf, t->name, tl + 1) < 0 ||
            floe_buf_append(&sc->pathbuf, p->key, strlen(p->key)) < 0 ||
            floe_frame_add_section(&sc->frame, FLOE_SECTION_ANSWER, FLOE_CODEC_NONE_,
                                   sc->pathbuf.data, sc->pathbuf.len, 0,
                                   (uint32_t)sc->rest.len, sc->rest.data, sc->rest.len) < 0)
            goto nomem;
    }
    floe_frame_end(&sc->frame);
    wal_req wr = {.frame = &sc->frame};
    rc = srv_wal_submit(s, &wr);
    if (rc < 0) {
        status = 503;
        *retry_after = 5;
        floe_error_set(&err, rc, "the write-ahead log is not accepting writes (%s)",
                       floe_strerror(rc));
        goto fail;
    }
    key_held = false; /* the WAL thread has recorded the answer */
    ans = floe_asprintf("{\"batch_id\":\"%s-%llu\",%.*s", s->node,
                        (unsigned long long)wr.frame_id, (int)sc->rest.len,
                        (const char *)sc->rest.data);
    if (!ans)
        goto nomem;
    atomic_fetch_add(&t->events_accepted, accepted);
    atomic_fetch_add(&t->events_rejected, sc->nrejects);
    atomic_fetch_add(&t->bytes_accepted, acc_bytes);
    atomic_fetch_add(&t->bytes_rejected, rej_bytes);
    scratch_put(t, sc);
    *answer = ans;
    *answer_len = strlen(ans);
    return 200;
nomem:
    status = 500;
    floe_error_set(&err, FLOE_ENOMEM, "out of memory");
fail:
    if (locked)
        pthread_rwlock_unlock(&t->schema_lock);
    if (sc)
        scratch_put(t, sc);
    if (key_held)
        srv_idem_abort(s, p->table, p->key);
    if (status == 500)
        floe_log(FLOE_LOG_ERROR, "serve: %s: %s", p->table, err.msg);
    ans = answer_error(status, err.msg[0] ? err.msg : floe_strerror(rc), answer_len);
    *answer = ans;
    if (!ans)
        *answer_len = 0;
    return status;
}

/* ---- Content-Encoding ------------------------------------------------------------- */

int srv_decode_body(const uint8_t *p, size_t n, const char *encoding, size_t cap,
                    floe_buf *out, floe_error *err) {
    floe_buf_reset(out);
    int rc = 0;
    if (!strcasecmp(encoding, "gzip") || !strcasecmp(encoding, "x-gzip")) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
            return floe_error_set(err, FLOE_ENOMEM, "gzip: cannot initialise");
        zs.next_in = (Bytef *)p;
        zs.avail_in = (uInt)n;
        for (;;) {
            if (out->cap - out->len < 65536) {
                size_t want = out->len + 65536 > cap + 1 ? cap + 1 - out->len : 65536;
                if (want == 0 || floe_buf_reserve(out, want) < 0) {
                    rc = floe_error_set(err, out->len >= cap ? FLOE_ELIMIT : FLOE_ENOMEM,
                                        "gzip: decoded body is larger than %zu bytes", cap);
                    break;
                }
            }
            zs.next_out = out->data + out->len;
            size_t room = out->cap - out->len;
            if (out->len + room > cap + 1)
                room = cap + 1 - out->len;
            zs.avail_out = (uInt)room;
            int zr = inflate(&zs, Z_NO_FLUSH);
            out->len += room - zs.avail_out;
            if (out->len > cap) {
                rc = floe_error_set(err, FLOE_ELIMIT, "gzip: decoded body is larger than %zu "
                                    "bytes", cap);
                break;
            }
            if (zr == Z_STREAM_END) {
                if (zs.avail_in == 0)
                    break;
                inflateReset(&zs); /* another gzip member follows */
                continue;
            }
            if (zr != Z_OK && zr != Z_BUF_ERROR) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "gzip: %s", zs.msg ? zs.msg : "bad data");
                break;
            }
            if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "gzip: truncated stream");
                break;
            }
        }
        inflateEnd(&zs);
        return rc;
    }
    if (!strcasecmp(encoding, "zstd")) {
        ZSTD_DStream *zd = ZSTD_createDStream();
        if (!zd)
            return floe_error_set(err, FLOE_ENOMEM, "zstd: cannot initialise");
        ZSTD_DCtx_setParameter(zd, ZSTD_d_windowLogMax, 27);
        ZSTD_inBuffer in = {p, n, 0};
        size_t last = 1;
        while (in.pos < in.size || last != 0) {
            if (out->cap - out->len < 65536 &&
                floe_buf_reserve(out, out->len + 65536 > cap + 1 ? cap + 1 - out->len : 65536) < 0) {
                rc = floe_error_set(err, out->len >= cap ? FLOE_ELIMIT : FLOE_ENOMEM,
                                    "zstd: decoded body is larger than %zu bytes", cap);
                break;
            }
            size_t room = out->cap - out->len;
            if (out->len + room > cap + 1)
                room = cap + 1 - out->len;
            if (room == 0) {
                rc = floe_error_set(err, FLOE_ELIMIT, "zstd: decoded body is larger than %zu "
                                    "bytes", cap);
                break;
            }
            ZSTD_outBuffer o = {out->data + out->len, room, 0};
            size_t before = in.pos;
            last = ZSTD_decompressStream(zd, &o, &in);
            if (ZSTD_isError(last)) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(last));
                break;
            }
            out->len += o.pos;
            if (out->len > cap) {
                rc = floe_error_set(err, FLOE_ELIMIT, "zstd: decoded body is larger than %zu "
                                    "bytes", cap);
                break;
            }
            if (in.pos == in.size && last != 0 && o.pos == 0 && before == in.pos) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "zstd: truncated stream");
                break;
            }
        }
        ZSTD_freeDStream(zd);
        return rc;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported Content-Encoding '%s'",
                          encoding);
}
