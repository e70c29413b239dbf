/*
 * test_puffin.c - deletion vectors (format v3): the portable 64-bit Roaring codec, the
 * deletion-vector-v1 blob, Puffin files, and v3 tables with deletion vectors read by
 * floe scan, health, expire and orphans.
 *
 * Oracles: tests/js/dv_oracle.mjs, built on the `roaring` npm package (CRoaring's Node
 * port): it decodes what floe encodes and encodes (run-optimized) what floe decodes, and
 * makes the v3 test table from a copy of the conformance table
 * duckdb-iceberg/legacy_bare_deletion_vector (PyIceberg data file; its bare DV blob is
 * replaced by a Puffin file and its delete manifest entry pointed at it).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/io.h"
#include "harness.h"
#include "iceberg/puffin.h"

#define LEGACY "iceberg/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/" \
               "legacy_bare_deletion_vector"
#define RECORDED "data/persistent/legacy_bare_deletion_vector/warehouse/default/" \
                 "legacy_bare_deletion_vector"


/* Run a shell command; its stdout in *out (caller frees) when out is non-NULL. */
static int sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...) {
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *o = NULL;
    int rc = harness_run_cmd(cmd, &o);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n%s\n", rc, cmd, o ? o : "");
    if (out)
        *out = o;
    else
        free(o);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * position sets
 * ------------------------------------------------------------------------------------- */

typedef struct pset {
    int64_t *v;
    size_t n;
} pset;

static void add(pset *s, int64_t x) {
    if ((s->n & (s->n - 1)) == 0) /* 0, 1, 2, 4, ...: double */
        s->v = realloc(s->v, (s->n ? 2 * s->n : 1) * sizeof *s->v);
    s->v[s->n++] = x;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The shapes: empty; one; arrays; a bitset container; runs; several 16-bit containers;
 * positions past 2^32 (a second 32-bit bitmap); four or more run containers (offset
 * header with runs). */
static pset shape(int k) {
    pset s = {0};
    switch (k) {
    case 0:
        break;
    case 1:
        add(&s, 0);
        break;
    case 2:
        for (int64_t i = 0; i < 100; i++)
            add(&s, i * 7 + 3);
        break;
    case 3: /* 6000 in one container: bitset */
        for (int64_t i = 0; i < 6000; i++)
            add(&s, i * 10 + 1);
        break;
    case 4: /* long runs */
        for (int64_t i = 0; i < 70000; i++)
            add(&s, 1000 + i);
        break;
    case 5: /* many containers, mixed */
        for (int64_t c = 0; c < 9; c++)
            for (int64_t i = 0; i < (c % 3 == 0 ? 5000 : c % 3 == 1 ? 40 : 300); i++)
                add(&s, c * 65536 + (c % 3 == 2 ? i : i * 13 % 65536 + 0) * 1);
        break;
    case 6: /* two 32-bit keys */
        add(&s, 5);
        add(&s, 65535);
        add(&s, ((int64_t)1 << 32) + 7);
        add(&s, ((int64_t)3 << 32) + 65536);
        break;
    case 7: /* five run containers */
        for (int64_t c = 0; c < 5; c++)
            for (int64_t i = 0; i < 30; i++)
                add(&s, c * 70000 + i);
        break;
    }
    /* sort and drop repeats (case 5 may make some) */
    if (s.n > 1)
        qsort(s.v, s.n, sizeof *s.v, cmp_i64);
    size_t w = 0;
    for (size_t i = 0; i < s.n; i++)
        if (w == 0 || s.v[i] != s.v[w - 1])
            s.v[w++] = s.v[i];
    s.n = w;
    return s;
}
#define NSHAPES 8

static char *json_list(const int64_t *v, size_t n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_append_byte(&b, '[');
    for (size_t i = 0; i < n; i++)
        floe_buf_printf(&b, "%s%" PRId64, i ? "," : "", v[i]);
    floe_buf_append(&b, "]", 2);
    return (char *)b.data;
}

static bool same(const floe_dv_positions *got, const pset *want) {
    return got->n == want->n &&
           (want->n == 0 || memcmp(got->pos, want->v, want->n * sizeof *want->v) == 0);
}

TEST(test_roaring_roundtrip) {
    for (int k = 0; k < NSHAPES; k++) {
        pset s = shape(k);
        floe_buf b;
        floe_buf_init(&b, 0);
        floe_error err = {0};
        REQUIRE_OK(floe_roaring64_encode(s.v, s.n, &b, &err), err);
        floe_dv_positions got = {0};
        CHECK_OK(floe_roaring64_decode(b.data, b.len, 0, INT64_MAX, FLOE_DV_MAX_CARD, &got,
                                       &err), err);
        if (!same(&got, &s))
            harness_fail(__FILE__, __LINE__, "shape %d: %zu positions back, want %zu", k,
                         got.n, s.n);
        floe_free(got.pos);
        floe_buf_free(&b);
        free(s.v);
    }
}

/* floe encodes, roaring (npm) decodes; roaring encodes, floe decodes. */
TEST(test_roaring_npm_oracle) {
    const char *dir = harness_tmpdir();
    char path[8400], files[NSHAPES * 4300] = "";
    pset s[NSHAPES];
    floe_buf all;
    floe_buf_init(&all, 0);
    floe_buf_append_byte(&all, '[');
    for (int k = 0; k < NSHAPES; k++) {
        s[k] = shape(k);
        snprintf(path, sizeof path, "%s/floe_%d.bin", dir, k);
        floe_buf b;
        floe_buf_init(&b, 0);
        floe_error err = {0};
        REQUIRE_OK(floe_roaring64_encode(s[k].v, s[k].n, &b, &err), err);
        REQUIRE(harness_write_file(path, b.data, b.len) == 0);
        floe_buf_free(&b);
        strcat(files, " ");
        strcat(files, path);
        char *l = json_list(s[k].v, s[k].n);
        floe_buf_printf(&all, "%s%s", k ? "," : "", l);
        free(l);
    }
    floe_buf_append(&all, "]", 2);
    snprintf(path, sizeof path, "%s/lists.json", dir);
    REQUIRE(harness_write_file(path, all.data, all.len - 1) == 0);

    char *out = NULL;
    REQUIRE(sh(&out, "node %s/dv_oracle.mjs bitmap-read%s", harness_source_path("tests/js"),
               files) == 0);
    char *line = out;
    for (int k = 0; k < NSHAPES; k++) {
        char *nl = line ? strchr(line, '\n') : NULL;
        if (nl)
            *nl = 0;
        char *want = json_list(s[k].v, s[k].n);
        if (!line || strcmp(line, want))
            harness_fail(__FILE__, __LINE__, "shape %d: roaring read floe's bitmap as %.200s",
                         k, line ? line : "(nothing)");
        free(want);
        line = nl ? nl + 1 : NULL;
    }
    free(out);

    char prefix[4300];
    snprintf(prefix, sizeof prefix, "%s/npm_", dir);
    REQUIRE(sh(NULL, "node %s/dv_oracle.mjs bitmap-write %s @%s", harness_source_path("tests/js"),
               prefix, path) == 0);
    for (int k = 0; k < NSHAPES; k++) {
        snprintf(path, sizeof path, "%s%d.bin", prefix, k);
        size_t n = 0;
        uint8_t *bytes = (uint8_t *)harness_read_file(path, &n);
        REQUIRE(bytes);
        floe_dv_positions got = {0};
        floe_error err = {0};
        CHECK_OK(floe_roaring64_decode(bytes, n, 0, INT64_MAX, FLOE_DV_MAX_CARD, &got, &err),
                 err);
        if (!same(&got, &s[k]))
            harness_fail(__FILE__, __LINE__, "shape %d: floe read roaring's bitmap as %zu "
                         "positions, want %zu", k, got.n, s[k].n);
        floe_free(got.pos);
        free(bytes);
        free(s[k].v);
    }
    floe_buf_free(&all);
}

/* A blob and the offset and message of one corruption of it. */
static void expect_refusal(const uint8_t *p, size_t n, int64_t limit, int64_t offset,
                           const char *words, int line) {
    floe_dv_positions got = {0};
    floe_error err = {0};
    int rc = floe_dv_blob_decode(p, n, 100, limit, FLOE_DV_MAX_CARD, &got, &err);
    if (rc != FLOE_ECORRUPT || err.offset != offset || !strstr(err.msg, words))
        harness_fail(__FILE__, line, "rc %d offset %" PRId64 " (want %" PRId64 ") \"%s\" "
                     "(want \"%s\")", rc, err.offset, offset, err.msg, words);
    floe_free(got.pos);
}

TEST(test_dv_blob_corrupt) {
    const int64_t pos[] = {1, 2, 3, 40000};
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err = {0};
    REQUIRE_OK(floe_dv_blob_encode(pos, 4, &b, &err), err);
    /* blob: be32 len, magic, [8 count][4 key][cookie 12346][4 count=1][desc: key 0 card 4]
     *       [offset][4 values x 2], crc; base 100 in the calls below */
    floe_dv_positions got = {0};
    REQUIRE_OK(floe_dv_blob_decode(b.data, b.len, 100, 100000, 10, &got, &err), err);
    CHECK_EQ_INT(got.n, 4);
    CHECK_EQ_INT(got.pos[3], 40000);
    floe_free(got.pos);
    size_t n = b.len;
    uint8_t *c = malloc(n);

    memcpy(c, b.data, n);
    c[n - 1] ^= 1;
    expect_refusal(c, n, INT64_MAX, 100 + (int64_t)n - 4, "CRC-32 mismatch", __LINE__);
    memcpy(c, b.data, n);
    c[5] ^= 1;
    expect_refusal(c, n, INT64_MAX, 104, "bad magic", __LINE__);
    expect_refusal(b.data, n - 1, INT64_MAX, 100, "length field", __LINE__);
    expect_refusal(b.data, 5, INT64_MAX, 100, "less than length", __LINE__);
    /* past the data file's rows: 40000 >= 1000 (values start at blob byte 8+8+4+16+4) */
    expect_refusal(b.data, n, 1000, 100 + 8 + 8 + 4 + 8 + 4 + 4 + 6,
                   "past the data file's 1000 rows", __LINE__);

    /* corruptions inside the bitmap, CRC made right again so the bitmap is reached */
    struct {
        size_t at;
        uint8_t v;
        int64_t offset;
        const char *words;
    } cases[] = {
        {8 + 8 + 4, 0x39, 100 + 20, "cookie is neither"},          /* cookie */
        {8 + 8 + 4 + 8 + 2, 9, 100 + 36, "needs"},                 /* card 10: array cut */
        {8 + 8 + 4 + 8 + 4 + 4 + 2, 1, 100 + 38, "not ascending"}, /* 2nd value = 1 */
        {8, 3, 100 + 8, "cannot fit"},                             /* 3 bitmaps */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, b.data, n);
        c[cases[i].at] = cases[i].v;
        uint32_t len = (uint32_t)(n - 8);
        uint32_t crc = floe_crc32(0, c + 4, len);
        c[4 + len] = (uint8_t)(crc >> 24);
        c[5 + len] = (uint8_t)(crc >> 16);
        c[6 + len] = (uint8_t)(crc >> 8);
        c[7 + len] = (uint8_t)crc;
        expect_refusal(c, n, INT64_MAX, cases[i].offset, cases[i].words, __LINE__);
    }
    free(c);
    floe_buf_free(&b);

    /* the cap: a run container of 65536 positions in 6 bytes is refused before it is
     * expanded when the cap is smaller */
    const uint8_t runs[] = {1, 0, 0, 0, 0, 0, 0, 0, /* one bitmap */
                            0, 0, 0, 0,             /* key 0 */
                            0x3b, 0x30, 0, 0,       /* 12347, 1 container */
                            1,                      /* it is a run container */
                            0, 0, 0xff, 0xff,       /* key 0, card 65536 */
                            1, 0, 0, 0, 0xff, 0xff}; /* one run 0..65535 */
    floe_dv_positions all = {0};
    CHECK_EQ_INT(floe_roaring64_decode(runs, sizeof runs, 0, INT64_MAX, 1000, &all, &err),
                 FLOE_ELIMIT);
    CHECK_OK(floe_roaring64_decode(runs, sizeof runs, 0, INT64_MAX, 65536, &all, &err), err);
    CHECK_EQ_INT(all.n, 65536);
    floe_free(all.pos);
}

/* floe writes a Puffin file, roaring (npm) reads it; roaring writes one, floe reads it. */
TEST(test_puffin_files) {
    const char *dir = harness_tmpdir();
    char path[4200], uri[4300];
    snprintf(path, sizeof path, "%s/floe.puffin", dir);
    snprintf(uri, sizeof uri, "file://%s", path);
    pset a = shape(3), b = shape(6);
    floe_dv_positions dvs[2] = {{a.v, a.n}, {b.v, b.n}};
    const char *paths[2] = {"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet"};
    int64_t off[2], len[2], size = 0;
    floe_error err = {0};
    REQUIRE_OK(floe_puffin_write_dvs(NULL, uri, paths, dvs, 2, off, len, &size, &err), err);
    char *out = NULL;
    REQUIRE(sh(&out, "node %s/dv_oracle.mjs read %s", harness_source_path("tests/js"), path) == 0);
    char *wa = json_list(a.v, a.n), *wb = json_list(b.v, b.n);
    char expect[1 << 16];
    snprintf(expect, sizeof expect,
             "{\"offset\":%" PRId64 ",\"length\":%" PRId64 ",\"referenced\":\"%s\","
             "\"positions\":%s}\n{\"offset\":%" PRId64 ",\"length\":%" PRId64 ","
             "\"referenced\":\"%s\",\"positions\":%s}\n",
             off[0], len[0], paths[0], wa, off[1], len[1], paths[1], wb);
    CHECK(out && !strcmp(out, expect));
    free(out);
    for (int i = 0; i < 2; i++) {
        floe_dv_positions got = {0};
        CHECK_OK(floe_dv_read(NULL, uri, off[i], len[i], paths[i], INT64_MAX, &got, &err),
                 err);
        CHECK(same(&got, i ? &b : &a));
        floe_free(got.pos);
    }
    /* the manifest's offset or length disagreeing with the footer */
    floe_dv_positions got = {0};
    CHECK_EQ_INT(floe_dv_read(NULL, uri, off[0] + 1, len[0], paths[0], INT64_MAX, &got, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "lists no blob at byte") && strstr(err.msg, "floe.puffin"));
    CHECK_EQ_INT(floe_dv_read(NULL, uri, off[1], len[1] - 1, paths[1], INT64_MAX, &got, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "content_size_in_bytes"));

    /* written by roaring (npm) */
    snprintf(path, sizeof path, "%s/npm.puffin", dir);
    snprintf(uri, sizeof uri, "file://%s", path);
    char *blobs = malloc(strlen(wa) + strlen(wb) + 200);
    sprintf(blobs, "[{\"referenced\":\"x.parquet\",\"positions\":%s},"
                   "{\"referenced\":\"y.parquet\",\"positions\":%s}]", wa, wb);
    char bpath[4300];
    snprintf(bpath, sizeof bpath, "%s/blobs.json", dir);
    REQUIRE(harness_write_file(bpath, blobs, strlen(blobs)) == 0);
    free(blobs);
    REQUIRE(sh(NULL, "node %s/dv_oracle.mjs puffin-write %s @%s", harness_source_path("tests/js"),
               path, bpath) == 0);
    size_t n = 0;
    uint8_t *bytes = (uint8_t *)harness_read_file(path, &n);
    REQUIRE(bytes && n > 16);
    int64_t start;
    REQUIRE_OK(floe_puffin_footer_start(bytes + n - FLOE_PUFFIN_TAIL, (int64_t)n, &start, &err),
               err);
    floe_puffin_footer f = {0};
    REQUIRE_OK(floe_puffin_footer_decode(bytes + start, n - (size_t)start, (int64_t)n, &f,
                                         &err), err);
    REQUIRE(f.nblobs == 2);
    CHECK_EQ_STR(f.blobs[1].referenced_data_file, "y.parquet");
    CHECK_EQ_STR(f.created_by, "dv_oracle.mjs (roaring npm)");
    for (int i = 0; i < 2; i++) {
        CHECK_OK(floe_dv_read(NULL, uri, f.blobs[i].offset, f.blobs[i].length, NULL,
                              INT64_MAX, &got, &err), err);
        CHECK(same(&got, i ? &b : &a));
        floe_free(got.pos);
    }
    /* a footer flag floe does not know */
    bytes[n - 7] = 1;
    floe_puffin_footer g = {0};
    CHECK_EQ_INT(floe_puffin_footer_decode(bytes + start, n - (size_t)start, (int64_t)n, &g,
                                           &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "unknown footer flags") && err.offset == (int64_t)n - 8);
    floe_puffin_footer_free(&f);
    free(bytes);
    free(wa);
    free(wb);
    free(a.v);
    free(b.v);
}

/* ---------------------------------------------------------------------------------------
 * v3 tables
 * ------------------------------------------------------------------------------------- */

/* A writable copy of the legacy table in dir/t; returns the --relocate argument. */
static void copy_legacy(const char *dir, char *relocate, size_t cap) {
    const char *src = harness_conformance(LEGACY);
    REQUIRE(sh(NULL, "cp -r '%s' '%s/t' && chmod -R u+w '%s/t'", src, dir, dir) == 0);
    snprintf(relocate, cap, "--relocate %s=%s/t", RECORDED, dir);
}

static char *scan(const char *dir, const char *relocate, const char *extra, int *rc) {
    char *out = NULL;
    *rc = sh(&out, "'%s' scan '%s/t' %s %s 2>&1", harness_floe_bin(), dir, relocate, extra);
    return out;
}

/* The bare blob the conformance table holds is refused, naming the file. */
TEST(test_v3_bare_blob_refused) {
    const char *dir = harness_tmpdir();
    char rel[8400];
    copy_legacy(dir, rel, sizeof rel);
    int rc;
    char *out = scan(dir, rel, "", &rc);
    CHECK(rc != 0);
    CHECK(out && strstr(out, "legacy-bare-deletion-vector.puffin") &&
          strstr(out, "not a Puffin file"));
    free(out);
    /* the snapshot before the delete reads all 3 rows */
    out = NULL;
    rc = sh(&out, "'%s' scan '%s/t/metadata/00001-844030fa-6b44-406b-ac35-494fe3c8e4a2."
                  "metadata.json' %s", harness_floe_bin(), dir, rel);
    CHECK_EQ_INT(rc, 0);
    CHECK(out && !strcmp(out, "{\"id\":1,\"source\":\"legacy\"}\n{\"id\":2,\"source\":"
                              "\"legacy\"}\n{\"id\":3,\"source\":\"legacy\"}\n"));
    free(out);
}

/* DVs written by roaring (npm) and by floe, applied by floe scan; counted by health;
 * the Puffin file is reachable for orphans and expire. */
TEST(test_v3_table_with_dv) {
    const char *tmp = harness_tmpdir();
    static const struct {
        const char *positions;
        const char *rows;
    } cases[] = {
        {"[0,2]", "{\"id\":2,\"source\":\"legacy\"}\n"},
        {"[1]", "{\"id\":1,\"source\":\"legacy\"}\n{\"id\":3,\"source\":\"legacy\"}\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int writer = (int)k; /* roaring (npm) wrote the first, floe the second */
        {
            char dir[4200];
            snprintf(dir, sizeof dir, "%s/c%zu_%d", tmp, k, writer);
            REQUIRE(sh(NULL, "mkdir -p '%s'", dir) == 0);
            char rel[8400];
            copy_legacy(dir, rel, sizeof rel);
            if (writer == 0) {
                REQUIRE(sh(NULL, "node %s/dv_oracle.mjs table '%s/t' '%s'",
                           harness_source_path("tests/js"), dir, cases[k].positions) == 0);
            } else {
                /* floe's Puffin file, then the manifest pointed at it */
                floe_dv_positions dv = {0};
                int64_t ps[3];
                for (const char *p = cases[k].positions + 1; *p && *p != ']';) {
                    ps[dv.n++] = strtoll(p, (char **)&p, 10);
                    if (*p == ',')
                        p++;
                }
                dv.pos = ps;
                char puf[4400], uri[4500];
                snprintf(puf, sizeof puf, "%s/floe.puffin", dir);
                snprintf(uri, sizeof uri, "file://%s", puf);
                const char *ref = RECORDED "/data/00000-0-cac6cfea-266f-44f8-9a3a-"
                                           "70dd8fb68014.parquet";
                int64_t off, len, size;
                floe_error err = {0};
                REQUIRE_OK(floe_puffin_write_dvs(NULL, uri, &ref, &dv, 1, &off, &len, &size,
                                                 &err), err);
                REQUIRE(sh(NULL,
                           "node %s/dv_oracle.mjs table '%s/t' '%s' '%s' %" PRId64 " %" PRId64,
                           harness_source_path("tests/js"), dir, cases[k].positions, puf, off,
                           len) == 0);
            }
            int rc;
            char *out = scan(dir, rel, "", &rc);
            CHECK_EQ_INT(rc, 0);
            if (!out || strcmp(out, cases[k].rows))
                harness_fail(__FILE__, __LINE__, "case %zu writer %d: rows %s", k, writer,
                             out ? out : "(none)");
            free(out);
        }
    }

    /* health counts the DV; orphans keeps the Puffin file; expire keeps it */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/c0_0", tmp);
    char *out = NULL;
    CHECK_EQ_INT(sh(&out, "'%s' health '%s/t' --json", harness_floe_bin(), dir), 0);
    CHECK(out && strstr(out, "\"deletion_vectors\":{\"count\":1,\"bytes\":44,\"records\":2}") &&
          strstr(out, "\"position\":{\"files\":0"));
    free(out);
    out = NULL;
    CHECK_EQ_INT(sh(&out, "'%s' orphans '%s/t' --older-than 1s --force --dry-run --list",
                    harness_floe_bin(), dir), 0);
    CHECK(out && !strstr(out, ".puffin"));
    free(out);
    /* expire (planned: the copy's recorded paths would need migrating, which floe does
     * not do for delete files) keeps the live Puffin file */
    out = NULL;
    CHECK_EQ_INT(sh(&out, "'%s' expire '%s/t' --older-than 1s --retain-last 1 --dry-run 2>&1",
                    harness_floe_bin(), dir), 0);
    CHECK(out && strstr(out, "would expire 1 snapshot") && !strstr(out, "puffin"));
    free(out);
}

/* Many vectors of several Puffin files read through floe_dv_cache, interleaved so that
 * files are evicted and opened again: each read equals floe_dv_read's, every blob of a
 * file is found by its offset, and a wrong offset is refused naming the file. */
TEST(test_dv_cache) {
    enum { FILES = FLOE_DV_CACHE_SLOTS + 2, PER = 7 };
    const char *dir = harness_tmpdir();
    char uris[FILES][4300];
    int64_t off[FILES][PER], len[FILES][PER];
    pset sets[PER];
    for (int k = 0; k < PER; k++)
        sets[k] = shape(k);
    floe_error err = {0};
    for (int f = 0; f < FILES; f++) {
        snprintf(uris[f], sizeof uris[f], "file://%s/cache%d.puffin", dir, f);
        floe_dv_positions dvs[PER];
        const char *paths[PER];
        char names[PER][64];
        for (int k = 0; k < PER; k++) {
            /* file f holds the shapes rotated by f: vector k of file f is shape (k + f) */
            const pset *ps = &sets[(k + f) % PER];
            dvs[k] = (floe_dv_positions){ps->v, ps->n};
            snprintf(names[k], sizeof names[k], "data/f%d-%d.parquet", f, k);
            paths[k] = names[k];
        }
        int64_t size;
        REQUIRE_OK(floe_puffin_write_dvs(NULL, uris[f], paths, dvs, PER, off[f], len[f], &size,
                                         &err), err);
    }
    floe_dv_cache cache = {0};
    unsigned reads = 0;
    for (int round = 0; round < 3; round++)
        for (int k = PER - 1; k >= 0; k--)
            for (int f = 0; f < FILES; f++) {
                int ff = round == 1 ? FILES - 1 - f : f; /* every order of files */
                floe_dv_positions got = {0};
                CHECK_OK(floe_dv_cache_read(&cache, NULL, uris[ff], off[ff][k], len[ff][k],
                                            NULL, INT64_MAX, &got, &err), err);
                CHECK(same(&got, &sets[(k + ff) % PER]));
                floe_free(got.pos);
                reads++;
            }
    CHECK_EQ_INT(reads, 3 * PER * FILES);
    floe_dv_positions got = {0};
    CHECK_EQ_INT(floe_dv_cache_read(&cache, NULL, uris[2], off[2][3] + 1, len[2][3], NULL,
                                    INT64_MAX, &got, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "lists no blob at byte") && strstr(err.msg, "cache2.puffin"));
    /* a file that is not there: an error, and the cache still serves the others */
    char missing[4300];
    snprintf(missing, sizeof missing, "file://%s/none.puffin", dir);
    CHECK(floe_dv_cache_read(&cache, NULL, missing, 4, 10, NULL, INT64_MAX, &got, &err) < 0);
    CHECK_OK(floe_dv_cache_read(&cache, NULL, uris[0], off[0][0], len[0][0], NULL, INT64_MAX,
                                &got, &err), err);
    CHECK(same(&got, &sets[0]));
    floe_free(got.pos);
    floe_dv_cache_free(&cache);
    for (int k = 0; k < PER; k++)
        free(sets[k].v);
}

/* ---------------------------------------------------------------------------------------
 * deletion vectors other writers made (tests/data/foreign-dv, ORIGIN.md there)
 * ------------------------------------------------------------------------------------- */

static const char *foreign(const char *rel) {
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", harness_source_path("tests/data/foreign-dv"), rel);
    return p;
}

/* Puffin files Iceberg Java wrote: every blob floe reads holds the positions Java was given
 * (the fixture's README) and that roaring (npm) reads from the same bytes. */
TEST(test_java_puffin_files) {
    static const struct {
        const char *file;
        int nblobs;
        const char *ref[2];
        const char *want[2]; /* JSON lists */
    } cases[] = {
        {"single-blob-dv.puffin", 1, {"s3://warehouse/db/table/data/00000-0-abc.parquet"},
         {"[1,3,5,7,9]"}},
        {"multi-blob-dv.puffin", 2,
         {"s3://warehouse/db/table/data/file-001.parquet",
          "s3://warehouse/db/table/data/file-002.parquet"},
         {"[0,100,200]", "[50,150]"}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char rel[256], path[4200], uri[4300];
        snprintf(rel, sizeof rel, "iceberg-java/%s", cases[c].file);
        snprintf(path, sizeof path, "%s", foreign(rel));
        snprintf(uri, sizeof uri, "file://%s", path);
        size_t n = 0;
        uint8_t *bytes = (uint8_t *)harness_read_file(path, &n);
        REQUIRE(bytes && n > FLOE_PUFFIN_TAIL);
        floe_error err = {0};
        int64_t start;
        REQUIRE_OK(floe_puffin_footer_start(bytes + n - FLOE_PUFFIN_TAIL, (int64_t)n, &start,
                                            &err), err);
        floe_puffin_footer f = {0};
        REQUIRE_OK(floe_puffin_footer_decode(bytes + start, n - (size_t)start, (int64_t)n, &f,
                                             &err), err);
        CHECK_EQ_INT(f.nblobs, cases[c].nblobs);
        char *oracle = NULL;
        REQUIRE(sh(&oracle, "node %s/dv_oracle.mjs read %s", harness_source_path("tests/js"),
                   path) == 0);
        for (size_t b = 0; b < f.nblobs && b < 2; b++) {
            const floe_puffin_blob *bl = &f.blobs[b];
            CHECK_EQ_STR(bl->type, "deletion-vector-v1");
            CHECK_EQ_STR(bl->referenced_data_file, cases[c].ref[b]);
            CHECK_EQ_INT(bl->snapshot_id, -1);
            CHECK_EQ_INT(bl->sequence_number, -1);
            floe_dv_positions got = {0};
            CHECK_OK(floe_dv_read(NULL, uri, bl->offset, bl->length, cases[c].ref[b],
                                  INT64_MAX, &got, &err), err);
            char *l = json_list(got.pos, got.n);
            CHECK_EQ_STR(l, cases[c].want[b]);
            if (bl->has_cardinality)
                CHECK_EQ_INT(bl->cardinality, (int64_t)got.n);
            char line[512];
            snprintf(line, sizeof line, "{\"offset\":%" PRId64 ",\"length\":%" PRId64
                     ",\"referenced\":\"%s\",\"positions\":%s}\n", bl->offset, bl->length,
                     cases[c].ref[b], l);
            CHECK(oracle && strstr(oracle, line));
            free(l);
            floe_free(got.pos);
        }
        free(oracle);
        floe_puffin_footer_free(&f);
        free(bytes);
    }
}

/* Iceberg Java's own test bitmaps: deletion-vector-v1 blobs (its position-index files)
 * and bare portable 64-bit bitmaps (its 64map*.bin), each read by floe as roaring (npm)
 * reads its bitmap. */
TEST(test_java_bitmaps) {
    static const char *blobs[] = {"small-alternating-values-position-index.bin",
                                  "small-and-large-values-position-index.bin",
                                  "all-container-types-position-index.bin",
                                  "empty-position-index.bin"};
    static const char *bare[] = {"64mapempty.bin", "64map32bitvals.bin",
                                 "64mapspreadvals.bin"};
    const char *dir = harness_tmpdir();
    size_t nb = sizeof blobs / sizeof blobs[0], nbare = sizeof bare / sizeof bare[0];
    char files[8 * 4300] = "";
    floe_dv_positions got[8] = {{0}};
    for (size_t i = 0; i < nb + nbare; i++) {
        char rel[256], path[4300];
        snprintf(rel, sizeof rel, "iceberg-java/%s", i < nb ? blobs[i] : bare[i - nb]);
        size_t n = 0;
        uint8_t *bytes = (uint8_t *)harness_read_file(foreign(rel), &n);
        REQUIRE(bytes);
        floe_error err = {0};
        if (i < nb) {
            CHECK_OK(floe_dv_blob_decode(bytes, n, 0, INT64_MAX, FLOE_DV_MAX_CARD, &got[i],
                                         &err), err);
            /* the oracle reads the bitmap between the blob's length + magic and its CRC */
            REQUIRE(n >= 12);
            snprintf(path, sizeof path, "%s/blob%zu.bin", dir, i);
            REQUIRE(harness_write_file(path, bytes + 8, n - 12) == 0);
        } else {
            CHECK_OK(floe_roaring64_decode(bytes, n, 0, INT64_MAX, FLOE_DV_MAX_CARD, &got[i],
                                           &err), err);
            snprintf(path, sizeof path, "%s", foreign(rel));
        }
        strcat(files, " ");
        strcat(files, path);
        free(bytes);
    }
    CHECK_EQ_INT(got[0].n, 5); /* 1, 3, 5, 7, 9 */
    CHECK_EQ_INT(got[3].n, 0);
    CHECK_EQ_INT(got[nb].n, 0);
    CHECK_EQ_INT(got[nb + 1].n, 10);
    CHECK(got[nb + 2].n > 0 && got[nb + 2].pos[got[nb + 2].n - 1] > ((int64_t)1 << 32));
    char *out = NULL;
    REQUIRE(sh(&out, "node %s/dv_oracle.mjs bitmap-read%s", harness_source_path("tests/js"),
               files) == 0);
    char *line = out;
    for (size_t i = 0; i < nb + nbare; i++) {
        char *nl = line ? strchr(line, '\n') : NULL;
        if (nl)
            *nl = 0;
        char *mine = json_list(got[i].pos, got[i].n);
        if (!line || strcmp(line, mine))
            harness_fail(__FILE__, __LINE__, "%s: floe read %zu positions (%.80s), roaring "
                         "%.80s", i < nb ? blobs[i] : bare[i - nb], got[i].n, mine,
                         line ? line : "(nothing)");
        free(mine);
        floe_free(got[i].pos);
        line = nl ? nl + 1 : NULL;
    }
    free(out);

    /* keys of 2^31 and above are positions past INT64_MAX: Iceberg Java refuses this
     * example of the Roaring format ("Invalid unsigned key"), so does floe */
    size_t n = 0;
    uint8_t *bytes = (uint8_t *)harness_read_file(foreign("iceberg-java/64maphighvals.bin"),
                                                  &n);
    REQUIRE(bytes);
    floe_dv_positions high = {0};
    floe_error err = {0};
    CHECK_EQ_INT(floe_roaring64_decode(bytes, n, 0, INT64_MAX, FLOE_DV_MAX_CARD, &high, &err),
                 FLOE_ECORRUPT);
    CHECK(err.msg[0] != 0);
    floe_free(high.pos);
    free(bytes);
}

int main(void) {
    RUN(test_roaring_roundtrip);
    RUN(test_roaring_npm_oracle);
    RUN(test_dv_blob_corrupt);
    RUN(test_puffin_files);
    RUN(test_dv_cache);
    RUN(test_java_puffin_files);
    RUN(test_java_bitmaps);
    RUN(test_v3_bare_blob_refused);
    RUN(test_v3_table_with_dv);
    return harness_finish();
}
