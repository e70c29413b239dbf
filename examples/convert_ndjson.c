/*
 * convert_ndjson.c - convert NDJSON files to Parquet with libfloe.
 *
 *     convert_ndjson OUT_DIR INPUT.ndjson...
 *
 * Rows follow a fixed Iceberg schema (id: long, required; name: string). Records that do
 * not fit it are not lost: they go to OUT_DIR/_quarantine/ with the reason.
 * Build: cc convert_ndjson.c $(pkg-config --cflags --libs floe)
 */
#include <floe/floe.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"}]}";

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT_DIR INPUT.ndjson...\n", argv[0]);
        return 2;
    }
    floe_error err;
    floe_schema *schema = NULL;
    if (floe_schema_parse(schema_json, strlen(schema_json), &schema, &err) < 0) {
        fprintf(stderr, "schema: %s\n", err.msg);
        return 1;
    }
    floe_convert_options o;
    floe_convert_options_init(&o);
    o.schema = schema; /* borrowed: must outlive floe_convert */
    o.out_dir = argv[1];

    floe_convert_result res;
    int rc = floe_convert((const char *const *)argv + 2, (size_t)argc - 2, &o, &res, &err);
    if (rc < 0) {
        fprintf(stderr, "convert: %s\n", err.msg);
    } else {
        printf("records %" PRId64 " written %" PRId64 " rejected %" PRId64 " files %" PRId64
               "\n", res.records_in, res.records_out, res.rejected, res.files);
        for (int64_t i = 0; i < res.files; i++)
            printf("file %s\n", res.file_uris[i]);
        floe_convert_result_free(&res); /* the result owns file_uris */
    }
    floe_schema_free(schema);
    return rc < 0 ? 1 : 0;
}
