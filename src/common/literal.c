/*
 * literal.c - values from bounded text (s[0..n), no NUL needed).
 *
 * Numbers (floe_parse_i64/u64/f64, floe/common.h) for the literals users write in filters:
 * the syntax is strtoll's / strtoull's / strtod's, over the whole text: anything left
 * over, an empty text, a value out of range, or text longer than any number needs is
 * refused.
 *
 * Dates, times, timestamps and decimals (common/literal.h): every reader of them, from
 * NDJSON values to --where literals, parses here; the forms and what is out of range are
 * described there.
 *
 * Also the sizes and durations of configuration files and command options (one parser for
 * the CLI, `floe serve`'s configuration and the maintenance settings).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/literal.h"

/* A NUL-terminated copy in buf[cap]; false when s does not fit (no number is that long). */
static bool terminated(const char *s, size_t n, char *buf, size_t cap) {
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    return true;
}

bool floe_parse_i64(const char *s, size_t n, int64_t *out) {
    char buf[32], *end;
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool floe_parse_i64_cstr(const char *s, int64_t *out) {
    return s && floe_parse_i64(s, strlen(s), out);
}

bool floe_parse_u64(const char *s, size_t n, uint64_t *out) {
    char buf[32], *end;
    /* strtoull takes "-1" as 2^64 - 1 */
    if (!terminated(s, n, buf, sizeof buf) || memchr(buf, '-', n))
        return false;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool floe_parse_f64(const char *s, size_t n, double *out) {
    char buf[64], *end;
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    double v = strtod(buf, &end);
    if (*end)
        return false;
    *out = v;
    return true;
}

/* A non-negative number and the unit after it (optional blanks between); false for no
 * number, NaN or a negative one. */
static bool number_unit(const char *s, double *v, const char **unit) {
    if (!s || !*s)
        return false;
    char *end;
    double d = strtod(s, &end);
    if (end == s || !(d >= 0))
        return false;
    while (*end == ' ' || *end == '\t')
        end++;
    *v = d;
    *unit = end;
    return true;
}

static bool scaled(double v, double mul, int64_t *out) {
    double r = v * mul;
    if (!(r <= 9.0e18)) /* also infinity */
        return false;
    *out = (int64_t)r;
    return true;
}

bool floe_parse_size(const char *s, int64_t *out) {
    double v, mul;
    const char *u;
    if (!number_unit(s, &v, &u))
        return false;
    if (!*u || !strcasecmp(u, "b"))
        mul = 1;
    else if (!strcasecmp(u, "k") || !strcasecmp(u, "kb") || !strcasecmp(u, "kib"))
        mul = 1024.0;
    else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb") || !strcasecmp(u, "mib"))
        mul = 1024.0 * 1024;
    else if (!strcasecmp(u, "g") || !strcasecmp(u, "gb") || !strcasecmp(u, "gib"))
        mul = 1024.0 * 1024 * 1024;
    else
        return false;
    return scaled(v, mul, out);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* The milliseconds in one U of a duration ("" = bare_unit_ms); false for no unit known */
static bool duration_unit(const char *u, int64_t bare_unit_ms, int64_t *ms) {
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"min", 60000}, {"h", 3600000},
                 {"d", 86400000}};
    if (!*u) {
        *ms = bare_unit_ms;
        return bare_unit_ms > 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(u, units[i].name)) {
            *ms = units[i].ms;
            return true;
        }
    return false;
}

bool floe_parse_duration(const char *s, int64_t bare_unit_ms, int64_t *out_ms) {
    double v;
    int64_t mul;
    const char *u;
    if (!number_unit(s, &v, &u) || !duration_unit(u, bare_unit_ms, &mul))
        return false;
    return scaled(v, (double)mul, out_ms);
}

bool floe_parse_duration_exact(const char *s, int64_t bare_unit_ms, int64_t *out_ms) {
    int64_t v = 0, mul;
    const char *p = s;
    if (!s || !is_digit(*s))
        return false;
    for (; is_digit(*p); p++)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
            return false;
    if (!duration_unit(p, bare_unit_ms, &mul) || __builtin_mul_overflow(v, mul, &v))
        return false;
    *out_ms = v;
    return true;
}

/* ---- dates, times, timestamps -------------------------------------------------------- */

static int fail(int code, char *why, size_t whyn, const char *fmt, ...) FLOE_PRINTF(4, 5);
static int fail(int code, char *why, size_t whyn, const char *fmt, ...) {
    if (why && whyn) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whyn, fmt, ap);
        va_end(ap);
    }
    return code;
}


/* exactly k digits at s[*i] */
static bool digits_at(const char *s, size_t n, size_t *i, int k, int *out) {
    int v = 0;
    for (int j = 0; j < k; j++, (*i)++) {
        if (*i >= n || !is_digit(s[*i]))
            return false;
        v = v * 10 + (s[*i] - '0');
    }
    *out = v;
    return true;
}

static bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int64_t y, int m) {
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* A date at s[*i], advancing *i; days fit int32. */
static int date_at(const char *s, size_t n, size_t *i, floe_lit_form form, int64_t *days,
                   char *why, size_t whyn) {
    static const char expect[] = "expected a date YYYY-MM-DD";
    bool neg = false;
    if (form != FLOE_LIT_STRICT && *i < n && (s[*i] == '+' || s[*i] == '-'))
        neg = s[(*i)++] == '-';
    int64_t y = 0;
    int nd = 0;
    for (; *i < n && is_digit(s[*i]); (*i)++, nd++)
        if (nd < 10)
            y = y * 10 + (s[*i] - '0');
    int lo = form == FLOE_LIT_USER ? 1 : 4;
    if (nd < lo || (form == FLOE_LIT_STRICT && nd != 4))
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    int m, d;
    if (*i >= n || s[(*i)++] != '-' || !digits_at(s, n, i, 2, &m) || *i >= n ||
        s[(*i)++] != '-' || !digits_at(s, n, i, 2, &d))
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    if (nd > 9)
        return fail(FLOE_LIT_RANGE, why, whyn, "year of more than 9 digits out of range");
    if (neg)
        y = -y;
    if (m < 1 || m > 12)
        return fail(FLOE_LIT_RANGE, why, whyn, "month %d out of range", m);
    if (d < 1 || d > days_in_month(y, m))
        return fail(FLOE_LIT_RANGE, why, whyn, "day %d out of range for %04lld-%02d", d,
                    (long long)y, m);
    int64_t v = floe_days_from_civil(y, (unsigned)m, (unsigned)d);
    if (v < INT32_MIN || v > INT32_MAX)
        return fail(FLOE_LIT_RANGE, why, whyn,
                    "year %lld out of range (a date is 32-bit days since 1970)", (long long)y);
    *days = v;
    return FLOE_LIT_OK;
}

/* A time at s[*i], advancing *i: nanoseconds of the day. */
static int time_at(const char *s, size_t n, size_t *i, int64_t *nod, char *why, size_t whyn) {
    static const char expect[] = "expected a time HH:MM[:SS[.fffffffff]]";
    int h, mi, sec = 0;
    int64_t frac = 0;
    if (!digits_at(s, n, i, 2, &h) || *i >= n || s[(*i)++] != ':' ||
        !digits_at(s, n, i, 2, &mi))
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    int nf = 0;
    if (*i < n && s[*i] == ':') {
        (*i)++;
        if (!digits_at(s, n, i, 2, &sec))
            return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
        if (*i < n && s[*i] == '.') {
            (*i)++;
            for (; *i < n && is_digit(s[*i]); (*i)++, nf++)
                if (nf < 9)
                    frac = frac * 10 + (s[*i] - '0');
            if (nf == 0)
                return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
        }
    }
    if (h > 23)
        return fail(FLOE_LIT_RANGE, why, whyn, "hour %d out of range", h);
    if (mi > 59)
        return fail(FLOE_LIT_RANGE, why, whyn, "minute %d out of range", mi);
    if (sec > 59)
        return fail(FLOE_LIT_RANGE, why, whyn,
                    sec == 60 ? "leap second %d not representable" : "second %d out of range",
                    sec);
    if (nf > 9) /* not a value of any unit: a malformed time, as NDJSON ingest reports it */
        return fail(FLOE_LIT_SYNTAX, why, whyn,
                    "%d fraction digits (at most 9: nanoseconds)", nf);
    for (int k = nf; k < 9; k++)
        frac *= 10;
    *nod = ((int64_t)h * 3600 + mi * 60 + sec) * 1000000000 + frac;
    return FLOE_LIT_OK;
}

/* A zone at s[i..n), the whole rest: offset east of UTC in seconds. */
static int zone_at(const char *s, size_t n, size_t i, int32_t *offset, char *why,
                   size_t whyn) {
    static const char expect[] = "expected a zone Z, +HH:MM, +HHMM or +HH";
    if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z')) {
        *offset = 0;
        return FLOE_LIT_OK;
    }
    if (s[i] != '+' && s[i] != '-')
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    size_t j = i + 1, rest = n - j;
    int oh, om = 0;
    bool ok = digits_at(s, n, &j, 2, &oh);
    if (ok && rest == 4)
        ok = digits_at(s, n, &j, 2, &om);
    else if (ok && rest == 5)
        ok = s[j++] == ':' && digits_at(s, n, &j, 2, &om);
    else if (rest != 2)
        ok = false;
    if (!ok)
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    if (om > 59 || oh * 60 + om > 18 * 60)
        return fail(FLOE_LIT_RANGE, why, whyn, "zone offset %.*s out of range (at most 18:00)",
                    (int)(n - i), s + i);
    *offset = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    return FLOE_LIT_OK;
}

int floe_lit_date(const char *s, size_t n, floe_lit_form form, int32_t *days, char *why,
                  size_t whyn) {
    size_t i = 0;
    int64_t d;
    int rc = date_at(s, n, &i, form, &d, why, whyn);
    if (rc == FLOE_LIT_OK && i != n)
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", "expected a date YYYY-MM-DD");
    if (rc == FLOE_LIT_OK)
        *days = (int32_t)d;
    return rc;
}

int floe_lit_time(const char *s, size_t n, int64_t *nanos_of_day, char *why, size_t whyn) {
    size_t i = 0;
    int64_t t;
    int rc = time_at(s, n, &i, &t, why, whyn);
    if (rc == FLOE_LIT_OK && i != n)
        return fail(FLOE_LIT_SYNTAX, why, whyn, "expected a time HH:MM[:SS[.fffffffff]]");
    if (rc == FLOE_LIT_OK)
        *nanos_of_day = t;
    return rc;
}

/* The digit pair at s: 0..99, or -1 when either byte is not a digit. */
static inline int pair_at(const char *s) {
    unsigned a = (unsigned)(unsigned char)s[0] - '0', b = (unsigned)(unsigned char)s[1] - '0';
    return a < 10 && b < 10 ? (int)(a * 10 + b) : -1;
}

/* The form nearly every producer writes, YYYY-MM-DDTHH:MM:SS[.f...][Z], in one pass: true
 * with *out set when s is that form and in range (the values floe_lit_timestamp's general
 * path gives it in every form); false for anything else, which the general path reads or
 * refuses with its message. bench shapes iot: ~600 -> ~330 instructions a timestamp. */
static bool timestamp_usual(const char *s, size_t n, floe_lit_ts *out) {
    if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        s[13] != ':' || s[16] != ':')
        return false;
    int y0 = pair_at(s), y1 = pair_at(s + 2), m = pair_at(s + 5), d = pair_at(s + 8);
    int h = pair_at(s + 11), mi = pair_at(s + 14), sec = pair_at(s + 17);
    if ((y0 | y1 | m | d | h | mi | sec) < 0 || m < 1 || m > 12 || h > 23 || mi > 59 ||
        sec > 59)
        return false;
    int64_t y = y0 * 100 + y1;
    if (d < 1 || d > days_in_month(y, m))
        return false;
    size_t i = 19;
    int32_t nano = 0;
    if (i < n && s[i] == '.') {
        size_t f0 = ++i;
        while (i < n && is_digit(s[i]))
            i++;
        if (i == f0 || i - f0 > 9)
            return false;
        for (size_t k = f0; k < i; k++)
            nano = nano * 10 + (s[k] - '0');
        for (size_t k = i - f0; k < 9; k++)
            nano *= 10;
    }
    if (i == n)
        out->zone = false;
    else if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))
        out->zone = true;
    else
        return false;
    out->offset = 0;
    out->sec = floe_days_from_civil(y, (unsigned)m, (unsigned)d) * 86400 +
               (int64_t)h * 3600 + mi * 60 + sec;
    out->nano = nano;
    return true;
}

int floe_lit_timestamp(const char *s, size_t n, floe_lit_form form, floe_lit_ts *out,
                       char *why, size_t whyn) {
    if (timestamp_usual(s, n, out))
        return FLOE_LIT_OK;
    size_t i = 0;
    int64_t days, nod = 0;
    int rc = date_at(s, n, &i, form, &days, why, whyn);
    if (rc != FLOE_LIT_OK)
        return rc;
    if (i < n && (s[i] == 'T' || s[i] == 't' || s[i] == ' ')) {
        i++;
        if ((rc = time_at(s, n, &i, &nod, why, whyn)) != FLOE_LIT_OK)
            return rc;
    } else if (form != FLOE_LIT_USER) {
        return fail(FLOE_LIT_SYNTAX, why, whyn, "expected a timestamp YYYY-MM-DDTHH:MM:SS");
    }
    int32_t off = 0;
    if (i < n && (rc = zone_at(s, n, i, &off, why, whyn)) != FLOE_LIT_OK)
        return rc;
    out->zone = i < n;
    out->offset = off;
    /* |days| < 2^31, so this is far inside int64 */
    out->sec = days * 86400 + nod / 1000000000 - off;
    out->nano = (int32_t)(nod % 1000000000);
    return FLOE_LIT_OK;
}

int floe_lit_ts_units(const floe_lit_ts *t, int digits, int64_t *out, char *why, size_t whyn) {
    int64_t per = digits == 3 ? 1000 : digits == 6 ? 1000000 : 1000000000;
    int64_t frac = t->nano / (1000000000 / per), r;
    int64_t sec = t->sec;
    if (sec < 0 && frac > 0) { /* the same sum, keeping sec * per in range near INT64_MIN */
        sec += 1;
        frac -= per;
    }
    if (__builtin_mul_overflow(sec, per, &r) || __builtin_add_overflow(r, frac, &r))
        return fail(FLOE_LIT_RANGE, why, whyn, "%s",
                    digits == 9   ? "outside the nanosecond timestamp range (1677-09-21..2262-04-11)"
                    : digits == 6 ? "outside the microsecond timestamp range"
                                  : "outside the millisecond timestamp range");
    *out = r;
    return FLOE_LIT_OK;
}

/* ---- decimals ------------------------------------------------------------------------- */

/* 10^38: the bound of decimal(38, S)'s unscaled values */
static floe_i128 pow10_38(void) {
    return (floe_i128)10000000000000000000ull * 10000000000000000000ull;
}

static floe_i128 pow10_i128(int k) {
    floe_i128 p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

int floe_lit_decimal(const char *s, size_t n, floe_lit_dec *out, char *why, size_t whyn) {
    static const char expect[] = "expected a decimal number";
    const floe_i128 limit = pow10_38();
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    floe_i128 v = 0;
    int ndig = 0, nfrac = 0, zeros = 0; /* fraction zeros not yet multiplied in */
    bool point = false;
    for (; i < n; i++) {
        if (s[i] == '.' && !point) {
            point = true;
            continue;
        }
        if (!is_digit(s[i]))
            break;
        ndig++;
        if (point) {
            nfrac++;
            if (s[i] == '0') {
                zeros++;
                continue;
            }
        }
        /* the pending zeros and this digit; v * 10 + d < limit  <=>  v < limit / 10 */
        for (int z = 0; z <= zeros; z++) {
            if (v >= limit / 10)
                return fail(FLOE_LIT_RANGE, why, whyn, "more than 38 digits");
            v *= 10;
        }
        zeros = 0;
        v += s[i] - '0';
    }
    if (ndig == 0)
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    int32_t exp10 = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        int ne = 0;
        for (; i < n && is_digit(s[i]); i++, ne++)
            if (ne < 7)
                exp10 = exp10 * 10 + (s[i] - '0');
        if (ne == 0)
            return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
        if (ne > 6)
            return fail(FLOE_LIT_RANGE, why, whyn, "exponent of more than 6 digits");
        if (eneg)
            exp10 = -exp10;
    }
    if (i != n)
        return fail(FLOE_LIT_SYNTAX, why, whyn, "%s", expect);
    /* the zeros left at the end: in the value while it has room */
    int32_t dropped = zeros;
    for (; dropped > 0 && v < limit / 10; dropped--)
        v *= 10;
    out->unscaled = neg ? -v : v;
    out->written = nfrac - exp10;
    out->scale = out->written - dropped;
    return FLOE_LIT_OK;
}

bool floe_lit_rescale(floe_i128 *v, int32_t from, int32_t to, int precision) {
    floe_i128 limit = pow10_i128(precision < 1 || precision > 38 ? 38 : precision);
    floe_i128 x = *v;
    for (; from > to; from--) { /* exact only: trailing zeros */
        if (x % 10 != 0)
            return false;
        x /= 10;
    }
    for (; from < to; from++) {
        if (x >= limit / 10 || x <= -limit / 10) /* also keeps x * 10 inside 128 bits */
            return false;
        x *= 10;
    }
    if (x >= limit || x <= -limit)
        return false;
    *v = x;
    return true;
}

int floe_lit_decimal_at(const char *s, size_t n, int precision, int32_t scale, floe_i128 *out,
                        char *why, size_t whyn) {
    floe_lit_dec d;
    int rc = floe_lit_decimal(s, n, &d, why, whyn);
    if (rc != FLOE_LIT_OK)
        return rc;
    floe_i128 v = d.unscaled;
    /* an inexact rescale down fails on its first nonzero digit: tell that from overflow */
    floe_i128 probe = v;
    if (d.scale > scale && !floe_lit_rescale(&probe, d.scale, scale, 38))
        return fail(FLOE_LIT_RANGE, why, whyn, "more fraction digits than scale %d",
                    (int)scale);
    if (!floe_lit_rescale(&v, d.scale, scale, precision))
        return fail(FLOE_LIT_RANGE, why, whyn, "more than %d digits at scale %d", precision,
                    (int)scale);
    *out = v;
    return FLOE_LIT_OK;
}

/* ---- --where literals ------------------------------------------------------------------ */

/* An unquoted integer: [+-]digits, nothing else */
static bool where_integer(const char *s, size_t n, bool quoted, int64_t *v) {
    if (quoted || n == 0)
        return false;
    for (size_t i = s[0] == '-' || s[0] == '+'; i < n; i++)
        if (!is_digit(s[i]))
            return false;
    return floe_parse_i64(s, n, v);
}

int floe_lit_where_date(const char *s, size_t n, bool quoted, int32_t *days, char *why,
                        size_t whyn) {
    int64_t v;
    if (where_integer(s, n, quoted, &v)) {
        if (v < INT32_MIN || v > INT32_MAX)
            return fail(FLOE_LIT_RANGE, why, whyn, "day number out of range (32 bits)");
        *days = (int32_t)v;
        return FLOE_LIT_OK;
    }
    return floe_lit_date(s, n, FLOE_LIT_USER, days, why, whyn);
}

int floe_lit_where_time(const char *s, size_t n, bool quoted, int64_t *micros, char *why,
                        size_t whyn) {
    if (where_integer(s, n, quoted, micros))
        return FLOE_LIT_OK;
    int64_t nod;
    int rc = floe_lit_time(s, n, &nod, why, whyn);
    if (rc == FLOE_LIT_OK)
        *micros = nod / 1000;
    return rc;
}

int floe_lit_where_timestamp(const char *s, size_t n, bool quoted, bool zoned, int digits,
                             int64_t *out, char *why, size_t whyn) {
    if (where_integer(s, n, quoted, out))
        return FLOE_LIT_OK;
    floe_lit_ts t;
    int rc = floe_lit_timestamp(s, n, FLOE_LIT_USER, &t, why, whyn);
    if (rc != FLOE_LIT_OK)
        return rc;
    if (t.zone && !zoned)
        return fail(FLOE_LIT_SYNTAX, why, whyn,
                    "a timestamp without time zone takes no zone (Z or offset): write "
                    "the wall-clock time");
    return floe_lit_ts_units(&t, digits, out, why, whyn);
}
