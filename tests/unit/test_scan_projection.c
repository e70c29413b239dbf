/*
 * test_scan_projection.c - a table scan of some columns prints what the full scan prints
 * for them. For every readable conformance table (../shared/conformance/iceberg), every
 * field path of the current schema (nested struct fields, list elements, map keys and
 * values, and below them) and every pair of top-level columns is scanned with
 * --columns, in canonical form and NDJSON, and each row must equal the value at that
 * path in the full scan's row: through a struct its field, through a list the list of
 * its elements' values, through a map's key the list of its keys, through its value the
 * map of its values' values. The full scans are compared with icebird (an independent
 * reader) in tests/integration/table_interop.sh.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"

typedef struct rows {
    json_t **v;
    size_t n;
} rows;

static void rows_free(rows *r) {
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* The streaming plan hands out the same tasks, in the same order, as the collected one. */
typedef struct stream_check {
    const floe_scan_plan *p;
    size_t n;
    bool mismatch;
} stream_check;

static int stream_task(void *ctx, const floe_scan_task *t, floe_error *err) {
    (void)err;
    stream_check *c = ctx;
    const floe_scan_task *w = c->n < c->p->ntasks ? &c->p->tasks[c->n] : NULL;
    bool same = w && !strcmp(w->file->file_path, t->file->file_path) &&
                w->spec_id == t->spec_id && w->data_sequence_number == t->data_sequence_number &&
                w->file->record_count == t->file->record_count && w->ndeletes == t->ndeletes &&
                (w->spec == NULL) == (t->spec == NULL);
    for (size_t d = 0; same && d < t->ndeletes; d++)
        same = !strcmp(w->deletes[d]->file_path, t->deletes[d]->file_path) &&
               w->delete_sequence_numbers[d] == t->delete_sequence_numbers[d];
    if (!same && !c->mismatch)
        harness_fail(__FILE__, __LINE__, "streamed task %zu (%s) differs from the plan's",
                     c->n, t->file->file_path);
    c->mismatch |= !same;
    c->n++;
    return 0;
}

static void check_stream(floe_table *t, const floe_scan_options *so, const floe_scan_plan *p) {
    stream_check c = {.p = p};
    floe_scan_plan *sp = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_scan_plan_stream(t, so, stream_task, &c, &sp, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "streaming plan: %s", err.msg);
        return;
    }
    CHECK_EQ_INT(c.n, p->ntasks);
    CHECK_EQ_INT(sp->ntasks, 0);
    CHECK_EQ_INT(sp->records, p->records);
    CHECK_EQ_INT(sp->stats.data_files, p->stats.data_files);
    CHECK_EQ_INT(sp->stats.manifests_read, p->stats.manifests_read);
    CHECK_EQ_INT(sp->stats.delete_files, p->stats.delete_files);
    floe_scan_plan_free(sp);
}

/* Scan t (columns: NULL = all) into parsed rows. */
static int scan(floe_table *t, const char *const *columns, size_t ncolumns,
                floe_pq_row_format fmt, int64_t limit, rows *out, floe_error *err) {
    floe_scan_options so = {.columns = columns, .ncolumns = ncolumns};
    floe_scan_plan *p = NULL;
    int rc = floe_scan_plan_files(t, &so, &p, err);
    if (rc < 0)
        return rc;
    check_stream(t, &so, p);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_scan_read_options ro = {.format = fmt, .limit = limit};
    rc = floe_scan_read(t, p, &ro, harness_buf_sink, &b, NULL, err);
    floe_scan_plan_free(p);
    out->v = NULL;
    out->n = 0;
    size_t start = 0;
    for (size_t i = 0; rc == 0 && i < b.len; i++) {
        if (b.data[i] != '\n')
            continue;
        json_error_t je;
        json_t *j = json_loadb((const char *)b.data + start, i - start, 0, &je);
        if (!j)
            j = json_loadb((const char *)b.data + start, i - start, JSON_DECODE_INT_AS_REAL, &je);
        out->v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n++] = j ? j : json_string("(unparsable row)");
        start = i + 1;
    }
    floe_buf_free(&b);
    return rc;
}

/* The value at chain[1..depth) below v, the value of chain[0]. */
static json_t *extract(json_t *v, const floe_field *const *chain, size_t depth) {
    if (depth <= 1 || !v || json_is_null(v))
        return json_incref(v ? v : json_null());
    const floe_field *f = chain[0];
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        return extract(json_object_get(v, chain[1]->name), chain + 1, depth - 1);
    case FLOE_TYPE_LIST: {
        json_t *out = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(out, extract(json_array_get(v, i), chain + 1, depth - 1));
        return out;
    }
    case FLOE_TYPE_MAP: {
        bool key = chain[1] == &f->children[0];
        if (json_is_object(v)) { /* NDJSON, string keys */
            json_t *out = key ? json_array() : json_object();
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x) {
                if (key)
                    json_array_append_new(out, json_string(k));
                else
                    json_object_set_new(out, k, extract(x, chain + 1, depth - 1));
            }
            return out;
        }
        json_t *out = json_array();
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            bool pair = json_is_array(e); /* canonical [k, v]; NDJSON {"key","value"} */
            json_t *k = pair ? json_array_get(e, 0) : json_object_get(e, "key");
            json_t *x = pair ? json_array_get(e, 1) : json_object_get(e, "value");
            if (key)
                json_array_append_new(out, extract(k, chain + 1, depth - 1));
            else if (pair)
                json_array_append_new(out, json_pack("[Oo]", k, extract(x, chain + 1, depth - 1)));
            else
                json_array_append_new(out, json_pack("{sOso}", "key", k, "value",
                                                      extract(x, chain + 1, depth - 1)));
        }
        return out;
    }
    default:
        return json_incref(v);
    }
}

typedef struct col {
    char path[512];
    const floe_field *chain[32];
    size_t depth;
} col;

static void collect(const floe_field *f, const char *prefix, col **v, size_t *n) {
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *c = &f->children[i];
        *v = realloc(*v, (*n + 1) * sizeof **v);
        col *k = &(*v)[(*n)++];
        snprintf(k->path, sizeof k->path, "%s%s%s", prefix, *prefix ? "." : "", c->name);
        k->depth = 0;
        const floe_field *up[32];
        for (const floe_field *q = c; q && k->depth < 32; q = q->parent)
            up[k->depth++] = q;
        for (size_t j = 0; j < k->depth; j++)
            k->chain[j] = up[k->depth - 1 - j];
        char here[512];
        snprintf(here, sizeof here, "%s", k->path);
        collect(c, here, v, n);
    }
}

typedef struct table_case {
    const char *dir;
    const char *relocate_from; /* relative to the conformance iceberg folder */
    int64_t limit;             /* rows compared (large tables), -1 all */
} table_case;

static const table_case CASES[] = {
    {"duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults", NULL, -1},
    {"duckdb-iceberg/case_sensitive_names/default.db/case_sensitive_names", NULL, -1},
    {"duckdb-iceberg/column_mapping/warehouse/default.db/my_table", "data/persistent/", -1},
    /* not equality_delete_extra_column: its snapshot ids lie past the signed 64-bit range
     * and the table is refused (test_metadata, test_manifest) */
    {"duckdb-iceberg/expression_filter", NULL, -1},
    {"duckdb-iceberg/hive_partitioned_table", NULL, -1},
    {"duckdb-iceberg/iceberg/lineitem_iceberg_gz", NULL, 300},
    {"duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1", NULL, -1},
    {"duckdb-iceberg/is_null_is_not_null", NULL, -1},
    {"duckdb-iceberg/map_stats/default.db/map_stats", NULL, -1},
    {"duckdb-iceberg/null_stats/default/test_nulls", NULL, -1},
    {"duckdb-iceberg/partition_bigint", NULL, -1},
    {"duckdb-iceberg/partition_binary", NULL, -1},
    {"duckdb-iceberg/partition_bool", NULL, -1},
    {"duckdb-iceberg/partition_decimal_bigint", NULL, -1},
    {"duckdb-iceberg/partition_decimal_integer", NULL, -1},
    {"duckdb-iceberg/partition_decimal_smallint", NULL, -1},
    {"duckdb-iceberg/partition_double", NULL, -1},
    {"duckdb-iceberg/partition_fixed_length_binary/default.db/partition_fixed_length_binary",
     NULL, -1},
    {"duckdb-iceberg/partition_float", NULL, -1},
    {"duckdb-iceberg/partition_integer", NULL, -1},
    {"duckdb-iceberg/partition_time/default.db/partition_time", NULL, -1},
    {"duckdb-iceberg/partition_timestamp/default.db/partition_timestamp", NULL, -1},
    {"duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz", NULL, -1},
    {"duckdb-iceberg/uuid", NULL, -1},
    {"icebird/java_bunnies", NULL, -1},
    {"icebird/spark_bunnies", NULL, -1},
    {"icebird/spark_rename_column", NULL, -1},
};

static size_t g_checked;

/* Scan the columns and compare every row with the full scan's values at their paths. */
static void check_columns(floe_table *t, const char *dir, const col *const *cols, size_t n,
                          const rows *full, floe_pq_row_format fmt, int64_t limit) {
    const char *names[2];
    char label[1100] = "";
    for (size_t i = 0; i < n; i++) {
        names[i] = cols[i]->path;
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", i ? "," : "",
                 cols[i]->path);
    }
    const char *form = fmt == FLOE_PQ_ROWS_CANONICAL ? "canonical" : "ndjson";
    rows got;
    floe_error err;
    floe_error_clear(&err);
    if (scan(t, names, n, fmt, limit, &got, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "%s --columns %s (%s): %s", dir, label, form, err.msg);
        rows_free(&got);
        return;
    }
    g_checked++;
    if (got.n != full->n) {
        harness_fail(__FILE__, __LINE__, "%s --columns %s (%s): %zu rows, the full scan %zu",
                     dir, label, form, got.n, full->n);
        rows_free(&got);
        return;
    }
    for (size_t r = 0; r < got.n; r++) {
        bool bad = json_object_size(got.v[r]) != n;
        json_t *want = NULL;
        for (size_t i = 0; i < n && !bad; i++) {
            want = extract(json_object_get(full->v[r], cols[i]->chain[0]->name), cols[i]->chain,
                           cols[i]->depth);
            json_t *g = json_object_get(got.v[r], cols[i]->path);
            bad = !g || !json_equal(g, want);
            if (!bad)
                json_decref(want), want = NULL;
        }
        if (bad) {
            char *g = json_dumps(got.v[r], JSON_COMPACT);
            char *w = want ? json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            harness_fail(__FILE__, __LINE__, "%s --columns %s (%s) row %zu:\n  got  %.300s\n  want %.300s",
                         dir, label, form, r + 1, g ? g : "?", w ? w : "(row shape)");
            free(g);
            free(w);
            json_decref(want);
            break;
        }
    }
    rows_free(&got);
}

TEST(every_column_of_every_conformance_table) {
    const char *ice = harness_conformance("iceberg");
    size_t tables = 0;
    for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
        const table_case *tc = &CASES[ci];
        char path[1024], to[1024];
        snprintf(path, sizeof path, "%s/%s", ice, tc->dir);
        snprintf(to, sizeof to, "%s/duckdb-iceberg/", ice);
        floe_table_open_options oo = {.relocate_from = tc->relocate_from,
                                      .relocate_to = tc->relocate_from ? to : NULL};
        floe_table *t = NULL;
        floe_error err;
        floe_error_clear(&err);
        if (floe_table_open_path(path, &oo, &t, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s", tc->dir, err.msg);
            continue;
        }
        const floe_table_metadata *m = floe_table_metadata_get(t);
        const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
        floe_schema *s = NULL;
        if (floe_schema_parse(ms->json, strlen(ms->json), &s, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s: schema: %s", tc->dir, err.msg);
            floe_table_close(t);
            continue;
        }
        col *cols = NULL;
        size_t ncols = 0;
        collect(&s->root, "", &cols, &ncols);
        for (int form = 0; form < 2; form++) {
            floe_pq_row_format fmt = form ? FLOE_PQ_ROWS_NDJSON : FLOE_PQ_ROWS_CANONICAL;
            rows full;
            if (scan(t, NULL, 0, fmt, tc->limit, &full, &err) < 0) {
                harness_fail(__FILE__, __LINE__, "%s: full scan: %s", tc->dir, err.msg);
                rows_free(&full);
                break;
            }
            for (size_t i = 0; i < ncols; i++) {
                const col *one[1] = {&cols[i]};
                check_columns(t, tc->dir, one, 1, &full, fmt, tc->limit);
            }
            /* pairs of top-level columns, in canonical form */
            for (size_t i = 0; form == 0 && i < ncols; i++)
                for (size_t j = i + 1; j < ncols; j++) {
                    if (cols[i].depth > 1 || cols[j].depth > 1)
                        continue;
                    const col *two[2] = {&cols[j], &cols[i]};
                    check_columns(t, tc->dir, two, 2, &full, fmt, tc->limit);
                }
            rows_free(&full);
        }
        free(cols);
        floe_schema_free(s);
        floe_table_close(t);
        tables++;
    }
    CHECK_EQ_INT(tables, sizeof CASES / sizeof CASES[0]);
    printf("  %zu tables, %zu projections compared\n", tables, g_checked);
}

int main(void) {
    RUN(every_column_of_every_conformance_table);
    return harness_finish();
}
