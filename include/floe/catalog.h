/*
 * floe/catalog.h - where tables are: the catalog interface and its stores.
 *
 * A catalog maps a table identifier (namespace + name) to the location of the table's
 * current metadata file, and moves that pointer only by compare-and-swap (format/spec.md
 * "Metastore Tables", "File System Tables"). Stores:
 *
 *   sql         SQLite file or PostgreSQL database with the tables PyIceberg's SqlCatalog
 *               and Iceberg Java's JdbcCatalog use (iceberg_tables,
 *               iceberg_namespace_properties), so the same database is usable by those
 *               catalogs. The pointer swap is UPDATE ... WHERE metadata_location =
 *               <expected>. The database connection is reachable for other shared state
 *               (floe/sql.h: landing index, swap hooks; floe/lease.h: leases).
 *   filesystem  Hadoop layout: <warehouse>/<ns...>/<table>/metadata/vN.metadata.json plus
 *               version-hint.text. The swap is the atomic create-if-absent of v(N+1).
 *   rest        an Iceberg REST catalog (apache/iceberg open-api/rest-catalog-open-api.yaml)
 *               at an http(s):// uri. It holds the pointer itself and commits by
 *               requirements and updates (floe_catalog_commit_changes), not by a swap;
 *               the server writes the new metadata file.
 *
 * Namespaces are dotted strings ("a.b" = levels a, b), as the SQL catalogs store them.
 *
 * Errors: FLOE_ENOTFOUND (no such table/namespace), FLOE_EEXISTS (already exists),
 * FLOE_EINVALID (bad name, namespace not empty), FLOE_EUNSUPPORTED (operation the store
 * cannot do), FLOE_EBUSY (database locked past the busy timeout; nothing changed),
 * FLOE_ECONFLICT and FLOE_EUNKNOWN_STATE from floe_catalog_swap (see there).
 *
 * Configuration (floe_catalog_config_load), first match wins:
 *   1. environment: FLOE_CATALOG_URI (sqlite:///path, a .db path,
 *      postgresql://user:pass@host:port/db or postgres://..., http(s)://... for a REST
 *      catalog, or file:// / a folder with FLOE_CATALOG_TYPE=filesystem),
 *      FLOE_CATALOG_TYPE, FLOE_WAREHOUSE, FLOE_CATALOG (catalog name; default
 *      "default"), FLOE_CATALOG_TOKEN and FLOE_CATALOG_CREDENTIAL (rest: token,
 *      credential), FLOE_STATE_DB (rest: state-db);
 *   2. a floe config file: FLOE_CONFIG, else ./floe.conf. Format (INI-like):
 *          # comment
 *          [catalog.<name>]
 *          type = sql | filesystem | rest
 *          uri = sqlite:///abs/path/catalog.db   (sql; or postgresql://...; rest: http(s)://)
 *          warehouse = /abs/or/relative/folder
 *          token = ..., credential = id:secret, scope, oauth2-server-uri, prefix,
 *          header.<Name> = value                 (rest)
 *          state-db = /path/state.db | postgresql://...  (rest: leases, landing index)
 *      A top-level `catalog = <name>` line picks the default catalog.
 *   3. PyIceberg's .pyiceberg.yaml ($PYICEBERG_HOME, then ~, then .), read as it is:
 *          catalog:
 *            <name>:
 *              type: sql
 *              uri: sqlite:///path/catalog.db    (or postgresql+psycopg2://u:p@h/db)
 *              warehouse: file:///path
 *      (a small YAML subset: nested maps of scalars, comments, quotes). A uri with
 *      http:// or https:// and no type is a REST catalog, as in PyIceberg; the REST
 *      keys are those of floe.conf above.
 *   4. the embedded default: warehouse ./warehouse, SQLite catalog
 *      ./warehouse/catalog.db, catalog name "default", tables at warehouse/<ns>/<table>.
 *
 * Ownership and threads: a floe_catalog owns its connection until floe_catalog_close.
 * Strings returned through char ** are the caller's (floe_free), lists through
 * floe_strlist (floe_strlist_free); const char * results are borrowed from the handle. A
 * handle is used by one thread at a time; threads that work concurrently open a handle
 * each.
 */
#ifndef FLOE_CATALOG_H
#define FLOE_CATALOG_H

#include <pthread.h>

#include "floe/common.h"
#include "floe/io.h"
#include "floe/sql.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_catalog floe_catalog;

/* A list of owned strings. */
typedef struct floe_strlist {
    char **items;
    size_t n;
    size_t cap; /* slots of items floe_strlist_push allocated (it grows them geometrically) */
} floe_strlist;
void floe_strlist_free(floe_strlist *l);
int floe_strlist_push(floe_strlist *l, const char *s, floe_error *err) FLOE_NODISCARD;

/* Settings of a REST catalog (PyIceberg's property names; docs/REST.md). */
typedef struct floe_rest_properties {
    char *token;             /* "token": bearer token sent on every request */
    char *credential;        /* "credential": client_id:client_secret (OAuth2 client
                                credentials; a value without ':' is the secret alone) */
    char *scope;             /* "scope" of the OAuth2 token request (default "catalog") */
    char *oauth2_server_uri; /* "oauth2-server-uri" (default <uri>/v1/oauth/tokens) */
    char *prefix;            /* "prefix" (the server's /v1/config overrides win) */
    char *sigv4_enabled;     /* "rest.sigv4-enabled": true signs every request (AWS
                                SigV4) with the keys of the catalog's I/O context */
    char *signing_region;    /* "rest.signing-region" (default: the context's S3 region) */
    char *signing_name;      /* "rest.signing-name" (default "execute-api"; AWS Glue:
                                "glue", S3 Tables: "s3tables") */
    char **header_names;     /* "header.<name>": extra request headers */
    char **header_values;
    size_t nheaders;
} floe_rest_properties;

/* Free the strings of p and clear it. Accepts NULL. */
void floe_rest_properties_reset(floe_rest_properties *p);
/* Take key = value (klen and vlen bytes) into p when key is one of the names above
 * ("header.<name>" adds a header; a name given twice: the last value): 1 when taken, 0
 * when key is not a REST catalog setting (p unchanged), FLOE_EINVALID (a header name
 * with other than HTTP's token characters, or a token or header value holding a control
 * character: CR or LF would inject request headers) or FLOE_ENOMEM. */
int floe_rest_properties_take(floe_rest_properties *p, const char *key, size_t klen,
                              const char *v, size_t vlen, floe_error *err) FLOE_NODISCARD;
/* Copy src into dst (cleared first; on failure dst is left cleared). */
int floe_rest_properties_copy(const floe_rest_properties *src, floe_rest_properties *dst,
                              floe_error *err) FLOE_NODISCARD;
/* Whether p sets anything. */
bool floe_rest_properties_any(const floe_rest_properties *p);

typedef struct floe_catalog_config {
    char *name;      /* catalog name (the catalog_name column of the SQL store) */
    char *type;      /* "sql", "filesystem" or "rest" */
    char *uri;       /* sql: sqlite:///path, a path, postgresql://...; filesystem: unused;
                        rest: the http(s):// base of the catalog */
    char *warehouse; /* folder or file:// uri where new tables go (rest: also the
                        warehouse asked for in GET /v1/config) */
    char *source;    /* where the settings came from ("env", a file path, "default") */
    floe_s3_properties s3; /* S3 properties of the entry (floe/io.h); the program builds
                              the I/O context from them (floe_io_options_apply_s3) */
    floe_io *io;     /* I/O context of the catalog and the tables loaded through it
                        (borrowed: it outlives the catalog; NULL: the default context) */
    floe_sql_options sql; /* options of the catalog's database connections (sql stores,
                             and the leases of every store); zero: the defaults */
    floe_rest_properties rest; /* rest: auth, prefix, headers */
    int test_commit_pause_ms; /* tests only (filesystem catalog): a commit waits this long
                                 between its look at the current version and its create of
                                 the next, the window a drop races; `floe catalog serve`
                                 sets it from FLOE_TEST_FS_COMMIT_PAUSE_MS (0..10000) */
    char *state_db;  /* rest: the database of what a REST catalog does not hold - leases
                        (commit priority, floe maintain's jobs, landing compaction) and
                        floe serve's landing index: a SQLite path, sqlite:///path or
                        postgresql://... ("state-db", FLOE_STATE_DB); NULL: none, and
                        commands that need leases refuse to run */
} floe_catalog_config;

/* Resolve the configuration of catalog `name` (NULL = the configured default) as
 * described above. config_path overrides the floe config file search (NULL = search).
 * The settings named above (FLOE_CATALOG_URI, FLOE_CONFIG, HOME, ...) are read through
 * env (NULL: none are set); the library reads no environment of its own, the floe
 * command passes getenv. out->io is left NULL: set it before floe_catalog_open. */
int floe_catalog_config_load(const char *name, const char *config_path, floe_io_lookup_fn env,
                             void *env_ctx, floe_catalog_config *out, floe_error *err)
    FLOE_NODISCARD;
void floe_catalog_config_reset(floe_catalog_config *cfg);

/* Parse .pyiceberg.yaml text and take catalog `name` (NULL = the first one, or the one
 * named by a top-level "default-catalog"). FLOE_ENOTFOUND if absent. Exposed for tests. */
int floe_catalog_config_from_pyiceberg_yaml(const char *text, size_t n, const char *name,
                                            floe_catalog_config *out, floe_error *err)
    FLOE_NODISCARD;
/* Same for the floe config file format. */
int floe_catalog_config_from_floe_conf(const char *text, size_t n, const char *name,
                                       floe_catalog_config *out, floe_error *err) FLOE_NODISCARD;

int floe_catalog_open(const floe_catalog_config *cfg, floe_catalog **out, floe_error *err)
    FLOE_NODISCARD;
/* SQLite store at db_path (created with its tables when missing). name = catalog_name. */
int floe_catalog_open_sqlite(floe_io *io, const char *db_path, const char *name, const char *warehouse,
                             floe_catalog **out, floe_error *err) FLOE_NODISCARD;
/* PostgreSQL store: uri is postgresql://user:pass@host:port/db (postgres:// and
 * postgresql+<driver>:// too; libpq's PG* environment variables and ~/.pgpass apply).
 * The tables are created when missing. One connection per handle, used by one thread at
 * a time; read-only calls reconnect when it broke, writes never re-send (an interrupted
 * swap is FLOE_EUNKNOWN_STATE, and the next read on the handle settles it: see
 * floe/sql.h). FLOE_EIO when the server cannot be reached. */
int floe_catalog_open_postgres(floe_io *io, const char *uri, const char *name, const char *warehouse,
                               floe_catalog **out, floe_error *err) FLOE_NODISCARD;
/* REST catalog at uri (http:// or https://): GET /v1/config first (with ?warehouse= when
 * warehouse is set), the server's defaults and overrides merged as the spec says
 * (prefix, uri, warehouse), its `endpoints` respected; OAuth2 client credentials
 * exchanged for a token when props has a credential. props may be NULL. FLOE_EIO when the
 * server cannot be reached, FLOE_EAUTH when it refuses the credentials. */
int floe_catalog_open_rest(floe_io *io, const char *uri, const char *name, const char *warehouse,
                           const floe_rest_properties *props, floe_catalog **out,
                           floe_error *err) FLOE_NODISCARD;
/* Filesystem (Hadoop) store rooted at warehouse (created when missing). In each open
 * function io is the I/O context of the catalog and its tables (borrowed; NULL: the
 * default). */
int floe_catalog_open_fs(floe_io *io, const char *warehouse, floe_catalog **out, floe_error *err)
    FLOE_NODISCARD;
void floe_catalog_close(floe_catalog *c);

const char *floe_catalog_name(const floe_catalog *c);
/* The catalog's I/O context (the default context when it was opened with NULL). */
floe_io *floe_catalog_io(const floe_catalog *c);
/* The I/O context of table ns.name as last loaded through c: its own when the catalog
 * vends it credentials (a REST catalog's X-Iceberg-Access-Delegation: docs/REST.md),
 * else floe_catalog_io(c). Valid until floe_catalog_close. */
floe_io *floe_catalog_table_io(floe_catalog *c, const char *ns, const char *name);
const char *floe_catalog_type(const floe_catalog *c);      /* "sql", "filesystem" */
/* The warehouse as an absolute URI (file:///abs or s3://...), whatever was configured. */
const char *floe_catalog_warehouse(const floe_catalog *c);
/* SQL stores record the warehouse they were first used with. When the catalog is opened
 * with another one while tables still lie under the recorded one, the warehouse was
 * moved or copied (or the configuration changed): this returns the recorded one, and
 * tables under it are loaded only through an explicit relocation (floe_table_load_ex).
 * NULL otherwise. The record follows the configured warehouse once no table is left
 * under the old one. */
const char *floe_catalog_moved_from(const floe_catalog *c);

/* Namespaces. parent NULL or "" lists top-level namespaces; otherwise the direct children
 * of parent, as full dotted names. */
int floe_catalog_list_namespaces(floe_catalog *c, const char *parent, floe_strlist *out,
                                 floe_error *err) FLOE_NODISCARD;
int floe_catalog_namespace_exists(floe_catalog *c, const char *ns, bool *exists,
                                  floe_error *err) FLOE_NODISCARD;
int floe_catalog_create_namespace(floe_catalog *c, const char *ns, const char *const *keys,
                                  const char *const *values, size_t n, floe_error *err)
    FLOE_NODISCARD;
/* Only an empty namespace (no tables, no child namespaces) can be dropped: FLOE_EINVALID
 * otherwise. On a SQL catalog the emptiness check and the drop are one transaction, taken
 * in turn with the registers and renames into ns (which check ns in the transaction that
 * inserts the table): of a drop and a create racing, either the drop is refused or the
 * register is FLOE_ENOTFOUND. */
int floe_catalog_drop_namespace(floe_catalog *c, const char *ns, floe_error *err) FLOE_NODISCARD;
int floe_catalog_load_namespace_properties(floe_catalog *c, const char *ns, floe_strlist *keys,
                                           floe_strlist *values, floe_error *err) FLOE_NODISCARD;
int floe_catalog_update_namespace_properties(floe_catalog *c, const char *ns,
                                             const char *const *removals, size_t nrem,
                                             const char *const *keys, const char *const *values,
                                             size_t n, floe_error *err) FLOE_NODISCARD;

/* Tables. */
int floe_catalog_list_tables(floe_catalog *c, const char *ns, floe_strlist *names,
                             floe_error *err) FLOE_NODISCARD;
/* The rules every namespace and table name reaching a store is held to (non-empty, at
 * most FLOE_CATALOG_NAME_MAX bytes, no control characters, '/' or '\\', no empty, "." or
 * ".." level, valid UTF-8): FLOE_EINVALID saying which is broken. ns or name may be NULL
 * (not checked). Every catalog call checks them; this is for refusing a name up front. */
int floe_catalog_check_names(const char *ns, const char *name, floe_error *err) FLOE_NODISCARD;
/* Called by floe_catalog_each_table once per table: its namespace, name and metadata
 * pointer as the catalog stores it (borrowed for the call). Non-zero stops the walk and is
 * returned. */
typedef int (*floe_catalog_table_fn)(void *ctx, const char *ns, const char *name,
                                     const char *metadata_location, floe_error *err);
/* Every table of the catalog, every namespace level, in no set order. With pointers, fn
 * gets each table's metadata pointer: the SQL stores read them in one query, the others
 * walk their namespaces and load each pointer (a table dropped meanwhile is left out);
 * fn must not call into c (an SQL store is then still reading its rows). Without, the
 * namespaces are walked, fn gets NULL for the pointer and may call into c. */
int floe_catalog_each_table(floe_catalog *c, bool with_pointers, floe_catalog_table_fn fn,
                            void *ctx, floe_error *err) FLOE_NODISCARD;
/* Current metadata location (caller frees). FLOE_ENOTFOUND when there is no such table. */
int floe_catalog_load_table(floe_catalog *c, const char *ns, const char *name,
                            char **metadata_location, floe_error *err) FLOE_NODISCARD;
/* The folder name floe gives a namespace level or a table name, level[0..n) (caller
 * frees): the name, with '#' and '?' percent-encoded (%23, %3F) so that a location
 * holding it means the same folder to a URI parser as to a path (a '#' would start a
 * fragment, a '?' a query); '%' stays, as every reader takes it. The filesystem
 * catalog's folders are its names: unchanged there.
 * FLOE_EINVALID when the folder name would be longer than FLOE_CATALOG_NAME_MAX (255)
 * bytes; FLOE_ENOMEM. */
int floe_catalog_folder_name(const floe_catalog *c, const char *level, size_t n, char **out,
                             floe_error *err) FLOE_NODISCARD;
/* Where a new table's files go when the caller gives no location (caller frees): the
 * namespace's "location" property + /<name> when it has one (SQL stores, as PyIceberg
 * and Iceberg Java), else <warehouse>/<ns levels>/<name>, each folder name as
 * floe_catalog_folder_name makes it. Always absolute. */
int floe_catalog_default_location(floe_catalog *c, const char *ns, const char *name,
                                  char **location, floe_error *err) FLOE_NODISCARD;
/* The absolute form of a location recorded in this catalog. Absolute ones are returned
 * as they are. Relative ones (earlier floe releases recorded them relative to the
 * folder they ran in) are resolved against the warehouse: a path holding the table's
 * "<ns levels>/<name>" folders (ns, name may be NULL) is taken from there under the
 * warehouse; a path starting with the warehouse's folder name is taken under the
 * warehouse; anything else is resolved against the folder holding the warehouse. Caller
 * frees. */
int floe_catalog_resolve_location(floe_catalog *c, const char *ns, const char *name,
                                  const char *recorded, char **out, floe_error *err) FLOE_NODISCARD;
/* The same against a warehouse given as an absolute URI (no catalog open). */
int floe_catalog_resolve_location_in(const char *warehouse, const char *ns, const char *name,
                                     const char *recorded, char **out, floe_error *err)
    FLOE_NODISCARD;
/* Name for the next metadata file of a table. metadata_dir is where the table keeps its
 * metadata (write.metadata.path, else <location>/metadata). SQL stores use
 * <metadata_dir>/NNNNN-<uuid>[.gz].metadata.json with NNNNN one above the base file's
 * number (base NULL: 00000). The filesystem store ignores metadata_dir once a base exists
 * (the next version must sit beside it): v<N+1>[.gz].metadata.json, base NULL: v1 in
 * metadata_dir. Caller frees. */
int floe_catalog_new_metadata_location(floe_catalog *c, const char *metadata_dir,
                                       const char *base_metadata_location, bool gzip,
                                       char **out, floe_error *err) FLOE_NODISCARD;
/* True when writing the new metadata file (create-if-absent) is itself the swap
 * (filesystem store): FLOE_EEXISTS from that write then means FLOE_ECONFLICT. */
bool floe_catalog_swap_by_create(const floe_catalog *c);
/* A lock that floe_table_commit holds over each attempt (refresh, apply, swap) on tables
 * of this handle, and never while it backs off. Handles of one process that share a gate
 * never make each other's commits conflict: floe serve gives its landing committer and
 * its maintenance thread (each with a handle of its own) one gate. NULL removes it. The
 * caller keeps the mutex alive while the handle commits, and must not hold it when
 * committing. */
void floe_catalog_set_commit_gate(floe_catalog *c, pthread_mutex_t *gate);
pthread_mutex_t *floe_catalog_commit_gate(const floe_catalog *c);
/* The largest table metadata document (compact JSON, before any gzip) a commit or create
 * through this handle may write; 0 (the default): no cap. floe catalog serve sets it
 * (--max-metadata-bytes, 16 MiB): a commit whose new metadata would be larger than the cap
 * and than the metadata it starts from is refused with FLOE_ELIMIT before anything is
 * written; a table already past it loads and may shrink (docs/DESIGN.md, "Property caps"). */
void floe_catalog_set_max_metadata_bytes(floe_catalog *c, size_t max);
size_t floe_catalog_max_metadata_bytes(const floe_catalog *c);
/* True when a swap call that has returned leaves nothing in flight, so reading the
 * pointer afterwards settles an FLOE_EUNKNOWN_STATE for good (SQLite, filesystem). */
bool floe_catalog_swap_outcome_final(const floe_catalog *c);
/* Register a table whose first metadata file is already written. FLOE_EEXISTS when the
 * name is taken; FLOE_ENOTFOUND when the namespace does not exist. */
int floe_catalog_register_table(floe_catalog *c, const char *ns, const char *name,
                                const char *metadata_location, floe_error *err) FLOE_NODISCARD;
/* Move a table (SQL stores only; the filesystem store cannot rename: FLOE_EUNSUPPORTED). */
int floe_catalog_rename_table(floe_catalog *c, const char *ns, const char *name,
                              const char *to_ns, const char *to_name, floe_error *err)
    FLOE_NODISCARD;
/* Forget a table. Files stay (purging is the caller's job: floe_table_drop_purge loads
 * the table and drops with floe_catalog_drop_table_at, so a commit racing the drop is not
 * lost). The filesystem store removes the metadata JSON files and the version hint (of a
 * name a drop at a version left claims on: FLOE_ENOTFOUND, the claims stay). */
int floe_catalog_drop_table(floe_catalog *c, const char *ns, const char *name,
                            floe_error *err) FLOE_NODISCARD;
/* Forget a table only if its metadata pointer is still `expected_metadata_location` (a
 * purge's compare-and-drop: the files it then deletes are exactly those that metadata
 * reaches, and a commit that moved the pointer keeps the table):
 *   0                 dropped;
 *   FLOE_ECONFLICT    the pointer is no longer `expected` (a commit landed): nothing
 *                     changed; reload and try again;
 *   FLOE_ENOTFOUND    no such table;
 *   FLOE_EUNSUPPORTED the store cannot drop conditionally (rest: it purges on its side,
 *                     floe_catalog_drop_table_purge).
 * SQL stores: one DELETE ... WHERE metadata_location = expected. Filesystem store: the
 * drop first claims v<N+1> (an empty file, created if absent, as a commit creates it), so
 * a commit on v<N> conflicts, however late it comes: the claims stay as tombstones (the
 * name reads as not found and is neither table nor namespace; a create of it starts
 * past them; a plain drop of it is FLOE_ENOTFOUND). docs/DESIGN.md, "Drop with purge",
 * under "Commit". */
int floe_catalog_drop_table_at(floe_catalog *c, const char *ns, const char *name,
                               const char *expected_metadata_location, floe_error *err)
    FLOE_NODISCARD;
/* True for stores that delete a dropped table's files themselves when asked (rest: the
 * drop says purgeRequested=true and the server deletes them); false for the others,
 * where the caller drops and then purges (floe_table_purge). */
bool floe_catalog_drop_purges(const floe_catalog *c);
/* Forget a table and have the store delete its files (floe_catalog_drop_purges stores;
 * FLOE_EUNSUPPORTED for the others). Errors as floe_catalog_drop_table. */
int floe_catalog_drop_table_purge(floe_catalog *c, const char *ns, const char *name,
                                  floe_error *err) FLOE_NODISCARD;
/* Compare-and-swap of the metadata pointer from `expected` to `new_location`:
 *   0                    swapped;
 *   FLOE_ECONFLICT       the pointer is no longer `expected` (someone committed first);
 *                        nothing changed;
 *   FLOE_EBUSY           the store stayed locked; nothing changed;
 *   FLOE_EUNKNOWN_STATE  an error after the swap may have been applied (for example an
 *                        I/O error on COMMIT): the caller must find out by reading.
 * Filesystem store: the create of new_location was the swap; this only refreshes the
 * version hint (best effort) and always returns 0 when new_location exists. */
int floe_catalog_swap(floe_catalog *c, const char *ns, const char *name, const char *expected,
                      const char *new_location, floe_error *err) FLOE_NODISCARD;

/* True for stores that commit by sending the change rather than by swapping a pointer
 * to a file the writer made (rest): floe_table_commit then calls
 * floe_catalog_commit_changes instead of writing metadata and calling floe_catalog_swap. */
bool floe_catalog_commits_changes(const floe_catalog *c);
/* Whether the store can commit to tables at all (a REST server that does not advertise
 * the commit endpoint cannot): 0, or FLOE_EUNSUPPORTED naming what is missing. Commits
 * ask this before writing anything. */
int floe_catalog_check_commit(floe_catalog *c, floe_error *err) FLOE_NODISCARD;
/* Whether the catalog answers, by one cheap exchange: a REST catalog is asked GET
 * /v1/config as at open, with its token (a new one first when due) and a 5 s timeout; a
 * SQL catalog runs SELECT 1 on its connection; a folder catalog asks whether its
 * warehouse exists. 0, or the error of that exchange (FLOE_EIO unreachable, FLOE_EAUTH
 * refused credentials, ...). Health probes call it, on a handle of their own. */
int floe_catalog_ping(floe_catalog *c, floe_error *err) FLOE_NODISCARD;
/* Commit the change from base_json to new_json (both whole table metadata documents,
 * the table's current one and the one wanted) as requirements and updates derived from
 * their difference. On success *metadata_location and *metadata_json (caller frees) are
 * what the catalog now holds (its own metadata, to be adopted). Outcomes as for
 * floe_catalog_swap: FLOE_ECONFLICT (a requirement failed: refresh and apply again),
 * FLOE_EUNKNOWN_STATE (500, 502, 503, 504, a timeout or a lost connection after the
 * request was sent: read the table to learn), other errors (nothing changed).
 * FLOE_EUNSUPPORTED for stores that swap pointers, and for a difference the protocol has
 * no update for. */
int floe_catalog_commit_changes(floe_catalog *c, const char *ns, const char *name,
                                const char *base_json, const char *new_json,
                                char **metadata_location, char **metadata_json,
                                floe_error *err) FLOE_NODISCARD;
/* Create a table on a store that commits changes (floe_catalog_commits_changes): the
 * server makes the table from metadata_json (its first metadata document, whole) and
 * writes its first metadata file; *metadata_location and *metadata_json_out (caller
 * frees) are what the catalog then holds, to be adopted. FLOE_EEXISTS when the name is
 * taken, FLOE_ENOTFOUND when the namespace does not exist, FLOE_EUNKNOWN_STATE when the
 * table may or may not have been made (a lost answer). FLOE_EUNSUPPORTED for stores that
 * register a file the writer wrote (floe_catalog_register_table). */
int floe_catalog_create_table(floe_catalog *c, const char *ns, const char *name,
                              const char *metadata_json, char **metadata_location,
                              char **metadata_json_out, floe_error *err) FLOE_NODISCARD;

/* Version number in a metadata file name: "v12.metadata.json" / "v12.gz.metadata.json"
 * -> 12, "00012-<uuid>.metadata.json" -> 12. false when the name has none ("vfinal") or
 * is not a metadata file name (*.metadata.json, *.metadata.json.gz): a manifest
 * "00012-<uuid>-m0.avro" has no version. */
bool floe_metadata_file_version(const char *file_name, int64_t *version);

/* Whether the last component of path is named as a table metadata file:
 * "*.metadata.json" or "*.metadata.json.gz" (gzip's other spelling, "*.gz.metadata.json",
 * ends in ".metadata.json" too). The name alone: a caller about to delete such a file also
 * checks its content. */
bool floe_metadata_file_name(const char *path);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
