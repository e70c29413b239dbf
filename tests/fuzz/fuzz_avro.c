/*
 * fuzz_avro.c - libFuzzer target for the Avro container reader (src/avro).
 *
 * Each input is an object container file. It is read three ways: with the writer's schema
 * (every record rendered to JSON), with a fixed Iceberg-like reader schema (resolution by
 * field id, promotions, defaults, skipping), and from the header's schema text alone
 * (parse, serialize, parse again). Errors are expected; crashes, leaks, hangs and
 * sanitizer reports are not.
 *
 * Seeds: the Iceberg manifests and manifest lists under ../shared/conformance/iceberg
 * (tests/fuzz/avro_seeds.sh copies them to a scratch corpus; they are never committed).
 * Built only with -DFLOE_FUZZ=ON and clang.
 */
#include "floe/avro.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char READER_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"long\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"field-id\":1},"
    "{\"name\":\"added\",\"type\":\"string\",\"default\":\"x\",\"field-id\":900},"
    "{\"name\":\"manifest_path\",\"type\":[\"null\",\"string\"],\"field-id\":500},"
    "{\"name\":\"data_file\",\"field-id\":2,\"type\":[\"null\",{\"type\":\"record\","
    "\"name\":\"r2\",\"fields\":["
    "{\"name\":\"file_path\",\"type\":\"bytes\",\"field-id\":100},"
    "{\"name\":\"record_count\",\"type\":\"double\",\"field-id\":103},"
    "{\"name\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{"
    "\"type\":\"record\",\"name\":\"k126_v127\",\"fields\":["
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},"
    "{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]}}],\"field-id\":125}]}]}]}";

static floe_avro_schema *reader_schema;

static void read_all(const uint8_t *data, size_t size, const floe_avro_reader_options *opts) {
    floe_avro_reader *r = NULL;
    floe_error err;
    if (floe_avro_reader_open_mem(data, size, opts, &r, &err) < 0)
        return;
    floe_buf json;
    floe_buf_init(&json, 1 << 20);
    const floe_avro_value *v;
    int n = 0;
    while (n < 100000 && floe_avro_reader_next(r, &v, &err) == 1) {
        floe_buf_reset(&json);
        FLOE_IGNORE_RESULT(floe_avro_value_to_json(floe_avro_reader_schema(r), v, &json, &err));
        n++;
    }
    floe_buf_free(&json);
    floe_avro_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!reader_schema &&
        floe_avro_schema_parse(READER_SCHEMA, strlen(READER_SCHEMA), &reader_schema, NULL) < 0)
        return 0;
    /* small caps so hostile sizes fail fast instead of allocating */
    floe_avro_reader_options opts = {.max_block_bytes = 8 << 20, .max_header_bytes = 1 << 20};
    read_all(data, size, &opts);
    opts.reader_schema = reader_schema;
    opts.narrow_long_to_int = true;
    read_all(data, size, &opts);

    /* the header's schema text: parse, serialize, parse the result */
    floe_avro_reader *r = NULL;
    opts.reader_schema = NULL;
    if (floe_avro_reader_open_mem(data, size, &opts, &r, NULL) == 0) {
        floe_buf text;
        floe_buf_init(&text, 0);
        if (floe_avro_schema_to_json(floe_avro_reader_writer_schema(r), &text, NULL) == 0) {
            floe_avro_schema *again = NULL;
            if (floe_avro_schema_parse((const char *)text.data, text.len, &again, NULL) == 0)
                floe_avro_schema_free(again);
        }
        floe_buf_free(&text);
        floe_avro_reader_close(r);
    }
    return 0;
}
