/*
 * fs_catalog.c - the filesystem (Hadoop) catalog: a folder per namespace level, a folder
 * per table, metadata files named v<N>.metadata.json (v<N>.gz.metadata.json when gzip)
 * and metadata/version-hint.text holding N.
 *
 * Spec: format/spec.md "File System Tables". The commit is the atomic create-if-absent
 * of v<N+1> (link(2) of a fully written temporary file, src/io/local.c): whoever creates
 * it first wins, everybody else gets FLOE_EEXISTS, i.e. a conflict. The hint is only a
 * hint: it is rewritten after each commit (best effort; a crash or a slow writer can leave
 * it behind), so loading starts at the hint and walks forward while v<N+1> exists.
 *
 * What is a table: a folder whose metadata/ holds a version hint or v<N> metadata files.
 * Every other folder under the warehouse is a namespace. The store is local only.
 *
 * A drop on the condition of the pointer (fs_drop_table_at, a purge's) claims v<N+1>
 * with an empty file before removing anything: a commit links a fully written file, so
 * no version is ever empty but a claim, and a table whose current version is a claim is
 * dropped (not found). The claims stay, as tombstones: no commit that read a version of
 * the dropped table can ever create the version after it, and a later create of the name
 * starts past them (fs_new_metadata_location). A folder whose current version is a claim
 * is neither a table nor a namespace (dir_kind_of).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "floe/io.h"

#define HINT_NAME "version-hint.text"
#define HINT_MAX 4096
/* Walking forward from a stale hint: far more than any realistic lag. */
#define FORWARD_PROBE_MAX 100000

static bool is_dir(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Local folder of a namespace (ns NULL = the warehouse). Caller frees. */
static char *ns_local(floe_catalog *c, const char *ns) {
    char *root = floe_io_local_path(c->warehouse);
    if (!root || !ns)
        return root;
    char *nsp = floe_catalog_ns_path(ns);
    char *dir = nsp ? floe_io_join(root, nsp) : NULL;
    floe_free(root);
    floe_free(nsp);
    return dir;
}

static char *table_local(floe_catalog *c, const char *ns, const char *name) {
    char *dir = ns_local(c, ns);
    char *t = dir ? floe_io_join(dir, name) : NULL;
    floe_free(dir);
    return t;
}

/* Path of v<N> in metadata_dir, whichever of plain / gzip exists; NULL when neither. */
static char *version_file(const char *metadata_dir, int64_t v) {
    char name[64];
    snprintf(name, sizeof name, "v%" PRId64 ".metadata.json", v);
    char *p = floe_io_join(metadata_dir, name);
    if (is_file(p))
        return p;
    floe_free(p);
    snprintf(name, sizeof name, "v%" PRId64 ".gz.metadata.json", v);
    p = floe_io_join(metadata_dir, name);
    if (is_file(p))
        return p;
    floe_free(p);
    return NULL;
}

/* Highest v<N> among the files in metadata_dir; -1 when there is none. */
static int64_t highest_listed(const char *metadata_dir) {
    DIR *d = opendir(metadata_dir);
    if (!d)
        return -1;
    int64_t best = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int64_t v;
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == 'v' && n > 14 && !strcmp(de->d_name + n - 14, ".metadata.json") &&
            floe_metadata_file_version(de->d_name, &v) && v > best)
            best = v;
    }
    closedir(d);
    return best;
}

/* The current version of the table whose metadata folder is metadata_dir: from the hint,
 * walked forward; else from a listing. *path gets the local file. FLOE_ENOTFOUND when the
 * folder holds no v<N> file. */
static int current_version(const char *metadata_dir, int64_t *version, char **path,
                           floe_error *err) {
    int64_t v = -1;
    char *hint = floe_io_join(metadata_dir, HINT_NAME);
    if (!hint)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    FILE *f = fopen(hint, "r");
    if (f) {
        char buf[64];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *end;
        errno = 0;
        long long x = strtoll(buf, &end, 10);
        while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')
            end++;
        if (!errno && end != buf && !*end && x >= 0)
            v = x;
    }
    floe_free(hint);
    char *file = v >= 0 ? version_file(metadata_dir, v) : NULL;
    if (!file) { /* no hint, a bad one, or one naming a missing file: list */
        v = highest_listed(metadata_dir);
        file = v >= 0 ? version_file(metadata_dir, v) : NULL;
        if (!file)
            return floe_error_set(err, FLOE_ENOTFOUND, "%s: no v<N>.metadata.json file",
                                  metadata_dir);
    }
    for (int i = 0; i < FORWARD_PROBE_MAX; i++) {
        char *next = version_file(metadata_dir, v + 1);
        if (!next)
            break;
        floe_free(file);
        file = next;
        v++;
    }
    *version = v;
    *path = file;
    return 0;
}

/* An empty v<N> file: a drop's claim (fs_drop_table_at), never a commit's. */
static bool is_drop_claim(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* What a folder under a namespace's is: a table (its metadata/ holds a version hint or
 * v<N> files), a dropped table (its current version is a drop's claim: neither a table
 * nor a namespace, so neither listed nor created over as a namespace), or a namespace. */
typedef enum { DIR_NAMESPACE, DIR_TABLE, DIR_DROPPED } dir_kind;

static dir_kind dir_kind_of(const char *dir) {
    char *md = floe_io_join(dir, "metadata");
    dir_kind k = DIR_NAMESPACE;
    if (md && is_dir(md)) {
        char *hint = floe_io_join(md, HINT_NAME);
        if (is_file(hint) || highest_listed(md) >= 0) {
            int64_t v;
            char *file = NULL;
            floe_error e;
            floe_error_clear(&e);
            k = current_version(md, &v, &file, &e) == 0 && is_drop_claim(file) ? DIR_DROPPED
                                                                                 : DIR_TABLE;
            floe_free(file);
        }
        floe_free(hint);
    }
    floe_free(md);
    return k;
}

/* Sub-folders of dir that are (want_tables) or are not tables, as names. */
static int list_children(const char *dir, bool want_tables, floe_strlist *out, floe_error *err) {
    DIR *d = opendir(dir);
    if (!d)
        return floe_error_errno(err, errno, "list %s", dir);
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && rc == 0) {
        if (de->d_name[0] == '.' || strchr(de->d_name, '.') /* '.' separates levels */)
            continue;
        char *p = floe_io_join(dir, de->d_name);
        if (!p) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
        dir_kind k = is_dir(p) ? dir_kind_of(p) : DIR_DROPPED;
        if (k != DIR_DROPPED && (k == DIR_TABLE) == want_tables)
            rc = floe_strlist_push(out, de->d_name, err);
        floe_free(p);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int fs_namespace_exists(floe_catalog *c, const char *ns, bool *exists, floe_error *err) {
    char *dir = ns_local(c, ns);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *exists = is_dir(dir) && dir_kind_of(dir) == DIR_NAMESPACE;
    floe_free(dir);
    return 0;
}

static int require_ns(floe_catalog *c, const char *ns, floe_error *err) {
    bool exists;
    FLOE_FORWARD_IF_ERROR(fs_namespace_exists(c, ns, &exists, err));
    if (!exists)
        return floe_error_set(err, FLOE_ENOTFOUND, "namespace %s does not exist", ns);
    return 0;
}

static int fs_list_namespaces(floe_catalog *c, const char *parent, floe_strlist *out,
                              floe_error *err) {
    if (parent)
        FLOE_FORWARD_IF_ERROR(require_ns(c, parent, err));
    char *dir = ns_local(c, parent);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_strlist names = {0};
    int rc = list_children(dir, false, &names, err);
    floe_free(dir);
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char *full = parent ? floe_asprintf("%s.%s", parent, names.items[i]) : NULL;
        if (parent && !full)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        else
            rc = floe_strlist_push(out, parent ? full : names.items[i], err);
        floe_free(full);
    }
    floe_strlist_free(&names);
    if (rc == 0 && out->n > 1)
        qsort(out->items, out->n, sizeof *out->items, cmp_str);
    return rc;
}

static int fs_create_namespace(floe_catalog *c, const char *ns, const char *const *keys,
                               const char *const *values, size_t n, floe_error *err) {
    (void)keys;
    (void)values;
    if (n > 0)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "the filesystem catalog cannot store namespace properties");
    char *dir = ns_local(c, ns);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    if (is_dir(dir))
        rc = floe_error_set(err, FLOE_EEXISTS, "namespace %s already exists", ns);
    else
        rc = floe_io_mkdirs(c->io, dir, err);
    floe_free(dir);
    return rc;
}

static int fs_drop_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(require_ns(c, ns, err));
    char *dir = ns_local(c, ns);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    if (rmdir(dir) != 0)
        rc = errno == ENOTEMPTY || errno == EEXIST
                 ? floe_error_set(err, FLOE_EINVALID, "namespace %s is not empty", ns)
                 : floe_error_errno(err, errno, "remove %s", dir);
    floe_free(dir);
    return rc;
}

static int fs_load_namespace_properties(floe_catalog *c, const char *ns, floe_strlist *keys,
                                        floe_strlist *values, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(require_ns(c, ns, err));
    char *dir = ns_local(c, ns);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_strlist_push(keys, "location", err);
    if (rc == 0)
        rc = floe_strlist_push(values, dir, err);
    floe_free(dir);
    return rc;
}

static int fs_update_namespace_properties(floe_catalog *c, const char *ns,
                                          const char *const *removals, size_t nrem,
                                          const char *const *keys, const char *const *values,
                                          size_t n, floe_error *err) {
    (void)c;
    (void)removals;
    (void)nrem;
    (void)keys;
    (void)values;
    (void)n;
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "namespace %s: the filesystem catalog cannot store namespace "
                          "properties",
                          ns);
}

static int fs_list_tables(floe_catalog *c, const char *ns, floe_strlist *names,
                          floe_error *err) {
    FLOE_FORWARD_IF_ERROR(require_ns(c, ns, err));
    char *dir = ns_local(c, ns);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = list_children(dir, true, names, err);
    floe_free(dir);
    if (rc == 0 && names->n > 1)
        qsort(names->items, names->n, sizeof *names->items, cmp_str);
    return rc;
}

/* The table's metadata folder as a uri built on the warehouse as configured. */
static char *metadata_uri(floe_catalog *c, const char *ns, const char *name) {
    char *loc = NULL;
    if (floe_catalog_default_location(c, ns, name, &loc, NULL) < 0)
        return NULL;
    char *md = floe_io_join(loc, "metadata");
    floe_free(loc);
    return md;
}

static int fs_load_table(floe_catalog *c, const char *ns, const char *name, char **location,
                         floe_error *err) {
    char *tdir = table_local(c, ns, name);
    char *md = tdir ? floe_io_join(tdir, "metadata") : NULL;
    char *md_uri = metadata_uri(c, ns, name);
    char *file = NULL;
    int rc = 0;
    int64_t v;
    if (!tdir || !md || !md_uri)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!is_dir(md))
        FLOE_FAIL(err, FLOE_ENOTFOUND, "table %s.%s does not exist in %s", ns, name,
                  c->warehouse);
    rc = current_version(md, &v, &file, err);
    if (rc == FLOE_ENOTFOUND)
        FLOE_FAIL(err, FLOE_ENOTFOUND, "table %s.%s does not exist in %s", ns, name,
                  c->warehouse);
    if (rc < 0)
        goto done;
    if (is_drop_claim(file))
        FLOE_FAIL(err, FLOE_ENOTFOUND, "table %s.%s does not exist in %s (it was dropped)",
                  ns, name, c->warehouse);
    const char *base = strrchr(file, '/');
    char *uri = floe_io_join(md_uri, base ? base + 1 : file);
    if (!uri)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *location = uri;
done:
    floe_free(tdir);
    floe_free(md);
    floe_free(md_uri);
    floe_free(file);
    return rc;
}

/* Before a create writes v1 into metadata_dir (<namespace folder>/<name>/metadata): make
 * the table's folder here, with mkdir(2) alone. The write would make every missing folder
 * (mkdir -p), the namespace's too: a namespace dropped (rmdir) after the create found it
 * would come back with the table in it, while the drop had answered that it was gone.
 * Made here, the two meet at the namespace folder: the mkdir first, and the drop's rmdir
 * finds the folder not empty; the rmdir first, and the mkdir fails (ENOENT, the
 * namespace does not exist). */
static int make_table_dir(const char *metadata_dir, floe_error *err) {
    char *md = floe_io_local_path(metadata_dir);
    char *slash = md ? strrchr(md, '/') : NULL;
    if (!md)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    if (slash && slash != md) {
        *slash = '\0';
        if (mkdir(md, 0777) != 0 && errno != EEXIST) {
            if (errno == ENOENT) {
                char *ns_dir = strrchr(md, '/');
                if (ns_dir)
                    *ns_dir = '\0';
                rc = floe_error_set(err, FLOE_ENOTFOUND,
                                    "namespace folder %s does not exist (the namespace was "
                                    "dropped)", md);
            } else {
                rc = floe_error_errno(err, errno, "create %s", md);
            }
        }
    }
    floe_free(md);
    return rc;
}

/* The version a create writes first into metadata_dir (a uri): 1 in an empty folder;
 * past the claims of a dropped table of the same name (they stay: a commit that read the
 * dropped table must never create its next version); FLOE_EEXISTS when a table is there.
 * Two creates racing past the same claims meet at the create-if-absent of one name. */
static int first_version(const char *metadata_dir, int64_t *first, floe_error *err) {
    char *local = floe_io_local_path(metadata_dir);
    if (!local)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int64_t cur = 0;
    char *file = NULL;
    int rc = current_version(local, &cur, &file, err);
    if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(err);
        *first = 1;
        rc = 0;
    } else if (rc == 0 && is_drop_claim(file)) {
        *first = cur + 1;
    } else if (rc == 0) {
        rc = floe_error_set(err, FLOE_EEXISTS, "%s: a table is there already (v%" PRId64 ")",
                            local, cur);
    }
    floe_free(file);
    floe_free(local);
    return rc;
}

static int fs_new_metadata_location(floe_catalog *c, const char *metadata_dir,
                                    const char *base, bool gzip, char **out, floe_error *err) {
    int64_t v = 0;
    const char *slash = base ? strrchr(base, '/') : NULL;
    if (base && (!slash || !floe_metadata_file_version(slash + 1, &v) || slash[1] != 'v'))
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: not a v<N>.metadata.json name; the filesystem catalog "
                              "cannot number the next version",
                              base);
    if (!base) {
        FLOE_FORWARD_IF_ERROR(make_table_dir(metadata_dir, err));
        FLOE_FORWARD_IF_ERROR(first_version(metadata_dir, &v, err));
    }
    char name[64];
    snprintf(name, sizeof name, "v%" PRId64 "%s.metadata.json", base ? v + 1 : v,
             gzip ? ".gz" : "");
    /* the next version sits beside the current one, wherever the metadata says files go */
    char *md = base ? floe_strndup(base, (size_t)(slash - base)) : floe_strdup(metadata_dir);
    if (base && md) {
        /* The create-if-absent of v<N+1> is a compare-and-swap only while v<N+1> cannot
         * have existed and gone: once old versions are deleted (write.metadata.delete-
         * after-commit.enabled, expiry), a writer still on a base that far behind would
         * create a deleted version anew, and loading - which walks forward from the
         * hint - could stop there and lose every later commit. So a base that is no
         * longer the current version is a conflict here, before anything is written.
         * What is left open is the time between this look and the create, in which the
         * table would have to move on by more than write.metadata.previous-versions-max
         * versions. */
        char *local = floe_io_local_path(md);
        int64_t cur = -1;
        char *cur_file = NULL;
        floe_error e2;
        floe_error_clear(&e2);
        int crc = local ? current_version(local, &cur, &cur_file, &e2) : FLOE_ENOMEM;
        floe_free(local);
        floe_free(cur_file);
        if (crc == FLOE_ENOTFOUND) {
            /* no version left beside the base: the table was dropped since (a create of
             * v<N+1> now would bring back a table whose older files a purge deleted) */
            floe_free(md);
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "%s: the table has no metadata any more (dropped)", base);
        }
        if (crc == 0 && cur != v) {
            floe_free(md);
            return floe_error_set(err, FLOE_ECONFLICT,
                                  "%s: the table is at v%" PRId64 " now: another commit won",
                                  base, cur);
        }
        /* tests only (floe_catalog_config.test_commit_pause_ms): the commit waits between
         * this look and its create of v<N+1>, the window a drop at v<N> races
         * (tests/integration/rest_purge_race.sh) */
        if (c->test_commit_pause_ms > 0 && c->test_commit_pause_ms <= 10000)
            usleep((useconds_t)c->test_commit_pause_ms * 1000);
    }
    char *loc = md ? floe_io_join(md, name) : NULL;
    floe_free(md);
    if (!loc)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = loc;
    return 0;
}

/* Best effort: the hint only speeds up loading. */
static void write_hint(floe_io *io, const char *metadata_location) {
    int64_t v;
    const char *slash = strrchr(metadata_location, '/');
    if (!slash || !floe_metadata_file_version(slash + 1, &v))
        return;
    char *dir = floe_strndup(metadata_location, (size_t)(slash - metadata_location));
    char *hint = dir ? floe_io_join(dir, HINT_NAME) : NULL;
    char text[32];
    int n = snprintf(text, sizeof text, "%" PRId64, v);
    floe_error err;
    floe_error_clear(&err);
    floe_output_options opts = {.fsync = true, .no_overwrite = false};
    if (hint && floe_io_write_all(io, hint, text, (size_t)n, &opts, &err) < 0)
        floe_log(FLOE_LOG_WARN, "version hint not updated (harmless): %s", err.msg);
    floe_free(dir);
    floe_free(hint);
}

/* The location must be the v<N> file of this table's own metadata folder. */
static int check_own_file(floe_catalog *c, const char *ns, const char *name,
                          const char *metadata_location, floe_error *err) {
    char *md_uri = metadata_uri(c, ns, name);
    if (!md_uri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t n = strlen(md_uri);
    int64_t v;
    int rc = 0;
    if (strncmp(metadata_location, md_uri, n) || metadata_location[n] != '/' ||
        strchr(metadata_location + n + 1, '/') ||
        !floe_metadata_file_version(metadata_location + n + 1, &v) ||
        metadata_location[n + 1] != 'v')
        rc = floe_error_set(err, FLOE_EINVALID,
                            "%s: the filesystem catalog keeps table %s.%s's metadata as "
                            "%s/v<N>.metadata.json",
                            metadata_location, ns, name, md_uri);
    floe_free(md_uri);
    return rc;
}

static int fs_register_table(floe_catalog *c, const char *ns, const char *name,
                             const char *metadata_location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(require_ns(c, ns, err));
    FLOE_FORWARD_IF_ERROR(check_own_file(c, ns, name, metadata_location, err));
    bool exists = false;
    FLOE_FORWARD_IF_ERROR(floe_io_exists(c->io, metadata_location, &exists, err));
    if (!exists)
        return floe_error_set(err, FLOE_ENOTFOUND, "%s does not exist", metadata_location);
    write_hint(c->io, metadata_location);
    return 0;
}

static int fs_rename_table(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                           const char *to_name, floe_error *err) {
    (void)c;
    (void)to_ns;
    (void)to_name;
    /* The metadata records the table's location; moving the folder would leave every
     * path in it pointing at the old place. */
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "table %s.%s: the filesystem catalog cannot rename tables", ns, name);
}

/* Remove a table's metadata folder's hint, then its v<N> files. upto >= 0 (a drop at a
 * version, whose claims of v<upto+1> are made): only the files of versions up to upto,
 * and never a claim (an empty file: this drop's, or an earlier one's, stays as a
 * tombstone); the versions past upto are a table created since, past the claims. upto
 * < 0: every v<N> file. */
static int remove_versions(floe_catalog *c, const char *md, int64_t upto, floe_error *err) {
    /* The hint first: once it is gone and the v<N> files follow, the folder stops being
     * a table even if we are interrupted half-way. */
    char *hint = floe_io_join(md, HINT_NAME);
    if (!hint)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_io_delete(c->io, hint, err);
    floe_free(hint);
    if (rc < 0)
        return rc;
    DIR *d = opendir(md);
    if (!d)
        return floe_error_set(err, FLOE_EIO, "list %s: %s", md, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) != NULL && rc == 0) {
        int64_t v;
        size_t n = strlen(de->d_name);
        if (de->d_name[0] != 'v' || n <= 14 || strcmp(de->d_name + n - 14, ".metadata.json") ||
            !floe_metadata_file_version(de->d_name, &v) || (upto >= 0 && v > upto))
            continue;
        char *p = floe_io_join(md, de->d_name);
        if (!p)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        else if (upto < 0 || !is_drop_claim(p))
            rc = floe_io_delete(c->io, p, err);
        floe_free(p);
    }
    closedir(d);
    return rc;
}

static int fs_drop_table(floe_catalog *c, const char *ns, const char *name, floe_error *err) {
    char *tdir = table_local(c, ns, name);
    char *md = tdir ? floe_io_join(tdir, "metadata") : NULL;
    int rc = 0;
    if (!md)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (dir_kind_of(tdir) != DIR_TABLE) /* a dropped table's claims stay (fs_drop_table_at) */
        FLOE_FAIL(err, FLOE_ENOTFOUND, "table %s.%s does not exist", ns, name);
    rc = remove_versions(c, md, -1, err);
done:
    floe_free(tdir);
    floe_free(md);
    return rc;
}

/* A commit here is the create of v<N+1>, so the drop takes part in the same race: it
 * creates v<N+1> itself, empty (a claim; both spellings, plain and gzip, as a commit may
 * write either), and removes the table only once those creates won. From then on a
 * commit on v<N> finds v<N+1> taken (a conflict) and a load finds the table dropped (not
 * found). The claims are never removed (they are tombstones): a commit that looked at
 * v<N> before the claim (fs_new_metadata_location) and creates v<N+1> after the drop
 * still finds it taken, however late it comes, and cannot bring the table back with the
 * files a purge deleted. A later create of the name starts past them (first_version).
 * An interrupted drop leaves the claims and some version files: the name reads as not
 * found and can be created again; the files left are removed by hand. */
static int fs_drop_table_at(floe_catalog *c, const char *ns, const char *name,
                            const char *expected, floe_error *err) {
    char *tdir = table_local(c, ns, name);
    char *md = tdir ? floe_io_join(tdir, "metadata") : NULL;
    char *cur = NULL;
    char names[2][64];
    size_t made = 0;
    int64_t v = 0;
    int rc = 0;
    if (!md)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if ((rc = fs_load_table(c, ns, name, &cur, err)) < 0)
        goto done;
    const char *slash = strrchr(cur, '/');
    if (strcmp(cur, expected) || !slash || !floe_metadata_file_version(slash + 1, &v))
        FLOE_FAIL(err, FLOE_ECONFLICT, "table %s.%s: metadata is no longer %s but %s (a "
                  "commit landed); not dropped", ns, name, expected, cur);
    snprintf(names[0], sizeof names[0], "v%" PRId64 ".metadata.json", v + 1);
    snprintf(names[1], sizeof names[1], "v%" PRId64 ".gz.metadata.json", v + 1);
    floe_output_options oo = {.fsync = true, .no_overwrite = true};
    for (; made < 2; made++) {
        char *p = floe_io_join(md, names[made]);
        rc = p ? floe_io_write_all(c->io, p, "", 0, &oo, err)
               : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(p);
        if (rc == FLOE_EEXISTS)
            rc = floe_error_set(err, FLOE_ECONFLICT, "table %s.%s: v%" PRId64 " was committed "
                                "after %s; not dropped", ns, name, v + 1, expected);
        if (rc < 0)
            break;
    }
    if (rc == 0) {
        rc = remove_versions(c, md, v, err);
    } else {
        /* a commit of v<N+1> came first (or the claim failed): the table stands */
        for (size_t i = 0; i < made; i++) {
            char *p = floe_io_join(md, names[i]);
            floe_error e2;
            floe_error_clear(&e2);
            if (!p || floe_io_delete(c->io, p, &e2) < 0)
                floe_log(FLOE_LOG_WARN, "table %s.%s: drop claim %s not removed: %s", ns,
                         name, names[i], p ? e2.msg : "out of memory");
            floe_free(p);
        }
    }
done:
    floe_free(tdir);
    floe_free(md);
    floe_free(cur);
    return rc;
}

static int fs_swap(floe_catalog *c, const char *ns, const char *name, const char *expected,
                   const char *new_location, floe_error *err) {
    (void)expected;
    FLOE_FORWARD_IF_ERROR(check_own_file(c, ns, name, new_location, err));
    bool exists = false;
    FLOE_FORWARD_IF_ERROR(floe_io_exists(c->io, new_location, &exists, err));
    if (!exists)
        return floe_error_set(err, FLOE_EINTERNAL,
                              "%s: the filesystem catalog swaps by creating this file, and it "
                              "is not there",
                              new_location);
    write_hint(c->io, new_location);
    return 0;
}

/* The warehouse's storage answers (the folder itself may not exist yet). */
static int fs_ping(floe_catalog *c, floe_error *err) {
    bool exists = false;
    return floe_io_exists(c->io, c->warehouse, &exists, err);
}

static const floe_catalog_ops fs_ops = {
    .type = "filesystem",
    .ping = fs_ping,
    .swap_by_create = true,
    .swap_outcome_final = true,
    .list_namespaces = fs_list_namespaces,
    .namespace_exists = fs_namespace_exists,
    .create_namespace = fs_create_namespace,
    .drop_namespace = fs_drop_namespace,
    .load_namespace_properties = fs_load_namespace_properties,
    .update_namespace_properties = fs_update_namespace_properties,
    .list_tables = fs_list_tables,
    .load_table = fs_load_table,
    .new_metadata_location = fs_new_metadata_location,
    .register_table = fs_register_table,
    .rename_table = fs_rename_table,
    .drop_table = fs_drop_table,
    .drop_table_at = fs_drop_table_at,
    .swap = fs_swap,
    .close = NULL,
};

int floe_catalog_open_fs(floe_io *io, const char *warehouse, floe_catalog **out, floe_error *err) {
    if (!warehouse || !*warehouse)
        return floe_error_set(err, FLOE_EINVALID, "filesystem catalog: no warehouse folder");
    char *local = floe_io_local_path(warehouse);
    if (!local)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "%s: the filesystem catalog works on local folders only "
                              "(object stores have no atomic create-if-absent rename)",
                              warehouse);
    int rc = floe_io_mkdirs(io, local, err);
    char *leases = rc == 0 ? floe_io_join(local, "_leases.db") : NULL;
    floe_free(local);
    if (rc < 0)
        return rc;
    if (!leases)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_catalog *c = NULL;
    rc = floe_catalog_alloc(&fs_ops, "filesystem", warehouse, &c, err);
    if (rc == 0)
        c->io = io ? io : floe_io_default();
    if (rc == 0 && (rc = floe_catalog_set_lease_db(c, leases, err)) < 0)
        floe_catalog_close(c);
    floe_free(leases);
    if (rc == 0)
        *out = c;
    return rc;
}
