/*
 * floe/delete.h - row-level deletes: `floe delete NS.NAME --where EXPR`.
 *
 * Spec: format/spec.md "Row-level Deletes" (position delete files on v2 tables, deletion
 * vectors on v3: "at most one deletion vector per data file", merged with the file's
 * earlier vector and position deletes), "Deletion Vectors", "Position Delete Files",
 * "Snapshots" (operation "delete": data files removed and/or delete files added),
 * "Optional Snapshot Summary Fields", "Row Lineage".
 *
 * The rows the filter holds for are found by a scan of the branch head (partition and
 * metrics pruning, then every candidate file read with its deletes applied: a row
 * deleted already is not counted again). On a v3 table each affected data file gets one
 * deletion vector holding its earlier deletes and the new ones, in one Puffin file for
 * the commit, and its earlier vector (and position delete files scoped to it alone) are
 * removed in the same snapshot; on a v2 table the new positions go to position delete
 * files, one per partition, sorted by path and position. A data file whose every row is
 * deleted is removed instead, with the delete files scoped to it. v1 tables are refused.
 *
 * Concurrency: the commit validates the base it lands on against the branch head it
 * planned on. When a concurrent commit removed a planned data file, added deletes that
 * apply to one, or added data files the filter may match, the delete is planned again
 * (the files it wrote are deleted), so no delete is lost and no row comes back.
 */
#ifndef FLOE_DELETE_H
#define FLOE_DELETE_H

#include "floe/common.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_delete_options {
    const char *where;   /* the rows to delete (floe scan's --where language); required */
    const char *branch;  /* NULL or "main": the main branch */
    bool dry_run;        /* find the rows, write and commit nothing */
    int max_replans;     /* plans after the first when concurrent commits interfere;
                            0 = 4 */
} floe_delete_options;

typedef struct floe_delete_result {
    bool noop;                    /* no live row matched: nothing committed */
    int64_t snapshot_id;          /* the "delete" snapshot (0 for noop / dry run) */
    int format_version;           /* of the table: 2 position delete files, 3 DVs */
    int64_t rows_deleted;         /* live rows the filter held for */
    int64_t files_scanned;        /* candidate data files read */
    int64_t data_files_affected;  /* data files with rows deleted */
    int64_t data_files_removed;   /* ... of which every row is now deleted: removed */
    int64_t delete_files_added;   /* deletion vectors or position delete files */
    int64_t delete_files_removed; /* vectors and scoped position delete files replaced */
    int plans;                    /* 1 + the re-plans concurrent commits caused */
    int attempts;                 /* commit attempts of the last plan */
} floe_delete_result;

/* Delete the live rows of t (on o->branch) for which o->where is true, as described
 * above. res (may be NULL) is written on success. Errors: FLOE_EINVALID / FLOE_ENOTFOUND
 * for a bad filter, an unknown branch or a tag, FLOE_EUNSUPPORTED for a v1 table,
 * FLOE_ECONFLICT when concurrent commits interfered more than max_replans times,
 * FLOE_EUNKNOWN_STATE as floe_table_commit (the files written are kept), read and write
 * errors naming the file. */
int floe_table_delete_rows(floe_table *t, const floe_delete_options *o, floe_delete_result *res,
                           floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * `floe rewrite-deletes NS.NAME`: equality deletes and position delete files resolved
 * into deletion vectors, no data file rewritten (format v3 only).
 *
 * Spec: "Scan Planning" (a position delete file applies to data files with a data
 * sequence number <= its own; an equality delete file to those with a strictly lower one,
 * in its partition or, with an unpartitioned spec, in any), "Deletion Vectors" (at most
 * one per data file; a new one holds the earlier vector and position deletes).
 *
 * Every live data file of the branch head with an equality delete file, a position delete
 * file or more than one vector applying to it is read with its deletes applied; its new
 * vector holds every row that is not live (old vector, position deletes, equality
 * matches), in one Puffin file for the commit, and replaces its old vector. A data file
 * none of whose rows is live is removed instead. An equality or position delete file is
 * removed in the same commit when every live data file it applies to got its vector (with
 * --where some may be left out: such a delete file stays). The snapshot is a "replace":
 * no row changes.
 *
 * Concurrency (validated on the base each commit attempt lands on): a planned data file
 * or delete file removed, a deletion vector or position delete added for a planned file,
 * or a data file added with a sequence number not above the planned head's (a compaction
 * keeping its starting sequence number: a removed equality delete might apply to it)
 * plans again. Data files appended meanwhile (higher sequence numbers: no delete planned
 * applies to them) and equality deletes added meanwhile (they stay, and apply as before)
 * do not.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_rewrite_deletes_options {
    const char *where;   /* only data files that may hold rows it matches (partition and
                            column statistics); NULL = every data file */
    const char *branch;  /* NULL or "main": the main branch */
    bool dry_run;        /* read and count, write and commit nothing */
    int max_replans;     /* as floe_delete_options */
} floe_rewrite_deletes_options;

typedef struct floe_rewrite_deletes_result {
    bool noop;                    /* nothing to resolve: nothing committed */
    int64_t snapshot_id;          /* the "replace" snapshot (0 for noop / dry run) */
    int64_t files_scanned;        /* data files read */
    int64_t data_files_resolved;  /* data files whose deletes were resolved */
    int64_t data_files_removed;   /* ... of which no row was live: removed */
    int64_t rows_resolved;        /* rows equality deletes deleted, now in vectors */
    int64_t dvs_added;            /* new vectors (dry run: that would be written) */
    int64_t dvs_removed;          /* old vectors replaced */
    int64_t position_delete_files_removed;
    int64_t equality_delete_files_removed;
    int plans;
    int attempts;
} floe_rewrite_deletes_result;

/* Resolve t's deletes as described above. o may be NULL (every file, main). res (may be
 * NULL) is written on success. Errors: FLOE_EUNSUPPORTED for a table below format v3
 * (the message says how to upgrade), FLOE_EINVALID / FLOE_ENOTFOUND for a bad filter or
 * branch, FLOE_ECONFLICT when concurrent commits interfered more than max_replans times
 * (nothing changed), FLOE_EUNKNOWN_STATE as floe_table_commit, read and write errors
 * naming the file. */
int floe_table_rewrite_deletes(floe_table *t, const floe_rewrite_deletes_options *o,
                               floe_rewrite_deletes_result *res, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
