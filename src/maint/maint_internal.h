/*
 * maint_internal.h - what the maintenance jobs share: path sets, path normalisation,
 * reading what a snapshot reaches, and the parallel deleter. Private to src/maint.
 */
#ifndef FLOE_MAINT_INTERNAL_H
#define FLOE_MAINT_INTERNAL_H

#include "floe/maint.h"
#include "floe/manifest.h"

/* ---------------------------------------------------------------------------------------
 * Path set: open addressing (linear probing) over (hash, string) slots, strings copied
 * into an arena. Removal marks the slot dead (the string stays; sets here only shrink
 * once, after they are built). Each member carries a small tag (a file kind) and a flag.
 * ------------------------------------------------------------------------------------- */
typedef struct maint_slot {
    const char *s;  /* NULL = empty */
    uint64_t hash;
    uint8_t tag;
    uint8_t dead;
    uint8_t flag;
} maint_slot;

typedef struct maint_pathset {
    maint_slot *slots;
    size_t cap;     /* power of two */
    size_t used;    /* occupied slots, dead included */
    size_t live;
    floe_arena arena;
} maint_pathset;

void maint_pathset_init(maint_pathset *ps);
void maint_pathset_free(maint_pathset *ps);
/* Insert s (copied). *added (may be NULL) tells whether it was new (a dead member comes
 * back to life with the new tag). Returns the slot (valid until the next insert) or NULL
 * on OOM. */
maint_slot *maint_pathset_add(maint_pathset *ps, const char *s, uint8_t tag, bool *added);
maint_slot *maint_pathset_find(const maint_pathset *ps, const char *s);
bool maint_pathset_has(const maint_pathset *ps, const char *s);
/* Mark dead; true when s was a live member. */
bool maint_pathset_remove(maint_pathset *ps, const char *s);

/* ---------------------------------------------------------------------------------------
 * Paths
 * ------------------------------------------------------------------------------------- */
/* The comparison key of a location: "<scheme>://<authority><path>" with the scheme and
 * authority rules of floe_maint_uri_split, or the bare path for local files (no scheme or
 * file:). A key is itself a location FileIO can delete. Caller frees; NULL on OOM. */
char *maint_path_key(const char *uri);

/* Recorded path -> where to delete/read it (floe_table_resolve_path) -> its key. */
int maint_resolve(const floe_table *t, const char *recorded, char **uri, char **key,
                  floe_error *err);

/* ---------------------------------------------------------------------------------------
 * Metadata pieces the typed view does not carry
 * ------------------------------------------------------------------------------------- */
/* Statistics and partition-statistics file paths of snapshots (all when ids is NULL, else
 * only those of the listed snapshot ids), resolved and added to set as keys with tag
 * FLOE_MAINT_STATISTICS. */
int maint_statistics_paths(const floe_table *t, const floe_table_metadata *m,
                           const int64_t *ids, size_t nids, maint_pathset *set,
                           floe_error *err);

/* ---------------------------------------------------------------------------------------
 * Reading what snapshots reach
 * ------------------------------------------------------------------------------------- */
/* Read the manifest list of s (or take the v1 inline manifests) and call fn for each
 * manifest with its list record (NULL for v1 inline manifests). */
typedef int (*maint_manifest_fn)(void *ctx, const char *recorded,
                                 const floe_manifest_file *mf, floe_error *err);
int maint_snapshot_manifests(const floe_table *t, const floe_snapshot *s,
                             maint_manifest_fn fn, void *ctx, floe_error *err);

/* Read every entry of a manifest; fn gets the entry (borrowed for the call). */
typedef int (*maint_entry_fn)(void *ctx, const floe_manifest_entry *e, floe_error *err);
int maint_manifest_entries(const floe_table *t, const char *recorded,
                           const floe_manifest_file *mf, maint_entry_fn fn, void *ctx,
                           floe_error *err);

floe_maint_file_kind maint_kind_of_content(floe_file_content c);

/* ---------------------------------------------------------------------------------------
 * Parallel deletes
 * ------------------------------------------------------------------------------------- */
typedef struct maint_delete_list {
    char **uris;     /* owned */
    uint8_t *kinds;
    size_t n, cap;
} maint_delete_list;

int maint_delete_list_push(maint_delete_list *l, const char *uri, floe_maint_file_kind kind,
                           floe_error *err);
void maint_delete_list_free(maint_delete_list *l);
/* Drop from the n lists every uri t's confinement does not hold (floe/table.h: files
 * outside the table's own folders are not its to delete), add their count to *kept and
 * log which (a warning prefixed with who). FLOE_ENOMEM only. */
int maint_delete_lists_confine(const floe_table *t, maint_delete_list *lists, size_t n,
                               const char *who, int64_t *kept, floe_error *err);
/* Delete every uri on `threads` threads in batches (floe_io_delete_many; a failed batch
 * is retried file by file so every failure is counted and logged). deleted[kind] counts
 * successes. */
void maint_delete_run(floe_io *io, const maint_delete_list *l, int threads,
                      int64_t deleted[], int64_t *failures);

#endif
