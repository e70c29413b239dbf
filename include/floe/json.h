/*
 * floe/json.h - the schema-directed NDJSON shredder and schema inference.
 *
 * The shredder parses each JSON record straight into a floe_batch (floe/column.h): one
 * pass over the bytes, no document tree, no allocation per field. Every record either
 * lands whole in the batch or is rejected whole, with a reason, through a callback; a
 * rejected record leaves the batch exactly as it was before the record (I5: the counts
 * add up, nothing is half-written).
 *
 * Threads: a shredder holds scratch state and must be used by one thread at a time.
 * Several shredders may share one schema (read only). There is no global mutable state.
 *
 * ---------------------------------------------------------------------------------------
 * Coercion rules (JSON value -> Iceberg type). Anything not listed is a type mismatch.
 *
 *   null or absent key   -> null. For a required field: rejected ("missing required
 *                           field"). A null list element needs an optional element, a null
 *                           map value an optional value.
 *   boolean              <- true / false only.
 *   int, long            <- JSON numbers whose value is an integer: 42, -7, 1e3, 1.0,
 *                           1.50e2 are accepted; 1.5 is rejected (type mismatch); values
 *                           outside the 32/64-bit range are rejected (out of range).
 *                           Strings are never parsed into numbers.
 *   float, double        <- JSON numbers, correctly rounded (exact fast path, else
 *                           strtod/strtof in the C locale). Magnitudes that overflow to
 *                           infinity are rejected (out of range); underflow rounds toward
 *                           zero. Also the strings "NaN", "Infinity", "-Infinity".
 *   decimal(P,S)         <- JSON numbers or strings holding a JSON-style number ("12.30",
 *                           "-1e-2"), scaled exactly in decimal (never through binary
 *                           floating point). More fractional digits than S are accepted only
 *                           when the extra digits are zeros (1.230 into scale 2); otherwise
 *                           the record is rejected (out of range: precision loss). More than
 *                           P significant digits after scaling: out of range. Stored as
 *                           int32 (P <= 9), int64 (P <= 18) or big-endian two's complement
 *                           of floe_decimal_bytes(P) bytes.
 *   date                 <- "YYYY-MM-DD" (years 0000-9999, calendar checked, leap years
 *                           included), or a JSON integer = days since 1970-01-01.
 *   time                 <- "HH:MM:SS[.f...]" (up to 9 fraction digits, digits past the
 *                           6th truncated), or a JSON integer = microseconds since midnight.
 *   timestamp[_ns]       <- "YYYY-MM-DD(T|t| )HH:MM[:SS[.f...]]" without a zone designator.
 *                           A string with 'Z' or an offset is rejected (type mismatch):
 *                           a timestamp without zone is a wall-clock value and converting
 *                           an instant into one would invent a zone.
 *   timestamptz[_ns]     <- the same form with 'Z', "+hh:mm", "+hhmm" or "+hh" (converted
 *                           to UTC); a string without a zone is taken as UTC.
 *                           For all four timestamp types: up to 9 fraction digits, digits
 *                           past the column's precision (6 for micros) are truncated toward
 *                           negative infinity; seconds 60 (leap second) are rejected; a JSON
 *                           integer is taken as the stored value (microseconds or
 *                           nanoseconds since the epoch; no unit guessing).
 *   string               <- JSON strings only (escapes decoded, UTF-8 validated).
 *   uuid                 <- canonical "8-4-4-4-12" hex, either case -> 16 bytes.
 *   binary, fixed[L]     <- base64 strings (RFC 4648 standard alphabet; padding optional);
 *                           fixed[L] must decode to exactly L bytes (out of range).
 *   struct               <- JSON objects. Keys match field names exactly (case-sensitive).
 *   list                 <- JSON arrays.
 *   map                  <- JSON objects; each key is converted to the key type from its
 *                           text: string keys as-is, int/long keys parsed as decimal
 *                           integers ("-12"), date/time/timestamp/uuid/decimal/binary keys
 *                           by the string rules above.
 *   variant              <- any JSON value, encoded as it is (floe/variant.h: canonical
 *                           metadata + value). A JSON null is a null field when the field
 *                           is optional, a variant null when it is required. A duplicate
 *                           key at any depth is rejected (duplicate key); nesting past
 *                           FLOE_VARIANT_MAX_DEPTH or a number past a double's range is
 *                           out of range.
 *
 * Records and keys:
 *   - A record is one JSON object per line; blank lines (only spaces, tabs, '\r') are
 *     skipped and not counted as records; a trailing '\r' is ignored.
 *   - Every record must be a complete, valid JSON text (RFC 8259) in UTF-8, including
 *     values of unknown fields that are ignored: \u escapes are decoded, surrogate pairs
 *     combined, lone surrogates rejected.
 *   - Duplicate keys: a key that appears twice in one object is rejected when it names a
 *     schema field (or is a repeated map key); it is not detected for unknown keys that are
 *     being ignored. floe never silently picks one of two values.
 *   - Unknown fields follow the policy in floe_shred_options.
 *   - Nesting deeper than max_depth is rejected as malformed.
 * ---------------------------------------------------------------------------------------
 *
 * Ownership: a shredder borrows its schema (it must outlive the shredder) and fills the
 * caller's batch; an inferrer owns what it learned until floe_infer_free.
 */
#ifndef FLOE_JSON_H
#define FLOE_JSON_H

#include "floe/column.h"
#include "floe/common.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Why a record was rejected. */
typedef enum floe_reject_reason {
    FLOE_REJECT_MALFORMED = 1,   /* not valid JSON / not one JSON value per line */
    FLOE_REJECT_UTF8,            /* invalid UTF-8 or a lone surrogate escape */
    FLOE_REJECT_TYPE,            /* value of the wrong JSON type / unparsable string form */
    FLOE_REJECT_RANGE,           /* overflow, precision loss, impossible date, bad length */
    FLOE_REJECT_MISSING,         /* required field absent or null */
    FLOE_REJECT_TOO_LARGE,       /* record longer than max_record */
    FLOE_REJECT_UNKNOWN_FIELD,   /* key not in the schema (policy FLOE_UNKNOWN_REJECT) */
    FLOE_REJECT_DUPLICATE_KEY,   /* the same field or map key twice in one object */
} floe_reject_reason;
#define FLOE_REJECT_NREASONS 9

/* Short stable name of a reason ("type_mismatch"), for logs and quarantine files. */
const char *floe_reject_reason_name(floe_reject_reason r);

typedef enum floe_unknown_policy {
    FLOE_UNKNOWN_REJECT = 0, /* reject the record */
    FLOE_UNKNOWN_IGNORE,     /* drop the field, count it (stats.unknown_fields) */
    FLOE_UNKNOWN_COLLECT,    /* drop the field, count it and remember its path */
} floe_unknown_policy;

typedef struct floe_shred_options {
    size_t max_record;           /* bytes per record, 0 = 1 MiB */
    floe_unknown_policy unknown; /* default FLOE_UNKNOWN_REJECT */
    int max_depth;               /* JSON nesting cap, 0 = 64 */
    /* The field ids of the sources of the hour() partition fields the records are routed
     * by (floe_partition_spec_hour_sources; read by floe_shredder_new only): an integer
     * given for a microsecond timestamp among them must have an hour that fits an int
     * (~ +-7.7e18), else the record is rejected here (FLOE_REJECT_RANGE), where its line
     * is known, rather than failing the batch it is routed with. Every other transform
     * of a value the shredder takes fits. */
    const int32_t *hour_sources;
    size_t nhour_sources;
} floe_shred_options;

/* One rejected record, as handed to the callback. Every pointer is borrowed and valid only
 * during the call. */
typedef struct floe_reject {
    const char *source;          /* as given to feed (may be NULL) */
    int64_t line;                /* 1-based line number of the record */
    int64_t offset;              /* byte offset of the record's first byte in the source */
    int64_t column;              /* 1-based byte within the record where the problem was
                                    found; 0 when it concerns the whole record */
    floe_reject_reason reason;
    const char *message;         /* e.g. "field 'user.age': expected int, found string" */
    const uint8_t *record;       /* the raw record bytes (without the newline) */
    size_t record_len;
} floe_reject;

/* Return 0 to go on, or a negative FLOE_E* code to stop the feed (it is returned by
 * floe_shredder_feed). */
typedef int (*floe_reject_fn)(void *ctx, const floe_reject *r);

typedef struct floe_shred_stats {
    uint64_t records_accepted;
    uint64_t records_rejected;
    uint64_t rejected_by_reason[FLOE_REJECT_NREASONS]; /* indexed by floe_reject_reason */
    uint64_t bytes;              /* bytes of input fed, newlines and blank lines included */
    uint64_t blank_lines;
    uint64_t unknown_fields;     /* unknown keys dropped (IGNORE / COLLECT) */
} floe_shred_stats;

typedef struct floe_shredder floe_shredder;

/* Compile a shredder for schema (borrowed: must outlive the shredder). opts may be NULL.
 * FLOE_EUNSUPPORTED when the schema has a map key type without a text form (boolean,
 * float, double); FLOE_ENOMEM. */
int floe_shredder_new(const floe_schema *schema, const floe_shred_options *opts,
                      floe_shredder **out, floe_error *err) FLOE_NODISCARD;
void floe_shredder_free(floe_shredder *sh);

/* Shred every line of chunk[0..n) into out (a batch initialised for the same schema).
 * The caller splits input at newlines; a final line without '\n' is a record too. Lines
 * are numbered from first_line, offsets counted from first_offset. Accepted records are
 * appended (out->nrows grows); each rejected record goes to on_reject (may be NULL: then
 * it is only counted) and leaves out unchanged.
 * Returns 0, or a negative code: FLOE_ENOMEM / FLOE_ELIMIT (a column passed 4 GiB) with
 * err->offset = the offset of the record being shredded, which is not in out (records
 * before it are); or the callback's own negative code. */
int floe_shredder_feed(floe_shredder *sh, const uint8_t *chunk, size_t n, const char *source,
                       int64_t first_line, int64_t first_offset, floe_batch *out,
                       floe_reject_fn on_reject, void *ctx, floe_error *err) FLOE_NODISCARD;

/* Shred a JSON array of records ("[ {...}, {...} ]", as an HTTP body may hold). Each
 * element is one record; its line is the line of body where it starts, its offset that of
 * its first byte. The array's structure is checked before anything is shredded: a body
 * that is not one well-formed JSON array returns FLOE_ECORRUPT (err->offset set) and adds
 * nothing. Elements are then accepted or rejected one by one as in floe_shredder_feed. */
int floe_shredder_feed_array(floe_shredder *sh, const uint8_t *body, size_t n,
                             const char *source, int64_t first_offset, floe_batch *out,
                             floe_reject_fn on_reject, void *ctx, floe_error *err) FLOE_NODISCARD;

/* floe_shredder_feed_array in steps, so a caller can consume each step's records before
 * the next (the batch need not hold the whole body). Start with *pos = 0: the structure
 * of the whole body is checked first, as by floe_shredder_feed_array. Each call shreds
 * elements from *pos until the elements taken span at least max_bytes of body (always
 * at least one), then sets *pos to the first byte of the next element, or to n when the
 * array is done. body, n, source and first_offset must be the same on every call of one
 * body, and no other feed may come in between. Returns as floe_shredder_feed_array. */
int floe_shredder_feed_array_part(floe_shredder *sh, const uint8_t *body, size_t n,
                                  const char *source, int64_t first_offset, size_t *pos,
                                  size_t max_bytes, floe_batch *out, floe_reject_fn on_reject,
                                  void *ctx, floe_error *err) FLOE_NODISCARD;

/* Counters since floe_shredder_new. */
void floe_shredder_stats(const floe_shredder *sh, floe_shred_stats *out);

/* Unknown field paths seen under FLOE_UNKNOWN_COLLECT ("device.model",
 * "items.element.sku"), in first-seen order, with how often each was seen. At most 1024
 * distinct paths are kept. The returned string is valid until floe_shredder_free. */
size_t floe_shredder_unknown_count(const floe_shredder *sh);
const char *floe_shredder_unknown_name(const floe_shredder *sh, size_t i, uint64_t *seen);

/* ---------------------------------------------------------------------------------------
 * Schema inference from NDJSON samples.
 *
 * Rules:
 *   - true/false -> boolean; integral numbers -> long; other numbers -> double; long and
 *     double mixed -> double.
 *   - strings: all ISO-8601 timestamps with a zone -> timestamptz; all without a zone ->
 *     timestamp (with options.nanos, when a value has digits below the microsecond:
 *     timestamptz_ns / timestamp_ns); all "YYYY-MM-DD" -> date; anything else (uuid-looking strings included)
 *     -> string. A mix of these string forms -> string.
 *   - arrays -> list<element>, the element inferred from all elements of all arrays.
 *   - objects -> struct with fields in first-seen order, unless the object looks like a
 *     map: more than 64 distinct keys across the samples, or at least 16 distinct keys of
 *     which an object carries on average under a quarter. Then map<string, V>, V inferred
 *     from all values. Objects that were always empty become map<string, string>.
 *   - a field only ever null (or whose lists are always empty) -> string.
 *   - other conflicts (e.g. number and string) -> the kind seen most often; a warning
 *     names the field. Records rejected by the shredder afterwards are the minority.
 *   - with options.variant (format v3 tables only: variant is a v3 type), conflicts go to
 *     variant instead, which takes any JSON value: a value whose kind varies between
 *     records (two or more of boolean, number, string, object, array; null is no kind,
 *     integers and decimals are both numbers) -> variant; an object one of whose fields'
 *     kinds varies (or, when it looks like a map, whose values' kinds vary) -> variant as
 *     a whole, the free-form sub-object stored as it is. The record itself stays a struct:
 *     its fields follow the first rule. A list whose elements vary -> list<variant>.
 *   - every field, list element and map value is optional.
 *   - field ids are assigned fresh in depth-first pre-order starting at 1 (a struct field,
 *     then its children, then its next sibling); schema-id 0.
 * Lines that are not JSON objects are skipped and counted. Inference uses jansson (it is
 * not a hot path).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_infer floe_infer;

typedef struct floe_infer_options {
    uint64_t max_records; /* records to sample over all feeds, 0 = unlimited */
    bool variant;         /* type conflicts -> variant (rules above; format v3) */
    /* with variant: only the values whose kind varies become variant, never an object as
     * a whole (its fields keep their own types). floe serve uses this to add fields to
     * a struct the table already has, which cannot become a variant. */
    bool variant_fields_only;
    /* timestamps some of whose values carry digits below the microsecond (and all of which
     * fit 1677..2262) -> timestamp_ns / timestamptz_ns (format v3) */
    bool nanos;
} floe_infer_options;

int floe_infer_new(const floe_infer_options *opts, floe_infer **out, floe_error *err)
    FLOE_NODISCARD;
void floe_infer_free(floe_infer *inf);
/* Where the next line fed is: line `line` (1-based) of source (copied; may be NULL), each
 * line fed after it one more. Warnings name the place a value first seen there ("at
 * events.ndjson line 12"); without a call lines are counted from 1 over all feeds.
 * FLOE_ENOMEM. */
int floe_infer_at(floe_infer *inf, const char *source, int64_t line) FLOE_NODISCARD;
/* " at NAME line N: WHY" of the first line skipped (not a JSON object: the JSON parser's
 * message, or the kind of value it is), "" when none: in buf. */
const char *floe_infer_first_skipped(const floe_infer *inf, char *buf, size_t n);
/* Feed NDJSON lines. Returns 1 when max_records is reached (further feeds are ignored), 0
 * otherwise, negative on error (FLOE_ENOMEM). */
int floe_infer_feed(floe_infer *inf, const uint8_t *p, size_t n, floe_error *err) FLOE_NODISCARD;
/* Build the schema from what was fed (caller frees with floe_schema_free). FLOE_EINVALID
 * when no record was seen. */
int floe_infer_finish(floe_infer *inf, floe_schema **out, floe_error *err) FLOE_NODISCARD;
uint64_t floe_infer_records(const floe_infer *inf);
uint64_t floe_infer_skipped(const floe_infer *inf);
/* Warnings produced by floe_infer_finish (type conflicts), valid until floe_infer_free. */
size_t floe_infer_warning_count(const floe_infer *inf);
const char *floe_infer_warning(const floe_infer *inf, size_t i);

/* One call: infer a schema from an NDJSON buffer. */
int floe_schema_infer(const uint8_t *p, size_t n, const floe_infer_options *opts,
                      floe_schema **out, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
