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
    int64_t got;    /* bytes handed over for the current line, stored or not */
    int64_t crs;    /* how many of them were '\r' */
    uint8_t last_byte;
} over_ctx;

static int on_over(void *ctx, const char *source, int64_t line, int64_t offset,
                   const uint8_t *p, size_t n, bool first, bool last, int64_t total) {
    (void)source;
    over_ctx *o = ctx;
    if (first) {
        o->line = line;
        o->offset = offset;
        o->len = 0;
        o->got = 0;
        o->crs = 0;
    }
    o->got += (int64_t)n;
    for (size_t i = 0; i < n; i++)
        o->crs += p[i] == '\r';
    if (n)
        o->last_byte = p[n - 1];
    if (n && o->len + n < sizeof o->text) {
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

/* Read a whole file through the reader (map mode or not); return concatenated chunks and
 * check that every chunk ends at a line boundary and numbering is consistent (a mapped
 * chunk with first_line 0 follows the previous chunk directly). */
static char *read_all_mode(const char *path, size_t chunk, size_t max_record, over_ctx *oc,
                           int *nchunks, bool map) {
    floe_error err;
    floe_line_reader_options o = {chunk, max_record, on_over, oc, map, NULL, NULL, 0, NULL,
                                  NULL};
    floe_line_reader *r;
    if (floe_line_reader_open(path, &o, &r, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "open: %s", err.msg);
        return NULL;
    }
    floe_chunk c;
    memset(&c, 0, sizeof c);
    floe_buf_init(&c.data, 0);
    floe_buf all;
    floe_buf_init(&all, 0);
    int rc;
    *nchunks = 0;
    int64_t expect_line = 1, expect_offset = 0;
    bool unterminated = false;
    while ((rc = floe_line_reader_next(r, &c, &err)) == 1) {
        (*nchunks)++;
        CHECK(c.len > 0);
        CHECK(!unterminated); /* only the last chunk may end without a newline */
        unterminated = c.bytes[c.len - 1] != '\n';
        /* each chunk starts at a line start: the line number matches lines seen so far
         * plus oversized lines skipped */
        if (c.first_line == 0) {
            CHECK(map);
            CHECK(c.first_offset == expect_offset);
        } else {
            CHECK(c.first_line >= expect_line);
            expect_line = c.first_line;
        }
        CHECK(c.first_offset >= expect_offset);
        floe_buf_append(&all, c.bytes, c.len);
        for (size_t i = 0; i < c.len; i++)
            if (c.bytes[i] == '\n')
                expect_line++;
        expect_offset = c.first_offset + (int64_t)c.len;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(floe_line_reader_mapped(r), map);
    floe_line_reader_close(r);
    floe_chunk_release(&c);
    floe_buf_free(&c.data);
    return floe_buf_detach(&all, NULL);
}

static char *read_all(const char *path, size_t chunk, size_t max_record, over_ctx *oc,
                      int *nchunks) {
    return read_all_mode(path, chunk, max_record, oc, nchunks, false);
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
    floe_line_reader_options o = {16, 1024, on_over, &oc, false, NULL, NULL, 0, NULL, NULL};
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

/* A record is its line without the newline and a '\r' before it (the shredder's rule):
 * one of max_record bytes ending in "\r\n" is kept wherever the chunk boundary falls, in
 * read and map mode alike (it was streamed as oversized when it ended a read or crossed
 * a mapped chunk's boundary, and kept otherwise), and one longer goes to the oversize
 * callback without its '\r' (as the shredder quarantines a rejected line). */
TEST(test_crlf_record_at_the_limit) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    enum { MAX = 100, BIG = 300000 };
    char at[MAX + 1], over[MAX + 2];
    memset(at, 'a', MAX);
    at[MAX] = '\0';
    memset(over, 'o', MAX + 1);
    over[MAX + 1] = '\0';
    char text[1024];
    /* lines 2 and 6 (no newline: the end of the file) are at the limit, line 4 over it */
    int tl = snprintf(text, sizeof text, "{\"a\":1}\r\n%s\r\n{\"a\":2}\r\n%s\r\n{\"a\":3}\r\n%s\r",
                      at, over, at);
    REQUIRE(harness_write_file(path, text, (size_t)tl) == 0);
    char want[1024];
    snprintf(want, sizeof want, "{\"a\":1}\r\n%s\r\n{\"a\":2}\r\n{\"a\":3}\r\n%s\r", at, at);
    for (int map = 0; map <= 1; map++) {
        for (size_t chunk = 1; chunk < 260; chunk++) {
            over_ctx oc = {0};
            int n;
            char *got = read_all_mode(path, chunk, MAX, &oc, &n, map);
            REQUIRE(got != NULL);
            /* map mode leaves a long line inside a chunk to the consumer (the shredder
             * rejects it): only the one a chunk boundary crosses is streamed */
            bool ok = (!strcmp(got, want) && oc.lines == 1 && oc.line == 4 &&
                       oc.len == MAX + 1 && oc.total == MAX + 1 &&
                       !memcmp(oc.text, over, MAX + 1)) ||
                      (map && !strcmp(got, text) && oc.lines == 0);
            floe_free(got);
            if (!ok) { /* one report, not one per chunk size */
                harness_fail(__FILE__, __LINE__,
                             "%s mode, chunk %zu: kept lines differ or oversize calls %d "
                             "(line %lld, %zu bytes, total %lld), want 1 (line 4, %d bytes)",
                             map ? "map" : "read", chunk, oc.lines, (long long)oc.line, oc.len,
                             (long long)oc.total, MAX + 1);
                break;
            }
        }
    }
    /* a long one streams in pieces: its '\r' is not among them */
    char *big = floe_malloc(BIG + 32);
    REQUIRE(big != NULL);
    memcpy(big, "{\"a\":1}\n", 8);
    memset(big + 8, 'b', BIG);
    memcpy(big + 8 + BIG, "\r\n{\"a\":2}\n", 10);
    REQUIRE(harness_write_file(path, big, BIG + 18) == 0);
    for (int map = 0; map <= 1; map++) {
        over_ctx oc = {0};
        int n;
        char *got = read_all_mode(path, 4096, MAX, &oc, &n, map);
        REQUIRE(got != NULL);
        CHECK_EQ_STR(got, "{\"a\":1}\n{\"a\":2}\n");
        CHECK_EQ_INT(oc.lines, 1);
        CHECK_EQ_INT(oc.got, BIG);
        CHECK_EQ_INT(oc.total, BIG);
        CHECK_EQ_INT(oc.last_byte, 'b');
        floe_free(got);
    }
    /* '\r' all along the line (JSON whitespace): wherever a piece ends after one, the
     * next decides whether it was the record's; only the one before the newline is not */
    for (size_t lead = 8; lead <= 9; lead++) {
        memset(big, ' ', lead);
        big[lead - 1] = '\n';
        for (size_t i = 0; i < BIG; i += 2)
            memcpy(big + lead + i, "b\r", 2);
        big[lead + BIG] = '\n';
        REQUIRE(harness_write_file(path, big, lead + BIG + 1) == 0);
        for (int map = 0; map <= 1; map++) {
            over_ctx oc = {0};
            int n;
            char *got = read_all_mode(path, 4096, MAX, &oc, &n, map);
            REQUIRE(got != NULL);
            CHECK_EQ_INT(oc.lines, 1);
            CHECK_EQ_INT(oc.got, BIG - 1);
            CHECK_EQ_INT(oc.total, BIG - 1);
            CHECK_EQ_INT(oc.crs, BIG / 2 - 1);
            CHECK_EQ_INT(oc.last_byte, 'b');
            floe_free(got);
        }
    }
    floe_free(big);
}

TEST(test_numbering) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    REQUIRE(harness_write_file(path, "aa\nbbb\ncccc\nd\n", 14) == 0);
    floe_error err;
    floe_line_reader_options o = {3, 100, NULL, NULL, false, NULL, NULL, 0, NULL, NULL};
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

/* Map mode cuts the same chunks as read mode: same bytes, offsets and (where the mapped
 * chunk knows it) first line; the last line may lack its newline. */
TEST(test_map_same_chunks_as_read) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    const char *texts[] = {lines, "{\"a\":1}\n{\"a\":2}\n", "x\n\n\ny", "one line, no newline"};
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        REQUIRE(harness_write_file(path, texts[t], strlen(texts[t])) == 0);
        for (size_t chunk = 1; chunk < 40; chunk += 3) {
            floe_error err;
            floe_line_reader_options ro = {chunk, 1024, on_over, NULL, false, NULL, NULL, 0,
                                           NULL, NULL};
            floe_line_reader_options mo = {chunk, 1024, on_over, NULL, true, NULL, NULL, 0,
                                           NULL, NULL};
            floe_line_reader *rr, *mr;
            REQUIRE_OK(floe_line_reader_open(path, &ro, &rr, &err), err);
            REQUIRE_OK(floe_line_reader_open(path, &mo, &mr, &err), err);
            CHECK(floe_line_reader_mapped(mr));
            floe_chunk rc_, mc;
            memset(&rc_, 0, sizeof rc_);
            memset(&mc, 0, sizeof mc);
            floe_buf_init(&rc_.data, 0);
            int a, b, n = 0;
            for (;;) {
                a = floe_line_reader_next(rr, &rc_, &err);
                b = floe_line_reader_next(mr, &mc, &err);
                CHECK_EQ_INT(a, b);
                if (a < 0 || b < 0)
                    fprintf(stderr, "%s\n", err.msg);
                if (a != 1 || b != 1)
                    break;
                CHECK_EQ_INT(rc_.len, mc.len);
                CHECK(rc_.len == mc.len && !memcmp(rc_.bytes, mc.bytes, mc.len));
                CHECK_EQ_INT(rc_.first_offset, mc.first_offset);
                CHECK(mc.first_line == 0 || mc.first_line == rc_.first_line);
                CHECK_EQ_INT(n == 0, mc.first_line == 1);
                n++;
            }
            CHECK_EQ_INT(floe_line_reader_bytes_out(rr), floe_line_reader_bytes_out(mr));
            floe_line_reader_close(rr);
            floe_line_reader_close(mr);
            floe_chunk_release(&mc);
            floe_buf_free(&rc_.data);
        }
    }
}

/* Map mode: a file truncated while mapped does not kill the process: the reader fails
 * with a clear error, and a chunk handed out before says its bytes are not the file's. */
TEST(test_map_file_shrinks_under_the_reader) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/shrink.ndjson", dir);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 8 * pg;
    char *text = malloc(len);
    REQUIRE(text != NULL);
    for (size_t i = 0; i < len; i++)
        text[i] = i % 64 == 63 ? '\n' : 'a';
    REQUIRE(harness_write_file(path, text, len) == 0);
    free(text);
    floe_error err;
    over_ctx oc = {0};
    floe_line_reader_options mo = {2 * pg, 1024, on_over, &oc, true, NULL, NULL, 0, NULL, NULL};
    floe_line_reader *r;
    REQUIRE_OK(floe_line_reader_open(path, &mo, &r, &err), err);
    REQUIRE(floe_line_reader_mapped(r));
    floe_chunk c1, c2;
    memset(&c1, 0, sizeof c1);
    memset(&c2, 0, sizeof c2);
    REQUIRE(floe_line_reader_next(r, &c1, &err) == 1);
    CHECK(!floe_chunk_input_shrank(&c1));
    CHECK(c1.len > 0 && c1.bytes[0] == 'a');
    REQUIRE(c1.len > pg); /* c1 spans the end the file is cut to */
    REQUIRE(truncate(path, (off_t)pg) == 0);
    /* the reader scans past the new end for the next line: an error, no chunk of zeros,
     * nothing passed to the oversize callback */
    int rc;
    while ((rc = floe_line_reader_next(r, &c2, &err)) == 1)
        CHECK(c2.bytes[0] == 'a');
    CHECK_EQ_INT(rc, FLOE_EIO);
    CHECK(strstr(err.msg, "shrank") != NULL);
    CHECK_EQ_INT(oc.calls, 0);
    /* the chunk handed out before: its bytes past the end now read as zeros, and it says so */
    CHECK(floe_chunk_input_shrank(&c1));
    CHECK_EQ_INT(c1.bytes[c1.len - 1], 0);
    floe_line_reader_close(r);
    floe_chunk_release(&c1);
    floe_chunk_release(&c2);
    CHECK(!floe_chunk_input_shrank(&c1));
}

/* A 0-byte file and a compressed file are not mapped; both still read. */
TEST(test_map_empty_and_compressed) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/empty.ndjson", dir);
    REQUIRE(harness_write_file(path, "", 0) == 0);
    over_ctx oc = {0};
    floe_error err;
    floe_line_reader_options mo = {16, 1024, on_over, &oc, true, NULL, NULL, 0, NULL, NULL};
    floe_line_reader *r;
    REQUIRE_OK(floe_line_reader_open(path, &mo, &r, &err), err);
    CHECK(!floe_line_reader_mapped(r));
    floe_chunk c;
    memset(&c, 0, sizeof c);
    floe_buf_init(&c.data, 0);
    CHECK_EQ_INT(floe_line_reader_next(r, &c, &err), 0);
    floe_line_reader_close(r);
    floe_buf_free(&c.data);

    snprintf(path, sizeof path, "%s/in.ndjson.gz", dir);
    gzFile g = gzopen(path, "wb");
    REQUIRE(g != NULL);
    gzwrite(g, lines, (unsigned)strlen(lines));
    gzclose(g);
    int n;
    char *got = read_all_mode(path, 8, 1024, &oc, &n, false);
    REQUIRE(got != NULL);
    CHECK_EQ_STR(got, lines);
    floe_free(got);
    REQUIRE_OK(floe_line_reader_open(path, &mo, &r, &err), err);
    CHECK(!floe_line_reader_mapped(r));
    floe_line_reader_close(r);
}

/* Map mode: a line crossing a chunk boundary longer than the limit is streamed to the
 * callback with its true line number and offset (counted lazily), and the chunk after it
 * knows its first line; a long line inside a chunk stays in the chunk. Chunks stay
 * readable after the reader is closed. */
TEST(test_map_oversized_and_lifetime) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    char text[8192];
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int tl = snprintf(text, sizeof text, "{\"a\":1}\n{\"a\":2}\n\"%s\"\n{\"a\":3}\n\"%s\"", big, big);
    REQUIRE(harness_write_file(path, text, (size_t)tl) == 0);
    for (size_t chunk = 4; chunk <= 64; chunk *= 2) {
        over_ctx oc = {0};
        int n;
        char *got = read_all_mode(path, chunk, 100, &oc, &n, true);
        REQUIRE(got != NULL);
        CHECK_EQ_STR(got, "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
        CHECK_EQ_INT(oc.lines, 2);
        CHECK_EQ_INT(oc.line, 5);              /* the last one, without a newline */
        CHECK_EQ_INT(oc.offset, 16 + 3001 + 1 + 8);
        CHECK_EQ_INT(oc.total, 3001);
        floe_free(got);
    }
    /* chunk bigger than the long line: it stays inside the first chunk */
    over_ctx oc = {0};
    int n;
    char *got = read_all_mode(path, 4096, 100, &oc, &n, true);
    REQUIRE(got != NULL);
    CHECK_EQ_INT(oc.lines, 1); /* only the last line, which starts the final window */
    CHECK(strstr(got, big) != NULL);
    floe_free(got);

    /* a chunk outlives its reader */
    floe_error err;
    floe_line_reader_options mo = {8, 100000, on_over, &oc, true, NULL, NULL, 0, NULL, NULL};
    floe_line_reader *r;
    REQUIRE_OK(floe_line_reader_open(path, &mo, &r, &err), err);
    floe_chunk c;
    memset(&c, 0, sizeof c);
    REQUIRE(floe_line_reader_next(r, &c, &err) == 1);
    floe_line_reader_close(r);
    CHECK_EQ_INT(c.len, 8);
    CHECK(!memcmp(c.bytes, "{\"a\":1}\n", 8));
    floe_chunk_release(&c);
    CHECK(c.bytes == NULL && c.len == 0);
    floe_chunk_release(&c); /* twice is fine */
}

/* Memory input: the caller's bytes read in place as plain lines, whatever their first
 * bytes (gzip's magic here), in the same chunks as map mode, and left as they were (no
 * page of them advised away: MADV_DONTNEED would zero private anonymous memory). */
TEST(test_memory_input) {
    size_t cap = (size_t)256 << 10, len = 0;
    uint8_t *mem = aligned_alloc(4096, cap);
    REQUIRE(mem != NULL);
    const char *first = "\x1f\x8b\x08 not json\n";
    memcpy(mem, first, strlen(first));
    len = strlen(first);
    int nlines = 1;
    while (len < cap - 256) { /* a line is at most 120 bytes */
        len += (size_t)snprintf((char *)mem + len, cap - len, "{\"i\":%d,\"pad\":\"%.*s\"}\n",
                                nlines, nlines % 97, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        nlines++;
    }
    len--; /* the last line without its newline */
    uint8_t *copy = malloc(len);
    REQUIRE(copy != NULL);
    memcpy(copy, mem, len);
    for (size_t chunk = 4096; chunk <= (64u << 10); chunk *= 4) {
        over_ctx oc;
        memset(&oc, 0, sizeof oc);
        floe_error err;
        floe_line_reader_options o = {chunk, 1u << 20, on_over, &oc, false, NULL, mem, len,
                                      NULL, NULL};
        floe_line_reader *r;
        REQUIRE(floe_line_reader_open("spool", &o, &r, &err) == 0);
        CHECK(floe_line_reader_mapped(r));
        CHECK_EQ_STR(floe_line_reader_source(r), "spool");
        floe_chunk c;
        memset(&c, 0, sizeof c);
        floe_buf_init(&c.data, 0);
        size_t at = 0;
        int rc, n = 0;
        while ((rc = floe_line_reader_next(r, &c, &err)) == 1) {
            CHECK(c.bytes == mem + at); /* in place, in order, nothing skipped */
            CHECK_EQ_INT(c.first_offset, (int64_t)at);
            if (n++ == 0)
                CHECK_EQ_INT(c.first_line, 1);
            CHECK(c.len > 0 && (at + c.len == len || c.bytes[c.len - 1] == '\n'));
            at += c.len;
        }
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT((long long)at, (long long)len);
        CHECK(n > 1);
        CHECK_EQ_INT(oc.lines, 0);
        CHECK_EQ_INT(floe_line_reader_bytes_out(r), (int64_t)len);
        floe_line_reader_close(r);
        floe_chunk_release(&c);
        floe_buf_free(&c.data);
        CHECK(memcmp(mem, copy, len) == 0);
    }
    free(copy);
    free(mem);
}

/* Growing memory input (the Kafka source converting a spool while it is written): the
 * caller says how much is written each time the reader asks. Written a line at a time as
 * asked, the chunks are those of the whole input; the caller giving up fails the read. */
typedef struct {
    const uint8_t *mem;
    size_t len, avail;
    int calls, give_up_at;
} grow_ctx;

static int64_t grow_more(void *ctx, size_t want, bool *final) {
    grow_ctx *g = ctx;
    g->calls++;
    if (g->give_up_at && g->calls >= g->give_up_at)
        return FLOE_ECANCELLED;
    /* the writer got as far as the first line end at or after want */
    while (g->avail < g->len && g->avail < want) {
        const uint8_t *nl = memchr(g->mem + g->avail, '\n', g->len - g->avail);
        g->avail = nl ? (size_t)(nl - g->mem) + 1 : g->len;
    }
    *final = g->avail == g->len;
    return (int64_t)g->avail;
}

static void test_memory_input_growing(void) {
    size_t cap = 200000, len = 0;
    uint8_t *mem = malloc(cap);
    REQUIRE(mem != NULL);
    for (int i = 0; len + 200 < cap; i++)
        len += (size_t)snprintf((char *)mem + len, cap - len, "{\"i\":%d,\"pad\":\"%.*s\"}\n",
                                i, i % 61, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
                                "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
    for (size_t chunk = 1000; chunk <= 64000; chunk *= 8) {
        /* the whole input's chunks */
        size_t whole[512], nwhole = 0;
        floe_error err;
        floe_line_reader_options o = {chunk, 1u << 20, on_over, NULL, false, NULL, mem, len,
                                      NULL, NULL};
        floe_line_reader *r;
        REQUIRE(floe_line_reader_open("spool", &o, &r, &err) == 0);
        floe_chunk c;
        memset(&c, 0, sizeof c);
        floe_buf_init(&c.data, 0);
        while (floe_line_reader_next(r, &c, &err) == 1 && nwhole < 512)
            whole[nwhole++] = c.len;
        floe_line_reader_close(r);
        floe_chunk_release(&c);
        CHECK(nwhole > 1);
        /* written as it is read, from its first line on */
        const uint8_t *nl = memchr(mem, '\n', len);
        grow_ctx g = {mem, len, (size_t)(nl - mem) + 1, 0, 0};
        o.mem_len = g.avail;
        o.mem_more = grow_more;
        o.mem_more_ctx = &g;
        REQUIRE(floe_line_reader_open("spool", &o, &r, &err) == 0);
        size_t n = 0, at = 0;
        int rc;
        while ((rc = floe_line_reader_next(r, &c, &err)) == 1) {
            CHECK(c.bytes == mem + at);
            CHECK(n < nwhole && c.len == whole[n]);
            CHECK(c.bytes[c.len - 1] == '\n');
            at += c.len;
            n++;
        }
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT((long long)n, (long long)nwhole);
        CHECK_EQ_INT((long long)at, (long long)len);
        CHECK(g.calls >= (int)nwhole);
        floe_line_reader_close(r);
        floe_chunk_release(&c);
        /* the writer gives up at its third answer: the read fails with its code */
        g.avail = (size_t)(nl - mem) + 1;
        g.calls = 0;
        g.give_up_at = 3;
        o.mem_len = g.avail;
        REQUIRE(floe_line_reader_open("spool", &o, &r, &err) == 0);
        int got = 0;
        while ((rc = floe_line_reader_next(r, &c, &err)) == 1)
            got++;
        CHECK_EQ_INT(rc, FLOE_ECANCELLED);
        CHECK_EQ_INT(got, 2);
        floe_line_reader_close(r);
        floe_chunk_release(&c);
        floe_buf_free(&c.data);
    }
    free(mem);
}

int main(void) {
    RUN(test_plain_small_chunks);
    RUN(test_gzip_concatenated_and_zstd);
    RUN(test_oversized_line_streams_whole);
    RUN(test_crlf_record_at_the_limit);
    RUN(test_numbering);
    RUN(test_map_same_chunks_as_read);
    RUN(test_map_empty_and_compressed);
    RUN(test_map_file_shrinks_under_the_reader);
    RUN(test_map_oversized_and_lifetime);
    RUN(test_memory_input);
    RUN(test_memory_input_growing);
    return harness_finish();
}
