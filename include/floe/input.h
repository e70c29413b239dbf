/*
 * floe/input.h - reading NDJSON input as chunks of whole lines.
 *
 * A line reader opens a file ("-" for standard input), detects gzip or zstd compression by
 * its magic bytes, and hands out chunks that hold only complete lines, each tagged with
 * the line number and byte offset (in the decompressed stream) of its first line, so that
 * every rejected record can be named by file, line and offset.
 *
 * Lines longer than max_record never enter a chunk: they are streamed, piece by piece, to
 * the oversize callback (the caller quarantines them whole) and counted; memory stays
 * bounded by chunk_size + max_record whatever the input.
 */
#ifndef FLOE_INPUT_H
#define FLOE_INPUT_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_line_reader floe_line_reader;

typedef struct floe_chunk {
    floe_buf data;        /* complete lines; the last may lack its '\n' at end of input */
    int64_t first_line;   /* 1-based line number of the first line in data */
    int64_t first_offset; /* byte offset of data[0] in the decompressed input */
    int64_t seq;          /* 0, 1, 2 ... in input order */
} floe_chunk;

/* A piece of an oversized line: called with first=true for its first piece and last=true
 * for its final one (both may hold for one call); return non-zero to abort reading. */
typedef int (*floe_oversize_fn)(void *ctx, const char *source, int64_t line, int64_t offset,
                                const uint8_t *p, size_t n, bool first, bool last,
                                int64_t total_len);

typedef struct floe_line_reader_options {
    size_t chunk_size;         /* target bytes per chunk (default 4 MiB) */
    size_t max_record;         /* longest line kept in chunks (default 1 MiB) */
    floe_oversize_fn oversize; /* required when lines may exceed max_record */
    void *oversize_ctx;
} floe_line_reader_options;

int floe_line_reader_open(const char *path, const floe_line_reader_options *opts,
                          floe_line_reader **out, floe_error *err);
/* Fill chunk (its buffer is reused; initialise it with floe_buf_init first). Returns 1
 * when a chunk was produced, 0 at end of input, negative on error. */
int floe_line_reader_next(floe_line_reader *r, floe_chunk *chunk, floe_error *err);
/* Name used in messages: the path, or "<stdin>". Valid until close. */
const char *floe_line_reader_source(const floe_line_reader *r);
/* Compressed and decompressed bytes consumed so far. */
int64_t floe_line_reader_bytes_in(const floe_line_reader *r);
int64_t floe_line_reader_bytes_out(const floe_line_reader *r);
int64_t floe_line_reader_oversized(const floe_line_reader *r);
void floe_line_reader_close(floe_line_reader *r);

#ifdef __cplusplus
}
#endif
#endif
