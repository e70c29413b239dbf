/*
 * test_partition.c - transforms, hashing, single-value serialization, partition specs,
 * sort orders, partition paths and inclusive projection.
 *
 * Vectors come from apache/iceberg format/spec.md (Appendix B hash values, the truncate
 * examples, the JSON examples of Appendix C/D). Java-compatibility strings (paths, human
 * values) follow Iceberg's reference TransformUtil / PartitionSpec.partitionToPath.
 */
#include <math.h>
#include <stdlib.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "harness.h"
#include "common/testing.h"

/* ---- helpers ------------------------------------------------------------------------- */

static floe_buf tbuf;

/* The buffer's text, NUL-terminated without changing its length. */
static const char *bstr(floe_buf *b) {
    if (floe_buf_reserve(b, 1) < 0)
        return "(oom)";
    b->data[b->len] = '\0';
    return (const char *)b->data;
}

static const char *human(floe_transform t, floe_value v) {
    floe_error err;
    floe_buf_reset(&tbuf);
    if (floe_transform_human_string(t, &v, &tbuf, &err) < 0)
        return "(error)";
    return bstr(&tbuf);
}

static const char *to_json(floe_value v) {
    floe_error err;
    floe_buf_reset(&tbuf);
    if (floe_value_to_json(&v, &tbuf, &err) < 0)
        return "(error)";
    return bstr(&tbuf);
}

static int32_t hash_of(floe_value v) {
    floe_error err;
    int32_t h = 0;
    CHECK_OK(floe_value_hash(&v, &h, &err), err);
    return h;
}

static floe_value apply(floe_transform t, floe_value v) {
    floe_error err;
    floe_value r = floe_value_null(FLOE_TYPE_INT);
    CHECK_OK(floe_transform_apply(t, &v, &r, &err), err);
    return r;
}

static const floe_transform XF_ID = {FLOE_XF_IDENTITY, 0};
static const floe_transform XF_YEAR = {FLOE_XF_YEAR, 0};
static const floe_transform XF_MONTH = {FLOE_XF_MONTH, 0};
static const floe_transform XF_DAY = {FLOE_XF_DAY, 0};
static const floe_transform XF_HOUR = {FLOE_XF_HOUR, 0};
static const floe_transform XF_VOID = {FLOE_XF_VOID, 0};
static floe_transform bucket(int n) { return (floe_transform){FLOE_XF_BUCKET, n}; }
static floe_transform trunc_(int w) { return (floe_transform){FLOE_XF_TRUNCATE, w}; }

static int64_t days_of(int y, unsigned m, unsigned d) { return floe_days_from_civil(y, m, d); }
static int64_t micros_of(int y, unsigned mo, unsigned d, int h, int mi, int s, int us) {
    return ((days_of(y, mo, d) * 24 + h) * 60 + mi) * 60 * 1000000ll + s * 1000000ll + us;
}

static const char *SCHEMA_JSON =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"event_type\",\"required\":true,\"type\":\"string\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":true,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"user_id\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":4,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":6,\"name\":\"amount\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":7,\"name\":\"device\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":8,\"name\":\"os\",\"required\":false,\"type\":\"string\"}]}},"
    "{\"id\":9,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":10,\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":11,\"name\":\"x\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":12,\"name\":\"flag\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":13,\"name\":\"ratio\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":14,\"name\":\"blob\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":15,\"name\":\"tsn\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":16,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":17,\"name\":\"t\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":18,\"name\":\"odd `name`\",\"required\":false,\"type\":\"string\"}"
    "]}";

static floe_schema *test_schema(void) {
    floe_error err;
    floe_schema *s = NULL;
    int rc = floe_schema_parse(SCHEMA_JSON, strlen(SCHEMA_JSON), &s, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "schema parse: %s", err.msg);
    return s;
}

/* ---- Appendix B ------------------------------------------------------------------------ */

TEST(test_murmur3_raw) {
    /* the empty input with seed 0 hashes to 0; seed 1 to 0x514E28B7 (algorithm check) */
    CHECK_EQ_U64(floe_murmur3_32("", 0, 0), 0);
    CHECK_EQ_U64(floe_murmur3_32("", 0, 1), 0x514E28B7u);
    /* tails of 1, 2, 3 bytes each take their own path */
    CHECK(floe_murmur3_32("a", 1, 0) != floe_murmur3_32("ab", 2, 0));
    CHECK(floe_murmur3_32("abc", 3, 0) != floe_murmur3_32("abcd", 4, 0));
}

TEST(test_hash_spec_vectors) {
    CHECK_EQ_INT(hash_of(floe_value_int(34)), 2017239379);
    CHECK_EQ_INT(hash_of(floe_value_long(34)), 2017239379);
    CHECK_EQ_INT(hash_of(floe_value_decimal(1420, 4, 2)), -500754589); /* 14.20 */
    CHECK_EQ_INT(hash_of(floe_value_date((int32_t)days_of(2017, 11, 16))), -653330422);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIME, (22 * 3600 + 31 * 60 + 8) * 1000000ll)),
                 -662762989);
    int64_t ts = micros_of(2017, 11, 16, 22, 31, 8, 0);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP, ts)), -2047944441);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP, ts + 1)), -1207196810);
    /* 2017-11-16T14:31:08-08:00 is the same instant */
    int64_t tz = micros_of(2017, 11, 16, 14, 31, 8, 0) + 8 * 3600 * 1000000ll;
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, tz)), -2047944441);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, tz + 1)), -1207196810);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, ts * 1000)), -2047944441);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, ts * 1000 + 1001)), -1207196810);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMPTZ_NS, tz * 1000)), -2047944441);
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMPTZ_NS, tz * 1000 + 1001)),
                 -1207196810);
    CHECK_EQ_INT(hash_of(floe_value_string("iceberg", 7)), 1210000089);
    static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                     0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    CHECK_EQ_INT(hash_of(floe_value_uuid(uuid)), 1488055340);
    static const uint8_t b4[4] = {0, 1, 2, 3};
    CHECK_EQ_INT(hash_of(floe_value_fixed(b4, 4)), -188683207);
    CHECK_EQ_INT(hash_of(floe_value_binary(b4, 4)), -188683207);
    /* second table: types that are not bucketed but have a defined hash */
    CHECK_EQ_INT(hash_of(floe_value_bool(true)), 1392991556);
    CHECK_EQ_INT(hash_of(floe_value_float(1.0f)), -142385009);
    CHECK_EQ_INT(hash_of(floe_value_float(0.0f)), 1669671676);
    CHECK_EQ_INT(hash_of(floe_value_float(-0.0f)), 1669671676);
    CHECK_EQ_INT(hash_of(floe_value_double(1.0)), -142385009);
    CHECK_EQ_INT(hash_of(floe_value_double(0.0)), 1669671676);
    CHECK_EQ_INT(hash_of(floe_value_double(-0.0)), 1669671676);
    /* every NaN is canonicalized */
    CHECK_EQ_INT(hash_of(floe_value_double(NAN)), hash_of(floe_value_double(-NAN)));
    /* nanos convert to micros with floor semantics: -1 ns is the micro -1 */
    CHECK_EQ_INT(hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, -1)),
                 hash_of(floe_value_i64(FLOE_TYPE_TIMESTAMP, -1)));
    /* decimal hashing ignores the scale and uses minimal bytes */
    CHECK_EQ_INT(hash_of(floe_value_decimal(1420, 38, 5)), -500754589);
    floe_error err;
    int32_t h;
    floe_value nul = floe_value_null(FLOE_TYPE_INT);
    CHECK_EQ_INT(floe_value_hash(&nul, &h, &err), FLOE_EINVALID);
}

TEST(test_bucket) {
    CHECK_EQ_INT(apply(bucket(100), floe_value_long(34)).v.i32, 79);
    CHECK_EQ_INT(apply(bucket(100), floe_value_int(34)).v.i32, 79);
    CHECK_EQ_INT(apply(bucket(1000), floe_value_string("iceberg", 7)).v.i32, 1210000089 % 1000);
    CHECK(apply(bucket(16), floe_value_long(34)).type == FLOE_TYPE_INT);
    /* (hash & INT_MAX) % N: -500754589 & 0x7fffffff = 1646729059 */
    CHECK_EQ_INT(apply(bucket(1000), floe_value_decimal(1420, 9, 2)).v.i32, 1646729059 % 1000);
    CHECK(apply(bucket(16), floe_value_null(FLOE_TYPE_LONG)).is_null);
    /* every result in [0, N) */
    for (int64_t v = -5000; v < 5000; v += 7) {
        int32_t b = apply(bucket(7), floe_value_long(v * 1000003)).v.i32;
        CHECK(b >= 0 && b < 7);
    }
    floe_error err;
    floe_value out, f = floe_value_double(1.0);
    CHECK_EQ_INT(floe_transform_apply(bucket(4), &f, &out, &err), FLOE_EINVALID);
    floe_value bo = floe_value_bool(true);
    CHECK_EQ_INT(floe_transform_apply(bucket(4), &bo, &out, &err), FLOE_EINVALID);
}

/* ---- truncate ---------------------------------------------------------------------------- */

TEST(test_truncate) {
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(1)).v.i32, 0);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(-1)).v.i32, -10);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(-10)).v.i32, -10);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(-11)).v.i32, -20);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(19)).v.i32, 10);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_long(1)).v.i64, 0);
    CHECK_EQ_INT(apply(trunc_(10), floe_value_long(-1)).v.i64, -10);
    CHECK_EQ_INT(apply(trunc_(3), floe_value_long(-7)).v.i64, -9);
    CHECK_EQ_INT(apply(trunc_(1), floe_value_long(-7)).v.i64, -7);
    /* the reference wraps (32-bit arithmetic) within W of the minimum; so does floe */
    CHECK_EQ_INT(apply(trunc_(10), floe_value_int(INT32_MIN + 1)).v.i32, 2147483646);
    /* decimal: W=50, scale 2: 10.65 -> 10.50; negative values go down */
    floe_value d = apply(trunc_(50), floe_value_decimal(1065, 9, 2));
    CHECK(d.type == FLOE_TYPE_DECIMAL && d.v.dec.unscaled == 1050 && d.v.dec.scale == 2);
    CHECK(apply(trunc_(50), floe_value_decimal(-1065, 9, 2)).v.dec.unscaled == -1100);
    CHECK(apply(trunc_(10), floe_value_decimal(12345, 9, 2)).v.dec.unscaled == 12340);
    /* strings: code points, not bytes */
    floe_value s = apply(trunc_(3), floe_value_string("iceberg", 7));
    CHECK(s.type == FLOE_TYPE_STRING && s.v.bytes.n == 3 && !memcmp(s.v.bytes.p, "ice", 3));
    const char *cn = "\xe6\xb5\x8b\xe8\xaf\x95"; /* 测试: two 3-byte code points */
    CHECK_EQ_INT(apply(trunc_(1), floe_value_string(cn, 6)).v.bytes.n, 3);
    CHECK_EQ_INT(apply(trunc_(2), floe_value_string(cn, 6)).v.bytes.n, 6);
    CHECK_EQ_INT(apply(trunc_(6), floe_value_string(cn, 6)).v.bytes.n, 6);
    const char *mix = "a\xc3\xa9\xf0\x9f\x98\x80z"; /* a é 😀 z */
    CHECK_EQ_INT(apply(trunc_(1), floe_value_string(mix, 8)).v.bytes.n, 1);
    CHECK_EQ_INT(apply(trunc_(2), floe_value_string(mix, 8)).v.bytes.n, 3);
    CHECK_EQ_INT(apply(trunc_(3), floe_value_string(mix, 8)).v.bytes.n, 7);
    CHECK_EQ_INT(apply(trunc_(4), floe_value_string(mix, 8)).v.bytes.n, 8);
    CHECK_EQ_INT(apply(trunc_(5), floe_value_string("", 0)).v.bytes.n, 0);
    /* binary: bytes, even when they spell UTF-8 */
    static const uint8_t b5[5] = {1, 2, 3, 4, 5};
    floe_value b = apply(trunc_(3), floe_value_binary(b5, 5));
    CHECK(b.type == FLOE_TYPE_BINARY && b.v.bytes.n == 3 && b.v.bytes.p == b5);
    CHECK_EQ_INT(apply(trunc_(4), floe_value_binary(cn, 6)).v.bytes.n, 4);
    CHECK(apply(trunc_(4), floe_value_null(FLOE_TYPE_STRING)).is_null);
    floe_error err;
    floe_value out, dt = floe_value_date(3);
    CHECK_EQ_INT(floe_transform_apply(trunc_(4), &dt, &out, &err), FLOE_EINVALID);
}

/* ---- time transforms -------------------------------------------------------------------- */

TEST(test_calendar) {
    CHECK_EQ_INT(days_of(1970, 1, 1), 0);
    CHECK_EQ_INT(days_of(2000, 3, 1), 11017);
    CHECK_EQ_INT(days_of(1900, 1, 1), -25567);
    CHECK_EQ_INT(days_of(1, 1, 1), -719162);
    CHECK_EQ_INT(days_of(2017, 11, 16), 17486);
    for (int64_t d = -1000000; d <= 1000000; d += 37) {
        int64_t y;
        unsigned m, dd;
        floe_civil_from_days(d, &y, &m, &dd);
        if (floe_days_from_civil(y, m, dd) != d) {
            CHECK_EQ_INT(floe_days_from_civil(y, m, dd), d);
            break;
        }
    }
}

TEST(test_time_transforms) {
    int64_t us = micros_of(2026, 10, 6, 12, 34, 56, 789);
    floe_value ts = floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, us);
    floe_value y = apply(XF_YEAR, ts), m = apply(XF_MONTH, ts), d = apply(XF_DAY, ts),
               h = apply(XF_HOUR, ts);
    CHECK(y.type == FLOE_TYPE_INT && m.type == FLOE_TYPE_INT && d.type == FLOE_TYPE_DATE &&
          h.type == FLOE_TYPE_INT);
    CHECK_EQ_INT(y.v.i32, 56);
    CHECK_EQ_INT(m.v.i32, 56 * 12 + 9);
    CHECK_EQ_INT(d.v.i32, days_of(2026, 10, 6));
    CHECK_EQ_INT(h.v.i32, days_of(2026, 10, 6) * 24 + 12);
    CHECK_EQ_STR(human(XF_YEAR, y), "2026");
    CHECK_EQ_STR(human(XF_MONTH, m), "2026-10");
    CHECK_EQ_STR(human(XF_DAY, d), "2026-10-06");
    CHECK_EQ_STR(human(XF_HOUR, h), "2026-10-06-12");
    /* one microsecond before the epoch */
    floe_value neg = floe_value_i64(FLOE_TYPE_TIMESTAMP, -1);
    CHECK_EQ_INT(apply(XF_YEAR, neg).v.i32, -1);
    CHECK_EQ_INT(apply(XF_MONTH, neg).v.i32, -1);
    CHECK_EQ_INT(apply(XF_DAY, neg).v.i32, -1);
    CHECK_EQ_INT(apply(XF_HOUR, neg).v.i32, -1);
    CHECK_EQ_STR(human(XF_YEAR, apply(XF_YEAR, neg)), "1969");
    CHECK_EQ_STR(human(XF_MONTH, apply(XF_MONTH, neg)), "1969-12");
    CHECK_EQ_STR(human(XF_DAY, apply(XF_DAY, neg)), "1969-12-31");
    CHECK_EQ_STR(human(XF_HOUR, apply(XF_HOUR, neg)), "1969-12-31-23");
    /* exact boundaries */
    CHECK_EQ_INT(apply(XF_DAY, floe_value_i64(FLOE_TYPE_TIMESTAMP, -86400000000ll)).v.i32, -1);
    CHECK_EQ_INT(apply(XF_DAY, floe_value_i64(FLOE_TYPE_TIMESTAMP, -86400000001ll)).v.i32, -2);
    CHECK_EQ_INT(apply(XF_HOUR, floe_value_i64(FLOE_TYPE_TIMESTAMP, -3600000000ll)).v.i32, -1);
    CHECK_EQ_INT(apply(XF_HOUR, floe_value_i64(FLOE_TYPE_TIMESTAMP, -3600000001ll)).v.i32, -2);
    /* 1900-03-01: months and years before 1970 */
    floe_value old = floe_value_date((int32_t)days_of(1900, 3, 1));
    CHECK_EQ_INT(apply(XF_YEAR, old).v.i32, -70);
    CHECK_EQ_INT(apply(XF_MONTH, old).v.i32, -70 * 12 + 2);
    CHECK_EQ_STR(human(XF_MONTH, apply(XF_MONTH, old)), "1900-03");
    CHECK_EQ_INT(apply(XF_DAY, old).v.i32, old.v.i32);
    CHECK_EQ_INT(apply(XF_YEAR, floe_value_date(-1)).v.i32, -1);
    CHECK_EQ_INT(apply(XF_MONTH, floe_value_date(-1)).v.i32, -1);
    CHECK_EQ_INT(apply(XF_MONTH, floe_value_date(-31)).v.i32, -1);
    CHECK_EQ_INT(apply(XF_MONTH, floe_value_date(-32)).v.i32, -2);
    /* nanosecond timestamps */
    floe_value ns = floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, us * 1000 + 999);
    CHECK_EQ_INT(apply(XF_HOUR, ns).v.i32, h.v.i32);
    CHECK_EQ_INT(apply(XF_DAY, floe_value_i64(FLOE_TYPE_TIMESTAMPTZ_NS, -1)).v.i32, -1);
    /* hour of a date is not defined */
    floe_error err;
    floe_value out, dv = floe_value_date(0);
    CHECK_EQ_INT(floe_transform_apply(XF_HOUR, &dv, &out, &err), FLOE_EINVALID);
    /* hour beyond the int range is an error, not a wrapped value */
    floe_value far = floe_value_i64(FLOE_TYPE_TIMESTAMP, INT64_MAX);
    CHECK_EQ_INT(floe_transform_apply(XF_HOUR, &far, &out, &err), FLOE_EINVALID);
    /* year 0 and earlier render as java's %04d does */
    CHECK_EQ_STR(human(XF_YEAR, floe_value_int(-1971)), "-001");
    CHECK_EQ_STR(human(XF_YEAR, floe_value_null(FLOE_TYPE_INT)), "null");
    /* void: always null, whatever the input */
    floe_value v = apply(XF_VOID, floe_value_long(5));
    CHECK(v.is_null && v.type == FLOE_TYPE_LONG);
    CHECK_EQ_STR(human(XF_VOID, floe_value_long(5)), "null");
}

TEST(test_transform_names_and_types) {
    floe_error err;
    floe_transform t;
    char buf[32];
    CHECK_OK(floe_transform_parse("bucket[16]", &t, &err), err);
    CHECK(t.kind == FLOE_XF_BUCKET && t.param == 16);
    CHECK_EQ_STR(floe_transform_name(t, buf, sizeof buf), "bucket[16]");
    CHECK_OK(floe_transform_parse("Truncate[4]", &t, &err), err);
    CHECK(t.kind == FLOE_XF_TRUNCATE && t.param == 4);
    CHECK_OK(floe_transform_parse("DAY", &t, &err), err);
    CHECK(t.kind == FLOE_XF_DAY);
    CHECK_OK(floe_transform_parse("zorder", &t, &err), err);
    CHECK(t.kind == FLOE_XF_UNKNOWN);
    CHECK_OK(floe_transform_parse("bucket[x]", &t, &err), err);
    CHECK(t.kind == FLOE_XF_UNKNOWN);
    CHECK_EQ_INT(floe_transform_parse("bucket[0]", &t, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_transform_parse("truncate[99999999999]", &t, &err), FLOE_EINVALID);
    /* source types per the spec table */
    CHECK(floe_transform_accepts(bucket(2), FLOE_TYPE_UUID));
    CHECK(floe_transform_accepts(bucket(2), FLOE_TYPE_TIMESTAMPTZ_NS));
    CHECK(!floe_transform_accepts(bucket(2), FLOE_TYPE_FLOAT));
    CHECK(!floe_transform_accepts(trunc_(2), FLOE_TYPE_FIXED));
    CHECK(!floe_transform_accepts(trunc_(2), FLOE_TYPE_UUID));
    CHECK(floe_transform_accepts(XF_DAY, FLOE_TYPE_DATE));
    CHECK(!floe_transform_accepts(XF_HOUR, FLOE_TYPE_DATE));
    CHECK(!floe_transform_accepts(XF_YEAR, FLOE_TYPE_TIME));
    CHECK(!floe_transform_accepts(XF_ID, FLOE_TYPE_STRUCT));
    CHECK(floe_transform_accepts(XF_VOID, FLOE_TYPE_STRING));
    CHECK(floe_transform_result_type(XF_DAY, FLOE_TYPE_TIMESTAMP) == FLOE_TYPE_DATE);
    CHECK(floe_transform_result_type(XF_MONTH, FLOE_TYPE_DATE) == FLOE_TYPE_INT);
    CHECK(floe_transform_result_type(trunc_(3), FLOE_TYPE_STRING) == FLOE_TYPE_STRING);
    CHECK(floe_transform_result_type(bucket(3), FLOE_TYPE_STRING) == FLOE_TYPE_INT);
}

/* ---- human strings ------------------------------------------------------------------------ */

TEST(test_human_strings) {
    CHECK_EQ_STR(human(XF_ID, floe_value_bool(true)), "true");
    CHECK_EQ_STR(human(XF_ID, floe_value_long(-42)), "-42");
    CHECK_EQ_STR(human(XF_ID, floe_value_decimal(1420, 9, 2)), "14.20");
    CHECK_EQ_STR(human(XF_ID, floe_value_decimal(-5, 9, 2)), "-0.05");
    CHECK_EQ_STR(human(XF_ID, floe_value_decimal(1, 9, 7)), "1E-7");
    CHECK_EQ_STR(human(XF_ID, floe_value_decimal(123, 9, 8)), "0.00000123");
    CHECK_EQ_STR(human(XF_ID, floe_value_decimal(2, 9, -20)), "2E+20");
    CHECK_EQ_STR(human(XF_ID, floe_value_float(1.0f)), "1.0");
    CHECK_EQ_STR(human(XF_ID, floe_value_float(0.1f)), "0.1");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(0.1)), "0.1");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(1e10)), "1.0E10");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(1234567.0)), "1234567.0");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(12345678.0)), "1.2345678E7");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(0.001)), "0.001");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(0.0001)), "1.0E-4");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(-0.0)), "-0.0");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(NAN)), "NaN");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(-INFINITY)), "-Infinity");
    CHECK_EQ_STR(human(XF_ID, floe_value_double(4.9e-324)), "4.9E-324");
    CHECK_EQ_STR(human(XF_ID, floe_value_date((int32_t)days_of(2017, 11, 16))), "2017-11-16");
    /* time as java.time.LocalTime.toString */
    int64_t t0 = (22 * 3600 + 31 * 60) * 1000000ll;
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIME, t0)), "22:31");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIME, t0 + 8000000)), "22:31:08");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIME, t0 + 8100000)), "22:31:08.100");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIME, t0 + 8000001)), "22:31:08.000001");
    /* timestamps as ISO_LOCAL_DATE_TIME (shortest fraction), tz with +00:00 */
    int64_t ts = micros_of(2017, 11, 16, 22, 31, 8, 0);
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIMESTAMP, ts)), "2017-11-16T22:31:08");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIMESTAMP, ts + 120000)),
                 "2017-11-16T22:31:08.12");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, ts + 1)),
                 "2017-11-16T22:31:08.000001+00:00");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIMESTAMP, -1)),
                 "1969-12-31T23:59:59.999999");
    CHECK_EQ_STR(human(XF_ID, floe_value_i64(FLOE_TYPE_TIMESTAMPTZ_NS, ts * 1000 + 1)),
                 "2017-11-16T22:31:08.000000001+00:00");
    static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                     0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    CHECK_EQ_STR(human(XF_ID, floe_value_uuid(uuid)), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
    CHECK_EQ_STR(human(XF_ID, floe_value_binary("\x00\x01\x02\x03", 4)), "AAECAw==");
    CHECK_EQ_STR(human(XF_ID, floe_value_binary("ab", 2)), "YWI=");
    CHECK_EQ_STR(human(XF_ID, floe_value_fixed("abc", 3)), "YWJj");
    CHECK_EQ_STR(human(trunc_(3), floe_value_string("ice", 3)), "ice");
    CHECK_EQ_STR(human(bucket(3), floe_value_int(2)), "2");
    CHECK_EQ_STR(human(XF_ID, floe_value_null(FLOE_TYPE_STRING)), "null");
}

/* ---- single values ------------------------------------------------------------------------ */

static floe_field ftype(floe_type_id t, int32_t precision, int32_t scale, int32_t length) {
    floe_field f;
    memset(&f, 0, sizeof f);
    f.id = 1;
    f.type = t;
    f.precision = precision;
    f.scale = scale;
    f.length = length;
    return f;
}

static void binary_roundtrip(floe_field type, floe_value v, const char *hex) {
    floe_error err;
    floe_buf_reset(&tbuf);
    CHECK_OK(floe_value_to_binary(&v, &tbuf, &err), err);
    char got[128] = "";
    for (size_t i = 0; i < tbuf.len && i < 60; i++)
        snprintf(got + 2 * i, 3, "%02x", tbuf.data[i]);
    CHECK_EQ_STR(got, hex);
    floe_value back;
    uint8_t copy[64];
    memcpy(copy, tbuf.data, tbuf.len < 64 ? tbuf.len : 64);
    CHECK_OK(floe_value_from_binary(&type, copy, tbuf.len, &back, &err), err);
    CHECK(floe_value_equal(&v, &back));
}

TEST(test_binary_single_value) {
    binary_roundtrip(ftype(FLOE_TYPE_BOOLEAN, 0, 0, 0), floe_value_bool(true), "01");
    binary_roundtrip(ftype(FLOE_TYPE_BOOLEAN, 0, 0, 0), floe_value_bool(false), "00");
    binary_roundtrip(ftype(FLOE_TYPE_INT, 0, 0, 0), floe_value_int(34), "22000000");
    binary_roundtrip(ftype(FLOE_TYPE_INT, 0, 0, 0), floe_value_int(-2), "feffffff");
    binary_roundtrip(ftype(FLOE_TYPE_LONG, 0, 0, 0), floe_value_long(34), "2200000000000000");
    binary_roundtrip(ftype(FLOE_TYPE_FLOAT, 0, 0, 0), floe_value_float(1.0f), "0000803f");
    binary_roundtrip(ftype(FLOE_TYPE_DOUBLE, 0, 0, 0), floe_value_double(1.0),
                     "000000000000f03f");
    binary_roundtrip(ftype(FLOE_TYPE_DATE, 0, 0, 0), floe_value_date(17486), "4e440000");
    binary_roundtrip(ftype(FLOE_TYPE_TIMESTAMP_NS, 0, 0, 0),
                     floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, 1), "0100000000000000");
    binary_roundtrip(ftype(FLOE_TYPE_STRING, 0, 0, 0), floe_value_string("iceberg", 7),
                     "69636562657267");
    binary_roundtrip(ftype(FLOE_TYPE_STRING, 0, 0, 0), floe_value_string("", 0), "");
    static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                     0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    binary_roundtrip(ftype(FLOE_TYPE_UUID, 0, 0, 0), floe_value_uuid(uuid),
                     "f79c3e09677c4bbda4793f349cb785e7");
    binary_roundtrip(ftype(FLOE_TYPE_FIXED, 0, 0, 3), floe_value_fixed("\x01\x02\x03", 3),
                     "010203");
    /* decimals: minimal two's complement big-endian */
    floe_field dec = ftype(FLOE_TYPE_DECIMAL, 38, 2, 0);
    binary_roundtrip(dec, floe_value_decimal(0, 38, 2), "00");
    binary_roundtrip(dec, floe_value_decimal(1420, 38, 2), "058c");
    binary_roundtrip(dec, floe_value_decimal(127, 38, 2), "7f");
    binary_roundtrip(dec, floe_value_decimal(128, 38, 2), "0080");
    binary_roundtrip(dec, floe_value_decimal(-1, 38, 2), "ff");
    binary_roundtrip(dec, floe_value_decimal(-128, 38, 2), "80");
    binary_roundtrip(dec, floe_value_decimal(-129, 38, 2), "ff7f");
    floe_i128 big = (floe_i128)9999999999999999999ull * 10000000000000000000ull +
                    9999999999999999999ull; /* 10^38 - 1 */
    binary_roundtrip(dec, floe_value_decimal(big, 38, 2), "4b3b4ca85a86c47a098a223fffffffff");
    binary_roundtrip(dec, floe_value_decimal(-big, 38, 2), "b4c4b357a5793b85f675ddc000000001");

    /* hostile lengths */
    floe_error err;
    floe_value v;
    static const uint8_t junk[20] = {0};
    floe_field t_int = ftype(FLOE_TYPE_INT, 0, 0, 0);
    CHECK_EQ_INT(floe_value_from_binary(&t_int, junk, 3, &v, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_value_from_binary(&t_int, junk, 8, &v, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_value_from_binary(&dec, junk, 0, &v, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_value_from_binary(&dec, junk, 17, &v, &err), FLOE_ECORRUPT);
    floe_field t_uuid = ftype(FLOE_TYPE_UUID, 0, 0, 0);
    CHECK_EQ_INT(floe_value_from_binary(&t_uuid, junk, 15, &v, &err), FLOE_ECORRUPT);
    floe_field t_fixed = ftype(FLOE_TYPE_FIXED, 0, 0, 4);
    CHECK_EQ_INT(floe_value_from_binary(&t_fixed, junk, 5, &v, &err), FLOE_ECORRUPT);
    floe_field t_bool = ftype(FLOE_TYPE_BOOLEAN, 0, 0, 0);
    CHECK_EQ_INT(floe_value_from_binary(&t_bool, junk, 0, &v, &err), FLOE_ECORRUPT);
    /* promoted columns: a long bound may be a 4-byte int, a double a 4-byte float */
    floe_field t_long = ftype(FLOE_TYPE_LONG, 0, 0, 0);
    static const uint8_t m2[4] = {0xfe, 0xff, 0xff, 0xff};
    CHECK_OK(floe_value_from_binary(&t_long, m2, 4, &v, &err), err);
    CHECK_EQ_INT(v.v.i64, -2);
    floe_field t_double = ftype(FLOE_TYPE_DOUBLE, 0, 0, 0);
    static const uint8_t one_f[4] = {0, 0, 0x80, 0x3f};
    CHECK_OK(floe_value_from_binary(&t_double, one_f, 4, &v, &err), err);
    CHECK(v.v.d == 1.0);
    floe_value nul = floe_value_null(FLOE_TYPE_INT);
    CHECK_EQ_INT(floe_value_to_binary(&nul, &tbuf, &err), FLOE_EINVALID);
}

static void json_roundtrip(floe_field type, floe_value v, const char *want) {
    floe_error err;
    floe_arena arena;
    floe_arena_init(&arena, 256);
    const char *got = to_json(v);
    CHECK_EQ_STR(got, want);
    floe_value back;
    CHECK_OK(floe_value_from_json(&type, want, strlen(want), &arena, &back, &err), err);
    if (!floe_value_equal(&v, &back))
        harness_fail(__FILE__, __LINE__, "JSON round trip of %s differs", want);
    floe_arena_reset(&arena);
}

static int from_json_rc(floe_field type, const char *text, floe_value *out) {
    floe_error err;
    floe_arena arena;
    floe_arena_init(&arena, 256);
    floe_value v;
    int rc = floe_value_from_json(&type, text, strlen(text), &arena, &v, &err);
    if (rc == 0 && out)
        *out = v;
    floe_arena_reset(&arena);
    return rc;
}

TEST(test_json_single_value) {
    json_roundtrip(ftype(FLOE_TYPE_BOOLEAN, 0, 0, 0), floe_value_bool(true), "true");
    json_roundtrip(ftype(FLOE_TYPE_INT, 0, 0, 0), floe_value_int(34), "34");
    json_roundtrip(ftype(FLOE_TYPE_LONG, 0, 0, 0), floe_value_long(-34), "-34");
    json_roundtrip(ftype(FLOE_TYPE_FLOAT, 0, 0, 0), floe_value_float(1.0f), "1.0");
    json_roundtrip(ftype(FLOE_TYPE_DOUBLE, 0, 0, 0), floe_value_double(1.5e300), "1.5E300");
    json_roundtrip(ftype(FLOE_TYPE_DECIMAL, 4, 2, 0), floe_value_decimal(1420, 4, 2), "\"14.20\"");
    json_roundtrip(ftype(FLOE_TYPE_DECIMAL, 9, 7, 0), floe_value_decimal(-1, 9, 7),
                   "\"-0.0000001\"");
    json_roundtrip(ftype(FLOE_TYPE_DECIMAL, 1, -20, 0), floe_value_decimal(2, 1, -20),
                   "\"2E+20\"");
    json_roundtrip(ftype(FLOE_TYPE_DATE, 0, 0, 0), floe_value_date(17486), "\"2017-11-16\"");
    json_roundtrip(ftype(FLOE_TYPE_DATE, 0, 0, 0), floe_value_date((int32_t)days_of(-44, 3, 15)),
                   "\"-0044-03-15\"");
    int64_t t = (22 * 3600 + 31 * 60 + 8) * 1000000ll + 123456;
    json_roundtrip(ftype(FLOE_TYPE_TIME, 0, 0, 0), floe_value_i64(FLOE_TYPE_TIME, t),
                   "\"22:31:08.123456\"");
    int64_t ts = micros_of(2017, 11, 16, 22, 31, 8, 123456);
    json_roundtrip(ftype(FLOE_TYPE_TIMESTAMP, 0, 0, 0), floe_value_i64(FLOE_TYPE_TIMESTAMP, ts),
                   "\"2017-11-16T22:31:08.123456\"");
    json_roundtrip(ftype(FLOE_TYPE_TIMESTAMPTZ, 0, 0, 0),
                   floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, ts), "\"2017-11-16T22:31:08.123456+00:00\"");
    json_roundtrip(ftype(FLOE_TYPE_TIMESTAMP_NS, 0, 0, 0),
                   floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, ts * 1000 + 789),
                   "\"2017-11-16T22:31:08.123456789\"");
    json_roundtrip(ftype(FLOE_TYPE_TIMESTAMPTZ_NS, 0, 0, 0),
                   floe_value_i64(FLOE_TYPE_TIMESTAMPTZ_NS, ts * 1000 + 789),
                   "\"2017-11-16T22:31:08.123456789+00:00\"");
    json_roundtrip(ftype(FLOE_TYPE_TIMESTAMP, 0, 0, 0), floe_value_i64(FLOE_TYPE_TIMESTAMP, -1),
                   "\"1969-12-31T23:59:59.999999\"");
    json_roundtrip(ftype(FLOE_TYPE_STRING, 0, 0, 0), floe_value_string("ice\"berg\n\xc3\xa9", 11),
                   "\"ice\\\"berg\\n\xc3\xa9\"");
    static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                     0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    json_roundtrip(ftype(FLOE_TYPE_UUID, 0, 0, 0), floe_value_uuid(uuid),
                   "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"");
    json_roundtrip(ftype(FLOE_TYPE_FIXED, 0, 0, 4), floe_value_fixed("\x00\x01\x02\xff", 4),
                   "\"000102ff\"");
    json_roundtrip(ftype(FLOE_TYPE_BINARY, 0, 0, 0), floe_value_binary("\x00\x01\x02\xff", 4),
                   "\"000102ff\"");
    json_roundtrip(ftype(FLOE_TYPE_LONG, 0, 0, 0), floe_value_null(FLOE_TYPE_LONG), "null");

    /* readers: what the reference also writes (shortest fractions, Z) */
    floe_value v;
    CHECK_OK(from_json_rc(ftype(FLOE_TYPE_TIMESTAMP, 0, 0, 0), "\"2017-11-16T22:31:08\"", &v),
             (floe_error){0});
    CHECK_EQ_INT(v.v.i64, micros_of(2017, 11, 16, 22, 31, 8, 0));
    CHECK_OK(from_json_rc(ftype(FLOE_TYPE_TIMESTAMPTZ, 0, 0, 0), "\"2017-11-16T22:31:08.1Z\"", &v),
             (floe_error){0});
    CHECK_EQ_INT(v.v.i64, micros_of(2017, 11, 16, 22, 31, 8, 100000));
    CHECK_OK(from_json_rc(ftype(FLOE_TYPE_TIME, 0, 0, 0), "\"22:31\"", &v), (floe_error){0});
    CHECK_EQ_INT(v.v.i64, (22 * 3600 + 31 * 60) * 1000000ll);
    CHECK_OK(from_json_rc(ftype(FLOE_TYPE_FLOAT, 0, 0, 0), "2", &v), (floe_error){0});
    CHECK(v.v.f == 2.0f);

    /* rejections */
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_DECIMAL, 9, 2, 0), "\"14.2\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_DECIMAL, 3, 2, 0), "\"14.20\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_DECIMAL, 9, 2, 0), "14.20", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_TIMESTAMPTZ, 0, 0, 0),
                              "\"2017-11-16T14:31:08-08:00\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_TIMESTAMPTZ, 0, 0, 0), "\"2017-11-16T14:31:08\"",
                              NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_TIMESTAMP, 0, 0, 0),
                              "\"2017-11-16T14:31:08+00:00\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_DATE, 0, 0, 0), "\"2017-02-29\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_DATE, 0, 0, 0), "\"2017-1-01\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_TIME, 0, 0, 0), "\"24:00:00\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_INT, 0, 0, 0), "2147483648", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_INT, 0, 0, 0), "\"1\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_UUID, 0, 0, 0), "\"f79c3e09677c-4bbd-a479-3f349cb785e7x\"",
                              NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_FIXED, 0, 0, 4), "\"0001\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_BINARY, 0, 0, 0), "\"0g\"", NULL), FLOE_EINVALID);
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_TIMESTAMP_NS, 0, 0, 0), "\"2300-01-01T00:00:00\"",
                              NULL), FLOE_EINVALID); /* past the int64 nanosecond range */
    CHECK_EQ_INT(from_json_rc(ftype(FLOE_TYPE_LONG, 0, 0, 0), "{", NULL), FLOE_EINVALID);
    /* NaN has no JSON form; nor has a string that is not UTF-8 */
    floe_error err;
    floe_value nan = floe_value_double(NAN);
    CHECK_EQ_INT(floe_value_to_json(&nan, &tbuf, &err), FLOE_EINVALID);
    floe_value bad = floe_value_string("\xff", 1);
    CHECK_EQ_INT(floe_value_to_json(&bad, &tbuf, &err), FLOE_EINVALID);
}

/* ---- partition specs ---------------------------------------------------------------------- */

TEST(test_spec_json_roundtrip) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    floe_error err;
    floe_partition_spec *spec = NULL;
    const char *js = "{\"spec-id\":0,\"fields\":[{\"source-id\":2,\"field-id\":1000,"
                     "\"name\":\"ts_day\",\"transform\":\"day\"},{\"source-id\":3,"
                     "\"field-id\":1001,\"name\":\"user_id_bucket\",\"transform\":\"bucket[16]\"}]}";
    REQUIRE_OK(floe_partition_spec_parse_json(js, strlen(js), s, &spec, &err), err);
    CHECK_EQ_INT(spec->nfields, 2);
    CHECK_EQ_INT(spec->last_field_id, 1001);
    CHECK(spec->bound);
    char *out = floe_partition_spec_to_json(spec);
    CHECK_EQ_STR(out, js);
    floe_free(out);
    out = floe_partition_spec_fields_to_json(spec);
    CHECK(out && out[0] == '[' && strstr(out, "\"bucket[16]\"") && !strstr(out, "spec-id"));
    floe_free(out);
    /* the partition tuple type: ids are the partition field ids, result types */
    CHECK_EQ_INT(spec->partition_type.nchildren, 2);
    CHECK_EQ_INT(spec->partition_type.children[0].id, 1000);
    CHECK(spec->partition_type.children[0].type == FLOE_TYPE_DATE);
    CHECK(spec->partition_type.children[1].type == FLOE_TYPE_INT);
    CHECK(!spec->partition_type.children[1].required);
    CHECK_EQ_STR(spec->partition_type.children[1].name, "user_id_bucket");
    char *str = floe_partition_spec_to_string(spec);
    CHECK_EQ_STR(str, "day(ts), bucket(16, user_id)");
    floe_free(str);
    floe_partition_spec_free(spec);

    /* bare field list (manifest metadata), v1 without field ids, unknown transform */
    const char *v1 = "[{\"source-id\":1,\"name\":\"event_type\",\"transform\":\"identity\"},"
                     "{\"source-id\":2,\"name\":\"z\",\"transform\":\"zorder[3]\"}]";
    REQUIRE_OK(floe_partition_spec_parse_json(v1, strlen(v1), s, &spec, &err), err);
    CHECK_EQ_INT(spec->spec_id, 0);
    CHECK_EQ_INT(spec->fields[0].field_id, 1000);
    CHECK_EQ_INT(spec->fields[1].field_id, 1001);
    CHECK(spec->fields[1].transform.kind == FLOE_XF_UNKNOWN);
    out = floe_partition_spec_to_json(spec);
    CHECK(out && strstr(out, "\"transform\":\"zorder[3]\""));
    floe_free(out);
    floe_value src[2] = {floe_value_string("a", 1), floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, 0)};
    floe_value tuple[2];
    CHECK_EQ_INT(floe_partition_spec_tuple(spec, src, tuple, &err), FLOE_EUNSUPPORTED);
    floe_partition_spec_free(spec);

    /* v3 multi-argument sources are kept and written back as source-ids */
    const char *v3 = "{\"spec-id\":3,\"fields\":[{\"source-ids\":[1,2],\"field-id\":1005,"
                     "\"name\":\"m\",\"transform\":\"combine\"}]}";
    REQUIRE_OK(floe_partition_spec_parse_json(v3, strlen(v3), NULL, &spec, &err), err);
    out = floe_partition_spec_to_json(spec);
    CHECK_EQ_STR(out, v3);
    floe_free(out);
    floe_partition_spec_free(spec);

    /* hostile documents */
    static const char *bad[] = {
        "", "[", "{\"fields\":[]}", "{\"spec-id\":0}", "{\"spec-id\":0,\"fields\":{}}",
        "{\"spec-id\":\"0\",\"fields\":[]}", "[1]", "[{\"source-id\":1,\"transform\":\"day\"}]",
        "[{\"source-id\":1,\"name\":\"\",\"transform\":\"identity\"}]",
        "[{\"source-id\":1,\"name\":\"a\"}]", "[{\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":1.5,\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":99999999999,\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":1,\"name\":\"a\",\"transform\":\"bucket[0]\"}]",
        "[{\"source-id\":1,\"name\":\"a\",\"transform\":\"identity\"},"
        "{\"source-id\":1,\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":1,\"field-id\":1000,\"name\":\"a\",\"transform\":\"identity\"},"
        "{\"source-id\":1,\"field-id\":1000,\"name\":\"b\",\"transform\":\"identity\"}]",
        "[{\"source-ids\":[],\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":1,\"name\":\"a\\u0000b\",\"transform\":\"identity\"}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        spec = NULL;
        int rc = floe_partition_spec_parse_json(bad[i], strlen(bad[i]), NULL, &spec, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "bad spec %zu (%s): rc %d", i, bad[i], rc);
        CHECK(spec == NULL);
    }
    /* binding failures: unknown source, wrong type, source inside a list */
    static const char *unbindable[] = {
        "[{\"source-id\":77,\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":4,\"name\":\"a\",\"transform\":\"day\"}]",
        "[{\"source-id\":10,\"name\":\"a\",\"transform\":\"identity\"}]",
        "[{\"source-id\":7,\"name\":\"a\",\"transform\":\"identity\"}]",
    };
    static const int want[] = {FLOE_ENOTFOUND, FLOE_EINVALID, FLOE_EINVALID, FLOE_EINVALID};
    for (size_t i = 0; i < 4; i++) {
        spec = NULL;
        CHECK_EQ_INT(floe_partition_spec_parse_json(unbindable[i], strlen(unbindable[i]), s,
                                                    &spec, &err), want[i]);
        CHECK(spec == NULL);
    }
    floe_schema_free(s);
}

static floe_partition_spec *parse_spec(const floe_schema *s, const char *text) {
    floe_error err;
    floe_partition_spec *spec = NULL;
    int rc = floe_partition_spec_parse(s, text, 0, 0, &spec, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "parse \"%s\": %s", text, err.msg);
    return spec;
}

TEST(test_spec_string_form) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    floe_error err;
    floe_partition_spec *p = parse_spec(s, "event_type, day(ts)");
    REQUIRE(p);
    CHECK_EQ_INT(p->nfields, 2);
    CHECK_EQ_STR(p->fields[0].name, "event_type");
    CHECK_EQ_INT(p->fields[0].field_id, 1000);
    CHECK_EQ_INT(p->fields[0].source_id, 1);
    CHECK(p->fields[0].transform.kind == FLOE_XF_IDENTITY);
    CHECK_EQ_STR(p->fields[1].name, "ts_day");
    CHECK_EQ_INT(p->fields[1].field_id, 1001);
    char *js = floe_partition_spec_to_json(p);
    CHECK_EQ_STR(js, "{\"spec-id\":0,\"fields\":[{\"source-id\":1,\"field-id\":1000,\"name\":"
                     "\"event_type\",\"transform\":\"identity\"},{\"source-id\":2,\"field-id\":"
                     "1001,\"name\":\"ts_day\",\"transform\":\"day\"}]}");
    /* JSON -> spec -> JSON is stable and equivalent */
    floe_partition_spec *q = NULL;
    REQUIRE_OK(floe_partition_spec_parse_json(js, strlen(js), s, &q, &err), err);
    CHECK(floe_partition_spec_equivalent(p, q));
    floe_free(js);
    floe_partition_spec_free(q);
    floe_partition_spec_free(p);

    p = parse_spec(s, "bucket(16, user_id), truncate(4, name)");
    REQUIRE(p);
    CHECK_EQ_STR(p->fields[0].name, "user_id_bucket");
    CHECK_EQ_STR(p->fields[0].transform_text, "bucket[16]");
    CHECK_EQ_STR(p->fields[1].name, "name_trunc");
    CHECK_EQ_STR(p->fields[1].transform_text, "truncate[4]");
    CHECK(p->partition_type.children[1].type == FLOE_TYPE_STRING);
    floe_partition_spec_free(p);

    p = parse_spec(s, "  hour(ts)  ");
    REQUIRE(p);
    CHECK_EQ_STR(p->fields[0].name, "ts_hour");
    floe_partition_spec_free(p);
    p = parse_spec(s, "year(d), identity(x), void(user_id), month(tsn)");
    REQUIRE(p);
    CHECK_EQ_STR(p->fields[0].name, "d_year");
    CHECK_EQ_STR(p->fields[1].name, "x");
    CHECK_EQ_STR(p->fields[2].name, "user_id_null");
    CHECK(p->partition_type.children[2].type == FLOE_TYPE_LONG);
    CHECK_EQ_STR(p->fields[3].name, "tsn_month");
    char *str = floe_partition_spec_to_string(p);
    CHECK_EQ_STR(str, "year(d), x, void(user_id), month(tsn)");
    floe_free(str);
    floe_partition_spec_free(p);
    /* nested struct source, AS names, the other argument order, plural names */
    p = parse_spec(s, "device.os, days(ts) AS event_day, truncate(name, 2), identity(amount)");
    REQUIRE(p);
    CHECK_EQ_STR(p->fields[0].name, "device.os");
    CHECK_EQ_INT(p->fields[0].source_id, 8);
    CHECK_EQ_STR(p->fields[1].name, "event_day");
    CHECK_EQ_INT(p->fields[2].transform.param, 2);
    CHECK(p->partition_type.children[3].type == FLOE_TYPE_DECIMAL);
    CHECK_EQ_INT(p->partition_type.children[3].precision, 9);
    CHECK_EQ_INT(p->partition_type.children[3].scale, 2);
    str = floe_partition_spec_to_string(p);
    CHECK_EQ_STR(str, "device.os, day(ts) AS event_day, truncate(2, name), amount");
    floe_partition_spec *again = parse_spec(s, str);
    CHECK(again && floe_partition_spec_equivalent(p, again));
    floe_partition_spec_free(again);
    floe_free(str);
    floe_partition_spec_free(p);
    /* quoted names with spaces and back quotes survive the round trip */
    p = parse_spec(s, "truncate(2, `odd ``name```), \"odd `name`\" AS `x y`");
    REQUIRE(p);
    CHECK_EQ_INT(p->fields[0].source_id, 18);
    CHECK_EQ_STR(p->fields[0].name, "odd `name`_trunc");
    CHECK_EQ_STR(p->fields[1].name, "x y");
    str = floe_partition_spec_to_string(p);
    CHECK_EQ_STR(str, "truncate(2, `odd ``name```), `odd ``name``` AS `x y`");
    again = parse_spec(s, str);
    CHECK(again && floe_partition_spec_equivalent(p, again));
    floe_partition_spec_free(again);
    floe_free(str);
    floe_value two[2] = {floe_value_string("abc", 3), floe_value_string("q", 1)};
    floe_value tup[2];
    CHECK_OK(floe_partition_spec_tuple(p, two, tup, &err), err);
    floe_buf_reset(&tbuf);
    CHECK_OK(floe_partition_spec_path(p, tup, &tbuf, &err), err);
    CHECK_EQ_STR(bstr(&tbuf), "odd+%60name%60_trunc=ab/x+y=q");
    floe_partition_spec_free(p);
    /* empty = unpartitioned */
    p = parse_spec(s, "");
    REQUIRE(p);
    CHECK_EQ_INT(p->nfields, 0);
    floe_buf_reset(&tbuf);
    CHECK_OK(floe_partition_spec_path(p, NULL, &tbuf, &err), err);
    CHECK_EQ_INT(tbuf.len, 0);
    floe_partition_spec_free(p);
    /* explicit first field id (spec evolution) */
    p = NULL;
    CHECK_OK(floe_partition_spec_parse(s, "x", 4, 1010, &p, &err), err);
    CHECK(p && p->spec_id == 4 && p->fields[0].field_id == 1010 && p->last_field_id == 1010);
    floe_partition_spec_free(p);

    static const struct {
        const char *text;
        int rc;
    } bad[] = {
        {"nope", FLOE_ENOTFOUND},
        {"day(nope)", FLOE_ENOTFOUND},
        {"day(name)", FLOE_EINVALID},          /* day of a string */
        {"hour(d)", FLOE_EINVALID},            /* hour of a date */
        {"truncate(2, ts)", FLOE_EINVALID},
        {"bucket(4, ratio)", FLOE_EINVALID},   /* doubles cannot be bucketed */
        {"bucket(0, user_id)", FLOE_EINVALID},
        {"bucket(-3, user_id)", FLOE_EINVALID},
        {"bucket(99999999999, user_id)", FLOE_EINVALID},
        {"bucket(999999999999999999999999, user_id)", FLOE_EINVALID},
        {"bucket(user_id)", FLOE_EINVALID},
        {"bucket(1.5, user_id)", FLOE_EINVALID},
        {"day(2, ts)", FLOE_EINVALID},
        {"day(ts", FLOE_EINVALID},
        {"day ts", FLOE_ENOTFOUND},          /* the column "day" */
        {"day()", FLOE_EINVALID},
        {"frobnicate(ts)", FLOE_EINVALID},
        {"x,", FLOE_EINVALID},
        {",x", FLOE_EINVALID},
        {"x x", FLOE_EINVALID},
        {"tags", FLOE_EINVALID},               /* a list */
        {"device", FLOE_EINVALID},             /* a struct */
        {"day(ts), hour(ts)", FLOE_EINVALID},  /* redundant time transforms */
        {"x, identity(x)", FLOE_EINVALID},     /* same name twice */
        {"day(ts) AS x", FLOE_EINVALID},       /* name of another column */
        {"day(ts) AS", FLOE_EINVALID},
        {"`unterminated", FLOE_EINVALID},
        {"x; drop", FLOE_EINVALID},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = NULL;
        int rc = floe_partition_spec_parse(s, bad[i].text, 0, 0, &p, &err);
        if (rc != bad[i].rc)
            harness_fail(__FILE__, __LINE__, "\"%s\": rc %d (want %d): %s", bad[i].text, rc,
                         bad[i].rc, rc ? err.msg : "");
        CHECK(p == NULL);
        CHECK(rc == 0 || strlen(err.msg) > 0);
    }
    /* messages name the term */
    p = NULL;
    CHECK_EQ_INT(floe_partition_spec_parse(s, "event_type, day(nope)", 0, 0, &p, &err),
                 FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "day(nope)") && strstr(err.msg, "\"nope\""));
    CHECK_EQ_INT(floe_partition_spec_parse(s, "bucket(0, user_id)", 0, 0, &p, &err),
                 FLOE_EINVALID);
    CHECK(strstr(err.msg, "bucket(0, user_id)") != NULL);
    floe_schema_free(s);
}

/* ---- tuples and paths ---------------------------------------------------------------------- */

static const char *path_for(const floe_partition_spec *spec, const floe_value *src) {
    floe_error err;
    floe_value tuple[16];
    floe_buf_reset(&tbuf);
    if (floe_partition_spec_tuple(spec, src, tuple, &err) < 0 ||
        floe_partition_spec_path(spec, tuple, &tbuf, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "path: %s", err.msg);
        return "(error)";
    }
    return bstr(&tbuf);
}

TEST(test_partition_path) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    floe_partition_spec *p = parse_spec(s, "event_type, day(ts)");
    REQUIRE(p);
    int64_t ts = micros_of(2026, 10, 6, 12, 0, 0, 0);
    floe_value src[2] = {floe_value_string("orders", 6), floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, ts)};
    CHECK_EQ_STR(path_for(p, src), "event_type=orders/ts_day=2026-10-06");
    static const struct {
        const char *value;
        size_t n;
        const char *want;
    } hostile[] = {
        {"../x", 4, "event_type=..%2Fx/ts_day=2026-10-06"},
        {"a/b", 3, "event_type=a%2Fb/ts_day=2026-10-06"},
        {"%", 1, "event_type=%25/ts_day=2026-10-06"},
        {"a=b", 3, "event_type=a%3Db/ts_day=2026-10-06"},
        {"a\nb\x01", 4, "event_type=a%0Ab%01/ts_day=2026-10-06"},
        {"", 0, "event_type=/ts_day=2026-10-06"},
        {".", 1, "event_type=%2E/ts_day=2026-10-06"},
        {"..", 2, "event_type=%2E%2E/ts_day=2026-10-06"},
        {"a b+c", 5, "event_type=a+b%2Bc/ts_day=2026-10-06"},
        {"\xc3\xa9t\xc3\xa9", 5, "event_type=%C3%A9t%C3%A9/ts_day=2026-10-06"},
        {"a\\b", 3, "event_type=a%5Cb/ts_day=2026-10-06"},
        {"x\0y", 3, "event_type=x%00y/ts_day=2026-10-06"},
        {"*-_.~", 5, "event_type=*-_.%7E/ts_day=2026-10-06"},
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        src[0] = floe_value_string(hostile[i].value, hostile[i].n);
        CHECK_EQ_STR(path_for(p, src), hostile[i].want);
    }
    src[0] = floe_value_null(FLOE_TYPE_STRING);
    src[1] = floe_value_null(FLOE_TYPE_TIMESTAMPTZ);
    CHECK_EQ_STR(path_for(p, src), "event_type=null/ts_day=null");
    /* random bytes: every component stays one folder and is never "." or ".." */
    srand(7);
    for (int iter = 0; iter < 2000; iter++) {
        char v[12];
        size_t n = (size_t)(rand() % 12);
        for (size_t k = 0; k < n; k++)
            v[k] = (char)(rand() % 4 == 0 ? "./=%\\"[rand() % 5] : rand() % 256);
        src[0] = floe_value_string(v, n);
        src[1] = floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, ts);
        const char *path = path_for(p, src);
        const char *slash = strchr(path, '/');
        CHECK(slash && strchr(slash + 1, '/') == NULL);
        CHECK(strncmp(path, "event_type=", 11) == 0);
        for (const char *c = path; *c; c++)
            CHECK(*c > 0x20 && *c < 0x7f && *c != '\\');
    }
    /* escaping alone guards "." and ".." as whole strings */
    floe_buf_reset(&tbuf);
    CHECK_OK(floe_partition_escape("..", 2, &tbuf), (floe_error){0});
    CHECK_EQ_STR(bstr(&tbuf), "%2E%2E");
    floe_partition_spec_free(p);

    /* every transform's path form */
    p = parse_spec(s, "hour(ts), month(tsn) AS m, year(d), bucket(8, user_id), "
                      "truncate(3, name), amount, flag, u, blob, t, void(x)");
    REQUIRE(p);
    static const uint8_t uuid[16] = {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
                                     0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
    floe_value all[11] = {floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, ts),
                          floe_value_i64(FLOE_TYPE_TIMESTAMP_NS, ts * 1000),
                          floe_value_date(-1),
                          floe_value_long(34),
                          floe_value_string("iceberg", 7),
                          floe_value_decimal(-1420, 9, 2),
                          floe_value_bool(false),
                          floe_value_uuid(uuid),
                          floe_value_binary("\xfb\xff", 2),
                          floe_value_i64(FLOE_TYPE_TIME, 3723000000ll),
                          floe_value_int(5)};
    CHECK_EQ_STR(path_for(p, all),
                 "ts_hour=2026-10-06-12/m=2026-10/d_year=1969/user_id_bucket=3/name_trunc=ice/"
                 "amount=-14.20/flag=false/u=f79c3e09-677c-4bbd-a479-3f349cb785e7/"
                 "blob=%2B%2F8%3D/t=01%3A02%3A03/x_null=null");
    /* a source value of the wrong type is refused */
    floe_error err;
    floe_value tuple[11];
    all[3] = floe_value_int(34);
    CHECK_EQ_INT(floe_partition_spec_tuple(p, all, tuple, &err), FLOE_EINVALID);
    floe_partition_spec_free(p);
    /* identity of a timestamptz: ':' and '+' are escaped */
    p = parse_spec(s, "ts");
    REQUIRE(p);
    floe_value one = floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, micros_of(2017, 11, 16, 22, 31, 8, 0));
    CHECK_EQ_STR(path_for(p, &one), "ts=2017-11-16T22%3A31%3A08%2B00%3A00");
    floe_partition_spec_free(p);
    floe_schema_free(s);
}

/* Long values: each "name=value" folder is at most 128 bytes (a prefix cut between
 * escapes, '~', 24 hex digits of the SHA-256 of the whole escaped segment), so every value
 * is a folder a file system (255 bytes per name) and S3 (1024 per key) take; distinct
 * values stay distinct; with many fields the path stays within the spec's bound. */
TEST(test_partition_path_bounded) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    floe_partition_spec *p = parse_spec(s, "event_type");
    REQUIRE(p);
    CHECK(floe_partition_spec_path_max(p) == 128);
    static const size_t sizes[] = {0, 1, 115, 116, 117, 255, 256, 4096, 100000};
    char *big = malloc(100001);
    REQUIRE(big);
    char seen[9][200];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t k = 0; k < sizes[i]; k++)
            big[k] = (char)('a' + (k * 7 + i) % 26);
        floe_value v = floe_value_string(big, sizes[i]);
        const char *path = path_for(p, &v);
        size_t len = strlen(path);
        CHECK(len <= 128);
        CHECK(strchr(path, '/') == NULL);
        CHECK(strncmp(path, "event_type=", 11) == 0);
        /* short ones are the plain escaped value; long ones end in ~<24 hex digits> */
        if (11 + sizes[i] <= 128) {
            CHECK(len == 11 + sizes[i] && !strchr(path, '~'));
        } else {
            CHECK(len == 128);
            const char *t = strchr(path, '~');
            REQUIRE(t);
            CHECK(strlen(t + 1) == 24 && strspn(t + 1, "0123456789abcdef") == 24);
            CHECK(strncmp(path + 11, big, (size_t)(t - path) - 11) == 0);
        }
        snprintf(seen[i], sizeof seen[i], "%s", path);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(seen[i], seen[j]) != 0);
    }
    /* two long values that differ only at their end: different folders */
    memset(big, 'x', 4096);
    floe_value v = floe_value_string(big, 4096);
    char first[200];
    snprintf(first, sizeof first, "%s", path_for(p, &v));
    big[4095] = 'y';
    CHECK(strcmp(first, path_for(p, &v)) != 0);
    /* escapes are never cut in half: 300 bytes of '/' (%2F each) */
    memset(big, '/', 300);
    v = floe_value_string(big, 300);
    const char *path = path_for(p, &v);
    const char *t = strchr(path, '~');
    REQUIRE(t);
    CHECK(((size_t)(t - path) - 11) % 3 == 0);
    /* hostile bytes in a long value: NUL, "..", non-UTF-8 */
    for (size_t k = 0; k < 1000; k++)
        big[k] = "\0.\xff\xfe/"[k % 5];
    v = floe_value_string(big, 1000);
    path = path_for(p, &v);
    CHECK(strlen(path) <= 128 && strchr(path, '/') == NULL);
    for (const char *c = path; *c; c++)
        CHECK(*c > 0x20 && *c < 0x7f);
    floe_partition_spec_free(p);

    /* many fields share a 512-byte budget, 48 bytes each at least */
    p = parse_spec(s, "event_type, name, truncate(1000, name) AS t0, truncate(999, name) "
                      "AS t1, truncate(998, name) AS t2, truncate(997, name) AS t3, truncate(996, "
                      "name) AS t4, truncate(995, name) AS t5, truncate(994, name) AS t6, "
                      "truncate(993, name) AS t7, truncate(992, name) AS t8, truncate(991, "
                      "name) AS t9");
    REQUIRE(p);
    CHECK(floe_partition_spec_path_max(p) == 12 * 49 - 1);
    memset(big, 'z', 5000);
    floe_value many[12];
    for (int k = 0; k < 12; k++)
        many[k] = floe_value_string(big, 5000);
    path = path_for(p, many);
    CHECK(strlen(path) <= floe_partition_spec_path_max(p));
    for (const char *seg = path; seg;) {
        const char *e = strchr(seg, '/');
        CHECK((size_t)(e ? e - seg : (long)strlen(seg)) <= 48);
        seg = e ? e + 1 : NULL;
    }
    floe_partition_spec_free(p);
    free(big);
    floe_schema_free(s);
}

/* ---- sort orders ----------------------------------------------------------------------------- */

TEST(test_sort_orders) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    floe_error err;
    floe_sort_order *o = NULL;
    const char *js = "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
                     "\"direction\":\"asc\",\"null-order\":\"nulls-first\"},{\"transform\":"
                     "\"bucket[4]\",\"source-id\":3,\"direction\":\"desc\",\"null-order\":"
                     "\"nulls-last\"}]}";
    REQUIRE_OK(floe_sort_order_parse_json(js, strlen(js), s, &o, &err), err);
    CHECK_EQ_INT(o->order_id, 1);
    CHECK_EQ_INT(o->nfields, 2);
    CHECK(o->fields[1].transform.kind == FLOE_XF_BUCKET && o->fields[1].transform.param == 4);
    CHECK(o->fields[1].direction == FLOE_SORT_DESC && o->fields[1].null_order == FLOE_NULLS_LAST);
    char *out = floe_sort_order_to_json(o);
    CHECK_EQ_STR(out, js);
    floe_free(out);
    out = floe_sort_order_to_string(o, s);
    CHECK_EQ_STR(out, "ts ASC NULLS FIRST, bucket(4, user_id) DESC NULLS LAST");
    floe_free(out);
    floe_sort_order_free(o);
    /* the text form reads back */
    o = NULL;
    REQUIRE_OK(floe_sort_order_parse(s, "`odd ``name``` desc, truncate(3, `odd ``name```)", 2,
                                     &o, &err), err);
    CHECK_EQ_INT(o->fields[0].source_id, 18);
    out = floe_sort_order_to_string(o, s);
    CHECK_EQ_STR(out, "`odd ``name``` DESC NULLS LAST, truncate(3, `odd ``name```) ASC NULLS FIRST");
    floe_sort_order *o2 = NULL;
    REQUIRE_OK(floe_sort_order_parse(s, out, 2, &o2, &err), err);
    char *j1 = floe_sort_order_to_json(o), *j2 = floe_sort_order_to_json(o2);
    CHECK_EQ_STR(j1, j2);
    floe_free(j1);
    floe_free(j2);
    floe_free(out);
    floe_sort_order_free(o2);
    floe_sort_order_free(o);

    o = NULL;
    REQUIRE_OK(floe_sort_order_parse(s, "ts DESC NULLS LAST, user_id", 3, &o, &err), err);
    CHECK_EQ_INT(o->order_id, 3);
    CHECK_EQ_INT(o->nfields, 2);
    CHECK_EQ_INT(o->fields[0].source_id, 2);
    CHECK(o->fields[0].direction == FLOE_SORT_DESC && o->fields[0].null_order == FLOE_NULLS_LAST);
    CHECK(o->fields[1].direction == FLOE_SORT_ASC && o->fields[1].null_order == FLOE_NULLS_FIRST);
    out = floe_sort_order_to_json(o);
    CHECK_EQ_STR(out, "{\"order-id\":3,\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
                      "\"direction\":\"desc\",\"null-order\":\"nulls-last\"},{\"transform\":"
                      "\"identity\",\"source-id\":3,\"direction\":\"asc\",\"null-order\":"
                      "\"nulls-first\"}]}");
    floe_free(out);
    floe_sort_order_free(o);
    /* defaults: DESC alone means nulls last; explicit NULLS FIRST wins; transforms */
    o = NULL;
    REQUIRE_OK(floe_sort_order_parse(s, "name desc, day(ts) asc nulls last, "
                                        "truncate(2, name) DESC NULLS FIRST", 0, &o, &err), err);
    CHECK_EQ_INT(o->order_id, 1);
    CHECK(o->fields[0].null_order == FLOE_NULLS_LAST);
    CHECK(o->fields[1].transform.kind == FLOE_XF_DAY && o->fields[1].null_order == FLOE_NULLS_LAST);
    CHECK(o->fields[2].null_order == FLOE_NULLS_FIRST && o->fields[2].transform.param == 2);
    floe_sort_order_free(o);
    /* unsorted */
    o = NULL;
    REQUIRE_OK(floe_sort_order_parse(s, "", 5, &o, &err), err);
    CHECK(o->order_id == 0 && o->nfields == 0);
    out = floe_sort_order_to_json(o);
    CHECK_EQ_STR(out, "{\"order-id\":0,\"fields\":[]}");
    floe_free(out);
    floe_sort_order_free(o);

    static const char *bad_text[] = {"nope", "ts DESC NULLS", "ts NULLS MIDDLE", "ts sideways",
                                     "day(name)", "tags", "ts,", "bucket(0, x)"};
    for (size_t i = 0; i < sizeof bad_text / sizeof bad_text[0]; i++) {
        o = NULL;
        int rc = floe_sort_order_parse(s, bad_text[i], 1, &o, &err);
        if (rc >= 0)
            harness_fail(__FILE__, __LINE__, "sort \"%s\" accepted", bad_text[i]);
        CHECK(o == NULL);
    }
    static const char *bad_json[] = {
        "{}", "{\"order-id\":1}", "{\"order-id\":-1,\"fields\":[]}",
        "{\"order-id\":0,\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
        "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}",
        "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
        "\"direction\":\"up\",\"null-order\":\"nulls-first\"}]}",
        "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
        "\"direction\":\"asc\",\"null-order\":\"nulls-whenever\"}]}",
        "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\","
        "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}",
        "{\"order-id\":1,\"fields\":[7]}",
    };
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        o = NULL;
        int rc = floe_sort_order_parse_json(bad_json[i], strlen(bad_json[i]), s, &o, &err);
        if (rc != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "sort JSON %zu: rc %d", i, rc);
        CHECK(o == NULL);
    }
    /* semantic check against the schema */
    const char *wrong = "{\"order-id\":1,\"fields\":[{\"transform\":\"hour\",\"source-id\":5,"
                        "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}";
    o = NULL;
    CHECK_EQ_INT(floe_sort_order_parse_json(wrong, strlen(wrong), s, &o, &err), FLOE_EINVALID);
    CHECK_OK(floe_sort_order_parse_json(wrong, strlen(wrong), NULL, &o, &err), err);
    floe_sort_order_free(o);
    floe_schema_free(s);
}

/* ---- projection -------------------------------------------------------------------------------- */

static int64_t rnd_range(int64_t lo, int64_t hi) {
    return lo + (int64_t)(harness_rnd() % (uint64_t)(hi - lo + 1));
}

static long n_checked, n_pruning;

/* If `x op lit` holds then the projection must hold for t(x). */
static void check_projection(floe_transform t, floe_pred_op op, const floe_value *x,
                             const floe_value *lit) {
    floe_error err;
    floe_projection pr;
    if (floe_transform_project(t, op, lit, &pr, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "project: %s", err.msg);
        return;
    }
    if (!pr.always_true)
        n_pruning++;
    if (!floe_pred_eval(op, x, lit))
        return;
    n_checked++;
    if (pr.always_true)
        return;
    floe_value tx;
    if (floe_transform_apply(t, x, &tx, &err) < 0)
        return; /* out of the partition value's range: such rows cannot be written */
    if (!floe_pred_eval(pr.op, &tx, &pr.value)) {
        char name[32];
        floe_buf_reset(&tbuf);
        FLOE_IGNORE_RESULT(floe_value_to_json(x, &tbuf, &err)); /* a message only */
        floe_buf_append(&tbuf, " vs ", 4);
        FLOE_IGNORE_RESULT(floe_value_to_json(lit, &tbuf, &err));
        harness_fail(__FILE__, __LINE__, "%s op %d: x=%s: projection op %d fails",
                     floe_transform_name(t, name, sizeof name), (int)op, bstr(&tbuf),
                     (int)pr.op);
    }
}

static const floe_pred_op ALL_OPS[] = {FLOE_PRED_LT, FLOE_PRED_LE, FLOE_PRED_GT, FLOE_PRED_GE,
                                       FLOE_PRED_EQ, FLOE_PRED_NE, FLOE_PRED_IS_NULL,
                                       FLOE_PRED_NOT_NULL};

static void check_all_ops(floe_transform t, const floe_value *x, const floe_value *lit) {
    for (size_t i = 0; i < sizeof ALL_OPS / sizeof ALL_OPS[0]; i++)
        check_projection(t, ALL_OPS[i], x, lit);
}

static floe_value rnd_int_like(floe_type_id type, int64_t center, int64_t spread) {
    int64_t v = center + rnd_range(-spread, spread);
    if (type == FLOE_TYPE_INT || type == FLOE_TYPE_DATE) {
        if (v < INT32_MIN + 2000000)
            v = INT32_MIN + 2000000; /* clear of the reference's truncate wrap zone */
        if (v > INT32_MAX)
            v = INT32_MAX;
        return type == FLOE_TYPE_INT ? floe_value_int((int32_t)v) : floe_value_date((int32_t)v);
    }
    return type == FLOE_TYPE_LONG ? floe_value_long(v) : floe_value_i64(type, v);
}

TEST(test_projection_bruteforce) {
    n_checked = n_pruning = 0;
    static const int widths[] = {1, 3, 10, 1000, 1000000};
    /* ints and longs: identity, bucket, truncate */
    for (int iter = 0; iter < 20000; iter++) {
        floe_type_id ty = iter & 1 ? FLOE_TYPE_LONG : FLOE_TYPE_INT;
        int64_t center = rnd_range(-100000, 100000);
        int64_t spread = iter % 3 == 0 ? 5 : 3000;
        floe_value x = rnd_int_like(ty, center, spread), lit = rnd_int_like(ty, center, spread);
        check_all_ops(XF_ID, &x, &lit);
        check_all_ops(bucket(16), &x, &lit);
        check_all_ops(trunc_(widths[iter % 5]), &x, &lit);
    }
    /* dates and timestamps through year/month/day/hour, across 1970 and far away */
    static const floe_type_id tt[] = {FLOE_TYPE_TIMESTAMP, FLOE_TYPE_TIMESTAMPTZ,
                                      FLOE_TYPE_TIMESTAMP_NS, FLOE_TYPE_TIMESTAMPTZ_NS};
    for (int iter = 0; iter < 20000; iter++) {
        floe_type_id ty = tt[iter % 4];
        int64_t unit = (ty == FLOE_TYPE_TIMESTAMP_NS || ty == FLOE_TYPE_TIMESTAMPTZ_NS)
                           ? 1000000000ll : 1000000ll;
        int64_t center = rnd_range(-3000000000ll, 3000000000ll) * unit;
        int64_t spreads[] = {3, unit, 3600 * unit, 40 * 86400 * unit};
        int64_t spread = spreads[iter % 4];
        floe_value x = rnd_int_like(ty, center, spread), lit = rnd_int_like(ty, center, spread);
        check_all_ops(XF_YEAR, &x, &lit);
        check_all_ops(XF_MONTH, &x, &lit);
        check_all_ops(XF_DAY, &x, &lit);
        check_all_ops(XF_HOUR, &x, &lit);
        check_all_ops(bucket(7), &x, &lit);
        /* exact boundaries: lit on a day/hour edge */
        floe_value edge = lit;
        edge.v.i64 = (lit.v.i64 / (3600 * unit)) * (3600 * unit);
        check_all_ops(XF_DAY, &x, &edge);
        check_all_ops(XF_HOUR, &x, &edge);
    }
    for (int iter = 0; iter < 20000; iter++) {
        int64_t center = rnd_range(-800000, 800000);
        floe_value x = rnd_int_like(FLOE_TYPE_DATE, center, iter % 2 ? 40 : 800);
        floe_value lit = rnd_int_like(FLOE_TYPE_DATE, center, iter % 2 ? 40 : 800);
        check_all_ops(XF_YEAR, &x, &lit);
        check_all_ops(XF_MONTH, &x, &lit);
        check_all_ops(XF_DAY, &x, &lit);
    }
    /* decimals */
    for (int iter = 0; iter < 10000; iter++) {
        int64_t c = rnd_range(-100000, 100000);
        floe_value x = floe_value_decimal(c + rnd_range(-200, 200), 9, 2);
        floe_value lit = floe_value_decimal(c + rnd_range(-200, 200), 9, 2);
        check_all_ops(trunc_(widths[iter % 5]), &x, &lit);
        check_all_ops(bucket(5), &x, &lit);
    }
    /* strings over a small alphabet with multi-byte code points, and binary */
    static const char *alpha[] = {"a", "b", "\xc3\xa9", "\xe6\xb5\x8b", "\xf0\x9f\x98\x80", "z"};
    for (int iter = 0; iter < 20000; iter++) {
        char xs[32], ls[32];
        size_t xn = 0, ln = 0;
        int nx = (int)rnd_range(0, 5), nl = (int)rnd_range(0, 5);
        for (int k = 0; k < nx; k++) {
            const char *a = alpha[harness_rnd() % 6];
            memcpy(xs + xn, a, strlen(a));
            xn += strlen(a);
        }
        for (int k = 0; k < nl; k++) {
            const char *a = alpha[harness_rnd() % 6];
            memcpy(ls + ln, a, strlen(a));
            ln += strlen(a);
        }
        if (iter % 4 == 0 && ln <= xn) /* make prefixes common */
            memcpy(xs, ls, ln);
        floe_value x = floe_value_string(xs, xn), lit = floe_value_string(ls, ln);
        floe_transform tr = trunc_((int)rnd_range(1, 4));
        check_all_ops(tr, &x, &lit);
        check_projection(tr, FLOE_PRED_STARTS_WITH, &x, &lit);
        check_projection(XF_ID, FLOE_PRED_STARTS_WITH, &x, &lit);
        check_all_ops(bucket(3), &x, &lit);
        floe_value xb = floe_value_binary(xs, xn), lb = floe_value_binary(ls, ln);
        check_all_ops(tr, &xb, &lb);
        check_projection(tr, FLOE_PRED_STARTS_WITH, &xb, &lb);
    }
    /* nulls */
    floe_value nx = floe_value_null(FLOE_TYPE_LONG), lit = floe_value_long(3);
    check_all_ops(trunc_(10), &nx, &lit);
    check_all_ops(XF_VOID, &nx, &lit);
    CHECK(n_checked > 100000);
    CHECK(n_pruning > 100000);
}

TEST(test_projection_shapes) {
    floe_error err;
    floe_projection pr;
    /* ts > X  ->  ts_day >= day(X + 1): the spec's example */
    int64_t x = micros_of(2026, 10, 6, 23, 59, 59, 999999);
    floe_value lit = floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, x);
    CHECK_OK(floe_transform_project(XF_DAY, FLOE_PRED_GT, &lit, &pr, &err), err);
    CHECK(!pr.always_true && pr.op == FLOE_PRED_GE && pr.value.type == FLOE_TYPE_DATE);
    CHECK_EQ_INT(pr.value.v.i32, days_of(2026, 10, 7));
    CHECK_OK(floe_transform_project(XF_DAY, FLOE_PRED_GE, &lit, &pr, &err), err);
    CHECK_EQ_INT(pr.value.v.i32, days_of(2026, 10, 6));
    /* ts < midnight -> day <= previous day */
    lit.v.i64 = micros_of(2026, 10, 6, 0, 0, 0, 0);
    CHECK_OK(floe_transform_project(XF_DAY, FLOE_PRED_LT, &lit, &pr, &err), err);
    CHECK(pr.op == FLOE_PRED_LE && pr.value.v.i32 == days_of(2026, 10, 5));
    /* bucket: equality only */
    floe_value l = floe_value_long(34);
    CHECK_OK(floe_transform_project(bucket(100), FLOE_PRED_EQ, &l, &pr, &err), err);
    CHECK(!pr.always_true && pr.op == FLOE_PRED_EQ && pr.value.v.i32 == 79);
    CHECK_OK(floe_transform_project(bucket(100), FLOE_PRED_LT, &l, &pr, &err), err);
    CHECK(pr.always_true);
    CHECK_OK(floe_transform_project(trunc_(10), FLOE_PRED_NE, &l, &pr, &err), err);
    CHECK(pr.always_true);
    CHECK_OK(floe_transform_project(XF_ID, FLOE_PRED_NE, &l, &pr, &err), err);
    CHECK(!pr.always_true && pr.op == FLOE_PRED_NE);
    /* truncate: x < 20 -> t <= t(19) = 10 ; x > 19 -> t >= t(20) = 20 */
    l = floe_value_long(20);
    CHECK_OK(floe_transform_project(trunc_(10), FLOE_PRED_LT, &l, &pr, &err), err);
    CHECK(pr.op == FLOE_PRED_LE && pr.value.v.i64 == 10);
    l = floe_value_long(19);
    CHECK_OK(floe_transform_project(trunc_(10), FLOE_PRED_GT, &l, &pr, &err), err);
    CHECK(pr.op == FLOE_PRED_GE && pr.value.v.i64 == 20);
    /* x < LONG_MIN matches nothing: no adjustment possible, stays inclusive */
    l = floe_value_long(INT64_MIN);
    CHECK_OK(floe_transform_project(trunc_(10), FLOE_PRED_LT, &l, &pr, &err), err);
    CHECK(pr.always_true);
    /* strings: starts_with longer than the width pins the value */
    floe_value sl = floe_value_string("iceberg", 7);
    CHECK_OK(floe_transform_project(trunc_(3), FLOE_PRED_STARTS_WITH, &sl, &pr, &err), err);
    CHECK(pr.op == FLOE_PRED_EQ && pr.value.v.bytes.n == 3);
    sl = floe_value_string("ic", 2);
    CHECK_OK(floe_transform_project(trunc_(3), FLOE_PRED_STARTS_WITH, &sl, &pr, &err), err);
    CHECK(pr.op == FLOE_PRED_STARTS_WITH && pr.value.v.bytes.n == 2);
    /* null tests keep their shape; void says nothing */
    CHECK_OK(floe_transform_project(bucket(4), FLOE_PRED_IS_NULL, &l, &pr, &err), err);
    CHECK(!pr.always_true && pr.op == FLOE_PRED_IS_NULL);
    CHECK_OK(floe_transform_project(XF_VOID, FLOE_PRED_EQ, &l, &pr, &err), err);
    CHECK(pr.always_true);
    /* a literal the transform cannot take is an error, not a silent "true" */
    floe_value sv = floe_value_string("x", 1);
    CHECK_EQ_INT(floe_transform_project(XF_DAY, FLOE_PRED_EQ, &sv, &pr, &err), FLOE_EINVALID);
}

/* ---- failure injection --------------------------------------------------------------------- */

TEST(test_alloc_failures) {
    floe_schema *s = test_schema();
    REQUIRE(s);
    const char *js = "{\"spec-id\":2,\"fields\":[{\"source-id\":2,\"field-id\":1000,"
                     "\"name\":\"ts_day\",\"transform\":\"day\"},{\"source-id\":3,"
                     "\"field-id\":1001,\"name\":\"user_id_bucket\",\"transform\":\"bucket[16]\"}]}";
    int ok = 0, nomem = 0;
    for (uint64_t n = 1; n < 400; n++) {
        floe_error err;
        floe_partition_spec *p = NULL, *q = NULL;
        floe_alloc_fail_after(n);
        int rc1 = floe_partition_spec_parse(s, "event_type, bucket(16, user_id), day(ts) AS dd, "
                                               "truncate(2, name), x, u, d, flag, blob, t",
                                            0, 0, &p, &err);
        int rc2 = floe_partition_spec_parse_json(js, strlen(js), s, &q, &err);
        char *j = p ? floe_partition_spec_to_json(p) : NULL;
        floe_alloc_fail_after(0);
        CHECK(rc1 == 0 || rc1 == FLOE_ENOMEM);
        CHECK(rc2 == 0 || rc2 == FLOE_ENOMEM);
        CHECK((rc1 == 0) == (p != NULL));
        if (rc1 == 0 && rc2 == 0 && j)
            ok++;
        else
            nomem++;
        floe_free(j);
        floe_partition_spec_free(p);
        floe_partition_spec_free(q);
    }
    CHECK(ok > 0 && nomem > 0);
    floe_schema_free(s);
}

int main(void) {
    harness_rng_seed(0x9E3779B97F4A7C15ull);
    floe_buf_init(&tbuf, 0);
    RUN(test_murmur3_raw);
    RUN(test_hash_spec_vectors);
    RUN(test_bucket);
    RUN(test_truncate);
    RUN(test_calendar);
    RUN(test_time_transforms);
    RUN(test_transform_names_and_types);
    RUN(test_human_strings);
    RUN(test_binary_single_value);
    RUN(test_json_single_value);
    RUN(test_spec_json_roundtrip);
    RUN(test_spec_string_form);
    RUN(test_partition_path);
    RUN(test_partition_path_bounded);
    RUN(test_sort_orders);
    RUN(test_projection_bruteforce);
    RUN(test_projection_shapes);
    RUN(test_alloc_failures);
    floe_buf_free(&tbuf);
    return harness_finish();
}
