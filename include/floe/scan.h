/*
 * floe/scan.h - scanning an Iceberg table: planning (which data files, with which delete
 * files) and reading rows (schema mapping, defaults, deletes applied, filter, projection).
 *
 * Spec: format/spec.md "Scan Planning" (manifest pruning by partition summaries with the
 * filter projected through each spec's transforms, file pruning by partition tuple and
 * column metrics, delete file pairing by sequence number and partition), "Column
 * Projection" (field ids; name mapping schema.name-mapping.default for files without
 * ids; initial-default for columns added later; identity partition values for columns
 * missing from data files), "Position Delete Files", "Equality Delete Files", "Point in
 * Time Reads" (snapshot-log for --as-of), "Row Lineage" (v3 metadata columns _row_id and
 * _last_updated_sequence_number: the file's values, inherited where null or missing).
 *
 * A plan owns everything it points to (one arena); free it with floe_scan_plan_free. A
 * streaming plan (floe_scan_plan_stream) hands each planned file to a callback instead. A
 * plan borrows nothing from the table after it is made except for reading
 * (floe_scan_read needs the table again to resolve paths).
 *
 * The filter language is floe cat's (floe/parquet_reader.h) over the table's column
 * names: `event_type = 'orders' AND ts >= '2026-10-01'`, IN, IS [NOT] NULL, NOT, OR,
 * parentheses, LIKE 'prefix%'.
 *
 * Threads: one thread at a time per table (planning and reading both use it).
 */
#ifndef FLOE_SCAN_H
#define FLOE_SCAN_H

#include <string.h>

#include "floe/common.h"
#include "floe/defaults.h"
#include "floe/manifest.h"
#include "floe/parquet_reader.h"
#include "floe/table.h"

/* Format v3 row lineage metadata columns (spec "Reserved Field IDs", "Row Lineage"). */
#define FLOE_LINEAGE_ROW_ID_FIELD 2147483540
#define FLOE_LINEAGE_ROW_ID "_row_id"
#define FLOE_LINEAGE_SEQ_FIELD 2147483539
#define FLOE_LINEAGE_SEQ "_last_updated_sequence_number"
/* Which row lineage column `name` is: 1 _row_id, 2 _last_updated_sequence_number, 0
 * neither. */
static inline int floe_lineage_column(const char *name) {
    return !strcmp(name, FLOE_LINEAGE_ROW_ID) ? 1 : !strcmp(name, FLOE_LINEAGE_SEQ) ? 2 : 0;
}

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_scan_options {
    const char *where;              /* row filter, or NULL */
    bool has_snapshot_id;           /* --snapshot ID */
    int64_t snapshot_id;
    bool has_as_of;                 /* --as-of: the snapshot current at this time */
    int64_t as_of_ms;
    const char *ref;                /* a branch or tag name, or NULL */
    bool current_schema;            /* with has_snapshot_id: bind the filter and columns to
                                       the table's current schema, not the one the
                                       snapshot was written with (a writer's view of a
                                       branch head: floe delete, floe health) */
    const char *const *columns;     /* projection (top-level or dotted names); NULL = all */
    size_t ncolumns;
    bool no_partition_pruning;      /* for tests and benchmarks */
    bool no_metrics_pruning;        /* ... also: a position delete file is paired with
                                       every data file of its partition, its file_path
                                       bounds not consulted */
    bool allow_missing_field_ids;   /* read Avro files without Iceberg field ids by name */
    bool keep_metrics;              /* keep the planned data files' column metrics (sizes,
                                       value/null/NaN counts, bounds); without it they are
                                       used for pruning and dropped, so a plan holds per
                                       file only its path, partition, counts and offsets */
    int manifest_threads;           /* manifests fetched and decoded at once: 0 = on
                                       object stores 64 GETs in flight on one fetch thread
                                       (where waiting for requests is the work), one at a
                                       time for local files; 1 = one at a time by the
                                       calling thread; N = N GETs in flight (object
                                       stores) or N threads. The plan is the same whatever
                                       it is. */
} floe_scan_options;

typedef struct floe_scan_task {
    const floe_data_file *file;      /* file_path as recorded in the manifest; column
                                        metrics only with keep_metrics (delete files:
                                        always) */
    int32_t spec_id;
    const floe_partition_spec *spec; /* the spec the partition tuple follows */
    int64_t data_sequence_number;
    const floe_data_file **deletes;  /* delete files that apply (position, equality) */
    const int64_t *delete_sequence_numbers;
    size_t ndeletes;
} floe_scan_task;

typedef struct floe_scan_stats {
    int64_t manifests_total;         /* in the manifest list (data + delete) */
    int64_t manifests_read;
    int64_t manifests_skipped;       /* pruned by partition summaries */
    int64_t delete_manifests_read;
    int64_t entries_read;            /* live entries seen in the manifests read */
    int64_t files_skipped_partition; /* data files pruned by their partition tuple */
    int64_t files_skipped_metrics;   /* data files pruned by column metrics */
    int64_t data_files;              /* planned */
    int64_t delete_files;            /* live delete files considered */
    int64_t bytes_read;              /* manifest list + manifests */
    double plan_ms;
} floe_scan_stats;

typedef struct floe_scan_plan_priv floe_scan_plan_priv;

typedef struct floe_scan_plan {
    int64_t snapshot_id;             /* -1 when the table has no snapshot (empty plan) */
    int32_t schema_id;               /* the schema rows are read with */
    const char *schema_json;
    floe_scan_task *tasks;
    size_t ntasks;
    int64_t records;                 /* sum of the planned data files' record counts */
    floe_scan_stats stats;
    floe_scan_plan_priv *priv;
} floe_scan_plan;

/* Which snapshot the options select: --snapshot, --as-of (the last snapshot-log entry at
 * or before the time; without a log, the newest main-lineage snapshot not after it),
 * --ref, else the current one. *out = -1 for a table without snapshots.
 * FLOE_ENOTFOUND names an unknown snapshot, ref, or a time before the first snapshot. */
int floe_scan_resolve_snapshot(const floe_table_metadata *m, const floe_scan_options *o,
                               int64_t *out, floe_error *err) FLOE_NODISCARD;

/* Plan a scan. o may be NULL. Errors: FLOE_EINVALID / FLOE_ENOTFOUND for a bad filter or
 * column, FLOE_ECORRUPT / FLOE_EUNSUPPORTED from manifests (naming the file). */
int floe_scan_plan_files(floe_table *t, const floe_scan_options *o, floe_scan_plan **out,
                         floe_error *err) FLOE_NODISCARD;
void floe_scan_plan_free(floe_scan_plan *p);

/* Called once per planned data file, in the order floe_scan_plan_files lists them
 * (manifest list order, then entry order), as soon as the file is planned, with its
 * delete files already paired. task and everything it points to are borrowed for the
 * call only: copy what is kept. A negative return stops planning; the plan function
 * returns it (err as fn set it). */
typedef int (*floe_scan_task_fn)(void *ctx, const floe_scan_task *task, floe_error *err);

/* Plan as floe_scan_plan_files does, but hand each planned data file to fn instead of
 * collecting them, so memory does not grow with the files planned (a plan of a million
 * files holds its path hashes, 16 bytes a file, and the delete files). *out is the plan
 * without tasks (ntasks 0): snapshot, schema, records and stats; floe_scan_read cannot
 * read it. Delete manifests are read before data manifests; a delete file in a manifest
 * the list records as a data manifest is FLOE_ECORRUPT here (floe_scan_plan_files pairs
 * it). Errors otherwise as floe_scan_plan_files, plus fn's. */
int floe_scan_plan_stream(floe_table *t, const floe_scan_options *o, floe_scan_task_fn fn,
                          void *ctx, floe_scan_plan **out, floe_error *err) FLOE_NODISCARD;
/* Check o->where and o->columns against the schema a plan with o would read rows with,
 * reading no manifest: 0 when the filter parses and names the schema's columns with
 * fitting literals (or there is none) and each output column is in the schema, else the
 * error floe_scan_plan_files would give for it: FLOE_EINVALID (syntax, a literal that does
 * not fit its column) or FLOE_ENOTFOUND (no such column).
 * What is not about the filter (a snapshot, ref or time that selects nothing) returns 0
 * here and fails the plan. For callers that report a bad filter apart from other errors
 * (the floe command: a usage error). */
int floe_scan_check_filter(const floe_table *t, const floe_scan_options *o, floe_error *err)
    FLOE_NODISCARD;

typedef struct floe_scan_read_stats {
    int64_t files_read;
    int64_t rows_read;               /* rows decoded from data files */
    int64_t rows_position_deleted;
    int64_t rows_equality_deleted;
    int64_t rows_filtered;           /* dropped by the filter */
    int64_t rows_out;
    int64_t files_skipped_variant;   /* not read: the statistics of their shredded variant
                                      * columns rule out every row (the filter's variant
                                      * paths; not for floe_scan_match_rows) */
} floe_scan_read_stats;

typedef struct floe_scan_read_options {
    floe_pq_row_format format;       /* NDJSON (default) or CANONICAL */
    floe_pq_row_fn row;              /* when set, rows go to row (values as NDJSON prints
                                      * them; format must be NDJSON) and sink is unused */
    void *row_ctx;
    int64_t limit;                   /* < 0: no limit */
    size_t max_page_bytes;           /* the Parquet reader's page cap for data and delete
                                      * files (floe_pq_reader_options); 0 = its default */
    size_t max_read_bytes;           /* its cap on the pages of one row group read, all
                                      * columns together; 0 = its default */
    bool no_prune;                   /* read every planned file (no skipping by shredded
                                      * variant statistics) */
} floe_scan_read_options;

/* Read the plan's rows (made by floe_scan_plan_files on t with the same options) and
 * write them in the given format to sink. Column values come from the data files by
 * field id (or through the name mapping), from identity partition values, from
 * initial-default, or are null. The output columns may name the row lineage columns
 * (when the schema has no column of that name): _row_id is the file's value, else the
 * file's first_row_id plus the row's position; _last_updated_sequence_number the file's
 * value, else the file's data sequence number; both null for a file without first_row_id
 * (written before the table had row lineage). stats may be NULL. */
int floe_scan_read(floe_table *t, const floe_scan_plan *p, const floe_scan_read_options *ro,
                   floe_pq_sink_fn sink, void *sink_ctx, floe_scan_read_stats *stats,
                   floe_error *err) FLOE_NODISCARD;

/* ---- reading data files with the table's schema -------------------------------------- */

/* The table's name mapping (property schema.name-mapping.default). json NULL gives
 * *out = NULL (the table has none). FLOE_ECORRUPT for text that is not a JSON array. */
typedef struct floe_name_mapping floe_name_mapping;
int floe_name_mapping_parse(const char *json, floe_name_mapping **out, floe_error *err)
    FLOE_NODISCARD;
void floe_name_mapping_free(floe_name_mapping *m); /* accepts NULL */

/* Which node of one data file's Parquet tree (root) holds each field of schema
 * (format/spec.md "Column Projection"): by field id where a struct level of the file
 * carries ids; else through the name mapping, which is authoritative once the table has
 * one, even `[]` (a field it does not name is not in the file); else, for a table
 * without a mapping, by the field's current name. A list's element and a map's key and
 * value are the file list's or map's own. The match borrows root and schema. */
typedef struct floe_field_match floe_field_match;
int floe_field_match_new(const floe_schema *schema, const floe_pq_node *root,
                         const floe_name_mapping *mapping, floe_field_match **out,
                         floe_error *err) FLOE_NODISCARD;
/* The file node of field f, or NULL when the file does not hold it. */
const floe_pq_node *floe_field_match_node(const floe_field_match *m, const floe_field *f);
void floe_field_match_free(floe_field_match *m); /* accepts NULL */

/* Parse a time for --as-of: milliseconds since the epoch, or an ISO timestamp
 * ("2026-10-06T12:00:00", optional fraction, optional Z / +00:00: UTC), or a date. */
int floe_scan_parse_time(const char *s, int64_t *ms, floe_error *err) FLOE_NODISCARD;
/* Write instant ms (since the epoch, before 1970 too) as "YYYY-MM-DDTHH:MM:SS.mmmZ" into
 * buf (n >= 40 holds any int64 value). */
void floe_scan_format_time(int64_t ms, char *buf, size_t n);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
