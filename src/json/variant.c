/*
 * variant.c - the Parquet Variant binary encoding (apache/parquet-format VariantEncoding.md,
 * "Metadata encoding", "Value encoding", "Encoding types"): validation and decoding to
 * JSON text, and the canonical encoding of a JSON text. The rules and the JSON forms are
 * in floe/variant.h.
 *
 * Decoding reads only inside the blobs it is given: every count, id and offset is checked
 * against the bytes of its container before it is used, and nesting is bounded, so a
 * hostile blob costs at most its own size in output per level.
 *
 * Encoding makes two passes over the text: the first collects the object keys (the
 * dictionary must be complete and sorted before any field id is written), the second
 * writes the value. A container's values are written first and its header inserted in
 * front of them once their total size (and so the offset width) is known.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "json/json_internal.h"

/* ---- decoding ------------------------------------------------------------------------ */

typedef struct vmeta {
    const uint8_t *p;
    unsigned osz;     /* bytes per offset */
    uint32_t count;   /* dictionary_size */
    size_t offs;      /* where the offsets start */
    size_t bytes;     /* where the strings start */
} vmeta;

static uint32_t le_n(const uint8_t *p, unsigned w) {
    uint32_t v = 0;
    for (unsigned i = 0; i < w; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static void meta_key(const vmeta *m, uint32_t id, const uint8_t **s, size_t *n) {
    uint32_t a = le_n(m->p + m->offs + (size_t)id * m->osz, m->osz);
    uint32_t b = le_n(m->p + m->offs + ((size_t)id + 1) * m->osz, m->osz);
    *s = m->p + m->bytes + a;
    *n = b - a;
}

/* Unsigned byte order, a prefix first. */
static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    size_t n = na < nb ? na : nb;
    int c = n ? memcmp(a, b, n) : 0; /* an empty key may have no bytes behind it (NULL) */
    if (c)
        return c;
    return na < nb ? -1 : na > nb;
}

#define MCORRUPT(at, ...) floe_error_at(err, FLOE_ECORRUPT, (int64_t)(at), __VA_ARGS__)

static int meta_open(const uint8_t *p, size_t n, bool allow_trailing, bool check_strings,
                     vmeta *m, size_t *size, floe_error *err) {
    if (n < 1)
        return MCORRUPT(0, "variant metadata: byte 0: empty (a header byte is required)");
    uint8_t h = p[0];
    if ((h & 0x0F) != 1)
        return MCORRUPT(0, "variant metadata: byte 0: version %u (only 1 is defined)",
                        h & 0x0Fu);
    if (h & 0x20)
        return MCORRUPT(0, "variant metadata: byte 0: header 0x%02x sets the unused bit 5", h);
    unsigned osz = (unsigned)(h >> 6) + 1;
    if (n - 1 < osz)
        return MCORRUPT(1, "variant metadata: byte 1: dictionary_size needs %u bytes, %zu "
                           "remain", osz, n - 1);
    uint32_t count = le_n(p + 1, osz);
    size_t offs = 1 + osz;
    if ((n - offs) / osz < (size_t)count + 1)
        return MCORRUPT(offs, "variant metadata: byte %zu: %llu offsets of %u bytes run past "
                              "the end (%zu bytes)", offs, (unsigned long long)count + 1, osz, n);
    size_t bytes = offs + ((size_t)count + 1) * osz;
    size_t avail = n - bytes;
    uint32_t prev = 0;
    for (uint32_t i = 0; i <= count; i++) {
        size_t at = offs + (size_t)i * osz;
        uint32_t o = le_n(p + at, osz);
        if (i == 0 && o != 0)
            return MCORRUPT(at, "variant metadata: byte %zu: the first offset is %u, not 0", at,
                            o);
        if (o < prev)
            return MCORRUPT(at, "variant metadata: byte %zu: offset %u (%u) is below the one "
                                "before it (%u)", at, i, o, prev);
        if (o > avail)
            return MCORRUPT(at, "variant metadata: byte %zu: offset %u (%u) is past the %zu "
                                "string bytes", at, i, o, avail);
        prev = o;
    }
    if (prev != avail && !allow_trailing)
        return MCORRUPT(bytes + prev, "variant metadata: byte %zu: %zu bytes after the last "
                                      "string", bytes + prev, avail - prev);
    m->p = p;
    m->osz = osz;
    m->count = count;
    m->offs = offs;
    m->bytes = bytes;
    const uint8_t *ps = NULL;
    size_t pn = 0;
    for (uint32_t i = 0; check_strings && i < count; i++) {
        const uint8_t *s;
        size_t sn;
        meta_key(m, i, &s, &sn);
        size_t at = (size_t)(s - p);
        if (!floe_utf8_valid(s, sn))
            return MCORRUPT(at, "variant metadata: byte %zu: string %u is not valid UTF-8", at,
                            i);
        if ((h & 0x10) && i > 0 && key_cmp(ps, pn, s, sn) >= 0)
            return MCORRUPT(at, "variant metadata: byte %zu: sorted_strings is set but string "
                                "%u is not above the one before it", at, i);
        ps = s;
        pn = sn;
    }
    *size = bytes + prev;
    return 0;
}

int floe_variant_metadata_check(const uint8_t *p, size_t n, bool allow_trailing, size_t *size,
                                floe_error *err) {
    vmeta m;
    size_t sz;
    FLOE_FORWARD_IF_ERROR(meta_open(p, n, allow_trailing, true, &m, &sz, err));
    *size = sz;
    return 0;
}

typedef struct vdec {
    vmeta m;
    const uint8_t *v;
    floe_buf *out;
    floe_error *err;
} vdec;

#define VCORRUPT(at, ...) floe_error_at(d->err, FLOE_ECORRUPT, (int64_t)(at), __VA_ARGS__)

static int out_rc(vdec *d, int rc) {
    return rc < 0 ? floe_error_set(d->err, rc, "variant: out of memory for the JSON text") : 0;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* v in units of 10^-digits seconds since the epoch */
static int put_ts(floe_buf *b, int64_t v, int digits, bool utc) {
    int64_t per = digits == 9 ? 1000000000 : 1000000;
    int64_t sec = v / per, frac = v % per; /* floored without overflow at INT64_MIN */
    if (frac < 0) {
        frac += per;
        sec--;
    }
    int64_t days = floordiv(sec, 86400), sod = sec - days * 86400;
    int rc = floe_buf_append_byte(b, '"');
    rc |= floe_buf_append_date(b, days);
    rc |= floe_buf_printf(b, "T%02d:%02d:%02d.%0*lld%s\"", (int)(sod / 3600),
                          (int)(sod / 60 % 60), (int)(sod % 60), digits, (long long)frac,
                          utc ? "Z" : "");
    return floe_buf_error(b) ? floe_buf_error(b) : rc;
}

static int put_decimal(floe_buf *b, floe_i128 v, unsigned scale) {
    char dg[48];
    int n = 0;
    bool neg = v < 0;
    floe_u128 u = neg ? (floe_u128)0 - (floe_u128)v : (floe_u128)v;
    do {
        dg[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= (int)scale)
        dg[n++] = '0';
    if (neg)
        floe_buf_append_byte(b, '-');
    for (int i = n - 1; i >= 0; i--) {
        floe_buf_append_byte(b, (uint8_t)dg[i]);
        if (i == (int)scale && scale > 0)
            floe_buf_append_byte(b, '.');
    }
    return floe_buf_error(b);
}

static const floe_i128 DEC38 = (floe_i128)10000000000000000000ull * 10000000000000000000ull;

static int put_string(vdec *d, size_t at, const uint8_t *s, size_t n) {
    if (!floe_utf8_valid(s, n))
        return VCORRUPT(at, "variant value: byte %zu: string is not valid UTF-8", at);
    return d->out ? out_rc(d, floe_json_append_string(d->out, s, n)) : 0;
}

/* A variant float printed as the shortest decimal that reads back to the same float (as
 * Spark prints it: 0.1f is 0.1, not the double 0.10000000149011612): the double nearest
 * that decimal, whose own shortest form is the same digits. */
static double float_shortest(float x) {
    if (!isfinite(x) || x == 0)
        return (double)x;
    char buf[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)x);
        if (strtof(buf, NULL) == x)
            return strtod(buf, NULL);
    }
    return (double)x;
}

/* A variant double or float: JavaScript's form, but a negative zero as -0.0, which the
 * encoder reads back as a double -0.0 (an integer -0 is the integer 0), as DuckDB prints
 * it. */
static int put_double(floe_buf *b, double x) {
    if (x == 0 && signbit(x))
        return floe_buf_append(b, "-0.0", 4);
    return floe_buf_append_js_double(b, x);
}

/* Primitive type t whose data starts at byte `at` (after the header byte), `end` the end
 * of its container. *size = the data bytes. */
static int primitive(vdec *d, unsigned t, size_t hdr_at, size_t at, size_t end, size_t *size) {
    static const uint8_t fixed[21] = {0, 0, 0, 1, 2, 4, 8, 8, 5, 9, 17, 4, 8, 8, 4, 4, 4, 8, 8,
                                      8, 16};
    if (t > 20)
        return floe_error_at(d->err, FLOE_EUNSUPPORTED, (int64_t)hdr_at,
                             "variant value: byte %zu: unknown primitive type %u", hdr_at, t);
    size_t need = fixed[t];
    if (end - at < need)
        return VCORRUPT(hdr_at, "variant value: byte %zu: primitive type %u needs %zu bytes, "
                                "%zu remain", hdr_at, t, need, end - at);
    const uint8_t *p = d->v + at;
    floe_buf *b = d->out;
    size_t len = 0;
    if (t == FLOE_VARIANT_BINARY || t == FLOE_VARIANT_STRING) {
        len = floe_load_le32(p);
        if (len > end - at - 4)
            return VCORRUPT(at, "variant value: byte %zu: length %zu runs past the end of its "
                                "container (%zu bytes remain)", at, len, end - at - 4);
    }
    *size = need + len;
    int rc = 0;
    switch (t) {
    case FLOE_VARIANT_NULL: if (b) rc = floe_buf_append(b, "null", 4); break;
    case FLOE_VARIANT_TRUE: if (b) rc = floe_buf_append(b, "true", 4); break;
    case FLOE_VARIANT_FALSE: if (b) rc = floe_buf_append(b, "false", 5); break;
    case FLOE_VARIANT_INT8: if (b) rc = floe_buf_printf(b, "%d", (int8_t)p[0]); break;
    case FLOE_VARIANT_INT16:
        if (b)
            rc = floe_buf_printf(b, "%d", (int16_t)(uint16_t)(p[0] | p[1] << 8));
        break;
    case FLOE_VARIANT_INT32: if (b) rc = floe_buf_printf(b, "%d", (int32_t)floe_load_le32(p)); break;
    case FLOE_VARIANT_INT64:
        if (b)
            rc = floe_buf_printf(b, "%lld", (long long)(int64_t)floe_load_le64(p));
        break;
    case FLOE_VARIANT_DOUBLE: {
        uint64_t bits = floe_load_le64(p);
        double x;
        memcpy(&x, &bits, 8);
        if (b)
            rc = put_double(b, x);
        break;
    }
    case FLOE_VARIANT_FLOAT: {
        uint32_t bits = floe_load_le32(p);
        float x;
        memcpy(&x, &bits, 4);
        if (b)
            rc = put_double(b, float_shortest(x));
        break;
    }
    case FLOE_VARIANT_DECIMAL4:
    case FLOE_VARIANT_DECIMAL8:
    case FLOE_VARIANT_DECIMAL16: {
        unsigned scale = p[0];
        if (scale > 38)
            return VCORRUPT(at, "variant value: byte %zu: decimal scale %u is above 38", at,
                            scale);
        size_t w = need - 1;
        floe_u128 u = 0;
        for (size_t i = 0; i < w; i++)
            u |= (floe_u128)p[1 + i] << (8 * i);
        if (w < 16 && (p[w] & 0x80)) /* sign-extend */
            u |= ~(floe_u128)0 << (8 * w);
        floe_i128 v = (floe_i128)u;
        if (v >= DEC38 || v <= -DEC38)
            return VCORRUPT(at, "variant value: byte %zu: decimal16 value has more than 38 "
                                "digits", at);
        if (b)
            rc = put_decimal(b, v, scale);
        break;
    }
    case FLOE_VARIANT_DATE:
        if (b) {
            rc = floe_buf_append_byte(b, '"');
            rc |= floe_buf_append_date(b, (int32_t)floe_load_le32(p));
            rc |= floe_buf_append_byte(b, '"');
        }
        break;
    case FLOE_VARIANT_TIMESTAMP:
    case FLOE_VARIANT_TIMESTAMP_NTZ:
    case FLOE_VARIANT_TIMESTAMP_NS:
    case FLOE_VARIANT_TIMESTAMP_NTZ_NS:
        if (b) {
            bool ns = t == FLOE_VARIANT_TIMESTAMP_NS || t == FLOE_VARIANT_TIMESTAMP_NTZ_NS;
            bool utc = t == FLOE_VARIANT_TIMESTAMP || t == FLOE_VARIANT_TIMESTAMP_NS;
            rc = put_ts(b, (int64_t)floe_load_le64(p), ns ? 9 : 6, utc);
        }
        break;
    case FLOE_VARIANT_TIME_NTZ: {
        int64_t us = (int64_t)floe_load_le64(p);
        if (us < 0 || us >= 86400LL * 1000000)
            return VCORRUPT(at, "variant value: byte %zu: time %lld us is outside a day", at,
                            (long long)us);
        if (b)
            rc = floe_buf_printf(b, "\"%02lld:%02lld:%02lld.%06lld\"", (long long)(us / 3600000000),
                                 (long long)(us / 60000000 % 60), (long long)(us / 1000000 % 60),
                                 (long long)(us % 1000000));
        break;
    }
    case FLOE_VARIANT_BINARY:
        if (b) {
            rc = floe_buf_append_byte(b, '"');
            rc |= floe_base64_append(b, p + 4, len);
            rc |= floe_buf_append_byte(b, '"');
        }
        break;
    case FLOE_VARIANT_STRING: return put_string(d, at + 4, p + 4, len);
    case FLOE_VARIANT_UUID:
        if (b)
            rc = floe_buf_printf(b, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x"
                                    "%02x%02x%02x\"", p[0], p[1], p[2], p[3], p[4], p[5], p[6],
                                 p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]);
        break;
    }
    if (b && floe_buf_error(b))
        rc = floe_buf_error(b);
    return out_rc(d, rc);
}

static int value_json(vdec *d, size_t at, size_t end, int depth, size_t *size);

/* The header of an object (ids) or array: count, id size, offset size, where the ids,
 * offsets and values start, and the values' total size, all checked against end. */
typedef struct vcont {
    uint32_t count;
    unsigned idsz, osz;
    size_t ids, offs, data, total;
} vcont;

static int container(vdec *d, bool object, size_t at, size_t end, vcont *c) {
    uint8_t h = d->v[at] >> 2;
    const char *what = object ? "object" : "array";
    if ((object && (h & 0x20)) || (!object && (h & 0x38)))
        return VCORRUPT(at, "variant value: byte %zu: %s header 0x%02x sets unused bits", at,
                        what, d->v[at]);
    bool large = object ? (h >> 4) & 1 : (h >> 2) & 1;
    c->idsz = object ? ((h >> 2) & 3) + 1 : 0;
    c->osz = (h & 3) + 1;
    size_t nsz = large ? 4 : 1, pos = at + 1;
    if (end - pos < nsz)
        return VCORRUPT(pos, "variant value: byte %zu: %s num_elements runs past the end", pos,
                        what);
    c->count = large ? floe_load_le32(d->v + pos) : d->v[pos];
    pos += nsz;
    c->ids = pos;
    if (object && (end - pos) / c->idsz < c->count)
        return VCORRUPT(pos, "variant value: byte %zu: %u field ids run past the end", pos,
                        c->count);
    pos += (size_t)c->count * c->idsz;
    c->offs = pos;
    if ((end - pos) / c->osz < (size_t)c->count + 1)
        return VCORRUPT(pos, "variant value: byte %zu: %llu %s offsets run past the end", pos,
                        (unsigned long long)c->count + 1, what);
    pos += ((size_t)c->count + 1) * c->osz;
    c->data = pos;
    size_t lastat = c->offs + (size_t)c->count * c->osz;
    c->total = le_n(d->v + lastat, c->osz);
    if (c->total > end - pos)
        return VCORRUPT(lastat, "variant value: byte %zu: %s values end at %zu, past the end of "
                                "their container (%zu bytes)", lastat, what, c->total, end - pos);
    return 0;
}

static int element(vdec *d, const vcont *c, uint32_t i, int depth) {
    size_t oat = c->offs + (size_t)i * c->osz;
    size_t o = le_n(d->v + oat, c->osz);
    if (o >= c->total)
        return VCORRUPT(oat, "variant value: byte %zu: offset %zu of element %u is not before "
                             "the end of the values (%zu)", oat, o, i, c->total);
    size_t sz = 0;
    return value_json(d, c->data + o, c->data + c->total, depth + 1, &sz);
}

static int value_json(vdec *d, size_t at, size_t end, int depth, size_t *size) {
    if (at >= end)
        return VCORRUPT(at, "variant value: byte %zu: a value is missing", at);
    uint8_t h = d->v[at];
    unsigned basic = h & 3, hdr = h >> 2;
    floe_buf *b = d->out;
    if (basic == 0) {
        size_t sz = 0;
        FLOE_FORWARD_IF_ERROR(primitive(d, hdr, at, at + 1, end, &sz));
        *size = 1 + sz;
        return 0;
    }
    if (basic == 1) {
        if (end - at - 1 < hdr)
            return VCORRUPT(at, "variant value: byte %zu: short string of %u bytes runs past "
                                "the end (%zu remain)", at, hdr, end - at - 1);
        *size = 1 + (size_t)hdr;
        return put_string(d, at + 1, d->v + at + 1, hdr);
    }
    if (depth >= FLOE_VARIANT_MAX_DEPTH)
        return floe_error_at(d->err, FLOE_ELIMIT, (int64_t)at, "variant value: byte %zu: "
                             "nested deeper than %d", at, FLOE_VARIANT_MAX_DEPTH);
    vcont c;
    bool object = basic == 2;
    FLOE_FORWARD_IF_ERROR(container(d, object, at, end, &c));
    if (b && floe_buf_append_byte(b, object ? '{' : '[') < 0)
        return out_rc(d, FLOE_ENOMEM);
    const uint8_t *pk = NULL;
    size_t pn = 0;
    for (uint32_t i = 0; i < c.count; i++) {
        if (b && i && floe_buf_append_byte(b, ',') < 0)
            return out_rc(d, FLOE_ENOMEM);
        if (object) {
            size_t iat = c.ids + (size_t)i * c.idsz;
            uint32_t id = le_n(d->v + iat, c.idsz);
            if (id >= d->m.count)
                return VCORRUPT(iat, "variant value: byte %zu: field id %u is not in the "
                                     "dictionary (%u strings)", iat, id, d->m.count);
            const uint8_t *k;
            size_t kn;
            meta_key(&d->m, id, &k, &kn);
            if (i > 0 && key_cmp(pk, pn, k, kn) >= 0)
                return VCORRUPT(iat, "variant value: byte %zu: object field %u (\"%.*s\") is "
                                     "not after the one before it (\"%.*s\"): names must be "
                                     "sorted and unique", iat, i, (int)(kn > 64 ? 64 : kn),
                                (const char *)k, (int)(pn > 64 ? 64 : pn), (const char *)pk);
            pk = k;
            pn = kn;
            if (b) {
                floe_json_append_string(b, k, kn);
                if (floe_buf_append_byte(b, ':') < 0)
                    return out_rc(d, FLOE_ENOMEM);
            }
        }
        FLOE_FORWARD_IF_ERROR(element(d, &c, i, depth));
    }
    if (b && floe_buf_append_byte(b, object ? '}' : ']') < 0)
        return out_rc(d, FLOE_ENOMEM);
    *size = c.data - at + c.total;
    return 0;
}

static int decode(const vmeta *m, const uint8_t *value, size_t n, floe_buf *out,
                  floe_error *err) {
    vdec d = {.m = *m, .v = value, .out = out, .err = err};
    size_t sz;
    FLOE_FORWARD_IF_ERROR(value_json(&d, 0, n, 0, &sz));
    if (sz != n)
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)sz, "variant value: byte %zu: %zu "
                             "bytes after the value", sz, n - sz);
    return 0;
}

int floe_variant_to_json(const uint8_t *metadata, size_t metadata_len, const uint8_t *value,
                         size_t value_len, floe_buf *out, floe_error *err) {
    vmeta m;
    size_t sz;
    FLOE_FORWARD_IF_ERROR(meta_open(metadata, metadata_len, false, true, &m, &sz, err));
    return decode(&m, value, value_len, out, err);
}

int floe_variant_value_json(const uint8_t *metadata, size_t metadata_len, const uint8_t *value,
                            size_t value_len, floe_buf *out, floe_error *err) {
    /* the metadata was checked; opening it again locates its parts (its offsets are
     * checked again, its strings not) */
    vmeta m;
    size_t sz;
    FLOE_FORWARD_IF_ERROR(meta_open(metadata, metadata_len, false, false, &m, &sz, err));
    return decode(&m, value, value_len, out, err);
}

/* An object value's header (d and c set up), after validating the whole value, so that no
 * field is handed out of a bad one; 1 when the value is not an object. */
static int open_object(const uint8_t *metadata, size_t metadata_len, const uint8_t *value,
                       size_t value_len, floe_buf *out, vdec *d, vcont *c, floe_error *err) {
    vmeta m;
    size_t sz;
    FLOE_FORWARD_IF_ERROR(meta_open(metadata, metadata_len, false, false, &m, &sz, err));
    FLOE_FORWARD_IF_ERROR(decode(&m, value, value_len, NULL, err));
    if ((value[0] & 3) != 2)
        return 1;
    *d = (vdec){.m = m, .v = value, .out = out, .err = err};
    return container(d, true, 0, value_len, c);
}

int floe_variant_object_fields(const uint8_t *metadata, size_t metadata_len,
                               const uint8_t *value, size_t value_len, floe_buf *scratch,
                               floe_variant_field_fn fn, void *ctx, floe_error *err) {
    vdec d;
    vcont c;
    int rc = open_object(metadata, metadata_len, value, value_len, scratch, &d, &c, err);
    if (rc != 0)
        return rc;
    for (uint32_t i = 0; i < c.count; i++) {
        const uint8_t *k;
        size_t kn;
        meta_key(&d.m, le_n(value + c.ids + (size_t)i * c.idsz, c.idsz), &k, &kn);
        floe_buf_reset(scratch);
        FLOE_FORWARD_IF_ERROR(element(&d, &c, i, 0));
        FLOE_FORWARD_IF_ERROR(fn(ctx, k, kn, scratch->data, scratch->len));
    }
    return 0;
}

int floe_variant_object_raw_fields(const uint8_t *metadata, size_t metadata_len,
                                   const uint8_t *value, size_t value_len,
                                   floe_variant_raw_field_fn fn, void *ctx, floe_error *err) {
    vdec d;
    vcont c;
    int rc = open_object(metadata, metadata_len, value, value_len, NULL, &d, &c, err);
    if (rc != 0)
        return rc;
    for (uint32_t i = 0; i < c.count; i++) {
        uint32_t id = le_n(value + c.ids + (size_t)i * c.idsz, c.idsz);
        const uint8_t *k;
        size_t kn, at = c.data + le_n(value + c.offs + (size_t)i * c.osz, c.osz), vn = 0;
        meta_key(&d.m, id, &k, &kn);
        FLOE_FORWARD_IF_ERROR(value_json(&d, at, c.data + c.total, 1, &vn));
        FLOE_FORWARD_IF_ERROR(fn(ctx, id, k, kn, value + at, vn));
    }
    return 0;
}

int floe_variant_metadata_find(const uint8_t *metadata, size_t metadata_len, const uint8_t *key,
                               size_t key_len, uint32_t *id) {
    vmeta m;
    size_t sz;
    if (meta_open(metadata, metadata_len, false, false, &m, &sz, NULL) < 0)
        return 0;
    for (uint32_t i = 0; i < m.count; i++) { /* the dictionary need not be sorted */
        const uint8_t *k;
        size_t kn;
        meta_key(&m, i, &k, &kn);
        if (!key_cmp(k, kn, key, key_len)) {
            *id = i;
            return 1;
        }
    }
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

typedef struct kref {
    size_t off, len;  /* in e->keys */
    const uint8_t *s; /* e->keys.data + off, once pass 1 is over */
} kref;

typedef floe_variant_member member; /* off: relative to the container's first value */

struct floe_variant_encoder {
    locale_t cloc;
    floe_buf keys;    /* pass 1: every key's decoded bytes */
    kref *refs;       /* pass 1: every key; then the dictionary, sorted and unique */
    size_t nrefs, caprefs;
    floe_buf str;     /* a decoded string */
    floe_buf tmp;     /* an object's values, reordered */
    member *ms;       /* open containers' members, innermost last */
    size_t nms, capms;
};

int floe_variant_encoder_new(floe_variant_encoder **out, floe_error *err) {
    floe_variant_encoder *e = floe_calloc(1, sizeof *e);
    if (!e)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    e->cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!e->cloc) {
        floe_free(e);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory (C locale)");
    }
    floe_buf_init(&e->keys, 0);
    floe_buf_init(&e->str, 0);
    floe_buf_init(&e->tmp, 0);
    *out = e;
    return 0;
}

void floe_variant_encoder_free(floe_variant_encoder *e) {
    if (!e)
        return;
    freelocale(e->cloc);
    floe_buf_free(&e->keys);
    floe_buf_free(&e->str);
    floe_buf_free(&e->tmp);
    floe_free(e->refs);
    floe_free(e->ms);
    floe_free(e);
}

typedef struct jparse {
    floe_variant_encoder *e;
    const uint8_t *base, *p, *end;
    bool collect;   /* pass 1 */
    floe_buf *out;  /* pass 2 */
    floe_error *err;
} jparse;

static int jbad(jparse *j, const uint8_t *at, const char *why) {
    size_t off = (size_t)(at - j->base);
    return floe_error_at(j->err, FLOE_EINVALID, (int64_t)off, "variant JSON: %s", why);
}

static int jnomem(jparse *j) { return floe_error_set(j->err, FLOE_ENOMEM, "out of memory"); }

static void skip_ws(jparse *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hex4(const uint8_t *p, uint32_t *out) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = floe_hex_value((char)p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    *out = (uint32_t)v;
    return 0;
}

/* The string at j->p (at its opening quote), decoded into e->str. */
static int jstring(jparse *j) {
    floe_buf *s = &j->e->str;
    floe_buf_reset(s);
    const uint8_t *start = j->p++;
    for (;;) {
        const uint8_t *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && *j->p >= 0x20)
            j->p++;
        floe_buf_append(s, run, (size_t)(j->p - run));
        if (j->p >= j->end)
            return jbad(j, start, "unterminated string");
        uint8_t c = *j->p;
        if (c == '"') {
            j->p++;
            break;
        }
        if (c < 0x20)
            return jbad(j, j->p, "control character in a string");
        if (j->end - j->p < 2)
            return jbad(j, j->p, "unterminated escape");
        uint8_t x = j->p[1];
        const uint8_t *esc = j->p;
        j->p += 2;
        switch (x) {
        case '"': case '\\': case '/': floe_buf_append_byte(s, x); break;
        case 'b': floe_buf_append_byte(s, '\b'); break;
        case 'f': floe_buf_append_byte(s, '\f'); break;
        case 'n': floe_buf_append_byte(s, '\n'); break;
        case 'r': floe_buf_append_byte(s, '\r'); break;
        case 't': floe_buf_append_byte(s, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            if (j->end - j->p < 4 || hex4(j->p, &cp) < 0)
                return jbad(j, esc, "bad \\u escape");
            j->p += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return jbad(j, esc, "lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
                    hex4(j->p + 2, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                    return jbad(j, esc, "lone high surrogate");
                j->p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            floe_buf_append_utf8(s, cp);
            break;
        }
        default: return jbad(j, esc, "bad escape");
        }
    }
    if (floe_buf_error(s))
        return jnomem(j);
    if (!floe_utf8_valid(s->data, s->len))
        return jbad(j, start, "string is not valid UTF-8");
    if (s->len > UINT32_MAX)
        return floe_error_at(j->err, FLOE_ELIMIT, (int64_t)(start - j->base),
                             "variant JSON: string longer than 4 GiB");
    return 0;
}

static unsigned width_of(uint64_t v) {
    return v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFF ? 3 : 4;
}

static void put_le(uint8_t *p, uint64_t v, unsigned w) {
    for (unsigned i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int emit_prim(jparse *j, unsigned t, const void *data, size_t n) {
    floe_buf_append_byte(j->out, (uint8_t)(t << 2));
    if (n)
        floe_buf_append(j->out, data, n);
    return floe_buf_error(j->out) ? jnomem(j) : 0;
}

static int emit_double(jparse *j, double x) {
    uint64_t bits;
    uint8_t le[8];
    memcpy(&bits, &x, 8);
    put_le(le, bits, 8);
    return emit_prim(j, FLOE_VARIANT_DOUBLE, le, 8);
}

static int emit_decimal(jparse *j, floe_i128 v, unsigned digits, unsigned scale) {
    uint8_t le[17];
    unsigned w = digits <= 9 ? 4 : digits <= 18 ? 8 : 16;
    le[0] = (uint8_t)scale;
    floe_u128 u = (floe_u128)v;
    for (unsigned i = 0; i < w; i++)
        le[1 + i] = (uint8_t)(u >> (8 * i));
    return emit_prim(j, w == 4 ? FLOE_VARIANT_DECIMAL4 : w == 8 ? FLOE_VARIANT_DECIMAL8
                                                             : FLOE_VARIANT_DECIMAL16,
                     le, 1 + w);
}

static int jnumber(jparse *j) {
    floe_jnum n;
    size_t bad = 0;
    size_t used = floe_jnum_scan(j->p, j->end, &n, &bad);
    if (!used)
        return jbad(j, j->p + bad, "invalid number");
    const uint8_t *start = j->p;
    j->p += used;
    if (j->collect)
        return 0;
    bool has_exp = memchr(start, 'e', used) || memchr(start, 'E', used);
    if (!has_exp) {
        /* digits of the unscaled value, leading zeros dropped */
        floe_u128 u = 0;
        unsigned digits = 0;
        for (size_t i = 0; i < n.n_int + n.n_frac; i++) {
            uint8_t c = i < n.n_int ? n.int_digits[i] : n.frac_digits[i - n.n_int];
            if (digits == 0 && c == '0')
                continue;
            if (++digits > 38)
                break;
            u = u * 10 + (unsigned)(c - '0');
        }
        /* A negative zero with a fraction (-0.0, -0.000) is a double -0.0: a decimal's
         * unscaled integer has no sign for zero, and the sign is what the text says. An
         * integer -0 is the integer 0 (int8), as DuckDB's and Spark's JSON casts store it:
         * integers have no negative zero. */
        if (n.neg && digits == 0 && n.frac_digits)
            return emit_double(j, -0.0);
        if (!n.frac_digits) {
            int64_t v;
            if (floe_jnum_to_i64(&n, INT64_MIN, INT64_MAX, &v) == FLOE_SC_OK) {
                uint8_t le[8];
                unsigned t = v >= INT8_MIN && v <= INT8_MAX     ? FLOE_VARIANT_INT8
                             : v >= INT16_MIN && v <= INT16_MAX ? FLOE_VARIANT_INT16
                             : v >= INT32_MIN && v <= INT32_MAX ? FLOE_VARIANT_INT32
                                                                : FLOE_VARIANT_INT64;
                unsigned w = t == FLOE_VARIANT_INT8 ? 1 : t == FLOE_VARIANT_INT16 ? 2
                                                   : t == FLOE_VARIANT_INT32 ? 4 : 8;
                put_le(le, (uint64_t)v, w);
                return emit_prim(j, t, le, w);
            }
        }
        if (digits <= 38 && n.n_frac <= 38) {
            floe_i128 v = n.neg ? -(floe_i128)u : (floe_i128)u;
            return emit_decimal(j, v, digits ? digits : 1, (unsigned)n.n_frac);
        }
    }
    double x;
    int rc = floe_jnum_to_double(&n, j->e->cloc, &x);
    if (rc == FLOE_SC_NOMEM)
        return jnomem(j);
    if (rc != FLOE_SC_OK)
        return jbad(j, start, "number out of range for a double");
    return emit_double(j, x);
}

/* Array p of *cap elements of `size` bytes, n used, with room for one more: p itself or
 * its reallocation (*cap updated), NULL when out of memory (p unchanged). */
static void *grow(void *p, size_t *cap, size_t n, size_t size) {
    if (n < *cap)
        return p;
    size_t nc = *cap ? *cap * 2 : 64;
    void *np = floe_realloc(p, nc * size);
    if (np)
        *cap = nc;
    return np;
}

static int push_member(jparse *j, uint32_t id, size_t off, size_t len) {
    floe_variant_encoder *e = j->e;
    member *ms = grow(e->ms, &e->capms, e->nms, sizeof *e->ms);
    if (!ms)
        return jnomem(j);
    e->ms = ms;
    e->ms[e->nms++] = (member){.id = id, .off = off, .len = len};
    return 0;
}

static int member_cmp(const void *a, const void *b) {
    const member *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* A container header: its size, and the header itself (ms's offsets relative to the
 * first value) written at p. */
static size_t header_size(bool object, size_t n, uint32_t maxid, size_t total) {
    unsigned osz = width_of(total), idsz = width_of(maxid);
    return 1 + (n > 255 ? 4 : 1) + (object ? n * idsz : 0) + (n + 1) * osz;
}

static void put_header(uint8_t *p, bool object, const member *ms, size_t n, uint32_t maxid,
                       size_t total) {
    unsigned osz = width_of(total), idsz = width_of(maxid);
    bool large = n > 255;
    uint8_t h = object ? (uint8_t)(2 | ((large ? 1 : 0) << 6) | ((idsz - 1) << 4) | ((osz - 1) << 2))
                       : (uint8_t)(3 | ((large ? 1 : 0) << 4) | ((osz - 1) << 2));
    *p++ = h;
    put_le(p, n, large ? 4 : 1);
    p += large ? 4 : 1;
    if (object)
        for (size_t i = 0; i < n; i++, p += idsz)
            put_le(p, ms[i].id, idsz);
    for (size_t i = 0; i < n; i++, p += osz)
        put_le(p, ms[i].off, osz);
    put_le(p, total, osz);
}

/* Insert the header of the container whose n values start at `start` in j->out. */
static int close_container(jparse *j, bool object, size_t start, size_t base,
                           const uint8_t *open) {
    floe_variant_encoder *e = j->e;
    floe_buf *out = j->out;
    member *ms = e->ms ? e->ms + base : NULL; /* NULL before any member was pushed */
    size_t n = e->nms - base, total = out->len - start;
    if (total > UINT32_MAX || n > UINT32_MAX)
        return floe_error_at(j->err, FLOE_ELIMIT, (int64_t)(open - j->base),
                             "variant JSON: container larger than 4 GiB");
    uint32_t maxid = 0;
    if (object) {
        if (n)
            qsort(ms, n, sizeof *ms, member_cmp);
        for (size_t i = 0; i < n; i++) {
            if (i && ms[i].id == ms[i - 1].id) {
                kref k = e->refs[ms[i].id];
                /* the key as a JSON string (a NUL or a quote in it shown escaped) */
                floe_buf kt;
                floe_buf_init(&kt, 0);
                char msg[512];
                if (floe_json_append_text(&kt, k.s, k.len > 64 ? 64 : k.len) < 0) {
                    floe_buf_free(&kt);
                    return jnomem(j);
                }
                snprintf(msg, sizeof msg, "duplicate key %.*s", (int)kt.len,
                         (const char *)kt.data);
                floe_buf_free(&kt);
                return jbad(j, open, msg);
            }
            maxid = ms[i].id;
        }
        /* values in key order */
        floe_buf_reset(&e->tmp);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            floe_buf_append(&e->tmp, out->data + start + ms[i].off, ms[i].len);
            ms[i].off = at;
            at += ms[i].len;
        }
        if (floe_buf_error(&e->tmp))
            return jnomem(j);
        if (total)
            memcpy(out->data + start, e->tmp.data, total);
    }
    size_t hsize = header_size(object, n, maxid, total);
    if (floe_buf_reserve(out, hsize) < 0)
        return jnomem(j);
    uint8_t *p = out->data + start;
    memmove(p + hsize, p, total);
    put_header(p, object, ms, n, maxid, total);
    out->len += hsize;
    e->nms = base;
    return 0;
}

static int kref_cmp(const void *x, const void *y) {
    const kref *a = x, *b = y;
    return key_cmp(a->s, a->len, b->s, b->len);
}

static int key_id(jparse *j, uint32_t *id) {
    floe_variant_encoder *e = j->e;
    const uint8_t *s = e->str.data;
    size_t n = e->str.len, lo = 0, hi = e->nrefs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(e->refs[mid].s, e->refs[mid].len, s, n);
        if (c == 0) {
            *id = (uint32_t)mid;
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return floe_error_set(j->err, FLOE_EINTERNAL, "variant JSON: key missing from the dictionary");
}

static int jvalue(jparse *j, int depth);

static int jcontainer(jparse *j, int depth) {
    const uint8_t *open = j->p;
    bool object = *j->p == '{';
    if (depth >= FLOE_VARIANT_MAX_DEPTH)
        return floe_error_at(j->err, FLOE_ELIMIT, (int64_t)(open - j->base),
                             "variant JSON: nested deeper than %d", FLOE_VARIANT_MAX_DEPTH);
    j->p++;
    size_t start = j->out ? j->out->len : 0, base = j->e->nms;
    skip_ws(j);
    if (j->p < j->end && *j->p == (object ? '}' : ']')) {
        j->p++;
    } else {
        for (;;) {
            uint32_t id = 0;
            skip_ws(j);
            if (object) {
                if (j->p >= j->end || *j->p != '"')
                    return jbad(j, j->p, "expected a key");
                FLOE_FORWARD_IF_ERROR(jstring(j));
                if (j->collect) {
                    floe_variant_encoder *e = j->e;
                    kref *refs = grow(e->refs, &e->caprefs, e->nrefs, sizeof *e->refs);
                    if (!refs)
                        return jnomem(j);
                    e->refs = refs;
                    e->refs[e->nrefs++] = (kref){.off = e->keys.len, .len = e->str.len};
                    if (floe_buf_append(&e->keys, e->str.data, e->str.len) < 0)
                        return jnomem(j);
                } else {
                    FLOE_FORWARD_IF_ERROR(key_id(j, &id));
                }
                skip_ws(j);
                if (j->p >= j->end || *j->p != ':')
                    return jbad(j, j->p, "expected ':'");
                j->p++;
            }
            size_t vstart = j->out ? j->out->len : 0;
            FLOE_FORWARD_IF_ERROR(jvalue(j, depth + 1));
            if (!j->collect)
                FLOE_FORWARD_IF_ERROR(push_member(j, id, vstart - start, j->out->len - vstart));
            skip_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == (object ? '}' : ']')) {
                j->p++;
                break;
            }
            return jbad(j, j->p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (j->collect)
        return 0;
    return close_container(j, object, start, base, open);
}

static int jvalue(jparse *j, int depth) {
    skip_ws(j);
    if (j->p >= j->end)
        return jbad(j, j->p, "expected a value");
    switch (*j->p) {
    case '{':
    case '[': return jcontainer(j, depth);
    case '"':
        FLOE_FORWARD_IF_ERROR(jstring(j));
        if (j->collect)
            return 0;
        {
            floe_buf *s = &j->e->str;
            if (s->len < 64) {
                floe_buf_append_byte(j->out, (uint8_t)(1 | s->len << 2));
            } else {
                uint8_t le[4];
                put_le(le, s->len, 4);
                floe_buf_append_byte(j->out, FLOE_VARIANT_STRING << 2);
                floe_buf_append(j->out, le, 4);
            }
            floe_buf_append(j->out, s->data, s->len);
            return floe_buf_error(j->out) ? jnomem(j) : 0;
        }
    case 't':
    case 'f':
    case 'n': {
        static const char *const lits[3] = {"true", "false", "null"};
        static const unsigned types[3] = {FLOE_VARIANT_TRUE, FLOE_VARIANT_FALSE,
                                          FLOE_VARIANT_NULL};
        int k = *j->p == 't' ? 0 : *j->p == 'f' ? 1 : 2;
        size_t len = strlen(lits[k]);
        if ((size_t)(j->end - j->p) < len || memcmp(j->p, lits[k], len))
            return jbad(j, j->p, "invalid literal");
        j->p += len;
        return j->collect ? 0 : emit_prim(j, types[k], NULL, 0);
    }
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
            return jnumber(j);
        return jbad(j, j->p, "expected a value");
    }
}

/* Sort the keys of pass 1 and drop duplicates: the dictionary. */
static void make_dictionary(floe_variant_encoder *e) {
    if (e->nrefs == 0)
        return;
    for (size_t i = 0; i < e->nrefs; i++) /* no key bytes at all when every key is "" */
        e->refs[i].s = e->keys.data ? e->keys.data + e->refs[i].off : (const uint8_t *)"";
    qsort(e->refs, e->nrefs, sizeof *e->refs, kref_cmp);
    size_t w = 1;
    for (size_t i = 1; i < e->nrefs; i++)
        if (kref_cmp(&e->refs[i], &e->refs[w - 1]) != 0)
            e->refs[w++] = e->refs[i];
    e->nrefs = w;
}

/* A dictionary of n sorted, unique keys: key(ctx, i, ...) gives the i-th. */
typedef void (*key_at_fn)(const void *ctx, size_t i, const uint8_t **s, size_t *len);

static int put_metadata(floe_buf *m, size_t n, key_at_fn key_at, const void *ctx,
                        floe_error *err) {
    size_t total = 0;
    const uint8_t *s;
    size_t len;
    for (size_t i = 0; i < n; i++) {
        key_at(ctx, i, &s, &len);
        total += len;
    }
    if (total > UINT32_MAX || n > UINT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "variant: keys longer than 4 GiB in all");
    unsigned osz = width_of(total > n ? total : n);
    uint8_t hdr[5];
    hdr[0] = (uint8_t)(1 | (n ? 0x10 : 0) | ((osz - 1) << 6));
    put_le(hdr + 1, n, osz);
    floe_buf_append(m, hdr, 1 + osz);
    size_t at = 0;
    for (size_t i = 0; i <= n; i++) {
        put_le(hdr, at, osz);
        floe_buf_append(m, hdr, osz);
        if (i < n) {
            key_at(ctx, i, &s, &len);
            at += len;
        }
    }
    for (size_t i = 0; i < n; i++) {
        key_at(ctx, i, &s, &len);
        floe_buf_append(m, s, len);
    }
    return floe_buf_error(m) ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
}

static void kref_at(const void *ctx, size_t i, const uint8_t **s, size_t *len) {
    const kref *k = &((const floe_variant_encoder *)ctx)->refs[i];
    *s = k->s;
    *len = k->len;
}

static int write_metadata(floe_variant_encoder *e, floe_buf *m, floe_error *err) {
    return put_metadata(m, e->nrefs, kref_at, e, err);
}

typedef struct key_arrays {
    const uint8_t *const *keys;
    const size_t *lens;
} key_arrays;

static void array_key_at(const void *ctx, size_t i, const uint8_t **s, size_t *len) {
    const key_arrays *a = ctx;
    *s = a->keys[i];
    *len = a->lens[i];
}

int floe_variant_append_metadata(const uint8_t *const *keys, const size_t *lens, size_t n,
                                 floe_buf *out, floe_error *err) {
    key_arrays a = {keys, lens};
    return put_metadata(out, n, array_key_at, &a, err);
}

int floe_variant_path_append_key(floe_buf *out, const uint8_t *key, size_t n) {
    floe_buf_append(out, "['", 2);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = key[i];
        const char *esc = c == '\'' ? "\\'" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t" : NULL;
        if (esc)
            floe_buf_append(out, esc, 2);
        else if (c < 0x20)
            floe_buf_printf(out, "\\u%04x", c);
        else
            floe_buf_append_byte(out, c);
    }
    floe_buf_append(out, "']", 2);
    return floe_buf_error(out) ? FLOE_ENOMEM : 0;
}

int floe_variant_encode_json(floe_variant_encoder *e, const uint8_t *json, size_t n,
                             floe_buf *metadata, floe_buf *value, floe_error *err) {
    size_t mlen = metadata->len, vlen = value->len;
    int rc;
    floe_buf_reset(&e->keys);
    e->nrefs = 0;
    e->nms = 0;
    jparse j = {.e = e, .base = json, .p = json, .end = json + n, .collect = true, .err = err};
    FLOE_CHECK(jvalue(&j, 0));
    skip_ws(&j);
    if (j.p != j.end)
        FLOE_CHECK(jbad(&j, j.p, "text after the value"));
    make_dictionary(e);
    FLOE_CHECK(write_metadata(e, metadata, err));
    j = (jparse){.e = e, .base = json, .p = json, .end = json + n, .out = value, .err = err};
    FLOE_CHECK(jvalue(&j, 0));
done:
    if (rc < 0) {
        floe_buf_truncate(metadata, mlen);
        floe_buf_truncate(value, vlen);
    }
    return rc;
}

int floe_variant_append_container(bool object, const floe_variant_member *ms, size_t n,
                                  const uint8_t *values, floe_buf *out, floe_error *err) {
    size_t total = 0;
    uint32_t maxid = 0;
    for (size_t i = 0; i < n; i++) {
        total += ms[i].len;
        if (object && ms[i].id > maxid)
            maxid = ms[i].id;
    }
    if (total > UINT32_MAX || n > UINT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "variant: container larger than 4 GiB");
    member *packed = floe_malloc((n ? n : 1) * sizeof *packed);
    if (!packed)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        packed[i] = (member){.id = ms[i].id, .off = at, .len = ms[i].len};
        at += ms[i].len;
    }
    size_t hsize = header_size(object, n, maxid, total);
    int rc = 0;
    if (floe_buf_reserve(out, hsize + total) < 0) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    } else {
        put_header(out->data + out->len, object, packed, n, maxid, total);
        out->len += hsize;
        for (size_t i = 0; i < n; i++)
            floe_buf_append(out, values + ms[i].off, ms[i].len);
    }
    floe_free(packed);
    return rc;
}
