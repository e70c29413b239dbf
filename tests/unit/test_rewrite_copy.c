/*
 * test_rewrite_copy.c - the rewrite's row-group copy fast path (fast-copy): copied files
 * hold the same rows (floe scan, and DuckDB / hyparquet / parquet-wasm over the data
 * files), their page index is re-based (every page location points at its page header,
 * page pruning gives the same rows), their Iceberg metrics equal those of the re-encode
 * path; mixed inputs (another codec) are re-encoded alongside copied row groups; auto only
 * copies row groups that are large already.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/parquet_copy.h"
#include "floe/parquet_reader.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "floe/schema.h"
#include "floe/table_metadata.h"
#include "harness.h"
#include "harness_table.h"
#include "parquet/metadata.h"
#include "parquet/reader_internal.h"

#define MB (1024LL * 1024)

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":4,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":5,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":6,\"name\":\"info\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":7,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":8,\"name\":\"b\",\"required\":false,\"type\":\"double\"}]}},"
    "{\"id\":9,\"name\":\"attrs\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":10,"
    "\"key\":\"string\",\"value-id\":11,\"value\":\"long\",\"value-required\":false}},"
    "{\"id\":12,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"}]}";

typedef harness_table env;

/* Small pages and row groups so that chunks have several pages and files several row
 * groups. */
static void env_open(env *e, const char *name) {
    floe_kv props[3] = {{"write.parquet.compression-codec", "snappy"},
                        {"write.parquet.page-row-limit", "64"},
                        {"write.parquet.row-group-size-bytes", "6000"}};
    harness_table_open(e, name, SCHEMA, NULL, NULL, props, 3);
}

static void env_close(env *e) { harness_table_close(e); }

typedef struct prop_set {
    const char *key, *value;
} prop_set;

static int apply_prop(void *ctx, floe_metadata_builder *b, floe_error *err) {
    const prop_set *p = ctx;
    return floe_metadata_builder_set_property(b, p->key, p->value, err);
}

static void set_prop(env *e, const char *key, const char *value) {
    prop_set p = {key, value};
    floe_error err;
    REQUIRE_OK(floe_table_commit(e->t, apply_prop, &p, &err), err);
}

/* One NDJSON file of n rows (ids from base) with nulls, empty and missing nested values. */
static void append_rows(env *e, int64_t base, int n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 0; i < n; i++) {
        int64_t id = base + i;
        floe_buf_printf(&b, "{\"id\":%lld,\"kind\":\"%s\"", (long long)id,
                        id % 3 == 0 ? "a" : (id % 3 == 1 ? "b" : "c"));
        if (id % 4)
            floe_buf_printf(&b, ",\"name\":\"n%lld-%s\"", (long long)(id * 7919 % 1000),
                            id % 11 ? "x" : "a-rather-long-name-that-goes-past-the-sixty-four-"
                                            "byte-statistics-truncation-length-zz");
        if (id % 5 == 1)
            floe_buf_printf(&b, ",\"tags\":[]");
        else if (id % 5 == 2)
            floe_buf_printf(&b, ",\"tags\":[\"x\",null,\"y%lld\"]", (long long)id);
        if (id % 6 == 1)
            floe_buf_printf(&b, ",\"info\":{\"a\":%lld}", (long long)id);
        else if (id % 6 == 2)
            floe_buf_printf(&b, ",\"info\":{\"a\":null,\"b\":%lld.5}", (long long)(id - 500));
        if (id % 7 == 3)
            floe_buf_printf(&b, ",\"attrs\":{\"k\":%lld,\"z\":null}", (long long)id);
        if (id % 2)
            floe_buf_printf(&b, ",\"ts\":\"2026-10-%02dT12:00:%02d.123456Z\"",
                            (int)(1 + id % 28), (int)(id % 60));
        floe_buf_printf(&b, "}\n");
    }
    harness_table_append_ndjson(e, base, &b);
    floe_buf_free(&b);
}

/* Physical paths of the live data files, space separated (caller frees). */
static char *live_paths(floe_table *t, int64_t *nfiles) {
    floe_error err;
    floe_scan_plan *p = NULL;
    if (floe_table_refresh(t, &err) < 0)
        harness_fail(__FILE__, __LINE__, "refresh: %s", err.msg);
    if (floe_scan_plan_files(t, NULL, &p, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "scan: %s", err.msg);
        return NULL;
    }
    floe_buf b;
    floe_buf_init(&b, 0);
    for (size_t i = 0; i < p->ntasks; i++) {
        char *phys = NULL;
        if (floe_table_resolve_path(t, p->tasks[i].file->file_path, &phys, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "resolve: %s", err.msg);
            continue;
        }
        char *local = floe_io_local_path(phys); /* the oracles take file names */
        floe_buf_printf(&b, "%s%s", i ? " " : "", local ? local : phys);
        floe_free(local);
        floe_free(phys);
    }
    *nfiles = (int64_t)p->ntasks;
    floe_scan_plan_free(p);
    floe_buf_append_byte(&b, 0);
    return (char *)b.data;
}

static void rewrite_opts(floe_rewrite_options *o, int fast_copy, int threads) {
    floe_rewrite_options_init(o);
    o->target_file_size = 4 * MB;
    o->min_input_files = 2;
    o->threads = threads;
    o->fsync = false;
    o->fast_copy = fast_copy;
}

/* Row groups of the live files. */
static int64_t live_row_groups(floe_table *t) {
    int64_t n = 0, nf = 0;
    char *paths = live_paths(t, &nf);
    for (char *s = strtok(paths, " "); s; s = strtok(NULL, " ")) {
        floe_pq_reader *r = NULL;
        floe_error err;
        if (floe_pq_reader_open(NULL, s, NULL, &r, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "open %s: %s", s, err.msg);
            continue;
        }
        floe_pq_reader_file fi;
        floe_pq_reader_file_info(r, &fi);
        n += (int64_t)fi.num_row_groups;
        floe_pq_reader_close(r);
    }
    free(paths);
    return n;
}


static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
    static char cmd[65536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out = NULL;
    int rc = harness_run_cmd(cmd, &out);
    free(out);
    return rc;
}

/* Each oracle reads the files `paths` into dir/<reader>-<tag>.ndjson (sorted). The
 * reader's own status is the one checked: through `node ... | sort` the shell answered
 * sort's, so a reader that failed showed only later, as rows that differ. */
static void oracle_read(const char *dir, const char *paths, const char *tag) {
    static const char *readers[] = {"duckdb", "hyparquet", "parquet-wasm"};
    char schema_path[4200];
    snprintf(schema_path, sizeof schema_path, "%s/schema.json", dir);
    REQUIRE(harness_write_file(schema_path, SCHEMA, strlen(SCHEMA)) == 0);
    for (size_t k = 0; k < 3; k++) {
        int rc = sh("node %s/read_parquet.mjs --reader %s --schema %s %s > %s/%s-%s.rows && "
                    "LC_ALL=C sort %s/%s-%s.rows > %s/%s-%s.ndjson",
                    harness_source_path("tests/js"), readers[k], schema_path, paths, dir,
                    readers[k], tag, dir, readers[k], tag, dir, readers[k], tag);
        if (rc != 0)
            harness_fail(__FILE__, __LINE__, "%s could not read the %s files", readers[k], tag);
    }
}

static void oracle_compare(const char *dir) {
    static const char *readers[] = {"duckdb", "hyparquet", "parquet-wasm"};
    for (size_t k = 0; k < 3; k++) {
        int rc = sh("cmp -s %s/%s-before.ndjson %s/%s-after.ndjson && test -s %s/%s-after.ndjson",
                    dir, readers[k], dir, readers[k], dir, readers[k]);
        if (rc != 0)
            harness_fail(__FILE__, __LINE__, "%s: rows after the copy differ from before",
                         readers[k]);
    }
}

/* Every page location of every chunk points at a data page header whose size is the
 * location's, the first at data_page_offset; returns the chunks with a page index. */
static int64_t check_page_index(const char *path, int64_t *with_ci) {
    size_t flen = 0;
    char *bytes = harness_read_file(path, &flen);
    floe_pq_reader *r = NULL;
    floe_error err;
    int64_t chunks = 0;
    if (!bytes || floe_pq_reader_open(NULL, path, NULL, &r, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "open %s", path);
        free(bytes);
        return 0;
    }
    for (size_t g = 0; g < r->md.n_row_groups; g++) {
        for (size_t c = 0; c < r->md.row_groups[g].n_columns; c++) {
            const floe_pq_column_chunk *cc = &r->md.row_groups[g].columns[c];
            floe_arena a;
            floe_arena_init(&a, 4096);
            floe_pq_offset_index oi;
            int rc = pq_load_offset_index(r, g, c, &a, &oi, &err);
            CHECK(rc >= 0);
            if (rc == 0) {
                chunks++;
                *with_ci += cc->has_column_index;
                CHECK(oi.n_pages > 0);
                CHECK(oi.n_pages && oi.page_locations[0].offset == cc->meta_data.data_page_offset);
                int64_t prev_row = -1;
                for (size_t k = 0; k < oi.n_pages; k++) {
                    const floe_pq_page_location *l = &oi.page_locations[k];
                    REQUIRE(l->offset > 0 && (size_t)l->offset < flen);
                    floe_pq_page_header ph;
                    size_t used = 0;
                    REQUIRE(floe_pq_page_header_decode((const uint8_t *)bytes + l->offset,
                                                       flen - (size_t)l->offset, l->offset, &ph,
                                                       &used, &err) == 0);
                    CHECK(ph.type == FLOE_PQ_DATA_PAGE || ph.type == FLOE_PQ_DATA_PAGE_V2);
                    CHECK_EQ_INT((int64_t)used + ph.compressed_page_size,
                                 l->compressed_page_size);
                    CHECK(l->first_row_index > prev_row);
                    prev_row = l->first_row_index;
                }
            }
            floe_arena_reset(&a);
        }
    }
    floe_pq_reader_close(r);
    free(bytes);
    return chunks;
}

/* Rows matching a filter, with page pruning and without: the same; pruning skips pages. */
static void check_pruning(const char *path, const char *filter) {
    int64_t rows[2] = {0, 0};
    floe_pq_read_stats st[2];
    for (int k = 0; k < 2; k++) {
        floe_pq_reader *r = NULL;
        floe_error err;
        REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
        REQUIRE_OK(floe_pq_reader_set_filter(r, filter, &err), err);
        floe_pq_reader_set_pruning(r, false, k == 0);
        floe_buf b;
        floe_buf_init(&b, 0);
        CHECK_OK(floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, harness_buf_sink, &b, &rows[k],
                                     &err),
                 err);
        floe_pq_reader_stats(r, &st[k]);
        floe_buf_free(&b);
        floe_pq_reader_close(r);
    }
    CHECK(rows[0] > 0);
    CHECK_EQ_INT(rows[0], rows[1]);
    CHECK(st[0].pages_skipped > 0);
}

static const floe_data_file *only_file(floe_table *t, floe_scan_plan **p) {
    floe_error err;
    floe_scan_options so = {.keep_metrics = true}; /* the callers compare its metrics */
    if (floe_table_refresh(t, &err) < 0)
        harness_fail(__FILE__, __LINE__, "refresh: %s", err.msg);
    if (floe_scan_plan_files(t, &so, p, &err) < 0 || (*p)->ntasks != 1) {
        harness_fail(__FILE__, __LINE__, "expected one live file");
        return NULL;
    }
    return (*p)->tasks[0].file;
}

static bool same_counts(const floe_count_map *a, const floe_count_map *b) {
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        bool found = false;
        for (size_t k = 0; k < b->n; k++)
            if (b->items[k].field_id == a->items[i].field_id)
                found = b->items[k].value == a->items[i].value;
        if (!found) {
            fprintf(stderr, "  field %d: %lld\n", (int)a->items[i].field_id,
                    (long long)a->items[i].value);
            return false;
        }
    }
    return true;
}

static bool same_bounds(const floe_bound_map *a, const floe_bound_map *b) {
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        bool found = false;
        for (size_t k = 0; k < b->n; k++)
            if (b->items[k].field_id == a->items[i].field_id)
                found = b->items[k].n == a->items[i].n &&
                        !memcmp(b->items[k].p, a->items[i].p, a->items[i].n);
        if (!found) {
            fprintf(stderr, "  bound of field %d differs\n", (int)a->items[i].field_id);
            return false;
        }
    }
    return true;
}

static void appends(env *e) {
    for (int k = 0; k < 5; k++)
        append_rows(e, k * 1000, 400 + k * 37);
}

/* ---------------------------------------------------------------------------------------
 * tests
 * ------------------------------------------------------------------------------------- */

TEST(test_copy_option) {
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_error err;
    CHECK_EQ_INT(o.fast_copy, -1);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "fast-copy", "true", &err), 0);
    CHECK_EQ_INT(o.fast_copy, 1);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "fast-copy", "false", &err), 0);
    CHECK_EQ_INT(o.fast_copy, 0);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "fast-copy", "auto", &err), 0);
    CHECK_EQ_INT(o.fast_copy, -1);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "fast-copy", "maybe", &err), FLOE_EINVALID);
}

/* Copy vs re-encode of the same inputs: same rows, same Iceberg metrics; the copied file
 * keeps every input row group, with a page index that points at its pages. */
static void copy_vs_reencode(int threads) {
    env a, b;
    env_open(&a, "copied");
    env_open(&b, "reencoded");
    appends(&a);
    appends(&b);
    int64_t n_before = 0, n_after = 0, nf = 0;
    char *before = harness_table_rows(a.t, &n_before);
    int64_t rgs_in = live_row_groups(a.t);
    CHECK(rgs_in >= 5);
    char *paths_before = live_paths(a.t, &nf);
    CHECK_EQ_INT(nf, 5);
    oracle_read(a.dir, paths_before, "before");

    floe_rewrite_options o;
    floe_rewrite_result ra, rb;
    floe_error err;
    rewrite_opts(&o, 1, threads);
    REQUIRE_OK(floe_rewrite(a.t, &o, &ra, &err), err);
    rewrite_opts(&o, 0, threads);
    REQUIRE_OK(floe_rewrite(b.t, &o, &rb, &err), err);
    CHECK_EQ_INT(ra.fast_copied_row_groups, rgs_in);
    CHECK_EQ_INT(ra.reencoded_row_groups, 0);
    CHECK_EQ_INT(rb.fast_copied_row_groups, 0);
    CHECK_EQ_INT(rb.reencoded_row_groups, rgs_in);
    CHECK_EQ_INT(ra.records_written, n_before);
    CHECK_EQ_INT(ra.added_data_files_count, 1);

    char *after = harness_table_rows(a.t, &n_after);
    CHECK_EQ_INT(n_after, n_before);
    CHECK(before && after && !strcmp(before, after));
    CHECK_EQ_INT(live_row_groups(a.t), rgs_in);

    /* the oracles read the copied file as the inputs */
    char *paths_after = live_paths(a.t, &nf);
    CHECK_EQ_INT(nf, 1);
    oracle_read(a.dir, paths_after, "after");
    oracle_compare(a.dir);

    /* page index re-based: every chunk has one, every location is its page */
    int64_t with_ci = 0;
    int64_t chunks = check_page_index(paths_after, &with_ci);
    CHECK_EQ_INT(chunks, rgs_in * 9); /* 9 leaves */
    CHECK(with_ci > 0);
    check_pruning(paths_after, "id >= 2100 AND id < 2130");

    /* Iceberg metrics equal the re-encode path's (column sizes are the stored sizes) */
    floe_scan_plan *pa = NULL, *pb = NULL;
    const floe_data_file *fa = only_file(a.t, &pa), *fb = only_file(b.t, &pb);
    if (fa && fb) {
        CHECK_EQ_INT(fa->record_count, fb->record_count);
        CHECK(same_counts(&fa->value_counts, &fb->value_counts));
        CHECK(same_counts(&fa->null_value_counts, &fb->null_value_counts));
        CHECK(same_counts(&fa->nan_value_counts, &fb->nan_value_counts));
        CHECK(same_bounds(&fa->lower_bounds, &fb->lower_bounds));
        CHECK(same_bounds(&fa->upper_bounds, &fb->upper_bounds));
        CHECK(fa->column_sizes.present && fa->column_sizes.n == fb->column_sizes.n);
        int64_t sum = 0;
        for (size_t i = 0; i < fa->column_sizes.n; i++)
            sum += fa->column_sizes.items[i].value;
        CHECK(sum > 0 && sum < fa->file_size_in_bytes);
        CHECK_EQ_INT((int64_t)fa->nsplit_offsets, rgs_in);
    }
    floe_scan_plan_free(pa);
    floe_scan_plan_free(pb);
    free(before);
    free(after);
    free(paths_before);
    free(paths_after);
    env_close(&a);
    env_close(&b);
}

/* With full metrics, a row group whose statistics are truncated (strings past 64 bytes)
 * is re-encoded, so the file's bounds are the values and not the truncated statistics;
 * the other row groups are still copied. */
TEST(test_copy_full_metrics) {
    env e;
    env_open(&e, "fullmetrics");
    set_prop(&e, "write.metadata.metrics.default", "full");
    appends(&e);
    char lo[101], hi[101];
    memset(lo, 'A', 100);
    memset(hi, '~', 100);
    lo[100] = hi[100] = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "{\"id\":90001,\"name\":\"%s\"}\n{\"id\":90002,\"name\":\"%s\"}\n", lo, hi);
    harness_table_append_ndjson(&e, 90000, &b);
    floe_buf_free(&b);
    int64_t rgs_in = live_row_groups(e.t);
    floe_rewrite_options o;
    floe_rewrite_result r;
    floe_error err;
    rewrite_opts(&o, 1, 1);
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK(r.reencoded_row_groups >= 1);
    CHECK(r.fast_copied_row_groups >= 1);
    CHECK_EQ_INT(r.fast_copied_row_groups + r.reencoded_row_groups, rgs_in);
    floe_scan_plan *p = NULL;
    const floe_data_file *f = only_file(e.t, &p);
    if (f) {
        const floe_column_bound *l = NULL, *u = NULL;
        for (size_t i = 0; i < f->lower_bounds.n; i++)
            if (f->lower_bounds.items[i].field_id == 3)
                l = &f->lower_bounds.items[i];
        for (size_t i = 0; i < f->upper_bounds.n; i++)
            if (f->upper_bounds.items[i].field_id == 3)
                u = &f->upper_bounds.items[i];
        CHECK(l && l->n == 100 && !memcmp(l->p, lo, 100));
        CHECK(u && u->n == 100 && !memcmp(u->p, hi, 100));
    }
    floe_scan_plan_free(p);
    env_close(&e);
}

TEST(test_copy_matches_reencode) { copy_vs_reencode(1); }
TEST(test_copy_matches_reencode_prefetch) { copy_vs_reencode(4); }

/* Two files written with zstd, three with snappy, output snappy: the zstd row groups are
 * re-encoded, the others copied, all in one file with one consistent footer. */
TEST(test_copy_mixed_inputs) {
    env e;
    env_open(&e, "mixed");
    set_prop(&e, "write.parquet.compression-codec", "zstd");
    append_rows(&e, 0, 500);
    append_rows(&e, 1000, 450);
    int64_t rgs_zstd = live_row_groups(e.t);
    set_prop(&e, "write.parquet.compression-codec", "snappy");
    for (int k = 2; k < 5; k++)
        append_rows(&e, k * 1000, 380 + k * 11);
    int64_t rgs_all = live_row_groups(e.t);
    int64_t n_before = 0, n_after = 0, nf = 0;
    char *before = harness_table_rows(e.t, &n_before);
    char *paths_before = live_paths(e.t, &nf);
    oracle_read(e.dir, paths_before, "before");
    floe_rewrite_options o;
    rewrite_opts(&o, 1, 2);
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.fast_copied_row_groups, rgs_all - rgs_zstd);
    CHECK_EQ_INT(r.reencoded_row_groups, rgs_zstd);
    CHECK_EQ_INT(r.records_written, n_before);
    char *after = harness_table_rows(e.t, &n_after);
    CHECK_EQ_INT(n_after, n_before);
    CHECK(before && after && !strcmp(before, after));
    char *paths_after = live_paths(e.t, &nf);
    CHECK_EQ_INT(nf, 1);
    oracle_read(e.dir, paths_after, "after");
    oracle_compare(e.dir);
    int64_t with_ci = 0;
    CHECK(check_page_index(paths_after, &with_ci) > 0);
    check_pruning(paths_after, "id >= 3100 AND id < 3130");
    free(before);
    free(after);
    free(paths_before);
    free(paths_after);
    env_close(&e);
}

/* auto copies only row groups of at least min(8 MiB, row-group size): with the 6000-byte
 * row-group size, the inputs' row groups qualify once that size is below theirs. */
TEST(test_copy_auto) {
    env e;
    env_open(&e, "auto");
    appends(&e);
    int64_t rgs = live_row_groups(e.t);
    int64_t n_before = 0, n_after = 0;
    char *before = harness_table_rows(e.t, &n_before);
    floe_rewrite_options o;
    floe_rewrite_result r;
    floe_error err;
    /* the table's row-group size (6000) is below most stored row groups: those copy */
    rewrite_opts(&o, -1, 1);
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK(r.fast_copied_row_groups > 0);
    CHECK_EQ_INT(r.fast_copied_row_groups + r.reencoded_row_groups, rgs);
    char *after = harness_table_rows(e.t, &n_after);
    CHECK(before && after && !strcmp(before, after));
    free(after);
    /* with the default 128 MiB row groups nothing is large enough: all re-encoded */
    set_prop(&e, "write.parquet.row-group-size-bytes", "134217728");
    for (int k = 5; k < 8; k++)
        append_rows(&e, k * 1000, 300);
    rgs = live_row_groups(e.t);
    free(before);
    before = harness_table_rows(e.t, &n_before);
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.fast_copied_row_groups, 0);
    CHECK_EQ_INT(r.reencoded_row_groups, rgs);
    after = harness_table_rows(e.t, &n_after);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    env_close(&e);
}

/* floe_pq_raw_row_group_load on its own: a good file loads; another codec or schema is
 * refused as not copyable; a damaged page header or chunk size is corruption, found
 * before anything is copied. */
TEST(test_raw_load_hostile) {
    static const char *S = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                           "{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"long\"},"
                           "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    floe_error err;
    floe_schema *sc = NULL;
    REQUIRE_OK(floe_schema_parse(S, strlen(S), &sc, &err), err);
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.parquet", harness_tmpdir());
    floe_pq_write_options wo;
    floe_pq_write_options_init(&wo);
    wo.page_row_limit = 100;
    wo.output.fsync = false;
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, path, sc, &wo, &w, &err), err);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, sc) == 0);
    for (int64_t i = 0; i < 1000; i++) {
        char t[32];
        int n = snprintf(t, sizeof t, "v%lld", (long long)(i % 37));
        REQUIRE(i % 9 ? floe_colbuf_push_value(&b.cols[0], 0, &i, 8) == 0
                      : floe_colbuf_push_null(&b.cols[0], 0, 0) == 0);
        REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, t, (size_t)n) == 0);
        b.nrows++;
    }
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
    floe_batch_free(&b);
    size_t n = 0;
    uint8_t *bytes = (uint8_t *)harness_read_file(path, &n);
    REQUIRE(bytes != NULL);

    /* intact: loads, with both chunks and their page index */
    floe_pq_reader *r = NULL;
    floe_pq_raw_row_group *g = NULL;
    REQUIRE_OK(floe_pq_reader_open_memory(bytes, n, "raw", NULL, &r, &err), err);
    CHECK_OK(floe_pq_raw_row_group_load(r, 0, sc, FLOE_CODEC_SNAPPY, &g, &err), err);
    CHECK(g && floe_pq_raw_row_group_rows(g) == 1000 && floe_pq_raw_row_group_bytes(g) > 0);
    floe_pq_raw_row_group_free(g);
    g = NULL;
    /* another codec: not copyable; no such row group: invalid */
    CHECK_EQ_INT(floe_pq_raw_row_group_load(r, 0, sc, FLOE_CODEC_ZSTD, &g, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "codec") != NULL);
    CHECK_EQ_INT(floe_pq_raw_row_group_load(r, 1, sc, FLOE_CODEC_SNAPPY, &g, &err),
                 FLOE_EINVALID);
    floe_pq_chunk_info ci;
    floe_pq_reader_chunk_info(r, 0, 1, &ci);
    int64_t at = ci.dictionary_page_offset > 0 ? ci.dictionary_page_offset : ci.data_page_offset;
    floe_pq_reader_close(r);
    r = NULL;

    /* another schema (a string where the file has a long): not copyable */
    static const char *S2 = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                            "{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"string\"},"
                            "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}";
    floe_schema *sc2 = NULL;
    REQUIRE_OK(floe_schema_parse(S2, strlen(S2), &sc2, &err), err);
    REQUIRE_OK(floe_pq_reader_open_memory(bytes, n, "raw", NULL, &r, &err), err);
    CHECK_EQ_INT(floe_pq_raw_row_group_load(r, 0, sc2, FLOE_CODEC_SNAPPY, &g, &err),
                 FLOE_EUNSUPPORTED);
    floe_pq_reader_close(r);
    r = NULL;
    floe_schema_free(sc2);

    /* the second chunk's first page header overwritten: corruption, nothing returned */
    REQUIRE(at > 4 && (size_t)at + 8 < n);
    uint8_t *bad = malloc(n);
    REQUIRE(bad != NULL);
    memcpy(bad, bytes, n);
    memset(bad + at, 0xff, 8);
    REQUIRE_OK(floe_pq_reader_open_memory(bad, n, "bad", NULL, &r, &err), err);
    g = NULL;
    int rc = floe_pq_raw_row_group_load(r, 0, sc, FLOE_CODEC_SNAPPY, &g, &err);
    CHECK(rc == FLOE_ECORRUPT);
    CHECK(g == NULL);
    floe_pq_reader_close(r);
    free(bad);
    free(bytes);
    floe_schema_free(sc);
}

int main(void) {
    RUN(test_copy_option);
    RUN(test_raw_load_hostile);
    RUN(test_copy_matches_reencode);
    RUN(test_copy_full_metrics);
    RUN(test_copy_matches_reencode_prefetch);
    RUN(test_copy_mixed_inputs);
    RUN(test_copy_auto);
    return harness_finish();
}
