/*
 * reader_rows.c - record assembly (Dremel levels back to nested values) and the row
 * printers of floe_pq_reader_dump: canonical NDJSON (tests/js/lib/canon.mjs), human
 * NDJSON, or column by column to a row callback.
 *
 * Assembly walks the plan built by reader_schema.c with one cursor per slot (level index
 * and value index). A value of plan node P at the current position reads the definition
 * level d of P's first leaf:
 *   d < P.def_present (P nullable)  -> null; every leaf under P holds exactly one entry
 *   LIST/MAP and d < P.rep_def      -> empty; likewise one entry per leaf
 *   otherwise                       -> the value; a LIST repeats its element while the
 *                                      first leaf's next repetition level equals
 *                                      P.rep_level.
 * Every element consumes at least one entry of every leaf below it, so assembly always
 * advances; a cursor that would pass its column's end is reported as corruption.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/literal.h"
#include "floe/variant.h"
#include "parquet/reader_internal.h"


/* ---- scalar formatting ------------------------------------------------------------------ */

static int fmt_i128(floe_buf *b, pq_i128 v, int32_t scale) {
    char d[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)v
                              : (unsigned __int128)v;
    do {
        d[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= scale)
        d[n++] = '0';
    int rc = 0;
    if (neg)
        rc |= floe_buf_append_byte(b, '-');
    for (int i = n - 1; i >= 0; i--) {
        rc |= floe_buf_append_byte(b, (uint8_t)d[i]);
        if (i == scale && scale > 0)
            rc |= floe_buf_append_byte(b, '.');
    }
    return rc < 0 ? FLOE_ENOMEM : 0;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* value in units of 10^-digits seconds */
static int fmt_ts(floe_buf *b, pq_i128 value, int digits, bool tz) {
    int64_t per = digits == 9 ? 1000000000 : 1000000;
    pq_i128 sec128 = value / per;
    if (value % per != 0 && value < 0)
        sec128--;
    int64_t frac = (int64_t)(value - sec128 * per);
    int64_t sec = (int64_t)sec128;
    int64_t days = floordiv(sec, 86400);
    int64_t sod = sec - days * 86400;
    int rc = floe_buf_append_date(b, days);
    if (rc < 0)
        return rc;
    return floe_buf_printf(b, "T%02d:%02d:%02d.%0*lld%s", (int)(sod / 3600),
                           (int)(sod / 60 % 60), (int)(sod % 60), digits, (long long)frac,
                           tz ? "Z" : "");
}

static int fmt_hex(floe_buf *b, const uint8_t *p, size_t n) {
    static const char hx[] = "0123456789abcdef";
    int rc = floe_buf_reserve(b, 2 * n + 2);
    if (rc < 0)
        return rc;
    b->data[b->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        b->data[b->len++] = (uint8_t)hx[p[i] >> 4];
        b->data[b->len++] = (uint8_t)hx[p[i] & 15];
    }
    b->data[b->len++] = '"';
    return 0;
}

static int fmt_uuid(floe_buf *b, const uint8_t *u) {
    return floe_buf_printf(b,
                           "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x"
                           "%02x\"",
                           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
                           u[11], u[12], u[13], u[14], u[15]);
}

/* One value (in-memory form) of leaf lf as JSON. */
static int fmt_value(const pq_leaf *lf, const uint8_t *m, size_t n, floe_buf *b) {
    const floe_pq_node *nd = lf->node;
    pq_value v;
    switch (nd->value_type) {
    case FLOE_TYPE_BOOLEAN:
        return m[0] ? floe_buf_append(b, "true", 4) : floe_buf_append(b, "false", 5);
    case FLOE_TYPE_INT:
        return floe_buf_printf(b, "%d", (int32_t)floe_load_le32(m));
    case FLOE_TYPE_LONG:
        if (nd->is_unsigned)
            return floe_buf_printf(b, "%llu", (unsigned long long)floe_load_le64(m));
        return floe_buf_printf(b, "%lld", (long long)(int64_t)floe_load_le64(m));
    case FLOE_TYPE_FLOAT: {
        float f;
        memcpy(&f, m, 4);
        return floe_buf_append_js_double(b, (double)f);
    }
    case FLOE_TYPE_DOUBLE: {
        double d;
        memcpy(&d, m, 8);
        return floe_buf_append_js_double(b, d);
    }
    case FLOE_TYPE_DECIMAL: {
        int rc = floe_buf_append_byte(b, '"');
        if (rc < 0)
            return rc;
        pq_value_from_col(lf, &(floe_colbuf){.width = lf->out_width, .values = (uint8_t *)m},
                          0, &v);
        rc = fmt_i128(b, v.dec, nd->scale);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    }
    case FLOE_TYPE_DATE: {
        int rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_buf_append_date(b, (int32_t)floe_load_le32(m));
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    }
    case FLOE_TYPE_TIME: {
        int64_t us = (int64_t)floe_load_le64(m);
        int64_t s = floordiv(us, 1000000), f = us - s * 1000000;
        return floe_buf_printf(b, "\"%02lld:%02lld:%02lld.%06lld\"", (long long)(s / 3600),
                               (long long)(s / 60 % 60), (long long)(s % 60), (long long)f);
    }
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        bool ns = nd->value_type == FLOE_TYPE_TIMESTAMP_NS ||
                  nd->value_type == FLOE_TYPE_TIMESTAMPTZ_NS;
        bool tz = nd->value_type == FLOE_TYPE_TIMESTAMPTZ ||
                  nd->value_type == FLOE_TYPE_TIMESTAMPTZ_NS;
        pq_i128 val = (int64_t)floe_load_le64(m);
        if (lf->src_phys == FLOE_PQ_INT96) {
            /* the oracles read INT96 as timestamp_ns */
            val *= 1000;
            ns = true;
        }
        int rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = fmt_ts(b, val, ns ? 9 : 6, tz);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    }
    case FLOE_TYPE_STRING: return floe_json_append_string(b, m, n);
    case FLOE_TYPE_UUID: return fmt_uuid(b, m);
    default: return fmt_hex(b, m, n);
    }
}

static bool type_is_ts(floe_type_id t) {
    return t == FLOE_TYPE_TIMESTAMP || t == FLOE_TYPE_TIMESTAMPTZ ||
           t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS;
}

/* One value of leaf lf printed as table type `as` (0: the file's own type). The plan
 * admits only the pairs floe_pq_reader_select_fields checked (reader_schema.c
 * readable_as): the same type, a promotion, or another rendering of the same bytes. */
static int fmt_leaf(const pq_leaf *lf, floe_type_id as, const uint8_t *m, size_t n,
                    floe_buf *b) {
    floe_type_id from = lf->node->value_type;
    if (!as || as == from || as == FLOE_TYPE_LONG || as == FLOE_TYPE_DOUBLE ||
        as == FLOE_TYPE_DECIMAL) {
        if (!(as && type_is_ts(as) && lf->src_phys == FLOE_PQ_INT96))
            return fmt_value(lf, m, n, b);
    }
    switch (as) {
    case FLOE_TYPE_STRING: return floe_json_append_string(b, m, n);
    case FLOE_TYPE_BINARY: case FLOE_TYPE_FIXED: return fmt_hex(b, m, n);
    case FLOE_TYPE_UUID: return n == 16 ? fmt_uuid(b, m) : fmt_hex(b, m, n);
    case FLOE_TYPE_TIMESTAMP: case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS: case FLOE_TYPE_TIMESTAMPTZ_NS: {
        bool ns = as == FLOE_TYPE_TIMESTAMP_NS || as == FLOE_TYPE_TIMESTAMPTZ_NS;
        bool tz = as == FLOE_TYPE_TIMESTAMPTZ || as == FLOE_TYPE_TIMESTAMPTZ_NS;
        pq_i128 v;
        if (from == FLOE_TYPE_DATE) {
            v = (pq_i128)(int32_t)floe_load_le32(m) * 86400 * (ns ? 1000000000 : 1000000);
        } else {
            v = (int64_t)floe_load_le64(m);
            bool src_ns = from == FLOE_TYPE_TIMESTAMP_NS || from == FLOE_TYPE_TIMESTAMPTZ_NS;
            if (ns && !src_ns)
                v *= 1000;
            else if (!ns && src_ns)
                v = v / 1000 - (v % 1000 < 0);
        }
        int rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = fmt_ts(b, v, ns ? 9 : 6, tz);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    }
    default: return fmt_value(lf, m, n, b);
    }
}

int pq_format_stat_json(const pq_leaf *lf, const uint8_t *p, size_t n, floe_buf *out) {
    uint8_t tmp[32];
    if (lf->out_phys == FLOE_PHYS_BYTE_ARRAY)
        return fmt_value(lf, p, n, out);
    if (lf->conv != PQ_CONV_NONE) {
        if ((lf->src_phys != FLOE_PQ_BYTE_ARRAY && n != (size_t)lf->src_width) ||
            lf->out_width > (int32_t)sizeof tmp || pq_convert_one(lf, p, n, tmp) < 0)
            return FLOE_ECORRUPT;
        return fmt_value(lf, tmp, (size_t)lf->out_width, out);
    }
    if (n != (size_t)lf->out_width)
        return FLOE_ECORRUPT;
    return fmt_value(lf, p, n, out);
}

/* ---- assembly ------------------------------------------------------------------------------ */

typedef struct asm_ctx {
    floe_pq_reader *r;
    size_t *li, *vi;       /* per slot cursors */
    floe_pq_row_format fmt;
    floe_error *err;
    floe_buf discard;      /* what hidden plans print */
    floe_buf vprim;        /* a shredded variant primitive, encoded */
} asm_ctx;

/* Cursors over r's slots; false when they cannot be allocated (asm_free still due). */
static bool asm_init(asm_ctx *a, floe_pq_reader *r, floe_pq_row_format fmt, floe_error *err) {
    memset(a, 0, sizeof *a);
    a->r = r;
    a->fmt = fmt;
    a->err = err;
    floe_buf_init(&a->discard, 0);
    floe_buf_init(&a->vprim, 0);
    size_t ns = r->nslots ? r->nslots : 1;
    a->li = floe_calloc(ns, sizeof *a->li);
    a->vi = floe_calloc(ns, sizeof *a->vi);
    return a->li && a->vi;
}

static void asm_free(asm_ctx *a) {
    floe_free(a->li);
    floe_free(a->vi);
    floe_buf_free(&a->discard);
    floe_buf_free(&a->vprim);
}

static int acorrupt(asm_ctx *a, const pq_plan *p) {
    return floe_error_set(a->err, FLOE_ECORRUPT,
                          "%s: row group %zu: column %s: levels inconsistent with the schema "
                          "(record assembly ran past the column)",
                          a->r->name, a->r->rowset.row_group,
                          p->node ? p->node->path : "?");
}

static int16_t def_at(const floe_colbuf *c, size_t i) { return c->max_def ? c->def[i] : 0; }
static int16_t rep_at(const floe_colbuf *c, size_t i) { return c->max_rep ? c->rep[i] : 0; }

/* Advance every leaf under p past one entry that holds no value. */
static int skip_one(asm_ctx *a, const pq_plan *p) {
    for (int32_t s = p->first_col; s < p->end_col; s++) {
        const floe_colbuf *c = &a->r->cols[s];
        if (a->li[s] >= c->nlevels)
            return acorrupt(a, p);
        if (def_at(c, a->li[s]) == c->max_def)
            return acorrupt(a, p);
        a->li[s]++;
    }
    return 0;
}

static int write_value(asm_ctx *a, const pq_plan *p, floe_buf *b, int depth);

static int write_key(floe_buf *b, const char *name) {
    return floe_json_append_string(b, (const uint8_t *)name, strlen(name));
}

typedef struct pair_ref {
    size_t k0, k1, v0, v1; /* key text and value text in the pair buffer */
} pair_ref;

static const uint8_t *g_sort_base;
static int pair_cmp(const void *x, const void *y) {
    const pair_ref *p = x, *q = y;
    size_t n1 = p->k1 - p->k0, n2 = q->k1 - q->k0;
    int c = memcmp(g_sort_base + p->k0, g_sort_base + q->k0, n1 < n2 ? n1 : n2);
    if (c)
        return c;
    return n1 < n2 ? -1 : n1 > n2;
}

/* NDJSON and CSV print a map with string keys as a JSON object, any other map as an
 * array of {"key":..,"value":..} entries; canonical rows print [key, value] pairs. */
static bool map_as_object(const asm_ctx *a, const pq_plan *p) {
    if (a->fmt == FLOE_PQ_ROWS_CANONICAL || p->nchildren == 0 ||
        p->children[0].kind != PQ_P_LEAF)
        return false;
    const pq_plan *k = &p->children[0];
    return (k->ptype ? k->ptype : k->node->value_type) == FLOE_TYPE_STRING;
}

static int write_map(asm_ctx *a, const pq_plan *p, floe_buf *b, int depth) {
    int32_t s0 = p->first_col;
    const floe_colbuf *c0 = &a->r->cols[s0];
    bool canonical = a->fmt == FLOE_PQ_ROWS_CANONICAL;
    const pq_plan *kp = p->nchildren > 0 ? &p->children[0] : NULL;
    const pq_plan *vp = p->nchildren > 1 ? &p->children[1] : NULL;
    bool obj = map_as_object(a, p);
    /* pairs are rendered into a private buffer, then sorted (canonical) and copied */
    floe_buf tmp;
    floe_buf_init(&tmp, 0);
    pair_ref *pairs = NULL;
    size_t np = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (np == cap) {
            size_t nc = cap ? cap * 2 : 8;
            pair_ref *npairs = floe_realloc(pairs, nc * sizeof *npairs);
            if (!npairs) {
                rc = floe_error_set(a->err, FLOE_ENOMEM, "out of memory");
                goto done;
            }
            pairs = npairs;
            cap = nc;
        }
        pair_ref *pr = &pairs[np++];
        pr->k0 = tmp.len;
        if (kp)
            FLOE_CHECK(write_value(a, kp, &tmp, depth + 1));
        else
            FLOE_CHECK(floe_buf_append(&tmp, "null", 4));
        pr->k1 = tmp.len;
        pr->v0 = tmp.len;
        if (vp)
            FLOE_CHECK(write_value(a, vp, &tmp, depth + 1));
        else
            FLOE_CHECK(floe_buf_append(&tmp, "null", 4));
        pr->v1 = tmp.len;
        if (a->li[s0] < c0->nlevels && rep_at(c0, a->li[s0]) == p->rep_level)
            continue;
        break;
    }
    if (canonical) {
        g_sort_base = tmp.data;
        qsort(pairs, np, sizeof *pairs, pair_cmp);
    }
    rc = floe_buf_append_byte(b, obj ? '{' : '[');
    for (size_t i = 0; i < np && rc == 0; i++) {
        const pair_ref *pr = &pairs[i];
        if (i)
            rc |= floe_buf_append_byte(b, ',');
        if (obj) {
            rc |= floe_buf_append(b, tmp.data + pr->k0, pr->k1 - pr->k0);
            rc |= floe_buf_append_byte(b, ':');
            rc |= floe_buf_append(b, tmp.data + pr->v0, pr->v1 - pr->v0);
        } else if (canonical) {
            rc |= floe_buf_append_byte(b, '[');
            rc |= floe_buf_append(b, tmp.data + pr->k0, pr->k1 - pr->k0);
            rc |= floe_buf_append_byte(b, ',');
            rc |= floe_buf_append(b, tmp.data + pr->v0, pr->v1 - pr->v0);
            rc |= floe_buf_append_byte(b, ']');
        } else {
            rc |= floe_buf_append(b, "{\"key\":", 7);
            rc |= floe_buf_append(b, tmp.data + pr->k0, pr->k1 - pr->k0);
            rc |= floe_buf_append(b, ",\"value\":", 9);
            rc |= floe_buf_append(b, tmp.data + pr->v0, pr->v1 - pr->v0);
            rc |= floe_buf_append_byte(b, '}');
        }
    }
    if (rc == 0)
        rc = floe_buf_append_byte(b, obj ? '}' : ']');
    if (rc < 0)
        rc = floe_error_set(a->err, FLOE_ENOMEM, "out of memory");
done:
    floe_free(pairs);
    floe_buf_free(&tmp);
    return rc;
}

/* A struct's fields; a hidden field's entries are consumed, its text dropped. */
static int write_struct(asm_ctx *a, const pq_plan *p, floe_buf *b, int depth) {
    int rc = floe_buf_append_byte(b, '{');
    bool first = true;
    for (size_t i = 0; i < p->nchildren && rc == 0; i++) {
        const pq_plan *c = &p->children[i];
        if (c->hidden) {
            floe_buf_reset(&a->discard);
            rc = write_value(a, c, &a->discard, depth + 1);
            continue;
        }
        if (!first)
            rc = floe_buf_append_byte(b, ',');
        first = false;
        if (rc == 0)
            rc = write_key(b, c->name);
        if (rc == 0)
            rc = floe_buf_append_byte(b, ':');
        if (rc == 0)
            rc = write_value(a, c, b, depth + 1);
    }
    if (rc == 0)
        rc = floe_buf_append_byte(b, '}');
    return rc;
}

/* ---- variants (VariantEncoding.md; VariantShredding.md, "Reconstructing a Shredded
 * Variant") --------------------------------------------------------------------------- */

static int vbad(asm_ctx *a, const pq_plan *p, const char *why) {
    return floe_error_set(a->err, FLOE_ECORRUPT, "%s: row group %zu: column %s: invalid "
                          "variant: %s", a->r->name, a->r->rowset.row_group,
                          p->node ? p->node->path : "?", why);
}

static int vprefix(asm_ctx *a, const pq_plan *p, int rc) {
    floe_error_prefix(a->err, "%s: row group %zu: column %s: ", a->r->name,
                      a->r->rowset.row_group, p->node ? p->node->path : "?");
    return rc;
}

/* One entry of leaf plan lp: 1 with its bytes when it holds a value, 0 when null. */
static int leaf_entry(asm_ctx *a, const pq_plan *lp, const uint8_t **p, size_t *n) {
    int32_t s = lp->first_col;
    const floe_colbuf *c = &a->r->cols[s];
    if (a->li[s] >= c->nlevels)
        return acorrupt(a, lp);
    int16_t d = def_at(c, a->li[s]);
    a->li[s]++;
    if (d != c->max_def)
        return 0;
    size_t vi = a->vi[s];
    if (vi >= c->nvalues)
        return acorrupt(a, lp);
    a->vi[s]++;
    if (c->width == 0) {
        *p = c->values + c->offsets[vi];
        *n = c->offsets[vi + 1] - c->offsets[vi];
    } else {
        *p = c->values + vi * (size_t)c->width;
        *n = (size_t)c->width;
    }
    return 1;
}

static const uint8_t EMPTY_METADATA[3] = {0x01, 0x00, 0x00};

/* A typed_value leaf's value m[0..n) (in-memory form) encoded as its variant primitive,
 * into a->vprim. */
static int typed_leaf_encode(asm_ctx *a, const pq_plan *tp, const uint8_t *m, size_t n) {
    const pq_leaf *lf = &a->r->leaves[tp->node->column];
    floe_buf *v = &a->vprim;
    floe_buf_reset(v);
    int t = tp->vprim;
    switch (t) {
    case FLOE_VARIANT_TRUE:
        floe_buf_append_byte(v, (uint8_t)((m[0] ? FLOE_VARIANT_TRUE : FLOE_VARIANT_FALSE) << 2));
        break;
    case FLOE_VARIANT_DECIMAL16: {
        pq_value pv;
        pq_value_from_col(lf, &(floe_colbuf){.width = lf->out_width, .values = (uint8_t *)m},
                          0, &pv);
        uint8_t d[18];
        d[0] = (uint8_t)(t << 2);
        d[1] = (uint8_t)tp->node->scale;
        unsigned __int128 u = (unsigned __int128)pv.dec;
        for (int i = 0; i < 16; i++)
            d[2 + i] = (uint8_t)(u >> (8 * i));
        floe_buf_append(v, d, sizeof d);
        break;
    }
    case FLOE_VARIANT_STRING:
    case FLOE_VARIANT_BINARY: {
        uint8_t h[5] = {(uint8_t)(t << 2), (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16),
                        (uint8_t)(n >> 24)};
        if (n > UINT32_MAX)
            return vbad(a, tp, "string longer than 4 GiB");
        floe_buf_append(v, h, 5);
        floe_buf_append(v, m, n);
        break;
    }
    default: /* fixed-width little-endian values, as in memory */
        floe_buf_append_byte(v, (uint8_t)(t << 2));
        floe_buf_append(v, m, n);
        break;
    }
    if (floe_buf_error(v))
        return floe_error_set(a->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The same as JSON, through the variant primitive, so that it prints exactly as the same
 * value stored in a variant would. */
static int typed_leaf_json(asm_ctx *a, const pq_plan *tp, const uint8_t *m, size_t n,
                           floe_buf *out) {
    FLOE_FORWARD_IF_ERROR(typed_leaf_encode(a, tp, m, n));
    int rc = floe_variant_value_json(EMPTY_METADATA, sizeof EMPTY_METADATA, a->vprim.data,
                                     a->vprim.len, out, a->err);
    return rc < 0 ? vprefix(a, tp, rc) : 0;
}

typedef struct vpair {
    const uint8_t *key;
    size_t klen, v0, v1; /* the value's text (or bytes) in the object's buffer */
    uint32_t id;         /* bin: the field id in the metadata */
} vpair;

typedef struct vobj {
    vpair *pairs;
    size_t n, cap;
    floe_buf text;
    const pq_plan *shredded; /* the typed_value group: its fields win over value's */
} vobj;

static int vobj_add(vobj *o, const uint8_t *key, size_t klen, uint32_t id, size_t v0) {
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 16;
        vpair *np = floe_realloc(o->pairs, nc * sizeof *np);
        if (!np)
            return FLOE_ENOMEM;
        o->pairs = np;
        o->cap = nc;
    }
    o->pairs[o->n++] = (vpair){.key = key, .klen = klen, .v0 = v0, .v1 = o->text.len, .id = id};
    return 0;
}

static bool is_shredded(const vobj *o, const uint8_t *key, size_t klen) {
    for (size_t i = 0; i < o->shredded->nchildren; i++) {
        const char *name = o->shredded->children[i].name;
        if (strlen(name) == klen && !memcmp(name, key, klen))
            return true; /* the shredded column is read (VariantShredding.md) */
    }
    return false;
}

static int value_field(void *ctx, const uint8_t *key, size_t klen, const uint8_t *json,
                       size_t jlen) {
    vobj *o = ctx;
    if (is_shredded(o, key, klen))
        return 0;
    size_t v0 = o->text.len;
    if (floe_buf_append(&o->text, json, jlen) < 0)
        return FLOE_ENOMEM;
    return vobj_add(o, key, klen, 0, v0);
}

static int value_raw_field(void *ctx, uint32_t id, const uint8_t *key, size_t klen,
                           const uint8_t *v, size_t vn) {
    vobj *o = ctx;
    if (is_shredded(o, key, klen))
        return 0;
    size_t v0 = o->text.len;
    if (floe_buf_append(&o->text, v, vn) < 0)
        return FLOE_ENOMEM;
    return vobj_add(o, key, klen, id, v0);
}

static int vpair_cmp(const void *x, const void *y) {
    const vpair *p = x, *q = y;
    int c = memcmp(p->key, q->key, p->klen < q->klen ? p->klen : q->klen);
    return c ? c : (p->klen < q->klen ? -1 : p->klen > q->klen);
}

static int vrecon(asm_ctx *a, const pq_plan *p, const uint8_t *meta, size_t nmeta,
                  floe_buf *out, int depth, bool *missing, bool bin);

/* A shredded object: its shredded fields, with the fields of value (an object, or NULL)
 * merged in, sorted by name; as JSON, or (bin) as an encoded object whose field ids come
 * from the metadata, which holds every field name (VariantShredding.md "Variant
 * Metadata"). */
static int write_vobject(asm_ctx *a, const pq_plan *tp, const uint8_t *vb, size_t vn,
                         const uint8_t *meta, size_t nmeta, floe_buf *out, int depth, bool bin) {
    vobj o = {.shredded = tp};
    floe_buf_init(&o.text, 0);
    floe_buf scratch;
    floe_buf_init(&scratch, 0);
    floe_variant_member *ms = NULL;
    int rc = 0;
    for (size_t i = 0; i < tp->nchildren; i++) {
        bool miss = false;
        size_t v0 = o.text.len;
        FLOE_CHECK(vrecon(a, &tp->children[i], meta, nmeta, &o.text, depth + 1, &miss, bin));
        if (miss)
            continue;
        const char *name = tp->children[i].name;
        uint32_t id = 0;
        if (bin && !floe_variant_metadata_find(meta, nmeta, (const uint8_t *)name, strlen(name),
                                               &id)) {
            rc = vbad(a, &tp->children[i], "shredded field name not in the variant metadata");
            goto done;
        }
        if (vobj_add(&o, (const uint8_t *)name, strlen(name), id, v0) < 0)
            FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
    }
    if (vb) {
        rc = bin ? floe_variant_object_raw_fields(meta, nmeta, vb, vn, value_raw_field, &o, a->err)
                 : floe_variant_object_fields(meta, nmeta, vb, vn, &scratch, value_field, &o,
                                              a->err);
        if (rc == FLOE_ENOMEM)
            FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
        if (rc < 0) {
            rc = vprefix(a, tp, rc);
            goto done;
        }
        if (rc == 1) {
            rc = vbad(a, tp, "non-object value with shredded fields");
            goto done;
        }
    }
    if (o.n)
        qsort(o.pairs, o.n, sizeof *o.pairs, vpair_cmp);
    if (bin) {
        ms = floe_malloc((o.n ? o.n : 1) * sizeof *ms);
        if (!ms || floe_buf_error(&o.text))
            FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < o.n; i++)
            ms[i] = (floe_variant_member){o.pairs[i].id, o.pairs[i].v0,
                                          o.pairs[i].v1 - o.pairs[i].v0};
        rc = floe_variant_append_container(true, ms, o.n, o.text.data, out, a->err);
        goto done;
    }
    floe_buf_append_byte(out, '{');
    for (size_t i = 0; i < o.n; i++) {
        if (i)
            floe_buf_append_byte(out, ',');
        floe_json_append_string(out, o.pairs[i].key, o.pairs[i].klen);
        floe_buf_append_byte(out, ':');
        floe_buf_append(out, o.text.data + o.pairs[i].v0, o.pairs[i].v1 - o.pairs[i].v0);
    }
    floe_buf_append_byte(out, '}');
    if (floe_buf_error(out) || floe_buf_error(&o.text))
        FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
done:
    floe_free(ms);
    floe_free(o.pairs);
    floe_buf_free(&o.text);
    floe_buf_free(&scratch);
    return rc;
}

static const uint8_t VARIANT_NULL = 0x00;

/* A shredded array (present, d its definition level) as JSON, or (bin) as variant bytes. */
static int vrecon_array(asm_ctx *a, const pq_plan *tp, int16_t d, const uint8_t *meta,
                        size_t nmeta, floe_buf *out, int depth, bool bin) {
    int32_t s0 = tp->first_col;
    const floe_colbuf *c0 = &a->r->cols[s0];
    floe_buf vals; /* bin: the elements' bytes */
    floe_buf_init(&vals, 0);
    floe_variant_member *ms = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    if (d < tp->rep_def) {
        FLOE_CHECK(skip_one(a, tp));
    } else {
        floe_buf *eb = bin ? &vals : out;
        if (!bin)
            floe_buf_append_byte(out, '[');
        for (bool first = true;; first = false) {
            if (!first && !bin)
                floe_buf_append_byte(out, ',');
            bool miss = false;
            size_t v0 = eb->len;
            FLOE_CHECK(vrecon(a, &tp->children[0], meta, nmeta, eb, depth + 1, &miss, bin));
            if (miss) /* an element must be present; read as variant null */
                floe_buf_append(eb, bin ? (const char *)&VARIANT_NULL : "null", bin ? 1 : 4);
            if (bin) {
                if (n == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    floe_variant_member *nm = floe_realloc(ms, nc * sizeof *nm);
                    if (!nm)
                        FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
                    ms = nm;
                    cap = nc;
                }
                ms[n++] = (floe_variant_member){0, v0, vals.len - v0};
            }
            if (a->li[s0] < c0->nlevels && rep_at(c0, a->li[s0]) == tp->rep_level)
                continue;
            break;
        }
    }
    if (bin) {
        if (floe_buf_error(&vals))
            FLOE_FAIL(a->err, FLOE_ENOMEM, "out of memory");
        rc = floe_variant_append_container(false, ms, n, vals.data, out, a->err);
    } else if (floe_buf_append(out, d < tp->rep_def ? "[]" : "]", d < tp->rep_def ? 2 : 1) < 0) {
        rc = floe_error_set(a->err, FLOE_ENOMEM, "out of memory");
    }
done:
    floe_free(ms);
    floe_buf_free(&vals);
    return rc;
}

/* The value of a (value, typed_value) pair p at the cursors, as JSON, or (bin) as encoded
 * variant bytes (the value column's bytes as they are, typed values as their primitives,
 * objects and arrays rebuilt); *missing when both are null (a shredded object field that
 * is absent). Consumes one entry of every leaf below p. */
static int vrecon(asm_ctx *a, const pq_plan *p, const uint8_t *meta, size_t nmeta,
                  floe_buf *out, int depth, bool *missing, bool bin) {
    if (depth > 200)
        return acorrupt(a, p);
    const uint8_t *vb = NULL;
    size_t vn = 0;
    int has_v = 0;
    if (p->v_value >= 0)
        FLOE_FORWARD_IF_ERROR(has_v = leaf_entry(a, &p->children[p->v_value], &vb, &vn));
    const pq_plan *tp = p->v_typed >= 0 ? &p->children[p->v_typed] : NULL;
    if (tp && tp->kind == PQ_P_LEAF) {
        const uint8_t *tb = NULL;
        size_t tn = 0;
        int has_t;
        FLOE_FORWARD_IF_ERROR(has_t = leaf_entry(a, tp, &tb, &tn));
        if (has_t && has_v)
            return vbad(a, tp, "conflicting value and typed_value");
        if (has_t && !bin)
            return typed_leaf_json(a, tp, tb, tn, out);
        if (has_t) {
            FLOE_FORWARD_IF_ERROR(typed_leaf_encode(a, tp, tb, tn));
            return floe_buf_append(out, a->vprim.data, a->vprim.len) < 0
                       ? floe_error_set(a->err, FLOE_ENOMEM, "out of memory") : 0;
        }
    } else if (tp) {
        int32_t s0 = tp->first_col;
        const floe_colbuf *c0 = &a->r->cols[s0];
        if (a->li[s0] >= c0->nlevels)
            return acorrupt(a, tp);
        int16_t d = def_at(c0, a->li[s0]);
        if (d < tp->def_present) {
            FLOE_FORWARD_IF_ERROR(skip_one(a, tp));
        } else if (tp->kind == PQ_P_STRUCT) {
            return write_vobject(a, tp, has_v ? vb : NULL, vn, meta, nmeta, out, depth, bin);
        } else {
            if (has_v)
                return vbad(a, tp, "conflicting value and typed_value");
            return vrecon_array(a, tp, d, meta, nmeta, out, depth, bin);
        }
    }
    if (has_v) {
        /* bin: validated, then copied as it is */
        int rc = floe_variant_value_json(meta, nmeta, vb, vn, bin ? NULL : out, a->err);
        if (rc < 0)
            return vprefix(a, &p->children[p->v_value], rc);
        if (bin && floe_buf_append(out, vb, vn) < 0)
            return floe_error_set(a->err, FLOE_ENOMEM, "out of memory");
        return 0;
    }
    *missing = true;
    return 0;
}

static int write_variant(asm_ctx *a, const pq_plan *p, floe_buf *b, int depth) {
    const uint8_t *meta = NULL;
    size_t nmeta = 0;
    int has_m;
    FLOE_FORWARD_IF_ERROR(has_m = leaf_entry(a, &p->children[0], &meta, &nmeta));
    if (!has_m)
        return vbad(a, &p->children[0], "null metadata");
    size_t msize;
    int rc = floe_variant_metadata_check(meta, nmeta, false, &msize, a->err);
    if (rc < 0)
        return vprefix(a, &p->children[0], rc);
    bool missing = false;
    FLOE_FORWARD_IF_ERROR(vrecon(a, p, meta, nmeta, b, depth, &missing, false));
    if (missing) /* a present variant with neither part: variant null */
        return floe_buf_append(b, "null", 4) < 0
                   ? floe_error_set(a->err, FLOE_ENOMEM, "out of memory") : 0;
    return 0;
}

static const pq_plan *find_variant_plan(const pq_plan *p, const floe_pq_node *group, int depth) {
    if (!p || depth > 200)
        return NULL;
    if (p->kind == PQ_P_VARIANT)
        return p->node == group ? p : NULL;
    for (size_t i = 0; i < p->nchildren; i++) {
        const pq_plan *q = find_variant_plan(&p->children[i], group, depth + 1);
        if (q)
            return q;
    }
    return NULL;
}

/* floe_pq_reader_variant_values; with check set, each value is also read through as JSON
 * into *check (its text discarded), so invalid bytes fail naming the column. */
static int variant_values(floe_pq_reader *r, const floe_pq_node *group, floe_buf *values,
                          floe_buf *offsets, floe_buf *check, floe_error *err) {
    const pq_plan *p = find_variant_plan(r->plan, group, 0);
    if (!p)
        return floe_error_set(err, FLOE_EINVALID, "%s: column %s: not a selected variant",
                              r->name, group ? group->path : "?");
    int rc = 0;
    asm_ctx a;
    if (!asm_init(&a, r, FLOE_PQ_ROWS_NDJSON, err))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const pq_plan *mp = &p->children[0];
    const floe_colbuf *mc = &r->cols[mp->first_col];
    uint32_t off = (uint32_t)values->len;
    if (floe_buf_append(offsets, &off, sizeof off) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    while (a.li[mp->first_col] < mc->nlevels) {
        if (def_at(mc, a.li[mp->first_col]) < mc->max_def) { /* no variant here */
            FLOE_CHECK(skip_one(&a, p));
            continue;
        }
        const uint8_t *meta = NULL;
        size_t nmeta = 0, msize;
        FLOE_CHECK(leaf_entry(&a, mp, &meta, &nmeta));
        rc = floe_variant_metadata_check(meta, nmeta, false, &msize, err);
        if (rc < 0) {
            rc = vprefix(&a, mp, rc);
            goto done;
        }
        bool missing = false;
        size_t start = values->len;
        FLOE_CHECK(vrecon(&a, p, meta, nmeta, values, 1, &missing, true));
        if (missing && floe_buf_append(values, &VARIANT_NULL, 1) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (check && !floe_buf_error(values)) {
            floe_buf_reset(check);
            rc = floe_variant_value_json(meta, nmeta, values->data + start, values->len - start,
                                         check, err);
            if (rc < 0) {
                rc = vprefix(&a, p, rc);
                goto done;
            }
        }
        if (values->len > UINT32_MAX)
            FLOE_FAIL(err, FLOE_ELIMIT, "%s: column %s: more than 4 GiB of variant values in "
                      "one read", r->name, group->path);
        off = (uint32_t)values->len;
        if (floe_buf_append(offsets, &off, sizeof off) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (floe_buf_error(values))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
done:
    asm_free(&a);
    return rc;
}

int floe_pq_reader_variant_values(floe_pq_reader *r, const floe_pq_node *group, floe_buf *values,
                                  floe_buf *offsets, floe_error *err) {
    return variant_values(r, group, values, offsets, NULL, err);
}

int floe_pq_reader_variant_check(floe_pq_reader *r, const floe_pq_node *group, floe_error *err) {
    floe_buf values, offsets, text;
    floe_buf_init(&values, 0);
    floe_buf_init(&offsets, 0);
    floe_buf_init(&text, 0);
    int rc = variant_values(r, group, &values, &offsets, &text, err);
    floe_buf_free(&values);
    floe_buf_free(&offsets);
    floe_buf_free(&text);
    return rc;
}

static int write_value(asm_ctx *a, const pq_plan *p, floe_buf *b, int depth) {
    floe_pq_reader *r = a->r;
    if (depth > 200)
        return acorrupt(a, p);
    if (p->kind == PQ_P_CONST) {
        const char *t = p->const_text[a->fmt == FLOE_PQ_ROWS_CANONICAL];
        return floe_buf_append(b, t ? t : "null", t ? strlen(t) : 4) < 0
                   ? floe_error_set(a->err, FLOE_ENOMEM, "out of memory") : 0;
    }
    if (p->first_col >= p->end_col) /* nothing projected below (cannot happen) */
        return floe_buf_append(b, "null", 4);
    int32_t s0 = p->first_col;
    const floe_colbuf *c0 = &r->cols[s0];
    if (a->li[s0] >= c0->nlevels)
        return acorrupt(a, p);
    int16_t d = def_at(c0, a->li[s0]);
    int rc;
    if (d < p->def_present) {
        FLOE_FORWARD_IF_ERROR(skip_one(a, p));
        return floe_buf_append(b, "null", 4) < 0
                   ? floe_error_set(a->err, FLOE_ENOMEM, "out of memory") : 0;
    }
    switch (p->kind) {
    case PQ_P_LEAF: {
        const pq_leaf *lf = &r->leaves[p->node->column];
        if (d != c0->max_def)
            return acorrupt(a, p);
        size_t vi = a->vi[s0];
        if (vi >= c0->nvalues)
            return acorrupt(a, p);
        if (lf->node->value_type == FLOE_TYPE_DATE &&
            (p->ptype == FLOE_TYPE_TIMESTAMP_NS || p->ptype == FLOE_TYPE_TIMESTAMPTZ_NS)) {
            /* spec "Schema Evolution": a date outside the promoted type's range fails */
            int64_t days = (int32_t)floe_load_le32(c0->values + vi * (size_t)c0->width), ns;
            floe_lit_ts t = {.sec = days * 86400};
            char why[96];
            if (floe_lit_ts_units(&t, 9, &ns, why, sizeof why) != FLOE_LIT_OK) {
                floe_buf txt;
                floe_buf_init(&txt, 0);
                rc = floe_buf_append_date(&txt, (int32_t)days);
                floe_error_set(a->err, FLOE_EINVALID,
                               "%s: row group %zu: column %s: date %.*s read as %s (the "
                               "column was promoted from date) is %s", a->r->name,
                               a->r->rowset.row_group, p->node->path,
                               rc < 0 ? 1 : (int)txt.len,
                               rc < 0 ? "?" : (const char *)txt.data, floe_type_name(p->ptype),
                               why);
                floe_buf_free(&txt);
                return FLOE_EINVALID;
            }
        }
        if (c0->width == 0)
            rc = fmt_leaf(lf, p->ptype, c0->values + c0->offsets[vi],
                          c0->offsets[vi + 1] - c0->offsets[vi], b);
        else
            rc = fmt_leaf(lf, p->ptype, c0->values + vi * (size_t)c0->width,
                          (size_t)c0->width, b);
        a->li[s0]++;
        a->vi[s0]++;
        return rc < 0 ? floe_error_set(a->err, rc, "out of memory") : 0;
    }
    case PQ_P_STRUCT:
        return write_struct(a, p, b, depth);
    case PQ_P_VARIANT:
        return write_variant(a, p, b, depth);
    case PQ_P_CONST: /* handled above */
    case PQ_P_VFIELD: /* read by write_variant */
        return 0;
    case PQ_P_LIST:
    case PQ_P_MAP:
        if (d < p->rep_def) {
            FLOE_FORWARD_IF_ERROR(skip_one(a, p));
            bool obj = p->kind == PQ_P_MAP && map_as_object(a, p);
            return floe_buf_append(b, obj ? "{}" : "[]", 2);
        }
        if (p->kind == PQ_P_MAP)
            return write_map(a, p, b, depth);
        rc = floe_buf_append_byte(b, '[');
        for (bool first = true; rc == 0; first = false) {
            if (!first)
                rc = floe_buf_append_byte(b, ',');
            if (rc == 0)
                rc = write_value(a, &p->children[0], b, depth + 1);
            if (rc < 0)
                break;
            if (a->li[s0] < c0->nlevels && rep_at(c0, a->li[s0]) == p->rep_level)
                continue;
            break;
        }
        if (rc == 0)
            rc = floe_buf_append_byte(b, ']');
        return rc;
    }
    return 0;
}

static int sink_flush(floe_buf *b, floe_pq_sink_fn sink, void *ctx, floe_error *err) {
    if (b->len == 0)
        return 0;
    int rc = sink(ctx, b->data, b->len);
    floe_buf_reset(b);
    if (rc < 0)
        return floe_error_set(err, rc, "output: %s", floe_strerror(rc));
    return 0;
}

/* Rows as text to sink, or (fn set) column by column to fn with NDJSON values. */
static int dump(floe_pq_reader *r, floe_pq_row_format format, int64_t limit,
                floe_pq_sink_fn sink, void *sink_ctx, floe_pq_row_fn fn, void *fn_ctx,
                int64_t *rows_out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(pq_prepare(r, err));
    int rc = 0;
    int64_t written = 0;
    floe_buf out, val;
    floe_buf_init(&out, 0);
    floe_buf_init(&val, 0);
    const char **labels = NULL;
    size_t *ends = NULL;
    floe_pq_text *values = NULL;
    size_t ncols = 0;
    asm_ctx a;
    bool a_ok = asm_init(&a, r, format, err);
    size_t ns = r->nslots ? r->nslots : 1;
    int64_t *row_value = floe_calloc(ns, sizeof *row_value);
    if (!a_ok || !row_value)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const pq_plan *top = r->plan;
    if (fn) {
        if (format != FLOE_PQ_ROWS_NDJSON)
            FLOE_FAIL(err, FLOE_EINVALID, "row callback values are NDJSON");
        size_t nc = top->nchildren ? top->nchildren : 1;
        labels = floe_calloc(nc, sizeof *labels);
        ends = floe_calloc(nc, sizeof *ends);
        values = floe_calloc(nc, sizeof *values);
        if (!labels || !ends || !values)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < top->nchildren; i++)
            if (!top->children[i].hidden)
                labels[ncols++] = top->children[i].name;
        if ((rc = fn(fn_ctx, ncols, labels, NULL)) < 0)
            FLOE_FAIL(err, rc, "output: %s", floe_strerror(rc));
    }
    /* slots the plan does not print (filter-only columns) are advanced by hand */
    bool *printed = floe_calloc(ns, sizeof *printed);
    if (!printed)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->nleaves; i++)
        if (r->slot_of_col[i] >= 0 && r->selected[i])
            printed[r->slot_of_col[i]] = true;
    while (limit < 0 || written < limit) {
        const floe_pq_rowset *rs = NULL;
        rc = floe_pq_reader_next(r, &rs, err);
        if (rc <= 0)
            break;
        rc = 0;
        memset(a.li, 0, ns * sizeof *a.li);
        memset(a.vi, 0, ns * sizeof *a.vi);
        for (int64_t row = 0; row < rs->nrows && (limit < 0 || written < limit); row++) {
            bool match = true;
            if (r->filter) {
                for (size_t s = 0; s < r->nslots; s++) {
                    const floe_colbuf *c = &r->cols[s];
                    if (c->max_rep > 0)
                        continue;
                    if (a.li[s] >= c->nlevels) {
                        rc = acorrupt(&a, top);
                        goto free_printed;
                    }
                    row_value[s] = def_at(c, a.li[s]) == c->max_def ? (int64_t)a.vi[s] : -1;
                }
                match = pq_filter_row(r, r->filter, row_value);
                for (size_t s = 0; s < r->nslots; s++) {
                    if (printed[s])
                        continue;
                    const floe_colbuf *c = &r->cols[s];
                    if (def_at(c, a.li[s]) == c->max_def)
                        a.vi[s]++;
                    a.li[s]++;
                }
            }
            size_t mark = out.len;
            if (fn) {
                floe_buf_reset(&val);
                for (size_t i = 0, k = 0; i < top->nchildren; i++) {
                    size_t start = val.len;
                    rc = write_value(&a, &top->children[i], &val, 1);
                    if (rc < 0)
                        goto free_printed;
                    if (top->children[i].hidden)
                        val.len = start;
                    else
                        ends[k++] = val.len;
                }
            } else {
                rc = write_value(&a, top, &out, 0);
                if (rc == 0)
                    rc = floe_buf_append_byte(&out, '\n');
            }
            if (rc < 0)
                goto free_printed;
            /* every printed column must now sit at a row boundary */
            for (size_t s = 0; s < r->nslots; s++) {
                const floe_colbuf *c = &r->cols[s];
                if (printed[s] && a.li[s] < c->nlevels && rep_at(c, a.li[s]) != 0) {
                    rc = acorrupt(&a, top);
                    goto free_printed;
                }
            }
            if (!match) {
                out.len = mark;
                continue;
            }
            if (fn) {
                for (size_t k = 0; k < ncols; k++) {
                    size_t start = k ? ends[k - 1] : 0;
                    values[k] = (floe_pq_text){(const char *)val.data + start, ends[k] - start};
                }
                if ((rc = fn(fn_ctx, ncols, labels, values)) < 0) {
                    floe_error_set(err, rc, "output: %s", floe_strerror(rc));
                    goto free_printed;
                }
            }
            written++;
            if (out.len >= (64u << 10) && (rc = sink_flush(&out, sink, sink_ctx, err)) < 0)
                goto free_printed;
        }
    }
    if (rc == 0)
        rc = sink_flush(&out, sink, sink_ctx, err);
free_printed:
    floe_free(printed);
done:
    if (rc < 0 && err && err->code == 0)
        floe_error_set(err, rc, "%s: %s", r->name, floe_strerror(rc));
    asm_free(&a);
    floe_free(row_value);
    floe_buf_free(&out);
    floe_buf_free(&val);
    floe_free(labels);
    floe_free(ends);
    floe_free(values);
    if (rc >= 0 && rows_out)
        *rows_out = written;
    return rc < 0 ? rc : 0;
}

int floe_pq_reader_dump(floe_pq_reader *r, floe_pq_row_format format, int64_t limit,
                        floe_pq_sink_fn sink, void *sink_ctx, int64_t *rows_out,
                        floe_error *err) {
    return dump(r, format, limit, sink, sink_ctx, NULL, NULL, rows_out, err);
}

int floe_pq_reader_dump_rows(floe_pq_reader *r, int64_t limit, floe_pq_row_fn fn, void *ctx,
                             int64_t *rows_out, floe_error *err) {
    if (!fn)
        return floe_error_set(err, FLOE_EINVALID, "dump_rows: no row callback");
    return dump(r, FLOE_PQ_ROWS_NDJSON, limit, NULL, NULL, fn, ctx, rows_out, err);
}

int pq_format_value(const floe_pq_reader *r, const pq_leaf *lf, const pq_value *v,
                    const floe_colbuf *c, size_t vi, floe_pq_row_format fmt, floe_buf *out) {
    (void)r;
    (void)v;
    (void)fmt;
    if (c->width == 0)
        return fmt_value(lf, c->values + c->offsets[vi], c->offsets[vi + 1] - c->offsets[vi], out);
    return fmt_value(lf, c->values + vi * (size_t)c->width, (size_t)c->width, out);
}
