/*
 * test_pq_reader.c - the Parquet reader against files other writers wrote, malformed
 * files, floe's own writer (round trips of random schemas and data), pruning by statistics
 * and page index, the filter language, and a replay of the fuzz target over its seeds.
 *
 * Value-for-value comparison with DuckDB / hyparquet is in
 * tests/integration/pq_reader_oracles.sh (it needs node); here every conformance file is
 * read in full in-process, its row count checked, and the *_expect.csv files compared.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"
#include "../../src/cli/cli.h"

/* rows through the CLI's CSV writer (src/cli/csv.c) */
#define TEST_ROWS_CSV ((floe_pq_row_format)-1)

#define FLOE_FUZZ_NO_MAIN
#include "../fuzz/fuzz_parquet.c"

/* Files floe cannot read, with the reason. Must stay empty for the features in scope. */
static const char *const EXPECTED_UNSUPPORTED[] = {NULL};
/* Files whose pages carry a wrong CRC: must fail with a checksum error. */
static const char *const CORRUPT_CHECKSUM[] = {"datapage_v1-corrupt-checksum.parquet",
                                               "rle-dict-uncompressed-corrupt-checksum.parquet",
                                               NULL};
/* Files with pages over the default page cap (1 GiB): refused with FLOE_ELIMIT naming the
 * cap; test_pq_large_page.c and large_page.sh read such pages with the cap raised. */
static const char *const PAGE_OVER_CAP[] = {"large_string_map.brotli.parquet", NULL};

static bool in_list(const char *const *list, const char *name) {
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(list[i], name))
            return true;
    return false;
}

/* Sorted list of *.parquet names in dir (caller frees each and the array). */
static char **list_parquet(const char *dir, size_t *n) {
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t k = 0;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".parquet"))
            continue;
        v = realloc(v, (k + 1) * sizeof *v);
        v[k++] = strdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++)
            if (strcmp(v[i], v[j]) > 0) {
                char *t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    *n = k;
    return v;
}

static void free_list(char **v, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int read_all(const char *path, floe_pq_row_format fmt, floe_buf *out, int64_t *rows,
                    int64_t *num_rows, floe_error *err) {
    floe_pq_reader *r = NULL;
    int rc = floe_pq_reader_open(NULL, path, NULL, &r, err);
    if (rc < 0)
        return rc;
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    if (num_rows) {
        /* repeated_no_annotation.parquet says 0 in FileMetaData.num_rows: trust the row
         * groups, as every reader does */
        *num_rows = 0;
        for (size_t g = 0; g < fi.num_row_groups; g++) {
            floe_pq_row_group_info gi;
            floe_pq_reader_row_group_info(r, g, &gi);
            *num_rows += gi.num_rows;
        }
    }
    if (fmt == TEST_ROWS_CSV) {
        cli_csv cc = {.out = *out};
        rc = floe_pq_reader_dump_rows(r, -1, cli_csv_row, &cc, rows, err);
        *out = cc.out;
    } else {
        rc = floe_pq_reader_dump(r, fmt, -1, harness_buf_sink, out, rows, err);
    }
    floe_pq_reader_close(r);
    return rc;
}

TEST(conformance_files_read_in_full) {
    const char *dir = harness_conformance("parquet-testing/data");
    size_t n;
    char **names = list_parquet(dir, &n);
    REQUIRE(names && n >= 50);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        floe_buf out;
        floe_buf_init(&out, 0);
        floe_error err;
        floe_error_clear(&err);
        int64_t rows = -1, num_rows = -1;
        int rc = read_all(path, FLOE_PQ_ROWS_CANONICAL, &out, &rows, &num_rows, &err);
        if (in_list(CORRUPT_CHECKSUM, names[i])) {
            if (rc != FLOE_ECORRUPT || !strstr(err.msg, "checksum"))
                harness_fail(__FILE__, __LINE__, "%s: want a checksum error, got %d %s",
                             names[i], rc, err.msg);
        } else if (in_list(PAGE_OVER_CAP, names[i])) {
            if (rc != FLOE_ELIMIT || !strstr(err.msg, "-byte cap"))
                harness_fail(__FILE__, __LINE__, "%s: want the page cap, got %d %s",
                             names[i], rc, err.msg);
        } else if (in_list(EXPECTED_UNSUPPORTED, names[i])) {
            if (rc != FLOE_EUNSUPPORTED || !strstr(err.msg, "unsupported: "))
                harness_fail(__FILE__, __LINE__, "%s: listed unsupported, got %d %s",
                             names[i], rc, err.msg);
        } else if (rc != 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s", names[i], err.msg);
        } else {
            if (rows != num_rows)
                harness_fail(__FILE__, __LINE__, "%s: %lld rows printed, footer says %lld",
                             names[i], (long long)rows, (long long)num_rows);
            size_t lines = 0;
            for (size_t k = 0; k < out.len; k++)
                lines += out.data[k] == '\n';
            CHECK_EQ_U64(lines, (uint64_t)rows);
        }
        floe_buf_free(&out);
    }
    free_list(names, n);
}

TEST(corrupt_checksum_files_read_without_crc_check) {
    /* the checksum is the only thing wrong with them */
    for (size_t i = 0; CORRUPT_CHECKSUM[i]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "parquet-testing/data/%s", CORRUPT_CHECKSUM[i]);
        floe_pq_reader_options o = {.skip_crc = true};
        floe_pq_reader *r = NULL;
        floe_error err;
        REQUIRE_OK(floe_pq_reader_open(NULL, harness_conformance(rel), &o, &r, &err), err);
        floe_buf out;
        floe_buf_init(&out, 0);
        int64_t rows = 0;
        CHECK_OK(floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, harness_buf_sink, &out, &rows,
                                     &err),
                 err);
        CHECK(rows > 0);
        floe_buf_free(&out);
        floe_pq_reader_close(r);
    }
}

/* floe_pq_reader_verify_checksums (floe append's check): the corrupt files fail at their
 * page, naming it; every other file passes, those whose pages carry CRCs with pages
 * counted, and nothing is decoded (the page over the decompression cap passes too). */
TEST(verify_checksums_of_conformance_files) {
    const char *dir = harness_conformance("parquet-testing/data");
    size_t n;
    char **names = list_parquet(dir, &n);
    REQUIRE(names && n >= 50);
    size_t with_crc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        floe_pq_reader *r = NULL;
        floe_error err;
        floe_error_clear(&err);
        if (floe_pq_reader_open(NULL, path, NULL, &r, &err) < 0)
            continue; /* conformance_files_read_in_full speaks of those */
        int64_t pages = -1;
        int rc = floe_pq_reader_verify_checksums(r, &pages, &err);
        if (in_list(CORRUPT_CHECKSUM, names[i])) {
            if (rc != FLOE_ECORRUPT || !strstr(err.msg, "checksum mismatch") ||
                !strstr(err.msg, names[i]) || !strstr(err.msg, "page at offset ") ||
                err.offset <= 0)
                harness_fail(__FILE__, __LINE__, "%s: want a checksum error at a page, got "
                             "%d %s", names[i], rc, err.msg);
        } else if (rc != 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s", names[i], err.msg);
        } else if (strstr(names[i], "-checksum")) {
            CHECK(pages > 0);
            with_crc++;
        }
        floe_pq_reader_close(r);
    }
    CHECK(with_crc >= 3);
    free_list(names, n);
}

/* Minimal CSV splitter: fields of one line, unquoted ("" -> "), quoted flag per field. */
static size_t csv_split(const char *line, char fields[][256], bool *quoted, size_t max) {
    size_t n = 0;
    const char *p = line;
    for (;;) {
        if (n == max)
            return n;
        size_t k = 0;
        quoted[n] = *p == '"';
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++;
                if (k < 255)
                    fields[n][k++] = *p;
                p++;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\n') {
                if (k < 255)
                    fields[n][k++] = *p;
                p++;
            }
        }
        fields[n][k] = 0;
        n++;
        if (*p != ',')
            return n;
        p++;
    }
}

TEST(expect_csv_files_match) {
    const char *names[] = {"delta_binary_packed", "delta_byte_array",
                           "delta_encoding_required_column"};
    static char fa[80][256], fb[80][256];
    bool qa[80], qb[80];
    for (size_t f = 0; f < 3; f++) {
        char rel[256], crel[256];
        snprintf(rel, sizeof rel, "parquet-testing/data/%s.parquet", names[f]);
        snprintf(crel, sizeof crel, "parquet-testing/data/%s_expect.csv", names[f]);
        char *path = strdup(harness_conformance(rel));
        size_t elen;
        char *expect = harness_read_file(harness_conformance(crel), &elen);
        REQUIRE(expect);
        floe_buf out;
        floe_buf_init(&out, 0);
        floe_error err;
        int64_t rows = 0;
        int rc = read_all(path, TEST_ROWS_CSV, &out, &rows, NULL, &err);
        CHECK_OK(rc, err);
        REQUIRE(floe_buf_append_byte(&out, 0) == 0);
        /* compare line by line, skipping both header lines */
        char *sa = NULL, *sb = NULL;
        char *la = strtok_r((char *)out.data, "\n", &sa);
        char *lb = strtok_r(expect, "\n", &sb);
        size_t line = 0, mismatches = 0;
        while (la && lb) {
            if (line > 0) {
                size_t na = csv_split(la, fa, qa, 80), nb = csv_split(lb, fb, qb, 80);
                if (na != nb)
                    mismatches++;
                for (size_t k = 0; k < na && k < nb; k++)
                    if (strcmp(fa[k], fb[k]) != 0) {
                        if (mismatches++ < 3)
                            harness_fail(__FILE__, __LINE__, "%s line %zu field %zu: %s != %s",
                                         names[f], line, k, fa[k], fb[k]);
                    }
            }
            line++;
            la = strtok_r(NULL, "\n", &sa);
            lb = strtok_r(NULL, "\n", &sb);
        }
        CHECK(la == NULL && lb == NULL);
        CHECK_EQ_U64(mismatches, 0);
        CHECK_EQ_U64(line - 1, (uint64_t)rows);
        floe_buf_free(&out);
        free(expect);
        free(path);
    }
}

TEST(bad_data_fails_cleanly) {
    const char *dir = harness_conformance("parquet-testing/bad_data");
    size_t n;
    char **names = list_parquet(dir, &n);
    REQUIRE(names && n >= 6);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        floe_buf out;
        floe_buf_init(&out, 0);
        floe_error err;
        floe_error_clear(&err);
        int64_t rows = -1;
        int rc = read_all(path, FLOE_PQ_ROWS_CANONICAL, &out, &rows, NULL, &err);
        if (!strcmp(names[i], "ARROW-GH-43605.parquet")) {
            /* Dictionary indices with RLE bit width 0 over a one-entry dictionary: legal,
             * and DuckDB and DataFusion read it as 21186 zeros. So do we. */
            CHECK_OK(rc, err);
            CHECK_EQ_INT(rows, 21186);
            CHECK(out.len == (size_t)rows * strlen("{\"min_fl\":0}\n"));
        } else {
            if (rc != FLOE_ECORRUPT)
                harness_fail(__FILE__, __LINE__, "%s: want FLOE_ECORRUPT, got %d (%s)",
                             names[i], rc, err.msg);
            CHECK(strstr(err.msg, names[i]) != NULL); /* the message names the file */
        }
        floe_buf_free(&out);
    }
    free_list(names, n);
}

TEST(fuzz_target_replays_seeds) {
    const char *subdirs[] = {"parquet-testing/data", "parquet-testing/bad_data"};
    size_t total = 0, ok = 0;
    for (size_t s = 0; s < 2; s++) {
        const char *dir = harness_conformance(subdirs[s]);
        size_t n;
        char **names = list_parquet(dir, &n);
        REQUIRE(names);
        for (size_t i = 0; i < n; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            size_t len;
            char *data = harness_read_file(path, &len);
            REQUIRE(data);
            ok += floe_fuzz_parquet_one((const uint8_t *)data, len) == 0;
            /* truncated and bit-flipped variants too */
            if (len > 64) {
                (void)floe_fuzz_parquet_one((const uint8_t *)data, len / 2);
                for (size_t k = 0; k < 8; k++) {
                    size_t at = (k * 7919 + len / 3) % len;
                    data[at] ^= (char)(1u << (k & 7));
                    (void)floe_fuzz_parquet_one((const uint8_t *)data, len);
                    data[at] ^= (char)(1u << (k & 7));
                }
            }
            free(data);
            total++;
        }
        free_list(names, n);
    }
    CHECK(total >= 60);
    CHECK(ok >= total - 10); /* the corrupt ones */
}

TEST(encrypted_and_not_parquet_are_refused) {
    const char *dir = harness_tmpdir();
    size_t len;
    char *data = harness_read_file(harness_conformance("parquet-testing/data/alltypes_plain.parquet"),
                                   &len);
    REQUIRE(data && len > 12);
    char path[1024];
    snprintf(path, sizeof path, "%s/enc.parquet", dir);
    memcpy(data + len - 4, "PARE", 4);
    REQUIRE(harness_write_file(path, data, len) == 0);
    floe_pq_reader *r = NULL;
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_pq_reader_open(NULL, path, NULL, &r, &err), FLOE_EENCRYPTED);
    CHECK(strstr(err.msg, "encrypted Parquet is not supported") != NULL);
    CHECK(r == NULL);
    memcpy(data + len - 4, "PAR2", 4);
    CHECK_EQ_INT(floe_pq_reader_open_memory((const uint8_t *)data, len, "x", NULL, &r, &err),
                 FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_pq_reader_open_memory((const uint8_t *)data, 7, "x", NULL, &r, &err),
                 FLOE_ECORRUPT);
    /* footer length pointing before the start */
    memcpy(data + len - 4, "PAR1", 4);
    floe_store_le32((uint8_t *)data + len - 8, (uint32_t)len);
    CHECK_EQ_INT(floe_pq_reader_open_memory((const uint8_t *)data, len, "x", NULL, &r, &err),
                 FLOE_ECORRUPT);
    free(data);
}

TEST(schema_mapping_of_legacy_layouts) {
    struct {
        const char *file, *json;
    } cases[] = {
        {"old_list_structure.parquet", "\"type\":\"list\""},
        {"repeated_primitive_no_list.parquet", "\"element-required\":true"},
        {"int96_from_spark.parquet", "\"type\":\"timestamp\""},
        {"float16_zeros_and_nans.parquet", "\"type\":\"float\""},
        {"byte_array_decimal.parquet", "decimal(4, 2)"},
        {"incorrect_map_schema.parquet", "\"type\":\"map\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "parquet-testing/data/%s", cases[i].file);
        floe_pq_reader *r = NULL;
        floe_error err;
        REQUIRE_OK(floe_pq_reader_open(NULL, harness_conformance(rel), NULL, &r, &err), err);
        const floe_schema *s = NULL;
        CHECK_OK(floe_pq_reader_iceberg_schema(r, &s, &err), err);
        if (s) {
            char *txt = floe_schema_to_json(s, false);
            if (!txt || !strstr(txt, cases[i].json))
                harness_fail(__FILE__, __LINE__, "%s: %s lacks %s", cases[i].file,
                             txt ? txt : "(null)", cases[i].json);
            floe_free(txt);
        }
        floe_pq_reader_close(r);
    }
    /* a map without values cannot be an Iceberg map, but its rows still read */
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, harness_conformance("parquet-testing/data/map_no_value.parquet"),
                                   NULL, &r, &err), err);
    const floe_schema *s = NULL;
    CHECK_EQ_INT(floe_pq_reader_iceberg_schema(r, &s, &err), FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "unsupported: map my_map_no_v") != NULL);
    const char *cols[] = {"my_map_no_v"};
    CHECK_OK(floe_pq_reader_select_paths(r, cols, 1, &err), err);
    floe_buf out;
    floe_buf_init(&out, 0);
    CHECK_OK(floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, 1, harness_buf_sink, &out, NULL, &err),
             err);
    CHECK(out.len > 0 &&
          !strncmp((char *)out.data, "{\"my_map_no_v\":[[1,null],[2,null],[3,null]]}\n", out.len));
    floe_buf_free(&out);
    floe_pq_reader_close(r);
}

TEST(int96_beyond_nanosecond_range) {
    /* Spark wrote 290000-12-30T23:00 (julian day / nanos): outside int64 nanoseconds, which
     * is where DuckDB and hyparquet wrap; floe converts to micros and keeps it. */
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err;
    int64_t rows;
    CHECK_OK(read_all(harness_conformance("parquet-testing/data/int96_from_spark.parquet"),
                      FLOE_PQ_ROWS_CANONICAL, &out, &rows, NULL, &err), err);
    REQUIRE(floe_buf_append_byte(&out, 0) == 0);
    CHECK(strstr((char *)out.data, "{\"a\":\"+290000-12-30T23:00:00.000000000\"}\n") != NULL);
    CHECK(strstr((char *)out.data, "{\"a\":\"2024-01-01T20:34:56.123456000\"}\n") != NULL);
    floe_buf_free(&out);
}

TEST(projection_by_path_and_id) {
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, harness_conformance("parquet-testing/data/nested_lists.snappy.parquet"),
                                   NULL, &r, &err), err);
    const char *cols[] = {"b"};
    CHECK_OK(floe_pq_reader_select_paths(r, cols, 1, &err), err);
    floe_buf out;
    floe_buf_init(&out, 0);
    CHECK_OK(floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, harness_buf_sink, &out, NULL, &err),
             err);
    CHECK(out.len == 3 * strlen("{\"b\":1}\n"));
    const char *bad[] = {"nope"};
    CHECK_EQ_INT(floe_pq_reader_select_paths(r, bad, 1, &err), FLOE_ENOTFOUND);
    floe_buf_free(&out);
    floe_pq_reader_close(r);
}

/* ---- round trips through floe's writer ------------------------------------------------- */

static int32_t next_id;

static void gen_type(floe_schema *s, floe_field *f, int depth) {
    static const floe_type_id prims[] = {
        FLOE_TYPE_BOOLEAN, FLOE_TYPE_INT, FLOE_TYPE_LONG, FLOE_TYPE_FLOAT, FLOE_TYPE_DOUBLE,
        FLOE_TYPE_DECIMAL, FLOE_TYPE_DATE, FLOE_TYPE_TIME, FLOE_TYPE_TIMESTAMP,
        FLOE_TYPE_TIMESTAMPTZ, FLOE_TYPE_STRING, FLOE_TYPE_UUID, FLOE_TYPE_FIXED,
        FLOE_TYPE_BINARY};
    uint32_t k = harness_rndn(depth >= 3 ? 14 : 18);
    if (k < 14) {
        f->type = prims[k];
        if (f->type == FLOE_TYPE_DECIMAL) {
            f->precision = 1 + (int32_t)harness_rndn(38);
            f->scale = (int32_t)harness_rndn((uint32_t)f->precision + 1);
        }
        if (f->type == FLOE_TYPE_FIXED)
            f->length = 1 + (int32_t)harness_rndn(20);
        return;
    }
    if (k < 15 + (depth < 2)) {
        f->type = FLOE_TYPE_STRUCT;
        f->nchildren = 1 + harness_rndn(3);
    } else if (k < 17) {
        f->type = FLOE_TYPE_LIST;
        f->nchildren = 1;
    } else {
        f->type = FLOE_TYPE_MAP;
        f->nchildren = 2;
    }
    f->children = floe_arena_alloc(&s->arena, f->nchildren * sizeof *f->children);
    for (size_t i = 0; i < f->nchildren; i++) {
        floe_field *c = &f->children[i];
        c->id = next_id++;
        char nm[16];
        snprintf(nm, sizeof nm, "f%d", c->id);
        c->name = f->type == FLOE_TYPE_LIST ? "element"
                  : f->type == FLOE_TYPE_MAP ? (i ? "value" : "key")
                                             : floe_arena_strdup(&s->arena, nm);
        c->required = (f->type == FLOE_TYPE_MAP && i == 0) || harness_rndn(3) == 0;
        if (f->type == FLOE_TYPE_MAP && i == 0) {
            c->type = harness_rndn(2) ? FLOE_TYPE_STRING : FLOE_TYPE_LONG;
            continue;
        }
        gen_type(s, c, depth + 1);
    }
}

static floe_schema *random_schema(void) {
    floe_schema *s = floe_schema_new();
    size_t n = 1 + harness_rndn(5);
    next_id = 1;
    s->root.type = FLOE_TYPE_STRUCT;
    s->root.children = floe_arena_alloc(&s->arena, n * sizeof *s->root.children);
    s->root.nchildren = n;
    for (size_t i = 0; i < n; i++) {
        floe_field *f = &s->root.children[i];
        f->id = next_id++;
        char nm[16];
        snprintf(nm, sizeof nm, "c%d", f->id);
        f->name = floe_arena_strdup(&s->arena, nm);
        f->required = harness_rndn(3) == 0;
        gen_type(s, f, 1);
    }
    floe_error err;
    if (floe_schema_finish(s, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "random schema: %s", err.msg);
        floe_schema_free(s);
        return NULL;
    }
    return s;
}

static void push_nulls(floe_batch *b, const floe_field *f, int16_t def, int16_t rep) {
    if (f->leaf >= 0) {
        floe_colbuf_push_null(&b->cols[f->leaf], def, rep);
        return;
    }
    for (size_t i = 0; i < f->nchildren; i++)
        push_nulls(b, &f->children[i], def, rep);
}

static void gen_value(floe_batch *b, const floe_field *f, int16_t rep) {
    if (!f->required && harness_rndn(4) == 0) {
        push_nulls(b, f, (int16_t)(f->def_level - 1), rep);
        return;
    }
    if (f->leaf >= 0) {
        floe_colbuf *c = &b->cols[f->leaf];
        uint8_t v[64];
        for (size_t i = 0; i < sizeof v; i++)
            v[i] = (uint8_t)harness_rnd();
        size_t n = (size_t)c->width;
        if (f->type == FLOE_TYPE_BOOLEAN)
            v[0] &= 1;
        if (f->type == FLOE_TYPE_DECIMAL && f->precision <= 18) {
            int64_t x = (int64_t)(harness_rnd() % 1000) - 500;
            if (c->width == 4)
                floe_store_le32(v, (uint32_t)x);
            else
                floe_store_le64(v, (uint64_t)x);
        } else if (f->type == FLOE_TYPE_DECIMAL) {
            memset(v, (v[0] & 1) ? 0xff : 0, 4); /* keep it well inside the precision */
        }
        if (f->type == FLOE_TYPE_STRING || f->type == FLOE_TYPE_BINARY) {
            n = harness_rndn(12);
            for (size_t i = 0; i < n; i++)
                v[i] = f->type == FLOE_TYPE_STRING ? (uint8_t)('a' + harness_rndn(6)) : v[i];
        }
        if (f->type == FLOE_TYPE_DATE)
            floe_store_le32(v, (uint32_t)(int32_t)(harness_rndn(40000) - 20000));
        if (f->type == FLOE_TYPE_TIME)
            floe_store_le64(v, harness_rnd() % 86400000000ull);
        floe_colbuf_push_value(c, rep, v, n);
        return;
    }
    if (f->type == FLOE_TYPE_STRUCT) {
        for (size_t i = 0; i < f->nchildren; i++)
            gen_value(b, &f->children[i], rep);
        return;
    }
    /* list or map: 0..3 elements */
    uint32_t n = harness_rndn(4);
    if (n == 0) {
        push_nulls(b, f, f->def_level, rep);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int16_t r = i == 0 ? rep : f->children[0].rep_level;
        for (size_t k = 0; k < f->nchildren; k++)
            gen_value(b, &f->children[k], r);
    }
}

static bool colbufs_equal(const floe_colbuf *a, const floe_colbuf *b, char *why, size_t wn) {
    if (a->nlevels != b->nlevels || a->nvalues != b->nvalues || a->values_len != b->values_len) {
        snprintf(why, wn, "counts levels %zu/%zu values %zu/%zu bytes %zu/%zu", a->nlevels,
                 b->nlevels, a->nvalues, b->nvalues, a->values_len, b->values_len);
        return false;
    }
    if (a->max_def != b->max_def || a->max_rep != b->max_rep) {
        snprintf(why, wn, "max levels");
        return false;
    }
    if (a->max_def && memcmp(a->def, b->def, a->nlevels * 2)) {
        snprintf(why, wn, "def levels");
        return false;
    }
    if (a->max_rep && memcmp(a->rep, b->rep, a->nlevels * 2)) {
        snprintf(why, wn, "rep levels");
        return false;
    }
    if (a->values_len && memcmp(a->values, b->values, a->values_len)) {
        snprintf(why, wn, "values");
        return false;
    }
    if (a->width == 0 && memcmp(a->offsets, b->offsets, (a->nvalues + 1) * 4)) {
        snprintf(why, wn, "offsets");
        return false;
    }
    return true;
}

TEST(round_trip_random_schemas_through_the_writer) {
    const char *dir = harness_tmpdir();
    int tested = 0;
    for (int iter = 0; iter < 60; iter++) {
        floe_schema *s = random_schema();
        REQUIRE(s);
        floe_batch in;
        REQUIRE(floe_batch_init(&in, s) == 0);
        size_t nrows = 1 + harness_rndn(300);
        for (size_t row = 0; row < nrows; row++)
            for (size_t i = 0; i < s->root.nchildren; i++)
                gen_value(&in, &s->root.children[i], 0);
        in.nrows = nrows;
        char path[1024];
        snprintf(path, sizeof path, "%s/rt%d.parquet", dir, iter);
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.output.fsync = false;
        o.page_row_limit = 1 + harness_rndn(100);
        o.dictionary = harness_rndn(2);
        floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_SNAPPY, FLOE_CODEC_ZSTD,
                               FLOE_CODEC_GZIP};
        o.codec = codecs[harness_rndn(4)];
        floe_pq_writer *w = NULL;
        floe_error err;
        floe_error_clear(&err);
        int rc = floe_pq_writer_open(NULL, path, s, &o, &w, &err);
        if (rc == 0)
            rc = floe_pq_writer_write_batch(w, &in, &err);
        if (rc == 0) {
            rc = floe_pq_writer_close(w, NULL, &err);
        } else if (w) {
            floe_pq_writer_abort(w);
        }
        char *sj = floe_schema_to_json(s, false);
        if (rc < 0) {
            harness_fail(__FILE__, __LINE__, "iter %d: writer: %s (schema %s)", iter, err.msg, sj);
            floe_free(sj);
            floe_batch_free(&in);
            floe_schema_free(s);
            continue;
        }
        floe_pq_reader *r = NULL;
        rc = floe_pq_reader_open(NULL, path, NULL, &r, &err);
        CHECK_OK(rc, err);
        if (rc == 0) {
            const floe_schema *rs = NULL;
            CHECK_OK(floe_pq_reader_iceberg_schema(r, &rs, &err), err);
            char *rj = rs ? floe_schema_to_json(rs, false) : NULL;
            if (!rj || strcmp(rj, sj) != 0)
                harness_fail(__FILE__, __LINE__, "iter %d: schema %s != %s", iter,
                             rj ? rj : "(none)", sj);
            floe_free(rj);
            /* concatenate row groups (the writer may have split) and compare */
            floe_batch got;
            REQUIRE(floe_batch_init(&got, s) == 0);
            const floe_pq_rowset *set = NULL;
            int64_t rows = 0;
            while ((rc = floe_pq_reader_next(r, &set, &err)) > 0) {
                rows += set->nrows;
                for (size_t c = 0; c < set->ncols; c++) {
                    const floe_colbuf *src = &set->cols[c];
                    floe_colbuf *dst = &got.cols[c];
                    size_t vi = 0;
                    for (size_t l = 0; l < src->nlevels; l++) {
                        int16_t d = src->max_def ? src->def[l] : 0;
                        int16_t rp = src->max_rep ? src->rep[l] : 0;
                        if (d == src->max_def) {
                            const uint8_t *p = src->width ? src->values + vi * (size_t)src->width
                                                          : src->values + src->offsets[vi];
                            size_t n = src->width ? (size_t)src->width
                                                  : src->offsets[vi + 1] - src->offsets[vi];
                            floe_colbuf_push_value(dst, rp, p, n);
                            vi++;
                        } else {
                            floe_colbuf_push_null(dst, d, rp);
                        }
                    }
                }
            }
            CHECK_OK(rc < 0 ? rc : 0, err);
            CHECK_EQ_INT(rows, (int64_t)nrows);
            for (size_t c = 0; c < s->nleaves; c++) {
                char why[160];
                if (!colbufs_equal(&in.cols[c], &got.cols[c], why, sizeof why))
                    harness_fail(__FILE__, __LINE__, "iter %d column %zu: %s (schema %s)", iter,
                                 c, why, sj);
            }
            floe_batch_free(&got);
            floe_pq_reader_close(r);
            tested++;
        }
        floe_free(sj);
        floe_batch_free(&in);
        floe_schema_free(s);
    }
    CHECK(tested >= 50);
}

/* ---- pruning -------------------------------------------------------------------------- */

static const char *write_pruning_file(void) {
    static char path[1024];
    const char *dir = harness_tmpdir();
    snprintf(path, sizeof path, "%s/prune.parquet", dir);
    floe_schema *s = NULL;
    floe_error err;
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
                     "{\"id\":3,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
                     "{\"id\":4,\"name\":\"v\",\"required\":false,\"type\":\"double\"}]}";
    if (floe_schema_parse(js, strlen(js), &s, &err) < 0)
        return NULL;
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.page_row_limit = 250;
    floe_pq_writer *w = NULL;
    if (floe_pq_writer_open(NULL, path, s, &o, &w, &err) < 0) {
        floe_schema_free(s);
        return NULL;
    }
    floe_batch b;
    floe_batch_init(&b, s);
    const char *kinds[] = {"click", "view", "buy"};
    int rc = 0;
    for (int64_t i = 0; i < 20000 && rc == 0; i++) {
        floe_colbuf_push_value(&b.cols[0], 0, &i, 8);
        int64_t ts = 1767225600000000LL + i * 1000000LL; /* 2026-01-01 + i s */
        floe_colbuf_push_value(&b.cols[1], 0, &ts, 8);
        if (i % 7 == 0)
            floe_colbuf_push_null(&b.cols[2], 0, 0);
        else
            floe_colbuf_push_value(&b.cols[2], 0, kinds[i % 3], strlen(kinds[i % 3]));
        double v = (double)(i % 100) / 4;
        if (i % 1000 == 999)
            v = NAN;
        floe_colbuf_push_value(&b.cols[3], 0, &v, 8);
        b.nrows++;
        if ((i + 1) % 2000 == 0) {
            rc = floe_pq_writer_write_batch(w, &b, &err);
            if (rc == 0)
                rc = floe_pq_writer_flush(w, &err);
            floe_batch_clear(&b);
        }
    }
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else
        floe_pq_writer_abort(w);
    floe_batch_free(&b);
    floe_schema_free(s);
    return rc == 0 ? path : NULL;
}

static int64_t dump_filtered(const char *path, const char *expr, bool prune, floe_buf *out,
                             floe_pq_read_stats *st) {
    floe_pq_reader *r = NULL;
    floe_error err;
    if (floe_pq_reader_open(NULL, path, NULL, &r, &err) < 0)
        return -1;
    int64_t rows = -1;
    if (floe_pq_reader_set_filter(r, expr, &err) == 0) {
        floe_pq_reader_set_pruning(r, prune, prune);
        if (floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, harness_buf_sink, out, &rows,
                                &err) < 0)
            rows = -1;
    }
    if (rows < 0)
        harness_fail(__FILE__, __LINE__, "%s: %s", expr, err.msg);
    if (st)
        floe_pq_reader_stats(r, st);
    floe_pq_reader_close(r);
    return rows;
}

TEST(pruning_reads_only_what_can_match) {
    const char *path = write_pruning_file();
    REQUIRE(path);
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    CHECK_EQ_U64(fi.num_row_groups, 10);
    floe_pq_reader_close(r);

    floe_buf a, b;
    floe_buf_init(&a, 0);
    floe_buf_init(&b, 0);
    floe_pq_read_stats st, full;
    /* a range inside one row group, spanning three pages */
    int64_t n = dump_filtered(path, "id >= 4100 AND id < 4600", true, &a, &st);
    CHECK_EQ_INT(n, 500);
    CHECK_EQ_INT(st.row_groups_read, 1);
    CHECK_EQ_INT(st.row_groups_skipped, 9);
    CHECK(st.pages_skipped > 0);
    CHECK(st.pages_read <= 4 * 3); /* 3 pages of each of the 4 columns */
    CHECK_EQ_INT(st.rows_read, 750); /* the three pages' rows; the row filter keeps 500 */
    int64_t m = dump_filtered(path, "id >= 4100 AND id < 4600", false, &b, &full);
    CHECK_EQ_INT(m, 500);
    CHECK_EQ_INT(full.row_groups_read, 10);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);

    /* timestamps from ISO strings; OR of two ranges; nothing matches */
    const char *exprs[] = {
        "ts >= '2026-01-01T01:00:00Z' AND ts < '2026-01-01T01:00:10Z'",
        "id < 10 OR id > 19990",
        "NOT (id >= 10) OR (id BETWEEN_IS_NOT_AN_OPERATOR)",
        "id IN (5, 15000, 19999) AND kind IS NOT NULL",
        "kind = 'buy' AND id <= 30",
        "kind IS NULL AND id < 50",
        "v > 24 AND id < 3000",
        "v != 1.25 AND id < 1000 AND NOT kind IN ('click', 'view')",
        "id = -1",
        "(id > 100 AND id < 120) OR NOT (id > 50)",
        "kind LIKE 'bu%' AND id <= 30",
        "NOT (kind NOT LIKE 'vi%') AND id < 300",
        "kind NOT LIKE 'c%' AND id < 1000 AND NOT kind IN ('view')",
        "kind LIKE 'zz%'",
        "id LIKE '1%'",
    };
    int64_t want[] = {10, 19, -2, 2, 9, 8, -1, -1, 0, 70, 9, -1, -1, 0, -2};
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        floe_pq_reader *rr = NULL;
        REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &rr, &err), err);
        int prc = floe_pq_reader_set_filter(rr, exprs[i], &err);
        floe_pq_reader_close(rr);
        if (want[i] == -2) {
            CHECK_EQ_INT(prc, FLOE_EINVALID);
            continue;
        }
        CHECK_OK(prc, err);
        a.len = b.len = 0;
        n = dump_filtered(path, exprs[i], true, &a, &st);
        m = dump_filtered(path, exprs[i], false, &b, NULL);
        if (want[i] >= 0 && n != want[i])
            harness_fail(__FILE__, __LINE__, "%s: %lld rows, want %lld", exprs[i], (long long)n,
                         (long long)want[i]);
        if (n != m || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
            harness_fail(__FILE__, __LINE__, "%s: pruned %lld rows != full scan %lld", exprs[i],
                         (long long)n, (long long)m);
    }
    /* v > 24 must still find the NaN rows (NaN sorts above every number) */
    a.len = 0;
    n = dump_filtered(path, "v > 30", true, &a, NULL);
    CHECK_EQ_INT(n, 20); /* ids 999, 1999, ... have v = NaN */
    a.len = 0;
    n = dump_filtered(path, "id = -1", true, &a, &st);
    CHECK_EQ_INT(st.row_groups_read, 0);
    CHECK_EQ_INT(st.row_groups_skipped, 10);
    floe_buf_free(&a);
    floe_buf_free(&b);
}

TEST(filter_errors) {
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, harness_conformance("parquet-testing/data/nested_lists.snappy.parquet"),
                                   NULL, &r, &err), err);
    CHECK_EQ_INT(floe_pq_reader_set_filter(r, "b = ", &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_set_filter(r, "b = 'x'", &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_set_filter(r, "zz = 1", &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_pq_reader_set_filter(r, "a.list.element.list.element.list.element = 'a'",
                                           &err), FLOE_EUNSUPPORTED);
    CHECK_EQ_INT(floe_pq_reader_set_filter(r, "(b = 1", &err), FLOE_EINVALID);
    CHECK_OK(floe_pq_reader_set_filter(r, "b = 1 AND NOT (b IS NULL)", &err), err);
    floe_pq_reader_close(r);
}

/* ---- the cap on one read over all its columns ----------------------------------------- */

#define CAP_ROWS 500000 /* 4 MB of longs per column, 16 MB in the row group */

static const char *write_longs_file(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/longs4.parquet", harness_tmpdir());
    floe_schema *s = NULL;
    floe_error err;
    const char *js = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                     "{\"id\":1,\"name\":\"c1\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":2,\"name\":\"c2\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":3,\"name\":\"c3\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":4,\"name\":\"c4\",\"required\":true,\"type\":\"long\"}]}";
    if (floe_schema_parse(js, strlen(js), &s, &err) < 0)
        return NULL;
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    floe_pq_writer *w = NULL;
    if (floe_pq_writer_open(NULL, path, s, &o, &w, &err) < 0) {
        floe_schema_free(s);
        return NULL;
    }
    floe_batch b;
    floe_batch_init(&b, s);
    for (int64_t i = 0; i < CAP_ROWS; i++) {
        for (int c = 0; c < 4; c++) {
            /* distinct, scattered: pages of about 8 bytes a value */
            uint64_t z = ((uint64_t)i * 4 + (uint64_t)c + 1) * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            int64_t v = (int64_t)(z ^ (z >> 27));
            floe_colbuf_push_value(&b.cols[c], 0, &v, 8);
        }
        b.nrows++;
    }
    int rc = floe_pq_writer_write_batch(w, &b, &err);
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else
        floe_pq_writer_abort(w);
    floe_batch_free(&b);
    floe_schema_free(s);
    return rc == 0 ? path : NULL;
}

/* Each page is under the page cap, but the pages of one row group read over its four
 * columns pass max_read_bytes: the read fails before the page that would pass it is
 * decompressed, naming the file, row group, column, page offset and cap. The reader
 * read the whole row group, whatever the number of columns, before. */
TEST(read_cap_over_columns) {
    const char *path = write_longs_file();
    REQUIRE(path != NULL);
    floe_pq_reader_options o = {.max_read_bytes = 6 << 20};
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, &o, &r, &err), err);
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    REQUIRE(fi.num_row_groups == 1);
    const floe_pq_rowset *rs;
    CHECK_EQ_INT(floe_pq_reader_read_row_group(r, 0, &rs, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "longs4.parquet: row group 0: column c2: page at byte ") != NULL);
    CHECK(strstr(err.msg, "past 6291456 bytes") != NULL);
    CHECK(strstr(err.msg, "--max-read-size") != NULL);
    /* a read of fewer rows is a read of its own, under the cap */
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 0, 1000, 100000, &rs, &err), 0);
    CHECK_EQ_INT(rs->nrows, 100000);
    floe_pq_reader_close(r);
    o.max_read_bytes = 32 << 20;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, &o, &r, &err), err);
    REQUIRE_OK(floe_pq_reader_read_row_group(r, 0, &rs, &err), err);
    CHECK_EQ_INT(rs->nrows, CAP_ROWS);
    /* the count starts again at every read */
    REQUIRE_OK(floe_pq_reader_read_row_group(r, 0, &rs, &err), err);
    CHECK_EQ_INT(rs->nrows, CAP_ROWS);
    floe_pq_reader_close(r);
}

int main(void) {
    harness_rng_seed(0x9e3779b97f4a7c15ull);
    RUN(conformance_files_read_in_full);
    RUN(corrupt_checksum_files_read_without_crc_check);
    RUN(verify_checksums_of_conformance_files);
    RUN(expect_csv_files_match);
    RUN(bad_data_fails_cleanly);
    RUN(fuzz_target_replays_seeds);
    RUN(encrypted_and_not_parquet_are_refused);
    RUN(schema_mapping_of_legacy_layouts);
    RUN(int96_beyond_nanosecond_range);
    RUN(projection_by_path_and_id);
    RUN(round_trip_random_schemas_through_the_writer);
    RUN(pruning_reads_only_what_can_match);
    RUN(filter_errors);
    RUN(read_cap_over_columns);
    return harness_finish();
}
