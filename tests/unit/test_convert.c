/* test_convert.c - the conversion pipeline as a library: output independent of shredding
 * and encoding thread counts, counts that add up, allocation failures unwound cleanly. */
#include <stdlib.h>
#include <zlib.h>

#include "floe/convert.h"
#include "floe/gen.h"
#include "floe/parquet_reader.h"
#include "harness.h"
#include "common/testing.h"

static char *make_events(const char *dir, int n, double malformed) {
    floe_error err;
    floe_gen_opts go;
    floe_gen_opts_default(&go);
    go.seed = 5;
    go.malformed_rate = malformed;
    floe_gen *g;
    if (floe_gen_new(&go, &g, &err) != 0)
        return NULL;
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 0; i < n; i++)
        if (floe_gen_next(g, &b, NULL, &err) != 0)
            break;
    floe_gen_free(g);
    char *path = floe_asprintf("%s/events.ndjson", dir);
    harness_write_file(path, b.data, b.len);
    floe_buf_free(&b);
    return path;
}

static floe_schema *events_schema(void) {
    floe_error err;
    floe_schema *s = NULL;
    if (floe_schema_load(harness_source_path("tests/data/events.schema.json"), &s, &err) != 0)
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
    return s;
}

/* The first call keeps uri's bytes in *first; later ones check that uri holds the same. */
static void check_same_file(const char *uri, char **first, size_t *first_len) {
    size_t len;
    char *bytes = harness_read_file(uri, &len);
    REQUIRE(bytes != NULL);
    if (!*first) {
        *first = bytes;
        *first_len = len;
        return;
    }
    CHECK_EQ_INT(len, *first_len);
    CHECK(len == *first_len && memcmp(bytes, *first, len) == 0);
    free(bytes);
}

TEST(test_same_bytes_for_any_thread_count) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char *in = make_events(dir, 6000, 0.01);
    REQUIRE(in != NULL);
    floe_schema *schema = events_schema();
    REQUIRE(schema != NULL);
    char *first = NULL;
    size_t first_len = 0;
    int shred_threads[] = {1, 3, 2, 1};
    int enc_threads[] = {1, 1, 4, 3};
    for (int k = 0; k < 4; k++) {
        floe_convert_options o;
        floe_convert_options_init(&o);
        o.schema = schema;
        o.threads = shred_threads[k];
        o.write.threads = enc_threads[k];
        o.chunk_size = 64 << 10; /* many chunks, so the slots really rotate */
        o.write.row_group_size = 512 << 10;
        o.write.page_size = 32 << 10;
        char *out = floe_asprintf("%s/out%d", dir, k);
        o.out_dir = out;
        floe_convert_result res;
        const char *inputs[] = {in};
        REQUIRE_OK(floe_convert(inputs, 1, &o, &res, &err), err);
        CHECK_EQ_INT(res.records_in, 6000);
        CHECK_EQ_INT(res.records_out + res.rejected, 6000);
        CHECK(res.rejected > 20);
        CHECK_EQ_INT(res.files, 1);
        check_same_file(res.file_uris[0], &first, &first_len);
        floe_convert_result_free(&res);
        floe_free(out);
    }
    free(first);
    floe_schema_free(schema);
    floe_free(in);
}

TEST(test_alloc_failures_unwind) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char *in = make_events(dir, 300, 0.05);
    REQUIRE(in != NULL);
    floe_schema *schema = events_schema();
    REQUIRE(schema != NULL);
    int failures = 0;
    for (uint64_t n = 1; n < 100000; n += (n < 200 ? 1 : 37)) {
        floe_convert_options o;
        floe_convert_options_init(&o);
        o.schema = schema;
        o.threads = 2;
        o.chunk_size = 8 << 10;
        o.write.output.fsync = false;
        char *out = floe_asprintf("%s/fail%llu", dir, (unsigned long long)n);
        o.out_dir = out;
        floe_convert_result res;
        const char *inputs[] = {in};
        floe_alloc_fail_after(n);
        int rc = floe_convert(inputs, 1, &o, &res, &err);
        floe_alloc_fail_after(0);
        if (rc == 0) {
            floe_convert_result_free(&res);
            floe_free(out);
            break;
        }
        failures++;
        /* a failed run leaves no Parquet file behind */
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "find '%s' -name '*.parquet' 2>/dev/null | wc -l", out);
        char *count = NULL;
        harness_run_cmd(cmd, &count);
        CHECK(count && atoi(count) == 0);
        free(count);
        floe_free(out);
    }
    CHECK(failures > 50);
    floe_schema_free(schema);
    floe_free(in);
}

/* The "line" and "offset" fields of every quarantine entry, sorted (oversized records
 * reach the quarantine from the reader in read mode, so their order may differ). */
static char *quarantine_positions(const char *path) {
    size_t len;
    char *q = harness_read_file(path, &len);
    if (!q)
        return NULL;
    size_t n = 0, cap = 64;
    long long *v = malloc(cap * sizeof *v);
    for (char *p = q; (p = strstr(p, "\"line\":")) != NULL; p++) {
        long long line = 0, off = 0;
        if (sscanf(p, "\"line\":%lld,\"offset\":%lld", &line, &off) != 2)
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = line * 1000000000LL + off;
    }
    free(q);
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
            long long t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    floe_buf b;
    floe_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++)
        floe_buf_printf(&b, "%lld:%lld\n", v[i] / 1000000000LL, v[i] % 1000000000LL);
    free(v);
    return floe_buf_detach(&b, NULL);
}

/* A plain file is mapped (chunks do not know their first line); a gzip copy of it is read
 * through buffers (they do). Rejected records get the same line numbers and offsets
 * either way, with records crossing many small chunk boundaries, blank lines, oversized
 * lines inside chunks and across their boundaries, and a last line without newline; the
 * Parquet bytes are the same too. */
TEST(test_mapped_input_line_numbers) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char *events = make_events(dir, 2000, 0.03);
    REQUIRE(events != NULL);
    size_t elen;
    char *text = harness_read_file(events, &elen);
    REQUIRE(text != NULL);
    floe_buf b;
    floe_buf_init(&b, 0);
    int line = 0;
    for (char *p = text, *nl; (nl = memchr(p, '\n', elen - (size_t)(p - text))) != NULL;
         p = nl + 1) {
        line++;
        if (line % 41 == 0)
            floe_buf_append(&b, "\n  \n", 4); /* blank lines */
        if (line % 173 == 0) {                /* an oversized record */
            floe_buf_append(&b, "{\"payload\":\"", 12);
            for (int k = 0; k < (line % 2 ? 210 : 300); k++)
                floe_buf_append(&b, "xxxxxxxxxx", 10);
            floe_buf_append(&b, "\"}\n", 3);
        }
        floe_buf_append(&b, p, (size_t)(nl - p) + (line == 2000 ? 0 : 1));
    }
    free(text);
    char *plain = floe_asprintf("%s/mapped.ndjson", dir);
    char *gz = floe_asprintf("%s/mapped.ndjson.gz", dir);
    REQUIRE(harness_write_file(plain, b.data, b.len) == 0);
    gzFile g = gzopen(gz, "wb");
    REQUIRE(g != NULL);
    gzwrite(g, b.data, (unsigned)b.len);
    gzclose(g);
    floe_buf_free(&b);
    floe_schema *schema = events_schema();
    REQUIRE(schema != NULL);
    char *want = NULL, *want_pq = NULL;
    size_t want_pq_len = 0;
    for (int k = 0; k < 4; k++) {
        floe_convert_options o;
        floe_convert_options_init(&o);
        o.schema = schema;
        o.threads = 1 + k % 2;
        o.chunk_size = 3000;
        o.shred.max_record = 2000;
        o.write.output.fsync = false;
        char *out = floe_asprintf("%s/mapped-out%d", dir, k);
        o.out_dir = out;
        floe_convert_result res;
        const char *inputs[] = {k < 2 ? gz : plain};
        REQUIRE_OK(floe_convert(inputs, 1, &o, &res, &err), err);
        CHECK(res.rejected > 30);
        CHECK(res.rejected_by_reason[FLOE_REJECT_TOO_LARGE] == 2000 / 173);
        CHECK_EQ_INT(res.records_in, 2000 + 2000 / 173);
        char *qpath = floe_asprintf("%s/_quarantine/quarantine.ndjson", out);
        char *got = quarantine_positions(qpath);
        REQUIRE(got != NULL);
        size_t pq_len;
        char *pq = harness_read_file(res.file_uris[0], &pq_len);
        REQUIRE(pq != NULL);
        if (!want) {
            want = got;
            want_pq = pq;
            want_pq_len = pq_len;
        } else {
            CHECK_EQ_STR(got, want);
            CHECK(pq_len == want_pq_len && !memcmp(pq, want_pq, pq_len));
            free(got);
            free(pq);
        }
        floe_free(qpath);
        floe_convert_result_free(&res);
        floe_free(out);
    }
    free(want);
    free(want_pq);
    floe_schema_free(schema);
    floe_free(plain);
    floe_free(gz);
    floe_free(events);
}

/* File uri's rows as NDJSON into out, and its column paths (one a line) into paths. */
static void dump_file(const char *uri, floe_buf *out, floe_buf *paths) {
    floe_error err;
    size_t n;
    char *data = harness_read_file(uri, &n);
    REQUIRE(data != NULL);
    floe_pq_reader *r = NULL;
    REQUIRE_OK(floe_pq_reader_open_memory((const uint8_t *)data, n, uri, NULL, &r, &err), err);
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    for (size_t c = 0; c < fi.num_columns; c++) {
        const char *p = floe_pq_reader_leaf(r, c)->path;
        CHECK_EQ_INT(floe_buf_append(paths, p, strlen(p)), 0);
        CHECK_EQ_INT(floe_buf_append(paths, "\n", 1), 0);
    }
    REQUIRE_OK(floe_pq_reader_dump(r, FLOE_PQ_ROWS_NDJSON, -1, harness_buf_sink, out, NULL, &err),
               err);
    floe_pq_reader_close(r);
    free(data);
}

/* variant_shredding auto over many small batches: the writer holds them until it has
 * 10,000 rows, chooses from those, and a value after them of another type than the one
 * chosen is written unshredded: every row reads back as the unshredded file's. */
TEST(test_variant_auto_across_batches) {
    floe_error err;
    const char *dir = harness_tmpdir();
    floe_buf in;
    floe_buf_init(&in, 0);
    for (int i = 0; i < 13000; i++) {
        char line[160];
        int k = i < 12000 ? snprintf(line, sizeof line,
                                     "{\"id\":%d,\"payload\":{\"s\":\"v%d\",\"n\":%d}}\n", i,
                                     i % 7, i % 100)
                          : snprintf(line, sizeof line,
                                     "{\"id\":%d,\"payload\":{\"s\":%d,\"n\":\"late\"}}\n", i,
                                     i);
        CHECK_EQ_INT(floe_buf_append(&in, line, (size_t)k), 0);
    }
    char *inpath = floe_asprintf("%s/variant.ndjson", dir);
    harness_write_file(inpath, in.data, in.len);
    const char *sj = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":2,\"name\":\"payload\",\"required\":false,\"type\":\"variant\"}]}";
    floe_schema *schema = NULL;
    REQUIRE_OK(floe_schema_parse(sj, strlen(sj), &schema, &err), err);
    floe_buf rows[2], paths[2];
    for (int k = 0; k < 2; k++) {
        floe_buf_init(&rows[k], 0);
        floe_buf_init(&paths[k], 0);
        floe_convert_options o;
        floe_convert_options_init(&o);
        o.schema = schema;
        o.threads = 2;
        o.chunk_size = 16 << 10; /* ~440 rows a batch */
        if (k == 1)
            snprintf(o.write.variant_shredding, sizeof o.write.variant_shredding, "auto");
        char *out = floe_asprintf("%s/variant%d", dir, k);
        o.out_dir = out;
        floe_convert_result res;
        const char *inputs[] = {inpath};
        REQUIRE_OK(floe_convert(inputs, 1, &o, &res, &err), err);
        CHECK_EQ_INT(res.records_out, 13000);
        REQUIRE(res.files == 1);
        dump_file(res.file_uris[0], &rows[k], &paths[k]);
        floe_convert_result_free(&res);
        floe_free(out);
    }
    CHECK_EQ_INT(floe_buf_append(&paths[1], "", 1), 0);
    CHECK_EQ_STR((const char *)paths[1].data,
                 "id\npayload.metadata\npayload.value\n"
                 "payload.typed_value.n.value\npayload.typed_value.n.typed_value\n"
                 "payload.typed_value.s.value\npayload.typed_value.s.typed_value\n");
    CHECK(rows[0].len > 0 && rows[0].len == rows[1].len &&
          memcmp(rows[0].data, rows[1].data, rows[0].len) == 0);
    for (int k = 0; k < 2; k++) {
        floe_buf_free(&rows[k]);
        floe_buf_free(&paths[k]);
    }
    floe_schema_free(schema);
    floe_buf_free(&in);
    floe_free(inpath);
}

/* Row groups of uri: their count into *n, their row counts into rows[0..min(n, cap)). */
static void row_groups_of(const char *uri, size_t *n, int64_t *rows, size_t cap) {
    floe_error err;
    floe_pq_reader *r = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, uri, NULL, &r, &err), err);
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    *n = fi.num_row_groups;
    for (size_t g = 0; g < fi.num_row_groups && g < cap; g++) {
        floe_pq_row_group_info gi;
        floe_pq_reader_row_group_info(r, g, &gi);
        rows[g] = gi.num_rows;
    }
    floe_pq_reader_close(r);
}

/* With the input's size known (input_size), the row group that reaches the end of the
 * input ends early, in steps, each at least twice what is left, down to a chunk or 1/64
 * of the input: the last row group, written after the last record, is small. The files
 * are still byte-identical whatever the thread count, and hold the same rows as without
 * the size (one row group); with row groups also ended by their size, the same. */
TEST(test_short_last_row_groups) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char *in = make_events(dir, 8000, 0.01);
    REQUIRE(in != NULL);
    size_t in_len;
    char *text = harness_read_file(in, &in_len);
    REQUIRE(text != NULL);
    free(text);
    floe_schema *schema = events_schema();
    REQUIRE(schema != NULL);
    floe_buf want_rows, want_paths;
    floe_buf_init(&want_rows, 0);
    floe_buf_init(&want_paths, 0);
    char *first = NULL, *sized_first = NULL;
    size_t first_len = 0, sized_len = 0;
    /* threads, input_size known, row group size */
    struct { int threads; bool sized; size_t rg; } runs[] = {
        {1, false, 0}, {1, true, 0}, {2, true, 0}, {3, true, 0}, {2, true, 256 << 10},
        {1, true, 256 << 10}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        floe_convert_options o;
        floe_convert_options_init(&o);
        o.schema = schema;
        o.threads = runs[k].threads;
        o.chunk_size = 32 << 10;
        o.input_size = runs[k].sized ? (int64_t)in_len : 0;
        if (runs[k].rg)
            o.write.row_group_size = runs[k].rg;
        o.write.page_size = 32 << 10;
        o.write.output.fsync = false;
        o.write.write_behind = k % 2 == 0;
        char *out = floe_asprintf("%s/tail%zu", dir, k);
        o.out_dir = out;
        floe_convert_result res;
        const char *inputs[] = {in};
        REQUIRE_OK(floe_convert(inputs, 1, &o, &res, &err), err);
        CHECK_EQ_INT(res.files, 1);
        size_t ngroups = 0;
        int64_t rows[64];
        row_groups_of(res.file_uris[0], &ngroups, rows, 64);
        floe_buf got_rows, got_paths;
        floe_buf_init(&got_rows, 0);
        floe_buf_init(&got_paths, 0);
        dump_file(res.file_uris[0], &got_rows, &got_paths);
        if (k == 0) { /* the reference: no size, one row group */
            CHECK_EQ_INT(ngroups, 1);
            want_rows = got_rows;
            want_paths = got_paths;
        } else {
            CHECK(got_rows.len == want_rows.len &&
                  !memcmp(got_rows.data, want_rows.data, want_rows.len));
            CHECK(got_paths.len == want_paths.len &&
                  !memcmp(got_paths.data, want_paths.data, want_paths.len));
            floe_buf_free(&got_rows);
            floe_buf_free(&got_paths);
        }
        if (k >= 1 && k <= 3) { /* sized, one row group's worth: ended in steps */
            CHECK(ngroups >= 3 && ngroups <= 64);
            int64_t total = 0;
            for (size_t g = 0; g < ngroups && g < 64; g++)
                total += rows[g];
            CHECK_EQ_INT(total, res.records_out);
            /* the first holds two thirds or more, each the next at least twice what
             * follows it, the last at most about 3/64 (plus a chunk) */
            CHECK(rows[0] * 100 >= total * 60);
            for (size_t g = 0; g + 1 < ngroups && g < 63; g++) {
                int64_t after = 0;
                for (size_t h = g + 1; h < ngroups && h < 64; h++)
                    after += rows[h];
                CHECK(rows[g] * 10 >= after * 17);
            }
            CHECK(ngroups > 0 && rows[ngroups - 1] * 100 <= total * 6);
            CHECK(ngroups > 0 && rows[ngroups - 1] * 100 >= total);
            check_same_file(res.file_uris[0], &first, &first_len);
        }
        if (k >= 4) { /* row groups ended by their size too */
            CHECK(ngroups >= 4);
            check_same_file(res.file_uris[0], &sized_first, &sized_len);
        }
        floe_convert_result_free(&res);
        floe_free(out);
    }
    free(first);
    free(sized_first);
    floe_buf_free(&want_rows);
    floe_buf_free(&want_paths);
    floe_schema_free(schema);
    floe_free(in);
}

int main(void) {
    RUN(test_same_bytes_for_any_thread_count);
    RUN(test_alloc_failures_unwind);
    RUN(test_mapped_input_line_numbers);
    RUN(test_variant_auto_across_batches);
    RUN(test_short_last_row_groups);
    return harness_finish();
}
