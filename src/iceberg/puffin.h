/*
 * puffin.h - deletion vectors of Iceberg format v3: the Puffin container (footer and blob
 * metadata), the `deletion-vector-v1` blob and the portable 64-bit Roaring bitmap inside
 * it. Private to libfloe (src/iceberg and the folders above it) and its tests.
 *
 * Every decoder treats its input as hostile: lengths, counts and offsets are checked
 * against the bytes that remain and against a cap before anything is allocated, and every
 * refusal is FLOE_ECORRUPT (or FLOE_ELIMIT for a cap) with the byte offset in err->offset
 * and in the message.
 */
#ifndef FLOE_ICEBERG_PUFFIN_H
#define FLOE_ICEBERG_PUFFIN_H

#include "floe/common.h"
#include "floe/io.h"
#include "floe/manifest.h" /* floe_data_file_is_dv */

/* Positions of deleted rows: sorted, distinct, non-negative. Free with floe_free(pos). */
typedef struct floe_dv_positions {
    int64_t *pos;
    size_t n;
} floe_dv_positions;

/* Decode a portable 64-bit Roaring bitmap (RoaringFormatSpec, "Extension for 64-bit
 * implementations"; 32-bit bitmaps in the general layout with array, bitset and run
 * containers) that fills p[0..n) exactly. Positions must be below limit (a data file's
 * record count; INT64_MAX for none) and number at most max_card (FLOE_ELIMIT past it).
 * base is the offset of p in its file, for messages. Strict: keys ascending, arrays
 * ascending, runs sorted and apart, the header's cardinalities true. */
int floe_roaring64_decode(const uint8_t *p, size_t n, int64_t base, int64_t limit,
                          size_t max_card, floe_dv_positions *out, floe_error *err);
/* Encode sorted, distinct, non-negative positions; per 16-bit container the smallest of
 * array, bitset and run forms. Appends to out. */
int floe_roaring64_encode(const int64_t *pos, size_t n, floe_buf *out, floe_error *err);

/* A deletion-vector-v1 blob: 4-byte big-endian length of magic + bitmap, the magic
 * D1 D3 39 64, the bitmap, CRC-32 of magic + bitmap (big-endian). */
int floe_dv_blob_decode(const uint8_t *p, size_t n, int64_t base, int64_t limit,
                        size_t max_card, floe_dv_positions *out, floe_error *err);
int floe_dv_blob_encode(const int64_t *pos, size_t n, floe_buf *out, floe_error *err);

/* One BlobMetadata of a Puffin footer. Strings are NULL when absent. */
typedef struct floe_puffin_blob {
    char *type;
    int64_t snapshot_id, sequence_number;
    int64_t offset, length;
    char *compression_codec;
    char *referenced_data_file;   /* properties.referenced-data-file */
    bool has_cardinality;
    int64_t cardinality;          /* properties.cardinality */
} floe_puffin_blob;

typedef struct floe_puffin_footer {
    floe_puffin_blob *blobs;
    size_t nblobs;
    char *created_by;             /* properties.created-by */
} floe_puffin_footer;

#define FLOE_PUFFIN_MAGIC "PFA1"
/* Bytes at the end of every Puffin file: payload size, flags, magic. */
#define FLOE_PUFFIN_TAIL 12

/* From the last FLOE_PUFFIN_TAIL bytes of a file of file_size bytes: where the footer
 * (its leading magic) starts. */
int floe_puffin_footer_start(const uint8_t tail[FLOE_PUFFIN_TAIL], int64_t file_size,
                             int64_t *start, floe_error *err);
/* Decode the footer p[0..n) (from its leading magic to the end of the file, which is
 * file_size bytes long): magic, payload (LZ4-compressed when the flag says so), size,
 * flags, magic; the JSON FileMetadata; every blob inside the file, after its magic and
 * before the footer. Free with floe_puffin_footer_free. */
int floe_puffin_footer_decode(const uint8_t *p, size_t n, int64_t file_size,
                              floe_puffin_footer *out, floe_error *err);
void floe_puffin_footer_free(floe_puffin_footer *f);

/* Write a Puffin file holding one deletion-vector-v1 blob per data file (paths[i] with
 * positions pos[i]). offsets[i] and lengths[i] receive where each blob landed: the
 * content_offset and content_size_in_bytes of its manifest entry. Returns the file
 * size in *size. */
int floe_puffin_write_dvs(floe_io *io, const char *uri, const char *const *paths,
                          const floe_dv_positions *pos, size_t n, int64_t *offsets,
                          int64_t *lengths, int64_t *size, floe_error *err);

/* Read the deletion vector at [offset, offset + length) of the Puffin file at uri (what a
 * manifest entry's content_offset / content_size_in_bytes say), checked against the
 * file's footer: a deletion-vector-v1 blob there, uncompressed, with the cardinality it
 * claims. A file that is not a Puffin container (a bare blob, as some early writers
 * made) is refused, naming the file. limit: the data file's record count (or
 * INT64_MAX). */
int floe_dv_read(floe_io *io, const char *uri, int64_t offset, int64_t length,
                 const char *referenced_data_file, int64_t limit, floe_dv_positions *out,
                 floe_error *err);

/* An open Puffin file of deletion vectors, its footer decoded once: reading many vectors
 * of one file (a delete over many data files writes them together) costs one footer
 * decode, not one each. Blobs are found by offset in O(log n). */
typedef struct floe_dv_file floe_dv_file;
int floe_dv_file_open(floe_io *io, const char *uri, floe_dv_file **out, floe_error *err);
/* floe_dv_read's checks and result, for a vector of this file. */
int floe_dv_file_read(floe_dv_file *d, int64_t offset, int64_t length,
                      const char *referenced_data_file, int64_t limit, floe_dv_positions *out,
                      floe_error *err);
void floe_dv_file_close(floe_dv_file *d);

/* The last few Puffin files read, kept open (least recently used goes first): for a
 * reader that takes deletion vectors one data file at a time. Zero-initialise; free with
 * floe_dv_cache_free. Not thread-safe. */
#define FLOE_DV_CACHE_SLOTS 4
typedef struct floe_dv_cache {
    floe_dv_file *slot[FLOE_DV_CACHE_SLOTS];
    uint64_t used[FLOE_DV_CACHE_SLOTS];
    uint64_t tick;
} floe_dv_cache;
int floe_dv_cache_read(floe_dv_cache *c, floe_io *io, const char *uri, int64_t offset,
                       int64_t length, const char *referenced_data_file, int64_t limit,
                       floe_dv_positions *out, floe_error *err);
void floe_dv_cache_free(floe_dv_cache *c);

/* Largest number of positions one deletion vector may hold when nothing smaller bounds
 * it. */
#define FLOE_DV_MAX_CARD ((size_t)1 << 31)

#endif
