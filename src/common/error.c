/*
 * error.c - the project-wide error table and the floe_error helpers.
 *
 * Messages are built front to back while unwinding: the innermost failure sets the
 * message, each caller may prefix context ("row group 3: column 7: ..."). Messages are
 * truncated, never overflowed.
 */
#include "floe/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
    if (fmt)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    else
        snprintf(err->msg, sizeof err->msg, "%s", floe_strerror(code));
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
    char head[FLOE_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t hl = strlen(head);
    size_t ml = strlen(err->msg);
    if (hl >= sizeof err->msg - 1)
        hl = sizeof err->msg - 1;
    if (hl + ml >= sizeof err->msg)
        ml = sizeof err->msg - 1 - hl;
    memmove(err->msg + hl, err->msg, ml);
    memcpy(err->msg, head, hl);
    err->msg[hl + ml] = '\0';
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
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    floe_error_set(err, code, "%s: %s", head, strerror(errnum));
    err->sys = errnum;
    return code;
}
