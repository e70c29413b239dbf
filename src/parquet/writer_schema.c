/*
 * writer_schema.c - the Parquet writer's schema conversion.
 */
#include <stdio.h>
#include <string.h>

#include "parquet/writer_internal.h"

/* =====================================================================================
 * Schema conversion (Iceberg -> Parquet SchemaElements)
 * =================================================================================== */

typedef struct schema_build {
    floe_pq_writer *w;
    size_t n, cap;
    const char *path[FLOE_PQ_PATH_MAX];
    size_t depth;
    size_t leaf;
    floe_error *err;
} schema_build;

static floe_pq_schema_element *elem_new(schema_build *sb) {
    if (sb->n == sb->cap)
        return NULL;
    floe_pq_schema_element *e = &sb->w->elems[sb->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* Children that have a Parquet node: all but those of type unknown (format/spec.md
 * Appendix A: unknown is not stored in data files). */
static int32_t stored_children(const floe_field *f) {
    int32_t n = 0;
    for (size_t i = 0; i < f->nchildren; i++)
        n += f->children[i].type != FLOE_TYPE_UNKNOWN;
    return n;
}

static size_t count_elems(const floe_field *f) {
    size_t n = 1;
    if (f->type == FLOE_TYPE_LIST || f->type == FLOE_TYPE_MAP)
        n++; /* the repeated group */
    for (size_t i = 0; i < f->nchildren; i++)
        n += count_elems(&f->children[i]);
    return n;
}

static int set_leaf_type(floe_pq_schema_element *e, const floe_field *f, floe_error *err) {
    e->has_type = true;
    switch (f->phys) {
    case FLOE_PHYS_BOOLEAN: e->type = FLOE_PQ_BOOLEAN; break;
    case FLOE_PHYS_INT32: e->type = FLOE_PQ_INT32; break;
    case FLOE_PHYS_INT64: e->type = FLOE_PQ_INT64; break;
    case FLOE_PHYS_FLOAT: e->type = FLOE_PQ_FLOAT; break;
    case FLOE_PHYS_DOUBLE: e->type = FLOE_PQ_DOUBLE; break;
    case FLOE_PHYS_BYTE_ARRAY: e->type = FLOE_PQ_BYTE_ARRAY; break;
    case FLOE_PHYS_FIXED:
        e->type = FLOE_PQ_FIXED_LEN_BYTE_ARRAY;
        e->has_type_length = true;
        e->type_length = f->type_length;
        break;
    default:
        return floe_error_set(err, FLOE_EUNSUPPORTED, "field '%s': cannot write physical type %d",
                              f->name, (int)f->phys);
    }
    floe_pq_logical_type *lt = &e->logical_type;
    switch (f->type) {
    case FLOE_TYPE_STRING:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_STRING;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_UTF8;
        break;
    case FLOE_TYPE_DATE:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_DATE;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_DATE;
        break;
    case FLOE_TYPE_TIME:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIME;
        lt->is_adjusted_to_utc = false;
        lt->time_unit = FLOE_PQ_MICROS;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_TIME_MICROS;
        break;
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIMESTAMP;
        lt->is_adjusted_to_utc = f->type == FLOE_TYPE_TIMESTAMPTZ;
        lt->time_unit = FLOE_PQ_MICROS;
        /* LogicalTypes.md: writers must annotate local timestamps with the legacy
         * TIMESTAMP_MICROS too */
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_TIMESTAMP_MICROS;
        break;
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIMESTAMP;
        lt->is_adjusted_to_utc = f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        lt->time_unit = FLOE_PQ_NANOS; /* no ConvertedType exists for nanoseconds */
        break;
    case FLOE_TYPE_DECIMAL:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_DECIMAL;
        lt->decimal_precision = f->precision;
        lt->decimal_scale = f->scale;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_DECIMAL;
        e->has_precision = e->has_scale = true;
        e->precision = f->precision;
        e->scale = f->scale;
        break;
    case FLOE_TYPE_UUID:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_UUID;
        break;
    case FLOE_TYPE_BINARY:
        if (!f->geo)
            break;
        /* LogicalTypes.md GEOMETRY / GEOGRAPHY: WKB with the type's CRS and edge
         * algorithm (each left out when the Iceberg type leaves it to its default) */
        e->has_logical_type = true;
        lt->kind = f->geo == FLOE_GEO_GEOGRAPHY ? FLOE_PQ_LT_GEOGRAPHY : FLOE_PQ_LT_GEOMETRY;
        lt->geo_crs = f->geo_crs;
        lt->has_geo_algorithm = f->geo == FLOE_GEO_GEOGRAPHY && f->geo_algo >= 0;
        lt->geo_algorithm = f->geo_algo;
        break;
    default:
        break;
    }
    return 0;
}

/* The first struct without fields under f (depth names above it in path): its dotted
 * name into name, true; false when there is none. */
static bool find_empty_struct(const floe_field *f, const char **path, size_t depth,
                              char *name, size_t cap) {
    if (depth == FLOE_PQ_PATH_MAX)
        return false; /* deeper than the writer goes: build_field refuses it */
    path[depth++] = f->name;
    if (f->type == FLOE_TYPE_STRUCT && stored_children(f) == 0) {
        size_t n = 0;
        name[0] = 0;
        for (size_t i = 0; i < depth && n < cap; i++)
            n += (size_t)snprintf(name + n, cap - n, "%s%s", i ? "." : "", path[i]);
        return true;
    }
    for (size_t i = 0; f->type != FLOE_TYPE_VARIANT && i < f->nchildren; i++)
        if (find_empty_struct(&f->children[i], path, depth, name, cap))
            return true;
    return false;
}

int floe_pq_schema_writable(const floe_schema *schema, floe_error *err) {
    /* Parquet stores leaves only: a group without children has no column to carry its
     * values or nulls, and readers refuse such a file */
    if (stored_children(&schema->root) == 0)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the schema has no fields Parquet stores (type unknown is "
                              "never stored), which Parquet cannot store");
    const char *path[FLOE_PQ_PATH_MAX];
    char name[512];
    for (size_t i = 0; i < schema->root.nchildren; i++)
        if (find_empty_struct(&schema->root.children[i], path, 0, name, sizeof name))
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "field '%s' is a struct with no fields, which Parquet "
                                  "cannot store (a group needs at least one column): drop "
                                  "the field or give it one",
                                  name);
    return 0;
}

static int build_field(schema_build *sb, const floe_field *f) {
    floe_pq_writer *w = sb->w;
    if (f->type == FLOE_TYPE_UNKNOWN)
        return 0; /* never stored: no node */
    floe_pq_schema_element *e = elem_new(sb);
    if (!e)
        return floe_error_set(sb->err, FLOE_EINTERNAL, "schema element count");
    /* floe_schema_finish refuses deeper schemas; a guard against one built by hand */
    size_t names = sb->depth + 1 + (f->type == FLOE_TYPE_LIST || f->type == FLOE_TYPE_MAP);
    if (names > sizeof sb->path / sizeof sb->path[0])
        return floe_error_set(sb->err, FLOE_EUNSUPPORTED,
                              "field '%s': Parquet path deeper than %d names", f->name,
                              FLOE_PQ_PATH_MAX);
    e->name = f->name;
    e->has_repetition_type = true;
    e->repetition_type = f->required ? FLOE_PQ_REQUIRED : FLOE_PQ_OPTIONAL;
    e->has_field_id = f->id >= 0; /* a variant's parts have no id */
    e->field_id = f->id;
    size_t saved = sb->depth;
    sb->path[sb->depth++] = f->name;
    int rc = 0;
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        e->has_num_children = true;
        e->num_children = stored_children(f);
        for (size_t i = 0; i < f->nchildren && rc == 0; i++)
            rc = build_field(sb, &f->children[i]);
        break;
    case FLOE_TYPE_VARIANT: /* VariantEncoding.md: group (VARIANT(1)) { metadata; value } */
        e->has_num_children = true;
        e->num_children = (int32_t)f->nchildren;
        e->has_logical_type = true;
        e->logical_type.kind = FLOE_PQ_LT_VARIANT;
        e->logical_type.has_variant_version = true;
        e->logical_type.variant_version = 1;
        for (size_t i = 0; i < f->nchildren && rc == 0; i++)
            rc = build_field(sb, &f->children[i]);
        break;
    case FLOE_TYPE_LIST:
    case FLOE_TYPE_MAP: {
        bool is_list = f->type == FLOE_TYPE_LIST;
        e->has_num_children = true;
        e->num_children = 1;
        e->has_logical_type = true;
        e->logical_type.kind = is_list ? FLOE_PQ_LT_LIST : FLOE_PQ_LT_MAP;
        e->has_converted_type = true;
        e->converted_type = is_list ? FLOE_PQ_CT_LIST : FLOE_PQ_CT_MAP;
        floe_pq_schema_element *g = elem_new(sb);
        if (!g)
            return floe_error_set(sb->err, FLOE_EINTERNAL, "schema element count");
        g->name = is_list ? "list" : "key_value";
        g->has_repetition_type = true;
        g->repetition_type = FLOE_PQ_REPEATED;
        g->has_num_children = true;
        g->num_children = (int32_t)f->nchildren;
        sb->path[sb->depth++] = g->name;
        for (size_t i = 0; i < f->nchildren && rc == 0; i++)
            rc = build_field(sb, &f->children[i]);
        break;
    }
    default: {
        if ((rc = set_leaf_type(e, f, sb->err)) < 0)
            break;
        if (sb->leaf >= w->ncols || f->leaf != (int32_t)sb->leaf)
            return floe_error_set(sb->err, FLOE_EINVALID,
                                  "field '%s': leaf order does not match the schema", f->name);
        col *c = &w->cols[sb->leaf++];
        c->npath = sb->depth;
        c->path = floe_arena_alloc(&w->arena, sb->depth * sizeof *c->path);
        if (!c->path)
            return floe_error_set(sb->err, FLOE_ENOMEM, "out of memory");
        memcpy(c->path, sb->path, sb->depth * sizeof *c->path);
        break;
    }
    }
    sb->depth = saved;
    return rc;
}

int pqw_build_schema(floe_pq_writer *w, floe_error *err) {
    const floe_schema *s = w->schema;
    FLOE_FORWARD_IF_ERROR(floe_pq_schema_writable(s, err));
    size_t n = 1;
    for (size_t i = 0; i < s->root.nchildren; i++)
        n += count_elems(&s->root.children[i]);
    w->elems = floe_arena_alloc(&w->arena, n * sizeof *w->elems);
    if (!w->elems)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    schema_build sb;
    memset(&sb, 0, sizeof sb);
    sb.w = w;
    sb.cap = n;
    sb.err = err;
    floe_pq_schema_element *root = elem_new(&sb);
    root->name = "table";
    root->has_num_children = true;
    root->num_children = stored_children(&s->root);
    for (size_t i = 0; i < s->root.nchildren; i++)
        FLOE_FORWARD_IF_ERROR(build_field(&sb, &s->root.children[i]));
    if (sb.leaf != w->ncols)
        return floe_error_set(err, FLOE_EINVALID, "schema has %zu leaves, found %zu", w->ncols,
                              sb.leaf);
    w->nelems = sb.n;
    return 0;
}
