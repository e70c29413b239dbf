/*
 * sort_order.c - Iceberg sort orders: JSON and the user form "ts DESC NULLS LAST, id".
 *
 * Spec: format/spec.md "Sorting" (order id 0 is the unsorted order; directions asc/desc,
 * null orders nulls-first/nulls-last; fields use the partition transforms) and
 * "Appendix C: JSON serialization / Sort Orders". When the user form names no null order
 * floe uses the reference default: nulls first when ascending, nulls last when descending.
 */
#include "floe/partition.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/partition_internal.h"
#include "iceberg/value_text.h"

#define SORT_MAX_FIELDS 1024
#define SORT_MAX_SOURCE_IDS 64

static floe_sort_order *order_new(void) {
    floe_sort_order *o = floe_calloc(1, sizeof *o);
    if (o)
        floe_arena_init(&o->arena, 2048);
    return o;
}

void floe_sort_order_free(floe_sort_order *o) {
    if (!o)
        return;
    floe_arena_reset(&o->arena);
    floe_free(o);
}

static int check_source(const floe_schema *schema, const floe_sort_field *f, size_t i,
                        floe_error *err) {
    bool coll = false;
    char cname[512];
    const floe_field *src = floe_px_find_id(schema, f->source_id, &coll, cname, sizeof cname);
    FLOE_RETURN_ERROR_IF(!src, err, FLOE_ENOTFOUND,
                         "sort order: field %zu: source id %d is not in the schema", i,
                         (int)f->source_id);
    FLOE_RETURN_ERROR_IF(coll || src->type >= FLOE_TYPE_STRUCT, err, FLOE_EINVALID,
                         "sort order: field %zu: source \"%s\" is not a primitive outside "
                         "lists and maps", i, cname);
    char tname[32];
    FLOE_RETURN_ERROR_IF(!floe_transform_accepts(f->transform, src->type), err, FLOE_EINVALID,
                         "sort order: field %zu: transform %s does not accept %s (%s)", i,
                         floe_transform_name(f->transform, tname, sizeof tname), cname,
                         floe_xf_type_name(src->type));
    return 0;
}

int floe_sort_order_parse_json(const char *json, size_t n, const floe_schema *schema,
                               floe_sort_order **out, floe_error *err) {
    json_error_t jerr;
    int rc = 0;
    floe_sort_order *o = NULL;
    json_t *root = json_loadb(json, n, 0, &jerr);
    if (!root)
        return floe_error_at(err, FLOE_ECORRUPT, jerr.position, "sort order JSON: %s",
                             jerr.text);
    if (!(o = order_new()))
        FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
    const json_t *id = json_object_get(root, "order-id");
    const json_t *fields = json_object_get(root, "fields");
    if (!json_is_object(root) || !json_is_integer(id) || json_integer_value(id) < 0 ||
        json_integer_value(id) > INT32_MAX)
        FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: missing or bad \"order-id\"");
    if (!json_is_array(fields))
        FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: \"fields\" must be a list");
    o->order_id = (int32_t)json_integer_value(id);
    size_t nf = json_array_size(fields);
    if (nf > SORT_MAX_FIELDS)
        FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: %zu fields (limit %d)", nf, SORT_MAX_FIELDS);
    if (o->order_id == 0 && nf > 0)
        FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: order id 0 is reserved for unsorted");
    o->fields = floe_arena_alloc(&o->arena, (nf ? nf : 1) * sizeof *o->fields);
    if (!o->fields)
        FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
    for (size_t i = 0; i < nf; i++) {
        const json_t *jf = json_array_get(fields, i);
        floe_sort_field *f = &o->fields[i];
        const json_t *xf = json_object_get(jf, "transform");
        const json_t *dir = json_object_get(jf, "direction");
        const json_t *no = json_object_get(jf, "null-order");
        const json_t *sid = json_object_get(jf, "source-id");
        const json_t *sids = json_object_get(jf, "source-ids");
        if (!json_is_string(xf) || !json_is_string(dir) || !json_is_string(no))
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "sort order: field %zu needs transform, direction and null-order", i);
        if (!(f->transform_text = floe_arena_strdup(&o->arena, json_string_value(xf))))
            FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
        floe_error xerr;
        floe_error_clear(&xerr);
        if (floe_transform_parse(f->transform_text, &f->transform, &xerr) < 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: %s", i, xerr.msg);
        if (!strcmp(json_string_value(dir), "asc"))
            f->direction = FLOE_SORT_ASC;
        else if (!strcmp(json_string_value(dir), "desc"))
            f->direction = FLOE_SORT_DESC;
        else
            FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: direction \"%s\"", i,
                      json_string_value(dir));
        if (!strcmp(json_string_value(no), "nulls-first"))
            f->null_order = FLOE_NULLS_FIRST;
        else if (!strcmp(json_string_value(no), "nulls-last"))
            f->null_order = FLOE_NULLS_LAST;
        else
            FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: null-order \"%s\"", i,
                      json_string_value(no));
        if (sid) {
            if (!json_is_integer(sid) || json_integer_value(sid) < INT32_MIN ||
                json_integer_value(sid) > INT32_MAX)
                FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: bad source-id", i);
            f->source_id = (int32_t)json_integer_value(sid);
        }
        if (sids) {
            size_t ni = json_is_array(sids) ? json_array_size(sids) : 0;
            if (ni == 0 || ni > SORT_MAX_SOURCE_IDS)
                FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: bad source-ids", i);
            int32_t *v = floe_arena_alloc(&o->arena, ni * sizeof *v);
            if (!v)
                FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
            for (size_t k = 0; k < ni; k++) {
                const json_t *e = json_array_get(sids, k);
                if (!json_is_integer(e) || json_integer_value(e) < INT32_MIN ||
                    json_integer_value(e) > INT32_MAX)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: bad source-ids", i);
                v[k] = (int32_t)json_integer_value(e);
            }
            if (!sid)
                f->source_id = v[0];
            if (ni > 1) {
                f->source_ids = v;
                f->nsource_ids = ni;
                f->transform.kind = FLOE_XF_UNKNOWN;
            }
        } else if (!sid) {
            FLOE_FAIL(err, FLOE_ECORRUPT, "sort order: field %zu: no source-id", i);
        }
        o->nfields = i + 1;
        if (schema && f->transform.kind != FLOE_XF_UNKNOWN)
            FLOE_CHECK(check_source(schema, f, i, err));
    }
    *out = o;
    o = NULL;
done:
    json_decref(root);
    floe_sort_order_free(o);
    return rc;
}

int floe_sort_order_parse(const floe_schema *schema, const char *text, int32_t order_id,
                          floe_sort_order **out, floe_error *err) {
    int rc = 0;
    floe_sort_order *o = order_new();
    FLOE_RETURN_ERROR_IF(!o, err, FLOE_ENOMEM, "sort order: out of memory");
    size_t cap = 8;
    o->fields = floe_arena_alloc(&o->arena, cap * sizeof *o->fields);
    if (!o->fields)
        FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
    floe_px_lexer lx;
    floe_px_init(&lx, text);
    while (lx.tok != FLOE_PX_END) {
        if (o->nfields > 0) {
            if (lx.tok != FLOE_PX_COMMA)
                FLOE_FAIL(err, FLOE_EINVALID, "sort order: expected ',' at offset %zu",
                          (size_t)(lx.text - text));
            floe_px_next(&lx);
        }
        if (o->nfields >= SORT_MAX_FIELDS)
            FLOE_FAIL(err, FLOE_ELIMIT, "sort order: more than %d fields", SORT_MAX_FIELDS);
        floe_px_term term;
        FLOE_CHECK(floe_px_parse_term(&lx, &term, err));
        const floe_field *src;
        FLOE_CHECK(floe_px_resolve(schema, &term, "sort field", &src, err));
        floe_sort_field f;
        memset(&f, 0, sizeof f);
        f.transform = term.transform;
        f.source_id = src->id;
        if (floe_px_is_kw(&lx, "desc")) {
            f.direction = FLOE_SORT_DESC;
            floe_px_next(&lx);
        } else if (floe_px_is_kw(&lx, "asc")) {
            floe_px_next(&lx);
        }
        f.null_order = f.direction == FLOE_SORT_DESC ? FLOE_NULLS_LAST : FLOE_NULLS_FIRST;
        if (floe_px_is_kw(&lx, "nulls")) {
            floe_px_next(&lx);
            if (floe_px_is_kw(&lx, "first"))
                f.null_order = FLOE_NULLS_FIRST;
            else if (floe_px_is_kw(&lx, "last"))
                f.null_order = FLOE_NULLS_LAST;
            else
                FLOE_FAIL(err, FLOE_EINVALID,
                          "sort order: expected FIRST or LAST after NULLS at offset %zu",
                          (size_t)(lx.text - text));
            floe_px_next(&lx);
        }
        char tname[32];
        f.transform_text =
            floe_arena_strdup(&o->arena, floe_transform_name(f.transform, tname, sizeof tname));
        if (!f.transform_text)
            FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
        if (o->nfields == cap) {
            floe_sort_field *nf = floe_arena_alloc(&o->arena, 2 * cap * sizeof *nf);
            if (!nf)
                FLOE_FAIL(err, FLOE_ENOMEM, "sort order: out of memory");
            memcpy(nf, o->fields, cap * sizeof *nf);
            o->fields = nf;
            cap *= 2;
        }
        o->fields[o->nfields++] = f;
    }
    /* order id 0 is reserved for the unsorted order */
    o->order_id = o->nfields == 0 ? 0 : (order_id > 0 ? order_id : 1);
    *out = o;
    o = NULL;
done:
    floe_sort_order_free(o);
    return rc;
}

char *floe_sort_order_to_json(const floe_sort_order *o) {
    json_t *root = json_object();
    json_t *arr = json_array();
    if (!root || !arr || json_object_set_new(root, "order-id", json_integer(o->order_id)) < 0 ||
        json_object_set(root, "fields", arr) < 0)
        goto fail;
    for (size_t i = 0; i < o->nfields; i++) {
        const floe_sort_field *f = &o->fields[i];
        char tname[32];
        const char *xf = f->transform.kind == FLOE_XF_UNKNOWN && f->transform_text
                             ? f->transform_text
                             : floe_transform_name(f->transform, tname, sizeof tname);
        json_t *jf = json_object();
        if (!jf || json_array_append_new(arr, jf) < 0 ||
            json_object_set_new(jf, "transform", json_string(xf)) < 0)
            goto fail;
        if (f->nsource_ids > 1) {
            json_t *ids = json_array();
            if (!ids || json_object_set_new(jf, "source-ids", ids) < 0)
                goto fail;
            for (size_t k = 0; k < f->nsource_ids; k++)
                if (json_array_append_new(ids, json_integer(f->source_ids[k])) < 0)
                    goto fail;
        } else if (json_object_set_new(jf, "source-id", json_integer(f->source_id)) < 0) {
            goto fail;
        }
        if (json_object_set_new(jf, "direction",
                                json_string(f->direction == FLOE_SORT_DESC ? "desc" : "asc")) <
                0 ||
            json_object_set_new(jf, "null-order",
                                json_string(f->null_order == FLOE_NULLS_LAST ? "nulls-last"
                                                                             : "nulls-first")) < 0)
            goto fail;
    }
    json_decref(arr);
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    char *copy = s ? floe_strdup(s) : NULL;
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree); /* whoever set jansson's allocator frees it */
    if (s)
        jfree ? jfree(s) : free(s);
    return copy;
fail:
    json_decref(arr);
    json_decref(root);
    return NULL;
}

char *floe_sort_order_to_string(const floe_sort_order *o, const floe_schema *schema) {
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->nfields; i++) {
        const floe_sort_field *f = &o->fields[i];
        char col[512];
        if (!schema || !floe_px_find_id(schema, f->source_id, NULL, col, sizeof col))
            snprintf(col, sizeof col, "%d", (int)f->source_id);
        if (i)
            rc = floe_buf_append(&b, ", ", 2);
        char tname[32];
        const char *fn = f->transform.kind == FLOE_XF_UNKNOWN && f->transform_text
                             ? f->transform_text
                             : floe_transform_name(f->transform, tname, sizeof tname);
        if (rc < 0)
            break;
        if (f->transform.kind == FLOE_XF_IDENTITY) {
            rc = floe_px_put_name(&b, col);
        } else {
            if (f->transform.kind == FLOE_XF_BUCKET || f->transform.kind == FLOE_XF_TRUNCATE)
                rc = floe_buf_printf(&b, "%s(%d, ",
                                     f->transform.kind == FLOE_XF_BUCKET ? "bucket" : "truncate",
                                     (int)f->transform.param);
            else
                rc = floe_buf_printf(&b, "%s(", fn);
            if (rc == 0 && (rc = floe_px_put_name(&b, col)) == 0)
                rc = floe_buf_append_byte(&b, ')');
        }
        if (rc == 0)
            rc = floe_buf_printf(&b, " %s %s", f->direction == FLOE_SORT_DESC ? "DESC" : "ASC",
                                 f->null_order == FLOE_NULLS_LAST ? "NULLS LAST" : "NULLS FIRST");
    }
    if (rc < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_detach(&b, NULL);
}
