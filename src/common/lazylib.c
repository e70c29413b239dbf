/*
 * lazylib.c - the tables of common/lazy_*.h, filled on first use (see common/lazylib.h).
 *
 * Invariants: a table is written only inside its pthread_once routine, into a local copy,
 * and published (lazylib.ready, release) after every function was found; ready stays NULL
 * after a failure, whose message (lazylib.failure) is written once, in the same routine,
 * and only read after pthread_once returned. Nothing here ends the process except
 * floe_lazylib_unloaded (a bug: a name used before its entry point loaded the table).
 */
#define FLOE_LAZY_TABLES /* the names stay the libraries' own here */
#include "common/lazylib.h"
#include "common/lazy_crypto.h"
#include "common/lazy_curl.h"
#include "common/lazy_icu.h"
#include "common/lazy_kafka.h"
#include "common/lazy_mhd.h"
#include "common/lazy_pq.h"
#include "common/lazy_snappy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The build's sonames (CMakeLists.txt reads them from the libraries it finds). */
#if !defined(FLOE_SONAME_CURL) || !defined(FLOE_SONAME_PQ) || !defined(FLOE_SONAME_KAFKA) ||   \
    !defined(FLOE_SONAME_MHD) || !defined(FLOE_SONAME_SNAPPY) || !defined(FLOE_SONAME_CRYPTO)
#error "FLOE_SONAME_CURL, _PQ, _KAFKA, _MHD, _SNAPPY and _CRYPTO come from CMakeLists.txt"
#endif
#if defined(FLOE_HAVE_ICU) && !defined(FLOE_SONAME_ICU)
#error "FLOE_SONAME_ICU comes from CMakeLists.txt (built with ICU)"
#endif

#define SONAME_MAX 256

typedef struct lazylib {
    const char *id;         /* floe_lazylib_soname_set's name */
    const char *lib;        /* for messages */
    const char *needed_for; /* for messages */
    const char *built;      /* the build's soname */
    pthread_once_t once;
    _Atomic(const void *) ready; /* the table, once complete */
    atomic_bool tried;           /* the load has begun: no more soname changes */
    pthread_mutex_t mu;          /* soname */
    char soname[SONAME_MAX];     /* set by floe_lazylib_soname_set; "" = built */
    floe_error failure;          /* why the load failed (ready NULL) */
} lazylib;

#define LAZYLIB(id_, lib_, needed_, built_)                                              \
    {.id = id_, .lib = lib_, .needed_for = needed_, .built = built_,                   \
     .once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER}

/* every id has a slot; ICU's is empty (id NULL) in a build without it */
static lazylib libs[FLOE_LAZYLIB_ICU + 1] = {
    [FLOE_LAZYLIB_CURL] = LAZYLIB("curl", "libcurl", "s3:// locations and REST catalogs",
                                  FLOE_SONAME_CURL),
    [FLOE_LAZYLIB_PQ] = LAZYLIB("pq", "libpq", "PostgreSQL catalogs", FLOE_SONAME_PQ),
    [FLOE_LAZYLIB_KAFKA] = LAZYLIB("kafka", "librdkafka", "Kafka sources (floe serve)",
                                   FLOE_SONAME_KAFKA),
    [FLOE_LAZYLIB_MHD] = LAZYLIB("mhd", "libmicrohttpd",
                                 "the HTTP servers (floe serve, floe catalog serve)",
                                 FLOE_SONAME_MHD),
    [FLOE_LAZYLIB_SNAPPY] = LAZYLIB("snappy", "libsnappy",
                                    "Snappy compression (Parquet pages, Avro blocks)",
                                    FLOE_SONAME_SNAPPY),
    [FLOE_LAZYLIB_CRYPTO] = LAZYLIB("crypto", "libcrypto",
                                    "SHA-256 and MD5 (S3 requests, long partition values, "
                                    "copied files, idempotency keys)",
                                    FLOE_SONAME_CRYPTO),
#ifdef FLOE_HAVE_ICU
    [FLOE_LAZYLIB_ICU] = LAZYLIB("icu", "libicuuc",
                                 "Unicode folding of table and namespace folders "
                                 "(placing a table or namespace)",
                                 FLOE_SONAME_ICU),
#endif
};

int floe_lazylib_soname_set(const char *lib, const char *soname, floe_error *err) {
    if (!soname || !*soname || strlen(soname) >= SONAME_MAX)
        return floe_error_set(err, FLOE_EINVALID, "library %s: soname empty or longer than "
                              "%d bytes", lib ? lib : "(null)", SONAME_MAX - 1);
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        lazylib *L = &libs[i];
        if (!lib || !L->id || strcmp(lib, L->id))
            continue;
        int rc = 0;
        pthread_mutex_lock(&L->mu);
        if (atomic_load(&L->tried))
            rc = floe_error_set(err, FLOE_EBUSY, "%s: already loaded (set its soname before "
                                "its first use)", L->lib);
        else
            snprintf(L->soname, sizeof L->soname, "%s", soname);
        pthread_mutex_unlock(&L->mu);
        return rc;
    }
    return floe_error_set(err, FLOE_EINVALID, "no lazily loaded library '%s' (curl, pq, kafka, "
                          "mhd, snappy, crypto%s)", lib ? lib : "(null)",
                          libs[FLOE_LAZYLIB_ICU].id ? " or icu" : "");
}

/* dlopen L's soname into *handle; else L->failure says why. */
static int lib_open(lazylib *L, void **handle) {
    char soname[SONAME_MAX];
    pthread_mutex_lock(&L->mu);
    atomic_store(&L->tried, true);
    snprintf(soname, sizeof soname, "%s", L->soname[0] ? L->soname : L->built);
    pthread_mutex_unlock(&L->mu);
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return floe_error_set(&L->failure, FLOE_EUNSUPPORTED,
                              "%s is needed for %s and could not be loaded: %s", soname,
                              L->needed_for, why ? why : "(no reason given)");
    }
    *handle = h;
    return 0;
}

/* dlsym name in h into *slot; else L->failure says why. */
static int lib_sym(lazylib *L, void *h, const char *name, void **slot) {
    dlerror();
    void *p = dlsym(h, name);
    if (!p) {
        const char *why = dlerror();
        char soname[SONAME_MAX];
        pthread_mutex_lock(&L->mu);
        snprintf(soname, sizeof soname, "%s", L->soname[0] ? L->soname : L->built);
        pthread_mutex_unlock(&L->mu);
        return floe_error_set(&L->failure, FLOE_EUNSUPPORTED,
                              "%s is needed for %s and lacks %s: %s", soname, L->needed_for,
                              name, why ? why : "(no reason given)");
    }
    *slot = p;
    return 0;
}

/* the table of library id, or NULL with its failure copied into err */
static const void *lib_result(lazylib *L, floe_error *err) {
    const void *t = atomic_load_explicit(&L->ready, memory_order_acquire);
    if (!t && err)
        *err = L->failure;
    return t;
}

void floe_lazylib_unloaded(floe_lazylib_id id) {
    fprintf(stderr, "floe: internal error: %s called before floe_lazy_%s(err) loaded it\n",
            libs[id].lib, libs[id].id);
    abort();
}

/* One library: its table, filled once. POSIX: a dlsym result converts to the function's
 * pointer type (written through a void * view of the member). FLOE_LAZY_SYM looks up the
 * name as written; FLOE_LAZY_SYM_EXPANDED the name it expands to (ICU's version-renamed
 * functions: u_strFoldCase is u_strFoldCase_72, and so is the member). */
#define FLOE_LAZY_SYM(f)                                                                   \
    if (lib_sym(L, h, #f, (void **)&t.f) < 0)                                              \
        goto fail;
#define FLOE_LAZY_STR(x) #x
#define FLOE_LAZY_SYM_EXPANDED(f)                                                          \
    if (lib_sym(L, h, FLOE_LAZY_STR(f), (void **)&t.f) < 0)                                \
        goto fail;
#define FLOE_LAZY_TABLE(name, ID, LIST) FLOE_LAZY_TABLE_BY(name, ID, LIST, FLOE_LAZY_SYM)
#define FLOE_LAZY_TABLE_BY(name, ID, LIST, SYM)                                            \
    static floe_lazy_##name##_fns name##_fns;                                              \
    static void name##_load(void) {                                                        \
        lazylib *L = &libs[ID];                                                            \
        floe_lazy_##name##_fns t;                                                          \
        void *h = NULL;                                                                    \
        memset(&t, 0, sizeof t);                                                           \
        if (lib_open(L, &h) < 0)                                                           \
            return;                                                                        \
        LIST(SYM)                                                                          \
        name##_fns = t;                                                                    \
        atomic_store_explicit(&L->ready, (const void *)&name##_fns, memory_order_release); \
        return;                                                                            \
    fail:                                                                                  \
        dlclose(h);                                                                        \
    }                                                                                      \
    const floe_lazy_##name##_fns *floe_lazy_##name(floe_error *err) {                      \
        pthread_once(&libs[ID].once, name##_load);                                         \
        return lib_result(&libs[ID], err);                                                 \
    }                                                                                      \
    const floe_lazy_##name##_fns *floe_lazy_##name##_table(void) {                         \
        const void *t = atomic_load_explicit(&libs[ID].ready, memory_order_acquire);       \
        if (FLOE_UNLIKELY(!t))                                                             \
            floe_lazylib_unloaded(ID);                                                     \
        return t;                                                                          \
    }

FLOE_LAZY_TABLE(curl, FLOE_LAZYLIB_CURL, FLOE_LAZY_CURL_FNS)
FLOE_LAZY_TABLE(pq, FLOE_LAZYLIB_PQ, FLOE_LAZY_PQ_FNS)
FLOE_LAZY_TABLE(kafka, FLOE_LAZYLIB_KAFKA, FLOE_LAZY_KAFKA_FNS)
FLOE_LAZY_TABLE(mhd, FLOE_LAZYLIB_MHD, FLOE_LAZY_MHD_FNS)
FLOE_LAZY_TABLE(snappy, FLOE_LAZYLIB_SNAPPY, FLOE_LAZY_SNAPPY_FNS)
FLOE_LAZY_TABLE(crypto, FLOE_LAZYLIB_CRYPTO, FLOE_LAZY_CRYPTO_FNS)
#ifdef FLOE_HAVE_ICU
FLOE_LAZY_TABLE_BY(icu, FLOE_LAZYLIB_ICU, FLOE_LAZY_ICU_FNS, FLOE_LAZY_SYM_EXPANDED)
#endif
