/*
 * floe/append.h - the snapshot producer for appends, and appending NDJSON or existing
 * Parquet files to a table.
 *
 * Spec: format/spec.md "Snapshots" (summary), "Manifests", "Manifest Lists", "Sequence
 * Number Inheritance", "Commit Conflict Resolution and Retry"; Iceberg configuration docs
 * for commit.manifest-merge.enabled (true), commit.manifest.target-size-bytes (8 MiB),
 * commit.manifest.min-count-to-merge (100) and the write.* properties.
 *
 * An append is staged (files added, summary entries set) and committed once:
 *
 *   new ──add_file*, set_summary*, set_once──> staged ──commit──> committed | noop | failed
 *
 * The files' manifest is written once, before the first attempt. Every attempt (the
 * commit layer calls again on conflict) re-derives the manifest list from the fresh base:
 * the base snapshot's manifests plus the new one, merged per the commit.manifest.*
 * properties, written to a new list file. After the commit every file this append wrote
 * that the committed snapshot does not reference (lists and merged manifests of lost
 * attempts) is deleted; after a definite failure every file it wrote is deleted; after
 * FLOE_EUNKNOWN_STATE nothing is deleted. Data files are the caller's.
 *
 * Exactly once: with floe_append_set_once(key, value) the append also writes key=value
 * into the snapshot summary, and before committing and on every retry looks for that pair
 * in the snapshots added since the table state the append started from; when found it
 * commits nothing and reports noop (the work is already in the table). A check function
 * (floe_append_set_check) generalises the marker to any rule over the snapshots.
 *
 * Ownership and threads: a floe_append borrows its table (it must outlive the append);
 * data files added to it stay the caller's. Results own their strings (metadata_location,
 * the convert result's file list), freed by their _reset. One thread at a time per append
 * and per table.
 */
#ifndef FLOE_APPEND_H
#define FLOE_APPEND_H

#include "floe/common.h"
#include "floe/convert.h"
#include "floe/manifest.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

#define FLOE_PROP_MANIFEST_MERGE_ENABLED "commit.manifest-merge.enabled"   /* true */
#define FLOE_PROP_MANIFEST_TARGET_SIZE "commit.manifest.target-size-bytes"  /* 8 MiB */
#define FLOE_PROP_MANIFEST_MIN_MERGE "commit.manifest.min-count-to-merge"   /* 100 */

typedef struct floe_append floe_append;

/* Start an append to t (borrowed; must outlive the append). The files' partition tuples
 * must follow the table's default spec at commit time (or floe_append_set_spec's). */
int floe_append_new(floe_table *t, floe_append **out, floe_error *err) FLOE_NODISCARD;
void floe_append_free(floe_append *a); /* accepts NULL */

/* The staged files follow partition spec spec_id of the table instead of its default
 * spec (cherry-picking an append written under an older spec: files keep their spec).
 * The commit fails with FLOE_ENOTFOUND when the table has no such spec. */
int floe_append_set_spec(floe_append *a, int32_t spec_id, floe_error *err) FLOE_NODISCARD;
/* Stage a data file (deep-copied): content DATA, or EQUALITY_DELETES with its equality
 * field ids (a row delta, as an upsert stream commits: format v2 or later, else the commit
 * fails with FLOE_EUNSUPPORTED; the snapshot is then an "overwrite", the delete files in a
 * delete manifest of their own, never merged, their sequence number the snapshot's);
 * npartition must be the field count of the default spec (or of the one
 * floe_append_set_spec named). */
int floe_append_add_file(floe_append *a, const floe_data_file *f, floe_error *err) FLOE_NODISCARD;
/* Commit to branch `branch` (copied) instead of main: the new snapshot's parent is the
 * branch's head, only the branch moves (write-audit-publish: main is published later
 * with floe ref fast-forward or floe snapshots cherrypick), and the once-marker is looked
 * for in the branch's lineage. The branch must exist when the commit runs (FLOE_ENOTFOUND;
 * a tag is FLOE_EINVALID). NULL or "main": main. */
int floe_append_set_branch(floe_append *a, const char *branch, floe_error *err) FLOE_NODISCARD;
/* Extra summary entry (copied); floe's own keys win over the caller's on a clash. */
int floe_append_set_summary(floe_append *a, const char *key, const char *value,
                            floe_error *err) FLOE_NODISCARD;
/* Exactly-once marker (see above); also written to the summary. */
int floe_append_set_once(floe_append *a, const char *key, const char *value,
                         floe_error *err) FLOE_NODISCARD;
/* A caller's exactly-once rule wider than one key/value pair, e.g. "none of these
 * landing ids is in any snapshot" (floe serve's landing compaction). fn is called with
 * the metadata each attempt starts from, and once with the current metadata before
 * anything is written. It returns 0 to go on, FLOE_COMMIT_NOOP to commit nothing (the
 * result says noop; every file this append wrote is deleted, as for the once-marker), or
 * a negative error to abort the commit (ditto). FLOE_ECONFLICT from fn makes the commit
 * layer retry on fresher metadata: return it only if a retry can succeed. ctx is
 * borrowed until the commit returns. */
typedef int (*floe_append_check_fn)(void *ctx, const floe_table_metadata *base,
                                    floe_error *err);
void floe_append_set_check(floe_append *a, floe_append_check_fn fn, void *ctx);
/* The id of the snapshot floe_append_commit is committing: set once the commit has
 * started writing (0 before), so a catalog swap hook running inside the commit can record
 * it. */
int64_t floe_append_snapshot_id(const floe_append *a);
/* Set a table property in the same commit (e.g. schema.name-mapping.default for files
 * without field ids). Copied. */
int floe_append_set_property(floe_append *a, const char *key, const char *value,
                             floe_error *err) FLOE_NODISCARD;
/* Override the table's commit.manifest.* settings (tests, benchmarks). enabled < 0,
 * target <= 0, min_count <= 0 keep the table's values. */
void floe_append_set_merge(floe_append *a, int enabled, int64_t target_size_bytes,
                           int64_t min_count_to_merge);

typedef struct floe_append_result {
    bool noop;                  /* the once-marker was already committed: nothing done */
    int64_t snapshot_id;        /* the new snapshot (0 when noop) */
    int64_t sequence_number;
    int attempts;               /* apply calls */
    int64_t added_files, added_records, added_bytes; /* files: data and delete files;
                                                        records: data rows */
    int64_t manifests;          /* manifests in the committed list */
    int64_t manifests_merged;   /* manifests folded into merged ones by this commit */
    char *metadata_location;    /* the new metadata file (owned; free with _reset; NULL
                                   when out of memory after the commit) */
} floe_append_result;
void floe_append_result_reset(floe_append_result *r);

/* Commit. 0 on success (including noop); FLOE_ECONFLICT when retries ran out;
 * FLOE_EUNKNOWN_STATE (nothing deleted); other errors. res may be NULL. An append is
 * committed at most once: a second call is FLOE_EINVALID. */
int floe_append_commit(floe_append *a, floe_append_result *res, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Appending files to a table
 * ------------------------------------------------------------------------------------- */

/* Where new data files of a table go: write.data.path, else <location>/data, mapped onto
 * the table root like any recorded path. Caller frees. */
int floe_table_data_dir(const floe_table *t, char **out, floe_error *err) FLOE_NODISCARD;

/* Parquet write options from the table's properties: write.parquet.compression-codec
 * (default zstd, as Iceberg Java since 1.4), write.parquet.compression-level,
 * write.parquet.row-group-size-bytes (128 MiB), write.parquet.page-size-bytes (1 MiB),
 * write.parquet.page-row-limit (20000), write.parquet.dict-size-bytes (2 MiB),
 * write.target-file-size-bytes (512 MiB). FLOE_EINVALID names a bad value. */
int floe_table_parquet_options(const floe_table_metadata *m, floe_pq_write_options *o,
                               floe_error *err) FLOE_NODISCARD;

/* Whether value is usable for table property key, for the properties floe reads: those of
 * floe_table_parquet_options and commit.retry.* (non-negative integers), and
 * schema.name-mapping.default (floe_name_mapping_check). FLOE_EINVALID names the property
 * and value; any other key is accepted. */
int floe_table_property_check(const char *key, const char *value,
                              floe_error *err) FLOE_NODISCARD;
/* The properties of base (NULL: none) after setting set[0..nset) and removing
 * unset[0..nunset): each value set as floe_table_property_check checks it, and the values
 * that only make sense together (write.parquet.compression-level for the codec of
 * write.parquet.compression-codec, zstd by default), so a change that would make every
 * write fail is refused. FLOE_EINVALID names the properties and values. The result is held
 * to the property caps first (at most 1,000 properties, 1 MiB of keys and values, 256 KiB
 * a value; docs/DESIGN.md, "Property caps"): FLOE_ELIMIT names the key, size and cap. */
int floe_table_properties_check(const floe_table_metadata *base, const floe_kv *set,
                                size_t nset, const char *const *unset, size_t nunset,
                                floe_error *err) FLOE_NODISCARD;

/* Rewrites the existing Parquet file uri, whose rows span several partitions of t's
 * default spec, as one file per partition in t's data folder and adds each to a (nothing
 * committed). name_mapping: schema.name-mapping.default text for a file without field ids
 * (NULL when the file has ids). On success *written lists where the files are (the
 * caller frees each path and the array with floe_free); on failure none is left behind.
 * floe_rewrite_split_file (floe/rewrite.h) is the implementation. */
typedef int (*floe_append_split_fn)(floe_table *t, const char *uri, const char *name_mapping,
                                    bool fsync, floe_append *a, char ***written,
                                    size_t *nwritten, floe_error *err);

typedef struct floe_table_append_options {
    int threads;                /* convert threads; 0 = 1 */
    bool strict;                /* any rejected record fails the append */
    const char *quarantine_uri; /* NULL = <data dir>/_quarantine/<uuid>.ndjson */
    const char *format;         /* "ndjson", "parquet" or NULL = by extension
                                   (.parquet / .parq = parquet, else ndjson) */
    const floe_kv *summary;     /* extra summary entries */
    size_t nsummary;
    const char *once_key, *once_value; /* exactly-once marker, or NULL */
    const char *branch;         /* commit to this branch, NULL = main (floe_append_set_branch) */
    bool fsync;                 /* fsync data files (default via _init: true) */
    int manifest_merge;         /* -1 (default) = commit.manifest-merge.enabled, 0 off,
                                   1 on */
    floe_append_split_fn split; /* a Parquet file whose rows span several partitions is
                                   rewritten per partition by it (floe append --split);
                                   NULL (default): such a file is refused */
    bool copy;                  /* Parquet inputs are copied into the table's data folder
                                   (<data>/<content>-<file name>, <content> = 32 hex digits
                                   of the SHA-256 of the bytes) and the copies added, so the
                                   inputs stay the caller's; bytes the table already has
                                   live as such a copy are refused (FLOE_EINVALID), a copy
                                   left by a run that did not commit is reused; false
                                   (default): the inputs themselves become data files of
                                   the table, which a later rewrite and expiry delete */
    bool skip_page_crc;         /* Parquet inputs are added without reading their pages;
                                   false (default): every page CRC a file carries is
                                   checked first (floe_pq_reader_verify_checksums, one
                                   read of the file), and a file with one that does not
                                   hold is refused (FLOE_ECORRUPT naming the file, row
                                   group, column and page offset), nothing committed */
    /* Called on the calling thread as inputs are read, with the input bytes done so far
     * (Parquet inputs whole once added, NDJSON as converted: floe_convert_options
     * progress); may be NULL. */
    void (*progress)(void *ctx, int64_t input_bytes);
    void *progress_ctx;
} floe_table_append_options;
void floe_table_append_options_init(floe_table_append_options *o);

typedef struct floe_table_append_result {
    floe_append_result commit;
    floe_convert_result convert; /* NDJSON inputs (zero when none) */
    int64_t parquet_files;       /* existing Parquet files added as they are (or copied) */
    int64_t parquet_files_copied; /* of those, copied into the data folder (copy) */
    int64_t parquet_files_split; /* existing Parquet files rewritten per partition */
    int64_t split_files;         /* the files those became */
    char *quarantine_uri;        /* where the rejected records are (convert.rejected > 0),
                                    else NULL; owned, freed by _reset */
    bool empty;                  /* the inputs held no record (and no Parquet file):
                                    nothing committed, commit.noop set */
} floe_table_append_result;
void floe_table_append_result_reset(floe_table_append_result *r);

/* Append inputs to t in one snapshot: NDJSON files are converted (floe_convert, with the
 * table's schema, spec and write properties) into the data dir; Parquet files are checked
 * against the table schema (by field id, or by name for files without ids - then the
 * table gains a schema.name-mapping.default if it has none) and added where they are
 * (with o->copy: copied into the data folder first), with metrics from their footers.
 * Inputs that yield no data file commit nothing: FLOE_EINVALID naming the quarantine when
 * every record was rejected, else success with res->empty. On any failure before the
 * commit, the data files written by this call are removed (never on FLOE_EUNKNOWN_STATE);
 * a noop (the once-marker found) removes them too, since the snapshot that holds the work
 * is another one. */
int floe_table_append_files(floe_table *t, const char *const *inputs, size_t n,
                            const floe_table_append_options *o, floe_table_append_result *res,
                            floe_error *err) FLOE_NODISCARD;

/* What floe_data_file_from_parquet_footer learned about a file (also on failure). */
typedef struct floe_parquet_file_report {
    bool has_ids;            /* the file carries Parquet field ids */
    bool several_partitions; /* its rows fall in more than one partition of the default
                                spec (the call failed with FLOE_EINVALID, naming the
                                column and two values) */
    int64_t columns_read;    /* leaf columns whose values were read: statistics absent or
                                untrustworthy, or partition values computed per row */
} floe_parquet_file_report;

/* Build the data file of an existing Parquet file for table metadata m: schema check,
 * record count, size, column sizes, value counts and split offsets from the footer;
 * null counts and bounds from the chunk statistics where every chunk's are exact
 * (floe_pq_reader_chunk_bounds), else from the column's values (NaN counts too); the
 * partition tuple of the default spec, which every row must share (exact bounds decide
 * for identity, truncate and the time transforms, each row's value for bucket and for
 * float sources), else FLOE_EINVALID naming the column and two values in different
 * partitions. partition: the tuple to record instead (NULL = derive it). rep (may be
 * NULL) receives what was learned. Everything lives in arena. */
int floe_data_file_from_parquet_footer(floe_io *io, const floe_table_metadata *m, const char *uri,
                                       const char *recorded_path, const floe_value *partition,
                                       size_t npartition, floe_arena *arena,
                                       floe_data_file *out, floe_parquet_file_report *rep,
                                       floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
