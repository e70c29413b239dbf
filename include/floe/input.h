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
 *
 * Ownership and threads: a floe_line_reader owns its file and buffers until
 * floe_line_reader_close; chunks fill a floe_buf the caller owns. One thread at a time
 * per reader.
 */
#ifndef FLOE_INPUT_H
#define FLOE_INPUT_H

#include "floe/common.h"
#include "floe/io.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_line_reader floe_line_reader;

typedef struct floe_input_map floe_input_map;

typedef struct floe_chunk {
    floe_buf data;        /* read mode: the chunk's storage (reused across chunks) */
    /* The chunk's complete lines; the last may lack its '\n' at end of input. Read mode:
     * data.data. Map mode: a window of the mapped file, valid until floe_chunk_release
     * (even after the reader is closed). */
    const uint8_t *bytes;
    size_t len;
    int64_t first_line;   /* 1-based line number of the first line in bytes */
    int64_t first_offset; /* byte offset of bytes[0] in the decompressed input */
    int64_t seq;          /* 0, 1, 2 ... in input order */
    floe_input_map *map;  /* map mode: the mapping this chunk holds a reference on */
} floe_chunk;

/* A piece of an oversized line: called with first=true for its first piece and last=true
 * for its final one (both may hold for one call); return non-zero to abort reading. */
typedef int (*floe_oversize_fn)(void *ctx, const char *source, int64_t line, int64_t offset,
                                const uint8_t *p, size_t n, bool first, bool last,
                                int64_t total_len);

typedef struct floe_line_reader_options {
    size_t chunk_size;         /* target bytes per chunk (default 4 MiB) */
    size_t max_record;         /* longest record kept in chunks (default 1 MiB): a line
                                * without its newline and a '\r' before it, which the
                                * oversize callback is not given either */
    floe_oversize_fn oversize; /* required when lines may exceed max_record */
    void *oversize_ctx;
    /* Map mode: a plain (uncompressed) regular file is mapped, and chunks point into the
     * mapping instead of being copied (no read(2) copy, no line-by-line scan: a chunk is
     * cut at the first '\n' from chunk_size bytes on). Then only the line that crosses a
     * chunk boundary is checked against max_record (and streamed to `oversize` when too
     * long); a longer line inside a chunk stays in it, for the consumer to reject (the
     * shredder does). Chunk boundaries are the same as in read mode. Compressed input,
     * pipes and standard input are read as without it. The file must not shrink while
     * it is read (the mapping would fault). */
    bool map;
    floe_io *io; /* context whose fault hooks the reads count in (NULL: the default) */
    /* Memory input (mem != NULL): the lines are mem[0..mem_len), read in map mode (chunks
     * point into them; their pages are neither advised nor unmapped), taken as plain
     * NDJSON whatever their first bytes (no compression is sniffed); the path only names
     * them in messages. The caller keeps the bytes unchanged until the reader is closed
     * and every chunk it handed out is released. */
    const uint8_t *mem;
    size_t mem_len;
    /* Growing memory input (with mem; NULL: mem_len is all of it): the caller is still
     * writing whole lines after mem[0..mem_len). Before each chunk the reader calls
     * mem_more(ctx, want, &final), which waits until mem[0..want) is written or the input
     * is complete and returns the bytes written (ending at a line's end; *final: that is
     * all of the input), or a negative floe code to give up (the read fails with it).
     * Chunks are then cut as from the whole input. The caller keeps the bytes it may
     * write mapped from mem on. */
    int64_t (*mem_more)(void *ctx, size_t want, bool *final);
    void *mem_more_ctx;
} floe_line_reader_options;

int floe_line_reader_open(const char *path, const floe_line_reader_options *opts,
                          floe_line_reader **out, floe_error *err) FLOE_NODISCARD;
/* Fill chunk (its buffer is reused; initialise it with floe_buf_init first). In map mode
 * the chunk must start zeroed, and what it held before is released; release a mapped
 * chunk before handing it to another reader. Returns 1 when a chunk was produced, 0 at end of
 * input, negative on error. */
int floe_line_reader_next(floe_line_reader *r, floe_chunk *chunk, floe_error *err) FLOE_NODISCARD;
/* Map mode: drop the chunk's pages from the process (they stay in the page cache) and its
 * reference on the mapping (the last reference unmaps the file). Keeps data's storage.
 * Safe on a chunk that holds nothing, and from any thread. */
void floe_chunk_release(floe_chunk *chunk);
/* Map mode: whether the file shrank under the mapping, so that some bytes this chunk (or
 * another of the same file) showed were zeros standing in for data that was gone. The
 * caller must then fail instead of using what it read. */
bool floe_chunk_input_shrank(const floe_chunk *chunk);
/* Whether this reader maps its input (map mode asked for and the input is mappable). */
bool floe_line_reader_mapped(const floe_line_reader *r);
/* Name used in messages: the path, or "<stdin>". Valid until close. */
const char *floe_line_reader_source(const floe_line_reader *r);
/* Compressed and decompressed bytes consumed so far. */
int64_t floe_line_reader_bytes_in(const floe_line_reader *r);
int64_t floe_line_reader_bytes_out(const floe_line_reader *r);
/* How far into the input file reading has gone, in the file's bytes (a mapped file: the
 * offset handed out so far; otherwise the bytes read, compressed if compressed): for
 * progress against the file's size. */
int64_t floe_line_reader_input_pos(const floe_line_reader *r);
int64_t floe_line_reader_oversized(const floe_line_reader *r);
void floe_line_reader_close(floe_line_reader *r);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
