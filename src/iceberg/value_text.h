/*
 * value_text.h - text forms of single values, shared by the transforms (human strings for
 * partition paths) and the JSON single-value serialization. Private to src/iceberg
 * and src/table.
 *
 * Two families exist because Iceberg has two: the "human" strings of the reference
 * implementation (java.time / BigDecimal / Float.toString renderings, used in paths) and
 * the spec's JSON single-value strings (Appendix D), which fix the fraction digits.
 * Every function appends to a floe_buf and returns 0 or a negative floe code.
 */
#ifndef FLOE_ICEBERG_VALUE_TEXT_H
#define FLOE_ICEBERG_VALUE_TEXT_H

#include "floe/common.h"
#include "floe/partition.h"

/* Spec name of a type ("timestamptz"); never NULL. */
const char *floe_xf_type_name(floe_type_id t);

/* floor division and modulo for a positive divisor */
static inline int64_t floe_floordiv64(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
static inline int64_t floe_floormod64(int64_t a, int64_t b) {
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* Decimal digits of |v| (no sign) into out (at least 40 bytes); returns the length. */
size_t floe_vt_i128_digits(floe_i128 v, char *out);
/* java.math.BigDecimal.toString() of unscaled * 10^-scale. */
int floe_vt_decimal_java(floe_buf *b, floe_i128 unscaled, int32_t scale);
/* Spec JSON form: plain with `scale` fraction digits when scale >= 0, else
 * "<unscaled>E+<-scale>". */
int floe_vt_decimal_plain(floe_buf *b, floe_i128 unscaled, int32_t scale);

/* "%04d-%02d-%02d" of a day number (Iceberg TransformUtil.humanDay). */
int floe_vt_day_human(floe_buf *b, int64_t days);
/* ISO_LOCAL_DATE: 4+ digit year, '-' for BCE years, '+' for years past 9999. */
int floe_vt_date_iso(floe_buf *b, int64_t days);
/* java.time.LocalTime.toString of nanos since midnight ("22:31", "22:31:08.123"). */
int floe_vt_time_java(floe_buf *b, int64_t nanos_of_day);
/* ISO_LOCAL_TIME with the minimum fraction digits (java formatter output). */
int floe_vt_time_iso_min(floe_buf *b, int64_t nanos_of_day);
/* "HH:MM:SS.ffffff" (digits = 6) or ".fffffffff" (digits = 9). */
int floe_vt_time_iso_fixed(floe_buf *b, int64_t nanos_of_day, int digits);
/* Timestamps from (seconds, nanos) split with floor semantics. fixed_digits 0 selects the
 * minimal-fraction java rendering; utc appends "+00:00". */
int floe_vt_timestamp(floe_buf *b, int64_t value, int64_t units_per_sec, int fixed_digits,
                      bool utc);

/* java Float.toString / Double.toString (shortest round-trip digits). */
int floe_vt_float_java(floe_buf *b, double v, bool is_float);
/* Shortest round-trip JSON number for a finite value. */
int floe_vt_float_json(floe_buf *b, double v, bool is_float);

int floe_vt_hex(floe_buf *b, const uint8_t *p, size_t n);
int floe_vt_uuid(floe_buf *b, const uint8_t u[16]);

/* Canonical 8-4-4-4-12 hex UUID. (Dates, times, timestamps and decimals parse in
 * common/literal.h.) */
bool floe_vt_parse_uuid(const char *s, size_t n, uint8_t out[16]);

#endif
