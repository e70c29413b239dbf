/*
 * catalog.c - the catalog interface: argument validation, dispatch to the stores
 * (sql_catalog.c, fs_catalog.c), metadata file naming, string lists, uuids.
 *
 * Spec: format/spec.md "Metastore Tables" (<V>-<uuid>.metadata.json names) and "File
 * System Tables" (v<V>.metadata.json), Appendix F (".gz.metadata.json" for gzip).
 *
 * Invariant: every name reaching a store has passed check_name()/check_ns(): non-empty,
 * at most FLOE_CATALOG_NAME_MAX bytes, no control characters, no '/' or '\\', no level
 * that is "." or ".." and no empty level, so a name can never address a folder outside
 * its namespace in the filesystem store.
 */
#include "catalog_internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/propcap.h"
#include "floe/io.h"
#include "floe/lease.h"
#include "sql_driver.h"

/* ---------------------------------------------------------------------------------------
 * strings, randomness
 * ------------------------------------------------------------------------------------- */

void floe_strlist_free(floe_strlist *l) {
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        floe_free(l->items[i]);
    floe_free(l->items);
    l->items = NULL;
    l->n = 0;
    l->cap = 0;
}

int floe_strlist_push(floe_strlist *l, const char *s, floe_error *err) {
    char *copy = floe_strdup(s);
    if (copy && l->n >= l->cap) { /* doubling: a long list is not copied once a push */
        size_t cap = l->n < 8 ? 16 : l->n * 2;
        char **items = cap <= SIZE_MAX / sizeof *items
                           ? floe_realloc(l->items, cap * sizeof *items)
                           : NULL;
        if (items) {
            l->items = items;
            l->cap = cap;
        } else {
            floe_free(copy);
            copy = NULL;
        }
    }
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    l->items[l->n++] = copy;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * names
 * ------------------------------------------------------------------------------------- */

static int check_level(const char *what, const char *full, const char *s, size_t n,
                       floe_error *err) {
    if (n == 0)
        return floe_error_set(err, FLOE_EINVALID, "%s \"%s\": empty level", what, full);
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return floe_error_set(err, FLOE_EINVALID, "%s \"%s\": \".\" and \"..\" are not names",
                              what, full);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\')
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s \"%s\": control characters, '/' and '\\' are not allowed",
                                  what, full);
    }
    /* catalog rows and JSON (ours, PyIceberg's, Java's) hold names as UTF-8 text */
    size_t bad = floe_utf8_invalid_at((const uint8_t *)full, strlen(full));
    if (bad < strlen(full))
        return floe_error_set(err, FLOE_EINVALID, "%s is not valid UTF-8 (byte %zu is 0x%02x)",
                              what, bad, (unsigned char)full[bad]);
    return 0;
}

static int check_name(const char *name, floe_error *err) {
    if (!name || !*name)
        return floe_error_set(err, FLOE_EINVALID, "table name must not be empty");
    size_t n = strlen(name);
    if (n > FLOE_CATALOG_NAME_MAX)
        return floe_error_set(err, FLOE_EINVALID, "table name longer than %d bytes",
                              FLOE_CATALOG_NAME_MAX);
    return check_level("table name", name, name, n, err);
}

static int check_ns(const char *ns, floe_error *err) {
    if (!ns || !*ns)
        return floe_error_set(err, FLOE_EINVALID, "namespace must not be empty");
    size_t n = strlen(ns);
    if (n > FLOE_CATALOG_NAME_MAX)
        return floe_error_set(err, FLOE_EINVALID, "namespace longer than %d bytes",
                              FLOE_CATALOG_NAME_MAX);
    const char *p = ns;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        int rc = check_level("namespace", ns, p, len, err);
        if (rc < 0)
            return rc;
        if (!dot)
            return 0;
        p = dot + 1;
    }
}

int floe_catalog_check_names(const char *ns, const char *name, floe_error *err) {
    if (ns)
        FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    return name ? check_name(name, err) : 0;
}

static int check_location(const char *loc, floe_error *err) {
    if (!loc || !*loc)
        return floe_error_set(err, FLOE_EINVALID, "metadata location must not be empty");
    if (strlen(loc) > FLOE_CATALOG_VALUE_MAX)
        return floe_error_set(err, FLOE_EINVALID,
                              "metadata location longer than %d bytes (the catalog column "
                              "is VARCHAR(%d))",
                              FLOE_CATALOG_VALUE_MAX, FLOE_CATALOG_VALUE_MAX);
    return 0;
}

char *floe_catalog_ns_path(const char *ns) {
    char *p = floe_strdup(ns);
    if (!p)
        return NULL;
    for (char *q = p; *q; q++)
        if (*q == '.')
            *q = '/';
    return p;
}

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

bool floe_metadata_file_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return has_suffix(base, ".metadata.json") || has_suffix(base, ".metadata.json.gz");
}

bool floe_metadata_file_version(const char *file_name, int64_t *version) {
    const char *base = strrchr(file_name, '/');
    base = base ? base + 1 : file_name;
    /* only metadata files: a manifest "78371392-<uuid>-m1001.avro" has a number too */
    if (!floe_metadata_file_name(base))
        return false;
    const char *p = base;
    if (*p == 'v')
        p++;
    const char *digits = p;
    int64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*p - '0');
        p++;
    }
    if (p == digits)
        return false;
    if (base[0] == 'v') {
        if (*p != '.')
            return false;
    } else if (*p != '-') {
        return false;
    }
    *version = v;
    return true;
}

int floe_catalog_uuid_metadata_location(const char *metadata_dir, const char *base,
                                        bool gzip, char **out, floe_error *err) {
    /* After a base named without a number (vfinal, a hand-made name) any number works:
     * the metastore scheme needs unique names, the uuid gives that. */
    int64_t v = 0;
    if (base && !floe_metadata_file_version(base, &v))
        v = 0;
    char uuid[37];
    floe_uuid4(uuid);
    char *name = floe_asprintf("%05" PRId64 "-%s%s.metadata.json", base ? v + 1 : 0, uuid,
                               gzip ? ".gz" : "");
    char *loc = name ? floe_io_join(metadata_dir, name) : NULL;
    floe_free(name);
    if (!loc)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = loc;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * lifecycle and dispatch
 * ------------------------------------------------------------------------------------- */

int floe_catalog_alloc(const floe_catalog_ops *ops, const char *name, const char *warehouse,
                       floe_catalog **out, floe_error *err) {
    floe_catalog *c = floe_calloc(1, sizeof *c);
    if (!c)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    c->ops = ops;
    c->io = floe_io_default();
    c->swap_outcome_final = ops->swap_outcome_final;
    c->name = floe_strdup(name ? name : "default");
    /* every location derived from the warehouse is recorded: it must not depend on the
     * folder floe runs in */
    int rc = floe_io_uri_absolute(warehouse ? warehouse : "warehouse", NULL, &c->warehouse,
                                  err);
    if (!c->name || rc < 0) {
        floe_free(c->name);
        floe_free(c->warehouse);
        floe_free(c);
        return rc < 0 ? rc : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

int floe_catalog_set_lease_db(floe_catalog *c, const char *uri, floe_error *err) {
    floe_free(c->lease_db);
    c->lease_db = NULL;
    if (uri && !(c->lease_db = floe_strdup(uri)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

void floe_catalog_close(floe_catalog *c) {
    if (!c)
        return;
    floe_lease_store_close(c->commit_leases);
    floe_free(c->lease_db);
    if (c->ops && c->ops->close)
        c->ops->close(c);
    floe_free(c->name);
    floe_free(c->warehouse);
    floe_free(c->moved_from);
    floe_free(c);
}

floe_io *floe_catalog_io(const floe_catalog *c) { return c->io; }

floe_io *floe_catalog_table_io(floe_catalog *c, const char *ns, const char *name) {
    floe_io *io = c->ops->table_io ? c->ops->table_io(c, ns, name) : NULL;
    return io ? io : c->io;
}

const char *floe_catalog_name(const floe_catalog *c) { return c->name; }
const char *floe_catalog_type(const floe_catalog *c) { return c->ops->type; }
const char *floe_catalog_warehouse(const floe_catalog *c) { return c->warehouse; }
const char *floe_catalog_moved_from(const floe_catalog *c) { return c->moved_from; }
bool floe_catalog_swap_by_create(const floe_catalog *c) { return c->ops->swap_by_create; }

void floe_catalog_set_commit_gate(floe_catalog *c, pthread_mutex_t *gate) { c->commit_gate = gate; }

pthread_mutex_t *floe_catalog_commit_gate(const floe_catalog *c) { return c->commit_gate; }

void floe_catalog_set_max_metadata_bytes(floe_catalog *c, size_t max) {
    c->max_metadata_bytes = max;
}

size_t floe_catalog_max_metadata_bytes(const floe_catalog *c) {
    return c ? c->max_metadata_bytes : 0;
}
bool floe_catalog_swap_outcome_final(const floe_catalog *c) {
    return c->swap_outcome_final;
}

int floe_catalog_list_namespaces(floe_catalog *c, const char *parent, floe_strlist *out,
                                 floe_error *err) {
    if (parent && *parent)
        FLOE_FORWARD_IF_ERROR(check_ns(parent, err));
    floe_strlist tmp = {0};
    int rc = c->ops->list_namespaces(c, parent && *parent ? parent : NULL, &tmp, err);
    if (rc < 0) {
        floe_strlist_free(&tmp);
        return rc;
    }
    *out = tmp;
    return 0;
}

int floe_catalog_namespace_exists(floe_catalog *c, const char *ns, bool *exists,
                                  floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    return c->ops->namespace_exists(c, ns, exists, err);
}

static int check_props(const char *const *keys, const char *const *values, size_t n,
                       floe_error *err) {
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !*keys[i] || strlen(keys[i]) > FLOE_CATALOG_NAME_MAX)
            return floe_error_set(err, FLOE_EINVALID, "namespace property key %zu is empty or "
                                  "longer than %d bytes", i, FLOE_CATALOG_NAME_MAX);
        if (values && (!values[i] || strlen(values[i]) > FLOE_CATALOG_VALUE_MAX))
            return floe_error_set(err, FLOE_EINVALID,
                                  "namespace property %s: value missing or longer than %d bytes",
                                  keys[i], FLOE_CATALOG_VALUE_MAX);
    }
    return 0;
}

/* The namespace's properties after removing removals[0..nrem) and setting keys/values
 * [0..n) held to the property caps (common/propcap.h); have: whether the namespace may
 * hold properties already (an update: they are read). */
static int check_caps(floe_catalog *c, const char *ns, bool have, const char *const *removals,
                      size_t nrem, const char *const *keys, const char *const *values,
                      size_t n, floe_error *err) {
    floe_strlist hk = {0}, hv = {0};
    int rc = have ? c->ops->load_namespace_properties(c, ns, &hk, &hv, err) : 0;
    if (rc == FLOE_ENOTFOUND) { /* the update says so, or makes them */
        floe_error_clear(err);
        rc = 0;
    }
    char owner[300];
    snprintf(owner, sizeof owner, "namespace %.255s", ns);
    if (rc == 0 && hk.n != hv.n)
        rc = floe_error_set(err, FLOE_ECORRUPT, "%s: %zu property keys but %zu values", owner,
                            hk.n, hv.n);
    /* the SQL store's marker of a namespace without properties (exists = true, PyIceberg's
     * NAMESPACE_MINIMAL_PROPERTIES) is the catalog's, not counted */
    size_t m = 0;
    for (size_t i = 0; rc == 0 && i < hk.n; i++)
        if (strcmp(hk.items[i], "exists") || strcmp(hv.items[i], "true")) {
            hk.items[m] = hk.items[i];
            hv.items[m++] = hv.items[i];
        } else {
            floe_free(hk.items[i]);
            floe_free(hv.items[i]);
        }
    if (rc == 0) {
        hk.n = hv.n = m;
        rc = floe_propcap_check(owner, (const char *const *)hk.items,
                                (const char *const *)hv.items, hk.n, removals, nrem, keys,
                                values, n, err);
    }
    floe_strlist_free(&hk);
    floe_strlist_free(&hv);
    return rc;
}

/* A "location" property is where the namespace's tables go: recorded as an absolute URI
 * whatever was typed. *out_values is values, or a copy with that one replaced (free it
 * and *abs). */
static int absolute_location_prop(const char *const *keys, const char *const *values, size_t n,
                                  const char ***out_values, char **abs, floe_error *err) {
    *out_values = (const char **)values;
    *abs = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(keys[i], "location"))
            continue;
        const char **copy = floe_calloc(n, sizeof *copy);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int rc = floe_io_uri_absolute(values[i], NULL, abs, err);
        if (rc < 0) {
            floe_free(copy);
            return rc;
        }
        memcpy(copy, values, n * sizeof *copy);
        copy[i] = *abs;
        *out_values = copy;
        return 0;
    }
    return 0;
}

int floe_catalog_create_namespace(floe_catalog *c, const char *ns, const char *const *keys,
                                  const char *const *values, size_t n, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_props(keys, values, n, err));
    FLOE_FORWARD_IF_ERROR(check_caps(c, ns, false, NULL, 0, keys, values, n, err));
    const char **vals = NULL;
    char *abs = NULL;
    FLOE_FORWARD_IF_ERROR(absolute_location_prop(keys, values, n, &vals, &abs, err));
    int rc = c->ops->create_namespace(c, ns, keys, vals, n, err);
    if (abs)
        floe_free((void *)vals);
    floe_free(abs);
    return rc;
}

int floe_catalog_drop_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    return c->ops->drop_namespace(c, ns, err);
}

int floe_catalog_load_namespace_properties(floe_catalog *c, const char *ns, floe_strlist *keys,
                                           floe_strlist *values, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    floe_strlist k = {0}, v = {0};
    int rc = c->ops->load_namespace_properties(c, ns, &k, &v, err);
    if (rc < 0) {
        floe_strlist_free(&k);
        floe_strlist_free(&v);
        return rc;
    }
    *keys = k;
    *values = v;
    return 0;
}

int floe_catalog_update_namespace_properties(floe_catalog *c, const char *ns,
                                             const char *const *removals, size_t nrem,
                                             const char *const *keys, const char *const *values,
                                             size_t n, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_props(removals, NULL, nrem, err));
    FLOE_FORWARD_IF_ERROR(check_props(keys, values, n, err));
    for (size_t i = 0; i < nrem; i++)
        for (size_t k = 0; k < n; k++)
            if (!strcmp(removals[i], keys[k]))
                return floe_error_set(err, FLOE_EINVALID,
                                      "namespace property %s is both set and removed", keys[k]);
    FLOE_FORWARD_IF_ERROR(check_caps(c, ns, true, removals, nrem, keys, values, n, err));
    const char **vals = NULL;
    char *abs = NULL;
    FLOE_FORWARD_IF_ERROR(absolute_location_prop(keys, values, n, &vals, &abs, err));
    int rc = c->ops->update_namespace_properties(c, ns, removals, nrem, keys, vals, n, err);
    if (abs)
        floe_free((void *)vals);
    floe_free(abs);
    return rc;
}

int floe_catalog_list_tables(floe_catalog *c, const char *ns, floe_strlist *names,
                             floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    floe_strlist tmp = {0};
    int rc = c->ops->list_tables(c, ns, &tmp, err);
    if (rc < 0) {
        floe_strlist_free(&tmp);
        return rc;
    }
    *names = tmp;
    return 0;
}

int floe_catalog_load_table(floe_catalog *c, const char *ns, const char *name,
                            char **metadata_location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    return c->ops->load_table(c, ns, name, metadata_location, err);
}

static int walk_tables(floe_catalog *c, const char *parent, int depth, bool with_pointers,
                       floe_catalog_table_fn fn, void *ctx, floe_error *err) {
    if (depth > 64)
        return 0;
    floe_strlist nss = {0};
    int rc = floe_catalog_list_namespaces(c, parent, &nss, err);
    for (size_t i = 0; rc == 0 && i < nss.n; i++) {
        floe_strlist tables = {0};
        rc = floe_catalog_list_tables(c, nss.items[i], &tables, err);
        for (size_t k = 0; rc == 0 && k < tables.n; k++) {
            char *pointer = NULL;
            if (with_pointers)
                rc = floe_catalog_load_table(c, nss.items[i], tables.items[k], &pointer, err);
            if (rc == FLOE_ENOTFOUND) { /* dropped meanwhile */
                floe_error_clear(err);
                rc = 0;
                continue;
            }
            if (rc == 0)
                rc = fn(ctx, nss.items[i], tables.items[k], pointer, err);
            floe_free(pointer);
        }
        floe_strlist_free(&tables);
        if (rc == 0)
            rc = walk_tables(c, nss.items[i], depth + 1, with_pointers, fn, ctx, err);
    }
    floe_strlist_free(&nss);
    return rc;
}

int floe_catalog_each_table(floe_catalog *c, bool with_pointers, floe_catalog_table_fn fn,
                            void *ctx, floe_error *err) {
    if (with_pointers && c->ops->each_table)
        return c->ops->each_table(c, fn, ctx, err);
    return walk_tables(c, NULL, 0, with_pointers, fn, ctx, err);
}

/* The namespace's "location" property, or NULL (caller frees). */
static int namespace_location(floe_catalog *c, const char *ns, char **out, floe_error *err) {
    *out = NULL;
    floe_strlist keys = {0}, values = {0};
    int rc = c->ops->load_namespace_properties(c, ns, &keys, &values, err);
    if (rc == FLOE_ENOTFOUND) { /* a namespace that exists only through its tables */
        floe_error_clear(err);
        rc = 0;
    }
    for (size_t i = 0; rc == 0 && i < keys.n && i < values.n; i++)
        if (!strcmp(keys.items[i], "location") && *values.items[i] &&
            !(*out = floe_strdup(values.items[i])))
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_strlist_free(&keys);
    floe_strlist_free(&values);
    return rc;
}

/* Bytes of a name that a location may not hold as they are: a URI parser (PyIceberg's
 * urlparse, S3FileIO's S3URI) cuts a location at '#' (a fragment) and '?' (a query),
 * where a path reader (DuckDB, Hadoop's Path, floe) takes them as they are. Every reader
 * named takes '%' as it is (none decodes escapes in a location), so a name's '%' stays:
 * its folder, and an S3 key, are the name as it is. A name spelled like another's
 * encoded folder ("a%23b" beside "a#b") gets the same location, which the placement
 * check refuses. */
static bool unsafe_in_location(unsigned char ch) {
    return ch == '#' || ch == '?';
}

int floe_catalog_folder_name(const floe_catalog *c, const char *level, size_t n, char **out,
                             floe_error *err) {
    size_t len = n;
    if (!floe_catalog_swap_by_create(c))
        for (size_t i = 0; i < n; i++)
            len += unsafe_in_location((unsigned char)level[i]) ? 2 : 0;
    if (len > FLOE_CATALOG_NAME_MAX)
        return floe_error_set(err, FLOE_EINVALID,
                              "name \"%.*s\": its folder name is %zu bytes long ('#' and '?' "
                              "percent-encoded), more than the %d a filesystem allows",
                              (int)(n > 60 ? 60 : n), level, len, FLOE_CATALOG_NAME_MAX);
    char *f = floe_malloc(len + 1);
    if (!f)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)level[i];
        if (len > n && unsafe_in_location(ch)) {
            static const char hex[] = "0123456789ABCDEF";
            f[k++] = '%';
            f[k++] = hex[ch >> 4];
            f[k++] = hex[ch & 15];
        } else {
            f[k++] = (char)ch;
        }
    }
    f[k] = '\0';
    *out = f;
    return 0;
}

/* <warehouse>/<level>/.../<level> of namespace ns, each level's folder name as
 * floe_catalog_folder_name makes it. */
static int namespace_dir(floe_catalog *c, const char *ns, char **out, floe_error *err) {
    char *dir = floe_strdup(c->warehouse);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (const char *p = ns;;) {
        size_t n = strcspn(p, ".");
        char *level = NULL, *next = NULL;
        int rc = floe_catalog_folder_name(c, p, n, &level, err);
        if (rc == 0 && !(next = floe_io_join(dir, level)))
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(level);
        floe_free(dir);
        if (rc < 0)
            return rc;
        dir = next;
        if (!p[n])
            break;
        p += n + 1;
    }
    *out = dir;
    return 0;
}

int floe_catalog_default_location(floe_catalog *c, const char *ns, const char *name,
                                  char **location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    char *nsloc = NULL, *dir = NULL, *loc = NULL;
    int rc = 0;
    /* a namespace with a location property holds its tables there, as PyIceberg's and
     * Java's catalogs do: <location>/<name> */
    if (!c->ops->swap_by_create)
        FLOE_CHECK(namespace_location(c, ns, &nsloc, err));
    if (nsloc) {
        FLOE_CHECK(floe_catalog_resolve_location(c, NULL, NULL, nsloc, &dir, err));
    } else if (c->no_location_root) {
        FLOE_FAIL(err, FLOE_EINVALID,
                  "table %s.%s: the REST catalog names no warehouse location and namespace %s "
                  "has no location property: give the table a location", ns, name, ns);
    } else {
        FLOE_CHECK(namespace_dir(c, ns, &dir, err));
    }
    char *folder = NULL;
    FLOE_CHECK(floe_catalog_folder_name(c, name, strlen(name), &folder, err));
    loc = floe_io_join(dir, folder);
    floe_free(folder);
    if (!loc)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *location = loc;
    loc = NULL;
done:
    floe_free(nsloc);
    floe_free(dir);
    floe_free(loc);
    return rc;
}

/* Where "<ns levels>/<name>" starts in the relative path p at a '/' boundary and is
 * followed by '/' or the end; -1 when it does not occur. */
static ptrdiff_t table_segment(const char *p, const char *ns, const char *name) {
    char *nsp = floe_catalog_ns_path(ns);
    char *seg = nsp ? floe_asprintf("%s/%s", nsp, name) : NULL;
    floe_free(nsp);
    if (!seg)
        return -1;
    size_t n = strlen(seg);
    ptrdiff_t at = -1;
    for (const char *q = p; (q = strstr(q, seg)) != NULL; q++)
        if ((q == p || q[-1] == '/') && (q[n] == '\0' || q[n] == '/')) {
            at = q - p;
            break;
        }
    floe_free(seg);
    return at;
}

int floe_catalog_resolve_location(floe_catalog *c, const char *ns, const char *name,
                                  const char *recorded, char **out, floe_error *err) {
    return floe_catalog_resolve_location_in(c->warehouse, ns, name, recorded, out, err);
}

int floe_catalog_resolve_location_in(const char *warehouse, const char *ns, const char *name,
                                     const char *recorded, char **out, floe_error *err) {
    if (!recorded || !*recorded)
        return floe_error_set(err, FLOE_EINVALID, "empty location");
    if (!floe_io_uri_is_relative(recorded)) {
        char *copy = floe_strdup(recorded);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *out = copy;
        return 0;
    }
    /* the path part: "file:rel", "file://rel", "./rel" -> "rel" */
    const char *p = recorded;
    if (!strncmp(p, "file://", 7))
        p += 7;
    else if (!strncmp(p, "file:", 5))
        p += 5;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    /* 1. "<whatever the warehouse was called>/<ns levels>/<name>/...": the table's own
     *    folders, under this warehouse */
    ptrdiff_t at = ns && name ? table_segment(p, ns, name) : -1;
    if (at >= 0) {
        char *joined = floe_io_join(warehouse, p + at);
        if (!joined)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int rc = floe_io_uri_absolute(joined, NULL, out, err);
        floe_free(joined);
        return rc;
    }
    /* 2. "<warehouse folder name>/...": under this warehouse */
    const char *wbase = strrchr(warehouse, '/');
    wbase = wbase ? wbase + 1 : warehouse;
    size_t wl = strlen(wbase);
    if (wl && !strncmp(p, wbase, wl) && (p[wl] == '/' || p[wl] == '\0'))
        return floe_io_uri_absolute(p[wl] ? p + wl + 1 : ".", warehouse, out, err);
    /* 3. anything else: relative to the folder holding the warehouse, where the writer
     *    of the relative path ran */
    char *parent = floe_io_join(warehouse, "..");
    if (!parent)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_io_uri_absolute(p, parent, out, err);
    floe_free(parent);
    return rc;
}

int floe_catalog_new_metadata_location(floe_catalog *c, const char *metadata_dir,
                                       const char *base_metadata_location, bool gzip,
                                       char **out, floe_error *err) {
    if (!metadata_dir || !*metadata_dir)
        return floe_error_set(err, FLOE_EINVALID, "metadata folder must not be empty");
    return c->ops->new_metadata_location(c, metadata_dir, base_metadata_location, gzip, out,
                                         err);
}

int floe_catalog_register_table(floe_catalog *c, const char *ns, const char *name,
                                const char *metadata_location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    FLOE_FORWARD_IF_ERROR(check_location(metadata_location, err));
    return c->ops->register_table(c, ns, name, metadata_location, err);
}

int floe_catalog_rename_table(floe_catalog *c, const char *ns, const char *name,
                              const char *to_ns, const char *to_name, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    FLOE_FORWARD_IF_ERROR(check_ns(to_ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(to_name, err));
    return c->ops->rename_table(c, ns, name, to_ns, to_name, err);
}

int floe_catalog_drop_table(floe_catalog *c, const char *ns, const char *name,
                            floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    return c->ops->drop_table(c, ns, name, err);
}

int floe_catalog_drop_table_at(floe_catalog *c, const char *ns, const char *name,
                               const char *expected_metadata_location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    FLOE_FORWARD_IF_ERROR(check_location(expected_metadata_location, err));
    if (!c->ops->drop_table_at)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the %s catalog cannot drop a table on the condition of its "
                              "metadata pointer", c->ops->type);
    return c->ops->drop_table_at(c, ns, name, expected_metadata_location, err);
}

const char *floe_catalog_state_db(const floe_catalog *c) {
    return c && c->ops->commit_changes ? c->lease_db : NULL;
}

bool floe_catalog_drop_purges(const floe_catalog *c) { return c->ops->drop_table_purge != NULL; }

int floe_catalog_drop_table_purge(floe_catalog *c, const char *ns, const char *name,
                                  floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    if (!c->ops->drop_table_purge)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the %s catalog does not delete a dropped table's files (its "
                              "caller purges them)", c->ops->type);
    return c->ops->drop_table_purge(c, ns, name, err);
}

int floe_catalog_swap(floe_catalog *c, const char *ns, const char *name, const char *expected,
                      const char *new_location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    FLOE_FORWARD_IF_ERROR(check_location(expected, err));
    FLOE_FORWARD_IF_ERROR(check_location(new_location, err));
    return c->ops->swap(c, ns, name, expected, new_location, err);
}

bool floe_catalog_commits_changes(const floe_catalog *c) { return c->ops->commit_changes != NULL; }

int floe_catalog_ping(floe_catalog *c, floe_error *err) {
    return c->ops->ping(c, err);
}

int floe_catalog_check_commit(floe_catalog *c, floe_error *err) {
    return c->ops->check_commit ? c->ops->check_commit(c, err) : 0;
}

int floe_catalog_commit_changes(floe_catalog *c, const char *ns, const char *name,
                                const char *base_json, const char *new_json,
                                char **metadata_location, char **metadata_json,
                                floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    if (!c->ops->commit_changes)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the %s catalog commits by swapping the metadata pointer",
                              c->ops->type);
    return c->ops->commit_changes(c, ns, name, base_json, new_json, metadata_location,
                                  metadata_json, err);
}

int floe_catalog_open(const floe_catalog_config *cfg, floe_catalog **out, floe_error *err) {
    const char *type = cfg->type ? cfg->type : "sql";
    if (!strcmp(type, "rest")) {
        if (!cfg->uri)
            return floe_error_set(err, FLOE_EINVALID, "rest catalog needs a uri (http(s)://...)");
        FLOE_FORWARD_IF_ERROR(floe_catalog_open_rest(cfg->io, cfg->uri, cfg->name, cfg->warehouse,
                                                     &cfg->rest, out, err));
        (*out)->sql_opts = cfg->sql;
        /* the state database holds the commit leases a REST catalog has no room for */
        int rc = cfg->state_db ? floe_catalog_set_lease_db(*out, cfg->state_db, err) : 0;
        if (rc < 0) {
            floe_catalog_close(*out);
            *out = NULL;
        }
        return rc;
    }
    if (!strcmp(type, "filesystem") || !strcmp(type, "hadoop")) {
        const char *wh = cfg->warehouse ? cfg->warehouse : cfg->uri;
        if (!wh)
            return floe_error_set(err, FLOE_EINVALID, "filesystem catalog needs a warehouse");
        FLOE_FORWARD_IF_ERROR(floe_catalog_open_fs(cfg->io, wh, out, err));
        (*out)->sql_opts = cfg->sql;
        (*out)->test_commit_pause_ms = cfg->test_commit_pause_ms;
        return 0;
    }
    if (strcmp(type, "sql") && strcmp(type, "sqlite"))
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "catalog type \"%s\" is not supported (sql, filesystem, rest)", type);
    const char *uri = cfg->uri;
    if (!uri)
        return floe_error_set(err, FLOE_EINVALID,
                              "sql catalog needs a uri (sqlite:///path or postgresql://...)");
    int is_pg = 0;
    char *target = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_uri_parse(uri, &is_pg, &target, err));
    int rc = is_pg ? floe_catalog_open_postgres_with(cfg->io, target, cfg->name, cfg->warehouse,
                                                     &cfg->sql, out, err)
                   : floe_catalog_open_sqlite_with(cfg->io, target, cfg->name, cfg->warehouse,
                                                   &cfg->sql, out, err);
    floe_free(target);
    return rc;
}

int floe_catalog_create_table(floe_catalog *c, const char *ns, const char *name,
                              const char *metadata_json, char **metadata_location,
                              char **metadata_json_out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_ns(ns, err));
    FLOE_FORWARD_IF_ERROR(check_name(name, err));
    if (!c->ops->create_table)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the %s catalog registers a metadata file the writer made",
                              c->ops->type);
    return c->ops->create_table(c, ns, name, metadata_json, metadata_location,
                                metadata_json_out, err);
}
