/*
 * manifest_fast.c - streaming decoder of Iceberg manifest_entry records (spec "Manifests";
 * Avro 1.11 "Binary Encoding"), straight from the block's bytes into slots and
 * floe_data_file arrays.
 *
 * The writer's schema is compiled once per file into three short op lists (manifest_entry,
 * data_file, partition), one op per writer field: decode into a slot, decode a metric map
 * or id list into the file, descend, or skip. Shapes outside what Iceberg writers produce
 * (metric maps as Avro maps, a nullable data_file or partition, complex types where a
 * scalar belongs, unions of several non-null types around maps and lists) are refused at
 * compile time, and the manifest is read by the generic value-tree path instead, which
 * accepts them; so this path never rejects a file the generic path reads.
 *
 * Invariants:
 *   F1. Every length, count and union branch comes from the block and is checked against
 *       the bytes left (and the branch count) before use; item counts are bounded by the
 *       bytes left (each item takes at least one byte), so allocations are bounded by a
 *       small multiple of the block size.
 *   F2. A slot holds what the generic path's value tree holds at that place (same Avro
 *       type, same int range checks), so manifest_read.c applies the same conversions and
 *       checks to both; strings are NUL-terminated arena copies, as the generic path's are.
 *   F3. Metric maps and lists are accepted exactly when the generic path's read_map,
 *       read_long_list and read_int_list accept them: item records of two fields, key int
 *       (or long in int range) first, value long/int (counts) or bytes/fixed/string
 *       (bounds) second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro_internal.h"
#include "floe/partition.h"
#include "manifest_fast.h"

typedef enum opkind {
    OP_SKIP,
    OP_SCALAR,    /* into eslot/dslot[slot] */
    OP_DATA_FILE, /* descend into the data_file ops */
    OP_PARTITION, /* descend into the partition ops */
    OP_PART_VAL,  /* partition writer field `slot` */
    OP_COUNTS,    /* count map into file (slot: D_CSIZES ...) */
    OP_BOUNDS,    /* bound map into file (slot: D_LOWER / D_UPPER) */
    OP_LONGS,     /* split offsets */
    OP_INTS,      /* equality ids */
} opkind;

typedef struct mf_op {
    opkind kind;
    int slot;
    const floe_avro_node *w;   /* writer type of the field */
    const char *name;          /* field name, for errors */
    /* OP_DATA_FILE, OP_PARTITION and containers: the record or array is the field's type
     * or one side of ["null", T] (either order); null_branch says which branch is null
     * (-1: not a union) */
    int32_t null_branch;
    /* containers (OP_COUNTS .. OP_INTS) */
    bool avro_map;               /* an Avro map (string keys), not an array */
    int32_t item_null_branch;    /* items are ["null", record]: the null branch, else -1 */
    const floe_avro_node *key_t; /* metric maps: key type (arrays only) */
    const floe_avro_node *val_t; /* metric maps: value type; lists: element type */
    size_t min_item;             /* smallest encoded item (>= 1) */
} mf_op;

struct floe_mf_program {
    mf_op *entry, *df, *part;
    size_t n_entry, n_df, n_part;
    const int *pidx;       /* spec field -> writer partition index (borrowed from reader) */
    size_t npart;
    bool part_absent;      /* spec fields but no partition field in the writer's data_file */
};

static const floe_avro_value null_value = {.type = FLOE_AVRO_NULL, .branch = -1};
static const floe_avro_value record_marker = {.type = FLOE_AVRO_RECORD, .branch = -1};

void floe_mf_program_free(floe_mf_program *p) {
    if (!p)
        return;
    floe_free(p->entry);
    floe_free(p->df);
    floe_free(p->part);
    floe_free(p);
}

/* ---- compile ------------------------------------------------------------------------ */

static bool prim_scalar(const floe_avro_node *n) {
    switch (n->type) {
    case FLOE_AVRO_NULL:
    case FLOE_AVRO_BOOLEAN:
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG:
    case FLOE_AVRO_FLOAT:
    case FLOE_AVRO_DOUBLE:
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_FIXED:
    case FLOE_AVRO_ENUM:
        return true;
    default:
        return false;
    }
}

/* A primitive, or a union of primitives (a union cannot hold a union). */
static bool scalar_ok(const floe_avro_node *n) {
    if (n->type != FLOE_AVRO_UNION)
        return prim_scalar(n);
    for (size_t i = 0; i < n->n_branches; i++)
        if (!prim_scalar(n->branches[i]))
            return false;
    return true;
}

/* T when n is T or ["null", T] (either order) and T has type t; NULL otherwise. */
static const floe_avro_node *maybe_null(const floe_avro_node *n, floe_avro_type t,
                                        int32_t *null_branch) {
    *null_branch = -1;
    if (n->type == t)
        return n;
    if (n->type != FLOE_AVRO_UNION || n->n_branches != 2)
        return NULL;
    for (int32_t b = 0; b < 2; b++)
        if (n->branches[b]->type == FLOE_AVRO_NULL && n->branches[1 - b]->type == t) {
            *null_branch = b;
            return n->branches[1 - b];
        }
    return NULL;
}

/* Smallest encoding of a scalar_ok type. */
static size_t scalar_min(const floe_avro_node *n) {
    switch (n->type) {
    case FLOE_AVRO_NULL: return 0;
    case FLOE_AVRO_FLOAT: return 4;
    case FLOE_AVRO_DOUBLE: return 8;
    case FLOE_AVRO_FIXED: return (size_t)(n->size > 0 ? n->size : 0);
    default: return 1; /* a varint, a length, a boolean byte, a union branch */
    }
}

/* Fill a container op; false when the shape is not one this path decodes. Keys, values
 * and elements may be any scalar (nullable ones too): what they hold is checked per value,
 * as the generic path checks it. */
static bool container_op(mf_op *o, opkind kind) {
    bool lists = kind == OP_LONGS || kind == OP_INTS;
    const floe_avro_node *arr = maybe_null(o->w, FLOE_AVRO_ARRAY, &o->null_branch);
    if (!arr && !lists) {
        arr = maybe_null(o->w, FLOE_AVRO_MAP, &o->null_branch);
        o->avro_map = arr != NULL;
    }
    if (!arr)
        return false;
    o->kind = kind;
    o->item_null_branch = -1;
    const floe_avro_node *it = arr->items;
    if (lists || o->avro_map) {
        if (!scalar_ok(it))
            return false;
        o->val_t = it;
        o->min_item = scalar_min(it) + (o->avro_map ? 1 : 0);
    } else {
        const floe_avro_node *rec = maybe_null(it, FLOE_AVRO_RECORD, &o->item_null_branch);
        if (!rec || rec->n_fields != 2 || !scalar_ok(rec->fields[0].type) ||
            !scalar_ok(rec->fields[1].type))
            return false;
        o->key_t = rec->fields[0].type;
        o->val_t = rec->fields[1].type;
        o->min_item = (o->item_null_branch >= 0 ? 1 : 0) + scalar_min(o->key_t) +
                      scalar_min(o->val_t);
    }
    /* zero-size items would let a count run without consuming bytes: the generic path,
     * with its value budget, reads those */
    return o->min_item > 0;
}

static int slot_of(const int *idx, size_t n, size_t writer_index) {
    for (size_t s = 0; s < n; s++)
        if (idx[s] >= 0 && (size_t)idx[s] == writer_index)
            return (int)s;
    return -1;
}

static mf_op *ops_new(size_t n, floe_error *err) {
    mf_op *o = floe_calloc(n ? n : 1, sizeof *o);
    if (!o)
        floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return o;
}

int floe_mf_program_compile(const floe_avro_node *root, const int *eidx, const int *didx,
                            const int *pidx, size_t npart, floe_mf_program **out,
                            floe_error *err) {
    int rc = 1;
    floe_mf_program *p = floe_calloc(1, sizeof *p);
    if (!p)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    p->pidx = pidx;
    p->npart = npart;
    if (root->type != FLOE_AVRO_RECORD || eidx[E_DF] < 0)
        goto done;
    int32_t df_null, part_null = -1;
    const floe_avro_node *df = maybe_null(root->fields[eidx[E_DF]].type, FLOE_AVRO_RECORD,
                                          &df_null);
    if (!df)
        goto done;
    const floe_avro_node *prec = NULL;
    if (didx[D_PART] >= 0 &&
        !(prec = maybe_null(df->fields[didx[D_PART]].type, FLOE_AVRO_RECORD, &part_null)))
        goto done;

    p->n_entry = root->n_fields;
    p->n_df = df->n_fields;
    p->n_part = prec ? prec->n_fields : 0;
    p->part_absent = npart && !prec;
    if (!(p->entry = ops_new(p->n_entry, err)) || !(p->df = ops_new(p->n_df, err)) ||
        !(p->part = ops_new(p->n_part, err))) {
        rc = FLOE_ENOMEM;
        goto done;
    }
    for (size_t k = 0; k < p->n_entry; k++) {
        mf_op *o = &p->entry[k];
        o->w = root->fields[k].type;
        o->name = root->fields[k].name;
        o->slot = slot_of(eidx, E_N, k);
        if (o->slot < 0) {
            o->kind = OP_SKIP;
        } else if (o->slot == E_DF) {
            o->kind = OP_DATA_FILE;
            o->null_branch = df_null;
        } else {
            if (!scalar_ok(o->w))
                goto done;
            o->kind = OP_SCALAR;
        }
    }
    for (size_t k = 0; k < p->n_df; k++) {
        mf_op *o = &p->df[k];
        o->w = df->fields[k].type;
        o->name = df->fields[k].name;
        o->slot = slot_of(didx, D_N, k);
        switch (o->slot) {
        case -1:
            o->kind = OP_SKIP;
            break;
        case D_PART:
            /* nothing to decode when no spec field reads it: skip (the bytes are checked) */
            o->kind = npart ? OP_PARTITION : OP_SKIP;
            o->null_branch = part_null;
            break;
        case D_CSIZES:
        case D_VCOUNTS:
        case D_NCOUNTS:
        case D_NANS:
            if (!container_op(o, OP_COUNTS))
                goto done;
            break;
        case D_LOWER:
        case D_UPPER:
            if (!container_op(o, OP_BOUNDS))
                goto done;
            break;
        case D_SPLITS:
            if (!container_op(o, OP_LONGS))
                goto done;
            break;
        case D_EQIDS:
            if (!container_op(o, OP_INTS))
                goto done;
            break;
        default:
            if (!scalar_ok(o->w))
                goto done;
            o->kind = OP_SCALAR;
        }
    }
    for (size_t k = 0; k < p->n_part; k++) {
        mf_op *o = &p->part[k];
        o->w = prec->fields[k].type;
        o->name = prec->fields[k].name;
        o->slot = (int)k;
        o->kind = OP_SKIP;
        for (size_t i = 0; i < npart; i++)
            if (pidx[i] >= 0 && (size_t)pidx[i] == k)
                o->kind = OP_PART_VAL;
        if (o->kind == OP_PART_VAL && !scalar_ok(o->w))
            goto done;
    }
    rc = 0;
done:
    if (rc != 0) {
        floe_mf_program_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* ---- decode ------------------------------------------------------------------------- */

/* One primitive (or union of primitives) value; as the generic reader decodes it without
 * a reader schema. copy: bytes and fixed are copied too (strings always are). */
static int read_scalar(floe_avro_cursor *c, const floe_avro_node *w, floe_arena *a, bool copy,
                       floe_avro_value *out, floe_error *err) {
    if (w->type == FLOE_AVRO_UNION) {
        int64_t b;
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_long(c, &b, err));
        if (b < 0 || (uint64_t)b >= w->n_branches)
            return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                                 "union branch %lld out of range (%zu branches)", (long long)b,
                                 w->n_branches);
        w = w->branches[b];
    }
    out->type = w->type;
    out->branch = -1;
    size_t n;
    switch (w->type) {
    case FLOE_AVRO_NULL:
        return 0;
    case FLOE_AVRO_BOOLEAN:
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_need(c, 1, err));
        if (*c->p > 1)
            return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                                 "boolean byte %u", *c->p);
        out->u.b = *c->p++ != 0;
        return 0;
    case FLOE_AVRO_INT:
        return floe_avro_cursor_int(c, &out->u.i, err);
    case FLOE_AVRO_LONG:
        return floe_avro_cursor_long(c, &out->u.l, err);
    case FLOE_AVRO_FLOAT: {
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_need(c, 4, err));
        uint32_t bits = floe_load_le32(c->p);
        memcpy(&out->u.f, &bits, 4);
        c->p += 4;
        return 0;
    }
    case FLOE_AVRO_DOUBLE: {
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_need(c, 8, err));
        uint64_t bits = floe_load_le64(c->p);
        memcpy(&out->u.d, &bits, 8);
        c->p += 8;
        return 0;
    }
    case FLOE_AVRO_ENUM: {
        int32_t i;
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_int(c, &i, err));
        if (i < 0 || (size_t)i >= w->n_symbols)
            return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                                 "enum %s: symbol %d out of range", w->name, i);
        out->u.i = i;
        return 0;
    }
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_len(c, &n, err));
        break;
    case FLOE_AVRO_FIXED:
        n = (size_t)w->size;
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_need(c, n, err));
        break;
    default:
        return floe_error_set(err, FLOE_EINTERNAL, "manifest decoder: %s is not a scalar",
                              floe_avro_type_name(w->type));
    }
    const uint8_t *d = c->p;
    if (copy || w->type == FLOE_AVRO_STRING) {
        if (!(d = (const uint8_t *)floe_arena_strndup(a, (const char *)c->p, n)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    out->u.bytes.p = d;
    out->u.bytes.n = n;
    c->p += n;
    return 0;
}

/* The branch of a ["null", T] field: *present false for null. */
static int null_open(floe_avro_cursor *c, int32_t null_branch, bool *present,
                     floe_error *err) {
    *present = true;
    if (null_branch < 0)
        return 0;
    int64_t b;
    FLOE_FORWARD_IF_ERROR(floe_avro_cursor_long(c, &b, err));
    if (b < 0 || b > 1)
        return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                             "union branch %lld out of range (2 branches)", (long long)b);
    *present = b != null_branch;
    return 0;
}

/* Next array block: *count items (0: the array ended). */
static int container_block(floe_avro_cursor *c, const mf_op *o, int64_t *count,
                           floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_avro_cursor_long(c, count, err));
    if (*count < 0) {
        int64_t bytes;
        if (*count == INT64_MIN)
            return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c), "bad item count");
        *count = -*count;
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_long(c, &bytes, err));
        if (bytes < 0 || (uint64_t)bytes > floe_avro_cursor_left(c))
            return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                                 "item block size %lld passes the end of the block",
                                 (long long)bytes);
    }
    if ((uint64_t)*count > floe_avro_cursor_left(c) / o->min_item)
        return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c),
                             "%lld items cannot fit in the %zu bytes left", (long long)*count,
                             floe_avro_cursor_left(c));
    return 0;
}

/* Items of a map or list collect in s->items (reused across records, grown
 * geometrically) and go to the arena once, at their final size: however the writer blocks
 * them, memory and work stay linear in the items. */
static int push_item(floe_mf_slots *s, const void *item, size_t esz, floe_error *err) {
    if (floe_buf_append(&s->items, item, esz) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The collected items as an arena array (NULL when there are none). */
static int items_done(floe_mf_slots *s, floe_arena *a, void **out, floe_error *err) {
    void *arr = NULL;
    if (s->items.len) {
        if (!(arr = floe_arena_alloc(a, s->items.len)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        memcpy(arr, s->items.data, s->items.len);
    }
    *out = arr;
    return 0;
}

static int bad_item(floe_avro_cursor *c, const char *what, floe_error *err) {
    return floe_error_at(err, FLOE_ECORRUPT, floe_avro_cursor_off(c), "%s", what);
}

/* The generic path's as_long / as_int on a decoded value. */
static bool value_long(const floe_avro_value *v, int64_t *out) {
    if (v->type == FLOE_AVRO_LONG)
        *out = v->u.l;
    else if (v->type == FLOE_AVRO_INT)
        *out = v->u.i;
    else
        return false;
    return true;
}

static bool value_int(const floe_avro_value *v, int32_t *out) {
    int64_t l;
    if (!value_long(v, &l) || l < INT32_MIN || l > INT32_MAX)
        return false;
    *out = (int32_t)l;
    return true;
}

/* An Avro map key that names a field id: decimal digits of an int. */
static bool key_field_id(const uint8_t *p, size_t n, int32_t *out) {
    char kb[16], *end;
    if (n == 0 || n >= sizeof kb)
        return false;
    memcpy(kb, p, n);
    kb[n] = 0;
    long k = strtol(kb, &end, 10);
    if (*end || k < INT32_MIN || k > INT32_MAX)
        return false;
    *out = (int32_t)k;
    return true;
}

/* One {key, value} item of a metric map into *key / *val. */
static int read_kv(floe_avro_cursor *c, const mf_op *o, floe_arena *a, int32_t *key,
                   floe_avro_value *val, floe_error *err) {
    if (o->avro_map) {
        size_t kl;
        FLOE_FORWARD_IF_ERROR(floe_avro_cursor_len(c, &kl, err));
        if (!key_field_id(c->p, kl, key))
            return bad_item(c, "map key is not a field id", err);
        c->p += kl;
    } else {
        bool present;
        FLOE_FORWARD_IF_ERROR(null_open(c, o->item_null_branch, &present, err));
        if (!present)
            return bad_item(c, "map entry is not a {key, value} record", err);
        floe_avro_value k;
        FLOE_FORWARD_IF_ERROR(read_scalar(c, o->key_t, a, false, &k, err));
        if (!value_int(&k, key))
            return bad_item(c, "map key is not an int", err);
    }
    return read_scalar(c, o->val_t, a, false, val, err);
}

static int read_map(floe_avro_cursor *c, const mf_op *o, floe_arena *a, floe_mf_slots *s,
                    floe_error *err) {
    bool present;
    FLOE_FORWARD_IF_ERROR(null_open(c, o->null_branch, &present, err));
    if (!present)
        return 0; /* null: unknown (R3) */
    bool bounds = o->kind == OP_BOUNDS;
    floe_buf_reset(&s->items);
    for (;;) {
        int64_t count;
        FLOE_FORWARD_IF_ERROR(container_block(c, o, &count, err));
        if (count == 0)
            break;
        for (int64_t i = 0; i < count; i++) {
            int32_t key = 0; /* set by read_kv on success; gcc -O2 cannot tell */
            floe_avro_value v;
            FLOE_FORWARD_IF_ERROR(read_kv(c, o, a, &key, &v, err));
            if (bounds) {
                if (v.type == FLOE_AVRO_NULL)
                    return bad_item(c, "null bound value", err);
                if (v.type != FLOE_AVRO_BYTES && v.type != FLOE_AVRO_FIXED &&
                    v.type != FLOE_AVRO_STRING)
                    return bad_item(c, "bound value is not bytes", err);
                floe_column_bound b = {.field_id = key, .p = v.u.bytes.p, .n = v.u.bytes.n};
                FLOE_FORWARD_IF_ERROR(push_item(s, &b, sizeof b, err));
            } else {
                floe_column_count k = {.field_id = key};
                if (!value_long(&v, &k.value))
                    return bad_item(c, "map value is not a long", err);
                FLOE_FORWARD_IF_ERROR(push_item(s, &k, sizeof k, err));
            }
        }
    }
    size_t esz = bounds ? sizeof(floe_column_bound) : sizeof(floe_column_count);
    size_t total = s->items.len / esz;
    void *arr = NULL;
    FLOE_FORWARD_IF_ERROR(items_done(s, a, &arr, err));
    floe_count_map *cm = NULL;
    floe_bound_map *bm = NULL;
    floe_data_file *f = &s->file;
    switch (o->slot) {
    case D_CSIZES: cm = &f->column_sizes; break;
    case D_VCOUNTS: cm = &f->value_counts; break;
    case D_NCOUNTS: cm = &f->null_value_counts; break;
    case D_NANS: cm = &f->nan_value_counts; break;
    case D_LOWER: bm = &f->lower_bounds; break;
    default: bm = &f->upper_bounds; break;
    }
    if (bm) {
        bm->present = true;
        bm->items = arr;
        bm->n = total;
    } else {
        cm->present = true;
        cm->items = arr;
        cm->n = total;
    }
    return 0;
}

static int read_list(floe_avro_cursor *c, const mf_op *o, floe_arena *a, floe_mf_slots *s,
                     floe_error *err) {
    bool present;
    FLOE_FORWARD_IF_ERROR(null_open(c, o->null_branch, &present, err));
    if (!present)
        return 0;
    bool ints = o->kind == OP_INTS;
    floe_buf_reset(&s->items);
    for (;;) {
        int64_t count;
        FLOE_FORWARD_IF_ERROR(container_block(c, o, &count, err));
        if (count == 0)
            break;
        for (int64_t i = 0; i < count; i++) {
            floe_avro_value x;
            int32_t iv;
            int64_t lv;
            FLOE_FORWARD_IF_ERROR(read_scalar(c, o->val_t, a, false, &x, err));
            /* PyIceberg writes list<int> as array<long>: longs that fit are ints */
            if (ints ? !value_int(&x, &iv) : !value_long(&x, &lv))
                return bad_item(c, ints ? "element is not an int" : "element is not a long",
                                err);
            FLOE_FORWARD_IF_ERROR(ints ? push_item(s, &iv, sizeof iv, err)
                                       : push_item(s, &lv, sizeof lv, err));
        }
    }
    size_t total = s->items.len / (ints ? sizeof(int32_t) : sizeof(int64_t));
    void *arr = NULL;
    FLOE_FORWARD_IF_ERROR(items_done(s, a, &arr, err));
    floe_data_file *f = &s->file;
    if (ints) {
        f->has_equality_ids = true;
        f->equality_ids = arr;
        f->nequality_ids = total;
    } else {
        f->has_split_offsets = true;
        f->split_offsets = arr;
        f->nsplit_offsets = total;
    }
    return 0;
}

static int run_ops(const floe_mf_program *p, const mf_op *ops, size_t n, floe_avro_cursor *c,
                   floe_arena *a, floe_mf_slots *s, floe_avro_value *pw, floe_error *err) {
    for (size_t k = 0; k < n; k++) {
        const mf_op *o = &ops[k];
        int rc = 0;
        switch (o->kind) {
        case OP_SKIP:
            rc = floe_avro_cursor_skip(c, o->w, err);
            break;
        case OP_SCALAR:
            if (ops == p->entry) {
                rc = read_scalar(c, o->w, a, false, &s->ev[o->slot], err);
                s->eslot[o->slot] = &s->ev[o->slot];
            } else {
                rc = read_scalar(c, o->w, a, false, &s->dv[o->slot], err);
                s->dslot[o->slot] = &s->dv[o->slot];
            }
            break;
        case OP_DATA_FILE: {
            bool present;
            rc = null_open(c, o->null_branch, &present, err);
            s->eslot[E_DF] = present ? &record_marker : &null_value;
            if (rc == 0 && present)
                rc = run_ops(p, p->df, p->n_df, c, a, s, pw, err);
            break;
        }
        case OP_PARTITION: {
            bool present;
            rc = null_open(c, o->null_branch, &present, err);
            if (rc == 0 && present) {
                rc = run_ops(p, p->part, p->n_part, c, a, s, pw, err);
            } else if (rc == 0) {
                s->part_missing = true;
                s->part_rec = &null_value;
            }
            break;
        }
        case OP_PART_VAL:
            /* copied: the generic path's partition bytes are NUL-terminated copies too */
            rc = read_scalar(c, o->w, a, true, &pw[o->slot], err);
            break;
        case OP_COUNTS:
        case OP_BOUNDS:
            rc = read_map(c, o, a, s, err);
            break;
        case OP_LONGS:
        case OP_INTS:
            rc = read_list(c, o, a, s, err);
            break;
        }
        if (rc < 0) {
            floe_error_prefix(err, "%s: ", o->name);
            return rc;
        }
    }
    return 0;
}

int floe_mf_program_decode(const floe_mf_program *p, floe_avro_cursor *c, floe_arena *a,
                           floe_mf_slots *s, floe_error *err) {
    memset(s->eslot, 0, sizeof s->eslot);
    memset(s->dslot, 0, sizeof s->dslot);
    memset(&s->file, 0, sizeof s->file);
    floe_avro_value *pw = NULL;
    s->part = NULL;
    s->part_missing = p->part_absent;
    s->part_rec = NULL;
    if (p->npart) {
        pw = floe_arena_alloc(a, (p->n_part ? p->n_part : 1) * sizeof *pw);
        s->part = floe_arena_alloc(a, p->npart * sizeof *s->part);
        if (!pw || !s->part)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    FLOE_FORWARD_IF_ERROR(run_ops(p, p->entry, p->n_entry, c, a, s, pw, err));
    for (size_t i = 0; i < p->npart; i++)
        s->part[i] = p->pidx[i] >= 0 && !s->part_missing ? &pw[p->pidx[i]] : NULL;
    return 0;
}

/* ---- manifest lists ------------------------------------------------------------------ */

/* A manifest list's manifest_file records hold only scalars and the partitions array of
 * field_summary records, so its program is one op list per level: scalars into slots,
 * the partitions array into the slots' summaries, everything else skipped. */
struct floe_ml_program {
    mf_op *file, *sum;
    size_t n_file, n_sum;
};

static const floe_avro_value array_marker = {.type = FLOE_AVRO_ARRAY, .branch = -1};

void floe_ml_program_free(floe_ml_program *p) {
    if (!p)
        return;
    floe_free(p->file);
    floe_free(p->sum);
    floe_free(p);
}

int floe_ml_program_compile(const floe_avro_node *root, const int *lidx, const int *sidx,
                            floe_ml_program **out, floe_error *err) {
    int rc = 1;
    floe_ml_program *p = floe_calloc(1, sizeof *p);
    if (!p)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (root->type != FLOE_AVRO_RECORD)
        goto done;
    const floe_avro_node *srec = NULL;
    int32_t parts_null = -1;
    if (lidx[L_PARTS] >= 0) {
        const floe_avro_node *arr =
            maybe_null(root->fields[lidx[L_PARTS]].type, FLOE_AVRO_ARRAY, &parts_null);
        if (!arr || arr->items->type != FLOE_AVRO_RECORD)
            goto done;
        srec = arr->items;
    }
    p->n_file = root->n_fields;
    p->n_sum = srec ? srec->n_fields : 0;
    if (!(p->file = ops_new(p->n_file, err)) || !(p->sum = ops_new(p->n_sum, err))) {
        rc = FLOE_ENOMEM;
        goto done;
    }
    size_t min_sum = 0;
    for (size_t k = 0; k < p->n_sum; k++) {
        mf_op *o = &p->sum[k];
        o->w = srec->fields[k].type;
        o->name = srec->fields[k].name;
        o->slot = slot_of(sidx, S_N, k);
        o->kind = o->slot < 0 ? OP_SKIP : OP_SCALAR;
        if (o->kind == OP_SCALAR && !scalar_ok(o->w))
            goto done;
        min_sum += floe_avro_node_min_size(o->w);
    }
    for (size_t k = 0; k < p->n_file; k++) {
        mf_op *o = &p->file[k];
        o->w = root->fields[k].type;
        o->name = root->fields[k].name;
        o->slot = slot_of(lidx, L_N, k);
        if (o->slot < 0) {
            o->kind = OP_SKIP;
        } else if (o->slot == L_PARTS) {
            /* zero-size summaries would let a count run without consuming bytes: the
             * generic path, with its value budget, reads those */
            if (min_sum == 0)
                goto done;
            o->kind = OP_BOUNDS; /* a container: its items are summaries */
            o->null_branch = parts_null;
            o->min_item = min_sum;
        } else {
            if (!scalar_ok(o->w))
                goto done;
            o->kind = OP_SCALAR;
        }
    }
    rc = 0;
done:
    if (rc != 0) {
        floe_ml_program_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

static int read_summaries(const floe_ml_program *p, const mf_op *o, floe_avro_cursor *c,
                          floe_arena *a, floe_ml_slots *s, floe_error *err) {
    bool present;
    FLOE_FORWARD_IF_ERROR(null_open(c, o->null_branch, &present, err));
    s->slot[L_PARTS] = present ? &array_marker : &null_value;
    for (int64_t count = 1; present && count != 0;) {
        FLOE_FORWARD_IF_ERROR(container_block(c, o, &count, err));
        if ((uint64_t)count > SIZE_MAX / sizeof *s->sums - s->nsums)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (s->nsums + (size_t)count > s->sumcap) {
            size_t nc = s->sumcap ? s->sumcap : 4;
            while (nc < s->nsums + (size_t)count)
                nc *= 2;
            floe_ml_summary *ns = floe_realloc(s->sums, nc * sizeof *ns);
            if (!ns)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            s->sums = ns;
            s->sumcap = nc;
        }
        for (int64_t i = 0; i < count; i++) {
            floe_ml_summary *sum = &s->sums[s->nsums++];
            for (size_t k = 0; k < p->n_sum; k++) {
                const mf_op *so = &p->sum[k];
                int rc = so->kind == OP_SKIP
                             ? floe_avro_cursor_skip(c, so->w, err)
                             : read_scalar(c, so->w, a, false, &sum->v[so->slot], err);
                if (rc < 0) {
                    floe_error_prefix(err, "%s: ", so->name);
                    return rc;
                }
            }
        }
    }
    /* The slots point into their own summary: set only now, since a later block of the
     * array may have moved the summaries (realloc) */
    for (size_t i = 0; i < s->nsums; i++) {
        floe_ml_summary *sum = &s->sums[i];
        memset(sum->slot, 0, sizeof sum->slot);
        for (size_t k = 0; k < p->n_sum; k++)
            if (p->sum[k].kind != OP_SKIP)
                sum->slot[p->sum[k].slot] = &sum->v[p->sum[k].slot];
    }
    return 0;
}

int floe_ml_program_decode(const floe_ml_program *p, floe_avro_cursor *c, floe_arena *a,
                           floe_ml_slots *s, floe_error *err) {
    memset(s->slot, 0, sizeof s->slot);
    s->nsums = 0;
    for (size_t k = 0; k < p->n_file; k++) {
        const mf_op *o = &p->file[k];
        int rc;
        if (o->kind == OP_SKIP) {
            rc = floe_avro_cursor_skip(c, o->w, err);
        } else if (o->kind == OP_SCALAR) {
            rc = read_scalar(c, o->w, a, false, &s->v[o->slot], err);
            s->slot[o->slot] = &s->v[o->slot];
        } else {
            rc = read_summaries(p, o, c, a, s, err);
        }
        if (rc < 0) {
            floe_error_prefix(err, "%s: ", o->name);
            return rc;
        }
    }
    return 0;
}

/* ---- comparison (tests) -------------------------------------------------------------- */

static bool same_bytes(const void *a, size_t an, const void *b, size_t bn) {
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static bool same_str(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_counts(const floe_count_map *a, const floe_count_map *b) {
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].field_id != b->items[i].field_id || a->items[i].value != b->items[i].value)
            return false;
    return true;
}

static bool same_bounds(const floe_bound_map *a, const floe_bound_map *b) {
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].field_id != b->items[i].field_id ||
            !same_bytes(a->items[i].p, a->items[i].n, b->items[i].p, b->items[i].n))
            return false;
    return true;
}

#define OPT_SAME(h, v) (a->h == b->h && (!a->h || a->v == b->v))

int floe_mf_entry_diff(const floe_manifest_entry *ea, const floe_manifest_entry *eb, char *why,
                       size_t n) {
    const char *field = NULL;
    const floe_data_file *a = &ea->file, *b = &eb->file;
    if (ea->status != eb->status)
        field = "status";
    else if (ea->has_snapshot_id != eb->has_snapshot_id ||
             (ea->has_snapshot_id && ea->snapshot_id != eb->snapshot_id))
        field = "snapshot_id";
    else if (ea->has_sequence_number != eb->has_sequence_number ||
             (ea->has_sequence_number && ea->sequence_number != eb->sequence_number))
        field = "sequence_number";
    else if (ea->has_file_sequence_number != eb->has_file_sequence_number ||
             (ea->has_file_sequence_number &&
              ea->file_sequence_number != eb->file_sequence_number))
        field = "file_sequence_number";
    else if (a->content != b->content)
        field = "content";
    else if (!same_str(a->file_path, b->file_path))
        field = "file_path";
    else if (!same_str(a->file_format, b->file_format))
        field = "file_format";
    else if (a->npartition != b->npartition)
        field = "partition (arity)";
    else if (a->record_count != b->record_count)
        field = "record_count";
    else if (a->file_size_in_bytes != b->file_size_in_bytes)
        field = "file_size_in_bytes";
    else if (!same_counts(&a->column_sizes, &b->column_sizes))
        field = "column_sizes";
    else if (!same_counts(&a->value_counts, &b->value_counts))
        field = "value_counts";
    else if (!same_counts(&a->null_value_counts, &b->null_value_counts))
        field = "null_value_counts";
    else if (!same_counts(&a->nan_value_counts, &b->nan_value_counts))
        field = "nan_value_counts";
    else if (!same_bounds(&a->lower_bounds, &b->lower_bounds))
        field = "lower_bounds";
    else if (!same_bounds(&a->upper_bounds, &b->upper_bounds))
        field = "upper_bounds";
    else if (a->has_key_metadata != b->has_key_metadata ||
             (a->has_key_metadata && !same_bytes(a->key_metadata, a->key_metadata_len,
                                                 b->key_metadata, b->key_metadata_len)))
        field = "key_metadata";
    else if (a->has_split_offsets != b->has_split_offsets ||
             (a->has_split_offsets &&
              !same_bytes(a->split_offsets, a->nsplit_offsets * sizeof *a->split_offsets,
                          b->split_offsets, b->nsplit_offsets * sizeof *b->split_offsets)))
        field = "split_offsets";
    else if (a->has_equality_ids != b->has_equality_ids ||
             (a->has_equality_ids &&
              !same_bytes(a->equality_ids, a->nequality_ids * sizeof *a->equality_ids,
                          b->equality_ids, b->nequality_ids * sizeof *b->equality_ids)))
        field = "equality_ids";
    else if (!OPT_SAME(has_sort_order_id, sort_order_id))
        field = "sort_order_id";
    else if (!OPT_SAME(has_first_row_id, first_row_id))
        field = "first_row_id";
    else if (!same_str(a->referenced_data_file, b->referenced_data_file))
        field = "referenced_data_file";
    else if (!OPT_SAME(has_content_offset, content_offset))
        field = "content_offset";
    else if (!OPT_SAME(has_content_size, content_size_in_bytes))
        field = "content_size_in_bytes";
    for (size_t i = 0; !field && i < a->npartition; i++) {
        const floe_value *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null != y->is_null || (!x->is_null && !floe_value_equal(x, y)))
            field = "partition";
    }
    if (!field)
        return 0;
    if (why && n)
        snprintf(why, n, "%s differs", field);
    return 1;
}

int floe_mf_differential(const void *p, size_t n, floe_mf_diff *out) {
    floe_manifest_reader *g = NULL, *f = NULL;
    floe_error eg, ef;
    floe_error_clear(&eg);
    floe_error_clear(&ef);
    memset(out, 0, sizeof *out);
    if (floe_manifest_reader_open_mem(p, n, "differential", NULL, &g, &eg) < 0)
        return 0;
    floe_mf_reader_force_generic(g);
    out->opened = true;
    if (floe_manifest_reader_open_mem(p, n, "differential", NULL, &f, &ef) < 0) {
        out->mismatch = true;
        snprintf(out->why, sizeof out->why, "only the generic path opens it: %.400s", ef.msg);
        goto done;
    }
    out->fast = floe_mf_reader_is_fast(f);
    for (;;) {
        const floe_manifest_entry *a = NULL, *b = NULL;
        int rg = floe_manifest_reader_next(g, &a, &eg);
        int rf = floe_manifest_reader_next(f, &b, &ef);
        if (rg == 1 && rf == 1) {
            char why[128];
            if (floe_mf_entry_diff(a, b, why, sizeof why)) {
                out->mismatch = true;
                snprintf(out->why, sizeof out->why, "entry %lld: %s", (long long)out->entries,
                         why);
                break;
            }
            out->entries++;
            continue;
        }
        out->generic_rc = rg == 1 ? 1 : rg;
        out->fast_rc = rf == 1 ? 1 : rf;
        if (rg < 0 && rf != 0)
            break; /* the generic path refuses; the streaming one may be more lenient */
        if (rg != rf) {
            out->mismatch = true;
            snprintf(out->why, sizeof out->why, "entry %lld: generic %d (%.200s), streaming %d (%.200s)",
                     (long long)out->entries, rg, rg < 0 ? eg.msg : "", rf,
                     rf < 0 ? ef.msg : "");
        }
        break;
    }
done:
    floe_manifest_reader_close(g);
    floe_manifest_reader_close(f);
    return 0;
}
