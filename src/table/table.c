/*
 * table.c - loading tables: from a catalog, from a folder (finding the current metadata
 * file), creating them, and mapping the paths recorded in their metadata onto where the
 * files really are.
 *
 * Spec: format/spec.md "File System Tables" (v<N>.metadata.json, version-hint.text),
 * "Metastore Tables" (<V>-<uuid>.metadata.json), Appendix F (gzip metadata names).
 *
 * Invariants:
 *   - t->metadata always matches t->metadata_location (both replaced together).
 *   - For a table opened by path (t->confined), floe_table_resolve_path only returns
 *     locations under t->root, or under the explicit relocation target.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/append.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/table.h"
#include "table_internal.h"

#define HINT_MAX 1024
/* Reading every unnumbered or tied candidate has to stop somewhere. */
#define LOCATE_MAX_CANDIDATES 64
#define FORWARD_PROBE_MAX 100000

/* ---------------------------------------------------------------------------------------
 * small helpers
 * ------------------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static int exists(floe_io *io, const char *uri, bool *yes, floe_error *err) {
    return floe_io_exists(io, uri, yes, err);
}

/* Directory part of a uri (without the trailing '/'); caller frees. */
static char *dir_of(const char *uri) {
    const char *slash = strrchr(uri, '/');
    if (!slash)
        return floe_strdup(".");
    if (slash == uri)
        return floe_strdup("/");
    return floe_strndup(uri, (size_t)(slash - uri));
}

static const char *base_of(const char *uri) {
    const char *slash = strrchr(uri, '/');
    return slash ? slash + 1 : uri;
}

/* ---------------------------------------------------------------------------------------
 * locating the current metadata file
 * ------------------------------------------------------------------------------------- */

/* uri of v<N> in md, plain or gzip, or NULL when neither exists. */
static int version_uri(floe_io *io, const char *md, int64_t v, char **out, floe_error *err) {
    static const char *const suffixes[] = {".metadata.json", ".gz.metadata.json",
                                           ".metadata.json.gz"};
    *out = NULL;
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "v%" PRId64 "%s", v, suffixes[i]);
        char *p = floe_io_join(md, name);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        bool yes = false;
        int rc = exists(io, p, &yes, err);
        if (rc < 0 || yes) {
            if (rc < 0)
                floe_free(p);
            else
                *out = p;
            return rc;
        }
        floe_free(p);
    }
    return 0;
}

/* The file a version hint names, or NULL (no hint, or it names nothing that exists). */
static int from_hint(floe_io *io, const char *md, char **out, floe_error *err) {
    *out = NULL;
    char *hint_uri = floe_io_join(md, "version-hint.text");
    if (!hint_uri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    bool yes = false;
    int rc = exists(io, hint_uri, &yes, err);
    floe_buf b;
    floe_buf_init(&b, HINT_MAX);
    if (rc == 0 && yes)
        rc = floe_io_read_all(io, hint_uri, HINT_MAX, &b, err);
    if (rc < 0 || !yes) {
        floe_buf_free(&b);
        floe_free(hint_uri);
        return rc == FLOE_ELIMIT ? 0 : rc; /* an oversized hint is no hint */
    }
    /* trim */
    size_t start = 0, end = b.len;
    const char *s = (const char *)b.data;
    while (start < end && (s[start] == ' ' || s[start] == '\n' || s[start] == '\r' || s[start] == '\t'))
        start++;
    while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\n' || s[end - 1] == '\r' ||
                           s[end - 1] == '\t'))
        end--;
    char *text = floe_strndup(s + start, end - start);
    floe_buf_free(&b);
    if (!text) {
        floe_free(hint_uri);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    bool digits = *text != '\0';
    for (const char *p = text; *p; p++)
        digits &= *p >= '0' && *p <= '9';
    if (digits && strlen(text) <= 18) {
        int64_t v = strtoll(text, NULL, 10);
        rc = version_uri(io, md, v, out, err);
        /* The hint is best effort: walk forward while newer versions exist. */
        for (int i = 0; rc == 0 && *out && i < FORWARD_PROBE_MAX; i++) {
            char *next = NULL;
            rc = version_uri(io, md, v + 1 + i, &next, err);
            if (rc < 0 || !next)
                break;
            floe_free(*out);
            *out = next;
        }
    } else if (*text && !strchr(text, '/') && !strchr(text, '\\') && !strstr(text, "..")) {
        /* A file stem ("00001-<uuid>") or a whole file name. */
        static const char *const suffixes[] = {".metadata.json", ".gz.metadata.json", ""};
        for (size_t i = 0; i < 3 && rc == 0 && !*out; i++) {
            if (i == 2 && !floe_metadata_file_name(text))
                break;
            char *name = floe_asprintf("%s%s", text, suffixes[i]);
            char *p = name ? floe_io_join(md, name) : NULL;
            floe_free(name);
            if (!p) {
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                break;
            }
            yes = false;
            rc = exists(io, p, &yes, err);
            if (rc == 0 && yes)
                *out = p;
            else
                floe_free(p);
        }
    }
    if (rc == 0 && !*out)
        floe_log(FLOE_LOG_WARN, "%s: hint \"%.64s\" names no metadata file; listing instead",
                 hint_uri, text);
    floe_free(text);
    floe_free(hint_uri);
    return rc;
}

typedef struct list_ctx {
    const char *md;
    size_t md_len;
    floe_strlist files;
    int rc;
    floe_error *err;
} list_ctx;

static int collect_metadata(void *ctx, const floe_io_entry *e) {
    list_ctx *l = ctx;
    const char *rest = e->uri + l->md_len;
    if (strncmp(e->uri, l->md, l->md_len) || *rest != '/' || strchr(rest + 1, '/'))
        return 0; /* only files directly in md */
    if (!floe_metadata_file_name(rest + 1))
        return 0;
    if (floe_strlist_push(&l->files, e->uri, l->err) < 0) {
        l->rc = FLOE_ENOMEM;
        return 1;
    }
    return 0;
}

/* Newest metadata file among md's files by name, settling names without a number and ties
 * by reading them. */
static int from_listing(floe_io *io, const char *md, char **out, floe_error *err) {
    list_ctx l = {md, strlen(md), {0}, 0, err};
    while (l.md_len > 1 && md[l.md_len - 1] == '/')
        l.md_len--;
    int rc = floe_io_list(io, md, collect_metadata, &l, err);
    if (rc == 0)
        rc = l.rc;
    char **cand = NULL;
    if (rc < 0)
        goto done;
    if (l.files.n == 0)
        FLOE_FAIL(err, FLOE_ENOTFOUND, "%s: no *.metadata.json file", md);
    int64_t best_v = -1;
    for (size_t i = 0; i < l.files.n; i++) {
        int64_t v;
        if (floe_metadata_file_version(base_of(l.files.items[i]), &v) && v > best_v)
            best_v = v;
    }
    cand = floe_calloc(l.files.n, sizeof *cand);
    if (!cand)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t nc = 0;
    for (size_t i = 0; i < l.files.n; i++) {
        int64_t v;
        bool numbered = floe_metadata_file_version(base_of(l.files.items[i]), &v);
        if (!numbered || v == best_v)
            cand[nc++] = l.files.items[i];
    }
    if (nc == 1) {
        *out = floe_strdup(cand[0]);
        if (!*out)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto done;
    }
    if (nc > LOCATE_MAX_CANDIDATES)
        FLOE_FAIL(err, FLOE_ELIMIT,
                  "%s: %zu metadata files compete for newest; add a version-hint.text", md, nc);
    /* Read the candidates: the newest is the one furthest along. */
    const char *best = NULL;
    int64_t best_seq = INT64_MIN, best_ts = INT64_MIN;
    floe_error first_err;
    floe_error_clear(&first_err);
    int first_rc = 0;
    for (size_t i = 0; i < nc; i++) {
        floe_table_metadata *m = NULL;
        floe_error e2;
        floe_error_clear(&e2);
        int r = floe_table_metadata_read(io, cand[i], &m, &e2);
        if (r == FLOE_ENOTFOUND) { /* gone since the listing */
            if (!first_rc) {
                first_rc = r;
                first_err = e2;
            }
            floe_log(FLOE_LOG_DEBUG, "locate: skipping %s: %s", cand[i], e2.msg);
            continue;
        }
        if (r < 0) {
            /* it may be the newest: skipping it would read an older state as current */
            if (err)
                *err = e2;
            floe_error_prefix(err, "%s: cannot tell which metadata file is current: ", md);
            rc = r;
            goto done;
        }
        if (m->last_sequence_number > best_seq ||
            (m->last_sequence_number == best_seq && m->last_updated_ms > best_ts)) {
            best = cand[i];
            best_seq = m->last_sequence_number;
            best_ts = m->last_updated_ms;
        }
        floe_table_metadata_free(m);
    }
    if (!best) {
        if (err)
            *err = first_err;
        rc = first_rc;
        goto done;
    }
    *out = floe_strdup(best);
    if (!*out)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
done:
    floe_free(cand);
    floe_strlist_free(&l.files);
    return rc;
}

int floe_table_locate_metadata(floe_io *io, const char *path, char **metadata_uri,
                               floe_error *err) {
    if (!path || !*path)
        return floe_error_set(err, FLOE_EINVALID, "no table path given");
    bool yes = false;
    int rc;
    if (floe_metadata_file_name(path) || ends_with(path, ".json")) {
        FLOE_FORWARD_IF_ERROR(exists(io, path, &yes, err));
        if (!yes)
            return floe_error_set(err, FLOE_ENOTFOUND, "%s does not exist", path);
        char *copy = floe_strdup(path);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *metadata_uri = copy;
        return 0;
    }
    /* the table folder holds metadata/; accept the metadata folder itself too */
    char *md = floe_io_join(path, "metadata");
    if (!md)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    char *probe = floe_io_join(md, "version-hint.text");
    bool has_md = false;
    if (!probe) {
        floe_free(md);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    rc = exists(io, probe, &has_md, err);
    floe_free(probe);
    if (rc == 0 && !has_md) {
        /* no hint under metadata/: is there a metadata/ folder with files at all? */
        list_ctx l = {md, strlen(md), {0}, 0, err};
        rc = floe_io_list(io, md, collect_metadata, &l, err);
        has_md = l.files.n > 0;
        floe_strlist_free(&l.files);
    }
    if (rc < 0) {
        floe_free(md);
        return rc;
    }
    if (!has_md) {
        floe_free(md);
        if (!(md = floe_strdup(path)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    char *found = NULL;
    rc = from_hint(io, md, &found, err);
    if (rc == 0 && !found)
        rc = from_listing(io, md, &found, err);
    if (rc == FLOE_ENOTFOUND)
        floe_error_set(err, FLOE_ENOTFOUND, "%s: not an Iceberg table (no metadata/*.metadata.json)",
                       path);
    floe_free(md);
    if (rc < 0)
        return rc;
    *metadata_uri = found;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * table objects
 * ------------------------------------------------------------------------------------- */

void floe_table_close(floe_table *t) {
    if (!t)
        return;
    floe_table_metadata_free(t->metadata);
    floe_free(t->pointer);
    floe_free(t->metadata_location);
    floe_free(t->ns);
    floe_free(t->name);
    floe_free(t->root);
    floe_free(t->relocate_from);
    floe_free(t->relocate_to);
    floe_free(t);
}

const floe_table_metadata *floe_table_metadata_get(const floe_table *t) { return t->metadata; }
const char *floe_table_metadata_location(const floe_table *t) { return t->metadata_location; }
const char *floe_table_root(const floe_table *t) { return t->root; }
floe_catalog *floe_table_catalog(const floe_table *t) { return t->catalog; }
const char *floe_table_namespace(const floe_table *t) { return t->ns; }
const char *floe_table_name(const floe_table *t) { return t->name; }
bool floe_table_migration_due(const floe_table *t) { return t->migrate; }

floe_io *floe_table_io(const floe_table *t) { return t->io; }

char *floe_table_metadata_dir(const floe_table_metadata *m) {
    const char *custom = floe_table_metadata_property(m, "write.metadata.path");
    if (custom && *custom)
        return floe_strdup(custom);
    return floe_io_join(m->location, "metadata");
}

int floe_table_metadata_write_dir(const floe_table *t, char **out, floe_error *err) {
    char *rec = floe_table_metadata_dir(t->metadata);
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_table_record_path(t, rec, out, err);
    floe_free(rec);
    return rc;
}

int floe_table_uri_form(char **path, floe_error *err) {
    if (floe_io_uri_is_relative(*path) || floe_io_uri_has_remote_scheme(*path))
        return 0;
    char *abs = NULL;
    FLOE_FORWARD_IF_ERROR(floe_io_uri_absolute(*path, NULL, &abs, err));
    floe_free(*path);
    *path = abs;
    return 0;
}

/* If path starts with prefix at a '/' boundary, the remainder (possibly ""), else NULL. */
static const char *strip_prefix(const char *path, const char *prefix);
static const char *canonical(const char *s);

/* The remainder of `recorded` under the explicit relocation source, or NULL. */
static const char *relocated_rest(const floe_table *t, const char *recorded) {
    if (!t->relocate_from)
        return NULL;
    const char *rest = strip_prefix(recorded, t->relocate_from);
    if (!rest)
        rest = strip_prefix(canonical(recorded), canonical(t->relocate_from));
    return rest;
}

/* Refuse a catalog table recorded under the warehouse the catalog was moved away from. */
static int check_not_moved(const floe_table *t, const char *recorded, floe_error *err) {
    const char *old = t->catalog ? floe_catalog_moved_from(t->catalog) : NULL;
    if (!old || relocated_rest(t, recorded) || floe_io_uri_is_relative(recorded) ||
        !floe_io_uri_within(recorded, old))
        return 0;
    return floe_error_set(err, FLOE_EINVALID,
                          "%s is under %s, the warehouse catalog %s was used with, but the "
                          "catalog is opened with warehouse %s: the warehouse was moved or "
                          "copied (or the configuration changed). floe does not read or write "
                          "a table through its old paths unless they are mapped: --relocate "
                          "%s=%s (the table's next commit records its paths under the new "
                          "warehouse), or set the warehouse back to %s",
                          recorded, old, floe_catalog_name(t->catalog),
                          floe_catalog_warehouse(t->catalog), old,
                          floe_catalog_warehouse(t->catalog), old);
}

/* Where the current metadata file of a catalog table is read: the pointer itself when it
 * is absolute, else resolved against the warehouse; the explicit relocation first. */
static int pointer_location(const floe_table *t, const char *pointer, char **out,
                            floe_error *err) {
    const char *rest = relocated_rest(t, pointer);
    if (rest) {
        char *joined = *rest ? floe_io_join(t->relocate_to, rest) : floe_strdup(t->relocate_to);
        if (!joined)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int rc = floe_io_uri_absolute(joined, NULL, out, err);
        floe_free(joined);
        return rc;
    }
    FLOE_FORWARD_IF_ERROR(check_not_moved(t, pointer, err));
    return floe_catalog_resolve_location(t->catalog, t->ns, t->name, pointer, out, err);
}

/* The table folder of a metadata file: the folder holding its metadata/ folder, else
 * the file's own folder. */
static char *folder_of_metadata(const char *metadata_uri) {
    char *md_dir = dir_of(metadata_uri);
    if (!md_dir || strcmp(base_of(md_dir), "metadata"))
        return md_dir;
    char *root = dir_of(md_dir);
    floe_free(md_dir);
    return root;
}

/* t->root and t->migrate for the installed metadata:
 *   path table                    -> the folder it was opened from (a location recorded
 *                                    as an absolute URI stays the table's own); migrate
 *                                    when the location is relative;
 *   relocated location            -> its image under the relocation target; migrate;
 *   relative location             -> the folder of the metadata file (its metadata/
 *                                    folder's parent), else resolved against the
 *                                    warehouse; migrate;
 *   absolute, catalog table       -> the location; refused when the filesystem catalog
 *                                    keeps the table elsewhere or the location lies under
 *                                    a warehouse the catalog was moved away from. */
static int place(floe_table *t, floe_error *err) {
    const char *loc = t->metadata->location;
    char *root = NULL;
    bool migrate = false;
    int rc = 0;
    const char *rest = relocated_rest(t, loc);
    if (!t->catalog) {
        if (!(root = folder_of_metadata(t->metadata_location)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        migrate = floe_io_uri_is_relative(loc);
    } else if (rest) {
        char *joined = *rest ? floe_io_join(t->relocate_to, rest) : floe_strdup(t->relocate_to);
        rc = joined ? floe_io_uri_absolute(joined, NULL, &root, err)
                    : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(joined);
        FLOE_CHECK(rc);
        /* an identity mapping keeps a table where it is: nothing to rewrite */
        char *k1 = floe_io_uri_key(loc), *k2 = floe_io_uri_key(root);
        migrate = !k1 || !k2 || strcmp(k1, k2) || floe_io_uri_is_relative(loc);
        floe_free(k1);
        floe_free(k2);
    } else if (floe_io_uri_is_relative(loc)) {
        migrate = true;
        char *md_dir = dir_of(t->metadata_location);
        if (!md_dir)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        bool beside = !strcmp(base_of(md_dir), "metadata");
        floe_free(md_dir);
        if (beside)
            root = folder_of_metadata(t->metadata_location);
        else
            FLOE_CHECK(floe_catalog_resolve_location(t->catalog, t->ns, t->name, loc, &root, err));
        if (!root)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    } else {
        FLOE_CHECK(check_not_moved(t, loc, err));
        if (floe_catalog_swap_by_create(t->catalog)) {
            /* the filesystem catalog keeps a table in <warehouse>/<ns>/<name>, whatever
             * its metadata says: a location elsewhere means the warehouse moved */
            char *home = NULL;
            FLOE_CHECK(floe_catalog_default_location(t->catalog, t->ns, t->name, &home, err));
            char *k1 = floe_io_uri_key(loc), *k2 = floe_io_uri_key(home);
            bool same = k1 && k2 && !strcmp(k1, k2);
            floe_free(k1);
            floe_free(k2);
            if (!same) {
                rc = floe_error_set(err, FLOE_EINVALID,
                                    "the metadata of %s.%s records location %s, but the "
                                    "filesystem catalog keeps the table at %s: the warehouse "
                                    "was moved or copied. floe does not read or write a "
                                    "table through its old paths unless they are mapped: "
                                    "--relocate %s=%s (the next commit records its paths "
                                    "there)",
                                    t->ns, t->name, loc, home, loc, home);
                floe_free(home);
                goto done;
            }
            floe_free(home);
        }
        if (!(root = floe_strdup(loc)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    floe_free(t->root);
    t->root = root;
    root = NULL;
    t->migrate = migrate;
done:
    floe_free(root);
    return rc;
}

int floe_table_install(floe_table *t, char *pointer, char *metadata_location,
                       floe_table_metadata *m, floe_error *err) {
    char *old_pointer = t->pointer, *old_loc = t->metadata_location;
    floe_table_metadata *old_m = t->metadata;
    t->pointer = pointer ? pointer : floe_strdup(metadata_location);
    t->metadata_location = metadata_location;
    t->metadata = m;
    int rc = t->pointer ? place(t, err) : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc < 0) {
        floe_free(t->pointer);
        floe_free(t->metadata_location);
        floe_table_metadata_free(t->metadata);
        t->pointer = old_pointer;
        t->metadata_location = old_loc;
        t->metadata = old_m;
        return rc;
    }
    floe_free(old_pointer);
    floe_free(old_loc);
    floe_table_metadata_free(old_m);
    return 0;
}

static int set_relocation(floe_table *t, const floe_table_open_options *opts, floe_error *err) {
    if (!opts || !opts->relocate_from || !opts->relocate_to)
        return 0;
    if (!*opts->relocate_from || !*opts->relocate_to)
        return floe_error_set(err, FLOE_EINVALID, "relocate: FROM and TO must not be empty");
    t->relocate_from = floe_strdup(opts->relocate_from);
    if (!t->relocate_from)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* the target is where files are read and written: absolute, whatever was typed */
    return floe_io_uri_absolute(opts->relocate_to, NULL, &t->relocate_to, err);
}

int floe_table_open_path(const char *path, const floe_table_open_options *opts,
                         floe_table **out, floe_error *err) {
    floe_table *t = floe_calloc(1, sizeof *t);
    if (!t)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    char *abs = NULL, *found = NULL;
    floe_table_metadata *m = NULL;
    t->confined = true;
    t->io = opts && opts->io ? opts->io : floe_io_default();
    FLOE_CHECK(set_relocation(t, opts, err));
    /* absolute from the start: the paths this table records (metadata-log entries, new
     * files) must not depend on the folder floe runs in */
    FLOE_CHECK(floe_io_uri_absolute(path, NULL, &abs, err));
    FLOE_CHECK(floe_table_locate_metadata(t->io, abs, &found, err));
    FLOE_CHECK(floe_table_metadata_read(t->io, found, &m, err));
    rc = floe_table_install(t, NULL, found, m, err);
    found = NULL;
    m = NULL;
done:
    floe_free(abs);
    floe_free(found);
    floe_table_metadata_free(m);
    if (rc < 0) {
        floe_table_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Read the metadata a catalog pointer names and install it. */
static int install_pointer(floe_table *t, char *pointer, floe_error *err) {
    char *loc = NULL;
    floe_table_metadata *m = NULL;
    int rc = pointer_location(t, pointer, &loc, err);
    if (rc == 0)
        rc = floe_table_metadata_read(t->io, loc, &m, err);
    if (rc == 0 && t->metadata && t->metadata->table_uuid && m->table_uuid &&
        strcmp(t->metadata->table_uuid, m->table_uuid))
        rc = floe_error_set(err, FLOE_EINVALID,
                            "table uuid changed from %s to %s: the table was replaced; load "
                            "it again",
                            t->metadata->table_uuid, m->table_uuid);
    if (rc < 0) {
        floe_free(pointer);
        floe_free(loc);
        floe_table_metadata_free(m);
        return rc;
    }
    return floe_table_install(t, pointer, loc, m, err);
}

int floe_table_load_ex(floe_catalog *c, const char *ns, const char *name,
                       const floe_table_open_options *opts, floe_table **out,
                       floe_error *err) {
    floe_table *t = floe_calloc(1, sizeof *t);
    if (!t)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    char *pointer = NULL;
    t->catalog = c;
    t->io = floe_catalog_io(c);
    t->ns = floe_strdup(ns);
    t->name = floe_strdup(name);
    if (!t->ns || !t->name)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(set_relocation(t, opts, err));
    FLOE_CHECK(floe_catalog_load_table(c, ns, name, &pointer, err));
    t->io = floe_catalog_table_io(c, ns, name); /* vended credentials, when given */
    rc = install_pointer(t, pointer, err);
done:
    if (rc < 0) {
        floe_error_prefix(err, "table %s.%s: ", ns, name);
        floe_table_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int floe_table_load(floe_catalog *c, const char *ns, const char *name, floe_table **out,
                    floe_error *err) {
    return floe_table_load_ex(c, ns, name, NULL, out, err);
}

int floe_table_refresh(floe_table *t, floe_error *err) {
    char *loc = NULL;
    int rc = 0;
    if (t->catalog) {
        FLOE_CHECK(floe_catalog_load_table(t->catalog, t->ns, t->name, &loc, err));
        if (t->pointer && !strcmp(loc, t->pointer)) {
            floe_free(loc);
            return 0;
        }
        return install_pointer(t, loc, err);
    }
    FLOE_CHECK(floe_table_locate_metadata(t->io, t->root, &loc, err));
    if (t->metadata_location && !strcmp(loc, t->metadata_location)) {
        floe_free(loc);
        return 0;
    }
    floe_table_metadata *m = NULL;
    FLOE_CHECK(floe_table_metadata_read(t->io, loc, &m, err));
    if (t->metadata && t->metadata->table_uuid && m->table_uuid &&
        strcmp(t->metadata->table_uuid, m->table_uuid)) {
        floe_table_metadata_free(m);
        FLOE_FAIL(err, FLOE_EINVALID,
                  "table uuid changed from %s to %s: the table was replaced; load it again",
                  t->metadata->table_uuid, m->table_uuid);
    }
    return floe_table_install(t, NULL, loc, m, err);
done:
    floe_free(loc);
    return rc;
}

bool floe_table_base_gone(floe_table *t, int rc) {
    if (rc != FLOE_ENOTFOUND || !t->metadata_location)
        return false;
    char *loc = NULL;
    floe_error e;
    floe_error_clear(&e);
    int lrc = t->catalog ? floe_catalog_load_table(t->catalog, t->ns, t->name, &loc, &e)
                         : floe_table_locate_metadata(t->io, t->root, &loc, &e);
    /* (the catalog's pointer is compared with the one the table was loaded from) */
    bool moved = lrc == 0 && strcmp(loc, t->catalog ? t->pointer : t->metadata_location) != 0;
    floe_free(loc);
    return moved;
}

static const floe_kv created_defaults[] = {
    /* one metadata file per commit, each holding every retained snapshot: keep the last
     * 10 for the metadata-log and delete the rest as commits go */
    {FLOE_PROP_METADATA_DELETE_AFTER_COMMIT, "true"},
    {FLOE_PROP_METADATA_PREVIOUS_MAX, "10"},
    /* merge the newest manifests every 8 commits (Iceberg's default is 100), so a point
     * query reads a handful of manifests whatever the commit rate */
    {FLOE_PROP_MANIFEST_MIN_MERGE, "8"},
};

const floe_kv *floe_table_created_defaults(size_t *n) {
    *n = sizeof created_defaults / sizeof created_defaults[0];
    return created_defaults;
}

/* ---------------------------------------------------------------------------------------
 * create, register, rename: where a table may be (placement.c checks, under its lock)
 * ------------------------------------------------------------------------------------- */

/* Before a create: the namespace exists, the name is free, and *location (caller frees)
 * is where the table goes: `given` as an absolute URI, else the catalog's default; the
 * filesystem catalog accepts only its default. */
static int create_checks(floe_catalog *c, const char *ns, const char *name, const char *given,
                         char **location, floe_error *err) {
    char *existing = NULL, *loc = NULL, *abs = NULL;
    bool ns_exists = false;
    int rc = 0;
    FLOE_CHECK(floe_catalog_namespace_exists(c, ns, &ns_exists, err));
    if (!ns_exists)
        FLOE_FAIL(err, FLOE_ENOTFOUND, "namespace %s does not exist", ns);
    rc = floe_catalog_load_table(c, ns, name, &existing, err);
    if (rc == 0)
        FLOE_FAIL(err, FLOE_EEXISTS, "table %s.%s already exists", ns, name);
    if (rc != FLOE_ENOTFOUND)
        goto done;
    floe_error_clear(err);
    FLOE_CHECK(floe_catalog_default_location(c, ns, name, &loc, err));
    if (given) {
        /* recorded as an absolute URI whatever was typed */
        FLOE_CHECK(floe_io_uri_absolute(given, NULL, &abs, err));
        char *k1 = floe_io_uri_key(abs), *k2 = floe_io_uri_key(loc);
        bool same = k1 && k2 && !strcmp(k1, k2);
        floe_free(k1);
        floe_free(k2);
        if (floe_catalog_swap_by_create(c) && !same)
            FLOE_FAIL(err, FLOE_EINVALID, "the filesystem catalog keeps table %s.%s at %s, not %s",
                      ns, name, loc, abs);
        floe_free(loc);
        loc = abs;
        abs = NULL;
    }
    *location = loc;
    loc = NULL;
done:
    floe_free(existing);
    floe_free(loc);
    floe_free(abs);
    return rc;
}

int floe_table_new_metadata(floe_catalog *c, const char *ns, const char *name,
                            const char *schema_json, const floe_table_create_options *opts,
                            floe_table_metadata **out, floe_error *err) {
    floe_table_create_options none = {0};
    if (!opts)
        opts = &none;
    char *location = NULL;
    floe_kv *props = NULL;
    size_t nprops = 0;
    char **prop_values = NULL;
    floe_metadata_builder *b = NULL;
    int rc = 0;
    /* a value of a property floe reads (gc.enabled, retention, write options...) that it
     * cannot read is refused, whoever creates (CLI, REST server, library) */
    FLOE_CHECK(floe_table_properties_check(NULL, opts->props, opts->nprops, NULL, 0, err));
    FLOE_CHECK(create_checks(c, ns, name, opts->location, &location, err));
    FLOE_CHECK(floe_table_check_location_unused(c, ns, name, location, err));
    /* the caller's properties (folders in them recorded as absolute URIs too), then
     * floe's defaults for what they do not set */
    size_t nd = 0;
    const floe_kv *d = opts->floe_defaults ? floe_table_created_defaults(&nd) : NULL;
    props = floe_calloc(opts->nprops + nd + 1, sizeof *props);
    prop_values = floe_calloc(opts->nprops + 1, sizeof *prop_values);
    if (!props || !prop_values)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < opts->nprops; i++) {
        props[nprops++] = opts->props[i];
        if (opts->props[i].key) {
            FLOE_CHECK(floe_table_check_write_path(c, ns, name, location, opts->props[i].key,
                                                   opts->props[i].value, &prop_values[i], err));
            if (prop_values[i])
                props[i].value = prop_values[i];
        }
    }
    for (size_t i = 0; i < nd; i++) {
        bool given = false;
        for (size_t k = 0; k < opts->nprops && !given; k++)
            given = !strcmp(opts->props[k].key, d[i].key);
        if (!given)
            props[nprops++] = d[i];
    }
    /* the caps hold the table as made: floe's defaults and absolute folders included */
    FLOE_CHECK(floe_table_properties_check(NULL, props, nprops, NULL, 0, err));
    FLOE_CHECK(floe_metadata_builder_new_table(location, schema_json, opts->spec_json,
                                               opts->sort_json, props, nprops, &b, err));
    FLOE_CHECK(floe_metadata_builder_finish(b, NULL, out, err));
done:
    for (size_t i = 0; prop_values && i < opts->nprops; i++)
        floe_free(prop_values[i]);
    floe_free(prop_values);
    floe_free(props);
    floe_metadata_builder_free(b);
    floe_free(location);
    return rc;
}

int floe_table_create(floe_catalog *c, const char *ns, const char *name,
                      const char *schema_json, const floe_table_create_options *opts,
                      floe_table **out, floe_error *err) {
    floe_table_metadata *m = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_new_metadata(c, ns, name, schema_json, opts, &m, err));
    return floe_table_create_with_metadata(c, ns, name, m, out, err);
}

/* A pointer-swap store's create: m written as the first metadata file in md_dir, then
 * registered; *meta_loc (caller frees) is where. The file is removed again when the
 * registration fails. */
static int write_and_register(floe_catalog *c, const char *ns, const char *name,
                              const floe_table_metadata *m, const char *md_dir, char **meta_loc,
                              floe_error *err) {
    char *loc = NULL;
    bool gz = floe_table_metadata_wants_gzip(m);
    int rc = 0;
    FLOE_CHECK(floe_table_metadata_size_check(c, ns, name, m, NULL, err));
    FLOE_CHECK(floe_catalog_new_metadata_location(c, md_dir, NULL, gz, &loc, err));
    rc = floe_table_metadata_write(floe_catalog_io(c), m, loc, gz, true, err);
    if (rc == FLOE_EEXISTS && floe_catalog_swap_by_create(c))
        FLOE_FAIL(err, FLOE_EEXISTS, "table %s.%s already exists", ns, name);
    if (rc < 0)
        goto done;
    rc = floe_catalog_register_table(c, ns, name, loc, err);
    if (rc < 0) {
        floe_io_delete(floe_catalog_io(c), loc, NULL);
        goto done;
    }
    *meta_loc = loc;
    loc = NULL;
done:
    floe_free(loc);
    return rc;
}

/* A store that commits changes (REST): its server makes the table from *m's document;
 * *m is replaced by the metadata the catalog answers (adopted as every REST commit's
 * is), *meta_loc (caller frees) is where the catalog keeps it. Nothing was written here,
 * so a failure leaves nothing to remove. */
static int create_on_server(floe_catalog *c, const char *ns, const char *name,
                            floe_table_metadata **m, char **meta_loc, floe_error *err) {
    char *json = NULL, *loc = NULL, *answer = NULL;
    size_t len = 0;
    floe_table_metadata *adopted = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_metadata_to_json(*m, false, &json, &len, err));
    FLOE_CHECK(floe_catalog_create_table(c, ns, name, json, &loc, &answer, err));
    FLOE_CHECK(floe_table_metadata_parse(answer, strlen(answer), loc, &adopted, err));
    floe_table_metadata_free(*m);
    *m = adopted;
    *meta_loc = loc;
    loc = NULL;
done:
    floe_free(json);
    floe_free(loc);
    floe_free(answer);
    return rc;
}

int floe_table_create_with_metadata(floe_catalog *c, const char *ns, const char *name,
                                    floe_table_metadata *m, floe_table **out, floe_error *err) {
    char *location = NULL, *meta_loc = NULL, *md_dir = NULL;
    floe_table_placement_lock *lock = NULL;
    int rc = 0;
    FLOE_CHECK(create_checks(c, ns, name, m->location, &location, err));
    if (strcmp(location, m->location))
        FLOE_FAIL(err, FLOE_EINVALID, "table %s.%s: location %s is not an absolute URI (%s)", ns,
                  name, m->location, location);
    /* the filesystem store finds metadata only in its own folder */
    md_dir = floe_catalog_swap_by_create(c) ? floe_io_join(location, "metadata")
                                            : floe_table_metadata_dir(m);
    if (!md_dir)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    char *md_abs = NULL;
    FLOE_CHECK(floe_io_uri_absolute(md_dir, location, &md_abs, err));
    floe_free(md_dir);
    md_dir = md_abs;
    /* the check and the registration under one lock: two creates (two first posts to
     * floe serve) cannot both pass the check and nest */
    FLOE_CHECK(floe_table_placement_lock_take(c, &lock, err));
    FLOE_CHECK(floe_table_check_location(c, ns, name, location, err));
    if (floe_catalog_commits_changes(c)) {
        /* the catalog's server makes the table and writes its first metadata file */
        FLOE_CHECK(create_on_server(c, ns, name, &m, &meta_loc, err));
    } else {
        FLOE_CHECK(write_and_register(c, ns, name, m, md_dir, &meta_loc, err));
    }
    floe_table_placement_lock_release(lock);
    lock = NULL;
    floe_table *t = floe_calloc(1, sizeof *t);
    if (!t)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    t->catalog = c;
    t->io = floe_catalog_table_io(c, ns, name); /* vended credentials, when given */
    t->ns = floe_strdup(ns);
    t->name = floe_strdup(name);
    if (!t->ns || !t->name) {
        floe_table_close(t);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    char *ptr = floe_strdup(meta_loc);
    rc = ptr ? floe_table_install(t, ptr, meta_loc, m, err)
             : (floe_free(meta_loc), floe_table_metadata_free(m),
                floe_error_set(err, FLOE_ENOMEM, "out of memory"));
    meta_loc = NULL;
    m = NULL;
    if (rc < 0) {
        floe_table_close(t);
        goto done;
    }
    *out = t;
done:
    floe_table_placement_lock_release(lock);
    floe_table_metadata_free(m);
    floe_free(location);
    floe_free(meta_loc);
    floe_free(md_dir);
    return rc;
}

/* A register (expected NULL) or a register with overwrite (expected: the pointer the
 * table has, swapped for the new one): the same placement checks either way, under the
 * placement lock, the table itself not counted as another. */
static int register_at(floe_catalog *c, const char *ns, const char *name,
                       const char *expected, const char *metadata_location, floe_error *err) {
    char *abs = NULL, *root = NULL;
    floe_table_metadata *m = NULL;
    floe_table_placement_lock *lock = NULL;
    int rc = 0;
    /* the catalog records an absolute URI whatever was typed */
    FLOE_CHECK(floe_io_uri_absolute(metadata_location, NULL, &abs, err));
    FLOE_CHECK(floe_table_metadata_read(floe_catalog_io(c), abs, &m, err));
    /* the location the table's files are in: as recorded when absolute, else beside its
     * metadata folder */
    if (floe_io_uri_is_relative(m->location))
        root = folder_of_metadata(abs);
    else
        root = floe_strdup(m->location);
    if (!root)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_placement_lock_take(c, &lock, err));
    FLOE_CHECK(floe_table_check_location(c, ns, name, root, err));
    /* its snapshots' files and statistics files: the table's own, as at a commit */
    FLOE_CHECK(floe_table_check_metadata_files(c, ns, name, root, m, abs, err));
    FLOE_CHECK(expected ? floe_catalog_swap(c, ns, name, expected, abs, err)
                        : floe_catalog_register_table(c, ns, name, abs, err));
done:
    floe_table_placement_lock_release(lock);
    floe_table_metadata_free(m);
    floe_free(abs);
    floe_free(root);
    return rc;
}

int floe_table_register(floe_catalog *c, const char *ns, const char *name,
                        const char *metadata_location, floe_error *err) {
    return register_at(c, ns, name, NULL, metadata_location, err);
}

int floe_table_register_over(floe_catalog *c, const char *ns, const char *name,
                             const char *expected, const char *metadata_location,
                             floe_error *err) {
    return register_at(c, ns, name, expected, metadata_location, err);
}

int floe_table_rename(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                      const char *to_name, floe_error *err) {
    floe_table *t = NULL;
    floe_table_placement_lock *lock = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_placement_lock_take(c, &lock, err));
    /* the files stay where they are: the location must still be a place of its own
     * under the new name */
    FLOE_CHECK(floe_table_load(c, ns, name, &t, err));
    FLOE_CHECK(floe_table_check_location_except(c, to_ns, to_name, ns, name, t->root, err));
    FLOE_CHECK(floe_catalog_rename_table(c, ns, name, to_ns, to_name, err));
done:
    floe_table_close(t);
    floe_table_placement_lock_release(lock);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * recorded paths while a migration is due
 * ------------------------------------------------------------------------------------- */

int floe_table_migrated_path(const floe_table *t, const char *recorded, char **out,
                             floe_error *err) {
    char *phys = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(t, recorded, &phys, err));
    int rc;
    if (floe_io_uri_is_relative(phys) && t->catalog) {
        /* outside the table and relative: where the writer of the relative path ran */
        char *abs = NULL;
        rc = floe_catalog_resolve_location(t->catalog, NULL, NULL, phys, &abs, err);
        floe_free(phys);
        if (rc < 0)
            return rc;
        phys = abs;
    }
    if (floe_io_uri_has_remote_scheme(phys)) {
        *out = phys;
        return 0;
    }
    rc = floe_io_uri_absolute(phys, NULL, out, err);
    floe_free(phys);
    return rc;
}

int floe_table_record_path(const floe_table *t, const char *recorded, char **out,
                           floe_error *err) {
    if (t->migrate)
        return floe_table_migrated_path(t, recorded, out, err);
    char *copy = floe_strdup(recorded);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* "/abs/x" (a location or property typed as a path) is recorded as file:///abs/x */
    int rc = floe_table_uri_form(&copy, err);
    if (rc < 0) {
        floe_free(copy);
        return rc;
    }
    *out = copy;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * path mapping
 * ------------------------------------------------------------------------------------- */

/* The comparable form of a recorded location or path: "file:///abs" and "file:/abs" ->
 * "/abs", "file://rel" (relative, as some writers record it) -> "rel", leading "./"
 * dropped. Returns a pointer into s (no copy). */
static const char *canonical(const char *s) {
    if (!strncmp(s, "file://", 7)) {
        if (s[7] == '/')
            s += 7;
        else if (!strncmp(s + 7, "localhost/", 10))
            s += 16;
        else
            s += 7; /* file://data/... : relative, "data" is not a host */
    } else if (!strncmp(s, "file:/", 6)) {
        s += 5;
    }
    while (s[0] == '.' && s[1] == '/')
        s += 2;
    return s;
}

/* If path starts with prefix at a '/' boundary, the remainder (possibly ""), else NULL. */
static const char *strip_prefix(const char *path, const char *prefix) {
    size_t n = strlen(prefix);
    while (n > 0 && prefix[n - 1] == '/')
        n--;
    if (n == 0 || strncmp(path, prefix, n))
        return NULL;
    if (path[n] == '\0')
        return path + n;
    if (path[n] == '/')
        return path + n + 1;
    return NULL;
}

static bool climbs_out(const char *rest) {
    /* any ".." component (we do not resolve them: a remainder that needs them is not a
     * file inside the table) */
    const char *p = rest;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return true;
        if (!slash)
            break;
        p = slash + 1;
    }
    return false;
}

static int join_rest(const char *base, const char *rest, char **out, floe_error *err) {
    char *r = *rest ? floe_io_join(base, rest) : floe_strdup(base);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = r;
    return 0;
}

int floe_table_resolve_path(const floe_table *t, const char *recorded, char **out,
                            floe_error *err) {
    if (!recorded || !*recorded)
        return floe_error_set(err, FLOE_EINVALID, "empty path in table metadata");
    const char *rest;
    /* 1. explicit relocation wins and may point anywhere */
    if (t->relocate_from) {
        if ((rest = strip_prefix(recorded, t->relocate_from)) ||
            (rest = strip_prefix(canonical(recorded), canonical(t->relocate_from)))) {
            if (climbs_out(rest))
                return floe_error_set(err, FLOE_EINVALID,
                                      "%s: \"..\" after the relocated prefix is not followed",
                                      recorded);
            return join_rest(t->relocate_to, rest, out, err);
        }
        /* a path the migration already recorded under the relocation target */
        if ((rest = strip_prefix(canonical(recorded), canonical(t->relocate_to))) &&
            !climbs_out(rest))
            return join_rest(t->relocate_to, rest, out, err);
    }
    /* 2. the recorded table location, in any of its spellings */
    const char *loc = t->metadata ? t->metadata->location : NULL;
    if (loc && ((rest = strip_prefix(recorded, loc)) ||
                (rest = strip_prefix(canonical(recorded), canonical(loc))))) {
        if (climbs_out(rest))
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s: \"..\" inside the table location is not followed",
                                  recorded);
        return join_rest(t->root, rest, out, err);
    }
    /* 3. already a path into the folder we were given */
    if ((rest = strip_prefix(canonical(recorded), canonical(t->root))) && !climbs_out(rest))
        return join_rest(t->root, rest, out, err);
    if (t->confined)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s is outside the table location %s (read from %s); floe does "
                              "not follow paths out of a table it was given by path (relocate "
                              "FROM=TO to allow it)",
                              recorded, loc ? loc : "?", t->root);
    char *copy = floe_strdup(recorded);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = copy;
    return 0;
}

/* Every file the table's metadata references: metadata files, manifest lists, manifests,
 * data and delete files. */
static int referenced_files(floe_table *t, floe_strlist *out, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    int rc = 0;
    floe_arena arena;
    floe_arena_init(&arena, 64 * 1024);
    FLOE_CHECK(floe_strlist_push(out, floe_table_metadata_location(t), err));
    for (size_t i = 0; i < m->n_metadata_log; i++)
        FLOE_CHECK(floe_strlist_push(out, m->metadata_log[i].metadata_file, err));
    for (size_t s = 0; s < m->n_snapshots; s++) {
        const floe_snapshot *sn = &m->snapshots[s];
        if (!sn->manifest_list)
            continue;
        char *uri = NULL;
        floe_manifest_list l = {0};
        FLOE_CHECK(floe_strlist_push(out, sn->manifest_list, err));
        FLOE_CHECK(floe_table_resolve_path(t, sn->manifest_list, &uri, err));
        rc = floe_manifest_list_read(floe_table_io(t), uri, NULL, &arena, &l, err);
        floe_free(uri);
        if (rc < 0)
            goto done;
        for (size_t k = 0; k < l.nfiles; k++) {
            FLOE_CHECK(floe_strlist_push(out, l.files[k].manifest_path, err));
            floe_manifest_reader *r = NULL;
            FLOE_CHECK(floe_table_resolve_path(t, l.files[k].manifest_path, &uri, err));
            floe_manifest_read_options ro = {.manifest = &l.files[k],
                                             .allow_deletion_vectors = true};
            rc = floe_manifest_reader_open(floe_table_io(t), uri, &ro, &r, err);
            floe_free(uri);
            if (rc < 0)
                goto done;
            const floe_manifest_entry *e;
            while ((rc = floe_manifest_reader_next(r, &e, err)) == 1)
                if ((rc = floe_strlist_push(out, e->file.file_path, err)) < 0)
                    break;
            floe_manifest_reader_close(r);
            if (rc < 0)
                goto done;
        }
    }
    rc = 0;
done:
    floe_arena_reset(&arena);
    return rc;
}

static int cmp_strp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}


bool floe_table_metadata_gc_enabled(const floe_table_metadata *m) {
    const char *v = floe_table_metadata_property(m, FLOE_PROP_GC_ENABLED);
    return !v || !strcasecmp(v, "true");
}

int floe_table_gc_check(const floe_table *t, const floe_table_metadata *m, const char *action,
                        floe_error *err) {
    if (!m)
        m = t->metadata;
    if (floe_table_metadata_gc_enabled(m))
        return 0;
    const char *v = floe_table_metadata_property(m, FLOE_PROP_GC_ENABLED);
    return floe_error_set(err, FLOE_EINVALID,
                          "table %s%s%s: cannot %s: %s is %s (deleting files may corrupt other "
                          "tables)", t->ns ? t->ns : "", t->ns ? "." : "",
                          t->name ? t->name : t->root, action, FLOE_PROP_GC_ENABLED,
                          strcasecmp(v, "false") ? "not true" : "false");
}

int floe_table_purge(floe_table *t, size_t *deleted, floe_error *err) {
    floe_strlist files = {0};
    floe_table_confinement *conf = NULL;
    size_t n = 0;
    int rc = floe_table_gc_check(t, NULL, "purge its files", err);
    if (rc == 0)
        rc = referenced_files(t, &files, err);
    if (rc < 0)
        goto done;
    /* only what lies in the table's own folders: added files, and whatever else its
     * metadata names, stay (floe/table.h, "Confinement") */
    FLOE_CHECK(floe_table_confinement_open(t, &conf, err));
    if (files.n > 1)
        qsort(files.items, files.n, sizeof *files.items, cmp_strp);
    for (size_t i = 0; i < files.n; i++) {
        if (i && !strcmp(files.items[i], files.items[i - 1]))
            continue;
        char *p = NULL;
        floe_error e;
        floe_error_clear(&e);
        if (floe_table_resolve_path(t, files.items[i], &p, &e) < 0)
            floe_log(FLOE_LOG_WARN, "purge: %s: %s", files.items[i], e.msg);
        else if ((rc = floe_table_confinement_admit(conf, p, err)) == 0)
            ; /* reported below */
        else if (rc < 0)
            ; /* out of memory: stop */
        else if (floe_io_delete(floe_table_io(t), p, &e) == 0)
            n++;
        else
            floe_log(FLOE_LOG_WARN, "purge: %s: %s", files.items[i], e.msg);
        floe_free(p);
        if (rc < 0)
            goto done;
        rc = 0;
    }
    const char *report = floe_table_confinement_report(conf);
    if (report)
        floe_log(FLOE_LOG_WARN, "purge %s: %s", t->name ? t->name : t->root, report);
    if (deleted)
        *deleted = n;
done:
    floe_table_confinement_free(conf);
    floe_strlist_free(&files);
    return rc;
}

#define DROP_PURGE_TRIES 10

int floe_table_drop_purge(floe_catalog *c, const char *ns, const char *name, bool *dropped,
                          size_t *deleted, floe_error *err) {
    floe_table *t = NULL;
    int rc = 0;
    if (dropped)
        *dropped = false;
    for (int attempt = 0; attempt < DROP_PURGE_TRIES; attempt++) {
        floe_table_close(t);
        t = NULL;
        if ((rc = floe_table_load(c, ns, name, &t, err)) < 0)
            goto done;
        if ((rc = floe_table_gc_check(t, NULL, "purge its files", err)) < 0)
            goto done;
        /* nothing is deleted before this succeeds: a commit landing after the load wins
         * (FLOE_ECONFLICT), keeps its files reachable, and the next attempt reads it */
        rc = floe_catalog_drop_table_at(c, ns, name, t->pointer, err);
        if (rc != FLOE_ECONFLICT)
            break;
        floe_log(FLOE_LOG_INFO, "drop %s.%s: %s; reading the table again", ns, name, err->msg);
    }
    if (rc < 0)
        goto done;
    if (dropped)
        *dropped = true;
    rc = floe_table_purge(t, deleted, err);
done:
    floe_table_close(t);
    return rc;
}
