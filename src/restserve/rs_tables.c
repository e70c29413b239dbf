/*
 * rs_tables.c - the table routes of the REST catalog (spec: listTables, createTable,
 * registerTable, loadTable, tableExists, dropTable, renameTable) over floe_table and
 * floe_catalog. Metadata files are written by floe's metadata builder and writer
 * (floe_table_create), never here.
 *
 * ETag: FNV-1a of the metadata location and the snapshots mode, so it changes with every
 * commit and differs between the "all" and "refs" representations (spec: etag). A
 * conditional load (If-None-Match) compares against the catalog's pointer before reading
 * the metadata file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/table.h"
#include "common/keyset.h"
#include "rs_internal.h"

static const char *NO_TABLE = "NoSuchTableException";
static const char *NO_NS = "NoSuchNamespaceException";

void rs_etag(const char *metadata_location, bool refs_only, char out[48]) {
    uint64_t h = floe_fnv1a(metadata_location, strlen(metadata_location), FLOE_FNV1A_SEED);
    snprintf(out, 48, "\"%016" PRIx64 "%s\"", h, refs_only ? "-refs" : "");
}

/* Keep only the snapshots a ref points at (snapshots=refs). */
static void keep_ref_snapshots(json_t *doc) {
    json_t *snaps = json_object_get(doc, "snapshots");
    json_t *refs = json_object_get(doc, "refs");
    for (size_t i = json_array_size(snaps); i-- > 0;) {
        json_int_t id = json_integer_value(json_object_get(json_array_get(snaps, i), "snapshot-id"));
        bool referenced = false;
        const char *k;
        json_t *ref;
        json_object_foreach(refs, k, ref) {
            if (json_integer_value(json_object_get(ref, "snapshot-id")) == id)
                referenced = true;
        }
        if (!referenced)
            json_array_remove(snaps, i);
    }
}

static int append_cb(const char *p, size_t n, void *ctx) {
    return floe_buf_append(ctx, p, n) < 0 ? -1 : 0;
}

/* The LoadTableResult of metadata m at location loc. */
static int table_result(rs_resp *r, const char *loc, const floe_table_metadata *m,
                        bool refs_only) {
    floe_error err;
    floe_error_clear(&err);
    char *text = NULL;
    size_t len = 0;
    int rc = floe_table_metadata_to_json(m, false, &text, &len, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_TABLE);
    floe_buf *b = &r->body;
    floe_buf_reset(b);
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"metadata-location\":")); /* checked in send */
    FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)loc, strlen(loc)));
    FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"metadata\":"));
    if (refs_only) {
        json_t *doc = json_loadb(text, len, 0, NULL);
        if (!doc) {
            floe_free(text);
            return rs_error(r, 500, "InternalServerError", "out of memory");
        }
        keep_ref_snapshots(doc);
        if (json_dump_callback(doc, append_cb, b, JSON_COMPACT) < 0)
            b->error = FLOE_ENOMEM;
        json_decref(doc);
    } else {
        FLOE_IGNORE_RESULT(floe_buf_append(b, text, len));
    }
    floe_free(text);
    FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"config\":{}}"));
    rs_etag(loc, refs_only, r->etag);
    r->status = 200;
    return 0;
}

int rs_table_result(rs_resp *r, const floe_table *t, bool refs_only) {
    return table_result(r, floe_table_metadata_location(t), floe_table_metadata_get(t),
                        refs_only);
}

int rs_table_result_at(rs_resp *r, floe_catalog *cat, const char *location, floe_error *err) {
    floe_table_metadata *m = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_read(floe_catalog_io(cat), location, &m, err));
    int rc = table_result(r, location, m, false);
    floe_table_metadata_free(m);
    return rc;
}

/* snapshots=all|refs (absent: all). */
static int snapshots_mode(rs_req *q, bool *refs_only, rs_resp *r) {
    char *v = rs_query(q, "snapshots");
    int rc = 0;
    *refs_only = v && !strcmp(v, "refs");
    if (v && strcmp(v, "refs") && strcmp(v, "all"))
        rc = -1, rs_error(r, 400, "BadRequestException", "snapshots must be all or refs, not '%s'", v);
    floe_free(v);
    return rc;
}

/* Whether an If-None-Match value lists etag (or is "*"). */
static bool etag_listed(const char *header, const char *etag) {
    size_t el = strlen(etag);
    const char *p = header;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!strncmp(p, "W/", 2))
            p += 2;
        size_t n = strcspn(p, ",");
        while (n && p[n - 1] == ' ')
            n--;
        if ((n == 1 && *p == '*') || (n == el && !strncmp(p, etag, n)))
            return true;
        p += strcspn(p, ",");
    }
    return false;
}

int rs_load_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    char *loc = NULL;
    floe_table *t = NULL;
    bool refs_only;
    if (snapshots_mode(q, &refs_only, r) < 0)
        return 0;
    int rc = floe_catalog_load_table(q->cat, q->ns, q->table, &loc, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_TABLE);
    const char *inm = rs_header(q, "If-None-Match");
    char etag[48];
    rs_etag(loc, refs_only, etag);
    if (inm && etag_listed(inm, etag)) {
        r->status = 304;
        memcpy(r->etag, etag, sizeof etag);
    } else if ((rc = floe_table_load(q->cat, q->ns, q->table, &t, &err)) < 0) {
        /* a table whose metadata file cannot be found still exists (a 404 would tell the
         * client it does not): a server error, unless it was dropped meanwhile */
        char *again = NULL;
        floe_error err2;
        if (rc == FLOE_ENOTFOUND &&
            floe_catalog_load_table(q->cat, q->ns, q->table, &again, &err2) == 0)
            rs_error(r, 500, "InternalServerError", "%s", err.msg);
        else
            rs_floe_error(r, rc, &err, NO_TABLE);
        floe_free(again);
    } else {
        rs_table_result(r, t, refs_only);
        rs_vend_add(q, t, r);
    }
    floe_table_close(t);
    floe_free(loc);
    return 0;
}

int rs_table_exists(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    char *loc = NULL;
    int rc = floe_catalog_load_table(q->cat, q->ns, q->table, &loc, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_TABLE);
    floe_free(loc);
    r->status = 204;
    return 0;
}

int rs_list_tables(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_strlist names = {0};
    bool exists = false;
    int rc = floe_catalog_namespace_exists(q->cat, q->ns, &exists, &err);
    if (rc == 0 && !exists)
        rc = floe_error_set(&err, FLOE_ENOTFOUND, "namespace %s does not exist", q->ns);
    if (rc == 0)
        rc = floe_catalog_list_tables(q->cat, q->ns, &names, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        goto done;
    }
    size_t from, to;
    const char *next;
    if (rs_page(q, &names, &from, &to, &next, r) < 0)
        goto done;
    floe_buf *b = &r->body;
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"identifiers\":[")); /* checked in send */
    for (size_t i = from; i < to; i++) {
        FLOE_IGNORE_RESULT(floe_buf_printf(b, "%s{\"namespace\":", i > from ? "," : ""));
        rs_put_namespace(b, q->ns);
        FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"name\":"));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)names.items[i],
                                                   strlen(names.items[i])));
        FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
    }
    rs_page_end(b, next);
    r->status = 200;
done:
    floe_strlist_free(&names);
    return 0;
}

/* A JSON value as compact text (caller frees), or NULL when absent/null. */
static char *json_text(const json_t *v) {
    return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT) : NULL;
}

static const char *str_member(const json_t *obj, const char *key) {
    return json_string_value(json_object_get(obj, key));
}

/* 0 when the properties' write paths lie inside the table's location (loc, else where
 * the catalog puts table ns.name) (rs_write_path_check); else -1 with the 400 in r. */
static int write_paths_allowed(rs_req *q, const char *name, const char *loc, const floe_kv *kv,
                               size_t n, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    char *dflt = NULL;
    int rc = 0;
    if (!loc && n && (rc = floe_catalog_default_location(q->cat, q->ns, name, &dflt, &err)) < 0)
        return rs_floe_error(r, rc, &err, NO_NS), -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = rs_write_path_check(kv[i].key, kv[i].value, loc ? loc : dflt, &err);
    floe_free(dflt);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_NS), -1;
    return 0;
}

int rs_create_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const json_t *body = q->body;
    const char *name = str_member(body, "name");
    json_t *schema = json_object_get(body, "schema");
    json_t *stage = json_object_get(body, "stage-create");
    json_t *props = json_object_get(body, "properties");
    char *schema_text = NULL, *spec_text = NULL, *sort_text = NULL;
    floe_kv *kv = NULL;
    floe_table *t = NULL;
    floe_table_metadata *staged = NULL;
    char *staged_text = NULL;
    size_t staged_len = 0;
    if (!name || !*name || !json_is_object(schema)) {
        rs_error(r, 400, "BadRequestException", "createTable needs \"name\" and a \"schema\" object");
        goto done;
    }
    if (!rs_table_name_ok(name, r))
        goto done;
    if (stage && !json_is_boolean(stage)) {
        rs_error(r, 400, "BadRequestException", "stage-create must be a boolean");
        goto done;
    }
    if (props && !json_is_null(props) && !json_is_object(props)) {
        rs_error(r, 400, "BadRequestException", "properties must be an object of strings");
        goto done;
    }
    size_t nprops = 0;
    if (!(kv = floe_calloc(json_object_size(props) + 1, sizeof *kv))) {
        rs_error(r, 500, "InternalServerError", "out of memory");
        goto done;
    }
    const char *k;
    json_t *v;
    json_object_foreach(props, k, v) {
        if (!json_is_string(v)) {
            rs_error(r, 400, "BadRequestException", "property %s must be a string", k);
            goto done;
        }
        kv[nprops].key = k;
        kv[nprops++].value = json_string_value(v);
    }
    json_t *loc = json_object_get(body, "location");
    if (loc && !json_is_null(loc) && !json_is_string(loc)) {
        rs_error(r, 400, "BadRequestException", "location must be a string");
        goto done;
    }
    if (json_is_string(loc) &&
        rs_table_location_check(q->cat, q->ns, name, json_string_value(loc), &err) < 0) {
        rs_floe_error(r, FLOE_EINVALID, &err, NO_NS);
        goto done;
    }
    if (write_paths_allowed(q, name, json_string_value(loc), kv, nprops, r) < 0)
        goto done;
    schema_text = json_text(schema);
    spec_text = json_text(json_object_get(body, "partition-spec"));
    sort_text = json_text(json_object_get(body, "write-order"));
    if (!schema_text) {
        rs_error(r, 500, "InternalServerError", "out of memory");
        goto done;
    }
    floe_table_create_options o = {.location = json_string_value(loc),
                                   .spec_json = spec_text,
                                   .sort_json = sort_text,
                                   .props = kv,
                                   .nprops = nprops};
    int rc;
    if (json_is_true(stage)) {
        /* staged: the metadata the table would get, nothing written; the client commits
         * the create later (assert-create and the updates that build it, rs_commit.c) */
        rc = floe_table_new_metadata(q->cat, q->ns, name, schema_text, &o, &staged, &err);
        if (rc == 0)
            rc = floe_table_metadata_to_json(staged, false, &staged_text, &staged_len, &err);
        if (rc == 0) {
            FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, "{\"metadata\":")); /* checked in send */
            FLOE_IGNORE_RESULT(floe_buf_append(&r->body, staged_text, staged_len));
            FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, ",\"config\":{}}"));
            r->status = 200;
        }
    } else {
        floe_table_metadata *m = NULL;
        rc = floe_table_new_metadata(q->cat, q->ns, name, schema_text, &o, &m, &err);
        if (rc == 0) {
            rs_idem_table(q, m->table_uuid);
            rc = floe_table_create_with_metadata(q->cat, q->ns, name, m, &t, &err); /* takes m */
        }
        if (rc == 0) {
            rs_table_result(r, t, false);
            rs_vend_add(q, t, r);
        }
    }
    if (rc < 0)
        rs_floe_error(r, rc, &err, NO_NS);
done:
    floe_table_metadata_free(staged);
    floe_free(staged_text);
    floe_table_close(t);
    free(schema_text);
    free(spec_text);
    free(sort_text);
    floe_free(kv);
    return 0;
}

int rs_register_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const char *name = str_member(q->body, "name");
    const char *meta = str_member(q->body, "metadata-location");
    json_t *ow = json_object_get(q->body, "overwrite");
    floe_table *t = NULL;
    char *old = NULL;
    if (!name || !*name || !meta || !*meta || (ow && !json_is_boolean(ow))) {
        rs_error(r, 400, "BadRequestException",
                 "registerTable needs \"name\" and \"metadata-location\" (and a boolean "
                 "\"overwrite\")");
        return 0;
    }
    if (!rs_table_name_ok(name, r))
        return 0;
    bool ns_exists = false;
    int rc = floe_catalog_namespace_exists(q->cat, q->ns, &ns_exists, &err);
    if (rc < 0 || !ns_exists) {
        if (rc == 0)
            rc = floe_error_set(&err, FLOE_ENOTFOUND, "namespace %s does not exist", q->ns);
        rs_floe_error(r, rc, &err, NO_NS);
        return 0;
    }
    /* the metadata file and the table's location are held to the table's place before
     * the file is opened, so a register reads nothing outside its namespace's folder */
    floe_table_metadata *m = NULL;
    if ((rc = rs_table_location_check(q->cat, q->ns, name, meta, &err)) < 0)
        goto fail;
    if (floe_table_metadata_read(floe_catalog_io(q->cat), meta, &m, &err) < 0) {
        floe_log(FLOE_LOG_INFO, "catalog serve: register %s.%s: %s", q->ns, name, err.msg);
        rc = floe_error_set(&err, FLOE_EINVALID,
                            "metadata-location %s: no table metadata could be read there", meta);
        goto fail;
    }
    rc = m->location ? rs_table_location_check(q->cat, q->ns, name, m->location, &err)
                     : floe_error_set(&err, FLOE_EINVALID, "metadata-location %s: no location",
                                      meta);
    for (size_t i = 0; rc == 0 && i < m->n_properties; i++)
        rc = rs_write_path_check(m->properties[i].key, m->properties[i].value, m->location,
                                 &err);
    /* its snapshots' manifest lists and its statistics files, as a commit's (rs_commit.c) */
    if (rc == 0)
        rc = floe_table_check_metadata_files(q->cat, q->ns, name, m->location, m, meta, &err);
    floe_table_metadata_free(m);
    if (rc < 0)
        goto fail;
    rc = floe_catalog_load_table(q->cat, q->ns, name, &old, &err);
    if (rc == 0 && json_is_true(ow)) {
        /* overwrite: move the pointer of the registered table, its new location held
         * apart from every other table's as for a new register (a purge of the table
         * deletes what lies there) */
        rc = floe_table_register_over(q->cat, q->ns, name, old, meta, &err);
    } else if (rc == 0) {
        rc = floe_error_set(&err, FLOE_EEXISTS, "table %s.%s already exists", q->ns, name);
    } else if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(&err);
        rc = floe_table_register(q->cat, q->ns, name, meta, &err);
    }
    if (rc == 0)
        rc = floe_table_load(q->cat, q->ns, name, &t, &err);
fail:
    if (rc < 0)
        rs_floe_error(r, rc, &err, NO_NS);
    else if (rs_table_result(r, t, false) == 0)
        rs_vend_add(q, t, r);
    floe_table_close(t);
    floe_free(old);
    return 0;
}

int rs_drop_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    char *purge_arg = rs_query(q, "purgeRequested");
    bool purge = purge_arg && !strcasecmp(purge_arg, "true");
    int rc = 0;
    if (purge_arg && !purge && strcasecmp(purge_arg, "false")) {
        rs_error(r, 400, "BadRequestException", "purgeRequested must be true or false, not '%s'",
                 purge_arg);
        goto done;
    }
    size_t deleted = 0;
    bool dropped = false;
    if (!purge) {
        if ((rc = floe_catalog_drop_table(q->cat, q->ns, q->table, &err)) < 0)
            goto fail;
    } else if ((rc = floe_table_drop_purge(q->cat, q->ns, q->table, &dropped, &deleted,
                                           &err)) < 0) {
        /* the files to purge are those of the metadata the drop was conditional on
         * (floe_table_drop_purge): a commit racing the drop either lands first and keeps
         * the table, or finds it gone. A table whose gc.enabled is false is not dropped
         * at all (400, as Iceberg Java's purge refuses with a ValidationException); a
         * pointer that kept moving is a 409. */
        if (!dropped)
            goto fail;
        rs_error(r, 500, "InternalServerError",
                 "table %s.%s was dropped, but purging its files stopped: %s", q->ns, q->table,
                 err.msg);
        goto done;
    } else {
        floe_log(FLOE_LOG_INFO, "catalog serve: dropped %s.%s, %zu files purged", q->ns,
                 q->table, deleted);
    }
    r->status = 204;
    goto done;
fail:
    rs_floe_error(r, rc, &err, NO_TABLE);
done:
    floe_free(purge_arg);
    return 0;
}

/* A TableIdentifier {"namespace":[...],"name":".."}: dotted namespace (caller frees). */
static char *identifier(const json_t *id, const char *what, const char **name, rs_resp *r) {
    *name = str_member(id, "name");
    if (!json_is_object(id) || !*name || !**name) {
        rs_error(r, 400, "BadRequestException", "%s must be {\"namespace\":[...],\"name\":...}",
                 what);
        return NULL;
    }
    return rs_namespace_from_json(json_object_get(id, "namespace"), r);
}

int rs_rename_table(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const char *from_name, *to_name;
    char *loc = NULL;
    char *from_ns = identifier(json_object_get(q->body, "source"), "source", &from_name, r);
    char *to_ns = from_ns ? identifier(json_object_get(q->body, "destination"), "destination",
                                       &to_name, r)
                          : NULL;
    if (!to_ns || !rs_table_name_ok(to_name, r))
        goto done;
    int rc = floe_catalog_load_table(q->cat, from_ns, from_name, &loc, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_TABLE);
        goto done;
    }
    bool exists = false;
    if ((rc = floe_catalog_namespace_exists(q->cat, to_ns, &exists, &err)) == 0 && !exists)
        rc = floe_error_set(&err, FLOE_ENOTFOUND, "namespace %s does not exist", to_ns);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        goto done;
    }
    /* onto itself: the destination exists (it is the source), which the spec answers
     * with 409; nothing is changed or recorded */
    if (!strcmp(from_ns, to_ns) && !strcmp(from_name, to_name)) {
        rs_error(r, 409, "AlreadyExistsException",
                 "cannot rename table %s.%s onto itself: the destination already exists",
                 from_ns, from_name);
        goto done;
    }
    rc = floe_table_rename(q->cat, from_ns, from_name, to_ns, to_name, &err);
    if (rc < 0)
        rs_floe_error(r, rc, &err, NO_TABLE);
    else
        r->status = 204;
done:
    floe_free(loc);
    floe_free(from_ns);
    floe_free(to_ns);
    return 0;
}

int rs_report_metrics(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const char *type = str_member(q->body, "report-type");
    const json_t *snap = json_object_get(q->body, "snapshot-id");
    if (!type || (strcmp(type, "scan-report") && strcmp(type, "commit-report")) ||
        !json_is_integer(snap) || !str_member(q->body, "table-name"))
        return rs_error(r, 400, "BadRequestException",
                        "a metrics report needs \"report-type\" (scan-report or commit-report), "
                        "\"table-name\" and an integer \"snapshot-id\"");
    char *loc = NULL;
    int rc = floe_catalog_load_table(q->cat, q->ns, q->table, &loc, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_TABLE);
    floe_free(loc);
    /* accepted and logged: the report's kind, table and snapshot, and its metrics */
    char *metrics = json_dumps(json_object_get(q->body, "metrics"), JSON_COMPACT);
    floe_log(FLOE_LOG_INFO, "catalog serve: %s for %s.%s snapshot %" JSON_INTEGER_FORMAT ": %s",
             type, q->ns, q->table, json_integer_value(snap), metrics ? metrics : "{}");
    free(metrics);
    r->status = 204;
    return 0;
}
