/*
 * metadata_build.c - builders for the metadata changes a commit makes: new table, add
 * snapshot + move a branch, set/remove properties, add schema / set current schema, add
 * partition spec / set default, refs, remove snapshots (expiry).
 *
 * Spec: format/spec.md "Table Metadata Fields" (required v2 fields; v3 next-row-id),
 * "Snapshots" (v3 first-row-id and added-rows, "Snapshot Row IDs"), "Snapshot References",
 * "Row Lineage" ("Row Lineage for Upgraded Tables": next-row-id starts at 0), "Appendix E"
 * (writing v2 and v3 metadata; upgrading v1), "Appendix F" (snapshot ids, -1 for no
 * current snapshot).
 *
 * Invariants:
 *   - A builder edits its own deep copy of the base document; the base is never touched.
 *   - The working document always has the v2 fields; a v1 base stays format v1 (no
 *     sequence numbers, "schema" and "partition-spec" kept current) unless
 *     floe_metadata_builder_upgrade is called. finish() re-derives and re-validates the
 *     typed view, so a builder cannot hand out metadata its own parser would reject.
 *   - A v3 document has next-row-id; every snapshot added to it carries first-row-id (the
 *     next-row-id it was committed on) and added-rows, and next-row-id advances past them
 *     in the same change (for any branch).
 *   - Keys floe does not know are carried over untouched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/defaults.h"
#include "floe/io.h"
#include "floe/schema.h"
#include "metadata_internal.h"

/* What the builder knows of one id-keyed list of doc (schemas, partition specs, sort
 * orders), so an update does not walk the whole list: a table may keep 100,000 sort
 * orders and a commit may carry 1,000 updates. It holds while the list is the array it
 * was taken from with the count it had when last brought up to date; anything else
 * (an array replaced, or grown or shrunk behind the builder's back) rebuilds it. */
typedef struct id_cache {
    const json_t *arr;  /* the list it describes; NULL: nothing known */
    size_t n;           /* its element count then */
    int32_t max_id;     /* the highest id in it (-1: none) */
    json_t *ids;        /* id (decimal text) -> true */
    json_t *by_fields;  /* sort orders: compact "fields" text -> order-id (the first) */
} id_cache;

enum { IDS_SCHEMAS, IDS_SPECS, IDS_ORDERS, IDS_N };

struct floe_metadata_builder {
    const floe_table_metadata *base; /* borrowed; NULL for a new table */
    json_t *doc;                     /* working copy, v2 fields always present */
    int format_version;              /* 1 (kept until upgraded), 2, or 3 */
    id_cache ids[IDS_N];
};

static void id_cache_clear(id_cache *c) {
    json_decref(c->ids);
    json_decref(c->by_fields);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------------------------------
 * ids
 * ------------------------------------------------------------------------------------- */

int64_t floe_metadata_new_snapshot_id(void) {
    /* Appendix F: XOR the halves of a random uuid, keep it positive. */
    uint8_t u[16];
    floe_random_bytes(u, sizeof u);
    int64_t id = (int64_t)((floe_load_le64(u) ^ floe_load_le64(u + 8)) & (uint64_t)INT64_MAX);
    return id ? id : 1;
}

/* ---------------------------------------------------------------------------------------
 * json helpers
 * ------------------------------------------------------------------------------------- */

static int nomem(floe_error *err) { return floe_error_set(err, FLOE_ENOMEM, "out of memory"); }

/* A string jansson refused: out of memory, or not UTF-8. */
static int bad_string(const char *what, const char *key, floe_error *err) {
    if (floe_metadata_json_take_alloc_failure())
        return nomem(err);
    return floe_error_set(err, FLOE_EINVALID, "%s %s: key or value is not valid UTF-8", what, key);
}

/* json_object_set_new that reports OOM (the value is consumed either way). */
static int set_new(json_t *obj, const char *key, json_t *v, floe_error *err) {
    if (!v || json_object_set_new(obj, key, v) != 0)
        return nomem(err);
    return 0;
}

static int64_t jlong(const json_t *obj, const char *key, int64_t dflt) {
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* The array at key, created empty when absent or null. NULL on OOM or wrong type. */
static json_t *ensure_array(json_t *obj, const char *key) {
    json_t *a = json_object_get(obj, key);
    if (json_is_array(a))
        return a;
    if (a && !json_is_null(a))
        return NULL;
    a = json_array();
    if (!a || json_object_set_new(obj, key, a) != 0)
        return NULL;
    return a;
}

static json_t *ensure_object(json_t *obj, const char *key) {
    json_t *o = json_object_get(obj, key);
    if (json_is_object(o))
        return o;
    if (o && !json_is_null(o))
        return NULL;
    o = json_object();
    if (!o || json_object_set_new(obj, key, o) != 0)
        return NULL;
    return o;
}

static int parse_json_arg(const char *text, const char *what, json_t **out, floe_error *err) {
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!v)
        return floe_error_set(err, FLOE_EINVALID, "%s: line %d column %d: %s", what, jerr.line,
                              jerr.column, jerr.text);
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * partition spec fields: validate and assign field ids above *last_id
 * ------------------------------------------------------------------------------------- */

static int normalize_spec_fields(json_t *fields, int32_t *last_id, floe_error *err) {
    if (!json_is_array(fields))
        return floe_error_set(err, FLOE_EINVALID, "partition spec: \"fields\" must be an array");
    for (size_t i = 0; i < json_array_size(fields); i++) {
        json_t *f = json_array_get(fields, i);
        if (!json_is_object(f) || !json_is_string(json_object_get(f, "transform")) ||
            !json_is_string(json_object_get(f, "name")) ||
            !(json_is_integer(json_object_get(f, "source-id")) ||
              json_is_array(json_object_get(f, "source-ids"))))
            return floe_error_set(err, FLOE_EINVALID,
                                  "partition spec field %zu needs \"source-id\", \"transform\" "
                                  "and \"name\"",
                                  i);
        json_t *fid = json_object_get(f, "field-id");
        if (!fid) {
            if (*last_id >= INT32_MAX)
                return floe_error_set(err, FLOE_ELIMIT, "partition field ids exhausted");
            if (set_new(f, "field-id", json_integer(++*last_id), err) < 0)
                return FLOE_ENOMEM;
        } else if (!json_is_integer(fid)) {
            return floe_error_set(err, FLOE_EINVALID, "partition spec field %zu: bad field-id", i);
        } else if (json_integer_value(fid) > *last_id && json_integer_value(fid) <= INT32_MAX) {
            *last_id = (int32_t)json_integer_value(fid);
        }
    }
    return 0;
}

/* Spec JSON given as {"fields":[...]} or a bare list: returns the fields array (new ref). */
static int spec_fields_from_arg(const char *spec_json, json_t **fields, floe_error *err) {
    json_t *v;
    int rc = parse_json_arg(spec_json, "partition spec", &v, err);
    if (rc < 0)
        return rc;
    if (json_is_array(v)) {
        *fields = v;
        return 0;
    }
    json_t *f = json_is_object(v) ? json_object_get(v, "fields") : NULL;
    if (!json_is_array(f)) {
        json_decref(v);
        return floe_error_set(err, FLOE_EINVALID, "partition spec must be {\"fields\":[...]}");
    }
    json_incref(f);
    json_decref(v);
    *fields = f;
    return 0;
}

/* Validate an Iceberg schema JSON with the schema module; returns the parsed object. */
static int schema_from_arg(const char *schema_json, json_t **out, int32_t *highest,
                           floe_error *err) {
    floe_schema *s = NULL;
    int rc = floe_schema_parse(schema_json, strlen(schema_json), &s, err);
    if (rc < 0)
        return rc;
    if ((rc = floe_schema_check_defaults(s, err)) < 0) {
        floe_schema_free(s);
        return rc;
    }
    /* identifier fields as set-identifier-fields takes them (Iceberg Java's Schema
     * refuses the same) */
    for (size_t i = 0; i < s->n_identifier; i++) {
        const floe_field *f = floe_schema_find_id(s, s->identifier_field_ids[i]);
        const char *why = f ? floe_schema_identifier_refusal(f) : "it is not in the schema";
        if (why) {
            char path[512];
            rc = floe_error_set(err, FLOE_EINVALID,
                                "schema: identifier-field-ids: field %d (%s): %s",
                                (int)s->identifier_field_ids[i],
                                f ? floe_field_path(f, path, sizeof path) : "?", why);
            floe_schema_free(s);
            return rc;
        }
    }
    int32_t hi = s->highest_field_id;
    floe_schema_free(s);
    json_t *v;
    if ((rc = parse_json_arg(schema_json, "schema", &v, err)) < 0)
        return rc;
    if (!json_is_object(v) || !json_is_array(json_object_get(v, "fields"))) {
        json_decref(v);
        return floe_error_set(err, FLOE_EINVALID, "schema must be a struct object with \"fields\"");
    }
    if (!json_object_get(v, "type") && set_new(v, "type", json_string("struct"), err) < 0) {
        json_decref(v);
        return FLOE_ENOMEM;
    }
    *out = v;
    *highest = hi;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * v1 -> v2 upgrade of the working document (spec Appendix E)
 * ------------------------------------------------------------------------------------- */

/* Give a v1 document the fields the builder works on (schemas, current-schema-id,
 * partition-specs, default-spec-id, last-partition-id, sort-orders, table-uuid). With
 * to_v2 it becomes a v2 document (format-version 2, sequence numbers 0 for the v1
 * snapshots, the deprecated "schema" and "partition-spec" dropped); without, it stays v1
 * and finish() keeps "schema" and "partition-spec" equal to the current ones, as v1
 * writers must. */
static int normalize_v1(json_t *doc, const floe_table_metadata *base, bool to_v2,
                        floe_error *err) {
    int rc;
    if ((rc = set_new(doc, "format-version", json_integer(to_v2 ? 2 : 1), err)) < 0)
        return rc;
    if (!json_is_string(json_object_get(doc, "table-uuid"))) {
        char uuid[37];
        floe_uuid4(uuid);
        if ((rc = set_new(doc, "table-uuid", json_string(uuid), err)) < 0)
            return rc;
    }
    if (to_v2 && !json_is_integer(json_object_get(doc, "last-sequence-number")) &&
        (rc = set_new(doc, "last-sequence-number", json_integer(0), err)) < 0)
        return rc;
    json_t *snaps = json_object_get(doc, "snapshots");
    for (size_t i = 0; to_v2 && i < json_array_size(snaps); i++) { /* v1 snapshots: 0 */
        json_t *s = json_array_get(snaps, i);
        if (!json_object_get(s, "sequence-number") &&
            (rc = set_new(s, "sequence-number", json_integer(0), err)) < 0)
            return rc;
    }
    /* schemas: keep "schemas" if present, else promote "schema" with schema-id 0. */
    json_t *schemas = json_object_get(doc, "schemas");
    if (!json_is_array(schemas)) {
        json_t *legacy = json_object_get(doc, "schema");
        json_t *copy = json_deep_copy(legacy);
        json_t *arr = json_array();
        if (!copy || !arr || (!json_object_get(copy, "schema-id") &&
                              json_object_set_new(copy, "schema-id", json_integer(0)) != 0) ||
            json_array_append_new(arr, copy) != 0) {
            json_decref(arr);
            return nomem(err);
        }
        if ((rc = set_new(doc, "schemas", arr, err)) < 0)
            return rc;
    }
    if ((rc = set_new(doc, "current-schema-id", json_integer(base->current_schema_id), err)) < 0)
        return rc;
    if (to_v2)
        json_object_del(doc, "schema");
    /* partition specs: the view already synthesized them; take its JSON. */
    if (!json_is_array(json_object_get(doc, "partition-specs"))) {
        json_t *arr = json_array();
        if (!arr)
            return nomem(err);
        for (size_t i = 0; i < base->n_specs; i++) {
            json_t *s = NULL;
            if ((rc = parse_json_arg(base->specs[i].json, "partition spec", &s, err)) < 0) {
                json_decref(arr);
                return rc;
            }
            int32_t last = 999;
            if ((rc = normalize_spec_fields(json_object_get(s, "fields"), &last, err)) < 0) {
                json_decref(s); /* not in arr yet */
                json_decref(arr);
                return rc;
            }
            if (json_array_append_new(arr, s) != 0) { /* which releases s */
                json_decref(arr);
                return nomem(err);
            }
        }
        if ((rc = set_new(doc, "partition-specs", arr, err)) < 0)
            return rc;
    }
    if (to_v2)
        json_object_del(doc, "partition-spec");
    if ((rc = set_new(doc, "default-spec-id", json_integer(base->default_spec_id), err)) < 0 ||
        (rc = set_new(doc, "last-partition-id", json_integer(base->last_partition_id), err)) < 0)
        return rc;
    if (!json_is_array(json_object_get(doc, "sort-orders"))) {
        json_t *orders = json_pack("[{s:i, s:[]}]", "order-id", 0, "fields");
        if ((rc = set_new(doc, "sort-orders", orders, err)) < 0 ||
            (rc = set_new(doc, "default-sort-order-id", json_integer(0), err)) < 0)
            return rc;
    }
    if (to_v2)
        floe_log(FLOE_LOG_INFO, "table metadata upgraded from format v1 to v2");
    return 0;
}

/* v1 keeps the deprecated single "schema" and "partition-spec" (required in v1) equal to
 * the current schema and the default spec's fields. */
static int sync_v1_legacy(json_t *doc, floe_error *err) {
    int64_t sid = jlong(doc, "current-schema-id", 0), pid = jlong(doc, "default-spec-id", 0);
    json_t *schemas = json_object_get(doc, "schemas"), *specs = json_object_get(doc, "partition-specs");
    for (size_t i = 0; i < json_array_size(schemas); i++) {
        json_t *sc = json_array_get(schemas, i);
        if (jlong(sc, "schema-id", -1) == sid) {
            int rc = set_new(doc, "schema", json_deep_copy(sc), err);
            if (rc < 0)
                return rc;
        }
    }
    for (size_t i = 0; i < json_array_size(specs); i++) {
        json_t *sp = json_array_get(specs, i);
        if (jlong(sp, "spec-id", -1) == pid) {
            int rc = set_new(doc, "partition-spec", json_deep_copy(json_object_get(sp, "fields")),
                             err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int floe_metadata_builder_format_version(const floe_metadata_builder *b) {
    return b->format_version;
}

int floe_metadata_builder_upgrade(floe_metadata_builder *b, int format_version,
                                  floe_error *err) {
    if (format_version == b->format_version)
        return 0;
    if (format_version < b->format_version || format_version > 3)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "cannot change format version %d to %d (floe upgrades v1 to v2 "
                              "or v3, and v2 to v3)",
                              b->format_version, format_version);
    if (b->format_version == 1) {
        FLOE_FORWARD_IF_ERROR(normalize_v1(b->doc, b->base, true, err));
        b->format_version = 2;
    }
    if (format_version == 3) {
        /* "Row Lineage for Upgraded Tables": ids start at 0; earlier snapshots keep no
         * first-row-id, so their rows read with null _row_id */
        FLOE_FORWARD_IF_ERROR(set_new(b->doc, "format-version", json_integer(3), err));
        if (!json_is_integer(json_object_get(b->doc, "next-row-id")))
            FLOE_FORWARD_IF_ERROR(set_new(b->doc, "next-row-id", json_integer(0), err));
        b->format_version = 3;
        floe_log(FLOE_LOG_INFO, "table metadata upgraded to format v3");
    }
    return 0;
}

int64_t floe_metadata_builder_next_row_id(const floe_metadata_builder *b) {
    return b->format_version >= 3 ? jlong(b->doc, "next-row-id", 0) : -1;
}

/* v2 requires a main ref whenever there is a current snapshot; make it explicit. */
static int ensure_main_ref(json_t *doc, floe_error *err) {
    int64_t cur = jlong(doc, "current-snapshot-id", -1);
    json_t *refs = ensure_object(doc, "refs");
    if (!refs)
        return nomem(err);
    if (cur == -1 || json_object_get(refs, "main"))
        return 0;
    return set_new(refs, "main", json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)cur, "type", "branch"),
                   err);
}

/* ---------------------------------------------------------------------------------------
 * builder lifecycle
 * ------------------------------------------------------------------------------------- */

int floe_metadata_builder_new(const floe_table_metadata *base, floe_metadata_builder **out,
                              floe_error *err) {
    floe_metadata_json_init();
    int rc = floe_table_metadata_check_writable(base, err);
    if (rc < 0)
        return rc;
    floe_metadata_builder *b = floe_calloc(1, sizeof *b);
    if (!b)
        return nomem(err);
    b->base = base;
    b->doc = json_deep_copy(base->doc->root);
    if (!b->doc) {
        rc = nomem(err);
        goto done;
    }
    b->format_version = base->format_version == 1 ? 1 : base->format_version == 3 ? 3 : 2;
    if (base->format_version == 1)
        FLOE_CHECK(normalize_v1(b->doc, base, false, err));
    FLOE_CHECK(ensure_main_ref(b->doc, err));
done:
    if (rc < 0) {
        floe_metadata_builder_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

int floe_metadata_builder_new_table(const char *location, const char *schema_json,
                                    const char *spec_json, const char *sort_json,
                                    const floe_kv *props, size_t nprops,
                                    floe_metadata_builder **out, floe_error *err) {
    floe_metadata_json_init();
    if (!location || !*location || !schema_json)
        return floe_error_set(err, FLOE_EINVALID, "new table: location and schema are required");
    int rc = 0;
    json_t *schema = NULL, *fields = NULL, *sort = NULL, *pobj = NULL;
    floe_metadata_builder *b = floe_calloc(1, sizeof *b);
    if (!b)
        return nomem(err);
    b->format_version = 2;
    int32_t highest;
    FLOE_CHECK(schema_from_arg(schema_json, &schema, &highest, err));
    if (set_new(schema, "schema-id", json_integer(0), err) < 0)
        FLOE_CHECK(FLOE_ENOMEM);
    int32_t last_partition_id = 999;
    if (spec_json) {
        FLOE_CHECK(spec_fields_from_arg(spec_json, &fields, err));
        FLOE_CHECK(normalize_spec_fields(fields, &last_partition_id, err));
    } else if (!(fields = json_array())) {
        FLOE_CHECK(nomem(err));
    }
    int format_version = 2;
    for (size_t i = 0; i < nprops; i++)
        if (props[i].key && !strcmp(props[i].key, "format-version")) {
            /* a reserved property (as in Iceberg): it sets the format, it is not stored */
            const char *v = props[i].value ? props[i].value : "";
            if (strcmp(v, "2") && strcmp(v, "3"))
                FLOE_FAIL(err, FLOE_EINVALID, "format-version=%s: floe creates format 2 or 3 "
                          "tables", v);
            format_version = v[0] - '0';
        }
    b->format_version = format_version;
    int32_t order_id = 0;
    if (sort_json) {
        FLOE_CHECK(parse_json_arg(sort_json, "sort order", &sort, err));
        json_t *sf = json_is_array(sort) ? sort : json_object_get(sort, "fields");
        if (!json_is_array(sf))
            FLOE_FAIL(err, FLOE_EINVALID, "sort order must be {\"fields\":[...]}");
        json_incref(sf);
        json_decref(sort);
        sort = sf;
        order_id = json_array_size(sort) ? 1 : 0; /* 0 is reserved for "unsorted" */
    } else if (!(sort = json_array())) {
        FLOE_CHECK(nomem(err));
    }
    char uuid[37];
    floe_uuid4(uuid);
    floe_metadata_json_take_alloc_failure();
    pobj = json_object();
    if (!pobj)
        FLOE_CHECK(nomem(err));
    for (size_t i = 0; i < nprops; i++)
        if (strcmp(props[i].key, "format-version") &&
            json_object_set_new(pobj, props[i].key, json_string(props[i].value)) != 0)
            FLOE_CHECK(bad_string("property", props[i].key, err));
    /* Appendix F: Java writes -1 for "no current snapshot" in v1/v2 tables. */
    b->doc = json_pack("{s:i, s:s, s:s, s:i, s:I, s:i, s:i, s:[O], s:i, s:[{s:i, s:O}], s:i,"
                       " s:i, s:[{s:i, s:O}], s:O, s:i, s:{}, s:[], s:[], s:[], s:[], s:[]}",
                       "format-version", format_version, "table-uuid", uuid, "location", location,
                       "last-sequence-number", 0, "last-updated-ms", (json_int_t)floe_wall_ms(),
                       "last-column-id", highest > 0 ? highest : 0, "current-schema-id", 0,
                       "schemas", schema, "default-spec-id", 0, "partition-specs", "spec-id", 0,
                       "fields", fields, "last-partition-id", last_partition_id,
                       "default-sort-order-id", order_id, "sort-orders", "order-id", order_id,
                       "fields", sort, "properties", pobj, "current-snapshot-id", -1, "refs",
                       "snapshots", "statistics", "partition-statistics", "snapshot-log",
                       "metadata-log");
    if (!b->doc)
        FLOE_CHECK(nomem(err));
    if (format_version == 3 && set_new(b->doc, "next-row-id", json_integer(0), err) < 0)
        FLOE_CHECK(FLOE_ENOMEM);
done:
    json_decref(schema);
    json_decref(fields);
    json_decref(sort);
    json_decref(pobj);
    if (rc < 0) {
        floe_metadata_builder_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

int floe_metadata_builder_new_empty(const char *location, floe_metadata_builder **out,
                                    floe_error *err) {
    floe_metadata_json_init();
    if (!location || !*location)
        return floe_error_set(err, FLOE_EINVALID, "new table: a location is required");
    floe_metadata_builder *b = floe_calloc(1, sizeof *b);
    if (!b)
        return nomem(err);
    b->format_version = 2;
    char uuid[37];
    floe_uuid4(uuid);
    b->doc = json_pack("{s:i, s:s, s:s, s:i, s:I, s:i, s:i, s:[], s:i, s:[], s:i, s:i, s:[],"
                       " s:{}, s:i, s:{}, s:[], s:[], s:[], s:[], s:[]}",
                       "format-version", 2, "table-uuid", uuid, "location", location,
                       "last-sequence-number", 0, "last-updated-ms", (json_int_t)floe_wall_ms(),
                       "last-column-id", 0, "current-schema-id", -1, "schemas",
                       "default-spec-id", -1, "partition-specs", "last-partition-id", 999,
                       "default-sort-order-id", -1, "sort-orders", "properties",
                       "current-snapshot-id", -1, "refs", "snapshots", "statistics",
                       "partition-statistics", "snapshot-log", "metadata-log");
    if (!b->doc) {
        floe_free(b);
        return nomem(err);
    }
    *out = b;
    return 0;
}

void floe_metadata_builder_free(floe_metadata_builder *b) {
    if (!b)
        return;
    for (int i = 0; i < IDS_N; i++)
        id_cache_clear(&b->ids[i]);
    json_decref(b->doc);
    floe_free(b);
}

const floe_table_metadata *floe_metadata_builder_base(const floe_metadata_builder *b) {
    return b->base;
}

int64_t floe_metadata_builder_next_sequence_number(const floe_metadata_builder *b) {
    return jlong(b->doc, "last-sequence-number", 0) + 1;
}

/* ---------------------------------------------------------------------------------------
 * changes
 * ------------------------------------------------------------------------------------- */

int floe_metadata_builder_set_property(floe_metadata_builder *b, const char *key,
                                       const char *value, floe_error *err) {
    json_t *props = ensure_object(b->doc, "properties");
    if (!props)
        return nomem(err);
    floe_metadata_json_take_alloc_failure();
    json_t *v = json_string(value);
    if (!v || json_object_set_new(props, key, v) != 0)
        return bad_string("property", key, err);
    return 0;
}

const char *floe_metadata_builder_property(const floe_metadata_builder *b, const char *key) {
    return json_string_value(json_object_get(json_object_get(b->doc, "properties"), key));
}

void floe_metadata_builder_property_sizes(const floe_metadata_builder *b, size_t *count,
                                          size_t *bytes) {
    const json_t *props = json_object_get(b->doc, "properties");
    const char *k;
    const json_t *v;
    *count = 0;
    *bytes = 0;
    json_object_foreach((json_t *)props, k, v) {
        ++*count;
        *bytes += strlen(k) + json_string_length(v); /* 0 for a non-string */
    }
}

int floe_metadata_builder_remove_property(floe_metadata_builder *b, const char *key,
                                          floe_error *err) {
    (void)err;
    json_t *props = json_object_get(b->doc, "properties");
    if (json_is_object(props))
        json_object_del(props, key);
    return 0;
}

int floe_metadata_builder_set_location(floe_metadata_builder *b, const char *location,
                                       floe_error *err) {
    if (!location || !*location)
        return floe_error_set(err, FLOE_EINVALID, "table location must not be empty");
    return set_new(b->doc, "location", json_string(location), err);
}

static int32_t max_id_in(const json_t *arr, const char *key) {
    int32_t best = -1;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        int64_t v = jlong(json_array_get(arr, i), key, -1);
        if (v > best && v <= INT32_MAX)
            best = (int32_t)v;
    }
    return best;
}

static const char *const ID_KEYS[IDS_N] = {"schema-id", "spec-id", "order-id"};

/* The "fields" of a sort order as comparable text (object keys sorted), or NULL when it
 * has none or on OOM. floe_free it. */
static char *fields_text(const json_t *fields) {
    return fields ? json_dumps(fields, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
                                           JSON_ENCODE_ANY)
                  : NULL;
}

/* Bring the cache of list `which` (the array arr of doc) up to date. -1 on OOM. */
static int id_cache_sync(floe_metadata_builder *b, int which, const json_t *arr) {
    id_cache *c = &b->ids[which];
    if (c->arr == arr && c->n == json_array_size(arr) && c->ids)
        return 0;
    id_cache_clear(c);
    const char *key = ID_KEYS[which];
    c->ids = json_object();
    if (which == IDS_ORDERS)
        c->by_fields = json_object();
    if (!c->ids || (which == IDS_ORDERS && !c->by_fields))
        goto oom;
    c->max_id = max_id_in(arr, key);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        int64_t id = jlong(e, key, INT64_MIN);
        char k[24];
        if (id == INT64_MIN)
            continue;
        snprintf(k, sizeof k, "%" PRId64, id);
        if (json_object_set_new(c->ids, k, json_true()) < 0)
            goto oom;
        if (which == IDS_ORDERS && id >= 0) {
            char *t = fields_text(json_object_get(e, "fields"));
            int bad = t && !json_object_get(c->by_fields, t) &&
                      json_object_set_new(c->by_fields, t, json_integer(id)) < 0;
            floe_free(t);
            if (bad)
                goto oom;
        }
    }
    c->arr = arr;
    c->n = json_array_size(arr);
    return 0;
oom:
    id_cache_clear(c);
    return -1;
}

/* Record that element e with id was appended to list `which` (arr), already synced. */
static void id_cache_appended(floe_metadata_builder *b, int which, const json_t *arr,
                              int32_t id, const json_t *e) {
    id_cache *c = &b->ids[which];
    char k[24];
    if (c->arr != arr || c->n + 1 != json_array_size(arr))
        goto stale;
    snprintf(k, sizeof k, "%" PRId32, id);
    if (json_object_set_new(c->ids, k, json_true()) < 0)
        goto stale;
    if (which == IDS_ORDERS) {
        char *t = fields_text(json_object_get(e, "fields"));
        int bad = !t || (!json_object_get(c->by_fields, t) &&
                         json_object_set_new(c->by_fields, t, json_integer(id)) < 0);
        floe_free(t);
        if (bad)
            goto stale;
    }
    c->n++;
    if (id > c->max_id)
        c->max_id = id;
    return;
stale:
    id_cache_clear(c); /* rebuilt on next use */
}

/* Whether list `which` of the working document has an element with this id. */
static int has_listed_id(floe_metadata_builder *b, int which, const char *array, int64_t id,
                         bool *out, floe_error *err) {
    const json_t *arr = json_object_get(b->doc, array);
    char k[24];
    if (id_cache_sync(b, which, arr) < 0)
        return nomem(err);
    snprintf(k, sizeof k, "%" PRId64, id);
    *out = json_object_get(b->ids[which].ids, k) != NULL;
    return 0;
}

int floe_metadata_builder_add_schema(floe_metadata_builder *b, const char *schema_json,
                                     int32_t *schema_id, floe_error *err) {
    json_t *schema;
    int32_t highest;
    int rc = schema_from_arg(schema_json, &schema, &highest, err);
    if (rc < 0)
        return rc;
    json_t *schemas = ensure_array(b->doc, "schemas");
    if (!schemas || id_cache_sync(b, IDS_SCHEMAS, schemas) < 0) {
        json_decref(schema);
        return nomem(err);
    }
    int32_t id = b->ids[IDS_SCHEMAS].max_id + 1;
    if (set_new(schema, "schema-id", json_integer(id), err) < 0 ||
        json_array_append(schemas, schema) != 0) {
        json_decref(schema);
        return nomem(err);
    }
    id_cache_appended(b, IDS_SCHEMAS, schemas, id, schema);
    json_decref(schema);
    if (highest > jlong(b->doc, "last-column-id", 0) &&
        (rc = set_new(b->doc, "last-column-id", json_integer(highest), err)) < 0)
        return rc;
    if (schema_id)
        *schema_id = id;
    return 0;
}

int floe_metadata_builder_set_current_schema(floe_metadata_builder *b, int32_t schema_id,
                                             floe_error *err) {
    bool has;
    FLOE_FORWARD_IF_ERROR(has_listed_id(b, IDS_SCHEMAS, "schemas", schema_id, &has, err));
    if (!has)
        return floe_error_set(err, FLOE_EINVALID, "schema-id %d does not exist", (int)schema_id);
    return set_new(b->doc, "current-schema-id", json_integer(schema_id), err);
}

int floe_metadata_builder_add_spec(floe_metadata_builder *b, const char *spec_json,
                                   int32_t *spec_id, floe_error *err) {
    json_t *fields;
    int rc = spec_fields_from_arg(spec_json, &fields, err);
    if (rc < 0)
        return rc;
    int32_t last = (int32_t)jlong(b->doc, "last-partition-id", 999);
    if ((rc = normalize_spec_fields(fields, &last, err)) < 0) {
        json_decref(fields);
        return rc;
    }
    json_t *specs = ensure_array(b->doc, "partition-specs");
    if (!specs || id_cache_sync(b, IDS_SPECS, specs) < 0) {
        json_decref(fields);
        return nomem(err);
    }
    int32_t id = b->ids[IDS_SPECS].max_id + 1;
    json_t *spec = json_pack("{s:i, s:O}", "spec-id", id, "fields", fields);
    json_decref(fields);
    if (!spec || json_array_append(specs, spec) != 0) {
        json_decref(spec);
        return nomem(err);
    }
    id_cache_appended(b, IDS_SPECS, specs, id, spec);
    json_decref(spec);
    if ((rc = set_new(b->doc, "last-partition-id", json_integer(last), err)) < 0)
        return rc;
    if (spec_id)
        *spec_id = id;
    return 0;
}

int floe_metadata_builder_set_default_spec(floe_metadata_builder *b, int32_t spec_id,
                                           floe_error *err) {
    bool has;
    FLOE_FORWARD_IF_ERROR(has_listed_id(b, IDS_SPECS, "partition-specs", spec_id, &has, err));
    if (!has)
        return floe_error_set(err, FLOE_EINVALID, "spec-id %d does not exist", (int)spec_id);
    return set_new(b->doc, "default-spec-id", json_integer(spec_id), err);
}

/* The sort order's fields: {"fields":[...]}, a bare list, or NULL / "" (no fields). */
static int sort_fields_from_arg(const char *sort_json, json_t **out, floe_error *err) {
    json_t *fields;
    if (sort_json && *sort_json) {
        json_t *arg;
        FLOE_FORWARD_IF_ERROR(parse_json_arg(sort_json, "sort order", &arg, err));
        fields = json_is_array(arg) ? json_incref(arg) : json_incref(json_object_get(arg, "fields"));
        json_decref(arg);
        if (!json_is_array(fields)) {
            json_decref(fields);
            return floe_error_set(err, FLOE_EINVALID, "sort order: \"fields\" must be a list");
        }
    } else if (!(fields = json_array())) {
        return nomem(err);
    }
    *out = fields;
    return 0;
}

int floe_metadata_builder_add_sort_order(floe_metadata_builder *b, const char *sort_json,
                                         int32_t *order_id, floe_error *err) {
    json_t *fields = NULL;
    int rc = 0;
    FLOE_CHECK(sort_fields_from_arg(sort_json, &fields, err));
    json_t *orders = ensure_array(b->doc, "sort-orders");
    if (!orders || id_cache_sync(b, IDS_ORDERS, orders) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* an order with the same fields keeps its id (the unsorted order is always 0) */
    int64_t id = -1;
    char *text = fields_text(fields);
    if (!text)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    id = jlong(b->ids[IDS_ORDERS].by_fields, text, -1);
    floe_free(text);
    if (id < 0) {
        id = json_array_size(fields) ? b->ids[IDS_ORDERS].max_id + 1 : 0;
        if (id < 1 && json_array_size(fields))
            id = 1;
        json_t *o = json_pack("{s:I, s:O}", "order-id", (json_int_t)id, "fields", fields);
        if (!o || json_array_append(orders, o) != 0) {
            json_decref(o);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        id_cache_appended(b, IDS_ORDERS, orders, (int32_t)id, o);
        json_decref(o);
    }
    if (order_id)
        *order_id = (int32_t)id;
done:
    json_decref(fields);
    return rc;
}

int floe_metadata_builder_set_default_sort_order_id(floe_metadata_builder *b, int32_t order_id,
                                                    floe_error *err) {
    bool has;
    FLOE_FORWARD_IF_ERROR(has_listed_id(b, IDS_ORDERS, "sort-orders", order_id, &has, err));
    if (!has)
        return floe_error_set(err, FLOE_EINVALID, "sort order %d does not exist", (int)order_id);
    return set_new(b->doc, "default-sort-order-id", json_integer(order_id), err);
}

int floe_metadata_builder_set_default_sort_order(floe_metadata_builder *b, const char *sort_json,
                                                int32_t *order_id, floe_error *err) {
    int32_t id;
    FLOE_FORWARD_IF_ERROR(floe_metadata_builder_add_sort_order(b, sort_json, &id, err));
    FLOE_FORWARD_IF_ERROR(floe_metadata_builder_set_default_sort_order_id(b, id, err));
    if (order_id)
        *order_id = id;
    return 0;
}

int floe_metadata_builder_assign_uuid(floe_metadata_builder *b, const char *uuid,
                                      floe_error *err) {
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    bool ok = uuid && strlen(uuid) == sizeof shape - 1;
    for (size_t i = 0; ok && shape[i]; i++)
        ok = shape[i] == '-' ? uuid[i] == '-'
                             : ((uuid[i] >= '0' && uuid[i] <= '9') ||
                                (uuid[i] >= 'a' && uuid[i] <= 'f') ||
                                (uuid[i] >= 'A' && uuid[i] <= 'F'));
    if (!ok)
        return floe_error_set(err, FLOE_EINVALID, "table uuid '%s' is not a UUID",
                              uuid ? uuid : "");
    return set_new(b->doc, "table-uuid", json_string(uuid), err);
}

/* Snapshot ids are positive (spec Appendix F: -1 is "no current snapshot"; Iceberg Java
 * only makes positive ones): a snapshot -1 on main reads as "no current snapshot" with a
 * main branch, which Iceberg Java refuses to load. */
static int check_snapshot_id(int64_t id, floe_error *err) {
    if (id > 0)
        return 0;
    return floe_error_set(err, FLOE_EINVALID,
                          "snapshot id %" PRId64 " is not positive (snapshot ids are above "
                          "0; -1 means no snapshot)", id);
}

static json_t *find_snapshot(json_t *doc, int64_t id) {
    json_t *snaps = json_object_get(doc, "snapshots");
    for (size_t i = 0; i < json_array_size(snaps); i++)
        if (jlong(json_array_get(snaps, i), "snapshot-id", INT64_MIN) == id)
            return json_array_get(snaps, i);
    return NULL;
}

static int append_snapshot_log(json_t *doc, int64_t ts, int64_t id, floe_error *err) {
    json_t *log = ensure_array(doc, "snapshot-log");
    json_t *e = json_pack("{s:I, s:I}", "timestamp-ms", (json_int_t)ts, "snapshot-id", (json_int_t)id);
    if (!log || !e || json_array_append_new(log, e) != 0)
        return nomem(err);
    return 0;
}

/* Point ref `name` at id, keeping its retention settings when the type stays the same. */
static int put_ref(json_t *doc, const char *name, int64_t id, bool is_tag, int64_t log_ts,
                   floe_error *err) {
    size_t bad = floe_utf8_invalid_at((const uint8_t *)name, strlen(name));
    if (bad < strlen(name)) /* a JSON key: jansson refuses it */
        return floe_error_set(err, FLOE_EINVALID, "ref name is not valid UTF-8 (byte %zu is "
                              "0x%02x)", bad, (unsigned char)name[bad]);
    json_t *refs = ensure_object(doc, "refs");
    if (!refs)
        return nomem(err);
    json_t *ref = json_object_get(refs, name);
    const char *type = is_tag ? "tag" : "branch";
    if (json_is_object(ref) && json_is_string(json_object_get(ref, "type")) &&
        !strcmp(json_string_value(json_object_get(ref, "type")), type)) {
        if (set_new(ref, "snapshot-id", json_integer(id), err) < 0)
            return FLOE_ENOMEM;
    } else if (set_new(refs, name, json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)id, "type", type),
                       err) < 0) {
        return FLOE_ENOMEM;
    }
    if (!strcmp(name, "main")) {
        if (set_new(doc, "current-snapshot-id", json_integer(id), err) < 0)
            return FLOE_ENOMEM;
        return append_snapshot_log(doc, log_ts, id, err);
    }
    return 0;
}

/* v3 "Snapshot Row IDs": the snapshot gets first-row-id and added-rows, and the table's
 * next-row-id moves past the ids it assigned (whatever branch the snapshot is on). */
static int put_row_lineage(json_t *doc, json_t *snap, int64_t first_row_id, int64_t added_rows,
                           floe_error *err) {
    int64_t next;
    if (first_row_id < 0 || added_rows < 0 ||
        __builtin_add_overflow(first_row_id, added_rows, &next))
        return floe_error_set(err, FLOE_EINVALID,
                              "snapshot: first-row-id %" PRId64 " / added-rows %" PRId64
                              " out of range", first_row_id, added_rows);
    FLOE_FORWARD_IF_ERROR(set_new(snap, "first-row-id", json_integer(first_row_id), err));
    FLOE_FORWARD_IF_ERROR(set_new(snap, "added-rows", json_integer(added_rows), err));
    return set_new(doc, "next-row-id", json_integer(next), err);
}

int floe_metadata_builder_add_snapshot(floe_metadata_builder *b, const floe_snapshot_new *s,
                                       int64_t *snapshot_id, int64_t *sequence_number,
                                       floe_error *err) {
    if (!s->operation || !s->manifest_list)
        return floe_error_set(err, FLOE_EINVALID, "new snapshot: operation and manifest-list are required");
    int64_t next_row_id = floe_metadata_builder_next_row_id(b);
    if (b->format_version >= 3 && (!s->row_lineage || s->first_row_id != next_row_id))
        return floe_error_set(err, FLOE_EINVALID,
                              "new snapshot on a format v3 table: %s (the table's next-row-id "
                              "is %" PRId64 ")",
                              s->row_lineage ? "its first-row-id is not the table's "
                                               "next-row-id; assign row ids on the metadata "
                                               "being committed"
                                             : "row lineage (first-row-id, added-rows) missing",
                              next_row_id);
    if (b->format_version < 3 && s->row_lineage)
        return floe_error_set(err, FLOE_EINVALID, "new snapshot: row lineage on a format v%d "
                              "table", b->format_version);
    const char *branch = s->branch ? s->branch : "main";
    json_t *refs = json_object_get(b->doc, "refs");
    json_t *ref = json_is_object(refs) ? json_object_get(refs, branch) : NULL;
    if (ref && json_is_string(json_object_get(ref, "type")) &&
        !strcmp(json_string_value(json_object_get(ref, "type")), "tag"))
        return floe_error_set(err, FLOE_EINVALID, "%s is a tag, not a branch", branch);
    int64_t parent = ref ? jlong(ref, "snapshot-id", -1)
                         : (!strcmp(branch, "main") ? jlong(b->doc, "current-snapshot-id", -1) : -1);
    int64_t id = s->snapshot_id;
    if (id < 0)
        return check_snapshot_id(id, err);
    if (id == 0)
        do
            id = floe_metadata_new_snapshot_id();
        while (find_snapshot(b->doc, id));
    else if (find_snapshot(b->doc, id))
        return floe_error_set(err, FLOE_EEXISTS, "snapshot id %" PRId64 " already exists", id);
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    int64_t ts = s->timestamp_ms ? s->timestamp_ms : floe_wall_ms();
    int32_t schema_id = s->schema_id >= 0 ? s->schema_id
                                          : (int32_t)jlong(b->doc, "current-schema-id", 0);
    floe_metadata_json_take_alloc_failure();
    json_t *summary = json_pack("{s:s}", "operation", s->operation);
    if (!summary)
        return nomem(err);
    for (size_t i = 0; i < s->n_summary; i++) {
        if (!strcmp(s->summary[i].key, "operation"))
            continue;
        if (json_object_set_new(summary, s->summary[i].key, json_string(s->summary[i].value)) != 0) {
            json_decref(summary);
            return bad_string("summary", s->summary[i].key, err);
        }
    }
    json_t *snap = json_object();
    if (!snap || set_new(snap, "snapshot-id", json_integer(id), err) < 0 ||
        (parent != -1 && set_new(snap, "parent-snapshot-id", json_integer(parent), err) < 0) ||
        (b->format_version >= 2 &&
         set_new(snap, "sequence-number", json_integer(seq), err) < 0) ||
        set_new(snap, "timestamp-ms", json_integer(ts), err) < 0 ||
        set_new(snap, "manifest-list", json_string(s->manifest_list), err) < 0 ||
        set_new(snap, "summary", summary, err) < 0 ||
        set_new(snap, "schema-id", json_integer(schema_id), err) < 0) {
        if (!snap)
            json_decref(summary);
        json_decref(snap);
        return nomem(err);
    }
    if (b->format_version >= 3) {
        int lrc = put_row_lineage(b->doc, snap, s->first_row_id, s->added_rows, err);
        if (lrc < 0) {
            json_decref(snap);
            return lrc;
        }
    }
    json_t *snaps = ensure_array(b->doc, "snapshots");
    if (!snaps || json_array_append_new(snaps, snap) != 0)
        return nomem(err);
    int rc;
    if (b->format_version == 1)
        seq = 0; /* v1: no sequence numbers */
    else if ((rc = set_new(b->doc, "last-sequence-number", json_integer(seq), err)) < 0)
        return rc;
    if ((rc = put_ref(b->doc, branch, id, false, ts, err)) < 0)
        return rc;
    if (snapshot_id)
        *snapshot_id = id;
    if (sequence_number)
        *sequence_number = seq;
    return 0;
}

int floe_metadata_builder_set_ref(floe_metadata_builder *b, const char *name,
                                  int64_t snapshot_id, bool is_tag, floe_error *err) {
    if (!name || !*name)
        return floe_error_set(err, FLOE_EINVALID, "ref name must not be empty");
    /* a control character in a ref name breaks every listing and log that shows it, and
     * floe ref create refuses one: so does a commit from another writer */
    for (size_t i = 0; name[i]; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return floe_error_set(err, FLOE_EINVALID,
                                  "ref name holds control character 0x%02x at byte %zu: a ref "
                                  "name must be printable",
                                  (unsigned char)name[i], i);
    FLOE_FORWARD_IF_ERROR(check_snapshot_id(snapshot_id, err));
    if (!find_snapshot(b->doc, snapshot_id))
        return floe_error_set(err, FLOE_EINVALID, "snapshot %" PRId64 " does not exist", snapshot_id);
    if (is_tag && !strcmp(name, "main"))
        return floe_error_set(err, FLOE_EINVALID, "main must be a branch");
    return put_ref(b->doc, name, snapshot_id, is_tag, floe_wall_ms(), err);
}

static int put_retention(json_t *ref, const char *key, int64_t v, floe_error *err) {
    if (v < 0) {
        json_object_del(ref, key);
        return 0;
    }
    return set_new(ref, key, json_integer(v), err);
}

int floe_metadata_builder_set_ref_retention(floe_metadata_builder *b, const char *name,
                                            const floe_ref_retention *r, floe_error *err) {
    json_t *refs = json_object_get(b->doc, "refs");
    json_t *ref = json_is_object(refs) ? json_object_get(refs, name) : NULL;
    if (!json_is_object(ref))
        return floe_error_set(err, FLOE_ENOTFOUND, "no branch or tag named %s", name);
    const char *type = json_string_value(json_object_get(ref, "type"));
    bool tag = type && !strcmp(type, "tag");
    if (tag && (r->min_snapshots_to_keep >= 0 || r->max_snapshot_age_ms >= 0))
        return floe_error_set(err, FLOE_EINVALID,
                              "%s is a tag: min-snapshots-to-keep and max-snapshot-age-ms "
                              "apply to branches only", name);
    if (!strcmp(name, "main") && r->max_ref_age_ms >= 0)
        return floe_error_set(err, FLOE_EINVALID,
                              "max-ref-age-ms does not apply to the main branch, which never "
                              "expires");
    if (r->min_snapshots_to_keep == 0)
        return floe_error_set(err, FLOE_EINVALID, "min-snapshots-to-keep must be at least 1");
    if (r->max_snapshot_age_ms == 0 || r->max_ref_age_ms == 0)
        return floe_error_set(err, FLOE_EINVALID, "ages must be positive (milliseconds)");
    FLOE_FORWARD_IF_ERROR(put_retention(ref, "min-snapshots-to-keep", r->min_snapshots_to_keep, err));
    FLOE_FORWARD_IF_ERROR(put_retention(ref, "max-snapshot-age-ms", r->max_snapshot_age_ms, err));
    return put_retention(ref, "max-ref-age-ms", r->max_ref_age_ms, err);
}

int floe_metadata_builder_remove_ref(floe_metadata_builder *b, const char *name,
                                     floe_error *err) {
    /* main, as Iceberg Java's builder removes it (a replace transaction starts so): the
     * table has no current snapshot until a set-ref of main; its snapshots, and the
     * snapshot-log up to now, stay */
    if (!strcmp(name, "main"))
        FLOE_FORWARD_IF_ERROR(set_new(b->doc, "current-snapshot-id", json_integer(-1), err));
    json_t *refs = json_object_get(b->doc, "refs");
    if (json_is_object(refs))
        json_object_del(refs, name);
    return 0;
}

static bool id_in(const int64_t *ids, size_t n, int64_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Drop entries of array `key` whose `id_key` is among ids. */
static void drop_by_snapshot(json_t *doc, const char *key, const char *id_key, const int64_t *ids,
                             size_t n) {
    json_t *arr = json_object_get(doc, key);
    if (!json_is_array(arr))
        return;
    for (size_t i = json_array_size(arr); i-- > 0;)
        if (id_in(ids, n, jlong(json_array_get(arr, i), id_key, INT64_MIN)))
            json_array_remove(arr, i);
}

static const char *stats_key(bool partition) {
    return partition ? "partition-statistics" : "statistics";
}

/* True when other is a JSON string naming the location whose floe_io_uri_key is key. */
static bool same_location(const char *key, const json_t *other) {
    const char *o = json_string_value(other);
    if (!o)
        return false;
    char *ok = floe_io_uri_key(o);
    bool same = ok && !strcmp(key, ok);
    floe_free(ok);
    return same;
}

/* The roles a file can have in the table's metadata, as path_role finds them. */
typedef enum {
    ROLE_NONE,
    ROLE_LIST,     /* a snapshot's manifest list */
    ROLE_MANIFEST, /* a manifest a format v1 snapshot names inline */
    ROLE_METADATA, /* a metadata file of the metadata-log */
    ROLE_STATS,    /* a snapshot's statistics file */
    ROLE_PSTATS    /* a snapshot's partition statistics file */
} file_role;

/* The role the table's metadata gives the file at path (ROLE_NONE: none it records), and
 * the snapshot it belongs to in *id; statistics files are looked for only when stats. */
static int path_role(const floe_metadata_builder *b, const char *path, bool stats,
                     file_role *role, int64_t *id, floe_error *err) {
    char *key = floe_io_uri_key(path);
    if (!key)
        return nomem(err);
    file_role r = ROLE_NONE;
    const json_t *snaps = json_object_get(b->doc, "snapshots");
    for (size_t i = 0; !r && i < json_array_size(snaps); i++) {
        const json_t *sn = json_array_get(snaps, i);
        *id = jlong(sn, "snapshot-id", 0);
        if (same_location(key, json_object_get(sn, "manifest-list")))
            r = ROLE_LIST;
        const json_t *v1 = json_object_get(sn, "manifests");
        for (size_t k = 0; !r && k < json_array_size(v1); k++)
            if (same_location(key, json_array_get(v1, k)))
                r = ROLE_MANIFEST;
    }
    const json_t *mlog = json_object_get(b->doc, "metadata-log");
    for (size_t i = 0; !r && i < json_array_size(mlog); i++)
        if (same_location(key, json_object_get(json_array_get(mlog, i), "metadata-file")))
            r = ROLE_METADATA;
    for (int part = 0; stats && !r && part < 2; part++) {
        const json_t *files = json_object_get(b->doc, stats_key(part));
        for (size_t i = 0; !r && i < json_array_size(files); i++) {
            const json_t *st = json_array_get(files, i);
            *id = jlong(st, "snapshot-id", 0);
            if (same_location(key, json_object_get(st, "statistics-path")))
                r = part ? ROLE_PSTATS : ROLE_STATS;
        }
    }
    floe_free(key);
    *role = r;
    return 0;
}

/* A file a commit names in one role (field, e.g. "statistics-path"; own, what it must
 * be: "a statistics file") may not be a file the table holds in another: an expiry
 * deletes the files of the snapshots it removes, role by role, and that file would go with
 * them while another role still needs it. FLOE_EINVALID naming it. (Manifests of v2
 * snapshots and data files are not looked for here: that takes reading every manifest
 * list; the deleters keep what any role still reaches.) */
static int check_own_file(const floe_metadata_builder *b, const char *field, const char *own,
                          const char *path, bool stats, floe_error *err) {
    file_role role;
    int64_t id = 0;
    FLOE_FORWARD_IF_ERROR(path_role(b, path, stats, &role, &id, err));
    static const char *const names[] = {
        [ROLE_LIST] = "the manifest list", [ROLE_MANIFEST] = "a manifest",
        [ROLE_STATS] = "the statistics file", [ROLE_PSTATS] = "the partition statistics file"};
    if (role == ROLE_NONE)
        return 0;
    if (role == ROLE_METADATA)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s %s is a metadata file of the table (its metadata-log): %s "
                              "must be a file of its own", field, path, own);
    return floe_error_set(err, FLOE_EINVALID,
                          "%s %s is %s of snapshot %" PRId64 ": %s must be a file of its own "
                          "(expiry deletes it with its snapshot)",
                          field, path, names[role], id, own);
}

int floe_metadata_builder_add_snapshot_json(floe_metadata_builder *b, const char *snapshot_json,
                                            floe_error *err) {
    json_t *snap;
    FLOE_FORWARD_IF_ERROR(parse_json_arg(snapshot_json, "snapshot", &snap, err));
    int rc = 0;
    json_t *summary = json_object_get(snap, "summary");
    if (!json_is_object(snap) || !json_is_integer(json_object_get(snap, "snapshot-id")) ||
        !json_is_integer(json_object_get(snap, "timestamp-ms")) ||
        !json_is_string(json_object_get(snap, "manifest-list")) || !json_is_object(summary) ||
        !json_is_string(json_object_get(summary, "operation")))
        FLOE_FAIL(err, FLOE_EINVALID,
                  "snapshot needs an integer \"snapshot-id\" and \"timestamp-ms\", a "
                  "\"manifest-list\" and a \"summary\" with an \"operation\"");
    int64_t id = jlong(snap, "snapshot-id", -1);
    FLOE_CHECK(check_snapshot_id(id, err));
    if (find_snapshot(b->doc, id))
        FLOE_FAIL(err, FLOE_EEXISTS, "snapshot id %" PRId64 " already exists", id);
    /* its manifest list is its own: not another snapshot's, a statistics file or a
     * metadata file, which an expiry of either would delete from under the other */
    FLOE_CHECK(check_own_file(b, "manifest-list", "a manifest list",
                              json_string_value(json_object_get(snap, "manifest-list")), true,
                              err));
    json_t *parent = json_object_get(snap, "parent-snapshot-id");
    if (parent && !json_is_null(parent) && !json_is_integer(parent))
        FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 ": bad parent-snapshot-id", id);
    json_t *sid = json_object_get(snap, "schema-id");
    bool known = true;
    if (json_is_integer(sid))
        FLOE_CHECK(has_listed_id(b, IDS_SCHEMAS, "schemas", json_integer_value(sid), &known, err));
    if (sid && !json_is_null(sid) && (!json_is_integer(sid) || !known))
        FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 ": schema-id is not one of the "
                  "table's schemas", id);
    int64_t last = jlong(b->doc, "last-sequence-number", 0);
    if (b->format_version == 1) {
        json_object_del(snap, "sequence-number"); /* v1 records none */
    } else {
        json_t *sv = json_object_get(snap, "sequence-number");
        int64_t seq = json_is_integer(sv) ? (int64_t)json_integer_value(sv) : last + 1;
        if (sv && !json_is_integer(sv))
            FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 ": bad sequence-number", id);
        /* a snapshot with a parent comes after everything committed (spec "Sequence
         * Numbers") */
        if (seq <= last && parent && json_is_integer(parent))
            FLOE_FAIL(err, FLOE_EINVALID,
                      "snapshot %" PRId64 ": sequence number %" PRId64
                      " is not above the table's last-sequence-number %" PRId64,
                      id, seq, last);
        if (!sv && set_new(snap, "sequence-number", json_integer(seq), err) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (seq > last && set_new(b->doc, "last-sequence-number", json_integer(seq), err) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (b->format_version >= 3) {
        /* the writer assigned ids from the next-row-id it saw: not below the table's */
        json_t *fr = json_object_get(snap, "first-row-id"), *ar = json_object_get(snap, "added-rows");
        if (!json_is_integer(fr) || !json_is_integer(ar))
            FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 ": a format v3 snapshot needs "
                      "integer \"first-row-id\" and \"added-rows\"", id);
        int64_t next = jlong(b->doc, "next-row-id", 0);
        if ((int64_t)json_integer_value(fr) < next)
            FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 ": first-row-id %" PRId64
                      " is below the table's next-row-id %" PRId64, id,
                      (int64_t)json_integer_value(fr), next);
        FLOE_CHECK(put_row_lineage(b->doc, snap, (int64_t)json_integer_value(fr),
                                   (int64_t)json_integer_value(ar), err));
    }
    json_t *snaps = ensure_array(b->doc, "snapshots");
    if (!snaps || json_array_append(snaps, snap) != 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
done:
    json_decref(snap);
    return rc;
}

int floe_metadata_builder_set_statistics(floe_metadata_builder *b, bool partition,
                                         const char *stats_json, floe_error *err) {
    json_t *st;
    FLOE_FORWARD_IF_ERROR(parse_json_arg(stats_json, stats_key(partition), &st, err));
    int rc = 0;
    if (!json_is_object(st) || !json_is_integer(json_object_get(st, "snapshot-id")) ||
        !json_is_string(json_object_get(st, "statistics-path")) ||
        !json_is_integer(json_object_get(st, "file-size-in-bytes")))
        FLOE_FAIL(err, FLOE_EINVALID,
                  "%s file needs \"snapshot-id\", \"statistics-path\" and "
                  "\"file-size-in-bytes\"",
                  stats_key(partition));
    if (!partition && (!json_is_integer(json_object_get(st, "file-footer-size-in-bytes")) ||
                       !json_is_array(json_object_get(st, "blob-metadata"))))
        FLOE_FAIL(err, FLOE_EINVALID,
                  "statistics file needs \"file-footer-size-in-bytes\" and \"blob-metadata\"");
    /* sizes a reader can use: not negative, the footer inside the file */
    int64_t size = jlong(st, "file-size-in-bytes", -1);
    if (size < 0)
        FLOE_FAIL(err, FLOE_EINVALID, "%s: file-size-in-bytes %" PRId64 " is negative",
                  stats_key(partition), size);
    if (!partition) {
        int64_t footer = jlong(st, "file-footer-size-in-bytes", -1);
        if (footer < 0 || footer > size)
            FLOE_FAIL(err, FLOE_EINVALID,
                      "statistics: file-footer-size-in-bytes %" PRId64 " %s", footer,
                      footer < 0 ? "is negative" : "is larger than file-size-in-bytes");
    }
    int64_t id = jlong(st, "snapshot-id", -1);
    if (!find_snapshot(b->doc, id))
        FLOE_FAIL(err, FLOE_EINVALID, "snapshot %" PRId64 " does not exist", id);
    FLOE_CHECK(check_own_file(b, "statistics-path", "a statistics file",
                              json_string_value(json_object_get(st, "statistics-path")), false,
                              err));
    /* one file per snapshot: a new one replaces the old */
    FLOE_CHECK(floe_metadata_builder_remove_statistics(b, partition, id, err));
    json_t *arr = ensure_array(b->doc, stats_key(partition));
    if (!arr || json_array_append(arr, st) != 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
done:
    json_decref(st);
    return rc;
}

int floe_metadata_builder_remove_statistics(floe_metadata_builder *b, bool partition,
                                            int64_t snapshot_id, floe_error *err) {
    (void)err;
    drop_by_snapshot(b->doc, stats_key(partition), "snapshot-id", &snapshot_id, 1);
    return 0;
}

int floe_metadata_builder_remove_snapshots(floe_metadata_builder *b, const int64_t *ids,
                                           size_t n, floe_error *err) {
    int64_t cur = jlong(b->doc, "current-snapshot-id", -1);
    if (cur != -1 && id_in(ids, n, cur))
        return floe_error_set(err, FLOE_EINVALID,
                              "snapshot %" PRId64 " is the current snapshot and cannot be removed",
                              cur);
    /* A ref still naming a snapshot to remove is a conflict, never dropped with it: the
     * caller planned on refs that have changed since (a tag or branch made meanwhile on
     * a snapshot an expiry chose; dropping it would undo that commit and free what it
     * keeps reachable). A ref meant to go is removed first (remove-snapshot-ref). */
    json_t *refs = json_object_get(b->doc, "refs");
    if (json_is_object(refs)) {
        const char *key;
        json_t *r;
        json_object_foreach(refs, key, r) {
            int64_t sid = jlong(r, "snapshot-id", INT64_MIN);
            const char *type = json_string_value(json_object_get(r, "type"));
            if (id_in(ids, n, sid))
                return floe_error_set(err, FLOE_ECONFLICT,
                                      "snapshot %" PRId64 " cannot be removed: %s %s points "
                                      "at it", sid, type && !strcmp(type, "tag") ? "tag" : "branch",
                                      key);
        }
    }
    drop_by_snapshot(b->doc, "snapshots", "snapshot-id", ids, n);
    drop_by_snapshot(b->doc, "statistics", "snapshot-id", ids, n);
    drop_by_snapshot(b->doc, "partition-statistics", "snapshot-id", ids, n);
    /* snapshot-log: keep only the history after the last entry that names a removed
     * snapshot, so the log stays a contiguous suffix of what really happened. */
    json_t *log = json_object_get(b->doc, "snapshot-log");
    if (json_is_array(log)) {
        size_t cut = 0;
        for (size_t i = 0; i < json_array_size(log); i++)
            if (!find_snapshot(b->doc, jlong(json_array_get(log, i), "snapshot-id", INT64_MIN)))
                cut = i + 1;
        for (size_t i = 0; i < cut; i++)
            json_array_remove(log, 0);
    }
    return 0;
}

/* A type or default value of format v3 in schema type t (JSON), below a field named
 * name: its description in why, false when there is none. */
static bool v3_only(const json_t *t, const char *name, char *why, size_t n, int depth) {
    if (depth > 64)
        return false;
    if (json_is_string(t)) {
        static const char *const v3[] = {"timestamp_ns", "timestamptz_ns", "unknown", "variant",
                                         "geometry", "geography"};
        const char *ty = json_string_value(t);
        for (size_t i = 0; i < sizeof v3 / sizeof v3[0]; i++)
            if (!strncmp(ty, v3[i], strlen(v3[i]))) {
                snprintf(why, n, "column %s has type %s", name, ty);
                return true;
            }
        return false;
    }
    const char *kind = json_string_value(json_object_get(t, "type"));
    if (!kind)
        return false;
    if (!strcmp(kind, "list"))
        return v3_only(json_object_get(t, "element"), name, why, n, depth + 1);
    if (!strcmp(kind, "map"))
        return v3_only(json_object_get(t, "key"), name, why, n, depth + 1) ||
               v3_only(json_object_get(t, "value"), name, why, n, depth + 1);
    const json_t *fields = json_object_get(t, "fields");
    for (size_t i = 0; i < json_array_size(fields); i++) {
        const json_t *f = json_array_get(fields, i);
        const char *fname = json_string_value(json_object_get(f, "name"));
        fname = fname ? fname : "?";
        if (json_object_get(f, "initial-default") || json_object_get(f, "write-default")) {
            snprintf(why, n, "column %s has a default value", fname);
            return true;
        }
        if (v3_only(json_object_get(f, "type"), fname, why, n, depth + 1))
            return true;
    }
    return false;
}

/* Format v1 and v2 tables cannot hold v3 types or defaults: engines refuse to load them.
 * Only the schemas this change adds are checked: a table another writer made that way is
 * still maintained (its files rewritten, its snapshots expired) as it is. */
static int check_v3_types(const json_t *doc, const floe_table_metadata *base,
                          int format_version, floe_error *err) {
    if (format_version >= 3)
        return 0;
    const json_t *schemas = json_object_get(doc, "schemas");
    for (size_t i = 0; i < json_array_size(schemas); i++) {
        const json_t *sc = json_array_get(schemas, i);
        char why[512];
        if (base && floe_table_metadata_schema(base, (int32_t)jlong(sc, "schema-id", -1)))
            continue;
        if (v3_only(sc, "?", why, sizeof why, 0))
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "schema %lld: %s, which needs format version 3 (this table is "
                                  "v%d: floe table upgrade NS.NAME --format-version 3)",
                                  (long long)jlong(sc, "schema-id", 0), why, format_version);
    }
    return 0;
}

/* The outcome of a spec or sort order (WHAT, ID) of the change that failed to bind with
 * RC: an allocation failure (ours or jansson's) stays FLOE_ENOMEM; anything else is
 * FLOE_EINVALID naming it and the schema it was bound to. */
static int bind_failure(int rc, const char *what, int64_t id, int64_t schema_id,
                        floe_error *err) {
    if (rc == FLOE_ENOMEM || floe_metadata_json_take_alloc_failure())
        return nomem(err);
    if (err)
        err->code = FLOE_EINVALID;
    floe_error_prefix(err, "%s %d does not bind to the current schema (id %d): ", what, (int)id,
                      (int)schema_id);
    return FLOE_EINVALID;
}

/* Every partition spec and sort order this change adds (an id the base does not have)
 * binds to the schema that is current when the change is done: its source columns are
 * in that schema and each transform accepts its column's type (spec: "Partition
 * Transforms"). Checked here, on the finished metadata, not as each update is made: an
 * add-spec followed in the same change by an add-schema dropping its column and a
 * set-current-schema (or an add-sort-order followed by set-current-schema) would pass
 * a check made at the update, and leave a default spec or order no writer can use.
 * Specs and orders of the base are left as they are (a spec whose column was dropped
 * later binds to an older schema: floe_table_metadata_bind_spec). FLOE_EINVALID naming
 * the spec or order and its field. */
static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int check_new_specs(const floe_table_metadata *m, const floe_table_metadata *base,
                           floe_error *err) {
    const floe_metadata_schema *cur = floe_table_metadata_current_schema(m);
    floe_schema *schema = NULL;
    int32_t *spec_ids = NULL, *order_ids = NULL;
    int rc = 0;
    if (!cur)
        return 0; /* the parser refuses metadata without its current schema */
    floe_metadata_json_take_alloc_failure(); /* jansson's parse errors may be our OOM */
    if ((rc = floe_schema_parse(cur->json, strlen(cur->json), &schema, err)) < 0) {
        if (floe_metadata_json_take_alloc_failure())
            rc = nomem(err);
        goto done;
    }
    /* the base's ids, sorted: a table may keep 100,000 orders, and this runs on every commit */
    if (base) {
        spec_ids = floe_malloc((base->n_specs ? base->n_specs : 1) * sizeof *spec_ids);
        order_ids = floe_malloc((base->n_sort_orders ? base->n_sort_orders : 1) * sizeof *order_ids);
        if (!spec_ids || !order_ids) {
            rc = nomem(err);
            goto done;
        }
        for (size_t i = 0; i < base->n_specs; i++)
            spec_ids[i] = base->specs[i].spec_id;
        for (size_t i = 0; i < base->n_sort_orders; i++)
            order_ids[i] = base->sort_orders[i].order_id;
        qsort(spec_ids, base->n_specs, sizeof *spec_ids, cmp_i32);
        qsort(order_ids, base->n_sort_orders, sizeof *order_ids, cmp_i32);
    }
    for (size_t i = 0; i < m->n_specs; i++) {
        const floe_metadata_spec *ms = &m->specs[i];
        if (base && bsearch(&ms->spec_id, spec_ids, base->n_specs, sizeof *spec_ids, cmp_i32))
            continue;
        floe_partition_spec *spec = NULL;
        rc = floe_partition_spec_parse_json(ms->json, strlen(ms->json), schema, &spec, err);
        if (rc < 0) {
            floe_partition_spec_free(spec);
            rc = bind_failure(rc, "partition spec", ms->spec_id, cur->schema_id, err);
            goto done;
        }
        /* names as the CLI's add-field takes them (Iceberg Java's PartitionSpec.Builder) */
        rc = floe_partition_spec_check_names(spec, schema, err);
        floe_partition_spec_free(spec);
        if (rc < 0) {
            floe_error_prefix(err, "partition spec %d: ", (int)ms->spec_id);
            goto done;
        }
    }
    for (size_t i = 0; i < m->n_sort_orders; i++) {
        const floe_metadata_sort_order *mo = &m->sort_orders[i];
        if (base && bsearch(&mo->order_id, order_ids, base->n_sort_orders, sizeof *order_ids,
                            cmp_i32))
            continue;
        floe_sort_order *order = NULL;
        rc = floe_sort_order_parse_json(mo->json, strlen(mo->json), schema, &order, err);
        floe_sort_order_free(order);
        if (rc < 0) {
            rc = bind_failure(rc, "sort order", mo->order_id, cur->schema_id, err);
            goto done;
        }
    }
done:
    floe_schema_free(schema);
    floe_free(spec_ids);
    floe_free(order_ids);
    return rc;
}

int floe_metadata_builder_finish(floe_metadata_builder *b, const char *base_metadata_location,
                                 floe_table_metadata **out, floe_error *err) {
    json_t *doc = json_deep_copy(b->doc);
    if (!doc)
        return nomem(err);
    int rc = 0;
    int64_t now = floe_wall_ms();
    int64_t floor = b->base ? b->base->last_updated_ms : 0;
    json_t *slog = json_object_get(doc, "snapshot-log");
    if (json_array_size(slog)) {
        int64_t t = jlong(json_array_get(slog, json_array_size(slog) - 1), "timestamp-ms", 0);
        floor = t > floor ? t : floor;
    }
    if (set_new(doc, "last-updated-ms", json_integer(now > floor ? now : floor), err) < 0)
        FLOE_CHECK(FLOE_ENOMEM);
    FLOE_CHECK(check_v3_types(doc, b->base, b->format_version, err));
    if (b->format_version == 1)
        FLOE_CHECK(sync_v1_legacy(doc, err));
    json_t *mlog = ensure_array(doc, "metadata-log");
    if (!mlog)
        FLOE_CHECK(nomem(err));
    if (b->base && base_metadata_location) {
        json_t *e = json_pack("{s:I, s:s}", "timestamp-ms", (json_int_t)b->base->last_updated_ms,
                              "metadata-file", base_metadata_location);
        if (!e || json_array_append_new(mlog, e) != 0)
            FLOE_CHECK(nomem(err));
    }
    /* write.metadata.previous-versions-max (default 100; at least 1 kept, as Java does) */
    int64_t keep = 100;
    json_t *props = json_object_get(doc, "properties");
    json_t *pv = json_is_object(props) ? json_object_get(props, FLOE_PROP_METADATA_PREVIOUS_MAX) : NULL;
    if (json_is_string(pv)) {
        char *end;
        long long v = strtoll(json_string_value(pv), &end, 10);
        if (!*end && v >= 0)
            keep = v;
    }
    if (keep < 1)
        keep = 1;
    while ((int64_t)json_array_size(mlog) > keep)
        json_array_remove(mlog, 0);
    floe_table_metadata *m = NULL;
    FLOE_FORWARD_IF_ERROR(floe_metadata_from_json(doc, "new metadata", &m, err)); /* takes doc */
    if ((rc = check_new_specs(m, b->base, err)) < 0) {
        floe_table_metadata_free(m);
        return rc;
    }
    *out = m;
    return 0;
done:
    json_decref(doc);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * paths (migrating a table's recorded paths)
 * ------------------------------------------------------------------------------------- */

/* Replace the string at obj[key] with fn's answer (when it gives one). */
static int map_string(json_t *obj, const char *key, floe_metadata_path_kind kind,
                      int64_t snapshot_id, floe_metadata_path_fn fn, void *ctx,
                      floe_error *err) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return 0;
    char *mapped = NULL;
    FLOE_FORWARD_IF_ERROR(fn(ctx, kind, snapshot_id, json_string_value(v), &mapped, err));
    if (!mapped)
        return 0;
    json_t *nv = json_string(mapped);
    floe_free(mapped);
    if (!nv)
        return bad_string("path", key, err);
    return set_new(obj, key, nv, err);
}

int floe_metadata_builder_map_paths(floe_metadata_builder *b, floe_metadata_path_fn fn,
                                    void *ctx, floe_error *err) {
    json_t *doc = b->doc;
    FLOE_FORWARD_IF_ERROR(map_string(doc, "location", FLOE_PATH_LOCATION, -1, fn, ctx, err));
    json_t *snaps = json_object_get(doc, "snapshots");
    for (size_t i = 0; i < json_array_size(snaps); i++) {
        json_t *sn = json_array_get(snaps, i);
        FLOE_FORWARD_IF_ERROR(map_string(sn, "manifest-list", FLOE_PATH_MANIFEST_LIST,
                                         jlong(sn, "snapshot-id", -1), fn, ctx, err));
    }
    json_t *mlog = json_object_get(doc, "metadata-log");
    for (size_t i = 0; i < json_array_size(mlog); i++)
        FLOE_FORWARD_IF_ERROR(map_string(json_array_get(mlog, i), "metadata-file",
                                         FLOE_PATH_METADATA_LOG, -1, fn, ctx, err));
    static const char *const stats[] = {"statistics", "partition-statistics"};
    for (size_t k = 0; k < 2; k++) {
        json_t *arr = json_object_get(doc, stats[k]);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t *e = json_array_get(arr, i);
            FLOE_FORWARD_IF_ERROR(map_string(e, "statistics-path", FLOE_PATH_STATISTICS,
                                             jlong(e, "snapshot-id", -1), fn, ctx, err));
        }
    }
    static const char *const props[] = {"write.data.path", "write.metadata.path",
                                        "write.object-storage.path",
                                        "write.folder-storage.path"};
    json_t *p = json_object_get(doc, "properties");
    if (json_is_object(p))
        for (size_t k = 0; k < sizeof props / sizeof props[0]; k++)
            FLOE_FORWARD_IF_ERROR(
                map_string(p, props[k], FLOE_PATH_PROPERTY, -1, fn, ctx, err));
    return 0;
}
