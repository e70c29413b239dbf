/*
 * literal.c - numbers from bounded text (s[0..n), no NUL needed), for the literals users
 * write in filters: the Parquet reader's row filter and the scan's --where both take them.
 *
 * The syntax is strtoll's / strtoull's / strtod's, over the whole text: anything left over,
 * an empty text, a value out of range, or text longer than any number needs is refused.
 *
 * Also the sizes and durations of configuration files and command options (one parser for
 * the CLI, `floe serve`'s configuration and the maintenance settings).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/common.h"

/* A NUL-terminated copy in buf[cap]; false when s does not fit (no number is that long). */
static bool terminated(const char *s, size_t n, char *buf, size_t cap) {
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    return true;
}

bool floe_parse_i64(const char *s, size_t n, int64_t *out) {
    char buf[32], *end;
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool floe_parse_i64_cstr(const char *s, int64_t *out) {
    return s && floe_parse_i64(s, strlen(s), out);
}

bool floe_parse_u64(const char *s, size_t n, uint64_t *out) {
    char buf[32], *end;
    /* strtoull takes "-1" as 2^64 - 1 */
    if (!terminated(s, n, buf, sizeof buf) || memchr(buf, '-', n))
        return false;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool floe_parse_f64(const char *s, size_t n, double *out) {
    char buf[64], *end;
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    double v = strtod(buf, &end);
    if (*end)
        return false;
    *out = v;
    return true;
}

/* A non-negative number and the unit after it (optional blanks between); false for no
 * number, NaN or a negative one. */
static bool number_unit(const char *s, double *v, const char **unit) {
    if (!s || !*s)
        return false;
    char *end;
    double d = strtod(s, &end);
    if (end == s || !(d >= 0))
        return false;
    while (*end == ' ' || *end == '\t')
        end++;
    *v = d;
    *unit = end;
    return true;
}

static bool scaled(double v, double mul, int64_t *out) {
    double r = v * mul;
    if (!(r <= 9.0e18)) /* also infinity */
        return false;
    *out = (int64_t)r;
    return true;
}

bool floe_parse_size(const char *s, int64_t *out) {
    double v, mul;
    const char *u;
    if (!number_unit(s, &v, &u))
        return false;
    if (!*u || !strcasecmp(u, "b"))
        mul = 1;
    else if (!strcasecmp(u, "k") || !strcasecmp(u, "kb") || !strcasecmp(u, "kib"))
        mul = 1024.0;
    else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb") || !strcasecmp(u, "mib"))
        mul = 1024.0 * 1024;
    else if (!strcasecmp(u, "g") || !strcasecmp(u, "gb") || !strcasecmp(u, "gib"))
        mul = 1024.0 * 1024 * 1024;
    else
        return false;
    return scaled(v, mul, out);
}

bool floe_parse_duration(const char *s, int64_t bare_unit_ms, int64_t *out_ms) {
    double v, mul;
    const char *u;
    if (!number_unit(s, &v, &u))
        return false;
    if (!*u) {
        if (bare_unit_ms <= 0)
            return false;
        mul = (double)bare_unit_ms;
    } else if (!strcmp(u, "ms")) {
        mul = 1;
    } else if (!strcmp(u, "s")) {
        mul = 1000;
    } else if (!strcmp(u, "m") || !strcmp(u, "min")) {
        mul = 60000;
    } else if (!strcmp(u, "h")) {
        mul = 3600000;
    } else if (!strcmp(u, "d")) {
        mul = 86400000;
    } else {
        return false;
    }
    return scaled(v, mul, out_ms);
}
