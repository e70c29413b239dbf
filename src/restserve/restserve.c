/*
 * restserve.c - the HTTP side of `floe catalog serve`: libmicrohttpd, request bodies,
 * the router over the REST catalog paths, and the error form of the spec
 * (open-api/rest-catalog-open-api.yaml: IcebergErrorResponse, ErrorModel).
 *
 * Paths: libmicrohttpd's own unescaping is turned off (unescape_none), so the router
 * splits the raw path on '/' first and percent-decodes each segment after: a table
 * named "a/b" arrives as a%2Fb and stays one segment. A {namespace} segment holds the
 * levels joined by 0x1F (%1F); floe's catalog stores them joined by '.', so a level
 * holding '.' is refused with 400. Query values are decoded the same way.
 *
 * Each request but GET /v1/config takes one of the server's catalog handles for its run
 * (RS_CATALOG_HANDLES: one thread per handle at a time, as floe/catalog.h requires). It
 * waits at most max_wait_ms for one; then 503 + Retry-After, so a burst of slow requests
 * (loads of a huge table, a transaction over many tables) delays others by a bounded
 * time instead of queueing them without end. The answer is built in memory and held until
 * its last byte is sent; answers over RS_SMALL_ANSWER are taken from a byte budget
 * (max_answer_bytes) first, so clients that read slowly cannot make the server hold
 * answers without bound (503 + Retry-After past it).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include "common/lazy_mhd.h"
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/connguard.h"
#include "common/httphead.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "rs_internal.h"

#define DEFAULT_LISTEN "127.0.0.1:8181"
#define DEFAULT_MAX_BODY ((size_t)16 << 20)
#define DEFAULT_MAX_INFLIGHT ((int64_t)64 << 20)
#define DEFAULT_MAX_WAIT_MS ((int64_t)10000)
#define DEFAULT_MAX_ANSWERS ((int64_t)256 << 20)
/* Answers this small are not taken from the answers budget: the connection limit (256)
 * bounds what they hold, and the small answers (config, errors, namespaces) stay served
 * while large ones wait. */
#define RS_SMALL_ANSWER ((size_t)64 << 10)
/* The table metadata a commit may write: a load parses it into about 8.7 times its size
 * (docs/DESIGN.md, "Hostile files"), so 8 handles loading 16 MiB documents hold about 1.1 GiB;
 * 16 MiB is some 20,000 snapshots with their summaries, which expiry keeps far below. */
#define DEFAULT_MAX_METADATA ((size_t)16 << 20)
/* The request line's target and the headers each: past it, 414 / 431 in the spec's
 * ErrorModel. libmicrohttpd holds a request's head in the connection's memory pool and
 * answers past that with an HTML page of its own; its pool (MHD_MEM) is made larger than
 * the limit, so floe's handler sees such a request and answers first. */
#define MAX_HEAD_BYTES ((size_t)32 << 10)
#define MHD_MEM ((size_t)256 << 10)

/* Slow and idle clients (common/connguard.h), as floe serve's defaults: 256 connections
 * served at once, an idle or slow one making room for a newcomer; headers (and keep-alive
 * idle time) within 10 s, a body within 30 s. */
static const floe_connguard_config GUARD = {256, 10000, 30000};

/* ---------------------------------------------------------------------------------------
 * answers
 * ------------------------------------------------------------------------------------- */

int rs_error(rs_resp *r, int status, const char *type, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->status = status;
    r->etag[0] = 0;
    floe_buf_reset(&r->body);
    FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, "{\"error\":{\"message\":")); /* checked below */
    /* stray bytes (a path's raw bytes, a sequence vsnprintf cut) as \xHH: valid JSON */
    FLOE_IGNORE_RESULT(floe_json_append_text(&r->body, (const uint8_t *)msg, strlen(msg)));
    FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, ",\"type\":\"%s\",\"code\":%d}}", type, status));
    return 0;
}

int rs_floe_error(rs_resp *r, int rc, const floe_error *err, const char *not_found_type) {
    const char *msg = err && err->msg[0] ? err->msg : floe_strerror(rc);
    switch (rc) {
    case FLOE_ENOTFOUND:
        return rs_error(r, 404, not_found_type, "%s", msg);
    case FLOE_EEXISTS:
        return rs_error(r, 409, "AlreadyExistsException", "%s", msg);
    case FLOE_EINVALID:
    case FLOE_ESCHEMA:
    case FLOE_ECORRUPT:
    case FLOE_ELIMIT:
        return rs_error(r, 400, "BadRequestException", "%s", msg);
    case FLOE_EUNSUPPORTED:
        return rs_error(r, 406, "UnsupportedOperationException", "%s", msg);
    case FLOE_ECONFLICT:
        return rs_error(r, 409, "CommitFailedException", "%s", msg);
    case FLOE_EUNKNOWN_STATE:
        return rs_error(r, 500, "CommitStateUnknownException", "%s", msg);
    case FLOE_EBUSY:
    case FLOE_ECANCELLED:
        return rs_error(r, 503, "ServiceUnavailableException", "%s", msg);
    default:
        return rs_error(r, 500, "InternalServerError", "%s", msg);
    }
}

bool rs_abandoned(const rs_req *q) {
    if (atomic_load(&q->s->stopping))
        return true;
    const union MHD_ConnectionInfo *ci =
        q->conn ? MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;
    if (!ci)
        return false;
    /* the handler runs on the connection's own thread: nothing else reads the socket now */
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0)
        return false;
    if (p.revents & (POLLHUP | POLLRDHUP | POLLERR))
        return true;
    char byte;
    return (p.revents & POLLIN) && recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* ---------------------------------------------------------------------------------------
 * paths, queries, namespaces
 * ------------------------------------------------------------------------------------- */

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode s[0..n) (caller frees); NULL for a bad escape, a NUL byte, bytes that
 * are not well-formed UTF-8 (names are UTF-8) or OOM. */
static char *pct_decode(const char *s, size_t n, bool plus_is_space) {
    char *out = floe_malloc(n + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 1 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi | lo) == 0) {
                floe_free(out);
                return NULL;
            }
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        out[k++] = c;
    }
    out[k] = 0;
    if (!floe_utf8_valid((const uint8_t *)out, k)) {
        floe_free(out);
        return NULL;
    }
    return out;
}

/* The first query parameter whose name or value does not decode (pct_decode), for
 * bad_query. */
typedef struct query_check {
    char name[64];
    bool bad;
} query_check;

static enum MHD_Result check_query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value) {
    (void)kind;
    query_check *qc = cls;
    char *k = pct_decode(key, strlen(key), true);
    char *v = value ? pct_decode(value, strlen(value), true) : NULL;
    bool bad = !k || (value && !v);
    floe_free(k);
    floe_free(v);
    if (!bad)
        return MHD_YES;
    qc->bad = true;
    snprintf(qc->name, sizeof qc->name, "%s", key);
    return MHD_NO;
}

/* True, with a 400 in r, when a query parameter's name or value holds a NUL byte (%00),
 * an escape that is not %HH or bytes that are not UTF-8: refused, rather than read as
 * absent (a purgeRequested=%00 dropping without a purge, a pageToken=%00 restarting the
 * listing). */
static bool bad_query(const rs_req *q, rs_resp *r) {
    query_check qc = {.bad = false};
    if (!q->conn)
        return false;
    MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, check_query_arg, &qc);
    if (qc.bad)
        rs_error(r, 400, "BadRequestException",
                 "query parameter %s: bad percent-encoding (an escape not %%HH, a NUL byte "
                 "(%%00) or bytes that are not UTF-8)", qc.name);
    return qc.bad;
}

char *rs_query(const rs_req *q, const char *name) {
    const char *v = MHD_lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, name);
    return v ? pct_decode(v, strlen(v), true) : NULL;
}

const char *rs_header(const rs_req *q, const char *name) {
    return MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, name);
}

void rs_put_namespace(floe_buf *b, const char *dotted) {
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '[')); /* floe_buf keeps its first failure */
    const char *p = dotted;
    for (;;) {
        size_t n = strcspn(p, ".");
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)p, n));
        if (!p[n])
            break;
        FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        p += n + 1;
    }
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ']'));
}

/* Levels (each n bytes at p[i]) joined with '.', refusing empty levels and dots. */
static char *join_levels(const char *const *lv, const size_t *ln, size_t n, rs_resp *r) {
    if (n == 0) {
        rs_error(r, 400, "BadRequestException", "the namespace has no levels");
        return NULL;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ln[i] == 0 || memchr(lv[i], '.', ln[i])) {
            rs_error(r, 400, "BadRequestException",
                     "namespace level %zu is empty or holds '.', which floe's catalog uses "
                     "to join levels", i + 1);
            return NULL;
        }
        total += ln[i] + 1;
    }
    char *out = floe_malloc(total);
    if (!out) {
        rs_error(r, 500, "InternalServerError", "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            out[k++] = '.';
        memcpy(out + k, lv[i], ln[i]);
        k += ln[i];
    }
    out[k] = 0;
    return out;
}

char *rs_namespace_from_json(const json_t *levels, rs_resp *r) {
    if (!json_is_array(levels)) {
        rs_error(r, 400, "BadRequestException", "namespace must be an array of strings");
        return NULL;
    }
    if (json_array_size(levels) > RS_NAMESPACE_LEVELS_MAX) {
        rs_error(r, 400, "BadRequestException",
                 "namespace has %zu levels: floe allows at most %d", json_array_size(levels),
                 RS_NAMESPACE_LEVELS_MAX);
        return NULL;
    }
    size_t n = json_array_size(levels);
    const char *lv[RS_NAMESPACE_LEVELS_MAX];
    size_t ln[RS_NAMESPACE_LEVELS_MAX];
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(levels, i);
        if (!json_is_string(v)) {
            rs_error(r, 400, "BadRequestException", "namespace must be an array of strings");
            return NULL;
        }
        lv[i] = json_string_value(v);
        ln[i] = json_string_length(v);
        if (strlen(lv[i]) != ln[i]) {
            rs_error(r, 400, "BadRequestException", "namespace level holds a NUL character");
            return NULL;
        }
    }
    return join_levels(lv, ln, n, r);
}

bool rs_table_name_ok(const char *name, rs_resp *r) {
    if (strchr(name, '.')) {
        rs_error(r, 400, "BadRequestException",
                 "table name '%s' holds a '.': floe names a table ns.name with the levels "
                 "joined by dots, so a dotted table name would alias a table of another "
                 "namespace",
                 name);
        return false;
    }
    return true;
}

/* A decoded {namespace} segment (levels separated by 0x1F) as a dotted name. */
static char *namespace_from_segment(const char *seg, rs_resp *r) {
    const char *lv[RS_NAMESPACE_LEVELS_MAX];
    size_t ln[RS_NAMESPACE_LEVELS_MAX], n = 0;
    const char *p = seg;
    for (;;) {
        if (n == RS_NAMESPACE_LEVELS_MAX) {
            rs_error(r, 400, "BadRequestException", "namespace has more than %d levels: floe "
                     "allows at most %d", RS_NAMESPACE_LEVELS_MAX, RS_NAMESPACE_LEVELS_MAX);
            return NULL;
        }
        size_t len = strcspn(p, "\x1f");
        lv[n] = p;
        ln[n++] = len;
        if (!p[len])
            break;
        p += len + 1;
    }
    return join_levels(lv, ln, n, r);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rs_page_end(floe_buf *b, const char *next) {
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "],\"next-page-token\":")); /* checked in send */
    if (next)
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)next, strlen(next)));
    else
        FLOE_IGNORE_RESULT(floe_buf_printf(b, "null"));
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
}

int rs_page(const rs_req *q, floe_strlist *sorted, size_t *from, size_t *to, const char **next,
            rs_resp *r) {
    if (sorted->n > 1)
        qsort(sorted->items, sorted->n, sizeof *sorted->items, cmp_str);
    char *token = rs_query(q, "pageToken");
    char *size = rs_query(q, "pageSize");
    size_t start = 0, n = sorted->n;
    if (token && *token)
        while (start < n && strcmp(sorted->items[start], token) <= 0)
            start++;
    size_t end = n;
    int rc = 0;
    if (size) {
        char *e;
        long long v = strtoll(size, &e, 10);
        if (*e || e == size || v < 1) {
            rc = -1;
            rs_error(r, 400, "BadRequestException", "pageSize must be a positive integer, not '%s'",
                     size);
        } else if ((unsigned long long)v < n - start) {
            end = start + (size_t)v;
        }
    }
    floe_free(token);
    floe_free(size);
    *from = start;
    *to = end;
    *next = end < n && end > start ? sorted->items[end - 1] : NULL;
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * router
 * ------------------------------------------------------------------------------------- */

enum { M_GET = 1, M_HEAD = 2, M_POST = 4, M_DELETE = 8 };

static int method_bit(const char *m) {
    return !strcmp(m, "GET") ? M_GET : !strcmp(m, "HEAD") ? M_HEAD : !strcmp(m, "POST") ? M_POST
                                     : !strcmp(m, "DELETE") ? M_DELETE : 0;
}

typedef int (*rs_handler)(rs_req *q, rs_resp *r);

/* The routes, by shape of the path after /v1[/{prefix}]: N = {namespace}, T = {table}. */
typedef struct route {
    const char *shape;
    int method;
    rs_handler fn;
    bool body;
    bool idem; /* the spec gives the route the Idempotency-Key header */
    bool no_handle; /* runs without a catalog handle (never waits for one) */
} route;

static int get_config(rs_req *q, rs_resp *r);

static const route ROUTES[] = {
    {"config", M_GET, get_config, false, false, true},
    {"namespaces", M_GET, rs_list_namespaces, false, false, false},
    {"namespaces", M_POST, rs_create_namespace, true, true, false},
    {"namespaces/N", M_GET, rs_load_namespace, false, false, false},
    {"namespaces/N", M_HEAD, rs_namespace_exists, false, false, false},
    {"namespaces/N", M_DELETE, rs_drop_namespace, false, true, false},
    {"namespaces/N/properties", M_POST, rs_update_namespace_properties, true, true, false},
    {"namespaces/N/tables", M_GET, rs_list_tables, false, false, false},
    {"namespaces/N/tables", M_POST, rs_create_table, true, true, false},
    {"namespaces/N/register", M_POST, rs_register_table, true, true, false},
    {"namespaces/N/tables/T", M_GET, rs_load_table, false, false, false},
    {"namespaces/N/tables/T", M_HEAD, rs_table_exists, false, false, false},
    {"namespaces/N/tables/T", M_POST, rs_commit_table, true, true, false},
    {"namespaces/N/tables/T", M_DELETE, rs_drop_table, false, true, false},
    {"namespaces/N/tables/T/metrics", M_POST, rs_report_metrics, true, false, false},
    {"namespaces/N/tables/T/credentials", M_GET, rs_load_credentials, false, false, false},
    {"tables/rename", M_POST, rs_rename_table, true, true, false},
    {"transactions/commit", M_POST, rs_commit_transaction, true, true, false},
};
#define NROUTES (sizeof ROUTES / sizeof ROUTES[0])

/* GET /v1/config: the prefix, and the endpoints this server has (without the field a
 * client would assume the spec's default set, which includes routes not served here). */
static int get_config(rs_req *q, rs_resp *r) {
    char *wh = rs_query(q, "warehouse");
    /* the warehouse as a path or relative URI names it too (file:///w for /w) */
    char *abs = NULL;
    const char *served = q->s->warehouse; /* no catalog handle here */
    if (wh && *wh && floe_io_uri_absolute(wh, NULL, &abs, NULL) < 0)
        abs = NULL;
    if (wh && *wh && strcmp(wh, q->s->name) && strcmp(wh, served) &&
        (!abs || strcmp(abs, served))) {
        floe_free(abs);
        rs_error(r, 404, "NoSuchWarehouseException",
                 "warehouse %s is not served here (this server serves catalog %s, warehouse %s)",
                 wh, q->s->name, served);
        floe_free(wh);
        return 0;
    }
    floe_free(abs);
    floe_free(wh);
    floe_buf *b = &r->body;
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"defaults\":{},\"overrides\":{\"prefix\":"));
    FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)q->s->name, strlen(q->s->name)));
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "},"));
    if (q->s->idem)
        FLOE_IGNORE_RESULT(floe_buf_printf(b, "\"idempotency-key-lifetime\":\"%s\",",
                                           RS_IDEM_LIFETIME));
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "\"endpoints\":["));
    for (size_t i = 1; i < NROUTES; i++) {
        char ep[128];
        const char *m = ROUTES[i].method == M_GET ? "GET" : ROUTES[i].method == M_HEAD ? "HEAD"
                        : ROUTES[i].method == M_POST ? "POST" : "DELETE";
        snprintf(ep, sizeof ep, "%s /v1/{prefix}/%s", m, ROUTES[i].shape);
        char path[128];
        size_t k = 0;
        for (const char *p = ep; *p && k + 12 < sizeof path; p++) {
            if (p[0] == 'N' && (p[1] == '/' || !p[1]) && p[-1] == '/')
                k += (size_t)snprintf(path + k, sizeof path - k, "{namespace}");
            else if (p[0] == 'T' && (p[1] == '/' || !p[1]) && p[-1] == '/')
                k += (size_t)snprintf(path + k, sizeof path - k, "{table}");
            else
                path[k++] = *p;
        }
        path[k] = 0;
        if (i > 1)
            FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)path, k));
    }
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "]}"));
    r->status = 200;
    return 0;
}

#define MAX_SEGS 8

/* Route q's path; fills q->ns / q->table. Returns the route, or NULL with r set. */
static const route *route_of(rs_req *q, const char *url, rs_resp *r) {
    char *segs[MAX_SEGS];
    size_t nseg = 0;
    const route *found = NULL;
    if (strncmp(url, "/v1/", 4)) {
        rs_error(r, 404, "NotFoundException", "no such route: %s", url);
        return NULL;
    }
    const char *p = url + 4;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (nseg == MAX_SEGS) {
            rs_error(r, 404, "NotFoundException", "no such route: %s", url);
            goto done;
        }
        if (!(segs[nseg] = pct_decode(p, n, false))) {
            rs_error(r, 400, "BadRequestException",
                     "bad percent-encoding in the path %s (an escape not %%HH, a NUL byte or a "
                     "name that is not UTF-8)", url);
            goto done;
        }
        nseg++;
        p += n;
        if (*p == '/')
            p++;
    }
    size_t first = 0;
    if (nseg > 1 && strcmp(segs[0], "namespaces") && strcmp(segs[0], "tables") &&
        strcmp(segs[0], "transactions") && strcmp(segs[0], "config")) {
        if (strcmp(segs[0], q->s->name)) {
            rs_error(r, 404, "NoSuchWarehouseException",
                     "prefix %s is not served here (this server serves catalog %s)", segs[0],
                     q->s->name);
            goto done;
        }
        first = 1;
    }
    int allowed = 0;
    int m = method_bit(q->method);
    for (size_t i = 0; i < NROUTES; i++) {
        const char *sh = ROUTES[i].shape;
        size_t k = first;
        bool match = true;
        while (match && *sh) {
            size_t n = strcspn(sh, "/");
            if (k >= nseg)
                match = false;
            else if (n == 1 && (sh[0] == 'N' || sh[0] == 'T'))
                ;
            else if (strlen(segs[k]) != n || strncmp(segs[k], sh, n))
                match = false;
            k++;
            sh += n;
            if (*sh == '/')
                sh++;
        }
        if (!match || k != nseg || (first && i == 0))
            continue;
        allowed |= ROUTES[i].method;
        if (ROUTES[i].method == m)
            found = &ROUTES[i];
    }
    if (!found) {
        if (allowed)
            rs_error(r, 405, "MethodNotAllowedException", "%s is not served on %s", q->method, url);
        else
            rs_error(r, 404, "NotFoundException", "no such route: %s", url);
        goto done;
    }
    if (nseg > first + 1 && !strcmp(segs[first], "namespaces")) {
        if (!(q->ns = namespace_from_segment(segs[first + 1], r))) {
            found = NULL;
            goto done;
        }
        if (nseg >= first + 4 && !(q->table = floe_strdup(segs[first + 3]))) {
            rs_error(r, 500, "InternalServerError", "out of memory");
            found = NULL;
        }
    }
done:
    for (size_t i = 0; i < nseg; i++)
        floe_free(segs[i]);
    return found;
}

/* ---------------------------------------------------------------------------------------
 * bearer tokens
 * ------------------------------------------------------------------------------------- */

/* Grants are matched on the identifier's parts, never on a joined string: a grant
 * "a.b.t" (or "a.b.*") names namespace "a.b" (everything before its last dot, as namespace
 * levels hold no dots) and table "t" (or every table). Table ns.name is covered when the
 * grant is "*" or its namespace part is ns and its table part is name or "*": a table
 * named "x.y" of namespace "shop" is not reached by "shop.x.*" or "shop.x.y". */
static bool covers_table(const floe_server_token *t, const char *ns, const char *name) {
    size_t nl = strlen(ns);
    for (size_t g = 0; g < t->ngrants; g++) {
        const char *gr = t->grants[g];
        const char *dot = strrchr(gr, '.');
        if (!strcmp(gr, "*"))
            return true;
        if (dot && (size_t)(dot - gr) == nl && !strncmp(gr, ns, nl) &&
            (!strcmp(dot + 1, "*") || !strcmp(dot + 1, name)))
            return true;
    }
    return false;
}

static bool covers_namespace(const floe_server_token *t, const char *ns) {
    for (size_t g = 0; g < t->ngrants; g++)
        if (floe_grant_covers_namespace(t->grants[g], ns ? ns : "*"))
            return true;
    return false;
}

bool rs_may_create_in(const rs_req *q, const char *ns) {
    return !q->token || covers_namespace(q->token, ns);
}

/* True when grant g names a namespace or table at or below namespace ns (anywhere when
 * ns is NULL): the namespace part of g ("a.b" of "a.b.*" or "a.b.t") is ns or under it. */
static bool grant_within(const char *g, const char *ns) {
    const char *dot = strrchr(g, '.');
    if (!dot)
        return !strcmp(g, "*");
    size_t gl = (size_t)(dot - g);
    if (!ns)
        return true;
    size_t nl = strlen(ns);
    return gl >= nl && !strncmp(g, ns, nl) && (gl == nl || g[nl] == '.');
}

bool rs_namespace_visible(const rs_req *q, const char *ns) {
    const floe_server_token *t = q->token;
    if (!t)
        return true;
    const char *dot = strrchr(ns, '.');
    char *parent = dot ? floe_strndup(ns, (size_t)(dot - ns)) : NULL;
    bool ok = false;
    for (size_t g = 0; g < t->ngrants && !ok; g++)
        ok = grant_within(t->grants[g], ns) ||
             (parent && floe_grant_covers_namespace(t->grants[g], parent));
    floe_free(parent);
    return ok;
}

/* The table a JSON identifier {namespace, name} names is covered by t; true for an
 * identifier that is not one: the handler answers its 400, and changes nothing. */
static bool covers_identifier(const floe_server_token *t, const json_t *id) {
    rs_resp scratch = {0};
    floe_buf_init(&scratch.body, 0);
    char *ns = rs_namespace_from_json(json_object_get(id, "namespace"), &scratch);
    const char *name = json_string_value(json_object_get(id, "name"));
    bool ok = !ns || !name || covers_table(t, ns, name);
    floe_free(ns);
    floe_buf_free(&scratch.body);
    return ok;
}

/* What q may do with token t: a route on a table needs a grant covering the table, one on
 * a namespace (or creating one) a grant covering the namespace, listing namespaces a
 * grant at or below the parent (the list is filtered, rs_namespace_visible);
 * rename needs both tables, a transaction every table it changes. The body is parsed. */
static bool permitted(const rs_req *q, const route *rt, const floe_server_token *t) {
    if (!strcmp(rt->shape, "config"))
        return true;
    if (q->table)
        return covers_table(t, q->ns, q->table);
    if (q->ns)
        return covers_namespace(t, q->ns);
    if (!strcmp(rt->shape, "namespaces") && rt->method == M_GET) {
        /* a listing is filtered by the grants (rs_namespace_visible): any grant at or
         * below the parent lets the caller list it */
        char *parent = rs_query(q, "parent");
        rs_resp scratch = {0};
        floe_buf_init(&scratch.body, 0);
        char *dotted = parent && *parent ? namespace_from_segment(parent, &scratch) : NULL;
        bool ok = covers_namespace(t, dotted);
        for (size_t g = 0; g < t->ngrants && !ok; g++)
            ok = grant_within(t->grants[g], dotted);
        floe_free(dotted);
        floe_free(parent);
        floe_buf_free(&scratch.body);
        return ok;
    }
    if (!strcmp(rt->shape, "namespaces")) { /* create */
        rs_resp scratch = {0};
        floe_buf_init(&scratch.body, 0);
        char *ns = rs_namespace_from_json(json_object_get(q->body, "namespace"), &scratch);
        bool ok = !ns || covers_namespace(t, ns); /* a bad body: the handler's 400 */
        floe_free(ns);
        floe_buf_free(&scratch.body);
        return ok;
    }
    if (!strcmp(rt->shape, "tables/rename"))
        return covers_identifier(t, json_object_get(q->body, "source")) &&
               covers_identifier(t, json_object_get(q->body, "destination"));
    if (!strcmp(rt->shape, "transactions/commit")) {
        const json_t *ch = json_object_get(q->body, "table-changes");
        for (size_t i = 0; i < json_array_size(ch); i++)
            if (!covers_identifier(t, json_object_get(json_array_get(ch, i), "identifier")))
                return false;
        return true;
    }
    return false;
}

/* 0 when q carries a known bearer token (q->token set to it) or the server has none,
 * else 401 with the answer in r. */
static int authenticate(rs_req *q, rs_resp *r) {
    if (q->s->ntokens == 0)
        return 0;
    const floe_server_token *t =
        floe_token_find(q->s->tokens, q->s->ntokens, rs_header(q, "Authorization"));
    if (!t)
        return rs_error(r, 401, "NotAuthorizedException",
                        "a bearer token is needed (Authorization: Bearer TOKEN)"),
               401;
    q->token = t;
    return 0;
}

/* 0 when q's token (authenticate) may run route rt, else 403 with the answer in r. */
static int authorize(const rs_req *q, const route *rt, rs_resp *r) {
    const floe_server_token *t = q->token;
    if (t && !permitted(q, rt, t))
        return rs_error(r, 403, "ForbiddenException",
                        "token %s has no grant for this request (%s %s)", t->name, q->method,
                        rt->shape),
               403;
    return 0;
}

/* The grant rt needs is decided by the path (and query) alone: every route but those
 * naming what they touch in the body (create namespace, rename, transaction). */
static bool grant_on_path(const rs_req *q, const route *rt) {
    return !rt->body || q->ns || q->table;
}

/* ---------------------------------------------------------------------------------------
 * libmicrohttpd
 * ------------------------------------------------------------------------------------- */

/* A request while its body arrives. The route, the token and the grant a path decides
 * are checked on the headers; the body is kept only for a route that takes one, its bytes
 * taken from s->bodies before they are stored. */
typedef struct conn_req {
    floe_buf body;
    int64_t held;    /* of s->bodies */
    int64_t wire;    /* body bytes received */
    const route *rt; /* the route, found on the headers */
    char *ns;        /* its {namespace} and {table}, handed to the rs_req */
    char *table;
    const floe_server_token *token;
    int refused;     /* the body could not be kept: FLOE_EBUSY (the budget is in use),
                        FLOE_ELIMIT (past max_body or the whole budget), FLOE_ENOMEM; it
                        is answered once the body is read, the rest being discarded */
    bool answered;   /* refused on its headers alone; what body follows is not read */
} conn_req;

static size_t unescape_none(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls;
    (void)c;
    return strlen(s);
}

/* An answer's body while libmicrohttpd sends it, and the bytes it holds of s->answers. */
typedef struct held_answer {
    floe_rest_server *s;
    char *body;
    int64_t held;
} held_answer;

static void free_answer(void *p) {
    held_answer *a = p;
    if (!a)
        return;
    floe_budget_release(&a->s->answers, &a->held);
    floe_free(a->body);
    floe_free(a);
}

/* Take a successful answer of more than RS_SMALL_ANSWER bytes from s->answers into *held
 * (alone when it is larger than the whole budget); else r becomes a 503 - for a read
 * (GET, HEAD) only, which a retry repeats safely: the answer to a change already made
 * (changed: a POST or DELETE that ran) is held anyway (such requests start only while the
 * budget has room, on_request). */
static void hold_answer(floe_rest_server *s, rs_resp *r, bool changed, int64_t *held) {
    if (r->status >= 400 || r->status == 204 || r->status == 304 || r->body.len <= RS_SMALL_ANSWER)
        return;
    int64_t want = (int64_t)r->body.len;
    int rc = floe_budget_hold(&s->answers, held, want, 0);
    if (rc == FLOE_ELIMIT)
        rc = floe_budget_hold_alone(&s->answers, held, want);
    if (rc == 0)
        return;
    if (changed) {
        floe_budget_hold_anyway(&s->answers, held, want);
        return;
    }
    long long budget = (long long)atomic_load(&s->answers.limit);
    floe_log(FLOE_LOG_INFO, "catalog serve: an answer of %lld bytes refused: the %lld bytes "
             "of answers held for clients at once (--max-answer-bytes) are in use",
             (long long)want, budget);
    rs_error(r, 503, "ServiceUnavailableException",
             "the answer of %lld bytes does not fit now in the %lld bytes of answers the "
             "server holds at once for clients still reading theirs (--max-answer-bytes); "
             "retry later", (long long)want, budget);
}

/* Send r on c (changed: r answers a change that ran, hold_answer). */
static enum MHD_Result send_resp(floe_rest_server *s, struct MHD_Connection *c, rs_resp *r,
                                 bool changed) {
    if (floe_buf_error(&r->body) < 0) {
        floe_buf_reset(&r->body);
        r->body.error = 0;
        rs_error(r, 500, "InternalServerError", "out of memory building the answer");
    }
    held_answer *a = NULL;
    size_t len = 0;
    if (r->status != 204 && r->status != 304) {
        if (!(a = floe_calloc(1, sizeof *a)))
            return MHD_NO;
        a->s = s;
        hold_answer(s, r, changed, &a->held);
        if (!(a->body = floe_buf_detach(&r->body, &len))) {
            free_answer(a);
            a = NULL;
        }
    }
    struct MHD_Response *resp =
        a ? MHD_create_response_from_buffer_with_free_callback_cls(len, a->body, free_answer, a)
          : MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free_answer(a);
        return MHD_NO;
    }
    const char *body = a ? a->body : NULL;
    if (body)
        MHD_add_response_header(resp, "Content-Type", "application/json");
    if (r->etag[0])
        MHD_add_response_header(resp, "ETag", r->etag);
    if (r->status == 405)
        MHD_add_response_header(resp, "Allow", "GET, HEAD, POST, DELETE");
    if (r->status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    if (r->status == 503)
        MHD_add_response_header(resp, "Retry-After", "1");
    if (atomic_load(&s->draining)) /* the server stops: the client must not reuse it */
        MHD_add_response_header(resp, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* CLOCK_MONOTONIC ms from now, for pthread_cond_timedwait on s->freed and s->drained. */
static struct timespec deadline_in(int64_t ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

/* A free catalog handle in *h (waiting for one), and not while a request with the same
 * Idempotency-Key runs on another: a retry arriving early waits for the first answer.
 * The wait is s->max_wait_ms at most: then, or when the server stops, false with the
 * 503 in r. */
static bool take_handle(floe_rest_server *s, const char *key, size_t *h, rs_resp *r) {
    struct timespec until = deadline_in(s->max_wait_ms);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        size_t free_h = RS_CATALOG_HANDLES;
        bool same_key = false;
        for (size_t i = 0; i < RS_CATALOG_HANDLES; i++) {
            if (!s->busy[i] && free_h == RS_CATALOG_HANDLES)
                free_h = i;
            if (s->busy[i] && key && s->keys[i] && !strcmp(s->keys[i], key))
                same_key = true;
        }
        if (free_h < RS_CATALOG_HANDLES && !same_key) {
            s->busy[free_h] = true;
            s->keys[free_h] = key;
            pthread_mutex_unlock(&s->mu);
            *h = free_h;
            return true;
        }
        if (atomic_load(&s->stopping) ||
            pthread_cond_timedwait(&s->freed, &s->mu, &until) == ETIMEDOUT) {
            pthread_mutex_unlock(&s->mu);
            if (atomic_load(&s->stopping))
                rs_error(r, 503, "ServiceUnavailableException", "the server is stopping");
            else if (same_key)
                rs_error(r, 503, "ServiceUnavailableException",
                         "another request with Idempotency-Key %s is still running after "
                         "%lld ms (--max-wait); retry later for its answer", key,
                         (long long)s->max_wait_ms);
            else
                rs_error(r, 503, "ServiceUnavailableException",
                         "all %d catalog handles stayed busy for %lld ms (--max-wait); retry "
                         "later", RS_CATALOG_HANDLES, (long long)s->max_wait_ms);
            return false;
        }
    }
}

static void give_handle(floe_rest_server *s, size_t h) {
    pthread_mutex_lock(&s->mu);
    s->busy[h] = false;
    s->keys[h] = NULL;
    pthread_cond_broadcast(&s->freed);
    pthread_mutex_unlock(&s->mu);
}

/* The test fault for a request on route rt (floe_rest_server_config.fault): commit
 * requests only, the first fault_count of them; a crash: requests with an
 * Idempotency-Key (key) only; a hold: requests that take a catalog handle. */
static floe_rest_fault take_fault(floe_rest_server *s, const route *rt, const char *key) {
    bool applies = s->fault == FLOE_REST_FAULT_CRASH  ? key != NULL
                   : s->fault == FLOE_REST_FAULT_HOLD ? !rt->no_handle
                                                      : rt->fn == rs_commit_table;
    if (!s->fault || !applies)
        return FLOE_REST_FAULT_NONE;
    pthread_mutex_lock(&s->mu);
    bool hit = s->fault_left > 0;
    if (hit)
        s->fault_left--;
    pthread_mutex_unlock(&s->mu);
    return hit ? s->fault : FLOE_REST_FAULT_NONE;
}

static enum MHD_Result add_query_arg(void *cls, enum MHD_ValueKind kind, const char *k,
                                     const char *v) {
    (void)kind;
    FLOE_IGNORE_RESULT(floe_buf_printf(cls, "&%s=%s", k, v ? v : "")); /* checked below */
    return MHD_YES;
}

/* What identifies a keyed request: method, path and query (purgeRequested=true is
 * another request than =false), and body - as JSON, not as bytes: the body parsed (body,
 * NULL for a route without one) and written again with sorted keys and no blanks, so a
 * retry of the same request by a client that writes its JSON another way (other
 * whitespace, key order, escapes) is the same request (spec: the same key with the same
 * operation is answered from the first; only another operation under it is a 400).
 * fp_raw is the fingerprint of the raw bytes, as servers recorded it before: a retry
 * across an upgrade still finds its answer. False with err set when out of memory or
 * when libcrypto, which hashes them, cannot be loaded. */
static bool fingerprint(struct MHD_Connection *c, const char *method, const char *url,
                        const json_t *body, const floe_buf *raw, char fp[65], char fp_raw[65],
                        floe_error *err) {
    floe_buf target;
    floe_buf_init(&target, 0);
    FLOE_IGNORE_RESULT(floe_buf_printf(&target, "%s?", url));
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_query_arg, &target);
    bool ok = floe_buf_append(&target, "", 1) == 0 && floe_buf_error(&target) == 0;
    char *canon = body ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (!ok || (body && !canon)) {
        ok = false;
        floe_error_set(err, FLOE_ENOMEM, "out of memory");
    } else {
        const char *t = (const char *)target.data;
        ok = rs_idem_fingerprint(method, t, canon ? canon : "", canon ? strlen(canon) : 0, fp,
                                 err) == 0 &&
             rs_idem_fingerprint(method, t, raw->data, raw->len, fp_raw, err) == 0;
    }
    free(canon); /* jansson's allocation */
    floe_buf_free(&target);
    return ok;
}

typedef struct header_counter {
    const char *name;
    int n;
} header_counter;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *k,
                                    const char *v) {
    (void)kind;
    (void)v;
    header_counter *hc = cls;
    if (!strcasecmp(k, hc->name))
        hc->n++;
    return MHD_YES;
}

/* Bytes of the request's values of one kind as they came (name, value, separators). */
static enum MHD_Result sum_values(void *cls, enum MHD_ValueKind kind, const char *k,
                                  const char *v) {
    (void)kind;
    *(size_t *)cls += strlen(k) + (v ? strlen(v) : 0) + 4;
    return MHD_YES;
}

static size_t values_bytes(struct MHD_Connection *c, enum MHD_ValueKind kind) {
    size_t n = 0;
    MHD_get_connection_values(c, kind, sum_values, &n);
    return n;
}

/* How many times request header `name` is present. */
static int header_count(struct MHD_Connection *c, const char *name) {
    header_counter hc = {name, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &hc);
    return hc.n;
}

/* ---------------------------------------------------------------------------------------
 * an open server (no tokens) and the browser
 * ------------------------------------------------------------------------------------- */

/* True when host[0..n) (no port) names this machine's loopback: localhost, an IPv4
 * address in 127.0.0.0/8 written as four decimal numbers, or [::1]. */
static bool loopback_host(const char *host, size_t n) {
    if ((n == 9 && !strncasecmp(host, "localhost", 9)) ||
        (n == 10 && !strncasecmp(host, "localhost.", 10)) || (n == 5 && !memcmp(host, "[::1]", 5)))
        return true;
    char ip[16];
    struct in_addr a;
    if (n == 0 || n >= sizeof ip)
        return false;
    memcpy(ip, host, n);
    ip[n] = 0;
    return strspn(ip, "0123456789.") == n && inet_pton(AF_INET, ip, &a) == 1 &&
           (ntohl(a.s_addr) >> 24) == 127;
}

/* True when authority ("host" or "host:port", as a Host header or an origin gives it)
 * names a loopback host with any port. */
static bool loopback_authority(const char *auth) {
    size_t n = strlen(auth);
    const char *colon = auth[0] == '[' ? strstr(auth, "]:") : strchr(auth, ':');
    if (colon && auth[0] == '[')
        colon++; /* "[::1]:8181": the colon after ']' */
    if (colon) {
        if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
            return false;
        n = (size_t)(colon - auth);
    }
    return loopback_host(auth, n);
}

/* A server without tokens is open to anything that reaches its loopback address, also a
 * web page in the user's browser (docs/SECURITY.md, "REST catalog without tokens"):
 *   - DNS rebinding: a page of evil.example whose name is made to resolve to 127.0.0.1
 *     sends its requests with Host: evil.example - only loopback names are served;
 *   - a cross-origin request a page makes (fetch with mode no-cors, a form) carries the
 *     page's Origin - only loopback origins are served;
 *   - a request a page can make without a CORS preflight (a "simple" request) can carry
 *     only the form and text media types, so a POST must say application/json:
 *     then a browser asks the server first, and this one grants no cross-origin request.
 * Called without a route (the names) and again with the route found (the media type).
 * 0 when q may go on; else the answer (403, 415) in r. */
static int refuse_browser(const rs_req *q, const route *rt, rs_resp *r) {
    if (rt) {
        const char *ct = rs_header(q, "Content-Type");
        size_t n = ct ? strcspn(ct, "; \t") : 0;
        if (rt->body && /* the POST routes; no route takes PUT (405) */
            (!ct || n != 16 || strncasecmp(ct, "application/json", 16) ||
             ct[n + strspn(ct + n, " \t")] == ','))
            return rs_error(r, 415, "UnsupportedMediaTypeException",
                            "Content-Type must be application/json, not %s",
                            ct ? ct : "(none)"),
                   415;
        return 0;
    }
    const char *host = rs_header(q, "Host");
    if (!host || !loopback_authority(host))
        return rs_error(r, 403, "ForbiddenException",
                        "Host %s is not a loopback name: without bearer tokens (--tokens) "
                        "floe catalog serve answers requests for localhost, 127.0.0.0/8 and "
                        "[::1] only", host ? host : "(none)"),
               403;
    const char *origin = rs_header(q, "Origin");
    const char *auth = !origin                                ? NULL
                       : !strncasecmp(origin, "http://", 7)  ? origin + 7
                       : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                             : "";
    if (origin && !loopback_authority(auth))
        return rs_error(r, 403, "ForbiddenException",
                        "Origin %s is not a loopback origin: without bearer tokens (--tokens) "
                        "floe catalog serve refuses requests from web pages of other sites",
                        origin),
               403;
    return 0;
}

/* The answer for a body of len bytes the server would not keep (refused: FLOE_EBUSY,
 * FLOE_ELIMIT, FLOE_ENOMEM). */
static void refuse_body(floe_rest_server *s, int refused, unsigned long long len,
                        rs_resp *r) {
    long long budget = (long long)atomic_load(&s->bodies.limit);
    if (refused == FLOE_EBUSY)
        rs_error(r, 503, "ServiceUnavailableException",
                 "the %lld bytes of request bodies the server holds at once "
                 "(--max-inflight-bytes) are in use by other requests; retry later", budget);
    else if (refused == FLOE_ELIMIT && len > s->max_body)
        rs_error(r, 413, "BadRequestException",
                 "request body of %llu bytes is larger than the limit of %zu bytes", len,
                 s->max_body);
    else if (refused == FLOE_ELIMIT)
        rs_error(r, 413, "BadRequestException",
                 "request body of %llu bytes does not fit in the %lld bytes of request "
                 "bodies the server holds at once (--max-inflight-bytes)", len, budget);
    else
        rs_error(r, 500, "InternalServerError", "out of memory");
}

/* What the headers decide, before any body byte is read: the route (404, 405, 400), the
 * bearer token (401), a grant the path decides (403), and for a route that takes a body,
 * a Content-Length over the body limit (413) or one the budget of bodies cannot take now
 * (503 + Retry-After) or ever (413); an announced body is taken from the budget whole and
 * stored in one allocation. True with the answer in r; else cr holds the route. */
static bool refuse_on_headers(floe_rest_server *s, struct MHD_Connection *c, const char *url,
                              const char *method, conn_req *cr, rs_resp *r) {
    rs_req q = {.s = s, .conn = c, .method = method};
    size_t target = strlen(url) + values_bytes(c, MHD_GET_ARGUMENT_KIND);
    size_t head = values_bytes(c, MHD_HEADER_KIND);
    if (target > MAX_HEAD_BYTES) {
        rs_error(r, 414, "BadRequestException",
                 "request target of %zu bytes is longer than the limit of %zu bytes", target,
                 MAX_HEAD_BYTES);
        return true;
    }
    if (head > MAX_HEAD_BYTES) {
        rs_error(r, 431, "BadRequestException",
                 "request headers of %zu bytes are larger than the limit of %zu bytes", head,
                 MAX_HEAD_BYTES);
        return true;
    }
    int bad_status = 0;
    const char *bad = floe_http_head_error(c, &bad_status); /* as floe serve: framing, Host */
    if (bad) {
        /* framed two ways (two Content-Lengths, both Content-Length and Transfer-Encoding):
         * a proxy in front may frame it the other way and pass what follows as another
         * request (RFC 9112 section 6.3) */
        rs_error(r, bad_status,
                 bad_status == 501 ? "UnsupportedOperationException" : "BadRequestException",
                 "%s: the request is refused", bad);
        return true;
    }
    if (header_count(c, "Origin") > 1) {
        /* the browser check reads one Origin: another server may read the other */
        rs_error(r, 400, "BadRequestException", "more than one Origin header");
        return true;
    }
    if (header_count(c, "Authorization") > 1) {
        rs_error(r, 400, "BadRequestException", "more than one Authorization header");
        return true;
    }
    if (header_count(c, "Idempotency-Key") > 1) {
        /* which one names the request is a guess another server or proxy may make
         * otherwise: two keys could each be answered once */
        rs_error(r, 400, "BadRequestException",
                 "more than one Idempotency-Key header: a request carries one key");
        return true;
    }
    if (s->ntokens == 0 && refuse_browser(&q, NULL, r) != 0)
        return true;
    cr->rt = route_of(&q, url, r);
    cr->ns = q.ns;
    cr->table = q.table;
    if (!cr->rt || authenticate(&q, r) != 0 || bad_query(&q, r) ||
        (s->ntokens == 0 && refuse_browser(&q, cr->rt, r) != 0))
        return true;
    cr->token = q.token;
    if (grant_on_path(&q, cr->rt) && authorize(&q, cr->rt, r) != 0)
        return true;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    char *end = NULL;
    unsigned long long n = cl ? strtoull(cl, &end, 10) : 0;
    if (!cr->rt->body || !cl || end == cl || *end || n == 0)
        return false; /* libmicrohttpd refuses a malformed Content-Length */
    int rc = n > s->max_body ? FLOE_ELIMIT
                             : floe_budget_hold(&s->bodies, &cr->held, (int64_t)n + 1, 0);
    if (rc == 0 && !(cr->body.data = floe_malloc((size_t)n + 1)))
        rc = FLOE_ENOMEM;
    if (rc < 0) {
        floe_budget_release(&s->bodies, &cr->held);
        refuse_body(s, rc, n, r);
        return true;
    }
    cr->body.cap = (size_t)n + 1; /* + floe_buf's NUL byte */
    return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **con_cls) {
    (void)version;
    floe_rest_server *s = cls;
    conn_req *cr = *con_cls;
    if (!cr) {
        if (!(cr = floe_calloc(1, sizeof *cr)))
            return MHD_NO;
        floe_buf_init(&cr->body, s->max_body);
        *con_cls = cr;
        pthread_mutex_lock(&s->mu);
        s->requests++; /* until on_completed: floe_rest_server_drain waits for it */
        pthread_mutex_unlock(&s->mu);
        floe_connguard_phase(c, FLOE_CONN_BODY); /* the headers are in */
        rs_resp r = {.status = 0};
        floe_buf_init(&r.body, 0);
        bool refused = false;
        if (atomic_load(&s->draining)) { /* begun after the stop began: not run */
            rs_error(&r, 503, "ServiceUnavailableException",
                     "the server is stopping; retry on another server or after its restart");
            refused = true;
        }
        if (refused || refuse_on_headers(s, c, url, method, cr, &r)) {
            /* answered before the body is read: libmicrohttpd then closes the connection
             * rather than wait for a body nobody reads (a 10 GB Content-Length) */
            cr->answered = true;
            floe_log(FLOE_LOG_DEBUG, "catalog serve: %s %s -> %d %.*s", method, url, r.status,
                     (int)(r.body.len > 400 ? 400 : r.body.len), (const char *)r.body.data);
            enum MHD_Result ok = send_resp(s, c, &r, false);
            floe_buf_free(&r.body);
            return ok;
        }
        floe_buf_free(&r.body);
        return MHD_YES;
    }
    if (cr->answered) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        cr->wire += (int64_t)n;
        floe_connguard_body_bytes(c, cr->wire);
        if (!cr->rt->body || cr->refused) /* a body nobody reads is not kept */
            return MHD_YES;
        int rc = floe_budget_buf_room(&s->bodies, &cr->held, 0, &cr->body, n);
        if (rc == 0)
            rc = floe_buf_append(&cr->body, upload_data, n);
        if (rc < 0) {
            cr->refused = rc;
            floe_buf_free(&cr->body);
            floe_budget_release(&s->bodies, &cr->held);
        }
        return MHD_YES;
    }
    floe_connguard_phase(c, FLOE_CONN_BUSY);
    rs_req q = {.s = s, .conn = c, .method = method, .token = cr->token, .ns = cr->ns,
                .table = cr->table};
    cr->ns = cr->table = NULL; /* q's now */
    rs_resp r = {.status = 500};
    floe_buf_init(&r.body, 0);
    const route *rt = cr->rt;
    if (cr->refused) {
        refuse_body(s, cr->refused, (unsigned long long)cr->wire, &r);
        rt = NULL;
    } else if (rt->body) {
        json_error_t je;
        q.body = cr->body.len ? json_loadb((const char *)cr->body.data, cr->body.len,
                                           JSON_REJECT_DUPLICATES, &je)
                              : NULL;
        if (!json_is_object(q.body)) {
            if (q.body || !cr->body.len)
                rs_error(&r, 400, "BadRequestException", "the request body must be a JSON object");
            else
                rs_error(&r, 400, "BadRequestException", "request body: line %d column %d: %s",
                         je.line, je.column, je.text);
            rt = NULL;
        }
    }
    if (rt && !grant_on_path(&q, rt) && authorize(&q, rt, &r) != 0)
        rt = NULL;
    const char *key = rt && rt->idem && s->idem ? rs_header(&q, "Idempotency-Key") : NULL;
    char lkey[37];
    if (key && !rs_idem_key_valid(key)) {
        rs_error(&r, 400, "BadRequestException",
                 "Idempotency-Key must be a UUID (36 characters), not '%.64s'", key);
        rt = NULL;
    } else if (key) {
        /* UUIDs compare without regard to case (RFC 9562) */
        for (size_t i = 0; i < sizeof lkey; i++)
            lkey[i] = (char)tolower((unsigned char)key[i]);
        key = lkey;
    }
    char fp[65] = "", fp_raw[65] = "";
    floe_error fperr;
    floe_error_clear(&fperr);
    if (key && !fingerprint(c, method, url, q.body, &cr->body, fp, fp_raw, &fperr)) {
        rs_error(&r, 500, "InternalServerError", "Idempotency-Key: %s", fperr.msg);
        rt = NULL;
    }
    /* a change starts only while the answers budget has room: its answer is held whatever
     * it weighs (hold_answer), and a 503 now is safe to retry */
    bool change = rt && (rt->method == M_POST || rt->method == M_DELETE);
    if (change && floe_budget_full(&s->answers)) {
        rs_error(&r, 503, "ServiceUnavailableException",
                 "the %lld bytes of answers the server holds at once for clients still "
                 "reading theirs (--max-answer-bytes) are in use; retry later",
                 (long long)atomic_load(&s->answers.limit));
        rt = NULL;
    }
    floe_rest_fault fault = rt ? take_fault(s, rt, key) : FLOE_REST_FAULT_NONE;
    bool lost = fault == FLOE_REST_FAULT_LOST_500 || fault == FLOE_REST_FAULT_LOST_DROP;
    bool ran = false; /* a change's handler ran (or its recorded answer was replayed) */
    size_t h = 0;
    if (rt && rt->no_handle) {
        rt->fn(&q, &r);
    } else if (rt && !lost && take_handle(s, key, &h, &r)) {
        q.cat = s->cats[h];
        q.h = h;
        if (fault == FLOE_REST_FAULT_HOLD) {
            floe_log(FLOE_LOG_WARN, "catalog serve: test fault: %s %s holds catalog handle "
                     "%zu for %d ms", method, url, h, FLOE_REST_FAULT_HOLD_MS);
            for (int waited = 0; waited < FLOE_REST_FAULT_HOLD_MS && !atomic_load(&s->stopping);
                 waited += 50)
                usleep(50 * 1000);
        }
        ran = change;
        if (key)
            rs_idem_begin(s, h, key, fp,
                          rt->fn == rs_commit_transaction || rt->fn == rs_drop_table ||
                                  rt->fn == rs_rename_table
                              ? 204
                              : 200);
        if (!key || !rs_idem_claim(&q, fp_raw, true, &r)) {
            rt->fn(&q, &r);
            if (fault == FLOE_REST_FAULT_CRASH) {
                floe_log(FLOE_LOG_WARN, "catalog serve: test fault: the process ends after "
                         "%s %s ran (answer %d not sent)", method, url, r.status);
                _exit(FLOE_REST_FAULT_CRASH_STATUS);
            }
            if (key && rs_idem_lost(s, h)) {
                /* another request with this key changed the table first (its swap won
                 * while this one ran): this one was rolled back, its answer is that one */
                floe_buf_reset(&r.body);
                r.etag[0] = 0;
                (void)rs_idem_claim(&q, fp_raw, false, &r); /* always answers */
            } else if (key) {
                rs_idem_record(&q, h, key, fp, &r);
            }
        }
        if (key)
            rs_idem_end(s, h);
        give_handle(s, h);
    }
    if (fault != FLOE_REST_FAULT_NONE && fault != FLOE_REST_FAULT_HOLD)
        floe_log(FLOE_LOG_WARN, "catalog serve: test fault on %s %s (%s, answer %d dropped)",
                 method, url, lost ? "not run" : "run", r.status);
    if (fault == FLOE_REST_FAULT_COMMIT_500 || fault == FLOE_REST_FAULT_LOST_500)
        rs_error(&r, 500, "InternalServerError", "test fault: the answer is lost");
    if (fault == FLOE_REST_FAULT_COMMIT_DROP || fault == FLOE_REST_FAULT_LOST_DROP) {
        floe_buf_free(&r.body);
        json_decref(q.body);
        floe_free(q.ns);
        floe_free(q.table);
        return MHD_NO; /* the connection is closed unanswered */
    }
    /* an error answer's ErrorModel (its message) too */
    bool error_body = r.status >= 400 && r.body.len && !floe_buf_error(&r.body);
    floe_log(FLOE_LOG_DEBUG, "catalog serve: %s %s -> %d%s%.*s", method, url, r.status,
             error_body ? " " : "", error_body ? (int)(r.body.len > 400 ? 400 : r.body.len) : 0,
             error_body ? (const char *)r.body.data : "");
    enum MHD_Result ok = send_resp(s, c, &r, ran);
    floe_buf_free(&r.body);
    json_decref(q.body);
    floe_free(q.ns);
    floe_free(q.table);
    return ok;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)toe;
    floe_connguard_phase(c, FLOE_CONN_HEADERS); /* keep-alive: the next request's headers */
    floe_rest_server *s = cls;
    conn_req *cr = *con_cls;
    if (cr) {
        pthread_mutex_lock(&s->mu);
        if (--s->requests == 0)
            pthread_cond_broadcast(&s->drained);
        pthread_mutex_unlock(&s->mu);
        floe_buf_free(&cr->body);
        floe_budget_release(&s->bodies, &cr->held);
        floe_free(cr->ns);
        floe_free(cr->table);
        floe_free(cr);
        *con_cls = NULL;
    }
}

static int parse_listen(const char *listen, bool tokens, struct sockaddr_in *sa,
                        floe_error *err) {
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    const char *colon = strrchr(listen, ':');
    char host[64];
    size_t hl = colon ? (size_t)(colon - listen) : 0;
    if (!colon || hl >= sizeof host)
        return floe_error_set(err, FLOE_EINVALID, "--listen: expected HOST:PORT, not '%s'", listen);
    memcpy(host, listen, hl);
    host[hl] = 0;
    if (!strcmp(host, "localhost") || !*host)
        strcpy(host, "127.0.0.1");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port < 0 || port > 65535)
        return floe_error_set(err, FLOE_EINVALID, "--listen: bad port in '%s'", listen);
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return floe_error_set(err, FLOE_EINVALID, "--listen: '%s' is not an IPv4 address", host);
    /* without tokens nothing is checked: loopback only (127.0.0.0/8) */
    if (!tokens && (ntohl(sa->sin_addr.s_addr) >> 24) != 127)
        return floe_error_set(err, FLOE_EINVALID,
                              "--listen: %s is not a loopback address; without bearer tokens "
                              "(--tokens FILE) floe catalog serve listens on 127.0.0.0/8 only",
                              host);
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

/* On a SQLite catalog: write-ahead logging with synchronous=FULL on every handle. A
 * commit then syncs the log once (a rollback journal needs the journal, its directory,
 * the journal header and the database synced: four), and the handles' reads (loads,
 * the refresh of each commit) no longer wait for a writer. FULL keeps every
 * acknowledged commit durable across a power loss, as the journal did; the mode stays
 * with the database file, for every program that opens it (same host only, as SQLite's
 * locking already requires). */
static int sqlite_wal(floe_rest_server *s, floe_error *err) {
    for (size_t i = 0; i < RS_CATALOG_HANDLES; i++) {
        floe_sql *db = floe_catalog_sql(s->cats[i]);
        if (!db || strcmp(floe_sql_dialect(db), "sqlite"))
            return 0;
        if (i == 0)
            FLOE_FORWARD_IF_ERROR(floe_sql_exec(db, "PRAGMA journal_mode=WAL", NULL, 0, NULL, err));
        FLOE_FORWARD_IF_ERROR(floe_sql_exec(db, "PRAGMA synchronous=FULL", NULL, 0, NULL, err));
    }
    return 0;
}

int floe_rest_server_start(const floe_rest_server_config *cfg, floe_rest_server **out,
                           floe_error *err) {
    struct sockaddr_in sa;
    const char *listen = cfg->listen ? cfg->listen : DEFAULT_LISTEN;
    FLOE_FORWARD_IF_ERROR(parse_listen(listen, cfg->ntokens > 0, &sa, err));
    /* libmicrohttpd first: the handlers and the guard run on the daemon this starts */
    if (!floe_lazy_mhd(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    floe_rest_server *s = floe_calloc(1, sizeof *s);
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* take_handle's deadline */
    pthread_cond_init(&s->freed, &ca);
    pthread_cond_init(&s->drained, &ca); /* floe_rest_server_drain's deadline */
    pthread_condattr_destroy(&ca);
    s->max_body = cfg->max_body ? cfg->max_body : DEFAULT_MAX_BODY;
    atomic_store(&s->bodies.limit,
                 cfg->max_inflight_bytes > 0 ? cfg->max_inflight_bytes : DEFAULT_MAX_INFLIGHT);
    atomic_store(&s->answers.limit,
                 cfg->max_answer_bytes > 0 ? cfg->max_answer_bytes : DEFAULT_MAX_ANSWERS);
    s->max_wait_ms = cfg->max_wait_ms > 0 ? cfg->max_wait_ms : DEFAULT_MAX_WAIT_MS;
    s->tokens = cfg->tokens;
    s->ntokens = cfg->ntokens;
    s->fault = cfg->fault;
    s->fault_left = cfg->fault ? (cfg->fault_count > 0 ? cfg->fault_count : 1) : 0;
    s->vend = cfg->vend;
    s->nvend = cfg->nvend;
    for (size_t i = 0; i < RS_CATALOG_HANDLES; i++) {
        FLOE_CHECK(floe_catalog_open(cfg->catalog, &s->cats[i], err));
        floe_catalog_set_max_metadata_bytes(s->cats[i], cfg->max_metadata_bytes
                                                            ? cfg->max_metadata_bytes
                                                            : DEFAULT_MAX_METADATA);
    }
    s->cat = s->cats[0];
    FLOE_CHECK(sqlite_wal(s, err));
    if (!(s->name = floe_strdup(floe_catalog_name(s->cat))) ||
        !(s->warehouse = floe_strdup(floe_catalog_warehouse(s->cat))))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(rs_idem_open(s, err));
    FLOE_CHECK(floe_connguard_start(&GUARD, &s->guard, err));
    s->mhd = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC | MHD_USE_ERROR_LOG, /* ITC: MHD_quiesce_daemon (drain) */
        0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, floe_connguard_mhd_limit(&GUARD),
        MHD_OPTION_CONNECTION_TIMEOUT, floe_connguard_mhd_timeout_s(&GUARD),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, MHD_MEM,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, floe_connguard_notify, s->guard, MHD_OPTION_END);
    if (!s->mhd)
        FLOE_FAIL(err, FLOE_EIO, "cannot listen on %s", listen);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : ntohs(sa.sin_port);
    *out = s;
    return 0;
done:
    floe_rest_server_stop(s);
    return rc;
}

unsigned floe_rest_server_port(const floe_rest_server *s) {
    return s->port;
}

int64_t floe_rest_server_drain(floe_rest_server *s, int64_t wait_ms) {
    if (!atomic_exchange(&s->draining, true) && s->mhd) {
        /* the listening socket closed, not only left unpolled: a connection attempt is
         * refused at once rather than left in the backlog until the process ends */
        MHD_socket fd = MHD_quiesce_daemon(s->mhd);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
    struct timespec until = deadline_in(wait_ms);
    pthread_mutex_lock(&s->mu);
    while (s->requests > 0 && wait_ms > 0 &&
           pthread_cond_timedwait(&s->drained, &s->mu, &until) != ETIMEDOUT)
        ;
    int64_t left = s->requests;
    pthread_mutex_unlock(&s->mu);
    return left;
}

void floe_rest_server_stop(floe_rest_server *s) {
    if (!s)
        return;
    atomic_store(&s->stopping, true); /* requests in flight give up their long work */
    pthread_mutex_lock(&s->mu);
    pthread_cond_broadcast(&s->freed); /* and those waiting for a handle, the wait */
    pthread_mutex_unlock(&s->mu);
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    floe_connguard_stop(s->guard);
    for (size_t i = 0; i < RS_CATALOG_HANDLES; i++)
        floe_catalog_close(s->cats[i]);
    pthread_cond_destroy(&s->freed);
    pthread_cond_destroy(&s->drained);
    pthread_mutex_destroy(&s->mu);
    floe_free(s->name);
    floe_free(s->warehouse);
    floe_free(s);
}
