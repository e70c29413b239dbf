/*
 * schema_drop.c - the check a column drop needs beyond the metadata: no live equality
 * delete file may hold the column among its equality fields.
 *
 * Spec: format/spec.md "Equality Delete Files" (a delete row matches a data row by the
 * values of the equality_ids fields; the data files written before the drop still hold
 * the column's values). floe's readers (floe scan, floe rewrite, rewrite-deletes) take a
 * row's key from the columns of the current schema, so they cannot apply such a delete
 * once the column is gone and refuse the read; the drop is refused instead, while the
 * table can still be rewritten without those delete files.
 *
 * Which snapshots: the heads of the branches (main included): they are read and written
 * with the table's current schema. A tag, an older snapshot and a time-travel read use
 * the schema they were written with, which still holds the column.
 */
#include <inttypes.h>
#include <string.h>

#include "floe/catalog.h"
#include "floe/manifest.h"
#include "floe/table.h"
#include "floe/table_metadata.h"

typedef struct drop_use {
    int32_t *ids;          /* the dropped field and every field below it */
    size_t nids, cap;
    int64_t files;         /* live equality delete files using one of them */
    int32_t field;         /* the first one met */
    char *example;         /* ... and its delete file (owned) */
    int64_t example_snap;
    const char *example_ref;
} drop_use;

static int collect_ids(drop_use *u, const floe_field *f) {
    if (u->nids == u->cap) {
        size_t nc = u->cap ? u->cap * 2 : 16;
        int32_t *v = floe_realloc(u->ids, nc * sizeof *v);
        if (!v)
            return FLOE_ENOMEM;
        u->ids = v;
        u->cap = nc;
    }
    u->ids[u->nids++] = f->id;
    for (size_t i = 0; i < f->nchildren; i++) {
        int rc = collect_ids(u, &f->children[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A snapshot whose summary counts no equality delete has none to read. */
static bool has_no_eq_deletes(const floe_snapshot *s) {
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, "total-equality-deletes"))
            return !strcmp(s->summary[i].value, "0");
    return false;
}

static int scan_manifest(floe_table *t, const floe_manifest_file *mf, drop_use *u,
                         int64_t snap, const char *ref, floe_error *err) {
    char *uri = NULL;
    floe_manifest_reader *rd = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(t, mf->manifest_path, &uri, err));
    floe_manifest_read_options ro = {.manifest = mf, .allow_deletion_vectors = true};
    FLOE_CHECK(floe_manifest_reader_open(floe_table_io(t), uri, &ro, &rd, err));
    const floe_manifest_entry *e;
    while ((rc = floe_manifest_reader_next(rd, &e, err)) == 1) {
        if (e->status == FLOE_ENTRY_DELETED ||
            e->file.content != FLOE_CONTENT_EQUALITY_DELETES)
            continue;
        int32_t hit = -1;
        for (size_t k = 0; k < e->file.nequality_ids && hit < 0; k++)
            for (size_t j = 0; j < u->nids && hit < 0; j++)
                if (e->file.equality_ids[k] == u->ids[j])
                    hit = u->ids[j];
        if (hit < 0)
            continue;
        if (u->files++ == 0) {
            u->field = hit;
            u->example_snap = snap;
            u->example_ref = ref;
            if (!(u->example = floe_strdup(e->file.file_path)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
    }
    if (rc < 0)
        floe_error_prefix(err, "manifest %s: ", mf->manifest_path);
done:
    floe_manifest_reader_close(rd);
    floe_free(uri);
    return rc < 0 ? rc : 0;
}

/* The delete manifests of snapshot s not seen before (seen: their paths, so a manifest
 * shared by several branch heads is read once). */
static int scan_snapshot(floe_table *t, const floe_snapshot *s, const char *ref, drop_use *u,
                         floe_strlist *seen, floe_error *err) {
    if (!s->manifest_list || has_no_eq_deletes(s))
        return 0;
    floe_arena arena;
    floe_arena_init(&arena, 16 * 1024);
    floe_manifest_list ml = {0};
    char *uri = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(t, s->manifest_list, &uri, err));
    floe_manifest_list_read_options lo = {.has_snapshot_id = true,
                                          .snapshot_id = s->snapshot_id};
    FLOE_CHECK(floe_manifest_list_read(floe_table_io(t), uri, &lo, &arena, &ml, err));
    for (size_t i = 0; i < ml.nfiles; i++) {
        const floe_manifest_file *mf = &ml.files[i];
        if (mf->content != FLOE_MANIFEST_DELETES)
            continue;
        bool dup = false;
        for (size_t k = 0; k < seen->n && !dup; k++)
            dup = !strcmp(seen->items[k], mf->manifest_path);
        if (dup)
            continue;
        FLOE_CHECK(floe_strlist_push(seen, mf->manifest_path, err));
        FLOE_CHECK(scan_manifest(t, mf, u, s->snapshot_id, ref, err));
    }
done:
    floe_free(uri);
    floe_arena_reset(&arena);
    return rc;
}

int floe_table_check_drop_column(floe_table *t, const floe_table_metadata *m, const char *path,
                                 floe_error *err) {
    const floe_metadata_schema *ms = m ? floe_table_metadata_current_schema(m) : NULL;
    floe_schema *cur = NULL;
    floe_strlist seen = {0};
    drop_use u = {0};
    int rc = 0;
    if (!ms)
        return 0; /* the schema change says so */
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &cur, err));
    const floe_field *f = floe_schema_find_path(cur, path);
    if (!f)
        goto done; /* the schema change says so */
    if (collect_ids(&u, f) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    const floe_snapshot *main_head = floe_table_metadata_current_snapshot(m);
    if (main_head)
        FLOE_CHECK(scan_snapshot(t, main_head, "main", &u, &seen, err));
    for (size_t i = 0; i < m->n_refs; i++) {
        const floe_snapshot_ref *r = &m->refs[i];
        const floe_snapshot *s = floe_table_metadata_snapshot(m, r->snapshot_id);
        if (r->is_tag || !s || s == main_head)
            continue;
        FLOE_CHECK(scan_snapshot(t, s, r->name, &u, &seen, err));
    }
    if (u.files)
        FLOE_FAIL(err, FLOE_EINVALID,
                  "drop-column: %s (field %" PRId32 ") is an equality field of %" PRId64
                  " live equality delete file%s (%s, in snapshot %" PRId64 " of branch %s): "
                  "a delete matches rows by that field's values, which only the data files "
                  "written before the drop hold, and floe's readers take a row's key from "
                  "the current schema; first rewrite main so that no delete file uses it "
                  "(floe rewrite NS.NAME --option rewrite-all=true --option "
                  "remove-dangling-deletes=true) and fast-forward or drop a branch that "
                  "keeps one, then drop the column",
                  path, u.field, u.files, u.files == 1 ? "" : "s", u.example, u.example_snap,
                  u.example_ref);
done:
    floe_free(u.ids);
    floe_free(u.example);
    floe_strlist_free(&seen);
    floe_schema_free(cur);
    return rc;
}
