/*
 * test_pq_read_rows.c - floe_pq_reader_read_rows: a row group read in slices gives the
 * same levels and values as the row group read whole (nested and repeated columns,
 * dictionary and plain pages, with and without an offset index), and bad ranges fail.
 * Without an offset index consecutive slices pick up where the previous one stopped, so
 * the pages decoded stay about those of one whole read (not one whole read per slice).
 * The same holds on every readable file of the parquet-testing conformance corpus.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "harness.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":4,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":5,\"name\":\"v\",\"required\":false,\"type\":\"double\"}]}";

/* rows rows in one row group, pages of page_rows rows */
static int write_file(const char *path, const floe_schema *s, int64_t rows, size_t page_rows,
                      bool page_index, bool dictionary) {
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.page_row_limit = page_rows;
    o.write_page_index = page_index;
    o.dictionary = dictionary;
    floe_pq_writer *w = NULL;
    floe_error err;
    if (floe_pq_writer_open(NULL, path, s, &o, &w, &err) < 0)
        return -1;
    floe_batch b;
    floe_batch_init(&b, s);
    const char *kinds[] = {"click", "view", "buy", "a much longer kind value"};
    for (int64_t i = 0; i < rows; i++) {
        floe_colbuf_push_value(&b.cols[0], 0, &i, 8);
        if (i % 5 == 0)
            floe_colbuf_push_null(&b.cols[1], 0, 0);
        else
            floe_colbuf_push_value(&b.cols[1], 0, kinds[i % 4], strlen(kinds[i % 4]));
        /* tags: null, empty, or 1..3 elements (some null) */
        floe_colbuf *t = &b.cols[2];
        if (i % 6 == 0) {
            floe_colbuf_push_null(t, 0, 0);
        } else if (i % 6 == 1) {
            floe_colbuf_push_null(t, 1, 0);
        } else {
            for (int k = 0; k < (int)(i % 3) + 1; k++) {
                char tag[32];
                int n = snprintf(tag, sizeof tag, "t%lld", (long long)(i * 31 + k) % 997);
                if (k == 1 && i % 4 == 0)
                    floe_colbuf_push_null(t, 2, k ? 1 : 0);
                else
                    floe_colbuf_push_value(t, k ? 1 : 0, tag, (size_t)n);
            }
        }
        if (i % 7 == 3) {
            floe_colbuf_push_null(&b.cols[3], 0, 0);
        } else {
            double v = (double)i / 8;
            floe_colbuf_push_value(&b.cols[3], 0, &v, 8);
        }
        b.nrows++;
    }
    int rc = floe_pq_writer_write_batch(w, &b, &err);
    if (rc == 0)
        rc = floe_pq_writer_close(w, NULL, &err);
    else
        floe_pq_writer_abort(w);
    if (rc < 0)
        harness_fail(__FILE__, __LINE__, "write %s: %s", path, err.msg);
    floe_batch_free(&b);
    return rc;
}

/* Append the slots of src to dst (same leaf layout). */
static void append_colbuf(floe_colbuf *dst, const floe_colbuf *src) {
    size_t vi = 0;
    for (size_t l = 0; l < src->nlevels; l++) {
        int16_t d = src->max_def ? src->def[l] : 0;
        int16_t rp = src->max_rep ? src->rep[l] : 0;
        if (d == src->max_def) {
            const uint8_t *p = src->width ? src->values + vi * (size_t)src->width
                                          : src->values + src->offsets[vi];
            size_t n = src->width ? (size_t)src->width : src->offsets[vi + 1] - src->offsets[vi];
            floe_colbuf_push_value(dst, rp, p, n);
            vi++;
        } else {
            floe_colbuf_push_null(dst, d, rp);
        }
    }
}

static bool same(const floe_colbuf *a, const floe_colbuf *b) {
    if (a->nlevels != b->nlevels || a->nvalues != b->nvalues || a->values_len != b->values_len)
        return false;
    if (a->nlevels && a->max_def && memcmp(a->def, b->def, a->nlevels * sizeof *a->def))
        return false;
    if (a->nlevels && a->max_rep && memcmp(a->rep, b->rep, a->nlevels * sizeof *a->rep))
        return false;
    if (a->values_len && memcmp(a->values, b->values, a->values_len))
        return false;
    return true;
}

/* Read the file's row group 0 whole, then in slices of `step` rows; compare. */
static void check_slices(const char *path, const floe_schema *s, int64_t rows, int64_t step,
                         bool want_locations) {
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &r, &err), err);
    CHECK(floe_pq_reader_has_page_locations(r, 0) == want_locations);
    CHECK(!floe_pq_reader_has_page_locations(r, 1)); /* no such row group */
    floe_batch whole, sliced;
    REQUIRE(floe_batch_init(&whole, s) == 0 && floe_batch_init(&sliced, s) == 0);
    const floe_pq_rowset *rs = NULL;
    REQUIRE_OK(floe_pq_reader_read_row_group(r, 0, &rs, &err), err);
    CHECK_EQ_INT(rs->nrows, rows);
    REQUIRE(rs->ncols == s->nleaves);
    for (size_t c = 0; c < rs->ncols; c++)
        append_colbuf(&whole.cols[c], &rs->cols[c]);
    floe_pq_read_stats st0, st1;
    floe_pq_reader_stats(r, &st0);
    int64_t whole_pages = st0.pages_read, slices = 0;
    int64_t got = 0;
    for (int64_t first = 0; first < rows; first += step) {
        int64_t n = rows - first < step ? rows - first : step;
        int rc = floe_pq_reader_read_rows(r, 0, first, n, &rs, &err);
        CHECK_OK(rc, err);
        if (rc < 0)
            break;
        CHECK_EQ_INT(rs->nrows, n);
        slices++;
        got += rs->nrows;
        for (size_t c = 0; c < rs->ncols; c++)
            append_colbuf(&sliced.cols[c], &rs->cols[c]);
    }
    CHECK_EQ_INT(got, rows);
    for (size_t c = 0; c < s->nleaves; c++)
        if (!same(&whole.cols[c], &sliced.cols[c]))
            harness_fail(__FILE__, __LINE__, "%s: column %zu differs (step %lld)", path, c,
                         (long long)step);
    floe_pq_reader_stats(r, &st1);
    /* with page locations a slice fetches only its pages: some are skipped */
    if (want_locations && step < rows / 4)
        CHECK(st1.pages_skipped > st0.pages_skipped);
    /* without them each slice resumes where the last one stopped: per column at most the
     * page a slice ends in and one page past it are decoded again */
    if (!want_locations &&
        st1.pages_read - st0.pages_read > whole_pages + 2 * slices * (int64_t)s->nleaves)
        harness_fail(__FILE__, __LINE__, "%s: step %lld: %lld pages decoded for %lld slices, "
                     "a whole read decodes %lld", path, (long long)step,
                     (long long)(st1.pages_read - st0.pages_read), (long long)slices,
                     (long long)whole_pages);
    /* bad ranges */
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 0, -1, 5, &rs, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 0, 0, 0, &rs, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 0, rows - 1, 2, &rs, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 0, 1, INT64_MAX, &rs, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_pq_reader_read_rows(r, 1, 0, 1, &rs, &err), FLOE_EINVALID);
    /* the last row alone */
    REQUIRE_OK(floe_pq_reader_read_rows(r, 0, rows - 1, 1, &rs, &err), err);
    CHECK_EQ_INT(rs->nrows, 1);
    int64_t last = 0;
    memcpy(&last, rs->cols[0].values, 8);
    CHECK_EQ_INT(last, rows - 1);
    floe_batch_free(&whole);
    floe_batch_free(&sliced);
    floe_pq_reader_close(r);
}

TEST(slices_equal_the_whole_row_group) {
    floe_schema *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err), err);
    const char *dir = harness_tmpdir();
    char path[1024];
    const int64_t rows = 5003;
    struct {
        size_t page_rows;
        bool index, dict;
    } cases[] = {{100, true, true}, {333, true, false}, {7, true, true},  {250, false, true},
                 {333, false, false}, {7, false, true}};
    int64_t steps[] = {1, 99, 100, 101, 1000, 2500, 5003, 6000};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(path, sizeof path, "%s/rr%zu.parquet", dir, k);
        REQUIRE(write_file(path, s, rows, cases[k].page_rows, cases[k].index, cases[k].dict) == 0);
        for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
            if (steps[j] == 1 && cases[k].page_rows < 100)
                continue; /* 5003 single-row reads with a dictionary page each: slow */
            check_slices(path, s, rows, steps[j], cases[k].index);
        }
    }
    floe_schema_free(s);
}

/* A colbuf shaped like src, empty. */
static void colbuf_like(floe_colbuf *dst, const floe_colbuf *src) {
    memset(dst, 0, sizeof *dst);
    dst->phys = src->phys;
    dst->width = src->width;
    dst->max_def = src->max_def;
    dst->max_rep = src->max_rep;
}

/* Every row group of one file: whole, then in slices of step rows, compared column by
 * column. Returns false when the file cannot be read whole (unsupported or bad). */
static bool conformance_file(const char *path, int64_t step) {
    floe_pq_reader *r = NULL;
    floe_error err;
    if (floe_pq_reader_open(NULL, path, NULL, &r, &err) < 0)
        return false;
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    bool ok = true;
    for (size_t rg = 0; rg < fi.num_row_groups && ok; rg++) {
        const floe_pq_rowset *rs = NULL;
        if (floe_pq_reader_read_row_group(r, rg, &rs, &err) < 0) {
            ok = false;
            break;
        }
        int64_t rows = rs->nrows;
        size_t ncols = rs->ncols;
        floe_colbuf *whole = calloc(ncols + 1, sizeof *whole);
        floe_colbuf *sliced = calloc(ncols + 1, sizeof *sliced);
        REQUIRE(whole && sliced);
        for (size_t c = 0; c < ncols; c++) {
            colbuf_like(&whole[c], &rs->cols[c]);
            colbuf_like(&sliced[c], &rs->cols[c]);
            append_colbuf(&whole[c], &rs->cols[c]);
        }
        for (int64_t first = 0; first < rows; first += step) {
            int64_t n = rows - first < step ? rows - first : step;
            int rc = floe_pq_reader_read_rows(r, rg, first, n, &rs, &err);
            if (rc < 0) {
                harness_fail(__FILE__, __LINE__, "%s: row group %zu: rows %lld+%lld: %s", path,
                             rg, (long long)first, (long long)n, err.msg);
                break;
            }
            CHECK_EQ_INT(rs->nrows, n);
            for (size_t c = 0; c < ncols && c < rs->ncols; c++)
                append_colbuf(&sliced[c], &rs->cols[c]);
        }
        for (size_t c = 0; c < ncols; c++) {
            if (!same(&whole[c], &sliced[c]))
                harness_fail(__FILE__, __LINE__, "%s: row group %zu: column %zu differs in "
                             "slices of %lld rows", path, rg, c, (long long)step);
            floe_colbuf_free(&whole[c]);
            floe_colbuf_free(&sliced[c]);
        }
        free(whole);
        free(sliced);
    }
    floe_pq_reader_close(r);
    return ok;
}

TEST(conformance_files_in_slices) {
    const char *dir = harness_conformance("parquet-testing/data");
    char base[4096];
    snprintf(base, sizeof base, "%s", dir);
    DIR *d = opendir(base);
    REQUIRE(d != NULL);
    struct dirent *de;
    int read = 0, skipped = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 9 || strcmp(de->d_name + len - 8, ".parquet") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", base, de->d_name);
        bool ok = conformance_file(path, 3);
        if (ok)
            ok = conformance_file(path, 64);
        read += ok;
        skipped += !ok;
    }
    closedir(d);
    printf("conformance: %d files compared in slices, %d not readable whole\n", read, skipped);
    CHECK(read > 50);
}

int main(void) {
    RUN(slices_equal_the_whole_row_group);
    RUN(conformance_files_in_slices);
    return harness_finish();
}
