/*
 * test_lazylib.c - the loader of the libraries loaded when first needed
 * (src/common/lazylib.h): a load that fails returns an error (the process goes on), the
 * same error to every caller and every thread, and publishes no table; a library that
 * loads but lacks a function is a failure too; a soname cannot change once a load began.
 * Each library is loaded at most once per process, so each case takes its own library.
 */
#include <pthread.h>
#include <string.h>

#include "harness.h"

#include "common/lazy_curl.h"
#include "common/lazy_kafka.h"
#include "common/lazy_mhd.h"
#include "common/lazy_pq.h"

#define MISSING "libfloe-test-missing.so.0"
#define NTHREADS 8

typedef struct {
    const floe_lazy_pq_fns *table;
    floe_error err;
} pq_try;

static void *pq_thread(void *arg) {
    pq_try *t = arg;
    floe_error_clear(&t->err);
    t->table = floe_lazy_pq(&t->err);
    return NULL;
}

/* libpq at a soname that does not exist, loaded by several threads at once */
static void test_missing_same_error_everywhere(void) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_OK(floe_lazylib_soname_set("pq", MISSING, &err), err);
    pq_try tries[NTHREADS];
    pthread_t thr[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        REQUIRE(pthread_create(&thr[i], NULL, pq_thread, &tries[i]) == 0);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(thr[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        CHECK(tries[i].table == NULL);
        CHECK_EQ_INT(tries[i].err.code, FLOE_EUNSUPPORTED);
        CHECK(strstr(tries[i].err.msg, MISSING " is needed for PostgreSQL catalogs and could "
                                       "not be loaded: ") != NULL);
        CHECK_EQ_STR(tries[i].err.msg, tries[0].err.msg);
    }
    /* and later callers too; a NULL err is allowed */
    floe_error again;
    floe_error_clear(&again);
    CHECK(floe_lazy_pq(&again) == NULL);
    CHECK_EQ_STR(again.msg, tries[0].err.msg);
    CHECK(floe_lazy_pq(NULL) == NULL);
    /* the load was tried: its soname is settled */
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_lazylib_soname_set("pq", "libpq.so.5", &err), FLOE_EBUSY);
}

/* libmicrohttpd pointed at a library that loads but is not it (libc): the first function
 * missing is named, and no table is published */
static void test_lacking_a_function(void) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_OK(floe_lazylib_soname_set("mhd", "libc.so.6", &err), err);
    floe_error_clear(&err);
    CHECK(floe_lazy_mhd(&err) == NULL);
    CHECK_EQ_INT(err.code, FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "libc.so.6 is needed for the HTTP servers (floe serve, floe catalog "
                          "serve) and lacks MHD_") != NULL);
    floe_error again;
    floe_error_clear(&again);
    CHECK(floe_lazy_mhd(&again) == NULL);
    CHECK_EQ_STR(again.msg, err.msg);
}

/* the build's own soname loads, and then cannot be changed */
static void test_built_soname_loads(void) {
    floe_error err;
    floe_error_clear(&err);
    const floe_lazy_curl_fns *t = floe_lazy_curl(&err);
    REQUIRE(t != NULL);
    CHECK(floe_lazy_curl_table() == t);
    CHECK(floe_lazy_curl(NULL) == t);
    CHECK_EQ_INT(floe_lazylib_soname_set("curl", MISSING, &err), FLOE_EBUSY);
    CHECK(floe_lazy_curl(NULL) == t);
}

static void test_soname_set_refuses(void) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_lazylib_soname_set("nosuch", MISSING, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "'nosuch'") != NULL);
    CHECK_EQ_INT(floe_lazylib_soname_set(NULL, MISSING, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_lazylib_soname_set("kafka", "", &err), FLOE_EINVALID);
    char big[400];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK_EQ_INT(floe_lazylib_soname_set("kafka", big, &err), FLOE_EINVALID);
    /* refused settings leave librdkafka as built */
    floe_error_clear(&err);
    CHECK(floe_lazy_kafka(&err) != NULL);
}

int main(void) {
    RUN(test_missing_same_error_everywhere);
    RUN(test_lacking_a_function);
    RUN(test_built_soname_loads);
    RUN(test_soname_set_refuses);
    return harness_finish();
}
