/*
 * s3_xml.c - a small XML scanner for S3 response bodies, and RFC 3339 timestamps.
 *
 * S3 answers in plain XML: nested elements with text leaves, a default namespace, the five
 * predefined entities and character references. This scanner reports each leaf element
 * (parent name, name, decoded text) and the end of each element with children, which is
 * all a ListBucketResult, an Error or an InitiateMultipartUploadResult needs.
 *
 * Hostile input: the body comes from the network. Nesting is capped (MAX_DEPTH), names are
 * capped (MAX_NAME), text is decoded into a buffer never larger than the input, and DTDs
 * are refused outright (no entity expansion, no external references).
 */
#include <string.h>

#include "common/literal.h"
#include "s3_internal.h"

#define MAX_DEPTH 32
#define MAX_NAME 128

typedef struct xml_frame {
    char name[MAX_NAME];
    bool has_children;
} xml_frame;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static bool is_name_char(char c) {
    return (unsigned char)c > ' ' && c != '>' && c != '/' && c != '=' && c != '<' &&
           c != '"' && c != '\'' && c != '&' && c != 0x7f;
}

/* Decode an entity starting at p[i] == '&'; advances *i past the ';'. */
static int decode_entity(const char *p, size_t n, size_t *i, floe_buf *text, floe_error *err) {
    size_t start = *i + 1, j = start;
    while (j < n && j - start < 12 && p[j] != ';')
        j++;
    if (j >= n || p[j] != ';')
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i, "xml: unterminated entity");
    const char *e = p + start;
    size_t el = j - start;
    int rc = 0;
    if (el == 2 && !memcmp(e, "lt", 2))
        rc = floe_buf_append_byte(text, '<');
    else if (el == 2 && !memcmp(e, "gt", 2))
        rc = floe_buf_append_byte(text, '>');
    else if (el == 3 && !memcmp(e, "amp", 3))
        rc = floe_buf_append_byte(text, '&');
    else if (el == 4 && !memcmp(e, "quot", 4))
        rc = floe_buf_append_byte(text, '"');
    else if (el == 4 && !memcmp(e, "apos", 4))
        rc = floe_buf_append_byte(text, '\'');
    else if (el >= 2 && e[0] == '#') {
        uint32_t cp = 0;
        bool hexa = e[1] == 'x' || e[1] == 'X';
        size_t k = hexa ? 2 : 1;
        if (k >= el)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i, "xml: bad character reference");
        for (; k < el; k++) {
            char c = e[k];
            uint32_t d;
            if (c >= '0' && c <= '9')
                d = (uint32_t)(c - '0');
            else if (hexa && c >= 'a' && c <= 'f')
                d = (uint32_t)(c - 'a' + 10);
            else if (hexa && c >= 'A' && c <= 'F')
                d = (uint32_t)(c - 'A' + 10);
            else
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i,
                                     "xml: bad character reference");
            cp = cp * (hexa ? 16 : 10) + d;
            if (cp > 0x10FFFF)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i,
                                     "xml: character reference out of range");
        }
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i,
                                 "xml: character reference out of range");
        rc = floe_buf_append_utf8(text, cp);
    } else {
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*i, "xml: unknown entity &%.*s;",
                             (int)el, e);
    }
    if (rc < 0)
        return floe_error_set(err, rc, "xml: text too large");
    *i = j + 1;
    return 0;
}

/* Find the end of a construct: the first occurrence of term at or after i. */
static size_t find(const char *p, size_t n, size_t i, const char *term) {
    size_t tl = strlen(term);
    for (; i + tl <= n; i++)
        if (!memcmp(p + i, term, tl))
            return i;
    return n;
}

int floe_s3_xml_scan(const char *p, size_t n, floe_s3_xml_fn fn, void *ctx, floe_error *err) {
    xml_frame stack[MAX_DEPTH];
    int depth = 0;
    int rc = 0;
    bool seen_root = false;
    floe_buf text;
    floe_buf_init(&text, n + 1);
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        if (c != '<') {
            if (c == '&') {
                if (depth == 0)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "xml: text outside the root element at %zu",
                              i);
                FLOE_CHECK(decode_entity(p, n, &i, &text, err));
            } else {
                if (depth == 0 && !is_space(c))
                    FLOE_FAIL(err, FLOE_ECORRUPT, "xml: text outside the root element at %zu",
                              i);
                if ((rc = floe_buf_append_byte(&text, (uint8_t)c)) < 0)
                    FLOE_FAIL(err, rc, "xml: text too large");
                i++;
            }
            continue;
        }
        if (i + 1 >= n)
            FLOE_FAIL(err, FLOE_ECORRUPT, "xml: truncated at %zu", i);
        if (p[i + 1] == '?') { /* declaration or processing instruction */
            size_t e = find(p, n, i + 2, "?>");
            if (e >= n)
                FLOE_FAIL(err, FLOE_ECORRUPT, "xml: unterminated <? at %zu", i);
            i = e + 2;
            continue;
        }
        if (p[i + 1] == '!') {
            if (n - i >= 4 && !memcmp(p + i, "<!--", 4)) {
                size_t e = find(p, n, i + 4, "-->");
                if (e >= n)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "xml: unterminated comment at %zu", i);
                i = e + 3;
                continue;
            }
            if (n - i >= 9 && !memcmp(p + i, "<![CDATA[", 9)) {
                size_t e = find(p, n, i + 9, "]]>");
                if (e >= n || depth == 0)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "xml: bad CDATA section at %zu", i);
                if ((rc = floe_buf_append(&text, p + i + 9, e - (i + 9))) < 0)
                    FLOE_FAIL(err, rc, "xml: text too large");
                i = e + 3;
                continue;
            }
            /* <!DOCTYPE and friends: S3 never sends them, and they are how entity bombs
             * and external references get in. */
            FLOE_FAIL(err, FLOE_ECORRUPT, "xml: DTDs are not accepted (at %zu)", i);
        }
        bool closing = p[i + 1] == '/';
        size_t ns = i + (closing ? 2 : 1), ne = ns;
        while (ne < n && is_name_char(p[ne]))
            ne++;
        if (ne == ns || ne - ns >= MAX_NAME)
            FLOE_FAIL(err, FLOE_ECORRUPT, "xml: bad element name at %zu", i);
        /* skip attributes (quoted values may hold '>') up to '>' */
        size_t k = ne;
        char quote = 0;
        while (k < n && (quote || p[k] != '>')) {
            if (quote && p[k] == quote)
                quote = 0;
            else if (!quote && (p[k] == '"' || p[k] == '\''))
                quote = p[k];
            k++;
        }
        if (k >= n)
            FLOE_FAIL(err, FLOE_ECORRUPT, "xml: unterminated tag at %zu", i);
        bool self_closing = !closing && k > ne && p[k - 1] == '/';
        /* local name: drop a namespace prefix */
        const char *name = p + ns;
        size_t name_len = ne - ns;
        const char *colon = memchr(name, ':', name_len);
        if (colon) {
            name_len -= (size_t)(colon + 1 - name);
            name = colon + 1;
        }
        if (name_len == 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "xml: empty element name at %zu", i);
        if (closing) {
            if (depth == 0 || strlen(stack[depth - 1].name) != name_len ||
                memcmp(stack[depth - 1].name, name, name_len) != 0)
                FLOE_FAIL(err, FLOE_ECORRUPT, "xml: mismatched </%.*s> at %zu", (int)name_len,
                          name, i);
            depth--;
            const char *parent = depth > 0 ? stack[depth - 1].name : "";
            int stop;
            if (stack[depth].has_children) {
                stop = fn(ctx, parent, stack[depth].name, NULL, 0);
            } else {
                if ((rc = floe_buf_append_byte(&text, 0)) < 0)
                    FLOE_FAIL(err, rc, "xml: text too large");
                stop = fn(ctx, parent, stack[depth].name, (const char *)text.data,
                          text.len - 1);
            }
            floe_buf_reset(&text);
            if (stop)
                goto done;
        } else {
            if (depth == 0 && seen_root)
                FLOE_FAIL(err, FLOE_ECORRUPT, "xml: second root element at %zu", i);
            if (depth > 0)
                stack[depth - 1].has_children = true;
            floe_buf_reset(&text); /* whitespace between elements is not content */
            if (self_closing) {
                char nm[MAX_NAME];
                memcpy(nm, name, name_len);
                nm[name_len] = '\0';
                seen_root = true;
                if (fn(ctx, depth > 0 ? stack[depth - 1].name : "", nm, "", 0))
                    goto done;
            } else {
                if (depth >= MAX_DEPTH)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "xml: nested too deep at %zu", i);
                memcpy(stack[depth].name, name, name_len);
                stack[depth].name[name_len] = '\0';
                stack[depth].has_children = false;
                depth++;
                seen_root = true;
            }
        }
        i = k + 1;
    }
    if (depth != 0 || !seen_root)
        FLOE_FAIL(err, FLOE_ECORRUPT, "xml: truncated document");
done:
    floe_buf_free(&text);
    return rc;
}

int floe_s3_parse_time(const char *s, int64_t *ms, floe_error *err) {
    floe_lit_ts t;
    if (floe_lit_timestamp(s, strlen(s), FLOE_LIT_STRICT, &t, NULL, 0) != FLOE_LIT_OK ||
        !t.zone || floe_lit_ts_units(&t, 3, ms, NULL, 0) != FLOE_LIT_OK)
        return floe_error_set(err, FLOE_ECORRUPT, "bad timestamp \"%.40s\"", s);
    return 0;
}
