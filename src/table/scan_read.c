/*
 * scan_read.c - reading the rows of a scan plan: column projection by field id (or the
 * table's name mapping), defaults and identity-partition constants for fields a file
 * lacks, position and equality deletes, the row filter, and output as NDJSON or to a row callback.
 *
 * Spec: format/spec.md "Column Projection" (ids at every nesting level;
 * schema.name-mapping.default for files without ids, authoritative once present;
 * identity partition values, then initial-default, else null, for fields a file does not
 * have), "Default values" (a struct default {} is its fields' defaults), "Schema
 * Evolution" (promoted types read as the table's type), "Position Delete Files"
 * (file_path 2147483546, pos 2147483545; positions are 0-based row numbers in the data
 * file), "Equality Delete Files" (a row is deleted when its values in the equality
 * columns equal a delete row's; null equals null).
 *
 * Each data file is read with the table's schema (floe_pq_reader_select_fields): the
 * fields the scan needs, matched to the file's nodes by floe_field_match at every level,
 * the ones the file lacks as constant text. Rows come from the Parquet reader's record
 * assembly as one JSON object per row, keyed and typed as the table says, in file order
 * (no reader-side filter, so the row number is the position). Each object's top-level
 * values are located as text spans; an output column below the top level is the value at
 * its path (through lists and maps too: the list of the elements' values, the list of a
 * map's keys, the map of its values' values); values are parsed only where the filter
 * needs them. Equality deletes compare the canonical text of the equality columns, read
 * from the delete files with the table's types, which is exact for the primitive types
 * they allow.
 *
 * Row lineage (spec "Row Lineage"): the metadata columns _row_id and
 * _last_updated_sequence_number are read from the file by their reserved field ids when it
 * has them; a null or missing value is inherited (first_row_id + position, the data
 * sequence number), and a file without first_row_id gives null for both.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/io.h"
#include "common/keyset.h"
#include "floe/scan.h"
#include "iceberg/puffin.h"
#include "iceberg/scan_internal.h"
#include "table_internal.h"

#define POS_FILE_PATH_ID 2147483546
#define POS_POS_ID 2147483545
#define LINE_MAX_BYTES (256u << 20)
#define FLOE_SCAN_MAX_PATH 32 /* fields from a top-level column down to an output column */

const char *const *floe_scan_plan_columns(const floe_scan_plan *p, size_t *n);

typedef floe_jspan span;
typedef floe_jtext_kv_fn kv_fn;

static int json_key(floe_buf *b, const char *name) {
    json_t *s = json_string(name);
    if (!s)
        return FLOE_ENOMEM;
    char *t = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(s);
    if (!t)
        return FLOE_ENOMEM;
    int rc = floe_buf_append(b, t, strlen(t));
    free(t); /* jansson's allocation */
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * reading one Parquet file as row texts
 * ------------------------------------------------------------------------------------- */

typedef int (*row_fn)(void *ctx, int64_t pos, const char *line, size_t n);

typedef struct line_sink {
    floe_buf line;
    int64_t pos;
    row_fn fn;
    void *ctx;
    int stop_rc; /* an error from fn, kept to tell it from our own stop */
} line_sink;

static int line_sink_cb(void *ctx, const void *p, size_t n) {
    line_sink *ls = ctx;
    const char *s = p;
    while (n) {
        const char *nl = memchr(s, '\n', n);
        size_t take = nl ? (size_t)(nl - s) : n;
        if (floe_buf_append(&ls->line, s, take) < 0)
            return ls->stop_rc = FLOE_ENOMEM;
        if (!nl)
            break;
        int rc = ls->fn(ls->ctx, ls->pos++, (const char *)ls->line.data, ls->line.len);
        floe_buf_reset(&ls->line);
        if (rc) {
            ls->stop_rc = rc;
            return FLOE_ECANCELLED;
        }
        s = nl + 1;
        n -= take + 1;
    }
    return 0;
}

/* Dump the selected columns of an open reader; fn returns 0 to go on, 1 to stop, or a
 * negative error. */
static int read_rows(floe_pq_reader *r, floe_pq_row_format fmt, row_fn fn, void *ctx,
                     floe_error *err) {
    line_sink ls = {.fn = fn, .ctx = ctx};
    floe_buf_init(&ls.line, LINE_MAX_BYTES);
    int rc = floe_pq_reader_dump(r, fmt, -1, line_sink_cb, &ls, NULL, err);
    floe_buf_free(&ls.line);
    if (ls.stop_rc == 1) {
        floe_error_clear(err);
        return 0;
    }
    if (ls.stop_rc < 0) {
        if (err && err->code == FLOE_ECANCELLED)
            floe_error_clear(err);
        if (!err || err->code == 0)
            floe_error_set(err, ls.stop_rc, "%s", floe_strerror(ls.stop_rc));
        return ls.stop_rc;
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * rows shaped by the table schema
 * ------------------------------------------------------------------------------------- */

/* Field ids the scan needs: the output columns with their ancestors and everything below
 * them, the filter's and the equality deletes' columns with their ancestors, and the
 * whole key of every needed map. Sorted. */
typedef struct id_set {
    int32_t *v;
    size_t n, cap;
} id_set;

static int id_set_add(id_set *s, int32_t id) {
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        int32_t *nv = floe_realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return FLOE_ENOMEM;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = id;
    return 0;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void id_set_sort(id_set *s) {
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_i32);
}

static bool id_set_has(const id_set *s, int32_t id) {
    return s->n && bsearch(&id, s->v, s->n, sizeof *s->v, cmp_i32) != NULL;
}

static int add_below(id_set *s, const floe_field *f) {
    int rc = id_set_add(s, f->id);
    for (size_t i = 0; i < f->nchildren && rc == 0; i++)
        rc = add_below(s, &f->children[i]);
    return rc;
}

static int add_with_ancestors(id_set *s, const floe_field *f) {
    int rc = 0;
    for (const floe_field *q = f; q && rc == 0; q = q->parent)
        rc = id_set_add(s, q->id);
    return rc;
}

/* Keys of needed maps, whole (a map prints its values by key). */
static int add_map_keys(id_set *s, const floe_field *f) {
    int rc = 0;
    if (f->type == FLOE_TYPE_MAP && id_set_has(s, f->id))
        rc = add_below(s, &f->children[0]);
    for (size_t i = 0; i < f->nchildren && rc == 0; i++)
        rc = add_map_keys(s, &f->children[i]);
    return rc;
}

typedef struct shape_ctx {
    const floe_field_match *match;
    const id_set *need;
    const floe_scan_task *task;
    floe_arena *arena;
    floe_buf text;
    floe_error *err;
} shape_ctx;

static char *arena_text(shape_ctx *c, size_t from) {
    char *t = floe_arena_alloc(c->arena, c->text.len - from + 1);
    if (t) {
        memcpy(t, c->text.data + from, c->text.len - from);
        t[c->text.len - from] = 0;
    }
    return t;
}

/* The value of a field the file does not hold: the identity partition value when the
 * file's partition has one for it, else its initial-default, else null (format/spec.md
 * "Column Projection"), in NDJSON and canonical text. */
static int missing_value(shape_ctx *c, const floe_field *f, floe_pq_read_field *rf) {
    const floe_data_file *df = c->task->file;
    for (size_t k = 0; c->task->spec && k < c->task->spec->nfields && k < df->npartition; k++) {
        const floe_partition_field *pf = &c->task->spec->fields[k];
        if (pf->source_id == f->id && pf->transform.kind == FLOE_XF_IDENTITY) {
            size_t from = c->text.len;
            if (floe_sv_to_canonical(&df->partition[k], &c->text) < 0 ||
                !(rf->const_ndjson = rf->const_canonical = arena_text(c, from)))
                return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
            return 0;
        }
    }
    for (int canonical = 0; canonical < 2; canonical++) {
        size_t from = c->text.len;
        FLOE_FORWARD_IF_ERROR(floe_default_render(
            f, true, canonical ? FLOE_PQ_ROWS_CANONICAL : FLOE_PQ_ROWS_NDJSON, &c->text, c->err));
        const char *t = arena_text(c, from);
        if (!t)
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        if (canonical)
            rf->const_canonical = t;
        else
            rf->const_ndjson = t;
    }
    return 0;
}

/* The read field of table field f (needed), from its file node if the file holds it. */
static int shape_field(shape_ctx *c, const floe_field *f, floe_pq_read_field *rf) {
    memset(rf, 0, sizeof *rf);
    rf->name = f->name;
    rf->field = f;
    rf->node = floe_field_match_node(c->match, f);
    if (!rf->node)
        return missing_value(c, f, rf);
    if (!floe_type_is_nested(f->type) || f->type == FLOE_TYPE_VARIANT)
        return 0; /* a variant is read whole (the reader plans its parts) */
    size_t n = 0;
    for (size_t i = 0; i < f->nchildren; i++)
        n += f->type != FLOE_TYPE_STRUCT || id_set_has(c->need, f->children[i].id);
    floe_pq_read_field *kids = floe_arena_alloc(c->arena, (n ? n : 1) * sizeof *kids);
    if (!kids)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->type == FLOE_TYPE_STRUCT && !id_set_has(c->need, f->children[i].id))
            continue;
        FLOE_FORWARD_IF_ERROR(shape_field(c, &f->children[i], &kids[k++]));
    }
    rf->children = kids;
    rf->nchildren = k;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * delete files
 * ------------------------------------------------------------------------------------- */

typedef struct pos_row {
    char *path;
    int64_t pos;
} pos_row;

typedef struct del_cache {
    const floe_data_file *file;
    /* position deletes */
    pos_row *rows;
    size_t nrows, rowcap;
    /* equality deletes: sorted keys */
    char **keys;
    size_t nkeys, keycap;
    /* a deletion vector (format v3): the positions of its one data file */
    bool is_dv;
    floe_dv_positions dv;
    bool loaded;
} del_cache;

typedef struct del_load_ctx {
    del_cache *dc;
    /* file column name -> slot: for pos, 0 path 1 pos; for eq, index into equality ids */
    char **names;
    int32_t *slot;
    size_t nnames;
    size_t nslots;
    span *vals;
    floe_arena scratch;
    floe_error *err;
    const char *what;
} del_load_ctx;

static int del_member_cb(void *ctx, span key, span value) {
    del_load_ctx *c = ctx;
    for (size_t i = 0; i < c->nnames; i++)
        if (floe_jtext_key_is(key, c->names[i])) {
            c->vals[c->slot[i]] = value;
            break;
        }
    return 0;
}

static int pos_row_cb(void *ctx, int64_t pos, const char *line, size_t n) {
    (void)pos;
    del_load_ctx *c = ctx;
    c->vals[0] = c->vals[1] = (span){"null", 4};
    if (floe_jtext_each_member(line, n, del_member_cb, c) < 0)
        return floe_error_set(c->err, FLOE_ECORRUPT, "%s: unreadable row", c->what);
    floe_field sf = {.type = FLOE_TYPE_STRING, .name = "file_path"};
    floe_field lf = {.type = FLOE_TYPE_LONG, .name = "pos"};
    floe_value pv, ov;
    if (floe_sv_from_canonical(&sf, c->vals[0].p, c->vals[0].n, &c->scratch, &pv, c->err) < 0 ||
        floe_sv_from_canonical(&lf, c->vals[1].p, c->vals[1].n, &c->scratch, &ov, c->err) < 0) {
        floe_error_prefix(c->err, "%s: ", c->what);
        return FLOE_ECORRUPT;
    }
    if (pv.is_null || ov.is_null)
        return floe_error_set(c->err, FLOE_ECORRUPT, "%s: null file_path or pos", c->what);
    del_cache *dc = c->dc;
    if (dc->nrows == dc->rowcap) {
        size_t nc = dc->rowcap ? dc->rowcap * 2 : 256;
        pos_row *nr = floe_realloc(dc->rows, nc * sizeof *nr);
        if (!nr)
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        dc->rows = nr;
        dc->rowcap = nc;
    }
    char *path = floe_strndup((const char *)pv.v.bytes.p, pv.v.bytes.n);
    if (!path)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    dc->rows[dc->nrows++] = (pos_row){path, ov.v.i64};
    if ((dc->nrows & 4095) == 0) {
        floe_arena_reset(&c->scratch);
    }
    return 0;
}

static int key_append(floe_buf *b, size_t i, span v) {
    int rc = 0;
    if (i)
        rc = floe_buf_append_byte(b, 0x1f); /* never in JSON text: escaped there */
    return rc < 0 ? rc : floe_buf_append(b, v.p, v.n);
}

static int eq_row_cb(void *ctx, int64_t pos, const char *line, size_t n) {
    (void)pos;
    del_load_ctx *c = ctx;
    for (size_t i = 0; i < c->nslots; i++)
        c->vals[i] = (span){"null", 4};
    if (floe_jtext_each_member(line, n, del_member_cb, c) < 0)
        return floe_error_set(c->err, FLOE_ECORRUPT, "%s: unreadable row", c->what);
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = 0;
    for (size_t i = 0; i < c->nslots && rc == 0; i++)
        rc = key_append(&b, i, c->vals[i]);
    del_cache *dc = c->dc;
    if (rc == 0 && dc->nkeys == dc->keycap) {
        size_t nc = dc->keycap ? dc->keycap * 2 : 256;
        char **nk = floe_realloc(dc->keys, nc * sizeof *nk);
        if (!nk)
            rc = FLOE_ENOMEM;
        else {
            dc->keys = nk;
            dc->keycap = nc;
        }
    }
    if (rc == 0) {
        char *k = floe_buf_detach(&b, NULL);
        if (!k)
            k = floe_strdup("");
        if (!k)
            rc = FLOE_ENOMEM;
        else
            dc->keys[dc->nkeys++] = k;
    }
    floe_buf_free(&b);
    return rc < 0 ? floe_error_set(c->err, rc, "out of memory") : 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dv_limit: the record count of the data file a deletion vector applies to. */
static int del_load(floe_table *t, floe_dv_cache *dvc, del_cache *dc,
                    const floe_name_mapping *nm, const floe_schema *schema,
                    const floe_pq_reader_options *po, int64_t dv_limit, floe_error *err) {
    const floe_data_file *df = dc->file;
    char *uri = NULL;
    floe_pq_reader *r = NULL;
    floe_field_match *fm = NULL;
    floe_pq_read_field *rfs = NULL;
    const char **sel = NULL;
    del_load_ctx c = {.dc = dc, .err = err, .what = df->file_path};
    floe_arena_init(&c.scratch, 16 * 1024);
    int rc = 0;
    if (floe_data_file_is_dv(df)) {
        FLOE_CHECK(floe_table_resolve_path(t, df->file_path, &uri, err));
        FLOE_CHECK(floe_dv_cache_read(dvc, floe_table_io(t), uri, df->content_offset,
                                      df->content_size_in_bytes, df->referenced_data_file,
                                      dv_limit, &dc->dv, err));
        dc->is_dv = true;
        dc->loaded = true;
        goto done;
    }
    if (df->file_format && strcasecmp(df->file_format, "parquet"))
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "delete file %s: format %s is not supported",
                  df->file_path, df->file_format);
    FLOE_CHECK(floe_table_resolve_path(t, df->file_path, &uri, err));
    FLOE_CHECK(floe_pq_reader_open(floe_table_io(t), uri, po, &r, err));
    const floe_pq_node *root = floe_pq_reader_root(r);
    bool eq = df->content == FLOE_CONTENT_EQUALITY_DELETES;
    c.nslots = eq ? df->nequality_ids : 2;
    if (eq && c.nslots == 0)
        FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s without equality ids",
                  df->file_path);
    size_t cap = (eq ? df->nequality_ids : root->nchildren) + 1;
    c.vals = floe_calloc(c.nslots, sizeof *c.vals);
    c.names = floe_calloc(cap, sizeof *c.names);
    c.slot = floe_calloc(cap, sizeof *c.slot);
    sel = floe_calloc(cap, sizeof *sel);
    rfs = floe_calloc(cap, sizeof *rfs);
    if (!c.vals || !c.names || !c.slot || !sel || !rfs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (eq) {
        /* the equality columns by field id (or name mapping), read as the table's types
         * so their text equals the data rows' */
        FLOE_CHECK(floe_field_match_new(schema, root, nm, &fm, err));
        for (size_t k = 0; k < df->nequality_ids; k++) {
            const floe_field *f = floe_schema_find_id(schema, df->equality_ids[k]);
            if (!f) /* dropped: the key cannot be compared without it (scan refused it) */
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "equality field %d is not a column of the "
                          "table schema", df->equality_ids[k]);
            const floe_pq_node *nd = floe_field_match_node(fm, f);
            if (!nd)
                continue;
            rfs[c.nnames] = (floe_pq_read_field){.name = f->name, .field = f, .node = nd};
            c.names[c.nnames] = (char *)f->name;
            c.slot[c.nnames++] = (int32_t)k;
        }
        if (c.nnames == 0)
            FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s has none of its equality "
                      "columns", df->file_path);
        FLOE_CHECK(floe_pq_reader_select_fields(r, rfs, c.nnames, err));
    } else {
        for (size_t i = 0; i < root->nchildren; i++) {
            const floe_pq_node *ch = &root->children[i];
            int32_t id = ch->has_field_id ? ch->field_id
                         : !strcmp(ch->name, "file_path") ? POS_FILE_PATH_ID
                         : !strcmp(ch->name, "pos")       ? POS_POS_ID
                                                          : -1;
            int32_t slot = id == POS_FILE_PATH_ID ? 0 : id == POS_POS_ID ? 1 : -1;
            if (slot < 0)
                continue;
            c.names[c.nnames] = (char *)ch->name;
            c.slot[c.nnames] = slot;
            sel[c.nnames++] = ch->name;
        }
        if (c.nnames < c.nslots)
            FLOE_FAIL(err, FLOE_ECORRUPT, "position delete file %s lacks file_path or pos",
                      df->file_path);
        FLOE_CHECK(floe_pq_reader_select_paths(r, sel, c.nnames, err));
    }
    FLOE_CHECK(read_rows(r, FLOE_PQ_ROWS_CANONICAL, eq ? eq_row_cb : pos_row_cb, &c, err));
    if (eq && dc->nkeys)
        qsort(dc->keys, dc->nkeys, sizeof *dc->keys, cmp_str);
    dc->loaded = true;
done:
    if (rc < 0)
        floe_error_prefix(err, "delete file %s: ", df->file_path);
    floe_pq_reader_close(r);
    floe_field_match_free(fm);
    floe_free(uri);
    floe_free(sel);
    floe_free(rfs);
    floe_free(c.vals);
    floe_free(c.names);
    floe_free(c.slot);
    floe_arena_reset(&c.scratch);
    return rc;
}

static void del_cache_free(del_cache *dc) {
    for (size_t i = 0; i < dc->nrows; i++)
        floe_free(dc->rows[i].path);
    floe_free(dc->rows);
    for (size_t i = 0; i < dc->nkeys; i++)
        floe_free(dc->keys[i]);
    floe_free(dc->keys);
    floe_free(dc->dv.pos);
}

/* ---------------------------------------------------------------------------------------
 * the scan
 * ------------------------------------------------------------------------------------- */

typedef struct out_col {
    const char *label;     /* output key */
    int lineage;           /* floe_lineage_column: 1 _row_id, 2 the sequence number, 0 */
    size_t top;            /* index of the top-level field */
    const floe_field *chain[FLOE_SCAN_MAX_PATH]; /* fields from the top level down */
    size_t depth;
} out_col;

typedef struct scan_ctx {
    floe_table *t;
    const floe_scan_plan *p;
    const floe_schema *schema;
    const floe_expr *filter;
    const floe_scan_read_options *ro;
    floe_scan_read_stats st;
    floe_error *err;
    floe_pq_sink_fn sink;
    void *sink_ctx;
    floe_buf out;
    const char **row_labels;    /* for the row callback */
    floe_pq_text *row_values;
    size_t *row_ends;
    floe_pq_row_format fmt; /* what the reader prints: NDJSON (also for the row callback) or canonical */

    out_col *cols;
    size_t ncols;
    size_t ntop;
    id_set need;           /* field ids the scan reads */
    const floe_name_mapping *mapping;
    floe_dv_cache dvc;     /* the Puffin files last read, footers decoded */
    floe_hashset del_index; /* hash of a delete file's path and offset -> its cache slot */

    bool lineage;          /* an output column is a row lineage column */
    span lineage_cells[2]; /* the file's _row_id, _last_updated_sequence_number */
    char lineage_text[2][24];
    const floe_scan_task *task; /* the file being read */
    int64_t pos;           /* the row's position in it */

    /* per file */
    span *cells;           /* per top-level field */
    int64_t *positions;    /* deleted positions, sorted */
    size_t npositions, pos_i;
    del_cache **eq;        /* equality deletes of this file */
    const int32_t **eq_ids;
    size_t *eq_nids;
    size_t neq;
    floe_arena scratch;
    floe_buf key;
    size_t rows_since_reset;

    /* match mode (floe_scan_match_rows): positions of the rows that pass, per file */
    floe_scan_match_fn match;
    void *match_ctx;
    int64_t *matched;
    size_t nmatched, matchcap;
} scan_ctx;

static int out_flush(scan_ctx *c) {
    if (!c->out.len)
        return 0;
    int rc = c->sink(c->sink_ctx, c->out.data, c->out.len);
    floe_buf_reset(&c->out);
    if (rc < 0)
        return floe_error_set(c->err, rc, "output: %s", floe_strerror(rc));
    return 0;
}

static const span NULL_SPAN = {"null", 4};

static bool is_null_span(span v) { return v.n == 4 && !memcmp(v.p, "null", 4); }

static int field_value(void *ctx, int32_t field_id, floe_value *out) {
    scan_ctx *c = ctx;
    const floe_field *f = floe_schema_find_id(c->schema, field_id);
    if (!f)
        return -1;
    const floe_field *chain[32];
    size_t depth = 0;
    for (const floe_field *q = f; q && depth < 32; q = q->parent)
        chain[depth++] = q;
    const floe_field *top = chain[depth - 1];
    size_t ti = (size_t)(top - c->schema->root.children);
    if (ti >= c->ntop)
        return -1;
    span v = c->cells[ti];
    for (size_t k = depth - 1; k-- > 0;) {
        if (is_null_span(v))
            break;
        if (!floe_jtext_member(v, chain[k]->name, &v)) {
            v = NULL_SPAN;
            break;
        }
    }
    if (f->type == FLOE_TYPE_VARIANT) { /* its JSON text: the filter walks the path in it */
        *out = floe_value_null(FLOE_TYPE_VARIANT);
        out->is_null = is_null_span(v);
        out->v.bytes.p = (const uint8_t *)v.p;
        out->v.bytes.n = v.n;
        return 0;
    }
    floe_error e;
    floe_error_clear(&e);
    if (floe_sv_from_canonical(f, v.p, v.n, &c->scratch, out, &e) < 0)
        return -1;
    return 0;
}

static bool pos_deleted(scan_ctx *c, int64_t pos) {
    while (c->pos_i < c->npositions && c->positions[c->pos_i] < pos)
        c->pos_i++;
    return c->pos_i < c->npositions && c->positions[c->pos_i] == pos;
}

static int top_index_of(const scan_ctx *c, int32_t id) {
    const floe_field *f = floe_schema_find_id(c->schema, id);
    if (!f || f->parent) /* top-level fields have no parent */
        return -1;
    return (int)(f - c->schema->root.children);
}

static int eq_deleted(scan_ctx *c, bool *deleted) {
    *deleted = false;
    for (size_t d = 0; d < c->neq && !*deleted; d++) {
        del_cache *dc = c->eq[d];
        if (!dc->nkeys)
            continue;
        floe_buf_reset(&c->key);
        for (size_t k = 0; k < c->eq_nids[d]; k++) {
            int ti = top_index_of(c, c->eq_ids[d][k]);
            span v = ti >= 0 ? c->cells[ti] : NULL_SPAN;
            if (key_append(&c->key, k, v) < 0 || (k + 1 == c->eq_nids[d] &&
                                                   floe_buf_append_byte(&c->key, 0) < 0))
                return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        }
        const char *k = (const char *)c->key.data;
        *deleted = bsearch(&k, dc->keys, dc->nkeys, sizeof *dc->keys, cmp_str) != NULL;
    }
    return 0;
}

/* Call fn for each element of the array text s[0..n). FLOE_ECORRUPT for text that is
 * not an array. */
typedef int (*item_fn)(void *ctx, span item);
static int each_item(span s, item_fn fn, void *ctx) {
    if (s.n < 2 || s.p[0] != '[')
        return FLOE_ECORRUPT;
    size_t i = 1;
    if (s.p[i] == ']')
        return 0;
    while (i < s.n) {
        size_t e = floe_jtext_skip_value(s.p, s.n, i);
        int rc = fn(ctx, (span){s.p + i, e - i});
        if (rc)
            return rc;
        i = e;
        if (i < s.n && s.p[i] == ',') {
            i++;
            continue;
        }
        return i < s.n && s.p[i] == ']' ? 0 : FLOE_ECORRUPT;
    }
    return FLOE_ECORRUPT;
}

/* The value at a path below a value: through a struct to its field, through a list to
 * the list of its elements' values, through a map's key to the list of its keys and
 * through its value to the map of its values' values (keys kept). */
typedef struct extract_ctx {
    scan_ctx *c;
    const floe_field *const *chain; /* chain[0]: the field whose value is at hand */
    size_t depth;
    floe_buf *out;
    bool first;
    bool want_key;                  /* a map's key step */
} extract_ctx;

static int extract(scan_ctx *c, span v, const floe_field *const *chain, size_t depth,
                   floe_buf *out);

static int sep(extract_ctx *x) {
    int rc = x->first ? 0 : floe_buf_append_byte(x->out, ',');
    x->first = false;
    return rc;
}

static int extract_item(void *ctx, span item) {
    extract_ctx *x = ctx;
    int rc = sep(x);
    return rc < 0 ? rc : extract(x->c, item, x->chain + 1, x->depth - 1, x->out);
}

static int extract_member(void *ctx, span key, span value) {
    extract_ctx *x = ctx;
    int rc = sep(x);
    if (rc == 0 && x->want_key) /* object form: keys are JSON strings */
        return extract(x->c, (span){key.p - 1, key.n + 2}, x->chain + 1, x->depth - 1, x->out);
    if (rc == 0)
        rc = floe_buf_append(x->out, key.p - 1, key.n + 3); /* "key": */
    return rc < 0 ? rc : extract(x->c, value, x->chain + 1, x->depth - 1, x->out);
}

/* A map entry: {"key":k,"value":v} (NDJSON) or [k, v] (canonical). */
static int extract_entry(void *ctx, span entry) {
    extract_ctx *x = ctx;
    span k = NULL_SPAN, v = NULL_SPAN;
    if (entry.n && entry.p[0] == '{') {
        if (!floe_jtext_member(entry, "key", &k) || !floe_jtext_member(entry, "value", &v))
            return FLOE_ECORRUPT;
    } else {
        size_t i = 1, e = floe_jtext_skip_value(entry.p, entry.n, i);
        if (entry.n < 2 || entry.p[0] != '[' || e >= entry.n || entry.p[e] != ',')
            return FLOE_ECORRUPT;
        k = (span){entry.p + i, e - i};
        size_t e2 = floe_jtext_skip_value(entry.p, entry.n, e + 1);
        v = (span){entry.p + e + 1, e2 - e - 1};
    }
    int rc = sep(x);
    if (rc == 0 && x->want_key)
        return extract(x->c, k, x->chain + 1, x->depth - 1, x->out);
    if (rc == 0 && entry.p[0] == '{') {
        rc = floe_buf_append(x->out, "{\"key\":", 7);
        rc |= floe_buf_append(x->out, k.p, k.n);
        rc |= floe_buf_append(x->out, ",\"value\":", 9);
    } else if (rc == 0) {
        rc = floe_buf_append_byte(x->out, '[');
        rc |= floe_buf_append(x->out, k.p, k.n);
        rc |= floe_buf_append_byte(x->out, ',');
    }
    if (rc == 0)
        rc = extract(x->c, v, x->chain + 1, x->depth - 1, x->out);
    if (rc == 0)
        rc = floe_buf_append_byte(x->out, entry.p[0] == '{' ? '}' : ']');
    return rc;
}

/* chain[0] is the field whose value v is; write the value at chain[depth - 1]. */
static int extract(scan_ctx *c, span v, const floe_field *const *chain, size_t depth,
                   floe_buf *out) {
    if (depth <= 1 || is_null_span(v))
        return floe_buf_append(out, v.p, v.n);
    const floe_field *f = chain[0];
    extract_ctx x = {.c = c, .chain = chain, .depth = depth, .out = out, .first = true};
    int rc = 0;
    switch (f->type) {
    case FLOE_TYPE_STRUCT: {
        span m;
        return extract(c, floe_jtext_member(v, chain[1]->name, &m) ? m : NULL_SPAN, chain + 1, depth - 1,
                       out);
    }
    case FLOE_TYPE_LIST:
        rc = floe_buf_append_byte(out, '[');
        if (rc == 0)
            rc = each_item(v, extract_item, &x);
        if (rc == 0)
            rc = floe_buf_append_byte(out, ']');
        break;
    case FLOE_TYPE_MAP: {
        x.want_key = chain[1] == &f->children[0];
        bool obj = v.p[0] == '{';
        /* keys: a list; values: the same map with each value replaced */
        rc = floe_buf_append_byte(out, x.want_key || !obj ? '[' : '{');
        if (rc == 0)
            rc = obj ? floe_jtext_each_member(v.p, v.n, extract_member, &x) : each_item(v, extract_entry, &x);
        if (rc == 0)
            rc = floe_buf_append_byte(out, x.want_key || !obj ? ']' : '}');
        break;
    }
    default:
        return floe_buf_append(out, v.p, v.n);
    }
    if (rc == FLOE_ECORRUPT)
        return floe_error_set(c->err, FLOE_ECORRUPT, "column %s: unreadable value",
                              chain[0]->name);
    return rc < 0 ? floe_error_set(c->err, rc, "out of memory") : 0;
}

static int row_member_cb(void *ctx, span key, span value) {
    scan_ctx *c = ctx;
    for (size_t i = 0; i < c->ntop; i++) {
        if (floe_jtext_key_is(key, c->schema->root.children[i].name)) {
            c->cells[i] = value;
            return 0;
        }
    }
    if (c->lineage && floe_jtext_key_is(key, FLOE_LINEAGE_ROW_ID))
        c->lineage_cells[0] = value;
    else if (c->lineage && floe_jtext_key_is(key, FLOE_LINEAGE_SEQ))
        c->lineage_cells[1] = value;
    return 0;
}

/* The row's lineage value k (0 _row_id, 1 _last_updated_sequence_number): the file's when
 * not null, else inherited; null for a file that has no first_row_id. */
static span lineage_value(scan_ctx *c, int k) {
    const floe_scan_task *task = c->task;
    if (!task->file->has_first_row_id)
        return NULL_SPAN;
    if (!is_null_span(c->lineage_cells[k]))
        return c->lineage_cells[k];
    int64_t v = k == 0 ? task->file->first_row_id + c->pos : task->data_sequence_number;
    int n = snprintf(c->lineage_text[k], sizeof c->lineage_text[k], "%" PRId64, v);
    return (span){c->lineage_text[k], (size_t)n};
}

static int emit_row(scan_ctx *c) {
    int rc = 0;
    bool fields = c->ro->row != NULL;
    if (!fields)
        rc |= floe_buf_append_byte(&c->out, '{');
    for (size_t i = 0; i < c->ncols && rc == 0; i++) {
        const out_col *oc = &c->cols[i];
        span v = oc->lineage ? lineage_value(c, oc->lineage - 1) : c->cells[oc->top];
        if (i && !fields)
            rc |= floe_buf_append_byte(&c->out, ',');
        size_t start = c->out.len;
        if (oc->depth > 1) {
            /* the value below the top-level field, extracted into scratch text */
            floe_buf_reset(&c->key);
            FLOE_FORWARD_IF_ERROR(extract(c, v, oc->chain, oc->depth, &c->key));
            v = (span){(const char *)c->key.data, c->key.len};
        }
        if (fields) {
            rc |= floe_buf_append(&c->out, v.p, v.n);
            c->row_ends[i] = c->out.len - start;
            continue;
        }
        rc |= json_key(&c->out, oc->label);
        rc |= floe_buf_append_byte(&c->out, ':');
        rc |= floe_buf_append(&c->out, v.p, v.n);
    }
    if (!fields)
        rc |= floe_buf_append_byte(&c->out, '}');
    if (!fields)
        rc |= floe_buf_append_byte(&c->out, '\n');
    if (rc < 0)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    if (fields) {
        /* the row's values sit back to back in out; out holds nothing else here */
        for (size_t i = 0, at = 0; i < c->ncols; i++) {
            c->row_values[i] = (floe_pq_text){(const char *)c->out.data + at, c->row_ends[i]};
            at += c->row_ends[i];
        }
        rc = c->ro->row(c->ro->row_ctx, c->ncols, c->row_labels, c->row_values);
        floe_buf_reset(&c->out);
        if (rc < 0)
            return floe_error_set(c->err, rc, "output: %s", floe_strerror(rc));
        return 0;
    }
    if (c->out.len >= (64u << 10))
        return out_flush(c);
    return 0;
}

static int data_row_cb(void *ctx, int64_t pos, const char *line, size_t n) {
    scan_ctx *c = ctx;
    c->st.rows_read++;
    if (c->npositions && pos_deleted(c, pos)) {
        c->st.rows_position_deleted++;
        return 0;
    }
    for (size_t i = 0; i < c->ntop; i++)
        c->cells[i] = NULL_SPAN;
    c->lineage_cells[0] = c->lineage_cells[1] = NULL_SPAN;
    c->pos = pos;
    if (floe_jtext_each_member(line, n, row_member_cb, c) < 0)
        return floe_error_set(c->err, FLOE_ECORRUPT, "row %" PRId64 ": unreadable record",
                              pos);
    if (c->neq) {
        bool del;
        FLOE_FORWARD_IF_ERROR(eq_deleted(c, &del));
        if (del) {
            c->st.rows_equality_deleted++;
            return 0;
        }
    }
    if (c->filter) {
        if (++c->rows_since_reset >= 4096) {
            floe_arena_reset(&c->scratch);
            c->rows_since_reset = 0;
        }
        if (floe_expr_eval_row(c->filter, field_value, c) != 1) {
            c->st.rows_filtered++;
            return 0;
        }
    }
    if (c->match) {
        if (c->nmatched == c->matchcap) {
            size_t nc = c->matchcap ? c->matchcap * 2 : 1024;
            int64_t *nm = floe_realloc(c->matched, nc * sizeof *nm);
            if (!nm)
                return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
            c->matched = nm;
            c->matchcap = nc;
        }
        c->matched[c->nmatched++] = pos;
        c->st.rows_out++;
        return 0;
    }
    FLOE_FORWARD_IF_ERROR(emit_row(c));
    c->st.rows_out++;
    if (c->ro->limit >= 0 && c->st.rows_out >= c->ro->limit)
        return 1;
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Find or load the cache entry of a delete file (of one deletion vector: a Puffin file
 * holds many, told apart by their offsets). data: the file being read. */
static int del_get(scan_ctx *c, del_cache **caches, size_t *ncaches, const floe_data_file *df,
                   const floe_data_file *data, del_cache **out) {
    uint64_t h = floe_hash64(df->file_path, strlen(df->file_path)) ^
                 ((uint64_t)df->content_offset * 0x9e3779b97f4a7c15ull);
    size_t at = 0;
    for (const int64_t *v; (v = floe_hashset_next(&c->del_index, h, &at));) {
        del_cache *e = &(*caches)[*v];
        if (!strcmp(e->file->file_path, df->file_path) &&
            e->file->content_offset == df->content_offset) {
            *out = e;
            return 0;
        }
    }
    if (floe_hashset_add(&c->del_index, h, (int64_t)*ncaches) < 0)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    del_cache *dc = &(*caches)[(*ncaches)++];
    memset(dc, 0, sizeof *dc);
    dc->file = df;
    floe_pq_reader_options po = {.max_page_bytes = c->ro->max_page_bytes,
                                 .max_read_bytes = c->ro->max_read_bytes};
    FLOE_FORWARD_IF_ERROR(del_load(c->t, &c->dvc, dc, c->mapping, c->schema, &po,
                                   data->record_count >= 0 ? data->record_count : INT64_MAX,
                                   c->err));
    *out = dc;
    return 0;
}

/* The filter's columns, with their ancestors. */
static int need_expr(id_set *s, const floe_expr *e) {
    if (!e)
        return 0;
    if (e->kind == FLOE_EXPR_PRED)
        return e->field ? add_with_ancestors(s, e->field) : 0;
    int rc = need_expr(s, e->a);
    return rc < 0 ? rc : need_expr(s, e->b);
}

/* The row lineage columns as a data file holds them. */
static const floe_field LINEAGE_FIELDS[2] = {
    {.id = FLOE_LINEAGE_ROW_ID_FIELD, .name = FLOE_LINEAGE_ROW_ID, .type = FLOE_TYPE_LONG,
     .leaf = -1},
    {.id = FLOE_LINEAGE_SEQ_FIELD, .name = FLOE_LINEAGE_SEQ, .type = FLOE_TYPE_LONG,
     .leaf = -1},
};

static int read_task(scan_ctx *c, const floe_scan_task *task, del_cache **caches,
                     size_t *ncaches) {
    int rc = 0;
    char *uri = NULL;
    floe_pq_reader *r = NULL;
    floe_field_match *fm = NULL;
    floe_pq_read_field *rfs = NULL;
    floe_arena arena;
    floe_arena_init(&arena, 16 * 1024);
    shape_ctx sc = {.need = &c->need, .task = task, .arena = &arena, .err = c->err};
    floe_buf_init(&sc.text, 0);
    const floe_data_file *df = task->file;
    if (df->file_format && strcasecmp(df->file_format, "parquet"))
        FLOE_FAIL(c->err, FLOE_EUNSUPPORTED, "data file %s: format %s is not supported",
                  df->file_path, df->file_format);

    /* deletes of this file */
    c->npositions = c->pos_i = 0;
    c->neq = 0;
    for (size_t d = 0; d < task->ndeletes; d++) {
        del_cache *dc = NULL;
        FLOE_CHECK(del_get(c, caches, ncaches, task->deletes[d], df, &dc));
        if (dc->is_dv) {
            /* pairing matched its referenced_data_file to this file */
            size_t n = dc->dv.n;
            if (n) {
                int64_t *np = floe_realloc(c->positions, (c->npositions + n) * sizeof *np);
                if (!np)
                    FLOE_FAIL(c->err, FLOE_ENOMEM, "out of memory");
                c->positions = np;
                memcpy(c->positions + c->npositions, dc->dv.pos, n * sizeof *np);
                c->npositions += n;
            }
        } else if (dc->file->content == FLOE_CONTENT_POSITION_DELETES) {
            /* count, then grow once: a file may have many thousands of positions */
            size_t n = 0;
            for (size_t k = 0; k < dc->nrows; k++)
                n += !strcmp(dc->rows[k].path, df->file_path);
            if (n) {
                int64_t *np = floe_realloc(c->positions, (c->npositions + n) * sizeof *np);
                if (!np)
                    FLOE_FAIL(c->err, FLOE_ENOMEM, "out of memory");
                c->positions = np;
                for (size_t k = 0; k < dc->nrows; k++)
                    if (!strcmp(dc->rows[k].path, df->file_path))
                        c->positions[c->npositions++] = dc->rows[k].pos;
            }
        } else {
            c->eq[c->neq] = dc;
            c->eq_ids[c->neq] = dc->file->equality_ids;
            c->eq_nids[c->neq] = dc->file->nequality_ids;
            c->neq++;
        }
    }
    if (c->npositions > 1)
        qsort(c->positions, c->npositions, sizeof *c->positions, cmp_i64);

    FLOE_CHECK(floe_table_resolve_path(c->t, df->file_path, &uri, c->err));
    floe_pq_reader_options po = {.max_page_bytes = c->ro->max_page_bytes,
                                 .max_read_bytes = c->ro->max_read_bytes};
    FLOE_CHECK(floe_pq_reader_open(floe_table_io(c->t), uri, &po, &r, c->err));
    {
        floe_pq_reader_file fi;
        floe_pq_reader_file_info(r, &fi);
        if (df->record_count >= 0 && fi.num_rows != df->record_count)
            floe_log(FLOE_LOG_WARN, "data file %s: the manifest says %" PRId64
                     " rows, the file holds %" PRId64, df->file_path, df->record_count,
                     fi.num_rows);
        if (df->file_size_in_bytes > 0 && fi.file_size != df->file_size_in_bytes)
            floe_log(FLOE_LOG_WARN, "data file %s: the manifest says %" PRId64
                     " bytes, the file has %" PRId64 " (rewritten after the commit?)",
                     df->file_path, df->file_size_in_bytes, fi.file_size);
    }
    /* a file whose shredded variant statistics rule out the filter's variant paths is
     * not read (not when matching rows: those callers account for every file) */
    if (c->filter && !c->match && !c->ro->no_prune &&
        !floe_scan_variant_file_may_match(c->filter, r)) {
        c->st.files_skipped_variant++;
        goto done;
    }
    /* the needed fields, shaped by the table schema: file columns by field id (or the
     * name mapping), the rest from partition values, initial-default or null */
    FLOE_CHECK(floe_field_match_new(c->schema, floe_pq_reader_root(r), c->mapping, &fm,
                                    c->err));
    sc.match = fm;
    rfs = floe_calloc(c->ntop + 2, sizeof *rfs);
    if (!rfs)
        FLOE_FAIL(c->err, FLOE_ENOMEM, "out of memory");
    size_t nrf = 0;
    for (size_t i = 0; i < c->ntop; i++) {
        const floe_field *f = &c->schema->root.children[i];
        if (id_set_has(&c->need, f->id))
            FLOE_CHECK(shape_field(&sc, f, &rfs[nrf++]));
    }
    c->task = task;
    if (c->lineage) {
        /* the lineage columns a file holds (rows a rewrite copied); absent: inherited */
        const floe_pq_node *root = floe_pq_reader_root(r);
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < root->nchildren; i++) {
                const floe_pq_node *nd = &root->children[i];
                if (nd->has_field_id && nd->field_id == LINEAGE_FIELDS[k].id &&
                    nd->phys >= 0) {
                    rfs[nrf++] = (floe_pq_read_field){.name = LINEAGE_FIELDS[k].name,
                                                      .field = &LINEAGE_FIELDS[k],
                                                      .node = nd};
                    break;
                }
            }
    }
    FLOE_CHECK(floe_pq_reader_select_fields(r, rfs, nrf, c->err));
    c->st.files_read++;
    int64_t rows_before = c->st.rows_read;
    c->nmatched = 0;
    FLOE_CHECK(read_rows(r, c->fmt, data_row_cb, c, c->err));
    if (c->match) {
        /* the deleted positions, sorted above, without the repeats of overlapping
         * delete files */
        size_t nd = 0;
        for (size_t i = 0; i < c->npositions; i++)
            if (nd == 0 || c->positions[nd - 1] != c->positions[i])
                c->positions[nd++] = c->positions[i];
        floe_scan_match m = {.task = task,
                             .rows = c->st.rows_read - rows_before,
                             .matched = c->matched,
                             .nmatched = c->nmatched,
                             .deleted = c->positions,
                             .ndeleted = nd};
        rc = c->match(c->match_ctx, &m, c->err);
    }
done:
    if (rc < 0)
        floe_error_prefix(c->err, "data file %s: ", df->file_path);
    floe_free(uri);
    floe_pq_reader_close(r);
    floe_field_match_free(fm);
    floe_free(rfs);
    floe_buf_free(&sc.text);
    floe_arena_reset(&arena);
    return rc;
}

static int scan_run(floe_table *t, const floe_scan_plan *p, const floe_scan_read_options *ro,
                    floe_pq_sink_fn sink, void *sink_ctx, floe_scan_match_fn match,
                    void *match_ctx, floe_scan_read_stats *stats, floe_error *err) {
    floe_scan_read_options dflt = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
    if (!ro)
        ro = &dflt;
    scan_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.p = p;
    c.schema = floe_scan_plan_schema(p);
    c.filter = floe_scan_plan_filter(p);
    c.ro = ro;
    c.err = err;
    c.sink = sink;
    c.sink_ctx = sink_ctx;
    c.match = match;
    c.match_ctx = match_ctx;
    c.fmt = ro->format == FLOE_PQ_ROWS_CANONICAL ? FLOE_PQ_ROWS_CANONICAL : FLOE_PQ_ROWS_NDJSON;
    floe_buf_init(&c.out, 0);
    floe_buf_init(&c.key, 0);
    floe_arena_init(&c.scratch, 16 * 1024);
    floe_name_mapping *nm = NULL;
    del_cache *caches = NULL;
    size_t ncaches = 0;
    int rc = 0;
    c.ntop = c.schema->root.nchildren;
    size_t ndel_total = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        ndel_total += p->tasks[i].ndeletes;
    size_t nt = c.ntop ? c.ntop : 1;
    c.cells = floe_calloc(nt, sizeof *c.cells);
    size_t maxdel = 1;
    for (size_t i = 0; i < p->ntasks; i++)
        if (p->tasks[i].ndeletes > maxdel)
            maxdel = p->tasks[i].ndeletes;
    c.eq = floe_calloc(maxdel, sizeof *c.eq);
    c.eq_ids = floe_calloc(maxdel, sizeof *c.eq_ids);
    c.eq_nids = floe_calloc(maxdel, sizeof *c.eq_nids);
    /* one cache slot per delete reference is an upper bound on distinct delete files */
    caches = floe_calloc(ndel_total ? ndel_total : 1, sizeof *caches);
    if (!c.cells || !c.eq || !c.eq_ids || !c.eq_nids || !caches)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_name_mapping_parse(
        floe_table_metadata_property(floe_table_metadata_get(t), "schema.name-mapping.default"),
        &nm, err));
    c.mapping = nm;
    FLOE_CHECK(floe_schema_check_defaults(c.schema, err));

    /* output columns */
    size_t ncolnames = 0;
    const char *const *colnames = floe_scan_plan_columns(p, &ncolnames);
    c.ncols = match ? 0 : ncolnames ? ncolnames : c.ntop;
    c.cols = floe_calloc(c.ncols ? c.ncols : 1, sizeof *c.cols);
    if (!c.cols)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < c.ncols; i++) {
        out_col *oc = &c.cols[i];
        const floe_field *f = ncolnames ? floe_schema_find_path(c.schema, colnames[i])
                                        : &c.schema->root.children[i];
        if (!f && (oc->lineage = floe_lineage_column(colnames[i])) != 0) {
            oc->label = colnames[i];
            c.lineage = true;
            continue;
        }
        if (!f)
            FLOE_FAIL(err, FLOE_ENOTFOUND, "no column %s", colnames[i]);
        const floe_field *up[FLOE_SCAN_MAX_PATH];
        size_t depth = 0;
        for (const floe_field *q = f; q; q = q->parent) {
            if (depth == FLOE_SCAN_MAX_PATH)
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "column %s is nested too deeply",
                          colnames[i]);
            up[depth++] = q;
        }
        for (size_t k = 0; k < depth; k++)
            oc->chain[k] = up[depth - 1 - k];
        oc->depth = depth;
        oc->label = ncolnames ? colnames[i] : f->name;
        oc->top = (size_t)(oc->chain[0] - c.schema->root.children);
        FLOE_CHECK(add_below(&c.need, f));
        FLOE_CHECK(add_with_ancestors(&c.need, f));
    }
    FLOE_CHECK(need_expr(&c.need, c.filter));
    for (size_t i = 0; i < p->ntasks; i++)
        for (size_t d = 0; d < p->tasks[i].ndeletes; d++) {
            const floe_data_file *df = p->tasks[i].deletes[d];
            for (size_t k = 0; df->content == FLOE_CONTENT_EQUALITY_DELETES &&
                               k < df->nequality_ids; k++) {
                const floe_field *f = floe_schema_find_id(c.schema, df->equality_ids[k]);
                /* a key column the schema dropped since: the data rows are not read with
                 * it, and a key left without it would delete every row equal on the
                 * others (Iceberg Java refuses too: "Cannot find required field") */
                if (!f)
                    FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                              "equality delete file %s: equality field %d is not a column of "
                              "the table schema (dropped since the delete was written?): its "
                              "rows cannot be matched",
                              df->file_path, df->equality_ids[k]);
                if (f->parent)
                    FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                              "equality delete file %s: equality field %d is not a top-level "
                              "column of the table schema", df->file_path, df->equality_ids[k]);
                FLOE_CHECK(id_set_add(&c.need, f->id));
            }
        }
    if (match && c.need.n == 0 && c.ntop)
        FLOE_CHECK(add_below(&c.need, &c.schema->root.children[0])); /* rows to count */
    id_set_sort(&c.need);
    for (size_t i = 0; i < c.ntop; i++)
        FLOE_CHECK(add_map_keys(&c.need, &c.schema->root.children[i]));
    id_set_sort(&c.need);
    if (ro->row && !match) {
        if (ro->format != FLOE_PQ_ROWS_NDJSON)
            FLOE_FAIL(err, FLOE_EINVALID, "scan: row callback values are NDJSON");
        size_t nc = c.ncols ? c.ncols : 1;
        c.row_labels = floe_calloc(nc, sizeof *c.row_labels);
        c.row_values = floe_calloc(nc, sizeof *c.row_values);
        c.row_ends = floe_calloc(nc, sizeof *c.row_ends);
        if (!c.row_labels || !c.row_values || !c.row_ends)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < c.ncols; i++)
            c.row_labels[i] = c.cols[i].label;
        if ((rc = ro->row(ro->row_ctx, c.ncols, c.row_labels, NULL)) < 0)
            FLOE_FAIL(err, rc, "output: %s", floe_strerror(rc));
    }
    for (size_t i = 0; i < p->ntasks; i++) {
        if (!match && ro->limit >= 0 && c.st.rows_out >= ro->limit)
            break;
        FLOE_CHECK(read_task(&c, &p->tasks[i], &caches, &ncaches));
    }
    if (!match)
        FLOE_CHECK(out_flush(&c));
done:
    if (rc < 0 && rc > -100 && err && err->code == 0)
        floe_error_set(err, rc, "scan: %s", floe_strerror(rc));
    for (size_t i = 0; i < ncaches; i++)
        del_cache_free(&caches[i]);
    floe_free(caches);
    floe_dv_cache_free(&c.dvc);
    floe_hashset_free(&c.del_index);
    floe_name_mapping_free(nm);
    floe_free(c.need.v);
    floe_free(c.cells);
    floe_free(c.positions);
    floe_free(c.eq);
    floe_free(c.eq_ids);
    floe_free(c.eq_nids);
    floe_free(c.cols);
    floe_free(c.row_labels);
    floe_free(c.row_values);
    floe_free(c.row_ends);
    floe_free(c.matched);
    floe_buf_free(&c.out);
    floe_buf_free(&c.key);
    floe_arena_reset(&c.scratch);
    if (rc >= 0 && stats)
        *stats = c.st;
    return rc < 0 ? rc : 0;
}

int floe_scan_read(floe_table *t, const floe_scan_plan *p, const floe_scan_read_options *ro,
                   floe_pq_sink_fn sink, void *sink_ctx, floe_scan_read_stats *stats,
                   floe_error *err) {
    return scan_run(t, p, ro, sink, sink_ctx, NULL, NULL, stats, err);
}

int floe_scan_match_rows(floe_table *t, const floe_scan_plan *p,
                         const floe_scan_read_options *ro, floe_scan_match_fn fn, void *ctx,
                         floe_scan_read_stats *stats, floe_error *err) {
    floe_scan_read_options o = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
    if (ro) {
        o.max_page_bytes = ro->max_page_bytes;
        o.max_read_bytes = ro->max_read_bytes;
    }
    return scan_run(t, p, &o, NULL, NULL, fn, ctx, stats, err);
}
