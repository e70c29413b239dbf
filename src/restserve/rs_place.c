/*
 * rs_place.c - where the REST catalog lets a caller put a table or a namespace.
 *
 * A token is granted namespaces and tables, but files are reached by location: a purge
 * deletes what lies under the table's location, vended keys are chosen by it, a register
 * reads the file it names. So every location a request gives is held to the identifier it
 * belongs to (docs/REST.md, "Locations"):
 *
 *  - the folder of namespace ns is its `location` property, else <warehouse>/<levels>
 *    (as floe_catalog_default_location places its tables);
 *  - a table's location (create, set-location, a staged create, the metadata a register
 *    names and its `location`) lies strictly inside its namespace's folder and outside
 *    the folder of every child namespace (<folder>/<child> and the child's own folder),
 *    and is absolute with no "." or ".." segment; the catalog's placement check
 *    (floe_table_check_location) then keeps it apart from every other table's;
 *  - a namespace's `location` property set through REST is its default folder
 *    <parent folder>/<level> (the warehouse for a top-level namespace) or lies inside it;
 *  - a table's write.data.path, write.folder-storage.path, write.object-storage.path and
 *    write.metadata.path (create, register, set-properties) lie inside its location: the
 *    table writes there, and its maintenance treats the folder as the table's.
 *
 *  - a namespace's folder (its location property, else its home) made or moved through
 *    REST does not lie inside the warehouse's folders of floe serve (_landing,
 *    _quarantine, _wal), neither lies inside nor holds another namespace's folder, but for an
 *    ancestor's, strictly around it, and a descendant's, strictly inside it; nor lies
 *    inside any table's location, nor holds the location of a table other than those of
 *    the namespace and the namespaces below it.
 *
 * Invariant (for what REST creates): a table's files lie under its namespace's folder and
 * under no other namespace's, so a grant on a namespace reaches no other namespace's files.
 * (The check reads every table of the catalog; a namespace created at the same moment as
 * a table by another request is not serialised with it.)
 */
#include <string.h>

#include "common/fold.h"
#include "floe/io.h"
#include "floe/table.h"
#include "rs_internal.h"

static const char *const TAIL = RS_LOCATIONS_TAIL;

/* A local location's limits: a folder name of at most NAME_MAX bytes (255 on Linux,
 * macOS and Windows' NTFS), and a path short enough that the files floe writes below it
 * (metadata/<version>-<uuid>.metadata.json, data/<partition>/<file>.parquet) stay within
 * PATH_MAX (4096 on Linux, 1024 on macOS: kept to the lesser, with room for those). */
#define LOCAL_NAME_MAX 255
#define LOCAL_LOCATION_MAX 768

/* 0 when location is absolute (a URI with a scheme, or a path from /) and has no "." or
 * ".." segment, which would make "inside a folder" a matter of spelling; and, when local,
 * within LOCAL_NAME_MAX and LOCAL_LOCATION_MAX (refused here rather than failing as a
 * server error once the first file is written). */
static int plain_location(const char *what, const char *location, floe_error *err) {
    const char *sep = strstr(location, "://");
    const char *path = sep ? sep + 3 : location;
    if (!sep && location[0] != '/')
        return floe_error_set(err, FLOE_EINVALID, "%s %s is not absolute (a URI or a path from /)%s",
                              what, location, TAIL);
    bool local = !sep || !strncmp(location, "file://", 7);
    if (local && strlen(path) > LOCAL_LOCATION_MAX)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s %.80s... is %zu bytes long: a local location may have at most "
                              "%d, so that the paths of the files below it stay within the "
                              "filesystem's limit (PATH_MAX)%s",
                              what, location, strlen(location), LOCAL_LOCATION_MAX, TAIL);
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return floe_error_set(err, FLOE_EINVALID, "%s %s has a '.' or '..' segment%s", what,
                                  location, TAIL);
        if (local && n > LOCAL_NAME_MAX)
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s: its folder name %.40s... is %zu bytes long: a "
                                  "filesystem allows at most %d (NAME_MAX)%s",
                                  what, p, n, LOCAL_NAME_MAX, TAIL);
        p += n;
        if (*p == '/')
            p++;
    }
    return 0;
}

/* The folder of namespace ns (caller frees): the folder floe_catalog_default_location puts
 * its tables in. */
static int namespace_folder(floe_catalog *cat, const char *ns, char **out, floe_error *err) {
    char *loc = NULL;
    FLOE_FORWARD_IF_ERROR(floe_catalog_default_location(cat, ns, "t", &loc, err));
    size_t n = strlen(loc);
    if (n >= 2 && !strcmp(loc + n - 2, "/t"))
        loc[n - 2] = '\0';
    *out = loc;
    return 0;
}

int rs_table_location_check(floe_catalog *cat, const char *ns, const char *name,
                            const char *location, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(plain_location("table location", location, err));
    char *folder = NULL;
    floe_strlist children = {0};
    int rc = namespace_folder(cat, ns, &folder, err);
    if (rc < 0)
        return rc;
    if (!floe_io_uri_within(location, folder) || floe_io_uri_within(folder, location)) {
        rc = floe_error_set(err, FLOE_EINVALID,
                            "table %s.%s: location %s is not inside the folder of namespace %s "
                            "(%s)%s",
                            ns, name, location, ns, folder, TAIL);
        goto done;
    }
    rc = floe_catalog_list_namespaces(cat, ns, &children, err);
    for (size_t i = 0; rc == 0 && i < children.n; i++) {
        const char *child = children.items[i];
        const char *level = strrchr(child, '.');
        level = level ? level + 1 : child;
        char *by_name = NULL, *own = NULL, *fname = NULL;
        rc = floe_catalog_folder_name(cat, level, strlen(level), &fname, err);
        if (rc == 0 && !(by_name = floe_io_join(folder, fname)))
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(fname);
        if (rc == 0)
            rc = namespace_folder(cat, child, &own, err);
        if (rc == 0 && (floe_io_uri_within(location, by_name) || floe_io_uri_within(location, own)))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "table %s.%s: location %s lies inside the folder of namespace %s%s",
                                ns, name, location, child, TAIL);
        floe_free(by_name);
        floe_free(own);
    }
done:
    floe_strlist_free(&children);
    floe_free(folder);
    return rc;
}

/* Namespace ns's home (caller frees): <parent's folder>/<level>, <warehouse>/<ns> at the
 * top - where its folder is, or the folder its location property must lie in. */
static int namespace_home(floe_catalog *cat, const char *ns, char **out, floe_error *err) {
    const char *dot = strrchr(ns, '.');
    if (!dot) {
        char *fname = NULL;
        FLOE_FORWARD_IF_ERROR(floe_catalog_folder_name(cat, ns, strlen(ns), &fname, err));
        *out = floe_io_join(floe_catalog_warehouse(cat), fname);
        floe_free(fname);
        return *out ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    char *parent = floe_strndup(ns, (size_t)(dot - ns));
    if (!parent)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_catalog_default_location(cat, parent, dot + 1, out, err);
    floe_free(parent);
    return rc;
}

int rs_namespace_location_check(floe_catalog *cat, const char *ns, const char *location,
                                floe_error *err) {
    FLOE_FORWARD_IF_ERROR(plain_location("namespace location", location, err));
    char *home = NULL;
    int rc = namespace_home(cat, ns, &home, err);
    if (rc == 0 && !floe_io_uri_within(location, home))
        rc = floe_error_set(err, FLOE_EINVALID,
                            "namespace %s: location %s is not its folder %s or inside it%s", ns,
                            location, home, TAIL);
    floe_free(home);
    return rc;
}

/* True when namespace ns is anc or lies below it. */
static bool at_or_below(const char *ns, const char *anc) {
    size_t n = strlen(anc);
    return !strncmp(ns, anc, n) && (ns[n] == '\0' || ns[n] == '.');
}

/* Every namespace of the catalog below parent (NULL: all), depth-first, into out. */
static int all_namespaces(floe_catalog *cat, const char *parent, floe_strlist *out, int depth,
                          floe_error *err) {
    if (depth > 64)
        return 0;
    floe_strlist nss = {0};
    int rc = floe_catalog_list_namespaces(cat, parent, &nss, err);
    for (size_t i = 0; rc == 0 && i < nss.n; i++) {
        rc = floe_strlist_push(out, nss.items[i], err);
        if (rc == 0)
            rc = all_namespaces(cat, nss.items[i], out, depth + 1, err);
    }
    floe_strlist_free(&nss);
    return rc;
}

int rs_namespace_place_check(floe_catalog *cat, const char *ns, const char *location,
                             floe_error *err) {
    char *folder = NULL;
    floe_strlist nss = {0};
    floe_table_place *ps = NULL;
    size_t np = 0;
    int rc = location ? ((folder = floe_strdup(location)) ? 0
                                                          : floe_error_set(err, FLOE_ENOMEM,
                                                                           "out of memory"))
                      : namespace_home(cat, ns, &folder, err);
    /* the warehouse's folders of floe serve: a namespace there would mix its tables'
     * files with landing batches and logs that floe serve deletes */
    if (rc == 0) {
        char *dir = NULL;
        const char *what = NULL;
        int in = floe_table_reserved_folder(cat, folder, &dir, &what);
        if (in < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        else if (in > 0)
            rc = floe_error_set(err, FLOE_EINVALID,
                                "namespace %s: its folder %s lies inside %s (%s), which floe "
                                "keeps for itself: choose another name or give the namespace "
                                "a location property%s",
                                ns, folder, what, dir, TAIL);
        floe_free(dir);
    }
    bool local = rc == 0 && !floe_io_uri_has_remote_scheme(folder);
    char *folded = NULL;
    if (local && (rc = floe_fold_name(folder, &folded, err)) < 0)
        floe_error_prefix(err, "namespace %s: ", ns);
    if (rc == 0)
        rc = all_namespaces(cat, NULL, &nss, 0, err);
    /* another namespace's folder: apart; an ancestor's strictly around it, a
     * descendant's strictly inside it */
    for (size_t i = 0; rc == 0 && i < nss.n; i++) {
        const char *m = nss.items[i];
        if (!strcmp(m, ns))
            continue;
        bool above = at_or_below(ns, m), below = at_or_below(m, ns);
        char *g = NULL;
        rc = namespace_folder(cat, m, &g, err);
        if (rc == 0 && ((!below && floe_io_uri_within(g, folder)) ||
                        (!above && floe_io_uri_within(folder, g))))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "namespace %s: its folder %s overlaps the folder of namespace "
                                "%s (%s): a grant on one would reach the other's files%s",
                                ns, folder, m, g, TAIL);
        /* the same where a case-insensitive filesystem (macOS, Windows) sees it */
        char *fg = NULL;
        if (rc == 0 && local && !floe_io_uri_has_remote_scheme(g))
            rc = floe_fold_name(g, &fg, err);
        if (rc == 0 && fg && ((!below && floe_io_uri_within(fg, folded)) ||
                   (!above && floe_io_uri_within(folded, fg))))
            rc = floe_error_set(err, FLOE_EEXISTS,
                                "namespace %s: its folder %s differs only by case or Unicode "
                                "normalization from the folder of namespace %s (%s): on a "
                                "case-insensitive filesystem (macOS, Windows) one lies in or "
                                "is the other%s",
                                ns, folder, m, g, TAIL);
        floe_free(fg);
        floe_free(g);
    }
    /* a table's location: never around the folder, and inside it only for the tables of
     * ns and the namespaces below it */
    if (rc == 0)
        rc = floe_catalog_table_places(cat, &ps, &np, err);
    for (size_t i = 0; rc == 0 && i < np; i++) {
        const floe_table_place *p = &ps[i];
        if (floe_io_uri_within(folder, p->location))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "namespace %s: its folder %s lies inside the location of table "
                                "%s.%s (%s); give the namespace a location property of its "
                                "own%s",
                                ns, folder, p->ns, p->name, p->location, TAIL);
        else if (floe_io_uri_within(p->location, folder) && !at_or_below(p->ns, ns))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "namespace %s: its folder %s holds the location of table %s.%s "
                                "(%s)%s",
                                ns, folder, p->ns, p->name, p->location, TAIL);
    }
    floe_table_places_free(ps, np);
    floe_strlist_free(&nss);
    floe_free(folded);
    floe_free(folder);
    return rc;
}

int rs_write_path_check(const char *prop, const char *value, const char *location,
                        floe_error *err) {
    bool write_path = false;
    for (size_t i = 0; i < FLOE_TABLE_WRITE_PATHS; i++)
        write_path |= !strcmp(prop, floe_table_write_path_props[i]);
    if (!write_path || !value)
        return 0;
    if (floe_io_uri_is_relative(value) || !floe_io_uri_within(value, location))
        return floe_error_set(err, FLOE_EINVALID,
                              "property %s = %s lies outside the table's location %s: a table "
                              "writes only inside its own location%s",
                              prop, value, location, TAIL);
    return 0;
}
