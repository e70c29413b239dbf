/*
 * common/connguard.h - slow and idle clients of a libmicrohttpd server (floe serve and
 * floe catalog serve). Internal to the library (not installed).
 *
 * libmicrohttpd's own timeout only closes connections that stay silent; a client that
 * trickles a byte now and then holds its connection (and its thread) forever, and the
 * library refuses every connection past its limit, so a few hundred such clients shut
 * everyone else out. The guard tracks each connection's phase (waiting for headers,
 * reading the body, being answered): a watchdog thread shuts a connection down when it
 * waits for its headers longer than header_timeout_ms (waiting for the next request on a
 * keep-alive connection counts as waiting for headers) or reads its body longer than
 * read_timeout_ms. When a connection arrives with max_connections open, one makes room:
 * the connection waiting longest for its headers (idle keep-alive or trickled headers),
 * else the one whose body arrives slowest (bytes per second since it began), else - all
 * are working - the newcomer. A connection younger than FLOE_CONNGUARD_GRACE_MS is never
 * taken, so the newcomer (and its like) cannot be.
 *
 * Use: start the daemon with MHD_OPTION_NOTIFY_CONNECTION, floe_connguard_notify, guard;
 * MHD_OPTION_CONNECTION_LIMIT floe_connguard_mhd_limit (a little above max_connections:
 * past max_connections the guard makes room, the library's limit only bounds how many
 * arrive at once); MHD_OPTION_CONNECTION_TIMEOUT floe_connguard_mhd_timeout_s. Mark the
 * phases from the request handler: BODY at its first call (the headers are in), BUSY
 * when the body is complete, HEADERS from the completion callback.
 */
#ifndef FLOE_COMMON_CONNGUARD_H
#define FLOE_COMMON_CONNGUARD_H

#include "common/lazy_mhd.h"
#include <stdint.h>

#include "floe/common.h"

#define FLOE_CONNGUARD_GRACE_MS 1000

typedef enum floe_conn_phase {
    FLOE_CONN_HEADERS = 0, /* waiting for a request's headers */
    FLOE_CONN_BODY = 1,    /* reading a request's body */
    FLOE_CONN_BUSY = 2,    /* the request is being answered: no timeout */
} floe_conn_phase;

typedef struct floe_connguard_config {
    int64_t max_connections;   /* served at once (> 0) */
    int64_t header_timeout_ms; /* headers (and keep-alive idle time) within */
    int64_t read_timeout_ms;   /* a body within */
} floe_connguard_config;

typedef struct floe_connguard floe_connguard;

/* Start the watchdog thread. */
int floe_connguard_start(const floe_connguard_config *cfg, floe_connguard **out, floe_error *err);
/* Stop the watchdog and free the guard: after MHD_stop_daemon (every connection closed). */
void floe_connguard_stop(floe_connguard *g);
/* The MHD_OPTION_NOTIFY_CONNECTION callback (cls: the guard). */
void floe_connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe);
/* Connection c enters phase (from the request handler or the completion callback). */
void floe_connguard_phase(struct MHD_Connection *c, floe_conn_phase phase);
/* c has received n bytes of the body it is reading. */
void floe_connguard_body_bytes(struct MHD_Connection *c, int64_t n);
/* MHD_OPTION_CONNECTION_LIMIT and MHD_OPTION_CONNECTION_TIMEOUT for a daemon guarded by
 * cfg. */
unsigned floe_connguard_mhd_limit(const floe_connguard_config *cfg);
unsigned floe_connguard_mhd_timeout_s(const floe_connguard_config *cfg);
/* Connections open now, and connections closed to make room since the start. */
int64_t floe_connguard_open(floe_connguard *g);
uint64_t floe_connguard_evicted(floe_connguard *g);

#endif
