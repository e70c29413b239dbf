/*
 * manifest_write.c - writing Iceberg manifests and manifest lists (format v1, v2, v3).
 *
 * Spec: format/spec.md "Manifests" (manifest_entry / data_file v2 and the "Manifest
 * Metadata" header keys schema, schema-id, partition-spec, partition-spec-id,
 * format-version, content), "Sequence Number Inheritance" (ADDED entries leave sequence
 * numbers null; EXISTING and DELETED entries carry them), "Manifest Lists" (manifest_file
 * v2, field_summary), Appendix D (partition summary bounds), "Row Lineage" (v3: "First
 * Row ID Inheritance" - ADDED data files leave first_row_id null, EXISTING and DELETED ones
 * carry the inherited value; "First Row ID Assignment" - floe_manifest_list_assign_row_ids).
 *
 * The manifest writer's states:
 *
 *   open ──add/existing/delete/append──> open          (each entry encoded into the
 *     │                                                 in-memory Avro container; counts,
 *     │                                                 min sequence number and partition
 *     │                                                 summaries updated)
 *     ├──close()──> file written to the uri, manifest_file returned, writer freed
 *     └──abort()──> writer freed, nothing written
 *
 * A rejected entry (bad data, broken rule) changes nothing: the checks run before the
 * entry is encoded, and the Avro writer leaves its block as it was on failure.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/keyset.h"
#include "floe/io.h"
#include "manifest_internal.h"

/* ---------------------------------------------------------------------------------------
 * names and properties
 * ------------------------------------------------------------------------------------- */

static char *dir_join(const char *dir, const char *name) {
    size_t n = strlen(dir);
    while (n > 0 && dir[n - 1] == '/')
        n--;
    return floe_asprintf("%.*s/%s", (int)n, dir, name);
}

char *floe_manifest_path_new(const char *metadata_dir, const char *commit_uuid, int n) {
    char uuid[37];
    if (!commit_uuid) {
        floe_uuid4(uuid);
        commit_uuid = uuid;
    }
    char name[128];
    snprintf(name, sizeof name, "%.40s-m%d.avro", commit_uuid, n);
    return dir_join(metadata_dir, name);
}

char *floe_manifest_list_path_new(const char *metadata_dir, int64_t snapshot_id, int attempt,
                                  const char *commit_uuid) {
    char uuid[37];
    if (!commit_uuid) {
        floe_uuid4(uuid);
        commit_uuid = uuid;
    }
    char name[160];
    snprintf(name, sizeof name, "snap-%" PRId64 "-%d-%.40s.avro", snapshot_id, attempt,
             commit_uuid);
    return dir_join(metadata_dir, name);
}

static const char *prop(const floe_kv *props, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (props[i].key && strcmp(props[i].key, key) == 0)
            return props[i].value;
    return NULL;
}

static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

int floe_manifest_codec_from_props(const floe_kv *props, size_t nprops, floe_codec *codec,
                                   int *level, floe_error *err) {
    const char *c = prop(props, nprops, FLOE_PROP_AVRO_CODEC);
    const char *l = prop(props, nprops, FLOE_PROP_AVRO_LEVEL);
    floe_codec cc;
    if (!c || ieq(c, "gzip") || ieq(c, "deflate"))
        cc = FLOE_CODEC_DEFLATE;
    else if (ieq(c, "zstd") || ieq(c, "zstandard"))
        cc = FLOE_CODEC_ZSTD;
    else if (ieq(c, "snappy"))
        cc = FLOE_CODEC_SNAPPY;
    else if (ieq(c, "uncompressed") || ieq(c, "none") || ieq(c, "null"))
        cc = FLOE_CODEC_UNCOMPRESSED;
    else
        return floe_error_set(err, FLOE_EINVALID, "table property %s=%s: floe writes gzip, "
                              "zstd, snappy or uncompressed Avro", FLOE_PROP_AVRO_CODEC, c);
    int lv = 0;
    if (l && *l) {
        char *end;
        long v = strtol(l, &end, 10);
        if (*end || v < -1 || v > 22)
            return floe_error_set(err, FLOE_EINVALID, "table property %s=%s: not a "
                                  "compression level", FLOE_PROP_AVRO_LEVEL, l);
        lv = v < 0 ? 0 : (int)v;
        if (cc == FLOE_CODEC_DEFLATE && lv > 9)
            return floe_error_set(err, FLOE_EINVALID, "table property %s=%s: gzip levels "
                                  "are 0..9", FLOE_PROP_AVRO_LEVEL, l);
    }
    *codec = cc;
    *level = lv;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * copies
 * ------------------------------------------------------------------------------------- */

static int nomem(floe_error *err) { return floe_error_set(err, FLOE_ENOMEM, "out of memory"); }

static void *dup_or_null(floe_arena *a, const void *p, size_t n, bool *fail) {
    if (!p || n == 0)
        return NULL;
    void *q = floe_arena_memdup(a, p, n);
    if (!q)
        *fail = true;
    return q;
}

static const char *strdup_or_null(floe_arena *a, const char *s, bool *fail) {
    if (!s)
        return NULL;
    char *q = floe_arena_strdup(a, s);
    if (!q)
        *fail = true;
    return q;
}

int floe_manifest_file_copy(const floe_manifest_file *f, floe_arena *a, floe_manifest_file *out,
                            floe_error *err) {
    bool fail = false;
    floe_manifest_file c = *f;
    c.manifest_path = strdup_or_null(a, f->manifest_path, &fail);
    c.key_metadata = dup_or_null(a, f->key_metadata, f->key_metadata_len, &fail);
    if (f->npartitions) {
        floe_field_summary *s = floe_arena_alloc(a, f->npartitions * sizeof *s);
        if (!s)
            return nomem(err);
        for (size_t i = 0; i < f->npartitions; i++) {
            s[i] = f->partitions[i];
            s[i].lower_bound = dup_or_null(a, s[i].lower_bound, s[i].lower_len, &fail);
            s[i].upper_bound = dup_or_null(a, s[i].upper_bound, s[i].upper_len, &fail);
        }
        c.partitions = s;
    }
    if (fail)
        return nomem(err);
    *out = c;
    return 0;
}

static int copy_counts(floe_arena *a, floe_count_map *m) {
    if (!m->n)
        return 0;
    floe_column_count *c = floe_arena_memdup(a, m->items, m->n * sizeof *c);
    if (!c)
        return FLOE_ENOMEM;
    m->items = c;
    return 0;
}

static int copy_bounds(floe_arena *a, floe_bound_map *m) {
    if (!m->n)
        return 0;
    floe_column_bound *c = floe_arena_alloc(a, m->n * sizeof *c);
    if (!c)
        return FLOE_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        c[i] = m->items[i];
        if (c[i].n && !(c[i].p = floe_arena_memdup(a, c[i].p, c[i].n)))
            return FLOE_ENOMEM;
    }
    m->items = c;
    return 0;
}

int floe_data_file_copy(const floe_data_file *f, floe_arena *a, floe_data_file *out,
                        floe_error *err) {
    bool fail = false;
    floe_data_file c = *f;
    c.file_path = strdup_or_null(a, f->file_path, &fail);
    c.file_format = strdup_or_null(a, f->file_format, &fail);
    c.referenced_data_file = strdup_or_null(a, f->referenced_data_file, &fail);
    c.key_metadata = dup_or_null(a, f->key_metadata, f->key_metadata_len, &fail);
    c.split_offsets = dup_or_null(a, f->split_offsets, f->nsplit_offsets * sizeof(int64_t),
                                  &fail);
    c.equality_ids = dup_or_null(a, f->equality_ids, f->nequality_ids * sizeof(int32_t), &fail);
    if (f->npartition) {
        floe_value *pv = floe_arena_alloc(a, f->npartition * sizeof *pv);
        if (!pv)
            return nomem(err);
        for (size_t i = 0; i < f->npartition; i++) {
            pv[i] = f->partition[i];
            if (!pv[i].is_null && (pv[i].type == FLOE_TYPE_STRING ||
                                   pv[i].type == FLOE_TYPE_BINARY ||
                                   pv[i].type == FLOE_TYPE_FIXED) && pv[i].v.bytes.n)
                pv[i].v.bytes.p = dup_or_null(a, pv[i].v.bytes.p, pv[i].v.bytes.n, &fail);
        }
        c.partition = pv;
    }
    if (fail || copy_counts(a, &c.column_sizes) < 0 || copy_counts(a, &c.value_counts) < 0 ||
        copy_counts(a, &c.null_value_counts) < 0 || copy_counts(a, &c.nan_value_counts) < 0 ||
        copy_bounds(a, &c.lower_bounds) < 0 || copy_bounds(a, &c.upper_bounds) < 0)
        return nomem(err);
    *out = c;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * manifest writer
 * ------------------------------------------------------------------------------------- */

typedef struct part_stats {
    bool contains_null;
    bool contains_nan;
    bool has_bounds;
    floe_buf lo, hi;     /* Appendix D bytes of the current min / max */
    floe_value lo_v, hi_v; /* decoded from lo / hi (borrowing them) */
} part_stats;

struct floe_manifest_writer {
    floe_io *io;
    char *uri;
    floe_manifest_write_options o;
    floe_avro_schema *schema;
    floe_avro_writer *aw;
    floe_buf file;
    floe_arena scratch;  /* one entry's Avro value tree */
    int64_t entries;
    int64_t added_files, existing_files, deleted_files;
    int64_t added_rows, existing_rows, deleted_rows;
    bool has_min_seq;
    int64_t min_seq;     /* over live entries with an explicit data sequence number */
    part_stats *parts;   /* one per partition field */
    bool v1;             /* format v1 schema and header */
    bool v3;             /* format v3 schema and header (first_row_id, content_offset) */
};

void floe_manifest_write_options_init(floe_manifest_write_options *o) {
    memset(o, 0, sizeof *o);
    o->content = FLOE_MANIFEST_DATA;
    o->codec = FLOE_CODEC_DEFLATE;
}

void floe_manifest_writer_abort(floe_manifest_writer *w) {
    if (!w)
        return;
    floe_avro_writer_abort(w->aw);
    floe_avro_schema_free(w->schema);
    floe_buf_free(&w->file);
    floe_arena_reset(&w->scratch);
    if (w->parts) {
        for (size_t i = 0; i < w->o.spec->nfields; i++) {
            floe_buf_free(&w->parts[i].lo);
            floe_buf_free(&w->parts[i].hi);
        }
        floe_free(w->parts);
    }
    floe_free(w->uri);
    floe_free(w);
}

int floe_manifest_writer_open(floe_io *io, const char *uri, const floe_manifest_write_options *o,
                              floe_manifest_writer **out, floe_error *err) {
    int rc = 0;
    floe_buf sj;
    floe_buf_init(&sj, 0);
    char *schema_json = NULL, *spec_json = NULL;
    floe_manifest_writer *w = NULL;
    FLOE_RETURN_ERROR_IF(!uri || !o || !o->schema || !o->spec, err, FLOE_EINVALID,
                         "manifest writer: uri, schema and partition spec are required");
    FLOE_RETURN_ERROR_IF(!o->spec->bound, err, FLOE_EINVALID,
                         "manifest writer: partition spec %d is not bound to a schema",
                         (int)o->spec->spec_id);
    FLOE_RETURN_ERROR_IF(o->content != FLOE_MANIFEST_DATA && o->content != FLOE_MANIFEST_DELETES,
                         err, FLOE_EINVALID, "manifest writer: bad content %d", (int)o->content);
    for (size_t i = 0; i < o->spec->nfields; i++)
        FLOE_RETURN_ERROR_IF(o->spec->fields[i].transform.kind == FLOE_XF_UNKNOWN, err,
                             FLOE_EINVALID, "manifest writer: partition field %s has an unknown "
                             "transform (%s); the spec forbids committing files with it",
                             o->spec->fields[i].name,
                             o->spec->fields[i].transform_text ? o->spec->fields[i].transform_text
                                                               : "?");
    FLOE_RETURN_ERROR_IF(o->format_version < 0 || o->format_version > 3, err, FLOE_EINVALID,
                         "manifest writer: format version %d (floe writes 1, 2 and 3)",
                         o->format_version);
    FLOE_RETURN_ERROR_IF(o->format_version == 1 && o->content != FLOE_MANIFEST_DATA, err,
                         FLOE_EINVALID, "manifest writer: format v1 has no delete files");
    w = floe_calloc(1, sizeof *w);
    if (!w)
        return nomem(err);
    w->o = *o;
    w->v1 = o->format_version == 1;
    w->v3 = o->format_version == 3;
    floe_buf_init(&w->file, 0);
    floe_arena_init(&w->scratch, 8192);
    w->io = io;
    if (!(w->uri = floe_strdup(uri)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (o->spec->nfields) {
        w->parts = floe_calloc(o->spec->nfields, sizeof *w->parts);
        if (!w->parts)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->spec->nfields; i++) {
            floe_buf_init(&w->parts[i].lo, 0);
            floe_buf_init(&w->parts[i].hi, 0);
        }
    }
    FLOE_CHECK(floe_mf_entry_schema_json(o->spec, w->v1 ? 1 : w->v3 ? 3 : 2, &sj, err));
    FLOE_CHECK(floe_avro_schema_parse((const char *)sj.data, sj.len, &w->schema, err));

    schema_json = floe_schema_to_json(o->schema, false);
    spec_json = floe_partition_spec_fields_to_json(o->spec);
    if (!schema_json || !spec_json)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    char schema_id[24], spec_id[24];
    snprintf(schema_id, sizeof schema_id, "%d", (int)o->schema->schema_id);
    snprintf(spec_id, sizeof spec_id, "%d", (int)o->spec->spec_id);
    const char *content = o->content == FLOE_MANIFEST_DATA ? "data" : "deletes";
    floe_avro_meta meta[] = {
        {"schema", schema_json, strlen(schema_json)},
        {"schema-id", schema_id, strlen(schema_id)},
        {"partition-spec", spec_json, strlen(spec_json)},
        {"partition-spec-id", spec_id, strlen(spec_id)},
        {"format-version", w->v1 ? "1" : w->v3 ? "3" : "2", 1},
        {"content", content, strlen(content)}, /* v2 and later */
    };
    floe_avro_writer_options ao = {.codec = o->codec, .level = o->level, .sync = o->sync,
                                   .meta = meta,
                                   .n_meta = sizeof meta / sizeof meta[0] - (w->v1 ? 1 : 0)};
    FLOE_CHECK(floe_avro_writer_open(w->schema, &ao, &w->file, &w->aw, err));
done:
    floe_buf_free(&sj);
    floe_free(schema_json);
    floe_free(spec_json);
    if (rc < 0) {
        floe_error_prefix(err, "manifest %s: ", uri);
        floe_manifest_writer_abort(w);
        return rc;
    }
    *out = w;
    return 0;
}

static int check_file(const floe_manifest_writer *w, const floe_data_file *f, floe_error *err) {
    const floe_partition_spec *spec = w->o.spec;
    FLOE_RETURN_ERROR_IF(!f->file_path || !*f->file_path, err, FLOE_EINVALID,
                         "data file without a path");
    const char *p = f->file_path;
    FLOE_RETURN_ERROR_IF(!f->file_format || !*f->file_format, err, FLOE_EINVALID,
                         "%s: no file format", p);
    FLOE_RETURN_ERROR_IF(f->content < FLOE_CONTENT_DATA ||
                         f->content > FLOE_CONTENT_EQUALITY_DELETES, err, FLOE_EINVALID,
                         "%s: bad content %d", p, (int)f->content);
    bool is_data = f->content == FLOE_CONTENT_DATA;
    FLOE_RETURN_ERROR_IF(is_data != (w->o.content == FLOE_MANIFEST_DATA), err, FLOE_EINVALID,
                         "%s: a %s file cannot go into a %s manifest", p,
                         is_data ? "data" : "delete",
                         w->o.content == FLOE_MANIFEST_DATA ? "data" : "delete");
    FLOE_RETURN_ERROR_IF(f->record_count < 0 || f->file_size_in_bytes < 0, err, FLOE_EINVALID,
                         "%s: negative record count or size", p);
    FLOE_RETURN_ERROR_IF(f->npartition != spec->nfields, err, FLOE_EINVALID,
                         "%s: partition tuple has %zu values, spec %d has %zu fields", p,
                         f->npartition, (int)spec->spec_id, spec->nfields);
    bool eq = f->content == FLOE_CONTENT_EQUALITY_DELETES;
    FLOE_RETURN_ERROR_IF(eq && (!f->has_equality_ids || f->nequality_ids == 0), err,
                         FLOE_EINVALID, "%s: equality delete file without equality ids", p);
    FLOE_RETURN_ERROR_IF(!eq && f->has_equality_ids, err, FLOE_EINVALID,
                         "%s: equality ids on a file that is not an equality delete file", p);
    FLOE_RETURN_ERROR_IF(!w->v3 && (f->has_first_row_id || f->has_content_offset ||
                                    f->has_content_size),
                         err, FLOE_EINVALID, "%s: first_row_id / content_offset / "
                         "content_size_in_bytes are v3 fields; this manifest is format v%d",
                         p, w->v1 ? 1 : 2);
    FLOE_RETURN_ERROR_IF(f->has_first_row_id && !is_data, err, FLOE_EINVALID,
                         "%s: a delete file has no first_row_id", p);
    FLOE_RETURN_ERROR_IF(f->has_first_row_id && f->first_row_id < 0, err, FLOE_EINVALID,
                         "%s: negative first_row_id", p);
    FLOE_RETURN_ERROR_IF(f->has_content_offset != f->has_content_size ||
                         (f->has_content_offset && (is_data || f->content_offset < 0 ||
                                                    f->content_size_in_bytes < 0)),
                         err, FLOE_EINVALID, "%s: content_offset and content_size_in_bytes go "
                         "together, on delete files, and are not negative", p);
    for (size_t i = 1; i < f->nsplit_offsets; i++)
        FLOE_RETURN_ERROR_IF(f->split_offsets[i] < f->split_offsets[i - 1], err, FLOE_EINVALID,
                             "%s: split offsets are not ascending", p);
    return 0;
}

static int set_opt_long(floe_avro_value *v, bool has, int64_t x) {
    if (has)
        floe_avro_set_long(v, x);
    else
        floe_avro_set_null(v);
    return 0;
}

static int counts_value(floe_arena *a, const floe_count_map *m, floe_avro_value *v) {
    if (!m->present) {
        floe_avro_set_null(v);
        return 0;
    }
    FLOE_FORWARD_IF_ERROR(floe_avro_set_array(v, a, m->n));
    for (size_t i = 0; i < m->n; i++) {
        floe_avro_value *kv = &v->u.list.items[i];
        FLOE_FORWARD_IF_ERROR(floe_avro_set_record(kv, a, 2));
        floe_avro_set_int(&kv->u.list.items[0], m->items[i].field_id);
        floe_avro_set_long(&kv->u.list.items[1], m->items[i].value);
    }
    return 0;
}

static int bounds_value(floe_arena *a, const floe_bound_map *m, floe_avro_value *v) {
    if (!m->present) {
        floe_avro_set_null(v);
        return 0;
    }
    FLOE_FORWARD_IF_ERROR(floe_avro_set_array(v, a, m->n));
    for (size_t i = 0; i < m->n; i++) {
        floe_avro_value *kv = &v->u.list.items[i];
        FLOE_FORWARD_IF_ERROR(floe_avro_set_record(kv, a, 2));
        floe_avro_set_int(&kv->u.list.items[0], m->items[i].field_id);
        floe_avro_set_bytes(&kv->u.list.items[1], m->items[i].p, m->items[i].n);
    }
    return 0;
}

/* The v2 value of entry_value reshaped to the v1 schema: status, snapshot_id (required),
 * data_file without content, equality_ids and referenced_data_file, with
 * block_size_in_bytes (deprecated, required in v1: 64 MiB as the reference writes). */
static int entry_value_v1(floe_manifest_writer *w, const floe_manifest_entry *e,
                          floe_avro_value *root, floe_error *err) {
    FLOE_RETURN_ERROR_IF(!e->has_snapshot_id, err, FLOE_EINVALID,
                         "%s: a v1 manifest entry needs its snapshot id", e->file.file_path);
    floe_avro_value *rf = root->u.list.items;
    floe_avro_value *d2 = rf[4].u.list.items;
    floe_avro_value df;
    if (floe_avro_set_record(&df, &w->scratch, 15) < 0)
        return nomem(err);
    floe_avro_value *d = df.u.list.items;
    for (int i = 0; i < 5; i++) /* file_path .. file_size_in_bytes */
        d[i] = d2[1 + i];
    floe_avro_set_long(&d[5], 64 * 1024 * 1024);
    for (int i = 6; i < 14; i++) /* column_sizes .. split_offsets */
        d[i] = d2[i];
    d[14] = d2[15]; /* sort_order_id */
    floe_avro_set_long(&rf[1], e->snapshot_id);
    rf[2] = df;
    root->u.list.n = 3;
    return 0;
}

/* The Avro value of one manifest_entry, in the schema's field order. */
static int entry_value(floe_manifest_writer *w, const floe_manifest_entry *e,
                       floe_avro_value *root, floe_error *err) {
    floe_arena *a = &w->scratch;
    const floe_data_file *f = &e->file;
    const floe_partition_spec *spec = w->o.spec;
    if (floe_avro_set_record(root, a, 5) < 0)
        return nomem(err);
    floe_avro_value *rf = root->u.list.items;
    floe_avro_set_int(&rf[0], (int32_t)e->status);
    set_opt_long(&rf[1], e->has_snapshot_id, e->snapshot_id);
    set_opt_long(&rf[2], e->has_sequence_number, e->sequence_number);
    set_opt_long(&rf[3], e->has_file_sequence_number, e->file_sequence_number);
    floe_avro_value *df = &rf[4];
    if (floe_avro_set_record(df, a, w->v3 ? 20 : 17) < 0)
        return nomem(err);
    floe_avro_value *d = df->u.list.items;
    floe_avro_set_int(&d[0], (int32_t)f->content);
    floe_avro_set_string(&d[1], f->file_path);
    floe_avro_set_string(&d[2], f->file_format);
    if (floe_avro_set_record(&d[3], a, spec->nfields) < 0)
        return nomem(err);
    for (size_t i = 0; i < spec->nfields; i++) {
        int rc = floe_mf_partition_to_avro(&spec->partition_type.children[i], &f->partition[i],
                                           a, &d[3].u.list.items[i], err);
        if (rc < 0) {
            floe_error_prefix(err, "%s: partition field %s: ", f->file_path,
                              spec->fields[i].name);
            return rc;
        }
    }
    floe_avro_set_long(&d[4], f->record_count);
    floe_avro_set_long(&d[5], f->file_size_in_bytes);
    if (counts_value(a, &f->column_sizes, &d[6]) < 0 ||
        counts_value(a, &f->value_counts, &d[7]) < 0 ||
        counts_value(a, &f->null_value_counts, &d[8]) < 0 ||
        counts_value(a, &f->nan_value_counts, &d[9]) < 0 ||
        bounds_value(a, &f->lower_bounds, &d[10]) < 0 ||
        bounds_value(a, &f->upper_bounds, &d[11]) < 0)
        return nomem(err);
    if (f->has_key_metadata)
        floe_avro_set_bytes(&d[12], f->key_metadata, f->key_metadata_len);
    else
        floe_avro_set_null(&d[12]);
    if (f->has_split_offsets) {
        if (floe_avro_set_array(&d[13], a, f->nsplit_offsets) < 0)
            return nomem(err);
        for (size_t i = 0; i < f->nsplit_offsets; i++)
            floe_avro_set_long(&d[13].u.list.items[i], f->split_offsets[i]);
    } else {
        floe_avro_set_null(&d[13]);
    }
    if (f->has_equality_ids) {
        if (floe_avro_set_array(&d[14], a, f->nequality_ids) < 0)
            return nomem(err);
        for (size_t i = 0; i < f->nequality_ids; i++)
            floe_avro_set_int(&d[14].u.list.items[i], f->equality_ids[i]);
    } else {
        floe_avro_set_null(&d[14]);
    }
    if (f->has_sort_order_id && f->content != FLOE_CONTENT_POSITION_DELETES)
        floe_avro_set_int(&d[15], f->sort_order_id);
    else /* spec: position deletes should set sort order id to null */
        floe_avro_set_null(&d[15]);
    if (f->referenced_data_file)
        floe_avro_set_string(&d[16], f->referenced_data_file);
    else
        floe_avro_set_null(&d[16]);
    if (w->v3) {
        /* a file this snapshot adds inherits its first row id from the manifest's */
        set_opt_long(&d[17], f->has_first_row_id && e->status != FLOE_ENTRY_ADDED,
                     f->first_row_id);
        set_opt_long(&d[18], f->has_content_offset, f->content_offset);
        set_opt_long(&d[19], f->has_content_size, f->content_size_in_bytes);
    }
    return w->v1 ? entry_value_v1(w, e, root, err) : 0;
}

static bool is_nan(const floe_value *v) {
    return (v->type == FLOE_TYPE_FLOAT && isnan(v->v.f)) ||
           (v->type == FLOE_TYPE_DOUBLE && isnan(v->v.d));
}

static int set_bound(part_stats *ps, bool upper, const floe_field *t, const floe_value *v,
                     floe_error *err) {
    floe_buf *b = upper ? &ps->hi : &ps->lo;
    floe_buf_reset(b);
    FLOE_FORWARD_IF_ERROR(floe_value_to_binary(v, b, err));
    return floe_value_from_binary(t, b->data, b->len, upper ? &ps->hi_v : &ps->lo_v, err);
}

static int update_summaries(floe_manifest_writer *w, const floe_data_file *f, floe_error *err) {
    const floe_partition_spec *spec = w->o.spec;
    for (size_t i = 0; i < spec->nfields; i++) {
        part_stats *ps = &w->parts[i];
        const floe_value *v = &f->partition[i];
        const floe_field *t = &spec->partition_type.children[i];
        if (v->is_null) {
            ps->contains_null = true;
            continue;
        }
        if (is_nan(v)) {
            ps->contains_nan = true;
            continue;
        }
        if (!ps->has_bounds) {
            FLOE_FORWARD_IF_ERROR(set_bound(ps, false, t, v, err));
            FLOE_FORWARD_IF_ERROR(set_bound(ps, true, t, v, err));
            ps->has_bounds = true;
            continue;
        }
        if (floe_value_compare(v, &ps->lo_v) < 0)
            FLOE_FORWARD_IF_ERROR(set_bound(ps, false, t, v, err));
        if (floe_value_compare(v, &ps->hi_v) > 0)
            FLOE_FORWARD_IF_ERROR(set_bound(ps, true, t, v, err));
    }
    return 0;
}

int floe_manifest_writer_append(floe_manifest_writer *w, const floe_manifest_entry *e,
                                floe_error *err) {
    int rc = 0;
    const char *path = e->file.file_path ? e->file.file_path : "(no path)";
    FLOE_CHECK(check_file(w, &e->file, err));
    switch (e->status) {
    case FLOE_ENTRY_ADDED:
        /* the file sequence number is the committing snapshot's: always inherited */
        if (e->has_file_sequence_number)
            FLOE_FAIL(err, FLOE_EINVALID, "%s: an ADDED entry must leave file_sequence_number "
                      "null (it is assigned at commit)", path);
        break;
    case FLOE_ENTRY_EXISTING:
    case FLOE_ENTRY_DELETED:
        if (!e->has_sequence_number || !e->has_file_sequence_number || !e->has_snapshot_id)
            FLOE_FAIL(err, FLOE_EINVALID, "%s: an %s entry must carry its snapshot id and "
                      "both sequence numbers (read it with inheritance applied)", path,
                      e->status == FLOE_ENTRY_EXISTING ? "EXISTING" : "DELETED");
        break;
    default:
        FLOE_FAIL(err, FLOE_EINVALID, "%s: bad entry status %d", path, (int)e->status);
    }
    if ((e->has_sequence_number && e->sequence_number < 0) ||
        (e->has_file_sequence_number && e->file_sequence_number < 0))
        FLOE_FAIL(err, FLOE_EINVALID, "%s: negative sequence number", path);

    floe_arena_reset(&w->scratch);
    floe_avro_value root;
    FLOE_CHECK(entry_value(w, e, &root, err));
    FLOE_CHECK(floe_avro_writer_append(w->aw, &root, err));
    /* Past this point the entry is in the file: account for it. A failing summary update
     * (out of memory) poisons nothing but the summaries, and is reported. */
    w->entries++;
    switch (e->status) {
    case FLOE_ENTRY_ADDED:
        w->added_files++;
        w->added_rows += e->file.record_count;
        break;
    case FLOE_ENTRY_EXISTING:
        w->existing_files++;
        w->existing_rows += e->file.record_count;
        break;
    default:
        w->deleted_files++;
        w->deleted_rows += e->file.record_count;
        break;
    }
    if (e->status != FLOE_ENTRY_DELETED && e->has_sequence_number &&
        (!w->has_min_seq || e->sequence_number < w->min_seq)) {
        w->min_seq = e->sequence_number;
        w->has_min_seq = true;
    }
    FLOE_CHECK(update_summaries(w, &e->file, err));
done:
    if (rc < 0)
        floe_error_prefix(err, "manifest %s: ", w->uri);
    return rc;
}

int floe_manifest_writer_add(floe_manifest_writer *w, const floe_data_file *f,
                             int64_t data_sequence_number, floe_error *err) {
    floe_manifest_entry e = {.status = FLOE_ENTRY_ADDED,
                             .has_snapshot_id = w->o.has_snapshot_id,
                             .snapshot_id = w->o.snapshot_id,
                             .has_sequence_number = data_sequence_number >= 0,
                             .sequence_number = data_sequence_number,
                             .file = *f};
    return floe_manifest_writer_append(w, &e, err);
}

int floe_manifest_writer_existing(floe_manifest_writer *w, const floe_manifest_entry *e,
                                  floe_error *err) {
    floe_manifest_entry c = *e;
    c.status = FLOE_ENTRY_EXISTING;
    return floe_manifest_writer_append(w, &c, err);
}

int floe_manifest_writer_delete(floe_manifest_writer *w, const floe_manifest_entry *e,
                                floe_error *err) {
    floe_manifest_entry c = *e;
    c.status = FLOE_ENTRY_DELETED;
    /* The deleting snapshot; null means "inherit the manifest's", which is the same. */
    c.has_snapshot_id = w->o.has_snapshot_id;
    c.snapshot_id = w->o.snapshot_id;
    if (!c.has_snapshot_id) {
        /* EXISTING/DELETED need an explicit id by our rule; let the check name it. */
        c.has_snapshot_id = e->has_snapshot_id;
        c.snapshot_id = e->snapshot_id;
    }
    return floe_manifest_writer_append(w, &c, err);
}

int64_t floe_manifest_writer_entries(const floe_manifest_writer *w) { return w->entries; }

int floe_manifest_writer_close(floe_manifest_writer *w, const floe_output_options *oo,
                               floe_arena *arena, floe_manifest_file *out, floe_error *err) {
    int rc = 0;
    floe_avro_writer *aw = w->aw;
    w->aw = NULL;
    FLOE_CHECK(floe_avro_writer_close(aw, err));
    if (w->added_files > INT32_MAX || w->existing_files > INT32_MAX ||
        w->deleted_files > INT32_MAX)
        FLOE_FAIL(err, FLOE_ELIMIT, "more than 2^31 entries in one manifest");
    if (out) {
        floe_manifest_file mf = {0};
        mf.manifest_length = (int64_t)w->file.len;
        mf.partition_spec_id = w->o.spec->spec_id;
        mf.content = w->o.content;
        mf.sequence_number = FLOE_SEQ_UNASSIGNED;
        mf.min_sequence_number = w->has_min_seq ? w->min_seq : FLOE_SEQ_UNASSIGNED;
        mf.has_added_snapshot_id = w->o.has_snapshot_id;
        mf.added_snapshot_id = w->o.snapshot_id;
        mf.added_files_count = w->added_files;
        mf.existing_files_count = w->existing_files;
        mf.deleted_files_count = w->deleted_files;
        mf.added_rows_count = w->added_rows;
        mf.existing_rows_count = w->existing_rows;
        mf.deleted_rows_count = w->deleted_rows;
        mf.has_partitions = true;
        mf.npartitions = w->o.spec->nfields;
        floe_field_summary *fs = NULL;
        if (mf.npartitions && !(fs = floe_arena_alloc(arena, mf.npartitions * sizeof *fs)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < mf.npartitions; i++) {
            part_stats *ps = &w->parts[i];
            fs[i].contains_null = ps->contains_null;
            fs[i].has_contains_nan = true;
            fs[i].contains_nan = ps->contains_nan;
            if (ps->has_bounds) {
                fs[i].has_lower = fs[i].has_upper = true;
                fs[i].lower_len = ps->lo.len;
                fs[i].upper_len = ps->hi.len;
                /* empty strings are valid bounds: keep a non-NULL pointer for them */
                fs[i].lower_bound = floe_arena_memdup(arena, ps->lo.len ? ps->lo.data
                                                                        : (const uint8_t *)"",
                                                      ps->lo.len ? ps->lo.len : 1);
                fs[i].upper_bound = floe_arena_memdup(arena, ps->hi.len ? ps->hi.data
                                                                        : (const uint8_t *)"",
                                                      ps->hi.len ? ps->hi.len : 1);
                if (!fs[i].lower_bound || !fs[i].upper_bound)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
        }
        mf.partitions = fs;
        if (!(mf.manifest_path = floe_arena_strdup(arena, w->uri)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(floe_avro_write_uri(w->io, w->uri, &w->file, oo, err));
        *out = mf;
    } else {
        FLOE_CHECK(floe_avro_write_uri(w->io, w->uri, &w->file, oo, err));
    }
done:
    if (rc < 0)
        floe_error_prefix(err, "manifest %s: ", w->uri);
    floe_manifest_writer_abort(w);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * manifest list writer
 * ------------------------------------------------------------------------------------- */

void floe_manifest_list_write_options_init(floe_manifest_list_write_options *o) {
    memset(o, 0, sizeof *o);
    o->codec = FLOE_CODEC_DEFLATE;
}

static int list_value_v2(floe_arena *a, const floe_manifest_file *m, floe_avro_value *root,
                         floe_error *err) {
    if (floe_avro_set_record(root, a, 16) < 0) /* the 16th, first_row_id, is v3's */
        return nomem(err);
    floe_avro_value *f = root->u.list.items;
    floe_avro_set_string(&f[0], m->manifest_path);
    floe_avro_set_long(&f[1], m->manifest_length);
    floe_avro_set_int(&f[2], m->partition_spec_id);
    floe_avro_set_int(&f[3], (int32_t)m->content);
    floe_avro_set_long(&f[4], m->sequence_number);
    floe_avro_set_long(&f[5], m->min_sequence_number);
    floe_avro_set_long(&f[6], m->added_snapshot_id);
    floe_avro_set_int(&f[7], (int32_t)m->added_files_count);
    floe_avro_set_int(&f[8], (int32_t)m->existing_files_count);
    floe_avro_set_int(&f[9], (int32_t)m->deleted_files_count);
    floe_avro_set_long(&f[10], m->added_rows_count);
    floe_avro_set_long(&f[11], m->existing_rows_count);
    floe_avro_set_long(&f[12], m->deleted_rows_count);
    if (m->has_partitions) {
        if (floe_avro_set_array(&f[13], a, m->npartitions) < 0)
            return nomem(err);
        for (size_t i = 0; i < m->npartitions; i++) {
            const floe_field_summary *s = &m->partitions[i];
            floe_avro_value *r = &f[13].u.list.items[i];
            if (floe_avro_set_record(r, a, 4) < 0)
                return nomem(err);
            floe_avro_set_bool(&r->u.list.items[0], s->contains_null);
            if (s->has_contains_nan)
                floe_avro_set_bool(&r->u.list.items[1], s->contains_nan);
            else
                floe_avro_set_null(&r->u.list.items[1]);
            if (s->has_lower)
                floe_avro_set_bytes(&r->u.list.items[2], s->lower_bound, s->lower_len);
            else
                floe_avro_set_null(&r->u.list.items[2]);
            if (s->has_upper)
                floe_avro_set_bytes(&r->u.list.items[3], s->upper_bound, s->upper_len);
            else
                floe_avro_set_null(&r->u.list.items[3]);
        }
    } else {
        floe_avro_set_null(&f[13]);
    }
    if (m->has_key_metadata)
        floe_avro_set_bytes(&f[14], m->key_metadata, m->key_metadata_len);
    else
        floe_avro_set_null(&f[14]);
    set_opt_long(&f[15], m->has_first_row_id, m->first_row_id);
    root->u.list.n = 15;
    return 0;
}

/* The list entry in the schema of format_version: v1 has no content and sequence numbers,
 * and its counts are optional (null when a v1 source list did not have them); v3 adds
 * first_row_id. */
static int list_value(floe_arena *a, int format_version, const floe_manifest_file *m,
                      floe_avro_value *root, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(list_value_v2(a, m, root, err));
    if (format_version == 3)
        root->u.list.n = 16;
    if (format_version != 1)
        return 0;
    floe_avro_value *f = root->u.list.items;
    const int64_t counts[6] = {m->added_files_count, m->existing_files_count,
                               m->deleted_files_count, m->added_rows_count,
                               m->existing_rows_count, m->deleted_rows_count};
    for (int i = 0; i < 6; i++)
        if (counts[i] < 0)
            floe_avro_set_null(&f[7 + i]);
    memmove(&f[3], &f[6], 9 * sizeof *f); /* added_snapshot_id .. key_metadata */
    root->u.list.n = 12;
    return 0;
}

/* The manifest as this list records it: sequence numbers and snapshot id of manifests
 * the snapshot adds filled in, every required v2 field checked. */
static int list_entry(const floe_manifest_list_write_options *o, const floe_manifest_file *m,
                      floe_manifest_file *c, floe_error *err) {
    const char *p = m->manifest_path;
    FLOE_RETURN_ERROR_IF(!p || !*p, err, FLOE_EINVALID, "manifest without a path");
    *c = *m;
    if (!c->has_added_snapshot_id) {
        c->has_added_snapshot_id = true;
        c->added_snapshot_id = o->snapshot_id;
    }
    if (c->sequence_number == FLOE_SEQ_UNASSIGNED) {
        FLOE_RETURN_ERROR_IF(c->added_snapshot_id != o->snapshot_id, err, FLOE_EINVALID,
                             "%s: sequence number unassigned but added by snapshot %" PRId64
                             ", not %" PRId64, p, c->added_snapshot_id, o->snapshot_id);
        c->sequence_number = o->sequence_number;
        if (c->min_sequence_number == FLOE_SEQ_UNASSIGNED)
            c->min_sequence_number = o->sequence_number;
    }
    FLOE_RETURN_ERROR_IF(c->min_sequence_number == FLOE_SEQ_UNASSIGNED, err, FLOE_EINVALID,
                         "%s: min_sequence_number unassigned", p);
    FLOE_RETURN_ERROR_IF(c->sequence_number < 0 || c->sequence_number > o->sequence_number ||
                         c->min_sequence_number < 0 ||
                         c->min_sequence_number > c->sequence_number, err, FLOE_EINVALID,
                         "%s: sequence numbers %" PRId64 "/%" PRId64 " do not fit snapshot "
                         "sequence number %" PRId64, p, c->sequence_number,
                         c->min_sequence_number, o->sequence_number);
    FLOE_RETURN_ERROR_IF(o->format_version != 1 &&
                         (c->added_files_count < 0 || c->existing_files_count < 0 ||
                          c->deleted_files_count < 0 || c->added_rows_count < 0 ||
                          c->existing_rows_count < 0 || c->deleted_rows_count < 0), err,
                         FLOE_EINVALID, "%s: file or row counts unknown (a v1 manifest list "
                         "entry); v2 lists require them: rewrite the manifest", p);
    FLOE_RETURN_ERROR_IF(c->added_files_count > INT32_MAX || c->existing_files_count > INT32_MAX
                         || c->deleted_files_count > INT32_MAX, err, FLOE_EINVALID,
                         "%s: file counts past 2^31", p);
    FLOE_RETURN_ERROR_IF(c->content != FLOE_MANIFEST_DATA && c->content != FLOE_MANIFEST_DELETES,
                         err, FLOE_EINVALID, "%s: bad content %d", p, (int)c->content);
    FLOE_RETURN_ERROR_IF(o->format_version != 3 && c->has_first_row_id, err, FLOE_EINVALID,
                         "%s: first_row_id is a v3 field; this manifest list is format v%d",
                         p, o->format_version == 1 ? 1 : 2);
    /* spec "First Row ID Assignment": every data manifest of a v3 list has one (assigned
     * by floe_manifest_list_assign_row_ids), no delete manifest has one */
    FLOE_RETURN_ERROR_IF(o->format_version == 3 &&
                         c->has_first_row_id != (c->content == FLOE_MANIFEST_DATA), err,
                         FLOE_EINVALID, "%s: a v3 %s manifest %s first_row_id", p,
                         c->content == FLOE_MANIFEST_DATA ? "data" : "delete",
                         c->content == FLOE_MANIFEST_DATA ? "needs a" : "has no");
    FLOE_RETURN_ERROR_IF(c->manifest_length < 0, err, FLOE_EINVALID, "%s: negative length", p);
    return 0;
}

int floe_manifest_list_write(floe_io *io, const char *uri, const floe_manifest_list_write_options *o,
                             const floe_manifest_file *files, size_t n,
                             const floe_output_options *oo, int64_t *length_out,
                             floe_error *err) {
    int rc = 0;
    floe_avro_schema *schema = NULL;
    floe_avro_writer *aw = NULL;
    floe_buf file;
    floe_buf_init(&file, 0);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_keyset seen = {0};
    FLOE_RETURN_ERROR_IF(!uri || !o, err, FLOE_EINVALID, "manifest list: uri and options "
                         "are required");
    FLOE_RETURN_ERROR_IF(o->sequence_number < 1, err, FLOE_EINVALID, "manifest list %s: "
                         "snapshot sequence number %" PRId64 " (must be >= 1)", uri,
                         o->sequence_number);
    FLOE_RETURN_ERROR_IF(o->format_version < 0 || o->format_version > 3, err, FLOE_EINVALID,
                         "manifest list %s: format version %d (floe writes 1, 2 and 3)", uri,
                         o->format_version);
    bool v1 = o->format_version == 1;
    int fv = o->format_version == 0 ? 2 : o->format_version;
    const char *sj = floe_mf_list_schema_json(fv);
    FLOE_CHECK(floe_avro_schema_parse(sj, strlen(sj), &schema, err));
    char sid[24], pid[24], seq[24];
    snprintf(sid, sizeof sid, "%" PRId64, o->snapshot_id);
    if (o->has_parent)
        snprintf(pid, sizeof pid, "%" PRId64, o->parent_snapshot_id);
    else
        snprintf(pid, sizeof pid, "null");
    snprintf(seq, sizeof seq, "%" PRId64, o->sequence_number);
    floe_avro_meta meta[] = {
        {"snapshot-id", sid, strlen(sid)},
        {"parent-snapshot-id", pid, strlen(pid)},
        {"format-version", fv == 1 ? "1" : fv == 3 ? "3" : "2", 1},
        {"sequence-number", seq, strlen(seq)}, /* v2 and later */
    };
    floe_avro_writer_options ao = {.codec = o->codec, .level = o->level, .sync = o->sync,
                                   .meta = meta,
                                   .n_meta = sizeof meta / sizeof meta[0] - (v1 ? 1 : 0)};
    FLOE_CHECK(floe_avro_writer_open(schema, &ao, &file, &aw, err));
    for (size_t i = 0; i < n; i++) {
        /* readers refuse a list naming a manifest twice (its files would count twice) */
        const char *mp = files[i].manifest_path ? files[i].manifest_path : "";
        size_t before = seen.n;
        int64_t *first;
        if ((rc = floe_keyset_put(&seen, mp, strlen(mp), (int64_t)i, &first)) < 0)
            FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
        if (seen.n == before)
            FLOE_FAIL(err, FLOE_EINVALID, "entries %" PRId64 " and %zu both name manifest %s",
                      *first, i, mp);
        floe_manifest_file c;
        memset(&c, 0, sizeof c); /* gcc -O2 cannot see that list_entry fills it */
        FLOE_CHECK(list_entry(o, &files[i], &c, err));
        floe_arena_reset(&a);
        floe_avro_value v;
        FLOE_CHECK(list_value(&a, fv, &c, &v, err));
        FLOE_CHECK(floe_avro_writer_append(aw, &v, err));
    }
    floe_avro_writer *w2 = aw;
    aw = NULL;
    FLOE_CHECK(floe_avro_writer_close(w2, err));
    FLOE_CHECK(floe_avro_write_uri(io, uri, &file, oo, err));
    if (length_out)
        *length_out = (int64_t)file.len;
done:
    if (rc < 0)
        floe_error_prefix(err, "manifest list %s: ", uri);
    floe_avro_writer_abort(aw);
    floe_avro_schema_free(schema);
    floe_buf_free(&file);
    floe_arena_reset(&a);
    floe_keyset_free(&seen);
    return rc;
}

int floe_manifest_list_assign_row_ids(floe_manifest_file *files, size_t n, int64_t first_row_id,
                                      int64_t *assigned_rows, floe_error *err) {
    FLOE_RETURN_ERROR_IF(first_row_id < 0, err, FLOE_EINVALID,
                         "first row id %" PRId64 " is negative", first_row_id);
    int64_t next = first_row_id;
    for (size_t i = 0; i < n; i++) {
        floe_manifest_file *m = &files[i];
        if (m->content != FLOE_MANIFEST_DATA) {
            m->has_first_row_id = false; /* delete manifests never carry one */
            continue;
        }
        if (m->has_first_row_id)
            continue;
        /* every ADDED or EXISTING file may inherit an id from this manifest: reserve them
         * all (the spec's "simple and valid approach") */
        FLOE_RETURN_ERROR_IF(m->added_rows_count < 0 || m->existing_rows_count < 0, err,
                             FLOE_EINVALID, "%s: row counts unknown, so no row ids can be "
                             "assigned to it: rewrite the manifest",
                             m->manifest_path ? m->manifest_path : "(manifest)");
        int64_t rows, end;
        FLOE_RETURN_ERROR_IF(__builtin_add_overflow(m->added_rows_count,
                                                    m->existing_rows_count, &rows) ||
                             __builtin_add_overflow(next, rows, &end), err, FLOE_ELIMIT,
                             "row ids past 2^63");
        m->has_first_row_id = true;
        m->first_row_id = next;
        next = end;
    }
    *assigned_rows = next - first_row_id;
    return 0;
}
