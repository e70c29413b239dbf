/*
 * floe/avro.h - Avro schemas, values and object container files (Avro 1.11 spec), for
 * Iceberg manifests and manifest lists.
 *
 * Three parts:
 *   - Schemas: parsed from the JSON text into a read-only tree of floe_avro_node living
 *     in one arena owned by a floe_avro_schema. Iceberg's properties (field-id,
 *     element-id, key-id, value-id), logicalType and any other attribute are kept and
 *     written back by floe_avro_schema_to_json.
 *   - Values: a generic tree (floe_avro_value) that records are built in and decoded
 *     into, allocated in a caller's arena. Low-level encode helpers for callers that
 *     encode records themselves.
 *   - Containers: a writer that appends a complete file to a floe_buf (magic, header
 *     map with avro.schema / avro.codec / extra metadata, sync marker, blocks), and a
 *     reader over memory or a floe_input that checks every count, size and sync marker
 *     and resolves the writer's schema against an expected reader schema.
 *
 * Codecs: "null", "deflate" (raw RFC 1951), "snappy" (block + big-endian CRC-32 of the
 * uncompressed data), "zstandard".
 *
 * Ownership and threads: a floe_avro_schema owns its nodes until floe_avro_schema_free
 * (nodes are borrowed until then); values live in the caller's arena; a reader or writer
 * owns its state until its _close and is used by one thread at a time.
 */
#ifndef FLOE_AVRO_H
#define FLOE_AVRO_H

#include "floe/codec.h"
#include "floe/common.h"
#include "floe/io.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* ---------------------------------------------------------------------------------------
 * Schemas
 * ------------------------------------------------------------------------------------- */
typedef enum floe_avro_type {
    FLOE_AVRO_NULL = 0,
    FLOE_AVRO_BOOLEAN,
    FLOE_AVRO_INT,
    FLOE_AVRO_LONG,
    FLOE_AVRO_FLOAT,
    FLOE_AVRO_DOUBLE,
    FLOE_AVRO_BYTES,
    FLOE_AVRO_STRING,
    FLOE_AVRO_RECORD,
    FLOE_AVRO_ENUM,
    FLOE_AVRO_ARRAY,
    FLOE_AVRO_MAP,
    FLOE_AVRO_UNION,
    FLOE_AVRO_FIXED,
} floe_avro_type;

/* "null", "record", ...; never NULL. */
const char *floe_avro_type_name(floe_avro_type t);

typedef struct floe_avro_node floe_avro_node;
typedef struct floe_avro_value floe_avro_value;

/* One field of a record. */
typedef struct floe_avro_field {
    const char *name;
    const floe_avro_node *type;
    const char *doc;                  /* NULL if absent */
    const char *const *aliases;       /* n_aliases names */
    size_t n_aliases;
    int32_t field_id;                 /* iceberg "field-id"; valid when has_field_id */
    bool has_field_id;
    bool has_default;                 /* default parsed and valid for the type */
    const floe_avro_value *default_value; /* when has_default */
    const char *default_json;         /* the default as written (compact JSON), or NULL */
    const char *props_json;           /* other attributes as a JSON object text, or NULL */
} floe_avro_field;

/* A schema node. Named types referenced more than once are the same node. */
struct floe_avro_node {
    floe_avro_type type;
    const char *name;          /* record, enum, fixed: full name (namespace.name) */
    const char *doc;
    const char *logical_type;  /* "decimal", "uuid", "date", "time-micros",
                                  "timestamp-micros", "map" (iceberg), ...; or NULL */
    int32_t precision, scale;  /* decimal */
    const char *const *aliases;
    size_t n_aliases;
    /* record */
    const floe_avro_field *fields;
    size_t n_fields;
    /* enum */
    const char *const *symbols;
    size_t n_symbols;
    int32_t enum_default;      /* index into symbols, -1 if none */
    /* array items / map values */
    const floe_avro_node *items;
    int32_t element_id, key_id, value_id; /* iceberg; -1 if absent */
    /* union */
    const floe_avro_node *const *branches;
    size_t n_branches;
    /* fixed */
    int32_t size;
    const char *props_json;    /* other attributes as a JSON object text, or NULL */
};

/* Owner of a parsed schema tree. */
typedef struct floe_avro_schema floe_avro_schema;

/* Parse schema JSON text (json[0..len), need not be NUL-terminated). FLOE_ESCHEMA for a
 * schema that is not valid Avro (unknown type names, duplicate names, bad defaults are
 * dropped, not fatal), FLOE_ECORRUPT for JSON that does not parse. */
int floe_avro_schema_parse(const char *json, size_t len, floe_avro_schema **out,
                           floe_error *err) FLOE_NODISCARD;
void floe_avro_schema_free(floe_avro_schema *s);
/* Borrowed; valid until floe_avro_schema_free. */
const floe_avro_node *floe_avro_schema_root(const floe_avro_schema *s);
/* Append the schema as compact JSON (what goes into avro.schema) to out. */
int floe_avro_schema_to_json(const floe_avro_schema *s, floe_buf *out, floe_error *err)
    FLOE_NODISCARD;

/* Field of a record node by name, or by iceberg field id; NULL if none. */
const floe_avro_field *floe_avro_node_field(const floe_avro_node *rec, const char *name,
                                            size_t *index_out);
const floe_avro_field *floe_avro_node_field_by_id(const floe_avro_node *rec, int32_t id,
                                                  size_t *index_out);
/* For ["null", T] (either order): T; else NULL. */
const floe_avro_node *floe_avro_node_nullable(const floe_avro_node *n);

/* ---------------------------------------------------------------------------------------
 * Values
 *
 * A value has the type of the schema node it conforms to; for a union it has the type
 * of the chosen branch and `branch` says which one (unions are not a separate level).
 * bytes/string/fixed data is borrowed: the writer copies nothing until it encodes, and
 * the reader allocates it in its arena (strings NUL-terminated).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_avro_map_entry floe_avro_map_entry;

struct floe_avro_value {
    floe_avro_type type;
    /* Index of the branch in the enclosing union; -1 when not inside a union, or, for
     * values given to the writer, "pick the first branch of this type". */
    int32_t branch;
    union {
        bool b;
        int32_t i;      /* int; also the symbol index of an enum */
        int64_t l;
        float f;
        double d;
        struct {
            const uint8_t *p;
            size_t n;
        } bytes;        /* bytes, string (UTF-8, not counting a NUL), fixed */
        struct {
            floe_avro_value *items;
            size_t n;
        } list;         /* record fields in schema order; array items */
        struct {
            floe_avro_map_entry *entries;
            size_t n;
        } map;
    } u;
};

struct floe_avro_map_entry {
    const char *key;    /* UTF-8 */
    size_t key_len;
    floe_avro_value value;
};

/* Setters: they never allocate except where they take an arena. */
void floe_avro_set_null(floe_avro_value *v);
void floe_avro_set_bool(floe_avro_value *v, bool b);
void floe_avro_set_int(floe_avro_value *v, int32_t i);
void floe_avro_set_long(floe_avro_value *v, int64_t l);
void floe_avro_set_float(floe_avro_value *v, float f);
void floe_avro_set_double(floe_avro_value *v, double d);
/* Borrow p[0..n): it must outlive the value's use. */
void floe_avro_set_bytes(floe_avro_value *v, const void *p, size_t n);
void floe_avro_set_string(floe_avro_value *v, const char *s); /* strlen(s) bytes */
void floe_avro_set_stringn(floe_avro_value *v, const char *s, size_t n);
void floe_avro_set_fixed(floe_avro_value *v, const void *p, size_t n);
void floe_avro_set_enum(floe_avro_value *v, int32_t symbol_index);
/* Allocate n zeroed children (each a null) in a. FLOE_ENOMEM. */
int floe_avro_set_record(floe_avro_value *v, floe_arena *a, size_t n_fields);
int floe_avro_set_array(floe_avro_value *v, floe_arena *a, size_t n_items);
int floe_avro_set_map(floe_avro_value *v, floe_arena *a, size_t n_entries);
/* Pick a union branch explicitly (after setting the value). */
static inline void floe_avro_set_branch(floe_avro_value *v, int32_t branch) {
    v->branch = branch;
}

/* Field of a record value by name, resolved through the record's schema node. */
const floe_avro_value *floe_avro_value_field(const floe_avro_node *rec,
                                             const floe_avro_value *v, const char *name);

/* Encode v per node (binary encoding), appending to out. FLOE_ESCHEMA when v does not
 * conform (the message names the path: "data_file.partition: expected int, got null"). */
int floe_avro_value_encode(const floe_avro_node *node, const floe_avro_value *v,
                           floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* Append v as JSON (bytes/fixed as lowercase hex strings, enums as symbols, unions
 * unwrapped, longs as exact integers) for debugging, tests and the CLI. */
int floe_avro_value_to_json(const floe_avro_node *node, const floe_avro_value *v,
                            floe_buf *out, floe_error *err) FLOE_NODISCARD;

/* Low-level binary encoding helpers (append to out; FLOE_ENOMEM / FLOE_ELIMIT). */
int floe_avro_encode_long(floe_buf *out, int64_t v);   /* zigzag varint; also int */
int floe_avro_encode_bool(floe_buf *out, bool v);
int floe_avro_encode_float(floe_buf *out, float v);
int floe_avro_encode_double(floe_buf *out, double v);
int floe_avro_encode_bytes(floe_buf *out, const void *p, size_t n); /* also string */
/* Encode v at dst (at least 10 bytes); returns bytes written. */
size_t floe_avro_put_long(uint8_t *dst, int64_t v);

/* ---------------------------------------------------------------------------------------
 * Object container writer
 *
 *   open (header written to out) -> append* (records buffered; a block is flushed when
 *   the buffered bytes reach block_size or block_records) -> close (last block flushed;
 *   the writer freed). abort frees without flushing. out is borrowed and must outlive
 *   the writer; the file is out->data[start..out->len) where start is out->len at open.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_avro_writer floe_avro_writer;

typedef struct floe_avro_meta {
    const char *key;
    const void *value;
    size_t value_len;
} floe_avro_meta;

typedef struct floe_avro_writer_options {
    floe_codec codec;          /* UNCOMPRESSED (default), DEFLATE, SNAPPY or ZSTD */
    int level;                 /* 0 = codec default */
    size_t block_size;         /* target uncompressed bytes per block; 0 = 64 KiB */
    size_t block_records;      /* max records per block; 0 = no limit */
    const uint8_t *sync;       /* 16 bytes for deterministic output; NULL = random */
    const floe_avro_meta *meta;/* extra header metadata; keys must not start "avro." */
    size_t n_meta;
} floe_avro_writer_options;

/* schema is borrowed and must outlive the writer. opts may be NULL. */
int floe_avro_writer_open(const floe_avro_schema *schema, const floe_avro_writer_options *opts,
                          floe_buf *out, floe_avro_writer **w, floe_error *err) FLOE_NODISCARD;
/* Encode and buffer one record. */
int floe_avro_writer_append(floe_avro_writer *w, const floe_avro_value *v, floe_error *err)
    FLOE_NODISCARD;
/* Buffer one record the caller has encoded itself (binary encoding of the schema). */
int floe_avro_writer_append_encoded(floe_avro_writer *w, const void *datum, size_t n,
                                    floe_error *err) FLOE_NODISCARD;
/* Flush buffered records as a block now. */
int floe_avro_writer_flush(floe_avro_writer *w, floe_error *err) FLOE_NODISCARD;
int64_t floe_avro_writer_records(const floe_avro_writer *w);
/* Flush and free w (in every case). */
int floe_avro_writer_close(floe_avro_writer *w, floe_error *err) FLOE_NODISCARD;
void floe_avro_writer_abort(floe_avro_writer *w); /* accepts NULL */

/* Write a finished container (or any buffer) to uri via FileIO, atomically. */
int floe_avro_write_uri(floe_io *io, const char *uri, const floe_buf *file,
                        const floe_output_options *opts, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Object container reader
 *
 *   open (header parsed, schemas resolved) -> next* (records decoded block by block) ->
 *   close. Records are returned in the reader schema's shape (or the writer's when no
 *   reader schema is given).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_avro_reader floe_avro_reader;

typedef struct floe_avro_reader_options {
    /* Expected schema (borrowed, must outlive the reader); NULL = the writer's. Fields
     * match by iceberg field-id when both sides have ids, else by name and aliases;
     * Avro promotions apply; reader fields the writer lacks take their default (null for
     * optional unions); writer fields the reader lacks are skipped. */
    const floe_avro_schema *reader_schema;
    /* Allow a writer long where the reader wants int (range-checked per value): some
     * writers put iceberg list<int> as array<long>. Default false. */
    bool narrow_long_to_int;
    /* Decoded values go to this arena and live as long as it does; NULL = a per-block
     * arena inside the reader (values valid until next() moves to the next block). */
    floe_arena *arena;
    /* Caps; 0 = defaults (64 MiB block bytes, 16 M records per block, 64 MiB header). */
    size_t max_block_bytes;
    int64_t max_block_records;
    size_t max_header_bytes;
    /* Memory the decoded values of one block may take (arena bytes, and as much again
     * for arrays and maps being collected); past it next() fails with FLOE_ELIMIT.
     * 0 = 64 bytes per byte of the decompressed block + 16 MiB: values that take bytes
     * stay well under it, so only zero-byte values (nulls, empty records) and many
     * reader-side defaults can reach it. */
    size_t max_values_bytes;
    /* Decompressed bytes of all blocks together (the whole file's records); past it
     * next() fails with FLOE_ELIMIT naming the file and the cap. 0 = no cap (each block
     * is still capped). total_cap_hint, when set, names the setting that raises it in
     * that error ("FLOE_MANIFEST_MAX_BYTES"). */
    uint64_t max_total_bytes;
    const char *total_cap_hint;
    /* Names the file in error messages ("manifest-list snap-1.avro"); may be NULL. */
    const char *name;
} floe_avro_reader_options;

/* p[0..n) is borrowed and must outlive the reader. opts may be NULL. */
int floe_avro_reader_open_mem(const void *p, size_t n, const floe_avro_reader_options *opts,
                              floe_avro_reader **out, floe_error *err) FLOE_NODISCARD;
/* Reads the header and then one block at a time through in (borrowed). */
int floe_avro_reader_open_input(floe_input *in, const floe_avro_reader_options *opts,
                                floe_avro_reader **out, floe_error *err) FLOE_NODISCARD;
void floe_avro_reader_close(floe_avro_reader *r); /* accepts NULL */

/* The writer's schema from the header (borrowed, lives with the reader). */
const floe_avro_schema *floe_avro_reader_writer_schema(const floe_avro_reader *r);
/* The schema records are returned in. */
const floe_avro_node *floe_avro_reader_schema(const floe_avro_reader *r);
floe_codec floe_avro_reader_codec(const floe_avro_reader *r);
/* Header metadata: value of key (not NUL-terminated; len in *len), NULL if absent. */
const void *floe_avro_reader_meta(const floe_avro_reader *r, const char *key, size_t *len);
/* Same as a NUL-terminated string copy kept by the reader; NULL if absent. */
const char *floe_avro_reader_meta_str(const floe_avro_reader *r, const char *key);
size_t floe_avro_reader_meta_count(const floe_avro_reader *r);
void floe_avro_reader_meta_at(const floe_avro_reader *r, size_t i, const char **key,
                              const void **value, size_t *len);
const uint8_t *floe_avro_reader_sync(const floe_avro_reader *r); /* 16 bytes */

/* Decode the next record into *out (see options.arena for its lifetime). Returns 1 with
 * a record, 0 at the end of the file, or a negative error. Fields filled from the reader
 * schema's defaults point into that schema: keep it alive as long as the values. */
int floe_avro_reader_next(floe_avro_reader *r, const floe_avro_value **out, floe_error *err)
    FLOE_NODISCARD;
/* Records returned so far; blocks read so far. */
int64_t floe_avro_reader_records(const floe_avro_reader *r);
int64_t floe_avro_reader_blocks(const floe_avro_reader *r);

/* ---------------------------------------------------------------------------------------
 * Raw records, for callers that decode the writer's schema straight into their own
 * structures (Iceberg manifest entries) instead of through the value tree.
 *
 *   raw_next (blocks loaded, checked and decompressed as for next(); *c covers the rest
 *   of the current block, from the next record on) -> the caller decodes exactly one
 *   record from *c -> raw_done (the reader moves past it). next() and raw_next may be
 *   mixed between records.
 *
 * The cursor checks every length against the bytes left; its budget bounds the values a
 * block may produce (a hostile block of zero-size values otherwise costs unbounded work):
 * spend it through floe_avro_cursor_skip, or check counts against the bytes left.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_avro_cursor {
    const uint8_t *p;     /* next byte */
    const uint8_t *end;   /* end of the block's data */
    const uint8_t *start; /* start of the block's data */
    int64_t base_off;     /* file offset of start (0 inside a decompressed block) */
    uint64_t budget;      /* values the block may still produce */
} floe_avro_cursor;

/* File offset of the next byte (for error messages). */
static inline int64_t floe_avro_cursor_off(const floe_avro_cursor *c) {
    return c->base_off + (int64_t)(c->p - c->start);
}

/* Bytes left in the block. */
static inline size_t floe_avro_cursor_left(const floe_avro_cursor *c) {
    return (size_t)(c->end - c->p);
}

/* Zigzag varint long: at most 10 bytes, FLOE_ECORRUPT on truncation, when the 10th byte
 * still says "more", and when it carries bits past the 64th: a value outside the signed
 * 64-bit range (Python writers encode ids above INT64_MAX that way; the conformance table
 * equality_delete_extra_column has snapshot id 9876543210123456789). Java's BinaryDecoder
 * drops those bits, which wraps the value; it is refused here, as the metadata JSON that
 * names such an id is. */
static inline int floe_avro_cursor_long(floe_avro_cursor *c, int64_t *out, floe_error *err) {
    uint64_t u = 0;
    size_t left = floe_avro_cursor_left(c);
    for (size_t i = 0; i < 10 && i < left; i++) {
        uint8_t b = c->p[i];
        if (FLOE_UNLIKELY(i == 9 && b > 1)) {
            floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                          "long at byte %lld is outside the signed 64-bit range (its varint "
                          "has more than 64 bits); refused rather than wrapped",
                          (long long)floe_avro_cursor_off(c));
            return FLOE_ECORRUPT;
        }
        u |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            c->p += i + 1;
            *out = floe_unzigzag64(u);
            return 0;
        }
    }
    /* the literal return code (not floe_error_at's) lets the compiler see every caller's
     * success path has its out-parameter written */
    floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                  "truncated or overlong varint at byte %lld",
                  (long long)floe_avro_cursor_off(c));
    return FLOE_ECORRUPT;
}

/* Zigzag varint int: a long as above, FLOE_ECORRUPT outside the int32 range. */
static inline int floe_avro_cursor_int(floe_avro_cursor *c, int32_t *out, floe_error *err) {
    int64_t v;
    if (floe_avro_cursor_long(c, &v, err) < 0)
        return FLOE_ECORRUPT;
    if (FLOE_UNLIKELY(v < INT32_MIN || v > INT32_MAX)) {
        floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                      "int out of range (%lld) at byte %lld", (long long)v,
                      (long long)floe_avro_cursor_off(c));
        return FLOE_ECORRUPT;
    }
    *out = (int32_t)v;
    return 0;
}

/* A length prefix (bytes, string): non-negative and within the remaining bytes. */
static inline int floe_avro_cursor_len(floe_avro_cursor *c, size_t *out, floe_error *err) {
    int64_t v;
    if (floe_avro_cursor_long(c, &v, err) < 0)
        return FLOE_ECORRUPT;
    if (FLOE_UNLIKELY(v < 0 || (uint64_t)v > floe_avro_cursor_left(c))) {
        floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                      "length %lld at byte %lld passes the end of the data (%zu left)",
                      (long long)v, (long long)floe_avro_cursor_off(c),
                      floe_avro_cursor_left(c));
        return FLOE_ECORRUPT;
    }
    *out = (size_t)v;
    return 0;
}

/* At least n bytes left. */
static inline int floe_avro_cursor_need(floe_avro_cursor *c, size_t n, floe_error *err) {
    if (FLOE_UNLIKELY(floe_avro_cursor_left(c) < n)) {
        floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                      "truncated: need %zu bytes at byte %lld, %zu left", n,
                      (long long)floe_avro_cursor_off(c), floe_avro_cursor_left(c));
        return FLOE_ECORRUPT;
    }
    return 0;
}

/* Skip one value of writer type w (depth-capped, spends the budget). FLOE_ECORRUPT. */
int floe_avro_cursor_skip(floe_avro_cursor *c, const floe_avro_node *w, floe_error *err)
    FLOE_NODISCARD;

/* 1 with *c set at the next record, 0 at the end of the file, negative on error. */
int floe_avro_reader_raw_next(floe_avro_reader *r, floe_avro_cursor *c, floe_error *err)
    FLOE_NODISCARD;
/* The record raw_next started ends at c->p (c as the caller advanced it, within the
 * block). FLOE_EINVALID when c is not the reader's block. */
int floe_avro_reader_raw_done(floe_avro_reader *r, const floe_avro_cursor *c,
                              floe_error *err) FLOE_NODISCARD;
/* Add the reader's place ("NAME: block 3 (at byte 812): ") to an error from a raw
 * decode. */
void floe_avro_reader_raw_error(const floe_avro_reader *r, floe_error *err);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_AVRO_H */
