/*
 * append_parquet.c - the data file of an existing Parquet file added to a table as it is:
 * schema check, metrics, and the partition tuple, all of which the manifest then
 * promises to every engine that prunes with it.
 *
 * Spec: format/spec.md "Manifests" (value_counts, null_value_counts, nan_value_counts,
 * lower_bounds, upper_bounds: bounds of every non-null, non-NaN value), "Partitioning"
 * (a data file holds the rows of one partition tuple), "Partition Transforms".
 * Parquet: parquet.thrift Statistics and ColumnOrder.
 *
 * Metrics: sizes and value counts come from the footer. A column's bounds and null count
 * come from its chunk statistics when every chunk's are exact (floe_pq_reader_chunk_bounds:
 * defined order, not truncated, no NaN); otherwise the column's values are read and
 * counted (nulls, NaNs, min and max), as Iceberg's add_files does for the legacy min/max
 * it cannot trust. Null counts the footer lacks for a column that is not read stay
 * unknown (left out), never zero.
 *
 * Geometry and geography (format/spec.md Appendix G: WKB): the footer's min/max order
 * bytes, not points, so these columns are always read, once: every non-null value must be
 * one well-formed WKB geometry (floe_wkb_bbox_add; a file with one that is not is refused
 * naming the column and the row, and nothing of it is recorded), and their bounding box
 * becomes the bounds as floe's writer records them for its own files (x:y[:z][:m]; a
 * geography box only when floe_wkb_bbox_geography_ok: points only, within range).
 *
 * Partition tuple of the default spec: a file must hold the rows of one partition.
 *   - void fields are null; a source column that is all null gives null;
 *   - identity, truncate and the time transforms are monotone, so exact bounds decide:
 *     one partition when the transform of the minimum equals that of the maximum and
 *     the column has no null (and, for floats, no NaN: those come from the values);
 *   - every other transform (bucket) is applied to each row's value.
 * A file with rows of several partitions is refused with the column and two of its
 * values that fall in different partitions (rep->several_partitions says so), so a
 * caller may split it instead.
 *
 * Invariants:
 *   P1. A bound is recorded only when it bounds every non-null, non-NaN value of the
 *       column: exact statistics of every chunk holding values, or the values read.
 *   P2. The partition tuple is returned only when every row maps to it.
 *   P3. Values are read one row group (of the columns needed) at a time.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/parquet_reader.h"
#include "floe/wkb.h"
#include "iceberg/scan_internal.h"

/* ---------------------------------------------------------------------------------------
 * schema compatibility and values
 * ------------------------------------------------------------------------------------- */

/* Do a field's initial-default and write-default give the same value (both absent or
 * null counting as null)? */
static bool defaults_agree(const floe_field *f) {
    json_error_t je;
    json_t *a = f->initial_default_json ? json_loads(f->initial_default_json, JSON_DECODE_ANY, &je)
                                        : json_null();
    json_t *b = f->write_default_json ? json_loads(f->write_default_json, JSON_DECODE_ANY, &je)
                                      : json_null();
    bool same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

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

/* One value of file leaf fl in the reader's in-memory form (floe/parquet_reader.h) as a
 * value of table leaf tl; bytes borrow p. FLOE_EINVALID for an unsigned 64-bit value past
 * the range of long, FLOE_ECORRUPT for a value of the wrong width. */
static int value_of(const floe_field *fl, bool is_unsigned, const floe_field *tl,
                    const uint8_t *p, size_t n, floe_value *out) {
    floe_value v;
    memset(&v, 0, sizeof v);
    v.type = tl->type;
    switch (fl->type) {
    case FLOE_TYPE_BOOLEAN:
        if (n != 1)
            return FLOE_ECORRUPT;
        v.v.b = p[0] != 0;
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        if (n != 4)
            return FLOE_ECORRUPT;
        if (tl->type == FLOE_TYPE_LONG)
            v.v.i64 = (int32_t)floe_load_le32(p);
        else
            v.v.i32 = (int32_t)floe_load_le32(p);
        break;
    case FLOE_TYPE_FLOAT: {
        if (n != 4)
            return FLOE_ECORRUPT;
        float f;
        memcpy(&f, p, 4);
        if (tl->type == FLOE_TYPE_DOUBLE)
            v.v.d = (double)f;
        else
            v.v.f = f;
        break;
    }
    case FLOE_TYPE_DOUBLE:
        if (n != 8)
            return FLOE_ECORRUPT;
        memcpy(&v.v.d, p, 8);
        break;
    case FLOE_TYPE_DECIMAL: {
        floe_i128 u;
        if (n == 4) {
            u = (int32_t)floe_load_le32(p);
        } else if (n == 8) {
            u = (int64_t)floe_load_le64(p);
        } else if (n >= 1 && n <= 16) {
            unsigned __int128 x = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
            for (size_t i = 0; i < n; i++)
                x = (x << 8) | p[i];
            u = (floe_i128)x;
        } else {
            return FLOE_ECORRUPT;
        }
        v.v.dec.unscaled = u;
        v.v.dec.scale = tl->scale;
        v.v.dec.precision = tl->precision;
        break;
    }
    case FLOE_TYPE_UUID:
        if (n != 16)
            return FLOE_ECORRUPT;
        memcpy(v.v.uuid, p, 16);
        break;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED:
        if (tl->type == FLOE_TYPE_UUID) {
            if (n != 16)
                return FLOE_ECORRUPT;
            memcpy(v.v.uuid, p, 16);
        } else {
            v.v.bytes.p = p;
            v.v.bytes.n = n;
        }
        break;
    default: /* long, time, timestamps */
        if (n != 8)
            return FLOE_ECORRUPT;
        if (is_unsigned && floe_load_le64(p) > (uint64_t)INT64_MAX)
            return FLOE_EINVALID;
        v.v.i64 = (int64_t)floe_load_le64(p);
        break;
    }
    *out = v;
    return 0;
}

static bool is_bytes_value(const floe_value *v) {
    return v->type == FLOE_TYPE_STRING || v->type == FLOE_TYPE_BINARY ||
           v->type == FLOE_TYPE_FIXED;
}

static bool is_float_value(const floe_value *v) {
    return v->type == FLOE_TYPE_FLOAT || v->type == FLOE_TYPE_DOUBLE;
}

static bool is_nan_value(const floe_value *v) {
    return (v->type == FLOE_TYPE_FLOAT && isnan(v->v.f)) ||
           (v->type == FLOE_TYPE_DOUBLE && isnan(v->v.d));
}

/* *dst = v, its bytes copied into b (dst then borrows b). */
static int keep_value(floe_value *dst, floe_buf *b, const floe_value *v) {
    *dst = *v;
    if (v->is_null || !is_bytes_value(v))
        return 0;
    floe_buf_reset(b);
    int rc = floe_buf_append(b, v->v.bytes.p, v->v.bytes.n);
    if (rc < 0)
        return rc;
    dst->v.bytes.p = b->data ? b->data : (const uint8_t *)"";
    return 0;
}

/* A short text of v for a message (JSON form; NaN as NaN), into s[0..n). */
static const char *value_text(const floe_value *v, char *s, size_t n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error e;
    floe_error_clear(&e);
    if (is_nan_value(v))
        snprintf(s, n, "NaN");
    else if (floe_value_to_json(v, &b, &e) == 0)
        snprintf(s, n, "%.*s%s", (int)(b.len > 80 ? 80 : b.len), (const char *)b.data,
                 b.len > 80 ? "..." : "");
    else if (is_bytes_value(v))
        snprintf(s, n, "%zu bytes", v->v.bytes.n);
    else
        snprintf(s, n, "?");
    floe_buf_free(&b);
    return s;
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
    if (len)
        memcpy(p, src, len);
    *out = p;
    *n = len;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * per column: counts and bounds
 * ------------------------------------------------------------------------------------- */

typedef struct leaf_acc {
    const floe_field *fl;        /* file leaf (the reader's Iceberg schema) */
    const floe_field *tl;        /* table leaf */
    const floe_pq_node *node;
    bool repeated;
    bool want_bounds;            /* the metrics mode records bounds for it */
    int64_t size, values;
    int64_t nulls;
    bool nulls_known;
    int64_t nans;
    bool nans_known;             /* counted from the values */
    bool exact;                  /* min/max bound every non-null, non-NaN value (P1) */
    bool has_minmax;             /* some such value exists */
    floe_value min, max;         /* table leaf type; bytes in min_b / max_b */
    floe_buf min_b, max_b;
    bool read;                   /* its values are read */
    bool unknown;                /* the table's type is unknown: nulls only, no metrics */
    bool geo;                    /* geometry / geography: values checked as WKB and their
                                  * bounding box in box (never min/max) */
    floe_wkb_bbox box;
} leaf_acc;

/* Fold a non-null value into the column's bounds (NaN counted, never a bound). */
static int acc_value(leaf_acc *c, const floe_value *v) {
    if (is_nan_value(v)) {
        c->nans++;
        return 0;
    }
    if (!c->has_minmax) {
        FLOE_FORWARD_IF_ERROR(keep_value(&c->min, &c->min_b, v));
        FLOE_FORWARD_IF_ERROR(keep_value(&c->max, &c->max_b, v));
        c->has_minmax = true;
        return 0;
    }
    if (floe_value_compare(v, &c->min) < 0)
        FLOE_FORWARD_IF_ERROR(keep_value(&c->min, &c->min_b, v));
    if (floe_value_compare(v, &c->max) > 0)
        FLOE_FORWARD_IF_ERROR(keep_value(&c->max, &c->max_b, v));
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * per partition field
 * ------------------------------------------------------------------------------------- */

typedef struct part_acc {
    const floe_partition_field *pf;
    leaf_acc *src;               /* NULL for void */
    bool by_rows;                /* the transform is applied to every row's value */
    bool decided;
    floe_value value;            /* the partition value once decided (bytes in value_b) */
    floe_buf value_b;
    /* by rows: the first row's source and partition value, and the first that differs */
    bool seen, spans;
    floe_value src0, part0, src1, part1;
    floe_buf src0_b, part0_b, src1_b, part1_b;
} part_acc;

static int part_row(part_acc *p, const floe_value *src, floe_error *err) {
    floe_value pv;
    FLOE_FORWARD_IF_ERROR(floe_transform_apply(p->pf->transform, src, &pv, err));
    if (!p->seen) {
        p->seen = true;
        if (keep_value(&p->src0, &p->src0_b, src) < 0 ||
            keep_value(&p->part0, &p->part0_b, &pv) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return 0;
    }
    if (p->spans || floe_value_equal(&pv, &p->part0))
        return 0;
    p->spans = true;
    if (keep_value(&p->src1, &p->src1_b, src) < 0 || keep_value(&p->part1, &p->part1_b, &pv) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The refusal of a file with two partitions: which column, which values. */
static int several(const char *uri, const part_acc *p, const floe_value *a, const floe_value *pa,
                   const floe_value *b, const floe_value *pb, floe_error *err) {
    char sa[128], sb[128], name[32];
    const char *col = p->pf->source_name ? p->pf->source_name : p->pf->name;
    value_text(a, sa, sizeof sa);
    value_text(b, sb, sizeof sb);
    floe_buf ta, tb;
    floe_buf_init(&ta, 0);
    floe_buf_init(&tb, 0);
    floe_error e2;
    floe_error_clear(&e2);
    bool texts = floe_transform_human_string(p->pf->transform, pa, &ta, &e2) == 0 &&
                 floe_buf_append_byte(&ta, 0) == 0 &&
                 floe_transform_human_string(p->pf->transform, pb, &tb, &e2) == 0 &&
                 floe_buf_append_byte(&tb, 0) == 0;
    int rc;
    if (p->pf->transform.kind == FLOE_XF_IDENTITY || !texts)
        rc = floe_error_set(err, FLOE_EINVALID,
                            "%s: rows of more than one partition: column %s holds %s and %s; "
                            "an existing file is added only when it holds one partition "
                            "(floe append --split rewrites it per partition)",
                            uri, col, sa, sb);
    else
        rc = floe_error_set(err, FLOE_EINVALID,
                            "%s: rows of more than one partition: column %s holds %s and %s "
                            "(%s %s and %s); an existing file is added only when it holds one "
                            "partition (floe append --split rewrites it per partition)",
                            uri, col, sa, sb,
                            floe_transform_name(p->pf->transform, name, sizeof name),
                            (const char *)ta.data, (const char *)tb.data);
    floe_buf_free(&ta);
    floe_buf_free(&tb);
    return rc;
}

/* Monotone transforms: bounds decide (see the top of the file). */
static bool order_preserving(floe_transform t) {
    return t.kind == FLOE_XF_IDENTITY || t.kind == FLOE_XF_TRUNCATE || t.kind == FLOE_XF_YEAR ||
           t.kind == FLOE_XF_MONTH || t.kind == FLOE_XF_DAY || t.kind == FLOE_XF_HOUR;
}

/* ---------------------------------------------------------------------------------------
 * the values
 * ------------------------------------------------------------------------------------- */

/* A geometry or geography column's values of one row group (the file's rows from row0):
 * each non-null one into c->box, or the file refused naming the column and the row (the
 * file's row number, from 0) of the first that is not WKB. */
static int geo_values(leaf_acc *c, const floe_colbuf *cb, const char *uri, int64_t row0,
                      floe_error *err) {
    int64_t row = row0 - 1;
    size_t j = 0;
    for (size_t l = 0; l < cb->nlevels && j < cb->nvalues; l++) {
        if (!cb->max_rep || cb->rep[l] == 0)
            row++;
        if (cb->max_def && cb->def[l] != cb->max_def)
            continue;
        const uint8_t *p = cb->width ? cb->values + j * (size_t)cb->width
                                     : cb->values + cb->offsets[j];
        size_t n = cb->width ? (size_t)cb->width : cb->offsets[j + 1] - cb->offsets[j];
        j++;
        floe_error e;
        floe_error_clear(&e);
        if (floe_wkb_bbox_add(&c->box, p, n, &e) < 0)
            return floe_error_set(err, FLOE_EINVALID, "%s: column %s, row %" PRId64 " (from 0): "
                                  "the %s value is not WKB (%zu bytes; %s); the file is not "
                                  "appended", uri, c->node->path, row,
                                  c->tl->geo == FLOE_GEO_GEOGRAPHY ? "geography" : "geometry",
                                  n, e.msg);
    }
    return 0;
}

/* Read the columns marked `read` row group by row group: counts and bounds of each, and
 * every row's partition value of the fields decided by rows. Stops early when a field
 * spans partitions and no other metric is wanted. */
static int read_values(floe_pq_reader *r, const char *uri, leaf_acc *cs, size_t nleaves,
                       part_acc *ps, size_t nparts, floe_error *err) {
    int rc = 0;
    size_t nsel = 0;
    const char **paths = floe_calloc(nleaves ? nleaves : 1, sizeof *paths);
    size_t *acc_of = NULL;
    if (!paths)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nleaves; i++)
        if (cs[i].read) {
            paths[nsel++] = cs[i].node->path;
            cs[i].nulls = cs[i].nans = 0;
            cs[i].nulls_known = cs[i].nans_known = true;
            cs[i].has_minmax = false;
            cs[i].exact = true;
        }
    FLOE_CHECK(floe_pq_reader_select_paths(r, paths, nsel, err));
    floe_pq_reader_file pf;
    floe_pq_reader_file_info(r, &pf);
    int64_t row0 = 0; /* the file's first row of group g */
    for (size_t g = 0; g < pf.num_row_groups; g++) {
        const floe_pq_rowset *rs;
        floe_pq_row_group_info rgi;
        floe_pq_reader_row_group_info(r, g, &rgi);
        FLOE_CHECK(floe_pq_reader_read_row_group(r, g, &rs, err));
        floe_free(acc_of);
        acc_of = floe_calloc(rs->ncols ? rs->ncols : 1, sizeof *acc_of);
        if (!acc_of)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t k = 0; k < rs->ncols; k++) {
            acc_of[k] = SIZE_MAX;
            for (size_t i = 0; i < nleaves; i++)
                if (cs[i].node == rs->nodes[k])
                    acc_of[k] = i;
        }
        /* counts and bounds per column */
        for (size_t k = 0; k < rs->ncols; k++) {
            if (acc_of[k] == SIZE_MAX)
                continue;
            leaf_acc *c = &cs[acc_of[k]];
            const floe_colbuf *cb = &rs->cols[k];
            c->nulls += (int64_t)(cb->nlevels - cb->nvalues);
            if (c->geo) {
                FLOE_CHECK(geo_values(c, cb, uri, row0, err));
                continue;
            }
            if (c->repeated)
                continue;
            for (size_t j = 0; j < cb->nvalues; j++) {
                const uint8_t *p = cb->width ? cb->values + j * (size_t)cb->width
                                             : cb->values + cb->offsets[j];
                size_t n = cb->width ? (size_t)cb->width : cb->offsets[j + 1] - cb->offsets[j];
                floe_value v;
                int vrc = value_of(c->fl, c->node->is_unsigned, c->tl, p, n, &v);
                if (vrc == FLOE_EINVALID)
                    FLOE_FAIL(err, FLOE_EINVALID, "%s: column %s holds %" PRIu64
                              ", beyond the range of %s", uri, c->node->path,
                              floe_load_le64(p), floe_type_name(c->tl->type));
                if (vrc < 0)
                    FLOE_FAIL(err, FLOE_ECORRUPT, "%s: row group %zu: column %s: a value of "
                              "%zu bytes", uri, g, c->node->path, n);
                if (acc_value(c, &v) < 0)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
        }
        /* partition values by rows */
        for (size_t q = 0; q < nparts; q++) {
            part_acc *p = &ps[q];
            if (!p->by_rows || p->spans)
                continue;
            size_t k = 0;
            while (k < rs->ncols && (acc_of[k] == SIZE_MAX || &cs[acc_of[k]] != p->src))
                k++;
            if (k == rs->ncols)
                FLOE_FAIL(err, FLOE_EINTERNAL, "%s: partition source %s not read", uri,
                          p->src->node->path);
            const floe_colbuf *cb = &rs->cols[k];
            const leaf_acc *c = p->src;
            size_t j = 0;
            for (size_t row = 0; row < cb->nlevels && !p->spans; row++) {
                floe_value v = floe_value_null(c->tl->type);
                if (c->tl->type == FLOE_TYPE_DECIMAL) {
                    v.v.dec.scale = c->tl->scale;
                    v.v.dec.precision = c->tl->precision;
                }
                if (!cb->max_def || cb->def[row] == cb->max_def) {
                    const uint8_t *pp = cb->width ? cb->values + j * (size_t)cb->width
                                                  : cb->values + cb->offsets[j];
                    size_t n = cb->width ? (size_t)cb->width
                                         : cb->offsets[j + 1] - cb->offsets[j];
                    j++;
                    if (value_of(c->fl, c->node->is_unsigned, c->tl, pp, n, &v) < 0)
                        FLOE_FAIL(err, FLOE_ECORRUPT, "%s: column %s: a value of %zu bytes",
                                  uri, c->node->path, n);
                }
                FLOE_CHECK(part_row(p, &v, err));
            }
            if (p->spans)
                FLOE_FAIL(err, FLOE_EINVALID, "spans"); /* reported by the caller */
        }
        row0 += rgi.num_rows;
    }
done:
    floe_free(paths);
    floe_free(acc_of);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * the data file
 * ------------------------------------------------------------------------------------- */

/* What the phases of floe_data_file_from_parquet_footer share. */
typedef struct footer_ctx {
    const char *uri;
    floe_pq_reader *r;
    floe_pq_reader_file pf;
    floe_schema *ts;              /* the table's current schema */
    floe_partition_spec *spec;    /* its default spec */
    floe_metrics_config *cfg;
    leaf_acc *cs;                 /* one per file leaf */
    size_t nleaves;
    part_acc *ps;                 /* one per partition field, when the tuple is derived */
    size_t nparts;
    floe_parquet_file_report report;
} footer_ctx;

/* Schema check: every file leaf maps to a table leaf of a compatible type, and every
 * table column the file lacks may be left to its defaults. */
static int check_schema(footer_ctx *x, floe_error *err) {
    const char *uri = x->uri;
    floe_pq_reader *r = x->r;
    const floe_schema *ts = x->ts;
    const floe_schema *fs = NULL;
    FLOE_FORWARD_IF_ERROR(floe_pq_reader_iceberg_schema(r, &fs, err));
    const floe_pq_node *root = floe_pq_reader_root(r);
    for (size_t i = 0; i < root->nchildren; i++)
        x->report.has_ids |= root->children[i].has_field_id;
    floe_pq_reader_file_info(r, &x->pf);
    size_t nleaves = x->nleaves = x->pf.num_columns;
    leaf_acc *cs = x->cs = floe_calloc(nleaves ? nleaves : 1, sizeof *cs);
    if (!cs)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nleaves; i++) {
        floe_buf_init(&cs[i].min_b, 0);
        floe_buf_init(&cs[i].max_b, 0);
    }
    for (size_t i = 0; i < nleaves; i++) {
        const floe_field *fl = floe_pq_reader_iceberg_field(r, i);
        if (!fl)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s has no Iceberg field",
                                  uri, floe_pq_reader_leaf(r, i)->path);
        /* a variant's parts (metadata, value, and the columns of a shredded variant) are
         * no Iceberg fields: they go with their variant's value part, which has no metrics */
        bool part = fl->type == FLOE_TYPE_VARIANT || fl->id < 0;
        const floe_field *fv = fl->type == FLOE_TYPE_VARIANT ? fl : part ? fl->parent : fl;
        char path[512];
        floe_field_path(fv, path, sizeof path);
        const floe_field *tl = x->report.has_ids ? floe_schema_find_id(ts, fv->id)
                                                 : floe_schema_find_path(ts, path);
        if (tl && part && tl->type == FLOE_TYPE_VARIANT) {
            const char *pn = fl->type == FLOE_TYPE_VARIANT ? "value" : fl->name;
            const floe_field *tp = NULL;
            for (size_t k = 0; k < tl->nchildren; k++)
                if (!strcmp(tl->children[k].name, pn))
                    tp = &tl->children[k];
            tl = tp;
            if (fl->type == FLOE_TYPE_VARIANT) /* typed columns: the value part's metrics */
                for (size_t k = 0; k < fl->nchildren; k++)
                    if (!strcmp(fl->children[k].name, "value"))
                        fl = &fl->children[k];
        }
        if (!tl)
            return floe_error_set(err, FLOE_ESCHEMA, "%s: column %s%s is not in the table "
                                  "schema", uri, path,
                                  x->report.has_ids ? " (by field id)" : "");
        /* v3 unknown (spec "Primitive Types"): always null, its column is ignored by
         * readers whatever its type; check_unknown_nulls holds it to nulls */
        bool unknown = tl->type == FLOE_TYPE_UNKNOWN;
        if (!unknown && !type_compatible(fl, tl)) {
            char a[64], b[64];
            return floe_error_set(err, FLOE_ESCHEMA, "%s: column %s is %s in the file but %s "
                                  "in the table", uri, path,
                                  floe_field_type_str(fl, a, sizeof a),
                                  floe_field_type_str(tl, b, sizeof b));
        }
        cs[i].node = floe_pq_reader_leaf(r, i);
        /* a file column annotated GEOMETRY / GEOGRAPHY holds coordinates in its own CRS
         * (and edges of its own algorithm): only the table's type reads them right. An
         * unannotated binary column is taken as WKB of the table's type (values checked) */
        if (!unknown && tl->geo != FLOE_GEO_NONE) {
            floe_field ff = {.geo = FLOE_GEO_NONE};
            ff.geo = floe_pq_reader_leaf_geo(r, i, &ff.geo_crs, &ff.geo_algo);
            if (ff.geo != FLOE_GEO_NONE && !floe_field_geo_same(&ff, tl)) {
                char b[256];
                return floe_error_set(err, FLOE_ESCHEMA, "%s: column %s is %s in the file but "
                                      "%s in the table (another CRS, kind or edge "
                                      "algorithm: its values would be read wrong)", uri, path,
                                      cs[i].node->type_text, floe_field_type_str(tl, b, sizeof b));
            }
        }
        cs[i].fl = fl;
        cs[i].tl = tl;
        cs[i].repeated = tl->rep_level > 0 || cs[i].node->rep_level > 0;
        cs[i].unknown = unknown;
        floe_metrics_mode mm = floe_metrics_config_mode(x->cfg, tl->id);
        /* geometry / geography: bounds are the values' bounding box (format/spec.md), not
         * the footer's byte-order min/max; footer_metrics has their values read */
        cs[i].geo = !unknown && tl->geo != FLOE_GEO_NONE;
        floe_wkb_bbox_init(&cs[i].box);
        cs[i].want_bounds = !unknown && !cs[i].repeated && tl->id >= 0 &&
                            mm.kind != FLOE_METRICS_NONE && mm.kind != FLOE_METRICS_COUNTS;
    }
    for (size_t i = 0; i < ts->root.nchildren; i++) {
        const floe_field *tf = &ts->root.children[i];
        bool present = false;
        for (size_t k = 0; k < nleaves && !present; k++) {
            const floe_field *q = cs[k].tl;
            while (q && q->parent)
                q = q->parent;
            present = q == tf;
        }
        if (present)
            continue;
        if (tf->required && !tf->initial_default_json)
            return floe_error_set(err, FLOE_ESCHEMA, "%s: required column %s is missing", uri,
                                  tf->name);
        /* readers fill a column the file lacks from initial-default; rows appended now
         * must hold the write-default (format/spec.md "Default values") */
        if (!defaults_agree(tf))
            return floe_error_set(err, FLOE_ESCHEMA, "%s: column %s is missing: readers would "
                                  "fill it with its initial-default (%s), but rows appended "
                                  "now take its write-default (%s); write the column into "
                                  "the file or append the rows as NDJSON", uri, tf->name,
                                  tf->initial_default_json ? tf->initial_default_json : "null",
                                  tf->write_default_json ? tf->write_default_json : "null");
    }
    return 0;
}

/* A file column for a field of type unknown must hold nulls only: the footer's null
 * counts say so, or its values are read where a chunk has none. */
static int check_unknown_nulls(footer_ctx *x, floe_error *err) {
    int rc = 0;
    for (size_t i = 0; i < x->nleaves && rc == 0; i++) {
        const leaf_acc *c = &x->cs[i];
        if (!c->unknown)
            continue;
        bool counted = true;
        for (size_t g = 0; g < x->pf.num_row_groups; g++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(x->r, g, i, &ci);
            if (ci.null_count < 0 || ci.null_count > ci.num_values) {
                counted = false;
            } else if (ci.null_count < ci.num_values) {
                return floe_error_set(err, FLOE_ESCHEMA, "%s: row group %zu: column %s holds "
                                      "%" PRId64 " non-null value(s), but its type in the "
                                      "table is unknown, which takes only null", x->uri, g,
                                      c->node->path, ci.num_values - ci.null_count);
            }
        }
        if (counted)
            continue;
        const char *path = c->node->path;
        FLOE_FORWARD_IF_ERROR(floe_pq_reader_select_paths(x->r, &path, 1, err));
        for (size_t g = 0; g < x->pf.num_row_groups; g++) {
            const floe_pq_rowset *rs;
            FLOE_FORWARD_IF_ERROR(floe_pq_reader_read_row_group(x->r, g, &rs, err));
            for (size_t k = 0; k < rs->ncols; k++)
                if (rs->nodes[k] == c->node && rs->cols[k].nvalues > 0)
                    return floe_error_set(err, FLOE_ESCHEMA, "%s: row group %zu: column %s "
                                          "holds %zu non-null value(s), but its type in the "
                                          "table is unknown, which takes only null", x->uri,
                                          g, path, rs->cols[k].nvalues);
        }
    }
    return rc;
}

/* Every variant of the file is read through here (floe_pq_reader_variant_check), so a file
 * whose variants floe cannot read is refused now, naming the file and the column, not at
 * every later scan of the table: for a variant another writer shredded, an unsupported
 * shredded type, a value conflicting with its typed_value, a shredded field over a
 * non-object; for any variant, shredded or not, metadata or value bytes that break
 * VariantEncoding.md (a key twice, keys out of order, offsets past the end, a dictionary
 * flagged sorted that is not). */
static int check_variants(floe_io *io, const footer_ctx *x, floe_error *err) {
    const floe_pq_node **groups = floe_calloc(x->nleaves ? x->nleaves : 1, sizeof *groups);
    const char **paths = floe_calloc(x->nleaves ? x->nleaves : 1, sizeof *paths);
    floe_pq_reader *r = NULL;
    size_t ng = 0;
    int rc = 0;
    if (!groups || !paths)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < x->nleaves; i++) {
        const floe_pq_node *nd = x->cs[i].node;
        if (x->cs[i].tl->id >= 0 || strcmp(nd->name, "metadata") || !nd->parent)
            continue;
        const floe_pq_node *g = nd->parent;
        groups[ng] = g;
        paths[ng++] = g->path;
    }
    if (!ng)
        goto done;
    FLOE_CHECK(floe_pq_reader_open(io, x->uri, NULL, &r, err));
    FLOE_CHECK(floe_pq_reader_select_paths(r, paths, ng, err));
    for (size_t g = 0; g < x->pf.num_row_groups; g++) {
        const floe_pq_rowset *rs;
        FLOE_CHECK(floe_pq_reader_read_row_group(r, g, &rs, err));
        for (size_t k = 0; k < ng; k++) {
            /* the group of this reader's tree at the same path */
            const floe_pq_node *gn = NULL;
            for (size_t c = 0; c < x->nleaves && !gn; c++) {
                const floe_pq_node *ln = floe_pq_reader_leaf(r, c);
                if (ln->parent && !strcmp(ln->parent->path, groups[k]->path))
                    gn = ln->parent;
            }
            FLOE_CHECK(floe_pq_reader_variant_check(r, gn, err));
        }
    }
done:
    floe_pq_reader_close(r);
    floe_free(groups);
    floe_free(paths);
    return rc;
}

/* The footer: sizes, counts, and bounds where every chunk's statistics are exact; a
 * column that wants bounds the footer cannot give is marked to be read. */
static int footer_metrics(footer_ctx *x, floe_error *err) {
    int rc = 0;
    floe_buf bmin, bmax;
    floe_buf_init(&bmin, 0);
    floe_buf_init(&bmax, 0);
    for (size_t i = 0; i < x->nleaves; i++) {
        leaf_acc *c = &x->cs[i];
        if (c->unknown)
            continue;
        c->nulls_known = true;
        c->exact = !c->repeated && !c->geo; /* a geo column's box comes from its values */
        for (size_t g = 0; g < x->pf.num_row_groups; g++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(x->r, g, i, &ci);
            c->size += ci.compressed_size;
            c->values += ci.num_values;
            if (ci.null_count < 0 || ci.null_count > ci.num_values)
                c->nulls_known = false;
            else
                c->nulls += ci.null_count;
            if (!c->exact)
                continue;
            int got = floe_pq_reader_chunk_bounds(x->r, g, i, &bmin, &bmax, err);
            if (got < 0) {
                rc = got;
                goto done;
            }
            if (got == 0) {
                /* a chunk of only nulls bounds nothing; any other needs its values */
                if (!(ci.null_count >= 0 && ci.null_count == ci.num_values))
                    c->exact = false;
                continue;
            }
            for (int up = 0; up < 2 && c->exact; up++) {
                const floe_buf *b = up ? &bmax : &bmin;
                floe_value v;
                int vrc = value_of(c->fl, c->node->is_unsigned, c->tl, b->data, b->len, &v);
                if (vrc == FLOE_EINVALID)
                    FLOE_FAIL(err, FLOE_EINVALID, "%s: column %s holds values beyond the "
                              "range of %s", x->uri, c->node->path,
                              floe_type_name(c->tl->type));
                if (vrc < 0) {
                    c->exact = false;
                    break;
                }
                if (acc_value(c, &v) < 0)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
        }
        if (c->geo || (c->want_bounds && !c->exact))
            c->read = true;
    }
done:
    floe_buf_free(&bmin);
    floe_buf_free(&bmax);
    return rc;
}

/* The partition tuple of the default spec, decided by bounds where they can, else marked
 * to be decided by the rows (p->by_rows, the source column to be read). */
static int partition_by_bounds(footer_ctx *x, floe_error *err) {
    const char *uri = x->uri;
    const floe_partition_spec *spec = x->spec;
    size_t nparts = x->nparts = spec->nfields;
    part_acc *ps = x->ps = floe_calloc(nparts, sizeof *ps);
    if (!ps)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t k = 0; k < nparts; k++) {
        part_acc *p = &ps[k];
        floe_buf_init(&p->value_b, 0);
        floe_buf_init(&p->src0_b, 0);
        floe_buf_init(&p->part0_b, 0);
        floe_buf_init(&p->src1_b, 0);
        floe_buf_init(&p->part1_b, 0);
        p->pf = &spec->fields[k];
    }
    for (size_t k = 0; k < nparts; k++) {
        part_acc *p = &ps[k];
        const floe_partition_field *pfld = p->pf;
        floe_type_id rt = spec->partition_type.children[k].type;
        if (pfld->transform.kind == FLOE_XF_VOID) {
            p->value = floe_value_null(rt);
            p->decided = true;
            continue;
        }
        if (pfld->nsource_ids > 1)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: partition field %s has %zu "
                                  "source columns: existing files are added only to tables "
                                  "partitioned by single columns", uri, pfld->name,
                                  pfld->nsource_ids);
        for (size_t j = 0; j < x->nleaves; j++)
            if (x->cs[j].tl->id == pfld->source_id)
                p->src = &x->cs[j];
        if (!p->src)
            return floe_error_set(err, FLOE_EINVALID, "%s: partition source column %s is not "
                                  "in the file", uri,
                                  pfld->source_name ? pfld->source_name : pfld->name);
        leaf_acc *c = p->src;
        if (c->repeated)
            return floe_error_set(err, FLOE_EINVALID, "%s: partition source column %s is "
                                  "inside a list or map", uri, c->node->path);
        if (c->nulls_known && c->nulls == c->values) {
            p->value = floe_value_null(rt);
            p->decided = true;
            continue;
        }
        floe_value sample = floe_value_null(c->tl->type);
        bool floats = is_float_value(&sample); /* NaN is outside the bounds */
        if (order_preserving(pfld->transform) && !floats && c->exact && c->nulls_known &&
            c->has_minmax) {
            floe_value lo, hi;
            FLOE_FORWARD_IF_ERROR(floe_transform_apply(pfld->transform, &c->min, &lo, err));
            FLOE_FORWARD_IF_ERROR(floe_transform_apply(pfld->transform, &c->max, &hi, err));
            if (c->nulls > 0) {
                floe_value nv = floe_value_null(c->tl->type);
                floe_value np = floe_value_null(rt);
                x->report.several_partitions = true;
                return several(uri, p, &nv, &np, &c->min, &lo, err);
            }
            if (!floe_value_equal(&lo, &hi)) {
                x->report.several_partitions = true;
                return several(uri, p, &c->min, &lo, &c->max, &hi, err);
            }
            if (keep_value(&p->value, &p->value_b, &lo) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            p->decided = true;
            continue;
        }
        p->by_rows = true;
        c->read = true;
    }
    return 0;
}

/* The values, where the footer does not tell: the columns marked to be read, and the
 * partition fields decided by rows. */
static int read_marked_values(footer_ctx *x, floe_error *err) {
    for (size_t i = 0; i < x->nleaves; i++)
        if (x->cs[i].read)
            x->report.columns_read++;
    if (!x->report.columns_read)
        return 0;
    part_acc *ps = x->ps;
    int rc = read_values(x->r, x->uri, x->cs, x->nleaves, ps, x->nparts, err);
    for (size_t k = 0; rc == FLOE_EINVALID && k < x->nparts; k++)
        if (ps[k].spans) {
            x->report.several_partitions = true;
            rc = several(x->uri, &ps[k], &ps[k].src0, &ps[k].part0, &ps[k].src1,
                         &ps[k].part1, err);
        }
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < x->nparts; k++) {
        part_acc *p = &ps[k];
        if (!p->by_rows)
            continue;
        if (!p->seen) /* no rows at all */
            p->part0 = floe_value_null(x->spec->partition_type.children[k].type);
        if (keep_value(&p->value, &p->value_b, &p->part0) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        p->decided = true;
    }
    return 0;
}

/* The file metrics of the columns into fi (the caller frees fi's arrays and bounds). */
static int file_info(const footer_ctx *x, floe_pq_file_info *fi, floe_error *err) {
    const floe_pq_reader_file *pf = &x->pf;
    size_t nleaves = x->nleaves;
    fi->record_count = pf->num_rows;
    fi->file_size_in_bytes = pf->file_size;
    fi->row_group_count = (int64_t)pf->num_row_groups;
    fi->columns = floe_calloc(nleaves ? nleaves : 1, sizeof *fi->columns);
    fi->split_offsets = floe_calloc(pf->num_row_groups ? pf->num_row_groups : 1,
                                    sizeof(int64_t));
    if (!fi->columns || !fi->split_offsets)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t g = 0; g < pf->num_row_groups; g++) {
        floe_pq_row_group_info rg;
        floe_pq_reader_row_group_info(x->r, g, &rg);
        int64_t off = rg.file_offset;
        if (off <= 0 && pf->num_columns) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(x->r, g, 0, &ci);
            off = ci.dictionary_page_offset > 0 ? ci.dictionary_page_offset : ci.data_page_offset;
        }
        fi->split_offsets[fi->nsplits++] = off;
    }
    fi->ncolumns = 0;
    for (size_t i = 0; i < nleaves; i++) {
        const leaf_acc *c = &x->cs[i];
        if (c->unknown) /* no metrics for an unknown column, as floe writes none */
            continue;
        floe_pq_column_info *ci = &fi->columns[fi->ncolumns++];
        ci->field = c->tl;
        ci->field_id = c->tl->id;
        ci->repeated = c->repeated;
        ci->column_size = c->size;
        ci->value_count = c->values;
        ci->null_value_count = c->nulls_known ? c->nulls : 0;
        ci->has_nan_count = c->read && c->nans_known &&
                            (c->tl->type == FLOE_TYPE_FLOAT || c->tl->type == FLOE_TYPE_DOUBLE);
        ci->nan_value_count = c->nans;
        if (c->geo) {
            uint8_t lo[32], hi[32];
            size_t len;
            if (!c->want_bounds || !c->read ||
                (c->tl->geo == FLOE_GEO_GEOGRAPHY && !floe_wkb_bbox_geography_ok(&c->box)) ||
                !floe_wkb_bbox_bounds(&c->box, lo, hi, &len))
                continue;
            ci->lower_bound = floe_malloc(len);
            ci->upper_bound = floe_malloc(len);
            if (!ci->lower_bound || !ci->upper_bound)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            memcpy(ci->lower_bound, lo, len);
            memcpy(ci->upper_bound, hi, len);
            ci->lower_len = ci->upper_len = len;
            ci->has_bounds = true;
            continue;
        }
        if (c->exact && c->has_minmax && c->want_bounds) {
            floe_value lo = c->min, hi = c->max;
            /* float zero bounds as -0.0 and +0.0, as floe's writer records them */
            if (lo.type == FLOE_TYPE_FLOAT && lo.v.f == 0.0f)
                lo.v.f = -0.0f;
            if (hi.type == FLOE_TYPE_FLOAT && hi.v.f == 0.0f)
                hi.v.f = 0.0f;
            if (lo.type == FLOE_TYPE_DOUBLE && lo.v.d == 0.0)
                lo.v.d = -0.0;
            if (hi.type == FLOE_TYPE_DOUBLE && hi.v.d == 0.0)
                hi.v.d = 0.0;
            if (plain_bytes(c->tl, &lo, &ci->lower_bound, &ci->lower_len) < 0 ||
                plain_bytes(c->tl, &hi, &ci->upper_bound, &ci->upper_len) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            ci->has_bounds = true;
        }
    }
    return 0;
}

/* Null counts the footer did not give are unknown, not zero: drop them from out. */
static void drop_unknown_null_counts(const footer_ctx *x, floe_data_file *out) {
    floe_column_count *nc = (floe_column_count *)out->null_value_counts.items;
    size_t k = 0;
    for (size_t i = 0; i < out->null_value_counts.n; i++) {
        bool known = true;
        for (size_t j = 0; j < x->nleaves; j++)
            if (x->cs[j].tl->id == nc[i].field_id)
                known = x->cs[j].nulls_known;
        if (known)
            nc[k++] = nc[i];
    }
    out->null_value_counts.n = k;
}

/* The partition tuple: the caller's, or the one derived (copied into arena). */
static int partition_tuple(const footer_ctx *x, const floe_value *partition, size_t npartition,
                           floe_arena *arena, floe_data_file *out, floe_error *err) {
    if (partition) {
        if (npartition != x->spec->nfields)
            return floe_error_set(err, FLOE_EINVALID, "%s: %zu partition values for a spec "
                                  "of %zu fields", x->uri, npartition, x->spec->nfields);
        out->partition = partition;
        out->npartition = npartition;
        return 0;
    }
    if (!x->nparts)
        return 0;
    floe_value *tuple = floe_arena_alloc(arena, x->nparts * sizeof *tuple);
    if (!tuple)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t k = 0; k < x->nparts; k++) {
        floe_value v = x->ps[k].value;
        if (!x->ps[k].decided)
            return floe_error_set(err, FLOE_EINTERNAL, "%s: partition field %s undecided",
                                  x->uri, x->ps[k].pf->name);
        if (!v.is_null && is_bytes_value(&v)) {
            const uint8_t *cp = floe_arena_memdup(arena, v.v.bytes.n ? v.v.bytes.p
                                                                     : (const uint8_t *)"",
                                                  v.v.bytes.n + 1);
            if (!cp)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            v.v.bytes.p = cp;
        }
        tuple[k] = v;
    }
    out->partition = tuple;
    out->npartition = x->nparts;
    return 0;
}

/* A file whose rows span partitions is refused here (FLOE_EINVALID) and may be split by
 * the caller (floe append --split) through the writer, which takes geo bytes as they
 * are: its geometry / geography values are checked first, so a value that is not WKB
 * refuses the file whichever way it would be added. */
static int check_geo_values(footer_ctx *x, floe_error *err) {
    bool any = false;
    for (size_t i = 0; i < x->nleaves; i++) {
        x->cs[i].read = x->cs[i].geo;
        any = any || x->cs[i].geo;
    }
    return any ? read_values(x->r, x->uri, x->cs, x->nleaves, NULL, 0, err) : 0;
}

int floe_data_file_from_parquet_footer(floe_io *io, const floe_table_metadata *m, const char *uri,
                                       const char *recorded_path, const floe_value *partition,
                                       size_t npartition, floe_arena *arena,
                                       floe_data_file *out, floe_parquet_file_report *rep,
                                       floe_error *err) {
    footer_ctx x;
    memset(&x, 0, sizeof x);
    x.uri = uri;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    int rc = 0;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *msp = floe_table_metadata_default_spec(m);
    if (!ms || !msp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema or spec");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &x.ts, err));
    FLOE_CHECK(floe_partition_spec_parse_json(msp->json, strlen(msp->json), x.ts, &x.spec, err));
    FLOE_CHECK(floe_metrics_config_new(m->properties, m->n_properties, x.ts, NULL, &x.cfg, err));
    FLOE_CHECK(floe_pq_reader_open(io, uri, NULL, &x.r, err));
    FLOE_CHECK(check_schema(&x, err));
    FLOE_CHECK(check_unknown_nulls(&x, err));
    FLOE_CHECK(check_variants(io, &x, err));
    FLOE_CHECK(footer_metrics(&x, err));
    if (!partition && x.spec->nfields)
        rc = partition_by_bounds(&x, err);
    if (rc == 0)
        rc = read_marked_values(&x, err);
    if (rc == FLOE_EINVALID && x.report.several_partitions) {
        floe_error spans;
        floe_error_clear(&spans);
        if (err)
            spans = *err;
        int grc = check_geo_values(&x, err);
        if (grc == 0 && err)
            *err = spans;
        if (grc < 0) { /* not WKB: no split either */
            rc = grc;
            x.report.several_partitions = false;
        }
    }
    if (rc < 0)
        goto done;
    FLOE_CHECK(file_info(&x, &fi, err));
    memset(out, 0, sizeof *out);
    FLOE_CHECK(floe_data_file_from_parquet(&fi, x.cfg, arena, out, err));
    drop_unknown_null_counts(&x, out);
    out->content = FLOE_CONTENT_DATA;
    if (!(out->file_path = floe_arena_strdup(arena, recorded_path)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(partition_tuple(&x, partition, npartition, arena, out, err));
done:
    if (rep)
        *rep = x.report;
    for (size_t i = 0; fi.columns && i < fi.ncolumns; i++) {
        floe_free(fi.columns[i].lower_bound);
        floe_free(fi.columns[i].upper_bound);
    }
    floe_free(fi.columns);
    floe_free(fi.split_offsets);
    for (size_t i = 0; x.cs && i < x.nleaves; i++) {
        floe_buf_free(&x.cs[i].min_b);
        floe_buf_free(&x.cs[i].max_b);
    }
    floe_free(x.cs);
    for (size_t k = 0; x.ps && k < x.nparts; k++) {
        floe_buf_free(&x.ps[k].value_b);
        floe_buf_free(&x.ps[k].src0_b);
        floe_buf_free(&x.ps[k].part0_b);
        floe_buf_free(&x.ps[k].src1_b);
        floe_buf_free(&x.ps[k].part1_b);
    }
    floe_free(x.ps);
    floe_metrics_config_free(x.cfg);
    floe_pq_reader_close(x.r);
    floe_partition_spec_free(x.spec);
    floe_schema_free(x.ts);
    return rc;
}
