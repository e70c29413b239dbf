/*
 * writer_copy.h - the writer's entry point for column chunks copied verbatim from another
 * Parquet file (private to src/parquet; the public face is floe/parquet_copy.h).
 *
 * writer_copy.c reads and checks a row group of an input file; the writer (also there,
 * pq_writer_add_copied_row_group) places its stored pages at the current end of the
 * output, re-bases every file offset (data_page_offset, dictionary_page_offset, the
 * OffsetIndex's page locations), keeps the ColumnIndex bytes (they hold no offsets) and
 * merges the chunk statistics into the file metrics.
 */
#ifndef FLOE_PQ_WRITER_COPY_H
#define FLOE_PQ_WRITER_COPY_H

#include "floe/parquet.h"
#include "parquet/metadata.h"

typedef struct pq_copy_chunk {
    const uint8_t *bytes;        /* the chunk's stored pages: [dictionary page] data pages */
    size_t len;                  /* = meta->total_compressed_size */
    int64_t src_start;           /* input file offset of bytes[0] */
    /* the input's ColumnMetaData with data_page_offset / dictionary_page_offset checked
     * against the pages (input file offsets); bloom filter and index page dropped */
    const floe_pq_column_metadata *meta;
    const uint8_t *column_index; /* encoded ColumnIndex, or NULL */
    size_t column_index_len;
    const floe_pq_offset_index *offset_index; /* input file offsets, or NULL */
    /* for the file metrics: min/max (PLAIN, no length prefix) when has_bounds, the
     * values themselves unless marked inexact (a truncated prefix / an incremented one) */
    bool has_bounds;
    floe_pq_bytes min, max;
    bool min_exact, max_exact;
    int64_t nulls, nans;
} pq_copy_chunk;

/* Append a row group made of chunks[0..n) (one per column, in schema order) holding
 * num_rows rows. Rows buffered by the writer stay buffered (they form a later row group).
 * The caller has checked that each chunk's physical type, width and levels are the
 * writer's column's; the writer checks type and codec again. Any error stops the writer. */
int pq_writer_add_copied_row_group(floe_pq_writer *w, const pq_copy_chunk *chunks, size_t n,
                                   int64_t num_rows, floe_error *err);

#endif
