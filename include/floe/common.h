/*
 * floe/common.h - errors, allocation, arenas, bounded buffers, varints, crc.
 *
 * Conventions used by every floe module:
 *   - Fallible functions return int: 0 on success, a negative FLOE_E* code on failure,
 *     and take a `floe_error *err` last (may be NULL when the caller does not care).
 *   - Out-parameters are written only on success.
 *   - All heap allocation goes through floe_malloc/floe_realloc/floe_free so tests can
 *     fail the Nth allocation (floe_alloc_fail_after, src/common/testing.h).
 *
 * Ownership and threads: a floe_buf, floe_arena or floe_strlist owns its memory until
 * its _free / _reset; strings from floe_strdup / floe_asprintf are the caller's
 * (floe_free). floe_error is the caller's struct, filled on failure. Each object is used
 * by one thread at a time; floe_log_set_level is process-wide.
 */
#ifndef FLOE_COMMON_H
#define FLOE_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLOE_VERSION_MAJOR 0
#define FLOE_VERSION_MINOR 1
#define FLOE_VERSION_PATCH 0
#define FLOE_VERSION_STRING "0.1.0"

/* FLOE_NODISCARD marks the public functions that can fail: their result must be looked
 * at. FLOE_IGNORE_RESULT(call) calls one where a failure changes nothing (cleanup on a
 * path that already failed); say why beside it. (A cast to void does not quiet gcc.) */
#define FLOE_IGNORE_RESULT(call)                                                       \
    do {                                                                               \
        if ((call) < 0) {                                                              \
        }                                                                              \
    } while (0)

#if defined(__GNUC__) || defined(__clang__)
#define FLOE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define FLOE_NODISCARD __attribute__((warn_unused_result))
#define FLOE_LIKELY(x) __builtin_expect(!!(x), 1)
#define FLOE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FLOE_PRINTF(a, b)
#define FLOE_NODISCARD
#define FLOE_LIKELY(x) (x)
#define FLOE_UNLIKELY(x) (x)
#endif

/* libfloe is built with hidden visibility: it exports exactly what the public headers
 * declare between FLOE_API_BEGIN and FLOE_API_END (each wraps all of its declarations). */
#if defined(__GNUC__) || defined(__clang__)
#define FLOE_API_BEGIN _Pragma("GCC visibility push(default)")
#define FLOE_API_END _Pragma("GCC visibility pop")
#else
#define FLOE_API_BEGIN
#define FLOE_API_END
#endif

FLOE_API_BEGIN

/* ---------------------------------------------------------------------------------------
 * Error codes: one table, libuv style. X(NAME, value, "description").
 * CONFLICT and UNKNOWN_STATE are the two commit outcomes that must never be confused:
 * CONFLICT means someone else committed first (safe to retry on fresh metadata);
 * UNKNOWN_STATE means the pointer swap may or may not have happened (never retry blindly,
 * never delete the files just written).
 * ------------------------------------------------------------------------------------- */
#define FLOE_ERRNO_MAP(X)                                                              \
    X(NOMEM, -1, "out of memory")                                                      \
    X(IO, -2, "i/o error")                                                             \
    X(CORRUPT, -3, "corrupt data")                                                     \
    X(UNSUPPORTED, -4, "unsupported")                                                  \
    X(INVALID, -5, "invalid argument")                                                 \
    X(NOTFOUND, -6, "not found")                                                       \
    X(EXISTS, -7, "already exists")                                                    \
    X(CONFLICT, -8, "commit conflict")                                                 \
    X(UNKNOWN_STATE, -9, "commit state unknown")                                       \
    X(LIMIT, -10, "limit exceeded")                                                    \
    X(SCHEMA, -11, "schema mismatch")                                                  \
    X(NOSPACE, -12, "no space left")                                                   \
    X(TIMEOUT, -13, "timed out")                                                       \
    X(BUSY, -14, "busy")                                                               \
    X(AUTH, -15, "not authorized")                                                     \
    X(ENCRYPTED, -16, "encrypted Parquet is not supported")                            \
    X(INTERNAL, -17, "internal error")                                                 \
    X(CANCELLED, -18, "cancelled")

enum floe_errcode {
    FLOE_OK = 0,
#define FLOE_ERR_ENUM_(name, val, desc) FLOE_E##name = (val),
    FLOE_ERRNO_MAP(FLOE_ERR_ENUM_)
#undef FLOE_ERR_ENUM_
};

/* Short description of a code ("corrupt data"); never NULL. */
const char *floe_strerror(int code);
/* Symbolic name of a code ("CORRUPT"); never NULL. */
const char *floe_errname(int code);

#define FLOE_ERROR_MSG_MAX 2048

/* One error: the floe code, the system/library code behind it (errno, CURLcode, HTTP
 * status, sqlite rc; 0 if none), the byte offset in the input where relevant (-1 if none),
 * and a message naming the file and the place. */
typedef struct floe_error {
    int code;
    int sys;
    int64_t offset;
    char msg[FLOE_ERROR_MSG_MAX];
} floe_error;

void floe_error_clear(floe_error *err);
/* Set err (if non-NULL) and return code. The arguments must not point into err->msg (to
 * add context to err's own message, floe_error_prefix). */
int floe_error_set(floe_error *err, int code, const char *fmt, ...) FLOE_PRINTF(3, 4);
int floe_error_setv(floe_error *err, int code, const char *fmt, va_list ap) FLOE_PRINTF(3, 0);
/* Same, also recording a system/library code. */
int floe_error_sys(floe_error *err, int code, int sys, const char *fmt, ...) FLOE_PRINTF(4, 5);
/* Same, also recording the byte offset in the input. */
int floe_error_at(floe_error *err, int code, int64_t offset, const char *fmt, ...)
    FLOE_PRINTF(4, 5);
/* Prepend context while unwinding: "row group 3: " + existing message. */
void floe_error_prefix(floe_error *err, const char *fmt, ...) FLOE_PRINTF(2, 3);
/* From errno after a failed system call: maps ENOSPC, ENOENT, EEXIST, ENOMEM... */
int floe_error_errno(floe_error *err, int errnum, const char *fmt, ...) FLOE_PRINTF(3, 4);

/* zstd-style helpers. In debug builds the message gets "file:line: " in front. */
#ifdef FLOE_DEBUG_ERRORS
#define FLOE_ERR_WHERE_ "%s:%d: "
#define FLOE_ERR_WHERE_ARGS_ , __FILE__, __LINE__
#else
#define FLOE_ERR_WHERE_ ""
#define FLOE_ERR_WHERE_ARGS_
#endif

/* Return an error from the current function if cond holds. */
#define FLOE_RETURN_ERROR_IF(cond, err, code, ...)                                     \
    do {                                                                               \
        if (FLOE_UNLIKELY(cond))                                                       \
            return floe_error_set((err), (code), __VA_ARGS__);                         \
    } while (0)

/* Evaluate expr (an int-returning floe call); return its error if negative. */
#define FLOE_FORWARD_IF_ERROR(expr)                                                    \
    do {                                                                               \
        int floe_rc_ = (expr);                                                         \
        if (FLOE_UNLIKELY(floe_rc_ < 0))                                               \
            return floe_rc_;                                                           \
    } while (0)

/* For functions with one cleanup exit: set rc and goto done on error. */
#define FLOE_CHECK(expr)                                                               \
    do {                                                                               \
        rc = (expr);                                                                   \
        if (FLOE_UNLIKELY(rc < 0))                                                     \
            goto done;                                                                 \
    } while (0)

#define FLOE_FAIL(err, code, ...)                                                      \
    do {                                                                               \
        rc = floe_error_set((err), (code), __VA_ARGS__);                               \
        goto done;                                                                     \
    } while (0)

/* ---------------------------------------------------------------------------------------
 * Allocation. Library code never aborts on out-of-memory.
 * ------------------------------------------------------------------------------------- */
void *floe_malloc(size_t n);
void *floe_calloc(size_t count, size_t size);
void *floe_realloc(void *p, size_t n);
void floe_free(void *p);
/* n bytes (uninitialised) for a large buffer: aligned to 2 MiB and advised into
 * transparent huge pages where the kernel allows them, so filling or probing it costs a
 * page fault and a TLB entry per 2 MiB, not per 4 KiB. Meant for n >= FLOE_HUGE_MIN;
 * free with floe_free. NULL on OOM. */
#define FLOE_HUGE_MIN ((size_t)4 << 20)
void *floe_alloc_huge(size_t n);
char *floe_strdup(const char *s);
char *floe_strndup(const char *s, size_t n);
/* Allocate and format; NULL on OOM. */
char *floe_asprintf(const char *fmt, ...) FLOE_PRINTF(1, 2);

/* ---------------------------------------------------------------------------------------
 * Arena: many small allocations freed at once (parse trees: footers, metadata, manifests).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_arena_block floe_arena_block;
typedef struct floe_arena {
    floe_arena_block *head;
    size_t block_size;
    size_t total; /* bytes handed out */
    size_t cap;   /* 0 = unbounded; else a hard cap on total */
} floe_arena;

void floe_arena_init(floe_arena *a, size_t block_size);
void floe_arena_reset(floe_arena *a); /* frees everything */
/* 16-byte aligned, zeroed. NULL on OOM or when the cap would be passed. */
void *floe_arena_alloc(floe_arena *a, size_t n);
char *floe_arena_strdup(floe_arena *a, const char *s);
char *floe_arena_strndup(floe_arena *a, const char *s, size_t n);
void *floe_arena_memdup(floe_arena *a, const void *p, size_t n);
/* An array built by realloc that the arena then takes over without a copy (a manifest
 * list's records: grown by doubling, large ones remapped, not copied; copying the result
 * into the arena would write every byte and page twice). floe_arena_vec_grow returns
 * room for n bytes holding v's contents (v NULL or from an earlier grow), or NULL with v
 * left as it was (FLOE_ENOMEM); floe_arena_vec_keep hands v, of which used bytes are in
 * use, to the arena, which frees it at reset, and returns it (NULL when the arena's cap
 * would be passed: v is then the caller's still); floe_arena_vec_free frees one not kept
 * (NULL is fine). Not zeroed. */
void *floe_arena_vec_grow(void *v, size_t n);
void *floe_arena_vec_keep(floe_arena *a, void *v, size_t used);
void floe_arena_vec_free(void *v);

/* ---------------------------------------------------------------------------------------
 * Bounded growable byte buffer (curl dynbuf style): never grows past max, and remembers
 * its first failure. Once an append or reserve has failed (FLOE_ENOMEM, FLOE_ELIMIT past
 * max), every later one fails with the same code and changes nothing, until
 * floe_buf_reset, floe_buf_truncate or floe_buf_free; so a chain of appends can be checked
 * once, at its end, with floe_buf_error.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    size_t max;  /* 0 = SIZE_MAX */
    int error;   /* the first failure since the last reset, or 0 */
} floe_buf;

void floe_buf_init(floe_buf *b, size_t max);
void floe_buf_free(floe_buf *b);         /* frees storage, keeps max, clears the error */
/* len = 0, keeps storage, clears the error. */
static inline void floe_buf_reset(floe_buf *b) {
    b->len = 0;
    b->error = 0;
}
/* Back to len (<= b->len): undoes the appends since, failed ones included. */
static inline void floe_buf_truncate(floe_buf *b, size_t len) {
    b->len = len;
    b->error = 0;
}
/* The first failure since the last reset (0 if none). */
static inline int floe_buf_error(const floe_buf *b) { return b->error; }
/* Ensure room for `extra` more bytes. FLOE_ENOMEM or FLOE_ELIMIT (past max). */
int floe_buf_reserve(floe_buf *b, size_t extra);
/* The same, but a buffer that grows gets exactly that room (no doubling): for a size
 * known in advance, or a growth the caller paces itself. */
int floe_buf_reserve_exact(floe_buf *b, size_t extra);
int floe_buf_append(floe_buf *b, const void *p, size_t n);
int floe_buf_append_byte(floe_buf *b, uint8_t c);
int floe_buf_printf(floe_buf *b, const char *fmt, ...) FLOE_PRINTF(2, 3);

/* Text (src/common/text.c). floe_json_append_string appends p[0..n) as a JSON string,
 * quotes included: '"' and '\\' escaped, \b \f \n \r \t by name, other control bytes
 * as \u00XX, every other byte as it is (the caller vouches for UTF-8 where it matters).
 * floe_utf8_valid: well-formed UTF-8 (no overlongs, surrogates or code points past
 * U+10FFFF). floe_base64_append: standard alphabet, padded. */
int floe_json_append_string(floe_buf *b, const uint8_t *p, size_t n);
/* The same for a C string; NULL is written as "". */
int floe_json_append_cstr(floe_buf *b, const char *s);
/* floe_json_append_string for text that may not be UTF-8 (names another tool wrote, a
 * message cut inside a sequence): each byte that is not part of a well-formed sequence is
 * written as the text \xHH, so the result is always valid JSON. */
int floe_json_append_text(floe_buf *b, const uint8_t *p, size_t n);
/* How floe_json_append_string writes byte c: 0 when as it is, else the length (2 or 6)
 * of its escape, written to esc. */
static inline size_t floe_json_escape_byte(uint8_t c, char esc[6]) {
    if (c >= 0x20 && c != '"' && c != '\\')
        return 0;
    esc[0] = '\\';
    switch (c) {
    case '"': esc[1] = '"'; return 2;
    case '\\': esc[1] = '\\'; return 2;
    case '\n': esc[1] = 'n'; return 2;
    case '\r': esc[1] = 'r'; return 2;
    case '\t': esc[1] = 't'; return 2;
    case '\b': esc[1] = 'b'; return 2;
    case '\f': esc[1] = 'f'; return 2;
    default:
        esc[1] = 'u';
        esc[2] = esc[3] = '0';
        esc[4] = "0123456789abcdef"[c >> 4];
        esc[5] = "0123456789abcdef"[c & 15];
        return 6;
    }
}
bool floe_utf8_valid(const uint8_t *p, size_t n);
/* The offset of the first byte of p[0..n) that does not start a well-formed UTF-8
 * sequence (as floe_utf8_valid judges), or n when all of it is UTF-8. */
size_t floe_utf8_invalid_at(const uint8_t *p, size_t n);
/* The length of the well-formed UTF-8 sequence at p[0..n) (1 for ASCII), or 0 when p[0]
 * does not start one. */
size_t floe_utf8_seq_len(const uint8_t *p, size_t n);
int floe_base64_append(floe_buf *b, const uint8_t *p, size_t n);
/* Code point cp (at most U+10FFFF, no surrogate: the caller's to check) as UTF-8. */
int floe_buf_append_utf8(floe_buf *b, uint32_t cp);
/* Days since 1970-01-01 as an ISO date, "YYYY-MM-DD"; years outside 0..9999 as
 * "+YYYYYY-MM-DD" / "-YYYYYY-MM-DD" (ISO 8601's expanded form). */
int floe_buf_append_date(floe_buf *b, int64_t days);
/* The value of hex digit c (0-9, a-f, A-F), else -1 (so OR-ing several values and testing
 * the sign tells whether all were digits). */
extern const int8_t floe_hex_values[256];
static inline int floe_hex_value(char c) { return floe_hex_values[(unsigned char)c]; }
/* A double as JavaScript's String(Number) writes it (shortest round-trip digits), the
 * canonical form the readers and the test oracles share; NaN and the infinities as the
 * JSON strings "NaN", "Infinity", "-Infinity"; -0.0 as -0. */
int floe_buf_append_js_double(floe_buf *b, double v);
/* Detach the storage (NUL-terminated, caller frees with floe_free). */
char *floe_buf_detach(floe_buf *b, size_t *len_out);

/* Numbers from user literals s[0..n) (no NUL needed): strtoll / strtoull / strtod syntax
 * over the whole text; false for empty, partial, out-of-range or overlong text (a u64 with
 * a '-' too). *out is written only on success. */
bool floe_parse_i64(const char *s, size_t n, int64_t *out);
/* The same over a whole C string (false for NULL). */
bool floe_parse_i64_cstr(const char *s, int64_t *out);
bool floe_parse_u64(const char *s, size_t n, uint64_t *out);
bool floe_parse_f64(const char *s, size_t n, double *out);
/* Sizes and durations as configuration files and options write them (NUL-terminated).
 * Size: a non-negative number, optional blanks, an optional binary unit in any case - B,
 * K/KB/KiB, M/MB/MiB, G/GB/GiB ("1.5 GiB", "64k"); a bare number is bytes. Duration: a
 * non-negative number and ms, s, m or min, h, d ("250ms", "1.5h"); a bare number counts in
 * bare_unit_ms (0 refuses it). Anything else, NaN, infinity or a result above 9e18 is
 * refused. *out is written only on success. */
bool floe_parse_size(const char *s, int64_t *out);
bool floe_parse_duration(const char *s, int64_t bare_unit_ms, int64_t *out_ms);
/* A duration counted exactly: decimal digits and directly after them an optional unit of
 * floe_parse_duration's ("604800000", "7d"; no sign, blank, fraction, exponent or hex),
 * up to INT64_MAX milliseconds; a bare number counts in bare_unit_ms (0 refuses it). For
 * values Iceberg keeps as milliseconds, which a double would round above 2^53. */
bool floe_parse_duration_exact(const char *s, int64_t bare_unit_ms, int64_t *out_ms);

/* ---------------------------------------------------------------------------------------
 * Varints (ULEB128) and zigzag, shared by thrift and avro.
 * ------------------------------------------------------------------------------------- */
static inline uint64_t floe_zigzag64(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t floe_unzigzag64(uint64_t v) {
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
/* Write v as ULEB128 into out (at least 10 bytes); returns bytes written. */
size_t floe_uvarint_put(uint8_t *out, uint64_t v);
/* Read a ULEB128 from p[0..n); returns bytes consumed, 0 on truncation or overlong. */
size_t floe_uvarint_get(const uint8_t *p, size_t n, uint64_t *v);

/* ---------------------------------------------------------------------------------------
 * Checksums.
 * ------------------------------------------------------------------------------------- */
/* CRC-32 (IEEE, as zlib and Parquet page checksums). crc = 0 to start. */
uint32_t floe_crc32(uint32_t crc, const void *p, size_t n);
/* CRC-32C (Castagnoli), for WAL and landing frames. crc = 0 to start. Uses the CPU's
 * CRC32 instruction where it has one (x86-64 SSE4.2, checked at run time). */
uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n);
/* The same by table lookup on any CPU (the fallback, and the tests' reference). */
uint32_t floe_crc32c_portable(uint32_t crc, const void *p, size_t n);
/* Whether floe_crc32c uses the hardware instruction. */
bool floe_crc32c_hardware(void);

/* ---------------------------------------------------------------------------------------
 * Little-endian load/store.
 * ------------------------------------------------------------------------------------- */
static inline uint32_t floe_load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline uint64_t floe_load_le64(const uint8_t *p) {
    return (uint64_t)floe_load_le32(p) | ((uint64_t)floe_load_le32(p + 4) << 32);
}
static inline void floe_store_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void floe_store_le64(uint8_t *p, uint64_t v) {
    floe_store_le32(p, (uint32_t)v);
    floe_store_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---------------------------------------------------------------------------------------
 * Logging (stderr). Level warn unless floe_log_set_level says otherwise (the floe command
 * sets it from FLOE_LOG: error, warn, info, debug).
 * ------------------------------------------------------------------------------------- */
enum floe_log_level { FLOE_LOG_ERROR, FLOE_LOG_WARN, FLOE_LOG_INFO, FLOE_LOG_DEBUG };
void floe_log_set_level(int level);
int floe_log_level(void);
void floe_log(int level, const char *fmt, ...) FLOE_PRINTF(2, 3);

/* Proleptic Gregorian calendar: days since 1970-01-01 from a civil date (month 1-12, day
 * 1-31, any year incl. negative) and back. Exact for every int64 day count a date type can
 * hold. */
int64_t floe_days_from_civil(int64_t y, unsigned m, unsigned d);
void floe_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* Random bytes (getrandom; a clock-seeded fallback) and a random (version 4) UUID in
 * canonical text form, for file names and table ids. */
void floe_random_bytes(void *p, size_t n);
void floe_uuid4(char out[37]);

/* SHA-256 of p[0..n) into out (libcrypto, loaded on the first call): 0, or
 * FLOE_EUNSUPPORTED when libcrypto cannot be loaded (err names it; out untouched). */
FLOE_NODISCARD int floe_sha256(const void *p, size_t n, uint8_t out[32], floe_error *err);
/* SHA-256 of data fed in pieces: _begin (NULL with err set when out of memory or when
 * libcrypto cannot be loaded), _update per piece, _end writes the digest and frees the
 * state; _free drops an unfinished one (accepts NULL). */
typedef struct floe_sha256_state floe_sha256_state;
floe_sha256_state *floe_sha256_begin(floe_error *err);
void floe_sha256_update(floe_sha256_state *h, const void *p, size_t n);
void floe_sha256_end(floe_sha256_state *h, uint8_t out[32]);
void floe_sha256_free(floe_sha256_state *h);

/* Monotonic clock in nanoseconds; wall clock in milliseconds since the epoch. */
int64_t floe_now_ns(void);
int64_t floe_wall_ms(void);

/* libcurl, libpq, librdkafka, libmicrohttpd, libsnappy, libcrypto and ICU's libicuuc are
 * loaded when first needed, from the sonames the build linked against.
 * floe_lazylib_soname_set loads library lib ("curl", "pq", "kafka", "mhd", "snappy",
 * "crypto" or, built with ICU, "icu") from soname instead (a name dlopen searches for, or
 * a path): for tests (a library that is missing) and for hosts that install it under another
 * name. Call it before the library's first use: FLOE_EBUSY once it was loaded (or failed
 * to), FLOE_EINVALID for an unknown lib or an empty or overlong soname. */
FLOE_NODISCARD int floe_lazylib_soname_set(const char *lib, const char *soname,
                                           floe_error *err);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_COMMON_H */
