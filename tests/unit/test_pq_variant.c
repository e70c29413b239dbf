/*
 * test_pq_variant.c - VARIANT columns in the Parquet reader (reader_schema.c plans them,
 * reader_rows.c reconstructs shredded values, VariantShredding.md).
 *
 * Conformance: every case of ../shared/conformance/parquet-testing/shredded_variant
 * (cases.json) whose Parquet file the snapshot holds. A value case's `var` column must
 * print, row by row, the JSON its .variant.bin files (metadata then value, back to back)
 * decode to, and "null" for a null variant; an error case must be refused with a message
 * holding cases.json's reason ("conflicting value and typed_value", "non-object value with
 * shredded fields", "unsupported shredded value type"); a case cases.json calls INVALID may
 * be refused or give its value. Cases whose files the snapshot lacks are counted and
 * named, not failed.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floe/parquet_reader.h"
#include "floe/variant.h"
#include "harness.h"

#define SDIR "parquet-testing/shredded_variant"

typedef struct rows {
    char **v;
    size_t n;
} rows;

static int take_row(void *ctx, size_t ncols, const char *const *labels,
                    const floe_pq_text *values) {
    (void)labels;
    rows *r = ctx;
    if (!values || ncols != 1)
        return 0;
    char **nv = realloc(r->v, (r->n + 1) * sizeof *nv);
    if (!nv)
        return FLOE_ENOMEM;
    r->v = nv;
    r->v[r->n] = malloc(values[0].n + 1);
    if (!r->v[r->n])
        return FLOE_ENOMEM;
    memcpy(r->v[r->n], values[0].p, values[0].n);
    r->v[r->n][values[0].n] = 0;
    r->n++;
    return 0;
}

static void rows_free(rows *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i]);
    free(r->v);
}

/* The `var` column of file rel, row by row; 0, or the reader's error. */
static int read_var(const char *rel, rows *out, floe_error *err) {
    char path[512];
    snprintf(path, sizeof path, SDIR "/%s", rel);
    size_t n;
    char *data = harness_read_file(harness_conformance(path), &n);
    if (!data)
        return floe_error_set(err, FLOE_EIO, "cannot read %s", rel);
    floe_pq_reader *r = NULL;
    const char *cols[] = {"var"};
    int rc = floe_pq_reader_open_memory((const uint8_t *)data, n, rel, NULL, &r, err);
    if (rc == 0)
        rc = floe_pq_reader_select_paths(r, cols, 1, err);
    if (rc == 0)
        rc = floe_pq_reader_dump_rows(r, -1, take_row, out, NULL, err);
    floe_pq_reader_close(r);
    free(data);
    return rc;
}

/* The JSON of a .variant.bin file, malloc'ed; NULL (and a failed check) on error. */
static char *expected_json(const char *rel) {
    char path[512];
    snprintf(path, sizeof path, SDIR "/%s", rel);
    size_t n;
    char *data = harness_read_file(harness_conformance(path), &n);
    REQUIRE(data != NULL);
    floe_error err = {0};
    size_t msize;
    floe_buf out;
    floe_buf_init(&out, 0);
    int rc = floe_variant_metadata_check((uint8_t *)data, n, true, &msize, &err);
    if (rc == 0)
        rc = floe_variant_to_json((uint8_t *)data, msize, (uint8_t *)data + msize, n - msize,
                                  &out, &err);
    free(data);
    if (rc != 0) {
        harness_fail(__FILE__, __LINE__, "%s: %s", rel, err.msg);
        floe_buf_free(&out);
        return NULL;
    }
    floe_buf_append_byte(&out, 0);
    return (char *)floe_buf_detach(&out, NULL);
}

static bool contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return true;
    return false;
}

/* The reason in a cases.json error message, as floe words it. */
static void reason_of(const char *msg, char *out, size_t n) {
    const char *p = msg;
    if (!strncasecmp(p, "Invalid variant, ", 17))
        p += 17;
    size_t k = strcspn(p, ":");
    snprintf(out, n, "%.*s", (int)k, p);
}

TEST(shredded_variant_cases) {
    size_t len;
    char *text = harness_read_file(harness_conformance(SDIR "/cases.json"), &len);
    REQUIRE(text != NULL);
    json_error_t je;
    json_t *cases = json_loadb(text, len, 0, &je);
    free(text);
    REQUIRE(cases && json_is_array(cases));
    size_t checked = 0, refused = 0, absent = 0, invalid_read = 0;
    char absent_list[1024] = "";
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *pq = json_string_value(json_object_get(c, "parquet_file"));
        int num = (int)json_integer_value(json_object_get(c, "case_number"));
        if (!pq)
            continue; /* a numbered gap */
        char path[512];
        snprintf(path, sizeof path, "%s/" SDIR "/%s",
                 getenv("FLOE_CONFORMANCE") ? getenv("FLOE_CONFORMANCE")
                                            : "../shared/conformance", pq);
        FILE *f = fopen(path, "rb");
        if (!f) {
            absent++;
            size_t l = strlen(absent_list);
            snprintf(absent_list + l, sizeof absent_list - l, " %d", num);
            continue;
        }
        fclose(f);
        bool invalid = json_object_get(c, "notes") != NULL;
        const char *want_err = json_string_value(json_object_get(c, "error_message"));
        rows got = {0};
        floe_error err = {0};
        int rc = read_var(pq, &got, &err);
        if (want_err) {
            char reason[200];
            reason_of(want_err, reason, sizeof reason);
            if (rc == 0 || !contains_ci(err.msg, reason))
                harness_fail(__FILE__, __LINE__, "case %d (%s): expected an error with \"%s\", "
                             "got rc %d: %s", num, pq, reason, rc, err.msg);
            else
                refused++;
            rows_free(&got);
            continue;
        }
        if (rc != 0) {
            if (!invalid)
                harness_fail(__FILE__, __LINE__, "case %d (%s): %s", num, pq, err.msg);
            else
                refused++;
            rows_free(&got);
            continue;
        }
        /* the expected rows: one variant file, or a list of them (null: a null variant) */
        json_t *files = json_object_get(c, "variant_files");
        json_t *one = json_object_get(c, "variant_file");
        size_t nwant = files ? json_array_size(files) : 1;
        if (got.n != nwant)
            harness_fail(__FILE__, __LINE__, "case %d: %zu rows, expected %zu", num, got.n,
                         nwant);
        for (size_t k = 0; k < nwant && k < got.n; k++) {
            json_t *fk = files ? json_array_get(files, k) : one;
            char *want = json_is_string(fk) ? expected_json(json_string_value(fk)) : NULL;
            const char *w = want ? want : "null";
            if (strcmp(w, got.v[k]))
                harness_fail(__FILE__, __LINE__, "case %d (%s) row %zu: floe %s, expected %s",
                             num, pq, k, got.v[k], w);
            free(want);
        }
        invalid_read += invalid;
        checked++;
        rows_free(&got);
    }
    json_decref(cases);
    printf("shredded_variant: %zu value cases read, %zu refused as expected, %zu INVALID "
           "cases read, %zu cases without their file in the snapshot:%s\n", checked, refused,
           invalid_read, absent, absent_list);
    CHECK(checked >= 90);
    CHECK(refused >= 4);
}

int main(void) {
    RUN(shredded_variant_cases);
    return harness_finish();
}
