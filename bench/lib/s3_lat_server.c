/*
 * s3_lat_server.c - a read-only S3 server for benchmarks: it serves a directory over
 * GetObject (Range) and HeadObject, verifies every request's AWS Signature Version 4 as
 * the tests' s3_sigcheck_server.mjs does (its own code here, on libcrypto: nothing shared
 * with floe's signer), and answers each request a fixed latency after it arrived, without
 * spending CPU while it waits. One thread, epoll, non-blocking sockets, keep-alive.
 *
 * Why: the Node.js server of tests/js behind the Node.js fault proxy spends ~0.5 ms of CPU
 * per request between them (bench/plan, 2026-12-07: 10.7 s of CPU for 20,000 requests),
 * on the same 2 cores as the program measured; this one spends a few microseconds, so a
 * benchmark over it measures the client and the latency, not the server.
 *
 *   s3_lat_server --bucket NAME=DIR [--bucket ...] [--access-key AK] [--secret SK]
 *                 [--region R] [--latency-ms N] [--port P]
 *
 * Prints {"port": N} on stdout once listening; stops on SIGTERM/SIGINT. Path-style
 * addressing (/bucket/key): the key is a path under DIR ("." and ".." segments refused).
 * The latency is added to every answer, errors included: an answer leaves N ms after its
 * request was read (requests on one connection come one after another, as HTTP/1.1
 * without pipelining sends them).
 *
 * Signature check, as AWS does it: the Authorization header's credential (access key,
 * date, region, service s3), x-amz-date within 15 minutes, x-amz-content-sha256 present
 * (the body's SHA-256 unless UNSIGNED-PAYLOAD), host and every x-amz-* header signed, the
 * path canonically encoded (each segment decoded and encoded again must give the same
 * bytes), the query decoded, encoded and sorted, and the signature recomputed from the
 * canonical request. A mismatch is 403 SignatureDoesNotMatch.
 *
 * GET /__stats (unsigned): {"requests", "connections", "sig_failures", "in_flight_max",
 * "in_flight_avg" (time-weighted between the first request and the last answer),
 * "bytes", "cpu_ms" (this process's)}; GET /__stats?reset=1 returns them and starts again.
 *
 * Objects are read from disk when first asked for and then kept in memory (the data is
 * read-only benchmark metadata: bench/plan's is 44 MB), so a request costs the socket
 * calls and the signature check, not an open, fstat, pread and close.
 *
 * Build: cc -O2 -o s3_lat_server s3_lat_server.c -lcrypto
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQ (64 * 1024)
#define MAX_BUCKETS 8
#define MAX_HDRS 64

typedef struct conn {
    int fd;
    char in[MAX_REQ];
    size_t in_len;
    char *out;           /* the answer, sent once due */
    size_t out_len, out_off;
    int64_t due_ns;      /* when the answer may leave (0: none waiting) */
    struct conn *next;   /* the due queue (FIFO: one latency for all) */
    bool queued, writing, closing;
    bool paused;         /* EPOLLIN off: c->in is full */
    bool want_out;       /* EPOLLOUT on: an answer is part sent */
} conn;

static struct {
    const char *name[MAX_BUCKETS], *dir[MAX_BUCKETS];
    int n;
} buckets;
static const char *access_key = "AKIDFLOETEST", *secret = "floe-test-secret",
                  *region = "us-east-1";
static int64_t latency_ns = 5 * 1000000LL;
static conn *qhead, *qtail;
static int ep;
static volatile sig_atomic_t stop;

/* counters */
static int64_t n_requests, n_connections, n_sig_failures, n_bytes;
static int64_t in_flight, in_flight_max, t_first, t_last;
static double in_flight_area; /* in_flight x ns */
static double cpu_base_ms;    /* CPU at the last reset */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void flight(int delta) {
    int64_t t = now_ns();
    if (t_last)
        in_flight_area += (double)in_flight * (double)(t - t_last);
    if (!t_first)
        t_first = t;
    t_last = t;
    in_flight += delta;
    if (in_flight > in_flight_max)
        in_flight_max = in_flight;
}

/* ---------------------------------------------------------------------------------------
 * SigV4
 * ------------------------------------------------------------------------------------- */
static void hex(const unsigned char *p, size_t n, char *out) {
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void sha256_hex(const void *p, size_t n, char out[65]) {
    unsigned char d[32];
    SHA256(p, n, d);
    hex(d, 32, out);
}

static void hmac(const void *key, size_t kn, const char *msg, unsigned char out[32]) {
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)kn, (const unsigned char *)msg, strlen(msg), out, &len);
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static int unhex(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* percent-decode s[0..n) into out (NUL-terminated); false when malformed */
static bool pdecode(const char *s, size_t n, buf *out) {
    out->n = 0;
    put(out, "", 0);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return false;
            int a = unhex((unsigned char)s[i + 1]), b = unhex((unsigned char)s[i + 2]);
            if (a < 0 || b < 0)
                return false;
            c = (char)(a * 16 + b);
            i += 2;
        }
        put(out, &c, 1);
    }
    return true;
}

/* RFC 3986 as SigV4 wants it: unreserved kept, every other byte %XX */
static void aws_encode(const char *s, size_t n, buf *out) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            put(out, (const char *)&c, 1);
        } else {
            char t[4];
            snprintf(t, sizeof t, "%%%02X", c);
            put(out, t, 3);
        }
    }
}

typedef struct hdr {
    char name[64];   /* lower case */
    const char *v;
    size_t vn;
} hdr;

typedef struct req {
    char method[16];
    const char *path, *query; /* raw, NUL-terminated copies */
    size_t path_n, query_n;
    hdr h[MAX_HDRS];
    int nh;
    const char *body;
    size_t body_n;
} req;

static const hdr *find(const req *r, const char *name) {
    for (int i = 0; i < r->nh; i++)
        if (!strcmp(r->h[i].name, name))
            return &r->h[i];
    return NULL;
}

typedef struct kv {
    char *k, *v;
} kv;

static int kv_cmp(const void *a, const void *b) {
    const kv *x = a, *y = b;
    int c = strcmp(x->k, y->k);
    return c ? c : strcmp(x->v, y->v);
}

/* NULL when the signature is right, else why not */
static const char *check_sig(const req *r, char *why, size_t whyn) {
    const hdr *a = find(r, "authorization");
    if (!a)
        return "no Authorization header";
    char auth[1024];
    if (a->vn >= sizeof auth)
        return "Authorization too long";
    memcpy(auth, a->v, a->vn);
    auth[a->vn] = '\0';
    char ak[128], date8[16], reg[64], svc[16], signed_h[512], sig[80];
    if (sscanf(auth, "AWS4-HMAC-SHA256 Credential=%127[^/]/%15[^/]/%63[^/]/%15[^/]/aws4_request, "
                     "SignedHeaders=%511[^,], Signature=%79s",
               ak, date8, reg, svc, signed_h, sig) != 6 ||
        strlen(sig) != 64)
        return "malformed Authorization";
    if (strcmp(ak, access_key))
        return "unknown access key";
    if (strcmp(reg, region) || strcmp(svc, "s3"))
        return "bad scope";
    const hdr *d = find(r, "x-amz-date");
    char amz[32];
    if (!d || d->vn != 16 || d->v[8] != 'T' || d->v[15] != 'Z')
        return "bad x-amz-date";
    memcpy(amz, d->v, 16);
    amz[16] = '\0';
    if (strncmp(amz, date8, 8) || strlen(date8) != 8)
        return "x-amz-date is not the credential's date";
    struct tm tm = {0};
    if (!strptime(amz, "%Y%m%dT%H%M%SZ", &tm))
        return "bad x-amz-date";
    time_t t = timegm(&tm);
    if (llabs((long long)(time(NULL) - t)) > 15 * 60)
        return "request time too skewed";
    const hdr *ph = find(r, "x-amz-content-sha256");
    if (!ph)
        return "missing x-amz-content-sha256";
    char payload[80];
    snprintf(payload, sizeof payload, "%.*s", (int)ph->vn, ph->v);
    if (strcmp(payload, "UNSIGNED-PAYLOAD")) {
        char want[65];
        sha256_hex(r->body ? r->body : "", r->body_n, want);
        if (strcmp(want, payload))
            return "x-amz-content-sha256 does not match the body";
    }
    /* host and every x-amz-* header signed */
    char names[520];
    snprintf(names, sizeof names, ";%s;", signed_h);
    if (!strstr(names, ";host;"))
        return "host is not signed";
    for (int i = 0; i < r->nh; i++) {
        char pat[80];
        snprintf(pat, sizeof pat, ";%s;", r->h[i].name);
        if (!strncmp(r->h[i].name, "x-amz-", 6) && !strstr(names, pat))
            return "an x-amz-* header is sent but not signed";
    }
    buf dec = {0}, tmp = {0}, creq = {0};
    const char *res = NULL;
    /* canonical path: decode each segment, encode again; must be what was sent */
    for (size_t i = 0; i <= r->path_n && !res;) {
        size_t j = i;
        while (j < r->path_n && r->path[j] != '/')
            j++;
        if (!pdecode(r->path + i, j - i, &dec))
            res = "undecodable path";
        else
            aws_encode(dec.p, dec.n, &tmp);
        if (j < r->path_n)
            put(&tmp, "/", 1);
        i = j + 1;
    }
    if (!res && (tmp.n != r->path_n || memcmp(tmp.p, r->path, tmp.n)))
        res = "path not canonically encoded";
    if (!res) {
        put(&creq, r->method, strlen(r->method));
        put(&creq, "\n", 1);
        put(&creq, r->path, r->path_n);
        put(&creq, "\n", 1);
        /* canonical query */
        kv q[64];
        size_t nq = 0;
        for (size_t i = 0; i < r->query_n && !res;) {
            size_t j = i;
            while (j < r->query_n && r->query[j] != '&')
                j++;
            const char *eq = memchr(r->query + i, '=', j - i);
            size_t kn = eq ? (size_t)(eq - (r->query + i)) : j - i;
            if (nq == 64) {
                res = "too many query parameters";
                break;
            }
            buf kk = {0}, vv = {0};
            if (!pdecode(r->query + i, kn, &dec)) {
                res = "undecodable query";
            } else {
                aws_encode(dec.p, dec.n, &kk);
                put(&kk, "", 0);
                if (eq && !pdecode(eq + 1, j - i - kn - 1, &dec))
                    res = "undecodable query";
                else if (eq)
                    aws_encode(dec.p, dec.n, &vv);
                put(&vv, "", 0);
            }
            q[nq].k = kk.p;
            q[nq++].v = vv.p;
            i = j + 1;
        }
        qsort(q, nq, sizeof *q, kv_cmp);
        for (size_t i = 0; i < nq; i++) {
            if (i)
                put(&creq, "&", 1);
            puts_(&creq, q[i].k);
            put(&creq, "=", 1);
            puts_(&creq, q[i].v);
            free(q[i].k);
            free(q[i].v);
        }
        put(&creq, "\n", 1);
    }
    /* canonical headers, in SignedHeaders' order */
    for (char *s = signed_h; !res && *s;) {
        char *e = strchr(s, ';');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, s);
        const hdr *h = find(r, name);
        if (!h) {
            res = "a signed header is missing";
            break;
        }
        puts_(&creq, name);
        put(&creq, ":", 1);
        /* trimmed, inner runs of spaces as one */
        const char *v = h->v, *ve = h->v + h->vn;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        bool sp = false;
        for (; v < ve; v++) {
            if (*v == ' ' || *v == '\t') {
                sp = true;
                continue;
            }
            if (sp)
                put(&creq, " ", 1);
            sp = false;
            put(&creq, v, 1);
        }
        put(&creq, "\n", 1);
        s += n + (e ? 1 : 0);
    }
    if (!res) {
        put(&creq, "\n", 1);
        puts_(&creq, signed_h);
        put(&creq, "\n", 1);
        puts_(&creq, payload);
        char ch[65];
        sha256_hex(creq.p, creq.n, ch);
        char sts[512];
        snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/s3/aws4_request\n%s", amz, date8,
                 region, ch);
        char k0[256];
        snprintf(k0, sizeof k0, "AWS4%s", secret);
        unsigned char k1[32], k2[32], k3[32], k4[32], s1[32];
        hmac(k0, strlen(k0), date8, k1);
        hmac(k1, 32, region, k2);
        hmac(k2, 32, "s3", k3);
        hmac(k3, 32, "aws4_request", k4);
        hmac(k4, 32, sts, s1);
        char want[65];
        hex(s1, 32, want);
        if (strcmp(want, sig)) {
            snprintf(why, whyn, "signature mismatch");
            res = why;
        }
    }
    free(dec.p);
    free(tmp.p);
    free(creq.p);
    return res;
}

/* ---------------------------------------------------------------------------------------
 * objects, kept once read (open addressing on the path's FNV-1a hash)
 * ------------------------------------------------------------------------------------- */
typedef struct object {
    char *path; /* NULL: empty slot */
    char *data;
    long long size;
    long long mtime;
} object;
static object *objs;
static size_t nobjs, capobjs;

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The object at file path, read now if not yet; NULL when there is none. */
static const object *object_get(const char *path) {
    if (2 * (nobjs + 1) > capobjs) {
        size_t nc = capobjs ? capobjs * 2 : 4096;
        object *no = calloc(nc, sizeof *no);
        if (!no)
            return NULL;
        for (size_t i = 0; i < capobjs; i++) {
            if (!objs[i].path)
                continue;
            size_t k = fnv(objs[i].path) & (nc - 1);
            while (no[k].path)
                k = (k + 1) & (nc - 1);
            no[k] = objs[i];
        }
        free(objs);
        objs = no;
        capobjs = nc;
    }
    size_t k = fnv(path) & (capobjs - 1);
    for (; objs[k].path; k = (k + 1) & (capobjs - 1))
        if (!strcmp(objs[k].path, path))
            return &objs[k];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    object o = {strdup(path), malloc(st.st_size ? (size_t)st.st_size : 1),
                (long long)st.st_size, (long long)st.st_mtim.tv_sec};
    bool ok = o.path && o.data && pread(fd, o.data, (size_t)st.st_size, 0) == st.st_size;
    close(fd);
    if (!ok) {
        free(o.path);
        free(o.data);
        return NULL;
    }
    objs[k] = o;
    nobjs++;
    return &objs[k];
}

/* ---------------------------------------------------------------------------------------
 * answers
 * ------------------------------------------------------------------------------------- */
static void answer(conn *c, int status, const char *reason, const char *extra_hdrs,
                   const char *body, size_t body_n, bool head) {
    buf b = {0};
    char line[512];
    snprintf(line, sizeof line,
             "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nx-amz-request-id: %016llx\r\n"
             "Connection: keep-alive\r\n",
             status, reason, body_n, (unsigned long long)n_requests);
    puts_(&b, line);
    if (extra_hdrs)
        puts_(&b, extra_hdrs);
    put(&b, "\r\n", 2);
    if (!head && body_n)
        put(&b, body, body_n);
    c->out = b.p;
    c->out_len = b.n;
    c->out_off = 0;
    n_bytes += (int64_t)(head ? 0 : body_n);
}

static void error(conn *c, int status, const char *reason, const char *code, const char *msg,
                  const char *extra_hdrs, bool head) {
    char body[1024];
    int n = snprintf(body, sizeof body,
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
                     "<Message>%s</Message></Error>",
                     code, msg);
    char h[256];
    snprintf(h, sizeof h, "Content-Type: application/xml\r\n%s", extra_hdrs ? extra_hdrs : "");
    answer(c, status, reason, h, body, (size_t)n, head);
}

static double cpu_now_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void stats_answer(conn *c, bool reset) {
    double cpu_ms = cpu_now_ms() - cpu_base_ms;
    double span = (double)(t_last - t_first);
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"requests\":%lld,\"connections\":%lld,\"sig_failures\":%lld,"
                     "\"in_flight_max\":%lld,\"in_flight_avg\":%.2f,\"bytes\":%lld,"
                     "\"cpu_ms\":%.1f}",
                     (long long)n_requests, (long long)n_connections,
                     (long long)n_sig_failures, (long long)in_flight_max,
                     span > 0 ? in_flight_area / span : 0.0, (long long)n_bytes, cpu_ms);
    answer(c, 200, "OK", "Content-Type: application/json\r\n", body, (size_t)n, false);
    if (reset) {
        n_requests = n_connections = n_sig_failures = n_bytes = 0;
        in_flight_max = in_flight;
        in_flight_area = 0;
        t_first = t_last = 0;
        cpu_base_ms = cpu_now_ms();
    }
}

/* The object's file path, or false */
static bool object_path(const char *bucket, size_t bn, const char *key, char *out,
                        size_t outn) {
    for (int i = 0; i < buckets.n; i++) {
        if (strlen(buckets.name[i]) != bn || memcmp(buckets.name[i], bucket, bn))
            continue;
        /* no "." or ".." segment, no empty key */
        if (!*key || !strcmp(key, ".") || !strncmp(key, "./", 2) || !strncmp(key, "../", 3) ||
            strstr(key, "/./") || strstr(key, "/../") || !strcmp(key, "..") ||
            (strlen(key) >= 3 && !strcmp(key + strlen(key) - 3, "/..")))
            return false;
        return snprintf(out, outn, "%s/%s", buckets.dir[i], key) < (int)outn;
    }
    return false;
}

static void serve(conn *c, const req *r) {
    bool head = !strcmp(r->method, "HEAD");
    if (r->path_n == 8 && !memcmp(r->path, "/__stats", 8)) {
        stats_answer(c, r->query_n && strstr(r->query, "reset=1"));
        return;
    }
    char why[64];
    const char *bad = check_sig(r, why, sizeof why);
    if (bad) {
        n_sig_failures++;
        if (getenv("SIGCHECK_VERBOSE"))
            fprintf(stderr, "s3_lat_server: %s %.*s: %s\n", r->method, (int)r->path_n, r->path,
                    bad);
        error(c, 403, "Forbidden", "SignatureDoesNotMatch", bad, NULL, head);
        return;
    }
    if (strcmp(r->method, "GET") && !head) {
        error(c, 501, "Not Implemented", "NotImplemented", "read-only server", NULL, head);
        return;
    }
    /* /bucket/key, decoded */
    const char *p = r->path + 1;
    const char *slash = memchr(p, '/', r->path_n - 1);
    buf key = {0};
    char file[8192];
    if (!slash || !pdecode(slash + 1, r->path_n - (size_t)(slash + 1 - r->path), &key) ||
        !object_path(p, (size_t)(slash - p), key.p, file, sizeof file)) {
        free(key.p);
        error(c, 404, "Not Found", "NoSuchKey", "The specified key does not exist.", NULL, head);
        return;
    }
    free(key.p);
    const object *ob = object_get(file);
    if (!ob) {
        error(c, 404, "Not Found", "NoSuchKey", "The specified key does not exist.", NULL, head);
        return;
    }
    long long size = ob->size, a = 0, b = size - 1;
    bool ranged = false;
    const hdr *rg = find(r, "range");
    if (rg && !head) {
        char t[128];
        snprintf(t, sizeof t, "%.*s", (int)rg->vn, rg->v);
        if (sscanf(t, "bytes=%lld-%lld", &a, &b) != 2 || a < 0 || b < a) {
            error(c, 400, "Bad Request", "InvalidArgument", "unsupported range", NULL, head);
            return;
        }
        if (a >= size) {
            char h[96];
            snprintf(h, sizeof h, "Content-Range: bytes */%lld\r\n", size);
            error(c, 416, "Requested Range Not Satisfiable", "InvalidRange",
                  "The requested range is not satisfiable", h, head);
            return;
        }
        if (b >= size)
            b = size - 1;
        ranged = true;
    }
    size_t n = size > 0 ? (size_t)(b - a + 1) : 0;
    char h[512];
    int hn = snprintf(h, sizeof h,
                      "ETag: \"%llx-%llx\"\r\nAccept-Ranges: bytes\r\n"
                      "Content-Type: application/octet-stream\r\n",
                      (unsigned long long)ob->mtime, (unsigned long long)size);
    if (ranged)
        snprintf(h + hn, sizeof h - (size_t)hn, "Content-Range: bytes %lld-%lld/%lld\r\n", a, b,
                 size);
    if (head) {
        /* HEAD: the object's length, no body */
        buf out = {0};
        char line[256];
        snprintf(line, sizeof line,
                 "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nx-amz-request-id: %016llx\r\n"
                 "Connection: keep-alive\r\n",
                 size, (unsigned long long)n_requests);
        puts_(&out, line);
        puts_(&out, h);
        put(&out, "\r\n", 2);
        c->out = out.p;
        c->out_len = out.n;
        c->out_off = 0;
    } else {
        answer(c, ranged ? 206 : 200, ranged ? "Partial Content" : "OK", h, ob->data + a, n,
               false);
    }
}

/* ---------------------------------------------------------------------------------------
 * connections
 * ------------------------------------------------------------------------------------- */
static void conn_close(conn *c) {
    if (c->queued || c->writing)
        flight(-1);
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->out);
    if (c->queued) { /* leave it in the queue, marked: freed when it comes due */
        c->closing = true;
        c->fd = -1;
        c->out = NULL;
        return;
    }
    free(c);
}

/* A whole request in c->in? Parse it into r; returns its length, 0 when incomplete, -1
 * when malformed. */
static ssize_t parse(conn *c, req *r, char *pathbuf, size_t pbn) {
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end)
        return c->in_len >= MAX_REQ ? -1 : 0;
    size_t hlen = (size_t)(end - c->in) + 4;
    memset(r, 0, sizeof *r);
    char *line_end = memmem(c->in, hlen, "\r\n", 2);
    char target[8192];
    char rl[8400];
    size_t rln = (size_t)(line_end - c->in);
    if (rln >= sizeof rl)
        return -1;
    memcpy(rl, c->in, rln);
    rl[rln] = '\0';
    if (sscanf(rl, "%15s %8191s HTTP/1.1", r->method, target) != 2)
        return -1;
    char *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    snprintf(pathbuf, pbn, "%s%c%s", target, '\0', q ? q : "");
    r->path = pathbuf;
    r->path_n = strlen(target);
    r->query = pathbuf + r->path_n + 1;
    r->query_n = strlen(r->query);
    size_t clen = 0;
    for (char *s = line_end + 2; s < end;) {
        char *e = memmem(s, (size_t)(end + 2 - s), "\r\n", 2);
        char *colon = memchr(s, ':', (size_t)(e - s));
        if (!colon || r->nh == MAX_HDRS || colon - s >= 63)
            return -1;
        hdr *h = &r->h[r->nh++];
        size_t nn = (size_t)(colon - s);
        for (size_t i = 0; i < nn; i++)
            h->name[i] = (char)tolower((unsigned char)s[i]);
        h->name[nn] = '\0';
        h->v = colon + 1;
        h->vn = (size_t)(e - colon - 1);
        while (h->vn && (*h->v == ' ' || *h->v == '\t')) {
            h->v++;
            h->vn--;
        }
        if (!strcmp(h->name, "content-length"))
            clen = (size_t)strtoull(colon + 1, NULL, 10);
        s = e + 2;
    }
    if (hlen + clen > MAX_REQ)
        return -1;
    if (c->in_len < hlen + clen)
        return 0;
    r->body = c->in + hlen;
    r->body_n = clen;
    return (ssize_t)(hlen + clen);
}

static void arm(conn *c, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Serve the next whole request of c->in, if any and c is not busy with one. */
static void try_serve(conn *c) {
    if (c->queued || c->writing)
        return; /* one request at a time: the next waits in c->in */
    req r;
    char pathbuf[8400];
    ssize_t used = parse(c, &r, pathbuf, sizeof pathbuf);
    if (used < 0) {
        conn_close(c);
        return;
    }
    if (used == 0) {
        if (c->paused) { /* the buffer has room again */
            c->paused = false;
            arm(c, EPOLLIN);
        }
        return;
    }
    n_requests++;
    flight(+1);
    serve(c, &r);
    memmove(c->in, c->in + used, c->in_len - (size_t)used);
    c->in_len -= (size_t)used;
    c->due_ns = now_ns() + latency_ns;
    c->queued = true;
    c->next = NULL;
    if (qtail)
        qtail->next = c;
    else
        qhead = c;
    qtail = c;
}

/* Read what the socket has (EPOLLIN stays armed: an answer's wait costs no epoll_ctl). */
static void on_readable(conn *c) {
    for (;;) {
        if (c->in_len == MAX_REQ) { /* full while busy: stop listening until served */
            c->paused = true;
            arm(c, 0);
            break;
        }
        ssize_t n = read(c->fd, c->in + c->in_len, MAX_REQ - c->in_len);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            conn_close(c);
            return;
        }
        if (n < 0 && errno == EAGAIN)
            break;
        if (n > 0)
            c->in_len += (size_t)n;
    }
    try_serve(c);
}

static void on_writable(conn *c) {
    while (c->out_off < c->out_len) {
        ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n < 0) {
            if (errno == EAGAIN) {
                c->want_out = true;
                arm(c, EPOLLIN | EPOLLOUT);
                return;
            }
            if (errno == EINTR)
                continue;
            conn_close(c);
            return;
        }
        c->out_off += (size_t)n;
    }
    free(c->out);
    c->out = NULL;
    c->writing = false;
    flight(-1);
    if (c->want_out) {
        c->want_out = false;
        arm(c, EPOLLIN);
    }
    try_serve(c); /* the next request, if it came already */
}

static void send_due(void) {
    int64_t t = now_ns();
    while (qhead && qhead->due_ns <= t) {
        conn *c = qhead;
        qhead = c->next;
        if (!qhead)
            qtail = NULL;
        c->queued = false;
        if (c->closing) {
            free(c);
            continue;
        }
        c->writing = true;
        on_writable(c);
    }
}

static void on_signal(int s) {
    (void)s;
    stop = 1;
}

int main(int argc, char **argv) {
    int port = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "s3_lat_server: %s wants a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--bucket") && strchr(v, '=') && buckets.n < MAX_BUCKETS) {
            char *s = strdup(v), *eq = strchr(s, '=');
            *eq = '\0';
            buckets.name[buckets.n] = s;
            buckets.dir[buckets.n++] = eq + 1;
        } else if (!strcmp(a, "--access-key")) {
            access_key = v;
        } else if (!strcmp(a, "--secret")) {
            secret = v;
        } else if (!strcmp(a, "--region")) {
            region = v;
        } else if (!strcmp(a, "--latency-ms")) {
            latency_ns = (int64_t)(atof(v) * 1e6);
        } else if (!strcmp(a, "--port")) {
            port = atoi(v);
        } else {
            fprintf(stderr, "s3_lat_server: unknown argument %s\n", a);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sin;
    if (bind(ls, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(ls, 1024) != 0 ||
        getsockname(ls, (struct sockaddr *)&sin, &sl) != 0) {
        perror("s3_lat_server: listen");
        return 1;
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev);
    printf("{\"port\": %d}\n", ntohs(sin.sin_port));
    fflush(stdout);
    struct epoll_event evs[256];
    while (!stop) {
        int timeout = -1;
        if (qhead) {
            int64_t left = qhead->due_ns - now_ns();
            timeout = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
        }
        int n = epoll_wait(ep, evs, 256, timeout);
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if (!c) {
                for (;;) {
                    int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0)
                        break;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conn *nc = calloc(1, sizeof *nc);
                    if (!nc) {
                        close(fd);
                        continue;
                    }
                    nc->fd = fd;
                    n_connections++;
                    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
            } else if ((evs[i].events & EPOLLOUT) && c->writing) {
                on_writable(c);
            } else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                on_readable(c); /* a closed peer reads 0: the connection goes */
            }
        }
        send_due();
    }
    return 0;
}
