/*
 * fuzz_parquet.c - libFuzzer target for the Parquet reader (src/parquet/reader*.c): the
 * footer (thrift FileMetaData, schema tree, Iceberg mapping), the metadata accessors
 * `floe inspect` uses, and page decoding with record assembly (every row as canonical
 * NDJSON), then once more with a filter so statistics, the page index and row skipping
 * run too. Errors are expected; crashes, leaks, hangs and sanitizer reports are not.
 *
 * Seeds: the files under ../shared/conformance/parquet-testing (tests/fuzz/parquet_seeds.sh
 * copies them to a scratch corpus; they are never committed). Built only with
 * -DFLOE_FUZZ=ON and clang. tests/unit/test_pq_reader.c replays the seeds through
 * floe_fuzz_parquet_one in the normal test run.
 */
#include "floe/parquet_reader.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int floe_fuzz_parquet_one(const uint8_t *data, size_t size);

static int null_sink(void *ctx, const void *p, size_t n) {
    size_t *total = ctx;
    (void)p;
    *total += n;
    return *total > ((size_t)64 << 20) ? FLOE_ELIMIT : 0; /* bound runaway output */
}

/* Returns 0 when the file read completely, a negative floe code otherwise. */
int floe_fuzz_parquet_one(const uint8_t *data, size_t size) {
    floe_pq_reader_options opts = {.max_footer_bytes = 8u << 20, .max_chunk_bytes = 64u << 20};
    floe_pq_reader *r = NULL;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_pq_reader_open_memory(data, size, "fuzz", &opts, &r, &err);
    if (rc < 0)
        return rc;
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    floe_buf b;
    floe_buf_init(&b, 1u << 20);
    for (size_t g = 0; g < fi.num_row_groups && g < 64; g++)
        for (size_t c = 0; c < fi.num_columns && c < 256; c++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(r, g, c, &ci);
            b.len = 0;
            FLOE_IGNORE_RESULT(floe_pq_reader_chunk_stat_json(r, g, c, false, &b, NULL));
            FLOE_IGNORE_RESULT(floe_pq_reader_chunk_stat_json(r, g, c, true, &b, NULL));
        }
    floe_buf_free(&b);
    const floe_schema *is = NULL;
    if (floe_pq_reader_iceberg_schema(r, &is, NULL) == 0) {
        char *txt = floe_schema_to_json(is, false);
        floe_free(txt);
    }
    /* every page's CRC, as floe append checks a file before adding it */
    FLOE_IGNORE_RESULT(floe_pq_reader_verify_checksums(r, NULL, &err));
    floe_error_clear(&err);
    size_t total = 0;
    rc = floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, 100000, null_sink, &total, NULL, &err);
    /* again with a filter on the first non-repeated primitive column */
    for (size_t c = 0; c < fi.num_columns; c++) {
        const floe_pq_node *nd = floe_pq_reader_leaf(r, c);
        if (nd->rep_level > 0 || !nd->path[0])
            continue;
        char expr[512];
        snprintf(expr, sizeof expr, "\"%s\" IS NOT NULL AND NOT \"%s\" IS NULL", nd->path,
                 nd->path);
        if (strchr(nd->path, '"') == NULL &&
            floe_pq_reader_set_filter(r, expr, NULL) == 0) {
            floe_pq_reader_rewind(r);
            total = 0;
            FLOE_IGNORE_RESULT(floe_pq_reader_dump(r, FLOE_PQ_ROWS_NDJSON, 100000, null_sink,
                                                   &total, NULL, NULL));
        }
        break;
    }
    floe_pq_reader_close(r);
    return rc;
}

#ifndef FLOE_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)floe_fuzz_parquet_one(data, size);
    return 0;
}
#endif
