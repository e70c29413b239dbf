/*
 * common/httphead.h - request heads both libmicrohttpd servers (floe serve and floe
 * catalog serve) refuse before a body byte is read. Internal to the library (not
 * installed).
 *
 * Message framing (RFC 9112 section 6.3): the body's length must be unambiguous.
 * Every Content-Length (as separate fields or a comma list) must be the same decimal
 * number; Transfer-Encoding, if present, must be exactly "chunked" and comes without
 * Content-Length. libmicrohttpd alone takes the first Content-Length and lets chunked
 * win over it, so a front proxy that frames the other way would see another request
 * boundary (request smuggling: the rest of a body run as a second request). A transfer
 * coding other than chunked (gzip, chunked) is not implemented: 501, where
 * libmicrohttpd would read the body until the connection closes and answer nothing.
 * Host (RFC 9112 section 3.2) must come once: two are 400. A field name must be a token
 * (RFC 9112 section 5.1: white space between the name and the colon is a 400):
 * libmicrohttpd keeps "Content-Length " with its blank, frames nothing by it, and a
 * proxy that trims the name would frame the body as this request's.
 *
 * Answered at the handler's first call, the refusal closes the connection (the body is
 * never read, so nothing after it can be taken for a request).
 */
#ifndef FLOE_COMMON_HTTPHEAD_H
#define FLOE_COMMON_HTTPHEAD_H

#include "common/lazy_mhd.h"

/* NULL when c's head may be served; else why not, and in *status the answer's status
 * (400, or 501 for a transfer coding other than chunked). */
const char *floe_http_head_error(struct MHD_Connection *c, int *status);

#endif
