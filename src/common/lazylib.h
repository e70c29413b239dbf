/*
 * lazylib.h - the libraries few commands call, loaded when first called.
 *
 * libcurl, libpq, librdkafka and libmicrohttpd (with what they pull in: GnuTLS, Kerberos,
 * LDAP, SASL, ...) are 40 shared objects whose loading and constructors took ~30 ms of
 * every floe command, though most commands (a local scan, a plan) call none of them. The
 * floe program does not link them; the code that calls them includes common/lazy_curl.h,
 * lazy_pq.h, lazy_kafka.h or lazy_mhd.h instead of the library's header, whose names
 * then call through a table of functions that dlopen/dlsym fill once. So are libsnappy
 * (lazy_snappy.h: C++, it brought libstdc++ and libgcc_s into every start), OpenSSL's
 * libcrypto (lazy_crypto.h) and ICU's libicuuc (lazy_icu.h, used by common/fold.c only):
 * together ~10 ms of a point query's plan (issue 22).
 *
 * Loading can fail (the library is not installed, or lacks a function), and library code
 * never ends the process: each subsystem's entry point loads its table first through a
 * call that returns the error - floe_lazy_curl(err) in the S3 client's requests and
 * floe_catalog_open_rest, floe_lazy_pq(err) in floe_pg_connect, floe_lazy_kafka(err) in
 * srv_kafka_start, floe_lazy_mhd(err) in srv_http_start and floe_rest_server_start,
 * floe_lazy_snappy(err) in each Snappy case of codec.c, floe_lazy_crypto(err) in
 * floe_sha256/floe_sha256_begin, the S3 client's requests and floe_rest_server_start,
 * floe_lazy_icu(err) in floe_fold_name - and calls the library's names only once that
 * succeeded. The names themselves (the macros of
 * lazy_*.h) go through floe_lazy_X_table(), which returns the loaded table; reaching one
 * before its entry point loaded it is a bug in floe, reported and aborted (an assert).
 *
 * Threads: the first floe_lazy_X(err) loads under pthread_once; the table is published
 * (an atomic pointer, release) only once every function was found, so no caller ever sees
 * a half-filled table. A failed load is final: every later caller gets the same error.
 *
 * The sonames are the build's own (CMakeLists.txt reads each library's DT_SONAME at
 * configure time: FLOE_SONAME_CURL, _PQ, _KAFKA, _MHD, _SNAPPY, _CRYPTO and, built with
 * ICU, _ICU). ICU renames its functions by version (u_strFoldCase is u_strFoldCase_72):
 * its table is looked up by the names its headers' macros expand to. floe_lazylib_soname_set
 * (floe/common.h) replaces one before its first load (tests: a library that is missing).
 */
#ifndef FLOE_LAZYLIB_H
#define FLOE_LAZYLIB_H

#include "floe/common.h"

/* A table member: a pointer of the function's own type (variadic ones included). */
#define FLOE_LAZY_MEMBER(f) __typeof__(f) *f;

/* The library id of floe_lazylib_soname_set and the soname a table is loaded from. */
typedef enum floe_lazylib_id {
    FLOE_LAZYLIB_CURL,
    FLOE_LAZYLIB_PQ,
    FLOE_LAZYLIB_KAFKA,
    FLOE_LAZYLIB_MHD,
    FLOE_LAZYLIB_SNAPPY,
    FLOE_LAZYLIB_CRYPTO,
    FLOE_LAZYLIB_ICU, /* built with ICU only (FLOE_HAVE_ICU) */
} floe_lazylib_id;

/* Called by a floe_lazy_X_table() whose table is not loaded: prints what was called too
 * early and aborts (a bug in floe: an entry point did not call floe_lazy_X(err)). */
void floe_lazylib_unloaded(floe_lazylib_id id) __attribute__((noreturn));

#endif
