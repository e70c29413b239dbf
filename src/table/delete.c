/*
 * delete.c - row-level deletes (`floe delete --where`): find the rows, write deletion
 * vectors (v3) or position delete files (v2), commit a "delete" snapshot.
 *
 * Spec: format/spec.md "Row-level Deletes", "Deletion Vectors" (at most one per data file
 * in a snapshot; a new one holds the file's earlier vector and position deletes, which
 * readers may then ignore), "Position Delete Files" (file_path 2147483546, pos
 * 2147483545, sorted by file_path then pos; referenced_data_file when one data file is
 * referenced), "Manifests" (content_offset, content_size_in_bytes, referenced_data_file
 * of a vector's entry; DELETED entries keep the sequence numbers of what they delete),
 * "Snapshots" (operation "delete"), "Optional Snapshot Summary Fields", "Row Lineage"
 * (the three steps every commit path takes, docs/DESIGN.md), "Commit Conflict
 * Resolution and Retry".
 *
 * One run: plan (floe_scan_plan_files on the branch head with the filter), read the
 * candidates (floe_scan_match_rows: positions of the live rows that match and those
 * already deleted), decide per affected data file (a vector of old + new positions, new
 * positions for a position delete file, or removal when no row is left), write the
 * delete files, commit. Per commit attempt (apply), on the base it is given:
 *   1. read the branch head's manifests: the targets must all be live, the delete files
 *      being replaced too; a live delete file or data file added after the planned head
 *      that touches a target or may match the filter sends the run back to planning;
 *   2. write one delete manifest per partition spec for the new delete files and rewrite
 *      the manifests holding removed entries (DELETED), carry the others;
 *   3. the manifest list (v3: row ids for the data manifests without), the snapshot.
 * Invariants:
 *   D1. The positions a vector holds are those of every delete the file had at the
 *       planned head plus the new ones, and the commit lands only on a base in which no
 *       other delete reached the file since (else re-plan): no delete is lost.
 *   D2. A data file is removed only when every one of its rows is deleted (positions =
 *       the file's record count, checked against the rows read).
 *   D3. Files written by a run that does not commit are deleted, except after
 *       FLOE_EUNKNOWN_STATE.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/keyset.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/delete.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "iceberg/puffin.h"
#include "iceberg/scan_internal.h"
#include "commit_files.h"
#include "table_internal.h"

#define POS_FILE_PATH_ID 2147483546
#define POS_POS_ID 2147483545

/* A delete file this delete replaces (a vector, or a position delete file scoped to one
 * data file). */
typedef struct old_delete {
    floe_data_file file;          /* copy in the run arena */
    bool found;                   /* live in the attempt's base */
} old_delete;

/* One data file with rows deleted. */
typedef struct target {
    floe_data_file file;          /* copy in the run arena */
    int32_t spec_id;
    const uint8_t *pkey;          /* partition_key of spec and tuple (run arena) */
    size_t pkeylen;
    int64_t *pos;                 /* v3: the whole vector; v2: the new positions */
    size_t npos;
    int64_t newly;                /* rows this delete deletes */
    bool remove;                  /* every row deleted: the file goes */
    bool present;                 /* live in the attempt's base */
} target;

/* A new delete file and the spec of its partition tuple. */
typedef struct added_delete {
    floe_data_file file;
    int32_t spec_id;
} added_delete;

typedef struct bound_spec {
    int32_t id;
    floe_schema *schema;
    floe_partition_spec *spec;
} bound_spec;

typedef struct run {
    floe_table *t;
    const floe_delete_options *o;
    bool resolve;                 /* floe_table_rewrite_deletes: targets are the files with
                                     equality or position delete files, their vector every
                                     row not live; no row filter */
    const char *select;           /* resolve: --where choosing the data files, or NULL */
    floe_keyset plan_files;       /* resolve: every data file live at the planned head */
    floe_keyset pinned;           /* resolve: delete files that also apply to a data file
                                     left out (--where): kept */
    const char *branch;           /* NULL = main */
    int fv;
    floe_arena arena;
    floe_error *err;
    /* the plan */
    floe_scan_plan *plan;
    int64_t plan_seq;             /* sequence number of the planned head */
    target *targets;
    size_t ntargets, tcap;
    old_delete *olds;
    size_t nolds, ocap;
    floe_keyset target_idx;       /* data path -> target index */
    floe_keyset old_idx;          /* delete key -> old index */
    floe_keyset target_parts;     /* partition keys of the targets */
    floe_buf kb;
    int64_t files_scanned;
    /* written */
    added_delete *added;
    size_t nadded;
    floe_commit_files files;      /* written, and what the committed snapshot uses */
    /* the commit */
    int64_t snapshot_id;
    char uuid[37];
    char *md_dir;
    int attempts;
    bool replan;
    char replan_why[512];
    bound_spec *specs;
    size_t nspecs;
} run;

static int track(run *r, const char *path) {
    return floe_commit_files_track(&r->files, path, r->err);
}

/* The key of a delete file entry: its path, and the offset of a vector in its file. */
static int delete_key(floe_buf *b, const floe_data_file *f, floe_error *err) {
    floe_buf_reset(b);
    int rc = floe_buf_append(b, f->file_path, strlen(f->file_path) + 1);
    if (rc == 0 && f->has_content_offset)
        rc = floe_buf_append(b, &f->content_offset, sizeof f->content_offset);
    return rc < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
}

/* The key of a partition: spec id and the canonical text of each value. */
static int partition_key(floe_buf *b, int32_t spec_id, const floe_value *v, size_t n,
                         floe_error *err) {
    floe_buf_reset(b);
    int rc = floe_buf_append(b, &spec_id, sizeof spec_id);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = floe_sv_to_canonical(&v[i], b);
        if (rc == 0)
            rc = floe_buf_append_byte(b, 0);
    }
    return rc < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
}

static bool scoped_to(const floe_data_file *d, const char *path) {
    return d->content == FLOE_CONTENT_POSITION_DELETES && d->referenced_data_file &&
           !strcmp(d->referenced_data_file, path);
}

/* ---------------------------------------------------------------------------------------
 * finding the rows
 * ------------------------------------------------------------------------------------- */

static int add_old(run *r, const floe_data_file *d) {
    FLOE_FORWARD_IF_ERROR(delete_key(&r->kb, d, r->err));
    size_t before = r->old_idx.n;
    int rc = floe_keyset_put(&r->old_idx, r->kb.data, r->kb.len, (int64_t)r->nolds, NULL);
    if (rc < 0)
        return floe_error_set(r->err, rc, "%s", floe_strerror(rc));
    if (r->old_idx.n == before)
        return 0; /* named by another task already */
    if (r->nolds == r->ocap) {
        size_t nc = r->ocap ? r->ocap * 2 : 16;
        old_delete *no = floe_realloc(r->olds, nc * sizeof *no);
        if (!no)
            return floe_error_set(r->err, FLOE_ENOMEM, "out of memory");
        r->olds = no;
        r->ocap = nc;
    }
    old_delete *od = &r->olds[r->nolds];
    memset(od, 0, sizeof *od);
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(d, &r->arena, &od->file, r->err));
    r->nolds++;
    return 0;
}

/* Resolving, is the vector that would be written for tg the one its file has? So when
 * the equality deletes remove no row the file's one vector does not, and no position
 * delete file is to be folded in. (An equality delete that also applies to a file left
 * out by --where stays, and without this every later run wrote the same vector again.) */
static bool resolved_already(const floe_scan_task *task, const target *tg) {
    if (tg->remove || tg->newly != 0)
        return false;
    size_t dvs = 0;
    for (size_t d = 0; d < task->ndeletes; d++) {
        const floe_data_file *dd = task->deletes[d];
        if (floe_data_file_is_dv(dd))
            dvs++;
        else if (dd->content != FLOE_CONTENT_EQUALITY_DELETES)
            return false;
    }
    return dvs == 1;
}

/* Resolving: a delete file resolved here for its file goes, unless a file left out
 * needs it (pinned). */
static int resolved_out(run *r, const floe_data_file *dd) {
    FLOE_FORWARD_IF_ERROR(delete_key(&r->kb, dd, r->err));
    return floe_keyset_find(&r->pinned, r->kb.data, r->kb.len) ? 0 : add_old(r, dd);
}

/* The equality deletes of a file that keeps its vector go unless pinned. */
static int pinned_olds(run *r, const floe_scan_task *task) {
    for (size_t d = 0; d < task->ndeletes; d++)
        if (task->deletes[d]->content == FLOE_CONTENT_EQUALITY_DELETES)
            FLOE_FORWARD_IF_ERROR(resolved_out(r, task->deletes[d]));
    return 0;
}

static int on_match(void *ctx, const floe_scan_match *m, floe_error *err) {
    run *r = ctx;
    (void)err;
    r->files_scanned++;
    if (m->nmatched == 0 && !r->resolve) /* resolving: no live row left, the file goes */
        return 0;
    const floe_data_file *df = m->task->file;
    if (r->ntargets == r->tcap) {
        size_t nc = r->tcap ? r->tcap * 2 : 16;
        target *nt = floe_realloc(r->targets, nc * sizeof *nt);
        if (!nt)
            return floe_error_set(r->err, FLOE_ENOMEM, "out of memory");
        r->targets = nt;
        r->tcap = nc;
    }
    target *tg = &r->targets[r->ntargets];
    memset(tg, 0, sizeof *tg);
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(df, &r->arena, &tg->file, r->err));
    tg->spec_id = m->task->spec_id;
    tg->newly = (int64_t)m->nmatched;
    /* the scan skipped deleted rows, so matched and deleted are disjoint */
    size_t total = m->nmatched + m->ndeleted;
    tg->remove = (int64_t)total == m->rows && m->rows == df->record_count;
    if (r->resolve) {
        /* no filter: matched are the live rows; the vector is every other row */
        total = (size_t)(m->rows - (int64_t)m->nmatched);
        tg->newly = (int64_t)total - (int64_t)m->ndeleted; /* equality deleted */
        tg->remove = m->nmatched == 0 && m->rows > 0 && m->rows == df->record_count;
    }
    if (r->resolve && resolved_already(m->task, tg))
        return pinned_olds(r, m->task); /* the file keeps its vector */
    bool whole = r->fv >= 3; /* a vector holds every delete of its file */
    size_t n = tg->remove ? 0 : whole ? total : m->nmatched;
    if (n) {
        tg->pos = floe_arena_alloc(&r->arena, n * sizeof *tg->pos);
        if (!tg->pos)
            return floe_error_set(r->err, FLOE_ENOMEM, "out of memory");
        if (r->resolve) {
            size_t i = 0, k = 0;
            for (int64_t p = 0; p < m->rows; p++) {
                if (i < m->nmatched && m->matched[i] == p)
                    i++;
                else
                    tg->pos[k++] = p;
            }
        } else if (whole) {
            size_t i = 0, j = 0, k = 0;
            while (i < m->nmatched || j < m->ndeleted)
                tg->pos[k++] = j == m->ndeleted || (i < m->nmatched && m->matched[i] < m->deleted[j])
                                   ? m->matched[i++]
                                   : m->deleted[j++];
        } else {
            memcpy(tg->pos, m->matched, n * sizeof *tg->pos);
        }
        tg->npos = n;
    }
    /* what the new state replaces: the file's vector and the position delete files
     * scoped to it (v3: merged into the new vector; any version: the file goes) */
    for (size_t d = 0; d < m->task->ndeletes && (whole || tg->remove); d++) {
        const floe_data_file *dd = m->task->deletes[d];
        if (floe_data_file_is_dv(dd) || scoped_to(dd, df->file_path))
            FLOE_FORWARD_IF_ERROR(add_old(r, dd));
        else if (r->resolve)
            FLOE_FORWARD_IF_ERROR(resolved_out(r, dd));
    }
    int rc = floe_keyset_put(&r->target_idx, (const uint8_t *)tg->file.file_path,
                             strlen(tg->file.file_path), (int64_t)r->ntargets, NULL);
    if (rc == 0) {
        FLOE_FORWARD_IF_ERROR(partition_key(&r->kb, tg->spec_id, tg->file.partition,
                                            tg->file.npartition, r->err));
        uint8_t *k = floe_arena_alloc(&r->arena, r->kb.len);
        if (!k)
            return floe_error_set(r->err, FLOE_ENOMEM, "out of memory");
        memcpy(k, r->kb.data, r->kb.len);
        tg->pkey = k;
        tg->pkeylen = r->kb.len;
        rc = floe_keyset_put(&r->target_parts, r->kb.data, r->kb.len, 0, NULL);
    }
    if (rc < 0)
        return floe_error_set(r->err, rc, "%s", floe_strerror(rc));
    r->ntargets++;
    return 0;
}

/* The head of the branch in m (NULL when the table has no snapshot there). */
static int branch_head(const run *r, const floe_table_metadata *m, const floe_snapshot **out,
                       floe_error *err) {
    *out = NULL;
    if (!r->branch) {
        *out = floe_table_metadata_current_snapshot(m);
        return 0;
    }
    const floe_snapshot_ref *ref = floe_table_metadata_ref(m, r->branch);
    FLOE_RETURN_ERROR_IF(!ref, err, FLOE_ENOTFOUND,
                         "no branch named %s (create it with floe ref create)", r->branch);
    FLOE_RETURN_ERROR_IF(ref->is_tag, err, FLOE_EINVALID, "%s is a tag, not a branch",
                         r->branch);
    *out = floe_table_metadata_snapshot(m, ref->snapshot_id);
    FLOE_RETURN_ERROR_IF(!*out, err, FLOE_ECORRUPT,
                         "branch %s names a missing snapshot %" PRId64, r->branch,
                         ref->snapshot_id);
    return 0;
}

/* Does a task have delete files a vector would replace: equality deletes, position
 * delete files, or more than one vector? */
static bool needs_resolving(const floe_scan_task *task) {
    size_t dvs = 0;
    for (size_t d = 0; d < task->ndeletes; d++) {
        if (!floe_data_file_is_dv(task->deletes[d]))
            return true;
        dvs++;
    }
    return dvs > 1;
}

/* Resolve mode: the plan (no filter) holds every live data file. The files with deletes
 * to resolve (and, with a selection, that may hold rows it matches) are read; the
 * equality and position delete files that also apply to a file left out are pinned. */
static int find_resolvable(run *r, floe_scan_options *so) {
    floe_error *err = r->err;
    int rc = 0;
    floe_scan_plan *sel = NULL;
    floe_keyset chosen;
    memset(&chosen, 0, sizeof chosen);
    floe_scan_task *tasks = NULL;
    if (r->select) {
        so->where = r->select;
        FLOE_CHECK(floe_scan_plan_files(r->t, so, &sel, err));
        for (size_t i = 0; i < sel->ntasks && rc == 0; i++)
            rc = floe_keyset_put(&chosen, sel->tasks[i].file->file_path,
                                 strlen(sel->tasks[i].file->file_path), 0, NULL);
    }
    size_t ntasks = r->plan->ntasks, n = 0;
    tasks = floe_calloc(ntasks ? ntasks : 1, sizeof *tasks);
    if (rc < 0 || !tasks)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < ntasks; i++) {
        const floe_scan_task *task = &r->plan->tasks[i];
        const char *path = task->file->file_path;
        if ((rc = floe_keyset_put(&r->plan_files, path, strlen(path), 0, NULL)) < 0)
            FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
        if (needs_resolving(task) && (!sel || floe_keyset_find(&chosen, path, strlen(path)))) {
            tasks[n++] = *task;
            continue;
        }
        for (size_t d = 0; d < task->ndeletes; d++) {
            FLOE_CHECK(delete_key(&r->kb, task->deletes[d], err));
            if ((rc = floe_keyset_put(&r->pinned, r->kb.data, r->kb.len, 0, NULL)) < 0)
                FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
        }
    }
    if (n) {
        /* the same plan (schema, no filter), its chosen tasks only */
        floe_scan_plan some = *r->plan;
        some.tasks = tasks;
        some.ntasks = n;
        FLOE_CHECK(floe_scan_match_rows(r->t, &some, NULL, on_match, r, NULL, err));
    }
done:
    floe_free(tasks);
    floe_keyset_free(&chosen);
    floe_scan_plan_free(sel);
    return rc;
}

static int open_manifest(run *r, const floe_manifest_file *mf, floe_manifest_reader **rd,
                         floe_error *err) {
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(r->t, mf->manifest_path, &uri, err));
    floe_manifest_read_options ro = {.manifest = mf, .allow_deletion_vectors = true};
    int rc = floe_manifest_reader_open(floe_table_io(r->t), uri, &ro, rd, err);
    floe_free(uri);
    return rc;
}

/* The manifest list of snapshot head, into *bl (in arena). */
static int read_list(run *r, const floe_snapshot *head, floe_arena *arena,
                     floe_manifest_list *bl, floe_error *err) {
    FLOE_RETURN_ERROR_IF(!head->manifest_list, err, FLOE_EUNSUPPORTED,
                         "snapshot %" PRId64 " has no manifest list", head->snapshot_id);
    char *src = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(r->t, head->manifest_list, &src, err));
    floe_manifest_list_read_options lo = {.has_snapshot_id = true,
                                          .snapshot_id = head->snapshot_id};
    int rc = floe_manifest_list_read(floe_table_io(r->t), src, &lo, arena, bl, err);
    floe_free(src);
    return rc;
}

/* After reading manifest mf through (rc: the last floe_manifest_reader_next's): close
 * *rd, and on an error say which manifest. 0 when it was read to its end. */
static int manifest_done(floe_manifest_reader **rd, const floe_manifest_file *mf, int rc,
                         floe_error *err) {
    floe_manifest_reader_close(*rd);
    *rd = NULL;
    if (rc < 0) {
        floe_error_prefix(err, "manifest %s: ", mf->manifest_path);
        return rc;
    }
    return 0;
}

/* Resolve mode: the delete files live at the planned head that the plan paired with no
 * live data file apply to nothing (spec "Scan Planning"): an equality delete no older
 * than every data file of its partition (after a compaction), a position delete file or
 * vector whose data files are gone. They are removed in the same commit; the commit's
 * validation keeps that right (a data file added meanwhile with an older sequence
 * number plans again). */
static int find_dangling(run *r, const floe_snapshot *head) {
    floe_error *err = r->err;
    int rc = 0;
    floe_keyset paired;
    memset(&paired, 0, sizeof paired);
    floe_manifest_list bl = {0};
    floe_arena arena;
    floe_arena_init(&arena, 16 * 1024);
    floe_manifest_reader *rd = NULL;
    for (size_t i = 0; i < r->plan->ntasks; i++) {
        const floe_scan_task *task = &r->plan->tasks[i];
        for (size_t d = 0; d < task->ndeletes; d++) {
            FLOE_CHECK(delete_key(&r->kb, task->deletes[d], err));
            if ((rc = floe_keyset_put(&paired, r->kb.data, r->kb.len, 0, NULL)) < 0)
                FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
        }
    }
    FLOE_CHECK(read_list(r, head, &arena, &bl, err));
    for (size_t mi = 0; mi < bl.nfiles; mi++) {
        const floe_manifest_file *mf = &bl.files[mi];
        if (mf->content != FLOE_MANIFEST_DELETES)
            continue;
        FLOE_CHECK(open_manifest(r, mf, &rd, err));
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(rd, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED || e->file.content == FLOE_CONTENT_DATA)
                continue;
            if ((rc = delete_key(&r->kb, &e->file, err)) < 0)
                break;
            if (floe_keyset_find(&paired, r->kb.data, r->kb.len))
                continue;
            floe_log(FLOE_LOG_DEBUG, "rewrite-deletes: %s applies to no live data file: "
                     "removed", e->file.file_path);
            if ((rc = add_old(r, &e->file)) < 0)
                break;
        }
        FLOE_CHECK(manifest_done(&rd, mf, rc, err));
    }
done:
    floe_manifest_reader_close(rd);
    floe_keyset_free(&paired);
    floe_arena_reset(&arena);
    return rc;
}

static int find_rows(run *r) {
    floe_error *err = r->err;
    const floe_table_metadata *m = floe_table_metadata_get(r->t);
    const floe_snapshot *head = NULL;
    FLOE_FORWARD_IF_ERROR(branch_head(r, m, &head, err));
    if (!head)
        return 0;
    r->plan_seq = head->sequence_number;
    /* the head as the commit will see it: the filter binds to the current schema (a
     * column renamed, promoted or dropped and added again is the current one) */
    floe_scan_options so = {.where = r->o->where, .has_snapshot_id = true,
                            .snapshot_id = head->snapshot_id, .current_schema = true};
    FLOE_FORWARD_IF_ERROR(floe_scan_plan_files(r->t, &so, &r->plan, err));
    if (r->resolve) {
        FLOE_FORWARD_IF_ERROR(find_resolvable(r, &so));
        return find_dangling(r, head);
    }
    return floe_scan_match_rows(r->t, r->plan, NULL, on_match, r, NULL, err);
}

/* ---------------------------------------------------------------------------------------
 * writing the delete files
 * ------------------------------------------------------------------------------------- */

static int push_added(run *r, const floe_data_file *f, int32_t spec_id) {
    added_delete *na = floe_realloc(r->added, (r->nadded + 1) * sizeof *na);
    if (!na)
        return floe_error_set(r->err, FLOE_ENOMEM, "out of memory");
    r->added = na;
    r->added[r->nadded].file = *f;
    r->added[r->nadded].spec_id = spec_id;
    r->nadded++;
    return 0;
}

/* A kept target with rows deleted (resolving may find none: its equality deletes
 * matched nothing). */
static bool has_vector(const target *tg) { return !tg->remove && tg->npos > 0; }

/* v3: every kept target's vector in one Puffin file. */
static int write_vectors(run *r, const char *rec_dir, const char *phys_dir) {
    floe_error *err = r->err;
    int rc = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->ntargets; i++)
        n += has_vector(&r->targets[i]);
    if (!n)
        return 0;
    const char **paths = floe_calloc(n, sizeof *paths);
    floe_dv_positions *pos = floe_calloc(n, sizeof *pos);
    int64_t *offs = floe_calloc(n, sizeof *offs), *lens = floe_calloc(n, sizeof *lens);
    char *name = floe_asprintf("%s-deletes.puffin", r->uuid);
    char *rec = name ? floe_io_join(rec_dir, name) : NULL;
    char *phys = name ? floe_io_join(phys_dir, name) : NULL;
    if (!paths || !pos || !offs || !lens || !rec || !phys)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < r->ntargets; i++) {
        if (!has_vector(&r->targets[i]))
            continue;
        paths[k] = r->targets[i].file.file_path;
        pos[k] = (floe_dv_positions){r->targets[i].pos, r->targets[i].npos};
        k++;
    }
    FLOE_CHECK(track(r, rec));
    int64_t size = 0;
    FLOE_CHECK(floe_puffin_write_dvs(floe_table_io(r->t), phys, paths, pos, n, offs, lens, &size,
                                     err));
    const char *rec_a = floe_arena_strdup(&r->arena, rec);
    if (!rec_a)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    k = 0;
    for (size_t i = 0; i < r->ntargets; i++) {
        const target *tg = &r->targets[i];
        if (!has_vector(tg))
            continue;
        floe_data_file f = {.content = FLOE_CONTENT_POSITION_DELETES,
                            .file_path = rec_a,
                            .file_format = "puffin",
                            .partition = tg->file.partition,
                            .npartition = tg->file.npartition,
                            .record_count = (int64_t)tg->npos,
                            .file_size_in_bytes = size,
                            .referenced_data_file = tg->file.file_path,
                            .has_content_offset = true,
                            .content_offset = offs[k],
                            .has_content_size = true,
                            .content_size_in_bytes = lens[k]};
        k++;
        FLOE_CHECK(push_added(r, &f, tg->spec_id));
    }
done:
    floe_free(paths);
    floe_free(pos);
    floe_free(offs);
    floe_free(lens);
    floe_free(name);
    floe_free(rec);
    floe_free(phys);
    return rc;
}

static bool same_partition(const target *x, const target *y) {
    return x->pkeylen == y->pkeylen && !memcmp(x->pkey, y->pkey, x->pkeylen);
}

/* By partition (spec id first in the key), then path. */
static int cmp_target(const void *a, const void *b) {
    const target *x = a, *y = b;
    size_t n = x->pkeylen < y->pkeylen ? x->pkeylen : y->pkeylen;
    int c = memcmp(x->pkey, y->pkey, n);
    if (c == 0 && x->pkeylen != y->pkeylen)
        c = x->pkeylen < y->pkeylen ? -1 : 1;
    return c ? c : strcmp(x->file.file_path, y->file.file_path);
}

static const char POS_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":2147483546,\"name\":\"file_path\",\"required\":true,\"type\":\"string\"},"
    "{\"id\":2147483545,\"name\":\"pos\",\"required\":true,\"type\":\"long\"}]}";

/* v2: one position delete file per partition for targets[from..to) (sorted by path). */
static int write_position_file(run *r, const floe_schema *ps, const floe_metrics_config *mc,
                               size_t from, size_t to, int seq, const char *rec_dir,
                               const char *phys_dir) {
    floe_error *err = r->err;
    int rc = 0;
    floe_batch b;
    memset(&b, 0, sizeof b);
    floe_pq_writer *w = NULL;
    floe_pq_file_info fi;
    bool have_fi = false;
    char *name = floe_asprintf("%s-pos-deletes-%05d.parquet", r->uuid, seq);
    char *rec = name ? floe_io_join(rec_dir, name) : NULL;
    char *phys = name ? floe_io_join(phys_dir, name) : NULL;
    if (!rec || !phys)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_pq_write_options po;
    FLOE_CHECK(floe_table_parquet_options(floe_table_metadata_get(r->t), &po, err));
    po.target_file_size = 0;
    po.variant_shredding[0] = 0; /* a position delete file has no variant */
    FLOE_CHECK(track(r, rec));
    FLOE_CHECK(floe_pq_writer_open(floe_table_io(r->t), phys, ps, &po, &w, err));
    if (floe_batch_init(&b, ps) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t nfiles = 0;
    for (size_t i = from; i < to; i++) {
        const target *tg = &r->targets[i];
        if (tg->remove)
            continue;
        nfiles++;
        size_t plen = strlen(tg->file.file_path);
        for (size_t k = 0; k < tg->npos; k++) {
            if (floe_colbuf_push_value(&b.cols[0], 0, tg->file.file_path, plen) < 0 ||
                floe_colbuf_push_value(&b.cols[1], 0, &tg->pos[k], 8) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            b.nrows++;
            if (b.nrows == 65536) {
                FLOE_CHECK(floe_pq_writer_write_batch(w, &b, err));
                floe_batch_clear(&b);
            }
        }
    }
    if (b.nrows)
        FLOE_CHECK(floe_pq_writer_write_batch(w, &b, err));
    rc = floe_pq_writer_close(w, &fi, err);
    w = NULL;
    if (rc < 0)
        goto done;
    have_fi = true;
    floe_data_file f;
    memset(&f, 0, sizeof f);
    FLOE_CHECK(floe_data_file_from_parquet(&fi, mc, &r->arena, &f, err));
    const target *first = NULL;
    for (size_t i = from; i < to && !first; i++)
        if (!r->targets[i].remove)
            first = &r->targets[i];
    f.content = FLOE_CONTENT_POSITION_DELETES;
    if (!(f.file_path = floe_arena_strdup(&r->arena, rec)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    f.partition = first->file.partition;
    f.npartition = first->file.npartition;
    f.referenced_data_file = nfiles == 1 ? first->file.file_path : NULL;
    FLOE_CHECK(push_added(r, &f, first->spec_id));
done:
    floe_pq_writer_abort(w);
    if (have_fi)
        floe_pq_file_info_free(&fi);
    floe_batch_free(&b);
    floe_free(name);
    floe_free(rec);
    floe_free(phys);
    return rc;
}

/* The target index after the targets were reordered. */
static int index_targets(run *r) {
    floe_keyset_free(&r->target_idx);
    memset(&r->target_idx, 0, sizeof r->target_idx);
    for (size_t i = 0; i < r->ntargets; i++) {
        int rc = floe_keyset_put(&r->target_idx, (const uint8_t *)r->targets[i].file.file_path,
                                 strlen(r->targets[i].file.file_path), (int64_t)i, NULL);
        if (rc < 0)
            return floe_error_set(r->err, rc, "%s", floe_strerror(rc));
    }
    return 0;
}

static int write_position_files(run *r, const char *rec_dir, const char *phys_dir) {
    floe_error *err = r->err;
    int rc = 0;
    floe_schema *ps = NULL;
    floe_metrics_config *mc = NULL;
    /* one file per partition, its rows sorted by path and position */
    if (r->ntargets > 1)
        qsort(r->targets, r->ntargets, sizeof *r->targets, cmp_target);
    FLOE_CHECK(index_targets(r));
    FLOE_CHECK(floe_schema_parse(POS_SCHEMA, strlen(POS_SCHEMA), &ps, err));
    /* file_path bounds whole, so a planner can tell which files a delete file covers */
    const floe_kv full = {FLOE_PROP_METRICS_DEFAULT, "full"};
    FLOE_CHECK(floe_metrics_config_new(&full, 1, ps, NULL, &mc, err));
    int seq = 0;
    for (size_t i = 0; i < r->ntargets;) {
        size_t j = i + 1, kept = !r->targets[i].remove;
        for (; j < r->ntargets && same_partition(&r->targets[i], &r->targets[j]); j++)
            kept += !r->targets[j].remove;
        if (kept)
            FLOE_CHECK(write_position_file(r, ps, mc, i, j, seq++, rec_dir, phys_dir));
        i = j;
    }
done:
    floe_metrics_config_free(mc);
    floe_schema_free(ps);
    return rc;
}

static int write_delete_files(run *r) {
    char *rec_dir = NULL, *phys_dir = NULL;
    floe_error *err = r->err;
    int rc = 0;
    FLOE_CHECK(floe_table_data_dir(r->t, &rec_dir, err));
    FLOE_CHECK(floe_table_resolve_path(r->t, rec_dir, &phys_dir, err));
    if (r->fv >= 3)
        FLOE_CHECK(write_vectors(r, rec_dir, phys_dir));
    else
        FLOE_CHECK(write_position_files(r, rec_dir, phys_dir));
done:
    floe_free(rec_dir);
    floe_free(phys_dir);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * the commit
 * ------------------------------------------------------------------------------------- */

typedef struct attempt {
    run *r;
    const floe_table_metadata *base;
    int fv;
    floe_arena arena;
    bool *hits;                   /* per base manifest: rewritten */
    floe_manifest_file *out;
    size_t nout, outcap;
    int64_t first_row_id, added_rows;
} attempt;

static int out_push(attempt *a, const floe_manifest_file *f, floe_error *err) {
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

static void replan(run *r, const char *what, const char *path) {
    if (r->replan)
        return;
    r->replan = true;
    snprintf(r->replan_why, sizeof r->replan_why, "%s%s", what, path ? path : "");
    floe_log(FLOE_LOG_INFO, "%s: planning again: %s", r->resolve ? "rewrite-deletes" : "delete",
             r->replan_why);
}

/* Spec spec_id bound for the base (cached per run: specs never change). */
static int bound(run *r, const floe_table_metadata *m, int32_t id, const bound_spec **out,
                 floe_error *err) {
    for (size_t i = 0; i < r->nspecs; i++)
        if (r->specs[i].id == id) {
            *out = &r->specs[i];
            return 0;
        }
    bound_spec *ns = floe_realloc(r->specs, (r->nspecs + 1) * sizeof *ns);
    FLOE_RETURN_ERROR_IF(!ns, err, FLOE_ENOMEM, "out of memory");
    r->specs = ns;
    bound_spec *b = &r->specs[r->nspecs];
    memset(b, 0, sizeof *b);
    b->id = id;
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_bind_spec(m, id, &b->schema, &b->spec, err));
    r->nspecs++;
    *out = b;
    return 0;
}

static int64_t entry_seq(const floe_manifest_entry *e) {
    if (e->has_file_sequence_number)
        return e->file_sequence_number;
    return e->has_sequence_number ? e->sequence_number : 0;
}

/* Does a live entry of the base added after the planned head touch this delete? */
static int check_new(attempt *a, const floe_manifest_file *mf, const floe_manifest_reader *rd,
                     const floe_manifest_entry *e, floe_error *err) {
    run *r = a->r;
    const floe_data_file *f = &e->file;
    if (f->content == FLOE_CONTENT_DATA && r->resolve) {
        /* a file added later (sequence number above the planned head's) is out of reach
         * of every delete file planned, so of those removed; one added with an older
         * sequence number (a compaction keeping its starting one) may not be */
        if ((e->has_sequence_number && e->sequence_number > r->plan_seq) ||
            floe_keyset_find(&r->plan_files, f->file_path, strlen(f->file_path)))
            return 0;
        replan(r, "a concurrent commit added a data file with an older sequence number: ",
               f->file_path);
        return 0;
    }
    if (f->content == FLOE_CONTENT_DATA) {
        if (!e->has_sequence_number || e->sequence_number <= r->plan_seq)
            return 0;
        const floe_expr *filter = floe_scan_plan_filter(r->plan);
        bool may = floe_expr_file_may_match(filter, floe_scan_plan_schema(r->plan), f);
        const floe_partition_spec *sp = floe_manifest_reader_spec(rd);
        if (may && sp && sp->bound)
            may = floe_expr_partition_may_match(filter, sp, f->partition, f->npartition);
        if (may)
            replan(r, "a concurrent commit added a data file the filter may match: ",
                   f->file_path);
        return 0;
    }
    if (entry_seq(e) <= r->plan_seq)
        return 0;
    if (r->resolve && f->content == FLOE_CONTENT_EQUALITY_DELETES)
        return 0; /* applies after the commit as before; the vectors stay right */
    if (f->referenced_data_file) {
        if (floe_keyset_find(&r->target_idx, (const uint8_t *)f->referenced_data_file,
                             strlen(f->referenced_data_file)))
            replan(r, "a concurrent commit added deletes for ", f->referenced_data_file);
        return 0;
    }
    if (f->npartition == 0 && r->ntargets) {
        replan(r, "a concurrent commit added unpartitioned deletes: ", f->file_path);
        return 0;
    }
    FLOE_FORWARD_IF_ERROR(partition_key(&r->kb, mf->partition_spec_id, f->partition,
                                        f->npartition, err));
    if (floe_keyset_find(&r->target_parts, r->kb.data, r->kb.len))
        replan(r, "a concurrent commit added deletes in the partition of a planned file: ",
               f->file_path);
    return 0;
}

/* Pass 1: the base's live entries against the plan. */
static int read_base(attempt *a, const floe_manifest_list *bl, bool moved, floe_error *err) {
    run *r = a->r;
    int rc = 0;
    for (size_t i = 0; i < r->ntargets; i++)
        r->targets[i].present = false;
    for (size_t i = 0; i < r->nolds; i++)
        r->olds[i].found = false;
    floe_buf key;
    floe_buf_init(&key, 0);
    for (size_t mi = 0; mi < bl->nfiles && rc == 0 && !r->replan; mi++) {
        const floe_manifest_file *mf = &bl->files[mi];
        floe_manifest_reader *rd = NULL;
        FLOE_CHECK(open_manifest(r, mf, &rd, err));
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(rd, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            if (e->file.content == FLOE_CONTENT_DATA) {
                int64_t *ti = floe_keyset_find(&r->target_idx, (const uint8_t *)e->file.file_path,
                                               strlen(e->file.file_path));
                if (ti) {
                    r->targets[*ti].present = true;
                    if (r->targets[*ti].remove)
                        a->hits[mi] = true;
                    continue;
                }
            } else {
                if ((rc = delete_key(&key, &e->file, err)) < 0)
                    break;
                int64_t *oi = floe_keyset_find(&r->old_idx, key.data, key.len);
                if (oi) {
                    r->olds[*oi].found = true;
                    a->hits[mi] = true;
                    continue;
                }
            }
            if (moved && (rc = check_new(a, mf, rd, e, err)) < 0)
                break;
        }
        rc = manifest_done(&rd, mf, rc, err);
    }
    for (size_t i = 0; rc == 0 && i < r->ntargets; i++)
        if (!r->targets[i].present)
            replan(r, "a concurrent commit removed ", r->targets[i].file.file_path);
    for (size_t i = 0; rc == 0 && i < r->nolds; i++)
        if (!r->olds[i].found)
            replan(r, "a concurrent commit removed the delete file ", r->olds[i].file.file_path);
done:
    floe_buf_free(&key);
    return rc;
}

static int writer_open(attempt *a, floe_manifest_content content, int32_t spec_id, int *mseq,
                       floe_manifest_writer **w, char **rec, floe_error *err) {
    run *r = a->r;
    const bound_spec *bs = NULL;
    FLOE_FORWARD_IF_ERROR(bound(r, a->base, spec_id, &bs, err));
    floe_manifest_write_options wo;
    floe_manifest_write_options_init(&wo);
    wo.content = content;
    wo.schema = bs->schema;
    wo.spec = bs->spec;
    wo.has_snapshot_id = true;
    wo.snapshot_id = r->snapshot_id;
    wo.format_version = a->fv;
    FLOE_FORWARD_IF_ERROR(floe_manifest_codec_from_props(a->base->properties,
                                                         a->base->n_properties, &wo.codec,
                                                         &wo.level, err));
    char *phys = NULL;
    int rc = 0;
    if (!(*rec = floe_manifest_path_new(r->md_dir, r->uuid, ++*mseq)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(track(r, *rec));
    FLOE_CHECK(floe_table_resolve_path(r->t, *rec, &phys, err));
    FLOE_CHECK(floe_manifest_writer_open(floe_table_io(r->t), phys, &wo, w, err));
done:
    floe_free(phys);
    return rc;
}

static int writer_close(attempt *a, floe_manifest_writer *w, const char *rec, floe_error *err) {
    floe_manifest_file mf;
    FLOE_FORWARD_IF_ERROR(floe_manifest_writer_close(w, NULL, &a->arena, &mf, err));
    mf.manifest_path = floe_arena_strdup(&a->arena, rec);
    FLOE_RETURN_ERROR_IF(!mf.manifest_path, err, FLOE_ENOMEM, "out of memory");
    return out_push(a, &mf, err);
}

/* Pass 2: the new delete manifests, the rewritten ones, the others as they are. */
static int write_manifests(attempt *a, const floe_manifest_list *bl, floe_error *err) {
    run *r = a->r;
    int rc = 0;
    int mseq = r->attempts * 1000;
    floe_manifest_writer *w = NULL;
    floe_manifest_reader *rd = NULL;
    char *rec = NULL;
    floe_buf key;
    floe_buf_init(&key, 0);
    /* new delete files, one manifest per spec */
    for (size_t i = 0; i < r->nadded; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = r->added[k].spec_id != r->added[i].spec_id;
        if (!first)
            continue;
        FLOE_CHECK(writer_open(a, FLOE_MANIFEST_DELETES, r->added[i].spec_id, &mseq, &w, &rec,
                               err));
        for (size_t k = i; k < r->nadded; k++)
            if (r->added[k].spec_id == r->added[i].spec_id)
                FLOE_CHECK(floe_manifest_writer_add(w, &r->added[k].file, -1, err));
        rc = writer_close(a, w, rec, err);
        w = NULL;
        floe_free(rec);
        rec = NULL;
        if (rc < 0)
            goto done;
    }
    for (size_t mi = 0; mi < bl->nfiles; mi++) {
        const floe_manifest_file *mf = &bl->files[mi];
        if (!a->hits[mi]) {
            /* a manifest left with only the entries an earlier snapshot deleted lists
             * nothing live: it is not carried */
            if (mf->added_files_count == 0 && mf->existing_files_count == 0)
                continue;
            FLOE_CHECK(out_push(a, mf, err));
            continue;
        }
        FLOE_CHECK(open_manifest(r, mf, &rd, err));
        FLOE_CHECK(writer_open(a, mf->content, mf->partition_spec_id, &mseq, &w, &rec, err));
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(rd, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            bool drop;
            if (e->file.content == FLOE_CONTENT_DATA) {
                int64_t *ti = floe_keyset_find(&r->target_idx, (const uint8_t *)e->file.file_path,
                                               strlen(e->file.file_path));
                drop = ti && r->targets[*ti].remove;
            } else {
                if ((rc = delete_key(&key, &e->file, err)) < 0)
                    break;
                drop = floe_keyset_find(&r->old_idx, key.data, key.len) != NULL;
            }
            rc = drop ? floe_manifest_writer_delete(w, e, err)
                      : floe_manifest_writer_existing(w, e, err);
            if (rc < 0)
                break;
        }
        FLOE_CHECK(manifest_done(&rd, mf, rc, err));
        rc = writer_close(a, w, rec, err);
        w = NULL;
        floe_free(rec);
        rec = NULL;
        if (rc < 0)
            goto done;
    }
done:
    floe_manifest_writer_abort(w);
    floe_manifest_reader_close(rd);
    floe_free(rec);
    floe_buf_free(&key);
    return rc;
}

typedef struct summary {
    floe_kv kv[32];
    size_t n;
    floe_arena *arena;
} summary;

static int sum_int(summary *s, const char *k, int64_t v, floe_error *err) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    const char *d = floe_arena_strdup(s->arena, buf);
    FLOE_RETURN_ERROR_IF(!d || s->n >= sizeof s->kv / sizeof s->kv[0], err, FLOE_ENOMEM,
                         "out of memory");
    s->kv[s->n++] = (floe_kv){k, d};
    return 0;
}

/* The "delete" snapshot: summary (spec "Optional Snapshot Summary Fields") and row
 * lineage. */
static int add_snapshot(attempt *a, floe_metadata_builder *b, const floe_snapshot *head,
                        const floe_manifest_list *bl, const char *list_rec, floe_error *err) {
    run *r = a->r;
    summary s = {.arena = &a->arena};
    int64_t rm_files = 0, rm_records = 0, rm_size = 0, newly = 0;
    for (size_t i = 0; i < r->ntargets; i++) {
        const target *tg = &r->targets[i];
        newly += tg->newly;
        if (tg->remove) {
            rm_files++;
            rm_records += tg->file.record_count;
            rm_size += tg->file.file_size_in_bytes;
        }
    }
    int64_t add_del = (int64_t)r->nadded, add_pos = 0, add_size = 0;
    for (size_t i = 0; i < r->nadded; i++) {
        add_pos += r->added[i].file.record_count;
        /* per entry its file's size, as the totals count (a vector: its Puffin file) */
        add_size += r->added[i].file.file_size_in_bytes;
    }
    int64_t rm_dvs = 0, rm_pos_files = 0, rm_pos = 0, rm_del_size = 0, rm_eq_files = 0,
            rm_eq = 0;
    for (size_t i = 0; i < r->nolds; i++) {
        const floe_data_file *f = &r->olds[i].file;
        if (f->content == FLOE_CONTENT_EQUALITY_DELETES) {
            rm_eq_files++;
            rm_eq += f->record_count;
        } else {
            if (floe_data_file_is_dv(f))
                rm_dvs++;
            else
                rm_pos_files++;
            rm_pos += f->record_count;
        }
        rm_del_size += f->file_size_in_bytes;
    }
    if (rm_files) {
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "deleted-data-files", rm_files, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "deleted-records", rm_records, err));
    }
    if (add_del) {
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-delete-files", add_del, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, a->fv >= 3 ? "added-dvs" : "added-position-delete-files",
                                      add_del, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-position-deletes", add_pos, err));
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "added-files-size", add_size, err));
    }
    if (r->nolds) {
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-delete-files", (int64_t)r->nolds, err));
        if (rm_dvs)
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-dvs", rm_dvs, err));
        if (rm_pos_files)
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-position-delete-files", rm_pos_files,
                                          err));
        if (rm_eq_files) {
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-equality-delete-files", rm_eq_files,
                                          err));
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-equality-deletes", rm_eq, err));
        }
        if (rm_dvs || rm_pos_files)
            FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-position-deletes", rm_pos, err));
    }
    if (rm_files || r->nolds)
        FLOE_FORWARD_IF_ERROR(sum_int(&s, "removed-files-size", rm_size + rm_del_size, err));
    FLOE_FORWARD_IF_ERROR(sum_int(&s, r->resolve ? "floe.rewrite-deletes.rows-resolved"
                                                 : "floe.delete.rows",
                                  newly, err));
    floe_snapshot_totals delta = {.records = -rm_records,
                                  .files_size = add_size - rm_size - rm_del_size,
                                  .data_files = -rm_files,
                                  .delete_files = add_del - (int64_t)r->nolds,
                                  .position_deletes = add_pos - rm_pos,
                                  .equality_deletes = -rm_eq},
                         tot;
    FLOE_FORWARD_IF_ERROR(floe_table_next_totals(r->t, head, bl->files, bl->nfiles, &delta,
                                                 &tot, err));
    for (int k = 0; k < 6; k++)
        FLOE_FORWARD_IF_ERROR(sum_int(&s, floe_snapshot_total_keys[k],
                                      floe_snapshot_total(&tot, k), err));
    floe_snapshot_new sn = {.snapshot_id = r->snapshot_id,
                            /* resolving changes no row: a "replace" (spec
                               "Snapshots"), as Iceberg's rewrite of delete files */
                            .operation = r->resolve ? "replace" : "delete",
                            .manifest_list = list_rec,
                            .summary = s.kv,
                            .n_summary = s.n,
                            .schema_id = -1,
                            .branch = r->branch,
                            .row_lineage = a->first_row_id >= 0,
                            .first_row_id = a->first_row_id,
                            .added_rows = a->added_rows};
    return floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err);
}

static int apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    run *r = ctx;
    attempt a;
    memset(&a, 0, sizeof a);
    a.r = r;
    a.base = floe_metadata_builder_base(b);
    a.fv = floe_metadata_builder_format_version(b);
    a.first_row_id = floe_metadata_builder_next_row_id(b);
    floe_arena_init(&a.arena, 64 * 1024);
    r->attempts++;
    int rc = 0;
    char *list_rec = NULL, *list_phys = NULL;
    floe_manifest_list bl = {0};
    const floe_snapshot *head = NULL;
    if (a.fv != r->fv) {
        replan(r, "a concurrent commit changed the table's format version", NULL);
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    FLOE_CHECK(floe_table_metadata_check_writable(a.base, err));
    FLOE_CHECK(branch_head(r, a.base, &head, err));
    /* the branch must still descend from the planned head: the entries added since
     * are then those with a higher sequence number */
    const floe_snapshot *anc = head;
    for (int hops = 0; anc && anc->snapshot_id != r->plan->snapshot_id && hops < 1000000;
         hops++)
        anc = anc->has_parent ? floe_table_metadata_snapshot(a.base, anc->parent_snapshot_id)
                              : NULL;
    if (!anc) {
        replan(r, "the branch no longer descends from the planned snapshot", NULL);
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    FLOE_CHECK(read_list(r, head, &a.arena, &bl, err));
    a.hits = floe_calloc(bl.nfiles + 1, sizeof *a.hits);
    if (!a.hits)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(read_base(&a, &bl, head->snapshot_id != r->plan->snapshot_id, err));
    if (r->replan) {
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    FLOE_CHECK(write_manifests(&a, &bl, err));
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    list_rec = floe_manifest_list_path_new(r->md_dir, r->snapshot_id, r->attempts, r->uuid);
    if (!list_rec)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_resolve_path(r->t, list_rec, &list_phys, err));
    floe_manifest_list_write_options lw;
    floe_manifest_list_write_options_init(&lw);
    lw.snapshot_id = r->snapshot_id;
    lw.has_parent = true;
    lw.parent_snapshot_id = head->snapshot_id;
    lw.sequence_number = seq;
    lw.format_version = a.fv;
    FLOE_CHECK(floe_manifest_codec_from_props(a.base->properties, a.base->n_properties,
                                              &lw.codec, &lw.level, err));
    if (a.first_row_id >= 0) /* v3: rewritten data manifests get row ids, carried keep */
        FLOE_CHECK(floe_manifest_list_assign_row_ids(a.out, a.nout, a.first_row_id,
                                                     &a.added_rows, err));
    FLOE_CHECK(track(r, list_rec));
    FLOE_CHECK(floe_manifest_list_write(floe_table_io(r->t), list_phys, &lw, a.out, a.nout,
                                        NULL, NULL, err));
    floe_strlist_free(&r->files.refs);
    FLOE_CHECK(floe_strlist_push(&r->files.refs, list_rec, err));
    for (size_t i = 0; i < a.nout; i++)
        FLOE_CHECK(floe_strlist_push(&r->files.refs, a.out[i].manifest_path, err));
    for (size_t i = 0; i < r->nadded; i++)
        FLOE_CHECK(floe_strlist_push(&r->files.refs, r->added[i].file.file_path, err));
    FLOE_CHECK(add_snapshot(&a, b, head, &bl, list_rec, err));
done:
    floe_free(a.hits);
    floe_free(a.out);
    floe_arena_reset(&a.arena);
    floe_free(list_rec);
    floe_free(list_phys);
    return rc;
}

/* Forget one run's plan and files (after cleanup), keeping the options. */
static void run_reset(run *r) {
    floe_scan_plan_free(r->plan);
    r->plan = NULL;
    floe_free(r->targets);
    floe_free(r->olds);
    floe_free(r->added);
    r->targets = NULL;
    r->olds = NULL;
    r->added = NULL;
    r->ntargets = r->tcap = r->nolds = r->ocap = r->nadded = 0;
    floe_keyset_free(&r->target_idx);
    floe_keyset_free(&r->old_idx);
    floe_keyset_free(&r->target_parts);
    floe_keyset_free(&r->plan_files);
    floe_keyset_free(&r->pinned);
    memset(&r->plan_files, 0, sizeof r->plan_files);
    memset(&r->pinned, 0, sizeof r->pinned);
    memset(&r->target_idx, 0, sizeof r->target_idx);
    memset(&r->old_idx, 0, sizeof r->old_idx);
    memset(&r->target_parts, 0, sizeof r->target_parts);
    floe_commit_files_free(&r->files);
    for (size_t i = 0; i < r->nspecs; i++) {
        floe_partition_spec_free(r->specs[i].spec);
        floe_schema_free(r->specs[i].schema);
    }
    floe_free(r->specs);
    r->specs = NULL;
    r->nspecs = 0;
    floe_free(r->md_dir);
    r->md_dir = NULL;
    floe_arena_reset(&r->arena);
    r->files_scanned = 0;
    r->attempts = 0;
    r->replan = false;
}

/* Plan, write and commit (again when concurrent commits interfere): the body of both
 * entry points. The removed delete files of the last plan are counted by kind in
 * removed[] (vectors, position delete files, equality delete files). */
static int run_plans(run *r, floe_delete_result *res, int64_t removed[3]) {
    floe_table *t = r->t;
    floe_error *err = r->err;
    const floe_delete_options *o = r->o;
    const char *what = r->resolve ? "rewrite-deletes" : "delete";
    floe_arena_init(&r->arena, 64 * 1024);
    floe_buf_init(&r->kb, 0);
    floe_delete_result out;
    memset(&out, 0, sizeof out);
    int max_plans = 1 + (o->max_replans > 0 ? o->max_replans : 4);
    int rc = 0;
    for (int plan = 1;; plan++) {
        out.plans = plan;
        if (plan > 1)
            FLOE_CHECK(floe_table_refresh(t, err));
        const floe_table_metadata *m = floe_table_metadata_get(t);
        r->fv = m->format_version;
        out.format_version = r->fv;
        if (r->fv < 2)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "the table is format v1: row-level deletes need format v2 or later "
                      "(floe table upgrade NS.NAME --format-version 2)");
        if (r->resolve && r->fv < 3)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "the table is format v%d: rewrite-deletes resolves deletes into deletion "
                      "vectors, which need format v3 (floe table upgrade NS.NAME "
                      "--format-version 3; v2 position delete files stay readable and are "
                      "rewritten into vectors then)", r->fv);
        FLOE_CHECK(floe_table_metadata_check_writable(m, err));
        FLOE_CHECK(find_rows(r));
        out.files_scanned = r->files_scanned;
        out.rows_deleted = out.data_files_affected = out.data_files_removed = 0;
        size_t vectors = 0;
        for (size_t i = 0; i < r->ntargets; i++) {
            out.rows_deleted += r->targets[i].newly;
            out.data_files_affected++;
            out.data_files_removed += r->targets[i].remove;
            vectors += has_vector(&r->targets[i]);
        }
        out.delete_files_removed = (int64_t)r->nolds;
        removed[0] = removed[1] = removed[2] = 0;
        for (size_t i = 0; i < r->nolds; i++) {
            const floe_data_file *f = &r->olds[i].file;
            removed[f->content == FLOE_CONTENT_EQUALITY_DELETES ? 2
                    : floe_data_file_is_dv(f)                   ? 0
                                                                : 1]++;
        }
        /* (resolving, dangling delete files alone are worth a commit) */
        if ((r->ntargets == 0 && !r->nolds) ||
            (!vectors && !r->nolds && !out.data_files_removed)) {
            out.noop = true;
            break;
        }
        if (o->dry_run) {
            out.delete_files_added = (int64_t)vectors; /* v3: one vector each */
            break;
        }
        r->snapshot_id = floe_metadata_new_snapshot_id();
        floe_uuid4(r->uuid);
        FLOE_CHECK(floe_table_metadata_write_dir(t, &r->md_dir, err));
        rc = write_delete_files(r);
        if (rc == 0)
            rc = floe_table_commit(t, apply, r, err);
        out.attempts = r->attempts;
        if (rc == FLOE_EUNKNOWN_STATE)
            goto done; /* D3: the table may reference anything written */
        if (rc < 0 || r->replan) {
            floe_commit_files_cleanup(&r->files, t, false, what);
            if (rc < 0)
                goto done;
            if (plan >= max_plans)
                FLOE_FAIL(err, FLOE_ECONFLICT,
                          "%s: gave up after planning %d times (the first plan and %d "
                          "re-plans): concurrent commits changed the planned files each "
                          "time (last: %s); nothing was changed, run it again", what, plan,
                          plan - 1, r->replan_why);
            run_reset(r);
            continue;
        }
        floe_commit_files_cleanup(&r->files, t, true, what);
        out.snapshot_id = r->snapshot_id;
        out.delete_files_added = (int64_t)r->nadded;
        break;
    }
    if (res)
        *res = out;
done:
    run_reset(r);
    floe_buf_free(&r->kb);
    return rc < 0 ? rc : 0;
}

int floe_table_delete_rows(floe_table *t, const floe_delete_options *o, floe_delete_result *res,
                           floe_error *err) {
    FLOE_RETURN_ERROR_IF(!o || !o->where || !*o->where, err, FLOE_EINVALID,
                         "delete: which rows? (a filter is required)");
    run r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.o = o;
    r.err = err;
    r.branch = o->branch && strcmp(o->branch, "main") ? o->branch : NULL;
    int64_t removed[3];
    return run_plans(&r, res, removed);
}

int floe_table_rewrite_deletes(floe_table *t, const floe_rewrite_deletes_options *o,
                               floe_rewrite_deletes_result *res, floe_error *err) {
    floe_rewrite_deletes_options none = {0};
    if (!o)
        o = &none;
    floe_delete_options dopt = {.branch = o->branch, .dry_run = o->dry_run,
                                .max_replans = o->max_replans};
    run r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.o = &dopt;
    r.err = err;
    r.resolve = true;
    r.select = o->where && *o->where ? o->where : NULL;
    r.branch = o->branch && strcmp(o->branch, "main") ? o->branch : NULL;
    floe_delete_result d;
    int64_t removed[3] = {0, 0, 0};
    FLOE_FORWARD_IF_ERROR(run_plans(&r, &d, removed));
    if (res) {
        memset(res, 0, sizeof *res);
        res->noop = d.noop;
        res->snapshot_id = d.snapshot_id;
        res->files_scanned = d.files_scanned;
        res->data_files_resolved = d.data_files_affected;
        res->data_files_removed = d.data_files_removed;
        res->rows_resolved = d.rows_deleted;
        res->dvs_added = d.delete_files_added;
        res->dvs_removed = removed[0];
        res->position_delete_files_removed = removed[1];
        res->equality_delete_files_removed = removed[2];
        res->plans = d.plans;
        res->attempts = d.attempts;
    }
    return 0;
}
