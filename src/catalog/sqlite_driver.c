/*
 * sqlite_driver.c - the SQL catalog's database calls on SQLite (sql_driver.h).
 *
 * Concurrency: many processes share one catalog file. Every connection has a busy
 * timeout (floe_sql_options.busy_timeout_ms, default 30 s), so lock waits are absorbed by SQLite's busy
 * handler; a statement still refused with SQLITE_BUSY/LOCKED changed nothing (SQLite rolls
 * back an autocommit statement it could not commit) and is reported as FLOE_EBUSY.
 * Errors that can strike after the change reached the database file (I/O errors, a full
 * disk, corruption detected at commit) are FLOE_EUNKNOWN_STATE for writing statements.
 *
 * Write gate: the connections of one process to one database file (by the path as
 * given) queue for SQLite's write lock on a process-local gate before they ask SQLite
 * for it: a write transaction (begin .. commit/rollback) or an autocommit statement that
 * writes holds the gate throughout. Without it, connections of the same process that
 * meet the lock sleep in SQLite's busy handler (1, 2, 5 .. 100 ms steps) and wake late,
 * long after the holder is done; with it, the next writer starts as soon as the previous
 * one lets go. The gate is a courtesy among the process's own connections, not the
 * safety: SQLite's file lock still decides between processes (and between spellings of
 * one path), as before. Waiting for the gate counts against the busy timeout
 * (FLOE_EBUSY past it). The gate has no owning thread: a handle may end its transaction
 * on another thread than began it.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "catalog_internal.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "sql_driver.h"

/* One per database path in this process; counted by the connections holding it. */
typedef struct write_gate {
    struct write_gate *next;
    char *path;
    size_t refs;              /* guarded by gates_mu */
    pthread_mutex_t mu;
    pthread_cond_t freed;     /* signalled when held turns false (CLOCK_MONOTONIC waits) */
    bool held;                /* guarded by mu */
} write_gate;

static pthread_mutex_t gates_mu = PTHREAD_MUTEX_INITIALIZER;
static write_gate *gates; /* guarded by gates_mu */

struct floe_sql_conn {
    sqlite3 *db;
    char *path;
    write_gate *gate; /* NULL for an in-memory database */
    bool gated;       /* this connection holds gate */
    int busy_ms;
};

/* The gate of path, created on first use; NULL when out of memory (then the connection
 * goes without, as a connection of another process does). */
static write_gate *gate_get(const char *path) {
    pthread_mutex_lock(&gates_mu);
    write_gate *g = gates;
    while (g && strcmp(g->path, path))
        g = g->next;
    if (!g && (g = floe_calloc(1, sizeof *g)) != NULL) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (!(g->path = floe_strdup(path))) {
            floe_free(g);
            g = NULL;
        } else {
            pthread_mutex_init(&g->mu, NULL);
            pthread_cond_init(&g->freed, &ca);
            g->next = gates;
            gates = g;
        }
        pthread_condattr_destroy(&ca);
    }
    if (g)
        g->refs++;
    pthread_mutex_unlock(&gates_mu);
    return g;
}

static void gate_put(write_gate *g) {
    if (!g)
        return;
    pthread_mutex_lock(&gates_mu);
    if (--g->refs == 0) {
        write_gate **pp = &gates;
        while (*pp != g)
            pp = &(*pp)->next;
        *pp = g->next;
        pthread_cond_destroy(&g->freed);
        pthread_mutex_destroy(&g->mu);
        floe_free(g->path);
        floe_free(g);
    }
    pthread_mutex_unlock(&gates_mu);
}

/* Take c's gate (no-op when held or there is none), waiting at most the busy timeout. */
static int gate_enter(floe_sql_conn *c, floe_error *err) {
    if (!c->gate || c->gated)
        return 0;
    write_gate *g = c->gate;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += c->busy_ms / 1000;
    until.tv_nsec += (long)(c->busy_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&g->mu);
    while (g->held && rc == 0)
        rc = pthread_cond_timedwait(&g->freed, &g->mu, &until);
    if (!g->held) {
        g->held = true;
        c->gated = true;
        rc = 0;
    }
    pthread_mutex_unlock(&g->mu);
    if (!c->gated)
        return floe_error_sys(err, FLOE_EBUSY, rc == ETIMEDOUT ? SQLITE_BUSY : rc,
                              "%s: database is locked (another writer of this process held it "
                              "past the busy timeout of %d ms)",
                              c->path, c->busy_ms);
    return 0;
}

static void gate_release(floe_sql_conn *c) {
    write_gate *g = c->gate;
    pthread_mutex_lock(&g->mu);
    g->held = false;
    c->gated = false;
    pthread_cond_signal(&g->freed);
    pthread_mutex_unlock(&g->mu);
}

/* Give c's gate back once no transaction of c is open (SQLite may have ended one on an
 * error by itself). */
static void gate_settle(floe_sql_conn *c) {
    if (c->gated && sqlite3_get_autocommit(c->db))
        gate_release(c);
}

static int map_rc(floe_sql_conn *c, int rc, bool writing, const char *what, floe_error *err) {
    int primary = rc & 0xff;
    const char *msg = sqlite3_errmsg(c->db);
    switch (primary) {
    case SQLITE_CONSTRAINT:
        return floe_error_sys(err, FLOE_EEXISTS, rc, "%s: %s: %s", c->path, what, msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return floe_error_sys(err, FLOE_EBUSY, rc, "%s: %s: database is locked (%s)", c->path,
                              what, msg);
    case SQLITE_NOMEM:
        return floe_error_sys(err, FLOE_ENOMEM, rc, "%s: %s: out of memory", c->path, what);
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_PROTOCOL:
        if (writing)
            return floe_error_sys(err, FLOE_EUNKNOWN_STATE, rc,
                                  "%s: %s: %s (the change may or may not be in the database)",
                                  c->path, what, msg);
        return floe_error_sys(err, primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
                                       ? FLOE_ECORRUPT
                                       : FLOE_EIO,
                              rc, "%s: %s: %s", c->path, what, msg);
    default:
        return floe_error_sys(err, FLOE_EIO, rc, "%s: %s: %s", c->path, what, msg);
    }
}

static int prepare(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
                   sqlite3_stmt **out, floe_error *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return map_rc(c, rc, false, "prepare", err);
    for (size_t i = 0; i < n; i++) {
        rc = params[i] ? sqlite3_bind_text(st, (int)i + 1, params[i], -1, SQLITE_TRANSIENT)
                       : sqlite3_bind_null(st, (int)i + 1);
        if (rc != SQLITE_OK) {
            int r = map_rc(c, rc, false, "bind", err);
            sqlite3_finalize(st);
            return r;
        }
    }
    *out = st;
    return 0;
}

static int sq_exec(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
                   int64_t *changes, floe_error *err) {
    sqlite3_stmt *st;
    int rc = prepare(c, sql, params, n, &st, err);
    if (rc < 0)
        return rc;
    /* an autocommit statement that writes queues on the gate; in a transaction the gate
     * is held already */
    if (!sqlite3_stmt_readonly(st) && (rc = gate_enter(c, err)) < 0) {
        sqlite3_finalize(st);
        return rc;
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (s != SQLITE_DONE)
        rc = map_rc(c, s, true, "exec", err);
    else if (changes)
        *changes = sqlite3_changes(c->db);
    sqlite3_finalize(st);
    gate_settle(c);
    return rc;
}

static int sq_query(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
                    bool writes, floe_sql_row_fn fn, void *ctx, floe_error *err) {
    sqlite3_stmt *st;
    int rc = prepare(c, sql, params, n, &st, err);
    if (rc < 0)
        return rc;
    int ncols = sqlite3_column_count(st);
    const char *cols[16];
    if (ncols > 16) {
        sqlite3_finalize(st);
        return floe_error_set(err, FLOE_EINTERNAL, "query returns too many columns");
    }
    if (writes && (rc = gate_enter(c, err)) < 0) {
        sqlite3_finalize(st);
        return rc;
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncols; i++)
            cols[i] = (const char *)sqlite3_column_text(st, i);
        rc = fn(ctx, cols, (size_t)ncols, err);
        if (rc != 0)
            break;
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = map_rc(c, s, writes, "query", err);
    sqlite3_finalize(st);
    gate_settle(c);
    return rc;
}

static int sq_begin(floe_sql_conn *c, floe_error *err) {
    /* IMMEDIATE: take the write lock now, so a transaction never fails half-way on a
     * lock upgrade (the classic SQLite deadlock between two readers turning writer). */
    int rc = gate_enter(c, err);
    if (rc < 0)
        return rc;
    rc = sq_exec(c, "BEGIN IMMEDIATE", NULL, 0, NULL, err);
    if (rc == FLOE_EUNKNOWN_STATE) { /* nothing was written yet */
        if (err)
            err->code = FLOE_EIO;
        rc = FLOE_EIO;
    }
    return rc;
}

static int sq_commit(floe_sql_conn *c, floe_error *err) {
    int rc = sq_exec(c, "COMMIT", NULL, 0, NULL, err);
    if (rc == FLOE_EBUSY) /* the transaction is still open; give up on it */
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    gate_settle(c);
    return rc;
}

static void sq_rollback(floe_sql_conn *c) {
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    gate_settle(c);
}

typedef struct has_col_ctx {
    const char *column;
    bool found;
} has_col_ctx;

static int has_col_row(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    (void)err;
    has_col_ctx *h = ctx;
    /* PRAGMA table_info: cid, name, type, notnull, dflt_value, pk */
    if (ncols > 1 && cols[1] && !strcmp(cols[1], h->column))
        h->found = true;
    return 0;
}

static int sq_has_column(floe_sql_conn *c, const char *table, const char *column, bool *has,
                         floe_error *err) {
    /* table is one of our constants, never input */
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    has_col_ctx h = {column, false};
    int rc = sq_query(c, sql, NULL, 0, false, has_col_row, &h, err);
    if (rc == 0)
        *has = h.found;
    return rc;
}

static void sq_close(floe_sql_conn *c) {
    if (!c)
        return;
    sqlite3_close_v2(c->db); /* rolls back an open transaction */
    if (c->gated)
        gate_release(c);
    gate_put(c->gate);
    floe_free(c->path);
    floe_free(c);
}

static const floe_sql_driver sqlite_driver = {
    .name = "sqlite",
    .outcome_final = true,
    .exec = sq_exec,
    .query = sq_query,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .has_column = sq_has_column,
    .close = sq_close,
};

int floe_sqlite_connect(const char *path, const floe_sql_options *opts,
                        const floe_sql_driver **driver, floe_sql_conn **out, floe_error *err) {
    floe_sql_conn *c = floe_calloc(1, sizeof *c);
    if (!c || !(c->path = floe_strdup(path))) {
        floe_free(c);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    int rc = sqlite3_open_v2(path, &c->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        int r = floe_error_sys(err, FLOE_EIO, rc, "%s: cannot open catalog database: %s", path,
                               c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
        sq_close(c);
        return r;
    }
    int busy_ms = 30000;
    if (opts && opts->busy_timeout_ms > 0)
        busy_ms = opts->busy_timeout_ms < INT_MAX ? (int)opts->busy_timeout_ms : INT_MAX;
    sqlite3_busy_timeout(c->db, busy_ms);
    sqlite3_extended_result_codes(c->db, 1);
    c->busy_ms = busy_ms;
    if (strcmp(path, ":memory:") && strncmp(path, "file:", 5))
        c->gate = gate_get(path);
    *driver = &sqlite_driver;
    *out = c;
    return 0;
}

int floe_catalog_open_sqlite(floe_io *io, const char *db_path, const char *name, const char *warehouse,
                             floe_catalog **out, floe_error *err) {
    return floe_catalog_open_sqlite_with(io, db_path, name, warehouse, NULL, out, err);
}

int floe_catalog_open_sqlite_with(floe_io *io, const char *db_path, const char *name,
                                  const char *warehouse, const floe_sql_options *opts,
                                  floe_catalog **out, floe_error *err) {
    if (!db_path || !*db_path)
        return floe_error_set(err, FLOE_EINVALID, "SQLite catalog: no database path");
    /* the folder holding the database may not exist yet (embedded default) */
    const char *slash = strrchr(db_path, '/');
    if (slash && slash != db_path) {
        char *dir = floe_strndup(db_path, (size_t)(slash - db_path));
        if (!dir)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int rc = floe_io_mkdirs(io, dir, err);
        floe_free(dir);
        if (rc < 0)
            return rc;
    }
    const floe_sql_driver *drv;
    floe_sql_conn *conn;
    floe_sql *db;
    int rc = floe_sqlite_connect(db_path, opts, &drv, &conn, err);
    if (rc == 0)
        rc = floe_sql_wrap(drv, conn, &db, err);
    if (rc < 0)
        return rc;
    floe_catalog *c = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_catalog_open(db, name, warehouse, &c, err));
    c->io = io ? io : floe_io_default();
    if (opts)
        c->sql_opts = *opts;
    if ((rc = floe_catalog_set_lease_db(c, db_path, err)) < 0) {
        floe_catalog_close(c);
        return rc;
    }
    *out = c;
    return 0;
}
