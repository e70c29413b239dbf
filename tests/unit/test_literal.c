/*
 * test_literal.c - the literal module (src/common/literal.c): dates, times, timestamps
 * and decimals from text, in each form (strict, ISO, user), with their boundaries, and
 * round trips against floe_civil_from_days.
 */
#include <stdlib.h>
#include <string.h>

#include "common/literal.h"
#include "harness.h"

#define S FLOE_LIT_STRICT
#define I FLOE_LIT_ISO
#define U FLOE_LIT_USER
#define OK FLOE_LIT_OK
#define SYN FLOE_LIT_SYNTAX
#define RNG FLOE_LIT_RANGE
#define NONE 99999 /* no zone */

static int date_rc(const char *s, floe_lit_form form, int32_t *days) {
    char why[128] = "";
    int rc = floe_lit_date(s, strlen(s), form, days, why, sizeof why);
    if (rc != OK && !why[0])
        harness_fail(__FILE__, __LINE__, "%s: refused without a reason", s);
    return rc;
}

TEST(test_dates) {
    static const struct {
        const char *text;
        int rc[3]; /* strict, ISO, user */
        int32_t days;
    } cases[] = {
        {"1970-01-01", {OK, OK, OK}, 0},
        {"1969-12-31", {OK, OK, OK}, -1},
        {"2024-02-29", {OK, OK, OK}, 19782},
        {"2000-02-29", {OK, OK, OK}, 11016},
        {"9999-12-31", {OK, OK, OK}, 2932896},
        {"0000-01-01", {OK, OK, OK}, -719528},
        {"+10000-01-01", {SYN, OK, OK}, 2932897},
        {"-0001-12-31", {SYN, OK, OK}, -719529},
        {"5-01-01", {SYN, SYN, OK}, -717701},
        {"-5-01-01", {SYN, SYN, OK}, -721354},
        {"+5881580-07-11", {SYN, OK, OK}, INT32_MAX},
        {"-5877641-06-23", {SYN, OK, OK}, INT32_MIN},
        /* refused: out of range */
        {"+5881580-07-12", {SYN, RNG, RNG}, 0},
        {"-5877641-06-22", {SYN, RNG, RNG}, 0},
        {"1000000000-01-01", {SYN, RNG, RNG}, 0},
        {"2023-02-29", {RNG, RNG, RNG}, 0},
        {"1900-02-29", {RNG, RNG, RNG}, 0},
        {"2024-02-30", {RNG, RNG, RNG}, 0},
        {"2024-04-31", {RNG, RNG, RNG}, 0},
        {"2024-13-01", {RNG, RNG, RNG}, 0},
        {"2024-00-10", {RNG, RNG, RNG}, 0},
        {"2024-01-00", {RNG, RNG, RNG}, 0},
        /* refused: not a date */
        {"", {SYN, SYN, SYN}, 0},
        {"2024-1-01", {SYN, SYN, SYN}, 0},
        {"2024-01-1", {SYN, SYN, SYN}, 0},
        {"2024/01/01", {SYN, SYN, SYN}, 0},
        {"2024-01-01 ", {SYN, SYN, SYN}, 0},
        {" 2024-01-01", {SYN, SYN, SYN}, 0},
        {"2024-01-01T00:00", {SYN, SYN, SYN}, 0},
        {"+-2024-01-01", {SYN, SYN, SYN}, 0},
        {"20240101", {SYN, SYN, SYN}, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int f = 0; f < 3; f++) {
            int32_t d = 12345;
            int rc = date_rc(cases[k].text, (floe_lit_form)f, &d);
            if (rc != cases[k].rc[f])
                harness_fail(__FILE__, __LINE__, "date %s form %d: rc %d, want %d",
                             cases[k].text, f, rc, cases[k].rc[f]);
            else if (rc == OK && d != cases[k].days)
                harness_fail(__FILE__, __LINE__, "date %s form %d: %d days, want %d",
                             cases[k].text, f, (int)d, (int)cases[k].days);
        }
    }
    char why[128];
    int32_t d;
    CHECK(floe_lit_date("2024-13-01", 10, S, &d, why, sizeof why) == RNG &&
          !strcmp(why, "month 13 out of range"));
    CHECK(floe_lit_date("2024-02-30", 10, S, &d, why, sizeof why) == RNG &&
          !strcmp(why, "day 30 out of range for 2024-02"));
    /* bounded text: what follows n is not read */
    CHECK(floe_lit_date("1970-01-02junk", 10, S, &d, NULL, 0) == OK && d == 1);
}

/* Every day of 1900..2100 and a spread over the whole range: the text of
 * floe_civil_from_days parses back to the same day number. */
TEST(test_date_round_trip) {
    char text[32];
    int bad = 0;
    for (int64_t days = -25567; days <= 47482 && bad < 5; days++) {
        int64_t y;
        unsigned m, dd;
        floe_civil_from_days(days, &y, &m, &dd);
        snprintf(text, sizeof text, "%04lld-%02u-%02u", (long long)y, m, dd);
        int32_t back;
        if (date_rc(text, S, &back) != OK || back != days) {
            harness_fail(__FILE__, __LINE__, "%s: not day %lld", text, (long long)days);
            bad++;
        }
    }
    for (int64_t days = INT32_MIN; days <= INT32_MAX && bad < 10; days += 9876543) {
        int64_t y;
        unsigned m, dd;
        floe_civil_from_days(days, &y, &m, &dd);
        snprintf(text, sizeof text, "%s%04lld-%02u-%02u", y < 0 ? "-" : "+",
                 (long long)(y < 0 ? -y : y), m, dd);
        int32_t back;
        if (date_rc(text, I, &back) != OK || back != days || date_rc(text, U, &back) != OK ||
            back != days) {
            harness_fail(__FILE__, __LINE__, "%s: not day %lld", text, (long long)days);
            bad++;
        }
    }
}

TEST(test_times) {
    static const struct {
        const char *text;
        int rc;
        int64_t nod;
    } cases[] = {
        {"00:00", OK, 0},
        {"23:59", OK, 86340000000000LL},
        {"23:59:59", OK, 86399000000000LL},
        {"23:59:59.999999999", OK, 86399999999999LL},
        {"12:30:05.5", OK, 45005500000000LL},
        {"12:30:05.000001", OK, 45005000001000LL},
        {"24:00", RNG, 0},
        {"24:00:00", RNG, 0},
        {"23:60", RNG, 0},
        {"23:59:60", RNG, 0},
        {"23:59:61", RNG, 0},
        {"12:00:00.1234567890", SYN, 0},
        {"12", SYN, 0},
        {"12:0", SYN, 0},
        {"12:00:0", SYN, 0},
        {"12:00:00.", SYN, 0},
        {"12:00.5", SYN, 0},
        {"1:00", SYN, 0},
        {"12:00Z", SYN, 0},
        {"", SYN, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t t = -1;
        char why[128] = "";
        int rc = floe_lit_time(cases[k].text, strlen(cases[k].text), &t, why, sizeof why);
        if (rc != cases[k].rc)
            harness_fail(__FILE__, __LINE__, "time %s: rc %d, want %d", cases[k].text, rc,
                         cases[k].rc);
        else if (rc == OK && t != cases[k].nod)
            harness_fail(__FILE__, __LINE__, "time %s: %lld", cases[k].text, (long long)t);
        else if (rc != OK && !why[0])
            harness_fail(__FILE__, __LINE__, "time %s: no reason", cases[k].text);
    }
    char why[128];
    int64_t t;
    CHECK(floe_lit_time("24:00", 5, &t, why, sizeof why) == RNG &&
          !strcmp(why, "hour 24 out of range"));
    CHECK(floe_lit_time("10:00:60", 8, &t, why, sizeof why) == RNG &&
          !strcmp(why, "leap second 60 not representable"));
}

TEST(test_timestamps) {
    static const struct {
        const char *text;
        int rc[3];
        int64_t micros; /* UTC */
        int zone;       /* NONE, else the offset in minutes */
    } cases[] = {
        {"1970-01-01T00:00:00", {OK, OK, OK}, 0, NONE},
        {"1970-01-01t00:00", {OK, OK, OK}, 0, NONE},
        {"1970-01-01 00:00:01", {OK, OK, OK}, 1000000, NONE},
        {"1970-01-01T00:00:00Z", {OK, OK, OK}, 0, 0},
        {"1970-01-01T00:00:00z", {OK, OK, OK}, 0, 0},
        {"1970-01-01T00:00:00-00:00", {OK, OK, OK}, 0, 0},
        {"1970-01-01T02:00:00+02:00", {OK, OK, OK}, 0, 120},
        {"1970-01-01T02:00:00+0200", {OK, OK, OK}, 0, 120},
        {"1970-01-01T02:00:00+02", {OK, OK, OK}, 0, 120},
        {"1969-12-31T23:00:00-01:00", {OK, OK, OK}, 0, -60},
        {"1970-01-01T18:00:00+18:00", {OK, OK, OK}, 0, 1080},
        {"1970-01-01T00:00:00-18:00", {OK, OK, OK}, 64800000000LL, -1080},
        {"1969-12-31T23:59:59.999999Z", {OK, OK, OK}, -1, 0},
        {"1969-12-31T23:59:59.9999995Z", {OK, OK, OK}, -1, 0}, /* toward the past */
        {"2024-02-29T12:00:00.5+05:30", {OK, OK, OK}, 1709188200500000LL, 330},
        {"+10000-01-01T00:00:00Z", {SYN, OK, OK}, 253402300800000000LL, 0},
        /* a date alone, with or without a zone: users only */
        {"2024-01-01", {SYN, SYN, OK}, 1704067200000000LL, NONE},
        {"2024-01-01Z", {SYN, SYN, OK}, 1704067200000000LL, 0},
        {"2024-01-01+01:00", {SYN, SYN, OK}, 1704063600000000LL, 60},
        /* refused */
        {"1970-01-01T00:00:00+18:01", {RNG, RNG, RNG}, 0, 0},
        {"1970-01-01T00:00:00+19", {RNG, RNG, RNG}, 0, 0},
        {"1970-01-01T00:00:00+05:60", {RNG, RNG, RNG}, 0, 0},
        {"1970-01-01T24:00:00Z", {RNG, RNG, RNG}, 0, 0},
        {"2023-02-29T00:00:00Z", {RNG, RNG, RNG}, 0, 0},
        {"1970-01-01T00:00:00.0000000001Z", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00+05:", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00+5", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00+05:0", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00+050", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00ZZ", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00:00:00 Z", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01X00:00", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01  00:00", {SYN, SYN, SYN}, 0, 0},
        {"1970-01-01T00", {SYN, SYN, SYN}, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int f = 0; f < 3; f++) {
            floe_lit_ts t;
            char why[128] = "";
            const char *s = cases[k].text;
            int rc = floe_lit_timestamp(s, strlen(s), (floe_lit_form)f, &t, why, sizeof why);
            int64_t us = 0;
            if (rc == OK)
                rc = floe_lit_ts_units(&t, 6, &us, why, sizeof why);
            if (rc != cases[k].rc[f]) {
                harness_fail(__FILE__, __LINE__, "timestamp %s form %d: rc %d, want %d (%s)", s,
                             f, rc, cases[k].rc[f], why);
            } else if (rc == OK && (us != cases[k].micros ||
                                    (cases[k].zone == NONE ? t.zone
                                                       : !t.zone || t.offset != cases[k].zone * 60))) {
                harness_fail(__FILE__, __LINE__, "timestamp %s form %d: %lld us, zone %d/%d", s,
                             f, (long long)us, t.zone, (int)t.offset);
            } else if (rc != OK && !why[0]) {
                harness_fail(__FILE__, __LINE__, "timestamp %s: no reason", s);
            }
        }
    }
    /* the units' ranges: nanoseconds end in 1677 and 2262, microseconds do not */
    floe_lit_ts t;
    int64_t v;
    char why[128];
    REQUIRE(floe_lit_timestamp("2262-04-11T23:47:16.854775807Z", 30, S, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 9, &v, NULL, 0) == OK && v == INT64_MAX);
    REQUIRE(floe_lit_timestamp("2262-04-11T23:47:16.854775808Z", 30, S, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 9, &v, why, sizeof why) == RNG &&
          strstr(why, "nanosecond timestamp range"));
    CHECK(floe_lit_ts_units(&t, 6, &v, NULL, 0) == OK && v == 9223372036854775LL);
    REQUIRE(floe_lit_timestamp("1677-09-21T00:12:43.145224192Z", 30, S, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 9, &v, NULL, 0) == OK && v == INT64_MIN);
    REQUIRE(floe_lit_timestamp("1677-09-21T00:12:43.145224191Z", 30, S, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 9, &v, NULL, 0) == RNG);
    REQUIRE(floe_lit_timestamp("-290308-12-21T19:59:05.224192Z", 30, I, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 6, &v, NULL, 0) == OK && v == INT64_MIN);
    REQUIRE(floe_lit_timestamp("-290308-12-21T19:59:05.224191Z", 30, I, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 6, &v, NULL, 0) == RNG);
    REQUIRE(floe_lit_timestamp("2024-01-01T00:00:00.1239Z", 25, S, &t, NULL, 0) == OK);
    CHECK(floe_lit_ts_units(&t, 3, &v, NULL, 0) == OK && v == 1704067200123LL);
    CHECK(floe_lit_timestamp("1970-01-01T00:00:00+19:00", 25, S, &t, why, sizeof why) == RNG &&
          !strcmp(why, "zone offset +19:00 out of range (at most 18:00)"));
}

/* Timestamps rendered from day numbers and times of day parse back. */
TEST(test_timestamp_round_trip) {
    int bad = 0;
    for (int64_t us = -6000000000000000LL; us < 6000000000000000LL && bad < 5;
         us += 987654321987LL) {
        int64_t sec = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
        int64_t frac = us - sec * 1000000;
        int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
        int64_t sod = sec - days * 86400;
        int64_t y;
        unsigned m, d;
        floe_civil_from_days(days, &y, &m, &d);
        char text[64];
        snprintf(text, sizeof text, "%04lld-%02u-%02uT%02d:%02d:%02d.%06lldZ", (long long)y, m, d,
                 (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (long long)frac);
        floe_lit_ts t;
        int64_t back;
        if (floe_lit_timestamp(text, strlen(text), S, &t, NULL, 0) != OK ||
            floe_lit_ts_units(&t, 6, &back, NULL, 0) != OK || back != us) {
            harness_fail(__FILE__, __LINE__, "%s: not %lld", text, (long long)us);
            bad++;
        }
    }
}

/* The usual form (YYYY-MM-DDTHH:MM:SS[.f...][Z], read by a one-pass path of its own)
 * against the general path: the same text with a +00:00 zone, which only the general
 * path reads, must give the same instant or the same refusal; random fields around their
 * limits (month 0-13, day 0-32 and each month's length in leap and common years, hour 24,
 * minute and second 60, 0-10 fraction digits), separators T, t and space, no zone, Z, z. */
TEST(test_timestamp_usual_form) {
    static const char seps[] = "Tt Tx";
    static const char *const zones[] = {"", "Z", "z", "", "Z"};
    harness_rng_seed(0x7157a3u);
    int bad = 0;
    for (int r = 0; r < 60000 && bad < 5; r++) {
        int y = (int)harness_rndn(4) == 0 ? (int)harness_rndn(10000)
                                           : 1896 + (int)harness_rndn(210);
        int m = (int)harness_rndn(14), d = (int)harness_rndn(33), h = (int)harness_rndn(25);
        int mi = (int)harness_rndn(61), sec = (int)harness_rndn(61);
        if (harness_rndn(2)) { /* mostly valid fields, so that most texts are read */
            m = 1 + (int)harness_rndn(12);
            d = 1 + (int)harness_rndn(28 + (harness_rndn(4) == 0 ? 3 : 0));
            h = (int)harness_rndn(24);
            mi = (int)harness_rndn(60);
            sec = (int)harness_rndn(60);
        }
        char frac[16] = "";
        uint32_t nf = harness_rndn(3) ? harness_rndn(11) : 6;
        if (nf) {
            frac[0] = '.';
            for (uint32_t k = 1; k <= nf; k++)
                frac[k] = (char)('0' + harness_rndn(10));
            frac[nf + 1] = '\0';
            if (nf == 10 && harness_rndn(2))
                frac[0] = '\0'; /* no fraction */
        }
        char sep = seps[harness_rndn(sizeof seps - 1)];
        const char *zone = zones[harness_rndn(sizeof zones / sizeof *zones)];
        char a[80], b[80];
        snprintf(a, sizeof a, "%04d-%02d-%02d%c%02d:%02d:%02d%s%s", y, m, d, sep, h, mi, sec,
                 frac, zone);
        snprintf(b, sizeof b, "%04d-%02d-%02d%c%02d:%02d:%02d%s+00:00", y, m, d, sep, h, mi,
                 sec, frac);
        for (int f = 0; f < 3; f++) {
            floe_lit_ts ta, tb;
            char wa[128] = "", wb[128] = "";
            int ra = floe_lit_timestamp(a, strlen(a), (floe_lit_form)f, &ta, wa, sizeof wa);
            int rb = floe_lit_timestamp(b, strlen(b), (floe_lit_form)f, &tb, wb, sizeof wb);
            if (ra != rb || (ra == OK && (ta.sec != tb.sec || ta.nano != tb.nano ||
                                          ta.offset != 0 || ta.zone != (*zone != '\0'))) ||
                (ra != OK && strcmp(wa, wb) != 0)) {
                harness_fail(__FILE__, __LINE__, "%s form %d: rc %d (%s), %s: rc %d (%s)", a, f,
                             ra, wa, b, rb, wb);
                bad++;
            }
        }
    }
}

static bool dec_is(const char *s, int precision, int32_t scale, int64_t want) {
    floe_i128 v;
    return floe_lit_decimal_at(s, strlen(s), precision, scale, &v, NULL, 0) == OK &&
           v == (floe_i128)want;
}

static int dec_rc(const char *s, int precision, int32_t scale) {
    floe_i128 v;
    char why[128] = "";
    int rc = floe_lit_decimal_at(s, strlen(s), precision, scale, &v, why, sizeof why);
    if (rc != OK && !why[0])
        harness_fail(__FILE__, __LINE__, "decimal %s: no reason", s);
    return rc;
}

TEST(test_decimals) {
    CHECK(dec_is("12.34", 9, 2, 1234));
    CHECK(dec_is("-12.34", 9, 2, -1234));
    CHECK(dec_is("+12.3", 9, 2, 1230));
    CHECK(dec_is("12", 9, 2, 1200));
    CHECK(dec_is("12.", 9, 2, 1200));
    CHECK(dec_is(".5", 9, 2, 50));
    CHECK(dec_is("12.3400", 9, 2, 1234)); /* zeros past the scale */
    CHECK(dec_is("1.234e1", 9, 2, 1234));
    CHECK(dec_is("1234E-2", 9, 2, 1234));
    CHECK(dec_is("-0", 9, 2, 0));
    CHECK(dec_is("0000000000000000000000000000000000000000012.5", 9, 2, 1250));
    CHECK(dec_is("9999999.99", 9, 2, 999999999));
    CHECK(dec_rc("10000000.00", 9, 2) == RNG);   /* 10 digits in decimal(9, 2) */
    CHECK(dec_rc("-10000000", 9, 2) == RNG);
    CHECK(dec_rc("12.345", 9, 2) == RNG);        /* a digit the scale cannot keep */
    CHECK(dec_rc("1e-3", 9, 2) == RNG);
    CHECK(dec_rc("1e1234567", 38, 0) == RNG);    /* exponent of 7 digits */
    CHECK(dec_rc("", 9, 2) == SYN);
    CHECK(dec_rc(".", 9, 2) == SYN);
    CHECK(dec_rc("-", 9, 2) == SYN);
    CHECK(dec_rc("1.2.3", 9, 2) == SYN);
    CHECK(dec_rc("1e", 9, 2) == SYN);
    CHECK(dec_rc("1,5", 9, 2) == SYN);
    CHECK(dec_rc("0x10", 9, 2) == SYN);
    CHECK(dec_rc(" 1", 9, 2) == SYN);
    CHECK(dec_rc("NaN", 9, 2) == SYN);
    /* 38 digits: the largest decimal(38, 0), and one past it */
    const char *max38 = "99999999999999999999999999999999999999";
    floe_i128 v;
    REQUIRE(floe_lit_decimal_at(max38, 38, 38, 0, &v, NULL, 0) == OK);
    CHECK(v == (floe_i128)10000000000000000000ull * 10000000000000000000ull - 1);
    CHECK(floe_lit_decimal_at("-99999999999999999999999999999999999999", 39, 38, 0, &v, NULL,
                              0) == OK);
    CHECK(dec_rc("100000000000000000000000000000000000000", 38, 0) == RNG);
    CHECK(dec_rc("9999999999999999999999999999999999999.9", 38, 0) == RNG);
    CHECK(dec_rc("99999999999999999999999999999999999999", 38, 1) == RNG);
    CHECK(dec_rc("999999999999999999999999999999999999999999999999", 38, 0) == RNG);
    /* trailing fraction zeros past 38 digits are no digits of the value */
    CHECK(dec_is("1.000000000000000000000000000000000000000000000", 9, 2, 100));
    floe_lit_dec d;
    REQUIRE(floe_lit_decimal("1.50", 4, &d, NULL, 0) == OK);
    CHECK(d.unscaled == 150 && d.scale == 2 && d.written == 2);
    REQUIRE(floe_lit_decimal("15e-1", 5, &d, NULL, 0) == OK);
    CHECK(d.unscaled == 15 && d.scale == 1 && d.written == 1);
    REQUIRE(floe_lit_decimal("1.5e3", 5, &d, NULL, 0) == OK);
    CHECK(d.unscaled == 15 && d.scale == -2);
    /* rescale: exact only */
    floe_i128 x = 1230;
    CHECK(floe_lit_rescale(&x, 3, 2, 38) && x == 123);
    CHECK(!floe_lit_rescale(&x, 2, 1, 38) && x == 123);
    CHECK(floe_lit_rescale(&x, 2, 4, 5) && x == 12300);
    CHECK(!floe_lit_rescale(&x, 4, 5, 5) && x == 12300);
}

/* --where literals: quoted text, or unquoted text or a raw integer. */
TEST(test_where_literals) {
    int32_t d;
    int64_t v;
    CHECK(floe_lit_where_date("2024-01-02", 10, true, &d, NULL, 0) == OK && d == 19724);
    CHECK(floe_lit_where_date("2024-01-02", 10, false, &d, NULL, 0) == OK && d == 19724);
    CHECK(floe_lit_where_date("19724", 5, false, &d, NULL, 0) == OK && d == 19724);
    CHECK(floe_lit_where_date("-3", 2, false, &d, NULL, 0) == OK && d == -3);
    CHECK(floe_lit_where_date("19724", 5, true, &d, NULL, 0) == SYN);
    CHECK(floe_lit_where_date("2147483648", 10, false, &d, NULL, 0) == RNG);
    CHECK(floe_lit_where_time("10:00", 5, true, &v, NULL, 0) == OK && v == 36000000000LL);
    CHECK(floe_lit_where_time("36000000000", 11, false, &v, NULL, 0) == OK &&
          v == 36000000000LL);
    CHECK(floe_lit_where_time("36000000000", 11, true, &v, NULL, 0) == SYN);
    CHECK(floe_lit_where_timestamp("1970-01-01", 10, true, false, 9, &v, NULL, 0) == OK &&
          v == 0);
    CHECK(floe_lit_where_timestamp("1970-01-01T00:00:01+00:00", 25, false, true, 6, &v, NULL,
                                   0) == OK &&
          v == 1000000);
    CHECK(floe_lit_where_timestamp("1970-01-01 01:00:00+01", 22, true, true, 9, &v, NULL, 0) ==
              OK &&
          v == 0);
    /* a zone (Z too) on a timestamp without time zone is refused, with the reason */
    char why[160] = "";
    CHECK(floe_lit_where_timestamp("1970-01-01 01:00:00+01", 22, true, false, 9, &v, why,
                                   sizeof why) == SYN &&
          strstr(why, "without time zone"));
    CHECK(floe_lit_where_timestamp("1970-01-01T00:00:00Z", 20, true, false, 6, &v, NULL, 0) ==
          SYN);
    CHECK(floe_lit_where_timestamp("1970-01-01Z", 11, true, false, 6, &v, NULL, 0) == SYN);
    CHECK(floe_lit_where_timestamp("1970-01-01T00:00:00Z", 20, true, true, 6, &v, NULL, 0) ==
              OK &&
          v == 0);
    CHECK(floe_lit_where_timestamp("1234", 4, false, false, 6, &v, NULL, 0) == OK && v == 1234);
    CHECK(floe_lit_where_timestamp("1234", 4, true, true, 6, &v, NULL, 0) == SYN);
    CHECK(floe_lit_where_timestamp("99999999999999999999", 20, false, true, 6, &v, NULL, 0) ==
          SYN);
    CHECK(floe_lit_where_timestamp("2300-01-01", 10, true, false, 9, &v, NULL, 0) == RNG);
    CHECK(floe_lit_where_timestamp("2300-01-01", 10, true, true, 6, &v, NULL, 0) == OK);
}

int main(void) {
    RUN(test_dates);
    RUN(test_date_round_trip);
    RUN(test_times);
    RUN(test_timestamps);
    RUN(test_timestamp_round_trip);
    RUN(test_timestamp_usual_form);
    RUN(test_decimals);
    RUN(test_where_literals);
    return harness_finish();
}
