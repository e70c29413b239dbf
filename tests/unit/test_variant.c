/*
 * test_variant.c - the Variant codec (src/json/variant.c, floe/variant.h).
 *
 * Conformance: every case of ../shared/conformance/parquet-testing/variant (a .metadata and
 * a .value blob per case) decodes to the value data_dictionary.json gives for it (the one
 * case the dictionary leaves out, long_string, must decode to a string). The
 * dictionary is Spark's rendering, so values are compared by meaning: numbers as numbers
 * (a float as the float it is), timestamps as instants (the dictionary prints some in a
 * -04:00 zone, floe in UTC), times of day as nanoseconds, everything else exactly. Each
 * decoded value also survives JSON -> variant -> JSON unchanged, and re-encodes to the
 * very bytes of the case where the case's type is the one floe's canonical encoding picks
 * for that JSON (CANONICAL below).
 *
 * Then: the canonical encoding byte for byte on small hand-checked values, widths chosen
 * minimal, and malformed blobs refused with the byte offset of the fault.
 */
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "harness.h"

#define VDIR "parquet-testing/variant"

/* Cases whose JSON encodes canonically to the case's own bytes. The others hold types
 * JSON has no text for (date, timestamps, binary, uuid, float, time), a double (whose
 * JSON text floe encodes as a decimal), or a dictionary Spark did not sort. */
static const char *const CANONICAL[] = {
    "primitive_null",  "primitive_boolean_true", "primitive_boolean_false", "primitive_int8",
    "primitive_int16", "primitive_int32",        "primitive_int64",         "primitive_decimal4",
    "primitive_decimal8", "primitive_decimal16",
    "primitive_string", "short_string",          "long_string",             "array_empty",
    "array_primitive", "object_empty",
};

static bool canonical_case(const char *name) {
    for (size_t i = 0; i < sizeof CANONICAL / sizeof *CANONICAL; i++)
        if (!strcmp(CANONICAL[i], name))
            return true;
    return false;
}

/* ---- comparing by meaning ---------------------------------------------------------------- */

static int digits(const char **s, int n, long long *out) {
    long long v = 0;
    for (int i = 0; i < n; i++, (*s)++) {
        if (!isdigit((unsigned char)**s))
            return -1;
        v = v * 10 + (**s - '0');
    }
    *out = v;
    return 0;
}

static long long days_from_civil(long long y, long long m, long long d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "HH:MM:SS" then '.' or ':' and up to 9 digits: nanoseconds of the day. */
static int parse_tod(const char **s, long long *ns) {
    long long h, mi, se, f = 0;
    if (digits(s, 2, &h) || *(*s)++ != ':' || digits(s, 2, &mi) || *(*s)++ != ':' ||
        digits(s, 2, &se))
        return -1;
    if (**s == '.' || **s == ':') {
        (*s)++;
        int n = 0;
        while (isdigit((unsigned char)**s) && n < 9) {
            f = f * 10 + (*(*s)++ - '0');
            n++;
        }
        for (; n < 9; n++)
            f *= 10;
    }
    *ns = ((h * 60 + mi) * 60 + se) * 1000000000LL + f;
    return 0;
}

/* A date, time of day, or timestamp with an optional Z / +hh:mm zone, as a number:
 * kind 1 date (days), 2 time (ns of day), 3 timestamp (ns since the epoch, the zone
 * applied). 0 when s is none of these. */
static int temporal(const char *s, long long *v) {
    long long y, mo, d, tod, zh, zm;
    const char *p = s;
    if (strlen(s) >= 8 && s[2] == ':') {
        if (parse_tod(&p, &tod) || *p)
            return 0;
        *v = tod;
        return 2;
    }
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d))
        return 0;
    long long days = days_from_civil(y, mo, d);
    if (!*p) {
        *v = days;
        return 1;
    }
    if (*p != 'T' && *p != ' ')
        return 0;
    p++;
    if (parse_tod(&p, &tod))
        return 0;
    long long off = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        if (digits(&p, 2, &zh) || *p++ != ':' || digits(&p, 2, &zm))
            return 0;
        off = sign * (zh * 60 + zm) * 60 * 1000000000LL;
    }
    if (*p)
        return 0;
    *v = days * 86400 * 1000000000LL + tod - off;
    return 3;
}

static bool same_meaning(const json_t *want, const json_t *got, const char *where) {
    if (json_is_number(want) && json_is_number(got)) {
        if (json_is_integer(want) && json_is_integer(got))
            return json_integer_value(want) == json_integer_value(got);
        double a = json_number_value(want), b = json_number_value(got);
        if (a == b || (float)a == (float)b || fabs(a - b) <= 1e-15 * fabs(a))
            return true;
        fprintf(stderr, "%s: %.17g != %.17g\n", where, a, b);
        return false;
    }
    if (json_is_string(want) && json_is_string(got)) {
        const char *a = json_string_value(want), *b = json_string_value(got);
        if (!strcmp(a, b))
            return true;
        long long va, vb;
        int ka = temporal(a, &va), kb = temporal(b, &vb);
        if (ka && ka == kb && va == vb)
            return true;
        fprintf(stderr, "%s: \"%s\" != \"%s\"\n", where, a, b);
        return false;
    }
    if (json_is_array(want) && json_is_array(got)) {
        if (json_array_size(want) != json_array_size(got))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!same_meaning(json_array_get(want, i), json_array_get(got, i), where))
                return false;
        return true;
    }
    if (json_is_object(want) && json_is_object(got)) {
        if (json_object_size(want) != json_object_size(got))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)want, k, v) {
            json_t *g = json_object_get(got, k);
            if (!g || !same_meaning(v, g, where))
                return false;
        }
        return true;
    }
    if (json_equal((json_t *)want, (json_t *)got))
        return true;
    fprintf(stderr, "%s: JSON types differ\n", where);
    return false;
}

/* data_dictionary.json ends its object with a comma, which strict JSON refuses: drop a
 * comma followed by nothing but blanks and the closing brace. */
static json_t *load_dictionary(void) {
    size_t n;
    char *text = harness_read_file(harness_conformance(VDIR "/data_dictionary.json"), &n);
    if (!text)
        return NULL;
    size_t i = n;
    while (i > 0 && isspace((unsigned char)text[i - 1]))
        i--;
    if (i > 0 && text[i - 1] == '}') {
        size_t j = i - 1;
        while (j > 0 && isspace((unsigned char)text[j - 1]))
            j--;
        if (j > 0 && text[j - 1] == ',')
            text[j - 1] = ' ';
    }
    json_error_t je;
    json_t *d = json_loadb(text, n, JSON_DECODE_ANY, &je);
    if (!d)
        fprintf(stderr, "data_dictionary.json: %s (line %d)\n", je.text, je.line);
    free(text);
    return d;
}

static char *read_blob(const char *name, const char *ext, size_t *n) {
    char rel[512];
    snprintf(rel, sizeof rel, VDIR "/%s.%s", name, ext);
    return harness_read_file(harness_conformance(rel), n);
}

TEST(conformance_cases_decode_to_the_dictionary) {
    json_t *dict = load_dictionary();
    REQUIRE(dict && json_is_object(dict));
    REQUIRE(json_object_size(dict) >= 28);
    floe_variant_encoder *enc = NULL;
    floe_error err = {0};
    REQUIRE(floe_variant_encoder_new(&enc, &err) == 0);
    DIR *dir = opendir(harness_conformance(VDIR));
    REQUIRE(dir != NULL);
    size_t ncases = 0, nexact = 0, nlisted = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        char name[256];
        size_t len = strlen(de->d_name);
        if (len < 10 || len >= sizeof name || strcmp(de->d_name + len - 9, ".metadata"))
            continue;
        memcpy(name, de->d_name, len - 9);
        name[len - 9] = 0;
        json_t *want = json_object_get(dict, name);
        nlisted += want != NULL;
        size_t nm, nv;
        char *m = read_blob(name, "metadata", &nm), *v = read_blob(name, "value", &nv);
        REQUIRE(m && v);
        floe_buf out;
        floe_buf_init(&out, 0);
        int rc = floe_variant_to_json((uint8_t *)m, nm, (uint8_t *)v, nv, &out, &err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", name, err.msg);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            json_error_t je;
            json_t *got = json_loadb((char *)out.data, out.len, JSON_DECODE_ANY, &je);
            if (!got)
                fprintf(stderr, "%s: floe printed invalid JSON: %.*s\n", name, (int)out.len,
                        (char *)out.data);
            CHECK(got != NULL);
            if (got && !want && !json_is_string(got)) {
                fprintf(stderr, "%s: not in the dictionary, and not a string\n", name);
                CHECK(!"decoded value differs from data_dictionary.json");
            }
            if (got && want && !same_meaning(want, got, name)) {
                fprintf(stderr, "%s: floe printed %.*s\n", name, (int)out.len, (char *)out.data);
                CHECK(!"decoded value differs from data_dictionary.json");
            }
            json_decref(got);
            /* JSON -> variant -> JSON gives the same text */
            floe_buf m2, v2, again;
            floe_buf_init(&m2, 0);
            floe_buf_init(&v2, 0);
            floe_buf_init(&again, 0);
            CHECK_EQ_INT(floe_variant_encode_json(enc, out.data, out.len, &m2, &v2, &err), 0);
            CHECK_EQ_INT(floe_variant_to_json(m2.data, m2.len, v2.data, v2.len, &again, &err), 0);
            if (again.len != out.len || memcmp(again.data, out.data, out.len)) {
                fprintf(stderr, "%s: round trip %.*s -> %.*s\n", name, (int)out.len,
                        (char *)out.data, (int)again.len, (char *)again.data);
                CHECK(!"round trip changed the JSON text");
            }
            bool exact = m2.len == nm && v2.len == nv && !memcmp(m2.data, m, nm) &&
                         !memcmp(v2.data, v, nv);
            if (canonical_case(name)) {
                if (!exact)
                    fprintf(stderr, "%s: re-encoding differs from the case's bytes\n", name);
                CHECK(exact);
            }
            nexact += exact;
            floe_buf_free(&m2);
            floe_buf_free(&v2);
            floe_buf_free(&again);
        }
        floe_buf_free(&out);
        free(m);
        free(v);
        ncases++;
    }
    closedir(dir);
    CHECK_EQ_INT(nlisted, json_object_size(dict)); /* every dictionary entry has its files */
    CHECK_EQ_INT(nexact, sizeof CANONICAL / sizeof *CANONICAL);
    printf("variant conformance: %zu cases, %zu re-encoded byte-exact\n", ncases, nexact);
    floe_variant_encoder_free(enc);
    json_decref(dict);
}

/* ---- the canonical encoding -------------------------------------------------------------- */

static void hex_of(const floe_buf *b, char *out) {
    for (size_t i = 0; i < b->len; i++)
        sprintf(out + 2 * i, "%02x", b->data[i]);
    out[2 * b->len] = 0;
}

static void encodes_to(const char *json, const char *meta_hex, const char *value_hex) {
    floe_variant_encoder *enc = NULL;
    floe_error err = {0};
    REQUIRE(floe_variant_encoder_new(&enc, &err) == 0);
    floe_buf m, v;
    floe_buf_init(&m, 0);
    floe_buf_init(&v, 0);
    int rc = floe_variant_encode_json(enc, (const uint8_t *)json, strlen(json), &m, &v, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", json, err.msg);
    CHECK_EQ_INT(rc, 0);
    char hm[256], hv[256];
    if (m.len < 120 && v.len < 120) {
        hex_of(&m, hm);
        hex_of(&v, hv);
        if (strcmp(hm, meta_hex) || strcmp(hv, value_hex))
            harness_fail(__FILE__, __LINE__, "%s: metadata %s value %s, expected %s %s", json,
                         hm, hv, meta_hex, value_hex);
    } else {
        CHECK(!"encoding too long");
    }
    floe_buf_free(&m);
    floe_buf_free(&v);
    floe_variant_encoder_free(enc);
}

TEST(encoding_is_canonical) {
    encodes_to("null", "010000", "00");
    encodes_to(" true ", "010000", "04");
    encodes_to("false", "010000", "08");
    encodes_to("-128", "010000", "0c80");
    encodes_to("128", "010000", "108000");
    encodes_to("-32769", "010000", "14ff7fffff");
    encodes_to("2147483648", "010000", "180000008000000000");
    /* an integer -0 is the integer 0 (as DuckDB and Spark store it); a negative zero with
     * a fraction keeps its sign as a double -0.0 (a decimal's zero has none) */
    encodes_to("-0", "010000", "0c00");
    encodes_to("-0.0", "010000", "1c0000000000000080");
    encodes_to("-0.000", "010000", "1c0000000000000080");
    encodes_to("-0e5", "010000", "1c0000000000000080");
    encodes_to("-0.0E-3", "010000", "1c0000000000000080");
    encodes_to("0.0", "010000", "200100000000" /* decimal4 scale 1, 0 */);
    encodes_to("1.50", "010000", "200296000000" /* decimal4 scale 2, 150 */);
    encodes_to("0.05", "010000", "200205000000");
    encodes_to("1e2", "010000", "1c0000000000005940" /* double 100 */);
    encodes_to("12345678901234567890", "010000",
               "2800" "d20a1feb8ca954ab0000000000000000" /* decimal16 scale 0 */);
    encodes_to("\"a\\u00e9\"", "010000", "0d61c3a9");
    /* keys sorted in the dictionary; ids, offsets and values in key order */
    encodes_to("{\"b\":1,\"a\":[true,\"x\"]}", "1102000102" "6162" /* "a","b" */,
               "0202" "0001" "00080a" "03020001030405" "78" "0c01");
    encodes_to("[]", "010000", "0300" "00");
    encodes_to("{}", "010000", "0200" "00");
}

TEST(widths_are_minimal) {
    floe_variant_encoder *enc = NULL;
    floe_error err = {0};
    REQUIRE(floe_variant_encoder_new(&enc, &err) == 0);
    /* 300 keys: is_large, 2-byte field ids, 2-byte offsets; metadata offsets of 2 bytes */
    floe_buf text, m, v, back;
    floe_buf_init(&text, 0);
    floe_buf_init(&m, 0);
    floe_buf_init(&v, 0);
    floe_buf_init(&back, 0);
    floe_buf_append_byte(&text, '{');
    for (int i = 0; i < 300; i++)
        floe_buf_printf(&text, "%s\"k%03d\":%d", i ? "," : "", 299 - i, i);
    floe_buf_append_byte(&text, '}');
    REQUIRE(floe_variant_encode_json(enc, text.data, text.len, &m, &v, &err) == 0);
    CHECK_EQ_INT(m.data[0], 0x51);               /* version 1, sorted, 2-byte offsets */
    CHECK_EQ_INT(m.data[1] | m.data[2] << 8, 300);
    CHECK_EQ_INT(v.data[0], 0x02 | 1 << 6 | 1 << 4 | 1 << 2); /* large, id 2, offset 2 */
    CHECK_EQ_INT(v.data[1] | v.data[2] << 8, 300);
    REQUIRE(floe_variant_to_json(m.data, m.len, v.data, v.len, &back, &err) == 0);
    CHECK(back.len > 6 && !memcmp(back.data, "{\"k000\":299,", 12));
    /* a 70-byte string: the string primitive, not a short string */
    floe_buf_reset(&m);
    floe_buf_reset(&v);
    const char *s70 = "\"0123456789012345678901234567890123456789012345678901234567890123456789\"";
    REQUIRE(floe_variant_encode_json(enc, (const uint8_t *)s70, strlen(s70), &m, &v, &err) == 0);
    CHECK_EQ_INT(v.len, 1 + 4 + 70);
    CHECK_EQ_INT(v.data[0], 16 << 2);
    CHECK_EQ_INT(v.data[1], 70);
    floe_buf_free(&text);
    floe_buf_free(&m);
    floe_buf_free(&v);
    floe_buf_free(&back);
    floe_variant_encoder_free(enc);
}

/* json is refused with code at offset (and message msg unless NULL). */
static void json_refused_msg(const char *json, int code, int64_t offset, const char *msg) {
    floe_variant_encoder *enc = NULL;
    floe_error err = {0};
    REQUIRE(floe_variant_encoder_new(&enc, &err) == 0);
    floe_buf m, v;
    floe_buf_init(&m, 0);
    floe_buf_init(&v, 0);
    int rc = floe_variant_encode_json(enc, (const uint8_t *)json, strlen(json), &m, &v, &err);
    if (rc != code || err.offset != offset)
        harness_fail(__FILE__, __LINE__, "%s: rc %d offset %lld (%s), expected %d at %lld", json,
                     rc, (long long)err.offset, err.msg, code, (long long)offset);
    if (msg)
        CHECK_EQ_STR(err.msg, msg);
    CHECK_EQ_INT(m.len, 0);
    CHECK_EQ_INT(v.len, 0);
    floe_buf_free(&m);
    floe_buf_free(&v);
    floe_variant_encoder_free(enc);
}

static void json_refused(const char *json, int code, int64_t offset) {
    json_refused_msg(json, code, offset, NULL);
}

TEST(bad_json_is_refused_with_its_offset) {
    json_refused("{\"a\":1,\"a\":2}", FLOE_EINVALID, 0);
    json_refused("[1,]", FLOE_EINVALID, 3);
    json_refused("[1] x", FLOE_EINVALID, 4);
    json_refused("\"\\ud800\"", FLOE_EINVALID, 1);
    json_refused("\"\xff\"", FLOE_EINVALID, 0);
    json_refused("01", FLOE_EINVALID, 1);
    json_refused("1e999", FLOE_EINVALID, 0);
    json_refused("", FLOE_EINVALID, 0);
    char deep[300];
    memset(deep, '[', 200);
    deep[200] = 0;
    json_refused(deep, FLOE_ELIMIT, 128);
}

/* The refusal of a key given twice shows the key as a JSON string: "a\u0000" was shown as
 * "a", a key the object did not hold (adv23e). */
TEST(duplicate_key_message_escapes_the_key) {
    json_refused_msg("{\"a\\u0000\\\"\":1,\"a\\u0000\\\"\":2}", FLOE_EINVALID, 0,
                     "variant JSON: duplicate key \"a\\u0000\\\"\"");
}

/* ---- malformed blobs ----------------------------------------------------------------------- */

static void blob_refused(const char *what, const uint8_t *m, size_t nm, const uint8_t *v,
                         size_t nv, int code, int64_t offset) {
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err = {0};
    int rc = floe_variant_to_json(m, nm, v, nv, &out, &err);
    if (rc != code || err.offset != offset)
        harness_fail(__FILE__, __LINE__, "%s: rc %d offset %lld (%s), expected %d at %lld", what,
                     rc, (long long)err.offset, err.msg, code, (long long)offset);
    else
        CHECK(strstr(err.msg, "byte") != NULL);
    floe_buf_free(&out);
}

TEST(malformed_blobs_are_refused_with_their_offset) {
    static const uint8_t empty_meta[] = {0x01, 0x00, 0x00};
    static const uint8_t ab_meta[] = {0x11, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};
    static const uint8_t null_v[] = {0x00};
    /* metadata */
    blob_refused("empty metadata", empty_meta, 0, null_v, 1, FLOE_ECORRUPT, 0);
    blob_refused("version 2", (const uint8_t[]){0x02, 0, 0}, 3, null_v, 1, FLOE_ECORRUPT, 0);
    blob_refused("offsets past the end", (const uint8_t[]){0x01, 5, 0}, 3, null_v, 1,
                 FLOE_ECORRUPT, 2);
    blob_refused("first offset not 0", (const uint8_t[]){0x01, 1, 1, 1, 'a'}, 5, null_v, 1,
                 FLOE_ECORRUPT, 2);
    blob_refused("offset past the strings", (const uint8_t[]){0x01, 1, 0, 2, 'a'}, 5, null_v, 1,
                 FLOE_ECORRUPT, 3);
    blob_refused("bytes after the strings", (const uint8_t[]){0x01, 1, 0, 1, 'a', 'b'}, 6,
                 null_v, 1, FLOE_ECORRUPT, 5);
    blob_refused("sorted flag, unsorted strings",
                 (const uint8_t[]){0x11, 2, 0, 1, 2, 'b', 'a'}, 7, null_v, 1, FLOE_ECORRUPT, 6);
    blob_refused("sorted flag, duplicate strings",
                 (const uint8_t[]){0x11, 2, 0, 1, 2, 'a', 'a'}, 7, null_v, 1, FLOE_ECORRUPT, 6);
    blob_refused("invalid UTF-8 key", (const uint8_t[]){0x01, 1, 0, 1, 0xC0}, 5, null_v, 1,
                 FLOE_ECORRUPT, 4);
    /* values */
    blob_refused("empty value", empty_meta, 3, null_v, 0, FLOE_ECORRUPT, 0);
    blob_refused("trailing byte", empty_meta, 3, (const uint8_t[]){0x00, 0x00}, 2,
                 FLOE_ECORRUPT, 1);
    blob_refused("int32 cut short", empty_meta, 3, (const uint8_t[]){5 << 2, 1, 2}, 3,
                 FLOE_ECORRUPT, 0);
    blob_refused("unknown primitive", empty_meta, 3, (const uint8_t[]){21 << 2}, 1,
                 FLOE_EUNSUPPORTED, 0);
    blob_refused("string length past the end", empty_meta, 3,
                 (const uint8_t[]){16 << 2, 9, 0, 0, 0, 'x'}, 6, FLOE_ECORRUPT, 1);
    blob_refused("short string past the end", empty_meta, 3, (const uint8_t[]){1 | 3 << 2, 'x'},
                 2, FLOE_ECORRUPT, 0);
    blob_refused("decimal scale 39", empty_meta, 3, (const uint8_t[]){8 << 2, 39, 1, 0, 0, 0}, 6,
                 FLOE_ECORRUPT, 1);
    /* {"a":null} with field id 2 (the dictionary has 2 strings) */
    blob_refused("field id past the dictionary", ab_meta, 7,
                 (const uint8_t[]){0x02, 1, 2, 0, 1, 0x00}, 6, FLOE_ECORRUPT, 2);
    /* {"b":.., "a":..}: ids not in key order */
    blob_refused("keys not sorted", ab_meta, 7,
                 (const uint8_t[]){0x02, 2, 1, 0, 0, 1, 2, 0x00, 0x00}, 9, FLOE_ECORRUPT, 3);
    blob_refused("duplicate key", ab_meta, 7,
                 (const uint8_t[]){0x02, 2, 0, 0, 0, 1, 2, 0x00, 0x00}, 9, FLOE_ECORRUPT, 3);
    /* an unsorted dictionary with "a" twice: the same name under two ids */
    blob_refused("same name under two ids", (const uint8_t[]){0x01, 2, 0, 1, 2, 'a', 'a'}, 7,
                 (const uint8_t[]){0x02, 2, 0, 1, 0, 1, 2, 0x00, 0x00}, 9, FLOE_ECORRUPT, 3);
    blob_refused("object values past the end", ab_meta, 7,
                 (const uint8_t[]){0x02, 1, 0, 0, 5, 0x00}, 6, FLOE_ECORRUPT, 4);
    blob_refused("element offset at the end", empty_meta, 3,
                 (const uint8_t[]){0x03, 1, 1, 1, 0x00}, 5, FLOE_ECORRUPT, 2);
    blob_refused("array count past the end", empty_meta, 3, (const uint8_t[]){0x03, 200, 0}, 3,
                 FLOE_ECORRUPT, 2);
    blob_refused("unused array header bits", empty_meta, 3, (const uint8_t[]){0x03 | 0x20, 0, 0},
                 3, FLOE_ECORRUPT, 0);
    blob_refused("time past midnight", empty_meta, 3,
                 (const uint8_t[]){17 << 2, 0x00, 0x60, 0xd7, 0x1d, 0x14, 0, 0, 0}, 9,
                 FLOE_ECORRUPT, 1);
    /* 200 nested arrays of one element, 2-byte offsets: [[[...null...]]] */
    uint8_t deep[1201];
    size_t n = 0;
    for (int i = 0; i < 200; i++) {
        size_t rest = sizeof deep - 6 * ((size_t)i + 1);
        deep[n++] = 0x03 | 1 << 2;
        deep[n++] = 1;
        deep[n++] = 0;
        deep[n++] = 0;
        deep[n++] = (uint8_t)rest;
        deep[n++] = (uint8_t)(rest >> 8);
    }
    deep[n++] = 0;
    blob_refused("deep nesting", empty_meta, 3, deep, n, FLOE_ELIMIT, 128 * 6);
}

int main(void) {
    RUN(conformance_cases_decode_to_the_dictionary);
    RUN(encoding_is_canonical);
    RUN(widths_are_minimal);
    RUN(bad_json_is_refused_with_its_offset);
    RUN(duplicate_key_message_escapes_the_key);
    RUN(malformed_blobs_are_refused_with_their_offset);
    return harness_finish();
}
