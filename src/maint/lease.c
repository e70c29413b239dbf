/*
 * lease.c - maintenance leases in the catalog database: one holder per (catalog, table,
 * job) at a time.
 *
 * Table (same DDL on SQLite and PostgreSQL):
 *   floe_leases(catalog_name VARCHAR(255), table_namespace VARCHAR(255),
 *               table_name VARCHAR(255), job VARCHAR(64), owner VARCHAR(255),
 *               expires_at BIGINT, PRIMARY KEY(catalog_name, table_namespace, table_name,
 *               job))
 *
 * Acquire is one statement, atomic on both databases:
 *   INSERT ... VALUES(...) ON CONFLICT(<key>) DO UPDATE SET owner=excluded.owner,
 *       expires_at=excluded.expires_at
 *     WHERE floe_leases.expires_at < <now> OR floe_leases.owner = excluded.owner
 * One changed row = the lease is ours (new, taken over after expiry, or re-entered by
 * the same owner). A PostgreSQL maintainer that claims work in batches would use
 * SELECT ... FROM floe_leases WHERE expires_at < $now FOR UPDATE SKIP LOCKED, then the
 * same UPDATE, in one transaction; the single-row form above needs no explicit locking.
 *
 * Renew: UPDATE ... SET expires_at WHERE <key> AND owner = me (0 rows = lost).
 * Release: DELETE ... WHERE <key> AND owner = me.
 *
 * The connection is used from the scheduler thread and the heartbeat thread: a mutex
 * serialises them (SQLite connections opened NOMUTEX are not shareable).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

#include "floe/io.h"
#include "maint_internal.h"

struct floe_lease_store {
    sqlite3 *db;
    pthread_mutex_t mu;
};

static const char lease_ddl[] =
    "CREATE TABLE IF NOT EXISTS floe_leases ("
    " catalog_name VARCHAR(255) NOT NULL,"
    " table_namespace VARCHAR(255) NOT NULL,"
    " table_name VARCHAR(255) NOT NULL,"
    " job VARCHAR(64) NOT NULL,"
    " owner VARCHAR(255) NOT NULL,"
    " expires_at BIGINT NOT NULL,"
    " PRIMARY KEY (catalog_name, table_namespace, table_name, job))";

int floe_lease_store_open_sqlite(const char *db_path, floe_lease_store **out, floe_error *err) {
    floe_lease_store *s = floe_calloc(1, sizeof *s);
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    int rc = 0;
    if (sqlite3_open_v2(db_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                        SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "lease store %s: %s", db_path,
                            s->db ? sqlite3_errmsg(s->db) : "cannot open");
        goto done;
    }
    sqlite3_busy_timeout(s->db, 10000);
    char *msg = NULL;
    if (sqlite3_exec(s->db, lease_ddl, NULL, NULL, &msg) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "lease store %s: %s", db_path,
                            msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        goto done;
    }
    *out = s;
    s = NULL;
done:
    floe_lease_store_close(s);
    return rc;
}

int floe_lease_store_open(const floe_catalog_config *cfg, floe_lease_store **out,
                          floe_error *err) {
    char *path = NULL;
    int rc = 0;
    if (cfg->type && !strcmp(cfg->type, "sql")) {
        const char *uri = cfg->uri ? cfg->uri : "";
        if (!strncmp(uri, "sqlite:///", 10))
            uri += 10;
        else if (strstr(uri, "://"))
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "%s: leases need a SQLite catalog in this build", cfg->uri);
        path = floe_strdup(uri);
    } else {
        char *p = cfg->warehouse ? floe_io_join(cfg->warehouse, "_leases.db") : NULL;
        path = p ? floe_io_local_path(p) : NULL;
        floe_free(p);
    }
    if (!path || !*path) {
        floe_free(path);
        return floe_error_set(err, FLOE_EINVALID, "no database for leases in catalog %s",
                              cfg->name ? cfg->name : "?");
    }
    rc = floe_lease_store_open_sqlite(path, out, err);
    floe_free(path);
    return rc;
}

void floe_lease_store_close(floe_lease_store *s) {
    if (!s)
        return;
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    floe_free(s);
}

/* Run one statement with the key bound to ?1..?4 and extra values after; *changes. */
static int run(floe_lease_store *s, const char *sql, const floe_lease_key *k,
               const char *owner, int64_t a, int64_t b, int64_t *changes, floe_error *err) {
    sqlite3_stmt *st = NULL;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "lease: %s", sqlite3_errmsg(s->db));
        goto done;
    }
    sqlite3_bind_text(st, 1, k->catalog_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, k->table_namespace, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, k->table_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, k->job, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, owner, -1, SQLITE_STATIC);
    int np = sqlite3_bind_parameter_count(st);
    if (np >= 6)
        sqlite3_bind_int64(st, 6, a);
    if (np >= 7)
        sqlite3_bind_int64(st, 7, b);
    int s_rc = sqlite3_step(st);
    if (s_rc != SQLITE_DONE) {
        rc = floe_error_sys(err, s_rc == SQLITE_BUSY ? FLOE_EBUSY : FLOE_EIO, s_rc, "lease: %s",
                            sqlite3_errmsg(s->db));
        goto done;
    }
    *changes = sqlite3_changes(s->db);
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int floe_lease_acquire(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       int64_t ttl_ms, bool *acquired, floe_error *err) {
    int64_t now = floe_wall_ms(), changes = 0;
    FLOE_FORWARD_IF_ERROR(run(s,
        "INSERT INTO floe_leases(catalog_name, table_namespace, table_name, job, owner, "
        "expires_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
        "ON CONFLICT(catalog_name, table_namespace, table_name, job) DO UPDATE SET "
        "owner = excluded.owner, expires_at = excluded.expires_at "
        "WHERE floe_leases.expires_at < ?7 OR floe_leases.owner = excluded.owner",
        k, owner, now + ttl_ms, now, &changes, err));
    *acquired = changes == 1;
    return 0;
}

int floe_lease_renew(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                     int64_t ttl_ms, bool *held, floe_error *err) {
    int64_t changes = 0;
    FLOE_FORWARD_IF_ERROR(run(s,
        "UPDATE floe_leases SET expires_at = ?6 WHERE catalog_name = ?1 AND "
        "table_namespace = ?2 AND table_name = ?3 AND job = ?4 AND owner = ?5",
        k, owner, floe_wall_ms() + ttl_ms, 0, &changes, err));
    *held = changes == 1;
    return 0;
}

int floe_lease_release(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       floe_error *err) {
    int64_t changes = 0;
    return run(s,
               "DELETE FROM floe_leases WHERE catalog_name = ?1 AND table_namespace = ?2 AND "
               "table_name = ?3 AND job = ?4 AND owner = ?5",
               k, owner, 0, 0, &changes, err);
}
