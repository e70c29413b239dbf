/*
 * expire.c - snapshot expiry: retention per format/spec.md "Snapshot Retention Policy"
 * with the semantics of Iceberg Java's RemoveSnapshots, then file cleanup by
 * reachability difference (maint.h S1-S3).
 *
 * Steps:
 *   1. plan (inside the commit's apply, on the metadata each attempt starts from): which
 *      refs go, which snapshots are kept (ref heads, branch retention, young unreferenced
 *      snapshots), which are removed (the rest, plus explicit ids).
 *   2. commit: remove the refs and snapshots (floe_table_commit; the snapshot-log and the
 *      statistics entries go with them). Nothing is deleted unless this succeeds.
 *   3. re-read the table, so commits that landed after ours count as retained.
 *   4. files = reach(expired) - reach(retained):
 *        lists      expired snapshots' manifest lists
 *        manifests  manifests of expired lists - manifests of retained lists
 *        files      every entry of those manifests
 *        stats      statistics of expired snapshots
 *        metadata   *.metadata.json older than every file the metadata-log keeps, when
 *                   write.metadata.delete-after-commit.enabled
 *      minus one keep set across roles: a path the retained metadata reaches in any role
 *      (manifest list, manifest, statistics file, metadata file, live data or delete
 *      file) is never deleted in another - a commit may name one file twice (a
 *      statistics-path that is a manifest list or a data file). The live entries of
 *      retained manifests are read only when a candidate could be one: a data, delete,
 *      statistics or metadata file, a manifest, or a manifest list that did not read as
 *      one (a list that did is not a file the retained snapshots read as data).
 *      An unreadable retained list or manifest stops the cleanup (S3); an unreadable
 *      expired one only leaves its files to orphan removal.
 *   5. keep what lies outside the table's own folders (floe_table_confinement: another
 *      table's files, or any other, named by whoever committed), reported.
 *   6. delete on a thread pool: data and delete files, then manifests, lists, statistics,
 *      metadata files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "floe/io.h"
#include "maint_internal.h"

#define DEFAULT_MAX_SNAPSHOT_AGE_MS (5 * FLOE_MAINT_DAY_MS)
#define EXPIRE_ACTION "expire snapshots"

void floe_expire_options_init(floe_expire_options *o) {
    memset(o, 0, sizeof *o);
    o->older_than_ms = -1;
    o->retain_last = 0;
}

void floe_expire_result_reset(floe_expire_result *r) {
    if (!r)
        return;
    floe_free(r->expired_ids);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------
 * snapshot id -> index
 * ------------------------------------------------------------------------------------- */
typedef struct id_map {
    int64_t *ids;
    size_t *idx;
    size_t cap;
} id_map;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int id_map_build(id_map *m, const floe_table_metadata *md, floe_error *err) {
    size_t cap = 16;
    while (cap < md->n_snapshots * 2 + 2)
        cap *= 2;
    m->ids = floe_malloc(cap * sizeof *m->ids);
    m->idx = floe_malloc(cap * sizeof *m->idx);
    if (!m->ids || !m->idx)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    m->cap = cap;
    for (size_t i = 0; i < cap; i++)
        m->idx[i] = SIZE_MAX;
    for (size_t i = 0; i < md->n_snapshots; i++) {
        int64_t id = md->snapshots[i].snapshot_id;
        for (size_t h = mix64((uint64_t)id) & (cap - 1);; h = (h + 1) & (cap - 1)) {
            if (m->idx[h] == SIZE_MAX) {
                m->ids[h] = id;
                m->idx[h] = i;
                break;
            }
            if (m->ids[h] == id)
                break; /* duplicate id: the first wins */
        }
    }
    return 0;
}

static size_t id_map_get(const id_map *m, int64_t id) {
    for (size_t h = mix64((uint64_t)id) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
        if (m->idx[h] == SIZE_MAX)
            return SIZE_MAX;
        if (m->ids[h] == id)
            return m->idx[h];
    }
}

static void id_map_free(id_map *m) {
    floe_free(m->ids);
    floe_free(m->idx);
}

/* ---------------------------------------------------------------------------------------
 * the plan
 * ------------------------------------------------------------------------------------- */
enum { KEEP_NONE = 0, KEEP_YOUNG = 1, KEEP_BRANCH = 2, KEEP_REF = 3 };

typedef struct expire_plan {
    int64_t *remove_ids;
    size_t n_remove;
    const char **remove_refs; /* borrowed from the metadata planned on */
    size_t n_refs;
    size_t n_retained;
} expire_plan;

static void plan_reset(expire_plan *p) {
    floe_free(p->remove_ids);
    floe_free(p->remove_refs);
    memset(p, 0, sizeof *p);
}

static int make_plan(const floe_table_metadata *m, const floe_expire_options *o, int64_t now,
                     expire_plan *out, floe_error *err) {
    id_map map = {0};
    uint8_t *keep = NULL, *referenced = NULL;
    expire_plan p = {0};
    int rc = 0;
    const int64_t max_age =
        floe_table_metadata_property_int(m, FLOE_PROP_MAX_SNAPSHOT_AGE_MS,
                                         DEFAULT_MAX_SNAPSHOT_AGE_MS);
    const int64_t cutoff = o->older_than_ms >= 0 ? o->older_than_ms : now - max_age;
    int64_t min_keep = o->retain_last > 0
                           ? o->retain_last
                           : floe_table_metadata_property_int(m, FLOE_PROP_MIN_SNAPSHOTS_TO_KEEP, 1);
    if (min_keep < 1)
        min_keep = 1;
    const int64_t max_ref_age =
        floe_table_metadata_property_int(m, FLOE_PROP_MAX_REF_AGE_MS, INT64_MAX);

    FLOE_CHECK(id_map_build(&map, m, err));
    keep = floe_calloc(m->n_snapshots + 1, 1);
    referenced = floe_calloc(m->n_snapshots + 1, 1);
    p.remove_ids = floe_malloc((m->n_snapshots + 1) * sizeof *p.remove_ids);
    p.remove_refs = floe_malloc((m->n_refs + 1) * sizeof *p.remove_refs);
    if (!keep || !referenced || !p.remove_ids || !p.remove_refs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    for (size_t r = 0; r < m->n_refs; r++) {
        const floe_snapshot_ref *ref = &m->refs[r];
        size_t head = id_map_get(&map, ref->snapshot_id);
        bool is_main = !strcmp(ref->name, "main");
        if (!is_main) {
            int64_t ref_max = ref->max_ref_age_ms >= 0 ? ref->max_ref_age_ms : max_ref_age;
            bool gone = head == SIZE_MAX;
            bool too_old = !gone && now - m->snapshots[head].timestamp_ms > ref_max;
            if (gone || too_old) {
                p.remove_refs[p.n_refs++] = ref->name;
                continue;
            }
        }
        if (head == SIZE_MAX)
            continue; /* main naming a missing snapshot: nothing to keep from it */
        keep[head] = KEEP_REF;
        if (ref->is_tag) {
            referenced[head] = 1;
            continue;
        }
        /* branch retention: ancestors while fewer than min are kept or they are young */
        int64_t b_cutoff = ref->max_snapshot_age_ms >= 0 ? now - ref->max_snapshot_age_ms
                                                         : cutoff;
        int64_t b_min = ref->min_snapshots_to_keep >= 1 ? ref->min_snapshots_to_keep
                                                        : min_keep;
        int64_t kept = 0;
        size_t cur = head;
        bool retaining = true;
        size_t steps = 0;
        while (cur != SIZE_MAX && steps++ <= m->n_snapshots) {
            const floe_snapshot *s = &m->snapshots[cur];
            if (retaining && (kept < b_min || s->timestamp_ms >= b_cutoff)) {
                if (keep[cur] < KEEP_BRANCH)
                    keep[cur] = KEEP_BRANCH;
                kept++;
            } else {
                retaining = false;
                if (referenced[cur] == 2)
                    break; /* this chain was walked to its root by another branch */
            }
            referenced[cur] = 2;
            cur = s->has_parent ? id_map_get(&map, s->parent_snapshot_id) : SIZE_MAX;
        }
    }
    /* snapshots no kept ref reaches: kept while younger than the default cutoff */
    for (size_t i = 0; i < m->n_snapshots; i++)
        if (!referenced[i] && !keep[i] && m->snapshots[i].timestamp_ms >= cutoff)
            keep[i] = KEEP_YOUNG;
    for (size_t k = 0; k < o->n_snapshot_ids; k++) {
        size_t i = id_map_get(&map, o->snapshot_ids[k]);
        if (i == SIZE_MAX) {
            floe_log(FLOE_LOG_WARN, "expire: snapshot %" PRId64 " does not exist",
                     o->snapshot_ids[k]);
            continue;
        }
        if (keep[i] >= KEEP_BRANCH)
            FLOE_FAIL(err, FLOE_EINVALID,
                      "snapshot %" PRId64 " cannot be expired: %s", o->snapshot_ids[k],
                      keep[i] == KEEP_REF ? "a branch or tag points at it"
                                          : "its branch's retention policy keeps it");
        keep[i] = KEEP_NONE;
    }
    for (size_t i = 0; i < m->n_snapshots; i++) {
        if (keep[i])
            p.n_retained++;
        else
            p.remove_ids[p.n_remove++] = m->snapshots[i].snapshot_id;
    }
    *out = p;
    memset(&p, 0, sizeof p);
done:
    plan_reset(&p);
    floe_free(keep);
    floe_free(referenced);
    id_map_free(&map);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * the commit
 * ------------------------------------------------------------------------------------- */
typedef struct expire_ctx {
    const floe_table *t;
    const floe_expire_options *o;
    int64_t now;
    expire_plan plan;
    floe_table_metadata *base; /* clone of the metadata the committed attempt planned on */
    int attempts;
} expire_ctx;

static int expire_apply(void *vctx, floe_metadata_builder *b, floe_error *err) {
    expire_ctx *c = vctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    c->attempts++;
    plan_reset(&c->plan);
    floe_table_metadata_free(c->base);
    c->base = NULL;
    /* judged on each attempt's base: a gc.enabled=false committed meanwhile stops it */
    FLOE_FORWARD_IF_ERROR(floe_table_gc_check(c->t, base, EXPIRE_ACTION, err));
    FLOE_FORWARD_IF_ERROR(make_plan(base, c->o, c->now, &c->plan, err));
    if (c->plan.n_remove == 0 && c->plan.n_refs == 0)
        return FLOE_COMMIT_NOOP;
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_clone(base, &c->base, err));
    /* (the ref names in the plan point into base: used only within this call) */
    for (size_t i = 0; i < c->plan.n_refs; i++)
        FLOE_FORWARD_IF_ERROR(floe_metadata_builder_remove_ref(b, c->plan.remove_refs[i], err));
    return floe_metadata_builder_remove_snapshots(b, c->plan.remove_ids, c->plan.n_remove, err);
}

/* ---------------------------------------------------------------------------------------
 * cleanup
 * ------------------------------------------------------------------------------------- */
typedef struct cleanup {
    const floe_table *t;
    maint_pathset lists;      /* expired manifest lists */
    maint_pathset manifests;  /* manifests only expired snapshots reach (tag: kind) */
    maint_pathset retained;   /* manifests of retained snapshots */
    maint_pathset files;      /* data and delete file candidates (tag: kind) */
    maint_pathset stats;      /* statistics files of expired snapshots */
    maint_pathset old_md;     /* metadata files below the metadata-log's oldest */
    maint_pathset keep;       /* what the retained metadata reaches, any role but manifests
                               * (in retained) and live entries (read last, if need be) */
    int64_t lists_unread;     /* expired lists kept as candidates though unreadable */
    maint_pathset seen_ret;   /* recorded manifest paths already handled (lists repeat */
    maint_pathset seen_exp;   /* most manifests of their parent: resolve each once) */
    int64_t unreadable;
} cleanup;

static int add_key(maint_pathset *set, const floe_table *t, const char *recorded, uint8_t tag,
                   floe_error *err) {
    char *key = NULL;
    FLOE_FORWARD_IF_ERROR(maint_resolve(t, recorded, NULL, &key, err));
    bool ok = maint_pathset_add(set, key, tag, NULL) != NULL;
    floe_free(key);
    return ok ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

static int on_retained_manifest(void *ctx, const char *recorded, const floe_manifest_file *mf,
                                floe_error *err) {
    (void)mf;
    cleanup *c = ctx;
    bool added = false;
    if (!maint_pathset_add(&c->seen_ret, recorded, 0, &added))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return added ? add_key(&c->retained, c->t, recorded, FLOE_MAINT_MANIFEST, err) : 0;
}

static int on_expired_manifest(void *ctx, const char *recorded, const floe_manifest_file *mf,
                               floe_error *err) {
    (void)mf;
    cleanup *c = ctx;
    bool added = false;
    if (!maint_pathset_add(&c->seen_exp, recorded, 0, &added))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (!added)
        return 0;
    char *key = NULL;
    FLOE_FORWARD_IF_ERROR(maint_resolve(c->t, recorded, NULL, &key, err));
    int rc = 0;
    if (!maint_pathset_has(&c->retained, key) &&
        !maint_pathset_add(&c->manifests, key, FLOE_MAINT_MANIFEST, NULL))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(key);
    return rc;
}

static int on_candidate_entry(void *ctx, const floe_manifest_entry *e, floe_error *err) {
    cleanup *c = ctx;
    return add_key(&c->files, c->t, e->file.file_path,
                   (uint8_t)maint_kind_of_content(e->file.content), err);
}

/* Drop key from every candidate set: something retained reaches it. */
static void keep_key(cleanup *c, const char *key) {
    maint_pathset_remove(&c->lists, key);
    maint_pathset_remove(&c->manifests, key);
    maint_pathset_remove(&c->files, key);
    maint_pathset_remove(&c->stats, key);
    maint_pathset_remove(&c->old_md, key);
}

static void keep_set(cleanup *c, const maint_pathset *set) {
    for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i].s && !set->slots[i].dead)
            keep_key(c, set->slots[i].s);
}

static int on_retained_entry(void *ctx, const floe_manifest_entry *e, floe_error *err) {
    cleanup *c = ctx;
    if (e->status == FLOE_ENTRY_DELETED)
        return 0; /* not live in the retained snapshot */
    char *key = NULL;
    FLOE_FORWARD_IF_ERROR(maint_resolve(c->t, e->file.file_path, NULL, &key, err));
    keep_key(c, key);
    floe_free(key);
    return 0;
}

static void cleanup_free(cleanup *c) {
    maint_pathset_free(&c->lists);
    maint_pathset_free(&c->manifests);
    maint_pathset_free(&c->retained);
    maint_pathset_free(&c->files);
    maint_pathset_free(&c->stats);
    maint_pathset_free(&c->old_md);
    maint_pathset_free(&c->keep);
    maint_pathset_free(&c->seen_ret);
    maint_pathset_free(&c->seen_exp);
}

/* Metadata files below the oldest version the metadata-log keeps, into out. */
static int old_metadata_files(const floe_table *t, const floe_table_metadata *now_md,
                              const char *current_loc, maint_pathset *out, floe_error *err);

typedef struct md_list_ctx {
    const char *dir_key;
    size_t dir_len;
    int64_t min_version;
    const maint_pathset *keep;
    maint_pathset *out;
    int rc;
    floe_error *err;
} md_list_ctx;

static int on_metadata_listed(void *vctx, const floe_io_entry *e) {
    md_list_ctx *c = vctx;
    char *key = maint_path_key(e->uri);
    if (!key) {
        c->rc = floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        return 1;
    }
    const char *name = strrchr(key, '/');
    name = name ? name + 1 : key;
    int64_t v = 0;
    /* only direct children of the metadata folder, by name and version */
    bool direct = !strncmp(key, c->dir_key, c->dir_len) && key[c->dir_len] == '/' &&
                  !strchr(key + c->dir_len + 1, '/');
    if (direct && floe_metadata_file_version(name, &v) &&
        v < c->min_version && !maint_pathset_has(c->keep, key) &&
        !maint_pathset_add(c->out, key, FLOE_MAINT_METADATA, NULL)) {
        c->rc = floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    }
    floe_free(key);
    return c->rc < 0;
}

static int old_metadata_files(const floe_table *t, const floe_table_metadata *now_md,
                              const char *current_loc, maint_pathset *out, floe_error *err) {
    maint_pathset keep;
    maint_pathset_init(&keep);
    char *dir_recorded = NULL, *dir_key = NULL, *dir_uri = NULL;
    int rc = 0;
    int64_t min_version = INT64_MAX;
    for (size_t i = 0; i <= now_md->n_metadata_log; i++) {
        const char *f = i < now_md->n_metadata_log ? now_md->metadata_log[i].metadata_file
                                                   : current_loc;
        if (!f)
            continue;
        char *key = maint_path_key(f);
        if (!key || !maint_pathset_add(&keep, key, 0, NULL)) {
            floe_free(key);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        const char *name = strrchr(key, '/');
        int64_t v;
        if (floe_metadata_file_version(name ? name + 1 : key, &v) && v < min_version)
            min_version = v;
        floe_free(key);
    }
    if (min_version == INT64_MAX)
        goto done; /* no numbered files: nothing can be proven old */
    const char *mp = floe_table_metadata_property(now_md, "write.metadata.path");
    dir_recorded = mp ? floe_strdup(mp) : floe_io_join(now_md->location, "metadata");
    if (!dir_recorded)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(maint_resolve(t, dir_recorded, &dir_uri, &dir_key, err));
    size_t dl = strlen(dir_key);
    while (dl > 1 && dir_key[dl - 1] == '/')
        dir_key[--dl] = '\0';
    md_list_ctx lc = {dir_key, dl, min_version, &keep, out, 0, err};
    FLOE_CHECK(floe_io_list(floe_table_io(t), dir_uri, on_metadata_listed, &lc, err));
    rc = lc.rc;
done:
    floe_free(dir_recorded);
    floe_free(dir_key);
    floe_free(dir_uri);
    maint_pathset_free(&keep);
    return rc;
}

/* The metadata files the table keeps (the metadata-log and the current one) into keep,
 * as recorded and as resolved: a statistics file, or any other, may name one. */
static int keep_metadata_files(const floe_table *t, const floe_table_metadata *now_md,
                               const char *current_loc, maint_pathset *keep, floe_error *err) {
    for (size_t i = 0; i <= now_md->n_metadata_log; i++) {
        const char *f = i < now_md->n_metadata_log ? now_md->metadata_log[i].metadata_file
                                                   : current_loc;
        if (!f)
            continue;
        char *key = maint_path_key(f), *resolved = NULL;
        /* a recorded path resolution refuses (outside a path table's root) is kept as
         * recorded: nothing resolved from it can be a candidate either */
        floe_error ignored;
        int rc = maint_resolve(t, f, NULL, &resolved, &ignored);
        bool ok = rc != FLOE_ENOMEM && key &&
                  maint_pathset_add(keep, key, FLOE_MAINT_METADATA, NULL) &&
                  (!resolved || maint_pathset_add(keep, resolved, FLOE_MAINT_METADATA, NULL));
        floe_free(key);
        floe_free(resolved);
        if (!ok)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    return 0;
}

static void report(const floe_expire_options *o, const maint_delete_list *l) {
    if (!o->on_file)
        return;
    for (size_t i = 0; i < l->n; i++)
        o->on_file(o->on_file_ctx, (floe_maint_file_kind)l->kinds[i], l->uris[i]);
}

static int collect_set(const maint_pathset *set, maint_delete_list *l, floe_error *err) {
    for (size_t i = 0; i < set->cap; i++) {
        const maint_slot *s = &set->slots[i];
        if (s->s && !s->dead)
            FLOE_FORWARD_IF_ERROR(maint_delete_list_push(l, s->s, s->tag, err));
    }
    return 0;
}

/* reach(expired) - reach(retained) into phases[] (files, manifests, lists+stats+metadata) */
static int plan_cleanup(const floe_table *t, const floe_table_metadata *base,
                        const int64_t *expired_ids, size_t n_expired,
                        const floe_table_metadata *now_md, const char *now_loc,
                        maint_delete_list phases[3], int64_t *unreadable, floe_error *err) {
    cleanup c;
    memset(&c, 0, sizeof c);
    c.t = t;
    maint_pathset_init(&c.lists);
    maint_pathset_init(&c.manifests);
    maint_pathset_init(&c.retained);
    maint_pathset_init(&c.files);
    maint_pathset_init(&c.stats);
    maint_pathset_init(&c.old_md);
    maint_pathset_init(&c.keep);
    maint_pathset_init(&c.seen_ret);
    maint_pathset_init(&c.seen_exp);
    int rc = 0;
    id_map emap = {0};
    FLOE_CHECK(id_map_build(&emap, base, err));

    /* expired lists */
    for (size_t i = 0; i < n_expired; i++) {
        size_t k = id_map_get(&emap, expired_ids[i]);
        if (k != SIZE_MAX && base->snapshots[k].manifest_list)
            FLOE_CHECK(add_key(&c.lists, t, base->snapshots[k].manifest_list,
                               FLOE_MAINT_MANIFEST_LIST, err));
    }
    /* retained lists and their manifests: any failure stops the cleanup (S3) */
    for (size_t i = 0; i < now_md->n_snapshots; i++) {
        const floe_snapshot *s = &now_md->snapshots[i];
        if (s->manifest_list)
            FLOE_CHECK(add_key(&c.keep, t, s->manifest_list, FLOE_MAINT_MANIFEST_LIST, err));
        rc = maint_snapshot_manifests(t, s, on_retained_manifest, &c, err);
        if (rc < 0) {
            floe_error_prefix(err, "retained snapshot %" PRId64 ": ", s->snapshot_id);
            goto done;
        }
    }
    /* manifests only expired snapshots reach */
    for (size_t i = 0; i < n_expired; i++) {
        size_t k = id_map_get(&emap, expired_ids[i]);
        if (k == SIZE_MAX)
            continue;
        floe_error e;
        floe_error_clear(&e);
        if (maint_snapshot_manifests(t, &base->snapshots[k], on_expired_manifest, &c, &e) < 0) {
            c.unreadable++;
            floe_log(FLOE_LOG_WARN, "expire: snapshot %" PRId64 ": %s (its manifests are left "
                     "to orphan removal)", expired_ids[i], e.msg);
            /* a manifest list that is not there is not deleted (nor counted) */
            const char *list = base->snapshots[k].manifest_list;
            char *uri = NULL, *key = NULL;
            bool there = true;
            if (list && maint_resolve(t, list, &uri, &key, NULL) == 0 &&
                floe_io_exists(floe_table_io(t), uri, &there, NULL) == 0 && !there)
                maint_pathset_remove(&c.lists, key);
            else if (list)
                c.lists_unread++; /* may be a file in another role: read the entries */
            floe_free(uri);
            floe_free(key);
        }
    }
    /* their entries are the candidates */
    for (size_t i = 0; i < c.manifests.cap; i++) {
        maint_slot *s = &c.manifests.slots[i];
        if (!s->s || s->dead)
            continue;
        floe_error e;
        floe_error_clear(&e);
        if (maint_manifest_entries(t, s->s, NULL, on_candidate_entry, &c, &e) < 0) {
            c.unreadable++;
            floe_log(FLOE_LOG_WARN, "expire: %s (kept; its files are left to orphan removal)",
                     e.msg);
            s->dead = 1;
            c.manifests.live--;
        }
    }
    /* statistics and metadata files: candidates, and what the metadata keeps */
    FLOE_CHECK(maint_statistics_paths(t, base, expired_ids, n_expired, &c.stats, err));
    FLOE_CHECK(maint_statistics_paths(t, now_md, NULL, 0, &c.keep, err));
    FLOE_CHECK(keep_metadata_files(t, now_md, now_loc, &c.keep, err));
    if (floe_table_metadata_property_bool(now_md, FLOE_PROP_METADATA_DELETE_AFTER_COMMIT, false))
        FLOE_CHECK(old_metadata_files(t, now_md, now_loc, &c.old_md, err));

    /* minus what the retained metadata reaches, whatever the role */
    keep_set(&c, &c.retained);
    keep_set(&c, &c.keep);
    /* minus everything live in a retained manifest, when a candidate could be that */
    if (c.files.live || c.manifests.live || c.stats.live || c.old_md.live ||
        c.lists_unread) {
        for (size_t i = 0; i < c.retained.cap; i++) {
            const maint_slot *s = &c.retained.slots[i];
            if (!s->s || s->dead)
                continue;
            rc = maint_manifest_entries(t, s->s, NULL, on_retained_entry, &c, err);
            if (rc < 0) {
                floe_error_prefix(err, "retained manifest: ");
                goto done;
            }
        }
    }

    FLOE_CHECK(collect_set(&c.files, &phases[0], err));
    FLOE_CHECK(collect_set(&c.manifests, &phases[1], err));
    FLOE_CHECK(collect_set(&c.lists, &phases[2], err));
    FLOE_CHECK(collect_set(&c.stats, &phases[2], err));
    FLOE_CHECK(collect_set(&c.old_md, &phases[2], err));
    *unreadable += c.unreadable;
done:
    id_map_free(&emap);
    cleanup_free(&c);
    return rc;
}

int floe_maint_expire(floe_table *t, const floe_expire_options *opts, floe_expire_result *res,
                      floe_error *err) {
    floe_expire_options defaults;
    if (!opts) {
        floe_expire_options_init(&defaults);
        opts = &defaults;
    }
    expire_ctx c = {.t = t, .o = opts,
                    .now = opts->now_ms > 0 ? opts->now_ms : floe_wall_ms()};
    floe_expire_result r;
    memset(&r, 0, sizeof r);
    maint_delete_list phases[3];
    memset(phases, 0, sizeof phases);
    int rc = 0;
    const floe_table_metadata *planned_on;

    /* gc.enabled=false: no expiry at all, not even --keep-files or a dry run (Iceberg
     * Java's RemoveSnapshots refuses to be made on such a table) */
    FLOE_CHECK(floe_table_gc_check(t, NULL, EXPIRE_ACTION, err));
    if (opts->dry_run) {
        FLOE_CHECK(make_plan(floe_table_metadata_get(t), opts, c.now, &c.plan, err));
        planned_on = floe_table_metadata_get(t);
        c.attempts = 0;
    } else {
        /* the base the expired snapshots are read from must record the paths the table
         * records afterwards: a due migration of its paths is committed first */
        FLOE_CHECK(floe_table_migrate(t, err));
        rc = floe_table_commit(t, expire_apply, &c, err);
        r.attempts = c.attempts;
        if (rc < 0)
            goto done; /* S1: conflict or unknown state - nothing is deleted */
        if (!c.base) { /* nothing to expire */
            r.snapshots_retained = (int64_t)floe_table_metadata_get(t)->n_snapshots;
            goto done;
        }
        planned_on = c.base;
        /* S2: what retained snapshots reach is taken from the metadata as it is now */
        FLOE_CHECK(floe_table_refresh(t, err));
    }
    r.snapshots_expired = (int64_t)c.plan.n_remove;
    r.refs_removed = (int64_t)c.plan.n_refs;
    r.snapshots_retained = (int64_t)floe_table_metadata_get(t)->n_snapshots;
    if (opts->dry_run)
        r.snapshots_retained -= (int64_t)c.plan.n_remove;
    if (c.plan.n_remove) {
        r.expired_ids = floe_malloc(c.plan.n_remove * sizeof *r.expired_ids);
        if (!r.expired_ids)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        memcpy(r.expired_ids, c.plan.remove_ids, c.plan.n_remove * sizeof *r.expired_ids);
        r.n_expired_ids = c.plan.n_remove;
    }
    if (opts->keep_files || c.plan.n_remove == 0)
        goto done;

    if (opts->dry_run) {
        /* the retained side is the current metadata without the planned snapshots */
        floe_table_metadata *after = NULL;
        floe_metadata_builder *b = NULL;
        rc = floe_metadata_builder_new(planned_on, &b, err);
        for (size_t i = 0; rc == 0 && i < c.plan.n_refs; i++)
            rc = floe_metadata_builder_remove_ref(b, c.plan.remove_refs[i], err);
        if (rc == 0)
            rc = floe_metadata_builder_remove_snapshots(b, c.plan.remove_ids, c.plan.n_remove,
                                                        err);
        if (rc == 0)
            rc = floe_metadata_builder_finish(b, NULL, &after, err);
        floe_metadata_builder_free(b);
        if (rc == 0)
            rc = plan_cleanup(t, planned_on, c.plan.remove_ids, c.plan.n_remove, after,
                              floe_table_metadata_location(t), phases, &r.unreadable, err);
        floe_table_metadata_free(after);
        if (rc < 0)
            goto done;
    } else {
        FLOE_CHECK(plan_cleanup(t, planned_on, c.plan.remove_ids, c.plan.n_remove,
                                floe_table_metadata_get(t), floe_table_metadata_location(t),
                                phases, &r.unreadable, err));
    }
    /* what lies outside the table's own folders is not its to delete, whatever its
     * metadata names (floe/table.h, "Confinement") */
    FLOE_CHECK(maint_delete_lists_confine(t, phases, 3, "expire", &r.kept_outside, err));
    for (int p = 0; p < 3; p++) {
        report(opts, &phases[p]);
        if (opts->dry_run) {
            for (size_t i = 0; i < phases[p].n; i++)
                r.files[phases[p].kinds[i]]++;
        } else {
            maint_delete_run(floe_table_io(t), &phases[p], opts->threads, r.files, &r.delete_failures);
        }
    }
done:
    for (int p = 0; p < 3; p++)
        maint_delete_list_free(&phases[p]);
    plan_reset(&c.plan);
    floe_table_metadata_free(c.base);
    if (rc == 0 && res)
        *res = r;
    else
        floe_expire_result_reset(&r);
    return rc;
}
