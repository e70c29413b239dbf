/*
 * filter.c - parser of the --where language (grammar and tree in common/filter.h).
 *
 * A recursive descent over the text with a cursor; NOT is not a node of the result but a
 * parity carried down the descent, so every predicate is built already negated or not and
 * AND / OR swap under an odd parity (De Morgan). Nothing here knows a schema or a type.
 */
#include "common/filter.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct parser {
    const char *s;
    size_t n, i;
    floe_arena *arena;
    floe_error *err;
    int depth;
    const char *kind; /* what the text is, for messages: "filter", "column path" */
    bool bare_to_dot; /* a bare name runs to the next dot (a path alone, not a filter) */
} parser;

static int perr_at(const parser *p, size_t at, const char *what) {
    return floe_error_set(p->err, FLOE_EINVALID, "%s: %s at offset %zu in \"%s\"", p->kind,
                          what, at, p->s);
}

static int perr(const parser *p, const char *what) { return perr_at(p, p->i, what); }

static int oom(const parser *p) { return floe_error_set(p->err, FLOE_ENOMEM, "out of memory"); }

int floe_filter_fail(const floe_filter *node, size_t offset, floe_error *err, int code,
                     const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return floe_error_set(err, code, "filter: %s at offset %zu in \"%s\"", msg, offset,
                          node->text);
}

static void skip_ws(parser *p) {
    while (p->i < p->n && isspace((unsigned char)p->s[p->i]))
        p->i++;
}

/* Keyword (case-insensitive, whole word) at the cursor: consumed when present. */
static bool keyword(parser *p, const char *kw) {
    skip_ws(p);
    size_t k = strlen(kw);
    if (p->n - p->i < k || strncasecmp(p->s + p->i, kw, k))
        return false;
    if (p->i + k < p->n) {
        char c = p->s[p->i + k];
        if (isalnum((unsigned char)c) || c == '_' || c == '.')
            return false;
    }
    p->i += k;
    return true;
}

/* The text between quotes q at the cursor, a doubled q standing for one; *out in the arena. */
static int quoted(parser *p, char q, const char *what, char **out, size_t *len) {
    size_t at = p->i++;
    char *buf = floe_arena_alloc(p->arena, p->n - p->i + 1);
    if (!buf)
        return oom(p);
    size_t k = 0;
    for (;;) {
        if (p->i >= p->n)
            return perr_at(p, at, what);
        char c = p->s[p->i++];
        if (c == q) {
            if (p->i < p->n && p->s[p->i] == q) {
                p->i++;
            } else {
                break;
            }
        }
        buf[k++] = c;
    }
    buf[k] = 0;
    *out = buf;
    *len = k;
    return 0;
}

static bool name_byte(char c) {
    return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* name ("." name)*, each name bare or quoted; no space around the dots. */
static int column(parser *p, floe_filter *e) {
    if (!p->bare_to_dot) /* a path alone is its text whole: " a" names " a" */
        skip_ws(p);
    e->column_offset = p->i;
    const char *names[FLOE_FILTER_MAX_PATH];
    size_t n = 0;
    for (;;) {
        size_t at = p->i;
        char *name;
        size_t len;
        if (p->i < p->n && (p->s[p->i] == '"' || p->s[p->i] == '`')) {
            FLOE_FORWARD_IF_ERROR(quoted(p, p->s[p->i], "unterminated column name", &name, &len));
            if (len == 0 || memchr(name, 0, len))
                return perr_at(p, at, "expected a column name");
        } else {
            while (p->i < p->n && (p->bare_to_dot ? p->s[p->i] != '.' : name_byte(p->s[p->i])))
                p->i++;
            if (p->i == at)
                return perr(p, "expected a column name");
            if (!(name = floe_arena_strndup(p->arena, p->s + at, p->i - at)))
                return oom(p);
        }
        if (n == FLOE_FILTER_MAX_PATH)
            return perr_at(p, e->column_offset, "a column path of too many names");
        names[n++] = name;
        if (p->i >= p->n || p->s[p->i] != '.')
            break;
        p->i++;
    }
    const char **path = floe_arena_alloc(p->arena, n * sizeof *path);
    if (!path ||
        !(e->column = floe_arena_strndup(p->arena, p->s + e->column_offset,
                                         p->i - e->column_offset)))
        return oom(p);
    memcpy(path, names, n * sizeof *path);
    e->path = path;
    e->npath = n;
    return 0;
}

static int literal(parser *p, floe_filter_lit *out) {
    skip_ws(p);
    out->offset = p->i;
    if (p->i >= p->n)
        return perr(p, "expected a literal");
    if (p->s[p->i] == '\'') {
        char *text;
        FLOE_FORWARD_IF_ERROR(quoted(p, '\'', "unterminated string", &text, &out->n));
        out->text = text;
        out->kind = FLOE_FILTER_LIT_STRING;
        return 0;
    }
    size_t st = p->i;
    while (p->i < p->n && !isspace((unsigned char)p->s[p->i]) && p->s[p->i] != '(' &&
           p->s[p->i] != ')' && p->s[p->i] != ',')
        p->i++;
    if (p->i == st)
        return perr(p, "expected a literal");
    out->n = p->i - st;
    if (!(out->text = floe_arena_strndup(p->arena, p->s + st, out->n)))
        return oom(p);
    out->kind = out->n == 4 && !strncasecmp(out->text, "null", 4) ? FLOE_FILTER_LIT_NULL
                                                                   : FLOE_FILTER_LIT_WORD;
    return 0;
}

static floe_filter *node(parser *p, floe_filter_kind kind) {
    floe_filter *e = floe_arena_alloc(p->arena, sizeof *e);
    if (e) {
        memset(e, 0, sizeof *e);
        e->kind = kind;
        e->text = p->s;
    }
    return e;
}

/* The complement of each operator (in enum order). */
static const floe_filter_op complement[] = {
    [FLOE_FILTER_EQ] = FLOE_FILTER_NE,           [FLOE_FILTER_NE] = FLOE_FILTER_EQ,
    [FLOE_FILTER_LT] = FLOE_FILTER_GE,           [FLOE_FILTER_LE] = FLOE_FILTER_GT,
    [FLOE_FILTER_GT] = FLOE_FILTER_LE,           [FLOE_FILTER_GE] = FLOE_FILTER_LT,
    [FLOE_FILTER_IN] = FLOE_FILTER_NOT_IN,       [FLOE_FILTER_NOT_IN] = FLOE_FILTER_IN,
    [FLOE_FILTER_IS_NULL] = FLOE_FILTER_NOT_NULL, [FLOE_FILTER_NOT_NULL] = FLOE_FILTER_IS_NULL,
    [FLOE_FILTER_LIKE] = FLOE_FILTER_NOT_LIKE,   [FLOE_FILTER_NOT_LIKE] = FLOE_FILTER_LIKE,
};

static int parse_or(parser *p, bool neg, floe_filter **out);

static int parse_cmp(parser *p, bool neg, floe_filter **out) {
    floe_filter *e = node(p, FLOE_FILTER_PRED);
    if (!e)
        return oom(p);
    FLOE_FORWARD_IF_ERROR(column(p, e));
    skip_ws(p);
    if (keyword(p, "IS")) {
        bool not_null = keyword(p, "NOT");
        if (!keyword(p, "NULL"))
            return perr(p, "expected NULL");
        e->op = not_null ? FLOE_FILTER_NOT_NULL : FLOE_FILTER_IS_NULL;
    } else {
        bool negop = keyword(p, "NOT");
        if (keyword(p, "IN")) {
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != '(')
                return perr(p, "expected ( after IN");
            p->i++;
            size_t cap = 4;
            e->lits = floe_arena_alloc(p->arena, cap * sizeof *e->lits);
            if (!e->lits)
                return oom(p);
            for (;;) {
                if (e->nlits == cap) {
                    floe_filter_lit *nl = floe_arena_alloc(p->arena, 2 * cap * sizeof *nl);
                    if (!nl)
                        return oom(p);
                    memcpy(nl, e->lits, e->nlits * sizeof *nl);
                    e->lits = nl;
                    cap *= 2;
                }
                FLOE_FORWARD_IF_ERROR(literal(p, &e->lits[e->nlits]));
                e->nlits++;
                skip_ws(p);
                if (p->i < p->n && p->s[p->i] == ',') {
                    p->i++;
                    continue;
                }
                if (p->i < p->n && p->s[p->i] == ')') {
                    p->i++;
                    break;
                }
                return perr(p, "expected , or ) in IN list");
            }
            e->op = negop ? FLOE_FILTER_NOT_IN : FLOE_FILTER_IN;
        } else if (keyword(p, "LIKE")) {
            if (!(e->lits = floe_arena_alloc(p->arena, sizeof *e->lits)))
                return oom(p);
            FLOE_FORWARD_IF_ERROR(literal(p, e->lits));
            e->nlits = 1;
            floe_filter_lit *l = e->lits;
            if (l->kind != FLOE_FILTER_LIT_STRING || l->n == 0 || l->text[l->n - 1] != '%' ||
                memchr(l->text, '_', l->n) || memchr(l->text, '%', l->n - 1))
                return perr_at(p, l->offset, "only LIKE 'prefix%' is supported");
            l->n--;
            ((char *)l->text)[l->n] = 0;
            e->op = negop ? FLOE_FILTER_NOT_LIKE : FLOE_FILTER_LIKE;
        } else if (negop) {
            return perr(p, "expected IN or LIKE after NOT");
        } else {
            skip_ws(p);
            static const struct {
                const char *t;
                floe_filter_op op;
            } ops[] = {{"==", FLOE_FILTER_EQ}, {"!=", FLOE_FILTER_NE}, {"<>", FLOE_FILTER_NE},
                       {"<=", FLOE_FILTER_LE}, {">=", FLOE_FILTER_GE}, {"=", FLOE_FILTER_EQ},
                       {"<", FLOE_FILTER_LT},  {">", FLOE_FILTER_GT}};
            size_t k = 0, nops = sizeof ops / sizeof ops[0];
            for (; k < nops; k++)
                if (p->n - p->i >= strlen(ops[k].t) &&
                    !memcmp(p->s + p->i, ops[k].t, strlen(ops[k].t)))
                    break;
            if (k == nops)
                return perr(p, "expected a comparison operator, IN, LIKE or IS");
            p->i += strlen(ops[k].t);
            if (!(e->lits = floe_arena_alloc(p->arena, sizeof *e->lits)))
                return oom(p);
            FLOE_FORWARD_IF_ERROR(literal(p, e->lits));
            e->nlits = 1;
            e->op = ops[k].op;
        }
    }
    if (neg)
        e->op = complement[e->op];
    e->negated = neg;
    *out = e;
    return 0;
}

static int parse_not(parser *p, bool neg, floe_filter **out) {
    if (++p->depth > FLOE_FILTER_MAX_DEPTH)
        return perr(p, "expression nested too deeply");
    skip_ws(p);
    if (keyword(p, "NOT")) {
        FLOE_FORWARD_IF_ERROR(parse_not(p, !neg, out));
    } else if (p->i < p->n && p->s[p->i] == '(') {
        p->i++;
        FLOE_FORWARD_IF_ERROR(parse_or(p, neg, out));
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] != ')')
            return perr(p, "expected )");
        p->i++;
    } else {
        FLOE_FORWARD_IF_ERROR(parse_cmp(p, neg, out));
    }
    p->depth--;
    return 0;
}

/* A chain of `word`-separated operands, joined by kind (or by the other connective when
 * negated: NOT (a AND b) = NOT a OR NOT b). */
static int parse_chain(parser *p, bool neg, const char *word, floe_filter_kind kind,
                       int (*operand)(parser *, bool, floe_filter **), floe_filter **out) {
    floe_filter *a;
    FLOE_FORWARD_IF_ERROR(operand(p, neg, &a));
    while (keyword(p, word)) {
        floe_filter *b, *e;
        FLOE_FORWARD_IF_ERROR(operand(p, neg, &b));
        if (!(e = node(p, neg ? (kind == FLOE_FILTER_AND ? FLOE_FILTER_OR : FLOE_FILTER_AND)
                              : kind)))
            return oom(p);
        e->a = a;
        e->b = b;
        a = e;
    }
    *out = a;
    return 0;
}

static int parse_and(parser *p, bool neg, floe_filter **out) {
    return parse_chain(p, neg, "AND", FLOE_FILTER_AND, parse_not, out);
}

static int parse_or(parser *p, bool neg, floe_filter **out) {
    return parse_chain(p, neg, "OR", FLOE_FILTER_OR, parse_and, out);
}

int floe_filter_parse_path(const char *text, floe_arena *arena, const char *const **path,
                           size_t *npath, floe_error *err) {
    parser p = {.s = text, .n = strlen(text), .arena = arena, .err = err,
                .kind = "column path", .bare_to_dot = true};
    floe_filter e;
    memset(&e, 0, sizeof e);
    FLOE_FORWARD_IF_ERROR(column(&p, &e));
    if (p.i != p.n)
        return perr(&p, "a dot or the end expected after a quoted name");
    *path = e.path;
    *npath = e.npath;
    return 0;
}

int floe_filter_parse(const char *text, floe_arena *arena, floe_filter **out, floe_error *err) {
    parser p = {.s = text, .n = strlen(text), .arena = arena, .err = err, .kind = "filter"};
    floe_filter *e;
    FLOE_FORWARD_IF_ERROR(parse_or(&p, false, &e));
    skip_ws(&p);
    if (p.i != p.n)
        return perr(&p, "unexpected text after the expression");
    *out = e;
    return 0;
}
