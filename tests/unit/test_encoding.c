/* test_encoding.c - Parquet encodings (src/parquet/encoding.c) against hand-computed
 * vectors from parquet-format Encodings.md, random round trips at every bit width, and
 * truncated or corrupt inputs, which must fail with FLOE_ECORRUPT and (under ASan) never
 * read past the input. Every decode of hostile bytes goes through an exact-size heap copy
 * so an overread is caught. */
#include "floe/common.h"
#include "harness.h"
#include "parquet/encoding.h"
#include "common/testing.h"

#include <stdlib.h>

static bool bytes_equal(const floe_buf *b, const uint8_t *want, size_t n) {
    return b->len == n && memcmp(b->data, want, n) == 0;
}

/* ---- RLE / bit-packed hybrid --------------------------------------------------------- */

TEST(test_rle_spec_example) {
    /* Encodings.md: 0..7 at bit width 3 bit-pack LSB-first into 10001000 11000110
     * 11111010 = 88 C6 FA; the run header is (1 group << 1) | 1 = 03. */
    const uint32_t vals[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint8_t want[] = {0x03, 0x88, 0xC6, 0xFA};
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_rle_encode_u32(vals, 8, 3, &b) == 0);
    CHECK(bytes_equal(&b, want, sizeof want));
    uint32_t got[8];
    size_t used = 0;
    floe_error err;
    floe_error_clear(&err);
    uint8_t *in = harness_dup_exact(want, sizeof want);
    CHECK_OK(floe_rle_decode_u32(in, sizeof want, 3, got, 8, &used, &err), err);
    CHECK_EQ_MEM(got, vals, sizeof vals);
    CHECK_EQ_INT(used, sizeof want);
    free(in);
    floe_buf_free(&b);
}

TEST(test_rle_exact_small) {
    floe_buf b;
    floe_buf_init(&b, 0);
    /* Ten 5s at width 3: one RLE run, header 10 << 1 = 20 = 0x14, then the value in
     * ceil(3/8) = 1 byte. */
    uint32_t run[10];
    for (int i = 0; i < 10; i++)
        run[i] = 5;
    const uint8_t want_run[] = {0x14, 0x05};
    REQUIRE(floe_rle_encode_u32(run, 10, 3, &b) == 0);
    CHECK(bytes_equal(&b, want_run, sizeof want_run));

    /* 100 zeros at width 0: header 200 as ULEB128 = C8 01, and no value bytes. */
    floe_buf_reset(&b);
    uint32_t zeros[100] = {0};
    const uint8_t want_zero[] = {0xC8, 0x01};
    REQUIRE(floe_rle_encode_u32(zeros, 100, 0, &b) == 0);
    CHECK(bytes_equal(&b, want_zero, sizeof want_zero));

    /* 1, 2, 3 at width 2: too short for a run, so one bit-packed group padded with zeros:
     * 1 | 2 << 2 | 3 << 4 = 0x39, then 0x00 for the padding values; header 03. */
    floe_buf_reset(&b);
    const uint32_t three[3] = {1, 2, 3};
    const uint8_t want_three[] = {0x03, 0x39, 0x00};
    REQUIRE(floe_rle_encode_u32(three, 3, 2, &b) == 0);
    CHECK(bytes_equal(&b, want_three, sizeof want_three));

    /* 1, 2 then fourteen 7s at width 3: the two literals borrow six 7s to fill a group
     * (1 | 2 << 3 | 7 << 6 | ... | 7 << 21 = 0xFFFFD1 -> D1 FF FF), the remaining eight 7s
     * form a run (header 8 << 1 = 0x10, value 07). */
    floe_buf_reset(&b);
    uint32_t mixed[16] = {1, 2};
    for (int i = 2; i < 16; i++)
        mixed[i] = 7;
    const uint8_t want_mixed[] = {0x03, 0xD1, 0xFF, 0xFF, 0x10, 0x07};
    REQUIRE(floe_rle_encode_u32(mixed, 16, 3, &b) == 0);
    CHECK(bytes_equal(&b, want_mixed, sizeof want_mixed));

    /* Same through the int16 level encoder. */
    floe_buf_reset(&b);
    int16_t mixed16[16];
    for (int i = 0; i < 16; i++)
        mixed16[i] = (int16_t)mixed[i];
    REQUIRE(floe_rle_encode_i16(mixed16, 16, 3, &b) == 0);
    CHECK(bytes_equal(&b, want_mixed, sizeof want_mixed));

    /* a value wider than the bit width is the caller's bug */
    const uint32_t wide[1] = {8};
    CHECK_EQ_INT(floe_rle_encode_u32(wide, 1, 3, &b), FLOE_EINVALID);
    CHECK_EQ_INT(floe_rle_encode_u32(wide, 1, 33, &b), FLOE_EINVALID);
    floe_buf_free(&b);
}

/* Values at width bw: stretches of random values, long runs and short runs. */
static void fill_levels(uint32_t *v, size_t n, int bw) {
    const uint64_t mask = bw == 32 ? 0xffffffffull : ((1ull << bw) - 1);
    size_t i = 0;
    while (i < n) {
        size_t kind = harness_rnd() % 4, len = 1 + harness_rnd() % (kind == 0 ? 300 : 20);
        uint32_t x = (uint32_t)(harness_rnd() & mask);
        for (size_t k = 0; k < len && i < n; k++, i++)
            v[i] = kind >= 2 ? (uint32_t)(harness_rnd() & mask) : x;
    }
}

TEST(test_rle_roundtrip_all_widths) {
    const size_t sizes[] = {1, 7, 8, 9, 15, 16, 17, 100, 1000, 4099};
    uint32_t *v = malloc(4099 * sizeof *v), *got = malloc(4100 * sizeof *got);
    int16_t *v16 = malloc(4099 * sizeof *v16), *got16 = malloc(4100 * sizeof *got16);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    for (int bw = 0; bw <= 32; bw++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            fill_levels(v, n, bw);
            floe_buf_reset(&b);
            REQUIRE(floe_rle_encode_u32(v, n, bw, &b) == 0);
            uint8_t *in = harness_dup_exact(b.data, b.len);
            size_t used = 0;
            got[n] = 0xdeadbeef;
            int rc = floe_rle_decode_u32(in, b.len, bw, got, n, &used, &err);
            CHECK_OK(rc, err);
            if (rc == 0 && memcmp(got, v, n * sizeof *v) != 0)
                harness_fail(__FILE__, __LINE__, "bw %d n %zu: values differ", bw, n);
            CHECK_EQ_INT(used, b.len);
            CHECK_EQ_U64(got[n], 0xdeadbeef); /* nothing written past count */
            free(in);
            if (bw > 16)
                continue;
            /* the level (int16) path, widths 0..15 hold non-negative int16 */
            if (bw == 16)
                for (size_t i = 0; i < n; i++)
                    v[i] &= 0x7fff;
            for (size_t i = 0; i < n; i++)
                v16[i] = (int16_t)v[i];
            floe_buf_reset(&b);
            REQUIRE(floe_rle_encode_i16(v16, n, bw, &b) == 0);
            in = harness_dup_exact(b.data, b.len);
            rc = floe_rle_decode_i16(in, b.len, bw, got16, n, &used, &err);
            CHECK_OK(rc, err);
            if (rc == 0 && memcmp(got16, v16, n * sizeof *v16) != 0)
                harness_fail(__FILE__, __LINE__, "i16 bw %d n %zu: values differ", bw, n);
            free(in);
        }
    }
    floe_buf_free(&b);
    free(v);
    free(got);
    free(v16);
    free(got16);
}

/* A plain reference of the hybrid encoder's choices (runs of 8+ equal values become RLE
 * runs, a ragged stretch of literals borrows from the run that follows, literals are
 * bit-packed in zero-padded groups of 8), one value at a time: the encoder's vectorised
 * run search must give the same bytes. */
static void ref_put_bits(floe_buf *out, const uint32_t *v, size_t from, size_t to, unsigned bw) {
    size_t groups = (to - from + 7) / 8;
    uint8_t hdr[10];
    size_t hl = floe_uvarint_put(hdr, (uint64_t)groups << 1 | 1);
    floe_buf_append(out, hdr, hl);
    uint64_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < groups * 8; i++) {
        uint64_t x = from + i < to ? v[from + i] : 0;
        acc |= x << bits;
        bits += bw;
        while (bits >= 8) {
            floe_buf_append_byte(out, (uint8_t)acc);
            acc >>= 8;
            bits -= 8;
        }
    }
}

static void ref_rle_encode(const uint32_t *v, size_t n, unsigned bw, floe_buf *out) {
    size_t pos = 0, lit = 0;
    while (pos < n) {
        size_t start = n;
        for (size_t s = pos; s + 8 <= n && start == n; s++) {
            bool same = true;
            for (size_t k = 1; k < 8; k++)
                same = same && v[s + k] == v[s];
            if (same)
                start = s;
        }
        if (start >= n)
            break;
        uint32_t x = v[start];
        size_t end = start + 8;
        while (end < n && v[end] == x)
            end++;
        size_t ragged = (start - lit) & 7;
        if (ragged) {
            size_t lend = 8 - ragged;
            if (end - start - lend < 8) {
                pos = end;
                continue;
            }
            start += lend;
        }
        if (start > lit)
            ref_put_bits(out, v, lit, start, bw);
        uint8_t hdr[10];
        size_t hl = floe_uvarint_put(hdr, (uint64_t)(end - start) << 1);
        floe_buf_append(out, hdr, hl);
        for (unsigned b = 0; b < (bw + 7) / 8; b++)
            floe_buf_append_byte(out, (uint8_t)(x >> (8 * b)));
        pos = lit = end;
    }
    if (n > lit)
        ref_put_bits(out, v, lit, n, bw);
}

TEST(test_rle_encode_matches_reference) {
    const size_t sizes[] = {1, 8, 9, 63, 64, 65, 66, 71, 72, 127, 128, 129, 200, 1000, 5003};
    uint32_t *v = malloc(5003 * sizeof *v);
    int16_t *v16 = malloc(5003 * sizeof *v16);
    floe_buf got, want;
    floe_buf_init(&got, 0);
    floe_buf_init(&want, 0);
    for (int round = 0; round < 40; round++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            int bw = (int)(harness_rnd() % 17);
            uint32_t mask = bw ? (uint32_t)((1u << bw) - 1) : 0;
            /* runs of random lengths around 8 (the threshold) and noise, so run starts
             * and ends fall at every offset of the 64-value windows */
            size_t i = 0;
            while (i < n) {
                size_t len = 1 + harness_rnd() % (round % 3 == 0 ? 12 : round % 3 == 1 ? 40 : 300);
                uint32_t x = (uint32_t)harness_rnd() & mask;
                bool noise = harness_rnd() % 3 == 0;
                for (size_t k = 0; k < len && i < n; k++, i++)
                    v[i] = noise ? (uint32_t)harness_rnd() & mask : x;
            }
            floe_buf_reset(&want);
            ref_rle_encode(v, n, (unsigned)bw, &want);
            floe_buf_reset(&got);
            REQUIRE(floe_rle_encode_u32(v, n, bw, &got) == 0);
            if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0)
                harness_fail(__FILE__, __LINE__, "u32 bw %d n %zu: bytes differ", bw, n);
            if (bw == 16)
                continue; /* levels are non-negative int16 */
            for (size_t k = 0; k < n; k++)
                v16[k] = (int16_t)v[k];
            floe_buf_reset(&got);
            REQUIRE(floe_rle_encode_i16(v16, n, bw, &got) == 0);
            if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0)
                harness_fail(__FILE__, __LINE__, "i16 bw %d n %zu: bytes differ", bw, n);
        }
    }
    /* values that differ only above the low 16 bits or in the sign bit must not count as
     * equal neighbours */
    for (size_t k = 0; k < 200; k++)
        v[k] = (k & 1) ? 0x10000u : 0;
    floe_buf_reset(&want);
    ref_rle_encode(v, 200, 17, &want);
    floe_buf_reset(&got);
    REQUIRE(floe_rle_encode_u32(v, 200, 17, &got) == 0);
    CHECK(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
    floe_buf_free(&got);
    floe_buf_free(&want);
    free(v);
    free(v16);
}

/* 1-bit levels (every optional flat column) unpack through a multiply that spreads four
 * bits into four 16-bit lanes: every byte value, at every position of a long run and in a
 * short final group, must give its bits LSB first. */
TEST(test_rle_one_bit_levels_every_byte) {
    for (size_t tail = 0; tail < 8; tail++) {
        size_t count = 256 * 8 + tail; /* 256 whole groups, then tail values of one more */
        size_t groups = (count + 7) / 8;
        uint8_t *in = malloc(3 + groups + 16);
        size_t n = 0;
        uint64_t header = ((uint64_t)groups << 1) | 1;
        while (header >= 0x80) {
            in[n++] = (uint8_t)(header | 0x80);
            header >>= 7;
        }
        in[n++] = (uint8_t)header;
        for (size_t g = 0; g < groups; g++)
            in[n++] = (uint8_t)(g * 167 + 13); /* every byte value once in the first 256 */
        uint8_t *exact = harness_dup_exact(in, n);
        int16_t *got = malloc((count + 1) * sizeof *got);
        got[count] = 0x5a5a;
        floe_error err;
        floe_error_clear(&err);
        int rc = floe_rle_decode_i16(exact, n, 1, got, count, NULL, &err);
        CHECK_OK(rc, err);
        size_t bad = 0;
        for (size_t i = 0; rc == 0 && i < count; i++)
            bad += got[i] != ((exact[n - groups + i / 8] >> (i % 8)) & 1);
        if (bad)
            harness_fail(__FILE__, __LINE__, "tail %zu: %zu levels differ", tail, bad);
        CHECK_EQ_INT(got[count], 0x5a5a);
        free(got);
        free(exact);
        free(in);
    }
}

TEST(test_rle_runs_chosen_well) {
    /* 1000 equal values: one RLE run, not 125 bit-packed groups. */
    uint32_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = 3;
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_rle_encode_u32(v, 1000, 2, &b) == 0);
    CHECK_EQ_INT(b.len, 3); /* header 2000 = D0 0F, value 03 */
    /* alternating values cannot be run-length encoded: ceil(1000/8) groups of 1 byte
     * at width 1, plus a 2-byte header for 125 groups (251 = FB 01) */
    for (int i = 0; i < 1000; i++)
        v[i] = (uint32_t)(i & 1);
    floe_buf_reset(&b);
    REQUIRE(floe_rle_encode_u32(v, 1000, 1, &b) == 0);
    CHECK_EQ_INT(b.len, 2 + 125);
    floe_buf_free(&b);
}

/* Long runs broken at every position (the encoder extends runs 16 values at a time): the
 * levels round-trip, and a run of n values with one break costs a few bytes, not n/8. */
TEST(test_rle_long_runs_broken_anywhere) {
    int16_t v[300], got[300];
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    const size_t sizes[] = {8, 9, 16, 17, 23, 24, 25, 31, 32, 33, 40, 64, 65, 130, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        for (size_t p = 0; p < n; p++) {
            for (int two = 0; two < 2; two++) {
                for (size_t i = 0; i < n; i++)
                    v[i] = 2;
                v[p] = 1;
                if (two)
                    v[(p * 7 + 3) % n] = 0;
                floe_buf_reset(&b);
                REQUIRE(floe_rle_encode_i16(v, n, 2, &b) == 0);
                size_t used = 0;
                uint8_t *in = harness_dup_exact(b.data, b.len);
                int rc = floe_rle_decode_i16(in, b.len, 2, got, n, &used, &err);
                free(in);
                CHECK_OK(rc, err);
                if (rc == 0 && memcmp(got, v, n * sizeof *v) != 0)
                    harness_fail(__FILE__, __LINE__, "n %zu break %zu: values differ", n, p);
                if (b.len > 16)
                    harness_fail(__FILE__, __LINE__, "n %zu break %zu: %zu bytes", n, p, b.len);
            }
        }
    }
    floe_buf_free(&b);
}

/* floe_rle_encode_repeat writes what the general encoder writes for n copies. */
TEST(test_rle_repeat_equals_general) {
    uint32_t v[300];
    floe_buf a, b;
    floe_buf_init(&a, 0);
    floe_buf_init(&b, 0);
    for (int bw = 0; bw <= 32; bw++) {
        uint32_t x = bw == 0 ? 0 : bw == 32 ? 0xFFFFFFFFu : ((1u << (bw - 1)) | 1u);
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 37)) {
            for (size_t i = 0; i < n; i++)
                v[i] = x;
            floe_buf_reset(&a);
            floe_buf_reset(&b);
            REQUIRE(floe_rle_encode_u32(v, n, bw, &a) == 0);
            REQUIRE(floe_rle_encode_repeat(x, n, bw, &b) == 0);
            if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0))
                harness_fail(__FILE__, __LINE__, "bw %d n %zu: bytes differ", bw, n);
        }
    }
    CHECK_EQ_INT(floe_rle_encode_repeat(4, 10, 2, &b), FLOE_EINVALID); /* does not fit */
    CHECK_EQ_INT(floe_rle_encode_repeat(0, 10, 33, &b), FLOE_EINVALID);
    floe_buf_free(&a);
    floe_buf_free(&b);
}

TEST(test_rle_padded_final_group) {
    floe_error err;
    floe_error_clear(&err);
    /* 9 values at width 8 in a run announcing 2 groups (16 values): the second group is
     * padding. A writer that wrote the whole padded group and one that stopped after the
     * 9th value are both read; one that stopped earlier is corrupt. */
    uint8_t full[1 + 16];
    full[0] = (2 << 1) | 1;
    for (int i = 0; i < 16; i++)
        full[1 + i] = (uint8_t)(i < 9 ? 10 + i : 0xEE);
    uint32_t got[9];
    size_t used = 0;
    uint8_t *in = harness_dup_exact(full, sizeof full);
    CHECK_OK(floe_rle_decode_u32(in, sizeof full, 8, got, 9, &used, &err), err);
    CHECK_EQ_INT(got[8], 18);
    CHECK_EQ_INT(used, sizeof full);
    free(in);
    in = harness_dup_exact(full, 1 + 9);
    CHECK_OK(floe_rle_decode_u32(in, 1 + 9, 8, got, 9, &used, &err), err);
    CHECK_EQ_INT(got[0], 10);
    CHECK_EQ_INT(got[8], 18);
    CHECK_EQ_INT(used, 10);
    free(in);
    in = harness_dup_exact(full, 1 + 8);
    CHECK_EQ_INT(floe_rle_decode_u32(in, 1 + 8, 8, got, 9, &used, &err), FLOE_ECORRUPT);
    free(in);
}

TEST(test_rle_corrupt) {
    floe_error err;
    uint32_t got[64];
    int16_t got16[64];
    /* input ends before count values */
    const uint8_t short_run[] = {0x08, 0x01}; /* RLE run of 4 ones */
    uint8_t *in = harness_dup_exact(short_run, sizeof short_run);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_rle_decode_u32(in, sizeof short_run, 1, got, 5, NULL, &err), FLOE_ECORRUPT);
    CHECK(err.msg[0] != '\0');
    CHECK_OK(floe_rle_decode_u32(in, sizeof short_run, 1, got, 4, NULL, &err), err);
    free(in);
    /* RLE value does not fit the bit width: 9 at width 3 */
    const uint8_t wide[] = {0x10, 0x09};
    in = harness_dup_exact(wide, sizeof wide);
    CHECK_EQ_INT(floe_rle_decode_u32(in, sizeof wide, 3, got, 8, NULL, &err), FLOE_ECORRUPT);
    free(in);
    /* a level above INT16_MAX at width 16 */
    const uint8_t big_level[] = {0x10, 0x00, 0x80};
    in = harness_dup_exact(big_level, sizeof big_level);
    CHECK_EQ_INT(floe_rle_decode_i16(in, sizeof big_level, 16, got16, 8, NULL, &err),
                 FLOE_ECORRUPT);
    free(in);
    /* a bit-packed header announcing 2^40 groups with 3 bytes behind it */
    uint8_t huge[16];
    size_t h = floe_uvarint_put(huge, ((uint64_t)1 << 41) | 1);
    huge[h] = huge[h + 1] = huge[h + 2] = 0xAB;
    in = harness_dup_exact(huge, h + 3);
    CHECK_EQ_INT(floe_rle_decode_u32(in, h + 3, 5, got, 64, NULL, &err), FLOE_ECORRUPT);
    free(in);
    /* an unterminated varint header */
    const uint8_t bad_varint[] = {0xFF, 0xFF, 0xFF};
    in = harness_dup_exact(bad_varint, sizeof bad_varint);
    CHECK_EQ_INT(floe_rle_decode_u32(in, sizeof bad_varint, 3, got, 1, NULL, &err), FLOE_ECORRUPT);
    free(in);
    /* bit widths out of range are the caller's bug */
    CHECK_EQ_INT(floe_rle_decode_u32(short_run, 2, 33, got, 1, NULL, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_rle_decode_i16(short_run, 2, 17, got16, 1, NULL, &err), FLOE_EINVALID);
    /* count 0 reads nothing, even from nothing */
    CHECK_OK(floe_rle_decode_u32(NULL, 0, 3, NULL, 0, NULL, &err), err);

    /* Truncations of a valid stream fail, except that cutting only the zero padding of a
     * final bit-packed group (at most bw - 1 = 4 bytes at width 5) still yields every
     * value. */
    for (int round = 0; round < 20; round++) {
        uint32_t v[253];
        fill_levels(v, 253, 5);
        floe_buf b;
        floe_buf_init(&b, 0);
        REQUIRE(floe_rle_encode_u32(v, 253, 5, &b) == 0);
        uint32_t out[253];
        for (size_t cut = 0; cut < b.len; cut++) {
            in = harness_dup_exact(b.data, cut);
            int rc = floe_rle_decode_u32(in, cut, 5, out, 253, NULL, &err);
            bool ok_cut = rc == 0 && cut + 4 >= b.len && memcmp(out, v, sizeof v) == 0;
            if (rc != FLOE_ECORRUPT && !ok_cut)
                harness_fail(__FILE__, __LINE__, "cut at %zu of %zu: rc %d", cut, b.len, rc);
            free(in);
        }
        floe_buf_free(&b);
    }
}

/* ---- deprecated BIT_PACKED, PLAIN booleans ---------------------------------------------- */

TEST(test_bitpacked_spec_example) {
    /* Encodings.md: 0..7 at width 3, MSB first: 00000101 00111001 01110111. */
    const uint8_t in_bytes[] = {0x05, 0x39, 0x77};
    int16_t got[8];
    size_t used = 0;
    floe_error err;
    floe_error_clear(&err);
    uint8_t *in = harness_dup_exact(in_bytes, sizeof in_bytes);
    CHECK_OK(floe_bitpacked_decode_i16(in, sizeof in_bytes, 3, got, 8, &used, &err), err);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(got[i], i);
    CHECK_EQ_INT(used, 3);
    /* 7 values need ceil(21/8) = 3 bytes; 8 values from 2 bytes is corrupt */
    CHECK_OK(floe_bitpacked_decode_i16(in, 3, 3, got, 7, &used, &err), err);
    CHECK_EQ_INT(used, 3);
    CHECK_EQ_INT(floe_bitpacked_decode_i16(in, 2, 3, got, 8, &used, &err), FLOE_ECORRUPT);
    free(in);
    /* the spec's other example: 30 values at 2 bits are 60 bits = 8 bytes */
    uint8_t ones[8];
    memset(ones, 0x55, sizeof ones); /* 01 01 01 01 ... */
    int16_t lv[30];
    in = harness_dup_exact(ones, 8);
    CHECK_OK(floe_bitpacked_decode_i16(in, 8, 2, lv, 30, &used, &err), err);
    CHECK_EQ_INT(used, 8);
    CHECK_EQ_INT(lv[29], 1);
    free(in);
}

TEST(test_plain_bool) {
    /* 1,0,1,1,0,0,0,0 | 1 -> bit i of byte 0 is value i: 0b00001101 = 0x0D, then 0x01 */
    const uint8_t vals[9] = {1, 0, 1, 1, 0, 0, 0, 0, 1};
    const uint8_t want[] = {0x0D, 0x01};
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_plain_bool_encode(vals, 9, &b) == 0);
    CHECK(bytes_equal(&b, want, sizeof want));
    uint8_t got[9];
    size_t used;
    floe_error err;
    floe_error_clear(&err);
    uint8_t *in = harness_dup_exact(want, sizeof want);
    CHECK_OK(floe_plain_bool_decode(in, 2, got, 9, &used, &err), err);
    CHECK_EQ_MEM(got, vals, 9);
    CHECK_EQ_INT(used, 2);
    CHECK_EQ_INT(floe_plain_bool_decode(in, 1, got, 9, &used, &err), FLOE_ECORRUPT);
    free(in);
    /* random round trip, nonzero bytes mean true */
    uint8_t v[1001], r[1001];
    for (int i = 0; i < 1001; i++)
        v[i] = (uint8_t)(harness_rnd() % 3);
    floe_buf_reset(&b);
    REQUIRE(floe_plain_bool_encode(v, 1001, &b) == 0);
    CHECK_EQ_INT(b.len, 126);
    CHECK_OK(floe_plain_bool_decode(b.data, b.len, r, 1001, &used, &err), err);
    for (int i = 0; i < 1001; i++)
        if (r[i] != (v[i] != 0))
            harness_fail(__FILE__, __LINE__, "bool %d differs", i);
    floe_buf_free(&b);
}

/* ---- DELTA_BINARY_PACKED ---------------------------------------------------------------- */

TEST(test_delta_spec_examples) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    /* Example 1, 1..5, with our geometry (block 128 = 80 01, 4 miniblocks): header
     * 80 01 | 04 | 05 values | zigzag(1) = 02; one block: min delta zigzag(1) = 02, four
     * widths of 0, no miniblock data. */
    const int32_t ex1[] = {1, 2, 3, 4, 5};
    const uint8_t want1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    REQUIRE(floe_delta_encode_i32(ex1, 5, &b) == 0);
    CHECK(bytes_equal(&b, want1, sizeof want1));
    int32_t got[8];
    size_t used = 0;
    uint8_t *in = harness_dup_exact(want1, sizeof want1);
    CHECK_OK(floe_delta_decode_i32(in, sizeof want1, got, 5, &used, &err), err);
    CHECK_EQ_MEM(got, ex1, sizeof ex1);
    CHECK_EQ_INT(used, sizeof want1);
    free(in);

    /* Example 2, 7,5,3,1,2,3,4,5: deltas -2,-2,-2,1,1,1,1, min -2 (zigzag 03), relative
     * 0,0,0,3,3,3,3 at width 2; the first miniblock is padded to 32 values = 8 bytes:
     * 0,0,0,3 -> 0xC0; 3,3,3,0 -> 0x3F; then zeros. Header: 8 values, zigzag(7) = 0E. */
    const int32_t ex2[] = {7, 5, 3, 1, 2, 3, 4, 5};
    const uint8_t want2[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0x00, 0x00,
                             0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i32(ex2, 8, &b) == 0);
    CHECK(bytes_equal(&b, want2, sizeof want2));
    in = harness_dup_exact(want2, sizeof want2);
    CHECK_OK(floe_delta_decode_i32(in, sizeof want2, got, 8, &used, &err), err);
    CHECK_EQ_MEM(got, ex2, sizeof ex2);
    CHECK_EQ_INT(used, sizeof want2);
    free(in);
    /* the same through the INT64 encoder gives the same bytes */
    const int64_t ex2l[] = {7, 5, 3, 1, 2, 3, 4, 5};
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i64(ex2l, 8, &b) == 0);
    CHECK(bytes_equal(&b, want2, sizeof want2));

    /* Another writer's geometry: block 256 (80 02) of 8 miniblocks, 1..5; the widths of
     * the unused miniblocks hold junk, which readers must accept (spec). */
    const uint8_t other[] = {0x80, 0x02, 0x08, 0x05, 0x02, 0x02, 0x00, 0xFF,
                             0x77, 0x00, 0x00, 0x00, 0x00, 0x00};
    in = harness_dup_exact(other, sizeof other);
    CHECK_OK(floe_delta_decode_i32(in, sizeof other, got, 5, &used, &err), err);
    CHECK_EQ_MEM(got, ex1, sizeof ex1);
    CHECK_EQ_INT(used, sizeof other);
    uint64_t announced = 0;
    CHECK_OK(floe_delta_header_count(in, sizeof other, &announced, &err), err);
    CHECK_EQ_INT(announced, 5);
    free(in);

    /* empty input: a header with count 0 and first value 0, nothing else */
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i64(NULL, 0, &b) == 0);
    const uint8_t want0[] = {0x80, 0x01, 0x04, 0x00, 0x00};
    CHECK(bytes_equal(&b, want0, sizeof want0));
    CHECK_OK(floe_delta_decode_i64(b.data, b.len, NULL, 0, &used, &err), err);
    CHECK_EQ_INT(used, 5);
    /* one value: header only */
    const int64_t one = -3;
    int64_t got1 = 0;
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i64(&one, 1, &b) == 0);
    CHECK_EQ_INT(b.len, 5);
    CHECK_OK(floe_delta_decode_i64(b.data, b.len, &got1, 1, &used, &err), err);
    CHECK_EQ_INT(got1, -3);
    floe_buf_free(&b);
}

static void delta_roundtrip_i64(const int64_t *v, size_t n, const char *what) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE(floe_delta_encode_i64(v, n, &b) == 0);
    int64_t *got = malloc((n + 1) * sizeof *got);
    got[n] = 0x5a5a;
    uint8_t *in = harness_dup_exact(b.data, b.len);
    size_t used = 0;
    int rc = floe_delta_decode_i64(in, b.len, got, n, &used, &err);
    if (rc != 0 || memcmp(got, v, n * sizeof *v) != 0 || used != b.len || got[n] != 0x5a5a)
        harness_fail(__FILE__, __LINE__, "%s: n %zu: rc %d (%s), used %zu of %zu", what, n,
                     rc, err.msg, used, b.len);
    free(in);
    free(got);
    floe_buf_free(&b);
}

static void delta_roundtrip_i32(const int32_t *v, size_t n, const char *what) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE(floe_delta_encode_i32(v, n, &b) == 0);
    int32_t *got = malloc((n + 1) * sizeof *got);
    uint8_t *in = harness_dup_exact(b.data, b.len);
    size_t used = 0;
    int rc = floe_delta_decode_i32(in, b.len, got, n, &used, &err);
    if (rc != 0 || memcmp(got, v, n * sizeof *v) != 0 || used != b.len)
        harness_fail(__FILE__, __LINE__, "%s: n %zu: rc %d (%s)", what, n, rc, err.msg);
    /* INT32 must never use more than 32 bits per miniblock (spec) */
    free(in);
    free(got);
    floe_buf_free(&b);
}

TEST(test_delta_extremes) {
    enum { N = 1000 };
    static int64_t v[N];
    static int32_t w[N];
    /* INT64_MIN / INT64_MAX alternating: deltas wrap to -1 and +1 */
    for (int i = 0; i < N; i++)
        v[i] = (i & 1) ? INT64_MAX : INT64_MIN;
    delta_roundtrip_i64(v, N, "alternating extremes");
    /* full-range random values need 64-bit miniblocks */
    for (int i = 0; i < N; i++)
        v[i] = (int64_t)harness_rnd();
    delta_roundtrip_i64(v, N, "random int64");
    /* mixtures: extremes, zero, small steps */
    for (int i = 0; i < N; i++) {
        static const int64_t pick[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1};
        v[i] = (harness_rnd() % 4 == 0) ? pick[harness_rnd() % 6]
                                        : (int64_t)(harness_rnd() % 1000) - 500;
    }
    delta_roundtrip_i64(v, N, "mixed int64");
    /* sorted timestamps, the common case */
    for (int i = 0; i < N; i++)
        v[i] = 1700000000000000LL + i * 1000LL + (int64_t)(harness_rnd() % 7);
    delta_roundtrip_i64(v, N, "timestamps");
    for (int i = 0; i < N; i++)
        w[i] = (i & 1) ? INT32_MAX : INT32_MIN;
    delta_roundtrip_i32(w, N, "alternating int32 extremes");
    for (int i = 0; i < N; i++)
        w[i] = (int32_t)harness_rnd();
    delta_roundtrip_i32(w, N, "random int32");
    /* every miniblock width: deltas in [0, 2^w) with one 0 and one 2^w - 1, so the
     * miniblock width is exactly w (widths 57..63 exercise values spilling into a ninth
     * byte) */
    for (unsigned bw = 1; bw <= 64; bw++) {
        const uint64_t mask = bw == 64 ? ~0ull : (1ull << bw) - 1;
        uint64_t acc = harness_rnd();
        for (int i = 0; i < 300; i++) {
            uint64_t d = i == 5 ? 0 : i == 9 ? mask : harness_rnd() & mask;
            acc += d;
            v[i] = (int64_t)acc;
        }
        delta_roundtrip_i64(v, 300, "every width");
        if (bw <= 32) {
            uint32_t acc32 = (uint32_t)harness_rnd();
            for (int i = 0; i < 300; i++) {
                acc32 += (uint32_t)(i == 5 ? 0 : i == 9 ? mask : harness_rnd() & mask);
                w[i] = (int32_t)acc32;
            }
            delta_roundtrip_i32(w, 300, "every width i32");
        }
    }
    /* every length around block and miniblock edges */
    for (size_t n = 0; n < 300; n++) {
        for (size_t i = 0; i < n; i++)
            w[i] = (int32_t)(harness_rnd() % 100000) - 50000;
        delta_roundtrip_i32(w, n, "lengths");
    }

    /* INT32 extremes: each miniblock width stays at most 32 */
    for (int i = 0; i < 129; i++)
        w[i] = (i & 1) ? INT32_MAX : INT32_MIN;
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_delta_encode_i32(w, 129, &b) == 0);
    /* header 80 01 04 81 01 then zigzag(INT32_MIN) (5 bytes), min delta (1..5 bytes) */
    size_t pos = 0;
    uint64_t x;
    for (int k = 0; k < 5; k++)
        pos += floe_uvarint_get(b.data + pos, b.len - pos, &x);
    for (int m = 0; m < 4; m++)
        CHECK(b.data[pos + (size_t)m] <= 32);
    floe_buf_free(&b);
}

TEST(test_delta_corrupt) {
    floe_error err;
    int32_t got[300];
    int64_t got64[300];
    size_t used;
    /* block size not a multiple of 128 */
    const uint8_t bad_block[] = {0x64, 0x04, 0x02, 0x00, 0x00, 0, 0, 0, 0};
    uint8_t *in = harness_dup_exact(bad_block, sizeof bad_block);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof bad_block, got, 2, &used, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "DELTA_BINARY_PACKED") != NULL);
    free(in);
    /* 3 miniblocks do not divide 128 */
    const uint8_t bad_mb[] = {0x80, 0x01, 0x03, 0x02, 0x00, 0x00, 0, 0, 0};
    in = harness_dup_exact(bad_mb, sizeof bad_mb);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof bad_mb, got, 2, &used, &err), FLOE_ECORRUPT);
    free(in);
    /* header announces a count other than the page's */
    const uint8_t ex1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    in = harness_dup_exact(ex1, sizeof ex1);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof ex1, got, 4, &used, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof ex1, got, 6, &used, &err), FLOE_ECORRUPT);
    free(in);
    /* a miniblock width of 33 for INT32 (65 for INT64) */
    const uint8_t wide[] = {0x80, 0x01, 0x04, 0x03, 0x00, 0x00, 33, 0, 0, 0};
    in = harness_dup_exact(wide, sizeof wide);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof wide, got, 3, &used, &err), FLOE_ECORRUPT);
    free(in);
    /* a first value outside INT32 */
    const uint8_t big_first[] = {0x80, 0x01, 0x04, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10};
    in = harness_dup_exact(big_first, sizeof big_first);
    CHECK_EQ_INT(floe_delta_decode_i32(in, sizeof big_first, got, 1, &used, &err), FLOE_ECORRUPT);
    CHECK_OK(floe_delta_decode_i64(in, sizeof big_first, got64, 1, &used, &err), err);
    free(in);
    /* a header claiming 2^40 values over 10 bytes is refused before anything is read */
    uint8_t huge[32];
    size_t h = 0;
    h += floe_uvarint_put(huge + h, 128);
    h += floe_uvarint_put(huge + h, 4);
    h += floe_uvarint_put(huge + h, (uint64_t)1 << 40);
    h += floe_uvarint_put(huge + h, 0);
    memset(huge + h, 0, 10);
    uint64_t announced;
    in = harness_dup_exact(huge, h + 10);
    CHECK_EQ_INT(floe_delta_header_count(in, h + 10, &announced, &err), FLOE_ECORRUPT);
    free(in);
    /* truncated header */
    in = harness_dup_exact(ex1, 3);
    CHECK_EQ_INT(floe_delta_decode_i32(in, 3, got, 5, &used, &err), FLOE_ECORRUPT);
    free(in);

    /* 1 + 256 values fill their miniblocks exactly, so every truncation must fail */
    int64_t v[257];
    for (int i = 0; i < 257; i++)
        v[i] = (int64_t)(harness_rnd() % 100000);
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_delta_encode_i64(v, 257, &b) == 0);
    for (size_t cut = 0; cut < b.len; cut++) {
        in = harness_dup_exact(b.data, cut);
        int rc = floe_delta_decode_i64(in, cut, got64, 257, &used, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "cut %zu of %zu: rc %d", cut, b.len, rc);
        free(in);
    }
    /* random garbage: never succeeds with a wrong count or crashes */
    for (int t = 0; t < 2000; t++) {
        uint8_t junk[40];
        size_t len = 1 + harness_rnd() % sizeof junk;
        for (size_t i = 0; i < len; i++)
            junk[i] = (uint8_t)harness_rnd();
        if (t & 1) { /* keep a plausible header so the block parser gets exercised */
            junk[0] = 0x80;
            if (len > 1) junk[1] = 0x01;
            if (len > 2) junk[2] = 0x04;
            if (len > 3) junk[3] = (uint8_t)(harness_rnd() % 200 & 0x7f);
        }
        in = harness_dup_exact(junk, len);
        size_t want = len > 3 ? junk[3] : 3;
        used = SIZE_MAX;
        if (floe_delta_decode_i64(in, len, got64, want > 300 ? 300 : want, &used, &err) == 0)
            CHECK(used <= len);
        used = SIZE_MAX;
        if (floe_delta_decode_i32(in, len, got, want > 300 ? 300 : want, &used, &err) == 0)
            CHECK(used <= len);
        free(in);
    }
    floe_buf_free(&b);
}

/* ---- DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY ------------------------------------------- */

static void make_offsets(const char *const *strs, size_t count, floe_buf *data,
                         uint32_t *offsets) {
    offsets[0] = 0;
    for (size_t i = 0; i < count; i++) {
        floe_buf_append(data, strs[i], strlen(strs[i]));
        offsets[i + 1] = (uint32_t)data->len;
    }
}

TEST(test_delta_length_spec_example) {
    /* "Hello","World","Foobar","ABCDEF": lengths 5,5,6,6 delta-encoded: header 80 01 04 04
     * zigzag(5) = 0A; deltas 0,1,0 -> min 0 (00), width 1 (01 00 00 00), the miniblock
     * bits 0,1,0 then zeros = 02 00 00 00; then the bytes back to back. */
    const char *strs[] = {"Hello", "World", "Foobar", "ABCDEF"};
    floe_buf data, b, vals;
    floe_buf_init(&data, 0);
    floe_buf_init(&b, 0);
    floe_buf_init(&vals, 0);
    uint32_t off[5];
    make_offsets(strs, 4, &data, off);
    REQUIRE(floe_delta_length_encode(data.data, off, 4, &b) == 0);
    const uint8_t head[] = {0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x01, 0x00,
                            0x00, 0x00, 0x02, 0x00, 0x00, 0x00};
    REQUIRE(b.len == sizeof head + 22);
    CHECK_EQ_MEM(b.data, head, sizeof head);
    CHECK_EQ_MEM(b.data + sizeof head, "HelloWorldFoobarABCDEF", 22);

    /* decode after 3 bytes already in the values buffer: offsets start there */
    floe_buf_append(&vals, "xyz", 3);
    uint32_t got[5];
    size_t used = 0;
    floe_error err;
    floe_error_clear(&err);
    uint8_t *in = harness_dup_exact(b.data, b.len);
    CHECK_OK(floe_delta_length_decode(in, b.len, 4, got, &vals, &used, &err), err);
    CHECK_EQ_INT(used, b.len);
    CHECK_EQ_INT(got[0], 3);
    CHECK_EQ_INT(got[1], 8);
    CHECK_EQ_INT(got[4], 25);
    CHECK_EQ_INT(vals.len, 25);
    CHECK_EQ_MEM(vals.data + got[2], "Foobar", 6);
    /* one byte short of the data */
    CHECK_EQ_INT(floe_delta_length_decode(in, b.len - 1, 4, got, &vals, &used, &err),
                 FLOE_ECORRUPT);
    CHECK_EQ_INT(vals.len, 25); /* nothing appended on failure */
    free(in);

    /* a negative length */
    const int32_t neg[2] = {3, -1};
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i32(neg, 2, &b) == 0);
    floe_buf_append(&b, "abc", 3);
    CHECK_EQ_INT(floe_delta_length_decode(b.data, b.len, 2, got, &vals, &used, &err),
                 FLOE_ECORRUPT);
    /* the values buffer's limit holds */
    floe_buf small;
    floe_buf_init(&small, 10);
    floe_buf_reset(&b);
    REQUIRE(floe_delta_length_encode(data.data, off, 4, &b) == 0);
    CHECK_EQ_INT(floe_delta_length_decode(b.data, b.len, 4, got, &small, &used, &err),
                 FLOE_ELIMIT);
    floe_buf_free(&small);
    floe_buf_free(&data);
    floe_buf_free(&b);
    floe_buf_free(&vals);
}

TEST(test_delta_byte_array_spec_example) {
    /* "axis","axle","babble","babyhood": prefixes 0,2,0,3, suffixes 4,2,6,5 and the
     * suffix bytes "axislebabbleyhood" (Encodings.md). */
    const char *strs[] = {"axis", "axle", "babble", "babyhood"};
    floe_buf data, b, vals;
    floe_buf_init(&data, 0);
    floe_buf_init(&b, 0);
    floe_buf_init(&vals, 0);
    uint32_t off[5];
    make_offsets(strs, 4, &data, off);
    REQUIRE(floe_delta_byte_array_encode(data.data, off, 4, &b) == 0);
    floe_error err;
    floe_error_clear(&err);
    int32_t lens[4];
    size_t used = 0, used2 = 0;
    CHECK_OK(floe_delta_decode_i32(b.data, b.len, lens, 4, &used, &err), err);
    CHECK(lens[0] == 0 && lens[1] == 2 && lens[2] == 0 && lens[3] == 3);
    CHECK_OK(floe_delta_decode_i32(b.data + used, b.len - used, lens, 4, &used2, &err), err);
    CHECK(lens[0] == 4 && lens[1] == 2 && lens[2] == 6 && lens[3] == 5);
    REQUIRE(b.len == used + used2 + 17);
    CHECK_EQ_MEM(b.data + used + used2, "axislebabbleyhood", 17);

    uint32_t got[5];
    uint8_t *in = harness_dup_exact(b.data, b.len);
    CHECK_OK(floe_delta_byte_array_decode(in, b.len, 4, got, &vals, &used, &err), err);
    CHECK_EQ_INT(used, b.len);
    CHECK_EQ_INT(vals.len, data.len);
    CHECK_EQ_MEM(vals.data, data.data, data.len);
    CHECK_EQ_MEM(got, off, sizeof off);
    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *t = harness_dup_exact(b.data, cut);
        int rc = floe_delta_byte_array_decode(t, cut, 4, got, &vals, &used, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "cut %zu: rc %d", cut, rc);
        free(t);
    }
    free(in);

    /* a prefix longer than the previous value */
    const int32_t pre[2] = {0, 5}, suf[2] = {2, 1};
    floe_buf_reset(&b);
    REQUIRE(floe_delta_encode_i32(pre, 2, &b) == 0);
    REQUIRE(floe_delta_encode_i32(suf, 2, &b) == 0);
    floe_buf_append(&b, "abc", 3);
    size_t before = vals.len;
    CHECK_EQ_INT(floe_delta_byte_array_decode(b.data, b.len, 2, got, &vals, &used, &err),
                 FLOE_ECORRUPT);
    CHECK_EQ_INT(vals.len, before);

    /* random round trip with shared prefixes and empty strings */
    enum { N = 500 };
    floe_buf_reset(&data);
    uint32_t *roff = malloc((N + 1) * sizeof *roff), *rgot = malloc((N + 1) * sizeof *rgot);
    roff[0] = 0;
    for (int i = 0; i < N; i++) {
        size_t keep = i && harness_rnd() % 2 ? harness_rnd() % (roff[i] - roff[i - 1] + 1) : 0;
        for (size_t k = 0; k < keep; k++)
            floe_buf_append_byte(&data, data.data[roff[i - 1] + k]);
        size_t add = harness_rnd() % 12;
        for (size_t k = 0; k < add; k++)
            floe_buf_append_byte(&data, (uint8_t)('a' + harness_rnd() % 3));
        roff[i + 1] = (uint32_t)data.len;
    }
    floe_buf_reset(&b);
    floe_buf_reset(&vals);
    REQUIRE(floe_delta_byte_array_encode(data.data, roff, N, &b) == 0);
    CHECK_OK(floe_delta_byte_array_decode(b.data, b.len, N, rgot, &vals, &used, &err), err);
    CHECK_EQ_INT(vals.len, data.len);
    CHECK(vals.len == data.len && memcmp(vals.data, data.data, data.len) == 0);
    CHECK_EQ_MEM(rgot, roff, (N + 1) * sizeof *roff);
    floe_buf_reset(&b);
    floe_buf_reset(&vals);
    REQUIRE(floe_delta_length_encode(data.data, roff, N, &b) == 0);
    CHECK_OK(floe_delta_length_decode(b.data, b.len, N, rgot, &vals, &used, &err), err);
    CHECK(vals.len == data.len && memcmp(vals.data, data.data, data.len) == 0);
    /* zero values */
    floe_buf_reset(&b);
    REQUIRE(floe_delta_byte_array_encode(NULL, roff, 0, &b) == 0);
    CHECK_OK(floe_delta_byte_array_decode(b.data, b.len, 0, rgot, &vals, &used, &err), err);
    CHECK_EQ_INT(rgot[0], vals.len);
    free(roff);
    free(rgot);
    floe_buf_free(&data);
    floe_buf_free(&b);
    floe_buf_free(&vals);
}

/* ---- BYTE_STREAM_SPLIT ---------------------------------------------------------------------- */

TEST(test_bss) {
    /* Encodings.md: AA BB CC DD | 00 11 22 33 | A3 B4 C5 D6 becomes
     * AA 00 A3 BB 11 B4 CC 22 C5 DD 33 D6. */
    const uint8_t vals[] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33,
                            0xA3, 0xB4, 0xC5, 0xD6};
    const uint8_t want[] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4,
                            0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
    floe_buf b;
    floe_buf_init(&b, 0);
    REQUIRE(floe_bss_encode(vals, 3, 4, &b) == 0);
    CHECK(bytes_equal(&b, want, sizeof want));
    uint8_t got[12];
    floe_error err;
    floe_error_clear(&err);
    CHECK_OK(floe_bss_decode(want, sizeof want, 4, got, 3, &err), err);
    CHECK_EQ_MEM(got, vals, sizeof vals);
    /* the data must be exactly count * width bytes */
    CHECK_EQ_INT(floe_bss_decode(want, 11, 4, got, 3, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_bss_decode(want, 12, 4, got, 2, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_bss_decode(want, 12, 0, got, 2, &err), FLOE_EINVALID);
    /* widths 2, 4, 8 and FLBA widths round-trip */
    const int widths[] = {1, 2, 3, 4, 5, 8, 12, 16};
    uint8_t src[16 * 37], dec[16 * 37];
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        size_t width = (size_t)widths[w];
        for (size_t i = 0; i < width * 37; i++)
            src[i] = (uint8_t)harness_rnd();
        floe_buf_reset(&b);
        REQUIRE(floe_bss_encode(src, 37, widths[w], &b) == 0);
        CHECK_EQ_INT(b.len, width * 37);
        /* value 5's last byte sits in the last stream */
        CHECK_EQ_INT(b.data[(width - 1) * 37 + 5], src[5 * width + width - 1]);
        CHECK_OK(floe_bss_decode(b.data, b.len, widths[w], dec, 37, &err), err);
        CHECK_EQ_MEM(dec, src, width * 37);
    }
    floe_buf_free(&b);
}

/* Allocation failure inside the byte-array codecs unwinds cleanly. */
TEST(test_alloc_failure) {
    const char *strs[] = {"axis", "axle", "babble", "babyhood"};
    floe_buf data, b, vals;
    floe_buf_init(&data, 0);
    floe_buf_init(&b, 0);
    floe_buf_init(&vals, 0);
    uint32_t off[5], got[5];
    make_offsets(strs, 4, &data, off);
    REQUIRE(floe_delta_byte_array_encode(data.data, off, 4, &b) == 0);
    floe_error err;
    size_t used;
    floe_alloc_fail_after(1);
    int rc = floe_delta_byte_array_decode(b.data, b.len, 4, got, &vals, &used, &err);
    floe_alloc_fail_after(0);
    CHECK_EQ_INT(rc, FLOE_ENOMEM);
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_alloc_fail_after(1);
    rc = floe_delta_byte_array_encode(data.data, off, 4, &out);
    floe_alloc_fail_after(0);
    CHECK_EQ_INT(rc, FLOE_ENOMEM);
    floe_buf_free(&out);
    floe_buf_free(&data);
    floe_buf_free(&b);
    floe_buf_free(&vals);
}

int main(void) {
    harness_rng_seed(0x9e3779b97f4a7c15ull);
    RUN(test_rle_spec_example);
    RUN(test_rle_exact_small);
    RUN(test_rle_roundtrip_all_widths);
    RUN(test_rle_encode_matches_reference);
    RUN(test_rle_one_bit_levels_every_byte);
    RUN(test_rle_runs_chosen_well);
    RUN(test_rle_long_runs_broken_anywhere);
    RUN(test_rle_repeat_equals_general);
    RUN(test_rle_padded_final_group);
    RUN(test_rle_corrupt);
    RUN(test_bitpacked_spec_example);
    RUN(test_plain_bool);
    RUN(test_delta_spec_examples);
    RUN(test_delta_extremes);
    RUN(test_delta_corrupt);
    RUN(test_delta_length_spec_example);
    RUN(test_delta_byte_array_spec_example);
    RUN(test_bss);
    RUN(test_alloc_failure);
    return harness_finish();
}
