/*
 * rewrite_commit.c - the "replace" snapshot of a rewrite: validation against the starting
 * snapshot, manifests re-derived from the fresh base on every attempt, dangling delete
 * removal, summary, and the Hadoop-style commit of tables opened by path.
 *
 * Spec: format/spec.md "Snapshots" (operation replace: "Data and delete files were added
 * and removed without changing table data"), "Manifests" (DELETED entries carry the
 * sequence numbers of the file they delete), "Sequence Number Inheritance" (an ADDED
 * entry may carry an explicit data sequence number: the starting snapshot's, so deletes
 * committed later still apply), "Scan Planning" (which deletes apply to a data file),
 * "Commit Conflict Resolution and Retry". Iceberg Java BaseRewriteFiles.validate:
 * replaced files must still be live; no new position deletes may apply to them, nor new
 * equality deletes unless the starting sequence number is kept.
 *
 * Per attempt (apply), from the base it is given:
 *   1. read every manifest of the base's main head: live data files, live delete files;
 *   2. validate each group: inputs still live, no new deletes that apply -> else the
 *      group fails (alone);
 *   3. decide dangling delete files (when asked);
 *   4. write the new manifest (outputs, ADDED) and rewrite the manifests holding replaced
 *      inputs or removed deletes (DELETED entries), carry the others as they are;
 *   5. write the manifest list, add the snapshot.
 * Invariants:
 *   C1. Every live entry of the base is carried over except the replaced inputs of the
 *       groups that pass validation (and removed dangling deletes): appends committed
 *       meanwhile are kept.
 *   C2. Files this commit wrote are deleted only when the outcome is known and the
 *       committed metadata does not reference them (never after FLOE_EUNKNOWN_STATE).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet_reader.h"
#include "iceberg/puffin.h"
#include "iceberg/scan_internal.h"
#include "table/commit_files.h"
#include "rewrite_internal.h"

typedef struct target {
    size_t group;                /* index into the commit's groups */
    const floe_rewrite_input *in;
    bool present;
} target;

typedef struct live_delete {
    floe_manifest_entry e;       /* copied into the attempt arena */
    size_t manifest;
    bool remove;
} live_delete;

typedef struct commit_ctx {
    floe_table *t;
    const floe_rewrite_plan *p;
    const floe_rewrite_options *o;
    rw_group_out **g;
    size_t n;
    int64_t snapshot_id;
    char uuid[37];
    char *md_dir;
    int attempts;
    bool noop;
    floe_commit_files files;     /* written, and what the committed snapshot uses */
    int64_t removed_deletes;
    int fv;                      /* format version of the last attempt's commit */
    bool upgraded;               /* ... which upgrades v1 to v2 */
    /* across attempts: unscoped position delete files -> their data paths */
    floe_keyset *pos_paths;
    char **pos_paths_key;
    size_t npos_paths;
} commit_ctx;

typedef struct attempt {
    commit_ctx *c;
    const floe_table_metadata *base;
    int fv;                      /* format version the commit writes (1, 2 or 3) */
    floe_arena arena;
    target *targets;
    size_t ntargets;
    floe_keyset target_idx;        /* path -> target index */
    floe_keyset live_paths;        /* live data paths after the change */
    floe_keyset part_min;          /* partition key -> min data sequence number */
    int64_t global_min;          /* over every live data file; INT64_MAX when none */
    live_delete *dels;
    size_t ndels, dcap;
    bool *hits;                  /* per base manifest: must be rewritten */
    floe_manifest_file *out;
    size_t nout, outcap;
    int64_t first_row_id;        /* v3: the snapshot's first-row-id; -1 before v3 */
    int64_t added_rows;          /* v3: the row ids its manifest list assigned */
    int64_t live_files, live_records, live_size;
    floe_buf kb;
} attempt_state;

static int track(commit_ctx *c, const char *path, floe_error *err) {
    return floe_commit_files_track(&c->files, path, err);
}

static int64_t entry_seq(const floe_manifest_entry *e) {
    if (e->has_file_sequence_number)
        return e->file_sequence_number;
    return e->has_sequence_number ? e->sequence_number : 0;
}

static int part_key(floe_buf *b, int32_t spec_id, const floe_value *v, size_t n,
                    floe_error *err) {
    floe_buf_reset(b);
    if (floe_buf_append(b, &spec_id, sizeof spec_id) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (floe_buf_append_byte(b, v[i].is_null ? 0 : 1) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (v[i].is_null)
            continue;
        size_t at = b->len;
        uint32_t len = 0;
        if (floe_buf_append(b, &len, 4) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        FLOE_FORWARD_IF_ERROR(floe_value_to_binary(&v[i], b, err));
        len = (uint32_t)(b->len - at - 4);
        memcpy(b->data + at, &len, 4);
    }
    return 0;
}

static int note_live(attempt_state *a, const char *path, int32_t spec_id, const floe_value *part,
                     size_t npart, int64_t seq, int64_t records, int64_t size,
                     floe_error *err) {
    a->live_files++;
    a->live_records += records;
    a->live_size += size;
    if (seq < a->global_min)
        a->global_min = seq;
    FLOE_FORWARD_IF_ERROR(part_key(&a->kb, spec_id, part, npart, err));
    int64_t *slot;
    int rc = floe_keyset_put(&a->part_min, a->kb.data, a->kb.len, seq, &slot);
    if (rc < 0)
        return floe_error_set(err, rc, "%s", floe_strerror(rc));
    if (seq < *slot)
        *slot = seq;
    if ((rc = floe_keyset_put(&a->live_paths, (const uint8_t *)path, strlen(path), 0, NULL)) < 0)
        return floe_error_set(err, rc, "%s", floe_strerror(rc));
    return 0;
}

/* Whether two delete entries are one delete: deletion vectors of many data files share a
 * Puffin file, each entry its own blob (content_offset), so the path alone is not it. */
static bool same_delete(const floe_data_file *x, const floe_data_file *y) {
    return !strcmp(x->file_path, y->file_path) && x->has_content_offset == y->has_content_offset &&
           (!x->has_content_offset || x->content_offset == y->content_offset);
}

static bool same_partition(const floe_data_file *d, int32_t dspec, const floe_rewrite_input *in) {
    if (d->npartition == 0)
        return true; /* an unpartitioned delete applies to every partition */
    if (dspec != in->spec_id || d->npartition != in->file->npartition)
        return false;
    for (size_t i = 0; i < d->npartition; i++) {
        const floe_value *x = &d->partition[i], *y = &in->file->partition[i];
        if (x->is_null != y->is_null)
            return false;
        if (!x->is_null && !floe_value_equal(x, y))
            return false;
    }
    return true;
}

static bool delete_applies(const live_delete *ld, int32_t dspec, const floe_rewrite_input *in) {
    const floe_data_file *d = &ld->e.file;
    if (d->content == FLOE_CONTENT_POSITION_DELETES) {
        if (d->referenced_data_file)
            return !floe_pos_delete_excludes(d, in->file->file_path);
        if (floe_pos_delete_excludes(d, in->file->file_path))
            return false;
    }
    return same_partition(d, dspec, in);
}

/* Data paths an unscoped position delete file names (read once per commit). */
static int pos_delete_paths(commit_ctx *c, const floe_data_file *d, floe_keyset **out,
                            floe_error *err) {
    for (size_t i = 0; i < c->npos_paths; i++)
        if (!strcmp(c->pos_paths_key[i], d->file_path)) {
            *out = &c->pos_paths[i];
            return 0;
        }
    floe_keyset *np = floe_realloc(c->pos_paths, (c->npos_paths + 1) * sizeof *np);
    if (np)
        c->pos_paths = np;
    char **nk = np ? floe_realloc(c->pos_paths_key, (c->npos_paths + 1) * sizeof *nk) : NULL;
    FLOE_RETURN_ERROR_IF(!np || !nk, err, FLOE_ENOMEM, "out of memory");
    c->pos_paths_key = nk;
    floe_keyset *ks = &c->pos_paths[c->npos_paths];
    memset(ks, 0, sizeof *ks);
    char *uri = NULL;
    floe_pq_reader *r = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(c->t, d->file_path, &uri, err));
    FLOE_CHECK(floe_pq_reader_open(floe_table_io(c->t), uri, NULL, &r, err));
    int32_t id = RW_POS_FILE_PATH_ID;
    FLOE_CHECK(floe_pq_reader_select_ids(r, &id, 1, err));
    const floe_pq_rowset *rs;
    while ((rc = floe_pq_reader_next(r, &rs, err)) == 1) {
        if (rs->ncols < 1 || rs->cols[0].phys != FLOE_PHYS_BYTE_ARRAY)
            FLOE_FAIL(err, FLOE_ECORRUPT, "%s: file_path is not a string", d->file_path);
        const floe_colbuf *col = &rs->cols[0];
        for (size_t v = 0; v < col->nvalues; v++) {
            rc = floe_keyset_put(ks, col->values + col->offsets[v],
                               col->offsets[v + 1] - col->offsets[v], 0, NULL);
            if (rc < 0)
                FLOE_FAIL(err, rc, "%s: %s", d->file_path, floe_strerror(rc));
        }
    }
    if (rc < 0)
        goto done;
    if (!(c->pos_paths_key[c->npos_paths] = floe_strdup(d->file_path)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    c->npos_paths++;
    *out = ks;
done:
    floe_pq_reader_close(r);
    floe_free(uri);
    if (rc < 0)
        floe_keyset_free(ks);
    return rc < 0 ? rc : 0;
}

static int out_push(attempt_state *a, const floe_manifest_file *f, floe_error *err) {
    if (a->nout == a->outcap) {
        size_t nc = a->outcap ? a->outcap * 2 : 16;
        floe_manifest_file *n = floe_realloc(a->out, nc * sizeof *n);
        FLOE_RETURN_ERROR_IF(!n, err, FLOE_ENOMEM, "out of memory");
        a->out = n;
        a->outcap = nc;
    }
    a->out[a->nout++] = *f;
    return 0;
}

static const floe_partition_spec *manifest_spec(const commit_ctx *c, int32_t id) {
    return rw_plan_spec(c->p, id);
}

static int open_manifest(commit_ctx *c, const floe_manifest_file *mf, floe_manifest_reader **r,
                         floe_error *err) {
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(c->t, mf->manifest_path, &uri, err));
    floe_manifest_read_options ro = {.manifest = mf,
                                     .spec = manifest_spec(c, mf->partition_spec_id),
                                     .allow_deletion_vectors = true};
    int rc = floe_manifest_reader_open(floe_table_io(c->t), uri, &ro, r, err);
    floe_free(uri);
    return rc;
}

/* Pass 1: read the base's manifests. */
static int read_base(attempt_state *a, const floe_manifest_list *bl, floe_error *err) {
    commit_ctx *c = a->c;
    int rc = 0;
    for (size_t mi = 0; mi < bl->nfiles; mi++) {
        const floe_manifest_file *mf = &bl->files[mi];
        floe_manifest_reader *r = NULL;
        FLOE_FORWARD_IF_ERROR(open_manifest(c, mf, &r, err));
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(r, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            if (e->file.content == FLOE_CONTENT_DATA) {
                int64_t *ti = floe_keyset_find(&a->target_idx, (const uint8_t *)e->file.file_path,
                                             strlen(e->file.file_path));
                if (ti) {
                    a->targets[*ti].present = true;
                    a->hits[mi] = true;
                    continue;
                }
                int64_t seq = e->has_sequence_number ? e->sequence_number : 0;
                rc = note_live(a, e->file.file_path, mf->partition_spec_id, e->file.partition,
                               e->file.npartition, seq, e->file.record_count,
                               e->file.file_size_in_bytes, err);
                if (rc < 0)
                    break;
            } else {
                if (a->ndels == a->dcap) {
                    size_t nc = a->dcap ? a->dcap * 2 : 16;
                    live_delete *nd = floe_realloc(a->dels, nc * sizeof *nd);
                    if (!nd) {
                        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                        break;
                    }
                    a->dels = nd;
                    a->dcap = nc;
                }
                live_delete *ld = &a->dels[a->ndels];
                memset(ld, 0, sizeof *ld);
                ld->e = *e;
                ld->manifest = mi;
                rc = floe_data_file_copy(&e->file, &a->arena, &ld->e.file, err);
                if (rc < 0)
                    break;
                a->ndels++;
            }
        }
        floe_manifest_reader_close(r);
        if (rc < 0) {
            floe_error_prefix(err, "manifest %s: ", mf->manifest_path);
            return rc;
        }
    }
    return 0;
}

static void fail_group(rw_group_out *g, const char *what, const char *path) {
    if (g->failed)
        return;
    g->failed = true;
    rw_group_why(g, what, path ? path : "");
    floe_log(FLOE_LOG_WARN, "rewrite: group %d fails validation: %s", g->group->global_index,
             rw_group_why_text(g));
}

/* A manifest being written from the entries of several rewritten ones. */
typedef struct combined {
    floe_manifest_content content;
    int32_t spec_id;
    floe_manifest_writer *w;     /* NULL once closed */
    /* When the plan has no binding of spec_id (a spec committed after planning): the
     * spec bound to the schema it resolves in (floe_table_metadata_bind_spec), and an
     * older schema it binds to (a source column was dropped), which the
     * manifest's header records (spec "Manifests": the schema and spec it was written
     * with); or, when no schema of the table binds it, the reader whose header spec w
     * borrows. Freed (closed) after w. */
    floe_schema *own_schema;
    floe_partition_spec *own_spec;
    floe_manifest_reader *spec_owner;
    char *rec;                   /* its recorded path */
    int64_t in_bytes;            /* manifest_length of the inputs so far */
} combined;

static void combined_free_spec(combined *cm) {
    floe_manifest_reader_close(cm->spec_owner);
    floe_partition_spec_free(cm->own_spec);
    floe_schema_free(cm->own_schema);
    cm->spec_owner = NULL;
    cm->own_spec = NULL;
    cm->own_schema = NULL;
}

static int combined_close(attempt_state *a, combined *cm, floe_error *err) {
    if (!cm->w)
        return 0;
    floe_manifest_file nm;
    int rc = floe_manifest_writer_close(cm->w, NULL, &a->arena, &nm, err);
    cm->w = NULL;
    combined_free_spec(cm);
    if (rc == 0 && !(nm.manifest_path = floe_arena_strdup(&a->arena, cm->rec)))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0)
        rc = out_push(a, &nm, err);
    floe_free(cm->rec);
    cm->rec = NULL;
    return rc;
}

/* Pass 2: the new manifest, rewritten manifests, the others as they are. */
static int write_manifests(attempt_state *a, const floe_manifest_list *bl, floe_error *err) {
    commit_ctx *c = a->c;
    const floe_rewrite_plan *p = c->p;
    int rc = 0;
    combined cms[4];
    size_t ncm = 0;
    memset(cms, 0, sizeof cms);
    int mseq = c->attempts * 1000;
    floe_manifest_write_options wo;
    char *rec = NULL, *phys = NULL;
    floe_manifest_writer *w = NULL;
    floe_manifest_reader *r = NULL;
    /* outputs */
    floe_manifest_write_options_init(&wo);
    wo.schema = p->priv->table_schema ? p->priv->table_schema : p->priv->schema;
    wo.spec = rw_plan_spec(p, p->output_spec_id);
    if (rw_plan_spec_schema(p, p->output_spec_id)) /* the schema the spec binds to */
        wo.schema = rw_plan_spec_schema(p, p->output_spec_id);
    wo.has_snapshot_id = true;
    wo.snapshot_id = c->snapshot_id;
    wo.format_version = a->fv;
    FLOE_CHECK(floe_manifest_codec_from_props(a->base->properties, a->base->n_properties,
                                              &wo.codec, &wo.level, err));
    size_t nadded = 0;
    for (size_t k = 0; k < c->n; k++)
        if (!c->g[k]->failed)
            nadded += c->g[k]->nfiles;
    if (nadded) {
        if (!(rec = floe_manifest_path_new(c->md_dir, c->uuid, ++mseq)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(floe_table_resolve_path(c->t, rec, &phys, err));
        FLOE_CHECK(floe_manifest_writer_open(floe_table_io(a->c->t), phys, &wo, &w, err));
        int64_t dseq = c->o->use_starting_sequence_number ? p->sequence_number : -1;
        for (size_t k = 0; k < c->n; k++) {
            if (c->g[k]->failed)
                continue;
            for (size_t i = 0; i < c->g[k]->nfiles; i++)
                FLOE_CHECK(floe_manifest_writer_add(w, &c->g[k]->files[i], dseq, err));
        }
        FLOE_CHECK(track(c, rec, err));
        floe_manifest_file mf;
        rc = floe_manifest_writer_close(w, NULL, &a->arena, &mf, err);
        w = NULL;
        if (rc < 0)
            goto done;
        if (!(mf.manifest_path = floe_arena_strdup(&a->arena, rec)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(out_push(a, &mf, err));
        floe_free(rec);
        floe_free(phys);
        rec = phys = NULL;
    }
    /* The manifests holding replaced files (or removed deletes) are rewritten into as few
     * manifests as their bytes need - one per content and spec, a new one past
     * commit.manifest.target-size-bytes - rather than one each: a table compacted every
     * few seconds would otherwise keep as many manifests as the runs touched. */
    int64_t target_bytes = floe_table_metadata_property_int(
        a->base, "commit.manifest.target-size-bytes", 8LL << 20);
    if (target_bytes <= 0)
        target_bytes = 8LL << 20;
    for (size_t mi = 0; mi < bl->nfiles; mi++) {
        const floe_manifest_file *mf = &bl->files[mi];
        if (!a->hits[mi]) {
            FLOE_CHECK(out_push(a, mf, err));
            continue;
        }
        FLOE_CHECK(open_manifest(c, mf, &r, err));
        combined *cm = NULL;
        for (size_t k = 0; k < ncm && !cm; k++)
            if (cms[k].content == mf->content && cms[k].spec_id == mf->partition_spec_id)
                cm = &cms[k];
        int64_t len = mf->manifest_length > 0 ? mf->manifest_length : 0;
        if (cm && cm->in_bytes > 0 && cm->in_bytes + len > target_bytes)
            FLOE_CHECK(combined_close(a, cm, err));
        if (!cm && ncm == sizeof cms / sizeof cms[0])
            FLOE_CHECK(combined_close(a, cm = &cms[0], err));
        if (!cm)
            cm = &cms[ncm++];
        if (!cm->w) {
            floe_manifest_write_options mo = wo;
            mo.content = mf->content;
            mo.spec = manifest_spec(c, mf->partition_spec_id);
            if (rw_plan_spec_schema(p, mf->partition_spec_id))
                mo.schema = rw_plan_spec_schema(p, mf->partition_spec_id);
            if (!mo.spec) {
                floe_error be;
                floe_error_clear(&be);
                rc = floe_table_metadata_bind_spec(a->base, mf->partition_spec_id,
                                                   &cm->own_schema, &cm->own_spec, &be);
                if (rc == FLOE_ENOMEM)
                    FLOE_FAIL(err, rc, "out of memory");
                rc = 0;
                if (cm->own_spec) {
                    mo.schema = cm->own_schema;
                    mo.spec = cm->own_spec;
                } else if ((mo.spec = floe_manifest_reader_spec(r)) != NULL) {
                    cm->spec_owner = r;
                    r = NULL;
                }
            }
            if (!mo.spec || !mo.spec->bound)
                FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                          "manifest %s: its partition spec %d binds to none of the table's "
                          "schemas; cannot rewrite it", mf->manifest_path,
                          mf->partition_spec_id);
            cm->content = mf->content;
            cm->spec_id = mf->partition_spec_id;
            cm->in_bytes = 0;
            if (!(cm->rec = floe_manifest_path_new(c->md_dir, c->uuid, ++mseq)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            FLOE_CHECK(track(c, cm->rec, err));
            FLOE_CHECK(floe_table_resolve_path(c->t, cm->rec, &phys, err));
            FLOE_CHECK(floe_manifest_writer_open(floe_table_io(a->c->t), phys, &mo, &cm->w, err));
            floe_free(phys);
            phys = NULL;
        }
        cm->in_bytes += len;
        floe_manifest_reader *rd = r ? r : cm->spec_owner;
        const floe_manifest_entry *e;
        size_t di = 0;
        while ((rc = floe_manifest_reader_next(rd, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            bool drop = false;
            if (e->file.content == FLOE_CONTENT_DATA) {
                int64_t *ti = floe_keyset_find(&a->target_idx, (const uint8_t *)e->file.file_path,
                                             strlen(e->file.file_path));
                drop = ti && !c->g[a->targets[*ti].group]->failed;
            } else {
                for (; di < a->ndels && a->dels[di].manifest < mi; di++) {
                }
                for (size_t k = di; k < a->ndels && a->dels[k].manifest == mi; k++)
                    if (a->dels[k].remove && same_delete(&a->dels[k].e.file, &e->file))
                        drop = true;
            }
            rc = drop ? floe_manifest_writer_delete(cm->w, e, err)
                      : floe_manifest_writer_existing(cm->w, e, err);
            if (rc < 0)
                break;
        }
        floe_manifest_reader_close(r);
        r = NULL;
        if (rc < 0)
            goto done;
    }
    for (size_t k = 0; k < ncm; k++)
        FLOE_CHECK(combined_close(a, &cms[k], err));
done:
    for (size_t k = 0; k < ncm; k++) {
        floe_manifest_writer_abort(cms[k].w);
        combined_free_spec(&cms[k]);
        floe_free(cms[k].rec);
    }
    floe_manifest_writer_abort(w);
    floe_manifest_reader_close(r);
    floe_free(rec);
    floe_free(phys);
    return rc;
}

typedef struct summary {
    floe_kv kv[40];
    size_t n;
    floe_arena *arena;
} summary;

static int sum_int(summary *s, const char *k, int64_t v, floe_error *err) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    const char *d = floe_arena_strdup(s->arena, buf);
    FLOE_RETURN_ERROR_IF(!d || s->n >= 40, err, FLOE_ENOMEM, "out of memory");
    s->kv[s->n++] = (floe_kv){k, d};
    return 0;
}

/* What a commit attempt adds and removes, for the snapshot summary. */
typedef struct change_counts {
    int64_t added_files, added_records, added_size;
    int64_t del_files, del_records, del_size;
    int64_t rm_pos, rm_eq, rm_pos_rows, rm_eq_rows, rm_size; /* dangling deletes removed */
    int64_t rm_dvs;              /* ... of which deletion vectors (not in rm_pos) */
    int64_t live_del, live_del_size, live_pos_rows, live_eq_rows; /* deletes that stay */
} change_counts;

/* Targets: the inputs of the groups still in the running, then the base snapshot's live
 * files read against them (read_base). */
static int collect_targets(attempt_state *a, const floe_manifest_list *bl, floe_error *err) {
    commit_ctx *c = a->c;
    for (size_t k = 0; k < c->n; k++)
        if (!c->g[k]->failed)
            a->ntargets += c->g[k]->group->ninputs;
    a->targets = floe_calloc(a->ntargets + 1, sizeof *a->targets);
    a->hits = floe_calloc(bl->nfiles + 1, sizeof *a->hits);
    if (!a->targets || !a->hits)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    a->ntargets = 0;
    for (size_t k = 0; k < c->n; k++) {
        if (c->g[k]->failed)
            continue;
        const floe_rewrite_group *g = c->g[k]->group;
        for (size_t i = 0; i < g->ninputs; i++) {
            const char *path = g->inputs[i].file->file_path;
            int rc = floe_keyset_put(&a->target_idx, (const uint8_t *)path, strlen(path),
                                   (int64_t)a->ntargets, NULL);
            if (rc < 0)
                return floe_error_set(err, rc, "%s", floe_strerror(rc));
            a->targets[a->ntargets++] = (target){k, &g->inputs[i], false};
        }
    }
    return read_base(a, bl, err);
}

/* Validation: a group fails when an input is no longer live or a concurrent commit added
 * deletes that apply to it. False when no group is left. */
static bool validate(attempt_state *a, const floe_manifest_list *bl) {
    commit_ctx *c = a->c;
    for (size_t i = 0; i < a->ntargets; i++)
        if (!a->targets[i].present)
            fail_group(c->g[a->targets[i].group],
                       "input no longer live (removed by a concurrent commit): ",
                       a->targets[i].in->file->file_path);
    for (size_t d = 0; d < a->ndels; d++) {
        live_delete *ld = &a->dels[d];
        if (entry_seq(&ld->e) <= c->p->sequence_number)
            continue; /* there when the rewrite started: already applied */
        if (ld->e.file.content == FLOE_CONTENT_EQUALITY_DELETES &&
            c->o->use_starting_sequence_number)
            continue; /* still applies to the outputs through their sequence number */
        int32_t dspec = bl->files[ld->manifest].partition_spec_id;
        for (size_t i = 0; i < a->ntargets; i++) {
            rw_group_out *g = c->g[a->targets[i].group];
            if (!g->failed && delete_applies(ld, dspec, a->targets[i].in))
                fail_group(g, "a concurrent commit added deletes for input ",
                           a->targets[i].in->file->file_path);
        }
    }
    bool any = false;
    for (size_t k = 0; k < c->n; k++)
        any |= !c->g[k]->failed;
    return any;
}

/* The live data after the change: failed groups' inputs stay, outputs arrive (at
 * sequence number add_seq). */
static int note_live_data(attempt_state *a, int64_t add_seq, change_counts *n,
                          floe_error *err) {
    commit_ctx *c = a->c;
    for (size_t i = 0; i < a->ntargets; i++) {
        const floe_rewrite_input *in = a->targets[i].in;
        if (!a->targets[i].present)
            continue;
        if (c->g[a->targets[i].group]->failed) {
            FLOE_FORWARD_IF_ERROR(note_live(a, in->file->file_path, in->spec_id,
                                            in->file->partition, in->file->npartition,
                                            in->data_sequence_number, in->file->record_count,
                                            in->file->file_size_in_bytes, err));
        } else {
            n->del_files++;
            n->del_records += in->file->record_count;
            n->del_size += in->file->file_size_in_bytes;
        }
    }
    for (size_t k = 0; k < c->n; k++) {
        if (c->g[k]->failed)
            continue;
        for (size_t i = 0; i < c->g[k]->nfiles; i++) {
            const floe_data_file *f = &c->g[k]->files[i];
            FLOE_FORWARD_IF_ERROR(note_live(a, f->file_path, c->p->output_spec_id, f->partition,
                                            f->npartition, add_seq, f->record_count,
                                            f->file_size_in_bytes, err));
            n->added_files++;
            n->added_records += f->record_count;
            n->added_size += f->file_size_in_bytes;
        }
    }
    return 0;
}

/* Is delete file ld dangling once the change is made (o->remove_dangling_deletes)? */
static int is_dangling(attempt_state *a, const floe_manifest_list *bl, const live_delete *ld,
                       bool *out, floe_error *err) {
    const floe_data_file *df = &ld->e.file;
    int64_t dseq = ld->e.has_sequence_number ? ld->e.sequence_number : 0;
    bool dangling;
    int32_t dspec = bl->files[ld->manifest].partition_spec_id;
    int64_t min = a->global_min;
    if (df->npartition) {
        FLOE_FORWARD_IF_ERROR(part_key(&a->kb, dspec, df->partition, df->npartition, err));
        int64_t *m = floe_keyset_find(&a->part_min, a->kb.data, a->kb.len);
        min = m ? *m : INT64_MAX;
    }
    if (df->content == FLOE_CONTENT_EQUALITY_DELETES) {
        dangling = min >= dseq; /* applies only to data older than itself */
    } else if (df->referenced_data_file) {
        dangling = !floe_keyset_find(&a->live_paths, (const uint8_t *)df->referenced_data_file,
                                   strlen(df->referenced_data_file));
    } else {
        dangling = min > dseq;
        if (!dangling && (!df->file_format || !strcasecmp(df->file_format, "parquet"))) {
            floe_keyset *paths = NULL;
            FLOE_FORWARD_IF_ERROR(pos_delete_paths(a->c, df, &paths, err));
            dangling = true;
            for (size_t s = 0; s < paths->cap && dangling; s++)
                if (paths->hash[s] &&
                    floe_keyset_find(&a->live_paths, paths->keys.data + paths->off[s],
                                   paths->len[s]))
                    dangling = false;
        }
    }
    floe_log(FLOE_LOG_DEBUG,
             "rewrite: delete file %s: sequence %" PRId64 ", oldest live data in its "
             "partition %" PRId64 ": %s", df->file_path, dseq, min,
             dangling ? "dangling" : "still needed");
    *out = dangling;
    return 0;
}

/* Dangling deletes (with remove-dangling-deletes; always, a deletion vector whose data file
 * goes) are marked to be removed (their manifests rewritten); the others are
 * counted as staying. */
static int drop_dangling(attempt_state *a, const floe_manifest_list *bl, change_counts *n,
                         floe_error *err) {
    for (size_t d = 0; d < a->ndels; d++) {
        live_delete *ld = &a->dels[d];
        const floe_data_file *df = &ld->e.file;
        bool dangling = false;
        if (a->c->o->remove_dangling_deletes)
            FLOE_FORWARD_IF_ERROR(is_dangling(a, bl, ld, &dangling, err));
        else if (floe_data_file_is_dv(df) && df->referenced_data_file)
            /* spec "Deletion Vectors": a writer removing a data file removes its vector */
            dangling = !floe_keyset_find(&a->live_paths, (const uint8_t *)df->referenced_data_file,
                                         strlen(df->referenced_data_file));
        if (dangling) {
            ld->remove = true;
            a->hits[ld->manifest] = true;
            n->rm_size += df->file_size_in_bytes;
            if (df->content == FLOE_CONTENT_EQUALITY_DELETES) {
                n->rm_eq++;
                n->rm_eq_rows += df->record_count;
            } else {
                *(floe_data_file_is_dv(df) ? &n->rm_dvs : &n->rm_pos) += 1;
                n->rm_pos_rows += df->record_count;
            }
            continue;
        }
        n->live_del++;
        n->live_del_size += df->file_size_in_bytes;
        if (df->content == FLOE_CONTENT_EQUALITY_DELETES)
            n->live_eq_rows += df->record_count;
        else
            n->live_pos_rows += df->record_count;
    }
    a->c->removed_deletes = n->rm_pos + n->rm_eq + n->rm_dvs;
    return 0;
}

/* The attempt's manifest list (recorded path list_rec) over the manifests written. */
static int write_list(attempt_state *a, const floe_snapshot *head, int64_t seq,
                      const char *list_rec, floe_error *err) {
    commit_ctx *c = a->c;
    char *list_phys = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(c->t, list_rec, &list_phys, err));
    floe_manifest_list_write_options lw;
    floe_manifest_list_write_options_init(&lw);
    lw.snapshot_id = c->snapshot_id;
    lw.has_parent = true;
    lw.parent_snapshot_id = head->snapshot_id;
    lw.sequence_number = seq;
    lw.format_version = a->fv;
    FLOE_CHECK(floe_manifest_codec_from_props(a->base->properties, a->base->n_properties,
                                              &lw.codec, &lw.level, err));
    if (a->first_row_id >= 0) /* v3: the new manifests get row ids, the others keep theirs */
        FLOE_CHECK(floe_manifest_list_assign_row_ids(a->out, a->nout, a->first_row_id,
                                                     &a->added_rows, err));
    FLOE_CHECK(track(c, list_rec, err));
    FLOE_CHECK(floe_manifest_list_write(floe_table_io(c->t), list_phys, &lw, a->out, a->nout,
                                        NULL, NULL, err));
    floe_strlist_free(&c->files.refs);
    FLOE_CHECK(floe_strlist_push(&c->files.refs, list_rec, err));
    for (size_t i = 0; i < a->nout; i++)
        FLOE_CHECK(floe_strlist_push(&c->files.refs, a->out[i].manifest_path, err));
done:
    floe_free(list_phys);
    return rc;
}

/* The replace snapshot and its summary. */
static int add_snapshot(attempt_state *a, floe_metadata_builder *b, const char *list_rec,
                        const change_counts *n, floe_error *err) {
    commit_ctx *c = a->c;
    summary s = {.arena = &a->arena};
    int64_t groups = 0;
    for (size_t k = 0; k < c->n; k++)
        groups += !c->g[k]->failed;
    int64_t rm = n->rm_pos + n->rm_eq + n->rm_dvs;
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-data-files", n->added_files, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "deleted-data-files", n->del_files, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-records", n->added_records, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "deleted-records", n->del_records, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-files-size", n->added_size, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-files-size", n->del_size + n->rm_size, err));
    if (rm) {
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-delete-files", rm, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-position-delete-files", n->rm_pos, err));
        if (n->rm_dvs)
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-dvs", n->rm_dvs, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-equality-delete-files", n->rm_eq, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-position-deletes", n->rm_pos_rows, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-equality-deletes", n->rm_eq_rows, err));
    }
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-data-files", a->live_files, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-delete-files", n->live_del, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-records", a->live_records, err));
    /* every live file, data and delete, as "added-files-size" counts them */
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-files-size", a->live_size + n->live_del_size,
                                  err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-position-deletes", n->live_pos_rows, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "total-equality-deletes", n->live_eq_rows, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, "floe.rewrite.file-groups", groups, err));
    floe_snapshot_new sn = {.snapshot_id = c->snapshot_id,
                            .operation = "replace",
                            .manifest_list = list_rec,
                            .summary = s.kv,
                            .n_summary = s.n,
                            .schema_id = -1,
                            .row_lineage = a->first_row_id >= 0,
                            .first_row_id = a->first_row_id,
                            .added_rows = a->added_rows};
    return floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err);
}

/* One commit attempt on the metadata in b: check the groups against the base snapshot,
 * rewrite the manifests that change, write the manifest list, add the snapshot. */
static int apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    commit_ctx *c = ctx;
    const floe_rewrite_plan *p = c->p;
    attempt_state a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.base = floe_metadata_builder_base(b);
    a.global_min = INT64_MAX;
    floe_arena_init(&a.arena, 64 * 1024);
    floe_buf_init(&a.kb, 0);
    c->attempts++;
    c->noop = false;
    int rc = 0;
    char *src = NULL, *list_rec = NULL;
    floe_manifest_list bl = {0};
    change_counts n;
    memset(&n, 0, sizeof n);
    /* a v1 table stays v1 unless the upgrade was asked for */
    if (c->o->format_version)
        FLOE_CHECK(floe_metadata_builder_upgrade(b, c->o->format_version, err));
    a.fv = floe_metadata_builder_format_version(b);
    a.first_row_id = floe_metadata_builder_next_row_id(b);
    c->fv = a.fv;
    c->upgraded = a.base->format_version == 1 && a.fv == 2;
    const floe_snapshot *head = floe_table_metadata_current_snapshot(a.base);
    if (!head) {
        for (size_t k = 0; k < c->n; k++)
            fail_group(c->g[k], "the table has no current snapshot any more", NULL);
        c->noop = true;
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    if (!head->manifest_list)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "snapshot %" PRId64 " has no manifest list",
                  head->snapshot_id);
    FLOE_CHECK(floe_table_resolve_path(c->t, head->manifest_list, &src, err));
    floe_manifest_list_read_options lo = {.has_snapshot_id = true,
                                          .snapshot_id = head->snapshot_id};
    FLOE_CHECK(floe_manifest_list_read(floe_table_io(a.c->t), src, &lo, &a.arena, &bl, err));
    FLOE_CHECK(collect_targets(&a, &bl, err));
    if (!validate(&a, &bl)) {
        c->noop = true;
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    int64_t add_seq = c->o->use_starting_sequence_number ? p->sequence_number : seq;
    FLOE_CHECK(note_live_data(&a, add_seq, &n, err));
    FLOE_CHECK(drop_dangling(&a, &bl, &n, err));
    FLOE_CHECK(write_manifests(&a, &bl, err));
    list_rec = floe_manifest_list_path_new(c->md_dir, c->snapshot_id, c->attempts, c->uuid);
    if (!list_rec)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(write_list(&a, head, seq, list_rec, err));
    FLOE_CHECK(add_snapshot(&a, b, list_rec, &n, err));
done:
    floe_free(a.targets);
    floe_free(a.hits);
    floe_free(a.dels);
    floe_free(a.out);
    floe_keyset_free(&a.target_idx);
    floe_keyset_free(&a.live_paths);
    floe_keyset_free(&a.part_min);
    floe_buf_free(&a.kb);
    floe_arena_reset(&a.arena);
    floe_free(src);
    floe_free(list_rec);
    return rc;
}

int rw_commit_groups(floe_table *t, const floe_rewrite_plan *p, const floe_rewrite_options *o,
                     rw_group_out **g, size_t n, rw_commit_stats *st, floe_error *err) {
    commit_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.p = p;
    c.o = o;
    c.g = g;
    c.n = n;
    c.snapshot_id = floe_metadata_new_snapshot_id();
    floe_uuid4(c.uuid);
    /* through the catalog, or Hadoop-style for tables opened by path (floe_table_commit) */
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_write_dir(t, &c.md_dir, err));
    int rc = floe_table_commit(t, apply, &c, err);
    if (rc == FLOE_EUNKNOWN_STATE) {
        /* C2: the table may reference anything written */
    } else if (rc < 0 || c.noop) {
        floe_commit_files_cleanup(&c.files, t, false, "rewrite");
    } else {
        floe_commit_files_cleanup(&c.files, t, true, "rewrite");
        if (st) {
            st->snapshot_id = c.snapshot_id;
            st->removed_delete_files = c.removed_deletes;
            st->format_version = c.fv;
            st->format_upgraded = c.upgraded;
        }
    }
    if (st)
        st->attempts = c.attempts;
    floe_free(c.md_dir);
    floe_commit_files_free(&c.files);
    for (size_t i = 0; i < c.npos_paths; i++) {
        floe_keyset_free(&c.pos_paths[i]);
        floe_free(c.pos_paths_key[i]);
    }
    floe_free(c.pos_paths);
    floe_free(c.pos_paths_key);
    return rc;
}
