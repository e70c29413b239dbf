/* test_quarantine.c - rejected records are kept byte for byte with their reasons. */
#include <jansson.h>

#include "floe/quarantine.h"
#include "harness.h"

TEST(test_base64_vectors) {
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        CHECK_EQ_INT(floe_base64_append(&b, (const uint8_t *)in[i], strlen(in[i])), 0);
        char *s = floe_buf_detach(&b, NULL);
        CHECK_EQ_STR(s, out[i]);
        floe_free(s);
    }
}

TEST(test_utf8) {
    CHECK(floe_utf8_valid((const uint8_t *)"h\xc3\xa9llo \xf0\x9f\x98\x80", 11));
    CHECK(!floe_utf8_valid((const uint8_t *)"\xc3", 1));           /* truncated */
    CHECK(!floe_utf8_valid((const uint8_t *)"\xc0\xaf", 2));       /* overlong */
    CHECK(!floe_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3));   /* surrogate */
    CHECK(!floe_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
    CHECK(!floe_utf8_valid((const uint8_t *)"\xff", 1));
}

TEST(test_records_and_stream) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/q/quarantine.ndjson", dir);
    floe_quarantine *q;
    REQUIRE_OK(floe_quarantine_open(NULL, path, &q, &err), err);
    CHECK_OK(floe_quarantine_add(q, "in.ndjson", 3, 40, "malformed JSON: \"x\"",
                                 (const uint8_t *)"{\"a\":\n\t", 7, &err), err);
    CHECK_OK(floe_quarantine_add(q, "in.ndjson", 4, 48, "invalid UTF-8",
                                 (const uint8_t *)"{\"a\":\"\xff\"}", 9, &err), err);
    CHECK_OK(floe_quarantine_stream_begin(q, "in.ndjson", 5, 58, "too large", &err), err);
    CHECK_OK(floe_quarantine_stream_piece(q, (const uint8_t *)"fo", 2, &err), err);
    CHECK_OK(floe_quarantine_stream_piece(q, (const uint8_t *)"ob", 2, &err), err);
    CHECK_OK(floe_quarantine_stream_piece(q, (const uint8_t *)"ar", 2, &err), err);
    CHECK_OK(floe_quarantine_stream_end(q, &err), err);
    CHECK_EQ_INT(floe_quarantine_count(q), 3);
    CHECK_OK(floe_quarantine_close(q, &err), err);

    size_t n;
    char *text = harness_read_file(path, &n);
    REQUIRE(text != NULL);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    int i = 0;
    while (line) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        REQUIRE(o != NULL);
        CHECK_EQ_STR(json_string_value(json_object_get(o, "source")), "in.ndjson");
        if (i == 0) {
            CHECK_EQ_INT(json_integer_value(json_object_get(o, "line")), 3);
            CHECK_EQ_INT(json_integer_value(json_object_get(o, "offset")), 40);
            CHECK_EQ_STR(json_string_value(json_object_get(o, "record")), "{\"a\":\n\t");
            CHECK_EQ_STR(json_string_value(json_object_get(o, "reason")), "malformed JSON: \"x\"");
        } else if (i == 1) {
            CHECK_EQ_STR(json_string_value(json_object_get(o, "record_base64")), "eyJhIjoi/yJ9");
        } else {
            CHECK_EQ_STR(json_string_value(json_object_get(o, "record_base64")), "Zm9vYmFy");
        }
        json_decref(o);
        i++;
        line = strtok_r(NULL, "\n", &save);
    }
    CHECK_EQ_INT(i, 3);
    free(text);
}

TEST(test_empty_quarantine_leaves_no_file) {
    floe_error err;
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/quarantine.ndjson", dir);
    floe_quarantine *q;
    REQUIRE_OK(floe_quarantine_open(NULL, path, &q, &err), err);
    CHECK_OK(floe_quarantine_close(q, &err), err);
    CHECK(harness_read_file(path, NULL) == NULL);
}

int main(void) {
    RUN(test_base64_vectors);
    RUN(test_utf8);
    RUN(test_records_and_stream);
    RUN(test_empty_quarantine_leaves_no_file);
    return harness_finish();
}
