/*
 * zstream.h - one streaming decompressor with a cap, for inputs that arrive in pieces
 * and whose decoded size nothing announces: gzip (concatenated members), raw deflate,
 * zstd and LZ4 frames (each possibly concatenated). Used by the NDJSON line reader
 * (compressed input files), floe serve's Content-Encoding decoder and Avro deflate
 * blocks and gzip table metadata. Internal to libfloe.
 *
 * The cap bounds what a hostile stream can make us hold: the decoded bytes in all
 * (cap), and for zstd the window a frame may ask for (zstd_window_log_max). Passing
 * either is FLOE_ELIMIT with a message naming it.
 */
#ifndef FLOE_CODEC_ZSTREAM_H
#define FLOE_CODEC_ZSTREAM_H

#include "floe/common.h"

/* DEFLATE: one raw deflate stream (RFC 1951, Avro's "deflate"); input past its end is
 * left untaken. */
typedef enum {
    FLOE_ZSTREAM_GZIP,
    FLOE_ZSTREAM_ZSTD,
    FLOE_ZSTREAM_LZ4,
    FLOE_ZSTREAM_DEFLATE
} floe_zstream_kind;

typedef struct {
    floe_zstream_kind kind;
    uint64_t cap;             /* decoded bytes allowed in all; 0 = no cap */
    const char *what;         /* names the decoded bytes in the cap's error ("decoded body") */
    int zstd_window_log_max;  /* zstd: largest window accepted, log2 (0: zstd's default) */
    bool gzip_one_member;     /* gzip: stop after the first member, input past it untaken */
} floe_zstream_options;

typedef struct floe_zstream floe_zstream;

/* FLOE_ENOMEM. */
int floe_zstream_new(const floe_zstream_options *opts, floe_zstream **out, floe_error *err);
void floe_zstream_free(floe_zstream *z);
/* "gzip", "zstd", "lz4" or "deflate": every error message starts with it. */
const char *floe_zstream_name(const floe_zstream *z);
/* The cap on decoded bytes in all from now on (0 = none), and what names them. */
void floe_zstream_set_cap(floe_zstream *z, uint64_t cap, const char *what);

/* Decode the next input bytes in[0..n) into dst[0..room): *used input bytes taken,
 * *produced written. Goes on until all input is taken or dst is full; call again with
 * the rest (or n = 0) and fresh room to drain what a full dst held back. FLOE_ECORRUPT
 * for a bad stream ("<name>: <what the decoder says>"), FLOE_ELIMIT past the cap
 * ("<name>: <what> is larger than <cap> bytes") or past the zstd window ("zstd: the
 * stream's window is larger than <n> MiB"); the stream is not usable afterwards. */
int floe_zstream_decode(floe_zstream *z, const uint8_t *in, size_t n, size_t *used,
                        uint8_t *dst, size_t room, size_t *produced, floe_error *err);
/* Whether the input may end here: between gzip members or frames, after at least one;
 * for DEFLATE, after the stream's end. */
bool floe_zstream_complete(const floe_zstream *z);
/* Decoded bytes so far, and input bytes taken. */
uint64_t floe_zstream_total_out(const floe_zstream *z);
uint64_t floe_zstream_total_in(const floe_zstream *z);
/* Bytes the decoder itself holds (its state and window). */
size_t floe_zstream_bytes(const floe_zstream *z);
/* Bytes it may hold once it has decoded p[0..n), the next input bytes: for zstd at a
 * frame boundary, the window the frame starting there declares (up to the window
 * accepted) plus block buffers; otherwise floe_zstream_bytes. */
size_t floe_zstream_bytes_ahead(const floe_zstream *z, const uint8_t *p, size_t n);

/* zlib's zalloc / zfree through floe's allocator. */
void *floe_zlib_alloc(void *opaque, unsigned items, unsigned size);
void floe_zlib_free(void *opaque, void *p);

#endif
