/*
 * rewrite_manifests.c - regroup a snapshot's data manifests by partition (Iceberg's
 * RewriteManifests): live entries of the chosen spec's data manifests are sorted by
 * partition tuple and cut into manifests of about the target size; the commit is a
 * "replace" snapshot that swaps the old manifests for the new ones.
 *
 * Spec: format/spec.md "Manifests" (EXISTING entries carry their snapshot id and both
 * sequence numbers explicitly), "Manifest Lists", "Snapshots" (operation replace: "data
 * and delete files were added and removed without changing table data").
 *
 *   plan (read, sort, write new manifests) ──commit──> committed
 *     ^                                         │ apply on a fresh base: when every
 *     │                                         │ replaced manifest is still in the head's
 *     │                                         │ list, new list = head's list - replaced
 *     │                                         │ + created (others' work is kept)
 *     └──────── stale (apply stops the commit ──┘
 *               with FLOE_ECANCELLED: some replaced manifest is gone, a concurrent
 *               rewrite or delete): drop our manifests, refresh, plan again
 *               (at most MAX_REPLANS times)
 *
 * Files: the manifest lists of attempts that did not commit are deleted after the commit;
 * after a definite failure every manifest and list written is deleted; after
 * FLOE_EUNKNOWN_STATE nothing is. The replaced manifests stay: older snapshots still
 * reach them (expiry removes them later).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/io.h"
#include "floe/schema.h"
#include "maint_internal.h"
#include "table/commit_files.h"

#define DEFAULT_MANIFEST_TARGET (8LL << 20)
#define MAX_REPLANS 3

void floe_rewrite_manifests_options_init(floe_rewrite_manifests_options *o) {
    memset(o, 0, sizeof *o);
    o->spec_id = -1;
}

typedef struct rw_entry {
    floe_manifest_entry e;
    size_t order;
} rw_entry;

typedef struct rw_plan {
    floe_arena arena;
    int64_t source_id;
    floe_manifest_file *replaced;
    size_t nreplaced;
    floe_manifest_file *kept;       /* kept manifests of the source list */
    size_t nkept;
    floe_manifest_file *created;
    size_t ncreated;
    char **created_uris;            /* where they were written (to remove on failure) */
    int64_t entries;
    int64_t manifests_before;
    char *md_dir;                   /* recorded metadata folder */
    char commit_uuid[37];
} rw_plan;

typedef struct rw_ctx {
    floe_table *t;
    rw_plan *plan;
    floe_arena attempt_arena;
    char **lists;                   /* list uris written, one per attempt */
    size_t nlists;
    int64_t committed_id;
    size_t committed_list;          /* index into lists */
    int64_t manifests_after;
    int attempts;
    bool stale;
} rw_ctx;

static void plan_free(rw_plan *p) {
    for (size_t i = 0; i < p->ncreated; i++)
        floe_free(p->created_uris ? p->created_uris[i] : NULL);
    floe_free(p->created_uris);
    floe_free(p->md_dir);
    floe_arena_reset(&p->arena);
    memset(p, 0, sizeof *p);
}

/* The files the run wrote and the table will not reference are deleted where the table's
 * confinement holds them (its write.metadata.path chose where they went). */
static void plan_remove_created(const floe_table *t, rw_plan *p) {
    if (p->created_uris)
        floe_commit_files_delete_at(t, (const char *const *)p->created_uris, p->ncreated,
                                    "rewrite-manifests");
}

/* ---------------------------------------------------------------------------------------
 * planning
 * ------------------------------------------------------------------------------------- */

typedef struct collect_ctx {
    floe_arena *arena;
    rw_entry *items;
    size_t n, cap;
} collect_ctx;

static int collect_entry(void *vctx, const floe_manifest_entry *e, floe_error *err) {
    collect_ctx *c = vctx;
    if (e->status == FLOE_ENTRY_DELETED)
        return 0;
    if (!e->has_snapshot_id || !e->has_sequence_number || !e->has_file_sequence_number)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: entry without snapshot id or sequence numbers after "
                              "inheritance", e->file.file_path);
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 1024;
        rw_entry *ni = floe_realloc(c->items, nc * sizeof *ni);
        if (!ni)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        c->items = ni;
        c->cap = nc;
    }
    rw_entry *r = &c->items[c->n];
    r->e = *e;
    r->e.status = FLOE_ENTRY_EXISTING;
    r->order = c->n;
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(&e->file, c->arena, &r->e.file, err));
    c->n++;
    return 0;
}

static int cmp_entry(const void *pa, const void *pb) {
    const rw_entry *a = pa, *b = pb;
    size_t n = a->e.file.npartition < b->e.file.npartition ? a->e.file.npartition
                                                           : b->e.file.npartition;
    for (size_t i = 0; i < n; i++) {
        int c = floe_value_compare(&a->e.file.partition[i], &b->e.file.partition[i]);
        if (c)
            return c;
    }
    return a->order < b->order ? -1 : a->order > b->order;
}

static int make_plan(floe_table *t, const floe_rewrite_manifests_options *o, rw_plan *p,
                     bool *noop, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    collect_ctx cc = {0};
    char *list_uri = NULL;
    int rc = 0;
    *noop = false;
    memset(p, 0, sizeof *p);
    floe_arena_init(&p->arena, 64 * 1024);
    cc.arena = &p->arena;

    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    if (!cur) {
        *noop = true;
        goto done;
    }
    if (!cur->manifest_list)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                  "snapshot %" PRId64 " has no manifest list (format v1): not rewritten",
                  cur->snapshot_id);
    p->source_id = cur->snapshot_id;
    int32_t spec_id = o->spec_id >= 0 ? o->spec_id : m->default_spec_id;
    if (!floe_table_metadata_spec(m, spec_id))
        FLOE_FAIL(err, FLOE_EINVALID, "the table has no partition spec %d", (int)spec_id);
    /* the schema the spec resolves in is the one the new manifests' headers record */
    FLOE_CHECK(floe_table_metadata_bind_spec(m, spec_id, &schema, &spec, err));

    /* the source list: what to replace, what to keep */
    FLOE_CHECK(floe_table_resolve_path(t, cur->manifest_list, &list_uri, err));
    floe_manifest_list_read_options lo = {.allow_missing_field_ids = true,
                                          .has_snapshot_id = true,
                                          .snapshot_id = cur->snapshot_id};
    floe_manifest_list ml;
    FLOE_CHECK(floe_manifest_list_read(floe_table_io(t), list_uri, &lo, &p->arena, &ml, err));
    p->manifests_before = (int64_t)ml.nfiles;
    p->replaced = floe_arena_alloc(&p->arena, (ml.nfiles + 1) * sizeof *p->replaced);
    p->kept = floe_arena_alloc(&p->arena, (ml.nfiles + 1) * sizeof *p->kept);
    if (!p->replaced || !p->kept)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    int64_t bytes = 0, entries_read = 0;
    for (size_t i = 0; i < ml.nfiles; i++) {
        const floe_manifest_file *mf = &ml.files[i];
        if (mf->content != FLOE_MANIFEST_DATA || mf->partition_spec_id != spec_id) {
            p->kept[p->nkept++] = *mf;
            continue;
        }
        p->replaced[p->nreplaced++] = *mf;
        char *uri = NULL;
        FLOE_CHECK(floe_table_resolve_path(t, mf->manifest_path, &uri, err));
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options ro = {.manifest = mf, .spec = spec,
                                         .allow_missing_field_ids = true};
        rc = floe_manifest_reader_open(floe_table_io(t), uri, &ro, &r, err);
        floe_free(uri);
        if (rc < 0)
            goto done;
        for (;;) {
            const floe_manifest_entry *e = NULL;
            rc = floe_manifest_reader_next(r, &e, err);
            if (rc <= 0)
                break;
            entries_read++;
            if ((rc = collect_entry(&cc, e, err)) < 0)
                break;
        }
        bytes += floe_manifest_reader_info(r)->file_length;
        floe_manifest_reader_close(r);
        if (rc < 0)
            goto done;
    }
    if (p->nreplaced == 0) {
        *noop = true;
        goto done;
    }
    p->entries = (int64_t)cc.n;
    /* no live entry at all (manifests holding only DELETED ones): cc.items is NULL, which
     * qsort must not be given even with a count of 0 */
    if (cc.n > 1)
        qsort(cc.items, cc.n, sizeof *cc.items, cmp_entry);

    int64_t target = o->target_size_bytes > 0
                         ? o->target_size_bytes
                         : floe_table_metadata_property_int(m, "commit.manifest.target-size-bytes",
                                                            DEFAULT_MANIFEST_TARGET);
    if (target <= 0)
        target = DEFAULT_MANIFEST_TARGET;
    int64_t per_entry = entries_read ? bytes / entries_read : 1;
    if (per_entry < 1)
        per_entry = 1;
    int64_t per_manifest = target / per_entry;
    if (per_manifest < 1)
        per_manifest = 1;
    size_t nout = cc.n ? (size_t)((cc.n + (size_t)per_manifest - 1) / (size_t)per_manifest) : 0;
    p->created = floe_arena_alloc(&p->arena, (nout + 1) * sizeof *p->created);
    p->created_uris = floe_calloc(nout + 1, sizeof *p->created_uris);
    if (!p->created || !p->created_uris)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_metadata_write_dir(t, &p->md_dir, err));
    floe_uuid4(p->commit_uuid);
    if (o->dry_run) {
        p->ncreated = nout; /* planned, not written */
        goto done;
    }

    floe_manifest_write_options wo;
    floe_manifest_write_options_init(&wo);
    wo.content = FLOE_MANIFEST_DATA;
    wo.format_version = m->format_version; /* a table keeps its format */
    wo.schema = schema;
    wo.spec = spec;
    FLOE_CHECK(floe_manifest_codec_from_props(m->properties, m->n_properties, &wo.codec,
                                              &wo.level, err));
    floe_output_options oo = {.fsync = true};
    for (size_t k = 0; k < nout; k++) {
        char *recorded = floe_manifest_path_new(p->md_dir, p->commit_uuid, (int)k);
        if (!recorded)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        char *uri = NULL;
        rc = floe_table_resolve_path(t, recorded, &uri, err);
        floe_manifest_writer *w = NULL;
        if (rc == 0)
            rc = floe_manifest_writer_open(floe_table_io(t), uri, &wo, &w, err);
        size_t from = k * (size_t)per_manifest;
        size_t to = from + (size_t)per_manifest < cc.n ? from + (size_t)per_manifest : cc.n;
        for (size_t i = from; rc == 0 && i < to; i++)
            rc = floe_manifest_writer_existing(w, &cc.items[i].e, err);
        floe_manifest_file *mf = &p->created[p->ncreated];
        if (rc == 0) {
            rc = floe_manifest_writer_close(w, &oo, &p->arena, mf, err);
            w = NULL;
        }
        floe_manifest_writer_abort(w);
        if (rc == 0) {
            mf->manifest_path = floe_arena_strdup(&p->arena, recorded);
            p->created_uris[p->ncreated++] = uri;
            uri = NULL;
            if (!mf->manifest_path)
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
        floe_free(uri);
        floe_free(recorded);
        if (rc < 0)
            goto done;
    }
done:
    if (rc < 0)
        plan_remove_created(t, p);
    floe_free(cc.items);
    floe_free(list_uri);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * commit
 * ------------------------------------------------------------------------------------- */

static int rw_apply(void *vctx, floe_metadata_builder *b, floe_error *err) {
    rw_ctx *c = vctx;
    rw_plan *p = c->plan;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    const floe_snapshot *head = floe_table_metadata_current_snapshot(base);
    floe_arena_reset(&c->attempt_arena);
    floe_arena_init(&c->attempt_arena, 16 * 1024);
    c->attempts++;
    int rc = 0;
    char *list_uri = NULL, *list_rec = NULL;
    if (!head) {
        c->stale = true;
        return floe_error_set(err, FLOE_ECANCELLED, "the table has no current snapshot anymore");
    }

    const floe_manifest_file *kept = p->kept;
    size_t nkept = p->nkept;
    if (head->snapshot_id != p->source_id) {
        /* validate against the new head: all replaced manifests must still be there */
        if (!head->manifest_list) {
            c->stale = true;
            return floe_error_set(err, FLOE_ECANCELLED, "new head has no manifest list");
        }
        FLOE_CHECK(floe_table_resolve_path(c->t, head->manifest_list, &list_uri, err));
        floe_manifest_list_read_options lo = {.allow_missing_field_ids = true,
                                              .has_snapshot_id = true,
                                              .snapshot_id = head->snapshot_id};
        floe_manifest_list ml;
        FLOE_CHECK(floe_manifest_list_read(floe_table_io(c->t), list_uri, &lo, &c->attempt_arena, &ml, err));
        floe_free(list_uri);
        list_uri = NULL;
        size_t found = 0;
        floe_manifest_file *k = floe_arena_alloc(&c->attempt_arena,
                                                 (ml.nfiles + 1) * sizeof *k);
        if (!k)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        nkept = 0;
        for (size_t i = 0; i < ml.nfiles; i++) {
            bool replaced = false;
            for (size_t j = 0; j < p->nreplaced && !replaced; j++)
                replaced = !strcmp(ml.files[i].manifest_path, p->replaced[j].manifest_path);
            if (replaced)
                found++;
            else
                k[nkept++] = ml.files[i];
        }
        if (found != p->nreplaced) {
            c->stale = true;
            FLOE_FAIL(err, FLOE_ECANCELLED,
                      "a manifest this rewrite replaces is gone from snapshot %" PRId64,
                      head->snapshot_id);
        }
        kept = k;
    }
    size_t n = nkept + p->ncreated;
    floe_manifest_file *all = floe_arena_alloc(&c->attempt_arena, (n + 1) * sizeof *all);
    if (!all)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* new manifests first, as writers put the snapshot's own manifests first */
    memcpy(all, p->created, p->ncreated * sizeof *all);
    memcpy(all + p->ncreated, kept, nkept * sizeof *all);

    int64_t snap_id = floe_metadata_new_snapshot_id();
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    list_rec = floe_manifest_list_path_new(p->md_dir, snap_id, c->attempts, p->commit_uuid);
    if (!list_rec)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_resolve_path(c->t, list_rec, &list_uri, err));
    floe_manifest_list_write_options lw;
    floe_manifest_list_write_options_init(&lw);
    lw.snapshot_id = snap_id;
    lw.has_parent = true;
    lw.parent_snapshot_id = head->snapshot_id;
    lw.sequence_number = seq;
    lw.format_version = floe_metadata_builder_format_version(b);
    /* v3: the new manifests get row ids for entries without one (their entries keep the
     * first_row_id they had); the kept manifests keep theirs */
    int64_t first_row_id = floe_metadata_builder_next_row_id(b), added_rows = 0;
    if (first_row_id >= 0)
        FLOE_CHECK(floe_manifest_list_assign_row_ids(all, n, first_row_id, &added_rows, err));
    floe_codec codec;
    int level;
    FLOE_CHECK(floe_manifest_codec_from_props(base->properties, base->n_properties, &codec,
                                              &level, err));
    lw.codec = codec;
    lw.level = level;
    floe_output_options oo = {.fsync = true};
    FLOE_CHECK(floe_manifest_list_write(floe_table_io(c->t), list_uri, &lw, all, n, &oo, NULL, err));
    char **nl = floe_realloc(c->lists, (c->nlists + 1) * sizeof *nl);
    if (!nl) {
        floe_commit_files_delete_at(c->t, (const char *const *)&list_uri, 1,
                                    "rewrite-manifests");
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    c->lists = nl;
    c->lists[c->nlists++] = list_uri;
    list_uri = NULL;

    /* the live files do not change: the head's totals, or the sums over its manifests */
    floe_snapshot_totals none, tot;
    memset(&none, 0, sizeof none);
    FLOE_CHECK(floe_table_next_totals(c->t, head, all, n, &none, &tot, err));
    char vals[10][32];
    snprintf(vals[0], sizeof vals[0], "%zu", p->ncreated);
    snprintf(vals[1], sizeof vals[1], "%zu", p->nreplaced);
    snprintf(vals[2], sizeof vals[2], "%zu", nkept);
    snprintf(vals[3], sizeof vals[3], "%" PRId64, p->entries);
    floe_kv summary[12];
    size_t ns = 0;
    summary[ns++] = (floe_kv){"manifests-created", vals[0]};
    summary[ns++] = (floe_kv){"manifests-replaced", vals[1]};
    summary[ns++] = (floe_kv){"manifests-kept", vals[2]};
    summary[ns++] = (floe_kv){"entries-processed", vals[3]};
    for (int k = 0; k < 6; k++) {
        snprintf(vals[4 + k], sizeof vals[4 + k], "%" PRId64, floe_snapshot_total(&tot, k));
        summary[ns++] = (floe_kv){floe_snapshot_total_keys[k], vals[4 + k]};
    }
    floe_snapshot_new sn = {.snapshot_id = snap_id,
                            .operation = "replace",
                            .manifest_list = list_rec,
                            .summary = summary,
                            .n_summary = ns,
                            .schema_id = -1,
                            .row_lineage = first_row_id >= 0,
                            .first_row_id = first_row_id,
                            .added_rows = added_rows};
    FLOE_CHECK(floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err));
    c->committed_id = snap_id;
    c->committed_list = c->nlists - 1;
    c->manifests_after = (int64_t)n;
done:
    floe_free(list_uri);
    floe_free(list_rec);
    return rc;
}

int floe_maint_rewrite_manifests(floe_table *t, const floe_rewrite_manifests_options *opts,
                                 floe_rewrite_manifests_result *res, floe_error *err) {
    floe_rewrite_manifests_options defaults;
    if (!opts) {
        floe_rewrite_manifests_options_init(&defaults);
        opts = &defaults;
    }
    floe_rewrite_manifests_result r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    /* a table whose recorded paths wait for their migration gets it first: the plan
     * names manifests by the paths the commit will find */
    if (!opts->dry_run)
        FLOE_FORWARD_IF_ERROR(floe_table_migrate(t, err));
    for (int round = 0;; round++) {
        rw_plan plan;
        bool noop = false;
        rc = make_plan(t, opts, &plan, &noop, err);
        if (rc < 0 && round < MAX_REPLANS && floe_table_base_gone(t, rc)) {
            /* the snapshot planned on was expired under us: plan on the new one */
            floe_log(FLOE_LOG_INFO, "rewrite-manifests: %s; the table moved on, planning "
                     "again", err ? err->msg : "");
            plan_free(&plan);
            floe_error_clear(err);
            r.recomputed++;
            FLOE_FORWARD_IF_ERROR(floe_table_refresh(t, err));
            continue;
        }
        if (rc < 0 || noop || opts->dry_run) {
            r.noop = noop;
            if (rc == 0 && !noop) {
                r.manifests_before = plan.manifests_before;
                r.manifests_created = (int64_t)plan.ncreated;
                r.manifests_replaced = (int64_t)plan.nreplaced;
                r.manifests_kept = (int64_t)plan.nkept;
                r.entries_processed = plan.entries;
                r.manifests_after = (int64_t)(plan.nkept + plan.ncreated);
            }
            plan_free(&plan);
            break;
        }
        rw_ctx c;
        memset(&c, 0, sizeof c);
        c.t = t;
        c.plan = &plan;
        floe_arena_init(&c.attempt_arena, 16 * 1024);
        rc = floe_table_commit(t, rw_apply, &c, err);
        r.attempts += c.attempts;
        if (rc == FLOE_EUNKNOWN_STATE) {
            /* keep every file: the snapshot may be in the table (I3) */
        } else if (rc == 0) {
            if (c.committed_list < c.nlists) { /* in the table now */
                floe_free(c.lists[c.committed_list]);
                c.lists[c.committed_list] = NULL;
            }
            floe_commit_files_delete_at(t, (const char *const *)c.lists, c.nlists,
                                        "rewrite-manifests");
            r.snapshot_id = c.committed_id;
            r.manifests_before = plan.manifests_before;
            r.manifests_created = (int64_t)plan.ncreated;
            r.manifests_replaced = (int64_t)plan.nreplaced;
            r.manifests_kept = c.manifests_after - (int64_t)plan.ncreated;
            r.entries_processed = plan.entries;
            r.manifests_after = c.manifests_after;
        } else {
            floe_commit_files_delete_at(t, (const char *const *)c.lists, c.nlists,
                                        "rewrite-manifests");
            plan_remove_created(t, &plan);
        }
        for (size_t i = 0; i < c.nlists; i++)
            floe_free(c.lists[i]);
        floe_free(c.lists);
        floe_arena_reset(&c.attempt_arena);
        plan_free(&plan);
        if (rc < 0 && c.stale && round < MAX_REPLANS) {
            floe_log(FLOE_LOG_INFO, "rewrite-manifests: %s; planning again", err ? err->msg : "");
            floe_error_clear(err);
            r.recomputed++;
            FLOE_FORWARD_IF_ERROR(floe_table_refresh(t, err));
            continue;
        }
        break;
    }
    if (rc == 0 && res)
        *res = r;
    return rc;
}
