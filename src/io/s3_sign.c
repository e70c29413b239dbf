/*
 * s3_sign.c - AWS Signature Version 4 for S3 requests, written out step by step so each
 * step can be checked against the published test vectors (tests/unit/test_s3_sign.c).
 *
 * Steps (AWS "Create a signed AWS API request"):
 *   1. canonical request = method \n canonical URI \n canonical query \n canonical headers
 *      \n signed headers \n payload hash
 *   2. string to sign = "AWS4-HMAC-SHA256" \n amz-date \n scope \n hex(sha256(step 1))
 *   3. signing key = HMAC chain "AWS4"+secret -> date -> region -> service -> aws4_request
 *   4. signature = hex(HMAC(signing key, step 2))
 *
 * S3 specifics: the URI is encoded once (other services encode it twice) and is not
 * normalised ("a//b" and "a/./b" are distinct keys), so the path we sign is exactly the path
 * we send. Every byte outside the unreserved set A-Z a-z 0-9 - . _ ~ is %XX-encoded, which
 * matters for partition folders ("id_bucket=0", "ts_day=2026-10-06"), spaces ("%20", never
 * "+"), and UTF-8 keys (each byte encoded).
 *
 * SHA-256, HMAC and MD5 come from OpenSSL's libcrypto, loaded when first needed
 * (common/lazy_crypto.h): the hashing functions below call it, so their callers load it
 * first (floe_lazy_crypto(err): s3_call, delete_batch; floe_s3_sign does itself).
 */
#include <string.h>
#include <time.h>

#include "common/lazy_crypto.h"

#include "s3_internal.h"

#define MAX_SIGNED_HEADERS 32
#define MAX_QUERY_PARAMS 32

/* floe_buf calls return a bare code; give it a message on the way out. */
#define BUF_CHECK(expr)                                                                \
    do {                                                                               \
        rc = (expr);                                                                   \
        if (rc < 0)                                                                    \
            FLOE_FAIL(err, rc, "sigv4: cannot build the canonical request");           \
    } while (0)

static bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

int floe_s3_uri_encode(floe_buf *b, const char *s, size_t n, bool keep_slash) {
    static const char hex[] = "0123456789ABCDEF";
    FLOE_FORWARD_IF_ERROR(floe_buf_reserve(b, n * 3));
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            b->data[b->len++] = c;
        } else {
            b->data[b->len++] = '%';
            b->data[b->len++] = (uint8_t)hex[c >> 4];
            b->data[b->len++] = (uint8_t)hex[c & 15];
        }
    }
    b->data[b->len] = '\0';
    return 0;
}

void floe_s3_hex(const uint8_t *p, size_t n, char *out) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void floe_s3_sha256(const void *p, size_t n, uint8_t out[32]) {
    unsigned int len = 32;
    EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

void floe_s3_sha256_hex(const void *p, size_t n, char out[65]) {
    uint8_t d[32];
    floe_s3_sha256(p, n, d);
    floe_s3_hex(d, 32, out);
}

void floe_s3_hmac_sha256(const void *key, size_t key_len, const void *p, size_t n,
                         uint8_t out[32]) {
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)key_len, p, n, out, &len);
}

void floe_s3_signing_key(const char *secret, const char *date8, const char *region,
                         const char *service, uint8_t out[32]) {
    uint8_t k[32];
    size_t sl = strlen(secret);
    /* "AWS4" + secret: secrets are 40 characters; a longer one is hashed the same way
     * HMAC would hash any long key, so build it in a buffer of its own size. */
    char stack[128];
    char *first = sl + 5 <= sizeof stack ? stack : floe_malloc(sl + 5);
    if (!first) {
        memset(out, 0, 32); /* an unusable key: the server will refuse the request */
        return;
    }
    memcpy(first, "AWS4", 4);
    memcpy(first + 4, secret, sl);
    floe_s3_hmac_sha256(first, sl + 4, date8, strlen(date8), k);
    if (first != stack)
        floe_free(first);
    floe_s3_hmac_sha256(k, 32, region, strlen(region), k);
    floe_s3_hmac_sha256(k, 32, service, strlen(service), k);
    floe_s3_hmac_sha256(k, 32, "aws4_request", 12, out);
}

void floe_s3_md5_base64(const void *p, size_t n, char out[25]) {
    uint8_t d[16];
    unsigned int len = 16;
    EVP_Digest(p, n, d, &len, EVP_md5(), NULL);
    EVP_EncodeBlock((unsigned char *)out, d, 16);
}

void floe_s3_amz_date(int64_t wall_ms, char out[17]) {
    time_t t = (time_t)(wall_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* One header or query parameter in canonical form. */
typedef struct canon_item {
    char *name;
    char *value;
} canon_item;

static void canon_items_free(canon_item *it, size_t n) {
    for (size_t i = 0; i < n; i++) {
        floe_free(it[i].name);
        floe_free(it[i].value);
    }
}

/* Stable insertion sort by name, then value: the lists are short. */
static void canon_sort(canon_item *it, size_t n, bool by_value) {
    for (size_t i = 1; i < n; i++) {
        canon_item x = it[i];
        size_t j = i;
        while (j > 0) {
            int c = strcmp(it[j - 1].name, x.name);
            if (c == 0 && by_value)
                c = strcmp(it[j - 1].value, x.value);
            if (c <= 0)
                break;
            it[j] = it[j - 1];
            j--;
        }
        it[j] = x;
    }
}

/* Header value as SigV4 wants it: leading and trailing spaces removed, runs of spaces
 * inside collapsed to one. */
static char *canon_header_value(const char *v) {
    size_t n = strlen(v);
    char *out = floe_malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == ' ' || c == '\t') {
            space = o > 0;
            continue;
        }
        if (space)
            out[o++] = ' ';
        space = false;
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

static char *encode_dup(const char *s, bool keep_slash) {
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_s3_uri_encode(&b, s, strlen(s), keep_slash) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_detach(&b, NULL);
}

/* floe_s3_signing_key, remembered by the thread for the last secret, day, region and
 * service it derived: the key changes once a day, and its chain of four HMACs was ~half
 * of a request's signing (bench/plan: 10,000 GETs, ~0.1 s of the fetch thread's CPU).
 * Inputs too long for the cache's fields are derived every time. */
#define KEY_CACHE_SECRET 128
#define KEY_CACHE_NAME 64
static void cached_signing_key(const char *secret, const char *date8, const char *region,
                               const char *service, uint8_t out[32]) {
    static _Thread_local struct {
        bool valid;
        char secret[KEY_CACHE_SECRET], date8[9], region[KEY_CACHE_NAME],
            service[KEY_CACHE_NAME];
        uint8_t key[32];
    } c;
    size_t sl = strlen(secret), rl = strlen(region), vl = strlen(service);
    bool fits = sl < KEY_CACHE_SECRET && rl < KEY_CACHE_NAME && vl < KEY_CACHE_NAME &&
                strlen(date8) == 8;
    if (fits && c.valid && !strcmp(c.secret, secret) && !strcmp(c.date8, date8) &&
        !strcmp(c.region, region) && !strcmp(c.service, service)) {
        memcpy(out, c.key, 32);
        return;
    }
    floe_s3_signing_key(secret, date8, region, service, out);
    if (!fits)
        return;
    memcpy(c.secret, secret, sl + 1);
    memcpy(c.date8, date8, 9);
    memcpy(c.region, region, rl + 1);
    memcpy(c.service, service, vl + 1);
    memcpy(c.key, out, 32);
    c.valid = true;
}

int floe_s3_sign(const floe_s3_sig_input *in, floe_s3_signed *out, floe_error *err) {
    int rc = 0;
    canon_item headers[MAX_SIGNED_HEADERS];
    canon_item query[MAX_QUERY_PARAMS];
    size_t nh = 0, nq = 0;
    floe_s3_signed s;
    memset(&s, 0, sizeof s);
    floe_buf b, sh;
    floe_buf_init(&b, 0);
    floe_buf_init(&sh, 0);

    if (!floe_lazy_crypto(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    if (in->n_headers > MAX_SIGNED_HEADERS || in->n_query > MAX_QUERY_PARAMS)
        FLOE_FAIL(err, FLOE_ELIMIT, "sigv4: too many headers or query parameters");
    if (strlen(in->amz_date) != 16)
        FLOE_FAIL(err, FLOE_EINVALID, "sigv4: bad x-amz-date \"%s\"", in->amz_date);

    s.canonical_path = encode_dup(in->path[0] ? in->path : "/", true);
    if (!s.canonical_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    for (size_t i = 0; i < in->n_query; i++, nq++) {
        query[nq].name = encode_dup(in->query[i].name, false);
        query[nq].value = encode_dup(in->query[i].value ? in->query[i].value : "", false);
        if (!query[nq].name || !query[nq].value) {
            nq++;
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
    }
    canon_sort(query, nq, true);
    for (size_t i = 0; i < nq; i++)
        BUF_CHECK(floe_buf_printf(&b, "%s%s=%s", i ? "&" : "", query[i].name, query[i].value));
    s.canonical_query = floe_buf_detach(&b, NULL);
    floe_buf_init(&b, 0);
    if (!s.canonical_query)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    for (size_t i = 0; i < in->n_headers; i++, nh++) {
        const char *name = in->headers[i].name;
        size_t nl = strlen(name);
        headers[nh].name = floe_strdup(name);
        headers[nh].value = canon_header_value(in->headers[i].value);
        if (!headers[nh].name || !headers[nh].value) {
            nh++;
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        for (size_t k = 0; k < nl; k++)
            if (headers[nh].name[k] >= 'A' && headers[nh].name[k] <= 'Z')
                headers[nh].name[k] = (char)(headers[nh].name[k] - 'A' + 'a');
    }
    /* stable: repeated headers keep their order and are joined with ',' below */
    canon_sort(headers, nh, false);

    BUF_CHECK(floe_buf_printf(&b, "%s\n%s\n%s\n", in->method, s.canonical_path,
                               s.canonical_query));
    for (size_t i = 0; i < nh; i++) {
        bool repeat = i > 0 && !strcmp(headers[i - 1].name, headers[i].name);
        if (repeat) {
            b.len--; /* drop the '\n' of the previous line */
            rc = floe_buf_printf(&b, ",%s\n", headers[i].value);
        } else {
            rc = floe_buf_printf(&b, "%s:%s\n", headers[i].name, headers[i].value);
            if (rc == 0)
                rc = floe_buf_printf(&sh, "%s%s", sh.len ? ";" : "", headers[i].name);
        }
        if (rc < 0)
            FLOE_FAIL(err, rc, "out of memory");
    }
    s.signed_headers = floe_buf_detach(&sh, NULL);
    if (!s.signed_headers)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    BUF_CHECK(floe_buf_printf(&b, "\n%s\n%s", s.signed_headers, in->payload_hash));
    size_t creq_len = b.len;
    s.canonical_request = floe_buf_detach(&b, NULL);
    floe_buf_init(&b, 0);
    if (!s.canonical_request || !s.signed_headers)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    char date8[9];
    memcpy(date8, in->amz_date, 8);
    date8[8] = '\0';
    char creq_hash[65];
    floe_s3_sha256_hex(s.canonical_request, creq_len, creq_hash);
    s.string_to_sign = floe_asprintf("AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s",
                                     in->amz_date, date8, in->region, in->service, creq_hash);
    if (!s.string_to_sign)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    uint8_t key[32], sig[32];
    cached_signing_key(in->secret_key, date8, in->region, in->service, key);
    floe_s3_hmac_sha256(key, 32, s.string_to_sign, strlen(s.string_to_sign), sig);
    floe_s3_hex(sig, 32, s.signature);
    s.authorization = floe_asprintf(
        "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
        in->access_key, date8, in->region, in->service, s.signed_headers, s.signature);
    if (!s.authorization)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *out = s;
    memset(&s, 0, sizeof s);
done:
    canon_items_free(headers, nh);
    canon_items_free(query, nq);
    floe_buf_free(&b);
    floe_buf_free(&sh);
    floe_s3_signed_free(&s);
    return rc;
}

void floe_s3_signed_free(floe_s3_signed *s) {
    if (!s)
        return;
    floe_free(s->canonical_path);
    floe_free(s->canonical_query);
    floe_free(s->canonical_request);
    floe_free(s->string_to_sign);
    floe_free(s->signed_headers);
    floe_free(s->authorization);
    memset(s, 0, sizeof *s);
}
