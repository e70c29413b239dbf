/*
 * scan_value.c - canonical text <-> single values, and user literals, for the scan
 * (row filters, defaults, partition constants) and for metrics read from Parquet
 * statistics. The text form is the one floe's Parquet reader prints; see
 * scan_internal.h. Dates, times, timestamps and decimals parse in common/literal.h: the
 * canonical text in its ISO form, user literals as --where literals (floe_lit_where_*,
 * the same typing as floe cat's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/literal.h"
#include "scan_internal.h"
#include "value_text.h"

/* What a literal of f's type looks like, for the refusal. */
static const char *expected_form(const floe_field *f, char *buf, size_t n) {
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: return "expected true or false";
    case FLOE_TYPE_INT: return "expected an integer from -2147483648 to 2147483647";
    case FLOE_TYPE_LONG:
        return "expected an integer from -9223372036854775808 to 9223372036854775807";
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE: return "expected a number, 'NaN', 'Infinity' or '-Infinity'";
    case FLOE_TYPE_STRING: return "expected a quoted string, 'text'";
    case FLOE_TYPE_UUID: return "expected a UUID, 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' in hex";
    case FLOE_TYPE_BINARY: return "expected hex digits, two per byte, 'cafe01'";
    case FLOE_TYPE_FIXED:
        snprintf(buf, n, "expected %d bytes as %d hex digits", (int)f->length,
                 2 * (int)f->length);
        return buf;
    default: return NULL;
    }
}

static int bad(floe_error *err, const floe_field *f, const char *p, size_t n) {
    char ty[64], form[64];
    const char *want = expected_form(f, form, sizeof form);
    return floe_error_set(err, FLOE_EINVALID, "value %.*s does not fit column %s (%s)%s%s",
                          (int)(n > 64 ? 64 : n), p, f->name ? f->name : "?",
                          floe_field_type_str(f, ty, sizeof ty), want ? ": " : "",
                          want ? want : "");
}

/* The same with the literal parser's reason. */
static int bad_why(floe_error *err, const floe_field *f, const char *p, size_t n,
                   const char *why) {
    char ty[64];
    return floe_error_set(err, FLOE_EINVALID, "value %.*s does not fit column %s (%s): %s",
                          (int)(n > 64 ? 64 : n), p, f->name ? f->name : "?",
                          floe_field_type_str(f, ty, sizeof ty), why);
}

static void put_utf8(uint8_t *o, size_t *k, uint32_t cp) {
    if (cp < 0x80) {
        o[(*k)++] = (uint8_t)cp;
    } else if (cp < 0x800) {
        o[(*k)++] = (uint8_t)(0xC0 | (cp >> 6));
        o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        o[(*k)++] = (uint8_t)(0xE0 | (cp >> 12));
        o[(*k)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
        o[(*k)++] = (uint8_t)(0xF0 | (cp >> 18));
        o[(*k)++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        o[(*k)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[(*k)++] = (uint8_t)(0x80 | (cp & 0x3F));
    }
}

/* The content of a JSON string p[0..n) (with quotes), unescaped. Borrows p when there is
 * nothing to undo. */
static bool json_string(const char *p, size_t n, floe_arena *arena, const uint8_t **s,
                        size_t *len) {
    if (n < 2 || p[0] != '"' || p[n - 1] != '"')
        return false;
    p++;
    n -= 2;
    if (!memchr(p, '\\', n)) {
        *s = (const uint8_t *)p;
        *len = n;
        return true;
    }
    uint8_t *o = floe_arena_alloc(arena, n + 1);
    if (!o)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\\') {
            o[k++] = (uint8_t)p[i];
            continue;
        }
        if (++i >= n)
            return false;
        switch (p[i]) {
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            if (i + 4 >= n)
                return false;
            uint32_t cp = 0;
            for (int j = 1; j <= 4; j++) {
                int h = floe_hex_value(p[i + (size_t)j]);
                if (h < 0)
                    return false;
                cp = cp * 16 + (uint32_t)h;
            }
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && p[i + 1] == '\\' &&
                p[i + 2] == 'u') {
                uint32_t lo = 0;
                bool ok = true;
                for (int j = 3; j <= 6 && ok; j++) {
                    int h = floe_hex_value(p[i + (size_t)j]);
                    ok = h >= 0;
                    lo = lo * 16 + (uint32_t)(h < 0 ? 0 : h);
                }
                if (ok && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            put_utf8(o, &k, cp); /* \uXXXX takes 6 input bytes, at most 4 output */
            break;
        }
        default: o[k++] = (uint8_t)p[i]; break;
        }
    }
    *s = o;
    *len = k;
    return true;
}

static bool parse_f64(const char *p, size_t n, double *out) {
    if (n >= 2 && p[0] == '"') {
        p++;
        n -= 2;
    }
    if (n == 3 && !memcmp(p, "NaN", 3)) {
        *out = NAN;
        return true;
    }
    if (n == 8 && !memcmp(p, "Infinity", 8)) {
        *out = INFINITY;
        return true;
    }
    if (n == 9 && !memcmp(p, "-Infinity", 9)) {
        *out = -INFINITY;
        return true;
    }
    return floe_parse_f64(p, n, out);
}

/* A canonical timestamp (ISO form; tz columns carry a zero offset, others none) in the
 * column's unit. */
static int ts_canonical(const floe_field *f, const char *s, size_t n, int64_t *out, char *why,
                        size_t whyn) {
    floe_lit_ts t;
    int rc = floe_lit_timestamp(s, n, FLOE_LIT_ISO, &t, why, whyn);
    if (rc != FLOE_LIT_OK)
        return rc;
    bool tz = f->type == FLOE_TYPE_TIMESTAMPTZ || f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
    if (tz ? !t.zone || t.offset != 0 : t.zone) {
        snprintf(why, whyn, "%s", tz ? "offset must be +00:00" : "must not carry a zone offset");
        return FLOE_LIT_SYNTAX;
    }
    bool ns = f->type == FLOE_TYPE_TIMESTAMP_NS || f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
    return floe_lit_ts_units(&t, ns ? 9 : 6, out, why, whyn);
}

static int parse_value(const floe_field *f, const char *p, size_t n, floe_arena *arena,
                       bool lenient, floe_value *out, floe_error *err) {
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n'))
        n--;
    if (n == 4 && !memcmp(p, "null", 4)) {
        *out = floe_value_null(f->type);
        return 0;
    }
    const uint8_t *s = (const uint8_t *)p;
    size_t sl = n;
    bool quoted = n >= 2 && p[0] == '"';
    if (quoted && !json_string(p, n, arena, &s, &sl))
        return bad(err, f, p, n);
    if (!quoted && lenient && n >= 2 && p[0] == '\'' && p[n - 1] == '\'') {
        s = (const uint8_t *)p + 1;
        sl = n - 2;
        quoted = true;
    }
    const char *t = (const char *)s;
    char why[128];
    floe_value v;
    memset(&v, 0, sizeof v);
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN:
        if (sl == 4 && !memcmp(t, "true", 4))
            v = floe_value_bool(true);
        else if (sl == 5 && !memcmp(t, "false", 5))
            v = floe_value_bool(false);
        else
            return bad(err, f, p, n);
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_LONG: {
        int64_t x;
        if (!floe_parse_i64(t, sl, &x) || (f->type == FLOE_TYPE_INT && (x < INT32_MIN || x > INT32_MAX)))
            return bad(err, f, p, n);
        v = f->type == FLOE_TYPE_INT ? floe_value_int((int32_t)x) : floe_value_long(x);
        break;
    }
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE: {
        double d;
        if (!parse_f64(quoted ? p : t, quoted ? n : sl, &d) && !parse_f64(t, sl, &d))
            return bad(err, f, p, n);
        v = f->type == FLOE_TYPE_FLOAT ? floe_value_float((float)d) : floe_value_double(d);
        break;
    }
    case FLOE_TYPE_DECIMAL: {
        floe_i128 u;
        floe_lit_dec dec;
        if (lenient) {
            /* a filter literal may have more digits than the column: it still compares */
            if (floe_lit_decimal_at(t, sl, 38, f->scale, &u, why, sizeof why) != FLOE_LIT_OK)
                return bad_why(err, f, p, n, why);
        } else {
            if (floe_lit_decimal(t, sl, &dec, why, sizeof why) != FLOE_LIT_OK)
                return bad_why(err, f, p, n, why);
            u = dec.unscaled;
            if (dec.written != f->scale || !floe_lit_rescale(&u, dec.scale, f->scale, 38))
                return bad(err, f, p, n);
        }
        v = floe_value_decimal(u, f->precision, f->scale);
        break;
    }
    case FLOE_TYPE_DATE: {
        int32_t days;
        int rc = lenient ? floe_lit_where_date(t, sl, quoted, &days, why, sizeof why)
                         : floe_lit_date(t, sl, FLOE_LIT_ISO, &days, why, sizeof why);
        if (rc != FLOE_LIT_OK)
            return bad_why(err, f, p, n, why);
        v = floe_value_date(days);
        break;
    }
    case FLOE_TYPE_TIME: {
        int64_t us, nod;
        int rc = lenient ? floe_lit_where_time(t, sl, quoted, &us, why, sizeof why)
                         : floe_lit_time(t, sl, &nod, why, sizeof why);
        if (rc != FLOE_LIT_OK)
            return bad_why(err, f, p, n, why);
        v = floe_value_i64(FLOE_TYPE_TIME, lenient ? us : nod / 1000);
        break;
    }
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        int64_t x;
        bool ns = f->type == FLOE_TYPE_TIMESTAMP_NS || f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        bool zoned = f->type == FLOE_TYPE_TIMESTAMPTZ || f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        int rc = lenient ? floe_lit_where_timestamp(t, sl, quoted, zoned, ns ? 9 : 6, &x, why,
                                                    sizeof why)
                         : ts_canonical(f, t, sl, &x, why, sizeof why);
        /* the literal parser reads the date first: "expected a date" is the whole form */
        if (rc != FLOE_LIT_OK && !strncmp(why, "expected a date", 15))
            snprintf(why, sizeof why, "expected a timestamp 'YYYY-MM-DD[THH:MM:SS[.%s]]%s'",
                     ns ? "fffffffff" : "ffffff", zoned ? "[Z|+HH:MM]" : "");
        if (rc != FLOE_LIT_OK)
            return bad_why(err, f, p, n, why);
        v = floe_value_i64(f->type, x);
        break;
    }
    case FLOE_TYPE_STRING:
        if (!quoted)
            return bad(err, f, p, n);
        v = floe_value_string(t, sl);
        break;
    case FLOE_TYPE_UUID: {
        uint8_t u[16];
        if (!floe_vt_parse_uuid(t, sl, u))
            return bad(err, f, p, n);
        v = floe_value_uuid(u);
        break;
    }
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_BINARY: {
        if (sl % 2)
            return bad(err, f, p, n);
        uint8_t *b = floe_arena_alloc(arena, sl / 2 + 1);
        if (!b)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < sl / 2; i++) {
            int hi = floe_hex_value(t[2 * i]), lo = floe_hex_value(t[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return bad(err, f, p, n);
            b[i] = (uint8_t)(hi * 16 + lo);
        }
        if (f->type == FLOE_TYPE_FIXED && f->length > 0 && sl / 2 != (size_t)f->length)
            return bad(err, f, p, n);
        v = f->type == FLOE_TYPE_FIXED ? floe_value_fixed(b, sl / 2) : floe_value_binary(b, sl / 2);
        break;
    }
    default:
        return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: nested values have no "
                              "single-value form", f->name ? f->name : "?");
    }
    *out = v;
    return 0;
}

int floe_sv_from_canonical(const floe_field *f, const char *p, size_t n, floe_arena *arena,
                           floe_value *out, floe_error *err) {
    return parse_value(f, p, n, arena, false, out, err);
}

int floe_sv_from_literal(const floe_field *f, const char *p, size_t n, floe_arena *arena,
                         floe_value *out, floe_error *err) {
    return parse_value(f, p, n, arena, true, out, err);
}

/* ---------------------------------------------------------------------------------------
 * rendering
 * ------------------------------------------------------------------------------------- */

int floe_sv_to_canonical(const floe_value *v, floe_buf *b) {
    if (v->is_null)
        return floe_buf_append(b, "null", 4);
    int rc = 0;
    switch (v->type) {
    case FLOE_TYPE_BOOLEAN: return floe_buf_append(b, v->v.b ? "true" : "false", v->v.b ? 4 : 5);
    case FLOE_TYPE_INT: return floe_buf_printf(b, "%d", v->v.i32);
    case FLOE_TYPE_LONG: return floe_buf_printf(b, "%lld", (long long)v->v.i64);
    case FLOE_TYPE_FLOAT: return floe_buf_append_js_double(b, (double)v->v.f);
    case FLOE_TYPE_DOUBLE: return floe_buf_append_js_double(b, v->v.d);
    case FLOE_TYPE_DECIMAL:
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0) {
            char d[48];
            floe_i128 u = v->v.dec.unscaled;
            size_t nd = floe_vt_i128_digits(u, d);
            int32_t sc = v->v.dec.scale > 0 ? v->v.dec.scale : 0;
            if (u < 0)
                rc |= floe_buf_append_byte(b, '-');
            if ((size_t)sc >= nd) {
                rc |= floe_buf_append(b, "0.", 2);
                for (size_t i = nd; i < (size_t)sc; i++)
                    rc |= floe_buf_append_byte(b, '0');
                rc |= floe_buf_append(b, d, nd);
            } else {
                rc |= floe_buf_append(b, d, nd - (size_t)sc);
                if (sc) {
                    rc |= floe_buf_append_byte(b, '.');
                    rc |= floe_buf_append(b, d + nd - (size_t)sc, (size_t)sc);
                }
            }
        }
        return rc < 0 ? FLOE_ENOMEM : floe_buf_append_byte(b, '"');
    case FLOE_TYPE_DATE:
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_vt_date_iso(b, v->v.i32);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    case FLOE_TYPE_TIME:
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_vt_time_iso_fixed(b, v->v.i64 * 1000, 6);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        bool ns = v->type == FLOE_TYPE_TIMESTAMP_NS || v->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        bool tz = v->type == FLOE_TYPE_TIMESTAMPTZ || v->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        int64_t per = ns ? 1000000000 : 1000000;
        /* floor division and modulo: sec * per would overflow in the first second of
         * the nanosecond range */
        int64_t sec = floe_floordiv64(v->v.i64, per);
        int64_t frac = floe_floormod64(v->v.i64, per);
        int64_t days = floe_floordiv64(sec, 86400);
        int64_t sod = floe_floormod64(sec, 86400);
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_vt_date_iso(b, days);
        if (rc == 0)
            rc = floe_buf_printf(b, "T%02d:%02d:%02d.%0*lld%s\"", (int)(sod / 3600),
                                 (int)(sod / 60 % 60), (int)(sod % 60), ns ? 9 : 6,
                                 (long long)frac, tz ? "Z" : "");
        return rc;
    }
    case FLOE_TYPE_STRING: return floe_json_append_string(b, v->v.bytes.p, v->v.bytes.n);
    case FLOE_TYPE_UUID:
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_vt_uuid(b, v->v.uuid);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_BINARY:
        rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_vt_hex(b, v->v.bytes.p, v->v.bytes.n);
        return rc < 0 ? rc : floe_buf_append_byte(b, '"');
    default: return floe_buf_append(b, "null", 4);
    }
}

/* ---------------------------------------------------------------------------------------
 * JSON object text: top-level key/value spans
 * ------------------------------------------------------------------------------------- */

static size_t skip_string(const char *s, size_t n, size_t i) {
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

size_t floe_jtext_skip_value(const char *s, size_t n, size_t i) {
    if (i >= n)
        return n;
    if (s[i] == '"')
        return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = skip_string(s, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']')
        i++;
    return i;
}

/* Call fn for each member of the object text s[0..n). Keys are the raw text between the
 * quotes. FLOE_ECORRUPT for text that is not an object. */
int floe_jtext_each_member(const char *s, size_t n, floe_jtext_kv_fn fn, void *ctx) {
    size_t i = 0;
    if (n == 0 || s[0] != '{')
        return FLOE_ECORRUPT;
    i = 1;
    if (i < n && s[i] == '}')
        return 0;
    while (i < n) {
        if (s[i] != '"')
            return FLOE_ECORRUPT;
        size_t ke = skip_string(s, n, i);
        floe_jspan key = {s + i + 1, ke - i - 2};
        i = ke;
        if (i >= n || s[i] != ':')
            return FLOE_ECORRUPT;
        i++;
        size_t ve = floe_jtext_skip_value(s, n, i);
        floe_jspan val = {s + i, ve - i};
        int rc = fn(ctx, key, val);
        if (rc)
            return rc;
        i = ve;
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}')
            return 0;
        return FLOE_ECORRUPT;
    }
    return FLOE_ECORRUPT;
}

/* Whether key, the text between the quotes of a member name the reader wrote (with
 * floe_json_append_string), spells name. */
bool floe_jtext_key_is(floe_jspan key, const char *name) {
    size_t i = 0;
    for (const uint8_t *s = (const uint8_t *)name; *s; s++) {
        char esc[6];
        size_t el = floe_json_escape_byte(*s, esc);
        if (el == 0 && (i >= key.n || key.p[i] != (char)*s))
            return false;
        if (el && (key.n - i < el || memcmp(key.p + i, esc, el)))
            return false;
        i += el ? el : 1;
    }
    return i == key.n;
}

typedef struct find_ctx {
    const char *name;
    floe_jspan out;
    bool found;
} find_ctx;

static int find_cb(void *ctx, floe_jspan key, floe_jspan value) {
    find_ctx *f = ctx;
    if (floe_jtext_key_is(key, f->name)) {
        f->out = value;
        f->found = true;
        return 1;
    }
    return 0;
}

/* Member `name` of an object text. */
bool floe_jtext_member(floe_jspan obj, const char *name, floe_jspan *out) {
    find_ctx f = {.name = name};
    if (obj.n < 2 || obj.p[0] != '{')
        return false;
    floe_jtext_each_member(obj.p, obj.n, find_cb, &f);
    if (f.found)
        *out = f.out;
    return f.found;
}
