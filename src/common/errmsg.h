/*
 * common/errmsg.h - fitting a message into a fixed buffer (internal to the library).
 *
 * Error messages live in fixed buffers (floe_error's msg, a rewrite group's why): memory
 * stays bounded whatever a path or a nested error holds. A message longer than its buffer
 * loses its middle, never its ends: the head keeps the outer context and the start of
 * the path it names, the tail the innermost reason with its byte offset and the file's
 * own name (the end of its path). The cut is marked "[... N bytes cut ...]".
 */
#ifndef FLOE_COMMON_ERRMSG_H
#define FLOE_COMMON_ERRMSG_H

#include <stddef.h>

/* src[0..len) into dst[0..cap) (cap >= 1), NUL-terminated; when it does not fit, its
 * middle is replaced by the marker (cut on UTF-8 character boundaries). Returns the
 * length written. */
size_t floe_msg_fit(char *dst, size_t cap, const char *src, size_t len);

/* prefix + msg into dst[0..cap), as floe_msg_fit does with their concatenation. */
size_t floe_msg_fit2(char *dst, size_t cap, const char *prefix, const char *msg);

#endif
