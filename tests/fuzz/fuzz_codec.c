/* fuzz_codec.c - libFuzzer target: every decompressor in src/codec/codec.c on arbitrary
 * bytes, into an exact-size destination and into a bounded buffer, with one context
 * reused across inputs (as a reader thread does, errors included). Input layout:
 * [codec][size lo][size hi] then the compressed bytes. The same bytes are also
 * compressed and must decompress back. Build: -DFLOE_FUZZ=ON with clang. */
#include "floe/codec.h"
#include "floe/common.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

static const floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_SNAPPY, FLOE_CODEC_GZIP,
                                    FLOE_CODEC_LZO,          FLOE_CODEC_BROTLI, FLOE_CODEC_LZ4,
                                    FLOE_CODEC_ZSTD,         FLOE_CODEC_LZ4_RAW,
                                    FLOE_CODEC_DEFLATE};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static floe_codec_ctx *ctx;
    if (!ctx)
        ctx = floe_codec_ctx_new();
    if (size < 3)
        return 0;
    const floe_codec c = codecs[data[0] % (sizeof codecs / sizeof codecs[0])];
    const size_t dst_len = (size_t)data[1] | ((size_t)data[2] << 8);
    const uint8_t *p = data + 3;
    const size_t n = size - 3;
    floe_error err;

    uint8_t *dst = malloc(dst_len ? dst_len : 1);
    int rc = floe_codec_decompress(ctx, c, p, n, dst, dst_len, &err);
    check(rc == 0 || rc == FLOE_ECORRUPT || rc == FLOE_EUNSUPPORTED || rc == FLOE_ELIMIT);
    free(dst);

    floe_buf out;
    floe_buf_init(&out, 1 << 20);
    rc = floe_codec_decompress_buf(ctx, c, p, n, &out, &err);
    check(rc == 0 || rc == FLOE_ECORRUPT || rc == FLOE_EUNSUPPORTED || rc == FLOE_ELIMIT);
    check(rc == 0 || out.len == 0);
    floe_buf_free(&out);

    /* compress the bytes themselves and read them back */
    floe_buf z;
    floe_buf_init(&z, 0);
    rc = floe_codec_compress(ctx, c, 0, p, n, &z, &err);
    if (rc == 0) {
        uint8_t *back = malloc(n ? n : 1);
        check(floe_codec_decompress(ctx, c, z.data, z.len, back, n, &err) == 0);
        check(n == 0 || memcmp(back, p, n) == 0);
        free(back);
    } else {
        check(rc == FLOE_EUNSUPPORTED);
    }
    floe_buf_free(&z);
    return 0;
}
