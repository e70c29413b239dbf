/*
 * commit_files.h - the files a commit path writes (delete files, manifests, manifest
 * lists) and which of them the snapshot it committed references, so the others can be
 * deleted: all of them when nothing committed, none after FLOE_EUNKNOWN_STATE (the caller
 * then does not clean up). Private to libfloe (src/table and the folders above it).
 */
#ifndef FLOE_TABLE_COMMIT_FILES_H
#define FLOE_TABLE_COMMIT_FILES_H

#include "floe/catalog.h"
#include "floe/table.h"

typedef struct floe_commit_files {
    floe_strlist written; /* recorded paths, in the order written */
    floe_strlist refs;    /* the ones the last attempt's snapshot references */
} floe_commit_files;

/* Note a file about to be written (its recorded path). */
int floe_commit_files_track(floe_commit_files *f, const char *path, floe_error *err);
/* Delete the files written, through t's path mapping and I/O; keep_refs: except those
 * refs names. Failures are logged, prefixed with who, not returned. */
void floe_commit_files_cleanup(const floe_commit_files *f, const floe_table *t, bool keep_refs,
                               const char *who);
/* Delete the recorded paths of written but those keep lists (may be NULL), through t's
 * path mapping and I/O, when t's confinement holds them (floe/table.h); failures and
 * files kept are logged, prefixed with who. */
void floe_commit_files_delete(const floe_table *t, const floe_strlist *written,
                              const floe_strlist *keep, const char *who);
/* Delete the files at uris[0..n) (where they are) that this run wrote, through t's I/O,
 * when t's confinement holds them; failures and files kept are logged, prefixed with
 * who. */
void floe_commit_files_delete_at(const floe_table *t, const char *const *uris, size_t n,
                                 const char *who);
void floe_commit_files_free(floe_commit_files *f);

#endif
