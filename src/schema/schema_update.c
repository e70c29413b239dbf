/*
 * schema_update.c - one schema evolution change: add, rename, drop, widen, make optional,
 * move a field, or set the identifier fields.
 *
 * Spec: format/spec.md "Schema Evolution" (fields of any struct, nested ones too, are
 * added with new ids, deleted, renamed, reordered or promoted: int->long, float->double,
 * decimal(P,S)->decimal(P',S) with P' > P in v1 and v2), "Default values" (a required
 * field is added only with an initial-default), "Identifier Field IDs" (required
 * primitive fields, not float or double, not inside a list or a map nor an optional
 * struct).
 *
 * The change is made on a clone of the base schema; arrays of children are replaced by
 * new ones from the clone's arena (never resized in place), and floe_schema_finish()
 * derives parents, levels and leaves again at the end, which also checks duplicate names
 * and ids. Field ids are never reused: new ones come from the table's last-column-id.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/filter.h"
#include "floe/schema.h"
#include "schema_internal.h"

#define TYPE_TEXT_MAX_DEPTH 32

/* ---- type text: primitives, struct<a: T, ...>, list<T>, map<K, V> ------------------- */

typedef struct type_parser {
    const char *text; /* the whole text, for messages */
    const char *p;
    floe_arena *arena;
    floe_error *err;
} type_parser;

static void tp_spaces(type_parser *tp) {
    while (*tp->p == ' ' || *tp->p == '\t')
        tp->p++;
}

static int tp_fail(type_parser *tp, const char *what) {
    return floe_error_set(tp->err, FLOE_ESCHEMA, "type \"%s\": %s at byte %zu", tp->text, what,
                          (size_t)(tp->p - tp->text));
}

static bool tp_eat(type_parser *tp, char c) {
    tp_spaces(tp);
    if (*tp->p != c)
        return false;
    tp->p++;
    return true;
}

static int tp_type(type_parser *tp, floe_field *f, int depth);

/* A primitive name runs to the next ',' or '>' outside parentheses and brackets. */
static int tp_primitive(type_parser *tp, floe_field *f) {
    const char *start = tp->p;
    int nest = 0;
    while (*tp->p && (nest > 0 || (*tp->p != ',' && *tp->p != '>'))) {
        if (*tp->p == '(' || *tp->p == '[')
            nest++;
        else if (*tp->p == ')' || *tp->p == ']')
            nest--;
        tp->p++;
    }
    size_t n = (size_t)(tp->p - start);
    while (n && (start[n - 1] == ' ' || start[n - 1] == '\t'))
        n--;
    if (!n)
        return tp_fail(tp, "a type is missing");
    /* geometry(C) / geography(C, A): the keyword in any case, the CRS as given (the
     * metadata keeps it byte for byte), of any length */
    bool geo = (n >= 8 && !strncasecmp(start, "geometry", 8)) ||
               (n >= 9 && !strncasecmp(start, "geography", 9));
    char small[64], *name = small;
    if (!geo && n >= sizeof small)
        return tp_fail(tp, "unknown type");
    if (geo && !(name = floe_arena_alloc(tp->arena, n + 1)))
        return floe_error_set(tp->err, FLOE_ENOMEM, "out of memory");
    size_t keyword = geo ? (tolower((unsigned char)start[3]) == 'm' ? 8 : 9) : n;
    for (size_t i = 0; i < n; i++)
        name[i] = i < keyword ? (char)tolower((unsigned char)start[i]) : start[i];
    name[n] = 0;
    if (!strcmp(name, "integer"))
        strcpy(name, "int");
    else if (!strcmp(name, "bigint"))
        strcpy(name, "long");
    int rc = floe_schema_primitive_type(name, f, tp->arena, tp->err);
    if (rc < 0 && (start != tp->text || *tp->p)) /* inside a nested type: say which */
        floe_error_prefix(tp->err, "type \"%s\" at byte %zu: ", tp->text,
                          (size_t)(start - tp->text));
    return rc;
}

static int tp_struct(type_parser *tp, floe_field *f, int depth) {
    /* the array grows by copying into a larger arena block */
    size_t n = 0, cap = 8;
    floe_field *fields = floe_arena_alloc(tp->arena, cap * sizeof *fields);
    if (!fields)
        return floe_error_set(tp->err, FLOE_ENOMEM, "out of memory");
    if (tp_eat(tp, '>'))
        return tp_fail(tp, "a struct needs at least one field");
    do {
        tp_spaces(tp);
        const char *name = tp->p;
        while (*tp->p && *tp->p != ':' && *tp->p != ',' && *tp->p != '>' && *tp->p != ' ')
            tp->p++;
        size_t len = (size_t)(tp->p - name);
        if (!len || !tp_eat(tp, ':'))
            return tp_fail(tp, "want NAME: TYPE");
        if (memchr(name, '.', len))
            return tp_fail(tp, "a field name cannot hold '.'");
        if (n == cap) {
            floe_field *nf = floe_arena_alloc(tp->arena, 2 * cap * sizeof *nf);
            if (!nf)
                return floe_error_set(tp->err, FLOE_ENOMEM, "out of memory");
            memcpy(nf, fields, n * sizeof *nf);
            fields = nf;
            cap *= 2;
        }
        floe_field *c = &fields[n++];
        memset(c, 0, sizeof *c);
        char *cn = floe_arena_alloc(tp->arena, len + 1);
        if (!cn)
            return floe_error_set(tp->err, FLOE_ENOMEM, "out of memory");
        memcpy(cn, name, len);
        cn[len] = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (!strcmp(fields[i].name, cn))
                return tp_fail(tp, "duplicate field name");
        c->name = cn;
        tp_spaces(tp);
        FLOE_FORWARD_IF_ERROR(tp_type(tp, c, depth + 1));
    } while (tp_eat(tp, ','));
    if (!tp_eat(tp, '>'))
        return tp_fail(tp, "want ',' or '>'");
    f->type = FLOE_TYPE_STRUCT;
    f->children = fields;
    f->nchildren = n;
    return 0;
}

static int tp_type(type_parser *tp, floe_field *f, int depth) {
    if (depth > TYPE_TEXT_MAX_DEPTH)
        return tp_fail(tp, "nested too deep");
    tp_spaces(tp);
    f->required = false;
    if (!strncmp(tp->p, "struct<", 7)) {
        tp->p += 7;
        return tp_struct(tp, f, depth);
    }
    bool is_list = !strncmp(tp->p, "list<", 5), is_map = !strncmp(tp->p, "map<", 4);
    if (!is_list && !is_map)
        return tp_primitive(tp, f);
    tp->p += is_list ? 5 : 4;
    size_t n = is_list ? 1 : 2;
    floe_field *kids = floe_arena_alloc(tp->arena, n * sizeof *kids);
    if (!kids)
        return floe_error_set(tp->err, FLOE_ENOMEM, "out of memory");
    memset(kids, 0, n * sizeof *kids);
    if (is_list) {
        kids[0].name = "element";
        FLOE_FORWARD_IF_ERROR(tp_type(tp, &kids[0], depth + 1));
    } else {
        kids[0].name = "key";
        kids[1].name = "value";
        FLOE_FORWARD_IF_ERROR(tp_type(tp, &kids[0], depth + 1));
        if (floe_type_is_nested(kids[0].type))
            return tp_fail(tp, "a map key must be a primitive type");
        kids[0].required = true;
        if (!tp_eat(tp, ','))
            return tp_fail(tp, "want map<KEY, VALUE>");
        FLOE_FORWARD_IF_ERROR(tp_type(tp, &kids[1], depth + 1));
    }
    if (!tp_eat(tp, '>'))
        return tp_fail(tp, "want '>'");
    f->type = is_list ? FLOE_TYPE_LIST : FLOE_TYPE_MAP;
    f->children = kids;
    f->nchildren = n;
    return 0;
}

static int parse_type_text(const char *text, floe_arena *arena, floe_field *f, floe_error *err) {
    type_parser tp = {.text = text, .p = text, .arena = arena, .err = err};
    FLOE_FORWARD_IF_ERROR(tp_type(&tp, f, 0));
    tp_spaces(&tp);
    if (*tp.p)
        return tp_fail(&tp, "unexpected text");
    return 0;
}

int floe_schema_type_check(const char *text, floe_error *err) {
    floe_arena arena;
    floe_field f;
    memset(&f, 0, sizeof f);
    floe_arena_init(&arena, 1024);
    int rc = parse_type_text(text ? text : "", &arena, &f, err);
    floe_arena_reset(&arena);
    return rc;
}

/* New ids for the fields below f: a struct's fields first, then each one's children
 * (so a struct's fields get consecutive ids), a list's element, a map's key and value. */
static int assign_ids(floe_field *f, int32_t *last, floe_error *err) {
    for (size_t i = 0; i < f->nchildren; i++) {
        if (*last == INT32_MAX)
            return floe_error_set(err, FLOE_ELIMIT, "field ids exhausted");
        f->children[i].id = ++*last;
    }
    for (size_t i = 0; i < f->nchildren; i++)
        FLOE_FORWARD_IF_ERROR(assign_ids(&f->children[i], last, err));
    return 0;
}

/* ---- promotion ---------------------------------------------------------------------- */

bool floe_schema_type_promotable(const floe_field *from, const floe_field *to) {
    if (floe_type_is_nested(from->type) || floe_type_is_nested(to->type))
        return false;
    /* unknown -> any type (v3, the only format unknown exists in): its files hold no
     * column for it, so every row written before reads null either way */
    if (from->type == FLOE_TYPE_UNKNOWN)
        return true;
    if (from->type == to->type) {
        /* binary, geometry and geography are three types; geometry(C) and geometry(C2)
         * two unless C and C2 name one CRS (floe_field_geo_same) */
        if (!floe_field_geo_same(from, to))
            return false;
        if (from->type == FLOE_TYPE_DECIMAL)
            return from->scale == to->scale && to->precision >= from->precision;
        if (from->type == FLOE_TYPE_FIXED)
            return from->length == to->length;
        return true;
    }
    /* date -> timestamp(_ns) is a v3 promotion: the table's format decides (check_widen) */
    return (from->type == FLOE_TYPE_INT && to->type == FLOE_TYPE_LONG) ||
           (from->type == FLOE_TYPE_FLOAT && to->type == FLOE_TYPE_DOUBLE) ||
           (from->type == FLOE_TYPE_DATE &&
            (to->type == FLOE_TYPE_TIMESTAMP || to->type == FLOE_TYPE_TIMESTAMP_NS));
}

/* ---- the change --------------------------------------------------------------------- */

/* The field names[0..n) name from the top level down. As in add-column, a list's element
 * and a map's value may be left out of the path where they hold a struct: "items.sku" is
 * "items.element.sku", "attrs.n" is "attrs.value.n". NULL when there is none. */
static floe_field *walk_path(floe_schema *s, const char *const *names, size_t n) {
    floe_field *f = &s->root;
    for (size_t k = 0; f && k < n; k++) {
        const char *p = names[k];
        bool positional = (f->type == FLOE_TYPE_LIST && !strcmp(p, "element")) ||
                          (f->type == FLOE_TYPE_MAP && (!strcmp(p, "key") || !strcmp(p, "value")));
        if (!positional && f->type == FLOE_TYPE_LIST && f->nchildren == 1)
            f = &f->children[0];
        else if (!positional && f->type == FLOE_TYPE_MAP && f->nchildren == 2)
            f = &f->children[1];
        floe_field *next = NULL;
        for (size_t i = 0; i < f->nchildren && !next; i++)
            if (!strcmp(f->children[i].name, p))
                next = &f->children[i];
        f = next;
    }
    return f == &s->root ? NULL : f; /* s is this file's own clone */
}

/* The field a path names: names joined by dots as the --where language writes a column
 * (src/common/filter.h; `a.b` or "a.b" is one name holding a dot), then walk_path. NULL
 * with FLOE_ENOTFOUND naming it, or the path's syntax error (FLOE_EINVALID), in err. */
static floe_field *find_path(floe_schema *s, const char *path, floe_error *err) {
    floe_arena arena;
    floe_arena_init(&arena, 256);
    const char *const *names;
    size_t n;
    floe_field *f = NULL;
    if (floe_filter_parse_path(path, &arena, &names, &n, err) == 0 &&
        !(f = walk_path(s, names, n)))
        floe_error_set(err, FLOE_ENOTFOUND, "no column %s in the schema", path);
    floe_arena_reset(&arena);
    return f;
}

static bool is_identifier(const floe_schema *s, int32_t id) {
    for (size_t i = 0; i < s->n_identifier; i++)
        if (s->identifier_field_ids[i] == id)
            return true;
    return false;
}

/* An identifier field at or below f, or NULL. */
static const floe_field *identifier_within(const floe_schema *s, const floe_field *f) {
    if (is_identifier(s, f->id))
        return f;
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *r = identifier_within(s, &f->children[i]);
        if (r)
            return r;
    }
    return NULL;
}

/* The fields of a list or map are named by position, not by name. */
static bool in_list_or_map(const floe_field *f) {
    return f->parent && (f->parent->type == FLOE_TYPE_LIST || f->parent->type == FLOE_TYPE_MAP);
}

static floe_field *siblings(floe_schema *s, floe_field *f) {
    return f->parent ? f->parent : &s->root;
}

/* Column names are JSON text in the metadata: FLOE_EINVALID unless name is UTF-8. */
static int check_utf8(const char *verb, const char *what, const char *name, floe_error *err) {
    size_t n = strlen(name), bad = floe_utf8_invalid_at((const uint8_t *)name, n);
    if (bad == n)
        return 0;
    return floe_error_set(err, FLOE_EINVALID, "%s: %s is not valid UTF-8 (byte %zu is 0x%02x)",
                          verb, what, bad, (unsigned char)name[bad]);
}

static int add_column(floe_schema *s, const floe_schema_change *c, int32_t *last,
                      floe_error *err) {
    char parent_path[512];
    const char *const *names;
    size_t n;
    floe_field *parent = &s->root;
    FLOE_FORWARD_IF_ERROR(check_utf8("add-column", "the column name", c->path, err));
    /* the path's names live in the schema's arena: the last one is the new field's */
    if (floe_filter_parse_path(c->path, &s->arena, &names, &n, err) < 0) {
        floe_error_prefix(err, "add-column: ");
        return err->code;
    }
    const char *name = names[n - 1];
    if (c->doc)
        FLOE_FORWARD_IF_ERROR(check_utf8("add-column", "the doc", c->doc, err));
    if (n > 1) {
        size_t len = 0;
        for (size_t k = 0; k + 1 < n; k++) { /* the parent's names, for messages */
            int w = snprintf(parent_path + len, sizeof parent_path - len, "%s%s", k ? "." : "",
                             names[k]);
            if (w < 0 || (size_t)w >= sizeof parent_path - len)
                return floe_error_set(err, FLOE_ELIMIT, "add-column: path too long");
            len += (size_t)w;
        }
        if (!(parent = walk_path(s, names, n - 1)))
            return floe_error_set(err, FLOE_ENOTFOUND, "no column %s in the schema",
                                  parent_path);
        /* a list's element and a map's value stand for themselves */
        if (parent->type == FLOE_TYPE_LIST)
            parent = &parent->children[0];
        else if (parent->type == FLOE_TYPE_MAP)
            parent = &parent->children[1];
        if (parent->type != FLOE_TYPE_STRUCT)
            return floe_error_set(err, FLOE_EINVALID,
                                  "add-column: %s: %s is a %s, not a struct: columns are added "
                                  "to structs", c->path, parent_path,
                                  floe_type_name(parent->type));
    }
    if (c->required)
        return floe_error_set(err, FLOE_EINVALID,
                              "add-column: %s: a required column needs an initial default for "
                              "the rows already written (format v3 defaults, which floe does "
                              "not write); add it optional", c->path);
    for (size_t i = 0; i < parent->nchildren; i++)
        if (!strcmp(parent->children[i].name, name))
            return floe_error_set(err, FLOE_EINVALID, "add-column: %s already exists", c->path);
    floe_field nf;
    memset(&nf, 0, sizeof nf);
    if (!(nf.name = floe_arena_strdup(&s->arena, name)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (c->doc && !(nf.doc = floe_arena_strdup(&s->arena, c->doc)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (!c->type || !*c->type)
        return floe_error_set(err, FLOE_EINVALID, "add-column: %s: which type?", c->path);
    FLOE_FORWARD_IF_ERROR(parse_type_text(c->type, &s->arena, &nf, err));
    nf.required = false;
    if (*last == INT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "field ids exhausted");
    nf.id = ++*last;
    FLOE_FORWARD_IF_ERROR(assign_ids(&nf, last, err));
    floe_field *kids = floe_arena_alloc(&s->arena, (parent->nchildren + 1) * sizeof *kids);
    if (!kids)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (parent->nchildren)
        memcpy(kids, parent->children, parent->nchildren * sizeof *kids);
    kids[parent->nchildren] = nf;
    parent->children = kids;
    parent->nchildren++;
    return 0;
}

static int rename_column(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    floe_field *f = find_path(s, c->path, err);
    if (!f)
        return err->code;
    const char *nn = c->new_name;
    if (!nn || !*nn || strchr(nn, '.'))
        return floe_error_set(err, FLOE_EINVALID,
                              "rename-column: %s: the new name is one name, without '.'",
                              c->path);
    FLOE_FORWARD_IF_ERROR(check_utf8("rename-column", "the new name", nn, err));
    if (in_list_or_map(f))
        return floe_error_set(err, FLOE_EINVALID,
                              "rename-column: %s is a list element or map key/value, named by "
                              "position", c->path);
    if (!strcmp(f->name, nn))
        return 0;
    floe_field *p = siblings(s, f);
    for (size_t i = 0; i < p->nchildren; i++)
        if (!strcmp(p->children[i].name, nn))
            return floe_error_set(err, FLOE_EINVALID, "rename-column: %s: a column %s is already "
                                  "beside it", c->path, nn);
    if (!(f->name = floe_arena_strdup(&s->arena, nn)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static int drop_column(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    char buf[512];
    floe_field *f = find_path(s, c->path, err);
    if (!f)
        return err->code;
    if (in_list_or_map(f))
        return floe_error_set(err, FLOE_EINVALID, "drop-column: %s is a list element or map "
                              "key/value: drop the list or map", c->path);
    const floe_field *idf = identifier_within(s, f);
    if (idf)
        return floe_error_set(err, FLOE_EINVALID,
                              "drop-column: %s %s%s: change the identifier fields first "
                              "(set-identifier-fields)", c->path,
                              idf == f ? "is an identifier field" : "holds identifier field ",
                              idf == f ? "" : floe_field_path(idf, buf, sizeof buf));
    floe_field *p = siblings(s, f);
    if (p == &s->root && p->nchildren == 1)
        return floe_error_set(err, FLOE_EINVALID, "drop-column: %s is the table's only column",
                              c->path);
    /* an empty struct is written as a Parquet group without fields, which engines refuse
     * (DuckDB: "Not implemented: STRUCT()"; parquet-mr will not write one) */
    if (p->nchildren == 1)
        return floe_error_set(err, FLOE_EINVALID, "drop-column: %s is the only field of "
                              "struct %s, and a struct needs at least one: drop the struct "
                              "(or its list or map) instead", c->path,
                              floe_field_path(p, buf, sizeof buf));
    size_t at = (size_t)(f - p->children);
    floe_field *kids = floe_arena_alloc(&s->arena, (p->nchildren ? p->nchildren : 1) * sizeof *kids);
    if (!kids)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    memcpy(kids, p->children, at * sizeof *kids);
    memcpy(kids + at, p->children + at + 1, (p->nchildren - at - 1) * sizeof *kids);
    p->children = kids;
    p->nchildren--;
    return 0;
}

static int widen_column(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    char from[64], to[64];
    floe_field *f = find_path(s, c->path, err);
    if (!f)
        return err->code;
    floe_field nt;
    memset(&nt, 0, sizeof nt);
    if (!c->type || !*c->type)
        return floe_error_set(err, FLOE_EINVALID, "widen: %s: to which type?", c->path);
    FLOE_FORWARD_IF_ERROR(parse_type_text(c->type, &s->arena, &nt, err));
    floe_field_type_str(f, from, sizeof from);
    floe_field_type_str(&nt, to, sizeof to);
    if (floe_type_is_nested(f->type) || floe_type_is_nested(nt.type))
        return floe_error_set(err, FLOE_EINVALID, "widen: %s: %s to %s: only primitive types "
                              "are promoted", c->path, from, to);
    if (!floe_schema_type_promotable(f, &nt))
        return floe_error_set(err, FLOE_EINVALID,
                              "widen: %s: %s to %s is not a promotion the spec allows (int to "
                              "long, float to double, decimal(P, S) to decimal(P2, S) with P2 > "
                              "P; on format v3 date to timestamp or timestamp_ns, and unknown "
                              "to any primitive type); narrowing or changing a type would "
                              "misread the files written before",
                              c->path, from, to);
    if (f->geo) /* the same geometry / geography type: its text stays as it was */
        return 0;
    f->type = nt.type;
    f->precision = nt.precision;
    f->scale = nt.scale;
    f->length = nt.length;
    f->geo = nt.geo;
    f->geo_type = nt.geo_type;
    f->geo_crs = nt.geo_crs;
    f->geo_algo = nt.geo_algo;
    return 0;
}

static int make_optional(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    char buf[512];
    floe_field *f = find_path(s, c->path, err);
    if (!f)
        return err->code;
    if (f->parent && f->parent->type == FLOE_TYPE_MAP && f == &f->parent->children[0])
        return floe_error_set(err, FLOE_EINVALID, "make-optional: %s: map keys are always "
                              "required", c->path);
    const floe_field *idf = identifier_within(s, f);
    if (idf)
        return floe_error_set(err, FLOE_EINVALID,
                              "make-optional: %s %s%s, which must be required: change the "
                              "identifier fields first", c->path,
                              idf == f ? "is an identifier field" : "holds identifier field ",
                              idf == f ? "" : floe_field_path(idf, buf, sizeof buf));
    f->required = false;
    return 0;
}

static int move_column(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    floe_field *f = find_path(s, c->path, err);
    if (!f)
        return err->code;
    if (in_list_or_map(f))
        return floe_error_set(err, FLOE_EINVALID, "move-column: %s is a list element or map "
                              "key/value, which do not move", c->path);
    floe_field *p = siblings(s, f);
    size_t from = (size_t)(f - p->children), to = 0;
    if (c->move != FLOE_SCHEMA_MOVE_FIRST) {
        const floe_field *a = NULL;
        floe_error ignored;
        floe_error_clear(&ignored);
        if (c->anchor) { /* one name: a sibling's; else a path from the top level */
            floe_arena arena;
            floe_arena_init(&arena, 256);
            const char *const *names;
            size_t n;
            if (floe_filter_parse_path(c->anchor, &arena, &names, &n, &ignored) == 0 && n == 1)
                for (size_t i = 0; i < p->nchildren && !a; i++)
                    if (!strcmp(p->children[i].name, names[0]))
                        a = &p->children[i];
            floe_arena_reset(&arena);
        }
        if (!a && c->anchor)
            a = find_path(s, c->anchor, &ignored);
        if (!a)
            return floe_error_set(err, FLOE_ENOTFOUND, "move-column: %s: no column %s beside it",
                                  c->path, c->anchor ? c->anchor : "(none)");
        if (a->parent != f->parent)
            return floe_error_set(err, FLOE_EINVALID, "move-column: %s and %s are in different "
                                  "structs: a column moves among its siblings only", c->path,
                                  c->anchor);
        if (a == f)
            return floe_error_set(err, FLOE_EINVALID, "move-column: %s relative to itself",
                                  c->path);
        size_t ai = (size_t)(a - p->children);
        to = c->move == FLOE_SCHEMA_MOVE_BEFORE ? ai : ai + 1;
        if (to > from)
            to--; /* the index among the others once f is taken out */
    }
    floe_field moved = p->children[from];
    floe_field *kids = floe_arena_alloc(&s->arena, p->nchildren * sizeof *kids);
    if (!kids)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < p->nchildren; i++) {
        if (k == to)
            kids[k++] = moved;
        if (i != from)
            kids[k++] = p->children[i];
    }
    if (k == to)
        kids[k++] = moved;
    p->children = kids;
    return 0;
}

const char *floe_schema_identifier_refusal(const floe_field *f) {
    if (floe_type_is_nested(f->type))
        return "it is not a primitive field";
    if (f->type == FLOE_TYPE_FLOAT || f->type == FLOE_TYPE_DOUBLE)
        return "floats and doubles cannot be identifier fields";
    if (!f->required)
        return "it is optional (identifier fields must be required)";
    for (const floe_field *a = f->parent; a; a = a->parent) {
        if (a->type == FLOE_TYPE_LIST || a->type == FLOE_TYPE_MAP)
            return "it is inside a list or a map";
        if (!a->required)
            return "it is inside an optional struct";
    }
    return NULL;
}

static int set_identifier(floe_schema *s, const floe_schema_change *c, floe_error *err) {
    int32_t *ids = c->npaths ? floe_arena_alloc(&s->arena, c->npaths * sizeof *ids) : NULL;
    size_t n = 0;
    if (c->npaths && !ids)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->npaths; i++) {
        const char *path = c->paths[i];
        const floe_field *f = find_path(s, path, err);
        if (!f)
            return err->code;
        const char *why = floe_schema_identifier_refusal(f);
        if (why)
            return floe_error_set(err, FLOE_EINVALID, "set-identifier-fields: %s: %s", path,
                                  why);
        bool dup = false;
        for (size_t k = 0; k < n; k++)
            dup |= ids[k] == f->id;
        if (!dup)
            ids[n++] = f->id;
    }
    s->identifier_field_ids = ids;
    s->n_identifier = n;
    return 0;
}

int floe_schema_path_check(const char *path, floe_error *err) {
    floe_arena arena;
    floe_arena_init(&arena, 256);
    const char *const *names;
    size_t n;
    int rc = floe_filter_parse_path(path, &arena, &names, &n, err);
    floe_arena_reset(&arena);
    return rc;
}

int floe_schema_update(const floe_schema *base, const floe_schema_change *c,
                       int32_t *last_column_id, floe_schema **out, floe_error *err) {
    floe_schema *s = NULL;
    int rc = 0;
    int32_t last = *last_column_id;
    if (base->highest_field_id > last)
        last = base->highest_field_id;
    if (c->kind != FLOE_SCHEMA_SET_IDENTIFIER && (!c->path || !*c->path))
        return floe_error_set(err, FLOE_EINVALID, "schema change: which column?");
    FLOE_CHECK(floe_schema_clone(base, &s, err));
    switch (c->kind) {
    case FLOE_SCHEMA_ADD_COLUMN: FLOE_CHECK(add_column(s, c, &last, err)); break;
    case FLOE_SCHEMA_RENAME_COLUMN: FLOE_CHECK(rename_column(s, c, err)); break;
    case FLOE_SCHEMA_DROP_COLUMN: FLOE_CHECK(drop_column(s, c, err)); break;
    case FLOE_SCHEMA_WIDEN_COLUMN: FLOE_CHECK(widen_column(s, c, err)); break;
    case FLOE_SCHEMA_MAKE_OPTIONAL: FLOE_CHECK(make_optional(s, c, err)); break;
    case FLOE_SCHEMA_MOVE_COLUMN: FLOE_CHECK(move_column(s, c, err)); break;
    case FLOE_SCHEMA_SET_IDENTIFIER: FLOE_CHECK(set_identifier(s, c, err)); break;
    default: FLOE_FAIL(err, FLOE_EINVALID, "unknown schema change %d", (int)c->kind);
    }
    FLOE_CHECK(floe_schema_finish(s, err));
    *last_column_id = last;
    *out = s;
    s = NULL;
done:
    floe_schema_free(s);
    return rc;
}
