/*
 * scalar.c - exact scalar conversions for the shredder and inference (json_internal.h).
 *
 * Numbers follow RFC 8259 section 6 grammar. Integer and decimal conversions never go
 * through binary floating point: the digit string is normalised (leading and trailing
 * zeros dropped, the exponent adjusted) and scaled in 64/128-bit integers. Floating point
 * uses the exact Clinger fast path (<= 15 digits, |exponent| <= 22) and otherwise
 * strtod_l/strtof_l in the C locale, which round correctly.
 *
 * Dates use the proleptic Gregorian calendar (Iceberg spec: date is days from 1970-01-01).
 */
#include "json/json_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/common.h"

size_t floe_jnum_scan(const uint8_t *p, const uint8_t *end, floe_jnum *o, size_t *bad) {
    const uint8_t *s = p;
    o->start = p;
    o->neg = false;
    o->frac_digits = NULL;
    o->n_frac = 0;
    o->exp = 0;
    o->simple = false;
    o->simple_value = 0;
    if (p < end && *p == '-') {
        o->neg = true;
        p++;
    }
    if (p >= end || !IS_DIGIT(*p))
        goto fail;
    o->int_digits = p;
    /* every digit goes into m as it is scanned; m wraps past 19 digits (unsigned, defined)
     * and is trusted only up to 19 */
    uint64_t m = 0;
    if (*p == '0')
        p++;
    else
        while (p < end && IS_DIGIT(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
    o->n_int = (size_t)(p - o->int_digits);
    bool plain = true;
    if (p < end && *p == '.') {
        p++;
        o->frac_digits = p;
        while (p < end && IS_DIGIT(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
        o->n_frac = (size_t)(p - o->frac_digits);
        if (!o->n_frac)
            goto fail;
        plain = false;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p >= end || !IS_DIGIT(*p))
            goto fail;
        int64_t e = 0;
        while (p < end && IS_DIGIT(*p)) {
            if (e < 1000000000)
                e = e * 10 + (*p - '0');
            p++;
        }
        o->exp = eneg ? -e : e;
        plain = false;
    }
    o->len = (size_t)(p - s);
    o->mant_ok = o->n_int + o->n_frac <= 19;
    o->mant = m;
    if (plain && o->n_int <= 18) {
        o->simple = true;
        o->simple_value = m;
    }
    return o->len;
fail:
    if (bad)
        *bad = (size_t)(p - s);
    return 0;
}

/* The significant digits of a number as one virtual sequence (integer part, then
 * fraction), with leading and trailing zeros removed: value = digits * 10^e10. */
typedef struct numdigits {
    const floe_jnum *n;
    size_t lo, count; /* first significant index and count; count 0 means zero */
    int64_t e10;
} numdigits;

static inline int digit_at(const floe_jnum *n, size_t i) {
    return i < n->n_int ? n->int_digits[i] - '0' : n->frac_digits[i - n->n_int] - '0';
}

static void normalize(const floe_jnum *n, numdigits *d) {
    size_t total = n->n_int + n->n_frac;
    size_t lo = 0, hi = total;
    while (lo < total && digit_at(n, lo) == 0)
        lo++;
    d->n = n;
    if (lo == total) {
        d->lo = d->count = 0;
        d->e10 = 0;
        return;
    }
    while (hi > lo && digit_at(n, hi - 1) == 0)
        hi--;
    d->lo = lo;
    d->count = hi - lo;
    d->e10 = n->exp - (int64_t)n->n_frac + (int64_t)(total - hi);
}

int floe_jnum_to_i64(const floe_jnum *n, int64_t lo, int64_t hi, int64_t *out) {
    uint64_t mag;
    if (n->simple) {
        mag = n->simple_value;
    } else {
        numdigits d;
        normalize(n, &d);
        if (!d.count) {
            *out = 0;
            return FLOE_SC_OK;
        }
        if (d.e10 < 0)
            return FLOE_SC_NONINTEGRAL;
        if ((int64_t)d.count + d.e10 > 19)
            return FLOE_SC_RANGE;
        mag = 0;
        for (size_t i = 0; i < d.count; i++)
            mag = mag * 10 + (uint64_t)digit_at(n, d.lo + i);
        for (int64_t i = 0; i < d.e10; i++)
            mag *= 10;
    }
    if (n->neg) {
        if (mag > (uint64_t)(-(lo + 1)) + 1)
            return FLOE_SC_RANGE;
        *out = mag ? (int64_t)(0 - mag) : 0;
    } else {
        if (mag > (uint64_t)hi)
            return FLOE_SC_RANGE;
        *out = (int64_t)mag;
    }
    return FLOE_SC_OK;
}

int floe_jnum_to_decimal(const floe_jnum *n, int precision, int scale, floe_i128 *out,
                         char *why, size_t whyn) {
    numdigits d;
    normalize(n, &d);
    if (!d.count) {
        *out = 0;
        return FLOE_SC_OK;
    }
    int64_t shift = d.e10 + scale;
    if (shift < 0) {
        snprintf(why, whyn, "more than %d fractional digits (precision loss)", scale);
        return FLOE_SC_RANGE;
    }
    if ((int64_t)d.count + shift > precision) {
        snprintf(why, whyn, "more than %d significant digits", precision);
        return FLOE_SC_RANGE;
    }
    floe_u128 v = 0;
    for (size_t i = 0; i < d.count; i++)
        v = v * 10 + (floe_u128)digit_at(n, d.lo + i);
    for (int64_t i = 0; i < shift; i++)
        v *= 10;
    *out = n->neg ? -(floe_i128)v : (floe_i128)v;
    return FLOE_SC_OK;
}

const double floe_pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const float pow10_f[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                  1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

/* strtod/strtof on a NUL-terminated copy of the token. */
static int slow_parse(const floe_jnum *n, locale_t loc, bool single, double *out) {
    char stackbuf[128];
    char *buf = stackbuf;
    if (n->len >= sizeof stackbuf) {
        buf = floe_malloc(n->len + 1);
        if (!buf)
            return FLOE_SC_NOMEM;
    }
    memcpy(buf, n->start, n->len);
    buf[n->len] = '\0';
    double v = single ? (double)strtof_l(buf, NULL, loc) : strtod_l(buf, NULL, loc);
    if (buf != stackbuf)
        floe_free(buf);
    if (isinf(v))
        return FLOE_SC_RANGE;
    *out = v;
    return FLOE_SC_OK;
}

/* Eisel-Lemire (D. Lemire, "Number Parsing at a Gigabyte per Second", 2021): w * 10^q,
 * w != 0, correctly rounded to a double from one or two 64 x 64-bit products of w
 * (normalised) and a 128-bit approximation of 5^q (floe_pow5_128,
 * scripts/gen_pow5_table.py); the power of two comes from q's binary logarithm. The
 * product's low bits tell whether the approximation's error could reach the rounding
 * bit: then the second word refines it, and where even that cannot decide (its low word
 * all ones, outside the exponents where the table is exact enough) false: strtod
 * decides. Exact halfway cases (ties to even) only occur for q in -4..23 and are caught
 * there. Overflow gives an infinity, underflow a zero or a subnormal. */
#define POW5_QMIN (-342)
#define POW5_QMAX 308
extern const uint64_t floe_pow5_128[POW5_QMAX - POW5_QMIN + 1][2];

static bool eisel_lemire(uint64_t w, int64_t q, double *out) {
    if (q < POW5_QMIN) { /* below 2^64 * 10^-343, under half the least subnormal */
        *out = 0.0;
        return true;
    }
    if (q > POW5_QMAX) { /* at least 10^309 */
        *out = INFINITY;
        return true;
    }
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *t = floe_pow5_128[q - POW5_QMIN];
    floe_u128 prod = (floe_u128)w * t[0];
    uint64_t hi = (uint64_t)(prod >> 64), lo = (uint64_t)prod;
    if ((hi & 0x1FF) == 0x1FF) { /* the bits below the 55 kept are all ones: refine */
        uint64_t hi2 = (uint64_t)(((floe_u128)w * t[1]) >> 64);
        lo += hi2;
        if (lo < hi2)
            hi++;
    }
    if (lo == UINT64_MAX && (q < -27 || q > 55))
        return false;
    int upper = (int)(hi >> 63);
    uint64_t mant = hi >> (upper + 9);
    /* floor(q * log2(10)) as floor(q * 217706 / 2^16), exact for |q| <= 1650 */
    int64_t l2 = q >= 0 ? (q * 217706) >> 16 : -((-q * 217706 + 65535) >> 16);
    int64_t e2 = l2 + 63 + upper - lz + 1023; /* the biased exponent */
    uint64_t bits;
    if (e2 <= 0) { /* subnormal, or zero */
        if (-e2 + 1 >= 64) {
            *out = 0.0;
            return true;
        }
        mant >>= -e2 + 1;
        mant += mant & 1;
        mant >>= 1;
        /* rounding up to 2^52 makes it the least normal: exponent field 1, same bits */
        bits = mant | (mant < (1ull << 52) ? 0 : 1ull << 52);
        memcpy(out, &bits, sizeof bits);
        return true;
    }
    if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << (upper + 9)) == hi)
        mant &= ~(uint64_t)1; /* exactly halfway: to even, not up */
    mant += mant & 1;
    mant >>= 1;
    if (mant >= (2ull << 52)) { /* rounded up to the next power of two */
        mant = 1ull << 52;
        e2++;
    }
    if (e2 >= 0x7FF) {
        *out = INFINITY;
        return true;
    }
    bits = (uint64_t)e2 << 52 | (mant & ((1ull << 52) - 1));
    memcpy(out, &bits, sizeof bits);
    return true;
}

/* *out = +-v, or FLOE_SC_RANGE for an infinity (as strtod's overflow). */
static int signed_double(const floe_jnum *n, double v, double *out) {
    if (isinf(v))
        return FLOE_SC_RANGE;
    *out = n->neg ? -v : v;
    return FLOE_SC_OK;
}

int floe_jnum_to_double(const floe_jnum *n, locale_t loc, double *out) {
    /* The exact fast path (floe_jnum_to_double_fast) on the digits as written (leading
     * and trailing zeros kept): mant and 10^|e| are exact doubles, so the one multiplication or division rounds
     * the exact value correctly, the same double as the normalised path below or strtod
     * (both correctly rounded) would give. */
    if (floe_jnum_to_double_fast(n, out))
        return FLOE_SC_OK;
    double v;
    /* at most 19 digits as written (JavaScript's 16-17 significant ones, mostly) */
    if (n->mant_ok && n->mant && eisel_lemire(n->mant, n->exp - (int64_t)n->n_frac, &v))
        return signed_double(n, v, out);
    numdigits d;
    normalize(n, &d);
    if (!d.count) {
        *out = n->neg ? -0.0 : 0.0;
        return FLOE_SC_OK;
    }
    if (d.count <= 19) { /* leading or trailing zeros made it longer */
        uint64_t m = 0;
        for (size_t i = 0; i < d.count; i++)
            m = m * 10 + (uint64_t)digit_at(n, d.lo + i);
        if (eisel_lemire(m, d.e10, &v))
            return signed_double(n, v, out);
    }
    return slow_parse(n, loc, false, out); /* more than 19 digits, or undecided */
}

int floe_jnum_to_float(const floe_jnum *n, locale_t loc, float *out) {
    numdigits d;
    normalize(n, &d);
    if (!d.count) {
        *out = n->neg ? -0.0f : 0.0f;
        return FLOE_SC_OK;
    }
    if (d.count <= 7 && d.e10 >= -10 && d.e10 <= 10) {
        uint32_t m = 0;
        for (size_t i = 0; i < d.count; i++)
            m = m * 10 + (uint32_t)digit_at(n, d.lo + i);
        float v = (float)m; /* exact: m < 2^24 */
        v = d.e10 >= 0 ? v * pow10_f[d.e10] : v / pow10_f[-d.e10];
        *out = n->neg ? -v : v;
        return FLOE_SC_OK;
    }
    double v;
    int rc = slow_parse(n, loc, true, &v);
    if (rc == FLOE_SC_OK)
        *out = (float)v; /* exact: strtof's result widened and narrowed back */
    return rc;
}

/* ---- uuid, base64 --------------------------------------------------------------------------- */

int floe_parse_uuid(const uint8_t *p, size_t n, uint8_t out[16]) {
    /* where each byte's two digits start in 8-4-4-4-12 */
    static const uint8_t at[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
    if (n != 36 || p[8] != '-' || p[13] != '-' || p[18] != '-' || p[23] != '-')
        return FLOE_SC_SYNTAX;
    uint8_t tmp[16];
    unsigned bad = 0;
    for (size_t k = 0; k < 16; k++) {
        /* an invalid digit reads as 0xFF, so one test of the OR tells */
        unsigned hi = (uint8_t)floe_hex_values[p[at[k]]];
        unsigned lo = (uint8_t)floe_hex_values[p[at[k] + 1]];
        bad |= hi | lo;
        tmp[k] = (uint8_t)(hi << 4 | lo);
    }
    if (bad & 0xF0)
        return FLOE_SC_SYNTAX;
    memcpy(out, tmp, 16);
    return FLOE_SC_OK;
}

static int b64val(uint8_t c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (IS_DIGIT(c))
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int floe_base64_decode(const uint8_t *p, size_t n, uint8_t *out, size_t *outlen) {
    size_t pad = 0;
    if (n && p[n - 1] == '=') {
        pad++;
        if (n > 1 && p[n - 2] == '=')
            pad++;
        if (n % 4)
            return FLOE_SC_SYNTAX;
    }
    size_t m = n - pad;
    if (m % 4 == 1)
        return FLOE_SC_SYNTAX;
    if (pad && (m % 4) + pad != 4)
        return FLOE_SC_SYNTAX;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < m; i++) {
        int v = b64val(p[i]);
        if (v < 0)
            return FLOE_SC_SYNTAX;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    *outlen = o;
    return FLOE_SC_OK;
}

void floe_i128_to_be(floe_i128 v, uint8_t *out, int nbytes) {
    floe_u128 u = (floe_u128)v;
    for (int i = nbytes - 1; i >= 0; i--) {
        out[i] = (uint8_t)u;
        u >>= 8;
    }
}
