/*
 * s3_internal.h - the S3 FileIO backend (s3.c), its SigV4 signer (s3_sign.c), its XML
 * scanner (s3_xml.c) and its configuration (s3_config.c). Private to src/io and the tests.
 */
#ifndef FLOE_S3_INTERNAL_H
#define FLOE_S3_INTERNAL_H

#include "floe/io.h"

/* Split s3://bucket/key (also s3a, s3n) into bucket and key (key may be empty). Both are
 * allocated; the caller frees them. FLOE_EINVALID for a bad uri. */
int floe_s3_uri_parse(const char *uri, char **bucket, char **key, floe_error *err);

/* Where a request for bucket/key goes: base_url "scheme://host[:port]", the host header
 * value, and the raw (unencoded) path to sign and send. Path style ("/bucket/key") when the
 * configuration says so or the bucket name has a dot (TLS wildcard certificates do not
 * cover dotted names); else virtual-hosted ("bucket.host", "/key"). Without an endpoint,
 * https://s3.REGION.amazonaws.com. All three are allocated; the caller frees them. */
struct floe_s3_config;
int floe_s3_build_target(const struct floe_s3_config *cfg, const char *bucket,
                         const char *key, char **base_url, char **host, char **path,
                         floe_error *err);

/* floe_io_fetcher_new for an s3:// uri's context. */
int floe_s3_fetcher_new(floe_io *io, size_t inflight, floe_io_fetcher **out, floe_error *err);

/* ---------------------------------------------------------------------------------------
 * Configuration of a context's object storage, resolved from its floe_io_options.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_s3_config {
    char *access_key, *secret_key, *session_token; /* static or profile credentials */
    floe_io_credentials_fn credentials_fn;         /* else asked before each request */
    void *credentials_ctx;
    char *region;                                  /* never NULL */
    char *endpoint;     /* custom endpoint URL without trailing '/', or NULL for AWS */
    bool path_style;    /* https://host/bucket/key rather than https://bucket.host/key */
    bool anonymous;     /* send no signature */
    bool unsigned_payload; /* x-amz-content-sha256 unsigned */
    size_t part_size;   /* multipart part size; default 8 MiB, min 5 MiB */
    int max_attempts;   /* per request, default 10 */
    int64_t retry_budget_ms;  /* total time per request including retries, default 120 s */
    int64_t base_delay_ms;    /* first backoff cap, default 100 ms */
    int64_t max_delay_ms;     /* largest backoff cap, default 20 s */
    int64_t timeout_ms;       /* one attempt, default 300 s */
    int64_t connect_timeout_ms; /* default 10 s */
    int list_page_size;       /* max-keys per ListObjectsV2 page, default 1000 */
} floe_s3_config;

/* Resolve o (validated; profile credentials read from their files) into cfg. Frees with
 * floe_s3_config_free. FLOE_EINVALID names the bad setting. */
/* FLOE_EINVALID naming `what` (a variable or property name; never the value, a secret)
 * and the byte when value (NULL: fine) holds a control character (below 0x20, or 0x7f):
 * S3 credentials go into HTTP headers, where CR or LF would inject a header. */
int floe_s3_credential_check(const char *what, const char *value,
                             floe_error *err) FLOE_NODISCARD;
int floe_s3_config_from_options(const floe_io_options *o, floe_s3_config *cfg,
                                floe_error *err);
/* floe_io_options_from_env over the defaults, then floe_s3_config_from_options. */
int floe_s3_config_load(floe_s3_config *cfg, floe_io_lookup_fn lookup, void *lookup_ctx,
                        floe_error *err);
void floe_s3_config_free(floe_s3_config *cfg);

/* INI subset of ~/.aws/credentials and ~/.aws/config: returns the value of key in section
 * (e.g. "default", "profile dev"), or of a nested key ("s3" sub-section "addressing_style")
 * when sub is non-NULL. Allocated; NULL when absent. Lines longer than 4 KiB and files
 * larger than 1 MiB are ignored. */
char *floe_s3_ini_get(const char *text, size_t n, const char *section, const char *sub,
                      const char *key);

/* ---------------------------------------------------------------------------------------
 * AWS Signature Version 4.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_s3_kv {
    const char *name;
    const char *value;
} floe_s3_kv;

typedef struct floe_s3_sig_input {
    const char *method;            /* "GET" */
    const char *path;              /* raw (not encoded) absolute path: "/bucket/a b=1" */
    const floe_s3_kv *query;       /* raw names and values; value may be "" */
    size_t n_query;
    const floe_s3_kv *headers;     /* must hold host and x-amz-date; names any case */
    size_t n_headers;
    const char *payload_hash;      /* hex SHA-256 of the body or "UNSIGNED-PAYLOAD" */
    const char *amz_date;          /* "20150830T123600Z" */
    const char *region;
    const char *service;           /* "s3" */
    const char *access_key;
    const char *secret_key;
} floe_s3_sig_input;

typedef struct floe_s3_signed {
    char *canonical_path;    /* the encoded path, also what goes on the wire */
    char *canonical_query;   /* sorted and encoded, also what goes on the wire */
    char *canonical_request;
    char *string_to_sign;
    char *signed_headers;    /* "host;range;x-amz-content-sha256;x-amz-date" */
    char signature[65];
    char *authorization;     /* the Authorization header value */
} floe_s3_signed;

int floe_s3_sign(const floe_s3_sig_input *in, floe_s3_signed *out, floe_error *err);
void floe_s3_signed_free(floe_s3_signed *s);

/* Append s to b percent-encoded as SigV4 requires: everything but A-Z a-z 0-9 - . _ ~ as
 * %XX (upper-case hex), '/' kept when keep_slash. */
int floe_s3_uri_encode(floe_buf *b, const char *s, size_t n, bool keep_slash);
/* The hashes below call libcrypto: its table is loaded (floe_lazy_crypto(err)) first. */
void floe_s3_sha256(const void *p, size_t n, uint8_t out[32]);
void floe_s3_sha256_hex(const void *p, size_t n, char out[65]);
void floe_s3_hmac_sha256(const void *key, size_t key_len, const void *p, size_t n,
                         uint8_t out[32]);
/* Hex SHA-256 of no bytes: the payload hash of a request without a body. */
#define EMPTY_PAYLOAD_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* kSigning = HMAC chain over "AWS4"+secret, date (yyyymmdd), region, service,
 * "aws4_request". */
void floe_s3_signing_key(const char *secret, const char *date8, const char *region,
                         const char *service, uint8_t out[32]);
/* Base64 of the MD5 of p (the Content-MD5 header). out holds 25 bytes. */
void floe_s3_md5_base64(const void *p, size_t n, char out[25]);
void floe_s3_hex(const uint8_t *p, size_t n, char *out);
/* "YYYYMMDDTHHMMSSZ" for a wall-clock time in ms. */
void floe_s3_amz_date(int64_t wall_ms, char out[17]);

/* ---------------------------------------------------------------------------------------
 * XML: a small scanner for the S3 response bodies floe reads (ListBucketResult, Error,
 * InitiateMultipartUploadResult, CompleteMultipartUploadResult, DeleteResult). No DTDs,
 * no entity expansion beyond the five predefined entities and character references.
 * ------------------------------------------------------------------------------------- */
/* Called for each element that holds text only (a leaf): its parent's name, its name and
 * its decoded text (NUL-terminated, borrowed for the call). Also called with text NULL at
 * the end of every element that had children (so record-like elements can be closed).
 * Return non-zero to stop. */
typedef int (*floe_s3_xml_fn)(void *ctx, const char *parent, const char *name,
                              const char *text, size_t text_len);
/* FLOE_ECORRUPT for malformed XML (unbalanced tags, bad entities, too deep). */
int floe_s3_xml_scan(const char *p, size_t n, floe_s3_xml_fn fn, void *ctx, floe_error *err);

/* RFC 3339 / ISO 8601 timestamp ("2026-10-06T12:34:56.789Z", offsets allowed) to ms since
 * the epoch. FLOE_ECORRUPT when malformed. */
int floe_s3_parse_time(const char *s, int64_t *ms, floe_error *err);

#endif
