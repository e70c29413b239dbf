/*
 * floe/parquet_copy.h - copying a row group from one Parquet file into another without
 * decoding it (the rewrite's fast path).
 *
 * A row group is copyable into a writer's file when every column of the input is the
 * writer's column in physical layout (same column count and order, physical type, width,
 * definition and repetition levels, no value conversion on read), the chunks use the
 * writer's codec, and the chunk statistics can stand in for the values in the file
 * metrics (null_count present, min_value/max_value present under TYPE_DEFINED_ORDER or
 * every value null, nan_count present for float and double). The stored pages are read
 * and walked (page headers only) so that what is copied is exactly the chunk the metadata
 * describes.
 *
 * The copy keeps the pages, the chunk statistics, the encodings and the ColumnIndex as they
 * are; it re-bases data_page_offset, dictionary_page_offset and the OffsetIndex page
 * locations to the new file, and drops what it cannot vouch for: bloom filters, index
 * pages, chunk key-value metadata, and the page index of a chunk whose OffsetIndex does not
 * agree with its pages.
 *
 * Memory: a loaded row group holds its stored bytes (compressed) plus its metadata.
 *
 * Ownership and threads: a floe_pq_raw_row_group owns its bytes and metadata until
 * floe_pq_raw_row_group_free. One thread at a time per row group and per writer.
 */
#ifndef FLOE_PARQUET_COPY_H
#define FLOE_PARQUET_COPY_H

#include "floe/codec.h"
#include "floe/common.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_pq_raw_row_group floe_pq_raw_row_group;

/* Load row group rg of r for copying into a file of `schema` (its leaves matched to the
 * file's columns one to one, in order) written with `codec`. The caller must have checked
 * that the file's levels are the schema's (same optional/required/repeated chain per
 * leaf); this checks the rest (see above). Returns 0 with *out; FLOE_EUNSUPPORTED (reason
 * in err) when the row group cannot be copied and must be decoded instead; FLOE_ECORRUPT
 * when its metadata disagrees with its pages (the decoder will say more); FLOE_ENOMEM,
 * FLOE_EIO, FLOE_ELIMIT. */
int floe_pq_raw_row_group_load(floe_pq_reader *r, size_t rg, const floe_schema *schema,
                               floe_codec codec, floe_pq_raw_row_group **out,
                               floe_error *err) FLOE_NODISCARD;
void floe_pq_raw_row_group_free(floe_pq_raw_row_group *g); /* accepts NULL */
int64_t floe_pq_raw_row_group_rows(const floe_pq_raw_row_group *g);
/* Stored (compressed) bytes of its chunks: what the copy writes and holds in memory. */
int64_t floe_pq_raw_row_group_bytes(const floe_pq_raw_row_group *g);
/* Are column's statistics its exact minimum and maximum (not truncated)? Truncated ones
 * still bound the values, and the writer's file info marks the bounds they give
 * lower_truncated / upper_truncated. */
bool floe_pq_raw_row_group_exact(const floe_pq_raw_row_group *g, size_t column);

/* Write g into w as a row group of its own. Rows buffered in w stay buffered and go into a
 * later row group, so row order in the file is not the order of the calls. w's schema must
 * be the one g was loaded for. Any error stops the writer (close then discards). */
int floe_pq_writer_copy_row_group(floe_pq_writer *w, const floe_pq_raw_row_group *g,
                                  floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
