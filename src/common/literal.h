/*
 * common/literal.h - dates, times, timestamps and decimals from text: one parser for every
 * place floe reads them (NDJSON values, Iceberg's single-value JSON, --where literals of
 * floe cat and floe scan, --as-of and floe gen --start times, S3 listings). Private to src/.
 *
 * The text is s[0..n) (no NUL needed) and must be the value whole. The forms:
 *   date       YEAR-MM-DD
 *   time       HH:MM[:SS[.F]]                 F: 1 to 9 digits
 *   timestamp  date SEP time [ZONE]           SEP: T, t or one space
 *   ZONE       Z | z | (+|-)HH | (+|-)HHMM | (+|-)HH:MM
 *   decimal    [+|-]DIGITS[.[DIGITS]] or .DIGITS, then optionally (e|E)[+|-]1 to 6 digits
 * Readers differ only in the year and in whether a timestamp may be a date alone
 * (floe_lit_form).
 *
 * Refused everywhere as out of range (FLOE_LIT_RANGE, the reason in why): a month outside
 * 1..12; a day past its month's end (2023-02-29); an hour over 23 (24:00 included); a
 * minute or second over 59 (a leap second has no value in Iceberg's types); a zone
 * offset beyond +-18:00; a year of more than 9 digits, or a date
 * whose day number does not fit 32 bits (Iceberg's date; years -5877641..5881580); a
 * timestamp that does not fit 64 bits in the unit asked for (floe_lit_ts_units); a
 * decimal with more digits than its precision or than the scale asked for keeps
 * (floe_lit_decimal_at). Anything else not of the form is FLOE_LIT_SYNTAX, more than 9
 * fraction digits included (with its own reason).
 *
 * why (may be NULL) receives a short reason on failure: "month 13 out of range".
 */
#ifndef FLOE_COMMON_LITERAL_H
#define FLOE_COMMON_LITERAL_H

#include "floe/common.h"

/* as floe/partition.h has it (C11 allows the repeated typedef) */
__extension__ typedef __int128 floe_i128;

enum {
    FLOE_LIT_OK = 0,
    FLOE_LIT_SYNTAX = 1, /* not of the form */
    FLOE_LIT_RANGE = 2,  /* of the form, but a field or the result is out of range */
};

typedef enum floe_lit_form {
    /* YEAR: exactly 4 digits, no sign; a timestamp has its time. NDJSON values (the
     * shredder and schema inference), S3 listings. */
    FLOE_LIT_STRICT,
    /* YEAR: optional sign, 4 to 9 digits (java.time's ISO form: -0044, +10000); a
     * timestamp has its time. Iceberg single-value JSON (defaults, bounds, canonical
     * rows). */
    FLOE_LIT_ISO,
    /* YEAR: optional sign, 1 to 9 digits; a timestamp may be a date alone (midnight),
     * optionally followed by a zone. What users type: --where literals, --as-of,
     * floe gen --start. */
    FLOE_LIT_USER,
} floe_lit_form;

/* A parsed timestamp: the instant, its zone's offset applied (none: read as UTC). */
typedef struct floe_lit_ts {
    int64_t sec;    /* seconds since 1970-01-01T00:00:00Z */
    int32_t nano;   /* nanoseconds of that second, 0..999999999 */
    int32_t offset; /* the zone's offset east of UTC, seconds (0 without a zone) */
    bool zone;      /* a zone was written (Z counts, as does -00:00) */
} floe_lit_ts;

/* A parsed decimal: value = unscaled * 10^-scale. */
typedef struct floe_lit_dec {
    floe_i128 unscaled; /* |unscaled| < 10^38 */
    int32_t scale;      /* the written scale, less trailing fraction zeros that did not
                           fit 38 digits (then only) */
    int32_t written;    /* the written scale: fraction digits minus the exponent */
} floe_lit_dec;

/* date -> days since 1970-01-01 */
int floe_lit_date(const char *s, size_t n, floe_lit_form form, int32_t *days, char *why,
                  size_t whyn);
/* time -> nanoseconds since midnight */
int floe_lit_time(const char *s, size_t n, int64_t *nanos_of_day, char *why, size_t whyn);
int floe_lit_timestamp(const char *s, size_t n, floe_lit_form form, floe_lit_ts *out,
                       char *why, size_t whyn);
/* t in units of 10^-digits seconds (digits 3, 6 or 9), the fraction past them dropped
 * (toward the past); FLOE_LIT_RANGE when that does not fit int64. */
int floe_lit_ts_units(const floe_lit_ts *t, int digits, int64_t *out, char *why, size_t whyn);

int floe_lit_decimal(const char *s, size_t n, floe_lit_dec *out, char *why, size_t whyn);
/* v (at scale from) at scale to, exactly: true when no nonzero digit is dropped and
 * |result| < 10^precision (precision 1..38; any other value means 38). */
bool floe_lit_rescale(floe_i128 *v, int32_t from, int32_t to, int precision);
/* The decimal s[0..n) at scale `scale`, exactly, with at most `precision` digits. */
int floe_lit_decimal_at(const char *s, size_t n, int precision, int32_t scale, floe_i128 *out,
                        char *why, size_t whyn);

/* The --where literals of a date, time or timestamp column (floe cat and floe scan type
 * them here, so both take the same): quoted ('...'), the text in FLOE_LIT_USER form;
 * unquoted, that text or an integer, the column's own value (days, microseconds of the
 * day, or the timestamp's units since the epoch). zoned: the column is a timestamp with
 * time zone (timestamptz, timestamptz_ns): a literal's zone is applied, one without a zone
 * is read as UTC. A timestamp without time zone holds wall-clock values, so a literal
 * with a zone (Z or an offset) is refused there, as ingest refuses such values.
 * digits: the timestamp column's unit (6 or 9). */
int floe_lit_where_date(const char *s, size_t n, bool quoted, int32_t *days, char *why,
                        size_t whyn);
int floe_lit_where_time(const char *s, size_t n, bool quoted, int64_t *micros, char *why,
                        size_t whyn);
int floe_lit_where_timestamp(const char *s, size_t n, bool quoted, bool zoned, int digits,
                             int64_t *out, char *why, size_t whyn);

#endif
