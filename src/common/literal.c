/*
 * literal.c - numbers from bounded text (s[0..n), no NUL needed), for the literals users
 * write in filters: the Parquet reader's row filter and the scan's --where both take them.
 *
 * The syntax is strtoll's / strtoull's / strtod's, over the whole text: anything left over,
 * an empty text, a value out of range, or text longer than any number needs is refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
