/* test_gen.c - the event generator: determinism, shape of every event, timestamp bounds,
 * malformed-record injection, options, the schema file, and the `floe gen` command. */
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "floe/gen.h"
#include "harness.h"
#include "common/testing.h"

/* Generate n events into a fresh buffer; info[] (may be NULL) gets each event's info. */
static char *gen_events(const floe_gen_opts *o, int n, size_t *len, floe_gen_event_info *info) {
    floe_error err;
    floe_error_clear(&err);
    floe_gen *g = NULL;
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_gen_new(o, &g, &err) < 0)
        return NULL;
    for (int i = 0; i < n; i++) {
        if (floe_gen_next(g, &b, info ? &info[i] : NULL, &err) < 0) {
            floe_gen_free(g);
            floe_buf_free(&b);
            return NULL;
        }
    }
    floe_gen_free(g);
    return floe_buf_detach(&b, len);
}

/* Split into lines (in place); returns the count, lines[] point into text. */
static int split_lines(char *text, size_t len, char **lines, int max) {
    int n = 0;
    char *p = text, *end = text + len;
    while (p < end && n < max) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        *nl = '\0';
        lines[n++] = p;
        p = nl + 1;
    }
    return n;
}

static bool is_uuid_v4(const char *s) {
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash != (s[i] == '-'))
            return false;
        if (!dash && !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    }
    return s[14] == '4' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

static bool str_or_null(json_t *v) {
    return v && (json_is_string(v) || json_is_null(v));
}

/* Checks one parsed event against the events schema. Returns NULL if it conforms, else
 * what is wrong. *ts gets the timestamp. */
static const char *check_event(json_t *o, const floe_gen *g, int partitions, int64_t *ts) {
    if (!json_is_object(o))
        return "not an object";
    static const char *const known[] = {"event_id", "event_type", "ts",     "user_id",
                                        "session_id", "device",   "geo",    "amount",
                                        "currency", "tags",       "payload", "is_bot",
                                        "consent"};
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok |= !strcmp(key, known[i]);
        if (!ok)
            return "unknown key";
    }
    v = json_object_get(o, "event_id");
    if (!json_is_string(v) || !is_uuid_v4(json_string_value(v)))
        return "event_id";
    v = json_object_get(o, "event_type");
    if (!json_is_string(v))
        return "event_type";
    bool found = false;
    for (int k = 0; k < partitions; k++)
        found |= !strcmp(json_string_value(v), floe_gen_partition_name(g, k));
    if (!found)
        return "event_type value";
    v = json_object_get(o, "ts");
    floe_error err;
    if (!json_is_string(v) || floe_gen_parse_time(json_string_value(v), ts, &err) < 0)
        return "ts";
    if (strlen(json_string_value(v)) != 27)
        return "ts format";
    v = json_object_get(o, "user_id");
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return "user_id";
    v = json_object_get(o, "session_id");
    if (!json_is_string(v) || strncmp(json_string_value(v), "s-", 2) != 0)
        return "session_id";
    v = json_object_get(o, "device");
    if (!json_is_null(v)) {
        if (!json_is_object(v) || json_object_size(v) != 4 ||
            !json_is_string(json_object_get(v, "os")) ||
            !json_is_string(json_object_get(v, "os_version")) ||
            !str_or_null(json_object_get(v, "model")) ||
            !json_is_string(json_object_get(v, "app_version")))
            return "device";
    }
    v = json_object_get(o, "geo");
    if (!json_is_null(v)) {
        json_t *lat = json_object_get(v, "lat"), *lon = json_object_get(v, "lon");
        if (!json_is_object(v) || json_object_size(v) != 4 ||
            !json_is_string(json_object_get(v, "country")) ||
            !json_is_string(json_object_get(v, "city")) || !json_is_number(lat) ||
            !json_is_number(lon) || json_number_value(lat) < -90 || json_number_value(lat) > 90 ||
            json_number_value(lon) < -180 || json_number_value(lon) > 180)
            return "geo";
    }
    v = json_object_get(o, "amount");
    json_t *cur = json_object_get(o, "currency");
    if (json_is_null(v)) {
        if (cur)
            return "currency without amount";
    } else if (!json_is_number(v) || json_number_value(v) < 0.99 ||
               !json_is_string(cur) || strlen(json_string_value(cur)) != 3) {
        return "amount/currency";
    }
    v = json_object_get(o, "tags");
    if (!json_is_array(v) || json_array_size(v) > 5)
        return "tags";
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!json_is_string(json_array_get(v, i)))
            return "tag";
    if (!str_or_null(json_object_get(o, "payload")))
        return "payload";
    if (!json_is_boolean(json_object_get(o, "is_bot")))
        return "is_bot";
    v = json_object_get(o, "consent");
    if (!v || !(json_is_boolean(v) || json_is_null(v)))
        return "consent";
    return NULL;
}

TEST(test_deterministic) {
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.seed = 42;
    size_t n1, n2, n3;
    char *a = gen_events(&o, 5000, &n1, NULL);
    char *b = gen_events(&o, 5000, &n2, NULL);
    o.seed = 43;
    char *c = gen_events(&o, 5000, &n3, NULL);
    REQUIRE(a && b && c);
    CHECK_EQ_U64(n1, n2);
    CHECK(n1 == n2 && memcmp(a, b, n1) == 0);
    CHECK(n1 != n3 || memcmp(a, c, n1) != 0);
    /* Different seeds differ nearly everywhere, not just somewhere. */
    CHECK(memcmp(a, c, 200) != 0);
    floe_free(a);
    floe_free(b);
    floe_free(c);
}

/* A pinned digest of a small run: changes to the generator that move bytes are visible
 * here (and must be deliberate: benchmarks and golden files depend on the stream). */
TEST(test_stable_stream) {
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    size_t n;
    char *a = gen_events(&o, 1, &n, NULL);
    REQUIRE(a);
    CHECK(strncmp(a, "{\"event_id\":\"642e1c7b-c266-43a7-b27a-48e29a233673\","
                     "\"event_type\":\"add_to_cart\",\"ts\":\"2026-10-06T00:00:00.000574Z\"",
                  107) == 0);
    floe_free(a);
}

TEST(test_every_event_valid) {
    enum { N = 20000 };
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.seed = 7;
    o.partitions = 12;
    floe_error err;
    floe_gen *g;
    REQUIRE_OK(floe_gen_new(&o, &g, &err), err);
    floe_gen_event_info *info = calloc(N, sizeof *info);
    char **lines = calloc(N, sizeof *lines);
    REQUIRE(info && lines);
    size_t len;
    char *text = gen_events(&o, N, &len, info);
    REQUIRE(text);
    REQUIRE(split_lines(text, len, lines, N) == N);
    int bad = 0, with_amount = 0, null_device = 0, empty_tags = 0, escapes = 0;
    int64_t per_type[12] = {0};
    for (int i = 0; i < N; i++) {
        json_error_t jerr;
        json_t *j = json_loads(lines[i], JSON_REJECT_DUPLICATES, &jerr);
        int64_t ts = 0;
        const char *why = j ? check_event(j, g, 12, &ts) : jerr.text;
        if (why) {
            if (bad++ < 5)
                harness_fail(__FILE__, __LINE__, "line %d: %s: %.200s", i + 1, why, lines[i]);
        } else {
            CHECK_EQ_INT(ts, info[i].ts_us);
            CHECK_EQ_STR(json_string_value(json_object_get(j, "event_type")),
                         floe_gen_partition_name(g, info[i].partition));
            per_type[info[i].partition]++;
            with_amount += !json_is_null(json_object_get(j, "amount"));
            null_device += json_is_null(json_object_get(j, "device"));
            empty_tags += json_array_size(json_object_get(j, "tags")) == 0;
        }
        escapes += strstr(lines[i], "\\u") != NULL;
        CHECK(info[i].malformed == FLOE_GEN_OK);
        json_decref(j);
    }
    CHECK_EQ_INT(bad, 0);
    /* Skewed, Zipf-like event types: rank order holds and the head dominates. */
    /* (Near the tail neighbouring ranks differ by less than the sampling noise.) */
    for (int k = 1; k < 6; k++)
        CHECK(per_type[k - 1] > per_type[k]);
    CHECK(per_type[0] > 5 * per_type[11]);
    CHECK(per_type[0] > N / 4);
    /* The optional parts really vary. */
    CHECK(with_amount > N / 100 && with_amount < N / 2);
    CHECK(null_device > 0 && null_device < N / 10);
    CHECK(empty_tags > N / 10 && empty_tags < N / 3);
    CHECK(escapes > 0);
    floe_free(text);
    free(lines);
    free(info);
    floe_gen_free(g);
}

TEST(test_timestamps_within_jitter) {
    enum { N = 20000 };
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.rate = 500; /* period 2000 us */
    o.jitter_us = 300000;
    floe_gen_event_info *info = calloc(N, sizeof *info);
    REQUIRE(info);
    size_t len;
    char *text = gen_events(&o, N, &len, info);
    REQUIRE(text);
    int64_t period = 2000, max_seen = INT64_MIN;
    int out_of_order = 0, violations = 0;
    for (int i = 0; i < N; i++) {
        int64_t nominal = o.start_us + (int64_t)i * period;
        int64_t ts = info[i].ts_us;
        if (ts < nominal - o.jitter_us || ts >= nominal + period)
            violations++;
        if (max_seen != INT64_MIN && ts < max_seen - o.jitter_us - period)
            violations++;
        if (ts < max_seen)
            out_of_order++;
        if (ts > max_seen)
            max_seen = ts;
    }
    CHECK_EQ_INT(violations, 0);
    /* Slightly out of order: some, not most. */
    CHECK(out_of_order > N / 50 && out_of_order < N / 4);
    CHECK(info[N - 1].ts_us > info[0].ts_us + (int64_t)(N - 200) * period);
    floe_free(text);
    free(info);
}

TEST(test_malformed_rate) {
    enum { N = 20000 };
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.seed = 9;
    floe_gen_event_info *info = calloc(N, sizeof *info);
    char **lines = calloc(N, sizeof *lines), **clean_lines = calloc(N, sizeof *clean_lines);
    REQUIRE(info && lines && clean_lines);
    size_t len, clean_len;
    char *clean = gen_events(&o, N, &clean_len, NULL);
    o.malformed_rate = 0.1;
    char *text = gen_events(&o, N, &len, info);
    REQUIRE(text && clean);
    REQUIRE(split_lines(text, len, lines, N) == N);
    REQUIRE(split_lines(clean, clean_len, clean_lines, N) == N);
    floe_error err;
    floe_gen *g;
    REQUIRE_OK(floe_gen_new(&o, &g, &err), err);
    int malformed = 0, kinds[4] = {0}, mismatches = 0;
    for (int i = 0; i < N; i++) {
        json_error_t jerr;
        json_t *j = json_loads(lines[i], JSON_REJECT_DUPLICATES, &jerr);
        int64_t ts;
        bool parses = j != NULL;
        bool conforms = j && check_event(j, g, o.partitions, &ts) == NULL;
        floe_gen_malformed k = info[i].malformed;
        kinds[k]++;
        if (k != FLOE_GEN_OK)
            malformed++;
        /* What the generator reports is what a reader sees. */
        bool expect_parse = k != FLOE_GEN_BAD_JSON, expect_conform = k == FLOE_GEN_OK;
        if (parses != expect_parse || conforms != expect_conform) {
            if (mismatches++ < 5)
                harness_fail(__FILE__, __LINE__, "line %d kind %d: %.200s", i + 1, (int)k,
                             lines[i]);
        }
        /* Valid lines are exactly those of the clean run. */
        if (k == FLOE_GEN_OK)
            CHECK(strcmp(lines[i], clean_lines[i]) == 0);
        else
            CHECK(strcmp(lines[i], clean_lines[i]) != 0);
        json_decref(j);
    }
    CHECK_EQ_INT(mismatches, 0);
    /* 10% +- 1.5% (sigma is 0.2%), and every kind occurs. */
    CHECK(malformed > N * 85 / 1000 && malformed < N * 115 / 1000);
    CHECK(kinds[FLOE_GEN_BAD_JSON] > 300 && kinds[FLOE_GEN_WRONG_TYPE] > 300 &&
          kinds[FLOE_GEN_MISSING_FIELD] > 300);
    floe_gen_free(g);
    floe_free(text);
    floe_free(clean);
    free(lines);
    free(clean_lines);
    free(info);
}

TEST(test_partition_names) {
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.partitions = 40;
    floe_error err;
    floe_gen *g;
    REQUIRE_OK(floe_gen_new(&o, &g, &err), err);
    CHECK_EQ_STR(floe_gen_partition_name(g, 0), "page_view");
    CHECK_EQ_STR(floe_gen_partition_name(g, 16), "event_017");
    CHECK_EQ_STR(floe_gen_partition_name(g, 39), "event_040");
    CHECK(floe_gen_partition_name(g, 40) == NULL);
    CHECK(floe_gen_partition_name(g, -1) == NULL);
    /* All 40 names differ. */
    for (int a = 0; a < 40; a++)
        for (int b = a + 1; b < 40; b++)
            CHECK(strcmp(floe_gen_partition_name(g, a), floe_gen_partition_name(g, b)) != 0);
    floe_gen_free(g);

    o.partitions = 1;
    size_t len;
    floe_gen_event_info info[200];
    char *text = gen_events(&o, 200, &len, info);
    REQUIRE(text);
    for (int i = 0; i < 200; i++)
        CHECK_EQ_INT(info[i].partition, 0);
    floe_free(text);
}

TEST(test_bad_options) {
    floe_gen_opts o;
    floe_error err;
    floe_gen *g = (floe_gen *)(uintptr_t)1;
    floe_gen_opts_default(&o);
    o.rate = 0;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    floe_gen_opts_default(&o);
    o.rate = 0.0 / 0.0;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    floe_gen_opts_default(&o);
    o.partitions = 0;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    o.partitions = FLOE_GEN_MAX_PARTITIONS + 1;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    floe_gen_opts_default(&o);
    o.malformed_rate = 1.5;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    floe_gen_opts_default(&o);
    o.jitter_us = -1;
    CHECK_EQ_INT(floe_gen_new(&o, &g, &err), FLOE_EINVALID);
    /* Out-param untouched on failure. */
    CHECK(g == (floe_gen *)(uintptr_t)1);
}

TEST(test_alloc_failure) {
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    floe_error err;
    for (uint64_t n = 1; n <= 3; n++) {
        floe_gen *g = NULL;
        floe_alloc_fail_after(n);
        int rc = floe_gen_new(&o, &g, &err);
        floe_alloc_fail_after(0);
        CHECK_EQ_INT(rc, FLOE_ENOMEM);
        CHECK(g == NULL);
    }
    /* A buffer that cannot grow is an error, not a crash. */
    floe_gen *g;
    REQUIRE_OK(floe_gen_new(&o, &g, &err), err);
    floe_buf b;
    floe_buf_init(&b, 100);
    CHECK_EQ_INT(floe_gen_next(g, &b, NULL, &err), FLOE_ELIMIT);
    floe_buf_free(&b);
    floe_gen_free(g);
}

TEST(test_time_parse_format) {
    floe_error err;
    int64_t us;
    char buf[32];
    REQUIRE_OK(floe_gen_parse_time("2026-10-06T00:00:00Z", &us, &err), err);
    CHECK_EQ_INT(us, 1791244800ll * 1000000);
    REQUIRE_OK(floe_gen_parse_time("2026-10-06", &us, &err), err);
    CHECK_EQ_INT(us, 1791244800ll * 1000000);
    REQUIRE_OK(floe_gen_parse_time("2026-10-06T02:30:00.5+02:30", &us, &err), err);
    CHECK_EQ_INT(us, 1791244800ll * 1000000 + 500000);
    REQUIRE_OK(floe_gen_parse_time("1969-12-31T23:59:59.999999Z", &us, &err), err);
    CHECK_EQ_INT(us, -1);
    CHECK_EQ_INT(floe_gen_format_time(-1, buf), 27);
    CHECK_EQ_STR(buf, "1969-12-31T23:59:59.999999Z");
    floe_gen_format_time(951782400ll * 1000000 + 123456, buf); /* leap day 2000 */
    CHECK_EQ_STR(buf, "2000-02-29T00:00:00.123456Z");
    static const char *const bad[] = {"", "2026-13-01", "2026-02-30", "2026-10-06T25:00",
                                      "2026-10-06T12:00:00.", "2026-10-06X", "now",
                                      "2026-10-06T12:00+2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(floe_gen_parse_time(bad[i], &us, &err), FLOE_EINVALID);
    /* Round trip across many values, including before the epoch. */
    for (int64_t v = -5000000000000ll; v < 5000000000000ll; v += 123456789011ll) {
        floe_gen_format_time(v, buf);
        int64_t back;
        REQUIRE_OK(floe_gen_parse_time(buf, &back, &err), err);
        CHECK_EQ_INT(back, v);
    }
}

TEST(test_schema_file_matches) {
    size_t len;
    char *file = harness_read_file(harness_source_path("tests/data/events.schema.json"), &len);
    REQUIRE(file != NULL);
    CHECK_EQ_STR(file, floe_gen_schema_json());
    json_error_t jerr;
    json_t *j = json_loads(floe_gen_schema_json(), 0, &jerr);
    REQUIRE(j != NULL);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "fields")), 13);
    json_decref(j);
    free(file);
}

TEST(test_cli) {
    const char *floe = harness_floe_bin();
    const char *dir = harness_tmpdir();
    char cmd[8192];
    char *out = NULL;
    /* stdout output equals the library's bytes for the same options */
    snprintf(cmd, sizeof cmd, "%s gen --seed 5 --count 300 --partitions 6", floe);
    REQUIRE(harness_run_cmd(cmd, &out) == 0 && out);
    floe_gen_opts o;
    floe_gen_opts_default(&o);
    o.seed = 5;
    o.partitions = 6;
    size_t len;
    char *lib = gen_events(&o, 300, &len, NULL);
    REQUIRE(lib);
    CHECK(strlen(out) == len && memcmp(out, lib, len) == 0);
    free(out);
    out = NULL;

    /* --bytes stops at the first line that reaches the size */
    snprintf(cmd, sizeof cmd, "%s gen --bytes 100000 -o %s/b.ndjson --json", floe, dir);
    REQUIRE(harness_run_cmd(cmd, &out) == 0 && out);
    json_error_t jerr;
    json_t *sum = json_loads(out, 0, &jerr);
    REQUIRE(sum != NULL);
    int64_t bytes = json_integer_value(json_object_get(sum, "bytes"));
    CHECK(bytes >= 100000 && bytes < 100000 + FLOE_GEN_MAX_EVENT_BYTES);
    snprintf(cmd, sizeof cmd, "%s/b.ndjson", dir);
    size_t flen;
    char *f = harness_read_file(cmd, &flen);
    REQUIRE(f);
    CHECK_EQ_INT((int64_t)flen, bytes);
    free(f);
    json_decref(sum);
    free(out);
    out = NULL;

    /* spread output: same events, contiguous per partition, N files each */
    snprintf(cmd, sizeof cmd,
             "%s gen --seed 5 --count 300 --partitions 6 --out-dir %s/d "
             "--files-per-partition 3 --json",
             floe, dir);
    REQUIRE(harness_run_cmd(cmd, &out) == 0 && out);
    CHECK(strstr(out, "\"files\":18") != NULL);
    free(out);
    out = NULL;
    snprintf(cmd, sizeof cmd, "cat %s/d/event_type=page_view/part-0000[0-2].ndjson | wc -l", dir);
    REQUIRE(harness_run_cmd(cmd, &out) == 0 && out);
    int page_views = 0;
    char *scan = lib;
    while ((scan = strstr(scan, "\"event_type\":\"page_view\"")) != NULL) {
        page_views++;
        scan++;
    }
    CHECK_EQ_INT(atoi(out), page_views);
    free(out);
    out = NULL;
    snprintf(cmd, sizeof cmd,
             "%s gen --seed 5 --count 300 --partitions 6 | sort > %s/d.sorted && "
             "cat %s/d/*/*.ndjson | sort | cmp -s - %s/d.sorted",
             floe, dir, dir, dir);
    CHECK(harness_run_cmd(cmd, NULL) == 0);

    /* usage errors exit 2 */
    snprintf(cmd, sizeof cmd, "%s gen --count 5 --bytes 10 >/dev/null 2>&1", floe);
    CHECK_EQ_INT(harness_run_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s gen --partitions 0 >/dev/null 2>&1", floe);
    CHECK_EQ_INT(harness_run_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s gen --files-per-partition 3 >/dev/null 2>&1", floe);
    CHECK_EQ_INT(harness_run_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s gen --help >/dev/null", floe);
    CHECK_EQ_INT(harness_run_cmd(cmd, NULL), 0);
    floe_free(lib);
}

int main(void) {
    RUN(test_deterministic);
    RUN(test_stable_stream);
    RUN(test_every_event_valid);
    RUN(test_timestamps_within_jitter);
    RUN(test_malformed_rate);
    RUN(test_partition_names);
    RUN(test_bad_options);
    RUN(test_alloc_failure);
    RUN(test_time_parse_format);
    RUN(test_schema_file_matches);
    RUN(test_cli);
    return harness_finish();
}
