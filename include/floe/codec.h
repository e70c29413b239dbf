/*
 * floe/codec.h - block compression codecs used by Parquet pages and Avro blocks.
 *
 * Values are Parquet's CompressionCodec enum (parquet.thrift). Each codec is a thin layer
 * over the Debian library (snappy, zlib, zstd, lz4, brotli); LZ4 (codec 5) also reads the
 * Hadoop-framed layout and the legacy raw-block layout older writers used.
 *
 * Ownership and threads: compress appends to the caller's floe_buf, decompress fills the
 * caller's buffers; a floe_codec_ctx (floe_codec_ctx_new / _free) is scratch state for one
 * thread at a time.
 */
#ifndef FLOE_CODEC_H
#define FLOE_CODEC_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef enum floe_codec {
    FLOE_CODEC_UNCOMPRESSED = 0,
    FLOE_CODEC_SNAPPY = 1,
    FLOE_CODEC_GZIP = 2,
    FLOE_CODEC_LZO = 3,    /* not supported: FLOE_EUNSUPPORTED */
    FLOE_CODEC_BROTLI = 4,
    FLOE_CODEC_LZ4 = 5,    /* deprecated Hadoop LZ4; read only */
    FLOE_CODEC_ZSTD = 6,
    FLOE_CODEC_LZ4_RAW = 7,
    FLOE_CODEC_DEFLATE = 100, /* raw zlib stream, for Avro's "deflate" (not a Parquet codec) */
} floe_codec;

/* Per-thread reusable state (zstd contexts, zlib streams). Not thread-safe; one per
 * worker. A NULL ctx is allowed everywhere and costs an allocation per call. Each thread
 * keeps one context it freed (a context freed while it keeps one is freed), with its
 * decompression state, for its next floe_codec_ctx_new (a reader per file then creates no
 * zstd context after the first); the thread's exit frees it. */
typedef struct floe_codec_ctx floe_codec_ctx;
floe_codec_ctx *floe_codec_ctx_new(void);
void floe_codec_ctx_free(floe_codec_ctx *ctx);

/* "snappy", "zstd", "gzip", "lz4_raw" (also "lz4raw"), "brotli", "none"/"uncompressed". */
int floe_codec_from_name(const char *name, floe_codec *out);
const char *floe_codec_name(floe_codec c);
/* Default level for codecs that take one (zstd 3, gzip 6, brotli 4); 0 otherwise. */
int floe_codec_default_level(floe_codec c);
/* 0 when level suits codec c: 0 (the default), or within the codec's range (zstd
 * ZSTD_minCLevel()..22, gzip and deflate 1..9, brotli 0..11); codecs without levels take
 * any. Else FLOE_EINVALID, "<codec>: level L out of range LO..HI". */
int floe_codec_check_level(floe_codec c, int level, floe_error *err) FLOE_NODISCARD;

/* Compress src[0..n) and append the result to out. level 0 = the codec's default. */
int floe_codec_compress(floe_codec_ctx *ctx, floe_codec c, int level, const uint8_t *src,
                        size_t n, floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* Decompress src[0..n) into dst, which must receive exactly dst_len bytes (the page's
 * uncompressed size). Fewer or more bytes is FLOE_ECORRUPT. */
int floe_codec_decompress(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src, size_t n,
                          uint8_t *dst, size_t dst_len, floe_error *err) FLOE_NODISCARD;
/* Decompress src[0..n), which must yield exactly head_len + body_len bytes, into two
 * places: the first head_len bytes into head (its contents replaced; its capacity beyond
 * head_len is used as scratch) and the rest into body. For a page whose values can be
 * decoded straight into their final buffer while its small level prefix goes elsewhere.
 * Returns 1 without writing to body when the codec or the stream's shape does not allow
 * it (today: anything but a single zstd frame announcing its size): use
 * floe_codec_decompress then. Errors as floe_codec_decompress; on error body and head hold
 * unspecified bytes. */
int floe_codec_decompress_split(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src,
                                size_t n, floe_buf *head, size_t head_len, uint8_t *body,
                                size_t body_len, floe_error *err) FLOE_NODISCARD;
/* Decompress when the output size is unknown (Avro blocks), appending to out, never
 * growing out past its max. */
int floe_codec_decompress_buf(floe_codec_ctx *ctx, floe_codec c, const uint8_t *src,
                              size_t n, floe_buf *out, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
