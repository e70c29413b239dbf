/*
 * fuzz_literal.c - libFuzzer target for the literal module (src/common/literal.c): the
 * input is the text of a date, a time, a timestamp, a decimal and a --where literal.
 *
 * Checked besides the absence of crashes and sanitizer reports:
 *   - the forms nest: what FLOE_LIT_STRICT takes FLOE_LIT_ISO takes, and what that takes
 *     FLOE_LIT_USER takes, each with the same value;
 *   - a refusal always says why;
 *   - values are in range: days fit int32, times lie in one day, a timestamp's nanos in
 *     one second and its offset within +-18:00, a decimal below 10^38;
 *   - round trips: a date, time, timestamp or decimal written back from its value (dates
 *     through floe_civil_from_days) parses to the same value;
 *   - the units of one timestamp agree (milliseconds are microseconds / 1000, floored).
 *
 * Seeds: tests/fuzz/seeds/fuzz_literal/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/literal.h"
#include "iceberg/value_text.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The ISO text of a day number: what FLOE_LIT_ISO reads back. */
static size_t date_text(int64_t days, char *out, size_t cap) {
    int64_t y;
    unsigned m, d;
    floe_civil_from_days(days, &y, &m, &d);
    const char *sign = y < 0 ? "-" : y > 9999 ? "+" : "";
    return (size_t)snprintf(out, cap, "%s%04lld-%02u-%02u", sign, (long long)(y < 0 ? -y : y),
                            m, d);
}

static void dates(const char *s, size_t n) {
    int32_t v[3];
    int rc[3];
    char why[128];
    for (int f = 0; f < 3; f++) {
        why[0] = 0;
        rc[f] = floe_lit_date(s, n, (floe_lit_form)f, &v[f], why, sizeof why);
        check(rc[f] == FLOE_LIT_OK || why[0]);
    }
    for (int f = 0; f < 2; f++)
        if (rc[f] == FLOE_LIT_OK)
            check(rc[f + 1] == FLOE_LIT_OK && v[f + 1] == v[f]);
    if (rc[2] == FLOE_LIT_OK) {
        char text[40];
        size_t k = date_text(v[2], text, sizeof text);
        int32_t back;
        check(floe_lit_date(text, k, FLOE_LIT_ISO, &back, NULL, 0) == FLOE_LIT_OK &&
              back == v[2]);
    }
}

static void times(const char *s, size_t n) {
    int64_t nod;
    char why[128] = "";
    if (floe_lit_time(s, n, &nod, why, sizeof why) != FLOE_LIT_OK) {
        check(why[0]);
        return;
    }
    check(nod >= 0 && nod < 86400000000000LL);
    char text[40];
    int64_t sec = nod / 1000000000;
    int k = snprintf(text, sizeof text, "%02d:%02d:%02d.%09lld", (int)(sec / 3600),
                     (int)(sec / 60 % 60), (int)(sec % 60), (long long)(nod % 1000000000));
    int64_t back;
    check(floe_lit_time(text, (size_t)k, &back, NULL, 0) == FLOE_LIT_OK && back == nod);
}

static void timestamps(const char *s, size_t n) {
    floe_lit_ts t[3];
    int rc[3];
    char why[128];
    for (int f = 0; f < 3; f++) {
        why[0] = 0;
        rc[f] = floe_lit_timestamp(s, n, (floe_lit_form)f, &t[f], why, sizeof why);
        check(rc[f] == FLOE_LIT_OK || why[0]);
    }
    for (int f = 0; f < 2; f++)
        if (rc[f] == FLOE_LIT_OK)
            check(rc[f + 1] == FLOE_LIT_OK && t[f + 1].sec == t[f].sec &&
                  t[f + 1].nano == t[f].nano && t[f + 1].zone == t[f].zone &&
                  t[f + 1].offset == t[f].offset);
    if (rc[2] != FLOE_LIT_OK)
        return;
    const floe_lit_ts *u = &t[2];
    check(u->nano >= 0 && u->nano < 1000000000);
    check(u->offset >= -64800 && u->offset <= 64800 && (u->zone || u->offset == 0));
    int64_t ms, us, ns;
    bool has_ms = floe_lit_ts_units(u, 3, &ms, why, sizeof why) == FLOE_LIT_OK;
    bool has_us = floe_lit_ts_units(u, 6, &us, why, sizeof why) == FLOE_LIT_OK;
    bool has_ns = floe_lit_ts_units(u, 9, &ns, why, sizeof why) == FLOE_LIT_OK;
    check(has_ms || !has_us); /* a coarser unit reaches farther */
    check(has_us || !has_ns);
    if (has_us && has_ms)
        check(ms == floordiv(us, 1000));
    if (has_ns && has_us)
        check(us == floordiv(ns, 1000));
    /* written back in UTC with all nine digits (when the UTC date is a date: an offset
     * may carry the last or first day past the range) */
    int64_t days = floordiv(u->sec, 86400), sod = u->sec - days * 86400;
    if (days < INT32_MIN || days > INT32_MAX)
        return;
    char text[64];
    size_t k = date_text(days, text, sizeof text);
    k += (size_t)snprintf(text + k, sizeof text - k, "T%02d:%02d:%02d.%09dZ", (int)(sod / 3600),
                          (int)(sod / 60 % 60), (int)(sod % 60), (int)u->nano);
    floe_lit_ts back;
    check(floe_lit_timestamp(text, k, FLOE_LIT_ISO, &back, NULL, 0) == FLOE_LIT_OK &&
          back.sec == u->sec && back.nano == u->nano && back.zone && back.offset == 0);
}

static void decimals(const char *s, size_t n) {
    floe_lit_dec d;
    char why[128] = "";
    if (floe_lit_decimal(s, n, &d, why, sizeof why) != FLOE_LIT_OK) {
        check(why[0]);
        return;
    }
    const floe_i128 limit = (floe_i128)10000000000000000000ull * 10000000000000000000ull;
    check(d.unscaled < limit && d.unscaled > -limit && d.scale <= d.written);
    /* unscaled digits and the exponent back */
    char text[64];
    size_t k = 0;
    if (d.unscaled < 0)
        text[k++] = '-';
    k += floe_vt_i128_digits(d.unscaled, text + k);
    k += (size_t)snprintf(text + k, sizeof text - k, "e%d", (int)-d.scale);
    floe_lit_dec back;
    if (d.scale >= -999999 && d.scale <= 999999) {
        check(floe_lit_decimal(text, k, &back, NULL, 0) == FLOE_LIT_OK);
        check(back.unscaled == d.unscaled && back.scale == d.scale);
    }
    /* at a scale it has room for, the value is exact */
    for (int32_t sc = 0; sc <= 38; sc += 19) {
        floe_i128 v;
        if (floe_lit_decimal_at(s, n, 38, sc, &v, why, sizeof why) == FLOE_LIT_OK) {
            floe_i128 x = d.unscaled;
            check(floe_lit_rescale(&x, d.scale, sc, 38) && x == v);
        } else {
            check(why[0]);
        }
    }
}

static void where(const char *s, size_t n) {
    int32_t d;
    int64_t v;
    for (int q = 0; q < 2; q++) {
        (void)floe_lit_where_date(s, n, q, &d, NULL, 0);
        (void)floe_lit_where_time(s, n, q, &v, NULL, 0);
        (void)floe_lit_where_timestamp(s, n, q, true, 6, &v, NULL, 0);
        (void)floe_lit_where_timestamp(s, n, q, false, 9, &v, NULL, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 256)
        return 0;
    /* an exact-size copy: reading past the text is an ASan report */
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    dates(s, size);
    times(s, size);
    timestamps(s, size);
    decimals(s, size);
    where(s, size);
    free(s);
    return 0;
}
