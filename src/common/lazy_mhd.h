/*
 * lazy_mhd.h - libmicrohttpd, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <microhttpd.h>: the names below then call through a table
 * that floe_lazy_mhd(err) fills, called first by each entry point.
 */
#ifndef FLOE_LAZY_MHD_H
#define FLOE_LAZY_MHD_H

#include <microhttpd.h>

#include "common/lazylib.h"

#define FLOE_LAZY_MHD_FNS(X) \
    X(MHD_add_response_header) \
    X(MHD_create_response_from_buffer) \
    X(MHD_create_response_from_buffer_with_free_callback) \
    X(MHD_create_response_from_buffer_with_free_callback_cls) \
    X(MHD_destroy_response) \
    X(MHD_get_connection_info) \
    X(MHD_get_connection_values) \
    X(MHD_get_daemon_info) \
    X(MHD_lookup_connection_value) \
    X(MHD_queue_response) \
    X(MHD_quiesce_daemon) \
    X(MHD_start_daemon) \
    X(MHD_stop_daemon)

typedef struct floe_lazy_mhd_fns {
    FLOE_LAZY_MHD_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_mhd_fns;

/* The table, libmicrohttpd loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). Call it at each entry
 * point before the names below are used. */
const floe_lazy_mhd_fns *floe_lazy_mhd(floe_error *err);
/* The loaded table, for the names below (aborts as a bug when floe_lazy_mhd has not
 * loaded it: see common/lazylib.h). */
const floe_lazy_mhd_fns *floe_lazy_mhd_table(void);

#ifndef FLOE_LAZY_TABLES
#define MHD_add_response_header (floe_lazy_mhd_table()->MHD_add_response_header)
#define MHD_create_response_from_buffer (floe_lazy_mhd_table()->MHD_create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback (floe_lazy_mhd_table()->MHD_create_response_from_buffer_with_free_callback)
#define MHD_create_response_from_buffer_with_free_callback_cls (floe_lazy_mhd_table()->MHD_create_response_from_buffer_with_free_callback_cls)
#define MHD_destroy_response (floe_lazy_mhd_table()->MHD_destroy_response)
#define MHD_get_connection_info (floe_lazy_mhd_table()->MHD_get_connection_info)
#define MHD_get_connection_values (floe_lazy_mhd_table()->MHD_get_connection_values)
#define MHD_get_daemon_info (floe_lazy_mhd_table()->MHD_get_daemon_info)
#define MHD_lookup_connection_value (floe_lazy_mhd_table()->MHD_lookup_connection_value)
#define MHD_queue_response (floe_lazy_mhd_table()->MHD_queue_response)
#define MHD_quiesce_daemon (floe_lazy_mhd_table()->MHD_quiesce_daemon)
#define MHD_start_daemon (floe_lazy_mhd_table()->MHD_start_daemon)
#define MHD_stop_daemon (floe_lazy_mhd_table()->MHD_stop_daemon)
#endif

#endif
