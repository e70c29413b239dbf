/*
 * writer_stats.c - min/max statistics of the Parquet writer: bound truncation
 * (floe_pq_truncate_lower/upper), the column order's comparison, page / chunk / file
 * stats and the bounds written for them.
 */
#include <math.h>
#include <string.h>

#include "parquet/writer_internal.h"

/* =====================================================================================
 * Bound truncation
 * =================================================================================== */

static size_t utf8_cut(const uint8_t *p, size_t n, size_t len) {
    if (n <= len)
        return n;
    size_t k = len;
    while (k > 0 && (p[k] & 0xC0) == 0x80) /* p[k] is the first byte not kept */
        k--;
    return k;
}

int floe_pq_truncate_lower(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated) {
    size_t k = n <= len ? n : (utf8 ? utf8_cut(p, n, len) : len);
    *truncated = k < n;
    return floe_buf_append(out, p, k);
}

/* Decode the code point that starts at p[i] (well-formed input assumed; malformed bytes
 * count as one-byte characters). Returns its length. */
static size_t utf8_decode(const uint8_t *p, size_t n, size_t i, uint32_t *cp) {
    uint8_t b = p[i];
    size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
                 : (b & 0xF8) == 0xF0 ? 4 : 1;
    if (i + len > n)
        len = 1;
    if (len == 1) {
        *cp = b;
        return 1;
    }
    uint32_t c = b & (0x7F >> len);
    for (size_t k = 1; k < len; k++)
        c = (c << 6) | (p[i + k] & 0x3F);
    *cp = c;
    return len;
}

static size_t utf8_encode(uint32_t cp, uint8_t *o) {
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

int floe_pq_truncate_upper(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated) {
    if (n <= len) {
        *truncated = false;
        return floe_buf_append(out, p, n);
    }
    if (!utf8) {
        size_t k = len;
        while (k > 0 && p[k - 1] == 0xFF)
            k--;
        if (k == 0)
            return FLOE_ENOTFOUND;
        int rc = floe_buf_append(out, p, k);
        if (rc < 0)
            return rc;
        out->data[out->len - 1]++;
        *truncated = true;
        return 0;
    }
    /* UTF-8: split the kept prefix into characters, increment the last one that can be
     * incremented (skipping the surrogate block), drop the ones after it. */
    size_t k = utf8_cut(p, n, len);
    size_t starts[64 + 1];
    size_t nchars = 0, i = 0;
    /* Only the last few characters can matter; walk the prefix keeping a bounded ring. */
    size_t ring = sizeof starts / sizeof starts[0];
    while (i < k) {
        uint32_t cp;
        starts[nchars % ring] = i;
        nchars++;
        i += utf8_decode(p, k, i, &cp);
    }
    for (size_t back = 0; back < nchars && back < ring; back++) {
        size_t ci = nchars - 1 - back;
        size_t at = starts[ci % ring];
        uint32_t cp;
        size_t clen = utf8_decode(p, k, at, &cp);
        (void)clen;
        uint32_t next = cp + 1;
        if (next >= 0xD800 && next <= 0xDFFF)
            next = 0xE000;
        if (next > 0x10FFFF)
            continue;
        uint8_t enc[4];
        size_t elen = utf8_encode(next, enc);
        int rc = floe_buf_append(out, p, at);
        if (rc == 0)
            rc = floe_buf_append(out, enc, elen);
        if (rc < 0)
            return rc;
        *truncated = true;
        return 0;
    }
    return FLOE_ENOTFOUND;
}

/* =====================================================================================
 * Comparisons and statistics
 * =================================================================================== */

static inline uint64_t load_be64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* The first m (< 8) bytes of p as an integer that orders as the bytes do among strings
 * of the same m: overlapping loads never read outside [p, p + m), and the bytes they
 * share were already found equal by the time they decide (first word, then last). */
static inline uint64_t short_key(const uint8_t *p, size_t m) {
    if (m >= 4) {
        uint32_t hi, lo;
        memcpy(&hi, p, 4);
        memcpy(&lo, p + m - 4, 4);
        return (uint64_t)__builtin_bswap32(hi) << 32 | __builtin_bswap32(lo);
    }
    if (m == 0)
        return 0;
    return (uint64_t)p[0] << 16 | (uint64_t)p[m / 2] << 8 | p[m - 1];
}

static inline int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    size_t m = an < bn ? an : bn;
    if (m >= 8) { /* most pairs differ in their first 8 bytes: settle them without a call */
        uint64_t x = load_be64(a), y = load_be64(b);
        if (x != y)
            return x < y ? -1 : 1;
        int c = memcmp(a, b, m);
        if (c)
            return c;
    } else {
        uint64_t x = short_key(a, m), y = short_key(b, m);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return an < bn ? -1 : an > bn;
}

int pqw_cmp_plain(const col *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    switch (c->order) {
    case ORDER_BOOL:
        return (a[0] > b[0]) - (a[0] < b[0]);
    case ORDER_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case ORDER_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case ORDER_FLOAT: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case ORDER_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case ORDER_SIGNED_FIXED:
        if (an && bn && ((a[0] ^ b[0]) & 0x80))
            return (a[0] & 0x80) ? -1 : 1; /* different signs */
        return cmp_bytes(a, an, b, bn);
    default:
        return cmp_bytes(a, an, b, bn);
    }
}

/* Merge [minp,maxp] into s (min_inexact / max_inexact: they are bounds, not values). */
int pqw_vstat_merge_bounds(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                           bool min_inexact, const uint8_t *maxp, size_t maxn,
                           bool max_inexact) {
    int rc;
    if (!s->has || pqw_cmp_plain(c, minp, minn, s->min.data, s->min.len) < 0) {
        floe_buf_reset(&s->min);
        if ((rc = floe_buf_append(&s->min, minp, minn)) < 0)
            return rc;
        s->min_inexact = min_inexact;
    }
    if (!s->has || pqw_cmp_plain(c, maxp, maxn, s->max.data, s->max.len) > 0) {
        floe_buf_reset(&s->max);
        if ((rc = floe_buf_append(&s->max, maxp, maxn)) < 0)
            return rc;
        s->max_inexact = max_inexact;
    }
    s->has = true;
    return 0;
}

/* Merge the values [minp,maxp] into s. */
int pqw_vstat_merge(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                    const uint8_t *maxp, size_t maxn) {
    return pqw_vstat_merge_bounds(c, s, minp, minn, false, maxp, maxn, false);
}

int pqw_vstat_merge_stat(const col *c, vstat *dst, const vstat *src) {
    if (!src->has)
        return 0;
    return pqw_vstat_merge_bounds(c, dst, src->min.data, src->min.len, src->min_inexact,
                                  src->max.data, src->max.len, src->max_inexact);
}

void pqw_vstat_reset(vstat *s) {
    s->has = false;
    s->min_inexact = s->max_inexact = false;
    floe_buf_reset(&s->min);
    floe_buf_reset(&s->max);
}

void pqw_vstat_free(vstat *s) {
    floe_buf_free(&s->min);
    floe_buf_free(&s->max);
}

/* Float bounds: -0.0 for a zero minimum, +0.0 for a zero maximum (parquet.thrift
 * ColumnOrder rules), so readers that see +0 as min or -0 as max cannot skip wrongly. */
static void fix_zero(const col *c, uint8_t *v, bool is_min) {
    if (c->order == ORDER_FLOAT) {
        float f;
        memcpy(&f, v, 4);
        if (f == 0.0f) {
            f = is_min ? -0.0f : 0.0f;
            memcpy(v, &f, 4);
        }
    } else if (c->order == ORDER_DOUBLE) {
        double d;
        memcpy(&d, v, 8);
        if (d == 0.0) {
            d = is_min ? -0.0 : 0.0;
            memcpy(v, &d, 8);
        }
    }
}

int pqw_make_bounds(const col *c, const vstat *s, size_t trunc, floe_buf *out, bounds *b) {
    int rc;
    bool t = false;
    b->min_off = out->len;
    if (c->truncatable && trunc > 0) {
        if ((rc = floe_pq_truncate_lower(s->min.data, s->min.len, trunc, c->utf8, out, &t)) < 0)
            return rc;
    } else if ((rc = floe_buf_append(out, s->min.data, s->min.len)) < 0) {
        return rc;
    }
    b->min_len = out->len - b->min_off;
    b->min_exact = !t;
    if (c->is_float && b->min_len)
        fix_zero(c, out->data + b->min_off, true);
    b->max_off = out->len;
    t = false;
    rc = FLOE_ENOTFOUND;
    if (c->truncatable && trunc > 0)
        rc = floe_pq_truncate_upper(s->max.data, s->max.len, trunc, c->utf8, out, &t);
    if (rc == FLOE_ENOTFOUND) {
        t = false;
        rc = floe_buf_append(out, s->max.data, s->max.len);
    }
    if (rc < 0)
        return rc;
    b->max_len = out->len - b->max_off;
    b->max_exact = !t;
    if (c->is_float && b->max_len)
        fix_zero(c, out->data + b->max_off, false);
    return 0;
}

/* Statistics of a span of fixed-width values; NaNs counted and skipped. Sets *mi and *ma to
 * the indexes of the extreme values (SIZE_MAX if none). */
static void span_minmax_fixed(const col *c, const uint8_t *v, size_t nv, size_t *mi,
                              size_t *ma, int64_t *nans) {
    size_t a = SIZE_MAX, b = SIZE_MAX;
    switch (c->order) {
    case ORDER_BOOL: {
        for (size_t i = 0; i < nv; i++) {
            if (a == SIZE_MAX || v[i] < v[a])
                a = i;
            if (b == SIZE_MAX || v[i] > v[b])
                b = i;
        }
        break;
    }
    case ORDER_INT32: {
        int32_t lo = 0, hi = 0;
        for (size_t i = 0; i < nv; i++) {
            int32_t x;
            memcpy(&x, v + i * 4, 4);
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        break;
    }
    case ORDER_INT64: {
        int64_t lo = 0, hi = 0;
        for (size_t i = 0; i < nv; i++) {
            int64_t x;
            memcpy(&x, v + i * 8, 8);
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        break;
    }
    case ORDER_FLOAT: {
        float lo = 0, hi = 0;
        int64_t nn = 0;
        for (size_t i = 0; i < nv; i++) {
            float x;
            memcpy(&x, v + i * 4, 4);
            if (isnan(x)) { nn++; continue; }
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        *nans += nn;
        break;
    }
    case ORDER_DOUBLE: {
        double lo = 0, hi = 0;
        int64_t nn = 0;
        for (size_t i = 0; i < nv; i++) {
            double x;
            memcpy(&x, v + i * 8, 8);
            if (isnan(x)) { nn++; continue; }
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        *nans += nn;
        break;
    }
    default: {
        size_t w = (size_t)c->width;
        for (size_t i = 0; i < nv; i++) {
            const uint8_t *x = v + i * w;
            if (a == SIZE_MAX || pqw_cmp_plain(c, x, w, v + a * w, w) < 0)
                a = i;
            if (b == SIZE_MAX || pqw_cmp_plain(c, x, w, v + b * w, w) > 0)
                b = i;
        }
        break;
    }
    }
    *mi = a;
    *ma = b;
}

/* min/max of nv numbers by value (no index): fixed blocks of 16 that gcc -O2 turns into
 * vector min/max, where the index-tracking loop above costs a branch per value. NaNs are
 * counted and left out (x < lo and x > hi are false for them). Returns false when no value
 * counts. The zero sign of a float bound may differ from the first zero's: pqw_make_bounds
 * writes every zero bound as -0.0 (min) or +0.0 (max) anyway. */
#define DEF_MINMAX_NUM(name, T, LO0, HI0, NANCHK)                                          \
    static bool name(const uint8_t *v, size_t nv, T *plo, T *phi, int64_t *nans) {       \
        T lo = LO0, hi = HI0;                                                             \
        size_t i = 0, nn = 0;                                                             \
        for (; i + 16 <= nv; i += 16) {                                                   \
            T x[16];                                                                      \
            memcpy(x, v + i * sizeof(T), sizeof x);                                       \
            T l = lo, h = hi;                                                             \
            for (size_t k = 0; k < 16; k++) {                                             \
                l = x[k] < l ? x[k] : l;                                                  \
                h = x[k] > h ? x[k] : h;                                                  \
                if (NANCHK)                                                               \
                    nn += x[k] != x[k];                                                   \
            }                                                                             \
            lo = l;                                                                       \
            hi = h;                                                                       \
        }                                                                                 \
        for (; i < nv; i++) {                                                             \
            T x;                                                                          \
            memcpy(&x, v + i * sizeof(T), sizeof x);                                      \
            lo = x < lo ? x : lo;                                                         \
            hi = x > hi ? x : hi;                                                         \
            if (NANCHK)                                                                   \
                nn += x != x;                                                             \
        }                                                                                 \
        *nans += (int64_t)nn;                                                             \
        *plo = lo;                                                                        \
        *phi = hi;                                                                        \
        return nv > nn;                                                                   \
    }
DEF_MINMAX_NUM(minmax_i32, int32_t, INT32_MAX, INT32_MIN, 0)
DEF_MINMAX_NUM(minmax_i64, int64_t, INT64_MAX, INT64_MIN, 0)
DEF_MINMAX_NUM(minmax_f32, float, INFINITY, -INFINITY, 1)
DEF_MINMAX_NUM(minmax_f64, double, (double)INFINITY, -(double)INFINITY, 1)
#undef DEF_MINMAX_NUM

/* Statistics of a span of fixed-width values into pstat (NaNs counted into pnans). */
int pqw_span_stats_fixed(col *c, const uint8_t *v, size_t nv) {
    uint8_t lo[8], hi[8];
    bool has;
    size_t w = (size_t)c->width;
    switch (c->order) {
    case ORDER_INT32: {
        int32_t a, b;
        has = minmax_i32(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 4);
        memcpy(hi, &b, 4);
        break;
    }
    case ORDER_INT64: {
        int64_t a, b;
        has = minmax_i64(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 8);
        memcpy(hi, &b, 8);
        break;
    }
    case ORDER_FLOAT: {
        float a, b;
        has = minmax_f32(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 4);
        memcpy(hi, &b, 4);
        break;
    }
    case ORDER_DOUBLE: {
        double a, b;
        has = minmax_f64(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 8);
        memcpy(hi, &b, 8);
        break;
    }
    default: {
        size_t mi, ma;
        span_minmax_fixed(c, v, nv, &mi, &ma, &c->pnans);
        if (mi == SIZE_MAX)
            return 0;
        return pqw_vstat_merge(c, &c->pstat, v + mi * w, w, v + ma * w, w);
    }
    }
    if (!has)
        return 0;
    return pqw_vstat_merge(c, &c->pstat, lo, w, hi, w);
}

/* min/max of a span of byte arrays into pstat. */
int pqw_span_minmax_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv) {
    size_t a = 0, b = 0;
    for (size_t i = 1; i < nv; i++) {
        const uint8_t *x = data + off[i];
        size_t xn = off[i + 1] - off[i];
        if (cmp_bytes(x, xn, data + off[a], off[a + 1] - off[a]) < 0)
            a = i;
        if (cmp_bytes(x, xn, data + off[b], off[b + 1] - off[b]) > 0)
            b = i;
    }
    if (!nv)
        return 0;
    return pqw_vstat_merge(c, &c->pstat, data + off[a], off[a + 1] - off[a], data + off[b],
                           off[b + 1] - off[b]);
}

/* Fill a Statistics struct from a stat and counts; bounds bytes go to scratch (must stay
 * alive while st is used). */
int pqw_stats_fill(const floe_pq_writer *w, const col *c, const vstat *s, int64_t nulls,
                   int64_t nans, floe_buf *scratch, floe_pq_statistics *st, bounds *b) {
    memset(st, 0, sizeof *st);
    st->has_null_count = true;
    st->null_count = nulls;
    if (c->is_float) {
        st->has_nan_count = true;
        st->nan_count = nans;
    }
    if (!s->has)
        return 0;
    int rc = pqw_make_bounds(c, s, w->opts.stats_truncate_length, scratch, b);
    if (rc < 0)
        return rc;
    return 0;
}

void pqw_stats_point(const col *c, floe_pq_statistics *st, const floe_buf *scratch,
                     const bounds *b, bool has) {
    if (!has || c->leaf->geo) /* LogicalTypes.md: no min/max for GEOMETRY/GEOGRAPHY */
        return;
    st->has_min_value = st->has_max_value = true;
    st->min_value = (floe_pq_bytes){scratch->data + b->min_off, b->min_len};
    st->max_value = (floe_pq_bytes){scratch->data + b->max_off, b->max_len};
    st->has_is_min_value_exact = st->has_is_max_value_exact = true;
    st->is_min_value_exact = b->min_exact;
    st->is_max_value_exact = b->max_exact;
    if (c->signed_stats) {
        st->has_min = st->has_max = true;
        st->min = st->min_value;
        st->max = st->max_value;
    }
}
