/*
 * confine.c - the folders whose files are a table's to delete (floe/table.h,
 * "Confinement").
 *
 * A table's metadata names files by path, and whoever can commit to it chooses those
 * paths: a manifest list, a manifest entry or a statistics file may name another table's
 * file, or any file the process can reach. Every floe deleter - expiry, orphan removal,
 * drop with purge, the cleanup after a failed commit, the removal of old metadata files -
 * asks this one routine before it deletes, so what lies elsewhere is kept (and reported)
 * rather than deleted. floe catalog serve asks it too, to refuse such paths at commit.
 *
 * The folders (roots): the table's folder (where a load places its files), and
 * write.data.path and write.metadata.path where they lie outside it and are a place of
 * the table's own by the placement rules (floe_table_check_location: neither inside nor
 * around another table's location, the warehouse or its reserved folders). A table
 * opened by path has no catalog to check against: its folder alone.
 *
 * Invariant: holds(uri) is 1 only when uri's key (floe_io_uri_key: one spelling per
 * location, "." and ".." removed) lies under a root's key at a '/' boundary.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "floe/io.h"
#include "table_internal.h"

#define CONFINE_ROOTS 3
#define CONFINE_NAMED 3 /* kept files named in the report */

struct floe_table_confinement {
    char *roots[CONFINE_ROOTS]; /* keys; NULL where none */
    int64_t kept;
    char *named[CONFINE_NAMED];
    char *report;
};

void floe_table_confinement_free(floe_table_confinement *c) {
    if (!c)
        return;
    for (int i = 0; i < CONFINE_ROOTS; i++)
        floe_free(c->roots[i]);
    for (int i = 0; i < CONFINE_NAMED; i++)
        floe_free(c->named[i]);
    floe_free(c->report);
    floe_free(c);
}

static bool key_within(const char *key, const char *root) {
    size_t n = strlen(root);
    while (n > 0 && root[n - 1] == '/')
        n--;
    return !strncmp(key, root, n) && (key[n] == '\0' || key[n] == '/');
}

int floe_table_confinement_holds(const floe_table_confinement *c, const char *uri,
                                 floe_error *err) {
    char *key = floe_io_uri_key(uri);
    if (!key)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    bool yes = false;
    for (int i = 0; i < CONFINE_ROOTS && !yes; i++)
        yes = c->roots[i] && key_within(key, c->roots[i]);
    floe_free(key);
    return yes ? 1 : 0;
}

int floe_table_confinement_admit(floe_table_confinement *c, const char *uri, floe_error *err) {
    int rc = floe_table_confinement_holds(c, uri, err);
    if (rc != 0)
        return rc;
    if (c->kept < CONFINE_NAMED && !(c->named[c->kept] = floe_strdup(uri)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    c->kept++;
    return 0;
}

int64_t floe_table_confinement_kept(const floe_table_confinement *c) { return c ? c->kept : 0; }

const char *floe_table_confinement_report(floe_table_confinement *c) {
    if (!c || c->kept == 0)
        return NULL;
    floe_free(c->report);
    floe_buf b;
    floe_buf_init(&b, 64 * 1024);
    int rc = floe_buf_printf(&b, "kept %lld file%s outside the table's location:",
                             (long long)c->kept, c->kept == 1 ? "" : "s");
    for (int i = 0; rc == 0 && i < CONFINE_NAMED && i < c->kept; i++)
        rc = floe_buf_printf(&b, "%s %s", i ? "," : "", c->named[i] ? c->named[i] : "?");
    if (rc == 0 && c->kept > CONFINE_NAMED)
        rc = floe_buf_printf(&b, ", ... (%lld more)", (long long)(c->kept - CONFINE_NAMED));
    if (rc == 0)
        rc = floe_buf_printf(&b, " (not the table's to delete: they stay where they are)");
    c->report = rc == 0 ? floe_strndup((const char *)b.data, b.len) : NULL;
    floe_buf_free(&b);
    return c->report ? c->report : "kept files outside the table's location";
}

void floe_table_confinement_delete(floe_table_confinement *c, floe_io *io,
                                   const char *const *uris, size_t n, const char *who) {
    for (size_t i = 0; i < n; i++) {
        if (!uris[i])
            continue;
        floe_error e;
        floe_error_clear(&e);
        int rc = floe_table_confinement_admit(c, uris[i], &e);
        if (rc < 0) {
            floe_log(FLOE_LOG_WARN, "%s: %s; the files it wrote from %s on are kept", who,
                     e.msg, uris[i]);
            return;
        }
        if (rc > 0 && floe_io_delete(io, uris[i], &e) < 0)
            floe_log(FLOE_LOG_WARN, "%s: could not delete %s: %s", who, uris[i], e.msg);
    }
}

/* Add folder as a root when it is the table's own: inside the table's folder (nothing to
 * add), or a place of its own by the placement rules. */
static int add_write_path(floe_table_confinement *c, floe_catalog *cat, const char *ns,
                          const char *name, const char *prop, const char *folder,
                          floe_error *err) {
    char *key = floe_io_uri_key(folder);
    if (!key)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (key_within(key, c->roots[0]) || !cat) {
        if (!cat && !key_within(key, c->roots[0]))
            floe_log(FLOE_LOG_INFO, "table %s: %s %s lies outside its folder: files there are "
                     "not deleted", name ? name : c->roots[0], prop, folder);
        floe_free(key);
        return 0;
    }
    floe_error e;
    floe_error_clear(&e);
    int rc = floe_table_check_location(cat, ns, name, folder, &e);
    if (rc == FLOE_ENOMEM) {
        floe_free(key);
        if (err)
            *err = e;
        return rc;
    }
    if (rc < 0) {
        floe_log(FLOE_LOG_WARN, "table %s.%s: %s %s is not a folder of the table's own, so "
                 "files there are not deleted: %s", ns, name, prop, folder, e.msg);
        floe_free(key);
        return 0;
    }
    for (int i = 1; i < CONFINE_ROOTS; i++)
        if (!c->roots[i]) {
            c->roots[i] = key;
            return 0;
        }
    floe_free(key);
    return 0;
}

int floe_table_confinement_new(floe_catalog *cat, const char *ns, const char *name,
                               const char *folder, const char *data_path,
                               const char *metadata_path, floe_table_confinement **out,
                               floe_error *err) {
    floe_table_confinement *c = floe_calloc(1, sizeof *c);
    if (!c || !(c->roots[0] = floe_io_uri_key(folder))) {
        floe_table_confinement_free(c);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (data_path && *data_path)
        rc = add_write_path(c, cat, ns, name, "write.data.path", data_path, err);
    if (rc == 0 && metadata_path && *metadata_path)
        rc = add_write_path(c, cat, ns, name, "write.metadata.path", metadata_path, err);
    if (rc < 0) {
        floe_table_confinement_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* A write.*.path property of t where its files are (mapped as every path is), or NULL
 * when unset or not mappable (then files there are not the table's to delete). */
static char *write_path(const floe_table *t, const char *prop) {
    const char *v = floe_table_metadata_property(t->metadata, prop);
    char *p = NULL;
    floe_error e;
    floe_error_clear(&e);
    if (v && *v && floe_table_resolve_path(t, v, &p, &e) < 0)
        floe_log(FLOE_LOG_WARN, "table %s: %s %s: %s (files there are not deleted)",
                 t->name ? t->name : t->root, prop, v, e.msg);
    return p;
}

int floe_table_confinement_open(const floe_table *t, floe_table_confinement **out,
                                floe_error *err) {
    char *data = write_path(t, "write.data.path");
    char *meta = write_path(t, "write.metadata.path");
    int rc = floe_table_confinement_new(t->confined ? NULL : t->catalog, t->ns, t->name, t->root,
                                        data, meta, out, err);
    floe_free(data);
    floe_free(meta);
    return rc;
}

/* FLOE_EINVALID naming path (relative: under the folder) when c does not hold it. */
static int check_named(const floe_table_confinement *c, const char *folder, const char *meta,
                       const char *what, int64_t snapshot_id, const char *path,
                       floe_error *err) {
    char *at = floe_io_uri_is_relative(path) ? floe_io_join(folder, path) : floe_strdup(path);
    if (!at)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_table_confinement_holds(c, at, err);
    floe_free(at);
    if (rc == 0)
        rc = floe_error_set(err, FLOE_EINVALID,
                            "%s: snapshot %" PRId64 "'s %s %s lies outside the table's "
                            "location %s and its own write paths: a table's files are its "
                            "own (its expiry would delete that file)",
                            meta, snapshot_id, what, path, folder);
    return rc < 0 ? rc : 0;
}

/* A write path property of m as an absolute URI (relative: under folder), or NULL. */
static int metadata_write_path(const floe_table_metadata *m, const char *folder,
                               const char *prop, char **out, floe_error *err) {
    const char *v = floe_table_metadata_property(m, prop);
    *out = NULL;
    if (!v || !*v)
        return 0;
    *out = floe_io_uri_is_relative(v) ? floe_io_join(folder, v) : floe_strdup(v);
    return *out ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

int floe_table_metadata_named_files(const floe_table_metadata *m, const char *meta,
                                    floe_named_file_fn fn, void *ctx, floe_error *err) {
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        if (s->manifest_list)
            FLOE_CHECK(fn(ctx, "manifest list", s->snapshot_id, s->manifest_list, err));
        for (size_t j = 0; j < s->n_manifests; j++)
            FLOE_CHECK(fn(ctx, "manifest", s->snapshot_id, s->manifests[j], err));
    }
    /* statistics files are kept as JSON the typed view does not interpret */
    FLOE_CHECK(floe_table_metadata_to_json(m, false, &text, &len, err));
    json_error_t je;
    doc = json_loadb(text, len, 0, &je);
    if (!doc)
        FLOE_FAIL(err, FLOE_ECORRUPT, "%s: %s", meta, je.text);
    static const char *const lists[2] = {"statistics", "partition-statistics"};
    static const char *const whats[2] = {"statistics file", "partition statistics file"};
    for (int li = 0; li < 2; li++) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(doc, lists[li]), i, e) {
            const char *path = json_string_value(json_object_get(e, "statistics-path"));
            json_t *sid = json_object_get(e, "snapshot-id");
            if (path)
                FLOE_CHECK(fn(ctx, whats[li],
                              json_is_integer(sid) ? (int64_t)json_integer_value(sid) : -1,
                              path, err));
        }
    }
done:
    json_decref(doc);
    floe_free(text);
    return rc;
}

typedef struct named_check {
    const floe_table_confinement *c;
    const char *folder, *meta;
} named_check;

static int check_one(void *ctx, const char *what, int64_t snapshot_id, const char *path,
                     floe_error *err) {
    const named_check *k = ctx;
    return check_named(k->c, k->folder, k->meta, what, snapshot_id, path, err);
}

int floe_table_check_metadata_files(floe_catalog *cat, const char *ns, const char *name,
                                    const char *folder, const floe_table_metadata *m,
                                    const char *meta, floe_error *err) {
    int rc = 0;
    char *data = NULL, *mdir = NULL;
    floe_table_confinement *c = NULL;
    FLOE_CHECK(metadata_write_path(m, folder, "write.data.path", &data, err));
    FLOE_CHECK(metadata_write_path(m, folder, "write.metadata.path", &mdir, err));
    FLOE_CHECK(floe_table_confinement_new(cat, ns, name, folder, data, mdir, &c, err));
    named_check k = {c, folder, meta};
    FLOE_CHECK(floe_table_metadata_named_files(m, meta, check_one, &k, err));
done:
    floe_free(data);
    floe_free(mdir);
    floe_table_confinement_free(c);
    return rc;
}
