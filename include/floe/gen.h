/*
 * floe/gen.h - the deterministic event generator behind `floe gen`.
 *
 * Produces realistic clickstream/IoT events as NDJSON, one object per line:
 *
 *   {"event_id":"<uuid v4>","event_type":"page_view","ts":"2026-10-06T12:34:56.123456Z",
 *    "user_id":12345,"session_id":"s-…","device":{"os":..,"os_version":..,"model":..,
 *    "app_version":..},"geo":{"country":..,"city":..,"lat":52.52,"lon":13.405},
 *    "amount":12.5|null,["currency":"EUR",]"tags":[..],"payload":"..","is_bot":false,
 *    "consent":true|null}
 *
 * The output is a pure function of the options: the same options give the same bytes on
 * every platform (only integer arithmetic feeds the output; no libm, no locale, no clock).
 *
 * Event ids are uuid v4 strings; the Iceberg type of event_id is `uuid` (it exercises the
 * FIXED_LEN_BYTE_ARRAY(16)+UUID path; NDJSON readers such as DuckDB read it as VARCHAR or
 * UUID, both print the same 8-4-4-4-12 text). amount is a double (peers handle it
 * without decimal support). See floe_gen_schema_json() for the full schema, which is also
 * kept in tests/data/events.schema.json.
 *
 * Timestamps: event i has the nominal time start + i/rate. Most events (90%) land within
 * one inter-event period after their nominal time; the rest arrive late, up to jitter_us
 * before it. So ts[i] >= ts[j] - jitter_us - period for every j < i, and the first event
 * may be before start by up to jitter_us.
 *
 * Malformed records (malformed_rate > 0) are one of: broken JSON (truncated object,
 * trailing garbage), a required field with a wrong type, or a required field missing.
 * floe_gen_next() reports which.
 *
 * Ownership and threads: a floe_gen owns its state until floe_gen_free; events are
 * appended to the caller's buffer. One thread at a time per generator.
 */
#ifndef FLOE_GEN_H
#define FLOE_GEN_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Most event types a generator uses; beyond the built-in names they are "event_NNN". */
#define FLOE_GEN_MAX_PARTITIONS 1000
/* No event line is longer than this (bytes, newline included). */
#define FLOE_GEN_MAX_EVENT_BYTES 8192

typedef struct floe_gen_opts {
    uint64_t seed;
    int64_t start_us;      /* nominal time of the first event, microseconds since epoch */
    double rate;           /* events per second, > 0 and <= 1e9 */
    int32_t partitions;    /* number of event types used, 1..FLOE_GEN_MAX_PARTITIONS */
    int64_t jitter_us;     /* how late an event may arrive, 0..86400e6 */
    double malformed_rate; /* fraction of malformed lines, 0..1 */
} floe_gen_opts;

typedef enum floe_gen_malformed {
    FLOE_GEN_OK = 0,          /* a valid event */
    FLOE_GEN_BAD_JSON,        /* not parseable as JSON */
    FLOE_GEN_WRONG_TYPE,      /* valid JSON, a required field has a non-coercible type */
    FLOE_GEN_MISSING_FIELD,   /* valid JSON, a required field is absent */
} floe_gen_malformed;

typedef struct floe_gen_event_info {
    int32_t partition;        /* index of the event type, 0..partitions-1 */
    floe_gen_malformed malformed;
    int64_t ts_us;            /* the event's timestamp (also for malformed lines) */
} floe_gen_event_info;

typedef struct floe_gen floe_gen;

/* Defaults: seed 1, start 2026-10-06T00:00:00Z, rate 1000/s, 8 partitions, jitter 2 s,
 * no malformed lines. */
void floe_gen_opts_default(floe_gen_opts *o);

/* Create a generator. FLOE_EINVALID when an option is out of range (the message names it),
 * FLOE_ENOMEM. *out is written only on success. */
int floe_gen_new(const floe_gen_opts *opts, floe_gen **out, floe_error *err) FLOE_NODISCARD;
void floe_gen_free(floe_gen *g); /* accepts NULL */

/* Append the next event, newline included, to out (at most FLOE_GEN_MAX_EVENT_BYTES).
 * info (may be NULL) describes it. FLOE_ENOMEM or FLOE_ELIMIT if out cannot grow; the
 * generator state then has advanced anyway, so stop using it. */
int floe_gen_next(floe_gen *g, floe_buf *out, floe_gen_event_info *info, floe_error *err)
    FLOE_NODISCARD;

/* Number of events produced so far. */
int64_t floe_gen_count(const floe_gen *g);

/* Name of event type k ("page_view", ..., "event_042"); NULL if k is out of range for
 * this generator. Borrowed: valid until floe_gen_free(). */
const char *floe_gen_partition_name(const floe_gen *g, int32_t k);

/* The Iceberg schema (JSON text, schema-id 0) of valid events. Static storage. */
const char *floe_gen_schema_json(void);

/* Parse "2026-10-06T12:34:56[.ffffff](Z|±HH:MM)" or a date "2026-10-06" into
 * microseconds since the epoch (UTC). FLOE_EINVALID on anything else. */
int floe_gen_parse_time(const char *s, int64_t *out_us, floe_error *err) FLOE_NODISCARD;

/* Format microseconds since the epoch as "YYYY-MM-DDTHH:MM:SS.ffffffZ" (28 bytes) into
 * out (at least 32 bytes); returns the length. Years must be 0..9999. */
size_t floe_gen_format_time(int64_t us, char *out);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_GEN_H */
