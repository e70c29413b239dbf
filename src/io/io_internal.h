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
/* The local path inside a local uri (a suffix of it: no allocation, so cleanup paths
 * work when memory has run out); NULL for remote uris. */
const char *floe_io_local_path_ref(const char *uri);

/* The public floe_output / floe_input wrap one backend object each (fileio.c); the
 * functions below mirror the public ones of the same name, with the same contracts. */
typedef struct floe_local_output floe_local_output;
typedef struct floe_local_input floe_local_input;

int floe_local_output_open(const char *uri, const floe_output_options *opts,
                           floe_local_output **out, floe_error *err);
int floe_local_output_write(floe_local_output *o, const void *p, size_t n, floe_error *err);
int64_t floe_local_output_tell(const floe_local_output *o);
int floe_local_output_close(floe_local_output *o, floe_error *err);
void floe_local_output_abort(floe_local_output *o);
int floe_local_input_open(const char *uri, floe_local_input **out, floe_error *err);
int64_t floe_local_input_size(const floe_local_input *in);
const char *floe_local_input_uri(const floe_local_input *in);
int floe_local_input_read_at(floe_local_input *in, int64_t off, void *buf, size_t n,
                             floe_error *err);
int floe_local_input_mmap(floe_local_input *in, const uint8_t **out, floe_error *err);
bool floe_local_input_mmap_shrank(const floe_local_input *in);
void floe_local_input_mmap_release(floe_local_input *in, int64_t off, size_t n);
void floe_local_input_mmap_prefault(floe_local_input *in, int64_t off, size_t n);
void floe_local_input_close(floe_local_input *in);
int floe_local_exists(const char *uri, bool *exists, floe_error *err);
int floe_local_delete(const char *uri, floe_error *err);
int floe_local_mkdirs(const char *uri, floe_error *err);
int floe_local_list(const char *prefix, int (*fn)(void *ctx, const floe_io_entry *e),
                    void *ctx, floe_error *err);

#endif
