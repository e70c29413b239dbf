/*
 * sql_driver.h - the few database calls the SQL catalog, the leases and the public
 * floe_sql handle (floe/sql.h) need, so one SQL text serves SQLite (sqlite_driver.c) and
 * PostgreSQL (pg_driver.c, libpq).
 *
 * SQL text uses '?' placeholders and only text parameters; a driver whose database wants
 * another style ($1, $2 for libpq) rewrites them ('?' inside '...' literals is left
 * alone). Error contract: floe/sql.h.
 */
#ifndef FLOE_SQL_DRIVER_H
#define FLOE_SQL_DRIVER_H

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/sql.h"

typedef struct floe_sql_conn floe_sql_conn;

/* Milliseconds since the epoch by the database's clock (floe_sql_clock_ms_expr). */
#define FLOE_SQL_NOW_PG "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)"
#define FLOE_SQL_NOW_SQLITE "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

typedef struct floe_sql_driver {
    const char *name; /* dialect: "sqlite", "postgresql" */
    /* After a statement reported FLOE_EUNKNOWN_STATE, what the next read on the same
     * handle sees is final: SQLite (a returned call leaves nothing in flight) and
     * PostgreSQL (the next statement first waits for the server process that ran the lost
     * one to be gone: see pg_driver.c). */
    bool outcome_final;
    /* Run a statement; *changes (if non-NULL) receives the number of rows changed. A
     * statement run by exec is taken to write. */
    int (*exec)(floe_sql_conn *c, const char *sql, const char *const *params, size_t nparams,
                int64_t *changes, floe_error *err);
    /* writes: the statement changes data (INSERT ... RETURNING): never retried. */
    int (*query)(floe_sql_conn *c, const char *sql, const char *const *params, size_t nparams,
                 bool writes, floe_sql_row_fn fn, void *ctx, floe_error *err);
    /* A write transaction (SQLite: taken eagerly, so lock waits happen here). */
    int (*begin)(floe_sql_conn *c, floe_error *err);
    int (*commit)(floe_sql_conn *c, floe_error *err);
    void (*rollback)(floe_sql_conn *c);
    /* Whether table.column exists (schema variants: iceberg_type came later). */
    int (*has_column)(floe_sql_conn *c, const char *table, const char *column, bool *has,
                      floe_error *err);
    void (*close)(floe_sql_conn *c);
} floe_sql_driver;

/* The public handle: a driver and its connection. */
struct floe_sql {
    const floe_sql_driver *drv;
    floe_sql_conn *conn;
    bool in_tx;        /* between floe_sql_begin and commit/rollback */
    bool leases_ready; /* floe_leases exists (lease.c) */
};

/* SQLite: open (creating) the database file at path. opts: floe_sql_options (NULL: the
 * defaults), in both. */
int floe_sqlite_connect(const char *path, const floe_sql_options *opts,
                        const floe_sql_driver **driver, floe_sql_conn **out, floe_error *err);
/* PostgreSQL: connect to a postgresql:// or postgres:// URI (libpq syntax). */
int floe_pg_connect(const char *uri, const floe_sql_options *opts,
                    const floe_sql_driver **driver, floe_sql_conn **out, floe_error *err);

/* The SQLite and PostgreSQL stores with connection options (floe_catalog_open passes the
 * configuration's). */
int floe_catalog_open_sqlite_with(floe_io *io, const char *db_path, const char *name,
                                  const char *warehouse, const floe_sql_options *opts,
                                  floe_catalog **out, floe_error *err);
int floe_catalog_open_postgres_with(floe_io *io, const char *uri, const char *name,
                                    const char *warehouse, const floe_sql_options *opts,
                                    floe_catalog **out, floe_error *err);

/* Which database a catalog URI names: 1 = PostgreSQL (*target = the libpq URI with any
 * SQLAlchemy "+driver" removed), 0 = SQLite (*target = the file path). Caller frees
 * *target. FLOE_EINVALID / FLOE_EUNSUPPORTED for URIs floe cannot use. */
int floe_sql_uri_parse(const char *uri, int *is_pg, char **target, floe_error *err);
/* The URI with the password replaced by "***", for messages. Caller frees. */
char *floe_sql_uri_redact(const char *uri);

/* Wrap a driver connection in a handle (takes ownership of conn, also on failure). */
int floe_sql_wrap(const floe_sql_driver *driver, floe_sql_conn *conn, floe_sql **out,
                  floe_error *err);

/* The SQL catalog over a handle (takes ownership of db, also on failure). */
int floe_sql_catalog_open(floe_sql *db, const char *name, const char *warehouse,
                          floe_catalog **out, floe_error *err);

/* Test hook (PostgreSQL): the nth write from now (autocommit statement or COMMIT) that
 * succeeds on the server has its reply "lost": the driver drops the connection and
 * reports FLOE_EUNKNOWN_STATE although the change is committed. 0 disables. */
void floe_pg_inject_lost_reply(int nth);

#endif
