/*
 * floe/quarantine.h - where rejected records go, with the reason.
 *
 * A quarantine file is NDJSON, one object per rejected record:
 *   {"source":"events.ndjson","line":17,"offset":2048,"reason":"...","record":"<raw text>"}
 * The raw record is kept byte for byte: as a JSON string when it is valid UTF-8, else as
 * "record_base64". Oversized records are streamed in pieces and always stored as base64.
 * The file is created on the first record only, and fsynced at close. All calls are
 * thread-safe.
 *
 * Ownership: a floe_quarantine owns its file until floe_quarantine_close; records passed
 * in are copied before the call returns.
 */
#ifndef FLOE_QUARANTINE_H
#define FLOE_QUARANTINE_H

#include "floe/common.h"
#include "floe/io.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_quarantine floe_quarantine;

int floe_quarantine_open(floe_io *io, const char *uri, floe_quarantine **out, floe_error *err)
    FLOE_NODISCARD;
int floe_quarantine_add(floe_quarantine *q, const char *source, int64_t line, int64_t offset,
                        const char *reason, const uint8_t *record, size_t n, floe_error *err)
    FLOE_NODISCARD;
/* Streaming one oversized record: begin, any number of pieces, end. No other record may
 * be added between begin and end by the same caller (other threads wait). */
int floe_quarantine_stream_begin(floe_quarantine *q, const char *source, int64_t line,
                                 int64_t offset, const char *reason, floe_error *err)
    FLOE_NODISCARD;
int floe_quarantine_stream_piece(floe_quarantine *q, const uint8_t *p, size_t n,
                                 floe_error *err) FLOE_NODISCARD;
int floe_quarantine_stream_end(floe_quarantine *q, floe_error *err) FLOE_NODISCARD;
int64_t floe_quarantine_count(const floe_quarantine *q);
const char *floe_quarantine_uri(const floe_quarantine *q);
/* Publish (fsync) and free. A quarantine that received nothing leaves no file. */
int floe_quarantine_close(floe_quarantine *q, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
