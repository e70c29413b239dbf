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

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
