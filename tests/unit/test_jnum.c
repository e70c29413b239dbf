/*
 * test_jnum.c - JSON number tokens (src/json/scalar.c): floe_jnum_scan against a reference
 * scanner written here from the RFC 8259 grammar, on every field it fills; and
 * floe_jnum_to_double (its inline exact path, floe_jnum_to_double_fast, then the others)
 * and floe_jnum_to_float against strtod / strtof in the C locale, bit for bit.
 *
 * test_to_double_long: the digits real producers print (15-17 significant digits from
 * random bit patterns, subnormals, near and exact midpoints), which the Eisel-Lemire
 * path converts.
 *
 * Inputs: hand-picked edge cases, then random tokens (digit runs of 0-30 around the
 * 8-byte word, signs, fractions, exponents, junk bytes, bytes with the high bit set)
 * placed so that the token ends at every distance from the end of the readable bytes
 * (under ASan a read past the end is an error).
 * JNUM_ROUNDS (environment) sets the random rounds (default 400,000 scans and as many
 * conversions).
 */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json/json_internal.h"

/* the reference: one byte at a time, as the grammar reads */
typedef struct ref_num {
    size_t len, bad;
    bool neg;
    size_t n_int, n_frac;
    bool has_frac;
    int64_t exp;
    uint64_t mant;
} ref_num;

static bool dig(uint8_t c) { return c >= '0' && c <= '9'; }

static size_t ref_scan(const uint8_t *p, const uint8_t *end, ref_num *r) {
    const uint8_t *s = p;
    memset(r, 0, sizeof *r);
    if (p < end && *p == '-') {
        r->neg = true;
        p++;
    }
    if (p >= end || !dig(*p)) {
        r->bad = (size_t)(p - s);
        return 0;
    }
    const uint8_t *ip = p;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && dig(*p))
            r->mant = r->mant * 10 + (uint64_t)(*p++ - '0');
    }
    r->n_int = (size_t)(p - ip);
    if (p < end && *p == '.') {
        p++;
        r->has_frac = true;
        const uint8_t *fp = p;
        while (p < end && dig(*p))
            r->mant = r->mant * 10 + (uint64_t)(*p++ - '0');
        r->n_frac = (size_t)(p - fp);
        if (!r->n_frac) {
            r->bad = (size_t)(p - s);
            return 0;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p >= end || !dig(*p)) {
            r->bad = (size_t)(p - s);
            return 0;
        }
        int64_t e = 0;
        while (p < end && dig(*p)) {
            if (e < 1000000000)
                e = e * 10 + (*p - '0');
            p++;
        }
        r->exp = eneg ? -e : e;
    }
    r->len = (size_t)(p - s);
    return r->len;
}

static long rounds(void) {
    const char *e = getenv("JNUM_ROUNDS");
    long n = e ? strtol(e, NULL, 10) : 0;
    return n > 0 ? n : 400000;
}

/* Scan tok[0..n) placed so that exactly `after` readable bytes follow it (a malloc'd
 * block of n + after bytes, so ASan sees any read past it), and compare. */
static int scan_one(const uint8_t *tok, size_t n, size_t after, uint8_t fill) {
    uint8_t *buf = malloc(n + after + 1);
    if (!buf)
        return -1;
    memcpy(buf, tok, n);
    memset(buf + n, fill, after);
    const uint8_t *end = buf + n + after;
    floe_jnum j;
    size_t bad = 12345;
    ref_num r;
    size_t got = floe_jnum_scan(buf, end, &j, &bad);
    size_t want = ref_scan(buf, end, &r);
    int fails = 0;
#define SAME(cond)                                                                      \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            if (fails++ == 0)                                                           \
                harness_fail(__FILE__, __LINE__, "'%.*s' + %zu x 0x%02x: %s", (int)n,   \
                             (const char *)tok, after, fill, #cond);                    \
        }                                                                               \
    } while (0)
    SAME(got == want);
    if (!want) {
        SAME(bad == r.bad);
    } else {
        SAME(j.len == r.len && j.start == buf);
        SAME(j.neg == r.neg);
        SAME(j.n_int == r.n_int && j.int_digits == buf + (r.neg ? 1 : 0));
        SAME(j.n_frac == r.n_frac);
        SAME((j.frac_digits != NULL) == r.has_frac);
        SAME(!r.has_frac || j.frac_digits == buf + (r.neg ? 1 : 0) + r.n_int + 1);
        SAME(j.exp == r.exp);
        SAME(j.mant_ok == (r.n_int + r.n_frac <= 19));
        SAME(!j.mant_ok || j.mant == r.mant);
        bool simple = !r.has_frac && r.len == (r.neg ? 1 : 0) + r.n_int && r.n_int <= 18;
        SAME(j.simple == simple);
        SAME(!simple || j.simple_value == r.mant);
    }
#undef SAME
    free(buf);
    return fails;
}

TEST(test_scan_edges) {
    static const char *cases[] = {
        "0", "-0", "7", "-7", "00", "01", "-01", "0.5", "0.", ".5", "-", "", "1e", "1e+",
        "1e5", "1E-5", "1.5e+10", "12345678", "123456789", "1234567890123456789",
        "12345678901234567890", "99999999999999999999999", "0.00000000", "1.23456789",
        "1.2345678901234567", "-73.015541", "902162346", "9.88436", "1042.96", "1.0e",
        "1.e5", "12345678.87654321", "123456781234567812345678", "1-2", "1..2", "1.2.3",
        "9/", "9:", "0/", "-/", "1e9999999999999", "1e-0000000001", "18446744073709551615",
        "18446744073709551616",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t after = 0; after <= 17; after++) {
            scan_one((const uint8_t *)cases[i], strlen(cases[i]), after, ',');
            scan_one((const uint8_t *)cases[i], strlen(cases[i]), after, '7');
            scan_one((const uint8_t *)cases[i], strlen(cases[i]), after, 0xB9);
        }
    /* every byte value right after a digit run of each length: exactly '0'..'9' are
     * digits (0x2F, 0x3A, 0xB0..0xB9, 0xF0.. are not) */
    for (unsigned run = 1; run <= 17; run++)
        for (unsigned c = 0; c < 256; c++) {
            uint8_t tok[40];
            for (unsigned k = 0; k < run; k++)
                tok[k] = (uint8_t)('1' + k % 9);
            tok[run] = (uint8_t)c;
            tok[run + 1] = '5';
            scan_one(tok, run + 2, 0, ' ');
            scan_one(tok, run + 2, 9, '3');
            tok[0] = '-';
            scan_one(tok, run + 2, 9, '3');
            tok[0] = '4';
            if (run >= 2) {
                tok[1] = '.';
                scan_one(tok, run + 2, 9, '3');
            }
        }
}

/* A random token: mostly numbers of the shapes events hold, some of them broken. */
static size_t rand_token(uint8_t *t) {
    static const char junk[] = "0123456789.-+eE,}] \"a/:\xB0\xB9\xF0\x7F";
    size_t n = 0;
    if (harness_rndn(4) == 0) {
        size_t len = harness_rndn(30);
        for (size_t i = 0; i < len; i++)
            t[n++] = (uint8_t)junk[harness_rndn(sizeof junk - 1)];
        return n;
    }
    if (harness_rndn(3) == 0)
        t[n++] = '-';
    size_t ni = harness_rndn(8) == 0 ? harness_rndn(26) : 1 + harness_rndn(10);
    for (size_t i = 0; i < ni; i++)
        t[n++] = (uint8_t)('0' + harness_rndn(10));
    if (harness_rndn(3)) {
        t[n++] = '.';
        size_t nf = harness_rndn(8) == 0 ? harness_rndn(26) : harness_rndn(10);
        for (size_t i = 0; i < nf; i++)
            t[n++] = (uint8_t)('0' + harness_rndn(10));
    }
    if (harness_rndn(6) == 0) {
        t[n++] = harness_rndn(2) ? 'e' : 'E';
        if (harness_rndn(2))
            t[n++] = harness_rndn(2) ? '+' : '-';
        size_t ne = harness_rndn(5);
        for (size_t i = 0; i < ne; i++)
            t[n++] = (uint8_t)('0' + harness_rndn(10));
    }
    if (harness_rndn(10) == 0)
        t[harness_rndn((unsigned)n + 1) % (n ? n : 1)] =
            (uint8_t)junk[harness_rndn(sizeof junk - 1)];
    return n;
}

TEST(test_scan_random) {
    long r = rounds();
    static const uint8_t fills[] = {',', '}', ' ', '5', '.', 'e', 0xB5};
    int fails = 0;
    for (long i = 0; i < r && fails < 5; i++) {
        uint8_t tok[128];
        size_t n = rand_token(tok);
        fails += scan_one(tok, n, harness_rndn(20), fills[harness_rndn(sizeof fills)]) != 0;
    }
    CHECK(fails == 0);
}

/* floe_jnum_to_double and _to_float against strtod_l / strtof_l, bit for bit. */
static int conv_one(const char *text, locale_t c) {
    size_t n = strlen(text);
    floe_jnum j;
    if (floe_jnum_scan((const uint8_t *)text, (const uint8_t *)text + n, &j, NULL) != n) {
        harness_fail(__FILE__, __LINE__, "'%s' does not scan whole", text);
        return 1;
    }
    double want = strtod_l(text, NULL, c), got = 0;
    int rc = floe_jnum_to_double(&j, c, &got);
    int fails = 0;
    if (isinf(want)) {
        if (rc != FLOE_SC_RANGE) {
            harness_fail(__FILE__, __LINE__, "'%s': overflow not refused", text);
            fails++;
        }
    } else if (rc != FLOE_SC_OK || memcmp(&got, &want, sizeof got) != 0) {
        harness_fail(__FILE__, __LINE__, "'%s': %.17g, strtod %.17g", text, got, want);
        fails++;
    }
    float wantf = strtof_l(text, NULL, c), gotf = 0;
    rc = floe_jnum_to_float(&j, c, &gotf);
    if (isinf(wantf)) {
        if (rc != FLOE_SC_RANGE) {
            harness_fail(__FILE__, __LINE__, "'%s': float overflow not refused", text);
            fails++;
        }
    } else if (rc != FLOE_SC_OK || memcmp(&gotf, &wantf, sizeof gotf) != 0) {
        harness_fail(__FILE__, __LINE__, "'%s': %.9g, strtof %.9g", text, (double)gotf,
                     (double)wantf);
        fails++;
    }
    return fails;
}

TEST(test_to_double) {
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    REQUIRE(c != (locale_t)0);
    static const char *cases[] = {
        "0", "-0", "0.0", "-0.0", "1", "0.1", "0.2", "0.3", "33.052", "-73.015541",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "900719925474099.3",
        "1e22", "1e23", "1e-22", "1e-23", "123456789012345678e-22", "4.9e-324", "5e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
        "1.7976931348623159e308", "1e309", "2.2250738585072011e-308",
        "2.2250738585072014e-308", "0.1e1", "1000000000000000000000.5", "3.4028235e38",
        "3.4028236e38", "1.17549435e-38", "1.4e-45", "7.006492321624085e-46",
        "16777217", "16777216.5", "9.999999999999999e22", "0.000000000000000000001",
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fails += conv_one(cases[i], c);
    long r = rounds();
    for (long i = 0; i < r && fails < 5; i++) {
        char t[96];
        size_t n = 0;
        if (harness_rndn(3) == 0)
            t[n++] = '-';
        size_t ni = harness_rndn(6) == 0 ? harness_rndn(24) : harness_rndn(6);
        t[n++] = (char)('1' + harness_rndn(9));
        for (size_t k = 0; k < ni; k++)
            t[n++] = (char)('0' + harness_rndn(10));
        if (harness_rndn(4)) {
            t[n++] = '.';
            size_t nf = 1 + (harness_rndn(6) == 0 ? harness_rndn(24) : harness_rndn(8));
            for (size_t k = 0; k < nf; k++)
                t[n++] = (char)('0' + harness_rndn(10));
        }
        if (harness_rndn(4) == 0)
            n += (size_t)snprintf(t + n, sizeof t - n, "e%d", (int)harness_rndn(700) - 350);
        t[n] = '\0';
        fails += conv_one(t, c);
    }
    CHECK(fails == 0);
    freelocale(c);
}

/* The digits of real producers: doubles printed with 15-17 significant digits (what
 * JavaScript's JSON.stringify and most others print: the shortest that reads back,
 * mostly 16-17), in exponent and plain form, normal and subnormal, from random bit
 * patterns; values a hair either side of the midpoint between two neighbouring doubles;
 * exact midpoints (ties to even) as integers and as decimals with a few fraction digits.
 * The Eisel-Lemire path of floe_jnum_to_double takes all that have at most 19 significant
 * digits: each against strtod, bit for bit. */
TEST(test_to_double_long) {
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    REQUIRE(c != (locale_t)0);
    static const char *cases[] = {
        "0.1", "0.30000000000000004", "4.9406564584124654e-324", "9.8813129168249309e-324",
        "2.2250738585072009e-308", "2.2250738585072014e-308", "2.225073858507201e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "9007199254740993", "9007199254740995", "18014398509481990", "18014398509481986",
        "1152921504606846977", "1152921504606846975", "0.0046062666305103726",
        "-73.015541000000004", "1e-343", "9999999999999999999e-343", "1e308", "1e-342",
        "7.2057594037927933e16", "4.4501477170144023e-308", "3.0517578125e-05",
        "8.98846567431158e307", "1.0000000000000002", "0.9999999999999999",
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fails += conv_one(cases[i], c);
    long r = rounds();
    char t[128];
    for (long i = 0; i < r && fails < 5; i++) {
        uint64_t bits = harness_rnd();
        if (harness_rndn(8) == 0)
            bits &= 0x800FFFFFFFFFFFFFull; /* subnormal */
        else if (harness_rndn(2))
            bits = (bits & 0x800FFFFFFFFFFFFFull) | (uint64_t)(1023 - 40 + harness_rndn(80)) << 52;
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d))
            continue;
        int digits = 15 + (int)harness_rndn(3);
        snprintf(t, sizeof t, "%.*g", digits, d);
        fails += conv_one(t, c);
        if (fabs(d) >= 1e-7 && fabs(d) < 1e21) { /* plain form, as JavaScript prints these */
            int ex = (int)floor(log10(fabs(d)));
            snprintf(t, sizeof t, "%.*f", digits - 1 - ex > 0 ? digits - 1 - ex : 0, d);
            fails += conv_one(t, c);
        }
        /* the midpoint with its successor, exact in long double (64-bit mantissa), printed
         * with 17-19 significant digits: just below, at or above it */
        double nx = nextafter(d, INFINITY);
        if (isfinite(nx) && d != 0) {
            long double mid = ((long double)d + (long double)nx) / 2;
            snprintf(t, sizeof t, "%.*Le", 16 + (int)harness_rndn(3), mid);
            fails += conv_one(t, c);
        }
    }
    /* exact midpoints: an odd 54-bit integer lies halfway between two doubles (spaced 2
     * apart), so does it times 2^k, and divided by 2^j it is a decimal of j digits */
    for (long i = 0; i < r / 8 && fails < 5; i++) {
        uint64_t n = ((1ull << 53) | (harness_rnd() & ((1ull << 53) - 1))) | 1;
        unsigned k = harness_rndn(10);
        if (harness_rndn(2) && (n << k) < 10000000000000000000ull) {
            snprintf(t, sizeof t, "%llu", (unsigned long long)(n << k));
        } else {
            unsigned j = 1 + harness_rndn(3);
            /* n / 2^j = n * 5^j / 10^j */
            uint64_t v = n;
            for (unsigned q = 0; q < j; q++)
                v *= 5;
            int len = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
            memmove(t + len - j + 1, t + len - j, j + 1);
            t[len - j] = '.';
        }
        fails += conv_one(t, c);
    }
    CHECK(fails == 0);
    freelocale(c);
}

int main(void) {
    harness_rng_seed(0x9E3779B97F4A7C15ull);
    RUN(test_scan_edges);
    RUN(test_scan_random);
    RUN(test_to_double);
    RUN(test_to_double_long);
    return harness_finish();
}
