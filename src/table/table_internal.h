/*
 * table_internal.h - the floe_table object, shared by table.c and commit.c. Private to
 * src/table.
 */
#ifndef FLOE_TABLE_INTERNAL_H
#define FLOE_TABLE_INTERNAL_H

#include "floe/scan.h"
#include "floe/table.h"

struct floe_table {
    floe_io *io;                   /* the catalog's, or the one opened by path with */
    floe_catalog *catalog;         /* borrowed; NULL when opened by path */
    char *ns, *name;               /* catalog identifier; NULL when opened by path */
    char *pointer;                 /* current metadata file as the catalog stores it (the
                                      swap's expected value); for path tables the same as
                                      metadata_location */
    char *metadata_location;       /* current metadata file, absolute, where it is read */
    floe_table_metadata *metadata; /* parsed from metadata_location */
    char *root;                    /* where the table's files are (absolute) */
    bool confined;                 /* opened by path: recorded paths must stay in root */
    bool migrate;                  /* the paths recorded are not where the files are
                                      (relative, or relocated): the next commit first
                                      rewrites them (migrate.c) */
    bool migrating;                /* that commit is running */
    char *relocate_from, *relocate_to; /* explicit relocation, or NULL */
};

/* Where the table writes metadata files: write.metadata.path, else <location>/metadata.
 * Caller frees; NULL on OOM. */
char *floe_table_metadata_dir(const floe_table_metadata *m);

/* The metadata document m a commit (or create, base NULL) of table ns.name through
 * catalog c would write, held to the catalog's cap (floe_catalog_max_metadata_bytes):
 * FLOE_ELIMIT naming the table, the size and the cap when m is larger than the cap and
 * than base (a table already past the cap may change without growing). */
int floe_table_metadata_size_check(const floe_catalog *c, const char *ns, const char *name,
                                   const floe_table_metadata *m,
                                   const floe_table_metadata *base, floe_error *err);

/* Replace the current metadata, read from the absolute metadata_location, which the
 * catalog stores as pointer (takes ownership of all three; frees the old ones; pointer
 * NULL: the same as metadata_location), and work out where the table's files are
 * (t->root, t->migrate). On error the table is left as it was and the arguments are
 * freed. */
int floe_table_install(floe_table *t, char *pointer, char *metadata_location,
                       floe_table_metadata *m, floe_error *err);

/* The recorded path a path of the table gets once its paths are migrated: where the file
 * is, as an absolute URI (paths the table cannot place: absolute as they are, or
 * resolved against the catalog's warehouse). Caller frees. */
int floe_table_migrated_path(const floe_table *t, const char *recorded, char **out,
                             floe_error *err);
/* The form in which new paths are recorded: the migrated form while the table waits for
 * its migration, else as given. Caller frees. */
int floe_table_record_path(const floe_table *t, const char *recorded, char **out,
                           floe_error *err);
/* An absolute local path in *path becomes its file:/// URI (replaced in place); relative
 * and remote ones stay. */
int floe_table_uri_form(char **path, floe_error *err);

/* Call fn for each file table metadata m (read from meta, for messages) names outside
 * its manifests: every snapshot's manifest list (a format v1 snapshot's manifests), and
 * the statistics and partition statistics files, with the snapshot id they belong to
 * (-1 when absent) and what they are ("manifest list", "manifest", "statistics file",
 * "partition statistics file"). A negative return of fn stops the walk and is returned. */
typedef int (*floe_named_file_fn)(void *ctx, const char *what, int64_t snapshot_id,
                                  const char *path, floe_error *err);
int floe_table_metadata_named_files(const floe_table_metadata *m, const char *meta,
                                    floe_named_file_fn fn, void *ctx, floe_error *err);

/* The schema and parsed filter of a scan plan (scan_plan.c), borrowed from the plan. */
const floe_schema *floe_scan_plan_schema(const floe_scan_plan *p);
struct floe_expr;
const struct floe_expr *floe_scan_plan_filter(const floe_scan_plan *p);

/* One planned data file as floe_scan_match_rows read it; everything borrowed for the
 * call. */
typedef struct floe_scan_match {
    const floe_scan_task *task;
    int64_t rows;            /* rows the file holds */
    const int64_t *matched;  /* live rows the plan's filter holds for: ascending */
    size_t nmatched;
    const int64_t *deleted;  /* rows its position deletes and deletion vectors delete:
                                ascending, distinct */
    size_t ndeleted;
} floe_scan_match;
typedef int (*floe_scan_match_fn)(void *ctx, const floe_scan_match *m, floe_error *err);

/* Read every data file of plan p (made by floe_scan_plan_files on t) as floe_scan_read
 * does, deletes applied, and hand fn each file's matching positions instead of rows. Only
 * the filter's columns are read; ro supplies the page caps (may be NULL). */
int floe_scan_match_rows(floe_table *t, const floe_scan_plan *p,
                         const floe_scan_read_options *ro, floe_scan_match_fn fn, void *ctx,
                         floe_scan_read_stats *stats, floe_error *err);


/* scan_prune.c: false when no row of the open data file r can satisfy filter, by the
 * statistics of its shredded variant columns (a filter without a variant predicate, or a
 * file without the statistics, may always match). */
struct floe_expr;
struct floe_pq_reader;
bool floe_scan_variant_file_may_match(const struct floe_expr *filter,
                                      struct floe_pq_reader *r);

#endif
