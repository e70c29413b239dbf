/*
 * lazylib.c - the tables of common/lazy_*.h, filled on first use (see common/lazylib.h).
 */
#define FLOE_LAZY_TABLES /* the names stay the libraries' own here */
#include "common/lazylib.h"
#include "common/lazy_curl.h"
#include "common/lazy_kafka.h"
#include "common/lazy_mhd.h"
#include "common/lazy_pq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void *floe_lazylib_open(const char *soname) {
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "floe: %s is needed here and could not be loaded: %s\n", soname,
                dlerror());
        exit(EXIT_FAILURE);
    }
    return h;
}

void *floe_lazylib_sym(void *handle, const char *soname, const char *name) {
    dlerror();
    void *p = dlsym(handle, name);
    if (!p) {
        const char *why = dlerror();
        fprintf(stderr, "floe: %s has no %s: %s\n", soname, name, why ? why : "NULL");
        exit(EXIT_FAILURE);
    }
    return p;
}

/* one library: its table, filled once */
#define FLOE_LAZY_TABLE(name, soname, LIST)                                                \
    static floe_lazy_##name##_fns name##_fns;                                              \
    static pthread_once_t name##_once = PTHREAD_ONCE_INIT;                                 \
    static void name##_load(void) {                                                        \
        void *h = floe_lazylib_open(soname);                                               \
        LIST(name##_SYM)                                                                   \
    }                                                                                      \
    const floe_lazy_##name##_fns *floe_lazy_##name(void) {                                 \
        pthread_once(&name##_once, name##_load);                                           \
        return &name##_fns;                                                                \
    }

/* POSIX: a dlsym result converts to the function's pointer type */
#define curl_SYM(f) *(void **)&curl_fns.f = floe_lazylib_sym(h, "libcurl.so.4", #f);
#define pq_SYM(f) *(void **)&pq_fns.f = floe_lazylib_sym(h, "libpq.so.5", #f);
#define kafka_SYM(f) *(void **)&kafka_fns.f = floe_lazylib_sym(h, "librdkafka.so.1", #f);
#define mhd_SYM(f) *(void **)&mhd_fns.f = floe_lazylib_sym(h, "libmicrohttpd.so.12", #f);

FLOE_LAZY_TABLE(curl, "libcurl.so.4", FLOE_LAZY_CURL_FNS)
FLOE_LAZY_TABLE(pq, "libpq.so.5", FLOE_LAZY_PQ_FNS)
FLOE_LAZY_TABLE(kafka, "librdkafka.so.1", FLOE_LAZY_KAFKA_FNS)
FLOE_LAZY_TABLE(mhd, "libmicrohttpd.so.12", FLOE_LAZY_MHD_FNS)
