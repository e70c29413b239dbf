/*
 * partition_parse.c - schema lookups and the small lexer/term parser behind the user
 * forms of partition specs and sort orders (see partition_internal.h).
 *
 * The term grammar:
 *   term  := ident | fn '(' args ')'
 *   args  := ident | int ',' ident | ident ',' int
 *   fn    := identity | bucket | truncate | year[s] | month[s] | day[s] | hour[s] | void
 * Identifiers are words of [A-Za-z0-9_.$] or `back-quoted` / "double-quoted" names
 * (a doubled quote inside stands for itself). Sources of partitions and sorts must be
 * primitive and outside lists and maps (spec "Partitioning").
 */
#include "iceberg/partition_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "iceberg/value_text.h"

/* ---- schema lookups ---------------------------------------------------------------------- */

static const floe_field *find_id_in(const floe_field *f, int32_t id, bool coll, bool *in_coll,
                                    char *name, size_t n, size_t at) {
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *c = &f->children[i];
        size_t len = at;
        if (name && n) {
            int w = snprintf(name + at, at < n ? n - at : 0, "%s%s", at ? "." : "",
                             c->name ? c->name : "");
            len = at + (w > 0 ? (size_t)w : 0);
            if (len >= n)
                len = n - 1;
        }
        if (c->id == id) {
            *in_coll = coll;
            return c;
        }
        bool child_coll = coll || c->type == FLOE_TYPE_LIST || c->type == FLOE_TYPE_MAP;
        const floe_field *r = find_id_in(c, id, child_coll, in_coll, name, n, len);
        if (r)
            return r;
        if (name && n)
            name[at] = '\0';
    }
    return NULL;
}

const floe_field *floe_px_find_id(const floe_schema *s, int32_t id, bool *in_collection,
                                  char *name, size_t n) {
    bool coll = false;
    if (name && n)
        name[0] = '\0';
    const floe_field *f = find_id_in(&s->root, id, false, &coll, name, n, 0);
    if (f && in_collection)
        *in_collection = coll;
    return f;
}

/* names may themselves contain dots, so try every child whose name is a prefix */
static const floe_field *find_name_in(const floe_field *f, const char *p, size_t n, bool ci,
                                      int *matches) {
    const floe_field *found = NULL;
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *c = &f->children[i];
        if (!c->name)
            continue;
        size_t cl = strlen(c->name);
        if (cl > n || (ci ? strncasecmp(c->name, p, cl) : strncmp(c->name, p, cl)) != 0)
            continue;
        const floe_field *r = NULL;
        if (cl == n) {
            r = c;
            (*matches)++;
        } else if (p[cl] == '.' && c->type == FLOE_TYPE_STRUCT) {
            r = find_name_in(c, p + cl + 1, n - cl - 1, ci, matches);
        }
        if (r && !found)
            found = r;
    }
    return found;
}

const floe_field *floe_px_find_name(const floe_schema *s, const char *name, size_t n,
                                    bool *ambiguous) {
    int matches = 0;
    *ambiguous = false;
    const floe_field *f = find_name_in(&s->root, name, n, false, &matches);
    if (f)
        return f;
    matches = 0;
    f = find_name_in(&s->root, name, n, true, &matches);
    if (matches > 1) {
        *ambiguous = true;
        return NULL;
    }
    return f;
}

/* ---- lexer ------------------------------------------------------------------------------- */

void floe_px_init(floe_px_lexer *lx, const char *s) {
    memset(lx, 0, sizeof *lx);
    lx->s = s;
    lx->n = strlen(s);
    floe_px_next(lx);
}

static bool word_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' ||
           (unsigned char)c >= 0x80; /* UTF-8 names */
}

void floe_px_next(floe_px_lexer *lx) {
    const char *s = lx->s;
    while (lx->pos < lx->n && isspace((unsigned char)s[lx->pos]))
        lx->pos++;
    lx->quoted = false;
    lx->overflow = false;
    lx->text = s + lx->pos;
    lx->len = 0;
    if (lx->pos >= lx->n) {
        lx->tok = FLOE_PX_END;
        return;
    }
    char c = s[lx->pos];
    if (c == '(' || c == ')' || c == ',') {
        lx->tok = c == '(' ? FLOE_PX_LPAREN : c == ')' ? FLOE_PX_RPAREN : FLOE_PX_COMMA;
        lx->len = 1;
        lx->pos++;
        return;
    }
    if (c == '`' || c == '"') {
        /* quoted name; a doubled quote is a literal quote, which only shortens the
         * token in place, so the text is copied by the caller when it has one */
        size_t i = lx->pos + 1;
        while (i < lx->n) {
            if (s[i] == c) {
                if (i + 1 < lx->n && s[i + 1] == c) {
                    i += 2;
                    continue;
                }
                break;
            }
            i++;
        }
        if (i >= lx->n) {
            lx->tok = FLOE_PX_BAD;
            lx->len = lx->n - lx->pos;
            return;
        }
        lx->tok = FLOE_PX_IDENT;
        lx->quoted = true;
        lx->text = s + lx->pos + 1;
        lx->len = i - lx->pos - 1;
        lx->pos = i + 1;
        return;
    }
    if ((c == '-' || c == '+' || isdigit((unsigned char)c)) ) {
        size_t i = lx->pos + (c == '-' || c == '+');
        size_t d0 = i;
        int64_t v = 0;
        while (i < lx->n && isdigit((unsigned char)s[i])) {
            int dg = s[i] - '0';
            if (v > (INT64_MAX - dg) / 10)
                lx->overflow = true;
            else
                v = v * 10 + dg;
            i++;
        }
        if (i > d0 && (i >= lx->n || !word_char(s[i]) || s[i] == '.')) {
            if (i < lx->n && s[i] == '.') {
                lx->tok = FLOE_PX_BAD; /* "1.5" is not a count */
                lx->len = i + 1 - lx->pos;
                return;
            }
            lx->tok = FLOE_PX_INT;
            lx->ival = c == '-' ? -v : v;
            lx->len = i - lx->pos;
            lx->pos = i;
            return;
        }
        if (c == '-' || c == '+') {
            lx->tok = FLOE_PX_BAD;
            lx->len = 1;
            return;
        }
        /* a word starting with digits, e.g. "1col": fall through to words */
    }
    if (word_char(c)) {
        size_t i = lx->pos;
        while (i < lx->n && word_char(s[i]))
            i++;
        lx->tok = FLOE_PX_IDENT;
        lx->len = i - lx->pos;
        lx->pos = i;
        return;
    }
    lx->tok = FLOE_PX_BAD;
    lx->len = 1;
}

size_t floe_px_ident(const floe_px_lexer *lx, char *out, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < lx->len; i++) {
        if (k + 1 >= n)
            return (size_t)-1;
        out[k++] = lx->text[i];
        if (lx->quoted && i + 1 < lx->len && lx->text[i] == lx->text[i + 1] &&
            (lx->text[i] == '`' || lx->text[i] == '"'))
            i++; /* a doubled quote stands for one */
    }
    out[k] = '\0';
    return k;
}

bool floe_px_is_kw(const floe_px_lexer *lx, const char *kw) {
    size_t k = strlen(kw);
    return lx->tok == FLOE_PX_IDENT && !lx->quoted && lx->len == k &&
           strncasecmp(lx->text, kw, k) == 0;
}

/* ---- terms ------------------------------------------------------------------------------- */

static bool fn_kind(const char *p, size_t n, floe_transform_kind *k) {
    static const struct {
        const char *name;
        floe_transform_kind kind;
    } fns[] = {{"identity", FLOE_XF_IDENTITY}, {"bucket", FLOE_XF_BUCKET},
               {"truncate", FLOE_XF_TRUNCATE}, {"year", FLOE_XF_YEAR},
               {"years", FLOE_XF_YEAR},        {"month", FLOE_XF_MONTH},
               {"months", FLOE_XF_MONTH},      {"day", FLOE_XF_DAY},
               {"days", FLOE_XF_DAY},          {"hour", FLOE_XF_HOUR},
               {"hours", FLOE_XF_HOUR},        {"void", FLOE_XF_VOID}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strlen(fns[i].name) == n && strncasecmp(fns[i].name, p, n) == 0) {
            *k = fns[i].kind;
            return true;
        }
    return false;
}

static int term_error(floe_px_lexer *lx, size_t start, floe_error *err, const char *why) {
    size_t end = lx->pos < lx->n ? lx->pos : lx->n;
    if (end <= start)
        end = start + (start < lx->n);
    return floe_error_at(err, FLOE_EINVALID, (int64_t)start, "\"%.*s\" at offset %zu: %s",
                         (int)(end - start), lx->s + start, start, why);
}

int floe_px_parse_term(floe_px_lexer *lx, floe_px_term *t, floe_error *err) {
    memset(t, 0, sizeof *t);
    t->src = lx->s;
    t->start = (size_t)(lx->text - lx->s) - (lx->quoted ? 1 : 0);
    if (lx->tok != FLOE_PX_IDENT)
        return term_error(lx, t->start, err,
                          lx->tok == FLOE_PX_END ? "expected a column or transform"
                                                 : "expected a column or transform here");
    const char *w = lx->text;
    size_t wl = lx->len;
    bool quoted = lx->quoted;
    size_t cl = floe_px_ident(lx, t->col, sizeof t->col);
    floe_px_next(lx);
    if (lx->tok != FLOE_PX_LPAREN) {
        t->transform.kind = FLOE_XF_IDENTITY;
        t->end = (size_t)(w - lx->s) + wl + (quoted ? 1 : 0);
        if (cl == (size_t)-1)
            return term_error(lx, t->start, err, "column name too long");
        t->col_len = cl;
        return 0;
    }
    snprintf(t->fn, sizeof t->fn, "%.*s", (int)(wl < 31 ? wl : 31), w);
    t->has_fn = true;
    floe_transform_kind k;
    if (quoted || !fn_kind(w, wl, &k))
        return term_error(lx, t->start, err, "unknown transform");
    t->transform.kind = k;
    floe_px_next(lx);
    bool have_int = false, have_col = false;
    int64_t num = 0;
    for (int arg = 0; arg < 2; arg++) {
        if (lx->tok == FLOE_PX_INT && !have_int) {
            if (lx->overflow)
                return term_error(lx, t->start, err, "number out of range");
            num = lx->ival;
            have_int = true;
        } else if (lx->tok == FLOE_PX_IDENT && !have_col) {
            t->col_len = floe_px_ident(lx, t->col, sizeof t->col);
            if (t->col_len == (size_t)-1)
                return term_error(lx, t->start, err, "column name too long");
            have_col = true;
        } else {
            return term_error(lx, t->start, err,
                              "expected a column name or a number as argument");
        }
        floe_px_next(lx);
        if (lx->tok == FLOE_PX_RPAREN)
            break;
        if (lx->tok != FLOE_PX_COMMA || arg == 1)
            return term_error(lx, t->start, err, "expected ')'");
        floe_px_next(lx);
    }
    if (lx->tok != FLOE_PX_RPAREN)
        return term_error(lx, t->start, err, "expected ')'");
    t->end = lx->pos;
    floe_px_next(lx);
    if (!have_col)
        return term_error(lx, t->start, err, "missing the column argument");
    bool param = k == FLOE_XF_BUCKET || k == FLOE_XF_TRUNCATE;
    if (param && !have_int)
        return term_error(lx, t->start, err,
                          k == FLOE_XF_BUCKET ? "bucket needs a number of buckets: bucket(N, col)"
                                              : "truncate needs a width: truncate(W, col)");
    if (!param && have_int)
        return term_error(lx, t->start, err, "this transform takes only a column");
    if (param && (num <= 0 || num > INT32_MAX))
        return floe_error_at(err, FLOE_EINVALID, (int64_t)t->start,
                             "\"%.*s\": %s must be between 1 and %d, not %" PRId64,
                             (int)(t->end - t->start), lx->s + t->start,
                             k == FLOE_XF_BUCKET ? "the number of buckets" : "the width",
                             INT32_MAX, num);
    t->transform.param = param ? (int32_t)num : 0;
    return 0;
}

int floe_px_resolve(const floe_schema *s, const floe_px_term *t, const char *what,
                    const floe_field **out, floe_error *err) {
    bool ambiguous;
    const floe_field *f = floe_px_find_name(s, t->col, t->col_len, &ambiguous);
    if (!f)
        return floe_error_set(err, ambiguous ? FLOE_EINVALID : FLOE_ENOTFOUND,
                              "%s \"%.*s\": %s column \"%.*s\"", what,
                              (int)(t->end - t->start), t->src + t->start,
                              ambiguous ? "ambiguous" : "unknown", (int)t->col_len, t->col);
    bool coll = false;
    floe_px_find_id(s, f->id, &coll, NULL, 0);
    if (coll || f->type >= FLOE_TYPE_STRUCT)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: column \"%.*s\" %s", what, (int)t->col_len, t->col,
                              coll ? "is inside a list or map" : "is not a primitive type");
    if (f->geo) /* format/spec.md "Partition Transforms": no source of these types */
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: column \"%.*s\" is a %s column, which no partition "
                              "transform takes", what, (int)t->col_len, t->col,
                              f->geo == FLOE_GEO_GEOGRAPHY ? "geography" : "geometry");
    if (!floe_transform_accepts(t->transform, f->type)) {
        char name[32];
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: transform %s does not accept column \"%.*s\" of type %s",
                              what, floe_transform_name(t->transform, name, sizeof name),
                              (int)t->col_len, t->col, floe_xf_type_name(f->type));
    }
    *out = f;
    return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

static bool plain_word(const char *s) {
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return false;
    return true;
}

int floe_px_put_name(floe_buf *b, const char *s) {
    if (plain_word(s))
        return floe_buf_append(b, s, strlen(s));
    int rc = floe_buf_append_byte(b, '`');
    for (; rc == 0 && *s; s++)
        rc = *s == '`' ? floe_buf_append(b, "``", 2) : floe_buf_append_byte(b, (uint8_t)*s);
    return rc < 0 ? rc : floe_buf_append_byte(b, '`');
}
