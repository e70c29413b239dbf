/* test_codec.c - compression codecs (src/codec/codec.c): round trips of every codec on
 * empty, small and 1 MiB inputs through both decompression entry points, exact-size
 * mismatches, truncated and garbage input, concatenated gzip members, zlib streams read
 * as gzip, raw deflate, Hadoop-framed LZ4 built by hand, the LZ4 pages of parquet-testing,
 * decompression bombs against a buffer limit, allocation failure, and the context a
 * thread keeps. */
#include "floe/codec.h"
#include "floe/common.h"
#include "harness.h"
#include "common/testing.h"
#include "codec/zstream.h"

#include <lz4.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

static const floe_codec writable[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_SNAPPY,
                                      FLOE_CODEC_GZIP,         FLOE_CODEC_BROTLI,
                                      FLOE_CODEC_ZSTD,         FLOE_CODEC_LZ4_RAW,
                                      FLOE_CODEC_DEFLATE};
#define N_WRITABLE (sizeof writable / sizeof writable[0])

/* Half text-like (compressible), half random, so every codec does real work. */
static uint8_t *make_input(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    static const char words[] = "event_type=orders ts=2026-10-06 user_id=12345 amount=19.99 ";
    for (size_t i = 0; i < n; i++)
        p[i] = i < n / 2 ? (uint8_t)words[(i * 7 + i / 97) % (sizeof words - 1)]
                         : (uint8_t)harness_rnd();
    return p;
}

static void roundtrip(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src, size_t n) {
    const char *name = floe_codec_name(c);
    floe_buf z, back;
    floe_buf_init(&z, 0);
    floe_buf_init(&back, 0);
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_codec_compress(ctx, c, 0, src, n, &z, &err);
    if (rc != 0) {
        harness_fail(__FILE__, __LINE__, "%s: compress %zu bytes: %s", name, n, err.msg);
        goto done;
    }
    uint8_t *in = harness_dup_exact(z.data, z.len);
    uint8_t *dst = malloc(n ? n : 1);
    rc = floe_codec_decompress(ctx, c, in, z.len, dst, n, &err);
    if (rc != 0 || (n && memcmp(dst, src, n) != 0))
        harness_fail(__FILE__, __LINE__, "%s: exact decompress of %zu bytes: rc %d %s", name,
                     n, rc, err.msg);
    /* into a buffer that already holds something: appended after it */
    floe_buf_append(&back, "prefix", 6);
    rc = floe_codec_decompress_buf(ctx, c, in, z.len, &back, &err);
    if (rc != 0 || back.len != n + 6 || memcmp(back.data, "prefix", 6) != 0 ||
        (n && memcmp(back.data + 6, src, n) != 0))
        harness_fail(__FILE__, __LINE__, "%s: buffered decompress of %zu bytes: rc %d %s",
                     name, n, rc, err.msg);
    /* one byte more or less than the stream holds is corrupt */
    if (c != FLOE_CODEC_UNCOMPRESSED || n) {
        uint8_t *big = malloc(n + 1);
        rc = floe_codec_decompress(ctx, c, in, z.len, big, n + 1, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "%s: n + 1: rc %d", name, rc);
        else if (strncmp(err.msg, name, strlen(name)) != 0 && !strstr(err.msg, name))
            harness_fail(__FILE__, __LINE__, "%s: message does not name the codec: %s", name,
                         err.msg);
        if (n) {
            rc = floe_codec_decompress(ctx, c, in, z.len, big, n - 1, &err);
            if (rc != FLOE_ECORRUPT)
                harness_fail(__FILE__, __LINE__, "%s: n - 1: rc %d", name, rc);
        }
        free(big);
    }
    free(in);
    free(dst);
done:
    floe_buf_free(&z);
    floe_buf_free(&back);
}

TEST(test_roundtrip_all) {
    const size_t sizes[] = {0, 1, 100, 4096, (size_t)1 << 20};
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    REQUIRE(ctx != NULL);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint8_t *src = make_input(sizes[s]);
        for (size_t c = 0; c < N_WRITABLE; c++) {
            roundtrip(ctx, writable[c], src, sizes[s]); /* reused context */
            if (sizes[s] <= 4096)
                roundtrip(NULL, writable[c], src, sizes[s]); /* no context */
        }
        free(src);
    }
    floe_codec_ctx_free(ctx);
    floe_codec_ctx_free(NULL);
}

TEST(test_levels) {
    uint8_t *src = make_input(50000);
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    floe_error err;
    floe_error_clear(&err);
    floe_buf fast, slow;
    floe_buf_init(&fast, 0);
    floe_buf_init(&slow, 0);
    const floe_codec leveled[] = {FLOE_CODEC_GZIP, FLOE_CODEC_ZSTD, FLOE_CODEC_BROTLI,
                                  FLOE_CODEC_DEFLATE};
    for (size_t i = 0; i < 4; i++) {
        floe_codec c = leveled[i];
        floe_buf_reset(&fast);
        floe_buf_reset(&slow);
        CHECK_OK(floe_codec_compress(ctx, c, 1, src, 50000, &fast, &err), err);
        CHECK_OK(floe_codec_compress(ctx, c, 9, src, 50000, &slow, &err), err);
        CHECK(slow.len <= fast.len);
        uint8_t *dst = malloc(50000);
        CHECK_OK(floe_codec_decompress(ctx, c, fast.data, fast.len, dst, 50000, &err), err);
        CHECK_OK(floe_codec_decompress(ctx, c, slow.data, slow.len, dst, 50000, &err), err);
        CHECK_EQ_MEM(dst, src, 50000);
        free(dst);
        CHECK_EQ_INT(floe_codec_compress(ctx, c, 1000, src, 10, &fast, &err), FLOE_EINVALID);
        CHECK(strstr(err.msg, floe_codec_name(c)) != NULL);
    }
    CHECK_EQ_INT(floe_codec_default_level(FLOE_CODEC_ZSTD), 3);
    CHECK_EQ_INT(floe_codec_default_level(FLOE_CODEC_GZIP), 6);
    CHECK_EQ_INT(floe_codec_default_level(FLOE_CODEC_SNAPPY), 0);
    /* the range check compress applies, on its own (table properties, convert) */
    CHECK_OK(floe_codec_check_level(FLOE_CODEC_GZIP, 0, &err), err);
    CHECK_OK(floe_codec_check_level(FLOE_CODEC_ZSTD, -5, &err), err);
    CHECK_OK(floe_codec_check_level(FLOE_CODEC_ZSTD, 22, &err), err);
    CHECK_OK(floe_codec_check_level(FLOE_CODEC_BROTLI, 11, &err), err);
    CHECK_OK(floe_codec_check_level(FLOE_CODEC_SNAPPY, 99, &err), err);
    CHECK_EQ_INT(floe_codec_check_level(FLOE_CODEC_GZIP, 10, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "gzip: level 10 out of range 1..9") != NULL);
    CHECK_EQ_INT(floe_codec_check_level(FLOE_CODEC_ZSTD, 23, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_codec_check_level(FLOE_CODEC_BROTLI, 12, &err), FLOE_EINVALID);
    floe_buf_free(&fast);
    floe_buf_free(&slow);
    floe_codec_ctx_free(ctx);
    free(src);
}

/* A thread's freed context comes back from its next floe_codec_ctx_new with its
 * decompression state: taking it and inflating gzip again allocate nothing (every
 * allocation through floe_malloc fails meanwhile; zlib's state is allocated there). It
 * works for every codec again (its compression state was released); a second context
 * meanwhile is another one; a thread that ends frees the one it keeps (the leak checker of
 * the sanitized build would say so otherwise). */
static void *kept_thread(void *arg) {
    const uint8_t *src = arg;
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    if (!ctx)
        return (void *)1;
    roundtrip(ctx, FLOE_CODEC_ZSTD, src, 4096);
    floe_codec_ctx_free(ctx); /* kept by this thread until it ends */
    return NULL;
}

TEST(test_kept_context) {
    uint8_t *src = make_input(4096);
    uint8_t *dst = malloc(4096);
    floe_error err;
    floe_error_clear(&err);
    floe_buf z;
    floe_buf_init(&z, 0);
    floe_codec_ctx *a = floe_codec_ctx_new();
    REQUIRE(a != NULL);
    for (size_t c = 0; c < N_WRITABLE; c++)
        roundtrip(a, writable[c], src, 4096);
    CHECK_OK(floe_codec_compress(a, FLOE_CODEC_GZIP, 0, src, 4096, &z, &err), err);
    floe_codec_ctx_free(a);
    floe_alloc_fail_after(1);
    floe_codec_ctx *b = floe_codec_ctx_new();
    int rc = b ? floe_codec_decompress(b, FLOE_CODEC_GZIP, z.data, z.len, dst, 4096, &err)
               : FLOE_ENOMEM;
    floe_alloc_fail_after(0);
    REQUIRE(b != NULL);
    CHECK_OK(rc, err);
    CHECK_EQ_MEM(dst, src, 4096);
    floe_codec_ctx *c2 = floe_codec_ctx_new(); /* the thread keeps one: a fresh one */
    REQUIRE(c2 != NULL);
    CHECK(c2 != b);
    for (size_t c = 0; c < N_WRITABLE; c++) {
        roundtrip(b, writable[c], src, 4096);
        roundtrip(c2, writable[c], src, 4096);
    }
    floe_buf_reset(&z);
    CHECK_OK(floe_codec_compress(b, FLOE_CODEC_GZIP, 9, src, 4096, &z, &err), err);
    CHECK_OK(floe_codec_decompress(b, FLOE_CODEC_GZIP, z.data, z.len, dst, 4096, &err), err);
    CHECK_EQ_MEM(dst, src, 4096);
    floe_codec_ctx_free(c2);
    floe_codec_ctx_free(b); /* the thread keeps c2; b is freed */
    pthread_t t;
    void *ret = (void *)1;
    REQUIRE(pthread_create(&t, NULL, kept_thread, src) == 0);
    REQUIRE(pthread_join(t, &ret) == 0);
    CHECK(ret == NULL);
    floe_buf_free(&z);
    free(dst);
    free(src);
}

TEST(test_names) {
    floe_codec c = FLOE_CODEC_UNCOMPRESSED;
    CHECK_EQ_INT(floe_codec_from_name("zstd", &c), 0);
    CHECK_EQ_INT(c, FLOE_CODEC_ZSTD);
    CHECK_EQ_INT(floe_codec_from_name("LZ4RAW", &c), 0);
    CHECK_EQ_INT(c, FLOE_CODEC_LZ4_RAW);
    CHECK_EQ_INT(floe_codec_from_name("lz4_raw", &c), 0);
    CHECK_EQ_INT(floe_codec_from_name("none", &c), 0);
    CHECK_EQ_INT(c, FLOE_CODEC_UNCOMPRESSED);
    CHECK_EQ_INT(floe_codec_from_name("deflate", &c), 0);
    CHECK_EQ_INT(c, FLOE_CODEC_DEFLATE);
    CHECK_EQ_INT(floe_codec_from_name("zip", &c), FLOE_EINVALID);
    CHECK_EQ_INT(c, FLOE_CODEC_DEFLATE); /* untouched on failure */
    CHECK_EQ_STR(floe_codec_name(FLOE_CODEC_LZ4_RAW), "lz4_raw");
    CHECK_EQ_STR(floe_codec_name(FLOE_CODEC_SNAPPY), "snappy");
}

TEST(test_unsupported) {
    floe_error err;
    floe_error_clear(&err);
    floe_buf out;
    floe_buf_init(&out, 0);
    uint8_t dst[4];
    const uint8_t src[4] = {1, 2, 3, 4};
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_LZO, src, 4, dst, 4, &err),
                 FLOE_EUNSUPPORTED);
    CHECK_EQ_STR(err.msg, "unsupported: LZO compression");
    CHECK_EQ_INT(floe_codec_compress(NULL, FLOE_CODEC_LZO, 0, src, 4, &out, &err),
                 FLOE_EUNSUPPORTED);
    CHECK_EQ_INT(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZO, src, 4, &out, &err),
                 FLOE_EUNSUPPORTED);
    /* codec 5 is read only */
    CHECK_EQ_INT(floe_codec_compress(NULL, FLOE_CODEC_LZ4, 0, src, 4, &out, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "lz4") != NULL);
    CHECK_EQ_INT(floe_codec_decompress(NULL, (floe_codec)42, src, 4, dst, 4, &err),
                 FLOE_EUNSUPPORTED);
    CHECK_EQ_INT(out.len, 0);
    floe_buf_free(&out);
}

TEST(test_corrupt_input) {
    enum { N = 20000 };
    uint8_t *src = make_input(N), *dst = malloc(N);
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    floe_error err;
    floe_buf z, out;
    floe_buf_init(&z, 0);
    floe_buf_init(&out, 0);
    for (size_t c = 1; c < N_WRITABLE; c++) {
        floe_codec codec = writable[c];
        const char *name = floe_codec_name(codec);
        floe_buf_reset(&z);
        floe_error_clear(&err);
        REQUIRE(floe_codec_compress(ctx, codec, 0, src, N, &z, &err) == 0);
        /* truncated streams: cut to several lengths, each copy exact-size for ASan */
        const size_t cuts[] = {0, 1, z.len / 3, z.len / 2, z.len - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            uint8_t *in = harness_dup_exact(z.data, cuts[k]);
            int rc = floe_codec_decompress(ctx, codec, in, cuts[k], dst, N, &err);
            if (rc != FLOE_ECORRUPT)
                harness_fail(__FILE__, __LINE__, "%s: cut at %zu: rc %d", name, cuts[k], rc);
            else if (!strstr(err.msg, name))
                harness_fail(__FILE__, __LINE__, "%s: message: %s", name, err.msg);
            floe_buf_reset(&out);
            rc = floe_codec_decompress_buf(ctx, codec, in, cuts[k], &out, &err);
            /* a cut raw LZ4 block can decode to a shorter prefix and look whole; the
             * framed formats always notice */
            if (rc == 0 && codec != FLOE_CODEC_LZ4_RAW && codec != FLOE_CODEC_SNAPPY)
                harness_fail(__FILE__, __LINE__, "%s: buffered, cut at %zu: succeeded", name,
                             cuts[k]);
            if (rc != 0)
                CHECK_EQ_INT(out.len, 0);
            free(in);
        }
        /* random bytes are not a stream of any framed codec */
        uint8_t junk[512];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)harness_rnd();
        int rc = floe_codec_decompress(ctx, codec, junk, sizeof junk, dst, N, &err);
        CHECK_EQ_INT(rc, FLOE_ECORRUPT);
        floe_buf_reset(&out);
        rc = floe_codec_decompress_buf(ctx, codec, junk, sizeof junk, &out, &err);
        if (codec != FLOE_CODEC_LZ4_RAW && codec != FLOE_CODEC_SNAPPY &&
            codec != FLOE_CODEC_DEFLATE)
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
        /* the context still works after errors */
        CHECK_OK(floe_codec_decompress(ctx, codec, z.data, z.len, dst, N, &err), err);
        CHECK_EQ_MEM(dst, src, N);
    }
    /* trailing garbage after a complete gzip / deflate / brotli stream */
    const floe_codec trailing[] = {FLOE_CODEC_GZIP, FLOE_CODEC_DEFLATE, FLOE_CODEC_BROTLI};
    for (size_t t = 0; t < 3; t++) {
        floe_buf_reset(&z);
        REQUIRE(floe_codec_compress(ctx, trailing[t], 0, src, N, &z, &err) == 0);
        floe_buf_append(&z, "junk!", 5);
        CHECK_EQ_INT(floe_codec_decompress(ctx, trailing[t], z.data, z.len, dst, N, &err),
                     FLOE_ECORRUPT);
    }
    floe_buf_free(&z);
    floe_buf_free(&out);
    floe_codec_ctx_free(ctx);
    free(src);
    free(dst);
}

TEST(test_gzip_members_and_zlib) {
    const char *a = "first member, ", *b = "second member";
    size_t la = strlen(a), lb = strlen(b);
    floe_buf z;
    floe_buf_init(&z, 0);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE(floe_codec_compress(NULL, FLOE_CODEC_GZIP, 0, (const uint8_t *)a, la, &z, &err) == 0);
    CHECK(z.data[0] == 0x1f && z.data[1] == 0x8b); /* a gzip member, RFC 1952 */
    size_t first = z.len;
    REQUIRE(floe_codec_compress(NULL, FLOE_CODEC_GZIP, 9, (const uint8_t *)b, lb, &z, &err) == 0);
    CHECK(z.len > first);
    char dst[64];
    uint8_t *in = harness_dup_exact(z.data, z.len);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_GZIP, in, z.len, (uint8_t *)dst, la + lb,
                                   &err),
             err);
    CHECK_EQ_MEM(dst, "first member, second member", la + lb);
    /* only the first member's length announced: the second makes it longer */
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_GZIP, in, z.len, (uint8_t *)dst, la,
                                       &err),
                 FLOE_ECORRUPT);
    floe_buf out;
    floe_buf_init(&out, 0);
    CHECK_OK(floe_codec_decompress_buf(NULL, FLOE_CODEC_GZIP, in, z.len, &out, &err), err);
    CHECK(out.len == la + lb && memcmp(out.data, "first member, second member", la + lb) == 0);
    free(in);

    /* a zlib (RFC 1950) stream is accepted as gzip */
    uint8_t zl[128];
    uLongf zl_len = sizeof zl;
    REQUIRE(compress2(zl, &zl_len, (const Bytef *)a, (uLong)la, 6) == Z_OK);
    CHECK(zl[0] == 0x78);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_GZIP, zl, zl_len, (uint8_t *)dst, la, &err),
             err);
    CHECK_EQ_MEM(dst, a, la);

    /* DEFLATE is raw RFC 1951 (Avro): an independent raw inflate reads it */
    floe_buf_reset(&z);
    REQUIRE(floe_codec_compress(NULL, FLOE_CODEC_DEFLATE, 0, (const uint8_t *)a, la, &z, &err) == 0);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(inflateInit2(&zs, -15) == Z_OK);
    zs.next_in = z.data;
    zs.avail_in = (uInt)z.len;
    zs.next_out = (Bytef *)dst;
    zs.avail_out = sizeof dst;
    CHECK_EQ_INT(inflate(&zs, Z_FINISH), Z_STREAM_END);
    CHECK_EQ_INT(zs.total_out, la);
    CHECK_EQ_INT(zs.total_in, z.len);
    inflateEnd(&zs);
    CHECK_EQ_MEM(dst, a, la);
    /* and a zlib-wrapped stream is not raw deflate */
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_DEFLATE, zl, zl_len, (uint8_t *)dst, la,
                                       &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "deflate") != NULL);
    floe_buf_free(&z);
    floe_buf_free(&out);
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

TEST(test_lz4_hadoop_framing) {
    enum { A = 3000, B = 5000 };
    uint8_t *src = make_input(A + B);
    /* Two Hadoop blocks, each [BE32 decompressed][BE32 compressed][LZ4 block]. */
    size_t cap = 16 + (size_t)LZ4_compressBound(A) + (size_t)LZ4_compressBound(B);
    uint8_t *framed = malloc(cap);
    size_t pos = 0;
    const size_t parts[2][2] = {{0, A}, {A, B}};
    for (int k = 0; k < 2; k++) {
        int clen = LZ4_compress_default((const char *)src + parts[k][0], (char *)framed + pos + 8,
                                        (int)parts[k][1], LZ4_compressBound((int)parts[k][1]));
        REQUIRE(clen > 0);
        put_be32(framed + pos, (uint32_t)parts[k][1]);
        put_be32(framed + pos + 4, (uint32_t)clen);
        pos += 8 + (size_t)clen;
    }
    floe_error err;
    floe_error_clear(&err);
    uint8_t *dst = malloc(A + B);
    uint8_t *in = harness_dup_exact(framed, pos);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, pos, dst, A + B, &err), err);
    CHECK_EQ_MEM(dst, src, A + B);
    floe_buf out;
    floe_buf_init(&out, 0);
    CHECK_OK(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZ4, in, pos, &out, &err), err);
    CHECK(out.len == A + B && memcmp(out.data, src, A + B) == 0);
    /* wrong announced size, truncated framing */
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, pos, dst, A + B - 1, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "lz4") != NULL);
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, pos - 1, dst, A + B, &err),
                 FLOE_ECORRUPT);
    free(in);

    /* one Hadoop block split over two chunks, as BlockCompressorStream writes inputs
     * larger than its buffer: [BE32 A+B][BE32 c1][chunk of A][BE32 c2][chunk of B] */
    pos = 4;
    put_be32(framed, A + B);
    for (int k = 0; k < 2; k++) {
        int clen = LZ4_compress_default((const char *)src + parts[k][0], (char *)framed + pos + 4,
                                        (int)parts[k][1], LZ4_compressBound((int)parts[k][1]));
        REQUIRE(clen > 0);
        put_be32(framed + pos, (uint32_t)clen);
        pos += 4 + (size_t)clen;
    }
    in = harness_dup_exact(framed, pos);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, pos, dst, A + B, &err), err);
    CHECK_EQ_MEM(dst, src, A + B);
    floe_buf_reset(&out);
    CHECK_OK(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZ4, in, pos, &out, &err), err);
    CHECK(out.len == A + B && memcmp(out.data, src, A + B) == 0);
    free(in);

    /* a block claiming 4 GiB from 13 bytes is not believed, and nothing big is allocated */
    const uint8_t claim[] = {0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 5, 0x50, 'h', 'e', 'l', 'o'};
    floe_buf unbounded;
    floe_buf_init(&unbounded, 0);
    in = harness_dup_exact(claim, sizeof claim);
    CHECK_EQ_INT(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZ4, in, sizeof claim, &unbounded,
                                           &err),
                 FLOE_ECORRUPT);
    CHECK(unbounded.cap < ((size_t)1 << 20));
    CHECK_EQ_INT(unbounded.len, 0);
    free(in);
    /* same for a snappy header announcing 2^31 bytes */
    const uint8_t snappy_claim[] = {0x80, 0x80, 0x80, 0x80, 0x08, 0x00};
    in = harness_dup_exact(snappy_claim, sizeof snappy_claim);
    CHECK_EQ_INT(floe_codec_decompress_buf(NULL, FLOE_CODEC_SNAPPY, in, sizeof snappy_claim,
                                           &unbounded, &err),
                 FLOE_ECORRUPT);
    CHECK(unbounded.cap < ((size_t)1 << 20));
    CHECK(strstr(err.msg, "snappy") != NULL);
    free(in);
    floe_buf_free(&unbounded);

    /* the same data as one raw LZ4 block (older parquet-cpp) */
    int raw = LZ4_compress_default((const char *)src, (char *)framed, A + B, (int)cap);
    REQUIRE(raw > 0);
    in = harness_dup_exact(framed, (size_t)raw);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, (size_t)raw, dst, A + B, &err), err);
    CHECK_EQ_MEM(dst, src, A + B);
    floe_buf_reset(&out);
    CHECK_OK(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZ4, in, (size_t)raw, &out, &err), err);
    CHECK(out.len == A + B && memcmp(out.data, src, A + B) == 0);
    free(in);

    /* and as an LZ4 frame */
    size_t fcap = LZ4F_compressFrameBound(A + B, NULL);
    uint8_t *frame = malloc(fcap);
    size_t flen = LZ4F_compressFrame(frame, fcap, src, A + B, NULL);
    REQUIRE(!LZ4F_isError(flen));
    in = harness_dup_exact(frame, flen);
    CHECK_OK(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, flen, dst, A + B, &err), err);
    CHECK_EQ_MEM(dst, src, A + B);
    floe_buf_reset(&out);
    CHECK_OK(floe_codec_decompress_buf(NULL, FLOE_CODEC_LZ4, in, flen, &out, &err), err);
    CHECK(out.len == A + B && memcmp(out.data, src, A + B) == 0);
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, flen, dst, A + B - 1, &err),
                 FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_LZ4, in, flen - 5, dst, A + B, &err),
                 FLOE_ECORRUPT);
    free(in);
    free(frame);
    floe_buf_free(&out);
    free(framed);
    free(dst);
    free(src);
}

/* ---- the LZ4 pages of parquet-testing -------------------------------------------------- */

/* Just enough of the Thrift compact protocol to walk a PageHeader: returns the offset after
 * the struct at p[pos], storing i32 fields 2 (uncompressed_page_size) and 3
 * (compressed_page_size) at depth 0. 0 on malformed input. */
static size_t tc_varint(const uint8_t *p, size_t n, size_t pos, uint64_t *v) {
    size_t k = floe_uvarint_get(p + pos, n - pos, v);
    return k ? pos + k : 0;
}

static size_t tc_skip(const uint8_t *p, size_t n, size_t pos, int type, int depth, int64_t *f);

static size_t tc_struct(const uint8_t *p, size_t n, size_t pos, int depth, int64_t *f) {
    int fid = 0;
    while (pos && pos < n) {
        uint8_t h = p[pos++];
        if (h == 0)
            return pos;
        int type = h & 15;
        if (h >> 4) {
            fid += h >> 4;
        } else {
            uint64_t z;
            if (!(pos = tc_varint(p, n, pos, &z)))
                return 0;
            fid = (int)floe_unzigzag64(z);
        }
        if (depth == 0 && type == 5 && (fid == 2 || fid == 3)) {
            uint64_t z;
            if (!(pos = tc_varint(p, n, pos, &z)))
                return 0;
            f[fid] = floe_unzigzag64(z);
        } else {
            pos = tc_skip(p, n, pos, type, depth + 1, f);
        }
    }
    return 0;
}

static size_t tc_skip(const uint8_t *p, size_t n, size_t pos, int type, int depth, int64_t *f) {
    uint64_t v;
    switch (type) {
    case 1: case 2: return pos;
    case 3: return pos + 1 <= n ? pos + 1 : 0;
    case 4: case 5: case 6: return tc_varint(p, n, pos, &v);
    case 7: return pos + 8 <= n ? pos + 8 : 0;
    case 8:
        if (!(pos = tc_varint(p, n, pos, &v)) || v > n - pos)
            return 0;
        return pos + (size_t)v;
    case 9: case 10: {
        if (pos >= n)
            return 0;
        uint8_t h = p[pos++];
        uint64_t cnt = h >> 4;
        if (cnt == 15 && !(pos = tc_varint(p, n, pos, &cnt)))
            return 0;
        for (uint64_t i = 0; i < cnt && pos; i++)
            pos = tc_skip(p, n, pos, h & 15, depth, f);
        return pos;
    }
    case 12: return tc_struct(p, n, pos, depth, f);
    default: return 0;
    }
}

static void check_first_page(const char *file, floe_codec codec, const uint8_t *want,
                             size_t want_len) {
    size_t len = 0;
    char *data = harness_read_file(harness_conformance(file), &len);
    REQUIRE(data != NULL);
    const uint8_t *p = (const uint8_t *)data;
    int64_t f[4] = {0, 0, -1, -1};
    size_t at = len > 4 ? tc_struct(p, len, 4, 0, f) : 0;
    REQUIRE(at != 0 && f[2] >= 0 && f[3] >= 0 && (uint64_t)f[3] <= len - at);
    uint8_t *page = harness_dup_exact(p + at, (size_t)f[3]);
    uint8_t *dst = malloc((size_t)f[2] + 1);
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_codec_decompress(NULL, codec, page, (size_t)f[3], dst, (size_t)f[2], &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "%s: %s", file, err.msg);
    else if (want && ((size_t)f[2] != want_len || memcmp(dst, want, want_len) != 0))
        harness_fail(__FILE__, __LINE__, "%s: first page differs", file);
    floe_buf out;
    floe_buf_init(&out, 0);
    rc = floe_codec_decompress_buf(NULL, codec, page, (size_t)f[3], &out, &err);
    if (rc != 0 || out.len != (size_t)f[2] || memcmp(out.data, dst, out.len) != 0)
        harness_fail(__FILE__, __LINE__, "%s: buffered: rc %d %s", file, rc, err.msg);
    floe_buf_free(&out);
    free(dst);
    free(page);
    free(data);
}

TEST(test_parquet_testing_lz4) {
    /* Both files begin with the same 16-byte dictionary page (two INT64 timestamps, read
     * off the raw block: a 16-literal sequence). One writer framed it the Hadoop way, the
     * other wrote a bare block. */
    const uint8_t dict[16] = {0xc0, 0x7a, 0xfc, 0x5e, 0, 0, 0, 0,
                              0xc1, 0x7a, 0xfc, 0x5e, 0, 0, 0, 0};
    check_first_page("parquet-testing/data/hadoop_lz4_compressed.parquet", FLOE_CODEC_LZ4, dict,
                     sizeof dict);
    check_first_page("parquet-testing/data/non_hadoop_lz4_compressed.parquet", FLOE_CODEC_LZ4,
                     dict, sizeof dict);
    check_first_page("parquet-testing/data/lz4_raw_compressed.parquet", FLOE_CODEC_LZ4_RAW, NULL,
                     0);
    check_first_page("parquet-testing/data/lz4_raw_compressed_larger.parquet",
                     FLOE_CODEC_LZ4_RAW, NULL, 0);
}

/* ---- bombs ------------------------------------------------------------------------------ */

TEST(test_bomb_limit) {
    enum { BIG = 16 << 20, LIMIT = 1 << 20 };
    uint8_t *zeros = calloc(1, BIG);
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    floe_error err;
    floe_buf z, out;
    floe_buf_init(&z, 0);
    for (size_t c = 0; c < N_WRITABLE; c++) {
        floe_codec codec = writable[c];
        floe_buf_reset(&z);
        floe_error_clear(&err);
        REQUIRE(floe_codec_compress(ctx, codec, 0, zeros, BIG, &z, &err) == 0);
        /* snappy tops out near 21:1; the others do far better on zeros */
        if (codec != FLOE_CODEC_UNCOMPRESSED)
            CHECK(z.len < (codec == FLOE_CODEC_SNAPPY ? BIG / 20 : BIG / 100));
        floe_buf_init(&out, LIMIT);
        floe_buf_append(&out, "kept", 4);
        int rc = floe_codec_decompress_buf(ctx, codec, z.data, z.len, &out, &err);
        if (rc != FLOE_ELIMIT)
            harness_fail(__FILE__, __LINE__, "%s: rc %d %s", floe_codec_name(codec), rc, err.msg);
        CHECK_EQ_INT(out.len, 4);
        /* floe_buf may round its capacity up to a power of two, never further */
        CHECK(out.cap <= 2 * ((size_t)LIMIT + 1));
        CHECK(strstr(err.msg, floe_codec_name(codec)) != NULL);
        floe_buf_free(&out);
        /* exactly at the limit is fine */
        floe_buf_init(&out, BIG);
        CHECK_OK(floe_codec_decompress_buf(ctx, codec, z.data, z.len, &out, &err), err);
        CHECK_EQ_INT(out.len, BIG);
        floe_buf_free(&out);
    }
    floe_buf_free(&z);
    floe_codec_ctx_free(ctx);
    free(zeros);
}

TEST(test_alloc_failure) {
    uint8_t *src = make_input(10000);
    floe_buf z;
    floe_buf_init(&z, 0);
    floe_error err;
    floe_error_clear(&err);
    /* zlib and brotli allocate through floe_malloc: fail each allocation in turn */
    const floe_codec hooked[] = {FLOE_CODEC_GZIP, FLOE_CODEC_DEFLATE, FLOE_CODEC_BROTLI};
    for (size_t h = 0; h < 3; h++) {
        for (uint64_t nth = 1; nth < 40; nth++) {
            floe_codec_ctx *ctx = floe_codec_ctx_new();
            REQUIRE(ctx != NULL);
            floe_buf_reset(&z);
            floe_alloc_fail_after(nth);
            int rc = floe_codec_compress(ctx, hooked[h], 0, src, 10000, &z, &err);
            uint8_t dst[10000];
            if (rc == 0)
                rc = floe_codec_decompress(ctx, hooked[h], z.data, z.len, dst, 10000, &err);
            floe_alloc_fail_after(0);
            if (rc != 0 && rc != FLOE_ENOMEM)
                harness_fail(__FILE__, __LINE__, "%s: fail at %llu: rc %d %s", floe_codec_name(hooked[h]), (unsigned long long)nth, rc, err.msg);
            if (rc == 0)
                CHECK_EQ_MEM(dst, src, 10000);
            floe_codec_ctx_free(ctx);
        }
    }
    floe_buf_free(&z);
    free(src);
}

/* Decode z[0..n) fed in 1000-byte pieces into 64 KiB of room at a time, as the line
 * reader and floe serve do; returns the code, *total the decoded bytes. */
static int zstream_run(floe_zstream_kind kind, int window_log, uint64_t cap, const uint8_t *z,
                       size_t n, uint64_t *total, bool *complete, floe_error *err) {
    floe_zstream_options o = {.kind = kind, .cap = cap, .what = "test data",
                              .zstd_window_log_max = window_log};
    floe_zstream *d = NULL;
    REQUIRE_OK(floe_zstream_new(&o, &d, err), *err);
    static uint8_t room[64 << 10];
    int rc = 0;
    size_t at = 0;
    for (;;) {
        size_t piece = n - at < 1000 ? n - at : 1000, used, got;
        rc = floe_zstream_decode(d, z + at, piece, &used, room, sizeof room, &got, err);
        if (rc < 0)
            break;
        at += used;
        if (at == n && got < sizeof room)
            break;
    }
    *total = floe_zstream_total_out(d);
    *complete = floe_zstream_complete(d);
    floe_zstream_free(d);
    return rc;
}

TEST(test_zstream_cap) {
    enum { BIG = 16 << 20, CAP = 1 << 20 };
    uint8_t *zeros = calloc(1, BIG);
    floe_codec_ctx *ctx = floe_codec_ctx_new();
    floe_error err;
    floe_buf z;
    floe_buf_init(&z, 0);
    const floe_zstream_kind kinds[] = {FLOE_ZSTREAM_GZIP, FLOE_ZSTREAM_ZSTD, FLOE_ZSTREAM_LZ4,
                                       FLOE_ZSTREAM_DEFLATE};
    for (size_t k = 0; k < 4; k++) {
        floe_buf_reset(&z);
        floe_error_clear(&err);
        if (kinds[k] == FLOE_ZSTREAM_LZ4) {
            size_t bound = LZ4F_compressFrameBound(BIG, NULL);
            REQUIRE(floe_buf_reserve(&z, bound) == 0);
            z.len = LZ4F_compressFrame(z.data, bound, zeros, BIG, NULL);
            REQUIRE(!LZ4F_isError(z.len));
        } else {
            floe_codec c = kinds[k] == FLOE_ZSTREAM_GZIP   ? FLOE_CODEC_GZIP
                           : kinds[k] == FLOE_ZSTREAM_ZSTD ? FLOE_CODEC_ZSTD
                                                           : FLOE_CODEC_DEFLATE;
            REQUIRE_OK(floe_codec_compress(ctx, c, 0, zeros, BIG, &z, &err), err);
        }
        uint64_t total;
        bool complete;
        /* past the cap: refused naming it, having decoded at most one room past it */
        int rc = zstream_run(kinds[k], 0, CAP, z.data, z.len, &total, &complete, &err);
        CHECK_EQ_INT(rc, FLOE_ELIMIT);
        CHECK(strstr(err.msg, "test data is larger than 1048576 bytes") != NULL);
        CHECK(total > CAP && total <= CAP + (64 << 10));
        /* exactly at the cap: the whole stream */
        CHECK_OK(zstream_run(kinds[k], 0, BIG, z.data, z.len, &total, &complete, &err), err);
        CHECK_EQ_INT(total, BIG);
        CHECK(complete);
        /* cut short: not complete */
        CHECK_OK(zstream_run(kinds[k], 0, 0, z.data, z.len / 2, &total, &complete, &err), err);
        CHECK(!complete);
        if (kinds[k] == FLOE_ZSTREAM_ZSTD) {
            /* a frame declaring a 16 MiB window: refused under 8 MiB, naming it */
            ZSTD_CCtx *zc = ZSTD_createCCtx();
            REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_windowLog, 24)));
            z.len = ZSTD_compress2(zc, z.data, z.cap, zeros, BIG);
            REQUIRE(!ZSTD_isError(z.len));
            ZSTD_freeCCtx(zc);
            rc = zstream_run(kinds[k], 23, 0, z.data, z.len, &total, &complete, &err);
            CHECK_EQ_INT(rc, FLOE_ELIMIT);
            CHECK(strstr(err.msg, "window is larger than 8 MiB") != NULL);
            CHECK_EQ_INT(total, 0);
        }
        /* garbage: corrupt, the message starts with the codec's name */
        static const uint8_t junk[] = "not a compressed stream at all";
        rc = zstream_run(kinds[k], 0, 0, junk, sizeof junk, &total, &complete, &err);
        CHECK_EQ_INT(rc, FLOE_ECORRUPT);
        const char *name = kinds[k] == FLOE_ZSTREAM_GZIP   ? "gzip: "
                           : kinds[k] == FLOE_ZSTREAM_ZSTD ? "zstd: "
                           : kinds[k] == FLOE_ZSTREAM_LZ4  ? "lz4: "
                                                           : "deflate: ";
        CHECK(strncmp(err.msg, name, strlen(name)) == 0);
    }
    floe_buf_free(&z);
    floe_codec_ctx_free(ctx);
    free(zeros);
}

int main(void) {
    harness_rng_seed(0x2545f4914f6cdd1dull);
    RUN(test_roundtrip_all);
    RUN(test_levels);
    RUN(test_kept_context);
    RUN(test_names);
    RUN(test_unsupported);
    RUN(test_corrupt_input);
    RUN(test_gzip_members_and_zlib);
    RUN(test_lz4_hadoop_framing);
    RUN(test_parquet_testing_lz4);
    RUN(test_bomb_limit);
    RUN(test_alloc_failure);
    RUN(test_zstream_cap);
    return harness_finish();
}
