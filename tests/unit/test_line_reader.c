/* test_line_reader.c - chunks of whole lines, numbering, compression, oversized lines. */
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "floe/input.h"
#include "harness.h"

typedef struct {
    char text[8192];
    size_t len;
    int64_t line, offset, total;
    int calls, lines;
} over_ctx;

static int on_over(void *ctx, const char *source, int64_t line, int64_t offset,
                   const uint8_t *p, size_t n, bool first, bool last, int64_t total) {
    (void)source;
    over_ctx *o = ctx;
    if (first) {
        o->line = line;
        o->offset = offset;
        o->len = 0;
    }
    if (o->len + n < sizeof o->text) {
        memcpy(o->text + o->len, p, n);
        o->len += n;
    }
    o->calls++;
    if (last) {
        o->total = total;
        o->lines++;
    }
    return 0;
}

/* Read a whole file through the reader; return concatenated chunks and check that every
 * chunk ends at a line boundary and numbering is consistent. */
static char *read_all(const char *path, size_t chunk, size_t max_record, over_ctx *oc,
                      int *nchunks) {
    floe_error err;
    floe_line_reader_options o = {chunk, max_record, on_over, oc};
    floe_line_reader *r;
    if (floe_line_reader_open(path, &o, &r, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "open: %s", err.msg);
        return NULL;
    }
    floe_chunk c;
    floe_buf_init(&c.data, 0);
    floe_buf all;
    floe_buf_init(&all, 0);
    int rc;
    *nchunks = 0;
    int64_t expect_line = 1;
    while ((rc = floe_line_reader_next(r, &c, &err)) == 1) {
        (*nchunks)++;
        CHECK(c.data.len > 0);
        /* each chunk starts at a line start: the line number matches lines seen so far
         * plus oversized lines skipped */
        CHECK(c.first_line >= expect_line);
        for (size_t i = 0; i < c.data.len; i++)
            if (c.data.data[i] == '\n')
                expect_line++;
        floe_buf_append(&all, c.data.data, c.data.len);
        expect_line = c.first_line;
        for (size_t i = 0; i < c.data.len; i++)
            if (c.data.data[i] == '\n')
                expect_line++;
    }
    CHECK_EQ_INT(rc, 0);
    floe_line_reader_close(r);
    floe_buf_free(&c.data);
    return floe_buf_detach(&all, NULL);
}

static const char *lines =
    "{\"a\":1}\n{\"a\":2}\n\n{\"a\":3333333}\n{\"b\":\"xxxxxxxxxxxxxxxxxxx\"}\n{\"a\":5}";

TEST(test_plain_small_chunks) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    REQUIRE(harness_write_file(path, lines, strlen(lines)) == 0);
    for (size_t chunk = 1; chunk < 64; chunk += 7) {
        over_ctx oc = {0};
        int n;
        char *got = read_all(path, chunk, 1024, &oc, &n);
        REQUIRE(got != NULL);
        CHECK_EQ_STR(got, lines);
        CHECK_EQ_INT(oc.lines, 0);
        floe_free(got);
    }
}

TEST(test_gzip_concatenated_and_zstd) {
    const char *dir = harness_tmpdir();
    char path[4200];
    /* two gzip members back to back */
    snprintf(path, sizeof path, "%s/in.ndjson.gz", dir);
    gzFile g = gzopen(path, "wb");
    REQUIRE(g != NULL);
    gzwrite(g, lines, 20);
    gzclose(g);
    g = gzopen(path, "ab");
    gzwrite(g, lines + 20, (unsigned)strlen(lines) - 20);
    gzclose(g);
    over_ctx oc = {0};
    int n;
    char *got = read_all(path, 16, 1024, &oc, &n);
    REQUIRE(got != NULL);
    CHECK_EQ_STR(got, lines);
    floe_free(got);

    snprintf(path, sizeof path, "%s/in.ndjson.zst", dir);
    size_t cap = ZSTD_compressBound(strlen(lines));
    void *z = malloc(cap);
    size_t zn = ZSTD_compress(z, cap, lines, strlen(lines), 3);
    REQUIRE(!ZSTD_isError(zn));
    REQUIRE(harness_write_file(path, z, zn) == 0);
    got = read_all(path, 16, 1024, &oc, &n);
    REQUIRE(got != NULL);
    CHECK_EQ_STR(got, lines);
    floe_free(got);
    /* a truncated zstd stream is an error naming the file */
    REQUIRE(harness_write_file(path, z, zn - 3) == 0);
    free(z);
    floe_error err;
    floe_line_reader *r;
    floe_line_reader_options o = {16, 1024, on_over, &oc};
    REQUIRE_OK(floe_line_reader_open(path, &o, &r, &err), err);
    floe_chunk c;
    floe_buf_init(&c.data, 0);
    int rc;
    while ((rc = floe_line_reader_next(r, &c, &err)) == 1)
        ;
    CHECK_EQ_INT(rc, FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "in.ndjson.zst") != NULL);
    floe_line_reader_close(r);
    floe_buf_free(&c.data);
}

TEST(test_oversized_line_streams_whole) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    char text[4096];
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int tl = snprintf(text, sizeof text, "{\"a\":1}\n\"%s\"\n{\"a\":2}\n", big);
    REQUIRE(harness_write_file(path, text, (size_t)tl) == 0);
    for (size_t chunk = 4; chunk <= 4096; chunk *= 4) {
        over_ctx oc = {0};
        int n;
        char *got = read_all(path, chunk, 100, &oc, &n);
        REQUIRE(got != NULL);
        CHECK_EQ_STR(got, "{\"a\":1}\n{\"a\":2}\n");
        CHECK_EQ_INT(oc.lines, 1);
        CHECK_EQ_INT(oc.line, 2);
        CHECK_EQ_INT(oc.offset, 8);
        CHECK_EQ_INT(oc.total, 3001);
        CHECK_EQ_INT(oc.len, 3001);
        CHECK(oc.text[0] == '"' && oc.text[3000] == '"');
        floe_free(got);
    }
}

TEST(test_numbering) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    REQUIRE(harness_write_file(path, "aa\nbbb\ncccc\nd\n", 14) == 0);
    floe_error err;
    floe_line_reader_options o = {3, 100, NULL, NULL};
    floe_line_reader *r;
    REQUIRE_OK(floe_line_reader_open(path, &o, &r, &err), err);
    floe_chunk c;
    floe_buf_init(&c.data, 0);
    int64_t want_line[] = {1, 2, 3, 4}, want_off[] = {0, 3, 7, 12};
    int i = 0;
    while (floe_line_reader_next(r, &c, &err) == 1 && i < 4) {
        CHECK_EQ_INT(c.first_line, want_line[i]);
        CHECK_EQ_INT(c.first_offset, want_off[i]);
        i++;
    }
    CHECK_EQ_INT(i, 4);
    CHECK_EQ_INT(floe_line_reader_bytes_out(r), 14);
    floe_line_reader_close(r);
    floe_buf_free(&c.data);
}

int main(void) {
    RUN(test_plain_small_chunks);
    RUN(test_gzip_concatenated_and_zstd);
    RUN(test_oversized_line_streams_whole);
    RUN(test_numbering);
    return harness_finish();
}
