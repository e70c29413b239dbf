/* io_internal.h - backends behind floe/io.h and the request counters they bump. */
#ifndef FLOE_IO_INTERNAL_H
#define FLOE_IO_INTERNAL_H

#include <errno.h>

#include "floe/io.h"

/* True when an injected fault fails this operation (errno is then set): call it right
 * before the system call it stands for, `if (floe_io_faulted(K) || call() != 0)`. */
static inline bool floe_io_faulted(floe_io_fault_kind kind) {
    int e = floe_io_fault_hit(kind);
    if (e)
        errno = e;
    return e != 0;
}

enum { FLOE_IO_GET, FLOE_IO_PUT, FLOE_IO_LIST, FLOE_IO_DELETE, FLOE_IO_HEAD };
void floe_io_count(int kind, int64_t bytes);
bool floe_io_is_remote(const char *uri);

int floe_local_output_open(const char *uri, const floe_output_options *opts,
                           floe_output **out, floe_error *err);
int floe_local_input_open(const char *uri, floe_input **out, floe_error *err);
int floe_local_exists(const char *uri, bool *exists, floe_error *err);
int floe_local_delete(const char *uri, floe_error *err);
int floe_local_mkdirs(const char *uri, floe_error *err);
int floe_local_list(const char *prefix, int (*fn)(void *ctx, const floe_io_entry *e),
                    void *ctx, floe_error *err);

#endif
