/*
 * infer.c - Iceberg schema inference from NDJSON samples (rules in floe/json.h).
 *
 * Each sampled record is parsed with jansson (inference is not a hot path) and folded
 * into a tree of observation nodes: per node, how often each JSON kind was seen, which
 * string forms (timestamp with/without zone, date), and for objects their keys in
 * first-seen order. floe_infer_finish() turns the tree into a schema, deciding struct vs
 * map per object node and widening or voting on conflicting kinds.
 *
 * Bounds: an object node tracks at most INFER_MAX_KEYS distinct keys; values of further
 * keys fold into one overflow node (such an object is a map by rule anyway). Nesting is
 * bounded by jansson's own depth limit and INFER_MAX_DEPTH.
 */
#include "floe/json.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_internal.h"

#define INFER_MAX_KEYS 256
#define INFER_MAX_DEPTH 48
#define MAP_MANY_KEYS 64   /* more distinct keys than this: a map */
#define MAP_SOME_KEYS 16   /* at least this many and sparse: a map */
#define MAX_WARNINGS 100
#define MAX_SOURCES 4096   /* source names kept for warnings; past it, lines go unnamed */

/* Where a value was first seen: the ordinal of its line among every line fed (0: never),
 * the source (index + 1 into floe_infer.sources; 0: none named) and its line there. */
typedef struct iloc {
    uint64_t ord;
    uint32_t src;
    int64_t line;
} iloc;

typedef struct inode inode;
struct inode {
    uint64_t n_null, n_bool, n_long, n_double, n_string, n_object, n_array;
    uint64_t s_tstz, s_ts, s_date; /* strings of each recognised form */
    uint64_t s_nanos, s_ns_out;    /* timestamps with digits below the microsecond; timestamps
                                      outside the nanosecond range (1677..2262) */
    uint64_t total_keys;           /* sum over objects of their key counts */
    char **names;                  /* object keys, first-seen order */
    inode **kids;
    size_t nkids, cap;
    inode *overflow;               /* values of keys past INFER_MAX_KEYS */
    inode *elem;                   /* arrays: all elements */
    iloc first[6];                 /* the first value of each kind (K_* below; K_NONE: of
                                      any kind, null included), for warnings */
};

struct floe_infer {
    floe_infer_options opt;
    inode *root;
    uint64_t records, skipped;
    char **warnings;
    size_t nwarnings;
    char **sources;                /* names given by floe_infer_at */
    size_t nsources;
    iloc at;                       /* the line being fed */
    iloc first_skipped;
    char first_skipped_why[256];   /* why that line was skipped */
};

enum { K_NONE, K_BOOL, K_NUMBER, K_STRING, K_OBJECT, K_ARRAY };

static void note_first(iloc *slot, const iloc *at) {
    if (!slot->ord || at->ord < slot->ord)
        *slot = *at;
}

static void inode_free(inode *n) {
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++) {
        floe_free(n->names[i]);
        inode_free(n->kids[i]);
    }
    floe_free(n->names);
    floe_free(n->kids);
    inode_free(n->overflow);
    inode_free(n->elem);
    floe_free(n);
}

static inode *inode_new(void) { return floe_calloc(1, sizeof(inode)); }

/* The child for key (created when new); NULL on OOM. */
static inode *kid_for(inode *n, const char *key) {
    for (size_t i = 0; i < n->nkids; i++)
        if (!strcmp(n->names[i], key))
            return n->kids[i];
    if (n->nkids >= INFER_MAX_KEYS) {
        if (!n->overflow)
            n->overflow = inode_new();
        return n->overflow;
    }
    if (n->nkids == n->cap) {
        size_t ncap = n->cap ? n->cap * 2 : 8;
        char **names = floe_realloc(n->names, ncap * sizeof *names);
        if (!names)
            return NULL;
        n->names = names;
        inode **kids = floe_realloc(n->kids, ncap * sizeof *kids);
        if (!kids)
            return NULL;
        n->kids = kids;
        n->cap = ncap;
    }
    char *name = floe_strdup(key);
    inode *k = inode_new();
    if (!name || !k) {
        floe_free(name);
        floe_free(k);
        return NULL;
    }
    n->names[n->nkids] = name;
    n->kids[n->nkids++] = k;
    return k;
}

static void classify_string(inode *n, const char *s, size_t len) {
    floe_lit_ts t;
    int64_t v;
    int32_t d;
    if (floe_lit_timestamp(s, len, FLOE_LIT_STRICT, &t, NULL, 0) == FLOE_LIT_OK &&
        floe_lit_ts_units(&t, 6, &v, NULL, 0) == FLOE_LIT_OK) {
        n->s_nanos += t.nano % 1000 != 0;
        n->s_ns_out += floe_lit_ts_units(&t, 9, &v, NULL, 0) != FLOE_LIT_OK;
        if (t.zone)
            n->s_tstz++;
        else
            n->s_ts++;
    } else if (floe_lit_date(s, len, FLOE_LIT_STRICT, &d, NULL, 0) == FLOE_LIT_OK) {
        n->s_date++;
    }
}

static int observe(inode *n, json_t *v, int depth, const iloc *at) {
    if (depth > INFER_MAX_DEPTH)
        return 0; /* deeper levels carry no more shape worth inferring */
    static const int kind_of[] = {[JSON_OBJECT] = K_OBJECT, [JSON_ARRAY] = K_ARRAY,
                                  [JSON_STRING] = K_STRING, [JSON_INTEGER] = K_NUMBER,
                                  [JSON_REAL] = K_NUMBER,   [JSON_TRUE] = K_BOOL,
                                  [JSON_FALSE] = K_BOOL,    [JSON_NULL] = K_NONE};
    note_first(&n->first[K_NONE], at);
    note_first(&n->first[kind_of[json_typeof(v)]], at);
    switch (json_typeof(v)) {
    case JSON_NULL: n->n_null++; break;
    case JSON_TRUE:
    case JSON_FALSE: n->n_bool++; break;
    case JSON_INTEGER: n->n_long++; break;
    case JSON_REAL: n->n_double++; break;
    case JSON_STRING:
        n->n_string++;
        classify_string(n, json_string_value(v), json_string_length(v));
        break;
    case JSON_OBJECT: {
        n->n_object++;
        n->total_keys += json_object_size(v);
        const char *key;
        json_t *val;
        json_object_foreach(v, key, val) {
            inode *k = kid_for(n, key);
            if (!k)
                return FLOE_ENOMEM;
            FLOE_FORWARD_IF_ERROR(observe(k, val, depth + 1, at));
        }
        break;
    }
    case JSON_ARRAY: {
        n->n_array++;
        if (!n->elem && !(n->elem = inode_new()))
            return FLOE_ENOMEM;
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
            FLOE_FORWARD_IF_ERROR(observe(n->elem, el, depth + 1, at));
        break;
    }
    }
    return 0;
}

/* dst += src, recursively. */
static int merge(inode *dst, const inode *src) {
    dst->n_null += src->n_null;
    dst->n_bool += src->n_bool;
    dst->n_long += src->n_long;
    dst->n_double += src->n_double;
    dst->n_string += src->n_string;
    dst->n_object += src->n_object;
    dst->n_array += src->n_array;
    dst->s_tstz += src->s_tstz;
    dst->s_ts += src->s_ts;
    dst->s_date += src->s_date;
    dst->s_nanos += src->s_nanos;
    dst->s_ns_out += src->s_ns_out;
    dst->total_keys += src->total_keys;
    for (int k = 0; k < 6; k++)
        if (src->first[k].ord)
            note_first(&dst->first[k], &src->first[k]);
    for (size_t i = 0; i < src->nkids; i++) {
        inode *k = kid_for(dst, src->names[i]);
        if (!k)
            return FLOE_ENOMEM;
        FLOE_FORWARD_IF_ERROR(merge(k, src->kids[i]));
    }
    if (src->overflow) {
        if (!dst->overflow && !(dst->overflow = inode_new()))
            return FLOE_ENOMEM;
        FLOE_FORWARD_IF_ERROR(merge(dst->overflow, src->overflow));
    }
    if (src->elem) {
        if (!dst->elem && !(dst->elem = inode_new()))
            return FLOE_ENOMEM;
        FLOE_FORWARD_IF_ERROR(merge(dst->elem, src->elem));
    }
    return 0;
}

/* ---- resolution ------------------------------------------------------------------------ */

typedef struct build_ctx {
    floe_infer *inf;
    floe_schema *s;
    int32_t next_id;
    floe_error *err;
} build_ctx;

static void warn(floe_infer *inf, const char *fmt, ...) FLOE_PRINTF(2, 3);
static void warn(floe_infer *inf, const char *fmt, ...) {
    if (inf->nwarnings >= MAX_WARNINGS)
        return;
    if (!inf->warnings && !(inf->warnings = floe_calloc(MAX_WARNINGS, sizeof(char *))))
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *w = floe_strdup(buf);
    if (w)
        inf->warnings[inf->nwarnings++] = w;
}

/* " at NAME line N" (or " at line N") for l into buf; "" when l is unset. */
static const char *at_text(const floe_infer *inf, const iloc *l, char *buf, size_t n) {
    if (!l->ord)
        snprintf(buf, n, "%s", "");
    else if (l->src)
        snprintf(buf, n, " at %.200s line %lld", inf->sources[l->src - 1], (long long)l->line);
    else
        snprintf(buf, n, " at line %lld", (long long)l->line);
    return buf;
}

const char *floe_infer_first_skipped(const floe_infer *inf, char *buf, size_t n) {
    char at[256];
    if (!inf->first_skipped.ord) {
        snprintf(buf, n, "%s", "");
        return buf;
    }
    snprintf(buf, n, "%s: %s", at_text(inf, &inf->first_skipped, at, sizeof at),
             inf->first_skipped_why);
    return buf;
}

/* Why a line is skipped: jansson's message for one that is not JSON, else the kind of
 * value it is. */
static void skip_reason(char *buf, size_t n, const json_t *doc, const json_error_t *jerr) {
    static const char *const kind[] = {
        [JSON_ARRAY] = "an array",   [JSON_STRING] = "a string", [JSON_INTEGER] = "a number",
        [JSON_REAL] = "a number",    [JSON_TRUE] = "a boolean",  [JSON_FALSE] = "a boolean",
        [JSON_NULL] = "null",
    };
    if (doc)
        snprintf(buf, n, "%s, not an object", kind[json_typeof(doc)]);
    else
        snprintf(buf, n, "%.200s (column %d)", jerr->text, jerr->column);
}

/* Values seen of each kind, indexed by K_*: null is no kind, integers and decimals are
 * both numbers. */
static void kind_counts(const inode *n, uint64_t counts[6]) {
    counts[K_NONE] = 0;
    counts[K_BOOL] = n->n_bool;
    counts[K_NUMBER] = n->n_long + n->n_double;
    counts[K_STRING] = n->n_string;
    counts[K_OBJECT] = n->n_object;
    counts[K_ARRAY] = n->n_array;
}

/* Does the kind of n's values vary between records? */
static bool kind_varies(const inode *n) {
    uint64_t counts[6];
    kind_counts(n, counts);
    int kinds = 0;
    for (int k = 1; k < 6; k++)
        kinds += counts[k] != 0;
    return kinds > 1;
}

static int dominant_kind(build_ctx *c, const inode *n, const char *path) {
    uint64_t counts[6];
    kind_counts(n, counts);
    static const char *const names[6] = {"", "boolean", "number", "string", "object", "array"};
    int best = K_NONE, kinds = 0;
    for (int k = 1; k < 6; k++) {
        if (!counts[k])
            continue;
        kinds++;
        if (best == K_NONE || counts[k] > counts[best])
            best = k;
    }
    if (kinds > 1) {
        char seen[200] = "", others[400] = "", at[256];
        size_t len = 0, olen = 0;
        for (int k = 1; k < 6 && len < sizeof seen - 40; k++)
            if (counts[k])
                len += (size_t)snprintf(seen + len, sizeof seen - len, "%s%s %llu",
                                        len ? ", " : "", names[k], (unsigned long long)counts[k]);
        /* where each kind that loses first appears: the values the shredder will reject */
        for (int k = 1; k < 6 && olen < sizeof others - 80; k++)
            if (counts[k] && k != best && n->first[k].ord)
                olen += (size_t)snprintf(others + olen, sizeof others - olen, "%sfirst %s%s",
                                         olen ? ", " : "; ", names[k],
                                         at_text(c->inf, &n->first[k], at, sizeof at));
        warn(c->inf, "field '%s' has mixed kinds (%s%s): inferred from %s; other values will "
                     "be rejected",
             path, seen, others, names[best]);
    }
    return best;
}

static bool looks_like_map(const inode *n) {
    if (n->overflow || n->nkids > MAP_MANY_KEYS)
        return true;
    /* sparse: on average an object carries under a quarter of the keys seen */
    return n->nkids >= MAP_SOME_KEYS && n->total_keys * 4 < (uint64_t)n->nkids * n->n_object;
}

static int build_type(build_ctx *c, const inode *n, floe_field *f, const char *path, int depth);

static floe_field *new_fields(build_ctx *c, size_t k) {
    floe_field *f = floe_arena_alloc(&c->s->arena, (k ? k : 1) * sizeof *f);
    if (!f)
        floe_error_set(c->err, FLOE_ENOMEM, "schema inference: out of memory");
    return f;
}

static int build_type(build_ctx *c, const inode *n, floe_field *f, const char *path, int depth) {
    char sub[512];
    if (depth > INFER_MAX_DEPTH) {
        f->type = FLOE_TYPE_STRING;
        return 0;
    }
    if (c->inf->opt.variant && kind_varies(n)) {
        f->type = FLOE_TYPE_VARIANT;
        return 0;
    }
    switch (dominant_kind(c, n, path)) {
    case K_NONE: f->type = FLOE_TYPE_STRING; return 0;
    case K_BOOL: f->type = FLOE_TYPE_BOOLEAN; return 0;
    case K_NUMBER: f->type = n->n_double ? FLOE_TYPE_DOUBLE : FLOE_TYPE_LONG; return 0;
    case K_STRING: {
        /* nanoseconds only when some value has them and every value fits their range */
        bool ns = c->inf->opt.nanos && n->s_nanos && !n->s_ns_out;
        if (n->s_tstz == n->n_string)
            f->type = ns ? FLOE_TYPE_TIMESTAMPTZ_NS : FLOE_TYPE_TIMESTAMPTZ;
        else if (n->s_ts == n->n_string)
            f->type = ns ? FLOE_TYPE_TIMESTAMP_NS : FLOE_TYPE_TIMESTAMP;
        else if (n->s_date == n->n_string)
            f->type = FLOE_TYPE_DATE;
        else
            f->type = FLOE_TYPE_STRING;
        return 0;
    }
    case K_ARRAY: {
        floe_field *el = new_fields(c, 1);
        if (!el)
            return FLOE_ENOMEM;
        f->type = FLOE_TYPE_LIST;
        f->children = el;
        f->nchildren = 1;
        el->name = "element";
        el->id = c->next_id++;
        snprintf(sub, sizeof sub, "%s.element", path);
        if (!n->elem)
            el->type = FLOE_TYPE_STRING;
        else
            FLOE_FORWARD_IF_ERROR(build_type(c, n->elem, el, sub, depth + 1));
        return 0;
    }
    case K_OBJECT:
    default:
        break;
    }
    if (n->nkids == 0 || looks_like_map(n)) {
        inode *all = inode_new();
        int rc = all ? 0 : FLOE_ENOMEM;
        for (size_t i = 0; i < n->nkids && rc == 0; i++)
            rc = merge(all, n->kids[i]);
        if (rc == 0 && n->overflow)
            rc = merge(all, n->overflow);
        if (rc < 0) {
            inode_free(all);
            return floe_error_set(c->err, FLOE_ENOMEM, "schema inference: out of memory");
        }
        if (c->inf->opt.variant && kind_varies(all)) {
            /* a free-form object: stored as it is */
            inode_free(all);
            f->type = FLOE_TYPE_VARIANT;
            return 0;
        }
        floe_field *kv = new_fields(c, 2);
        if (!kv) {
            inode_free(all);
            return FLOE_ENOMEM;
        }
        f->type = FLOE_TYPE_MAP;
        f->children = kv;
        f->nchildren = 2;
        kv[0].name = "key";
        kv[0].required = true;
        kv[0].type = FLOE_TYPE_STRING;
        kv[0].id = c->next_id++;
        kv[1].name = "value";
        kv[1].id = c->next_id++;
        snprintf(sub, sizeof sub, "%s.value", path);
        rc = build_type(c, all, &kv[1], sub, depth + 1);
        inode_free(all);
        return rc;
    }
    /* an object (not the record itself) whose fields' kinds vary: a free-form object,
     * stored as it is */
    if (c->inf->opt.variant && !c->inf->opt.variant_fields_only && path[0]) {
        for (size_t i = 0; i < n->nkids; i++)
            if (n->names[i][0] && kind_varies(n->kids[i])) {
                f->type = FLOE_TYPE_VARIANT;
                return 0;
            }
    }
    /* a struct; keys that cannot be field names are left out */
    size_t usable = 0;
    for (size_t i = 0; i < n->nkids; i++)
        usable += n->names[i][0] != '\0';
    floe_field *fields = new_fields(c, usable);
    if (!fields)
        return FLOE_ENOMEM;
    f->type = FLOE_TYPE_STRUCT;
    f->children = fields;
    f->nchildren = usable;
    size_t j = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        if (!n->names[i][0]) {
            char at[256];
            warn(c->inf, "object '%s' has an empty key (first%s): left out of the schema",
                 path, at_text(c->inf, &n->kids[i]->first[K_NONE], at, sizeof at));
            continue;
        }
        floe_field *kf = &fields[j++];
        kf->id = c->next_id++;
        kf->name = floe_arena_strdup(&c->s->arena, n->names[i]);
        if (!kf->name)
            return floe_error_set(c->err, FLOE_ENOMEM, "schema inference: out of memory");
        if (path[0])
            snprintf(sub, sizeof sub, "%s.%s", path, n->names[i]);
        else
            snprintf(sub, sizeof sub, "%s", n->names[i]);
        FLOE_FORWARD_IF_ERROR(build_type(c, n->kids[i], kf, sub, depth + 1));
    }
    return 0;
}

/* ---- numbers jansson cannot hold ------------------------------------------------------ */

/* Whether the number token t[0..n) overflows what jansson holds: an integer past int64,
 * a real past double. */
static bool number_overflows(const uint8_t *t, size_t n) {
    bool real = false;
    for (size_t i = 0; i < n; i++)
        real |= t[i] == '.' || t[i] == 'e' || t[i] == 'E';
    if (real) {
        char buf[512];
        if (n >= sizeof buf)
            return true; /* no JSON real that long is a number jansson reads back */
        memcpy(buf, t, n);
        buf[n] = '\0';
        errno = 0;
        double d = strtod(buf, NULL);
        return errno == ERANGE && (d > 1.0 || d < -1.0);
    }
    size_t i = t[0] == '-';
    uint64_t v = 0, limit = t[0] == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (t[i] < '0' || t[i] > '9')
            return false; /* not a number: jansson says so itself */
        if (v > (limit - (uint64_t)(t[i] - '0')) / 10)
            return true;
        v = v * 10 + (uint64_t)(t[i] - '0');
    }
    return false;
}

/* A copy of the record p[0..n) with each number jansson cannot hold written as 0.5: such
 * a field is a double (the shredder takes an integer past int64 as one, and rejects a
 * value past double's range with a reason naming the field), so inference must see it
 * rather than skip the record. NULL when out of memory. */
static char *tame_numbers(const uint8_t *p, size_t n, size_t *outn) {
    char *out = floe_malloc(n + n / 2 + 8);
    if (!out)
        return NULL;
    size_t o = 0;
    bool in_string = false;
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (in_string) {
            out[o++] = (char)c;
            if (c == '\\' && i + 1 < n)
                out[o++] = (char)p[++i];
            else if (c == '"')
                in_string = false;
            i++;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i + 1;
            while (j < n && ((p[j] >= '0' && p[j] <= '9') || p[j] == '.' || p[j] == 'e' ||
                             p[j] == 'E' || p[j] == '+' || p[j] == '-'))
                j++;
            if (number_overflows(p + i, j - i)) {
                memcpy(out + o, "0.5", 3);
                o += 3;
            } else {
                memcpy(out + o, p + i, j - i);
                o += j - i;
            }
            i = j;
        } else {
            in_string = c == '"';
            out[o++] = (char)c;
            i++;
        }
    }
    *outn = o;
    return out;
}

/* ---- public API ----------------------------------------------------------------------- */

int floe_infer_new(const floe_infer_options *opts, floe_infer **out, floe_error *err) {
    floe_infer *inf = floe_calloc(1, sizeof *inf);
    if (!inf || !(inf->root = inode_new())) {
        floe_free(inf);
        return floe_error_set(err, FLOE_ENOMEM, "schema inference: out of memory");
    }
    if (opts)
        inf->opt = *opts;
    *out = inf;
    return 0;
}

void floe_infer_free(floe_infer *inf) {
    if (!inf)
        return;
    inode_free(inf->root);
    for (size_t i = 0; i < inf->nwarnings; i++)
        floe_free(inf->warnings[i]);
    floe_free(inf->warnings);
    for (size_t i = 0; i < inf->nsources; i++)
        floe_free(inf->sources[i]);
    floe_free(inf->sources);
    floe_free(inf);
}

int floe_infer_at(floe_infer *inf, const char *source, int64_t line) {
    inf->at.line = line - 1; /* the feed counts the line it starts */
    inf->at.src = 0;
    if (!source)
        return 0;
    if (inf->nsources && !strcmp(inf->sources[inf->nsources - 1], source)) {
        inf->at.src = (uint32_t)inf->nsources;
        return 0;
    }
    if (inf->nsources >= MAX_SOURCES)
        return 0;
    char **ns = floe_realloc(inf->sources, (inf->nsources + 1) * sizeof *ns);
    if (!ns)
        return FLOE_ENOMEM;
    inf->sources = ns;
    if (!(ns[inf->nsources] = floe_strdup(source)))
        return FLOE_ENOMEM;
    inf->at.src = (uint32_t)++inf->nsources;
    return 0;
}

int floe_infer_feed(floe_infer *inf, const uint8_t *p, size_t n, floe_error *err) {
    const uint8_t *end = p + n;
    while (p < end) {
        if (inf->opt.max_records && inf->records >= inf->opt.max_records)
            return 1;
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        const uint8_t *q = p;
        inf->at.ord++;
        inf->at.line++;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < le) {
            json_error_t jerr;
            /* \u0000 is valid JSON in a string value (the shredder keeps it); jansson
             * still refuses it in a key, which skips the line with that reason */
            json_t *doc = json_loadb((const char *)p, (size_t)(le - p), JSON_ALLOW_NUL, &jerr);
            if (!doc && json_error_code(&jerr) == json_error_numeric_overflow) {
                size_t tn = 0;
                char *tamed = tame_numbers(p, (size_t)(le - p), &tn);
                if (!tamed)
                    return floe_error_set(err, FLOE_ENOMEM, "schema inference: out of memory");
                doc = json_loadb(tamed, tn, JSON_ALLOW_NUL, &jerr);
                floe_free(tamed);
            }
            if (!doc || !json_is_object(doc)) {
                if (!inf->skipped++) {
                    note_first(&inf->first_skipped, &inf->at);
                    skip_reason(inf->first_skipped_why, sizeof inf->first_skipped_why, doc,
                                &jerr);
                }
            } else {
                int rc = observe(inf->root, doc, 0, &inf->at);
                if (rc < 0) {
                    json_decref(doc);
                    return floe_error_set(err, rc, "schema inference: out of memory");
                }
                inf->records++;
            }
            if (doc)
                json_decref(doc);
        }
        p = nl ? nl + 1 : end;
    }
    return inf->opt.max_records && inf->records >= inf->opt.max_records ? 1 : 0;
}

int floe_infer_finish(floe_infer *inf, floe_schema **out, floe_error *err) {
    int rc = 0;
    if (!inf->records)
        return floe_error_set(err, FLOE_EINVALID,
                              "schema inference: no JSON object records in the sample");
    floe_schema *s = floe_schema_new();
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "schema inference: out of memory");
    build_ctx c = {.inf = inf, .s = s, .next_id = 1, .err = err};
    if (inf->root->nkids && !looks_like_map(inf->root)) {
        floe_field root = {0};
        FLOE_CHECK(build_type(&c, inf->root, &root, "", 0));
        s->root.children = root.children;
        s->root.nchildren = root.nchildren;
    } else {
        /* the records themselves look like maps: one map column holds each record */
        warn(inf, "records look like maps (many distinct keys): inferred one map column 'data'");
        floe_field *f = floe_arena_alloc(&s->arena, sizeof *f);
        if (!f)
            FLOE_FAIL(err, FLOE_ENOMEM, "schema inference: out of memory");
        f->name = "data";
        f->id = c.next_id++;
        FLOE_CHECK(build_type(&c, inf->root, f, "data", 0));
        s->root.children = f;
        s->root.nchildren = 1;
    }
    FLOE_CHECK(floe_schema_finish(s, err));
    *out = s;
    s = NULL;
done:
    floe_schema_free(s);
    return rc;
}

uint64_t floe_infer_records(const floe_infer *inf) { return inf->records; }
uint64_t floe_infer_skipped(const floe_infer *inf) { return inf->skipped; }
size_t floe_infer_warning_count(const floe_infer *inf) { return inf->nwarnings; }
const char *floe_infer_warning(const floe_infer *inf, size_t i) {
    return i < inf->nwarnings ? inf->warnings[i] : NULL;
}

int floe_schema_infer(const uint8_t *p, size_t n, const floe_infer_options *opts,
                      floe_schema **out, floe_error *err) {
    floe_infer *inf = NULL;
    int rc = floe_infer_new(opts, &inf, err);
    if (rc < 0)
        return rc;
    rc = floe_infer_feed(inf, p, n, err);
    if (rc >= 0)
        rc = floe_infer_finish(inf, out, err);
    floe_infer_free(inf);
    return rc < 0 ? rc : 0;
}
