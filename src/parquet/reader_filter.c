/*
 * reader_filter.c - the reader's filter language (grammar in floe/parquet_reader.h):
 * parsing and typing, then three evaluations of the same expression:
 *   - row group: may any row match, given the chunk statistics (min/max/null_count)?
 *   - pages: which row ranges may match, given the ColumnIndex and OffsetIndex
 *     (parquet-format PageIndex.md)?
 *   - row: does this row match exactly?
 *
 * After parsing, NOT is pushed down to the comparisons (negation normal form: NOT (a < 1)
 * becomes a >= 1, NOT IN and IS NOT NULL flip), which is exact under SQL's three-valued
 * logic because NaN is ordered (above every number, equal to itself), so every operator
 * has an exact complement among non-null values. Statistics exclude NaN, so for floating
 * point columns the operators a NaN could satisfy (>, >=, !=, NOT IN, or a NaN literal)
 * never prune.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parquet/reader_internal.h"

/* ---- tokens ---------------------------------------------------------------------------- */

typedef enum tok_kind {
    T_END, T_IDENT, T_QIDENT, T_NUMBER, T_STRING, T_LPAREN, T_RPAREN, T_COMMA, T_OP,
} tok_kind;

typedef struct parser {
    floe_pq_reader *r;
    const char *s;
    size_t pos, len;
    tok_kind kind;
    const char *tp;   /* token text */
    size_t tn;
    char *str;        /* unescaped string literal or quoted identifier (arena) */
    size_t strn;
    floe_error *err;
    int depth;
} parser;

static int perr(parser *p, const char *msg) {
    return floe_error_set(p->err, FLOE_EINVALID, "filter: %s at offset %zu in \"%s\"", msg,
                          (size_t)(p->tp - p->s), p->s);
}

static int next_tok(parser *p) {
    while (p->pos < p->len && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
    p->tp = p->s + p->pos;
    p->tn = 0;
    if (p->pos >= p->len) {
        p->kind = T_END;
        return 0;
    }
    char c = p->s[p->pos];
    size_t st = p->pos;
    if (c == '(' || c == ')' || c == ',') {
        p->kind = c == '(' ? T_LPAREN : c == ')' ? T_RPAREN : T_COMMA;
        p->pos++;
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
        p->kind = T_OP;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '=' || (c == '<' && p->s[p->pos] == '>')))
            p->pos++;
        if (c == '!' && p->pos - st != 2)
            return perr(p, "expected !=");
    } else if (c == '\'' || c == '"' || c == '`') {
        char q = c;
        size_t cap = p->len - p->pos;
        char *buf = floe_arena_alloc(&p->r->arena, cap + 1);
        if (!buf)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        size_t n = 0;
        p->pos++;
        for (;;) {
            if (p->pos >= p->len)
                return perr(p, "unterminated quote");
            char d = p->s[p->pos++];
            if (d == q) {
                if (p->pos < p->len && p->s[p->pos] == q) { /* doubled quote */
                    buf[n++] = q;
                    p->pos++;
                    continue;
                }
                break;
            }
            buf[n++] = d;
        }
        buf[n] = 0;
        p->str = buf;
        p->strn = n;
        p->kind = q == '\'' ? T_STRING : T_QIDENT;
    } else if (isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.') {
        p->kind = T_NUMBER;
        p->pos++;
        while (p->pos < p->len) {
            char d = p->s[p->pos];
            if (isalnum((unsigned char)d) || d == '.' ||
                ((d == '-' || d == '+') && (p->s[p->pos - 1] == 'e' || p->s[p->pos - 1] == 'E')))
                p->pos++;
            else
                break;
        }
    } else if (isalpha((unsigned char)c) || c == '_') {
        p->kind = T_IDENT;
        while (p->pos < p->len && (isalnum((unsigned char)p->s[p->pos]) ||
                                   p->s[p->pos] == '_' || p->s[p->pos] == '.'))
            p->pos++;
    } else {
        return perr(p, "unexpected character");
    }
    p->tn = p->pos - st;
    return 0;
}

static bool is_kw(const parser *p, const char *kw) {
    return p->kind == T_IDENT && strlen(kw) == p->tn && !strncasecmp(p->tp, kw, p->tn);
}

/* ---- literal typing -------------------------------------------------------------------- */

static bool parse_digits(const char *s, size_t n, size_t *pos, size_t want, int64_t *out) {
    int64_t v = 0;
    size_t k = 0;
    while (*pos < n && isdigit((unsigned char)s[*pos]) && (want == 0 || k < want)) {
        v = v * 10 + (s[*pos] - '0');
        (*pos)++;
        if (++k > 18)
            return false;
    }
    if (k == 0 || (want && k != want))
        return false;
    *out = v;
    return true;
}

static bool parse_date_at(const char *s, size_t n, size_t *pos, int64_t *days) {
    int64_t y, m, d;
    bool neg = *pos < n && s[*pos] == '-';
    if (neg)
        (*pos)++;
    if (!parse_digits(s, n, pos, 0, &y) || *pos >= n || s[(*pos)++] != '-' ||
        !parse_digits(s, n, pos, 2, &m) || *pos >= n || s[(*pos)++] != '-' ||
        !parse_digits(s, n, pos, 2, &d) || m < 1 || m > 12 || d < 1 || d > 31)
        return false;
    *days = floe_days_from_civil(neg ? -y : y, (unsigned)m, (unsigned)d);
    return true;
}

/* HH:MM[:SS[.fffffffff]] -> nanos of day */
static bool parse_time_at(const char *s, size_t n, size_t *pos, int64_t *nanos) {
    int64_t h, mi, sec = 0, frac = 0;
    if (!parse_digits(s, n, pos, 2, &h) || *pos >= n || s[(*pos)++] != ':' ||
        !parse_digits(s, n, pos, 2, &mi) || h > 23 || mi > 59)
        return false;
    if (*pos < n && s[*pos] == ':') {
        (*pos)++;
        if (!parse_digits(s, n, pos, 2, &sec) || sec > 60)
            return false;
        if (*pos < n && s[*pos] == '.') {
            (*pos)++;
            int k = 0;
            while (*pos < n && isdigit((unsigned char)s[*pos])) {
                if (k < 9) {
                    frac = frac * 10 + (s[*pos] - '0');
                    k++;
                }
                (*pos)++;
            }
            if (k == 0)
                return false;
            while (k++ < 9)
                frac *= 10;
        }
    }
    *nanos = ((h * 60 + mi) * 60 + sec) * 1000000000 + frac;
    return true;
}

/* ISO timestamp: date [T or space] time [Z | +HH:MM | -HH:MM] -> nanos since epoch (UTC
 * when a zone is given). */
static bool parse_ts(const char *s, size_t n, pq_i128 *nanos) {
    size_t pos = 0;
    int64_t days, tod = 0;
    if (!parse_date_at(s, n, &pos, &days))
        return false;
    if (pos < n && (s[pos] == 'T' || s[pos] == ' ')) {
        pos++;
        if (!parse_time_at(s, n, &pos, &tod))
            return false;
    }
    int64_t off = 0;
    if (pos < n && (s[pos] == 'Z' || s[pos] == 'z')) {
        pos++;
    } else if (pos < n && (s[pos] == '+' || s[pos] == '-')) {
        int sign = s[pos] == '-' ? -1 : 1;
        int64_t oh, om = 0;
        pos++;
        if (!parse_digits(s, n, &pos, 2, &oh))
            return false;
        if (pos < n && s[pos] == ':')
            pos++;
        if (pos < n && !parse_digits(s, n, &pos, 2, &om))
            return false;
        off = sign * (oh * 3600 + om * 60);
    }
    if (pos != n)
        return false;
    *nanos = ((pq_i128)days * 86400 - off) * 1000000000 + tod;
    return true;
}

static bool parse_dec(const char *s, size_t n, int32_t scale, pq_i128 *out) {
    size_t pos = 0;
    bool neg = false;
    if (pos < n && (s[pos] == '-' || s[pos] == '+'))
        neg = s[pos++] == '-';
    pq_i128 v = 0;
    int digits = 0, fdigits = 0;
    bool seen_dot = false, any = false;
    for (; pos < n; pos++) {
        char c = s[pos];
        if (c == '.' && !seen_dot) {
            seen_dot = true;
            continue;
        }
        if (!isdigit((unsigned char)c))
            return false;
        any = true;
        if (seen_dot) {
            if (fdigits >= scale) {
                if (c != '0')
                    return false; /* more precision than the column holds */
                continue;
            }
            fdigits++;
        }
        if (++digits > 38)
            return false;
        v = v * 10 + (c - '0');
    }
    if (!any)
        return false;
    while (fdigits++ < scale)
        v *= 10;
    *out = neg ? -v : v;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Type the current token as a literal for leaf lf into v. */
static int type_literal(parser *p, const pq_leaf *lf, pq_value *v) {
    memset(v, 0, sizeof *v);
    const floe_pq_node *nd = lf->node;
    bool is_str = p->kind == T_STRING;
    const char *s = is_str ? p->str : p->tp;
    size_t n = is_str ? p->strn : p->tn;
    if (p->kind == T_IDENT && is_kw(p, "null")) {
        v->is_null = true;
        return 0;
    }
    if (p->kind != T_STRING && p->kind != T_NUMBER && p->kind != T_IDENT)
        return perr(p, "expected a literal");
    switch (lf->ck) {
    case PQ_CK_BOOL:
        if ((p->kind == T_IDENT || is_str) && n == 4 && !strncasecmp(s, "true", 4))
            v->i = 1;
        else if ((p->kind == T_IDENT || is_str) && n == 5 && !strncasecmp(s, "false", 5))
            v->i = 0;
        else
            return perr(p, "expected true or false");
        return 0;
    case PQ_CK_I64: {
        floe_type_id t = nd->value_type;
        if (t == FLOE_TYPE_DATE && is_str) {
            size_t pos = 0;
            int64_t d;
            if (!parse_date_at(s, n, &pos, &d) || pos != n)
                return perr(p, "expected a date 'YYYY-MM-DD'");
            v->i = d;
            return 0;
        }
        if (t == FLOE_TYPE_TIME && is_str) {
            size_t pos = 0;
            int64_t ns;
            if (!parse_time_at(s, n, &pos, &ns) || pos != n)
                return perr(p, "expected a time 'HH:MM:SS[.ffffff]'");
            v->i = ns / 1000;
            return 0;
        }
        if ((t == FLOE_TYPE_TIMESTAMP || t == FLOE_TYPE_TIMESTAMPTZ ||
             t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS) && is_str) {
            pq_i128 ns;
            if (!parse_ts(s, n, &ns))
                return perr(p, "expected an ISO timestamp 'YYYY-MM-DDTHH:MM:SS[.f][Z]'");
            pq_i128 val = lf->time_unit == FLOE_PQ_NANOS ? ns
                          : (ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000));
            if (val > INT64_MAX || val < INT64_MIN)
                return perr(p, "timestamp out of range");
            v->i = (int64_t)val;
            return 0;
        }
        if (p->kind != T_NUMBER || !floe_parse_i64(s, n, &v->i))
            return perr(p, "expected an integer");
        if (t == FLOE_TYPE_INT && (v->i > INT32_MAX || v->i < INT32_MIN))
            return perr(p, "integer out of range for an int column");
        return 0;
    }
    case PQ_CK_U64: {
        /* as an int64 first, so "-0" is 0 and "-1" refused; then the range past INT64_MAX */
        int64_t x;
        if (p->kind != T_NUMBER)
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
    case PQ_CK_DEC:
        if (!parse_dec(s, n, nd->scale, &v->dec))
            return perr(p, "expected a decimal with at most the column's scale");
        return 0;
    case PQ_CK_BYTES:
        if (nd->value_type == FLOE_TYPE_UUID) {
            uint8_t *u = floe_arena_alloc(&p->r->arena, 16);
            if (!u)
                return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (s[i] == '-')
                    continue;
                int h = hexval(s[i]);
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

/* ---- grammar ------------------------------------------------------------------------- */

static pq_expr *new_expr(parser *p, pq_expr_kind k) {
    pq_expr *e = floe_arena_alloc(&p->r->arena, sizeof *e);
    if (e)
        e->kind = k;
    return e;
}


static int parse_or(parser *p, pq_expr **out);

static int parse_cmp(parser *p, pq_expr **out) {
    if (p->kind != T_IDENT && p->kind != T_QIDENT)
        return perr(p, "expected a column name");
    char *name = p->kind == T_QIDENT ? p->str
                                      : floe_arena_strndup(&p->r->arena, p->tp, p->tn);
    if (!name)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    const floe_pq_node *nd = pq_find_path(p->r, name);
    if (!nd)
        return floe_error_set(p->err, FLOE_ENOTFOUND, "filter: no column '%s'", name);
    if (nd->column < 0)
        return floe_error_set(p->err, FLOE_EINVALID, "filter: '%s' is not a primitive column",
                              name);
    if (nd->rep_level > 0)
        return floe_error_set(p->err, FLOE_EUNSUPPORTED,
                              "filter: unsupported: condition on repeated column '%s'", name);
    const pq_leaf *lf = &p->r->leaves[nd->column];
    FLOE_FORWARD_IF_ERROR(next_tok(p));
    pq_expr *e;
    if (is_kw(p, "is")) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        bool neg = false;
        if (is_kw(p, "not")) {
            neg = true;
            FLOE_FORWARD_IF_ERROR(next_tok(p));
        }
        if (!is_kw(p, "null"))
            return perr(p, "expected NULL");
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        e = new_expr(p, neg ? PQ_X_NOT_NULL : PQ_X_IS_NULL);
        if (!e)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        e->column = nd->column;
        *out = e;
        return 0;
    }
    bool neg_in = false;
    if (is_kw(p, "not")) {
        neg_in = true;
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        if (!is_kw(p, "in"))
            return perr(p, "expected IN after NOT");
    }
    if (is_kw(p, "in")) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        if (p->kind != T_LPAREN)
            return perr(p, "expected ( after IN");
        size_t cap = 8, n = 0;
        bool has_null = false;
        pq_value *lits = floe_arena_alloc(&p->r->arena, cap * sizeof *lits);
        if (!lits)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        for (;;) {
            FLOE_FORWARD_IF_ERROR(next_tok(p));
            pq_value v;
            FLOE_FORWARD_IF_ERROR(type_literal(p, lf, &v));
            if (v.is_null) {
                has_null = true;
            } else {
                if (n == cap) {
                    pq_value *nl = floe_arena_alloc(&p->r->arena, 2 * cap * sizeof *nl);
                    if (!nl)
                        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
                    memcpy(nl, lits, n * sizeof *nl);
                    lits = nl;
                    cap *= 2;
                }
                lits[n++] = v;
            }
            FLOE_FORWARD_IF_ERROR(next_tok(p));
            if (p->kind == T_RPAREN)
                break;
            if (p->kind != T_COMMA)
                return perr(p, "expected , or )");
        }
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        /* a NULL in a NOT IN list makes it never true; in an IN list it changes nothing */
        e = new_expr(p, neg_in && has_null ? PQ_X_FALSE : neg_in ? PQ_X_NOT_IN : PQ_X_IN);
        if (!e)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        e->column = nd->column;
        e->lits = lits;
        e->nlits = n;
        if (!neg_in && n == 0)
            e->kind = PQ_X_FALSE;
        *out = e;
        return 0;
    }
    if (p->kind != T_OP)
        return perr(p, "expected a comparison operator, IN or IS");
    pq_cmp_op op;
    if (p->tn == 1 && p->tp[0] == '=')
        op = PQ_EQ;
    else if (p->tn == 2 && p->tp[0] == '=' && p->tp[1] == '=')
        op = PQ_EQ;
    else if (p->tn == 2 && (p->tp[0] == '!' || (p->tp[0] == '<' && p->tp[1] == '>')))
        op = PQ_NE;
    else if (p->tn == 1 && p->tp[0] == '<')
        op = PQ_LT;
    else if (p->tn == 2 && p->tp[0] == '<')
        op = PQ_LE;
    else if (p->tn == 1 && p->tp[0] == '>')
        op = PQ_GT;
    else if (p->tn == 2 && p->tp[0] == '>')
        op = PQ_GE;
    else
        return perr(p, "unknown operator");
    FLOE_FORWARD_IF_ERROR(next_tok(p));
    pq_value v;
    FLOE_FORWARD_IF_ERROR(type_literal(p, lf, &v));
    FLOE_FORWARD_IF_ERROR(next_tok(p));
    e = new_expr(p, v.is_null ? PQ_X_FALSE : PQ_X_CMP);
    pq_value *lit = floe_arena_alloc(&p->r->arena, sizeof *lit);
    if (!e || !lit)
        return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
    *lit = v;
    e->op = op;
    e->column = nd->column;
    e->lits = lit;
    e->nlits = 1;
    *out = e;
    return 0;
}

static int parse_not(parser *p, pq_expr **out) {
    if (++p->depth > 200)
        return perr(p, "expression nested too deeply");
    int rc;
    if (is_kw(p, "not")) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        pq_expr *a;
        FLOE_FORWARD_IF_ERROR(parse_not(p, &a));
        pq_expr *e = new_expr(p, PQ_X_NOT);
        if (!e)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        e->a = a;
        *out = e;
        rc = 0;
    } else if (p->kind == T_LPAREN) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        FLOE_FORWARD_IF_ERROR(parse_or(p, out));
        if (p->kind != T_RPAREN)
            return perr(p, "expected )");
        rc = next_tok(p);
    } else {
        rc = parse_cmp(p, out);
    }
    p->depth--;
    return rc;
}

static int parse_and(parser *p, pq_expr **out) {
    pq_expr *a;
    FLOE_FORWARD_IF_ERROR(parse_not(p, &a));
    while (is_kw(p, "and")) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        pq_expr *b;
        FLOE_FORWARD_IF_ERROR(parse_not(p, &b));
        pq_expr *e = new_expr(p, PQ_X_AND);
        if (!e)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        e->a = a;
        e->b = b;
        a = e;
    }
    *out = a;
    return 0;
}

static int parse_or(parser *p, pq_expr **out) {
    pq_expr *a;
    FLOE_FORWARD_IF_ERROR(parse_and(p, &a));
    while (is_kw(p, "or")) {
        FLOE_FORWARD_IF_ERROR(next_tok(p));
        pq_expr *b;
        FLOE_FORWARD_IF_ERROR(parse_and(p, &b));
        pq_expr *e = new_expr(p, PQ_X_OR);
        if (!e)
            return floe_error_set(p->err, FLOE_ENOMEM, "out of memory");
        e->a = a;
        e->b = b;
        a = e;
    }
    *out = a;
    return 0;
}

/* Push NOT down to the leaves (in place). */
static pq_expr *nnf(pq_expr *e, bool neg) {
    switch (e->kind) {
    case PQ_X_NOT: return nnf(e->a, !neg);
    case PQ_X_AND:
    case PQ_X_OR:
        e->a = nnf(e->a, neg);
        e->b = nnf(e->b, neg);
        if (neg)
            e->kind = e->kind == PQ_X_AND ? PQ_X_OR : PQ_X_AND;
        return e;
    case PQ_X_CMP:
        if (neg) {
            static const pq_cmp_op flip[] = {PQ_NE, PQ_EQ, PQ_GE, PQ_GT, PQ_LE, PQ_LT};
            e->op = flip[e->op];
        }
        return e;
    case PQ_X_IN: if (neg) e->kind = PQ_X_NOT_IN; return e;
    case PQ_X_NOT_IN: if (neg) e->kind = PQ_X_IN; return e;
    case PQ_X_IS_NULL: if (neg) e->kind = PQ_X_NOT_NULL; return e;
    case PQ_X_NOT_NULL: if (neg) e->kind = PQ_X_IS_NULL; return e;
    case PQ_X_FALSE: return e; /* unknown stays unknown under NOT */
    }
    return e;
}

int pq_filter_parse(floe_pq_reader *r, const char *text, pq_expr **out, floe_error *err) {
    parser p;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.s = text;
    p.len = strlen(text);
    p.err = err;
    FLOE_FORWARD_IF_ERROR(next_tok(&p));
    pq_expr *e;
    FLOE_FORWARD_IF_ERROR(parse_or(&p, &e));
    if (p.kind != T_END)
        return perr(&p, "unexpected text after the expression");
    *out = nnf(e, false);
    return 0;
}

void pq_filter_columns(const pq_expr *e, bool *needed) {
    switch (e->kind) {
    case PQ_X_AND:
    case PQ_X_OR:
        pq_filter_columns(e->a, needed);
        pq_filter_columns(e->b, needed);
        return;
    case PQ_X_NOT: pq_filter_columns(e->a, needed); return;
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
    case PQ_X_NOT: return true; /* not produced after nnf */
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
    case PQ_X_NOT: return !pq_filter_row(r, e->a, row_value); /* not produced after nnf */
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
    bool found = false;
    for (size_t i = 0; i < e->nlits && !found; i++)
        found = pq_value_cmp(lf, &v, &e->lits[i]) == 0;
    return e->kind == PQ_X_IN ? found : !found;
}
