/*
 * floe/lease.h - leases: "owner X works on job J of table T until time E", kept in the
 * catalog database so that processes on several machines agree (DESIGN.md: maintenance
 * holds one lease per job; compaction workers claim partitions).
 *
 * Table (created on first use, beside the catalog's tables; same DDL on both databases):
 *
 *   floe_leases(catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
 *       table_name VARCHAR(255) NOT NULL, job VARCHAR(255) NOT NULL,
 *       owner VARCHAR(255) NOT NULL, expires_at BIGINT NOT NULL,
 *       PRIMARY KEY (catalog_name, table_namespace, table_name, job))
 *
 * expires_at is milliseconds since the Unix epoch by the database's clock
 * (PostgreSQL clock_timestamp(); SQLite: the machine's clock, shared by every process that
 * can open the file), so machines with skewed clocks still agree on who holds what.
 * A lease whose expires_at has passed is free: there are no heartbeats beyond renew, and
 * a holder that dies loses its lease after ttl.
 *
 * Rules for holders: renew well before expiry (every ttl/3); treat *held = false from
 * renew as "stop now, someone else may be working"; do the work so that two holders
 * in a row (the lease expired under a slow holder) cannot corrupt anything - the catalog's
 * compare-and-swap still decides which commit wins.
 *
 * This is the lease API include/floe/maint.h sketches (same names and signatures: the
 * maintenance scheduler uses it; floe_lease_acquire_any and floe_lease_get are for
 * compaction workers and for tests), implemented once for SQLite and PostgreSQL.
 *
 * Errors as in floe/sql.h (a lost connection during acquire/renew is FLOE_EUNKNOWN_STATE;
 * both are idempotent for the same owner, so calling again settles it), plus
 * FLOE_EINVALID for empty or over-long names (255 bytes) and ttl out of (0, 1 year].
 *
 * Ownership: a floe_lease_store owns its connection until floe_lease_store_close.
 */
#ifndef FLOE_LEASE_H
#define FLOE_LEASE_H

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/sql.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_lease_store floe_lease_store;

/* The database of a catalog configuration: type sql -> its uri (SQLite file or
 * PostgreSQL, a connection of its own); filesystem -> SQLite <warehouse>/_leases.db
 * (local warehouses only: FLOE_EUNSUPPORTED otherwise); rest -> its state_db
 * (FLOE_EUNSUPPORTED when none is configured). The table is created when
 * missing. */
int floe_lease_store_open(const floe_catalog_config *cfg, floe_lease_store **out,
                          floe_error *err) FLOE_NODISCARD;
/* A SQLite file of its own, opened with opts (NULL: the defaults of floe/sql.h). */
int floe_lease_store_open_sqlite(const char *db_path, const floe_sql_options *opts,
                                 floe_lease_store **out, floe_error *err) FLOE_NODISCARD;
/* Leases on an open connection, for example the catalog's own (floe_catalog_sql(c)):
 * borrowed, must outlive the store; same one-thread rule. */
int floe_lease_store_open_sql(floe_sql *db, floe_lease_store **out, floe_error *err) FLOE_NODISCARD;
void floe_lease_store_close(floe_lease_store *s); /* accepts NULL */

/* What a lease is on. All borrowed for the call. */
typedef struct floe_lease_key {
    const char *catalog_name;    /* catalog name (floe_catalog_name) */
    const char *table_namespace; /* "" for catalog-wide jobs */
    const char *table_name;      /* "" for namespace- or catalog-wide jobs */
    const char *job;             /* "expire", "orphans", "compact/<partition>", ... */
} floe_lease_key;

/* Take the lease for ttl_ms when it is free, expired, or already ours (then this renews
 * it): *acquired = true, held until now + ttl_ms; false when another owner holds it.
 * Atomic: of any number of concurrent callers for a free lease exactly one gets it. */
int floe_lease_acquire(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       int64_t ttl_ms, bool *acquired, floe_error *err) FLOE_NODISCARD;
/* Extend a lease owner holds to now + ttl_ms (also after expiry when nobody took it
 * over). *held = false when it was lost: stop working, someone else may have started. */
int floe_lease_renew(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                     int64_t ttl_ms, bool *held, floe_error *err) FLOE_NODISCARD;
/* Give the lease up (0 also when owner did not hold it any more). */
int floe_lease_release(floe_lease_store *s, const floe_lease_key *k, const char *owner,
                       floe_error *err) FLOE_NODISCARD;
/* Give up every lease of catalog_name whose owner starts with owner_prefix and whose job
 * starts with job_prefix: what a restarted process does with the leases of its dead
 * predecessor (owner names that share the prefix are that process's alone). *released
 * (when not NULL) receives how many. */
int floe_lease_release_prefix(floe_lease_store *s, const char *catalog_name,
                              const char *owner_prefix, const char *job_prefix,
                              int64_t *released, floe_error *err) FLOE_NODISCARD;

/* Claim one free (or expired) job among n candidates of k's table (k->job is ignored)
 * for ttl_ms, skipping candidates another claimer is deciding on at this moment
 * (PostgreSQL SELECT ... FOR UPDATE SKIP LOCKED; SQLite serialises claimers with BEGIN
 * IMMEDIATE). Candidates held by anyone (owner included) are not taken; among the free
 * ones the one free the longest (never held first) wins, then the smallest job name.
 * *which = index of the claimed job, or n when none is free (still 0 returned). n <= 256. */
int floe_lease_acquire_any(floe_lease_store *s, const floe_lease_key *k,
                           const char *const *jobs, size_t n, const char *owner,
                           int64_t ttl_ms, size_t *which, floe_error *err) FLOE_NODISCARD;

typedef struct floe_lease_info {
    char owner[256];    /* current holder */
    int64_t expires_at; /* ms since the epoch, database clock */
    int64_t now;        /* the database clock when read */
} floe_lease_info;

/* Read a lease. FLOE_ENOTFOUND when nobody holds it or ever did (or it was released); an
 * expired lease is returned with expires_at <= now. */
int floe_lease_get(floe_lease_store *s, const floe_lease_key *k, floe_lease_info *info,
                   floe_error *err) FLOE_NODISCARD;

/* The store floe_table_commit keeps commit leases in for tables of catalog c (commit
 * priority, DESIGN.md "Commit"): a connection of its own to the SQL catalog's database, or
 * <warehouse>/_leases.db for a filesystem catalog. Opened on first use and closed with c;
 * borrowed. NULL when it cannot be opened (logged once; commits then take no priority). */
floe_lease_store *floe_catalog_commit_leases(floe_catalog *c);

/* A process-unique owner name: "<hostname>:<pid>:<8 hex random>". */
void floe_lease_owner_id(char out[128]);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
