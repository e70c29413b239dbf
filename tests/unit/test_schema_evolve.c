/* test_schema_evolve.c - schema evolution (floe_schema_update: field id assignment,
 * promotion rules, refusals) and its table side (floe_metadata_builder_update_schema,
 * floe_metadata_builder_update_spec: schema and spec ids, reuse, partition field ids in
 * v1 and v2). */
#include <stdlib.h>
#include <string.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "floe/table_metadata.h"
#include "harness.h"
#include "schema/schema_internal.h"

static const char *BASE =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"int\"},"
    "{\"id\":2,\"name\":\"k\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"p\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":4,\"name\":\"geo\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":5,\"name\":\"city\",\"required\":false,\"type\":\"string\"}]}}]}},"
    "{\"id\":6,\"name\":\"items\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":7,\"element-required\":false,\"element\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":8,\"name\":\"sku\",\"required\":false,\"type\":\"string\"}]}}},"
    "{\"id\":9,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":10,"
    "\"key\":\"string\",\"value-id\":11,\"value-required\":false,\"value\":{\"type\":\"struct\","
    "\"fields\":[{\"id\":12,\"name\":\"n\",\"required\":false,\"type\":\"long\"}]}}},"
    "{\"id\":13,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":14,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":15,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"}]}";

static floe_schema *base_schema(void) {
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(BASE, strlen(BASE), &s, &err), err);
    return s;
}

/* Apply c to BASE with last-column-id `last`; the result (NULL on error, rc in *rc). */
static floe_schema *apply(const floe_schema_change *c, int32_t *last, int *rc, floe_error *err) {
    floe_schema *b = base_schema(), *out = NULL;
    *rc = floe_schema_update(b, c, last, &out, err);
    floe_schema_free(b);
    return out;
}

TEST(test_add_assigns_ids_from_last_column_id) {
    floe_error err;
    int rc;
    /* last-column-id above the schema's highest id (a column was dropped): ids go on */
    int32_t last = 20;
    floe_schema_change c = {.kind = FLOE_SCHEMA_ADD_COLUMN, .path = "p.geo.lat", .type = "double",
                            .doc = "latitude"};
    floe_schema *s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    const floe_field *f = floe_schema_find_path(s, "p.geo.lat");
    REQUIRE(f != NULL);
    CHECK_EQ_INT(f->id, 21);
    CHECK_EQ_INT(last, 21);
    CHECK(!f->required);
    CHECK_EQ_STR(f->doc, "latitude");
    CHECK_EQ_INT(f->type, FLOE_TYPE_DOUBLE);
    floe_schema_free(s);

    /* nested type: the struct's fields first, then their children */
    last = 15;
    c = (floe_schema_change){.kind = FLOE_SCHEMA_ADD_COLUMN, .path = "x",
                             .type = "struct<a: list<struct<q: int>>, b: map<string, long>, c: decimal(10,2)>"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(floe_schema_find_path(s, "x")->id, 16);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.a")->id, 17);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.b")->id, 18);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.c")->id, 19);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.a.element")->id, 20);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.a.element.q")->id, 21);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.b.key")->id, 22);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.b.value")->id, 23);
    CHECK(floe_schema_find_path(s, "x.b.key")->required);
    CHECK(!floe_schema_find_path(s, "x.b.value")->required);
    CHECK_EQ_INT(floe_schema_find_path(s, "x.c")->precision, 10);
    CHECK_EQ_INT(last, 23);
    CHECK_EQ_INT(s->root.children[s->root.nchildren - 1].id, 16); /* added at the end */
    floe_schema_free(s);

    /* into a list's element struct and a map's value struct, by shorthand or in full */
    const char *paths[] = {"items.qty", "items.element.qty", "m.z", "m.value.z"};
    const char *found[] = {"items.element.qty", "items.element.qty", "m.value.z", "m.value.z"};
    for (size_t i = 0; i < 4; i++) {
        last = 15;
        c = (floe_schema_change){.kind = FLOE_SCHEMA_ADD_COLUMN, .path = paths[i], .type = "int"};
        s = apply(&c, &last, &rc, &err);
        REQUIRE_OK(rc, err);
        const floe_field *q = floe_schema_find_path(s, found[i]);
        REQUIRE(q != NULL);
        CHECK_EQ_INT(q->id, 16);
        floe_schema_free(s);
    }
}

TEST(test_add_refusals) {
    floe_error err;
    int rc;
    int32_t last = 15;
    static const struct {
        const char *path, *type;
        bool required;
        int code;
        const char *msg;
    } cases[] = {
        {"k", "string", false, FLOE_EINVALID, "already exists"},
        {"p.geo.city", "int", false, FLOE_EINVALID, "already exists"},
        {"nope.x", "int", false, FLOE_ENOTFOUND, "no column nope"},
        {"k.x", "int", false, FLOE_EINVALID, "not a struct"},
        {"r", "long", true, FLOE_EINVALID, "initial default"},
        {"t", "lng", false, FLOE_ESCHEMA, "unknown or unsupported type"},
        {"t", "struct<>", false, FLOE_ESCHEMA, "at least one field"},
        {"t", "map<list<int>, int>", false, FLOE_ESCHEMA, "map key"},
        {"t", "struct<a: int, a: long>", false, FLOE_ESCHEMA, "duplicate"},
        {"t", "list<int", false, FLOE_ESCHEMA, "want '>'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_schema_change c = {.kind = FLOE_SCHEMA_ADD_COLUMN, .path = cases[i].path,
                                .type = cases[i].type, .required = cases[i].required};
        floe_schema *s = apply(&c, &last, &rc, &err);
        CHECK(s == NULL);
        CHECK_EQ_INT(rc, cases[i].code);
        CHECK(strstr(err.msg, cases[i].msg) != NULL);
        CHECK_EQ_INT(last, 15); /* untouched on failure */
    }
}

TEST(test_promotions) {
    static const struct {
        const char *from, *to;
        bool ok;
    } cases[] = {
        {"int", "long", true},          {"float", "double", true},
        {"decimal(9, 2)", "decimal(12, 2)", true},
        {"int", "int", true},           {"long", "int", false},
        {"double", "float", false},     {"int", "string", false},
        {"decimal(9, 2)", "decimal(8, 2)", false},
        {"decimal(9, 2)", "decimal(12, 3)", false},
        /* v3's: the metadata builder refuses them on v1/v2 tables (check_widen) */
        {"date", "timestamp", true},    {"date", "timestamp_ns", true},
        {"date", "timestamptz", false}, {"date", "timestamptz_ns", false},
        {"timestamp", "timestamp_ns", false},
        {"int", "double", false},       {"fixed[4]", "fixed[8]", false},
        {"unknown", "long", true},      {"unknown", "string", true},
        {"long", "unknown", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_field a, b;
        floe_error err;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        REQUIRE_OK(floe_schema_primitive_type(cases[i].from, &a, NULL, &err), err);
        REQUIRE_OK(floe_schema_primitive_type(cases[i].to, &b, NULL, &err), err);
        CHECK(floe_schema_type_promotable(&a, &b) == cases[i].ok);
    }
    /* through floe_schema_update */
    floe_error err;
    int rc;
    int32_t last = 15;
    floe_schema_change c = {.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "dec", .type = "decimal(20, 2)"};
    floe_schema *s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(floe_schema_find_id(s, 14)->precision, 20);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "f", .type = "double"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(floe_schema_find_id(s, 13)->type, FLOE_TYPE_DOUBLE);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "id", .type = "string"};
    CHECK(apply(&c, &last, &rc, &err) == NULL);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    CHECK(strstr(err.msg, "not a promotion") != NULL);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "p", .type = "long"};
    CHECK(apply(&c, &last, &rc, &err) == NULL);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
}

TEST(test_rename_drop_move_optional_identifier) {
    floe_error err;
    int rc;
    int32_t last = 15;
    floe_schema_change c = {.kind = FLOE_SCHEMA_RENAME_COLUMN, .path = "p.geo.city", .new_name = "town"};
    floe_schema *s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(floe_schema_find_path(s, "p.geo.town")->id, 5);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_RENAME_COLUMN, .path = "k", .new_name = "f"};
    CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_RENAME_COLUMN, .path = "items.element", .new_name = "e"};
    CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);

    c = (floe_schema_change){.kind = FLOE_SCHEMA_DROP_COLUMN, .path = "p"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK(floe_schema_find_id(s, 3) == NULL && floe_schema_find_id(s, 4) == NULL &&
          floe_schema_find_id(s, 5) == NULL);
    CHECK(floe_schema_find_id(s, 2) != NULL);
    CHECK_EQ_INT(last, 15); /* a drop frees no id */
    floe_schema_free(s);
    /* the only field of a struct stays: an empty struct cannot be written to Parquet */
    const char *only[] = {"p.geo", "p.geo.city", "items.element.sku", "items.sku", "m.value.n"};
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
        c = (floe_schema_change){.kind = FLOE_SCHEMA_DROP_COLUMN, .path = only[i]};
        CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);
        CHECK(strstr(err.msg, "is the only field of struct") != NULL);
    }
    c = (floe_schema_change){.kind = FLOE_SCHEMA_DROP_COLUMN, .path = "m.key"};
    CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);

    /* move: first, before, after (by sibling name inside a struct) */
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MOVE_COLUMN, .path = "ts", .move = FLOE_SCHEMA_MOVE_FIRST};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(s->root.children[0].id, 15);
    CHECK_EQ_INT(s->root.children[1].id, 1);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MOVE_COLUMN, .path = "id", .move = FLOE_SCHEMA_MOVE_AFTER, .anchor = "f"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    int32_t want[] = {2, 3, 6, 9, 13, 1, 14, 15};
    for (size_t i = 0; i < 8; i++)
        CHECK_EQ_INT(s->root.children[i].id, want[i]);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MOVE_COLUMN, .path = "ts", .move = FLOE_SCHEMA_MOVE_BEFORE, .anchor = "k"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(s->root.children[1].id, 15);
    CHECK_EQ_INT(s->root.children[2].id, 2);
    floe_schema_free(s);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MOVE_COLUMN, .path = "ts", .move = FLOE_SCHEMA_MOVE_BEFORE, .anchor = "p.geo"};
    CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);

    /* identifier fields: required primitives outside lists, maps and optional structs */
    const char *ok[] = {"id"};
    c = (floe_schema_change){.kind = FLOE_SCHEMA_SET_IDENTIFIER, .paths = ok, .npaths = 1};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(s->n_identifier, 1);
    CHECK_EQ_INT(s->identifier_field_ids[0], 1);
    /* then id can be neither dropped nor made optional */
    floe_schema *s2 = NULL;
    c = (floe_schema_change){.kind = FLOE_SCHEMA_DROP_COLUMN, .path = "id"};
    CHECK_EQ_INT(floe_schema_update(s, &c, &last, &s2, &err), FLOE_EINVALID);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MAKE_OPTIONAL, .path = "id"};
    CHECK_EQ_INT(floe_schema_update(s, &c, &last, &s2, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "identifier") != NULL);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_SET_IDENTIFIER};
    REQUIRE_OK(floe_schema_update(s, &c, &last, &s2, &err), err);
    CHECK_EQ_INT(s2->n_identifier, 0);
    floe_schema_free(s2);
    floe_schema_free(s);
    const char *bad[][1] = {{"k"}, {"f"}, {"items.element.sku"}, {"p"}, {"p.geo.city"}};
    for (size_t i = 0; i < 5; i++) {
        c = (floe_schema_change){.kind = FLOE_SCHEMA_SET_IDENTIFIER, .paths = bad[i], .npaths = 1};
        CHECK(apply(&c, &last, &rc, &err) == NULL);
        CHECK_EQ_INT(rc, FLOE_EINVALID);
    }
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MAKE_OPTIONAL, .path = "m.key"};
    CHECK(apply(&c, &last, &rc, &err) == NULL && rc == FLOE_EINVALID);
    c = (floe_schema_change){.kind = FLOE_SCHEMA_MAKE_OPTIONAL, .path = "id"};
    s = apply(&c, &last, &rc, &err);
    REQUIRE_OK(rc, err);
    CHECK(!floe_schema_find_id(s, 1)->required);
    floe_schema_free(s);
}

/* ---- the table side ------------------------------------------------------------------ */

static floe_table_metadata *table(const char *spec_json, floe_error *err) {
    floe_metadata_builder *b = NULL;
    floe_table_metadata *m = NULL;
    if (floe_metadata_builder_new_table("file:///tmp/t", BASE, spec_json, NULL, NULL, 0, &b, err) == 0)
        if (floe_metadata_builder_finish(b, NULL, &m, err) < 0)
            m = NULL;
    floe_metadata_builder_free(b);
    return m;
}

/* One builder change on m; the new metadata (m is freed) or NULL with *rc the error. */
typedef int (*change_fn)(floe_metadata_builder *b, const void *c, int32_t *id, floe_error *err);
static int schema_change(floe_metadata_builder *b, const void *c, int32_t *id, floe_error *err) {
    return floe_metadata_builder_update_schema(b, c, id, err);
}
static int spec_change(floe_metadata_builder *b, const void *c, int32_t *id, floe_error *err) {
    return floe_metadata_builder_update_spec(b, c, id, err);
}
static floe_table_metadata *step(floe_table_metadata *m, change_fn fn, const void *c, int *rc,
                                 int32_t *id, floe_error *err) {
    floe_metadata_builder *b = NULL;
    floe_table_metadata *n = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, err), *err);
    *rc = fn(b, c, id, err);
    if (*rc == 0)
        REQUIRE_OK(floe_metadata_builder_finish(b, "x.metadata.json", &n, err), *err);
    floe_metadata_builder_free(b);
    if (n)
        floe_table_metadata_free(m);
    return n ? n : m;
}

TEST(test_builder_schema_ids_and_reuse) {
    floe_error err;
    int rc;
    int32_t id = -1;
    floe_table_metadata *m = table("[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"k\"}]", &err);
    REQUIRE(m != NULL);
    floe_schema_change add = {.kind = FLOE_SCHEMA_ADD_COLUMN, .path = "z", .type = "int"};
    m = step(m, schema_change, &add, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(m->current_schema_id, 1);
    CHECK_EQ_INT(m->last_column_id, 16);
    CHECK_EQ_INT(m->n_schemas, 2);
    /* the same change again: z exists */
    m = step(m, schema_change, &add, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    /* dropping z gives schema 0's fields back: schema 0 again, last-column-id kept */
    floe_schema_change drop = {.kind = FLOE_SCHEMA_DROP_COLUMN, .path = "z"};
    m = step(m, schema_change, &drop, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(m->current_schema_id, 0);
    CHECK_EQ_INT(m->n_schemas, 2);
    CHECK_EQ_INT(m->last_column_id, 16);
    /* re-adding z gives it a new id (17) and a new schema */
    m = step(m, schema_change, &add, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(id, 2);
    CHECK(strstr(m->schemas[2].json, "\"id\":17") != NULL);
    /* nothing to change: 1 */
    floe_schema_change same = {.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "id", .type = "int"};
    m = step(m, schema_change, &same, &rc, &id, &err);
    CHECK_EQ_INT(rc, 1);
    /* the partition source cannot be dropped; an identifier field neither */
    drop.path = "k";
    m = step(m, schema_change, &drop, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    CHECK(strstr(err.msg, "partition field k") != NULL);
    floe_table_metadata_free(m);

    /* a decimal stored by an identity partition field keeps its precision */
    m = table("[{\"source-id\":14,\"transform\":\"identity\",\"name\":\"d\"}]", &err);
    REQUIRE(m != NULL);
    floe_schema_change widen = {.kind = FLOE_SCHEMA_WIDEN_COLUMN, .path = "dec", .type = "decimal(12, 2)"};
    m = step(m, schema_change, &widen, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    floe_table_metadata_free(m);
}

static const char *spec_fields(const floe_table_metadata *m, int32_t spec_id) {
    const floe_metadata_spec *s = floe_table_metadata_spec(m, spec_id);
    return s ? s->json : "";
}

TEST(test_builder_spec_v2) {
    floe_error err;
    int rc;
    int32_t id = -1;
    floe_table_metadata *m = table("[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"k\"}]", &err);
    REQUIRE(m != NULL);
    floe_spec_change add = {FLOE_SPEC_ADD_FIELD, "day(ts)"};
    m = step(m, spec_change, &add, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(m->default_spec_id, 1);
    CHECK_EQ_INT(m->last_partition_id, 1001);
    CHECK(strstr(spec_fields(m, 1), "\"name\":\"ts_day\",\"field-id\":1001") != NULL);
    /* redundant: another time transform of ts, or the same field again */
    floe_spec_change hour = {FLOE_SPEC_ADD_FIELD, "hour(ts)"};
    m = step(m, spec_change, &hour, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    m = step(m, spec_change, &add, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    /* a name that is another column's */
    floe_spec_change clash = {FLOE_SPEC_ADD_FIELD, "bucket(4, id) AS k"};
    m = step(m, spec_change, &clash, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    /* a transform the column's type does not take */
    floe_spec_change badt = {FLOE_SPEC_ADD_FIELD, "day(k)"};
    m = step(m, spec_change, &badt, &rc, &id, &err);
    CHECK(rc < 0);
    /* drop by term: v2 removes the field */
    floe_spec_change drop = {FLOE_SPEC_DROP_FIELD, "day(ts)"};
    m = step(m, spec_change, &drop, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    /* that is spec 0 again (equivalent): no new spec */
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(m->default_spec_id, 0);
    CHECK_EQ_INT(m->n_specs, 2);
    /* add bucket then day again: day gets its old id 1001 back */
    floe_spec_change bucket = {FLOE_SPEC_ADD_FIELD, "bucket(8, id)"};
    m = step(m, spec_change, &bucket, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(m->last_partition_id, 1002);
    m = step(m, spec_change, &add, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK(strstr(spec_fields(m, id), "\"name\":\"ts_day\",\"field-id\":1001") != NULL);
    CHECK_EQ_INT(m->last_partition_id, 1002);
    /* replace: the order given, kept ids kept, new names new ids */
    floe_spec_change repl = {FLOE_SPEC_REPLACE, "day(ts), truncate(2, k) AS k2"};
    m = step(m, spec_change, &repl, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    floe_partition_spec *sp = NULL;
    const char *j = spec_fields(m, id);
    REQUIRE_OK(floe_partition_spec_parse_json(j, strlen(j), NULL, &sp, &err), err);
    REQUIRE(sp->nfields == 2);
    CHECK_EQ_INT(sp->fields[0].field_id, 1001);
    CHECK_EQ_INT(sp->fields[1].field_id, 1003);
    CHECK_EQ_STR(sp->fields[1].name, "k2");
    floe_partition_spec_free(sp);
    /* replace with the same: nothing; with "": unpartitioned */
    m = step(m, spec_change, &repl, &rc, &id, &err);
    CHECK_EQ_INT(rc, 1);
    floe_spec_change none = {FLOE_SPEC_REPLACE, ""};
    m = step(m, spec_change, &none, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK(strstr(spec_fields(m, id), "\"fields\":[]") != NULL);
    floe_spec_change missing = {FLOE_SPEC_DROP_FIELD, "nope"};
    m = step(m, spec_change, &missing, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_ENOTFOUND);
    floe_table_metadata_free(m);
}

#define V1_HEAD                                                                              \
    "{\"format-version\":1,\"table-uuid\":\"0a3b7c51-6c1e-4d4e-9b8f-1c2d3e4f5a6b\","            \
    "\"location\":\"file:///tmp/v1\",\"last-updated-ms\":1700000000000,\"last-column-id\":15," \
    "\"schema\":"
#define V1_TAIL                                                                              \
    ",\"partition-spec\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"k\","            \
    "\"field-id\":1000}],\"properties\":{},\"snapshots\":[]}"

TEST(test_builder_spec_v1_void) {
    floe_error err;
    int rc;
    int32_t id = -1;
    size_t n = strlen(V1_HEAD) + strlen(BASE) + strlen(V1_TAIL) + 1;
    char *doc = malloc(n);
    REQUIRE(doc != NULL);
    if (!doc) /* for gcc -O1: REQUIRE returns no further */
        return;
    snprintf(doc, n, "%s%s%s", V1_HEAD, BASE, V1_TAIL);
    floe_table_metadata *m = NULL;
    REQUIRE_OK(floe_table_metadata_parse(doc, strlen(doc), "v1", &m, &err), err);
    free(doc);
    floe_spec_change add = {FLOE_SPEC_ADD_FIELD, "bucket(4, id)"};
    m = step(m, spec_change, &add, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    CHECK_EQ_INT(m->format_version, 1);
    /* v1: the dropped field stays, void, in its place; the new one goes at the end */
    floe_spec_change drop = {FLOE_SPEC_DROP_FIELD, "k"};
    m = step(m, spec_change, &drop, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    floe_spec_change readd = {FLOE_SPEC_ADD_FIELD, "k"};
    m = step(m, spec_change, &readd, &rc, &id, &err);
    REQUIRE_OK(rc, err);
    floe_partition_spec *sp = NULL;
    const char *j = spec_fields(m, id);
    REQUIRE_OK(floe_partition_spec_parse_json(j, strlen(j), NULL, &sp, &err), err);
    REQUIRE(sp->nfields == 3);
    CHECK_EQ_INT(sp->fields[0].transform.kind, FLOE_XF_VOID);
    CHECK_EQ_INT(sp->fields[0].field_id, 1000);
    CHECK_EQ_STR(sp->fields[0].name, "k_1000"); /* renamed for the new k */
    CHECK_EQ_INT(sp->fields[1].field_id, 1001);
    CHECK_EQ_INT(sp->fields[2].field_id, 1002);
    CHECK_EQ_STR(sp->fields[2].name, "k");
    floe_partition_spec_free(sp);
    CHECK_EQ_INT(m->last_partition_id, 1002);
    /* the v1 "partition-spec" follows the default spec */
    char *out = NULL;
    size_t len = 0;
    REQUIRE_OK(floe_table_metadata_to_json(m, false, &out, &len, &err), err);
    CHECK(strstr(out, "\"partition-spec\":[{") != NULL);
    CHECK(strstr(out, "\"k_1000\"") != NULL);
    floe_free(out);
    /* a void field still names its source: the column stays */
    floe_schema_change dropcol = {.kind = FLOE_SCHEMA_DROP_COLUMN, .path = "k"};
    m = step(m, schema_change, &dropcol, &rc, &id, &err);
    CHECK_EQ_INT(rc, FLOE_EINVALID);
    floe_table_metadata_free(m);
}

int main(void) {
    RUN(test_add_assigns_ids_from_last_column_id);
    RUN(test_add_refusals);
    RUN(test_promotions);
    RUN(test_rename_drop_move_optional_identifier);
    RUN(test_builder_schema_ids_and_reuse);
    RUN(test_builder_spec_v2);
    RUN(test_builder_spec_v1_void);
    return harness_finish();
}
