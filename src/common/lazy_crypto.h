/*
 * lazy_crypto.h - OpenSSL's libcrypto, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <openssl/evp.h> and <openssl/hmac.h>: the names below then
 * call through a table that floe_lazy_crypto(err) fills. libcrypto's loading and
 * relocation were ~3.5 ms and ~125 page faults of every command's start (issue 22),
 * though only S3 requests (signing, payload hashes, MD5 checksums), the SHA-256 of long
 * partition values, copied files' contents and the REST server's idempotency keys call
 * it. Entry points: floe_sha256 and floe_sha256_begin (common/util.c), s3_call and
 * DeleteObjects (io/s3.c), floe_rest_server_start.
 */
#ifndef FLOE_LAZY_CRYPTO_H
#define FLOE_LAZY_CRYPTO_H

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/lazylib.h"

#define FLOE_LAZY_CRYPTO_FNS(X) \
    X(EVP_Digest) \
    X(EVP_DigestFinal_ex) \
    X(EVP_DigestInit_ex) \
    X(EVP_DigestUpdate) \
    X(EVP_EncodeBlock) \
    X(EVP_MD_CTX_free) \
    X(EVP_MD_CTX_new) \
    X(EVP_md5) \
    X(EVP_sha256) \
    X(HMAC)

typedef struct floe_lazy_crypto_fns {
    FLOE_LAZY_CRYPTO_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_crypto_fns;

/* The table, libcrypto loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). */
const floe_lazy_crypto_fns *floe_lazy_crypto(floe_error *err);
/* The loaded table, for the names below (aborts as a bug when floe_lazy_crypto has not
 * loaded it: see common/lazylib.h). */
const floe_lazy_crypto_fns *floe_lazy_crypto_table(void);

#ifndef FLOE_LAZY_TABLES
#define EVP_Digest (floe_lazy_crypto_table()->EVP_Digest)
#define EVP_DigestFinal_ex (floe_lazy_crypto_table()->EVP_DigestFinal_ex)
#define EVP_DigestInit_ex (floe_lazy_crypto_table()->EVP_DigestInit_ex)
#define EVP_DigestUpdate (floe_lazy_crypto_table()->EVP_DigestUpdate)
#define EVP_EncodeBlock (floe_lazy_crypto_table()->EVP_EncodeBlock)
#define EVP_MD_CTX_free (floe_lazy_crypto_table()->EVP_MD_CTX_free)
#define EVP_MD_CTX_new (floe_lazy_crypto_table()->EVP_MD_CTX_new)
#define EVP_md5 (floe_lazy_crypto_table()->EVP_md5)
#define EVP_sha256 (floe_lazy_crypto_table()->EVP_sha256)
#define HMAC (floe_lazy_crypto_table()->HMAC)
#endif

#endif
