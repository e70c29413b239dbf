/* test_kafka_close.c - a [source kafka] consumer stopping while librdkafka says no
 * rebalance protocol is agreed.
 *
 * rd_kafka_rebalance_protocol() answers NULL when the group handler cannot tell (e.g. in
 * the revocation rd_kafka_consumer_close makes while the group is being torn down, or in
 * the middle of a rebalance). Which moment that is depends on the group's timing, so this
 * program is linked with -Wl,--wrap=rd_kafka_rebalance_protocol: once the test says so,
 * the consumer gets NULL, deterministically, at its stop. The server must treat that as
 * the eager protocol (the whole assignment goes), commit what it holds, and leave the
 * group so that the next consumer resumes from the table's offsets: every event in the
 * table once.
 *
 * The Kafka cluster is librdkafka's mock (rdkafka_mock.h), in this process.
 */
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define FLOE_LAZY_TABLES /* the library's own names: the table's member below */
#include "common/lazy_kafka.h"
#include "floe/server.h"
#include "harness.h"
#include "harness_serve.h"

const char *__real_rd_kafka_rebalance_protocol(rd_kafka_t *rk);
const char *__wrap_rd_kafka_rebalance_protocol(rd_kafka_t *rk);

static atomic_bool no_protocol;
static atomic_int null_answers;

const char *__wrap_rd_kafka_rebalance_protocol(rd_kafka_t *rk) {
    if (atomic_load(&no_protocol)) {
        atomic_fetch_add(&null_answers, 1);
        return NULL;
    }
    return __real_rd_kafka_rebalance_protocol(rk);
}

/* Events {"id":i,"name":"n<i%3>"} for i in [from, to] into topic, one per message. */
static void produce(const char *bootstrap, const char *topic, int from, int to) {
    char es[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    REQUIRE(rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es) ==
            RD_KAFKA_CONF_OK);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    REQUIRE(rk != NULL);
    for (int i = from; i <= to; i++) {
        char v[64];
        int n = snprintf(v, sizeof v, "{\"id\":%d,\"name\":\"n%d\"}", i, i % 3);
        CHECK(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE(v, (size_t)n),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    CHECK(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_destroy(rk);
}

TEST(test_close_without_an_agreed_protocol) {
    const char *dir = harness_tmpdir();
    char es[512];
    rd_kafka_t *host = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), es, sizeof es);
    REQUIRE(host != NULL);
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(host, 1);
    REQUIRE(mc != NULL);
    const char *bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
    REQUIRE(rd_kafka_mock_topic_create(mc, "ev", 4, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    produce(bootstrap, "ev", 1, 200);

    char wh[4300], src[5000];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    /* no commit before the stop: the stop commits the whole batch, then leaves (the mock
     * keeps a group its last member left rebalancing for the session timeout, less 1 s,
     * before a new member is taken: a short one) */
    snprintf(src, sizeof src,
             "[source kafka k]\nbootstrap.servers = %s\ntopics = ev\ngroup.id = g\n"
             "table = shop.t\ncommit_interval = 1h\nkafka.session.timeout.ms = 6000\n"
             "kafka.heartbeat.interval.ms = 1000\n", bootstrap);
    floe_server_config cfg;
    hs_server_config(&cfg, dir, wh, "maintain = false\n", src);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    uint16_t port = floe_server_port(s);
    CHECK(hs_wait_metric(port, "floe_kafka_consumed_total", 200));
    CHECK_EQ_INT(hs_metric(port, "floe_kafka_committed_total"), 0);

    /* the stop: librdkafka tells no protocol */
    atomic_store(&no_protocol, true);
    CHECK_OK(floe_server_close(s, &err), err);
    atomic_store(&no_protocol, false);
    CHECK(atomic_load(&null_answers) > 0); /* the revocation asked, and got NULL */

    char db[4400];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    int counts[320];
    hs_check_once(counts, hs_count_ids_sqlite(db, wh, "shop", "t", counts, 320), 200);

    /* the group was left cleanly: a new consumer gets the partitions and resumes from the
     * table's offsets, taking only what came since */
    produce(bootstrap, "ev", 201, 300);
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    port = floe_server_port(s);
    CHECK(hs_wait_metric(port, "floe_kafka_consumed_total", 100));
    CHECK_OK(floe_server_flush(s, false, &err), err);
    CHECK_EQ_INT(hs_metric(port, "floe_kafka_consumed_total"), 100);
    CHECK_EQ_INT(hs_metric(port, "floe_kafka_committed_total"), 100);
    CHECK_OK(floe_server_close(s, &err), err);
    hs_check_once(counts, hs_count_ids_sqlite(db, wh, "shop", "t", counts, 320), 300);

    floe_server_config_reset(&cfg);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(host);
}

int main(void) {
    /* floe calls librdkafka through the table of common/lazy_kafka.h, which --wrap does
     * not reach: the wrapper goes into the table too */
    floe_error err;
    const floe_lazy_kafka_fns *kafka = floe_lazy_kafka(&err);
    if (!kafka) {
        fprintf(stderr, "test_kafka_close: %s\n", err.msg);
        return 1;
    }
    ((floe_lazy_kafka_fns *)kafka)->rd_kafka_rebalance_protocol =
        __wrap_rd_kafka_rebalance_protocol;
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_close_without_an_agreed_protocol);
    curl_global_cleanup();
    return harness_finish();
}
