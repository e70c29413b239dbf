/*
 * orphans.c - orphan file removal with the semantics of Iceberg's DeleteOrphanFiles
 * (maint.h S4).
 *
 *   1. list the location (the table root by default); skip files under hidden folders
 *      (a component starting with '_' or '.', except partition folders "_x=..."), and
 *      files modified at or after the threshold. The rest are candidates.
 *   2. references: the current metadata file and every file in its metadata-log, the
 *      version hint, statistics and partition-statistics files, and for every snapshot
 *      its manifest list, its manifests and every entry of them (whatever the status: a
 *      DELETED entry is still reachable from a snapshot until expiry removes it).
 *   3. re-read the table; references of snapshots committed meanwhile are added. A
 *      snapshot whose manifest list or a manifest was not found in step 2 may have been
 *      expired meanwhile (its files deleted by the expiry): it is skipped if the re-read
 *      table no longer has it, and walked again (now a failure if still not found) if it
 *      has. Path tables (no catalog to re-read) fail at once.
 *   4. a candidate whose path no reference has is an orphan. One whose path matches but
 *      whose scheme or authority does not match any reference with that path is a
 *      conflict: by default everything stops; --prefix-mismatch ignore keeps them,
 *      delete removes them. On the reference side an empty scheme or authority matches
 *      any (Java: "valid" components that are null match everything).
 *
 * Nothing is deleted when the listing meets files that are not the table's: another
 * table's metadata file (outside the table's metadata folders, or inside them, not
 * referenced, with another table-uuid: check_own_md_files) or a database (note_foreign).
 *
 * Listing happens before the references are read, so a file committed before the read
 * is referenced; a file written after the listing is not a candidate; a file written
 * between the two but not committed yet is protected by the age threshold only - which is
 * why the threshold must exceed the longest write (Iceberg's own advice, 3 days default).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "floe/io.h"
#include "floe/table.h"
#include "maint_internal.h"

#define DEFAULT_ORPHAN_AGE_MS (3 * FLOE_MAINT_DAY_MS)

void floe_orphan_options_init(floe_orphan_options *o) {
    memset(o, 0, sizeof *o);
    o->older_than_ms = -1;
    o->prefix_mismatch = FLOE_PREFIX_MISMATCH_ERROR;
}

typedef struct candidate {
    const char *uri;
    const char *scheme, *authority, *path;
    int64_t size;
} candidate;

typedef struct orphan_ctx {
    const floe_table *t;
    const floe_orphan_options *o;
    int64_t cutoff;
    const char *root_path; /* path part of the listed location */
    size_t root_len;
    floe_arena arena;      /* candidates' strings */
    candidate *cands;
    size_t ncands, cap;
    maint_pathset valid_path;  /* path only */
    maint_pathset valid_full;  /* scheme \x01 authority \x01 path */
    maint_pathset manifests;   /* manifests already read */
    maint_pathset snapshots;   /* snapshot ids already walked (decimal) */
    maint_pathset vanished;    /* snapshot ids whose files were not found (decimal) */
    bool tolerate_missing;     /* step 2 with a re-read to come: note them, go on */
    floe_orphan_result r;
    char *own_md[3];           /* keys of the folders this table's metadata files are in */
    char *foreign;             /* the first listed file that belongs to something else
                                  (another table's metadata, a catalog database) */
    maint_pathset own_md_files; /* metadata files listed in own_md folders (uri; tag 1:
                                  older than the cutoff), whose table is checked once the
                                  references are known (check_own_md_files) */
    int rc;
    floe_error *err;
} orphan_ctx;

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* A listed file that orphan removal must never meet in a table's location: a metadata
 * file or version hint of a table other than this one (a table nested inside), or a
 * database (a SQLite catalog, lease or landing index). Notes the first in c->foreign;
 * a metadata file in one of the table's own metadata folders is noted in own_md_files
 * (old: listed before the cutoff), to be checked for its table-uuid. */
static int note_foreign(orphan_ctx *c, const char *uri, bool old) {
    if (c->foreign)
        return 0;
    const char *slash = strrchr(uri, '/');
    const char *name = slash ? slash + 1 : uri;
    bool db = ends_with(name, ".db") || ends_with(name, ".db-wal") ||
              ends_with(name, ".db-journal");
    bool md = floe_metadata_file_name(name) ||
              !strcmp(name, "version-hint.text");
    if (!db && !md)
        return 0;
    if (md && slash) {
        char *dir = floe_strndup(uri, (size_t)(slash - uri));
        char *key = dir ? floe_io_uri_key(dir) : NULL;
        floe_free(dir);
        if (!key)
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        bool own = false;
        for (int i = 0; i < 3 && !own; i++)
            own = c->own_md[i] && !strcmp(c->own_md[i], key);
        floe_free(key);
        if (own && !strcmp(name, "version-hint.text"))
            return 0;
        if (own)
            return maint_pathset_add(&c->own_md_files, uri, old ? 1 : 0, NULL)
                       ? 0
                       : floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    }
    if (!(c->foreign = floe_strdup(uri)))
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* A component of rest starting with '_' or '.' hides the file, except partition folders
 * ("_bucket=3": the name of a partition field may start with '_'). */
static bool hidden(const char *rest) {
    const char *p = rest;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len && (p[0] == '_' || p[0] == '.')) {
            bool partition_dir = slash && memchr(p, '=', len) != NULL;
            if (!partition_dir)
                return true;
        }
        if (!slash)
            break;
        p = slash + 1;
    }
    return false;
}

static int on_listed(void *vctx, const floe_io_entry *e) {
    orphan_ctx *c = vctx;
    c->r.listed++;
    size_t n = strlen(e->uri) + 8;
    char *buf = floe_arena_alloc(&c->arena, n);
    floe_uri_parts p;
    if (!buf) {
        c->rc = floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        return 1;
    }
    if (!floe_maint_uri_split(e->uri, buf, n, &p))
        return 0;
    const char *rest = p.path;
    if (!strncmp(p.path, c->root_path, c->root_len) && p.path[c->root_len] == '/')
        rest = p.path + c->root_len + 1;
    if (hidden(rest)) {
        c->r.hidden++;
        return 0;
    }
    if ((c->rc = note_foreign(c, e->uri, e->mtime_ms < c->cutoff)) < 0)
        return 1;
    if (e->mtime_ms >= c->cutoff) {
        c->r.too_recent++;
        return 0;
    }
    if (c->ncands == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 1024;
        candidate *ncs = floe_realloc(c->cands, nc * sizeof *ncs);
        if (!ncs) {
            c->rc = floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
            return 1;
        }
        c->cands = ncs;
        c->cap = nc;
    }
    const char *uri = floe_arena_strdup(&c->arena, e->uri);
    if (!uri) {
        c->rc = floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        return 1;
    }
    c->cands[c->ncands++] = (candidate){uri, p.scheme, p.authority, p.path, e->size};
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * references
 * ------------------------------------------------------------------------------------- */

static int add_parts(orphan_ctx *c, const char *uri, floe_error *err) {
    size_t n = strlen(uri) + 8;
    char *buf = floe_malloc(n);
    if (!buf)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_uri_parts p;
    int rc = 0;
    if (floe_maint_uri_split(uri, buf, n, &p)) {
        char *full = floe_asprintf("%s\x01%s\x01%s", p.scheme, p.authority, p.path);
        if (!full || !maint_pathset_add(&c->valid_path, p.path, 0, NULL) ||
            !maint_pathset_add(&c->valid_full, full, 0, NULL))
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(full);
    }
    floe_free(buf);
    return rc;
}

/* A recorded path: mapped onto the table root like every read, then kept. A path the
 * table cannot map (outside a path table's folder) is kept as recorded: it can only match
 * listed files if it names them, and then it protects them. */
static int add_ref(orphan_ctx *c, const char *recorded, floe_error *err) {
    char *uri = NULL;
    floe_error e;
    floe_error_clear(&e);
    if (floe_table_resolve_path(c->t, recorded, &uri, &e) < 0) {
        if (e.code == FLOE_ENOMEM)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return add_parts(c, recorded, err);
    }
    int rc = add_parts(c, uri, err);
    if (rc == 0 && strcmp(uri, recorded))
        rc = add_parts(c, recorded, err);
    floe_free(uri);
    return rc;
}

static int ref_entry(void *vctx, const floe_manifest_entry *e, floe_error *err) {
    return add_ref(vctx, e->file.file_path, err);
}

static int ref_manifest(void *vctx, const char *recorded, const floe_manifest_file *mf,
                        floe_error *err) {
    orphan_ctx *c = vctx;
    if (maint_pathset_has(&c->manifests, recorded))
        return 0;
    FLOE_FORWARD_IF_ERROR(add_ref(c, recorded, err));
    int rc = maint_manifest_entries(c->t, recorded, mf, ref_entry, c, err);
    if (rc < 0) {
        floe_error_prefix(err, "manifest %s: ", recorded);
        return rc;
    }
    /* only a manifest read in full counts as read: another snapshot holding one that
     * failed must not skip it */
    if (!maint_pathset_add(&c->manifests, recorded, 0, NULL))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static int add_metadata_refs(orphan_ctx *c, const floe_table *t, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    int rc = 0;
    FLOE_FORWARD_IF_ERROR(add_ref(c, floe_table_metadata_location(t), err));
    for (size_t i = 0; i < m->n_metadata_log; i++)
        FLOE_FORWARD_IF_ERROR(add_ref(c, m->metadata_log[i].metadata_file, err));
    /* the version hint beside the current metadata file, and in <location>/metadata */
    const char *cur = floe_table_metadata_location(t);
    const char *slash = strrchr(cur, '/');
    if (slash) {
        char *hint = floe_asprintf("%.*s/version-hint.text", (int)(slash - cur), cur);
        if (!hint)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        rc = add_ref(c, hint, err);
        floe_free(hint);
        FLOE_FORWARD_IF_ERROR(rc);
    }
    char *hint2 = floe_asprintf("%s/metadata/version-hint.text", m->location);
    if (!hint2)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rc = add_ref(c, hint2, err);
    floe_free(hint2);
    FLOE_FORWARD_IF_ERROR(rc);
    /* statistics files */
    maint_pathset stats;
    maint_pathset_init(&stats);
    rc = maint_statistics_paths(t, m, NULL, 0, &stats, err);
    for (size_t i = 0; rc == 0 && i < stats.cap; i++)
        if (stats.slots[i].s)
            rc = add_parts(c, stats.slots[i].s, err);
    maint_pathset_free(&stats);
    FLOE_FORWARD_IF_ERROR(rc);
    /* snapshots not walked yet */
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        char id[32];
        snprintf(id, sizeof id, "%" PRId64, s->snapshot_id);
        bool added = false;
        if (!maint_pathset_add(&c->snapshots, id, 0, &added))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (!added)
            continue;
        if (s->manifest_list)
            FLOE_FORWARD_IF_ERROR(add_ref(c, s->manifest_list, err));
        rc = maint_snapshot_manifests(t, s, ref_manifest, c, err);
        if (rc == FLOE_ENOTFOUND && c->tolerate_missing) {
            /* expired meanwhile? decided after the re-read (step 3) */
            maint_pathset_remove(&c->snapshots, id);
            if (!maint_pathset_add(&c->vanished, id, 0, NULL))
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            floe_log(FLOE_LOG_INFO, "orphans: snapshot %s: %s; checking whether it was expired",
                     id, err ? err->msg : "not found");
            floe_error_clear(err);
            continue;
        }
        if (rc < 0) {
            floe_error_prefix(err, "snapshot %" PRId64 ": ", s->snapshot_id);
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * what else lies in the location
 * ------------------------------------------------------------------------------------- */

/* Refuse when the catalog knows something inside loc that is not this table's: another
 * table's location (or one holding loc: a table keeps files anywhere under its location,
 * its data/ folder may be the other table's location), floe serve's landing folder, the
 * quarantine, the write-ahead logs, the warehouse itself - the placement rules. */
static int check_nothing_else_under(floe_table *t, const char *loc, floe_error *err) {
    floe_catalog *c = floe_table_catalog(t);
    if (!c)
        return 0;
    int rc = floe_table_check_location(c, floe_table_namespace(t), floe_table_name(t), loc, err);
    if (rc == FLOE_EINVALID)
        floe_error_prefix(err, "orphans: nothing was deleted: ");
    return rc;
}

/* A metadata file in the table's own metadata folder that the table does not reference
 * (an old version dropped from its metadata-log, a failed commit's) is the table's only
 * when its table-uuid is the table's (without uuids: when its location is): one of
 * another table - a table dropped without purge in whose folder this table was made -
 * means the files beside it are that table's too, and nothing may be deleted. One that
 * cannot be read stops orphan removal too, unless it is younger than the cutoff (being
 * written). */
static int check_own_md_files(orphan_ctx *c, floe_error *err) {
    const floe_table_metadata *tm = floe_table_metadata_get(c->t);
    for (size_t i = 0; i < c->own_md_files.cap; i++) {
        const maint_slot *sl = &c->own_md_files.slots[i];
        if (!sl->s)
            continue;
        size_t n = strlen(sl->s) + 8;
        char *buf = floe_malloc(n);
        if (!buf)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_uri_parts p;
        bool referenced = floe_maint_uri_split(sl->s, buf, n, &p) &&
                          maint_pathset_has(&c->valid_path, p.path);
        floe_free(buf);
        if (referenced)
            continue;
        floe_table_metadata *m = NULL;
        floe_error e;
        floe_error_clear(&e);
        int rc = floe_table_metadata_read(floe_table_io(c->t), sl->s, &m, &e);
        if (rc == FLOE_ENOMEM) {
            *err = e;
            return rc;
        }
        if (rc < 0 && sl->tag == 0)
            continue;
        if (rc < 0)
            return floe_error_set(err, FLOE_EINVALID,
                                  "orphans: metadata file %s in the table's metadata folder "
                                  "cannot be read (%s), so whose table it is cannot be told; "
                                  "nothing was deleted. Move it out of %s if it is not %s's",
                                  sl->s, e.msg, floe_table_root(c->t),
                                  floe_table_name(c->t) ? floe_table_name(c->t)
                                                        : floe_table_root(c->t));
        bool same = m->table_uuid && tm->table_uuid
                        ? !strcasecmp(m->table_uuid, tm->table_uuid)
                        : !m->table_uuid && !tm->table_uuid &&
                              floe_io_uri_within(m->location, tm->location) &&
                              floe_io_uri_within(tm->location, m->location);
        if (!same)
            rc = floe_error_set(err, FLOE_EINVALID,
                                "orphans: metadata file %s in the table's metadata folder is "
                                "another table's (table-uuid %s, not %s): that table's files "
                                "lie in this table's location and would be deleted as orphans. "
                                "Nothing was deleted; move that table's files out first",
                                sl->s, m->table_uuid ? m->table_uuid : "none",
                                tm->table_uuid ? tm->table_uuid : "none");
        floe_table_metadata_free(m);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The folders this table's own metadata files are in: <root>/metadata, write.metadata.path
 * and the folder of the current file. */
static int own_metadata_dirs(floe_table *t, char *keys[3], floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    char *dirs[3] = {floe_io_join(floe_table_root(t), "metadata"), NULL, NULL};
    const char *mp = floe_table_metadata_property(m, "write.metadata.path");
    if (mp && *mp && floe_table_resolve_path(t, mp, &dirs[1], NULL) < 0)
        dirs[1] = NULL;
    const char *cur = floe_table_metadata_location(t);
    const char *slash = strrchr(cur, '/');
    dirs[2] = slash ? floe_strndup(cur, (size_t)(slash - cur)) : NULL;
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        if (dirs[i] && !(keys[i] = floe_io_uri_key(dirs[i])))
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(dirs[i]);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * the run
 * ------------------------------------------------------------------------------------- */

static bool valid_match(const orphan_ctx *c, const candidate *k) {
    const char *schemes[2] = {k->scheme, ""};
    const char *auths[2] = {k->authority, ""};
    char *full = NULL;
    bool found = false;
    for (int i = 0; i < 2 && !found; i++)
        for (int j = 0; j < 2 && !found; j++) {
            full = floe_asprintf("%s\x01%s\x01%s", schemes[i], auths[j], k->path);
            found = full && maint_pathset_has(&c->valid_full, full);
            floe_free(full);
        }
    return found;
}

int floe_maint_orphans(floe_table *t, const floe_orphan_options *opts, floe_orphan_result *res,
                       floe_error *err) {
    floe_orphan_options defaults;
    if (!opts) {
        floe_orphan_options_init(&defaults);
        opts = &defaults;
    }
    orphan_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.o = opts;
    c.err = err;
    floe_arena_init(&c.arena, 256 * 1024);
    maint_pathset_init(&c.valid_path);
    maint_pathset_init(&c.valid_full);
    maint_pathset_init(&c.manifests);
    maint_pathset_init(&c.snapshots);
    maint_pathset_init(&c.vanished);
    maint_pathset_init(&c.own_md_files);
    maint_delete_list del = {0};
    char *root_key = NULL, *loc_key = NULL;
    floe_buf msg;
    floe_buf_init(&msg, 4096);
    int rc = 0;
    int64_t now = opts->now_ms > 0 ? opts->now_ms : floe_wall_ms();
    c.cutoff = opts->older_than_ms >= 0 ? opts->older_than_ms : now - DEFAULT_ORPHAN_AGE_MS;

    /* gc.enabled=false: the table's files may be another table's too (also a dry run is
     * refused: it would list them as deletable) */
    FLOE_CHECK(floe_table_gc_check(t, NULL, "delete orphan files", err));
    /* the location must lie inside the table: listing a warehouse would make every other
     * table's files orphans of this one */
    const char *root = floe_table_root(t);
    const char *loc = opts->location ? opts->location : root;
    root_key = maint_path_key(root);
    loc_key = maint_path_key(loc);
    if (!root_key || !loc_key)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t rl = strlen(root_key);
    while (rl > 1 && root_key[rl - 1] == '/')
        root_key[--rl] = '\0';
    size_t ll = strlen(loc_key);
    while (ll > 1 && loc_key[ll - 1] == '/')
        loc_key[--ll] = '\0';
    if (strncmp(loc_key, root_key, rl) || (loc_key[rl] != '\0' && loc_key[rl] != '/'))
        FLOE_FAIL(err, FLOE_EINVALID, "orphans: %s is not inside the table location %s", loc,
                  root);
    /* the prefix to strip for the hidden-folder test is the table root: files under
     * <root>/_landing stay hidden even when a sub-location is listed */
    char *rb = floe_malloc(rl + 8);
    floe_uri_parts rp;
    if (!rb || !floe_maint_uri_split(root_key, rb, rl + 8, &rp)) {
        floe_free(rb);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    c.root_path = floe_arena_strdup(&c.arena, rp.path);
    floe_free(rb);
    if (!c.root_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    c.root_len = strlen(c.root_path);

    /* nothing another table, floe serve or the catalog keeps may lie in what is listed */
    FLOE_CHECK(check_nothing_else_under(t, loc, err));
    FLOE_CHECK(own_metadata_dirs(t, c.own_md, err));

    /* 1. list */
    FLOE_CHECK(floe_io_list(floe_table_io(t), loc, on_listed, &c, err));
    FLOE_CHECK(c.rc);
    if (c.foreign)
        FLOE_FAIL(err, FLOE_EINVALID,
                  "orphans: %s lies in %s but is not %s's: another table (or a catalog) keeps "
                  "files inside this table's location, and they would be deleted as orphans. "
                  "Nothing was deleted; move that table out first",
                  c.foreign, loc, floe_table_name(t) ? floe_table_name(t) : floe_table_root(t));
    /* 2. references; 3. again after a refresh */
    c.tolerate_missing = floe_table_catalog(t) != NULL;
    FLOE_CHECK(add_metadata_refs(&c, t, err));
    c.tolerate_missing = false;
    char *before = floe_strdup(floe_table_metadata_location(t));
    if (!before)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (floe_table_catalog(t)) {
        rc = floe_table_refresh(t, err);
        if (rc == 0 && (c.vanished.live || strcmp(before, floe_table_metadata_location(t))))
            rc = add_metadata_refs(&c, t, err);
        if (rc == 0) /* gc.enabled=false committed while listing */
            rc = floe_table_gc_check(t, NULL, "delete orphan files", err);
    }
    floe_free(before);
    if (rc < 0)
        goto done;
    c.r.references = (int64_t)c.valid_path.live;
    FLOE_CHECK(check_own_md_files(&c, err));

    /* 4. decide */
    size_t reported = 0, max_report = opts->max_conflicts_reported ? opts->max_conflicts_reported
                                                                   : 10;
    for (size_t i = 0; i < c.ncands; i++) {
        const candidate *k = &c.cands[i];
        bool orphan;
        if (!maint_pathset_has(&c.valid_path, k->path)) {
            orphan = true;
        } else if (valid_match(&c, k)) {
            orphan = false;
        } else {
            c.r.conflicts++;
            if (reported++ < max_report)
                floe_buf_printf(&msg, "%s%s", reported > 1 ? ", " : "", k->uri);
            orphan = opts->prefix_mismatch == FLOE_PREFIX_MISMATCH_DELETE;
        }
        if (!orphan) {
            c.r.referenced++;
            continue;
        }
        c.r.orphans++;
        c.r.orphan_bytes += k->size;
        FLOE_CHECK(maint_delete_list_push(&del, k->uri, FLOE_MAINT_OTHER, err));
    }
    if (c.r.conflicts && opts->prefix_mismatch == FLOE_PREFIX_MISMATCH_ERROR)
        FLOE_FAIL(err, FLOE_ECONFLICT,
                  "orphans: %" PRId64 " listed file(s) match a referenced path but not its "
                  "scheme or authority (%.*s%s); nothing was deleted. Check the table location "
                  "and storage configuration, or pass --prefix-mismatch ignore|delete",
                  c.r.conflicts, (int)msg.len, msg.data ? (const char *)msg.data : "",
                  c.r.conflicts > (int64_t)max_report ? ", ..." : "");
    /* the listing stays inside the table; the confinement of every deleter still has
     * the last word (floe/table.h, "Confinement") */
    FLOE_CHECK(maint_delete_lists_confine(t, &del, 1, "orphans", &c.r.kept_outside, err));
    c.r.orphans -= c.r.kept_outside;
    if (opts->on_file)
        for (size_t i = 0; i < del.n; i++)
            opts->on_file(opts->on_file_ctx, FLOE_MAINT_OTHER, del.uris[i]);
    if (!opts->dry_run && del.n) {
        int64_t deleted[FLOE_MAINT_NKINDS] = {0};
        maint_delete_run(floe_table_io(t), &del, opts->threads, deleted, &c.r.delete_failures);
        c.r.orphans = deleted[FLOE_MAINT_OTHER];
    }
done:
    if (rc == 0 && res)
        *res = c.r;
    maint_delete_list_free(&del);
    floe_buf_free(&msg);
    floe_free(root_key);
    floe_free(loc_key);
    floe_free(c.cands);
    floe_arena_reset(&c.arena);
    maint_pathset_free(&c.valid_path);
    maint_pathset_free(&c.valid_full);
    maint_pathset_free(&c.manifests);
    maint_pathset_free(&c.snapshots);
    maint_pathset_free(&c.vanished);
    maint_pathset_free(&c.own_md_files);
    for (int i = 0; i < 3; i++)
        floe_free(c.own_md[i]);
    floe_free(c.foreign);
    return rc;
}
