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
 * Invariant (for what REST creates): a table's files lie under its namespace's folder and
 * under no other namespace's, so a grant on a namespace reaches no other namespace's files.
 */
#include <string.h>

#include "floe/io.h"
#include "rs_internal.h"

static const char *const TAIL = RS_LOCATIONS_TAIL;

/* 0 when location is absolute (a URI with a scheme, or a path from /) and has no "." or
 * ".." segment, which would make "inside a folder" a matter of spelling. */
static int plain_location(const char *what, const char *location, floe_error *err) {
    const char *sep = strstr(location, "://");
    const char *path = sep ? sep + 3 : location;
    if (!sep && location[0] != '/')
        return floe_error_set(err, FLOE_EINVALID, "%s %s is not absolute (a URI or a path from /)%s",
                              what, location, TAIL);
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return floe_error_set(err, FLOE_EINVALID, "%s %s has a '.' or '..' segment%s", what,
                                  location, TAIL);
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
        char *by_name = floe_io_join(folder, level ? level + 1 : child), *own = NULL;
        if (!by_name) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
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

int rs_namespace_location_check(floe_catalog *cat, const char *ns, const char *location,
                                floe_error *err) {
    FLOE_FORWARD_IF_ERROR(plain_location("namespace location", location, err));
    const char *dot = strrchr(ns, '.');
    char *parent = NULL, *home = NULL;
    int rc = 0;
    if (dot) {
        if (!(parent = floe_strndup(ns, (size_t)(dot - ns))))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        rc = floe_catalog_default_location(cat, parent, dot + 1, &home, err);
    } else if (!(home = floe_io_join(floe_catalog_warehouse(cat), ns))) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    if (rc == 0 && !floe_io_uri_within(location, home))
        rc = floe_error_set(err, FLOE_EINVALID,
                            "namespace %s: location %s is not its folder %s or inside it%s", ns,
                            location, home, TAIL);
    floe_free(parent);
    floe_free(home);
    return rc;
}

static const char *const WRITE_PATHS[] = {"write.data.path", "write.folder-storage.path",
                                          "write.object-storage.path", "write.metadata.path"};

int rs_write_path_check(const char *prop, const char *value, const char *location,
                        floe_error *err) {
    bool write_path = false;
    for (size_t i = 0; i < sizeof WRITE_PATHS / sizeof WRITE_PATHS[0]; i++)
        write_path |= !strcmp(prop, WRITE_PATHS[i]);
    if (!write_path || !value)
        return 0;
    if (floe_io_uri_is_relative(value) || !floe_io_uri_within(value, location))
        return floe_error_set(err, FLOE_EINVALID,
                              "property %s = %s lies outside the table's location %s: a table "
                              "writes only inside its own location%s",
                              prop, value, location, TAIL);
    return 0;
}
