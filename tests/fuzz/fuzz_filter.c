/*
 * fuzz_filter.c - libFuzzer target for the --where language (src/common/filter.c) and the
 * two bindings of its tree: to a table schema (floe scan, rewrite, health) and to a
 * Parquet file's leaves (floe cat).
 *
 * Every input without a NUL byte is a filter text, used:
 *   - against a table schema with a column of every primitive type: a filter that parses
 *     and binds is evaluated on fixed rows (nulls, NaN, -0.0 among them), and NOT (F) must
 *     give every row the three-valued negation of F's result;
 *   - against a small Parquet file of the same columns (written at start-up, several row
 *     groups and pages): rows read with row-group and page pruning must be exactly the
 *     rows read without it;
 *   - as a literal of each date, time, timestamp and decimal column ("c >= 'input'", and
 *     "c >= input" when it is one word): the table and the file bindings both take it or
 *     both refuse it (both type it through common/literal.h).
 * Errors are expected; crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_filter/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "iceberg/scan_internal.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SCHEMA_JSON[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"l\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":6,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":7,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":8,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":9,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":10,\"name\":\"tn\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":11,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":12,\"name\":\"tm\",\"required\":false,\"type\":\"time\"}]}";
enum { NCOLS = 12, NROWS = 600 };

static floe_schema *schema;
static uint8_t *file;
static size_t file_len;

/* Row k's value of column c (1-based field id) as a floe_value; every 5th optional value
 * is null. */
static floe_value row_value(int k, int c) {
    static const char *strs[] = {"", "a", "ab", "b", "\xc3\xa9t\xc3\xa9", "z'z"};
    const floe_field *f = &schema->root.children[c - 1];
    if (c > 1 && (k + c) % 5 == 0)
        return floe_value_null(f->type);
    floe_value v = floe_value_null(f->type);
    v.is_null = false;
    int64_t x = (int64_t)(k * 7919 % 1000) - 500;
    switch (f->type) {
    case FLOE_TYPE_LONG: v.v.i64 = x * 1000003; break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE: v.v.i32 = (int32_t)x * 37; break;
    case FLOE_TYPE_DOUBLE: v.v.d = k % 11 == 0 ? NAN : k % 13 == 0 ? -0.0 : (double)x / 4; break;
    case FLOE_TYPE_FLOAT: v.v.f = k % 17 == 0 ? NAN : (float)x / 8; break;
    case FLOE_TYPE_STRING:
        v.v.bytes.p = (const uint8_t *)strs[k % 6];
        v.v.bytes.n = strlen(strs[k % 6]);
        break;
    case FLOE_TYPE_BOOLEAN: v.v.b = k % 3 == 0; break;
    case FLOE_TYPE_DECIMAL:
        v.v.dec.unscaled = x * 101;
        v.v.dec.scale = 2;
        v.v.dec.precision = 9;
        break;
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIME: v.v.i64 = (x + 500) * 86400000LL; break;
    case FLOE_TYPE_UUID: memset(v.v.uuid, 0x11 * (k % 6), 16); break;
    default: break;
    }
    return v;
}

static int get(void *ctx, int32_t field_id, floe_value *out) {
    *out = row_value(*(int *)ctx, field_id);
    return 0;
}

static void push(floe_colbuf *c, const floe_value *v) {
    if (v->is_null) {
        floe_colbuf_push_null(c, 0, 0);
        return;
    }
    switch (v->type) {
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIME: floe_colbuf_push_value(c, 0, &v->v.i64, 8); break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE: floe_colbuf_push_value(c, 0, &v->v.i32, 4); break;
    case FLOE_TYPE_DECIMAL: {
        int32_t d = (int32_t)v->v.dec.unscaled;
        floe_colbuf_push_value(c, 0, &d, 4);
        break;
    }
    case FLOE_TYPE_DOUBLE: floe_colbuf_push_value(c, 0, &v->v.d, 8); break;
    case FLOE_TYPE_FLOAT: floe_colbuf_push_value(c, 0, &v->v.f, 4); break;
    case FLOE_TYPE_BOOLEAN: {
        uint8_t b = v->v.b;
        floe_colbuf_push_value(c, 0, &b, 1);
        break;
    }
    case FLOE_TYPE_UUID: floe_colbuf_push_value(c, 0, v->v.uuid, 16); break;
    default: floe_colbuf_push_value(c, 0, v->v.bytes.p, v->v.bytes.n); break;
    }
}

/* The rows above as a Parquet file in memory: 3 row groups of 4 pages each. */
static void setup(void) {
    floe_error err;
    if (floe_schema_parse(SCHEMA_JSON, strlen(SCHEMA_JSON), &schema, &err) < 0)
        goto fail;
    char path[] = "/tmp/fuzz_filter_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.page_row_limit = 50;
    floe_pq_writer *w = NULL;
    if (floe_pq_writer_open(NULL, path, schema, &o, &w, &err) < 0)
        goto fail;
    floe_batch b;
    floe_batch_init(&b, schema);
    int rc = 0;
    for (int k = 0; k < NROWS && rc == 0; k++) {
        for (int c = 1; c <= NCOLS; c++) {
            floe_value v = row_value(k, c);
            push(&b.cols[c - 1], &v);
        }
        b.nrows++;
        if ((k + 1) % 200 == 0) {
            rc = floe_pq_writer_write_batch(w, &b, &err);
            if (rc == 0)
                rc = floe_pq_writer_flush(w, &err);
            floe_batch_clear(&b);
        }
    }
    floe_batch_free(&b);
    if (rc < 0 || floe_pq_writer_close(w, NULL, &err) < 0)
        goto fail;
    FILE *fp = fopen(path, "rb");
    if (!fp || fseek(fp, 0, SEEK_END) != 0)
        abort();
    file_len = (size_t)ftell(fp);
    rewind(fp);
    file = malloc(file_len);
    if (!file || fread(file, 1, file_len, fp) != file_len)
        abort();
    fclose(fp);
    unlink(path);
    return;
fail:
    fprintf(stderr, "fuzz_filter: setup: %s\n", err.msg);
    abort();
}

static void fuzz_table(const char *text) {
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    a.cap = 64u << 20;
    floe_expr *e = NULL, *ne = NULL;
    if (floe_expr_parse(schema, text, &a, &e, &err) == 0) {
        size_t n = strlen(text);
        char *neg = floe_arena_alloc(&a, n + 8);
        check(neg != NULL);
        snprintf(neg, n + 8, "NOT (%s)", text);
        /* "NOT (" may push a too deep expression over the nesting cap */
        if (floe_expr_parse(schema, neg, &a, &ne, &err) == 0) {
            for (int k = 0; k < 40; k++) {
                int x = floe_expr_eval_row(e, get, &k), y = floe_expr_eval_row(ne, get, &k);
                check(y == (x < 0 ? -1 : !x));
            }
        } else {
            check(err.code == FLOE_EINVALID);
        }
    }
    floe_arena_reset(&a);
}

static int sink(void *ctx, const void *p, size_t n) { return floe_buf_append(ctx, p, n); }

static void fuzz_file(const char *text) {
    floe_error err;
    floe_buf out[2];
    int64_t rows[2] = {-1, -1};
    for (int prune = 0; prune < 2; prune++) {
        floe_buf_init(&out[prune], 0);
        floe_pq_reader *r = NULL;
        check(floe_pq_reader_open_memory(file, file_len, "fuzz", NULL, &r, &err) == 0);
        if (floe_pq_reader_set_filter(r, text, &err) == 0) {
            floe_pq_reader_set_pruning(r, prune, prune);
            check(floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, sink, &out[prune],
                                      &rows[prune], &err) == 0);
        }
        floe_pq_reader_close(r);
    }
    check(rows[0] == rows[1]);
    check(out[0].len == out[1].len &&
          (!out[0].len || !memcmp(out[0].data, out[1].data, out[0].len)));
    floe_buf_free(&out[0]);
    floe_buf_free(&out[1]);
}

/* Does the table binding take filter text?  And the file binding? */
static void same_literal(const char *text) {
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_expr *e = NULL;
    bool table_ok = floe_expr_parse(schema, text, &a, &e, &err) == 0;
    floe_arena_reset(&a);
    floe_pq_reader *r = NULL;
    check(floe_pq_reader_open_memory(file, file_len, "fuzz", NULL, &r, &err) == 0);
    bool file_ok = floe_pq_reader_set_filter(r, text, &err) == 0;
    floe_pq_reader_close(r);
    if (table_ok != file_ok)
        fprintf(stderr, "fuzz_filter: %s: table %d, file %d\n", text, table_ok, file_ok);
    check(table_ok == file_ok);
}

static void fuzz_literals(const char *text, size_t n) {
    static const char *cols[] = {"dt", "tm", "ts", "tn", "dec"};
    char *f = malloc(2 * n + 16);
    if (!f)
        return;
    bool word = n > 0 && (n != 4 || strncasecmp(text, "null", 4) != 0);
    for (size_t i = 0; i < n && word; i++)
        word = strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:.+-",
                      text[i]) != NULL;
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        size_t k = (size_t)sprintf(f, "%s >= '", cols[c]);
        for (size_t i = 0; i < n; i++) {
            if (text[i] == '\'')
                f[k++] = '\'';
            f[k++] = text[i];
        }
        f[k++] = '\'';
        f[k] = 0;
        same_literal(f);
        if (word) {
            sprintf(f, "%s >= %s", cols[c], text);
            same_literal(f);
        }
    }
    free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!schema)
        setup();
    if (size > 4096 || memchr(data, 0, size))
        return 0;
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    fuzz_table(text);
    fuzz_file(text);
    if (size <= 64)
        fuzz_literals(text, size);
    free(text);
    return 0;
}
