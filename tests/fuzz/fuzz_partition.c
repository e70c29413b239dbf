/*
 * fuzz_partition.c - libFuzzer target for partition specs and sort orders (their Iceberg
 * JSON and the user's text form), single-value serialization (binary and JSON forms)
 * and the partition-path escaping that keeps a value inside its folder (src/iceberg).
 *
 * Every input is used as:
 *   - a partition spec and a sort order, in JSON and in text, against a fixed schema with
 *     one column of every primitive type. A spec that parses must print and parse back to
 *     an equivalent spec (text and JSON);
 *   - a string to escape: the result holds only [A-Za-z0-9.*_+%-], is never "." or "..",
 *     and decodes back to the input;
 *   - the binary and the JSON single-value form of every column type; values that decode
 *     round-trip through the JSON form, and feed a fixed spec that uses every transform.
 *     The path built from them has exactly one segment per partition field and no
 *     segment climbs ("." / "..").
 * Errors are expected; crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_partition/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SCHEMA_JSON[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"l\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":6,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":7,\"name\":\"dec38\",\"required\":false,\"type\":\"decimal(38, 10)\"},"
    "{\"id\":8,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":9,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":10,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":11,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":12,\"name\":\"tsns\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":13,\"name\":\"tstzns\",\"required\":false,\"type\":\"timestamptz_ns\"},"
    "{\"id\":14,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":15,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":16,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":17,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[4]\"},"
    "{\"id\":18,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":19,\"name\":\"os\",\"required\":false,\"type\":\"string\"}]}},"
    "{\"id\":20,\"name\":\"li\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":21,\"element\":\"int\",\"element-required\":false}}]}";

/* Every transform, each on a column it accepts. */
static const char FIXED_SPEC[] =
    "identity(b), i, bucket(16, l), truncate(10, l), f, d, truncate(100, dec), dec38, "
    "year(dt), dt AS dt_ident, tm, hour(ts), day(tstz), hour(tsns), month(tstzns), "
    "truncate(3, s), s AS s_ident, bucket(8, u), u AS u_ident, truncate(2, bin), fx, "
    "st.os, void(i) AS nothing";

static floe_schema *schema;
static floe_partition_spec *fixed_spec;

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The escaping promise of floe_partition_escape (floe/partition.h). */
static void check_escaped(const uint8_t *in, size_t n, const floe_buf *out) {
    const uint8_t *e = out->data;
    size_t m = out->len;
    check(!(m == 1 && e[0] == '.') && !(m == 2 && e[0] == '.' && e[1] == '.'));
    size_t j = 0;
    for (size_t i = 0; i < m; i++) {
        uint8_t c = e[i], dec;
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '-' || c == '*' || c == '_';
        if (plain) {
            dec = c;
        } else if (c == '+') {
            dec = ' ';
        } else {
            check(c == '%' && i + 2 < m);
            int hi = hexval(e[i + 1]), lo = hexval(e[i + 2]);
            check(hi >= 0 && lo >= 0);
            dec = (uint8_t)(hi * 16 + lo);
            i += 2;
        }
        check(j < n && in[j] == dec);
        j++;
    }
    check(j == n);
}

static void fuzz_escape(const uint8_t *data, size_t size) {
    floe_buf out;
    floe_buf_init(&out, 0);
    if (floe_partition_escape((const char *)data, size, &out) == 0)
        check_escaped(data, size, &out);
    floe_buf_free(&out);
}

static void fuzz_specs(const char *text, size_t n) {
    floe_error err;
    floe_partition_spec *spec = NULL, *back = NULL;
    if (floe_partition_spec_parse(schema, text, 0, 1000, &spec, &err) == 0) {
        char *str = floe_partition_spec_to_string(spec);
        char *json = floe_partition_spec_to_json(spec);
        char *fields = floe_partition_spec_fields_to_json(spec);
        check(str && json && fields);
        check(floe_partition_spec_parse(schema, str, 0, 1000, &back, &err) == 0);
        check(floe_partition_spec_equivalent(spec, back));
        floe_partition_spec_free(back);
        back = NULL;
        check(floe_partition_spec_parse_json(json, strlen(json), schema, &back, &err) == 0);
        check(floe_partition_spec_equivalent(spec, back));
        floe_partition_spec_free(back);
        floe_free(str);
        floe_free(json);
        floe_free(fields);
        floe_partition_spec_free(spec);
    }
    for (int bind = 0; bind < 2; bind++) {
        spec = NULL;
        if (floe_partition_spec_parse_json(text, n, bind ? schema : NULL, &spec, &err) == 0) {
            char *json = floe_partition_spec_to_json(spec);
            char *str = floe_partition_spec_to_string(spec);
            check(json != NULL);
            back = NULL;
            if (floe_partition_spec_parse_json(json, strlen(json), NULL, &back, &err) == 0)
                floe_partition_spec_free(back);
            floe_free(json);
            floe_free(str);
            floe_partition_spec_free(spec);
        }
    }
    floe_sort_order *so = NULL;
    if (floe_sort_order_parse(schema, text, 1, &so, &err) == 0) {
        char *json = floe_sort_order_to_json(so);
        char *str = floe_sort_order_to_string(so, schema);
        check(json && str);
        floe_sort_order *again = NULL;
        check(floe_sort_order_parse_json(json, strlen(json), schema, &again, &err) == 0);
        floe_sort_order_free(again);
        floe_free(json);
        floe_free(str);
        floe_sort_order_free(so);
    }
    for (int bind = 0; bind < 2; bind++) {
        so = NULL;
        if (floe_sort_order_parse_json(text, n, bind ? schema : NULL, &so, &err) == 0) {
            char *json = floe_sort_order_to_json(so);
            char *str = floe_sort_order_to_string(so, bind ? schema : NULL);
            floe_free(json);
            floe_free(str);
            floe_sort_order_free(so);
        }
    }
}

/* Decode the input as one value of each column, then build a partition path. */
static void fuzz_values(const uint8_t *data, size_t size) {
    floe_error err;
    floe_arena arena;
    floe_arena_init(&arena, 4096);
    arena.cap = 16u << 20;
    floe_buf out, out2;
    floe_buf_init(&out, 16u << 20);
    floe_buf_init(&out2, 16u << 20);
    size_t nf = fixed_spec->nfields;
    floe_value *src = calloc(nf, sizeof *src), *tuple = calloc(nf, sizeof *tuple);
    check(src && tuple);
    for (size_t k = 0; k < nf; k++) {
        const floe_field *col = fixed_spec->fields[k].source;
        src[k] = floe_value_null(col->type);
        floe_value v;
        /* the binary form of this value */
        if (floe_value_from_binary(col, data, size, &v, &err) == 0) {
            src[k] = v;
            out.len = 0;
            if (floe_value_to_json(&v, &out, &err) == 0) {
                floe_value w;
                int rc = floe_value_from_json(col, (const char *)out.data, out.len, &arena, &w,
                                              &err);
                /* the binary form does not bound a decimal's digits by its precision; the
                 * JSON form does */
                check(rc == 0 || v.type == FLOE_TYPE_DECIMAL);
                check(rc != 0 || floe_value_equal(&v, &w) || v.type == FLOE_TYPE_FLOAT ||
                      v.type == FLOE_TYPE_DOUBLE); /* NaN != NaN */
            }
            out.len = 0;
            FLOE_IGNORE_RESULT(floe_value_to_binary(&v, &out, &err));
            int32_t h;
            FLOE_IGNORE_RESULT(floe_value_hash(&v, &h, &err));
        }
        /* the JSON form of this value */
        if (floe_value_from_json(col, (const char *)data, size, &arena, &v, &err) == 0) {
            out2.len = 0;
            FLOE_IGNORE_RESULT(floe_value_to_json(&v, &out2, &err));
            if (src[k].is_null && (k & 1))
                src[k] = v;
        }
    }
    if (floe_partition_spec_tuple(fixed_spec, src, tuple, &err) == 0) {
        out.len = 0;
        if (floe_partition_spec_path(fixed_spec, tuple, &out, &err) == 0) {
            size_t segs = 1, start = 0;
            for (size_t i = 0; i <= out.len; i++) {
                if (i < out.len && out.data[i] != '/')
                    continue;
                size_t len = i - start;
                const uint8_t *seg = out.data + start;
                check(len > 0);
                check(!(len == 1 && seg[0] == '.') && !(len == 2 && !memcmp(seg, "..", 2)));
                if (i < out.len)
                    segs++;
                start = i + 1;
            }
            check(segs == nf);
        }
        for (size_t k = 0; k < nf; k++) {
            out.len = 0;
            FLOE_IGNORE_RESULT(floe_transform_human_string(fixed_spec->fields[k].transform,
                                                           &tuple[k], &out, &err));
        }
    }
    free(src);
    free(tuple);
    floe_buf_free(&out);
    floe_buf_free(&out2);
    floe_arena_reset(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    floe_error err;
    if (!schema) {
        if (floe_schema_parse(SCHEMA_JSON, strlen(SCHEMA_JSON), &schema, &err) < 0 ||
            floe_partition_spec_parse(schema, FIXED_SPEC, 0, 1000, &fixed_spec, &err) < 0) {
            fprintf(stderr, "fuzz_partition: setup: %s\n", err.msg);
            abort();
        }
    }
    char *text = fuzz_text(data, size); /* the text forms want a C string */
    if (!text)
        return 0;
    if (strlen(text) == size) /* no embedded NUL: the text parser would see a prefix */
        fuzz_specs(text, size);
    free(text);
    fuzz_escape(data, size);
    fuzz_values(data, size);
    return 0;
}
