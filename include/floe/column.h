/*
 * floe/column.h - column buffers: the in-memory form of shredded rows.
 *
 * Rows travel through floe as Dremel-shredded leaf columns: for every leaf of the schema,
 * the definition and repetition levels of each slot, and the values of the non-null
 * slots only. The NDJSON shredder produces them, the Parquet writer encodes them, the
 * Parquet reader decodes into them, and record assembly turns them back into JSON. No
 * row objects exist on the hot path.
 *
 * Value layout by physical type:
 *   BOOLEAN                 1 byte per value, 0 or 1
 *   INT32 / FLOAT           4 bytes little-endian
 *   INT64 / DOUBLE          8 bytes little-endian
 *   INT96                   12 bytes (read only)
 *   FIXED (FLBA)            type_length bytes (decimals: big-endian two's complement)
 *   BYTE_ARRAY              concatenated bytes in `values`, boundaries in `offsets`
 *                           (nvalues + 1 entries, offsets[0] = 0)
 *
 * Levels: when max_def == 0 (required, top level) the def array may stay empty
 * (ndefs = 0); when max_rep == 0 the rep array stays empty. nlevels is always the number
 * of slots; nvalues the number of slots whose def == max_def.
 *
 * Ownership and threads: a floe_colbuf or floe_batch owns its level and value arrays
 * until its _free; it borrows its schema and leaf fields, which must outlive it. A batch
 * cursor borrows its batch. One thread at a time per batch.
 */
#ifndef FLOE_COLUMN_H
#define FLOE_COLUMN_H

#include "floe/common.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* A stored data page whose slots a column buffer holds: the page carry of the rewrite.
 * The reader records it (when asked, see floe_colbuf.carry_min) for a Parquet data page v1
 * it decoded whole into the buffer, PLAIN values with RLE levels, no value conversion and
 * no repetition; the writer may then place the stored body in its output instead of
 * encoding and compressing the same values again (floe_pq_writer_write_batch). */
typedef struct floe_colbuf_page {
    size_t level0, value0;   /* its first slot and first value in the buffer */
    uint32_t nlevels;        /* slots (rows: no repetition) */
    uint32_t nvalues;        /* non-null values */
    uint32_t ulen;           /* uncompressed body: levels then values */
    uint32_t clen;           /* stored (compressed) body */
    size_t at;               /* the stored body: carry_bytes.data + at */
    int32_t codec;           /* floe_codec of the stored body */
} floe_colbuf_page;

typedef struct floe_colbuf {
    const floe_field *field; /* the leaf this column holds (borrowed) */
    floe_phys phys;
    int32_t width;           /* bytes per value for fixed-width types, 0 for BYTE_ARRAY */
    int16_t max_def, max_rep;

    int16_t *def;            /* nlevels entries when max_def > 0 */
    int16_t *rep;            /* nlevels entries when max_rep > 0 */
    size_t nlevels, levels_cap;

    uint8_t *values;         /* see layout above */
    size_t values_len, values_cap;
    uint32_t *offsets;       /* BYTE_ARRAY only: nvalues + 1 entries */
    size_t offsets_cap;
    size_t nvalues;

    /* Page carry (optional, off when carry_min is 0): pages of at least carry_min bytes
     * uncompressed, stored with codec carry_codec, whose slots the buffer holds, in slot
     * order. Clearing or truncating the buffer drops the pages it no longer holds whole. */
    uint32_t carry_min;
    int32_t carry_codec;
    floe_colbuf_page *carry;
    size_t ncarry, carry_cap;
    floe_buf carry_bytes;
} floe_colbuf;

/* A batch of rows of one schema: one colbuf per leaf. */
typedef struct floe_batch {
    const floe_schema *schema; /* borrowed */
    floe_colbuf *cols;         /* schema->nleaves entries */
    size_t ncols;
    size_t nrows;
} floe_batch;

void floe_colbuf_init(floe_colbuf *c, const floe_field *leaf);
void floe_colbuf_free(floe_colbuf *c);
void floe_colbuf_clear(floe_colbuf *c); /* empty, keep storage */
/* Bytes held by values and levels (for memory accounting and size-based flushing). */
size_t floe_colbuf_bytes(const floe_colbuf *c);

/* Append helpers. All return 0 or FLOE_ENOMEM. */
int floe_colbuf_reserve_levels(floe_colbuf *c, size_t extra);
int floe_colbuf_reserve_values(floe_colbuf *c, size_t extra_values, size_t extra_bytes);
/* A null (or empty-list/absent-parent) slot at definition level def < max_def. */
int floe_colbuf_push_null(floe_colbuf *c, int16_t def, int16_t rep);
/* A present value. For fixed-width types n must equal width. */
int floe_colbuf_push_value(floe_colbuf *c, int16_t rep, const void *p, size_t n);
/* The level slot of a value just written into c's values (the caller made room for it):
 * its definition level (the column's max) and repetition level. */
static inline void floe_colbuf_push_level(floe_colbuf *c, int16_t rep) {
    if (c->max_def > 0)
        c->def[c->nlevels] = c->max_def;
    if (c->max_rep > 0)
        c->rep[c->nlevels] = rep;
    c->nlevels++;
    c->nvalues++;
}
/* Truncate back to a previous state (record rollback after a rejected record). */
void floe_colbuf_truncate(floe_colbuf *c, size_t nlevels, size_t nvalues);
/* Record a carried page (see floe_colbuf_page): its slots are the buffer's last nlevels
 * slots and last nvalues values; body[0..clen) is copied. 0 or FLOE_ENOMEM (nothing
 * recorded: the buffer stays valid, the page is merely not carried). */
int floe_colbuf_carry_add(floe_colbuf *c, uint32_t nlevels, uint32_t nvalues, uint32_t ulen,
                          const uint8_t *body, uint32_t clen, int32_t codec);

/* Row cursor over a batch: per column, the level and value index where the next row
 * starts. Initialise with floe_batch_cursor_init; it walks rows in order only. */
typedef struct floe_batch_cursor {
    size_t *level; /* ncols entries */
    size_t *value; /* ncols entries */
    size_t ncols;
    size_t row;
} floe_batch_cursor;

int floe_batch_cursor_init(floe_batch_cursor *c, const floe_batch *b);
void floe_batch_cursor_free(floe_batch_cursor *c);
/* Move the next nrows rows of src (at the cursor) to the end of dst (same schema) when
 * dst is non-NULL, or skip them when it is NULL; advances the cursor. FLOE_EINVALID if
 * src has fewer rows left, FLOE_ENOMEM. */
int floe_batch_take_rows(floe_batch *dst, const floe_batch *src, floe_batch_cursor *cur,
                         size_t nrows);

/* Append to dst (same schema) the rows of src whose keep[row] is non-zero, in order; keep
 * has src->nrows entries. 0, FLOE_ENOMEM or FLOE_ELIMIT (dst may then hold part of the
 * rows of some columns). */
int floe_batch_take_kept(floe_batch *dst, const floe_batch *src, const uint8_t *keep);

/* A batch with one empty column buffer per leaf of s (s is borrowed: it outlives b).
 * FLOE_ENOMEM. */
int floe_batch_init(floe_batch *b, const floe_schema *s);
void floe_batch_free(floe_batch *b);  /* frees the buffers; a freed batch may be freed again */
void floe_batch_clear(floe_batch *b); /* empties the buffers, keeping their capacity */
size_t floe_batch_bytes(const floe_batch *b); /* bytes held: values, levels, offsets */

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
