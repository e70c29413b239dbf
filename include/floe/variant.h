/*
 * floe/variant.h - the Parquet Variant binary encoding (apache/parquet-format
 * VariantEncoding.md): a metadata blob (the key dictionary) and a value blob, decoded to
 * JSON text and encoded from JSON text.
 *
 * ---------------------------------------------------------------------------------------
 * Decoding (floe_variant_to_json) validates everything it reads, and refuses with
 * FLOE_ECORRUPT naming the blob ("variant metadata" / "variant value") and the byte offset
 * (also in floe_error.offset):
 *   metadata: version 1, the unused header bit clear, dictionary_size and dictionary_size+1
 *             offsets inside the blob, the first offset 0, offsets non-decreasing, the
 *             last one ending the blob exactly, every string valid UTF-8, and when
 *             sorted_strings is set the strings strictly increasing (sorted and unique).
 *   value:    unused header bits clear, every size, count, field id and offset inside its
 *             container (ids below dictionary_size), each object's field names strictly
 *             increasing in unsigned byte order (sorted, no duplicate names even under two
 *             ids), strings valid UTF-8, decimal scales at most 38 and decimal16 values
 *             of at most 38 digits, times of day inside [00:00, 24:00), no bytes after the
 *             top-level value, nesting at most FLOE_VARIANT_MAX_DEPTH (FLOE_ELIMIT).
 *   An unknown primitive type id is FLOE_EUNSUPPORTED.
 *
 * JSON text of a variant (floe's NDJSON conventions for the same types):
 *   null, boolean          -> null, true, false
 *   int8..int64            -> JSON integers
 *   double, float          -> shortest round-trip digits (floe_buf_append_js_double; a
 *                             float as the shortest decimal that reads back to it); a
 *                             negative zero as -0.0 (the encoder reads that back as a
 *                             double -0.0, and -0 as the integer 0); NaN and the
 *                             infinities as the strings "NaN", "Infinity", "-Infinity"
 *   decimal4/8/16          -> a bare JSON number with exactly `scale` fraction digits
 *                             (unscaled 1234, scale 2 -> 12.34; scale 0 -> an integer)
 *   date                   -> "YYYY-MM-DD" (years outside 0..9999 as +YYYYYY / -YYYYYY)
 *   timestamp (UTC)        -> "YYYY-MM-DDTHH:MM:SS.ffffffZ"; nanoseconds: 9 digits, "Z"
 *   timestamp without zone -> the same without "Z"
 *   time without zone      -> "HH:MM:SS.ffffff"
 *   binary                 -> a base64 string (standard alphabet, padded)
 *   string, short string   -> a JSON string
 *   uuid                   -> "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower case)
 *   object                 -> {...} with the keys in field id order, i.e. sorted
 *   array                  -> [...]
 *   No spaces are printed.
 *
 * Encoding (floe_variant_encode_json) takes one RFC 8259 JSON text (UTF-8; escapes
 * decoded, surrogate pairs combined, lone surrogates refused; whitespace around it only)
 * and writes the canonical form, so equal JSON gives equal bytes:
 *   metadata: the object keys of the whole value, unique, sorted in unsigned byte order,
 *             sorted_strings set (clear for an empty dictionary: 01 00 00, as other
 *             writers do); offset_size the smallest that holds both the string count and
 *             the total string bytes.
 *   null, true, false -> the primitives null, true, false.
 *   a number without fraction or exponent -> the smallest of int8/16/32/64 that holds it;
 *             "-0" -> int8 0 (integers have no negative zero; DuckDB's and Spark's JSON
 *             casts store it so); past int64 but at most 38 digits -> decimal16 scale 0;
 *             longer -> double.
 *   a number with a fraction and no exponent -> a decimal of scale = the fraction digits
 *             as written (1.50 -> unscaled 150, scale 2), the smallest of decimal4/8/16
 *             for its digits (<= 9, <= 18, <= 38); more than 38 digits or a scale past 38
 *             -> double. A negative zero (-0.0, -0.000) -> double -0.0, as a decimal's
 *             unscaled zero has no sign (DuckDB stores every fraction as a double).
 *   a number with an exponent -> double (correctly rounded, -0e5 is -0.0; overflow is
 *             refused).
 *   a string  -> short string when shorter than 64 bytes, else the string primitive.
 *   an object -> field ids and offsets in key order, the values stored in key order too;
 *             a duplicate key is refused (FLOE_EINVALID).
 *   an array  -> the elements in order.
 *   Objects and arrays: is_large only past 255 elements; field_id_size the smallest that
 *   holds the object's largest id, field_offset_size the smallest that holds its value
 *   bytes. Refusals: FLOE_EINVALID with the byte offset in the text in floe_error.offset
 *   (the message says what, the caller where: the text is often part of a record); nesting past
 *   FLOE_VARIANT_MAX_DEPTH or a container past 4 GiB: FLOE_ELIMIT.
 * So JSON -> variant -> JSON gives back the same text up to whitespace, key order, escapes
 * and number spelling (1.0e2 -> 100.0 is a double printed 100; -0.000 -> -0.0, a double;
 * -0 -> 0, an integer).
 *
 * Ownership and threads: outputs are the caller's floe_bufs (appended to); an encoder is
 * scratch state for one thread at a time.
 * ---------------------------------------------------------------------------------------
 */
#ifndef FLOE_VARIANT_H
#define FLOE_VARIANT_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

#define FLOE_VARIANT_MAX_DEPTH 128

/* Variant primitive type ids (VariantEncoding.md, "Encoding types"). */
typedef enum floe_variant_prim {
    FLOE_VARIANT_NULL = 0,
    FLOE_VARIANT_TRUE = 1,
    FLOE_VARIANT_FALSE = 2,
    FLOE_VARIANT_INT8 = 3,
    FLOE_VARIANT_INT16 = 4,
    FLOE_VARIANT_INT32 = 5,
    FLOE_VARIANT_INT64 = 6,
    FLOE_VARIANT_DOUBLE = 7,
    FLOE_VARIANT_DECIMAL4 = 8,
    FLOE_VARIANT_DECIMAL8 = 9,
    FLOE_VARIANT_DECIMAL16 = 10,
    FLOE_VARIANT_DATE = 11,
    FLOE_VARIANT_TIMESTAMP = 12,     /* UTC, microseconds */
    FLOE_VARIANT_TIMESTAMP_NTZ = 13, /* no zone, microseconds */
    FLOE_VARIANT_FLOAT = 14,
    FLOE_VARIANT_BINARY = 15,
    FLOE_VARIANT_STRING = 16,
    FLOE_VARIANT_TIME_NTZ = 17,      /* microseconds since midnight */
    FLOE_VARIANT_TIMESTAMP_NS = 18,
    FLOE_VARIANT_TIMESTAMP_NTZ_NS = 19,
    FLOE_VARIANT_UUID = 20,
} floe_variant_prim;

/* Validate metadata p[0..n) (the rules above); on success *size = its length, which is n
 * unless allow_trailing (then the blob may be followed by other bytes: a metadata blob and
 * a value written back to back). */
int floe_variant_metadata_check(const uint8_t *p, size_t n, bool allow_trailing, size_t *size,
                                floe_error *err) FLOE_NODISCARD;

/* Validate metadata and value and append the value's JSON text to out. On an error out
 * holds whatever was appended before it (truncate to undo). FLOE_ECORRUPT,
 * FLOE_EUNSUPPORTED, FLOE_ELIMIT, FLOE_ENOMEM. */
int floe_variant_to_json(const uint8_t *metadata, size_t metadata_len, const uint8_t *value,
                         size_t value_len, floe_buf *out, floe_error *err) FLOE_NODISCARD;

/* The same for a value whose metadata was checked already (floe_variant_metadata_check):
 * a row's shredded parts share one metadata. */
int floe_variant_value_json(const uint8_t *metadata, size_t metadata_len, const uint8_t *value,
                            size_t value_len, floe_buf *out, floe_error *err) FLOE_NODISCARD;

/* Called for each field of an object value, in key order, with the field's name and its
 * value's JSON text (valid during the call only). Returns 0 or a negative floe code to
 * stop. */
typedef int (*floe_variant_field_fn)(void *ctx, const uint8_t *key, size_t key_len,
                                     const uint8_t *json, size_t json_len);
/* If the value (metadata checked already) is an object, call fn for each of its fields
 * and return 0; return 1 (fn not called) when it is valid but not an object. Errors as
 * floe_variant_to_json, or fn's. scratch holds the field texts (reset first). */
int floe_variant_object_fields(const uint8_t *metadata, size_t metadata_len,
                               const uint8_t *value, size_t value_len, floe_buf *scratch,
                               floe_variant_field_fn fn, void *ctx,
                               floe_error *err) FLOE_NODISCARD;

/* Building values from parts (a shredded variant put back together,
 * VariantShredding.md "Reconstructing a Shredded Variant"). */

/* The id of key[0..n) in metadata (checked already): 1 with *id set, 0 when the dictionary
 * does not hold it. */
int floe_variant_metadata_find(const uint8_t *metadata, size_t metadata_len, const uint8_t *key,
                               size_t key_len, uint32_t *id) FLOE_NODISCARD;

/* Called for each field of an object value with its field id, name and encoded value
 * bytes (borrowed from the value). */
typedef int (*floe_variant_raw_field_fn)(void *ctx, uint32_t id, const uint8_t *key,
                                         size_t key_len, const uint8_t *value,
                                         size_t value_len);
/* floe_variant_object_fields with the fields' encoded bytes instead of their JSON: the
 * value is validated whole first; 1 (fn not called) when it is not an object. */
int floe_variant_object_raw_fields(const uint8_t *metadata, size_t metadata_len,
                                   const uint8_t *value, size_t value_len,
                                   floe_variant_raw_field_fn fn, void *ctx,
                                   floe_error *err) FLOE_NODISCARD;

/* One member of a container being built: for an object the field id (the caller lists
 * the members in the order of their names), and where its encoded value lies in the
 * caller's value bytes. */
typedef struct floe_variant_member {
    uint32_t id;
    size_t off, len;
} floe_variant_member;

/* Append to out an object (object true) or array of the n members, their values copied
 * from values in member order, with the smallest widths (as the encoder writes them).
 * FLOE_ELIMIT past 4 GiB, FLOE_ENOMEM. */
int floe_variant_append_container(bool object, const floe_variant_member *ms, size_t n,
                                  const uint8_t *values, floe_buf *out,
                                  floe_error *err) FLOE_NODISCARD;

/* Append to out a metadata blob whose dictionary is keys[0..n) (key i: lens[i] bytes),
 * sorted in unsigned byte order and unique (the caller's duty): version 1, sorted_strings
 * set (clear for an empty dictionary), the smallest offset width, as the encoder writes.
 * FLOE_ELIMIT past 4 GiB, FLOE_ENOMEM. */
int floe_variant_append_metadata(const uint8_t *const *keys, const size_t *lens, size_t n,
                                 floe_buf *out, floe_error *err) FLOE_NODISCARD;

/* Append to out one step of a normalized JSON path (RFC 9535 "Normalized Paths", the
 * form Iceberg's variant bounds key their fields by): ['key'] with ' and \ escaped by a
 * backslash, \b \f \n \r \t for those controls and \u00xx (lower-case hex) for the
 * other code points below U+0020; every other byte as it is. A path is "$" followed by
 * one step per object key from the variant's top: $['user']['country']. FLOE_ENOMEM. */
int floe_variant_path_append_key(floe_buf *out, const uint8_t *key, size_t n) FLOE_NODISCARD;

/* Encoder scratch state (a C locale for number conversion, key and string buffers). */
typedef struct floe_variant_encoder floe_variant_encoder;
/* FLOE_ENOMEM. */
int floe_variant_encoder_new(floe_variant_encoder **out, floe_error *err) FLOE_NODISCARD;
void floe_variant_encoder_free(floe_variant_encoder *e); /* accepts NULL */

/* Encode the JSON text json[0..n) (the rules above), appending the metadata blob to
 * metadata and the value blob to value. On an error both are truncated back to their
 * lengths at entry. FLOE_EINVALID, FLOE_ELIMIT, FLOE_ENOMEM. */
int floe_variant_encode_json(floe_variant_encoder *e, const uint8_t *json, size_t n,
                             floe_buf *metadata, floe_buf *value, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
