/*
 * pg_driver.c - the SQL catalog's database calls on PostgreSQL through libpq
 * (sql_driver.h; contract in floe/sql.h).
 *
 * One connection per handle. Statements are sent with PQexecParams: '?' placeholders
 * become $1..$n, parameters are text and typed by the server from context (CAST(? AS
 * BIGINT) where context says nothing).
 *
 * Connection states and who moves between them:
 *
 *   idle ──begin()──> in_tx ──commit()/rollback()──> idle
 *     │                 │ connection lost (exec/query): tx_lost; every statement and
 *     │                 │ commit() now fail with FLOE_EIO (the server never saw COMMIT,
 *     │                 │ so nothing of it is applied) until rollback()
 *     │ connection lost:
 *     │   read (query)   -> dropped, reconnect, run once more
 *     │   write (exec, COMMIT) -> dropped, FLOE_EUNKNOWN_STATE, settle armed
 *     v
 *   dropped ──ready()──> reconnected ──settle()──> idle
 *
 * Why reading after an unknown outcome is final here (outcome_final = true). When a write
 * lost its connection, the server process that ran it may still be alive: it may not
 * have read the statement yet, may wait for a row lock, or may be committing. Reading
 * the pointer at that moment could see the old value and then have it change. So the
 * driver remembers the lost server process (pid and start time) and, before the next
 * statement on the new connection, waits until that process is gone from
 * pg_stat_activity, asking the server to terminate it (pg_terminate_backend: allowed for
 * one's own role). A process that exits has either committed or rolled back for good: its
 * transaction's outcome can no longer change, and what the read returns is the answer.
 * If it cannot be made to go within floe_sql_options.settle_ms (default 30 s) the read fails and
 * the outcome stays unknown.
 *
 * The idle check (ready): before a statement outside a transaction, PQconsumeInput reads
 * whatever the server sent while we were idle without blocking; a server process that was
 * terminated meanwhile has sent its FATAL message and closed, the connection shows as bad,
 * and it is replaced before anything is sent - so a write after an idle kill is not
 * needlessly reported as unknown.
 *
 * Durability. Every session runs with synchronous_commit at least `local`: a server (or a
 * role, or a database) set to `off` acknowledges a COMMIT before its WAL record is written,
 * and a crash of the server forgets it - a landing file registered that way loses its
 * index row after floe has released the WAL that held its records (acknowledged events
 * lost), and a catalog swap could roll back after a writer saw it succeed. `off` is raised
 * to `local` for floe's sessions only; every other value (on, remote_write, remote_apply,
 * local) is kept.
 *
 * Errors by SQLSTATE: 23505 unique_violation, 42P07 duplicate_table and 42710
 * duplicate_object (a table's row type, when two processes create the table at once) ->
 * FLOE_EEXISTS;
 * 40001 serialization_failure, 40P01 deadlock_detected -> FLOE_ECONFLICT (rolled back,
 * retryable); 55P03 lock_not_available, 57014 query_canceled -> FLOE_EBUSY; 40003
 * statement_completion_unknown -> FLOE_EUNKNOWN_STATE for writes; class 08 and 57P01-03
 * (the server ended the session) -> connection lost, handled as above.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/lazy_pq.h"

#include "catalog_internal.h"
#include "sql_driver.h"

#define PG_MAX_PARAMS 4096
#define PG_MAX_COLS 16

struct floe_sql_conn {
    PGconn *pg;        /* NULL when dropped */
    char *uri;         /* libpq URI, for reconnecting */
    char *where;       /* the URI without its password, for messages */
    int pid;           /* server process of the current connection */
    char start[32];    /* its backend_start, microseconds since the epoch */
    bool in_tx;
    bool tx_lost;      /* the connection broke inside the transaction */
    bool settle;       /* a write's connection was lost: wait for its server process */
    bool settling;     /* (settle runs statements itself) */
    bool server_gone;  /* a FATAL notice arrived: the server ended the session */
    int settle_pid;
    char settle_start[32];
    int64_t settle_limit_ms; /* floe_sql_options.settle_ms */
};

static _Atomic int lost_reply_countdown;
static _Atomic int sync_commit_noted; /* the raise of synchronous_commit is logged once */

void floe_pg_inject_lost_reply(int nth) { atomic_store(&lost_reply_countdown, nth); }

static bool lost_reply_fires(void) {
    int left = atomic_load(&lost_reply_countdown);
    while (left > 0 && !atomic_compare_exchange_weak(&lost_reply_countdown, &left, left - 1)) {
    }
    return left == 1;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* libpq messages end in a newline and may run over several lines; keep the first. */
static void first_line(const char *msg, char *out, size_t cap) {
    size_t n = msg ? strcspn(msg, "\n") : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(out, msg, n);
    out[n] = '\0';
}

/* Notices ("relation already exists, skipping") are not for the user's terminal. An
 * error that arrives while idle comes this way too: libpq hands it to the notice
 * receiver. A FATAL one is the server ending the session (pg_terminate_backend, shutdown,
 * idle timeout): the connection is marked gone so that ready() replaces it. */
static void on_notice(void *arg, const PGresult *r) {
    floe_sql_conn *c = arg;
    const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (sev && (!strcmp(sev, "FATAL") || !strcmp(sev, "PANIC")))
        c->server_gone = true;
    char msg[512];
    first_line(PQresultErrorMessage(r), msg, sizeof msg);
    floe_log(FLOE_LOG_DEBUG, "postgresql: %s", msg);
}

static void drop(floe_sql_conn *c) {
    if (c->pg)
        PQfinish(c->pg);
    c->pg = NULL;
}

/* Remember the current server process as the one whose outcome must be settled. */
static void arm_settle(floe_sql_conn *c) {
    if (c->pid <= 0)
        return;
    c->settle = true;
    c->settle_pid = c->pid;
    memcpy(c->settle_start, c->start, sizeof c->start);
}

static int connect_now(floe_sql_conn *c, floe_error *err) {
    /* defaults first: the URI (expanded from dbname) overrides them */
    const char *keys[] = {"connect_timeout", "application_name", "client_encoding", "dbname",
                          NULL};
    const char *vals[] = {"10", "floe", "UTF8", c->uri, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (!pg)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", c->where);
    if (PQstatus(pg) != CONNECTION_OK) {
        char msg[512];
        first_line(PQerrorMessage(pg), msg, sizeof msg);
        PQfinish(pg);
        return floe_error_set(err, FLOE_EIO, "%s: cannot connect: %s", c->where, msg);
    }
    c->server_gone = false;
    PQsetNoticeReceiver(pg, on_notice, c);
    PGresult *r = PQexec(pg, "SELECT pg_backend_pid(), "
                             "(extract(epoch FROM backend_start) * 1000000)::bigint, "
                             "current_setting('synchronous_commit') "
                             "FROM pg_stat_activity WHERE pid = pg_backend_pid()");
    int rc = 0;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 3 &&
        !strcmp(PQgetvalue(r, 0, 2), "off")) {
        PGresult *set = PQexec(pg, "SET synchronous_commit = local");
        if (PQresultStatus(set) != PGRES_COMMAND_OK) {
            char msg[512];
            first_line(PQerrorMessage(pg), msg, sizeof msg);
            rc = floe_error_set(err, FLOE_EIO, "%s: raising synchronous_commit from off: %s",
                                c->where, msg);
        } else if (!atomic_exchange(&sync_commit_noted, 1)) {
            floe_log(FLOE_LOG_INFO, "%s: synchronous_commit is off on the server; floe's "
                     "sessions use local (a crash must not forget a commit floe relied on)",
                     c->where);
        }
        PQclear(set);
    }
    if (rc < 0) {
        PQfinish(pg);
    } else if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 || PQnfields(r) != 3) {
        char msg[512];
        first_line(PQerrorMessage(pg), msg, sizeof msg);
        rc = floe_error_set(err, FLOE_EIO, "%s: reading the session's process id: %s",
                            c->where, msg[0] ? msg : "no row");
        PQfinish(pg);
    } else {
        c->pg = pg;
        c->pid = atoi(PQgetvalue(r, 0, 0));
        snprintf(c->start, sizeof c->start, "%s", PQgetvalue(r, 0, 1));
    }
    PQclear(r);
    return rc;
}

static bool is_lost(floe_sql_conn *c, const PGresult *r) {
    if (!c->pg || PQstatus(c->pg) == CONNECTION_BAD || !r)
        return true;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (!state)
        return PQresultStatus(r) == PGRES_FATAL_ERROR && PQstatus(c->pg) != CONNECTION_OK;
    return !strncmp(state, "08", 2) || !strcmp(state, "57P01") || !strcmp(state, "57P02") ||
           !strcmp(state, "57P03");
}

/* An error the server reported on a live connection. */
static int map_error(floe_sql_conn *c, const PGresult *r, bool writes, const char *what,
                     floe_error *err) {
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    char msg[512];
    if (primary)
        first_line(primary, msg, sizeof msg);
    else
        first_line(PQresultErrorMessage(r), msg, sizeof msg);
    if (!state)
        state = "?????";
    int code = FLOE_EIO;
    if (!strcmp(state, "23505") || !strcmp(state, "42P07") || !strcmp(state, "42710"))
        code = FLOE_EEXISTS;
    else if (!strcmp(state, "40001") || !strcmp(state, "40P01"))
        code = FLOE_ECONFLICT;
    else if (!strcmp(state, "55P03") || !strcmp(state, "57014"))
        code = FLOE_EBUSY;
    else if (!strcmp(state, "40003") && writes)
        code = FLOE_EUNKNOWN_STATE;
    else if (!strncmp(state, "23", 2))
        code = FLOE_EINVALID;
    /* the SQLSTATE's five characters, 6 bits each, as the library code */
    int sys = 0;
    for (int i = 0; i < 5 && state[i]; i++)
        sys = sys * 64 + (state[i] & 63);
    return floe_error_sys(err, code, sys, "%s: %s: %s (SQLSTATE %s)", c->where, what, msg,
                          state);
}

static int settle(floe_sql_conn *c, floe_error *err);

/* Before a statement: inside a transaction the connection must be the one the
 * transaction lives on; outside, replace a connection that broke while idle, then settle
 * a lost write. */
static int ready(floe_sql_conn *c, floe_error *err) {
    if (c->in_tx) {
        if (c->tx_lost || !c->pg)
            return floe_error_set(err, FLOE_EIO,
                                  "%s: the connection was lost inside the transaction; it "
                                  "was rolled back",
                                  c->where);
        return 0;
    }
    /* Twice: the first read may return the FATAL message, only the next sees the end of
     * the stream. Neither blocks (libpq's socket is non-blocking). */
    if (c->pg && (PQconsumeInput(c->pg) == 0 || PQconsumeInput(c->pg) == 0 || c->server_gone ||
                  PQstatus(c->pg) != CONNECTION_OK ||
                  PQtransactionStatus(c->pg) != PQTRANS_IDLE))
        drop(c);
    if (!c->pg) {
        FLOE_FORWARD_IF_ERROR(connect_now(c, err));
    }
    if (c->settle && !c->settling)
        return settle(c, err);
    return 0;
}

/* '?' -> $n outside '...' literals. Caller frees. */
static char *translate(const char *sql, size_t nparams, floe_error *err) {
    size_t n = strlen(sql), q = 0;
    for (size_t i = 0; i < n; i++)
        q += sql[i] == '?';
    char *out = floe_malloc(n + q * 5 + 1);
    if (!out) {
        floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return NULL;
    }
    size_t k = 0, next = 1;
    bool literal = false;
    for (size_t i = 0; i < n; i++) {
        if (sql[i] == '\'')
            literal = !literal;
        if (sql[i] == '?' && !literal) {
            k += (size_t)snprintf(out + k, 7, "$%zu", next++);
            continue;
        }
        out[k++] = sql[i];
    }
    out[k] = '\0';
    if (next - 1 != nparams) {
        floe_free(out);
        floe_error_set(err, FLOE_EINTERNAL, "statement has %zu placeholders, %zu parameters",
                       next - 1, nparams);
        return NULL;
    }
    return out;
}

/* Run one statement. writes: a lost connection is an unknown outcome (never re-sent);
 * otherwise the statement is run once more on a fresh connection. */
static int run(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
               bool writes, PGresult **out, floe_error *err) {
    if (n > PG_MAX_PARAMS)
        return floe_error_set(err, FLOE_EINVALID, "too many statement parameters (%zu)", n);
    char *text = translate(sql, n, err);
    if (!text)
        return err ? err->code : FLOE_ENOMEM;
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        rc = ready(c, err);
        if (rc < 0)
            break;
        PGresult *r = PQexecParams(c->pg, text, (int)n, NULL, params, NULL, NULL, 0);
        ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            if (writes && !c->in_tx && lost_reply_fires()) {
                PQclear(r);
                arm_settle(c);
                drop(c);
                rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                    "%s: injected: the reply to a write was lost", c->where);
                break;
            }
            *out = r;
            break;
        }
        if (!is_lost(c, r)) {
            rc = map_error(c, r, writes, writes ? "statement" : "query", err);
            PQclear(r);
            break;
        }
        char msg[512];
        first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(c->pg), msg, sizeof msg);
        PQclear(r);
        if (c->in_tx) {
            c->tx_lost = true;
            drop(c);
            rc = floe_error_set(err, FLOE_EIO,
                                "%s: connection lost inside a transaction (%s); nothing of "
                                "it was committed",
                                c->where, msg);
            break;
        }
        if (writes) {
            arm_settle(c);
            drop(c);
            rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                "%s: connection lost after sending a change (%s): it may "
                                "or may not be applied",
                                c->where, msg);
            break;
        }
        drop(c);
        if (attempt == 0) {
            floe_log(FLOE_LOG_INFO, "%s: connection lost (%s); reconnecting", c->where, msg);
            continue;
        }
        rc = floe_error_set(err, FLOE_EIO, "%s: connection lost: %s", c->where, msg);
        break;
    }
    floe_free(text);
    return rc;
}

static int pg_exec(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
                   int64_t *changes, floe_error *err) {
    PGresult *r = NULL;
    FLOE_FORWARD_IF_ERROR(run(c, sql, params, n, true, &r, err));
    if (changes) {
        const char *t = PQcmdTuples(r);
        *changes = t && *t ? strtoll(t, NULL, 10) : 0;
    }
    PQclear(r);
    return 0;
}

static int pg_query(floe_sql_conn *c, const char *sql, const char *const *params, size_t n,
                    bool writes, floe_sql_row_fn fn, void *ctx, floe_error *err) {
    PGresult *r = NULL;
    FLOE_FORWARD_IF_ERROR(run(c, sql, params, n, writes, &r, err));
    int ncols = PQnfields(r), nrows = PQntuples(r), rc = 0;
    if (ncols > PG_MAX_COLS) {
        PQclear(r);
        return floe_error_set(err, FLOE_EINTERNAL, "query returns too many columns");
    }
    const char *cols[PG_MAX_COLS];
    for (int i = 0; i < nrows && rc == 0; i++) {
        for (int k = 0; k < ncols; k++)
            cols[k] = PQgetisnull(r, i, k) ? NULL : PQgetvalue(r, i, k);
        rc = fn(ctx, cols, (size_t)ncols, err);
    }
    PQclear(r);
    return rc;
}

static int row_flag(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)cols;
    (void)n;
    (void)err;
    *(bool *)ctx = true;
    return 0;
}

static int settle(floe_sql_conn *c, floe_error *err) {
    const int64_t limit_ms = c->settle_limit_ms;
    const int64_t start = floe_now_ns();
    char pid[16];
    snprintf(pid, sizeof pid, "%d", c->settle_pid);
    const char *params[] = {pid, c->settle_start};
    bool asked = false;
    int rc = 0;
    c->settling = true;
    for (;;) {
        bool alive = false;
        rc = pg_query(c, "SELECT 1 FROM pg_stat_activity WHERE pid = CAST(? AS INTEGER) AND "
                         "(extract(epoch FROM backend_start) * 1000000)::bigint = "
                         "CAST(? AS BIGINT)",
                      params, 2, false, row_flag, &alive, err);
        if (rc < 0)
            break;
        if (!alive) {
            c->settle = false;
            break;
        }
        if (!asked) { /* a refusal (other role) leaves us waiting for it to end */
            bool ignored = false;
            floe_error e;
            floe_error_clear(&e);
            pg_query(c, "SELECT pg_terminate_backend(CAST(? AS INTEGER))", params, 1, false,
                     row_flag, &ignored, &e);
            asked = true;
        }
        if ((floe_now_ns() - start) / 1000000 > limit_ms) {
            rc = floe_error_set(err, FLOE_EIO,
                                "%s: the server process %d that ran a change whose reply was "
                                "lost is still running after %lld ms; its outcome is not "
                                "settled",
                                c->where, c->settle_pid, (long long)limit_ms);
            break;
        }
        sleep_ms(10);
    }
    c->settling = false;
    return rc;
}

static int pg_begin(floe_sql_conn *c, floe_error *err) {
    if (c->in_tx)
        return floe_error_set(err, FLOE_EINVALID, "%s: a transaction is already open", c->where);
    PGresult *r = NULL;
    /* read semantics: BEGIN changes nothing, so a lost connection is retried */
    int rc = run(c, "BEGIN", NULL, 0, false, &r, err);
    PQclear(r);
    if (rc == 0) {
        c->in_tx = true;
        c->tx_lost = false;
    }
    return rc;
}

static int pg_commit(floe_sql_conn *c, floe_error *err) {
    if (!c->in_tx)
        return floe_error_set(err, FLOE_EINVALID, "%s: no transaction is open", c->where);
    c->in_tx = false;
    if (c->tx_lost || !c->pg) {
        c->tx_lost = false;
        return floe_error_set(err, FLOE_EIO,
                              "%s: the connection was lost inside the transaction; nothing "
                              "was committed",
                              c->where);
    }
    PGresult *r = PQexec(c->pg, "COMMIT");
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    int rc = 0;
    if (st == PGRES_COMMAND_OK) {
        /* COMMIT of a transaction that had failed answers ROLLBACK */
        if (strcmp(PQcmdStatus(r), "COMMIT") != 0)
            rc = floe_error_set(err, FLOE_EIO,
                                "%s: the transaction had failed and was rolled back", c->where);
        else if (lost_reply_fires()) {
            arm_settle(c);
            drop(c);
            rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                                "%s: injected: the reply to COMMIT was lost", c->where);
        }
    } else if (is_lost(c, r)) {
        char msg[512];
        first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(c->pg), msg, sizeof msg);
        arm_settle(c);
        drop(c);
        rc = floe_error_set(err, FLOE_EUNKNOWN_STATE,
                            "%s: connection lost during COMMIT (%s): the transaction may or "
                            "may not be committed",
                            c->where, msg);
    } else { /* the server refused to commit (serialization, deferred constraint) */
        rc = map_error(c, r, false, "commit", err);
    }
    PQclear(r);
    return rc;
}

static void pg_rollback(floe_sql_conn *c) {
    bool was = c->in_tx;
    c->in_tx = false;
    c->tx_lost = false;
    if (c->pg && (was || PQtransactionStatus(c->pg) == PQTRANS_INTRANS ||
                  PQtransactionStatus(c->pg) == PQTRANS_INERROR)) {
        PGresult *r = PQexec(c->pg, "ROLLBACK");
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            drop(c); /* the next statement reconnects; the server ends the transaction */
        PQclear(r);
    }
}

static int pg_has_column(floe_sql_conn *c, const char *table, const char *column, bool *has,
                         floe_error *err) {
    const char *params[] = {table, column};
    bool found = false;
    int rc = pg_query(c,
                      "SELECT 1 FROM information_schema.columns WHERE table_schema = "
                      "current_schema() AND table_name = ? AND column_name = ?",
                      params, 2, false, row_flag, &found, err);
    if (rc == 0)
        *has = found;
    return rc;
}

static void pg_close(floe_sql_conn *c) {
    if (!c)
        return;
    drop(c); /* the server rolls back a transaction left open */
    floe_free(c->uri);
    floe_free(c->where);
    floe_free(c);
}

static const floe_sql_driver pg_driver = {
    .name = "postgresql",
    .outcome_final = true, /* see "Why reading after an unknown outcome is final" */
    .exec = pg_exec,
    .query = pg_query,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .has_column = pg_has_column,
    .close = pg_close,
};

int floe_pg_connect(const char *uri, const floe_sql_options *opts,
                    const floe_sql_driver **driver, floe_sql_conn **out, floe_error *err) {
    if (!uri || (strncmp(uri, "postgresql://", 13) && strncmp(uri, "postgres://", 11)))
        return floe_error_set(err, FLOE_EINVALID, "not a postgresql:// uri");
    /* libpq first: every other function here runs on a connection this made */
    if (!floe_lazy_pq(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    floe_sql_conn *c = floe_calloc(1, sizeof *c);
    if (!c || !(c->uri = floe_strdup(uri)) || !(c->where = floe_sql_uri_redact(uri))) {
        pg_close(c);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    c->settle_limit_ms = opts && opts->settle_ms > 0 ? opts->settle_ms : 30000;
    int rc = connect_now(c, err);
    if (rc < 0) {
        pg_close(c);
        return rc;
    }
    *driver = &pg_driver;
    *out = c;
    return 0;
}

int floe_catalog_open_postgres(floe_io *io, const char *uri, const char *name, const char *warehouse,
                               floe_catalog **out, floe_error *err) {
    return floe_catalog_open_postgres_with(io, uri, name, warehouse, NULL, out, err);
}

int floe_catalog_open_postgres_with(floe_io *io, const char *uri, const char *name,
                                    const char *warehouse, const floe_sql_options *opts,
                                    floe_catalog **out, floe_error *err) {
    int is_pg = 0;
    char *target = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_uri_parse(uri, &is_pg, &target, err));
    if (!is_pg) {
        floe_free(target);
        return floe_error_set(err, FLOE_EINVALID, "not a postgresql:// uri");
    }
    const floe_sql_driver *drv = NULL;
    floe_sql_conn *conn = NULL;
    floe_sql *db = NULL;
    int rc = floe_pg_connect(target, opts, &drv, &conn, err);
    floe_free(target);
    if (rc == 0)
        rc = floe_sql_wrap(drv, conn, &db, err);
    if (rc < 0)
        return rc;
    floe_catalog *c = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_catalog_open(db, name, warehouse, &c, err));
    c->io = io ? io : floe_io_default();
    if (opts)
        c->sql_opts = *opts;
    if ((rc = floe_catalog_set_lease_db(c, uri, err)) < 0) {
        floe_catalog_close(c);
        return rc;
    }
    *out = c;
    return 0;
}
