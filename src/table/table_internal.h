/*
 * table_internal.h - the floe_table object, shared by table.c and commit.c. Private to
 * src/table.
 */
#ifndef FLOE_TABLE_INTERNAL_H
#define FLOE_TABLE_INTERNAL_H

#include "floe/table.h"

struct floe_table {
    floe_catalog *catalog;         /* borrowed; NULL when opened by path */
    char *ns, *name;               /* catalog identifier; NULL when opened by path */
    char *metadata_location;       /* current metadata file, as the catalog stores it */
    floe_table_metadata *metadata; /* parsed from metadata_location */
    char *root;                    /* where the table's files are */
    bool confined;                 /* opened by path: recorded paths must stay in root */
    char *relocate_from, *relocate_to; /* explicit relocation, or NULL */
};

/* Where the table writes metadata files: write.metadata.path, else <location>/metadata.
 * Caller frees; NULL on OOM. */
char *floe_table_metadata_dir(const floe_table_metadata *m);

/* Replace the current metadata (takes ownership of both; frees the old ones). */
void floe_table_install(floe_table *t, char *location, floe_table_metadata *m);

#endif
