/*
 * scan_prune.c - skipping data files by the statistics of shredded variant columns
 * (apache/parquet-format VariantShredding.md, "Data Skipping").
 *
 * A scan filter on a path inside a variant (`payload.user.country = 'FR'`) has no
 * Iceberg metrics to prune with; but where a file shreds that path, the footer's column
 * chunk statistics describe it. Within a row group, the path's typed_value statistics
 * bound every value at the path when the path's value column is all null (then every row
 * holds either no value there, which is SQL NULL, or a value of the typed_value's type).
 * A file none of whose row groups can hold a matching row is not read. The comparison
 * rules are those of the variant's manifest bounds (floe_variant_range_may), which plan
 * the scan before any footer is read.
 *
 * What is pruned on (anything else may match): =, !=, <, <=, >, >= and LIKE 'prefix%'
 * with a 'string' literal on a STRING typed_value; the same but LIKE with an integer
 * literal on an INT32 or INT64 typed_value; = and != with true/false on a BOOLEAN one;
 * IS NOT NULL on any typed_value. A literal of another type than the column's, a
 * statistic that is absent or inexact, a path not shredded down to a primitive, or a
 * value column with any non-null slot never prune. AND, OR and the predicates are
 * evaluated per row group; NOT (only NOT LIKE stays after negation normal form) never
 * prunes.
 */
#include <string.h>

#include "floe/parquet_reader.h"
#include "iceberg/scan_internal.h"
#include "iceberg/variant_bounds.h"
#include "table_internal.h"

static const floe_pq_node *child_named(const floe_pq_node *n, const char *name) {
    for (size_t i = 0; i < n->nchildren; i++)
        if (!strcmp(n->children[i].name, name))
            return &n->children[i];
    return NULL;
}

static const floe_pq_node *node_with_id(const floe_pq_node *n, int32_t id) {
    for (size_t i = 0; i < n->nchildren; i++) {
        const floe_pq_node *c = &n->children[i];
        if (c->has_field_id && c->field_id == id)
            return c;
        const floe_pq_node *f = node_with_id(c, id);
        if (f)
            return f;
    }
    return NULL;
}

static int64_t le_int(const uint8_t *p, size_t n) {
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (n == 4)
        return (int32_t)(uint32_t)u;
    return (int64_t)u;
}

typedef struct prune_ctx {
    floe_pq_reader *r;
    floe_buf lo, hi;
    floe_error err; /* statistics the reader cannot give: no pruning, not an error */
} prune_ctx;

/* May a row of row group rg satisfy the variant predicate e? */
static bool variant_rg_may(prune_ctx *p, const floe_expr *e, size_t rg) {
    if (e->op == FLOE_PRED_IS_NULL)
        return true;
    const floe_pq_node *n = node_with_id(floe_pq_reader_root(p->r), e->field_id);
    if (!n)
        return true;
    for (size_t k = 0; k < e->nvpath; k++) {
        const floe_pq_node *tv = child_named(n, "typed_value");
        if (!tv || tv->phys >= 0 || !(n = child_named(tv, e->vpath[k])))
            return true; /* not shredded down to the path */
    }
    const floe_pq_node *typed = child_named(n, "typed_value");
    const floe_pq_node *value = child_named(n, "value");
    if (!typed || typed->phys < 0 || typed->rep_level > 0)
        return true;
    floe_pq_chunk_info ci;
    if (value) {
        if (value->phys < 0)
            return true;
        floe_pq_reader_chunk_info(p->r, rg, (size_t)value->column, &ci);
        if (ci.null_count < 0 || ci.null_count != ci.num_values)
            return true; /* some value is not of the typed_value's type */
    }
    floe_pq_reader_chunk_info(p->r, rg, (size_t)typed->column, &ci);
    if (ci.null_count >= 0 && ci.null_count == ci.num_values)
        return false; /* the path is missing in every row: null, matching nothing */
    if (e->op == FLOE_PRED_NOT_NULL)
        return true;
    floe_error_clear(&p->err);
    if (floe_pq_reader_chunk_bounds(p->r, rg, (size_t)typed->column, &p->lo, &p->hi,
                                    &p->err) != 1)
        return true;
    const uint8_t *lo = p->lo.data, *hi = p->hi.data;
    size_t lon = p->lo.len, hin = p->hi.len;
    floe_vbound vlo = {0}, vhi = {0};
    switch (typed->value_type) {
    case FLOE_TYPE_STRING:
        vlo = (floe_vbound){.kind = FLOE_VB_STRING, .s = lo, .n = lon};
        vhi = (floe_vbound){.kind = FLOE_VB_STRING, .s = hi, .n = hin};
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_LONG: {
        size_t w = typed->value_type == FLOE_TYPE_INT ? 4 : 8;
        if (lon != w || hin != w)
            return true;
        vlo = (floe_vbound){.kind = FLOE_VB_INT, .i = le_int(lo, w)};
        vhi = (floe_vbound){.kind = FLOE_VB_INT, .i = le_int(hi, w)};
        break;
    }
    case FLOE_TYPE_BOOLEAN:
        if (lon != 1 || hin != 1)
            return true;
        vlo = (floe_vbound){.kind = FLOE_VB_BOOL, .i = lo[0] != 0};
        vhi = (floe_vbound){.kind = FLOE_VB_BOOL, .i = hi[0] != 0};
        break;
    default:
        return true;
    }
    return floe_variant_range_may(e, &vlo, &vhi);
}

static bool expr_rg_may(prune_ctx *p, const floe_expr *e, size_t rg) {
    switch (e->kind) {
    case FLOE_EXPR_TRUE: return true;
    case FLOE_EXPR_FALSE: return false;
    case FLOE_EXPR_AND: return expr_rg_may(p, e->a, rg) && expr_rg_may(p, e->b, rg);
    case FLOE_EXPR_OR: return expr_rg_may(p, e->a, rg) || expr_rg_may(p, e->b, rg);
    case FLOE_EXPR_NOT: return true;
    case FLOE_EXPR_PRED: return !e->variant || variant_rg_may(p, e, rg);
    }
    return true;
}

static bool has_variant_pred(const floe_expr *e) {
    if (!e)
        return false;
    if (e->kind == FLOE_EXPR_PRED)
        return e->variant;
    return has_variant_pred(e->a) || has_variant_pred(e->b);
}

bool floe_scan_variant_file_may_match(const struct floe_expr *filter,
                                      struct floe_pq_reader *r) {
    if (!has_variant_pred(filter))
        return true;
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    prune_ctx p = {.r = r};
    floe_buf_init(&p.lo, 0);
    floe_buf_init(&p.hi, 0);
    bool may = fi.num_row_groups == 0;
    for (size_t rg = 0; rg < fi.num_row_groups && !may; rg++)
        may = expr_rg_may(&p, filter, rg);
    floe_buf_free(&p.lo);
    floe_buf_free(&p.hi);
    return may;
}
