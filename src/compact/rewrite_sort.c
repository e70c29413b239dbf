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
 */
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

int rw_sort_batch(const floe_sort_order *order, const floe_batch *src, floe_batch *dst,
                  floe_error *err) {
    size_t n = src->nrows;
    int rc = 0;
    sort_ctx c = {0};
    size_t *perm = floe_malloc((n + 1) * sizeof *perm);
    size_t *tmp = floe_malloc((n + 1) * sizeof *tmp);
    c.keys = floe_calloc(order->nfields + 1, sizeof *c.keys);
    if (!perm || !tmp || !c.keys)
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
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    merge_sort(&c, perm, tmp, n);
    floe_batch_clear(dst);
    FLOE_CHECK(rw_batch_gather(src, perm, n, dst, err));
done:
    for (size_t k = 0; k < c.nkeys; k++)
        floe_free(c.keys[k].v);
    floe_free(c.keys);
    floe_free(perm);
    floe_free(tmp);
    return rc;
}
