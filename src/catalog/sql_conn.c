/*
 * sql_conn.c - the public floe_sql handle (floe/sql.h): catalog URIs to drivers, and
 * statements and transactions passed through to the driver (sqlite_driver.c,
 * pg_driver.c) with the transaction state the catalog needs to know about.
 *
 * URIs (SQLAlchemy's forms, as PyIceberg's SqlCatalog takes them, plus libpq's):
 *   postgresql://..., postgres://...            libpq URI, passed through
 *   postgresql+<driver>://...                   the "+<driver>" part dropped
 *   sqlite:///relative.db, sqlite:////abs.db    SQLite file
 *   a path without "://"                        SQLite file
 */
#include <stdio.h>
#include <string.h>

#include "sql_driver.h"
#include "common/testing.h"

int floe_sql_uri_parse(const char *uri, int *is_pg, char **target, floe_error *err) {
    if (!uri || !*uri)
        return floe_error_set(err, FLOE_EINVALID, "empty catalog database uri");
    const char *sep = strstr(uri, "://");
    if (!sep) { /* a plain path */
        char *p = floe_strdup(uri);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *is_pg = 0;
        *target = p;
        return 0;
    }
    size_t scheme_len = (size_t)(sep - uri);
    const char *plus = memchr(uri, '+', scheme_len);
    size_t base_len = plus ? (size_t)(plus - uri) : scheme_len;
    if ((base_len == 10 && !strncmp(uri, "postgresql", 10)) ||
        (base_len == 8 && !strncmp(uri, "postgres", 8))) {
        /* libpq knows postgresql:// and postgres://; a SQLAlchemy driver suffix
         * (+psycopg2, +psycopg, +pg8000, +asyncpg) only named the Python module */
        char *p = floe_asprintf("postgresql%s", sep);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *is_pg = 1;
        *target = p;
        return 0;
    }
    if (base_len == 6 && !strncmp(uri, "sqlite", 6)) {
        if (strncmp(sep, ":///", 4) != 0 || !sep[4])
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s: in-memory or host SQLite URIs are not supported "
                                  "(sqlite:///relative.db or sqlite:////abs/path.db)",
                                  uri);
        char *p = floe_strdup(sep + 4);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *is_pg = 0;
        *target = p;
        return 0;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "%.*s: unsupported catalog database (postgresql:// or sqlite:///)",
                          (int)(scheme_len > 64 ? 64 : scheme_len), uri);
}

char *floe_sql_uri_redact(const char *uri) {
    const char *sep = uri ? strstr(uri, "://") : NULL;
    if (!sep)
        return floe_strdup(uri ? uri : "");
    const char *auth = sep + 3;
    size_t auth_len = strcspn(auth, "/?#");
    const char *at = NULL; /* the last '@' of the authority ends the user info */
    for (size_t i = 0; i < auth_len; i++)
        if (auth[i] == '@')
            at = auth + i;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    char *out;
    if (colon)
        out = floe_asprintf("%.*s:***%s", (int)(colon - uri), uri, at);
    else
        out = floe_strdup(uri);
    /* a password=... query parameter too */
    char *pw = out ? strstr(out, "password=") : NULL;
    if (pw) {
        char *end = pw + 9 + strcspn(pw + 9, "&#");
        char *fixed = floe_asprintf("%.*s***%s", (int)(pw + 9 - out), out, end);
        floe_free(out);
        out = fixed;
    }
    return out;
}

int floe_sql_wrap(const floe_sql_driver *driver, floe_sql_conn *conn, floe_sql **out,
                  floe_error *err) {
    floe_sql *db = floe_calloc(1, sizeof *db);
    if (!db) {
        driver->close(conn);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    db->drv = driver;
    db->conn = conn;
    *out = db;
    return 0;
}

int floe_sql_open(const char *uri, floe_sql **out, floe_error *err) {
    return floe_sql_open_with(uri, NULL, out, err);
}

int floe_sql_open_with(const char *uri, const floe_sql_options *opts, floe_sql **out,
                       floe_error *err) {
    int is_pg = 0;
    char *target = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_uri_parse(uri, &is_pg, &target, err));
    const floe_sql_driver *drv = NULL;
    floe_sql_conn *conn = NULL;
    int rc = is_pg ? floe_pg_connect(target, opts, &drv, &conn, err)
                   : floe_sqlite_connect(target, opts, &drv, &conn, err);
    floe_free(target);
    if (rc < 0)
        return rc;
    return floe_sql_wrap(drv, conn, out, err);
}

void floe_sql_close(floe_sql *db) {
    if (!db)
        return;
    if (db->in_tx)
        db->drv->rollback(db->conn);
    db->drv->close(db->conn);
    floe_free(db);
}

const char *floe_sql_dialect(const floe_sql *db) { return db->drv->name; }

const char *floe_sql_clock_ms_expr(const floe_sql *db) {
    return strcmp(db->drv->name, "postgresql") ? FLOE_SQL_NOW_SQLITE : FLOE_SQL_NOW_PG;
}

static int clock_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    if (n < 1 || !cols[0] || !floe_parse_i64(cols[0], strlen(cols[0]), ctx))
        return floe_error_set(err, FLOE_ECORRUPT, "database clock: not a number");
    return 0;
}

int floe_sql_clock_ms(floe_sql *db, int64_t *now_ms, floe_error *err) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT %s", floe_sql_clock_ms_expr(db));
    int64_t v = 0;
    FLOE_FORWARD_IF_ERROR(floe_sql_query(db, sql, NULL, 0, clock_row, &v, err));
    *now_ms = v;
    return 0;
}

/* Crash points (floe_crash_point) around every statement that may write: before it is
 * sent, and after it took effect (inside a transaction, "took effect" is the commit). */
int floe_sql_exec(floe_sql *db, const char *sql, const char *const *params, size_t nparams,
                  int64_t *changes, floe_error *err) {
    floe_crash_point();
    int rc = db->drv->exec(db->conn, sql, params, nparams, changes, err);
    if (rc == 0 && !db->in_tx)
        floe_crash_point();
    return rc;
}

int floe_sql_query(floe_sql *db, const char *sql, const char *const *params, size_t nparams,
                   floe_sql_row_fn fn, void *ctx, floe_error *err) {
    return db->drv->query(db->conn, sql, params, nparams, false, fn, ctx, err);
}

int floe_sql_query_writes(floe_sql *db, const char *sql, const char *const *params,
                          size_t nparams, floe_sql_row_fn fn, void *ctx, floe_error *err) {
    floe_crash_point();
    int rc = db->drv->query(db->conn, sql, params, nparams, true, fn, ctx, err);
    if (rc == 0 && !db->in_tx)
        floe_crash_point();
    return rc;
}

int floe_sql_begin(floe_sql *db, floe_error *err) {
    if (db->in_tx)
        return floe_error_set(err, FLOE_EINVALID, "a transaction is already open");
    FLOE_FORWARD_IF_ERROR(db->drv->begin(db->conn, err));
    db->in_tx = true;
    return 0;
}

int floe_sql_commit(floe_sql *db, floe_error *err) {
    if (!db->in_tx)
        return floe_error_set(err, FLOE_EINVALID, "no transaction is open");
    db->in_tx = false; /* whatever COMMIT answers, the transaction is over */
    floe_crash_point();
    int rc = db->drv->commit(db->conn, err);
    if (rc < 0) /* (a no-op where the database already ended it) */
        db->drv->rollback(db->conn);
    else
        floe_crash_point();
    return rc;
}

void floe_sql_rollback(floe_sql *db) {
    if (!db || !db->in_tx)
        return;
    db->in_tx = false;
    db->drv->rollback(db->conn);
}

bool floe_sql_in_transaction(const floe_sql *db) { return db->in_tx; }
