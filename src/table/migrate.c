/*
 * migrate.c - rewriting the paths a table records so that they name where its files are,
 * as absolute URIs: tables whose paths were recorded relative (earlier floe releases,
 * some writers), and tables relocated explicitly (a moved or copied warehouse).
 *
 * The migration is one commit of its own, made before the first commit that changes the
 * table (floe_table_commit calls it; commands that plan against the current snapshot call
 * it before planning). It changes where things are recorded and nothing else:
 *
 *   - every manifest reachable from a snapshot of the metadata is copied, Avro record for
 *     record with the writer's schema, codec and header kept, data_file.file_path (100)
 *     and referenced_data_file (143) mapped; a manifest shared by several snapshots is
 *     copied once;
 *   - every manifest list is copied the same way with manifest_path (500) and
 *     manifest_length (501) of the copies;
 *   - the metadata document gets the new location, manifest lists, metadata-log entries,
 *     statistics paths and write.*.path properties (floe_metadata_builder_map_paths).
 *
 * Snapshot ids, sequence numbers, entry statuses and statistics are kept bit for bit, so
 * readers see the same table. The copies get fresh names (the files they replace stay
 * until orphan removal, as any unreferenced file): files are never overwritten in place.
 * A position delete file records data file paths in its rows; a live one whose data
 * files' paths change is refused (FLOE_EUNSUPPORTED naming it), since its rows would
 * then name paths no manifest holds.
 *
 * A path is mapped to floe_table_migrated_path(): where floe reads it today, as an
 * absolute URI. On a conflict the copies of the failed attempt are deleted and the
 * migration runs again on the fresh metadata.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/keyset.h"
#include "floe/avro.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "iceberg/puffin.h"
#include "table_internal.h"

/* Iceberg field ids (format/spec.md "Manifests", "Manifest Lists"). */
#define ID_DATA_FILE 2
#define ID_FILE_PATH 100
#define ID_CONTENT 134
#define ID_REFERENCED_DATA_FILE 143
#define ID_CONTENT_OFFSET 144
#define ID_STATUS 0
#define ID_MANIFEST_PATH 500
#define ID_MANIFEST_LENGTH 501

typedef struct copied {
    char *from; /* recorded path of the original */
    char *to;   /* recorded (= physical) path of the copy */
    int64_t length;
} copied;

typedef struct migrate_ctx {
    floe_table *t;
    char *md_dir;         /* where the copies go */
    char uuid[37];
    int next_manifest;
    copied *manifests;    /* of this attempt */
    size_t nmanifests, cap;
    floe_strlist written; /* every copy of every attempt */
    floe_strlist puffins; /* Puffin files of live deletion vectors found readable */
    floe_hashset puffin_hashes; /* their paths' hashes -> index in puffins */
} migrate_ctx;

/* ---------------------------------------------------------------------------------------
 * Avro copies
 * ------------------------------------------------------------------------------------- */

typedef int (*record_fn)(void *ctx, const floe_avro_node *root, floe_avro_value *rec,
                         floe_arena *scratch, floe_error *err);

/* Copy the container at src to dst, each record passed through fn (which may change its
 * fields; the record's item array is the caller's own copy). *length = bytes written. */
static int copy_avro(floe_io *io, const char *src, const char *dst, record_fn fn, void *ctx,
                     int64_t *length, floe_error *err) {
    floe_input *in = NULL;
    floe_avro_reader *r = NULL;
    floe_avro_writer *w = NULL;
    floe_avro_meta *meta = NULL;
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_arena scratch;
    floe_arena_init(&scratch, 16 * 1024);
    int rc = 0;
    FLOE_CHECK(floe_input_open(io, src, &in, err));
    floe_avro_reader_options ao = {.name = src};
    FLOE_CHECK(floe_avro_reader_open_input(in, &ao, &r, err));
    const floe_avro_schema *schema = floe_avro_reader_writer_schema(r);
    const floe_avro_node *root = floe_avro_schema_root(schema);
    size_t nm = floe_avro_reader_meta_count(r), k = 0;
    meta = floe_calloc(nm ? nm : 1, sizeof *meta);
    if (!meta)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nm; i++) {
        const char *key;
        const void *v;
        size_t len;
        floe_avro_reader_meta_at(r, i, &key, &v, &len);
        if (strncmp(key, "avro.", 5))
            meta[k++] = (floe_avro_meta){key, v, len};
    }
    floe_avro_writer_options wo = {.codec = floe_avro_reader_codec(r), .meta = meta,
                                   .n_meta = k};
    FLOE_CHECK(floe_avro_writer_open(schema, &wo, &out, &w, err));
    for (;;) {
        const floe_avro_value *v = NULL;
        rc = floe_avro_reader_next(r, &v, err);
        if (rc <= 0)
            break;
        floe_arena_reset(&scratch);
        floe_avro_value rec = *v;
        if (rec.type != FLOE_AVRO_RECORD)
            FLOE_FAIL(err, FLOE_ECORRUPT, "%s: a record is not an Avro record", src);
        floe_avro_value *items = floe_arena_alloc(&scratch, (rec.u.list.n + 1) * sizeof *items);
        if (!items)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        memcpy(items, rec.u.list.items, rec.u.list.n * sizeof *items);
        rec.u.list.items = items;
        FLOE_CHECK(fn(ctx, root, &rec, &scratch, err));
        FLOE_CHECK(floe_avro_writer_append(w, &rec, err));
    }
    FLOE_CHECK(rc);
    rc = floe_avro_writer_close(w, err);
    w = NULL;
    FLOE_CHECK(rc);
    floe_output_options oo = {.fsync = true, .no_overwrite = true};
    FLOE_CHECK(floe_avro_write_uri(io, dst, &out, &oo, err));
    *length = (int64_t)out.len;
done:
    if (rc < 0)
        floe_error_prefix(err, "copying %s: ", src);
    floe_avro_writer_abort(w);
    floe_avro_reader_close(r);
    floe_input_close(in);
    floe_free(meta);
    floe_arena_reset(&scratch);
    floe_buf_free(&out);
    return rc;
}

/* The index of the field with this iceberg id in a record node, or -1. */
static ptrdiff_t field_index(const floe_avro_node *rec, int32_t id) {
    size_t i;
    if (!rec || rec->type != FLOE_AVRO_RECORD || !floe_avro_node_field_by_id(rec, id, &i))
        return -1;
    return (ptrdiff_t)i;
}

/* Map the string value v (in place) through the table's migrated paths. *changed tells
 * whether it differs. */
static int map_value(migrate_ctx *c, floe_avro_value *v, floe_arena *scratch, bool *changed,
                     floe_error *err) {
    *changed = false;
    if (v->type != FLOE_AVRO_STRING)
        return 0;
    char *old = floe_arena_alloc(scratch, v->u.bytes.n + 1);
    if (!old)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    memcpy(old, v->u.bytes.p, v->u.bytes.n);
    old[v->u.bytes.n] = '\0';
    char *mapped = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_migrated_path(c->t, old, &mapped, err));
    *changed = strcmp(old, mapped) != 0;
    char *kept = floe_arena_strdup(scratch, mapped);
    floe_free(mapped);
    if (!kept)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int32_t branch = v->branch;
    floe_avro_set_string(v, kept);
    v->branch = branch;
    return 0;
}

/* A live deletion vector's Puffin file (path, as recorded) is one floe can read: what the
 * migration commits, the command after it reads; a file that is not a Puffin container
 * (a bare blob, as some early writers made) stops the migration before anything is
 * committed. Each file is opened once. */
static int check_puffin(migrate_ctx *c, const char *path, floe_error *err) {
    uint64_t h = floe_hash64(path, strlen(path));
    size_t pos = 0;
    for (const int64_t *j; (j = floe_hashset_next(&c->puffin_hashes, h, &pos));)
        if (!strcmp(c->puffins.items[*j], path))
            return 0;
    char *src = NULL;
    floe_dv_file *d = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(c->t, path, &src, err));
    FLOE_CHECK(floe_dv_file_open(floe_table_io(c->t), src, &d, err));
    FLOE_CHECK(floe_strlist_push(&c->puffins, path, err));
    if ((rc = floe_hashset_add(&c->puffin_hashes, h, (int64_t)c->puffins.n - 1)) < 0)
        FLOE_FAIL(err, rc, "out of memory");
done:
    floe_dv_file_close(d);
    floe_free(src);
    return rc;
}

static int manifest_record(void *ctx, const floe_avro_node *root, floe_avro_value *rec,
                           floe_arena *scratch, floe_error *err) {
    migrate_ctx *c = ctx;
    ptrdiff_t di = field_index(root, ID_DATA_FILE);
    if (di < 0 || (size_t)di >= rec->u.list.n)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest entry without data_file");
    floe_avro_value *df = &rec->u.list.items[di];
    const floe_avro_node *dfn = root->fields[di].type;
    if (dfn->type == FLOE_AVRO_UNION) /* re-encoded files make it nullable */
        dfn = floe_avro_node_nullable(dfn);
    if (df->type != FLOE_AVRO_RECORD || !dfn)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest entry without data_file");
    floe_avro_value *items = floe_arena_alloc(scratch, (df->u.list.n + 1) * sizeof *items);
    if (!items)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    memcpy(items, df->u.list.items, df->u.list.n * sizeof *items);
    df->u.list.items = items;
    ptrdiff_t pi = field_index(dfn, ID_FILE_PATH), ri = field_index(dfn, ID_REFERENCED_DATA_FILE);
    ptrdiff_t ci = field_index(dfn, ID_CONTENT), si = field_index(root, ID_STATUS);
    if (pi < 0 || (size_t)pi >= df->u.list.n)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest entry without file_path");
    bool changed = false, ref_changed = false;
    char *recorded = NULL; /* the file's path before mapping */
    if (items[pi].type == FLOE_AVRO_STRING) {
        if (!(recorded = floe_arena_alloc(scratch, items[pi].u.bytes.n + 1)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        memcpy(recorded, items[pi].u.bytes.p, items[pi].u.bytes.n);
        recorded[items[pi].u.bytes.n] = '\0';
    }
    FLOE_FORWARD_IF_ERROR(map_value(c, &items[pi], scratch, &changed, err));
    if (ri >= 0 && (size_t)ri < df->u.list.n)
        FLOE_FORWARD_IF_ERROR(map_value(c, &items[ri], scratch, &ref_changed, err));
    bool live = si < 0 || rec->u.list.items[si].type != FLOE_AVRO_INT ||
                rec->u.list.items[si].u.i != 2;
    bool pos_deletes = ci >= 0 && (size_t)ci < df->u.list.n &&
                       items[ci].type == FLOE_AVRO_INT && items[ci].u.i == 1;
    /* A deletion vector (format v3: a blob of a Puffin file at content_offset) applies to
     * the data file its manifest entry names, mapped above: the blob's own
     * referenced-data-file property is informational (the manifest wins). A position delete
     * file holds its data files' paths in its rows, which floe does not rewrite. */
    ptrdiff_t oi = field_index(dfn, ID_CONTENT_OFFSET);
    bool dv = pos_deletes && oi >= 0 && (size_t)oi < df->u.list.n &&
              items[oi].type == FLOE_AVRO_LONG;
    if (live && dv && recorded)
        FLOE_FORWARD_IF_ERROR(check_puffin(c, recorded, err));
    if (live && pos_deletes && !dv &&
        (ri < 0 || items[ri].type != FLOE_AVRO_STRING || ref_changed))
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "position delete file %.*s names data files by the paths this "
                              "migration changes; floe does not rewrite position delete "
                              "files. Apply the deletes first with the writer that made them "
                              "(or floe rewrite before the files move), then relocate",
                              (int)items[pi].u.bytes.n, (const char *)items[pi].u.bytes.p);
    return 0;
}

/* The copy of the manifest recorded as `recorded` (made once per attempt). */
static int copy_manifest(migrate_ctx *c, const char *recorded, const copied **out,
                         floe_error *err) {
    for (size_t i = 0; i < c->nmanifests; i++)
        if (!strcmp(c->manifests[i].from, recorded)) {
            *out = &c->manifests[i];
            return 0;
        }
    if (c->nmanifests == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 16;
        copied *nm = floe_realloc(c->manifests, nc * sizeof *nm);
        if (!nm)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        c->manifests = nm;
        c->cap = nc;
    }
    char *src = NULL, *dst = floe_manifest_path_new(c->md_dir, c->uuid, c->next_manifest++);
    char *from = floe_strdup(recorded);
    int64_t len = 0;
    int rc = 0;
    if (!dst || !from)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_resolve_path(c->t, recorded, &src, err));
    FLOE_CHECK(floe_strlist_push(&c->written, dst, err));
    FLOE_CHECK(copy_avro(floe_table_io(c->t), src, dst, manifest_record, c, &len, err));
    c->manifests[c->nmanifests++] = (copied){from, dst, len};
    *out = &c->manifests[c->nmanifests - 1];
    from = dst = NULL;
done:
    floe_free(src);
    floe_free(dst);
    floe_free(from);
    return rc;
}

static int list_record(void *ctx, const floe_avro_node *root, floe_avro_value *rec,
                       floe_arena *scratch, floe_error *err) {
    migrate_ctx *c = ctx;
    ptrdiff_t pi = field_index(root, ID_MANIFEST_PATH), li = field_index(root, ID_MANIFEST_LENGTH);
    if (pi < 0 || (size_t)pi >= rec->u.list.n || rec->u.list.items[pi].type != FLOE_AVRO_STRING)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest list entry without manifest_path");
    floe_avro_value *pv = &rec->u.list.items[pi];
    char *recorded = floe_arena_alloc(scratch, pv->u.bytes.n + 1);
    if (!recorded)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    memcpy(recorded, pv->u.bytes.p, pv->u.bytes.n);
    recorded[pv->u.bytes.n] = '\0';
    const copied *m = NULL;
    FLOE_FORWARD_IF_ERROR(copy_manifest(c, recorded, &m, err));
    int32_t branch = pv->branch;
    floe_avro_set_string(pv, m->to);
    pv->branch = branch;
    if (li >= 0 && (size_t)li < rec->u.list.n && rec->u.list.items[li].type == FLOE_AVRO_LONG)
        rec->u.list.items[li].u.l = m->length;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * the commit
 * ------------------------------------------------------------------------------------- */

static int map_path(void *ctx, floe_metadata_path_kind kind, int64_t snapshot_id,
                    const char *path, char **out, floe_error *err) {
    migrate_ctx *c = ctx;
    if (kind != FLOE_PATH_MANIFEST_LIST) {
        char *mapped = NULL;
        FLOE_FORWARD_IF_ERROR(floe_table_migrated_path(c->t, path, &mapped, err));
        if (!strcmp(mapped, path))
            floe_free(mapped);
        else
            *out = mapped;
        return 0;
    }
    char *src = NULL, *dst = floe_manifest_list_path_new(c->md_dir, snapshot_id, 1, c->uuid);
    int64_t len = 0;
    int rc = 0;
    if (!dst)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_table_resolve_path(c->t, path, &src, err));
    FLOE_CHECK(floe_strlist_push(&c->written, dst, err));
    FLOE_CHECK(copy_avro(floe_table_io(c->t), src, dst, list_record, c, &len, err));
    *out = dst;
    dst = NULL;
done:
    if (rc < 0)
        floe_error_prefix(err, "snapshot %" PRId64 ": ", snapshot_id);
    floe_free(src);
    floe_free(dst);
    return rc;
}

static void reset_attempt(migrate_ctx *c) {
    for (size_t i = 0; i < c->nmanifests; i++) {
        floe_free(c->manifests[i].from);
        floe_free(c->manifests[i].to);
    }
    c->nmanifests = 0;
    c->next_manifest = 0;
    floe_uuid4(c->uuid);
}

static int migrate_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    migrate_ctx *c = ctx;
    /* another process migrated the table meanwhile (the fresh metadata is placed anew on
     * every attempt) */
    if (!c->t->migrate)
        return FLOE_COMMIT_NOOP;
    reset_attempt(c);
    floe_free(c->md_dir);
    c->md_dir = NULL;
    /* the copies go where the table's metadata files go once migrated */
    char *rec = floe_table_metadata_dir(floe_metadata_builder_base(b));
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_table_migrated_path(c->t, rec, &c->md_dir, err);
    floe_free(rec);
    if (rc < 0)
        return rc;
    return floe_metadata_builder_map_paths(b, map_path, c, err);
}

int floe_table_migrate(floe_table *t, floe_error *err) {
    if (!t->migrate || t->migrating)
        return 0;
    migrate_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    const char *from = t->metadata->location;
    char *was = floe_strdup(from);
    if (!was)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    t->migrating = true;
    int rc = floe_table_commit(t, migrate_apply, &c, err);
    t->migrating = false;
    if (rc == 0) {
        floe_log(FLOE_LOG_INFO, "table %s: recorded paths migrated from %s to %s (%zu "
                 "manifests copied)", t->name ? t->name : t->root, was, t->metadata->location,
                 c.nmanifests);
        /* keep only what the committed metadata references: the last attempt's copies */
        for (size_t i = 0; i < c.written.n; i++) {
            bool used = false;
            for (size_t k = 0; k < c.nmanifests && !used; k++)
                used = !strcmp(c.manifests[k].to, c.written.items[i]);
            for (size_t k = 0; k < t->metadata->n_snapshots && !used; k++)
                used = t->metadata->snapshots[k].manifest_list &&
                       !strcmp(t->metadata->snapshots[k].manifest_list, c.written.items[i]);
            if (!used)
                floe_io_delete(floe_table_io(t), c.written.items[i], NULL);
        }
    } else if (rc != FLOE_EUNKNOWN_STATE) {
        for (size_t i = 0; i < c.written.n; i++)
            floe_io_delete(floe_table_io(t), c.written.items[i], NULL);
        floe_error_prefix(err, "migrating the recorded paths of %s: ", was);
    }
    reset_attempt(&c);
    floe_free(c.manifests);
    floe_free(c.md_dir);
    floe_strlist_free(&c.written);
    floe_strlist_free(&c.puffins);
    floe_hashset_free(&c.puffin_hashes);
    floe_free(was);
    return rc;
}
