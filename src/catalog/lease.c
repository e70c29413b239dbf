/*
 * lease.c - leases in the catalog database (floe/lease.h), one SQL text for SQLite and
 * PostgreSQL apart from the clock expression and the row locking clause.
 *
 * Why each operation is safe under concurrency:
 *   acquire   one INSERT ... ON CONFLICT DO UPDATE ... WHERE (holder is us, or expired).
 *             PostgreSQL: concurrent upserts of one key serialise on the row; the loser
 *             re-evaluates the WHERE against the winner's committed row and changes
 *             nothing. SQLite: writers are serialised by the database lock.
 *   any       candidate rows are made to exist first (INSERT ... ON CONFLICT DO NOTHING,
 *             each its own transaction, so claimers never wait on each other's new rows);
 *             then in one transaction SELECT the free ones FOR UPDATE SKIP LOCKED (a row
 *             another claimer is deciding on is skipped, not waited for), LIMIT 1, and
 *             UPDATE the one locked. SQLite: BEGIN IMMEDIATE serialises claimers.
 *   renew     UPDATE ... WHERE owner = us: a lease taken over is not renewed.
 *   release   DELETE ... WHERE owner = us (or, for a restarted process, owner LIKE
 *             "<its name>/%": its predecessor's).
 * A row with owner '' (made by acquire_any) is a lease nobody holds.
 *
 * Unknown outcomes (FLOE_EUNKNOWN_STATE: the connection was lost after sending) are
 * passed on; acquire and renew are idempotent for the same owner, so the caller may
 * simply call them again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "floe/io.h"
#include "floe/lease.h"
#include "sql_driver.h"

struct floe_lease_store {
    floe_sql *db;
    bool owned;
};

#define LEASE_NAME_MAX 255
#define LEASE_TTL_MAX (366LL * 24 * 3600 * 1000)
#define LEASE_ANY_MAX 256

static const char SQL_CREATE_LEASES[] =
    "CREATE TABLE IF NOT EXISTS floe_leases ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, "
    "job VARCHAR(255) NOT NULL, "
    "owner VARCHAR(255) NOT NULL, "
    "expires_at BIGINT NOT NULL, "
    "PRIMARY KEY (catalog_name, table_namespace, table_name, job))";

/* Milliseconds since the epoch by the database's clock. */
#define NOW_PG FLOE_SQL_NOW_PG
#define NOW_SQLITE FLOE_SQL_NOW_SQLITE

#define KEY_WHERE "catalog_name = ? AND table_namespace = ? AND table_name = ? AND job = ?"

#define SQL_ACQUIRE(NOW)                                                                   \
    "INSERT INTO floe_leases (catalog_name, table_namespace, table_name, job, owner, "     \
    "expires_at) VALUES (?, ?, ?, ?, ?, " NOW " + CAST(? AS BIGINT)) "                      \
    "ON CONFLICT (catalog_name, table_namespace, table_name, job) DO UPDATE SET "          \
    "owner = excluded.owner, expires_at = excluded.expires_at "                            \
    "WHERE floe_leases.owner = excluded.owner OR floe_leases.expires_at <= " NOW " "       \
    "RETURNING owner, expires_at, " NOW
#define SQL_RENEW(NOW)                                                                     \
    "UPDATE floe_leases SET expires_at = " NOW " + CAST(? AS BIGINT) WHERE " KEY_WHERE     \
    " AND owner = ? RETURNING owner, expires_at, " NOW
#define SQL_GET(NOW) "SELECT owner, expires_at, " NOW " FROM floe_leases WHERE " KEY_WHERE
#define SQL_ANY_SELECT(NOW)                                                                \
    "SELECT job FROM floe_leases WHERE catalog_name = ? AND table_namespace = ? AND "      \
    "table_name = ? AND expires_at <= " NOW " AND job IN ("
#define SQL_ANY_TAIL(NOW) ") ORDER BY expires_at, job LIMIT 1"

typedef struct dialect_sql {
    const char *acquire, *renew, *get, *any_select, *any_tail, *any_lock;
} dialect_sql;

static const dialect_sql PG = {
    SQL_ACQUIRE(NOW_PG), SQL_RENEW(NOW_PG),     SQL_GET(NOW_PG),
    SQL_ANY_SELECT(NOW_PG), SQL_ANY_TAIL(NOW_PG), " FOR UPDATE SKIP LOCKED",
};
static const dialect_sql SQLITE = {
    SQL_ACQUIRE(NOW_SQLITE),    SQL_RENEW(NOW_SQLITE),    SQL_GET(NOW_SQLITE),
    SQL_ANY_SELECT(NOW_SQLITE), SQL_ANY_TAIL(NOW_SQLITE), "",
};

static const char SQL_ANY_INSERT[] =
    "INSERT INTO floe_leases (catalog_name, table_namespace, table_name, job, owner, "
    "expires_at) VALUES (?, ?, ?, ?, '', 0) ON CONFLICT DO NOTHING";
static const char SQL_ANY_TAKE_PG[] =
    "UPDATE floe_leases SET owner = ?, expires_at = " NOW_PG " + CAST(? AS BIGINT) WHERE "
    KEY_WHERE;
static const char SQL_ANY_TAKE_SQLITE[] =
    "UPDATE floe_leases SET owner = ?, expires_at = " NOW_SQLITE " + CAST(? AS BIGINT) WHERE "
    KEY_WHERE;
static const char SQL_RELEASE[] = "DELETE FROM floe_leases WHERE " KEY_WHERE " AND owner = ?";

static const dialect_sql *dialect(const floe_sql *db) {
    return !strcmp(floe_sql_dialect(db), "postgresql") ? &PG : &SQLITE;
}

static int check_text(const char *what, const char *s, bool may_be_empty, floe_error *err) {
    if (!s || (!may_be_empty && !*s))
        return floe_error_set(err, FLOE_EINVALID, "lease: %s must not be empty", what);
    if (strlen(s) > LEASE_NAME_MAX)
        return floe_error_set(err, FLOE_EINVALID, "lease: %s longer than %d bytes", what,
                              LEASE_NAME_MAX);
    return 0;
}

static int check_key(const floe_lease_key *k, bool job, floe_error *err) {
    if (!k)
        return floe_error_set(err, FLOE_EINVALID, "lease: no key");
    FLOE_FORWARD_IF_ERROR(check_text("catalog name", k->catalog_name, false, err));
    FLOE_FORWARD_IF_ERROR(check_text("namespace", k->table_namespace, true, err));
    FLOE_FORWARD_IF_ERROR(check_text("table name", k->table_name, true, err));
    if (job)
        FLOE_FORWARD_IF_ERROR(check_text("job", k->job, false, err));
    return 0;
}

static int check_ttl(int64_t ttl_ms, floe_error *err) {
    if (ttl_ms <= 0 || ttl_ms > LEASE_TTL_MAX)
        return floe_error_set(err, FLOE_EINVALID, "lease: ttl %lld ms out of range",
                              (long long)ttl_ms);
    return 0;
}

static int lease_init(floe_sql *db, floe_error *err) {
    if (db->leases_ready)
        return 0;
    int rc = floe_sql_exec(db, SQL_CREATE_LEASES, NULL, 0, NULL, err);
    if (rc == FLOE_EEXISTS) /* created concurrently (PostgreSQL) */
        rc = 0;
    if (rc == FLOE_EUNKNOWN_STATE) { /* DDL: asking again is harmless */
        floe_error_clear(err);
        rc = floe_sql_exec(db, SQL_CREATE_LEASES, NULL, 0, NULL, err);
    }
    if (rc == 0)
        db->leases_ready = true;
    return rc;
}

typedef struct info_row {
    floe_lease_info info;
    bool seen;
} info_row;

/* (owner, expires_at, now) */
static int row_info(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    info_row *r = ctx;
    if (n < 3 || !cols[0] || !cols[1] || !cols[2])
        return floe_error_set(err, FLOE_ECORRUPT, "floe_leases: incomplete row");
    snprintf(r->info.owner, sizeof r->info.owner, "%s", cols[0]);
    r->info.expires_at = strtoll(cols[1], NULL, 10);
    r->info.now = strtoll(cols[2], NULL, 10);
    r->seen = true;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * stores
 * ------------------------------------------------------------------------------------- */

static int store_new(floe_sql *db, bool owned, floe_lease_store **out, floe_error *err) {
    floe_lease_store *s = floe_calloc(1, sizeof *s);
    if (!s) {
        if (owned)
            floe_sql_close(db);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    s->db = db;
    s->owned = owned;
    int rc = lease_init(db, err);
    if (rc < 0) {
        floe_lease_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int floe_lease_store_open_sql(floe_sql *db, floe_lease_store **out, floe_error *err) {
    if (!db)
        return floe_error_set(err, FLOE_EINVALID, "lease store: no database connection");
    return store_new(db, false, out, err);
}

int floe_lease_store_open_sqlite(const char *db_path, const floe_sql_options *opts,
                                 floe_lease_store **out, floe_error *err) {
    if (!db_path || !*db_path || strstr(db_path, "://"))
        return floe_error_set(err, FLOE_EINVALID, "lease store: not a SQLite file path");
    floe_sql *db = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_open_with(db_path, opts, &db, err));
    return store_new(db, true, out, err);
}

int floe_lease_store_open(const floe_catalog_config *cfg, floe_lease_store **out,
                          floe_error *err) {
    const char *type = cfg->type ? cfg->type : "sql";
    if (!strcmp(type, "filesystem") || !strcmp(type, "hadoop")) {
        const char *wh = cfg->warehouse ? cfg->warehouse : cfg->uri;
        char *local = wh ? floe_io_local_path(wh) : NULL;
        if (!local)
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "leases of a filesystem catalog need a local warehouse (%s); "
                                  "configure a sql catalog (PostgreSQL) instead",
                                  wh ? wh : "none");
        char *path = floe_io_join(local, "_leases.db");
        int rc = path ? floe_io_mkdirs(cfg->io, local, err) : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(local);
        if (rc == 0)
            rc = floe_lease_store_open_sqlite(path, &cfg->sql, out, err);
        floe_free(path);
        return rc;
    }
    const char *uri = cfg->uri;
    if (!strcmp(type, "rest")) {
        /* a REST catalog holds no leases: they go to its state database */
        if (!cfg->state_db)
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "a REST catalog holds no leases: configure its state-db "
                                  "(FLOE_STATE_DB; a SQLite file, or PostgreSQL for several "
                                  "nodes)");
        uri = cfg->state_db;
    }
    if (!uri)
        return floe_error_set(err, FLOE_EINVALID, "lease store: the sql catalog has no uri");
    floe_sql *db = NULL;
    FLOE_FORWARD_IF_ERROR(floe_sql_open_with(uri, &cfg->sql, &db, err));
    return store_new(db, true, out, err);
}

floe_lease_store *floe_catalog_commit_leases(floe_catalog *c) {
    if (!c || c->commit_leases || c->commit_leases_failed || !c->lease_db)
        return c ? c->commit_leases : NULL;
    floe_error e;
    floe_error_clear(&e);
    floe_sql *db = NULL;
    if (floe_sql_open_with(c->lease_db, &c->sql_opts, &db, &e) < 0 ||
        store_new(db, true, &c->commit_leases, &e) < 0) {
        c->commit_leases = NULL;
        c->commit_leases_failed = true;
        floe_log(FLOE_LOG_WARN, "catalog %s: no commit leases (commits take no priority): %s",
                 c->name, e.msg);
    }
    return c->commit_leases;
}

void floe_lease_store_close(floe_lease_store *s) {
    if (!s)
        return;
    if (s->owned)
        floe_sql_close(s->db);
    floe_free(s);
}

/* ---------------------------------------------------------------------------------------
 * operations
 * ------------------------------------------------------------------------------------- */

int floe_lease_get(floe_lease_store *s, const floe_lease_key *k, floe_lease_info *info,
                   floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_key(k, true, err));
    floe_sql *db = s->db;
    const char *params[] = {k->catalog_name, k->table_namespace, k->table_name, k->job};
    info_row r = {0};
    FLOE_FORWARD_IF_ERROR(floe_sql_query(db, dialect(db)->get, params, 4, row_info, &r, err));
    if (!r.seen || !r.info.owner[0])
        return floe_error_set(err, FLOE_ENOTFOUND, "lease %s.%s/%s: nobody holds it",
                              k->table_namespace, k->table_name, k->job);
    if (info)
        *info = r.info;
    return 0;
}

int floe_lease_acquire(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       int64_t ttl_ms, bool *acquired, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_key(k, true, err));
    FLOE_FORWARD_IF_ERROR(check_text("owner", owner, false, err));
    FLOE_FORWARD_IF_ERROR(check_ttl(ttl_ms, err));
    floe_sql *db = s->db;
    char ttl[32];
    snprintf(ttl, sizeof ttl, "%lld", (long long)ttl_ms);
    const char *params[] = {k->catalog_name, k->table_namespace, k->table_name, k->job, owner,
                            ttl};
    info_row r = {0};
    FLOE_FORWARD_IF_ERROR(
        floe_sql_query_writes(db, dialect(db)->acquire, params, 6, row_info, &r, err));
    *acquired = r.seen; /* no row back: the WHERE kept another owner's live lease */
    return 0;
}

typedef struct job_row {
    char job[LEASE_NAME_MAX + 1];
    bool seen;
} job_row;

static int row_job(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    job_row *r = ctx;
    if (n >= 1 && cols[0] && !r->seen) {
        snprintf(r->job, sizeof r->job, "%s", cols[0]);
        r->seen = true;
    }
    return 0;
}

int floe_lease_acquire_any(floe_lease_store *s, const floe_lease_key *k,
                           const char *const *jobs, size_t n, const char *owner,
                           int64_t ttl_ms, size_t *which, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_key(k, false, err));
    FLOE_FORWARD_IF_ERROR(check_text("owner", owner, false, err));
    FLOE_FORWARD_IF_ERROR(check_ttl(ttl_ms, err));
    if (n == 0 || n > LEASE_ANY_MAX)
        return floe_error_set(err, FLOE_EINVALID, "lease: %zu candidates (1..%d)", n,
                              LEASE_ANY_MAX);
    for (size_t i = 0; i < n; i++)
        FLOE_FORWARD_IF_ERROR(check_text("job", jobs[i], false, err));
    floe_sql *db = s->db;
    const dialect_sql *d = dialect(db);
    int rc = 0;
    const char **params = NULL;
    char *select = NULL;
    bool own = false;
    job_row picked = {0};
    size_t idx = n;
    /* 1. every candidate has a row (each insert its own transaction, so claimers do not
     *    wait on each other's new rows; an unknown outcome of one is harmless: the row
     *    either exists or the next call makes it) */
    for (size_t i = 0; i < n; i++) {
        const char *p[] = {k->catalog_name, k->table_namespace, k->table_name, jobs[i]};
        rc = floe_sql_exec(db, SQL_ANY_INSERT, p, 4, NULL, err);
        if (rc == FLOE_EUNKNOWN_STATE)
            rc = floe_sql_exec(db, SQL_ANY_INSERT, p, 4, NULL, err);
        if (rc < 0)
            goto done;
    }
    /* 2. lock one free row and take it */
    params = floe_calloc(n + 3, sizeof *params);
    size_t len = strlen(d->any_select) + 3 * n + strlen(d->any_tail) + strlen(d->any_lock) + 1;
    select = floe_malloc(len);
    if (!params || !select)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t pos = (size_t)snprintf(select, len, "%s", d->any_select);
    for (size_t i = 0; i < n; i++)
        pos += (size_t)snprintf(select + pos, len - pos, "%s?", i ? ", " : "");
    snprintf(select + pos, len - pos, "%s%s", d->any_tail, d->any_lock);
    params[0] = k->catalog_name;
    params[1] = k->table_namespace;
    params[2] = k->table_name;
    for (size_t i = 0; i < n; i++)
        params[3 + i] = jobs[i];
    own = !floe_sql_in_transaction(db);
    if (own)
        FLOE_CHECK(floe_sql_begin(db, err));
    FLOE_CHECK(floe_sql_query(db, select, params, n + 3, row_job, &picked, err));
    if (picked.seen) {
        char ttl[32];
        snprintf(ttl, sizeof ttl, "%lld", (long long)ttl_ms);
        const char *take[] = {owner, ttl, k->catalog_name, k->table_namespace, k->table_name,
                              picked.job};
        int64_t changed = 0;
        FLOE_CHECK(floe_sql_exec(db, d == &PG ? SQL_ANY_TAKE_PG : SQL_ANY_TAKE_SQLITE, take, 6,
                                 &changed, err));
        if (changed != 1)
            FLOE_FAIL(err, FLOE_EINTERNAL, "lease %s.%s/%s: the locked row changed under us",
                      k->table_namespace, k->table_name, picked.job);
        for (size_t i = 0; i < n && idx == n; i++)
            if (!strcmp(jobs[i], picked.job))
                idx = i;
        if (idx == n)
            FLOE_FAIL(err, FLOE_EINTERNAL, "lease: claimed job %s is not a candidate",
                      picked.job);
    }
    if (own) {
        own = false; /* commit ends the transaction whatever it answers */
        FLOE_CHECK(floe_sql_commit(db, err));
    }
    *which = idx;
done:
    if (own)
        floe_sql_rollback(db);
    floe_free(params);
    floe_free(select);
    return rc;
}

int floe_lease_renew(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                     int64_t ttl_ms, bool *held, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_key(k, true, err));
    FLOE_FORWARD_IF_ERROR(check_text("owner", owner, false, err));
    FLOE_FORWARD_IF_ERROR(check_ttl(ttl_ms, err));
    floe_sql *db = s->db;
    char ttl[32];
    snprintf(ttl, sizeof ttl, "%lld", (long long)ttl_ms);
    const char *params[] = {ttl, k->catalog_name, k->table_namespace, k->table_name, k->job,
                            owner};
    info_row r = {0};
    FLOE_FORWARD_IF_ERROR(
        floe_sql_query_writes(db, dialect(db)->renew, params, 6, row_info, &r, err));
    *held = r.seen;
    return 0;
}

int floe_lease_release(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_key(k, true, err));
    FLOE_FORWARD_IF_ERROR(check_text("owner", owner, false, err));
    const char *params[] = {k->catalog_name, k->table_namespace, k->table_name, k->job, owner};
    return floe_sql_exec(s->db, SQL_RELEASE, params, 5, NULL, err);
}

int floe_lease_release_prefix(floe_lease_store *s, const char *catalog_name,
                              const char *owner_prefix, const char *job_prefix,
                              int64_t *released, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_text("catalog name", catalog_name, false, err));
    FLOE_FORWARD_IF_ERROR(check_text("owner prefix", owner_prefix, false, err));
    FLOE_FORWARD_IF_ERROR(check_text("job prefix", job_prefix, true, err));
    char ol[24], jl[24];
    snprintf(ol, sizeof ol, "%zu", strlen(owner_prefix));
    snprintf(jl, sizeof jl, "%zu", strlen(job_prefix));
    const char *params[] = {catalog_name, ol, owner_prefix, jl, job_prefix};
    int64_t n = 0;
    FLOE_FORWARD_IF_ERROR(floe_sql_exec(
        s->db, "DELETE FROM floe_leases WHERE catalog_name = ? AND "
               "substr(owner, 1, CAST(? AS INTEGER)) = ? AND "
               "substr(job, 1, CAST(? AS INTEGER)) = ?", params, 5, &n, err));
    if (released)
        *released = n;
    return 0;
}

void floe_lease_owner_id(char out[128]) {
    char host[64] = "host";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    uint32_t rnd;
    floe_random_bytes(&rnd, sizeof rnd);
    snprintf(out, 128, "%s:%ld:%08x", host, (long)getpid(), (unsigned)rnd);
}
