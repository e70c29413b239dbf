/*
 * rs_namespaces.c - the namespace routes of the REST catalog (spec: listNamespaces,
 * createNamespace, loadNamespaceMetadata, namespaceExists, dropNamespace,
 * updateProperties) over floe_catalog's namespace calls.
 *
 * Pagination: the list is sorted by name and the next-page-token is the last name of the
 * page, so a page starts after it even when namespaces come and go in between.
 */
#include <stdio.h>
#include <string.h>

#include "rs_internal.h"

static const char *NO_NS = "NoSuchNamespaceException";
/* The property a SQL catalog keeps on a namespace created without properties (PyIceberg's
 * NAMESPACE_MINIMAL_PROPERTIES): the namespace exists by its rows, so the marker is the
 * catalog's, not settable or removable through the properties route. */
#define NS_MARKER "exists"
#define MARKER_RESERVED                                                                      \
    "property exists is reserved: the catalog marks a namespace without properties with it"

/* 0 when q->ns exists; otherwise r holds the 404 (or the catalog's error). */
static int need_namespace(rs_req *q, rs_resp *r) {
    bool exists = false;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_catalog_namespace_exists(q->cat, q->ns, &exists, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        return -1;
    }
    if (!exists) {
        rs_error(r, 404, NO_NS, "namespace %s does not exist", q->ns);
        return -1;
    }
    return 0;
}

/* The properties as a JSON object, without the catalog's marker (as `floe namespace
 * properties` shows them). */
static void put_props(floe_buf *b, const floe_strlist *keys, const floe_strlist *values) {
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '{')); /* floe_buf keeps its first failure */
    bool first = true;
    for (size_t i = 0; i < keys->n && i < values->n; i++) {
        if (!strcmp(keys->items[i], NS_MARKER))
            continue;
        if (!first)
            FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        first = false;
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)keys->items[i],
                                                   strlen(keys->items[i])));
        FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ':'));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)values->items[i],
                                                   strlen(values->items[i])));
    }
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
}

/* {"namespace":[...],"properties":{...}} of namespace ns. */
static void namespace_answer(floe_catalog *cat, const char *ns, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_strlist pk = {0}, pv = {0};
    int rc = floe_catalog_load_namespace_properties(cat, ns, &pk, &pv, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
    } else {
        FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, "{\"namespace\":")); /* checked in send */
        rs_put_namespace(&r->body, ns);
        FLOE_IGNORE_RESULT(floe_buf_printf(&r->body, ",\"properties\":"));
        put_props(&r->body, &pk, &pv);
        FLOE_IGNORE_RESULT(floe_buf_append_byte(&r->body, '}'));
        r->status = 200;
    }
    floe_strlist_free(&pk);
    floe_strlist_free(&pv);
}

static void put_str_array(floe_buf *b, const char *const *items, size_t n) {
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '['));
    for (size_t i = 0; i < n; i++) {
        if (i)
            FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)items[i], strlen(items[i])));
    }
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ']'));
}

int rs_list_namespaces(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_strlist list = {0};
    char *parent_seg = rs_query(q, "parent");
    char *parent = NULL;
    if (parent_seg && *parent_seg) {
        /* the parent's levels are separated by 0x1F, as in a path */
        json_t *levels = json_array();
        const char *p = parent_seg;
        for (;;) {
            size_t n = strcspn(p, "\x1f");
            FLOE_IGNORE_RESULT(json_array_append_new(levels, json_stringn(p, n))); /* checked by rs_namespace_from_json */
            if (!p[n])
                break;
            p += n + 1;
        }
        parent = rs_namespace_from_json(levels, r);
        json_decref(levels);
        if (!parent)
            goto done;
        q->ns = parent;
        parent = NULL;
        if (need_namespace(q, r) < 0)
            goto done;
    }
    int rc = floe_catalog_list_namespaces(q->cat, q->ns, &list, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        goto done;
    }
    size_t kept = 0; /* what the caller's grants let it see, before paging */
    for (size_t i = 0; i < list.n; i++) {
        if (rs_namespace_visible(q, list.items[i]))
            list.items[kept++] = list.items[i];
        else
            floe_free(list.items[i]);
    }
    list.n = kept;
    size_t from, to;
    const char *next;
    if (rs_page(q, &list, &from, &to, &next, r) < 0)
        goto done;
    floe_buf *b = &r->body;
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"namespaces\":["));
    for (size_t i = from; i < to; i++) {
        if (i > from)
            FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        rs_put_namespace(b, list.items[i]);
    }
    rs_page_end(b, next);
    r->status = 200;
done:
    floe_free(parent_seg);
    floe_strlist_free(&list);
    return 0;
}

/* The string values of a JSON object as key and value arrays (borrowed from obj). */
static int object_strings(const json_t *obj, const char *what, const char ***keys,
                          const char ***values, size_t *n, rs_resp *r) {
    *keys = *values = NULL;
    *n = 0;
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return rs_error(r, 400, "BadRequestException", "%s must be an object of strings", what), -1;
    size_t cap = json_object_size(obj);
    *keys = floe_calloc(cap + 1, sizeof **keys);
    *values = floe_calloc(cap + 1, sizeof **values);
    if (!*keys || !*values)
        return rs_error(r, 500, "InternalServerError", "out of memory"), -1;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (!json_is_string(v))
            return rs_error(r, 400, "BadRequestException", "%s: %s must be a string", what, k), -1;
        (*keys)[*n] = k;
        (*values)[(*n)++] = json_string_value(v);
    }
    return 0;
}

/* 0 when the properties' `location`, if any, may be namespace ns's folder
 * (rs_namespace_location_check), and the folder ns gets - that location, else its home
 * when check_home (a create, or a removal of the property) - keeps apart from other
 * namespaces and tables (rs_namespace_place_check); else -1 with the 400 (or the
 * catalog's error) in r. */
static int location_allowed(rs_req *q, const char *ns, const char **keys, const char **values,
                            size_t n, bool check_home, rs_resp *r) {
    const char *location = NULL;
    floe_error err;
    floe_error_clear(&err);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(keys[i], "location"))
            continue;
        int rc = rs_namespace_location_check(q->cat, ns, values[i], &err);
        if (rc < 0)
            return rs_floe_error(r, rc, &err, NO_NS), -1;
        location = values[i];
    }
    if (!location && !check_home)
        return 0;
    int rc = rs_namespace_place_check(q->cat, ns, location, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, NO_NS), -1;
    return 0;
}

int rs_create_namespace(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const char **keys = NULL, **values = NULL;
    size_t n = 0;
    char *ns = rs_namespace_from_json(json_object_get(q->body, "namespace"), r);
    if (!ns)
        goto done;
    if (object_strings(json_object_get(q->body, "properties"), "properties", &keys, &values, &n,
                       r) < 0 ||
        location_allowed(q, ns, keys, values, n, true, r) < 0)
        goto done;
    int tx = rs_idem_change_begin(q, r);
    if (tx < 0)
        goto done;
    int rc = floe_catalog_create_namespace(q->cat, ns, keys, values, n, &err);
    if (rc < 0)
        rs_floe_error(r, rc, &err, NO_NS);
    else
        namespace_answer(q->cat, ns, r); /* what the catalog now holds */
    rs_idem_change_end(q, tx, r);
done:
    floe_free(keys);
    floe_free(values);
    floe_free(ns);
    return 0;
}

int rs_load_namespace(rs_req *q, rs_resp *r) {
    if (need_namespace(q, r) == 0)
        namespace_answer(q->cat, q->ns, r);
    return 0;
}

int rs_namespace_exists(rs_req *q, rs_resp *r) {
    if (need_namespace(q, r) == 0)
        r->status = 204;
    return 0;
}

int rs_drop_namespace(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_strlist tables = {0}, children = {0};
    int tx = rs_idem_change_begin(q, r);
    if (tx < 0)
        return 0;
    if (need_namespace(q, r) < 0) {
        rs_idem_change_end(q, tx, r);
        return 0;
    }
    int rc = floe_catalog_list_tables(q->cat, q->ns, &tables, &err);
    if (rc == 0)
        rc = floe_catalog_list_namespaces(q->cat, q->ns, &children, &err);
    if (rc < 0)
        rs_floe_error(r, rc, &err, NO_NS);
    else if (tables.n || children.n)
        rs_error(r, 409, "NamespaceNotEmptyException",
                 "namespace %s is not empty: %zu table%s, %zu namespace%s", q->ns, tables.n,
                 tables.n == 1 ? "" : "s", children.n, children.n == 1 ? "" : "s");
    else if ((rc = floe_catalog_drop_namespace(q->cat, q->ns, &err)) == FLOE_EINVALID)
        /* a table or namespace made since the listing: the catalog's own check, made in
         * turn with creates (floe_catalog_drop_namespace) */
        rs_error(r, 409, "NamespaceNotEmptyException", "%s", err.msg);
    else if (rc < 0)
        rs_floe_error(r, rc, &err, NO_NS);
    else
        r->status = 204;
    rs_idem_change_end(q, tx, r);
    floe_strlist_free(&tables);
    floe_strlist_free(&children);
    return 0;
}

int rs_update_namespace_properties(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    const char **keys = NULL, **values = NULL, **removals = NULL, **removed = NULL,
               **missing = NULL;
    size_t n = 0, nrem = 0, nremoved = 0, nmissing = 0;
    floe_strlist pk = {0}, pv = {0};
    int tx = 0;
    bool home = false; /* the location property is removed */
    if (object_strings(json_object_get(q->body, "updates"), "updates", &keys, &values, &n, r) < 0)
        goto done;
    for (size_t k = 0; k < n; k++)
        if (!strcmp(keys[k], NS_MARKER)) {
            rs_error(r, 400, "BadRequestException", MARKER_RESERVED);
            goto done;
        }
    json_t *rem = json_object_get(q->body, "removals");
    if (rem && !json_is_null(rem) && !json_is_array(rem)) {
        rs_error(r, 400, "BadRequestException", "removals must be an array of strings");
        goto done;
    }
    size_t cap = json_array_size(rem) + 1;
    removals = floe_calloc(cap, sizeof *removals);
    removed = floe_calloc(cap, sizeof *removed);
    missing = floe_calloc(cap, sizeof *missing);
    if (!removals || !removed || !missing) {
        rs_error(r, 500, "InternalServerError", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(rem); i++) {
        const json_t *v = json_array_get(rem, i);
        if (!json_is_string(v)) {
            rs_error(r, 400, "BadRequestException", "removals must be an array of strings");
            goto done;
        }
        removals[nrem] = json_string_value(v);
        if (!strcmp(removals[nrem], NS_MARKER)) {
            rs_error(r, 400, "BadRequestException", MARKER_RESERVED);
            goto done;
        }
        home |= !strcmp(removals[nrem], "location");
        for (size_t k = 0; k < n; k++)
            if (!strcmp(keys[k], removals[nrem])) {
                rs_error(r, 422, "UnprocessableEntityException",
                         "property %s is both updated and removed", keys[k]);
                goto done;
            }
        nrem++;
    }
    /* a location set, or removed (the namespace goes back to its home), keeps apart */
    if (location_allowed(q, q->ns, keys, values, n, home, r) < 0)
        goto done;
    /* the properties read, the change and the answer's record in one transaction */
    if ((tx = rs_idem_change_begin(q, r)) < 0 || need_namespace(q, r) < 0)
        goto done;
    int rc = floe_catalog_load_namespace_properties(q->cat, q->ns, &pk, &pv, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        goto done;
    }
    for (size_t i = 0; i < nrem; i++) {
        bool have = false;
        for (size_t k = 0; k < pk.n && !have; k++)
            have = !strcmp(pk.items[k], removals[i]);
        if (have)
            removed[nremoved++] = removals[i];
        else
            missing[nmissing++] = removals[i];
    }
    rc = floe_catalog_update_namespace_properties(q->cat, q->ns, removed, nremoved, keys,
                                                  values, n, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, NO_NS);
        goto done;
    }
    floe_buf *b = &r->body;
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"updated\":"));
    put_str_array(b, keys, n);
    FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"removed\":"));
    put_str_array(b, removed, nremoved);
    FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"missing\":"));
    put_str_array(b, missing, nmissing);
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
    r->status = 200;
done:
    rs_idem_change_end(q, tx, r);
    floe_strlist_free(&pk);
    floe_strlist_free(&pv);
    floe_free(keys);
    floe_free(values);
    floe_free(removals);
    floe_free(removed);
    floe_free(missing);
    return 0;
}
