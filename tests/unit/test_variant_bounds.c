/*
 * test_variant_bounds.c - the bounds of a variant column (src/iceberg/variant_bounds.h,
 * format/spec.md "Bounds for Variant"): the bytes of the bound object (checked against an
 * encoding worked out by hand from VariantEncoding.md), its JSON, truncation of strings,
 * the types left out, normalized path keys, reading a bound back (other writers' integer
 * widths included) and the pruning rules on them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "harness.h"
#include "iceberg/scan_internal.h"
#include "iceberg/variant_bounds.h"

static const floe_metrics_mode TRUNC16 = {FLOE_METRICS_TRUNCATE, 16};
static const floe_metrics_mode FULL = {FLOE_METRICS_FULL, 0};

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = 0;
    while (*h) {
        if (*h == ' ') {
            h++;
            continue;
        }
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (uint8_t)v;
        h += 2;
    }
    return n;
}

/* The JSON of bound b (metadata then value). */
static char *bound_json(const floe_buf *b) {
    floe_error err;
    size_t msize;
    floe_buf j;
    floe_buf_init(&j, 0);
    if (floe_variant_metadata_check(b->data, b->len, true, &msize, &err) < 0 ||
        floe_variant_to_json(b->data, msize, b->data + msize, b->len - msize, &j, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "bound does not decode: %s", err.msg);
        floe_buf_free(&j);
        return NULL;
    }
    floe_buf_append_byte(&j, 0);
    return (char *)floe_buf_detach(&j, NULL);
}

/* Does b hold the n bytes p somewhere? */
static bool holds(const floe_buf *b, const void *p, size_t n) {
    for (size_t i = 0; i + n <= b->len; i++)
        if (!memcmp(b->data + i, p, n))
            return true;
    return false;
}

static void le64(int64_t v, uint8_t out[8]) {
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

TEST(bytes_of_a_bound_object) {
    uint8_t n_lo[8], n_hi[8], t = 1;
    le64(1, n_lo);
    le64(10, n_hi);
    /* out of order: the builder sorts by path */
    floe_vbound_field fs[3] = {
        {"$['user']['country']", FLOE_TYPE_STRING, (const uint8_t *)"DE",
         (const uint8_t *)"FR", 2, 2},
        {"$['ok']", FLOE_TYPE_BOOLEAN, &t, &t, 1, 1},
        {"$['n']", FLOE_TYPE_LONG, n_lo, n_hi, 8, 8},
    };
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    CHECK_EQ_INT(floe_variant_bound_build(fs, 3, false, TRUNC16, &b, &err), 1);
    uint8_t want[128];
    /* metadata: version 1, sorted, offsets of 1 byte; 3 keys at 0, 6, 13, end 33 */
    size_t wn = unhex("11 03 00 06 0d 21", want);
    memcpy(want + wn, "$['n']$['ok']$['user']['country']", 33);
    wn += 33;
    /* object: 1-byte ids and offsets; ids 0 1 2; values at 0, 9, 10, end 13: int64 1,
     * true, short string "DE" */
    wn += unhex("02 03 00 01 02 00 09 0a 0d 18 0100000000000000 04 09 4445", want + wn);
    CHECK_EQ_INT(b.len, wn);
    CHECK_EQ_MEM(b.data, want, wn < b.len ? wn : b.len);
    char *j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['n']\":1,\"$['ok']\":true,\"$['user']['country']\":\"DE\"}");
    free(j);
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(fs, 3, true, TRUNC16, &b, &err), 1);
    j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['n']\":10,\"$['ok']\":true,\"$['user']['country']\":\"FR\"}");
    free(j);
    floe_buf_free(&b);
}

TEST(types_and_widths) {
    uint8_t i_lo[4] = {0xfe, 0xff, 0xff, 0xff}, i_hi[4] = {7, 0, 0, 0}, d_lo[8], d_hi[8];
    double lo = -0.0, hi = 2.5;
    memcpy(d_lo, &lo, 8);
    memcpy(d_hi, &hi, 8);
    uint8_t f = 0;
    floe_vbound_field fs[3] = {
        {"$['i']", FLOE_TYPE_INT, i_lo, i_hi, 4, 4},
        {"$['d']", FLOE_TYPE_DOUBLE, d_lo, d_hi, 8, 8},
        {"$['b']", FLOE_TYPE_BOOLEAN, &f, &f, 1, 1},
    };
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    CHECK_EQ_INT(floe_variant_bound_build(fs, 3, false, TRUNC16, &b, &err), 1);
    char *j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['b']\":false,\"$['d']\":-0.0,\"$['i']\":-2}");
    free(j);
    /* the int column is an int32 primitive: header 5 << 2 */
    floe_vbound v;
    const char *ip = "$['i']";
    CHECK_EQ_INT(floe_variant_bound_get(b.data, b.len, ip, strlen(ip), &v), 1);
    CHECK_EQ_INT(v.kind, FLOE_VB_INT);
    CHECK_EQ_INT(v.i, -2);
    CHECK(holds(&b, "\x14\xfe\xff\xff\xff", 5));
    /* double bounds are written, but not compared: no verdict */
    const char *dp = "$['d']";
    CHECK_EQ_INT(floe_variant_bound_get(b.data, b.len, dp, strlen(dp), &v), 0);
    const char *bp = "$['b']";
    CHECK_EQ_INT(floe_variant_bound_get(b.data, b.len, bp, strlen(bp), &v), 1);
    CHECK_EQ_INT(v.kind, FLOE_VB_BOOL);
    CHECK_EQ_INT(v.i, 0);
    const char *missing = "$['x']";
    CHECK_EQ_INT(floe_variant_bound_get(b.data, b.len, missing, strlen(missing), &v), 0);
    /* NaN and other types get no bound; nothing left: 0, out untouched */
    double nan_v = NAN;
    uint8_t nan_b[8];
    memcpy(nan_b, &nan_v, 8);
    floe_vbound_field none[2] = {
        {"$['d']", FLOE_TYPE_DOUBLE, nan_b, nan_b, 8, 8},
        {"$['t']", FLOE_TYPE_TIMESTAMP, d_lo, d_hi, 8, 8},
    };
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(none, 2, false, TRUNC16, &b, &err), 0);
    CHECK_EQ_INT(b.len, 0);
    floe_buf_free(&b);
}

TEST(strings_truncated_as_other_bounds) {
    const char *lo = "aaaaaaaaaaaaaaaaaaaaZ"; /* 21 code points */
    const char *hi = "abcdefghijklmnopqrstuvwxyz";
    floe_vbound_field fs[1] = {{"$['s']", FLOE_TYPE_STRING, (const uint8_t *)lo,
                                (const uint8_t *)hi, strlen(lo), strlen(hi)}};
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    CHECK_EQ_INT(floe_variant_bound_build(fs, 1, false, TRUNC16, &b, &err), 1);
    char *j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['s']\":\"aaaaaaaaaaaaaaaa\"}");
    free(j);
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(fs, 1, true, TRUNC16, &b, &err), 1);
    j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['s']\":\"abcdefghijklmnoq\"}"); /* 16th code point incremented */
    free(j);
    /* full: the values as they are */
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(fs, 1, true, FULL, &b, &err), 1);
    j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['s']\":\"abcdefghijklmnopqrstuvwxyz\"}");
    free(j);
    /* 64 bytes and more: the long string primitive (type 16, 4-byte length) */
    char big[81];
    memset(big, 'x', 80);
    big[80] = 0;
    floe_vbound_field bf[1] = {{"$['s']", FLOE_TYPE_STRING, (const uint8_t *)big,
                                (const uint8_t *)big, 80, 80}};
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(bf, 1, true, FULL, &b, &err), 1);
    CHECK(holds(&b, "\x40\x50\x00\x00\x00xxxx", 9));
    floe_vbound v;
    CHECK_EQ_INT(floe_variant_bound_get(b.data, b.len, "$['s']", 6, &v), 1);
    CHECK_EQ_INT(v.kind, FLOE_VB_STRING);
    CHECK_EQ_INT(v.n, 80);
    /* an upper bound that cannot be shortened (U+10FFFF past 16 code points) is left
     * out; the lower bound stays, and another path keeps its upper bound */
    char maxed[17 * 4 + 1];
    for (int i = 0; i < 17; i++)
        memcpy(maxed + 4 * i, "\xf4\x8f\xbf\xbf", 4);
    maxed[68] = 0;
    uint8_t one = 1;
    floe_vbound_field mf[2] = {
        {"$['m']", FLOE_TYPE_STRING, (const uint8_t *)maxed, (const uint8_t *)maxed, 68, 68},
        {"$['o']", FLOE_TYPE_BOOLEAN, &one, &one, 1, 1},
    };
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(mf, 2, true, TRUNC16, &b, &err), 1);
    j = bound_json(&b);
    CHECK_EQ_STR(j, "{\"$['o']\":true}");
    free(j);
    floe_buf_reset(&b);
    CHECK_EQ_INT(floe_variant_bound_build(mf, 1, true, TRUNC16, &b, &err), 0);
    CHECK_EQ_INT(floe_variant_bound_build(mf, 1, false, TRUNC16, &b, &err), 1);
    floe_buf_free(&b);
}

TEST(normalized_path_keys) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_append_byte(&b, '$');
    CHECK_EQ_INT(floe_variant_path_append_key(&b, (const uint8_t *)"user.name", 9), 0);
    const char k2[] = "it's\\a\n\x01z";
    CHECK_EQ_INT(floe_variant_path_append_key(&b, (const uint8_t *)k2, sizeof k2 - 1), 0);
    floe_buf_append_byte(&b, 0);
    CHECK_EQ_STR((const char *)b.data, "$['user.name']['it\\'s\\\\a\\n\\u0001z']");
    floe_buf_free(&b);
}

/* Bounds of other writers: int8 and int16 are integers too; malformed bytes are none. */
TEST(reading_other_bounds) {
    uint8_t b[64];
    /* metadata {"$['a']"}, object {0: int8 -5} */
    size_t n = unhex("11 01 00 06", b);
    memcpy(b + n, "$['a']", 6);
    n += 6;
    n += unhex("02 01 00 00 02 0c fb", b + n);
    floe_vbound v;
    CHECK_EQ_INT(floe_variant_bound_get(b, n, "$['a']", 6, &v), 1);
    CHECK_EQ_INT(v.kind, FLOE_VB_INT);
    CHECK_EQ_INT(v.i, -5);
    /* int16 300 */
    n = unhex("11 01 00 06", b);
    memcpy(b + n, "$['a']", 6);
    n += 6;
    n += unhex("02 01 00 00 03 10 2c01", b + n);
    CHECK_EQ_INT(floe_variant_bound_get(b, n, "$['a']", 6, &v), 1);
    CHECK_EQ_INT(v.i, 300);
    /* truncated, not an object, garbage: no bound */
    CHECK_EQ_INT(floe_variant_bound_get(b, n - 1, "$['a']", 6, &v), 0);
    size_t m = unhex("11 01 00 06", b);
    memcpy(b + m, "$['a']", 6);
    m += 6;
    m += unhex("0c 05", b + m); /* an int8, not an object */
    CHECK_EQ_INT(floe_variant_bound_get(b, m, "$['a']", 6, &v), 0);
    CHECK_EQ_INT(floe_variant_bound_get((const uint8_t *)"\xff\xff", 2, "$", 1, &v), 0);
    CHECK_EQ_INT(floe_variant_bound_get(b, 0, "$", 1, &v), 0);
}

static floe_expr pred(floe_pred_op op, floe_filter_lit_kind k, const char *lit) {
    floe_expr e;
    memset(&e, 0, sizeof e);
    e.kind = FLOE_EXPR_PRED;
    e.variant = true;
    e.op = op;
    e.vlit_kind = k;
    e.vlit = lit;
    e.vlit_n = strlen(lit);
    return e;
}

TEST(pruning_rules) {
    floe_vbound slo = {.kind = FLOE_VB_STRING, .s = (const uint8_t *)"DE", .n = 2};
    floe_vbound shi = {.kind = FLOE_VB_STRING, .s = (const uint8_t *)"FR", .n = 2};
    floe_vbound ilo = {.kind = FLOE_VB_INT, .i = 1}, ihi = {.kind = FLOE_VB_INT, .i = 10};
    floe_vbound bt = {.kind = FLOE_VB_BOOL, .i = 1};
    const floe_filter_lit_kind S = FLOE_FILTER_LIT_STRING, W = FLOE_FILTER_LIT_WORD;
    struct {
        floe_pred_op op;
        floe_filter_lit_kind k;
        const char *lit;
        const floe_vbound *lo, *hi;
        bool may;
    } cases[] = {
        {FLOE_PRED_EQ, S, "FR", &slo, &shi, true},   {FLOE_PRED_EQ, S, "DE", &slo, &shi, true},
        {FLOE_PRED_EQ, S, "US", &slo, &shi, false},  {FLOE_PRED_EQ, S, "D", &slo, &shi, false},
        {FLOE_PRED_EQ, S, "FRA", &slo, &shi, false}, {FLOE_PRED_LT, S, "DE", &slo, &shi, false},
        {FLOE_PRED_LE, S, "DE", &slo, &shi, true},   {FLOE_PRED_GT, S, "FR", &slo, &shi, false},
        {FLOE_PRED_GE, S, "FR", &slo, &shi, true},   {FLOE_PRED_NE, S, "DE", &slo, &shi, true},
        {FLOE_PRED_NE, S, "FR", &shi, &shi, false},  {FLOE_PRED_STARTS_WITH, S, "E", &slo, &shi, true},
        {FLOE_PRED_STARTS_WITH, S, "G", &slo, &shi, false},
        {FLOE_PRED_STARTS_WITH, S, "C", &slo, &shi, false},
        {FLOE_PRED_STARTS_WITH, S, "F", &slo, &shi, true},
        {FLOE_PRED_EQ, W, "5", &slo, &shi, true},   /* a number against strings */
        {FLOE_PRED_EQ, S, "US", NULL, &shi, false}, /* one side only */
        {FLOE_PRED_EQ, S, "AA", NULL, &shi, true},  {FLOE_PRED_EQ, S, "AA", &slo, NULL, false},
        {FLOE_PRED_NE, S, "FR", NULL, &shi, true},  {FLOE_PRED_EQ, S, "AA", NULL, NULL, true},
        {FLOE_PRED_EQ, W, "11", &ilo, &ihi, false}, {FLOE_PRED_EQ, W, "10", &ilo, &ihi, true},
        {FLOE_PRED_LT, W, "1", &ilo, &ihi, false},  {FLOE_PRED_GT, W, "10", &ilo, &ihi, false},
        {FLOE_PRED_GE, W, "10", &ilo, &ihi, true},  {FLOE_PRED_EQ, W, "-3", &ilo, &ihi, false},
        {FLOE_PRED_EQ, W, "1.5", &ilo, &ihi, true}, /* not an integer literal */
        {FLOE_PRED_EQ, S, "5", &ilo, &ihi, true},   /* a string against integers */
        {FLOE_PRED_EQ, W, "99999999999999999999", &ilo, &ihi, true},
        {FLOE_PRED_EQ, W, "5", &ilo, &shi, true},   /* two kinds: no verdict */
        {FLOE_PRED_EQ, W, "false", &bt, &bt, false}, {FLOE_PRED_EQ, W, "true", &bt, &bt, true},
        {FLOE_PRED_NE, W, "true", &bt, &bt, false},  {FLOE_PRED_LT, W, "true", &bt, &bt, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        floe_expr e = pred(cases[i].op, cases[i].k, cases[i].lit);
        bool got = floe_variant_range_may(&e, cases[i].lo, cases[i].hi);
        if (got != cases[i].may)
            harness_fail(__FILE__, __LINE__, "case %zu (op %d '%s'): %d, expected %d", i,
                         (int)cases[i].op, cases[i].lit, got, cases[i].may);
    }
}

int main(void) {
    RUN(bytes_of_a_bound_object);
    RUN(types_and_widths);
    RUN(strings_truncated_as_other_bounds);
    RUN(normalized_path_keys);
    RUN(reading_other_bounds);
    RUN(pruning_rules);
    return harness_finish();
}
