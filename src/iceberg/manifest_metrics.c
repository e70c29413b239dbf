/*
 * manifest_metrics.c - Iceberg column metrics for a data file: which columns get which
 * metrics (the table's metrics modes), and the conversion of the Parquet writer's file
 * info into the manifest's metric maps.
 *
 * Spec: format/spec.md "Manifests" (column_sizes, value_counts, null_value_counts,
 * nan_value_counts, lower_bounds, upper_bounds; bounds never NaN, -0.0 before +0.0),
 * Appendix D (bound serialization). Table properties as Iceberg's configuration docs
 * define them: write.metadata.metrics.default / .column.<name> /
 * .max-inferred-column-defaults. Where the spec is silent floe does what the reference
 * implementation does: none = nothing at all for the column (not even its size), counts =
 * sizes and counts, truncate(N) / full = counts and bounds; no bounds for values inside
 * lists and maps; truncation applies to strings (code points), binary and fixed (bytes).
 * A variant column's bounds are variant objects of its shredded paths (variant_bounds.h),
 * under the variant field's own id and metrics mode.
 */
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"
#include "scan_internal.h"
#include "variant_bounds.h"

#define DEFAULT_MAX_INFERRED 100

struct floe_metrics_config {
    floe_metrics_mode dflt;
    size_t n;
    int32_t *ids;              /* leaf field ids with a mode of their own */
    floe_metrics_mode *modes;
};

static const floe_metrics_mode TRUNC16 = {FLOE_METRICS_TRUNCATE, 16};

static bool ieq(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
        if (x != b[i])
            return false;
    }
    return true;
}

int floe_metrics_mode_parse(const char *s, floe_metrics_mode *out, floe_error *err) {
    size_t n = s ? strlen(s) : 0;
    /* surrounding spaces are tolerated, as the reference trims */
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    if (n == 4 && ieq(s, "none", 4)) {
        *out = (floe_metrics_mode){FLOE_METRICS_NONE, 0};
        return 0;
    }
    if (n == 6 && ieq(s, "counts", 6)) {
        *out = (floe_metrics_mode){FLOE_METRICS_COUNTS, 0};
        return 0;
    }
    if (n == 4 && ieq(s, "full", 4)) {
        *out = (floe_metrics_mode){FLOE_METRICS_FULL, 0};
        return 0;
    }
    if (n > 10 && ieq(s, "truncate(", 9) && s[n - 1] == ')') {
        int64_t v = 0;
        size_t i = 9;
        for (; i < n - 1 && s[i] >= '0' && s[i] <= '9' && v <= INT32_MAX; i++)
            v = v * 10 + (s[i] - '0');
        if (i == n - 1 && v > 0 && v <= INT32_MAX) {
            *out = (floe_metrics_mode){FLOE_METRICS_TRUNCATE, (int32_t)v};
            return 0;
        }
    }
    return floe_error_set(err, FLOE_EINVALID, "metrics mode \"%s\": expected none, counts, "
                          "truncate(N) with N > 0, or full", s ? s : "");
}

static const char *prop(const floe_kv *props, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (props[i].key && strcmp(props[i].key, key) == 0)
            return props[i].value;
    return NULL;
}

/* Index of the top-level column a field sits under. */
static size_t top_index(const floe_schema *s, const floe_field *f) {
    while (f->parent)
        f = f->parent;
    return (size_t)(f - s->root.children);
}

static bool preserves_order(floe_transform_kind k) {
    return k == FLOE_XF_IDENTITY || k == FLOE_XF_TRUNCATE || k == FLOE_XF_YEAR ||
           k == FLOE_XF_MONTH || k == FLOE_XF_DAY || k == FLOE_XF_HOUR;
}

int floe_metrics_config_new(const floe_kv *props, size_t nprops, const floe_schema *schema,
                            const floe_sort_order *order, floe_metrics_config **out,
                            floe_error *err) {
    floe_metrics_config *c = floe_calloc(1, sizeof *c);
    if (!c)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t nl = schema ? schema->nleaves : 0;
    if (nl) {
        c->ids = floe_calloc(nl, sizeof *c->ids);
        c->modes = floe_calloc(nl, sizeof *c->modes);
        if (!c->ids || !c->modes) {
            floe_metrics_config_free(c);
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
    }
    floe_error e2;
    int64_t max_inferred = DEFAULT_MAX_INFERRED;
    const char *mi = prop(props, nprops, FLOE_PROP_METRICS_MAX_INFERRED);
    if (mi) {
        char *end;
        long long v = strtoll(mi, &end, 10);
        if (*end || v < 0)
            floe_log(FLOE_LOG_WARN, "table property %s=%s is not a count >= 0; using %d",
                     FLOE_PROP_METRICS_MAX_INFERRED, mi, DEFAULT_MAX_INFERRED);
        else
            max_inferred = v;
    }
    bool limited = false; /* inferred default on the first max_inferred top-level columns */
    const char *d = prop(props, nprops, FLOE_PROP_METRICS_DEFAULT);
    c->dflt = TRUNC16;
    if (d) {
        if (floe_metrics_mode_parse(d, &c->dflt, &e2) < 0) {
            floe_log(FLOE_LOG_WARN, "table property %s: %s; using truncate(16)",
                     FLOE_PROP_METRICS_DEFAULT, e2.msg);
            c->dflt = TRUNC16;
        }
    } else if (schema && (int64_t)schema->root.nchildren > max_inferred) {
        limited = true;
        c->dflt = (floe_metrics_mode){FLOE_METRICS_NONE, 0};
    }
    floe_metrics_mode sorted = (c->dflt.kind == FLOE_METRICS_NONE ||
                                c->dflt.kind == FLOE_METRICS_COUNTS) ? TRUNC16 : c->dflt;
    size_t plen = strlen(FLOE_PROP_METRICS_COLUMN_PREFIX);
    for (size_t i = 0; i < nl; i++) {
        const floe_field *leaf = schema->leaves[i];
        char name[1024];
        floe_field_path(leaf, name, sizeof name);
        floe_metrics_mode m = c->dflt;
        bool own = false;
        if (limited && top_index(schema, leaf) < (size_t)max_inferred) {
            m = TRUNC16;
            own = true;
        }
        for (size_t k = 0; order && k < order->nfields; k++)
            if (order->fields[k].source_id == leaf->id &&
                preserves_order(order->fields[k].transform.kind)) {
                m = sorted;
                own = true;
            }
        for (size_t k = 0; k < nprops; k++) {
            const char *key = props[k].key;
            if (!key || strncmp(key, FLOE_PROP_METRICS_COLUMN_PREFIX, plen) != 0 ||
                strcmp(key + plen, name) != 0)
                continue;
            floe_metrics_mode pm;
            if (floe_metrics_mode_parse(props[k].value, &pm, &e2) < 0) {
                floe_log(FLOE_LOG_WARN, "table property %s: %s; ignored", key, e2.msg);
                continue;
            }
            m = pm;
            own = true;
        }
        if (own) {
            c->ids[c->n] = leaf->id;
            c->modes[c->n] = m;
            c->n++;
        }
    }
    *out = c;
    return 0;
}

floe_metrics_mode floe_metrics_config_mode(const floe_metrics_config *c, int32_t field_id) {
    if (!c)
        return TRUNC16;
    for (size_t i = 0; i < c->n; i++)
        if (c->ids[i] == field_id)
            return c->modes[i];
    return c->dflt;
}

void floe_metrics_config_free(floe_metrics_config *c) {
    if (!c)
        return;
    floe_free(c->ids);
    floe_free(c->modes);
    floe_free(c);
}

/* ---------------------------------------------------------------------------------------
 * Parquet file info -> data file metrics
 * ------------------------------------------------------------------------------------- */

/* Bytes taken by the first ncp code points of UTF-8 p[0..n). */
static size_t utf8_prefix(const uint8_t *p, size_t n, size_t ncp) {
    size_t cps = 0;
    for (size_t i = 0; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            if (cps == ncp)
                return i;
            cps++;
        }
    }
    return n;
}

/* One Parquet PLAIN bound as an Iceberg single value (Appendix D), appended to out.
 * Returns 1 when written, 0 when the column gets no bound (odd widths, too-wide
 * decimals, an upper bound that cannot be truncated). */
static int convert_bound(const floe_pq_column_info *ci, const uint8_t *p, size_t n, bool upper,
                         floe_metrics_mode m, floe_buf *out, floe_error *err) {
    const floe_field *f = ci->field;
    if (f->geo) { /* the writer's bounding box points, never truncated */
        if (n != 16 && n != 24 && n != 32) /* geography: only boxes the writer allowed */
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    }
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN:
        if (n != 1)
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, p[0] ? 1 : 0));
        return 1;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
    case FLOE_TYPE_FLOAT:
        if (n != 4)
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_DOUBLE:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        if (n != 8)
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    case FLOE_TYPE_UUID:
        if (n != 16)
            return 0;
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    case FLOE_TYPE_DECIMAL: {
        /* Parquet stores decimals as int32 / int64 (little-endian) or big-endian fixed;
         * Iceberg wants the minimal big-endian two's complement of the unscaled value. */
        floe_i128 u;
        if (ci->field->phys == FLOE_PHYS_INT32 && n == 4) {
            u = (int32_t)floe_load_le32(p);
        } else if (ci->field->phys == FLOE_PHYS_INT64 && n == 8) {
            u = (int64_t)floe_load_le64(p);
        } else if ((ci->field->phys == FLOE_PHYS_FIXED || ci->field->phys == FLOE_PHYS_BYTE_ARRAY)
                   && n >= 1 && n <= 16) {
            unsigned __int128 x = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
            for (size_t i = 0; i < n; i++)
                x = (x << 8) | p[i];
            u = (floe_i128)x;
        } else {
            return 0;
        }
        floe_value v = floe_value_decimal(u, f->precision, f->scale);
        FLOE_FORWARD_IF_ERROR(floe_value_to_binary(&v, out, err));
        return 1;
    }
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED:
        return floe_metrics_truncate_bound(p, n, f->type == FLOE_TYPE_STRING, upper, m, out);
    default:
        return 0;
    }
}

int floe_metrics_truncate_bound(const uint8_t *p, size_t n, bool utf8, bool upper,
                                floe_metrics_mode m, floe_buf *out) {
    if (m.kind != FLOE_METRICS_TRUNCATE) {
        FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p, n));
        return 1;
    }
    bool trunc;
    size_t len = utf8 ? utf8_prefix(p, n, (size_t)m.length) : (size_t)m.length;
    int rc = upper ? floe_pq_truncate_upper(p, n, len, utf8, out, &trunc)
                   : floe_pq_truncate_lower(p, n, len, utf8, out, &trunc);
    if (rc == FLOE_ENOTFOUND)
        return 0; /* no shorter upper bound exists: leave it out */
    FLOE_FORWARD_IF_ERROR(rc);
    return 1;
}

/* The variant bounds of the file's shredded paths (format/spec.md "Bounds for Variant"):
 * for each variant column with metrics mode truncate(N) or full, the paths that qualify,
 * one object per bound. A path qualifies when its value leaf is null in every row (every
 * value there is of the typed_value's type: no mixed types) and it is not inside a list
 * or map; floe shreds object fields only, so no path is under a variant array. */
static int variant_bounds(const floe_pq_file_info *fi, const floe_metrics_config *cfg,
                          floe_arena *arena, floe_column_bound *lo, size_t *nlo,
                          floe_column_bound *hi, size_t *nhi, floe_error *err) {
    int rc = 0;
    size_t nc = fi->ncolumns;
    floe_vbound_field *fs = floe_calloc(nc ? nc : 1, sizeof *fs);
    bool *done = floe_calloc(nc ? nc : 1, sizeof *done);
    floe_buf b;
    floe_buf_init(&b, 0);
    if (!fs || !done)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nc; i++) {
        int32_t vid = fi->columns[i].variant_id;
        if (done[i] || vid <= 0)
            continue;
        floe_metrics_mode m = floe_metrics_config_mode(cfg, vid);
        size_t n = 0;
        for (size_t j = i; j < nc; j++) {
            const floe_pq_column_info *c = &fi->columns[j];
            if (c->variant_id != vid)
                continue;
            done[j] = true;
            if (!c->variant_uniform || c->repeated || !c->has_bounds || !c->variant_path)
                continue;
            fs[n++] = (floe_vbound_field){c->variant_path, c->variant_type, c->lower_bound,
                                          c->upper_bound, c->lower_len, c->upper_len};
        }
        if (n == 0 || m.kind == FLOE_METRICS_NONE || m.kind == FLOE_METRICS_COUNTS)
            continue;
        for (int up = 0; up < 2; up++) {
            floe_buf_reset(&b);
            int got = floe_variant_bound_build(fs, n, up, m, &b, err);
            if (got < 0) {
                rc = got;
                goto done;
            }
            if (!got)
                continue;
            uint8_t *p = floe_arena_memdup(arena, b.data, b.len);
            if (!p)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            if (up)
                hi[(*nhi)++] = (floe_column_bound){vid, p, b.len};
            else
                lo[(*nlo)++] = (floe_column_bound){vid, p, b.len};
        }
    }
done:
    floe_buf_free(&b);
    floe_free(fs);
    floe_free(done);
    return rc;
}

int floe_data_file_from_parquet(const floe_pq_file_info *fi, const floe_metrics_config *cfg,
                                floe_arena *arena, floe_data_file *out, floe_error *err) {
    int rc = 0;
    size_t nc = fi->ncolumns;
    floe_column_count *sizes = NULL, *values = NULL, *nulls = NULL, *nans = NULL;
    floe_column_bound *lo = NULL, *hi = NULL;
    int64_t *splits = NULL;
    size_t ns = 0, nv = 0, nn = 0, nnan = 0, nlo = 0, nhi = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    if (nc) {
        sizes = floe_arena_alloc(arena, nc * sizeof *sizes);
        values = floe_arena_alloc(arena, nc * sizeof *values);
        nulls = floe_arena_alloc(arena, nc * sizeof *nulls);
        nans = floe_arena_alloc(arena, nc * sizeof *nans);
        lo = floe_arena_alloc(arena, nc * sizeof *lo);
        hi = floe_arena_alloc(arena, nc * sizeof *hi);
        if (!sizes || !values || !nulls || !nans || !lo || !hi)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (fi->nsplits && !(splits = floe_arena_memdup(arena, fi->split_offsets,
                                                    fi->nsplits * sizeof *splits)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nc; i++) {
        const floe_pq_column_info *ci = &fi->columns[i];
        if (ci->field_id < 0)
            continue; /* a variant's metadata and value: no Iceberg field of their own */
        floe_metrics_mode m = floe_metrics_config_mode(cfg, ci->field_id);
        if (m.kind == FLOE_METRICS_NONE)
            continue;
        sizes[ns++] = (floe_column_count){ci->field_id, ci->column_size};
        values[nv++] = (floe_column_count){ci->field_id, ci->value_count};
        nulls[nn++] = (floe_column_count){ci->field_id, ci->null_value_count};
        if (ci->has_nan_count)
            nans[nnan++] = (floe_column_count){ci->field_id, ci->nan_value_count};
        /* the reference keeps no bounds for values inside lists and maps */
        if (m.kind == FLOE_METRICS_COUNTS || ci->repeated || !ci->has_bounds || !ci->field)
            continue;
        for (int up = 0; up < 2; up++) {
            floe_buf_reset(&b);
            int got = convert_bound(ci, up ? ci->upper_bound : ci->lower_bound,
                                    up ? ci->upper_len : ci->lower_len, up, m, &b, err);
            if (got < 0) {
                rc = got;
                goto done;
            }
            if (!got)
                continue;
            uint8_t *p = floe_arena_memdup(arena, b.len ? b.data : (const uint8_t *)"",
                                           b.len ? b.len : 1);
            if (!p)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            if (up)
                hi[nhi++] = (floe_column_bound){ci->field_id, p, b.len};
            else
                lo[nlo++] = (floe_column_bound){ci->field_id, p, b.len};
        }
    }
    FLOE_CHECK(variant_bounds(fi, cfg, arena, lo, &nlo, hi, &nhi, err));
    out->file_format = "parquet";
    out->record_count = fi->record_count;
    out->file_size_in_bytes = fi->file_size_in_bytes;
    out->column_sizes = (floe_count_map){true, sizes, ns};
    out->value_counts = (floe_count_map){true, values, nv};
    out->null_value_counts = (floe_count_map){true, nulls, nn};
    out->nan_value_counts = (floe_count_map){true, nans, nnan};
    out->lower_bounds = (floe_bound_map){true, lo, nlo};
    out->upper_bounds = (floe_bound_map){true, hi, nhi};
    out->has_split_offsets = fi->nsplits > 0;
    out->split_offsets = splits;
    out->nsplit_offsets = fi->nsplits;
done:
    floe_buf_free(&b);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * position delete files: the file_path bounds
 * ------------------------------------------------------------------------------------- */

void floe_pos_delete_path_bounds(const floe_data_file *d, const floe_column_bound **lo,
                                 const floe_column_bound **hi) {
    *lo = *hi = NULL;
    for (size_t i = 0; d->lower_bounds.present && i < d->lower_bounds.n; i++)
        if (d->lower_bounds.items[i].field_id == FLOE_POS_DELETE_FILE_PATH_ID)
            *lo = &d->lower_bounds.items[i];
    for (size_t i = 0; d->upper_bounds.present && i < d->upper_bounds.n; i++)
        if (d->upper_bounds.items[i].field_id == FLOE_POS_DELETE_FILE_PATH_ID)
            *hi = &d->upper_bounds.items[i];
}

bool floe_pos_delete_excludes(const floe_data_file *d, const char *path) {
    if (d->referenced_data_file)
        return strcmp(d->referenced_data_file, path) != 0;
    const floe_column_bound *lo, *hi;
    floe_pos_delete_path_bounds(d, &lo, &hi);
    size_t n = strlen(path);
    if (lo) {
        size_t k = lo->n < n ? lo->n : n;
        int c = memcmp(lo->p, path, k);
        if (c > 0 || (c == 0 && lo->n > n))
            return true; /* lower > path */
    }
    if (hi) {
        size_t k = hi->n < n ? hi->n : n;
        /* upper < path; an upper that is a proper prefix of path may be a truncated one
         * (not every writer increments it), so it excludes nothing */
        if (memcmp(hi->p, path, k) < 0)
            return true;
    }
    return false;
}

bool floe_pos_delete_scoped(const floe_data_file *d, const char **path, size_t *len) {
    if (d->content != FLOE_CONTENT_POSITION_DELETES)
        return false;
    if (d->referenced_data_file) {
        *path = d->referenced_data_file;
        *len = strlen(d->referenced_data_file);
        return true;
    }
    const floe_column_bound *lo, *hi;
    floe_pos_delete_path_bounds(d, &lo, &hi);
    if (!lo || !hi || lo->n != hi->n || memcmp(lo->p, hi->p, lo->n))
        return false;
    *path = (const char *)lo->p;
    *len = lo->n;
    return true;
}
