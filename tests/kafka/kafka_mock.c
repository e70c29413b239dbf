/*
 * kafka_mock.c - a Kafka cluster for the tests: librdkafka's mock cluster (rdkafka_mock.h,
 * the real protocol over loopback) with a producer, driven by commands on stdin.
 *
 *   floe_kafka_mock BOOTSTRAP_FILE [BROKERS]
 *
 * writes the bootstrap servers to BOOTSTRAP_FILE, then reads commands, one per line, and
 * prints "ok <command>" (or "error <why>") on stdout after each:
 *
 *   topic NAME PARTITIONS              create a topic (replication 3, or BROKERS if fewer)
 *   produce TOPIC FILE [CODEC [LINGER]]  each line of FILE (empty ones too) as one message,
 *                                      keyed "k<line number>", header seq=<line number>,
 *                                      spread over the partitions by the key; CODEC
 *                                      none|gzip|snappy|lz4|zstd (the batches' compression),
 *                                      LINGER the producer's linger.ms (default 5)
 *   leader TOPIC PARTITION BROKER      move a partition's leader
 *   errors APIKEY COUNT ERRCODE        the next COUNT requests of APIKEY fail with ERRCODE
 *   delay APIKEY MS                    the next request of APIKEY to each broker is
 *                                      answered MS milliseconds late
 *   down BROKER / up BROKER            take a broker off the network and back
 *   commit GROUP TOPIC PARTITIONS OFFSET   set the group's committed offsets in Kafka
 *   quit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static rd_kafka_t *producer(const char *bootstrap, const char *codec, const char *linger) {
    char es[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es) ||
        rd_kafka_conf_set(c, "compression.codec", codec, es, sizeof es) ||
        rd_kafka_conf_set(c, "linger.ms", linger, es, sizeof es) ||
        rd_kafka_conf_set(c, "enable.idempotence", "true", es, sizeof es)) {
        fprintf(stderr, "kafka_mock: %s\n", es);
        rd_kafka_conf_destroy(c);
        return NULL;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    if (!rk)
        fprintf(stderr, "kafka_mock: %s\n", es);
    return rk;
}

static int produce(const char *bootstrap, const char *topic, const char *path,
                   const char *codec, const char *linger) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    rd_kafka_t *rk = producer(bootstrap, codec, linger);
    if (!rk) {
        fclose(f);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long no = 0;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        no++;
        if (n > 0 && line[n - 1] == '\n')
            n--;
        char key[32], seq[32];
        snprintf(key, sizeof key, "k%ld", no);
        snprintf(seq, sizeof seq, "%ld", no);
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE(line, (size_t)n),
                RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_HEADER("seq", seq, -1),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(rk, 50);
                continue;
            }
            if (e) {
                fprintf(stderr, "kafka_mock: produce: %s\n", rd_kafka_err2str(e));
                rc = -1;
            }
            break;
        }
        if (rc < 0)
            break;
        rd_kafka_poll(rk, 0);
    }
    free(line);
    fclose(f);
    if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        rc = -1;
    rd_kafka_destroy(rk);
    return rc;
}

/* The group's committed offset of partitions 0..n-1 of topic, in Kafka: a consumer joins
 * the group (empty by now), waits for all n partitions and commits. Its session timeout is
 * the consumers' of the tests (6 s): when it leaves, the mock holds the group in Joining
 * for the group's session timeout less 1 s, the leaver's, and with librdkafka's default
 * (45 s) the consumers started next, whose sessions are 6 s, were dropped from the group
 * while they waited; their JoinGroup went unanswered until it timed out after
 * max.poll.interval.ms (300 s), and their first assignment came 5 minutes late. */
static int commit_group(const char *bootstrap, const char *group, const char *topic, int n,
                        long long offset) {
    char es[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es) ||
        rd_kafka_conf_set(c, "group.id", group, es, sizeof es) ||
        rd_kafka_conf_set(c, "enable.auto.commit", "false", es, sizeof es) ||
        rd_kafka_conf_set(c, "session.timeout.ms", "6000", es, sizeof es) ||
        rd_kafka_conf_set(c, "max.poll.interval.ms", "6000", es, sizeof es)) {
        rd_kafka_conf_destroy(c);
        return -1;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, es, sizeof es);
    if (!rk)
        return -1;
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_subscribe(rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    int rc = -1;
    for (int i = 0; i < 600 && rc < 0; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m)
            rd_kafka_message_destroy(m);
        rd_kafka_topic_partition_list_t *a = NULL;
        if (rd_kafka_assignment(rk, &a) == RD_KAFKA_RESP_ERR_NO_ERROR && a && a->cnt == n) {
            rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
            for (int p = 0; p < n; p++)
                rd_kafka_topic_partition_list_add(l, topic, p)->offset = offset;
            rd_kafka_resp_err_t e = rd_kafka_commit(rk, l, 0);
            if (e)
                fprintf(stderr, "kafka_mock: commit: %s\n", rd_kafka_err2str(e));
            rc = e ? -2 : 0;
            rd_kafka_topic_partition_list_destroy(l);
        }
        if (a)
            rd_kafka_topic_partition_list_destroy(a);
        if (rc == -2)
            break;
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: floe_kafka_mock BOOTSTRAP_FILE [BROKERS]\n");
        return 2;
    }
    int brokers = argc > 2 ? atoi(argv[2]) : 3;
    char es[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_t *host = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    if (!host) {
        fprintf(stderr, "kafka_mock: %s\n", es);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(host, brokers);
    if (!mc) {
        fprintf(stderr, "kafka_mock: cannot start the mock cluster\n");
        return 1;
    }
    const char *bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
    FILE *bf = fopen(argv[1], "w");
    if (!bf || fprintf(bf, "%s\n", bootstrap) < 0 || fclose(bf) != 0) {
        fprintf(stderr, "kafka_mock: %s: cannot write\n", argv[1]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        char a[1024] = "", b[1024] = "", d[64] = "", e5[64] = "", cmd[32] = "";
        int nf = sscanf(line, "%31s %1023s %1023s %63s %63s", cmd, a, b, d, e5);
        int rc = 0;
        if (nf < 1) {
            continue;
        } else if (!strcmp(cmd, "quit")) {
            break;
        } else if (!strcmp(cmd, "topic") && nf >= 3) {
            rc = rd_kafka_mock_topic_create(mc, a, atoi(b), brokers < 3 ? brokers : 3) ? -1 : 0;
        } else if (!strcmp(cmd, "produce") && nf >= 3) {
            rc = produce(bootstrap, a, b, nf >= 4 ? d : "none", nf >= 5 ? e5 : "5");
        } else if (!strcmp(cmd, "leader") && nf >= 4) {
            rc = rd_kafka_mock_partition_set_leader(mc, a, atoi(b), atoi(d)) ? -1 : 0;
        } else if (!strcmp(cmd, "errors") && nf >= 4) {
            int cnt = atoi(b);
            rd_kafka_resp_err_t *errs = calloc((size_t)cnt + 1, sizeof *errs);
            for (int i = 0; i < cnt; i++)
                errs[i] = (rd_kafka_resp_err_t)atoi(d);
            rd_kafka_mock_push_request_errors_array(mc, (int16_t)atoi(a), (size_t)cnt, errs);
            free(errs);
        } else if (!strcmp(cmd, "delay") && nf >= 3) {
            /* the next request of ApiKey a to each broker is answered b ms late */
            for (int id = 1; id <= brokers && rc == 0; id++)
                rc = rd_kafka_mock_broker_push_request_error_rtts(
                         mc, id, (int16_t)atoi(a), 1, RD_KAFKA_RESP_ERR_NO_ERROR, atoi(b))
                         ? -1
                         : 0;
        } else if (!strcmp(cmd, "commit") && nf >= 5) {
            rc = commit_group(bootstrap, a, b, atoi(d), atoll(e5));
        } else if (!strcmp(cmd, "down") && nf >= 2) {
            rc = rd_kafka_mock_broker_set_down(mc, atoi(a)) ? -1 : 0;
        } else if (!strcmp(cmd, "up") && nf >= 2) {
            rc = rd_kafka_mock_broker_set_up(mc, atoi(a)) ? -1 : 0;
        } else {
            rc = -1;
        }
        printf(rc == 0 ? "ok %s\n" : "error %s\n", line);
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(host);
    return 0;
}
