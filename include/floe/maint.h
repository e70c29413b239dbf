/*
 * floe/maint.h - table maintenance: snapshot expiry, orphan file removal, manifest
 * rewrites, the landing-file lifecycle, leases and the `floe maintain` scheduler.
 *
 * Spec: apache/iceberg format/spec.md "Snapshot Retention Policy", "Snapshot References",
 * "Manifests", "Manifest Lists"; the table properties history.expire.*,
 * write.metadata.delete-after-commit.enabled, write.metadata.previous-versions-max.
 * DESIGN.md invariant I4: nothing reachable is ever deleted.
 *
 * Safety rules every function here follows:
 *   S1. Metadata first, files second. Expiry commits the snapshot removal through
 *       floe_table_commit before it deletes a single file; a commit that ends in
 *       FLOE_EUNKNOWN_STATE or a conflict deletes nothing.
 *   S2. Deletions are a reachability difference: (everything the expired snapshots reach)
 *       minus (everything every retained snapshot of the metadata as committed - re-read
 *       after the commit - reaches). Paths are compared after normalisation (s3/s3a/s3n
 *       are one scheme; file:/x, file:///x and /x are one file), and across roles: a
 *       path the retained metadata reaches as anything (manifest list, manifest, live
 *       data or delete file, statistics file, metadata file) is not deleted as another.
 *   S3. When anything a retained snapshot references cannot be read, nothing is deleted:
 *       without it there is no proof that a file is unreachable.
 *   S4. Orphan removal deletes only listed files older than the threshold that no
 *       snapshot, manifest, metadata file, statistics file or version hint references,
 *       never under hidden folders (_landing, _quarantine, .hidden), and stops before
 *       deleting anything when a listed path matches a reference by path but not by
 *       scheme or authority (unless told otherwise).
 *   S5. Landing files are deleted only when the landing index says their records are
 *       committed and they are older than the lifecycle age.
 *
 * Deletions run on a small thread pool over floe_io_delete_many (batched on object
 * storage). Path sets are open-addressing hash sets of strings in an arena: memory grows
 * with the number of distinct paths, never with their product.
 *
 * Ownership: results own their lists and strings until their _reset; a floe_maint
 * borrows its catalog and lease store (both must outlive it).
 */
#ifndef FLOE_MAINT_H
#define FLOE_MAINT_H

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/lease.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

#define FLOE_MAINT_DAY_MS (24LL * 3600 * 1000)

/* What a deleted (or, in a dry run, deletable) file was. */
typedef enum floe_maint_file_kind {
    FLOE_MAINT_DATA = 0,          /* data file (content 0) */
    FLOE_MAINT_POSITION_DELETES,  /* delete file, content 1 (incl. deletion vectors) */
    FLOE_MAINT_EQUALITY_DELETES,  /* delete file, content 2 */
    FLOE_MAINT_MANIFEST,
    FLOE_MAINT_MANIFEST_LIST,
    FLOE_MAINT_STATISTICS,        /* statistics / partition-statistics files */
    FLOE_MAINT_METADATA,          /* *.metadata.json */
    FLOE_MAINT_OTHER,             /* orphans: whatever the listing found */
    FLOE_MAINT_NKINDS
} floe_maint_file_kind;

/* "data", "position-deletes", "equality-deletes", "manifest", "manifest-list",
 * "statistics", "metadata", "other". */
const char *floe_maint_file_kind_name(floe_maint_file_kind k);

/* Called once per file that is deleted (or would be, in a dry run), before the delete.
 * uri is the location deleted (borrowed for the call). May be called from the caller's
 * thread only. */
typedef void (*floe_maint_file_fn)(void *ctx, floe_maint_file_kind kind, const char *uri);

/* ---------------------------------------------------------------------------------------
 * Snapshot expiry (Iceberg ExpireSnapshots / RemoveSnapshots semantics)
 *
 * Retention, computed on the metadata each commit attempt starts from:
 *   - refs: "main" is always kept; another ref is removed when its snapshot is missing or
 *     older than its max-ref-age-ms (else history.expire.max-ref-age-ms, default never).
 *   - every kept ref's snapshot is kept; for a kept branch, its ancestors are kept while
 *     fewer than min-snapshots-to-keep are kept or they are younger than its
 *     max-snapshot-age-ms (ref value, else the defaults below).
 *   - snapshots no kept ref reaches are kept when younger than the default cutoff.
 *   - defaults: cutoff = older_than_ms, else now - history.expire.max-snapshot-age-ms
 *     (5 days); keep = retain_last, else history.expire.min-snapshots-to-keep (1).
 *   - snapshot_ids are removed in addition (and refused, FLOE_EINVALID, when a kept ref
 *     points at one or a branch's retention keeps it - stricter than Java, which only
 *     refuses ref heads).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_expire_options {
    int64_t older_than_ms;       /* timestamp (ms since epoch); < 0 = from the table */
    int64_t retain_last;         /* >= 1; <= 0 = from the table */
    const int64_t *snapshot_ids; /* explicit ids to expire; may be NULL */
    size_t n_snapshot_ids;
    bool dry_run;                /* commit nothing, delete nothing, report what would go */
    bool keep_files;             /* commit the removal but delete no files */
    int threads;                 /* delete threads; 0 = 4 */
    int64_t now_ms;              /* 0 = the wall clock (tests pin it) */
    floe_maint_file_fn on_file;  /* may be NULL */
    void *on_file_ctx;
} floe_expire_options;

/* The defaults listed above. */
void floe_expire_options_init(floe_expire_options *o);

typedef struct floe_expire_result {
    int64_t snapshots_expired;   /* removed from the metadata (or would be) */
    int64_t snapshots_retained;
    int64_t refs_removed;
    int64_t files[FLOE_MAINT_NKINDS]; /* deleted (dry run: deletable), by kind */
    int64_t delete_failures;     /* deletes that failed (logged; files left for orphans) */
    int64_t unreadable;          /* expired lists/manifests that could not be read (their
                                    files are left to orphan removal) */
    int64_t kept_outside;        /* files only expired snapshots reach that lie outside
                                    the table's own folders: kept, not deleted (logged;
                                    floe/table.h "Confinement") */
    int attempts;                /* commit attempts */
    int64_t *expired_ids;        /* owned; free with floe_expire_result_reset */
    size_t n_expired_ids;
} floe_expire_result;

/* Free the expired ids and zero the result. Accepts NULL. */
void floe_expire_result_reset(floe_expire_result *r);

/* Expire snapshots of t (a table opened by path commits Hadoop-style). 0 on success
 * (also when nothing expires); FLOE_EINVALID for refused snapshot ids; FLOE_ECONFLICT /
 * FLOE_EUNKNOWN_STATE from the commit (nothing deleted); an error reading a retained
 * snapshot's lists or manifests after the commit (the commit stands, nothing deleted).
 * res may be NULL. */
int floe_maint_expire(floe_table *t, const floe_expire_options *o, floe_expire_result *res,
                      floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Orphan files (Iceberg DeleteOrphanFiles semantics)
 * ------------------------------------------------------------------------------------- */
typedef enum floe_prefix_mismatch {
    FLOE_PREFIX_MISMATCH_ERROR = 0, /* stop before deleting anything (default) */
    FLOE_PREFIX_MISMATCH_IGNORE,    /* treat such files as referenced */
    FLOE_PREFIX_MISMATCH_DELETE,    /* treat them as orphans */
} floe_prefix_mismatch;

typedef struct floe_orphan_options {
    int64_t older_than_ms;       /* timestamp; files modified at or after it are kept;
                                    < 0 = now - 3 days */
    const char *location;        /* what to list; NULL = the table root. Must lie inside
                                    the table (FLOE_EINVALID otherwise). */
    bool dry_run;
    floe_prefix_mismatch prefix_mismatch;
    int threads;                 /* 0 = 4 */
    int64_t now_ms;              /* 0 = wall clock */
    floe_maint_file_fn on_file;
    void *on_file_ctx;
    size_t max_conflicts_reported; /* paths named in the mismatch error; 0 = 10 */
} floe_orphan_options;

/* The defaults listed above. */
void floe_orphan_options_init(floe_orphan_options *o);

typedef struct floe_orphan_result {
    int64_t listed;              /* files the listing returned */
    int64_t hidden;              /* skipped: under a hidden or underscore folder */
    int64_t too_recent;          /* skipped: younger than the threshold */
    int64_t referenced;          /* old enough but referenced */
    int64_t conflicts;           /* path matched a reference, scheme/authority did not */
    int64_t orphans;             /* deleted (dry run: deletable) */
    int64_t orphan_bytes;
    int64_t delete_failures;
    int64_t references;          /* distinct referenced paths */
    int64_t kept_outside;        /* orphans outside the table's own folders: kept
                                    (floe/table.h "Confinement"; none when the listing
                                    stays inside the table) */
} floe_orphan_result;

/* 0 on success; FLOE_EINVALID (location outside the table), FLOE_ECONFLICT with the
 * mismatching paths named when prefix_mismatch is ERROR and conflicts exist (nothing
 * deleted), errors reading any metadata, list or manifest (nothing deleted). */
int floe_maint_orphans(floe_table *t, const floe_orphan_options *o, floe_orphan_result *res,
                       floe_error *err) FLOE_NODISCARD;

/* Path comparison used by orphans and expiry (exposed for tests): split a location into
 * scheme (lower case; s3a/s3n -> s3; "" for plain paths), authority ("" for none and for
 * file URIs) and path (repeated '/' collapsed). Pointers go into buf (>= strlen(uri)+8
 * bytes). Returns false for an empty uri. */
typedef struct floe_uri_parts {
    const char *scheme;
    const char *authority;
    const char *path;
} floe_uri_parts;
bool floe_maint_uri_split(const char *uri, char *buf, size_t bufsize, floe_uri_parts *out);

/* ---------------------------------------------------------------------------------------
 * Manifest rewrite
 *
 * Regroups the live entries of the current snapshot's data manifests of one partition
 * spec: entries are sorted by partition tuple and cut into manifests of about the target
 * size (estimated from the input manifests' bytes per entry). Entries become EXISTING and
 * keep their snapshot ids and both sequence numbers; deleted entries are dropped. Delete
 * manifests and manifests of other specs are kept as they are. The commit is a "replace"
 * snapshot with the summary keys manifests-created, manifests-replaced, manifests-kept,
 * entries-processed (and the parent's total-* keys). On a conflict the rewrite is
 * re-applied on the fresh metadata when every replaced manifest is still in the new
 * current snapshot (others' new manifests are kept); otherwise it is recomputed from the
 * new current snapshot (up to 3 times).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_rewrite_manifests_options {
    int64_t target_size_bytes;  /* <= 0: commit.manifest.target-size-bytes, else 8 MiB */
    int32_t spec_id;            /* < 0: the default spec */
    bool dry_run;               /* plan only: report the counts, write nothing */
} floe_rewrite_manifests_options;

/* The defaults listed above. */
void floe_rewrite_manifests_options_init(floe_rewrite_manifests_options *o);

typedef struct floe_rewrite_manifests_result {
    bool noop;                  /* nothing to rewrite (no data manifests of the spec) */
    int64_t snapshot_id;        /* the replace snapshot */
    int64_t manifests_before;   /* manifests in the source snapshot's list */
    int64_t manifests_after;    /* manifests in the committed list */
    int64_t manifests_created, manifests_replaced, manifests_kept, entries_processed;
    int attempts;               /* commit apply calls, over all recomputations */
    int recomputed;             /* times the rewrite was planned again on fresh metadata */
} floe_rewrite_manifests_result;

/* Regroup the manifests of t's current snapshot as described above and commit a replace
 * snapshot; res says what was done (also with dry_run). */
int floe_maint_rewrite_manifests(floe_table *t, const floe_rewrite_manifests_options *o,
                                 floe_rewrite_manifests_result *res, floe_error *err)
    FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Landing lifecycle
 *
 * Reads the server's landing index (table landing_files, see src/server/landing.c: in
 * the catalog's database; releases before it was moved there kept a SQLite file
 * <warehouse>/_landing/_index.db, still readable through index_path) and deletes the
 * landing files of the table whose state is 'committed' and whose created_ms is older
 * than the age (both by the index database's clock); their rows become 'deleted'
 * (DESIGN.md: committed -> deleted). Pending, compacting and missing files are never
 * touched. Quarantine files (state 'quarantine') are deleted after the quarantine
 * retention when one is set. Only files under <warehouse>/_landing/ or _quarantine/ are
 * ever deleted. A missing index is not an error (nothing to do).
 * ------------------------------------------------------------------------------------- */
typedef struct floe_landing_lifecycle_options {
    const char *index_path;           /* NULL = <warehouse>/_landing/_index.db */
    floe_sql *db;                     /* when set (borrowed), the index is read and
                                         updated on this connection (the catalog's,
                                         floe_catalog_sql) and index_path is unused */
    const char *table;                /* "ns.table"; NULL = every table in the index */
    int64_t age_ms;                   /* < 0 = 3 days */
    int64_t quarantine_retention_ms;  /* < 0 = keep quarantine files forever */
    bool dry_run;
    int64_t now_ms;                   /* 0 = the index database's clock */
    floe_maint_file_fn on_file;
    void *on_file_ctx;
    floe_io *io;                      /* context of the landing files (NULL: default) */
    floe_sql_options sql;             /* options of the connection to index_path (zero:
                                         the defaults); unused with db */
} floe_landing_lifecycle_options;

/* The defaults listed above. */
void floe_landing_lifecycle_options_init(floe_landing_lifecycle_options *o);

typedef struct floe_landing_lifecycle_result {
    bool no_index;
    int64_t landing_deleted, landing_bytes;
    int64_t quarantine_deleted;
    int64_t kept_uncommitted;         /* old enough but not committed: kept */
    int64_t failures;
} floe_landing_lifecycle_result;

/* Delete the landing and quarantine files under warehouse as described above; res counts
 * what was deleted and kept. */
int floe_maint_landing_lifecycle(const char *warehouse,
                                 const floe_landing_lifecycle_options *o,
                                 floe_landing_lifecycle_result *res, floe_error *err)
    FLOE_NODISCARD;

/* Leases (one maintainer per catalog, table and job) are floe/lease.h's, kept in the
 * catalog database: floe_leases(catalog_name, table_namespace, table_name, job, owner,
 * expires_at). */

/* ---------------------------------------------------------------------------------------
 * The scheduler behind `floe maintain`
 * ------------------------------------------------------------------------------------- */
typedef enum floe_maint_job {
    FLOE_JOB_LANDING_COMPACT = 0, /* hook from the server module */
    FLOE_JOB_REWRITE_DATA,        /* hook: small-file rewrite (`floe rewrite`) */
    FLOE_JOB_REWRITE_MANIFESTS,
    FLOE_JOB_EXPIRE,
    FLOE_JOB_ORPHANS,
    FLOE_JOB_LANDING_LIFECYCLE,
    FLOE_JOB_REWRITE_DELETES,     /* equality and position deletes into deletion vectors
                                     (floe/delete.h floe_table_rewrite_deletes; v3 only) */
    FLOE_JOB_COUNT
} floe_maint_job;

/* "landing-compact", "rewrite-data", "rewrite-manifests", "expire", "orphans",
 * "landing-lifecycle", "rewrite-deletes". */
const char *floe_maint_job_name(floe_maint_job j);

/* Which planner the rewrite-data job uses (floe/rewrite.h floe_rewrite_planner). */
typedef enum floe_maint_planner {
    FLOE_MAINT_PLANNER_AUTO = 0,  /* generational for tables with frequent commits, else
                                     Iceberg's bin-pack */
    FLOE_MAINT_PLANNER_BINPACK,
    FLOE_MAINT_PLANNER_GENERATIONAL,
} floe_maint_planner;

typedef struct floe_maint_job_config {
    bool enabled;
    int64_t interval_ms;         /* cadence */
    bool interval_auto;          /* the interval was not set: for a table with frequent
                                    commits it follows the commit rate (docs/MAINTENANCE.md),
                                    never exceeding interval_ms */
    /* expire */
    int64_t older_than_ms;       /* age: expire / orphans / landing lifecycle; < 0 = default
                                    (expire: the table's history.expire.max-snapshot-age-ms,
                                    else for a table with frequent commits one following the
                                    commit rate, else 5 days) */
    int64_t retain_last;         /* expire; <= 0 = table default */
    /* rewrite-data */
    floe_maint_planner planner;
    char rewrite_options[256];   /* "key=value,..." floe rewrite options, or "" */
    /* rewrite-manifests */
    int64_t min_manifests;       /* run when the current snapshot has more data manifests
                                    than this and than twice what their bytes need */
    int64_t target_size_bytes;
    /* landing lifecycle */
    int64_t quarantine_retention_ms; /* < 0 = keep */
} floe_maint_job_config;

typedef struct floe_maint_table_config {
    char *name;                  /* "ns.table"; NULL for the defaults */
    floe_maint_job_config jobs[FLOE_JOB_COUNT];
} floe_maint_table_config;

typedef struct floe_maint_config {
    floe_maint_table_config defaults;
    floe_maint_table_config *tables;
    size_t ntables;
    int64_t lease_ttl_ms;        /* 10 minutes */
    int64_t tick_ms;             /* scheduler wake-up (1 s) */
    int64_t rate_probe_ms;       /* how often a table without frequent commits has its
                                    commit rate measured again (30 s) */
    int64_t job_delay_ms;        /* testing: hold each lease this much longer (0) */
} floe_maint_config;

void floe_maint_config_init(floe_maint_config *c);
void floe_maint_config_reset(floe_maint_config *c);
/* INI text:
 *     lease-ttl = 10m
 *     rate-probe = 30s
 *     [defaults]            (or [table ns.name])
 *     expire.interval = 1h
 *     expire.enabled = true
 *     expire.older-than = 5d
 *     expire.retain-last = 1
 *     orphans.older-than = 3d
 *     rewrite-manifests.min-manifests = 100
 *     rewrite-manifests.target-size = 8MB
 *     landing-lifecycle.age = 3d
 *     landing-lifecycle.quarantine-retention = 30d | keep
 *     rewrite-data.planner = auto | bin-pack | generational
 *     rewrite-data.options = tier-fanout=5,max-files-per-partition=10
 *     <job>.interval = auto | 10m
 * Durations: ms, s, m, h, d suffixes. FLOE_EINVALID names the line. rewrite-data.options
 * is kept as text here: the program running the jobs checks it (floe/rewrite.h
 * floe_rewrite_options_parse_list). */
int floe_maint_config_parse(floe_maint_config *c, const char *text, size_t n,
                            const char *source, floe_error *err) FLOE_NODISCARD;
/* Effective settings of a table (its section over the defaults). */
const floe_maint_job_config *floe_maint_config_job(const floe_maint_config *c,
                                                   const char *table, floe_maint_job j);

/* What one run did, for its log line, the run log and --json (zero where it does not
 * apply). */
typedef struct floe_maint_job_stats {
    int64_t files_read, bytes_read;       /* rewrite-data: input data files; rewrite-
                                             manifests: manifests replaced; rewrite-
                                             deletes: data files read */
    int64_t files_written, bytes_written; /* rewrite-data: output data files; rewrite-
                                             manifests: manifests written; rewrite-
                                             deletes: deletion vectors written */
    int64_t files_deleted, bytes_deleted; /* expire, orphans, landing lifecycle; rewrite-
                                             deletes: delete files removed from the
                                             table (not from storage: expiry does that) */
    int64_t snapshots_expired;            /* expire */
    int64_t commits;                      /* snapshots committed */
    int64_t attempts;                     /* commit attempts */
    int64_t conflicts;                    /* attempts lost to another commit */
} floe_maint_job_stats;

/* How the scheduler asks for a small-file rewrite. */
typedef struct floe_maint_rewrite_params {
    bool generational;           /* the generational planner, else Iceberg's bin-pack */
    const char *options;         /* "key=value,..." (floe/rewrite.h names) or "" */
} floe_maint_rewrite_params;

/* Hooks for the jobs other modules provide. A NULL hook skips its job with a log line.
 * Return 0 or a negative error; st (zeroed by the caller) gets what the run did, detail
 * (dn bytes) a short human summary. */
typedef struct floe_maint_hooks {
    int (*landing_compact)(void *ctx, floe_table *t, floe_error *err);
    int (*rewrite_data)(void *ctx, floe_table *t, const floe_maint_rewrite_params *p,
                        floe_maint_job_stats *st, char *detail, size_t dn, floe_error *err);
    void *ctx;
} floe_maint_hooks;

/* Counters per job, for /metrics. Updated atomically by the scheduler; read them with
 * floe_maint_metrics_get. */
typedef struct floe_maint_job_metrics {
    int64_t runs, ok, failed, skipped;  /* skipped: hook missing or threshold not met */
    int64_t lease_busy;                 /* another maintainer held the lease */
    int64_t files_deleted;
    int64_t last_start_ms, last_duration_ms;
    int last_rc;
} floe_maint_job_metrics;

typedef struct floe_maint_metrics {
    floe_maint_job_metrics jobs[FLOE_JOB_COUNT];
} floe_maint_metrics;

typedef struct floe_maint floe_maint;

/* One entry per finished run, for logs and tests (borrowed for the call). */
typedef struct floe_maint_run {
    const char *table;
    floe_maint_job job;
    const char *owner;
    int64_t start_ms, end_ms;
    int rc;                      /* 0 ok, negative error */
    bool skipped;
    bool lease_busy;
    const char *detail;          /* short human summary */
    floe_maint_job_stats stats;
    int64_t commit_interval_ms;  /* mean interval of the table's writer commits over the
                                    last hour as the run saw it; -1 when unknown */
} floe_maint_run;
typedef void (*floe_maint_run_fn)(void *ctx, const floe_maint_run *r);
/* A run's outcome in one word: "busy" (lease held elsewhere), "failed", "skipped", "ok". */
const char *floe_maint_run_result(const floe_maint_run *r);
/* Append the run as one line of the run log (docs/MAINTENANCE.md): a JSON object with
 * table, job, owner, start_ms, end_ms, result, detail, the stats (files_read,
 * bytes_read, files_written, bytes_written, files_deleted, bytes_deleted,
 * snapshots_expired, commits, attempts, conflicts) and commit_interval_ms, and a
 * newline. FLOE_ENOMEM. */
int floe_maint_run_json(const floe_maint_run *r, floe_buf *out);

/* cat and leases are borrowed (leases may be NULL: no coordination - one process only).
 * catalog_name names the lease rows. cfg is copied. */
int floe_maint_new(floe_catalog *cat, floe_lease_store *leases, const floe_maint_config *cfg,
                   const floe_maint_hooks *hooks, floe_maint **out, floe_error *err) FLOE_NODISCARD;
void floe_maint_free(floe_maint *m);
/* Replace the settings (cfg is copied; on failure the old ones stay). Call it between two
 * ticks, from the thread that runs them (floe serve's SIGHUP). The tables stay; a job
 * whose next run was planned later than one new interval from now runs by then. */
int floe_maint_set_config(floe_maint *m, const floe_maint_config *cfg, floe_error *err)
    FLOE_NODISCARD;
int floe_maint_add_table(floe_maint *m, const char *ns, const char *name, floe_error *err)
    FLOE_NODISCARD;
void floe_maint_on_run(floe_maint *m, floe_maint_run_fn fn, void *ctx);
/* Run every enabled job of every table once, ignoring cadences. */
int floe_maint_run_once(floe_maint *m, floe_error *err) FLOE_NODISCARD;
/* Run the jobs that are due now, once each (*stop is checked between jobs). For callers
 * with their own loop (floe serve adds tables between ticks: floe_maint_add_table may be
 * called between two calls, from the same thread). */
int floe_maint_tick(floe_maint *m, const volatile int *stop, floe_error *err) FLOE_NODISCARD;
/* Run jobs as they fall due until *stop becomes true (checked every tick). */
int floe_maint_run_loop(floe_maint *m, const volatile int *stop, floe_error *err) FLOE_NODISCARD;
void floe_maint_metrics_get(const floe_maint *m, floe_maint_metrics *out);
const char *floe_maint_owner(const floe_maint *m);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_MAINT_H */
