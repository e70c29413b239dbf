/*
 * zstream.c - the streaming decompressor with a cap (zstream.h): gzip and raw deflate
 * through zlib, zstd through its streaming API, LZ4 frames through lz4frame.
 */
#include "zstream.h"

#include <lz4frame.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define GZIP_STATE_BYTES ((size_t)48 << 10) /* inflate's state and 32 KiB window */
#define LZ4_STATE_BYTES ((size_t)4 << 20)   /* an LZ4 frame's largest block, buffered */
#define ZSTD_DEFAULT_WINDOW_LOG 27          /* zstd's own limit when none is set */

struct floe_zstream {
    floe_zstream_kind kind;
    uint64_t cap, total_out, total_in;
    bool one;             /* one gzip member or deflate stream */
    const char *what;
    int window_log_max;
    z_stream zs;
    bool z_ready, z_end;  /* gzip: inflateInit2 done; the last member ended */
    ZSTD_DStream *zd;
    LZ4F_dctx *lz;
    size_t hint;          /* zstd, lz4: the last return (0 = at a frame boundary) */
    bool started;         /* some input was decoded */
};

void *floe_zlib_alloc(void *opaque, unsigned items, unsigned size) {
    (void)opaque;
    return floe_calloc(items, size);
}

void floe_zlib_free(void *opaque, void *p) {
    (void)opaque;
    floe_free(p);
}

static const char *kind_name(floe_zstream_kind k) {
    switch (k) {
    case FLOE_ZSTREAM_GZIP: return "gzip";
    case FLOE_ZSTREAM_ZSTD: return "zstd";
    case FLOE_ZSTREAM_LZ4: return "lz4";
    default: return "deflate";
    }
}

const char *floe_zstream_name(const floe_zstream *z) {
    return kind_name(z->kind);
}

int floe_zstream_new(const floe_zstream_options *o, floe_zstream **out, floe_error *err) {
    const char *name = kind_name(o->kind);
    floe_zstream *z = floe_calloc(1, sizeof *z);
    if (!z)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", name);
    z->kind = o->kind;
    z->one = o->kind == FLOE_ZSTREAM_DEFLATE ||
             (o->kind == FLOE_ZSTREAM_GZIP && o->gzip_one_member);
    z->window_log_max = o->zstd_window_log_max ? o->zstd_window_log_max : ZSTD_DEFAULT_WINDOW_LOG;
    floe_zstream_set_cap(z, o->cap, o->what);
    z->hint = 1;
    bool ok = true;
    if (o->kind == FLOE_ZSTREAM_GZIP || o->kind == FLOE_ZSTREAM_DEFLATE) {
        int bits = o->kind == FLOE_ZSTREAM_GZIP ? 16 + MAX_WBITS : -MAX_WBITS;
        z->zs.zalloc = floe_zlib_alloc;
        z->zs.zfree = floe_zlib_free;
        ok = z->z_ready = inflateInit2(&z->zs, bits) == Z_OK;
    } else if (o->kind == FLOE_ZSTREAM_ZSTD) {
        ok = (z->zd = ZSTD_createDStream()) != NULL;
        if (ok)
            ZSTD_DCtx_setParameter(z->zd, ZSTD_d_windowLogMax, z->window_log_max);
    } else {
        ok = !LZ4F_isError(LZ4F_createDecompressionContext(&z->lz, LZ4F_VERSION));
        if (!ok)
            z->lz = NULL;
    }
    if (!ok) {
        floe_zstream_free(z);
        return floe_error_set(err, FLOE_ENOMEM, "%s: cannot initialise", name);
    }
    *out = z;
    return 0;
}

void floe_zstream_free(floe_zstream *z) {
    if (!z)
        return;
    if (z->z_ready)
        inflateEnd(&z->zs);
    ZSTD_freeDStream(z->zd);
    if (z->lz)
        LZ4F_freeDecompressionContext(z->lz);
    floe_free(z);
}

void floe_zstream_set_cap(floe_zstream *z, uint64_t cap, const char *what) {
    z->cap = cap;
    z->what = what ? what : "decoded data";
}

bool floe_zstream_complete(const floe_zstream *z) {
    return z->z_ready ? z->z_end : z->hint == 0;
}

uint64_t floe_zstream_total_out(const floe_zstream *z) {
    return z->total_out;
}

uint64_t floe_zstream_total_in(const floe_zstream *z) {
    return z->total_in;
}

size_t floe_zstream_bytes(const floe_zstream *z) {
    switch (z->kind) {
    case FLOE_ZSTREAM_GZIP:
    case FLOE_ZSTREAM_DEFLATE: return sizeof *z + GZIP_STATE_BYTES;
    case FLOE_ZSTREAM_ZSTD: return sizeof *z + ZSTD_sizeof_DStream(z->zd);
    default: return sizeof *z + LZ4_STATE_BYTES;
    }
}

/* The window a zstd frame starting at p[0..n) declares (RFC 8878 section 3.1.1.1: the
 * window descriptor, or the content size of a single-segment frame); 0 when these bytes
 * do not tell (too few, a skippable frame, not a frame). */
static uint64_t zstd_frame_window(const uint8_t *p, size_t n) {
    if (n < 6 || floe_load_le32(p) != 0xFD2FB528u)
        return 0;
    uint8_t fhd = p[4];
    if (!(fhd & 0x20)) { /* a window descriptor follows */
        uint64_t base = (uint64_t)1 << (10 + (p[5] >> 3));
        return base + (base / 8) * (p[5] & 7);
    }
    static const size_t did_size[4] = {0, 1, 2, 4}, fcs_size[4] = {1, 2, 4, 8};
    size_t at = 5 + did_size[fhd & 3], fl = fcs_size[fhd >> 6];
    if (n < at + fl)
        return 0;
    uint64_t fcs = 0;
    for (size_t i = fl; i-- > 0;)
        fcs = fcs << 8 | p[at + i];
    return fl == 2 ? fcs + 256 : fcs;
}

size_t floe_zstream_bytes_ahead(const floe_zstream *z, const uint8_t *p, size_t n) {
    size_t now = floe_zstream_bytes(z);
    if (z->kind != FLOE_ZSTREAM_ZSTD || (z->hint != 0 && z->started))
        return now;
    uint64_t w = zstd_frame_window(p, n), wmax = (uint64_t)1 << z->window_log_max;
    /* the window, two blocks of input and output (128 KiB each) and the context */
    size_t need = (size_t)(w < wmax ? w : wmax) + ((size_t)320 << 10);
    return need > now ? need : now;
}

/* One decoder call: in[0..n) into dst[0..room). */
static int step(floe_zstream *z, const uint8_t *in, size_t n, size_t *used, uint8_t *dst,
                size_t room, size_t *produced, floe_error *err) {
    if (z->z_ready) {
        if (z->z_end) {
            inflateReset(&z->zs); /* another gzip member follows */
            z->z_end = false;
        }
        uInt in_n = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
        uInt out_n = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
        z->zs.next_in = (Bytef *)in;
        z->zs.avail_in = in_n;
        z->zs.next_out = dst;
        z->zs.avail_out = out_n;
        int zr = inflate(&z->zs, Z_NO_FLUSH);
        *used = in_n - z->zs.avail_in;
        *produced = out_n - z->zs.avail_out;
        if (zr == Z_STREAM_END)
            z->z_end = true;
        else if (zr != Z_OK && zr != Z_BUF_ERROR)
            return floe_error_set(err, zr == Z_MEM_ERROR ? FLOE_ENOMEM : FLOE_ECORRUPT, "%s: %s",
                                  kind_name(z->kind), z->zs.msg ? z->zs.msg : "bad data");
        return 0;
    }
    if (z->kind == FLOE_ZSTREAM_ZSTD) {
        ZSTD_inBuffer ib = {in, n, 0};
        ZSTD_outBuffer ob = {dst, room, 0};
        size_t r = ZSTD_decompressStream(z->zd, &ob, &ib);
        if (ZSTD_isError(r)) {
            if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
                return floe_error_set(err, FLOE_ELIMIT, "zstd: the stream's window is larger "
                                      "than %d MiB",
                                      1 << (z->window_log_max - 20));
            return floe_error_set(err, FLOE_ECORRUPT, "zstd: %s", ZSTD_getErrorName(r));
        }
        z->hint = r;
        *used = ib.pos;
        *produced = ob.pos;
        return 0;
    }
    size_t in_n = n, out_n = room;
    size_t r = LZ4F_decompress(z->lz, dst, &out_n, in, &in_n, NULL);
    if (LZ4F_isError(r))
        return floe_error_set(err, FLOE_ECORRUPT, "lz4: %s", LZ4F_getErrorName(r));
    z->hint = r; /* 0 = between frames */
    *used = in_n;
    *produced = out_n;
    return 0;
}

int floe_zstream_decode(floe_zstream *z, const uint8_t *in, size_t n, size_t *used,
                        uint8_t *dst, size_t room, size_t *produced, floe_error *err) {
    *used = *produced = 0;
    for (;;) {
        /* a member or frame ended with the input: all is flushed, and another call would
         * start waiting for the next one */
        if ((*used == n && floe_zstream_complete(z)) ||
            (z->one && z->z_end))
            return 0;
        size_t u = 0, p = 0;
        int rc = step(z, in + *used, n - *used, &u, dst + *produced, room - *produced, &p, err);
        if (rc < 0)
            return rc;
        z->started = true;
        *used += u;
        z->total_in += u;
        *produced += p;
        z->total_out += p;
        if (z->cap && z->total_out > z->cap)
            return floe_error_set(err, FLOE_ELIMIT, "%s: %s is larger than %llu bytes",
                                  kind_name(z->kind), z->what, (unsigned long long)z->cap);
        if (*produced == room)
            return 0; /* full: the caller drains and calls again */
        if (*used == n)
            return 0; /* everything taken, nothing held back */
        if (u == 0 && p == 0)
            return 0; /* the decoder wants more input than it has */
    }
}
