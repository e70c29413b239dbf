/*
 * test_pq_projection.c - a projection prints what the full read prints for the columns it
 * selects. For every nested file of parquet-testing/data, each schema node and every pair
 * of leaves is selected (floe_pq_reader_select_paths, as `floe cat --columns`), and the
 * rows it prints in NDJSON and canonical form (and CSV, for single selections) must equal
 * the full read in the same form with everything else pruned away. The full reads are
 * compared with DuckDB and hyparquet in tests/integration/pq_reader_oracles.sh;
 * tests/integration/pq_projection.sh does the same projections with DuckDB-written maps
 * of maps, maps of structs and lists of maps through the floe program.
 *
 * Pruning: a struct keeps the fields with a selected leaf below; a list keeps its
 * elements, pruned; a map keeps its keys (selecting anything of a map reads its keys) and
 * its values pruned, or null where nothing of the value is selected. Which group is a
 * list, a map or a struct follows the LogicalTypes rules, written out here on their own.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "floe/parquet_reader.h"
#include "harness.h"
#include "../../src/cli/cli.h"

/* rows through the CLI's CSV writer (src/cli/csv.c) */
#define TEST_ROWS_CSV ((floe_pq_row_format)-1)
#include "parquet/metadata.h"

typedef enum { SH_LEAF, SH_LIST, SH_MAP, SH_STRUCT } shape_kind;

static bool is_group_ann(const floe_pq_node *nd, int lt, int ct1, int ct2) {
    return nd->phys < 0 && (nd->logical_kind == lt || nd->converted_type == ct1 ||
                            (ct2 >= 0 && nd->converted_type == ct2));
}

/* How node nd is read: sets *kind, and for a list its element (*el, read as an element
 * when *el_is_rep), for a map its key_value group (*el). */
static shape_kind shape_of(const floe_pq_node *nd, bool as_element, const floe_pq_node **el,
                           bool *el_is_rep) {
    *el = NULL;
    *el_is_rep = false;
    if (nd->repetition == 2 && !as_element) {
        *el = nd;
        *el_is_rep = true;
        return SH_LIST;
    }
    if (nd->phys >= 0)
        return SH_LEAF;
    bool list = is_group_ann(nd, FLOE_PQ_LT_LIST, FLOE_PQ_CT_LIST, -1);
    bool map = is_group_ann(nd, FLOE_PQ_LT_MAP, FLOE_PQ_CT_MAP, FLOE_PQ_CT_MAP_KEY_VALUE);
    if ((list || map) && nd->nchildren == 1 && nd->children[0].repetition == 2) {
        const floe_pq_node *rep = &nd->children[0];
        if (list || rep->phys >= 0 || rep->nchildren == 0) {
            const floe_pq_node *e = rep->nchildren == 1 ? &rep->children[0] : rep;
            char tuple[256];
            snprintf(tuple, sizeof tuple, "%s_tuple", nd->name);
            if (rep->phys >= 0 || !strcmp(rep->name, "array") || !strcmp(rep->name, tuple))
                e = rep;
            *el = e;
            *el_is_rep = e == rep;
            return SH_LIST;
        }
        *el = rep;
        return SH_MAP;
    }
    return SH_STRUCT;
}

static bool any_in(const floe_pq_node *nd, const bool *sel) {
    if (nd->column >= 0)
        return sel[nd->column];
    for (size_t i = 0; i < nd->nchildren; i++)
        if (any_in(&nd->children[i], sel))
            return true;
    return false;
}

static void mark_all(const floe_pq_node *nd, bool *sel) {
    if (nd->column >= 0)
        sel[nd->column] = true;
    for (size_t i = 0; i < nd->nchildren; i++)
        mark_all(&nd->children[i], sel);
}

/* Add the keys of every map with anything selected. */
static void close_over_keys(const floe_pq_node *nd, bool as_element, bool *sel) {
    const floe_pq_node *el;
    bool rep;
    shape_kind k = shape_of(nd, as_element, &el, &rep);
    if (k == SH_MAP && any_in(el, sel))
        mark_all(&el->children[0], sel);
    if (k == SH_LIST && el != nd)
        close_over_keys(el, rep, sel);
    else if (k == SH_LIST)
        close_over_keys(nd, true, sel);
    else
        for (size_t i = 0; i < (k == SH_MAP ? el->nchildren : k == SH_STRUCT ? nd->nchildren : 0); i++)
            close_over_keys(k == SH_MAP ? &el->children[i] : &nd->children[i], false, sel);
}

/* The full value v of node nd with only the selected leaves kept (a new reference). */
static json_t *prune(json_t *v, const floe_pq_node *nd, bool as_element, const bool *sel,
                     bool canonical) {
    if (json_is_null(v))
        return json_null();
    const floe_pq_node *el;
    bool rep;
    switch (shape_of(nd, as_element, &el, &rep)) {
    case SH_LEAF:
        return json_incref(v);
    case SH_LIST: {
        json_t *out = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(out, prune(json_array_get(v, i), el, rep, sel, canonical));
        return out;
    }
    case SH_MAP: {
        const floe_pq_node *vn = el->nchildren > 1 ? &el->children[1] : NULL;
        bool keep = vn && any_in(vn, sel);
#define PV(x) (keep ? prune((x), vn, false, sel, canonical) : json_null())
        if (json_is_object(v)) {
            json_t *out = json_object();
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x) json_object_set_new(out, k, PV(x));
            return out;
        }
        json_t *out = json_array();
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            if (canonical)
                json_array_append_new(out, json_pack("[Oo]", json_array_get(e, 0),
                                                      PV(json_array_get(e, 1))));
            else
                json_array_append_new(out, json_pack("{sOso}", "key", json_object_get(e, "key"),
                                                      "value", PV(json_object_get(e, "value"))));
        }
#undef PV
        return out;
    }
    case SH_STRUCT: {
        json_t *out = json_object();
        for (size_t i = 0; i < nd->nchildren; i++) {
            const floe_pq_node *c = &nd->children[i];
            if (!any_in(c, sel))
                continue;
            json_t *x = json_object_get(v, c->name);
            json_object_set_new(out, c->name, x ? prune(x, c, false, sel, canonical)
                                                : json_string("(missing)"));
        }
        return out;
    }
    }
    return json_null();
}

typedef struct lines {
    char **v;
    size_t n;
} lines;

static void lines_split(floe_buf *b, lines *out) {
    out->v = NULL;
    out->n = 0;
    size_t start = 0;
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] == '\n') {
            out->v = realloc(out->v, (out->n + 1) * sizeof *out->v);
            out->v[out->n++] = strndup((const char *)b->data + start, i - start);
            start = i + 1;
        }
}

static void lines_free(lines *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, JSON_DECODE_ANY, &je);
    if (!j) /* integers beyond int64 (UINT_64 columns) */
        j = json_loads(s, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &je);
    return j;
}

/* CSV fields of one line (quotes undone). */
static size_t csv_fields(const char *s, char ***out) {
    size_t n = 0;
    char **v = NULL;
    floe_buf f;
    floe_buf_init(&f, 0);
    bool q = false;
    for (const char *p = s;; p++) {
        if (q) {
            if (*p == '"' && p[1] == '"') {
                floe_buf_append_byte(&f, '"');
                p++;
            } else if (*p == '"') {
                q = false;
            } else if (*p) {
                floe_buf_append_byte(&f, (uint8_t)*p);
            } else {
                break;
            }
            continue;
        }
        if (*p == '"') {
            q = true;
        } else if (*p == ',' || *p == 0) {
            v = realloc(v, (n + 1) * sizeof *v);
            v[n++] = strndup(f.len ? (const char *)f.data : "", f.len);
            f.len = 0;
            if (!*p)
                break;
        } else {
            floe_buf_append_byte(&f, (uint8_t)*p);
        }
    }
    floe_buf_free(&f);
    *out = v;
    return n;
}

static int dump(floe_pq_reader *r, floe_pq_row_format fmt, floe_buf *out, floe_error *err) {
    out->len = 0;
    floe_pq_reader_rewind(r);
    if (fmt == TEST_ROWS_CSV) {
        cli_csv cc = {.out = *out};
        int rc = floe_pq_reader_dump_rows(r, -1, cli_csv_row, &cc, NULL, err);
        *out = cc.out;
        return rc;
    }
    return floe_pq_reader_dump(r, fmt, -1, harness_buf_sink, out, NULL, err);
}

typedef struct file_ctx {
    const char *name;
    floe_pq_reader *r;
    const floe_pq_node *root;
    size_t ncols;
    lines full_nd, full_canon;
    size_t checked, failed;
} file_ctx;

/* Select the nodes, read in each form and compare with the pruned full read. */
static void check_selection(file_ctx *fc, const floe_pq_node *const *picked, size_t npicked) {
    const char *paths[2];
    bool *sel = calloc(fc->ncols + 1, sizeof *sel);
    char label[512] = "";
    for (size_t i = 0; i < npicked; i++) {
        paths[i] = picked[i]->path;
        mark_all(picked[i], sel);
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", i ? "," : "",
                 picked[i]->path);
    }
    close_over_keys(fc->root, false, sel);
    floe_error err;
    floe_buf out;
    floe_buf_init(&out, 0);
    if (floe_pq_reader_select_paths(fc->r, paths, npicked, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s: select %s: %s", fc->name, label, err.msg);
        fc->failed++;
        goto done;
    }
    for (int form = 0; form < 3; form++) {
        if (form == 2 && npicked > 1)
            break;
        floe_pq_row_format fmt = form == 0   ? FLOE_PQ_ROWS_NDJSON
                                 : form == 1 ? FLOE_PQ_ROWS_CANONICAL
                                             : TEST_ROWS_CSV;
        const char *fname = form == 0 ? "ndjson" : form == 1 ? "canonical" : "csv";
        if (dump(fc->r, fmt, &out, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s --columns %s (%s): %s", fc->name, label,
                         fname, err.msg);
            fc->failed++;
            continue;
        }
        lines got;
        lines_split(&out, &got);
        const lines *full = form == 1 ? &fc->full_canon : &fc->full_nd;
        size_t first = form == 2; /* the CSV header */
        bool bad = got.n != full->n + first;
        if (bad)
            harness_fail(__FILE__, __LINE__, "%s --columns %s (%s): %zu rows, want %zu",
                         fc->name, label, fname, got.n - first, full->n);
        for (size_t i = 0; i < full->n && !bad; i++) {
            json_t *fv = parse(full->v[i]);
            json_t *want = fv ? prune(fv, fc->root, false, sel, form == 1) : NULL;
            if (form < 2) {
                json_t *gv = parse(got.v[i]);
                bad = !want || !gv || !json_equal(gv, want);
                json_decref(gv);
            } else {
                /* one field per top-level value in the projection, in file order */
                char **cells;
                size_t nc = csv_fields(got.v[i + 1], &cells);
                bad = !want || nc != json_object_size(want);
                size_t k = 0;
                const char *key;
                json_t *x;
                if (!bad)
                    json_object_foreach(want, key, x) {
                        const char *c = cells[k++];
                        if (json_is_null(x))
                            bad |= *c != 0;
                        else if (json_is_string(x) && !strchr(c, '\\') && !(*c == '"'))
                            bad |= strcmp(c, json_string_value(x)) != 0;
                        else {
                            json_t *cv = parse(c);
                            bad |= !cv || !json_equal(cv, x);
                            json_decref(cv);
                        }
                    }
                for (size_t j = 0; j < nc; j++)
                    free(cells[j]);
                free(cells);
            }
            if (bad) {
                char *w = want ? json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
                harness_fail(__FILE__, __LINE__, "%s --columns %s (%s) row %zu:\n  got  %.300s\n  want %.300s",
                             fc->name, label, fname, i + 1, got.v[i + first], w ? w : "?");
                free(w);
            }
            json_decref(want);
            json_decref(fv);
        }
        fc->checked++;
        fc->failed += bad;
        lines_free(&got);
    }
done:
    floe_buf_free(&out);
    free(sel);
}

static void collect(const floe_pq_node *nd, const floe_pq_node ***v, size_t *n, bool leaves) {
    for (size_t i = 0; i < nd->nchildren; i++) {
        const floe_pq_node *c = &nd->children[i];
        if (!leaves || c->column >= 0) {
            *v = realloc(*v, (*n + 1) * sizeof **v);
            (*v)[(*n)++] = c;
        }
        collect(c, v, n, leaves);
    }
}

TEST(every_node_and_pair_of_nested_files) {
    const char *dir = harness_conformance("parquet-testing/data");
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    size_t files = 0, total = 0;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".parquet"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        file_ctx fc = {.name = e->d_name};
        floe_error err;
        if (floe_pq_reader_open(NULL, path, NULL, &fc.r, &err) < 0)
            continue; /* the malformed ones: tested elsewhere */
        fc.root = floe_pq_reader_root(fc.r);
        bool nested = false;
        for (size_t i = 0; i < fc.root->nchildren; i++)
            nested |= fc.root->children[i].nchildren > 0 || fc.root->children[i].repetition == 2;
        floe_buf full;
        floe_buf_init(&full, 0);
        if (!nested || dump(fc.r, FLOE_PQ_ROWS_NDJSON, &full, &err) < 0) {
            floe_buf_free(&full);
            floe_pq_reader_close(fc.r);
            continue;
        }
        lines_split(&full, &fc.full_nd);
        CHECK_OK(dump(fc.r, FLOE_PQ_ROWS_CANONICAL, &full, &err), err);
        lines_split(&full, &fc.full_canon);
        floe_buf_free(&full);
        floe_pq_reader_file fi;
        floe_pq_reader_file_info(fc.r, &fi);
        fc.ncols = fi.num_columns;
        const floe_pq_node **nodes = NULL, **leaves = NULL;
        size_t nn = 0, nl = 0;
        collect(fc.root, &nodes, &nn, false);
        collect(fc.root, &leaves, &nl, true);
        for (size_t i = 0; i < nn; i++)
            check_selection(&fc, &nodes[i], 1);
        for (size_t i = 0; i < nl; i++)
            for (size_t j = i + 1; j < nl; j++) {
                const floe_pq_node *pair[2] = {leaves[i], leaves[j]};
                check_selection(&fc, pair, 2);
            }
        free(nodes);
        free(leaves);
        lines_free(&fc.full_nd);
        lines_free(&fc.full_canon);
        floe_pq_reader_close(fc.r);
        files++;
        total += fc.checked;
    }
    closedir(d);
    /* nested_lists, list_columns, (non)nullable.impala, null_list, old_list_structure,
     * repeated_no_annotation, repeated_primitive_no_list, map_no_value, incorrect_map_schema */
    CHECK(files >= 10);
    printf("  %zu nested files, %zu projections compared\n", files, total);
}

int main(void) {
    RUN(every_node_and_pair_of_nested_files);
    return harness_finish();
}
