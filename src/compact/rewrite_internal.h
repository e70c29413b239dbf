/*
 * rewrite_internal.h - pieces shared by the rewrite planner, reader, executor and
 * committer (src/compact). Private.
 */
#ifndef FLOE_COMPACT_REWRITE_INTERNAL_H
#define FLOE_COMPACT_REWRITE_INTERNAL_H

#include "common/keyset.h"
#include "floe/column.h"
#include "floe/parquet.h"
#include "floe/parquet_copy.h"
#include "floe/partition.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "floe/schema.h"

#define RW_POS_FILE_PATH_ID 2147483546 /* iceberg: position delete file_path */
#define RW_POS_POS_ID 2147483545       /* iceberg: position delete pos */

struct floe_rewrite_plan_priv {
    floe_scan_plan *scan;        /* owns the data and delete files the groups point to */
    floe_arena arena;            /* groups, inputs, uris, partition texts */
    floe_schema *schema;         /* the current schema (rows are written with it); format
                                    v3: with the row lineage columns _row_id and
                                    _last_updated_sequence_number added at the end */
    floe_schema *table_schema;   /* format v3: the current schema as the table has it (the
                                    manifests' "schema"); NULL: schema is */
    floe_partition_spec **specs; /* every spec of the table, bound to schema, or when a
                                    source column has been dropped since, to the older
                                    schema in spec_schemas (floe_table_metadata_bind_spec);
                                    NULL when no schema binds it */
    floe_schema **spec_schemas;  /* per spec: that older schema, else NULL */
    int32_t *spec_ids;
    size_t nspecs;
    floe_sort_order *sort;       /* default sort order, NULL when unsorted */
    /* strategy SORT: what rows are sorted by. order is sort, or own_sort (the rewrite's
     * sort_order option), or NULL with zorder set. */
    const floe_sort_order *order;
    floe_sort_order *own_sort;
    struct rw_zorder *zorder;
    char *name_mapping;          /* schema.name-mapping.default, or NULL */
    floe_pq_write_options write; /* the table's write properties */
    char *data_dir_rec;          /* write.data.path or <location>/data, as recorded */
    char *data_dir_phys;         /* the same, where it is written */
    floe_metrics_config *metrics;
    int64_t start_sequence_number;
};

/* The bound spec with this id, or NULL. */
const floe_partition_spec *rw_plan_spec(const floe_rewrite_plan *p, int32_t spec_id);
/* The older schema that spec binds to, NULL when it binds to the current schema (or
 * not at all): a manifest of the spec records it in its header. */
const floe_schema *rw_plan_spec_schema(const floe_rewrite_plan *p, int32_t spec_id);
/* The table-wide parts of plan p (priv allocated, its arena initialised) from t's current
 * metadata: schema, specs, output spec, name mapping, sort order, write options, limits,
 * data folder, metrics configuration. */
int rw_plan_setup(floe_table *t, const floe_rewrite_options *o, floe_rewrite_plan *p,
                  floe_error *err);


/* ---------------------------------------------------------------------------------------
 * Reading one input file as batches of the table schema (rewrite_read.c)
 * ------------------------------------------------------------------------------------- */
typedef struct rw_deletes rw_deletes;  /* loaded delete files of a group (cache) */
typedef struct rw_reader rw_reader;

typedef struct rw_read_stats {
    int64_t rows_read, rows_pos_deleted, rows_eq_deleted, row_groups;
    int64_t row_groups_copied;   /* of row_groups: handed over as stored bytes */
    int64_t rows_eq_filtered;    /* rows a merged key set's filter cleared unprobed */
} rw_read_stats;

/* Row-group copy (fast path): which row groups of a file are handed over as stored bytes
 * instead of decoded rows. A file qualifies when no delete applies to it and each table
 * leaf is the file column of the same index with the same levels and no conversion; a row
 * group then when it holds at least min_rg_bytes stored bytes and
 * floe_pq_raw_row_group_load accepts it (codec, statistics, pages). */
typedef struct rw_copy_policy {
    bool enabled;
    int64_t min_rg_bytes;
    floe_codec codec;            /* the output's */
    /* Page carry, whatever `enabled` says: columns decoded straight into the batch keep
     * their whole PLAIN pages of at least carry_min bytes stored with codec
     * (floe_colbuf.carry_min), for the writer to place as they are; 0 = off. */
    uint32_t carry_min;
    /* per table leaf (NULL: none): the table's metrics record its bounds in full (or
     * truncated to more than 16 code points / bytes), so a row group whose statistics
     * of that column are truncated is decoded: the file metrics need its exact values */
    const bool *needs_exact;
} rw_copy_policy;

/* name_mapping: schema.name-mapping.default text or NULL. Borrowed; both must outlive the
 * cache. */
int rw_deletes_new(floe_io *io, const floe_schema *schema, const char *name_mapping, rw_deletes **out,
                   floe_error *err);
void rw_deletes_free(rw_deletes *d);
/* Equality-delete keys held at once (bytes of their hash sets; 0: no limit). A load that
 * would pass it stops with FLOE_ELIMIT and rw_deletes_over_budget true. */
void rw_deletes_set_budget(rw_deletes *d, int64_t bytes);
bool rw_deletes_over_budget(const rw_deletes *d);
int64_t rw_deletes_key_bytes_peak(const rw_deletes *d);
/* Load only the keys whose hash % nslices is slice (nslices <= 1: all). */
void rw_deletes_set_slice(rw_deletes *d, uint64_t nslices, uint64_t slice);
/* Load the equality delete files of in (cached). */
int rw_deletes_load_eq(rw_deletes *d, const floe_rewrite_input *in, floe_error *err);
/* Merge the equality delete files loaded, per set of equality ids, into one key set each
 * (key -> highest sequence number), counted in the budget (FLOE_ELIMIT and over budget
 * past it); readers opened from then on probe it once a row when the files that apply to
 * their data file are exactly those of the set with a higher sequence number. Nothing is
 * merged unless every file's sequence number is known. */
int rw_deletes_merge_eq(rw_deletes *d, floe_error *err);
/* Drop every equality delete file loaded (no reader may be open on d). */
void rw_deletes_drop_eq(rw_deletes *d);
/* resolved: readers opened from now on leave equality delete files out; the rows they
 * delete are given as positions (rw_reader_add_positions). */
void rw_deletes_set_eq_resolved(rw_deletes *d, bool resolved);
/* Whether an equality delete file applies to in. */
bool rw_input_has_eq(const floe_rewrite_input *in);

/* Open input `in` for reading into batches of `schema`. spec (may be NULL) gives identity
 * partition values for columns the file lacks. */
int rw_reader_open(floe_io *io, const floe_schema *schema, const char *name_mapping,
                   const floe_rewrite_input *in, const floe_partition_spec *spec,
                   rw_deletes *dels, const rw_copy_policy *copy, rw_reader **out,
                   floe_error *err);
/* Fill dst (cleared first unless append) with the surviving rows of the next row group,
 * or of its next slice (see rw_reader_set_slice). 1 with rows (maybe zero after deletes),
 * 0 at the end. *more: rows of the same row group remain (a slice). *in_bytes receives
 * the row group's stored size with its last rows, 0 with the slices before. With raw
 * non-NULL and a copy policy, a row group that can be copied comes back in *raw instead
 * (no rows added to dst; caller frees *raw); *raw is NULL otherwise. */
int rw_reader_next(rw_reader *r, floe_batch *dst, bool append, floe_pq_raw_row_group **raw,
                   int64_t *in_bytes, bool *more, floe_error *err);
/* Decode row groups larger than 2 x bytes (uncompressed, as the footer says) in slices
 * of about bytes each, so the decoded input held is bounded by the slice, not the row
 * group; only when every column has page locations. 0 (the default): whole row groups.
 * Rows and their order are the same either way. */
void rw_reader_set_slice(rw_reader *r, int64_t bytes);
/* The slice size the rewrite uses (rewrite_exec.c; 8 MiB). Tests lower it to slice small
 * row groups; set it before a rewrite starts, never during one. */
extern int64_t rw_slice_bytes;
void rw_reader_stats(const rw_reader *r, rw_read_stats *out);
/* Note the file positions of the rows equality deletes drop from now on; take them
 * (ascending, the caller frees *pos) with rw_reader_take_eq_positions. */
void rw_reader_collect_eq(rw_reader *r);
void rw_reader_take_eq_positions(rw_reader *r, int64_t **pos, size_t *n);
/* Delete the rows at file positions pos[0..n) too (before the first rw_reader_next). */
int rw_reader_add_positions(rw_reader *r, const int64_t *pos, size_t n, floe_error *err);
void rw_reader_close(rw_reader *r);

/* ---------------------------------------------------------------------------------------
 * Sorting a batch by a sort order (rewrite_sort.c)
 * ------------------------------------------------------------------------------------- */
/* Reorder the rows of src into dst (cleared first; same schema) by order. */
/* zorder(c1, c2, ...) (floe_rewrite_options.sort_order): the columns and sizes. */
typedef struct rw_zorder {
    const floe_field **cols;
    size_t ncols;
    size_t var_len;              /* bytes of a string or binary column */
    size_t out_len;              /* bytes of a row's interleaved value */
} rw_zorder;

/* Whether text is a zorder(...) order (case-insensitive, spaces allowed). */
bool rw_is_zorder(const char *text);
/* Parse zorder(c1, c2, ...) against schema; columns that spec partitions by identity are
 * left out (logged), as every group holds one value of them. */
int rw_zorder_parse(const char *text, const floe_schema *schema, const floe_partition_spec *spec,
                    int64_t var_len, int64_t max_output, rw_zorder **out, floe_error *err);
void rw_zorder_free(rw_zorder *z);
/* The z-value of every row of src into vals[row * z->out_len ...] (for tests and the
 * sort). */
int rw_zorder_values(const rw_zorder *z, const floe_batch *src, uint8_t *vals, floe_error *err);
/* Sort src's rows into dst (cleared first) by z-value, ties in input order. */
int rw_zorder_batch(const rw_zorder *z, const floe_batch *src, floe_batch *dst, floe_error *err);

int rw_sort_batch(const floe_sort_order *order, const floe_batch *src, floe_batch *dst,
                  floe_error *err);

/* Copy rows perm[0..n) of src, in that order, to the end of dst (same schema). */
int rw_batch_gather(const floe_batch *src, const size_t *perm, size_t n, floe_batch *dst,
                    floe_error *err);

/* ---------------------------------------------------------------------------------------
 * Committing (rewrite_commit.c)
 * ------------------------------------------------------------------------------------- */
typedef struct rw_group_out {
    const floe_rewrite_group *group;
    floe_arena arena;            /* the output data files */
    floe_data_file *files;       /* outputs (strings in the executor's arena) */
    size_t nfiles;
    char **phys;                 /* where each output was written */
    int64_t bytes, records;
    bool failed;                 /* execution or validation failed */
    bool input_gone;             /* ... reading a file it was planned with: not found */
    bool replaced;               /* ... because the table moved on since the plan: a
                                    concurrent commit replaced the file (not a failure) */
    bool committed;
    char *why;                   /* why it failed (rw_group_why), NULL until then */
} rw_group_out;

/* Run the groups of p one after another on the calling thread, committing nothing:
 * outs[i] (p->ngroups entries, zeroed by the caller) receives group i's output files. On
 * an error every file written is deleted. Free each with rw_group_out_free. */
int rw_execute_groups(floe_table *t, floe_rewrite_plan *p, const floe_rewrite_options *o,
                      rw_group_out *outs, floe_error *err);
void rw_group_out_free(rw_group_out *g);
/* Record why g failed, prefix + msg: whole, or cut in its middle to FLOE_ERROR_MSG_MAX
 * (common/errmsg.h). Kept on the heap, only for the groups that fail (a plan may hold
 * many groups). */
void rw_group_why(rw_group_out *g, const char *prefix, const char *msg);
/* The reason rw_group_why recorded ("" when none; a note when it could not be kept). */
const char *rw_group_why_text(const rw_group_out *g);

typedef struct rw_commit_stats {
    int64_t removed_delete_files;
    int64_t snapshot_id;
    int attempts;                /* apply calls, whatever the outcome */
    int format_version;          /* of the committed metadata */
    bool format_upgraded;        /* the commit upgraded the table from v1 to v2 */
} rw_commit_stats;

/* Commit the groups g[0..n) (the non-failed ones) in one replace snapshot. Groups that
 * fail validation get failed = true and a reason; if none is left nothing is committed
 * and 0 is returned. */
int rw_commit_groups(floe_table *t, const floe_rewrite_plan *p, const floe_rewrite_options *o,
                     rw_group_out **g, size_t n, rw_commit_stats *st, floe_error *err);

#endif
