/*
 * defaults.c - field default values (initial-default, write-default): parsed and checked
 * from their JSON single-value form, rendered as the text the row printers print.
 *
 * Spec: format/spec.md "Default values" (a struct's default is null or an object whose
 * missing fields take their own defaults, so `{}` means "each field's default"; a field
 * without a default defaults to null), Appendix C/D "JSON single-value serialization"
 * (primitives as in floe_value_from_json; struct: object keyed by field id; list: array;
 * map: {"keys": [...], "values": [...]}).
 *
 * Rendered text follows floe's Parquet row printers (floe/parquet_reader.h): canonical
 * primitives (scan_internal.h), structs as objects by field name in schema order, lists
 * as arrays, maps in NDJSON as an object when the key is a string and as an array of
 * {"key","value"} entries otherwise, in canonical form as [key, value] pairs sorted by
 * the key's text.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "floe/defaults.h"
#include "scan_internal.h"

#define DEFAULT_MAX_DEPTH 64

typedef struct render_ctx {
    floe_pq_row_format fmt;
    bool initial;       /* initial-default (else write-default) for fields left out */
    floe_arena arena;   /* decoded bytes of primitive values */
    floe_error *err;
    const char *what;   /* "initial-default" / "write-default" */
} render_ctx;

static int render_default(render_ctx *c, const floe_field *f, floe_buf *out, int depth);

static int fail_at(render_ctx *c, const floe_field *f, const char *msg) {
    char path[256];
    return floe_error_set(c->err, FLOE_EINVALID, "field %s: %s: %s",
                          floe_field_path(f, path, sizeof path), c->what, msg);
}

static bool is_map_object_key(const floe_field *map) {
    return map->children[0].type == FLOE_TYPE_STRING;
}

typedef struct pair_text {
    size_t k0, k1, v0, v1;
} pair_text;

static const uint8_t *g_pairs_base;
static int pair_cmp(const void *x, const void *y) {
    const pair_text *p = x, *q = y;
    size_t n1 = p->k1 - p->k0, n2 = q->k1 - q->k0;
    int r = memcmp(g_pairs_base + p->k0, g_pairs_base + q->k0, n1 < n2 ? n1 : n2);
    return r ? r : (n1 > n2) - (n1 < n2);
}

/* JSON single value v of field f as row text. */
static int render_json(render_ctx *c, const floe_field *f, const json_t *v, floe_buf *out,
                       int depth) {
    if (depth > DEFAULT_MAX_DEPTH)
        return fail_at(c, f, "nested too deeply");
    if (json_is_null(v))
        return floe_buf_append(out, "null", 4);
    /* format/spec.md "Default values": unknown, geometry and geography default to null */
    if (f->type == FLOE_TYPE_UNKNOWN || f->geo)
        return fail_at(c, f, "a column of type unknown, geometry or geography must default "
                             "to null");
    switch (f->type) {
    case FLOE_TYPE_STRUCT: {
        if (!json_is_object(v))
            return fail_at(c, f, "a struct value must be a JSON object keyed by field id");
        /* every key names a field of the struct */
        const char *key;
        json_t *x;
        json_object_foreach((json_t *)v, key, x) {
            bool known = false;
            char idtxt[16];
            for (size_t i = 0; i < f->nchildren && !known; i++) {
                snprintf(idtxt, sizeof idtxt, "%d", (int)f->children[i].id);
                known = !strcmp(idtxt, key);
            }
            if (!known)
                return fail_at(c, f, "struct value names a field id that is not in the struct");
        }
        int rc = floe_buf_append_byte(out, '{');
        for (size_t i = 0; i < f->nchildren && rc == 0; i++) {
            const floe_field *ch = &f->children[i];
            char idtxt[16];
            snprintf(idtxt, sizeof idtxt, "%d", (int)ch->id);
            if (i)
                rc = floe_buf_append_byte(out, ',');
            if (rc == 0)
                rc = floe_json_append_string(out, (const uint8_t *)ch->name, strlen(ch->name));
            if (rc == 0)
                rc = floe_buf_append_byte(out, ':');
            if (rc < 0)
                break;
            json_t *cv = json_object_get(v, idtxt);
            FLOE_FORWARD_IF_ERROR(cv ? render_json(c, ch, cv, out, depth + 1)
                                     : render_default(c, ch, out, depth + 1));
        }
        if (rc == 0)
            rc = floe_buf_append_byte(out, '}');
        return rc < 0 ? floe_error_set(c->err, FLOE_ENOMEM, "out of memory") : 0;
    }
    case FLOE_TYPE_LIST: {
        if (!json_is_array(v))
            return fail_at(c, f, "a list value must be a JSON array");
        const floe_field *el = &f->children[0];
        int rc = floe_buf_append_byte(out, '[');
        for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
            json_t *x = json_array_get(v, i);
            if (json_is_null(x) && el->required)
                return fail_at(c, f, "null element in a list of required elements");
            if (i && (rc = floe_buf_append_byte(out, ',')) < 0)
                break;
            FLOE_FORWARD_IF_ERROR(render_json(c, el, x, out, depth + 1));
        }
        if (rc == 0)
            rc = floe_buf_append_byte(out, ']');
        return rc < 0 ? floe_error_set(c->err, FLOE_ENOMEM, "out of memory") : 0;
    }
    case FLOE_TYPE_MAP: {
        json_t *keys = json_is_object(v) ? json_object_get(v, "keys") : NULL;
        json_t *vals = json_is_object(v) ? json_object_get(v, "values") : NULL;
        if (!json_is_array(keys) || !json_is_array(vals) || json_object_size(v) != 2 ||
            json_array_size(keys) != json_array_size(vals))
            return fail_at(c, f, "a map value must be {\"keys\": [...], \"values\": [...]} "
                                 "with as many values as keys");
        const floe_field *kf = &f->children[0], *vf = &f->children[1];
        size_t n = json_array_size(keys);
        floe_buf tmp;
        floe_buf_init(&tmp, 0);
        pair_text *pairs = floe_calloc(n ? n : 1, sizeof *pairs);
        int rc = pairs ? 0 : FLOE_ENOMEM;
        for (size_t i = 0; i < n && rc == 0; i++) {
            json_t *k = json_array_get(keys, i), *x = json_array_get(vals, i);
            if (json_is_null(k)) {
                rc = fail_at(c, f, "null map key");
                break;
            }
            if (json_is_null(x) && vf->required) {
                rc = fail_at(c, f, "null value in a map of required values");
                break;
            }
            pairs[i].k0 = tmp.len;
            if ((rc = render_json(c, kf, k, &tmp, depth + 1)) < 0)
                break;
            pairs[i].k1 = pairs[i].v0 = tmp.len;
            if ((rc = render_json(c, vf, x, &tmp, depth + 1)) < 0)
                break;
            pairs[i].v1 = tmp.len;
            for (size_t j = 0; j < i; j++)
                if (pairs[j].k1 - pairs[j].k0 == pairs[i].k1 - pairs[i].k0 &&
                    !memcmp(tmp.data + pairs[j].k0, tmp.data + pairs[i].k0,
                            pairs[i].k1 - pairs[i].k0)) {
                    rc = fail_at(c, f, "a map key appears twice");
                    break;
                }
        }
        bool canonical = c->fmt == FLOE_PQ_ROWS_CANONICAL;
        bool obj = !canonical && is_map_object_key(f);
        if (rc == 0 && canonical && n > 1) {
            g_pairs_base = tmp.data;
            qsort(pairs, n, sizeof *pairs, pair_cmp);
        }
        if (rc == 0)
            rc = floe_buf_append_byte(out, obj ? '{' : '[');
        for (size_t i = 0; i < n && rc == 0; i++) {
            const pair_text *p = &pairs[i];
            if (i)
                rc |= floe_buf_append_byte(out, ',');
            if (obj) {
                rc |= floe_buf_append(out, tmp.data + p->k0, p->k1 - p->k0);
                rc |= floe_buf_append_byte(out, ':');
            } else {
                rc |= floe_buf_append(out, canonical ? "[" : "{\"key\":", canonical ? 1 : 7);
                rc |= floe_buf_append(out, tmp.data + p->k0, p->k1 - p->k0);
                rc |= floe_buf_append(out, canonical ? "," : ",\"value\":", canonical ? 1 : 9);
            }
            rc |= floe_buf_append(out, tmp.data + p->v0, p->v1 - p->v0);
            if (!obj)
                rc |= floe_buf_append_byte(out, canonical ? ']' : '}');
        }
        if (rc == 0)
            rc = floe_buf_append_byte(out, obj ? '}' : ']');
        floe_free(pairs);
        floe_buf_free(&tmp);
        if (rc < 0 && c->err && !c->err->code)
            floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        return rc < 0 ? rc : 0;
    }
    default: {
        floe_value val;
        floe_error e;
        floe_error_clear(&e);
        if (floe_value_from_jsont(f, v, &c->arena, &val, &e) < 0)
            return fail_at(c, f, e.msg);
        return floe_sv_to_canonical(&val, out) < 0
                   ? floe_error_set(c->err, FLOE_ENOMEM, "out of memory") : 0;
    }
    }
}

/* The default of field f (c->initial selects which) as row text: null when it has none. */
static int render_default(render_ctx *c, const floe_field *f, floe_buf *out, int depth) {
    const char *text = c->initial ? f->initial_default_json : f->write_default_json;
    if (!text)
        return floe_buf_append(out, "null", 4) < 0
                   ? floe_error_set(c->err, FLOE_ENOMEM, "out of memory") : 0;
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!v)
        return fail_at(c, f, "not JSON");
    int rc = render_json(c, f, v, out, depth);
    json_decref(v);
    return rc;
}

int floe_default_render(const floe_field *f, bool initial, floe_pq_row_format fmt,
                        floe_buf *out, floe_error *err) {
    render_ctx c = {.fmt = fmt == FLOE_PQ_ROWS_CANONICAL ? fmt : FLOE_PQ_ROWS_NDJSON,
                    .initial = initial, .err = err,
                    .what = initial ? "initial-default" : "write-default"};
    floe_arena_init(&c.arena, 1024);
    int rc = render_default(&c, f, out, 0);
    floe_arena_reset(&c.arena);
    return rc;
}

static int check_field(const floe_field *f, floe_buf *scratch, floe_error *err, int depth) {
    if (depth > DEFAULT_MAX_DEPTH)
        return 0;
    for (int initial = 0; initial < 2; initial++) {
        floe_buf_reset(scratch);
        FLOE_FORWARD_IF_ERROR(floe_default_render(f, initial, FLOE_PQ_ROWS_NDJSON, scratch, err));
    }
    for (size_t i = 0; i < f->nchildren; i++)
        FLOE_FORWARD_IF_ERROR(check_field(&f->children[i], scratch, err, depth + 1));
    return 0;
}

int floe_schema_check_defaults(const floe_schema *s, floe_error *err) {
    floe_buf scratch;
    floe_buf_init(&scratch, 0);
    int rc = 0;
    for (size_t i = 0; i < s->root.nchildren && rc == 0; i++)
        rc = check_field(&s->root.children[i], &scratch, err, 0);
    floe_buf_free(&scratch);
    if (rc < 0)
        floe_error_prefix(err, "schema %d: ", (int)s->schema_id);
    return rc;
}

int floe_default_at(const floe_field *from, const floe_field *leaf, bool initial,
                    floe_arena *arena, floe_value *value, int16_t *def, floe_error *err) {
    const floe_field *chain[DEFAULT_MAX_DEPTH + 1];
    size_t n = 0;
    char path[256];
    for (const floe_field *q = leaf; q; q = q->parent) {
        if (n == DEFAULT_MAX_DEPTH)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: nested too deeply",
                                  floe_field_path(leaf, path, sizeof path));
        chain[n++] = q;
        if (q == from)
            break;
    }
    if (chain[n - 1] != from)
        return floe_error_set(err, FLOE_EINVALID, "column %s is not below %s",
                              floe_field_path(leaf, path, sizeof path), from->name);
    const char *what = initial ? "initial-default" : "write-default";
    json_t *v = NULL; /* the value of chain[i] (borrowed from root), NULL: its own default */
    json_t *root = NULL;
    int rc = 0;
    for (size_t i = n; i-- > 0;) {
        const floe_field *f = chain[i];
        if (!v) {
            json_decref(root);
            root = NULL;
            const char *text = initial ? f->initial_default_json : f->write_default_json;
            json_error_t je;
            if (text && !(root = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je))) {
                rc = floe_error_set(err, FLOE_EINVALID, "field %s: %s is not JSON",
                                    floe_field_path(f, path, sizeof path), what);
                goto done;
            }
            v = root ? root : json_null();
        }
        if (json_is_null(v)) {
            if (f->required) {
                rc = floe_error_set(err, FLOE_EUNSUPPORTED,
                                    "required field %s has no %s for rows that lack it",
                                    floe_field_path(f, path, sizeof path), what);
                goto done;
            }
            *value = floe_value_null(leaf->type);
            *def = (int16_t)(f->def_level - 1);
            goto done;
        }
        if (f->type == FLOE_TYPE_LIST || f->type == FLOE_TYPE_MAP) {
            bool empty = f->type == FLOE_TYPE_LIST
                             ? json_is_array(v) && json_array_size(v) == 0
                             : json_is_object(v) && json_array_size(json_object_get(v, "keys")) == 0 &&
                                   json_array_size(json_object_get(v, "values")) == 0;
            if (!empty) {
                rc = floe_error_set(err, FLOE_EUNSUPPORTED,
                                    "field %s: a non-empty %s %s cannot fill rows of a file "
                                    "that lacks the field", floe_field_path(f, path, sizeof path),
                                    floe_type_name(f->type), what);
                goto done;
            }
            *value = floe_value_null(leaf->type);
            *def = f->def_level;
            goto done;
        }
        if (i == 0) {
            floe_error e;
            floe_error_clear(&e);
            if (floe_value_from_jsont(f, v, arena, value, &e) < 0) {
                rc = floe_error_set(err, FLOE_EINVALID, "field %s: %s: %s",
                                    floe_field_path(f, path, sizeof path), what, e.msg);
                goto done;
            }
            *def = f->def_level;
            goto done;
        }
        /* a struct: the next field's value from the object, else its own default */
        if (!json_is_object(v)) {
            rc = floe_error_set(err, FLOE_EINVALID, "field %s: %s is not a struct value",
                                floe_field_path(f, path, sizeof path), what);
            goto done;
        }
        char idtxt[16];
        snprintf(idtxt, sizeof idtxt, "%d", (int)chain[i - 1]->id);
        v = json_object_get(v, idtxt);
    }
done:
    json_decref(root);
    return rc;
}
