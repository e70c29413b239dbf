/*
 * test_fault.c - failure injection over whole operations (issue 10, part 2): for every N,
 * fail the Nth allocation, open, read, write, fsync or rename during
 *   (a) floe_convert of a small NDJSON file (one record rejected and one streamed past
 *       max_record, so the quarantine writes too),
 *   (b) an Avro container written through FileIO and read back through a floe_input,
 *   (c) a Parquet write of one batch,
 * and require a clean error (no crash, no leak: this program runs under ASan/LSan), no
 * partial output (no temporary file, and every file left is complete: it reads back to
 * exactly what a clean run wrote), and success once the fault is gone. The loops are in
 * tests/unit/fault.h for the later modules (append, rewrite, expire, server flush).
 *
 * Also: the injection hook itself (counting, stickiness, errno mapping to FLOE_ENOSPACE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <jansson.h>

#include "fault.h"
#include "floe/avro.h"
#include "floe/convert.h"
#include "floe/io.h"
#include "floe/json.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "floe/schema.h"
#include "harness.h"
#include "io/io_faults.h"

/* ---- shared: reading a Parquet file back --------------------------------------------- */

/* Canonical NDJSON of every row of the file at path into out (malloc'ed text), or NULL
 * when it does not read completely. */
static char *parquet_rows(const char *path) {
    floe_pq_reader *r = NULL;
    floe_error err;
    if (floe_pq_reader_open(NULL, path, NULL, &r, &err) < 0)
        return NULL;
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = floe_pq_reader_dump(r, FLOE_PQ_ROWS_CANONICAL, -1, harness_buf_sink, &b, NULL, &err);
    floe_pq_reader_close(r);
    if (rc < 0 || floe_buf_append_byte(&b, 0) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    char *s = strdup((const char *)b.data);
    floe_buf_free(&b);
    return s;
}

/* ---- the hook itself ------------------------------------------------------------------ */

TEST(io_fault_counts_and_sticks) {
    const char *dir = harness_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/x.bin", dir);
    floe_error err;
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_WRITE, 0, 0); /* count only */
    REQUIRE_OK(floe_io_write_all(NULL, path, "abc", 3, NULL, &err), err);
    CHECK_EQ_U64(floe_io_fault_count(NULL, FLOE_IO_FAULT_WRITE), 1);

    floe_io_fault_inject(NULL, FLOE_IO_FAULT_WRITE, 1, ENOSPC);
    int rc = floe_io_write_all(NULL, path, "defg", 4, NULL, &err);
    CHECK_EQ_INT(rc, FLOE_ENOSPACE);
    CHECK(strstr(err.msg, "No space left") != NULL || strstr(err.msg, "no space") != NULL);
    rc = floe_io_write_all(NULL, path, "defg", 4, NULL, &err); /* sticky */
    CHECK_EQ_INT(rc, FLOE_ENOSPACE);
    floe_io_fault_clear(NULL);
    size_t len = 0;
    char *back = harness_read_file(path, &len);
    REQUIRE(back != NULL);
    CHECK(len == 3 && memcmp(back, "abc", 3) == 0); /* the failed writes left it alone */
    free(back);

    floe_io_fault_inject(NULL, FLOE_IO_FAULT_RENAME, 1, EIO);
    CHECK(floe_io_write_all(NULL, path, "zz", 2, NULL, &err) < 0);
    floe_io_fault_clear(NULL); /* inject arms one kind; the rename fault would still fire */
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_FSYNC, 2, 0); /* 0 = EIO; 2nd fsync: the folder */
    CHECK(floe_io_write_all(NULL, path, "zz", 2, NULL, &err) < 0);
    CHECK_EQ_INT(err.sys, EIO);
    floe_io_fault_clear(NULL);
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_OPEN, 1, EACCES);
    floe_input *in = NULL;
    CHECK(floe_input_open(NULL, path, &in, &err) < 0 && in == NULL);
    floe_io_fault_clear(NULL);
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_READ, 1, EIO);
    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK_EQ_INT(floe_io_read_all(NULL, path, 0, &b, &err), FLOE_EIO);
    floe_io_fault_clear(NULL);
    CHECK_OK(floe_io_read_all(NULL, path, 0, &b, &err), err);
    CHECK(b.len == 2 && memcmp(b.data, "zz", 2) == 0); /* fsync of the folder came last */
    floe_buf_free(&b);
    CHECK(fault_walk(dir, fault_no_temp, NULL) == 1);
}

/* ---- (a) floe convert ---------------------------------------------------------------- */

typedef struct convert_ctx {
    floe_schema *schema;
    char input[4200];
    char out_dir[4200];
    int threads;
    char **lines;            /* the input, line by line (quarantine records must match) */
    size_t nlines;
    char *ref_rows;          /* what a clean run writes */
    char *ref_quarantine;    /* the clean run's quarantine file */
} convert_ctx;

static int convert_run(void *vctx, floe_error *err) {
    convert_ctx *c = vctx;
    floe_convert_options o;
    floe_convert_options_init(&o);
    o.schema = c->schema;
    o.out_dir = c->out_dir;
    o.threads = c->threads;
    o.chunk_size = 1024; /* several chunks, so the ordered hand-off runs too */
    o.shred.max_record = 2048; /* one input line is longer: streamed to the quarantine */
    const char *inputs[] = {c->input};
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    int rc = floe_convert(inputs, 1, &o, &res, err);
    if (rc == 0) {
        if (res.files != 1 || res.rejected != 2)
            rc = floe_error_set(err, FLOE_EINTERNAL, "convert: %lld files, %lld rejected",
                                (long long)res.files, (long long)res.rejected);
        floe_convert_result_free(&res);
    }
    return rc;
}

static void convert_reset(void *vctx) {
    convert_ctx *c = vctx;
    fault_empty_dir(c->out_dir);
}

static int b64val(char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decode standard base64 (padding optional) into out; false if malformed. */
static bool b64_decode(const char *s, floe_buf *out) {
    uint32_t acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        int v = b64val(*s);
        if (v < 0)
            return false;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (floe_buf_append_byte(out, (uint8_t)(acc >> bits)) < 0)
                return false;
        }
    }
    return true;
}

/* Every quarantine line is a whole JSON object holding, byte for byte, the input line it
 * names: a record cut short by a failure must not be published as if it were whole. */
static bool quarantine_complete(const convert_ctx *c, const char *path) {
    size_t len = 0;
    char *text = harness_read_file(path, &len);
    if (!text)
        return false;
    bool ok = len > 0 && text[len - 1] == '\n';
    for (char *line = text; ok && line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, &je);
        json_int_t no = json_integer_value(json_object_get(j, "line"));
        const char *rec = json_string_value(json_object_get(j, "record"));
        const char *b64 = json_string_value(json_object_get(j, "record_base64"));
        floe_buf raw;
        floe_buf_init(&raw, 0);
        ok = j && json_object_get(j, "reason") && no >= 1 && (size_t)no <= c->nlines &&
             (rec || (b64 && b64_decode(b64, &raw)));
        if (ok && rec)
            ok = !strcmp(rec, c->lines[no - 1]);
        else if (ok)
            ok = raw.len == strlen(c->lines[no - 1]) &&
                 (raw.len == 0 || !memcmp(raw.data, c->lines[no - 1], raw.len));
        if (!ok)
            fprintf(stderr, "quarantine %s: bad or incomplete record: %.*s\n", path,
                    (int)(nl - line > 300 ? 300 : nl - line), line);
        floe_buf_free(&raw);
        json_decref(j);
        line = nl + 1;
    }
    free(text);
    return ok;
}

static bool convert_file_ok(void *vctx, const char *path, const struct stat *st) {
    convert_ctx *c = vctx;
    (void)st;
    if (strstr(path, ".floe-tmp-"))
        return false;
    size_t n = strlen(path);
    if (n > 8 && !strcmp(path + n - 8, ".parquet")) {
        char *rows = parquet_rows(path);
        bool same = rows && c->ref_rows && !strcmp(rows, c->ref_rows);
        free(rows);
        return same;
    }
    if (strstr(path, "/_quarantine/"))
        return quarantine_complete(c, path);
    return false;
}

static void convert_verify(void *vctx, int rc, const floe_error *err) {
    convert_ctx *c = vctx;
    (void)err;
    char pq[4300];
    snprintf(pq, sizeof pq, "%s/part-00000.parquet", c->out_dir);
    if (rc == 0) {
        char *rows = parquet_rows(pq);
        CHECK(rows != NULL);
        if (!c->ref_rows)
            c->ref_rows = rows;
        else {
            CHECK(rows && !strcmp(rows, c->ref_rows));
            free(rows);
        }
    }
    /* failed or not: no temporary files, and whatever is there is complete */
    CHECK(fault_walk(c->out_dir, convert_file_ok, c) >= 0);
}

static void convert_setup(convert_ctx *c) {
    memset(c, 0, sizeof *c);
    floe_error err;
    REQUIRE_OK(
        floe_schema_load(harness_source_path("tests/data/alltypes.schema.json"), &c->schema, &err),
        err);
    size_t len = 0;
    char *records = harness_read_file(harness_source_path("tests/data/alltypes.ndjson"), &len);
    REQUIRE(records != NULL);
    const char *dir = harness_tmpdir();
    snprintf(c->input, sizeof c->input, "%s/in.ndjson", dir);
    snprintf(c->out_dir, sizeof c->out_dir, "%s/out", dir);
    floe_buf in;
    floe_buf_init(&in, 0);
    REQUIRE(floe_buf_append(&in, records, len) == 0);
    REQUIRE(floe_buf_append(&in, "{\"l\":\"not a long\"}\n", 19) == 0); /* quarantined */
    REQUIRE(floe_buf_append(&in, "{\"s\":\"", 6) == 0); /* past max_record: streamed */
    for (int i = 0; i < 500; i++)
        REQUIRE(floe_buf_append(&in, "0123456789", 10) == 0);
    REQUIRE(floe_buf_append(&in, "\"}\n", 3) == 0);
    REQUIRE(floe_buf_append(&in, records, len) == 0);
    REQUIRE(harness_write_file(c->input, in.data, in.len) == 0);
    for (char *line = (char *)in.data; line < (char *)in.data + in.len;) {
        char *nl = memchr(line, '\n', (size_t)((char *)in.data + in.len - line));
        REQUIRE(nl != NULL);
        c->lines = realloc(c->lines, (c->nlines + 1) * sizeof *c->lines);
        REQUIRE(c->lines != NULL);
        c->lines[c->nlines++] = strndup(line, (size_t)(nl - line));
        line = nl + 1;
    }
    floe_buf_free(&in);
    free(records);
}

static void convert_teardown(convert_ctx *c) {
    for (size_t i = 0; i < c->nlines; i++)
        free(c->lines[i]);
    free(c->lines);
    free(c->ref_rows);
    free(c->ref_quarantine);
    floe_schema_free(c->schema);
}

/* Switch the input to a gzip copy of itself (same lines). */
static void convert_use_gzip(convert_ctx *c) {
    size_t len = 0;
    char *plain = harness_read_file(c->input, &len);
    REQUIRE(plain != NULL);
    char gz[sizeof c->input];
    REQUIRE(strlen(c->input) + 4 < sizeof gz);
    memcpy(gz, c->input, strlen(c->input));
    memcpy(gz + strlen(c->input), ".gz", 4);
    gzFile g = gzopen(gz, "wb");
    REQUIRE(g != NULL);
    REQUIRE(gzwrite(g, plain, (unsigned)len) == (int)len);
    REQUIRE(gzclose(g) == Z_OK);
    free(plain);
    memcpy(c->input, gz, sizeof gz);
}

TEST(convert_survives_every_fault) {
    convert_ctx c;
    convert_setup(&c);
    c.threads = 1;
    fault_case fc = {"convert", convert_run, convert_reset, convert_verify, &c};
    fault_stats st = fault_loop(&fc, FAULT_ALLOC, 0);
    CHECK(st.ops > 100 && st.runs > 0);
    CHECK(st.by_code[-FLOE_ENOMEM] > 0);
    st = fault_loop(&fc, FAULT_OPEN, EACCES);
    CHECK(st.ops >= 3); /* input, Parquet file, quarantine */
    /* a plain file is mapped, not read: read(2) faults need the gzip copy of the input
     * (a mapped file that shrinks is test_line_reader's) */
    convert_use_gzip(&c);
    st = fault_loop(&fc, FAULT_READ, EIO);
    CHECK(st.ops >= 1 && st.by_code[-FLOE_EIO] == st.runs);
    st = fault_loop(&fc, FAULT_WRITE, ENOSPC);
    CHECK(st.ops >= 2 && st.by_code[-FLOE_ENOSPACE] == st.runs);
    st = fault_loop(&fc, FAULT_FSYNC, EIO);
    CHECK(st.ops >= 2);
    st = fault_loop(&fc, FAULT_RENAME, EIO);
    CHECK(st.ops >= 2);
    convert_teardown(&c);
}

TEST(convert_threaded_survives_allocation_faults) {
    convert_ctx c;
    convert_setup(&c);
    c.threads = 3;
    fault_case fc = {"convert -j3", convert_run, convert_reset, convert_verify, &c};
    fault_stats st = fault_loop(&fc, FAULT_ALLOC, 0);
    CHECK(st.runs > 0);
    st = fault_loop(&fc, FAULT_WRITE, ENOSPC);
    CHECK(st.runs > 0);
    convert_teardown(&c);
}

/* ---- (b) Avro container: write through FileIO, read back through a floe_input ------- */

static const char AVRO_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"
    "\"record\",\"name\":\"r508\",\"fields\":[{\"name\":\"contains_null\",\"type\":\"boolean\","
    "\"field-id\":509},{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"field-id\":510}"
    "]},\"element-id\":508}],\"field-id\":507}]}";

#define AVRO_RECORDS 40

typedef struct avro_ctx {
    floe_avro_schema *schema;
    char path[4300];
    char dir[4200];
    floe_codec codec;
} avro_ctx;

static int avro_run(void *vctx, floe_error *err) {
    avro_ctx *c = vctx;
    floe_buf file;
    floe_buf_init(&file, 0);
    floe_arena arena;
    floe_arena_init(&arena, 4096);
    floe_avro_writer *w = NULL;
    floe_avro_reader *r = NULL;
    floe_input *in = NULL;
    static const uint8_t sync[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    floe_avro_writer_options wo = {.codec = c->codec, .block_records = 7, .sync = sync};
    int rc = 0;
    FLOE_CHECK(floe_avro_writer_open(c->schema, &wo, &file, &w, err));
    for (int i = 0; i < AVRO_RECORDS; i++) {
        char path[64];
        snprintf(path, sizeof path, "s3://bucket/t/metadata/m%d.avro", i);
        floe_avro_value rec, *f;
        FLOE_CHECK(floe_avro_set_record(&rec, &arena, 3) < 0
                       ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                       : 0);
        f = rec.u.list.items;
        floe_avro_set_string(&f[0], path);
        floe_avro_set_long(&f[1], 1000 + i);
        if (i % 3 == 0) {
            floe_avro_set_null(&f[2]);
        } else {
            if (floe_avro_set_array(&f[2], &arena, 1) < 0 ||
                floe_avro_set_record(&f[2].u.list.items[0], &arena, 2) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            floe_avro_value *ps = f[2].u.list.items[0].u.list.items;
            floe_avro_set_bool(&ps[0], i % 2);
            floe_avro_set_bytes(&ps[1], "\x01\x02", 2);
        }
        FLOE_CHECK(floe_avro_writer_append(w, &rec, err));
    }
    rc = floe_avro_writer_close(w, err);
    w = NULL;
    FLOE_CHECK(rc);
    FLOE_CHECK(floe_avro_write_uri(NULL, c->path, &file, NULL, err));
    /* read it back through FileIO (reads and opens are injected too) */
    FLOE_CHECK(floe_input_open(NULL, c->path, &in, err));
    FLOE_CHECK(floe_avro_reader_open_input(in, NULL, &r, err));
    const floe_avro_value *v;
    int64_t n = 0, sum = 0;
    while ((rc = floe_avro_reader_next(r, &v, err)) == 1) {
        sum += v->u.list.items[1].u.l;
        n++;
    }
    FLOE_CHECK(rc);
    if (n != AVRO_RECORDS || sum != AVRO_RECORDS * 1000 + AVRO_RECORDS * (AVRO_RECORDS - 1) / 2)
        FLOE_FAIL(err, FLOE_EINTERNAL, "read back %lld records, sum %lld", (long long)n,
                  (long long)sum);
done:
    floe_avro_writer_abort(w);
    floe_avro_reader_close(r);
    floe_input_close(in);
    floe_arena_reset(&arena);
    floe_buf_free(&file);
    return rc;
}

static void avro_reset(void *vctx) {
    avro_ctx *c = vctx;
    fault_empty_dir(c->dir);
}

/* A file left behind must be a whole container holding every record. */
static bool avro_file_ok(void *vctx, const char *path, const struct stat *st) {
    (void)vctx;
    (void)st;
    if (strstr(path, ".floe-tmp-"))
        return false;
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    floe_avro_reader *r = NULL;
    int64_t n = 0;
    bool ok = floe_io_read_all(NULL, path, 0, &b, &err) == 0 &&
              floe_avro_reader_open_mem(b.data, b.len, NULL, &r, &err) == 0;
    const floe_avro_value *v;
    int rc = 0;
    while (ok && (rc = floe_avro_reader_next(r, &v, &err)) == 1)
        n++;
    floe_avro_reader_close(r);
    floe_buf_free(&b);
    return ok && rc == 0 && n == AVRO_RECORDS;
}

static void avro_verify(void *vctx, int rc, const floe_error *err) {
    avro_ctx *c = vctx;
    (void)err;
    long files = fault_walk(c->dir, avro_file_ok, c);
    CHECK(files >= 0);
    if (rc == 0)
        CHECK_EQ_INT(files, 1);
}

TEST(avro_round_trip_survives_every_fault) {
    avro_ctx c;
    memset(&c, 0, sizeof c);
    floe_error err;
    REQUIRE_OK(floe_avro_schema_parse(AVRO_SCHEMA, strlen(AVRO_SCHEMA), &c.schema, &err), err);
    snprintf(c.dir, sizeof c.dir, "%s", harness_tmpdir());
    snprintf(c.path, sizeof c.path, "%s/metadata/snap-1.avro", c.dir);
    static const floe_codec codecs[] = {FLOE_CODEC_UNCOMPRESSED, FLOE_CODEC_DEFLATE,
                                        FLOE_CODEC_ZSTD};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        c.codec = codecs[i];
        fault_case fc = {"avro", avro_run, avro_reset, avro_verify, &c};
        if (i == 1) { /* the all-kinds helper later modules use */
            CHECK(fault_loop_all(&fc) > 40);
            continue;
        }
        fault_stats st = fault_loop(&fc, FAULT_ALLOC, 0);
        CHECK(st.ops > 10 && st.by_code[-FLOE_ENOMEM] > 0);
        if (i > 0)
            continue; /* the I/O is the same for every codec */
        st = fault_loop(&fc, FAULT_OPEN, ENOENT);
        CHECK_EQ_U64(st.ops, 2); /* the temporary output, the input */
        st = fault_loop(&fc, FAULT_READ, EIO);
        CHECK(st.ops >= 2 && st.by_code[-FLOE_EIO] == st.runs);
        st = fault_loop(&fc, FAULT_WRITE, ENOSPC);
        CHECK(st.ops >= 1 && st.by_code[-FLOE_ENOSPACE] == st.runs);
        st = fault_loop(&fc, FAULT_FSYNC, EIO);
        CHECK_EQ_U64(st.ops, 2); /* the file, its folder */
        st = fault_loop(&fc, FAULT_RENAME, EIO);
        CHECK_EQ_U64(st.ops, 1);
    }
    floe_avro_schema_free(c.schema);
}

/* ---- (c) Parquet: one batch written ------------------------------------------------- */

typedef struct parquet_ctx {
    floe_schema *schema;
    floe_batch batch;
    char dir[4200];
    char path[4300];
    floe_codec codec;
    char *ref_rows;
} parquet_ctx;

static int parquet_run(void *vctx, floe_error *err) {
    parquet_ctx *c = vctx;
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.codec = c->codec;
    o.page_size = 256; /* several pages per column */
    floe_pq_writer *w = NULL;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    int rc = floe_pq_writer_open(NULL, c->path, c->schema, &o, &w, err);
    if (rc < 0)
        return rc;
    if ((rc = floe_pq_writer_write_batch(w, &c->batch, err)) < 0) {
        floe_pq_writer_abort(w);
        return rc;
    }
    rc = floe_pq_writer_close(w, &fi, err);
    if (rc == 0 && fi.record_count != (int64_t)c->batch.nrows)
        rc = floe_error_set(err, FLOE_EINTERNAL, "wrote %lld rows", (long long)fi.record_count);
    floe_pq_file_info_free(&fi);
    return rc;
}

static void parquet_reset(void *vctx) {
    parquet_ctx *c = vctx;
    fault_empty_dir(c->dir);
}

static bool parquet_file_ok(void *vctx, const char *path, const struct stat *st) {
    parquet_ctx *c = vctx;
    (void)st;
    if (strcmp(path, c->path) != 0)
        return false;
    char *rows = parquet_rows(path);
    bool same = rows && c->ref_rows && !strcmp(rows, c->ref_rows);
    free(rows);
    return same;
}

static void parquet_verify(void *vctx, int rc, const floe_error *err) {
    parquet_ctx *c = vctx;
    (void)err;
    if (rc == 0 && !c->ref_rows) {
        c->ref_rows = parquet_rows(c->path);
        REQUIRE(c->ref_rows != NULL);
    }
    long files = fault_walk(c->dir, parquet_file_ok, c);
    CHECK(files >= 0);
    if (rc == 0)
        CHECK_EQ_INT(files, 1);
}

TEST(parquet_write_survives_every_fault) {
    parquet_ctx c;
    memset(&c, 0, sizeof c);
    floe_error err;
    REQUIRE_OK(
        floe_schema_load(harness_source_path("tests/data/alltypes.schema.json"), &c.schema, &err),
        err);
    size_t len = 0;
    char *records = harness_read_file(harness_source_path("tests/data/alltypes.ndjson"), &len);
    REQUIRE(records != NULL);
    floe_shredder *sh = NULL;
    REQUIRE_OK(floe_shredder_new(c.schema, NULL, &sh, &err), err);
    REQUIRE(floe_batch_init(&c.batch, c.schema) == 0);
    REQUIRE_OK(floe_shredder_feed(sh, (const uint8_t *)records, len, "alltypes", 1, 0, &c.batch,
                                  NULL, NULL, &err),
               err);
    floe_shredder_free(sh);
    free(records);
    REQUIRE(c.batch.nrows >= 5);
    snprintf(c.dir, sizeof c.dir, "%s", harness_tmpdir());
    snprintf(c.path, sizeof c.path, "%s/data/part-0.parquet", c.dir);

    static const floe_codec codecs[] = {FLOE_CODEC_SNAPPY, FLOE_CODEC_ZSTD, FLOE_CODEC_GZIP};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        c.codec = codecs[i];
        free(c.ref_rows);
        c.ref_rows = NULL;
        fault_case fc = {"parquet", parquet_run, parquet_reset, parquet_verify, &c};
        fault_stats st = fault_loop(&fc, FAULT_ALLOC, 0);
        CHECK(st.ops > 20 && st.by_code[-FLOE_ENOMEM] > 0);
        if (i > 0)
            continue;
        st = fault_loop(&fc, FAULT_OPEN, EMFILE);
        CHECK_EQ_U64(st.ops, 1);
        st = fault_loop(&fc, FAULT_WRITE, ENOSPC);
        CHECK(st.ops >= 1 && st.by_code[-FLOE_ENOSPACE] == st.runs);
        st = fault_loop(&fc, FAULT_FSYNC, EIO);
        CHECK_EQ_U64(st.ops, 2);
        st = fault_loop(&fc, FAULT_RENAME, EXDEV);
        CHECK_EQ_U64(st.ops, 1);
    }
    free(c.ref_rows);
    floe_batch_free(&c.batch);
    floe_schema_free(c.schema);
}

int main(void) {
    RUN(io_fault_counts_and_sticks);
    RUN(parquet_write_survives_every_fault);
    RUN(avro_round_trip_survives_every_fault);
    RUN(convert_survives_every_fault);
    RUN(convert_threaded_survives_allocation_faults);
    return harness_finish();
}
