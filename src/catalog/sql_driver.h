/*
 * sql_driver.h - the few database calls the SQL catalog needs, so one SQL text serves
 * SQLite (sqlite_driver.c) and, later, PostgreSQL (libpq).
 *
 * SQL text uses '?' placeholders and only text parameters; a driver whose database wants
 * another style ($1, $2 for libpq) rewrites them. No statement floe sends contains a '?'
 * other than a placeholder.
 *
 * Error contract of exec/query:
 *   FLOE_EEXISTS         a constraint (primary key) refused the change; nothing changed
 *   FLOE_EBUSY           the database stayed locked past the busy timeout; nothing changed
 *   FLOE_EUNKNOWN_STATE  the statement failed in a way that may have left it applied
 *                        (I/O error during commit, lost connection after sending)
 *   FLOE_EIO, FLOE_ENOMEM, FLOE_ECORRUPT   other failures
 */
#ifndef FLOE_SQL_DRIVER_H
#define FLOE_SQL_DRIVER_H

#include "floe/common.h"

typedef struct floe_sql_conn floe_sql_conn;

/* Called once per result row with the column values as text (NULL for SQL NULL). Return
 * non-zero (an error code) to stop. */
typedef int (*floe_sql_row_fn)(void *ctx, const char *const *cols, size_t ncols,
                               floe_error *err);

typedef struct floe_sql_driver {
    const char *name;
    /* A statement that has returned leaves nothing in flight (embedded databases). */
    bool outcome_final;
    /* Run a statement; *changes (if non-NULL) receives the number of rows changed. */
    int (*exec)(floe_sql_conn *c, const char *sql, const char *const *params, size_t nparams,
                int64_t *changes, floe_error *err);
    int (*query)(floe_sql_conn *c, const char *sql, const char *const *params, size_t nparams,
                 floe_sql_row_fn fn, void *ctx, floe_error *err);
    /* A write transaction (taken eagerly, so lock waits happen here, not mid-way). */
    int (*begin)(floe_sql_conn *c, floe_error *err);
    int (*commit)(floe_sql_conn *c, floe_error *err);
    void (*rollback)(floe_sql_conn *c);
    /* Whether table.column exists (schema variants: iceberg_type came later). */
    int (*has_column)(floe_sql_conn *c, const char *table, const char *column, bool *has,
                      floe_error *err);
    void (*close)(floe_sql_conn *c);
} floe_sql_driver;

/* SQLite: open (creating) the database file at path. */
int floe_sqlite_connect(const char *path, const floe_sql_driver **driver, floe_sql_conn **out,
                        floe_error *err);

/* The SQL catalog over any driver (takes ownership of conn, also on failure). */
int floe_sql_catalog_open(const floe_sql_driver *driver, floe_sql_conn *conn, const char *name,
                          const char *warehouse, floe_catalog **out, floe_error *err);

#endif
