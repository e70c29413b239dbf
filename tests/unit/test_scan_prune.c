/*
 * test_scan_prune.c - the scan's pruning checks never drop a file, a partition or a
 * manifest that holds a matching row (scan_expr.c), measured against the row filter on
 * the rows themselves.
 *
 * Random small files of random rows (nulls, NaN, -0.0 and +0.0, infinities, the extremes
 * of long, strings longer than the 16 code points bounds keep, non-ASCII, decimals,
 * timestamps on both sides of 1970) get their metrics the way a data file does
 * (floe_data_file_from_parquet, truncate(16)), in several variants: floe's own (zero
 * bounds as -0.0 / +0.0, NaN counts), a writer comparing floats with IEEE rules (a zero
 * bound of either sign, first seen), without NaN counts, without null counts. Single-row
 * files get the partition tuple of a spec with every transform kind, and groups of them
 * go through the manifest writer for their partition summaries. Random filters (NOT,
 * AND, OR, every comparison, IN, NOT IN, LIKE, IS [NOT] NULL, NaN literals) are parsed,
 * evaluated per row, and pushed down for pruning: whenever a row matches, its file, its
 * partition tuple and its manifest must be kept. The test also counts what was pruned,
 * so it cannot pass by pruning nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/manifest.h"
#include "floe/parquet.h"
#include "harness.h"
#include "iceberg/scan_internal.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":2,\"name\":\"n\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":3,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":4,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9,2)\"},"
    "{\"id\":5,\"name\":\"t\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":6,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":7,\"name\":\"k\",\"required\":false,\"type\":\"int\"}]}";
#define NCOLS 7

/* value pools: the text of a literal and the value (for rows) */
static const char *DOUBLES[] = {"-Infinity", "-1e9", "-2.5", "-1", "-0.0", "0", "0.5", "1",
                                "3", "1e9", "Infinity", "NaN"};
static const char *LONGS[] = {"-9223372036854775808", "-100", "-11", "-10", "-1", "0", "1",
                              "9", "10", "100", "9223372036854775807"};
static const char *STRINGS[] = {"", "a", "ab", "abc", "b", "\xc3\xa9t\xc3\xa9", "zz",
                                "aaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaab",
                                "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf", "abd"};
static const char *DECIMALS[] = {"-3.00", "-0.01", "0.00", "0.01", "1.25", "1.26", "99.99"};
static const char *TIMES[] = {"1969-12-31T00:00:00Z", "1969-12-31T23:59:59.999999Z",
                              "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000001Z",
                              "2026-10-06T12:00:00Z", "1900-03-01T00:00:00Z",
                              "1969-12-31T16:00:00-08:00", "2026-10-06T14:00:00+0200",
                              "1970-01-01T05:30:00.000001+05:30"};
static const char *FLOATS[] = {"-0.0", "0", "1.5", "-1.5", "NaN", "3.4e38", "-Infinity"};
static const char *INTS[] = {"-2147483648", "-2147483647", "-5", "-3", "0", "2", "3",
                             "2147483647"};

typedef struct pool {
    const char *const *text;
    size_t n;
} pool;
static const pool POOLS[NCOLS + 1] = {
    {NULL, 0},
    {DOUBLES, sizeof DOUBLES / sizeof *DOUBLES},
    {LONGS, sizeof LONGS / sizeof *LONGS},
    {STRINGS, sizeof STRINGS / sizeof *STRINGS},
    {DECIMALS, sizeof DECIMALS / sizeof *DECIMALS},
    {TIMES, sizeof TIMES / sizeof *TIMES},
    {FLOATS, sizeof FLOATS / sizeof *FLOATS},
    {INTS, sizeof INTS / sizeof *INTS},
};

static const floe_schema *S;
static floe_arena A; /* values of the whole run */

/* A literal's text as the filter language wants it (strings, times, decimals quoted). */
static void literal(int col, const char *t, char *out, size_t n) {
    if (col == 3 || col == 4 || col == 5)
        snprintf(out, n, "'%s'", t);
    else
        snprintf(out, n, "%s", t);
}

static floe_value value(int col, const char *t) {
    floe_error err;
    floe_value v;
    const floe_field *f = floe_schema_find_id(S, col);
    char lit[128];
    literal(col, t, lit, sizeof lit);
    if (floe_sv_from_literal(f, lit, strlen(lit), &A, &v, &err) != 0) {
        fprintf(stderr, "pool value %s: %s\n", lit, err.msg);
        REQUIRE(0);
    }
    if (v.type == FLOE_TYPE_STRING) { /* the literal's bytes borrow lit */
        v.v.bytes.p = floe_arena_memdup(&A, v.v.bytes.n ? v.v.bytes.p : (const uint8_t *)"",
                                        v.v.bytes.n + 1);
        REQUIRE(v.v.bytes.p != NULL);
    }
    return v;
}

typedef struct row {
    floe_value v[NCOLS + 1];
} row;

static int get(void *ctx, int32_t id, floe_value *out) {
    const row *r = ctx;
    if (id < 1 || id > NCOLS)
        return -1;
    *out = r->v[id];
    return 0;
}

static row random_row(void) {
    row r;
    for (int c = 1; c <= NCOLS; c++) {
        const floe_field *f = floe_schema_find_id(S, c);
        if (harness_rndn(5) == 0) {
            r.v[c] = floe_value_null(f->type);
            if (f->type == FLOE_TYPE_DECIMAL) {
                r.v[c].v.dec.precision = 9;
                r.v[c].v.dec.scale = 2;
            }
        } else {
            r.v[c] = value(c, POOLS[c].text[harness_rndn(POOLS[c].n)]);
        }
    }
    return r;
}

/* ---- filters ---------------------------------------------------------------------- */

static const char *COLNAMES[] = {NULL, "x", "n", "s", "dec", "t", "f", "k"};

static void gen_pred(floe_buf *b) {
    int col = 1 + (int)harness_rndn(NCOLS);
    const char *name = COLNAMES[col];
    char lit[128], lit2[128];
    literal(col, POOLS[col].text[harness_rndn(POOLS[col].n)], lit, sizeof lit);
    literal(col, POOLS[col].text[harness_rndn(POOLS[col].n)], lit2, sizeof lit2);
    static const char *ops[] = {"=", "!=", "<", "<=", ">", ">="};
    switch (harness_rndn(10)) {
    case 0: floe_buf_printf(b, "%s IS NULL", name); break;
    case 1: floe_buf_printf(b, "%s IS NOT NULL", name); break;
    case 2: floe_buf_printf(b, "%s IN (%s, %s)", name, lit, lit2); break;
    case 3: floe_buf_printf(b, "%s NOT IN (%s, %s)", name, lit, lit2); break;
    case 4:
        if (col == 3) {
            static const char *pre[] = {"a", "ab", "aaaaaaaaaaaaaaaaaaaa", "\xc3\xa9", "z", ""};
            floe_buf_printf(b, "s %sLIKE '%s%%'", harness_rndn(3) ? "" : "NOT ",
                            pre[harness_rndn(6)]);
            break;
        }
        /* fall through */
    default: floe_buf_printf(b, "%s %s %s", name, ops[harness_rndn(6)], lit); break;
    }
}

static void gen_expr(floe_buf *b, int depth) {
    size_t k = depth >= 3 ? 0 : harness_rndn(6);
    if (k <= 2) {
        gen_pred(b);
    } else if (k == 3) {
        floe_buf_printf(b, "NOT (");
        gen_expr(b, depth + 1);
        floe_buf_printf(b, ")");
    } else {
        floe_buf_printf(b, "(");
        gen_expr(b, depth + 1);
        floe_buf_printf(b, k == 4 ? ") AND (" : ") OR (");
        gen_expr(b, depth + 1);
        floe_buf_printf(b, ")");
    }
}

/* ---- metrics of a file ------------------------------------------------------------ */

enum variant { V_FLOE, V_IEEE, V_NO_NAN_COUNTS, V_NO_NULL_COUNTS, V_N };

static bool is_nan(const floe_value *v) {
    return (v->type == FLOE_TYPE_DOUBLE && isnan(v->v.d)) ||
           (v->type == FLOE_TYPE_FLOAT && isnan(v->v.f));
}

/* PLAIN bytes of v (as the writer's file info holds them). */
static void plain(const floe_value *v, uint8_t *out, size_t *n) {
    switch (v->type) {
    case FLOE_TYPE_DOUBLE: memcpy(out, &v->v.d, 8); *n = 8; break;
    case FLOE_TYPE_FLOAT: memcpy(out, &v->v.f, 4); *n = 4; break;
    case FLOE_TYPE_DECIMAL: floe_store_le32(out, (uint32_t)(int32_t)v->v.dec.unscaled); *n = 4; break;
    case FLOE_TYPE_INT: floe_store_le32(out, (uint32_t)v->v.i32); *n = 4; break;
    case FLOE_TYPE_STRING: memcpy(out, v->v.bytes.p, v->v.bytes.n); *n = v->v.bytes.n; break;
    default: floe_store_le64(out, (uint64_t)v->v.i64); *n = 8; break;
    }
}

/* IEEE comparison for floats (-0.0 == +0.0), the value order for everything else. */
static int cmp_ieee(const floe_value *a, const floe_value *b) {
    if (a->type == FLOE_TYPE_DOUBLE)
        return (a->v.d > b->v.d) - (a->v.d < b->v.d);
    if (a->type == FLOE_TYPE_FLOAT)
        return (a->v.f > b->v.f) - (a->v.f < b->v.f);
    return floe_value_compare(a, b);
}

static void file_metrics(const row *rows, size_t nrows, enum variant var, floe_data_file *df,
                         floe_arena *a) {
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    floe_pq_column_info cols[NCOLS];
    memset(cols, 0, sizeof cols);
    uint8_t lo[NCOLS][64], hi[NCOLS][64];
    fi.record_count = (int64_t)nrows;
    fi.file_size_in_bytes = 100;
    fi.columns = cols;
    fi.ncolumns = NCOLS;
    for (int c = 1; c <= NCOLS; c++) {
        floe_pq_column_info *ci = &cols[c - 1];
        ci->field = floe_schema_find_id(S, c);
        ci->field_id = c;
        ci->value_count = (int64_t)nrows;
        ci->has_nan_count = c == 1 || c == 6;
        const floe_value *mn = NULL, *mx = NULL;
        for (size_t i = 0; i < nrows; i++) {
            const floe_value *v = &rows[i].v[c];
            if (v->is_null) {
                ci->null_value_count++;
                continue;
            }
            if (is_nan(v)) {
                ci->nan_value_count++;
                continue;
            }
            if (var == V_IEEE) {
                if (!mn || cmp_ieee(v, mn) < 0)
                    mn = v;
                if (!mx || cmp_ieee(v, mx) > 0)
                    mx = v;
            } else {
                if (!mn || floe_value_compare(v, mn) < 0)
                    mn = v;
                if (!mx || floe_value_compare(v, mx) > 0)
                    mx = v;
            }
        }
        if (!mn)
            continue;
        floe_value l = *mn, h = *mx;
        if (var != V_IEEE) { /* floe's writer: zero bounds as -0.0 and +0.0 */
            if (l.type == FLOE_TYPE_DOUBLE && l.v.d == 0)
                l.v.d = -0.0;
            if (h.type == FLOE_TYPE_DOUBLE && h.v.d == 0)
                h.v.d = 0.0;
            if (l.type == FLOE_TYPE_FLOAT && l.v.f == 0)
                l.v.f = -0.0f;
            if (h.type == FLOE_TYPE_FLOAT && h.v.f == 0)
                h.v.f = 0.0f;
        }
        plain(&l, lo[c - 1], &ci->lower_len);
        plain(&h, hi[c - 1], &ci->upper_len);
        ci->lower_bound = lo[c - 1];
        ci->upper_bound = hi[c - 1];
        ci->has_bounds = true;
    }
    floe_error err;
    memset(df, 0, sizeof *df);
    REQUIRE_OK(floe_data_file_from_parquet(&fi, NULL, a, df, &err), err);
    if (var == V_NO_NAN_COUNTS)
        df->nan_value_counts.present = false;
    if (var == V_NO_NULL_COUNTS)
        df->null_value_counts.present = false;
}

static char *expr_text(floe_buf *b) {
    floe_buf_append_byte(b, 0);
    return (char *)b->data;
}

/* Files of 1-5 rows under every metrics variant. */
TEST(test_file_metrics_never_drop_a_match) {
    floe_error err;
    int64_t checks = 0, pruned = 0, filters = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int iter = 0; iter < 3000; iter++) {
        floe_arena fa;
        floe_arena_init(&fa, 4096);
        floe_buf_reset(&b);
        gen_expr(&b, 0);
        const char *text = expr_text(&b);
        floe_expr *e = NULL;
        if (floe_expr_parse(S, text, &fa, &e, &err) != 0) {
            fprintf(stderr, "filter %s: %s\n", text, err.msg);
            CHECK(0);
            floe_arena_reset(&fa);
            continue;
        }
        filters++;
        const floe_expr *p = e; /* rows and pruning evaluate one tree */
        for (int f = 0; f < 8; f++) {
            row rows[5];
            size_t nrows = 1 + harness_rndn(5);
            for (size_t i = 0; i < nrows; i++)
                rows[i] = random_row();
            bool match = false;
            for (size_t i = 0; i < nrows; i++)
                match |= floe_expr_eval_row(e, get, &rows[i]) == 1;
            for (int var = 0; var < V_N; var++) {
                floe_data_file df;
                file_metrics(rows, nrows, (enum variant)var, &df, &fa);
                bool may = floe_expr_file_may_match(p, S, &df);
                checks++;
                if (!may)
                    pruned++;
                if (match && !may) {
                    fprintf(stderr, "file pruned but a row matches (variant %d): %s\n", var,
                            text);
                    if (getenv("PRUNE_DEBUG"))
                        for (size_t i = 0; i < nrows; i++) {
                            floe_buf t;
                            floe_buf_init(&t, 0);
                            for (int c = 1; c <= NCOLS; c++) {
                                floe_sv_to_canonical(&rows[i].v[c], &t);
                                floe_buf_append_byte(&t, ' ');
                            }
                            fprintf(stderr, "  row %zu: %.*s\n", i, (int)t.len, (char *)t.data);
                            floe_buf_free(&t);
                        }
                    CHECK(0);
                }
            }
        }
        floe_arena_reset(&fa);
    }
    floe_buf_free(&b);
    fprintf(stderr, "file metrics: %lld filters, %lld checks, %lld pruned\n",
            (long long)filters, (long long)checks, (long long)pruned);
    CHECK(pruned > checks / 10);
}

/* The parser pushes NOT down to the predicates; each row must evaluate NOT (F) to the
 * three-valued negation of F (NaN, null and NOT LIKE included). */
TEST(test_negation_is_exact_on_rows) {
    floe_error err;
    floe_buf b, nb;
    floe_buf_init(&b, 0);
    floe_buf_init(&nb, 0);
    int64_t checks = 0;
    for (int iter = 0; iter < 3000; iter++) {
        floe_arena fa;
        floe_arena_init(&fa, 4096);
        floe_buf_reset(&b);
        gen_expr(&b, 0);
        const char *text = expr_text(&b);
        floe_buf_reset(&nb);
        floe_buf_printf(&nb, "NOT (%s)", text);
        const char *ntext = expr_text(&nb);
        floe_expr *e = NULL, *ne = NULL;
        REQUIRE_OK(floe_expr_parse(S, text, &fa, &e, &err), err);
        REQUIRE_OK(floe_expr_parse(S, ntext, &fa, &ne, &err), err);
        for (int i = 0; i < 8; i++) {
            row r = random_row();
            int x = floe_expr_eval_row(e, get, &r), y = floe_expr_eval_row(ne, get, &r);
            checks++;
            if (y != (x < 0 ? -1 : !x)) {
                fprintf(stderr, "%s: %d, %s: %d\n", text, x, ntext, y);
                CHECK(0);
            }
        }
        floe_arena_reset(&fa);
    }
    floe_buf_free(&b);
    floe_buf_free(&nb);
    CHECK(checks > 0);
}

/* Partition tuples of single-row files and manifest summaries of groups of them. */
TEST(test_partitions_never_drop_a_match) {
    static const char *specs[] = {"x, truncate(3, s), day(t), bucket(4, n), dec, f, k",
                                  ("hour(t), truncate(10, n), s, bucket(3, s), bucket(5, dec), "
                                   "truncate(4, k)"),
                                  "month(t), truncate(2, dec), n, truncate(1, s), bucket(2, k)",
                                  "year(t), bucket(2, t), truncate(3, k)"};
    floe_error err;
    floe_partition_spec *spec = NULL;
    const char *dir = harness_tmpdir();
    int64_t checks = 0, pruned_files = 0, manifests = 0, pruned_manifests = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int iter = 0; iter < 400; iter++) {
        if (iter % 100 == 0) {
            floe_partition_spec_free(spec);
            spec = NULL;
            REQUIRE_OK(floe_partition_spec_parse(S, specs[iter / 100], 0, 0, &spec, &err), err);
        }
        floe_arena fa;
        floe_arena_init(&fa, 4096);
        enum { NF = 6 };
        row rows[NF];
        floe_data_file files[NF];
        char path[4200];
        snprintf(path, sizeof path, "%s/m%d.avro", dir, iter);
        floe_manifest_write_options mo;
        floe_manifest_write_options_init(&mo);
        mo.schema = S;
        mo.spec = spec;
        floe_manifest_writer *w = NULL;
        REQUIRE_OK(floe_manifest_writer_open(NULL, path, &mo, &w, &err), err);
        for (int i = 0; i < NF; i++) {
            rows[i] = random_row();
            file_metrics(&rows[i], 1, V_FLOE, &files[i], &fa);
            floe_value src[16], *tuple = floe_arena_alloc(&fa, spec->nfields * sizeof *tuple);
            REQUIRE(tuple != NULL);
            for (size_t k = 0; k < spec->nfields; k++)
                src[k] = rows[i].v[spec->fields[k].source_id];
            REQUIRE_OK(floe_partition_spec_tuple(spec, src, tuple, &err), err);
            char name[64];
            snprintf(name, sizeof name, "f%d.parquet", i);
            files[i].file_path = floe_arena_strdup(&fa, name);
            files[i].content = FLOE_CONTENT_DATA;
            files[i].partition = tuple;
            files[i].npartition = spec->nfields;
            REQUIRE_OK(floe_manifest_writer_add(w, &files[i], -1, &err), err);
        }
        floe_output_options oo = {.fsync = false};
        floe_manifest_file mf;
        REQUIRE_OK(floe_manifest_writer_close(w, &oo, &fa, &mf, &err), err);
        for (int q = 0; q < 10; q++) {
            floe_buf_reset(&b);
            gen_expr(&b, 0);
            const char *text = expr_text(&b);
            floe_expr *e = NULL;
            REQUIRE_OK(floe_expr_parse(S, text, &fa, &e, &err), err);
            const floe_expr *p = e; /* rows and pruning evaluate one tree */
            bool any = false;
            for (int i = 0; i < NF; i++) {
                bool match = floe_expr_eval_row(e, get, &rows[i]) == 1;
                any |= match;
                bool may = floe_expr_partition_may_match(p, spec, files[i].partition,
                                                         files[i].npartition);
                checks++;
                if (!may)
                    pruned_files++;
                if (match && !may) {
                    fprintf(stderr, "partition pruned but its row matches: %s\n", text);
                    CHECK(0);
                }
            }
            bool mmay = floe_expr_manifest_may_match(p, spec, &mf);
            manifests++;
            if (!mmay)
                pruned_manifests++;
            if (any && !mmay) {
                fprintf(stderr, "manifest pruned but a row matches: %s\n", text);
                CHECK(0);
            }
        }
        floe_arena_reset(&fa);
    }
    floe_buf_free(&b);
    floe_partition_spec_free(spec);
    fprintf(stderr, "partitions: %lld tuple checks, %lld pruned; %lld manifest checks, %lld "
            "pruned\n", (long long)checks, (long long)pruned_files, (long long)manifests,
            (long long)pruned_manifests);
    CHECK(pruned_files > checks / 10);
    CHECK(pruned_manifests > manifests / 20);
}

/* The cases found by the randomized checks, spelled out. */
TEST(test_nan_and_zero_cases) {
    floe_error err;
    floe_arena fa;
    floe_arena_init(&fa, 4096);
    row r[2];
    for (int c = 1; c <= NCOLS; c++)
        r[0].v[c] = r[1].v[c] = floe_value_null(floe_schema_find_id(S, c)->type);
    r[0].v[1] = floe_value_double(1);
    r[1].v[1] = floe_value_double(NAN);
    floe_data_file df;
    file_metrics(r, 2, V_FLOE, &df, &fa);
    /* NOT (x < 5) holds for NaN: the file must stay although its bound is 1 */
    floe_expr *e = NULL;
    REQUIRE_OK(floe_expr_parse(S, "NOT (x < 5)", &fa, &e, &err), err);
    CHECK_EQ_INT(floe_expr_eval_row(e, get, &r[1]), 1);
    CHECK(floe_expr_file_may_match(e, S, &df));
    /* x != NaN holds for every non-null value, NaN count 0 or not */
    r[1].v[1] = floe_value_double(2);
    file_metrics(r, 2, V_FLOE, &df, &fa);
    REQUIRE_OK(floe_expr_parse(S, "x != NaN", &fa, &e, &err), err);
    CHECK_EQ_INT(floe_expr_eval_row(e, get, &r[0]), 1);
    CHECK(floe_expr_file_may_match(e, S, &df));
    /* a writer that took +0.0 as the minimum of a file holding -0.0 */
    r[0].v[1] = floe_value_double(0.0);
    r[1].v[1] = floe_value_double(-0.0);
    file_metrics(r, 2, V_IEEE, &df, &fa);
    REQUIRE_OK(floe_expr_parse(S, "x = -0.0", &fa, &e, &err), err);
    CHECK_EQ_INT(floe_expr_eval_row(e, get, &r[1]), 1);
    CHECK(floe_expr_file_may_match(e, S, &df));
    floe_arena_reset(&fa);
}

/* A timestamptz literal with an offset names the instant: it is converted to UTC, in
 * every form ingestion takes ("+HH:MM", "+HHMM", "+HH"); an offset past 23:59 is refused. */
TEST(test_time_literals_with_offsets) {
    static const char *same[][2] = {
        {"'1969-12-15T12:00:00-08:00'", "'1969-12-15T20:00:00Z'"},
        {"'1969-12-16T05:00:00+0800'", "'1969-12-15T21:00:00Z'"},
        {"'2026-10-06T14:00:00.5+02'", "'2026-10-06T12:00:00.5Z'"},
        {"'1970-01-01T00:00:00-00:00'", "'1970-01-01T00:00:00Z'"},
        {"'2000-01-01 00:30:00+01:00'", "'1999-12-31T23:30:00Z'"},
    };
    const floe_field *f = floe_schema_find_id(S, 5);
    floe_error err;
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        floe_value a, b;
        REQUIRE_OK(floe_sv_from_literal(f, same[i][0], strlen(same[i][0]), &A, &a, &err), err);
        REQUIRE_OK(floe_sv_from_literal(f, same[i][1], strlen(same[i][1]), &A, &b, &err), err);
        CHECK_EQ_INT(a.v.i64, b.v.i64);
    }
    static const char *bad[] = {"'1970-01-01T00:00:00+24:00'", "'1970-01-01T00:00:00+0160'",
                                "'1970-01-01T00:00:00+1'", "'1970-01-01T00:00:00+01:0'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        floe_value v;
        CHECK(floe_sv_from_literal(f, bad[i], strlen(bad[i]), &A, &v, &err) != 0);
    }
}

int main(void) {
    harness_rng_seed(0x9e3779b97f4a7c15ull);
    floe_error err;
    floe_schema *s = NULL;
    if (floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err) != 0) {
        fprintf(stderr, "schema: %s\n", err.msg);
        return 1;
    }
    S = s;
    floe_arena_init(&A, 4096);
    RUN(test_nan_and_zero_cases);
    RUN(test_time_literals_with_offsets);
    RUN(test_file_metrics_never_drop_a_match);
    RUN(test_negation_is_exact_on_rows);
    RUN(test_partitions_never_drop_a_match);
    floe_arena_reset(&A);
    floe_schema_free(s);
    return harness_finish();
}
