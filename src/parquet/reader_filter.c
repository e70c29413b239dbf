/*
 * reader_filter.c - the reader's filter: the --where tree (parsed by common/filter.c, NOT
 * already pushed down) bound to the file's leaves, each literal typed by its column (dates,
 * times, timestamps and decimals by common/literal.h, as the table scan types them), then
 * three evaluations of the same expression:
 *   - row group: may any row match, given the chunk statistics (min/max/null_count)?
 *   - pages: which row ranges may match, given the ColumnIndex and OffsetIndex
 *     (parquet-format PageIndex.md)?
 *   - row: does this row match exactly?
 *
 * The parser's negation normal form (NOT (a < 1) is a >= 1, NOT IN and IS NOT NULL flip)
 * is exact here under SQL's three-valued logic because NaN is ordered (above every number, equal to itself), so every operator
 * has an exact complement among non-null values. Statistics exclude NaN, so for floating
 * point columns the operators a NaN could satisfy (>, >=, !=, NOT IN, or a NaN literal)
 * never prune.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/filter.h"
#include "common/literal.h"
#include "parquet/reader_internal.h"

/* Binding a predicate of the parsed tree to the file's leaves. */
typedef struct binder {
    floe_pq_reader *r;
    const floe_filter *node;
    const floe_filter_lit *lit; /* the literal being typed */
    floe_error *err;
} binder;

static int perr(const binder *p, const char *msg) {
    return floe_filter_fail(p->node, p->lit ? p->lit->offset : p->node->column_offset, p->err,
                            FLOE_EINVALID, "%s", msg);
}

/* Type literal p->lit for leaf lf into v. */
static int type_literal(binder *p, const pq_leaf *lf, pq_value *v) {
    memset(v, 0, sizeof *v);
    const floe_pq_node *nd = lf->node;
    bool is_str = p->lit->kind == FLOE_FILTER_LIT_STRING;
    bool is_word = p->lit->kind == FLOE_FILTER_LIT_WORD;
    const char *s = p->lit->text;
    size_t n = p->lit->n;
    if (p->lit->kind == FLOE_FILTER_LIT_NULL) {
        v->is_null = true;
        return 0;
    }
    switch (lf->ck) {
    case PQ_CK_BOOL:
        if ((is_word || is_str) && n == 4 && !strncasecmp(s, "true", 4))
            v->i = 1;
        else if ((is_word || is_str) && n == 5 && !strncasecmp(s, "false", 5))
            v->i = 0;
        else
            return perr(p, "expected true or false");
        return 0;
    case PQ_CK_I64: {
        floe_type_id t = nd->value_type;
        char why[128];
        if (t == FLOE_TYPE_DATE) {
            int32_t d;
            if (floe_lit_where_date(s, n, is_str, &d, why, sizeof why) != FLOE_LIT_OK)
                return perr(p, why);
            v->i = d;
            return 0;
        }
        if (t == FLOE_TYPE_TIME) {
            if (floe_lit_where_time(s, n, is_str, &v->i, why, sizeof why) != FLOE_LIT_OK)
                return perr(p, why);
            return 0;
        }
        if (t == FLOE_TYPE_TIMESTAMP || t == FLOE_TYPE_TIMESTAMPTZ ||
            t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS) {
            int digits = lf->time_unit == FLOE_PQ_NANOS ? 9 : 6;
            bool zoned = t == FLOE_TYPE_TIMESTAMPTZ || t == FLOE_TYPE_TIMESTAMPTZ_NS;
            if (floe_lit_where_timestamp(s, n, is_str, zoned, digits, &v->i, why,
                                         sizeof why) != FLOE_LIT_OK)
                return perr(p, why);
            return 0;
        }
        if (!is_word || !floe_parse_i64(s, n, &v->i))
            return perr(p, "expected an integer");
        if (t == FLOE_TYPE_INT && (v->i > INT32_MAX || v->i < INT32_MIN))
            return perr(p, "integer out of range for an int column");
        return 0;
    }
    case PQ_CK_U64: {
        /* as an int64 first, so "-0" is 0 and "-1" refused; then the range past INT64_MAX */
        int64_t x;
        if (!is_word)
            return perr(p, "expected an unsigned integer");
        if (floe_parse_i64(s, n, &x)) {
            if (x < 0)
                return perr(p, "expected an unsigned integer");
            v->u = (uint64_t)x;
        } else if (!floe_parse_u64(s, n, &v->u)) {
            return perr(p, "expected an unsigned integer");
        }
        return 0;
    }
    case PQ_CK_F64: {
        if (!floe_parse_f64(s, n, &v->d))
            return perr(p, "expected a number");
        v->is_nan = isnan(v->d);
        if (lf->out_phys == FLOE_PHYS_FLOAT)
            v->d = (float)v->d; /* compare as the column stores it */
        return 0;
    }
    case PQ_CK_DEC: {
        char why[128];
        if (floe_lit_decimal_at(s, n, 38, nd->scale, &v->dec, why, sizeof why) != FLOE_LIT_OK)
            return perr(p, why);
        return 0;
    }
    case PQ_CK_BYTES:
        if (nd->value_type == FLOE_TYPE_UUID) {
            uint8_t *u = floe_arena_alloc(&p->r->arena, 16);
            if (!u)
                return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (s[i] == '-')
                    continue;
                int h = floe_hex_value(s[i]);
                if (h < 0 || k >= 32)
                    return perr(p, "expected a UUID");
                u[k / 2] = (uint8_t)(k % 2 ? u[k / 2] | h : h << 4);
                k++;
            }
            if (k != 32)
                return perr(p, "expected a UUID");
            v->p = u;
            v->n = 16;
            return 0;
        }
        if (!is_str)
            return perr(p, "expected a quoted string");
        v->p = (const uint8_t *)s;
        v->n = n;
        return 0;
    default:
        return perr(p, "this column's type cannot be compared");
    }
}

/* ---- binding the parsed tree ------------------------------------------------------------ */

static pq_expr *new_expr(floe_pq_reader *r, pq_expr_kind k) {
    pq_expr *e = floe_arena_alloc(&r->arena, sizeof *e);
    if (e) {
        memset(e, 0, sizeof *e);
        e->kind = k;
    }
    return e;
}

/* The node that path names, a name per level below root; NULL when there is none. */
static const floe_pq_node *find_names(const floe_pq_node *root, const char *const *path,
                                      size_t n) {
    const floe_pq_node *cur = root;
    for (size_t k = 0; k < n && cur; k++) {
        const floe_pq_node *next = NULL;
        for (size_t i = 0; i < cur->nchildren && !next; i++)
            if (!strcmp(cur->children[i].name, path[k]))
                next = &cur->children[i];
        cur = next;
    }
    return cur == root ? NULL : cur;
}

static int bind_pred(binder *p, pq_expr **out) {
    const floe_filter *f = p->node;
    floe_pq_reader *r = p->r;
    const floe_pq_node *nd = find_names(r->nodes, f->path, f->npath);
    if (!nd)
        return floe_error_set(p->err, FLOE_ENOTFOUND, "filter: no column '%s'", f->column);
    if (nd->column < 0)
        return floe_error_set(p->err, FLOE_EINVALID, "filter: '%s' is not a primitive column",
                              f->column);
    if (nd->rep_level > 0)
        return floe_error_set(p->err, FLOE_EUNSUPPORTED,
                              "filter: unsupported: condition on repeated column '%s'",
                              f->column);
    const pq_leaf *lf = &r->leaves[nd->column];
    static const pq_expr_kind kind_of[] = {
        [FLOE_FILTER_IN] = PQ_X_IN,           [FLOE_FILTER_NOT_IN] = PQ_X_NOT_IN,
        [FLOE_FILTER_IS_NULL] = PQ_X_IS_NULL, [FLOE_FILTER_NOT_NULL] = PQ_X_NOT_NULL,
        [FLOE_FILTER_LIKE] = PQ_X_LIKE,       [FLOE_FILTER_NOT_LIKE] = PQ_X_NOT_LIKE,
    };
    bool cmp = f->op <= FLOE_FILTER_GE;
    pq_expr *e = new_expr(r, cmp ? PQ_X_CMP : kind_of[f->op]);
    pq_value *lits = floe_arena_alloc(&r->arena, (f->nlits ? f->nlits : 1) * sizeof *lits);
    if (!e || !lits)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    e->column = nd->column;
    e->op = cmp ? (pq_cmp_op)f->op : PQ_EQ; /* the comparisons share their order */
    if (f->op == FLOE_FILTER_LIKE || f->op == FLOE_FILTER_NOT_LIKE) {
        if (lf->ck != PQ_CK_BYTES || nd->value_type == FLOE_TYPE_UUID)
            return perr(p, "LIKE needs a string or binary column");
        lits[0] = (pq_value){.p = (const uint8_t *)f->lits[0].text, .n = f->lits[0].n};
        e->lits = lits;
        e->nlits = 1;
        *out = e;
        return 0;
    }
    bool has_null = false;
    for (size_t i = 0; i < f->nlits; i++) {
        p->lit = &f->lits[i];
        pq_value v;
        FLOE_FORWARD_IF_ERROR(type_literal(p, lf, &v));
        if (v.is_null)
            has_null = true;
        else
            lits[e->nlits++] = v;
    }
    p->lit = NULL;
    e->lits = lits;
    /* a comparison with NULL, or a NOT IN list holding one, is never true; an IN list
     * holding one is true just where the list without it is */
    if ((cmp && has_null) || (e->kind == PQ_X_NOT_IN && has_null) ||
        (e->kind == PQ_X_IN && e->nlits == 0))
        e->kind = PQ_X_FALSE;
    *out = e;
    return 0;
}

static int bind(floe_pq_reader *r, const floe_filter *f, pq_expr **out, floe_error *err) {
    if (f->kind == FLOE_FILTER_PRED) {
        binder p = {.r = r, .node = f, .err = err};
        return bind_pred(&p, out);
    }
    pq_expr *e = new_expr(r, f->kind == FLOE_FILTER_AND ? PQ_X_AND : PQ_X_OR);
    if (!e)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    FLOE_FORWARD_IF_ERROR(bind(r, f->a, &e->a, err));
    FLOE_FORWARD_IF_ERROR(bind(r, f->b, &e->b, err));
    *out = e;
    return 0;
}

int pq_filter_parse(floe_pq_reader *r, const char *text, pq_expr **out, floe_error *err) {
    floe_filter *f;
    FLOE_FORWARD_IF_ERROR(floe_filter_parse(text, &r->arena, &f, err));
    return bind(r, f, out, err);
}

void pq_filter_columns(const pq_expr *e, bool *needed) {
    switch (e->kind) {
    case PQ_X_AND:
    case PQ_X_OR:
        pq_filter_columns(e->a, needed);
        pq_filter_columns(e->b, needed);
        return;
    case PQ_X_FALSE: return;
    default: needed[e->column] = true;
    }
}

/* ---- statistics evaluation ---------------------------------------------------------------- */

typedef struct stat_view {
    bool has_minmax;
    pq_value min, max;
    int64_t null_count; /* -1 unknown */
    bool all_null;
    bool nan_free;      /* known to hold no NaN */
} stat_view;

static bool op_holds(int c, pq_cmp_op op) {
    switch (op) {
    case PQ_EQ: return c == 0;
    case PQ_NE: return c != 0;
    case PQ_LT: return c < 0;
    case PQ_LE: return c <= 0;
    case PQ_GT: return c > 0;
    case PQ_GE: return c >= 0;
    }
    return false;
}

/* v's first bytes (as many as the prefix has) against the prefix. */
static int prefix_cmp(const pq_value *v, const pq_value *prefix) {
    size_t m = v->n < prefix->n ? v->n : prefix->n;
    int c = m ? memcmp(v->p, prefix->p, m) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return v->n < prefix->n ? -1 : 0;
}

static bool leaf_may(const pq_leaf *lf, const pq_expr *e, const stat_view *st) {
    switch (e->kind) {
    case PQ_X_IS_NULL: return st->null_count != 0 || st->all_null;
    case PQ_X_NOT_NULL: return !st->all_null;
    case PQ_X_FALSE: return false;
    default: break;
    }
    if (st->all_null)
        return false;
    if (!st->has_minmax)
        return true;
    if (e->kind == PQ_X_LIKE || e->kind == PQ_X_NOT_LIKE) {
        /* the values with a prefix are one interval in bytewise order */
        int lo = prefix_cmp(&st->min, &e->lits[0]), hi = prefix_cmp(&st->max, &e->lits[0]);
        return e->kind == PQ_X_LIKE ? lo <= 0 && hi >= 0 : !(lo == 0 && hi == 0);
    }
    if (lf->ck == PQ_CK_F64 && !st->nan_free) {
        if (e->kind == PQ_X_NOT_IN || (e->kind == PQ_X_CMP && (e->op == PQ_GT || e->op == PQ_GE ||
                                                               e->op == PQ_NE)))
            return true;
        for (size_t i = 0; i < e->nlits; i++)
            if (e->lits[i].is_nan)
                return true;
    }
    if (e->kind == PQ_X_CMP) {
        const pq_value *l = &e->lits[0];
        int cmin = pq_value_cmp(lf, &st->min, l), cmax = pq_value_cmp(lf, &st->max, l);
        switch (e->op) {
        case PQ_EQ: return cmin <= 0 && cmax >= 0;
        case PQ_NE: return !(cmin == 0 && cmax == 0);
        case PQ_LT: return cmin < 0;
        case PQ_LE: return cmin <= 0;
        case PQ_GT: return cmax > 0;
        case PQ_GE: return cmax >= 0;
        }
    }
    if (e->kind == PQ_X_IN) {
        for (size_t i = 0; i < e->nlits; i++)
            if (pq_value_cmp(lf, &st->min, &e->lits[i]) <= 0 &&
                pq_value_cmp(lf, &st->max, &e->lits[i]) >= 0)
                return true;
        return false;
    }
    if (e->kind == PQ_X_NOT_IN) {
        if (pq_value_cmp(lf, &st->min, &st->max) != 0)
            return true;
        for (size_t i = 0; i < e->nlits; i++)
            if (pq_value_cmp(lf, &st->min, &e->lits[i]) == 0)
                return false;
        return true;
    }
    return true;
}


static bool rg_may(floe_pq_reader *r, size_t rg, const pq_expr *e) {
    switch (e->kind) {
    case PQ_X_AND: return rg_may(r, rg, e->a) && rg_may(r, rg, e->b);
    case PQ_X_OR: return rg_may(r, rg, e->a) || rg_may(r, rg, e->b);
    case PQ_X_FALSE: return false;
    default: break;
    }
    const pq_leaf *lf = &r->leaves[e->column];
    const floe_pq_column_metadata *m = &r->md.row_groups[rg].columns[e->column].meta_data;
    int64_t nrows = r->md.row_groups[rg].num_rows;
    stat_view st;
    memset(&st, 0, sizeof st);
    st.null_count = -1;
    if (nrows == 0)
        return false;
    if (m->has_statistics) {
        const floe_pq_statistics *s = &m->statistics;
        if (s->has_null_count && s->null_count >= 0) {
            st.null_count = s->null_count;
            st.all_null = s->null_count >= nrows;
        }
        st.nan_free = s->has_nan_count && s->nan_count == 0;
        floe_pq_bytes mn, mx;
        if (pq_stats_min_max(lf, s, &mn, &mx))
            st.has_minmax = pq_value_from_stat(lf, mn.p, mn.n, &st.min) &&
                            pq_value_from_stat(lf, mx.p, mx.n, &st.max);
    }
    return leaf_may(lf, e, &st);
}

bool pq_filter_rg_may_match(floe_pq_reader *r, size_t rg) {
    return rg_may(r, rg, r->filter);
}

/* ---- page index evaluation -------------------------------------------------------------- */

typedef struct ranges {
    int64_t *v; /* pairs */
    size_t n, cap;
} ranges;

static int ranges_add(ranges *rs, int64_t a, int64_t b) {
    if (a >= b)
        return 0;
    if (rs->n && rs->v[2 * rs->n - 1] >= a) { /* merge with the previous (sorted input) */
        if (b > rs->v[2 * rs->n - 1])
            rs->v[2 * rs->n - 1] = b;
        return 0;
    }
    if (rs->n == rs->cap) {
        size_t nc = rs->cap ? rs->cap * 2 : 16;
        int64_t *nv = floe_realloc(rs->v, nc * 2 * sizeof *nv);
        if (!nv)
            return FLOE_ENOMEM;
        rs->v = nv;
        rs->cap = nc;
    }
    rs->v[2 * rs->n] = a;
    rs->v[2 * rs->n + 1] = b;
    rs->n++;
    return 0;
}

static int ranges_and(const ranges *x, const ranges *y, ranges *out) {
    size_t i = 0, j = 0;
    while (i < x->n && j < y->n) {
        int64_t a = x->v[2 * i] > y->v[2 * j] ? x->v[2 * i] : y->v[2 * j];
        int64_t b = x->v[2 * i + 1] < y->v[2 * j + 1] ? x->v[2 * i + 1] : y->v[2 * j + 1];
        FLOE_FORWARD_IF_ERROR(ranges_add(out, a, b));
        if (x->v[2 * i + 1] < y->v[2 * j + 1])
            i++;
        else
            j++;
    }
    return 0;
}

static int ranges_or(const ranges *x, const ranges *y, ranges *out) {
    size_t i = 0, j = 0;
    while (i < x->n || j < y->n) {
        const int64_t *v;
        if (j >= y->n || (i < x->n && x->v[2 * i] <= y->v[2 * j]))
            v = &x->v[2 * i++];
        else
            v = &y->v[2 * j++];
        FLOE_FORWARD_IF_ERROR(ranges_add(out, v[0], v[1]));
    }
    return 0;
}

typedef struct page_ctx {
    floe_pq_reader *r;
    size_t rg;
    int64_t nrows;
    floe_arena arena;
    bool any_index;
    floe_error *err;
} page_ctx;


static int load_column_index(page_ctx *pc, size_t col, floe_pq_column_index *ci) {
    floe_pq_reader *r = pc->r;
    const floe_pq_column_chunk *cc = &r->md.row_groups[pc->rg].columns[col];
    if (!cc->has_column_index || cc->column_index_length <= 0 ||
        cc->column_index_length > (64 << 20) || cc->column_index_offset < 0 ||
        cc->column_index_offset > r->file_size - cc->column_index_length)
        return 1;
    uint8_t *buf = floe_malloc((size_t)cc->column_index_length);
    if (!buf)
        return floe_error_set(pc->err, FLOE_ENOMEM, "out of memory");
    int rc;
    if (r->mem) {
        memcpy(buf, r->mem + cc->column_index_offset, (size_t)cc->column_index_length);
        rc = 0;
    } else {
        rc = floe_input_read_at(r->in, cc->column_index_offset, buf,
                                (size_t)cc->column_index_length, pc->err);
    }
    r->stats.bytes_read += cc->column_index_length;
    if (rc == 0)
        rc = floe_pq_column_index_decode(buf, (size_t)cc->column_index_length,
                                         cc->column_index_offset, &pc->arena, ci, pc->err);
    floe_free(buf);
    return rc;
}

/* Row ranges of the row group where leaf e may hold. */
static int leaf_ranges(page_ctx *pc, const pq_expr *e, ranges *out) {
    floe_pq_reader *r = pc->r;
    if (e->kind == PQ_X_FALSE)
        return 0;
    size_t col = (size_t)e->column;
    const pq_leaf *lf = &r->leaves[col];
    floe_pq_column_index ci;
    floe_pq_offset_index oi;
    int rc = load_column_index(pc, col, &ci);
    if (rc < 0)
        return rc;
    if (rc == 0)
        rc = pq_load_offset_index(r, pc->rg, col, &pc->arena, &oi, pc->err);
    if (rc < 0)
        return rc;
    if (rc == 1 || ci.n_pages != oi.n_pages || oi.n_pages == 0)
        return ranges_add(out, 0, pc->nrows);
    for (size_t k = 0; k < oi.n_pages; k++) {
        int64_t a = oi.page_locations[k].first_row_index;
        int64_t b = k + 1 < oi.n_pages ? oi.page_locations[k + 1].first_row_index : pc->nrows;
        if (a < 0 || b < a || b > pc->nrows || (k == 0 && a != 0))
            return ranges_add(out, 0, pc->nrows); /* untrustworthy: read everything */
    }
    pc->any_index = true;
    for (size_t k = 0; k < oi.n_pages; k++) {
        stat_view st;
        memset(&st, 0, sizeof st);
        st.null_count = ci.n_null_counts ? ci.null_counts[k] : -1;
        st.all_null = ci.null_pages[k];
        st.nan_free = ci.n_nan_counts && ci.nan_counts[k] == 0;
        if (!st.all_null && lf->src_phys != FLOE_PQ_INT96)
            st.has_minmax =
                pq_value_from_stat(lf, ci.min_values[k].p, ci.min_values[k].n, &st.min) &&
                pq_value_from_stat(lf, ci.max_values[k].p, ci.max_values[k].n, &st.max);
        if (leaf_may(lf, e, &st)) {
            int64_t a = oi.page_locations[k].first_row_index;
            int64_t b = k + 1 < oi.n_pages ? oi.page_locations[k + 1].first_row_index
                                           : pc->nrows;
            FLOE_FORWARD_IF_ERROR(ranges_add(out, a, b));
        }
    }
    return 0;
}

static int expr_ranges(page_ctx *pc, const pq_expr *e, ranges *out, int depth) {
    if (depth > 400)
        return ranges_add(out, 0, pc->nrows);
    if (e->kind == PQ_X_AND || e->kind == PQ_X_OR) {
        ranges a = {0}, b = {0};
        int rc = expr_ranges(pc, e->a, &a, depth + 1);
        if (rc == 0)
            rc = expr_ranges(pc, e->b, &b, depth + 1);
        if (rc == 0)
            rc = e->kind == PQ_X_AND ? ranges_and(&a, &b, out) : ranges_or(&a, &b, out);
        floe_free(a.v);
        floe_free(b.v);
        return rc;
    }
    return leaf_ranges(pc, e, out);
}

int pq_filter_page_ranges(floe_pq_reader *r, size_t rg, int64_t **out, size_t *n,
                          floe_error *err) {
    page_ctx pc;
    memset(&pc, 0, sizeof pc);
    pc.r = r;
    pc.rg = rg;
    pc.nrows = r->md.row_groups[rg].num_rows;
    pc.err = err;
    floe_arena_init(&pc.arena, 16 << 10);
    pc.arena.cap = (size_t)512 << 20;
    ranges rs = {0};
    int rc = expr_ranges(&pc, r->filter, &rs, 0);
    floe_arena_reset(&pc.arena);
    if (rc < 0) {
        floe_free(rs.v);
        if (rc == FLOE_ENOMEM)
            return floe_error_set(err, rc, "%s: out of memory", r->name);
        return rc;
    }
    if (!pc.any_index || (rs.n == 1 && rs.v[0] == 0 && rs.v[1] >= pc.nrows)) {
        floe_free(rs.v);
        *out = NULL;
        *n = 0;
        return 1;
    }
    *out = rs.v;
    *n = rs.n;
    return 0;
}

/* ---- rows ---------------------------------------------------------------------------------- */

bool pq_filter_row(const floe_pq_reader *r, const pq_expr *e, const int64_t *row_value) {
    switch (e->kind) {
    case PQ_X_AND: return pq_filter_row(r, e->a, row_value) && pq_filter_row(r, e->b, row_value);
    case PQ_X_OR: return pq_filter_row(r, e->a, row_value) || pq_filter_row(r, e->b, row_value);
    case PQ_X_FALSE: return false;
    default: break;
    }
    int32_t slot = r->slot_of_col[e->column];
    int64_t vi = row_value[slot];
    if (e->kind == PQ_X_IS_NULL)
        return vi < 0;
    if (vi < 0)
        return false;
    if (e->kind == PQ_X_NOT_NULL)
        return true;
    const pq_leaf *lf = &r->leaves[e->column];
    pq_value v;
    pq_value_from_col(lf, &r->cols[slot], (size_t)vi, &v);
    if (e->kind == PQ_X_CMP)
        return op_holds(pq_value_cmp(lf, &v, &e->lits[0]), e->op);
    if (e->kind == PQ_X_LIKE || e->kind == PQ_X_NOT_LIKE)
        return (prefix_cmp(&v, &e->lits[0]) == 0) == (e->kind == PQ_X_LIKE);
    bool found = false;
    for (size_t i = 0; i < e->nlits && !found; i++)
        found = pq_value_cmp(lf, &v, &e->lits[i]) == 0;
    return e->kind == PQ_X_IN ? found : !found;
}
