/*
 * s3.c - the S3 FileIO backend: s3://bucket/key behind floe/io.h, over libcurl.
 *
 * Requests (S3 API names):
 *   input open        HeadObject for the size, then ranged GetObject ("Range: bytes=a-b")
 *                     per read, with a small read-ahead cache (Parquet reads the footer
 *                     first: a read near the end fetches the whole tail window)
 *   sequential open   (floe_input_open_sequential: Avro manifests and manifest lists, read
 *                     from their start) no HeadObject: one GetObject of the first
 *                     read-ahead window, whose Content-Range gives the size, so an object
 *                     up to that window costs one request (a 416 - an empty object - falls
 *                     back to HeadObject)
 *   output            buffered; at close one PutObject when the data fits in one part,
 *                     else CreateMultipartUpload + UploadPart per full part +
 *                     CompleteMultipartUpload at close (AbortMultipartUpload on failure or
 *                     abort). The object appears only when the PUT or the Complete
 *                     succeeds, so outputs are published atomically at close, as locally.
 *   no_overwrite      "If-None-Match: *" on the PutObject or CompleteMultipartUpload; 412 is
 *                     FLOE_EEXISTS (see "Retries" for when it is FLOE_EUNKNOWN_STATE)
 *   exists / delete   HeadObject / DeleteObject; delete_many: DeleteObjects, 1000 keys per
 *                     request
 *   list              ListObjectsV2 without a delimiter (recursive), page by page
 *
 * Settings: each request takes its endpoint, region, credentials and retry policy from
 * the I/O context (floe_io) it is made through, and counts in that context's stats.
 *
 * Connections: one process-wide curl share handle holds the connection cache, DNS and TLS
 * sessions; easy handles are pooled, so any thread reuses warm connections. The cache keeps
 * up to MAX_CONNECTIONS idle connections (libcurl's default, 5, closed every connection
 * past the fifth as its request ended: 16 manifest threads opened a new connection for
 * nearly every request). Connections
 * are matched by host and port and carry no credentials (every request is signed on its
 * own), so contexts with different settings share the cache safely.
 *
 * Retries: each request is retried with exponential backoff and full jitter (delay drawn
 * from [0, min(max, base * 2^attempt)], at least Retry-After when the server sends it) on
 * transport errors (refused, reset, timed out, truncated), 500/502/503/504/429 and the
 * throttling error codes, up to max_attempts and a total time budget. Every attempt is
 * signed afresh. Two steps are not blindly repeatable:
 *   - PutObject / CompleteMultipartUpload with If-None-Match: if an earlier attempt may
 *     have been applied (its response was lost or was a 5xx), a 412 on a later attempt may
 *     be our own object. That is reported as FLOE_EUNKNOWN_STATE, never FLOE_EEXISTS: the
 *     catalog's commit resolves it by reading what is there.
 *   - CompleteMultipartUpload: a retry that finds the upload gone (404 NoSuchUpload) after
 *     an ambiguous attempt checks the object's ETag against the one the parts imply; a
 *     match is success, anything else is FLOE_EUNKNOWN_STATE.
 *
 * Counters: every HTTP attempt counts once in its context's floe_io_stats (CreateMultipartUpload,
 * UploadPart and Complete as PUT, DeleteObjects and Abort as DELETE).
 */
#include "common/lazy_crypto.h"
#include "common/lazy_curl.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "io_internal.h"
#include "s3_internal.h"

#define MAX_PARTS 10000
#define READ_AHEAD ((size_t)256 << 10)
#define TAIL_WINDOW ((size_t)64 << 10)
#define MAX_XML_BODY ((size_t)32 << 20)
#define MAX_ERROR_BODY ((size_t)64 << 10)
#define MAX_LIST_ENTRIES 10000
#define POOL_MAX 64
#define MAX_CONNECTIONS 128 /* idle connections the shared cache keeps */
#define DELETE_BATCH 1000

/* ---------------------------------------------------------------------------------------
 * Connection reuse: one share handle, a pool of easy handles.
 * ------------------------------------------------------------------------------------- */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLSH *curl_share;
static pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool[POOL_MAX];
static int pool_n;
static bool curl_ok;

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u) {
    (void)h, (void)access, (void)u;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *u) {
    (void)h, (void)u;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&share_locks[data]);
}

static void curl_setup(void) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&share_locks[i], NULL);
    curl_share = curl_share_init();
    if (curl_share) {
        curl_share_setopt(curl_share, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(curl_share, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(curl_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
        curl_share_setopt(curl_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(curl_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
    curl_ok = true;
}

/* libcurl set up once for the process (libcurl loaded first). */
static int curl_ready(floe_error *err) {
    pthread_once(&curl_once, curl_setup);
    return curl_ok ? 0 : floe_error_set(err, FLOE_EIO, "cannot initialise libcurl");
}

/* An easy handle for one request (libcurl loaded: s3_call), libcurl set up: a pooled
 * handle reset or a new one. */
static int easy_acquire(CURL **out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(curl_ready(err));
    CURL *h = NULL;
    pthread_mutex_lock(&pool_lock);
    if (pool_n > 0)
        h = pool[--pool_n];
    pthread_mutex_unlock(&pool_lock);
    if (h)
        curl_easy_reset(h);
    else
        h = curl_easy_init();
    if (!h)
        return floe_error_set(err, FLOE_EIO, "libcurl: no easy handle");
    *out = h;
    return 0;
}

static void easy_release(CURL *h) {
    if (!h)
        return;
    pthread_mutex_lock(&pool_lock);
    if (pool_n < POOL_MAX) {
        pool[pool_n++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

/* ---------------------------------------------------------------------------------------
 * URIs.
 * ------------------------------------------------------------------------------------- */
int floe_s3_uri_parse(const char *uri, char **bucket, char **key, floe_error *err) {
    const char *p = strstr(uri, "://");
    if (!p || !floe_io_is_remote(uri))
        return floe_error_set(err, FLOE_EINVALID, "%s: not an s3:// uri", uri);
    p += 3;
    const char *slash = strchr(p, '/');
    size_t bl = slash ? (size_t)(slash - p) : strlen(p);
    if (bl < 1 || bl > 255)
        return floe_error_set(err, FLOE_EINVALID, "%s: missing or overlong bucket name", uri);
    for (size_t i = 0; i < bl; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            return floe_error_set(err, FLOE_EINVALID, "%s: bad character in bucket name", uri);
    }
    const char *k = slash ? slash + 1 : "";
    if (strlen(k) > 1024)
        return floe_error_set(err, FLOE_EINVALID, "%s: key longer than 1024 bytes", uri);
    char *b = floe_strndup(p, bl);
    char *kk = floe_strdup(k);
    if (!b || !kk) {
        floe_free(b);
        floe_free(kk);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    *bucket = b;
    *key = kk;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * One request, with retries.
 * ------------------------------------------------------------------------------------- */
typedef struct s3_req s3_req;
/* Check a 2xx body: 0 good, 1 bad but worth retrying (truncated), <0 error. */
typedef int (*s3_check_fn)(s3_req *r, floe_error *err);

struct s3_req {
    /* request */
    floe_io *io;
    const char *op;      /* "GET", "PutObject", ... for messages */
    const char *method;
    const char *bucket;
    const char *key;     /* raw key; "" for bucket-level requests */
    const char *scheme;  /* "s3" for messages */
    floe_s3_kv query[6];
    size_t n_query;
    floe_s3_kv hdr[6];   /* extra headers, signed and sent */
    size_t n_hdr;
    const uint8_t *body; /* PUT / POST body */
    size_t body_len;
    int kind;            /* FLOE_IO_* counter */
    uint8_t *dst;        /* ranged GET: exactly dst_len bytes expected here */
    size_t dst_len;
    bool window;         /* dst_len is room: the answer may end early at the object's end */
    int64_t range_off;   /* the range start, to skip when a server ignores Range */
    floe_buf *resp;      /* other 2xx bodies go here (bounded by its max) */
    s3_check_fn check;
    void *check_ctx;
    /* not safe to repeat unseen: use a new connection, because libcurl silently resends a
     * request whose reused connection turns out dead, and then the first send's fate is
     * unknown to us */
    bool fresh;
    /* per attempt */
    long status;
    size_t got;
    int64_t skip;
    bool overflow;
    floe_buf errbody;
    char etag[130];
    int64_t content_length;
    int64_t range_total;   /* the object's length, from a 206's Content-Range (-1: none) */
    int64_t retry_after_ms;
    char request_id[64];
    /* outcome */
    char code[64];
    char message[200];
    bool ambiguous;      /* an earlier attempt may have been applied */
    int attempts;
};

static void req_init(s3_req *r, floe_io *io, const char *op, const char *method,
                     const char *bucket, const char *key, int kind) {
    memset(r, 0, sizeof *r);
    r->io = io;
    r->op = op;
    r->method = method;
    r->bucket = bucket;
    r->key = key;
    r->kind = kind;
    r->scheme = "s3";
    floe_buf_init(&r->errbody, MAX_ERROR_BODY);
}

static void req_free(s3_req *r) { floe_buf_free(&r->errbody); }

static void req_query(s3_req *r, const char *name, const char *value) {
    r->query[r->n_query].name = name;
    r->query[r->n_query++].value = value;
}

static void req_header(s3_req *r, const char *name, const char *value) {
    r->hdr[r->n_hdr].name = name;
    r->hdr[r->n_hdr++].value = value;
}

static bool hdr_is(const char *line, size_t n, const char *name, const char **value,
                   size_t *vlen) {
    size_t nl = strlen(name);
    if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return false;
    const char *v = line + nl + 1;
    const char *e = line + n;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
        e--;
    *value = v;
    *vlen = (size_t)(e - v);
    return true;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *u) {
    s3_req *r = u;
    size_t n = size * nitems;
    const char *v;
    size_t vl;
    if (n >= 5 && !memcmp(line, "HTTP/", 5)) {
        /* a new response (also after "100 Continue"): forget the previous one's headers */
        const char *sp = memchr(line, ' ', n);
        r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        r->etag[0] = '\0';
        r->content_length = -1;
        r->range_total = -1;
        r->retry_after_ms = -1;
    } else if (hdr_is(line, n, "Content-Range", &v, &vl)) {
        /* "bytes a-b/TOTAL" (a "*" total: length unknown) */
        const char *slash = memchr(v, '/', vl);
        char tmp[24];
        size_t tl = slash ? vl - (size_t)(slash + 1 - v) : 0;
        if (tl > 0 && tl < sizeof tmp) {
            memcpy(tmp, slash + 1, tl);
            tmp[tl] = '\0';
            char *end;
            long long x = strtoll(tmp, &end, 10);
            if (*end == '\0' && x >= 0)
                r->range_total = x;
        }
    } else if (hdr_is(line, n, "ETag", &v, &vl)) {
        if (vl < sizeof r->etag) {
            memcpy(r->etag, v, vl);
            r->etag[vl] = '\0';
        }
    } else if (hdr_is(line, n, "Content-Length", &v, &vl)) {
        char tmp[24];
        if (vl > 0 && vl < sizeof tmp) {
            memcpy(tmp, v, vl);
            tmp[vl] = '\0';
            char *end;
            long long x = strtoll(tmp, &end, 10);
            if (*end == '\0' && x >= 0)
                r->content_length = x;
        }
    } else if (hdr_is(line, n, "Retry-After", &v, &vl)) {
        /* seconds only; an HTTP-date is rare from object stores and falls back to backoff */
        char tmp[16];
        if (vl > 0 && vl < sizeof tmp) {
            memcpy(tmp, v, vl);
            tmp[vl] = '\0';
            char *end;
            long s = strtol(tmp, &end, 10);
            if (*end == '\0' && s >= 0 && s <= 3600)
                r->retry_after_ms = (int64_t)s * 1000;
        }
    } else if (hdr_is(line, n, "x-amz-request-id", &v, &vl)) {
        if (vl < sizeof r->request_id) {
            memcpy(r->request_id, v, vl);
            r->request_id[vl] = '\0';
        }
    }
    return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *u) {
    s3_req *r = u;
    size_t n = size * nmemb;
    if (r->status < 200 || r->status >= 300) {
        size_t room = MAX_ERROR_BODY - r->errbody.len;
        floe_buf_append(&r->errbody, p, n < room ? n : room);
        return n;
    }
    if (r->dst) {
        size_t off = 0;
        /* a server that ignored Range answers 200 with the whole object */
        if (r->status == 200 && r->skip < r->range_off) {
            int64_t s = r->range_off - r->skip;
            off = (int64_t)n < s ? n : (size_t)s;
            r->skip += (int64_t)off;
        }
        size_t take = n - off;
        if (take > r->dst_len - r->got) {
            if (r->status == 200) /* the rest of the whole object: not needed */
                take = r->dst_len - r->got;
            else {
                r->overflow = true;
                return 0;
            }
        }
        memcpy(r->dst + r->got, p + off, take);
        r->got += take;
        return n;
    }
    if (r->resp) {
        if (floe_buf_append(r->resp, p, n) < 0) {
            r->overflow = true;
            return 0;
        }
    }
    r->got += n;
    return n;
}

static int on_seek(void *u, curl_off_t offset, int origin) {
    s3_req *r = u;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > r->body_len)
        return CURL_SEEKFUNC_FAIL;
    r->got = (size_t)offset;
    return CURL_SEEKFUNC_OK;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *u) {
    s3_req *r = u;
    size_t room = size * nitems, left = r->body_len - r->got;
    size_t n = left < room ? left : room;
    if (n)
        memcpy(buf, r->body + r->got, n);
    r->got += n;
    return n;
}

/* Leaf callback filling code/message from an <Error> body. */
static int error_leaf(void *ctx, const char *parent, const char *name, const char *text,
                      size_t len) {
    s3_req *r = ctx;
    if (!text || strcmp(parent, "Error"))
        return 0;
    if (!strcmp(name, "Code"))
        snprintf(r->code, sizeof r->code, "%.*s", (int)(len < 63 ? len : 63), text);
    else if (!strcmp(name, "Message"))
        snprintf(r->message, sizeof r->message, "%.*s", (int)(len < 199 ? len : 199), text);
    return 0;
}

static void parse_error_body(s3_req *r, const uint8_t *p, size_t n) {
    r->code[0] = r->message[0] = '\0';
    if (n > 0)
        (void)floe_s3_xml_scan((const char *)p, n, error_leaf, r, NULL);
}

static bool code_is_retryable(const char *code) {
    static const char *const codes[] = {
        "SlowDown", "RequestTimeout", "Throttling", "ThrottlingException",
        "RequestLimitExceeded", "InternalError", "ServiceUnavailable", "RequestTimeTooSkewed",
        "BandwidthLimitExceeded", "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "EC2ThrottledException", "PriorRequestNotComplete", "RequestThrottled",
        "ConditionalRequestConflict"};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (!strcmp(code, codes[i]))
            return true;
    return false;
}

static bool curl_is_retryable(CURLcode c) {
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_AGAIN:
    case CURLE_SEND_FAIL_REWIND:
        return true;
    default:
        return false;
    }
}

/* Did an attempt that ended this way possibly change the object? Only failures that
 * happened before the request reached the server, and throttling replies, are known not
 * to have. */
static bool attempt_maybe_applied(CURLcode c, long status, const char *code) {
    if (c != CURLE_OK)
        return c != CURLE_COULDNT_RESOLVE_HOST && c != CURLE_COULDNT_CONNECT &&
               c != CURLE_SSL_CONNECT_ERROR;
    if (status == 429 || (status == 503 && !strcmp(code, "SlowDown")))
        return false;
    return status >= 500;
}

/* Jitter source: splitmix64 per thread, seeded from the clock and the thread, so processes
 * and threads that failed together do not retry together. */
static uint64_t rng_next(void) {
    static _Thread_local uint64_t state;
    if (state == 0)
        state = (uint64_t)floe_now_ns() ^ ((uint64_t)(uintptr_t)&state << 16) ^
                (uint64_t)floe_wall_ms();
    state += UINT64_C(0x9E3779B97F4A7C15);
    uint64_t s = state;
    s = (s ^ (s >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    s = (s ^ (s >> 27)) * UINT64_C(0x94D049BB133111EB);
    return s ^ (s >> 31);
}

static void sleep_ms(int64_t ms) {
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int status_to_code(long status, const char *code) {
    if (status == 404)
        return FLOE_ENOTFOUND;
    if (status == 401 || status == 403)
        return FLOE_EAUTH;
    if (status == 412)
        return FLOE_EEXISTS;
    if (status == 409 && !strcmp(code, "ConditionalRequestConflict"))
        return FLOE_ECONFLICT;
    if (status == 413 || !strcmp(code, "EntityTooLarge"))
        return FLOE_ELIMIT;
    if (status == 400 || status == 405 || status == 411 || status == 416)
        return FLOE_EINVALID;
    return FLOE_EIO;
}

int floe_s3_build_target(const floe_s3_config *cfg, const char *bucket, const char *key,
                        char **base_url, char **host, char **path, floe_error *err) {
    bool path_style = cfg->path_style || strchr(bucket, '.') != NULL;
    char *endpoint = cfg->endpoint
                         ? floe_strdup(cfg->endpoint)
                         : floe_asprintf("https://s3.%s.amazonaws.com", cfg->region);
    if (!endpoint)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    const char *after = strstr(endpoint, "://") + 3;
    size_t scheme_len = (size_t)(after - endpoint);
    /* endpoint may carry a base path ("http://host:9000/s3"): it prefixes every key */
    const char *ps = strchr(after, '/');
    size_t auth_len = ps ? (size_t)(ps - after) : strlen(after);
    const char *base_path = ps ? ps : "";
    if (path_style) {
        *host = floe_strndup(after, auth_len);
        *path = floe_asprintf("%s/%s%s%s", base_path, bucket, key[0] ? "/" : "", key);
    } else {
        *host = floe_asprintf("%s.%.*s", bucket, (int)auth_len, after);
        *path = floe_asprintf("%s/%s", base_path, key);
    }
    *base_url = floe_asprintf("%.*s%s", (int)scheme_len, endpoint, *host ? *host : "");
    floe_free(endpoint);
    if (!*host || !*path || !*base_url) {
        floe_free(*host);
        floe_free(*path);
        floe_free(*base_url);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    return 0;
}

static void append_header(struct curl_slist **list, bool *ok, const char *fmt, ...)
    FLOE_PRINTF(3, 4);
static void append_header(struct curl_slist **list, bool *ok, const char *fmt, ...) {
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) {
        *ok = false;
        return;
    }
    struct curl_slist *l = curl_slist_append(*list, line);
    if (!l)
        *ok = false;
    else
        *list = l;
}

/* The signed request for one attempt: its url and headers (the caller frees both). */
static int req_prepare(const floe_s3_config *cfg, s3_req *r, const char *payload_hash,
                       char **url_out, struct curl_slist **headers_out, floe_error *err) {
    int rc = 0;
    floe_io_credentials vended = {NULL, NULL, NULL};
    const char *access_key = cfg->access_key, *secret_key = cfg->secret_key;
    const char *session_token = cfg->session_token;
    char *base_url = NULL, *host = NULL, *path = NULL, *url = NULL;
    struct curl_slist *headers = NULL;
    floe_s3_signed sig;
    memset(&sig, 0, sizeof sig);

    if (cfg->credentials_fn && !cfg->anonymous) {
        char *uri = floe_asprintf("%s://%s/%s", r->scheme, r->bucket, r->key);
        if (!uri)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        rc = cfg->credentials_fn(cfg->credentials_ctx, uri, &vended, err);
        floe_free(uri);
        if (rc < 0)
            goto done;
        if (!vended.access_key || !vended.secret_key)
            FLOE_FAIL(err, FLOE_EAUTH, "%s %s://%s/%s: the credentials callback returned no "
                      "keys", r->op, r->scheme, r->bucket, r->key);
        access_key = vended.access_key;
        secret_key = vended.secret_key;
        session_token = vended.session_token;
        /* a REST catalog's vended credentials come from its server's answer */
        rc = floe_s3_credential_check("the access key", access_key, err);
        if (rc == 0)
            rc = floe_s3_credential_check("the secret key", secret_key, err);
        if (rc == 0)
            rc = floe_s3_credential_check("the session token", session_token, err);
        if (rc < 0) {
            floe_error_prefix(err, "%s %s://%s/%s: the credentials callback's (vended "
                              "credentials): ", r->op, r->scheme, r->bucket, r->key);
            goto done;
        }
    }
    FLOE_CHECK(floe_s3_build_target(cfg, r->bucket, r->key, &base_url, &host, &path, err));
    char amz_date[17];
    floe_s3_amz_date(floe_wall_ms(), amz_date);

    floe_s3_kv hv[16];
    size_t nh = 0;
    hv[nh++] = (floe_s3_kv){"host", host};
    hv[nh++] = (floe_s3_kv){"x-amz-content-sha256", payload_hash};
    hv[nh++] = (floe_s3_kv){"x-amz-date", amz_date};
    if (session_token && !cfg->anonymous)
        hv[nh++] = (floe_s3_kv){"x-amz-security-token", session_token};
    for (size_t i = 0; i < r->n_hdr; i++)
        hv[nh++] = r->hdr[i];
    floe_s3_sig_input si = {r->method, path, r->query, r->n_query, hv, nh, payload_hash,
                            amz_date, cfg->region, "s3", access_key ? access_key : "",
                            secret_key ? secret_key : ""};
    FLOE_CHECK(floe_s3_sign(&si, &sig, err));

    url = floe_asprintf("%s%s%s%s", base_url, sig.canonical_path,
                        sig.canonical_query[0] ? "?" : "", sig.canonical_query);
    if (!url)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    bool ok = true;
    for (size_t i = 0; i < nh; i++)
        append_header(&headers, &ok, "%s: %s", hv[i].name, hv[i].value);
    if (!cfg->anonymous)
        append_header(&headers, &ok, "Authorization: %s", sig.authorization);
    append_header(&headers, &ok, "Expect:");
    bool has_type = false;
    for (size_t i = 0; i < r->n_hdr; i++)
        has_type |= !strcasecmp(r->hdr[i].name, "content-type");
    if (!has_type && !strcmp(r->method, "POST"))
        append_header(&headers, &ok, "Content-Type:"); /* no form type added by curl */
    if (!ok)
        FLOE_FAIL(err, FLOE_ENOMEM, "%s s3://%s/%s: cannot build the request headers", r->op,
                  r->bucket, r->key);
    *url_out = url;
    *headers_out = headers;
    url = NULL;
    headers = NULL;
done:
    curl_slist_free_all(headers);
    floe_s3_signed_free(&sig);
    floe_free(base_url);
    floe_free(host);
    floe_free(path);
    floe_free(url);
    floe_free(vended.access_key);
    floe_free(vended.secret_key);
    floe_free(vended.session_token);
    return rc;
}

/* The easy handle's options for request r (url and headers from req_prepare), and r's
 * per-attempt state cleared. */
static void req_setup(CURL *h, const floe_s3_config *cfg, s3_req *r, const char *url,
                      struct curl_slist *headers) {
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (curl_share)
        curl_easy_setopt(h, CURLOPT_SHARE, curl_share);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L); /* S3 keys are not paths: no "/../" folding */
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    /* the share's cache holds this many idle connections (see "Connections") */
    curl_easy_setopt(h, CURLOPT_MAXCONNECTS, (long)MAX_CONNECTIONS);
    if (r->fresh)
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    if (!strcmp(r->method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (!strcmp(r->method, "PUT")) {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, r);
        curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
        curl_easy_setopt(h, CURLOPT_SEEKDATA, r);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
    } else if (!strcmp(r->method, "POST")) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "GET")) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
    }

    r->status = 0;
    r->got = 0;
    r->skip = 0;
    r->overflow = false;
    r->etag[0] = '\0';
    r->content_length = -1;
    r->range_total = -1;
    r->retry_after_ms = -1;
    r->request_id[0] = '\0';
    floe_buf_reset(&r->errbody);
    if (r->resp)
        floe_buf_reset(r->resp);
}

/* One attempt. Returns the CURLcode; r->status etc. describe the response. A negative
 * floe code means the attempt could not even be built (not retryable). */
static int attempt_once(const floe_s3_config *cfg, s3_req *r, const char *payload_hash,
                        CURLcode *cc, floe_error *err) {
    char *url = NULL;
    struct curl_slist *headers = NULL;
    CURL *h = NULL;
    int rc = req_prepare(cfg, r, payload_hash, &url, &headers, err);
    if (rc == 0)
        rc = easy_acquire(&h, err);
    if (rc < 0)
        goto done;
    req_setup(h, cfg, r, url, headers);
    *cc = curl_easy_perform(h);
    if (*cc == CURLE_OK) {
        long st = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        r->status = st;
    }
    bool upload = !strcmp(r->method, "PUT") || !strcmp(r->method, "POST");
    floe_io_count(r->io, r->kind, upload ? (int64_t)r->body_len
                                  : (r->status >= 200 && r->status < 300 ? (int64_t)r->got : 0));
done:
    if (h) {
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        easy_release(h);
    }
    curl_slist_free_all(headers);
    floe_free(url);
    return rc;
}

/* The object's length as a 2xx answer to a GET tells it: a 206's Content-Range total, a
 * 200's Content-Length (a server that ignored Range sends the whole object); -1 unknown. */
static int64_t object_length(const s3_req *r) {
    return r->status == 206 ? r->range_total : r->status == 200 ? r->content_length : -1;
}

/* The body length a ranged GET must get: dst_len, or for a window what is left of the
 * object from the range's start (-1: unknown, so nothing is right). */
static int64_t expected_body(const s3_req *r) {
    if (!r->window)
        return (int64_t)r->dst_len;
    int64_t total = object_length(r);
    if (total < 0)
        return -1;
    int64_t left = total > r->range_off ? total - r->range_off : 0;
    return left < (int64_t)r->dst_len ? left : (int64_t)r->dst_len;
}

/* Requests of cfg cannot be signed: not anonymous, and neither a credentials callback nor
 * a key pair. */
static bool no_credentials(const floe_s3_config *cfg) {
    return !cfg->anonymous && !cfg->credentials_fn && (!cfg->access_key || !cfg->secret_key);
}

static int s3_call(s3_req *r, floe_error *err) {
    const floe_s3_config *cfg = &r->io->s3;
    /* libcurl and libcrypto (signing, payload hashes) first: every request of the
     * backend comes through here */
    if (!floe_lazy_curl(err) || !floe_lazy_crypto(err)) {
        floe_error_prefix(err, "%s %s://%s/%s: ", r->op, r->scheme, r->bucket, r->key);
        return err ? err->code : FLOE_EUNSUPPORTED;
    }
    if (no_credentials(cfg))
        return floe_error_set(err, FLOE_EAUTH,
                              "%s://%s/%s: no AWS credentials (set AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials; "
                              "FLOE_S3_ANONYMOUS=1 for public buckets)",
                              r->scheme, r->bucket, r->key);
    char payload_hash[65];
    if (r->body_len > 0 && cfg->unsigned_payload)
        snprintf(payload_hash, sizeof payload_hash, "UNSIGNED-PAYLOAD");
    else if (r->body_len == 0)
        memcpy(payload_hash, EMPTY_PAYLOAD_SHA256, sizeof payload_hash);
    else
        floe_s3_sha256_hex(r->body, r->body_len, payload_hash);

    int64_t start = floe_now_ns();
    int64_t budget_ns = cfg->retry_budget_ms * 1000000;
    char last[400] = "";
    int last_code = FLOE_EIO, last_sys = 0;
    for (int attempt = 1;; attempt++) {
        r->attempts = attempt;
        CURLcode cc = CURLE_OK;
        FLOE_FORWARD_IF_ERROR(attempt_once(cfg, r, payload_hash, &cc, err));
        bool retry = false;
        r->code[0] = r->message[0] = '\0';
        if (cc != CURLE_OK) {
            if (r->overflow && r->resp)
                return floe_error_sys(err, FLOE_ELIMIT, (int)cc,
                                      "%s %s://%s/%s: response larger than %zu bytes", r->op,
                                      r->scheme, r->bucket, r->key, r->resp->max);
            retry = curl_is_retryable(cc) || r->overflow;
            snprintf(last, sizeof last, "%s", r->overflow ? "response longer than the range"
                                                          : curl_easy_strerror(cc));
            last_code = cc == CURLE_OPERATION_TIMEDOUT ? FLOE_ETIMEOUT : FLOE_EIO;
            last_sys = (int)cc;
        } else if (r->status >= 200 && r->status < 300) {
            int bad = 0;
            if (r->dst && (int64_t)r->got != expected_body(r))
                bad = 1;
            else if (r->check)
                bad = r->check(r, err);
            if (bad < 0)
                return bad;
            if (bad == 0)
                return 0;
            retry = true;
            snprintf(last, sizeof last, "HTTP %ld with a truncated or malformed body",
                     r->status);
            last_code = FLOE_EIO;
            last_sys = (int)r->status;
        } else {
            parse_error_body(r, r->errbody.data, r->errbody.len);
            if (!r->code[0] && r->status == 404)
                snprintf(r->code, sizeof r->code, "NotFound");
            if (!r->code[0] && r->status == 403) /* a HEAD's answer has no body */
                snprintf(r->code, sizeof r->code, "AccessDenied");
            retry = r->status == 500 || r->status == 502 || r->status == 503 ||
                    r->status == 504 || r->status == 429 || code_is_retryable(r->code);
            /* keys a catalog vended are named as such: the catalog is where to look */
            snprintf(last, sizeof last, "HTTP %ld%s%s%s%s%s", r->status, r->code[0] ? " " : "",
                     r->code, r->message[0] ? ": " : "", r->message,
                     r->status == 403 && cfg->credentials_fn
                         ? " (signed with the keys of the credentials callback: those the "
                           "catalog vended)"
                         : "");
            last_code = status_to_code(r->status, r->code);
            last_sys = (int)r->status;
        }
        if (!retry)
            break;
        /* ambiguity is about earlier attempts: decide it after classifying this one */
        bool applied = attempt_maybe_applied(cc, r->status, r->code);
        int64_t cap = cfg->base_delay_ms << (attempt < 20 ? attempt - 1 : 20);
        if (cap > cfg->max_delay_ms || cap < 0)
            cap = cfg->max_delay_ms;
        int64_t delay = cap > 0 ? (int64_t)(rng_next() % (uint64_t)(cap + 1)) : 0;
        if (r->retry_after_ms > delay)
            delay = r->retry_after_ms;
        int64_t elapsed = floe_now_ns() - start;
        if (attempt >= cfg->max_attempts || elapsed + delay * 1000000 > budget_ns) {
            if (applied)
                r->ambiguous = true;
            break;
        }
        if (applied)
            r->ambiguous = true;
        floe_log(FLOE_LOG_DEBUG, "s3: %s s3://%s/%s: %s; retry %d in %lld ms", r->op,
                 r->bucket, r->key, last, attempt, (long long)delay);
        sleep_ms(delay);
    }
    return floe_error_sys(err, last_code, last_sys, "%s %s://%s/%s: %s%s%s (%d attempt%s)",
                          r->op, r->scheme, r->bucket, r->key, last,
                          r->request_id[0] ? ", request id " : "", r->request_id, r->attempts,
                          r->attempts == 1 ? "" : "s");
}

/* ---------------------------------------------------------------------------------------
 * Inputs.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_s3_input floe_s3_input;
typedef struct floe_s3_output floe_s3_output;

struct floe_s3_input {
    floe_io *io;
    char *uri, *bucket, *key;
    int64_t size;
    uint8_t *cache;
    int64_t cache_off;
    size_t cache_len;
};

static const char *uri_scheme(const char *uri) {
    return !strncmp(uri, "s3a://", 6) ? "s3a" : !strncmp(uri, "s3n://", 6) ? "s3n" : "s3";
}

static void s3_input_close(void *vin);

/* GET of the first window: the size from the answer, the bytes kept as the read-ahead
 * cache. 1: the object is empty (416), so the caller asks with HEAD. */
static int first_window(floe_s3_input *in, floe_error *err) {
    in->cache = floe_malloc(READ_AHEAD + TAIL_WINDOW);
    if (!in->cache)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    char range[64];
    snprintf(range, sizeof range, "bytes=0-%zu", READ_AHEAD - 1);
    s3_req r;
    req_init(&r, in->io, "GET", "GET", in->bucket, in->key, FLOE_IO_GET);
    r.scheme = uri_scheme(in->uri);
    req_header(&r, "range", range);
    r.dst = in->cache;
    r.dst_len = READ_AHEAD;
    r.window = true;
    floe_error e2;
    floe_error_clear(&e2);
    int rc = s3_call(&r, &e2);
    if (rc == 0) {
        in->size = object_length(&r);
        in->cache_off = 0;
        in->cache_len = r.got;
    } else if (r.status == 416) {
        rc = 1;
    } else if (err) {
        *err = e2;
    }
    req_free(&r);
    return rc;
}

/* HEAD (sequential: a GET of the first window, HEAD only for an empty object). */
static int input_open(floe_io *io, const char *uri, bool sequential, void **out,
                      floe_error *err) {
    int rc = 0;
    s3_req r;
    floe_s3_input *in = floe_calloc(1, sizeof *in);
    if (!in)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    in->io = io;
    req_init(&r, io, "HEAD", "HEAD", NULL, NULL, FLOE_IO_HEAD);
    FLOE_CHECK(floe_s3_uri_parse(uri, &in->bucket, &in->key, err));
    in->uri = floe_strdup(uri);
    if (!in->uri)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!in->key[0])
        FLOE_FAIL(err, FLOE_EINVALID, "%s: names a bucket, not an object", uri);
    if (sequential) {
        FLOE_CHECK(first_window(in, err));
        if (rc == 0)
            goto opened;
        rc = 0;
    }
    r.bucket = in->bucket;
    r.key = in->key;
    r.scheme = uri_scheme(uri);
    FLOE_CHECK(s3_call(&r, err));
    if (r.content_length < 0)
        FLOE_FAIL(err, FLOE_EIO, "%s: HEAD returned no Content-Length", uri);
    in->size = r.content_length;
opened:
    *out = in;
    in = NULL;
done:
    req_free(&r);
    s3_input_close(in);
    return rc;
}

static int s3_input_open(floe_io *io, const char *uri, void **out, floe_error *err) {
    return input_open(io, uri, false, out, err);
}

static int s3_input_open_sequential(floe_io *io, const char *uri, void **out,
                                    floe_error *err) {
    return input_open(io, uri, true, out, err);
}

static int64_t s3_input_size(const void *vin) {
    const floe_s3_input *in = vin;
    return in->size;
}

static const char *s3_input_uri(const void *vin) {
    const floe_s3_input *in = vin;
    return in->uri;
}

/* GET bytes [off, off+n) into dst. */
static int ranged_get(floe_s3_input *in, int64_t off, uint8_t *dst, size_t n,
                      floe_error *err) {
    char range[64];
    snprintf(range, sizeof range, "bytes=%lld-%lld", (long long)off,
             (long long)(off + (int64_t)n - 1));
    s3_req r;
    req_init(&r, in->io, "GET", "GET", in->bucket, in->key, FLOE_IO_GET);
    r.scheme = uri_scheme(in->uri);
    req_header(&r, "range", range);
    r.dst = dst;
    r.dst_len = n;
    r.range_off = off;
    int rc = s3_call(&r, err);
    req_free(&r);
    return rc;
}

static int s3_input_read_at(void *vin, int64_t off, void *buf, size_t n, floe_error *err) {
    floe_s3_input *in = vin;
    if (off < 0 || off > in->size || (int64_t)n > in->size - off)
        return floe_error_at(err, FLOE_ECORRUPT, off,
                             "%s: unexpected end of file (read of %zu bytes at offset %lld, "
                             "file has %lld)",
                             in->uri, n, (long long)off, (long long)in->size);
    if (n == 0)
        return 0;
    if (in->cache && off >= in->cache_off &&
        off + (int64_t)n <= in->cache_off + (int64_t)in->cache_len) {
        memcpy(buf, in->cache + (off - in->cache_off), n);
        return 0;
    }
    if (n >= READ_AHEAD) {
        /* a large read starting in the cached window (a sequential open's first GET):
         * the cached bytes, then one ranged GET of the rest */
        if (in->cache && off >= in->cache_off &&
            off < in->cache_off + (int64_t)in->cache_len) {
            size_t have = (size_t)(in->cache_off + (int64_t)in->cache_len - off);
            memcpy(buf, in->cache + (off - in->cache_off), have);
            return ranged_get(in, off + (int64_t)have, (uint8_t *)buf + have, n - have, err);
        }
        return ranged_get(in, off, buf, n, err);
    }
    /* small read: fetch a window around it. Near the end (the Parquet footer and its
     * length) take the whole tail so the footer comes in one request. */
    int64_t start = off, end = off + (int64_t)READ_AHEAD;
    if (off + (int64_t)n > in->size - (int64_t)TAIL_WINDOW) {
        start = in->size - (int64_t)TAIL_WINDOW;
        if (start > off)
            start = off;
        if (start < 0)
            start = 0;
        end = in->size;
    }
    if (end > in->size)
        end = in->size;
    size_t len = (size_t)(end - start);
    if (!in->cache) {
        /* the longest window: a tail window extended back to a read just before it */
        in->cache = floe_malloc(READ_AHEAD + TAIL_WINDOW);
        if (!in->cache)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    in->cache_len = 0;
    int rc = ranged_get(in, start, in->cache, len, err);
    if (rc < 0)
        return rc;
    in->cache_off = start;
    in->cache_len = len;
    memcpy(buf, in->cache + (off - start), n);
    return 0;
}

static void s3_input_close(void *vin) {
    floe_s3_input *in = vin;
    if (!in)
        return;
    floe_free(in->uri);
    floe_free(in->bucket);
    floe_free(in->key);
    floe_free(in->cache);
    floe_free(in);
}

/* ---------------------------------------------------------------------------------------
 * Fetchers: whole objects, many GETs in flight on one thread (floe_io_fetcher in io.h).
 * Each transfer is one attempt of the same signed GET s3_call makes; whatever is not a
 * 200 with the whole body goes back as not fetched, for the caller's ordinary read (its
 * retries, its errors). One thread waiting on all the sockets replaces a blocked thread
 * per request (bench/plan: 32 threads, their futex and poll work, ~30% of the plan's CPU).
 *
 * Event-driven: libcurl tells which sockets to watch (CURLMOPT_SOCKETFUNCTION); the thread
 * waits in epoll_wait on those sockets and an eventfd (floe_io_fetch_wakeup) until
 * libcurl's next timeout (curl_multi_timeout), and hands libcurl only the sockets that
 * are ready, or the timeout (curl_multi_socket_action). curl_multi_perform and
 * curl_multi_poll visited every transfer at each wake-up, with a poll(2) over all 64
 * sockets and one more per transfer: bench/plan's 10,006 GETs made 184,000 poll calls.
 * ------------------------------------------------------------------------------------- */
typedef struct fetch_xfer {
    s3_req r;
    void *tag;
    char *uri, *bucket, *key, *url;
    size_t max;
    struct curl_slist *headers;
    floe_buf body;
    CURL *h;
    struct fetch_xfer *next;       /* the queue of transfers not started */
    struct fetch_xfer *aprev, *anext; /* the transfers in the multi */
} fetch_xfer;

struct floe_io_fetcher {
    floe_io *io;
    CURLM *m;
    int ep, wake;                  /* epoll instance; eventfd floe_io_fetch_wakeup writes */
    bool sock_failed;              /* a socket could not be watched: fail what is left */
    size_t inflight, running;      /* the limit; transfers added to m */
    fetch_xfer *head, *tail;       /* not started yet, in order */
    size_t pending;                /* added and not returned */
    fetch_xfer *failed;            /* could not start: returned first, not fetched */
    fetch_xfer *active;            /* in the multi */
    CURL *spare[8];                /* easy handles of ended transfers, for reuse */
    size_t nspare;
};

/* CURLMOPT_SOCKETFUNCTION: watch s for what libcurl waits on, or stop watching it. */
static int fetch_sock_cb(CURL *e, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)e;
    (void)socketp;
    floe_io_fetcher *f = userp;
    if (what == CURL_POLL_REMOVE) {
        /* a socket already closed has left the epoll set by itself */
        epoll_ctl(f->ep, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
                                       (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
                             .data.fd = s};
    if (epoll_ctl(f->ep, EPOLL_CTL_MOD, s, &ev) < 0 &&
        (errno != ENOENT || epoll_ctl(f->ep, EPOLL_CTL_ADD, s, &ev) < 0))
        f->sock_failed = true;
    return 0;
}

int floe_s3_fetcher_new(floe_io *io, size_t inflight, floe_io_fetcher **out, floe_error *err) {
    if (!floe_lazy_curl(err) || !floe_lazy_crypto(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    FLOE_FORWARD_IF_ERROR(curl_ready(err));
    floe_io_fetcher *f = floe_calloc(1, sizeof *f);
    if (!f)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    f->io = io;
    f->inflight = inflight;
    f->ep = epoll_create1(EPOLL_CLOEXEC);
    f->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = f->wake};
    if (f->ep < 0 || f->wake < 0 || epoll_ctl(f->ep, EPOLL_CTL_ADD, f->wake, &ev) < 0) {
        int e = errno;
        if (f->ep >= 0)
            close(f->ep);
        if (f->wake >= 0)
            close(f->wake);
        floe_free(f);
        return floe_error_sys(err, FLOE_EIO, e, "fetcher: epoll");
    }
    if (!(f->m = curl_multi_init())) {
        close(f->ep);
        close(f->wake);
        floe_free(f);
        return floe_error_set(err, FLOE_EIO, "libcurl: no multi handle");
    }
    /* the connections it keeps idle in the shared cache: by default 4 per transfer in the
     * multi at that moment, so with few left in flight it closed the rest (231 connections
     * for bench/plan's 10,006 requests) */
    curl_multi_setopt(f->m, CURLMOPT_MAXCONNECTS, (long)MAX_CONNECTIONS);
    curl_multi_setopt(f->m, CURLMOPT_SOCKETFUNCTION, fetch_sock_cb);
    curl_multi_setopt(f->m, CURLMOPT_SOCKETDATA, f);
    *out = f;
    return 0;
}

static void xfer_free(floe_io_fetcher *f, fetch_xfer *x) {
    if (!x)
        return;
    if (x->h) {
        curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, NULL);
        if (f->nspare < sizeof f->spare / sizeof *f->spare) {
            curl_easy_reset(x->h);
            f->spare[f->nspare++] = x->h;
        } else {
            curl_easy_cleanup(x->h);
        }
    }
    curl_slist_free_all(x->headers);
    req_free(&x->r);
    floe_buf_free(&x->body);
    floe_free(x->uri);
    floe_free(x->bucket);
    floe_free(x->key);
    floe_free(x->url);
    floe_free(x);
}

int floe_io_fetch_add(floe_io_fetcher *f, const char *uri, size_t max, void *tag,
                      floe_error *err) {
    fetch_xfer *x = floe_calloc(1, sizeof *x);
    if (!x || !(x->uri = floe_strdup(uri))) {
        floe_free(x);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    x->tag = tag;
    x->max = max;
    floe_buf_init(&x->body, max);
    if (f->tail)
        f->tail->next = x;
    else
        f->head = x;
    f->tail = x;
    f->pending++;
    return 0;
}

size_t floe_io_fetch_pending(const floe_io_fetcher *f) { return f->pending; }

/* Start x (signed GET on an easy handle in the multi): false when it cannot start. */
static bool xfer_start(floe_io_fetcher *f, fetch_xfer *x) {
    const floe_s3_config *cfg = &f->io->s3;
    if (f->sock_failed || x->max == 0 || floe_s3_uri_parse(x->uri, &x->bucket, &x->key, NULL) < 0 ||
        !x->key[0] || no_credentials(cfg))
        return false;
    req_init(&x->r, f->io, "GET", "GET", x->bucket, x->key, FLOE_IO_GET);
    x->r.scheme = uri_scheme(x->uri);
    x->r.resp = &x->body;
    /* room for max at once: the caller's max is the length it expects (a manifest's, as
     * its list records it), so the body lands without a copy and a larger one fails */
    if (floe_buf_reserve(&x->body, x->max) < 0)
        return false;
    if (req_prepare(cfg, &x->r, EMPTY_PAYLOAD_SHA256, &x->url, &x->headers, NULL) < 0)
        return false;
    x->h = f->nspare ? f->spare[--f->nspare] : curl_easy_init();
    if (!x->h)
        return false;
    req_setup(x->h, cfg, &x->r, x->url, x->headers);
    curl_easy_setopt(x->h, CURLOPT_PRIVATE, (char *)x);
    if (curl_multi_add_handle(f->m, x->h) != CURLM_OK)
        return false;
    f->running++;
    x->anext = f->active;
    if (f->active)
        f->active->aprev = x;
    f->active = x;
    return true;
}

/* Start queued transfers up to the limit; those that cannot start go to failed. */
static void fetch_fill(floe_io_fetcher *f) {
    while (f->head && f->running < f->inflight) {
        fetch_xfer *x = f->head;
        f->head = x->next;
        if (!f->head)
            f->tail = NULL;
        x->next = NULL;
        if (!xfer_start(f, x)) {
            x->next = f->failed;
            f->failed = x;
        }
    }
}

static void fetch_return(floe_io_fetcher *f, fetch_xfer *x, bool ok, floe_io_fetched *out) {
    out->tag = x->tag;
    out->ok = ok;
    out->data = NULL;
    out->len = 0;
    if (ok) {
        out->data = x->body.data;
        out->len = x->body.len;
        x->body.data = NULL;
        x->body.len = x->body.cap = 0;
    }
    f->pending--;
    xfer_free(f, x);
}

static void active_unlink(floe_io_fetcher *f, fetch_xfer *x) {
    if (x->aprev)
        x->aprev->anext = x->anext;
    else
        f->active = x->anext;
    if (x->anext)
        x->anext->aprev = x->aprev;
    x->aprev = x->anext = NULL;
}

/* A finished transfer from the multi's messages: 1 and *out, or 0. */
static int fetch_done(floe_io_fetcher *f, floe_io_fetched *out) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(f->m, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        fetch_xfer *x = (fetch_xfer *)priv;
        CURLcode cc = msg->data.result;
        long st = 0;
        if (cc == CURLE_OK)
            curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &st);
        x->r.status = st;
        curl_multi_remove_handle(f->m, x->h);
        f->running--;
        active_unlink(f, x);
        bool ok = cc == CURLE_OK && st == 200 && !x->r.overflow &&
                  !floe_buf_error(&x->body) &&
                  (x->r.content_length < 0 || (int64_t)x->body.len == x->r.content_length);
        floe_io_count(f->io, FLOE_IO_GET, st >= 200 && st < 300 ? (int64_t)x->r.got : 0);
        fetch_return(f, x, ok, out);
        return 1;
    }
    return 0;
}

/* A transfer in the multi that has not ended, to fail when its socket cannot be watched
 * (it would wait for nothing): removed and returned as not fetched. */
static int fetch_fail_one(floe_io_fetcher *f, floe_io_fetched *out) {
    fetch_xfer *x = f->active;
    if (!x)
        return 0;
    curl_multi_remove_handle(f->m, x->h);
    f->running--;
    active_unlink(f, x);
    fetch_return(f, x, false, out);
    return 1;
}

/* libcurl's next timeout in ms (0: due now; -1: none). Asked each time rather than kept
 * from CURLMOPT_TIMERFUNCTION, which is called only when the time changes. */
static long fetch_due(floe_io_fetcher *f) {
    long ms = -1;
    if (curl_multi_timeout(f->m, &ms) != CURLM_OK)
        ms = 0;
    return ms;
}

int floe_io_fetch_next(floe_io_fetcher *f, int wait_ms, floe_io_fetched *out) {
    fetch_fill(f);
    if (f->failed) {
        fetch_xfer *x = f->failed;
        f->failed = x->next;
        fetch_return(f, x, false, out);
        return 1;
    }
    for (int round = 0; round < 2; round++) {
        int running = 0;
        /* due now: new transfers start here, and connects, retries of a name lookup */
        if (fetch_due(f) == 0)
            curl_multi_socket_action(f->m, CURL_SOCKET_TIMEOUT, 0, &running);
        if (fetch_done(f, out))
            return 1;
        if (f->sock_failed)
            return fetch_fail_one(f, out);
        if (round == 1)
            break;
        long due = fetch_due(f);
        int wait = due >= 0 && due < wait_ms ? (int)due : wait_ms;
        struct epoll_event evs[64];
        int n = epoll_wait(f->ep, evs, (int)(sizeof evs / sizeof *evs), wait);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == f->wake) {
                uint64_t v;
                if (read(f->wake, &v, sizeof v) < 0) { /* drained: EAGAIN when raced */
                }
                continue;
            }
            int bits = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(f->m, evs[i].data.fd, bits, &running);
        }
    }
    return 0;
}

void floe_io_fetch_wakeup(floe_io_fetcher *f) {
    uint64_t one = 1;
    if (write(f->wake, &one, sizeof one) < 0) { /* full counter: a wake-up is pending */
    }
}

void floe_io_fetcher_free(floe_io_fetcher *f) {
    if (!f)
        return;
    while (f->active) {
        fetch_xfer *x = f->active;
        curl_multi_remove_handle(f->m, x->h);
        active_unlink(f, x);
        xfer_free(f, x);
    }
    for (fetch_xfer *x = f->head, *n; x; x = n) {
        n = x->next;
        xfer_free(f, x);
    }
    for (fetch_xfer *x = f->failed, *n; x; x = n) {
        n = x->next;
        xfer_free(f, x);
    }
    curl_multi_cleanup(f->m); /* may still call fetch_sock_cb: the epoll set lives on */
    for (size_t i = 0; i < f->nspare; i++)
        curl_easy_cleanup(f->spare[i]);
    close(f->ep);
    close(f->wake);
    floe_free(f);
}

/* ---------------------------------------------------------------------------------------
 * Outputs.
 *
 *   open --write (buffer < part)--> buffering --buffer full--> multipart (parts uploaded)
 *   buffering --close--> PutObject --> published | failed
 *   multipart --close--> last UploadPart + CompleteMultipartUpload --> published | failed
 *   any --abort or failure--> AbortMultipartUpload (if an upload exists) --> gone
 *
 * A full part goes to the output's uploader thread (started with the multipart upload),
 * and writing goes on into another buffer: the next part fills while the last one is
 * sent, and at close the last part is sent from the caller while the one before may still
 * be on its way. One part at a time in the uploader, so an output holds at most two
 * part buffers (2 x part_size); a writer that fills the next part first waits for it. A
 * failed background part fails the next write or the close (nothing is completed).
 * ------------------------------------------------------------------------------------- */
struct floe_s3_output {
    floe_io *io;
    char *uri, *bucket, *key;
    const char *scheme;
    floe_output_options opts;
    size_t part_size;
    uint8_t *buf;
    size_t buf_len, buf_cap; /* grows to part_size: many small outputs stay small */
    int64_t written;
    char *upload_id;
    char **etags;   /* etags[i]: part i+1 (NULL while its part is in the uploader) */
    int n_parts;
    int cap_parts;
    /* the uploader thread: one part at a time (up_part > 0), the others under up_mu */
    bool up_started, up_stop;
    pthread_t up_thr;
    pthread_mutex_t up_mu;
    pthread_cond_t up_cv;
    int up_part;            /* the part number it sends now; 0 = idle */
    uint8_t *up_buf;        /* its buffer (kept as the next spare once sent) */
    size_t up_len, up_cap;
    char *up_etag;          /* the etag of the part it sent, until taken */
    int up_done;            /* the part number up_etag belongs to */
    int up_rc;              /* its first failure */
    floe_error up_err;
};

static void s3_output_abort(void *vo);

static int s3_output_open(floe_io *io, const char *uri, const floe_output_options *opts,
                          void **out, floe_error *err) {
    int rc = 0;
    const floe_s3_config *cfg = &io->s3;
    floe_s3_output *o = floe_calloc(1, sizeof *o);
    if (!o)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    o->io = io;
    if (opts)
        o->opts = *opts;
    o->part_size = cfg->part_size;
    o->scheme = uri_scheme(uri);
    FLOE_CHECK(floe_s3_uri_parse(uri, &o->bucket, &o->key, err));
    o->uri = floe_strdup(uri);
    if (!o->uri)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!o->key[0] || o->key[strlen(o->key) - 1] == '/')
        FLOE_FAIL(err, FLOE_EINVALID, "%s: not an object key", uri);
    *out = o;
    return 0;
done:
    s3_output_abort(o);
    return rc;
}

typedef struct initiate_ctx {
    char *upload_id;
} initiate_ctx;

static int initiate_leaf(void *ctx, const char *parent, const char *name, const char *text,
                         size_t len) {
    initiate_ctx *c = ctx;
    if (text && !strcmp(parent, "InitiateMultipartUploadResult") && !strcmp(name, "UploadId") &&
        !c->upload_id && len > 0 && len < 1024)
        c->upload_id = floe_strndup(text, len);
    return 0;
}

static int initiate_check(s3_req *r, floe_error *err) {
    initiate_ctx *c = r->check_ctx;
    floe_free(c->upload_id);
    c->upload_id = NULL;
    if (floe_s3_xml_scan((const char *)r->resp->data, r->resp->len, initiate_leaf, c, NULL) < 0 ||
        !c->upload_id)
        return 1; /* truncated or odd: ask again */
    (void)err;
    return 0;
}

static int multipart_start(floe_s3_output *o, floe_error *err) {
    floe_buf body;
    floe_buf_init(&body, MAX_XML_BODY);
    initiate_ctx ic = {NULL};
    s3_req r;
    req_init(&r, o->io, "CreateMultipartUpload", "POST", o->bucket, o->key, FLOE_IO_PUT);
    r.scheme = o->scheme;
    req_query(&r, "uploads", "");
    r.resp = &body;
    r.check = initiate_check;
    r.check_ctx = &ic;
    int rc = s3_call(&r, err);
    if (rc == 0)
        o->upload_id = ic.upload_id;
    else
        floe_free(ic.upload_id);
    req_free(&r);
    floe_buf_free(&body);
    return rc;
}

static int etag_check(s3_req *r, floe_error *err) {
    (void)err;
    return r->etag[0] ? 0 : 1;
}

/* PUT part number `number` (bytes p[0..n)) of the upload; *etag: its ETag (allocated). */
static int put_part(floe_s3_output *o, int number, const uint8_t *p, size_t n, char **etag,
                    floe_error *err) {
    char part[16];
    snprintf(part, sizeof part, "%d", number);
    s3_req r;
    req_init(&r, o->io, "UploadPart", "PUT", o->bucket, o->key, FLOE_IO_PUT);
    r.scheme = o->scheme;
    req_query(&r, "partNumber", part);
    req_query(&r, "uploadId", o->upload_id);
    r.body = p;
    r.body_len = n;
    r.check = etag_check;
    int rc = s3_call(&r, err);
    if (rc == 0 && !(*etag = floe_strdup(r.etag)))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    req_free(&r);
    return rc;
}

/* A slot in etags for the next part number (o->n_parts + 1). */
static int reserve_part(floe_s3_output *o, floe_error *err) {
    if (o->n_parts >= MAX_PARTS)
        return floe_error_set(err, FLOE_ELIMIT,
                              "%s: more than %d parts of %zu bytes; raise FLOE_S3_PART_SIZE",
                              o->uri, MAX_PARTS, o->part_size);
    if (o->n_parts == o->cap_parts) {
        int nc = o->cap_parts ? o->cap_parts * 2 : 16;
        char **ne = floe_realloc(o->etags, (size_t)nc * sizeof *ne);
        if (!ne)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        o->etags = ne;
        o->cap_parts = nc;
    }
    o->etags[o->n_parts] = NULL;
    return 0;
}

static void *uploader_main(void *arg) {
    floe_s3_output *o = arg;
    pthread_mutex_lock(&o->up_mu);
    for (;;) {
        while (!o->up_part && !o->up_stop)
            pthread_cond_wait(&o->up_cv, &o->up_mu);
        if (!o->up_part)
            break; /* stopping, nothing left to send */
        int number = o->up_part;
        pthread_mutex_unlock(&o->up_mu);
        char *etag = NULL;
        floe_error e;
        floe_error_clear(&e);
        int rc = put_part(o, number, o->up_buf, o->up_len, &etag, &e);
        pthread_mutex_lock(&o->up_mu);
        if (rc < 0 && o->up_rc == 0) {
            o->up_rc = rc;
            o->up_err = e;
        }
        o->up_etag = etag;
        o->up_done = number;
        o->up_part = 0;
        pthread_cond_broadcast(&o->up_cv);
    }
    pthread_mutex_unlock(&o->up_mu);
    return NULL;
}

/* Wait until the uploader is idle and take what it finished: its etag into etags, its
 * failure as ours. Caller holds nothing. */
static int uploader_wait(floe_s3_output *o, floe_error *err) {
    if (!o->up_started)
        return 0;
    pthread_mutex_lock(&o->up_mu);
    while (o->up_part)
        pthread_cond_wait(&o->up_cv, &o->up_mu);
    if (o->up_done) {
        o->etags[o->up_done - 1] = o->up_etag;
        o->up_etag = NULL;
        o->up_done = 0;
    }
    int rc = o->up_rc;
    if (rc < 0 && err)
        *err = o->up_err;
    pthread_mutex_unlock(&o->up_mu);
    return rc;
}

/* The buffer becomes part n_parts + 1 (its slot in etags reserved), sent from this
 * thread. */
static int put_here(floe_s3_output *o, floe_error *err) {
    char *etag = NULL;
    int rc = put_part(o, o->n_parts + 1, o->buf, o->buf_len, &etag, err);
    if (rc == 0) {
        o->etags[o->n_parts++] = etag;
        o->buf_len = 0;
    }
    return rc;
}

/* The full buffer becomes the next part: handed to the uploader (started with the first
 * part), and writing goes on in its previous buffer. */
static int upload_part(floe_s3_output *o, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(uploader_wait(o, err));
    FLOE_FORWARD_IF_ERROR(reserve_part(o, err));
    if (!o->up_started) {
        o->up_rc = 0;
        floe_error_clear(&o->up_err);
        if (pthread_mutex_init(&o->up_mu, NULL) != 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: cannot start the part uploader",
                                  o->uri);
        if (pthread_cond_init(&o->up_cv, NULL) != 0) {
            pthread_mutex_destroy(&o->up_mu);
            return floe_error_set(err, FLOE_ENOMEM, "%s: cannot start the part uploader",
                                  o->uri);
        }
        if (pthread_create(&o->up_thr, NULL, uploader_main, o) != 0) {
            pthread_cond_destroy(&o->up_cv);
            pthread_mutex_destroy(&o->up_mu);
            /* no thread: this part goes out from here (the next one tries again) */
            return put_here(o, err);
        }
        o->up_started = true;
    }
    pthread_mutex_lock(&o->up_mu);
    uint8_t *spare = o->up_buf;
    size_t spare_cap = o->up_cap;
    o->up_buf = o->buf;
    o->up_len = o->buf_len;
    o->up_cap = o->buf_cap;
    o->up_part = ++o->n_parts;
    pthread_cond_broadcast(&o->up_cv);
    pthread_mutex_unlock(&o->up_mu);
    o->buf = spare;
    o->buf_cap = spare_cap;
    o->buf_len = 0;
    return 0;
}

/* Stop the uploader (after the part it sends, if any) and free what it holds. */
static void uploader_stop(floe_s3_output *o) {
    if (!o->up_started)
        return;
    floe_error e;
    (void)uploader_wait(o, &e);
    pthread_mutex_lock(&o->up_mu);
    o->up_stop = true;
    pthread_cond_broadcast(&o->up_cv);
    pthread_mutex_unlock(&o->up_mu);
    pthread_join(o->up_thr, NULL);
    pthread_cond_destroy(&o->up_cv);
    pthread_mutex_destroy(&o->up_mu);
    o->up_started = false;
}

/* Room for want more bytes in the part buffer, up to part_size. */
static int ensure_buf(floe_s3_output *o, size_t want, floe_error *err) {
    size_t need = o->buf_len + want;
    if (need > o->part_size)
        need = o->part_size;
    if (need <= o->buf_cap)
        return 0;
    size_t nc = o->buf_cap ? o->buf_cap : 64 << 10;
    while (nc < need)
        nc *= 2;
    if (nc > o->part_size)
        nc = o->part_size;
    uint8_t *nb = floe_realloc(o->buf, nc);
    if (!nb)
        return floe_error_set(err, FLOE_ENOMEM, "%s: cannot buffer %zu bytes", o->uri, nc);
    o->buf = nb;
    o->buf_cap = nc;
    return 0;
}

static int s3_output_write(void *vo, const void *p, size_t n, floe_error *err) {
    floe_s3_output *o = vo;
    const uint8_t *b = p;
    while (n > 0) {
        FLOE_FORWARD_IF_ERROR(ensure_buf(o, n, err));
        size_t room = o->buf_cap - o->buf_len;
        size_t take = n < room ? n : room;
        memcpy(o->buf + o->buf_len, b, take);
        o->buf_len += take;
        o->written += (int64_t)take;
        b += take;
        n -= take;
        /* a full buffer becomes a part only once more data follows, so an object of exactly
         * one part still goes out as a single PUT */
        if (o->buf_len == o->part_size && n > 0) {
            if (!o->upload_id)
                FLOE_FORWARD_IF_ERROR(multipart_start(o, err));
            FLOE_FORWARD_IF_ERROR(upload_part(o, err));
        }
    }
    return 0;
}

static int64_t s3_output_tell(const void *vo) {
    const floe_s3_output *o = vo;
    return o->written;
}

static void xml_escape(floe_buf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '&')
            floe_buf_printf(b, "&amp;");
        else if (*s == '<')
            floe_buf_printf(b, "&lt;");
        else if (*s == '>')
            floe_buf_printf(b, "&gt;");
        else if (*s == '"')
            floe_buf_printf(b, "&quot;");
        else
            floe_buf_append_byte(b, (uint8_t)*s);
    }
}

/* The ETag S3 gives a multipart object: md5 of the parts' binary md5s, "-", part count.
 * Empty when a part ETag is not a plain md5 (SSE-KMS, other stores). */
static void multipart_etag(const floe_s3_output *o, char out[48]) {
    out[0] = '\0';
    uint8_t *md5s = floe_malloc((size_t)o->n_parts * 16 + 1);
    if (!md5s)
        return;
    for (int i = 0; i < o->n_parts; i++) {
        const char *e = o->etags[i];
        size_t el = strlen(e);
        if (el >= 2 && e[0] == '"' && e[el - 1] == '"')
            e++, el -= 2;
        if (el != 32) {
            floe_free(md5s);
            return;
        }
        for (int k = 0; k < 16; k++) {
            int hi = floe_hex_value(e[2 * k]), lo = floe_hex_value(e[2 * k + 1]);
            if (hi < 0 || lo < 0) {
                floe_free(md5s);
                return;
            }
            md5s[i * 16 + k] = (uint8_t)(hi << 4 | lo);
        }
    }
    uint8_t d[16];
    unsigned int dl = 16;
    EVP_Digest(md5s, (size_t)o->n_parts * 16, d, &dl, EVP_md5(), NULL);
    floe_free(md5s);
    char hex[33];
    floe_s3_hex(d, 16, hex);
    snprintf(out, 48, "\"%s-%d\"", hex, o->n_parts);
}

typedef struct complete_ctx {
    bool error;      /* a 200 whose body is an <Error> (S3 does this for Complete) */
    bool result;
} complete_ctx;

static int complete_leaf(void *ctx, const char *parent, const char *name, const char *text,
                         size_t len) {
    complete_ctx *c = ctx;
    (void)len;
    (void)text;
    if (!strcmp(parent, "Error"))
        c->error = true;
    if (!strcmp(name, "CompleteMultipartUploadResult") ||
        !strcmp(parent, "CompleteMultipartUploadResult"))
        c->result = true;
    return 0;
}

static int complete_check(s3_req *r, floe_error *err) {
    (void)err;
    complete_ctx c = {false, false};
    if (floe_s3_xml_scan((const char *)r->resp->data, r->resp->len, complete_leaf, &c, NULL) < 0)
        return 1;
    return c.error || !c.result ? 1 : 0;
}

static int multipart_complete(floe_s3_output *o, floe_error *err) {
    int rc = 0;
    floe_buf body, resp;
    floe_buf_init(&body, 0);
    floe_buf_init(&resp, MAX_XML_BODY);
    s3_req r;
    req_init(&r, o->io, "CompleteMultipartUpload", "POST", o->bucket, o->key, FLOE_IO_PUT);
    floe_buf_printf(&body, "<CompleteMultipartUpload>");
    for (int i = 0; i < o->n_parts; i++) {
        floe_buf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", i + 1);
        xml_escape(&body, o->etags[i]);
        floe_buf_printf(&body, "</ETag></Part>");
    }
    floe_buf_printf(&body, "</CompleteMultipartUpload>");
    if (floe_buf_error(&body) < 0) /* the first failed append, if any (floe_buf is sticky) */
        FLOE_FAIL(err, floe_buf_error(&body), "CompleteMultipartUpload body: %s",
                  floe_strerror(floe_buf_error(&body)));
    r.scheme = o->scheme;
    req_query(&r, "uploadId", o->upload_id);
    req_header(&r, "content-type", "application/xml");
    if (o->opts.no_overwrite)
        req_header(&r, "if-none-match", "*");
    r.fresh = true;
    r.body = body.data;
    r.body_len = body.len;
    r.resp = &resp;
    r.check = complete_check;
    rc = s3_call(&r, err);
    if (rc == FLOE_EEXISTS && r.ambiguous)
        FLOE_FAIL(err, FLOE_EUNKNOWN_STATE,
                  "%s: create-if-absent: the object exists, but an earlier attempt whose "
                  "answer was lost may have created it (state unknown)",
                  o->uri);
    if (rc == FLOE_ENOTFOUND && r.ambiguous) {
        /* NoSuchUpload after a lost answer: did that attempt complete the upload? */
        char want[48];
        multipart_etag(o, want);
        s3_req h;
        req_init(&h, o->io, "HEAD", "HEAD", o->bucket, o->key, FLOE_IO_HEAD);
        h.scheme = o->scheme;
        floe_error herr;
        int hrc = s3_call(&h, &herr);
        bool ours = hrc == 0 && want[0] && !strcmp(h.etag, want) && !o->opts.no_overwrite;
        req_free(&h);
        if (ours) {
            rc = 0;
            goto done;
        }
        FLOE_FAIL(err, FLOE_EUNKNOWN_STATE,
                  "%s: the multipart upload vanished after an attempt whose answer was lost; "
                  "it may or may not have completed (state unknown)",
                  o->uri);
    }
done:
    req_free(&r);
    floe_buf_free(&body);
    floe_buf_free(&resp);
    return rc;
}

static void multipart_abort(floe_s3_output *o) {
    if (!o->upload_id)
        return;
    s3_req r;
    req_init(&r, o->io, "AbortMultipartUpload", "DELETE", o->bucket, o->key, FLOE_IO_DELETE);
    r.scheme = o->scheme;
    req_query(&r, "uploadId", o->upload_id);
    floe_error e;
    if (s3_call(&r, &e) < 0 && e.code != FLOE_ENOTFOUND)
        floe_log(FLOE_LOG_WARN, "s3: %s: abort of upload %s failed (%s); a bucket lifecycle "
                 "rule for incomplete multipart uploads will remove its parts",
                 o->uri, o->upload_id, e.msg);
    req_free(&r);
    floe_free(o->upload_id);
    o->upload_id = NULL;
}

static int single_put(floe_s3_output *o, floe_error *err) {
    s3_req r;
    req_init(&r, o->io, "PutObject", "PUT", o->bucket, o->key, FLOE_IO_PUT);
    r.scheme = o->scheme;
    if (o->opts.no_overwrite) {
        req_header(&r, "if-none-match", "*");
        r.fresh = true;
    }
    r.body = o->buf;
    r.body_len = o->buf_len;
    int rc = s3_call(&r, err);
    if (rc == FLOE_EEXISTS && r.ambiguous)
        rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                            "%s: create-if-absent: the object exists, but an earlier attempt "
                            "whose answer was lost may have created it (state unknown)",
                            o->uri);
    else if (rc == FLOE_EEXISTS)
        rc = floe_error_sys(err, FLOE_EEXISTS, 412, "%s: already exists", o->uri);
    req_free(&r);
    return rc;
}

static int s3_output_close(void *vo, floe_error *err) {
    floe_s3_output *o = vo;
    int rc = 0;
    if (!o->upload_id) {
        FLOE_CHECK(single_put(o, err));
    } else {
        /* the last part from here while the uploader may still send the one before */
        if (o->buf_len > 0) {
            rc = reserve_part(o, err);
            if (rc == 0)
                rc = put_here(o, err);
            floe_error ue;
            floe_error_clear(&ue);
            int urc = uploader_wait(o, &ue);
            if (rc == 0 && urc < 0) {
                rc = urc;
                if (err)
                    *err = ue;
            }
            if (rc < 0)
                goto done;
        } else {
            FLOE_CHECK(uploader_wait(o, err));
        }
        rc = multipart_complete(o, err);
        if (rc == 0 || rc == FLOE_EUNKNOWN_STATE) {
            /* completed, or maybe: an abort now could only fail or race nothing */
            floe_free(o->upload_id);
            o->upload_id = NULL;
        }
        if (rc < 0)
            goto done;
    }
done:
    s3_output_abort(o);
    return rc;
}

static void s3_output_abort(void *vo) {
    floe_s3_output *o = vo;
    if (!o)
        return;
    uploader_stop(o);
    multipart_abort(o);
    for (int i = 0; i < o->n_parts; i++)
        floe_free(o->etags[i]);
    floe_free(o->etags);
    floe_free(o->up_etag);
    floe_free(o->up_buf);
    floe_free(o->buf);
    floe_free(o->uri);
    floe_free(o->bucket);
    floe_free(o->key);
    floe_free(o);
}

/* ---------------------------------------------------------------------------------------
 * exists, delete, delete_many.
 * ------------------------------------------------------------------------------------- */
static int s3_exists(floe_io *io, const char *uri, bool *exists, floe_error *err) {
    char *bucket = NULL, *key = NULL;
    FLOE_FORWARD_IF_ERROR(floe_s3_uri_parse(uri, &bucket, &key, err));
    s3_req r;
    req_init(&r, io, "HEAD", "HEAD", bucket, key, FLOE_IO_HEAD);
    r.scheme = uri_scheme(uri);
    floe_error e;
    int rc = s3_call(&r, &e);
    if (rc == 0)
        *exists = true;
    else if (rc == FLOE_ENOTFOUND) {
        *exists = false;
        rc = 0;
    } else if (err) {
        *err = e;
    }
    req_free(&r);
    floe_free(bucket);
    floe_free(key);
    return rc;
}

static int s3_delete(floe_io *io, const char *uri, floe_error *err) {
    char *bucket = NULL, *key = NULL;
    FLOE_FORWARD_IF_ERROR(floe_s3_uri_parse(uri, &bucket, &key, err));
    s3_req r;
    req_init(&r, io, "DELETE", "DELETE", bucket, key, FLOE_IO_DELETE);
    r.scheme = uri_scheme(uri);
    floe_error e;
    int rc = s3_call(&r, &e);
    if (rc == FLOE_ENOTFOUND && strcmp(r.code, "NoSuchBucket") != 0)
        rc = 0;
    else if (rc < 0 && err)
        *err = e;
    req_free(&r);
    floe_free(bucket);
    floe_free(key);
    return rc;
}

typedef struct delete_ctx {
    char key[256];
    char code[64];
    bool in_error;
    int errors;
    bool result;
} delete_ctx;

static int delete_leaf(void *ctx, const char *parent, const char *name, const char *text,
                       size_t len) {
    delete_ctx *c = ctx;
    if (!strcmp(name, "DeleteResult") || !strcmp(parent, "DeleteResult"))
        c->result = true;
    if (!strcmp(parent, "Error") && text) {
        if (!strcmp(name, "Key") && c->errors == 0)
            snprintf(c->key, sizeof c->key, "%.*s", (int)(len < 255 ? len : 255), text);
        else if (!strcmp(name, "Code") && c->errors == 0)
            snprintf(c->code, sizeof c->code, "%.*s", (int)(len < 63 ? len : 63), text);
    }
    if (!strcmp(name, "Error") && !text && !strcmp(parent, "DeleteResult")) {
        if (strcmp(c->code, "NoSuchKey") != 0)
            c->errors++;
        else
            c->key[0] = c->code[0] = '\0';
    }
    return 0;
}

static int delete_check(s3_req *r, floe_error *err) {
    (void)err;
    delete_ctx *c = r->check_ctx;
    memset(c, 0, sizeof *c);
    if (floe_s3_xml_scan((const char *)r->resp->data, r->resp->len, delete_leaf, c, NULL) < 0 ||
        !c->result)
        return 1;
    return 0;
}

static int delete_batch(floe_io *io, const char *scheme, const char *bucket,
                        char *const *keys, size_t n, floe_error *err) {
    int rc = 0;
    floe_buf body, resp;
    floe_buf_init(&body, 0);
    floe_buf_init(&resp, MAX_XML_BODY);
    delete_ctx dc;
    memset(&dc, 0, sizeof dc);
    s3_req r;
    req_init(&r, io, "DeleteObjects", "POST", bucket, "", FLOE_IO_DELETE);
    /* libcrypto for the body's Content-MD5, before s3_call loads it */
    if (!floe_lazy_crypto(err)) {
        floe_error_prefix(err, "DeleteObjects %s://%s: ", scheme, bucket);
        rc = err ? err->code : FLOE_EUNSUPPORTED;
        goto done;
    }
    floe_buf_printf(&body, "<Delete><Quiet>true</Quiet>");
    for (size_t i = 0; i < n; i++) {
        floe_buf_printf(&body, "<Object><Key>");
        xml_escape(&body, keys[i]);
        floe_buf_printf(&body, "</Key></Object>");
    }
    floe_buf_printf(&body, "</Delete>");
    if (floe_buf_error(&body) < 0) /* the first failed append, if any (floe_buf is sticky) */
        FLOE_FAIL(err, floe_buf_error(&body), "DeleteObjects body: %s",
                  floe_strerror(floe_buf_error(&body)));
    char md5[25];
    floe_s3_md5_base64(body.data, body.len, md5);
    r.scheme = scheme;
    req_query(&r, "delete", "");
    req_header(&r, "content-md5", md5);
    req_header(&r, "content-type", "application/xml");
    r.body = body.data;
    r.body_len = body.len;
    r.resp = &resp;
    r.check = delete_check;
    r.check_ctx = &dc;
    FLOE_CHECK(s3_call(&r, err));
    if (dc.errors > 0)
        FLOE_FAIL(err, FLOE_EIO, "DeleteObjects %s://%s: %d of %zu keys failed, first %s: %s",
                  scheme, bucket, dc.errors, n, dc.key, dc.code);
done:
    req_free(&r);
    floe_buf_free(&body);
    floe_buf_free(&resp);
    return rc;
}

static int s3_delete_many(floe_io *io, const char *const *uris, size_t n, floe_error *err) {
    int rc = 0;
    char *keys[DELETE_BATCH];
    size_t nk = 0;
    char *bucket = NULL;
    const char *scheme = "s3";
    for (size_t i = 0; i <= n; i++) {
        char *b = NULL, *k = NULL;
        if (i < n)
            FLOE_CHECK(floe_s3_uri_parse(uris[i], &b, &k, err));
        bool flush = nk > 0 && (i == n || nk == DELETE_BATCH || strcmp(b, bucket) != 0);
        if (flush) {
            rc = delete_batch(io, scheme, bucket, keys, nk, err);
            for (size_t j = 0; j < nk; j++)
                floe_free(keys[j]);
            nk = 0;
            floe_free(bucket);
            bucket = NULL;
            if (rc < 0) {
                floe_free(b);
                floe_free(k);
                goto done;
            }
        }
        if (i == n)
            break;
        if (!bucket) {
            bucket = b;
            scheme = uri_scheme(uris[i]);
        } else {
            floe_free(b);
        }
        keys[nk++] = k;
    }
done:
    for (size_t j = 0; j < nk; j++)
        floe_free(keys[j]);
    floe_free(bucket);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * list: ListObjectsV2, recursive, page by page.
 * ------------------------------------------------------------------------------------- */
typedef struct list_item {
    char *key;
    int64_t size;
    int64_t mtime_ms;
} list_item;

typedef struct list_page {
    list_item *items;
    size_t n, cap;
    list_item cur;
    bool truncated;
    char *next_token;
    bool result;
    bool bad;
} list_page;

static void list_page_clear(list_page *pg) {
    for (size_t i = 0; i < pg->n; i++)
        floe_free(pg->items[i].key);
    floe_free(pg->items);
    floe_free(pg->cur.key);
    floe_free(pg->next_token);
    memset(pg, 0, sizeof *pg);
}

static int list_leaf(void *ctx, const char *parent, const char *name, const char *text,
                     size_t len) {
    list_page *pg = ctx;
    if (!strcmp(name, "ListBucketResult")) {
        pg->result = true;
        return 0;
    }
    if (!strcmp(parent, "ListBucketResult") && text) {
        if (!strcmp(name, "IsTruncated"))
            pg->truncated = !strcmp(text, "true");
        else if (!strcmp(name, "NextContinuationToken") && !pg->next_token && len < 4096)
            pg->next_token = floe_strndup(text, len);
        return 0;
    }
    if (!strcmp(parent, "Contents") && text) {
        if (!strcmp(name, "Key") && !pg->cur.key && len > 0 && len <= 1024)
            pg->cur.key = floe_strndup(text, len);
        else if (!strcmp(name, "Size")) {
            char *end;
            long long v = strtoll(text, &end, 10);
            if (*end || v < 0)
                pg->bad = true;
            pg->cur.size = v;
        } else if (!strcmp(name, "LastModified")) {
            if (floe_s3_parse_time(text, &pg->cur.mtime_ms, NULL) < 0)
                pg->bad = true;
        }
        return 0;
    }
    if (!strcmp(name, "Contents") && !text) {
        if (!pg->cur.key || pg->n >= MAX_LIST_ENTRIES) {
            pg->bad = true;
            return 1;
        }
        if (pg->n == pg->cap) {
            size_t nc = pg->cap ? pg->cap * 2 : 64;
            list_item *ni = floe_realloc(pg->items, nc * sizeof *ni);
            if (!ni) {
                pg->bad = true;
                return 1;
            }
            pg->items = ni;
            pg->cap = nc;
        }
        pg->items[pg->n++] = pg->cur;
        memset(&pg->cur, 0, sizeof pg->cur);
    }
    return 0;
}

static int list_check(s3_req *r, floe_error *err) {
    list_page *pg = r->check_ctx;
    list_page_clear(pg);
    int rc = floe_s3_xml_scan((const char *)r->resp->data, r->resp->len, list_leaf, pg, err);
    if (rc < 0 || !pg->result || (pg->truncated && !pg->next_token))
        return 1; /* a cut-off page: ask again */
    if (pg->bad)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "ListObjectsV2 s3://%s/%s: malformed entry in the listing",
                              r->bucket, r->key);
    return 0;
}

static int s3_list(floe_io *io, const char *prefix,
                   int (*fn)(void *ctx, const floe_io_entry *e), void *ctx, floe_error *err) {
    int rc = 0;
    char *bucket = NULL, *key = NULL, *kprefix = NULL, *token = NULL;
    const floe_s3_config *cfg = &io->s3;
    list_page pg;
    memset(&pg, 0, sizeof pg);
    floe_buf resp;
    floe_buf_init(&resp, MAX_XML_BODY);
    FLOE_CHECK(floe_s3_uri_parse(prefix, &bucket, &key, err));
    /* like a folder: "s3://b/dir" lists keys under "dir/", never "dir2/..." */
    size_t kl = strlen(key);
    kprefix = kl == 0 || key[kl - 1] == '/' ? floe_strdup(key) : floe_asprintf("%s/", key);
    if (!kprefix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const char *scheme = uri_scheme(prefix);
    char max_keys[16];
    snprintf(max_keys, sizeof max_keys, "%d", cfg->list_page_size);
    for (int page = 0;; page++) {
        s3_req r;
        req_init(&r, io, "ListObjectsV2", "GET", bucket, "", FLOE_IO_LIST);
        r.scheme = scheme;
        req_query(&r, "list-type", "2");
        req_query(&r, "max-keys", max_keys);
        if (kprefix[0])
            req_query(&r, "prefix", kprefix);
        if (token)
            req_query(&r, "continuation-token", token);
        r.resp = &resp;
        r.check = list_check;
        r.check_ctx = &pg;
        rc = s3_call(&r, err);
        req_free(&r);
        if (rc == FLOE_ENOTFOUND && page == 0 && !strcmp(r.code, "NoSuchKey"))
            rc = 0; /* nothing there */
        if (rc < 0)
            goto done;
        for (size_t i = 0; i < pg.n; i++) {
            const list_item *it = &pg.items[i];
            size_t l = strlen(it->key);
            if (it->key[l - 1] == '/') /* a "folder" marker object */
                continue;
            char *uri = floe_asprintf("%s://%s/%s", scheme, bucket, it->key);
            if (!uri)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            floe_io_entry e = {uri, it->size, it->mtime_ms};
            int stop = fn(ctx, &e);
            floe_free(uri);
            if (stop)
                goto done;
        }
        if (!pg.truncated)
            break;
        if (page > 10000000)
            FLOE_FAIL(err, FLOE_ELIMIT, "%s: listing does not end", prefix);
        floe_free(token);
        token = pg.next_token;
        pg.next_token = NULL;
        if (!token[0])
            FLOE_FAIL(err, FLOE_ECORRUPT, "%s: truncated listing without a continuation token",
                      prefix);
    }
done:
    list_page_clear(&pg);
    floe_buf_free(&resp);
    floe_free(bucket);
    floe_free(key);
    floe_free(kprefix);
    floe_free(token);
    return rc;
}

const floe_io_backend floe_s3_backend = {
    .output_open = s3_output_open,
    .output_write = s3_output_write,
    .output_tell = s3_output_tell,
    .output_close = s3_output_close,
    .output_abort = s3_output_abort,
    .input_open = s3_input_open,
    .input_open_sequential = s3_input_open_sequential,
    .input_size = s3_input_size,
    .input_uri = s3_input_uri,
    .input_read_at = s3_input_read_at,
    .input_close = s3_input_close,
    .exists = s3_exists,
    .remove = s3_delete,
    .remove_many = s3_delete_many,
    .list = s3_list,
};
