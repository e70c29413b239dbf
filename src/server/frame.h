/*
 * frame.h - WAL frames and segments of `floe serve` (private to src/server and its tests).
 *
 * A frame holds everything one request made durable: its accepted records, grouped per
 * partition, its rejected records (bound for the quarantine) and its idempotency answer.
 * One frame = one request, so a torn tail loses a whole request or nothing (a retried
 * request with its key can never find half of itself stored).
 *
 *   frame header (48 bytes, little endian)
 *     0  u32 magic "FLWF"          16 u32 record count (records sections)
 *     4  u16 version (1)           20 u32 raw length (NDJSON bytes before compression)
 *     6  u16 section count         24 u32 stored length (bytes of the body that follows)
 *     8  u64 frame id              28 u32 CRC-32C of the body
 *                                  32 u64 time the frame was written (ms since epoch)
 *                                  40 u32 CRC-32C of bytes 0..40
 *                                  44 u32 reserved (0)
 *   body: sections, each
 *     0  u8 kind (1 records, 2 quarantine lines, 3 idempotency answer)
 *     1  u8 codec (0 none, 1 zstd: one complete zstd frame, 2 lz4: one complete LZ4
 *        frame: independent blocks and the content size)
 *     2  u16 route length          8 u32 raw length
 *     4  u32 record count          12 u32 stored length
 *     16 route (records: "<table>\0<partition path>", quarantine: "<table>",
 *        answer: "<table>\0<idempotency key>"), then the stored bytes.
 *
 * A WAL segment is a 16-byte header ("FLOEWAL1", u64 segment number) and frames. At
 * recovery a frame that fails its length or CRC checks ends the segment: it and
 * everything after it are cut off (only unacknowledged requests can be there).
 */
#ifndef FLOE_SERVER_FRAME_H
#define FLOE_SERVER_FRAME_H

#include "floe/common.h"

#define FLOE_FRAME_MAGIC 0x46574c46u /* "FLWF" */
#define FLOE_FRAME_VERSION 1
#define FLOE_FRAME_HEADER 48
#define FLOE_SECTION_HEADER 16
#define FLOE_FRAME_MAX_BODY (512u << 20) /* hostile-length cap */
#define FLOE_SEGMENT_HEADER 16

enum { FLOE_SECTION_RECORDS = 1, FLOE_SECTION_QUARANTINE = 2, FLOE_SECTION_ANSWER = 3 };
/* Section codecs. The codec is recorded per section, and a landing file is the
 * concatenation of one codec's sections (a valid .zst / .lz4 stream, or plain NDJSON), so
 * files and WAL segments written with any codec stay readable after the setting changes.
 * lz4 is the default: zstd, even at level 1, costs the server far more CPU
 * (bench/RESULTS.md, "Choices"). */
enum { FLOE_CODEC_NONE_ = 0, FLOE_CODEC_ZSTD_ = 1, FLOE_CODEC_LZ4_ = 2 };
#define FLOE_CODEC_MAX_ FLOE_CODEC_LZ4_
#define FLOE_SECTION_MAX_RAW (1u << 30) /* hostile-length cap of a decoded section */

typedef struct floe_frame_section {
    uint8_t kind, codec;
    const uint8_t *route;
    size_t route_len;
    uint32_t records, raw_len;
    const uint8_t *stored;
    size_t stored_len;
} floe_frame_section;

typedef struct floe_frame_view {
    uint64_t frame_id;
    uint64_t time_ms;
    uint32_t nsections, records, raw_len;
    const uint8_t *body;
    size_t body_len;
} floe_frame_view;

/* Start a frame in b (b is reset): reserves the header. */
int floe_frame_begin(floe_buf *b);
/* Append a section. FLOE_ELIMIT past the caps (route 64 KiB, body 512 MiB). */
int floe_frame_add_section(floe_buf *b, uint8_t kind, uint8_t codec, const void *route,
                           size_t route_len, uint32_t records, uint32_t raw_len,
                           const void *stored, size_t stored_len);
/* Fill the header fields that depend on the body (counts, lengths, body CRC). */
void floe_frame_end(floe_buf *b);
/* Stamp the frame id and time and the header CRC (the WAL writer does this). */
void floe_frame_stamp(uint8_t *frame, uint64_t frame_id, uint64_t time_ms);
/* Parse the frame at p[0..n): FLOE_ECORRUPT (err->offset relative to p) when it is torn,
 * too long, or fails a CRC; *consumed = its length. Sections are checked too. */
int floe_frame_parse(const uint8_t *p, size_t n, floe_frame_view *out, size_t *consumed,
                     floe_error *err);
/* Iterate sections: *pos starts at 0; returns 1 with *s filled, 0 at the end. Only for
 * frames that floe_frame_parse accepted. */
int floe_frame_next_section(const floe_frame_view *f, size_t *pos, floe_frame_section *s);

/* Section encoder state (compression contexts), reused across calls; one thread at a
 * time. */
typedef struct floe_section_coder floe_section_coder;
floe_section_coder *floe_section_coder_new(void);
void floe_section_coder_free(floe_section_coder *c);
/* Encode p[0..n) with codec (level: zstd's) into out (reset first). FLOE_ENOMEM,
 * FLOE_EINVALID (unknown codec), FLOE_EINTERNAL (the library failed). */
int floe_section_encode(floe_section_coder *c, uint8_t codec, int level, const uint8_t *p,
                        size_t n, floe_buf *out);
/* XXH32 of p[0..n) (exposed for the tests' known vectors). */
uint32_t floe_section_xxh32(const void *p, size_t n, uint32_t seed);
/* Decode one section's stored bytes and append exactly raw_len bytes to out. The stored
 * bytes must be one complete frame of codec (none: raw_len bytes). FLOE_ECORRUPT when they
 * are not, or decode to another length; FLOE_ELIMIT past FLOE_SECTION_MAX_RAW. */
int floe_section_decode(uint8_t codec, const uint8_t *stored, size_t stored_len,
                        uint32_t raw_len, floe_buf *out, floe_error *err);

/* Decode a concatenation of sections of one codec (a landing file's bytes) that decode to
 * raw_len bytes in all, appending them to out. FLOE_ECORRUPT when they do not. */
int floe_section_decode_all(uint8_t codec, const uint8_t *stored, size_t stored_len,
                            size_t raw_len, floe_buf *out, floe_error *err);

/* Segment header. */
void floe_segment_header(uint8_t out[FLOE_SEGMENT_HEADER], uint64_t segno);
bool floe_segment_header_ok(const uint8_t *p, size_t n, uint64_t *segno);

#endif
