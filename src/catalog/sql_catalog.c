/*
 * sql_catalog.c - the SQL catalog (PyIceberg SqlCatalog / Iceberg Java JdbcCatalog
 * layout) over a floe_sql_driver.
 *
 * Tables (the DDL floe creates; PyIceberg's SqlCatalog declares the same columns, types
 * and primary keys, and Java's JdbcCatalog adds iceberg_type in its V1 schema):
 *
 *   iceberg_tables(catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT
 *       NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000),
 *       previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5),
 *       PRIMARY KEY (catalog_name, table_namespace, table_name))
 *   iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL, namespace
 *       VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, property_value
 *       VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, property_key))
 *
 * A database created by PyIceberg has no iceberg_type column; floe then reads and writes
 * it without one (and never alters a schema it did not create). Where the column exists,
 * rows with iceberg_type 'VIEW' are not tables and are left alone.
 *
 * Semantics follow those catalogs: a namespace exists when a table or a property row
 * names it or a child of it; creating a namespace without properties stores
 * exists=true; the commit is
 *   UPDATE iceberg_tables SET metadata_location = new, previous_metadata_location = old
 *   WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
 *     AND metadata_location = old
 * and 0 changed rows is a conflict.
 *
 * The SQL text lives here, the database calls in the driver (sqlite_driver.c,
 * pg_driver.c), so every store runs the same statements. The DDL is the same on both:
 * PostgreSQL gets the VARCHAR lengths PyIceberg's SQLAlchemy models and Java's JdbcUtil
 * declare (SQLite ignores them; floe enforces them in catalog.c for every store).
 *
 * Transactions: a statement alone is its own transaction (autocommit); several that
 * belong together (namespace properties, a swap with its hook) run between begin and
 * commit, or join the caller's transaction on the catalog's connection (floe_catalog_sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "floe/io.h"
#include "sql_driver.h"

/* ---------------------------------------------------------------------------------------
 * SQL text
 * ------------------------------------------------------------------------------------- */

static const char SQL_CREATE_TABLES[] =
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, "
    "metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), "
    "iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";

static const char SQL_CREATE_NAMESPACE_PROPERTIES[] =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, "
    "property_value VARCHAR(1000) NOT NULL, "
    "PRIMARY KEY (catalog_name, namespace, property_key))";

/* floe's own per-catalog settings; "warehouse" is the warehouse the catalog was first
 * used with (floe_catalog_moved_from). */
static const char SQL_CREATE_FLOE_PROPERTIES[] =
    "CREATE TABLE IF NOT EXISTS floe_catalog_properties ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, "
    "property_value VARCHAR(1000) NOT NULL, "
    "PRIMARY KEY (catalog_name, property_key))";
static const char SQL_FLOE_PROPERTY_GET[] =
    "SELECT property_value FROM floe_catalog_properties WHERE catalog_name = ? AND "
    "property_key = ?";
static const char SQL_FLOE_PROPERTY_PUT[] =
    "INSERT INTO floe_catalog_properties (catalog_name, property_key, property_value) "
    "VALUES (?, ?, ?) ON CONFLICT (catalog_name, property_key) DO UPDATE SET "
    "property_value = excluded.property_value";
static const char SQL_ALL_POINTERS[] =
    "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ?";

/* Appended where the iceberg_type column exists. */
#define TABLES_ONLY " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"

#define SQL_LOAD_TABLE_BASE                                                            \
    "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "        \
    "table_namespace = ? AND table_name = ?"
#define SQL_LIST_TABLES_BASE                                                           \
    "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "               \
    "table_namespace = ?"
#define SQL_SWAP_BASE                                                                  \
    "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? " \
    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND "          \
    "metadata_location = ?"
#define SQL_RENAME_BASE                                                                \
    "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE "            \
    "catalog_name = ? AND table_namespace = ? AND table_name = ?"
#define SQL_DROP_BASE                                                                  \
    "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND "  \
    "table_name = ?"

#define SQL_EACH_TABLE_BASE                                                            \
    "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE " \
    "catalog_name = ? AND metadata_location IS NOT NULL"

typedef struct sql_text {
    const char *load_table, *list_tables, *each_table, *swap, *rename, *drop, *drop_at,
        *insert;
} sql_text;

static const sql_text SQL_V1 = {
    SQL_LOAD_TABLE_BASE TABLES_ONLY,
    SQL_LIST_TABLES_BASE TABLES_ONLY " ORDER BY table_name",
    SQL_EACH_TABLE_BASE TABLES_ONLY,
    SQL_SWAP_BASE TABLES_ONLY,
    SQL_RENAME_BASE TABLES_ONLY,
    SQL_DROP_BASE TABLES_ONLY,
    SQL_DROP_BASE " AND metadata_location = ?" TABLES_ONLY,
    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
    "metadata_location, previous_metadata_location, iceberg_type) "
    "VALUES (?, ?, ?, ?, NULL, 'TABLE')",
};

static const sql_text SQL_V0 = {
    SQL_LOAD_TABLE_BASE,
    SQL_LIST_TABLES_BASE " ORDER BY table_name",
    SQL_EACH_TABLE_BASE,
    SQL_SWAP_BASE,
    SQL_RENAME_BASE,
    SQL_DROP_BASE,
    SQL_DROP_BASE " AND metadata_location = ?",
    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
    "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)",
};

/* '!' escapes LIKE wildcards in namespace names (PyIceberg does the same). */
static const char SQL_NS_IN_TABLES[] =
    "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR "
    "table_namespace LIKE ? ESCAPE '!') LIMIT 1";
static const char SQL_NS_IN_PROPERTIES[] =
    "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND (namespace = ? "
    "OR namespace LIKE ? ESCAPE '!') LIMIT 1";
static const char SQL_CHILD_IN_TABLES[] =
    "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR "
    "table_namespace LIKE ? ESCAPE '!') LIMIT 1";
static const char SQL_CHILD_NS_IN_PROPERTIES[] =
    "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace LIKE ? "
    "ESCAPE '!' LIMIT 1";
static const char SQL_ALL_NAMESPACES[] =
    "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? UNION "
    "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?";
static const char SQL_NS_PROPERTIES[] =
    "SELECT property_key, property_value FROM iceberg_namespace_properties WHERE "
    "catalog_name = ? AND namespace = ? ORDER BY property_key";
static const char SQL_NS_PROPERTY_INSERT[] =
    "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
    "property_value) VALUES (?, ?, ?, ?)";
static const char SQL_NS_PROPERTY_DELETE[] =
    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? AND "
    "property_key = ?";
static const char SQL_NS_PROPERTIES_DELETE_ALL[] =
    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?";

/* ---------------------------------------------------------------------------------------
 * store
 * ------------------------------------------------------------------------------------- */

typedef struct sql_store {
    floe_sql *db; /* the one connection of this catalog handle */
    const sql_text *sql;
    floe_catalog_swap_hook_fn swap_hook; /* floe_catalog_set_swap_hook */
    void *swap_hook_ctx;
    floe_catalog_change_hook_fn change_hook; /* floe_catalog_set_change_hook */
    void *change_hook_ctx;
} sql_store;

static sql_store *store(floe_catalog *c) { return c->impl; }

/* Several statements as one change. When the caller already holds a transaction on the
 * catalog's connection (floe_catalog_sql + floe_sql_begin) they join it and the caller
 * commits; otherwise they get their own. */
static int tx_open(sql_store *s, bool *own, floe_error *err) {
    *own = !floe_sql_in_transaction(s->db);
    return *own ? floe_sql_begin(s->db, err) : 0;
}

static int tx_close(sql_store *s, bool own, int rc, floe_error *err) {
    if (!own)
        return rc;
    if (rc == 0)
        return floe_sql_commit(s->db, err);
    floe_sql_rollback(s->db);
    return rc;
}

static int row_exists(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)cols;
    (void)n;
    (void)err;
    *(bool *)ctx = true;
    return 0;
}

static int row_first_text(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    char **out = ctx;
    if (*out)
        return 0;
    if (n < 1 || !cols[0])
        return floe_error_set(err, FLOE_ENOTFOUND, "catalog row without metadata_location");
    *out = floe_strdup(cols[0]);
    return *out ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

static int row_push_first(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    if (n < 1 || !cols[0])
        return 0;
    return floe_strlist_push(ctx, cols[0], err);
}

/* "ns" -> "ns.%" with LIKE wildcards in ns escaped by '!'. Caller frees. */
static char *like_children(const char *ns) {
    size_t n = strlen(ns);
    char *p = floe_malloc(2 * n + 3);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ns[i] == '!' || ns[i] == '%' || ns[i] == '_')
            p[k++] = '!';
        p[k++] = ns[i];
    }
    p[k++] = '.';
    p[k++] = '%';
    p[k] = '\0';
    return p;
}

static int sql_namespace_exists(floe_catalog *c, const char *ns, bool *exists, floe_error *err) {
    sql_store *s = store(c);
    char *like = like_children(ns);
    if (!like)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    const char *params[] = {c->name, ns, like};
    bool found = false;
    int rc = floe_sql_query(s->db, SQL_NS_IN_TABLES, params, 3, row_exists, &found, err);
    if (rc == 0 && !found)
        rc = floe_sql_query(s->db, SQL_NS_IN_PROPERTIES, params, 3, row_exists, &found, err);
    floe_free(like);
    if (rc == 0)
        *exists = found;
    return rc;
}

/* Inside a transaction: the changes that depend on namespace ns existing (or being empty)
 * take turns. SQLite's write transactions already do (BEGIN IMMEDIATE takes the database's
 * write lock); PostgreSQL's read committed ones take a transaction-level advisory lock
 * keyed by the catalog and namespace, held to commit or rollback, so the check that
 * follows sees what the other committed. Taken by the drop of ns (its emptiness check and
 * delete) and by what adds a table to ns (register, the rename into ns). */
static int namespace_turn(floe_catalog *c, const char *ns, floe_error *err) {
    sql_store *s = store(c);
    if (strcmp(floe_sql_dialect(s->db), "postgresql"))
        return 0;
    char *key = floe_asprintf("floe namespace %s\x1f%s", c->name, ns);
    if (!key)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    const char *params[] = {key};
    bool row = false;
    int rc = floe_sql_query(s->db, "SELECT pg_advisory_xact_lock(hashtext(?)) IS NULL", params, 1,
                            row_exists, &row, err);
    floe_free(key);
    return rc;
}

static int require_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    bool exists;
    int rc = sql_namespace_exists(c, ns, &exists, err);
    if (rc == 0 && !exists)
        rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace %s does not exist", ns);
    return rc;
}

typedef struct ns_list_ctx {
    const char *parent; /* NULL = top level */
    floe_strlist *out;
} ns_list_ctx;

static int row_namespace(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    ns_list_ctx *l = ctx;
    if (n < 1 || !cols[0])
        return 0;
    const char *ns = cols[0];
    size_t plen = l->parent ? strlen(l->parent) : 0;
    const char *rest = ns;
    if (l->parent) {
        if (strncmp(ns, l->parent, plen) || ns[plen] != '.')
            return 0; /* not below parent (LIKE-free filtering, so '_' cannot match) */
        rest = ns + plen + 1;
    }
    const char *dot = strchr(rest, '.');
    size_t len = (size_t)(rest - ns) + (dot ? (size_t)(dot - rest) : strlen(rest));
    char *child = floe_strndup(ns, len);
    if (!child)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->out->n; i++)
        if (!strcmp(l->out->items[i], child)) {
            floe_free(child);
            return 0;
        }
    int rc = floe_strlist_push(l->out, child, err);
    floe_free(child);
    return rc;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int sql_list_namespaces(floe_catalog *c, const char *parent, floe_strlist *out,
                               floe_error *err) {
    sql_store *s = store(c);
    if (parent)
        FLOE_FORWARD_IF_ERROR(require_namespace(c, parent, err));
    ns_list_ctx l = {parent, out};
    const char *params[] = {c->name, c->name};
    int rc = floe_sql_query(s->db, SQL_ALL_NAMESPACES, params, 2, row_namespace, &l, err);
    if (rc == 0 && out->n > 1)
        qsort(out->items, out->n, sizeof *out->items, cmp_str);
    return rc;
}

static int sql_create_namespace(floe_catalog *c, const char *ns, const char *const *keys,
                                const char *const *values, size_t n, floe_error *err) {
    sql_store *s = store(c);
    bool exists;
    int rc = sql_namespace_exists(c, ns, &exists, err);
    if (rc < 0)
        return rc;
    if (exists)
        return floe_error_set(err, FLOE_EEXISTS, "namespace %s already exists", ns);
    static const char *const min_key[] = {"exists"}, *const min_value[] = {"true"};
    if (n == 0) { /* PyIceberg's NAMESPACE_MINIMAL_PROPERTIES */
        keys = min_key;
        values = min_value;
        n = 1;
    }
    bool own;
    FLOE_FORWARD_IF_ERROR(tx_open(s, &own, err));
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *params[] = {c->name, ns, keys[i], values[i]};
        rc = floe_sql_exec(s->db, SQL_NS_PROPERTY_INSERT, params, 4, NULL, err);
    }
    rc = tx_close(s, own, rc, err);
    if (rc == FLOE_EEXISTS)
        floe_error_set(err, FLOE_EEXISTS, "namespace %s already exists", ns);
    return rc;
}

/* The emptiness check and the delete in one transaction, in turn with the registers into
 * ns (namespace_turn): a table registered meanwhile makes the drop FLOE_EINVALID, never a
 * drop of the properties under a table that then keeps the namespace alive. */
static int sql_drop_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    sql_store *s = store(c);
    char *like = like_children(ns);
    if (!like)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    bool own;
    int rc = tx_open(s, &own, err);
    if (rc < 0) {
        floe_free(like);
        return rc;
    }
    rc = namespace_turn(c, ns, err);
    if (rc == 0)
        rc = require_namespace(c, ns, err);
    bool non_empty = false;
    const char *p3[] = {c->name, ns, like};
    const char *p2[] = {c->name, like};
    if (rc == 0)
        rc = floe_sql_query(s->db, SQL_CHILD_IN_TABLES, p3, 3, row_exists, &non_empty, err);
    if (rc == 0 && !non_empty)
        rc = floe_sql_query(s->db, SQL_CHILD_NS_IN_PROPERTIES, p2, 2, row_exists, &non_empty, err);
    if (rc == 0 && non_empty)
        rc = floe_error_set(err, FLOE_EINVALID,
                            "namespace %s is not empty (it holds tables or namespaces)", ns);
    const char *params[] = {c->name, ns};
    if (rc == 0)
        rc = floe_sql_exec(s->db, SQL_NS_PROPERTIES_DELETE_ALL, params, 2, NULL, err);
    floe_free(like);
    return tx_close(s, own, rc, err);
}

typedef struct kv_ctx {
    floe_strlist *keys, *values;
} kv_ctx;

static int row_kv(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    kv_ctx *k = ctx;
    if (n < 2 || !cols[0])
        return 0;
    int rc = floe_strlist_push(k->keys, cols[0], err);
    if (rc == 0)
        rc = floe_strlist_push(k->values, cols[1] ? cols[1] : "", err);
    return rc;
}

static int sql_load_namespace_properties(floe_catalog *c, const char *ns, floe_strlist *keys,
                                         floe_strlist *values, floe_error *err) {
    sql_store *s = store(c);
    FLOE_FORWARD_IF_ERROR(require_namespace(c, ns, err));
    kv_ctx k = {keys, values};
    const char *params[] = {c->name, ns};
    return floe_sql_query(s->db, SQL_NS_PROPERTIES, params, 2, row_kv, &k, err);
}

static int sql_update_namespace_properties(floe_catalog *c, const char *ns,
                                           const char *const *removals, size_t nrem,
                                           const char *const *keys, const char *const *values,
                                           size_t n, floe_error *err) {
    sql_store *s = store(c);
    FLOE_FORWARD_IF_ERROR(require_namespace(c, ns, err));
    bool own;
    FLOE_FORWARD_IF_ERROR(tx_open(s, &own, err));
    int rc = 0;
    for (size_t i = 0; i < nrem && rc == 0; i++) {
        const char *params[] = {c->name, ns, removals[i]};
        rc = floe_sql_exec(s->db, SQL_NS_PROPERTY_DELETE, params, 3, NULL, err);
    }
    for (size_t i = 0; i < n && rc == 0; i++) { /* delete + insert: an engine-neutral upsert */
        const char *del[] = {c->name, ns, keys[i]};
        const char *ins[] = {c->name, ns, keys[i], values[i]};
        rc = floe_sql_exec(s->db, SQL_NS_PROPERTY_DELETE, del, 3, NULL, err);
        if (rc == 0)
            rc = floe_sql_exec(s->db, SQL_NS_PROPERTY_INSERT, ins, 4, NULL, err);
    }
    /* a namespace without tables exists by its property rows: removing the last one (the
     * marker exists=true included) must not drop it, so the marker comes back */
    bool any = false;
    const char *params[] = {c->name, ns};
    if (rc == 0)
        rc = floe_sql_query(s->db, SQL_NS_PROPERTIES, params, 2, row_exists, &any, err);
    if (rc == 0 && !any) {
        const char *ins[] = {c->name, ns, "exists", "true"};
        rc = floe_sql_exec(s->db, SQL_NS_PROPERTY_INSERT, ins, 4, NULL, err);
    }
    return tx_close(s, own, rc, err);
}

static int sql_list_tables(floe_catalog *c, const char *ns, floe_strlist *names,
                           floe_error *err) {
    sql_store *s = store(c);
    FLOE_FORWARD_IF_ERROR(require_namespace(c, ns, err));
    const char *params[] = {c->name, ns};
    int rc = floe_sql_query(s->db, s->sql->list_tables, params, 2, row_push_first, names, err);
    /* byte order whatever the database's collation (PostgreSQL's may be a locale's) */
    if (rc == 0 && names->n > 1)
        qsort(names->items, names->n, sizeof *names->items, cmp_str);
    return rc;
}

static int sql_load_table(floe_catalog *c, const char *ns, const char *name, char **location,
                          floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {c->name, ns, name};
    char *loc = NULL;
    int rc = floe_sql_query(s->db, s->sql->load_table, params, 3, row_first_text, &loc, err);
    if (rc < 0) {
        floe_free(loc);
        return rc;
    }
    if (!loc)
        return floe_error_set(err, FLOE_ENOTFOUND, "table %s.%s does not exist in catalog %s", ns,
                              name, c->name);
    *location = loc;
    return 0;
}

typedef struct each_ctx {
    floe_catalog_table_fn fn;
    void *ctx;
} each_ctx;

static int row_each(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    each_ctx *e = ctx;
    if (ncols < 3 || !cols[0] || !cols[1] || !cols[2])
        return 0;
    return e->fn(e->ctx, cols[0], cols[1], cols[2], err);
}

static int sql_each_table(floe_catalog *c, floe_catalog_table_fn fn, void *ctx,
                          floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {c->name};
    each_ctx e = {fn, ctx};
    return floe_sql_query(s->db, s->sql->each_table, params, 1, row_each, &e, err);
}

static int sql_new_metadata_location(floe_catalog *c, const char *metadata_dir,
                                     const char *base, bool gzip, char **out, floe_error *err) {
    (void)c;
    return floe_catalog_uuid_metadata_location(metadata_dir, base, gzip, out, err);
}

/* A hook's result inside a transaction not committed yet: its FLOE_EUNKNOWN_STATE cannot
 * have been applied, so it is an I/O error. */
static int hook_result(int rc, floe_error *err) {
    if (rc == FLOE_EUNKNOWN_STATE) {
        if (err)
            err->code = FLOE_EIO;
        rc = FLOE_EIO;
    }
    return rc;
}

/* One statement that registers, renames or drops a table (params as the statement
 * takes them; *changed its row count), and the change hook after it in one transaction
 * when there is a hook (or inside the caller's). */
static int table_change(floe_catalog *c, const char *stmt, const char *const *params,
                        size_t nparams, int64_t *changed, floe_catalog_change kind,
                        const char *ns, const char *name, const char *to_ns,
                        const char *to_name, const char *location, floe_error *err) {
    sql_store *s = store(c);
    bool own = false;
    bool tx = s->change_hook != NULL;
    int rc = tx ? tx_open(s, &own, err) : 0;
    if (rc < 0)
        return rc;
    rc = floe_sql_exec(s->db, stmt, params, nparams, changed, err);
    if (rc == 0 && s->change_hook && (kind == FLOE_CATALOG_CHANGE_REGISTER || *changed > 0)) {
        rc = hook_result(s->change_hook(s->change_hook_ctx, s->db, kind, ns, name, to_ns,
                                        to_name, location, err),
                         err);
    }
    if (tx)
        rc = tx_close(s, own, rc, err);
    return rc;
}

/* The namespace's existence is checked in the transaction that inserts the row, in turn
 * with a drop of the namespace (namespace_turn): a register and a drop racing end as one
 * of "registered, the drop refused" or "dropped, the register FLOE_ENOTFOUND". */
static int sql_register_table(floe_catalog *c, const char *ns, const char *name,
                              const char *metadata_location, floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {c->name, ns, name, metadata_location};
    int64_t changed = 0;
    bool own;
    FLOE_FORWARD_IF_ERROR(tx_open(s, &own, err));
    int rc = namespace_turn(c, ns, err);
    if (rc == 0)
        rc = require_namespace(c, ns, err);
    if (rc == 0)
        rc = table_change(c, s->sql->insert, params, 4, &changed, FLOE_CATALOG_CHANGE_REGISTER,
                          ns, name, NULL, NULL, metadata_location, err);
    rc = tx_close(s, own, rc, err);
    if (rc == FLOE_EEXISTS)
        return floe_error_set(err, FLOE_EEXISTS, "table %s.%s already exists", ns, name);
    return rc;
}

static int sql_rename_table(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                            const char *to_name, floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {to_ns, to_name, c->name, ns, name};
    int64_t changed = 0;
    bool own;
    FLOE_FORWARD_IF_ERROR(tx_open(s, &own, err));
    /* as a register: the target namespace checked in turn with its drop */
    int rc = namespace_turn(c, to_ns, err);
    if (rc == 0)
        rc = require_namespace(c, to_ns, err);
    if (rc == 0)
        rc = table_change(c, s->sql->rename, params, 5, &changed, FLOE_CATALOG_CHANGE_RENAME,
                          ns, name, to_ns, to_name, NULL, err);
    rc = tx_close(s, own, rc, err);
    if (rc == FLOE_EEXISTS)
        return floe_error_set(err, FLOE_EEXISTS, "table %s.%s already exists", to_ns, to_name);
    if (rc == 0 && changed == 0)
        return floe_error_set(err, FLOE_ENOTFOUND, "table %s.%s does not exist", ns, name);
    return rc;
}

static int sql_drop_table(floe_catalog *c, const char *ns, const char *name, floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {c->name, ns, name};
    int64_t changed = 0;
    int rc = table_change(c, s->sql->drop, params, 3, &changed, FLOE_CATALOG_CHANGE_DROP, ns,
                          name, NULL, NULL, NULL, err);
    if (rc == 0 && changed == 0)
        return floe_error_set(err, FLOE_ENOTFOUND, "table %s.%s does not exist", ns, name);
    return rc;
}

/* The drop and its condition are one DELETE: a swap that lands before it leaves the row
 * unmatched, one after it finds no row. Only when nothing was deleted is the pointer read
 * again, to tell a moved pointer from a missing table. */
static int sql_drop_table_at(floe_catalog *c, const char *ns, const char *name,
                             const char *expected, floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {c->name, ns, name, expected};
    int64_t changed = 0;
    int rc = table_change(c, s->sql->drop_at, params, 4, &changed, FLOE_CATALOG_CHANGE_DROP,
                          ns, name, NULL, NULL, NULL, err);
    if (rc < 0 || changed > 0)
        return rc;
    char *now = NULL;
    rc = sql_load_table(c, ns, name, &now, err);
    if (rc == 0)
        rc = floe_error_set(err, FLOE_ECONFLICT,
                            "table %s.%s: metadata is no longer %s but %s (a commit landed); "
                            "not dropped", ns, name, expected, now);
    floe_free(now);
    return rc;
}

static int sql_swap(floe_catalog *c, const char *ns, const char *name, const char *expected,
                    const char *new_location, floe_error *err) {
    sql_store *s = store(c);
    const char *params[] = {new_location, expected, c->name, ns, name, expected};
    int64_t changed = 0;
    /* With a hook, the UPDATE and the hook's statements commit together; inside the
     * caller's transaction they join it. Alone, the UPDATE is its own (autocommit)
     * transaction, so an unknown outcome is reported by exec itself. */
    bool own = false;
    bool tx = s->swap_hook || floe_sql_in_transaction(s->db);
    int rc = tx ? tx_open(s, &own, err) : 0;
    if (rc < 0)
        return rc;
    rc = floe_sql_exec(s->db, s->sql->swap, params, 6, &changed, err);
    if (rc == 0 && changed == 0)
        rc = floe_error_set(err, FLOE_ECONFLICT,
                            "table %s.%s: metadata is no longer %s (another commit won)", ns,
                            name, expected);
    else if (rc == 0 && changed > 1)
        rc = floe_error_set(err, FLOE_EINTERNAL, "table %s.%s: swap changed %lld rows", ns,
                            name, (long long)changed);
    if (rc == 0 && s->swap_hook) {
        rc = hook_result(
            s->swap_hook(s->swap_hook_ctx, s->db, ns, name, expected, new_location, err), err);
    }
    if (tx)
        rc = tx_close(s, own, rc, err);
    /* FLOE_EBUSY, FLOE_ECONFLICT (also serialization failures and deadlocks), and
     * FLOE_EUNKNOWN_STATE pass through as floe_catalog_swap documents them. */
    return rc;
}

floe_sql *floe_catalog_sql(floe_catalog *c) {
    return c && c->ops->swap == sql_swap ? store(c)->db : NULL;
}

const floe_sql_options *floe_catalog_sql_options(const floe_catalog *c) {
    return &c->sql_opts;
}

int floe_catalog_set_change_hook(floe_catalog *c, floe_catalog_change_hook_fn fn, void *ctx,
                                 floe_error *err) {
    if (!c || c->ops->swap != sql_swap)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "change hooks need a SQL catalog (SQLite or PostgreSQL)");
    store(c)->change_hook = fn;
    store(c)->change_hook_ctx = fn ? ctx : NULL;
    return 0;
}

int floe_catalog_set_swap_hook(floe_catalog *c, floe_catalog_swap_hook_fn fn, void *ctx,
                               floe_error *err) {
    if (!c || c->ops->swap != sql_swap)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "swap hooks need a SQL catalog (SQLite or PostgreSQL)");
    store(c)->swap_hook = fn;
    store(c)->swap_hook_ctx = fn ? ctx : NULL;
    return 0;
}

/* Two spellings of one local folder (a symbolic link on the way) are one warehouse. */
static bool same_warehouse(const char *a, const char *b) {
    char *ka = floe_io_uri_key(a), *kb = floe_io_uri_key(b);
    bool same = ka && kb && !strcmp(ka, kb);
    floe_free(ka);
    floe_free(kb);
    if (same)
        return true;
    char *la = floe_io_local_path(a), *lb = floe_io_local_path(b);
    char *ra = la ? realpath(la, NULL) : NULL, *rb = lb ? realpath(lb, NULL) : NULL;
    same = ra && rb && !strcmp(ra, rb);
    free(ra); /* realpath's allocations */
    free(rb);
    floe_free(la);
    floe_free(lb);
    return same;
}

typedef struct under_ctx {
    const char *prefix;
    bool found;
} under_ctx;

static int row_under(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    under_ctx *u = ctx;
    if (n >= 1 && cols[0] && !floe_io_uri_is_relative(cols[0]) &&
        floe_io_uri_within(cols[0], u->prefix))
        u->found = true;
    return 0;
}

int floe_sql_catalog_note_warehouse(floe_catalog *c, floe_error *err) {
    sql_store *s = store(c);
    const char *key[] = {c->name, "warehouse"};
    char *recorded = NULL;
    int rc = floe_sql_query(s->db, SQL_FLOE_PROPERTY_GET, key, 2, row_first_text, &recorded, err);
    if (rc < 0)
        return rc;
    floe_free(c->moved_from);
    c->moved_from = NULL;
    bool record = !recorded;
    if (recorded && !same_warehouse(recorded, c->warehouse)) {
        /* tables left under the recorded warehouse keep it; once none is, the record
         * follows the configuration */
        under_ctx u = {recorded, false};
        const char *params[] = {c->name};
        rc = floe_sql_query(s->db, SQL_ALL_POINTERS, params, 1, row_under, &u, err);
        if (rc < 0) {
            floe_free(recorded);
            return rc;
        }
        if (u.found) {
            c->moved_from = recorded;
            recorded = NULL;
        } else {
            record = true;
        }
    }
    floe_free(recorded);
    if (record) {
        /* best effort: a read-only catalog database is still usable */
        const char *params[] = {c->name, "warehouse", c->warehouse};
        floe_error e2;
        floe_error_clear(&e2);
        if (floe_sql_exec(s->db, SQL_FLOE_PROPERTY_PUT, params, 3, NULL, &e2) < 0)
            floe_log(FLOE_LOG_DEBUG, "catalog %s: warehouse not recorded: %s", c->name, e2.msg);
    }
    return 0;
}

static void sql_close(floe_catalog *c) {
    sql_store *s = store(c);
    if (!s)
        return;
    floe_sql_close(s->db);
    floe_free(s);
}

static int sql_ping(floe_catalog *c, floe_error *err) {
    bool any = false;
    return floe_sql_query(store(c)->db, "SELECT 1", NULL, 0, row_exists, &any, err);
}

static const floe_catalog_ops sql_ops = {
    .type = "sql",
    .ping = sql_ping,
    .swap_by_create = false,
    .swap_outcome_final = true,
    .list_namespaces = sql_list_namespaces,
    .namespace_exists = sql_namespace_exists,
    .create_namespace = sql_create_namespace,
    .drop_namespace = sql_drop_namespace,
    .load_namespace_properties = sql_load_namespace_properties,
    .update_namespace_properties = sql_update_namespace_properties,
    .list_tables = sql_list_tables,
    .load_table = sql_load_table,
    .each_table = sql_each_table,
    .new_metadata_location = sql_new_metadata_location,
    .register_table = sql_register_table,
    .rename_table = sql_rename_table,
    .drop_table = sql_drop_table,
    .drop_table_at = sql_drop_table_at,
    .swap = sql_swap,
    .close = sql_close,
};

int floe_sql_catalog_open(floe_sql *db, const char *name, const char *warehouse,
                          floe_catalog **out, floe_error *err) {
    sql_store *s = floe_calloc(1, sizeof *s);
    if (!s) {
        floe_sql_close(db);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    s->db = db;
    floe_catalog *c = NULL;
    int rc = floe_catalog_alloc(&sql_ops, name, warehouse, &c, err);
    if (rc < 0) {
        floe_sql_close(db);
        floe_free(s);
        return rc;
    }
    c->impl = s;
    c->swap_outcome_final = db->drv->outcome_final;
    /* CREATE TABLE IF NOT EXISTS leaves a PyIceberg-made table (no iceberg_type) as it
     * is; the column check below then picks the statements without the column. Two
     * processes creating the tables at once on PostgreSQL can see a unique violation in
     * its system catalogs: then the table exists, which is all we want. */
    bool has_type = false;
    rc = floe_sql_exec(db, SQL_CREATE_TABLES, NULL, 0, NULL, err);
    if (rc == FLOE_EEXISTS)
        rc = 0;
    FLOE_CHECK(rc);
    rc = floe_sql_exec(db, SQL_CREATE_NAMESPACE_PROPERTIES, NULL, 0, NULL, err);
    if (rc == FLOE_EEXISTS)
        rc = 0;
    FLOE_CHECK(rc);
    FLOE_CHECK(db->drv->has_column(db->conn, "iceberg_tables", "iceberg_type", &has_type, err));
    s->sql = has_type ? &SQL_V1 : &SQL_V0;
    rc = floe_sql_exec(db, SQL_CREATE_FLOE_PROPERTIES, NULL, 0, NULL, err);
    if (rc == FLOE_EEXISTS)
        rc = 0;
    FLOE_CHECK(rc);
    FLOE_CHECK(floe_sql_catalog_note_warehouse(c, err));
done:
    if (rc < 0) {
        if (rc == FLOE_EUNKNOWN_STATE && err) /* not a commit: plain i/o failure */
            err->code = rc = FLOE_EIO;
        floe_error_prefix(err, "catalog %s: ", c->name);
        floe_catalog_close(c);
        return rc;
    }
    *out = c;
    return 0;
}
