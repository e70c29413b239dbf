/*
 * test_avro.c - Avro schemas, values, container writer and reader (src/avro).
 *
 * Round trips of every type through every codec; header metadata; schema resolution (by
 * field id, by name and alias, promotions, defaults, skipped fields, unions); corrupt and
 * hostile files (bad magic, bad sync, every truncation, huge counts, deep nesting) that
 * must fail with FLOE_ECORRUPT; failed allocations; avsc as an independent oracle both
 * ways; and every Iceberg manifest and manifest list in the conformance folder.
 */
#include "avro/avro_internal.h"
#include "floe/avro.h"
#include "floe/io.h"
#include "harness.h"
#include "common/testing.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------------------- */

static floe_avro_schema *parse_schema(const char *json) {
    floe_error err;
    floe_error_clear(&err);
    floe_avro_schema *s = NULL;
    int rc = floe_avro_schema_parse(json, strlen(json), &s, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "schema parse: %d %s", rc, err.msg);
    return s;
}

/* JSON text of v (malloc'ed) or NULL. */
static char *value_json(const floe_avro_node *n, const floe_avro_value *v) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    if (floe_avro_value_to_json(n, v, &b, &err) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    floe_buf_append_byte(&b, 0);
    char *s = strdup((char *)b.data);
    floe_buf_free(&b);
    return s;
}

static char *schema_json(const floe_avro_schema *s) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    if (floe_avro_schema_to_json(s, &b, &err) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    floe_buf_append_byte(&b, 0);
    char *r = strdup((char *)b.data);
    floe_buf_free(&b);
    return r;
}

/* Read every record of a file; returns the number or a negative error. Each record's JSON
 * goes to lines[i] (malloc'ed) when lines is not NULL. */
static int64_t read_all(const void *p, size_t n, const floe_avro_reader_options *opts,
                        char **lines, size_t max_lines, floe_error *err) {
    floe_avro_reader *r = NULL;
    int rc = floe_avro_reader_open_mem(p, n, opts, &r, err);
    if (rc < 0)
        return rc;
    int64_t count = 0;
    const floe_avro_value *v;
    while ((rc = floe_avro_reader_next(r, &v, err)) == 1) {
        if (lines && (size_t)count < max_lines)
            lines[count] = value_json(floe_avro_reader_schema(r), v);
        count++;
    }
    floe_avro_reader_close(r);
    return rc < 0 ? rc : count;
}

static const uint8_t test_sync[16] = {0xf1, 0x0e, 0x5a, 0x11, 0x22, 0x33, 0x44, 0x55,
                                      0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd};

/* A schema with every type, nested records, arrays, maps, unions, a recursive type, Iceberg
 * ids and logical types. */
static const char *ALL_TYPES_SCHEMA =
    "{\"type\":\"record\",\"name\":\"all\",\"namespace\":\"floe.t\",\"fields\":["
    "{\"name\":\"n\",\"type\":\"null\",\"field-id\":1},"
    "{\"name\":\"b\",\"type\":\"boolean\",\"field-id\":2},"
    "{\"name\":\"i\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"},\"field-id\":3},"
    "{\"name\":\"l\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
    "\"adjust-to-utc\":true},\"field-id\":4},"
    "{\"name\":\"f\",\"type\":\"float\",\"field-id\":5},"
    "{\"name\":\"d\",\"type\":\"double\",\"field-id\":6},"
    "{\"name\":\"by\",\"type\":\"bytes\",\"field-id\":7},"
    "{\"name\":\"s\",\"type\":\"string\",\"field-id\":8,\"doc\":\"a string\"},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"fixed\",\"name\":\"dec9\",\"size\":4,"
    "\"logicalType\":\"decimal\",\"precision\":9,\"scale\":2},\"field-id\":9},"
    "{\"name\":\"u\",\"type\":{\"type\":\"fixed\",\"name\":\"uuid_fixed\",\"size\":16,"
    "\"logicalType\":\"uuid\"},\"field-id\":10},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"color\",\"symbols\":[\"RED\","
    "\"GREEN\",\"BLUE\"]},\"field-id\":11},"
    "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"],"
    "\"element-id\":13},\"field-id\":12},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\",\"key-id\":15,"
    "\"value-id\":16},\"field-id\":14},"
    "{\"name\":\"im\",\"type\":[\"null\",{\"type\":\"array\",\"logicalType\":\"map\","
    "\"items\":{\"type\":\"record\",\"name\":\"k18_v19\",\"fields\":["
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":18},"
    "{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":19}]}}],\"default\":null,"
    "\"field-id\":17},"
    "{\"name\":\"opt\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":20},"
    "{\"name\":\"multi\",\"type\":[\"int\",\"color\",\"null\",\"bytes\"],\"field-id\":21},"
    "{\"name\":\"sub\",\"type\":{\"type\":\"record\",\"name\":\"sub\",\"fields\":["
    "{\"name\":\"x\",\"type\":\"long\",\"field-id\":23},"
    "{\"name\":\"next\",\"type\":[\"null\",\"sub\"],\"default\":null,\"field-id\":24}]},"
    "\"field-id\":22},"
    "{\"name\":\"c2\",\"type\":\"color\",\"field-id\":25}"
    "]}";

/* Build record number k of ALL_TYPES_SCHEMA in arena a. */
static void build_all(floe_arena *a, floe_avro_value *v, int k) {
    static const uint8_t dec[4] = {0, 0, 0x30, 0x39};
    static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    static const uint8_t raw[5] = {0, 1, 0xfe, 0xff, 0x80};
    REQUIRE(floe_avro_set_record(v, a, 18) == 0);
    floe_avro_value *f = v->u.list.items;
    floe_avro_set_null(&f[0]);
    floe_avro_set_bool(&f[1], k % 2);
    floe_avro_set_int(&f[2], k * 1000 - 19000);
    floe_avro_set_long(&f[3], (int64_t)k * 86400000000LL - INT64_MAX / 3);
    floe_avro_set_float(&f[4], (float)k * 1.5f - 0.1f);
    floe_avro_set_double(&f[5], k == 3 ? -0.0 : (double)k / 3.0);
    floe_avro_set_bytes(&f[6], raw, (size_t)(k % 6));
    char *s = floe_arena_alloc(a, 64);
    snprintf(s, 64, "row-%d \"q\" \\ \xc3\xa9", k);
    floe_avro_set_string(&f[7], s);
    floe_avro_set_fixed(&f[8], dec, 4);
    floe_avro_set_fixed(&f[9], uuid, 16);
    floe_avro_set_enum(&f[10], k % 3);
    REQUIRE(floe_avro_set_array(&f[11], a, (size_t)(k % 4)) == 0);
    for (int i = 0; i < k % 4; i++) {
        if (i == 1)
            floe_avro_set_null(&f[11].u.list.items[i]);
        else
            floe_avro_set_long(&f[11].u.list.items[i], INT64_MIN + i);
    }
    REQUIRE(floe_avro_set_map(&f[12], a, (size_t)(k % 3)) == 0);
    for (int i = 0; i < k % 3; i++) {
        floe_avro_map_entry *e = &f[12].u.map.entries[i];
        char *key = floe_arena_alloc(a, 16);
        snprintf(key, 16, "key%d", i);
        e->key = key;
        e->key_len = strlen(key);
        floe_avro_set_double(&e->value, 1e300 * i);
    }
    if (k % 2) {
        floe_avro_set_null(&f[13]);
    } else {
        REQUIRE(floe_avro_set_array(&f[13], a, 2) == 0);
        for (int i = 0; i < 2; i++) {
            floe_avro_value *kv = &f[13].u.list.items[i];
            REQUIRE(floe_avro_set_record(kv, a, 2) == 0);
            floe_avro_set_int(&kv->u.list.items[0], 100 + i);
            floe_avro_set_bytes(&kv->u.list.items[1], raw, 3);
        }
    }
    if (k % 3)
        floe_avro_set_string(&f[14], "present");
    else
        floe_avro_set_null(&f[14]);
    switch (k % 4) {
    case 0:
        floe_avro_set_int(&f[15], -7);
        break;
    case 1:
        floe_avro_set_bytes(&f[15], "\x01\x02", 2);
        break;
    case 2:
        floe_avro_set_enum(&f[15], 2);
        break;
    default:
        floe_avro_set_null(&f[15]);
        break;
    }
    /* sub: a linked list of k % 3 + 1 nodes */
    floe_avro_value *cur = &f[16];
    for (int depth = 0; depth <= k % 3; depth++) {
        REQUIRE(floe_avro_set_record(cur, a, 2) == 0);
        floe_avro_set_long(&cur->u.list.items[0], depth * 10 + k);
        cur = &cur->u.list.items[1];
    }
    floe_avro_set_null(cur);
    floe_avro_set_enum(&f[17], (k + 1) % 3);
}

/* ---- schema -------------------------------------------------------------------------- */

TEST(test_schema_all_types) {
    floe_avro_schema *s = parse_schema(ALL_TYPES_SCHEMA);
    REQUIRE(s != NULL);
    const floe_avro_node *root = floe_avro_schema_root(s);
    CHECK_EQ_INT(root->type, FLOE_AVRO_RECORD);
    CHECK_EQ_STR(root->name, "floe.t.all");
    CHECK_EQ_INT(root->n_fields, 18);
    size_t idx = 99;
    const floe_avro_field *f = floe_avro_node_field(root, "l", &idx);
    REQUIRE(f != NULL);
    CHECK_EQ_INT(idx, 3);
    CHECK(f->has_field_id && f->field_id == 4);
    CHECK_EQ_STR(f->type->logical_type, "timestamp-micros");
    CHECK(f->type->props_json && strstr(f->type->props_json, "adjust-to-utc"));
    f = floe_avro_node_field_by_id(root, 9, NULL);
    REQUIRE(f != NULL);
    CHECK_EQ_STR(f->name, "dec");
    CHECK_EQ_INT(f->type->type, FLOE_AVRO_FIXED);
    CHECK_EQ_INT(f->type->size, 4);
    CHECK_EQ_INT(f->type->precision, 9);
    CHECK_EQ_INT(f->type->scale, 2);
    CHECK_EQ_STR(f->type->name, "floe.t.dec9");
    f = floe_avro_node_field(root, "arr", NULL);
    CHECK_EQ_INT(f->type->element_id, 13);
    f = floe_avro_node_field(root, "m", NULL);
    CHECK_EQ_INT(f->type->key_id, 15);
    CHECK_EQ_INT(f->type->value_id, 16);
    f = floe_avro_node_field(root, "im", NULL);
    const floe_avro_node *im = floe_avro_node_nullable(f->type);
    REQUIRE(im != NULL);
    CHECK_EQ_STR(im->logical_type, "map");
    CHECK_EQ_INT(im->items->fields[1].field_id, 19);
    CHECK(f->has_default && f->default_value->type == FLOE_AVRO_NULL);
    /* named references are the same node; the recursive type refers to itself */
    const floe_avro_field *e = floe_avro_node_field(root, "e", NULL);
    const floe_avro_field *c2 = floe_avro_node_field(root, "c2", NULL);
    CHECK(e->type == c2->type);
    const floe_avro_node *sub = floe_avro_node_field(root, "sub", NULL)->type;
    CHECK(floe_avro_node_nullable(sub->fields[1].type) == sub);
    CHECK_EQ_STR(floe_avro_node_field(root, "s", NULL)->doc, "a string");

    /* serialize -> parse -> serialize is stable and keeps what Iceberg needs */
    char *j1 = schema_json(s);
    REQUIRE(j1 != NULL);
    CHECK(strstr(j1, "\"field-id\":24") != NULL);
    CHECK(strstr(j1, "\"element-id\":13") != NULL);
    CHECK(strstr(j1, "\"key-id\":15") != NULL);
    CHECK(strstr(j1, "\"adjust-to-utc\":true") != NULL);
    CHECK(strstr(j1, "\"logicalType\":\"decimal\"") != NULL);
    floe_avro_schema *s2 = parse_schema(j1);
    REQUIRE(s2 != NULL);
    char *j2 = schema_json(s2);
    CHECK_EQ_STR(j1, j2);
    free(j1);
    free(j2);
    floe_avro_schema_free(s2);
    floe_avro_schema_free(s);
}

TEST(test_schema_errors) {
    static const struct {
        const char *json;
        int code;
    } cases[] = {
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"nope\"}]}",
         FLOE_ESCHEMA},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":"
         "{\"type\":\"fixed\",\"name\":\"r\",\"size\":1}}]}",
         FLOE_ESCHEMA}, /* r defined twice */
        {"[\"int\",[\"null\",\"int\"]]", FLOE_ESCHEMA},  /* union in union */
        {"[\"int\",\"int\"]", FLOE_ESCHEMA},             /* duplicate branch */
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":-1}", FLOE_ESCHEMA},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\",\"A\"]}", FLOE_ESCHEMA},
        {"{\"type\":\"record\",\"fields\":[]}", FLOE_ESCHEMA}, /* no name */
        {"{\"type\":\"array\"}", FLOE_ESCHEMA},
        {"{\"type\":", FLOE_ECORRUPT},
        {"42", FLOE_ESCHEMA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_error err;
        floe_error_clear(&err);
        floe_avro_schema *s = NULL;
        int rc = floe_avro_schema_parse(cases[i].json, strlen(cases[i].json), &s, &err);
        if (rc != cases[i].code)
            harness_fail(__FILE__, __LINE__, "case %zu: rc %d (%s), want %d", i, rc, err.msg,
                         cases[i].code);
        CHECK(s == NULL);
    }
    /* nesting past the cap is refused, not recursed into */
    char deep[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(deep, "{\"type\":\"array\",\"items\":");
    strcat(deep, "\"int\"");
    for (int i = 0; i < 100; i++)
        strcat(deep, "}");
    floe_error err;
    floe_avro_schema *s = NULL;
    CHECK_EQ_INT(floe_avro_schema_parse(deep, strlen(deep), &s, &err), FLOE_ESCHEMA);
    /* a bad default is dropped, not fatal */
    s = parse_schema("{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                     "\"type\":\"int\",\"default\":\"x\"}]}");
    REQUIRE(s != NULL);
    CHECK(!floe_avro_schema_root(s)->fields[0].has_default);
    CHECK_EQ_STR(floe_avro_schema_root(s)->fields[0].default_json, "\"x\"");
    floe_avro_schema_free(s);
}

/* ---- encoding helpers ---------------------------------------------------------------- */

TEST(test_encode_helpers) {
    static const struct {
        int64_t v;
        const char *hex;
    } cases[] = {{0, "00"},  {-1, "01"},   {1, "02"},  {-2, "03"},
                 {2, "04"},  {-64, "7f"},  {64, "8001"},
                 {INT64_MAX, "feffffffffffffffff01"}, {INT64_MIN, "ffffffffffffffffff01"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        REQUIRE(floe_avro_encode_long(&b, cases[i].v) == 0);
        char hex[64] = "";
        for (size_t k = 0; k < b.len; k++)
            snprintf(hex + 2 * k, 3, "%02x", b.data[k]);
        CHECK_EQ_STR(hex, cases[i].hex);
        avro_cursor c;
        avro_cursor_init(&c, b.data, b.len, 0);
        int64_t back = 0;
        CHECK(avro_read_long(&c, &back, NULL) == 0);
        CHECK_EQ_INT(back, cases[i].v);
        floe_buf_free(&b);
    }
    /* the spec's examples: "foo" and the record {a: 27, b: "foo"} */
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_avro_encode_long(&b, 27);
    floe_avro_encode_bytes(&b, "foo", 3);
    CHECK_EQ_INT(b.len, 5);
    CHECK_EQ_MEM(b.data, "\x36\x06\x66\x6f\x6f", 5);
    floe_buf_reset(&b);
    floe_avro_encode_float(&b, 1.0f);
    floe_avro_encode_double(&b, 1.0);
    CHECK_EQ_MEM(b.data, "\x00\x00\x80\x3f\x00\x00\x00\x00\x00\x00\xf0\x3f", 12);
    floe_buf_free(&b);
    /* truncated and overlong varints */
    avro_cursor c;
    int64_t v = 0;
    avro_cursor_init(&c, (const uint8_t *)"\x80\x80", 2, 0);
    CHECK_EQ_INT(avro_read_long(&c, &v, NULL), FLOE_ECORRUPT);
    avro_cursor_init(&c, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 11,
                     0);
    CHECK_EQ_INT(avro_read_long(&c, &v, NULL), FLOE_ECORRUPT);
    /* the range's ends read; a 10th byte with bits past the 64th is refused, not wrapped
     * (Java's BinaryDecoder wraps it) */
    avro_cursor_init(&c, (const uint8_t *)"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, 0);
    CHECK_EQ_INT(avro_read_long(&c, &v, NULL), 0);
    CHECK_EQ_INT(v, INT64_MAX);
    avro_cursor_init(&c, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, 0);
    CHECK_EQ_INT(avro_read_long(&c, &v, NULL), 0);
    CHECK(v == INT64_MIN);
    floe_error e;
    floe_error_clear(&e);
    avro_cursor_init(&c, (const uint8_t *)"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x03", 10, 0);
    CHECK_EQ_INT(avro_read_long(&c, &v, &e), FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "outside the signed 64-bit range") != NULL);
    /* 9876543210123456789 as Python writers encode it (zigzag of the unbounded int) */
    avro_cursor_init(&c, (const uint8_t *)"\xaa\xc4\xa3\x83\x96\xee\xc3\x90\x92\x02", 10, 0);
    CHECK_EQ_INT(avro_read_long(&c, &v, NULL), FLOE_ECORRUPT);
    int32_t i32;
    avro_cursor_init(&c, (const uint8_t *)"\x80\x80\x80\x80\x10", 5, 0); /* 2^31 zigzag */
    CHECK_EQ_INT(avro_read_int(&c, &i32, NULL), FLOE_ECORRUPT);
}

TEST(test_value_encode_errors) {
    floe_avro_schema *s = parse_schema(
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
        "{\"name\":\"p\",\"type\":{\"type\":\"record\",\"name\":\"p\",\"fields\":["
        "{\"name\":\"x\",\"type\":\"long\"}]}}]}");
    REQUIRE(s != NULL);
    floe_arena a;
    floe_arena_init(&a, 0);
    floe_avro_value v;
    REQUIRE(floe_avro_set_record(&v, &a, 2) == 0);
    floe_avro_set_int(&v.u.list.items[0], 1);
    REQUIRE(floe_avro_set_record(&v.u.list.items[1], &a, 1) == 0);
    floe_avro_set_string(&v.u.list.items[1].u.list.items[0], "nope");
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_avro_value_encode(floe_avro_schema_root(s), &v, &b, &err), FLOE_ESCHEMA);
    CHECK(strstr(err.msg, "p: x: ") != NULL);
    CHECK(strstr(err.msg, "expected long, got string") != NULL);
    /* convenience: an int for a long is fine */
    floe_avro_set_int(&v.u.list.items[1].u.list.items[0], 5);
    floe_buf_reset(&b);
    CHECK_OK(floe_avro_value_encode(floe_avro_schema_root(s), &v, &b, &err), err);
    CHECK_EQ_INT(b.len, 2);
    floe_buf_free(&b);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
}

/* ---- container round trips ----------------------------------------------------------- */

static void roundtrip_codec(floe_codec codec) {
    floe_avro_schema *s = parse_schema(ALL_TYPES_SCHEMA);
    REQUIRE(s != NULL);
    const floe_avro_node *root = floe_avro_schema_root(s);
    enum { N = 200 };
    floe_arena a;
    floe_arena_init(&a, 0);
    static char *want[N];
    static const char spec[] = "[{\"source-id\":1,\"field-id\":1000,\"transform\":\"day\"}]";
    floe_avro_meta meta[] = {{"schema", "{\"type\":\"struct\"}", 17},
                             {"partition-spec", spec, sizeof spec - 1},
                             {"format-version", "2", 1},
                             {"content", "data", 4}};
    floe_avro_writer_options wo = {.codec = codec, .block_records = 17, .sync = test_sync,
                                   .meta = meta, .n_meta = 4};
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err;
    floe_error_clear(&err);
    floe_avro_writer *w = NULL;
    REQUIRE_OK(floe_avro_writer_open(s, &wo, &out, &w, &err), err);
    for (int k = 0; k < N; k++) {
        floe_avro_value v;
        build_all(&a, &v, k);
        want[k] = value_json(root, &v);
        REQUIRE(want[k] != NULL);
        REQUIRE_OK(floe_avro_writer_append(w, &v, &err), err);
    }
    CHECK_EQ_INT(floe_avro_writer_records(w), N);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);

    floe_avro_reader *r = NULL;
    REQUIRE_OK(floe_avro_reader_open_mem(out.data, out.len, NULL, &r, &err), err);
    CHECK_EQ_INT(floe_avro_reader_codec(r), codec);
    CHECK_EQ_MEM(floe_avro_reader_sync(r), test_sync, 16);
    CHECK_EQ_STR(floe_avro_reader_meta_str(r, "format-version"), "2");
    CHECK_EQ_STR(floe_avro_reader_meta_str(r, "content"), "data");
    CHECK_EQ_STR(floe_avro_reader_meta_str(r, "partition-spec"), spec);
    CHECK_EQ_INT(floe_avro_reader_meta_count(r), 6);
    size_t len = 0;
    CHECK(floe_avro_reader_meta(r, "schema", &len) != NULL && len == 17);
    CHECK(floe_avro_reader_meta(r, "nope", NULL) == NULL);
    const floe_avro_value *v;
    int k = 0, rc;
    while ((rc = floe_avro_reader_next(r, &v, &err)) == 1) {
        char *got = value_json(floe_avro_reader_schema(r), v);
        if (k < N && (!got || strcmp(got, want[k]) != 0))
            harness_fail(__FILE__, __LINE__, "%s record %d:\n got  %s\n want %s",
                         floe_codec_name(codec), k, got ? got : "(null)", want[k]);
        free(got);
        k++;
    }
    CHECK_OK(rc < 0 ? rc : 0, err);
    CHECK_EQ_INT(k, N);
    CHECK_EQ_INT(floe_avro_reader_blocks(r), (N + 16) / 17);
    floe_avro_reader_close(r);
    for (int i = 0; i < N; i++)
        free(want[i]);
    floe_buf_free(&out);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
}

TEST(test_roundtrip_null) { roundtrip_codec(FLOE_CODEC_UNCOMPRESSED); }
TEST(test_roundtrip_deflate) { roundtrip_codec(FLOE_CODEC_DEFLATE); }
TEST(test_roundtrip_snappy) { roundtrip_codec(FLOE_CODEC_SNAPPY); }
TEST(test_roundtrip_zstd) { roundtrip_codec(FLOE_CODEC_ZSTD); }

/* The same input gives the same bytes with a fixed sync marker; a random one differs. */
TEST(test_writer_deterministic_and_blocks) {
    floe_avro_schema *s = parse_schema("\"long\"");
    REQUIRE(s != NULL);
    floe_buf a, b, c;
    floe_buf_init(&a, 0);
    floe_buf_init(&b, 0);
    floe_buf_init(&c, 0);
    floe_error err;
    floe_buf *outs[3] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        floe_avro_writer_options wo = {.sync = i < 2 ? test_sync : NULL, .block_size = 100};
        floe_avro_writer *w;
        REQUIRE_OK(floe_avro_writer_open(s, &wo, outs[i], &w, &err), err);
        for (int64_t k = 0; k < 1000; k++) {
            floe_avro_value v;
            floe_avro_set_long(&v, k * k);
            REQUIRE_OK(floe_avro_writer_append(w, &v, &err), err);
        }
        REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    }
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    CHECK(a.len == c.len && memcmp(a.data, c.data, a.len) != 0);
    /* header: magic, then a map of two entries */
    CHECK_EQ_MEM(a.data, "Obj\x01\x04", 5);
    floe_avro_reader *r;
    REQUIRE_OK(floe_avro_reader_open_mem(a.data, a.len, NULL, &r, &err), err);
    const floe_avro_value *v;
    int64_t k = 0;
    while (floe_avro_reader_next(r, &v, &err) == 1) {
        CHECK_EQ_INT(v->type, FLOE_AVRO_LONG);
        CHECK_EQ_INT(v->u.l, k * k);
        k++;
    }
    CHECK_EQ_INT(k, 1000);
    /* ~100-byte blocks of 2-3 byte longs */
    CHECK(floe_avro_reader_blocks(r) > 20);
    floe_avro_reader_close(r);
    /* encoded datums go in as they are */
    floe_buf_reset(&a);
    floe_avro_writer *w;
    REQUIRE_OK(floe_avro_writer_open(s, NULL, &a, &w, &err), err);
    CHECK_OK(floe_avro_writer_append_encoded(w, "\x36", 1, &err), err);
    CHECK_OK(floe_avro_writer_close(w, &err), err);
    REQUIRE_OK(floe_avro_reader_open_mem(a.data, a.len, NULL, &r, &err), err);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 1);
    CHECK_EQ_INT(v->u.l, 27);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 0);
    floe_avro_reader_close(r);
    /* reserved metadata keys are refused */
    floe_avro_meta bad = {"avro.schema", "x", 1};
    floe_avro_writer_options wo = {.meta = &bad, .n_meta = 1};
    CHECK_EQ_INT(floe_avro_writer_open(s, &wo, &a, &w, &err), FLOE_EINVALID);
    floe_buf_free(&a);
    floe_buf_free(&b);
    floe_buf_free(&c);
    floe_avro_schema_free(s);
}

/* An empty file (header only) reads as zero records. */
TEST(test_empty_file) {
    floe_avro_schema *s = parse_schema("{\"type\":\"record\",\"name\":\"r\",\"fields\":[]}");
    REQUIRE(s != NULL);
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err;
    floe_avro_writer *w;
    REQUIRE_OK(floe_avro_writer_open(s, NULL, &out, &w, &err), err);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    CHECK_EQ_INT(read_all(out.data, out.len, NULL, NULL, 0, &err), 0);
    floe_buf_free(&out);
    floe_avro_schema_free(s);
}

/* A header of thousands of one-entry metadata blocks (legal: a map may come in any number
 * of blocks) must not copy the entry table once per block: the fuzzer's input of 4,091
 * such blocks made ~200 MB of reallocations per open, which under ASan's quarantine took
 * the fuzz target past its 1 GB limit. */
TEST(test_header_many_metadata_blocks) {
    floe_buf f;
    floe_buf_init(&f, 0);
    const char *schema = "\"null\"";
    REQUIRE(floe_buf_append(&f, "Obj\x01", 4) == 0);
    uint8_t hdr[] = {0x02, 22};
    REQUIRE(floe_buf_append(&f, hdr, 2) == 0);
    REQUIRE(floe_buf_append(&f, "avro.schema", 11) == 0);
    uint8_t vl = (uint8_t)(2 * strlen(schema));
    REQUIRE(floe_buf_append(&f, &vl, 1) == 0);
    REQUIRE(floe_buf_append(&f, schema, strlen(schema)) == 0);
    enum { BLOCKS = 4000 };
    for (int i = 0; i < BLOCKS; i++) {
        char key[8];
        int kl = snprintf(key, sizeof key, "k%04d", i);
        uint8_t pre[2] = {0x02, (uint8_t)(2 * kl)}, empty = 0;
        REQUIRE(floe_buf_append(&f, pre, 2) == 0);
        REQUIRE(floe_buf_append(&f, key, (size_t)kl) == 0);
        REQUIRE(floe_buf_append(&f, &empty, 1) == 0);
    }
    uint8_t end = 0;
    REQUIRE(floe_buf_append(&f, &end, 1) == 0);
    REQUIRE(floe_buf_append(&f, test_sync, sizeof test_sync) == 0);

    floe_error err;
    floe_avro_reader *r = NULL;
    uint64_t before = floe_alloc_count();
    REQUIRE_OK(floe_avro_reader_open_mem(f.data, f.len, NULL, &r, &err), err);
    uint64_t calls = floe_alloc_count() - before;
    CHECK_EQ_INT(floe_avro_reader_meta_count(r), BLOCKS + 1);
    CHECK(floe_avro_reader_meta(r, "k3999", NULL) != NULL);
    /* geometric growth: a dozen reallocations and the arena's chunks, not one a block */
    CHECK(calls < 200);
    floe_avro_reader_close(r);
    floe_buf_free(&f);
}

/* ---- schema resolution --------------------------------------------------------------- */

/* Write records given as (writer schema, builder) and read them with a reader schema. */
typedef void (*builder_fn)(floe_arena *a, floe_avro_value *v, int k);

static int write_records(const char *wschema, builder_fn fn, int n, floe_buf *out) {
    floe_avro_schema *s = parse_schema(wschema);
    if (!s)
        return -1;
    floe_arena a;
    floe_arena_init(&a, 0);
    floe_error err;
    floe_avro_writer *w;
    floe_avro_writer_options wo = {.block_records = 3};
    int rc = floe_avro_writer_open(s, &wo, out, &w, &err);
    for (int k = 0; rc == 0 && k < n; k++) {
        floe_avro_value v;
        fn(&a, &v, k);
        rc = floe_avro_writer_append(w, &v, &err);
        if (rc < 0)
            harness_fail(__FILE__, __LINE__, "append: %s", err.msg);
    }
    if (rc == 0)
        rc = floe_avro_writer_close(w, &err);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
    return rc;
}

static const char *WRITER_V1 =
    "{\"type\":\"record\",\"name\":\"entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"old_name\",\"type\":\"string\",\"field-id\":1},"
    "{\"name\":\"dropped\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"map\","
    "\"values\":{\"type\":\"record\",\"name\":\"deep\",\"fields\":[{\"name\":\"z\",\"type\":"
    "[\"null\",\"bytes\"]}]}}},\"field-id\":2},"
    "{\"name\":\"count\",\"type\":\"int\",\"field-id\":3},"
    "{\"name\":\"ratio\",\"type\":\"float\",\"field-id\":4},"
    "{\"name\":\"blob\",\"type\":\"string\",\"field-id\":5},"
    "{\"name\":\"maybe\",\"type\":[\"null\",\"int\"],\"field-id\":6},"
    "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"c\",\"symbols\":[\"R\",\"G\","
    "\"B\"]},\"field-id\":7}"
    "]}";

static void build_v1(floe_arena *a, floe_avro_value *v, int k) {
    REQUIRE(floe_avro_set_record(v, a, 8) == 0);
    floe_avro_value *f = v->u.list.items;
    floe_avro_set_int(&f[0], k);
    char *s = floe_arena_alloc(a, 16);
    snprintf(s, 16, "name%d", k);
    floe_avro_set_string(&f[1], s);
    /* dropped: [ {"a": {z: bytes}} ] to make the skipper work */
    REQUIRE(floe_avro_set_array(&f[2], a, 2) == 0);
    for (int i = 0; i < 2; i++) {
        floe_avro_value *m = &f[2].u.list.items[i];
        REQUIRE(floe_avro_set_map(m, a, 1) == 0);
        m->u.map.entries[0].key = "a";
        m->u.map.entries[0].key_len = 1;
        REQUIRE(floe_avro_set_record(&m->u.map.entries[0].value, a, 1) == 0);
        floe_avro_set_bytes(&m->u.map.entries[0].value.u.list.items[0], "zz", 2);
    }
    floe_avro_set_int(&f[3], -k * 1000);
    floe_avro_set_float(&f[4], 0.5f * (float)k);
    floe_avro_set_string(&f[5], "blobby");
    if (k % 2)
        floe_avro_set_int(&f[6], k);
    else
        floe_avro_set_null(&f[6]);
    floe_avro_set_enum(&f[7], k % 3);
}

TEST(test_resolve_by_id) {
    floe_buf file;
    floe_buf_init(&file, 0);
    REQUIRE(write_records(WRITER_V1, build_v1, 10, &file) == 0);
    /* reader: fields reordered and renamed (ids unchanged), promotions, a dropped field,
     * new fields with and without defaults, an optional field filled with null, a union
     * on the reader side only, an enum with a symbol missing but a default. */
    floe_avro_schema *rs = parse_schema(
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"c\",\"symbols\":[\"B\","
        "\"R\",\"OTHER\"],\"default\":\"OTHER\"},\"field-id\":7},"
        "{\"name\":\"new_name\",\"type\":\"bytes\",\"field-id\":1},"
        "{\"name\":\"count\",\"type\":[\"null\",\"long\"],\"field-id\":3},"
        "{\"name\":\"ratio\",\"type\":\"double\",\"field-id\":4},"
        "{\"name\":\"status\",\"type\":\"long\",\"field-id\":0},"
        "{\"name\":\"blob\",\"type\":\"bytes\",\"field-id\":5},"
        "{\"name\":\"maybe\",\"type\":[\"null\",\"long\"],\"field-id\":6},"
        "{\"name\":\"added\",\"type\":\"string\",\"default\":\"dflt\",\"field-id\":40},"
        "{\"name\":\"added_opt\",\"type\":[\"null\",\"int\"],\"field-id\":41},"
        "{\"name\":\"count2\",\"type\":\"int\",\"default\":5,\"field-id\":42}"
        "]}");
    REQUIRE(rs != NULL);
    floe_avro_reader_options ro = {.reader_schema = rs, .name = "m0.avro"};
    char *lines[10] = {0};
    floe_error err;
    floe_error_clear(&err);
    int64_t n = read_all(file.data, file.len, &ro, lines, 10, &err);
    CHECK_EQ_INT(n, 10);
    if (n == 10) {
        CHECK_EQ_STR(lines[0], "{\"color\":\"R\",\"new_name\":\"6e616d6530\",\"count\":0,"
                               "\"ratio\":0,\"status\":0,\"blob\":\"626c6f626279\",\"maybe\":null,"
                               "\"added\":\"dflt\",\"added_opt\":null,\"count2\":5}");
        CHECK_EQ_STR(lines[1], "{\"color\":\"OTHER\",\"new_name\":\"6e616d6531\",\"count\":-1000,"
                               "\"ratio\":0.5,\"status\":1,\"blob\":\"626c6f626279\",\"maybe\":1,"
                               "\"added\":\"dflt\",\"added_opt\":null,\"count2\":5}");
        CHECK(strstr(lines[2], "\"color\":\"B\"") != NULL);
    }
    for (int i = 0; i < 10; i++)
        free(lines[i]);
    /* the reader's value types follow the reader's schema */
    floe_avro_reader *r;
    REQUIRE_OK(floe_avro_reader_open_mem(file.data, file.len, &ro, &r, &err), err);
    const floe_avro_value *v;
    REQUIRE(floe_avro_reader_next(r, &v, &err) == 1);
    REQUIRE(floe_avro_reader_next(r, &v, &err) == 1);
    const floe_avro_node *rn = floe_avro_reader_schema(r);
    const floe_avro_value *cnt = floe_avro_value_field(rn, v, "count");
    REQUIRE(cnt != NULL);
    CHECK_EQ_INT(cnt->type, FLOE_AVRO_LONG);
    CHECK_EQ_INT(cnt->branch, 1);
    CHECK_EQ_INT(cnt->u.l, -1000);
    const floe_avro_value *ao = floe_avro_value_field(rn, v, "added_opt");
    CHECK_EQ_INT(ao->type, FLOE_AVRO_NULL);
    CHECK_EQ_INT(ao->branch, 0);
    CHECK_EQ_INT(floe_avro_value_field(rn, v, "ratio")->type, FLOE_AVRO_DOUBLE);
    floe_avro_reader_close(r);
    floe_avro_schema_free(rs);

    /* ids win over names: a reader field named like a writer field but with a new id is
     * not the writer's field. */
    rs = parse_schema("{\"type\":\"record\",\"name\":\"e\",\"fields\":["
                      "{\"name\":\"status\",\"type\":[\"null\",\"int\"],\"field-id\":99}]}");
    REQUIRE(rs != NULL);
    ro.reader_schema = rs;
    lines[0] = NULL;
    CHECK_EQ_INT(read_all(file.data, file.len, &ro, lines, 1, &err), 10);
    CHECK_EQ_STR(lines[0], "{\"status\":null}");
    free(lines[0]);
    floe_avro_schema_free(rs);

    /* a required reader field the writer lacks, without a default, fails at open */
    rs = parse_schema("{\"type\":\"record\",\"name\":\"e\",\"fields\":["
                      "{\"name\":\"must\",\"type\":\"long\",\"field-id\":77}]}");
    REQUIRE(rs != NULL);
    ro.reader_schema = rs;
    floe_error_clear(&err);
    CHECK_EQ_INT(read_all(file.data, file.len, &ro, NULL, 0, &err), FLOE_ESCHEMA);
    CHECK(strstr(err.msg, "m0.avro: ") == err.msg);
    CHECK(strstr(err.msg, "must") != NULL);
    floe_avro_schema_free(rs);

    /* incompatible types fail at open */
    rs = parse_schema("{\"type\":\"record\",\"name\":\"e\",\"fields\":["
                      "{\"name\":\"ratio\",\"type\":\"int\",\"field-id\":4}]}");
    REQUIRE(rs != NULL);
    ro.reader_schema = rs;
    CHECK_EQ_INT(read_all(file.data, file.len, &ro, NULL, 0, &err), FLOE_ESCHEMA);
    floe_avro_schema_free(rs);
    floe_buf_free(&file);
}

static void build_noid(floe_arena *a, floe_avro_value *v, int k) {
    REQUIRE(floe_avro_set_record(v, a, 3) == 0);
    floe_avro_set_long(&v->u.list.items[0], (int64_t)k << 40);
    floe_avro_set_string(&v->u.list.items[1], k % 2 ? "odd" : "even");
    if (k % 3 == 0)
        floe_avro_set_null(&v->u.list.items[2]);
    else if (k % 3 == 1)
        floe_avro_set_int(&v->u.list.items[2], k);
    else
        floe_avro_set_string(&v->u.list.items[2], "s");
}

TEST(test_resolve_by_name_and_unions) {
    floe_buf file;
    floe_buf_init(&file, 0);
    REQUIRE(write_records("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                          "{\"name\":\"big\",\"type\":\"long\"},"
                          "{\"name\":\"word\",\"type\":\"string\"},"
                          "{\"name\":\"u\",\"type\":[\"null\",\"int\",\"string\"]}]}",
                          build_noid, 9, &file) == 0);
    floe_error err;
    floe_error_clear(&err);
    /* by name and alias; long -> double; writer union -> reader union with another
     * order and a promotion (int -> long) */
    floe_avro_schema *rs = parse_schema(
        "{\"type\":\"record\",\"name\":\"other\",\"fields\":["
        "{\"name\":\"u\",\"type\":[\"string\",\"long\",\"null\"]},"
        "{\"name\":\"text\",\"aliases\":[\"word\"],\"type\":\"string\"},"
        "{\"name\":\"big\",\"type\":\"double\"}]}");
    REQUIRE(rs != NULL);
    floe_avro_reader_options ro = {.reader_schema = rs};
    char *lines[9] = {0};
    CHECK_EQ_INT(read_all(file.data, file.len, &ro, lines, 9, &err), 9);
    CHECK_EQ_STR(lines[0], "{\"u\":null,\"text\":\"even\",\"big\":0}");
    CHECK_EQ_STR(lines[1], "{\"u\":1,\"text\":\"odd\",\"big\":1099511627776}");
    CHECK_EQ_STR(lines[2], "{\"u\":\"s\",\"text\":\"even\",\"big\":2199023255552}");
    for (int i = 0; i < 9; i++)
        free(lines[i]);
    floe_avro_schema_free(rs);

    /* writer union -> reader non-union: fine while the data uses matching branches, an
     * error naming the branch when it does not */
    rs = parse_schema("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                      "{\"name\":\"u\",\"type\":\"long\"}]}");
    REQUIRE(rs != NULL);
    ro.reader_schema = rs;
    floe_avro_reader *r;
    REQUIRE_OK(floe_avro_reader_open_mem(file.data, file.len, &ro, &r, &err), err);
    const floe_avro_value *v;
    int rc = floe_avro_reader_next(r, &v, &err); /* record 0: u is null */
    CHECK_EQ_INT(rc, FLOE_ESCHEMA);
    CHECK(strstr(err.msg, "block 1") != NULL);
    CHECK(strstr(err.msg, "record 0") != NULL);
    CHECK(strstr(err.msg, "branch 0 (null)") != NULL);
    floe_avro_reader_close(r);
    floe_avro_schema_free(rs);

    /* narrowing long -> int is refused unless asked for, and then range-checked */
    rs = parse_schema("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                      "{\"name\":\"big\",\"type\":\"int\"}]}");
    REQUIRE(rs != NULL);
    ro.reader_schema = rs;
    CHECK_EQ_INT(read_all(file.data, file.len, &ro, NULL, 0, &err), FLOE_ESCHEMA);
    ro.narrow_long_to_int = true;
    REQUIRE_OK(floe_avro_reader_open_mem(file.data, file.len, &ro, &r, &err), err);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 1); /* 0 fits */
    CHECK_EQ_INT(v->u.list.items[0].u.i, 0);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), FLOE_ESCHEMA); /* 2^40 does not */
    floe_avro_reader_close(r);
    floe_avro_schema_free(rs);
    floe_buf_free(&file);
}

/* Values decoded into a caller's arena outlive the reader. */
TEST(test_reader_user_arena) {
    floe_buf file;
    floe_buf_init(&file, 0);
    REQUIRE(write_records(WRITER_V1, build_v1, 20, &file) == 0);
    floe_arena a;
    floe_arena_init(&a, 0);
    floe_avro_reader_options ro = {.arena = &a};
    floe_avro_reader *r;
    floe_error err;
    REQUIRE_OK(floe_avro_reader_open_mem(file.data, file.len, &ro, &r, &err), err);
    const floe_avro_value *keep[20];
    int n = 0;
    while (n < 20 && floe_avro_reader_next(r, &keep[n], &err) == 1)
        n++;
    CHECK_EQ_INT(n, 20);
    floe_avro_reader_close(r);
    for (int i = 0; i < n; i++) {
        char want[16];
        snprintf(want, sizeof want, "name%d", i);
        CHECK_EQ_STR((const char *)keep[i]->u.list.items[1].u.bytes.p, want);
    }
    floe_arena_reset(&a);
    floe_buf_free(&file);
}

/* ---- corrupt and hostile input -------------------------------------------------------- */

static void make_simple_file(floe_buf *out, floe_codec codec, int n, size_t block_records) {
    floe_avro_schema *s = parse_schema(
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
        "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"xs\",\"type\":{\"type\":\"array\","
        "\"items\":\"int\"}}]}");
    REQUIRE(s != NULL);
    floe_arena a;
    floe_arena_init(&a, 0);
    floe_avro_writer_options wo = {.codec = codec, .block_records = block_records,
                                   .sync = test_sync};
    floe_avro_writer *w;
    floe_error err;
    REQUIRE_OK(floe_avro_writer_open(s, &wo, out, &w, &err), err);
    for (int k = 0; k < n; k++) {
        floe_avro_value v;
        REQUIRE(floe_avro_set_record(&v, &a, 3) == 0);
        floe_avro_set_long(&v.u.list.items[0], k);
        floe_avro_set_string(&v.u.list.items[1], "hello");
        REQUIRE(floe_avro_set_array(&v.u.list.items[2], &a, 3) == 0);
        for (int i = 0; i < 3; i++)
            floe_avro_set_int(&v.u.list.items[2].u.list.items[i], i + k);
        REQUIRE_OK(floe_avro_writer_append(w, &v, &err), err);
    }
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
}

/* Offset of the first data block (just after the header's sync marker). */
static size_t first_block_offset(const floe_buf *f) {
    for (size_t i = 4; i + 16 <= f->len; i++)
        if (memcmp(f->data + i, test_sync, 16) == 0)
            return i + 16;
    return 0;
}

TEST(test_corrupt_magic_header_sync) {
    floe_buf f;
    floe_buf_init(&f, 0);
    make_simple_file(&f, FLOE_CODEC_UNCOMPRESSED, 30, 10);
    floe_error err;
    CHECK_EQ_INT(read_all(f.data, f.len, NULL, NULL, 0, &err), 30);

    f.data[0] = 'X';
    floe_error_clear(&err);
    CHECK_EQ_INT(read_all(f.data, f.len, NULL, NULL, 0, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "magic") != NULL);
    f.data[0] = 'O';

    /* the sync marker after block 2 */
    size_t b1 = first_block_offset(&f);
    REQUIRE(b1 > 0);
    size_t second_sync = 0;
    for (size_t i = b1, seen = 0; i + 16 <= f.len; i++)
        if (memcmp(f.data + i, test_sync, 16) == 0 && ++seen == 2) {
            second_sync = i;
            break;
        }
    REQUIRE(second_sync > 0);
    f.data[second_sync + 5] ^= 0xff;
    floe_avro_reader *r;
    floe_avro_reader_options ro = {.name = "snap-1.avro"};
    REQUIRE_OK(floe_avro_reader_open_mem(f.data, f.len, &ro, &r, &err), err);
    const floe_avro_value *v;
    int rc, k = 0;
    while ((rc = floe_avro_reader_next(r, &v, &err)) == 1)
        k++;
    CHECK_EQ_INT(rc, FLOE_ECORRUPT);
    CHECK_EQ_INT(k, 10); /* block 1 read fine */
    CHECK(strstr(err.msg, "snap-1.avro: block 2") == err.msg);
    CHECK(strstr(err.msg, "bad sync marker") != NULL);
    CHECK_EQ_INT(err.offset, (int64_t)second_sync);
    floe_avro_reader_close(r);
    f.data[second_sync + 5] ^= 0xff;

    /* unknown codec */
    floe_buf g;
    floe_buf_init(&g, 0);
    make_simple_file(&g, FLOE_CODEC_UNCOMPRESSED, 1, 0);
    uint8_t *c = memmem(g.data, g.len, "\x08null", 5);
    REQUIRE(c != NULL);
    memcpy(c + 1, "lzma", 4);
    CHECK_EQ_INT(read_all(g.data, g.len, NULL, NULL, 0, &err), FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "lzma") != NULL);
    floe_buf_free(&g);
    floe_buf_free(&f);
}

/* Every prefix of a valid file either reads (the cut falls between blocks) or fails with
 * FLOE_ECORRUPT; never anything else. */
TEST(test_corrupt_every_truncation) {
    floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_DEFLATE, FLOE_CODEC_SNAPPY,
                           FLOE_CODEC_ZSTD};
    for (size_t ci = 0; ci < 4; ci++) {
        floe_buf f;
        floe_buf_init(&f, 0);
        make_simple_file(&f, codecs[ci], 12, 5);
        size_t ok = 0;
        for (size_t cut = 0; cut < f.len; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1); /* exact size so ASan sees overreads */
            memcpy(copy, f.data, cut);
            floe_error err;
            floe_error_clear(&err);
            int64_t n = read_all(copy, cut, NULL, NULL, 0, &err);
            if (n >= 0)
                ok++;
            else if (n != FLOE_ECORRUPT)
                harness_fail(__FILE__, __LINE__, "%s cut %zu: %lld %s",
                             floe_codec_name(codecs[ci]), cut, (long long)n, err.msg);
            free(copy);
        }
        /* the header alone and after blocks 1 and 2 */
        CHECK_EQ_INT(ok, 3);
        floe_buf_free(&f);
    }
}

/* Flip every byte of a small file in turn: whatever happens, no crash and no error other
 * than corruption / unsupported / schema. */
TEST(test_corrupt_every_byte) {
    floe_buf f;
    floe_buf_init(&f, 0);
    make_simple_file(&f, FLOE_CODEC_UNCOMPRESSED, 6, 2);
    for (size_t i = 0; i < f.len; i++) {
        for (int m = 0; m < 2; m++) {
            uint8_t *copy = malloc(f.len);
            memcpy(copy, f.data, f.len);
            copy[i] = m ? (uint8_t)(copy[i] ^ 0x80) : 0xff;
            floe_error err;
            int64_t n = read_all(copy, f.len, NULL, NULL, 0, &err);
            if (n < 0 && n != FLOE_ECORRUPT && n != FLOE_EUNSUPPORTED && n != FLOE_ESCHEMA)
                harness_fail(__FILE__, __LINE__, "byte %zu: %lld %s", i, (long long)n, err.msg);
            free(copy);
        }
    }
    floe_buf_free(&f);
}

/* Hand-made hostile blocks after a valid header. */
static int64_t read_with_block(const char *schema, const uint8_t *block, size_t n,
                               bool add_sync, floe_error *err) {
    floe_avro_schema *s = parse_schema(schema);
    if (!s)
        return -999;
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_avro_writer_options wo = {.sync = test_sync};
    floe_avro_writer *w;
    if (floe_avro_writer_open(s, &wo, &f, &w, err) < 0 || floe_avro_writer_close(w, err) < 0)
        harness_fail(__FILE__, __LINE__, "%s", err->msg);
    floe_buf_append(&f, block, n);
    if (add_sync)
        floe_buf_append(&f, test_sync, 16);
    uint8_t *copy = malloc(f.len);
    memcpy(copy, f.data, f.len);
    int64_t rc = read_all(copy, f.len, NULL, NULL, 0, err);
    free(copy);
    floe_buf_free(&f);
    floe_avro_schema_free(s);
    return rc;
}

TEST(test_corrupt_hostile_counts) {
    floe_error err;
    /* count 2^40 records of long in a 1-byte block */
    static const uint8_t huge_count[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x02, 0x00};
    floe_error_clear(&err);
    CHECK_EQ_INT(read_with_block("\"long\"", huge_count, sizeof huge_count, true, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "block 1") != NULL);
    /* 2 billion empty records (zero bytes each): stopped by the record cap */
    static const uint8_t empties[] = {0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00};
    CHECK_EQ_INT(read_with_block("{\"type\":\"record\",\"name\":\"e\",\"fields\":[]}", empties,
                                 sizeof empties, true, &err),
                 FLOE_ECORRUPT);
    /* block size larger than the file */
    static const uint8_t big_size[] = {0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x02};
    CHECK_EQ_INT(read_with_block("\"long\"", big_size, sizeof big_size, true, &err),
                 FLOE_ECORRUPT);
    /* negative block size / count */
    static const uint8_t neg[] = {0x01, 0x02, 0x02};
    CHECK_EQ_INT(read_with_block("\"long\"", neg, sizeof neg, true, &err), FLOE_ECORRUPT);
    /* an array claiming 2^40 items inside a 3-byte block */
    static const uint8_t arr[] = {0x02, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
    CHECK_EQ_INT(read_with_block("{\"type\":\"array\",\"items\":\"long\"}", arr, sizeof arr, true,
                                 &err),
                 FLOE_ECORRUPT);
    /* an array of 2^40 nulls (zero bytes each): stopped by the value budget */
    static const uint8_t nulls[] = {0x02, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
    CHECK_EQ_INT(read_with_block("{\"type\":\"array\",\"items\":\"null\"}", nulls, sizeof nulls,
                                 true, &err),
                 FLOE_ECORRUPT);
    /* a string longer than the block */
    static const uint8_t str[] = {0x02, 0x04, 0x7e, 0x41};
    CHECK_EQ_INT(read_with_block("\"string\"", str, sizeof str, true, &err), FLOE_ECORRUPT);
    /* union branch out of range */
    static const uint8_t br[] = {0x02, 0x02, 0x08};
    CHECK_EQ_INT(read_with_block("[\"null\",\"int\"]", br, sizeof br, true, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "union branch 4") != NULL);
    /* a truncated varint inside a record */
    static const uint8_t tv[] = {0x02, 0x02, 0x80};
    CHECK_EQ_INT(read_with_block("\"long\"", tv, sizeof tv, true, &err), FLOE_ECORRUPT);
    /* bytes left over after the last record */
    static const uint8_t left[] = {0x02, 0x04, 0x02, 0x02};
    CHECK_EQ_INT(read_with_block("\"long\"", left, sizeof left, true, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "left over") != NULL);
    /* a recursive type nested deeper than the cap: branch 1 (another node) 120 times */
    floe_error_clear(&err);
    static const char *rec = "{\"type\":\"record\",\"name\":\"n\",\"fields\":[{\"name\":\"next\","
                             "\"type\":[\"null\",\"n\"]}]}";
    uint8_t deep2[400];
    size_t m = 0;
    deep2[m++] = 0x02;
    size_t payload = 121;
    m += floe_avro_put_long(deep2 + m, (int64_t)payload);
    for (size_t i = 0; i < 120; i++)
        deep2[m++] = 0x02;
    deep2[m++] = 0x00;
    CHECK_EQ_INT(read_with_block(rec, deep2, m, true, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "deeper") != NULL);
    /* the same with 40 levels reads */
    m = 0;
    deep2[m++] = 0x02;
    m += floe_avro_put_long(deep2 + m, 41);
    for (size_t i = 0; i < 40; i++)
        deep2[m++] = 0x02;
    deep2[m++] = 0x00;
    CHECK_EQ_INT(read_with_block(rec, deep2, m, true, &err), 1);
}

TEST(test_corrupt_snappy_crc) {
    floe_buf f;
    floe_buf_init(&f, 0);
    make_simple_file(&f, FLOE_CODEC_SNAPPY, 4, 0);
    /* the CRC is the 4 bytes before the final sync marker */
    f.data[f.len - 17] ^= 1;
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(read_all(f.data, f.len, NULL, NULL, 0, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "CRC") != NULL);
    floe_buf_free(&f);
}

/* A block that inflates past the cap fails cleanly, for every codec. */
TEST(test_block_cap) {
    floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_DEFLATE, FLOE_CODEC_SNAPPY,
                           FLOE_CODEC_ZSTD};
    for (size_t ci = 0; ci < 4; ci++) {
        floe_buf f;
        floe_buf_init(&f, 0);
        make_simple_file(&f, codecs[ci], 400, 0); /* one block of ~5 KB */
        floe_avro_reader_options ro = {.max_block_bytes = 1000};
        floe_error err;
        floe_error_clear(&err);
        CHECK_EQ_INT(read_all(f.data, f.len, &ro, NULL, 0, &err), FLOE_ECORRUPT);
        ro.max_block_bytes = 0;
        CHECK_EQ_INT(read_all(f.data, f.len, &ro, NULL, 0, &err), 400);
        ro.max_block_records = 399;
        CHECK_EQ_INT(read_all(f.data, f.len, &ro, NULL, 0, &err), FLOE_ECORRUPT);
        floe_buf_free(&f);
    }
}

/* ---- failure injection ---------------------------------------------------------------- */

/* A field default survives every failed allocation: the parse either fails with
 * FLOE_ENOMEM or keeps the default (an allocation failure is not a default that does not
 * fit its type). */
TEST(test_schema_defaults_under_alloc_failures) {
    /* defaults larger than the schema arena's first block, so that converting them
     * allocates */
    static char SCHEMA[3 * 20000 + 512];
    char big[20001];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    snprintf(SCHEMA, sizeof SCHEMA,
             "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
             "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"string\"},"
             "\"default\":[\"x\",\"%s\"]},"
             "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"bytes\"},"
             "\"default\":{\"k\":\"%s\"}},"
             "{\"name\":\"s\",\"type\":\"string\",\"default\":\"%s\"},"
             "{\"name\":\"u\",\"type\":[\"null\",\"string\"],\"default\":null}]}",
             big, big, big);
    bool succeeded = false;
    for (uint64_t n = 1; n < 2000 && !succeeded; n++) {
        floe_error err;
        floe_error_clear(&err);
        floe_avro_schema *s = NULL;
        floe_alloc_fail_after(n);
        int rc = floe_avro_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err);
        floe_alloc_fail_after(0);
        if (rc == 0) {
            const floe_avro_node *root = floe_avro_schema_root(s);
            for (size_t i = 0; i < root->n_fields; i++)
                if (!root->fields[i].has_default)
                    harness_fail(__FILE__, __LINE__, "alloc fail %llu: field %s lost its default",
                                 (unsigned long long)n, root->fields[i].name);
            succeeded = true;
        } else {
            CHECK_EQ_INT(rc, FLOE_ENOMEM);
        }
        floe_avro_schema_free(s);
    }
    CHECK(succeeded);
}

TEST(test_alloc_failures) {
    floe_buf f;
    floe_buf_init(&f, 0);
    make_simple_file(&f, FLOE_CODEC_DEFLATE, 20, 7);
    bool succeeded = false;
    for (uint64_t n = 1; n < 2000 && !succeeded; n++) {
        floe_error err;
        floe_error_clear(&err);
        floe_alloc_fail_after(n);
        floe_buf out;
        floe_buf_init(&out, 0);
        floe_avro_schema *s = NULL;
        int64_t rc = floe_avro_schema_parse(ALL_TYPES_SCHEMA, strlen(ALL_TYPES_SCHEMA), &s, &err);
        if (rc == 0) {
            floe_avro_writer *w = NULL;
            floe_avro_writer_options wo = {.codec = FLOE_CODEC_SNAPPY};
            rc = floe_avro_writer_open(s, &wo, &out, &w, &err);
            if (rc == 0)
                rc = floe_avro_writer_close(w, &err);
        }
        if (rc == 0)
            rc = read_all(f.data, f.len, NULL, NULL, 0, &err);
        floe_alloc_fail_after(0);
        if (rc >= 0) {
            CHECK_EQ_INT(rc, 20);
            succeeded = true;
        } else if (rc != FLOE_ENOMEM && rc != FLOE_ELIMIT) {
            harness_fail(__FILE__, __LINE__, "alloc fail %llu: %lld %s",
                         (unsigned long long)n, (long long)rc, err.msg);
        }
        floe_avro_schema_free(s);
        floe_buf_free(&out);
    }
    CHECK(succeeded);
    floe_buf_free(&f);
}

/* ---- files through FileIO ------------------------------------------------------------- */

TEST(test_file_io) {
    floe_buf f;
    floe_buf_init(&f, 0);
    make_simple_file(&f, FLOE_CODEC_ZSTD, 50, 8);
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/m0.avro", dir);
    floe_error err;
    REQUIRE_OK(floe_avro_write_uri(NULL, path, &f, NULL, &err), err);
    floe_input *in;
    REQUIRE_OK(floe_input_open(NULL, path, &in, &err), err);
    floe_avro_reader *r;
    REQUIRE_OK(floe_avro_reader_open_input(in, NULL, &r, &err), err);
    const floe_avro_value *v;
    int n = 0, rc;
    while ((rc = floe_avro_reader_next(r, &v, &err)) == 1) {
        CHECK_EQ_INT(v->u.list.items[0].u.l, n);
        n++;
    }
    CHECK_OK(rc, err);
    CHECK_EQ_INT(n, 50);
    floe_avro_reader_close(r);
    floe_input_close(in);

    /* a header bigger than the first read window */
    char *big = malloc(300000);
    memset(big, 'x', 299999);
    big[299999] = 0;
    floe_avro_schema *s = parse_schema("\"int\"");
    floe_avro_meta meta = {"big", big, 299999};
    floe_avro_writer_options wo = {.meta = &meta, .n_meta = 1};
    floe_avro_writer *w;
    floe_buf_reset(&f);
    REQUIRE_OK(floe_avro_writer_open(s, &wo, &f, &w, &err), err);
    floe_avro_value iv;
    floe_avro_set_int(&iv, 42);
    CHECK_OK(floe_avro_writer_append(w, &iv, &err), err);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    REQUIRE_OK(floe_avro_write_uri(NULL, path, &f, NULL, &err), err);
    REQUIRE_OK(floe_input_open(NULL, path, &in, &err), err);
    REQUIRE_OK(floe_avro_reader_open_input(in, NULL, &r, &err), err);
    size_t len = 0;
    CHECK(floe_avro_reader_meta(r, "big", &len) != NULL && len == 299999);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 1);
    CHECK_EQ_INT(v->u.i, 42);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 0);
    floe_avro_reader_close(r);
    floe_input_close(in);
    /* truncated on disk */
    REQUIRE_OK(floe_avro_write_uri(NULL, path, &(floe_buf){.data = f.data, .len = f.len - 3}, NULL,
                                   &err),
               err);
    REQUIRE_OK(floe_input_open(NULL, path, &in, &err), err);
    REQUIRE_OK(floe_avro_reader_open_input(in, NULL, &r, &err), err);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "m0.avro") != NULL);
    floe_avro_reader_close(r);
    floe_input_close(in);
    floe_avro_schema_free(s);
    free(big);
    floe_buf_free(&f);
}

/* ---- avsc interop --------------------------------------------------------------------- */

/* JSON equality with numbers compared by value (floats within 1e-6 relative: avsc prints a
 * float as the double it widens to, floe as 9 significant digits). */
static bool json_match(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        double x = json_number_value(a), y = json_number_value(b);
        return x == y || fabs(x - y) <= 1e-6 * fmax(fabs(x), fabs(y));
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!json_match(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            const json_t *w = json_object_get(b, k);
            if (!w || !json_match(v, w))
                return false;
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

static bool have_node(void) {
    return harness_run_cmd("node --version >/dev/null 2>&1", NULL) == 0;
}

TEST(test_avsc_reads_floe) {
    REQUIRE(have_node());
    floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_DEFLATE, FLOE_CODEC_SNAPPY,
                           FLOE_CODEC_ZSTD};
    const char *dir = harness_tmpdir();
    for (size_t ci = 0; ci < 4; ci++) {
        floe_avro_schema *s = parse_schema(ALL_TYPES_SCHEMA);
        REQUIRE(s != NULL);
        const floe_avro_node *root = floe_avro_schema_root(s);
        floe_arena a;
        floe_arena_init(&a, 0);
        floe_avro_meta meta[] = {{"format-version", "2", 1}, {"content", "deletes", 7}};
        floe_avro_writer_options wo = {.codec = codecs[ci], .block_size = 700, .meta = meta,
                                       .n_meta = 2};
        floe_buf out, want;
        floe_buf_init(&out, 0);
        floe_buf_init(&want, 0);
        floe_error err;
        floe_avro_writer *w;
        REQUIRE_OK(floe_avro_writer_open(s, &wo, &out, &w, &err), err);
        floe_buf_append_byte(&want, '[');
        enum { N = 120 };
        for (int k = 0; k < N; k++) {
            floe_avro_value v;
            build_all(&a, &v, k);
                REQUIRE_OK(floe_avro_writer_append(w, &v, &err), err);
            if (k)
                floe_buf_append_byte(&want, ',');
            REQUIRE_OK(floe_avro_value_to_json(root, &v, &want, &err), err);
        }
        floe_buf_append(&want, "]", 2);
        REQUIRE_OK(floe_avro_writer_close(w, &err), err);
        char path[4200], cmd[8600];
        snprintf(path, sizeof path, "%s/floe-%s.avro", dir, floe_codec_name(codecs[ci]));
        REQUIRE(harness_write_file(path, out.data, out.len) == 0);
        snprintf(cmd, sizeof cmd, "node tests/js/avro_check.mjs read '%s'", path);
        char *text = NULL;
        int status = harness_run_cmd(cmd, &text);
        CHECK_EQ_INT(status, 0);
        json_error_t jerr;
        json_t *got = text ? json_loads(text, 0, &jerr) : NULL;
        json_t *exp = json_loads((const char *)want.data, 0, &jerr);
        REQUIRE(exp != NULL);
        if (!got) {
            harness_fail(__FILE__, __LINE__, "avsc output for %s: %s", path,
                         text ? text : "(none)");
        } else {
            CHECK_EQ_STR(json_string_value(json_object_get(got, "codec")),
                         floe_avro_codec_avro_name(codecs[ci]));
            json_t *m = json_object_get(got, "meta");
            CHECK_EQ_STR(json_string_value(json_object_get(m, "content")), "deletes");
            CHECK_EQ_STR(json_string_value(json_object_get(m, "format-version")), "2");
            CHECK_EQ_INT(json_integer_value(json_object_get(got, "count")), N);
            json_t *recs = json_object_get(got, "records");
            for (size_t i = 0; i < json_array_size(exp); i++) {
                if (!json_match(json_array_get(recs, i), json_array_get(exp, i))) {
                    char *g = json_dumps(json_array_get(recs, i), JSON_COMPACT);
                    char *x = json_dumps(json_array_get(exp, i), JSON_COMPACT);
                    harness_fail(__FILE__, __LINE__, "%s record %zu:\n avsc %s\n floe %s",
                                 floe_codec_name(codecs[ci]), i, g ? g : "", x ? x : "");
                    free(g);
                    free(x);
                    break;
                }
            }
        }
        json_decref(got);
        json_decref(exp);
        free(text);
        floe_buf_free(&out);
        floe_buf_free(&want);
        floe_arena_reset(&a);
        floe_avro_schema_free(s);
    }
}

TEST(test_floe_reads_avsc) {
    REQUIRE(have_node());
    const char *codecs[] = {"null", "deflate", "snappy"};
    const char *dir = harness_tmpdir();
    for (size_t ci = 0; ci < 3; ci++) {
        char path[4200], cmd[8600];
        snprintf(path, sizeof path, "%s/avsc-%s.avro", dir, codecs[ci]);
        snprintf(cmd, sizeof cmd, "node tests/js/avro_check.mjs write '%s' %s", path,
                 codecs[ci]);
        char *text = NULL;
        CHECK_EQ_INT(harness_run_cmd(cmd, &text), 0);
        json_error_t jerr;
        json_t *exp = text ? json_loads(text, 0, &jerr) : NULL;
        free(text);
        REQUIRE(exp != NULL);
        json_t *recs = json_object_get(exp, "records");
        size_t len = 0;
        char *file = harness_read_file(path, &len);
        REQUIRE(file != NULL);
        floe_avro_reader *r;
        floe_error err;
        REQUIRE_OK(floe_avro_reader_open_mem(file, len, NULL, &r, &err), err);
        CHECK_EQ_STR(floe_avro_reader_meta_str(r, "floe.origin"), "avsc");
        const floe_avro_value *v;
        size_t k = 0;
        int rc;
        while ((rc = floe_avro_reader_next(r, &v, &err)) == 1) {
            char *got = value_json(floe_avro_reader_schema(r), v);
            json_t *g = got ? json_loads(got, 0, &jerr) : NULL;
            if (!g || !json_match(g, json_array_get(recs, k))) {
                char *x = json_dumps(json_array_get(recs, k), JSON_COMPACT);
                harness_fail(__FILE__, __LINE__, "%s record %zu:\n floe %s\n avsc %s",
                             codecs[ci], k, got ? got : "", x ? x : "");
                free(x);
                json_decref(g);
                free(got);
                break;
            }
            json_decref(g);
            free(got);
            k++;
        }
        CHECK_OK(rc < 0 ? rc : 0, err);
        CHECK_EQ_INT(k, json_array_size(recs));
        CHECK(floe_avro_reader_blocks(r) > 5); /* avsc used 2 KiB blocks */
        floe_avro_reader_close(r);
        free(file);
        json_decref(exp);
    }
}

/* ---- Iceberg conformance files -------------------------------------------------------- */

typedef struct file_list {
    char **paths;
    size_t n, cap;
} file_list;

static int collect_avro(void *ctx, const floe_io_entry *e) {
    file_list *l = ctx;
    size_t n = strlen(e->uri);
    if (n < 5 || strcmp(e->uri + n - 5, ".avro") != 0)
        return 0;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->paths = realloc(l->paths, l->cap * sizeof *l->paths);
    }
    l->paths[l->n++] = strdup(e->uri);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

TEST(test_iceberg_conformance) {
    const char *root = harness_conformance("iceberg");
    char rootcopy[4096];
    snprintf(rootcopy, sizeof rootcopy, "%s", root);
    file_list l = {0};
    floe_error err;
    REQUIRE_OK(floe_io_list(NULL, rootcopy, collect_avro, &l, &err), err);
    CHECK(l.n >= 90);
    qsort(l.paths, l.n, sizeof *l.paths, cmp_str);

    /* avsc's record counts, for comparison */
    floe_buf cmd;
    floe_buf_init(&cmd, 0);
    floe_buf_printf(&cmd, "node tests/js/avro_check.mjs count");
    for (size_t i = 0; i < l.n; i++)
        floe_buf_printf(&cmd, " '%s'", l.paths[i]);
    floe_buf_append_byte(&cmd, 0);
    char *counts = NULL;
    CHECK_EQ_INT(harness_run_cmd((const char *)cmd.data, &counts), 0);
    floe_buf_free(&cmd);

    size_t lists = 0, manifests = 0;
    for (size_t i = 0; i < l.n; i++) {
        const char *path = l.paths[i];
        floe_input *in;
        REQUIRE_OK(floe_input_open(NULL, path, &in, &err), err);
        floe_avro_reader *r;
        floe_error_clear(&err);
        int rc = floe_avro_reader_open_input(in, NULL, &r, &err);
        if (rc < 0) {
            harness_fail(__FILE__, __LINE__, "%s", err.msg);
            floe_input_close(in);
            continue;
        }
        const floe_avro_node *rn = floe_avro_reader_schema(r);
        bool is_list = floe_avro_node_field(rn, "manifest_path", NULL) != NULL;
        bool is_manifest = floe_avro_node_field(rn, "data_file", NULL) != NULL;
        CHECK(is_list != is_manifest);
        const floe_avro_value *v;
        int64_t n = 0;
        while ((rc = floe_avro_reader_next(r, &v, &err)) == 1) {
            if (is_list) {
                const floe_avro_value *mp = floe_avro_value_field(rn, v, "manifest_path");
                CHECK(mp && mp->type == FLOE_AVRO_STRING && mp->u.bytes.n > 5 &&
                      strcmp((const char *)mp->u.bytes.p + mp->u.bytes.n - 5, ".avro") == 0);
            } else if (is_manifest) {
                const floe_avro_node *df = floe_avro_node_field(rn, "data_file", NULL)->type;
                const floe_avro_value *dv = floe_avro_value_field(rn, v, "data_file");
                const floe_avro_node *dfr = floe_avro_node_nullable(df) ? floe_avro_node_nullable(df)
                                                                       : df;
                const floe_avro_value *fp = floe_avro_value_field(dfr, dv, "file_path");
                CHECK(fp && fp->type == FLOE_AVRO_STRING && fp->u.bytes.n > 0);
                const floe_avro_value *rc_ = floe_avro_value_field(dfr, dv, "record_count");
                CHECK(rc_ && rc_->type == FLOE_AVRO_LONG && rc_->u.l >= 0);
            }
            n++;
        }
        /* equality_delete_extra_column: PyIceberg wrote snapshot id 9876543210123456789,
         * past the signed 64-bit range: refused naming the field, never wrapped */
        if (strstr(path, "equality_delete_extra_column") &&
            (strstr(path, "/snap-9876543210123456789-") ||
             strstr(path, "/482c51b1-71ea-4508-b282-e2d753a5ef36-m0.avro"))) {
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            CHECK(strstr(err.msg, "snapshot_id: long at byte") != NULL);
            CHECK(strstr(err.msg, "outside the signed 64-bit range") != NULL);
            floe_avro_reader_close(r);
            floe_input_close(in);
            continue;
        }
        if (rc < 0)
            harness_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
        /* the same count as avsc */
        char needle[4200];
        snprintf(needle, sizeof needle, "%lld\t%s\n", (long long)n, path);
        if (!counts || !strstr(counts, needle))
            harness_fail(__FILE__, __LINE__, "%s: floe read %lld records, avsc disagrees", path,
                         (long long)n);
        if (strstr(path, "big_query_error")) {
            /* the re-encoded files lack Iceberg's header keys but are valid Avro */
            CHECK(floe_avro_reader_meta_str(r, "format-version") == NULL);
        } else if (is_manifest) {
            CHECK(floe_avro_reader_meta_str(r, "partition-spec") != NULL);
            CHECK(floe_avro_reader_meta_str(r, "schema") != NULL);
        }
        lists += is_list;
        manifests += is_manifest;
        floe_avro_reader_close(r);
        floe_input_close(in);
    }
    CHECK(lists >= 40);
    CHECK(manifests >= 40);
    free(counts);
    for (size_t i = 0; i < l.n; i++)
        free(l.paths[i]);
    free(l.paths);
}

/* A known value: generated_bounds has one manifest of 5000 entries. */
TEST(test_iceberg_known_values) {
    const char *p = harness_conformance("iceberg/duckdb-iceberg/generated_bounds/metadata/"
                                        "manifest-m0.avro");
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    /* read it with a reader schema of just what a planner needs, by id */
    floe_avro_schema *rs = parse_schema(
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
        "\"fields\":[{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
        "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
        "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","
        "\"element-id\":136}],\"field-id\":135}]}}]}");
    REQUIRE(rs != NULL);
    size_t len;
    char *file = harness_read_file(path, &len);
    REQUIRE(file != NULL);
    /* PyIceberg writes equality_ids (list<int>) as array<long>: read it narrowed */
    floe_avro_reader_options ro = {.reader_schema = rs, .name = "manifest-m0.avro",
                                   .narrow_long_to_int = true};
    floe_avro_reader *r;
    floe_error err;
    REQUIRE_OK(floe_avro_reader_open_mem(file, len, &ro, &r, &err), err);
    const floe_avro_value *v;
    int64_t n = 0, rows = 0;
    int rc;
    while ((rc = floe_avro_reader_next(r, &v, &err)) == 1) {
        const floe_avro_value *df = &v->u.list.items[1];
        CHECK_EQ_INT(df->u.list.n, 3);
        if (n == 0)
            CHECK(strncmp((const char *)df->u.list.items[0].u.bytes.p, "s3://fake-bucket/d/",
                          19) == 0);
        rows += df->u.list.items[1].u.l;
        CHECK_EQ_INT(df->u.list.items[2].type, FLOE_AVRO_NULL);
        n++;
    }
    CHECK_OK(rc < 0 ? rc : 0, err);
    CHECK_EQ_INT(n, 5000);
    CHECK_EQ_INT(rows, 5000000);
    floe_avro_reader_close(r);
    free(file);
    floe_avro_schema_free(rs);
}

int main(void) {
    RUN(test_schema_all_types);
    RUN(test_schema_errors);
    RUN(test_encode_helpers);
    RUN(test_value_encode_errors);
    RUN(test_roundtrip_null);
    RUN(test_roundtrip_deflate);
    RUN(test_roundtrip_snappy);
    RUN(test_roundtrip_zstd);
    RUN(test_writer_deterministic_and_blocks);
    RUN(test_empty_file);
    RUN(test_header_many_metadata_blocks);
    RUN(test_resolve_by_id);
    RUN(test_resolve_by_name_and_unions);
    RUN(test_reader_user_arena);
    RUN(test_corrupt_magic_header_sync);
    RUN(test_corrupt_every_truncation);
    RUN(test_corrupt_every_byte);
    RUN(test_corrupt_hostile_counts);
    RUN(test_corrupt_snappy_crc);
    RUN(test_block_cap);
    RUN(test_alloc_failures);
    RUN(test_schema_defaults_under_alloc_failures);
    RUN(test_file_io);
    RUN(test_avsc_reads_floe);
    RUN(test_floe_reads_avsc);
    RUN(test_iceberg_conformance);
    RUN(test_iceberg_known_values);
    return harness_finish();
}
