/*
 * floe/health.h - how fragmented an Iceberg table is, and what that costs.
 *
 * floe_health_analyze reads a table's metadata only (metadata file, manifest lists,
 * manifests; never a data file) and produces a report:
 *
 *   - data files per table and per partition: count, bytes, records, a size histogram,
 *     the files under the rewrite minimum (75% of write.target-file-size-bytes, as
 *     Iceberg's min-file-size-bytes default), delete files by kind;
 *   - metadata: manifests, manifest lists, the metadata file, snapshots, metadata log;
 *   - object-store requests to plan and to scan the table, under the model below, and
 *     their monthly price for a query rate;
 *   - planning time of a full scan and of a point query, measured over the real read
 *     path (median of several runs);
 *   - recommendations, each with the floe command that carries it out, ordered by the
 *     requests they save per month, then by the metadata bytes they save;
 *   - optionally the same figures at another snapshot (--compare) and a per-snapshot
 *     history (manifests, files, records) for the growth chart;
 *   - churn over a window: write amplification of compaction and bytes on disk versus
 *     live (floe_health_churn; the one place it lists the table location).
 *
 * Request model (object store, per query; stated in every output):
 *   plan  = 1 GET (metadata file) + 1 GET (manifest list) + 1 GET per manifest read
 *           (every manifest for a full scan; those whose partition summaries admit the
 *           predicate for a point query). No LIST: the catalog holds the pointer. A table
 *           opened by folder without version-hint.text needs 1 LIST to find its metadata.
 *   scan  = per data or delete file: 1 GET for the footer + 1 GET per row group (the
 *           column chunks of a row group are contiguous; a reader reading every column
 *           fetches them in one ranged GET). Row groups come from split_offsets (1 when
 *           the writer recorded none).
 *
 * Planning is measured with the table layer's scan planner (floe/scan.h) from a cold
 * start: read and parse the metadata file, then floe_scan_plan_files (manifest list,
 * manifests pruned by partition summaries, files by partition tuple and column metrics).
 * The point query is `col = v` on the source column of the first partition field of the
 * largest partition, with a value from that partition (unpartitioned tables: the first
 * column with bounds); its request counts come from the plan.
 *
 * Ownership: everything reachable from a floe_health_report lives in its arena and is
 * freed by floe_health_report_free.
 *
 * Ownership and threads: a floe_health_report owns everything in it until
 * floe_health_report_free; rendering appends to the caller's buffer. One thread at a time
 * per table.
 */
#ifndef FLOE_HEALTH_H
#define FLOE_HEALTH_H

#include "floe/common.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* File-size histogram buckets, [lower, upper) in MiB: <1, 1-10, 10-64, 64-128, 128-512,
 * >=512. */
#define FLOE_HEALTH_NBUCKETS 6
extern const int64_t floe_health_bucket_lower[FLOE_HEALTH_NBUCKETS];
extern const char *const floe_health_bucket_label[FLOE_HEALTH_NBUCKETS];
/* Index of the bucket a file of this size falls into. */
int floe_health_bucket_of(int64_t bytes);

/* Defaults. */
#define FLOE_HEALTH_DEFAULT_TARGET_FILE_SIZE (512LL << 20) /* write.target-file-size-bytes */
#define FLOE_HEALTH_MIN_INPUT_FILES 5          /* Iceberg rewrite option min-input-files */
#define FLOE_HEALTH_QUERIES_PER_DAY 100.0
#define FLOE_HEALTH_PRICE_GET 0.0004           /* USD per 1000 GET (S3 Standard list price) */
#define FLOE_HEALTH_PRICE_LIST 0.005           /* USD per 1000 LIST */
#define FLOE_HEALTH_PRICE_PUT 0.005            /* USD per 1000 PUT */
#define FLOE_HEALTH_TIMING_RUNS 5
#define FLOE_HEALTH_DAYS_PER_MONTH 30.0
#define FLOE_HEALTH_WINDOW_MS 3600000LL        /* churn window */
/* Partition rewrite recommendations past this many collapse into one table-wide one. */
#define FLOE_HEALTH_MAX_PARTITION_RECS 3

typedef struct floe_health_options {
    const char *table_ref;     /* how commands name the table ("ns.t" or a path);
                                  NULL = the table's name */
    bool has_snapshot_id;
    int64_t snapshot_id;       /* analyze this snapshot instead of the current one */
    bool has_compare_id;
    int64_t compare_id;        /* also analyze this snapshot (before/after) */
    double queries_per_day;    /* full-table scans per day, for the monthly figures */
    double price_get;          /* USD per 1000 requests */
    double price_list;
    double price_put;
    int timing_runs;           /* planning runs per measurement; 0 = do not measure */
    int64_t now_ms;            /* 0 = wall clock (ages are relative to this) */
    int64_t window_ms;         /* churn window (write amplification); 1 hour */
    bool no_listing;           /* do not list the table location (bytes on disk) */
} floe_health_options;

/* The defaults listed above. */
void floe_health_options_init(floe_health_options *o);

/* Data and delete file figures of a table or one partition. */
typedef struct floe_health_files {
    int64_t data_files, data_bytes, records;
    int64_t buckets[FLOE_HEALTH_NBUCKETS];      /* data files per size bucket */
    int64_t bucket_bytes[FLOE_HEALTH_NBUCKETS];
    int64_t small_files, small_bytes;           /* data files under the rewrite minimum */
    /* the small files of fragmented partitions: those holding at least min_input_files
     * of them and more files than their data needs at the target size. A partition whose
     * data sits in one or a few files is not fragmented, however small they are. */
    int64_t fragmented_files, fragmented_bytes;
    int64_t row_groups;                         /* over data files */
    int64_t pos_delete_files, pos_delete_bytes, pos_delete_records;
    int64_t eq_delete_files, eq_delete_bytes, eq_delete_records;
    /* deletion vectors (format v3): blobs in Puffin files, one per data file; bytes are
     * the blobs' content_size_in_bytes, records the deleted rows */
    int64_t dv_count, dv_bytes, dv_records;
    int64_t delete_row_groups;
} floe_health_files;

typedef struct floe_health_partition {
    int32_t spec_id;
    const char *path;   /* Hive-style "event_type=orders/ts_day=2026-10-06"; "" when
                           unpartitioned */
    const char *where;  /* a floe filter selecting exactly this partition, or NULL when
                           the transforms cannot be expressed (bucket, void) */
    floe_health_files files;
} floe_health_partition;

typedef struct floe_health_metadata {
    int64_t manifests, manifest_bytes;           /* the snapshot's manifests */
    int64_t data_manifests, delete_manifests;
    int64_t manifest_entries;                    /* live entries read */
    int64_t manifest_list_bytes;                 /* the snapshot's list */
    int64_t manifest_lists, all_manifest_list_bytes; /* every snapshot's list found */
    int64_t metadata_json_bytes;                 /* the current metadata file */
    int64_t snapshots;                           /* in the metadata (at the snapshot:
                                                    ancestors included) */
    int64_t oldest_snapshot_ms, oldest_age_ms;
    int64_t metadata_log;                        /* metadata-log entries */
    int64_t ideal_manifests;                     /* bytes / commit.manifest.target-size */
} floe_health_metadata;

typedef struct floe_health_requests {
    int64_t plan_get, plan_list;    /* full scan planning */
    int64_t scan_get;               /* full scan reading (data + delete files) */
    int64_t point_plan_get;         /* point query planning */
    int64_t point_scan_get;         /* point query reading the files it selects */
    int64_t point_manifests;        /* manifests the point query reads */
    int64_t point_files;            /* data files it selects */
    double monthly_get, monthly_list;   /* full scans at queries_per_day, 30 days */
    double monthly_cost;                /* USD */
    double point_monthly_get, point_monthly_cost; /* the same rate of point queries */
} floe_health_requests;

typedef struct floe_health_timing {
    int runs;
    int64_t full_ns, point_ns;      /* medians */
    int64_t full_min_ns, full_max_ns, point_min_ns, point_max_ns;
} floe_health_timing;

/* The figures at one snapshot. */
typedef struct floe_health_view {
    bool has_snapshot;              /* false: the table has no snapshot (empty) */
    int64_t snapshot_id;
    int64_t timestamp_ms;
    int64_t sequence_number;
    floe_health_files total;
    floe_health_partition *partitions; /* sorted by data files, descending */
    size_t npartitions;
    floe_health_metadata meta;
    floe_health_requests req;
    floe_health_timing timing;
    const char *point_filter;       /* the point query measured ("event_type = 'x'"),
                                       NULL when none could be chosen */
    const char *planning_error;     /* why the scan planner refused the table (then no
                                       times), or NULL */
} floe_health_view;

/* What the writers and the maintenance did over a window, and what it leaves on disk.
 *
 * From the snapshots of the metadata that fall in the window (expired ones are gone, so
 * the window starts no earlier than the oldest snapshot kept): bytes appended are the
 * added-files-size of the writers' snapshots (every operation but "replace"), bytes
 * rewritten that of the "replace" snapshots (compaction); write amplification is their
 * ratio. Bytes on disk come from one listing of the table location (1 LIST request per
 * 1000 objects on object storage; write.metadata.path and write.data.path are listed too
 * when outside it): everything listed but the metadata folder is data (live, kept for
 * retained snapshots, or orphaned), the metadata folder is metadata. Storage
 * amplification is data on disk over the live data and delete files that lie in those
 * folders: files the table references elsewhere (Parquet files appended where they
 * were) are counted apart (live_outside_*) and on neither side. */
typedef struct floe_health_churn {
    int64_t window_ms;              /* asked */
    int64_t from_ms, to_ms;         /* the snapshots counted: [from, to] */
    int64_t writer_commits, rewrite_commits;
    int64_t bytes_appended, bytes_rewritten;
    double write_amplification;     /* rewritten / appended; -1 when nothing appended */
    bool listed;                    /* the listing ran */
    const char *listing_error;      /* why it failed, or NULL */
    int64_t live_bytes;             /* data + delete files of the analyzed snapshot */
    int64_t live_outside_files;     /* of those, outside the table's folders */
    int64_t live_outside_bytes;
    int64_t disk_data_files, disk_data_bytes;
    int64_t disk_metadata_files, disk_metadata_bytes;
    double storage_amplification;   /* disk data / (live - live outside); -1 when
                                       unknown or nothing live lies inside */
} floe_health_churn;

/* One snapshot of the history (oldest first). */
typedef struct floe_health_history_point {
    int64_t snapshot_id, timestamp_ms, sequence_number;
    const char *operation;
    bool list_read;                 /* the manifest list could be read */
    int64_t manifests, manifest_bytes;
    int64_t data_files, records, delete_files; /* -1 = unknown */
} floe_health_history_point;

typedef enum floe_health_rec_kind {
    FLOE_HEALTH_REC_REWRITE_PARTITION = 0,
    FLOE_HEALTH_REC_REWRITE_TABLE,
    FLOE_HEALTH_REC_REWRITE_MANIFESTS,
    FLOE_HEALTH_REC_EXPIRE,
    FLOE_HEALTH_REC_REWRITE_DELETES, /* floe rewrite-deletes (format v3) */
} floe_health_rec_kind;

typedef struct floe_health_rec {
    floe_health_rec_kind kind;
    const char *command;            /* the exact floe command, shell-quoted */
    const char *reason;             /* one sentence: what is wrong, what changes */
    const char *partition;          /* the partition path, or NULL */
    int64_t requests_saved;         /* per full scan (plan + scan GETs) */
    double monthly_requests_saved;  /* at queries_per_day */
    double monthly_cost_saved;      /* USD */
    int64_t metadata_bytes_saved;   /* estimated */
    int64_t files_before, files_after; /* data files (rewrite), manifests
                                          (rewrite-manifests), snapshots (expire), delete
                                          files (rewrite-deletes) */
    int64_t one_off_get, one_off_put;  /* requests the job itself makes (estimate) */
} floe_health_rec;

typedef struct floe_health_report {
    const char *table_ref;
    const char *metadata_location;
    const char *table_location;
    int format_version;
    int64_t generated_ms;
    int64_t target_file_size, min_file_size, min_input_files, row_group_size;
    int64_t manifest_target_size;
    floe_health_options opts;       /* as given, defaults filled */
    floe_health_view current;
    bool has_compare;
    floe_health_view compare;
    floe_health_history_point *history;
    size_t nhistory;
    floe_health_rec *recs;          /* ordered by benefit */
    size_t nrecs;
    floe_health_churn churn;
    floe_arena arena;
} floe_health_report;

/* Analyze t (borrowed) at its current snapshot (or opts->snapshot_id). o may be NULL
 * (defaults). FLOE_ENOTFOUND for an unknown snapshot id; read errors name the file. */
int floe_health_analyze(floe_table *t, const floe_health_options *o,
                        floe_health_report **out, floe_error *err) FLOE_NODISCARD;
void floe_health_report_free(floe_health_report *r); /* accepts NULL */

/* Renderings, appended to out. */
int floe_health_report_text(const floe_health_report *r, floe_buf *out, floe_error *err)
    FLOE_NODISCARD;
int floe_health_report_json(const floe_health_report *r, floe_buf *out, floe_error *err)
    FLOE_NODISCARD;
/* One self-contained HTML page: inline CSS and SVG, no script, no network. Every string
 * that comes from the table is HTML-escaped. */
int floe_health_report_html(const floe_health_report *r, floe_buf *out, floe_error *err)
    FLOE_NODISCARD;

/* Helpers exposed for tests. */
/* Append s HTML-escaped (& < > " '). */
int floe_health_html_escape(floe_buf *out, const char *s);
/* Append s quoted for a POSIX shell when it needs quoting. */
int floe_health_shell_quote(floe_buf *out, const char *s);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
