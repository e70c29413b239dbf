/*
 * scan_expr.c - filter expressions over a table schema: the --where tree (parsed by
 * common/filter.c, NOT already pushed down) bound to the table's fields with literals typed
 * by their column, row evaluation (SQL three-valued logic) and the inclusive checks scan
 * planning prunes with.
 *
 * Spec: format/spec.md "Scan Planning": a partition predicate is the inclusive projection
 * of the row filter through each partition field's transform (floe_transform_project);
 * manifests are skipped by their partition summaries (field_summary 508), data files by
 * their partition tuple and then by column metrics. Metrics a writer did not record are
 * unknown, never zero: a missing count or bound never prunes.
 *
 * Comparisons follow IEEE: NaN compares false with every operator but != (so a negated
 * range on a float column, marked or_nan, also holds for NaN).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/filter.h"
#include "common/literal.h"
#include "floe/variant.h"
#include "scan_internal.h"
#include "variant_bounds.h"

typedef struct binder {
    const floe_schema *schema;
    floe_arena *arena;
    floe_error *err;
} binder;

static floe_expr *node(binder *p, floe_expr_kind kind) {
    floe_expr *e = floe_arena_alloc(p->arena, sizeof *e);
    if (e) {
        memset(e, 0, sizeof *e);
        e->kind = kind;
    }
    return e;
}

/* The field that path names, a name per level from the top; NULL when there is none. */
static const floe_field *find_names(const floe_schema *s, const char *const *path, size_t n) {
    const floe_field *cur = &s->root;
    for (size_t k = 0; k < n && cur; k++) {
        const floe_field *next = NULL;
        for (size_t i = 0; i < cur->nchildren && !next; i++)
            if (!strcmp(cur->children[i].name, path[k]))
                next = &cur->children[i];
        cur = next;
    }
    return cur == &s->root ? NULL : cur;
}

/* The column fl names: a primitive field, or a variant field when a prefix of the path
 * names one (the rest of the path are object keys inside its values). */
static int column(binder *p, const floe_filter *fl, const floe_field **out) {
    const char *name = fl->column;
    const floe_field *f = NULL;
    for (size_t k = 1; k <= fl->npath && !f; k++) {
        const floe_field *g = find_names(p->schema, fl->path, k);
        if (!g)
            break;
        if (g->type == FLOE_TYPE_VARIANT)
            f = g;
    }
    if (!f)
        f = find_names(p->schema, fl->path, fl->npath);
    if (!f)
        return floe_error_set(p->err, FLOE_ENOTFOUND, "filter: no column %s in the table schema",
                              name);
    if (f->geo) /* WKB has no order, and its bounds are boxes: nothing to compare */
        return floe_error_set(p->err, FLOE_EUNSUPPORTED,
                              "filter: column %s is a %s column; floe does not filter on "
                              "geometry or geography",
                              name, f->geo == FLOE_GEO_GEOGRAPHY ? "geography" : "geometry");
    if (floe_type_is_nested(f->type) && f->type != FLOE_TYPE_VARIANT)
        return floe_error_set(p->err, FLOE_EUNSUPPORTED,
                              "filter: column %s is a %s; only primitive columns can be "
                              "compared", name, floe_type_name(f->type));
    for (const floe_field *q = f->parent; q; q = q->parent)
        if (q->type == FLOE_TYPE_LIST || q->type == FLOE_TYPE_MAP)
            return floe_error_set(p->err, FLOE_EUNSUPPORTED,
                                  "filter: column %s is inside a list or map", name);
    *out = f;
    return 0;
}

/* A literal compared with a variant value: a 'string', true, false or a number (JSON's
 * grammar, a leading + allowed); kept as written. */
static bool variant_number(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t d0 = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    size_t nd = i - d0;
    if (i < n && s[i] == '.') {
        size_t f0 = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        nd += i - f0;
    }
    if (!nd)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t e0 = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == e0)
            return false;
    }
    return i == n;
}

/* A predicate node on column f, its literal null for now. */
static floe_expr *pred_node(binder *p, const floe_field *f, floe_pred_op op) {
    floe_expr *e = node(p, FLOE_EXPR_PRED);
    if (e) {
        e->field = f;
        e->field_id = f->id;
        e->op = op;
        e->lit = floe_value_null(f->type);
    }
    return e;
}

static int variant_pred(binder *p, const floe_filter *fl, const floe_field *f, size_t vdepth,
                        floe_pred_op op, const floe_filter_lit *l, floe_expr **out) {
    floe_expr *e = pred_node(p, f, op);
    if (!e)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    e->variant = true;
    e->vpath = fl->path + vdepth;
    e->nvpath = fl->npath - vdepth;
    floe_buf nb;
    floe_buf_init(&nb, 0);
    int rc = floe_buf_append_byte(&nb, '$');
    for (size_t k = 0; k < e->nvpath && rc == 0; k++)
        rc = floe_variant_path_append_key(&nb, (const uint8_t *)e->vpath[k],
                                          strlen(e->vpath[k]));
    e->vnorm_n = nb.len;
    e->vnorm = rc == 0 ? floe_arena_strndup(p->arena, (const char *)nb.data, nb.len) : NULL;
    floe_buf_free(&nb);
    if (!e->vnorm)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    if (l) {
        if (l->kind == FLOE_FILTER_LIT_NULL)
            return floe_filter_fail(fl, l->offset, p->err, FLOE_EINVALID,
                                    "comparison with null is never true; use IS NULL or IS "
                                    "NOT NULL (column %s)", fl->column);
        if (l->kind == FLOE_FILTER_LIT_WORD) {
            bool word = (l->n == 4 && !strncasecmp(l->text, "true", 4)) ||
                        (l->n == 5 && !strncasecmp(l->text, "false", 5));
            if (!word && !variant_number(l->text, l->n))
                return floe_filter_fail(fl, l->offset, p->err, FLOE_EINVALID,
                                        "%s is inside a variant: compare it with a number, "
                                        "a 'string', true or false", fl->column);
        }
        e->vlit_kind = l->kind;
        e->vlit = l->text;
        e->vlit_n = l->n;
    }
    /* a value of another type than the literal fails every comparison, so it passes
     * every negated one: NOT (x < 5) holds for a string x */
    e->or_nan = fl->negated && op >= FLOE_PRED_LT && op <= FLOE_PRED_GE;
    *out = e;
    return 0;
}

/* Literal l typed by the column. */
static int literal(binder *p, const floe_filter *fl, const floe_filter_lit *l,
                   const floe_field *f, floe_value *out, bool *is_nan) {
    *is_nan = false;
    if (l->kind == FLOE_FILTER_LIT_NULL)
        return floe_filter_fail(fl, l->offset, p->err, FLOE_EINVALID,
                                "comparison with null is never true; use IS NULL or IS NOT "
                                "NULL (column %s)", f->name);
    const char *text = l->text;
    size_t tn = l->n;
    if (l->kind == FLOE_FILTER_LIT_STRING) {
        /* re-encoded as a JSON string for the value parser */
        floe_buf jb;
        floe_buf_init(&jb, 1 << 20);
        floe_buf_append_byte(&jb, '"');
        for (size_t i = 0; i < l->n; i++) {
            char c = l->text[i];
            if (c == '"' || c == '\\')
                floe_buf_append_byte(&jb, '\\');
            if ((unsigned char)c < 0x20)
                floe_buf_printf(&jb, "\\u%04x", (unsigned char)c);
            else
                floe_buf_append_byte(&jb, (uint8_t)c);
        }
        floe_buf_append_byte(&jb, '"');
        int rc = floe_buf_error(&jb);
        char *copy = rc < 0 ? NULL : floe_arena_strndup(p->arena, (const char *)jb.data, jb.len);
        tn = jb.len;
        floe_buf_free(&jb);
        if (rc < 0)
            return floe_filter_fail(fl, l->offset, p->err, rc, "string literal: %s",
                                    floe_strerror(rc));
        if (!copy)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        text = copy;
    } else if (tn == 4 && !strncasecmp(text, "true", 4)) {
        text = "true";
    } else if (tn == 5 && !strncasecmp(text, "false", 5)) {
        text = "false";
    }
    int rc = floe_sv_from_literal(f, text, tn, p->arena, out, p->err);
    if (rc < 0) {
        floe_error_prefix(p->err, "filter: ");
        return rc;
    }
    *is_nan = (out->type == FLOE_TYPE_FLOAT && isnan(out->v.f)) ||
              (out->type == FLOE_TYPE_DOUBLE && isnan(out->v.d));
    return 0;
}

static int pred(binder *p, const floe_filter *fl, const floe_field *f, floe_pred_op op,
                const floe_filter_lit *l, floe_expr **out) {
    if (f->type == FLOE_TYPE_VARIANT) {
        size_t vdepth = 0; /* the names down to the variant field */
        for (const floe_field *q = f; q; q = q->parent)
            vdepth++;
        return variant_pred(p, fl, f, vdepth, op, l, out);
    }
    floe_expr *e = pred_node(p, f, op);
    if (!e)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    if (l)
        FLOE_FORWARD_IF_ERROR(literal(p, fl, l, f, &e->lit, &e->is_nan));
    /* NaN fails every range, so it passes every negated one: NOT (x < 5) is x >= 5 or x
     * is NaN */
    e->or_nan = fl->negated && op >= FLOE_PRED_LT && op <= FLOE_PRED_GE &&
                (f->type == FLOE_TYPE_FLOAT || f->type == FLOE_TYPE_DOUBLE);
    *out = e;
    return 0;
}

static floe_expr *binary(binder *p, floe_expr_kind k, floe_expr *a, floe_expr *b) {
    floe_expr *e = node(p, k);
    if (e) {
        e->a = a;
        e->b = b;
    }
    return e;
}

static int bind_pred(binder *p, const floe_filter *fl, floe_expr **out) {
    const floe_field *f = NULL;
    FLOE_FORWARD_IF_ERROR(column(p, fl, &f));
    if (f->type == FLOE_TYPE_UNKNOWN && fl->op != FLOE_FILTER_IS_NULL &&
        fl->op != FLOE_FILTER_NOT_NULL)
        return floe_filter_fail(fl, fl->column_offset, p->err, FLOE_EINVALID,
                                "column %s has type unknown (always null): only IS NULL and "
                                "IS NOT NULL apply", fl->column);
    static const floe_pred_op cmp_op[] = {
        [FLOE_FILTER_EQ] = FLOE_PRED_EQ, [FLOE_FILTER_NE] = FLOE_PRED_NE,
        [FLOE_FILTER_LT] = FLOE_PRED_LT, [FLOE_FILTER_LE] = FLOE_PRED_LE,
        [FLOE_FILTER_GT] = FLOE_PRED_GT, [FLOE_FILTER_GE] = FLOE_PRED_GE,
    };
    switch (fl->op) {
    case FLOE_FILTER_IS_NULL: return pred(p, fl, f, FLOE_PRED_IS_NULL, NULL, out);
    case FLOE_FILTER_NOT_NULL: return pred(p, fl, f, FLOE_PRED_NOT_NULL, NULL, out);
    case FLOE_FILTER_IN:
    case FLOE_FILTER_NOT_IN: {
        /* x IN (a, b) is x = a OR x = b; NOT IN the ANDed != */
        bool neg = fl->op == FLOE_FILTER_NOT_IN;
        floe_expr *acc = NULL;
        for (size_t i = 0; i < fl->nlits; i++) {
            floe_expr *e;
            FLOE_FORWARD_IF_ERROR(
                pred(p, fl, f, neg ? FLOE_PRED_NE : FLOE_PRED_EQ, &fl->lits[i], &e));
            acc = acc ? binary(p, neg ? FLOE_EXPR_AND : FLOE_EXPR_OR, acc, e) : e;
            if (!acc)
                return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        }
        *out = acc;
        return 0;
    }
    case FLOE_FILTER_LIKE:
    case FLOE_FILTER_NOT_LIKE: {
        if (f->type != FLOE_TYPE_STRING && f->type != FLOE_TYPE_VARIANT)
            return floe_filter_fail(fl, fl->column_offset, p->err, FLOE_EINVALID,
                                    "LIKE needs a string column");
        floe_expr *e;
        FLOE_FORWARD_IF_ERROR(pred(p, fl, f, FLOE_PRED_STARTS_WITH, &fl->lits[0], &e));
        if (fl->op == FLOE_FILTER_NOT_LIKE) {
            /* no negated starts-with: a NOT node, which rows evaluate and pruning passes */
            floe_expr *x = node(p, FLOE_EXPR_NOT);
            if (!x)
                return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
            x->a = e;
            e = x;
        }
        *out = e;
        return 0;
    }
    default: return pred(p, fl, f, cmp_op[fl->op], &fl->lits[0], out);
    }
}

static int bind(binder *p, const floe_filter *fl, floe_expr **out) {
    if (fl->kind == FLOE_FILTER_PRED)
        return bind_pred(p, fl, out);
    floe_expr *a, *b;
    FLOE_FORWARD_IF_ERROR(bind(p, fl->a, &a));
    FLOE_FORWARD_IF_ERROR(bind(p, fl->b, &b));
    if (!(*out = binary(p, fl->kind == FLOE_FILTER_AND ? FLOE_EXPR_AND : FLOE_EXPR_OR, a, b)))
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

int floe_expr_parse(const floe_schema *schema, const char *text, floe_arena *arena,
                    floe_expr **out, floe_error *err) {
    floe_filter *fl;
    FLOE_FORWARD_IF_ERROR(floe_filter_parse(text, arena, &fl, err));
    binder p = {.schema = schema, .arena = arena, .err = err};
    return bind(&p, fl, out);
}

/* ---------------------------------------------------------------------------------------
 * rows
 * ------------------------------------------------------------------------------------- */

static bool is_float_nan(const floe_value *v) {
    return (v->type == FLOE_TYPE_FLOAT && isnan(v->v.f)) ||
           (v->type == FLOE_TYPE_DOUBLE && isnan(v->v.d));
}

/* A JSON number's sign, significant digits and magnitude, for an exact comparison
 * (variant decimals have up to 38 digits and int64s more than a double holds). */
typedef struct dnum {
    const char *s;
    size_t n;
    size_t ki, kf;     /* integer digits s[ki..ki+ni), fraction digits s[kf..kf+nf) */
    size_t ni, nf;
    size_t lead;       /* leading zeros of the integer and fraction digits together */
    int64_t mag;       /* value = 0.d1d2... x 10^mag (d1 the first significant digit) */
    bool neg, zero;
} dnum;

static char dnum_digit(const dnum *d, size_t j) { /* j-th digit of integer || fraction */
    if (j < d->ni)
        return d->s[d->ki + j];
    j -= d->ni;
    return j < d->nf ? d->s[d->kf + j] : '0';
}

static void dnum_read(const char *s, size_t n, dnum *d) {
    memset(d, 0, sizeof *d);
    d->s = s;
    d->n = n;
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        d->neg = s[i++] == '-';
    d->ki = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    d->ni = i - d->ki;
    if (i < n && s[i] == '.') {
        d->kf = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        d->nf = i - d->kf;
    }
    int64_t exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        bool eneg = false;
        if (++i < n && (s[i] == '-' || s[i] == '+'))
            eneg = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (exp < 1000000000)
                exp = exp * 10 + (s[i] - '0');
        if (eneg)
            exp = -exp;
    }
    while (d->lead < d->ni + d->nf && dnum_digit(d, d->lead) == '0')
        d->lead++;
    d->zero = d->lead == d->ni + d->nf;
    d->mag = (int64_t)d->ni - (int64_t)d->lead + exp;
}

static int dnum_cmp(const char *a, size_t an, const char *b, size_t bn) {
    dnum x, y;
    dnum_read(a, an, &x);
    dnum_read(b, bn, &y);
    int sx = x.zero ? 0 : x.neg ? -1 : 1, sy = y.zero ? 0 : y.neg ? -1 : 1;
    if (sx != sy || sx == 0)
        return (sx > sy) - (sx < sy);
    int c = (x.mag > y.mag) - (x.mag < y.mag);
    size_t nx = x.ni + x.nf - x.lead, ny = y.ni + y.nf - y.lead;
    for (size_t j = 0; !c && (j < nx || j < ny); j++) {
        char dx = dnum_digit(&x, x.lead + j), dy = dnum_digit(&y, y.lead + j);
        c = (dx > dy) - (dx < dy);
    }
    return sx < 0 ? -c : c;
}

/* A variant predicate on the JSON text of the variant value at its path. */
static int eval_variant(const floe_expr *e, const floe_value *whole) {
    if (whole->is_null || whole->type != FLOE_TYPE_VARIANT)
        return e->op == FLOE_PRED_IS_NULL ? 1 : e->op == FLOE_PRED_NOT_NULL ? 0 : -1;
    floe_jspan v = {(const char *)whole->v.bytes.p, whole->v.bytes.n};
    bool null = false;
    for (size_t k = 0; k < e->nvpath && !null; k++)
        null = !floe_jtext_member(v, e->vpath[k], &v); /* not an object, or no such key */
    null = null || v.n == 0 || (v.n == 4 && !memcmp(v.p, "null", 4));
    if (e->op == FLOE_PRED_IS_NULL || e->op == FLOE_PRED_NOT_NULL)
        return null == (e->op == FLOE_PRED_IS_NULL);
    if (null)
        return -1;
    /* the value and the literal as two values of one type, or a mismatch */
    floe_value x, y;
    bool same = false;
    char v0 = v.p[0];
    json_t *j = NULL;
    if (e->vlit_kind == FLOE_FILTER_LIT_STRING) {
        j = v0 == '"' ? json_loadb(v.p, v.n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
        if ((same = j && json_is_string(j))) {
            x = floe_value_string(json_string_value(j), json_string_length(j));
            y = floe_value_string(e->vlit, e->vlit_n);
        }
    } else if (e->op != FLOE_PRED_STARTS_WITH) {
        bool lit_true = e->vlit_n == 4 && !strncasecmp(e->vlit, "true", 4);
        bool lit_bool = lit_true || (e->vlit_n == 5 && !strncasecmp(e->vlit, "false", 5));
        if (lit_bool && (v0 == 't' || v0 == 'f')) {
            same = true;
            x = floe_value_bool(v0 == 't');
            y = floe_value_bool(lit_true);
        } else if (!lit_bool && (v0 == '-' || (v0 >= '0' && v0 <= '9'))) {
            same = true; /* the exact comparison's sign against 0 */
            x = floe_value_long(dnum_cmp(v.p, v.n, e->vlit, e->vlit_n));
            y = floe_value_long(0);
        }
    }
    int r = same ? floe_pred_eval(e->op, &x, &y)
                 : e->op == FLOE_PRED_NE || e->or_nan; /* not equal, not ordered */
    json_decref(j);
    return r;
}

int floe_expr_eval_row(const floe_expr *e, floe_expr_value_fn get, void *ctx) {
    switch (e->kind) {
    case FLOE_EXPR_TRUE: return 1;
    case FLOE_EXPR_FALSE: return 0;
    case FLOE_EXPR_NOT: {
        int r = floe_expr_eval_row(e->a, get, ctx);
        return r < 0 ? -1 : !r;
    }
    case FLOE_EXPR_AND: {
        int x = floe_expr_eval_row(e->a, get, ctx);
        if (x == 0)
            return 0;
        int y = floe_expr_eval_row(e->b, get, ctx);
        if (y == 0)
            return 0;
        return x < 0 || y < 0 ? -1 : 1;
    }
    case FLOE_EXPR_OR: {
        int x = floe_expr_eval_row(e->a, get, ctx);
        if (x == 1)
            return 1;
        int y = floe_expr_eval_row(e->b, get, ctx);
        if (y == 1)
            return 1;
        return x < 0 || y < 0 ? -1 : 0;
    }
    case FLOE_EXPR_PRED: {
        floe_value v;
        if (get(ctx, e->field_id, &v) < 0)
            return -1;
        if (e->variant)
            return eval_variant(e, &v);
        if (e->op == FLOE_PRED_IS_NULL)
            return v.is_null;
        if (e->op == FLOE_PRED_NOT_NULL)
            return !v.is_null;
        if (v.is_null)
            return -1;
        if (is_float_nan(&v) || e->is_nan) /* IEEE: NaN equals nothing */
            return e->op == FLOE_PRED_NE || e->or_nan;
        if (v.type != e->lit.type) {
            /* promoted column read from an older file: widen to the literal's type */
            if (v.type == FLOE_TYPE_INT && e->lit.type == FLOE_TYPE_LONG)
                v = floe_value_long(v.v.i32);
            else if (v.type == FLOE_TYPE_FLOAT && e->lit.type == FLOE_TYPE_DOUBLE)
                v = floe_value_double(v.v.f);
            else
                return -1;
        }
        return floe_pred_eval(e->op, &v, &e->lit);
    }
    }
    return -1;
}

/* ---------------------------------------------------------------------------------------
 * inclusive checks
 * ------------------------------------------------------------------------------------- */

/* Can some value in [lo, hi] (either may be absent = unbounded) satisfy `x op lit`? */
static bool range_may(floe_pred_op op, const floe_value *lit, const floe_value *lo,
                      const floe_value *hi) {
    switch (op) {
    case FLOE_PRED_LT: return !lo || floe_value_compare(lo, lit) < 0;
    case FLOE_PRED_LE: return !lo || floe_value_compare(lo, lit) <= 0;
    case FLOE_PRED_GT: return !hi || floe_value_compare(hi, lit) > 0;
    case FLOE_PRED_GE: return !hi || floe_value_compare(hi, lit) >= 0;
    case FLOE_PRED_EQ:
        return (!lo || floe_value_compare(lo, lit) <= 0) &&
               (!hi || floe_value_compare(hi, lit) >= 0);
    case FLOE_PRED_NE:
        return !(lo && hi && floe_value_compare(lo, lit) == 0 &&
                 floe_value_compare(hi, lit) == 0);
    case FLOE_PRED_STARTS_WITH: {
        if (lit->type != FLOE_TYPE_STRING && lit->type != FLOE_TYPE_BINARY)
            return true;
        size_t L = lit->v.bytes.n;
        if (lo) {
            floe_value l = *lo;
            if (l.v.bytes.n > L)
                l.v.bytes.n = L;
            if (floe_value_compare(&l, lit) > 0)
                return false;
        }
        if (hi) {
            floe_value h = *hi;
            if (h.v.bytes.n > L)
                h.v.bytes.n = L;
            if (floe_value_compare(&h, lit) < 0)
                return false;
        }
        return true;
    }
    default: return true;
    }
}

/* Partitions [lo, hi] of a long truncate may hold values a file wrote while the column
 * was an int, wrapped in 32 bits to (INT32_MAX - W, INT32_MAX] (floe_projection_holds). */
static bool int_wrap_may(const floe_projection *pr, const floe_value *lo,
                         const floe_value *hi) {
    if (!pr->or_above || pr->above.type != FLOE_TYPE_LONG || pr->wrap_w <= 0)
        return false;
    floe_value top = floe_value_long(INT32_MAX);
    floe_value bottom = floe_value_long((int64_t)INT32_MAX - pr->wrap_w);
    return range_may(FLOE_PRED_GT, &bottom, lo, hi) && range_may(FLOE_PRED_LE, &top, lo, hi);
}

/* A bound read for pruning: a float zero as -0.0 when it is a lower bound and +0.0 when it
 * is an upper one, since writers that compare with IEEE rules (-0.0 == +0.0) may record
 * either for a file holding both, while rows compare -0.0 < +0.0. */
static bool decode_bound_at(const floe_field *f, const uint8_t *p, size_t n, bool upper,
                            floe_value *out);

/* Decode a bound of field type f, accepting the narrower encodings of promoted types. */
static bool decode_bound(const floe_field *f, const uint8_t *p, size_t n, floe_value *out) {
    floe_error e;
    floe_error_clear(&e);
    if (f->type == FLOE_TYPE_LONG && n == 4) {
        *out = floe_value_long((int32_t)floe_load_le32(p));
        return true;
    }
    if (f->type == FLOE_TYPE_DOUBLE && n == 4) {
        float x;
        memcpy(&x, p, 4);
        *out = floe_value_double(x);
        return true;
    }
    if ((f->type == FLOE_TYPE_TIMESTAMP || f->type == FLOE_TYPE_TIMESTAMP_NS) && n == 4) {
        /* a date column promoted (v3): midnight of the day; none when out of range */
        floe_lit_ts t = {.sec = (int64_t)(int32_t)floe_load_le32(p) * 86400};
        int64_t x;
        if (floe_lit_ts_units(&t, f->type == FLOE_TYPE_TIMESTAMP_NS ? 9 : 6, &x, NULL, 0) !=
            FLOE_LIT_OK)
            return false;
        *out = floe_value_i64(f->type, x);
        return true;
    }
    if (floe_value_from_binary(f, p, n, out, &e) < 0)
        return false;
    if (is_float_nan(out))
        return false;
    return true;
}

static bool decode_bound_at(const floe_field *f, const uint8_t *p, size_t n, bool upper,
                            floe_value *out) {
    if (!decode_bound(f, p, n, out))
        return false;
    if (out->type == FLOE_TYPE_FLOAT && out->v.f == 0.0f)
        out->v.f = upper ? 0.0f : -0.0f;
    if (out->type == FLOE_TYPE_DOUBLE && out->v.d == 0.0)
        out->v.d = upper ? 0.0 : -0.0;
    return true;
}

static bool count_of(const floe_count_map *m, int32_t id, int64_t *v) {
    if (!m->present)
        return false;
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id) {
            *v = m->items[i].value;
            return true;
        }
    return false;
}

static const floe_column_bound *bound_of(const floe_bound_map *m, int32_t id) {
    if (!m->present)
        return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id)
            return &m->items[i];
    return NULL;
}

/* A predicate on a path inside a variant, by the variant's bounds (format/spec.md
 * "Bounds for Variant"): an object of bounds keyed by normalized path, present for a path
 * only when every non-null value there is of the bound's type. A bound that is missing,
 * malformed or of a type the literal does not compare with gives no verdict. */
static bool variant_file_may(const floe_expr *e, const floe_data_file *f) {
    if (e->op == FLOE_PRED_IS_NULL || e->op == FLOE_PRED_NOT_NULL)
        return true;
    const floe_column_bound *lb = bound_of(&f->lower_bounds, e->field_id);
    const floe_column_bound *ub = bound_of(&f->upper_bounds, e->field_id);
    floe_vbound lo, hi;
    bool has_lo = lb && floe_variant_bound_get(lb->p, lb->n, e->vnorm, e->vnorm_n, &lo) == 1;
    bool has_hi = ub && floe_variant_bound_get(ub->p, ub->n, e->vnorm, e->vnorm_n, &hi) == 1;
    return floe_variant_range_may(e, has_lo ? &lo : NULL, has_hi ? &hi : NULL);
}

static bool file_pred_may(const floe_expr *e, const floe_data_file *f) {
    if (e->variant)
        return variant_file_may(e, f);
    int64_t vc = 0, nc = 0, nan = 0;
    bool has_vc = count_of(&f->value_counts, e->field_id, &vc);
    bool has_nc = count_of(&f->null_value_counts, e->field_id, &nc);
    bool has_nan = count_of(&f->nan_value_counts, e->field_id, &nan);
    if (e->op == FLOE_PRED_IS_NULL)
        return !(has_nc && nc == 0);
    bool all_null = has_vc && has_nc && nc == vc && vc >= 0;
    if (e->op == FLOE_PRED_NOT_NULL)
        return !all_null;
    if (all_null)
        return false;
    /* a NaN literal: only != holds (for every non-null value), and so does a negated
     * range; = < <= > >= hold for none, but NaN values are let through all the same */
    if (e->is_nan)
        return e->op == FLOE_PRED_NE || e->or_nan || !(has_nan && nan == 0);
    if (e->or_nan && !(has_nan && nan == 0))
        return true;
    const floe_column_bound *lb = bound_of(&f->lower_bounds, e->field_id);
    const floe_column_bound *ub = bound_of(&f->upper_bounds, e->field_id);
    floe_value lo, hi;
    bool has_lo = lb && decode_bound_at(e->field, lb->p, lb->n, false, &lo);
    bool has_hi = ub && decode_bound_at(e->field, ub->p, ub->n, true, &hi);
    if (has_lo && lo.type != e->lit.type)
        has_lo = false;
    if (has_hi && hi.type != e->lit.type)
        has_hi = false;
    /* NaN values sit outside the bounds; != may still match them */
    if (e->op == FLOE_PRED_NE && !(has_nan && nan == 0) &&
        (e->field->type == FLOE_TYPE_FLOAT || e->field->type == FLOE_TYPE_DOUBLE))
        return true;
    return range_may(e->op, &e->lit, has_lo ? &lo : NULL, has_hi ? &hi : NULL);
}

bool floe_expr_file_may_match(const floe_expr *e, const floe_schema *schema,
                              const floe_data_file *f) {
    (void)schema;
    switch (e->kind) {
    case FLOE_EXPR_TRUE: return true;
    case FLOE_EXPR_FALSE: return false;
    case FLOE_EXPR_AND:
        return floe_expr_file_may_match(e->a, schema, f) &&
               floe_expr_file_may_match(e->b, schema, f);
    case FLOE_EXPR_OR:
        return floe_expr_file_may_match(e->a, schema, f) ||
               floe_expr_file_may_match(e->b, schema, f);
    case FLOE_EXPR_NOT: return true;
    case FLOE_EXPR_PRED: return file_pred_may(e, f);
    }
    return true;
}

/* For each partition field fed by the predicate's column, project and test. */
static bool part_pred_may(const floe_expr *e, const floe_partition_spec *spec,
                          const floe_value *tuple, size_t n, const floe_manifest_file *mf) {
    if (e->is_nan || e->or_nan || e->variant)
        return true;
    for (size_t i = 0; i < spec->nfields && i < (mf ? mf->npartitions : n); i++) {
        const floe_partition_field *pf = &spec->fields[i];
        if (pf->source_id != e->field_id || pf->nsource_ids > 1)
            continue;
        floe_projection pr;
        floe_error err;
        floe_error_clear(&err);
        floe_value lit = e->lit;
        /* a promoted column with an older spec: the source type decides the projection */
        if (pf->source && pf->source->type != lit.type) {
            if (pf->source->type == FLOE_TYPE_INT && lit.type == FLOE_TYPE_LONG &&
                lit.v.i64 >= INT32_MIN && lit.v.i64 <= INT32_MAX)
                lit = floe_value_int((int32_t)lit.v.i64);
            else if (e->op != FLOE_PRED_IS_NULL && e->op != FLOE_PRED_NOT_NULL)
                continue;
        }
        if (floe_transform_project(pf->transform, e->op, &lit, &pr, &err) < 0 ||
            pr.always_true)
            continue;
        const floe_field *pt = i < spec->partition_type.nchildren
                                   ? &spec->partition_type.children[i]
                                   : NULL;
        if (!mf) {
            const floe_value *v = &tuple[i];
            if (!v->is_null && pr.op != FLOE_PRED_IS_NULL && pr.op != FLOE_PRED_NOT_NULL &&
                v->type != pr.value.type)
                continue; /* a tuple of another type than the projection: no verdict */
            if (!floe_projection_holds(&pr, v))
                return false;
            continue;
        }
        if (!mf->has_partitions || !pt)
            continue;
        const floe_field_summary *fs = &mf->partitions[i];
        if (pr.op == FLOE_PRED_IS_NULL) {
            if (!fs->contains_null)
                return false;
            continue;
        }
        /* NaN partition values sit outside the summary's bounds; != holds for them */
        bool floats = pt->type == FLOE_TYPE_FLOAT || pt->type == FLOE_TYPE_DOUBLE;
        if (pr.op == FLOE_PRED_NE && floats && !(fs->has_contains_nan && !fs->contains_nan))
            continue;
        floe_value lo, hi;
        bool has_lo = fs->has_lower &&
                      decode_bound_at(pt, fs->lower_bound, fs->lower_len, false, &lo);
        bool has_hi = fs->has_upper &&
                      decode_bound_at(pt, fs->upper_bound, fs->upper_len, true, &hi);
        if (!fs->has_lower && !fs->has_upper) {
            /* no non-null value in this manifest's partitions */
            if (fs->contains_null && !(fs->has_contains_nan && fs->contains_nan))
                return false;
            continue;
        }
        if (pr.op == FLOE_PRED_NOT_NULL)
            continue;
        if ((has_lo && lo.type != pr.value.type) || (has_hi && hi.type != pr.value.type))
            continue;
        if (!range_may(pr.op, &pr.value, has_lo ? &lo : NULL, has_hi ? &hi : NULL) &&
            !(pr.or_above && range_may(FLOE_PRED_GT, &pr.above, has_lo ? &lo : NULL,
                                       has_hi ? &hi : NULL)) &&
            !int_wrap_may(&pr, has_lo ? &lo : NULL, has_hi ? &hi : NULL))
            return false;
    }
    return true;
}

static bool part_may(const floe_expr *e, const floe_partition_spec *spec,
                     const floe_value *tuple, size_t n, const floe_manifest_file *mf) {
    switch (e->kind) {
    case FLOE_EXPR_TRUE: return true;
    case FLOE_EXPR_FALSE: return false;
    case FLOE_EXPR_AND:
        return part_may(e->a, spec, tuple, n, mf) && part_may(e->b, spec, tuple, n, mf);
    case FLOE_EXPR_OR:
        return part_may(e->a, spec, tuple, n, mf) || part_may(e->b, spec, tuple, n, mf);
    case FLOE_EXPR_NOT: return true;
    case FLOE_EXPR_PRED: return part_pred_may(e, spec, tuple, n, mf);
    }
    return true;
}

bool floe_expr_partition_may_match(const floe_expr *e, const floe_partition_spec *spec,
                                   const floe_value *tuple, size_t n) {
    return part_may(e, spec, tuple, n, NULL);
}

bool floe_expr_manifest_may_match(const floe_expr *e, const floe_partition_spec *spec,
                                  const floe_manifest_file *mf) {
    return part_may(e, spec, NULL, 0, mf);
}
