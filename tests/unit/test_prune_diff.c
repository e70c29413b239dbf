/*
 * test_prune_diff.c - a scan with pruning gives exactly the rows of the same scan without
 * it (floe scan --where F versus floe scan --where F --no-prune), for random filters over
 * real tables.
 *
 * Per table: every row is read once, file by file of the unpruned plan (deletes
 * applied), and literals are sampled per primitive column (top-level or inside structs)
 * from those rows, plus the extremes of each type. For each random filter (NOT, AND, OR,
 * every comparison, IN, NOT IN, LIKE 'prefix%', IS [NOT] NULL) the row filter picks the
 * matching rows and so the files holding them; the pruned plan must hold each of those
 * files with the same delete files as the unpruned plan. Pruning happens only in the
 * plan (manifests, partition tuples, column metrics) and the reader applies the same
 * row filter either way, so that is the pruned scan giving the unpruned rows. The first
 * FULL_CHECKS filters of a table are also read both ways and compared row for row with
 * the row filter's choice, which ties the in-memory evaluation to the scans' own.
 *
 * Tables: FLOE_PRUNE_TABLES lists them (';'-separated: NS.NAME through the catalog the
 * environment configures, or a table folder / metadata file; NAME@N for N filters on
 * that one), as tests/integration/bounds_differential.sh does for files from DuckDB,
 * arrow-rs and floe, and tables written by floe convert, serve and rewrite and the
 * conformance tables. Without it the program builds two tables of its own (floe gen
 * events, NDJSON appends, partitioned and not). FLOE_PRUNE_FILTERS (default 300) filters
 * per table, FLOE_PRUNE_SEED (default 1). Prints per table how many filters pruned
 * something.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/gen.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"
#include "iceberg/scan_internal.h"

#define FULL_CHECKS 6
#define MAX_LITS 48

typedef struct column {
    const floe_field *f;
    char path[512];           /* dotted path below the root */
    const char *names[16];    /* the path's parts (borrowed from the schema) */
    size_t depth;
    char *lits[MAX_LITS];     /* literal texts as the filter language takes them */
    size_t nlits;
} column;

typedef struct table_row {
    char *line;               /* canonical */
    size_t task;              /* the task of the unpruned plan it was read from */
} table_row;

typedef struct table_run {
    const char *label;
    floe_table *t;
    const floe_schema *schema;
    column *cols;
    size_t ncols;
    table_row *rows;                /* every row, sorted by line */
    json_t **json;
    size_t nrows;
    floe_value *vals;         /* nrows x ncols, parsed once for the row filter */
    floe_scan_plan *all;      /* the unpruned plan without filter */
    size_t *by_path;          /* its task indices sorted by file path */
    floe_arena arena;         /* values parsed for the row filter */
} table_run;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split text into lines (in place), sorted. */
static char **split_lines(char *text, size_t *n) {
    size_t cap = 64, k = 0;
    char **v = malloc(cap * sizeof *v);
    REQUIRE(v != NULL);
    char *save = NULL;
    for (char *s = strtok_r(text, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
        if (k == cap) {
            char **nv = realloc(v, (cap *= 2) * sizeof *v);
            REQUIRE(nv != NULL);
            v = nv;
        }
        v[k++] = s;
    }
    qsort(v, k, sizeof *v, cmp_str);
    *n = k;
    return v;
}

/* An unpruned scan with where, into buf (canonical lines). */
static int scan_unpruned(table_run *r, const char *where, floe_buf *buf, floe_error *err) {
    floe_scan_options so = {.where = where, .no_partition_pruning = true,
                            .no_metrics_pruning = true};
    floe_scan_plan *p = NULL;
    floe_buf_reset(buf);
    int rc = floe_scan_plan_files(r->t, &so, &p, err);
    if (rc < 0)
        return rc;
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
    rc = floe_scan_read(r->t, p, &ro, harness_buf_sink, buf, NULL, err);
    floe_scan_plan_free(p);
    if (rc == 0)
        rc = floe_buf_append_byte(buf, 0);
    return rc;
}

/* ---- columns and literals ---------------------------------------------------------------- */

static bool filterable(const floe_field *f) {
    if (floe_type_is_nested(f->type))
        return false;
    for (const floe_field *q = f->parent; q; q = q->parent)
        if (q->type == FLOE_TYPE_LIST || q->type == FLOE_TYPE_MAP)
            return false;
    return true;
}

/* The row's JSON value of column c (NULL for null or absent). */
static json_t *cell(const column *c, json_t *row) {
    json_t *v = row;
    for (size_t i = 0; i < c->depth && v; i++)
        v = json_is_object(v) ? json_object_get(v, c->names[i]) : NULL;
    return v && !json_is_null(v) ? v : NULL;
}

/* A JSON scalar as a literal of the filter language: strings quoted ('' for '). */
static char *literal_of(const column *c, json_t *v) {
    floe_buf b;
    floe_buf_init(&b, 0);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        bool numeric_text = c->f->type == FLOE_TYPE_DOUBLE || c->f->type == FLOE_TYPE_FLOAT;
        if (numeric_text) { /* NaN, Infinity, -Infinity */
            floe_buf_append(&b, s, n);
        } else {
            floe_buf_append_byte(&b, '\'');
            for (size_t i = 0; i < n; i++) {
                if (s[i] == '\'')
                    floe_buf_append_byte(&b, '\'');
                floe_buf_append_byte(&b, (uint8_t)s[i]);
            }
            floe_buf_append_byte(&b, '\'');
        }
    } else {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        if (t) {
            floe_buf_append(&b, t, strlen(t));
            free(t);
        }
    }
    floe_buf_append_byte(&b, 0);
    return (char *)b.data;
}

static void add_lit(column *c, char *lit) {
    for (size_t i = 0; i < c->nlits; i++)
        if (!strcmp(c->lits[i], lit)) {
            floe_free(lit);
            return;
        }
    if (c->nlits < MAX_LITS) {
        c->lits[c->nlits++] = lit;
        return;
    }
    size_t k = harness_rndn(MAX_LITS * 4);
    if (k < MAX_LITS) {
        floe_free(c->lits[k]);
        c->lits[k] = lit;
    } else {
        floe_free(lit);
    }
}

static void add_text(column *c, const char *s) {
    char *d = floe_strdup(s);
    REQUIRE(d != NULL);
    add_lit(c, d);
}

/* The extremes and usual suspects of each type. */
static void add_fixed_lits(column *c) {
    switch (c->f->type) {
    case FLOE_TYPE_INT:
        add_text(c, "-2147483648"); add_text(c, "2147483647"); add_text(c, "0"); add_text(c, "-1");
        break;
    case FLOE_TYPE_LONG:
        add_text(c, "-9223372036854775808"); add_text(c, "9223372036854775807");
        add_text(c, "0"); add_text(c, "-1");
        break;
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE:
        add_text(c, "NaN"); add_text(c, "-0.0"); add_text(c, "0"); add_text(c, "Infinity");
        add_text(c, "-Infinity");
        break;
    case FLOE_TYPE_STRING:
        add_text(c, "''"); add_text(c, "'a'"); add_text(c, "'\xc3\xa9'"); add_text(c, "'~'");
        break;
    case FLOE_TYPE_DATE: add_text(c, "'1970-01-01'"); add_text(c, "'1969-12-31'"); break;
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        add_text(c, "'1970-01-01T00:00:00Z'"); add_text(c, "'1969-12-31T23:59:59.999999Z'");
        break;
    default: break;
    }
}

static void collect_columns(table_run *r) {
    const floe_schema *s = r->schema;
    r->cols = calloc(s->nleaves + 1, sizeof *r->cols);
    REQUIRE(r->cols != NULL);
    for (size_t i = 0; i < s->nleaves; i++) {
        const floe_field *f = s->leaves[i];
        if (!filterable(f))
            continue;
        column *c = &r->cols[r->ncols];
        const floe_field *chain[16];
        size_t d = 0;
        for (const floe_field *q = f; q && d < 16; q = q->parent)
            chain[d++] = q;
        if (d >= 16)
            continue;
        c->f = f;
        c->depth = d;
        size_t at = 0;
        bool plain = true;
        for (size_t k = 0; k < d; k++) {
            c->names[k] = chain[d - 1 - k]->name;
            for (const char *p = c->names[k]; *p; p++)
                plain &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                         (*p >= '0' && *p <= '9') || *p == '_';
            at += (size_t)snprintf(c->path + at, sizeof c->path - at, "%s%s", k ? "." : "",
                                   c->names[k]);
        }
        if (!plain || at >= sizeof c->path)
            continue; /* names the filter language cannot spell without ambiguity */
        r->ncols++;
        add_fixed_lits(c);
    }
    for (size_t i = 0; i < r->nrows; i++)
        for (size_t k = 0; k < r->ncols; k++) {
            column *c = &r->cols[k];
            json_t *v = cell(c, r->json[i]);
            if (!v || harness_rndn(4) != 0)
                continue;
            add_lit(c, literal_of(c, v));
            if (json_is_integer(v) && c->f->type != FLOE_TYPE_BOOLEAN) {
                char t[64];
                long long x = (long long)json_integer_value(v);
                if (x < INT32_MAX && x > INT32_MIN) {
                    snprintf(t, sizeof t, "%lld", x + 1);
                    add_text(c, t);
                    snprintf(t, sizeof t, "%lld", x - 1);
                    add_text(c, t);
                }
            }
        }
}

/* ---- filters ------------------------------------------------------------------------------ */

static void gen_pred(table_run *r, floe_buf *b) {
    column *c = &r->cols[harness_rndn(r->ncols)];
    const char *l1 = c->nlits ? c->lits[harness_rndn(c->nlits)] : "0";
    const char *l2 = c->nlits ? c->lits[harness_rndn(c->nlits)] : "0";
    static const char *ops[] = {"=", "!=", "<", "<=", ">", ">="};
    size_t k = harness_rndn(12);
    if (c->f->type == FLOE_TYPE_BOOLEAN && k >= 4)
        k = k % 4;
    switch (k) {
    case 0: floe_buf_printf(b, "%s IS NULL", c->path); return;
    case 1: floe_buf_printf(b, "%s IS NOT NULL", c->path); return;
    case 2: floe_buf_printf(b, "%s IN (%s, %s)", c->path, l1, l2); return;
    case 3: floe_buf_printf(b, "%s NOT IN (%s, %s)", c->path, l1, l2); return;
    case 4:
        if (c->f->type == FLOE_TYPE_STRING && l1[0] == '\'') {
            /* a prefix of a sampled value: 0-4 bytes (never inside a '' escape) */
            size_t n = strlen(l1) - 2, cut = harness_rndn(5);
            if (cut > n)
                cut = n;
            while (cut > 0 && l1[cut] == '\'')
                cut--;
            floe_buf_printf(b, "%s %sLIKE '%.*s%%'", c->path, harness_rndn(3) ? "" : "NOT ",
                            (int)cut, l1 + 1);
            return;
        }
        /* fall through */
    default: floe_buf_printf(b, "%s %s %s", c->path, ops[harness_rndn(6)], l1); return;
    }
}

static void gen_expr(table_run *r, floe_buf *b, int depth) {
    size_t k = depth >= 3 ? 0 : harness_rndn(7);
    if (k <= 2) {
        gen_pred(r, b);
    } else if (k == 3) {
        floe_buf_printf(b, "NOT (");
        gen_expr(r, b, depth + 1);
        floe_buf_printf(b, ")");
    } else {
        floe_buf_printf(b, "(");
        gen_expr(r, b, depth + 1);
        floe_buf_printf(b, k <= 4 ? ") OR (" : ") AND (");
        gen_expr(r, b, depth + 1);
        floe_buf_printf(b, ")");
    }
}

/* ---- the row filter on the full read ------------------------------------------------------- */

typedef struct row_ctx {
    table_run *r;
    size_t i;
} row_ctx;

static int row_value(void *ctx, int32_t id, floe_value *out) {
    row_ctx *x = ctx;
    for (size_t k = 0; k < x->r->ncols; k++)
        if (x->r->cols[k].f->id == id) {
            *out = x->r->vals[x->i * x->r->ncols + k];
            return 0;
        }
    return -1;
}

/* Column c's value in row json, parsed as the row filter takes it (bytes in the arena). */
static floe_value parse_cell(table_run *r, const column *c, json_t *row) {
    json_t *v = cell(c, row);
    if (!v)
        return floe_value_null(c->f->type);
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    REQUIRE(t != NULL);
    floe_value out;
    floe_error err;
    floe_error_clear(&err);
    size_t n = strlen(t);
    REQUIRE_OK(floe_sv_from_canonical(c->f, t, n, &r->arena, &out, &err), err);
    if ((out.type == FLOE_TYPE_STRING || out.type == FLOE_TYPE_BINARY ||
         out.type == FLOE_TYPE_FIXED) &&
        out.v.bytes.p >= (const uint8_t *)t && out.v.bytes.p <= (const uint8_t *)t + n) {
        const uint8_t *cp = floe_arena_memdup(&r->arena, out.v.bytes.n ? out.v.bytes.p
                                                                      : (const uint8_t *)"",
                                              out.v.bytes.n + 1);
        REQUIRE(cp != NULL);
        out.v.bytes.p = cp;
    }
    free(t);
    return out;
}

/* ---- one table ------------------------------------------------------------------------------ */

static int cmp_row(const void *a, const void *b) {
    return strcmp(((const table_row *)a)->line, ((const table_row *)b)->line);
}

static const floe_scan_plan *sort_plan;
static int cmp_task_path(const void *a, const void *b) {
    return strcmp(sort_plan->tasks[*(const size_t *)a].file->file_path,
                  sort_plan->tasks[*(const size_t *)b].file->file_path);
}

/* The unpruned plan's task index of a file path, or -1. */
static long task_of_path(const table_run *r, const char *path) {
    size_t lo = 0, hi = r->all->ntasks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->all->tasks[r->by_path[mid]].file->file_path, path);
        if (c == 0)
            return (long)r->by_path[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Every row of the table, task by task of the unpruned plan (deletes applied). */
static int read_rows(table_run *r, floe_buf **bufs, floe_error *err) {
    floe_scan_options so = {.no_partition_pruning = true, .no_metrics_pruning = true};
    int rc = floe_scan_plan_files(r->t, &so, &r->all, err);
    if (rc < 0)
        return rc;
    size_t nt = r->all->ntasks;
    *bufs = calloc(nt + 1, sizeof **bufs);
    r->by_path = calloc(nt + 1, sizeof *r->by_path);
    REQUIRE(*bufs != NULL && r->by_path != NULL);
    size_t cap = 1024;
    r->rows = malloc(cap * sizeof *r->rows);
    REQUIRE(r->rows != NULL);
    for (size_t k = 0; k < nt; k++) {
        r->by_path[k] = k;
        floe_scan_plan one = *r->all;
        one.tasks = &r->all->tasks[k];
        one.ntasks = 1;
        floe_buf *b = &(*bufs)[k];
        floe_buf_init(b, 0);
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
        if ((rc = floe_scan_read(r->t, &one, &ro, harness_buf_sink, b, NULL, err)) < 0)
            return rc;
        REQUIRE(floe_buf_append_byte(b, 0) == 0);
        char *save = NULL;
        for (char *s = strtok_r((char *)b->data, "\n", &save); s;
             s = strtok_r(NULL, "\n", &save)) {
            if (r->nrows == cap) {
                table_row *nr = realloc(r->rows, (cap *= 2) * sizeof *nr);
                REQUIRE(nr != NULL);
                r->rows = nr;
            }
            r->rows[r->nrows++] = (table_row){s, k};
        }
    }
    qsort(r->rows, r->nrows, sizeof *r->rows, cmp_row);
    sort_plan = r->all;
    qsort(r->by_path, nt, sizeof *r->by_path, cmp_task_path);
    for (size_t k = 1; k < nt; k++)
        if (!strcmp(r->all->tasks[r->by_path[k]].file->file_path,
                    r->all->tasks[r->by_path[k - 1]].file->file_path)) {
            fprintf(stderr, "%s: file planned twice: %s\n", r->label,
                    r->all->tasks[r->by_path[k]].file->file_path);
            CHECK(0);
        }
    return 0;
}

/* The delete files of a pruned plan's task are those of the unpruned one. */
static bool same_deletes(const floe_scan_task *a, const floe_scan_task *b) {
    if (a->ndeletes != b->ndeletes)
        return false;
    for (size_t i = 0; i < a->ndeletes; i++) {
        bool found = false;
        for (size_t j = 0; j < b->ndeletes && !found; j++)
            found = !strcmp(a->deletes[i]->file_path, b->deletes[j]->file_path);
        if (!found)
            return false;
    }
    return true;
}

/* Sorted lines of a scan's output equal want? Prints the first differences. */
static bool same_rows(const table_run *r, const char *what, const char *where, floe_buf *got,
                      char **want, size_t nwant) {
    size_t ngot = 0;
    char **lines = split_lines((char *)got->data, &ngot);
    bool same = ngot == nwant;
    for (size_t i = 0; same && i < ngot; i++)
        same = !strcmp(lines[i], want[i]);
    if (!same) {
        fprintf(stderr, "%s: %s differs from the row filter on every row: %s\n  %zu rows, "
                "want %zu\n", r->label, what, where, ngot, nwant);
        for (size_t i = 0, j = 0, shown = 0; shown < 3 && (i < nwant || j < ngot);) {
            int c = i >= nwant ? 1 : j >= ngot ? -1 : strcmp(want[i], lines[j]);
            if (c < 0) {
                fprintf(stderr, "  missing: %.300s\n", want[i++]);
                shown++;
            } else if (c > 0) {
                fprintf(stderr, "  extra: %.300s\n", lines[j++]);
                shown++;
            } else {
                i++;
                j++;
            }
        }
    }
    free(lines);
    return same;
}

/* Tables over this many rows get few filters and the plan check only. */
#define BIG_ROWS 20000
#define BIG_FILTERS 30

/* Prune-check one table; false when it could not be read and optional is set. */
static bool run_table(table_run *r, int nfilters, bool optional) {
    floe_error err;
    floe_error_clear(&err);
    floe_buf got, full;
    floe_buf_init(&got, 0);
    floe_buf_init(&full, 0);
    floe_arena ea;
    floe_arena_init(&ea, 4096);
    floe_arena_init(&r->arena, 64 * 1024);
    floe_buf *bufs = NULL;
    if (read_rows(r, &bufs, &err) < 0) {
        if (!optional) {
            fprintf(stderr, "%s: %s\n", r->label, err.msg);
            CHECK(0);
        } else {
            printf("%s: skipped, floe cannot read it: %s\n", r->label, err.msg);
        }
        for (size_t k = 0; bufs && r->all && k < r->all->ntasks; k++)
            floe_buf_free(&bufs[k]);
        free(bufs);
        free(r->by_path);
        free(r->rows);
        floe_scan_plan_free(r->all);
        floe_arena_reset(&ea);
        floe_arena_reset(&r->arena);
        floe_buf_free(&got);
        floe_buf_free(&full);
        return false;
    }
    size_t nt = r->all->ntasks;
    int full_checks = FULL_CHECKS;
    if (r->nrows > BIG_ROWS) {
        full_checks = 0;
        if (nfilters > BIG_FILTERS)
            nfilters = BIG_FILTERS;
    }
    r->json = calloc(r->nrows + 1, sizeof *r->json);
    REQUIRE(r->json != NULL);
    for (size_t i = 0; i < r->nrows; i++) {
        json_error_t je;
        r->json[i] = json_loads(r->rows[i].line, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        REQUIRE(r->json[i] != NULL);
    }
    collect_columns(r);
    REQUIRE(r->ncols > 0);
    r->vals = calloc(r->nrows * r->ncols + 1, sizeof *r->vals);
    REQUIRE(r->vals != NULL);
    for (size_t i = 0; i < r->nrows; i++)
        for (size_t k = 0; k < r->ncols; k++)
            r->vals[i * r->ncols + k] = parse_cell(r, &r->cols[k], r->json[i]);
    int64_t pruned = 0, files_skipped = 0, manifests_skipped = 0, unparsable = 0, matched = 0;
    int64_t full_checked = 0, rows_compared = 0, files_needed = 0;
    floe_buf text;
    floe_buf_init(&text, 0);
    char **want = malloc((r->nrows + 1) * sizeof *want);
    bool *need = calloc(nt + 1, sizeof *need);
    bool *planned = calloc(nt + 1, sizeof *planned);
    REQUIRE(want != NULL && need != NULL && planned != NULL);
    for (int q = 0; q < nfilters; q++) {
        floe_buf_reset(&text);
        gen_expr(r, &text, 0);
        floe_buf_append_byte(&text, 0);
        const char *where = (const char *)text.data;
        floe_expr *e = NULL;
        floe_arena_reset(&ea);
        floe_arena_init(&ea, 4096);
        if (floe_expr_parse(r->schema, where, &ea, &e, &err) < 0) {
            unparsable++; /* a literal the column's type does not take */
            continue;
        }
        /* what the row filter keeps of every row, and the files those rows are in */
        size_t nwant = 0;
        memset(need, 0, nt * sizeof *need);
        memset(planned, 0, nt * sizeof *planned);
        for (size_t i = 0; i < r->nrows; i++) {
            row_ctx x = {r, i};
            if (floe_expr_eval_row(e, row_value, &x) == 1) {
                want[nwant++] = r->rows[i].line;
                need[r->rows[i].task] = true;
            }
        }
        /* the pruned plan holds every file with a matching row, with its deletes */
        floe_scan_options so = {.where = where};
        floe_scan_plan *p = NULL;
        if (floe_scan_plan_files(r->t, &so, &p, &err) < 0) {
            fprintf(stderr, "%s: filter %s: %s\n", r->label, where, err.msg);
            CHECK(0);
            continue;
        }
        for (size_t j = 0; j < p->ntasks; j++) {
            long k = task_of_path(r, p->tasks[j].file->file_path);
            if (k < 0 || planned[k]) {
                fprintf(stderr, "%s: %s: %s %s\n", r->label, where,
                        k < 0 ? "planned a file the unpruned plan lacks" : "planned twice",
                        p->tasks[j].file->file_path);
                CHECK(0);
                continue;
            }
            planned[k] = true;
            if (!same_deletes(&p->tasks[j], &r->all->tasks[k])) {
                fprintf(stderr, "%s: %s: %s planned with %zu delete files, unpruned %zu\n",
                        r->label, where, p->tasks[j].file->file_path, p->tasks[j].ndeletes,
                        r->all->tasks[k].ndeletes);
                CHECK(0);
            }
        }
        for (size_t k = 0; k < nt; k++) {
            files_needed += need[k];
            if (!need[k] || planned[k])
                continue;
            size_t i = 0;
            while (!(r->rows[i].task == k && floe_expr_eval_row(e, row_value,
                                                                &(row_ctx){r, i}) == 1))
                i++;
            fprintf(stderr, "%s: pruned scan loses rows: %s\n  pruned %s, which holds %.300s\n",
                    r->label, where, r->all->tasks[k].file->file_path, r->rows[i].line);
            CHECK(0);
        }
        if (full_checked < full_checks) {
            /* the scans themselves: pruned and --no-prune read the rows of the filter */
            full_checked++;
            floe_buf_reset(&got);
            floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
            REQUIRE_OK(floe_scan_read(r->t, p, &ro, harness_buf_sink, &got, NULL, &err), err);
            REQUIRE(floe_buf_append_byte(&got, 0) == 0);
            CHECK(same_rows(r, "pruned scan", where, &got, want, nwant));
            REQUIRE_OK(scan_unpruned(r, where, &full, &err), err);
            CHECK(same_rows(r, "--no-prune scan", where, &full, want, nwant));
        }
        floe_scan_stats st = p->stats;
        floe_scan_plan_free(p);
        rows_compared += (int64_t)nwant;
        matched += nwant > 0;
        int64_t skipped = st.files_skipped_partition + st.files_skipped_metrics +
                          st.manifests_skipped;
        pruned += skipped > 0;
        files_skipped += st.files_skipped_partition + st.files_skipped_metrics;
        manifests_skipped += st.manifests_skipped;
    }
    printf("%s: %zu rows in %zu files, %zu columns; %d filters (%lld not typed for their "
           "column), %lld pruned something (%lld files, %lld manifests skipped in all), %lld "
           "matched rows (%lld rows, %lld files holding them), %lld also read both ways\n",
           r->label, r->nrows, nt, r->ncols, nfilters, (long long)unparsable, (long long)pruned,
           (long long)files_skipped, (long long)manifests_skipped, (long long)matched,
           (long long)rows_compared, (long long)files_needed, (long long)full_checked);
    fflush(stdout);
    if (getenv("FLOE_PRUNE_REQUIRE_PRUNING"))
        CHECK(pruned > 0);
    CHECK(nfilters - unparsable >= nfilters / 4); /* most literals fit their column */
    free(want);
    free(need);
    free(planned);
    floe_buf_free(&text);
    for (size_t i = 0; i < r->nrows; i++)
        json_decref(r->json[i]);
    free(r->json);
    free(r->rows);
    free(r->vals);
    for (size_t k = 0; k < nt; k++)
        floe_buf_free(&bufs[k]);
    free(bufs);
    free(r->by_path);
    floe_scan_plan_free(r->all);
    for (size_t k = 0; k < r->ncols; k++)
        for (size_t i = 0; i < r->cols[k].nlits; i++)
            floe_free(r->cols[k].lits[i]);
    free(r->cols);
    floe_arena_reset(&ea);
    floe_arena_reset(&r->arena);
    floe_buf_free(&got);
    floe_buf_free(&full);
    return true;
}

/* run_table with the schema the table's scans read rows with. */
static bool run_table_with_schema(table_run *r, int nfilters, bool optional) {
    floe_error err;
    floe_error_clear(&err);
    floe_scan_plan *p = NULL;
    int rc = floe_scan_plan_files(r->t, NULL, &p, &err);
    if (rc < 0 && optional) {
        printf("%s: skipped, floe cannot plan it: %s\n", r->label, err.msg);
        return false;
    }
    REQUIRE_OK(rc, err);
    floe_schema *s = NULL;
    rc = floe_schema_parse(p->schema_json, strlen(p->schema_json), &s, &err);
    floe_scan_plan_free(p);
    REQUIRE_OK(rc, err);
    r->schema = s;
    bool ok = run_table(r, nfilters, optional);
    floe_schema_free(s);
    return ok;
}

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* FLOE_PRUNE_TABLES: the tables the integration test prepared. With FLOE_PRUNE_OPTIONAL
 * set, tables floe cannot open or read are skipped (printed), and at least
 * FLOE_PRUNE_OPTIONAL of them must be checked. */
static void listed_tables(const char *list) {
    int nfilters = env_int("FLOE_PRUNE_FILTERS", 300);
    int optional = env_int("FLOE_PRUNE_OPTIONAL", 0), checked = 0, listed = 0;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    char *copy = floe_strdup(list);
    REQUIRE(copy != NULL);
    char *save = NULL;
    for (char *ent = strtok_r(copy, ";", &save); ent; ent = strtok_r(NULL, ";", &save)) {
        while (*ent == ' ' || *ent == '\n')
            ent++;
        if (!*ent)
            continue;
        int n = nfilters;
        char *at = strrchr(ent, '@'); /* NAME@N: N filters for this one */
        if (at) {
            *at = 0;
            n = atoi(at + 1);
        }
        table_run r;
        memset(&r, 0, sizeof r);
        r.label = ent;
        listed++;
        if (strchr(ent, '/')) {
            int rc = floe_table_open_path(ent, NULL, &r.t, &err);
            if (rc < 0 && optional) {
                printf("%s: skipped, floe cannot open it: %s\n", ent, err.msg);
                continue;
            }
            REQUIRE_OK(rc, err);
        } else {
            if (!cat) {
                floe_catalog_config cfg;
                memset(&cfg, 0, sizeof cfg);
                REQUIRE_OK(floe_catalog_config_load(NULL, NULL, harness_getenv, NULL, &cfg, &err), err);
                int rc = floe_catalog_open(&cfg, &cat, &err);
                floe_catalog_config_reset(&cfg);
                REQUIRE_OK(rc, err);
            }
            const char *dot = strchr(ent, '.');
            REQUIRE(dot != NULL);
            char ns[256];
            snprintf(ns, sizeof ns, "%.*s", (int)(dot - ent), ent);
            REQUIRE_OK(floe_table_load(cat, ns, dot + 1, &r.t, &err), err);
        }
        checked += run_table_with_schema(&r, n, optional > 0);
        floe_table_close(r.t);
    }
    printf("%d of %d tables checked\n", checked, listed);
    CHECK(checked >= optional);
    floe_free(copy);
    floe_catalog_close(cat);
}

/* Without a list: floe gen events appended as NDJSON in several batches. */
static void own_tables(void) {
    int nfilters = env_int("FLOE_PRUNE_FILTERS", 150);
    size_t slen = 0;
    char *schema_json = harness_read_file(harness_source_path("tests/data/events.schema.json"),
                                          &slen);
    REQUIRE(schema_json != NULL);
    static const char *specs[] = {
        "[{\"source-id\":2,\"field-id\":1000,\"name\":\"event_type\",\"transform\":\"identity\"},"
        "{\"source-id\":3,\"field-id\":1001,\"name\":\"ts_hour\",\"transform\":\"hour\"},"
        "{\"source-id\":4,\"field-id\":1002,\"name\":\"user_bucket\",\"transform\":\"bucket[4]\"}]",
        NULL};
    for (int k = 0; k < 2; k++) {
        harness_table e;
        floe_kv props[] = {{"write.parquet.row-group-size-bytes", "16384"}};
        harness_table_open(&e, k ? "flat" : "parted", schema_json, specs[k], NULL, props, 1);
        floe_gen_opts go;
        floe_gen_opts_default(&go);
        go.seed = 40 + (uint64_t)k;
        go.rate = 0.5; /* a few hours of events */
        floe_gen *g = NULL;
        floe_error err;
        REQUIRE_OK(floe_gen_new(&go, &g, &err), err);
        floe_buf nd;
        floe_buf_init(&nd, 0);
        for (int batch = 0; batch < 6; batch++) {
            floe_buf_reset(&nd);
            for (int i = 0; i < 250; i++)
                REQUIRE_OK(floe_gen_next(g, &nd, NULL, &err), err);
            harness_table_append_ndjson(&e, batch, &nd);
        }
        floe_buf_free(&nd);
        floe_gen_free(g);
        table_run r;
        memset(&r, 0, sizeof r);
        r.label = k ? "gen events, unpartitioned" : "gen events, identity+hour+bucket";
        r.t = e.t;
        REQUIRE_OK(floe_table_refresh(e.t, &err), err);
        run_table_with_schema(&r, nfilters, false);
        harness_table_close(&e);
    }
    free(schema_json);
}

TEST(test_pruned_equals_unpruned) {
    const char *list = getenv("FLOE_PRUNE_TABLES");
    if (list && *list)
        listed_tables(list);
    else
        own_tables();
}

int main(void) {
    harness_rng_seed(0x9e3779b97f4a7c15ull ^ (uint64_t)env_int("FLOE_PRUNE_SEED", 1));
    RUN(test_pruned_equals_unpruned);
    return harness_finish();
}
