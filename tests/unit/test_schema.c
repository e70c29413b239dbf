/* test_schema.c - Iceberg schema JSON parse/serialize, level derivation, lookups. */
#include "floe/schema.h"
#include "harness.h"
#include "common/testing.h"

#include <stdlib.h>

static const char *ALL_TYPES =
    "{\"type\":\"struct\",\"schema-id\":7,\"identifier-field-ids\":[1],\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\",\"doc\":\"primary\"},"
    "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":3,\"name\":\"i\",\"required\":false,\"type\":\"int\",\"initial-default\":5,"
    "\"write-default\":6},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":6,\"name\":\"dec9\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":7,\"name\":\"dec18\",\"required\":false,\"type\":\"decimal(18,0)\"},"
    "{\"id\":8,\"name\":\"dec38\",\"required\":false,\"type\":\"decimal(38,10)\"},"
    "{\"id\":9,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":10,\"name\":\"t\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":11,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":12,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":13,\"name\":\"tsn\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":14,\"name\":\"tstzn\",\"required\":false,\"type\":\"timestamptz_ns\"},"
    "{\"id\":15,\"name\":\"s\",\"required\":false,\"type\":\"string\","
    "\"initial-default\":\"x\"},"
    "{\"id\":16,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":17,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[3]\"},"
    "{\"id\":18,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":19,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":20,\"name\":\"x\",\"required\":true,\"type\":\"int\"}]}},"
    "{\"id\":21,\"name\":\"l\",\"required\":true,\"type\":{\"type\":\"list\",\"element-id\":22,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":23,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":24,"
    "\"key\":\"string\",\"value-id\":25,\"value\":\"double\",\"value-required\":true}}"
    "]}";

TEST(test_parse_all_types) {
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(ALL_TYPES, strlen(ALL_TYPES), &s, &err), err);
    CHECK_EQ_INT(s->schema_id, 7);
    CHECK_EQ_INT(s->n_identifier, 1);
    CHECK_EQ_INT(s->identifier_field_ids[0], 1);
    CHECK_EQ_INT(s->root.nchildren, 21);
    CHECK_EQ_INT(s->nleaves, 22);
    CHECK_EQ_INT(s->highest_field_id, 25);
    static const struct {
        const char *path;
        floe_phys phys;
        int32_t len;
    } want[] = {
        {"id", FLOE_PHYS_INT64, 0},         {"b", FLOE_PHYS_BOOLEAN, 0},
        {"i", FLOE_PHYS_INT32, 0},          {"f", FLOE_PHYS_FLOAT, 0},
        {"d", FLOE_PHYS_DOUBLE, 0},         {"dec9", FLOE_PHYS_INT32, 0},
        {"dec18", FLOE_PHYS_INT64, 0},      {"dec38", FLOE_PHYS_FIXED, 16},
        {"dt", FLOE_PHYS_INT32, 0},         {"t", FLOE_PHYS_INT64, 0},
        {"ts", FLOE_PHYS_INT64, 0},         {"tstz", FLOE_PHYS_INT64, 0},
        {"tsn", FLOE_PHYS_INT64, 0},        {"tstzn", FLOE_PHYS_INT64, 0},
        {"s", FLOE_PHYS_BYTE_ARRAY, 0},     {"u", FLOE_PHYS_FIXED, 16},
        {"fx", FLOE_PHYS_FIXED, 3},         {"bin", FLOE_PHYS_BYTE_ARRAY, 0},
        {"st.x", FLOE_PHYS_INT32, 0},       {"l.element", FLOE_PHYS_BYTE_ARRAY, 0},
        {"m.key", FLOE_PHYS_BYTE_ARRAY, 0}, {"m.value", FLOE_PHYS_DOUBLE, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const floe_field *f = floe_schema_find_path(s, want[i].path);
        REQUIRE(f != NULL);
        CHECK_EQ_INT(f->phys, want[i].phys);
        CHECK_EQ_INT(f->type_length, want[i].len);
        CHECK(f->leaf >= 0);
        CHECK(s->leaves[f->leaf] == f);
    }
    const floe_field *d = floe_schema_find_path(s, "dec9");
    CHECK_EQ_INT(d->precision, 9);
    CHECK_EQ_INT(d->scale, 2);
    CHECK_EQ_STR(floe_schema_find_id(s, 1)->doc, "primary");
    CHECK_EQ_STR(floe_schema_find_id(s, 3)->initial_default_json, "5");
    CHECK_EQ_STR(floe_schema_find_id(s, 3)->write_default_json, "6");
    CHECK_EQ_STR(floe_schema_find_id(s, 15)->initial_default_json, "\"x\"");
    CHECK_EQ_STR(floe_schema_find_id(s, 22)->name, "element");
    CHECK(!floe_schema_find_id(s, 22)->required);
    CHECK(floe_schema_find_id(s, 24)->required); /* map keys always required */
    CHECK(floe_schema_find_id(s, 25)->required);
    CHECK(floe_schema_find_id(s, 99) == NULL);
    CHECK(floe_schema_find_path(s, "st.nope") == NULL);
    char buf[64];
    CHECK_EQ_STR(floe_field_path(floe_schema_find_id(s, 25), buf, sizeof buf), "m.value");
    CHECK_EQ_STR(floe_field_type_str(floe_schema_find_id(s, 8), buf, sizeof buf),
                 "decimal(38, 10)");
    CHECK_EQ_STR(floe_field_type_str(floe_schema_find_id(s, 17), buf, sizeof buf), "fixed[3]");
    /* leaves are depth-first: st.x right after bin, then l.element, m.key, m.value */
    CHECK_EQ_INT(floe_schema_find_id(s, 20)->leaf, 18);
    CHECK_EQ_INT(floe_schema_find_id(s, 25)->leaf, 21);
    floe_schema_free(s);
}

TEST(test_round_trip) {
    floe_error err;
    floe_schema *s = NULL, *s2 = NULL, *c = NULL;
    REQUIRE_OK(floe_schema_parse(ALL_TYPES, strlen(ALL_TYPES), &s, &err), err);
    char *j1 = floe_schema_to_json(s, false);
    REQUIRE(j1 != NULL);
    REQUIRE_OK(floe_schema_parse(j1, strlen(j1), &s2, &err), err);
    char *j2 = floe_schema_to_json(s2, true);
    char *j2c = floe_schema_to_json(s2, false);
    CHECK_EQ_STR(j1, j2c);
    CHECK(strstr(j1, "\"decimal(9, 2)\"") != NULL);
    CHECK(strstr(j1, "\"fixed[3]\"") != NULL);
    CHECK(strstr(j1, "\"element-id\":22") != NULL);
    CHECK(strstr(j1, "\"value-required\":true") != NULL);
    CHECK(strstr(j1, "\"identifier-field-ids\":[1]") != NULL);
    CHECK(strstr(j1, "\"initial-default\":5") != NULL);
    CHECK(strstr(j2, "\n  ") != NULL); /* pretty */
    REQUIRE_OK(floe_schema_clone(s2, &c, &err), err);
    char *j3 = floe_schema_to_json(c, false);
    CHECK_EQ_STR(j1, j3);
    CHECK_EQ_INT(c->nleaves, s->nleaves);
    floe_free(j1);
    floe_free(j2);
    floe_free(j2c);
    floe_free(j3);
    floe_schema_free(s);
    floe_schema_free(s2);
    floe_schema_free(c);
}

/* Levels computed by hand from the Parquet layout in schema.h. */
TEST(test_levels_nested) {
    const char *js =
        "{\"type\":\"struct\",\"fields\":["
        /* l: optional list<required struct<a: optional list<optional int>>> */
        "{\"id\":1,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":2,"
        "\"element-required\":true,\"element\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":3,\"name\":\"a\",\"required\":false,\"type\":{\"type\":\"list\","
        "\"element-id\":4,\"element-required\":false,\"element\":\"int\"}}]}}},"
        /* m: optional map<string, optional list<required long>> */
        "{\"id\":5,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":6,"
        "\"key\":\"string\",\"value-id\":7,\"value-required\":false,\"value\":{\"type\":\"list\","
        "\"element-id\":8,\"element-required\":true,\"element\":\"long\"}}},"
        /* r: required struct<q: required int, o: optional struct<z: required string>> */
        "{\"id\":9,\"name\":\"r\",\"required\":true,\"type\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":10,\"name\":\"q\",\"required\":true,\"type\":\"int\"},"
        "{\"id\":11,\"name\":\"o\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":12,\"name\":\"z\",\"required\":true,\"type\":\"string\"}]}}]}}"
        "]}";
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    static const struct {
        int32_t id;
        int def, rep, leaf;
    } want[] = {
        {1, 1, 0, -1}, {2, 2, 1, -1}, {3, 3, 1, -1}, {4, 5, 2, 0},
        {5, 1, 0, -1}, {6, 2, 1, 1},  {7, 3, 1, -1}, {8, 4, 2, 2},
        {9, 0, 0, -1}, {10, 0, 0, 3}, {11, 1, 0, -1}, {12, 1, 0, 4},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const floe_field *f = floe_schema_find_id(s, want[i].id);
        REQUIRE(f != NULL);
        if (f->def_level != want[i].def || f->rep_level != want[i].rep || f->leaf != want[i].leaf)
            harness_fail(__FILE__, __LINE__, "field %d: def %d rep %d leaf %d, want %d %d %d",
                         (int)want[i].id, f->def_level, f->rep_level, (int)f->leaf, want[i].def,
                         want[i].rep, want[i].leaf);
    }
    CHECK(floe_schema_find_id(s, 4)->parent == floe_schema_find_id(s, 3));
    CHECK(floe_schema_find_id(s, 1)->parent == NULL);
    CHECK_EQ_INT(s->nleaves, 5);
    floe_schema_free(s);
}

static void expect_bad(const char *js, const char *needle) {
    floe_error err;
    floe_schema *s = NULL;
    int rc = floe_schema_parse(js, strlen(js), &s, &err);
    if (rc == 0) {
        harness_fail(__FILE__, __LINE__, "accepted: %s", js);
        floe_schema_free(s);
        return;
    }
    CHECK(s == NULL);
    if (!strstr(err.msg, needle))
        harness_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", err.msg, needle);
}

#define F1(type) "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,\"type\":" type "}]}"

TEST(test_rejects) {
    expect_bad("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
               "\"type\":\"int\"},{\"id\":1,\"name\":\"b\",\"required\":true,\"type\":\"int\"}]}",
               "duplicate field id 1");
    expect_bad("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
               "\"type\":\"int\"},{\"id\":2,\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}",
               "duplicate top-level field name 'a'");
    expect_bad(F1("{\"type\":\"list\",\"element-id\":1,\"element\":\"int\",\"element-required\":true}"),
               "duplicate field id 1");
    expect_bad(F1("\"decimal(39,2)\""), "precision 39 outside 1..38");
    expect_bad(F1("\"decimal(0,0)\""), "precision 0 outside 1..38");
    expect_bad(F1("\"decimal(5,6)\""), "scale 6 greater than precision 5");
    expect_bad(F1("\"decimal(5)\""), "malformed decimal type");
    expect_bad(F1("\"fixed[0]\""), "fixed length must be >= 1");
    expect_bad(F1("\"fixed[x]\""), "malformed fixed type");
    expect_bad(F1("\"varchar\""), "unknown or unsupported type \"varchar\"");
    expect_bad(F1("{\"type\":\"tuple\"}"), "unknown nested type \"tuple\"");
    expect_bad(F1("{\"type\":\"map\",\"key-id\":2,\"key\":\"string\",\"value-id\":3,\"value\":\"int\"}"),
               "\"value-required\" must be true or false");
    expect_bad("{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}",
               "\"id\" must be an integer");
    expect_bad("{\"type\":\"struct\",\"fields\":[{\"id\":-3,\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}",
               "outside 0..2147483647");
    expect_bad("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"\",\"required\":true,\"type\":\"int\"}]}",
               "non-empty string");
    expect_bad("{\"type\":\"struct\"}", "\"fields\" array");
    expect_bad("{\"type\":\"struct\",\"fields\":[], \"fields\":[]}", "duplicate");
    expect_bad("{\"type\":\"struct\",\"identifier-field-ids\":[9],\"fields\":[]}",
               "identifier field id 9 is not in the schema");
    expect_bad("[1]", "must be an object");
    expect_bad("{\"type\":\"struct\",\"fields\":[", "schema JSON: line 1");
    expect_bad("{\"format-version\":2,\"current-schema-id\":3,\"schemas\":[{\"type\":\"struct\","
               "\"schema-id\":1,\"fields\":[]}]}",
               "current-schema-id 3 not among");
}

TEST(test_table_metadata) {
    const char *v2 = "{\"format-version\":2,\"current-schema-id\":1,\"schemas\":["
                     "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]},"
                     "{\"type\":\"struct\",\"schema-id\":1,\"fields\":[{\"id\":1,\"name\":\"x\","
                     "\"required\":false,\"type\":\"long\"}]}]}";
    const char *v1 = "{\"format-version\":1,\"schema\":{\"type\":\"struct\",\"fields\":["
                     "{\"id\":4,\"name\":\"y\",\"required\":true,\"type\":\"string\"}]}}";
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(v2, strlen(v2), &s, &err), err);
    CHECK_EQ_INT(s->schema_id, 1);
    CHECK_EQ_INT(s->nleaves, 1);
    CHECK_EQ_STR(s->leaves[0]->name, "x");
    floe_schema_free(s);
    REQUIRE_OK(floe_schema_parse(v1, strlen(v1), &s, &err), err);
    CHECK_EQ_INT(s->highest_field_id, 4);
    CHECK_EQ_STR(s->leaves[0]->name, "y");
    floe_schema_free(s);
}

TEST(test_decimal_bytes_and_widths) {
    CHECK_EQ_INT(floe_decimal_bytes(1), 1);
    CHECK_EQ_INT(floe_decimal_bytes(2), 1);
    CHECK_EQ_INT(floe_decimal_bytes(3), 2);
    CHECK_EQ_INT(floe_decimal_bytes(9), 4);
    CHECK_EQ_INT(floe_decimal_bytes(10), 5);
    CHECK_EQ_INT(floe_decimal_bytes(18), 8);
    CHECK_EQ_INT(floe_decimal_bytes(19), 9);
    CHECK_EQ_INT(floe_decimal_bytes(20), 9);
    CHECK_EQ_INT(floe_decimal_bytes(38), 16);
    CHECK_EQ_INT(floe_phys_width(FLOE_PHYS_INT32, 0), 4);
    CHECK_EQ_INT(floe_phys_width(FLOE_PHYS_FIXED, 9), 9);
    CHECK_EQ_INT(floe_phys_width(FLOE_PHYS_BYTE_ARRAY, 0), 0);
    CHECK_EQ_STR(floe_type_name(FLOE_TYPE_TIMESTAMPTZ_NS), "timestamptz_ns");
    CHECK(floe_type_is_nested(FLOE_TYPE_MAP));
    CHECK(!floe_type_is_nested(FLOE_TYPE_UUID));
}

TEST(test_builder) {
    floe_error err;
    floe_schema *s = floe_schema_new();
    REQUIRE(s != NULL);
    floe_field *f = floe_arena_alloc(&s->arena, 2 * sizeof *f);
    REQUIRE(f != NULL);
    f[0] = (floe_field){.id = 1, .name = "a", .required = true, .type = FLOE_TYPE_LONG};
    f[1] = (floe_field){.id = 2, .name = "p", .type = FLOE_TYPE_DECIMAL, .precision = 20,
                        .scale = 2};
    s->root.children = f;
    s->root.nchildren = 2;
    REQUIRE_OK(floe_schema_finish(s, &err), err);
    CHECK_EQ_INT(s->nleaves, 2);
    CHECK_EQ_INT(f[1].phys, FLOE_PHYS_FIXED);
    CHECK_EQ_INT(f[1].type_length, 9);
    CHECK_EQ_INT(f[1].def_level, 1);
    f[1].precision = 40;
    CHECK_EQ_INT(floe_schema_finish(s, &err), FLOE_ESCHEMA);
    CHECK(strstr(err.msg, "precision 40") != NULL);
    floe_schema_free(s);
}

TEST(test_alloc_failure) {
    /* fail every allocation in turn until parsing succeeds: each failure is clean
     * (ASan reports any leak at exit) */
    bool ok = false;
    for (uint64_t n = 1; n < 1000 && !ok; n++) {
        floe_error err;
        floe_schema *s = NULL, *c = NULL;
        floe_alloc_fail_after(n);
        int rc = floe_schema_parse(ALL_TYPES, strlen(ALL_TYPES), &s, &err);
        if (rc == 0)
            rc = floe_schema_clone(s, &c, &err);
        floe_alloc_fail_after(0);
        if (rc == 0) {
            ok = true;
        } else {
            CHECK_EQ_INT(rc, FLOE_ENOMEM);
        }
        floe_schema_free(s);
        floe_schema_free(c);
    }
    CHECK(ok);
}

TEST(test_load_file) {
    const char *dir = harness_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/schema.json", dir);
    REQUIRE(harness_write_file(path, ALL_TYPES, strlen(ALL_TYPES)) == 0);
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_load(path, &s, &err), err);
    CHECK_EQ_INT(s->nleaves, 22);
    floe_schema_free(s);
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK_EQ_INT(floe_schema_load(path, &s, &err), FLOE_ENOTFOUND);
}

int main(void) {
    RUN(test_parse_all_types);
    RUN(test_round_trip);
    RUN(test_levels_nested);
    RUN(test_rejects);
    RUN(test_table_metadata);
    RUN(test_decimal_bytes_and_widths);
    RUN(test_builder);
    RUN(test_alloc_failure);
    RUN(test_load_file);
    return harness_finish();
}
