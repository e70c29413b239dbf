/* fuzz_encoding.c - libFuzzer target: every Parquet decoder in src/parquet/encoding.c on
 * arbitrary bytes. Input layout: [decoder][bit width][count lo][count hi] then the data.
 * Whatever decodes must re-encode and decode to the same values (a check on the
 * encoders too); anything else must fail cleanly. Crashes, sanitizer reports and the
 * __builtin_trap below are the findings. Build: -DFLOE_FUZZ=ON with clang. */
#include "floe/common.h"
#include "parquet/encoding.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_COUNT 65536u

static void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

static void fuzz_rle(const uint8_t *p, size_t n, int bw, size_t count, bool is16) {
    floe_error err;
    void *out = malloc((count ? count : 1) * 4);
    void *again = malloc((count ? count : 1) * 4);
    size_t used = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = is16 ? floe_rle_decode_i16(p, n, bw, out, count, &used, &err)
                  : floe_rle_decode_u32(p, n, bw, out, count, &used, &err);
    if (rc == 0) {
        check(used <= n);
        rc = is16 ? floe_rle_encode_i16(out, count, bw, &b) : floe_rle_encode_u32(out, count, bw, &b);
        check(rc == 0);
        rc = is16 ? floe_rle_decode_i16(b.data, b.len, bw, again, count, &used, &err)
                  : floe_rle_decode_u32(b.data, b.len, bw, again, count, &used, &err);
        check(rc == 0 && used == b.len);
        check(memcmp(out, again, count * (is16 ? 2 : 4)) == 0);
    } else {
        check(rc == FLOE_ECORRUPT || rc == FLOE_EINVALID);
    }
    floe_buf_free(&b);
    free(out);
    free(again);
}

static void fuzz_delta(const uint8_t *p, size_t n, bool is64) {
    floe_error err;
    uint64_t announced;
    if (floe_delta_header_count(p, n, &announced, &err) != 0 || announced > FUZZ_MAX_COUNT)
        return;
    size_t count = (size_t)announced, used = 0;
    int64_t *out = malloc((count ? count : 1) * 8), *again = malloc((count ? count : 1) * 8);
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = is64 ? floe_delta_decode_i64(p, n, out, count, &used, &err)
                  : floe_delta_decode_i32(p, n, (int32_t *)out, count, &used, &err);
    if (rc == 0) {
        check(used <= n);
        rc = is64 ? floe_delta_encode_i64(out, count, &b)
                  : floe_delta_encode_i32((int32_t *)out, count, &b);
        check(rc == 0);
        rc = is64 ? floe_delta_decode_i64(b.data, b.len, again, count, &used, &err)
                  : floe_delta_decode_i32(b.data, b.len, (int32_t *)again, count, &used, &err);
        check(rc == 0 && used == b.len);
        check(memcmp(out, again, count * (is64 ? 8 : 4)) == 0);
    } else {
        check(rc == FLOE_ECORRUPT);
    }
    floe_buf_free(&b);
    free(out);
    free(again);
}

static void fuzz_byte_arrays(const uint8_t *p, size_t n, bool prefixed) {
    floe_error err;
    uint64_t announced;
    if (floe_delta_header_count(p, n, &announced, &err) != 0 || announced > FUZZ_MAX_COUNT)
        return;
    size_t count = (size_t)announced, used = 0;
    uint32_t *off = malloc((count + 1) * 4), *off2 = malloc((count + 1) * 4);
    floe_buf vals, enc, vals2;
    floe_buf_init(&vals, 1 << 24);
    floe_buf_init(&enc, 0);
    floe_buf_init(&vals2, 1 << 24);
    int rc = prefixed ? floe_delta_byte_array_decode(p, n, count, off, &vals, &used, &err)
                      : floe_delta_length_decode(p, n, count, off, &vals, &used, &err);
    if (rc == 0) {
        check(used <= n && off[0] == 0 && off[count] == vals.len);
        rc = prefixed ? floe_delta_byte_array_encode(vals.data, off, count, &enc)
                      : floe_delta_length_encode(vals.data, off, count, &enc);
        check(rc == 0);
        rc = prefixed ? floe_delta_byte_array_decode(enc.data, enc.len, count, off2, &vals2, &used, &err)
                      : floe_delta_length_decode(enc.data, enc.len, count, off2, &vals2, &used, &err);
        check(rc == 0 && used == enc.len && vals2.len == vals.len);
        check(memcmp(off, off2, (count + 1) * 4) == 0);
        check(vals.len == 0 || memcmp(vals.data, vals2.data, vals.len) == 0);
    } else {
        check(rc == FLOE_ECORRUPT || rc == FLOE_ELIMIT);
        check(vals.len == 0);
    }
    floe_buf_free(&vals);
    floe_buf_free(&vals2);
    floe_buf_free(&enc);
    free(off);
    free(off2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4)
        return 0;
    const unsigned which = data[0] % 9, wbyte = data[1];
    size_t count = (size_t)data[2] | ((size_t)data[3] << 8);
    const uint8_t *p = data + 4;
    const size_t n = size - 4;
    floe_error err;
    switch (which) {
    case 0: fuzz_rle(p, n, (int)(wbyte % 34), count, false); break; /* 33: invalid */
    case 1: fuzz_rle(p, n, (int)(wbyte % 18), count, true); break;
    case 2: {
        int16_t *out = malloc((count ? count : 1) * 2);
        size_t used;
        int rc = floe_bitpacked_decode_i16(p, n, (int)(wbyte % 17), out, count, &used, &err);
        check(rc != 0 || used <= n);
        free(out);
        break;
    }
    case 3: {
        uint8_t *out = malloc(count ? count : 1);
        size_t used;
        int rc = floe_plain_bool_decode(p, n, out, count, &used, &err);
        if (rc == 0) {
            floe_buf b;
            floe_buf_init(&b, 0);
            check(floe_plain_bool_encode(out, count, &b) == 0);
            check(b.len == used && (used == 0 || memcmp(b.data, p, used - 1) == 0));
            floe_buf_free(&b);
        }
        free(out);
        break;
    }
    case 4: fuzz_delta(p, n, false); break;
    case 5: fuzz_delta(p, n, true); break;
    case 6: fuzz_byte_arrays(p, n, false); break;
    case 7: fuzz_byte_arrays(p, n, true); break;
    case 8: {
        int width = 1 + (int)(wbyte % 17);
        size_t values = n / (size_t)width;
        uint8_t *out = malloc(n ? n : 1);
        int rc = floe_bss_decode(p, values * (size_t)width, width, out, values, &err);
        check(rc == 0);
        floe_buf b;
        floe_buf_init(&b, 0);
        check(floe_bss_encode(out, values, width, &b) == 0);
        check(b.len == values * (size_t)width && (b.len == 0 || memcmp(b.data, p, b.len) == 0));
        check(floe_bss_decode(p, n + 1, width, out, values, &err) == FLOE_ECORRUPT);
        floe_buf_free(&b);
        free(out);
        break;
    }
    }
    return 0;
}
