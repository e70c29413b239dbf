/*
 * partition_spec.c - Iceberg partition specs: JSON and user-form parsing, binding to a
 * schema (the partition tuple type of manifests), JSON and text output, a row's
 * partition tuple and its Hive-style path.
 *
 * Spec: format/spec.md "Partitioning", "Partition Evolution" (field ids from 1000),
 * "Appendix C: JSON serialization / Partition Specs", "Manifests" (data_file 102
 * partition: a struct of the result types whose field ids are the partition field ids).
 * Default partition names and the path form follow Iceberg's reference implementation
 * (PartitionSpec.Builder and partitionToPath), so tables look the same to both.
 *
 * Ownership: a floe_partition_spec owns everything it points to through its arena, except
 * field->source, which borrows from the schema it was bound to.
 */
#include "floe/partition.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/partition_internal.h"
#include "iceberg/value_text.h"

#define SPEC_ARENA_BLOCK 4096
#define MAX_SOURCE_IDS 64

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF): a name that is
 * not could never be written into the metadata JSON. */
static bool utf8_valid(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (len == 0 || len > n - i)
            return false;
        uint32_t cp = len == 1 ? c : (uint32_t)(c & (0x7f >> len));
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}

static floe_partition_spec *spec_new(void) {
    floe_partition_spec *s = floe_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    floe_arena_init(&s->arena, SPEC_ARENA_BLOCK);
    s->last_field_id = FLOE_PARTITION_FIRST_FIELD_ID - 1;
    return s;
}

void floe_partition_spec_free(floe_partition_spec *s) {
    if (!s)
        return;
    floe_arena_reset(&s->arena);
    floe_schema_free(s->bound_schema);
    floe_free(s);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static int get_int32(const json_t *o, const char *key, int32_t *out) {
    const json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        return -1;
    *out = (int32_t)json_integer_value(v);
    return 1;
}

int floe_partition_spec_parse_json(const char *json, size_t n, const floe_schema *schema,
                                   floe_partition_spec **out, floe_error *err) {
    json_error_t jerr;
    floe_partition_spec *spec = NULL;
    int rc = 0;
    json_t *root = json_loadb(json, n, 0, &jerr);
    if (!root)
        return floe_error_at(err, FLOE_ECORRUPT, jerr.position, "partition spec JSON: %s",
                             jerr.text);
    if (!(spec = spec_new()))
        FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
    const json_t *fields = root;
    if (json_is_object(root)) {
        if (get_int32(root, "spec-id", &spec->spec_id) != 1)
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: missing or bad \"spec-id\"");
        fields = json_object_get(root, "fields");
    }
    if (!json_is_array(fields))
        FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: \"fields\" must be a list");
    size_t nf = json_array_size(fields);
    if (nf > FLOE_PARTITION_MAX_FIELDS)
        FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: %zu fields (limit %d)", nf,
                  FLOE_PARTITION_MAX_FIELDS);
    spec->fields = floe_arena_alloc(&spec->arena, (nf ? nf : 1) * sizeof *spec->fields);
    if (!spec->fields)
        FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
    for (size_t i = 0; i < nf; i++) {
        const json_t *jf = json_array_get(fields, i);
        floe_partition_field *f = &spec->fields[i];
        if (!json_is_object(jf))
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field %zu is not an object", i);
        const json_t *name = json_object_get(jf, "name");
        const json_t *xf = json_object_get(jf, "transform");
        if (!json_is_string(name) || json_string_length(name) == 0 ||
            strlen(json_string_value(name)) != json_string_length(name))
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field %zu: bad \"name\"", i);
        if (!json_is_string(xf))
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field %zu: bad \"transform\"", i);
        f->name = floe_arena_strdup(&spec->arena, json_string_value(name));
        f->transform_text = floe_arena_strdup(&spec->arena, json_string_value(xf));
        if (!f->name || !f->transform_text)
            FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
        floe_error xerr;
        floe_error_clear(&xerr);
        if (floe_transform_parse(f->transform_text, &f->transform, &xerr) < 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field \"%s\": %s", f->name,
                      xerr.msg);
        int has_src = get_int32(jf, "source-id", &f->source_id);
        const json_t *ids = json_object_get(jf, "source-ids");
        if (has_src < 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field \"%s\": bad \"source-id\"",
                      f->name);
        if (ids) {
            size_t ni = json_is_array(ids) ? json_array_size(ids) : 0;
            if (ni == 0 || ni > MAX_SOURCE_IDS)
                FLOE_FAIL(err, FLOE_ECORRUPT,
                          "partition spec: field \"%s\": bad \"source-ids\"", f->name);
            int32_t *v = floe_arena_alloc(&spec->arena, ni * sizeof *v);
            if (!v)
                FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
            for (size_t k = 0; k < ni; k++) {
                const json_t *e = json_array_get(ids, k);
                if (!json_is_integer(e) || json_integer_value(e) < INT32_MIN ||
                    json_integer_value(e) > INT32_MAX)
                    FLOE_FAIL(err, FLOE_ECORRUPT,
                              "partition spec: field \"%s\": bad \"source-ids\"", f->name);
                v[k] = (int32_t)json_integer_value(e);
            }
            if (!has_src)
                f->source_id = v[0];
            if (ni > 1) {
                /* no spec transform takes several sources yet: keep it, never apply it */
                f->source_ids = v;
                f->nsource_ids = ni;
                f->transform.kind = FLOE_XF_UNKNOWN;
            }
        } else if (!has_src) {
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field \"%s\": no \"source-id\"",
                      f->name);
        }
        int has_id = get_int32(jf, "field-id", &f->field_id);
        if (has_id < 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field \"%s\": bad \"field-id\"",
                      f->name);
        if (!has_id) /* v1: the reference assigned ids sequentially from 1000 */
            f->field_id = FLOE_PARTITION_FIRST_FIELD_ID + (int32_t)i;
        for (size_t k = 0; k < i; k++) {
            if (spec->fields[k].field_id == f->field_id)
                FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: field id %d used twice",
                          (int)f->field_id);
            if (!strcmp(spec->fields[k].name, f->name))
                FLOE_FAIL(err, FLOE_ECORRUPT, "partition spec: name \"%s\" used twice",
                          f->name);
        }
        if (f->field_id > spec->last_field_id)
            spec->last_field_id = f->field_id;
        spec->nfields = i + 1;
    }
    if (schema)
        FLOE_CHECK(floe_partition_spec_bind(spec, schema, err));
    *out = spec;
    spec = NULL;
done:
    json_decref(root);
    floe_partition_spec_free(spec);
    return rc;
}

static json_t *fields_json(const floe_partition_spec *spec) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < spec->nfields; i++) {
        const floe_partition_field *f = &spec->fields[i];
        char tname[32];
        const char *xf = f->transform.kind == FLOE_XF_UNKNOWN && f->transform_text
                             ? f->transform_text
                             : floe_transform_name(f->transform, tname, sizeof tname);
        json_t *o = json_object();
        json_t *ids = NULL;
        if (f->nsource_ids > 1) {
            ids = json_array();
            for (size_t k = 0; ids && k < f->nsource_ids; k++)
                if (json_array_append_new(ids, json_integer(f->source_ids[k])) < 0) {
                    json_decref(ids);
                    ids = NULL;
                }
        }
        /* spec note 1: one-argument transforms write only source-id */
        if (!o ||
            (f->nsource_ids > 1 ? (!ids || json_object_set_new(o, "source-ids", ids) < 0)
                                : json_object_set_new(o, "source-id",
                                                      json_integer(f->source_id)) < 0) ||
            json_object_set_new(o, "field-id", json_integer(f->field_id)) < 0 ||
            json_object_set_new(o, "name", json_string(f->name)) < 0 ||
            json_object_set_new(o, "transform", json_string(xf)) < 0) {
            json_decref(o);
            json_decref(arr);
            return NULL;
        }
        /* the _new setters consume their argument even when they fail */
        if (json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static char *dump(json_t *j) {
    if (!j)
        return NULL;
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s)
        return NULL;
    char *copy = floe_strdup(s);
    json_free_t jfree = NULL;
    json_get_alloc_funcs(NULL, &jfree); /* whoever set jansson's allocator frees it */
    if (s)
        jfree ? jfree(s) : free(s);
    return copy;
}

char *floe_partition_spec_fields_to_json(const floe_partition_spec *spec) {
    return dump(fields_json(spec));
}

char *floe_partition_spec_to_json(const floe_partition_spec *spec) {
    json_t *o = json_object();
    json_t *f = fields_json(spec);
    if (!o || !f || json_object_set_new(o, "spec-id", json_integer(spec->spec_id)) < 0) {
        json_decref(o);
        json_decref(f);
        return NULL;
    }
    if (json_object_set_new(o, "fields", f) < 0) { /* consumed f */
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

/* ---- binding ------------------------------------------------------------------------------ */

int floe_partition_spec_bind(floe_partition_spec *spec, const floe_schema *schema,
                             floe_error *err) {
    size_t nf = spec->nfields;
    floe_field *kids = floe_arena_alloc(&spec->arena, (nf ? nf : 1) * sizeof *kids);
    FLOE_RETURN_ERROR_IF(!kids, err, FLOE_ENOMEM, "partition spec: out of memory");
    for (size_t i = 0; i < nf; i++) {
        floe_partition_field *f = &spec->fields[i];
        char cname[512];
        bool coll = false;
        const floe_field *src = floe_px_find_id(schema, f->source_id, &coll, cname,
                                                sizeof cname);
        FLOE_RETURN_ERROR_IF(!src, err, FLOE_ENOTFOUND,
                             "partition field \"%s\": source id %d is not in the schema",
                             f->name, (int)f->source_id);
        FLOE_RETURN_ERROR_IF(coll || src->type >= FLOE_TYPE_STRUCT, err, FLOE_EINVALID,
                             "partition field \"%s\": source \"%s\" %s", f->name, cname,
                             coll ? "is inside a list or map" : "is not a primitive type");
        char tname[32];
        FLOE_RETURN_ERROR_IF(!floe_transform_accepts(f->transform, src->type), err,
                             FLOE_EINVALID,
                             "partition field \"%s\": transform %s does not accept %s (%s)",
                             f->name, floe_transform_name(f->transform, tname, sizeof tname),
                             cname, floe_xf_type_name(src->type));
        const char *nm = floe_arena_strdup(&spec->arena, cname);
        FLOE_RETURN_ERROR_IF(!nm, err, FLOE_ENOMEM, "partition spec: out of memory");
        f->source = src;
        f->source_name = nm;
        floe_field *k = &kids[i];
        memset(k, 0, sizeof *k);
        k->id = f->field_id; /* spec: partition tuple field ids are the partition field ids */
        k->name = f->name;
        k->required = false;
        k->type = floe_transform_result_type(f->transform, src->type);
        if (k->type == src->type) {
            k->precision = src->precision;
            k->scale = src->scale;
            k->length = src->length;
        }
        k->parent = &spec->partition_type;
        k->leaf = -1;
    }
    memset(&spec->partition_type, 0, sizeof spec->partition_type);
    spec->partition_type.id = 102; /* manifest data_file field 102: partition */
    spec->partition_type.name = "partition";
    spec->partition_type.required = true;
    spec->partition_type.type = FLOE_TYPE_STRUCT;
    spec->partition_type.children = kids;
    spec->partition_type.nchildren = nf;
    spec->partition_type.leaf = -1;
    spec->bound = true;
    return 0;
}

/* ---- the user form ------------------------------------------------------------------------ */

static const char *default_suffix(floe_transform_kind k) {
    switch (k) {
    case FLOE_XF_YEAR: return "_year";
    case FLOE_XF_MONTH: return "_month";
    case FLOE_XF_DAY: return "_day";
    case FLOE_XF_HOUR: return "_hour";
    case FLOE_XF_BUCKET: return "_bucket";
    case FLOE_XF_TRUNCATE: return "_trunc";
    case FLOE_XF_VOID: return "_null";
    default: return "";
    }
}

/* the reference's dedup key: all time transforms of one source are redundant together */
static int dedup_class(floe_transform t) {
    switch (t.kind) {
    case FLOE_XF_YEAR:
    case FLOE_XF_MONTH:
    case FLOE_XF_DAY:
    case FLOE_XF_HOUR:
        return 1000;
    default:
        return (int)t.kind;
    }
}

int floe_partition_name_check(const floe_schema *schema, const char *name, int32_t source_id,
                              floe_transform_kind kind, floe_error *err) {
    char cname[512];
    bool amb;
    const floe_field *clash = floe_px_find_name(schema, name, strlen(name), &amb);
    if (clash) { /* only an exact (case-sensitive) hit clashes */
        floe_px_find_id(schema, clash->id, NULL, cname, sizeof cname);
        if (strcmp(cname, name) != 0)
            clash = NULL;
    }
    if (clash && !(clash->id == source_id &&
                   (kind == FLOE_XF_IDENTITY || kind == FLOE_XF_VOID)))
        return floe_error_set(err, FLOE_EINVALID,
                              "partition field \"%s\": the name is a different schema column",
                              name);
    return 0;
}

int floe_partition_spec_check_names(const floe_partition_spec *spec, const floe_schema *schema,
                                    floe_error *err) {
    for (size_t i = 0; i < spec->nfields; i++)
        FLOE_FORWARD_IF_ERROR(floe_partition_name_check(schema, spec->fields[i].name,
                                                        spec->fields[i].source_id,
                                                        spec->fields[i].transform.kind, err));
    return 0;
}

int floe_partition_spec_parse(const floe_schema *schema, const char *text, int32_t spec_id,
                              int32_t first_field_id, floe_partition_spec **out,
                              floe_error *err) {
    int rc = 0;
    floe_partition_spec *spec = spec_new();
    FLOE_RETURN_ERROR_IF(!spec, err, FLOE_ENOMEM, "partition spec: out of memory");
    spec->spec_id = spec_id;
    if (first_field_id <= 0)
        first_field_id = FLOE_PARTITION_FIRST_FIELD_ID;
    size_t cap = 8;
    spec->fields = floe_arena_alloc(&spec->arena, cap * sizeof *spec->fields);
    if (!spec->fields)
        FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
    floe_px_lexer lx;
    floe_px_init(&lx, text);
    while (lx.tok != FLOE_PX_END) {
        if (spec->nfields > 0) {
            if (lx.tok != FLOE_PX_COMMA)
                FLOE_FAIL(err, FLOE_EINVALID, "partition spec: expected ',' at offset %zu",
                          (size_t)(lx.text - text));
            floe_px_next(&lx);
        }
        if (spec->nfields >= FLOE_PARTITION_MAX_FIELDS)
            FLOE_FAIL(err, FLOE_ELIMIT, "partition spec: more than %d fields",
                      FLOE_PARTITION_MAX_FIELDS);
        floe_px_term term;
        FLOE_CHECK(floe_px_parse_term(&lx, &term, err));
        const floe_field *src;
        FLOE_CHECK(floe_px_resolve(schema, &term, "partition field", &src, err));
        char cname[512];
        floe_px_find_id(schema, src->id, NULL, cname, sizeof cname);
        const char *name;
        if (floe_px_is_kw(&lx, "as")) {
            floe_px_next(&lx);
            if (lx.tok != FLOE_PX_IDENT || lx.len == 0)
                FLOE_FAIL(err, FLOE_EINVALID,
                          "partition spec: expected a name after AS at offset %zu",
                          (size_t)(lx.text - text));
            char nbuf[512];
            size_t nlen = floe_px_ident(&lx, nbuf, sizeof nbuf);
            if (nlen == (size_t)-1)
                FLOE_FAIL(err, FLOE_EINVALID, "partition spec: name after AS is too long");
            if (!utf8_valid((const uint8_t *)nbuf, nlen))
                FLOE_FAIL(err, FLOE_EINVALID,
                          "partition spec: name after AS at offset %zu is not valid UTF-8",
                          (size_t)(lx.text - text));
            name = floe_arena_strdup(&spec->arena, nbuf);
            floe_px_next(&lx);
        } else if (term.transform.kind == FLOE_XF_IDENTITY) {
            name = floe_arena_strdup(&spec->arena, cname);
        } else {
            char buf[600];
            snprintf(buf, sizeof buf, "%s%s", cname, default_suffix(term.transform.kind));
            name = floe_arena_strdup(&spec->arena, buf);
        }
        if (!name)
            FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
        /* checks of the reference builder: unique names, no redundant fields, and a
         * name that is a schema column only for an identity of that same column */
        FLOE_CHECK(floe_partition_name_check(schema, name, src->id, term.transform.kind, err));
        for (size_t k = 0; k < spec->nfields; k++) {
            const floe_partition_field *o = &spec->fields[k];
            if (!strcmp(o->name, name))
                FLOE_FAIL(err, FLOE_EINVALID, "partition field name \"%s\" used twice", name);
            if (o->source_id == src->id && term.transform.kind != FLOE_XF_VOID &&
                dedup_class(o->transform) == dedup_class(term.transform) &&
                (dedup_class(term.transform) == 1000 || o->transform.param == term.transform.param))
                FLOE_FAIL(err, FLOE_EINVALID,
                          "partition field \"%.*s\" is redundant with \"%s\"",
                          (int)(term.end - term.start), text + term.start, o->name);
        }
        if (spec->nfields == cap) {
            floe_partition_field *nf =
                floe_arena_alloc(&spec->arena, 2 * cap * sizeof *spec->fields);
            if (!nf)
                FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
            memcpy(nf, spec->fields, cap * sizeof *nf);
            spec->fields = nf;
            cap *= 2;
        }
        floe_partition_field *f = &spec->fields[spec->nfields];
        memset(f, 0, sizeof *f);
        char tname[32];
        f->source_id = src->id;
        f->field_id = first_field_id + (int32_t)spec->nfields;
        f->name = name;
        f->transform = term.transform;
        f->transform_text = floe_arena_strdup(
            &spec->arena, floe_transform_name(term.transform, tname, sizeof tname));
        if (!f->transform_text)
            FLOE_FAIL(err, FLOE_ENOMEM, "partition spec: out of memory");
        spec->last_field_id = f->field_id;
        spec->nfields++;
    }
    FLOE_CHECK(floe_partition_spec_bind(spec, schema, err));
    *out = spec;
    spec = NULL;
done:
    floe_partition_spec_free(spec);
    return rc;
}

char *floe_partition_spec_to_string(const floe_partition_spec *spec) {
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < spec->nfields; i++) {
        const floe_partition_field *f = &spec->fields[i];
        char idbuf[16];
        snprintf(idbuf, sizeof idbuf, "%d", (int)f->source_id);
        const char *col = f->source_name ? f->source_name : idbuf;
        char dflt[600];
        if (i)
            rc = floe_buf_append(&b, ", ", 2);
        switch (f->transform.kind) {
        case FLOE_XF_IDENTITY:
            snprintf(dflt, sizeof dflt, "%s", col);
            if (rc == 0)
                rc = floe_px_put_name(&b, col);
            break;
        case FLOE_XF_BUCKET:
        case FLOE_XF_TRUNCATE:
            snprintf(dflt, sizeof dflt, "%s%s", col, default_suffix(f->transform.kind));
            if (rc == 0)
                rc = floe_buf_printf(&b, "%s(%d, ",
                                     f->transform.kind == FLOE_XF_BUCKET ? "bucket" : "truncate",
                                     (int)f->transform.param);
            if (rc == 0 && (rc = floe_px_put_name(&b, col)) == 0)
                rc = floe_buf_append_byte(&b, ')');
            break;
        default: {
            char tname[32];
            const char *fn = f->transform.kind == FLOE_XF_UNKNOWN && f->transform_text
                                 ? f->transform_text
                                 : floe_transform_name(f->transform, tname, sizeof tname);
            snprintf(dflt, sizeof dflt, "%s%s", col, default_suffix(f->transform.kind));
            if (rc == 0 && (rc = floe_buf_printf(&b, "%s(", fn)) == 0 &&
                (rc = floe_px_put_name(&b, col)) == 0)
                rc = floe_buf_append_byte(&b, ')');
            break;
        }
        }
        if (rc == 0 && (strcmp(dflt, f->name) != 0 || f->transform.kind == FLOE_XF_UNKNOWN)) {
            if ((rc = floe_buf_append(&b, " AS ", 4)) == 0)
                rc = floe_px_put_name(&b, f->name);
        }
    }
    if (rc < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_detach(&b, NULL);
}

bool floe_partition_spec_equivalent(const floe_partition_spec *a,
                                    const floe_partition_spec *b) {
    if (a->nfields != b->nfields)
        return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const floe_partition_field *x = &a->fields[i], *y = &b->fields[i];
        if (x->source_id != y->source_id || strcmp(x->name, y->name) != 0 ||
            x->transform.kind != y->transform.kind || x->transform.param != y->transform.param)
            return false;
        if (x->transform.kind == FLOE_XF_UNKNOWN &&
            strcmp(x->transform_text ? x->transform_text : "",
                   y->transform_text ? y->transform_text : "") != 0)
            return false;
    }
    return true;
}

/* ---- tuples and paths --------------------------------------------------------------------- */

int floe_partition_spec_hour_sources(const floe_partition_spec *spec, int32_t **ids,
                                     size_t *n, floe_error *err) {
    *ids = NULL;
    *n = 0;
    size_t k = 0;
    for (size_t i = 0; spec && i < spec->nfields; i++)
        k += spec->fields[i].transform.kind == FLOE_XF_HOUR;
    if (!k)
        return 0;
    int32_t *v = floe_malloc(k * sizeof *v);
    if (!v)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < spec->nfields; i++)
        if (spec->fields[i].transform.kind == FLOE_XF_HOUR)
            v[(*n)++] = spec->fields[i].source_id;
    *ids = v;
    return 0;
}

int floe_partition_spec_tuple(const floe_partition_spec *spec, const floe_value *src,
                              floe_value *tuple, floe_error *err) {
    FLOE_RETURN_ERROR_IF(!spec->bound, err, FLOE_EINVALID,
                         "partition spec %d is not bound to a schema", (int)spec->spec_id);
    for (size_t i = 0; i < spec->nfields; i++) {
        const floe_partition_field *f = &spec->fields[i];
        FLOE_RETURN_ERROR_IF(f->transform.kind == FLOE_XF_UNKNOWN, err, FLOE_EUNSUPPORTED,
                             "partition field \"%s\": unknown transform \"%s\" cannot be "
                             "written", f->name, f->transform_text ? f->transform_text : "");
        FLOE_RETURN_ERROR_IF(src[i].type != f->source->type, err, FLOE_EINVALID,
                             "partition field \"%s\": source value is %s, column is %s",
                             f->name, floe_xf_type_name(src[i].type),
                             floe_xf_type_name(f->source->type));
        floe_value v;
        int rc = floe_transform_apply(f->transform, &src[i], &v, err);
        if (rc < 0) {
            floe_error_prefix(err, "partition field \"%s\": ", f->name);
            return rc;
        }
        tuple[i] = v;
    }
    return 0;
}

int floe_partition_escape(const char *s, size_t n, floe_buf *out) {
    static const char hx[] = "0123456789ABCDEF";
    /* a value "." or ".." alone would be a special path segment */
    if (n == 1 && s[0] == '.')
        return floe_buf_append(out, "%2E", 3);
    if (n == 2 && s[0] == '.' && s[1] == '.')
        return floe_buf_append(out, "%2E%2E", 6);
    int rc = floe_buf_reserve(out, n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '-' || c == '*' || c == '_') {
            rc = floe_buf_append_byte(out, c);
        } else if (c == ' ') {
            rc = floe_buf_append_byte(out, '+');
        } else {
            char e[3] = {'%', hx[c >> 4], hx[c & 15]};
            rc = floe_buf_append(out, e, 3);
        }
    }
    return rc;
}

/* Path segments are bounded, so that every write path (floe serve's landing files and
 * compaction, convert --partition, rewrite, append --split) can create them whatever the
 * values: a file system allows 255 bytes per name, S3 1024 bytes per key. A segment
 * "name=value" whose escaped form is longer than its budget - PART_SEGMENT_MAX bytes,
 * less when many fields share PART_PATH_BUDGET, never under PART_SEGMENT_MIN - keeps a
 * prefix of itself cut between escapes, then '~' and PART_HASH_HEX hex digits of the
 * SHA-256 of the whole escaped segment. Escaping never produces '~', so a cut segment
 * never equals another value's full one, and two values share a folder only when their
 * digests do. The exact value is in the manifest (paths are only hints to readers). */
#define PART_PATH_BUDGET 512
#define PART_SEGMENT_MAX 128
#define PART_SEGMENT_MIN 48
#define PART_HASH_HEX 24

static int append_bounded(floe_buf *out, const uint8_t *seg, size_t n, size_t max,
                          floe_error *err) {
    int rc;
    if (n <= max) {
        if ((rc = floe_buf_append(out, seg, n)) < 0)
            return floe_error_set(err, rc, "partition path: %s", floe_strerror(rc));
        return 0;
    }
    size_t cut = max - 1 - PART_HASH_HEX;
    if (cut >= 1 && seg[cut - 1] == '%')
        cut -= 1;
    else if (cut >= 2 && seg[cut - 2] == '%')
        cut -= 2;
    uint8_t d[32];
    if ((rc = floe_sha256(seg, n, d, err)) < 0) {
        floe_error_prefix(err, "partition path: a segment longer than %zu bytes (cut and "
                          "hashed): ", max);
        return rc;
    }
    static const char hx[] = "0123456789abcdef";
    char tail[1 + PART_HASH_HEX];
    tail[0] = '~';
    for (size_t i = 0; i < PART_HASH_HEX / 2; i++) {
        tail[1 + 2 * i] = hx[d[i] >> 4];
        tail[2 + 2 * i] = hx[d[i] & 15];
    }
    if ((rc = floe_buf_append(out, seg, cut)) < 0 ||
        (rc = floe_buf_append(out, tail, sizeof tail)) < 0)
        return floe_error_set(err, rc, "partition path: %s", floe_strerror(rc));
    return 0;
}

static size_t segment_max(size_t nfields) {
    size_t max = nfields ? PART_PATH_BUDGET / nfields - 1 : PART_SEGMENT_MAX;
    return max > PART_SEGMENT_MAX ? PART_SEGMENT_MAX
           : max < PART_SEGMENT_MIN ? PART_SEGMENT_MIN
                                    : max;
}

size_t floe_partition_spec_path_max(const floe_partition_spec *spec) {
    return spec->nfields ? spec->nfields * (segment_max(spec->nfields) + 1) - 1 : 0;
}

int floe_partition_spec_path(const floe_partition_spec *spec, const floe_value *tuple,
                             floe_buf *out, floe_error *err) {
    floe_buf human, seg;
    floe_buf_init(&human, 0);
    floe_buf_init(&seg, 0);
    int rc = 0;
    size_t max = segment_max(spec->nfields);
    for (size_t i = 0; i < spec->nfields; i++) {
        const floe_partition_field *f = &spec->fields[i];
        if (f->transform.kind == FLOE_XF_UNKNOWN)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "partition field \"%s\": unknown transform has no path form", f->name);
        floe_buf_reset(&human);
        floe_buf_reset(&seg);
        FLOE_CHECK(floe_transform_human_string(f->transform, &tuple[i], &human, err));
        if ((rc = floe_partition_escape(f->name, strlen(f->name), &seg)) < 0 ||
            (rc = floe_buf_append_byte(&seg, '=')) < 0 ||
            (rc = floe_partition_escape((const char *)human.data, human.len, &seg)) < 0 ||
            (i && (rc = floe_buf_append_byte(out, '/')) < 0))
            FLOE_FAIL(err, rc, "partition path: %s", floe_strerror(rc));
        FLOE_CHECK(append_bounded(out, seg.data, seg.len, max, err));
    }
done:
    floe_buf_free(&human);
    floe_buf_free(&seg);
    return rc;
}
