/*
 * rest_catalog.c - the REST catalog store: floe as a client of an Iceberg REST catalog
 * (Apache Polaris, Lakekeeper, Nessie, `floe catalog serve`...).
 *
 * Spec: apache/iceberg open-api/rest-catalog-open-api.yaml: GET /v1/config (defaults,
 * overrides, endpoints), the namespace and table routes, CommitTableRequest, the
 * IcebergErrorResponse model; OAuth2 client credentials (RFC 6749 section 4.4) at
 * oauth2-server-uri or the spec's /v1/oauth/tokens.
 *
 * Invariants:
 *   R1. GET /v1/config runs before anything else, and every operation checks that the
 *       server advertises its route (the spec's default set when it sends no
 *       `endpoints`) before sending anything: a missing route is FLOE_EUNSUPPORTED.
 *   R2. A commit whose request may have reached the server and whose answer did not say
 *       what happened (500, 502, 503, 504, a timeout or a dropped connection after
 *       sending) is FLOE_EUNKNOWN_STATE, never a conflict and never an error that lets a
 *       caller delete what it wrote. 409 is FLOE_ECONFLICT. Nothing is re-sent, except
 *       with an Idempotency-Key (R4).
 *   R3. The token is refreshed before it expires (at 80% of expires_in); a 401 on a
 *       request that changed nothing gets one new token and one retry.
 *   R4. When /v1/config advertises idempotency-key-lifetime, each commit carries an
 *       Idempotency-Key (a new UUID per commit request built) and, on an unknown outcome
 *       (R2), is sent again with the same key up to REST_IDEM_RETRIES times: the server
 *       answers a commit that landed from its record, and runs one that did not. What
 *       the retries leave unknown stays unknown, and so does every failure of a retry:
 *       a 409 (it may refuse the first request's own change) is never a conflict, and a
 *       retry that cannot connect (the server died after committing) deletes nothing.
 *   R5. With rest.sigv4-enabled every request is signed (AWS SigV4, libcurl's signer)
 *       with the keys of the catalog's I/O context, asked afresh for each request; a
 *       bearer token then travels as Original-Authorization.
 *   R6. Loads ask for vended credentials (X-Iceberg-Access-Delegation); the keys a load
 *       answers drive that table's I/O context (rest_creds.c), which may ask for fresh
 *       ones from any thread: requests hold ri->mu, so the handle's one curl handle and
 *       token serve one request at a time.
 *   R7. Nothing goes into a request header that could end the header line: a token (the
 *       settings', or an identity provider's access_token), a header.* value or an S3
 *       session token holding a control character fails the request before anything is
 *       sent (CR/LF would inject headers of its own).
 *
 * One handle is used by one thread at a time (floe/catalog.h), but for the credential
 * refreshes of R6; it keeps one curl easy handle, so connections are reused.
 */
#include "common/lazy_curl.h"
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/keyset.h"
#include "floe/io.h"
#include "rest_internal.h"

#define REST_BODY_MAX (64u << 20)   /* a load-table answer with many snapshots */
#define REST_TIMEOUT_MS 120000L
#define REST_PING_TIMEOUT_MS 5000L /* floe_catalog_ping: a health probe, not a request */
#define REST_CONNECT_TIMEOUT_MS 10000L
#define REST_ETAGS_MAX 64
#define REST_IDEM_RETRIES 2  /* a commit sent again after an unknown outcome (R4) */
#define REST_LIST_NAMES_MAX 1000000u      /* names one listing holds (list_pages) */
#define REST_LIST_BYTES_MAX (64u << 20)   /* bytes of names, and of page tokens, in one */

typedef struct rest_etag {
    char *key; /* "<ns>\x1f<name>" */
    char *etag;
    char *location;
} rest_etag;

typedef struct rest_impl {
    CURL *h;
    char *base;    /* the uri, no trailing '/' */
    char *prefix;  /* escaped, or NULL */
    char *sep;     /* namespace separator as sent in a path (escaped), "%1F" */
    char *token;
    char *credential, *scope, *oauth_uri;
    char *config_url;  /* GET /v1/config as asked at open (floe_catalog_ping asks again) */
    long timeout_ms;   /* of the exchanges being made; 0: REST_TIMEOUT_MS */
    int64_t token_refresh_ns; /* when to fetch a new token (0: never) */
    struct curl_slist *headers; /* header.* */
    floe_io *io;       /* the catalog's context: the keys SigV4 signs with */
    char *sigv4;       /* "aws:amz:<region>:<signing name>" (CURLOPT_AWS_SIGV4), or NULL */
    pthread_mutex_t mu; /* one request at a time (R6) */
    bool delegation;    /* the request being made asks for vended credentials */
    rest_vends *vends;  /* the tables' vended credentials and contexts */
    bool have_endpoints;
    floe_strlist endpoints;
    bool idem;            /* the server honours Idempotency-Key (idempotency-key-lifetime) */
    const char *idem_key; /* sent as Idempotency-Key while set (a commit's) */
    bool fresh;           /* the next exchange on a new connection (a commit's) */
    rest_etag etags[REST_ETAGS_MAX];
    size_t netags, etag_next;
} rest_impl;

/* The routes a server that sends no `endpoints` offers (the spec's default set). */
static const char *const DEFAULT_ENDPOINTS[] = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static bool curl_ready;
static void curl_setup(void) { curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }

/* ---------------------------------------------------------------------------------------
 * HTTP
 * ------------------------------------------------------------------------------------- */

typedef struct rest_resp {
    long status;
    floe_buf body;
    char *etag;
    bool sent; /* transport error: the request may have reached the server */
} rest_resp;

static void resp_init(rest_resp *r) {
    memset(r, 0, sizeof *r);
    floe_buf_init(&r->body, REST_BODY_MAX);
}

static void resp_free(rest_resp *r) {
    floe_buf_free(&r->body);
    floe_free(r->etag);
    r->etag = NULL;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx) {
    rest_resp *r = ctx;
    return floe_buf_append(&r->body, p, size * n) < 0 ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx) {
    rest_resp *r = ctx;
    size_t len = size * n;
    if (len > 5 && !strncasecmp(p, "etag:", 5)) {
        const char *v = p + 5;
        size_t vl = len - 5;
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        floe_free(r->etag);
        r->etag = floe_strndup(v, vl);
    }
    return len;
}

/* R7: s holds a byte that may not go into a header line. */
static bool holds_control(const char *s) {
    size_t n = strlen(s);
    return floe_rest_control_at(s, n) < n;
}

/* One exchange. 0 when the server answered (any status, in r); FLOE_EIO when it did not
 * (r->sent says whether the request may have reached it). */
static int http(rest_impl *ri, const char *method, const char *url, const char *body,
                const char *content_type, const char *if_none_match, bool bearer, rest_resp *r,
                floe_error *err) {
    CURL *h = ri->h;
    curl_easy_reset(h);
    struct curl_slist *hl = NULL, *t;
    int rc = 0;
    floe_io_credentials keys = {NULL, NULL, NULL};
    char *auth = bearer && ri->token ? floe_asprintf("%sAuthorization: Bearer %s",
                                                     ri->sigv4 ? "Original-" : "", ri->token)
                                     : NULL;
    char *ct = body ? floe_asprintf("Content-Type: %s", content_type) : NULL;
    char *inm = if_none_match ? floe_asprintf("If-None-Match: %s", if_none_match) : NULL;
    char *ik = ri->idem_key ? floe_asprintf("Idempotency-Key: %s", ri->idem_key) : NULL;
    char *stok = NULL;
    if ((bearer && ri->token && !auth) || (body && !ct) || (if_none_match && !inm) ||
        (ri->idem_key && !ik))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (ri->sigv4) { /* R5 */
        rc = floe_io_s3_credentials(ri->io, url, &keys, err);
        if (rc < 0) {
            floe_error_prefix(err, "REST catalog: rest.sigv4-enabled: ");
            goto done;
        }
        if (keys.session_token && holds_control(keys.session_token)) /* R7 */
            FLOE_FAIL(err, FLOE_EINVALID, "REST catalog: rest.sigv4-enabled: the S3 session "
                      "token holds control characters (it would go into a request header)");
        if (keys.session_token &&
            !(stok = floe_asprintf("x-amz-security-token: %s", keys.session_token)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    const char *extra[] = {"Accept: application/json", "User-Agent: floe", auth, ct, inm, ik, stok,
                           ri->delegation ? "X-Iceberg-Access-Delegation: vended-credentials"
                                          : NULL};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        if (!extra[i])
            continue;
        if (!(t = curl_slist_append(hl, extra[i])))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        hl = t;
    }
    for (struct curl_slist *x = ri->headers; x; x = x->next) {
        if (!(t = curl_slist_append(hl, x->data)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        hl = t;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ri->timeout_ms ? ri->timeout_ms : REST_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, REST_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    /* libcurl sends a request again by itself when a reused connection turns out closed
     * with nothing answered; a commit must not be (R2): it goes on a new connection */
    if (ri->fresh)
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET"))
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    if (ri->sigv4) {
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, ri->sigv4);
        curl_easy_setopt(h, CURLOPT_USERNAME, keys.access_key);
        curl_easy_setopt(h, CURLOPT_PASSWORD, keys.secret_key);
    }
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        long sent = 0;
        curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
        r->sent = sent > 0;
        rc = floe_error_sys(err, cc == CURLE_OPERATION_TIMEDOUT ? FLOE_ETIMEOUT : FLOE_EIO,
                            (int)cc, "%s %s: %s", method, url, curl_easy_strerror(cc));
        if (rc == FLOE_ETIMEOUT)
            rc = FLOE_EIO; /* one transport failure code; err->code keeps the detail */
        goto done;
    }
    if (floe_buf_error(&r->body) < 0)
        FLOE_FAIL(err, FLOE_ELIMIT, "%s %s: answer larger than %u bytes", method, url,
                  (unsigned)REST_BODY_MAX);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
done:
    curl_slist_free_all(hl);
    floe_free(auth);
    floe_free(ct);
    floe_free(inm);
    floe_free(ik);
    floe_free(stok);
    floe_io_credentials_reset(&keys);
    return rc;
}

/* A JSON answer's object, or NULL (not JSON). A new reference. */
static json_t *resp_json(const rest_resp *r) {
    if (!r->body.len)
        return NULL;
    json_t *j = json_loadb((const char *)r->body.data, r->body.len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The floe code of an HTTP error status (409 is the caller's to interpret). */
static int status_code(long status) {
    switch (status) {
    case 400:
    case 422:
        return FLOE_EINVALID;
    case 401:
    case 403:
    case 419:
        return FLOE_EAUTH;
    case 404:
        return FLOE_ENOTFOUND;
    case 406:
        return FLOE_EUNSUPPORTED;
    case 409:
        return FLOE_EEXISTS;
    case 503:
        return FLOE_EBUSY;
    default:
        return FLOE_EIO;
    }
}

/* An error from an answer: the status, and the server's ErrorModel type and message. */
static int resp_error(const rest_resp *r, int code, const char *what, floe_error *err) {
    json_t *j = resp_json(r);
    const json_t *e = json_object_get(j, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    int rc = floe_error_sys(err, code, (int)r->status, "REST catalog: %s: HTTP %ld%s%s%s%s", what,
                            r->status, type ? " " : "", type ? type : "", msg ? ": " : "",
                            msg ? msg : "");
    json_decref(j);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * auth
 * ------------------------------------------------------------------------------------- */

/* OAuth2 client credentials: a new token for ri->credential. */
static int fetch_token(rest_impl *ri, floe_error *err) {
    const char *colon = strchr(ri->credential, ':');
    char *id = colon ? curl_easy_escape(ri->h, ri->credential, (int)(colon - ri->credential))
                     : NULL;
    char *secret = curl_easy_escape(ri->h, colon ? colon + 1 : ri->credential, 0);
    char *scope = curl_easy_escape(ri->h, ri->scope ? ri->scope : "catalog", 0);
    char *form = NULL;
    rest_resp r;
    resp_init(&r);
    json_t *j = NULL;
    int rc = 0;
    if ((colon && !id) || !secret || !scope)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    form = floe_asprintf("grant_type=client_credentials%s%s&client_secret=%s&scope=%s",
                         id ? "&client_id=" : "", id ? id : "", secret, scope);
    if (!form)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(http(ri, "POST", ri->oauth_uri, form, "application/x-www-form-urlencoded", NULL,
                    false, &r, err));
    if (r.status != 200) {
        j = resp_json(&r);
        const char *e = json_string_value(json_object_get(j, "error"));
        const char *d = json_string_value(json_object_get(j, "error_description"));
        FLOE_FAIL(err, r.status == 400 || r.status == 401 ? FLOE_EAUTH : FLOE_EIO,
                  "REST catalog: token request to %s: HTTP %ld%s%s%s%s", ri->oauth_uri, r.status,
                  e ? " " : "", e ? e : "", d ? ": " : "", d ? d : "");
    }
    j = resp_json(&r);
    const char *tok = json_string_value(json_object_get(j, "access_token"));
    if (!tok || !*tok)
        FLOE_FAIL(err, FLOE_EAUTH, "REST catalog: token request to %s: no access_token in the "
                  "answer", ri->oauth_uri);
    if (holds_control(tok)) /* R7 */
        FLOE_FAIL(err, FLOE_EAUTH, "REST catalog: token request to %s: the access_token holds "
                  "control characters (it would go into the Authorization header)",
                  ri->oauth_uri);
    char *copy = floe_strdup(tok);
    if (!copy)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_free(ri->token);
    ri->token = copy;
    json_int_t expires = json_integer_value(json_object_get(j, "expires_in"));
    ri->token_refresh_ns = expires > 0 ? floe_now_ns() + (int64_t)expires * 800000000LL : 0;
done:
    json_decref(j);
    resp_free(&r);
    curl_free(id);
    curl_free(secret);
    curl_free(scope);
    floe_free(form);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * requests
 * ------------------------------------------------------------------------------------- */

/* FLOE_EUNSUPPORTED unless the server offers "<method> /v1/{prefix}/<route>" (R1). */
static int need(floe_catalog *c, const char *method, const char *route, floe_error *err) {
    rest_impl *ri = c->impl;
    char ep[160];
    snprintf(ep, sizeof ep, "%s /v1/{prefix}/%s", method, route);
    if (ri->have_endpoints) {
        for (size_t i = 0; i < ri->endpoints.n; i++)
            if (!strcmp(ri->endpoints.items[i], ep))
                return 0;
    } else {
        for (size_t i = 0; i < sizeof DEFAULT_ENDPOINTS / sizeof DEFAULT_ENDPOINTS[0]; i++)
            if (!strcmp(DEFAULT_ENDPOINTS[i], ep))
                return 0;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "REST catalog %s does not offer %s (not among the endpoints of its "
                          "/v1/config)", ri->base, ep);
}

/* Send to url with the token (ri->mu held): a new token first when it is due; one new
 * token and one retry on a 401 when the catalog has a credential (R3) and the request is
 * retry_safe. */
static int send_authorized(rest_impl *ri, const char *method, const char *url, const char *body,
                           const char *if_none_match, bool retry_safe, rest_resp *r,
                           floe_error *err) {
    if (ri->credential && (!ri->token || (ri->token_refresh_ns && floe_now_ns() >= ri->token_refresh_ns)))
        FLOE_FORWARD_IF_ERROR(fetch_token(ri, err));
    int rc = http(ri, method, url, body, "application/json", if_none_match, true, r, err);
    if (rc == 0 && r->status == 401 && ri->credential && retry_safe) {
        resp_free(r);
        resp_init(r);
        rc = fetch_token(ri, err);
        if (rc == 0)
            rc = http(ri, method, url, body, "application/json", if_none_match, true, r, err);
    }
    return rc;
}

/* Request /v1/[prefix/]path with the token (send_authorized). */
static int request(floe_catalog *c, const char *method, const char *path, const char *body,
                   const char *if_none_match, bool retry_safe, rest_resp *r, floe_error *err) {
    rest_impl *ri = c->impl;
    int rc = 0;
    char *url = NULL;
    pthread_mutex_lock(&ri->mu);
    url = floe_asprintf("%s/v1/%s%s%s", ri->base, ri->prefix ? ri->prefix : "",
                        ri->prefix ? "/" : "", path);
    if (!url)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    rc = send_authorized(ri, method, url, body, if_none_match, retry_safe, r, err);
done:
    pthread_mutex_unlock(&ri->mu);
    floe_free(url);
    return rc;
}

/* GET /v1/config again, as at open, with the catalog's token (send_authorized), within
 * REST_PING_TIMEOUT_MS. */
static int rest_ping(floe_catalog *c, floe_error *err) {
    rest_impl *ri = c->impl;
    rest_resp r;
    resp_init(&r);
    pthread_mutex_lock(&ri->mu);
    ri->timeout_ms = REST_PING_TIMEOUT_MS;
    int rc = send_authorized(ri, "GET", ri->config_url, NULL, NULL, true, &r, err);
    if (rc == 0 && r.status != 200)
        rc = resp_error(&r, status_code(r.status), "GET /v1/config", err);
    ri->timeout_ms = 0;
    pthread_mutex_unlock(&ri->mu);
    resp_free(&r);
    return rc;
}

/* A dotted namespace as a path segment: levels escaped, joined by the separator. */
static char *ns_segment(rest_impl *ri, const char *ns) {
    floe_buf b;
    floe_buf_init(&b, 4096);
    const char *p = ns;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char *lvl = curl_easy_escape(ri->h, p, (int)n);
        if (!lvl || floe_buf_append(&b, lvl, strlen(lvl)) < 0) {
            curl_free(lvl);
            floe_buf_free(&b);
            return NULL;
        }
        curl_free(lvl);
        if (!dot)
            break;
        if (floe_buf_append(&b, ri->sep, strlen(ri->sep)) < 0) {
            floe_buf_free(&b);
            return NULL;
        }
        p = dot + 1;
    }
    if (floe_buf_append_byte(&b, 0) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return (char *)b.data; /* floe_buf storage is floe_malloc'd */
}

/* "namespaces/<ns>[/tables/<name>][suffix]" escaped. */
static char *table_path(rest_impl *ri, const char *ns, const char *name, const char *suffix) {
    char *seg = ns_segment(ri, ns);
    char *tn = name ? curl_easy_escape(ri->h, name, 0) : NULL;
    char *p = seg && (!name || tn) ? floe_asprintf("namespaces/%s%s%s%s", seg,
                                                   name ? "/tables/" : "", name ? tn : "",
                                                   suffix ? suffix : "")
                                   : NULL;
    floe_free(seg);
    curl_free(tn);
    return p;
}

/* A namespace as the JSON array of its levels. */
static json_t *ns_array(const char *ns) {
    json_t *a = json_array();
    const char *p = ns;
    while (a) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (json_array_append_new(a, json_stringn(p, n)) < 0) {
            json_decref(a);
            return NULL;
        }
        if (!dot)
            break;
        p = dot + 1;
    }
    return a;
}

/* A JSON array of levels as a dotted name (caller frees); NULL when not one, or when a
 * level holds a '.' (floe's namespaces are dotted). */
static char *ns_dotted(const json_t *levels) {
    floe_buf b;
    floe_buf_init(&b, 4096);
    size_t i;
    json_t *l;
    bool ok = json_is_array(levels) && json_array_size(levels) > 0;
    json_array_foreach(levels, i, l) {
        const char *s = json_string_value(l);
        if (!ok || !s || !*s || strchr(s, '.') ||
            (i && floe_buf_append_byte(&b, '.') < 0) || floe_buf_append(&b, s, strlen(s)) < 0) {
            ok = false;
            break;
        }
    }
    if (!ok || floe_buf_append_byte(&b, 0) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

static char *dumps(const json_t *j) { return json_dumps(j, JSON_COMPACT); }

/* Send a JSON body; the answer in r. */
static int request_json(floe_catalog *c, const char *method, const char *path, json_t *body,
                        bool retry_safe, rest_resp *r, floe_error *err) {
    char *text = body ? dumps(body) : NULL;
    if (body && !text)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = request(c, method, path, text, NULL, retry_safe, r, err);
    free(text); /* jansson's allocator */
    return rc;
}

/* A request whose answer only says whether it worked (200 or 204): body sent to path
 * (both taken, also on failure; NULL path or a NULL body where with_body: out of
 * memory); a 409 becomes conflict_code. */
static int call(floe_catalog *c, const char *method, char *path, bool with_body, json_t *body,
                const char *what, int conflict_code, floe_error *err) {
    rest_resp r;
    resp_init(&r);
    int rc = !path || (with_body && !body)
                 ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                 : request_json(c, method, path, body, true, &r, err);
    floe_free(path);
    if (rc == 0 && r.status != 200 && r.status != 204)
        rc = resp_error(&r, r.status == 409 ? conflict_code : status_code(r.status), what, err);
    resp_free(&r);
    json_decref(body);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * namespaces
 * ------------------------------------------------------------------------------------- */

/* GET a listing route page by page: each page's array `field` goes to fn. A server
 * whose paging does not end is an error, not a loop: a next-page-token it gave before
 * (the paging cycles), 1000 pages in a row without an item, or 100000 pages. What a
 * listing holds is bounded too, as every page is kept until the caller has them all:
 * at most REST_LIST_NAMES_MAX names, REST_LIST_BYTES_MAX bytes of names and
 * REST_LIST_BYTES_MAX bytes of page tokens (those kept to see a cycle). */
static int list_pages(floe_catalog *c, const char *path, const char *query, const char *field,
                      int (*fn)(const json_t *item, floe_strlist *out, floe_error *err),
                      floe_strlist *out, const char *what, floe_error *err) {
    rest_impl *ri = c->impl;
    char *token = NULL;
    floe_keyset seen = {0};
    int rc = 0, empty = 0;
    size_t name_bytes = 0, token_bytes = 0;
    for (int page = 0;; page++) {
        char *tok = token ? curl_easy_escape(ri->h, token, 0) : NULL;
        char *url = floe_asprintf("%s%s%s%s%s", path, query || tok ? "?" : "", query ? query : "",
                                  query && tok ? "&" : "", tok ? "pageToken=" : "");
        char *full = url && tok ? floe_asprintf("%s%s", url, tok) : NULL;
        curl_free(tok);
        if (!url || (token && !full)) {
            floe_free(url);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        rest_resp r;
        resp_init(&r);
        rc = request(c, "GET", full ? full : url, NULL, NULL, true, &r, err);
        floe_free(url);
        floe_free(full);
        json_t *j = rc == 0 && r.status == 200 ? resp_json(&r) : NULL;
        if (rc == 0 && r.status != 200)
            rc = resp_error(&r, status_code(r.status), what, err);
        else if (rc == 0 && !json_is_array(json_object_get(j, field)))
            rc = floe_error_set(err, FLOE_ECORRUPT, "REST catalog: %s: no \"%s\" in the answer",
                                what, field);
        resp_free(&r);
        size_t i;
        json_t *item;
        json_array_foreach(rc == 0 ? json_object_get(j, field) : NULL, i, item) {
            size_t had = out->n;
            if ((rc = fn(item, out, err)) < 0)
                break;
            if (out->n > had)
                name_bytes += strlen(out->items[out->n - 1]) + 1;
            if (out->n > REST_LIST_NAMES_MAX || name_bytes > REST_LIST_BYTES_MAX) {
                rc = floe_error_set(err, FLOE_ELIMIT, "REST catalog: %s: more than %u names "
                                    "or %u MiB of them (page %d): floe stops there (the "
                                    "catalog's paging does not end, or the listing is larger "
                                    "than floe holds)", what, (unsigned)REST_LIST_NAMES_MAX,
                                    (unsigned)(REST_LIST_BYTES_MAX >> 20), page + 1);
                break;
            }
        }
        empty = rc == 0 && json_array_size(json_object_get(j, field)) == 0 ? empty + 1 : 0;
        const char *next = json_string_value(json_object_get(j, "next-page-token"));
        floe_free(token);
        token = rc == 0 && next && *next ? floe_strdup(next) : NULL;
        bool more = rc == 0 && next && *next;
        json_decref(j);
        if (rc < 0)
            goto done;
        if (!more)
            break;
        if (!token)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (floe_keyset_find(&seen, token, strlen(token)))
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "REST catalog: %s: page %d's next-page-token is one the server gave "
                      "before (its paging loops)", what, page + 1);
        if ((token_bytes += strlen(token) + 1) > REST_LIST_BYTES_MAX)
            FLOE_FAIL(err, FLOE_ELIMIT, "REST catalog: %s: the next-page-tokens of %d pages "
                      "add up to more than %u MiB (its paging does not end)", what, page + 1,
                      (unsigned)(REST_LIST_BYTES_MAX >> 20));
        if ((rc = floe_keyset_put(&seen, token, strlen(token), page, NULL)) < 0)
            FLOE_FAIL(err, rc, "out of memory");
        if (empty >= 1000)
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "REST catalog: %s: 1000 pages in a row without an item, each with a "
                      "next-page-token (its paging does not end)", what);
        if (page >= 100000)
            FLOE_FAIL(err, FLOE_ELIMIT, "REST catalog: %s: more than 100000 pages", what);
    }
done:
    floe_free(token);
    floe_keyset_free(&seen);
    return rc;
}

static int take_namespace(const json_t *item, floe_strlist *out, floe_error *err) {
    char *name = ns_dotted(item);
    if (!name) { /* a level floe cannot name (holding a '.'): not listed */
        floe_log(FLOE_LOG_WARN, "REST catalog: a namespace with a '.' in a level is not listed");
        return 0;
    }
    int rc = floe_strlist_push(out, name, err);
    floe_free(name);
    return rc;
}

static int rest_list_namespaces(floe_catalog *c, const char *parent, floe_strlist *out,
                                floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "GET", "namespaces", err));
    char *seg = parent ? ns_segment(ri, parent) : NULL;
    char *q = seg ? floe_asprintf("parent=%s", seg) : NULL;
    floe_free(seg);
    if (parent && !q)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = list_pages(c, "namespaces", q, "namespaces", take_namespace, out, "list namespaces",
                        err);
    floe_free(q);
    return rc;
}

static int rest_namespace_exists(floe_catalog *c, const char *ns, bool *exists, floe_error *err) {
    rest_impl *ri = c->impl;
    bool head = need(c, "HEAD", "namespaces/{namespace}", NULL) == 0;
    if (!head)
        FLOE_FORWARD_IF_ERROR(need(c, "GET", "namespaces/{namespace}", err));
    char *path = table_path(ri, ns, NULL, NULL);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rest_resp r;
    resp_init(&r);
    int rc = request(c, head ? "HEAD" : "GET", path, NULL, NULL, true, &r, err);
    if (rc == 0) {
        if (r.status == 200 || r.status == 204)
            *exists = true;
        else if (r.status == 404)
            *exists = false;
        else
            rc = resp_error(&r, status_code(r.status), "namespace exists", err);
    }
    resp_free(&r);
    floe_free(path);
    return rc;
}

static json_t *props_object(const char *const *keys, const char *const *values, size_t n) {
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++)
        if (json_object_set_new(o, keys[i], json_string(values[i])) < 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static int rest_create_namespace(floe_catalog *c, const char *ns, const char *const *keys,
                                 const char *const *values, size_t n, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(need(c, "POST", "namespaces", err));
    json_t *body = json_pack("{s:o,s:o}", "namespace", ns_array(ns), "properties",
                             props_object(keys, values, n));
    return call(c, "POST", floe_strdup("namespaces"), true, body, "create namespace",
                FLOE_EEXISTS, err);
}

static int rest_drop_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "DELETE", "namespaces/{namespace}", err));
    /* 409 NamespaceNotEmptyException: floe_catalog_drop_namespace's FLOE_EINVALID */
    return call(c, "DELETE", table_path(ri, ns, NULL, NULL), false, NULL, "drop namespace",
                FLOE_EINVALID, err);
}

static int rest_load_namespace_properties(floe_catalog *c, const char *ns, floe_strlist *keys,
                                          floe_strlist *values, floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "GET", "namespaces/{namespace}", err));
    char *path = table_path(ri, ns, NULL, NULL);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rest_resp r;
    resp_init(&r);
    json_t *j = NULL;
    int rc = request(c, "GET", path, NULL, NULL, true, &r, err);
    if (rc == 0 && r.status != 200)
        rc = resp_error(&r, status_code(r.status), "load namespace", err);
    if (rc == 0) {
        j = resp_json(&r);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(j, "properties"), k, v) {
            if (!json_is_string(v))
                continue;
            if ((rc = floe_strlist_push(keys, k, err)) < 0 ||
                (rc = floe_strlist_push(values, json_string_value(v), err)) < 0)
                break;
        }
    }
    json_decref(j);
    resp_free(&r);
    floe_free(path);
    return rc;
}

static int rest_update_namespace_properties(floe_catalog *c, const char *ns,
                                            const char *const *removals, size_t nrem,
                                            const char *const *keys, const char *const *values,
                                            size_t n, floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "POST", "namespaces/{namespace}/properties", err));
    json_t *rem = json_array();
    for (size_t i = 0; rem && i < nrem; i++)
        if (json_array_append_new(rem, json_string(removals[i])) < 0) {
            json_decref(rem);
            rem = NULL;
        }
    json_t *body = rem ? json_pack("{s:o,s:o}", "removals", rem, "updates",
                                   props_object(keys, values, n))
                       : NULL;
    return call(c, "POST", table_path(ri, ns, NULL, "/properties"), true, body,
                "update namespace properties", FLOE_EEXISTS, err);
}

/* ---------------------------------------------------------------------------------------
 * tables
 * ------------------------------------------------------------------------------------- */

static int take_table(const json_t *item, floe_strlist *out, floe_error *err) {
    const char *name = json_string_value(json_object_get(item, "name"));
    if (!name || !*name)
        return floe_error_set(err, FLOE_ECORRUPT, "REST catalog: list tables: an identifier "
                              "without a name");
    return floe_strlist_push(out, name, err);
}

static int rest_list_tables(floe_catalog *c, const char *ns, floe_strlist *names,
                            floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "GET", "namespaces/{namespace}/tables", err));
    char *path = table_path(ri, ns, NULL, "/tables");
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = list_pages(c, path, NULL, "identifiers", take_table, names, "list tables", err);
    floe_free(path);
    return rc;
}

/* The ETag cache slot of a table, or NULL. */
static rest_etag *etag_find(rest_impl *ri, const char *key) {
    for (size_t i = 0; i < ri->netags; i++)
        if (ri->etags[i].key && !strcmp(ri->etags[i].key, key))
            return &ri->etags[i];
    return NULL;
}

static void etag_clear(rest_etag *e) {
    floe_free(e->key);
    floe_free(e->etag);
    floe_free(e->location);
    memset(e, 0, sizeof *e);
}

/* Remember (or with etag NULL forget) what a load answered. Best effort. */
static void etag_put(rest_impl *ri, const char *key, const char *etag, const char *location) {
    rest_etag *e = etag_find(ri, key);
    if (e)
        etag_clear(e);
    if (!etag)
        return;
    for (size_t i = 0; !e && i < ri->netags; i++)
        if (!ri->etags[i].key)
            e = &ri->etags[i]; /* a slot forgotten before */
    if (!e) {
        if (ri->netags < REST_ETAGS_MAX) {
            e = &ri->etags[ri->netags++];
        } else {
            e = &ri->etags[ri->etag_next++ % REST_ETAGS_MAX];
            etag_clear(e);
        }
    }
    e->key = floe_strdup(key);
    e->etag = floe_strdup(etag);
    e->location = floe_strdup(location);
    if (!e->key || !e->etag || !e->location)
        etag_clear(e);
}

static int rest_load_table(floe_catalog *c, const char *ns, const char *name, char **location,
                           floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "GET", "namespaces/{namespace}/tables/{table}", err));
    char *path = table_path(ri, ns, name, NULL);
    char *key = floe_asprintf("%s\x1f%s", ns, name);
    json_t *j = NULL;
    int rc = 0;
    rest_resp r;
    resp_init(&r);
    if (!path || !key)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    rest_etag *cached = etag_find(ri, key);
    pthread_mutex_lock(&ri->mu); /* ri->delegation is the request's (R6) */
    ri->delegation = true;
    rc = request(c, "GET", path, NULL, cached ? cached->etag : NULL, true, &r, err);
    ri->delegation = false;
    pthread_mutex_unlock(&ri->mu);
    if (rc < 0)
        goto done;
    if (r.status == 304 && cached) {
        char *loc = floe_strdup(cached->location);
        if (!loc)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        *location = loc;
        goto done;
    }
    if (r.status != 200)
        FLOE_CHECK(resp_error(&r, status_code(r.status), "load table", err));
    j = resp_json(&r);
    const char *loc = json_string_value(json_object_get(j, "metadata-location"));
    if (!loc)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "REST catalog: table %s.%s has no metadata location "
                  "(a staged create?)", ns, name);
    FLOE_CHECK(rest_vends_take(ri->vends, ns, name, j, err));
    char *copy = floe_strdup(loc);
    if (!copy)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    etag_put(ri, key, r.etag, copy);
    *location = copy;
done:
    json_decref(j);
    resp_free(&r);
    floe_free(path);
    floe_free(key);
    return rc;
}

static int rest_new_metadata_location(floe_catalog *c, const char *metadata_dir,
                                      const char *base, bool gzip, char **out, floe_error *err) {
    (void)c;
    return floe_catalog_uuid_metadata_location(metadata_dir, base, gzip, out, err);
}

static int rest_register_table(floe_catalog *c, const char *ns, const char *name,
                               const char *metadata_location, floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "POST", "namespaces/{namespace}/register", err));
    json_t *body = json_pack("{s:s,s:s}", "name", name, "metadata-location", metadata_location);
    return call(c, "POST", table_path(ri, ns, NULL, "/register"), true, body, "register table",
                FLOE_EEXISTS, err);
}

static int rest_rename_table(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                             const char *to_name, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(need(c, "POST", "tables/rename", err));
    json_t *body = json_pack("{s:{s:o,s:s},s:{s:o,s:s}}", "source", "namespace", ns_array(ns),
                             "name", name, "destination", "namespace", ns_array(to_ns), "name",
                             to_name);
    return call(c, "POST", floe_strdup("tables/rename"), true, body, "rename table",
                FLOE_EEXISTS, err);
}

/* DELETE .../tables/{table}: purgeRequested=true asks the server to delete the table's
 * files (floe_catalog_drop_table_purge), false keeps them (floe_catalog_drop_table). */
static int drop_table(floe_catalog *c, const char *ns, const char *name, bool purge,
                      floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "DELETE", "namespaces/{namespace}/tables/{table}", err));
    return call(c, "DELETE",
                table_path(ri, ns, name, purge ? "?purgeRequested=true" : "?purgeRequested=false"),
                false, NULL, "drop table", FLOE_EEXISTS, err);
}

static int rest_drop_table(floe_catalog *c, const char *ns, const char *name, floe_error *err) {
    return drop_table(c, ns, name, false, err);
}

static int rest_drop_table_purge(floe_catalog *c, const char *ns, const char *name,
                                 floe_error *err) {
    return drop_table(c, ns, name, true, err);
}

static int rest_swap(floe_catalog *c, const char *ns, const char *name, const char *expected,
                     const char *new_location, floe_error *err) {
    (void)c, (void)expected, (void)new_location;
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "table %s.%s: a REST catalog commits changes, not a pointer to a "
                          "metadata file (floe_catalog_commit_changes)", ns, name);
}

static int rest_check_commit(floe_catalog *c, floe_error *err) {
    return need(c, "POST", "namespaces/{namespace}/tables/{table}", err);
}

/* One commit request: 0 with a 200 in r, FLOE_ECONFLICT for a 409, FLOE_EUNKNOWN_STATE
 * when it may have landed (R2), another error when it did not. */
static int commit_once(floe_catalog *c, const char *ns, const char *name, const char *path,
                       json_t *body, rest_resp *r, floe_error *err) {
    rest_impl *ri = c->impl;
    ri->fresh = true;
    int rc = request_json(c, "POST", path, body, false, r, err);
    ri->fresh = false;
    if (rc < 0) {
        if (r->sent) { /* R2 */
            char why[FLOE_ERROR_MSG_MAX]; /* the whole cause */
            snprintf(why, sizeof why, "%s", err ? err->msg : "?");
            rc = floe_error_set(err, FLOE_EUNKNOWN_STATE, "REST catalog: commit to %s.%s: %s "
                                "after the request was sent", ns, name, why);
        } else {
            floe_error_prefix(err, "REST catalog: commit to %s.%s: ", ns, name);
        }
        return rc;
    }
    char what[FLOE_ERROR_MSG_MAX]; /* the prefix commit_cause takes off */
    snprintf(what, sizeof what, "commit to %s.%s", ns, name);
    if (r->status == 409)
        return resp_error(r, FLOE_ECONFLICT, what, err);
    if (r->status == 500 || r->status == 502 || r->status == 503 || r->status == 504)
        return resp_error(r, FLOE_EUNKNOWN_STATE, what, err);
    if (r->status != 200)
        return resp_error(r, status_code(r->status), what, err);
    return 0;
}

/* msg without a leading "REST catalog: commit to NS.NAME: " (commit_once's), so a message
 * quoting it says that once. */
static const char *commit_cause(const char *msg, const char *ns, const char *name) {
    char head[FLOE_ERROR_MSG_MAX];
    int n = snprintf(head, sizeof head, "REST catalog: commit to %s.%s: ", ns, name);
    return n > 0 && (size_t)n < sizeof head && !strncmp(msg, head, (size_t)n) ? msg + n : msg;
}

/* Send a commit request (body gets the table's identifier) until its outcome is known:
 * once without Idempotency-Key (R2); with it (R4) an unknown outcome sends the same
 * request with the same key again, and the server answers from its record when the first
 * one landed, or runs it. A 401 is not retried. The 200 answer in r. */
static int send_commit(floe_catalog *c, const char *ns, const char *name, const char *path,
                       json_t *body, rest_resp *r, floe_error *err) {
    rest_impl *ri = c->impl;
    json_t *id = json_pack("{s:o,s:s}", "namespace", ns_array(ns), "name", name);
    if (!id || json_object_set_new(body, "identifier", id) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    char ikey[37];
    floe_uuid4(ikey);
    ri->idem_key = ri->idem ? ikey : NULL;
    int rc, attempt = 0;
    bool unknown = false; /* some attempt may have landed */
    for (;; attempt++) {
        if (attempt) {
            floe_log(FLOE_LOG_WARN, "REST catalog: commit to %s.%s: %s; sending it again "
                     "with Idempotency-Key %s", ns, name,
                     err ? commit_cause(err->msg, ns, name) : "outcome unknown", ikey);
            struct timespec pause = {0, (100L << attempt) * 1000000L};
            nanosleep(&pause, NULL);
            resp_free(r);
            resp_init(r);
            if (err)
                floe_error_clear(err);
        }
        rc = commit_once(c, ns, name, path, body, r, err);
        unknown |= rc == FLOE_EUNKNOWN_STATE;
        if (rc != FLOE_EUNKNOWN_STATE || !ri->idem_key || attempt == REST_IDEM_RETRIES)
            break;
    }
    ri->idem_key = NULL;
    /* A retry that fails says nothing of the attempt before it, which may have landed:
     * a 409 may be that attempt's own change, and a retry that cannot connect (the
     * server died after committing) or is refused otherwise leaves it as unknown as it
     * was (R4). Only a 200 settles it. */
    if (rc < 0 && rc != FLOE_EUNKNOWN_STATE && unknown) {
        char why[FLOE_ERROR_MSG_MAX]; /* the whole cause, its prefix once */
        snprintf(why, sizeof why, "%s", err ? commit_cause(err->msg, ns, name) : "?");
        rc = floe_error_set(err, FLOE_EUNKNOWN_STATE, "REST catalog: commit to %s.%s: the "
                            "outcome of an earlier attempt is unknown and the retry with the "
                            "same Idempotency-Key failed: %s", ns, name, why);
    }
    return rc;
}

/* The metadata-location and metadata of a LoadTableResult the catalog answered to a
 * change it made (caller frees both); `unknown` is the code when they are missing. */
static int take_result(const json_t *j, const char *ns, const char *name, int unknown,
                       char **location, char **metadata_json, floe_error *err) {
    const char *l = json_string_value(json_object_get(j, "metadata-location"));
    const json_t *m = json_object_get(j, "metadata");
    if (!l || !json_is_object(m))
        return floe_error_set(err, unknown, "REST catalog: %s.%s: the answer has no "
                              "metadata-location and metadata", ns, name);
    char *loc = floe_strdup(l);
    char *text = dumps(m);
    char *md = text ? floe_strdup(text) : NULL;
    free(text);
    if (!loc || !md) {
        floe_free(loc);
        floe_free(md);
        return floe_error_set(err, unknown, "REST catalog: %s.%s: out of memory reading the "
                              "answer", ns, name);
    }
    *location = loc;
    *metadata_json = md;
    return 0;
}

static int rest_commit_changes(floe_catalog *c, const char *ns, const char *name,
                               const char *base_json, const char *new_json, char **location,
                               char **metadata_json, floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(rest_check_commit(c, err));
    json_t *body = NULL, *j = NULL;
    char *path = table_path(ri, ns, name, NULL);
    char *key = floe_asprintf("%s\x1f%s", ns, name);
    int rc = 0;
    rest_resp r;
    resp_init(&r);
    if (!path || !key)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_rest_commit_request(base_json, new_json, &body, err));
    etag_put(ri, key, NULL, NULL);
    FLOE_CHECK(send_commit(c, ns, name, path, body, &r, err));
    j = resp_json(&r);
    FLOE_CHECK(take_result(j, ns, name, FLOE_EUNKNOWN_STATE, location, metadata_json, err));
done:
    json_decref(j);
    json_decref(body);
    resp_free(&r);
    floe_free(path);
    floe_free(key);
    return rc;
}

/* The element of a metadata document's array whose id_key is the document's current_key
 * (the current schema, the default spec or sort order), or NULL. */
static const json_t *current_of(const json_t *doc, const char *array, const char *id_key,
                                const char *current_key) {
    const json_t *cur = json_object_get(doc, current_key);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, array), i, e) {
        if (json_equal(json_object_get(e, id_key), (json_t *)cur))
            return e;
    }
    return NULL;
}

/* A create request says a schema, a spec, a sort order, a location and properties; a
 * document holding more (snapshots, refs, earlier schemas, specs or orders, statistics)
 * is made by a staged create and a commit that adds all of it. */
static bool create_needs_stage(const json_t *doc) {
    return json_array_size(json_object_get(doc, "snapshots")) > 0 ||
           json_object_size(json_object_get(doc, "refs")) > 0 ||
           json_array_size(json_object_get(doc, "schemas")) > 1 ||
           json_array_size(json_object_get(doc, "partition-specs")) > 1 ||
           json_array_size(json_object_get(doc, "sort-orders")) > 1 ||
           json_array_size(json_object_get(doc, "statistics")) > 0 ||
           json_array_size(json_object_get(doc, "partition-statistics")) > 0;
}

/* POST .../tables (CreateTableRequest) with the document's current schema, default spec
 * and sort order, location and properties. Staged (stage-create: true) when the document
 * holds more than that: the server answers the table it would make and writes nothing,
 * then the commit with assert-create (floe_rest_create_request) makes the table as the
 * document says, in one step. The catalog's answer is adopted either way. */
static int rest_create_table(floe_catalog *c, const char *ns, const char *name,
                             const char *metadata_json, char **location, char **metadata_out,
                             floe_error *err) {
    rest_impl *ri = c->impl;
    FLOE_FORWARD_IF_ERROR(need(c, "POST", "namespaces/{namespace}/tables", err));
    json_t *doc = NULL, *req = NULL, *commit = NULL, *j = NULL;
    char *path = table_path(ri, ns, NULL, "/tables");
    char *tpath = table_path(ri, ns, name, NULL);
    int rc = 0;
    rest_resp r;
    resp_init(&r);
    if (!path || !tpath)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    json_error_t je;
    doc = json_loads(metadata_json, JSON_REJECT_DUPLICATES, &je);
    const json_t *schema = current_of(doc, "schemas", "schema-id", "current-schema-id");
    if (!json_is_object(doc) || !schema)
        FLOE_FAIL(err, FLOE_EINVALID, "table %s.%s: the new metadata has no current schema",
                  ns, name);
    bool stage = create_needs_stage(doc);
    if (stage)
        FLOE_CHECK(rest_check_commit(c, err)); /* both steps offered, before the first */
    req = json_pack("{s:s,s:O,s:b}", "name", name, "schema", schema, "stage-create", stage);
    const json_t *spec = current_of(doc, "partition-specs", "spec-id", "default-spec-id");
    const json_t *order = current_of(doc, "sort-orders", "order-id", "default-sort-order-id");
    const json_t *loc = json_object_get(doc, "location");
    const json_t *props = json_object_get(doc, "properties");
    /* a format version other than the servers' default (2) goes as the reserved
     * "format-version" property, which catalogs read at create (Iceberg's
     * TableProperties.FORMAT_VERSION) and do not keep */
    json_t *req_props = json_is_object(props) ? json_deep_copy(props) : json_object();
    json_int_t version = json_integer_value(json_object_get(doc, "format-version"));
    char vtext[24];
    snprintf(vtext, sizeof vtext, "%lld", (long long)version);
    if (!req || !req_props || (spec && json_object_set(req, "partition-spec", (json_t *)spec) < 0) ||
        (order && json_object_set(req, "write-order", (json_t *)order) < 0) ||
        (json_is_string(loc) && json_object_set(req, "location", (json_t *)loc) < 0) ||
        (version > 0 && version != 2 &&
         json_object_set_new(req_props, "format-version", json_string(vtext)) < 0) ||
        (json_object_size(req_props) && json_object_set(req, "properties", req_props) < 0)) {
        json_decref(req_props);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    json_decref(req_props);
    pthread_mutex_lock(&ri->mu); /* ri->delegation is the request's (R6) */
    ri->delegation = true;
    rc = request_json(c, "POST", path, req, false, &r, err);
    ri->delegation = false;
    pthread_mutex_unlock(&ri->mu);
    if (rc < 0)
        goto done;
    if (r.status != 200)
        FLOE_CHECK(resp_error(&r, status_code(r.status), stage ? "stage create" : "create table",
                              err));
    j = resp_json(&r);
    if (!json_is_object(json_object_get(j, "metadata")))
        FLOE_FAIL(err, FLOE_ECORRUPT, "REST catalog: create %s.%s: the answer has no metadata",
                  ns, name);
    FLOE_CHECK(rest_vends_take(ri->vends, ns, name, j, err));
    if (stage) {
        /* the staged answer only says the server would make the table: the commit makes
         * it, and is refused (409) when another create came first */
        json_decref(j);
        j = NULL;
        resp_free(&r);
        resp_init(&r);
        FLOE_CHECK(floe_rest_create_request(metadata_json, &commit, err));
        rc = send_commit(c, ns, name, tpath, commit, &r, err);
        if (rc == FLOE_ECONFLICT) { /* err's message copied first: it is rewritten in place */
            char why[FLOE_ERROR_MSG_MAX];
            snprintf(why, sizeof why, "%s", err ? err->msg : "409");
            rc = floe_error_set(err, FLOE_EEXISTS, "table %s.%s already exists (%s)", ns, name,
                                why);
        }
        FLOE_CHECK(rc);
        j = resp_json(&r);
    }
    FLOE_CHECK(take_result(j, ns, name, stage ? FLOE_EUNKNOWN_STATE : FLOE_ECORRUPT, location,
                           metadata_out, err));
done:
    json_decref(doc);
    json_decref(req);
    json_decref(commit);
    json_decref(j);
    resp_free(&r);
    floe_free(path);
    floe_free(tpath);
    return rc;
}

/* Fresh credentials of a table (rest_vend_refresh_fn): the credentials route when the
 * server offers it, else a load that asks for them. */
static int rest_refresh_credentials(void *ctx, const char *ns, const char *name,
                                    json_t **answer, floe_error *err) {
    floe_catalog *c = ctx;
    rest_impl *ri = c->impl;
    bool route = need(c, "GET", "namespaces/{namespace}/tables/{table}/credentials", NULL) == 0;
    char *path = table_path(ri, ns, name, route ? "/credentials" : NULL);
    rest_resp r;
    resp_init(&r);
    int rc = 0;
    *answer = NULL;
    if (!path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_lock(&ri->mu); /* ri->delegation is the request's */
    ri->delegation = !route;
    rc = request(c, "GET", path, NULL, NULL, true, &r, err);
    ri->delegation = false;
    pthread_mutex_unlock(&ri->mu);
    if (rc < 0)
        goto done;
    if (r.status != 200)
        FLOE_CHECK(resp_error(&r, status_code(r.status), route ? "load credentials" : "load table",
                              err));
    if (!(*answer = resp_json(&r)))
        FLOE_FAIL(err, FLOE_ECORRUPT, "REST catalog: %s.%s: the credentials answer is not a JSON "
                  "object", ns, name);
done:
    resp_free(&r);
    floe_free(path);
    return rc;
}

static floe_io *rest_table_io(floe_catalog *c, const char *ns, const char *name) {
    rest_impl *ri = c->impl;
    return rest_vends_io(ri->vends, ns, name);
}

static void rest_close(floe_catalog *c) {
    rest_impl *ri = c->impl;
    if (!ri)
        return;
    rest_vends_free(ri->vends); /* V1: after every table of the catalog */
    if (ri->h)
        curl_easy_cleanup(ri->h);
    pthread_mutex_destroy(&ri->mu);
    curl_slist_free_all(ri->headers);
    floe_strlist_free(&ri->endpoints);
    for (size_t i = 0; i < ri->netags; i++)
        etag_clear(&ri->etags[i]);
    floe_free(ri->base);
    floe_free(ri->prefix);
    floe_free(ri->sep);
    floe_free(ri->token);
    floe_free(ri->credential);
    floe_free(ri->scope);
    floe_free(ri->oauth_uri);
    floe_free(ri->config_url);
    floe_free(ri->sigv4);
    floe_free(ri);
    c->impl = NULL;
}

static const floe_catalog_ops rest_ops = {
    .type = "rest",
    .swap_by_create = false,
    /* a commit whose connection dropped may still be running on the server (R2) */
    .swap_outcome_final = false,
    .list_namespaces = rest_list_namespaces,
    .namespace_exists = rest_namespace_exists,
    .create_namespace = rest_create_namespace,
    .drop_namespace = rest_drop_namespace,
    .load_namespace_properties = rest_load_namespace_properties,
    .update_namespace_properties = rest_update_namespace_properties,
    .list_tables = rest_list_tables,
    .load_table = rest_load_table,
    .new_metadata_location = rest_new_metadata_location,
    .register_table = rest_register_table,
    .rename_table = rest_rename_table,
    .drop_table = rest_drop_table,
    .drop_table_purge = rest_drop_table_purge,
    .swap = rest_swap,
    .commit_changes = rest_commit_changes,
    .check_commit = rest_check_commit,
    .ping = rest_ping,
    .create_table = rest_create_table,
    .table_io = rest_table_io,
    .close = rest_close,
};

/* ---------------------------------------------------------------------------------------
 * open: configuration
 * ------------------------------------------------------------------------------------- */

static int set_str(char **field, const char *v, floe_error *err) {
    char *copy = v ? floe_strdup(v) : NULL;
    if (v && !copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(*field);
    *field = copy;
    return 0;
}

/* The base uri without trailing '/'. */
static int set_base(rest_impl *ri, const char *uri, floe_error *err) {
    if (strncmp(uri, "http://", 7) && strncmp(uri, "https://", 8))
        return floe_error_set(err, FLOE_EINVALID, "REST catalog uri %s: not http:// or https://",
                              uri);
    FLOE_FORWARD_IF_ERROR(set_str(&ri->base, uri, err));
    size_t n = strlen(ri->base);
    while (n > 8 && ri->base[n - 1] == '/')
        ri->base[--n] = '\0';
    return 0;
}

/* GET /v1/config; then the merged properties: the server's defaults, the client's,
 * the server's overrides (prefix, uri, warehouse, namespace-separator). *warehouse gets
 * the merged warehouse (caller frees; NULL: none). */
static int load_config(floe_catalog *c, const char *client_prefix, const char *client_wh,
                       char **warehouse, floe_error *err) {
    rest_impl *ri = c->impl;
    char *wq = client_wh ? curl_easy_escape(ri->h, client_wh, 0) : NULL;
    char *url = floe_asprintf("%s/v1/config%s%s", ri->base, wq ? "?warehouse=" : "", wq ? wq : "");
    curl_free(wq);
    rest_resp r;
    resp_init(&r);
    json_t *j = NULL;
    int rc = 0;
    if (!url)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (ri->credential)
        FLOE_CHECK(fetch_token(ri, err));
    FLOE_CHECK(http(ri, "GET", url, NULL, NULL, NULL, true, &r, err));
    if (r.status != 200)
        FLOE_CHECK(resp_error(&r, status_code(r.status), "GET /v1/config", err));
    j = resp_json(&r);
    if (!j)
        FLOE_FAIL(err, FLOE_ECORRUPT, "REST catalog %s: /v1/config did not answer a JSON object",
                  ri->base);
    const json_t *defaults = json_object_get(j, "defaults");
    const json_t *overrides = json_object_get(j, "overrides");
    static const char *const keys[] = {"prefix", "uri", "warehouse", "namespace-separator"};
    const char *merged[4] = {NULL, NULL, NULL, NULL};
    const char *client[4] = {client_prefix, NULL, client_wh, NULL};
    for (size_t i = 0; i < 4; i++) {
        const char *d = json_string_value(json_object_get(defaults, keys[i]));
        const char *o = json_string_value(json_object_get(overrides, keys[i]));
        merged[i] = o ? o : client[i] ? client[i] : d;
    }
    if (merged[0] && *merged[0]) {
        /* the prefix is one path segment or several: each escaped, '/' kept */
        floe_buf b;
        floe_buf_init(&b, 4096);
        const char *p = merged[0];
        while (*p == '/')
            p++;
        while (*p) {
            const char *slash = strchr(p, '/');
            size_t n = slash ? (size_t)(slash - p) : strlen(p);
            char *e = curl_easy_escape(ri->h, p, (int)n);
            if (!e || (b.len && floe_buf_append_byte(&b, '/') < 0) ||
                floe_buf_append(&b, e, strlen(e)) < 0) {
                curl_free(e);
                floe_buf_free(&b);
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
            curl_free(e);
            p += n;
            while (*p == '/')
                p++;
        }
        if (floe_buf_append_byte(&b, 0) < 0) {
            floe_buf_free(&b);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        floe_free(ri->prefix);
        ri->prefix = (char *)b.data;
    }
    if (merged[1] && *merged[1])
        FLOE_CHECK(set_base(ri, merged[1], err));
    if (merged[3] && *merged[3])
        FLOE_CHECK(set_str(&ri->sep, merged[3], err)); /* sent url-encoded, as given */
    ri->idem = json_is_string(json_object_get(j, "idempotency-key-lifetime"));
    const json_t *eps = json_object_get(j, "endpoints");
    if (json_is_array(eps)) {
        ri->have_endpoints = true;
        size_t i;
        json_t *e;
        json_array_foreach(eps, i, e) {
            if (json_is_string(e))
                FLOE_CHECK(floe_strlist_push(&ri->endpoints, json_string_value(e), err));
        }
    }
    *warehouse = NULL;
    if (merged[2] && !(*warehouse = floe_strdup(merged[2])))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_free(ri->config_url);
    ri->config_url = url;
    url = NULL;
done:
    json_decref(j);
    resp_free(&r);
    floe_free(url);
    return rc;
}

/* A warehouse that is a location (a URI with a scheme, or an absolute path) rather than
 * a name the server knows its warehouse by. */
static bool is_location(const char *wh) {
    return wh && (wh[0] == '/' || strstr(wh, "://") || !strncmp(wh, "file:", 5));
}

int floe_catalog_open_rest(floe_io *io, const char *uri, const char *name, const char *warehouse,
                           const floe_rest_properties *props, floe_catalog **out,
                           floe_error *err) {
    floe_rest_properties none = {0};
    if (!props)
        props = &none;
    bool sigv4 = false;
    if (props->sigv4_enabled) {
        if (!strcasecmp(props->sigv4_enabled, "true"))
            sigv4 = true;
        else if (strcasecmp(props->sigv4_enabled, "false"))
            return floe_error_set(err, FLOE_EINVALID, "REST catalog %s: rest.sigv4-enabled "
                                  "\"%s\": expected true or false", uri, props->sigv4_enabled);
    }
    /* libcurl first: every other function here runs on a catalog this opened */
    if (!floe_lazy_curl(err)) {
        floe_error_prefix(err, "REST catalog %s: ", uri);
        return err ? err->code : FLOE_EUNSUPPORTED;
    }
    pthread_once(&curl_once, curl_setup);
    if (!curl_ready)
        return floe_error_set(err, FLOE_EIO, "libcurl could not be initialised");
    rest_impl *ri = floe_calloc(1, sizeof *ri);
    floe_catalog *c = NULL;
    char *wh = NULL;
    int rc = 0;
    if (!ri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (!(ri->h = curl_easy_init())) {
        floe_free(ri);
        return floe_error_set(err, FLOE_EIO, "libcurl: no easy handle");
    }
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE); /* refresh -> request */
    pthread_mutex_init(&ri->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    /* the shell first, so every failure below unwinds through rest_close */
    rc = floe_catalog_alloc(&rest_ops, name, is_location(warehouse) ? warehouse : NULL, &c, err);
    if (rc < 0) {
        curl_easy_cleanup(ri->h);
        pthread_mutex_destroy(&ri->mu);
        floe_free(ri);
        return rc;
    }
    c->impl = ri;
    if (io)
        c->io = io;
    ri->io = c->io;
    FLOE_CHECK(rest_vends_new(c->io, rest_refresh_credentials, c, &ri->vends, err));
    if (sigv4) {
        /* the signing region defaults to the S3 region of the I/O context, the signing
         * name to execute-api (as PyIceberg and Iceberg Java) */
        const char *region = props->signing_region ? props->signing_region
                                                   : floe_io_s3_region(c->io);
        const char *service = props->signing_name ? props->signing_name : "execute-api";
        if (!*region || !*service || strchr(region, ':') || strchr(service, ':'))
            FLOE_FAIL(err, FLOE_EINVALID, "REST catalog %s: rest.signing-region \"%s\" or "
                      "rest.signing-name \"%s\": empty or with a ':'", uri, region, service);
        if (!(ri->sigv4 = floe_asprintf("aws:amz:%s:%s", region, service)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    FLOE_CHECK(set_base(ri, uri, err));
    FLOE_CHECK(set_str(&ri->sep, "%1F", err));
    /* R7: the settings were checked as they were read (floe_rest_properties_take); a
     * caller that filled props itself is held to the same rule */
    if (props->token && holds_control(props->token))
        FLOE_FAIL(err, FLOE_EINVALID, "REST catalog %s: token: the value holds control "
                  "characters (it would go into the Authorization header)", uri);
    for (size_t i = 0; i < props->nheaders; i++)
        if (holds_control(props->header_values[i]))
            FLOE_FAIL(err, FLOE_EINVALID, "REST catalog %s: header.%s: the value holds control "
                      "characters", uri, props->header_names[i]);
    FLOE_CHECK(set_str(&ri->token, props->token, err));
    FLOE_CHECK(set_str(&ri->credential, props->credential, err));
    FLOE_CHECK(set_str(&ri->scope, props->scope, err));
    if (props->oauth2_server_uri)
        FLOE_CHECK(set_str(&ri->oauth_uri, props->oauth2_server_uri, err));
    else if (!(ri->oauth_uri = floe_asprintf("%s/v1/oauth/tokens", ri->base)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < props->nheaders; i++) {
        char *line = floe_asprintf("%s: %s", props->header_names[i], props->header_values[i]);
        struct curl_slist *t = line ? curl_slist_append(ri->headers, line) : NULL;
        floe_free(line);
        if (!t)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        ri->headers = t;
    }
    FLOE_CHECK(load_config(c, props->prefix, warehouse, &wh, err));
    /* new tables go under the warehouse when it is a location; a warehouse known by
     * name leaves them to the namespace's location property */
    if (is_location(wh)) {
        char *abs = NULL;
        FLOE_CHECK(floe_io_uri_absolute(wh, NULL, &abs, err));
        floe_free(c->warehouse);
        c->warehouse = abs;
        c->no_location_root = false;
    } else {
        c->no_location_root = true;
    }
    *out = c;
    c = NULL;
done:
    floe_free(wh);
    floe_catalog_close(c);
    return rc;
}
