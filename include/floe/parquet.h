/*
 * floe/parquet.h - writing Parquet files from column batches.
 *
 * The writer turns floe_batch column buffers (floe/column.h) into a Parquet file
 * (apache/parquet-format): v1 data pages, dictionary encoding with PLAIN or
 * DELTA_BINARY_PACKED fallback, RLE levels, page checksums, chunk and page statistics,
 * the page index (ColumnIndex + OffsetIndex), Iceberg field ids on every schema element,
 * and the per-column metrics an Iceberg manifest entry needs (floe_pq_file_info).
 *
 * Memory: at most one row group is held (encoded, compressed pages plus the pages being
 * built); a row group is written when its buffered bytes reach row_group_size, checked
 * after each batch (a batch is never split across row groups), or when the caller ends
 * it (floe_pq_writer_flush, floe_pq_writer_end_row_group).
 *
 * Output is deterministic: the same batches with the same options give byte-identical
 * files.
 *
 * Ownership and threads: a floe_pq_writer borrows its schema (it must outlive the
 * writer) and owns its buffered row group until floe_pq_writer_close or _abort;
 * floe_pq_file_info is the caller's, freed by floe_pq_file_info_free. One thread at a
 * time per writer (an executor spreads the column encoding of one batch).
 */
#ifndef FLOE_PARQUET_H
#define FLOE_PARQUET_H

#include "floe/codec.h"
#include "floe/column.h"
#include "floe/common.h"
#include "floe/io.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_pq_kv {
    const char *key;
    const char *value;
} floe_pq_kv;

/* Column work on the caller's threads (a pipeline that shreds and encodes on one pool,
 * so no core idles while one column of a batch is still being encoded). run(ctx, n, fn,
 * arg) calls fn(arg, i, worker) once for every i in [0, n), concurrently, and returns
 * when every call has returned. worker is the index, in [0, nworkers), of the thread
 * making the call; calls with the same index never overlap (the writer keeps scratch per
 * index). The thread calling the writer may take part, under its own index. */
typedef void (*floe_pq_task_fn)(void *arg, size_t i, int worker);
typedef struct floe_pq_executor {
    void (*run)(void *ctx, size_t n, floe_pq_task_fn fn, void *arg);
    void *ctx;
    int nworkers;                /* 1..64 */
} floe_pq_executor;

/* The longest variant_shredding text (with its terminating NUL). */
#define FLOE_PQ_SHREDDING_MAX 4096

typedef struct floe_pq_write_options {
    floe_codec codec;            /* default FLOE_CODEC_SNAPPY */
    int codec_level;             /* 0 = the codec's default */
    size_t page_size;            /* target encoded bytes per data page; default 1 MiB */
    size_t page_row_limit;       /* max rows per data page; default 20000 */
    size_t row_group_size;       /* target buffered bytes per row group; default 128 MiB */
    size_t dict_page_size_limit; /* dictionary bytes before falling back; default 1 MiB */
    bool dictionary;             /* try dictionary encoding; default true */
    bool delta_ints;             /* DELTA_BINARY_PACKED fallback for ints when smaller;
                                    default true */
    int64_t target_file_size;    /* floe_pq_writer_should_roll threshold; 0 = never */
    bool write_page_index;       /* ColumnIndex + OffsetIndex; default true */
    bool page_checksum;          /* CRC-32 in every page header; default true */
    bool page_statistics;        /* Statistics in data page headers too (only old readers
                                    need them with a page index); default false */
    size_t stats_truncate_length; /* BYTE_ARRAY bounds longer than this are truncated
                                     in the statistics and page index (the file info
                                     keeps the exact values); default 64 */
    int threads;                 /* threads encoding columns in parallel; default 1. The
                                    file is the same whatever the number. */
    const floe_pq_executor *executor; /* borrowed; non-NULL: columns are encoded through
                                    it (threads is then ignored) */
    const char *created_by;      /* NULL = "floe version X.Y.Z (build B)" */
    const floe_pq_kv *kv;        /* extra footer key-value metadata (copied at open) */
    size_t nkv;
    floe_output_options output;  /* passed to floe_output_open (fsync default true) */
    char variant_shredding[FLOE_PQ_SHREDDING_MAX];
                                 /* "" (default): variants are written unshredded. Else
                                    paths inside variant columns written shredded
                                    (VariantShredding.md), comma-separated PATH:TYPE:
                                    PATH is the variant column's name (dotted from the
                                    top level) followed by the object keys down to the
                                    shredded value, TYPE one of boolean, int, long,
                                    double, string, e.g.
                                    "payload.user.country:string,payload.n:long"; a
                                    PATH that is the column itself shreds the whole value
                                    as TYPE. Every PATH must lead to a variant of the
                                    schema (floe_pq_writer_open: FLOE_EINVALID). "auto"
                                    (alone): the writer chooses the paths from the
                                    first rows written to it (README "variant.shredding
                                    =auto"), holding up to 10,000 of them (whole
                                    batches) or a row group's bytes before it writes */
    bool write_behind;           /* a writer thread writes each finished row group's chunks
                                    to the output while the next row group fills (their
                                    memory is freed as they are written); default false.
                                    Same bytes; a write error is returned by a later call */
} floe_pq_write_options;

/* Fill o with the defaults above. */
void floe_pq_write_options_init(floe_pq_write_options *o);

/* Metrics for one leaf column over the whole file, what an Iceberg manifest entry records.
 * Bounds are the Parquet PLAIN encoding of the value without a length prefix: INT32/FLOAT
 * 4 bytes LE, INT64/DOUBLE 8 bytes LE, BOOLEAN 1 byte, BYTE_ARRAY/FIXED the bytes
 * (decimals: as stored, big-endian two's complement for FIXED). */
typedef struct floe_pq_column_info {
    const floe_field *field;     /* the leaf (borrowed from the writer's schema) */
    int32_t field_id;
    bool repeated;               /* inside a list or map (max repetition level > 0) */
    int64_t column_size;         /* compressed bytes incl. page headers, all row groups */
    int64_t value_count;         /* slots, nulls included */
    int64_t null_value_count;
    bool has_nan_count;          /* float and double columns */
    int64_t nan_value_count;
    bool has_bounds;             /* false when every value was null (or NaN) */
    uint8_t *lower_bound;        /* owned by the file info */
    size_t lower_len;
    bool lower_truncated;        /* a prefix of the true minimum */
    uint8_t *upper_bound;
    size_t upper_len;
    bool upper_truncated;        /* greater than the true maximum (incremented prefix) */
    /* A shredded variant's primitive typed_value leaf (field NULL, field_id -1): */
    int32_t variant_id;          /* the variant field's id; 0 for every other column */
    char *variant_path;          /* owned: the values' normalized JSON path, "$['a']['b']" */
    floe_type_id variant_type;   /* typed_value's type */
    bool variant_uniform;        /* the path's value leaf is null in every row, so every
                                    value at the path is of variant_type (or missing) */
} floe_pq_column_info;

typedef struct floe_pq_file_info {
    int64_t record_count;
    int64_t file_size_in_bytes;
    int64_t row_group_count;
    floe_pq_column_info *columns; /* one per leaf, schema (depth-first) order */
    size_t ncolumns;
    int64_t *split_offsets;      /* row group start offsets, ascending */
    size_t nsplits;
} floe_pq_file_info;

/* Frees what a file info owns (not fi itself). Accepts a zeroed or NULL fi. */
void floe_pq_file_info_free(floe_pq_file_info *fi);

typedef struct floe_pq_writer floe_pq_writer;

/* 0 when the writer can write schema; else FLOE_EUNSUPPORTED naming the field (its names
 * from the top level, dotted): a struct with no fields (Iceberg allows struct<>, Parquet
 * stores leaves only, so a group needs a column; parquet-java and Arrow refuse it too), or
 * a schema with no field at all. Writers check before creating any file. */
int floe_pq_schema_writable(const floe_schema *schema, floe_error *err) FLOE_NODISCARD;

/* 0 when spec is well-formed text for floe_pq_write_options.variant_shredding (its
 * paths are checked against the schema when a writer opens) or "auto"; FLOE_EINVALID
 * naming the entry (also for auto among named paths), FLOE_ELIMIT past
 * FLOE_PQ_SHREDDING_MAX - 1 bytes or 256 paths. */
int floe_pq_variant_shredding_check(const char *spec, floe_error *err) FLOE_NODISCARD;

/* Open uri for writing (through floe_output_open) and write the leading magic.
 * schema: borrowed, must outlive the writer; must be finished (floe_schema_finish).
 * opts: copied; NULL = defaults. Errors: FLOE_EINVALID (bad options), FLOE_EUNSUPPORTED
 * (codec or type the writer cannot write), FLOE_EIO and friends from the output. */
int floe_pq_writer_open(floe_io *io, const char *uri, const floe_schema *schema,
                        const floe_pq_write_options *opts, floe_pq_writer **out,
                        floe_error *err) FLOE_NODISCARD;

/* Append the rows of b (whose schema must be the writer's). The batch is only read; the
 * caller may clear and reuse it on return. May write a row group. FLOE_EINVALID for a
 * batch that does not match the schema (column count, types, levels out of range, columns
 * with different row counts); after any error the writer accepts only close/abort.
 * Stored pages the batch carries (floe_colbuf_page) are written as they are where the
 * column would write a PLAIN page there anyway (a chunk without or past its dictionary;
 * PLAIN, not DELTA, for its type), the codec is the writer's and has no level setting
 * (SNAPPY, LZ4_RAW, UNCOMPRESSED), and the page is within 1.5 x page_size and page_row_limit
 * and holds at least floe_pq_write_options_carry_min bytes; statistics and the page
 * index come from the batch's values either way. */
int floe_pq_writer_write_batch(floe_pq_writer *w, const floe_batch *b, floe_error *err)
    FLOE_NODISCARD;

/* Write the buffered rows as a row group now (no-op when none are buffered), and free
 * the memory the writer keeps for the next row group. */
int floe_pq_writer_flush(floe_pq_writer *w, floe_error *err) FLOE_NODISCARD;
/* End the row group here, as when its buffered bytes reach row_group_size (no-op when no
 * row is buffered): more rows are coming, and the next row group reuses its memory. */
int floe_pq_writer_end_row_group(floe_pq_writer *w, floe_error *err) FLOE_NODISCARD;
/* Row groups ended so far (written, or handed to the write-behind thread). */
int64_t floe_pq_writer_row_groups(const floe_pq_writer *w);

/* Bytes written to the output plus bytes buffered for the current row group: what the
 * file would about measure if closed now (footer excluded). */
int64_t floe_pq_writer_bytes_written(const floe_pq_writer *w);
int64_t floe_pq_writer_rows(const floe_pq_writer *w);
/* Stored pages written as they are so far (see floe_pq_writer_write_batch). */
int64_t floe_pq_writer_carried_pages(const floe_pq_writer *w);
/* The smallest uncompressed page a writer with options o places as stored (min(64 KiB,
 * page_size / 2)), or 0 when its codec rules page carry out: what a reader filling
 * batches for it should set as floe_colbuf.carry_min. */
uint32_t floe_pq_write_options_carry_min(const floe_pq_write_options *o);
/* Bytes the writer holds in memory for the current row group (pages, dictionaries). */
size_t floe_pq_writer_buffered_bytes(const floe_pq_writer *w);
/* True when target_file_size is set and bytes_written has reached it: close this file and
 * open the next. */
bool floe_pq_writer_should_roll(const floe_pq_writer *w);

/* Write the remaining rows, the page index and the footer, publish the file and free w
 * (in every case). out (may be NULL) receives the file's metrics on success; free it with
 * floe_pq_file_info_free. On error nothing is left at the uri. */
int floe_pq_writer_close(floe_pq_writer *w, floe_pq_file_info *out, floe_error *err) FLOE_NODISCARD;

/* Discard the file (nothing is left at the uri) and free w. Accepts NULL. */
void floe_pq_writer_abort(floe_pq_writer *w);

/* Bound truncation used for statistics (exposed for the Iceberg metrics layer):
 * lower: the longest prefix of at most len bytes (for UTF-8, cut at a character
 * boundary); upper: a prefix incremented so it is greater than every value starting with
 * it (UTF-8: the last code point is incremented; bytes: the last byte below 0xFF, with
 * the tail dropped). Appends the result to out; *truncated tells whether it differs from
 * the input. FLOE_ENOTFOUND for an upper bound that cannot be shortened (all 0xFF or
 * U+10FFFF): use the value itself. */
int floe_pq_truncate_lower(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated);
int floe_pq_truncate_upper(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
