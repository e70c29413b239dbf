/* test_server_partitions.c - no accepted event of `floe serve` fails to land for what it
 * holds (issue 17 item 5), on a local warehouse (serve_partition_paths.sh does S3):
 *
 *   - identity-partition values of 0, 1, 255, 256, 4096 and 100,000 bytes, "/", "..", a
 *     NUL, non-UTF-8 bytes: every event accepted lands in the table once, with its exact
 *     value (the landing and data folders are bounded: floe_partition_spec_path), and an
 *     event refused is answered as rejected with a reason;
 *   - a landing file that cannot be written for what it is (the file system refuses the
 *     name: ENAMETOOLONG, injected) is not retried forever: its records go to the
 *     quarantine with the reason, /metrics counts them, /healthz names them, the flush
 *     succeeds, and a restart does not bring them back.
 * (A table whose object keys could pass S3's 1024 bytes under its warehouse prefix is
 * refused before any event is taken: serve_partition_paths.sh. Local paths always fit:
 * the catalog keeps locations under 1000 bytes, partition folders are bounded.) */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/scan.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "io/io_faults.h"
#include "harness_serve.h"

static void server_config(floe_server_config *c, const char *dir, const char *wh) {
    hs_server_config(c, dir, wh, "maintain = false\nmax_record = 2MB\n", "partition = name\n");
}

/* The names the table holds, by id (ids < cap): names[id] malloc'ed, lens[id]. */
typedef struct name_rows {
    char **names;
    size_t *lens;
    int *counts;
    int cap;
    int64_t rows;
} name_rows;

static int name_row(void *ctx, const void *p, size_t n) {
    name_rows *nr = ctx;
    const char *s = p, *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
        json_error_t je;
        json_t *o = len ? json_loadb(s, len, JSON_ALLOW_NUL, &je) : NULL;
        if (o) {
            json_int_t id = json_integer_value(json_object_get(o, "id"));
            json_t *name = json_object_get(o, "name");
            nr->rows++;
            if (id >= 0 && id < nr->cap) {
                nr->counts[id]++;
                free(nr->names[id]);
                nr->lens[id] = json_string_length(name);
                nr->names[id] = malloc(nr->lens[id] + 1);
                if (nr->names[id])
                    memcpy(nr->names[id], json_string_value(name), nr->lens[id] + 1);
            }
            json_decref(o);
        }
        s = nl ? nl + 1 : end;
    }
    return 0;
}

static void read_names(const char *wh, name_rows *nr) {
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    floe_error err;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err), err);
    REQUIRE_OK(floe_table_load(cat, "shop", "t", &t, &err), err);
    floe_scan_options so;
    memset(&so, 0, sizeof so);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
    REQUIRE_OK(floe_scan_plan_files(t, &so, &plan, &err), err);
    REQUIRE_OK(floe_scan_read(t, plan, &ro, name_row, nr, NULL, &err), err);
    floe_scan_plan_free(plan);
    floe_table_close(t);
    floe_catalog_close(cat);
}

/* GET path; the status, and the body into *body (floe_malloc'ed) when not NULL. */
static long http_get(uint16_t port, const char *path, char **body) {
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    CURL *c = curl_easy_init();
    floe_buf b;
    floe_buf_init(&b, 0);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, hs_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    floe_buf_append_byte(&b, 0);
    size_t len;
    char *text = floe_buf_detach(&b, &len);
    if (body)
        *body = text;
    else
        floe_free(text);
    return code;
}

/* The value of metric name in /metrics (-1 when absent). */
static long long metric(uint16_t port, const char *name) {
    char *m = NULL;
    CHECK_EQ_INT(http_get(port, "/metrics", &m), 200);
    long long v = -1;
    size_t nl = strlen(name);
    for (const char *p = m; p && *p;) {
        if (!strncmp(p, name, nl) && p[nl] == ' ')
            v = strtoll(p + nl + 1, NULL, 10);
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    floe_free(m);
    return v;
}

typedef struct value_case {
    const char *label;
    char *json;    /* the "name" member as JSON text */
    char *raw;     /* its value */
    size_t raw_len;
} value_case;

static void set_case(value_case *c, const char *label, const char *raw, size_t n) {
    c->label = label;
    c->raw = malloc(n + 1);
    REQUIRE(c->raw);
    memcpy(c->raw, raw, n);
    c->raw[n] = 0;
    c->raw_len = n;
    json_t *s = json_stringn_nocheck(raw, n);
    REQUIRE(s);
    c->json = json_dumps(s, JSON_ENCODE_ANY);
    json_decref(s);
    REQUIRE(c->json);
}

TEST(test_long_and_hostile_partition_values_land) {
    const char *dir = harness_tmpdir();
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_server_config cfg;
    server_config(&cfg, dir, wh);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);

    static const size_t sizes[] = {0, 1, 255, 256, 4096, 100000};
    value_case cases[16];
    size_t nc = 0;
    char *big = malloc(100000);
    REQUIRE(big);
    for (size_t i = 0; i < 100000; i++)
        big[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        set_case(&cases[nc++], "sized", big, sizes[i]);
    set_case(&cases[nc++], "slash", "/", 1);
    set_case(&cases[nc++], "dotdot", "..", 2);
    set_case(&cases[nc++], "nul", "a\0b", 3);
    set_case(&cases[nc++], "long slashes", big, 0);
    memset(big, '/', 3000);
    free(cases[nc - 1].raw);
    free(cases[nc - 1].json);
    set_case(&cases[nc - 1], "long slashes", big, 3000);
    free(big);

    /* two events per value, in one request each */
    for (size_t i = 0; i < nc; i++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        floe_buf_printf(&b, "{\"id\":%zu,\"name\":%s}\n{\"id\":%zu,\"name\":%s}\n", 2 * i + 1,
                        cases[i].json, 2 * i + 2, cases[i].json);
        floe_buf_append_byte(&b, 0);
        char *ans = NULL;
        long code = hs_post(port, "shop.t", (const char *)b.data, NULL, &ans, NULL);
        if (code != 200 || !strstr(ans, "\"accepted\":2"))
            harness_fail(__FILE__, __LINE__, "%s (%zu bytes): HTTP %ld %.200s", cases[i].label,
                         cases[i].raw_len, code, ans ? ans : "");
        floe_free(ans);
        floe_buf_free(&b);
    }
    /* non-UTF-8 bytes in a string: refused with a reason, or accepted and landed */
    static const char bad_utf8[] = "{\"id\":100,\"name\":\"\xff\xfe\"}\n";
    char *ans = NULL;
    CHECK_EQ_INT(hs_post(port, "shop.t", bad_utf8, NULL, &ans, NULL), 200);
    bool bad_accepted = ans && strstr(ans, "\"accepted\":1");
    CHECK(bad_accepted || (ans && strstr(ans, "\"rejected\":1") && strstr(ans, "reason")));
    floe_free(ans);

    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_EQ_INT((int)metric(port, "floe_seal_quarantined_records_total"), 0);
    CHECK_EQ_INT((int)metric(port, "floe_pending_landing_files"), 0);
    CHECK_OK(floe_server_close(s, &err), err);

    name_rows nr = {0};
    nr.cap = 128;
    nr.names = calloc(128, sizeof *nr.names);
    nr.lens = calloc(128, sizeof *nr.lens);
    nr.counts = calloc(128, sizeof *nr.counts);
    REQUIRE(nr.names && nr.lens && nr.counts);
    read_names(wh, &nr);
    CHECK_EQ_INT((int)nr.rows, (int)(2 * nc) + (bad_accepted ? 1 : 0));
    for (size_t i = 0; i < nc; i++)
        for (int k = 1; k <= 2; k++) {
            int id = (int)(2 * i) + k;
            if (nr.counts[id] != 1 || !nr.names[id] || nr.lens[id] != cases[i].raw_len ||
                memcmp(nr.names[id], cases[i].raw, cases[i].raw_len))
                harness_fail(__FILE__, __LINE__, "%s (%zu bytes): event %d is in the table "
                             "%d times, name of %zu bytes", cases[i].label, cases[i].raw_len,
                             id, nr.counts[id], nr.lens[id]);
        }
    /* no folder name over 255 bytes was ever needed: every data path is bounded */
    for (int i = 0; i < 128; i++)
        free(nr.names[i]);
    free(nr.names);
    free(nr.lens);
    free(nr.counts);
    for (size_t i = 0; i < nc; i++) {
        free(cases[i].raw);
        free(cases[i].json);
    }
    floe_server_config_reset(&cfg);
}

TEST(test_unsealable_records_go_to_quarantine) {
    const char *dir = harness_tmpdir();
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_server_config cfg;
    server_config(&cfg, dir, wh);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    const char *names[1] = {"a"};
    CHECK_EQ_INT(hs_post_ids(port, "shop.t", 1, 10, names, 1), 200);
    /* the next file created (the landing file) is refused: its name is too long */
    floe_io_fault_inject_once(NULL, FLOE_IO_FAULT_OPEN, 1, ENAMETOOLONG);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    floe_io_fault_clear(NULL);
    CHECK_EQ_INT((int)metric(port, "floe_seal_quarantined_records_total"), 10);
    CHECK_EQ_INT((int)metric(port, "floe_pending_landing_files"), 0);
    char *health = NULL;
    CHECK_EQ_INT(http_get(port, "/healthz", &health), 200);
    CHECK(health && strstr(health, "10 accepted records") && strstr(health, "quarantine"));
    floe_free(health);
    /* later events of the partition land as usual */
    CHECK_EQ_INT(hs_post_ids(port, "shop.t", 11, 20, names, 1), 200);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);

    /* the quarantine holds the ten, each with the reason */
    char qdir[4400];
    snprintf(qdir, sizeof qdir, "%s/_quarantine/shop.t", wh);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cat '%s'/*.ndjson | grep -c 'cannot be written.*File name too "
             "long'", qdir);
    FILE *f = popen(cmd, "r");
    REQUIRE(f);
    int lines = 0;
    CHECK(fscanf(f, "%d", &lines) == 1);
    pclose(f);
    CHECK_EQ_INT(lines, 10);

    /* a restart replays nothing of them into a landing file */
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);
    int counts[32];
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    int64_t rows = hs_count_ids_sqlite(db, wh, "shop", "t", counts, 32);
    CHECK_EQ_INT((int)rows, 10);
    for (int id = 1; id <= 20; id++)
        CHECK_EQ_INT(counts[id], id > 10 ? 1 : 0);
    floe_sql *sql = NULL;
    REQUIRE_OK(floe_sql_open(db, &sql, &err), err);
    hs_states st = hs_landing_states(sql, "shop.t");
    floe_sql_close(sql);
    CHECK_EQ_INT(st.committed, 1);
    CHECK_EQ_INT(st.other, 1); /* quarantine */
    CHECK_EQ_INT(st.pending + st.compacting, 0);
    floe_server_config_reset(&cfg);
}

/* A round of many buffers is sealed together (one sync, one index transaction): a sync
 * that fails leaves every file of it for the next round, a file that cannot be written
 * leaves only itself, and in the end every event is in the table once - also after a
 * restart, whose replay must skip every frame the batch registered. */
TEST(test_batch_seal_failures_are_retried_once) {
    const char *dir = harness_tmpdir();
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_server_config cfg;
    server_config(&cfg, dir, wh);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    enum { NP = 40, NIDS = 200 };
    char bufs[NP][16];
    const char *names[NP];
    for (int i = 0; i < NP; i++) {
        snprintf(bufs[i], sizeof bufs[i], "p%d", i);
        names[i] = bufs[i];
    }
    CHECK_EQ_INT(hs_post_ids(port, "shop.t", 1, NIDS / 2, names, NP), 200);
    /* the round's sync fails: nothing is registered, every buffer waits */
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_FSYNC, 1, EIO);
    CHECK(floe_server_flush(s, false, &err) < 0);
    floe_io_fault_clear(NULL);
    CHECK_EQ_INT((int)metric(port, "floe_landing_files_sealed_total"), 0);
    CHECK((int)metric(port, "floe_seal_failures_total") >= NP);
    /* one file of the next round cannot be published: the others are */
    floe_io_fault_inject_once(NULL, FLOE_IO_FAULT_RENAME, 3, EIO);
    CHECK(floe_server_flush(s, false, &err) < 0);
    floe_io_fault_clear(NULL);
    CHECK_EQ_INT((int)metric(port, "floe_landing_files_sealed_total"), NP - 1);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    CHECK_EQ_INT((int)metric(port, "floe_landing_files_sealed_total"), NP);
    CHECK_EQ_INT(hs_post_ids(port, "shop.t", NIDS / 2 + 1, NIDS, names, NP), 200);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);
    /* a restart seals nothing again */
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    port = floe_server_port(s);
    CHECK_OK(floe_server_flush(s, true, &err), err);
    CHECK_EQ_INT((int)metric(port, "floe_landing_files_sealed_total"), 0);
    CHECK_OK(floe_server_close(s, &err), err);
    int counts[NIDS + 1];
    char db[4400];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    int64_t rows = hs_count_ids_sqlite(db, wh, "shop", "t", counts, NIDS + 1);
    CHECK_EQ_INT((int)rows, NIDS);
    for (int id = 1; id <= NIDS; id++)
        CHECK_EQ_INT(counts[id], 1);
    floe_server_config_reset(&cfg);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_long_and_hostile_partition_values_land);
    RUN(test_unsealable_records_go_to_quarantine);
    RUN(test_batch_seal_failures_are_retried_once);
    curl_global_cleanup();
    return harness_finish();
}
