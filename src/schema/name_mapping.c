/*
 * name_mapping.c - the table property schema.name-mapping.default: made from a schema,
 * checked when it is set, and carried across schema changes.
 *
 * Spec: format/spec.md "Column Projection" (files without field ids get them from the
 * name mapping: a list of {"field-id", "names", "fields"}, nested "fields" for the
 * children of structs, lists and maps) and "Schema Evolution". The reference
 * implementation updates the mapping in the same commit as the schema: added fields are
 * mapped by their name, a rename adds the new name (the old one stays: files written
 * before still hold it), a name taken by a field is removed from the other entries of its
 * level, and entries of dropped fields stay (their files still map by id). A name moved
 * so makes the older files' column of that name the new field's: floe refuses the change
 * when that column's type cannot be read as the new field's (Iceberg's update does not
 * check; floe's scans of such a table failed on every old file).
 *
 * Invariant of a mapping floe writes or accepts: within one level no name and no field id
 * appears twice, so a file column maps to at most one field.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "floe/schema.h"

#define MAPPING_MAX_DEPTH 64
#define PROP "schema.name-mapping.default"

/* ---- made from a schema -------------------------------------------------------------- */

static json_t *entry_of(const floe_field *f);

static json_t *level_of(const floe_field *parent) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < parent->nchildren; i++)
        if (json_array_append_new(arr, entry_of(&parent->children[i])) != 0) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

/* {"field-id": f's id, "names": [f's name], "fields": [...] when f has children} */
static json_t *entry_of(const floe_field *f) {
    json_t *o = json_object();
    json_t *names = json_array();
    if (!o || !names || json_array_append_new(names, json_string(f->name)) != 0 ||
        json_object_set_new(o, "field-id", json_integer(f->id)) != 0 ||
        json_object_set_new(o, "names", names) != 0) {
        json_decref(o);
        return NULL;
    }
    if (f->nchildren && json_object_set_new(o, "fields", level_of(f)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *floe_name_mapping_of_schema(const floe_schema *s) {
    json_t *arr = level_of(&s->root);
    char *text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
    json_decref(arr);
    return text;
}

/* ---- checked ------------------------------------------------------------------------- */

static bool same_name(const json_t *v, const char *name) {
    const char *s = json_string_value(v);
    return s && !strcmp(s, name);
}

static int check_level(const json_t *fields, const char *where, int depth, floe_error *err) {
    if (!json_is_array(fields))
        return floe_error_set(err, FLOE_EINVALID, PROP ": %s is not a JSON array of field "
                              "mappings", where);
    if (depth > MAPPING_MAX_DEPTH)
        return floe_error_set(err, FLOE_EINVALID, PROP ": nested deeper than %d levels",
                              MAPPING_MAX_DEPTH);
    size_t n = json_array_size(fields);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(fields, i);
        char here[160];
        const json_t *id = json_object_get(e, "field-id");
        if (json_is_integer(id))
            snprintf(here, sizeof here, "%s entry %zu (field-id %lld)", where, i + 1,
                     (long long)json_integer_value(id));
        else
            snprintf(here, sizeof here, "%s entry %zu", where, i + 1);
        if (!json_is_object(e))
            return floe_error_set(err, FLOE_EINVALID, PROP ": %s is not an object", here);
        if (id && !json_is_null(id) &&
            (!json_is_integer(id) || json_integer_value(id) < 0 ||
             json_integer_value(id) > INT32_MAX))
            return floe_error_set(err, FLOE_EINVALID, PROP ": %s: field-id is not a field id",
                                  here);
        const json_t *names = json_object_get(e, "names");
        if (!json_is_array(names))
            return floe_error_set(err, FLOE_EINVALID, PROP ": %s has no \"names\" array", here);
        for (size_t k = 0; k < json_array_size(names); k++) {
            const char *nm = json_string_value(json_array_get(names, k));
            if (!nm)
                return floe_error_set(err, FLOE_EINVALID, PROP ": %s: names holds a non-string",
                                      here);
            /* a name or an id twice on one level: a column would map to two fields */
            for (size_t j = 0; j <= i; j++) {
                const json_t *other = json_object_get(json_array_get(fields, j), "names");
                for (size_t q = 0; q < (j == i ? k : json_array_size(other)); q++)
                    if (same_name(json_array_get(other, q), nm))
                        return floe_error_set(err, FLOE_EINVALID,
                                              PROP ": %s: the name \"%s\" is mapped twice in "
                                              "one level", here, nm);
            }
        }
        for (size_t j = 0; json_is_integer(id) && j < i; j++) {
            const json_t *oid = json_object_get(json_array_get(fields, j), "field-id");
            if (json_is_integer(oid) && json_integer_value(oid) == json_integer_value(id))
                return floe_error_set(err, FLOE_EINVALID,
                                      PROP ": %s: field-id %lld is mapped twice in one level",
                                      here, (long long)json_integer_value(id));
        }
        const json_t *sub = json_object_get(e, "fields");
        if (sub && !json_is_null(sub)) {
            char inner[200];
            snprintf(inner, sizeof inner, "the fields of %s", here);
            FLOE_FORWARD_IF_ERROR(check_level(sub, inner, depth + 1, err));
        }
    }
    return 0;
}

static int load(const char *text, json_t **out, floe_error *err) {
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return floe_error_set(err, FLOE_EINVALID, PROP ": not JSON: %s (at byte %d)", je.text,
                              je.position);
    int rc = check_level(root, "the mapping", 0, err);
    if (rc < 0) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return 0;
}

int floe_name_mapping_check(const char *text, floe_error *err) {
    json_t *root = NULL;
    FLOE_FORWARD_IF_ERROR(load(text, &root, err));
    json_decref(root);
    return 0;
}

/* ---- carried across a schema change -------------------------------------------------- */

static json_t *entry_by_id(json_t *fields, int32_t id) {
    for (size_t i = 0; i < json_array_size(fields); i++) {
        json_t *e = json_array_get(fields, i);
        json_t *fid = json_object_get(e, "field-id");
        if (json_is_integer(fid) && json_integer_value(fid) == id)
            return e;
    }
    return NULL;
}

static bool has_name(const json_t *names, const char *name) {
    for (size_t k = 0; k < json_array_size(names); k++)
        if (same_name(json_array_get(names, k), name))
            return true;
    return false;
}

/* The schemas a mapping is carried across, and where a refusal is reported. */
typedef struct evolve_ctx {
    const floe_schema *cur;
    const floe_schema *const *older; /* the table's schemas, for fields cur lacks */
    size_t nolder;
    floe_error *err;
} evolve_ctx;

/* Field id as the table knows it: in the current schema, else the newest older one. */
static const floe_field *known_field(const evolve_ctx *x, int32_t id) {
    const floe_field *f = floe_schema_find_id(x->cur, id);
    for (size_t i = x->nolder; !f && i-- > 0;)
        f = floe_schema_find_id(x->older[i], id);
    return f;
}

/* Can a file column written as field `was` be read as field `now`? The same type or a
 * promotion (floe_schema_type_promotable); a struct's fields of the same name, a list's
 * elements, a map's keys and values likewise (their columns map by name too). */
static bool readable_as(const floe_field *was, const floe_field *now, int depth) {
    if (was->type != now->type || !floe_type_is_nested(was->type))
        return floe_schema_type_promotable(was, now);
    if (depth >= MAPPING_MAX_DEPTH || was->type == FLOE_TYPE_VARIANT)
        return true;
    for (size_t i = 0; i < was->nchildren; i++)
        for (size_t k = 0; k < now->nchildren; k++)
            if (!strcmp(was->children[i].name, now->children[k].name) &&
                !readable_as(&was->children[i], &now->children[k], depth + 1))
                return false;
    return true;
}

/* Field f takes its name on this level: the name leaves the other entries, joins f's
 * (entry). Files without field ids holding a column of that name read it as f from then
 * on: refused (FLOE_EINVALID) when the field that name mapped to had a type f cannot
 * read. 0, or a negative code with err set (FLOE_ENOMEM too). */
static int take_name(const evolve_ctx *x, json_t *fields, json_t *entry, const floe_field *f) {
    const char *name = f->name;
    for (size_t i = 0; i < json_array_size(fields); i++) {
        json_t *other = json_array_get(fields, i);
        json_t *names = json_object_get(other, "names");
        if (other == entry || !has_name(names, name))
            continue;
        json_t *oid = json_object_get(other, "field-id");
        const floe_field *was = json_is_integer(oid)
                                    ? known_field(x, (int32_t)json_integer_value(oid))
                                    : NULL;
        if (was && !readable_as(was, f, 0)) {
            char wt[96], nt[96];
            return floe_error_set(x->err, FLOE_EINVALID,
                                  "column %s: the table's name mapping (" PROP ") reads the "
                                  "column %s of files without field ids as field %d (%s); "
                                  "the new field %d (%s) taking the name would read those "
                                  "values as %s, which is no type promotion: give it another "
                                  "name, or the type %s (or one it is promoted to)",
                                  name, name, (int)was->id,
                                  floe_field_type_str(was, wt, sizeof wt), (int)f->id,
                                  floe_field_type_str(f, nt, sizeof nt), nt, wt);
        }
        for (size_t k = json_array_size(names); k-- > 0;)
            if (same_name(json_array_get(names, k), name))
                json_array_remove(names, k);
    }
    json_t *names = json_object_get(entry, "names");
    if (!has_name(names, name) && json_array_append_new(names, json_string(name)) != 0)
        return floe_error_set(x->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The children of next_parent on the level `fields` (the parent's entry's "fields"). */
static int evolve_level(const evolve_ctx *x, json_t *fields, const floe_field *next_parent,
                        int depth) {
    for (size_t i = 0; i < next_parent->nchildren; i++) {
        const floe_field *f = &next_parent->children[i];
        const floe_field *was = floe_schema_find_id(x->cur, f->id);
        json_t *e = entry_by_id(fields, f->id);
        if (!e && !was) { /* added: mapped by its name, and its fields by theirs */
            if (!(e = entry_of(f)) || json_array_append_new(fields, e) != 0)
                return floe_error_set(x->err, FLOE_ENOMEM, "out of memory");
            FLOE_FORWARD_IF_ERROR(take_name(x, fields, e, f));
            continue;
        }
        if (!e)
            continue; /* a field the mapping leaves out stays out */
        if (!was || strcmp(was->name, f->name))
            FLOE_FORWARD_IF_ERROR(take_name(x, fields, e, f));
        if (!f->nchildren || depth >= MAPPING_MAX_DEPTH)
            continue;
        json_t *sub = json_object_get(e, "fields");
        bool made = !json_is_array(sub);
        if (made && (!(sub = json_array()) || json_object_set_new(e, "fields", sub) != 0))
            return floe_error_set(x->err, FLOE_ENOMEM, "out of memory");
        FLOE_FORWARD_IF_ERROR(evolve_level(x, sub, f, depth + 1));
        if (made && !json_array_size(sub))
            json_object_del(e, "fields");
    }
    return 0;
}

int floe_name_mapping_evolve(const char *text, const floe_schema *cur, const floe_schema *next,
                             const floe_schema *const *older, size_t nolder, char **out,
                             floe_error *err) {
    json_t *root = NULL;
    char *before = NULL, *after = NULL;
    int rc = 0;
    evolve_ctx x = {.cur = cur, .older = older, .nolder = nolder, .err = err};
    *out = NULL;
    FLOE_CHECK(load(text, &root, err));
    if (!(before = json_dumps(root, JSON_COMPACT)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(evolve_level(&x, root, &next->root, 0));
    if (!(after = json_dumps(root, JSON_COMPACT)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (strcmp(before, after)) {
        *out = after;
        after = NULL;
    }
done:
    floe_free(before);
    floe_free(after);
    json_decref(root);
    return rc;
}
