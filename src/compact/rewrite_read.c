/*
 * rewrite_read.c - reading a data file of any writer as column batches of the table's
 * current schema, with position and equality deletes applied: the input side of a
 * rewrite.
 *
 * Spec: format/spec.md "Column Projection" (fields by id; schema.name-mapping.default
 * for files without ids, nested "fields" included; initial-default, else null, for
 * fields a file lacks; identity partition values for source columns missing from data
 * files), "Schema Evolution" (int -> long, float -> double, decimal precision widening,
 * date -> timestamp / timestamp_ns),
 * "Position Delete Files" (file_path 2147483546, pos 2147483545), "Equality Delete Files"
 * (a row is deleted when its equality columns equal a delete row's, null equal to null).
 *
 * Unlike the scan reader (which assembles rows as text) this stays columnar: each table
 * leaf is filled from the matching file leaf by copying its levels (remapped when the
 * file's optional/required nesting differs from the table's) and values (widened when
 * the type was promoted). A leaf the file lacks is filled with a constant (identity
 * partition value, initial-default or null) or, inside a struct the file has, with nulls
 * whose levels follow a sibling column.
 *
 * Invariants:
 *   R1. Rows leave in file order; a row is dropped only when a delete applies to it.
 *   R2. Every table leaf of a batch holds the same number of rows.
 *   R3. Memory: one decoded row group of the file plus one batch (two when a row group
 *       loses rows to deletes), and the delete files of the group.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/literal.h"
#include "floe/io.h"
#include "floe/parquet_reader.h"
#include "floe/scan.h"
#include "iceberg/puffin.h"
#include "rewrite_internal.h"

#define MAX_DELETE_ROWS (256u << 20) /* rows held from position delete files per group */
#define EQ_RESERVE_MAX 65536         /* keys of an equality delete file reserved at once */

/* floe_rewrite_set_generic_reader: deletes applied row by row, without the shortcuts */
static atomic_bool generic_reader;

void floe_rewrite_set_generic_reader(bool on) { atomic_store(&generic_reader, on); }

/* ---------------------------------------------------------------------------------------
 * value normalisation for equality keys: the same value in any layout gives the same bytes
 * ------------------------------------------------------------------------------------- */

static floe_i128 dec_from(const uint8_t *v, floe_phys phys, int32_t width) {
    if (phys == FLOE_PHYS_INT32)
        return (floe_i128)(int32_t)floe_load_le32(v);
    if (phys == FLOE_PHYS_INT64)
        return (floe_i128)(int64_t)floe_load_le64(v);
    floe_i128 x = (width > 0 && (v[0] & 0x80)) ? -1 : 0;
    for (int32_t i = 0; i < width; i++)
        x = (floe_i128)(((unsigned __int128)x << 8) | v[i]);
    return x;
}

static void dec_to(floe_i128 x, floe_phys phys, int32_t width, uint8_t *out) {
    if (phys == FLOE_PHYS_INT32) {
        floe_store_le32(out, (uint32_t)(int32_t)x);
        return;
    }
    if (phys == FLOE_PHYS_INT64) {
        floe_store_le64(out, (uint64_t)(int64_t)x);
        return;
    }
    for (int32_t i = width - 1; i >= 0; i--) {
        out[i] = (uint8_t)(x & 0xff);
        x >>= 8;
    }
}

/* Append the normalised bytes of one value (type t, stored as phys/width at v, n bytes
 * for BYTE_ARRAY). */
static int key_value(floe_buf *k, floe_type_id t, floe_phys phys, int32_t width,
                     const uint8_t *v, size_t n) {
    uint8_t tmp[16];
    if (t == FLOE_TYPE_DECIMAL) {
        floe_i128 x = dec_from(v, phys, width);
        dec_to(x, FLOE_PHYS_FIXED, 16, tmp);
        return floe_buf_append(k, tmp, 16);
    }
    switch (phys) {
    case FLOE_PHYS_INT32:
        floe_store_le64(tmp, (uint64_t)(int64_t)(int32_t)floe_load_le32(v));
        return floe_buf_append(k, tmp, 8);
    case FLOE_PHYS_FLOAT: {
        float f;
        memcpy(&f, v, 4);
        double d = f;
        return floe_buf_append(k, &d, 8);
    }
    case FLOE_PHYS_BYTE_ARRAY: {
        uint32_t len = (uint32_t)n;
        int rc = floe_buf_append(k, &len, 4);
        return rc < 0 ? rc : floe_buf_append(k, n ? v : (const uint8_t *)"", n);
    }
    default:
        return floe_buf_append(k, v, (size_t)width);
    }
}

/* Append the key part of one column at `row` (levels index): a null flag, then the
 * normalised value; *vi is the column's next value, advanced past a present one. */
static int key_column(floe_buf *k, const floe_colbuf *c, floe_type_id t, size_t *vi,
                      size_t row) {
    bool null = c->max_def && c->def[row] < c->max_def;
    if (floe_buf_append_byte(k, null ? 0 : 1) < 0)
        return FLOE_ENOMEM;
    if (null)
        return 0;
    const uint8_t *v;
    size_t n = 0;
    if (c->width == 0) {
        v = c->values + c->offsets[*vi];
        n = c->offsets[*vi + 1] - c->offsets[*vi];
    } else {
        v = c->values + *vi * (size_t)c->width;
    }
    (*vi)++;
    return key_value(k, t, c->phys, c->width, v, n) < 0 ? FLOE_ENOMEM : 0;
}

/* key_column for a stored date (INT32 days) of a column the table has promoted to t
 * (timestamp or timestamp_ns): the key of midnight of that day in t's unit, as the data
 * rows' values are converted on read; a day outside t's range fails, as it does there. */
static int key_date_as_ts(floe_buf *k, const floe_colbuf *c, floe_type_id t, size_t *vi,
                          size_t row, floe_error *err) {
    bool null = c->max_def && c->def[row] < c->max_def;
    if (floe_buf_append_byte(k, null ? 0 : 1) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (null)
        return 0;
    int32_t days = (int32_t)floe_load_le32(c->values + *vi * (size_t)c->width);
    (*vi)++;
    floe_lit_ts ts = {.sec = (int64_t)days * 86400};
    int64_t x;
    char why[96];
    if (floe_lit_ts_units(&ts, t == FLOE_TYPE_TIMESTAMP_NS ? 9 : 6, &x, why, sizeof why) !=
        FLOE_LIT_OK)
        return floe_error_set(err, FLOE_EINVALID, "day %" PRId32 " read as %s (the column "
                              "was promoted from date) is %s", days, floe_type_name(t), why);
    uint8_t b[8];
    floe_store_le64(b, (uint64_t)x);
    return floe_buf_append(k, b, 8) < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                                        : 0;
}

/* ---------------------------------------------------------------------------------------
 * delete files of a group (loaded once per group)
 * ------------------------------------------------------------------------------------- */
typedef struct pos_row {
    uint32_t path;
    int64_t pos;
} pos_row;

typedef struct del_file {
    char *path;                  /* recorded path (the cache key, with offset) */
    int64_t offset;              /* a deletion vector's content_offset in its Puffin file */
    floe_file_content content;
    /* position deletes: rows sorted by (path, pos); paths interned */
    pos_row *rows;
    size_t nrows;
    floe_keyset paths;           /* path -> interned index */
    /* equality deletes */
    int32_t *ids;
    size_t nids;
    size_t *leaf;                /* the table leaf of each id (in the cache's schema) */
    floe_keyset keys;
    int64_t seq;                 /* its data sequence number, -1 when not known */
} del_file;

/* The equality delete files of one set of equality ids, merged (rw_deletes_merge_eq):
 * each key once, with the highest sequence number of the files that hold it. A data file
 * to which every file of the set with a higher sequence number applies, and no other,
 * needs one probe a row: a row is deleted when its key's number is above the file's. */
typedef struct eq_merged {
    const int32_t *ids;          /* a member's */
    size_t nids;
    int64_t *seqs;               /* the members' sequence numbers, ascending */
    size_t nseqs, seq_cap;
    floe_keyset keys;            /* value: the highest sequence number */
    uint64_t *bloom;             /* a filter in front of keys (bloom_hash); NULL: none */
    size_t bloom_mask;           /* its words - 1 */
} eq_merged;

/* The merged key set's filter. Most rows of a data file hold no deleted key, and a probe
 * of the key set (slots and key bytes of megabytes, at random) misses the cache; the
 * filter (16-32 bits a key, one 64-bit word a key with 4 bits set in it) mostly does not,
 * and it says "absent" for about 99.5% of absent keys. It never says absent for a key
 * the set holds: a key it passes is probed in the set as before.
 *
 * The hash is a function of the normalised key bytes. The 9 bytes of a present 8-byte
 * value (flag 1, then little-endian; every integer column's key, key_value) hash as that
 * value, so a row of one integer column is tested without building its key
 * (apply_deletes). */
#define BLOOM_BITS_PER_KEY 16
#define BLOOM_AHEAD 16 /* rows between a filter word's prefetch and its test */
#define PROBE_AHEAD 8  /* keys between a key set slot's prefetch and its probe */

static uint64_t bloom_hash(const uint8_t *key, size_t n) {
    if (n == 9 && key[0] == 1)
        return floe_mix64(floe_load_le64(key + 1));
    return floe_hash64(key, n);
}

/* The 4 bits of h in its word (bits 40-63; the word is picked by the low bits). */
static uint64_t bloom_bits(uint64_t h) {
    return (1ull << ((h >> 40) & 63)) | (1ull << ((h >> 46) & 63)) |
           (1ull << ((h >> 52) & 63)) | (1ull << (h >> 58));
}

static bool bloom_may_hold(const eq_merged *m, uint64_t h) {
    uint64_t bits = bloom_bits(h);
    return (m->bloom[h & m->bloom_mask] & bits) == bits;
}

/* Bytes of the filter for n keys: a power of two of words. */
static size_t bloom_bytes(size_t n) {
    size_t words = 1;
    while (words * 64 < n * BLOOM_BITS_PER_KEY && words < ((size_t)1 << 40))
        words *= 2;
    return words * sizeof(uint64_t);
}

struct rw_deletes {
    floe_io *io;
    const floe_schema *schema;
    const char *name_mapping;
    del_file **files;            /* each allocated apart: readers keep pointers to them
                                    while the cache grows */
    size_t n, cap;
    size_t pos_rows;             /* across files, for the cap */
    floe_dv_cache dvc;           /* Puffin files last read, footers decoded */
    /* equality-delete keys (floe_rewrite_options.eq_delete_buffer_bytes) */
    int64_t key_budget;          /* bytes of key sets held at once; 0: no limit */
    int64_t key_bytes;           /* held by the equality delete files loaded */
    int64_t key_bytes_peak;
    uint64_t nslices, slice;     /* only keys whose hash % nslices == slice are loaded */
    bool over_budget;            /* the last load stopped at the budget */
    bool eq_resolved;            /* readers skip equality delete files: their rows come
                                    as positions (rw_reader_add_positions) */
    eq_merged *merged;           /* per equality id set of the files loaded */
    size_t nmerged;
    floe_keyset index;           /* path and offset -> index in files: each data file
                                    looks up every delete file that applies to it */
    floe_buf ikey;
    /* the plan's entries looked up so far -> index in files: the same delete file is one
     * entry of the plan for every data file it applies to (hundreds, for an upsert
     * stream's), found without hashing its path again */
    floe_hashset by_entry;
    const floe_data_file **entry;
    size_t *entry_file;
    size_t nentries, entry_cap;
};

/* Memory of a key set: its slot arrays and its key bytes. */
static int64_t keyset_bytes(const floe_keyset *k) {
    return (int64_t)(k->cap * (sizeof *k->hash + sizeof *k->off + sizeof *k->len +
                               sizeof *k->val) + k->keys.cap);
}

/* The same once a new key of klen bytes is in (common/keyset.c and floe_buf_reserve grow
 * by doubling), so a load stops before it passes the budget, not after. */
static int64_t keyset_bytes_after(const floe_keyset *k, size_t klen) {
    size_t cap = k->cap;
    if ((k->n + 1) * 4 > cap * 3)
        cap = cap ? cap * 2 : 256;
    size_t kcap = k->keys.cap, need = k->keys.len + klen + 1;
    if (need > kcap) {
        kcap = kcap ? kcap : 256;
        while (kcap < need)
            kcap *= 2;
    }
    return (int64_t)(cap * (sizeof *k->hash + sizeof *k->off + sizeof *k->len +
                            sizeof *k->val) + kcap);
}

int rw_deletes_new(floe_io *io, const floe_schema *schema, const char *name_mapping, rw_deletes **out,
                   floe_error *err) {
    rw_deletes *d = floe_calloc(1, sizeof *d);
    FLOE_RETURN_ERROR_IF(!d, err, FLOE_ENOMEM, "out of memory");
    d->io = io;
    d->schema = schema;
    d->name_mapping = name_mapping;
    floe_buf_init(&d->ikey, 0);
    *out = d;
    return 0;
}

static void del_file_free(del_file *f) {
    floe_free(f->path);
    floe_free(f->rows);
    floe_keyset_free(&f->paths);
    floe_free(f->ids);
    floe_free(f->leaf);
    floe_keyset_free(&f->keys);
    floe_free(f);
}

static void merged_free(rw_deletes *d) {
    for (size_t i = 0; i < d->nmerged; i++) {
        floe_free(d->merged[i].seqs);
        floe_free(d->merged[i].bloom);
        floe_keyset_free(&d->merged[i].keys);
    }
    floe_free(d->merged);
    d->merged = NULL;
    d->nmerged = 0;
}

void rw_deletes_free(rw_deletes *d) {
    if (!d)
        return;
    merged_free(d);
    floe_keyset_free(&d->index);
    floe_buf_free(&d->ikey);
    floe_hashset_free(&d->by_entry);
    floe_free(d->entry);
    floe_free(d->entry_file);
    for (size_t i = 0; i < d->n; i++)
        del_file_free(d->files[i]);
    floe_free(d->files);
    floe_dv_cache_free(&d->dvc);
    floe_free(d);
}

static int cmp_pos_row(const void *a, const void *b) {
    const pos_row *x = a, *y = b;
    if (x->path != y->path)
        return x->path < y->path ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static bool pos_rows_sorted(const pos_row *r, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (cmp_pos_row(&r[i - 1], &r[i]) > 0)
            return false;
    return true;
}

/* Index in the rowset of the column holding the file node with field id `id` (or, when the
 * file has no ids, the top-level column named `name`); -1 if absent. */
static int rowset_col(const floe_pq_rowset *rs, int32_t id, const char *name) {
    for (size_t i = 0; i < rs->ncols; i++) {
        const floe_pq_node *nd = rs->nodes[i];
        if (nd->has_field_id ? nd->field_id == id : (name && !strcmp(nd->path, name)))
            return (int)i;
    }
    return -1;
}

static int load_pos_file(rw_deletes *d, del_file *f, floe_pq_reader *r, floe_error *err) {
    int rc = 0;
    const floe_pq_rowset *rs;
    size_t cap = 0;
    const floe_pq_node *root = floe_pq_reader_root(r);
    bool ids = false;
    for (size_t i = 0; i < root->nchildren; i++)
        ids |= root->children[i].has_field_id;
    if (ids) {
        int32_t sel[2] = {RW_POS_FILE_PATH_ID, RW_POS_POS_ID};
        FLOE_FORWARD_IF_ERROR(floe_pq_reader_select_ids(r, sel, 2, err));
    } else {
        const char *sel[2] = {"file_path", "pos"};
        FLOE_FORWARD_IF_ERROR(floe_pq_reader_select_paths(r, sel, 2, err));
    }
    while ((rc = floe_pq_reader_next(r, &rs, err)) == 1) {
        int pc = rowset_col(rs, RW_POS_FILE_PATH_ID, "file_path");
        int qc = rowset_col(rs, RW_POS_POS_ID, "pos");
        if (pc < 0 || qc < 0)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "position delete file %s: no file_path/pos columns", f->path);
        const floe_colbuf *pcol = &rs->cols[pc], *qcol = &rs->cols[qc];
        if (pcol->phys != FLOE_PHYS_BYTE_ARRAY || qcol->phys != FLOE_PHYS_INT64 ||
            pcol->max_rep || qcol->max_rep)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "position delete file %s: file_path must be a string and "
                                  "pos a long", f->path);
        size_t pv = 0, qv = 0;
        size_t nslots = pcol->nlevels < qcol->nlevels ? pcol->nlevels : qcol->nlevels;
        /* the rows of one data file follow each other (the spec sorts them by path): a
         * path equal to the row before's takes its slot without hashing it */
        const uint8_t *last = NULL;
        size_t last_n = 0;
        uint32_t last_slot = 0;
        for (size_t i = 0; i < nslots; i++) {
            bool pnull = pcol->max_def && pcol->def[i] < pcol->max_def;
            bool qnull = qcol->max_def && qcol->def[i] < qcol->max_def;
            if (pnull || qnull) {
                pv += !pnull;
                qv += !qnull;
                continue; /* the spec makes both required: nothing to apply */
            }
            const uint8_t *pp = pcol->values + pcol->offsets[pv];
            size_t pn = pcol->offsets[pv + 1] - pcol->offsets[pv];
            int64_t pos = (int64_t)floe_load_le64(qcol->values + qv * 8);
            pv++;
            qv++;
            if (d->pos_rows >= MAX_DELETE_ROWS)
                return floe_error_set(err, FLOE_ELIMIT,
                                      "position delete files hold more than %u rows for one "
                                      "group", MAX_DELETE_ROWS);
            if (!last || pn != last_n || memcmp(pp, last, pn) != 0) {
                int64_t *slot;
                rc = floe_keyset_put(&f->paths, pp, pn, (int64_t)f->paths.n, &slot);
                if (rc < 0)
                    return floe_error_set(err, rc, "position delete file %s: %s", f->path,
                                          floe_strerror(rc));
                last = pp;
                last_n = pn;
                last_slot = (uint32_t)*slot;
            }
            if (f->nrows == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                pos_row *nr = floe_realloc(f->rows, nc * sizeof *nr);
                if (!nr)
                    return floe_error_set(err, FLOE_ENOMEM, "out of memory");
                f->rows = nr;
                cap = nc;
            }
            f->rows[f->nrows++] = (pos_row){last_slot, pos};
            d->pos_rows++;
        }
    }
    if (rc < 0)
        return rc;
    /* a file without rows leaves f->rows NULL; a file written as the spec asks is
     * sorted already */
    if (f->nrows > 1 && !pos_rows_sorted(f->rows, f->nrows))
        qsort(f->rows, f->nrows, sizeof *f->rows, cmp_pos_row);
    return 0;
}

/* The table leaf with this field id (primitive, outside lists and maps), or NULL. */
static const floe_field *eq_leaf(const floe_schema *s, int32_t id) {
    const floe_field *f = floe_schema_find_id(s, id);
    if (!f || f->leaf < 0 || f->rep_level > 0)
        return NULL;
    return f;
}

static int load_eq_file(rw_deletes *d, del_file *f, const floe_data_file *df, floe_pq_reader *r,
                        floe_error *err) {
    d->over_budget = false;
    int rc = 0;
    const floe_pq_rowset *rs;
    floe_buf key;
    floe_buf_init(&key, 0);
    int *cols = NULL;
    size_t *vi = NULL;
    floe_type_id *ttype = NULL; /* the table type of each equality column */
    FLOE_RETURN_ERROR_IF(!df->has_equality_ids || df->nequality_ids == 0, err, FLOE_ECORRUPT,
                         "equality delete file %s has no equality_ids", df->file_path);
    f->nids = df->nequality_ids;
    f->ids = floe_malloc(f->nids * sizeof *f->ids);
    f->leaf = floe_malloc(f->nids * sizeof *f->leaf);
    cols = floe_malloc(f->nids * sizeof *cols);
    vi = floe_calloc(f->nids, sizeof *vi);
    if (!f->ids || !f->leaf || !cols || !vi)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    memcpy(f->ids, df->equality_ids, f->nids * sizeof *f->ids);
    const char **names = floe_calloc(f->nids, sizeof *names);
    if (!names)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    ttype = floe_malloc(f->nids * sizeof *ttype);
    if (!ttype) {
        floe_free(names);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < f->nids; k++) {
        const floe_field *lf = eq_leaf(d->schema, f->ids[k]);
        if (!lf) {
            floe_free(names);
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "equality delete file %s: field %d is not a primitive column outside "
                      "lists and maps in the current schema", df->file_path, f->ids[k]);
        }
        names[k] = lf->parent ? NULL : lf->name;
        f->leaf[k] = (size_t)lf->leaf;
        ttype[k] = lf->type;
    }
    rc = floe_pq_reader_select_ids(r, f->ids, f->nids, err);
    if (rc == FLOE_ENOTFOUND) {
        /* a delete file without field ids: by the current top-level names */
        rc = floe_pq_reader_select_paths(r, names, f->nids, err);
    }
    if (rc < 0) {
        floe_free(names);
        goto done;
    }
    /* slots for the rows the manifest counts, when the budget has room for them: the set
     * is not rehashed at each doubling (a count that is wrong costs memory, not rows) */
    if (df->record_count > 0 && df->record_count <= EQ_RESERVE_MAX && d->nslices <= 1) {
        floe_keyset probe = {0};
        size_t cap = 256;
        while ((size_t)df->record_count * 4 > cap * 3)
            cap *= 2;
        probe.cap = cap;
        if (d->key_budget == 0 || d->key_bytes + keyset_bytes(&probe) <= d->key_budget)
            (void)floe_keyset_reserve(&f->keys, (size_t)df->record_count); /* ENOMEM: grown */
    }
    while ((rc = floe_pq_reader_next(r, &rs, err)) == 1) {
        for (size_t k = 0; k < f->nids; k++) {
            cols[k] = rowset_col(rs, f->ids[k], names[k]);
            vi[k] = 0;
            if (cols[k] < 0 || rs->cols[cols[k]].max_rep) {
                floe_free(names);
                FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s: column %d missing",
                          df->file_path, f->ids[k]);
            }
        }
        for (int64_t row = 0; row < rs->nrows; row++) {
            floe_buf_reset(&key);
            for (size_t k = 0; k < f->nids; k++) {
                const floe_colbuf *c = &rs->cols[cols[k]];
                if ((size_t)row >= c->nlevels) {
                    floe_free(names);
                    FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s: short column",
                              df->file_path);
                }
                floe_type_id vt = rs->nodes[cols[k]]->value_type;
                if (vt == FLOE_TYPE_DATE && (ttype[k] == FLOE_TYPE_TIMESTAMP ||
                                             ttype[k] == FLOE_TYPE_TIMESTAMP_NS)) {
                    /* a date column promoted since: the data rows' values are read as
                     * midnight in the table's unit, so the delete's must be too */
                    rc = key_date_as_ts(&key, c, ttype[k], &vi[k], (size_t)row, err);
                    if (rc < 0) {
                        floe_free(names);
                        floe_error_prefix(err, "equality delete file %s: ", df->file_path);
                        goto done;
                    }
                } else if (key_column(&key, c, vt, &vi[k], (size_t)row) < 0) {
                    floe_free(names);
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                }
            }
            if (d->nslices > 1 && floe_hash64(key.data, key.len) % d->nslices != d->slice)
                continue; /* another pass's */
            if (d->key_budget > 0 &&
                d->key_bytes + keyset_bytes_after(&f->keys, key.len) > d->key_budget) {
                d->over_budget = true;
                floe_free(names);
                FLOE_FAIL(err, FLOE_ELIMIT, "equality delete keys over %" PRId64 " bytes "
                          "(%s)", d->key_budget, FLOE_RW_EQ_DELETE_BUFFER);
            }
            rc = floe_keyset_put(&f->keys, key.data, key.len, 0, NULL);
            if (rc < 0) {
                floe_free(names);
                FLOE_FAIL(err, rc, "equality delete file %s: %s", df->file_path,
                          floe_strerror(rc));
            }
            if (d->key_bytes + keyset_bytes(&f->keys) > d->key_bytes_peak)
                d->key_bytes_peak = d->key_bytes + keyset_bytes(&f->keys);
        }
    }
    floe_free(names);
    d->key_bytes += keyset_bytes(&f->keys);
done:
    floe_buf_free(&key);
    floe_free(cols);
    floe_free(vi);
    floe_free(ttype);
    return rc < 0 ? rc : 0;
}

/* A deletion vector as position delete rows of its one data file. limit: that file's
 * record count. */
static int load_dv(rw_deletes *d, del_file *f, const floe_data_file *df, const char *uri,
                   int64_t limit, floe_error *err) {
    floe_dv_positions dv;
    FLOE_FORWARD_IF_ERROR(floe_dv_cache_read(&d->dvc, d->io, uri, df->content_offset,
                                             df->content_size_in_bytes,
                                             df->referenced_data_file, limit, &dv, err));
    int rc = 0;
    if (dv.n > MAX_DELETE_ROWS - d->pos_rows)
        FLOE_FAIL(err, FLOE_ELIMIT, "position delete files hold more than %u rows for one "
                  "group", MAX_DELETE_ROWS);
    int64_t *slot;
    rc = floe_keyset_put(&f->paths, (const uint8_t *)df->referenced_data_file,
                         strlen(df->referenced_data_file), 0, &slot);
    if (rc < 0)
        FLOE_FAIL(err, rc, "deletion vector %s: %s", f->path, floe_strerror(rc));
    if (dv.n && !(f->rows = floe_malloc(dv.n * sizeof *f->rows)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < dv.n; i++)
        f->rows[i] = (pos_row){0, dv.pos[i]};
    f->nrows = dv.n;
    d->pos_rows += dv.n;
done:
    floe_free(dv.pos);
    return rc;
}

/* The cache index's key of (path, offset) in d->ikey. */
static int index_key(rw_deletes *d, const char *path, int64_t offset) {
    floe_buf_reset(&d->ikey);
    if (floe_buf_append(&d->ikey, &offset, sizeof offset) < 0 ||
        floe_buf_append(&d->ikey, path, strlen(path)) < 0)
        return FLOE_ENOMEM;
    return 0;
}

static int index_put(rw_deletes *d, size_t i) {
    int rc = index_key(d, d->files[i]->path, d->files[i]->offset);
    return rc < 0 ? rc : floe_keyset_put(&d->index, d->ikey.data, d->ikey.len, (int64_t)i, NULL);
}

/* Plan entry df is files[i] (ENOMEM only costs the next lookup a hash of its path). */
static void entry_put(rw_deletes *d, const floe_data_file *df, size_t i) {
    if (d->nentries == d->entry_cap) {
        size_t nc = d->entry_cap ? d->entry_cap * 2 : 64;
        const floe_data_file **ne = floe_realloc(d->entry, nc * sizeof *ne);
        if (!ne)
            return;
        d->entry = ne;
        size_t *nf = floe_realloc(d->entry_file, nc * sizeof *nf);
        if (!nf)
            return;
        d->entry_file = nf;
        d->entry_cap = nc;
    }
    if (floe_hashset_add(&d->by_entry, floe_hash64(&df, sizeof df), (int64_t)d->nentries) < 0)
        return;
    d->entry[d->nentries] = df;
    d->entry_file[d->nentries++] = i;
}

static int deletes_get(rw_deletes *d, const floe_data_file *df, const char *uri, int64_t limit,
                       int64_t seq, del_file **out, floe_error *err) {
    size_t pos = 0;
    const int64_t *at;
    while ((at = floe_hashset_next(&d->by_entry, floe_hash64(&df, sizeof df), &pos)))
        if (d->entry[*at] == df) {
            *out = d->files[d->entry_file[*at]];
            return 0;
        }
    bool dv = floe_data_file_is_dv(df);
    int64_t offset = dv ? df->content_offset : 0;
    FLOE_RETURN_ERROR_IF(index_key(d, df->file_path, offset) < 0, err, FLOE_ENOMEM,
                         "out of memory");
    at = floe_keyset_find(&d->index, d->ikey.data, d->ikey.len);
    if (at) {
        entry_put(d, df, (size_t)*at);
        *out = d->files[*at];
        return 0;
    }
    if (!dv && df->file_format && strcasecmp(df->file_format, "parquet"))
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "delete file %s: format %s is not supported (Avro/ORC delete "
                              "files cannot be applied)",
                              df->file_path, df->file_format);
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 8;
        del_file **nf = floe_realloc(d->files, nc * sizeof *nf);
        FLOE_RETURN_ERROR_IF(!nf, err, FLOE_ENOMEM, "out of memory");
        d->files = nf;
        d->cap = nc;
    }
    del_file *f = floe_calloc(1, sizeof *f);
    FLOE_RETURN_ERROR_IF(!f, err, FLOE_ENOMEM, "out of memory");
    f->content = df->content;
    f->offset = offset;
    f->seq = seq;
    if (!(f->path = floe_strdup(df->file_path))) {
        floe_free(f);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_pq_reader *r = NULL;
    floe_pq_reader_options ro = {.read_whole = true}; /* every column of it is read */
    int rc = dv ? load_dv(d, f, df, uri, limit, err) : floe_pq_reader_open(d->io, uri, &ro, &r, err);
    if (rc == 0 && !dv)
        rc = df->content == FLOE_CONTENT_POSITION_DELETES ? load_pos_file(d, f, r, err)
                                                          : load_eq_file(d, f, df, r, err);
    floe_pq_reader_close(r);
    if (rc < 0) {
        floe_error_prefix(err, "delete file %s: ", df->file_path);
        del_file_free(f);
        return rc;
    }
    d->files[d->n++] = f;
    if ((rc = index_put(d, d->n - 1)) < 0) {
        d->n--;
        del_file_free(f);
        return floe_error_set(err, rc, "delete file %s: %s", df->file_path, floe_strerror(rc));
    }
    entry_put(d, df, d->n - 1);
    *out = f;
    return 0;
}

void rw_deletes_set_budget(rw_deletes *d, int64_t bytes) { d->key_budget = bytes > 0 ? bytes : 0; }
bool rw_deletes_over_budget(const rw_deletes *d) { return d->over_budget; }
int64_t rw_deletes_key_bytes_peak(const rw_deletes *d) { return d->key_bytes_peak; }
void rw_deletes_set_slice(rw_deletes *d, uint64_t nslices, uint64_t slice) {
    d->nslices = nslices;
    d->slice = slice;
}
void rw_deletes_set_eq_resolved(rw_deletes *d, bool resolved) { d->eq_resolved = resolved; }

bool rw_input_has_eq(const floe_rewrite_input *in) {
    for (size_t i = 0; i < in->ndeletes; i++)
        if (in->deletes[i]->content == FLOE_CONTENT_EQUALITY_DELETES)
            return true;
    return false;
}

int rw_deletes_load_eq(rw_deletes *d, const floe_rewrite_input *in, floe_error *err) {
    for (size_t i = 0; i < in->ndeletes; i++) {
        del_file *f;
        if (in->deletes[i]->content == FLOE_CONTENT_EQUALITY_DELETES)
            FLOE_FORWARD_IF_ERROR(deletes_get(d, in->deletes[i], in->delete_uris[i], INT64_MAX,
                                              in->delete_sequence_numbers
                                                  ? in->delete_sequence_numbers[i]
                                                  : -1,
                                              &f, err));
    }
    return 0;
}

static bool same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && !memcmp(a, b, na * sizeof *a);
}

static eq_merged *merged_find(const rw_deletes *d, const int32_t *ids, size_t nids) {
    for (size_t i = 0; i < d->nmerged; i++)
        if (same_ids(d->merged[i].ids, d->merged[i].nids, ids, nids))
            return &d->merged[i];
    return NULL;
}

static int cmp_i64(const void *a, const void *b);

int rw_deletes_merge_eq(rw_deletes *d, floe_error *err) {
    int rc = 0;
    merged_free(d);
    d->over_budget = false;
    for (size_t i = 0; i < d->n; i++) /* without every sequence number: no merge */
        if (d->files[i]->content == FLOE_CONTENT_EQUALITY_DELETES && d->files[i]->seq < 0)
            return 0;
    int64_t base = d->key_bytes;
    for (size_t i = 0; i < d->n; i++) {
        const del_file *f = d->files[i];
        if (f->content != FLOE_CONTENT_EQUALITY_DELETES)
            continue;
        eq_merged *m = merged_find(d, f->ids, f->nids);
        if (!m) {
            eq_merged *nm = floe_realloc(d->merged, (d->nmerged + 1) * sizeof *nm);
            if (!nm)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            d->merged = nm;
            m = &d->merged[d->nmerged++];
            memset(m, 0, sizeof *m);
            m->ids = f->ids;
            m->nids = f->nids;
            /* slots for every member's keys at once, when the budget has room for them:
             * no rehash of the set at each doubling */
            size_t total = 0;
            for (size_t j = i; j < d->n; j++)
                if (d->files[j]->content == FLOE_CONTENT_EQUALITY_DELETES &&
                    same_ids(d->files[j]->ids, d->files[j]->nids, f->ids, f->nids))
                    total += d->files[j]->keys.n;
            size_t cap = 256;
            while (total * 4 > cap * 3 && cap < ((size_t)1 << 40))
                cap *= 2;
            int64_t held = base + (int64_t)(cap * (sizeof *m->keys.hash + sizeof *m->keys.off +
                                                   sizeof *m->keys.len + sizeof *m->keys.val));
            for (size_t j = 0; j + 1 < d->nmerged; j++)
                held += keyset_bytes(&d->merged[j].keys);
            if (d->key_budget == 0 || held <= d->key_budget)
                (void)floe_keyset_reserve(&m->keys, total); /* ENOMEM: grown as it fills */
        }
        if (m->nseqs == m->seq_cap) {
            size_t nc = m->seq_cap ? m->seq_cap * 2 : 16;
            int64_t *ns = floe_realloc(m->seqs, nc * sizeof *ns);
            if (!ns)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            m->seqs = ns;
            m->seq_cap = nc;
        }
        m->seqs[m->nseqs++] = f->seq;
        for (size_t k = 0; k < f->keys.cap; k++) {
            /* the merged set's slots of the key PROBE_AHEAD slots on (hash[] holds the
             * keys' hashes, the same function) are fetched while this one goes in */
            if (k + PROBE_AHEAD < f->keys.cap && f->keys.hash[k + PROBE_AHEAD])
                floe_keyset_prefetch(&m->keys, f->keys.hash[k + PROBE_AHEAD]);
            if (!f->keys.hash[k])
                continue;
            int64_t held = base - keyset_bytes(&m->keys) +
                           keyset_bytes_after(&m->keys, f->keys.len[k]);
            for (size_t j = 0; j < d->nmerged; j++)
                held += keyset_bytes(&d->merged[j].keys);
            if (d->key_budget > 0 && held > d->key_budget) {
                d->over_budget = true;
                FLOE_FAIL(err, FLOE_ELIMIT, "equality delete keys over %" PRId64 " bytes (%s)",
                          d->key_budget, FLOE_RW_EQ_DELETE_BUFFER);
            }
            int64_t *slot;
            rc = floe_keyset_put(&m->keys, floe_keyset_key(&f->keys, k), f->keys.len[k],
                                 f->seq, &slot);
            if (rc < 0)
                FLOE_FAIL(err, rc, "merging equality delete keys: %s", floe_strerror(rc));
            if (*slot < f->seq)
                *slot = f->seq;
        }
        int64_t held = base;
        for (size_t j = 0; j < d->nmerged; j++)
            held += keyset_bytes(&d->merged[j].keys);
        if (held > d->key_bytes_peak)
            d->key_bytes_peak = held;
    }
    int64_t held = base;
    for (size_t j = 0; j < d->nmerged; j++) {
        qsort(d->merged[j].seqs, d->merged[j].nseqs, sizeof *d->merged[j].seqs, cmp_i64);
        held += keyset_bytes(&d->merged[j].keys);
    }
    for (size_t j = 0; j < d->nmerged; j++) { /* filters, as far as the budget allows */
        eq_merged *m = &d->merged[j];
        size_t nb = bloom_bytes(m->keys.n);
        if (d->key_budget > 0 && held + (int64_t)nb > d->key_budget)
            continue; /* probed without one: the same rows, more slowly */
        if (!(m->bloom = floe_calloc(nb / sizeof *m->bloom, sizeof *m->bloom)))
            continue;
        m->bloom_mask = nb / sizeof *m->bloom - 1;
        held += (int64_t)nb;
        for (size_t k = 0; k < m->keys.cap; k++) {
            if (!m->keys.hash[k])
                continue;
            uint64_t h = bloom_hash(floe_keyset_key(&m->keys, k), m->keys.len[k]);
            m->bloom[h & m->bloom_mask] |= bloom_bits(h);
        }
    }
    if (held > d->key_bytes_peak)
        d->key_bytes_peak = held;
    d->key_bytes = held;
done:
    if (rc < 0)
        merged_free(d);
    return rc;
}

void rw_deletes_drop_eq(rw_deletes *d) {
    merged_free(d);
    size_t w = 0;
    for (size_t i = 0; i < d->n; i++) {
        del_file *f = d->files[i];
        if (f->content != FLOE_CONTENT_EQUALITY_DELETES) {
            d->files[w++] = f;
            continue;
        }
        floe_free(f->path);
        floe_free(f->ids);
        floe_free(f->leaf);
        floe_keyset_free(&f->keys);
        floe_free(f);
    }
    d->n = w;
    d->key_bytes = 0;
    d->over_budget = false;
    /* the files left moved: index them again (no allocation beyond what the index had,
     * unless a key is longer than any before, which cannot be: same paths) */
    floe_keyset_free(&d->index);
    memset(&d->index, 0, sizeof d->index);
    floe_hashset_free(&d->by_entry); /* found again through the index */
    d->nentries = 0;
    for (size_t i = 0; i < d->n; i++)
        if (index_put(d, i) < 0)
            break; /* ENOMEM: deletes_get loads a file the index misses again */
}

/* ---------------------------------------------------------------------------------------
 * matching the table schema onto the file's Parquet tree
 * ------------------------------------------------------------------------------------- */
/* SRC_VARIANT: a variant's value part put back together from the file's variant group
 * (shredded, or with an optional value), at the levels of its metadata column (node). */
typedef enum src_kind { SRC_FILE = 0, SRC_CONST, SRC_SIBLING, SRC_VARIANT } src_kind;
/* CONV_DATE_US / _NS: a date column promoted to timestamp / timestamp_ns (format v3) */
typedef enum conv_kind {
    CONV_NONE = 0, CONV_I32_I64, CONV_F32_F64, CONV_DEC, CONV_DATE_US, CONV_DATE_NS
} conv_kind;

typedef struct leaf_src {
    src_kind kind;
    const floe_pq_node *node;    /* SRC_FILE: the file leaf */
    int16_t *defmap;             /* file def -> table def, -1 = refused; NULL = identity */
    conv_kind conv;
    /* SRC_CONST: a value (has_value) for every row, else null at definition level
     * null_def. SRC_SIBLING: the same where the ancestor the file has is present */
    bool has_value;
    uint8_t *value;
    size_t value_len;
    int16_t null_def;
    /* SRC_SIBLING: levels of table leaf `sibling` where the ancestor is absent (defs
     * below cap), the constant above where it is present */
    size_t sibling;
    int16_t cap;
    int lineage;                 /* a row lineage column: 1 _row_id, 2 the sequence number
                                    (filled by fill_lineage, from the file or inherited) */
    const floe_pq_node *vgroup;  /* SRC_VARIANT, and the metadata beside it: the group */
} leaf_src;

typedef struct matched {
    const floe_field *field;
    const floe_pq_node *node;
    const floe_pq_node *vgroup;  /* a variant part read through its group (SRC_VARIANT) */
} matched;

/* A row of merged_dense whose key the filter passed: its key and the key set's hash. */
typedef struct eq_cand {
    size_t row;
    uint64_t x;
    uint64_t h;
} eq_cand;

struct rw_reader {
    const floe_schema *schema;
    const floe_rewrite_input *in;
    floe_pq_reader *pq;
    leaf_src *src;               /* schema->nleaves */
    matched *m;
    size_t nm, mcap;
    floe_name_mapping *mapping;
    floe_field_match *fm;        /* table field -> file node */
    floe_arena arena;
    int *col_idx;                /* file column -> rowset index (per row group) */
    floe_colbuf **into;          /* file column -> batch column decoded into, or NULL */
    size_t ncolumns;
    /* deletes */
    int64_t *positions;          /* sorted, unique */
    size_t npositions, pos_i;
    del_file **eq;
    size_t neq;
    size_t neq_resolved;         /* equality delete files skipped: given as positions */
    const eq_merged *merged;     /* the eq files, all of one id set, probed at once */
    const size_t *merged_leaf;   /* its table leaves */
    size_t neq_merged;
    bool collect_eq;             /* note the positions of rows equality deletes drop */
    int64_t *eq_pos;
    size_t neq_pos, eq_pos_cap;
    size_t **eq_leaf;            /* per eq file: table leaf indices */
    uint8_t *keep;
    size_t keep_cap;
    bool generic;                /* floe_rewrite_set_generic_reader at the open */
    eq_cand *cand;               /* merged_dense's rows to probe */
    size_t cand_cap;
    floe_buf key;
    floe_buf vvalues, voffsets;  /* a variant put back together (SRC_VARIANT) */
    floe_batch tmp;
    bool tmp_init;
    int64_t row_base;
    rw_read_stats st;
    size_t next_rg, nrg;
    size_t *l0;                  /* per table leaf: slots before the row group being filled */
    bool copy_file;              /* the file qualifies for row-group copy */
    rw_copy_policy copy;
    int64_t slice_bytes;         /* 0: whole row groups; else see rw_reader_set_slice */
    int64_t rg_row;              /* next row of row group next_rg being read in slices */
    int64_t slice_rows;          /* rows per slice of that row group (0: not sliced) */
};

void rw_reader_set_slice(rw_reader *r, int64_t bytes) { r->slice_bytes = bytes > 0 ? bytes : 0; }

static int push_match(rw_reader *r, const floe_field *f, const floe_pq_node *n) {
    if (r->nm == r->mcap) {
        size_t nc = r->mcap ? r->mcap * 2 : 32;
        matched *nm = floe_realloc(r->m, nc * sizeof *nm);
        if (!nm)
            return FLOE_ENOMEM;
        r->m = nm;
        r->mcap = nc;
    }
    r->m[r->nm++] = (matched){f, n, NULL};
    return 0;
}

static const matched *match_of(const rw_reader *r, const floe_field *f) {
    for (size_t i = 0; i < r->nm; i++)
        if (r->m[i].field == f)
            return &r->m[i];
    return NULL;
}

static const floe_pq_node *child_node(const floe_pq_node *nd, const char *name) {
    for (size_t k = 0; k < nd->nchildren; k++)
        if (!strcmp(nd->children[k].name, name))
            return &nd->children[k];
    return NULL;
}

/* Record the file node of table field tf (matched by floe_field_match) and of the fields
 * below it, refusing a file whose shape differs from the table's. */
static int match_field(rw_reader *r, const floe_field *tf, const floe_pq_node *nd,
                       floe_error *err) {
    char path[256];
    bool group = nd->phys < 0;
    if (!floe_type_is_nested(tf->type)) {
        FLOE_RETURN_ERROR_IF(group, err, FLOE_EUNSUPPORTED,
                             "column %s is a %s in the table but a group in the file",
                             floe_field_path(tf, path, sizeof path), floe_type_name(tf->type));
        return push_match(r, tf, nd) < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
    }
    FLOE_RETURN_ERROR_IF(!group, err, FLOE_EUNSUPPORTED,
                         "column %s is a %s in the table but a primitive in the file",
                         floe_field_path(tf, path, sizeof path), floe_type_name(tf->type));
    if (push_match(r, tf, nd) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (tf->type == FLOE_TYPE_VARIANT) {
        /* its parts by name: an unshredded VARIANT group's two leaves are copied; any other
         * layout (shredded, or a value that may be null) has its metadata copied and its
         * value put back together (SRC_VARIANT) */
        const floe_pq_node *meta = child_node(nd, "metadata");
        const floe_pq_node *value = child_node(nd, "value");
        FLOE_RETURN_ERROR_IF(!meta || meta->phys != FLOE_PHYS_BYTE_ARRAY || meta->repetition != 0,
                             err, FLOE_EUNSUPPORTED,
                             "column %s: the file's variant has no required binary metadata",
                             floe_field_path(tf, path, sizeof path));
        bool plain = nd->nchildren == 2 && value && value->phys == FLOE_PHYS_BYTE_ARRAY &&
                     value->repetition == 0;
        for (size_t i = 0; i < tf->nchildren; i++) {
            const floe_field *part = &tf->children[i];
            bool is_meta = !strcmp(part->name, "metadata");
            FLOE_FORWARD_IF_ERROR(match_field(r, part, is_meta || !plain ? meta : value, err));
            if (!plain)
                r->m[r->nm - 1].vgroup = nd;
        }
        return 0;
    }
    if (tf->type != FLOE_TYPE_STRUCT)
        FLOE_RETURN_ERROR_IF(nd->nchildren != 1 || nd->children[0].repetition != 2, err,
                             FLOE_EUNSUPPORTED, "column %s: unexpected %s layout in the file",
                             floe_field_path(tf, path, sizeof path), floe_type_name(tf->type));
    if (tf->type == FLOE_TYPE_MAP)
        FLOE_RETURN_ERROR_IF(nd->children[0].nchildren != 2, err, FLOE_EUNSUPPORTED,
                             "column %s: a map's key_value group needs key and value",
                             floe_field_path(tf, path, sizeof path));
    for (size_t i = 0; i < tf->nchildren; i++) {
        const floe_pq_node *cn = floe_field_match_node(r->fm, &tf->children[i]);
        if (cn)
            FLOE_FORWARD_IF_ERROR(match_field(r, &tf->children[i], cn, err));
        else
            FLOE_RETURN_ERROR_IF(tf->type != FLOE_TYPE_STRUCT, err, FLOE_EUNSUPPORTED,
                                 "column %s: unexpected %s layout in the file",
                                 floe_field_path(tf, path, sizeof path),
                                 floe_type_name(tf->type));
    }
    return 0;
}

/* Definition-level chains: one step per Parquet node from the top-level field down. */
typedef struct chain {
    int8_t inc[64];
    bool rep[64];
    int n;
} chain;

static bool table_chain(const floe_field *leaf, chain *c) {
    const floe_field *path[64];
    int n = 0;
    for (const floe_field *f = leaf; f; f = f->parent) {
        if (n == 64)
            return false;
        path[n++] = f;
    }
    c->n = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (c->n >= 63)
            return false;
        c->inc[c->n] = path[i]->required ? 0 : 1;
        c->rep[c->n++] = false;
        if (path[i]->type == FLOE_TYPE_LIST || path[i]->type == FLOE_TYPE_MAP) {
            c->inc[c->n] = 1;
            c->rep[c->n++] = true;
        }
    }
    return true;
}

static bool file_chain(const floe_pq_node *leaf, chain *c) {
    const floe_pq_node *path[64];
    int n = 0;
    for (const floe_pq_node *p = leaf; p && p->parent; p = p->parent) {
        if (n == 64)
            return false;
        path[n++] = p;
    }
    c->n = 0;
    for (int i = n - 1; i >= 0; i--) {
        c->inc[c->n] = path[i]->repetition != 0;
        c->rep[c->n++] = path[i]->repetition == 2;
    }
    return true;
}

static int plan_levels(rw_reader *r, const floe_field *leaf, leaf_src *ls, floe_error *err) {
    char path[256];
    chain tc, fc;
    const floe_pq_node *nd = ls->node;
    if (!table_chain(leaf, &tc) || !file_chain(nd, &fc) || tc.n != fc.n)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "column %s: the file nests it differently (legacy list layout?)",
                              floe_field_path(leaf, path, sizeof path));
    bool same = true;
    for (int i = 0; i < tc.n; i++) {
        if (tc.rep[i] != fc.rep[i])
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "column %s: repetition differs between table and file",
                                  floe_field_path(leaf, path, sizeof path));
        same &= tc.inc[i] == fc.inc[i];
    }
    if (same)
        return 0;
    int16_t fmax = nd->def_level;
    ls->defmap = floe_arena_alloc(&r->arena, ((size_t)fmax + 1) * sizeof *ls->defmap);
    FLOE_RETURN_ERROR_IF(!ls->defmap, err, FLOE_ENOMEM, "out of memory");
    for (int16_t d = 0; d <= fmax; d++) {
        int cf = 0, ct = 0, k = 0;
        while (k < fc.n && cf + fc.inc[k] <= d) {
            cf += fc.inc[k];
            ct += tc.inc[k];
            k++;
        }
        /* the first node not defined is optional in the file; if the table requires it
         * the file holds a null the table cannot */
        ls->defmap[d] = (int16_t)(k < tc.n && tc.inc[k] == 0 ? -1 : ct);
    }
    return 0;
}

static int plan_conv(const floe_field *leaf, leaf_src *ls, floe_error *err) {
    char path[256];
    const floe_pq_node *nd = ls->node;
    floe_phys fp = (floe_phys)nd->phys;
    /* the reader hands some types over in another layout (INT96 -> INT64 ...): use the
     * value type it decodes to */
    switch (nd->value_type) {
    case FLOE_TYPE_BOOLEAN: fp = FLOE_PHYS_BOOLEAN; break;
    case FLOE_TYPE_INT: case FLOE_TYPE_DATE: fp = FLOE_PHYS_INT32; break;
    case FLOE_TYPE_LONG: case FLOE_TYPE_TIME: case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ: case FLOE_TYPE_TIMESTAMP_NS: case FLOE_TYPE_TIMESTAMPTZ_NS:
        fp = FLOE_PHYS_INT64; break;
    case FLOE_TYPE_FLOAT: fp = FLOE_PHYS_FLOAT; break;
    case FLOE_TYPE_DOUBLE: fp = FLOE_PHYS_DOUBLE; break;
    default: break;
    }
    if (leaf->type == FLOE_TYPE_DECIMAL && nd->value_type == FLOE_TYPE_DECIMAL) {
        FLOE_RETURN_ERROR_IF(nd->scale != leaf->scale, err, FLOE_EUNSUPPORTED,
                             "column %s: decimal scale %d in the file, %d in the table",
                             floe_field_path(leaf, path, sizeof path), nd->scale, leaf->scale);
        if (nd->precision != leaf->precision)
            ls->conv = CONV_DEC;
        return 0;
    }
    if (fp == leaf->phys) {
        if (fp == FLOE_PHYS_FIXED && nd->type_length != leaf->type_length)
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "column %s: fixed length %d in the file, %d in the table",
                                  floe_field_path(leaf, path, sizeof path), nd->type_length,
                                  leaf->type_length);
        return 0;
    }
    if (nd->value_type == FLOE_TYPE_DATE &&
        (leaf->type == FLOE_TYPE_TIMESTAMP || leaf->type == FLOE_TYPE_TIMESTAMP_NS)) {
        ls->conv = leaf->type == FLOE_TYPE_TIMESTAMP ? CONV_DATE_US : CONV_DATE_NS;
        return 0;
    }
    if (fp == FLOE_PHYS_INT32 && leaf->phys == FLOE_PHYS_INT64) {
        ls->conv = CONV_I32_I64;
        return 0;
    }
    if (fp == FLOE_PHYS_FLOAT && leaf->phys == FLOE_PHYS_DOUBLE) {
        ls->conv = CONV_F32_F64;
        return 0;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: file type %s cannot be read as %s",
                          floe_field_path(leaf, path, sizeof path), nd->type_text,
                          floe_type_name(leaf->type));
}

/* A floe_value in a leaf's in-memory layout, into the reader arena. */
static int value_bytes(rw_reader *r, const floe_field *leaf, const floe_value *v, leaf_src *ls,
                       floe_error *err) {
    uint8_t tmp[16];
    const void *p = tmp;
    size_t n = (size_t)floe_phys_width(leaf->phys, leaf->type_length);
    switch (leaf->type) {
    case FLOE_TYPE_BOOLEAN: tmp[0] = v->v.b; break;
    case FLOE_TYPE_INT: case FLOE_TYPE_DATE: floe_store_le32(tmp, (uint32_t)v->v.i32); break;
    case FLOE_TYPE_FLOAT: memcpy(tmp, &v->v.f, 4); break;
    case FLOE_TYPE_DOUBLE: memcpy(tmp, &v->v.d, 8); break;
    case FLOE_TYPE_DECIMAL: {
        floe_i128 x = v->v.dec.unscaled;
        dec_to(x, leaf->phys, leaf->type_length, tmp);
        break;
    }
    case FLOE_TYPE_UUID: p = v->v.uuid; n = 16; break;
    case FLOE_TYPE_STRING: case FLOE_TYPE_BINARY: case FLOE_TYPE_FIXED:
        p = v->v.bytes.p;
        n = v->v.bytes.n;
        break;
    default: /* long, time, timestamps */
        if (leaf->phys != FLOE_PHYS_INT64)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "constant of type %s",
                                  floe_type_name(leaf->type));
        floe_store_le64(tmp, (uint64_t)v->v.i64);
        break;
    }
    ls->value = floe_arena_memdup(&r->arena, n ? p : "", n ? n : 1);
    FLOE_RETURN_ERROR_IF(!ls->value, err, FLOE_ENOMEM, "out of memory");
    ls->value_len = n;
    ls->has_value = true;
    return 0;
}

static bool is_ancestor(const floe_field *a, const floe_field *f) {
    for (const floe_field *p = f->parent; p; p = p->parent)
        if (p == a)
            return true;
    return false;
}

/* A leaf the file lacks: the value the spec gives it (identity partition value for a
 * top-level column, else the initial-default of the outermost missing field, taken down
 * to the leaf; else null), constant for every row, or where the ancestor the file has is
 * present (levels from a sibling column under that ancestor). */
static int plan_missing(rw_reader *r, const floe_field *leaf, const floe_partition_spec *spec,
                        leaf_src *ls, floe_error *err) {
    char path[256];
    /* nearest ancestor the file has, and the outermost field below it that it lacks */
    const floe_field *anc = NULL;
    for (const floe_field *p = leaf->parent; p && !anc; p = p->parent)
        if (match_of(r, p))
            anc = p;
    const floe_field *from = leaf;
    while (from->parent && from->parent != anc)
        from = from->parent;
    floe_value v = floe_value_null(leaf->type);
    int16_t def = 0;
    bool done = false;
    if (!anc && from == leaf) {
        const floe_data_file *df = r->in->file;
        for (size_t k = 0; spec && k < spec->nfields && k < df->npartition && !done; k++) {
            const floe_partition_field *pf = &spec->fields[k];
            if (pf->source_id == leaf->id && pf->transform.kind == FLOE_XF_IDENTITY) {
                v = df->partition[k];
                def = v.is_null ? 0 : leaf->def_level;
                done = true;
            }
        }
    }
    if (!done) {
        floe_error e;
        floe_error_clear(&e);
        int rc = floe_default_at(from, leaf, true, &r->arena, &v, &def, &e);
        if (rc < 0)
            return floe_error_set(err, rc, "column %s is missing from data file %s: %s",
                                  floe_field_path(leaf, path, sizeof path),
                                  r->in->file->file_path, e.msg);
    }
    if (!v.is_null)
        FLOE_FORWARD_IF_ERROR(value_bytes(r, leaf, &v, ls, err));
    ls->null_def = def;
    if (!anc) {
        ls->kind = SRC_CONST;
        return 0;
    }
    for (size_t i = 0; i < r->schema->nleaves; i++) {
        const floe_field *s = r->schema->leaves[i];
        if (r->src[i].kind == SRC_FILE && r->src[i].node && is_ancestor(anc, s) &&
            s->rep_level == anc->rep_level) {
            ls->kind = SRC_SIBLING;
            ls->sibling = i;
            ls->cap = anc->def_level;
            return 0;
        }
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "column %s is missing from data file %s and no sibling column "
                          "gives its levels",
                          floe_field_path(leaf, path, sizeof path), r->in->file->file_path);
}

/* ---------------------------------------------------------------------------------------
 * open / next / close
 * ------------------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* r->positions sorted, each once. */
static void positions_sort(rw_reader *r) {
    if (r->npositions < 2)
        return;
    bool sorted = true; /* one delete file's, most often: sorted already */
    for (size_t i = 1; i < r->npositions && sorted; i++)
        sorted = r->positions[i - 1] <= r->positions[i];
    if (!sorted)
        qsort(r->positions, r->npositions, sizeof *r->positions, cmp_i64);
    size_t w = 1;
    for (size_t i = 1; i < r->npositions; i++)
        if (r->positions[i] != r->positions[w - 1])
            r->positions[w++] = r->positions[i];
    r->npositions = w;
}

static int load_deletes(rw_reader *r, rw_deletes *dels, floe_error *err) {
    const floe_rewrite_input *in = r->in;
    size_t pcap = 0;
    r->eq = floe_calloc(in->ndeletes + 1, sizeof *r->eq);
    r->eq_leaf = floe_calloc(in->ndeletes + 1, sizeof *r->eq_leaf);
    FLOE_RETURN_ERROR_IF(!r->eq || !r->eq_leaf, err, FLOE_ENOMEM, "out of memory");
    for (size_t d = 0; d < in->ndeletes; d++) {
        del_file *f = NULL;
        if (dels->eq_resolved && in->deletes[d]->content == FLOE_CONTENT_EQUALITY_DELETES) {
            r->neq_resolved++;
            continue;
        }
        FLOE_FORWARD_IF_ERROR(deletes_get(dels, in->deletes[d], in->delete_uris[d],
                                          in->file->record_count >= 0 ? in->file->record_count
                                                                      : INT64_MAX,
                                          in->delete_sequence_numbers
                                              ? in->delete_sequence_numbers[d]
                                              : -1,
                                          &f, err));
        if (f->content == FLOE_CONTENT_POSITION_DELETES) {
            int64_t *idx = floe_keyset_find(&f->paths, (const uint8_t *)in->file->file_path,
                                       strlen(in->file->file_path));
            if (!idx)
                continue;
            pos_row key = {(uint32_t)*idx, INT64_MIN};
            size_t lo = 0, hi = f->nrows;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp_pos_row(&f->rows[mid], &key) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t k = lo; k < f->nrows && f->rows[k].path == key.path; k++) {
                if (r->npositions == pcap) {
                    size_t nc = pcap ? pcap * 2 : 256;
                    int64_t *np = floe_realloc(r->positions, nc * sizeof *np);
                    FLOE_RETURN_ERROR_IF(!np, err, FLOE_ENOMEM, "out of memory");
                    r->positions = np;
                    pcap = nc;
                }
                r->positions[r->npositions++] = f->rows[k].pos;
            }
        } else {
            size_t *leaves = f->leaf; /* hundreds of data files look them up */
            if (dels->schema != r->schema) {
                leaves = floe_arena_alloc(&r->arena, f->nids * sizeof *leaves);
                FLOE_RETURN_ERROR_IF(!leaves, err, FLOE_ENOMEM, "out of memory");
                for (size_t k = 0; k < f->nids; k++)
                    leaves[k] = (size_t)eq_leaf(r->schema, f->ids[k])->leaf;
            }
            r->eq[r->neq] = f;
            r->eq_leaf[r->neq++] = leaves;
        }
    }
    /* One probe a row instead of one per file: when the files that apply are exactly
     * those of their id set with a sequence number above the data file's, the merged set
     * answers for them all (a file left out by the plan - another partition's - makes the
     * counts differ, and each file is probed as before). */
    const eq_merged *m = r->neq ? merged_find(dels, r->eq[0]->ids, r->eq[0]->nids) : NULL;
    for (size_t e = 0; m && e < r->neq; e++) /* the files that apply: of m, above it */
        if (!same_ids(r->eq[e]->ids, r->eq[e]->nids, m->ids, m->nids) ||
            r->eq[e]->seq <= in->data_sequence_number)
            m = NULL;
    if (m) {
        size_t lo = 0, hi = m->nseqs; /* first member above the data file's number */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->seqs[mid] <= in->data_sequence_number)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (m->nseqs - lo == r->neq) {
            r->merged = m;
            r->merged_leaf = r->eq_leaf[0];
            r->neq_merged = r->neq;
            r->neq = 0;
        }
    }
    positions_sort(r);
    return 0;
}

/* The input file's name in front of an error, unless the message begins with it: the
 * Parquet reader names the file it opened, by this name when it is the physical one. */
static void prefix_file(floe_error *err, const char *path) {
    size_t n = strlen(path);
    if (err && !(!strncmp(err->msg, path, n) && err->msg[n] == ':'))
        floe_error_prefix(err, "%s: ", path);
}

int rw_reader_open(floe_io *io, const floe_schema *schema, const char *name_mapping,
                   const floe_rewrite_input *in, const floe_partition_spec *spec,
                   rw_deletes *dels, const rw_copy_policy *copy, rw_reader **out,
                   floe_error *err) {
    rw_reader *r = floe_calloc(1, sizeof *r);
    FLOE_RETURN_ERROR_IF(!r, err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    const char **sel = NULL;
    int32_t *sel_ids = NULL;
    r->schema = schema;
    r->in = in;
    r->generic = atomic_load(&generic_reader);
    floe_arena_init(&r->arena, 16 * 1024);
    floe_buf_init(&r->key, 0);
    floe_buf_init(&r->vvalues, 0);
    floe_buf_init(&r->voffsets, 0);
    if (in->file->file_format && strcasecmp(in->file->file_format, "parquet"))
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "data file %s: format %s is not supported",
                  in->file->file_path, in->file->file_format);
    r->src = floe_calloc(schema->nleaves ? schema->nleaves : 1, sizeof *r->src);
    if (!r->src)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* the table's columns are most of a data file: a small one is read with one read */
    floe_pq_reader_options ro = {.read_whole = true};
    FLOE_CHECK(floe_pq_reader_open(io, in->uri, &ro, &r->pq, err));
    {
        floe_pq_reader_file fi;
        floe_pq_reader_file_info(r->pq, &fi);
        if (in->file->record_count >= 0 && fi.num_rows != in->file->record_count)
            floe_log(FLOE_LOG_WARN, "data file %s: the manifest says %" PRId64 " rows, the "
                     "file holds %" PRId64, in->file->file_path, in->file->record_count,
                     fi.num_rows);
        r->ncolumns = fi.num_columns;
        r->nrg = fi.num_row_groups;
    }
    FLOE_CHECK(floe_name_mapping_parse(name_mapping, &r->mapping, err));
    const floe_pq_node *root = floe_pq_reader_root(r->pq);
    FLOE_CHECK(floe_field_match_new(schema, root, r->mapping, &r->fm, err));
    {
        bool ids = false;
        for (size_t i = 0; i < root->nchildren; i++)
            ids |= root->children[i].has_field_id;
        sel = floe_calloc(root->nchildren + 1, sizeof *sel);
        sel_ids = floe_calloc(root->nchildren + 1, sizeof *sel_ids);
        if (!sel || !sel_ids)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        size_t nsel = 0;
        for (size_t i = 0; i < schema->root.nchildren; i++) {
            const floe_field *tf = &schema->root.children[i];
            const floe_pq_node *cn = floe_field_match_node(r->fm, tf);
            if (!cn)
                continue;
            FLOE_CHECK(match_field(r, tf, cn, err));
            ids &= cn->has_field_id;
            sel[nsel] = cn->path;
            sel_ids[nsel++] = cn->field_id;
        }
        if (nsel == 0 && root->nchildren) {
            sel[nsel] = root->children[0].path; /* something to count the rows with */
            ids = false;
            nsel++;
        }
        if (ids)
            FLOE_CHECK(floe_pq_reader_select_ids(r->pq, sel_ids, nsel, err));
        else
            FLOE_CHECK(floe_pq_reader_select_paths(r->pq, sel, nsel, err));
    }
    /* file leaves first (siblings need them), then the missing ones */
    for (size_t i = 0; i < schema->nleaves; i++) {
        const floe_field *leaf = schema->leaves[i];
        const matched *mt = match_of(r, leaf);
        if (!mt)
            continue;
        const floe_pq_node *nd = mt->node;
        r->src[i].kind = mt->vgroup && strcmp(leaf->name, "metadata") ? SRC_VARIANT : SRC_FILE;
        r->src[i].node = nd;
        r->src[i].vgroup = mt->vgroup;
        FLOE_CHECK(plan_levels(r, leaf, &r->src[i], err));
        FLOE_CHECK(plan_conv(leaf, &r->src[i], err));
    }
    for (size_t i = 0; i < schema->nleaves; i++)
        if (!r->src[i].node)
            FLOE_CHECK(plan_missing(r, schema->leaves[i], spec, &r->src[i], err));
    for (size_t i = 0; i < schema->nleaves; i++) { /* top-level, so never a sibling's */
        const floe_field *leaf = schema->leaves[i];
        if (!leaf->parent)
            r->src[i].lineage = leaf->id == FLOE_LINEAGE_ROW_ID_FIELD ? 1
                                : leaf->id == FLOE_LINEAGE_SEQ_FIELD ? 2 : 0;
    }
    r->col_idx = floe_malloc((r->ncolumns ? r->ncolumns : 1) * sizeof *r->col_idx);
    r->l0 = floe_calloc(schema->nleaves ? schema->nleaves : 1, sizeof *r->l0);
    r->into = floe_calloc(r->ncolumns ? r->ncolumns : 1, sizeof *r->into);
    if (!r->col_idx || !r->l0 || !r->into)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (floe_batch_init(&r->tmp, schema) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    r->tmp_init = true;
    FLOE_CHECK(load_deletes(r, dels, err));
    if (copy)
        r->copy = *copy; /* page carry reads it whatever `enabled` says */
    if (copy && copy->enabled) {
        /* the decoded rows would be the stored ones as they are: levels copied without a
         * map, values without a conversion, columns in the writer's order */
        const char *why = NULL;
        if (r->npositions || r->neq || r->neq_resolved || r->neq_merged)
            why = "deletes apply to it";
        else if (r->ncolumns != schema->nleaves)
            why = "its columns are not the table's";
        for (size_t i = 0; i < schema->nleaves && !why; i++) {
            const leaf_src *ls = &r->src[i];
            if (ls->kind != SRC_FILE || ls->node->column != (int32_t)i)
                why = "its columns are not the table's, in the table's order";
            else if (ls->conv != CONV_NONE)
                why = "a column is converted on read";
            else if (ls->defmap)
                why = "a column's optional/required nesting differs from the table's";
        }
        if (why)
            floe_log(FLOE_LOG_DEBUG, "rewrite: %s is re-encoded: %s", in->file->file_path, why);
        r->copy_file = !why;
    }
done:
    floe_free(sel);
    floe_free(sel_ids);
    if (rc < 0) {
        prefix_file(err, in->file->file_path);
        rw_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void rw_reader_close(rw_reader *r) {
    if (!r)
        return;
    floe_pq_reader_close(r->pq);
    floe_free(r->src);
    floe_free(r->m);
    floe_name_mapping_free(r->mapping);
    floe_field_match_free(r->fm);
    floe_arena_reset(&r->arena);
    floe_free(r->col_idx);
    floe_free(r->into);
    floe_free(r->l0);
    floe_free(r->positions);
    floe_free(r->eq_pos);
    floe_free(r->eq);
    floe_free(r->eq_leaf);
    floe_free(r->keep);
    floe_free(r->cand);
    floe_buf_free(&r->key);
    floe_buf_free(&r->vvalues);
    floe_buf_free(&r->voffsets);
    if (r->tmp_init)
        floe_batch_free(&r->tmp);
    floe_free(r);
}

void rw_reader_stats(const rw_reader *r, rw_read_stats *out) { *out = r->st; }

void rw_reader_collect_eq(rw_reader *r) { r->collect_eq = true; }

void rw_reader_take_eq_positions(rw_reader *r, int64_t **pos, size_t *n) {
    *pos = r->eq_pos;
    *n = r->neq_pos;
    r->eq_pos = NULL;
    r->neq_pos = r->eq_pos_cap = 0;
}

int rw_reader_add_positions(rw_reader *r, const int64_t *pos, size_t n, floe_error *err) {
    if (n == 0)
        return 0;
    FLOE_RETURN_ERROR_IF(r->npositions > SIZE_MAX / sizeof *pos - n, err, FLOE_ENOMEM,
                         "out of memory");
    int64_t *np = floe_realloc(r->positions, (r->npositions + n) * sizeof *np);
    FLOE_RETURN_ERROR_IF(!np, err, FLOE_ENOMEM, "out of memory");
    memcpy(np + r->npositions, pos, n * sizeof *pos);
    r->positions = np;
    r->npositions += n;
    positions_sort(r);
    r->copy_file = false;
    return 0;
}

static int fill_file(const leaf_src *ls, const floe_colbuf *s, floe_colbuf *d, floe_error *err) {
    size_t n = s->nlevels;
    if (floe_colbuf_reserve_levels(d, n) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (d->max_def > 0) {
        int16_t *dd = d->def + d->nlevels;
        if (s->max_def == 0) {
            int16_t td = ls->defmap ? ls->defmap[0] : d->max_def;
            for (size_t i = 0; i < n; i++)
                dd[i] = td;
        } else if (!ls->defmap) {
            if (n)
                memcpy(dd, s->def, n * sizeof *dd);
        } else {
            for (size_t i = 0; i < n; i++) {
                int16_t fd = s->def[i];
                if (fd < 0 || fd > s->max_def)
                    return floe_error_set(err, FLOE_ECORRUPT, "definition level out of range");
                if ((dd[i] = ls->defmap[fd]) < 0)
                    return floe_error_set(err, FLOE_EINVALID,
                                          "column %s: null in the file where the table "
                                          "requires a value", d->field->name);
            }
        }
    } else if (s->max_def > 0 && s->nvalues != n) {
        return floe_error_set(err, FLOE_EINVALID,
                              "column %s: nulls in the file where the table requires a value",
                              d->field->name);
    }
    if (d->max_rep > 0 && n)
        memcpy(d->rep + d->nlevels, s->rep, n * sizeof *d->rep);
    size_t nv = s->nvalues;
    switch (ls->conv) {
    case CONV_NONE:
        if (d->width == 0) {
            size_t bytes = s->values_len;
            if (bytes > UINT32_MAX - d->values_len)
                return floe_error_set(err, FLOE_ELIMIT, "column %s: more than 4 GiB in one batch",
                                      d->field->name);
            if (floe_colbuf_reserve_values(d, nv, bytes) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            if (bytes)
                memcpy(d->values + d->values_len, s->values, bytes);
            uint32_t base = (uint32_t)d->values_len;
            uint32_t *o = d->offsets + d->nvalues;
            uint32_t s0 = s->offsets ? s->offsets[0] : 0;
            for (size_t k = 1; k <= nv; k++)
                o[k] = base + (s->offsets[k] - s0);
            d->values_len += bytes;
        } else {
            if (floe_colbuf_reserve_values(d, nv, 0) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            if (nv)
                memcpy(d->values + d->values_len, s->values, nv * (size_t)d->width);
            d->values_len += nv * (size_t)d->width;
        }
        break;
    case CONV_I32_I64:
    case CONV_F32_F64:
    case CONV_DEC:
    case CONV_DATE_US:
    case CONV_DATE_NS: {
        if (floe_colbuf_reserve_values(d, nv, 0) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        uint8_t *o = d->values + d->values_len;
        for (size_t k = 0; k < nv; k++, o += d->width) {
            const uint8_t *v = s->values + k * (size_t)s->width;
            if (ls->conv == CONV_I32_I64) {
                floe_store_le64(o, (uint64_t)(int64_t)(int32_t)floe_load_le32(v));
            } else if (ls->conv == CONV_DATE_US || ls->conv == CONV_DATE_NS) {
                /* midnight of the day; out of range fails (spec "Schema Evolution") */
                int32_t days = (int32_t)floe_load_le32(v);
                floe_lit_ts t = {.sec = (int64_t)days * 86400};
                int64_t x;
                char why[96];
                if (floe_lit_ts_units(&t, ls->conv == CONV_DATE_NS ? 9 : 6, &x, why,
                                      sizeof why) != FLOE_LIT_OK) {
                    floe_buf txt;
                    floe_buf_init(&txt, 0);
                    int rc = floe_buf_append_date(&txt, days);
                    floe_error_set(err, FLOE_EINVALID,
                                   "column %s: date %.*s read as %s (the column was promoted "
                                   "from date) is %s", d->field->name, rc < 0 ? 1 : (int)txt.len,
                                   rc < 0 ? "?" : (const char *)txt.data,
                                   floe_type_name(d->field->type), why);
                    floe_buf_free(&txt);
                    return FLOE_EINVALID;
                }
                floe_store_le64(o, (uint64_t)x);
            } else if (ls->conv == CONV_F32_F64) {
                float f;
                memcpy(&f, v, 4);
                double x = f;
                memcpy(o, &x, 8);
            } else {
                dec_to(dec_from(v, s->phys, s->width), d->phys, d->width, o);
            }
        }
        d->values_len += nv * (size_t)d->width;
        break;
    }
    }
    d->nlevels += n;
    d->nvalues += nv;
    return 0;
}

/* A variant's value part: the values put back together from the file's variant group,
 * at the levels of its metadata column m (present exactly where a value is). */
static int fill_variant(rw_reader *r, const leaf_src *ls, const floe_colbuf *m, floe_colbuf *d,
                        floe_error *err) {
    floe_buf_reset(&r->vvalues);
    floe_buf_reset(&r->voffsets);
    FLOE_FORWARD_IF_ERROR(floe_pq_reader_variant_values(r->pq, ls->vgroup, &r->vvalues,
                                                        &r->voffsets, err));
    size_t nv = r->voffsets.len / sizeof(uint32_t) - 1;
    if (nv != m->nvalues)
        return floe_error_set(err, FLOE_EINTERNAL, "column %s: %zu variant values for %zu "
                              "metadata values", ls->vgroup->path, nv, m->nvalues);
    floe_colbuf s = *m; /* the metadata's levels, the values put back together */
    s.values = r->vvalues.data;
    s.values_len = r->vvalues.len;
    s.offsets = (uint32_t *)(void *)r->voffsets.data;
    return fill_file(ls, &s, d, err);
}

static int fill_const(const leaf_src *ls, size_t nrows, floe_colbuf *d, floe_error *err) {
    if (floe_colbuf_reserve_levels(d, nrows) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nrows; i++) {
        int rc = ls->has_value ? floe_colbuf_push_value(d, 0, ls->value, ls->value_len)
                               : floe_colbuf_push_null(d, ls->null_def, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s", floe_strerror(rc));
    }
    return 0;
}

/* The sibling's slots from s0 on (the row group just filled): its levels where the
 * ancestor is absent, the constant where it is present. */
static int fill_sibling(const leaf_src *ls, const floe_colbuf *s, size_t s0, floe_colbuf *d,
                        floe_error *err) {
    size_t n = s->nlevels - s0;
    if (floe_colbuf_reserve_levels(d, n) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int16_t sd = s->max_def ? s->def[s0 + i] : s->max_def;
        int16_t rep = s->max_rep ? s->rep[s0 + i] : 0;
        int rc;
        if (sd >= ls->cap && ls->has_value)
            rc = floe_colbuf_push_value(d, rep, ls->value, ls->value_len);
        else
            rc = floe_colbuf_push_null(d, sd >= ls->cap ? ls->null_def : sd, rep);
        if (rc < 0)
            return floe_error_set(err, rc, "%s", floe_strerror(rc));
    }
    return 0;
}

/* A row lineage column (spec "Row Lineage") for the nrows rows from file position
 * r->row_base: the file's value (s: its column, NULL when it has none) where not null,
 * else the inherited one - the file's first_row_id plus the position for _row_id, its
 * data sequence number for _last_updated_sequence_number - or null when the file has no
 * first_row_id (written before the table had row lineage). */
static int fill_lineage(const rw_reader *r, const leaf_src *ls, const floe_colbuf *s,
                        size_t nrows, floe_colbuf *d, floe_error *err) {
    const floe_data_file *df = r->in->file;
    if (floe_colbuf_reserve_levels(d, nrows) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t vi = 0;
    for (size_t k = 0; k < nrows; k++) {
        bool has = false;
        int64_t v = 0;
        if (s && !(s->max_def && s->def[k] < s->max_def)) {
            const uint8_t *p = s->values + vi++ * (size_t)s->width;
            v = s->width == 4 ? (int64_t)(int32_t)floe_load_le32(p) : (int64_t)floe_load_le64(p);
            has = true;
        } else if (df->has_first_row_id) {
            v = ls->lineage == 1 ? df->first_row_id + r->row_base + (int64_t)k
                                 : r->in->data_sequence_number;
            has = true;
        }
        uint8_t b[8];
        floe_store_le64(b, (uint64_t)v);
        int rc = has ? floe_colbuf_push_value(d, 0, b, sizeof b) : floe_colbuf_push_null(d, 0, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s", floe_strerror(rc));
    }
    return 0;
}

/* The key of row `row` of b on the table leaves[0..nids) into r->key; vi[c]: the next
 * value of column c (rows are visited in order). */
static int row_key(rw_reader *r, const floe_batch *b, const size_t *leaves, size_t nids,
                   size_t *vi, size_t row) {
    floe_buf_reset(&r->key);
    for (size_t c = 0; c < nids; c++) {
        const floe_colbuf *col = &b->cols[leaves[c]];
        if (key_column(&r->key, col, col->field->type, &vi[c], row) < 0)
            return FLOE_ENOMEM;
    }
    return 0;
}

/* Row `row` (file position row_base + row) deleted by equality. */
static int eq_drop(rw_reader *r, size_t row, size_t *k, floe_error *err) {
    r->keep[row] = 0;
    (*k)--;
    r->st.rows_eq_deleted++;
    if (!r->collect_eq)
        return 0;
    if (r->neq_pos == r->eq_pos_cap) {
        size_t nc = r->eq_pos_cap ? r->eq_pos_cap * 2 : 256;
        int64_t *np = floe_realloc(r->eq_pos, nc * sizeof *np);
        FLOE_RETURN_ERROR_IF(!np, err, FLOE_ENOMEM, "out of memory");
        r->eq_pos = np;
        r->eq_pos_cap = nc;
    }
    r->eq_pos[r->neq_pos++] = r->row_base + (int64_t)row;
    return 0;
}

/* Value i of a column of 4- or 8-byte integers, as its key's 8 bytes (key_value). */
static uint64_t int_key(const floe_colbuf *c, size_t i) {
    const uint8_t *v = c->values + i * (size_t)c->width;
    return c->phys == FLOE_PHYS_INT32 ? (uint64_t)(int64_t)(int32_t)floe_load_le32(v)
                                      : floe_load_le64(v);
}

/* The merged set's test of rows whose one integer key column has no null (value k is row
 * k's), in two passes: the filter for every row (its word BLOOM_AHEAD rows on fetched
 * while this one is tested: a random word of up to megabytes), then the key set for the
 * rows it passed (their slots PROBE_AHEAD keys on fetched while this one is compared).
 * The same rows are dropped, in the same order, as apply_deletes' one pass drops them. */
static int merged_dense(rw_reader *r, const eq_merged *m, const floe_colbuf *one, size_t nrows,
                        size_t *k, floe_error *err) {
    if (r->cand_cap < nrows) {
        eq_cand *nc = floe_realloc(r->cand, nrows * sizeof *nc);
        FLOE_RETURN_ERROR_IF(!nc, err, FLOE_ENOMEM, "out of memory");
        r->cand = nc;
        r->cand_cap = nrows;
    }
    size_t nc = 0;
    uint8_t kb[9] = {1};
    for (size_t row = 0; row < nrows; row++) {
        if (row + BLOOM_AHEAD < nrows)
            __builtin_prefetch(&m->bloom[floe_mix64(int_key(one, row + BLOOM_AHEAD)) &
                                         m->bloom_mask]);
        if (!r->keep[row])
            continue;
        uint64_t x = int_key(one, row);
        if (!bloom_may_hold(m, floe_mix64(x))) {
            r->st.rows_eq_filtered++;
            continue;
        }
        floe_store_le64(kb + 1, x);
        r->cand[nc++] = (eq_cand){row, x, floe_keyset_hash(kb, sizeof kb)};
    }
    for (size_t c = 0; c < nc; c++) {
        if (c + PROBE_AHEAD < nc)
            floe_keyset_prefetch(&m->keys, r->cand[c + PROBE_AHEAD].h);
        floe_store_le64(kb + 1, r->cand[c].x);
        const int64_t *seq = floe_keyset_find_hash(&m->keys, r->cand[c].h, kb, sizeof kb);
        if (seq && *seq > r->in->data_sequence_number)
            FLOE_FORWARD_IF_ERROR(eq_drop(r, r->cand[c].row, k, err));
    }
    return 0;
}

/* Mark rows deleted in keep[0..nrows) for the batch b whose first row is row_base. */
static int apply_deletes(rw_reader *r, const floe_batch *b, size_t nrows, size_t *kept,
                         floe_error *err) {
    if (r->keep_cap < nrows) {
        uint8_t *nk = floe_realloc(r->keep, nrows);
        FLOE_RETURN_ERROR_IF(!nk, err, FLOE_ENOMEM, "out of memory");
        r->keep = nk;
        r->keep_cap = nrows;
    }
    memset(r->keep, 1, nrows);
    size_t k = nrows;
    int64_t end = r->row_base + (int64_t)nrows;
    while (r->pos_i < r->npositions && r->positions[r->pos_i] < end) {
        int64_t p = r->positions[r->pos_i++];
        if (p >= r->row_base && r->keep[p - r->row_base]) {
            r->keep[p - r->row_base] = 0;
            k--;
            r->st.rows_pos_deleted++;
        }
    }
    size_t vi[64];
    if (r->merged) {
        const eq_merged *m = r->merged;
        FLOE_RETURN_ERROR_IF(m->nids > 64, err, FLOE_EUNSUPPORTED,
                             "equality deletes on more than 64 columns");
        memset(vi, 0, sizeof vi);
        /* one integer column: a present value is tested by value (bloom_hash) */
        const floe_colbuf *one = m->nids == 1 ? &b->cols[r->merged_leaf[0]] : NULL;
        bool by_value = m->bloom && one && one->field->type != FLOE_TYPE_DECIMAL &&
                        ((one->phys == FLOE_PHYS_INT32 && one->width == 4) ||
                         (one->phys == FLOE_PHYS_INT64 && one->width == 8));
        bool dense = by_value && one->nvalues == nrows && !r->generic;
        if (dense)
            FLOE_FORWARD_IF_ERROR(merged_dense(r, m, one, nrows, &k, err));
        for (size_t row = 0; !dense && row < nrows; row++) {
            if (by_value && !(one->max_def && one->def[row] < one->max_def)) {
                uint64_t x = int_key(one, vi[0]++);
                if (!r->keep[row])
                    continue;
                if (!bloom_may_hold(m, floe_mix64(x))) {
                    r->st.rows_eq_filtered++;
                    continue;
                }
                uint8_t kb[9] = {1};
                floe_store_le64(kb + 1, x);
                const int64_t *seq = floe_keyset_find(&m->keys, kb, sizeof kb);
                if (seq && *seq > r->in->data_sequence_number)
                    FLOE_FORWARD_IF_ERROR(eq_drop(r, row, &k, err));
                continue;
            }
            if (row_key(r, b, r->merged_leaf, m->nids, vi, row) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            if (!r->keep[row])
                continue;
            if (m->bloom && !bloom_may_hold(m, bloom_hash(r->key.data, r->key.len))) {
                r->st.rows_eq_filtered++;
                continue;
            }
            const int64_t *seq = floe_keyset_find(&m->keys, r->key.data, r->key.len);
            if (seq && *seq > r->in->data_sequence_number)
                FLOE_FORWARD_IF_ERROR(eq_drop(r, row, &k, err));
        }
    }
    for (size_t e = 0; e < r->neq; e++) {
        const del_file *f = r->eq[e];
        const size_t *leaves = r->eq_leaf[e];
        FLOE_RETURN_ERROR_IF(f->nids > 64, err, FLOE_EUNSUPPORTED,
                             "equality deletes on more than 64 columns");
        memset(vi, 0, sizeof vi);
        for (size_t row = 0; row < nrows; row++) {
            if (row_key(r, b, leaves, f->nids, vi, row) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            if (r->keep[row] && floe_keyset_find(&f->keys, r->key.data, r->key.len))
                FLOE_FORWARD_IF_ERROR(eq_drop(r, row, &k, err));
        }
    }
    *kept = k;
    return 0;
}

/* Row group rg as stored bytes when the policy and floe_pq_raw_row_group_load allow it:
 * 1 with *raw, 0 when it must be decoded, or an error that decoding would not cure. */
static int try_copy(rw_reader *r, size_t rg, const floe_pq_row_group_info *gi,
                    floe_pq_raw_row_group **raw, floe_error *err) {
    if (!r->copy_file || gi->num_rows <= 0 || gi->compressed_size < r->copy.min_rg_bytes)
        return 0;
    floe_error why;
    floe_error_clear(&why);
    int rc = floe_pq_raw_row_group_load(r->pq, rg, r->schema, r->copy.codec, raw, &why);
    if (rc == FLOE_ENOMEM || rc == FLOE_EIO) {
        if (err)
            *err = why;
        prefix_file(err, r->in->file->file_path);
        return rc;
    }
    if (rc < 0) {
        floe_log(FLOE_LOG_DEBUG, "rewrite: %s: row group %zu is re-encoded: %s",
                 r->in->file->file_path, rg, why.msg);
        return 0;
    }
    for (size_t c = 0; c < r->schema->nleaves; c++) {
        /* stored lineage values are copied as they are: only when none is left to inherit */
        floe_pq_chunk_info ci;
        if (!r->src[c].lineage)
            continue;
        floe_pq_reader_chunk_info(r->pq, rg, c, &ci);
        if (ci.null_count != 0) {
            floe_log(FLOE_LOG_DEBUG, "rewrite: %s: row group %zu is re-encoded: row lineage "
                     "values to inherit", r->in->file->file_path, rg);
            floe_pq_raw_row_group_free(*raw);
            *raw = NULL;
            return 0;
        }
    }
    for (size_t c = 0; r->copy.needs_exact && c < r->schema->nleaves; c++)
        if (r->copy.needs_exact[c] && !floe_pq_raw_row_group_exact(*raw, c)) {
            floe_log(FLOE_LOG_DEBUG, "rewrite: %s: row group %zu is re-encoded: truncated "
                     "statistics of a column with full metrics", r->in->file->file_path, rg);
            floe_pq_raw_row_group_free(*raw);
            *raw = NULL;
            return 0;
        }
    return 1;
}

int rw_reader_next(rw_reader *r, floe_batch *dst, bool append, floe_pq_raw_row_group **raw,
                   int64_t *in_bytes, bool *more, floe_error *err) {
    const floe_pq_rowset *rs;
    if (raw)
        *raw = NULL;
    *more = false;
    if (r->next_rg >= r->nrg)
        return 0;
    size_t rg = r->next_rg;
    floe_pq_row_group_info gi;
    floe_pq_reader_row_group_info(r->pq, rg, &gi);
    *in_bytes = 0;
    int rc = 0;
    if (r->rg_row == 0) { /* a row group's start: copy it, or choose whole or sliced */
        rc = raw ? try_copy(r, rg, &gi, raw, err) : 0;
        if (rc < 0)
            return rc;
        if (rc == 1) {
            r->next_rg++;
            *in_bytes = gi.compressed_size;
            if (!append)
                floe_batch_clear(dst);
            r->st.rows_read += gi.num_rows;
            r->st.row_groups++;
            r->st.row_groups_copied++;
            r->row_base += gi.num_rows;
            return 1;
        }
        r->slice_rows = 0;
        /* with page locations a slice reads only its pages; without them the reader
         * resumes each slice where the last one stopped (floe_pq_reader_read_rows) */
        if (r->slice_bytes > 0 && gi.num_rows > 1 && gi.total_byte_size > 2 * r->slice_bytes) {
            double per = (double)r->slice_bytes / (double)gi.total_byte_size;
            int64_t n = (int64_t)((double)gi.num_rows * per);
            r->slice_rows = n < 1 ? 1 : n < gi.num_rows ? n : gi.num_rows;
        }
    }
    /* with deletes the row group is filled aside and its surviving rows taken over */
    bool deletes = r->npositions || r->neq || r->merged;
    floe_batch *fill = deletes ? &r->tmp : dst;
    if (deletes || !append)
        floe_batch_clear(fill);
    for (size_t i = 0; i < r->schema->nleaves; i++)
        r->l0[i] = fill->cols[i].nlevels;
    for (size_t i = 0; i < r->ncolumns; i++)
        r->into[i] = NULL;
    if (r->slice_rows > 0) {
        int64_t n = gi.num_rows - r->rg_row;
        if (n > r->slice_rows)
            n = r->slice_rows;
        rc = floe_pq_reader_read_rows(r->pq, rg, r->rg_row, n, &rs, err);
        if (rc >= 0) {
            r->rg_row += n;
            *more = r->rg_row < gi.num_rows;
        }
    } else if (!deletes || !r->generic) {
        /* columns read as they are stored are decoded straight into the batch, or with
         * deletes into the batch they are taken from (no copy); the reader drops those
         * whose layout differs (into[c] NULL: filled below) */
        for (size_t i = 0; i < r->schema->nleaves; i++) {
            const leaf_src *ls = &r->src[i];
            if (ls->kind == SRC_FILE && ls->conv == CONV_NONE && !ls->defmap &&
                !ls->lineage && !ls->vgroup && ls->node->column >= 0 &&
                (size_t)ls->node->column < r->ncolumns) {
                r->into[ls->node->column] = &fill->cols[i];
                /* whole pages decoded as stored can be carried to the writer; not the
                 * pages rows are deleted from */
                fill->cols[i].carry_min = deletes ? 0 : r->copy.carry_min;
                fill->cols[i].carry_codec = (int32_t)r->copy.codec;
            }
        }
        /* a file column two table leaves map to (names in a mapping) is copied to both */
        for (size_t i = 0; i < r->schema->nleaves; i++) {
            const leaf_src *ls = &r->src[i];
            if (ls->kind == SRC_FILE && ls->node->column >= 0 &&
                (size_t)ls->node->column < r->ncolumns && r->into[ls->node->column] &&
                r->into[ls->node->column] != &fill->cols[i])
                r->into[ls->node->column] = NULL;
        }
        rc = floe_pq_reader_read_row_group_into(r->pq, rg, r->into, &rs, err);
    } else {
        rc = floe_pq_reader_read_row_group(r->pq, rg, &rs, err);
    }
    if (rc < 0) {
        prefix_file(err, r->in->file->file_path);
        return rc;
    }
    if (!*more) { /* the row group is done: its stored bytes go with its last rows */
        r->next_rg++;
        r->rg_row = 0;
        *in_bytes = gi.compressed_size;
        r->st.row_groups++;
    }
    rc = 1;
    size_t nrows = (size_t)rs->nrows;
    for (size_t i = 0; i < r->ncolumns; i++)
        r->col_idx[i] = -1;
    for (size_t i = 0; i < rs->ncols; i++)
        if (rs->nodes[i]->column >= 0 && (size_t)rs->nodes[i]->column < r->ncolumns)
            r->col_idx[rs->nodes[i]->column] = (int)i;
    for (size_t i = 0; i < r->schema->nleaves && rc >= 0; i++) {
        const leaf_src *ls = &r->src[i];
        if (ls->lineage) {
            int ci = ls->kind == SRC_FILE ? r->col_idx[ls->node->column] : -1;
            if (ls->kind == SRC_FILE && ci < 0)
                return floe_error_set(err, FLOE_EINTERNAL, "%s: column %s was not read",
                                      r->in->file->file_path, ls->node->path);
            rc = fill_lineage(r, ls, ci >= 0 ? &rs->cols[ci] : NULL, nrows, &fill->cols[i], err);
        } else if (ls->kind == SRC_FILE) {
            if (r->into[ls->node->column] == &fill->cols[i])
                continue; /* decoded into it */
            int ci = r->col_idx[ls->node->column];
            if (ci < 0)
                return floe_error_set(err, FLOE_EINTERNAL, "%s: column %s was not read",
                                      r->in->file->file_path, ls->node->path);
            rc = fill_file(ls, &rs->cols[ci], &fill->cols[i], err);
        } else if (ls->kind == SRC_CONST) {
            rc = fill_const(ls, nrows, &fill->cols[i], err);
        } else if (ls->kind == SRC_VARIANT) {
            int ci = r->col_idx[ls->node->column];
            if (ci < 0)
                return floe_error_set(err, FLOE_EINTERNAL, "%s: column %s was not read",
                                      r->in->file->file_path, ls->node->path);
            rc = fill_variant(r, ls, &rs->cols[ci], &fill->cols[i], err);
        }
    }
    for (size_t i = 0; i < r->schema->nleaves && rc >= 0; i++)
        if (r->src[i].kind == SRC_SIBLING)
            rc = fill_sibling(&r->src[i], &fill->cols[r->src[i].sibling],
                              r->l0[r->src[i].sibling], &fill->cols[i], err);
    if (rc < 0) {
        floe_error_prefix(err, "%s: row group %zu: ", r->in->file->file_path, rs->row_group);
        return rc;
    }
    fill->nrows += nrows;
    r->st.rows_read += (int64_t)nrows;
    if (deletes) {
        size_t kept = nrows;
        FLOE_FORWARD_IF_ERROR(apply_deletes(r, fill, nrows, &kept, err));
        if (!append)
            floe_batch_clear(dst);
        if (!r->generic) {
            rc = floe_batch_take_kept(dst, fill, r->keep);
        } else { /* the runs of kept and dropped rows */
            floe_batch_cursor cur;
            if (floe_batch_cursor_init(&cur, fill) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            for (size_t i = 0; i < nrows && rc >= 0;) {
                size_t j = i;
                while (j < nrows && r->keep[j] == r->keep[i])
                    j++;
                rc = floe_batch_take_rows(r->keep[i] ? dst : NULL, fill, &cur, j - i);
                i = j;
            }
            floe_batch_cursor_free(&cur);
        }
        if (rc < 0)
            return floe_error_set(err, rc, "%s: moving rows: %s", r->in->file->file_path,
                                  floe_strerror(rc));
    }
    r->row_base += (int64_t)nrows;
    return 1;
}
