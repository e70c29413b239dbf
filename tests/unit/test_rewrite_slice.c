/*
 * test_rewrite_slice.c - a re-encoding rewrite that decodes large input row groups in
 * slices (rw_slice_bytes) writes the same bytes as one that decodes them whole, with a
 * smaller peak buffer; and the rows survive. Also when the large input has no page index
 * (pyarrow's default): slices then read the chunk page by page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact/rewrite_internal.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/convert.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":4,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":5,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":6,\"name\":\"info\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":7,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":8,\"name\":\"b\",\"required\":false,\"type\":\"double\"}]}}]}";

typedef harness_table env;

static void env_open(env *e) {
    floe_kv props[1] = {{"write.parquet.compression-codec", "snappy"}};
    harness_table_open(e, "t", SCHEMA, NULL, NULL, props, 1);
}

/* Append n generated rows (ids from base) as NDJSON, or, with no_index, as a Parquet file
 * written beforehand without a page index and added as it is. */
static void append_rows(env *e, int64_t base, int n, bool no_index) {
    char path[4300];
    snprintf(path, sizeof path, "%s/in-%lld.ndjson", e->dir, (long long)base);
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 0; i < n; i++) {
        int64_t id = base + i;
        floe_buf_printf(&b, "{\"id\":%lld,\"kind\":\"%s\"", (long long)id,
                        id % 3 == 0 ? "a" : (id % 3 == 1 ? "bb" : "ccc"));
        if (id % 4)
            floe_buf_printf(&b, ",\"name\":\"name-%lld\"", (long long)(id * 7919 % 100003));
        if (id % 5 == 1)
            floe_buf_printf(&b, ",\"tags\":[]");
        else if (id % 5 == 2)
            floe_buf_printf(&b, ",\"tags\":[\"x\",null,\"y%lld\"]", (long long)id);
        if (id % 6 == 1)
            floe_buf_printf(&b, ",\"info\":{\"a\":%lld}", (long long)id);
        else if (id % 6 == 2)
            floe_buf_printf(&b, ",\"info\":{\"a\":null,\"b\":%lld.5}", (long long)id);
        floe_buf_printf(&b, "}\n");
    }
    REQUIRE(harness_write_file(path, b.data, b.len) == 0);
    floe_buf_free(&b);
    const char *in[1] = {path};
    floe_error err;
    floe_schema *schema = NULL;
    floe_convert_result cr;
    memset(&cr, 0, sizeof cr);
    if (no_index) {
        char out[4400];
        snprintf(out, sizeof out, "%s/noidx-%lld", e->dir, (long long)base);
        REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &schema, &err), err);
        floe_convert_options co;
        floe_convert_options_init(&co);
        co.schema = schema;
        co.out_dir = out;
        co.write.write_page_index = false;
        co.write.output.fsync = false;
        REQUIRE_OK(floe_convert(in, 1, &co, &cr, &err), err);
        REQUIRE(cr.files == 1);
        in[0] = cr.file_uris[0];
    }
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(floe_table_append_files(e->t, in, 1, &o, &r, &err), err);
    CHECK_EQ_INT(r.parquet_files, no_index ? 1 : 0);
    floe_table_append_result_reset(&r);
    floe_convert_result_free(&cr);
    floe_schema_free(schema);
}

/* The live data files' bytes, concatenated in order of record count (caller frees). */
static char *live_bytes(floe_table *t, size_t *len, int64_t *nfiles, int64_t *rows) {
    floe_error err;
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    REQUIRE_OK(floe_scan_plan_files(t, NULL, &p, &err), err);
    *nfiles = (int64_t)p->ntasks;
    *rows = 0;
    floe_buf out;
    floe_buf_init(&out, 0);
    bool *done = calloc(p->ntasks + 1, 1);
    for (size_t k = 0; k < p->ntasks; k++) {
        size_t best = p->ntasks;
        for (size_t i = 0; i < p->ntasks; i++)
            if (!done[i] && (best == p->ntasks || p->tasks[i].file->record_count <
                                                      p->tasks[best].file->record_count))
                best = i;
        done[best] = true;
        *rows += p->tasks[best].file->record_count;
        const char *path = p->tasks[best].file->file_path;
        if (!strncmp(path, "file://", 7))
            path += 7;
        size_t n = 0;
        char *d = harness_read_file(path, &n);
        REQUIRE(d);
        floe_buf_append(&out, d, n);
        free(d);
    }
    free(done);
    floe_scan_plan_free(p);
    *len = out.len;
    return (char *)out.data;
}

static void run(int64_t slice, int threads, bool no_index, floe_rewrite_result *r, char **bytes,
                size_t *len, int64_t *nfiles, int64_t *rows) {
    env e;
    env_open(&e);
    append_rows(&e, 0, 3000, false);
    append_rows(&e, 1000000, 200000, no_index); /* one row group of ~10 MB decoded */
    append_rows(&e, 2000000, 5000, false);
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.min_input_files = 2;
    o.threads = threads;
    o.fsync = false;
    o.fast_copy = 0; /* re-encode */
    floe_error err;
    rw_slice_bytes = slice;
    int rc = floe_rewrite(e.t, &o, r, &err);
    rw_slice_bytes = (int64_t)8 << 20;
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(r->rewritten_data_files_count, 3);
    CHECK_EQ_INT(r->records_written, 208000);
    CHECK_EQ_INT(r->fast_copied_row_groups, 0);
    *bytes = live_bytes(e.t, len, nfiles, rows);
    harness_table_close(&e);
}

static void same_bytes_sliced(int threads, bool no_index) {
    floe_rewrite_result whole, sliced;
    char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    int64_t an = 0, bn = 0, arows = 0, brows = 0;
    run(0, threads, no_index, &whole, &a, &alen, &an, &arows);
    run(16 << 10, threads, no_index, &sliced, &b, &blen, &bn, &brows);
    CHECK_EQ_INT(arows, 208000);
    CHECK_EQ_INT(brows, 208000);
    CHECK_EQ_INT(an, bn);
    CHECK_EQ_INT((int64_t)alen, (int64_t)blen);
    CHECK(alen > 0 && alen == blen && !memcmp(a, b, alen));
    /* the whole row group was held decoded before; slices keep far less */
    CHECK(sliced.peak_group_buffer_bytes * 2 < whole.peak_group_buffer_bytes);
    free(a);
    free(b);
}

TEST(sliced_rewrite_writes_the_same_bytes) { same_bytes_sliced(1, false); }
TEST(sliced_rewrite_writes_the_same_bytes_prefetch) { same_bytes_sliced(2, false); }
TEST(sliced_rewrite_without_page_index) { same_bytes_sliced(1, true); }
TEST(sliced_rewrite_without_page_index_prefetch) { same_bytes_sliced(2, true); }

int main(void) {
    RUN(sliced_rewrite_writes_the_same_bytes);
    RUN(sliced_rewrite_writes_the_same_bytes_prefetch);
    RUN(sliced_rewrite_without_page_index);
    RUN(sliced_rewrite_without_page_index_prefetch);
    return harness_finish();
}
