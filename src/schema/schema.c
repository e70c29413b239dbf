/*
 * schema.c - the Iceberg schema model: JSON parse/serialize (jansson), level derivation,
 * lookups.
 *
 * Implements Iceberg format/spec.md "Schemas and Data Types" and the JSON serialization
 * of schemas from Appendix C (struct/list/map objects, primitive type strings such as
 * "decimal(P, S)" and "fixed[L]"), plus the Parquet column layout of Appendix B / the
 * Parquet LogicalTypes.md LIST and MAP rules (see floe/schema.h).
 *
 * Invariants after floe_schema_finish():
 *   - every field's parent, def_level and rep_level are set; leaves[] lists primitive
 *     fields in depth-first order and leaves[i]->leaf == i;
 *   - field ids are unique (list element and map key/value ids included);
 *   - map keys are required; decimal precision is 1..38 and 0 <= scale <= precision.
 * Everything lives in the schema's arena; there is no other owner.
 */
#include "floe/schema.h"
#include "schema_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Nesting cap: keeps recursion bounded and def/rep levels far inside int16. */
#define SCHEMA_MAX_DEPTH 64
/* A schema file larger than this is not a schema (metadata files included). */
#define SCHEMA_MAX_FILE (64u << 20)

static const char *const type_names[] = {
    [FLOE_TYPE_BOOLEAN] = "boolean",
    [FLOE_TYPE_INT] = "int",
    [FLOE_TYPE_LONG] = "long",
    [FLOE_TYPE_FLOAT] = "float",
    [FLOE_TYPE_DOUBLE] = "double",
    [FLOE_TYPE_DECIMAL] = "decimal",
    [FLOE_TYPE_DATE] = "date",
    [FLOE_TYPE_TIME] = "time",
    [FLOE_TYPE_TIMESTAMP] = "timestamp",
    [FLOE_TYPE_TIMESTAMPTZ] = "timestamptz",
    [FLOE_TYPE_TIMESTAMP_NS] = "timestamp_ns",
    [FLOE_TYPE_TIMESTAMPTZ_NS] = "timestamptz_ns",
    [FLOE_TYPE_STRING] = "string",
    [FLOE_TYPE_UUID] = "uuid",
    [FLOE_TYPE_FIXED] = "fixed",
    [FLOE_TYPE_BINARY] = "binary",
    [FLOE_TYPE_STRUCT] = "struct",
    [FLOE_TYPE_LIST] = "list",
    [FLOE_TYPE_MAP] = "map",
    [FLOE_TYPE_VARIANT] = "variant",
    [FLOE_TYPE_UNKNOWN] = "unknown",
};

const char *floe_type_name(floe_type_id t) {
    if ((int)t < FLOE_TYPE_BOOLEAN || t > FLOE_TYPE_UNKNOWN)
        return "unknown";
    return type_names[t];
}

bool floe_type_is_nested(floe_type_id t) {
    return t == FLOE_TYPE_STRUCT || t == FLOE_TYPE_LIST || t == FLOE_TYPE_MAP ||
           t == FLOE_TYPE_VARIANT;
}

bool floe_schema_has_variant(const floe_schema *s) {
    for (size_t j = 0; j < s->nleaves; j++)
        if (s->leaves[j]->parent && s->leaves[j]->parent->type == FLOE_TYPE_VARIANT)
            return true;
    return false;
}

const char *floe_field_type_str(const floe_field *f, char *buf, size_t n) {
    if (!n)
        return buf;
    if (f->geo && f->geo_type)
        snprintf(buf, n, "%s", f->geo_type);
    else if (f->type == FLOE_TYPE_DECIMAL)
        snprintf(buf, n, "decimal(%d, %d)", (int)f->precision, (int)f->scale);
    else if (f->type == FLOE_TYPE_FIXED)
        snprintf(buf, n, "fixed[%d]", (int)f->length);
    else
        snprintf(buf, n, "%s", floe_type_name(f->type));
    return buf;
}

int floe_phys_width(floe_phys p, int32_t type_length) {
    switch (p) {
    case FLOE_PHYS_BOOLEAN: return 1;
    case FLOE_PHYS_INT32: return 4;
    case FLOE_PHYS_INT64: return 8;
    case FLOE_PHYS_INT96: return 12;
    case FLOE_PHYS_FLOAT: return 4;
    case FLOE_PHYS_DOUBLE: return 8;
    case FLOE_PHYS_BYTE_ARRAY: return 0;
    case FLOE_PHYS_FIXED: return type_length;
    }
    return 0;
}

int32_t floe_decimal_bytes(int32_t precision) {
    /* max_precision[n] = digits of 2^(8n-1) - 1: the largest precision n bytes of two's
     * complement hold (Iceberg spec: "minimum number of bytes for the given precision") */
    static const int8_t max_precision[17] = {0,  2,  4,  6,  9,  11, 14, 16, 18,
                                             21, 23, 26, 28, 31, 33, 35, 38};
    for (int32_t n = 1; n <= 16; n++)
        if (precision <= max_precision[n])
            return n;
    return 16;
}

/* ---- construction -------------------------------------------------------------------- */

floe_schema *floe_schema_new(void) {
    floe_schema *s = floe_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    floe_arena_init(&s->arena, 8192);
    s->root.type = FLOE_TYPE_STRUCT;
    s->root.name = "";
    s->root.required = true;
    s->root.leaf = -1;
    return s;
}

void floe_schema_free(floe_schema *s) {
    if (!s)
        return;
    floe_arena_reset(&s->arena);
    floe_free(s);
}

/* ---- level derivation ------------------------------------------------------------------ */

typedef struct finish_ctx {
    floe_schema *s;
    int32_t *ids;   /* every field id, for the duplicate check */
    size_t nids, ids_cap;
    size_t nleaves;
    floe_error *err;
} finish_ctx;

static int check_primitive(const floe_field *f, floe_error *err) {
    char path[256];
    switch (f->type) {
    case FLOE_TYPE_DECIMAL:
        if (f->precision < 1 || f->precision > 38)
            return floe_error_set(err, FLOE_ESCHEMA,
                                  "field '%s': decimal precision %d outside 1..38",
                                  floe_field_path(f, path, sizeof path), (int)f->precision);
        if (f->scale < 0 || f->scale > f->precision)
            return floe_error_set(err, FLOE_ESCHEMA,
                                  "field '%s': decimal scale %d outside 0..precision %d",
                                  floe_field_path(f, path, sizeof path), (int)f->scale,
                                  (int)f->precision);
        break;
    case FLOE_TYPE_FIXED:
        if (f->length < 1)
            return floe_error_set(err, FLOE_ESCHEMA, "field '%s': fixed length %d must be >= 1",
                                  floe_field_path(f, path, sizeof path), (int)f->length);
        break;
    default:
        break;
    }
    return 0;
}

static void set_phys(floe_field *f) {
    f->type_length = 0;
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: f->phys = FLOE_PHYS_BOOLEAN; break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE: f->phys = FLOE_PHYS_INT32; break;
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: f->phys = FLOE_PHYS_INT64; break;
    case FLOE_TYPE_FLOAT: f->phys = FLOE_PHYS_FLOAT; break;
    case FLOE_TYPE_DOUBLE: f->phys = FLOE_PHYS_DOUBLE; break;
    case FLOE_TYPE_DECIMAL:
        /* Iceberg's Parquet mapping: int32 for P <= 9, int64 for P <= 18, else fixed */
        if (f->precision <= 9)
            f->phys = FLOE_PHYS_INT32;
        else if (f->precision <= 18)
            f->phys = FLOE_PHYS_INT64;
        else {
            f->phys = FLOE_PHYS_FIXED;
            f->type_length = floe_decimal_bytes(f->precision);
        }
        break;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY: f->phys = FLOE_PHYS_BYTE_ARRAY; break;
    case FLOE_TYPE_UUID:
        f->phys = FLOE_PHYS_FIXED;
        f->type_length = 16;
        break;
    case FLOE_TYPE_FIXED:
        f->phys = FLOE_PHYS_FIXED;
        f->type_length = f->length;
        break;
    default:
        f->phys = FLOE_PHYS_BYTE_ARRAY;
        break;
    }
}

static int finish_field(finish_ctx *c, floe_field *f, floe_field *parent, int16_t pdef,
                        int16_t prep, int depth) {
    char path[256];
    floe_error *err = c->err;
    f->parent = parent;
    /* depth: the length of f's Parquet path (FLOE_PQ_PATH_MAX) */
    if (depth > FLOE_PQ_PATH_MAX)
        return floe_error_set(err, FLOE_ESCHEMA,
                              "field '%s': nested %d levels deep in Parquet (a list or map "
                              "counts two), more than the %d floe's Parquet writer and reader "
                              "take",
                              floe_field_path(f, path, sizeof path), depth, FLOE_PQ_PATH_MAX);
    if (!f->name || !f->name[0])
        return floe_error_set(err, FLOE_ESCHEMA, "field id %d has no name", (int)f->id);
    /* a variant's parts, and in a shredded layout everything below them, are Parquet
     * columns without Iceberg fields */
    bool variant_part = false;
    for (const floe_field *a = parent; a && !variant_part; a = a->parent)
        variant_part = a->type == FLOE_TYPE_VARIANT;
    if (variant_part) {
        f->id = -1; /* not an Iceberg field */
    } else if (f->id < 0)
        return floe_error_set(err, FLOE_ESCHEMA, "field '%s': negative id %d",
                              floe_field_path(f, path, sizeof path), (int)f->id);
    if (c->nids == c->ids_cap && !variant_part) {
        size_t ncap = c->ids_cap ? c->ids_cap * 2 : 64;
        int32_t *ids = floe_realloc(c->ids, ncap * sizeof *ids);
        if (!ids)
            return floe_error_set(err, FLOE_ENOMEM, "schema: out of memory");
        c->ids = ids;
        c->ids_cap = ncap;
    }
    if (!variant_part)
        c->ids[c->nids++] = f->id;
    if (f->id > c->s->highest_field_id)
        c->s->highest_field_id = f->id;

    int16_t def = (int16_t)(pdef + (f->required ? 0 : 1));
    f->def_level = def;
    f->rep_level = prep;
    f->leaf = -1;
    f->phys = FLOE_PHYS_BYTE_ARRAY;
    f->type_length = 0;
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        if (f->nchildren && !f->children)
            return floe_error_set(err, FLOE_ESCHEMA, "field '%s': children missing",
                                  floe_field_path(f, path, sizeof path));
        for (size_t i = 0; i < f->nchildren; i++) {
            for (size_t j = 0; j < i; j++)
                if (f->children[i].name && f->children[j].name &&
                    !strcmp(f->children[i].name, f->children[j].name))
                    return floe_error_set(err, FLOE_ESCHEMA,
                                          "struct '%s': duplicate field name '%s'",
                                          floe_field_path(f, path, sizeof path),
                                          f->children[i].name);
            FLOE_FORWARD_IF_ERROR(finish_field(c, &f->children[i], f, def, prep, depth + 1));
        }
        break;
    case FLOE_TYPE_LIST:
        if (f->nchildren != 1 || !f->children)
            return floe_error_set(err, FLOE_ESCHEMA, "list '%s' must have one element field",
                                  floe_field_path(f, path, sizeof path));
        /* the repeated group adds one definition and one repetition level */
        FLOE_FORWARD_IF_ERROR(finish_field(c, &f->children[0], f, (int16_t)(def + 1),
                                           (int16_t)(prep + 1), depth + 2));
        break;
    case FLOE_TYPE_MAP:
        if (f->nchildren != 2 || !f->children)
            return floe_error_set(err, FLOE_ESCHEMA, "map '%s' must have key and value fields",
                                  floe_field_path(f, path, sizeof path));
        if (!f->children[0].required)
            return floe_error_set(err, FLOE_ESCHEMA, "map '%s': key must be required",
                                  floe_field_path(f, path, sizeof path));
        if (floe_type_is_nested(f->children[0].type))
            return floe_error_set(err, FLOE_ESCHEMA,
                                  "map '%s': nested key types are not supported",
                                  floe_field_path(f, path, sizeof path));
        for (size_t i = 0; i < 2; i++)
            FLOE_FORWARD_IF_ERROR(finish_field(c, &f->children[i], f, (int16_t)(def + 1),
                                               (int16_t)(prep + 1), depth + 2));
        break;
    case FLOE_TYPE_VARIANT:
        /* VariantEncoding.md "Variant in Parquet": a group of the two binary parts */
        if (f->nchildren == 0) {
            floe_field *kids = floe_arena_alloc(&c->s->arena, 2 * sizeof *kids);
            if (!kids)
                return floe_error_set(err, FLOE_ENOMEM, "schema: out of memory");
            memset(kids, 0, 2 * sizeof *kids);
            kids[0].name = "metadata";
            kids[1].name = "value";
            for (int i = 0; i < 2; i++) {
                kids[i].required = true;
                kids[i].type = FLOE_TYPE_BINARY;
            }
            f->children = kids;
            f->nchildren = 2;
        }
        /* or, written shredded (the Parquet writer's own schema, VariantShredding.md):
         * metadata, an optional value and a typed_value */
        if ((f->nchildren != 2 && f->nchildren != 3) || !f->children ||
            strcmp(f->children[0].name, "metadata") || strcmp(f->children[1].name, "value") ||
            (f->nchildren == 3 && strcmp(f->children[2].name, "typed_value")))
            return floe_error_set(err, FLOE_ESCHEMA, "variant '%s': bad parts",
                                  floe_field_path(f, path, sizeof path));
        for (size_t i = 0; i < f->nchildren; i++)
            FLOE_FORWARD_IF_ERROR(finish_field(c, &f->children[i], f, def, prep, depth + 1));
        break;
    case FLOE_TYPE_UNKNOWN:
        /* format/spec.md "Primitive Types": must be optional (its defaults are null:
         * floe_schema_check_defaults); no Parquet column, so no leaf */
        if (f->required)
            return floe_error_set(err, FLOE_ESCHEMA,
                                  "field '%s': type unknown must be optional (it is always "
                                  "null)",
                                  floe_field_path(f, path, sizeof path));
        if (f->nchildren)
            return floe_error_set(err, FLOE_ESCHEMA, "field '%s': unknown has no children",
                                  floe_field_path(f, path, sizeof path));
        if (parent && (parent->type == FLOE_TYPE_LIST || parent->type == FLOE_TYPE_MAP))
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "field '%s': floe supports type unknown as a struct field "
                                  "only, not as a list element or map value",
                                  floe_field_path(f, path, sizeof path));
        break;
    default:
        if ((int)f->type < FLOE_TYPE_BOOLEAN || f->type > FLOE_TYPE_MAP)
            return floe_error_set(err, FLOE_ESCHEMA, "field '%s': bad type %d",
                                  floe_field_path(f, path, sizeof path), (int)f->type);
        FLOE_FORWARD_IF_ERROR(check_primitive(f, err));
        set_phys(f);
        f->leaf = (int32_t)c->nleaves++;
        break;
    }
    return 0;
}

static void collect_leaves(floe_field *f, floe_field **leaves) {
    if (f->leaf >= 0) {
        leaves[f->leaf] = f;
        return;
    }
    for (size_t i = 0; i < f->nchildren; i++)
        collect_leaves(&f->children[i], leaves);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int floe_schema_finish(floe_schema *s, floe_error *err) {
    finish_ctx c = {.s = s, .err = err};
    int rc = 0;
    s->root.type = FLOE_TYPE_STRUCT;
    s->root.parent = NULL;
    s->root.leaf = -1;
    s->root.def_level = 0;
    s->root.rep_level = 0;
    s->highest_field_id = 0;
    for (size_t i = 0; i < s->root.nchildren; i++) {
        floe_field *f = &s->root.children[i];
        for (size_t j = 0; j < i; j++)
            if (f->name && s->root.children[j].name && !strcmp(f->name, s->root.children[j].name))
                FLOE_FAIL(err, FLOE_ESCHEMA, "duplicate top-level field name '%s'", f->name);
        FLOE_CHECK(finish_field(&c, f, NULL, 0, 0, 1));
    }
    if (c.nids > 1) {
        qsort(c.ids, c.nids, sizeof *c.ids, cmp_i32);
        for (size_t i = 1; i < c.nids; i++)
            if (c.ids[i] == c.ids[i - 1])
                FLOE_FAIL(err, FLOE_ESCHEMA, "duplicate field id %d", (int)c.ids[i]);
    }
    for (size_t i = 0; i < s->n_identifier; i++) {
        const floe_field *f = floe_schema_find_id(s, s->identifier_field_ids[i]);
        if (!f)
            FLOE_FAIL(err, FLOE_ESCHEMA, "identifier field id %d is not in the schema",
                      (int)s->identifier_field_ids[i]);
        if (f->leaf < 0)
            FLOE_FAIL(err, FLOE_ESCHEMA, "identifier field id %d is not a primitive field",
                      (int)s->identifier_field_ids[i]);
    }
    floe_field **leaves = floe_arena_alloc(&s->arena, (c.nleaves ? c.nleaves : 1) * sizeof *leaves);
    if (!leaves)
        FLOE_FAIL(err, FLOE_ENOMEM, "schema: out of memory");
    for (size_t i = 0; i < s->root.nchildren; i++)
        collect_leaves(&s->root.children[i], leaves);
    s->leaves = leaves;
    s->nleaves = c.nleaves;
done:
    floe_free(c.ids);
    return rc;
}

/* ---- JSON parsing ------------------------------------------------------------------------ */

typedef struct parse_ctx {
    floe_schema *s;
    floe_arena *arena; /* keeps a geometry/geography type's text; NULL: none taken */
    floe_error *err;
} parse_ctx;

static int parse_type(parse_ctx *c, json_t *t, floe_field *f, const char *where, int depth);

static int parse_id(parse_ctx *c, json_t *obj, const char *key, const char *where,
                    int32_t *out) {
    json_t *v = json_object_get(obj, key);
    if (!v || !json_is_integer(v))
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"%s\" must be an integer", where, key);
    json_int_t x = json_integer_value(v);
    if (x < 0 || x > INT32_MAX)
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"%s\" %lld outside 0..2147483647",
                              where, key, (long long)x);
    *out = (int32_t)x;
    return 0;
}

static int parse_bool(parse_ctx *c, json_t *obj, const char *key, const char *where,
                      bool *out) {
    json_t *v = json_object_get(obj, key);
    if (!v || !json_is_boolean(v))
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"%s\" must be true or false", where,
                              key);
    *out = json_is_true(v);
    return 0;
}

/* Parse an unsigned decimal integer at *p (no sign, at most 9 digits). */
static bool scan_small_uint(const char **p, int32_t *out) {
    const char *q = *p;
    int32_t v = 0;
    int nd = 0;
    while (*q >= '0' && *q <= '9') {
        if (++nd > 9)
            return false;
        v = v * 10 + (*q - '0');
        q++;
    }
    if (!nd)
        return false;
    *p = q;
    *out = v;
    return true;
}

static void skip_spaces(const char **p) {
    while (**p == ' ')
        (*p)++;
}

/* One parameter of geometry(C) / geography(C, A) at *p: its text (spaces around it
 * dropped) up to ',' or ')'; false when it is empty or holds a parenthesis. */
static bool geo_param(const char **p, const char **start, size_t *len) {
    skip_spaces(p);
    const char *q = *p;
    while (*q && *q != ',' && *q != ')' && *q != '(')
        q++;
    size_t n = (size_t)(q - *p);
    while (n && (*p)[n - 1] == ' ')
        n--;
    if (!n || *q == '(')
        return false;
    *start = *p;
    *len = n;
    *p = q;
    return true;
}

/* geometry, geometry(C), geography, geography(C), geography(C, A) (format/spec.md
 * "Primitive Types", Appendix C: C is a CRS "type:identifier" such as srid:4326 or
 * OGC:CRS84, A one of the edge algorithms). The whole text is kept as given, so metadata
 * floe writes back names the type byte for byte. */
static int parse_geo(parse_ctx *c, const char *name, floe_field *f, const char *where) {
    static const char *const algos[] = {"spherical", "vincenty", "thomas", "andoyer", "karney"};
    bool geog = !strncmp(name, "geography", 9);
    const char *p = name + (geog ? 9 : 8);
    const char *crs = NULL, *algo = NULL;
    size_t crs_n = 0, algo_n = 0;
    int algo_id = FLOE_GEO_ALGO_DEFAULT;
    if (*p) {
        if (*p++ != '(' || !geo_param(&p, &crs, &crs_n))
            goto bad;
        if (*p == ',') {
            p++;
            if (!geog || !geo_param(&p, &algo, &algo_n))
                goto bad;
        }
        if (*p++ != ')' || *p)
            goto bad;
        const char *colon = memchr(crs, ':', crs_n);
        if (!colon || colon == crs || colon == crs + crs_n - 1)
            return floe_error_set(c->err, FLOE_ESCHEMA,
                                  "%s: CRS \"%.*s\" in \"%s\" is not of the form "
                                  "type:identifier (srid:4326, projjson:NAME, OGC:CRS84)",
                                  where, (int)crs_n, crs, name);
        if (algo) {
            for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++)
                if (strlen(algos[i]) == algo_n && !strncasecmp(algo, algos[i], algo_n))
                    algo_id = (int)i;
            if (algo_id == FLOE_GEO_ALGO_DEFAULT)
                return floe_error_set(c->err, FLOE_ESCHEMA,
                                      "%s: edge algorithm \"%.*s\" in \"%s\" is not one of "
                                      "spherical, vincenty, thomas, andoyer, karney",
                                      where, (int)algo_n, algo, name);
        }
    }
    if (!c->arena)
        return floe_error_set(c->err, FLOE_EUNSUPPORTED,
                              "%s: \"%s\": no geometry or geography type here", where, name);
    f->type = FLOE_TYPE_BINARY;
    f->geo = geog ? FLOE_GEO_GEOGRAPHY : FLOE_GEO_GEOMETRY;
    f->geo_algo = (floe_geo_algo)algo_id;
    f->geo_crs = NULL;
    if (!(f->geo_type = floe_arena_strdup(c->arena, name)) ||
        (crs && !(f->geo_crs = floe_arena_strndup(c->arena, crs, crs_n))))
        return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
    return 0;
bad:
    return floe_error_set(c->err, FLOE_ESCHEMA,
                          "%s: malformed %s type \"%s\" (want %s)", where,
                          geog ? "geography" : "geometry", name,
                          geog ? "geography, geography(C) or geography(C, A)"
                               : "geometry or geometry(C)");
}

static int parse_primitive(parse_ctx *c, const char *name, floe_field *f, const char *where) {
    static const struct {
        const char *name;
        floe_type_id type;
    } simple[] = {
        {"boolean", FLOE_TYPE_BOOLEAN},   {"int", FLOE_TYPE_INT},
        {"long", FLOE_TYPE_LONG},         {"float", FLOE_TYPE_FLOAT},
        {"double", FLOE_TYPE_DOUBLE},     {"date", FLOE_TYPE_DATE},
        {"time", FLOE_TYPE_TIME},         {"timestamp", FLOE_TYPE_TIMESTAMP},
        {"timestamptz", FLOE_TYPE_TIMESTAMPTZ}, {"timestamp_ns", FLOE_TYPE_TIMESTAMP_NS},
        {"timestamptz_ns", FLOE_TYPE_TIMESTAMPTZ_NS}, {"string", FLOE_TYPE_STRING},
        {"uuid", FLOE_TYPE_UUID},         {"binary", FLOE_TYPE_BINARY},
        {"variant", FLOE_TYPE_VARIANT},   {"unknown", FLOE_TYPE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (!strcmp(name, simple[i].name)) {
            f->type = simple[i].type;
            return 0;
        }
    if (!strncmp(name, "geometry", 8) || !strncmp(name, "geography", 9))
        return parse_geo(c, name, f, where);
    const char *p = name;
    if (!strncmp(p, "decimal(", 8)) {
        int32_t prec, scale;
        p += 8;
        skip_spaces(&p);
        if (!scan_small_uint(&p, &prec))
            goto bad_decimal;
        skip_spaces(&p);
        if (*p++ != ',')
            goto bad_decimal;
        skip_spaces(&p);
        if (!scan_small_uint(&p, &scale))
            goto bad_decimal;
        skip_spaces(&p);
        if (*p++ != ')' || *p)
            goto bad_decimal;
        if (prec < 1 || prec > 38)
            return floe_error_set(c->err, FLOE_ESCHEMA,
                                  "%s: decimal precision %d outside 1..38 in \"%s\"", where,
                                  (int)prec, name);
        if (scale > prec)
            return floe_error_set(c->err, FLOE_ESCHEMA,
                                  "%s: decimal scale %d greater than precision %d in \"%s\"",
                                  where, (int)scale, (int)prec, name);
        f->type = FLOE_TYPE_DECIMAL;
        f->precision = prec;
        f->scale = scale;
        return 0;
    bad_decimal:
        return floe_error_set(c->err, FLOE_ESCHEMA,
                              "%s: malformed decimal type \"%s\" (want decimal(P, S))", where,
                              name);
    }
    if (!strncmp(p, "fixed[", 6)) {
        int32_t len;
        p += 6;
        if (!scan_small_uint(&p, &len) || *p++ != ']' || *p)
            return floe_error_set(c->err, FLOE_ESCHEMA,
                                  "%s: malformed fixed type \"%s\" (want fixed[L])", where, name);
        if (len < 1)
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: fixed length must be >= 1 in \"%s\"",
                                  where, name);
        f->type = FLOE_TYPE_FIXED;
        f->length = len;
        return 0;
    }
    return floe_error_set(c->err, FLOE_ESCHEMA, "%s: unknown or unsupported type \"%s\"", where,
                          name);
}

int floe_schema_primitive_type(const char *name, floe_field *f, floe_arena *arena,
                               floe_error *err) {
    parse_ctx c = {.s = NULL, .arena = arena, .err = err};
    return parse_primitive(&c, name, f, "type");
}

/* format/spec.md "CRS": C defaults to OGC:CRS84, A to spherical. The spec says nothing of
 * the CRS's case; Iceberg Java (Types.GeometryType/GeographyType.equals, apache/iceberg
 * #16765) compares it ignoring case, so OGC:CRS84 and ogc:crs84 are one CRS here too. */
bool floe_field_geo_same(const floe_field *a, const floe_field *b) {
    if (a->geo != b->geo)
        return false;
    if (!a->geo)
        return true;
    const char *ca = a->geo_crs ? a->geo_crs : "OGC:CRS84";
    const char *cb = b->geo_crs ? b->geo_crs : "OGC:CRS84";
    floe_geo_algo aa = a->geo_algo == FLOE_GEO_ALGO_DEFAULT ? FLOE_GEO_ALGO_SPHERICAL : a->geo_algo;
    floe_geo_algo ab = b->geo_algo == FLOE_GEO_ALGO_DEFAULT ? FLOE_GEO_ALGO_SPHERICAL : b->geo_algo;
    return !strcasecmp(ca, cb) && (a->geo != FLOE_GEO_GEOGRAPHY || aa == ab);
}

static char *dump_default(parse_ctx *c, json_t *v) {
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        return NULL;
    char *copy = floe_arena_strdup(&c->s->arena, text);
    free(text); /* jansson's allocator */
    return copy;
}

static int parse_struct_fields(parse_ctx *c, json_t *t, floe_field *f, const char *where,
                               int depth) {
    json_t *fields = json_object_get(t, "fields");
    if (!fields || !json_is_array(fields))
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: struct needs a \"fields\" array", where);
    size_t n = json_array_size(fields);
    f->type = FLOE_TYPE_STRUCT;
    f->nchildren = n;
    f->children = NULL;
    if (n == 0)
        return 0;
    if (n > SIZE_MAX / sizeof(floe_field))
        return floe_error_set(c->err, FLOE_ELIMIT, "%s: too many fields", where);
    f->children = floe_arena_alloc(&c->s->arena, n * sizeof(floe_field));
    if (!f->children)
        return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *jf = json_array_get(fields, i);
        floe_field *child = &f->children[i];
        char here[200];
        snprintf(here, sizeof here, "%s.fields[%zu]", where, i);
        if (!json_is_object(jf))
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: field must be an object", here);
        json_t *jname = json_object_get(jf, "name");
        if (!jname || !json_is_string(jname) || !json_string_length(jname))
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"name\" must be a non-empty string",
                                  here);
        if (strlen(json_string_value(jname)) != json_string_length(jname))
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: field name contains NUL", here);
        child->name = floe_arena_strdup(&c->s->arena, json_string_value(jname));
        if (!child->name)
            return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
        snprintf(here, sizeof here, "%s.%s", where, child->name);
        FLOE_FORWARD_IF_ERROR(parse_id(c, jf, "id", here, &child->id));
        FLOE_FORWARD_IF_ERROR(parse_bool(c, jf, "required", here, &child->required));
        json_t *jt = json_object_get(jf, "type");
        if (!jt)
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"type\" missing", here);
        FLOE_FORWARD_IF_ERROR(parse_type(c, jt, child, here, depth + 1));
        json_t *jdoc = json_object_get(jf, "doc");
        if (jdoc && !json_is_null(jdoc)) {
            if (!json_is_string(jdoc))
                return floe_error_set(c->err, FLOE_ESCHEMA, "%s: \"doc\" must be a string", here);
            if (!(child->doc = floe_arena_strdup(&c->s->arena, json_string_value(jdoc))))
                return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
        }
        json_t *jd = json_object_get(jf, "initial-default");
        if (jd && !(child->initial_default_json = dump_default(c, jd)))
            return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
        jd = json_object_get(jf, "write-default");
        if (jd && !(child->write_default_json = dump_default(c, jd)))
            return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
    }
    return 0;
}

static int parse_type(parse_ctx *c, json_t *t, floe_field *f, const char *where, int depth) {
    if (depth > SCHEMA_MAX_DEPTH)
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: schema nests deeper than %d levels",
                              where, SCHEMA_MAX_DEPTH);
    if (json_is_string(t))
        return parse_primitive(c, json_string_value(t), f, where);
    if (!json_is_object(t))
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: type must be a string or an object",
                              where);
    json_t *jkind = json_object_get(t, "type");
    const char *kind = jkind && json_is_string(jkind) ? json_string_value(jkind) : NULL;
    if (!kind)
        return floe_error_set(c->err, FLOE_ESCHEMA, "%s: nested type needs a \"type\" string",
                              where);
    char here[200];
    if (!strcmp(kind, "struct"))
        return parse_struct_fields(c, t, f, where, depth);
    if (!strcmp(kind, "list")) {
        floe_field *el = floe_arena_alloc(&c->s->arena, sizeof *el);
        if (!el)
            return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
        f->type = FLOE_TYPE_LIST;
        f->children = el;
        f->nchildren = 1;
        el->name = "element";
        snprintf(here, sizeof here, "%s.element", where);
        FLOE_FORWARD_IF_ERROR(parse_id(c, t, "element-id", where, &el->id));
        FLOE_FORWARD_IF_ERROR(parse_bool(c, t, "element-required", where, &el->required));
        json_t *je = json_object_get(t, "element");
        if (!je)
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: list needs \"element\"", where);
        return parse_type(c, je, el, here, depth + 1);
    }
    if (!strcmp(kind, "map")) {
        floe_field *kv = floe_arena_alloc(&c->s->arena, 2 * sizeof *kv);
        if (!kv)
            return floe_error_set(c->err, FLOE_ENOMEM, "schema: out of memory");
        f->type = FLOE_TYPE_MAP;
        f->children = kv;
        f->nchildren = 2;
        kv[0].name = "key";
        kv[0].required = true; /* Iceberg: map keys are always required */
        kv[1].name = "value";
        FLOE_FORWARD_IF_ERROR(parse_id(c, t, "key-id", where, &kv[0].id));
        FLOE_FORWARD_IF_ERROR(parse_id(c, t, "value-id", where, &kv[1].id));
        FLOE_FORWARD_IF_ERROR(parse_bool(c, t, "value-required", where, &kv[1].required));
        json_t *jk = json_object_get(t, "key"), *jv = json_object_get(t, "value");
        if (!jk || !jv)
            return floe_error_set(c->err, FLOE_ESCHEMA, "%s: map needs \"key\" and \"value\"",
                                  where);
        snprintf(here, sizeof here, "%s.key", where);
        FLOE_FORWARD_IF_ERROR(parse_type(c, jk, &kv[0], here, depth + 1));
        snprintf(here, sizeof here, "%s.value", where);
        return parse_type(c, jv, &kv[1], here, depth + 1);
    }
    return floe_error_set(c->err, FLOE_ESCHEMA, "%s: unknown nested type \"%s\"", where, kind);
}

/* Pick the schema object out of a document that may be table metadata. */
static int select_schema(json_t *doc, json_t **out, floe_error *err) {
    if (!json_is_object(doc))
        return floe_error_set(err, FLOE_ESCHEMA, "schema JSON must be an object");
    json_t *schemas = json_object_get(doc, "schemas");
    if (schemas) {
        if (!json_is_array(schemas))
            return floe_error_set(err, FLOE_ESCHEMA, "table metadata: \"schemas\" must be an array");
        json_t *jcur = json_object_get(doc, "current-schema-id");
        if (!jcur || !json_is_integer(jcur))
            return floe_error_set(err, FLOE_ESCHEMA,
                                  "table metadata: \"current-schema-id\" must be an integer");
        json_int_t cur = json_integer_value(jcur);
        for (size_t i = 0; i < json_array_size(schemas); i++) {
            json_t *s = json_array_get(schemas, i);
            json_t *sid = json_object_get(s, "schema-id");
            if (sid && json_is_integer(sid) && json_integer_value(sid) == cur) {
                *out = s;
                return 0;
            }
        }
        return floe_error_set(err, FLOE_ESCHEMA,
                              "table metadata: current-schema-id %lld not among \"schemas\"",
                              (long long)cur);
    }
    json_t *v1 = json_object_get(doc, "schema");
    if (v1 && json_is_object(v1)) {
        *out = v1;
        return 0;
    }
    *out = doc;
    return 0;
}

int floe_schema_parse(const char *json, size_t n, floe_schema **out, floe_error *err) {
    int rc = 0;
    floe_schema *s = NULL;
    json_error_t jerr;
    json_t *doc = json_loadb(json, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        rc = floe_error_at(err, FLOE_ESCHEMA, jerr.position, "schema JSON: line %d column %d: %s",
                           jerr.line, jerr.column, jerr.text);
        goto done;
    }
    json_t *js = NULL;
    FLOE_CHECK(select_schema(doc, &js, err));
    json_t *jtype = json_object_get(js, "type");
    if (!jtype || !json_is_string(jtype) || strcmp(json_string_value(jtype), "struct"))
        FLOE_FAIL(err, FLOE_ESCHEMA, "schema: top level must be {\"type\": \"struct\", ...}");
    if (!(s = floe_schema_new()))
        FLOE_FAIL(err, FLOE_ENOMEM, "schema: out of memory");
    parse_ctx c = {.s = s, .arena = &s->arena, .err = err};
    json_t *jsid = json_object_get(js, "schema-id");
    if (jsid) {
        if (!json_is_integer(jsid) || json_integer_value(jsid) < 0 ||
            json_integer_value(jsid) > INT32_MAX)
            FLOE_FAIL(err, FLOE_ESCHEMA, "schema: \"schema-id\" must be a non-negative integer");
        s->schema_id = (int32_t)json_integer_value(jsid);
    }
    FLOE_CHECK(parse_struct_fields(&c, js, &s->root, "schema", 0));
    json_t *jids = json_object_get(js, "identifier-field-ids");
    if (jids && !json_is_null(jids)) {
        if (!json_is_array(jids))
            FLOE_FAIL(err, FLOE_ESCHEMA, "schema: \"identifier-field-ids\" must be an array");
        size_t k = json_array_size(jids);
        if (k) {
            s->identifier_field_ids = floe_arena_alloc(&s->arena, k * sizeof(int32_t));
            if (!s->identifier_field_ids)
                FLOE_FAIL(err, FLOE_ENOMEM, "schema: out of memory");
            for (size_t i = 0; i < k; i++) {
                json_t *v = json_array_get(jids, i);
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    json_integer_value(v) > INT32_MAX)
                    FLOE_FAIL(err, FLOE_ESCHEMA, "schema: identifier-field-ids[%zu] is not a field id",
                              i);
                s->identifier_field_ids[i] = (int32_t)json_integer_value(v);
            }
            s->n_identifier = k;
        }
    }
    FLOE_CHECK(floe_schema_finish(s, err));
    *out = s;
    s = NULL;
done:
    floe_schema_free(s);
    if (doc)
        json_decref(doc);
    return rc;
}

int floe_schema_load(const char *path, floe_schema **out, floe_error *err) {
    int rc = 0;
    floe_buf b;
    floe_buf_init(&b, SCHEMA_MAX_FILE);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return floe_error_errno(err, errno, "%s", path);
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        rc = floe_buf_append(&b, chunk, got);
        if (rc == FLOE_ELIMIT)
            FLOE_FAIL(err, FLOE_ELIMIT, "%s: larger than %u bytes", path, SCHEMA_MAX_FILE);
        if (rc < 0)
            FLOE_FAIL(err, rc, "%s: out of memory", path);
    }
    if (ferror(fp)) {
        rc = floe_error_errno(err, errno, "%s: read", path);
        goto done;
    }
    rc = floe_schema_parse(b.data ? (const char *)b.data : "", b.len, out, err);
    if (rc < 0)
        floe_error_prefix(err, "%s: ", path);
done:
    fclose(fp);
    floe_buf_free(&b);
    return rc;
}

/* ---- JSON serialization -------------------------------------------------------------- */

static json_t *type_to_json(const floe_field *f);

static json_t *field_to_json(const floe_field *f) {
    json_t *o = json_object();
    json_t *t = type_to_json(f);
    if (!o || !t)
        goto fail;
    if (json_object_set_new(o, "id", json_integer(f->id)) ||
        json_object_set_new(o, "name", json_string(f->name)) ||
        json_object_set_new(o, "required", json_boolean(f->required)))
        goto fail;
    json_t *owned = t;
    t = NULL; /* json_object_set_new takes the reference even when it fails */
    if (json_object_set_new(o, "type", owned))
        goto fail;
    if (f->doc && json_object_set_new(o, "doc", json_string(f->doc)))
        goto fail;
    const char *defs[2] = {f->initial_default_json, f->write_default_json};
    const char *keys[2] = {"initial-default", "write-default"};
    for (int i = 0; i < 2; i++) {
        if (!defs[i])
            continue;
        json_t *v = json_loads(defs[i], JSON_DECODE_ANY, NULL);
        if (!v || json_object_set_new(o, keys[i], v))
            goto fail;
    }
    return o;
fail:
    if (t)
        json_decref(t);
    if (o)
        json_decref(o);
    return NULL;
}

static json_t *struct_to_json(const floe_field *f, const floe_schema *s) {
    json_t *o = json_object(), *arr = json_array();
    if (!o || !arr)
        goto fail;
    if (json_object_set_new(o, "type", json_string("struct")))
        goto fail;
    if (s) {
        if (json_object_set_new(o, "schema-id", json_integer(s->schema_id)))
            goto fail;
        if (s->n_identifier) {
            json_t *ids = json_array();
            if (!ids || json_object_set_new(o, "identifier-field-ids", ids))
                goto fail;
            for (size_t i = 0; i < s->n_identifier; i++)
                if (json_array_append_new(ids, json_integer(s->identifier_field_ids[i])))
                    goto fail;
        }
    }
    for (size_t i = 0; i < f->nchildren; i++) {
        json_t *jf = field_to_json(&f->children[i]);
        if (!jf || json_array_append_new(arr, jf))
            goto fail;
    }
    if (json_object_set_new(o, "fields", arr)) {
        arr = NULL;
        goto fail;
    }
    return o;
fail:
    if (arr)
        json_decref(arr);
    if (o)
        json_decref(o);
    return NULL;
}

static json_t *type_to_json(const floe_field *f) {
    char buf[64];
    json_t *o = NULL;
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        return struct_to_json(f, NULL);
    case FLOE_TYPE_LIST: {
        const floe_field *el = &f->children[0];
        o = json_object();
        if (!o || json_object_set_new(o, "type", json_string("list")) ||
            json_object_set_new(o, "element-id", json_integer(el->id)) ||
            json_object_set_new(o, "element", type_to_json(el)) ||
            json_object_set_new(o, "element-required", json_boolean(el->required)))
            goto fail;
        return o;
    }
    case FLOE_TYPE_MAP: {
        const floe_field *k = &f->children[0], *v = &f->children[1];
        o = json_object();
        if (!o || json_object_set_new(o, "type", json_string("map")) ||
            json_object_set_new(o, "key-id", json_integer(k->id)) ||
            json_object_set_new(o, "key", type_to_json(k)) ||
            json_object_set_new(o, "value-id", json_integer(v->id)) ||
            json_object_set_new(o, "value", type_to_json(v)) ||
            json_object_set_new(o, "value-required", json_boolean(v->required)))
            goto fail;
        return o;
    }
    default:
        if (f->geo && f->geo_type)
            return json_string(f->geo_type);
        return json_string(floe_field_type_str(f, buf, sizeof buf));
    }
fail:
    if (o)
        json_decref(o);
    return NULL;
}

char *floe_schema_to_json(const floe_schema *s, bool pretty) {
    json_t *o = struct_to_json(&s->root, s);
    if (!o)
        return NULL;
    char *text = json_dumps(o, pretty ? JSON_INDENT(2) : JSON_COMPACT);
    json_decref(o);
    if (!text)
        return NULL;
    char *copy = floe_strdup(text); /* callers free with floe_free */
    free(text);
    return copy;
}

/* ---- copies and lookups ----------------------------------------------------------------- */

static int clone_field(floe_arena *a, const floe_field *src, floe_field *dst) {
    *dst = *src;
    dst->parent = NULL;
    dst->children = NULL;
    if (src->name && !(dst->name = floe_arena_strdup(a, src->name)))
        return FLOE_ENOMEM;
    if (src->doc && !(dst->doc = floe_arena_strdup(a, src->doc)))
        return FLOE_ENOMEM;
    if (src->initial_default_json &&
        !(dst->initial_default_json = floe_arena_strdup(a, src->initial_default_json)))
        return FLOE_ENOMEM;
    if (src->write_default_json &&
        !(dst->write_default_json = floe_arena_strdup(a, src->write_default_json)))
        return FLOE_ENOMEM;
    if (src->geo_type && !(dst->geo_type = floe_arena_strdup(a, src->geo_type)))
        return FLOE_ENOMEM;
    if (src->geo_crs && !(dst->geo_crs = floe_arena_strdup(a, src->geo_crs)))
        return FLOE_ENOMEM;
    if (src->nchildren) {
        dst->children = floe_arena_alloc(a, src->nchildren * sizeof(floe_field));
        if (!dst->children)
            return FLOE_ENOMEM;
        for (size_t i = 0; i < src->nchildren; i++)
            FLOE_FORWARD_IF_ERROR(clone_field(a, &src->children[i], &dst->children[i]));
    }
    return 0;
}

int floe_schema_clone(const floe_schema *s, floe_schema **out, floe_error *err) {
    int rc = 0;
    floe_schema *c = floe_schema_new();
    if (!c)
        return floe_error_set(err, FLOE_ENOMEM, "schema clone: out of memory");
    c->schema_id = s->schema_id;
    if (clone_field(&c->arena, &s->root, &c->root) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "schema clone: out of memory");
    if (s->n_identifier) {
        c->identifier_field_ids = floe_arena_memdup(&c->arena, s->identifier_field_ids,
                                                    s->n_identifier * sizeof(int32_t));
        if (!c->identifier_field_ids)
            FLOE_FAIL(err, FLOE_ENOMEM, "schema clone: out of memory");
        c->n_identifier = s->n_identifier;
    }
    FLOE_CHECK(floe_schema_finish(c, err));
    *out = c;
    c = NULL;
done:
    floe_schema_free(c);
    return rc;
}

static const floe_field *find_id_in(const floe_field *f, int32_t id) {
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *c = &f->children[i];
        if (c->id == id)
            return c;
        const floe_field *r = find_id_in(c, id);
        if (r)
            return r;
    }
    return NULL;
}

const floe_field *floe_schema_find_id(const floe_schema *s, int32_t id) {
    return find_id_in(&s->root, id);
}

const floe_field *floe_schema_find_path(const floe_schema *s, const char *path) {
    const floe_field *cur = &s->root;
    const char *p = path;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        const floe_field *next = NULL;
        for (size_t i = 0; i < cur->nchildren && !next; i++)
            if (strlen(cur->children[i].name) == len && !memcmp(cur->children[i].name, p, len))
                next = &cur->children[i];
        if (!next)
            return NULL;
        cur = next;
        p += len;
        if (*p == '.')
            p++;
    }
    return cur == &s->root ? NULL : cur;
}

const char *floe_field_path(const floe_field *f, char *buf, size_t n) {
    if (!n)
        return buf;
    /* collect the chain from f up to the top level */
    const floe_field *chain[SCHEMA_MAX_DEPTH + 2];
    size_t depth = 0;
    for (const floe_field *x = f; x && depth < sizeof chain / sizeof chain[0]; x = x->parent)
        chain[depth++] = x;
    size_t len = 0;
    buf[0] = '\0';
    while (depth-- > 0) {
        const char *name = chain[depth]->name ? chain[depth]->name : "?";
        int w = snprintf(buf + len, n - len, "%s%s", len ? "." : "", name);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    return buf;
}
