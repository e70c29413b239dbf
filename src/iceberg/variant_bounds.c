/*
 * variant_bounds.c - building and reading the bounds of a variant column (variant_bounds.h;
 * format/spec.md "Bounds for Variant" and Appendix D "Bound serialization"; the encoding is
 * apache/parquet-format VariantEncoding.md).
 *
 * A bound is the metadata blob (the sorted dictionary of the paths) followed by an object
 * value whose field i is path i's bound. The spec forbids bounds for values of mixed
 * variant types; a path's values are of one type when its shredded value leaf is all
 * null, for then every value there is stored in typed_value, whose type is the bound's
 * (VariantShredding.md "Data Skipping"). floe's shredder stores integers of any width in
 * an int64 typed_value (they read back as int64), and the variant spec makes int8..int64
 * one equivalence class whose values compare by number, so an integer bound of any width
 * is read as one integer kind (docs/DESIGN.md "Variant bounds").
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "scan_internal.h"
#include "variant_bounds.h"

static int path_cmp(const void *x, const void *y) {
    const floe_vbound_field *a = x, *b = y;
    return strcmp(a->path, b->path); /* unsigned byte order, as a dictionary is sorted */
}

/* Append field f's bound as a variant primitive; 1 when written, 0 when it has none. */
static int prim(const floe_vbound_field *f, bool upper, floe_metrics_mode m, floe_buf *out) {
    const uint8_t *p = upper ? f->hi : f->lo;
    size_t n = upper ? f->hi_len : f->lo_len;
    if (!p)
        return 0;
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN:
        if (n != 1)
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, p[0] ? FLOE_VARIANT_TRUE << 2
                                                             : FLOE_VARIANT_FALSE << 2));
        return 1;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_DOUBLE: {
        size_t w = f->type == FLOE_TYPE_INT ? 4 : 8;
        if (n != w)
            return 0;
        if (f->type == FLOE_TYPE_DOUBLE) {
            double d;
            memcpy(&d, p, 8);
            if (isnan(d))
                return 0;
        }
        uint8_t t = f->type == FLOE_TYPE_INT    ? FLOE_VARIANT_INT32
                    : f->type == FLOE_TYPE_LONG ? FLOE_VARIANT_INT64
                                                : FLOE_VARIANT_DOUBLE;
        FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, (uint8_t)(t << 2)));
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    }
    case FLOE_TYPE_STRING: {
        floe_buf s;
        floe_buf_init(&s, 0);
        int rc = floe_metrics_truncate_bound(p, n, true, upper, m, &s);
        if (rc == 1) {
            int w;
            if (s.len < 64) { /* a short string */
                w = floe_buf_append_byte(out, (uint8_t)(s.len << 2 | 1));
            } else {
                uint8_t h[5] = {FLOE_VARIANT_STRING << 2, (uint8_t)s.len,
                                (uint8_t)(s.len >> 8), (uint8_t)(s.len >> 16),
                                (uint8_t)(s.len >> 24)};
                w = s.len > UINT32_MAX ? FLOE_ELIMIT : floe_buf_append(out, h, 5);
            }
            if (w == 0 && s.len)
                w = floe_buf_append(out, s.data, s.len);
            rc = w < 0 ? w : 1;
        }
        floe_buf_free(&s);
        return rc;
    }
    default:
        return 0;
    }
}

int floe_variant_bound_build(floe_vbound_field *fs, size_t n, bool upper,
                             floe_metrics_mode m, floe_buf *out, floe_error *err) {
    int rc = 0;
    qsort(fs, n, sizeof *fs, path_cmp);
    floe_buf vals;
    floe_buf_init(&vals, 0);
    const uint8_t **keys = floe_calloc(n ? n : 1, sizeof *keys);
    size_t *lens = floe_calloc(n ? n : 1, sizeof *lens);
    floe_variant_member *ms = floe_calloc(n ? n : 1, sizeof *ms);
    if (!keys || !lens || !ms)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = vals.len;
        int got = prim(&fs[i], upper, m, &vals);
        if (got < 0)
            FLOE_FAIL(err, got, "variant bounds: %s", floe_strerror(got));
        if (!got)
            continue;
        keys[k] = (const uint8_t *)fs[i].path;
        lens[k] = strlen(fs[i].path);
        ms[k] = (floe_variant_member){(uint32_t)k, at, vals.len - at};
        k++;
    }
    if (k == 0)
        goto done;
    size_t start = out->len;
    FLOE_CHECK(floe_variant_append_metadata(keys, lens, k, out, err));
    rc = floe_variant_append_container(true, ms, k, vals.data, out, err);
    if (rc < 0) {
        floe_buf_truncate(out, start);
        goto done;
    }
    rc = 1;
done:
    floe_buf_free(&vals);
    floe_free(keys);
    floe_free(lens);
    floe_free(ms);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Reading a bound back
 * ------------------------------------------------------------------------------------- */

typedef struct find_ctx {
    uint32_t id;
    const uint8_t *v;
    size_t n;
} find_ctx;

static int find_field(void *ctx, uint32_t id, const uint8_t *key, size_t key_len,
                      const uint8_t *value, size_t value_len) {
    (void)key;
    (void)key_len;
    find_ctx *f = ctx;
    if (id == f->id) {
        f->v = value;
        f->n = value_len;
    }
    return 0;
}

static int64_t le_signed(const uint8_t *p, size_t w) {
    uint64_t u = 0;
    for (size_t i = 0; i < w; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (w < 8 && (u >> (8 * w - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * w); /* sign-extend */
    return (int64_t)u;
}

int floe_variant_bound_get(const uint8_t *p, size_t n, const char *path, size_t plen,
                           floe_vbound *out) {
    floe_error err;
    size_t msize;
    find_ctx f = {0};
    if (floe_variant_metadata_check(p, n, true, &msize, &err) < 0 ||
        floe_variant_metadata_find(p, msize, (const uint8_t *)path, plen, &f.id) != 1 ||
        floe_variant_object_raw_fields(p, msize, p + msize, n - msize, find_field, &f,
                                       &err) != 0 ||
        !f.v || f.n == 0)
        return 0;
    const uint8_t *v = f.v;
    unsigned basic = v[0] & 3, t = v[0] >> 2;
    memset(out, 0, sizeof *out);
    if (basic == 1) { /* a short string; the value was validated whole */
        *out = (floe_vbound){.kind = FLOE_VB_STRING, .s = v + 1, .n = t};
        return 1;
    }
    if (basic != 0)
        return 0;
    switch (t) {
    case FLOE_VARIANT_TRUE:
    case FLOE_VARIANT_FALSE:
        *out = (floe_vbound){.kind = FLOE_VB_BOOL, .i = t == FLOE_VARIANT_TRUE};
        return 1;
    case FLOE_VARIANT_INT8:
    case FLOE_VARIANT_INT16:
    case FLOE_VARIANT_INT32:
    case FLOE_VARIANT_INT64: {
        size_t w = (size_t)1 << (t - FLOE_VARIANT_INT8);
        if (f.n != 1 + w)
            return 0;
        *out = (floe_vbound){.kind = FLOE_VB_INT, .i = le_signed(v + 1, w)};
        return 1;
    }
    case FLOE_VARIANT_STRING:
        if (f.n < 5)
            return 0;
        *out = (floe_vbound){.kind = FLOE_VB_STRING, .s = v + 5, .n = f.n - 5};
        return 1;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------------------------------
 * Comparing with a predicate
 * ------------------------------------------------------------------------------------- */

/* The literal as an int64 when it is an integer literal that fits. */
static bool int_literal(const char *s, size_t n, int64_t *out) {
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (i == 0 && s[i] == '-' && n > 1)))
            return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno)
        return false;
    *out = v;
    return true;
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int int_cmp(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* May a value within [lo, hi] satisfy `value op lit`, given cl = cmp(lo, lit) when lo
 * exists (has_lo) and ch = cmp(hi, lit) when hi does? */
static bool range_may(floe_pred_op op, bool has_lo, int cl, bool has_hi, int ch) {
    switch (op) {
    case FLOE_PRED_EQ: return (!has_lo || cl <= 0) && (!has_hi || ch >= 0);
    case FLOE_PRED_NE: return !(has_lo && has_hi && cl == 0 && ch == 0);
    case FLOE_PRED_LT: return !has_lo || cl < 0;
    case FLOE_PRED_LE: return !has_lo || cl <= 0;
    case FLOE_PRED_GT: return !has_hi || ch > 0;
    case FLOE_PRED_GE: return !has_hi || ch >= 0;
    default: return true;
    }
}

bool floe_variant_range_may(const floe_expr *e, const floe_vbound *lo, const floe_vbound *hi) {
    if (!lo && !hi)
        return true;
    floe_vbound_kind kind = lo ? lo->kind : hi->kind;
    if (lo && hi && lo->kind != hi->kind)
        return true;
    switch (kind) {
    case FLOE_VB_STRING: {
        if (e->vlit_kind != FLOE_FILTER_LIT_STRING)
            return true;
        const uint8_t *lit = (const uint8_t *)e->vlit;
        size_t ln = e->vlit_n;
        if (e->op == FLOE_PRED_STARTS_WITH) {
            /* the strings with the prefix lie between lit and its longest extension */
            bool lo_ok = !lo || (lo->n >= ln && !memcmp(lo->s, lit, ln)) ||
                         bytes_cmp(lo->s, lo->n, lit, ln) <= 0;
            bool hi_ok = !hi || (hi->n >= ln && !memcmp(hi->s, lit, ln)) ||
                         bytes_cmp(hi->s, hi->n, lit, ln) >= 0;
            return lo_ok && hi_ok;
        }
        return range_may(e->op, lo, lo ? bytes_cmp(lo->s, lo->n, lit, ln) : 0, hi,
                         hi ? bytes_cmp(hi->s, hi->n, lit, ln) : 0);
    }
    case FLOE_VB_INT: {
        int64_t lit;
        if (e->vlit_kind != FLOE_FILTER_LIT_WORD || e->op == FLOE_PRED_STARTS_WITH ||
            !int_literal(e->vlit, e->vlit_n, &lit))
            return true;
        return range_may(e->op, lo, lo ? int_cmp(lo->i, lit) : 0, hi,
                         hi ? int_cmp(hi->i, lit) : 0);
    }
    case FLOE_VB_BOOL: {
        bool t = e->vlit_n == 4 && !strncmp(e->vlit, "true", 4);
        bool f = e->vlit_n == 5 && !strncmp(e->vlit, "false", 5);
        if (e->vlit_kind != FLOE_FILTER_LIT_WORD || !(t || f) ||
            (e->op != FLOE_PRED_EQ && e->op != FLOE_PRED_NE))
            return true;
        return range_may(e->op, lo, lo ? int_cmp(lo->i, t) : 0, hi, hi ? int_cmp(hi->i, t) : 0);
    }
    }
    return true;
}
