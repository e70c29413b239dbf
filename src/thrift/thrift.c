/*
 * thrift.c - Thrift compact protocol encoder and decoder (see thrift.h).
 *
 * Spec: apache/thrift doc/specs/thrift-compact-protocol.md.
 *   field header  short form ddddtttt (delta 1..15), long form 0000tttt + zigzag varint id
 *   bool fields   value folded into the type nibble (1 true, 2 false), no payload
 *   i16/i32/i64   zigzag varint; i8 one byte; double 8 bytes little-endian
 *   binary        varint length + bytes
 *   list/set      sssstttt (size 0..14) or 1111tttt + varint size
 *   map           0x00 when empty, else varint size + kkkkvvvv
 *
 * Invariants: the reader never reads past n; every size it returns has been checked
 * against the remaining bytes; depth never exceeds FLOE_THRIFT_MAX_DEPTH.
 */
#include "thrift/thrift.h"

#include <stdio.h>
#include <string.h>

/* ---- writer ------------------------------------------------------------------------- */

void floe_thrift_writer_init(floe_thrift_writer *w, floe_buf *out) {
    memset(w, 0, sizeof *w);
    w->out = out;
}

int floe_thrift_writer_finish(const floe_thrift_writer *w) {
    if (w->rc < 0)
        return w->rc;
    return w->depth == 0 ? 0 : FLOE_EINTERNAL;
}

static void put_bytes(floe_thrift_writer *w, const void *p, size_t n) {
    if (w->rc < 0)
        return;
    int rc = floe_buf_append(w->out, p, n);
    if (rc < 0)
        w->rc = rc;
}

static void put_byte(floe_thrift_writer *w, uint8_t b) {
    if (w->rc < 0)
        return;
    /* fast path: room already there */
    if (w->out->len + 1 < w->out->cap && w->out->len < w->out->max) {
        w->out->data[w->out->len++] = b;
        return;
    }
    put_bytes(w, &b, 1);
}

static void put_uvarint(floe_thrift_writer *w, uint64_t v) {
    uint8_t tmp[10];
    size_t k = floe_uvarint_put(tmp, v);
    put_bytes(w, tmp, k);
}

void floe_thrift_struct_begin(floe_thrift_writer *w) {
    if (w->rc < 0)
        return;
    if (w->depth >= FLOE_THRIFT_MAX_DEPTH) {
        w->rc = FLOE_EINTERNAL;
        return;
    }
    w->last_id[w->depth++] = 0;
}

void floe_thrift_struct_end(floe_thrift_writer *w) {
    if (w->rc < 0)
        return;
    if (w->depth <= 0) {
        w->rc = FLOE_EINTERNAL;
        return;
    }
    put_byte(w, FLOE_THRIFT_STOP);
    w->depth--;
}

static void field_header(floe_thrift_writer *w, uint8_t type, int16_t id) {
    if (w->rc < 0)
        return;
    if (w->depth <= 0) {
        w->rc = FLOE_EINTERNAL; /* a field outside any struct */
        return;
    }
    int32_t delta = (int32_t)id - (int32_t)w->last_id[w->depth - 1];
    if (delta > 0 && delta <= 15) {
        put_byte(w, (uint8_t)((delta << 4) | type));
    } else {
        put_byte(w, type);
        put_uvarint(w, (uint32_t)floe_zigzag64(id));
    }
    w->last_id[w->depth - 1] = id;
}

void floe_thrift_field_begin(floe_thrift_writer *w, floe_thrift_type type, int16_t id) {
    field_header(w, (uint8_t)type, id);
}

void floe_thrift_field_bool(floe_thrift_writer *w, int16_t id, bool v) {
    field_header(w, v ? FLOE_THRIFT_TRUE : FLOE_THRIFT_FALSE, id);
}

void floe_thrift_field_byte(floe_thrift_writer *w, int16_t id, int8_t v) {
    field_header(w, FLOE_THRIFT_BYTE, id);
    put_byte(w, (uint8_t)v);
}

void floe_thrift_field_i16(floe_thrift_writer *w, int16_t id, int16_t v) {
    field_header(w, FLOE_THRIFT_I16, id);
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_field_i32(floe_thrift_writer *w, int16_t id, int32_t v) {
    field_header(w, FLOE_THRIFT_I32, id);
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_field_i64(floe_thrift_writer *w, int16_t id, int64_t v) {
    field_header(w, FLOE_THRIFT_I64, id);
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_field_double(floe_thrift_writer *w, int16_t id, double v) {
    field_header(w, FLOE_THRIFT_DOUBLE, id);
    floe_thrift_write_double(w, v);
}

void floe_thrift_field_binary(floe_thrift_writer *w, int16_t id, const void *p, size_t n) {
    field_header(w, FLOE_THRIFT_BINARY, id);
    floe_thrift_write_binary(w, p, n);
}

void floe_thrift_field_string(floe_thrift_writer *w, int16_t id, const char *s) {
    floe_thrift_field_binary(w, id, s, s ? strlen(s) : 0);
}

void floe_thrift_field_list_begin(floe_thrift_writer *w, int16_t id, floe_thrift_type elem,
                                  size_t size) {
    field_header(w, FLOE_THRIFT_LIST, id);
    floe_thrift_list_begin(w, elem, size);
}

void floe_thrift_field_struct_begin(floe_thrift_writer *w, int16_t id) {
    field_header(w, FLOE_THRIFT_STRUCT, id);
    floe_thrift_struct_begin(w);
}

void floe_thrift_field_empty_struct(floe_thrift_writer *w, int16_t id) {
    floe_thrift_field_struct_begin(w, id);
    floe_thrift_struct_end(w);
}

void floe_thrift_write_bool(floe_thrift_writer *w, bool v) { put_byte(w, v ? 1 : 0); }

void floe_thrift_write_byte(floe_thrift_writer *w, int8_t v) { put_byte(w, (uint8_t)v); }

void floe_thrift_write_i16(floe_thrift_writer *w, int16_t v) {
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_write_i32(floe_thrift_writer *w, int32_t v) {
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_write_i64(floe_thrift_writer *w, int64_t v) {
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_write_double(floe_thrift_writer *w, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint8_t b[8];
    floe_store_le64(b, bits);
    put_bytes(w, b, 8);
}

void floe_thrift_write_binary(floe_thrift_writer *w, const void *p, size_t n) {
    if (n > INT32_MAX) {
        if (w->rc == 0)
            w->rc = FLOE_ELIMIT;
        return;
    }
    put_uvarint(w, n);
    if (n)
        put_bytes(w, p, n);
}

void floe_thrift_list_begin(floe_thrift_writer *w, floe_thrift_type elem, size_t size) {
    if (size > INT32_MAX) {
        if (w->rc == 0)
            w->rc = FLOE_ELIMIT;
        return;
    }
    if (size < 15) {
        put_byte(w, (uint8_t)((size << 4) | (unsigned)elem));
    } else {
        put_byte(w, (uint8_t)(0xF0 | (unsigned)elem));
        put_uvarint(w, size);
    }
}

void floe_thrift_map_begin(floe_thrift_writer *w, floe_thrift_type key,
                           floe_thrift_type value, size_t size) {
    if (size > INT32_MAX) {
        if (w->rc == 0)
            w->rc = FLOE_ELIMIT;
        return;
    }
    if (size == 0) {
        put_byte(w, 0);
        return;
    }
    put_uvarint(w, size);
    put_byte(w, (uint8_t)(((unsigned)key << 4) | (unsigned)value));
}

/* ---- reader ------------------------------------------------------------------------- */

void floe_thrift_reader_init(floe_thrift_reader *r, const uint8_t *p, size_t n,
                             floe_error *err) {
    memset(r, 0, sizeof *r);
    r->p = p;
    r->n = n;
    r->max_collection = (size_t)1 << 24;
    r->max_binary = (size_t)64 << 20;
    r->err = err;
}

int floe_thrift_reader_fail(floe_thrift_reader *r, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return floe_error_at(r->err, FLOE_ECORRUPT, r->base_offset + (int64_t)r->pos,
                         "%s%sthrift: %s at byte %zu", r->what ? r->what : "",
                         r->what ? ": " : "", msg, r->pos);
}

static int get_byte(floe_thrift_reader *r, uint8_t *b) {
    if (FLOE_UNLIKELY(r->pos >= r->n))
        return floe_thrift_reader_fail(r, "unexpected end of input");
    *b = r->p[r->pos++];
    return 0;
}

static int get_uvarint(floe_thrift_reader *r, uint64_t *v) {
    /* fast path: one byte */
    if (FLOE_LIKELY(r->pos < r->n && r->p[r->pos] < 0x80)) {
        *v = r->p[r->pos++];
        return 0;
    }
    size_t k = floe_uvarint_get(r->p + r->pos, r->n - r->pos, v);
    if (FLOE_UNLIKELY(k == 0))
        return floe_thrift_reader_fail(r, r->pos >= r->n || r->n - r->pos < 10
                                              ? "truncated varint"
                                              : "overlong varint");
    r->pos += k;
    return 0;
}

int floe_thrift_read_struct_begin(floe_thrift_reader *r) {
    if (FLOE_UNLIKELY(r->depth >= FLOE_THRIFT_MAX_DEPTH))
        return floe_thrift_reader_fail(r, "nesting deeper than %d", FLOE_THRIFT_MAX_DEPTH);
    r->last_id[r->depth++] = 0;
    r->bool_pending = false;
    return 0;
}

int floe_thrift_read_struct_end(floe_thrift_reader *r) {
    if (FLOE_UNLIKELY(r->depth <= 0))
        return floe_thrift_reader_fail(r, "struct end without begin");
    r->depth--;
    r->bool_pending = false;
    return 0;
}

int floe_thrift_read_field(floe_thrift_reader *r, floe_thrift_type *type, int16_t *id) {
    uint8_t b = 0;
    int rc;
    if (FLOE_UNLIKELY(r->depth <= 0))
        return floe_thrift_reader_fail(r, "field outside a struct");
    r->bool_pending = false;
    if ((rc = get_byte(r, &b)) < 0)
        return rc;
    unsigned t = b & 0x0F;
    if (t == FLOE_THRIFT_STOP) {
        if (FLOE_UNLIKELY(b != 0))
            return floe_thrift_reader_fail(r, "bad stop byte 0x%02x", b);
        *type = FLOE_THRIFT_STOP;
        *id = 0;
        return 0;
    }
    if (FLOE_UNLIKELY(t > FLOE_THRIFT_UUID))
        return floe_thrift_reader_fail(r, "unknown field type %u", t);
    int32_t fid;
    unsigned delta = b >> 4;
    if (delta) {
        fid = (int32_t)r->last_id[r->depth - 1] + (int32_t)delta;
        if (FLOE_UNLIKELY(fid > INT16_MAX))
            return floe_thrift_reader_fail(r, "field id overflow");
    } else {
        uint64_t z;
        if ((rc = get_uvarint(r, &z)) < 0)
            return rc;
        int64_t v = floe_unzigzag64(z);
        if (FLOE_UNLIKELY(v < INT16_MIN || v > INT16_MAX))
            return floe_thrift_reader_fail(r, "field id %lld out of range", (long long)v);
        fid = (int32_t)v;
    }
    r->last_id[r->depth - 1] = (int16_t)fid;
    if (t == FLOE_THRIFT_TRUE || t == FLOE_THRIFT_FALSE) {
        r->bool_pending = true;
        r->bool_value = t == FLOE_THRIFT_TRUE;
    }
    *type = (floe_thrift_type)t;
    *id = (int16_t)fid;
    return 0;
}

int floe_thrift_read_bool(floe_thrift_reader *r, bool *v) {
    if (r->bool_pending) {
        r->bool_pending = false;
        *v = r->bool_value;
        return 0;
    }
    uint8_t b = 0;
    int rc = get_byte(r, &b);
    if (rc < 0)
        return rc;
    /* elements: the spec says 1/0, Java and C++ write 1/2 */
    if (FLOE_UNLIKELY(b > 2))
        return floe_thrift_reader_fail(r, "bad bool byte 0x%02x", b);
    *v = b == 1;
    return 0;
}

int floe_thrift_read_byte(floe_thrift_reader *r, int8_t *v) {
    uint8_t b = 0;
    int rc = get_byte(r, &b);
    if (rc < 0)
        return rc;
    *v = (int8_t)b;
    return 0;
}

int floe_thrift_read_i16(floe_thrift_reader *r, int16_t *v) {
    uint64_t z;
    int rc = get_uvarint(r, &z);
    if (rc < 0)
        return rc;
    int64_t x = floe_unzigzag64(z);
    if (FLOE_UNLIKELY(x < INT16_MIN || x > INT16_MAX))
        return floe_thrift_reader_fail(r, "i16 out of range");
    *v = (int16_t)x;
    return 0;
}

int floe_thrift_read_i32(floe_thrift_reader *r, int32_t *v) {
    uint64_t z;
    int rc = get_uvarint(r, &z);
    if (rc < 0)
        return rc;
    int64_t x = floe_unzigzag64(z);
    if (FLOE_UNLIKELY(x < INT32_MIN || x > INT32_MAX))
        return floe_thrift_reader_fail(r, "i32 out of range");
    *v = (int32_t)x;
    return 0;
}

int floe_thrift_read_i64(floe_thrift_reader *r, int64_t *v) {
    uint64_t z;
    int rc = get_uvarint(r, &z);
    if (rc < 0)
        return rc;
    *v = floe_unzigzag64(z);
    return 0;
}

int floe_thrift_read_double(floe_thrift_reader *r, double *v) {
    if (FLOE_UNLIKELY(r->n - r->pos < 8))
        return floe_thrift_reader_fail(r, "truncated double");
    uint64_t bits = floe_load_le64(r->p + r->pos);
    memcpy(v, &bits, 8);
    r->pos += 8;
    return 0;
}

int floe_thrift_read_binary(floe_thrift_reader *r, const uint8_t **p, size_t *n) {
    uint64_t len;
    int rc = get_uvarint(r, &len);
    if (rc < 0)
        return rc;
    if (FLOE_UNLIKELY(len > r->n - r->pos))
        return floe_thrift_reader_fail(r, "binary length %llu past end (%zu bytes left)",
                                       (unsigned long long)len, r->n - r->pos);
    if (FLOE_UNLIKELY(len > r->max_binary))
        return floe_thrift_reader_fail(r, "binary length %llu over cap %zu",
                                       (unsigned long long)len, r->max_binary);
    *p = r->p + r->pos;
    *n = (size_t)len;
    r->pos += (size_t)len;
    return 0;
}

static int check_collection(floe_thrift_reader *r, uint64_t size, unsigned elem) {
    if (FLOE_UNLIKELY(size > r->max_collection))
        return floe_thrift_reader_fail(r, "collection size %llu over cap %zu",
                                       (unsigned long long)size, r->max_collection);
    /* Every element takes at least one byte on the wire. */
    if (FLOE_UNLIKELY(size > r->n - r->pos))
        return floe_thrift_reader_fail(r, "collection size %llu past end (%zu bytes left)",
                                       (unsigned long long)size, r->n - r->pos);
    if (FLOE_UNLIKELY(elem == FLOE_THRIFT_STOP || elem > FLOE_THRIFT_UUID))
        return floe_thrift_reader_fail(r, "bad element type %u", elem);
    return 0;
}

int floe_thrift_read_list_begin(floe_thrift_reader *r, floe_thrift_type *elem, size_t *size) {
    uint8_t b = 0;
    int rc;
    r->bool_pending = false;
    if ((rc = get_byte(r, &b)) < 0)
        return rc;
    uint64_t sz = b >> 4;
    unsigned et = b & 0x0F;
    if (sz == 15) {
        if ((rc = get_uvarint(r, &sz)) < 0)
            return rc;
        if (FLOE_UNLIKELY(sz > INT32_MAX))
            return floe_thrift_reader_fail(r, "list size %llu out of range",
                                           (unsigned long long)sz);
    }
    if ((rc = check_collection(r, sz, et)) < 0)
        return rc;
    if (et == FLOE_THRIFT_FALSE)
        et = FLOE_THRIFT_TRUE;
    *elem = (floe_thrift_type)et;
    *size = (size_t)sz;
    return 0;
}

int floe_thrift_read_map_begin(floe_thrift_reader *r, floe_thrift_type *key,
                               floe_thrift_type *value, size_t *size) {
    uint64_t sz;
    int rc;
    r->bool_pending = false;
    if ((rc = get_uvarint(r, &sz)) < 0)
        return rc;
    if (sz == 0) {
        *key = *value = FLOE_THRIFT_STOP;
        *size = 0;
        return 0;
    }
    if (FLOE_UNLIKELY(sz > INT32_MAX))
        return floe_thrift_reader_fail(r, "map size %llu out of range", (unsigned long long)sz);
    uint8_t kv = 0;
    if ((rc = get_byte(r, &kv)) < 0)
        return rc;
    unsigned kt = kv >> 4, vt = kv & 0x0F;
    /* each pair takes at least two bytes */
    if ((rc = check_collection(r, sz > SIZE_MAX / 2 ? sz : sz * 2, kt)) < 0 ||
        (rc = check_collection(r, sz, vt)) < 0)
        return rc;
    if (kt == FLOE_THRIFT_FALSE)
        kt = FLOE_THRIFT_TRUE;
    if (vt == FLOE_THRIFT_FALSE)
        vt = FLOE_THRIFT_TRUE;
    *key = (floe_thrift_type)kt;
    *value = (floe_thrift_type)vt;
    *size = (size_t)sz;
    return 0;
}

/* in_field: a bool's value lives in the field header (no payload); elements take a byte. */
static int skip_value(floe_thrift_reader *r, unsigned type, bool in_field) {
    int rc;
    uint64_t u;
    switch (type) {
    case FLOE_THRIFT_TRUE:
    case FLOE_THRIFT_FALSE:
        if (in_field) {
            r->bool_pending = false;
            return 0;
        }
        {
            bool b;
            return floe_thrift_read_bool(r, &b);
        }
    case FLOE_THRIFT_BYTE: {
        uint8_t b;
        return get_byte(r, &b);
    }
    case FLOE_THRIFT_I16:
    case FLOE_THRIFT_I32:
    case FLOE_THRIFT_I64:
        return get_uvarint(r, &u);
    case FLOE_THRIFT_DOUBLE:
        if (r->n - r->pos < 8)
            return floe_thrift_reader_fail(r, "truncated double");
        r->pos += 8;
        return 0;
    case FLOE_THRIFT_UUID:
        if (r->n - r->pos < 16)
            return floe_thrift_reader_fail(r, "truncated uuid");
        r->pos += 16;
        return 0;
    case FLOE_THRIFT_BINARY: {
        const uint8_t *p;
        size_t n;
        return floe_thrift_read_binary(r, &p, &n);
    }
    case FLOE_THRIFT_LIST:
    case FLOE_THRIFT_SET: {
        floe_thrift_type et;
        size_t sz;
        if ((rc = floe_thrift_read_list_begin(r, &et, &sz)) < 0)
            return rc;
        if (r->depth >= FLOE_THRIFT_MAX_DEPTH)
            return floe_thrift_reader_fail(r, "nesting deeper than %d", FLOE_THRIFT_MAX_DEPTH);
        r->depth++; /* containers count toward the depth cap too */
        r->last_id[r->depth - 1] = 0;
        for (size_t i = 0; i < sz; i++)
            if ((rc = skip_value(r, et, false)) < 0)
                return rc;
        r->depth--;
        return 0;
    }
    case FLOE_THRIFT_MAP: {
        floe_thrift_type kt, vt;
        size_t sz;
        if ((rc = floe_thrift_read_map_begin(r, &kt, &vt, &sz)) < 0)
            return rc;
        if (r->depth >= FLOE_THRIFT_MAX_DEPTH)
            return floe_thrift_reader_fail(r, "nesting deeper than %d", FLOE_THRIFT_MAX_DEPTH);
        r->depth++;
        r->last_id[r->depth - 1] = 0;
        for (size_t i = 0; i < sz; i++)
            if ((rc = skip_value(r, kt, false)) < 0 || (rc = skip_value(r, vt, false)) < 0)
                return rc;
        r->depth--;
        return 0;
    }
    case FLOE_THRIFT_STRUCT: {
        if ((rc = floe_thrift_read_struct_begin(r)) < 0)
            return rc;
        for (;;) {
            floe_thrift_type ft;
            int16_t fid;
            if ((rc = floe_thrift_read_field(r, &ft, &fid)) < 0)
                return rc;
            if (ft == FLOE_THRIFT_STOP)
                break;
            if ((rc = skip_value(r, ft, true)) < 0)
                return rc;
        }
        return floe_thrift_read_struct_end(r);
    }
    default:
        return floe_thrift_reader_fail(r, "cannot skip type %u", type);
    }
}

int floe_thrift_skip(floe_thrift_reader *r, floe_thrift_type type) {
    bool in_field = (type == FLOE_THRIFT_TRUE || type == FLOE_THRIFT_FALSE) && r->bool_pending;
    return skip_value(r, (unsigned)type, in_field);
}
