/*
 * floe/rewrite.h - bin-pack compaction of an Iceberg table (Iceberg's rewrite_data_files),
 * safe alongside live writers.
 *
 * Three steps, usable together (floe_rewrite) or apart:
 *
 *   plan      floe_rewrite_plan_new: the data files of the current snapshot (optionally
 *             only those a --where filter may match) are selected, grouped per partition
 *             and bin-packed into file groups with the rules of Iceberg's
 *             SizeBasedFileRewritePlanner / BinPackRewriteFilePlanner (option names and
 *             defaults below). Nothing is written.
 *   execute   each group's input files are read (projected to the current schema by field
 *             id or name mapping, defaults and identity partition values filled in,
 *             position and equality deletes applied) and written as new Parquet files of
 *             the target size with the table's write properties, groups running
 *             concurrently on worker threads.
 *   commit    a "replace" snapshot per commit (all groups at the end, or batches of groups
 *             with partial progress), validated against the snapshot the rewrite started
 *             on: a group whose input files were removed, or which received new position
 *             deletes (also equality deletes when use-starting-sequence-number is false),
 *             fails alone and its output files are deleted; appends never conflict.
 *             Conflicts are retried on fresh metadata per commit.retry.*. After a commit in
 *             unknown state nothing is deleted and no further commit is tried.
 *
 * Tables opened by path (no catalog) are committed Hadoop-style: the next
 * v<N+1>.metadata.json is created next to the current one (atomic create-if-absent, a
 * conflict when it exists) and version-hint.text is updated. That is only safe against
 * writers using the same protocol.
 *
 * Memory: each running group holds one output row group (write.parquet.row-group-size-
 * bytes) plus its read buffers (one decoded input row group, two with prefetch), whatever
 * the number of input files. With strategy SORT a group buffers decoded rows up to
 * sort-buffer-bytes (1 GiB), sorts the buffer and writes it as output files of the split
 * size: a group whose decoded rows fit in the buffer is sorted as a whole (its output
 * files hold disjoint ranges of the order), a larger one in runs of a buffer each.
 *
 * The allocator: a rewrite allocates and frees buffers of 2-32 MiB (chunk buffers,
 * dictionary tables), for which glibc's dynamic malloc thresholds keep freed memory
 * resident. floe_rewrite_tune_malloc fixes the thresholds; it is process-wide, so the
 * library never calls it: a program that rewrites calls it at start (the floe command
 * does for rewrite, maintain, serve and work, unless the environment tunes glibc's malloc
 * itself; a serve with Kafka sources then keeps freed memory instead:
 * floe_server_tune_malloc_kafka). Without it a rewrite writes the same files, with a higher
 * peak resident set.
 *
 * Ownership: a floe_rewrite_plan owns its groups until floe_rewrite_plan_free; a
 * floe_rewrite_result is a plain struct of the caller's (no heap memory).
 */
#ifndef FLOE_REWRITE_H
#define FLOE_REWRITE_H

#include "floe/append.h"
#include "floe/common.h"
#include "floe/maint.h"
#include "floe/manifest.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Iceberg's option names (RewriteDataFiles, SizeBasedFileRewritePlanner,
 * BinPackRewriteFilePlanner) and floe's own. */
#define FLOE_RW_TARGET_FILE_SIZE "target-file-size-bytes"       /* table / 512 MiB */
#define FLOE_RW_MIN_FILE_SIZE "min-file-size-bytes"             /* 75% of target */
#define FLOE_RW_MAX_FILE_SIZE "max-file-size-bytes"             /* 180% of target */
#define FLOE_RW_MIN_INPUT_FILES "min-input-files"               /* 5 */
#define FLOE_RW_REWRITE_ALL "rewrite-all"                       /* false */
#define FLOE_RW_MAX_GROUP_SIZE "max-file-group-size-bytes"      /* 100 GiB */
#define FLOE_RW_MAX_FILES "max-files-to-rewrite"                /* unlimited */
#define FLOE_RW_DELETE_FILE_THRESHOLD "delete-file-threshold"   /* INT32_MAX */
#define FLOE_RW_DELETE_RATIO "delete-ratio-threshold"           /* 0.3 */
#define FLOE_RW_PARTIAL "partial-progress.enabled"              /* false */
#define FLOE_RW_PARTIAL_MAX_COMMITS "partial-progress.max-commits" /* 10 */
#define FLOE_RW_PARTIAL_MAX_FAILED "partial-progress.max-failed-commits" /* = max-commits */
#define FLOE_RW_MAX_CONCURRENT "max-concurrent-file-group-rewrites" /* 5 */
#define FLOE_RW_JOB_ORDER "rewrite-job-order"                   /* none */
#define FLOE_RW_USE_START_SEQ "use-starting-sequence-number"    /* true */
#define FLOE_RW_REMOVE_DANGLING "remove-dangling-deletes"       /* false */
#define FLOE_RW_OUTPUT_SPEC "output-spec-id"                    /* default spec */
#define FLOE_RW_FORMAT_VERSION "format-version" /* floe: the table's; 2 upgrades a v1 table */
#define FLOE_RW_PLANNER "planner"                  /* floe: bin-pack | generational */
#define FLOE_RW_TIER_FANOUT "tier-fanout"          /* floe, generational: 5 */
#define FLOE_RW_MAX_PARTITION_FILES "max-files-per-partition" /* floe, generational: 10 */
#define FLOE_RW_COLD_PARTITION_AGE "cold-partition-age-ms" /* floe, generational: 1 h */
#define FLOE_RW_THREADS "threads"                  /* floe: worker threads; 0 = cores */
#define FLOE_RW_FAST_COPY "fast-copy"              /* floe: row-group copy; see below */
#define FLOE_RW_PAGE_CARRY "page-carry"            /* floe: page carry, true; see below */
#define FLOE_RW_SORT_BUFFER "sort-buffer-bytes"    /* floe, strategy sort: 1 GiB; see below */
#define FLOE_RW_EQ_DELETE_BUFFER "equality-delete-buffer-bytes" /* floe: 256 MiB; see below */
#define FLOE_RW_ZORDER_VAR_LEN "var-length-contribution" /* zorder: 8 bytes */
#define FLOE_RW_ZORDER_MAX_OUTPUT "max-output-size"      /* zorder: 2147483647 bytes */

typedef enum floe_rewrite_job_order {
    FLOE_RW_ORDER_NONE = 0,
    FLOE_RW_ORDER_BYTES_ASC,
    FLOE_RW_ORDER_BYTES_DESC,
    FLOE_RW_ORDER_FILES_ASC,
    FLOE_RW_ORDER_FILES_DESC,
} floe_rewrite_job_order;

/* Which files a partition's groups take (the strategy says how their rows are written).
 *
 * BINPACK: Iceberg's rules. Every file outside [min-file-size-bytes, max-file-size-bytes]
 * (or with too many deletes) is packed into groups; a group is rewritten once it has
 * min-input-files files or more than the target's bytes. A partition that keeps receiving
 * small files has its compacted file, still under min-file-size, read and written again
 * with every rewrite: over a day of commits every 2 s that is quadratic.
 *
 * GENERATIONAL: size tiers, so that each byte is rewritten about log_F(min / commit size)
 * times. Files under min-file-size-bytes fall into tiers by size: tier 0 holds
 * [min/F, min), tier 1 [min/F^2, min/F), and so on (F = tier-fanout). A tier with F files
 * is merged, together with every smaller file of the partition (they cost little and
 * would otherwise wait), into one file that lands in the next tier up; when that file
 * would complete the next tier, or would be larger than it, that tier joins the same
 * group, and so on upwards, so no file is written only to be read again in the same
 * cascade. A large file below the minimum is therefore merged only once F - 1 files of
 * its own tier have gathered: the merge then pays, and its row groups are copied as
 * stored (fast-copy) rather than decoded and encoded again. When a partition would still
 * hold more than max-files-per-partition files under the minimum, the next tiers up join
 * the group until it does not. A partition whose newest data file was committed longer
 * than cold-partition-age-ms ago gets Iceberg's bin-pack rules (its last small files are
 * merged once). Files above max-file-size-bytes and files with too many deletes are
 * rewritten as with BINPACK. */
typedef enum floe_rewrite_planner {
    FLOE_RW_PLANNER_BINPACK = 0,
    FLOE_RW_PLANNER_GENERATIONAL,
} floe_rewrite_planner;

typedef enum floe_rewrite_strategy {
    FLOE_RW_BINPACK = 0,
    FLOE_RW_SORT, /* by sort_order, else the table's default sort order (see above) */
} floe_rewrite_strategy;

typedef struct floe_rewrite_progress {
    int64_t groups_total, groups_done, groups_failed;
    int64_t bytes_total;       /* input bytes of all planned groups */
    int64_t bytes_read;        /* input bytes of the files finished so far */
    int64_t bytes_written;
    int64_t commits;
    double elapsed_s;
} floe_rewrite_progress;

/* Called from the thread running floe_rewrite (never from workers), at most a few times a
 * second and once at the end. */
typedef void (*floe_rewrite_progress_fn)(void *ctx, const floe_rewrite_progress *p);

typedef struct floe_rewrite_options {
    int64_t target_file_size;        /* <= 0: write.target-file-size-bytes, else 512 MiB */
    int64_t min_file_size;           /* < 0: 75% of target */
    int64_t max_file_size;           /* < 0: 180% of target */
    int64_t min_input_files;         /* 5 */
    bool rewrite_all;
    int64_t max_file_group_size;     /* 100 GiB */
    int64_t max_files_to_rewrite;    /* <= 0: no limit */
    int64_t delete_file_threshold;   /* INT32_MAX */
    double delete_ratio_threshold;   /* 0.3, in (0, 1] */
    bool partial_progress;
    int64_t partial_max_commits;     /* 10 */
    int64_t partial_max_failed_commits; /* < 0: = partial_max_commits */
    int64_t max_concurrent_groups;   /* 5 */
    floe_rewrite_job_order job_order;
    bool use_starting_sequence_number; /* true */
    bool remove_dangling_deletes;
    int32_t output_spec_id;          /* < 0: the table's default spec */
    int format_version;              /* 0: keep the table's; 2: upgrade a v1 table to v2
                                        with the commit (spec "Appendix E") */
    const char *where;               /* filter (floe/scan.h language) or NULL */
    floe_rewrite_planner planner;    /* BINPACK */
    int64_t tier_fanout;             /* generational: 5, >= 2 */
    int64_t max_partition_files;     /* generational: 10, >= 2 */
    int64_t cold_partition_age_ms;   /* generational: 3600000 */
    int64_t now_ms;                  /* 0 = the wall clock (tests pin it) */
    floe_rewrite_strategy strategy;
    /* Strategy SORT: the order to sort by instead of the table's default, as Iceberg's
     * rewrite_data_files sort_order takes it: "col [ASC|DESC] [NULLS FIRST|LAST], ..."
     * (floe_sort_order_parse), or "zorder(c1, c2, ...)": rows ordered by the interleaved
     * bits of each column's order-preserving bytes, Iceberg Spark's z-order. Each column
     * gives 8 bytes (integers, dates, times and timestamps as 64-bit values with the sign
     * bit flipped; floats and doubles as the double's bits, sign bit set for positives
     * and all bits flipped for negatives), strings and binaries their first
     * var-length-contribution bytes (UTF-8, zero-padded), a null all zeros; the bits are
     * interleaved one at a time round-robin from the most significant (a column out of
     * bytes is skipped) and the result cut to max-output-size bytes. Identity partition
     * columns are dropped from the z-order (each group holds one value of them); booleans,
     * decimals, uuids and nested columns are refused. Files sorted by either form record
     * no sort order id. NULL: the table's default order. Borrowed. */
    const char *sort_order;
    int64_t sort_buffer_bytes;       /* strategy SORT: decoded rows sorted at a time; 0: 1 GiB */
    /* Equality-delete keys a group holds at once (equality-delete-buffer-bytes; 0: 256
     * MiB): the keys of every equality delete file of the group, hashed into sets, are
     * kept while its files are read, as long as they fit. When they would not, the keys
     * are hash-partitioned into P passes (P = 2, 4, 8, ... until each part fits): pass p
     * loads the keys whose hash falls in part p and reads the group's data files once,
     * noting the positions of the rows those keys delete; the rewrite then reads the
     * files as usual with those positions deleted. The rows and their order are the same
     * either way; the price is P more reads of the data files, and 8 bytes per row
     * deleted by equality held until its file is rewritten. */
    int64_t eq_delete_buffer_bytes;
    /* zorder only (refused with any other order, as in Iceberg); 0: the default */
    int64_t zorder_var_length_contribution; /* var-length-contribution: 8 */
    int64_t zorder_max_output_size;  /* max-output-size: INT32_MAX */
    int threads;                     /* worker threads; 0 = online cores */
    /* Row-group copy fast path (-1 auto, 0 off, 1 on): a row group of an input file is
     * written to the output as stored (pages, statistics and page index kept, offsets
     * re-based; floe/parquet_copy.h) instead of decoded and re-encoded when no delete
     * applies to the file, the file's columns are the table's in physical layout (same
     * field ids, order, types, levels), its codec is the output's and its statistics
     * can stand in for the values in the Iceberg metrics. Only with strategy BINPACK and
     * when the group's rows go to one partition unchanged. On (1): every such row group;
     * auto (-1): only those of at least min(8 MiB, write.parquet.row-group-size-bytes)
     * stored bytes, so no small row group is carried over. Every other row group is
     * re-encoded (see floe_rewrite_result.fast_copied_row_groups /
     * reencoded_row_groups). Buffered re-encoded rows are written after the copied row
     * groups, so rows of a file keep their order only within each row group. */
    int fast_copy;
    /* Page carry (default true): where a group's rows go to one output file unsorted and
     * unrouted, a whole PLAIN page of an input column read as stored (no deletes in its
     * row group, same levels, no conversion) whose body the output would compress again
     * from the same bytes keeps its stored body (floe_pq_writer_write_batch says when);
     * everything else about the output (row groups, dictionaries, statistics, page index)
     * is as without it. False re-encodes every page. */
    bool page_carry;
    bool fsync;                      /* fsync output files (default true) */
    floe_rewrite_progress_fn progress;
    void *progress_ctx;
} floe_rewrite_options;

void floe_rewrite_options_init(floe_rewrite_options *o);
/* Process-wide: rewrites started from now on read their input on the generic path, row
 * by row where the default takes shortcuts with deletes (decoding into the batch the
 * surviving rows are taken from, taking them a run at a time, testing an integer
 * equality key of a column without nulls in two prefetched passes). The same rows and
 * the same files; for differential tests and bisecting. Off by default; the floe command
 * sets it from FLOE_REWRITE_READER=generic. */
void floe_rewrite_set_generic_reader(bool on);
/* Set an option by its Iceberg (or floe) name from text, as `--option key=value` gives
 * it. FLOE_EINVALID names an unknown key or a bad value. The where text is borrowed. */
int floe_rewrite_option_set(floe_rewrite_options *o, const char *key, const char *value,
                            floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * The bin-pack planner on its own (pure: sizes in, groups out), for tests and tools.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_rewrite_limits {
    int64_t target, min, max;        /* resolved sizes: 0 < min < target < max */
    int64_t min_input_files;
    bool rewrite_all;
    int64_t max_group_size;
    int64_t delete_file_threshold;
    double delete_ratio_threshold;
    /* generational planner */
    int64_t tier_fanout;
    int64_t max_partition_files;
} floe_rewrite_limits;

/* Resolve the size options against the table's target (table_target <= 0: 512 MiB) and
 * check them as Iceberg does (target > min >= 0, target < max, min-input-files > 0...). */
int floe_rewrite_limits_resolve(const floe_rewrite_options *o, int64_t table_target,
                                floe_rewrite_limits *out, floe_error *err) FLOE_NODISCARD;

typedef struct floe_rewrite_candidate {
    int64_t size;             /* file_size_in_bytes (the scan task's length) */
    int64_t record_count;
    int64_t delete_files;     /* delete files that apply */
    int64_t file_scoped_delete_records; /* records of position delete files scoped to this
                                           file (referenced_data_file or equal path bounds) */
} floe_rewrite_candidate;

/* Expected output file count for a group of input_size bytes (Iceberg's
 * expectedOutputFiles: round down when the remainder spread over the other files keeps
 * them under min(1.1 x target, writeMaxFileSize)), and the split size. */
int64_t floe_rewrite_expected_output_files(const floe_rewrite_limits *l, int64_t input_size);
int64_t floe_rewrite_split_size(const floe_rewrite_limits *l, int64_t input_size);
/* target + (max - target) / 2: the size at which an output file rolls. */
int64_t floe_rewrite_write_max_file_size(const floe_rewrite_limits *l);

/* Plan one partition's files c[0..n) (in planning order): select, bin-pack and filter.
 * On success *group_of receives n entries: the group index of each file or -1 (not
 * rewritten), and *ngroups the number of groups; groups are numbered in the order the
 * packer emits them. Caller frees *group_of with floe_free. */
int floe_rewrite_pack_partition(const floe_rewrite_limits *l,
                                const floe_rewrite_candidate *c, size_t n, int **group_of,
                                size_t *ngroups, floe_error *err) FLOE_NODISCARD;

/* The tier of a file of `size` bytes under the generational planner: 0 for
 * [min/F, min), 1 for [min/F^2, min/F), ...; -1 for files of min bytes or more. */
int floe_rewrite_tier_of(const floe_rewrite_limits *l, int64_t size);

/* The generational planner on one partition's files c[0..n) (see
 * floe_rewrite_planner). cold: the partition gets the bin-pack rules instead. Output as
 * floe_rewrite_pack_partition. */
int floe_rewrite_tier_partition(const floe_rewrite_limits *l, const floe_rewrite_candidate *c,
                                size_t n, bool cold, int **group_of, size_t *ngroups,
                                floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Plans
 * ------------------------------------------------------------------------------------- */
typedef struct floe_rewrite_input {
    const floe_data_file *file;      /* as the manifest records it */
    const char *uri;                 /* where it is read from */
    int32_t spec_id;
    const floe_partition_spec *spec; /* spec_id's spec bound to the current schema, or
                                        NULL when it no longer binds */
    int64_t data_sequence_number;
    const floe_data_file **deletes;  /* delete files that apply to it */
    const char **delete_uris;
    const int64_t *delete_sequence_numbers; /* theirs, or NULL when not known */
    size_t ndeletes;
} floe_rewrite_input;

typedef struct floe_rewrite_group {
    int global_index;                /* 1-based, in planning order */
    int partition_index;             /* 1-based within its partition */
    int32_t spec_id;                 /* the inputs' spec, or -1 when they were grouped as
                                        "unpartitioned" because it is not the output spec */
    const floe_value *partition;     /* the inputs' tuple (spec_id's), NULL for -1 */
    size_t npartition;
    const char *partition_text;      /* "event_type=orders/day=2026-10-06", "" if none */
    floe_rewrite_input *inputs;
    size_t ninputs;
    int64_t input_bytes;
    int64_t input_records;
    int64_t expected_output_files;
    int64_t split_size;
    int64_t max_output_file_size;    /* writeMaxFileSize: files roll at this size */
} floe_rewrite_group;

typedef struct floe_rewrite_plan_priv floe_rewrite_plan_priv;

typedef struct floe_rewrite_plan {
    int64_t snapshot_id;             /* the starting snapshot; -1: empty table */
    int64_t sequence_number;         /* its sequence number */
    int32_t output_spec_id;
    floe_rewrite_limits limits;
    floe_rewrite_group *groups;      /* after ordering and max-files-to-rewrite */
    size_t ngroups;
    size_t total_groups;             /* groups the planner formed (before the cut) */
    size_t partitions;               /* partitions with at least one planned group */
    int64_t data_files;              /* live data files considered */
    int64_t files_left_out;          /* of those, files of other specs than the output
                                        spec, when a source column of the output spec has
                                        been dropped: its partitions cannot be computed
                                        from their rows, so they stay as they are */
    double plan_ms;
    floe_rewrite_plan_priv *priv;
} floe_rewrite_plan;

/* The options of o that depend on t but not on its files, checked as planning checks
 * them, without reading a manifest: the output spec, the strategy with its sort order
 * (columns of the current schema, zorder(...) and its options). FLOE_EINVALID names the
 * option at fault (the caller's, so a CLI reports a usage error); other codes are the
 * table's (a current schema that does not parse: FLOE_ECORRUPT). */
int floe_rewrite_options_check(floe_table *t, const floe_rewrite_options *o,
                               floe_error *err) FLOE_NODISCARD;

/* Plan a rewrite of t's current snapshot. o is copied where needed (where is used only
 * during the call). Errors: FLOE_EINVALID (bad option, unknown output spec, bad filter),
 * and those of scan planning. */
int floe_rewrite_plan_new(floe_table *t, const floe_rewrite_options *o,
                          floe_rewrite_plan **out, floe_error *err) FLOE_NODISCARD;
void floe_rewrite_plan_free(floe_rewrite_plan *p);

/* ---------------------------------------------------------------------------------------
 * Running a plan
 * ------------------------------------------------------------------------------------- */
typedef struct floe_rewrite_result {
    /* Iceberg's RewriteDataFiles.Result fields */
    int64_t rewritten_data_files_count;
    int64_t added_data_files_count;
    int64_t rewritten_bytes_count;
    int64_t failed_data_files_count;
    int64_t removed_delete_files_count;
    /* floe's */
    int64_t groups_planned, groups_committed, groups_failed;
    int64_t groups_replaced;         /* with partial progress: groups left out because a
                                        file they were planned with is gone and the table
                                        has moved on since the plan (a concurrent commit
                                        replaced it, an expiry deleted it); nothing
                                        committed for them, not counted as failed */
    int64_t commits, failed_commits;
    int64_t attempts;                /* commit attempts over all commits (each conflict
                                        re-applies the commit on fresh metadata) */
    int64_t conflicts;               /* attempts that lost to another commit */
    int64_t bytes_read;              /* input data and delete files read */
    int64_t records_read;            /* rows decoded from input files */
    int64_t records_deleted;         /* rows dropped by deletes */
    int64_t records_written;
    int64_t bytes_written;           /* output data files (committed or not) */
    int64_t fast_copied_row_groups;  /* input row groups copied as stored */
    int64_t reencoded_row_groups;    /* input row groups decoded and re-encoded */
    int64_t carried_pages;           /* input pages written with their stored body */
    int64_t peak_group_buffer_bytes; /* largest writer + read buffer seen in a group */
    int64_t eq_delete_passes;        /* most passes over a group's data files that its
                                        equality-delete keys took (0: no equality delete,
                                        1: the keys fit the buffer) */
    int64_t eq_delete_key_bytes_peak; /* most memory of equality-delete key sets a group
                                        held at once (their filters included) */
    int64_t eq_delete_rows_filtered; /* rows a merged key set's filter showed to hold no
                                        deleted key, without probing the set */
    int64_t snapshot_id;             /* the last replace snapshot committed, 0 if none */
    int format_version;              /* the table's format version after the rewrite (0
                                        when nothing was committed) */
    bool format_upgraded;            /* a commit upgraded the table from v1 to v2 */
    bool unknown_state;              /* a commit ended in unknown state (files kept) */
    double plan_ms, rewrite_ms, commit_ms, total_ms;
    char first_failure[FLOE_ERROR_MSG_MAX]; /* why the first failed group failed, or "";
                                        whole, or cut in its middle, marked */
} floe_rewrite_result;

/* Execute and commit plan p (made from t with the same options). 0 when every commit that
 * was tried succeeded or the plan is empty, even if some groups failed validation (see
 * failed_data_files_count); FLOE_EUNKNOWN_STATE when a commit ended in unknown state;
 * FLOE_ECONFLICT when more commits failed than partial-progress.max-failed-commits allows
 * (or, without partial progress, the one commit failed); other errors from reading,
 * writing or committing. Without partial progress a group that fails to execute (a read,
 * write or allocation error) fails the whole rewrite with that error and nothing is
 * committed (Iceberg's behaviour); with it, such a group fails alone, like a group that
 * fails validation. A file a group was planned with that is gone (FLOE_ENOTFOUND) while
 * the table has moved on since the plan (floe_table_base_gone) is a conflict, not damage:
 * without partial progress the error says so (which file, from which snapshot; nothing
 * committed) and floe_rewrite_again plans again; with it the group is left out
 * (groups_replaced) and the rest commit. res may be NULL. */
int floe_rewrite_execute(floe_table *t, floe_rewrite_plan *p, const floe_rewrite_options *o,
                         floe_rewrite_result *res, floe_error *err) FLOE_NODISCARD;

/* After round (1, 2, ...) of planning and executing failed with rc: true when the table
 * moved on and a file of the snapshot planned on is gone (floe_table_base_gone: a
 * concurrent expiry) and commit.retry.num-retries allows another round; t is then
 * refreshed and err cleared: plan again. */
bool floe_rewrite_again(floe_table *t, int rc, int round, floe_error *err);

/* Plan and execute; planned again on the refreshed table while floe_rewrite_again says
 * so. */
int floe_rewrite(floe_table *t, const floe_rewrite_options *o, floe_rewrite_result *res,
                 floe_error *err) FLOE_NODISCARD;

/* glibc: mmap threshold 2 MiB (blocks that large are mapped, grow with mremap and go back
 * to the kernel when freed) and trim threshold 32 MiB, through mallopt, for the whole
 * process. Other C libraries: nothing. */
void floe_rewrite_tune_malloc(void);

/* floe append --split (a floe_append_split_fn): rewrite the existing Parquet file uri,
 * whose rows span several partitions of t's default spec, as one file per partition in
 * t's data folder (the table's write properties; rows read as a rewrite reads them:
 * field ids, or name_mapping for a file without ids when the table has none yet) and add
 * each to a. Nothing is committed. On success *written lists where the files are (caller
 * frees each path and the array with floe_free); on failure none is left behind. */
int floe_rewrite_split_file(floe_table *t, const char *uri, const char *name_mapping,
                            bool fsync, floe_append *a, char ***written, size_t *nwritten,
                            floe_error *err) FLOE_NODISCARD;

/* Set the options of a "key=value,key=value" list (as floe_rewrite_option_set each);
 * NULL or "" sets nothing. FLOE_EINVALID names the bad item. */
int floe_rewrite_options_parse_list(floe_rewrite_options *o, const char *list,
                                    floe_error *err) FLOE_NODISCARD;

/* The small-file rewrite job of `floe maintain` and of serve's maintenance thread (a
 * floe_maint_hooks.rewrite_data hook; ctx unused): floe_rewrite with the defaults above
 * (the table's write.target-file-size-bytes, ...) and the planner and options the
 * scheduler asks for, which decide by themselves whether a partition has gathered enough
 * small files. st and detail get what it read, wrote and committed. */
int floe_rewrite_maint_job(void *ctx, floe_table *t, const floe_maint_rewrite_params *p,
                           floe_maint_job_stats *st, char *detail, size_t dn,
                           floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
