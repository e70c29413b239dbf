/*
 * rewrite_sort.c - reordering the rows of a batch by a table sort order, for
 * `floe rewrite --strategy sort`.
 *
 * Spec: format/spec.md "Sorting" (transforms applied to the source column, asc/desc,
 * nulls-first/last; floats by the spec's total order, strings by code point).
 *
 * The sort keys (transformed values) are computed once per row; rows are ordered with a
 * stable merge of indices (ties keep input order), then each column is gathered in that
 * order, one column at a time, so the extra memory is O(rows), not O(rows x columns).
 *
 * zorder(c1, c2, ...) sorts by one byte string per row instead: Iceberg Spark's z-value
 * (floe/rewrite.h, floe_rewrite_options.sort_order, says how it is built), compared as
 * unsigned bytes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite_internal.h"

typedef struct sort_key {
    const floe_sort_field *sf;
    floe_value *v;               /* per row (transformed) */
} sort_key;

typedef struct sort_ctx {
    sort_key *keys;
    size_t nkeys;
    const uint8_t *z;            /* zorder: zlen bytes per row, else NULL */
    size_t zlen;
} sort_ctx;

static floe_value leaf_value(const floe_colbuf *c, size_t vi) {
    const floe_field *f = c->field;
    floe_value v;
    memset(&v, 0, sizeof v);
    v.type = f->type;
    const uint8_t *p = c->width ? c->values + vi * (size_t)c->width : NULL;
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: v.v.b = p[0] != 0; break;
    case FLOE_TYPE_INT: case FLOE_TYPE_DATE: v.v.i32 = (int32_t)floe_load_le32(p); break;
    case FLOE_TYPE_FLOAT: memcpy(&v.v.f, p, 4); break;
    case FLOE_TYPE_DOUBLE: memcpy(&v.v.d, p, 8); break;
    case FLOE_TYPE_UUID: memcpy(v.v.uuid, p, 16); break;
    case FLOE_TYPE_DECIMAL: {
        floe_i128 x;
        if (c->phys == FLOE_PHYS_INT32) {
            x = (int32_t)floe_load_le32(p);
        } else if (c->phys == FLOE_PHYS_INT64) {
            x = (int64_t)floe_load_le64(p);
        } else {
            x = (c->width > 0 && (p[0] & 0x80)) ? -1 : 0;
            for (int32_t i = 0; i < c->width; i++)
                x = (floe_i128)(((unsigned __int128)x << 8) | p[i]);
        }
        v.v.dec.unscaled = x;
        v.v.dec.scale = f->scale;
        v.v.dec.precision = f->precision;
        break;
    }
    case FLOE_TYPE_STRING: case FLOE_TYPE_BINARY:
        v.v.bytes.p = c->values + c->offsets[vi];
        v.v.bytes.n = c->offsets[vi + 1] - c->offsets[vi];
        break;
    case FLOE_TYPE_FIXED:
        v.v.bytes.p = p;
        v.v.bytes.n = (size_t)c->width;
        break;
    default: v.v.i64 = (int64_t)floe_load_le64(p); break;
    }
    return v;
}

static int compare_rows(const sort_ctx *c, size_t a, size_t b) {
    if (c->z)
        return memcmp(c->z + a * c->zlen, c->z + b * c->zlen, c->zlen);
    for (size_t k = 0; k < c->nkeys; k++) {
        const floe_value *x = &c->keys[k].v[a], *y = &c->keys[k].v[b];
        const floe_sort_field *sf = c->keys[k].sf;
        int r;
        if (x->is_null || y->is_null) {
            if (x->is_null && y->is_null)
                continue;
            r = x->is_null ? -1 : 1;
            if (sf->null_order == FLOE_NULLS_LAST)
                r = -r;
            return r; /* null placement ignores the direction */
        }
        r = floe_value_compare(x, y);
        if (r)
            return sf->direction == FLOE_SORT_DESC ? -r : r;
    }
    return 0;
}

static void merge_sort(const sort_ctx *c, size_t *a, size_t *tmp, size_t n) {
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = compare_rows(c, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* Row boundaries of column c: lstart/vstart get nrows + 1 entries. */
static void row_starts(const floe_colbuf *c, size_t nrows, size_t *lstart, size_t *vstart) {
    size_t row = 0, v = 0;
    for (size_t i = 0; i < c->nlevels; i++) {
        if (c->max_rep == 0 || c->rep[i] == 0) {
            if (row < nrows) {
                lstart[row] = i;
                vstart[row] = v;
            }
            row++;
        }
        if (c->max_def == 0 || c->def[i] == c->max_def)
            v++;
    }
    for (; row <= nrows; row++) {
        lstart[row] = c->nlevels;
        vstart[row] = v;
    }
    lstart[nrows] = c->nlevels;
    vstart[nrows] = v;
}

static int gather(const floe_colbuf *s, floe_colbuf *d, const size_t *perm, size_t nrows,
                  const size_t *lstart, const size_t *vstart) {
    if (floe_colbuf_reserve_levels(d, s->nlevels) < 0 ||
        floe_colbuf_reserve_values(d, s->nvalues, s->values_len) < 0)
        return FLOE_ENOMEM;
    for (size_t k = 0; k < nrows; k++) {
        size_t row = perm[k];
        size_t l0 = lstart[row], l1 = lstart[row + 1];
        size_t v0 = vstart[row], v1 = vstart[row + 1];
        if (d->max_def && l1 > l0)
            memcpy(d->def + d->nlevels, s->def + l0, (l1 - l0) * sizeof *d->def);
        if (d->max_rep && l1 > l0)
            memcpy(d->rep + d->nlevels, s->rep + l0, (l1 - l0) * sizeof *d->rep);
        d->nlevels += l1 - l0;
        if (s->width && v1 > v0) {
            memcpy(d->values + d->values_len, s->values + v0 * (size_t)s->width,
                   (v1 - v0) * (size_t)s->width);
            d->values_len += (v1 - v0) * (size_t)s->width;
        } else if (v1 > v0) {
            size_t b0 = s->offsets[v0], b1 = s->offsets[v1];
            if (b1 > b0) /* empty strings only: there may be no value buffer at all */
                memcpy(d->values + d->values_len, s->values + b0, b1 - b0);
            for (size_t x = v0; x < v1; x++)
                d->offsets[d->nvalues + (x - v0) + 1] =
                    (uint32_t)(d->values_len + s->offsets[x + 1] - b0);
            d->values_len += b1 - b0;
        }
        d->nvalues += v1 - v0;
    }
    return 0;
}

int rw_batch_gather(const floe_batch *src, const size_t *perm, size_t n, floe_batch *dst,
                    floe_error *err) {
    size_t rows = src->nrows;
    size_t *lstart = floe_malloc((rows + 1) * sizeof *lstart);
    size_t *vstart = floe_malloc((rows + 1) * sizeof *vstart);
    int rc = 0;
    if (!lstart || !vstart)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t ci = 0; ci < src->ncols; ci++) {
        row_starts(&src->cols[ci], rows, lstart, vstart);
        if (gather(&src->cols[ci], &dst->cols[ci], perm, n, lstart, vstart) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    dst->nrows += n;
done:
    floe_free(lstart);
    floe_free(vstart);
    return rc;
}

/* src's rows into dst (cleared first) in the order c gives, ties in input order. */
static int order_rows(const sort_ctx *c, const floe_batch *src, floe_batch *dst,
                      floe_error *err) {
    size_t n = src->nrows;
    int rc = 0;
    size_t *perm = floe_malloc((n + 1) * sizeof *perm);
    size_t *tmp = floe_malloc((n + 1) * sizeof *tmp);
    if (!perm || !tmp)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    merge_sort(c, perm, tmp, n);
    floe_batch_clear(dst);
    FLOE_CHECK(rw_batch_gather(src, perm, n, dst, err));
done:
    floe_free(perm);
    floe_free(tmp);
    return rc;
}

int rw_sort_batch(const floe_sort_order *order, const floe_batch *src, floe_batch *dst,
                  floe_error *err) {
    size_t n = src->nrows;
    int rc = 0;
    sort_ctx c = {0};
    c.keys = floe_calloc(order->nfields + 1, sizeof *c.keys);
    if (!c.keys)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t k = 0; k < order->nfields; k++) {
        const floe_sort_field *sf = &order->fields[k];
        const floe_field *f = floe_schema_find_id(src->schema, sf->source_id);
        if (!f || f->leaf < 0 || f->rep_level > 0)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "sort order: field %d is not a primitive column outside lists and maps",
                      sf->source_id);
        sort_key *sk = &c.keys[c.nkeys++];
        sk->sf = sf;
        if (!(sk->v = floe_malloc((n + 1) * sizeof *sk->v)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        const floe_colbuf *col = &src->cols[f->leaf];
        size_t vi = 0;
        for (size_t row = 0; row < n; row++) {
            bool null = col->max_def && col->def[row] < col->max_def;
            if (null) {
                sk->v[row] = floe_value_null(f->type);
                continue;
            }
            floe_value raw = leaf_value(col, vi++);
            floe_error e2;
            if (sf->transform.kind == FLOE_XF_IDENTITY ||
                floe_transform_apply(sf->transform, &raw, &sk->v[row], &e2) < 0)
                sk->v[row] = raw;
        }
    }
    FLOE_CHECK(order_rows(&c, src, dst, err));
done:
    for (size_t k = 0; k < c.nkeys; k++)
        floe_free(c.keys[k].v);
    floe_free(c.keys);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * zorder
 * ------------------------------------------------------------------------------------- */
#define ZORDER_PRIMITIVE_BYTES 8

bool rw_is_zorder(const char *text) {
    while (isspace((unsigned char)*text))
        text++;
    if (strncasecmp(text, "zorder", 6))
        return false;
    text += 6;
    while (isspace((unsigned char)*text))
        text++;
    return *text == '(';
}

void rw_zorder_free(rw_zorder *z) {
    if (!z)
        return;
    floe_free(z->cols);
    floe_free(z);
}

static bool zorder_type_ok(floe_type_id t) {
    switch (t) {
    case FLOE_TYPE_INT: case FLOE_TYPE_LONG: case FLOE_TYPE_FLOAT: case FLOE_TYPE_DOUBLE:
    case FLOE_TYPE_DATE: case FLOE_TYPE_TIME: case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ: case FLOE_TYPE_TIMESTAMP_NS: case FLOE_TYPE_TIMESTAMPTZ_NS:
    case FLOE_TYPE_STRING: case FLOE_TYPE_BINARY: case FLOE_TYPE_FIXED:
        return true;
    default:
        return false;
    }
}

static bool zorder_var_width(floe_type_id t) {
    return t == FLOE_TYPE_STRING || t == FLOE_TYPE_BINARY || t == FLOE_TYPE_FIXED;
}

static bool identity_partitioned(const floe_partition_spec *spec, int32_t id) {
    for (size_t i = 0; spec && i < spec->nfields; i++)
        if (spec->fields[i].transform.kind == FLOE_XF_IDENTITY &&
            spec->fields[i].source_id == id)
            return true;
    return false;
}

/* The next column name of a zorder(...) list at *cur (edited in place): *name set, *cur
 * past its comma (NULL after the last). A name is as the linear sort order writes it:
 * bare (surrounding spaces dropped), or in backquotes or double quotes, a doubled quote
 * standing for itself, so a name may hold ',' or ')'. -1: an empty name; -2: a quote not
 * closed or text after it. */
static int zorder_next_name(char **cur, char **name) {
    char *p = *cur;
    while (isspace((unsigned char)*p))
        p++;
    char *start = p, *end;
    if (*p == '`' || *p == '"') {
        char q = *p++, *w = start; /* unquoted in place, over the opening quote */
        for (;; p++) {
            if (!*p)
                return -2;
            if (*p == q && p[1] == q)
                p++; /* doubled: one quote */
            else if (*p == q)
                break;
            *w++ = *p;
        }
        end = w;
        p++;
        while (isspace((unsigned char)*p))
            p++;
        if (*p && *p != ',')
            return -2;
    } else {
        while (*p && *p != ',')
            p++;
        end = p;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
    }
    *cur = *p == ',' ? p + 1 : NULL;
    if (end == start)
        return -1;
    *end = 0;
    *name = start;
    return 0;
}

int rw_zorder_parse(const char *text, const floe_schema *schema, const floe_partition_spec *spec,
                    int64_t var_len, int64_t max_output, rw_zorder **out, floe_error *err) {
    int rc = 0;
    char *list = NULL;
    rw_zorder *z = floe_calloc(1, sizeof *z);
    if (!z)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    if (!open || !close || close < open)
        FLOE_FAIL(err, FLOE_EINVALID, "sort order '%s': expected zorder(col, ...)", text);
    for (const char *q = close + 1; *q; q++)
        if (!isspace((unsigned char)*q))
            FLOE_FAIL(err, FLOE_EINVALID, "sort order '%s': text after zorder(...)", text);
    list = floe_strndup(open + 1, (size_t)(close - open - 1));
    size_t cap = 1;
    for (const char *q = list ? list : ""; *q; q++)
        cap += *q == ',';
    z->cols = floe_calloc(cap, sizeof *z->cols);
    if (!list || !z->cols)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t named = 0;
    for (char *next = list, *tok; next;) {
        int r = zorder_next_name(&next, &tok);
        if (r < 0)
            FLOE_FAIL(err, FLOE_EINVALID, "sort order '%s': %s", text,
                      r == -1 ? "an empty column name" : "a quote is not closed, or text follows it");
        const floe_field *f = floe_schema_find_path(schema, tok);
        if (!f)
            FLOE_FAIL(err, FLOE_EINVALID, "zorder: cannot find field '%s' in the table schema",
                      tok);
        /* geometry and geography are binaries (WKB) whose bytes have no order a z-order
         * could interleave; the linear sort order refuses them too */
        if (f->geo != FLOE_GEO_NONE)
            FLOE_FAIL(err, FLOE_EINVALID, "zorder: column '%s' is a %s column, which cannot "
                      "be z-ordered (its WKB bytes have no order)", tok,
                      f->geo == FLOE_GEO_GEOGRAPHY ? "geography" : "geometry");
        if (f->leaf < 0 || f->rep_level > 0 || !zorder_type_ok(f->type))
            FLOE_FAIL(err, FLOE_EINVALID,
                      "zorder: column '%s' (%s) cannot be z-ordered: floe z-orders integers, "
                      "floats, dates, times, timestamps, strings and binaries outside lists "
                      "and maps", tok, floe_type_name(f->type));
        for (size_t i = 0; i < z->ncols; i++)
            if (z->cols[i] == f)
                FLOE_FAIL(err, FLOE_EINVALID, "zorder: column '%s' is named twice", tok);
        named++;
        if (identity_partitioned(spec, f->id)) {
            floe_log(FLOE_LOG_WARN,
                     "zorder: column '%s' is an identity partition column, left out of the "
                     "z-order (each file group holds one value of it)", tok);
            continue;
        }
        z->cols[z->ncols++] = f;
    }
    if (named == 0)
        FLOE_FAIL(err, FLOE_EINVALID, "sort order '%s': zorder() names no column", text);
    if (z->ncols == 0)
        FLOE_FAIL(err, FLOE_EINVALID,
                  "Cannot perform ZOrdering, all columns provided were identity partition "
                  "columns and cannot be used");
    z->var_len = var_len > 0 ? (size_t)var_len : ZORDER_PRIMITIVE_BYTES;
    size_t total = 0;
    for (size_t i = 0; i < z->ncols; i++)
        total += zorder_var_width(z->cols[i]->type) ? z->var_len : ZORDER_PRIMITIVE_BYTES;
    int64_t max = max_output > 0 ? max_output : INT32_MAX;
    z->out_len = (int64_t)total < max ? total : (size_t)max;
    *out = z;
    z = NULL;
done:
    floe_free(list);
    rw_zorder_free(z);
    return rc;
}

static void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The order-preserving bytes of a non-null value of column f into p (its width). */
static void zorder_bytes(const floe_field *f, const floe_colbuf *c, size_t vi, size_t var_len,
                         uint8_t *p) {
    const uint8_t *v = c->width ? c->values + vi * (size_t)c->width : NULL;
    switch (f->type) {
    case FLOE_TYPE_INT: case FLOE_TYPE_DATE:
        put_be64(p, (uint64_t)(int64_t)(int32_t)floe_load_le32(v) ^ ((uint64_t)1 << 63));
        return;
    case FLOE_TYPE_FLOAT: case FLOE_TYPE_DOUBLE: {
        double d;
        if (f->type == FLOE_TYPE_FLOAT) {
            float x;
            memcpy(&x, v, 4);
            d = x;
        } else {
            memcpy(&d, v, 8);
        }
        uint64_t bits;
        memcpy(&bits, &d, 8);
        bits = (bits >> 63) ? ~bits : bits | ((uint64_t)1 << 63);
        put_be64(p, bits);
        return;
    }
    case FLOE_TYPE_STRING: case FLOE_TYPE_BINARY: case FLOE_TYPE_FIXED: {
        const uint8_t *b;
        size_t n;
        if (f->type == FLOE_TYPE_FIXED) {
            b = v;
            n = (size_t)c->width;
        } else {
            b = c->values + c->offsets[vi];
            n = c->offsets[vi + 1] - c->offsets[vi];
        }
        if (n > var_len)
            n = var_len;
        memcpy(p, b, n);
        memset(p + n, 0, var_len - n);
        return;
    }
    default: /* long, time, timestamps */
        put_be64(p, floe_load_le64(v) ^ ((uint64_t)1 << 63));
        return;
    }
}

int rw_zorder_values(const rw_zorder *z, const floe_batch *src, uint8_t *vals, floe_error *err) {
    size_t n = src->nrows, stride = 0;
    int rc = 0;
    size_t *width = floe_calloc(z->ncols + 1, sizeof *width);
    size_t *vi = floe_calloc(z->ncols + 1, sizeof *vi);
    uint8_t *row = NULL;
    if (!width || !vi)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t k = 0; k < z->ncols; k++) {
        width[k] = zorder_var_width(z->cols[k]->type) ? z->var_len : ZORDER_PRIMITIVE_BYTES;
        stride += width[k];
    }
    if (!(row = floe_malloc(stride)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t r = 0; r < n; r++) {
        uint8_t *p = row;
        for (size_t k = 0; k < z->ncols; k++) {
            const floe_field *f = z->cols[k];
            const floe_colbuf *c = &src->cols[f->leaf];
            if (c->max_def && c->def[r] < c->max_def)
                memset(p, 0, width[k]); /* a null: all zeros */
            else
                zorder_bytes(f, c, vi[k]++, z->var_len, p);
            p += width[k];
        }
        /* interleave: bit b of byte i of each column still holding byte i, in turn */
        uint8_t *o = vals + r * z->out_len;
        memset(o, 0, z->out_len);
        size_t obit = 0, total = z->out_len * 8;
        for (size_t i = 0; obit < total; i++) {
            for (int b = 7; b >= 0 && obit < total; b--) {
                size_t off = 0;
                for (size_t k = 0; k < z->ncols && obit < total; off += width[k], k++) {
                    if (i >= width[k])
                        continue;
                    if ((row[off + i] >> b) & 1)
                        o[obit / 8] |= (uint8_t)(0x80u >> (obit % 8));
                    obit++;
                }
            }
        }
    }
done:
    floe_free(width);
    floe_free(vi);
    floe_free(row);
    return rc;
}

int rw_zorder_batch(const rw_zorder *z, const floe_batch *src, floe_batch *dst, floe_error *err) {
    int rc = 0;
    uint8_t *vals = floe_malloc(src->nrows * z->out_len + 1);
    if (!vals)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(rw_zorder_values(z, src, vals, err));
    sort_ctx c = {.z = vals, .zlen = z->out_len};
    FLOE_CHECK(order_rows(&c, src, dst, err));
done:
    floe_free(vals);
    return rc;
}
