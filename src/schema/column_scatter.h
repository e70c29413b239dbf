/*
 * column_scatter.h - rows of one batch spread over several (convert's partition routing).
 * Internal: declared apart from floe/column.h so that its users alone depend on it.
 */
#ifndef FLOE_SCHEMA_COLUMN_SCATTER_H
#define FLOE_SCHEMA_COLUMN_SCATTER_H

#include "floe/column.h"

/* Append every row of src to one of dst[0..ndst) (same schema): row r to dst[part[r]],
 * in order. One pass per column over src and one reservation per column and destination
 * (floe_batch_take_rows per run of rows costs a call per column and run: a run is one row
 * when partitions interleave). FLOE_EINVALID (a part out of range), FLOE_ELIMIT (a
 * BYTE_ARRAY column past 4 GiB), FLOE_ENOMEM; on error the destinations hold part of the
 * rows. */
int floe_batch_scatter_rows(floe_batch *const *dst, size_t ndst, const floe_batch *src,
                            const uint32_t *part);

#endif
