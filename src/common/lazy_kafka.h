/*
 * lazy_kafka.h - librdkafka, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <librdkafka/rdkafka.h>: the names below then call through a table
 * that floe_lazy_kafka(err) fills, called first by each entry point.
 */
#ifndef FLOE_LAZY_KAFKA_H
#define FLOE_LAZY_KAFKA_H

#include <librdkafka/rdkafka.h>

#include "common/lazylib.h"

#define FLOE_LAZY_KAFKA_FNS(X) \
    X(rd_kafka_assign) \
    X(rd_kafka_assignment_lost) \
    X(rd_kafka_commit) \
    X(rd_kafka_conf_destroy) \
    X(rd_kafka_conf_new) \
    X(rd_kafka_conf_set) \
    X(rd_kafka_conf_set_log_cb) \
    X(rd_kafka_conf_set_opaque) \
    X(rd_kafka_conf_set_rebalance_cb) \
    X(rd_kafka_consumer_close) \
    X(rd_kafka_consumer_poll) \
    X(rd_kafka_destroy) \
    X(rd_kafka_err2str) \
    X(rd_kafka_error_destroy) \
    X(rd_kafka_error_string) \
    X(rd_kafka_get_watermark_offsets) \
    X(rd_kafka_header_get_all) \
    X(rd_kafka_incremental_assign) \
    X(rd_kafka_incremental_unassign) \
    X(rd_kafka_message_destroy) \
    X(rd_kafka_message_errstr) \
    X(rd_kafka_message_headers) \
    X(rd_kafka_message_timestamp) \
    X(rd_kafka_new) \
    X(rd_kafka_pause_partitions) \
    X(rd_kafka_poll_set_consumer) \
    X(rd_kafka_rebalance_protocol) \
    X(rd_kafka_resume_partitions) \
    X(rd_kafka_seek_partitions) \
    X(rd_kafka_subscribe) \
    X(rd_kafka_topic_name) \
    X(rd_kafka_topic_partition_list_add) \
    X(rd_kafka_topic_partition_list_destroy) \
    X(rd_kafka_topic_partition_list_new)

typedef struct floe_lazy_kafka_fns {
    FLOE_LAZY_KAFKA_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_kafka_fns;

/* The table, librdkafka loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). Call it at each entry
 * point before the names below are used. */
const floe_lazy_kafka_fns *floe_lazy_kafka(floe_error *err);
/* The loaded table, for the names below (aborts as a bug when floe_lazy_kafka has not
 * loaded it: see common/lazylib.h). */
const floe_lazy_kafka_fns *floe_lazy_kafka_table(void);

#ifndef FLOE_LAZY_TABLES
#define rd_kafka_assign (floe_lazy_kafka_table()->rd_kafka_assign)
#define rd_kafka_assignment_lost (floe_lazy_kafka_table()->rd_kafka_assignment_lost)
#define rd_kafka_commit (floe_lazy_kafka_table()->rd_kafka_commit)
#define rd_kafka_conf_destroy (floe_lazy_kafka_table()->rd_kafka_conf_destroy)
#define rd_kafka_conf_new (floe_lazy_kafka_table()->rd_kafka_conf_new)
#define rd_kafka_conf_set (floe_lazy_kafka_table()->rd_kafka_conf_set)
#define rd_kafka_conf_set_log_cb (floe_lazy_kafka_table()->rd_kafka_conf_set_log_cb)
#define rd_kafka_conf_set_opaque (floe_lazy_kafka_table()->rd_kafka_conf_set_opaque)
#define rd_kafka_conf_set_rebalance_cb (floe_lazy_kafka_table()->rd_kafka_conf_set_rebalance_cb)
#define rd_kafka_consumer_close (floe_lazy_kafka_table()->rd_kafka_consumer_close)
#define rd_kafka_consumer_poll (floe_lazy_kafka_table()->rd_kafka_consumer_poll)
#define rd_kafka_destroy (floe_lazy_kafka_table()->rd_kafka_destroy)
#define rd_kafka_err2str (floe_lazy_kafka_table()->rd_kafka_err2str)
#define rd_kafka_error_destroy (floe_lazy_kafka_table()->rd_kafka_error_destroy)
#define rd_kafka_error_string (floe_lazy_kafka_table()->rd_kafka_error_string)
#define rd_kafka_get_watermark_offsets (floe_lazy_kafka_table()->rd_kafka_get_watermark_offsets)
#define rd_kafka_header_get_all (floe_lazy_kafka_table()->rd_kafka_header_get_all)
#define rd_kafka_incremental_assign (floe_lazy_kafka_table()->rd_kafka_incremental_assign)
#define rd_kafka_incremental_unassign (floe_lazy_kafka_table()->rd_kafka_incremental_unassign)
#define rd_kafka_message_destroy (floe_lazy_kafka_table()->rd_kafka_message_destroy)
#define rd_kafka_message_errstr (floe_lazy_kafka_table()->rd_kafka_message_errstr)
#define rd_kafka_message_headers (floe_lazy_kafka_table()->rd_kafka_message_headers)
#define rd_kafka_message_timestamp (floe_lazy_kafka_table()->rd_kafka_message_timestamp)
#define rd_kafka_new (floe_lazy_kafka_table()->rd_kafka_new)
#define rd_kafka_pause_partitions (floe_lazy_kafka_table()->rd_kafka_pause_partitions)
#define rd_kafka_poll_set_consumer (floe_lazy_kafka_table()->rd_kafka_poll_set_consumer)
#define rd_kafka_rebalance_protocol (floe_lazy_kafka_table()->rd_kafka_rebalance_protocol)
#define rd_kafka_resume_partitions (floe_lazy_kafka_table()->rd_kafka_resume_partitions)
#define rd_kafka_seek_partitions (floe_lazy_kafka_table()->rd_kafka_seek_partitions)
#define rd_kafka_subscribe (floe_lazy_kafka_table()->rd_kafka_subscribe)
#define rd_kafka_topic_name (floe_lazy_kafka_table()->rd_kafka_topic_name)
#define rd_kafka_topic_partition_list_add (floe_lazy_kafka_table()->rd_kafka_topic_partition_list_add)
#define rd_kafka_topic_partition_list_destroy (floe_lazy_kafka_table()->rd_kafka_topic_partition_list_destroy)
#define rd_kafka_topic_partition_list_new (floe_lazy_kafka_table()->rd_kafka_topic_partition_list_new)
#endif

#endif
