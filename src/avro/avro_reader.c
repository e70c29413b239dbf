/*
 * avro_reader.c - Avro object container reader with schema resolution (Avro 1.11 "Object
 * Container Files", "Binary Encoding", "Schema Resolution"; Iceberg's rule that fields
 * are matched by field id).
 *
 * Everything read from the file is hostile. Each length, count and block size is checked
 * against the bytes that remain and against a cap before anything is allocated; the sync
 * marker after every block must equal the header's; a block must hold exactly its records.
 * Nesting is capped (FLOE_AVRO_MAX_DEPTH) and so is the number of values a block may
 * produce (a schema of empty records or nulls encodes to zero bytes per value, so bytes
 * alone do not bound the work). The decoded values of one block take at most a fixed
 * multiple of the block's bytes (max_values_bytes), as a Parquet footer's structures do.
 *
 * Arrays and maps may come in any number of blocks. Their items collect on a stack owned
 * by the reader (grown geometrically, reused across records; a nested array pushes above
 * its parent's items and pops its own) and go to the arena once, at their final size, so
 * memory and work stay linear in the items however they are blocked.
 *
 * Resolution is planned once at open: a tree of rplan nodes says, for each writer node,
 * how to decode it into the reader's shape (directly, promoted, record with field moves,
 * skips and defaults, enum symbol map, union branch choices). A plan is memoised per
 * (writer record, reader record) pair, so recursive schemas give a finite plan. Union
 * branches with no reader counterpart fail only if the data uses them (the spec's rule).
 *
 * States: open (header parsed, plan built, pos at the first block) -> in block (cursor over
 * the block's decoded bytes, records_left > 0) -> between blocks -> end (pos == size).
 */
#include "avro_internal.h"

#include <libdeflate.h>
#include <stdio.h>

#define DEFAULT_MAX_BLOCK_BYTES ((size_t)64 << 20)
#define DEFAULT_MAX_BLOCK_RECORDS ((int64_t)16 << 20)
#define DEFAULT_MAX_HEADER_BYTES ((size_t)64 << 20)
/* Decoded values of one block: VALUES_PER_BYTE per byte of the (decompressed) block plus
 * VALUES_SLACK. A value that takes bytes takes at most 56 bytes of memory per byte (a map
 * entry with a one-byte empty key and a null value); only zero-byte values (nulls, empty
 * records) and reader-side defaults cost memory without bytes, and the slack covers the
 * few that real files hold. */
#define VALUES_PER_BYTE 64
#define VALUES_SLACK ((size_t)16 << 20)
/* Header metadata entries: Iceberg writes ~8; thousands means a hostile file. */
#define MAX_META_ENTRIES 4096

typedef enum rkind {
    RS_DIRECT,  /* same primitive type */
    RS_PROMOTE, /* writer primitive -> reader primitive */
    RS_RECORD,
    RS_ENUM,
    RS_FIXED,
    RS_ARRAY,
    RS_MAP,
    RS_WUNION,  /* writer union: per-branch plans */
    RS_RUNION,  /* reader union, writer not: decode inner, set branch */
    RS_FAIL,    /* writer union branch the reader cannot take: error if used */
} rkind;

typedef struct rplan rplan;
struct rplan {
    rkind kind;
    const floe_avro_node *w, *r;
    /* RS_RECORD */
    int32_t *target;             /* per writer field: reader field index or -1 (skip) */
    rplan **fplans;              /* per writer field with a target */
    floe_avro_value *fill;       /* per reader field: default / null for unmatched ones */
    /* RS_ENUM */
    int32_t *sym_map;            /* writer symbol -> reader symbol or -1 */
    /* RS_ARRAY, RS_MAP, RS_RUNION */
    rplan *inner;
    int32_t r_branch;            /* RS_RUNION */
    /* RS_WUNION */
    rplan **branches;
    size_t min_item;             /* RS_ARRAY / RS_MAP: min encoded size of one item */
};

typedef struct meta_kv {
    char *key;
    uint8_t *value; /* NUL-terminated copy */
    size_t len;
} meta_kv;

struct floe_avro_reader {
    /* source */
    const uint8_t *mem;
    floe_input *in;
    int64_t size;
    floe_buf window; /* bytes read from `in` */
    /* header */
    floe_avro_schema *wschema;
    const floe_avro_node *rroot;
    floe_codec codec;
    uint8_t sync[FLOE_AVRO_SYNC_SIZE];
    meta_kv *meta;
    size_t n_meta;
    floe_arena meta_arena; /* meta copies and the resolution plan */
    rplan *plan;
    size_t min_record;
    /* options */
    size_t max_block_bytes;
    int64_t max_block_records;
    size_t max_header_bytes;
    size_t max_values_bytes; /* 0: VALUES_PER_BYTE x block bytes + VALUES_SLACK */
    uint64_t max_total_bytes; /* 0: none */
    uint64_t total_bytes;     /* decompressed bytes of the blocks loaded so far */
    char total_hint[128];
    bool narrow;
    char name[256];
    floe_arena own_arena;
    floe_arena *arena;     /* values go here */
    bool user_arena;
    size_t values_cap;     /* bytes the current block's values may take */
    size_t values_used;    /* bytes they took so far */
    floe_buf items;        /* stack of array and map items being collected */
    /* position */
    int64_t pos;           /* file offset of the next block */
    int64_t block_no;      /* blocks read */
    int64_t block_off;     /* file offset of the current block */
    int64_t records_left;
    int64_t records;
    avro_cursor cur;
    floe_buf block;        /* decompressed block */
    floe_codec_ctx *cctx;          /* the codecs but deflate */
    struct libdeflate_decompressor *inflater; /* deflate: made at the first block */
    floe_avro_schema_cache *cache; /* NULL, or where wschema and plan come from */
    bool shared_schema;    /* wschema and plan belong to the cache */
};

typedef struct cached_schema {
    const char *text;      /* the avro.schema bytes (in the cache's arena) */
    size_t len;
    bool narrow;
    floe_avro_schema *schema;
    rplan *plan;           /* in the cache's arena */
    size_t min_record;
} cached_schema;

struct floe_avro_schema_cache {
    floe_arena arena;
    cached_schema items[FLOE_AVRO_SCHEMA_CACHE_MAX];
    size_t n;
};

floe_avro_schema_cache *floe_avro_schema_cache_new(void) {
    floe_avro_schema_cache *c = floe_calloc(1, sizeof *c);
    if (c)
        floe_arena_init(&c->arena, 16 * 1024);
    return c;
}

void floe_avro_schema_cache_free(floe_avro_schema_cache *c) {
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        floe_avro_schema_free(c->items[i].schema);
    floe_arena_reset(&c->arena);
    floe_free(c);
}

/* ---- error context -------------------------------------------------------------------- */

static void prefix_place(const floe_avro_reader *r, floe_error *err, bool in_block) {
    if (in_block)
        floe_error_prefix(err, "block %lld (at byte %lld): ", (long long)r->block_no,
                          (long long)r->block_off);
    if (r->name[0])
        floe_error_prefix(err, "%s: ", r->name);
}

/* ---- source --------------------------------------------------------------------------- */

/* Make p point at n bytes at file offset off; FLOE_ECORRUPT if they pass the end. */
static int src_get(floe_avro_reader *r, int64_t off, size_t n, const uint8_t **p,
                   floe_error *err) {
    if (off < 0 || off > r->size || (uint64_t)(r->size - off) < n)
        return floe_error_at(err, FLOE_ECORRUPT, off, "unexpected end of file: %zu bytes at "
                             "byte %lld, file has %lld", n, (long long)off, (long long)r->size);
    if (r->mem) {
        *p = r->mem + off;
        return 0;
    }
    floe_buf_reset(&r->window);
    if (n && floe_buf_reserve(&r->window, n) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory reading %zu bytes", n);
    int rc = n ? floe_input_read_at(r->in, off, r->window.data, n, err) : 0;
    if (rc < 0)
        return rc;
    r->window.len = n;
    *p = r->window.data;
    return 0;
}

/* ---- header --------------------------------------------------------------------------- */

static int parse_header(floe_avro_reader *r, const uint8_t *p, size_t n, floe_error *err) {
    avro_cursor c;
    avro_cursor_init(&c, p, n, 0);
    FLOE_FORWARD_IF_ERROR(avro_need(&c, 4, err));
    if (memcmp(c.p, FLOE_AVRO_MAGIC, 4) != 0)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "not an Avro object container file (bad "
                             "magic)");
    c.p += 4;
    size_t cap = 0;
    for (;;) {
        int64_t count;
        FLOE_FORWARD_IF_ERROR(avro_read_long(&c, &count, err));
        if (count == 0)
            break;
        if (count < 0) {
            if (count == INT64_MIN)
                return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(&c),
                                     "header: bad metadata block count");
            count = -count;
            int64_t bsize;
            FLOE_FORWARD_IF_ERROR(avro_read_long(&c, &bsize, err));
            if (bsize < 0 || (uint64_t)bsize > avro_cursor_left(&c))
                return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(&c),
                                     "header: bad metadata block size %lld", (long long)bsize);
        }
        /* each entry is at least two length bytes */
        if ((uint64_t)count > MAX_META_ENTRIES - r->n_meta)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(&c),
                                 "header: %lld more metadata entries after %zu, past the cap "
                                 "of %d entries", (long long)count, r->n_meta,
                                 MAX_META_ENTRIES);
        if ((uint64_t)count > avro_cursor_left(&c) / 2)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(&c),
                                 "header: %lld metadata entries is more than the header can "
                                 "hold (%zu bytes left)", (long long)count,
                                 avro_cursor_left(&c));
        if (r->n_meta + (size_t)count > cap) {
            /* geometric: a header of thousands of one-entry blocks must not copy the
             * table once per block (4,096 blocks made ~200 MB of reallocations) */
            size_t ncap = cap ? cap * 2 : 16;
            if (ncap < r->n_meta + (size_t)count)
                ncap = r->n_meta + (size_t)count;
            if (ncap > MAX_META_ENTRIES)
                ncap = MAX_META_ENTRIES;
            meta_kv *m = floe_realloc(r->meta, ncap * sizeof *m);
            if (!m)
                return floe_error_set(err, FLOE_ENOMEM, "header: out of memory");
            r->meta = m;
            cap = ncap;
        }
        for (int64_t i = 0; i < count; i++) {
            size_t kl, vl;
            FLOE_FORWARD_IF_ERROR(avro_read_len(&c, &kl, err));
            const uint8_t *k = c.p;
            c.p += kl;
            FLOE_FORWARD_IF_ERROR(avro_read_len(&c, &vl, err));
            const uint8_t *v = c.p;
            c.p += vl;
            meta_kv *m = &r->meta[r->n_meta];
            m->key = floe_arena_strndup(&r->meta_arena, (const char *)k, kl);
            m->value = (uint8_t *)floe_arena_strndup(&r->meta_arena, (const char *)v, vl);
            if (!m->key || !m->value)
                return floe_error_set(err, FLOE_ENOMEM, "header: out of memory");
            m->len = vl;
            r->n_meta++;
        }
    }
    FLOE_FORWARD_IF_ERROR(avro_need(&c, FLOE_AVRO_SYNC_SIZE, err));
    memcpy(r->sync, c.p, FLOE_AVRO_SYNC_SIZE);
    c.p += FLOE_AVRO_SYNC_SIZE;
    r->pos = avro_cursor_off(&c);
    return 0;
}

/* ---- resolution plan ------------------------------------------------------------------ */

typedef struct memo_entry {
    const floe_avro_node *w, *r;
    rplan *p;
} memo_entry;

typedef struct plan_ctx {
    floe_arena *a;
    floe_error *err;
    bool narrow;
    memo_entry *memo;
    size_t n_memo, cap_memo;
} plan_ctx;

static const char *unqualified(const char *name) {
    if (!name)
        return "";
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

static bool promotable(floe_avro_type w, floe_avro_type r, bool narrow) {
    switch (w) {
    case FLOE_AVRO_INT:
        return r == FLOE_AVRO_LONG || r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE;
    case FLOE_AVRO_LONG:
        return r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE || (narrow && r == FLOE_AVRO_INT);
    case FLOE_AVRO_FLOAT:
        return r == FLOE_AVRO_DOUBLE;
    case FLOE_AVRO_STRING:
        return r == FLOE_AVRO_BYTES;
    case FLOE_AVRO_BYTES:
        return r == FLOE_AVRO_STRING;
    default:
        return false;
    }
}

/* Whether writer node w can be read as reader node r, looking one level deep. strict: the
 * same type and, for named types, the same unqualified name. Otherwise records and enums
 * match whatever their names (Iceberg writers name records r102, k117_v118, ...: ids, not
 * names, carry the meaning) and promotions count. */
static bool shallow_match(const floe_avro_node *w, const floe_avro_node *r, bool strict,
                          bool narrow) {
    if (w->type == r->type) {
        switch (w->type) {
        case FLOE_AVRO_RECORD:
        case FLOE_AVRO_ENUM:
            return !strict || strcmp(unqualified(w->name), unqualified(r->name)) == 0;
        case FLOE_AVRO_FIXED:
            return w->size == r->size &&
                   (!strict || strcmp(unqualified(w->name), unqualified(r->name)) == 0);
        default:
            return true;
        }
    }
    return !strict && promotable(w->type, r->type, narrow);
}

static int pick_branch(const floe_avro_node *w, const floe_avro_node *ru, bool narrow) {
    for (size_t b = 0; b < ru->n_branches; b++)
        if (shallow_match(w, ru->branches[b], true, narrow))
            return (int)b;
    for (size_t b = 0; b < ru->n_branches; b++)
        if (shallow_match(w, ru->branches[b], false, narrow))
            return (int)b;
    return -1;
}

static rplan *plan_new(plan_ctx *c, rkind k, const floe_avro_node *w, const floe_avro_node *r) {
    rplan *p = floe_arena_alloc(c->a, sizeof *p);
    if (!p) {
        floe_error_set(c->err, FLOE_ENOMEM, "avro reader: out of memory");
        return NULL;
    }
    p->kind = k;
    p->w = w;
    p->r = r;
    p->r_branch = -1;
    return p;
}

static int build_plan(plan_ctx *c, const floe_avro_node *w, const floe_avro_node *r, int depth,
                      rplan **out);

static int find_writer_field(const floe_avro_node *w, const floe_avro_field *rf, bool use_ids) {
    if (use_ids && rf->has_field_id) {
        for (size_t i = 0; i < w->n_fields; i++)
            if (w->fields[i].has_field_id && w->fields[i].field_id == rf->field_id)
                return (int)i;
        return -1;
    }
    for (size_t i = 0; i < w->n_fields; i++)
        if (strcmp(w->fields[i].name, rf->name) == 0)
            return (int)i;
    for (size_t a = 0; a < rf->n_aliases; a++)
        for (size_t i = 0; i < w->n_fields; i++)
            if (strcmp(w->fields[i].name, rf->aliases[a]) == 0)
                return (int)i;
    return -1;
}

static int build_record(plan_ctx *c, rplan *p, int depth) {
    const floe_avro_node *w = p->w, *r = p->r;
    bool wid = false, rid = false;
    for (size_t i = 0; i < w->n_fields; i++)
        wid |= w->fields[i].has_field_id;
    for (size_t i = 0; i < r->n_fields; i++)
        rid |= r->fields[i].has_field_id;
    p->target = w->n_fields ? floe_arena_alloc(c->a, w->n_fields * sizeof *p->target) : NULL;
    p->fplans = w->n_fields ? floe_arena_alloc(c->a, w->n_fields * sizeof *p->fplans) : NULL;
    p->fill = r->n_fields ? floe_arena_alloc(c->a, r->n_fields * sizeof *p->fill) : NULL;
    if ((w->n_fields && (!p->target || !p->fplans)) || (r->n_fields && !p->fill))
        return floe_error_set(c->err, FLOE_ENOMEM, "avro reader: out of memory");
    for (size_t i = 0; i < w->n_fields; i++)
        p->target[i] = -1;
    for (size_t ri = 0; ri < r->n_fields; ri++) {
        const floe_avro_field *rf = &r->fields[ri];
        int wi = find_writer_field(w, rf, wid && rid);
        if (wi >= 0 && p->target[wi] < 0) {
            p->target[wi] = (int32_t)ri;
            int rc = build_plan(c, w->fields[wi].type, rf->type, depth + 1, &p->fplans[wi]);
            if (rc < 0) {
                floe_error_prefix(c->err, "%s: ", rf->name);
                return rc;
            }
            continue;
        }
        /* the writer does not have it: default, else null for an optional field */
        if (rf->has_default) {
            p->fill[ri] = *rf->default_value;
            continue;
        }
        const floe_avro_node *t = rf->type;
        int nb = -1;
        if (t->type == FLOE_AVRO_UNION)
            for (size_t b = 0; b < t->n_branches && nb < 0; b++)
                if (t->branches[b]->type == FLOE_AVRO_NULL)
                    nb = (int)b;
        if (t->type == FLOE_AVRO_NULL || nb >= 0) {
            floe_avro_set_null(&p->fill[ri]);
            p->fill[ri].branch = nb;
            continue;
        }
        return floe_error_set(c->err, FLOE_ESCHEMA, "reader field %s (%s%d) is not in the "
                              "writer's schema and has no default", rf->name,
                              rf->has_field_id ? "id " : "no id", rf->has_field_id ? rf->field_id
                                                                                     : 0);
    }
    return 0;
}

static int build_plan(plan_ctx *c, const floe_avro_node *w, const floe_avro_node *r, int depth,
                      rplan **out) {
    if (depth > FLOE_AVRO_MAX_DEPTH)
        return floe_error_set(c->err, FLOE_ESCHEMA, "schemas nested deeper than %d",
                              FLOE_AVRO_MAX_DEPTH);
    rplan *p;
    if (w->type == FLOE_AVRO_UNION) {
        if (!(p = plan_new(c, RS_WUNION, w, r)))
            return FLOE_ENOMEM;
        p->branches = w->n_branches ? floe_arena_alloc(c->a, w->n_branches * sizeof *p->branches)
                                    : NULL;
        if (w->n_branches && !p->branches)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro reader: out of memory");
        for (size_t b = 0; b < w->n_branches; b++) {
            const floe_avro_node *wb = w->branches[b];
            bool ok = r->type == FLOE_AVRO_UNION ? pick_branch(wb, r, c->narrow) >= 0
                                                 : shallow_match(wb, r, false, c->narrow);
            if (!ok) {
                if (!(p->branches[b] = plan_new(c, RS_FAIL, wb, r)))
                    return FLOE_ENOMEM;
                continue;
            }
            FLOE_FORWARD_IF_ERROR(build_plan(c, wb, r, depth + 1, &p->branches[b]));
        }
        *out = p;
        return 0;
    }
    if (r->type == FLOE_AVRO_UNION) {
        int b = pick_branch(w, r, c->narrow);
        if (b < 0)
            return floe_error_set(c->err, FLOE_ESCHEMA, "writer type %s matches no branch of "
                                  "the reader's union", w->name ? w->name
                                                                : floe_avro_type_name(w->type));
        if (!(p = plan_new(c, RS_RUNION, w, r)))
            return FLOE_ENOMEM;
        p->r_branch = b;
        FLOE_FORWARD_IF_ERROR(build_plan(c, w, r->branches[b], depth + 1, &p->inner));
        *out = p;
        return 0;
    }
    if (!shallow_match(w, r, false, c->narrow))
        return floe_error_set(c->err, FLOE_ESCHEMA, "writer type %s cannot be read as %s",
                              w->name ? w->name : floe_avro_type_name(w->type),
                              r->name ? r->name : floe_avro_type_name(r->type));
    if (w->type != r->type) {
        if (!(p = plan_new(c, RS_PROMOTE, w, r)))
            return FLOE_ENOMEM;
        *out = p;
        return 0;
    }
    switch (w->type) {
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < c->n_memo; i++)
            if (c->memo[i].w == w && c->memo[i].r == r) {
                *out = c->memo[i].p;
                return 0;
            }
        if (!(p = plan_new(c, RS_RECORD, w, r)))
            return FLOE_ENOMEM;
        if (c->n_memo == c->cap_memo) {
            size_t cap = c->cap_memo ? c->cap_memo * 2 : 16;
            memo_entry *m = floe_realloc(c->memo, cap * sizeof *m);
            if (!m)
                return floe_error_set(c->err, FLOE_ENOMEM, "avro reader: out of memory");
            c->memo = m;
            c->cap_memo = cap;
        }
        c->memo[c->n_memo++] = (memo_entry){w, r, p};
        FLOE_FORWARD_IF_ERROR(build_record(c, p, depth));
        break;
    case FLOE_AVRO_ENUM:
        if (!(p = plan_new(c, RS_ENUM, w, r)))
            return FLOE_ENOMEM;
        p->sym_map = w->n_symbols ? floe_arena_alloc(c->a, w->n_symbols * sizeof *p->sym_map)
                                  : NULL;
        if (w->n_symbols && !p->sym_map)
            return floe_error_set(c->err, FLOE_ENOMEM, "avro reader: out of memory");
        for (size_t i = 0; i < w->n_symbols; i++) {
            p->sym_map[i] = -1;
            for (size_t k = 0; k < r->n_symbols; k++)
                if (strcmp(w->symbols[i], r->symbols[k]) == 0)
                    p->sym_map[i] = (int32_t)k;
        }
        break;
    case FLOE_AVRO_FIXED:
        if (!(p = plan_new(c, RS_FIXED, w, r)))
            return FLOE_ENOMEM;
        break;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP:
        if (!(p = plan_new(c, w->type == FLOE_AVRO_ARRAY ? RS_ARRAY : RS_MAP, w, r)))
            return FLOE_ENOMEM;
        p->min_item = floe_avro_node_min_size(w->items) + (w->type == FLOE_AVRO_MAP ? 1 : 0);
        FLOE_FORWARD_IF_ERROR(build_plan(c, w->items, r->items, depth + 1, &p->inner));
        break;
    default:
        if (!(p = plan_new(c, RS_DIRECT, w, r)))
            return FLOE_ENOMEM;
        break;
    }
    *out = p;
    return 0;
}

/* ---- decoding ------------------------------------------------------------------------- */

/* The cursor's budget: values the current block may still produce. */
static int spend(avro_cursor *c, uint64_t n, floe_error *err) {
    if (FLOE_UNLIKELY(c->budget < n))
        return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                             "block decodes to more values than its size allows");
    c->budget -= n;
    return 0;
}

static int skip_value(avro_cursor *c, const floe_avro_node *w, int depth, floe_error *err);

/* Array and map blocks: count (negative: then a byte size); 0 ends. */
static int read_block_count(avro_cursor *c, int64_t *count, int64_t *bytes,
                            floe_error *err) {
    FLOE_FORWARD_IF_ERROR(avro_read_long(c, count, err));
    *bytes = -1;
    if (*count < 0) {
        if (*count == INT64_MIN)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c), "bad item count");
        *count = -*count;
        FLOE_FORWARD_IF_ERROR(avro_read_long(c, bytes, err));
        if (*bytes < 0 || (uint64_t)*bytes > avro_cursor_left(c))
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                                 "item block size %lld passes the end of the block",
                                 (long long)*bytes);
    }
    return 0;
}

static int check_items(avro_cursor *c, int64_t count, size_t min_item, floe_error *err) {
    if (min_item && (uint64_t)count > avro_cursor_left(c) / min_item)
        return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                             "%lld items cannot fit in the %zu bytes left", (long long)count,
                             avro_cursor_left(c));
    return spend(c, (uint64_t)count, err);
}

static int skip_value(avro_cursor *c, const floe_avro_node *w, int depth, floe_error *err) {
    if (depth > FLOE_AVRO_MAX_DATA_DEPTH)
        return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c), "data nested deeper "
                             "than %d", FLOE_AVRO_MAX_DATA_DEPTH);
    FLOE_FORWARD_IF_ERROR(spend(c, 1, err));
    int64_t v;
    size_t n;
    switch (w->type) {
    case FLOE_AVRO_NULL:
        return 0;
    case FLOE_AVRO_BOOLEAN:
        return avro_need(c, 1, err) < 0 ? FLOE_ECORRUPT : (c->p++, 0);
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG:
    case FLOE_AVRO_ENUM:
        return avro_read_long(c, &v, err);
    case FLOE_AVRO_FLOAT:
        FLOE_FORWARD_IF_ERROR(avro_need(c, 4, err));
        c->p += 4;
        return 0;
    case FLOE_AVRO_DOUBLE:
        FLOE_FORWARD_IF_ERROR(avro_need(c, 8, err));
        c->p += 8;
        return 0;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
        FLOE_FORWARD_IF_ERROR(avro_read_len(c, &n, err));
        c->p += n;
        return 0;
    case FLOE_AVRO_FIXED:
        FLOE_FORWARD_IF_ERROR(avro_need(c, (size_t)w->size, err));
        c->p += w->size;
        return 0;
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < w->n_fields; i++)
            FLOE_FORWARD_IF_ERROR(skip_value(c, w->fields[i].type, depth + 1, err));
        return 0;
    case FLOE_AVRO_UNION:
        FLOE_FORWARD_IF_ERROR(avro_read_long(c, &v, err));
        if (v < 0 || (uint64_t)v >= w->n_branches)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                                 "union branch %lld out of range (%zu branches)", (long long)v,
                                 w->n_branches);
        return skip_value(c, w->branches[v], depth + 1, err);
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        size_t min_item = floe_avro_node_min_size(w->items) + (w->type == FLOE_AVRO_MAP);
        for (;;) {
            int64_t count, bytes;
            FLOE_FORWARD_IF_ERROR(read_block_count(c, &count, &bytes, err));
            if (count == 0)
                return 0;
            if (bytes >= 0) { /* the writer told us the size: jump */
                c->p += bytes;
                continue;
            }
            FLOE_FORWARD_IF_ERROR(check_items(c, count, min_item, err));
            for (int64_t i = 0; i < count; i++) {
                if (w->type == FLOE_AVRO_MAP) {
                    FLOE_FORWARD_IF_ERROR(avro_read_len(c, &n, err));
                    c->p += n;
                }
                FLOE_FORWARD_IF_ERROR(skip_value(c, w->items, depth + 1, err));
            }
        }
    }
    }
    return 0;
}

static int decode(floe_avro_reader *r, const rplan *p, floe_avro_value *out, int depth,
                  floe_error *err);

/* The current block's values go to the arena through these, which hold them to the
 * block's cap. */
static int values_too_big(const floe_avro_reader *r, floe_error *err) {
    return floe_error_at(err, FLOE_ELIMIT, avro_cursor_off(&r->cur), "the block decodes to "
                         "more than %zu bytes of values (the cap for a block of its size; "
                         "see max_values_bytes)", r->values_cap);
}

static int values_alloc(floe_avro_reader *r, size_t n, void **out, floe_error *err) {
    if (n > r->values_cap - r->values_used)
        return values_too_big(r, err);
    void *p = floe_arena_alloc(r->arena, n);
    if (!p)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory for %zu bytes of values", n);
    r->values_used += n;
    *out = p;
    return 0;
}

/* A NUL-terminated copy of p[0..n). */
static int values_dup(floe_avro_reader *r, const uint8_t *p, size_t n, void **out,
                      floe_error *err) {
    void *d;
    if (n == SIZE_MAX)
        return values_too_big(r, err);
    FLOE_FORWARD_IF_ERROR(values_alloc(r, n + 1, &d, err));
    if (n)
        memcpy(d, p, n);
    *out = d;
    return 0;
}

static int decode_prim(floe_avro_reader *r, const floe_avro_node *w, floe_avro_value *out,
                       floe_error *err) {
    avro_cursor *c = &r->cur;
    size_t n;
    out->type = w->type;
    out->branch = -1;
    switch (w->type) {
    case FLOE_AVRO_NULL:
        return 0;
    case FLOE_AVRO_BOOLEAN:
        FLOE_FORWARD_IF_ERROR(avro_need(c, 1, err));
        if (*c->p > 1)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c), "boolean byte %u",
                                 *c->p);
        out->u.b = *c->p++ != 0;
        return 0;
    case FLOE_AVRO_INT:
        return avro_read_int(c, &out->u.i, err);
    case FLOE_AVRO_LONG:
        return avro_read_long(c, &out->u.l, err);
    case FLOE_AVRO_FLOAT: {
        FLOE_FORWARD_IF_ERROR(avro_need(c, 4, err));
        uint32_t bits = floe_load_le32(c->p);
        memcpy(&out->u.f, &bits, 4);
        c->p += 4;
        return 0;
    }
    case FLOE_AVRO_DOUBLE: {
        FLOE_FORWARD_IF_ERROR(avro_need(c, 8, err));
        uint64_t bits = floe_load_le64(c->p);
        memcpy(&out->u.d, &bits, 8);
        c->p += 8;
        return 0;
    }
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING: {
        FLOE_FORWARD_IF_ERROR(avro_read_len(c, &n, err));
        void *s;
        FLOE_FORWARD_IF_ERROR(values_dup(r, c->p, n, &s, err));
        out->u.bytes.p = s;
        out->u.bytes.n = n;
        c->p += n;
        return 0;
    }
    default:
        return floe_error_set(err, FLOE_EINTERNAL, "avro reader: not a primitive");
    }
}

static int decode_items(floe_avro_reader *r, const rplan *p, floe_avro_value *out, int depth,
                        floe_error *err) {
    avro_cursor *c = &r->cur;
    bool is_map = p->kind == RS_MAP;
    size_t esz = is_map ? sizeof(floe_avro_map_entry) : sizeof(floe_avro_value);
    size_t base = r->items.len; /* this array's items start here on the stack */
    size_t total = 0;
    int rc = 0;
    for (;;) {
        int64_t count, bytes;
        FLOE_CHECK(read_block_count(c, &count, &bytes, err));
        if (count == 0)
            break;
        FLOE_CHECK(check_items(c, count, p->min_item, err));
        for (int64_t k = 0; k < count; k++) {
            floe_avro_map_entry e;
            floe_avro_value v;
            if (is_map) {
                size_t kl;
                FLOE_CHECK(avro_read_len(c, &kl, err));
                char *key;
                FLOE_CHECK(values_dup(r, c->p, kl, (void **)&key, err));
                e.key = key;
                e.key_len = kl;
                c->p += kl;
                FLOE_CHECK(decode(r, p->inner, &e.value, depth + 1, err));
            } else {
                FLOE_CHECK(decode(r, p->inner, &v, depth + 1, err));
            }
            rc = floe_buf_append(&r->items, is_map ? (const void *)&e : (const void *)&v, esz);
            if (rc < 0) {
                rc = rc == FLOE_ELIMIT ? values_too_big(r, err)
                                       : floe_error_set(err, FLOE_ENOMEM, "out of memory");
                goto done;
            }
            total++;
        }
    }
    void *arr = NULL;
    if (total) {
        FLOE_CHECK(values_alloc(r, total * esz, &arr, err));
        memcpy(arr, r->items.data + base, total * esz);
    }
    out->type = is_map ? FLOE_AVRO_MAP : FLOE_AVRO_ARRAY;
    out->branch = -1;
    if (is_map) {
        out->u.map.entries = arr;
        out->u.map.n = total;
    } else {
        out->u.list.items = arr;
        out->u.list.n = total;
    }
done:
    r->items.len = base;
    return rc;
}

static int decode(floe_avro_reader *r, const rplan *p, floe_avro_value *out, int depth,
                  floe_error *err) {
    avro_cursor *c = &r->cur;
    if (depth > FLOE_AVRO_MAX_DATA_DEPTH)
        return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c), "data nested deeper "
                             "than %d", FLOE_AVRO_MAX_DATA_DEPTH);
    FLOE_FORWARD_IF_ERROR(spend(c, 1, err));
    switch (p->kind) {
    case RS_DIRECT:
        return decode_prim(r, p->w, out, err);
    case RS_PROMOTE: {
        FLOE_FORWARD_IF_ERROR(decode_prim(r, p->w, out, err));
        floe_avro_type to = p->r->type;
        switch (p->w->type) {
        case FLOE_AVRO_INT:
            if (to == FLOE_AVRO_LONG)
                floe_avro_set_long(out, out->u.i);
            else if (to == FLOE_AVRO_FLOAT)
                floe_avro_set_float(out, (float)out->u.i);
            else
                floe_avro_set_double(out, out->u.i);
            break;
        case FLOE_AVRO_LONG:
            if (to == FLOE_AVRO_INT) {
                if (out->u.l < INT32_MIN || out->u.l > INT32_MAX)
                    return floe_error_at(err, FLOE_ESCHEMA, avro_cursor_off(c),
                                         "long %lld does not fit the reader's int",
                                         (long long)out->u.l);
                floe_avro_set_int(out, (int32_t)out->u.l);
            } else if (to == FLOE_AVRO_FLOAT) {
                floe_avro_set_float(out, (float)out->u.l);
            } else {
                floe_avro_set_double(out, (double)out->u.l);
            }
            break;
        case FLOE_AVRO_FLOAT:
            floe_avro_set_double(out, out->u.f);
            break;
        default: /* string <-> bytes: same bytes */
            out->type = to;
            break;
        }
        return 0;
    }
    case RS_FIXED: {
        size_t n = (size_t)p->w->size;
        FLOE_FORWARD_IF_ERROR(avro_need(c, n, err));
        void *d;
        FLOE_FORWARD_IF_ERROR(values_dup(r, c->p, n, &d, err));
        floe_avro_set_fixed(out, d, n);
        c->p += n;
        return 0;
    }
    case RS_ENUM: {
        int32_t i;
        FLOE_FORWARD_IF_ERROR(avro_read_int(c, &i, err));
        if (i < 0 || (size_t)i >= p->w->n_symbols)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                                 "enum %s: symbol %d out of range", p->w->name, i);
        int32_t m = p->sym_map[i];
        if (m < 0)
            m = p->r->enum_default;
        if (m < 0)
            return floe_error_at(err, FLOE_ESCHEMA, avro_cursor_off(c),
                                 "enum %s: symbol %s is not in the reader's enum", p->w->name,
                                 p->w->symbols[i]);
        floe_avro_set_enum(out, m);
        return 0;
    }
    case RS_RECORD: {
        const floe_avro_node *w = p->w, *rn = p->r;
        floe_avro_value *items = NULL;
        if (rn->n_fields) {
            void *m;
            FLOE_FORWARD_IF_ERROR(values_alloc(r, rn->n_fields * sizeof *items, &m, err));
            items = m;
            memcpy(items, p->fill, rn->n_fields * sizeof *items);
        }
        for (size_t i = 0; i < w->n_fields; i++) {
            int rc = p->target[i] >= 0
                         ? decode(r, p->fplans[i], &items[p->target[i]], depth + 1, err)
                         : skip_value(c, w->fields[i].type, depth + 1, err);
            if (rc < 0) {
                floe_error_prefix(err, "%s: ", w->fields[i].name);
                return rc;
            }
        }
        out->type = FLOE_AVRO_RECORD;
        out->branch = -1;
        out->u.list.items = items;
        out->u.list.n = rn->n_fields;
        return 0;
    }
    case RS_ARRAY:
    case RS_MAP:
        return decode_items(r, p, out, depth, err);
    case RS_WUNION: {
        int64_t b;
        FLOE_FORWARD_IF_ERROR(avro_read_long(c, &b, err));
        if (b < 0 || (uint64_t)b >= p->w->n_branches)
            return floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(c),
                                 "union branch %lld out of range (%zu branches)", (long long)b,
                                 p->w->n_branches);
        const rplan *bp = p->branches[b];
        if (bp->kind == RS_FAIL)
            return floe_error_at(err, FLOE_ESCHEMA, avro_cursor_off(c),
                                 "union branch %lld (%s) has no counterpart in the reader's "
                                 "schema", (long long)b,
                                 bp->w->name ? bp->w->name : floe_avro_type_name(bp->w->type));
        return decode(r, bp, out, depth + 1, err);
    }
    case RS_RUNION:
        FLOE_FORWARD_IF_ERROR(decode(r, p->inner, out, depth + 1, err));
        out->branch = p->r_branch;
        return 0;
    case RS_FAIL:
        break;
    }
    return floe_error_set(err, FLOE_EINTERNAL, "avro reader: bad plan");
}

/* ---- blocks --------------------------------------------------------------------------- */

/* Avro "deflate" blocks are raw RFC 1951 streams. Decoded here rather than through the
 * codec layer because real writers leave bytes after the end of the stream: PyIceberg
 * strips a zlib wrapper as [2:-1] and keeps three bytes of the Adler-32 trailer, and
 * Python's zlib, Java's Inflater and avsc all ignore them. So do we; the stream itself
 * must still be complete.
 *
 * The whole block is in memory, so it is inflated in one call by libdeflate (about twice
 * zlib's speed, and no 40 KiB of zlib state and window allocated and zeroed for every
 * block: a plan of 10,000 manifests inflated 10,000 blocks through zlib). The output's
 * size is not known beforehand: a buffer too small is doubled and the block inflated
 * again, up to the cap. */
static int inflate_block(floe_avro_reader *r, const uint8_t *src, size_t n, floe_error *err) {
    /* The buffer may hold one byte past the cap: a stream that fills the cap exactly
     * ends there, one that needs that byte is past it. */
    size_t cap = r->max_block_bytes;
    size_t lim = cap < SIZE_MAX ? cap + 1 : SIZE_MAX;
    if (!r->inflater && !(r->inflater = libdeflate_alloc_decompressor()))
        return floe_error_set(err, FLOE_ENOMEM, "deflate: out of memory");
    /* a first guess: what the buffer already holds, at least 64 KiB and 4 x the input */
    size_t room = r->block.cap > 65536 ? r->block.cap - 1 : 65536;
    if (n < SIZE_MAX / 4 && room < n * 4)
        room = n * 4;
    r->block.max = lim;
    for (;;) {
        if (room > lim)
            room = lim;
        if (floe_buf_reserve(&r->block, room) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "deflate: out of memory");
        size_t used = 0, got = 0;
        enum libdeflate_result res = libdeflate_deflate_decompress_ex(
            r->inflater, src, n, r->block.data, room, &used, &got);
        if (res == LIBDEFLATE_SUCCESS && got <= cap) {
            r->block.len = got;
            return 0;
        }
        if (res == LIBDEFLATE_SUCCESS || (res == LIBDEFLATE_INSUFFICIENT_SPACE && room >= lim))
            return floe_error_set(err, FLOE_ELIMIT, "deflate: block inflates past %zu bytes, "
                                  "the cap for one block", cap);
        if (res != LIBDEFLATE_INSUFFICIENT_SPACE)
            return floe_error_set(err, FLOE_ECORRUPT, "deflate: corrupt or truncated stream");
        room = room > lim / 2 ? lim : room * 2;
    }
}

static int load_block(floe_avro_reader *r, floe_error *err) {
    const uint8_t *p;
    int64_t off = r->pos;
    size_t hn = (size_t)(r->size - off < 20 ? r->size - off : 20);
    FLOE_FORWARD_IF_ERROR(src_get(r, off, hn, &p, err));
    avro_cursor c;
    avro_cursor_init(&c, p, hn, off);
    int64_t count, size;
    FLOE_FORWARD_IF_ERROR(avro_read_long(&c, &count, err));
    FLOE_FORWARD_IF_ERROR(avro_read_long(&c, &size, err));
    int64_t data_off = avro_cursor_off(&c);
    if (count < 0 || count > r->max_block_records)
        return floe_error_at(err, FLOE_ECORRUPT, off, "record count %lld out of range (cap "
                             "%lld)", (long long)count, (long long)r->max_block_records);
    if (size < 0 || (uint64_t)size > r->max_block_bytes)
        return floe_error_at(err, FLOE_ECORRUPT, off, "block size %lld out of range (cap %zu)",
                             (long long)size, r->max_block_bytes);
    if (size > r->size - data_off || r->size - data_off - size < FLOE_AVRO_SYNC_SIZE)
        return floe_error_at(err, FLOE_ECORRUPT, off, "truncated: block of %lld bytes and its "
                             "sync marker pass the end of the file (%lld bytes left)",
                             (long long)size, (long long)(r->size - data_off));
    FLOE_FORWARD_IF_ERROR(src_get(r, data_off, (size_t)size + FLOE_AVRO_SYNC_SIZE, &p, err));
    if (memcmp(p + size, r->sync, FLOE_AVRO_SYNC_SIZE) != 0)
        return floe_error_at(err, FLOE_ECORRUPT, data_off + size, "bad sync marker at byte "
                             "%lld", (long long)(data_off + size));
    const uint8_t *data = p;
    size_t n = (size_t)size;
    int64_t base = data_off;
    if (r->codec != FLOE_CODEC_UNCOMPRESSED) {
        size_t cn = n;
        if (r->codec == FLOE_CODEC_SNAPPY) {
            if (n < 4)
                return floe_error_at(err, FLOE_ECORRUPT, data_off, "snappy block of %zu bytes "
                                     "has no CRC", n);
            cn = n - 4;
        }
        floe_buf_reset(&r->block);
        r->block.max = r->max_block_bytes;
        int rc = r->codec == FLOE_CODEC_DEFLATE
                     ? inflate_block(r, data, cn, err)
                     : floe_codec_decompress_buf(r->cctx, r->codec, data, cn, &r->block, err);
        if (rc < 0) {
            /* A block that will not decompress (or decompresses past the cap) is a
             * corrupt file, whatever the codec layer calls it. */
            if (rc != FLOE_ENOMEM)
                rc = FLOE_ECORRUPT;
            if (err) {
                err->code = rc;
                err->offset = data_off;
            }
            return rc;
        }
        if (r->codec == FLOE_CODEC_SNAPPY) {
            uint32_t want = ((uint32_t)data[cn] << 24) | ((uint32_t)data[cn + 1] << 16) |
                            ((uint32_t)data[cn + 2] << 8) | data[cn + 3];
            if (floe_crc32(0, r->block.data, r->block.len) != want)
                return floe_error_at(err, FLOE_ECORRUPT, data_off, "snappy block CRC mismatch");
        }
        data = r->block.data;
        n = r->block.len;
        base = 0; /* offsets inside a decompressed block are block-relative */
    }
    r->total_bytes += n;
    if (r->max_total_bytes && r->total_bytes > r->max_total_bytes)
        return floe_error_at(err, FLOE_ELIMIT, off, "the file's blocks decompress to more than "
                             "%llu bytes together (%llu with this one), past the cap for one "
                             "file%s%s", (unsigned long long)r->max_total_bytes,
                             (unsigned long long)r->total_bytes,
                             r->total_hint[0] ? "; raise it with " : "", r->total_hint);
    if (r->min_record && (uint64_t)count > n / r->min_record)
        return floe_error_at(err, FLOE_ECORRUPT, off, "%lld records cannot fit in %zu bytes",
                             (long long)count, n);
    if (!r->user_arena)
        floe_arena_reset(r->arena);
    avro_cursor_init(&r->cur, data, n, base);
    r->records_left = count;
    r->block_off = off;
    r->cur.budget = (uint64_t)n * 16 + 65536 + (uint64_t)count * 4;
    r->values_cap = r->max_values_bytes;
    if (!r->values_cap)
        r->values_cap = n > (SIZE_MAX - VALUES_SLACK) / VALUES_PER_BYTE
                            ? SIZE_MAX
                            : n * VALUES_PER_BYTE + VALUES_SLACK;
    r->values_used = 0;
    r->items.max = r->values_cap;
    r->pos = data_off + size + FLOE_AVRO_SYNC_SIZE;
    return 0;
}

/* Load blocks until one has a record left: 1 when there is one, 0 at the end. */
static int at_record(floe_avro_reader *r, floe_error *err) {
    while (r->records_left == 0) {
        if (r->block_no > 0 && avro_cursor_left(&r->cur) != 0) {
            floe_error_at(err, FLOE_ECORRUPT, avro_cursor_off(&r->cur),
                          "%zu bytes left over after the block's last record",
                          avro_cursor_left(&r->cur));
            prefix_place(r, err, true);
            return FLOE_ECORRUPT;
        }
        if (r->pos >= r->size)
            return 0;
        r->block_no++;
        r->block_off = r->pos;
        avro_cursor_init(&r->cur, NULL, 0, 0);
        int rc = load_block(r, err);
        if (rc < 0) {
            prefix_place(r, err, true);
            return rc;
        }
    }
    return 1;
}

int floe_avro_reader_next(floe_avro_reader *r, const floe_avro_value **out, floe_error *err) {
    int rc = at_record(r, err);
    if (rc <= 0)
        return rc;
    void *v = NULL;
    rc = values_alloc(r, sizeof(floe_avro_value), &v, err);
    if (rc == 0)
        rc = decode(r, r->plan, v, 0, err);
    if (rc < 0) {
        floe_error_prefix(err, "record %lld: ", (long long)r->records);
        prefix_place(r, err, true);
        return rc;
    }
    r->records_left--;
    r->records++;
    *out = v;
    return 1;
}

int floe_avro_reader_raw_next(floe_avro_reader *r, floe_avro_cursor *c, floe_error *err) {
    int rc = at_record(r, err);
    if (rc == 1)
        *c = r->cur;
    return rc;
}

int floe_avro_reader_raw_done(floe_avro_reader *r, const floe_avro_cursor *c,
                              floe_error *err) {
    if (r->records_left <= 0 || c->start != r->cur.start || c->end != r->cur.end ||
        c->p < r->cur.p || c->p > r->cur.end || c->budget > r->cur.budget)
        return floe_error_set(err, FLOE_EINVALID, "avro reader: raw_done with a cursor "
                              "that is not the current block's");
    r->cur.p = c->p;
    r->cur.budget = c->budget;
    r->records_left--;
    r->records++;
    return 0;
}

void floe_avro_reader_raw_error(const floe_avro_reader *r, floe_error *err) {
    floe_error_prefix(err, "record %lld: ", (long long)r->records);
    prefix_place(r, err, true);
}

int floe_avro_cursor_skip(floe_avro_cursor *c, const floe_avro_node *w, floe_error *err) {
    return skip_value(c, w, 0, err);
}

/* ---- open / close --------------------------------------------------------------------- */

static int reader_init(floe_avro_reader *r, const floe_avro_reader_options *opts,
                       floe_error *err) {
    static const floe_avro_reader_options defaults = {0};
    if (!opts)
        opts = &defaults;
    r->max_block_bytes = opts->max_block_bytes ? opts->max_block_bytes : DEFAULT_MAX_BLOCK_BYTES;
    r->max_block_records =
        opts->max_block_records > 0 ? opts->max_block_records : DEFAULT_MAX_BLOCK_RECORDS;
    r->max_header_bytes = opts->max_header_bytes ? opts->max_header_bytes
                                                 : DEFAULT_MAX_HEADER_BYTES;
    r->max_values_bytes = opts->max_values_bytes;
    r->max_total_bytes = opts->max_total_bytes;
    if (opts->total_cap_hint)
        snprintf(r->total_hint, sizeof r->total_hint, "%s", opts->total_cap_hint);
    r->narrow = opts->narrow_long_to_int;
    if (opts->name)
        snprintf(r->name, sizeof r->name, "%s", opts->name);
    floe_arena_init(&r->meta_arena, 8192);
    floe_arena_init(&r->own_arena, 64 * 1024);
    r->arena = opts->arena ? opts->arena : &r->own_arena;
    r->user_arena = opts->arena != NULL;
    floe_buf_init(&r->window, 0);
    floe_buf_init(&r->block, r->max_block_bytes);
    floe_buf_init(&r->items, 0);
    (void)err;
    return 0;
}

/* After the header is in: schema, codec, plan. */
static int reader_setup(floe_avro_reader *r, const floe_avro_reader_options *opts,
                        floe_error *err) {
    size_t sl;
    const char *sj = floe_avro_reader_meta(r, "avro.schema", &sl);
    if (!sj)
        return floe_error_set(err, FLOE_ECORRUPT, "header has no avro.schema");
    floe_avro_schema_cache *cache = opts && opts->reader_schema ? NULL : r->cache;
    for (size_t i = 0; cache && i < cache->n; i++) {
        const cached_schema *cs = &cache->items[i];
        if (cs->len == sl && cs->narrow == r->narrow && !memcmp(cs->text, sj, sl)) {
            r->wschema = cs->schema;
            r->shared_schema = true;
            r->plan = cs->plan;
            r->min_record = cs->min_record;
            r->rroot = floe_avro_schema_root(cs->schema);
            break;
        }
    }
    int rc = r->shared_schema ? 0 : floe_avro_schema_parse(sj, sl, &r->wschema, err);
    if (rc < 0) {
        /* a schema that does not parse is a corrupt file */
        floe_error_prefix(err, "header avro.schema: ");
        if (rc != FLOE_ENOMEM) {
            rc = FLOE_ECORRUPT;
            if (err)
                err->code = rc;
        }
        return rc;
    }
    size_t cl;
    const char *cn = floe_avro_reader_meta(r, "avro.codec", &cl);
    r->codec = FLOE_CODEC_UNCOMPRESSED;
    if (cn && floe_avro_codec_from_avro_name(cn, cl, &r->codec) < 0)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "avro codec \"%.*s\" is not supported",
                              (int)(cl > 64 ? 64 : cl), cn);
    if (r->codec != FLOE_CODEC_UNCOMPRESSED && r->codec != FLOE_CODEC_DEFLATE &&
        !(r->cctx = floe_codec_ctx_new()))
        return floe_error_set(err, FLOE_ENOMEM, "avro reader: out of memory");
    if (r->shared_schema)
        return 0;
    const floe_avro_node *w = floe_avro_schema_root(r->wschema);
    r->rroot = opts && opts->reader_schema ? floe_avro_schema_root(opts->reader_schema) : w;
    /* a schema the cache will keep has its plan built in the cache's arena */
    bool keep = cache && cache->n < FLOE_AVRO_SCHEMA_CACHE_MAX;
    plan_ctx pc = {.a = keep ? &cache->arena : &r->meta_arena, .err = err, .narrow = r->narrow};
    rc = build_plan(&pc, w, r->rroot, 0, &r->plan);
    floe_free(pc.memo);
    if (rc < 0) {
        floe_error_prefix(err, "schema resolution: ");
        return rc;
    }
    r->min_record = floe_avro_node_min_size(w);
    const char *text = keep ? floe_arena_memdup(&cache->arena, sj, sl) : NULL;
    if (text) {
        cache->items[cache->n++] = (cached_schema){.text = text, .len = sl, .narrow = r->narrow,
                                                   .schema = r->wschema, .plan = r->plan,
                                                   .min_record = r->min_record};
        r->shared_schema = true;
    }
    return 0;
}

int floe_avro_reader_open_mem(const void *p, size_t n, const floe_avro_reader_options *opts,
                              floe_avro_reader **out, floe_error *err) {
    return floe_avro_reader_open_mem_cached(p, n, opts, NULL, out, err);
}

int floe_avro_reader_open_mem_cached(const void *p, size_t n,
                                     const floe_avro_reader_options *opts,
                                     floe_avro_schema_cache *cache, floe_avro_reader **out,
                                     floe_error *err) {
    int rc = 0;
    floe_avro_reader *r = floe_calloc(1, sizeof *r);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "avro reader: out of memory");
    FLOE_CHECK(reader_init(r, opts, err));
    r->cache = cache;
    r->mem = p ? p : (const uint8_t *)"";
    r->size = (int64_t)n;
    rc = parse_header(r, r->mem, n < r->max_header_bytes ? n : r->max_header_bytes, err);
    if (rc < 0) {
        floe_error_prefix(err, "header: ");
        goto done;
    }
    FLOE_CHECK(reader_setup(r, opts, err));
done:
    if (rc < 0) {
        if (r->name[0])
            floe_error_prefix(err, "%s: ", r->name);
        floe_avro_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int floe_avro_reader_open_input(floe_input *in, const floe_avro_reader_options *opts,
                                floe_avro_reader **out, floe_error *err) {
    return floe_avro_reader_open_input_cached(in, opts, NULL, out, err);
}

int floe_avro_reader_open_input_cached(floe_input *in, const floe_avro_reader_options *opts,
                                       floe_avro_schema_cache *cache, floe_avro_reader **out,
                                       floe_error *err) {
    int rc = 0;
    floe_avro_reader *r = floe_calloc(1, sizeof *r);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "avro reader: out of memory");
    FLOE_CHECK(reader_init(r, opts, err));
    r->cache = cache;
    if (!r->name[0])
        snprintf(r->name, sizeof r->name, "%s", floe_input_uri(in));
    r->in = in;
    r->size = floe_input_size(in);
    if (r->size < 0)
        FLOE_FAIL(err, FLOE_EIO, "cannot tell the size of the file");
    /* The header's size is not known before it is parsed: read a window and widen it
     * while the parse runs off its end, up to the cap. */
    size_t cap = (uint64_t)r->size < r->max_header_bytes ? (size_t)r->size
                                                           : r->max_header_bytes;
    size_t win = cap < 64 * 1024 ? cap : 64 * 1024;
    for (;;) {
        const uint8_t *p;
        FLOE_CHECK(src_get(r, 0, win, &p, err));
        r->n_meta = 0;
        floe_arena_reset(&r->meta_arena);
        floe_error scratch;
        floe_error_clear(&scratch);
        rc = parse_header(r, p, win, &scratch);
        if (rc == 0)
            break;
        if (rc != FLOE_ECORRUPT || win >= cap || memcmp(p, FLOE_AVRO_MAGIC, win < 4 ? win : 4)) {
            if (err)
                *err = scratch;
            floe_error_prefix(err, "header: ");
            goto done;
        }
        win = win > cap / 4 ? cap : win * 4;
    }
    FLOE_CHECK(reader_setup(r, opts, err));
done:
    if (rc < 0) {
        if (r->name[0])
            floe_error_prefix(err, "%s: ", r->name);
        floe_avro_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void floe_avro_reader_close(floe_avro_reader *r) {
    if (!r)
        return;
    if (!r->shared_schema)
        floe_avro_schema_free(r->wschema);
    floe_free(r->meta);
    floe_arena_reset(&r->meta_arena);
    floe_arena_reset(&r->own_arena);
    floe_buf_free(&r->window);
    floe_buf_free(&r->block);
    floe_buf_free(&r->items);
    floe_codec_ctx_free(r->cctx);
    if (r->inflater)
        libdeflate_free_decompressor(r->inflater);
    floe_free(r);
}

/* ---- accessors ------------------------------------------------------------------------ */

const floe_avro_schema *floe_avro_reader_writer_schema(const floe_avro_reader *r) {
    return r->wschema;
}

const floe_avro_node *floe_avro_reader_schema(const floe_avro_reader *r) {
    return r->rroot;
}

floe_codec floe_avro_reader_codec(const floe_avro_reader *r) {
    return r->codec;
}

const void *floe_avro_reader_meta(const floe_avro_reader *r, const char *key, size_t *len) {
    for (size_t i = 0; i < r->n_meta; i++)
        if (strcmp(r->meta[i].key, key) == 0) {
            if (len)
                *len = r->meta[i].len;
            return r->meta[i].value;
        }
    return NULL;
}

const char *floe_avro_reader_meta_str(const floe_avro_reader *r, const char *key) {
    return floe_avro_reader_meta(r, key, NULL);
}

size_t floe_avro_reader_meta_count(const floe_avro_reader *r) {
    return r->n_meta;
}

void floe_avro_reader_meta_at(const floe_avro_reader *r, size_t i, const char **key,
                              const void **value, size_t *len) {
    *key = r->meta[i].key;
    *value = r->meta[i].value;
    *len = r->meta[i].len;
}

const uint8_t *floe_avro_reader_sync(const floe_avro_reader *r) {
    return r->sync;
}

int64_t floe_avro_reader_records(const floe_avro_reader *r) {
    return r->records;
}

int64_t floe_avro_reader_blocks(const floe_avro_reader *r) {
    return r->block_no;
}
