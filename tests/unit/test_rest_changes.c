/*
 * test_rest_changes.c - a REST commit's requirements and updates derived from two table
 * metadata documents (src/catalog/rest_changes.c): what each kind of change sends, in
 * an order a server applies one by one, and the differences no update expresses.
 */
#include <jansson.h>

#include "catalog/rest_internal.h"
#include "harness.h"

#define BASE                                                                               \
    "{\"format-version\":2,\"table-uuid\":\"u-1\",\"location\":\"/w/t\","                  \
    "\"last-column-id\":2,\"current-schema-id\":0,"                                       \
    "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}],"                  \
    "\"default-spec-id\":0,\"last-partition-id\":999,"                                    \
    "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"                                \
    "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"       \
    "\"properties\":{\"a\":\"1\",\"b\":\"2\"},"                                           \
    "\"snapshots\":[{\"snapshot-id\":11,\"sequence-number\":1}],"                         \
    "\"refs\":{\"main\":{\"type\":\"branch\",\"snapshot-id\":11}}"

/* The request from base to next (NULL on failure); *rc the result. */
static json_t *request(const char *base, const char *next, int *rc) {
    json_t *out = NULL;
    floe_error err;
    floe_error_clear(&err);
    *rc = floe_rest_commit_request(base, next, &out, &err);
    return out;
}

/* The position of the first element of arr whose key field is value, -1 if none. */
static int find(const json_t *arr, const char *key, const char *value) {
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        const char *v = json_string_value(json_object_get(e, key));
        if (v && !strcmp(v, value))
            return (int)i;
    }
    return -1;
}

TEST(append_moves_main_under_assert_ref) {
    int rc;
    json_t *r = request(BASE "}", BASE ",\"x\":0}", &rc); /* unknown fields: no change */
    REQUIRE(rc == 0 && r);
    CHECK_EQ_INT(json_array_size(json_object_get(r, "updates")), 0);
    CHECK(find(json_object_get(r, "requirements"), "type", "assert-table-uuid") == 0);
    json_decref(r);

    const char *next =
        "{\"format-version\":2,\"table-uuid\":\"u-1\",\"location\":\"/w/t\","
        "\"last-column-id\":2,\"current-schema-id\":0,"
        "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}],"
        "\"default-spec-id\":0,\"last-partition-id\":999,"
        "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
        "\"properties\":{\"a\":\"1\",\"b\":\"2\"},"
        "\"snapshots\":[{\"snapshot-id\":11,\"sequence-number\":1},"
        "{\"snapshot-id\":12,\"sequence-number\":2,\"parent-snapshot-id\":11}],"
        "\"refs\":{\"main\":{\"type\":\"branch\",\"snapshot-id\":12}}}";
    r = request(BASE "}", next, &rc);
    REQUIRE(rc == 0 && r);
    const json_t *req = json_object_get(r, "requirements"), *up = json_object_get(r, "updates");
    int ar = find(req, "type", "assert-ref-snapshot-id");
    REQUIRE(ar >= 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(req, ar), "snapshot-id")), 11);
    int add = find(up, "action", "add-snapshot"), set = find(up, "action", "set-snapshot-ref");
    CHECK(add >= 0 && set > add);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(up, set), "snapshot-id")), 12);
    CHECK(find(req, "type", "assert-current-schema-id") < 0); /* schema untouched */
    json_decref(r);
}

TEST(schema_properties_and_expiry) {
    const char *next =
        "{\"format-version\":2,\"table-uuid\":\"u-1\",\"location\":\"/w/t\","
        "\"last-column-id\":3,\"current-schema-id\":1,"
        "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]},"
        "{\"type\":\"struct\",\"schema-id\":1,\"fields\":[]}],"
        "\"default-spec-id\":0,\"last-partition-id\":999,"
        "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
        "\"properties\":{\"a\":\"1\",\"c\":\"3\"},"
        "\"snapshots\":[],\"refs\":{}}";
    int rc;
    json_t *r = request(BASE "}", next, &rc);
    REQUIRE(rc == 0 && r);
    const json_t *req = json_object_get(r, "requirements"), *up = json_object_get(r, "updates");
    int cs = find(req, "type", "assert-current-schema-id");
    REQUIRE(cs >= 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(req, cs), "current-schema-id")), 0);
    CHECK(find(req, "type", "assert-last-assigned-field-id") >= 0);
    int as = find(up, "action", "add-schema"), sc = find(up, "action", "set-current-schema");
    REQUIRE(as >= 0 && sc > as);
    /* the schema added by this change is named -1: the server's id assignment holds */
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(up, sc), "schema-id")), -1);
    int sp = find(up, "action", "set-properties"), rp = find(up, "action", "remove-properties");
    REQUIRE(sp >= 0 && rp >= 0);
    CHECK(json_object_size(json_object_get(json_array_get(up, sp), "updates")) == 1);
    CHECK(!strcmp(json_string_value(json_array_get(
                      json_object_get(json_array_get(up, rp), "removals"), 0)), "b"));
    /* main removed: asserted at 11 and removed before its snapshot */
    int rr = find(up, "action", "remove-snapshot-ref"), rs = find(up, "action", "remove-snapshots");
    CHECK(rr >= 0 && rs > rr);
    CHECK(find(req, "type", "assert-ref-snapshot-id") >= 0);
    json_decref(r);
}

TEST(refused_differences) {
    int rc;
    json_t *r = request(BASE "}", "{\"table-uuid\":\"u-2\",\"format-version\":2}", &rc);
    CHECK(rc == FLOE_EUNSUPPORTED && !r);
    r = request(BASE "}", "{\"table-uuid\":\"u-1\",\"format-version\":1}", &rc);
    CHECK(rc == FLOE_EUNSUPPORTED && !r);
    r = request(BASE "}", "not json", &rc);
    CHECK(rc == FLOE_ECORRUPT && !r);
}

int main(void) {
    RUN(append_moves_main_under_assert_ref);
    RUN(schema_properties_and_expiry);
    RUN(refused_differences);
    return harness_finish();
}
