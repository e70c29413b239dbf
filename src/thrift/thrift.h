/*
 * thrift.h - the Thrift compact protocol, generic (apache/thrift
 * doc/specs/thrift-compact-protocol.md). Knows nothing of Parquet.
 *
 * Writer: appends to a floe_buf. Errors are sticky: every call after the first failure is
 * a no-op, and floe_thrift_writer_finish() reports the first error. This keeps the
 * struct encoders (src/parquet/metadata.c) free of per-field error plumbing.
 *
 * Reader: a cursor over (p, n). Every length and collection size read from the input is
 * checked against the bytes that remain and against a cap before the caller allocates
 * anything; nesting is capped (FLOE_THRIFT_MAX_DEPTH) so hostile input cannot recurse
 * without bound. Errors are FLOE_ECORRUPT with the byte offset (base_offset + position)
 * and the reader's `what` context in the message.
 */
#ifndef FLOE_THRIFT_H
#define FLOE_THRIFT_H

#include "floe/common.h"

/* Compact-protocol type ids as they appear in field headers (and, except for the two
 * boolean ids, in collection headers). */
typedef enum floe_thrift_type {
    FLOE_THRIFT_STOP = 0,
    FLOE_THRIFT_TRUE = 1,   /* field header: bool true; collection: bool element */
    FLOE_THRIFT_FALSE = 2,  /* field header: bool false; collection: bool element (spec) */
    FLOE_THRIFT_BYTE = 3,
    FLOE_THRIFT_I16 = 4,
    FLOE_THRIFT_I32 = 5,
    FLOE_THRIFT_I64 = 6,
    FLOE_THRIFT_DOUBLE = 7,
    FLOE_THRIFT_BINARY = 8,
    FLOE_THRIFT_LIST = 9,
    FLOE_THRIFT_SET = 10,
    FLOE_THRIFT_MAP = 11,
    FLOE_THRIFT_STRUCT = 12,
    FLOE_THRIFT_UUID = 13,
} floe_thrift_type;

/* Element type to use for list<bool> when writing. Java and C++ Thrift write 1 here; every
 * reader we know accepts both 1 and 2, so we follow the implementations. */
#define FLOE_THRIFT_BOOL_ELEM FLOE_THRIFT_TRUE

#define FLOE_THRIFT_MAX_DEPTH 64

/* ---- writer ------------------------------------------------------------------------- */

typedef struct floe_thrift_writer {
    floe_buf *out;                            /* borrowed */
    int16_t last_id[FLOE_THRIFT_MAX_DEPTH];   /* last field id per open struct */
    int depth;                                /* open structs */
    int rc;                                   /* first error, sticky */
} floe_thrift_writer;

void floe_thrift_writer_init(floe_thrift_writer *w, floe_buf *out);
/* 0, or the first error (FLOE_ENOMEM, FLOE_ELIMIT from the buffer, FLOE_EINTERNAL for
 * unbalanced struct begin/end or a depth overflow). */
int floe_thrift_writer_finish(const floe_thrift_writer *w);

/* Top-level (or element) struct: begin pushes a field-id frame, end writes STOP and pops. */
void floe_thrift_struct_begin(floe_thrift_writer *w);
void floe_thrift_struct_end(floe_thrift_writer *w);

/* Field header for a value of `type` with field id `id` in the current struct: the short
 * form (delta 1..15 in the high nibble) when possible, else the type byte followed by the
 * zigzag varint id. Bool fields use floe_thrift_field_bool (the value is in the type). */
void floe_thrift_field_begin(floe_thrift_writer *w, floe_thrift_type type, int16_t id);

void floe_thrift_field_bool(floe_thrift_writer *w, int16_t id, bool v);
void floe_thrift_field_byte(floe_thrift_writer *w, int16_t id, int8_t v);
void floe_thrift_field_i16(floe_thrift_writer *w, int16_t id, int16_t v);
void floe_thrift_field_i32(floe_thrift_writer *w, int16_t id, int32_t v);
void floe_thrift_field_i64(floe_thrift_writer *w, int16_t id, int64_t v);
void floe_thrift_field_double(floe_thrift_writer *w, int16_t id, double v);
void floe_thrift_field_binary(floe_thrift_writer *w, int16_t id, const void *p, size_t n);
void floe_thrift_field_string(floe_thrift_writer *w, int16_t id, const char *s);
/* Field header + list header. Elements follow with the floe_thrift_write_* calls. */
void floe_thrift_field_list_begin(floe_thrift_writer *w, int16_t id, floe_thrift_type elem,
                                  size_t size);
/* Field header + struct begin; close with floe_thrift_struct_end. */
void floe_thrift_field_struct_begin(floe_thrift_writer *w, int16_t id);
/* A union member that is an empty struct (Parquet's StringType, TypeDefinedOrder...). */
void floe_thrift_field_empty_struct(floe_thrift_writer *w, int16_t id);

/* Bare values: collection elements, map keys/values. */
void floe_thrift_write_bool(floe_thrift_writer *w, bool v); /* 1 byte: 1 true, 0 false */
void floe_thrift_write_byte(floe_thrift_writer *w, int8_t v);
void floe_thrift_write_i16(floe_thrift_writer *w, int16_t v);
void floe_thrift_write_i32(floe_thrift_writer *w, int32_t v);
void floe_thrift_write_i64(floe_thrift_writer *w, int64_t v);
void floe_thrift_write_double(floe_thrift_writer *w, double v);
void floe_thrift_write_binary(floe_thrift_writer *w, const void *p, size_t n);
/* List/set header: (size << 4 | elem) for size < 15, else 0xF0 | elem and a varint size. */
void floe_thrift_list_begin(floe_thrift_writer *w, floe_thrift_type elem, size_t size);
/* Map header: a single 0 byte when empty, else varint size and (key << 4 | value). */
void floe_thrift_map_begin(floe_thrift_writer *w, floe_thrift_type key,
                           floe_thrift_type value, size_t size);

/* ---- reader ------------------------------------------------------------------------- */

typedef struct floe_thrift_reader {
    const uint8_t *p;       /* borrowed input */
    size_t n;
    size_t pos;
    int depth;
    int16_t last_id[FLOE_THRIFT_MAX_DEPTH];
    bool bool_pending;      /* a bool field header was read; its value is bool_value */
    bool bool_value;
    size_t max_collection;  /* cap on list/set/map sizes (default 1 << 24) */
    size_t max_binary;      /* cap on one binary's length (default 64 MiB) */
    int64_t base_offset;    /* file offset of p[0], for error offsets */
    const char *what;       /* context for messages, e.g. "footer" (may be NULL) */
    floe_error *err;        /* borrowed, may be NULL */
} floe_thrift_reader;

void floe_thrift_reader_init(floe_thrift_reader *r, const uint8_t *p, size_t n,
                             floe_error *err);

/* Sets a FLOE_ECORRUPT error at the current position ("<what>: <message>"). */
int floe_thrift_reader_fail(floe_thrift_reader *r, const char *fmt, ...) FLOE_PRINTF(2, 3);

int floe_thrift_read_struct_begin(floe_thrift_reader *r);
int floe_thrift_read_struct_end(floe_thrift_reader *r);
/* Next field header of the current struct. *type is FLOE_THRIFT_STOP at the end (then
 * *id is 0). For bool fields *type is TRUE/FALSE and floe_thrift_read_bool returns the
 * value without consuming input. */
int floe_thrift_read_field(floe_thrift_reader *r, floe_thrift_type *type, int16_t *id);

int floe_thrift_read_bool(floe_thrift_reader *r, bool *v);
int floe_thrift_read_byte(floe_thrift_reader *r, int8_t *v);
int floe_thrift_read_i16(floe_thrift_reader *r, int16_t *v);
int floe_thrift_read_i32(floe_thrift_reader *r, int32_t *v);
int floe_thrift_read_i64(floe_thrift_reader *r, int64_t *v);
int floe_thrift_read_double(floe_thrift_reader *r, double *v);
/* Borrowed pointer into the input; *n checked against the remaining bytes and max_binary. */
int floe_thrift_read_binary(floe_thrift_reader *r, const uint8_t **p, size_t *n);
/* List/set header. *size is checked against max_collection and against the remaining
 * bytes (every element takes at least one byte, except empty structs which take one: STOP)
 * so a caller may allocate *size elements. The element type is normalized: the two bool
 * ids both come back as FLOE_THRIFT_TRUE. */
int floe_thrift_read_list_begin(floe_thrift_reader *r, floe_thrift_type *elem, size_t *size);
int floe_thrift_read_map_begin(floe_thrift_reader *r, floe_thrift_type *key,
                               floe_thrift_type *value, size_t *size);

/* Skip one value of `type` (field or element context), recursing into containers; depth is
 * capped. */
int floe_thrift_skip(floe_thrift_reader *r, floe_thrift_type type);

#endif
