/* test_shred.c - the NDJSON shredder: levels, coercions, rejections, rollback, OOM. */
#include "floe/json.h"
#include "harness.h"
#include "common/testing.h"
#include "schema/column_scatter.h"

#include <math.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct rejected {
    int64_t line, offset, column;
    floe_reject_reason reason;
    char msg[512];
    char record[256];
} rejected;

typedef struct collector {
    rejected r[64];
    size_t n;
} collector;

static int collect(void *ctx, const floe_reject *r) {
    collector *c = ctx;
    if (c->n < 64) {
        rejected *x = &c->r[c->n];
        x->line = r->line;
        x->offset = r->offset;
        x->column = r->column;
        x->reason = r->reason;
        snprintf(x->msg, sizeof x->msg, "%s", r->message);
        snprintf(x->record, sizeof x->record, "%.*s", (int)r->record_len, (const char *)r->record);
    }
    c->n++;
    return 0;
}

typedef struct fixture {
    floe_schema *schema;
    floe_shredder *sh;
    floe_batch batch;
    collector rej;
} fixture;

#define FIELD(id, name, req, type)                                                           \
    "{\"id\":" #id ",\"name\":\"" name "\",\"required\":" #req ",\"type\":" type "}"
#define SCHEMA(...) "{\"type\":\"struct\",\"fields\":[" __VA_ARGS__ "]}"

static bool fx_open(fixture *fx, const char *schema_json, const floe_shred_options *opt) {
    floe_error err;
    memset(fx, 0, sizeof *fx);
    if (floe_schema_parse(schema_json, strlen(schema_json), &fx->schema, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
        return false;
    }
    if (floe_shredder_new(fx->schema, opt, &fx->sh, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "shredder: %s", err.msg);
        return false;
    }
    if (floe_batch_init(&fx->batch, fx->schema) < 0)
        return false;
    return true;
}

static void fx_close(fixture *fx) {
    floe_batch_free(&fx->batch);
    floe_shredder_free(fx->sh);
    floe_schema_free(fx->schema);
}

static int fx_feed(fixture *fx, const char *text) {
    floe_error err;
    int rc = floe_shredder_feed(fx->sh, (const uint8_t *)text, strlen(text), "t.ndjson", 1, 0,
                                &fx->batch, collect, &fx->rej, &err);
    if (rc < 0)
        harness_fail(__FILE__, __LINE__, "feed: %s", err.msg);
    return rc;
}

static floe_colbuf *col(fixture *fx, const char *path) {
    const floe_field *f = floe_schema_find_path(fx->schema, path);
    if (!f || f->leaf < 0)
        return NULL;
    return &fx->batch.cols[f->leaf];
}

/* Compare a column's levels with "def:rep def:rep ..." */
static void check_levels(int line, const floe_colbuf *c, const char *want) {
    char got[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < c->nlevels && len < sizeof got - 16; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%d:%d", i ? " " : "",
                                c->max_def ? c->def[i] : 0, c->max_rep ? c->rep[i] : 0);
    if (strcmp(got, want) != 0)
        harness_fail(__FILE__, line, "levels \"%s\", want \"%s\"", got, want);
}
#define CHECK_LEVELS(c, want) check_levels(__LINE__, (c), (want))

static int64_t i64_at(const floe_colbuf *c, size_t i) {
    int64_t v;
    memcpy(&v, c->values + i * 8, 8);
    return v;
}
static int32_t i32_at(const floe_colbuf *c, size_t i) {
    int32_t v;
    memcpy(&v, c->values + i * 4, 4);
    return v;
}
static double f64_at(const floe_colbuf *c, size_t i) {
    double v;
    memcpy(&v, c->values + i * 8, 8);
    return v;
}
static void str_at(const floe_colbuf *c, size_t i, char *buf, size_t n) {
    size_t len = c->offsets[i + 1] - c->offsets[i];
    snprintf(buf, n, "%.*s", (int)len, (const char *)c->values + c->offsets[i]);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static const char *FLAT = SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "name", false, "\"string\"")
                                     "," FIELD(3, "score", false, "\"double\"") "," FIELD(
                                         4, "ok", false, "\"boolean\"") "," FIELD(5, "n", false, "\"int\""));

TEST(test_flat) {
    fixture fx;
    REQUIRE(fx_open(&fx, FLAT, NULL));
    REQUIRE(fx_feed(&fx, "{\"id\":1,\"name\":\"a\",\"score\":1.5,\"ok\":true,\"n\":-3}\n"
                         "{\"n\":7, \"ok\" : false , \"id\": 9223372036854775807}\r\n"
                         "\n   \t\n"
                         "{\"id\":-9223372036854775808,\"name\":null,\"score\":2e-3}") == 0);
    CHECK_EQ_INT(fx.batch.nrows, 3);
    CHECK_EQ_INT(fx.rej.n, 0);
    floe_colbuf *id = col(&fx, "id"), *name = col(&fx, "name"), *score = col(&fx, "score"),
                *ok = col(&fx, "ok"), *n = col(&fx, "n");
    CHECK_EQ_INT(id->nvalues, 3);
    CHECK_EQ_INT(i64_at(id, 0), 1);
    CHECK_EQ_INT(i64_at(id, 1), INT64_MAX);
    CHECK_EQ_INT(i64_at(id, 2), INT64_MIN);
    CHECK_LEVELS(name, "1:0 0:0 0:0");
    char buf[64];
    str_at(name, 0, buf, sizeof buf);
    CHECK_EQ_STR(buf, "a");
    CHECK_LEVELS(score, "1:0 0:0 1:0");
    CHECK(f64_at(score, 0) == 1.5);
    CHECK(f64_at(score, 1) == 2e-3);
    CHECK_LEVELS(ok, "1:0 1:0 0:0");
    CHECK(ok->values[0] == 1 && ok->values[1] == 0);
    CHECK_EQ_INT(i32_at(n, 0), -3);
    CHECK_EQ_INT(i32_at(n, 1), 7);
    floe_shred_stats st;
    floe_shredder_stats(fx.sh, &st);
    CHECK_EQ_U64(st.records_accepted, 3);
    CHECK_EQ_U64(st.blank_lines, 2);
    fx_close(&fx);
}

/* Sparse records: keys a few or many fields apart, in the schema's order or not, a key
 * that is another's prefix or whose first 8 bytes are another's name, a name longer than
 * 15 bytes (never matched by its quoted words), an escaped key, a struct with two leaves
 * absent, and a repeated key after a skip: every field lands in its own column, absent
 * ones are null. Checked against what each record holds, over 3,000 random records. */
#define SPARSE_N 40
TEST(test_sparse_keys) {
    char schema[8192], name[SPARSE_N][40];
    size_t len = (size_t)snprintf(schema, sizeof schema, "{\"type\":\"struct\",\"fields\":[");
    for (int i = 0; i < SPARSE_N; i++) {
        if (i == 7)
            snprintf(name[i], sizeof name[i], "f06"); /* a prefix of field 6's name */
        else if (i == 9)
            snprintf(name[i], sizeof name[i], "f08_long_x"); /* field 8's name, longer */
        else if (i == 11)
            snprintf(name[i], sizeof name[i], "a_rather_long_field_%02d", i);
        else
            snprintf(name[i], sizeof name[i], "f%02d_long", i);
        len += (size_t)snprintf(schema + len, sizeof schema - len,
                                "%s{\"id\":%d,\"name\":\"%s\",\"required\":false,\"type\":\"long\"}",
                                i ? "," : "", i + 1, name[i]);
    }
    snprintf(schema + len, sizeof schema - len,
             ",{\"id\":100,\"name\":\"s\",\"required\":false,\"type\":{\"type\":\"struct\","
             "\"fields\":[{\"id\":101,\"name\":\"x\",\"required\":false,\"type\":\"long\"},"
             "{\"id\":102,\"name\":\"y\",\"required\":false,\"type\":\"long\"}]}}]}");
    fixture fx;
    REQUIRE(fx_open(&fx, schema, NULL));
    uint64_t seed = 0x5eed;
    enum { NREC = 3000 };
    static bool has[NREC][SPARSE_N + 1];
    static int64_t val[NREC][SPARSE_N + 1];
    floe_buf text;
    floe_buf_init(&text, 0);
    for (int r = 0; r < NREC; r++) {
        int order[SPARSE_N + 1], n = 0;
        int density = 1 + (int)(harness_xorshift64(&seed) % 8); /* 1 in 1..8 fields present */
        for (int i = 0; i <= SPARSE_N; i++) {
            has[r][i] = harness_xorshift64(&seed) % (uint64_t)density == 0;
            val[r][i] = (int64_t)(harness_xorshift64(&seed) % 2000000) - 1000000;
            if (has[r][i])
                order[n++] = i;
        }
        if (r % 5 == 4) /* some records out of the schema's order */
            for (int i = n - 1; i > 0; i--) {
                int j = (int)(harness_xorshift64(&seed) % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        char line[4096];
        size_t l = (size_t)snprintf(line, sizeof line, "{");
        for (int k = 0; k < n; k++) {
            int i = order[k];
            const char *sep = k ? (r % 7 == 3 ? " , " : ",") : "";
            if (i == SPARSE_N)
                l += (size_t)snprintf(line + l, sizeof line - l, "%s\"s\":{\"x\":%lld,\"y\":1}",
                                      sep, (long long)val[r][i]);
            else if (i == 3 && r % 3 == 0) /* "f03_long" with its 'f' escaped */
                l += (size_t)snprintf(line + l, sizeof line - l, "%s\"\\u0066%s\":%lld", sep,
                                      name[i] + 1, (long long)val[r][i]);
            else
                l += (size_t)snprintf(line + l, sizeof line - l, "%s\"%s\":%lld", sep, name[i],
                                      (long long)val[r][i]);
        }
        l += (size_t)snprintf(line + l, sizeof line - l, "}\n");
        REQUIRE(floe_buf_append(&text, line, l) == 0);
    }
    /* a field repeated after a skip is a duplicate, wherever it was first seen */
    const char *dup = "{\"f00_long\":1,\"f05_long\":2,\"f00_long\":3}\n"
                      "{\"f02_long\":1,\"f09_long\":2,\"f03_long\":3,\"f09_long\":4}\n";
    REQUIRE(floe_buf_append(&text, dup, strlen(dup)) == 0);
    REQUIRE(floe_buf_append(&text, "", 1) == 0); /* NUL for fx_feed */
    REQUIRE(fx_feed(&fx, (const char *)text.data) == 0);
    CHECK_EQ_INT(fx.batch.nrows, NREC);
    CHECK_EQ_INT(fx.rej.n, 2);
    CHECK_EQ_INT(fx.rej.r[0].reason, FLOE_REJECT_DUPLICATE_KEY);
    CHECK_EQ_INT(fx.rej.r[1].reason, FLOE_REJECT_DUPLICATE_KEY);
    int bad = 0;
    for (int i = 0; i <= SPARSE_N && bad < 5; i++) {
        char path[48];
        snprintf(path, sizeof path, "%s", i == SPARSE_N ? "s.x" : name[i]);
        const floe_colbuf *c = col(&fx, path);
        REQUIRE(c != NULL);
        CHECK_EQ_INT(c->nlevels, NREC);
        size_t v = 0;
        for (int r = 0; r < NREC && (size_t)r < c->nlevels && bad < 5; r++) {
            int want = has[r][i] ? c->max_def : 0;
            if (c->def[r] != want || (has[r][i] && i64_at(c, v) != val[r][i])) {
                harness_fail(__FILE__, __LINE__, "record %d field %s: def %d value %lld, want %d %lld",
                             r, path, c->def[r], has[r][i] ? (long long)i64_at(c, v) : 0LL, want,
                             (long long)val[r][i]);
                bad++;
            }
            if (has[r][i])
                v++;
        }
    }
    const floe_colbuf *y = col(&fx, "s.y");
    REQUIRE(y != NULL);
    for (int r = 0; r < NREC && (size_t)r < y->nlevels; r++)
        if (y->def[r] != (has[r][SPARSE_N] ? y->max_def : 0)) {
            harness_fail(__FILE__, __LINE__, "record %d: s.y def %d", r, y->def[r]);
            break;
        }
    floe_buf_free(&text);
    fx_close(&fx);
}

/* Hand-computed Dremel levels for nested lists, maps and optional structs. */
/* The stamps that tell which fields of an object were seen count struct instances: a
 * long-lived shredder (floe serve pools them) passes 2^32 of them. An object whose nested
 * object was the 2^32nd forgot the fields it had seen before it: a required one was
 * "missing", an optional one got a second (null) slot, a repeated key was taken. */
TEST(test_stamp_past_2_32) {
    const char *js = SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "a", false, "\"long\"") ","
                            FIELD(3, "s", false, "{\"type\":\"struct\",\"fields\":[" FIELD(
                                      4, "x", false, "\"long\"") "]}") "," FIELD(5, "z", false, "\"long\""));
    /* two objects a record: the count passes 2^32 at each of them in turn */
    for (uint64_t back = 1; back <= 6; back++) {
        fixture fx;
        REQUIRE(fx_open(&fx, js, NULL));
        floe_shredder_testing_set_stamp(fx.sh, UINT32_MAX - back);
        REQUIRE(fx_feed(&fx, "{\"a\":10,\"s\":{\"x\":100},\"id\":1}\n"
                             "{\"id\":2,\"s\":{\"x\":200},\"id\":3}\n"
                             "{\"a\":30,\"s\":{},\"id\":4,\"z\":3000}\n") == 0);
        CHECK_EQ_INT(fx.batch.nrows, 2);
        CHECK_EQ_INT(fx.rej.n, 1);
        if (fx.rej.n >= 1)
            CHECK(fx.rej.r[0].reason == FLOE_REJECT_DUPLICATE_KEY);
        floe_colbuf *id = col(&fx, "id"), *a = col(&fx, "a"), *x = col(&fx, "s.x"),
                    *z = col(&fx, "z");
        REQUIRE(id && a && x && z);
        CHECK_LEVELS(a, "1:0 1:0");
        CHECK_LEVELS(x, "2:0 1:0");
        CHECK_LEVELS(z, "0:0 1:0");
        if (id->nvalues == 2 && a->nvalues == 2 && x->nvalues == 1 && z->nvalues == 1) {
            CHECK_EQ_INT(i64_at(id, 0), 1);
            CHECK_EQ_INT(i64_at(id, 1), 4);
            CHECK_EQ_INT(i64_at(a, 0), 10);
            CHECK_EQ_INT(i64_at(a, 1), 30);
            CHECK_EQ_INT(i64_at(x, 0), 100);
            CHECK_EQ_INT(i64_at(z, 0), 3000);
        } else {
            harness_fail(__FILE__, __LINE__, "values: id %zu a %zu x %zu z %zu, want 2 2 1 1 "
                         "(count 2^32 - 1 - %d before)", id->nvalues, a->nvalues, x->nvalues,
                         z->nvalues, (int)back);
        }
        fx_close(&fx);
    }
}

TEST(test_levels_nested) {
    const char *js = SCHEMA(
        FIELD(1, "l", false, "{\"type\":\"list\",\"element-id\":2,\"element-required\":true,"
                             "\"element\":{\"type\":\"struct\",\"fields\":[" FIELD(
                                 3, "a", false, "{\"type\":\"list\",\"element-id\":4,"
                                                "\"element-required\":false,\"element\":\"int\"}") "]}}") ","
        FIELD(5, "m", false, "{\"type\":\"map\",\"key-id\":6,\"key\":\"string\",\"value-id\":7,"
                             "\"value-required\":false,\"value\":{\"type\":\"list\",\"element-id\":8,"
                             "\"element-required\":true,\"element\":\"long\"}}") ","
        FIELD(9, "r", true, "{\"type\":\"struct\",\"fields\":[" FIELD(10, "q", true, "\"int\"") "," FIELD(
                                11, "o", false, "{\"type\":\"struct\",\"fields\":[" FIELD(12, "z", true, "\"string\"") "]}") "]}") ","
        FIELD(13, "ll", false, "{\"type\":\"list\",\"element-id\":14,\"element-required\":false,"
                               "\"element\":{\"type\":\"list\",\"element-id\":15,\"element-required\":true,"
                               "\"element\":\"int\"}}"));
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    REQUIRE(fx_feed(&fx,
                    "{\"l\":[{\"a\":[1,null,2]},{\"a\":[]},{\"a\":null},{}],"
                    "\"m\":{\"x\":[1,2],\"y\":[],\"z\":null},\"r\":{\"q\":1},"
                    "\"ll\":[[1,2],[],null,[3]]}\n"
                    "{\"l\":[],\"m\":{},\"r\":{\"q\":2,\"o\":{\"z\":\"s\"}},\"ll\":[]}\n"
                    "{\"l\":null,\"m\":null,\"r\":{\"q\":3,\"o\":null},\"ll\":null}\n"
                    "{\"r\":{\"q\":4}}\n") == 0);
    CHECK_EQ_INT(fx.rej.n, 0);
    if (fx.rej.n)
        fprintf(stderr, "%s\n", fx.rej.r[0].msg);
    CHECK_EQ_INT(fx.batch.nrows, 4);
    floe_colbuf *a = col(&fx, "l.element.a.element");
    REQUIRE(a != NULL);
    CHECK_EQ_INT(a->max_def, 5);
    CHECK_EQ_INT(a->max_rep, 2);
    CHECK_LEVELS(a, "5:0 4:2 5:2 3:1 2:1 2:1 1:0 0:0 0:0");
    CHECK_EQ_INT(a->nvalues, 2);
    CHECK_EQ_INT(i32_at(a, 0), 1);
    CHECK_EQ_INT(i32_at(a, 1), 2);
    floe_colbuf *k = col(&fx, "m.key"), *v = col(&fx, "m.value.element");
    CHECK_LEVELS(k, "2:0 2:1 2:1 1:0 0:0 0:0");
    CHECK_LEVELS(v, "4:0 4:2 3:1 2:1 1:0 0:0 0:0");
    CHECK_EQ_INT(i64_at(v, 1), 2);
    char buf[16];
    str_at(k, 2, buf, sizeof buf);
    CHECK_EQ_STR(buf, "z");
    floe_colbuf *q = col(&fx, "r.q"), *z = col(&fx, "r.o.z");
    CHECK_EQ_INT(q->max_def, 0);
    CHECK_EQ_INT(q->nvalues, 4);
    CHECK_LEVELS(z, "0:0 1:0 0:0 0:0");
    floe_colbuf *ll = col(&fx, "ll.element.element");
    CHECK_EQ_INT(ll->max_def, 4);
    CHECK_LEVELS(ll, "4:0 4:2 3:1 2:1 4:1 1:0 0:0 0:0");
    fx_close(&fx);
}

TEST(test_reject_reasons) {
    const char *js = SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "s", false, "\"string\"") "," FIELD(
        3, "n", false, "\"int\"") "," FIELD(4, "d", false, "\"date\"") "," FIELD(5, "m", false, "{\"type\":\"map\",\"key-id\":6,\"key\":\"string\",\"value-id\":7,\"value-required\":false,\"value\":\"int\"}"));
    floe_shred_options opt = {.max_record = 64};
    fixture fx;
    REQUIRE(fx_open(&fx, js, &opt));
    const char *lines[] = {
        "{\"id\":1}",                                    /* 1 ok */
        "{\"id\":2,}",                                   /* 2 malformed at column 9 */
        "",                                              /* 3 blank */
        "{\"id\":3,\"s\":\"a\xC3\x28\"}",                /* 4 bad UTF-8 at column 14 */
        "{\"id\":4,\"s\":\"\\ud800x\"}",                 /* 5 lone surrogate */
        "{\"id\":5,\"n\":\"7\"}",                        /* 6 type mismatch */
        "{\"id\":6,\"n\":2147483648}",                   /* 7 out of range */
        "{\"s\":\"x\"}",                                 /* 8 missing required */
        "{\"id\":8,\"s\":\"0123456789012345678901234567890123456789012345678901234567\"}", /* 9 */
        "{\"id\":9,\"zz\":1}",                           /* 10 unknown field */
        "{\"id\":10,\"id\":11}",                         /* 11 duplicate key */
        "{\"id\":12,\"d\":\"2023-02-29\"}",              /* 12 date out of range */
        "{\"id\":null}",                                 /* 13 required null */
        "{\"id\":14,\"m\":{\"a\":1,\"b\":2,\"a\":3}}",   /* 14 duplicate map key */
        "[1]",                                           /* 15 not an object */
        "{\"id\":16} x",                                 /* 16 trailing data */
        "{\"id\":17,\"n\":1.5}",                         /* 17 non-integral */
        "{\"id\":18,\"m\":{\"q\\u0000\\\"\":1,\"q\\u0000\\\"\":2}}", /* 18 escaped key twice */
        "not json",                                      /* 19 not JSON, starts like null */
        "{\"id\":20,\"n\":trash}",                        /* 20 a value not JSON */
        "[1,]",                                          /* 21 an array, not JSON */
    };
    char input[2048] = "";
    int64_t offsets[32];
    size_t nlines = sizeof lines / sizeof lines[0];
    for (size_t i = 0; i < nlines; i++) {
        offsets[i] = (int64_t)strlen(input);
        strcat(input, lines[i]);
        strcat(input, "\n");
    }
    REQUIRE(fx_feed(&fx, input) == 0);
    CHECK_EQ_INT(fx.batch.nrows, 1);
    static const struct {
        int line;
        floe_reject_reason reason;
        int column;
        const char *msg;
    } want[] = {
        {2, FLOE_REJECT_MALFORMED, 9, "malformed JSON at column 9: expected '\"' to start an object key"},
        {4, FLOE_REJECT_UTF8, 15, "invalid UTF-8 in string at column 15"},
        {5, FLOE_REJECT_UTF8, 14, "lone surrogate \\uD800 at column 14"},
        {6, FLOE_REJECT_TYPE, 13, "field 'n': expected int, found string"},
        {7, FLOE_REJECT_RANGE, 13, "field 'n': 2147483648 out of range for int"},
        {8, FLOE_REJECT_MISSING, 0, "missing required field 'id'"},
        {9, FLOE_REJECT_TOO_LARGE, 0, "record of 73 bytes exceeds the 64-byte limit"},
        {10, FLOE_REJECT_UNKNOWN_FIELD, 9, "unknown field 'zz'"},
        {11, FLOE_REJECT_DUPLICATE_KEY, 10, "duplicate key for field 'id'"},
        {12, FLOE_REJECT_RANGE, 14, "field 'd': date \"2023-02-29\": day 29 out of range for 2023-02"},
        {13, FLOE_REJECT_MISSING, 7, "required field 'id' is null"},
        {14, FLOE_REJECT_DUPLICATE_KEY, 27, "map 'm': duplicate key \"a\""},
        {15, FLOE_REJECT_TYPE, 1, "record must be a JSON object, found array"},
        {16, FLOE_REJECT_MALFORMED, 11, "malformed JSON at column 11: unexpected data after the record"},
        {17, FLOE_REJECT_TYPE, 14, "field 'n': expected int, found non-integral number 1.5"},
        {18, FLOE_REJECT_DUPLICATE_KEY, 29, "map 'm': duplicate key \"q\\u0000\\\"\""},
        {19, FLOE_REJECT_MALFORMED, 1, "malformed JSON at column 1: invalid literal"},
        {20, FLOE_REJECT_MALFORMED, 14, "malformed JSON at column 14: invalid literal"},
        {21, FLOE_REJECT_MALFORMED, 4, "malformed JSON at column 4: invalid number"},
    };
    size_t nwant = sizeof want / sizeof want[0];
    CHECK_EQ_INT(fx.rej.n, nwant);
    for (size_t i = 0; i < nwant && i < fx.rej.n; i++) {
        rejected *r = &fx.rej.r[i];
        CHECK_EQ_INT(r->line, want[i].line);
        CHECK_EQ_INT(r->offset, offsets[want[i].line - 1]);
        CHECK_EQ_INT(r->reason, want[i].reason);
        CHECK_EQ_INT(r->column, want[i].column);
        CHECK_EQ_STR(r->msg, want[i].msg);
        CHECK_EQ_STR(r->record, lines[want[i].line - 1]);
    }
    floe_shred_stats st;
    floe_shredder_stats(fx.sh, &st);
    CHECK_EQ_U64(st.records_rejected, nwant);
    CHECK_EQ_U64(st.rejected_by_reason[FLOE_REJECT_DUPLICATE_KEY], 3);
    CHECK_EQ_U64(st.bytes, strlen(input));
    CHECK_EQ_STR(floe_reject_reason_name(FLOE_REJECT_TYPE), "type_mismatch");
    fx_close(&fx);
}

/* One value into a one-column schema: returns 0 accepted, else the reject reason. */
static int one(const char *type, const char *value, fixture *fx) {
    char js[512], rec[512];
    snprintf(js, sizeof js, SCHEMA(FIELD(1, "v", false, "%s")), type);
    if (!fx_open(fx, js, NULL))
        return -1;
    snprintf(rec, sizeof rec, "{\"v\":%s}", value);
    fx_feed(fx, rec);
    if (fx->rej.n)
        return (int)fx->rej.r[0].reason;
    return 0;
}

#define EXPECT_I64(type, value, want)                                                        \
    do {                                                                                     \
        fixture fx_;                                                                         \
        int rc_ = one(type, value, &fx_);                                                    \
        if (rc_ != 0)                                                                        \
            harness_fail(__FILE__, __LINE__, "%s rejected: %s", value, fx_.rej.r[0].msg);    \
        else if (i64_at(&fx_.batch.cols[0], 0) != (want))                                    \
            harness_fail(__FILE__, __LINE__, "%s -> %lld, want %lld", value,                 \
                         (long long)i64_at(&fx_.batch.cols[0], 0), (long long)(want));       \
        fx_close(&fx_);                                                                      \
    } while (0)
#define EXPECT_I32(type, value, want)                                                        \
    do {                                                                                     \
        fixture fx_;                                                                         \
        int rc_ = one(type, value, &fx_);                                                    \
        if (rc_ != 0)                                                                        \
            harness_fail(__FILE__, __LINE__, "%s rejected: %s", value, fx_.rej.r[0].msg);    \
        else if (i32_at(&fx_.batch.cols[0], 0) != (want))                                    \
            harness_fail(__FILE__, __LINE__, "%s -> %d, want %d", value,                     \
                         (int)i32_at(&fx_.batch.cols[0], 0), (int)(want));                   \
        fx_close(&fx_);                                                                      \
    } while (0)
#define EXPECT_REJ(type, value, reason)                                                      \
    do {                                                                                     \
        fixture fx_;                                                                         \
        int rc_ = one(type, value, &fx_);                                                    \
        if (rc_ != (reason))                                                                 \
            harness_fail(__FILE__, __LINE__, "%s as %s: got %d want %d (%s)", value, type,   \
                         rc_, (int)(reason), fx_.rej.n ? fx_.rej.r[0].msg : "accepted");     \
        CHECK_EQ_INT(fx_.batch.nrows, 0);                                                    \
        fx_close(&fx_);                                                                      \
    } while (0)
#define EXPECT_BYTES(type, value, want, wlen)                                                \
    do {                                                                                     \
        fixture fx_;                                                                         \
        int rc_ = one(type, value, &fx_);                                                    \
        floe_colbuf *c_ = &fx_.batch.cols[0];                                                \
        if (rc_ != 0)                                                                        \
            harness_fail(__FILE__, __LINE__, "%s rejected: %s", value, fx_.rej.r[0].msg);    \
        else if (c_->values_len != (wlen) || ((wlen) && memcmp(c_->values, (want), (wlen)) != 0)) \
            harness_fail(__FILE__, __LINE__, "%s: bytes differ (len %zu)", value,            \
                         c_->values_len);                                                    \
        fx_close(&fx_);                                                                      \
    } while (0)

TEST(test_coerce_integers) {
    EXPECT_I32("\"int\"", "2147483647", INT32_MAX);
    EXPECT_I32("\"int\"", "-2147483648", INT32_MIN);
    EXPECT_REJ("\"int\"", "2147483648", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"int\"", "-2147483649", FLOE_REJECT_RANGE);
    EXPECT_I32("\"int\"", "1e3", 1000);
    EXPECT_I32("\"int\"", "1.0", 1);
    EXPECT_I32("\"int\"", "1.50e1", 15);
    EXPECT_I32("\"int\"", "-0", 0);
    EXPECT_I32("\"int\"", "0e999999999999", 0);
    EXPECT_REJ("\"int\"", "1.5", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"int\"", "1e-1", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"int\"", "\"5\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"int\"", "true", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"int\"", "01", FLOE_REJECT_MALFORMED);
    EXPECT_REJ("\"int\"", "+1", FLOE_REJECT_MALFORMED);
    EXPECT_REJ("\"int\"", "1.", FLOE_REJECT_MALFORMED);
    EXPECT_I64("\"long\"", "9223372036854775807", INT64_MAX);
    EXPECT_I64("\"long\"", "-9223372036854775808", INT64_MIN);
    EXPECT_REJ("\"long\"", "9223372036854775808", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"long\"", "1e19", FLOE_REJECT_RANGE);
    EXPECT_I64("\"long\"", "9.223372036854775807e18", INT64_MAX);
    EXPECT_REJ("\"boolean\"", "1", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"string\"", "12", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"string\"", "{}", FLOE_REJECT_TYPE);
}

TEST(test_coerce_floats) {
    fixture fx;
    REQUIRE(one("\"double\"", "0.1", &fx) == 0);
    CHECK(f64_at(&fx.batch.cols[0], 0) == 0.1);
    fx_close(&fx);
    REQUIRE(one("\"double\"", "2.2250738585072014e-308", &fx) == 0);
    CHECK(f64_at(&fx.batch.cols[0], 0) == 2.2250738585072014e-308);
    fx_close(&fx);
    REQUIRE(one("\"double\"", "123456789012345678901234567890", &fx) == 0);
    CHECK(f64_at(&fx.batch.cols[0], 0) == 123456789012345678901234567890.0);
    fx_close(&fx);
    REQUIRE(one("\"double\"", "\"NaN\"", &fx) == 0);
    CHECK(isnan(f64_at(&fx.batch.cols[0], 0)));
    fx_close(&fx);
    REQUIRE(one("\"float\"", "3.4028235e38", &fx) == 0);
    float fv;
    memcpy(&fv, fx.batch.cols[0].values, 4);
    CHECK(fv == 3.4028235e38f);
    fx_close(&fx);
    REQUIRE(one("\"float\"", "0.1", &fx) == 0);
    memcpy(&fv, fx.batch.cols[0].values, 4);
    CHECK(fv == 0.1f);
    fx_close(&fx);
    EXPECT_REJ("\"float\"", "1e39", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"double\"", "1e309", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"double\"", "\"1.5\"", FLOE_REJECT_TYPE);
}

/* A double is the correctly rounded value of its digits whichever path converts it (the
 * fast path on the digits as written, the normalised one, strtod): bit for bit what
 * strtod gives, for numbers at the edges of the fast path (19 digits, 2^53, 10^+-22,
 * leading and trailing zeros, signed zeros) and for 20,000 pseudo-random ones. */
static bool double_as_strtod(const char *text) {
    fixture fx;
    if (one("\"double\"", text, &fx) != 0) {
        harness_fail(__FILE__, __LINE__, "%s rejected", text);
        fx_close(&fx);
        return false;
    }
    double got = f64_at(&fx.batch.cols[0], 0), want = strtod(text, NULL);
    fx_close(&fx);
    if (memcmp(&got, &want, sizeof got) != 0) {
        harness_fail(__FILE__, __LINE__, "%s -> %.17g, strtod gives %.17g", text, got, want);
        return false;
    }
    return true;
}

TEST(test_double_digits) {
    static const char *const edges[] = {
        "0", "-0", "0.0", "-0.0", "0e5", "-0e-5", "0.000", "1", "-1", "0.5", "1.25e-3",
        "9007199254740992", "9007199254740993", "9007199254740992.0", "900719925474099.3",
        "9007199254740993e-1", "18014398509481984", "1234567890123456789",
        "1234567890123456789e-22", "12345678901234567890", "0.1234567890123456789",
        "1.2345678901234567890", "1.5000000000000000000", "1.50000000000000000000",
        "1e22", "1e23", "1e-22", "1e-23", "123e20", "123e-25", "0.000000000000000000001",
        "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "33.052", "-73.015541",
        "9.88436", "-0.04548", "1042.96", "0.30000000000000004", "100000000000000000000000",
        "1e0", "1E+2", "25E-1", "-123.456e7"};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        if (!double_as_strtod(edges[i]))
            return;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 20000; i++) {
        harness_xorshift64(&x);
        char digits[24], text[64];
        int nd = 1 + (int)(x % 20), point = (int)((x >> 8) % (uint64_t)(nd + 1));
        uint64_t y = x;
        for (int k = 0; k < nd; k++) {
            digits[k] = (char)('0' + (y >> 20) % 10);
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        if (digits[0] == '0' && point != 1)
            digits[0] = '7'; /* JSON: no leading zero before more integer digits */
        size_t n = 0;
        if ((x >> 16) & 1)
            text[n++] = '-';
        if (point == 0)
            text[n++] = '0';
        for (int k = 0; k < nd; k++) {
            if (k == point && point > 0 && point < nd)
                text[n++] = '.';
            if (k == 0 && point == 0)
                text[n++] = '.';
            text[n++] = digits[k];
        }
        if ((x >> 24) % 3 == 0)
            n += (size_t)snprintf(text + n, sizeof text - n, "e%d", (int)((x >> 32) % 61) - 30);
        text[n] = '\0';
        if (!double_as_strtod(text))
            return;
    }
}

TEST(test_coerce_decimal) {
    EXPECT_I64("\"decimal(10,2)\"", "12.3", 1230);
    EXPECT_I64("\"decimal(10,2)\"", "\"12.340\"", 1234);
    EXPECT_I64("\"decimal(10,2)\"", "1e2", 10000);
    EXPECT_I64("\"decimal(10,2)\"", "-0.01", -1);
    EXPECT_I64("\"decimal(10,2)\"", "99999999.99", 9999999999LL);
    EXPECT_REJ("\"decimal(10,2)\"", "12.345", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"decimal(10,2)\"", "\"12.345\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"decimal(10,2)\"", "123456789.12", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"decimal(10,2)\"", "\"12,3\"", FLOE_REJECT_TYPE);
    EXPECT_I32("\"decimal(9,0)\"", "-999999999", -999999999);
    EXPECT_REJ("\"decimal(9,0)\"", "1e9", FLOE_REJECT_RANGE);
    /* decimal(20,2) -> 9-byte big-endian two's complement */
    static const uint8_t minus_one[9] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    EXPECT_BYTES("\"decimal(20,2)\"", "-0.01", minus_one, 9);
    static const uint8_t big[16] = {0x4b, 0x3b, 0x4c, 0xa8, 0x5a, 0x86, 0xc4, 0x7a,
                                    0x09, 0x8a, 0x22, 0x3f, 0xff, 0xff, 0xff, 0xff}; /* 10^38-1 */
    EXPECT_BYTES("\"decimal(38,0)\"", "99999999999999999999999999999999999999", big, 16);
    EXPECT_REJ("\"decimal(38,0)\"", "100000000000000000000000000000000000000", FLOE_REJECT_RANGE);
    static const uint8_t d1[9] = {0, 0, 0, 0, 0, 0, 0, 0x30, 0x39}; /* 123.45 */
    EXPECT_BYTES("\"decimal(20,2)\"", "\"123.45\"", d1, 9);
}

TEST(test_coerce_time) {
    /* 2024-02-29 (leap day) = 19782 days */
    EXPECT_I32("\"date\"", "\"2024-02-29\"", 19782);
    EXPECT_I32("\"date\"", "\"1970-01-01\"", 0);
    EXPECT_I32("\"date\"", "\"1969-12-31\"", -1);
    EXPECT_I32("\"date\"", "\"0001-01-01\"", -719162);
    EXPECT_I32("\"date\"", "\"2000-02-29\"", 11016);
    EXPECT_I32("\"date\"", "-5", -5);
    EXPECT_REJ("\"date\"", "\"1900-02-29\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"date\"", "\"2023-13-01\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"date\"", "\"2023-1-01\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"date\"", "3000000000", FLOE_REJECT_RANGE);
    EXPECT_I64("\"time\"", "\"12:34:56.789\"", 45296789000LL);
    EXPECT_I64("\"time\"", "\"23:59:59.9999999\"", 86399999999LL);
    EXPECT_REJ("\"time\"", "\"24:00:00\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"time\"", "86400000000", FLOE_REJECT_RANGE);
    /* timestamptz: offsets converted to UTC; 2024-02-29T12:34:56 UTC = 1709210096 s */
    EXPECT_I64("\"timestamptz\"", "\"2024-02-29T12:34:56Z\"", 1709210096000000LL);
    EXPECT_I64("\"timestamptz\"", "\"2024-02-29T18:04:56.123456+05:30\"", 1709210096123456LL);
    EXPECT_I64("\"timestamptz\"", "\"2024-02-29 07:34:56-0500\"", 1709210096000000LL);
    EXPECT_I64("\"timestamptz\"", "\"2024-02-29T12:34:56\"", 1709210096000000LL);
    EXPECT_I64("\"timestamptz\"", "\"2024-02-29T12:34:56.1234569Z\"", 1709210096123456LL);
    EXPECT_I64("\"timestamptz\"", "\"1969-12-31T23:59:59.9999999Z\"", -1);
    EXPECT_I64("\"timestamptz\"", "1709210096000000", 1709210096000000LL);
    EXPECT_I64("\"timestamptz_ns\"", "\"2024-02-29T12:34:56.123456789Z\"", 1709210096123456789LL);
    EXPECT_I64("\"timestamptz_ns\"", "\"1677-09-21T00:12:43.145224192Z\"", INT64_MIN);
    EXPECT_REJ("\"timestamptz_ns\"", "\"1677-09-21T00:12:43.145224191Z\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"timestamptz\"", "\"2024-02-29T12:34:60Z\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"timestamptz\"", "\"2024-02-29T12:34:56+24:00\"", FLOE_REJECT_RANGE);
    EXPECT_REJ("\"timestamptz\"", "\"2024-02-29T12:34:56.1234567890Z\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"timestamptz\"", "\"2024-02-29\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"timestamptz\"", "1.5", FLOE_REJECT_TYPE);
    EXPECT_I64("\"timestamp\"", "\"2024-02-29t12:34:56.5\"", 1709210096500000LL);
    EXPECT_I64("\"timestamp\"", "\"2024-02-29 12:34\"", 1709210040000000LL);
    EXPECT_REJ("\"timestamp\"", "\"2024-02-29T12:34:56Z\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"timestamp\"", "\"2024-02-29T12:34:56+01:00\"", FLOE_REJECT_TYPE);
}

TEST(test_coerce_bytes) {
    static const uint8_t u[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                  0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    EXPECT_BYTES("\"uuid\"", "\"123E4567-e89b-12d3-a456-426614174000\"", u, 16);
    EXPECT_REJ("\"uuid\"", "\"123e4567e89b12d3a456426614174000\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"uuid\"", "\"123e4567-e89b-12d3-a456-42661417400g\"", FLOE_REJECT_TYPE);
    EXPECT_BYTES("\"binary\"", "\"aGVsbG8=\"", "hello", 5);
    EXPECT_BYTES("\"binary\"", "\"aGVsbG8\"", "hello", 5);
    EXPECT_BYTES("\"binary\"", "\"\"", "", 0);
    EXPECT_BYTES("\"binary\"", "\"+/8=\"", "\xfb\xff", 2);
    EXPECT_REJ("\"binary\"", "\"a\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"binary\"", "\"aGVsbG8==\"", FLOE_REJECT_TYPE);
    EXPECT_REJ("\"binary\"", "\"aG Vs\"", FLOE_REJECT_TYPE);
    EXPECT_BYTES("\"fixed[3]\"", "\"AQID\"", "\x01\x02\x03", 3);
    EXPECT_REJ("\"fixed[3]\"", "\"AQI=\"", FLOE_REJECT_RANGE);
    /* strings: escapes, surrogate pairs, UTF-8 validation */
    EXPECT_BYTES("\"string\"", "\"\\u00e9\\ud83d\\ude00\\u0041\\n\\\"\\\\\\/\"",
                 "\xc3\xa9\xf0\x9f\x98\x80" "A\n\"\\/", 11);
    EXPECT_BYTES("\"string\"", "\"\xe2\x82\xac \xf0\x9f\x98\x80 plain ascii text 12345\"",
                 "\xe2\x82\xac \xf0\x9f\x98\x80 plain ascii text 12345", 31);
    EXPECT_REJ("\"string\"", "\"\\ud800\"", FLOE_REJECT_UTF8);
    EXPECT_REJ("\"string\"", "\"\\udc00\\ud800\"", FLOE_REJECT_UTF8);
    EXPECT_REJ("\"string\"", "\"\\ud83d\\u0041\"", FLOE_REJECT_UTF8);
    EXPECT_REJ("\"string\"", "\"\xc0\xaf\"", FLOE_REJECT_UTF8);         /* overlong */
    EXPECT_REJ("\"string\"", "\"\xed\xa0\x80\"", FLOE_REJECT_UTF8);     /* encoded surrogate */
    EXPECT_REJ("\"string\"", "\"\xf4\x90\x80\x80\"", FLOE_REJECT_UTF8); /* > U+10FFFF */
    EXPECT_REJ("\"string\"", "\"abc\xff\"", FLOE_REJECT_UTF8);
    EXPECT_REJ("\"string\"", "\"a\tb\"", FLOE_REJECT_MALFORMED);
    EXPECT_REJ("\"string\"", "\"\\x41\"", FLOE_REJECT_MALFORMED);
    EXPECT_REJ("\"string\"", "\"\\u12\"", FLOE_REJECT_MALFORMED);
}

TEST(test_map_keys) {
    const char *js = SCHEMA(
        FIELD(1, "mi", false, "{\"type\":\"map\",\"key-id\":2,\"key\":\"int\",\"value-id\":3,"
                              "\"value-required\":true,\"value\":\"string\"}") ","
        FIELD(4, "md", false, "{\"type\":\"map\",\"key-id\":5,\"key\":\"date\",\"value-id\":6,"
                              "\"value-required\":false,\"value\":\"long\"}"));
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    REQUIRE(fx_feed(&fx, "{\"mi\":{\"-12\":\"a\",\"7\":\"b\"},\"md\":{\"1970-01-02\":5}}\n"
                         "{\"mi\":{\"x\":\"a\"}}\n"
                         "{\"mi\":{\"1\":null}}\n"
                         "{\"mi\":{\"1.0\":\"a\"}}\n") == 0);
    CHECK_EQ_INT(fx.batch.nrows, 1);
    CHECK_EQ_INT(fx.rej.n, 3);
    CHECK_EQ_INT(fx.rej.r[0].reason, FLOE_REJECT_TYPE);
    CHECK_EQ_STR(fx.rej.r[0].msg, "field 'mi.key': expected int key, found \"x\"");
    CHECK_EQ_INT(fx.rej.r[1].reason, FLOE_REJECT_MISSING);
    CHECK_EQ_INT(fx.rej.r[2].reason, FLOE_REJECT_TYPE);
    floe_colbuf *k = col(&fx, "mi.key"), *dk = col(&fx, "md.key");
    CHECK_EQ_INT(k->nvalues, 2);
    CHECK_EQ_INT(i32_at(k, 0), -12);
    CHECK_EQ_INT(i32_at(k, 1), 7);
    CHECK_EQ_INT(i32_at(dk, 0), 1);
    fx_close(&fx);

    /* many keys: the hashed duplicate check */
    const char *js2 = SCHEMA(FIELD(1, "m", false, "{\"type\":\"map\",\"key-id\":2,\"key\":\"string\","
                                                  "\"value-id\":3,\"value-required\":false,\"value\":\"int\"}"));
    REQUIRE(fx_open(&fx, js2, NULL));
    char rec[4096];
    for (int dup = 0; dup < 2; dup++) {
        size_t len = (size_t)snprintf(rec, sizeof rec, "{\"m\":{");
        for (int i = 0; i < 100; i++)
            len += (size_t)snprintf(rec + len, sizeof rec - len, "%s\"k%d\":%d", i ? "," : "", i, i);
        if (dup)
            len += (size_t)snprintf(rec + len, sizeof rec - len, ",\"k57\":1");
        snprintf(rec + len, sizeof rec - len, "}}\n");
        fx_feed(&fx, rec);
    }
    CHECK_EQ_INT(fx.batch.nrows, 1);
    REQUIRE(fx.rej.n == 1);
    CHECK_EQ_STR(fx.rej.r[0].msg, "map 'm': duplicate key \"k57\"");
    CHECK_EQ_INT(col(&fx, "m.key")->nvalues, 100);
    fx_close(&fx);
}

TEST(test_unknown_policies) {
    const char *js = SCHEMA(FIELD(1, "a", false, "\"int\"") "," FIELD(
        2, "s", false, "{\"type\":\"struct\",\"fields\":[" FIELD(3, "x", false, "\"int\"") "]}"));
    const char *in = "{\"a\":1,\"extra\":{\"deep\":[1,{\"q\":\"\\u00e9\"}]},\"s\":{\"x\":2,\"y\":null}}\n"
                     "{\"extra\":true,\"a\":2}\n"
                     "{\"a\":3,\"bad\":[1,}\n"
                     "{\"a\":4,\"bad\":\"\xff\"}\n";
    fixture fx;
    floe_shred_options opt = {.unknown = FLOE_UNKNOWN_COLLECT};
    REQUIRE(fx_open(&fx, js, &opt));
    REQUIRE(fx_feed(&fx, in) == 0);
    CHECK_EQ_INT(fx.batch.nrows, 2);
    CHECK_EQ_INT(fx.rej.n, 2); /* ignored values must still be valid JSON and UTF-8 */
    CHECK_EQ_INT(fx.rej.r[0].reason, FLOE_REJECT_MALFORMED);
    CHECK_EQ_INT(fx.rej.r[1].reason, FLOE_REJECT_UTF8);
    REQUIRE(floe_shredder_unknown_count(fx.sh) == 3);
    uint64_t seen;
    CHECK_EQ_STR(floe_shredder_unknown_name(fx.sh, 0, &seen), "extra");
    CHECK_EQ_U64(seen, 2);
    CHECK_EQ_STR(floe_shredder_unknown_name(fx.sh, 1, &seen), "s.y");
    CHECK_EQ_STR(floe_shredder_unknown_name(fx.sh, 2, &seen), "bad");
    CHECK(floe_shredder_unknown_name(fx.sh, 3, NULL) == NULL);
    CHECK_LEVELS(col(&fx, "s.x"), "2:0 0:0");
    fx_close(&fx);

    opt.unknown = FLOE_UNKNOWN_IGNORE;
    REQUIRE(fx_open(&fx, js, &opt));
    REQUIRE(fx_feed(&fx, in) == 0);
    CHECK_EQ_INT(fx.batch.nrows, 2);
    CHECK_EQ_INT(floe_shredder_unknown_count(fx.sh), 0);
    floe_shred_stats st;
    floe_shredder_stats(fx.sh, &st);
    CHECK_EQ_U64(st.unknown_fields, 5);
    fx_close(&fx);

    REQUIRE(fx_open(&fx, js, NULL));
    REQUIRE(fx_feed(&fx, in) == 0);
    CHECK_EQ_INT(fx.batch.nrows, 0);
    CHECK_EQ_STR(fx.rej.r[0].msg, "unknown field 'extra'");
    fx_close(&fx);
}

static void snapshot(const floe_batch *b, size_t *out) {
    for (size_t i = 0; i < b->ncols; i++) {
        out[3 * i] = b->cols[i].nlevels;
        out[3 * i + 1] = b->cols[i].nvalues;
        out[3 * i + 2] = b->cols[i].values_len;
    }
}

TEST(test_rollback) {
    const char *js = SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(
        2, "tags", false, "{\"type\":\"list\",\"element-id\":3,\"element-required\":true,\"element\":\"string\"}") "," FIELD(4, "last", false, "\"int\""));
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    REQUIRE(fx_feed(&fx, "{\"id\":1,\"tags\":[\"a\"],\"last\":1}\n") == 0);
    size_t before[9], after[9];
    snapshot(&fx.batch, before);
    /* id and three tags are written before "last" fails */
    REQUIRE(fx_feed(&fx, "{\"id\":2,\"tags\":[\"x\",\"y\",\"z\"],\"last\":\"no\"}\n") == 0);
    CHECK_EQ_INT(fx.rej.n, 1);
    snapshot(&fx.batch, after);
    CHECK_EQ_MEM(before, after, sizeof before);
    CHECK_EQ_INT(fx.batch.nrows, 1);
    /* a required-field failure after every column was written */
    REQUIRE(fx_feed(&fx, "{\"tags\":[\"q\"],\"last\":5}\n") == 0);
    snapshot(&fx.batch, after);
    CHECK_EQ_MEM(before, after, sizeof before);
    REQUIRE(fx_feed(&fx, "{\"id\":3,\"tags\":[\"b\",\"c\"]}\n") == 0);
    floe_colbuf *t = col(&fx, "tags.element");
    CHECK_EQ_INT(t->nvalues, 3);
    char buf[8];
    str_at(t, 1, buf, sizeof buf);
    CHECK_EQ_STR(buf, "b");
    CHECK_LEVELS(t, "2:0 2:0 2:1");
    fx_close(&fx);
}

TEST(test_array_body) {
    fixture fx;
    REQUIRE(fx_open(&fx, FLAT, NULL));
    const char *body = " [ {\"id\":1},\n  {\"id\":\"x\"},\n  {\"id\":3,\"name\":\"\xff\"} ,{\"id\":4}]\n";
    floe_error err;
    REQUIRE_OK(floe_shredder_feed_array(fx.sh, (const uint8_t *)body, strlen(body), "req", 100,
                                        &fx.batch, collect, &fx.rej, &err),
               err);
    CHECK_EQ_INT(fx.batch.nrows, 2);
    REQUIRE(fx.rej.n == 2);
    CHECK_EQ_INT(fx.rej.r[0].line, 2);
    CHECK_EQ_INT(fx.rej.r[0].offset, 100 + 15);
    CHECK_EQ_STR(fx.rej.r[0].record, "{\"id\":\"x\"}");
    CHECK_EQ_INT(fx.rej.r[1].line, 3);
    CHECK_EQ_INT(fx.rej.r[1].reason, FLOE_REJECT_UTF8);
    CHECK_EQ_INT(i64_at(col(&fx, "id"), 1), 4);
    /* a body that is not one well-formed array adds nothing */
    const char *bad[] = {"[{\"id\":5},{\"id\":6}", "{\"id\":5}", "[{\"id\":5}] x", "[{\"id\":5},]", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = floe_shredder_feed_array(fx.sh, (const uint8_t *)bad[i], strlen(bad[i]), "req",
                                          0, &fx.batch, collect, &fx.rej, &err);
        CHECK_EQ_INT(rc, FLOE_ECORRUPT);
    }
    CHECK_EQ_INT(fx.batch.nrows, 2);
    REQUIRE_OK(floe_shredder_feed_array(fx.sh, (const uint8_t *)"[]", 2, "req", 0, &fx.batch,
                                        collect, &fx.rej, &err),
               err);
    CHECK_EQ_INT(fx.batch.nrows, 2);
    fx_close(&fx);
}

/* The same body in steps of every size: the same rows, rejects (lines, offsets) and the
 * positions between steps fall on element starts. */
TEST(test_array_body_in_parts) {
    const char *body = " [ {\"id\":1},\n  {\"id\":\"x\"},\n  {\"id\":3,\"name\":\"\xff\"} ,{\"id\":4},"
                       "\n{\"id\":5}\n]\n";
    size_t n = strlen(body);
    for (size_t step = 1; step <= n + 1; step++) {
        fixture fx;
        REQUIRE(fx_open(&fx, FLAT, NULL));
        floe_error err;
        size_t pos = 0, calls = 0;
        do {
            size_t before = pos;
            REQUIRE_OK(floe_shredder_feed_array_part(fx.sh, (const uint8_t *)body, n, "req", 100,
                                                     &pos, step, &fx.batch, collect, &fx.rej,
                                                     &err),
                       err);
            CHECK(pos > before && pos <= n);
            CHECK(pos == n || body[pos] == '{');
            calls++;
        } while (pos < n && calls < 100);
        CHECK_EQ_INT(pos, n);
        CHECK_EQ_INT(fx.batch.nrows, 3);
        REQUIRE(fx.rej.n == 2);
        CHECK_EQ_INT(fx.rej.r[0].line, 2);
        CHECK_EQ_INT(fx.rej.r[0].offset, 100 + 15);
        CHECK_EQ_INT(fx.rej.r[1].line, 3);
        CHECK_EQ_INT(fx.rej.r[1].reason, FLOE_REJECT_UTF8);
        CHECK_EQ_INT(i64_at(col(&fx, "id"), 2), 5);
        if (step == 1)
            CHECK_EQ_INT(calls, 5); /* one element per call */
        fx_close(&fx);
    }
    /* a malformed body fails on the first call and adds nothing */
    fixture fx;
    REQUIRE(fx_open(&fx, FLAT, NULL));
    floe_error err;
    size_t pos = 0;
    CHECK_EQ_INT(floe_shredder_feed_array_part(fx.sh, (const uint8_t *)"[{\"id\":1},", 10, "req", 0,
                                               &pos, 1, &fx.batch, collect, &fx.rej, &err),
                 FLOE_ECORRUPT);
    CHECK_EQ_INT(fx.batch.nrows, 0);
    fx_close(&fx);
}

TEST(test_depth_limit) {
    fixture fx;
    floe_shred_options opt = {.unknown = FLOE_UNKNOWN_IGNORE, .max_depth = 8};
    REQUIRE(fx_open(&fx, FLAT, &opt));
    char rec[256] = "{\"id\":1,\"x\":";
    for (int i = 0; i < 20; i++)
        strcat(rec, "[");
    for (int i = 0; i < 20; i++)
        strcat(rec, "]");
    strcat(rec, "}");
    fx_feed(&fx, rec);
    REQUIRE(fx.rej.n == 1);
    CHECK(strstr(fx.rej.r[0].msg, "nesting too deep") != NULL);
    fx_close(&fx);
}

/* Fail the Nth allocation for N = 1, 2, ... until a whole shred succeeds: every failure
 * is a clean FLOE_ENOMEM, the batch stays row-consistent, ASan finds no leak. */
TEST(test_alloc_failure) {
    const char *js = SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "s", false, "\"string\"") "," FIELD(
        3, "m", false, "{\"type\":\"map\",\"key-id\":4,\"key\":\"string\",\"value-id\":5,\"value-required\":false,\"value\":\"int\"}"));
    char input[16384];
    size_t len = 0;
    for (int r = 0; r < 40; r++) {
        len += (size_t)snprintf(input + len, sizeof input - len, "{\"id\":%d,\"s\":\"\\u00e9%d\",\"m\":{", r, r);
        for (int k = 0; k < (r % 3) * 10; k++)
            len += (size_t)snprintf(input + len, sizeof input - len, "%s\"k%d\":%d", k ? "," : "", k, k);
        len += (size_t)snprintf(input + len, sizeof input - len, "}}\n");
    }
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_parse(js, strlen(js), &s, &err), err);
    bool ok = false;
    int failures = 0;
    for (uint64_t n = 1; n < 5000 && !ok; n++) {
        floe_shredder *sh = NULL;
        floe_batch b;
        int rc;
        floe_alloc_fail_after(n);
        rc = floe_shredder_new(s, NULL, &sh, &err);
        if (rc == 0) {
            rc = floe_batch_init(&b, s);
            if (rc == 0) {
                rc = floe_shredder_feed(sh, (const uint8_t *)input, len, "oom", 1, 0, &b, NULL,
                                        NULL, &err);
                /* whatever happened, every column holds slots for exactly nrows rows */
                for (size_t c = 0; c < b.ncols; c++) {
                    size_t rows = 0;
                    for (size_t i = 0; i < b.cols[c].nlevels; i++)
                        rows += !b.cols[c].max_rep || b.cols[c].rep[i] == 0;
                    if (rows != b.nrows)
                        harness_fail(__FILE__, __LINE__, "n=%llu col %zu: %zu rows, batch %zu",
                                     (unsigned long long)n, c, rows, b.nrows);
                }
                if (rc == 0)
                    CHECK_EQ_INT(b.nrows, 40);
                floe_batch_free(&b);
            }
        }
        floe_alloc_fail_after(0);
        floe_shredder_free(sh);
        if (rc == 0)
            ok = true;
        else {
            failures++;
            CHECK_EQ_INT(rc, FLOE_ENOMEM);
        }
    }
    CHECK(ok);
    CHECK(failures > 5);
    floe_schema_free(s);
}

TEST(test_infer) {
    char input[16384];
    size_t len = (size_t)snprintf(input, sizeof input, "%s",
        "{\"a\":1,\"b\":1.5,\"c\":\"x\",\"d\":\"2024-01-01T00:00:00Z\",\"e\":\"2024-01-01\","
        "\"f\":\"2024-01-01 10:00:00.5\",\"g\":[1,2],\"h\":{\"x\":true,\"y\":[{\"z\":\"q\"}]},"
        "\"u\":\"123e4567-e89b-12d3-a456-426614174000\",\"n\":null,\"m\":1,\"empty\":[]}\n"
        "not json\n"
        "\n"
        "{\"a\":2.5,\"g\":[],\"h\":{\"y\":null},\"m\":2,\"d\":\"2024-01-02T00:00:00+02:00\"}\n"
        "{\"m\":\"three\",\"b\":7}\n");
    len += (size_t)snprintf(input + len, sizeof input - len, "{\"attrs\":{");
    for (int i = 0; i < 80; i++)
        len += (size_t)snprintf(input + len, sizeof input - len, "%s\"k%d\":%d", i ? "," : "", i, i);
    len += (size_t)snprintf(input + len, sizeof input - len, "}}\n");
    floe_infer *inf = NULL;
    floe_error err;
    REQUIRE_OK(floe_infer_new(NULL, &inf, &err), err);
    REQUIRE(floe_infer_feed(inf, (const uint8_t *)input, len, &err) == 0);
    CHECK_EQ_U64(floe_infer_records(inf), 4);
    CHECK_EQ_U64(floe_infer_skipped(inf), 1);
    floe_schema *s = NULL;
    REQUIRE_OK(floe_infer_finish(inf, &s, &err), err);
    REQUIRE(floe_infer_warning_count(inf) == 1);
    CHECK(strstr(floe_infer_warning(inf, 0), "field 'm' has mixed kinds") != NULL);
    static const struct {
        const char *path;
        floe_type_id type;
        int32_t id;
    } want[] = {
        {"a", FLOE_TYPE_DOUBLE, 1},        {"b", FLOE_TYPE_DOUBLE, 2},
        {"c", FLOE_TYPE_STRING, 3},        {"d", FLOE_TYPE_TIMESTAMPTZ, 4},
        {"e", FLOE_TYPE_DATE, 5},          {"f", FLOE_TYPE_TIMESTAMP, 6},
        {"g", FLOE_TYPE_LIST, 7},          {"g.element", FLOE_TYPE_LONG, 8},
        {"h", FLOE_TYPE_STRUCT, 9},        {"h.x", FLOE_TYPE_BOOLEAN, 10},
        {"h.y", FLOE_TYPE_LIST, 11},       {"h.y.element", FLOE_TYPE_STRUCT, 12},
        {"h.y.element.z", FLOE_TYPE_STRING, 13}, {"u", FLOE_TYPE_STRING, 14},
        {"n", FLOE_TYPE_STRING, 15},       {"m", FLOE_TYPE_LONG, 16},
        {"empty", FLOE_TYPE_LIST, 17},     {"empty.element", FLOE_TYPE_STRING, 18},
        {"attrs", FLOE_TYPE_MAP, 19},      {"attrs.key", FLOE_TYPE_STRING, 20},
        {"attrs.value", FLOE_TYPE_LONG, 21},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const floe_field *f = floe_schema_find_path(s, want[i].path);
        if (!f) {
            harness_fail(__FILE__, __LINE__, "no field %s", want[i].path);
            continue;
        }
        if (f->type != want[i].type || f->id != want[i].id)
            harness_fail(__FILE__, __LINE__, "%s: %s id %d, want %s id %d", want[i].path,
                         floe_type_name(f->type), (int)f->id, floe_type_name(want[i].type),
                         (int)want[i].id);
        CHECK(f->required == (strcmp(want[i].path, "attrs.key") == 0));
    }
    CHECK_EQ_INT(s->highest_field_id, 21);
    /* the inferred schema takes the sample back, except the minority kind of 'm' */
    floe_shredder *sh = NULL;
    floe_batch b;
    collector rej = {0};
    REQUIRE_OK(floe_shredder_new(s, NULL, &sh, &err), err);
    REQUIRE(floe_batch_init(&b, s) == 0);
    REQUIRE_OK(floe_shredder_feed(sh, (const uint8_t *)input, len, "sample", 1, 0, &b, collect,
                                  &rej, &err),
               err);
    CHECK_EQ_INT(b.nrows, 3);
    REQUIRE(rej.n == 2);
    CHECK_EQ_INT(rej.r[0].line, 2);
    CHECK_EQ_STR(rej.r[1].msg, "field 'm': expected long, found string");
    floe_batch_free(&b);
    floe_shredder_free(sh);
    floe_schema_free(s);
    floe_infer_free(inf);

    /* limits and empty input */
    floe_infer_options opt = {.max_records = 1};
    REQUIRE_OK(floe_infer_new(&opt, &inf, &err), err);
    CHECK_EQ_INT(floe_infer_feed(inf, (const uint8_t *)input, len, &err), 1);
    CHECK_EQ_U64(floe_infer_records(inf), 1);
    floe_infer_free(inf);
    CHECK_EQ_INT(floe_schema_infer((const uint8_t *)"\n[1]\n", 5, NULL, &s, &err), FLOE_EINVALID);
}

/* Lines that start with '{' are parsed speculatively to the end of the chunk (no newline
 * scan first); the results must be exactly those of shredding each line on its own:
 * records broken across lines, blanks and CRs after a record, trailing garbage, two
 * records on a line, a record over the size limit, escapes, keys out of order, unknown
 * and duplicate keys, a last line without newline. */
static void same_colbuf(const floe_colbuf *a, const floe_colbuf *b) {
    CHECK_EQ_INT(a->nlevels, b->nlevels);
    CHECK_EQ_INT(a->nvalues, b->nvalues);
    CHECK_EQ_INT(a->values_len, b->values_len);
    if (a->nlevels != b->nlevels || a->values_len != b->values_len || a->nvalues != b->nvalues)
        return;
    if (a->max_def > 0)
        CHECK(!memcmp(a->def, b->def, a->nlevels * sizeof *a->def));
    if (a->max_rep > 0)
        CHECK(!memcmp(a->rep, b->rep, a->nlevels * sizeof *a->rep));
    CHECK(a->values_len == 0 || !memcmp(a->values, b->values, a->values_len));
    if (!a->width && a->nvalues)
        CHECK(!memcmp(a->offsets, b->offsets, (a->nvalues + 1) * sizeof *a->offsets));
}

TEST(test_speculation_same_as_lines) {
    const char *js = SCHEMA(
        FIELD(1, "a", false, "\"long\"") "," FIELD(2, "n", false, "\"string\"") ","
        FIELD(3, "s", false, "{\"type\":\"struct\",\"fields\":[" FIELD(4, "x", false, "\"int\"") "]}") ","
        FIELD(5, "l", false, "{\"type\":\"list\",\"element-id\":6,\"element-required\":false,\"element\":\"long\"}") ","
        FIELD(7, "a_name_longer_than_16", false, "\"double\""));
    const char *text = "{\"a\":1,\"s\":{\"x\":2},\"l\":[1,2]}\n"
                       "{\"a\":1,\n\"s\":{\"x\":2}}\n"
                       "{\"a\":2}   \r\n"
                       "{\"a\":2} \t \r\r\n"
                       "{\"n\":\"x\ny\"}\n"
                       "{\"a\":3} x\n"
                       "  {\"a\":4}\n"
                       "\n  \r\n"
                       "{\"a\":5,\"l\":[1,\n2]}\n"
                       "{\"a\":6}{\"a\":7}\n"
                       "{\"a\":8,\"n\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n"
                       "{\"a\":9,\"n\":\"\\u00e9\\n\",\"a_name_longer_than_16\":1.5}\n"
                       "{\"unknownkey\":1,\"a\":1}\n"
                       "{ \"a\"  :  11 , \"n\" : \"q\" , \"s\" : { \"x\" : 1 } }\n"
                       "{\"n\":\"z\",\"a\":12,\"s\":null}\n"
                       "{\"a\":1,\"a\":2}\n"
                       "{\"a\":13,\"s\":{\"x\":1}\n"
                       "{\"a\":14,\"n\":\"";
    for (int mode = 0; mode < 2; mode++) {
        floe_shred_options opt = {.max_record = 60,
                                  .unknown = mode ? FLOE_UNKNOWN_IGNORE : FLOE_UNKNOWN_REJECT};
        fixture whole, lines;
        REQUIRE(fx_open(&whole, js, &opt));
        REQUIRE(fx_open(&lines, js, &opt));
        /* the last, unterminated line ends the text: complete it for a last record */
        char buf[2048];
        snprintf(buf, sizeof buf, "%sq\"}", text);
        REQUIRE(fx_feed(&whole, buf) == 0);
        floe_error err;
        int64_t line = 1;
        for (const char *p = buf; *p; line++) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
            REQUIRE(floe_shredder_feed(lines.sh, (const uint8_t *)p, n, "t.ndjson", line,
                                       (int64_t)(p - buf), &lines.batch, collect, &lines.rej,
                                       &err) == 0);
            p += n;
        }
        CHECK_EQ_INT(whole.batch.nrows, lines.batch.nrows);
        CHECK(whole.batch.nrows >= 8);
        for (size_t c = 0; c < whole.batch.ncols; c++)
            same_colbuf(&whole.batch.cols[c], &lines.batch.cols[c]);
        CHECK_EQ_INT(whole.rej.n, lines.rej.n);
        CHECK(whole.rej.n >= 9);
        for (size_t i = 0; i < whole.rej.n && i < lines.rej.n && i < 64; i++) {
            CHECK_EQ_INT(whole.rej.r[i].line, lines.rej.r[i].line);
            CHECK_EQ_INT(whole.rej.r[i].offset, lines.rej.r[i].offset);
            CHECK_EQ_INT(whole.rej.r[i].column, lines.rej.r[i].column);
            CHECK_EQ_INT(whole.rej.r[i].reason, lines.rej.r[i].reason);
            CHECK_EQ_STR(whole.rej.r[i].msg, lines.rej.r[i].msg);
            CHECK_EQ_STR(whole.rej.r[i].record, lines.rej.r[i].record);
        }
        floe_shred_stats a, b;
        floe_shredder_stats(whole.sh, &a);
        floe_shredder_stats(lines.sh, &b);
        CHECK_EQ_U64(a.records_accepted, b.records_accepted);
        CHECK_EQ_U64(a.records_rejected, b.records_rejected);
        CHECK_EQ_U64(a.blank_lines, b.blank_lines);
        CHECK_EQ_U64(a.unknown_fields, b.unknown_fields);
        CHECK_EQ_U64(a.unknown_fields, mode ? 1 : 0);
        fx_close(&whole);
        fx_close(&lines);
    }
}

/* A number token for test_quick_numbers: mostly the shapes the quick path takes (sign,
 * integer part, fraction, up to ~22 digits), and around them the ones it leaves to
 * floe_jnum (exponents, leading zeros, a bare point or minus, text after the number). */
static void quick_token(char *t, size_t cap) {
    static const char *const tails[] = {"", "", "", "", "", "", "x", "5", ".", "e", "e5", "E-3",
                                        ".e1", "-", " ", "]", "0"};
    size_t n = 0;
    if (harness_rndn(3) == 0)
        t[n++] = '-';
    uint32_t nint = harness_rndn(4) == 0 ? harness_rndn(22) : 1 + harness_rndn(10);
    for (uint32_t k = 0; k < nint && n < cap - 40; k++)
        t[n++] = (char)('0' + (k == 0 && harness_rndn(4) ? 1 + harness_rndn(9) : harness_rndn(10)));
    if (harness_rndn(2)) {
        t[n++] = '.';
        uint32_t nfrac = harness_rndn(4) == 0 ? harness_rndn(26) : harness_rndn(8);
        for (uint32_t k = 0; k < nfrac && n < cap - 20; k++)
            t[n++] = (char)('0' + harness_rndn(10));
    }
    const char *tail = harness_rndn(4) == 0 ? tails[harness_rndn(sizeof tails / sizeof *tails)] : "";
    snprintf(t + n, cap - n, "%s", tail);
}

/* Two fixtures of one schema: on with the containers' quick path, off without. */
static bool quick_pair(fixture *on, fixture *off, const char *js) {
    floe_shredder_testing_quick_off(false);
    if (!fx_open(on, js, NULL))
        return false;
    floe_shredder_testing_quick_off(true);
    bool opened = fx_open(off, js, NULL);
    floe_shredder_testing_quick_off(false);
    if (!opened)
        fx_close(on);
    return opened;
}

/* One record through two shredders, quick on and off: the same rejection (reason,
 * column, message) or the same slots. The record holds val as field v (shape 0), as a
 * list's second element (1) or a map's first value (2), beside the valid value other. */
static bool quick_same(fixture *on, fixture *off, int shape, const char *val,
                       const char *other) {
    char rec[320];
    if (shape == 0)
        snprintf(rec, sizeof rec, "{\"v\":%s,\"w\":7}\n", val);
    else if (shape == 1)
        snprintf(rec, sizeof rec, "{\"v\":[%s,%s,null]}\n", other, val);
    else
        snprintf(rec, sizeof rec, "{\"v\":{\"a\":%s,\"b\":%s}}\n", val, other);
    on->rej.n = off->rej.n = 0;
    if (fx_feed(on, rec) < 0 || fx_feed(off, rec) < 0)
        return false;
    bool same = on->rej.n == off->rej.n && on->batch.nrows == off->batch.nrows;
    if (same && on->rej.n)
        same = on->rej.r[0].reason == off->rej.r[0].reason &&
               on->rej.r[0].column == off->rej.r[0].column &&
               !strcmp(on->rej.r[0].msg, off->rej.r[0].msg);
    for (size_t c = 0; same && c < on->batch.ncols; c++) {
        const floe_colbuf *a = &on->batch.cols[c], *b = &off->batch.cols[c];
        same = a->nlevels == b->nlevels && a->nvalues == b->nvalues &&
               a->values_len == b->values_len &&
               (!a->values_len || !memcmp(a->values, b->values, a->values_len)) &&
               (!a->max_def || !a->nlevels ||
                !memcmp(a->def, b->def, a->nlevels * sizeof *a->def)) &&
               (!a->max_rep || !a->nlevels ||
                !memcmp(a->rep, b->rep, a->nlevels * sizeof *a->rep));
    }
    if (!same)
        harness_fail(__FILE__, __LINE__, "%s: quick path differs (rejected %zu / %zu: %s / %s)",
                     rec, on->rej.n, off->rej.n, on->rej.n ? on->rej.r[0].msg : "-",
                     off->rej.n ? off->rej.r[0].msg : "-");
    return same;
}

/* The containers' quick number path (leaf_number_quick) against floe_jnum's, for every
 * leaf type it takes, in a struct, a list and a map: the same values bit for bit, the
 * same rejections, the same bytes consumed (a stray byte after the number is refused the
 * same way). QUICK_ROUNDS sets the random tokens per type (default 4,000). */
TEST(test_quick_numbers) {
    static const char *const types[] = {"\"long\"", "\"int\"", "\"date\"", "\"timestamptz\"",
                                        "\"timestamp_ns\"", "\"double\"", "\"time\"",
                                        "\"decimal(10,2)\"", "\"float\""};
    static const char *const edges[] = {
        "0", "-0", "0.0", "-0.0", "00", "01", "-01", "0.", "-", "-.5", ".5", "1", "-1",
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
        "999999999999999999", "-999999999999999999", "1000000000000000000",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "12345678901234567890", "9007199254740992", "9007199254740993", "9007199254740992.0",
        "900719925474099.3", "0.1234567890123456789", "1.2345678901234567890",
        "0.0000000000000000000001", "0.00000000000000000000001", "1.0", "1.5", "2.50", "1e3",
        "1E3", "1.5e1", "33.052", "-73.015541", "9.88436", "1042.96", "5x", "5 ", "5]"};
    char val[160];
    const char *env = getenv("QUICK_ROUNDS");
    long rounds = env ? atol(env) : 4000;
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        char js[3][512];
        snprintf(js[0], sizeof js[0], SCHEMA(FIELD(1, "v", false, "%s") "," FIELD(2, "w", false, "\"long\"")),
                 types[ti]);
        snprintf(js[1], sizeof js[1],
                 SCHEMA(FIELD(1, "v", false, "{\"type\":\"list\",\"element-id\":3,"
                                             "\"element-required\":false,\"element\":%s}")),
                 types[ti]);
        snprintf(js[2], sizeof js[2],
                 SCHEMA(FIELD(1, "v", false, "{\"type\":\"map\",\"key-id\":3,\"key\":\"string\","
                                             "\"value-id\":4,\"value-required\":true,\"value\":%s}")),
                 types[ti]);
        for (int shape = 0; shape < 3; shape++) {
            fixture on, off;
            REQUIRE(quick_pair(&on, &off, js[shape]));
            harness_rng_seed(0x5eed0000u + ti * 3 + (uint64_t)shape);
            size_t nedge = sizeof edges / sizeof *edges;
            bool ok = true;
            for (long r = 0; ok && r < (long)nedge + rounds; r++) {
                if (r < (long)nedge)
                    snprintf(val, sizeof val, "%s", edges[r]);
                else
                    quick_token(val, sizeof val);
                ok = quick_same(&on, &off, shape, val, "1");
            }
            CHECK(on.batch.nrows > 0);
            fx_close(&on);
            fx_close(&off);
        }
    }
}

/* A JSON string token for test_quick_strings: plain text, escapes (good and bad),
 * multibyte UTF-8 (good and bad), control bytes, an unterminated string, a non-string. */
static void string_token(char *t, size_t cap) {
    static const char *const parts[] = {"a", "hello", " ", "\\n", "\\\"", "\\\\", "\\u00e9",
                                        "\\ud83d\\ude00", "\\ud83d", "\\x", "\\u12", "\xc3\xa9",
                                        "\xe2\x82\xac", "\xc3", "\xff", "\x01", "\t", "0123456789abcdef"};
    size_t n = 0;
    uint32_t kind = harness_rndn(20);
    if (kind == 0) { /* not a string at all */
        snprintf(t, cap, "%s", harness_rndn(2) ? "12" : "true");
        return;
    }
    t[n++] = '"';
    uint32_t np = harness_rndn(8);
    for (uint32_t k = 0; k < np; k++) {
        const char *x = parts[harness_rndn(sizeof parts / sizeof *parts)];
        size_t l = strlen(x);
        if (n + l + 2 >= cap)
            break;
        memcpy(t + n, x, l);
        n += l;
    }
    if (kind != 1) /* kind 1: unterminated */
        t[n++] = '"';
    t[n] = '\0';
}

/* The containers' quick path for string leaves against shred_value's, in a struct, a
 * list and a map: the same bytes, rejections and messages. */
TEST(test_quick_strings) {
    const char *js[3] = {
        SCHEMA(FIELD(1, "v", false, "\"string\"") "," FIELD(2, "w", false, "\"long\"")),
        SCHEMA(FIELD(1, "v", false, "{\"type\":\"list\",\"element-id\":3,"
                                    "\"element-required\":false,\"element\":\"string\"}")),
        SCHEMA(FIELD(1, "v", false, "{\"type\":\"map\",\"key-id\":3,\"key\":\"string\","
                                    "\"value-id\":4,\"value-required\":false,\"value\":\"string\"}"))};
    char val[200];
    for (int shape = 0; shape < 3; shape++) {
        fixture on, off;
        REQUIRE(quick_pair(&on, &off, js[shape]));
        harness_rng_seed(0x57a1u + (uint64_t)shape);
        bool ok = true;
        for (int r = 0; ok && r < 4000; r++) {
            string_token(val, sizeof val);
            ok = quick_same(&on, &off, shape, val, "\"x\"");
        }
        CHECK(on.batch.nrows > 100 && on.rej.n + on.batch.nrows > 0);
        fx_close(&on);
        fx_close(&off);
    }
}

/* Rollback without per-record marks for the columns that are not repeated: records that
 * fail after values, nulls and strings were written in such columns (and in a repeated
 * one), fed in several parts, with and without the speculative parse (COLLECT turns it
 * off), leave the batch as if only the good records had been fed. */
TEST(test_rollback_flat) {
    const char *js = SCHEMA(
        FIELD(1, "a", false, "\"long\"") "," FIELD(2, "s", false, "\"string\"") ","
        FIELD(3, "st", false, "{\"type\":\"struct\",\"fields\":[" FIELD(4, "d", false, "\"double\"") "," FIELD(5, "q", true, "\"string\"") "]}") ","
        FIELD(6, "l", false, "{\"type\":\"list\",\"element-id\":7,\"element-required\":false,\"element\":\"int\"}") ","
        FIELD(8, "last", false, "\"int\""));
    static const char *const good[] = {
        "{\"a\":1,\"s\":\"one\",\"st\":{\"d\":1.5,\"q\":\"x\"},\"l\":[1,2],\"last\":1}\n",
        "{\"a\":null,\"s\":null,\"st\":null,\"last\":2}\n",
        "{\"s\":\"three\",\"l\":[],\"last\":3}\n",
        "{\"a\":4,\"st\":{\"q\":\"yy\"},\"l\":[null,4]}\n"};
    const char *bad[] = {
        "{\"a\":9,\"s\":\"bad\",\"st\":{\"d\":2.5,\"q\":\"z\"},\"l\":[7,8,9],\"last\":\"no\"}\n",
        "{\"a\":null,\"s\":\"bad\",\"st\":{\"d\":null,\"q\":\"zz\"},\"l\":[null],\"last\":1.5}\n",
        "{\"a\":9,\"s\":\"bad\",\"st\":{\"d\":2.5}}\n",
        "{\"s\":\"bad\",\"a\":9,\"a\":10}\n",
        "{\"a\":9,\"s\":\"bad\",\"l\":[1,\"x\"]}\n",
        "{\"a\":9,\"s\":\"bad\",\"st\":{\"d\":2.5,\"q\":\"z\"},\"last\":3,\"zzz\":1}\n",
        "{\"a\":9,\"s\":\"bad\",\"st\":{\"d\":2.5,\"q\":\"z\"},\"last\":3} x\n"};
    for (int mode = 0; mode < 2; mode++) {
        floe_shred_options opt = {.unknown = mode ? FLOE_UNKNOWN_COLLECT : FLOE_UNKNOWN_REJECT};
        if (mode) /* collected, an unknown field does not refuse its record */
            bad[5] = "{\"a\":9,\"s\":\"bad\",\"st\":{\"d\":2.5,\"q\":\"z\"},\"last\":3e10}\n";
        fixture mixed, clean;
        REQUIRE(fx_open(&mixed, js, &opt));
        REQUIRE(fx_open(&clean, js, &opt));
        for (int part = 0; part < 3; part++) {
            char text[4096] = "";
            for (size_t g = 0; g < sizeof good / sizeof *good; g++) {
                strcat(text, bad[(g + (size_t)part) % (sizeof bad / sizeof *bad)]);
                strcat(text, good[g]);
                REQUIRE(fx_feed(&clean, good[g]) == 0);
            }
            strcat(text, bad[(size_t)part]);
            REQUIRE(fx_feed(&mixed, text) == 0);
        }
        CHECK_EQ_INT(mixed.batch.nrows, clean.batch.nrows);
        CHECK_EQ_INT(mixed.rej.n, 15);
        for (size_t c = 0; c < mixed.batch.ncols; c++)
            same_colbuf(&mixed.batch.cols[c], &clean.batch.cols[c]);
        fx_close(&mixed);
        fx_close(&clean);
    }
}

/* Absent fields take their write-default (format/spec.md "Default values"), given in the
 * JSON single-value form (Appendix D): structs by field id ({} = every field's own
 * default), maps as {"keys", "values"}, binary as hex. A present null stays null. */
TEST(test_write_defaults) {
    const char *js =
        "{\"type\":\"struct\",\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"n\",\"required\":true,\"type\":\"int\",\"write-default\":7},"
        "{\"id\":3,\"name\":\"s\",\"required\":false,\"write-default\":{\"5\":\"0a0b\"},\"type\":"
        "{\"type\":\"struct\",\"fields\":["
        "{\"id\":4,\"name\":\"a\",\"required\":false,\"type\":\"string\",\"write-default\":\"A\"},"
        "{\"id\":5,\"name\":\"b\",\"required\":false,\"type\":\"binary\",\"write-default\":\"ff\"}]}},"
        "{\"id\":6,\"name\":\"m\",\"required\":false,\"write-default\":{\"keys\":[3,4],\"values\":[\"x\",null]},"
        "\"type\":{\"type\":\"map\",\"key-id\":7,\"key\":\"int\",\"value-id\":8,\"value\":\"string\","
        "\"value-required\":false}},"
        "{\"id\":9,\"name\":\"d\",\"required\":false,\"type\":\"decimal(5,2)\",\"write-default\":\"1.50\"},"
        "{\"id\":10,\"name\":\"z\",\"required\":false,\"type\":\"int\",\"write-default\":null}]}";
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    REQUIRE(fx_feed(&fx, "{\"id\":1}\n"
                         "{\"id\":2,\"n\":null}\n"
                         "{\"id\":3,\"n\":1,\"s\":{},\"m\":null,\"d\":null}\n"
                         "{\"id\":4,\"s\":null}\n") == 0);
    CHECK_EQ_INT(fx.batch.nrows, 3);
    REQUIRE(fx.rej.n == 1); /* a present null in a required field */
    CHECK_EQ_INT(fx.rej.r[0].reason, FLOE_REJECT_MISSING);
    floe_colbuf *n = col(&fx, "n"), *a = col(&fx, "s.a"), *b = col(&fx, "s.b");
    floe_colbuf *mk = col(&fx, "m.key"), *mv = col(&fx, "m.value"), *d = col(&fx, "d");
    CHECK_EQ_INT(i32_at(n, 0), 7);
    CHECK_EQ_INT(i32_at(n, 1), 1);
    CHECK_EQ_INT(i32_at(n, 2), 7);
    /* row 1: s from its default object (b given, a its own default); row 3: s = {} keeps
     * the fields' defaults; row 4: s null */
    CHECK_LEVELS(a, "2:0 2:0 0:0");
    CHECK_LEVELS(b, "2:0 2:0 0:0");
    char t[32];
    str_at(a, 0, t, sizeof t);
    CHECK_EQ_STR(t, "A");
    CHECK(b->offsets[1] - b->offsets[0] == 2 && !memcmp(b->values, "\x0a\x0b", 2));
    CHECK(b->offsets[2] - b->offsets[1] == 1 && b->values[b->offsets[1]] == (uint8_t)0xff);
    CHECK_LEVELS(mk, "2:0 2:1 0:0 2:0 2:1");
    CHECK_LEVELS(mv, "3:0 2:1 0:0 3:0 2:1");
    CHECK_EQ_INT(i32_at(mk, 0), 3);
    CHECK_LEVELS(d, "1:0 0:0 1:0");
    CHECK_EQ_INT(i32_at(d, 0), 150);
    CHECK_LEVELS(col(&fx, "z"), "0:0 0:0 0:0");
    fx_close(&fx);

    /* a write-default that is not a value of the type: refused when the shredder is made */
    const char *bad = "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"b\",\"required\":false,"
                      "\"type\":\"binary\",\"write-default\":\"0g\"}]}";
    floe_schema *s = NULL;
    floe_shredder *sh = NULL;
    floe_error err;
    REQUIRE_OK(floe_schema_parse(bad, strlen(bad), &s, &err), err);
    CHECK_EQ_INT(floe_shredder_new(s, NULL, &sh, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "write-default") != NULL);
    floe_shredder_free(sh);
    floe_schema_free(s);
}

/* floe_batch_scatter_rows (convert's partition routing) puts each row where
 * floe_batch_take_rows of its run would: nested, repeated, null, string and fixed-width
 * columns, a column of '' only (no value bytes at all), destinations already holding
 * rows, one taking none. */
TEST(test_scatter_rows) {
    const char *js = SCHEMA(
        FIELD(1, "id", true, "\"long\"") "," FIELD(2, "s", false, "\"string\"") ","
        FIELD(3, "d", false, "\"double\"") "," FIELD(4, "i", false, "\"int\"") ","
        FIELD(5, "l", false, "{\"type\":\"list\",\"element-id\":6,\"element-required\":true,"
                             "\"element\":{\"type\":\"struct\",\"fields\":[" FIELD(
                                 7, "a", false, "{\"type\":\"list\",\"element-id\":8,"
                                                "\"element-required\":false,\"element\":\"string\"}") "]}}") ","
        FIELD(9, "m", false, "{\"type\":\"map\",\"key-id\":10,\"key\":\"string\",\"value-id\":11,"
                             "\"value-required\":false,\"value\":\"long\"}") ","
        FIELD(12, "e", false, "\"string\""));
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    static const char *shapes[] = {
        ("\"s\":\"abc\",\"d\":1.5,\"i\":7,\"l\":[{\"a\":[\"x\",null,\"yy\"]},{\"a\":[]},{}],"
         "\"m\":{\"k\":1,\"q\":null}"),
        "\"s\":null,\"l\":[],\"m\":{}",
        "\"s\":\"\",\"d\":-2,\"l\":null,\"m\":null",
        "\"i\":3,\"l\":[{\"a\":null},{\"a\":[\"zzzzzzzzzzzzzzzzzzzz\"]}],\"m\":{\"a\":5}",
    };
    floe_buf text;
    floe_buf_init(&text, 0);
    enum { ROWS = 203, SEED = 5, NDST = 4 };
    for (int r = 0; r < ROWS; r++)
        REQUIRE(floe_buf_printf(&text, "{\"id\":%d,\"e\":\"\",%s}\n", r, shapes[(r * 7 + r / 3) % 4]) == 0);
    REQUIRE(floe_buf_append_byte(&text, 0) == 0);
    REQUIRE(fx_feed(&fx, (const char *)text.data) == 0);
    CHECK_EQ_INT(fx.rej.n, 0);
    REQUIRE(fx.batch.nrows == ROWS);
    /* the batch's first SEED rows go to every destination first (rows already there) */
    floe_batch src, want[NDST], got[NDST], *gp[NDST];
    REQUIRE(floe_batch_init(&src, fx.schema) == 0);
    floe_batch_cursor cur;
    REQUIRE(floe_batch_cursor_init(&cur, &fx.batch) == 0);
    REQUIRE(floe_batch_take_rows(NULL, &fx.batch, &cur, SEED) == 0);
    REQUIRE(floe_batch_take_rows(&src, &fx.batch, &cur, ROWS - SEED) == 0);
    for (int d = 0; d < NDST; d++) {
        REQUIRE(floe_batch_init(&want[d], fx.schema) == 0);
        REQUIRE(floe_batch_init(&got[d], fx.schema) == 0);
        floe_batch_cursor c0;
        REQUIRE(floe_batch_cursor_init(&c0, &fx.batch) == 0);
        REQUIRE(floe_batch_take_rows(&want[d], &fx.batch, &c0, SEED) == 0);
        floe_batch_cursor_free(&c0);
        REQUIRE(floe_batch_cursor_init(&c0, &fx.batch) == 0);
        REQUIRE(floe_batch_take_rows(&got[d], &fx.batch, &c0, SEED) == 0);
        floe_batch_cursor_free(&c0);
        gp[d] = &got[d];
    }
    /* runs of 1 to 4 rows, destination 2 never chosen */
    uint32_t part[ROWS];
    for (size_t r = 0; r < src.nrows; r++)
        part[r] = (uint32_t)((r / (1 + r % 4) * 5) % 3 == 2 ? 3 : (r / (1 + r % 4) * 5) % 3);
    CHECK_EQ_INT(floe_batch_scatter_rows(gp, NDST, &src, part), 0);
    floe_batch_cursor c1;
    REQUIRE(floe_batch_cursor_init(&c1, &src) == 0);
    for (size_t r = 0; r < src.nrows;) {
        size_t e = r + 1;
        while (e < src.nrows && part[e] == part[r])
            e++;
        REQUIRE(floe_batch_take_rows(&want[part[r]], &src, &c1, e - r) == 0);
        r = e;
    }
    floe_batch_cursor_free(&c1);
    size_t total = 0;
    for (int d = 0; d < NDST; d++) {
        CHECK_EQ_INT(got[d].nrows, want[d].nrows);
        total += got[d].nrows - SEED;
        for (size_t i = 0; i < fx.batch.ncols; i++)
            same_colbuf(&got[d].cols[i], &want[d].cols[i]);
    }
    CHECK_EQ_INT(got[2].nrows, SEED);
    CHECK_EQ_INT(total, ROWS - SEED);
    /* a part out of range is refused */
    part[7] = NDST;
    CHECK_EQ_INT(floe_batch_scatter_rows(gp, NDST, &src, part), FLOE_EINVALID);
    for (int d = 0; d < NDST; d++) {
        floe_batch_free(&want[d]);
        floe_batch_free(&got[d]);
    }
    floe_batch_cursor_free(&cur);
    floe_batch_free(&src);
    floe_buf_free(&text);
    fx_close(&fx);
}

/* floe_batch_take_kept (a rewrite's rows left by deletes) appends exactly what
 * floe_batch_take_rows of the kept and dropped runs does: flat columns (a required one,
 * optional int and long ones never null,
 * nulls, strings, '' values only, a struct member) by their own path, repeated ones through
 * the cursor; keep patterns of every row, none, every tenth dropped, alternating, runs
 * and a lone row, into destinations already holding rows. */
static void take_kept_same(const char *js, const char *const *shapes, size_t nshapes,
                           bool dense_cols) {
    fixture fx;
    REQUIRE(fx_open(&fx, js, NULL));
    floe_buf text;
    floe_buf_init(&text, 0);
    enum { ROWS = 211, SEED = 3, NPAT = 7 };
    for (int r = 0; r < ROWS; r++) {
        if (dense_cols) /* optional, never null: the dense path with levels */
            REQUIRE(floe_buf_printf(&text, "{\"k\":%d,\"q\":%lld,", r * 3 - 100,
                                    (long long)r * 1000003 - 7) == 0);
        else
            REQUIRE(floe_buf_append_byte(&text, '{') == 0);
        REQUIRE(floe_buf_printf(&text, "\"id\":%d,\"e\":\"\",%s}\n", r,
                                shapes[(size_t)(r * 7 + r / 3) % nshapes]) == 0);
    }
    REQUIRE(floe_buf_append_byte(&text, 0) == 0);
    REQUIRE(fx_feed(&fx, (const char *)text.data) == 0);
    CHECK_EQ_INT(fx.rej.n, 0);
    REQUIRE(fx.batch.nrows == ROWS);
    uint8_t keep[ROWS];
    for (int pat = 0; pat < NPAT; pat++) {
        for (int r = 0; r < ROWS; r++)
            keep[r] = pat == 0   ? 1
                      : pat == 1 ? 0
                      : pat == 2 ? r % 10 != 0
                      : pat == 3 ? (uint8_t)(r & 1) * 3
                      : pat == 4 ? (r / 7) % 3 != 1
                      : pat == 5 ? r == 100
                                 : ((r * 2654435761u) >> 7) % 5 != 0;
        floe_batch want, got;
        REQUIRE(floe_batch_init(&want, fx.schema) == 0);
        REQUIRE(floe_batch_init(&got, fx.schema) == 0);
        floe_batch_cursor c0;
        REQUIRE(floe_batch_cursor_init(&c0, &fx.batch) == 0);
        REQUIRE(floe_batch_take_rows(&want, &fx.batch, &c0, SEED) == 0);
        floe_batch_cursor_free(&c0);
        REQUIRE(floe_batch_cursor_init(&c0, &fx.batch) == 0);
        REQUIRE(floe_batch_take_rows(&got, &fx.batch, &c0, SEED) == 0);
        floe_batch_cursor_free(&c0);
        REQUIRE(floe_batch_cursor_init(&c0, &fx.batch) == 0);
        for (size_t r = 0; r < ROWS;) {
            size_t e = r + 1;
            while (e < ROWS && !keep[e] == !keep[r])
                e++;
            REQUIRE(floe_batch_take_rows(keep[r] ? &want : NULL, &fx.batch, &c0, e - r) == 0);
            r = e;
        }
        floe_batch_cursor_free(&c0);
        CHECK_EQ_INT(floe_batch_take_kept(&got, &fx.batch, keep), 0);
        CHECK_EQ_INT(got.nrows, want.nrows);
        for (size_t i = 0; i < fx.batch.ncols; i++)
            same_colbuf(&got.cols[i], &want.cols[i]);
        floe_batch_free(&want);
        floe_batch_free(&got);
    }
    floe_buf_free(&text);
    fx_close(&fx);
}

TEST(test_take_kept) {
    static const char *flat[] = {
        "\"s\":\"abc\",\"d\":1.5,\"i\":7,\"t\":{\"x\":\"q\"}",
        "\"s\":null,\"t\":null",
        "\"s\":\"\",\"d\":-2,\"t\":{}",
        "\"i\":3,\"s\":\"zzzzzzzzzzzzzzzzzzzzzzzzz\",\"t\":{\"x\":\"\"}",
    };
    take_kept_same(SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "s", false, "\"string\"") ","
                          FIELD(3, "d", false, "\"double\"") "," FIELD(4, "i", false, "\"int\"") ","
                          FIELD(5, "t", false, "{\"type\":\"struct\",\"fields\":[" FIELD(
                                                   6, "x", false, "\"string\"") "]}") ","
                          FIELD(12, "e", false, "\"string\"") "," FIELD(13, "k", false, "\"int\"") ","
                          FIELD(14, "q", false, "\"long\"")),
                   flat, 4, true);
    static const char *nested[] = {
        "\"s\":\"abc\",\"l\":[{\"a\":[\"x\",null,\"yy\"]},{\"a\":[]},{}]",
        "\"s\":null,\"l\":[]",
        "\"s\":\"\",\"l\":null",
        "\"l\":[{\"a\":null},{\"a\":[\"zzzzzzzzzzzzzzzzzzzz\"]}]",
    };
    take_kept_same(SCHEMA(FIELD(1, "id", true, "\"long\"") "," FIELD(2, "s", false, "\"string\"") ","
                          FIELD(5, "l", false, "{\"type\":\"list\",\"element-id\":6,\"element-required\":true,"
                                               "\"element\":{\"type\":\"struct\",\"fields\":[" FIELD(
                                                   7, "a", false, "{\"type\":\"list\",\"element-id\":8,"
                                                                  "\"element-required\":false,\"element\":\"string\"}") "]}}") ","
                          FIELD(12, "e", false, "\"string\"")),
                   nested, 4, false);
}

int main(void) {
    RUN(test_flat);
    RUN(test_take_kept);
    RUN(test_sparse_keys);
    RUN(test_stamp_past_2_32);
    RUN(test_levels_nested);
    RUN(test_reject_reasons);
    RUN(test_coerce_integers);
    RUN(test_coerce_floats);
    RUN(test_double_digits);
    RUN(test_coerce_decimal);
    RUN(test_coerce_time);
    RUN(test_coerce_bytes);
    RUN(test_map_keys);
    RUN(test_write_defaults);
    RUN(test_unknown_policies);
    RUN(test_rollback);
    RUN(test_array_body);
    RUN(test_array_body_in_parts);
    RUN(test_depth_limit);
    RUN(test_alloc_failure);
    RUN(test_infer);
    RUN(test_speculation_same_as_lines);
    RUN(test_quick_numbers);
    RUN(test_quick_strings);
    RUN(test_rollback_flat);
    RUN(test_scatter_rows);
    return harness_finish();
}
