/*
 * common/httphead.c - request heads refused before the body (common/httphead.h).
 */
#include "common/httphead.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

typedef struct head {
    int lengths;        /* Content-Length values seen */
    bool conflict;      /* two values differ, or one is not 1*DIGIT */
    unsigned long long length;
    int encodings;      /* Transfer-Encoding fields seen */
    bool chunked_only;  /* every Transfer-Encoding field is exactly "chunked" */
    bool other_coding;  /* a coding other than chunked is named */
    int hosts;          /* Host fields seen */
    bool bad_name;      /* a field name that is not a token (white space before the colon) */
} head;

/* RFC 9110 5.1: a field name is a token (1*tchar). */
static bool is_token(const char *s) {
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (!*s)
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c && strchr(extra, c))))
            return false;
    }
    return true;
}

static void content_length(head *h, const char *value) {
    const char *p = value;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *d = p;
        unsigned long long v = 0;
        while (*p >= '0' && *p <= '9' && v <= (ULLONG_MAX - 9) / 10)
            v = v * 10 + (unsigned long long)(*p++ - '0');
        if (p == d || (*p >= '0' && *p <= '9'))
            h->conflict = true; /* empty, not a number, or too large */
        else if (h->lengths++ && v != h->length)
            h->conflict = true;
        h->length = v;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ',')
            break;
        p++;
    }
    if (*p)
        h->conflict = true;
}

static void transfer_encoding(head *h, const char *value) {
    const char *p = value;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n != 7 || strncasecmp(p, "chunked", 7))
        h->chunked_only = false;
    /* each comma-separated coding: one not "chunked" is one this server cannot decode */
    for (const char *q = p, *end = p + n; q < end;) {
        const char *c = q + strspn(q, " \t");
        size_t k = strcspn(c, ",");
        if (c + k > end)
            k = (size_t)(end - c);
        size_t t = k;
        while (t && (c[t - 1] == ' ' || c[t - 1] == '\t'))
            t--;
        if (t && (t != 7 || strncasecmp(c, "chunked", 7)))
            h->other_coding = true;
        q = c + k + 1;
    }
    h->encodings++;
}

static enum MHD_Result head_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value) {
    (void)kind;
    head *h = cls;
    if (!value)
        value = "";
    if (!key || !is_token(key)) {
        h->bad_name = true; /* "Content-Length : 5" would frame nothing here, and a body */
        return MHD_YES;     /* a proxy frames by it would run as a second request */
    }
    if (!strcasecmp(key, "Content-Length"))
        content_length(h, value);
    else if (!strcasecmp(key, "Transfer-Encoding"))
        transfer_encoding(h, value);
    else if (!strcasecmp(key, "Host"))
        h->hosts++;
    return MHD_YES;
}

const char *floe_http_head_error(struct MHD_Connection *c, int *status) {
    head h = {.chunked_only = true};
    MHD_get_connection_values(c, MHD_HEADER_KIND, head_field, &h);
    *status = 400;
    if (h.bad_name) /* RFC 9112 5.1: MUST reject white space between name and colon */
        return "a header field name with white space or a character not allowed in a token";
    if (h.conflict)
        return "conflicting or malformed Content-Length";
    if (h.encodings && h.lengths)
        return "both Content-Length and Transfer-Encoding";
    if (h.encodings && h.other_coding) {
        *status = 501;
        return "Transfer-Encoding: only chunked is implemented";
    }
    if (h.encodings && (h.encodings > 1 || !h.chunked_only))
        return "Transfer-Encoding must be chunked alone";
    if (h.hosts > 1)
        return "more than one Host header";
    return NULL;
}
