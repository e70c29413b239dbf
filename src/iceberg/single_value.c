/*
 * single_value.c - Iceberg single-value serialization, binary and JSON.
 *
 * Spec: format/spec.md "Appendix D: Single-value serialization" (binary, used for
 * manifest bounds and partition summaries; JSON, used for defaults and partition values
 * in metadata). Binary input is hostile: every length is checked against the type before
 * a byte is read. Following the reference reader, a long accepts a 4-byte int and a
 * double a 4-byte float, since bounds written before a type promotion keep their width.
 */
#include "floe/partition.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "common/literal.h"
#include "iceberg/scan_internal.h"
#include "iceberg/value_text.h"

/* ---- binary ------------------------------------------------------------------------------ */

int floe_value_to_binary(const floe_value *v, floe_buf *out, floe_error *err) {
    uint8_t b[16];
    size_t n = 0;
    const uint8_t *src = b;
    FLOE_RETURN_ERROR_IF(v->is_null, err, FLOE_EINVALID, "binary value: null has no form");
    switch (v->type) {
    case FLOE_TYPE_BOOLEAN:
        b[0] = v->v.b ? 1 : 0;
        n = 1;
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        floe_store_le32(b, (uint32_t)v->v.i32);
        n = 4;
        break;
    case FLOE_TYPE_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v->v.f, 4);
        floe_store_le32(b, bits);
        n = 4;
        break;
    }
    case FLOE_TYPE_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->v.d, 8);
        floe_store_le64(b, bits);
        n = 8;
        break;
    }
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        floe_store_le64(b, (uint64_t)v->v.i64);
        n = 8;
        break;
    case FLOE_TYPE_DECIMAL: {
        /* minimum big-endian two's complement bytes, at least one */
        uint8_t full[16];
        unsigned __int128 u = (unsigned __int128)v->v.dec.unscaled;
        for (int i = 15; i >= 0; i--, u >>= 8)
            full[i] = (uint8_t)u;
        size_t s = 0;
        while (s < 15 && ((full[s] == 0x00 && !(full[s + 1] & 0x80)) ||
                          (full[s] == 0xff && (full[s + 1] & 0x80))))
            s++;
        n = 16 - s;
        memcpy(b, full + s, n);
        break;
    }
    case FLOE_TYPE_UUID:
        src = v->v.uuid;
        n = 16;
        break;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED:
        src = v->v.bytes.p;
        n = v->v.bytes.n;
        break;
    default:
        return floe_error_set(err, FLOE_EINVALID, "binary value: type %s not supported",
                              floe_xf_type_name(v->type));
    }
    int rc = floe_buf_append(out, src, n);
    return rc < 0 ? floe_error_set(err, rc, "binary value: %s", floe_strerror(rc)) : 0;
}

int floe_value_from_binary(const floe_field *type, const uint8_t *p, size_t n,
                           floe_value *out, floe_error *err) {
    floe_value v = floe_value_null(type->type);
    v.is_null = false;
    const char *tn = floe_xf_type_name(type->type);
#define NEED_LEN_(cond)                                                                \
    FLOE_RETURN_ERROR_IF(!(cond), err, FLOE_ECORRUPT,                                  \
                         "binary %s value (field %d): bad length %zu", tn,             \
                         (int)type->id, n)
    switch (type->type) {
    case FLOE_TYPE_BOOLEAN:
        NEED_LEN_(n == 1);
        v.v.b = p[0] != 0;
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        NEED_LEN_(n == 4);
        v.v.i32 = (int32_t)floe_load_le32(p);
        break;
    case FLOE_TYPE_LONG:
        NEED_LEN_(n == 8 || n == 4);
        v.v.i64 = n == 8 ? (int64_t)floe_load_le64(p) : (int64_t)(int32_t)floe_load_le32(p);
        break;
    case FLOE_TYPE_FLOAT: {
        NEED_LEN_(n == 4);
        uint32_t bits = floe_load_le32(p);
        memcpy(&v.v.f, &bits, 4);
        break;
    }
    case FLOE_TYPE_DOUBLE:
        NEED_LEN_(n == 8 || n == 4);
        if (n == 8) {
            uint64_t bits = floe_load_le64(p);
            memcpy(&v.v.d, &bits, 8);
        } else {
            uint32_t bits = floe_load_le32(p);
            float f;
            memcpy(&f, &bits, 4);
            v.v.d = (double)f;
        }
        break;
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        NEED_LEN_(n == 8);
        v.v.i64 = (int64_t)floe_load_le64(p);
        break;
    case FLOE_TYPE_DECIMAL: {
        NEED_LEN_(n >= 1 && n <= 16);
        unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0; /* sign */
        for (size_t i = 0; i < n; i++)
            u = (u << 8) | p[i];
        v.v.dec.unscaled = (floe_i128)u;
        v.v.dec.scale = type->scale;
        v.v.dec.precision = type->precision;
        break;
    }
    case FLOE_TYPE_UUID:
        NEED_LEN_(n == 16);
        memcpy(v.v.uuid, p, 16);
        break;
    case FLOE_TYPE_FIXED:
        NEED_LEN_(type->length <= 0 || n == (size_t)type->length);
        v.v.bytes.p = p;
        v.v.bytes.n = n;
        break;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
        v.v.bytes.p = p;
        v.v.bytes.n = n;
        break;
    default:
        return floe_error_set(err, FLOE_EUNSUPPORTED, "binary value: type %s not supported",
                              tn);
    }
#undef NEED_LEN_
    *out = v;
    return 0;
}

/* ---- JSON -------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid (overlongs, surrogates
 * and code points past U+10FFFF included). */
/* A JSON string of p, which must be valid UTF-8 (FLOE_EINVALID otherwise). */
static int json_quote(floe_buf *b, const uint8_t *p, size_t n) {
    if (!floe_utf8_valid(p, n))
        return FLOE_EINVALID;
    return floe_json_append_string(b, p, n);
}

/* a text rendering wrapped in quotes (all renderings are plain ASCII) */
static int quoted_begin(floe_buf *b) { return floe_buf_append_byte(b, '"'); }

int floe_value_to_json(const floe_value *v, floe_buf *out, floe_error *err) {
    int rc = 0;
    if (v->is_null) {
        rc = floe_buf_append(out, "null", 4);
        goto done;
    }
    switch (v->type) {
    case FLOE_TYPE_BOOLEAN:
        rc = v->v.b ? floe_buf_append(out, "true", 4) : floe_buf_append(out, "false", 5);
        break;
    case FLOE_TYPE_INT:
        rc = floe_buf_printf(out, "%" PRId32, v->v.i32);
        break;
    case FLOE_TYPE_LONG:
        rc = floe_buf_printf(out, "%" PRId64, v->v.i64);
        break;
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE: {
        double d = v->type == FLOE_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        if (!isfinite(d))
            return floe_error_set(err, FLOE_EINVALID,
                                  "JSON value: %s NaN/Infinity has no JSON form",
                                  floe_xf_type_name(v->type));
        rc = floe_vt_float_json(out, d, v->type == FLOE_TYPE_FLOAT);
        break;
    }
    case FLOE_TYPE_STRING:
        rc = json_quote(out, v->v.bytes.p, v->v.bytes.n);
        if (rc == FLOE_EINVALID)
            return floe_error_set(err, rc, "JSON value: string is not valid UTF-8");
        break;
    case FLOE_TYPE_DECIMAL:
    case FLOE_TYPE_DATE:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
    case FLOE_TYPE_UUID:
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_BINARY:
        if ((rc = quoted_begin(out)) < 0)
            goto done;
        switch (v->type) {
        case FLOE_TYPE_DECIMAL:
            rc = floe_vt_decimal_plain(out, v->v.dec.unscaled, v->v.dec.scale);
            break;
        case FLOE_TYPE_DATE:
            rc = floe_vt_date_iso(out, v->v.i32);
            break;
        case FLOE_TYPE_TIME:
            FLOE_RETURN_ERROR_IF(v->v.i64 < 0 || v->v.i64 >= 86400000000ll, err,
                                 FLOE_EINVALID, "JSON value: time %" PRId64
                                 " is outside one day", v->v.i64);
            rc = floe_vt_time_iso_fixed(out, v->v.i64 * 1000, 6);
            break;
        case FLOE_TYPE_TIMESTAMP:
        case FLOE_TYPE_TIMESTAMPTZ:
            rc = floe_vt_timestamp(out, v->v.i64, 1000000, 6, v->type == FLOE_TYPE_TIMESTAMPTZ);
            break;
        case FLOE_TYPE_TIMESTAMP_NS:
        case FLOE_TYPE_TIMESTAMPTZ_NS:
            rc = floe_vt_timestamp(out, v->v.i64, 1000000000, 9,
                                   v->type == FLOE_TYPE_TIMESTAMPTZ_NS);
            break;
        case FLOE_TYPE_UUID:
            rc = floe_vt_uuid(out, v->v.uuid);
            break;
        default:
            rc = floe_vt_hex(out, v->v.bytes.p, v->v.bytes.n);
            break;
        }
        if (rc == 0)
            rc = floe_buf_append_byte(out, '"');
        break;
    default:
        return floe_error_set(err, FLOE_EINVALID, "JSON value: type %s not supported",
                              floe_xf_type_name(v->type));
    }
done:
    return rc < 0 ? floe_error_set(err, rc, "JSON value: %s", floe_strerror(rc)) : 0;
}

static bool unhex(const char *s, size_t n, uint8_t *out) {
    for (size_t i = 0; i < n; i++) {
        int v[2];
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + (size_t)k];
            v[k] = (c >= '0' && c <= '9')   ? c - '0'
                   : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                   : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                            : -1;
            if (v[k] < 0)
                return false;
        }
        out[i] = (uint8_t)(v[0] << 4 | v[1]);
    }
    return true;
}

int floe_value_from_json(const floe_field *type, const char *text, size_t n,
                         floe_arena *arena, floe_value *out, floe_error *err) {
    json_error_t jerr;
    /* JSON_ALLOW_NUL: floe_value_to_json writes U+0000 inside strings as \u0000 */
    json_t *j = json_loadb(text, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    FLOE_RETURN_ERROR_IF(!j, err, FLOE_EINVALID, "JSON value: %s (line %d)", jerr.text,
                         jerr.line);
    int rc = floe_value_from_jsont(type, j, arena, out, err);
    json_decref(j);
    return rc;
}

int floe_value_from_jsont(const floe_field *type, const json_t *j, floe_arena *arena,
                          floe_value *out, floe_error *err) {
    int rc = 0;
    const char *tn = floe_xf_type_name(type->type);
    floe_value v = floe_value_null(type->type);
    if (json_is_null(j))
        goto ok;
    v.is_null = false;
    const char *s = json_is_string(j) ? json_string_value(j) : NULL;
    size_t sn = s ? json_string_length(j) : 0;
    switch (type->type) {
    case FLOE_TYPE_BOOLEAN:
        if (!json_is_boolean(j))
            goto bad;
        v.v.b = json_is_true(j);
        break;
    case FLOE_TYPE_INT:
        if (!json_is_integer(j) || json_integer_value(j) < INT32_MIN ||
            json_integer_value(j) > INT32_MAX)
            goto bad;
        v.v.i32 = (int32_t)json_integer_value(j);
        break;
    case FLOE_TYPE_LONG:
        if (!json_is_integer(j))
            goto bad;
        v.v.i64 = (int64_t)json_integer_value(j);
        break;
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE:
        if (!json_is_number(j))
            goto bad;
        if (type->type == FLOE_TYPE_FLOAT)
            v.v.f = (float)json_number_value(j);
        else
            v.v.d = json_number_value(j);
        break;
    case FLOE_TYPE_DECIMAL: {
        floe_lit_dec d;
        if (!s || floe_lit_decimal(s, sn, &d, NULL, 0) != FLOE_LIT_OK)
            goto bad;
        /* the scale is part of the type: the text must carry exactly that scale */
        if (d.written != type->scale)
            FLOE_FAIL(err, FLOE_EINVALID, "JSON %s value \"%s\": scale %d, expected %d", tn,
                      s, (int)d.written, (int)type->scale);
        floe_i128 u = d.unscaled;
        if (!floe_lit_rescale(&u, d.scale, d.written, type->precision > 0 ? type->precision : 38))
            FLOE_FAIL(err, FLOE_EINVALID, "JSON %s value \"%s\": more than %d digits", tn, s,
                      (int)(type->precision > 0 ? type->precision : 38));
        v.v.dec.unscaled = u;
        v.v.dec.scale = d.written;
        v.v.dec.precision = type->precision;
        break;
    }
    case FLOE_TYPE_DATE:
        if (!s || floe_lit_date(s, sn, FLOE_LIT_ISO, &v.v.i32, NULL, 0) != FLOE_LIT_OK)
            goto bad;
        break;
    case FLOE_TYPE_TIME: {
        int64_t nod;
        if (!s || floe_lit_time(s, sn, &nod, NULL, 0) != FLOE_LIT_OK)
            goto bad;
        v.v.i64 = nod / 1000;
        break;
    }
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        floe_lit_ts t;
        if (!s || floe_lit_timestamp(s, sn, FLOE_LIT_ISO, &t, NULL, 0) != FLOE_LIT_OK)
            goto bad;
        bool tz = type->type == FLOE_TYPE_TIMESTAMPTZ || type->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        bool ns = type->type == FLOE_TYPE_TIMESTAMP_NS || type->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        if (tz ? !t.zone || t.offset != 0 : t.zone)
            FLOE_FAIL(err, FLOE_EINVALID, "JSON %s value \"%s\": %s", tn, s,
                      tz ? "offset must be +00:00" : "must not carry a zone offset");
        if (floe_lit_ts_units(&t, ns ? 9 : 6, &v.v.i64, NULL, 0) != FLOE_LIT_OK)
            FLOE_FAIL(err, FLOE_EINVALID, "JSON %s value \"%s\": out of range", tn, s);
        break;
    }
    case FLOE_TYPE_STRING: {
        if (!s)
            goto bad;
        uint8_t *copy = floe_arena_memdup(arena, s, sn + 1);
        if (!copy)
            FLOE_FAIL(err, FLOE_ENOMEM, "JSON %s value: out of memory", tn);
        v.v.bytes.p = copy;
        v.v.bytes.n = sn;
        break;
    }
    case FLOE_TYPE_UUID:
        if (!s || !floe_vt_parse_uuid(s, sn, v.v.uuid))
            goto bad;
        break;
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_BINARY: {
        if (!s || sn % 2 != 0)
            goto bad;
        if (type->type == FLOE_TYPE_FIXED && type->length > 0 &&
            sn != 2 * (size_t)type->length)
            FLOE_FAIL(err, FLOE_EINVALID, "JSON fixed[%d] value: %zu hex digits", (int)type->length,
                      sn);
        uint8_t *bytes = floe_arena_alloc(arena, sn / 2 + 1);
        if (!bytes)
            FLOE_FAIL(err, FLOE_ENOMEM, "JSON %s value: out of memory", tn);
        if (!unhex(s, sn / 2, bytes))
            goto bad;
        v.v.bytes.p = bytes;
        v.v.bytes.n = sn / 2;
        break;
    }
    default:
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "JSON value: type %s not supported", tn);
    }
ok:
    *out = v;
    rc = 0;
    goto done;
bad:
    rc = floe_error_set(err, FLOE_EINVALID, "JSON value for field %d: not a valid %s",
                        (int)type->id, tn);
done:
    return rc;
}
