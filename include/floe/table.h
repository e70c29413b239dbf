/*
 * floe/table.h - a loaded Iceberg table: where its metadata is, where its files are, and
 * the commit protocol that moves it forward.
 *
 * A table is loaded from a catalog (floe_table_load) or opened from a folder or a
 * metadata file (floe_table_open_path: tables floe did not write, e.g. the conformance
 * tables). For the latter floe finds the current metadata file itself and maps the
 * location recorded in the metadata onto the folder it was given, refusing recorded paths
 * that lead out of that folder unless the caller relocates them explicitly.
 *
 * Commits (floe_table_commit) follow format/spec.md "Commit Conflict Resolution and
 * Retry": the caller's apply function makes its changes on a builder started from the
 * current metadata; floe writes the new metadata file, swaps the catalog pointer, and on a
 * conflict reloads and calls apply again on the fresh metadata, with jittered exponential
 * backoff governed by the table's commit.retry.* properties.
 *
 * Lifetime: metadata returned by floe_table_metadata_get is borrowed and valid until the
 * next refresh or commit on the same table. A floe_table borrows its catalog: close the
 * table before the catalog. A floe_table is not safe for concurrent use by threads.
 */
#ifndef FLOE_TABLE_H
#define FLOE_TABLE_H

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/table_metadata.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_table floe_table;

typedef struct floe_table_open_options {
    /* Explicit relocation: recorded paths starting with relocate_from (at a '/'
     * boundary) are read from relocate_to instead, wherever that is. */
    const char *relocate_from;
    const char *relocate_to;
    /* I/O context for a table opened by path (borrowed; NULL: the default). A table
     * loaded through a catalog uses the catalog's. */
    floe_io *io;
} floe_table_open_options;

/* The current metadata file of a table folder (the one holding metadata/), of a metadata
 * folder, or the given *.metadata.json file itself. Order: version-hint.text (a number N
 * -> vN.metadata.json / vN.gz.metadata.json, walking forward while v(N+1) exists; or a
 * file stem), else the highest version among vN and NNNNN-<uuid> names, where names
 * without a number ("vfinal") and ties are settled by reading the candidates (highest
 * last-sequence-number, then last-updated-ms). Caller frees *metadata_uri. */
int floe_table_locate_metadata(floe_io *io, const char *path, char **metadata_uri, floe_error *err)
    FLOE_NODISCARD;

/* Open a table by folder or metadata file. Its commits are those of a Hadoop table
 * (floe_table_commit); whether a catalog manages the folder is the caller's to check
 * (the CLI refuses such folders). The folder is made absolute first. */
int floe_table_open_path(const char *path, const floe_table_open_options *opts,
                         floe_table **out, floe_error *err) FLOE_NODISCARD;
/* Load a table through a catalog. FLOE_ENOTFOUND when it does not exist.
 *
 * Locations: what the catalog and the metadata record is read as follows.
 *   - absolute (file:///..., s3://...): as recorded;
 *   - relative (earlier floe releases recorded paths relative to the folder they ran in):
 *     the metadata file is found against the warehouse (floe_catalog_resolve_location),
 *     the table's files beside its metadata folder;
 *   - under the warehouse the catalog was moved away from (floe_catalog_moved_from), or,
 *     in the filesystem catalog, a location other than <warehouse>/<ns>/<name>: refused
 *     (FLOE_EINVALID naming both) unless opts relocates it: floe never reads or writes a
 *     moved or copied warehouse through its old paths by itself.
 * A table whose recorded paths are not where its files are (relative, or relocated) has
 * them rewritten by its next commit (floe_table_migration_due). */
int floe_table_load(floe_catalog *c, const char *ns, const char *name, floe_table **out,
                    floe_error *err) FLOE_NODISCARD;
/* The same with an explicit relocation (opts->relocate_from/to; may be NULL): recorded
 * paths under FROM are read from TO, and the next commit records them there. */
int floe_table_load_ex(floe_catalog *c, const char *ns, const char *name,
                       const floe_table_open_options *opts, floe_table **out,
                       floe_error *err) FLOE_NODISCARD;
/* True when the next commit first rewrites the table's recorded paths to where its files
 * are (absolute URIs): metadata location, manifest lists, manifests and the data and
 * delete file paths in them, metadata-log, statistics files, write.data.path and
 * write.metadata.path. That migration is a commit of its own (no new snapshot; snapshot
 * ids, sequence numbers and entries are kept). */
bool floe_table_migration_due(const floe_table *t);
/* The I/O context the table reads and writes its files through (its catalog's, or the
 * one it was opened by path with). */
floe_io *floe_table_io(const floe_table *t);
/* Commit that migration now (a no-op when none is due). floe_table_commit does it before
 * the caller's change; commands that plan their change from the current snapshot's
 * manifests (rewrite, rewrite-manifests, expire) call it before planning. */
int floe_table_migrate(floe_table *t, floe_error *err) FLOE_NODISCARD;

typedef struct floe_table_create_options {
    const char *location;  /* NULL = the catalog's default (warehouse/<ns>/<name>) */
    const char *spec_json; /* partition spec {"fields":[...]}; NULL = unpartitioned */
    const char *sort_json; /* sort order {"fields":[...]}; NULL = unsorted */
    const floe_kv *props;  /* table properties */
    size_t nprops;
    /* Add floe's properties for tables it creates (floe_table_created_defaults) where
     * props does not set them. `floe table create` and `floe serve` set this. */
    bool floe_defaults;
} floe_table_create_options;

/* The properties floe gives the tables it creates, where the creator does not set them,
 * so a table committed to every few seconds stays bounded (docs/MAINTENANCE.md):
 *   write.metadata.delete-after-commit.enabled = true
 *   write.metadata.previous-versions-max       = 10
 *   commit.manifest.min-count-to-merge         = 8
 * Returns a static array; *n gets its length. */
const floe_kv *floe_table_created_defaults(size_t *n);

/* Create a table: write its first metadata file and register it, or on a catalog that
 * commits changes (REST) have its server make the table (floe_catalog_create_table) and
 * adopt the metadata it answers. FLOE_EEXISTS when the name is taken (the file written
 * is then removed), FLOE_ENOTFOUND when the namespace does not exist. opts may be NULL. The location (opts->location, else the catalog's
 * default) is recorded as an absolute URI and checked by floe_table_check_location
 * (FLOE_EINVALID naming the table or folder in the way). */
int floe_table_create(floe_catalog *c, const char *ns, const char *name,
                      const char *schema_json, const floe_table_create_options *opts,
                      floe_table **out, floe_error *err) FLOE_NODISCARD;
/* The two halves of floe_table_create. new_metadata checks as create does (namespace,
 * name, location) and builds the first metadata without writing anything (caller frees
 * *out): a REST staged create answers with it. create_with_metadata makes the table
 * from m as floe_table_create does (writes and registers it, or sends it to a REST
 * catalog's server); m may come
 * from elsewhere (floe_metadata_builder_new_empty and a REST client's updates), its
 * location must be an absolute URI. Takes ownership of m, also on failure. */
int floe_table_new_metadata(floe_catalog *c, const char *ns, const char *name,
                            const char *schema_json, const floe_table_create_options *opts,
                            floe_table_metadata **out, floe_error *err) FLOE_NODISCARD;
int floe_table_create_with_metadata(floe_catalog *c, const char *ns, const char *name,
                                    floe_table_metadata *m, floe_table **out,
                                    floe_error *err) FLOE_NODISCARD;
/* Register a table whose metadata file exists (recorded as an absolute URI), after the
 * location check. */
int floe_table_register(floe_catalog *c, const char *ns, const char *name,
                        const char *metadata_location, floe_error *err) FLOE_NODISCARD;
/* Register with overwrite: table ns.name, whose pointer is expected, is pointed at
 * metadata_location by floe_catalog_swap, after the same checks as a register (its
 * location is its own or lies apart from every other table's). */
int floe_table_register_over(floe_catalog *c, const char *ns, const char *name,
                             const char *expected, const char *metadata_location,
                             floe_error *err) FLOE_NODISCARD;
/* Iceberg's table property gc.enabled (default true). false marks a table whose files
 * other tables may share (Iceberg's snapshot and migrate procedures, Nessie set it): no
 * floe command deletes its files - expiry, orphan removal and a purge are refused, as
 * Iceberg Java's engines refuse them. As Iceberg Java reads it, any value but "true" (in
 * any case) counts as false. m is the metadata to judge (NULL: t's current metadata);
 * action names what is refused ("expire snapshots"). 0 when gc is enabled, else
 * FLOE_EINVALID: "table NS.NAME: cannot ACTION: gc.enabled is false (deleting files may
 * corrupt other tables)". Old metadata files a commit replaces are governed by
 * write.metadata.delete-after-commit.enabled alone, as in Iceberg Java. */
bool floe_table_metadata_gc_enabled(const floe_table_metadata *m);
int floe_table_gc_check(const floe_table *t, const floe_table_metadata *m, const char *action,
                        floe_error *err) FLOE_NODISCARD;
/* Delete the files of a table already dropped from its catalog (t loaded before the
 * drop, and the drop conditional on t's pointer: floe_table_drop_purge). Refused (floe_table_gc_check) when gc.enabled is false: its metadata files, manifest lists, manifests, data and delete files, those
 * its confinement holds only (below: files added from elsewhere, or named elsewhere by
 * whoever committed, stay; logged). A file that cannot
 * be deleted is logged and skipped (orphan removal finds it); an unreadable manifest list
 * or manifest stops the purge with its error. *deleted (may be NULL) gets the count. */
int floe_table_purge(floe_table *t, size_t *deleted, floe_error *err) FLOE_NODISCARD;
/* Drop table ns.name and purge its files, without losing a commit that races the drop:
 * the table is loaded, held to floe_table_gc_check, dropped only if its metadata pointer
 * is still the one loaded (floe_catalog_drop_table_at) - when a commit moved it, loaded
 * again and retried, up to 10 times - and only then are the files that exact metadata
 * reaches purged (floe_table_purge). So a commit that lands first keeps the table and
 * its files, and every file of the version dropped is deleted. *dropped (may be NULL)
 * says whether the table was dropped (an error with it true: the purge stopped part-way);
 * *deleted (may be NULL) gets the count. FLOE_ECONFLICT when the pointer kept moving;
 * FLOE_EUNSUPPORTED on a store that purges itself (floe_catalog_drop_purges). */
int floe_table_drop_purge(floe_catalog *c, const char *ns, const char *name, bool *dropped,
                          size_t *deleted, floe_error *err) FLOE_NODISCARD;
/* Rename a table (SQL catalogs), after checking its location is still a place of its
 * own. */
int floe_table_rename(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                      const char *to_name, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Placement: a table's location is a folder of its own. It never lies inside or contains
 * another table's location, <warehouse>/_landing (floe serve's landing files),
 * <warehouse>/_quarantine, <warehouse>/_wal, and never contains the warehouse. Create,
 * register and rename check it under a catalog-wide lock (a floe_leases row; for the
 * filesystem catalog <warehouse>/_leases.db), so racing creates are serialised.
 * ------------------------------------------------------------------------------------- */
#define FLOE_TABLE_WRITE_PATHS 4
/* The properties naming a folder a table writes to (write.data.path, write.metadata.path,
 * write.object-storage.path, write.folder-storage.path), in that order. */
extern const char *const floe_table_write_path_props[FLOE_TABLE_WRITE_PATHS];
typedef struct floe_table_place {
    char *ns, *name;
    char *location; /* absolute: where a load places the table's files (or the folder
                       of its metadata pointer when it cannot be loaded) */
    /* floe_table_write_path_props[i] where it is set and lies outside location: the
     * folder as a load maps it (the table writes there and its maintenance deletes
     * there); NULL otherwise */
    char *write_paths[FLOE_TABLE_WRITE_PATHS];
} floe_table_place;

/* Every table of the catalog, every namespace level. Lists the tables with their metadata
 * pointers and reads the metadata of those whose place is not kept for that pointer
 * (floe_table_places in the catalog's database, written here; a REST catalog: all). */
int floe_catalog_table_places(floe_catalog *c, floe_table_place **out, size_t *n,
                              floe_error *err) FLOE_NODISCARD;
void floe_table_places_free(floe_table_place *p, size_t n);
/* 1 when location is, or lies inside, a folder the warehouse keeps for floe serve
 * (_landing, _quarantine, _wal): *dir gets that folder (caller frees) and *what
 * (static) says what it holds; 0 when not; FLOE_ENOMEM. */
int floe_table_reserved_folder(floe_catalog *c, const char *location, char **dir,
                               const char **what) FLOE_NODISCARD;
/* FLOE_EINVALID (naming what is in the way) when location may not hold table ns.name:
 * it lies inside or around another table's location or write path (the places' folders),
 * a reserved folder of the warehouse, or holds the warehouse. The table itself (and
 * skip_ns.skip_name, when given) does not count. */
int floe_table_check_location(floe_catalog *c, const char *ns, const char *name,
                              const char *location, floe_error *err) FLOE_NODISCARD;
int floe_table_check_location_except(floe_catalog *c, const char *ns, const char *name,
                                     const char *skip_ns, const char *skip_name,
                                     const char *location, floe_error *err) FLOE_NODISCARD;
/* The same against places ps[0..n) (borrowed) the caller read with
 * floe_catalog_table_places: several locations checked with one reading of the catalog
 * (a transaction's set-locations), which loads every table. */
int floe_table_check_location_among(floe_catalog *c, const floe_table_place *ps, size_t n,
                                    const char *ns, const char *name, const char *skip_ns,
                                    const char *skip_name, const char *location,
                                    floe_error *err) FLOE_NODISCARD;
/* FLOE_EINVALID (naming the folder and a file in it) when the location of a table about to
 * be created already holds files: orphan removal would delete them. Not checked on a
 * catalog that commits changes (REST): its server checks what it creates. */
int floe_table_check_location_unused(floe_catalog *c, const char *ns, const char *name,
                                     const char *location, floe_error *err) FLOE_NODISCARD;
typedef struct floe_table_confinement floe_table_confinement;
/* The same for a table moved to location (a REST commit's set-location): files own holds
 * (the table's folders before the move; NULL: none) may be there, anything else is in
 * the way. Checked on every catalog. */
int floe_table_check_location_own(floe_catalog *c, const char *ns, const char *name,
                                  const char *location, const floe_table_confinement *own,
                                  floe_error *err) FLOE_NODISCARD;
/* The same for a new table whose first metadata m adds snapshots (a REST staged create's
 * commit: the client wrote the snapshots' files into the location before): the files m
 * names (manifest lists, format v1 manifests, statistics files), the manifests those
 * lists name and the data and delete files those manifests hold may be in m->location;
 * anything else there (another table's metadata file above all) is FLOE_EINVALID naming
 * it. Only manifest lists and manifests inside the location are read; one that cannot be
 * read is FLOE_EINVALID naming it. Checked on every catalog. */
int floe_table_check_location_snapshots(floe_catalog *c, const char *ns, const char *name,
                                        const floe_table_metadata *m,
                                        floe_error *err) FLOE_NODISCARD;
/* A folder property of table ns.name (write.data.path, write.metadata.path,
 * write.object-storage.path, write.folder-storage.path; other keys: *out = NULL, 0) as it
 * is recorded, an absolute URI (*out, caller frees), after the placement check: inside
 * root (the table's location), or else a place of the table's own by
 * floe_table_check_location, since the table writes there and its maintenance deletes
 * there. FLOE_EINVALID naming the property otherwise. On a catalog that commits changes
 * (REST) its server checks, and c may be NULL for a table opened by path: then only the
 * absolute form. */
int floe_table_check_write_path(floe_catalog *c, const char *ns, const char *name,
                                const char *root, const char *prop, const char *value,
                                char **out, floe_error *err) FLOE_NODISCARD;
typedef struct floe_table_placement_lock floe_table_placement_lock;
int floe_table_placement_lock_take(floe_catalog *c, floe_table_placement_lock **out,
                                   floe_error *err) FLOE_NODISCARD;
void floe_table_placement_lock_release(floe_table_placement_lock *l); /* accepts NULL */

/* ---------------------------------------------------------------------------------------
 * Confinement: the folders whose files are a table's to delete. Whoever commits to a
 * table chooses the paths its metadata names, so every floe deleter (expiry, orphan
 * removal, drop with purge, the cleanup after a failed commit, old metadata files)
 * deletes a file only when the table's confinement holds it, and keeps and reports
 * anything else; floe catalog serve refuses a commit whose new snapshot's manifest list,
 * or statistics file, it does not hold. The folders: the table's folder, and
 * write.data.path / write.metadata.path where they lie outside it and are a place of the
 * table's own (floe_table_check_location: neither inside nor around another table's
 * location, the warehouse or its reserved folders; a table opened by path: its folder
 * alone). Paths compare by floe_io_uri_key, so "..", "." and spellings do not escape.
 * ------------------------------------------------------------------------------------- */
/* The confinement of t as loaded (its folder and mapped write paths). Checking a write
 * path outside the folder reads every table of the catalog. FLOE_ENOMEM only; a write
 * path that cannot be checked is left out (logged). Free with _free. */
int floe_table_confinement_open(const floe_table *t, floe_table_confinement **out,
                                floe_error *err) FLOE_NODISCARD;
/* The same from parts: table ns.name of catalog cat (NULL: no write path outside folder
 * counts), its folder and its write.data.path / write.metadata.path (may be NULL). */
int floe_table_confinement_new(floe_catalog *cat, const char *ns, const char *name,
                               const char *folder, const char *data_path,
                               const char *metadata_path, floe_table_confinement **out,
                               floe_error *err) FLOE_NODISCARD;
/* 1 when uri (where the file is) lies in one of c's folders, 0 when not, FLOE_ENOMEM. */
int floe_table_confinement_holds(const floe_table_confinement *c, const char *uri,
                                 floe_error *err) FLOE_NODISCARD;
/* holds: 1 (the deleter may delete uri), else 0 with uri counted as kept (the first few
 * are named by _report), or FLOE_ENOMEM. Not thread-safe. */
int floe_table_confinement_admit(floe_table_confinement *c, const char *uri,
                                 floe_error *err) FLOE_NODISCARD;
/* Delete those of uris[0..n) (where the files are; NULL entries skipped) that c holds,
 * through io; the others are kept, counted and named as admit does (log _report after).
 * A failed delete is logged, prefixed with who; so is an allocation failure, which keeps
 * the files from there on. Not thread-safe. */
void floe_table_confinement_delete(floe_table_confinement *c, floe_io *io,
                                   const char *const *uris, size_t n, const char *who);
/* Files admit refused so far. */
int64_t floe_table_confinement_kept(const floe_table_confinement *c);
/* "kept N files outside the table's location: A, B, C, ... (...)", or NULL when none
 * was refused; valid until the next call on c. */
const char *floe_table_confinement_report(floe_table_confinement *c);
/* FLOE_EINVALID (naming meta, the snapshot and the file) when table metadata m (read from
 * meta) of table ns.name names a manifest list, a format v1 manifest, a statistics or a
 * partition statistics file that its confinement (folder, its location, and m's write
 * paths as _new takes them; relative paths under folder) does not hold: a register is
 * held to the rule floe catalog serve applies to a commit. */
int floe_table_check_metadata_files(floe_catalog *cat, const char *ns, const char *name,
                                    const char *folder, const floe_table_metadata *m,
                                    const char *meta, floe_error *err) FLOE_NODISCARD;
void floe_table_confinement_free(floe_table_confinement *c); /* accepts NULL */

/* Re-read the current metadata from the catalog (or the folder). FLOE_EINVALID if the
 * table-uuid changed (the table was dropped and re-created). */
int floe_table_refresh(floe_table *t, floe_error *err) FLOE_NODISCARD;
/* After an operation on t failed with rc: true when rc is FLOE_ENOTFOUND and the table no
 * longer is at the metadata t holds (the catalog's pointer, or a path table's newest
 * metadata file, moved). A concurrent commit moved the table on, and an expiry after it
 * may have deleted files only the snapshots t still shows referenced: that is a conflict,
 * to be met by refreshing and running again under commit.retry.*. False for any other rc,
 * when the table did not move (a file of its current state is missing: the error stands)
 * and when the pointer cannot be read. */
bool floe_table_base_gone(floe_table *t, int rc);
/* Before the column at path (of m's current schema; m: the metadata the change applies to,
 * a commit's base) is dropped: FLOE_EINVALID, naming the column, its field id, how many
 * delete files and one of them with its snapshot and branch, when a live equality delete
 * file of a branch head of m (main included; not tags) has the column or a field below it
 * among its equality ids. floe's readers key a row by the current schema's columns, so
 * such a delete could no longer be applied (src/table/schema_drop.c). Reads the delete
 * manifests of those snapshots, none for one whose summary counts no equality delete.
 * 0 when path names no column (the schema change reports that). Read errors as the
 * manifest readers'. */
int floe_table_check_drop_column(floe_table *t, const floe_table_metadata *m, const char *path,
                                 floe_error *err) FLOE_NODISCARD;
void floe_table_close(floe_table *t);

const floe_table_metadata *floe_table_metadata_get(const floe_table *t);
const char *floe_table_metadata_location(const floe_table *t);
/* Where the table's files are, as an absolute URI (the folder given to open_path, or the
 * recorded location for catalog tables, resolved or relocated as floe_table_load says). */
const char *floe_table_root(const floe_table *t);
/* The folder new metadata files, manifests and manifest lists of the table are recorded
 * under (write.metadata.path, else <location>/metadata; in the migrated form while a
 * migration is due). Caller frees. */
int floe_table_metadata_write_dir(const floe_table *t, char **out, floe_error *err) FLOE_NODISCARD;
floe_catalog *floe_table_catalog(const floe_table *t); /* NULL for path tables */
const char *floe_table_namespace(const floe_table *t); /* NULL for path tables */
const char *floe_table_name(const floe_table *t);

/* Map a path recorded in the metadata (a manifest list, manifest, data or delete file)
 * to where it is readable. The recorded table location prefix - in any of the forms
 * writers use: as is, "./rel", "file://rel", "file:///abs", "file:/abs" - is replaced by
 * the table root; the explicit relocation applies first. For path tables, a path that
 * matches neither, or whose remainder climbs out with "..", is refused (FLOE_EINVALID)
 * naming the path. Caller frees *out. */
int floe_table_resolve_path(const floe_table *t, const char *recorded, char **out,
                            floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Snapshot summary totals (spec "Snapshots", optional summary fields total-records,
 * total-files-size, total-data-files, total-delete-files, total-position-deletes,
 * total-equality-deletes): what the live entries of a snapshot's manifests hold.
 * total-files-size counts data and delete files alike.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_snapshot_totals {
    int64_t records, files_size, data_files, delete_files, position_deletes,
        equality_deletes;
} floe_snapshot_totals;

/* The six summary keys, in the order of the struct's fields. */
extern const char *const floe_snapshot_total_keys[6];
/* Field k (0..5, in the order of floe_snapshot_total_keys) of t. */
int64_t floe_snapshot_total(const floe_snapshot_totals *t, int k);

/* The totals a snapshot's summary records: true when all six are there and are
 * non-negative integers (*out filled), false otherwise. s may be NULL (false). */
bool floe_snapshot_totals_from_summary(const floe_snapshot *s, floe_snapshot_totals *out);

/* Sum the live (ADDED, EXISTING) entries of the n manifests of a manifest list (as read
 * by floe_manifest_list_read), reading each manifest through t's path mapping. */
struct floe_manifest_file;
int floe_table_manifest_totals(const floe_table *t, const struct floe_manifest_file *files,
                               size_t n, floe_snapshot_totals *out, floe_error *err) FLOE_NODISCARD;

/* The totals of a new snapshot whose parent (may be NULL) is followed by changes
 * (*delta, counted as added minus removed): the parent's summary totals plus the delta
 * when the parent records all six and they stay non-negative, else the sum over the
 * parent's manifests (parent_files[0..n)) plus the delta. */
int floe_table_next_totals(const floe_table *t, const floe_snapshot *parent,
                           const struct floe_manifest_file *parent_files, size_t n,
                           const floe_snapshot_totals *delta, floe_snapshot_totals *out,
                           floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Commit
 *
 * The apply function receives a builder started from the current metadata (base:
 * floe_metadata_builder_base) and makes its changes. It may be called several times, once
 * per attempt, each time on fresher metadata, so it must derive everything from the base
 * it is given. Return 0 to commit, FLOE_COMMIT_NOOP to stop without committing (the work
 * is already there), or a negative error to abort.
 *
 * Results: 0 committed; FLOE_ECONFLICT when the retries ran out (nothing of this commit
 * is left behind); FLOE_EUNKNOWN_STATE when the swap may or may not have happened and
 * reading the catalog could not tell - the new metadata file is kept, nothing is retried,
 * and the caller must refresh before anything else; other errors from apply, I/O or the
 * catalog. After a successful commit the table holds the new metadata.
 * ------------------------------------------------------------------------------------- */
#define FLOE_COMMIT_NOOP 1

typedef int (*floe_commit_apply_fn)(void *ctx, floe_metadata_builder *b, floe_error *err);

/* A table opened by path commits as a Hadoop table: v<N+1>.metadata.json is created if
 * absent beside the current file (losing that race is a conflict), then the version hint
 * is rewritten. A table whose migration is due (floe_table_migration_due) gets it first,
 * as a commit of its own. */
int floe_table_commit(floe_table *t, floe_commit_apply_fn apply, void *ctx, floe_error *err)
    FLOE_NODISCARD;

/* Commit to n tables of one SQL catalog at once, all or nothing: apply runs on each table
 * (ctxs[i], on a builder from that table's current metadata; FLOE_COMMIT_NOOP leaves the
 * table out), every new metadata file is written, and the n pointer swaps run in one
 * transaction on the catalog's connection (floe_catalog_sql), so either every table moves
 * or none does. A swap lost to another writer rolls the transaction back, deletes the
 * files written, and the attempt starts again on fresh metadata of every table (apply
 * included), under the first table's commit.retry.* settings. The tables must be distinct
 * and loaded from the same SQL catalog (FLOE_EINVALID; a filesystem catalog:
 * FLOE_EUNSUPPORTED), and no transaction may be open on its connection. *failed (may be
 * NULL) gets the index of the table whose apply returned the error, else SIZE_MAX.
 * Results as floe_table_commit's; FLOE_EUNKNOWN_STATE covers all the tables. */
int floe_tables_commit(floe_table *const *ts, size_t n, floe_commit_apply_fn apply,
                       void *const *ctxs, size_t *failed, floe_error *err) FLOE_NODISCARD;
/* The same, asking wanted(wanted_ctx) (may be NULL: always) before writing each metadata
 * file: false stops the attempt with FLOE_ECANCELLED, the files written deleted, nothing
 * swapped (a server whose client has gone). apply may return FLOE_ECANCELLED too; neither
 * is retried. */
typedef bool (*floe_commit_wanted_fn)(void *ctx);
int floe_tables_commit_while(floe_table *const *ts, size_t n, floe_commit_apply_fn apply,
                             void *const *ctxs, floe_commit_wanted_fn wanted, void *wanted_ctx,
                             size_t *failed, floe_error *err) FLOE_NODISCARD;

/* write.metadata.delete-after-commit.enabled (Iceberg's table property): once
 * `committed`, written at committed_loc, has replaced `base` as the table's metadata,
 * delete the metadata files base's metadata-log lists and committed's no longer does
 * (write.metadata.previous-versions-max bounds that log). Only files in the folder of
 * committed_loc are deleted, never committed_loc itself: the file the catalog points at
 * is always the newest, and a file another writer wrote but has not swapped in is never
 * in a log. Nor one committed still reaches in another role (a snapshot's manifest list or
 * v1 manifest, a statistics or partition statistics file: another writer's metadata may
 * name a metadata file so). Failures are logged, not returned (orphan removal finds what is left).
 * floe_table_commit calls it after each successful swap; other commit paths (tables
 * opened by path) call it themselves. */
void floe_table_clean_old_metadata(const floe_table *t, const floe_table_metadata *base,
                                   const floe_table_metadata *committed,
                                   const char *committed_loc);

/* Retry settings of a table (its commit.retry.* properties, with Iceberg's defaults). */
typedef struct floe_commit_retry {
    int64_t num_retries;      /* commit.retry.num-retries, 4 */
    int64_t min_wait_ms;      /* commit.retry.min-wait-ms, 100 */
    int64_t max_wait_ms;      /* commit.retry.max-wait-ms, 60000 */
    int64_t total_timeout_ms; /* commit.retry.total-timeout-ms, 1800000 */
} floe_commit_retry;
void floe_commit_retry_from(const floe_table_metadata *m, floe_commit_retry *out);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
