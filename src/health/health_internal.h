/*
 * health_internal.h - pieces shared by the health analysis and its renderings.
 * Private to src/health.
 */
#ifndef FLOE_HEALTH_INTERNAL_H
#define FLOE_HEALTH_INTERNAL_H

#include "floe/health.h"
#include "floe/partition.h"

/* A value as a literal of the filter language, appended to b. 1 when the value has no
 * literal form floe's filter reads back (binary, fixed, NaN), else 0 or an error. */
int health_literal(floe_buf *b, const floe_value *v);

/* Number formatting for the renderings: "12,345", "1.2 M", "87%", "3.4 MB", "12.3 ms". */
const char *health_fmt_int(int64_t v, char *buf, size_t n);
const char *health_fmt_count(double v, char *buf, size_t n);
const char *health_fmt_bytes(double v, char *buf, size_t n);
const char *health_fmt_ms(int64_t ns, char *buf, size_t n);
const char *health_fmt_age(int64_t ms, char *buf, size_t n);
const char *health_fmt_time(int64_t ms, char *buf, size_t n);
const char *health_fmt_money(double usd, char *buf, size_t n);
/* "" for 1, "s" otherwise: "%lld file%s". */
static inline const char *health_s(int64_t n) { return n == 1 ? "" : "s"; }
/* The request model in one sentence (every rendering prints it). */
extern const char health_request_model[];
const char *health_rec_kind_name(floe_health_rec_kind k);

#endif
