/*
 * floe/sql.h - a connection to the catalog database (SQLite file or PostgreSQL server),
 * for the modules that keep shared state beside the catalog: the landing index, leases.
 *
 * One statement text serves both databases: '?' placeholders (rewritten to $1, $2 for
 * PostgreSQL), parameters and results as text (NULL = SQL NULL), and SQL both dialects
 * accept (INSERT ... ON CONFLICT, RETURNING, CAST(? AS BIGINT)). floe_sql_dialect() tells
 * the rare caller that needs a variant which one it talks to.
 *
 * A floe_sql is one connection: use it from one thread at a time.
 *
 * Error contract of every call that runs a statement:
 *   FLOE_EEXISTS         a unique or primary key refused the change; nothing changed
 *   FLOE_EBUSY           locked past the timeout (SQLite busy, PostgreSQL lock_not_available
 *                        or a cancelled statement); nothing changed
 *   FLOE_ECONFLICT       PostgreSQL serialization failure or deadlock: the statement (or the
 *                        transaction, when one is open) was rolled back; retry it all
 *   FLOE_EUNKNOWN_STATE  a write outside a transaction, or floe_sql_commit, failed in a way
 *                        that may have left it applied (I/O error during commit, connection
 *                        lost after sending). Find out by reading: on PostgreSQL the next
 *                        statement on this handle first waits until the server process that
 *                        ran the lost statement is gone (terminating it if needed), so what
 *                        it reads afterwards is final.
 *   FLOE_EIO             other failures. Inside a transaction a lost connection is FLOE_EIO:
 *                        the transaction is gone (never committed); call floe_sql_rollback.
 * Read-only statements (floe_sql_query) outside a transaction are retried once on a fresh
 * connection when the connection broke; writes never are.
 *
 * Ownership: a floe_sql owns its connection until floe_sql_close; rows passed to a query
 * callback are borrowed for the call.
 */
#ifndef FLOE_SQL_H
#define FLOE_SQL_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_sql floe_sql;
typedef struct floe_catalog floe_catalog;

/* Options of a connection; zero fields take the defaults. */
typedef struct floe_sql_options {
    int64_t busy_timeout_ms; /* SQLite: how long a statement waits for another connection's
                                lock before FLOE_EBUSY (30 s) */
    int64_t settle_ms;       /* PostgreSQL: how long the read after a lost write waits for
                                the server process that ran it to be gone (30 s) */
} floe_sql_options;

/* Called once per result row with the column values as text (NULL for SQL NULL; valid
 * during the call only). Return non-zero (an error code) to stop; it is returned. */
typedef int (*floe_sql_row_fn)(void *ctx, const char *const *cols, size_t ncols,
                               floe_error *err);

/* Open a connection:
 *   postgresql://user:pass@host:port/db?opt=v, postgres://..., and SQLAlchemy's
 *   postgresql+psycopg2://... (the driver part is ignored); libpq also reads PGPASSWORD,
 *   ~/.pgpass, PGSSLMODE and the other PG* variables;
 *   sqlite:///relative.db, sqlite:////abs.db or a plain path: a SQLite file (created).
 * FLOE_EINVALID for a malformed or unsupported URI, FLOE_EIO when the server cannot be
 * reached. */
int floe_sql_open(const char *uri, floe_sql **out, floe_error *err) FLOE_NODISCARD;
/* The same with connection options (NULL: the defaults, as floe_sql_open). */
int floe_sql_open_with(const char *uri, const floe_sql_options *opts, floe_sql **out,
                       floe_error *err) FLOE_NODISCARD;
void floe_sql_close(floe_sql *db); /* accepts NULL; rolls back an open transaction */

/* "sqlite" or "postgresql". */
const char *floe_sql_dialect(const floe_sql *db);

/* The database's clock: an SQL expression for milliseconds since the epoch (static text,
 * to put into statements), and its value now. Times that several processes compare
 * (leases, claims, ages in the landing index) are read from this one clock, never from
 * each machine's own. */
const char *floe_sql_clock_ms_expr(const floe_sql *db);
int floe_sql_clock_ms(floe_sql *db, int64_t *now_ms, floe_error *err) FLOE_NODISCARD;

/* A statement without result rows; *changes (if non-NULL) receives the rows changed. */
int floe_sql_exec(floe_sql *db, const char *sql, const char *const *params, size_t nparams,
                  int64_t *changes, floe_error *err) FLOE_NODISCARD;
/* A statement with result rows (at most 16 columns), fn called per row. A query that
 * writes (INSERT ... RETURNING) must set writes: it is then never retried and a lost
 * connection is FLOE_EUNKNOWN_STATE. */
int floe_sql_query(floe_sql *db, const char *sql, const char *const *params, size_t nparams,
                   floe_sql_row_fn fn, void *ctx, floe_error *err) FLOE_NODISCARD;
int floe_sql_query_writes(floe_sql *db, const char *sql, const char *const *params,
                          size_t nparams, floe_sql_row_fn fn, void *ctx, floe_error *err)
    FLOE_NODISCARD;

/* A write transaction: SQLite BEGIN IMMEDIATE (the write lock is taken now), PostgreSQL
 * BEGIN (READ COMMITTED: rows are locked as statements touch them). Statements between
 * begin and commit are applied together or not at all. commit returns FLOE_EUNKNOWN_STATE
 * when the outcome could not be learned (see above); after any error the transaction is
 * over (rolled back by the database), and rollback is still safe to call. */
int floe_sql_begin(floe_sql *db, floe_error *err) FLOE_NODISCARD;
int floe_sql_commit(floe_sql *db, floe_error *err) FLOE_NODISCARD;
void floe_sql_rollback(floe_sql *db);
bool floe_sql_in_transaction(const floe_sql *db);

/* The catalog's own connection (borrowed: valid until floe_catalog_close; NULL for a
 * filesystem catalog). Statements run on it share the catalog's transaction state: a
 * floe_catalog_swap made between floe_sql_begin and floe_sql_commit on this handle is
 * part of that transaction (and returns 0 before it is committed). */
floe_sql *floe_catalog_sql(floe_catalog *c);
/* A REST catalog's state database (floe_catalog_config.state_db: leases, floe serve's
 * landing index), as configured; NULL for other stores (their own database holds
 * those) and for a REST catalog without one. Borrowed: valid until floe_catalog_close. */
const char *floe_catalog_state_db(const floe_catalog *c);
/* The connection options catalog c was opened with (floe_catalog_config.sql; zero: the
 * defaults), for the databases opened on its behalf: the filesystem catalog's
 * <warehouse>/_leases.db, a landing index file. Borrowed: valid until floe_catalog_close. */
const floe_sql_options *floe_catalog_sql_options(const floe_catalog *c);

/* Work to do in the same transaction as every successful pointer swap of catalog c:
 * after the UPDATE moved the pointer (1 row), fn runs on the catalog's connection with
 * the swap's arguments; its error rolls the swap back (floe_catalog_swap returns it:
 * nothing changed, except that FLOE_EUNKNOWN_STATE from fn is reported as FLOE_EIO since
 * the transaction was never committed). The commit of the transaction is the swap:
 * floe_catalog_swap's FLOE_EUNKNOWN_STATE then covers fn's changes too. fn NULL removes
 * the hook. SQL catalogs only (FLOE_EUNSUPPORTED otherwise). The landing index uses it
 * so that "committed" is recorded exactly when the snapshot is (DESIGN.md I2). */
typedef int (*floe_catalog_swap_hook_fn)(void *ctx, floe_sql *db, const char *ns,
                                         const char *name, const char *expected,
                                         const char *new_location, floe_error *err);
int floe_catalog_set_swap_hook(floe_catalog *c, floe_catalog_swap_hook_fn fn, void *ctx,
                               floe_error *err) FLOE_NODISCARD;

/* Kinds of change a change hook is told of. */
typedef enum floe_catalog_change {
    FLOE_CATALOG_CHANGE_REGISTER, /* a table registered (created): location is its metadata */
    FLOE_CATALOG_CHANGE_RENAME,   /* ns.name renamed to to_ns.to_name; location NULL */
    FLOE_CATALOG_CHANGE_DROP      /* ns.name dropped; location NULL */
} floe_catalog_change;

/* Work to do in the same transaction as every successful table registration, rename and
 * drop of catalog c (floe_catalog_register_table, _rename_table, _drop_table): after the
 * statement changed its row, fn runs on the catalog's connection; its error rolls the
 * change back and is returned. to_ns / to_name are NULL but for a rename. fn NULL
 * removes the hook. SQL catalogs only (FLOE_EUNSUPPORTED otherwise). floe catalog serve
 * records an Idempotency-Key's answer so: the record exists exactly when the change
 * does. */
typedef int (*floe_catalog_change_hook_fn)(void *ctx, floe_sql *db, floe_catalog_change kind,
                                           const char *ns, const char *name,
                                           const char *to_ns, const char *to_name,
                                           const char *location, floe_error *err);
int floe_catalog_set_change_hook(floe_catalog *c, floe_catalog_change_hook_fn fn, void *ctx,
                                 floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
