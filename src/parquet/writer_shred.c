/*
 * writer_shred.c - writing variant columns shredded (apache/parquet-format
 * VariantShredding.md): the writer's option variant_shredding names object paths inside
 * variant columns and the type each is stored as; the writer then writes those variants
 * as the group
 *
 *     group NAME (VARIANT(1)) {
 *       required binary metadata;
 *       optional binary value;
 *       optional group typed_value {          # or a primitive typed_value
 *         required group KEY { optional binary value; optional T typed_value; }  # a path's end
 *         required group KEY2 { optional binary value; optional group typed_value {...} }
 *       }
 *     }
 *
 * and every batch's unshredded parts (metadata, value: what the shredder and the rewrite
 * produce) are split into those columns row by row ("Objects", "Primitive Types"):
 *   - a value of the shredded type goes to typed_value (integers of any width to an int64
 *     typed_value, of at most 32 bits to an int32 one; short and long strings to a
 *     string), anything else to value, typed_value null;
 *   - an object, where typed_value is a group, sets typed_value; each shredded field goes
 *     to its own group (both parts null when the object lacks it, a JSON null is a variant
 *     null in value); the fields left over are kept in value as an object with the same
 *     field ids (null when none are left);
 *   - a variant null, an array or any other non-object stays whole in value.
 * The metadata column is the batch's own, unchanged: every key of the value, shredded or
 * not, stays in the row's dictionary.
 *
 * The writer's schema is the physical one (pqw_shred_schema); the other leaves' column
 * buffers are borrowed from the caller's batch as they are. The file info reports each
 * column against the caller's schema: a column copied through carries its own leaf; the
 * shredded parts have no Iceberg field (field id -1, field NULL); a primitive
 * typed_value also reports its variant, path and whether its value leaf is all null
 * (pqw_shred_typed_leaf), from which the manifest builds the variant's bounds.
 *
 * variant_shredding "auto" builds the same tree from the rows of a sample instead of
 * from text (auto_choose, at the end of this file; the rule is there and in DESIGN.md).
 *
 * Invariants: S1 every physical column receives exactly one slot per slot of its
 * variant's metadata column; S2 a field's value and typed_value are never both set, and
 * the fields in typed_value never appear in value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "parquet/writer_internal.h"

#define SHRED_MAX_ENTRIES 256
#define SHRED_MAX_DEPTH 32
#define AUTO_MAX_DEPTH 4      /* auto: keys from a variant's top to a shredded value */
#define AUTO_MAX_PATHS 32     /* auto: shredded values per variant column */
#define AUTO_MAX_TRACKED 1024 /* auto: distinct paths counted per variant column */

/* ---------------------------------------------------------------------------------------
 * The option's text
 * ------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    floe_type_id type;
} shred_types[] = {
    {"boolean", FLOE_TYPE_BOOLEAN}, {"int", FLOE_TYPE_INT},       {"long", FLOE_TYPE_LONG},
    {"double", FLOE_TYPE_DOUBLE},   {"string", FLOE_TYPE_STRING},
};

/* One entry: path components (pointers into text, not terminated) and a type. */
typedef struct shred_entry {
    const char *text;            /* the whole entry, for messages */
    size_t text_len;
    const char *comp[SHRED_MAX_DEPTH + 8];
    size_t comp_len[SHRED_MAX_DEPTH + 8];
    size_t ncomp;
    floe_type_id type;
} shred_entry;

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* *p[0..*n) without the blanks around it. */
static void trim(const char **p, size_t *n) {
    while (*n && is_space(**p))
        (*p)++, (*n)--;
    while (*n && is_space((*p)[*n - 1]))
        (*n)--;
}

static int parse_entry(const char *p, size_t n, shred_entry *e, floe_error *err) {
    trim(&p, &n);
    memset(e, 0, sizeof *e);
    e->text = p;
    e->text_len = n;
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ':')
            colon = p + i;
    if (!colon)
        return floe_error_set(err, FLOE_EINVALID,
                              "variant.shredding: '%.*s' has no type (write PATH:TYPE, e.g. "
                              "payload.user.country:string)",
                              (int)n, p);
    const char *t = colon + 1;
    size_t tn = (size_t)(p + n - t);
    while (tn && is_space(*t))
        t++, tn--;
    for (size_t i = 0; i < sizeof shred_types / sizeof shred_types[0]; i++)
        if (strlen(shred_types[i].name) == tn && !memcmp(shred_types[i].name, t, tn))
            e->type = shred_types[i].type;
    if (!e->type)
        return floe_error_set(err, FLOE_EINVALID,
                              "variant.shredding: '%.*s': type '%.*s' is not one floe shreds "
                              "(boolean, int, long, double, string)",
                              (int)n, p, (int)tn, t);
    size_t pn = (size_t)(colon - p);
    while (pn && is_space(p[pn - 1]))
        pn--;
    size_t start = 0;
    for (size_t i = 0; i <= pn; i++) {
        if (i < pn && p[i] != '.')
            continue;
        if (i == start)
            return floe_error_set(err, FLOE_EINVALID,
                                  "variant.shredding: '%.*s': empty name in the path", (int)n,
                                  p);
        if (e->ncomp == sizeof e->comp / sizeof e->comp[0])
            return floe_error_set(err, FLOE_ELIMIT,
                                  "variant.shredding: '%.*s': a path of more than %zu names",
                                  (int)n, p, sizeof e->comp / sizeof e->comp[0]);
        e->comp[e->ncomp] = p + start;
        e->comp_len[e->ncomp++] = i - start;
        start = i + 1;
    }
    return 0;
}

/* Whether p[0..n), blanks around it aside, is the word auto. */
static bool is_auto(const char *p, size_t n) {
    trim(&p, &n);
    return n == 4 && !memcmp(p, "auto", 4);
}

bool pqw_shred_is_auto(const char *spec) { return is_auto(spec, strlen(spec)); }

/* Call fn for each entry of spec (not auto). */
typedef int (*entry_fn)(void *ctx, const shred_entry *e, floe_error *err);

static int each_entry(const char *spec, entry_fn fn, void *ctx, floe_error *err) {
    size_t n = strlen(spec), nentries = 0;
    FLOE_RETURN_ERROR_IF(n >= FLOE_PQ_SHREDDING_MAX, err, FLOE_ELIMIT,
                         "variant.shredding: longer than %d bytes", FLOE_PQ_SHREDDING_MAX - 1);
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && spec[i] != ',')
            continue;
        FLOE_RETURN_ERROR_IF(is_auto(spec + start, i - start), err, FLOE_EINVALID,
                             "variant.shredding: 'auto' chooses every path itself and is not "
                             "combined with named paths (write auto alone, or PATH:TYPE,...)");
        shred_entry e;
        FLOE_FORWARD_IF_ERROR(parse_entry(spec + start, i - start, &e, err));
        FLOE_RETURN_ERROR_IF(++nentries > SHRED_MAX_ENTRIES, err, FLOE_ELIMIT,
                             "variant.shredding: more than %d paths", SHRED_MAX_ENTRIES);
        if (fn)
            FLOE_FORWARD_IF_ERROR(fn(ctx, &e, err));
        start = i + 1;
    }
    return 0;
}

int floe_pq_variant_shredding_check(const char *spec, floe_error *err) {
    if (pqw_shred_is_auto(spec))
        return 0;
    return each_entry(spec, NULL, NULL, err);
}

/* ---------------------------------------------------------------------------------------
 * The physical schema
 * ------------------------------------------------------------------------------------- */

/* What to shred at one place of a variant, while the entries are gathered. */
typedef struct spec_node {
    const char *name;            /* the object key (not for a variant's top) */
    floe_type_id type;           /* 0 not yet, FLOE_TYPE_STRUCT an object, or a primitive */
    struct spec_node *first, *next;
    size_t nkids;
} spec_node;

typedef struct spec_var {
    floe_field *field;           /* the variant in the physical schema */
    spec_node top;
} spec_var;

typedef struct build_ctx {
    floe_schema *phys;
    spec_var *vars;
    size_t nvars;
} build_ctx;

/* a[0..n) == b[0..n) but for ASCII case. */
static bool ascii_case_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint8_t x = a[i] >= 'A' && a[i] <= 'Z' ? (uint8_t)(a[i] + 32) : a[i];
        uint8_t y = b[i] >= 'A' && b[i] <= 'Z' ? (uint8_t)(b[i] + 32) : b[i];
        if (x != y)
            return false;
    }
    return true;
}

/* Entry e's keys from comp[i] on, in variant f (of the physical schema), into b. */
static int add_keys(build_ctx *b, floe_field *f, const shred_entry *e, size_t i,
                    floe_error *err) {
    floe_arena *a = &b->phys->arena;
    spec_var *v = NULL;
    for (size_t k = 0; k < b->nvars && !v; k++)
        if (b->vars[k].field == f)
            v = &b->vars[k];
    if (!v) {
        v = &b->vars[b->nvars++];
        memset(v, 0, sizeof *v);
        v->field = f;
    }
    spec_node *n = &v->top;
    for (; i < e->ncomp; i++) {
        if (n->type != 0 && n->type != FLOE_TYPE_STRUCT)
            break;
        n->type = FLOE_TYPE_STRUCT;
        spec_node *k = n->first;
        while (k && !(strlen(k->name) == e->comp_len[i] &&
                      !memcmp(k->name, e->comp[i], e->comp_len[i])))
            k = k->next;
        if (!k) {
            /* engines whose struct field names ignore case (DuckDB) read two shredded
             * fields of one object that differ only so as one, and rename the second */
            for (const spec_node *s = n->first; s; s = s->next)
                if (strlen(s->name) == e->comp_len[i] &&
                    ascii_case_equal((const uint8_t *)s->name, (const uint8_t *)e->comp[i],
                                     e->comp_len[i]))
                    return floe_error_set(err, FLOE_EINVALID,
                                          "variant.shredding: '%.*s': key '%.*s' differs from "
                                          "'%s', named by another path, only in ASCII case "
                                          "(engines whose field names ignore case read the "
                                          "two as one)",
                                          (int)e->text_len, e->text, (int)e->comp_len[i],
                                          e->comp[i], s->name);
            k = floe_arena_alloc(a, sizeof *k);
            char *name = floe_arena_alloc(a, e->comp_len[i] + 1);
            if (!k || !name)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            memset(k, 0, sizeof *k);
            memcpy(name, e->comp[i], e->comp_len[i]);
            name[e->comp_len[i]] = 0;
            k->name = name;
            k->next = n->first;
            n->first = k;
            n->nkids++;
        }
        n = k;
    }
    if (i < e->ncomp || n->type != 0)
        return floe_error_set(err, FLOE_EINVALID,
                              "variant.shredding: '%.*s' conflicts with another path (a place "
                              "is shredded once, as one type or as an object)",
                              (int)e->text_len, e->text);
    n->type = e->type;
    return 0;
}

static int add_entry(void *vctx, const shred_entry *e, floe_error *err) {
    build_ctx *b = vctx;
    floe_field *f = &b->phys->root;
    size_t i = 0;
    while (f->type != FLOE_TYPE_VARIANT) {
        floe_field *next = NULL;
        for (size_t k = 0; i < e->ncomp && k < f->nchildren && !next; k++)
            if (strlen(f->children[k].name) == e->comp_len[i] &&
                !memcmp(f->children[k].name, e->comp[i], e->comp_len[i]))
                next = &f->children[k];
        if (!next)
            return floe_error_set(err, FLOE_EINVALID,
                                  "variant.shredding: '%.*s' names no variant column of the "
                                  "schema",
                                  (int)e->text_len, e->text);
        f = next;
        i++;
    }
    FLOE_RETURN_ERROR_IF(e->ncomp - i > SHRED_MAX_DEPTH, err, FLOE_ELIMIT,
                         "variant.shredding: '%.*s': more than %d keys deep", (int)e->text_len,
                         e->text, SHRED_MAX_DEPTH);
    return add_keys(b, f, e, i, err);
}

static int name_cmp(const void *x, const void *y) {
    const floe_field *a = x, *b = y;
    return strcmp(a->name, b->name); /* unsigned byte order, as object keys are sorted */
}

static void part_field(floe_field *f, const char *name, floe_type_id type, bool required) {
    memset(f, 0, sizeof *f);
    f->id = -1;
    f->name = name;
    f->type = type;
    f->required = required;
}

/* The children of a value/typed_value pair for node n: [metadata,] value, typed_value. */
static int pair_fields(floe_arena *a, const spec_node *n, bool top, floe_field **out,
                       size_t *nout) {
    size_t np = top ? 3 : 2;
    floe_field *kids = floe_arena_alloc(a, np * sizeof *kids);
    if (!kids)
        return FLOE_ENOMEM;
    floe_field *p = kids;
    if (top)
        part_field(p++, "metadata", FLOE_TYPE_BINARY, true);
    part_field(p++, "value", FLOE_TYPE_BINARY, false);
    part_field(p, "typed_value", n->type, false);
    if (n->type == FLOE_TYPE_STRUCT) {
        p->children = floe_arena_alloc(a, n->nkids * sizeof *p->children);
        if (!p->children)
            return FLOE_ENOMEM;
        p->nchildren = n->nkids;
        size_t i = 0;
        for (const spec_node *k = n->first; k; k = k->next, i++) {
            floe_field *g = &p->children[i];
            part_field(g, k->name, FLOE_TYPE_STRUCT, true);
            FLOE_FORWARD_IF_ERROR(pair_fields(a, k, false, &g->children, &g->nchildren));
        }
        qsort(p->children, p->nchildren, sizeof *p->children, name_cmp);
    }
    *out = kids;
    *nout = np;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Splitting the values
 * ------------------------------------------------------------------------------------- */

/* A value/typed_value pair of the physical schema. */
typedef struct snode {
    int16_t def;                 /* definition level where the pair's group is present */
    size_t value_col;            /* its value leaf; its leaves are [value_col, end_col) */
    size_t end_col;
    floe_type_id type;           /* typed_value: FLOE_TYPE_STRUCT or a primitive */
    size_t typed_col;            /* a primitive typed_value's leaf */
    struct snode *kids;          /* an object's shredded fields, in key order */
    const char **names;
    size_t *name_lens;
    size_t nkids;
} snode;

typedef struct svar {
    size_t lmeta, lvalue;        /* the caller's metadata and value leaves */
    snode top;
} svar;

/* An object field met while splitting (fields of every open level, a stack). */
typedef struct ofield {
    uint32_t id;
    const uint8_t *key;
    size_t key_len;
    const uint8_t *value;
    size_t value_len;
    bool skip;                   /* shredded into its own group */
} ofield;

/* The fields of every object open in a walk down a value (each level's above the
 * previous one's). */
typedef struct field_stack {
    ofield *f;
    size_t n, cap;
} field_stack;

struct pqw_shred {
    floe_schema *phys;           /* the writer's schema (owned) */
    int32_t *from;               /* per physical leaf: the caller's leaf it is, or -1 */
    const floe_schema *logical;
    svar *vars;
    size_t nvars;
    floe_batch out;              /* the physical batch; borrowed columns where from >= 0 */
    field_stack st;              /* the object fields of split() */
    floe_buf rest;               /* a partially shredded object's other fields */
    floe_buf members;            /* floe_variant_member scratch for it */
};

static size_t last_leaf(const floe_field *f) {
    if (f->leaf >= 0)
        return (size_t)f->leaf;
    return last_leaf(&f->children[f->nchildren - 1]);
}

/* The pair whose value and typed_value are value, typed (fields of the physical schema). */
static int snode_build(floe_arena *a, const floe_field *value, const floe_field *typed,
                       snode *n) {
    memset(n, 0, sizeof *n);
    n->def = (int16_t)(value->def_level - 1);
    n->value_col = (size_t)value->leaf;
    n->end_col = last_leaf(typed) + 1;
    n->type = typed->type;
    if (typed->leaf >= 0) {
        n->typed_col = (size_t)typed->leaf;
        return 0;
    }
    n->nkids = typed->nchildren;
    n->kids = floe_arena_alloc(a, n->nkids * sizeof *n->kids);
    n->names = floe_arena_alloc(a, n->nkids * sizeof *n->names);
    n->name_lens = floe_arena_alloc(a, n->nkids * sizeof *n->name_lens);
    if (!n->kids || !n->names || !n->name_lens)
        return FLOE_ENOMEM;
    for (size_t i = 0; i < n->nkids; i++) {
        const floe_field *g = &typed->children[i];
        n->names[i] = g->name;
        n->name_lens[i] = strlen(g->name);
        FLOE_FORWARD_IF_ERROR(snode_build(a, &g->children[0], &g->children[1], &n->kids[i]));
    }
    return 0;
}

static int leaf_of(const floe_schema *s, const floe_field *f) {
    const floe_field *l = floe_schema_find_id(s, f->id);
    return l ? l->leaf : -1;
}

static int auto_choose(build_ctx *b, const floe_schema *logical, const floe_batch *sample,
                       floe_error *err);

/* The shredder for the named paths of spec, or (spec NULL) the paths auto_choose takes
 * from sample; *out NULL when auto chose none. */
static int shred_new(const floe_schema *logical, const char *spec, const floe_batch *sample,
                     pqw_shred **out, floe_error *err) {
    int rc = 0;
    size_t nvariant = 0; /* a variant's metadata and value are its only leaves */
    for (size_t j = 0; j < logical->nleaves; j++)
        nvariant += logical->leaves[j]->parent &&
                    logical->leaves[j]->parent->type == FLOE_TYPE_VARIANT;
    pqw_shred *s = floe_calloc(1, sizeof *s);
    spec_var *vars = floe_calloc(SHRED_MAX_ENTRIES + nvariant, sizeof *vars);
    if (!s || !vars) {
        floe_free(s);
        floe_free(vars);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    s->logical = logical;
    floe_buf_init(&s->rest, 0);
    floe_buf_init(&s->members, 0);
    FLOE_CHECK(floe_schema_clone(logical, &s->phys, err));
    build_ctx b = {.phys = s->phys, .vars = vars};
    if (spec)
        FLOE_CHECK(each_entry(spec, add_entry, &b, err));
    else
        FLOE_CHECK(auto_choose(&b, logical, sample, err));
    if (b.nvars == 0) {
        *out = NULL;
        goto done;
    }
    for (size_t i = 0; i < b.nvars; i++) {
        floe_field *v = vars[i].field;
        if (pair_fields(&s->phys->arena, &vars[i].top, true, &v->children, &v->nchildren) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    FLOE_CHECK(floe_schema_finish(s->phys, err));

    s->nvars = b.nvars;
    s->vars = floe_arena_alloc(&s->phys->arena, (b.nvars ? b.nvars : 1) * sizeof *s->vars);
    s->from = floe_arena_alloc(&s->phys->arena,
                               (s->phys->nleaves ? s->phys->nleaves : 1) * sizeof *s->from);
    if (!s->vars || !s->from)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < b.nvars; i++) {
        const floe_field *v = vars[i].field;
        const floe_field *lv = floe_schema_find_id(logical, v->id);
        if (!lv || lv->type != FLOE_TYPE_VARIANT || lv->nchildren != 2)
            FLOE_FAIL(err, FLOE_EINVALID, "variant.shredding: variant '%s' is shredded already",
                      v->name);
        s->vars[i].lmeta = (size_t)lv->children[0].leaf;
        s->vars[i].lvalue = (size_t)lv->children[1].leaf;
        if (snode_build(&s->phys->arena, &v->children[1], &v->children[2], &s->vars[i].top) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    /* every leaf outside the shredded variants is the caller's leaf of the same id; the
     * parts of a variant are its parts there; a shredded variant's metadata is its
     * unshredded metadata, its other parts are new */
    for (size_t j = 0; j < s->phys->nleaves; j++) {
        const floe_field *l = s->phys->leaves[j];
        const floe_field *v = l->parent;
        while (v && v->type != FLOE_TYPE_VARIANT)
            v = v->parent;
        const floe_field *lv = v ? floe_schema_find_id(logical, v->id) : NULL;
        if (!v)
            s->from[j] = leaf_of(logical, l);
        else if (lv && l == &v->children[0])
            s->from[j] = lv->children[0].leaf;
        else if (lv && v->nchildren == 2 && l == &v->children[1])
            s->from[j] = lv->children[1].leaf;
        else
            s->from[j] = -1;
        if (s->from[j] < 0 && (!v || v->nchildren == 2 || !lv))
            FLOE_FAIL(err, FLOE_EINTERNAL, "variant.shredding: leaf %zu has no source", j);
    }
    if (floe_batch_init(&s->out, s->phys) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    *out = s;
    s = NULL;
done:
    floe_free(vars);
    pqw_shred_free(s);
    return rc;
}

int pqw_shred_new(const floe_schema *logical, const char *spec, pqw_shred **out,
                  floe_error *err) {
    return shred_new(logical, spec, NULL, out, err);
}

int pqw_shred_new_auto(const floe_schema *logical, const floe_batch *sample, pqw_shred **out,
                       floe_error *err) {
    return shred_new(logical, NULL, sample, out, err);
}

void pqw_shred_free(pqw_shred *s) {
    if (!s)
        return;
    for (size_t j = 0; s->phys && j < s->out.ncols; j++)
        if (s->from[j] >= 0) /* borrowed: forget it */
            floe_colbuf_init(&s->out.cols[j], s->phys->leaves[j]);
    floe_batch_free(&s->out);
    floe_free(s->st.f);
    floe_buf_free(&s->rest);
    floe_buf_free(&s->members);
    floe_schema_free(s->phys);
    floe_free(s);
}

const floe_schema *pqw_shred_schema(const pqw_shred *s) { return s->phys; }

const floe_field *pqw_shred_logical_leaf(const pqw_shred *s, size_t column) {
    const floe_field *l = s->phys->leaves[column];
    if (s->from[column] < 0 || l->id < 0)
        return NULL; /* a variant's part: no Iceberg field */
    return s->logical->leaves[s->from[column]];
}

/* The child of pair group g named name, or NULL. */
static const floe_field *part_named(const floe_field *g, const char *name) {
    for (size_t i = 0; i < g->nchildren; i++)
        if (!strcmp(g->children[i].name, name))
            return &g->children[i];
    return NULL;
}

int pqw_shred_typed_leaf(const pqw_shred *s, size_t column, int32_t *variant_id,
                         size_t *value_column, floe_buf *path) {
    const floe_field *l = s->phys->leaves[column];
    if (s->from[column] >= 0 || l->id >= 0 || strcmp(l->name, "typed_value") || !l->parent)
        return 0;
    const floe_field *pair = l->parent, *value = part_named(pair, "value");
    if (!value || value->leaf < 0)
        return 0;
    /* the keys from the leaf up: each key group sits in its parent pair's typed_value */
    const floe_field *keys[SHRED_MAX_DEPTH + 8];
    size_t nk = 0;
    const floe_field *g = pair;
    while (g->type != FLOE_TYPE_VARIANT) {
        if (nk == sizeof keys / sizeof *keys || !g->parent || !g->parent->parent ||
            strcmp(g->parent->name, "typed_value"))
            return 0;
        keys[nk++] = g;
        g = g->parent->parent;
    }
    floe_buf_reset(path);
    floe_buf_append_byte(path, '$');
    while (nk--)
        if (floe_variant_path_append_key(path, (const uint8_t *)keys[nk]->name,
                                         strlen(keys[nk]->name)) < 0)
            return FLOE_ENOMEM;
    if (floe_buf_error(path))
        return FLOE_ENOMEM;
    *variant_id = g->id;
    *value_column = (size_t)value->leaf;
    return 1;
}

static int nomem(floe_error *err) { return floe_error_set(err, FLOE_ENOMEM, "out of memory"); }

/* Slots [from, to) of the physical batch absent at definition level def. */
static int put_nulls(pqw_shred *s, size_t from, size_t to, int16_t def, int16_t rep,
                     floe_error *err) {
    for (size_t j = from; j < to; j++)
        if (floe_colbuf_push_null(&s->out.cols[j], def, rep) < 0)
            return nomem(err);
    return 0;
}

static uint64_t le_bytes(const uint8_t *p, size_t w) {
    uint64_t v = 0;
    for (size_t i = 0; i < w; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The value v[0..n) as typed_value of type t, in the column's layout (*bytes, *len; small
 * values in buf): true when it is of that type (VariantShredding.md "Shredded Value
 * Types"; integers go to any integer column wide enough). */
static bool typed_of(floe_type_id t, const uint8_t *v, size_t n, uint8_t buf[8],
                     const uint8_t **bytes, size_t *len) {
    if (n == 0)
        return false;
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    if (basic == 1) { /* short string */
        if (t != FLOE_TYPE_STRING || 1 + (size_t)h > n)
            return false;
        *bytes = v + 1;
        *len = h;
        return true;
    }
    if (basic != 0)
        return false;
    static const size_t int_width[] = {[FLOE_VARIANT_INT8] = 1, [FLOE_VARIANT_INT16] = 2,
                                       [FLOE_VARIANT_INT32] = 4, [FLOE_VARIANT_INT64] = 8};
    switch (t) {
    case FLOE_TYPE_BOOLEAN:
        if (h != FLOE_VARIANT_TRUE && h != FLOE_VARIANT_FALSE)
            return false;
        buf[0] = h == FLOE_VARIANT_TRUE;
        *len = 1;
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_LONG: {
        if (h < FLOE_VARIANT_INT8 || h > FLOE_VARIANT_INT64)
            return false;
        size_t w = int_width[h];
        if (1 + w > n || (t == FLOE_TYPE_INT && w > 4))
            return false;
        uint64_t u = le_bytes(v + 1, w);
        if (w < 8 && (u >> (8 * w - 1)) & 1) /* sign-extend */
            u |= ~(uint64_t)0 << (8 * w);
        *len = t == FLOE_TYPE_INT ? 4 : 8;
        for (size_t i = 0; i < *len; i++)
            buf[i] = (uint8_t)(u >> (8 * i));
        break;
    }
    case FLOE_TYPE_DOUBLE:
        if (h != FLOE_VARIANT_DOUBLE || n < 9)
            return false;
        memcpy(buf, v + 1, 8);
        *len = 8;
        break;
    case FLOE_TYPE_STRING: {
        if (h != FLOE_VARIANT_STRING || n < 5)
            return false;
        uint64_t sl = le_bytes(v + 1, 4);
        if (sl > n - 5)
            return false;
        *bytes = v + 5;
        *len = (size_t)sl;
        return true;
    }
    default:
        return false;
    }
    *bytes = buf;
    return true;
}

static int push_bytes(pqw_shred *s, size_t column, const uint8_t *p, size_t n, int16_t rep,
                      floe_error *err) {
    if (floe_colbuf_push_value(&s->out.cols[column], rep, p, n) < 0)
        return nomem(err);
    return 0;
}

static int collect_field(void *ctx, uint32_t id, const uint8_t *key, size_t key_len,
                         const uint8_t *value, size_t value_len) {
    field_stack *st = ctx;
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        ofield *f = floe_realloc(st->f, cap * sizeof *f);
        if (!f)
            return FLOE_ENOMEM;
        st->f = f;
        st->cap = cap;
    }
    st->f[st->n++] = (ofield){id, key, key_len, value, value_len, false};
    return 0;
}

/* Push the fields of the object v on st: 0, 1 when v is not an object (nothing pushed),
 * or an error. */
static int push_fields(field_stack *st, const uint8_t *meta, size_t meta_len, const uint8_t *v,
                       size_t vn, floe_error *err) {
    int rc = floe_variant_object_raw_fields(meta, meta_len, v, vn, collect_field, st, err);
    if (rc == FLOE_ENOMEM)
        return nomem(err);
    return rc;
}

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

/* One value (NULL: the object field is missing) into the pair n's columns. */
static int split(pqw_shred *s, const snode *n, const uint8_t *meta, size_t meta_len,
                 const uint8_t *v, size_t vn, int16_t rep, floe_error *err) {
    if (!v)
        return put_nulls(s, n->value_col, n->end_col, n->def, rep, err);
    if (n->type != FLOE_TYPE_STRUCT) {
        uint8_t buf[8];
        const uint8_t *tp;
        size_t tn;
        if (!typed_of(n->type, v, vn, buf, &tp, &tn)) {
            FLOE_FORWARD_IF_ERROR(push_bytes(s, n->value_col, v, vn, rep, err));
            return put_nulls(s, n->typed_col, n->typed_col + 1, n->def, rep, err);
        }
        FLOE_FORWARD_IF_ERROR(put_nulls(s, n->value_col, n->value_col + 1, n->def, rep, err));
        return push_bytes(s, n->typed_col, tp, tn, rep, err);
    }
    size_t base = s->st.n;
    int rc = push_fields(&s->st, meta, meta_len, v, vn, err);
    if (rc < 0)
        return rc;
    if (rc == 1) { /* not an object: whole in value */
        FLOE_FORWARD_IF_ERROR(push_bytes(s, n->value_col, v, vn, rep, err));
        return put_nulls(s, n->value_col + 1, n->end_col, n->def, rep, err);
    }
    size_t end = s->st.n, nrest = end - base;
    /* both in key order: a merge */
    size_t f = base;
    for (size_t k = 0; k < n->nkids; k++) {
        const uint8_t *key = (const uint8_t *)n->names[k];
        while (f < end && key_cmp(s->st.f[f].key, s->st.f[f].key_len, key,
                                  n->name_lens[k]) < 0)
            f++;
        bool found = f < end && key_cmp(s->st.f[f].key, s->st.f[f].key_len, key,
                                        n->name_lens[k]) == 0;
        if (found) {
            /* the stack may move below: copy what this level needs */
            ofield of = s->st.f[f];
            s->st.f[f++].skip = true; /* shredded: not in the rest */
            nrest--;
            FLOE_FORWARD_IF_ERROR(split(s, &n->kids[k], meta, meta_len, of.value,
                                        of.value_len, rep, err));
        } else
            FLOE_FORWARD_IF_ERROR(split(s, &n->kids[k], meta, meta_len, NULL, 0, rep, err));
        s->st.n = end; /* what the child pushed is its own */
    }
    if (nrest == 0) {
        rc = put_nulls(s, n->value_col, n->value_col + 1, n->def, rep, err);
    } else {
        floe_buf_reset(&s->members);
        for (size_t i = base; i < end; i++) {
            if (s->st.f[i].skip)
                continue;
            floe_variant_member m = {s->st.f[i].id, (size_t)(s->st.f[i].value - v),
                                     s->st.f[i].value_len};
            floe_buf_append(&s->members, &m, sizeof m);
        }
        if (floe_buf_error(&s->members) < 0)
            return nomem(err);
        floe_buf_reset(&s->rest);
        rc = floe_variant_append_container(true, (const floe_variant_member *)s->members.data,
                                           nrest, v, &s->rest, err);
        if (rc == 0)
            rc = push_bytes(s, n->value_col, s->rest.data, s->rest.len, rep, err);
    }
    s->st.n = base;
    return rc;
}

int pqw_shred_batch(pqw_shred *s, const floe_batch *in, const floe_batch **out,
                    floe_error *err) {
    FLOE_RETURN_ERROR_IF(in->ncols != s->logical->nleaves, err, FLOE_EINVALID,
                         "batch has %zu columns, schema %zu", in->ncols, s->logical->nleaves);
    for (size_t j = 0; j < s->out.ncols; j++) {
        if (s->from[j] >= 0)
            s->out.cols[j] = in->cols[s->from[j]];
        else
            floe_colbuf_clear(&s->out.cols[j]);
    }
    s->out.nrows = in->nrows;
    for (size_t i = 0; i < s->nvars; i++) {
        const svar *sv = &s->vars[i];
        const floe_colbuf *m = &in->cols[sv->lmeta], *val = &in->cols[sv->lvalue];
        FLOE_RETURN_ERROR_IF(m->phys != FLOE_PHYS_BYTE_ARRAY || val->phys != FLOE_PHYS_BYTE_ARRAY ||
                                 m->nlevels != val->nlevels || m->nvalues != val->nvalues ||
                                 m->max_def != val->max_def || m->nvalues > m->nlevels ||
                                 (m->nvalues && (!m->offsets || !val->offsets)),
                             err, FLOE_EINVALID, "variant column %s: its parts do not match",
                             m->field ? m->field->name : "?");
        size_t vi = 0;
        for (size_t k = 0; k < m->nlevels; k++) {
            int16_t d = m->max_def ? m->def[k] : 0, r = m->max_rep ? m->rep[k] : 0;
            if (d < m->max_def) {
                FLOE_FORWARD_IF_ERROR(
                    put_nulls(s, sv->top.value_col, sv->top.end_col, d, r, err));
                continue;
            }
            FLOE_RETURN_ERROR_IF(vi >= m->nvalues, err, FLOE_EINVALID,
                                 "variant column: more present slots than values");
            const uint8_t *mp = m->values + m->offsets[vi];
            size_t mn = m->offsets[vi + 1] - m->offsets[vi];
            const uint8_t *vp = val->values + val->offsets[vi];
            size_t vn = val->offsets[vi + 1] - val->offsets[vi];
            vi++;
            int rc = split(s, &sv->top, mp, mn, vp, vn, r, err);
            if (rc < 0) {
                floe_error_prefix(err, "shredding variant column: ");
                return rc;
            }
        }
    }
    *out = &s->out;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * auto: the paths chosen from a sample of rows (DESIGN.md "Variant shredding: auto")
 *
 * Every variant column of the schema is looked at alone. Over the sample's values of the
 * column (present, not SQL NULL: n of them), each object path of at most AUTO_MAX_DEPTH
 * keys (keys neither empty nor holding '.' or NUL) counts the values where it is present,
 * by the kind of its value. A path is shredded as type T when its values that are not a
 * variant null are all of T and number at least half of n (2 * count >= n): T boolean,
 * int when every integer is stored in at most 32 bits else long, double, string. At most
 * AUTO_MAX_PATHS paths per column: the most frequent, then the shallowest, then the one
 * met first; a path is passed over when one of its keys equals, but for ASCII case, the
 * key of a field already chosen in the same object (DuckDB reads such struct fields as
 * one name and renames the second). Only the first AUTO_MAX_TRACKED distinct paths met are counted, so a sample
 * of very wide objects costs bounded memory. The kinds are those typed_of() takes, so a
 * chosen path's values of the sample all go to typed_value; later values of other types
 * go to value, as for named paths.
 * ------------------------------------------------------------------------------------- */

enum { K_NULL, K_BOOL, K_INT32, K_INT64, K_DOUBLE, K_STRING, K_OBJECT, K_OTHER, K_COUNT };

static int value_kind(const uint8_t *v, size_t n) {
    if (n == 0)
        return K_OTHER;
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    if (basic == 1)
        return K_STRING;
    if (basic == 2)
        return K_OBJECT;
    if (basic == 3)
        return K_OTHER; /* an array */
    switch (h) {
    case FLOE_VARIANT_NULL: return K_NULL;
    case FLOE_VARIANT_TRUE:
    case FLOE_VARIANT_FALSE: return K_BOOL;
    case FLOE_VARIANT_INT8:
    case FLOE_VARIANT_INT16:
    case FLOE_VARIANT_INT32: return K_INT32;
    case FLOE_VARIANT_INT64: return K_INT64;
    case FLOE_VARIANT_DOUBLE: return K_DOUBLE;
    case FLOE_VARIANT_STRING: return K_STRING;
    default: return K_OTHER; /* decimals (JSON numbers with a fraction), dates, ... */
    }
}

/* One object path of a variant column, as counted over the sample. */
typedef struct auto_node {
    const uint8_t *key;          /* borrowed from the sample's metadata */
    size_t key_len;
    struct auto_node *parent;
    struct auto_node *first, *next; /* its fields met so far, in key order */
    int depth;                   /* keys from the variant's top down to it */
    bool chosen;                 /* a shredded path goes through it */
    int64_t count[K_COUNT];      /* sampled values where it is present, per kind */
} auto_node;

typedef struct auto_ctx {
    auto_node top;
    auto_node *pool;             /* AUTO_MAX_TRACKED nodes */
    size_t npool;
    field_stack st;
} auto_ctx;

/* Count the fields of the object v (at node n) and, below AUTO_MAX_DEPTH, their fields. */
static int auto_walk(auto_ctx *c, auto_node *n, const uint8_t *meta, size_t meta_len,
                     const uint8_t *v, size_t vn, floe_error *err) {
    size_t base = c->st.n;
    int rc = push_fields(&c->st, meta, meta_len, v, vn, err);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    size_t end = c->st.n;
    auto_node **link = &n->first, *prev = NULL;
    for (size_t i = base; i < end && rc == 0; i++) {
        ofield f = c->st.f[i]; /* the stack may move below */
        if (f.key_len == 0 || memchr(f.key, '.', f.key_len) || memchr(f.key, '\0', f.key_len))
            continue; /* no path can name it (a NUL would end the shredded field's name) */
        if (prev && key_cmp(f.key, f.key_len, prev->key, prev->key_len) <= 0)
            link = &n->first; /* keys out of order: search from the start */
        while (*link && key_cmp((*link)->key, (*link)->key_len, f.key, f.key_len) < 0)
            link = &(*link)->next;
        auto_node *k = *link;
        if (!k || key_cmp(k->key, k->key_len, f.key, f.key_len) != 0) {
            if (c->npool == AUTO_MAX_TRACKED)
                continue;
            k = &c->pool[c->npool++];
            *k = (auto_node){.key = f.key, .key_len = f.key_len, .parent = n, .next = *link,
                             .depth = n->depth + 1};
            *link = k;
        }
        prev = k;
        link = &k->next;
        int kind = value_kind(f.value, f.value_len);
        k->count[kind]++;
        if (kind == K_OBJECT && k->depth < AUTO_MAX_DEPTH)
            rc = auto_walk(c, k, meta, meta_len, f.value, f.value_len, err);
    }
    c->st.n = base;
    return rc;
}

/* The sampled values where k is present and not a variant null. */
static int64_t node_typed(const auto_node *k) {
    int64_t typed = 0;
    for (int i = 0; i < K_COUNT; i++)
        typed += i == K_NULL ? 0 : k->count[i];
    return typed;
}

/* The type node k is shredded as among n sampled values, or 0. */
static floe_type_id auto_type(const auto_node *k, int64_t n) {
    int64_t typed = node_typed(k);
    if (typed == 0 || typed < n - typed)
        return 0;
    const int64_t *c = k->count;
    if (c[K_BOOL] == typed)
        return FLOE_TYPE_BOOLEAN;
    if (c[K_INT32] + c[K_INT64] == typed)
        return c[K_INT64] ? FLOE_TYPE_LONG : FLOE_TYPE_INT;
    if (c[K_DOUBLE] == typed)
        return FLOE_TYPE_DOUBLE;
    if (c[K_STRING] == typed)
        return FLOE_TYPE_STRING;
    return 0;
}

static int auto_rank(const void *x, const void *y) {
    const auto_node *a = *(const auto_node *const *)x, *b = *(const auto_node *const *)y;
    int64_t ta = node_typed(a), tb = node_typed(b);
    if (ta != tb)
        return ta > tb ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return a < b ? -1 : a > b; /* the pool is in the order paths were met */
}

/* True when a node on k's path has a chosen sibling whose key equals its own but for ASCII
 * case: engines whose struct field names ignore case (DuckDB) would read the two shredded
 * fields of one object as one and rename the second. */
static bool auto_case_clash(const auto_node *top, const auto_node *k) {
    for (; k != top; k = k->parent)
        for (const auto_node *s = k->parent->first; s; s = s->next)
            if (s != k && s->chosen && s->key_len == k->key_len &&
                ascii_case_equal(s->key, k->key, k->key_len))
                return true;
    return false;
}

/* Count variant v's sampled values (the caller's columns lmeta, lvalue) and add the paths
 * chosen to b. */
static int auto_variant(build_ctx *b, auto_ctx *c, floe_field *v, const floe_colbuf *m,
                        const floe_colbuf *val, auto_node **cand, floe_error *err) {
    FLOE_RETURN_ERROR_IF(m->phys != FLOE_PHYS_BYTE_ARRAY || val->phys != FLOE_PHYS_BYTE_ARRAY ||
                             m->nlevels != val->nlevels || m->nvalues != val->nvalues ||
                             m->nvalues > m->nlevels ||
                             (m->nvalues && (!m->offsets || !val->offsets)),
                         err, FLOE_EINVALID, "variant column %s: its parts do not match",
                         v->name);
    memset(&c->top, 0, sizeof c->top);
    c->npool = 0;
    int64_t n = 0;
    for (size_t vi = 0; vi < m->nvalues; vi++, n++) {
        FLOE_FORWARD_IF_ERROR(auto_walk(c, &c->top, m->values + m->offsets[vi],
                                        m->offsets[vi + 1] - m->offsets[vi],
                                        val->values + val->offsets[vi],
                                        val->offsets[vi + 1] - val->offsets[vi], err));
    }
    size_t ncand = 0;
    for (size_t i = 0; i < c->npool; i++)
        if (auto_type(&c->pool[i], n))
            cand[ncand++] = &c->pool[i];
    qsort(cand, ncand, sizeof *cand, auto_rank);
    for (size_t i = 0, taken = 0; i < ncand && taken < AUTO_MAX_PATHS; i++) {
        if (auto_case_clash(&c->top, cand[i]))
            continue;
        taken++;
        for (auto_node *k = cand[i]; k != &c->top; k = k->parent)
            k->chosen = true;
        shred_entry e;
        memset(&e, 0, sizeof e);
        e.text = "auto";
        e.text_len = 4;
        e.type = auto_type(cand[i], n);
        e.ncomp = (size_t)cand[i]->depth;
        size_t d = e.ncomp;
        for (const auto_node *k = cand[i]; k != &c->top; k = k->parent) {
            e.comp[--d] = (const char *)k->key;
            e.comp_len[d] = k->key_len;
        }
        FLOE_FORWARD_IF_ERROR(add_keys(b, v, &e, 0, err));
    }
    return 0;
}

/* Each variant below f (of the physical schema). */
static int auto_fields(build_ctx *b, auto_ctx *c, floe_field *f, const floe_schema *logical,
                       const floe_batch *sample, auto_node **cand, floe_error *err) {
    if (f->type != FLOE_TYPE_VARIANT) {
        for (size_t i = 0; i < f->nchildren; i++)
            FLOE_FORWARD_IF_ERROR(
                auto_fields(b, c, &f->children[i], logical, sample, cand, err));
        return 0;
    }
    const floe_field *lv = floe_schema_find_id(logical, f->id);
    if (!lv || lv->nchildren != 2)
        return 0; /* shredded already: refused by shred_new were a path added */
    size_t lm = (size_t)lv->children[0].leaf, lval = (size_t)lv->children[1].leaf;
    FLOE_RETURN_ERROR_IF(lm >= sample->ncols || lval >= sample->ncols, err, FLOE_EINVALID,
                         "variant.shredding auto: the sample has %zu columns", sample->ncols);
    return auto_variant(b, c, f, &sample->cols[lm], &sample->cols[lval], cand, err);
}

static int auto_choose(build_ctx *b, const floe_schema *logical, const floe_batch *sample,
                       floe_error *err) {
    auto_ctx c;
    memset(&c, 0, sizeof c);
    c.pool = floe_calloc(AUTO_MAX_TRACKED, sizeof *c.pool);
    auto_node **cand = floe_calloc(AUTO_MAX_TRACKED, sizeof *cand);
    int rc = c.pool && cand ? auto_fields(b, &c, &b->phys->root, logical, sample, cand, err)
                            : nomem(err);
    if (rc < 0)
        floe_error_prefix(err, "variant.shredding auto: ");
    floe_free(c.pool);
    floe_free(cand);
    floe_free(c.st.f);
    return rc;
}
