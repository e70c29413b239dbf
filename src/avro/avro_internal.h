/*
 * avro_internal.h - shared by the avro module's files: the schema owner, a bounds-checked
 * input cursor for the binary encoding, and limits.
 */
#ifndef FLOE_AVRO_INTERNAL_H
#define FLOE_AVRO_INTERNAL_H

#include "floe/avro.h"

#include <string.h>

/* Nesting deeper than this, in schema JSON or in decoded data (recursive types), is
 * refused: it protects the C stack from hostile input. Iceberg manifests nest ~6. */
#define FLOE_AVRO_MAX_DEPTH 64
/* Decoding counts a union as a level of its own, so data may go twice as deep. */
#define FLOE_AVRO_MAX_DATA_DEPTH (2 * FLOE_AVRO_MAX_DEPTH)
/* Avro file magic: 'O' 'b' 'j' 1. */
#define FLOE_AVRO_MAGIC "Obj\x01"
#define FLOE_AVRO_SYNC_SIZE 16

struct floe_avro_schema {
    floe_arena arena;
    const floe_avro_node *root;
};

/* Bounded reader over p[0..end). base_off is the file offset of `start`, for errors. */
typedef struct avro_cursor {
    const uint8_t *p;
    const uint8_t *end;
    const uint8_t *start;
    int64_t base_off;
} avro_cursor;

static inline void avro_cursor_init(avro_cursor *c, const uint8_t *p, size_t n,
                                    int64_t base_off) {
    static const uint8_t empty[1];
    if (!p) /* NULL + 0 is undefined behaviour */
        p = empty, n = 0;
    c->p = p;
    c->end = p + n;
    c->start = p;
    c->base_off = base_off;
}

static inline int64_t avro_cursor_off(const avro_cursor *c) {
    return c->base_off + (int64_t)(c->p - c->start);
}

static inline size_t avro_cursor_left(const avro_cursor *c) {
    return (size_t)(c->end - c->p);
}

/* Zigzag varint long: at most 10 bytes, FLOE_ECORRUPT on truncation or when the 10th byte
 * still says "more". Bits past 64 in the 10th byte are dropped, as Java's BinaryDecoder
 * does: Python writers encode ids above INT64_MAX that way (the conformance table
 * equality_delete_extra_column has snapshot id 9876543210123456789), and refusing the
 * whole manifest over it would help nobody. */
static inline int avro_read_long(avro_cursor *c, int64_t *out, floe_error *err) {
    uint64_t u = 0;
    size_t left = avro_cursor_left(c);
    for (size_t i = 0; i < 10 && i < left; i++) {
        uint8_t b = c->p[i];
        u |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            c->p += i + 1;
            *out = floe_unzigzag64(u);
            return 0;
        }
    }
    /* the literal return code (not floe_error_at's) lets the compiler see every caller's
     * success path has its out-parameter written */
    floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                  "truncated or overlong varint at byte %lld", (long long)avro_cursor_off(c));
    return FLOE_ECORRUPT;
}

static inline int avro_read_int(avro_cursor *c, int32_t *out, floe_error *err) {
    int64_t v;
    if (avro_read_long(c, &v, err) < 0)
        return FLOE_ECORRUPT;
    if (FLOE_UNLIKELY(v < INT32_MIN || v > INT32_MAX)) {
        floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                      "int out of range (%lld) at byte %lld", (long long)v,
                      (long long)avro_cursor_off(c));
        return FLOE_ECORRUPT;
    }
    *out = (int32_t)v;
    return 0;
}

/* A length prefix (bytes, string): non-negative and within the remaining bytes. */
static inline int avro_read_len(avro_cursor *c, size_t *out, floe_error *err) {
    int64_t v;
    if (avro_read_long(c, &v, err) < 0)
        return FLOE_ECORRUPT;
    if (FLOE_UNLIKELY(v < 0 || (uint64_t)v > avro_cursor_left(c))) {
        floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                      "length %lld at byte %lld passes the end of the data (%zu left)",
                      (long long)v, (long long)avro_cursor_off(c), avro_cursor_left(c));
        return FLOE_ECORRUPT;
    }
    *out = (size_t)v;
    return 0;
}

static inline int avro_need(avro_cursor *c, size_t n, floe_error *err) {
    if (FLOE_UNLIKELY(avro_cursor_left(c) < n)) {
        floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                      "truncated: need %zu bytes at byte %lld, %zu left", n,
                      (long long)avro_cursor_off(c), avro_cursor_left(c));
        return FLOE_ECORRUPT;
    }
    return 0;
}

/* Smallest number of bytes any value of node encodes to (0 for null and empty records);
 * used to bound hostile record counts. Saturates; recursion is cut at the depth cap. */
size_t floe_avro_node_min_size(const floe_avro_node *n);

/* Schema parse with the arena owned elsewhere is not needed; helpers shared by writer
 * and reader: */
const char *floe_avro_codec_avro_name(floe_codec c); /* "null", "deflate", ...; NULL */
int floe_avro_codec_from_avro_name(const char *name, size_t len, floe_codec *out);

#endif
