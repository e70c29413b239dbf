/*
 * test_lazylib.c - the loader of the libraries loaded when first needed
 * (src/common/lazylib.h): a load that fails returns an error (the process goes on), the
 * same error to every caller and every thread, and publishes no table; a library that
 * loads but lacks a function is a failure too; a soname cannot change once a load began.
 * Each library is loaded at most once per process, so each case takes its own library.
 * libsnappy, libcrypto and libicuuc (issue 22): their callers - the Snappy codec,
 * floe_sha256/floe_sha256_begin, floe_fold_name - return the loader's error.
 */
#include <pthread.h>
#include <string.h>

#include "harness.h"

#include "common/fold.h"
#include "common/lazy_crypto.h"
#include "common/lazy_curl.h"
#include "common/lazy_kafka.h"
#include "common/lazy_mhd.h"
#include "common/lazy_pq.h"
#include "common/lazy_snappy.h"
#include "floe/codec.h"

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

/* libsnappy missing: compressing and decompressing Snappy fail with its error, other
 * codecs work */
static void test_snappy_missing(void) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_OK(floe_lazylib_soname_set("snappy", MISSING, &err), err);
    static const uint8_t text[] = "snappy snappy snappy snappy";
    floe_buf out;
    floe_buf_init(&out, 1 << 20);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_codec_compress(NULL, FLOE_CODEC_SNAPPY, 0, text, sizeof text, &out, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, MISSING " is needed for Snappy compression (Parquet pages, Avro "
                          "blocks) and could not be loaded: ") != NULL);
    CHECK_EQ_INT((int)out.len, 0);
    /* a valid Snappy stream of 3 literal bytes: length 3, literal tag, "abc" */
    static const uint8_t stream[] = {3, 2 << 2, 'a', 'b', 'c'};
    uint8_t dst[3];
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_codec_decompress(NULL, FLOE_CODEC_SNAPPY, stream, sizeof stream, dst,
                                       sizeof dst, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, MISSING " is needed for Snappy compression") != NULL);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_codec_decompress_buf(NULL, FLOE_CODEC_SNAPPY, stream, sizeof stream, &out,
                                           &err),
                 FLOE_EUNSUPPORTED);
    CHECK(floe_lazy_snappy(NULL) == NULL);
    floe_error_clear(&err);
    CHECK_OK(floe_codec_compress(NULL, FLOE_CODEC_ZSTD, 0, text, sizeof text, &out, &err), err);
    floe_buf_free(&out);
}

/* libcrypto missing: floe_sha256 and floe_sha256_begin return its error */
static void test_crypto_missing(void) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_OK(floe_lazylib_soname_set("crypto", MISSING, &err), err);
    uint8_t d[32];
    memset(d, 0x5a, sizeof d);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_sha256("abc", 3, d, &err), FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, MISSING " is needed for SHA-256 and MD5 (S3 requests, long partition "
                          "values, copied files, idempotency keys) and could not be "
                          "loaded: ") != NULL);
    CHECK(d[0] == 0x5a && d[31] == 0x5a); /* untouched */
    floe_error_clear(&err);
    CHECK(floe_sha256_begin(&err) == NULL);
    CHECK_EQ_INT(err.code, FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, MISSING " is needed for SHA-256") != NULL);
    CHECK(floe_lazy_crypto(NULL) == NULL);
}

/* libicuuc missing (built with ICU): floe_fold_name fails rather than folding ASCII only;
 * built without ICU there is no "icu" library to set */
static void test_icu_missing(void) {
    floe_error err;
    floe_error_clear(&err);
    if (!floe_fold_unicode()) {
        CHECK_EQ_INT(floe_lazylib_soname_set("icu", MISSING, &err), FLOE_EINVALID);
        char *f = NULL;
        CHECK_OK(floe_fold_name("ABC", &f, &err), err);
        CHECK_EQ_STR(f, "abc");
        floe_free(f);
        return;
    }
    CHECK_OK(floe_lazylib_soname_set("icu", MISSING, &err), err);
    char unset[] = "unset", *f = unset;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_fold_name("Caf\xc3\xa9", &f, &err), FLOE_EUNSUPPORTED);
    CHECK(f == unset); /* untouched */
    CHECK(strstr(err.msg, MISSING " is needed for Unicode folding of table and namespace "
                          "folders (placing a table or namespace) and could not be "
                          "loaded: ") != NULL);
}

int main(void) {
    RUN(test_missing_same_error_everywhere);
    RUN(test_lacking_a_function);
    RUN(test_built_soname_loads);
    RUN(test_soname_set_refuses);
    RUN(test_snappy_missing);
    RUN(test_crypto_missing);
    RUN(test_icu_missing);
    return harness_finish();
}
