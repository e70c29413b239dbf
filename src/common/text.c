/*
 * text.c - text helpers every module shares: UTF-8 validation, JSON string escaping,
 * base64 and hex digits (see floe/common.h). One escaper for the whole project, so that every JSON
 * floe writes (quarantine lines, scan rows, health reports, run logs, CLI output) quotes
 * strings the same way.
 */
#include "floe/common.h"

#include <string.h>

#define HX16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
const int8_t floe_hex_values[256] = {
    HX16, HX16, HX16,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,                 /* 0x30 */
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,       /* 0x40 */
    HX16,
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,       /* 0x60 */
    HX16, HX16, HX16, HX16, HX16, HX16, HX16, HX16, HX16,
};
#undef HX16

size_t floe_utf8_seq_len(const uint8_t *p, size_t n) {
    if (n == 0)
        return 0;
    uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

size_t floe_utf8_invalid_at(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t len = floe_utf8_seq_len(p + i, n - i);
        if (len == 0)
            return i;
        i += len;
    }
    return n;
}

bool floe_utf8_valid(const uint8_t *p, size_t n) { return floe_utf8_invalid_at(p, n) == n; }

int floe_json_append_string(floe_buf *b, const uint8_t *p, size_t n) {
    if (n == 0)
        return floe_buf_append(b, "\"\"", 2);
    int rc = floe_buf_reserve(b, n + 2);
    if (rc < 0)
        return rc;
    b->data[b->len++] = '"';
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        char esc[6];
        size_t el = floe_json_escape_byte(p[i], esc);
        if (el == 0)
            continue;
        if ((rc = floe_buf_append(b, p + start, i - start)) < 0)
            return rc;
        if ((rc = floe_buf_append(b, esc, el)) < 0)
            return rc;
        start = i + 1;
    }
    if ((rc = floe_buf_append(b, p + start, n - start)) < 0)
        return rc;
    return floe_buf_append_byte(b, '"');
}

int floe_json_append_text(floe_buf *b, const uint8_t *p, size_t n) {
    floe_buf t;
    floe_buf_init(&t, 0);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t len = floe_utf8_seq_len(p + i, n - i);
        rc = len ? floe_buf_append(&t, p + i, len) : floe_buf_printf(&t, "\\x%02x", p[i]);
        i += len ? len : 1;
    }
    if (rc == 0)
        rc = floe_json_append_string(b, t.data, t.len);
    floe_buf_free(&t);
    return rc;
}

int floe_buf_append_utf8(floe_buf *b, uint32_t cp) {
    uint8_t u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (uint8_t)(0xC0 | (cp >> 6));
        u[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xE0 | (cp >> 12));
        u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | (cp >> 18));
        u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return floe_buf_append(b, u, n);
}

int floe_buf_append_date(floe_buf *b, int64_t days) {
    int64_t y;
    unsigned m, d;
    floe_civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999)
        return floe_buf_printf(b, "%04lld-%02u-%02u", (long long)y, m, d);
    return floe_buf_printf(b, "%c%06lld-%02u-%02u", y < 0 ? '-' : '+',
                           (long long)(y < 0 ? -y : y), m, d);
}

int floe_base64_append(floe_buf *b, const uint8_t *p, size_t n) {
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int rc = floe_buf_reserve(b, (n + 2) / 3 * 4);
    if (rc < 0)
        return rc;
    char *o = (char *)b->data + b->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = tbl[(v >> 6) & 63];
        *o++ = tbl[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    b->len = (size_t)((uint8_t *)o - b->data);
    return 0;
}

int floe_json_append_cstr(floe_buf *b, const char *s) {
    return s ? floe_json_append_string(b, (const uint8_t *)s, strlen(s))
             : floe_buf_append(b, "\"\"", 2);
}
