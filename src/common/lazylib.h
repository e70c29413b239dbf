/*
 * lazylib.h - the network and service libraries, loaded when first called.
 *
 * libcurl, libpq, librdkafka and libmicrohttpd (with what they pull in: GnuTLS, Kerberos,
 * LDAP, SASL, ...) are 40 shared objects whose loading and constructors took ~30 ms of
 * every floe command, though most commands (a local scan, a plan) call none of them. The
 * floe program does not link them; the code that calls them includes common/lazy_curl.h,
 * lazy_pq.h, lazy_kafka.h or lazy_mhd.h instead of the library's header, whose names
 * then call through a table of functions that dlopen/dlsym fill on the first call.
 */
#ifndef FLOE_LAZYLIB_H
#define FLOE_LAZYLIB_H

#include "floe/common.h"

/* A table member: a pointer of the function's own type (variadic ones included). */
#define FLOE_LAZY_MEMBER(f) __typeof__(f) *f;

/* dlopen soname (RTLD_NOW), or print a message naming it and what dlerror says and exit:
 * a library floe's package depends on is missing, and the call that needs it has no
 * error to return. */
void *floe_lazylib_open(const char *soname);
/* dlsym name in handle, or the same message and exit. */
void *floe_lazylib_sym(void *handle, const char *soname, const char *name);

#endif
