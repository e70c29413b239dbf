/* test_pq_interop.c - files floe writes, read back by independent readers.
 *
 * Rows of every Iceberg type (nulls, empty strings and lists, unicode, extreme values,
 * NaN and infinities, nested lists/maps/structs) are generated twice from one random
 * stream: as NDJSON text (the input form tests/js/canon_ndjson.mjs canonicalises) and as
 * column buffers (floe_colbuf_push_*, shredded here by a small recursive shredder). The
 * buffers are written with every codec; DuckDB, hyparquet and parquet-wasm
 * (tests/js/read_parquet.mjs) must each print exactly the canonical rows, and DuckDB's
 * parquet_metadata / parquet_schema (tests/js/duckdb_meta.mjs) must show the field ids,
 * codecs, encodings and statistics we meant to write. */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "floe/column.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "harness.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"l\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":3,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":6,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":7,\"name\":\"dec18\",\"required\":false,\"type\":\"decimal(18, 3)\"},"
    "{\"id\":8,\"name\":\"dec38\",\"required\":false,\"type\":\"decimal(38, 10)\"},"
    "{\"id\":9,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":10,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":11,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":12,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":13,\"name\":\"tsns\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":14,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":15,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":16,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":17,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[4]\"},"
    "{\"id\":18,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "  {\"id\":40,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "  {\"id\":41,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\","
    "   \"element-id\":42,\"element\":\"string\",\"element-required\":false}}]}},"
    "{\"id\":19,\"name\":\"li\",\"required\":false,\"type\":{\"type\":\"list\","
    " \"element-id\":43,\"element\":\"long\",\"element-required\":false}},"
    "{\"id\":20,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":44,"
    " \"key\":\"string\",\"value-id\":45,\"value\":\"double\",\"value-required\":false}},"
    "{\"id\":21,\"name\":\"mi\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":46,"
    " \"key\":\"long\",\"value-id\":47,\"value\":\"string\",\"value-required\":false}},"
    "{\"id\":22,\"name\":\"pts\",\"required\":false,\"type\":{\"type\":\"list\","
    " \"element-id\":48,\"element-required\":false,\"element\":{\"type\":\"struct\",\"fields\":["
    "  {\"id\":49,\"name\":\"x\",\"required\":false,\"type\":\"double\"},"
    "  {\"id\":50,\"name\":\"y\",\"required\":false,\"type\":\"string\"}]}}},"
    "{\"id\":23,\"name\":\"ll\",\"required\":false,\"type\":{\"type\":\"list\","
    " \"element-id\":51,\"element-required\":true,\"element\":{\"type\":\"list\","
    "  \"element-id\":52,\"element\":\"int\",\"element-required\":false}}},"
    "{\"id\":24,\"name\":\"rs\",\"required\":true,\"type\":\"string\"}"
    "]}";

typedef struct gen {
    uint64_t rng;
    floe_buf json;
    floe_batch *b;
    int64_t row;
    int fail;
} gen;

static uint64_t rnd(gen *g) { return harness_xorshift64(&g->rng); }

static void js(gen *g, const char *s) { floe_buf_append(&g->json, s, strlen(s)); }

static void jsf(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jsf(gen *g, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    js(g, tmp);
}

static void js_string(gen *g, const char *s, size_t n) {
    js(g, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            jsf(g, "\\%c", c);
        else if (c < 0x20)
            jsf(g, "\\u%04x", c);
        else
            floe_buf_append_byte(&g->json, c);
    }
    js(g, "\"");
}

static void js_base64(gen *g, const uint8_t *p, size_t n) {
    static const char *al = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    js(g, "\"");
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        char q[5] = {al[(v >> 18) & 63], al[(v >> 12) & 63], i + 1 < n ? al[(v >> 6) & 63] : '=',
                     i + 2 < n ? al[v & 63] : '=', 0};
        js(g, q);
    }
    js(g, "\"");
}

static void push_val(gen *g, const floe_field *f, int16_t rep, const void *p, size_t n) {
    if (floe_colbuf_push_value(&g->b->cols[f->leaf], rep, p, n) != 0)
        g->fail = 1;
}

static void push_nulls(gen *g, const floe_field *f, int16_t def, int16_t rep) {
    if (!floe_type_is_nested(f->type)) {
        if (floe_colbuf_push_null(&g->b->cols[f->leaf], def, rep) != 0)
            g->fail = 1;
        return;
    }
    for (size_t i = 0; i < f->nchildren; i++)
        push_nulls(g, &f->children[i], def, rep);
}

static const char *STRINGS[] = {
    "", "a", "plain", "\xC3\xA9t\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80",
    "quote \" backslash \\ tab \t nl \n", "ctl \x01 del \x7F", "Z", "zzz"};

/* decimal: unscaled value as text with the point at scale */
static void js_decimal(gen *g, __int128 v, int scale) {
    char digits[64];
    int nd = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        digits[nd++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (nd <= scale)
        digits[nd++] = '0';
    char out[80];
    int k = 0;
    if (neg)
        out[k++] = '-';
    for (int i = nd - 1; i >= 0; i--) {
        out[k++] = digits[i];
        if (i == scale && scale > 0)
            out[k++] = '.';
    }
    out[k] = 0;
    js(g, "\"");
    js(g, out);
    js(g, "\"");
}

static __int128 pow10_128(int p) {
    __int128 r = 1;
    for (int i = 0; i < p; i++)
        r *= 10;
    return r;
}

static void gen_prim(gen *g, const floe_field *f, int16_t rep, bool top_l) {
    uint64_t r = rnd(g);
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: {
        uint8_t v = r & 1;
        js(g, v ? "true" : "false");
        push_val(g, f, rep, &v, 1);
        break;
    }
    case FLOE_TYPE_INT: {
        int32_t v = r % 10 == 0 ? INT32_MIN : r % 10 == 1 ? INT32_MAX : (int32_t)(r % 2001) - 1000;
        jsf(g, "%d", v);
        push_val(g, f, rep, &v, 4);
        break;
    }
    case FLOE_TYPE_LONG: {
        int64_t v;
        if (top_l)
            v = g->row * 1000 + (int64_t)(r % 7) - 500000; /* sorted: DELTA */
        else
            v = r % 10 == 0 ? INT64_MIN : r % 10 == 1 ? INT64_MAX : (int64_t)(r >> 1) - (int64_t)(r >> 2);
        jsf(g, "%lld", (long long)v);
        push_val(g, f, rep, &v, 8);
        break;
    }
    case FLOE_TYPE_FLOAT: {
        float v;
        switch (r % 12) {
        case 0: v = NAN; js(g, "\"NaN\""); break;
        case 1: v = INFINITY; js(g, "\"Infinity\""); break;
        case 2: v = -INFINITY; js(g, "\"-Infinity\""); break;
        case 3: v = -0.0f; js(g, "-0.0"); break;
        case 4: v = FLT_MAX; js(g, "3.4028234663852886e38"); break;
        default: {
            v = (float)((int64_t)((r >> 8) % 2000001) - 1000000) / 64.0f;
            char t[64];
            snprintf(t, sizeof t, "%.9g", (double)v);
            v = strtof(t, NULL);
            js(g, t);
        }
        }
        push_val(g, f, rep, &v, 4);
        break;
    }
    case FLOE_TYPE_DOUBLE: {
        double v;
        switch (r % 12) {
        case 0: v = NAN; js(g, "\"NaN\""); break;
        case 1: v = INFINITY; js(g, "\"Infinity\""); break;
        case 2: v = -0.0; js(g, "-0.0"); break;
        case 3: v = 5e-324; js(g, "5e-324"); break;
        case 4: v = -1e300; js(g, "-1e300"); break;
        default: {
            char t[64];
            snprintf(t, sizeof t, "%.17g", (double)(int64_t)(r >> 11) / 1024.0 - 1e12);
            v = strtod(t, NULL);
            js(g, t);
        }
        }
        push_val(g, f, rep, &v, 8);
        break;
    }
    case FLOE_TYPE_DECIMAL: {
        __int128 lim = pow10_128(f->precision) - 1;
        __int128 v;
        if (r % 9 == 0)
            v = lim;
        else if (r % 9 == 1)
            v = -lim;
        else {
            unsigned __int128 u = ((unsigned __int128)rnd(g) << 64) | rnd(g);
            v = (__int128)(u % ((unsigned __int128)lim + 1));
            if (r & 256)
                v = -v;
        }
        js_decimal(g, v, f->scale);
        if (f->phys == FLOE_PHYS_INT32) {
            int32_t x = (int32_t)v;
            push_val(g, f, rep, &x, 4);
        } else if (f->phys == FLOE_PHYS_INT64) {
            int64_t x = (int64_t)v;
            push_val(g, f, rep, &x, 8);
        } else {
            uint8_t be[32];
            int w = f->type_length;
            unsigned __int128 u = (unsigned __int128)v;
            for (int k = w - 1; k >= 0; k--) {
                be[k] = (uint8_t)u;
                u = (unsigned __int128)((__int128)u >> 8); /* arithmetic: sign fill */
            }
            push_val(g, f, rep, be, (size_t)w);
        }
        break;
    }
    case FLOE_TYPE_DATE: {
        int32_t v = r % 10 == 0 ? -719162 : r % 10 == 1 ? 2932896 : (int32_t)(r % 40000) - 10000;
        jsf(g, "%d", v);
        push_val(g, f, rep, &v, 4);
        break;
    }
    case FLOE_TYPE_TIME: {
        int64_t v = r % 10 == 0 ? 86399999999LL : (int64_t)(r % 86400000000ULL);
        jsf(g, "%lld", (long long)v);
        push_val(g, f, rep, &v, 8);
        break;
    }
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ: {
        const int64_t lo = -62135596800000000LL, hi = 253402300799999999LL;
        int64_t v = r % 10 == 0 ? lo : r % 10 == 1 ? hi
                                       : lo + (int64_t)((r >> 1) % (uint64_t)(hi - lo));
        jsf(g, "%lld", (long long)v);
        push_val(g, f, rep, &v, 8);
        break;
    }
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        int64_t v = (int64_t)(r % 9000000000000000000ULL) * ((r & 1) ? -1 : 1);
        jsf(g, "%lld", (long long)v);
        push_val(g, f, rep, &v, 8);
        break;
    }
    case FLOE_TYPE_STRING: {
        char buf[256];
        const char *s;
        size_t n;
        if (f->required) { /* rs: long unique strings, truncated statistics */
            n = (size_t)snprintf(buf, sizeof buf,
                                 "row-%06lld-%s-0123456789012345678901234567890123456789",
                                 (long long)g->row, STRINGS[r % 10]);
            s = buf;
        } else {
            s = STRINGS[r % 10];
            n = strlen(s);
        }
        js_string(g, s, n);
        push_val(g, f, rep, s, n);
        break;
    }
    case FLOE_TYPE_UUID: {
        uint8_t u[16];
        for (int k = 0; k < 16; k++)
            u[k] = (uint8_t)(rnd(g) >> 24);
        if (r % 10 == 0)
            memset(u, 0xFF, 16);
        jsf(g, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", u[0],
            u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
            u[14], u[15]);
        push_val(g, f, rep, u, 16);
        break;
    }
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED: {
        uint8_t bb[32];
        size_t n = f->type == FLOE_TYPE_FIXED ? (size_t)f->length : r % 20;
        for (size_t k = 0; k < n; k++)
            bb[k] = (uint8_t)(rnd(g) >> 32);
        if (r % 7 == 0)
            memset(bb, 0xFF, n);
        js_base64(g, bb, n);
        push_val(g, f, rep, bb, n);
        break;
    }
    default:
        g->fail = 1;
    }
}

static void gen_field(gen *g, const floe_field *f, int16_t rep, bool top_l) {
    if (!f->required && rnd(g) % 8 == 0) {
        js(g, "null");
        push_nulls(g, f, (int16_t)(f->def_level - 1), rep);
        return;
    }
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        js(g, "{");
        for (size_t i = 0; i < f->nchildren; i++) {
            jsf(g, "%s\"%s\":", i ? "," : "", f->children[i].name);
            gen_field(g, &f->children[i], rep, false);
        }
        js(g, "}");
        break;
    case FLOE_TYPE_LIST: {
        const floe_field *e = &f->children[0];
        int n = (int)(rnd(g) % 4);
        js(g, "[");
        if (n == 0)
            push_nulls(g, e, f->def_level, rep);
        for (int i = 0; i < n; i++) {
            if (i)
                js(g, ",");
            gen_field(g, e, i == 0 ? rep : e->rep_level, false);
        }
        js(g, "]");
        break;
    }
    case FLOE_TYPE_MAP: {
        const floe_field *k = &f->children[0], *v = &f->children[1];
        int n = (int)(rnd(g) % 3);
        js(g, "{");
        if (n == 0) {
            push_nulls(g, k, f->def_level, rep);
            push_nulls(g, v, f->def_level, rep);
        }
        for (int i = 0; i < n; i++) {
            int16_t r = i == 0 ? rep : k->rep_level;
            if (i)
                js(g, ",");
            if (k->type == FLOE_TYPE_STRING) {
                char key[32];
                int kl = snprintf(key, sizeof key, "k%d%s", i, i == 1 ? "\xC3\xA9" : "");
                js_string(g, key, (size_t)kl);
                push_val(g, k, r, key, (size_t)kl);
            } else {
                int64_t key = i == 0 ? -2 : i * 1000 + (int64_t)(rnd(g) % 100);
                jsf(g, "\"%lld\"", (long long)key);
                push_val(g, k, r, &key, 8);
            }
            js(g, ":");
            gen_field(g, v, r, false);
        }
        js(g, "}");
        break;
    }
    default:
        gen_prim(g, f, rep, top_l);
    }
}

static void gen_rows(gen *g, const floe_schema *s, int n) {
    for (int r = 0; r < n; r++) {
        js(g, "{");
        for (size_t i = 0; i < s->root.nchildren; i++) {
            const floe_field *f = &s->root.children[i];
            jsf(g, "%s\"%s\":", i ? "," : "", f->name);
            gen_field(g, f, 0, i == 0);
        }
        js(g, "}\n");
        g->row++;
        g->b->nrows++;
    }
}


static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out = NULL;
    int rc = harness_run_cmd(cmd, &out);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n%s\n", rc, cmd, out ? out : "");
    free(out);
    return rc;
}

static json_t *meta_of(const char *file) {
    char cmd[8400]; /* the tests/js path and file are each under 4 KiB */
    snprintf(cmd, sizeof cmd, "node %s/duckdb_meta.mjs %s", harness_source_path("tests/js"), file);
    char *out = NULL;
    int rc = harness_run_cmd(cmd, &out);
    json_t *j = rc == 0 && out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    return j;
}

static const json_t *meta_column(const json_t *meta, int rg, const char *path) {
    const json_t *rows = json_object_get(meta, "metadata");
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        if (json_integer_value(json_object_get(r, "row_group_id")) == rg &&
            !strcmp(json_string_value(json_object_get(r, "path_in_schema")), path))
            return r;
    }
    return NULL;
}

static const char *meta_str(const json_t *row, const char *key) {
    const char *s = row ? json_string_value(json_object_get(row, key)) : NULL;
    return s ? s : "";
}

TEST(test_interop_all_types_all_codecs) {
    floe_error err;
    floe_error_clear(&err);
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &s, &err), err);
    const char *dir = harness_tmpdir();
    char schema_path[4096], rows_path[4096], expect_path[4096];
    snprintf(schema_path, sizeof schema_path, "%s/schema.json", dir);
    snprintf(rows_path, sizeof rows_path, "%s/rows.ndjson", dir);
    snprintf(expect_path, sizeof expect_path, "%s/expect.ndjson", dir);
    REQUIRE(harness_write_file(schema_path, SCHEMA, strlen(SCHEMA)) == 0);

    /* six batches of 500 rows: row groups are cut between batches */
    enum { NBATCH = 6, BATCH_ROWS = 500 };
    floe_batch bs[NBATCH];
    gen g;
    memset(&g, 0, sizeof g);
    g.rng = 0x9E3779B97F4A7C15ULL;
    floe_buf_init(&g.json, 0);
    const int nrows = NBATCH * BATCH_ROWS;
    for (int k = 0; k < NBATCH; k++) {
        REQUIRE(floe_batch_init(&bs[k], s) == 0);
        g.b = &bs[k];
        gen_rows(&g, s, BATCH_ROWS);
    }
    REQUIRE(!g.fail);
    REQUIRE(harness_write_file(rows_path, g.json.data, g.json.len) == 0);
    REQUIRE(sh("node %s/canon_ndjson.mjs --schema %s %s > %s", harness_source_path("tests/js"),
               schema_path, rows_path, expect_path) == 0);

    static const struct {
        floe_codec codec;
        const char *name, *duck;
    } codecs[] = {
        {FLOE_CODEC_SNAPPY, "snappy", "SNAPPY"},      {FLOE_CODEC_ZSTD, "zstd", "ZSTD"},
        {FLOE_CODEC_GZIP, "gzip", "GZIP"},            {FLOE_CODEC_LZ4_RAW, "lz4_raw", "LZ4_RAW"},
        {FLOE_CODEC_UNCOMPRESSED, "none", "UNCOMPRESSED"},
    };
    for (size_t k = 0; k < sizeof codecs / sizeof codecs[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/data-%s.parquet", dir, codecs[k].name);
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.codec = codecs[k].codec;
        o.output.fsync = false;
        o.page_size = 8192;
        o.page_row_limit = 700;
        o.row_group_size = 100 * 1024;
        o.stats_truncate_length = 16;
        floe_pq_kv kv = {"iceberg.schema", SCHEMA};
        o.kv = &kv;
        o.nkv = 1;
        if (codecs[k].codec == FLOE_CODEC_UNCOMPRESSED)
            o.dictionary = false; /* one file with PLAIN/DELTA only */
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        for (int bi = 0; bi < NBATCH; bi++)
            REQUIRE_OK(floe_pq_writer_write_batch(w, &bs[bi], &err), err);
        floe_pq_file_info fi;
        REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
        CHECK_EQ_INT(fi.record_count, nrows);

        static const char *readers[] = {"duckdb", "hyparquet", "parquet-wasm"};
        for (size_t r = 0; r < 3; r++) {
            char got[4200];
            snprintf(got, sizeof got, "%s/got-%s-%s.ndjson", dir, codecs[k].name, readers[r]);
            int rc = sh("node %s/read_parquet.mjs --reader %s --schema %s %s > %s && "
                        "node %s/compare.mjs %s %s",
                        harness_source_path("tests/js"), readers[r], schema_path, path, got,
                        harness_source_path("tests/js"), expect_path, got);
            if (rc != 0)
                harness_fail(__FILE__, __LINE__, "%s reading %s disagrees", readers[r], path);
        }

        json_t *meta = meta_of(path);
        REQUIRE(meta != NULL);
        const json_t *file0 = json_array_get(json_object_get(meta, "file"), 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(file0, "num_rows")), nrows);
        CHECK(json_integer_value(json_object_get(file0, "num_row_groups")) > 1);
        CHECK_EQ_INT(json_integer_value(json_object_get(file0, "num_row_groups")),
                     (long long)fi.nsplits);
        /* every leaf's field id in parquet_schema */
        const json_t *srows = json_object_get(meta, "schema");
        for (size_t li = 0; li < s->nleaves; li++) {
            const floe_field *leaf = s->leaves[li];
            bool found = false;
            size_t i;
            const json_t *r;
            json_array_foreach(srows, i, r) {
                if (!strcmp(meta_str(r, "name"), leaf->name) &&
                    json_integer_value(json_object_get(r, "field_id")) == leaf->id)
                    found = true;
            }
            if (!found)
                harness_fail(__FILE__, __LINE__, "field id %d (%s) missing", leaf->id, leaf->name);
        }
        const json_t *cl = meta_column(meta, 0, "l");
        REQUIRE(cl != NULL);
        CHECK_EQ_STR(meta_str(cl, "compression"), codecs[k].duck);
        CHECK(strstr(meta_str(cl, "encodings"), "DELTA_BINARY_PACKED") != NULL);
        const json_t *cs = meta_column(meta, 0, "s");
        if (codecs[k].codec == FLOE_CODEC_UNCOMPRESSED)
            CHECK(strstr(meta_str(cs, "encodings"), "DICTIONARY") == NULL);
        else
            CHECK(strstr(meta_str(cs, "encodings"), "RLE_DICTIONARY") != NULL);
        /* rs: long strings, bounds truncated to 16 bytes and marked inexact */
        const json_t *crs = meta_column(meta, 0, "rs");
        CHECK_EQ_INT(strlen(meta_str(crs, "stats_min_value")), 16);
        CHECK(json_is_false(json_object_get(crs, "max_is_exact")));
        CHECK_EQ_STR(meta_str(crs, "stats_min_value"), "row-000000-Z-012");
        /* l: min of the first row group is row 0's value */
        long long lmin = json_integer_value(json_object_get(cl, "stats_min_value"));
        if (json_is_string(json_object_get(cl, "stats_min_value")))
            lmin = atoll(meta_str(cl, "stats_min_value"));
        CHECK(lmin >= -500000 && lmin < -500000 + 7);
        /* key-value metadata carries the Iceberg schema */
        const json_t *kvs = json_object_get(meta, "kv");
        bool kv_ok = false;
        size_t i;
        const json_t *r;
        json_array_foreach(kvs, i, r) {
            if (!strcmp(meta_str(r, "key"), "iceberg.schema") &&
                !strcmp(meta_str(r, "value"), SCHEMA))
                kv_ok = true;
        }
        CHECK(kv_ok);
        json_decref(meta);
        floe_pq_file_info_free(&fi);
    }
    floe_buf_free(&g.json);
    for (int k = 0; k < NBATCH; k++)
        floe_batch_free(&bs[k]);
    floe_schema_free(s);
}

int main(void) {
    RUN(test_interop_all_types_all_codecs);
    return harness_finish();
}
