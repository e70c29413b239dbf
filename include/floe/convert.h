/*
 * floe/convert.h - NDJSON files in, Parquet files out: the conversion pipeline.
 *
 * One reader splits the inputs into chunks of whole lines (plain files are mapped, not
 * copied); a pool of worker threads shreds chunks into column batches (floe/json.h) and
 * writes them: one worker at a time feeds the batches, in input order, to the Parquet
 * writer (floe/parquet.h), whose column encoding runs on the whole pool, rolling to a new
 * file at the target size, and writes the rejected records, in input order, to the
 * quarantine. Because batches reach the
 * writer in input order and chunk boundaries do not depend on the thread count, the
 * output files are byte-identical whatever the number of threads.
 *
 * Memory is bounded by the options, not the input: (2 x threads + 2) chunks and batches
 * in flight plus one row group in the writer (or, partitioned, max_buffered_bytes over
 * all open writers).
 *
 * Ownership and threads: the options (schema, spec, strings) are borrowed for the call;
 * floe_convert_result owns file_uris, freed by floe_convert_result_free, and is written
 * only on success. floe_convert runs its own worker threads and joins them before it
 * returns.
 */
#ifndef FLOE_CONVERT_H
#define FLOE_CONVERT_H

#include "floe/common.h"
#include "floe/json.h"
#include "floe/parquet.h"
#include "floe/partition.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Called after each output file is closed; fi and partition (the file's partition tuple,
 * npartition = the spec's field count, 0 when unpartitioned) are borrowed for the call.
 * Return 0, or a negative code to stop the conversion. */
typedef int (*floe_convert_file_fn)(void *ctx, const char *uri, const floe_pq_file_info *fi,
                                    const floe_value *partition, size_t npartition,
                                    floe_error *err);

typedef struct floe_convert_options {
    const floe_schema *schema;      /* borrowed; required */
    floe_pq_write_options write;    /* Parquet options (target_file_size rolls files) */
    int threads;                    /* worker threads (shredding and encoding); 0 = 1 */
    size_t chunk_size;              /* bytes per chunk; 0 = 4 MiB, or a quarter of
                                       write.row_group_size when that is less (not
                                       under 256 KiB): the slots' memory follows it */
    floe_shred_options shred;       /* record limit, unknown-field policy */
    const char *out_dir;            /* output folder (created); required */
    const char *file_prefix;        /* file names <prefix>-NNNNN.parquet; NULL = "part" */
    /* Partitioned output: rows are routed by this bound spec (borrowed; NULL or no fields
     * = one output stream) into DIR/<partition path>/<prefix>-NNNNN.parquet, one open
     * writer per partition. Memory stays bounded: when the writers together hold more
     * than max_buffered_bytes, the largest flushes its row group; past max_open_files
     * the least recently used file is closed (a later row of its partition opens a new
     * file). */
    const floe_partition_spec *spec;
    size_t max_open_files;          /* 0 = 64 */
    size_t max_buffered_bytes;      /* 0 = 256 MiB */
    const char *quarantine_uri;     /* NULL = <out_dir>/_quarantine/quarantine.ndjson */
    bool strict;                    /* any rejected record fails the conversion */
    floe_convert_file_fn on_file;   /* may be NULL */
    void *on_file_ctx;
    floe_io *io;                    /* I/O context of the outputs and the quarantine
                                       (NULL: the default) */
    /* Called on the calling thread after each chunk read (see chunk_size) with the
     * input bytes read so far over all inputs, in the files' bytes (compressed if
     * compressed: floe_line_reader_input_pos); may be NULL. */
    void (*progress)(void *ctx, int64_t input_bytes);
    void *progress_ctx;
    /* The inputs' total size in the bytes progress counts (their files' sizes), when the
     * caller knows it; 0 = unknown. Unpartitioned, it ends the row group that reaches the
     * end of the input early, in steps (each at least twice what is left), so that the
     * last one, written after the last record, is small: the file is done sooner, as
     * the others are written while the rest is converted. The row groups then depend on
     * it (never on the thread count). */
    int64_t input_size;
    /* With one input: its NDJSON lines in memory (input_mem[0..input_mem_len), borrowed
     * until floe_convert returns; plain, whatever the first bytes), inputs[0] naming them
     * in messages and the quarantine (floe/input.h, memory input). NULL: read the file. */
    const uint8_t *input_mem;
    size_t input_mem_len;
    /* With input_mem: the caller is still writing it (floe/input.h, growing memory
     * input; NULL: input_mem_len is all of it). */
    int64_t (*input_mem_more)(void *ctx, size_t want, bool *final);
    void *input_mem_more_ctx;
} floe_convert_options;

/* The defaults listed above. */
void floe_convert_options_init(floe_convert_options *o);

typedef struct floe_convert_result {
    int64_t records_in;             /* records seen (accepted + rejected) */
    int64_t records_out;            /* rows written */
    int64_t rejected;               /* records quarantined (oversized included) */
    int64_t rejected_by_reason[FLOE_REJECT_NREASONS];
    int64_t files;
    int64_t bytes_in;               /* input bytes as read (compressed if compressed) */
    int64_t bytes_decompressed;     /* NDJSON bytes after decompression */
    int64_t bytes_out;              /* Parquet bytes written */
    double seconds;
    char **file_uris;               /* files written, in order (owned) */
} floe_convert_result;

/* Free the file_uris the result owns (files becomes 0). Accepts NULL. */
void floe_convert_result_free(floe_convert_result *r);

/* Convert the inputs ("-" = standard input) in order. On error every Parquet file written
 * by this call is removed and err names the input, line and offset where relevant; the
 * quarantine keeps the records it received (I5: a rejected record is never lost). With
 * strict, the first rejected record is the error (FLOE_ESCHEMA) and no Parquet file is
 * left behind. */
int floe_convert(const char *const *inputs, size_t ninputs, const floe_convert_options *opts,
                 floe_convert_result *out, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
