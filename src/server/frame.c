/*
 * frame.c - encoding and checking WAL frames (layout in frame.h).
 *
 * Every length read back is checked against the bytes that remain before it is used; the
 * header CRC is checked before any header field is trusted, the body CRC before any
 * section is looked at.
 */
#include "frame.h"

#include <lz4.h>
#include <lz4frame.h>
#include <string.h>
#include <zstd.h>

int floe_frame_begin(floe_buf *b) {
    floe_buf_reset(b);
    int rc = floe_buf_reserve(b, FLOE_FRAME_HEADER);
    if (rc < 0)
        return rc;
    memset(b->data, 0, FLOE_FRAME_HEADER);
    b->len = FLOE_FRAME_HEADER;
    return 0;
}

int floe_frame_add_section(floe_buf *b, uint8_t kind, uint8_t codec, const void *route,
                           size_t route_len, uint32_t records, uint32_t raw_len,
                           const void *stored, size_t stored_len) {
    if (route_len > 0xFFFF || stored_len > FLOE_FRAME_MAX_BODY ||
        b->len + FLOE_SECTION_HEADER + route_len + stored_len >
            FLOE_FRAME_HEADER + (size_t)FLOE_FRAME_MAX_BODY)
        return FLOE_ELIMIT;
    int rc = floe_buf_reserve(b, FLOE_SECTION_HEADER + route_len + stored_len);
    if (rc < 0)
        return rc;
    uint8_t *h = b->data + b->len;
    h[0] = kind;
    h[1] = codec;
    h[2] = (uint8_t)route_len;
    h[3] = (uint8_t)(route_len >> 8);
    floe_store_le32(h + 4, records);
    floe_store_le32(h + 8, raw_len);
    floe_store_le32(h + 12, (uint32_t)stored_len);
    b->len += FLOE_SECTION_HEADER;
    if (route_len)
        memcpy(b->data + b->len, route, route_len);
    b->len += route_len;
    if (stored_len)
        memcpy(b->data + b->len, stored, stored_len);
    b->len += stored_len;
    /* running totals live in the header until floe_frame_end */
    uint8_t *fh = b->data;
    fh[6] = (uint8_t)(fh[6] + 1); /* section count, low byte; carried below */
    if (fh[6] == 0)
        fh[7]++;
    if (kind == FLOE_SECTION_RECORDS) {
        floe_store_le32(fh + 16, floe_load_le32(fh + 16) + records);
        floe_store_le32(fh + 20, floe_load_le32(fh + 20) + raw_len);
    }
    return 0;
}

void floe_frame_end(floe_buf *b) {
    uint8_t *h = b->data;
    floe_store_le32(h, FLOE_FRAME_MAGIC);
    h[4] = FLOE_FRAME_VERSION;
    h[5] = 0;
    size_t body = b->len - FLOE_FRAME_HEADER;
    floe_store_le32(h + 24, (uint32_t)body);
    floe_store_le32(h + 28, floe_crc32c(0, h + FLOE_FRAME_HEADER, body));
}

void floe_frame_stamp(uint8_t *frame, uint64_t frame_id, uint64_t time_ms) {
    floe_store_le64(frame + 8, frame_id);
    floe_store_le64(frame + 32, time_ms);
    floe_store_le32(frame + 40, floe_crc32c(0, frame, 40));
    floe_store_le32(frame + 44, 0);
}

int floe_frame_parse(const uint8_t *p, size_t n, floe_frame_view *out, size_t *consumed,
                     floe_error *err) {
    if (n < FLOE_FRAME_HEADER)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "frame: torn header (%zu bytes)", n);
    if (floe_load_le32(p) != FLOE_FRAME_MAGIC)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "frame: bad magic");
    if (floe_load_le32(p + 40) != floe_crc32c(0, p, 40))
        return floe_error_at(err, FLOE_ECORRUPT, 40, "frame: header checksum mismatch");
    if (p[4] != FLOE_FRAME_VERSION)
        return floe_error_at(err, FLOE_ECORRUPT, 4, "frame: unsupported version %u", p[4]);
    uint32_t body = floe_load_le32(p + 24);
    if (body > FLOE_FRAME_MAX_BODY)
        return floe_error_at(err, FLOE_ECORRUPT, 24, "frame: body length %u past the cap",
                             body);
    if (body > n - FLOE_FRAME_HEADER)
        return floe_error_at(err, FLOE_ECORRUPT, 24,
                             "frame: torn body (%u bytes announced, %zu present)", body,
                             n - FLOE_FRAME_HEADER);
    const uint8_t *b = p + FLOE_FRAME_HEADER;
    if (floe_load_le32(p + 28) != floe_crc32c(0, b, body))
        return floe_error_at(err, FLOE_ECORRUPT, 28, "frame: body checksum mismatch");
    floe_frame_view v = {0};
    v.frame_id = floe_load_le64(p + 8);
    v.time_ms = floe_load_le64(p + 32);
    v.nsections = (uint32_t)p[6] | ((uint32_t)p[7] << 8);
    v.records = floe_load_le32(p + 16);
    v.raw_len = floe_load_le32(p + 20);
    v.body = b;
    v.body_len = body;
    /* Walk the sections once so iterators can trust them. */
    size_t pos = 0;
    uint32_t nsec = 0;
    uint64_t recs = 0;
    while (pos < body) {
        if (body - pos < FLOE_SECTION_HEADER)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: torn section header");
        const uint8_t *s = b + pos;
        size_t route = (size_t)s[2] | ((size_t)s[3] << 8);
        size_t stored = floe_load_le32(s + 12);
        if (s[0] < FLOE_SECTION_RECORDS || s[0] > FLOE_SECTION_ANSWER || s[1] > FLOE_CODEC_MAX_)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: bad section kind %u / codec %u", s[0], s[1]);
        if (route + stored > body - pos - FLOE_SECTION_HEADER)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: section longer than the body");
        if (s[0] == FLOE_SECTION_RECORDS)
            recs += floe_load_le32(s + 4);
        pos += FLOE_SECTION_HEADER + route + stored;
        nsec++;
    }
    if (nsec != v.nsections || recs != v.records)
        return floe_error_at(err, FLOE_ECORRUPT, 6, "frame: section count or records do not "
                             "add up");
    *out = v;
    *consumed = FLOE_FRAME_HEADER + body;
    return 0;
}

int floe_frame_next_section(const floe_frame_view *f, size_t *pos, floe_frame_section *s) {
    if (*pos >= f->body_len)
        return 0;
    const uint8_t *h = f->body + *pos;
    s->kind = h[0];
    s->codec = h[1];
    s->route_len = (size_t)h[2] | ((size_t)h[3] << 8);
    s->records = floe_load_le32(h + 4);
    s->raw_len = floe_load_le32(h + 8);
    s->stored_len = floe_load_le32(h + 12);
    s->route = h + FLOE_SECTION_HEADER;
    s->stored = s->route + s->route_len;
    *pos += FLOE_SECTION_HEADER + s->route_len + s->stored_len;
    return 1;
}

void floe_segment_header(uint8_t out[FLOE_SEGMENT_HEADER], uint64_t segno) {
    memcpy(out, "FLOEWAL1", 8);
    floe_store_le64(out + 8, segno);
}

bool floe_segment_header_ok(const uint8_t *p, size_t n, uint64_t *segno) {
    if (n < FLOE_SEGMENT_HEADER || memcmp(p, "FLOEWAL1", 8) != 0)
        return false;
    *segno = floe_load_le64(p + 8);
    return true;
}

/* ---- section codecs ------------------------------------------------------------------ */

struct floe_section_coder {
    ZSTD_CCtx *zc;
    void *lz4_state;         /* LZ4_sizeofState() bytes */
};

floe_section_coder *floe_section_coder_new(void) {
    return floe_calloc(1, sizeof(floe_section_coder));
}

void floe_section_coder_free(floe_section_coder *c) {
    if (!c)
        return;
    ZSTD_freeCCtx(c->zc);
    floe_free(c->lz4_state);
    floe_free(c);
}

/* XXH32 (the LZ4 frame format's header and content checksums), from its specification. */
#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static uint32_t xxh32(const uint8_t *p, size_t n, uint32_t seed) {
    const uint8_t *end = p + n;
    uint32_t h;
    if (n >= 16) {
        uint32_t v1 = seed + XXH_P1 + XXH_P2, v2 = seed + XXH_P2, v3 = seed, v4 = seed - XXH_P1;
        const uint8_t *limit = end - 16;
        do {
            v1 = rotl32(v1 + floe_load_le32(p) * XXH_P2, 13) * XXH_P1;
            v2 = rotl32(v2 + floe_load_le32(p + 4) * XXH_P2, 13) * XXH_P1;
            v3 = rotl32(v3 + floe_load_le32(p + 8) * XXH_P2, 13) * XXH_P1;
            v4 = rotl32(v4 + floe_load_le32(p + 12) * XXH_P2, 13) * XXH_P1;
            p += 16;
        } while (p <= limit);
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = seed + XXH_P5;
    }
    h += (uint32_t)n;
    for (; end - p >= 4; p += 4)
        h = rotl32(h + floe_load_le32(p) * XXH_P3, 17) * XXH_P4;
    for (; p < end; p++)
        h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}

uint32_t floe_section_xxh32(const void *p, size_t n, uint32_t seed) {
    return xxh32(p, n, seed);
}

/* One LZ4 frame (LZ4 frame format v1.6.x): magic, descriptor (independent blocks of up to
 * 256 KiB, content size), header checksum, blocks, end mark. No content checksum, as
 * before with zstd: the WAL frame's CRC covers the bytes until they are sealed, and
 * checking an XXH32 at compaction cost ~10% of the compactor's time. Written here around the block API because liblz4's frame compressor resets
 * its whole context per frame, which cost as much as the compression itself on the
 * ~16 small sections of a request; any LZ4 frame reader (LZ4F_decompress, lz4 -d) reads
 * it. A block that does not shrink is stored raw (high bit of its size). */
#define LZ4_BLOCK_MAX (256u << 10)

static int lz4_encode(floe_section_coder *c, const uint8_t *p, size_t n, floe_buf *out) {
    if (!c->lz4_state && !(c->lz4_state = floe_malloc((size_t)LZ4_sizeofState())))
        return FLOE_ENOMEM;
    size_t nblocks = n / LZ4_BLOCK_MAX + 1;
    size_t bound = 15 + nblocks * (4 + (size_t)LZ4_compressBound((int)LZ4_BLOCK_MAX)) + 4;
    FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, bound));
    uint8_t *o = out->data;
    floe_store_le32(o, 0x184D2204u);
    o[4] = 0x40 | 0x20 | 0x08;         /* version 01, independent blocks, content size */
    o[5] = 5 << 4;                     /* block maximum 256 KiB */
    floe_store_le64(o + 6, (uint64_t)n);
    o[14] = (uint8_t)(xxh32(o + 4, 10, 0) >> 8);
    size_t len = 15;
    for (size_t at = 0; at < n;) {
        size_t k = n - at < LZ4_BLOCK_MAX ? n - at : LZ4_BLOCK_MAX;
        int z = LZ4_compress_fast_extState(c->lz4_state, (const char *)p + at,
                                           (char *)o + len + 4, (int)k,
                                           (int)(bound - len - 4), 1);
        if (z > 0 && (size_t)z < k) {
            floe_store_le32(o + len, (uint32_t)z);
            len += 4 + (size_t)z;
        } else {
            floe_store_le32(o + len, (uint32_t)k | 0x80000000u);
            memcpy(o + len + 4, p + at, k);
            len += 4 + k;
        }
        at += k;
    }
    floe_store_le32(o + len, 0); /* end mark */
    out->len = len + 4;
    return 0;
}

int floe_section_encode(floe_section_coder *c, uint8_t codec, int level, const uint8_t *p,
                        size_t n, floe_buf *out) {
    floe_buf_reset(out);
    if (codec == FLOE_CODEC_NONE_)
        return n ? floe_buf_append(out, p, n) : 0;
    if (codec == FLOE_CODEC_ZSTD_) {
        if (!c->zc && !(c->zc = ZSTD_createCCtx()))
            return FLOE_ENOMEM;
        size_t bound = ZSTD_compressBound(n);
        FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, bound));
        size_t z = ZSTD_compressCCtx(c->zc, out->data, bound, p, n, level);
        if (ZSTD_isError(z))
            return FLOE_EINTERNAL;
        out->len = z;
        return 0;
    }
    if (codec != FLOE_CODEC_LZ4_)
        return FLOE_EINVALID;
    if (n > FLOE_SECTION_MAX_RAW)
        return FLOE_ELIMIT;
    return lz4_encode(c, p, n, out);
}

int floe_section_decode(uint8_t codec, const uint8_t *stored, size_t stored_len,
                        uint32_t raw_len, floe_buf *out, floe_error *err) {
    if (raw_len > FLOE_SECTION_MAX_RAW)
        return floe_error_set(err, FLOE_ELIMIT, "section: %u bytes decoded is over the cap",
                              raw_len);
    if (codec == FLOE_CODEC_NONE_) {
        if (stored_len != raw_len)
            return floe_error_set(err, FLOE_ECORRUPT, "section: %zu bytes stored, %u announced",
                                  stored_len, raw_len);
        return raw_len ? floe_buf_append(out, stored, stored_len) : 0;
    }
    if (codec != FLOE_CODEC_ZSTD_ && codec != FLOE_CODEC_LZ4_)
        return floe_error_set(err, FLOE_ECORRUPT, "section: unknown codec %u", codec);
    int rc = floe_buf_reserve(out, raw_len);
    if (rc < 0)
        return floe_error_set(err, rc, "out of memory");
    uint8_t *dst = out->data + out->len;
    if (codec == FLOE_CODEC_ZSTD_) {
        unsigned long long sz = ZSTD_getFrameContentSize(stored, stored_len);
        if (sz != raw_len || ZSTD_findFrameCompressedSize(stored, stored_len) != stored_len)
            return floe_error_set(err, FLOE_ECORRUPT, "section: not one zstd frame of %u bytes",
                                  raw_len);
        size_t got = ZSTD_decompress(dst, raw_len, stored, stored_len);
        if (ZSTD_isError(got) || got != raw_len)
            return floe_error_set(err, FLOE_ECORRUPT, "section: bad zstd data");
        out->len += got;
        return 0;
    }
    LZ4F_dctx *d = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t in_pos = 0, got = 0, hint = 1;
    while (hint != 0) {
        size_t in_n = stored_len - in_pos, out_n = raw_len - got;
        hint = LZ4F_decompress(d, dst + got, &out_n, stored + in_pos, &in_n, NULL);
        if (LZ4F_isError(hint)) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "section: bad lz4 data: %s",
                                LZ4F_getErrorName(hint));
            break;
        }
        in_pos += in_n;
        got += out_n;
        if (hint != 0 && in_n == 0 && out_n == 0) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "section: lz4 frame is truncated or "
                                "longer than %u bytes", raw_len);
            break;
        }
    }
    LZ4F_freeDecompressionContext(d);
    if (rc == 0 && (in_pos != stored_len || got != raw_len))
        rc = floe_error_set(err, FLOE_ECORRUPT, "section: lz4 frame of %zu bytes, %u "
                            "announced (%zu of %zu stored bytes used)", got, raw_len, in_pos,
                            stored_len);
    if (rc == 0)
        out->len += got;
    return rc;
}

int floe_section_decode_all(uint8_t codec, const uint8_t *stored, size_t stored_len,
                            size_t raw_len, floe_buf *out, floe_error *err) {
    if (codec == FLOE_CODEC_NONE_) {
        if (stored_len != raw_len)
            return floe_error_set(err, FLOE_ECORRUPT, "sections: %zu bytes stored, %zu "
                                  "announced", stored_len, raw_len);
        return raw_len && floe_buf_append(out, stored, stored_len) < 0
                   ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                   : 0;
    }
    if (codec != FLOE_CODEC_ZSTD_ && codec != FLOE_CODEC_LZ4_)
        return floe_error_set(err, FLOE_ECORRUPT, "sections: unknown codec %u", codec);
    if (floe_buf_reserve(out, raw_len) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    uint8_t *dst = out->data + out->len;
    if (codec == FLOE_CODEC_ZSTD_) {
        /* ZSTD_decompress decodes concatenated frames */
        size_t got = ZSTD_decompress(dst, raw_len, stored, stored_len);
        if (ZSTD_isError(got) || got != raw_len)
            return floe_error_set(err, FLOE_ECORRUPT, "sections: bad zstd data");
        out->len += got;
        return 0;
    }
    LZ4F_dctx *d = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    size_t in_pos = 0, got = 0;
    while (in_pos < stored_len) { /* the context starts a new frame after each one ends */
        size_t in_n = stored_len - in_pos, out_n = raw_len - got;
        size_t hint = LZ4F_decompress(d, dst + got, &out_n, stored + in_pos, &in_n, NULL);
        if (LZ4F_isError(hint)) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "sections: bad lz4 data: %s",
                                LZ4F_getErrorName(hint));
            break;
        }
        in_pos += in_n;
        got += out_n;
        if (in_n == 0 && out_n == 0) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "sections: lz4 data longer than %zu "
                                "bytes", raw_len);
            break;
        }
    }
    LZ4F_freeDecompressionContext(d);
    if (rc == 0 && got != raw_len)
        rc = floe_error_set(err, FLOE_ECORRUPT, "sections: %zu bytes decoded, %zu announced",
                            got, raw_len);
    if (rc == 0)
        out->len += got;
    return rc;
}
