/*
 * avro_value.c - the generic value tree: setters, binary encoding per schema (Avro 1.11
 * "Binary Encoding"), JSON rendering, and the low-level encode helpers.
 *
 * Encoding checks that each value conforms to its schema node and says where it does not.
 * For convenience it accepts an int for a long (and a long for an int when it fits), a
 * float for a double, and string/bytes for each other; a union picks the value's `branch`
 * when it names a branch of the value's type, else the first branch of that type.
 * Arrays and maps are written as one block (count, items, 0), never with negative counts.
 */
#include "avro_internal.h"

#include <math.h>
#include <stdio.h>

/* ---- setters ------------------------------------------------------------------------- */

void floe_avro_set_null(floe_avro_value *v) {
    v->type = FLOE_AVRO_NULL;
    v->branch = -1;
}
void floe_avro_set_bool(floe_avro_value *v, bool b) {
    v->type = FLOE_AVRO_BOOLEAN;
    v->branch = -1;
    v->u.b = b;
}
void floe_avro_set_int(floe_avro_value *v, int32_t i) {
    v->type = FLOE_AVRO_INT;
    v->branch = -1;
    v->u.i = i;
}
void floe_avro_set_long(floe_avro_value *v, int64_t l) {
    v->type = FLOE_AVRO_LONG;
    v->branch = -1;
    v->u.l = l;
}
void floe_avro_set_float(floe_avro_value *v, float f) {
    v->type = FLOE_AVRO_FLOAT;
    v->branch = -1;
    v->u.f = f;
}
void floe_avro_set_double(floe_avro_value *v, double d) {
    v->type = FLOE_AVRO_DOUBLE;
    v->branch = -1;
    v->u.d = d;
}
void floe_avro_set_bytes(floe_avro_value *v, const void *p, size_t n) {
    v->type = FLOE_AVRO_BYTES;
    v->branch = -1;
    v->u.bytes.p = p;
    v->u.bytes.n = n;
}
void floe_avro_set_stringn(floe_avro_value *v, const char *s, size_t n) {
    v->type = FLOE_AVRO_STRING;
    v->branch = -1;
    v->u.bytes.p = (const uint8_t *)s;
    v->u.bytes.n = n;
}
void floe_avro_set_string(floe_avro_value *v, const char *s) {
    floe_avro_set_stringn(v, s, strlen(s));
}
void floe_avro_set_fixed(floe_avro_value *v, const void *p, size_t n) {
    v->type = FLOE_AVRO_FIXED;
    v->branch = -1;
    v->u.bytes.p = p;
    v->u.bytes.n = n;
}
void floe_avro_set_enum(floe_avro_value *v, int32_t symbol_index) {
    v->type = FLOE_AVRO_ENUM;
    v->branch = -1;
    v->u.i = symbol_index;
}

static int set_list(floe_avro_value *v, floe_arena *a, size_t n, floe_avro_type t) {
    floe_avro_value *items = NULL;
    if (n) {
        if (n > SIZE_MAX / sizeof *items)
            return FLOE_ENOMEM;
        items = floe_arena_alloc(a, n * sizeof *items); /* zeroed: each a null */
        if (!items)
            return FLOE_ENOMEM;
    }
    v->type = t;
    v->branch = -1;
    v->u.list.items = items;
    v->u.list.n = n;
    return 0;
}

int floe_avro_set_record(floe_avro_value *v, floe_arena *a, size_t n_fields) {
    return set_list(v, a, n_fields, FLOE_AVRO_RECORD);
}

int floe_avro_set_array(floe_avro_value *v, floe_arena *a, size_t n_items) {
    return set_list(v, a, n_items, FLOE_AVRO_ARRAY);
}

int floe_avro_set_map(floe_avro_value *v, floe_arena *a, size_t n_entries) {
    floe_avro_map_entry *e = NULL;
    if (n_entries) {
        if (n_entries > SIZE_MAX / sizeof *e)
            return FLOE_ENOMEM;
        e = floe_arena_alloc(a, n_entries * sizeof *e);
        if (!e)
            return FLOE_ENOMEM;
    }
    v->type = FLOE_AVRO_MAP;
    v->branch = -1;
    v->u.map.entries = e;
    v->u.map.n = n_entries;
    return 0;
}

const floe_avro_value *floe_avro_value_field(const floe_avro_node *rec,
                                             const floe_avro_value *v, const char *name) {
    size_t i;
    if (!v || v->type != FLOE_AVRO_RECORD || !floe_avro_node_field(rec, name, &i) ||
        i >= v->u.list.n)
        return NULL;
    return &v->u.list.items[i];
}

/* ---- low-level encoding -------------------------------------------------------------- */

size_t floe_avro_put_long(uint8_t *dst, int64_t v) {
    return floe_uvarint_put(dst, floe_zigzag64(v));
}

int floe_avro_encode_long(floe_buf *out, int64_t v) {
    if (FLOE_UNLIKELY(out->cap - out->len < 10)) {
        int rc = floe_buf_reserve(out, 10);
        if (rc < 0)
            return rc;
    }
    out->len += floe_avro_put_long(out->data + out->len, v);
    return 0;
}

int floe_avro_encode_bool(floe_buf *out, bool v) {
    return floe_buf_append_byte(out, v ? 1 : 0);
}

int floe_avro_encode_float(floe_buf *out, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    uint8_t b[4];
    floe_store_le32(b, bits);
    return floe_buf_append(out, b, 4);
}

int floe_avro_encode_double(floe_buf *out, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint8_t b[8];
    floe_store_le64(b, bits);
    return floe_buf_append(out, b, 8);
}

int floe_avro_encode_bytes(floe_buf *out, const void *p, size_t n) {
    if (n > (size_t)INT64_MAX)
        return FLOE_ELIMIT;
    int rc = floe_avro_encode_long(out, (int64_t)n);
    if (rc < 0)
        return rc;
    return n ? floe_buf_append(out, p, n) : 0;
}

/* ---- value encoding ------------------------------------------------------------------ */

static int buf_err(floe_error *err, int rc) {
    return floe_error_set(err, rc, "avro encode: %s", floe_strerror(rc));
}

static bool type_fits(floe_avro_type schema, const floe_avro_value *v) {
    if (schema == v->type)
        return true;
    switch (schema) {
    case FLOE_AVRO_LONG:
        return v->type == FLOE_AVRO_INT;
    case FLOE_AVRO_INT:
        return v->type == FLOE_AVRO_LONG && v->u.l >= INT32_MIN && v->u.l <= INT32_MAX;
    case FLOE_AVRO_DOUBLE:
        return v->type == FLOE_AVRO_FLOAT;
    case FLOE_AVRO_STRING:
        return v->type == FLOE_AVRO_BYTES;
    case FLOE_AVRO_BYTES:
        return v->type == FLOE_AVRO_STRING;
    default:
        return false;
    }
}

static int encode_rec(const floe_avro_node *n, const floe_avro_value *v, floe_buf *out,
                      floe_error *err, int depth) {
    int rc = 0;
    if (depth > FLOE_AVRO_MAX_DEPTH)
        return floe_error_set(err, FLOE_ESCHEMA, "avro encode: nested deeper than %d",
                              FLOE_AVRO_MAX_DEPTH);
    if (n->type == FLOE_AVRO_UNION) {
        int32_t pick = -1;
        if (v->branch >= 0 && (size_t)v->branch < n->n_branches &&
            n->branches[v->branch]->type == v->type)
            pick = v->branch;
        for (size_t b = 0; pick < 0 && b < n->n_branches; b++)
            if (n->branches[b]->type == v->type)
                pick = (int32_t)b;
        for (size_t b = 0; pick < 0 && b < n->n_branches; b++)
            if (type_fits(n->branches[b]->type, v))
                pick = (int32_t)b;
        if (pick < 0)
            return floe_error_set(err, FLOE_ESCHEMA, "avro encode: no union branch for a %s "
                                  "value", floe_avro_type_name(v->type));
        if ((rc = floe_avro_encode_long(out, pick)) < 0)
            return buf_err(err, rc);
        return encode_rec(n->branches[pick], v, out, err, depth + 1);
    }
    if (!type_fits(n->type, v))
        return floe_error_set(err, FLOE_ESCHEMA, "avro encode: expected %s, got %s",
                              floe_avro_type_name(n->type), floe_avro_type_name(v->type));
    switch (n->type) {
    case FLOE_AVRO_NULL:
        return 0;
    case FLOE_AVRO_BOOLEAN:
        rc = floe_avro_encode_bool(out, v->u.b);
        break;
    case FLOE_AVRO_INT:
        rc = floe_avro_encode_long(out, v->type == FLOE_AVRO_INT ? v->u.i : v->u.l);
        break;
    case FLOE_AVRO_LONG:
        rc = floe_avro_encode_long(out, v->type == FLOE_AVRO_INT ? v->u.i : v->u.l);
        break;
    case FLOE_AVRO_FLOAT:
        rc = floe_avro_encode_float(out, v->u.f);
        break;
    case FLOE_AVRO_DOUBLE:
        rc = floe_avro_encode_double(out, v->type == FLOE_AVRO_FLOAT ? v->u.f : v->u.d);
        break;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
        rc = floe_avro_encode_bytes(out, v->u.bytes.p, v->u.bytes.n);
        break;
    case FLOE_AVRO_FIXED:
        if (v->u.bytes.n != (size_t)n->size)
            return floe_error_set(err, FLOE_ESCHEMA, "avro encode: fixed %s needs %d bytes, "
                                  "got %zu", n->name, n->size, v->u.bytes.n);
        rc = n->size ? floe_buf_append(out, v->u.bytes.p, (size_t)n->size) : 0;
        break;
    case FLOE_AVRO_ENUM:
        if (v->u.i < 0 || (size_t)v->u.i >= n->n_symbols)
            return floe_error_set(err, FLOE_ESCHEMA, "avro encode: enum %s has no symbol %d",
                                  n->name, v->u.i);
        rc = floe_avro_encode_long(out, v->u.i);
        break;
    case FLOE_AVRO_RECORD:
        if (v->u.list.n != n->n_fields)
            return floe_error_set(err, FLOE_ESCHEMA, "avro encode: record %s has %zu fields, "
                                  "value has %zu", n->name, n->n_fields, v->u.list.n);
        for (size_t i = 0; i < n->n_fields; i++) {
            rc = encode_rec(n->fields[i].type, &v->u.list.items[i], out, err, depth + 1);
            if (rc < 0) {
                floe_error_prefix(err, "%s: ", n->fields[i].name);
                return rc;
            }
        }
        return 0;
    case FLOE_AVRO_ARRAY:
        if (v->u.list.n) {
            if ((rc = floe_avro_encode_long(out, (int64_t)v->u.list.n)) < 0)
                return buf_err(err, rc);
            for (size_t i = 0; i < v->u.list.n; i++) {
                rc = encode_rec(n->items, &v->u.list.items[i], out, err, depth + 1);
                if (rc < 0) {
                    floe_error_prefix(err, "[%zu]: ", i);
                    return rc;
                }
            }
        }
        rc = floe_avro_encode_long(out, 0);
        break;
    case FLOE_AVRO_MAP:
        if (v->u.map.n) {
            if ((rc = floe_avro_encode_long(out, (int64_t)v->u.map.n)) < 0)
                return buf_err(err, rc);
            for (size_t i = 0; i < v->u.map.n; i++) {
                const floe_avro_map_entry *e = &v->u.map.entries[i];
                if ((rc = floe_avro_encode_bytes(out, e->key, e->key_len)) < 0)
                    return buf_err(err, rc);
                rc = encode_rec(n->items, &e->value, out, err, depth + 1);
                if (rc < 0) {
                    floe_error_prefix(err, "[%.*s]: ", (int)(e->key_len > 64 ? 64 : e->key_len),
                                      e->key);
                    return rc;
                }
            }
        }
        rc = floe_avro_encode_long(out, 0);
        break;
    case FLOE_AVRO_UNION:
        break; /* handled above */
    }
    return rc < 0 ? buf_err(err, rc) : 0;
}

int floe_avro_value_encode(const floe_avro_node *node, const floe_avro_value *v,
                           floe_buf *out, floe_error *err) {
    return encode_rec(node, v, out, err, 0);
}

/* ---- JSON rendering ------------------------------------------------------------------ */

static int json_hex(floe_buf *out, const uint8_t *p, size_t n) {
    static const char hex[] = "0123456789abcdef";
    int rc = floe_buf_append_byte(out, '"');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char h[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
        rc = floe_buf_append(out, h, 2);
    }
    return rc < 0 ? rc : floe_buf_append_byte(out, '"');
}

static int json_num(floe_buf *out, double d, bool single) {
    if (isnan(d))
        return floe_buf_printf(out, "\"NaN\"");
    if (isinf(d))
        return floe_buf_printf(out, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return floe_buf_printf(out, single ? "%.9g" : "%.17g", d);
}

static int to_json_rec(const floe_avro_node *n, const floe_avro_value *v, floe_buf *out,
                       int depth) {
    int rc = 0;
    if (depth > FLOE_AVRO_MAX_DEPTH * 2)
        return FLOE_ELIMIT;
    if (n->type == FLOE_AVRO_UNION) {
        if (v->branch >= 0 && (size_t)v->branch < n->n_branches)
            return to_json_rec(n->branches[v->branch], v, out, depth + 1);
        for (size_t b = 0; b < n->n_branches; b++)
            if (n->branches[b]->type == v->type)
                return to_json_rec(n->branches[b], v, out, depth + 1);
        return FLOE_ESCHEMA;
    }
    switch (v->type) {
    case FLOE_AVRO_NULL:
        return floe_buf_append(out, "null", 4);
    case FLOE_AVRO_BOOLEAN:
        return v->u.b ? floe_buf_append(out, "true", 4) : floe_buf_append(out, "false", 5);
    case FLOE_AVRO_INT:
        return floe_buf_printf(out, "%d", v->u.i);
    case FLOE_AVRO_LONG:
        return floe_buf_printf(out, "%lld", (long long)v->u.l);
    case FLOE_AVRO_FLOAT:
        return json_num(out, v->u.f, true);
    case FLOE_AVRO_DOUBLE:
        return json_num(out, v->u.d, false);
    case FLOE_AVRO_STRING:
        return floe_json_append_string(out, v->u.bytes.p, v->u.bytes.n);
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED:
        return json_hex(out, v->u.bytes.p, v->u.bytes.n);
    case FLOE_AVRO_ENUM:
        if (n->type == FLOE_AVRO_ENUM && v->u.i >= 0 && (size_t)v->u.i < n->n_symbols)
            return floe_json_append_string(out, (const uint8_t *)n->symbols[v->u.i],
                            strlen(n->symbols[v->u.i]));
        return floe_buf_printf(out, "%d", v->u.i);
    case FLOE_AVRO_RECORD:
        if (n->type != FLOE_AVRO_RECORD || n->n_fields != v->u.list.n)
            return FLOE_ESCHEMA;
        rc = floe_buf_append_byte(out, '{');
        for (size_t i = 0; rc == 0 && i < n->n_fields; i++) {
            if (i && (rc = floe_buf_append_byte(out, ',')) < 0)
                break;
            if ((rc = floe_json_append_string(out, (const uint8_t *)n->fields[i].name,
                               strlen(n->fields[i].name))) < 0 ||
                (rc = floe_buf_append_byte(out, ':')) < 0)
                break;
            rc = to_json_rec(n->fields[i].type, &v->u.list.items[i], out, depth + 1);
        }
        return rc < 0 ? rc : floe_buf_append_byte(out, '}');
    case FLOE_AVRO_ARRAY:
        if (n->type != FLOE_AVRO_ARRAY)
            return FLOE_ESCHEMA;
        rc = floe_buf_append_byte(out, '[');
        for (size_t i = 0; rc == 0 && i < v->u.list.n; i++) {
            if (i && (rc = floe_buf_append_byte(out, ',')) < 0)
                break;
            rc = to_json_rec(n->items, &v->u.list.items[i], out, depth + 1);
        }
        return rc < 0 ? rc : floe_buf_append_byte(out, ']');
    case FLOE_AVRO_MAP:
        if (n->type != FLOE_AVRO_MAP)
            return FLOE_ESCHEMA;
        rc = floe_buf_append_byte(out, '{');
        for (size_t i = 0; rc == 0 && i < v->u.map.n; i++) {
            const floe_avro_map_entry *e = &v->u.map.entries[i];
            if (i && (rc = floe_buf_append_byte(out, ',')) < 0)
                break;
            if ((rc = floe_json_append_string(out, (const uint8_t *)e->key, e->key_len)) < 0 ||
                (rc = floe_buf_append_byte(out, ':')) < 0)
                break;
            rc = to_json_rec(n->items, &e->value, out, depth + 1);
        }
        return rc < 0 ? rc : floe_buf_append_byte(out, '}');
    case FLOE_AVRO_UNION:
        break;
    }
    return FLOE_ESCHEMA;
}

int floe_avro_value_to_json(const floe_avro_node *node, const floe_avro_value *v,
                            floe_buf *out, floe_error *err) {
    int rc = to_json_rec(node, v, out, 0);
    if (rc < 0)
        return floe_error_set(err, rc, "avro value to JSON: %s", floe_strerror(rc));
    return 0;
}
