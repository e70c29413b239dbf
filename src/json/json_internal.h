/*
 * json_internal.h - scalar conversions shared by the shredder and schema inference:
 * JSON number tokens, exact integer/decimal scaling, ISO-8601 dates and times, UUIDs,
 * base64. Every function reads only p[0..n) and never allocates unless it says so.
 */
#ifndef FLOE_JSON_INTERNAL_H
#define FLOE_JSON_INTERNAL_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/literal.h"

/* an ASCII digit, in one compare */
#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

__extension__ typedef __int128 floe_i128;
__extension__ typedef unsigned __int128 floe_u128;

/* Results of the scalar parsers. */
enum {
    FLOE_SC_OK = 0,
    FLOE_SC_SYNTAX = 1,      /* not of the expected form (type mismatch) */
    FLOE_SC_RANGE = 2,       /* well-formed but out of range / precision lost */
    FLOE_SC_NONINTEGRAL = 3, /* a number with a fraction where an integer is needed */
    FLOE_SC_NOMEM = 5,
};

/* A scanned JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
typedef struct floe_jnum {
    const uint8_t *start;
    size_t len;
    bool neg;
    const uint8_t *int_digits;
    size_t n_int;
    const uint8_t *frac_digits; /* NULL when there is no fraction */
    size_t n_frac;
    int64_t exp;                /* explicit exponent, clamped to +-10^9 */
    bool simple;                /* no fraction, no exponent, at most 18 digits */
    uint64_t simple_value;      /* magnitude when simple */
    /* At most 19 digits in all (integer and fraction): value = mant * 10^(exp - n_frac),
     * mant exact (floe_jnum_to_double's fast path needs no second pass over the digits). */
    bool mant_ok;
    uint64_t mant;
} floe_jnum;

/* Scan a number at p (p < end). Returns bytes consumed, or 0 when the text is not a
 * JSON number; *bad (when non-NULL) receives the offset of the offending byte. */
size_t floe_jnum_scan(const uint8_t *p, const uint8_t *end, floe_jnum *out, size_t *bad);
/* Exact conversions. Return FLOE_SC_OK, _NONINTEGRAL or _RANGE. */
int floe_jnum_to_i64(const floe_jnum *n, int64_t lo, int64_t hi, int64_t *out);
/* Unscaled value of decimal(precision, scale): FLOE_SC_OK, or _RANGE with why filled in
 * ("precision loss" / "too many digits"). */
int floe_jnum_to_decimal(const floe_jnum *n, int precision, int scale, floe_i128 *out,
                         char *why, size_t whyn);
/* Correctly rounded; FLOE_SC_RANGE on overflow to infinity, FLOE_SC_NOMEM. loc is a C
 * locale (newlocale) for strtod_l. */
int floe_jnum_to_double(const floe_jnum *n, locale_t loc, double *out);
int floe_jnum_to_float(const floe_jnum *n, locale_t loc, float *out);
/* floe_jnum_to_double's first path inline, for callers that convert many numbers: the
 * digits as written (at most 19, mant <= 2^53) and a power of ten within 10^+-22 are
 * both exact doubles, so the one multiplication or division rounds the exact value
 * correctly (Clinger). false: call floe_jnum_to_double. */
extern const double floe_pow10_exact[23];
static inline bool floe_jnum_to_double_fast(const floe_jnum *n, double *out) {
    if (!n->mant_ok || n->mant > (1ull << 53))
        return false;
    int64_t e = n->exp - (int64_t)n->n_frac;
    if (e < -22 || e > 22)
        return false;
    double v = (double)n->mant;
    v = e >= 0 ? v * floe_pow10_exact[e] : v / floe_pow10_exact[-e];
    *out = n->neg ? -v : v;
    return true;
}

/* Dates, times and timestamps parse in common/literal.h (FLOE_LIT_STRICT). */
/* Canonical 8-4-4-4-12 hex UUID. */
int floe_parse_uuid(const uint8_t *p, size_t n, uint8_t out[16]);
/* Standard base64, padding optional. out needs n / 4 * 3 + 3 bytes. */
int floe_base64_decode(const uint8_t *p, size_t n, uint8_t *out, size_t *outlen);

/* Big-endian two's complement of v in nbytes (1..16). */
void floe_i128_to_be(floe_i128 v, uint8_t *out, int nbytes);

#endif
