/*
 * lazy_curl.h - libcurl, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <curl/curl.h>: the names below then call through a table
 * that floe_lazy_curl(err) fills, called first by each entry point.
 */
#ifndef FLOE_LAZY_CURL_H
#define FLOE_LAZY_CURL_H

#define CURL_DISABLE_TYPECHECK /* its checks are macros over the names below */
#include <curl/curl.h>

#include "common/lazylib.h"

#define FLOE_LAZY_CURL_FNS(X) \
    X(curl_easy_cleanup) \
    X(curl_easy_escape) \
    X(curl_easy_getinfo) \
    X(curl_easy_init) \
    X(curl_easy_perform) \
    X(curl_easy_reset) \
    X(curl_easy_setopt) \
    X(curl_easy_strerror) \
    X(curl_free) \
    X(curl_global_init) \
    X(curl_multi_add_handle) \
    X(curl_multi_cleanup) \
    X(curl_multi_info_read) \
    X(curl_multi_init) \
    X(curl_multi_remove_handle) \
    X(curl_multi_setopt) \
    X(curl_multi_socket_action) \
    X(curl_multi_timeout) \
    X(curl_share_init) \
    X(curl_share_setopt) \
    X(curl_slist_append) \
    X(curl_slist_free_all)

typedef struct floe_lazy_curl_fns {
    FLOE_LAZY_CURL_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_curl_fns;

/* The table, libcurl loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). Call it at each entry
 * point before the names below are used. */
const floe_lazy_curl_fns *floe_lazy_curl(floe_error *err);
/* The loaded table, for the names below (aborts as a bug when floe_lazy_curl has not
 * loaded it: see common/lazylib.h). */
const floe_lazy_curl_fns *floe_lazy_curl_table(void);

#ifndef FLOE_LAZY_TABLES
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_share_setopt
#undef curl_multi_setopt
#define curl_easy_cleanup (floe_lazy_curl_table()->curl_easy_cleanup)
#define curl_easy_escape (floe_lazy_curl_table()->curl_easy_escape)
#define curl_easy_getinfo (floe_lazy_curl_table()->curl_easy_getinfo)
#define curl_easy_init (floe_lazy_curl_table()->curl_easy_init)
#define curl_easy_perform (floe_lazy_curl_table()->curl_easy_perform)
#define curl_easy_reset (floe_lazy_curl_table()->curl_easy_reset)
#define curl_easy_setopt (floe_lazy_curl_table()->curl_easy_setopt)
#define curl_easy_strerror (floe_lazy_curl_table()->curl_easy_strerror)
#define curl_free (floe_lazy_curl_table()->curl_free)
#define curl_global_init (floe_lazy_curl_table()->curl_global_init)
#define curl_multi_add_handle (floe_lazy_curl_table()->curl_multi_add_handle)
#define curl_multi_cleanup (floe_lazy_curl_table()->curl_multi_cleanup)
#define curl_multi_info_read (floe_lazy_curl_table()->curl_multi_info_read)
#define curl_multi_init (floe_lazy_curl_table()->curl_multi_init)
#define curl_multi_remove_handle (floe_lazy_curl_table()->curl_multi_remove_handle)
#define curl_multi_setopt (floe_lazy_curl_table()->curl_multi_setopt)
#define curl_multi_socket_action (floe_lazy_curl_table()->curl_multi_socket_action)
#define curl_multi_timeout (floe_lazy_curl_table()->curl_multi_timeout)
#define curl_share_init (floe_lazy_curl_table()->curl_share_init)
#define curl_share_setopt (floe_lazy_curl_table()->curl_share_setopt)
#define curl_slist_append (floe_lazy_curl_table()->curl_slist_append)
#define curl_slist_free_all (floe_lazy_curl_table()->curl_slist_free_all)
#endif

#endif
