/*
 * rs_commit.c - POST /v1/{prefix}/namespaces/{namespace}/tables/{table}: the REST commit
 * (spec: updateTable, CommitTableRequest, TableRequirement, TableUpdate).
 *
 * The request is checked whole before anything is read: every requirement and update
 * must have a known type and its fields (else 400, nothing done). The commit then runs
 * through floe_table_commit, whose apply step (apply below) checks every requirement
 * against the metadata it starts from and makes the updates on floe's metadata builder;
 * floe_table_commit writes the new metadata file and swaps the catalog pointer by
 * compare-and-swap. When another writer swapped first, the attempt is made again on the
 * new metadata - requirements included - so a requirement is never checked against
 * metadata other than the one the change is applied to. A requirement that fails is a
 * 409 CommitFailedException; an update the builder refuses a 400.
 *
 * A staged create (createTable with stage-create) is committed here too: on a table that
 * does not exist, a request whose only requirement is assert-create builds the table from
 * nothing with its updates (commit_create), for a caller with the namespace's create
 * grant (rs_may_create_in).
 *
 * Updates that name "the last added" schema, spec or sort order with id -1 (spec:
 * set-current-schema, set-default-spec, set-default-sort-order) take the id the builder
 * gave the one added earlier in the same request.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/keyset.h"
#include "common/propcap.h"
#include "floe/append.h"
#include "floe/io.h"
#include "floe/table.h"
#include "rs_internal.h"

/* Why apply stopped. UPDATE_CONFLICT: an update the builder refuses because of what the
 * table holds (a ref still on a snapshot remove-snapshots names): a 409 for the client to
 * refresh and decide, at once - the server's own retries re-apply the same updates on
 * the same refs and only spin (and then blame other commits). */
typedef enum { REQ_FAILED = 1, UPDATE_REFUSED = 2, UPDATE_CONFLICT = 3 } apply_outcome;

typedef struct commit_ctx {
    const json_t *requirements;
    const json_t *updates;
    bool creating;         /* a staged create's commit: the updates build a new table */
    floe_catalog *cat;     /* the table's catalog, namespace and name (set-location is */
    const char *ns;        /* held to the table's place, rs_table_location_check) */
    const char *name;
    const char *create_location; /* a staged create's: where the table starts */
    const floe_table *table;     /* the table committed to (NULL for a staged create): its
                                  * metadata file at each attempt is the base's */
    /* Where the table's files may be, as the updates applied so far leave it (borrowed
     * from the base metadata or the request): location, write.data.path and
     * write.metadata.path; conf, the confinement made of them (NULL until needed). */
    const char *location, *data_path, *metadata_path;
    floe_table_confinement *conf;
    /* The table's folders before the commit (its confinement as loaded): the only files
     * a set-location may find in the folder it moves the table to. NULL for a staged
     * create, and when the updates set no location. */
    floe_table_confinement *own;
    const rs_req *q;       /* a transaction's request: apply gives up when it is abandoned
                              (rs_abandoned); NULL otherwise */
    apply_outcome outcome; /* why apply stopped, when it did */
} commit_ctx;

/* Fields each kind needs: a list of "name:type" with type s(tring) i(nteger) o(bject)
 * a(rray) n (integer or null). */
typedef struct kind {
    const char *name;
    const char *fields;
} kind;

static const kind REQUIREMENTS[] = {
    {"assert-create", ""},
    {"assert-table-uuid", "uuid:s"},
    {"assert-ref-snapshot-id", "ref:s snapshot-id:n"},
    {"assert-last-assigned-field-id", "last-assigned-field-id:i"},
    {"assert-current-schema-id", "current-schema-id:i"},
    {"assert-last-assigned-partition-id", "last-assigned-partition-id:i"},
    {"assert-default-spec-id", "default-spec-id:i"},
    {"assert-default-sort-order-id", "default-sort-order-id:i"},
};

static const kind UPDATES[] = {
    {"assign-uuid", "uuid:s"},
    {"upgrade-format-version", "format-version:i"},
    {"add-schema", "schema:o"},
    {"set-current-schema", "schema-id:i"},
    {"add-spec", "spec:o"},
    {"set-default-spec", "spec-id:i"},
    {"add-sort-order", "sort-order:o"},
    {"set-default-sort-order", "sort-order-id:i"},
    {"add-snapshot", "snapshot:o"},
    {"set-snapshot-ref", "ref-name:s type:s snapshot-id:i"},
    {"remove-snapshots", "snapshot-ids:a"},
    {"remove-snapshot-ref", "ref-name:s"},
    {"set-location", "location:s"},
    {"set-properties", "updates:o"},
    {"remove-properties", "removals:a"},
    {"set-statistics", "statistics:o"},
    {"remove-statistics", "snapshot-id:i"},
    {"set-partition-statistics", "partition-statistics:o"},
    {"remove-partition-statistics", "snapshot-id:i"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Check that each element of arr is an object whose `tag` names a known kind with its
 * fields; 0, or -1 with a 400 in r. */
static int check_kinds(const json_t *arr, const char *what, const char *tag, const kind *kinds,
                       size_t nkinds, rs_resp *r) {
    if (!json_is_array(arr))
        return rs_error(r, 400, "BadRequestException", "%s must be an array", what), -1;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        const char *t = json_string_value(json_object_get(e, tag));
        const kind *k = NULL;
        for (size_t j = 0; t && j < nkinds && !k; j++)
            if (!strcmp(kinds[j].name, t))
                k = &kinds[j];
        if (!k)
            return rs_error(r, 400, "BadRequestException", "%s[%zu]: unknown %s '%s'", what, i,
                            tag, t ? t : "(none)"),
                   -1;
        for (const char *f = k->fields; *f;) {
            size_t n = strcspn(f, ":");
            char field[64];
            snprintf(field, sizeof field, "%.*s", (int)n, f);
            char ty = f[n + 1];
            const json_t *v = json_object_get(e, field);
            bool ok = ty == 's' ? json_is_string(v) : ty == 'i' ? json_is_integer(v)
                      : ty == 'o' ? json_is_object(v) : ty == 'a' ? json_is_array(v)
                                  : (json_is_integer(v) || json_is_null(v) || !v);
            if (!ok)
                return rs_error(r, 400, "BadRequestException", "%s[%zu] (%s): bad or missing %s",
                                what, i, t, field),
                       -1;
            f += n + 2;
            while (*f == ' ')
                f++;
        }
    }
    return 0;
}

static int64_t ival(const json_t *e, const char *key) {
    return (int64_t)json_integer_value(json_object_get(e, key));
}

static const char *sval(const json_t *e, const char *key) {
    return json_string_value(json_object_get(e, key));
}

/* A ref's retention setting `key` of set-snapshot-ref: absent or null -1 (not set), else
 * an integer from 1 to max (Iceberg's SnapshotRef refuses anything else), FLOE_EINVALID
 * otherwise. */
static int retention(const json_t *e, const char *key, int64_t max, int64_t *out,
                     floe_error *err) {
    const json_t *v = json_object_get(e, key);
    *out = -1;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
        return floe_error_set(err, FLOE_EINVALID, "%s must be a positive integer", key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

/* Check one requirement against m; 0 when it holds, else FLOE_ECONFLICT naming it. */
static int check_requirement(const floe_table_metadata *m, const json_t *e, floe_error *err) {
    const char *t = sval(e, "type");
    if (!strcmp(t, "assert-create"))
        return floe_error_set(err, FLOE_ECONFLICT, "requirement failed: the table already exists");
    if (!strcmp(t, "assert-table-uuid")) {
        if (!m->table_uuid || strcasecmp(m->table_uuid, sval(e, "uuid")))
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "requirement failed: table uuid is %s, not %s",
                                  m->table_uuid ? m->table_uuid : "(none)", sval(e, "uuid"));
        return 0;
    }
    if (!strcmp(t, "assert-ref-snapshot-id")) {
        const char *name = sval(e, "ref");
        const floe_snapshot_ref *ref = floe_table_metadata_ref(m, name);
        const json_t *want = json_object_get(e, "snapshot-id");
        if (!want || json_is_null(want)) {
            if (ref)
                return floe_error_set(err, FLOE_ECONFLICT,
                                      "requirement failed: ref %s was created concurrently "
                                      "(snapshot %" PRId64 ")",
                                      name, ref->snapshot_id);
            return 0;
        }
        if (!ref)
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "requirement failed: ref %s is missing, expected snapshot "
                                  "%" PRId64, name, ival(e, "snapshot-id"));
        if (ref->snapshot_id != ival(e, "snapshot-id"))
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "requirement failed: ref %s is at snapshot %" PRId64
                                  ", expected %" PRId64,
                                  name, ref->snapshot_id, ival(e, "snapshot-id"));
        return 0;
    }
    static const struct {
        const char *type, *field;
        size_t offset;
    } ids[] = {
        {"assert-last-assigned-field-id", "last-assigned-field-id",
         offsetof(floe_table_metadata, last_column_id)},
        {"assert-current-schema-id", "current-schema-id",
         offsetof(floe_table_metadata, current_schema_id)},
        {"assert-last-assigned-partition-id", "last-assigned-partition-id",
         offsetof(floe_table_metadata, last_partition_id)},
        {"assert-default-spec-id", "default-spec-id", offsetof(floe_table_metadata, default_spec_id)},
        {"assert-default-sort-order-id", "default-sort-order-id",
         offsetof(floe_table_metadata, default_sort_order_id)},
    };
    for (size_t i = 0; i < COUNT(ids); i++) {
        if (strcmp(t, ids[i].type))
            continue;
        int32_t have;
        memcpy(&have, (const char *)m + ids[i].offset, sizeof have);
        if (have != ival(e, ids[i].field))
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "requirement failed: %s is %d, expected %" PRId64, ids[i].field,
                                  (int)have, ival(e, ids[i].field));
        return 0;
    }
    return floe_error_set(err, FLOE_EINVALID, "unknown requirement %s", t); /* checked before */
}

/* Run fn's JSON argument through the builder: the member `key` of e as text. */
static int with_text(const json_t *e, const char *key, char **out, floe_error *err) {
    *out = json_dumps(json_object_get(e, key), JSON_COMPACT);
    return *out ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

/* The id an update names, -1 meaning the one added earlier in this request. */
static int last_added(const json_t *e, const char *key, int32_t last, const char *what,
                      int32_t *out, floe_error *err) {
    int64_t id = ival(e, key);
    if (id == -1) {
        if (last < 0)
            return floe_error_set(err, FLOE_EINVALID, "%s -1: no %s was added by this commit",
                                  key, what);
        id = last;
    }
    if (id < INT32_MIN || id > INT32_MAX)
        return floe_error_set(err, FLOE_EINVALID, "%s %" PRId64 " is out of range", key, id);
    *out = (int32_t)id;
    return 0;
}

/* set-properties: each value of a property floe reads with a fixed meaning (gc.enabled,
 * the history.expire.* retention, write.metadata.*, commit.retry.*, the Parquet write
 * options, the name mapping...) must be one floe can read, as floe table properties set
 * checks it (floe_table_properties_check, against the base for the values that go
 * together): a value it cannot read is refused naming it, never stored for a later expiry
 * or write to misread. format-version is the table's format, not a property: the spec's
 * upgrade-format-version changes it. The engines' own properties are theirs to check.
 * The properties are held to the caps (common/propcap.h) as the commit's updates so far
 * leave them: one commit of several set-properties grows the table no further than one. */
static int set_properties(floe_metadata_builder *b, const json_t *updates, floe_error *err) {
    floe_kv *kv = floe_calloc(json_object_size(updates) + 1, sizeof *kv);
    size_t n = 0;
    const char *k;
    const json_t *v;
    int rc = 0;
    floe_propcap_tally before, after;
    floe_metadata_builder_property_sizes(b, &before.count, &before.bytes);
    if (!kv)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    json_object_foreach((json_t *)updates, k, v) {
        if (!json_is_string(v))
            FLOE_FAIL(err, FLOE_EINVALID, "property %s must be a string", k);
        if (!strcmp(k, "format-version"))
            FLOE_FAIL(err, FLOE_EINVALID, "property format-version=%s: the format version is "
                      "not a property: upgrade-format-version changes it", json_string_value(v));
        kv[n].key = k;
        kv[n++].value = json_string_value(v);
    }
    FLOE_CHECK(floe_table_properties_check(floe_metadata_builder_base(b), kv, n, NULL, 0, err));
    for (size_t i = 0; i < n; i++)
        FLOE_CHECK(floe_metadata_builder_set_property(b, kv[i].key, kv[i].value, err));
    floe_metadata_builder_property_sizes(b, &after.count, &after.bytes);
    FLOE_CHECK(floe_propcap_totals("table", n ? kv[0].key : NULL, before, after, err));
done:
    floe_free(kv);
    return rc;
}

static int apply_update(floe_metadata_builder *b, const json_t *e, int32_t last[3],
                        floe_error *err) {
    const char *a = sval(e, "action");
    char *text = NULL;
    int rc = 0;
    int32_t id;
    if (!strcmp(a, "assign-uuid")) {
        rc = floe_metadata_builder_assign_uuid(b, sval(e, "uuid"), err);
    } else if (!strcmp(a, "upgrade-format-version")) {
        int64_t v = ival(e, "format-version");
        int have = floe_metadata_builder_format_version(b);
        if (v < have)
            rc = floe_error_set(err, FLOE_EINVALID, "cannot downgrade format version %d to %" PRId64,
                                have, v);
        else if (v > have)
            rc = floe_metadata_builder_upgrade(b, (int)(v > 3 ? 4 : v), err);
    } else if (!strcmp(a, "add-schema")) {
        FLOE_CHECK(with_text(e, "schema", &text, err));
        /* a field keeps its type or is promoted: the table's files stay readable */
        FLOE_CHECK(floe_metadata_schema_check_evolution(floe_metadata_builder_base(b), text,
                                                        floe_metadata_builder_format_version(b),
                                                        err));
        rc = floe_metadata_builder_add_schema(b, text, &last[0], err);
    } else if (!strcmp(a, "set-current-schema")) {
        FLOE_CHECK(last_added(e, "schema-id", last[0], "schema", &id, err));
        rc = floe_metadata_builder_set_current_schema(b, id, err);
    } else if (!strcmp(a, "add-spec")) {
        FLOE_CHECK(with_text(e, "spec", &text, err));
        rc = floe_metadata_builder_add_spec(b, text, &last[1], err);
    } else if (!strcmp(a, "set-default-spec")) {
        FLOE_CHECK(last_added(e, "spec-id", last[1], "partition spec", &id, err));
        rc = floe_metadata_builder_set_default_spec(b, id, err);
    } else if (!strcmp(a, "add-sort-order")) {
        FLOE_CHECK(with_text(e, "sort-order", &text, err));
        rc = floe_metadata_builder_add_sort_order(b, text, &last[2], err);
    } else if (!strcmp(a, "set-default-sort-order")) {
        FLOE_CHECK(last_added(e, "sort-order-id", last[2], "sort order", &id, err));
        rc = floe_metadata_builder_set_default_sort_order_id(b, id, err);
    } else if (!strcmp(a, "add-snapshot")) {
        FLOE_CHECK(with_text(e, "snapshot", &text, err));
        rc = floe_metadata_builder_add_snapshot_json(b, text, err);
    } else if (!strcmp(a, "set-snapshot-ref")) {
        const char *type = sval(e, "type");
        if (strcmp(type, "branch") && strcmp(type, "tag"))
            FLOE_FAIL(err, FLOE_EINVALID, "ref type must be branch or tag, not %s", type);
        const char *name = sval(e, "ref-name");
        FLOE_CHECK(floe_metadata_builder_set_ref(b, name, ival(e, "snapshot-id"),
                                                 !strcmp(type, "tag"), err));
        int64_t mk, ms, mr;
        FLOE_CHECK(retention(e, "min-snapshots-to-keep", INT32_MAX, &mk, err));
        FLOE_CHECK(retention(e, "max-snapshot-age-ms", INT64_MAX, &ms, err));
        FLOE_CHECK(retention(e, "max-ref-age-ms", INT64_MAX, &mr, err));
        floe_ref_retention ret = {.min_snapshots_to_keep = (int32_t)mk,
                                  .max_snapshot_age_ms = ms,
                                  .max_ref_age_ms = mr};
        rc = floe_metadata_builder_set_ref_retention(b, name, &ret, err);
    } else if (!strcmp(a, "remove-snapshots")) {
        const json_t *arr = json_object_get(e, "snapshot-ids");
        size_t n = json_array_size(arr);
        int64_t *ids = floe_calloc(n + 1, sizeof *ids);
        if (!ids)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            if (!json_is_integer(json_array_get(arr, i))) {
                floe_free(ids);
                FLOE_FAIL(err, FLOE_EINVALID, "snapshot-ids must be integers");
            }
            ids[i] = (int64_t)json_integer_value(json_array_get(arr, i));
        }
        rc = floe_metadata_builder_remove_snapshots(b, ids, n, err);
        floe_free(ids);
    } else if (!strcmp(a, "remove-snapshot-ref")) {
        rc = floe_metadata_builder_remove_ref(b, sval(e, "ref-name"), err);
    } else if (!strcmp(a, "set-location")) {
        rc = floe_metadata_builder_set_location(b, sval(e, "location"), err);
    } else if (!strcmp(a, "set-properties")) {
        FLOE_CHECK(set_properties(b, json_object_get(e, "updates"), err));
    } else if (!strcmp(a, "remove-properties")) {
        const json_t *arr = json_object_get(e, "removals");
        for (size_t i = 0; i < json_array_size(arr); i++) {
            const char *k = json_string_value(json_array_get(arr, i));
            if (!k)
                FLOE_FAIL(err, FLOE_EINVALID, "removals must be strings");
            FLOE_CHECK(floe_metadata_builder_remove_property(b, k, err));
        }
    } else if (!strcmp(a, "set-statistics") || !strcmp(a, "set-partition-statistics")) {
        bool part = a[4] == 'p';
        const char *key = part ? "partition-statistics" : "statistics";
        /* the update's snapshot-id (deprecated) must be the statistics object's own */
        const json_t *usid = json_object_get(e, "snapshot-id");
        const json_t *ssid = json_object_get(json_object_get(e, key), "snapshot-id");
        if (usid && !json_is_null(usid) &&
            (!json_is_integer(usid) || !json_is_integer(ssid) ||
             json_integer_value(usid) != json_integer_value(ssid)))
            FLOE_FAIL(err, FLOE_EINVALID, "%s: snapshot-id is not %s.snapshot-id", a, key);
        FLOE_CHECK(with_text(e, key, &text, err));
        rc = floe_metadata_builder_set_statistics(b, part, text, err);
    } else if (!strcmp(a, "remove-statistics") || !strcmp(a, "remove-partition-statistics")) {
        rc = floe_metadata_builder_remove_statistics(b, a[7] == 'p', ival(e, "snapshot-id"), err);
    } else {
        rc = floe_error_set(err, FLOE_EINVALID, "unknown update %s", a); /* checked before */
    }
done:
    free(text);
    return rc;
}

/* Where the commit lets the table's files be: what a client names must lie there, or a
 * later expiry, orphan removal or purge of this table would be asked to delete another
 * table's files (docs/REST.md, "Locations"). */
static void where_reset(commit_ctx *c, const floe_table_metadata *base) {
    c->location = base ? base->location : c->create_location;
    c->data_path = base ? floe_table_metadata_property(base, "write.data.path") : NULL;
    c->metadata_path = base ? floe_table_metadata_property(base, "write.metadata.path") : NULL;
    floe_table_confinement_free(c->conf);
    c->conf = NULL;
}

/* 0 when the file path (what of the update) lies in the table's folders
 * (floe_table_confinement), else FLOE_EINVALID naming it. */
static int check_file(commit_ctx *c, const char *what, const char *path, floe_error *err) {
    if (!c->conf)
        FLOE_FORWARD_IF_ERROR(floe_table_confinement_new(c->cat, c->ns, c->name, c->location,
                                                         c->data_path, c->metadata_path,
                                                         &c->conf, err));
    int held = floe_table_confinement_holds(c->conf, path, err);
    if (held != 0)
        return held < 0 ? held : 0;
    return floe_error_set(err, FLOE_EINVALID,
                          "%s %s lies outside the table's location %s: a table's files are "
                          "its own (its expiry would delete that file)%s",
                          what, path, c->location, RS_LOCATIONS_TAIL);
}

/* A file a commit names in a role (field, e.g. "statistics-path"; own, what it must be)
 * may not be the metadata file the commit starts from: the builder refuses the
 * metadata-log's files and the other roles' (floe_metadata_builder_add_snapshot_json,
 * _set_statistics), but the current file is not in the log yet, and the builder does not
 * know it. FLOE_EINVALID naming it. */
static int check_not_current(const commit_ctx *c, const char *field, const char *own,
                             const char *path, floe_error *err) {
    const char *current = c->table ? floe_table_metadata_location(c->table) : NULL;
    if (!path || !current)
        return 0;
    char *pk = floe_io_uri_key(path), *ck = floe_io_uri_key(current);
    bool keyed = pk && ck, same = keyed && !strcmp(pk, ck);
    floe_free(pk);
    floe_free(ck);
    if (!keyed)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (same)
        return floe_error_set(err, FLOE_EINVALID, "%s %s is the table's current metadata file: "
                              "%s must be a file of its own", field, path, own);
    return 0;
}

/* The paths update e names checked against where the table's files may be, and the
 * places it moves kept track of. */
static int check_paths(commit_ctx *c, const json_t *e, floe_error *err) {
    const char *a = sval(e, "action");
    if (!strcmp(a, "set-location")) {
        c->location = sval(e, "location");
        floe_table_confinement_free(c->conf);
        c->conf = NULL;
    } else if (!strcmp(a, "set-properties")) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(e, "updates"), k, v)
            FLOE_FORWARD_IF_ERROR(rs_write_path_check(k, json_string_value(v), c->location,
                                                      err));
        const json_t *u = json_object_get(e, "updates");
        if (json_string_value(json_object_get(u, "write.data.path")))
            c->data_path = json_string_value(json_object_get(u, "write.data.path"));
        if (json_string_value(json_object_get(u, "write.metadata.path")))
            c->metadata_path = json_string_value(json_object_get(u, "write.metadata.path"));
        floe_table_confinement_free(c->conf);
        c->conf = NULL;
    } else if (!strcmp(a, "remove-properties")) {
        const json_t *arr = json_object_get(e, "removals");
        for (size_t i = 0; i < json_array_size(arr); i++) {
            const char *k = json_string_value(json_array_get(arr, i));
            if (k && !strcmp(k, "write.data.path"))
                c->data_path = NULL;
            if (k && !strcmp(k, "write.metadata.path"))
                c->metadata_path = NULL;
        }
        floe_table_confinement_free(c->conf);
        c->conf = NULL;
    } else if (!strcmp(a, "add-snapshot")) {
        const json_t *s = json_object_get(e, "snapshot");
        const char *list = sval(s, "manifest-list");
        if (list)
            FLOE_FORWARD_IF_ERROR(check_file(c, "manifest list", list, err));
        FLOE_FORWARD_IF_ERROR(check_not_current(c, "manifest-list", "a manifest list", list, err));
        const json_t *inline_manifests = json_object_get(s, "manifests"); /* format v1 */
        for (size_t i = 0; i < json_array_size(inline_manifests); i++) {
            const char *m = json_string_value(json_array_get(inline_manifests, i));
            if (m)
                FLOE_FORWARD_IF_ERROR(check_file(c, "manifest", m, err));
        }
    } else if (!strcmp(a, "set-statistics") || !strcmp(a, "set-partition-statistics")) {
        const json_t *st =
            json_object_get(e, a[4] == 'p' ? "partition-statistics" : "statistics");
        const char *path = sval(st, "statistics-path");
        if (path)
            FLOE_FORWARD_IF_ERROR(check_file(c, "statistics file", path, err));
        FLOE_FORWARD_IF_ERROR(check_not_current(c, "statistics-path", "a statistics file",
                                                path, err));
    }
    return 0;
}

/* True when the updates of c have an update of the action. */
static bool has_action(const commit_ctx *c, const char *action) {
    for (size_t i = 0; i < json_array_size(c->updates); i++)
        if (!strcmp(sval(json_array_get(c->updates, i), "action"), action))
            return true;
    return false;
}

/* The folder a set-location (or a staged create) moves the table to must hold no file
 * but the table's own (c->own; none for a new table): orphan removal lists the table's
 * whole location and deletes what the table does not reference, so a dropped table's
 * kept files, or a user's, would be deleted there. */
static int check_unused(const commit_ctx *c, const char *location, floe_error *err) {
    return floe_table_check_location_own(c->cat, c->ns, c->name, location, c->own, err);
}

/* The write paths (write.data.path, ...) as the updates on b leave them, held to the
 * location the commit ends with: a set-location does not leave them behind, where the
 * table would go on writing (and its old folder be free for another table, whose orphan
 * removal would delete them). */
static int check_write_paths_moved(const commit_ctx *c, const floe_metadata_builder *b,
                                   floe_error *err) {
    for (size_t k = 0; k < FLOE_TABLE_WRITE_PATHS; k++) {
        const char *prop = floe_table_write_path_props[k];
        int rc = rs_write_path_check(prop, floe_metadata_builder_property(b, prop), c->location,
                                     err);
        if (rc < 0) {
            floe_error_prefix(err, "the table's write paths move with it (set or remove %s in "
                              "the same commit): ", prop);
            return rc;
        }
    }
    return 0;
}

/* The update error err of updates[i] named so, and c->outcome set: the update is refused
 * (UPDATE_CONFLICT for a conflict, returned as FLOE_EINVALID). */
static int refused(commit_ctx *c, size_t i, int rc, floe_error *err) {
    if (rc != FLOE_ENOMEM) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        floe_error_set(err, rc, "updates[%zu] (%s): %s", i,
                       sval(json_array_get(c->updates, i), "action"), msg);
        c->outcome = rc == FLOE_ECONFLICT ? UPDATE_CONFLICT : UPDATE_REFUSED;
    }
    /* not FLOE_ECONFLICT, which floe_table_commit would retry */
    return rc == FLOE_ECONFLICT ? FLOE_EINVALID : rc;
}

/* Make every update on b; c->outcome says UPDATE_REFUSED (or UPDATE_CONFLICT) when one
 * is refused. */
static int apply_updates(commit_ctx *c, floe_metadata_builder *b, floe_error *err) {
    int32_t last[3] = {-1, -1, -1}; /* schema, spec, sort order added by this request */
    size_t moved = SIZE_MAX;        /* the last set-location */
    where_reset(c, floe_metadata_builder_base(b));
    for (size_t i = 0; i < json_array_size(c->updates); i++) {
        const json_t *e = json_array_get(c->updates, i);
        const floe_table_metadata *base = floe_metadata_builder_base(b);
        int rc;
        /* a table's uuid is its identity (assert-table-uuid tells a re-created or swapped
         * table by it): assign-uuid sets it on a create, and on an existing table may only
         * repeat it, as Iceberg's metadata builder allows */
        if (!c->creating && !strcmp(sval(e, "action"), "assign-uuid") && base &&
            base->table_uuid && strcasecmp(base->table_uuid, sval(e, "uuid")))
            rc = floe_error_set(err, FLOE_EINVALID, "cannot reassign the table's uuid %s to %s",
                                base->table_uuid, sval(e, "uuid"));
        else if (c->cat && !strcmp(sval(e, "action"), "set-location") &&
                 ((rc = rs_table_location_check(c->cat, c->ns, c->name, sval(e, "location"),
                                                err)) < 0 ||
                  (!c->creating && (rc = check_unused(c, sval(e, "location"), err)) < 0)))
            ; /* refused */
        else if (c->cat && (rc = check_paths(c, e, err)) < 0)
            ; /* refused */
        else
            rc = apply_update(b, e, last, err);
        if (rc < 0)
            return refused(c, i, rc, err);
        if (!strcmp(sval(e, "action"), "set-location"))
            moved = i;
    }
    if (c->cat && moved != SIZE_MAX) {
        int rc = check_write_paths_moved(c, b, err);
        if (rc < 0)
            return refused(c, moved, rc, err);
    }
    /* a new table's folder: empty, as for a create; a commit that adds snapshots is
     * checked once the metadata is made (commit_create): their files may be there */
    if (c->cat && c->creating && !has_action(c, "add-snapshot")) {
        int rc = check_unused(c, c->location, err);
        if (rc < 0 && moved != SIZE_MAX)
            return refused(c, moved, rc, err);
        if (rc < 0 && rc != FLOE_ENOMEM)
            c->outcome = UPDATE_REFUSED;
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int apply(void *vctx, floe_metadata_builder *b, floe_error *err) {
    commit_ctx *c = vctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    c->outcome = 0;
    if (c->q && rs_abandoned(c->q)) /* FLOE_ECANCELLED: floe_tables_commit does not retry */
        return floe_error_set(err, FLOE_ECANCELLED, "the request was abandoned (the client "
                              "closed its connection or the server is stopping); nothing "
                              "was committed");
    for (size_t i = 0; i < json_array_size(c->requirements); i++) {
        int rc = check_requirement(base, json_array_get(c->requirements, i), err);
        if (rc < 0) {
            c->outcome = REQ_FAILED;
            /* not FLOE_ECONFLICT, which floe_table_commit would retry: the client decides */
            return rc == FLOE_ECONFLICT ? FLOE_EINVALID : rc;
        }
    }
    if (json_array_size(c->updates) == 0)
        return FLOE_COMMIT_NOOP;
    return apply_updates(c, b, err);
}

/* The commit of a staged create: the table does not exist and the requirements are
 * assert-create alone. The table is built from nothing by the updates (at least a schema
 * made current, a spec and a sort order made default), then written and registered by
 * floe_table_create_with_metadata; a table created meanwhile makes it a 409. */
static int commit_create(rs_req *q, commit_ctx *c, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_metadata_builder *b = NULL;
    floe_table_metadata *m = NULL;
    floe_table *t = NULL;
    char *location = NULL;
    bool asserted = false;
    for (size_t i = 0; i < json_array_size(c->requirements); i++)
        asserted |= !strcmp(sval(json_array_get(c->requirements, i), "type"), "assert-create");
    if (!asserted)
        return rs_error(r, 404, "NoSuchTableException", "table %s.%s does not exist", q->ns,
                        q->table);
    /* making a table needs the namespace's grant, as POST .../tables does: the path's
     * table grant (checked on the headers) lets a caller change that table, not make it */
    if (!rs_may_create_in(q, q->ns))
        return rs_error(r, 403, "ForbiddenException",
                        "token %s may not create tables in namespace %s (a grant %s.* or * is "
                        "needed)",
                        q->token->name, q->ns, q->ns);
    for (size_t i = 0; i < json_array_size(c->requirements); i++) {
        const char *type = sval(json_array_get(c->requirements, i), "type");
        if (strcmp(type, "assert-create"))
            return rs_error(r, 409, "CommitFailedException",
                            "requirement failed: %s on table %s.%s, which does not exist", type,
                            q->ns, q->table);
    }
    if (!rs_table_name_ok(q->table, r))
        return 0;
    /* the namespace may have been dropped since the create was staged: a 404 naming it,
     * before anything is checked or written */
    bool ns_exists = false;
    int rc = floe_catalog_namespace_exists(q->cat, q->ns, &ns_exists, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, "NoSuchNamespaceException");
    if (!ns_exists)
        return rs_error(r, 404, "NoSuchNamespaceException",
                        "namespace %s does not exist (dropped since the create of %s.%s was "
                        "staged?): nothing was created",
                        q->ns, q->ns, q->table);
    c->creating = true;
    rc = floe_catalog_default_location(q->cat, q->ns, q->table, &location, &err);
    c->create_location = location;
    if (rc == 0)
        rc = floe_metadata_builder_new_empty(location, &b, &err);
    if (rc == 0)
        rc = apply_updates(c, b, &err);
    if (rc == 0)
        rc = floe_metadata_builder_finish(b, NULL, &m, &err);
    /* the client wrote its snapshots' files into the folder before: those may be there,
     * nothing else (a dropped table's kept files would be deleted by orphan removal) */
    if (rc == 0 && has_action(c, "add-snapshot") &&
        (rc = floe_table_check_location_snapshots(q->cat, q->ns, q->table, m, &err)) ==
            FLOE_EINVALID)
        c->outcome = UPDATE_REFUSED;
    if (rc == 0) {
        rs_idem_table(q, m->table_uuid);
        rc = floe_table_create_with_metadata(q->cat, q->ns, q->table, m, &t, &err);
        m = NULL; /* taken */
    }
    if (rc == FLOE_EEXISTS)
        rs_error(r, 409, "CommitFailedException", "requirement failed: %s", err.msg);
    else if (rc < 0 && (c->outcome == UPDATE_REFUSED || rc == FLOE_EINVALID))
        rs_error(r, 400, "BadRequestException", "%s", err.msg);
    else if (rc < 0)
        rs_floe_error(r, rc, &err, "NoSuchNamespaceException");
    else
        rs_table_result(r, t, false);
    floe_table_close(t);
    floe_table_metadata_free(m);
    floe_metadata_builder_free(b);
    floe_free(location);
    return 0;
}

/* The set-location updates of c held to the rule of create and register: an absolute
 * location, and when placed, not the warehouse's reserved folders, neither inside nor
 * around another table's (whose files a purge of this table would then delete): the
 * places ps[0..nps) when given, else the catalog's, read here. 0, or -1 with a 400 in r. */
static int check_locations(rs_req *q, const char *ns, const char *name, const commit_ctx *c,
                           bool placed, const floe_table_place *ps, size_t nps, rs_resp *r) {
    for (size_t i = 0; i < json_array_size(c->updates); i++) {
        const json_t *e = json_array_get(c->updates, i);
        if (strcmp(sval(e, "action"), "set-location"))
            continue;
        const char *loc = sval(e, "location");
        if (floe_io_uri_is_relative(loc))
            return rs_error(r, 400, "BadRequestException",
                            "updates[%zu] (set-location): %s is not an absolute location", i,
                            loc),
                   -1;
        if (!placed)
            continue;
        floe_error err;
        floe_error_clear(&err);
        int rc = ps ? floe_table_check_location_among(q->cat, ps, nps, ns, name, NULL, NULL, loc,
                                                      &err)
                    : floe_table_check_location(q->cat, ns, name, loc, &err);
        if (rc == FLOE_EINVALID || rc == FLOE_EEXISTS) /* EEXISTS: a folder by case only */
            return rs_error(r, 400, "BadRequestException", "updates[%zu] (set-location): %s", i,
                            err.msg),
                   -1;
        if (rc < 0)
            return rs_floe_error(r, rc, &err, "NoSuchTableException"), -1;
    }
    return 0;
}

/* At most this many updates, and this many requirements, in one table's commit
 * (docs/REST.md, "Commits"). Applying an update may look through what the metadata holds
 * (an added sort order is compared with every one there), so a commit of many thousands
 * costs more than its size: 16,000 add-sort-orders, 2.6 MiB, ran for minutes holding a
 * catalog handle. Writers send a few per commit (an add-snapshot and a set-snapshot-ref
 * per operation; one remove-snapshots names every id). */
#define RS_MAX_UPDATES 1000
/* and this many updates and requirements over all the table-changes of a transaction */
#define RS_MAX_TX_UPDATES 10000

/* A CommitTableRequest checked whole: c gets its requirements and updates; 0, or -1
 * with a 400 in r. */
static int commit_request(const json_t *req, commit_ctx *c, rs_resp *r) {
    *c = (commit_ctx){.requirements = json_object_get(req, "requirements"),
                      .updates = json_object_get(req, "updates")};
    if (check_kinds(c->requirements, "requirements", "type", REQUIREMENTS, COUNT(REQUIREMENTS),
                    r) < 0 ||
        check_kinds(c->updates, "updates", "action", UPDATES, COUNT(UPDATES), r) < 0)
        return -1;
    size_t nu = json_array_size(c->updates), nr = json_array_size(c->requirements);
    if (nu > RS_MAX_UPDATES || nr > RS_MAX_UPDATES)
        return rs_error(r, 400, "BadRequestException",
                        "the commit has %zu %s; at most %d are taken in one commit "
                        "(docs/REST.md, \"Commits\")",
                        nu > RS_MAX_UPDATES ? nu : nr,
                        nu > RS_MAX_UPDATES ? "updates" : "requirements", RS_MAX_UPDATES),
               -1;
    return 0;
}

int rs_commit_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    floe_table_placement_lock *lock = NULL;
    commit_ctx c;
    if (commit_request(q->body, &c, r) < 0)
        return 0;
    /* the identifier, when given, must name the table of the path */
    const json_t *id = json_object_get(q->body, "identifier");
    if (id && !json_is_null(id)) {
        char *ns = rs_namespace_from_json(json_object_get(id, "namespace"), r);
        const char *name = sval(id, "name");
        bool same = ns && name && !strcmp(ns, q->ns) && !strcmp(name, q->table);
        floe_free(ns);
        if (!same)
            return rs_error(r, 400, "BadRequestException",
                            "the identifier in the body does not name the table of the path");
    }
    c.cat = q->cat;
    c.ns = q->ns;
    c.name = q->table;
    /* a move is checked and swapped under the catalog's placement lock, as a create is
     * registered: two moves (or a move and a create) to one folder cannot both pass the
     * check before either is in the catalog */
    int rc = has_action(&c, "set-location") ? floe_table_placement_lock_take(q->cat, &lock, &err)
                                            : 0;
    if (rc < 0) {
        rs_floe_error(r, rc, &err, "NoSuchTableException");
        goto done;
    }
    if (check_locations(q, q->ns, q->table, &c, true, NULL, 0, r) < 0)
        goto done;
    rc = floe_table_load(q->cat, q->ns, q->table, &t, &err);
    c.table = t;
    if (rc == 0)
        rs_idem_table(q, floe_table_metadata_get(t)->table_uuid);
    if (rc == FLOE_ENOTFOUND) {
        /* the create takes the lock itself (it is not re-entrant) and checks again
         * under it */
        floe_table_placement_lock_release(lock);
        lock = NULL;
        commit_create(q, &c, r);
        goto done;
    }
    if (rc == 0 && has_action(&c, "set-location"))
        rc = floe_table_confinement_open(t, &c.own, &err);
    if (rc == 0)
        rc = floe_table_commit(t, apply, &c, &err);
    if (rc < 0 && (c.outcome == REQ_FAILED || c.outcome == UPDATE_CONFLICT))
        rs_error(r, 409, "CommitFailedException", "%s", err.msg);
    else if (rc < 0 && c.outcome == UPDATE_REFUSED && rc != FLOE_ECONFLICT)
        rs_error(r, 400, "BadRequestException", "%s", err.msg);
    else if (rc < 0)
        rs_floe_error(r, rc, &err, "NoSuchTableException");
    else
        rs_table_result(r, t, false);
    /* the answer is a CommitTableResponse: metadata-location and metadata; the ETag and
     * config of a LoadTableResult do no harm to clients (extra fields are allowed) */
done:
    floe_table_placement_lock_release(lock);
    floe_table_confinement_free(c.conf);
    floe_table_confinement_free(c.own);
    floe_table_close(t);
    return 0;
}

static bool still_wanted(void *q) {
    return !rs_abandoned(q);
}

/* The location the updates of c leave the table at (its last set-location), or NULL. */
static const char *moved_to(const commit_ctx *c) {
    const char *to = NULL;
    for (size_t i = 0; i < json_array_size(c->updates); i++) {
        const json_t *e = json_array_get(c->updates, i);
        if (!strcmp(sval(e, "action"), "set-location"))
            to = sval(e, "location");
    }
    return to;
}

typedef struct move {
    char *key; /* floe_io_uri_key of the location, with a '/' at the end */
    size_t i;  /* the change */
} move;

static int by_move_key(const void *a, const void *b) {
    return strcmp(((const move *)a)->key, ((const move *)b)->key);
}

/* The changes of a transaction move their tables neither into one folder nor one inside
 * another's new folder: each is checked against the catalog as it was before the
 * transaction (check_locations), which holds neither. Sorted by key with a '/' ending,
 * a folder and one inside it are adjacent (all keys between them lie inside the first
 * too, and would be caught first). 0, or -1 with a 400 (500) in r. */
static int check_moves_apart(char *const *names, const char *const *tables,
                             const commit_ctx *cs, size_t n, rs_resp *r) {
    move *ms = floe_calloc(n ? n : 1, sizeof *ms);
    size_t m = 0;
    int rc = 0;
    if (!ms)
        return rs_error(r, 500, "InternalServerError", "out of memory"), -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *to = moved_to(&cs[i]);
        char *key = to ? floe_io_uri_key(to) : NULL;
        if (to && (!key || !(ms[m].key = floe_asprintf("%s/", key)))) {
            rs_error(r, 500, "InternalServerError", "out of memory");
            rc = -1;
        } else if (to) {
            ms[m++].i = i;
        }
        floe_free(key);
    }
    if (rc == 0)
        qsort(ms, m, sizeof *ms, by_move_key);
    for (size_t k = 1; rc == 0 && k < m; k++) {
        const move *a = &ms[k - 1], *b = &ms[k];
        if (strncmp(b->key, a->key, strlen(a->key)))
            continue;
        bool same = !strcmp(a->key, b->key);
        /* named in the order of the request: i the later change, j the earlier */
        size_t i = a->i > b->i ? a->i : b->i, j = a->i > b->i ? b->i : a->i;
        bool i_inside = i == b->i; /* b's folder lies inside a's */
        rs_error(r, 400, "BadRequestException",
                 "table-changes[%zu]: table %s.%s: location %s %s the location %s that "
                 "table-changes[%zu] moves table %s.%s to: a table's location must be a "
                 "folder of its own%s",
                 i, names[i], tables[i], moved_to(&cs[i]),
                 same       ? "is"
                 : i_inside ? "lies inside"
                            : "contains",
                 moved_to(&cs[j]), j, names[j], tables[j], RS_LOCATIONS_TAIL);
        rc = -1;
    }
    for (size_t k = 0; k < m; k++)
        floe_free(ms[k].key);
    floe_free(ms);
    return rc;
}

/* At most this many table-changes in one transaction (docs/REST.md, "Transactions"). Each
 * change is a table loaded and, when it changes anything, a metadata file written and
 * synced - some 10 ms on a synced disk - while the request holds one of the
 * RS_CATALOG_HANDLES catalog handles: a transaction at the cap runs for seconds, one of
 * 40,000 (a 4 MB body) would hold its handle for minutes. Multi-table transactions change
 * a few tables. */
#define RS_MAX_TABLE_CHANGES 1000

/* POST /v1/{prefix}/transactions/commit (spec: commitTransaction, CommitTransactionRequest):
 * the table-changes, each a CommitTableRequest with its identifier, committed together by
 * floe_tables_commit - one SQL transaction swaps every pointer, so all the tables move or
 * none. Every change is checked before anything is read (400; more than
 * RS_MAX_TABLE_CHANGES, a table named twice); the tables are loaded in order and the first
 * that does not exist is a 404 (a staged create is committed through its own table's
 * route); the set-locations are then held, under the placement lock, to the other tables'
 * places (read once) and to each other (check_moves_apart); a requirement that fails on any table is a 409 and nothing changes. 204 on success. A
 * request abandoned while its tables are loaded or staged (rs_abandoned) stops there with
 * a 503, nothing committed. */
int rs_commit_transaction(rs_req *q, rs_resp *r) {
    const json_t *changes = json_object_get(q->body, "table-changes");
    if (!json_is_array(changes) || json_array_size(changes) == 0)
        return rs_error(r, 400, "BadRequestException", "table-changes must be a non-empty array");
    size_t n = json_array_size(changes);
    if (n > RS_MAX_TABLE_CHANGES)
        return rs_error(r, 400, "BadRequestException",
                        "the transaction has %zu table-changes; at most %d are taken in one "
                        "transaction (docs/REST.md, \"Transactions\")",
                        n, RS_MAX_TABLE_CHANGES);
    commit_ctx *cs = floe_calloc(n, sizeof *cs);
    floe_table **ts = floe_calloc(n, sizeof *ts);
    void **ctxs = floe_calloc(n, sizeof *ctxs);
    char **names = floe_calloc(n, sizeof *names);
    const char **tables = floe_calloc(n, sizeof *tables);
    floe_table_place *ps = NULL;
    size_t nps = 0;
    bool moves = false;
    floe_error err;
    floe_error_clear(&err);
    floe_table_placement_lock *lock = NULL;
    if (!cs || !ts || !ctxs || !names || !tables) {
        rs_error(r, 500, "InternalServerError", "out of memory");
        goto done;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *ch = json_array_get(changes, i);
        const json_t *id = json_object_get(ch, "identifier");
        const char *name = sval(id, "name");
        if (!json_is_object(ch) || !json_is_object(id) || !name) {
            rs_error(r, 400, "BadRequestException",
                     "table-changes[%zu]: a change needs an identifier {namespace, name}", i);
            goto done;
        }
        if (!(names[i] = rs_namespace_from_json(json_object_get(id, "namespace"), r)) ||
            commit_request(ch, &cs[i], r) < 0 ||
            check_locations(q, names[i], name, &cs[i], false, NULL, 0, r) < 0)
            goto done;
        tables[i] = name;
        moves = moves || has_action(&cs[i], "set-location");
        ctxs[i] = &cs[i];
        total += json_array_size(cs[i].updates) + json_array_size(cs[i].requirements);
        if (total > RS_MAX_TX_UPDATES) {
            rs_error(r, 400, "BadRequestException",
                     "table-changes[%zu]: the transaction has more than %d updates and "
                     "requirements in all (docs/REST.md, \"Transactions\")", i,
                     RS_MAX_TX_UPDATES);
            goto done;
        }
    }
    size_t dup, first;
    int rc = floe_pairs_first_repeat((const char *const *)names, tables, n, &dup, &first);
    if (rc < 0) {
        rs_floe_error(r, rc, NULL, "NoSuchTableException");
        goto done;
    }
    if (dup < n) {
        rs_error(r, 400, "BadRequestException",
                 "table-changes[%zu]: table %s.%s is changed twice (table-changes[%zu])", dup,
                 names[dup], tables[dup], first);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        cs[i].cat = q->cat;
        cs[i].ns = names[i];
        cs[i].name = tables[i];
        cs[i].q = q;
        rc = rs_abandoned(q) ? floe_error_set(&err, FLOE_ECANCELLED,
                                              "the request was abandoned (the client closed "
                                              "its connection or the server is stopping)")
                             : floe_table_load(q->cat, names[i], tables[i], &ts[i], &err);
        cs[i].table = ts[i];
        if (rc == 0 && has_action(&cs[i], "set-location"))
            rc = floe_table_confinement_open(ts[i], &cs[i].own, &err);
        if (rc < 0) {
            rs_floe_error(r, rc, &err, "NoSuchTableException");
            goto done;
        }
    }
    /* the moves checked and swapped under the placement lock (rs_commit_table); every
     * table's place read once for all of them (a read loads every table of the catalog),
     * and the moves held apart from each other */
    if (moves && (rc = floe_table_placement_lock_take(q->cat, &lock, &err)) < 0) {
        rs_floe_error(r, rc, &err, "NoSuchTableException");
        goto done;
    }
    if (moves && (rc = floe_catalog_table_places(q->cat, &ps, &nps, &err)) < 0) {
        rs_floe_error(r, rc, &err, "NoSuchTableException");
        goto done;
    }
    for (size_t i = 0; moves && i < n; i++)
        if (check_locations(q, names[i], tables[i], &cs[i], true, ps, nps, r) < 0)
            goto done;
    if (moves && check_moves_apart(names, tables, cs, n, r) < 0)
        goto done;
    size_t failed = SIZE_MAX;
    rc = floe_tables_commit_while(ts, n, apply, ctxs, still_wanted, q, &failed, &err);
    apply_outcome why = failed < n ? cs[failed].outcome : 0;
    if (rc < 0 && (why == REQ_FAILED || why == UPDATE_CONFLICT))
        rs_error(r, 409, "CommitFailedException", "table %s.%s: %s", names[failed],
                 floe_table_name(ts[failed]), err.msg);
    else if (rc < 0 && why == UPDATE_REFUSED)
        rs_error(r, 400, "BadRequestException", "table %s.%s: %s", names[failed],
                 floe_table_name(ts[failed]), err.msg);
    else if (rc < 0)
        rs_floe_error(r, rc, &err, "NoSuchTableException");
    else
        r->status = 204;
done:
    floe_table_placement_lock_release(lock);
    floe_table_places_free(ps, nps);
    for (size_t i = 0; ts && i < n; i++)
        floe_table_close(ts[i]);
    for (size_t i = 0; cs && i < n; i++) {
        floe_table_confinement_free(cs[i].conf);
        floe_table_confinement_free(cs[i].own);
    }
    for (size_t i = 0; names && i < n; i++)
        floe_free(names[i]);
    floe_free(tables);
    floe_free(names);
    floe_free(ctxs);
    floe_free(ts);
    floe_free(cs);
    return 0;
}
