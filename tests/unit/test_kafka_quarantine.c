/* test_kafka_quarantine.c - a [source kafka] batch's quarantine is published only with its
 * commit: every malformed message ends in the quarantine exactly once, like every valid
 * one in the table, also when a commit is fenced, when the node dies between the commit
 * and the publication of the quarantine, and when a commit's outcome is unknown.
 *
 * The program is linked with -Wl,--wrap=floe_append_commit and -Wl,--wrap=rename, so each
 * test can make the Kafka source's commit meet what it needs, deterministically: another
 * group member committing the partition just before it (fenced), the rename publishing
 * the quarantine failing after it (what a crash there leaves on disk: the server is then
 * closed and opened again), or an unknown outcome with or without the swap. The Kafka
 * cluster is librdkafka's mock (rdkafka_mock.h), in this process.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "floe/append.h"
#include "floe/server.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_serve.h"

enum { MODE_OFF, MODE_FENCE, MODE_NO_PUBLISH, MODE_UNKNOWN_AFTER, MODE_UNKNOWN_BEFORE,
       MODE_GROUP };
static atomic_int mode;
static atomic_bool fail_publish;
static atomic_int hits;
static char catalog_db[4400], warehouse[4300];

int __real_floe_append_commit(floe_append *a, floe_append_result *res, floe_error *err);
int __wrap_floe_append_commit(floe_append *a, floe_append_result *res, floe_error *err);
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);

/* Table shop.t, through a catalog of its own. */
static int load_t(floe_catalog **cat, floe_table **t, floe_error *err) {
    int rc = floe_catalog_open_sqlite(NULL, catalog_db, "default", warehouse, cat, err);
    return rc == 0 ? floe_table_load(*cat, "shop", "t", t, err) : rc;
}

/* Another member of group g commits offsets 0..99 of ev/0 (its data elsewhere); with
 * group_key, instead, a commit of another group registers it (key = "1"). */
static void other_commits(const char *group_key) {
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_append *a = NULL;
    floe_append_result res;
    memset(&res, 0, sizeof res);
    floe_error err;
    int rc = load_t(&cat, &t, &err);
    if (rc == 0)
        rc = floe_append_new(t, &a, &err);
    if (rc == 0)
        rc = group_key ? floe_append_set_property(a, group_key, "1", &err)
                       : floe_append_set_property(a, "floe.kafka.g.ev.0", "100", &err);
    if (rc == 0)
        rc = __real_floe_append_commit(a, &res, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "the other member's commit: %s", err.msg);
    floe_append_result_reset(&res);
    floe_append_free(a);
    floe_table_close(t);
    floe_catalog_close(cat);
}

int __wrap_floe_append_commit(floe_append *a, floe_append_result *res, floe_error *err) {
    int m = atomic_exchange(&mode, MODE_OFF);
    if (m != MODE_OFF)
        atomic_fetch_add(&hits, 1);
    if (m == MODE_FENCE)
        other_commits(NULL);
    if (m == MODE_GROUP) /* group g.x, whose keys can be g's, registers meanwhile */
        other_commits("floe.kafka-group.g.x");
    if (m == MODE_UNKNOWN_BEFORE)
        return floe_error_set(err, FLOE_EUNKNOWN_STATE, "test: unknown outcome (no swap)");
    int rc = __real_floe_append_commit(a, res, err);
    if (rc == 0 && m == MODE_NO_PUBLISH)
        atomic_store(&fail_publish, true);
    if (rc == 0 && m == MODE_UNKNOWN_AFTER) {
        floe_append_result_reset(res);
        return floe_error_set(err, FLOE_EUNKNOWN_STATE, "test: unknown outcome (swapped)");
    }
    return rc;
}

/* With fail_publish, the first rename out of a pending quarantine folder fails (counted in
 * hits); with no_publish, every one (what a crash between the commit and the rename
 * leaves: the consumer's later attempts and its stop publish nothing either). */
static atomic_bool no_publish;

int __wrap_rename(const char *from, const char *to) {
    if (strstr(from, "/.kafka-") && atomic_exchange(&fail_publish, false)) {
        atomic_fetch_add(&hits, 1);
        errno = EIO;
        return -1;
    }
    if (strstr(from, "/.kafka-") && !strstr(to, "/.kafka-") && atomic_load(&no_publish)) {
        errno = EIO;
        return -1;
    }
    return __real_rename(from, to);
}

/* Message at offset o (0-based) is event id o + 1; every 10th from 3 is not JSON, every
 * 10th from 7 has a string id, every 10th from 9 is empty: malformed. */
static bool malformed(int o) {
    return o % 10 == 3 || o % 10 == 7 || o % 10 == 9;
}

static void produce(const char *bootstrap, int from, int to) {
    char es[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    REQUIRE(rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es) ==
            RD_KAFKA_CONF_OK);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    REQUIRE(rk != NULL);
    for (int o = from; o < to; o++) {
        char v[64];
        int n = o % 10 == 3   ? snprintf(v, sizeof v, "{\"id\":%d,\"name\":", o + 1)
                : o % 10 == 7 ? snprintf(v, sizeof v, "{\"id\":\"x%d\",\"name\":\"n\"}", o + 1)
                : o % 10 == 9 ? 0
                              : snprintf(v, sizeof v, "{\"id\":%d,\"name\":\"n%d\"}", o + 1,
                                         o % 3);
        CHECK(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("ev"), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE(v, (size_t)n),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    CHECK(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_destroy(rk);
}

/* Files in dir whose names start with prefix. */
static int count_files(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += !strncmp(de->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return n;
}

/* The name of a file in dir whose name starts with prefix, into out ("" when none). */
static void file_named(const char *dir, const char *prefix, char *out, size_t outn) {
    DIR *d = opendir(dir);
    struct dirent *de;
    out[0] = 0;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, prefix, strlen(prefix)))
            snprintf(out, outn, "%s", de->d_name);
    if (d)
        closedir(d);
}

/* Table shop.t's property key, or NULL (the caller frees it). */
static char *table_property(const char *key) {
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_error err;
    char *v = NULL;
    if (load_t(&cat, &t, &err) != 0)
        harness_fail(__FILE__, __LINE__, "loading shop.t: %s", err.msg);
    const char *x = floe_table_metadata_property(floe_table_metadata_get(t), key);
    if (x)
        v = strdup(x);
    floe_table_close(t);
    floe_catalog_close(cat);
    return v;
}

/* name is kafka-g-ev-0-<first>-<batch>.ndjson, batch a UUID (8-4-4-4-12 hex digits). */
static bool published_name_ok(const char *name) {
    const char *pre = "kafka-g-ev-0-", *n = name + strlen(pre);
    size_t len = strlen(name), digits = 0;
    if (strncmp(name, pre, strlen(pre)) || len < strlen(pre) + 45 ||
        strcmp(name + len - 7, ".ndjson"))
        return false;
    while (n[digits] >= '0' && n[digits] <= '9')
        digits++;
    if (!digits || n[digits] != '-' || n + digits + 1 + 36 != name + len - 7)
        return false;
    const char *u = n + digits + 1;
    for (int i = 0; i < 36; i++)
        if (i == 8 || i == 13 || i == 18 || i == 23 ? u[i] != '-'
                                                    : !strchr("0123456789abcdef", u[i]))
            return false;
    return true;
}

/* The table holds the valid events of offsets [from, to) once and nothing else; the
 * published quarantine (_quarantine/shop.t/kafka-g-*.ndjson) the malformed ones of
 * [from, to) once, each with its partition and offset, and nothing else. */
static void check(const char *dir, int from, int to) {
    int counts[400] = {0};
    int64_t rows = hs_count_ids_sqlite(catalog_db, warehouse, "shop", "t", counts, 400);
    int want_rows = 0;
    for (int o = 0; o < 400; o++) {
        int want = o >= from && o < to && !malformed(o);
        want_rows += want;
        if (o + 1 < 400 && counts[o + 1] != want)
            harness_fail(__FILE__, __LINE__, "event %d (offset %d) is in the table %d times, "
                         "expected %d", o + 1, o, counts[o + 1], want);
    }
    CHECK_EQ_INT(rows, want_rows);
    int quarantined[400] = {0};
    char qdir[4500];
    snprintf(qdir, sizeof qdir, "%s/wh/_quarantine/shop.t", dir);
    DIR *d = opendir(qdir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "kafka-g-", 8))
            continue;
        if (!published_name_ok(de->d_name))
            harness_fail(__FILE__, __LINE__, "quarantine file %s: not kafka-g-ev-0-<first>-"
                         "<batch>.ndjson", de->d_name);
        char path[4800];
        snprintf(path, sizeof path, "%s/%s", qdir, de->d_name);
        FILE *f = fopen(path, "re");
        REQUIRE(f != NULL);
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            json_error_t je;
            json_t *j = json_loads(line, 0, &je);
            REQUIRE(j != NULL);
            CHECK_EQ_STR(json_string_value(json_object_get(j, "source")), "kafka:ev/0");
            json_int_t o = json_integer_value(json_object_get(j, "offset"));
            if (o >= 0 && o < 400)
                quarantined[o]++;
            json_decref(j);
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    for (int o = 0; o < 400; o++) {
        int want = o >= from && o < to && malformed(o);
        if (quarantined[o] != want)
            harness_fail(__FILE__, __LINE__, "message at offset %d is in the quarantine %d "
                         "times, expected %d", o, quarantined[o], want);
    }
}

/* One partition "ev" of a 1-broker mock cluster, offsets [0, 200) produced, a server of
 * source k (group g, table shop.t, committing only when flushed). */
typedef struct fixture {
    const char *dir;
    rd_kafka_t *host;
    rd_kafka_mock_cluster_t *mc;
    const char *bootstrap;
    floe_server_config cfg;
    floe_server *s;
    uint16_t port;
    char pending[4600];
} fixture;

static void open_server(fixture *fx) {
    floe_error err;
    REQUIRE_OK(floe_server_open(&fx->cfg, NULL, &fx->s, &err), err);
    fx->port = floe_server_port(fx->s);
}

static void close_server(fixture *fx) {
    floe_error err;
    CHECK_OK(floe_server_close(fx->s, &err), err);
    fx->s = NULL;
}

static void setup(fixture *fx) {
    memset(fx, 0, sizeof *fx);
    fx->dir = harness_tmpdir();
    char es[512];
    fx->host = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), es, sizeof es);
    REQUIRE(fx->host != NULL);
    fx->mc = rd_kafka_mock_cluster_new(fx->host, 1);
    REQUIRE(fx->mc != NULL);
    fx->bootstrap = rd_kafka_mock_cluster_bootstraps(fx->mc);
    REQUIRE(rd_kafka_mock_topic_create(fx->mc, "ev", 1, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    produce(fx->bootstrap, 0, 200);
    snprintf(warehouse, sizeof warehouse, "%s/wh", fx->dir);
    snprintf(catalog_db, sizeof catalog_db, "%s/wh/catalog.db", fx->dir);
    snprintf(fx->pending, sizeof fx->pending, "%s/wh/_quarantine/shop.t/.kafka-g", fx->dir);
    char src[5000];
    snprintf(src, sizeof src,
             "[source kafka k]\nbootstrap.servers = %s\ntopics = ev\ngroup.id = g\n"
             "table = shop.t\ncommit_interval = 1h\nkafka.session.timeout.ms = 6000\n"
             "kafka.heartbeat.interval.ms = 1000\n", fx->bootstrap);
    hs_server_config(&fx->cfg, fx->dir, warehouse, "maintain = false\n", src);
    atomic_store(&hits, 0);
    open_server(fx);
    CHECK(hs_wait_metric(fx->port, "floe_kafka_consumed_total", 200));
}

static void teardown(fixture *fx) {
    atomic_store(&mode, MODE_OFF);
    atomic_store(&fail_publish, false);
    if (fx->s)
        close_server(fx);
    floe_server_config_reset(&fx->cfg);
    rd_kafka_mock_cluster_destroy(fx->mc);
    rd_kafka_destroy(fx->host);
}

/* Another member commits offsets 0..99 between this member's quarantine write and its
 * commit: the commit is fenced, the member consumes again from 100; the fenced batch's
 * rejects must not be in the quarantine (the other member's batch has them). */
TEST(test_fenced_commit_publishes_nothing) {
    fixture fx;
    setup(&fx);
    floe_error err;
    atomic_store(&mode, MODE_FENCE);
    CHECK(floe_server_flush(fx.s, false, &err) < 0); /* fenced */
    CHECK_EQ_INT(atomic_load(&hits), 1);
    CHECK_EQ_INT(hs_metric(fx.port, "floe_kafka_fenced_total"), 1);
    CHECK(hs_wait_metric(fx.port, "floe_kafka_consumed_total", 300)); /* 100..199 again */
    CHECK_OK(floe_server_flush(fx.s, false, &err), err);
    close_server(&fx);
    check(fx.dir, 100, 200);
    CHECK_EQ_INT(count_files(fx.pending, "ev+"), 0);
    teardown(&fx);
}

/* The commit succeeds and the rename publishing its quarantine fails: on disk, what a
 * crash between the two leaves. The next assignment publishes it from the table. */
TEST(test_crash_between_commit_and_publish) {
    fixture fx;
    setup(&fx);
    floe_error err;
    atomic_store(&mode, MODE_NO_PUBLISH);
    atomic_store(&no_publish, true);
    CHECK_OK(floe_server_flush(fx.s, false, &err), err);
    CHECK_EQ_INT(atomic_load(&hits), 2); /* the commit, and the failed rename */
    close_server(&fx);
    atomic_store(&no_publish, false);
    CHECK_EQ_INT(count_files(fx.pending, "ev+0+0+-1+"), 1);
    char pending[300], published[400], qdir[4500];
    file_named(fx.pending, "ev+0+0+-1+", pending, sizeof pending);
    produce(fx.bootstrap, 200, 300);
    open_server(&fx); /* the assignment settles the pending file: the table names it */
    CHECK(hs_wait_metric(fx.port, "floe_kafka_consumed_total", 100));
    CHECK_OK(floe_server_flush(fx.s, false, &err), err);
    CHECK_EQ_INT(hs_metric(fx.port, "floe_kafka_consumed_total"), 100);
    close_server(&fx);
    check(fx.dir, 0, 300);
    CHECK_EQ_INT(count_files(fx.pending, "ev+"), 0);
    /* published under the name the commit would have given it: its batch's id */
    snprintf(published, sizeof published, "kafka-g-ev-0-0-%s", pending + strlen("ev+0+0+-1+"));
    snprintf(qdir, sizeof qdir, "%s/wh/_quarantine/shop.t", fx.dir);
    CHECK_EQ_INT(count_files(qdir, published), 1);
    teardown(&fx);
}

/* The commit swaps the metadata but reports an unknown outcome: the batch is dropped, the
 * table's offsets read again, and its pending quarantine published from them. */
TEST(test_unknown_outcome_committed) {
    fixture fx;
    setup(&fx);
    floe_error err;
    atomic_store(&mode, MODE_UNKNOWN_AFTER);
    CHECK(floe_server_flush(fx.s, false, &err) < 0);
    CHECK_EQ_INT(atomic_load(&hits), 1);
    CHECK_EQ_INT(count_files(fx.pending, "ev+"), 0);
    close_server(&fx);
    check(fx.dir, 0, 200);
    teardown(&fx);
}

/* The commit fails with an unknown outcome and no swap: the pending quarantine stays
 * (its commit could still have come) while the batch is consumed again and committed;
 * the next settlement, at the next assignment, deletes it (the table's offset is past
 * its start). */
TEST(test_unknown_outcome_not_committed) {
    fixture fx;
    setup(&fx);
    floe_error err;
    atomic_store(&mode, MODE_UNKNOWN_BEFORE);
    CHECK(floe_server_flush(fx.s, false, &err) < 0);
    CHECK_EQ_INT(atomic_load(&hits), 1);
    CHECK(hs_wait_metric(fx.port, "floe_kafka_consumed_total", 400)); /* 0..199 again */
    CHECK_OK(floe_server_flush(fx.s, false, &err), err);
    close_server(&fx);
    check(fx.dir, 0, 200);
    CHECK_EQ_INT(count_files(fx.pending, "ev+0+0+-1+"), 1); /* the first attempt's */
    open_server(&fx);
    CHECK(hs_wait_metric(fx.port, "floe_kafka_rebalances_total", 1));
    close_server(&fx);
    CHECK_EQ_INT(count_files(fx.pending, "ev+"), 0);
    check(fx.dir, 0, 200);
    teardown(&fx);
}

/* Group g.x, whose id is g's followed by '.', registers itself in the table between this
 * member's quarantine write and its commit (as another server's commit of g.x would): the
 * commit's check, on the metadata the attempt starts from, refuses it; nothing of g is
 * committed or published, and every retry is refused the same. */
TEST(test_group_registered_meanwhile) {
    fixture fx;
    setup(&fx);
    floe_error err;
    atomic_store(&mode, MODE_GROUP);
    CHECK(floe_server_flush(fx.s, false, &err) < 0); /* refused */
    CHECK_EQ_INT(atomic_load(&hits), 1);
    CHECK(strstr(err.msg, "consumer group 'g' refuses table shop.t, which consumer group "
                          "'g.x' writes too") != NULL);
    CHECK_EQ_INT(hs_metric(fx.port, "floe_kafka_group_refused_total"), 1);
    CHECK(floe_server_flush(fx.s, false, &err) < 0); /* kept, refused again */
    CHECK_EQ_INT(hs_metric(fx.port, "floe_kafka_group_refused_total"), 2);
    CHECK_EQ_INT(hs_metric(fx.port, "floe_kafka_commits_total"), 0);
    close_server(&fx);
    check(fx.dir, 0, 0);
    CHECK_EQ_INT(count_files(fx.pending, "ev+"), 0);
    char *v = table_property("floe.kafka.g.ev.0");
    CHECK(v == NULL);
    free(v);
    CHECK((v = table_property("floe.kafka-group.g")) == NULL);
    free(v);
    CHECK((v = table_property("floe.kafka-group.g.x")) != NULL);
    free(v);
    teardown(&fx);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_fenced_commit_publishes_nothing);
    RUN(test_crash_between_commit_and_publish);
    RUN(test_unknown_outcome_committed);
    RUN(test_unknown_outcome_not_committed);
    RUN(test_group_registered_meanwhile);
    curl_global_cleanup();
    return harness_finish();
}
