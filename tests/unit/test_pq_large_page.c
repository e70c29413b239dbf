/*
 * test_pq_large_page.c - pages larger than the reader's default cap (1 GiB).
 *
 * The file is the shape of parquet-testing's large_string_map.brotli.parquet (written by
 * pyarrow: MAP(STRING, INT32), two rows, each one entry whose key is 2^30 'a' and whose
 * value is 1, BROTLI, one data page per key), built here page by page: the key pages
 * hold 2^30 + 16 bytes decompressed, just over the cap. Arrow and DuckDB read that file;
 * floe refuses it by default with an error naming the cap and how to raise it
 * (floe_pq_reader_options.max_page_bytes, floe --max-page-size), and with the cap raised
 * reads exactly the values written. tests/integration/large_page.sh checks the CLI
 * options against DuckDB on pages of a few MiB.
 *
 * The read runs in a forked child whose peak resident set is measured: the two keys are
 * 2 GiB of values, decompressed in place, so it must stay under 2.5 GiB (3.5 GiB under
 * ASan, whose realloc copies where glibc's moves the mapping, and whose shadow adds an
 * eighth). CMakeLists.txt runs this test alone (RUN_SERIAL).
 */
#include <brotli/encode.h>
#include <stdlib.h>
#include <string.h>

#include "floe/parquet_reader.h"
#include "harness.h"
#include "parquet/metadata.h"

#define KEY_BYTES ((size_t)1 << 30)
#define CHUNK ((size_t)1 << 20)
#if defined(__SANITIZE_ADDRESS__)
#define PEAK_LIMIT_KIB (7LL << 19)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEAK_LIMIT_KIB (7LL << 19)
#endif
#endif
#ifndef PEAK_LIMIT_KIB
#define PEAK_LIMIT_KIB (5LL << 19)
#endif

static void put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Feed p[0..n) to the encoder, appending what it produces to out. */
static bool brotli_feed(BrotliEncoderState *st, BrotliEncoderOperation op, const uint8_t *p,
                        size_t n, floe_buf *out) {
    size_t avail_in = n;
    const uint8_t *next_in = p;
    for (;;) {
        uint8_t tmp[65536];
        size_t avail_out = sizeof tmp;
        uint8_t *next_out = tmp;
        if (!BrotliEncoderCompressStream(st, op, &avail_in, &next_in, &avail_out, &next_out,
                                         NULL))
            return false;
        if (floe_buf_append(out, tmp, sizeof tmp - avail_out) < 0)
            return false;
        if (avail_in == 0 && !BrotliEncoderHasMoreOutput(st) &&
            (op != BROTLI_OPERATION_FINISH || BrotliEncoderIsFinished(st)))
            return true;
    }
}

/* A v1 data page body compressed: repetition levels, definition levels (RLE, one run of
 * `count` entries of rep / def), then PLAIN values: `prefix` bytes followed by `fill_n`
 * bytes of 'a'. */
static bool page_body(uint32_t count, uint8_t rep, uint8_t def, const uint8_t *prefix,
                      size_t nprefix, size_t fill_n, floe_buf *out, size_t *ulen) {
    uint8_t head[12];
    put_le32(head, 2);
    head[4] = (uint8_t)(count << 1); /* RLE run header: count, repeated */
    head[5] = rep;
    put_le32(head + 6, 2);
    head[10] = (uint8_t)(count << 1);
    head[11] = def;
    BrotliEncoderState *st = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    if (!st)
        return false;
    BrotliEncoderSetParameter(st, BROTLI_PARAM_QUALITY, 1);
    bool ok = brotli_feed(st, BROTLI_OPERATION_PROCESS, head, sizeof head, out) &&
              brotli_feed(st, BROTLI_OPERATION_PROCESS, prefix, nprefix, out);
    uint8_t *a = malloc(CHUNK);
    memset(a, 'a', CHUNK);
    for (size_t done = 0; ok && done < fill_n; done += CHUNK)
        ok = brotli_feed(st, BROTLI_OPERATION_PROCESS, a,
                         fill_n - done < CHUNK ? fill_n - done : CHUNK, out);
    ok = ok && brotli_feed(st, BROTLI_OPERATION_FINISH, NULL, 0, out);
    free(a);
    BrotliEncoderDestroyInstance(st);
    *ulen = sizeof head + nprefix + fill_n;
    return ok;
}

/* Append a data page (header + compressed body) to file. */
static void put_page(floe_buf *file, uint32_t count, size_t ulen, const floe_buf *body) {
    floe_pq_page_header ph = {
        .type = FLOE_PQ_DATA_PAGE,
        .uncompressed_page_size = (int32_t)ulen,
        .compressed_page_size = (int32_t)body->len,
        .has_data_page_header = true,
        .data_page_header = {.num_values = (int32_t)count, .encoding = FLOE_PQ_ENC_PLAIN,
                             .definition_level_encoding = FLOE_PQ_ENC_RLE,
                             .repetition_level_encoding = FLOE_PQ_ENC_RLE},
    };
    floe_error err;
    REQUIRE_OK(floe_pq_page_header_encode(&ph, file, &err), err);
    floe_buf_append(file, body->data, body->len);
}

/* The whole file: "PAR1", two key pages, the value page, the footer. */
static void build_file(floe_buf *file) {
    floe_buf key, val;
    floe_buf_init(&key, 0);
    floe_buf_init(&val, 0);
    size_t key_ulen, val_ulen;
    uint8_t len[4];
    put_le32(len, (uint32_t)KEY_BYTES);
    REQUIRE(page_body(1, 0, 2, len, 4, KEY_BYTES, &key, &key_ulen));
    REQUIRE(key_ulen == KEY_BYTES + 16); /* the size pyarrow's pages have */
    uint8_t ones[8];
    put_le32(ones, 1);
    put_le32(ones + 4, 1);
    REQUIRE(page_body(2, 0, 3, ones, 8, 0, &val, &val_ulen));

    floe_buf_init(file, 0);
    floe_buf_append(file, "PAR1", 4);
    int64_t key_off = (int64_t)file->len;
    put_page(file, 1, key_ulen, &key);
    put_page(file, 1, key_ulen, &key);
    int64_t val_off = (int64_t)file->len;
    put_page(file, 2, val_ulen, &val);
    int64_t end = (int64_t)file->len;
    int64_t key_stored = val_off - key_off;
    int64_t key_unc = key_stored - 2 * (int64_t)key.len + 2 * (int64_t)key_ulen;
    int64_t val_unc = end - val_off - (int64_t)val.len + (int64_t)val_ulen;

    floe_pq_schema_element schema[5] = {
        {.name = "schema", .has_num_children = true, .num_children = 1},
        {.name = "arr", .has_repetition_type = true, .repetition_type = FLOE_PQ_OPTIONAL,
         .has_num_children = true, .num_children = 1, .has_converted_type = true,
         .converted_type = FLOE_PQ_CT_MAP, .has_logical_type = true,
         .logical_type = {.kind = FLOE_PQ_LT_MAP}},
        {.name = "key_value", .has_repetition_type = true, .repetition_type = FLOE_PQ_REPEATED,
         .has_num_children = true, .num_children = 2},
        {.name = "key", .has_type = true, .type = FLOE_PQ_BYTE_ARRAY,
         .has_repetition_type = true, .repetition_type = FLOE_PQ_REQUIRED,
         .has_converted_type = true, .converted_type = FLOE_PQ_CT_UTF8,
         .has_logical_type = true, .logical_type = {.kind = FLOE_PQ_LT_STRING}},
        {.name = "value", .has_type = true, .type = FLOE_PQ_INT32, .has_repetition_type = true,
         .repetition_type = FLOE_PQ_OPTIONAL},
    };
    int32_t encodings[2] = {FLOE_PQ_ENC_PLAIN, FLOE_PQ_ENC_RLE};
    const char *key_path[3] = {"arr", "key_value", "key"};
    const char *val_path[3] = {"arr", "key_value", "value"};
    floe_pq_column_chunk cols[2] = {
        {.file_offset = key_off, .has_meta_data = true,
         .meta_data = {.type = FLOE_PQ_BYTE_ARRAY, .encodings = encodings, .n_encodings = 2,
                       .path_in_schema = key_path, .n_path = 3, .codec = 4 /* BROTLI */,
                       .num_values = 2, .total_uncompressed_size = key_unc,
                       .total_compressed_size = key_stored, .data_page_offset = key_off}},
        {.file_offset = val_off, .has_meta_data = true,
         .meta_data = {.type = FLOE_PQ_INT32, .encodings = encodings, .n_encodings = 2,
                       .path_in_schema = val_path, .n_path = 3, .codec = 4,
                       .num_values = 2, .total_uncompressed_size = val_unc,
                       .total_compressed_size = end - val_off, .data_page_offset = val_off}},
    };
    floe_pq_row_group rg = {.columns = cols, .n_columns = 2, .total_byte_size = key_unc + val_unc,
                            .num_rows = 2};
    floe_pq_file_metadata md = {.version = 1, .schema = schema, .n_schema = 5, .num_rows = 2,
                                .row_groups = &rg, .n_row_groups = 1,
                                .created_by = "floe test_pq_large_page"};
    floe_error err;
    size_t fstart = file->len;
    REQUIRE_OK(floe_pq_file_metadata_encode(&md, file, &err), err);
    uint8_t tail[8];
    put_le32(tail, (uint32_t)(file->len - fstart));
    memcpy(tail + 4, "PAR1", 4);
    floe_buf_append(file, tail, 8);
    floe_buf_free(&key);
    floe_buf_free(&val);
}

/* Every byte of p[0..n) is 'a'. */
static bool all_a(const uint8_t *p, size_t n) {
    static uint8_t a[CHUNK];
    if (!a[0])
        memset(a, 'a', CHUNK);
    for (size_t done = 0; done < n; done += CHUNK)
        if (memcmp(p + done, a, n - done < CHUNK ? n - done : CHUNK) != 0)
            return false;
    return true;
}

typedef struct read_in {
    const floe_buf *file;
} read_in;

/* Read the file with the cap raised to 2 GiB; 0 when every value is the one written. */
static int read_raised(void *arg) {
    const read_in *in = arg;
    floe_pq_reader_options o = {.max_page_bytes = (size_t)2 << 30};
    floe_pq_reader *r = NULL;
    floe_error err;
    if (floe_pq_reader_open_memory(in->file->data, in->file->len, "large_string_map", &o, &r,
                                   &err) < 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    int bad = 1;
    const floe_pq_rowset *rs;
    if (floe_pq_reader_next(r, &rs, &err) != 1) {
        fprintf(stderr, "read: %s\n", err.msg);
        goto done;
    }
    const floe_colbuf *k = &rs->cols[0], *v = &rs->cols[1];
    if (rs->nrows != 2 || rs->ncols != 2 || k->nvalues != 2 || k->nlevels != 2 ||
        v->nvalues != 2 || v->nlevels != 2) {
        fprintf(stderr, "shape: %lld rows, %zu / %zu values\n", (long long)rs->nrows,
                k->nvalues, v->nvalues);
        goto done;
    }
    for (size_t i = 0; i < 2; i++) {
        size_t n = k->offsets[i + 1] - k->offsets[i];
        int32_t x;
        memcpy(&x, v->values + 4 * i, 4);
        if (n != KEY_BYTES || !all_a(k->values + k->offsets[i], n) || k->def[i] != 2 ||
            k->rep[i] != 0 || v->def[i] != 3 || v->rep[i] != 0 || x != 1) {
            fprintf(stderr, "row %zu: key of %zu bytes, value %d\n", i, n, x);
            goto done;
        }
    }
    bad = floe_pq_reader_next(r, &rs, &err) == 0 ? 0 : 1;
done:
    floe_pq_reader_close(r);
    return bad;
}

TEST(page_over_1gib) {
    floe_buf file;
    build_file(&file);
    printf("  file of %zu bytes, key pages of %zu bytes decompressed\n", file.len,
           KEY_BYTES + 16);
    /* the default cap refuses it, naming the cap and the way to raise it */
    floe_pq_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_pq_reader_open_memory(file.data, file.len, "large_string_map", NULL, &r,
                                          &err),
               err);
    const floe_pq_rowset *rs;
    CHECK_EQ_INT(floe_pq_reader_next(r, &rs, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "1073741840 bytes") != NULL);
    CHECK(strstr(err.msg, "1073741824-byte cap") != NULL);
    CHECK(strstr(err.msg, "--max-page-size") != NULL);
    CHECK(strstr(err.msg, "arr.key_value.key") != NULL);
    floe_pq_reader_close(r);
    /* raised, it reads what was written */
    read_in in = {&file};
    long long peak = -1;
    CHECK_EQ_INT(harness_child_peak_kib(read_raised, &in, PEAK_LIMIT_KIB, &peak), 0);
    printf("  read with max_page_bytes 2 GiB: peak +%lld KiB\n", peak);
    CHECK(peak > 0 && peak <= PEAK_LIMIT_KIB);
    floe_buf_free(&file);
}

int main(void) {
    RUN(page_over_1gib);
    return harness_finish();
}
