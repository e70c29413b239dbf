/*
 * rest_changes.c - a REST commit's requirements and updates, derived from two table
 * metadata documents: the one the commit started from and the one it wants.
 *
 * Spec: apache/iceberg open-api/rest-catalog-open-api.yaml, CommitTableRequest,
 * TableRequirement and TableUpdate; format/spec.md for the metadata fields compared.
 *
 * The writer builds its new metadata as it does for every store (floe's metadata
 * builder); this file says what changed in the protocol's terms, so the server applies
 * the same change to whatever metadata it holds, under requirements that make it refuse
 * (409) when the table moved in a way the change depends on. Fields the server derives
 * (last-updated-ms, metadata-log, snapshot-log, last-sequence-number,
 * current-snapshot-id from the main branch) are not compared.
 */
#include <inttypes.h>
#include <string.h>

#include "rest_internal.h"

/* An index of array arr by the integer field key of its elements: an object from the
 * id's decimal text to the element (the first one, when an id repeats), so a lookup is a
 * hash probe and a diff stays linear in the metadata (a table keeps thousands of
 * snapshots). Elements without an integer key are left out. NULL on OOM. */
static json_t *index_by_id(const json_t *arr, const char *key) {
    json_t *ix = json_object();
    size_t i;
    json_t *e;
    if (!ix)
        return NULL;
    json_array_foreach(arr, i, e) {
        const json_t *v = json_object_get(e, key);
        char k[24];
        if (!json_is_integer(v))
            continue;
        snprintf(k, sizeof k, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        if (!json_object_get(ix, k) && json_object_set(ix, k, e) < 0) {
            json_decref(ix);
            return NULL;
        }
    }
    return ix;
}

/* The element indexed under id, or NULL. */
static json_t *find_by_id(const json_t *ix, json_int_t id) {
    char k[24];
    snprintf(k, sizeof k, "%" JSON_INTEGER_FORMAT, id);
    return json_object_get(ix, k);
}

static json_int_t int_field(const json_t *o, const char *key, json_int_t dflt) {
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Append {"action"/"type": kind, ...} built by the caller to arr (steals obj). */
static int push(json_t *arr, json_t *obj, floe_error *err) {
    if (!obj || json_array_append_new(arr, obj) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The refs of a document: its "refs", or for a document without them (format v1) a main
 * branch at current-snapshot-id. A new reference. */
static json_t *refs_of(const json_t *doc) {
    const json_t *refs = json_object_get(doc, "refs");
    if (json_is_object(refs))
        return json_deep_copy(refs);
    json_t *out = json_object();
    json_int_t cur = int_field(doc, "current-snapshot-id", -1);
    if (out && cur >= 0)
        json_object_set_new(out, "main", json_pack("{s:s,s:I}", "type", "branch", "snapshot-id",
                                                   (json_int_t)cur));
    return out;
}

/* One id-keyed list (schemas, partition specs, sort orders): add-X for each element of
 * next that base lacks, then set-default-X when the current id changed (-1 when it is
 * the last one added, as the spec allows, so the server's id assignment applies), under
 * the requirements that pin what the change was built on. */
typedef struct id_list {
    const char *array;        /* "schemas" */
    const char *id_key;       /* "schema-id" */
    const char *current_key;  /* "current-schema-id" */
    const char *add_action;   /* "add-schema" */
    const char *add_field;    /* "schema" */
    const char *set_action;   /* "set-current-schema" */
    const char *set_field;    /* "schema-id" */
    const char *assert_cur;   /* "assert-current-schema-id" */
    const char *last_key;     /* "last-column-id" (NULL: none) */
    const char *assert_last;  /* "assert-last-assigned-field-id" */
    const char *assert_last_field; /* "last-assigned-field-id" */
} id_list;

static const id_list LISTS[] = {
    {"schemas", "schema-id", "current-schema-id", "add-schema", "schema", "set-current-schema",
     "schema-id", "assert-current-schema-id", "last-column-id", "assert-last-assigned-field-id",
     "last-assigned-field-id"},
    {"partition-specs", "spec-id", "default-spec-id", "add-spec", "spec", "set-default-spec",
     "spec-id", "assert-default-spec-id", "last-partition-id",
     "assert-last-assigned-partition-id", "last-assigned-partition-id"},
    {"sort-orders", "order-id", "default-sort-order-id", "add-sort-order", "sort-order",
     "set-default-sort-order", "sort-order-id", "assert-default-sort-order-id", NULL, NULL, NULL},
};

static int diff_list(const id_list *l, const json_t *base, const json_t *next, json_t *reqs,
                     json_t *ups, floe_error *err) {
    const json_t *ba = json_object_get(base, l->array), *na = json_object_get(next, l->array);
    json_t *bix = index_by_id(ba, l->id_key), *nix = index_by_id(na, l->id_key);
    size_t i;
    json_t *e;
    json_int_t last_added = -1;
    bool changed = false;
    int rc = 0;
    if (!bix || !nix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    json_array_foreach(ba, i, e) {
        if (!find_by_id(nix, int_field(e, l->id_key, -1)))
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "the change removes %s %" PRId64 ", which floe does not send to a REST "
                      "catalog", l->add_field, (int64_t)int_field(e, l->id_key, -1));
    }
    json_array_foreach(na, i, e) {
        json_int_t id = int_field(e, l->id_key, -1);
        const json_t *old = find_by_id(bix, id);
        if (old) {
            if (!json_equal((json_t *)old, e))
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "%s %" PRId64 " changed in place",
                          l->add_field, (int64_t)id);
            continue;
        }
        json_t *u = json_pack("{s:s,s:O}", "action", l->add_action, l->add_field, e);
        if (u && l->last_key && !strcmp(l->add_action, "add-schema") &&
            json_is_integer(json_object_get(next, l->last_key)))
            json_object_set(u, "last-column-id", json_object_get(next, l->last_key));
        FLOE_CHECK(push(ups, u, err));
        last_added = id;
        changed = true;
    }
    json_int_t bcur = int_field(base, l->current_key, -1), ncur = int_field(next, l->current_key, -1);
    if (bcur != ncur) {
        changed = true;
        FLOE_CHECK(push(ups,
                        json_pack("{s:s,s:I}", "action", l->set_action, l->set_field,
                                  ncur == last_added ? (json_int_t)-1 : ncur),
                        err));
    }
    if (!changed)
        goto done;
    FLOE_CHECK(push(reqs, json_pack("{s:s,s:I}", "type", l->assert_cur, l->current_key, bcur),
                    err));
    if (l->last_key && json_is_integer(json_object_get(base, l->last_key)))
        FLOE_CHECK(push(reqs, json_pack("{s:s,s:I}", "type", l->assert_last,
                                        l->assert_last_field, int_field(base, l->last_key, 0)),
                        err));
done:
    json_decref(bix);
    json_decref(nix);
    return rc;
}

static int diff_properties(const json_t *base, const json_t *next, json_t *ups, floe_error *err) {
    const json_t *bp = json_object_get(base, "properties"), *np = json_object_get(next, "properties");
    json_t *set = json_object(), *removed = json_array();
    int rc = 0;
    if (!set || !removed)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)np, k, v) {
        const json_t *old = json_object_get(bp, k);
        if ((!old || !json_equal((json_t *)old, v)) && json_object_set(set, k, v) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    json_object_foreach((json_t *)bp, k, v) {
        if (!json_object_get(np, k) && json_array_append_new(removed, json_string(k)) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (json_object_size(set))
        FLOE_CHECK(push(ups, json_pack("{s:s,s:O}", "action", "set-properties", "updates", set),
                        err));
    if (json_array_size(removed))
        FLOE_CHECK(push(ups, json_pack("{s:s,s:O}", "action", "remove-properties", "removals",
                                       removed),
                        err));
done:
    json_decref(set);
    json_decref(removed);
    return rc;
}

/* set-snapshot-ref with the ref's fields. */
static json_t *set_ref(const char *name, const json_t *ref) {
    json_t *u = json_pack("{s:s,s:s}", "action", "set-snapshot-ref", "ref-name", name);
    const char *keys[] = {"type", "snapshot-id", "min-snapshots-to-keep", "max-snapshot-age-ms",
                          "max-ref-age-ms"};
    for (size_t i = 0; u && i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(ref, keys[i]);
        if (v && json_object_set(u, keys[i], v) < 0) {
            json_decref(u);
            return NULL;
        }
    }
    return u;
}

static int diff_refs(const json_t *base, const json_t *next, json_t *reqs, json_t *ups,
                     floe_error *err) {
    json_t *br = refs_of(base), *nr = refs_of(next);
    int rc = 0;
    if (!br || !nr)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach(br, k, v) {
        if (json_object_get(nr, k))
            continue;
        FLOE_CHECK(push(reqs, json_pack("{s:s,s:s,s:O}", "type", "assert-ref-snapshot-id", "ref",
                                        k, "snapshot-id", json_object_get(v, "snapshot-id")),
                        err));
        FLOE_CHECK(push(ups, json_pack("{s:s,s:s}", "action", "remove-snapshot-ref", "ref-name", k),
                        err));
    }
    json_object_foreach(nr, k, v) {
        const json_t *old = json_object_get(br, k);
        if (old && json_equal((json_t *)old, v))
            continue;
        const json_t *old_id = old ? json_object_get(old, "snapshot-id") : NULL;
        if (!old_id || !json_equal((json_t *)old_id, json_object_get(v, "snapshot-id")))
            FLOE_CHECK(push(reqs, json_pack("{s:s,s:s,s:O}", "type", "assert-ref-snapshot-id",
                                            "ref", k, "snapshot-id",
                                            old_id ? (json_t *)old_id : json_null()),
                            err));
        FLOE_CHECK(push(ups, set_ref(k, v), err));
    }
done:
    json_decref(br);
    json_decref(nr);
    return rc;
}

/* statistics / partition-statistics, keyed by snapshot-id. */
static int diff_stats(const json_t *base, const json_t *next, const char *array,
                      const char *set_action, const char *field, const char *remove_action,
                      json_t *ups, floe_error *err) {
    const json_t *ba = json_object_get(base, array), *na = json_object_get(next, array);
    json_t *bix = index_by_id(ba, "snapshot-id"), *nix = index_by_id(na, "snapshot-id");
    size_t i;
    json_t *e;
    int rc = 0;
    if (!bix || !nix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    json_array_foreach(na, i, e) {
        json_int_t id = int_field(e, "snapshot-id", -1);
        const json_t *old = find_by_id(bix, id);
        if (old && json_equal((json_t *)old, e))
            continue;
        json_t *u = json_pack("{s:s,s:O}", "action", set_action, field, e);
        if (u && !strcmp(set_action, "set-statistics"))
            json_object_set_new(u, "snapshot-id", json_integer(id));
        FLOE_CHECK(push(ups, u, err));
    }
    json_array_foreach(ba, i, e) {
        json_int_t id = int_field(e, "snapshot-id", -1);
        if (!find_by_id(nix, id))
            FLOE_CHECK(push(ups, json_pack("{s:s,s:I}", "action", remove_action, "snapshot-id",
                                           id),
                            err));
    }
done:
    json_decref(bix);
    json_decref(nix);
    return rc;
}

static int diff_snapshots(const json_t *base, const json_t *next, json_t *adds, json_t *removed,
                          floe_error *err) {
    const json_t *bs = json_object_get(base, "snapshots"), *ns = json_object_get(next, "snapshots");
    json_t *bix = index_by_id(bs, "snapshot-id"), *nix = index_by_id(ns, "snapshot-id");
    size_t i;
    json_t *e;
    int rc = 0;
    if (!bix || !nix)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    json_array_foreach(ns, i, e) {
        json_int_t id = int_field(e, "snapshot-id", -1);
        const json_t *old = find_by_id(bix, id);
        if (old) {
            if (!json_equal((json_t *)old, e))
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "snapshot %" PRId64 " changed in place",
                          (int64_t)id);
            continue;
        }
        FLOE_CHECK(push(adds, json_pack("{s:s,s:O}", "action", "add-snapshot", "snapshot", e),
                        err));
    }
    json_array_foreach(bs, i, e) {
        json_t *id = json_object_get(e, "snapshot-id");
        if (!find_by_id(nix, json_integer_value(id)) && json_array_append(removed, id) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
done:
    json_decref(bix);
    json_decref(nix);
    return rc;
}

static int parse_doc(const char *text, const char *what, json_t **out, floe_error *err) {
    json_error_t je;
    json_t *d = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(d)) {
        json_decref(d);
        return floe_error_at(err, FLOE_ECORRUPT, je.position, "%s metadata: %s", what,
                             d ? "not an object" : je.text);
    }
    *out = d;
    return 0;
}

/* A format v1 document may hold its schema, spec and sort order only in the single
 * "schema" and "partition-spec" fields (the lists and current ids are optional there):
 * give doc the lists and ids a reader derives from them (schema id 0 unless it says,
 * spec 0, the unsorted order 0), so the diff compares like with like. */
static int v1_lists(json_t *doc, floe_error *err) {
    const json_t *schema = json_object_get(doc, "schema");
    const json_t *spec = json_object_get(doc, "partition-spec");
    int rc = 0;
    if (int_field(doc, "format-version", 0) != 1) /* (a create's base is {}) */
        return 0;
    if (!json_object_get(doc, "schemas") && json_is_object(schema)) {
        json_t *one = json_deep_copy(schema);
        json_int_t id = int_field(schema, "schema-id", 0);
        if (!one || json_object_set_new(one, "schema-id", json_integer(id)) < 0 ||
            json_object_set_new(doc, "schemas", json_pack("[o]", one)) < 0 ||
            json_object_set_new(doc, "current-schema-id", json_integer(id)) < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    if (rc == 0 && !json_object_get(doc, "partition-specs") && json_is_array(spec) &&
        (json_object_set_new(doc, "partition-specs",
                             json_pack("[{s:i,s:O}]", "spec-id", 0, "fields", spec)) < 0 ||
         json_object_set_new(doc, "default-spec-id", json_integer(0)) < 0))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0 && !json_object_get(doc, "sort-orders") &&
        (json_object_set_new(doc, "sort-orders",
                             json_pack("[{s:i,s:[]}]", "order-id", 0, "fields")) < 0 ||
         json_object_set_new(doc, "default-sort-order-id", json_integer(0)) < 0))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return rc;
}

int floe_rest_commit_request(const char *base_json, const char *next_json, json_t **out,
                             floe_error *err) {
    json_t *base = NULL, *next = NULL, *reqs = json_array(), *ups = json_array();
    json_t *adds = json_array(), *removed = json_array();
    int rc = 0;
    if (!reqs || !ups || !adds || !removed)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(parse_doc(base_json, "base", &base, err));
    FLOE_CHECK(parse_doc(next_json, "new", &next, err));
    FLOE_CHECK(v1_lists(base, err));
    FLOE_CHECK(v1_lists(next, err));
    const char *bu = json_string_value(json_object_get(base, "table-uuid"));
    const char *nu = json_string_value(json_object_get(next, "table-uuid"));
    if (bu && (!nu || strcmp(bu, nu)))
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "the change gives the table another uuid");
    if (bu)
        FLOE_CHECK(push(reqs, json_pack("{s:s,s:s}", "type", "assert-table-uuid", "uuid", bu), err));
    json_int_t bv = int_field(base, "format-version", 1), nv = int_field(next, "format-version", 1);
    if (nv < bv)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "the change lowers the format version");
    if (nv > bv)
        FLOE_CHECK(push(ups, json_pack("{s:s,s:I}", "action", "upgrade-format-version",
                                       "format-version", nv),
                        err));
    for (size_t i = 0; i < sizeof LISTS / sizeof LISTS[0]; i++)
        FLOE_CHECK(diff_list(&LISTS[i], base, next, reqs, ups, err));
    const char *bl = json_string_value(json_object_get(base, "location"));
    const char *nl = json_string_value(json_object_get(next, "location"));
    if (nl && (!bl || strcmp(bl, nl)))
        FLOE_CHECK(push(ups, json_pack("{s:s,s:s}", "action", "set-location", "location", nl), err));
    FLOE_CHECK(diff_properties(base, next, ups, err));
    FLOE_CHECK(diff_snapshots(base, next, adds, removed, err));
    if (json_array_extend(ups, adds) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(diff_refs(base, next, reqs, ups, err));
    FLOE_CHECK(diff_stats(base, next, "statistics", "set-statistics", "statistics",
                          "remove-statistics", ups, err));
    FLOE_CHECK(diff_stats(base, next, "partition-statistics", "set-partition-statistics",
                          "partition-statistics", "remove-partition-statistics", ups, err));
    /* last: a snapshot goes once no ref and no statistics name it */
    if (json_array_size(removed))
        FLOE_CHECK(push(ups, json_pack("{s:s,s:O}", "action", "remove-snapshots", "snapshot-ids",
                                       removed),
                        err));
    json_t *body = json_pack("{s:O,s:O}", "requirements", reqs, "updates", ups);
    if (!body)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *out = body;
done:
    json_decref(base);
    json_decref(next);
    json_decref(reqs);
    json_decref(ups);
    json_decref(adds);
    json_decref(removed);
    return rc;
}

int floe_rest_create_request(const char *metadata_json, json_t **out, floe_error *err) {
    json_t *body = NULL, *doc = NULL;
    int rc = 0;
    FLOE_CHECK(parse_doc(metadata_json, "new", &doc, err));
    const char *uuid = json_string_value(json_object_get(doc, "table-uuid"));
    if (!uuid)
        FLOE_FAIL(err, FLOE_EINVALID, "new metadata: no table-uuid");
    /* from nothing: every schema, spec, sort order, property, snapshot and ref is added */
    FLOE_CHECK(floe_rest_commit_request("{}", metadata_json, &body, err));
    json_t *ups = json_object_get(body, "updates");
    json_t *reqs = json_pack("[{s:s}]", "type", "assert-create");
    if (!reqs || json_object_set_new(body, "requirements", reqs) < 0 ||
        json_array_insert_new(ups, 0, json_pack("{s:s,s:s}", "action", "assign-uuid", "uuid",
                                                uuid)) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *out = body;
    body = NULL;
done:
    json_decref(body);
    json_decref(doc);
    return rc;
}
