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

/* Bounded reader over p[0..end) (floe_avro_cursor, public for callers with their own
 * record decoders); the helpers below are its short in-module names. */
typedef floe_avro_cursor avro_cursor;

static inline void avro_cursor_init(avro_cursor *c, const uint8_t *p, size_t n,
                                    int64_t base_off) {
    static const uint8_t empty[1];
    if (!p) /* NULL + 0 is undefined behaviour */
        p = empty, n = 0;
    c->p = p;
    c->end = p + n;
    c->start = p;
    c->base_off = base_off;
    c->budget = 0;
}

static inline int64_t avro_cursor_off(const avro_cursor *c) { return floe_avro_cursor_off(c); }
static inline size_t avro_cursor_left(const avro_cursor *c) { return floe_avro_cursor_left(c); }
static inline int avro_read_long(avro_cursor *c, int64_t *out, floe_error *err) {
    return floe_avro_cursor_long(c, out, err);
}
static inline int avro_read_int(avro_cursor *c, int32_t *out, floe_error *err) {
    return floe_avro_cursor_int(c, out, err);
}
static inline int avro_read_len(avro_cursor *c, size_t *out, floe_error *err) {
    return floe_avro_cursor_len(c, out, err);
}
static inline int avro_need(avro_cursor *c, size_t n, floe_error *err) {
    return floe_avro_cursor_need(c, n, err);
}

/* Smallest number of bytes any value of node encodes to (0 for null and empty records);
 * used to bound hostile record counts. Saturates; recursion is cut at the depth cap. */
size_t floe_avro_node_min_size(const floe_avro_node *n);

/* Schema parse with the arena owned elsewhere is not needed; helpers shared by writer
 * and reader: */
const char *floe_avro_codec_avro_name(floe_codec c); /* "null", "deflate", ...; NULL */
int floe_avro_codec_from_avro_name(const char *name, size_t len, floe_codec *out);

/* Writer schemas parsed once for many files: readers opened with the same cache and a
 * header whose avro.schema text is byte for byte one the cache has seen share its parse
 * and resolution plan (only for readers without a reader_schema: the plan depends on it).
 * Every manifest one writer writes has the same schema text, so a scan plan parses it
 * once instead of once per manifest. The cache keeps at most FLOE_AVRO_SCHEMA_CACHE_MAX
 * schemas (more are parsed per file, as without a cache); it must outlive its readers
 * and is not thread-safe. */
#define FLOE_AVRO_SCHEMA_CACHE_MAX 32
typedef struct floe_avro_schema_cache floe_avro_schema_cache;
floe_avro_schema_cache *floe_avro_schema_cache_new(void);
void floe_avro_schema_cache_free(floe_avro_schema_cache *c);
/* floe_avro_reader_open_input with a schema cache (NULL: none). */
int floe_avro_reader_open_input_cached(floe_input *in, const floe_avro_reader_options *opts,
                                       floe_avro_schema_cache *cache, floe_avro_reader **out,
                                       floe_error *err);
/* floe_avro_reader_open_mem with a schema cache (NULL: none). */
int floe_avro_reader_open_mem_cached(const void *p, size_t n,
                                     const floe_avro_reader_options *opts,
                                     floe_avro_schema_cache *cache, floe_avro_reader **out,
                                     floe_error *err);

#endif
