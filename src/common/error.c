/*
 * error.c - the project-wide error table and the floe_error helpers.
 *
 * Messages are built front to back while unwinding: the innermost failure sets the
 * message, each caller may prefix context ("row group 3: column 7: ..."). Messages never
 * overflow: one longer than the buffer loses its middle, marked (common/errmsg.h), so the
 * outer context and the innermost reason with its offset both stay.
 */
#include "floe/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/errmsg.h"

/* The marker's room: "[... " + up to 20 digits + " bytes cut ...]" */
#define CUT_MARK_MAX 40

static bool utf8_cont(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

/* The byte at virtual index i of a + b (lengths na, nb). */
static char at2(const char *a, size_t na, const char *b, size_t i) {
    return i < na ? a[i] : b[i - na];
}

static void copy2(char *dst, const char *a, size_t na, const char *b, size_t from, size_t n) {
    for (size_t i = 0; i < n; i++)
        dst[i] = at2(a, na, b, from + i);
}

/* a[0..na) + b[0..nb) into dst[0..cap); dst must not overlap a or b. */
static size_t fit2(char *dst, size_t cap, const char *a, size_t na, const char *b, size_t nb) {
    size_t len = na + nb;
    if (cap == 0)
        return 0;
    if (len < cap) {
        memcpy(dst, a, na);
        memcpy(dst + na, b, nb);
        dst[len] = '\0';
        return len;
    }
    if (cap <= 2 * CUT_MARK_MAX) { /* no room for a marker and two ends: the head */
        size_t h = cap - 1;
        while (h > 0 && utf8_cont(at2(a, na, b, h)))
            h--;
        copy2(dst, a, na, b, 0, h);
        dst[h] = '\0';
        return h;
    }
    size_t room = cap - 1 - CUT_MARK_MAX;
    size_t h = room / 2, t = len - (room - h); /* head [0, h), tail [t, len) */
    while (h > 0 && utf8_cont(at2(a, na, b, h)))
        h--;
    while (t < len && utf8_cont(at2(a, na, b, t)))
        t++;
    copy2(dst, a, na, b, 0, h);
    int m = snprintf(dst + h, CUT_MARK_MAX + 1, "[... %zu bytes cut ...]", t - h);
    size_t pos = h + (m > 0 ? (size_t)m : 0);
    copy2(dst + pos, a, na, b, t, len - t);
    pos += len - t;
    dst[pos] = '\0';
    return pos;
}

/* fmt with ap into room[0..cap) when it fits, else into a block of its own length (the
 * caller frees it when it is not room): its length in *len. Formatted once when it fits
 * (errors of rejected records are made at input speed), twice when it does not. Without
 * memory, the head of the text in room. */
static char *format_whole(char *room, size_t cap, const char *fmt, va_list ap, size_t *len)
    FLOE_PRINTF(3, 0);
static char *format_whole(char *room, size_t cap, const char *fmt, va_list ap, size_t *len) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(room, cap, fmt, ap);
    char *whole = n >= 0 && (size_t)n >= cap ? floe_malloc((size_t)n + 1) : NULL;
    if (whole) {
        vsnprintf(whole, (size_t)n + 1, fmt, again);
        va_end(again);
        *len = (size_t)n;
        return whole;
    }
    va_end(again);
    *len = n < 0 ? 0 : strlen(room);
    if (n < 0)
        room[0] = '\0';
    return room;
}

size_t floe_msg_fit(char *dst, size_t cap, const char *src, size_t len) {
    return fit2(dst, cap, src, len, "", 0);
}

size_t floe_msg_fit2(char *dst, size_t cap, const char *prefix, const char *msg) {
    return fit2(dst, cap, prefix, strlen(prefix), msg, strlen(msg));
}

const char *floe_strerror(int code) {
    switch (code) {
    case FLOE_OK:
        return "ok";
#define FLOE_ERR_DESC_(name, val, desc)                                                \
    case FLOE_E##name:                                                                 \
        return desc;
        FLOE_ERRNO_MAP(FLOE_ERR_DESC_)
#undef FLOE_ERR_DESC_
    default:
        return "unknown error";
    }
}

const char *floe_errname(int code) {
    switch (code) {
    case FLOE_OK:
        return "OK";
#define FLOE_ERR_NAME_(name, val, desc)                                                \
    case FLOE_E##name:                                                                 \
        return #name;
        FLOE_ERRNO_MAP(FLOE_ERR_NAME_)
#undef FLOE_ERR_NAME_
    default:
        return "UNKNOWN";
    }
}

void floe_error_clear(floe_error *err) {
    if (!err)
        return;
    err->code = 0;
    err->sys = 0;
    err->offset = -1;
    err->msg[0] = '\0';
}

int floe_error_setv(floe_error *err, int code, const char *fmt, va_list ap) {
    if (!err)
        return code;
    err->code = code;
    err->sys = 0;
    err->offset = -1;
    if (!fmt) {
        snprintf(err->msg, sizeof err->msg, "%s", floe_strerror(code));
        return code;
    }
    size_t n = 0;
    char *whole = format_whole(err->msg, sizeof err->msg, fmt, ap, &n);
    if (whole != err->msg) {
        floe_msg_fit(err->msg, sizeof err->msg, whole, n);
        floe_free(whole);
    }
    return code;
}

int floe_error_set(floe_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    floe_error_setv(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int floe_error_sys(floe_error *err, int code, int sys, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    floe_error_setv(err, code, fmt, ap);
    va_end(ap);
    if (err)
        err->sys = sys;
    return code;
}

int floe_error_at(floe_error *err, int code, int64_t offset, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    floe_error_setv(err, code, fmt, ap);
    va_end(ap);
    if (err)
        err->offset = offset;
    return code;
}

void floe_error_prefix(floe_error *err, const char *fmt, ...) {
    if (!err)
        return;
    char head[FLOE_ERROR_MSG_MAX], whole[FLOE_ERROR_MSG_MAX];
    size_t hl = 0;
    va_list ap;
    va_start(ap, fmt);
    char *h = format_whole(head, sizeof head, fmt, ap, &hl);
    va_end(ap);
    fit2(whole, sizeof whole, h, hl, err->msg, strlen(err->msg));
    if (h != head)
        floe_free(h);
    memcpy(err->msg, whole, strlen(whole) + 1);
}

int floe_error_errno(floe_error *err, int errnum, const char *fmt, ...) {
    int code;
    switch (errnum) {
    case ENOMEM:
        code = FLOE_ENOMEM;
        break;
    case ENOENT:
        code = FLOE_ENOTFOUND;
        break;
    case EEXIST:
        code = FLOE_EEXISTS;
        break;
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
        code = FLOE_ENOSPACE;
        break;
    case EACCES:
    case EPERM:
        code = FLOE_EAUTH;
        break;
    case ETIMEDOUT:
        code = FLOE_ETIMEOUT;
        break;
    default:
        code = FLOE_EIO;
        break;
    }
    if (!err)
        return code;
    char head[FLOE_ERROR_MSG_MAX];
    size_t hl = 0;
    va_list ap;
    va_start(ap, fmt);
    char *h = format_whole(head, sizeof head, fmt, ap, &hl);
    va_end(ap);
    floe_error_set(err, code, "%s: %s", h, strerror(errnum));
    if (h != head)
        floe_free(h);
    err->sys = errnum;
    return code;
}
