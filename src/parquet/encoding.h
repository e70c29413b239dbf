/*
 * encoding.h - Parquet value and level encodings (parquet-format Encodings.md).
 *
 * Encoders append to a floe_buf. Decoders read from (p, n), never past n, check every
 * header value read from the input against what remains, and return FLOE_ECORRUPT with
 * the offset on bad input. `consumed` (when non-NULL) receives the bytes used.
 */
#ifndef FLOE_PQ_ENCODING_H
#define FLOE_PQ_ENCODING_H

#include "floe/common.h"

/* Bits needed to represent v (0 for 0). */
static inline int floe_bit_width(uint64_t v) {
    return v ? 64 - __builtin_clzll(v) : 0;
}

/* ---- RLE / bit-packed hybrid (levels, dictionary indices, RLE booleans) ------------- */
/* Encode n values of bit_width (0..32) bits, without the 4-byte length prefix. */
int floe_rle_encode_u32(const uint32_t *vals, size_t n, int bit_width, floe_buf *out);
int floe_rle_encode_i16(const int16_t *vals, size_t n, int bit_width, floe_buf *out);
/* n copies of v: the same bytes floe_rle_encode_u32/_i16 write for them, without reading
 * n values (a page's definition levels when it has no null). */
int floe_rle_encode_repeat(uint32_t v, size_t n, int bit_width, floe_buf *out);
/* Decode exactly `count` values. Returns FLOE_ECORRUPT if the input ends early or a value
 * does not fit. Values past the last run's end are not invented. */
int floe_rle_decode_u32(const uint8_t *p, size_t n, int bit_width, uint32_t *out,
                        size_t count, size_t *consumed, floe_error *err);
int floe_rle_decode_i16(const uint8_t *p, size_t n, int bit_width, int16_t *out,
                        size_t count, size_t *consumed, floe_error *err);
/* Deprecated BIT_PACKED level encoding (MSB-first bit order). */
int floe_bitpacked_decode_i16(const uint8_t *p, size_t n, int bit_width, int16_t *out,
                              size_t count, size_t *consumed, floe_error *err);

/* ---- PLAIN booleans (bit-packed, LSB first) ----------------------------------------- */
int floe_plain_bool_encode(const uint8_t *vals, size_t n, floe_buf *out);
int floe_plain_bool_decode(const uint8_t *p, size_t n, uint8_t *out, size_t count,
                           size_t *consumed, floe_error *err);

/* ---- DELTA_BINARY_PACKED (block 128, 4 miniblocks of 32) ---------------------------- */
int floe_delta_encode_i32(const int32_t *vals, size_t n, floe_buf *out);
int floe_delta_encode_i64(const int64_t *vals, size_t n, floe_buf *out);
/* Decode up to `count` values (the page's non-null count); *decoded receives how many
 * the header announced (must equal count for a well-formed page). */
int floe_delta_decode_i32(const uint8_t *p, size_t n, int32_t *out, size_t count,
                          size_t *consumed, floe_error *err);
int floe_delta_decode_i64(const uint8_t *p, size_t n, int64_t *out, size_t count,
                          size_t *consumed, floe_error *err);
/* The value count a DELTA_BINARY_PACKED header announces (after checking the header and
 * that the input can hold that many values); the decoders above require it to equal
 * their `count`. */
int floe_delta_header_count(const uint8_t *p, size_t n, uint64_t *count, floe_error *err);

/* ---- DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY ----------------------------------- */
/* Decode `count` byte arrays, appending their bytes to `values` and writing count + 1
 * offsets (relative to values->len at entry, offsets[0] = that length). */
int floe_delta_length_decode(const uint8_t *p, size_t n, size_t count, uint32_t *offsets,
                             floe_buf *values, size_t *consumed, floe_error *err);
int floe_delta_byte_array_decode(const uint8_t *p, size_t n, size_t count,
                                 uint32_t *offsets, floe_buf *values, size_t *consumed,
                                 floe_error *err);
int floe_delta_length_encode(const uint8_t *data, const uint32_t *offsets, size_t count,
                             floe_buf *out);
int floe_delta_byte_array_encode(const uint8_t *data, const uint32_t *offsets,
                                 size_t count, floe_buf *out);

/* ---- BYTE_STREAM_SPLIT (FLOAT, DOUBLE, INT32, INT64, FLBA of width w) --------------- */
int floe_bss_encode(const uint8_t *vals, size_t count, int width, floe_buf *out);
int floe_bss_decode(const uint8_t *p, size_t n, int width, uint8_t *out, size_t count,
                    floe_error *err);

#endif
