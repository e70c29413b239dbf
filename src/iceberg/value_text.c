/*
 * value_text.c - text renderings and parsers of single values (see value_text.h).
 *
 * The "java" renderings reproduce what Iceberg's reference implementation prints for
 * partition paths (Transform.toHumanString: java.time formatters, BigDecimal.toString,
 * Float/Double.toString), so a path floe writes looks like one Java would write. The
 * fixed renderings implement spec Appendix D "JSON single-value serialization" (its
 * parsers are common/literal.h's FLOE_LIT_ISO form). Calendar arithmetic is proleptic
 * Gregorian in UTC, valid for any int64 day number the callers can produce.
 */
#include "iceberg/value_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- calendar ------------------------------------------------------------------------ */

/* floe_days_from_civil / floe_civil_from_days live in src/common/calendar.c, the parsers
 * of dates, times, timestamps and decimals in src/common/literal.c. */

/* ---- integers and decimals ----------------------------------------------------------- */

size_t floe_vt_i128_digits(floe_i128 v, char *out) {
    /* work on the magnitude as unsigned so the most negative value is fine */
    unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v
                                : (unsigned __int128)v;
    char tmp[48];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Plain notation for scale > 0: "-12.34", "0.0012". */
static int decimal_plain_scaled(floe_buf *b, const char *digits, size_t nd, bool neg,
                                int32_t scale) {
    int rc = 0;
    if (neg && (rc = floe_buf_append_byte(b, '-')) < 0)
        return rc;
    if ((int64_t)nd > scale) {
        size_t ip = nd - (size_t)scale;
        if ((rc = floe_buf_append(b, digits, ip)) < 0 || (rc = floe_buf_append_byte(b, '.')) < 0)
            return rc;
        return floe_buf_append(b, digits + ip, (size_t)scale);
    }
    if ((rc = floe_buf_append(b, "0.", 2)) < 0)
        return rc;
    for (int64_t i = 0; i < (int64_t)scale - (int64_t)nd; i++)
        if ((rc = floe_buf_append_byte(b, '0')) < 0)
            return rc;
    return floe_buf_append(b, digits, nd);
}

int floe_vt_decimal_java(floe_buf *b, floe_i128 unscaled, int32_t scale) {
    char digits[48];
    size_t nd = floe_vt_i128_digits(unscaled, digits);
    int64_t adjusted = -(int64_t)scale + (int64_t)(nd - 1);
    if (scale > 0 && adjusted >= -6)
        return decimal_plain_scaled(b, digits, nd, unscaled < 0, scale);
    int rc = 0;
    if (unscaled < 0 && (rc = floe_buf_append_byte(b, '-')) < 0)
        return rc;
    if (scale == 0)
        return floe_buf_append(b, digits, nd);
    /* BigDecimal's scientific form: one digit, the rest after a point, the exponent */
    if ((rc = floe_buf_append_byte(b, (uint8_t)digits[0])) < 0)
        return rc;
    if (nd > 1 && ((rc = floe_buf_append_byte(b, '.')) < 0 ||
                   (rc = floe_buf_append(b, digits + 1, nd - 1)) < 0))
        return rc;
    if (adjusted != 0)
        rc = floe_buf_printf(b, "E%s%" PRId64, adjusted > 0 ? "+" : "", adjusted);
    return rc;
}

int floe_vt_decimal_plain(floe_buf *b, floe_i128 unscaled, int32_t scale) {
    char digits[48];
    size_t nd = floe_vt_i128_digits(unscaled, digits);
    if (scale > 0)
        return decimal_plain_scaled(b, digits, nd, unscaled < 0, scale);
    int rc = 0;
    if (unscaled < 0 && (rc = floe_buf_append_byte(b, '-')) < 0)
        return rc;
    if ((rc = floe_buf_append(b, digits, nd)) < 0)
        return rc;
    /* spec: negative scales use scientific notation whose exponent is the negated scale */
    if (scale < 0)
        rc = floe_buf_printf(b, "E+%" PRId64, -(int64_t)scale);
    return rc;
}

/* ---- dates and times ----------------------------------------------------------------- */

int floe_vt_day_human(floe_buf *b, int64_t days) {
    int64_t y;
    unsigned m, d;
    floe_civil_from_days(days, &y, &m, &d);
    return floe_buf_printf(b, "%04" PRId64 "-%02u-%02u", y, m, d);
}

/* java's ISO year: at least 4 digits, '-' before BCE years, '+' once past 9999 */
static int iso_year(floe_buf *b, int64_t y) {
    if (y > 9999)
        return floe_buf_printf(b, "+%" PRId64, y);
    if (y < 0)
        return floe_buf_printf(b, "-%04" PRIu64, (uint64_t)0 - (uint64_t)y);
    return floe_buf_printf(b, "%04" PRId64, y);
}

int floe_vt_date_iso(floe_buf *b, int64_t days) {
    int64_t y;
    unsigned m, d;
    floe_civil_from_days(days, &y, &m, &d);
    int rc = iso_year(b, y);
    return rc < 0 ? rc : floe_buf_printf(b, "-%02u-%02u", m, d);
}

int floe_vt_time_java(floe_buf *b, int64_t nod) {
    int64_t secs = nod / 1000000000, nano = nod % 1000000000;
    int rc = floe_buf_printf(b, "%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60));
    if (rc < 0 || (secs % 60 == 0 && nano == 0))
        return rc;
    if ((rc = floe_buf_printf(b, ":%02d", (int)(secs % 60))) < 0 || nano == 0)
        return rc;
    /* LocalTime.toString prints the fraction in groups of three digits */
    if (nano % 1000000 == 0)
        return floe_buf_printf(b, ".%03d", (int)(nano / 1000000));
    if (nano % 1000 == 0)
        return floe_buf_printf(b, ".%06d", (int)(nano / 1000));
    return floe_buf_printf(b, ".%09d", (int)nano);
}

int floe_vt_time_iso_min(floe_buf *b, int64_t nod) {
    int64_t secs = nod / 1000000000, nano = nod % 1000000000;
    int rc = floe_buf_printf(b, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                             (int)(secs % 60));
    if (rc < 0 || nano == 0)
        return rc;
    char frac[16];
    snprintf(frac, sizeof frac, "%09d", (int)nano);
    size_t n = 9;
    while (n > 1 && frac[n - 1] == '0')
        n--;
    if ((rc = floe_buf_append_byte(b, '.')) < 0)
        return rc;
    return floe_buf_append(b, frac, n);
}

int floe_vt_time_iso_fixed(floe_buf *b, int64_t nod, int digits) {
    int64_t secs = nod / 1000000000, nano = nod % 1000000000;
    int rc = floe_buf_printf(b, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                             (int)(secs % 60));
    if (rc < 0)
        return rc;
    if (digits == 6)
        return floe_buf_printf(b, ".%06d", (int)(nano / 1000));
    return floe_buf_printf(b, ".%09d", (int)nano);
}

int floe_vt_timestamp(floe_buf *b, int64_t value, int64_t units_per_sec, int fixed_digits,
                      bool utc) {
    int64_t secs = floe_floordiv64(value, units_per_sec);
    int64_t frac = floe_floormod64(value, units_per_sec);
    int64_t nano = frac * (1000000000 / units_per_sec);
    int64_t days = floe_floordiv64(secs, 86400);
    int64_t nod = floe_floormod64(secs, 86400) * 1000000000 + nano;
    int rc = floe_vt_date_iso(b, days);
    if (rc < 0 || (rc = floe_buf_append_byte(b, 'T')) < 0)
        return rc;
    rc = fixed_digits ? floe_vt_time_iso_fixed(b, nod, fixed_digits)
                      : floe_vt_time_iso_min(b, nod);
    if (rc < 0)
        return rc;
    return utc ? floe_buf_append(b, "+00:00", 6) : 0;
}

/* ---- floating point ------------------------------------------------------------------ */

int floe_vt_float_java(floe_buf *b, double v, bool is_float) {
    if (isnan(v))
        return floe_buf_append(b, "NaN", 3);
    if (isinf(v))
        return v < 0 ? floe_buf_append(b, "-Infinity", 9) : floe_buf_append(b, "Infinity", 8);
    if (v == 0)
        return signbit(v) ? floe_buf_append(b, "-0.0", 4) : floe_buf_append(b, "0.0", 3);
    /* Shortest correctly rounded digits that read back to the same value. Java starts at
     * two significant digits (4.9E-324, not 5E-324), so the search starts there too. */
    char sci[64];
    int maxp = is_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(sci, sizeof sci, "%.*e", p, v);
        if (is_float ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v)
            break;
    }
    /* sci = "-d.ddde[+-]xx" */
    const char *s = sci;
    bool neg = *s == '-';
    if (neg)
        s++;
    char digits[32];
    size_t nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[nd++] = *s;
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int rc = 0;
    if (neg && (rc = floe_buf_append_byte(b, '-')) < 0)
        return rc;
    double mag = fabs(v);
    if (mag >= 1e-3 && mag < 1e7) {
        if (exp10 >= 0) {
            size_t ip = (size_t)exp10 + 1;
            for (size_t i = 0; i < ip; i++)
                if ((rc = floe_buf_append_byte(b, (uint8_t)(i < nd ? digits[i] : '0'))) < 0)
                    return rc;
            if ((rc = floe_buf_append_byte(b, '.')) < 0)
                return rc;
            return nd > ip ? floe_buf_append(b, digits + ip, nd - ip)
                           : floe_buf_append_byte(b, '0');
        }
        if ((rc = floe_buf_append(b, "0.", 2)) < 0)
            return rc;
        for (int i = 0; i < -exp10 - 1; i++)
            if ((rc = floe_buf_append_byte(b, '0')) < 0)
                return rc;
        return floe_buf_append(b, digits, nd);
    }
    if ((rc = floe_buf_append_byte(b, (uint8_t)digits[0])) < 0 ||
        (rc = floe_buf_append_byte(b, '.')) < 0)
        return rc;
    rc = nd > 1 ? floe_buf_append(b, digits + 1, nd - 1) : floe_buf_append_byte(b, '0');
    return rc < 0 ? rc : floe_buf_printf(b, "E%d", exp10);
}

int floe_vt_float_json(floe_buf *b, double v, bool is_float) {
    /* Java's rendering is valid JSON for finite values ("1.0E10" included). */
    if (!isfinite(v))
        return FLOE_EINVALID;
    return floe_vt_float_java(b, v, is_float);
}

/* ---- bytes ----------------------------------------------------------------------------- */

int floe_vt_hex(floe_buf *b, const uint8_t *p, size_t n) {
    static const char hx[] = "0123456789abcdef";
    int rc = floe_buf_reserve(b, n * 2);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char q[2] = {hx[p[i] >> 4], hx[p[i] & 15]};
        rc = floe_buf_append(b, q, 2);
    }
    return rc;
}

int floe_vt_uuid(floe_buf *b, const uint8_t u[16]) {
    static const char hx[] = "0123456789abcdef";
    char s[36];
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s[k++] = '-';
        s[k++] = hx[u[i] >> 4];
        s[k++] = hx[u[i] & 15];
    }
    return floe_buf_append(b, s, sizeof s);
}

/* ---- parsers --------------------------------------------------------------------------- */

bool floe_vt_parse_uuid(const char *s, size_t n, uint8_t out[16]) {
    if (n != 36)
        return false;
    uint8_t u[16];
    size_t k = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i++] != '-')
                return false;
            continue;
        }
        int hi = floe_hex_value(s[i]), lo = floe_hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        u[k++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    memcpy(out, u, 16);
    return true;
}
