/*
 * append_files.c - appending NDJSON and existing Parquet files to a table.
 *
 * NDJSON goes through floe_convert with the table's current schema, default partition
 * spec (Hive-style folders) and write.* properties into the table's data folder; each
 * file it closes becomes a data file with metrics (floe_data_file_from_parquet).
 * Existing Parquet files are added where they are: their columns are checked against the
 * table schema (field ids, or names for files without ids), and their metrics are taken
 * from the footer's column chunk statistics, converted through the same metrics code as
 * floe's own files. Their partition tuple (partitioned tables) is derived from the
 * statistics: the transform of the minimum and of the maximum must agree.
 *
 * Iceberg configuration docs: write.data.path, write.target-file-size-bytes (512 MiB),
 * write.parquet.row-group-size-bytes (128 MiB), write.parquet.page-size-bytes (1 MiB),
 * write.parquet.page-row-limit (20000), write.parquet.dict-size-bytes (2 MiB),
 * write.parquet.compression-codec (zstd since Iceberg 1.4), -level.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/append.h"
#include "floe/io.h"
#include "floe/parquet_reader.h"
#include "scan_internal.h"
#include "table_internal.h"

/* ---------------------------------------------------------------------------------------
 * table properties
 * ------------------------------------------------------------------------------------- */

int floe_table_data_dir(const floe_table *t, char **out, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const char *custom = floe_table_metadata_property(m, "write.data.path");
    char *rec = custom && *custom ? floe_strdup(custom) : floe_io_join(m->location, "data");
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = rec;
    return 0;
}

static int prop_size(const floe_table_metadata *m, const char *key, int64_t dflt, int64_t *out,
                     floe_error *err) {
    const char *v = floe_table_metadata_property(m, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    char *end;
    long long x = strtoll(v, &end, 10);
    FLOE_RETURN_ERROR_IF(*end || x <= 0, err, FLOE_EINVALID,
                         "table property %s=%s: expected a positive integer", key, v);
    *out = x;
    return 0;
}

int floe_table_parquet_options(const floe_table_metadata *m, floe_pq_write_options *o,
                               floe_error *err) {
    floe_pq_write_options_init(o);
    const char *codec = floe_table_metadata_property(m, "write.parquet.compression-codec");
    floe_codec c = FLOE_CODEC_ZSTD;
    if (codec) {
        if (!strcasecmp(codec, "uncompressed") || !strcasecmp(codec, "none"))
            c = FLOE_CODEC_UNCOMPRESSED;
        else if (floe_codec_from_name(codec, &c) < 0 || c == FLOE_CODEC_LZO ||
                 c == FLOE_CODEC_LZ4 || c == FLOE_CODEC_DEFLATE)
            return floe_error_set(err, FLOE_EINVALID,
                                  "table property write.parquet.compression-codec=%s: floe "
                                  "writes zstd, snappy, gzip, lz4_raw, brotli or uncompressed",
                                  codec);
    }
    o->codec = c;
    const char *level = floe_table_metadata_property(m, "write.parquet.compression-level");
    if (level && *level) {
        char *end;
        long v = strtol(level, &end, 10);
        FLOE_RETURN_ERROR_IF(*end, err, FLOE_EINVALID,
                             "table property write.parquet.compression-level=%s", level);
        o->codec_level = (int)v;
    }
    int64_t v;
    FLOE_FORWARD_IF_ERROR(prop_size(m, "write.parquet.row-group-size-bytes", 128 << 20, &v, err));
    o->row_group_size = (size_t)v;
    FLOE_FORWARD_IF_ERROR(prop_size(m, "write.parquet.page-size-bytes", 1 << 20, &v, err));
    o->page_size = (size_t)v;
    FLOE_FORWARD_IF_ERROR(prop_size(m, "write.parquet.page-row-limit", 20000, &v, err));
    o->page_row_limit = (size_t)v;
    FLOE_FORWARD_IF_ERROR(prop_size(m, "write.parquet.dict-size-bytes", 2 << 20, &v, err));
    o->dict_page_size_limit = (size_t)v;
    FLOE_FORWARD_IF_ERROR(
        prop_size(m, "write.target-file-size-bytes", 512LL << 20, &o->target_file_size, err));
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * existing Parquet files
 * ------------------------------------------------------------------------------------- */

static bool type_compatible(const floe_field *file, const floe_field *table) {
    if (file->type == table->type) {
        if (table->type == FLOE_TYPE_DECIMAL)
            return file->scale == table->scale && file->precision <= table->precision;
        if (table->type == FLOE_TYPE_FIXED)
            return file->length == table->length;
        return true;
    }
    /* writers without the UUID annotation store uuids as fixed[16] */
    if (file->type == FLOE_TYPE_FIXED && file->length == 16 && table->type == FLOE_TYPE_UUID)
        return true;
    return (file->type == FLOE_TYPE_INT && table->type == FLOE_TYPE_LONG) ||
           (file->type == FLOE_TYPE_FLOAT && table->type == FLOE_TYPE_DOUBLE);
}

/* Parquet PLAIN bytes of v for the table leaf f (the form floe_pq_column_info holds). */
static int plain_bytes(const floe_field *f, const floe_value *v, uint8_t **out, size_t *n) {
    uint8_t tmp[16];
    const uint8_t *src = tmp;
    size_t len = 0;
    switch (f->phys) {
    case FLOE_PHYS_BOOLEAN: tmp[0] = v->v.b ? 1 : 0; len = 1; break;
    case FLOE_PHYS_INT32:
        floe_store_le32(tmp, (uint32_t)(f->type == FLOE_TYPE_DECIMAL ? (int32_t)v->v.dec.unscaled
                                                                      : v->v.i32));
        len = 4;
        break;
    case FLOE_PHYS_INT64:
        floe_store_le64(tmp, (uint64_t)(f->type == FLOE_TYPE_DECIMAL ? (int64_t)v->v.dec.unscaled
                                                                      : v->v.i64));
        len = 8;
        break;
    case FLOE_PHYS_FLOAT: memcpy(tmp, &v->v.f, 4); len = 4; break;
    case FLOE_PHYS_DOUBLE: memcpy(tmp, &v->v.d, 8); len = 8; break;
    case FLOE_PHYS_FIXED:
        if (f->type == FLOE_TYPE_UUID) {
            memcpy(tmp, v->v.uuid, 16);
            len = 16;
        } else if (f->type == FLOE_TYPE_DECIMAL) {
            len = (size_t)floe_decimal_bytes(f->precision);
            if (len > sizeof tmp)
                return FLOE_EUNSUPPORTED;
            floe_i128 u = v->v.dec.unscaled;
            for (size_t i = len; i-- > 0;) {
                tmp[i] = (uint8_t)(u & 0xFF);
                u >>= 8;
            }
        } else {
            src = v->v.bytes.p;
            len = v->v.bytes.n;
        }
        break;
    default:
        src = v->v.bytes.p;
        len = v->v.bytes.n;
        break;
    }
    uint8_t *p = floe_malloc(len ? len : 1);
    if (!p)
        return FLOE_ENOMEM;
    memcpy(p, src, len);
    *out = p;
    *n = len;
    return 0;
}

typedef struct col_stats {
    const floe_field *table_leaf;
    bool ok;           /* every row group had min/max */
    bool has_nulls_all;
    floe_value min, max;
    bool has_minmax;
    int64_t nulls, values, size;
    bool nulls_known;
} col_stats;

int floe_data_file_from_parquet_footer(const floe_table_metadata *m, const char *uri,
                                       const char *recorded_path, const floe_value *partition,
                                       size_t npartition, floe_arena *arena,
                                       floe_data_file *out, bool *has_ids, floe_error *err) {
    floe_schema *ts = NULL;
    floe_partition_spec *spec = NULL;
    floe_pq_reader *r = NULL;
    floe_metrics_config *cfg = NULL;
    col_stats *cs = NULL;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    floe_buf sb;
    floe_buf_init(&sb, 1 << 20);
    floe_arena scratch;
    floe_arena_init(&scratch, 16 * 1024);
    int rc = 0;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *msp = floe_table_metadata_default_spec(m);
    if (!ms || !msp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema or spec");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &ts, err));
    FLOE_CHECK(floe_partition_spec_parse_json(msp->json, strlen(msp->json), ts, &spec, err));
    FLOE_CHECK(floe_pq_reader_open(uri, NULL, &r, err));
    const floe_schema *fs = NULL;
    FLOE_CHECK(floe_pq_reader_iceberg_schema(r, &fs, err));
    const floe_pq_node *root = floe_pq_reader_root(r);
    bool ids = false;
    for (size_t i = 0; i < root->nchildren; i++)
        ids |= root->children[i].has_field_id;
    floe_pq_reader_file pf;
    floe_pq_reader_file_info(r, &pf);
    if (pf.num_columns != fs->nleaves)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "%s: %zu columns but %zu Iceberg leaves", uri,
                  pf.num_columns, fs->nleaves);

    /* schema check */
    cs = floe_calloc(fs->nleaves ? fs->nleaves : 1, sizeof *cs);
    if (!cs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < fs->nleaves; i++) {
        const floe_field *fl = fs->leaves[i];
        char path[512];
        floe_field_path(fl, path, sizeof path);
        const floe_field *tl = ids ? floe_schema_find_id(ts, fl->id)
                                   : floe_schema_find_path(ts, path);
        if (!tl)
            FLOE_FAIL(err, FLOE_ESCHEMA, "%s: column %s%s is not in the table schema", uri, path,
                      ids ? " (by field id)" : "");
        if (!type_compatible(fl, tl)) {
            char a[64], b[64];
            FLOE_FAIL(err, FLOE_ESCHEMA, "%s: column %s is %s in the file but %s in the table",
                      uri, path, floe_field_type_str(fl, a, sizeof a),
                      floe_field_type_str(tl, b, sizeof b));
        }
        cs[i].table_leaf = tl;
    }
    for (size_t i = 0; i < ts->root.nchildren; i++) {
        const floe_field *tf = &ts->root.children[i];
        if (!tf->required || tf->initial_default_json)
            continue;
        bool present = false;
        for (size_t k = 0; k < fs->nleaves && !present; k++) {
            const floe_field *q = cs[k].table_leaf;
            while (q && q->parent)
                q = q->parent;
            present = q == tf;
        }
        if (!present)
            FLOE_FAIL(err, FLOE_ESCHEMA, "%s: required column %s is missing", uri, tf->name);
    }

    /* metrics from the chunks */
    fi.record_count = pf.num_rows;
    fi.file_size_in_bytes = pf.file_size;
    fi.row_group_count = (int64_t)pf.num_row_groups;
    fi.ncolumns = fs->nleaves;
    fi.columns = floe_calloc(fs->nleaves ? fs->nleaves : 1, sizeof *fi.columns);
    fi.split_offsets = floe_calloc(pf.num_row_groups ? pf.num_row_groups : 1, sizeof(int64_t));
    if (!fi.columns || !fi.split_offsets)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t g = 0; g < pf.num_row_groups; g++) {
        floe_pq_row_group_info rg;
        floe_pq_reader_row_group_info(r, g, &rg);
        int64_t off = rg.file_offset;
        if (off <= 0 && pf.num_columns) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(r, g, 0, &ci);
            off = ci.dictionary_page_offset > 0 ? ci.dictionary_page_offset : ci.data_page_offset;
        }
        fi.split_offsets[fi.nsplits++] = off;
    }
    for (size_t i = 0; i < fs->nleaves; i++) {
        col_stats *c = &cs[i];
        const floe_field *tl = c->table_leaf;
        c->ok = pf.num_row_groups > 0;
        c->nulls_known = true;
        for (size_t g = 0; g < pf.num_row_groups; g++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(r, g, i, &ci);
            c->size += ci.compressed_size;
            c->values += ci.num_values;
            if (ci.null_count < 0)
                c->nulls_known = false;
            else
                c->nulls += ci.null_count;
            if (!ci.has_min_max) {
                /* a chunk of only nulls has no min/max and bounds nothing */
                if (!(ci.null_count >= 0 && ci.null_count == ci.num_values))
                    c->ok = false;
                continue;
            }
            for (int up = 0; up < 2 && c->ok; up++) {
                floe_buf_reset(&sb);
                floe_error e2;
                floe_error_clear(&e2);
                floe_value v;
                if (floe_pq_reader_chunk_stat_json(r, g, i, up, &sb, &e2) < 0 ||
                    floe_sv_from_canonical(tl, (const char *)sb.data, sb.len, &scratch, &v,
                                           &e2) < 0 ||
                    v.is_null) {
                    c->ok = false;
                    break;
                }
                /* bytes borrow sb: keep them in the scratch arena */
                if ((v.type == FLOE_TYPE_STRING || v.type == FLOE_TYPE_BINARY ||
                     v.type == FLOE_TYPE_FIXED) && v.v.bytes.n) {
                    const uint8_t *cp = floe_arena_memdup(&scratch, v.v.bytes.p, v.v.bytes.n);
                    if (!cp)
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    v.v.bytes.p = cp;
                }
                if (!c->has_minmax) {
                    c->min = c->max = v;
                    if (up)
                        c->has_minmax = true; /* both set after the max of the first */
                    continue;
                }
                if (!up && floe_value_compare(&v, &c->min) < 0)
                    c->min = v;
                if (up && floe_value_compare(&v, &c->max) > 0)
                    c->max = v;
            }
        }
        floe_pq_column_info *ci = &fi.columns[i];
        ci->field = tl;
        ci->field_id = tl->id;
        ci->repeated = tl->rep_level > 0;
        ci->column_size = c->size;
        ci->value_count = c->values;
        ci->null_value_count = c->nulls_known ? c->nulls : 0;
        if (c->ok && c->has_minmax && !ci->repeated) {
            if (plain_bytes(tl, &c->min, &ci->lower_bound, &ci->lower_len) < 0 ||
                plain_bytes(tl, &c->max, &ci->upper_bound, &ci->upper_len) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            ci->has_bounds = true;
        }
    }
    FLOE_CHECK(floe_metrics_config_new(m->properties, m->n_properties, ts, NULL, &cfg, err));
    memset(out, 0, sizeof *out);
    FLOE_CHECK(floe_data_file_from_parquet(&fi, cfg, arena, out, err));
    /* null counts the footer did not give are unknown, not zero: drop them */
    {
        floe_column_count *nc = (floe_column_count *)out->null_value_counts.items;
        size_t k = 0;
        for (size_t i = 0; i < out->null_value_counts.n; i++) {
            bool known = true;
            for (size_t j = 0; j < fs->nleaves; j++)
                if (cs[j].table_leaf->id == nc[i].field_id)
                    known = cs[j].nulls_known;
            if (known)
                nc[k++] = nc[i];
        }
        out->null_value_counts.n = k;
        out->nan_value_counts.present = false; /* Parquet statistics have no NaN counts */
        out->nan_value_counts.n = 0;
    }
    out->content = FLOE_CONTENT_DATA;
    if (!(out->file_path = floe_arena_strdup(arena, recorded_path)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    /* partition tuple */
    if (partition) {
        if (npartition != spec->nfields)
            FLOE_FAIL(err, FLOE_EINVALID, "%s: %zu partition values for a spec of %zu fields",
                      uri, npartition, spec->nfields);
        out->partition = partition;
        out->npartition = npartition;
    } else if (spec->nfields) {
        floe_value *tuple = floe_arena_alloc(arena, spec->nfields * sizeof *tuple);
        if (!tuple)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t k = 0; k < spec->nfields; k++) {
            const floe_partition_field *pfld = &spec->fields[k];
            const col_stats *c = NULL;
            for (size_t j = 0; j < fs->nleaves; j++)
                if (cs[j].table_leaf->id == pfld->source_id)
                    c = &cs[j];
            floe_type_id rt = spec->partition_type.children[k].type;
            if (pfld->transform.kind == FLOE_XF_VOID) {
                tuple[k] = floe_value_null(rt);
                continue;
            }
            if (!c)
                FLOE_FAIL(err, FLOE_EINVALID,
                          "%s: partition source column %s is not in the file", uri,
                          pfld->source_name ? pfld->source_name : pfld->name);
            if (c->nulls_known && c->nulls == c->values) {
                tuple[k] = floe_value_null(rt);
                continue;
            }
            floe_value lo, hi;
            if (!c->ok || !c->has_minmax || !c->nulls_known || c->nulls > 0 ||
                floe_transform_apply(pfld->transform, &c->min, &lo, err) < 0 ||
                floe_transform_apply(pfld->transform, &c->max, &hi, err) < 0 ||
                !floe_value_equal(&lo, &hi))
                FLOE_FAIL(err, FLOE_EINVALID,
                          "%s: rows of several partitions for %s (or statistics missing): "
                          "floe adds existing files only when they hold one partition",
                          uri, pfld->name);
            if ((lo.type == FLOE_TYPE_STRING || lo.type == FLOE_TYPE_BINARY ||
                 lo.type == FLOE_TYPE_FIXED)) {
                const uint8_t *cp = floe_arena_memdup(arena, lo.v.bytes.n ? lo.v.bytes.p
                                                                          : (const uint8_t *)"",
                                                      lo.v.bytes.n ? lo.v.bytes.n : 1);
                if (!cp)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                lo.v.bytes.p = cp;
            }
            tuple[k] = lo;
        }
        out->partition = tuple;
        out->npartition = spec->nfields;
    }
    if (has_ids)
        *has_ids = ids;
done:
    for (size_t i = 0; fi.columns && i < fi.ncolumns; i++) {
        floe_free(fi.columns[i].lower_bound);
        floe_free(fi.columns[i].upper_bound);
    }
    floe_free(fi.columns);
    floe_free(fi.split_offsets);
    floe_free(cs);
    floe_metrics_config_free(cfg);
    floe_pq_reader_close(r);
    floe_partition_spec_free(spec);
    floe_schema_free(ts);
    floe_buf_free(&sb);
    floe_arena_reset(&scratch);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * name mapping for files without ids
 * ------------------------------------------------------------------------------------- */

static json_t *mapping_of(const floe_field *parent) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < parent->nchildren; i++) {
        const floe_field *f = &parent->children[i];
        json_t *o = json_object();
        json_t *names = json_array();
        if (!o || !names) {
            json_decref(o);
            json_decref(names);
            json_decref(arr);
            return NULL;
        }
        json_array_append_new(names, json_string(f->name));
        json_object_set_new(o, "field-id", json_integer(f->id));
        json_object_set_new(o, "names", names);
        if (f->nchildren) {
            json_t *sub = mapping_of(f);
            if (sub)
                json_object_set_new(o, "fields", sub);
        }
        json_array_append_new(arr, o);
    }
    return arr;
}

/* schema.name-mapping.default for the current schema (caller frees with free()). */
static char *name_mapping_json(const floe_schema *s) {
    json_t *arr = mapping_of(&s->root);
    if (!arr)
        return NULL;
    char *t = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return t;
}

/* ---------------------------------------------------------------------------------------
 * floe_table_append_files
 * ------------------------------------------------------------------------------------- */

void floe_table_append_options_init(floe_table_append_options *o) {
    memset(o, 0, sizeof *o);
    o->fsync = true;
    o->manifest_merge = -1;
}

void floe_table_append_result_reset(floe_table_append_result *r) {
    if (!r)
        return;
    floe_append_result_reset(&r->commit);
    floe_convert_result_free(&r->convert);
    memset(r, 0, sizeof *r);
}

typedef struct convert_ctx {
    floe_append *a;
    floe_metrics_config *cfg;
    floe_arena arena;
    const char *phys_dir, *rec_dir;
    int64_t files;
} convert_ctx;

static int on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                   const floe_value *partition, size_t npartition, floe_error *err) {
    convert_ctx *c = ctx;
    floe_data_file df;
    memset(&df, 0, sizeof df);
    FLOE_FORWARD_IF_ERROR(floe_data_file_from_parquet(fi, c->cfg, &c->arena, &df, err));
    size_t pl = strlen(c->phys_dir);
    char *rec = NULL;
    if (!strncmp(uri, c->phys_dir, pl))
        rec = floe_asprintf("%s%s", c->rec_dir, uri + pl);
    else
        rec = floe_strdup(uri);
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    df.file_path = rec;
    df.content = FLOE_CONTENT_DATA;
    df.partition = partition;
    df.npartition = npartition;
    int rc = floe_append_add_file(c->a, &df, err);
    floe_free(rec);
    c->files++;
    return rc;
}

static bool is_parquet_name(const char *p) {
    size_t n = strlen(p);
    return (n > 8 && !strcasecmp(p + n - 8, ".parquet")) || (n > 5 && !strcasecmp(p + n - 5, ".parq"));
}

int floe_table_append_files(floe_table *t, const char *const *inputs, size_t n,
                            const floe_table_append_options *o, floe_table_append_result *res,
                            floe_error *err) {
    floe_table_append_options dflt;
    floe_table_append_options_init(&dflt);
    if (!o)
        o = &dflt;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_append *a = NULL;
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    char *rec_dir = NULL, *phys_dir = NULL, *quarantine = NULL, *mapping = NULL;
    const char **ndjson = NULL;
    size_t nndjson = 0;
    convert_ctx cc;
    memset(&cc, 0, sizeof cc);
    floe_arena_init(&cc.arena, 64 * 1024);
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    bool need_mapping = false;
    int rc = 0;
    FLOE_CHECK(floe_table_metadata_check_writable(m, err));
    FLOE_CHECK(floe_append_new(t, &a, err));
    floe_append_set_merge(a, o->manifest_merge, 0, 0);
    for (size_t i = 0; i < o->nsummary; i++)
        FLOE_CHECK(floe_append_set_summary(a, o->summary[i].key, o->summary[i].value, err));
    if (o->once_key && o->once_value)
        FLOE_CHECK(floe_append_set_once(a, o->once_key, o->once_value, err));
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *msp = floe_table_metadata_default_spec(m);
    if (!ms || !msp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema or spec");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &schema, err));
    FLOE_CHECK(floe_partition_spec_parse_json(msp->json, strlen(msp->json), schema, &spec, err));
    ndjson = floe_calloc(n ? n : 1, sizeof *ndjson);
    if (!ndjson)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    /* existing Parquet files first: they fail fast on a schema mismatch */
    for (size_t i = 0; i < n; i++) {
        bool pq = o->format ? !strcasecmp(o->format, "parquet") : is_parquet_name(inputs[i]);
        if (!pq) {
            ndjson[nndjson++] = inputs[i];
            continue;
        }
        floe_data_file df;
        bool ids = true;
        char *abs = NULL;
        /* the table records the file where it is: an absolute path for local files */
        char *lp = floe_io_local_path(inputs[i]);
        if (lp) {
            abs = realpath(lp, NULL);
            floe_free(lp);
            if (!abs)
                FLOE_FAIL(err, FLOE_ENOTFOUND, "%s: no such file", inputs[i]);
        }
        const char *recorded = abs ? abs : inputs[i];
        rc = floe_data_file_from_parquet_footer(m, recorded, recorded, NULL, 0, &cc.arena, &df,
                                                &ids, err);
        if (rc == 0)
            rc = floe_append_add_file(a, &df, err);
        free(abs); /* realpath's allocation */
        if (rc < 0)
            goto done;
        need_mapping |= !ids;
        r.parquet_files++;
    }
    if (need_mapping && !floe_table_metadata_property(m, "schema.name-mapping.default")) {
        if (!(mapping = name_mapping_json(schema)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }

    if (nndjson) {
        FLOE_CHECK(floe_table_data_dir(t, &rec_dir, err));
        FLOE_CHECK(floe_table_resolve_path(t, rec_dir, &phys_dir, err));
        floe_convert_options co;
        floe_convert_options_init(&co);
        co.schema = schema;
        FLOE_CHECK(floe_table_parquet_options(m, &co.write, err));
        co.write.output.fsync = o->fsync;
        co.threads = o->threads;
        co.out_dir = phys_dir;
        char uuid[37];
        floe_uuid4(uuid);
        co.file_prefix = uuid;
        co.spec = spec->nfields ? spec : NULL;
        co.strict = o->strict;
        if (o->quarantine_uri) {
            co.quarantine_uri = o->quarantine_uri;
        } else {
            floe_catalog *cat = floe_table_catalog(t);
            const char *wh = cat ? floe_catalog_warehouse(cat) : NULL;
            if (wh && floe_table_namespace(t))
                quarantine = floe_asprintf("%s/_quarantine/%s.%s/%s.ndjson", wh,
                                           floe_table_namespace(t), floe_table_name(t), uuid);
            else
                quarantine = floe_asprintf("%s/_quarantine/%s.ndjson", phys_dir, uuid);
            if (!quarantine)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            co.quarantine_uri = quarantine;
        }
        FLOE_CHECK(floe_metrics_config_new(m->properties, m->n_properties, schema, NULL, &cc.cfg,
                                           err));
        cc.a = a;
        cc.phys_dir = phys_dir;
        cc.rec_dir = rec_dir;
        co.on_file = on_file;
        co.on_file_ctx = &cc;
        FLOE_CHECK(floe_convert(ndjson, nndjson, &co, &r.convert, err));
    }
    if (mapping) /* files without ids are readable only through it: same commit */
        FLOE_CHECK(floe_append_set_property(a, "schema.name-mapping.default", mapping, err));
    rc = floe_append_commit(a, &r.commit, err);
    if (rc == FLOE_EUNKNOWN_STATE)
        goto keep;
    if (rc < 0 || r.commit.noop)
        goto remove_outputs;
    goto keep;
remove_outputs:
    for (size_t i = 0; i < (size_t)r.convert.files && r.convert.file_uris; i++)
        floe_io_delete(r.convert.file_uris[i], NULL);
    if (rc < 0)
        goto done;
keep:
    if (rc == 0 && res) {
        *res = r;
        memset(&r, 0, sizeof r);
    }
done:
    if (rc < 0 && rc != FLOE_EUNKNOWN_STATE && r.convert.file_uris)
        for (size_t i = 0; i < (size_t)r.convert.files; i++)
            floe_io_delete(r.convert.file_uris[i], NULL);
    floe_table_append_result_reset(&r);
    floe_metrics_config_free(cc.cfg);
    floe_arena_reset(&cc.arena);
    floe_append_free(a);
    floe_schema_free(schema);
    floe_partition_spec_free(spec);
    floe_free(rec_dir);
    floe_free(phys_dir);
    floe_free(quarantine);
    floe_free(ndjson);
    if (mapping)
        free(mapping);
    return rc;
}
