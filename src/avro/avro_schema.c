/*
 * avro_schema.c - Avro schema JSON <-> floe_avro_node tree (Avro 1.11 spec, "Schema
 * Declaration", "Names", "Aliases"; Iceberg spec Appendix A for field-id, element-id,
 * key-id, value-id and the logicalType "map" arrays of key/value records).
 *
 * The whole tree lives in the schema's arena. Named types (record, enum, fixed) are
 * registered under their full name before their body is parsed, so a record may refer to
 * itself; every later reference is the same node. Attributes floe does not interpret are
 * kept as JSON text and written back, so a schema survives parse + serialize unchanged in
 * meaning (Iceberg's "adjust-to-utc", "order", ... included).
 *
 * Defaults are parsed into floe_avro_value trees once, here. A default that does not fit
 * its type is dropped (has_default = false) but its text is kept: refusing a whole file
 * over a default that only matters during resolution would be unkind to readers.
 */
#include "avro_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct named_entry {
    const char *fullname;
    floe_avro_node *node;
} named_entry;

typedef struct parse_ctx {
    floe_arena *a;
    named_entry *names;
    size_t n_names, cap_names;
    floe_error *err;
} parse_ctx;

static const char *const type_names[] = {
    [FLOE_AVRO_NULL] = "null",     [FLOE_AVRO_BOOLEAN] = "boolean",
    [FLOE_AVRO_INT] = "int",       [FLOE_AVRO_LONG] = "long",
    [FLOE_AVRO_FLOAT] = "float",   [FLOE_AVRO_DOUBLE] = "double",
    [FLOE_AVRO_BYTES] = "bytes",   [FLOE_AVRO_STRING] = "string",
    [FLOE_AVRO_RECORD] = "record", [FLOE_AVRO_ENUM] = "enum",
    [FLOE_AVRO_ARRAY] = "array",   [FLOE_AVRO_MAP] = "map",
    [FLOE_AVRO_UNION] = "union",   [FLOE_AVRO_FIXED] = "fixed",
};

const char *floe_avro_type_name(floe_avro_type t) {
    if ((unsigned)t < sizeof type_names / sizeof type_names[0] && type_names[t])
        return type_names[t];
    return "?";
}

static int primitive_from_name(const char *s, floe_avro_type *t) {
    for (int i = FLOE_AVRO_NULL; i <= FLOE_AVRO_STRING; i++) {
        if (strcmp(s, type_names[i]) == 0) {
            *t = (floe_avro_type)i;
            return 1;
        }
    }
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------ */

static char *dump_json(floe_arena *a, const json_t *j) {
    size_t n = json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
    if (n == 0)
        return NULL;
    char *s = floe_arena_alloc(a, n + 1);
    if (!s)
        return NULL;
    if (json_dumpb(j, s, n, JSON_COMPACT | JSON_ENCODE_ANY) != n)
        return NULL;
    s[n] = '\0';
    return s;
}

/* An iceberg id attribute: an integer (or a numeric string, as some writers emit). */
static bool json_get_id(const json_t *j, int32_t *out) {
    if (json_is_integer(j)) {
        json_int_t v = json_integer_value(j);
        if (v < INT32_MIN || v > INT32_MAX)
            return false;
        *out = (int32_t)v;
        return true;
    }
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        char *end = NULL;
        long long v = strtoll(s, &end, 10);
        if (end == s || *end || v < INT32_MIN || v > INT32_MAX)
            return false;
        *out = (int32_t)v;
        return true;
    }
    return false;
}

static int name_register(parse_ctx *c, const char *fullname, floe_avro_node *node) {
    for (size_t i = 0; i < c->n_names; i++)
        if (strcmp(c->names[i].fullname, fullname) == 0)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: type %s defined twice",
                                  fullname);
    if (c->n_names == c->cap_names) {
        size_t cap = c->cap_names ? c->cap_names * 2 : 16;
        named_entry *n = floe_realloc(c->names, cap * sizeof *n);
        if (!n)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        c->names = n;
        c->cap_names = cap;
    }
    c->names[c->n_names].fullname = fullname;
    c->names[c->n_names].node = node;
    c->n_names++;
    return 0;
}

static floe_avro_node *name_lookup(parse_ctx *c, const char *ns, const char *name) {
    char buf[1024];
    if (!strchr(name, '.') && ns && *ns) {
        int k = snprintf(buf, sizeof buf, "%s.%s", ns, name);
        if (k > 0 && (size_t)k < sizeof buf)
            for (size_t i = 0; i < c->n_names; i++)
                if (strcmp(c->names[i].fullname, buf) == 0)
                    return c->names[i].node;
    }
    for (size_t i = 0; i < c->n_names; i++)
        if (strcmp(c->names[i].fullname, name) == 0)
            return c->names[i].node;
    return NULL;
}

static int parse_aliases(parse_ctx *c, const json_t *j, const char *const **out, size_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (!j)
        return 0;
    if (!json_is_array(j))
        return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: aliases must be an array");
    size_t n = json_array_size(j);
    if (n == 0)
        return 0;
    const char **v = floe_arena_alloc(c->a, n * sizeof *v);
    if (!v)
        return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(j, i);
        if (!json_is_string(s))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: alias must be a string");
        v[i] = floe_arena_strdup(c->a, json_string_value(s));
        if (!v[i])
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    }
    *out = v;
    *n_out = n;
    return 0;
}

/* Collect attributes not in `known` into a compact JSON object text (or NULL). */
static int collect_props(parse_ctx *c, const json_t *obj, const char *const *known,
                         const char **out) {
    *out = NULL;
    json_t *extra = NULL;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        bool k = false;
        for (size_t i = 0; known[i]; i++)
            if (strcmp(key, known[i]) == 0) {
                k = true;
                break;
            }
        if (k)
            continue;
        if (!extra && !(extra = json_object()))
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        if (json_object_set(extra, key, val) < 0) {
            json_decref(extra);
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        }
    }
    if (extra) {
        *out = dump_json(c->a, extra);
        json_decref(extra);
        if (!*out)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    }
    return 0;
}

/* ---- defaults: JSON -> value ----------------------------------------------------------- */

static int json_to_value(floe_arena *a, const floe_avro_node *n, const json_t *j,
                         floe_avro_value *v, int depth);

/* Bytes and fixed defaults are strings whose code points 0-255 are the bytes. 0, 1 (not
 * such a string), FLOE_ENOMEM. */
static int json_latin1(floe_arena *a, const json_t *j, const uint8_t **p, size_t *len) {
    if (!json_is_string(j))
        return 1;
    const uint8_t *s = (const uint8_t *)json_string_value(j);
    size_t n = json_string_length(j);
    uint8_t *out = floe_arena_alloc(a, n + 1);
    if (!out)
        return FLOE_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        if (s[i] < 0x80) {
            cp = s[i++];
        } else if ((s[i] & 0xE0) == 0xC0 && i + 1 < n) {
            cp = ((uint32_t)(s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F);
            i += 2;
        } else {
            return 1;
        }
        if (cp > 255)
            return 1;
        out[o++] = (uint8_t)cp;
    }
    *p = out;
    *len = o;
    return 0;
}

static int json_to_value(floe_arena *a, const floe_avro_node *n, const json_t *j,
                         floe_avro_value *v, int depth) {
    if (depth > FLOE_AVRO_MAX_DEPTH)
        return 1;
    v->branch = -1;
    v->type = n->type;
    switch (n->type) {
    case FLOE_AVRO_NULL:
        return !json_is_null(j);
    case FLOE_AVRO_BOOLEAN:
        if (!json_is_boolean(j))
            return 1;
        v->u.b = json_is_true(j);
        return 0;
    case FLOE_AVRO_INT:
        if (!json_is_integer(j) || json_integer_value(j) < INT32_MIN ||
            json_integer_value(j) > INT32_MAX)
            return 1;
        v->u.i = (int32_t)json_integer_value(j);
        return 0;
    case FLOE_AVRO_LONG:
        if (!json_is_integer(j))
            return 1;
        v->u.l = (int64_t)json_integer_value(j);
        return 0;
    case FLOE_AVRO_FLOAT:
        if (!json_is_number(j))
            return 1;
        v->u.f = (float)json_number_value(j);
        return 0;
    case FLOE_AVRO_DOUBLE:
        if (!json_is_number(j))
            return 1;
        v->u.d = json_number_value(j);
        return 0;
    case FLOE_AVRO_STRING: {
        if (!json_is_string(j))
            return 1;
        size_t len = json_string_length(j);
        char *s = floe_arena_strndup(a, json_string_value(j), len);
        if (!s)
            return FLOE_ENOMEM;
        v->u.bytes.p = (const uint8_t *)s;
        v->u.bytes.n = len;
        return 0;
    }
    case FLOE_AVRO_BYTES:
        return json_latin1(a, j, &v->u.bytes.p, &v->u.bytes.n);
    case FLOE_AVRO_FIXED: {
        int rc = json_latin1(a, j, &v->u.bytes.p, &v->u.bytes.n);
        return rc != 0 ? rc : v->u.bytes.n != (size_t)n->size;
    }
    case FLOE_AVRO_ENUM:
        if (!json_is_string(j))
            return 1;
        for (size_t i = 0; i < n->n_symbols; i++)
            if (strcmp(n->symbols[i], json_string_value(j)) == 0) {
                v->u.i = (int32_t)i;
                return 0;
            }
        return 1;
    case FLOE_AVRO_RECORD: {
        if (!json_is_object(j))
            return 1;
        if (floe_avro_set_record(v, a, n->n_fields) < 0)
            return FLOE_ENOMEM;
        for (size_t i = 0; i < n->n_fields; i++) {
            const floe_avro_field *f = &n->fields[i];
            const json_t *fj = json_object_get(j, f->name);
            if (fj) {
                int rc = json_to_value(a, f->type, fj, &v->u.list.items[i], depth + 1);
                if (rc != 0)
                    return rc;
            } else if (f->has_default) {
                v->u.list.items[i] = *f->default_value;
            } else {
                return 1;
            }
        }
        return 0;
    }
    case FLOE_AVRO_ARRAY: {
        if (!json_is_array(j))
            return 1;
        if (floe_avro_set_array(v, a, json_array_size(j)) < 0)
            return FLOE_ENOMEM;
        for (size_t i = 0; i < json_array_size(j); i++) {
            int rc = json_to_value(a, n->items, json_array_get(j, i), &v->u.list.items[i],
                                   depth + 1);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    case FLOE_AVRO_MAP: {
        if (!json_is_object(j))
            return 1;
        if (floe_avro_set_map(v, a, json_object_size(j)) < 0)
            return FLOE_ENOMEM;
        size_t i = 0;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)j, key, val) {
            floe_avro_map_entry *e = &v->u.map.entries[i++];
            e->key_len = strlen(key);
            e->key = floe_arena_strndup(a, key, e->key_len);
            if (!e->key)
                return FLOE_ENOMEM;
            int rc = json_to_value(a, n->items, val, &e->value, depth + 1);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    case FLOE_AVRO_UNION:
        /* The spec: a union default is for the first branch. Some writers put null first
         * in the JSON but not in the union; accept the first branch that fits. */
        for (size_t b = 0; b < n->n_branches; b++) {
            int rc = json_to_value(a, n->branches[b], j, v, depth + 1);
            if (rc == 0)
                v->branch = (int32_t)b;
            if (rc <= 0)
                return rc;
        }
        return 1;
    }
    return 1;
}

/* ---- parsing ------------------------------------------------------------------------- */

static int parse_node(parse_ctx *c, const json_t *j, const char *ns, int depth,
                      const floe_avro_node **out);

static char *make_fullname(parse_ctx *c, const char *name, const char *ns) {
    if (strchr(name, '.') || !ns || !*ns)
        return floe_arena_strdup(c->a, name);
    size_t ln = strlen(ns), lm = strlen(name);
    char *s = floe_arena_alloc(c->a, ln + lm + 2);
    if (!s)
        return NULL;
    memcpy(s, ns, ln);
    s[ln] = '.';
    memcpy(s + ln + 1, name, lm + 1);
    return s;
}

/* The namespace part of a full name ("a.b.C" -> "a.b"), in the arena; "" if none. */
static const char *namespace_of(parse_ctx *c, const char *fullname) {
    const char *dot = strrchr(fullname, '.');
    if (!dot)
        return "";
    return floe_arena_strndup(c->a, fullname, (size_t)(dot - fullname));
}

static int parse_fields(parse_ctx *c, floe_avro_node *node, const json_t *jf, const char *ns,
                        int depth) {
    static const char *const field_known[] = {"name",    "type",     "default", "doc",
                                              "aliases", "field-id", NULL};
    if (!json_is_array(jf))
        return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: record %s: fields must be "
                              "an array", node->name);
    size_t n = json_array_size(jf);
    floe_avro_field *fields = n ? floe_arena_alloc(c->a, n * sizeof *fields) : NULL;
    if (n && !fields)
        return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *fo = json_array_get(jf, i);
        floe_avro_field *f = &fields[i];
        if (!json_is_object(fo))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: record %s: field %zu "
                                  "is not an object", node->name, i);
        const json_t *jn = json_object_get(fo, "name");
        if (!json_is_string(jn))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: record %s: field %zu "
                                  "has no name", node->name, i);
        f->name = floe_arena_strdup(c->a, json_string_value(jn));
        if (!f->name)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        for (size_t k = 0; k < i; k++)
            if (strcmp(fields[k].name, f->name) == 0)
                return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: record %s: field "
                                      "%s defined twice", node->name, f->name);
        const json_t *jt = json_object_get(fo, "type");
        if (!jt)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: field %s has no type",
                                  f->name);
        int rc = parse_node(c, jt, ns, depth + 1, &f->type);
        if (rc < 0) {
            floe_error_prefix(c->err, "field %s: ", f->name);
            return rc;
        }
        const json_t *jd = json_object_get(fo, "doc");
        if (json_is_string(jd) && !(f->doc = floe_arena_strdup(c->a, json_string_value(jd))))
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        const char *const *aliases;
        FLOE_FORWARD_IF_ERROR(parse_aliases(c, json_object_get(fo, "aliases"), &aliases,
                                            &f->n_aliases));
        f->aliases = aliases;
        const json_t *jid = json_object_get(fo, "field-id");
        if (jid) {
            if (!json_get_id(jid, &f->field_id))
                return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: field %s: bad "
                                      "field-id", f->name);
            f->has_field_id = true;
        }
        const json_t *jdef = json_object_get(fo, "default");
        if (jdef) {
            f->default_json = dump_json(c->a, jdef);
            floe_avro_value *dv = floe_arena_alloc(c->a, sizeof *dv);
            if (!f->default_json || !dv)
                return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
            /* a default that does not fit the type is not one (as other readers do) */
            int fit = json_to_value(c->a, f->type, jdef, dv, 0);
            if (fit < 0)
                return floe_error_set(c->err, fit, "avro schema: out of memory");
            if (fit == 0) {
                f->default_value = dv;
                f->has_default = true;
            }
        }
        FLOE_FORWARD_IF_ERROR(collect_props(c, fo, field_known, &f->props_json));
    }
    node->fields = fields;
    node->n_fields = n;
    return 0;
}

static int parse_object(parse_ctx *c, const json_t *j, const char *ns, int depth,
                        const floe_avro_node **out) {
    static const char *const known_common[] = {
        "type",     "logicalType", "doc",     "name",       "namespace", "aliases",
        "fields",   "symbols",     "default", "items",      "values",    "size",
        "precision", "scale",      "element-id", "key-id",  "value-id",  NULL};
    const json_t *jt = json_object_get(j, "type");
    if (!jt)
        return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: object without \"type\"");
    if (!json_is_string(jt)) /* {"type": {...}} or {"type": [...]}: the inner schema */
        return parse_node(c, jt, ns, depth + 1, out);
    const char *ts = json_string_value(jt);
    floe_avro_node *n = floe_arena_alloc(c->a, sizeof *n);
    if (!n)
        return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    n->enum_default = -1;
    n->element_id = n->key_id = n->value_id = -1;

    floe_avro_type prim;
    if (primitive_from_name(ts, &prim)) {
        n->type = prim;
    } else if (strcmp(ts, "record") == 0 || strcmp(ts, "error") == 0) {
        n->type = FLOE_AVRO_RECORD;
    } else if (strcmp(ts, "enum") == 0) {
        n->type = FLOE_AVRO_ENUM;
    } else if (strcmp(ts, "array") == 0) {
        n->type = FLOE_AVRO_ARRAY;
    } else if (strcmp(ts, "map") == 0) {
        n->type = FLOE_AVRO_MAP;
    } else if (strcmp(ts, "fixed") == 0) {
        n->type = FLOE_AVRO_FIXED;
    } else {
        /* {"type": "SomeNamedType"} */
        const floe_avro_node *ref = name_lookup(c, ns, ts);
        if (!ref)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: unknown type \"%.200s\"",
                                  ts);
        *out = ref;
        return 0;
    }

    const json_t *jd = json_object_get(j, "doc");
    if (json_is_string(jd) && !(n->doc = floe_arena_strdup(c->a, json_string_value(jd))))
        return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    const json_t *jl = json_object_get(j, "logicalType");
    if (json_is_string(jl)) {
        if (!(n->logical_type = floe_arena_strdup(c->a, json_string_value(jl))))
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        if (strcmp(n->logical_type, "decimal") == 0) {
            const json_t *jp = json_object_get(j, "precision"), *js = json_object_get(j, "scale");
            n->precision = json_is_integer(jp) ? (int32_t)json_integer_value(jp) : 0;
            n->scale = json_is_integer(js) ? (int32_t)json_integer_value(js) : 0;
        }
    }

    const char *inner_ns = ns;
    if (n->type == FLOE_AVRO_RECORD || n->type == FLOE_AVRO_ENUM || n->type == FLOE_AVRO_FIXED) {
        const json_t *jn = json_object_get(j, "name");
        if (!json_is_string(jn))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: %s without a name", ts);
        const json_t *jns = json_object_get(j, "namespace");
        const char *own_ns = json_is_string(jns) ? json_string_value(jns) : ns;
        char *full = make_fullname(c, json_string_value(jn), own_ns);
        if (!full)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        n->name = full;
        inner_ns = namespace_of(c, full);
        if (!inner_ns)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        floe_avro_type dummy;
        if (primitive_from_name(full, &dummy))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: %s may not be "
                                  "redefined", full);
        FLOE_FORWARD_IF_ERROR(name_register(c, full, n));
        const char *const *aliases;
        FLOE_FORWARD_IF_ERROR(parse_aliases(c, json_object_get(j, "aliases"), &aliases,
                                            &n->n_aliases));
        n->aliases = aliases;
    }

    switch (n->type) {
    case FLOE_AVRO_RECORD: {
        int rc = parse_fields(c, n, json_object_get(j, "fields"), inner_ns, depth);
        if (rc < 0)
            return rc;
        break;
    }
    case FLOE_AVRO_ENUM: {
        const json_t *js = json_object_get(j, "symbols");
        if (!json_is_array(js))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: enum %s without "
                                  "symbols", n->name);
        size_t k = json_array_size(js);
        const char **syms = k ? floe_arena_alloc(c->a, k * sizeof *syms) : NULL;
        if (k && !syms)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        for (size_t i = 0; i < k; i++) {
            const json_t *s = json_array_get(js, i);
            if (!json_is_string(s))
                return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: enum %s: symbol "
                                      "is not a string", n->name);
            if (!(syms[i] = floe_arena_strdup(c->a, json_string_value(s))))
                return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
            for (size_t m = 0; m < i; m++)
                if (strcmp(syms[m], syms[i]) == 0)
                    return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: enum %s: "
                                          "duplicate symbol %s", n->name, syms[i]);
        }
        n->symbols = syms;
        n->n_symbols = k;
        const json_t *jdef = json_object_get(j, "default");
        if (json_is_string(jdef))
            for (size_t i = 0; i < k; i++)
                if (strcmp(syms[i], json_string_value(jdef)) == 0)
                    n->enum_default = (int32_t)i;
        break;
    }
    case FLOE_AVRO_ARRAY: {
        const json_t *ji = json_object_get(j, "items");
        if (!ji)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: array without items");
        FLOE_FORWARD_IF_ERROR(parse_node(c, ji, inner_ns, depth + 1, &n->items));
        const json_t *jid = json_object_get(j, "element-id");
        if (jid && !json_get_id(jid, &n->element_id))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: bad element-id");
        break;
    }
    case FLOE_AVRO_MAP: {
        const json_t *jv = json_object_get(j, "values");
        if (!jv)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: map without values");
        FLOE_FORWARD_IF_ERROR(parse_node(c, jv, inner_ns, depth + 1, &n->items));
        const json_t *jk = json_object_get(j, "key-id"), *jvi = json_object_get(j, "value-id");
        if ((jk && !json_get_id(jk, &n->key_id)) || (jvi && !json_get_id(jvi, &n->value_id)))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: bad key-id/value-id");
        break;
    }
    case FLOE_AVRO_FIXED: {
        const json_t *js = json_object_get(j, "size");
        /* A fixed wider than 16 MiB has no use in metadata and would let a 4-byte schema
         * ask for huge allocations per value. */
        if (!json_is_integer(js) || json_integer_value(js) < 0 ||
            json_integer_value(js) > (16 << 20))
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: fixed %s: bad size",
                                  n->name);
        n->size = (int32_t)json_integer_value(js);
        break;
    }
    default:
        break;
    }
    FLOE_FORWARD_IF_ERROR(collect_props(c, j, known_common, &n->props_json));
    *out = n;
    return 0;
}

static int parse_node(parse_ctx *c, const json_t *j, const char *ns, int depth,
                      const floe_avro_node **out) {
    if (depth > FLOE_AVRO_MAX_DEPTH)
        return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: nested deeper than %d",
                              FLOE_AVRO_MAX_DEPTH);
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        floe_avro_type t;
        if (primitive_from_name(s, &t)) {
            floe_avro_node *n = floe_arena_alloc(c->a, sizeof *n);
            if (!n)
                return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
            n->type = t;
            n->enum_default = -1;
            n->element_id = n->key_id = n->value_id = -1;
            *out = n;
            return 0;
        }
        const floe_avro_node *ref = name_lookup(c, ns, s);
        if (!ref)
            return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: unknown type \"%.200s\"",
                                  s);
        *out = ref;
        return 0;
    }
    if (json_is_array(j)) {
        size_t k = json_array_size(j);
        floe_avro_node *n = floe_arena_alloc(c->a, sizeof *n);
        const floe_avro_node **br = k ? floe_arena_alloc(c->a, k * sizeof *br) : NULL;
        if (!n || (k && !br))
            return floe_error_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        n->type = FLOE_AVRO_UNION;
        n->enum_default = -1;
        n->element_id = n->key_id = n->value_id = -1;
        for (size_t i = 0; i < k; i++) {
            FLOE_FORWARD_IF_ERROR(parse_node(c, json_array_get(j, i), ns, depth + 1, &br[i]));
            if (br[i]->type == FLOE_AVRO_UNION)
                return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: union directly "
                                      "inside a union");
            for (size_t m = 0; m < i; m++) {
                bool named = br[i]->type == FLOE_AVRO_RECORD || br[i]->type == FLOE_AVRO_ENUM ||
                             br[i]->type == FLOE_AVRO_FIXED;
                if (br[m]->type == br[i]->type &&
                    (!named || strcmp(br[m]->name, br[i]->name) == 0))
                    return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: union has two "
                                          "branches of type %s",
                                          named ? br[i]->name : floe_avro_type_name(br[i]->type));
            }
        }
        n->branches = br;
        n->n_branches = k;
        *out = n;
        return 0;
    }
    if (json_is_object(j))
        return parse_object(c, j, ns, depth, out);
    return floe_error_set(c->err, FLOE_ESCHEMA, "avro schema: a schema must be a string, "
                          "an object or an array");
}

int floe_avro_schema_parse(const char *json, size_t len, floe_avro_schema **out,
                           floe_error *err) {
    int rc = 0;
    json_t *root = NULL;
    parse_ctx c = {0};
    floe_avro_schema *s = floe_calloc(1, sizeof *s);
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "avro schema: out of memory");
    floe_arena_init(&s->arena, 8192);
    json_error_t jerr;
    root = json_loadb(json, len, JSON_DECODE_ANY, &jerr);
    if (!root && json_error_code(&jerr) == json_error_out_of_memory)
        FLOE_FAIL(err, FLOE_ENOMEM, "avro schema: out of memory");
    if (!root)
        FLOE_FAIL(err, FLOE_ECORRUPT, "avro schema: bad JSON at line %d column %d: %s",
                  jerr.line, jerr.column, jerr.text);
    c.a = &s->arena;
    c.err = err;
    FLOE_CHECK(parse_node(&c, root, "", 0, &s->root));
done:
    json_decref(root);
    floe_free(c.names);
    if (rc < 0) {
        floe_avro_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void floe_avro_schema_free(floe_avro_schema *s) {
    if (!s)
        return;
    floe_arena_reset(&s->arena);
    floe_free(s);
}

const floe_avro_node *floe_avro_schema_root(const floe_avro_schema *s) {
    return s->root;
}

/* ---- serializing --------------------------------------------------------------------- */

typedef struct emit_ctx {
    const floe_avro_node **seen;
    size_t n_seen, cap_seen;
    bool oom;
} emit_ctx;

static json_t *emit_node(emit_ctx *e, const floe_avro_node *n, int depth);

static void merge_props(emit_ctx *e, json_t *obj, const char *props) {
    if (!props)
        return;
    json_t *p = json_loads(props, 0, NULL);
    if (!p) {
        e->oom = true;
        return;
    }
    const char *key;
    json_t *val;
    json_object_foreach(p, key, val) {
        if (!json_object_get(obj, key) && json_object_set(obj, key, val) < 0)
            e->oom = true;
    }
    json_decref(p);
}

static json_t *emit_aliases(const char *const *a, size_t n) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, json_string(a[i]));
    return arr;
}

static void set_new(emit_ctx *e, json_t *obj, const char *key, json_t *val) {
    if (!val || json_object_set_new(obj, key, val) < 0)
        e->oom = true;
}

static json_t *emit_node(emit_ctx *e, const floe_avro_node *n, int depth) {
    if (depth > FLOE_AVRO_MAX_DEPTH * 2) {
        e->oom = true;
        return NULL;
    }
    bool named = n->type == FLOE_AVRO_RECORD || n->type == FLOE_AVRO_ENUM ||
                 n->type == FLOE_AVRO_FIXED;
    if (named) {
        for (size_t i = 0; i < e->n_seen; i++)
            if (e->seen[i] == n)
                return json_string(n->name);
        if (e->n_seen == e->cap_seen) {
            size_t cap = e->cap_seen ? e->cap_seen * 2 : 16;
            const floe_avro_node **s = floe_realloc(e->seen, cap * sizeof *s);
            if (!s) {
                e->oom = true;
                return NULL;
            }
            e->seen = s;
            e->cap_seen = cap;
        }
        e->seen[e->n_seen++] = n;
    }
    if (n->type == FLOE_AVRO_UNION) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n->n_branches; i++) {
            json_t *b = emit_node(e, n->branches[i], depth + 1);
            if (!b || json_array_append_new(arr, b) < 0)
                e->oom = true;
        }
        return arr;
    }
    if (n->type <= FLOE_AVRO_STRING && !n->logical_type && !n->props_json && !n->doc)
        return json_string(floe_avro_type_name(n->type));

    json_t *o = json_object();
    if (!o)
        return NULL;
    set_new(e, o, "type", json_string(floe_avro_type_name(n->type)));
    if (named)
        set_new(e, o, "name", json_string(n->name));
    if (n->doc)
        set_new(e, o, "doc", json_string(n->doc));
    if (n->n_aliases)
        set_new(e, o, "aliases", emit_aliases(n->aliases, n->n_aliases));
    if (n->logical_type) {
        set_new(e, o, "logicalType", json_string(n->logical_type));
        if (strcmp(n->logical_type, "decimal") == 0) {
            set_new(e, o, "precision", json_integer(n->precision));
            set_new(e, o, "scale", json_integer(n->scale));
        }
    }
    switch (n->type) {
    case FLOE_AVRO_RECORD: {
        json_t *fa = json_array();
        for (size_t i = 0; fa && i < n->n_fields; i++) {
            const floe_avro_field *f = &n->fields[i];
            json_t *fo = json_object();
            if (!fo) {
                e->oom = true;
                break;
            }
            set_new(e, fo, "name", json_string(f->name));
            set_new(e, fo, "type", emit_node(e, f->type, depth + 1));
            if (f->doc)
                set_new(e, fo, "doc", json_string(f->doc));
            if (f->n_aliases)
                set_new(e, fo, "aliases", emit_aliases(f->aliases, f->n_aliases));
            if (f->has_field_id)
                set_new(e, fo, "field-id", json_integer(f->field_id));
            if (f->default_json)
                set_new(e, fo, "default", json_loads(f->default_json, JSON_DECODE_ANY, NULL));
            merge_props(e, fo, f->props_json);
            if (json_array_append_new(fa, fo) < 0)
                e->oom = true;
        }
        set_new(e, o, "fields", fa);
        break;
    }
    case FLOE_AVRO_ENUM: {
        json_t *sa = json_array();
        for (size_t i = 0; sa && i < n->n_symbols; i++)
            json_array_append_new(sa, json_string(n->symbols[i]));
        set_new(e, o, "symbols", sa);
        if (n->enum_default >= 0)
            set_new(e, o, "default", json_string(n->symbols[n->enum_default]));
        break;
    }
    case FLOE_AVRO_ARRAY:
        set_new(e, o, "items", emit_node(e, n->items, depth + 1));
        if (n->element_id >= 0)
            set_new(e, o, "element-id", json_integer(n->element_id));
        break;
    case FLOE_AVRO_MAP:
        set_new(e, o, "values", emit_node(e, n->items, depth + 1));
        if (n->key_id >= 0)
            set_new(e, o, "key-id", json_integer(n->key_id));
        if (n->value_id >= 0)
            set_new(e, o, "value-id", json_integer(n->value_id));
        break;
    case FLOE_AVRO_FIXED:
        set_new(e, o, "size", json_integer(n->size));
        break;
    default:
        break;
    }
    merge_props(e, o, n->props_json);
    return o;
}

int floe_avro_schema_to_json(const floe_avro_schema *s, floe_buf *out, floe_error *err) {
    emit_ctx e = {0};
    int rc = 0;
    json_t *j = emit_node(&e, s->root, 0);
    if (!j || e.oom)
        FLOE_FAIL(err, FLOE_ENOMEM, "avro schema: out of memory while serializing");
    size_t n = json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
    if (n == 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "avro schema: cannot serialize");
    FLOE_CHECK(floe_buf_reserve(out, n + 1) < 0
                   ? floe_error_set(err, FLOE_ENOMEM, "avro schema: out of memory")
                   : 0);
    json_dumpb(j, (char *)out->data + out->len, n, JSON_COMPACT | JSON_ENCODE_ANY);
    out->len += n;
done:
    json_decref(j);
    floe_free(e.seen);
    return rc;
}

/* ---- queries ------------------------------------------------------------------------- */

const floe_avro_field *floe_avro_node_field(const floe_avro_node *rec, const char *name,
                                            size_t *index_out) {
    if (!rec || rec->type != FLOE_AVRO_RECORD)
        return NULL;
    for (size_t i = 0; i < rec->n_fields; i++)
        if (strcmp(rec->fields[i].name, name) == 0) {
            if (index_out)
                *index_out = i;
            return &rec->fields[i];
        }
    return NULL;
}

const floe_avro_field *floe_avro_node_field_by_id(const floe_avro_node *rec, int32_t id,
                                                  size_t *index_out) {
    if (!rec || rec->type != FLOE_AVRO_RECORD)
        return NULL;
    for (size_t i = 0; i < rec->n_fields; i++)
        if (rec->fields[i].has_field_id && rec->fields[i].field_id == id) {
            if (index_out)
                *index_out = i;
            return &rec->fields[i];
        }
    return NULL;
}

const floe_avro_node *floe_avro_node_nullable(const floe_avro_node *n) {
    if (!n || n->type != FLOE_AVRO_UNION || n->n_branches != 2)
        return NULL;
    if (n->branches[0]->type == FLOE_AVRO_NULL)
        return n->branches[1];
    if (n->branches[1]->type == FLOE_AVRO_NULL)
        return n->branches[0];
    return NULL;
}

/* budget: shared named types can make a small schema a huge tree (X has two fields of
 * type Y, Y two of type Z, ...); past the budget the answer is 0, which is always safe. */
static size_t min_size_rec(const floe_avro_node *n, int depth, size_t *budget) {
    if (depth > FLOE_AVRO_MAX_DEPTH || *budget == 0)
        return 0;
    (*budget)--;
    switch (n->type) {
    case FLOE_AVRO_NULL:
        return 0;
    case FLOE_AVRO_BOOLEAN:
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG:
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_ENUM:
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP:
        return 1;
    case FLOE_AVRO_FLOAT:
        return 4;
    case FLOE_AVRO_DOUBLE:
        return 8;
    case FLOE_AVRO_FIXED:
        return (size_t)n->size;
    case FLOE_AVRO_UNION:
        return 1;
    case FLOE_AVRO_RECORD: {
        size_t s = 0;
        for (size_t i = 0; i < n->n_fields; i++) {
            size_t f = min_size_rec(n->fields[i].type, depth + 1, budget);
            s = (s + f < s) ? SIZE_MAX : s + f;
        }
        return s;
    }
    }
    return 0;
}

size_t floe_avro_node_min_size(const floe_avro_node *n) {
    size_t budget = 100000;
    size_t s = min_size_rec(n, 0, &budget);
    return budget == 0 ? 0 : s;
}
