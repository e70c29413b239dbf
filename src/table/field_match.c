/*
 * field_match.c - which node of a data file's Parquet tree holds each field of a table
 * schema, and the table's name mapping.
 *
 * Spec: format/spec.md "Column Projection": columns are selected by field id; for files
 * without ids, schema.name-mapping.default maps names to ids ("names" per field, nested
 * "fields" for the children of structs, lists and maps). Rules, per struct level of the
 * file:
 *   - a level whose fields carry any field id is matched by id only;
 *   - else, when the table has a name mapping (any, even `[]`), by the names the mapping
 *     gives the field's id at that level: a field the mapping does not name (or whose
 *     parent entry has no "fields") is not in the file, so it reads as its default;
 *   - else (no mapping at all) by the field's current name, as readers of unmanaged
 *     files do.
 * A list's element and a map's key and value are structural: the element, key and value
 * of the file's list or map (floe_pq_node_shape), whatever their names; the mapping's
 * entries for them only carry their own nested "fields". A table field whose file node
 * has another shape (a struct in the table, a primitive in the file) is matched, and
 * the reader refuses it with a message naming both; its children are not matched.
 * A field of type unknown is never matched: a column a file holds for it is ignored and
 * the field reads null (format/spec.md Appendix A).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "floe/scan.h"

struct floe_name_mapping {
    json_t *root; /* a JSON array of field mappings */
};

int floe_name_mapping_parse(const char *json, floe_name_mapping **out, floe_error *err) {
    *out = NULL;
    if (!json)
        return 0;
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    if (!json_is_array(root)) {
        json_decref(root);
        return floe_error_set(err, FLOE_ECORRUPT,
                              "schema.name-mapping.default: not a JSON array of field "
                              "mappings%s%s", root ? "" : ": ", root ? "" : je.text);
    }
    floe_name_mapping *m = floe_calloc(1, sizeof *m);
    if (!m) {
        json_decref(root);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    m->root = root;
    *out = m;
    return 0;
}

void floe_name_mapping_free(floe_name_mapping *m) {
    if (!m)
        return;
    json_decref(m->root);
    floe_free(m);
}

typedef struct match_entry {
    int32_t id;
    const floe_pq_node *node;
} match_entry;

struct floe_field_match {
    match_entry *v;
    size_t n, cap;
};

typedef struct match_ctx {
    floe_field_match *m;
    bool mapping;        /* the table has a name mapping */
    floe_error *err;
} match_ctx;

/* The mapping entry for field id among `fields` (a JSON array), or NULL. */
static json_t *mapping_entry(json_t *fields, int32_t id) {
    for (size_t i = 0; json_is_array(fields) && i < json_array_size(fields); i++) {
        json_t *e = json_array_get(fields, i);
        json_t *fid = json_object_get(e, "field-id");
        if (json_is_integer(fid) && json_integer_value(fid) == id)
            return e;
    }
    return NULL;
}

static json_t *entry_fields(json_t *entry) {
    return entry ? json_object_get(entry, "fields") : NULL;
}

static int push(match_ctx *c, int32_t id, const floe_pq_node *nd) {
    floe_field_match *m = c->m;
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 32;
        match_entry *nv = floe_realloc(m->v, nc * sizeof *nv);
        if (!nv)
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        m->v = nv;
        m->cap = nc;
    }
    m->v[m->n++] = (match_entry){id, nd};
    return 0;
}

/* The child of struct node parent that holds table field f. */
static const floe_pq_node *find_child(const match_ctx *c, const floe_pq_node *parent,
                                      const floe_field *f, json_t *map_fields) {
    bool ids = false;
    for (size_t i = 0; i < parent->nchildren; i++)
        ids |= parent->children[i].has_field_id;
    if (ids) {
        for (size_t i = 0; i < parent->nchildren; i++)
            if (parent->children[i].has_field_id && parent->children[i].field_id == f->id)
                return &parent->children[i];
        return NULL;
    }
    if (c->mapping) {
        json_t *names = json_object_get(mapping_entry(map_fields, f->id), "names");
        for (size_t k = 0; json_is_array(names) && k < json_array_size(names); k++) {
            const char *nm = json_string_value(json_array_get(names, k));
            for (size_t i = 0; nm && i < parent->nchildren; i++)
                if (!strcmp(parent->children[i].name, nm))
                    return &parent->children[i];
        }
        return NULL;
    }
    for (size_t i = 0; i < parent->nchildren; i++)
        if (!strcmp(parent->children[i].name, f->name))
            return &parent->children[i];
    return NULL;
}

static int match_children(match_ctx *c, const floe_field *f, const floe_pq_node *nd,
                          json_t *map_fields, int depth);

static int match_field(match_ctx *c, const floe_field *f, const floe_pq_node *nd,
                       bool as_element, json_t *map_fields, int depth) {
    FLOE_FORWARD_IF_ERROR(push(c, f->id, nd));
    if (depth > 64)
        return 0;
    const floe_pq_node *child;
    floe_pq_shape shape = floe_pq_node_shape(nd, as_element, &child);
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        return shape == FLOE_PQ_SHAPE_STRUCT ? match_children(c, f, nd, map_fields, depth) : 0;
    case FLOE_TYPE_LIST:
        if (shape != FLOE_PQ_SHAPE_LIST)
            return 0;
        return match_field(c, &f->children[0], child,
                           child == nd || child == &nd->children[0],
                           entry_fields(mapping_entry(map_fields, f->children[0].id)),
                           depth + 1);
    case FLOE_TYPE_MAP:
        if (shape != FLOE_PQ_SHAPE_MAP)
            return 0;
        for (size_t k = 0; k < 2 && k < child->nchildren; k++)
            FLOE_FORWARD_IF_ERROR(match_field(
                c, &f->children[k], &child->children[k], false,
                entry_fields(mapping_entry(map_fields, f->children[k].id)), depth + 1));
        return 0;
    default:
        return 0;
    }
}

static int match_children(match_ctx *c, const floe_field *f, const floe_pq_node *nd,
                          json_t *map_fields, int depth) {
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *ch = &f->children[i];
        if (ch->type == FLOE_TYPE_UNKNOWN)
            continue; /* spec Appendix A: a file's column for it is ignored (reads null) */
        const floe_pq_node *cn = find_child(c, nd, ch, map_fields);
        if (cn)
            FLOE_FORWARD_IF_ERROR(match_field(
                c, ch, cn, false, entry_fields(mapping_entry(map_fields, ch->id)), depth + 1));
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b) {
    int32_t x = ((const match_entry *)a)->id, y = ((const match_entry *)b)->id;
    return (x > y) - (x < y);
}

int floe_field_match_new(const floe_schema *schema, const floe_pq_node *root,
                         const floe_name_mapping *mapping, floe_field_match **out,
                         floe_error *err) {
    floe_field_match *m = floe_calloc(1, sizeof *m);
    if (!m)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    match_ctx c = {.m = m, .mapping = mapping != NULL, .err = err};
    int rc = match_children(&c, &schema->root, root, mapping ? mapping->root : NULL, 0);
    if (rc < 0) {
        floe_field_match_free(m);
        return rc;
    }
    if (m->n > 1)
        qsort(m->v, m->n, sizeof *m->v, cmp_entry);
    *out = m;
    return 0;
}

const floe_pq_node *floe_field_match_node(const floe_field_match *m, const floe_field *f) {
    match_entry key = {f->id, NULL};
    const match_entry *e = m->n ? bsearch(&key, m->v, m->n, sizeof *m->v, cmp_entry) : NULL;
    return e ? e->node : NULL;
}

void floe_field_match_free(floe_field_match *m) {
    if (!m)
        return;
    floe_free(m->v);
    floe_free(m);
}
