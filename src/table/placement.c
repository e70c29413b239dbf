/*
 * placement.c - where a table may be: a table's location is a folder of its own.
 *
 * A table location never lies inside or contains another table's location or one of its
 * write paths outside it (write.data.path, write.metadata.path, write.object-storage.path,
 * write.folder-storage.path: that table writes there and its maintenance deletes there),
 * the landing folder floe serve keeps under the warehouse (<warehouse>/_landing), the
 * quarantine (<warehouse>/_quarantine), the write-ahead logs (<warehouse>/_wal), or the
 * warehouse itself: orphan removal lists a table's whole location and deletes what the
 * table does not reference, so anything else in there would be deleted as an orphan.
 *
 * The check runs when a table is created, registered or renamed, on every catalog,
 * under a lock kept in the catalog's database (a floe_leases row for the whole catalog;
 * for the filesystem catalog in <warehouse>/_leases.db): two creates that race (two first
 * posts to floe serve, for shop.events and shop.events.data) are serialised, so the
 * second sees the first.
 *
 * A new table's location must also hold no files yet (floe_table_check_location_unused):
 * orphan removal would delete whatever a user kept in a folder given as --location. A
 * registered or renamed table brings its files along, so only creates are held to it; a
 * table moved by a REST commit's set-location may find its own files there, nothing else
 * (floe_table_check_location_own), and a table a REST staged create's commit makes with
 * snapshots only the files those snapshots reference (floe_table_check_location_snapshots).
 *
 * Where the other tables are: each table is loaded (its location, resolved as any load
 * does) unless its place is kept for its current metadata pointer (below); a table whose
 * metadata cannot be read is placed at the folder of its metadata pointer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fold.h"
#include "floe/io.h"
#include "floe/lease.h"
#include "floe/manifest.h"
#include "floe/sql.h"
#include "table_internal.h"

#define PLACEMENT_JOB "table-placement"
#define PLACEMENT_TTL_MS 30000
#define PLACEMENT_WAIT_MS 60000

/* ---------------------------------------------------------------------------------------
 * the lock
 * ------------------------------------------------------------------------------------- */

struct floe_table_placement_lock {
    floe_lease_store *store;
    char owner[128];
    char *catalog_name;
};

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int floe_table_placement_lock_take(floe_catalog *c, floe_table_placement_lock **out,
                                   floe_error *err) {
    /* a REST catalog's clients share no lock store; the server refuses a name taken in
     * between (409), and the location check below still runs against its tables */
    if (floe_catalog_commits_changes(c)) {
        *out = NULL;
        return 0;
    }
    floe_table_placement_lock *l = floe_calloc(1, sizeof *l);
    if (!l)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    char *dir = NULL, *db = NULL;
    if (!(l->catalog_name = floe_strdup(floe_catalog_name(c))))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_sql *sql = floe_catalog_sql(c);
    if (sql) {
        FLOE_CHECK(floe_lease_store_open_sql(sql, &l->store, err));
    } else {
        /* the filesystem catalog is local: its leases live beside its tables */
        dir = floe_io_local_path(floe_catalog_warehouse(c));
        db = dir ? floe_io_join(dir, "_leases.db") : NULL;
        if (!db)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(floe_lease_store_open_sqlite(db, floe_catalog_sql_options(c), &l->store, err));
    }
    floe_lease_owner_id(l->owner);
    floe_lease_key k = {l->catalog_name, "", "", PLACEMENT_JOB};
    int64_t start = floe_now_ns();
    for (int64_t wait = 10;; wait = wait < 200 ? wait * 2 : 200) {
        bool got = false;
        FLOE_CHECK(floe_lease_acquire(l->store, &k, l->owner, PLACEMENT_TTL_MS, &got, err));
        if (got)
            break;
        if ((floe_now_ns() - start) / 1000000 > PLACEMENT_WAIT_MS)
            FLOE_FAIL(err, FLOE_EBUSY,
                      "catalog %s: another process has been creating or moving a table for "
                      "%d s; try again",
                      l->catalog_name, PLACEMENT_WAIT_MS / 1000);
        sleep_ms(wait);
    }
    *out = l;
    l = NULL;
done:
    if (l) {
        floe_lease_store_close(l->store);
        floe_free(l->catalog_name);
        floe_free(l);
    }
    floe_free(dir);
    floe_free(db);
    return rc;
}

void floe_table_placement_lock_release(floe_table_placement_lock *l) {
    if (!l)
        return;
    floe_lease_key k = {l->catalog_name, "", "", PLACEMENT_JOB};
    floe_error e;
    floe_error_clear(&e);
    if (floe_lease_release(l->store, &k, l->owner, &e) < 0)
        floe_log(FLOE_LOG_WARN, "catalog %s: placement lock not released (it expires in %d s): %s",
                 l->catalog_name, PLACEMENT_TTL_MS / 1000, e.msg);
    floe_lease_store_close(l->store);
    floe_free(l->catalog_name);
    floe_free(l);
}

/* ---------------------------------------------------------------------------------------
 * where the tables are
 * ------------------------------------------------------------------------------------- */

/* Free the fields of *p (not p itself). */
static void place_reset(floe_table_place *p) {
    floe_free(p->ns);
    floe_free(p->name);
    floe_free(p->location);
    for (size_t k = 0; k < FLOE_TABLE_WRITE_PATHS; k++)
        floe_free(p->write_paths[k]);
    *p = (floe_table_place){0};
}

void floe_table_places_free(floe_table_place *p, size_t n) {
    if (!p)
        return;
    for (size_t i = 0; i < n; i++)
        place_reset(&p[i]);
    floe_free(p);
}

typedef struct places {
    floe_table_place *items;
    size_t n, cap;
} places;

/* Push table ns.name at *where (its fields taken, also on failure). */
static int place_push(places *ps, const char *ns, const char *name, floe_table_place *where,
                      floe_error *err) {
    if (ps->n == ps->cap) {
        size_t nc = ps->cap ? ps->cap * 2 : 16;
        floe_table_place *ni = floe_realloc(ps->items, nc * sizeof *ni);
        if (!ni) {
            place_reset(where);
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
        ps->items = ni;
        ps->cap = nc;
    }
    where->ns = floe_strdup(ns);
    where->name = floe_strdup(name);
    ps->items[ps->n] = *where;
    if (!where->ns || !where->name) {
        place_reset(where);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    ps->n++;
    return 0;
}

const char *const floe_table_write_path_props[FLOE_TABLE_WRITE_PATHS] = {
    "write.data.path", "write.metadata.path", "write.object-storage.path",
    "write.folder-storage.path"};

/* The write paths of loaded table t that lie outside its folder, mapped as a load maps
 * every path, into where->write_paths. One that cannot be mapped is left out (logged). */
static int place_write_paths(const floe_table *t, floe_table_place *where, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    for (size_t k = 0; k < FLOE_TABLE_WRITE_PATHS; k++) {
        const char *v = floe_table_metadata_property(m, floe_table_write_path_props[k]);
        char *p = NULL;
        floe_error e;
        floe_error_clear(&e);
        if (!v || !*v)
            continue;
        int rc = floe_table_resolve_path(t, v, &p, &e);
        if (rc == FLOE_ENOMEM) {
            if (err)
                *err = e;
            return rc;
        }
        if (rc < 0) {
            floe_log(FLOE_LOG_DEBUG, "table %s: %s %s cannot be placed (%s); left out",
                     floe_table_name(t), floe_table_write_path_props[k], v, e.msg);
            continue;
        }
        if (floe_io_uri_within(p, where->location))
            floe_free(p);
        else
            where->write_paths[k] = p;
    }
    return 0;
}

/* The folders a table's files are in: its location as a load places it and its write
 * paths outside it, else the folder of its metadata pointer (a table that cannot be
 * loaded still owns that folder). */
static int table_folder(floe_catalog *c, const char *ns, const char *name,
                        floe_table_place *out, char **loaded, floe_error *err) {
    floe_table *t = NULL;
    floe_error e;
    floe_error_clear(&e);
    int rc = floe_table_load(c, ns, name, &t, &e);
    if (rc == 0) {
        floe_table_place p = {.location = floe_strdup(floe_table_root(t))};
        char *ptr = loaded ? floe_strdup(t->pointer) : NULL;
        rc = p.location && (!loaded || ptr) ? place_write_paths(t, &p, err)
                                            : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_table_close(t);
        if (rc < 0) {
            floe_free(ptr);
            place_reset(&p);
            return rc;
        }
        *out = p;
        if (loaded)
            *loaded = ptr;
        return 0;
    }
    if (rc == FLOE_ENOMEM || rc == FLOE_EBUSY) {
        if (err)
            *err = e;
        return rc;
    }
    char *pointer = NULL, *abs = NULL;
    floe_error pe;
    rc = floe_catalog_load_table(c, ns, name, &pointer, &pe); /* ENOTFOUND: dropped */
    if (rc == FLOE_ENOMEM || rc == FLOE_EBUSY) {
        if (err)
            *err = pe;
        return rc;
    }
    if (rc < 0) {
        /* a REST catalog reads the pointer only with the metadata (its server answers 500
         * when that file is gone); that server checks the locations of what it creates
         * itself, so such a table is left out here, not made every create's failure */
        floe_log(FLOE_LOG_DEBUG, "table %s.%s: cannot be placed (%s); left out", ns, name,
                 pe.msg);
        return FLOE_ENOTFOUND;
    }
    rc = floe_catalog_resolve_location(c, ns, name, pointer, &abs, err);
    floe_free(pointer);
    if (rc < 0)
        return rc;
    floe_log(FLOE_LOG_DEBUG, "table %s.%s: placed by its metadata pointer (%s)", ns, name,
             e.msg);
    /* <location>/metadata/<file> -> <location> */
    char *slash = strrchr(abs, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(abs, '/');
    if (slash && !strcmp(slash + 1, "metadata"))
        *slash = '\0';
    *out = (floe_table_place){.location = abs};
    return 0;
}

typedef struct loading {
    floe_catalog *cat;
    places *ps;
} loading;

/* floe_catalog_each_table without pointers: ns.name placed by a load, pushed */
static int place_loaded(void *ctx, const char *ns, const char *name, const char *pointer,
                        floe_error *err) {
    loading *l = ctx;
    (void)pointer;
    floe_table_place where = {0};
    int rc = table_folder(l->cat, ns, name, &where, NULL, err);
    if (rc == FLOE_ENOTFOUND) { /* dropped meanwhile */
        floe_error_clear(err);
        return 0;
    }
    return rc < 0 ? rc : place_push(l->ps, ns, name, &where, err);
}

/* ---------------------------------------------------------------------------------------
 * the places kept
 *
 * A table's place is a function of its metadata file, which is never changed once
 * written, and of the warehouse a relative location resolves against. floe_table_places
 * (in the catalog's database; the filesystem catalog's in <warehouse>/_leases.db) keeps,
 * per table, the place worked out from one metadata pointer. A row is used only while the
 * catalog still points the table at that file and the warehouse is the same, so whatever
 * changes a table - a commit by floe or by anyone else, a rename, a drop, a re-create -
 * is seen: that table is loaded again and its row replaced. A reading of the places thus
 * lists every table with its pointer (one query on the SQL stores) and loads only the
 * tables whose pointer moved, instead of every table (a create used to read the metadata
 * of every table of the catalog, so N creates read N*N/2 files).
 *
 * The rows are a cache: when they cannot be read or written (a read-only database, a
 * transaction open on the catalog's connection), the tables are loaded as before. Rows
 * are written by whoever reads the places; two writers of one row both write a place
 * true of the pointer they name, so either may win.
 * ------------------------------------------------------------------------------------- */

static const char SQL_CREATE_KEPT[] =
    "CREATE TABLE IF NOT EXISTS floe_table_places ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, "
    "warehouse TEXT NOT NULL, "
    "metadata_location TEXT NOT NULL, "
    "location TEXT NOT NULL, "
    "data_path TEXT, metadata_path TEXT, object_storage_path TEXT, folder_storage_path TEXT, "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";
/* the write paths in the order of floe_table_write_path_props */
static const char SQL_KEPT[] =
    "SELECT table_namespace, table_name, warehouse, metadata_location, location, data_path, "
    "metadata_path, object_storage_path, folder_storage_path FROM floe_table_places "
    "WHERE catalog_name = ?";
static const char SQL_KEEP[] =
    "INSERT INTO floe_table_places (catalog_name, table_namespace, table_name, warehouse, "
    "metadata_location, location, data_path, metadata_path, object_storage_path, "
    "folder_storage_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (catalog_name, table_namespace, table_name) DO UPDATE SET "
    "warehouse = excluded.warehouse, metadata_location = excluded.metadata_location, "
    "location = excluded.location, data_path = excluded.data_path, "
    "metadata_path = excluded.metadata_path, "
    "object_storage_path = excluded.object_storage_path, "
    "folder_storage_path = excluded.folder_storage_path";
static const char SQL_FORGET[] =
    "DELETE FROM floe_table_places WHERE catalog_name = ? AND table_namespace = ? AND "
    "table_name = ?";

/* a row of floe_table_places */
typedef struct kept_place {
    floe_table_place place;
    char *warehouse, *pointer;
    bool seen; /* the table is still in the catalog */
} kept_place;

typedef struct kept_places {
    kept_place *items;
    size_t n, cap;
    int rc; /* FLOE_ENOMEM while reading */
} kept_places;

/* a table of the catalog with its pointer (floe_catalog_each_table) */
typedef struct listed_table {
    char *ns, *name, *pointer;
} listed_table;

typedef struct listed_tables {
    listed_table *items;
    size_t n, cap;
} listed_tables;

static void kept_free(kept_places *k) {
    for (size_t i = 0; i < k->n; i++) {
        place_reset(&k->items[i].place);
        floe_free(k->items[i].warehouse);
        floe_free(k->items[i].pointer);
    }
    floe_free(k->items);
}

static void listed_free(listed_tables *l) {
    for (size_t i = 0; i < l->n; i++) {
        floe_free(l->items[i].ns);
        floe_free(l->items[i].name);
        floe_free(l->items[i].pointer);
    }
    floe_free(l->items);
}

/* Make room for one more of n items of size sz in *items (capacity *cap). */
static int grow(void **items, size_t n, size_t *cap, size_t sz, floe_error *err) {
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *ni = floe_realloc(*items, nc * sz);
    if (!ni)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *items = ni;
    *cap = nc;
    return 0;
}

static int note_table(void *ctx, const char *ns, const char *name, const char *pointer,
                       floe_error *err) {
    listed_tables *l = ctx;
    FLOE_FORWARD_IF_ERROR(grow((void **)&l->items, l->n, &l->cap, sizeof *l->items, err));
    listed_table t = {floe_strdup(ns), floe_strdup(name), floe_strdup(pointer)};
    l->items[l->n++] = t;
    if (!t.ns || !t.name || !t.pointer)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static char *dup_or_null(const char *s, bool *oom) {
    char *d = s ? floe_strdup(s) : NULL;
    if (s && !d)
        *oom = true;
    return d;
}

static int note_kept(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    kept_places *k = ctx;
    if (ncols < 5 + FLOE_TABLE_WRITE_PATHS || !cols[0] || !cols[1] || !cols[2] || !cols[3] ||
        !cols[4])
        return 0;
    FLOE_FORWARD_IF_ERROR(grow((void **)&k->items, k->n, &k->cap, sizeof *k->items, err));
    bool oom = false;
    kept_place r = {.place = {.ns = dup_or_null(cols[0], &oom),
                              .name = dup_or_null(cols[1], &oom),
                              .location = dup_or_null(cols[4], &oom)},
                    .warehouse = dup_or_null(cols[2], &oom),
                    .pointer = dup_or_null(cols[3], &oom)};
    for (size_t i = 0; i < FLOE_TABLE_WRITE_PATHS; i++)
        r.place.write_paths[i] = dup_or_null(cols[5 + i], &oom);
    k->items[k->n++] = r;
    if (oom)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static int by_table(const void *a, const void *b) {
    const kept_place *x = a, *y = b;
    int d = strcmp(x->place.ns, y->place.ns);
    return d ? d : strcmp(x->place.name, y->place.name);
}

/* The database the places are kept in: the SQL catalog's connection (*owned false), else
 * the filesystem catalog's <warehouse>/_leases.db opened here (*owned true). NULL when
 * there is none to use (a REST catalog; a transaction open on the catalog's connection,
 * which a failed statement would end). */
static floe_sql *kept_db(floe_catalog *c, bool *owned) {
    *owned = false;
    floe_sql *sql = floe_catalog_sql(c);
    if (sql)
        return floe_sql_in_transaction(sql) ? NULL : sql;
    if (!floe_catalog_swap_by_create(c))
        return NULL;
    char *dir = floe_io_local_path(floe_catalog_warehouse(c));
    char *db = dir ? floe_io_join(dir, "_leases.db") : NULL;
    floe_sql *out = NULL;
    floe_error e;
    floe_error_clear(&e);
    if (db && floe_sql_open_with(db, floe_catalog_sql_options(c), &out, &e) < 0) {
        floe_log(FLOE_LOG_DEBUG, "catalog %s: places not kept: %s", floe_catalog_name(c), e.msg);
        out = NULL;
    }
    floe_free(dir);
    floe_free(db);
    *owned = out != NULL;
    return out;
}

/* Read the rows of catalog c into *k, sorted by table. A failure other than FLOE_ENOMEM
 * leaves *k empty and returns 0: the tables are then all loaded. */
static int kept_read(floe_sql *db, floe_catalog *c, kept_places *k, floe_error *err) {
    floe_error e;
    floe_error_clear(&e);
    const char *params[] = {floe_catalog_name(c)};
    int rc = floe_sql_exec(db, SQL_CREATE_KEPT, NULL, 0, NULL, &e);
    if (rc == 0 || rc == FLOE_EEXISTS) /* PostgreSQL: a racing CREATE made it */
        rc = floe_sql_query(db, SQL_KEPT, params, 1, note_kept, k, &e);
    if (rc == 0) {
        if (k->n > 1)
            qsort(k->items, k->n, sizeof *k->items, by_table);
        return 0;
    }
    kept_free(k);
    *k = (kept_places){0};
    if (rc == FLOE_ENOMEM) {
        if (err)
            *err = e;
        return rc;
    }
    floe_log(FLOE_LOG_DEBUG, "catalog %s: kept places not read: %s", floe_catalog_name(c),
             e.msg);
    return 0;
}

/* Write the places loaded (fresh[i] of places ps, read from pointers[i]) and forget the
 * rows of tables gone, in one transaction; a failure is logged and the rows left. */
static void kept_write(floe_sql *db, floe_catalog *c, const kept_places *k,
                       const floe_table_place *ps, const size_t *fresh, char *const *pointers,
                       size_t nfresh) {
    bool forget = false;
    for (size_t i = 0; i < k->n && !forget; i++)
        forget = !k->items[i].seen;
    if (!nfresh && !forget)
        return;
    floe_error e;
    floe_error_clear(&e);
    const char *cat = floe_catalog_name(c), *wh = floe_catalog_warehouse(c);
    int rc = floe_sql_begin(db, &e);
    for (size_t i = 0; rc == 0 && i < nfresh; i++) {
        const floe_table_place *p = &ps[fresh[i]];
        const char *params[] = {cat,         p->ns,          p->name,
                                wh,          pointers[i],    p->location,
                                p->write_paths[0], p->write_paths[1], p->write_paths[2],
                                p->write_paths[3]};
        rc = floe_sql_exec(db, SQL_KEEP, params, 10, NULL, &e);
    }
    for (size_t i = 0; rc == 0 && i < k->n; i++) {
        const kept_place *r = &k->items[i];
        const char *params[] = {cat, r->place.ns, r->place.name};
        if (!r->seen)
            rc = floe_sql_exec(db, SQL_FORGET, params, 3, NULL, &e);
    }
    if (rc == 0)
        rc = floe_sql_commit(db, &e);
    if (rc < 0) {
        floe_sql_rollback(db);
        floe_log(FLOE_LOG_DEBUG, "catalog %s: places not kept: %s", cat, e.msg);
    }
}

static int place_copy(const floe_table_place *from, floe_table_place *to, floe_error *err) {
    bool oom = false;
    floe_table_place p = {.location = dup_or_null(from->location, &oom)};
    for (size_t i = 0; i < FLOE_TABLE_WRITE_PATHS; i++)
        p.write_paths[i] = dup_or_null(from->write_paths[i], &oom);
    if (oom) {
        place_reset(&p);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    *to = p;
    return 0;
}

/* Every table of a pointer-swap catalog: the listed tables, each from its kept row when
 * the row names the table's pointer, else loaded (and the row rewritten). */
static int collect_kept(floe_catalog *c, places *ps, floe_error *err) {
    listed_tables l = {0};
    kept_places k = {0};
    size_t *fresh = NULL, nfresh = 0, loaded_n = 0;
    char **pointers = NULL;
    bool owned = false;
    floe_sql *db = NULL;
    int rc = 0;
    FLOE_CHECK(floe_catalog_each_table(c, true, note_table, &l, err));
    db = kept_db(c, &owned);
    if (db)
        FLOE_CHECK(kept_read(db, c, &k, err));
    fresh = floe_calloc(l.n + 1, sizeof *fresh);
    pointers = floe_calloc(l.n + 1, sizeof *pointers);
    if (!fresh || !pointers)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const char *wh = floe_catalog_warehouse(c);
    for (size_t i = 0; i < l.n; i++) {
        const listed_table *t = &l.items[i];
        kept_place key = {.place = {.ns = t->ns, .name = t->name}};
        kept_place *r = k.n ? bsearch(&key, k.items, k.n, sizeof *k.items, by_table) : NULL;
        floe_table_place where = {0};
        if (r)
            r->seen = true;
        if (r && !strcmp(r->pointer, t->pointer) && !strcmp(r->warehouse, wh)) {
            FLOE_CHECK(place_copy(&r->place, &where, err));
            FLOE_CHECK(place_push(ps, t->ns, t->name, &where, err));
            continue;
        }
        char *loaded = NULL;
        rc = table_folder(c, t->ns, t->name, &where, &loaded, err);
        if (rc == FLOE_ENOTFOUND) { /* dropped meanwhile */
            floe_error_clear(err);
            rc = 0;
            continue;
        }
        FLOE_CHECK(rc);
        loaded_n++;
        rc = place_push(ps, t->ns, t->name, &where, err);
        if (rc < 0) {
            floe_free(loaded);
            goto done;
        }
        if (loaded) { /* placed by a load, not by its pointer's folder */
            fresh[nfresh] = ps->n - 1;
            pointers[nfresh++] = loaded;
        }
    }
    floe_log(FLOE_LOG_DEBUG,
             "catalog %s: placement: %zu of %zu tables loaded, the others placed as kept",
             floe_catalog_name(c), loaded_n, l.n);
    if (db)
        kept_write(db, c, &k, ps->items, fresh, pointers, nfresh);
done:
    for (size_t i = 0; i < nfresh; i++)
        floe_free(pointers[i]);
    floe_free(pointers);
    floe_free(fresh);
    kept_free(&k);
    listed_free(&l);
    if (owned)
        floe_sql_close(db);
    return rc;
}

int floe_catalog_table_places(floe_catalog *c, floe_table_place **out, size_t *n,
                              floe_error *err) {
    places ps = {0};
    /* a REST catalog's tables are placed by loading each (its server keeps no rows here) */
    loading l = {c, &ps};
    int rc = floe_catalog_commits_changes(c)
                 ? floe_catalog_each_table(c, false, place_loaded, &l, err)
                 : collect_kept(c, &ps, err);
    if (rc < 0) {
        floe_table_places_free(ps.items, ps.n);
        return rc;
    }
    *out = ps.items;
    *n = ps.n;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * the check
 * ------------------------------------------------------------------------------------- */

static const char *const RESERVED[][2] = {
    {"_landing", "floe serve's landing folder"},
    {"_quarantine", "the quarantine"},
    {"_wal", "floe serve's write-ahead logs"},
};

int floe_table_reserved_folder(floe_catalog *c, const char *location, char **dir,
                               const char **what) {
    const char *wh = floe_catalog_warehouse(c);
    *dir = NULL;
    *what = NULL;
    for (size_t i = 0; i < sizeof RESERVED / sizeof RESERVED[0]; i++) {
        char *d = floe_io_join(wh, RESERVED[i][0]);
        if (!d)
            return FLOE_ENOMEM;
        if (floe_io_uri_within(location, d)) {
            *dir = d;
            *what = RESERVED[i][1];
            return 1;
        }
        floe_free(d);
    }
    return 0;
}

int floe_table_check_location_among(floe_catalog *c, const floe_table_place *ps, size_t n,
                                    const char *ns, const char *name, const char *skip_ns,
                                    const char *skip_name, const char *location,
                                    floe_error *err) {
    const char *wh = floe_catalog_warehouse(c);
    static const char tail[] = "; a table's location must be a folder of its own (orphan "
                               "removal deletes whatever else is in it): choose another "
                               "location";
    if (floe_io_uri_within(wh, location))
        return floe_error_set(err, FLOE_EINVALID,
                              "table %s.%s: location %s contains the warehouse %s%s", ns, name,
                              location, wh, tail);
    char *dir = NULL;
    const char *what = NULL;
    int rc = floe_table_reserved_folder(c, location, &dir, &what);
    if (rc < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc > 0)
        rc = floe_error_set(err, FLOE_EINVALID, "table %s.%s: location %s lies inside %s (%s)%s",
                            ns, name, location, what, dir, tail);
    floe_free(dir);
    if (rc < 0)
        return rc;
    bool local = !floe_io_uri_has_remote_scheme(location);
    char *folded = NULL;
    if (local && (rc = floe_fold_name(location, &folded, err)) < 0) {
        floe_error_prefix(err, "table %s.%s: ", ns, name);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const floe_table_place *p = &ps[i];
        if ((!strcmp(p->ns, ns) && !strcmp(p->name, name)) ||
            (skip_ns && !strcmp(p->ns, skip_ns) && !strcmp(p->name, skip_name)))
            continue;
        if (floe_io_uri_within(location, p->location))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "table %s.%s: location %s lies inside the location of table "
                                "%s.%s (%s)%s",
                                ns, name, location, p->ns, p->name, p->location, tail);
        else if (floe_io_uri_within(p->location, location))
            rc = floe_error_set(err, FLOE_EINVALID,
                                "table %s.%s: location %s contains the location of table "
                                "%s.%s (%s)%s",
                                ns, name, location, p->ns, p->name, p->location, tail);
        /* a write path outside that table's location: it writes and deletes there too */
        for (size_t k = 0; k < FLOE_TABLE_WRITE_PATHS && rc == 0; k++) {
            const char *wp = p->write_paths[k];
            if (wp && (floe_io_uri_within(location, wp) || floe_io_uri_within(wp, location)))
                rc = floe_error_set(err, FLOE_EINVALID,
                                    "table %s.%s: location %s %s the %s of table %s.%s (%s)%s",
                                    ns, name, location,
                                    floe_io_uri_within(location, wp) ? "lies inside"
                                                                     : "contains",
                                    floe_table_write_path_props[k], p->ns, p->name, wp, tail);
        }
        /* a case-insensitive filesystem (macOS, Windows) takes names that differ only
         * by case or Unicode normalization for one: there the two tables would share a
         * folder */
        if (rc == 0 && folded && !floe_io_uri_has_remote_scheme(p->location)) {
            char *theirs = NULL;
            rc = floe_fold_name(p->location, &theirs, err);
            if (rc == 0 &&
                (floe_io_uri_within(folded, theirs) || floe_io_uri_within(theirs, folded)))
                rc = floe_error_set(err, FLOE_EEXISTS,
                                    "table %s.%s: location %s differs only by case or Unicode "
                                    "normalization from the location of table %s.%s (%s): on "
                                    "a case-insensitive filesystem (macOS, Windows) they are "
                                    "one folder; choose another name or location",
                                    ns, name, location, p->ns, p->name, p->location);
            floe_free(theirs);
        }
    }
    floe_free(folded);
    return rc;
}

int floe_table_check_location_except(floe_catalog *c, const char *ns, const char *name,
                                     const char *skip_ns, const char *skip_name,
                                     const char *location, floe_error *err) {
    floe_table_place *ps = NULL;
    size_t n = 0;
    FLOE_FORWARD_IF_ERROR(floe_catalog_table_places(c, &ps, &n, err));
    int rc = floe_table_check_location_among(c, ps, n, ns, name, skip_ns, skip_name, location,
                                             err);
    floe_table_places_free(ps, n);
    return rc;
}

int floe_table_check_location(floe_catalog *c, const char *ns, const char *name,
                              const char *location, floe_error *err) {
    return floe_table_check_location_except(c, ns, name, NULL, NULL, location, err);
}

int floe_table_check_write_path(floe_catalog *c, const char *ns, const char *name,
                                const char *root, const char *prop, const char *value,
                                char **out, floe_error *err) {
    *out = NULL;
    bool write_path = false;
    for (size_t i = 0; i < FLOE_TABLE_WRITE_PATHS; i++)
        write_path = write_path || !strcmp(prop, floe_table_write_path_props[i]);
    if (!write_path || !value)
        return 0;
    if (!*value)
        return floe_error_set(err, FLOE_EINVALID, "property %s is empty (unset it for the "
                              "table's own folder)", prop);
    char *abs = NULL;
    int rc = floe_io_uri_absolute(value, NULL, &abs, err);
    if (rc < 0) {
        floe_error_prefix(err, "property %s: ", prop);
        return rc;
    }
    if (c && !floe_catalog_commits_changes(c) && !(root && floe_io_uri_within(abs, root))) {
        rc = floe_table_check_location(c, ns, name, abs, err);
        if (rc < 0 && rc != FLOE_ENOMEM)
            floe_error_prefix(err, "property %s = %s is not a folder of the table's own "
                              "(the table writes there and its maintenance deletes there): ",
                              prop, abs);
    }
    if (rc < 0) {
        floe_free(abs);
        return rc;
    }
    *out = abs;
    return 0;
}

/* The first file found under the location that own does not hold stops the listing.
 * claims: the location's metadata folder, "<location>/metadata/", when the catalog is the
 * filesystem's (swap by create): the empty v<N> files there are a dropped table's claims,
 * which stay (fs_catalog.c) and which the catalog's create numbers past, and a version
 * hint there is the catalog's too (a stray one a late commit wrote after the drop; the
 * create rewrites it). */
typedef struct first_file {
    const floe_table_confinement *own; /* NULL: none */
    const char *claims;                /* NULL: none */
    char *uri;
    bool seen;
    int rc; /* FLOE_ENOMEM from own */
} first_file;

static int note_first(void *ctx, const floe_io_entry *e) {
    first_file *f = ctx;
    size_t cl = f->claims ? strlen(f->claims) : 0;
    int64_t v;
    if (cl && !strncmp(e->uri, f->claims, cl) && !strchr(e->uri + cl, '/') &&
        ((e->size == 0 && e->uri[cl] == 'v' && floe_metadata_file_version(e->uri + cl, &v)) ||
         !strcmp(e->uri + cl, "version-hint.text")))
        return 0;
    if (f->own) {
        int held = floe_table_confinement_holds(f->own, e->uri, NULL);
        if (held < 0)
            f->rc = held;
        if (held != 0)
            return held < 0 ? 1 : 0;
    }
    if (!f->seen)
        f->uri = floe_strdup(e->uri);
    f->seen = true;
    return 1;
}

int floe_table_check_location_unused(floe_catalog *c, const char *ns, const char *name,
                                     const char *location, floe_error *err) {
    /* a REST catalog's server places what it creates, and checks it there */
    if (floe_catalog_commits_changes(c))
        return 0;
    return floe_table_check_location_own(c, ns, name, location, NULL, err);
}

int floe_table_check_location_own(floe_catalog *c, const char *ns, const char *name,
                                  const char *location, const floe_table_confinement *own,
                                  floe_error *err) {
    first_file f = {.own = own};
    char *claims = floe_catalog_swap_by_create(c) ? floe_io_join(location, "metadata/") : NULL;
    f.claims = claims;
    int rc = floe_io_list(floe_catalog_io(c), location, note_first, &f, err);
    floe_free(claims);
    f.claims = NULL;
    if (rc < 0) {
        floe_error_prefix(err, "table %s.%s: location %s: ", ns, name, location);
        return rc;
    }
    if (f.rc < 0 || (f.seen && !f.uri)) {
        floe_free(f.uri);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    if (f.seen) {
        /* the files may be another table's, or the warehouse's: that says more */
        rc = floe_table_check_location(c, ns, name, location, err);
        if (rc < 0) {
            floe_free(f.uri);
            return rc;
        }
        rc = floe_error_set(err, FLOE_EINVALID,
                            "table %s.%s: location %s already holds files (%s)%s; a table's "
                            "location must be a folder of its own (orphan removal deletes "
                            "whatever else is in it): choose a missing or empty folder",
                            ns, name, location, f.uri,
                            own ? " that are not the table's own" : "");
        floe_free(f.uri);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * a new table's location holding the files of its first snapshots
 * ------------------------------------------------------------------------------------- */

/* One file listed under the location, by key; own once a snapshot references it. */
typedef struct listed_file {
    char *key;
    char *uri;
    bool own;
} listed_file;

typedef struct listing {
    floe_catalog *cat;
    const char *location;
    listed_file *files; /* sorted by key once listed */
    size_t n, cap;
    int rc;             /* FLOE_ENOMEM while listing */
} listing;

static int note_listed(void *ctx, const floe_io_entry *e) {
    listing *l = ctx;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        listed_file *nf = floe_realloc(l->files, nc * sizeof *nf);
        if (!nf) {
            l->rc = FLOE_ENOMEM;
            return 1;
        }
        l->files = nf;
        l->cap = nc;
    }
    listed_file f = {floe_io_uri_key(e->uri), floe_strdup(e->uri), false};
    if (!f.key || !f.uri) {
        floe_free(f.key);
        floe_free(f.uri);
        l->rc = FLOE_ENOMEM;
        return 1;
    }
    l->files[l->n++] = f;
    return 0;
}

static int by_key(const void *a, const void *b) {
    return strcmp(((const listed_file *)a)->key, ((const listed_file *)b)->key);
}

/* The listed file path names (relative: under the location), marked as the table's own;
 * *found (may be NULL) is it, or NULL when it is not in the location. */
static int mark_own(listing *l, const char *path, const listed_file **found, floe_error *err) {
    char *abs = floe_io_uri_is_relative(path) ? floe_io_join(l->location, path)
                                              : floe_strdup(path);
    char *key = abs ? floe_io_uri_key(abs) : NULL;
    floe_free(abs);
    if (!key)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    listed_file probe = {.key = key};
    listed_file *f = bsearch(&probe, l->files, l->n, sizeof *l->files, by_key);
    floe_free(key);
    if (f)
        f->own = true;
    if (found)
        *found = f;
    return 0;
}

/* The data and delete files the manifest at listed file mf (its list entry: entry, may be
 * NULL) holds, marked as the table's own. */
static int mark_manifest(listing *l, const listed_file *mf, const floe_manifest_file *entry,
                         floe_error *err) {
    floe_manifest_read_options o = {.manifest = entry,
                                    .allow_missing_field_ids = true,
                                    .allow_deletion_vectors = true};
    floe_manifest_reader *r = NULL;
    int rc = floe_manifest_reader_open(floe_catalog_io(l->cat), mf->uri, &o, &r, err);
    while (rc == 0) {
        const floe_manifest_entry *e = NULL;
        rc = floe_manifest_reader_next(r, &e, err);
        if (rc <= 0)
            break;
        rc = mark_own(l, e->file.file_path, NULL, err);
    }
    floe_manifest_reader_close(r);
    return rc < 0 ? rc : 0;
}

/* floe_named_file_fn: a file the metadata names is the table's own; a manifest list or
 * manifest in the location is read for the files it names (one elsewhere is not read:
 * the files it names would not make the location's files the table's). */
static int mark_named(void *ctx, const char *what, int64_t snapshot_id, const char *path,
                      floe_error *err) {
    listing *l = ctx;
    const listed_file *f = NULL;
    (void)snapshot_id;
    FLOE_FORWARD_IF_ERROR(mark_own(l, path, &f, err));
    if (!f || !strcmp(what, "statistics file") || !strcmp(what, "partition statistics file"))
        return 0;
    int rc = 0;
    if (!strcmp(what, "manifest")) { /* format v1 */
        rc = mark_manifest(l, f, NULL, err);
    } else {
        floe_arena a;
        floe_arena_init(&a, 16 * 1024);
        floe_manifest_list_read_options ro = {.allow_missing_field_ids = true,
                                              .has_snapshot_id = true,
                                              .snapshot_id = snapshot_id};
        floe_manifest_list ml;
        rc = floe_manifest_list_read(floe_catalog_io(l->cat), f->uri, &ro, &a, &ml, err);
        for (size_t i = 0; rc == 0 && i < ml.nfiles; i++) {
            const listed_file *m = NULL;
            rc = mark_own(l, ml.files[i].manifest_path, &m, err);
            if (rc == 0 && m)
                rc = mark_manifest(l, m, &ml.files[i], err);
        }
        floe_arena_reset(&a);
    }
    if (rc < 0 && rc != FLOE_ENOMEM) {
        floe_error_prefix(err, "snapshot %" PRId64 "'s %s %s: ", snapshot_id, what, path);
        rc = FLOE_EINVALID;
    }
    return rc;
}

int floe_table_check_location_snapshots(floe_catalog *c, const char *ns, const char *name,
                                        const floe_table_metadata *m, floe_error *err) {
    listing l = {.cat = c, .location = m->location};
    int rc = floe_io_list(floe_catalog_io(c), m->location, note_listed, &l, err);
    if (rc == 0 && l.rc < 0)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc < 0) {
        floe_error_prefix(err, "table %s.%s: location %s: ", ns, name, m->location);
        goto done;
    }
    if (l.n == 0)
        goto done;
    qsort(l.files, l.n, sizeof *l.files, by_key);
    FLOE_CHECK(floe_table_metadata_named_files(m, m->location, mark_named, &l, err));
    /* the first file in the way; another table's metadata file says most */
    const listed_file *stray = NULL;
    for (size_t i = 0; i < l.n; i++) {
        const listed_file *f = &l.files[i];
        if (f->own)
            continue;
        if (!stray || (strstr(f->key, ".metadata.json") && !strstr(stray->key, ".metadata.json")))
            stray = f;
    }
    if (stray) {
        /* the files may be another table's, whose location this is: that says more */
        FLOE_CHECK(floe_table_check_location(c, ns, name, m->location, err));
        FLOE_FAIL(err, FLOE_EINVALID,
                  "table %s.%s: location %s holds %s, which no snapshot of the table "
                  "references; a table's location must be a folder of its own (orphan "
                  "removal deletes whatever else is in it): choose a missing or empty folder "
                  "(or one holding only the files the table's snapshots reference)",
                  ns, name, m->location, stray->uri);
    }
done:
    for (size_t i = 0; i < l.n; i++) {
        floe_free(l.files[i].key);
        floe_free(l.files[i].uri);
    }
    floe_free(l.files);
    return rc;
}
