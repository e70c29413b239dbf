/*
 * codec.c - block compression for Parquet pages (parquet.thrift CompressionCodec) and
 * Avro blocks: uncompressed, snappy, gzip, brotli, zstd, lz4_raw, the deprecated LZ4
 * (codec 5, read only) and raw deflate (Avro "deflate", RFC 1951).
 *
 * Every decompressor writes into an out_sink, which is either an exact-size destination
 * (a page's uncompressed_page_size: producing fewer or more bytes is FLOE_ECORRUPT) or a
 * bounded floe_buf (Avro blocks, sizes unknown: growing past buf->max is FLOE_ELIMIT,
 * which is what stops a decompression bomb). An exact sink detects "longer than
 * announced" with a one-byte probe: once the destination is full the decoder is offered
 * one scratch byte, and writing it is the error.
 *
 * Codec 5 has had three layouts in the wild (parquet-format's LZ4 notes; parquet-testing
 * hadoop_lz4_compressed.parquet and non_hadoop_lz4_compressed.parquet): Hadoop's
 * framing (big-endian 4-byte decompressed size, 4-byte compressed size, LZ4 block, maybe
 * repeated), a bare LZ4 block, and the LZ4 frame format. They are tried in that order.
 *
 * zlib and brotli allocate through floe_malloc; zstd, lz4 and snappy use their own.
 * libsnappy is loaded on the first Snappy block (common/lazy_snappy.h): when it cannot
 * be, that block's call returns the loader's error (FLOE_EUNSUPPORTED, naming it).
 * Error messages always start with the codec's name.
 */
#include "floe/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <lz4frame.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
/* for the buffer-less block API (ZSTD_decompressBegin/Continue, ZSTD_getFrameHeader):
 * stable since zstd 1.3 and exported by the Debian library */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "common/lazy_snappy.h"

/* zlib streams kept per context: gzip and raw deflate compressors, one inflater. */
enum { ZDEF_GZIP, ZDEF_RAW, ZDEF_COUNT };

struct floe_codec_ctx {
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
    z_stream def[ZDEF_COUNT];
    bool def_ready[ZDEF_COUNT];
    int def_level[ZDEF_COUNT];
    z_stream inf;
    bool inf_ready;
    LZ4F_dctx *lz4f;
};

/* Chunk by which a bounded output buffer grows when the size is unknown. */
#define SINK_GROW_MIN ((size_t)64 * 1024)

/* LZ4 cannot expand more than 255:1; used to stop growing when a raw block will not fit
 * and to reject impossible Hadoop block sizes. Snappy tops out near 22:1. */
#define LZ4_MAX_RATIO 255u
#define SNAPPY_MAX_RATIO 22u

/* ---- allocation hooks ---------------------------------------------------------------- */

static voidpf zlib_alloc(voidpf opaque, uInt items, uInt size) {
    (void)opaque;
    if (size && items > SIZE_MAX / size)
        return Z_NULL;
    return floe_malloc((size_t)items * size);
}

static void zlib_free(voidpf opaque, voidpf p) {
    (void)opaque;
    floe_free(p);
}

static void *brotli_alloc(void *opaque, size_t n) {
    (void)opaque;
    return floe_malloc(n);
}

static void brotli_free(void *opaque, void *p) {
    (void)opaque;
    floe_free(p);
}

/* ---- context --------------------------------------------------------------------------- */

static void ctx_release(floe_codec_ctx *ctx) {
    ZSTD_freeCCtx(ctx->zc);
    ZSTD_freeDCtx(ctx->zd);
    for (int i = 0; i < ZDEF_COUNT; i++)
        if (ctx->def_ready[i])
            deflateEnd(&ctx->def[i]);
    if (ctx->inf_ready)
        inflateEnd(&ctx->inf);
    if (ctx->lz4f)
        LZ4F_freeDecompressionContext(ctx->lz4f);
    memset(ctx, 0, sizeof *ctx);
}

/* One freed context per thread is kept, with its decompression state, for the thread's
 * next floe_codec_ctx_new: a reader per file (a rewrite opens ~2,000 data and delete
 * files) otherwise made a zstd decompression context per file, and ZSTD_createDCtx runs
 * CPUID, which on a virtual machine exits to the hypervisor (1.7% of bench/rewrite_mixed's
 * CPU). Compression state is released first: it is large (zstd's level-3 context holds
 * 1.3 MB) and lives with a writer. The thread's exit frees what it keeps. */
static pthread_once_t keep_once = PTHREAD_ONCE_INIT;
static pthread_key_t keep_key;
static bool keep_ok;

static void keep_drop(void *p) {
    ctx_release(p);
    floe_free(p);
}

static void keep_init(void) {
    keep_ok = pthread_key_create(&keep_key, keep_drop) == 0;
}

floe_codec_ctx *floe_codec_ctx_new(void) {
    /* library state is created lazily, on first use of each codec */
    (void)pthread_once(&keep_once, keep_init);
    floe_codec_ctx *kept = keep_ok ? pthread_getspecific(keep_key) : NULL;
    if (kept && pthread_setspecific(keep_key, NULL) == 0)
        return kept;
    return floe_calloc(1, sizeof(floe_codec_ctx));
}

void floe_codec_ctx_free(floe_codec_ctx *ctx) {
    if (!ctx)
        return;
    if (keep_ok && !pthread_getspecific(keep_key)) {
        ZSTD_freeCCtx(ctx->zc);
        ctx->zc = NULL;
        for (int i = 0; i < ZDEF_COUNT; i++) {
            if (ctx->def_ready[i])
                deflateEnd(&ctx->def[i]);
            ctx->def_ready[i] = false;
        }
        if (pthread_setspecific(keep_key, ctx) == 0)
            return;
    }
    ctx_release(ctx);
    floe_free(ctx);
}

/* ---- names and levels ------------------------------------------------------------------ */

static const struct {
    const char *name;
    floe_codec codec;
} codec_names[] = {
    {"uncompressed", FLOE_CODEC_UNCOMPRESSED},
    {"none", FLOE_CODEC_UNCOMPRESSED},
    {"snappy", FLOE_CODEC_SNAPPY},
    {"gzip", FLOE_CODEC_GZIP},
    {"lzo", FLOE_CODEC_LZO},
    {"brotli", FLOE_CODEC_BROTLI},
    {"lz4", FLOE_CODEC_LZ4},
    {"zstd", FLOE_CODEC_ZSTD},
    {"lz4_raw", FLOE_CODEC_LZ4_RAW},
    {"lz4raw", FLOE_CODEC_LZ4_RAW},
    {"deflate", FLOE_CODEC_DEFLATE},
};

int floe_codec_from_name(const char *name, floe_codec *out) {
    if (!name)
        return FLOE_EINVALID;
    for (size_t i = 0; i < sizeof codec_names / sizeof codec_names[0]; i++)
        if (strcasecmp(name, codec_names[i].name) == 0) {
            *out = codec_names[i].codec;
            return 0;
        }
    return FLOE_EINVALID;
}

const char *floe_codec_name(floe_codec c) {
    switch (c) {
    case FLOE_CODEC_UNCOMPRESSED: return "uncompressed";
    case FLOE_CODEC_SNAPPY: return "snappy";
    case FLOE_CODEC_GZIP: return "gzip";
    case FLOE_CODEC_LZO: return "lzo";
    case FLOE_CODEC_BROTLI: return "brotli";
    case FLOE_CODEC_LZ4: return "lz4";
    case FLOE_CODEC_ZSTD: return "zstd";
    case FLOE_CODEC_LZ4_RAW: return "lz4_raw";
    case FLOE_CODEC_DEFLATE: return "deflate";
    }
    return "unknown codec";
}

int floe_codec_check_level(floe_codec c, int level, floe_error *err) {
    int lo = 0, hi = 0;
    switch (c) {
    case FLOE_CODEC_ZSTD:
        lo = ZSTD_minCLevel();
        hi = ZSTD_maxCLevel();
        break;
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE:
        lo = 1;
        hi = 9;
        break;
    case FLOE_CODEC_BROTLI:
        lo = BROTLI_MIN_QUALITY;
        hi = BROTLI_MAX_QUALITY;
        break;
    default:
        return 0; /* takes no level */
    }
    if (level != 0 && (level < lo || level > hi))
        return floe_error_set(err, FLOE_EINVALID, "%s: level %d out of range %d..%d",
                              floe_codec_name(c), level, lo, hi);
    return 0;
}

int floe_codec_default_level(floe_codec c) {
    switch (c) {
    case FLOE_CODEC_ZSTD: return 3;
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE: return 6;
    /* Brotli quality 4 is about as fast as gzip 6 and compresses better; the higher
     * qualities cost an order of magnitude more time for a few percent. */
    case FLOE_CODEC_BROTLI: return 4;
    default: return 0;
    }
}

/* ---- output sink ------------------------------------------------------------------------ */

typedef struct out_sink {
    const char *codec; /* for messages */
    /* exact mode */
    uint8_t *dst;
    size_t dst_len;
    /* bounded-buffer mode (buf != NULL) */
    floe_buf *buf;
    size_t buf_start;
    size_t len;       /* bytes produced so far */
    bool probing;     /* dst is full (or buf at its max): the room handed out is the probe */
    uint8_t probe[1];
} out_sink;

static void sink_exact(out_sink *s, const char *codec, uint8_t *dst, size_t dst_len) {
    memset(s, 0, sizeof *s);
    s->codec = codec;
    s->dst = dst;
    s->dst_len = dst_len;
}

static void sink_buf(out_sink *s, const char *codec, floe_buf *buf) {
    memset(s, 0, sizeof *s);
    s->codec = codec;
    s->buf = buf;
    s->buf_start = buf->len;
}

/* Room for the decoder's next step. Never returns zero room. */
static int sink_room(out_sink *s, uint8_t **p, size_t *room, floe_error *err) {
    if (!s->buf) {
        if (s->len < s->dst_len) {
            *p = s->dst + s->len;
            *room = s->dst_len - s->len;
            s->probing = false;
        } else {
            *p = s->probe;
            *room = 1;
            s->probing = true;
        }
        return 0;
    }
    floe_buf *b = s->buf;
    size_t left = b->max - b->len;
    if (left == 0) {
        /* at the limit: the stream may be complete, so probe rather than fail */
        *p = s->probe;
        *room = 1;
        s->probing = true;
        return 0;
    }
    s->probing = false;
    size_t want = s->len > SINK_GROW_MIN ? s->len : SINK_GROW_MIN;
    if (want > left)
        want = left;
    int rc = floe_buf_reserve(b, want);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: output buffer of %zu bytes: %s", s->codec,
                              b->len + want, floe_strerror(rc));
    *p = b->data + b->len;
    /* use whatever capacity the buffer has, up to its limit */
    size_t cap_room = b->cap - b->len - 1;
    *room = cap_room < left ? cap_room : left;
    return 0;
}

static int sink_advance(out_sink *s, size_t produced, floe_error *err) {
    if (produced == 0)
        return 0;
    if (s->probing && s->buf)
        return floe_error_set(err, FLOE_ELIMIT, "%s: decompressed data exceeds the %zu-byte limit",
                              s->codec, s->buf->max - s->buf_start);
    if (s->probing)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: decompressed data is longer than the announced %zu bytes",
                              s->codec, s->dst_len);
    s->len += produced;
    if (s->buf)
        s->buf->len += produced;
    return 0;
}

static int sink_finish(const out_sink *s, floe_error *err) {
    if (!s->buf && s->len != s->dst_len)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: decompressed %zu bytes, page announced %zu", s->codec, s->len,
                              s->dst_len);
    return 0;
}

/* On failure a bounded buffer is returned to its length at entry. */
static void sink_abandon(out_sink *s) {
    if (s->buf)
        s->buf->len = s->buf_start;
}

/* ---- zlib (gzip, zlib, raw deflate) --------------------------------------------------- */

static int zlib_deflater(floe_codec_ctx *ctx, int kind, int level, const char *name,
                         z_stream **out, floe_error *err) {
    z_stream *zs = &ctx->def[kind];
    int zrc;
    if (!ctx->def_ready[kind]) {
        memset(zs, 0, sizeof *zs);
        zs->zalloc = zlib_alloc;
        zs->zfree = zlib_free;
        /* gzip: 15 + 16 writes the gzip wrapper; raw: -15 writes bare RFC 1951 */
        zrc = deflateInit2(zs, level, Z_DEFLATED, kind == ZDEF_GZIP ? 15 + 16 : -15, 8,
                           Z_DEFAULT_STRATEGY);
        if (zrc != Z_OK)
            return floe_error_sys(err, zrc == Z_MEM_ERROR ? FLOE_ENOMEM : FLOE_EINVALID, zrc,
                                  "%s: cannot start compressor (level %d): %s", name, level,
                                  zError(zrc));
        ctx->def_ready[kind] = true;
        ctx->def_level[kind] = level;
    } else {
        deflateReset(zs);
        if (ctx->def_level[kind] != level) {
            zrc = deflateParams(zs, level, Z_DEFAULT_STRATEGY);
            if (zrc != Z_OK)
                return floe_error_sys(err, FLOE_EINVALID, zrc, "%s: level %d: %s", name,
                                      level, zError(zrc));
            ctx->def_level[kind] = level;
        }
    }
    *out = zs;
    return 0;
}

static int zlib_compress(floe_codec_ctx *ctx, int kind, int level, const char *name,
                         const uint8_t *src, size_t n, floe_buf *out, floe_error *err) {
    FLOE_RETURN_ERROR_IF(n > UINT_MAX, err, FLOE_ELIMIT,
                         "%s: %zu bytes exceed the 4 GiB a single block may hold", name, n);
    z_stream *zs = NULL;
    FLOE_FORWARD_IF_ERROR(zlib_deflater(ctx, kind, level, name, &zs, err));
    uLong bound = deflateBound(zs, (uLong)n);
    FLOE_RETURN_ERROR_IF(bound > UINT_MAX, err, FLOE_ELIMIT, "%s: output too large", name);
    int rc = floe_buf_reserve(out, bound);
    FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "%s: output buffer: %s", name, floe_strerror(rc));
    static const uint8_t empty[1];
    zs->next_in = (Bytef *)(uintptr_t)(n ? src : empty);
    zs->avail_in = (uInt)n;
    zs->next_out = out->data + out->len;
    zs->avail_out = (uInt)bound;
    int zrc = deflate(zs, Z_FINISH);
    if (zrc != Z_STREAM_END) {
        /* a half-finished stream cannot be reused as is */
        deflateEnd(zs);
        ctx->def_ready[kind] = false;
        return floe_error_sys(err, zrc == Z_MEM_ERROR ? FLOE_ENOMEM : FLOE_EINTERNAL, zrc,
                              "%s: compression failed: %s", name, zError(zrc));
    }
    out->len += bound - zs->avail_out;
    return 0;
}

/* Inflate src into s. window_bits: 15 + 32 detects gzip or zlib; -15 is raw deflate.
 * members: accept further gzip/zlib members after the first ends (concatenated gzip). */
static int zlib_inflate(floe_codec_ctx *ctx, int window_bits, bool members, const uint8_t *src,
                        size_t n, out_sink *s, floe_error *err) {
    z_stream *zs = &ctx->inf;
    int zrc;
    if (!ctx->inf_ready) {
        memset(zs, 0, sizeof *zs);
        zs->zalloc = zlib_alloc;
        zs->zfree = zlib_free;
        zrc = inflateInit2(zs, window_bits);
        if (zrc != Z_OK)
            return floe_error_sys(err, zrc == Z_MEM_ERROR ? FLOE_ENOMEM : FLOE_EINTERNAL, zrc,
                                  "%s: cannot start decompressor: %s", s->codec, zError(zrc));
        ctx->inf_ready = true;
    } else if ((zrc = inflateReset2(zs, window_bits)) != Z_OK) {
        return floe_error_sys(err, FLOE_EINTERNAL, zrc, "%s: cannot reset decompressor: %s",
                              s->codec, zError(zrc));
    }
    size_t fed = 0; /* bytes of src handed to zlib so far */
    unsigned member = 1;
    zs->avail_in = 0;
    for (;;) {
        if (zs->avail_in == 0 && fed < n) {
            size_t chunk = n - fed > UINT_MAX ? UINT_MAX : n - fed;
            zs->next_in = (Bytef *)(uintptr_t)(src + fed);
            zs->avail_in = (uInt)chunk;
            fed += chunk;
        }
        uint8_t *p = NULL;
        size_t room = 0;
        FLOE_FORWARD_IF_ERROR(sink_room(s, &p, &room, err));
        if (room > UINT_MAX)
            room = UINT_MAX;
        zs->next_out = p;
        zs->avail_out = (uInt)room;
        zrc = inflate(zs, Z_NO_FLUSH);
        FLOE_FORWARD_IF_ERROR(sink_advance(s, room - zs->avail_out, err));
        if (zrc == Z_STREAM_END) {
            size_t left = zs->avail_in + (n - fed);
            if (left == 0)
                break;
            if (!members)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(n - left),
                                     "%s: %zu bytes after the end of the stream", s->codec,
                                     left);
            /* another gzip member follows (or a zlib stream): start over, same mode */
            inflateReset(zs);
            member++;
            continue;
        }
        if (zrc == Z_BUF_ERROR && zs->avail_in == 0 && fed == n)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)n,
                                 "%s: member %u: stream truncated", s->codec, member);
        if (zrc == Z_MEM_ERROR)
            return floe_error_sys(err, FLOE_ENOMEM, zrc, "%s: out of memory", s->codec);
        if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return floe_error_sys(err, FLOE_ECORRUPT, zrc, "%s: member %u: %s", s->codec,
                                  member, zs->msg ? zs->msg : zError(zrc));
    }
    return 0;
}

/* ---- zstd --------------------------------------------------------------------------------- */

static int zstd_dctx(floe_codec_ctx *ctx, ZSTD_DCtx **out, floe_error *err) {
    if (!ctx->zd && !(ctx->zd = ZSTD_createDCtx()))
        return floe_error_set(err, FLOE_ENOMEM, "zstd: cannot create decompression context");
    ZSTD_DCtx_reset(ctx->zd, ZSTD_reset_session_only);
    *out = ctx->zd;
    return 0;
}

static int zstd_compress(floe_codec_ctx *ctx, int level, const uint8_t *src, size_t n,
                         floe_buf *out, floe_error *err) {
    if (!ctx->zc && !(ctx->zc = ZSTD_createCCtx()))
        return floe_error_set(err, FLOE_ENOMEM, "zstd: cannot create compression context");
    ZSTD_CCtx_reset(ctx->zc, ZSTD_reset_session_and_parameters);
    size_t zr = ZSTD_CCtx_setParameter(ctx->zc, ZSTD_c_compressionLevel, level);
    FLOE_RETURN_ERROR_IF(ZSTD_isError(zr), err, FLOE_EINVALID, "zstd: level %d: %s", level,
                         ZSTD_getErrorName(zr));
    size_t bound = ZSTD_compressBound(n);
    FLOE_RETURN_ERROR_IF(ZSTD_isError(bound), err, FLOE_ELIMIT, "zstd: %zu bytes too large", n);
    int rc = floe_buf_reserve(out, bound);
    FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "zstd: output buffer: %s", floe_strerror(rc));
    zr = ZSTD_compress2(ctx->zc, out->data + out->len, bound, src, n);
    FLOE_RETURN_ERROR_IF(ZSTD_isError(zr), err, FLOE_EINTERNAL, "zstd: compression failed: %s",
                         ZSTD_getErrorName(zr));
    out->len += zr;
    return 0;
}

static int zstd_decompress_exact(floe_codec_ctx *ctx, const uint8_t *src, size_t n,
                                 uint8_t *dst, size_t dst_len, floe_error *err) {
    ZSTD_DCtx *dctx = NULL;
    FLOE_FORWARD_IF_ERROR(zstd_dctx(ctx, &dctx, err));
    uint8_t dummy[1];
    size_t zr = ZSTD_decompressDCtx(dctx, dst_len ? dst : dummy, dst_len, src, n);
    if (ZSTD_isError(zr)) {
        if (ZSTD_getErrorCode(zr) == ZSTD_error_dstSize_tooSmall)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "zstd: decompressed data is longer than the announced %zu "
                                  "bytes",
                                  dst_len);
        return floe_error_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(zr));
    }
    FLOE_RETURN_ERROR_IF(zr != dst_len, err, FLOE_ECORRUPT,
                         "zstd: decompressed %zu bytes, page announced %zu", zr, dst_len);
    return 0;
}

/* One zstd frame (content size announced, no trailing bytes) split between two
 * destinations: output bytes [0, head_len) into head, the rest into body. Blocks go into
 * head (as scratch) until it holds head_len bytes, then the spill-over is copied to body
 * and every later block is decoded straight into body. zstd accepts exactly one such
 * break in the output: what it already wrote to head stays there and serves as the
 * earlier part of the window (the decoder treats it like a dictionary segment). Returns 1
 * (nothing written to body) when the stream is not of that shape. */
static int zstd_decompress_split(floe_codec_ctx *ctx, const uint8_t *src, size_t n,
                                 floe_buf *head, size_t head_len, uint8_t *body,
                                 size_t body_len, floe_error *err) {
    ZSTD_frameHeader fh;
    if (n == 0 || ZSTD_getFrameHeader(&fh, src, n) != 0 || fh.frameType != ZSTD_frame ||
        fh.frameContentSize != (unsigned long long)head_len + body_len ||
        ZSTD_findFrameCompressedSize(src, n) != n)
        return 1;
    ZSTD_DCtx *dctx = NULL;
    FLOE_FORWARD_IF_ERROR(zstd_dctx(ctx, &dctx, err));
    /* head must take whole blocks until it reaches head_len */
    size_t block = fh.blockSizeMax ? fh.blockSizeMax : ZSTD_BLOCKSIZE_MAX;
    floe_buf_reset(head);
    if (head_len > SIZE_MAX - block || floe_buf_reserve(head, head_len + block) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "zstd: out of memory");
    size_t zr = ZSTD_decompressBegin(dctx);
    if (ZSTD_isError(zr))
        return floe_error_set(err, FLOE_EINTERNAL, "zstd: %s", ZSTD_getErrorName(zr));
    size_t pos = 0, hp = 0, bp = 0;
    bool in_body = head_len == 0;
    for (;;) {
        size_t want = ZSTD_nextSrcSizeToDecompress(dctx);
        if (want == 0)
            break;
        if (want > n - pos)
            return floe_error_set(err, FLOE_ECORRUPT, "zstd: truncated frame");
        uint8_t *dst = in_body ? body + bp : head->data + hp;
        size_t cap = in_body ? body_len - bp : head->cap - hp;
        zr = ZSTD_decompressContinue(dctx, dst, cap, src + pos, want);
        if (ZSTD_isError(zr)) {
            if (ZSTD_getErrorCode(zr) == ZSTD_error_dstSize_tooSmall)
                return floe_error_set(err, FLOE_ECORRUPT,
                                      "zstd: decompressed data is longer than the announced "
                                      "%zu bytes",
                                      head_len + body_len);
            return floe_error_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(zr));
        }
        pos += want;
        if (in_body) {
            bp += zr;
            continue;
        }
        hp += zr;
        if (hp >= head_len) {
            size_t spill = hp - head_len;
            if (spill > body_len)
                return floe_error_set(err, FLOE_ECORRUPT,
                                      "zstd: decompressed data is longer than the announced "
                                      "%zu bytes",
                                      head_len + body_len);
            memcpy(body, head->data + head_len, spill);
            bp = spill;
            in_body = true;
        }
    }
    if (pos != n || !in_body || bp != body_len)
        return floe_error_set(err, FLOE_ECORRUPT, "zstd: decompressed %zu bytes, page announced %zu",
                              (in_body ? head_len + bp : hp), head_len + body_len);
    head->len = head_len;
    return 0;
}

static int zstd_decompress_stream(floe_codec_ctx *ctx, const uint8_t *src, size_t n,
                                  out_sink *s, floe_error *err) {
    ZSTD_DCtx *dctx = NULL;
    FLOE_FORWARD_IF_ERROR(zstd_dctx(ctx, &dctx, err));
    ZSTD_inBuffer in = {src, n, 0};
    size_t zr = 1;
    for (;;) {
        uint8_t *p = NULL;
        size_t room = 0;
        FLOE_FORWARD_IF_ERROR(sink_room(s, &p, &room, err));
        ZSTD_outBuffer ob = {p, room, 0};
        zr = ZSTD_decompressStream(dctx, &ob, &in);
        if (ZSTD_isError(zr))
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)in.pos, "zstd: %s",
                                 ZSTD_getErrorName(zr));
        FLOE_FORWARD_IF_ERROR(sink_advance(s, ob.pos, err));
        /* 0: the frame is decoded and flushed (calling again would start a new frame);
         * otherwise done when all input is in and the decoder had room to spare */
        if (in.pos == in.size && (zr == 0 || ob.pos < ob.size))
            break;
    }
    FLOE_RETURN_ERROR_IF(zr != 0, err, FLOE_ECORRUPT, "zstd: frame truncated");
    return 0;
}

/* ---- brotli ------------------------------------------------------------------------------- */

static int brotli_compress(int level, const uint8_t *src, size_t n, floe_buf *out,
                           floe_error *err) {
    size_t bound = BrotliEncoderMaxCompressedSize(n);
    FLOE_RETURN_ERROR_IF(bound == 0, err, FLOE_ELIMIT, "brotli: %zu bytes too large", n);
    int rc = floe_buf_reserve(out, bound);
    FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "brotli: output buffer: %s", floe_strerror(rc));
    size_t produced = bound;
    static const uint8_t empty[1];
    BROTLI_BOOL ok = BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n,
                                           n ? src : empty, &produced, out->data + out->len);
    FLOE_RETURN_ERROR_IF(!ok, err, FLOE_EINTERNAL, "brotli: compression failed");
    out->len += produced;
    return 0;
}

static int brotli_decompress(const uint8_t *src, size_t n, out_sink *s, floe_error *err) {
    int rc = 0;
    BrotliDecoderState *st = BrotliDecoderCreateInstance(brotli_alloc, brotli_free, NULL);
    FLOE_RETURN_ERROR_IF(!st, err, FLOE_ENOMEM, "brotli: cannot create decoder");
    size_t avail_in = n;
    const uint8_t *next_in = src;
    for (;;) {
        uint8_t *p = NULL;
        size_t room = 0;
        FLOE_CHECK(sink_room(s, &p, &room, err));
        size_t avail_out = room;
        uint8_t *next_out = p;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
        FLOE_CHECK(sink_advance(s, room - avail_out, err));
        if (r == BROTLI_DECODER_RESULT_SUCCESS)
            break;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT)
            continue;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
            rc = floe_error_at(err, FLOE_ECORRUPT, (int64_t)n, "brotli: stream truncated");
            goto done;
        }
        BrotliDecoderErrorCode code = BrotliDecoderGetErrorCode(st);
        /* the decoder reports its failed allocations (codes -21..-30) as errors too */
        bool oom = code <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
                   code >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES;
        rc = floe_error_at(err, oom ? FLOE_ENOMEM : FLOE_ECORRUPT, (int64_t)(n - avail_in),
                           "brotli: %s", BrotliDecoderErrorString(code));
        goto done;
    }
    if (avail_in)
        rc = floe_error_at(err, FLOE_ECORRUPT, (int64_t)(n - avail_in),
                           "brotli: %zu bytes after the end of the stream", avail_in);
done:
    BrotliDecoderDestroyInstance(st);
    return rc;
}

/* ---- LZ4 ---------------------------------------------------------------------------------- */

static uint32_t load_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int lz4_compress_raw(const uint8_t *src, size_t n, floe_buf *out, floe_error *err) {
    FLOE_RETURN_ERROR_IF(n > LZ4_MAX_INPUT_SIZE, err, FLOE_ELIMIT,
                         "lz4_raw: %zu bytes exceed the LZ4 block limit", n);
    int bound = LZ4_compressBound((int)n);
    int rc = floe_buf_reserve(out, (size_t)bound);
    FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "lz4_raw: output buffer: %s", floe_strerror(rc));
    static const char empty[1];
    int k = LZ4_compress_default(n ? (const char *)src : empty, (char *)out->data + out->len,
                                 (int)n, bound);
    FLOE_RETURN_ERROR_IF(k <= 0, err, FLOE_EINTERNAL, "lz4_raw: compression failed");
    out->len += (size_t)k;
    return 0;
}

/* One LZ4 block into exactly dst_len bytes; false if it is not one. */
static bool lz4_block_exact(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len) {
    if (n > INT_MAX || dst_len > INT_MAX)
        return false;
    static const char empty[1];
    char dummy[1];
    int k = LZ4_decompress_safe(n ? (const char *)src : empty, dst_len ? (char *)dst : dummy,
                                (int)n, (int)dst_len);
    return k >= 0 && (size_t)k == dst_len;
}

/* Hadoop framing (Hadoop's BlockCompressorStream): blocks of [BE32 decompressed size]
 * followed by one or more [BE32 compressed size][LZ4 block] chunks whose outputs add up to
 * the block's size (several when the writer's input exceeded its buffer). Decodes into
 * exactly dst[0..dst_len), or, when out != NULL, appends to out block by block. Returns 0,
 * FLOE_ECORRUPT when the bytes are not such framing (the caller tries other layouts), or
 * FLOE_ELIMIT when a plausible block would pass out->max. On failure out is unchanged. */
static int lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                      floe_buf *out) {
    const size_t start = out ? out->len : 0;
    size_t pos = 0, got = 0; /* got: bytes produced */
    int rc = FLOE_ECORRUPT;
    if (n == 0)
        goto fail;
    while (pos < n) {
        if (n - pos < 8)
            goto fail;
        const uint32_t block_len = load_be32(src + pos);
        pos += 4;
        /* no LZ4 data expands past 255:1, so a larger claim is not this framing */
        if (block_len > (n - pos) * (uint64_t)LZ4_MAX_RATIO + 16 || block_len > INT_MAX)
            goto fail;
        uint8_t *block;
        if (out) {
            if (block_len > out->max - out->len) {
                rc = FLOE_ELIMIT;
                goto fail;
            }
            if (floe_buf_reserve(out, block_len) < 0) {
                rc = FLOE_ENOMEM;
                goto fail;
            }
            block = out->data + out->len;
        } else {
            if (block_len > dst_len - got)
                goto fail;
            block = dst + got;
        }
        size_t filled = 0;
        do {
            if (n - pos < 4)
                goto fail;
            const uint32_t clen = load_be32(src + pos);
            pos += 4;
            if (clen == 0 || clen > n - pos || clen > INT_MAX)
                goto fail;
            char dummy[1];
            int k = LZ4_decompress_safe((const char *)src + pos,
                                        block_len ? (char *)block + filled : dummy, (int)clen,
                                        (int)(block_len - filled));
            if (k < 0)
                goto fail;
            filled += (size_t)k;
            pos += clen;
        } while (filled < block_len);
        got += block_len;
        if (out)
            out->len += block_len;
    }
    if (!out && got != dst_len)
        goto fail;
    return 0;
fail:
    if (out)
        floe_buf_truncate(out, start);
    return rc;
}

static int lz4f_decompress(floe_codec_ctx *ctx, const uint8_t *src, size_t n, out_sink *s,
                           floe_error *err) {
    if (!ctx->lz4f) {
        LZ4F_errorCode_t e = LZ4F_createDecompressionContext(&ctx->lz4f, LZ4F_VERSION);
        if (LZ4F_isError(e)) {
            ctx->lz4f = NULL;
            return floe_error_set(err, FLOE_ENOMEM, "%s: cannot create frame decoder: %s",
                                  s->codec, LZ4F_getErrorName(e));
        }
    }
    LZ4F_resetDecompressionContext(ctx->lz4f);
    size_t pos = 0, hint = 1;
    while (pos < n || hint != 0) {
        uint8_t *p = NULL;
        size_t room = 0;
        FLOE_FORWARD_IF_ERROR(sink_room(s, &p, &room, err));
        size_t dsz = room, ssz = n - pos;
        hint = LZ4F_decompress(ctx->lz4f, p, &dsz, src + pos, &ssz, NULL);
        if (LZ4F_isError(hint))
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos, "%s: frame: %s", s->codec,
                                 LZ4F_getErrorName(hint));
        pos += ssz;
        FLOE_FORWARD_IF_ERROR(sink_advance(s, dsz, err));
        if (hint != 0 && pos == n && dsz < room)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)n, "%s: frame truncated",
                                 s->codec);
        if (ssz == 0 && dsz == 0 && hint != 0)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos, "%s: frame decoder stalled",
                                 s->codec);
    }
    return 0;
}

/* A raw LZ4 block whose decompressed size is unknown: try growing buffers up to what a
 * block of n bytes can expand to (255:1) or the buffer's limit. */
static int lz4_block_grow(const uint8_t *src, size_t n, floe_buf *out, const char *name,
                          floe_error *err) {
    FLOE_RETURN_ERROR_IF(n > INT_MAX, err, FLOE_ELIMIT, "%s: block of %zu bytes too large",
                         name, n);
    const size_t start = out->len;
    const size_t most = n * LZ4_MAX_RATIO + 16; /* no LZ4 block expands further */
    size_t left = out->max - start;
    size_t want = n * 4 > SINK_GROW_MIN ? n * 4 : SINK_GROW_MIN;
    for (;;) {
        bool limited = false;
        if (want > most)
            want = most;
        if (want > INT_MAX)
            want = INT_MAX;
        if (want > left) {
            want = left;
            limited = true;
        }
        int rc = floe_buf_reserve(out, want);
        FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "%s: output buffer: %s", name, floe_strerror(rc));
        static const char empty[1];
        int k = LZ4_decompress_safe(n ? (const char *)src : empty, (char *)out->data + start,
                                    (int)n, (int)want);
        if (k >= 0) {
            out->len = start + (size_t)k;
            return 0;
        }
        if (limited)
            return floe_error_set(err, FLOE_ELIMIT,
                                  "%s: block does not decompress within the %zu-byte limit",
                                  name, left);
        if (want >= most || want >= INT_MAX)
            return floe_error_set(err, FLOE_ECORRUPT, "%s: corrupt block", name);
        want = want > SIZE_MAX / 2 ? SIZE_MAX : want * 2;
    }
}

static int lz4_hadoop_decompress(floe_codec_ctx *ctx, const uint8_t *src, size_t n,
                                 uint8_t *dst, size_t dst_len, floe_error *err) {
    if (lz4_hadoop(src, n, dst, dst_len, NULL) == 0)
        return 0;
    if (lz4_block_exact(src, n, dst, dst_len))
        return 0;
    if (n >= 4 && floe_load_le32(src) == LZ4F_MAGICNUMBER) {
        out_sink s;
        sink_exact(&s, "lz4", dst, dst_len);
        floe_error ferr;
        floe_error_clear(&ferr);
        int rc = lz4f_decompress(ctx, src, n, &s, &ferr);
        if (rc == 0)
            rc = sink_finish(&s, &ferr);
        if (rc == 0)
            return 0;
        return floe_error_set(err, rc, "lz4: not Hadoop-framed or a raw block; as a frame: %s",
                              ferr.msg);
    }
    return floe_error_set(err, FLOE_ECORRUPT,
                          "lz4: %zu bytes are neither Hadoop-framed LZ4, a raw LZ4 block of "
                          "%zu bytes, nor an LZ4 frame",
                          n, dst_len);
}

static int lz4_hadoop_decompress_buf(floe_codec_ctx *ctx, const uint8_t *src, size_t n,
                                     floe_buf *out, floe_error *err) {
    int rc = lz4_hadoop(src, n, NULL, 0, out);
    if (rc == 0)
        return 0;
    if (rc == FLOE_ELIMIT)
        return floe_error_set(err, rc, "lz4: Hadoop block decompresses past the %zu-byte limit",
                              out->max);
    if (rc == FLOE_ENOMEM)
        return floe_error_set(err, rc, "lz4: out of memory");
    if (n >= 4 && floe_load_le32(src) == LZ4F_MAGICNUMBER) {
        out_sink s;
        sink_buf(&s, "lz4", out);
        rc = lz4f_decompress(ctx, src, n, &s, err);
        if (rc < 0)
            sink_abandon(&s);
        return rc;
    }
    return lz4_block_grow(src, n, out, "lz4", err);
}

/* ---- public entry points --------------------------------------------------------------- */

int floe_codec_compress(floe_codec_ctx *ctx, floe_codec c, int level, const uint8_t *src,
                        size_t n, floe_buf *out, floe_error *err) {
    floe_codec_ctx local;
    int rc = 0;
    if (!ctx) {
        memset(&local, 0, sizeof local);
        ctx = &local;
    }
    FLOE_FORWARD_IF_ERROR(floe_codec_check_level(c, level, err));
    if (level == 0)
        level = floe_codec_default_level(c);
    switch (c) {
    case FLOE_CODEC_UNCOMPRESSED:
        rc = floe_buf_append(out, src, n);
        if (rc < 0)
            rc = floe_error_set(err, rc, "uncompressed: output buffer: %s", floe_strerror(rc));
        break;
    case FLOE_CODEC_SNAPPY: {
        const floe_lazy_snappy_fns *S = floe_lazy_snappy(err);
        if (!S) {
            rc = err ? err->code : FLOE_EUNSUPPORTED;
            break;
        }
        size_t bound = S->snappy_max_compressed_length(n);
        rc = floe_buf_reserve(out, bound);
        if (rc < 0) {
            rc = floe_error_set(err, rc, "snappy: output buffer: %s", floe_strerror(rc));
            break;
        }
        size_t produced = bound;
        static const char empty[1];
        if (S->snappy_compress(n ? (const char *)src : empty, n, (char *)out->data + out->len,
                               &produced) != SNAPPY_OK) {
            rc = floe_error_set(err, FLOE_EINTERNAL, "snappy: compression failed");
            break;
        }
        out->len += produced;
        break;
    }
    case FLOE_CODEC_GZIP:
        rc = zlib_compress(ctx, ZDEF_GZIP, level, "gzip", src, n, out, err);
        break;
    case FLOE_CODEC_DEFLATE:
        rc = zlib_compress(ctx, ZDEF_RAW, level, "deflate", src, n, out, err);
        break;
    case FLOE_CODEC_ZSTD:
        rc = zstd_compress(ctx, level, src, n, out, err);
        break;
    case FLOE_CODEC_LZ4_RAW:
        rc = lz4_compress_raw(src, n, out, err);
        break;
    case FLOE_CODEC_BROTLI:
        rc = brotli_compress(level, src, n, out, err);
        break;
    case FLOE_CODEC_LZ4:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED,
                            "lz4: the deprecated Hadoop LZ4 codec is read only; write lz4_raw");
        break;
    case FLOE_CODEC_LZO:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: LZO compression");
        break;
    default:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: compression codec %d", (int)c);
        break;
    }
    if (ctx == &local)
        ctx_release(&local);
    return rc;
}

int floe_codec_decompress(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src, size_t n,
                          uint8_t *dst, size_t dst_len, floe_error *err) {
    floe_codec_ctx local;
    int rc = 0;
    out_sink s;
    if (!ctx) {
        memset(&local, 0, sizeof local);
        ctx = &local;
    }
    switch (c) {
    case FLOE_CODEC_UNCOMPRESSED:
        if (n != dst_len)
            rc = floe_error_set(err, FLOE_ECORRUPT,
                                "uncompressed: page holds %zu bytes, announced %zu", n, dst_len);
        else if (n)
            memcpy(dst, src, n);
        break;
    case FLOE_CODEC_SNAPPY: {
        const floe_lazy_snappy_fns *S = floe_lazy_snappy(err);
        if (!S) {
            rc = err ? err->code : FLOE_EUNSUPPORTED;
            break;
        }
        size_t len = 0;
        static const char empty[1];
        const char *in = n ? (const char *)src : empty;
        if (S->snappy_uncompressed_length(in, n, &len) != SNAPPY_OK) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "snappy: bad length header");
            break;
        }
        if (len != dst_len) {
            rc = floe_error_set(err, FLOE_ECORRUPT,
                                "snappy: stream announces %zu bytes, page announced %zu", len,
                                dst_len);
            break;
        }
        char dummy[1];
        if (S->snappy_uncompress(in, n, dst_len ? (char *)dst : dummy, &len) != SNAPPY_OK ||
            len != dst_len)
            rc = floe_error_set(err, FLOE_ECORRUPT, "snappy: corrupt input");
        break;
    }
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE: {
        bool gz = c == FLOE_CODEC_GZIP;
        sink_exact(&s, gz ? "gzip" : "deflate", dst, dst_len);
        rc = zlib_inflate(ctx, gz ? 15 + 32 : -15, gz, src, n, &s, err);
        if (rc == 0)
            rc = sink_finish(&s, err);
        break;
    }
    case FLOE_CODEC_ZSTD:
        rc = zstd_decompress_exact(ctx, src, n, dst, dst_len, err);
        break;
    case FLOE_CODEC_LZ4_RAW:
        if (n > INT_MAX || dst_len > INT_MAX)
            rc = floe_error_set(err, FLOE_ELIMIT, "lz4_raw: block larger than 2 GiB");
        else if (!lz4_block_exact(src, n, dst, dst_len))
            rc = floe_error_set(err, FLOE_ECORRUPT,
                                "lz4_raw: corrupt block, or it does not decompress to exactly "
                                "the announced %zu bytes",
                                dst_len);
        break;
    case FLOE_CODEC_LZ4:
        rc = lz4_hadoop_decompress(ctx, src, n, dst, dst_len, err);
        break;
    case FLOE_CODEC_BROTLI:
        sink_exact(&s, "brotli", dst, dst_len);
        rc = brotli_decompress(src, n, &s, err);
        if (rc == 0)
            rc = sink_finish(&s, err);
        break;
    case FLOE_CODEC_LZO:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: LZO compression");
        break;
    default:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: compression codec %d", (int)c);
        break;
    }
    if (ctx == &local)
        ctx_release(&local);
    return rc;
}

int floe_codec_decompress_split(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src,
                                size_t n, floe_buf *head, size_t head_len, uint8_t *body,
                                size_t body_len, floe_error *err) {
    if (c != FLOE_CODEC_ZSTD || head_len > SIZE_MAX - body_len)
        return 1;
    floe_codec_ctx local;
    if (!ctx) {
        memset(&local, 0, sizeof local);
        ctx = &local;
    }
    int rc = zstd_decompress_split(ctx, src, n, head, head_len, body, body_len, err);
    if (ctx == &local)
        ctx_release(&local);
    return rc;
}

int floe_codec_decompress_buf(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src,
                              size_t n, floe_buf *out, floe_error *err) {
    floe_codec_ctx local;
    int rc = 0;
    out_sink s;
    sink_buf(&s, floe_codec_name(c), out);
    if (!ctx) {
        memset(&local, 0, sizeof local);
        ctx = &local;
    }
    switch (c) {
    case FLOE_CODEC_UNCOMPRESSED:
        rc = floe_buf_append(out, src, n);
        if (rc < 0)
            rc = floe_error_set(err, rc, "uncompressed: %zu bytes: %s", n, floe_strerror(rc));
        break;
    case FLOE_CODEC_SNAPPY: {
        const floe_lazy_snappy_fns *S = floe_lazy_snappy(err);
        if (!S) {
            rc = err ? err->code : FLOE_EUNSUPPORTED;
            break;
        }
        size_t len = 0;
        static const char empty[1];
        const char *in = n ? (const char *)src : empty;
        if (S->snappy_uncompressed_length(in, n, &len) != SNAPPY_OK) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "snappy: bad length header");
            break;
        }
        /* The announced length is checked before any allocation: against what n bytes
         * can expand to (a 3-byte copy yields at most 64 bytes) and the limit. */
        if (len > n * (uint64_t)SNAPPY_MAX_RATIO + 64) {
            rc = floe_error_set(err, FLOE_ECORRUPT,
                                "snappy: stream announces %zu bytes, more than %zu bytes can hold",
                                len, n);
            break;
        }
        if (len > out->max - out->len) {
            rc = floe_error_set(err, FLOE_ELIMIT,
                                "snappy: stream announces %zu bytes, past the limit", len);
            break;
        }
        rc = floe_buf_reserve(out, len);
        if (rc < 0) {
            rc = floe_error_set(err, rc, "snappy: output buffer: %s", floe_strerror(rc));
            break;
        }
        size_t got = len;
        if (S->snappy_uncompress(in, n, (char *)out->data + out->len, &got) != SNAPPY_OK ||
            got != len) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "snappy: corrupt input");
            break;
        }
        out->len += len;
        break;
    }
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_DEFLATE: {
        bool gz = c == FLOE_CODEC_GZIP;
        rc = zlib_inflate(ctx, gz ? 15 + 32 : -15, gz, src, n, &s, err);
        break;
    }
    case FLOE_CODEC_ZSTD:
        rc = zstd_decompress_stream(ctx, src, n, &s, err);
        break;
    case FLOE_CODEC_LZ4_RAW:
        rc = lz4_block_grow(src, n, out, "lz4_raw", err);
        break;
    case FLOE_CODEC_LZ4:
        rc = lz4_hadoop_decompress_buf(ctx, src, n, out, err);
        break;
    case FLOE_CODEC_BROTLI:
        rc = brotli_decompress(src, n, &s, err);
        break;
    case FLOE_CODEC_LZO:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: LZO compression");
        break;
    default:
        rc = floe_error_set(err, FLOE_EUNSUPPORTED, "unsupported: compression codec %d", (int)c);
        break;
    }
    if (rc < 0)
        sink_abandon(&s);
    if (ctx == &local)
        ctx_release(&local);
    return rc;
}
