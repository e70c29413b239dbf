/*
 * scan_read.c - reading the rows of a scan plan: column projection by field id (or the
 * table's name mapping), defaults and identity-partition constants for columns a file
 * lacks, position and equality deletes, the row filter, and output as NDJSON / CSV.
 *
 * Spec: format/spec.md "Column Projection" (ids; schema.name-mapping.default for files
 * without ids; initial-default, else null, for fields a file does not have; identity
 * partition values may stand in for missing source columns), "Position Delete Files"
 * (file_path 2147483546, pos 2147483545; positions are 0-based row numbers in the data
 * file), "Equality Delete Files" (a row is deleted when its values in the equality
 * columns equal a delete row's; null equals null).
 *
 * Rows come from the Parquet reader's record assembly as one JSON object per row in file
 * order (no reader-side filter, so the row number is the position). Each object's top-
 * level values are located as text spans and re-keyed by table field; values are parsed
 * only where the filter needs them. Equality deletes compare the canonical text of the
 * equality columns, which is exact for the primitive types they allow.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/io.h"
#include "floe/scan.h"
#include "scan_internal.h"

#define POS_FILE_PATH_ID 2147483546
#define POS_POS_ID 2147483545
#define LINE_MAX_BYTES (256u << 20)

const floe_schema *floe_scan_plan_schema(const floe_scan_plan *p);
const floe_expr *floe_scan_plan_filter(const floe_scan_plan *p);
const char *const *floe_scan_plan_columns(const floe_scan_plan *p, size_t *n);

typedef struct span {
    const char *p;
    size_t n;
} span;

/* ---------------------------------------------------------------------------------------
 * JSON object text: top-level key/value spans
 * ------------------------------------------------------------------------------------- */

static size_t skip_string(const char *s, size_t n, size_t i) {
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

static size_t skip_value(const char *s, size_t n, size_t i) {
    if (i >= n)
        return n;
    if (s[i] == '"')
        return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = skip_string(s, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']')
        i++;
    return i;
}

typedef int (*kv_fn)(void *ctx, span key, span value);

/* Call fn for each member of the object text s[0..n). Keys are the raw text between the
 * quotes. FLOE_ECORRUPT for text that is not an object. */
static int each_member(const char *s, size_t n, kv_fn fn, void *ctx) {
    size_t i = 0;
    if (n == 0 || s[0] != '{')
        return FLOE_ECORRUPT;
    i = 1;
    if (i < n && s[i] == '}')
        return 0;
    while (i < n) {
        if (s[i] != '"')
            return FLOE_ECORRUPT;
        size_t ke = skip_string(s, n, i);
        span key = {s + i + 1, ke - i - 2};
        i = ke;
        if (i >= n || s[i] != ':')
            return FLOE_ECORRUPT;
        i++;
        size_t ve = skip_value(s, n, i);
        span val = {s + i, ve - i};
        int rc = fn(ctx, key, val);
        if (rc)
            return rc;
        i = ve;
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}')
            return 0;
        return FLOE_ECORRUPT;
    }
    return FLOE_ECORRUPT;
}

typedef struct find_ctx {
    const char *name;
    size_t nlen;
    span out;
    bool found;
} find_ctx;

static int find_cb(void *ctx, span key, span value) {
    find_ctx *f = ctx;
    if (key.n == f->nlen && !memcmp(key.p, f->name, key.n)) {
        f->out = value;
        f->found = true;
        return 1;
    }
    return 0;
}

/* Member `name` of an object text (names without JSON escapes only). */
static bool member(span obj, const char *name, span *out) {
    find_ctx f = {.name = name, .nlen = strlen(name)};
    if (obj.n < 2 || obj.p[0] != '{')
        return false;
    each_member(obj.p, obj.n, find_cb, &f);
    if (f.found)
        *out = f.out;
    return f.found;
}

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
        ls->line.len = 0;
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
 * name mapping (top level) and file -> table field ids
 * ------------------------------------------------------------------------------------- */

typedef struct name_map {
    char **names;
    int32_t *ids;
    size_t n;
} name_map;

static void name_map_free(name_map *m) {
    for (size_t i = 0; i < m->n; i++)
        floe_free(m->names[i]);
    floe_free(m->names);
    floe_free(m->ids);
    memset(m, 0, sizeof *m);
}

static int name_map_load(const floe_table_metadata *md, name_map *out, floe_error *err) {
    memset(out, 0, sizeof *out);
    const char *text = floe_table_metadata_property(md, "schema.name-mapping.default");
    if (!text)
        return 0;
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (!root || !json_is_array(root)) {
        json_decref(root);
        return floe_error_set(err, FLOE_ECORRUPT,
                              "schema.name-mapping.default: not a JSON array of fields");
    }
    int rc = 0;
    size_t cap = 0;
    for (size_t i = 0; i < json_array_size(root); i++) {
        json_t *f = json_array_get(root, i);
        json_t *id = json_object_get(f, "field-id");
        json_t *names = json_object_get(f, "names");
        if (!json_is_integer(id) || !json_is_array(names))
            continue;
        for (size_t k = 0; k < json_array_size(names); k++) {
            const char *nm = json_string_value(json_array_get(names, k));
            if (!nm)
                continue;
            if (out->n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                char **nn = floe_realloc(out->names, nc * sizeof *nn);
                if (!nn)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                out->names = nn;
                int32_t *ni = floe_realloc(out->ids, nc * sizeof *ni);
                if (!ni)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                out->ids = ni;
                cap = nc;
            }
            if (!(out->names[out->n] = floe_strdup(nm)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            out->ids[out->n++] = (int32_t)json_integer_value(id);
        }
    }
done:
    json_decref(root);
    if (rc < 0)
        name_map_free(out);
    return rc;
}

/* The field id a top-level file column stands for, or -1. */
static int32_t file_column_id(const floe_pq_node *c, const name_map *nm, bool file_has_ids,
                              const floe_schema *schema) {
    if (c->has_field_id)
        return c->field_id;
    if (file_has_ids)
        return -1;
    for (size_t i = 0; i < nm->n; i++)
        if (!strcmp(nm->names[i], c->name))
            return nm->ids[i];
    if (nm->n == 0) {
        /* no mapping at all: fall back to the current names (what readers of
         * unmanaged files do); the table should carry a mapping */
        for (size_t i = 0; i < schema->root.nchildren; i++)
            if (!strcmp(schema->root.children[i].name, c->name))
                return schema->root.children[i].id;
    }
    return -1;
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
        if (strlen(c->names[i]) == key.n && !memcmp(c->names[i], key.p, key.n)) {
            c->vals[c->slot[i]] = value;
            break;
        }
    return 0;
}

static int pos_row_cb(void *ctx, int64_t pos, const char *line, size_t n) {
    (void)pos;
    del_load_ctx *c = ctx;
    c->vals[0] = c->vals[1] = (span){"null", 4};
    if (each_member(line, n, del_member_cb, c) < 0)
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
    if (each_member(line, n, del_member_cb, c) < 0)
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

static int del_load(floe_table *t, del_cache *dc, const name_map *nm, const floe_schema *schema,
                    const floe_pq_reader_options *po, floe_error *err) {
    const floe_data_file *df = dc->file;
    char *uri = NULL;
    floe_pq_reader *r = NULL;
    del_load_ctx c = {.dc = dc, .err = err, .what = df->file_path};
    floe_arena_init(&c.scratch, 16 * 1024);
    int rc = 0;
    if (df->file_format && strcasecmp(df->file_format, "parquet"))
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "delete file %s: format %s is not supported",
                  df->file_path, df->file_format);
    FLOE_CHECK(floe_table_resolve_path(t, df->file_path, &uri, err));
    FLOE_CHECK(floe_pq_reader_open(uri, po, &r, err));
    const floe_pq_node *root = floe_pq_reader_root(r);
    bool has_ids = false;
    for (size_t i = 0; i < root->nchildren; i++)
        has_ids |= root->children[i].has_field_id;
    bool eq = df->content == FLOE_CONTENT_EQUALITY_DELETES;
    c.nslots = eq ? df->nequality_ids : 2;
    if (eq && c.nslots == 0)
        FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s without equality ids",
                  df->file_path);
    c.vals = floe_calloc(c.nslots, sizeof *c.vals);
    c.names = floe_calloc(root->nchildren + 1, sizeof *c.names);
    c.slot = floe_calloc(root->nchildren + 1, sizeof *c.slot);
    const char **sel = floe_calloc(root->nchildren + 1, sizeof *sel);
    if (!c.vals || !c.names || !c.slot || !sel) {
        floe_free(sel);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < root->nchildren; i++) {
        const floe_pq_node *ch = &root->children[i];
        int32_t id;
        if (!eq)
            id = ch->has_field_id ? ch->field_id
                                  : (!strcmp(ch->name, "file_path") ? POS_FILE_PATH_ID
                                     : !strcmp(ch->name, "pos")     ? POS_POS_ID
                                                                    : -1);
        else
            id = file_column_id(ch, nm, has_ids, schema);
        int32_t slot = -1;
        if (!eq) {
            slot = id == POS_FILE_PATH_ID ? 0 : id == POS_POS_ID ? 1 : -1;
        } else {
            for (size_t k = 0; k < df->nequality_ids; k++)
                if (df->equality_ids[k] == id)
                    slot = (int32_t)k;
        }
        if (slot < 0)
            continue;
        /* keys in the row text are JSON-escaped; names needing escapes are rare */
        c.names[c.nnames] = (char *)ch->name;
        c.slot[c.nnames] = slot;
        sel[c.nnames] = ch->name;
        c.nnames++;
    }
    if (c.nnames < c.nslots && !eq) {
        floe_free(sel);
        FLOE_FAIL(err, FLOE_ECORRUPT, "position delete file %s lacks file_path or pos",
                  df->file_path);
    }
    if (c.nnames == 0) {
        floe_free(sel);
        FLOE_FAIL(err, FLOE_ECORRUPT, "equality delete file %s has none of its equality "
                  "columns", df->file_path);
    }
    rc = floe_pq_reader_select_paths(r, sel, c.nnames, err);
    floe_free(sel);
    if (rc < 0)
        goto done;
    FLOE_CHECK(read_rows(r, FLOE_PQ_ROWS_CANONICAL, eq ? eq_row_cb : pos_row_cb, &c, err));
    if (eq && dc->nkeys)
        qsort(dc->keys, dc->nkeys, sizeof *dc->keys, cmp_str);
    dc->loaded = true;
done:
    if (rc < 0)
        floe_error_prefix(err, "delete file %s: ", df->file_path);
    floe_pq_reader_close(r);
    floe_free(uri);
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
}

/* ---------------------------------------------------------------------------------------
 * the scan
 * ------------------------------------------------------------------------------------- */

typedef struct out_col {
    const char *label;     /* output key */
    size_t top;            /* index of the top-level field */
    const floe_field *field;
    const char *sub[16];   /* names below the top-level field */
    size_t nsub;
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

    out_col *cols;
    size_t ncols;
    size_t ntop;

    /* per file */
    span *cells;           /* per top-level field */
    bool *from_file;       /* top-level field i comes from the file */
    char **file_names;     /* per top-level field: its column name in the file, or NULL */
    floe_buf constants;
    size_t *const_off, *const_len;
    int64_t *positions;    /* deleted positions, sorted */
    size_t npositions, pos_i;
    del_cache **eq;        /* equality deletes of this file */
    const int32_t **eq_ids;
    size_t *eq_nids;
    size_t neq;
    floe_arena scratch;
    floe_buf key;
    size_t rows_since_reset;
} scan_ctx;

static int out_flush(scan_ctx *c) {
    if (!c->out.len)
        return 0;
    int rc = c->sink(c->sink_ctx, c->out.data, c->out.len);
    c->out.len = 0;
    if (rc < 0)
        return floe_error_set(c->err, rc, "output: %s", floe_strerror(rc));
    return 0;
}

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
        if (v.n == 4 && !memcmp(v.p, "null", 4))
            break;
        if (!member(v, chain[k]->name, &v)) {
            v = (span){"null", 4};
            break;
        }
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
        c->key.len = 0;
        for (size_t k = 0; k < c->eq_nids[d]; k++) {
            int ti = top_index_of(c, c->eq_ids[d][k]);
            span v = ti >= 0 ? c->cells[ti] : (span){"null", 4};
            if (key_append(&c->key, k, v) < 0 || (k + 1 == c->eq_nids[d] &&
                                                   floe_buf_append_byte(&c->key, 0) < 0))
                return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        }
        const char *k = (const char *)c->key.data;
        *deleted = bsearch(&k, dc->keys, dc->nkeys, sizeof *dc->keys, cmp_str) != NULL;
    }
    return 0;
}

static int csv_field(floe_buf *b, const char *p, size_t n) {
    bool q = false;
    for (size_t i = 0; i < n && !q; i++)
        q = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!q)
        return floe_buf_append(b, p, n);
    int rc = floe_buf_append_byte(b, '"');
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (p[i] == '"')
            rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_buf_append_byte(b, (uint8_t)p[i]);
    }
    return rc < 0 ? rc : floe_buf_append_byte(b, '"');
}

typedef struct member_ctx {
    scan_ctx *c;
} member_ctx;

static int row_member_cb(void *ctx, span key, span value) {
    scan_ctx *c = ctx;
    for (size_t i = 0; i < c->ntop; i++)
        if (c->file_names[i] && strlen(c->file_names[i]) == key.n &&
            !memcmp(c->file_names[i], key.p, key.n)) {
            c->cells[i] = value;
            break;
        }
    return 0;
}

static int emit_row(scan_ctx *c) {
    int rc = 0;
    bool csv = c->ro->format == FLOE_PQ_ROWS_CSV;
    if (!csv)
        rc |= floe_buf_append_byte(&c->out, '{');
    for (size_t i = 0; i < c->ncols; i++) {
        const out_col *oc = &c->cols[i];
        span v = c->cells[oc->top];
        for (size_t k = 0; k < oc->nsub; k++) {
            if (v.n == 4 && !memcmp(v.p, "null", 4))
                break;
            if (!member(v, oc->sub[k], &v))
                v = (span){"null", 4};
        }
        if (i)
            rc |= floe_buf_append_byte(&c->out, ',');
        if (csv) {
            if (v.n == 4 && !memcmp(v.p, "null", 4))
                continue;
            if (v.n >= 2 && v.p[0] == '"' && !memchr(v.p + 1, '\\', v.n - 2))
                rc |= csv_field(&c->out, v.p + 1, v.n - 2);
            else
                rc |= csv_field(&c->out, v.p, v.n);
            continue;
        }
        rc |= json_key(&c->out, oc->label);
        rc |= floe_buf_append_byte(&c->out, ':');
        rc |= floe_buf_append(&c->out, v.p, v.n);
    }
    if (!csv)
        rc |= floe_buf_append_byte(&c->out, '}');
    rc |= floe_buf_append_byte(&c->out, '\n');
    if (rc < 0)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
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
        c->cells[i] = (span){(const char *)c->constants.data + c->const_off[i], c->const_len[i]};
    if (each_member(line, n, row_member_cb, c) < 0)
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

/* Find or load the cache entry of a delete file. */
static int del_get(scan_ctx *c, del_cache **caches, size_t *ncaches, size_t *cap,
                   const floe_data_file *df, const name_map *nm, del_cache **out) {
    for (size_t i = 0; i < *ncaches; i++)
        if (!strcmp((*caches)[i].file->file_path, df->file_path)) {
            *out = &(*caches)[i];
            return 0;
        }
    (void)cap;
    del_cache *dc = &(*caches)[(*ncaches)++];
    memset(dc, 0, sizeof *dc);
    dc->file = df;
    floe_pq_reader_options po = {.max_page_bytes = c->ro->max_page_bytes};
    FLOE_FORWARD_IF_ERROR(del_load(c->t, dc, nm, c->schema, &po, c->err));
    *out = dc;
    return 0;
}

/* Is top-level field index i needed (output, filter or equality delete columns)? */
static void mark_expr(const scan_ctx *c, const floe_expr *e, bool *need) {
    if (!e)
        return;
    if (e->kind == FLOE_EXPR_PRED) {
        const floe_field *f = e->field;
        while (f && f->parent)
            f = f->parent;
        if (f)
            need[f - c->schema->root.children] = true;
        return;
    }
    mark_expr(c, e->a, need);
    mark_expr(c, e->b, need);
}

static int read_task(scan_ctx *c, const floe_scan_task *task, del_cache **caches,
                     size_t *ncaches, size_t *cap, const name_map *nm) {
    int rc = 0;
    char *uri = NULL;
    floe_pq_reader *r = NULL;
    const char **sel = NULL;
    bool *need = floe_calloc(c->ntop + 1, sizeof *need);
    if (!need)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    const floe_data_file *df = task->file;
    if (df->file_format && strcasecmp(df->file_format, "parquet"))
        FLOE_FAIL(c->err, FLOE_EUNSUPPORTED, "data file %s: format %s is not supported",
                  df->file_path, df->file_format);

    /* deletes of this file */
    c->npositions = c->pos_i = 0;
    c->neq = 0;
    for (size_t d = 0; d < task->ndeletes; d++) {
        del_cache *dc;
        FLOE_CHECK(del_get(c, caches, ncaches, cap, task->deletes[d], nm, &dc));
        if (dc->file->content == FLOE_CONTENT_POSITION_DELETES) {
            for (size_t k = 0; k < dc->nrows; k++) {
                if (strcmp(dc->rows[k].path, df->file_path))
                    continue;
                int64_t *np = floe_realloc(c->positions, (c->npositions + 1) * sizeof *np);
                if (!np)
                    FLOE_FAIL(c->err, FLOE_ENOMEM, "out of memory");
                c->positions = np;
                c->positions[c->npositions++] = dc->rows[k].pos;
            }
        } else {
            c->eq[c->neq] = dc;
            c->eq_ids[c->neq] = dc->file->equality_ids;
            c->eq_nids[c->neq] = dc->file->nequality_ids;
            for (size_t k = 0; k < dc->file->nequality_ids; k++) {
                int ti = top_index_of(c, dc->file->equality_ids[k]);
                if (ti < 0)
                    FLOE_FAIL(c->err, FLOE_EUNSUPPORTED,
                              "equality delete file %s: equality field %d is not a top-level "
                              "column of the table schema",
                              dc->file->file_path, dc->file->equality_ids[k]);
                need[ti] = true;
            }
            c->neq++;
        }
    }
    if (c->npositions > 1)
        qsort(c->positions, c->npositions, sizeof *c->positions, cmp_i64);

    for (size_t i = 0; i < c->ncols; i++)
        need[c->cols[i].top] = true;
    mark_expr(c, c->filter, need);

    FLOE_CHECK(floe_table_resolve_path(c->t, df->file_path, &uri, c->err));
    floe_pq_reader_options po = {.max_page_bytes = c->ro->max_page_bytes};
    FLOE_CHECK(floe_pq_reader_open(uri, &po, &r, c->err));
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
    const floe_pq_node *root = floe_pq_reader_root(r);
    bool has_ids = false;
    for (size_t i = 0; i < root->nchildren; i++)
        has_ids |= root->children[i].has_field_id;
    sel = floe_calloc(root->nchildren + 1, sizeof *sel);
    if (!sel)
        FLOE_FAIL(c->err, FLOE_ENOMEM, "out of memory");
    size_t nsel = 0;
    for (size_t i = 0; i < c->ntop; i++)
        c->file_names[i] = NULL;
    for (size_t i = 0; i < root->nchildren; i++) {
        const floe_pq_node *ch = &root->children[i];
        int32_t id = file_column_id(ch, nm, has_ids, c->schema);
        int ti = id >= 0 ? top_index_of(c, id) : -1;
        if (ti < 0 || !need[ti] || c->file_names[ti])
            continue;
        c->file_names[ti] = (char *)ch->name;
        sel[nsel++] = ch->name;
    }
    if (nsel == 0 && root->nchildren) {
        /* nothing needed is in the file: read one column to count its rows */
        sel[nsel++] = root->children[0].name;
    }
    FLOE_CHECK(floe_pq_reader_select_paths(r, sel, nsel, c->err));

    /* constants: identity partition values, initial defaults, null */
    c->constants.len = 0;
    for (size_t i = 0; i < c->ntop; i++) {
        c->const_off[i] = c->constants.len;
        const floe_field *f = &c->schema->root.children[i];
        bool done_const = false;
        if (!c->file_names[i] && task->spec) {
            for (size_t k = 0; k < task->spec->nfields && k < df->npartition; k++) {
                const floe_partition_field *pf = &task->spec->fields[k];
                if (pf->source_id == f->id && pf->transform.kind == FLOE_XF_IDENTITY) {
                    FLOE_CHECK(floe_sv_to_canonical(&df->partition[k], &c->constants));
                    done_const = true;
                    break;
                }
            }
        }
        if (!done_const && !c->file_names[i] && f->initial_default_json &&
            !floe_type_is_nested(f->type)) {
            floe_value v;
            floe_error e2;
            floe_error_clear(&e2);
            if (floe_value_from_json(f, f->initial_default_json, strlen(f->initial_default_json),
                                     &c->scratch, &v, &e2) == 0) {
                FLOE_CHECK(floe_sv_to_canonical(&v, &c->constants));
                done_const = true;
            } else {
                floe_log(FLOE_LOG_WARN, "column %s: initial-default %s not understood: %s",
                         f->name, f->initial_default_json, e2.msg);
            }
        }
        if (!done_const)
            FLOE_CHECK(floe_buf_append(&c->constants, "null", 4));
        c->const_len[i] = c->constants.len - c->const_off[i];
    }
    floe_pq_row_format fmt =
        c->ro->format == FLOE_PQ_ROWS_CANONICAL ? FLOE_PQ_ROWS_CANONICAL : FLOE_PQ_ROWS_NDJSON;
    c->st.files_read++;
    rc = read_rows(r, fmt, data_row_cb, c, c->err);
    if (rc < 0)
        floe_error_prefix(c->err, "data file %s: ", df->file_path);
done:
    floe_free(need);
    floe_free(sel);
    floe_free(uri);
    floe_pq_reader_close(r);
    return rc;
}

int floe_scan_read(floe_table *t, const floe_scan_plan *p, const floe_scan_read_options *ro,
                   floe_pq_sink_fn sink, void *sink_ctx, floe_scan_read_stats *stats,
                   floe_error *err) {
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
    floe_buf_init(&c.out, 0);
    floe_buf_init(&c.constants, 0);
    floe_buf_init(&c.key, 0);
    floe_arena_init(&c.scratch, 16 * 1024);
    name_map nm = {0};
    del_cache *caches = NULL;
    size_t ncaches = 0, cap = 0;
    int rc = 0;
    c.ntop = c.schema->root.nchildren;
    size_t ndel_total = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        ndel_total += p->tasks[i].ndeletes;
    size_t nt = c.ntop ? c.ntop : 1;
    c.cells = floe_calloc(nt, sizeof *c.cells);
    c.file_names = floe_calloc(nt, sizeof *c.file_names);
    c.const_off = floe_calloc(nt, sizeof *c.const_off);
    c.const_len = floe_calloc(nt, sizeof *c.const_len);
    size_t maxdel = 1;
    for (size_t i = 0; i < p->ntasks; i++)
        if (p->tasks[i].ndeletes > maxdel)
            maxdel = p->tasks[i].ndeletes;
    c.eq = floe_calloc(maxdel, sizeof *c.eq);
    c.eq_ids = floe_calloc(maxdel, sizeof *c.eq_ids);
    c.eq_nids = floe_calloc(maxdel, sizeof *c.eq_nids);
    /* one cache slot per delete reference is an upper bound on distinct delete files */
    caches = floe_calloc(ndel_total ? ndel_total : 1, sizeof *caches);
    cap = ndel_total;
    if (!c.cells || !c.file_names || !c.const_off || !c.const_len || !c.eq || !c.eq_ids ||
        !c.eq_nids || !caches)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(name_map_load(floe_table_metadata_get(t), &nm, err));

    /* output columns */
    size_t ncolnames = 0;
    const char *const *colnames = floe_scan_plan_columns(p, &ncolnames);
    c.ncols = ncolnames ? ncolnames : c.ntop;
    c.cols = floe_calloc(c.ncols ? c.ncols : 1, sizeof *c.cols);
    if (!c.cols)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < c.ncols; i++) {
        out_col *oc = &c.cols[i];
        if (!ncolnames) {
            oc->top = i;
            oc->field = &c.schema->root.children[i];
            oc->label = oc->field->name;
            continue;
        }
        const floe_field *f = floe_schema_find_path(c.schema, colnames[i]);
        if (!f)
            FLOE_FAIL(err, FLOE_ENOTFOUND, "no column %s", colnames[i]);
        const floe_field *chain[17];
        size_t depth = 0;
        for (const floe_field *q = f; q; q = q->parent) {
            if (depth == 17)
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "column %s is nested too deeply",
                          colnames[i]);
            if (q->parent && (q->parent->type == FLOE_TYPE_LIST || q->parent->type == FLOE_TYPE_MAP))
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "column %s is inside a list or map",
                          colnames[i]);
            chain[depth++] = q;
        }
        oc->field = f;
        oc->label = colnames[i];
        oc->top = (size_t)(chain[depth - 1] - c.schema->root.children);
        for (size_t k = depth - 1; k-- > 0;)
            oc->sub[oc->nsub++] = chain[k]->name;
    }
    if (ro->format == FLOE_PQ_ROWS_CSV) {
        for (size_t i = 0; i < c.ncols; i++) {
            if (i)
                FLOE_CHECK(floe_buf_append_byte(&c.out, ','));
            FLOE_CHECK(csv_field(&c.out, c.cols[i].label, strlen(c.cols[i].label)));
        }
        FLOE_CHECK(floe_buf_append_byte(&c.out, '\n'));
    }
    for (size_t i = 0; i < p->ntasks; i++) {
        if (ro->limit >= 0 && c.st.rows_out >= ro->limit)
            break;
        FLOE_CHECK(read_task(&c, &p->tasks[i], &caches, &ncaches, &cap, &nm));
    }
    FLOE_CHECK(out_flush(&c));
done:
    if (rc < 0 && rc > -100 && err && err->code == 0)
        floe_error_set(err, rc, "scan: %s", floe_strerror(rc));
    for (size_t i = 0; i < ncaches; i++)
        del_cache_free(&caches[i]);
    floe_free(caches);
    name_map_free(&nm);
    floe_free(c.cells);
    floe_free(c.file_names);
    floe_free(c.const_off);
    floe_free(c.const_len);
    floe_free(c.positions);
    floe_free(c.eq);
    floe_free(c.eq_ids);
    floe_free(c.eq_nids);
    floe_free(c.cols);
    floe_buf_free(&c.out);
    floe_buf_free(&c.constants);
    floe_buf_free(&c.key);
    floe_arena_reset(&c.scratch);
    if (rc >= 0 && stats)
        *stats = c.st;
    return rc < 0 ? rc : 0;
}
