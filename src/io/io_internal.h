/* io_internal.h - the I/O context (struct floe_io), the table of operations each URI
 * scheme's backend provides, and the request counters and fault hooks the backends bump. */
#ifndef FLOE_IO_INTERNAL_H
#define FLOE_IO_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>

#include "floe/io.h"
#include "io_faults.h"
#include "s3_internal.h"

/* Direct local outputs (floe_output_options.direct): bytes per O_DIRECT write. Two such
 * blocks share one 2 MiB huge page, the output's only fresh memory: 8 MiB blocks were
 * 16 MiB of it, zeroed by the kernel on first touch (on this host ~1 ms of CPU per MiB
 * when the page comes back from the hypervisor), and a single-row-group file waited for
 * its first 8 MiB to be copied before the device wrote a byte, and for up to 8 MiB more
 * through the page cache at fsync; this device writes 1 MiB O_DIRECT blocks as fast. */
#define FLOE_IO_DIRECT_BLOCK ((size_t)1 << 20)

/* The operations of one backend. Objects are the backend's own (void * here); every
 * function has the contract of the public function of the same name in floe/io.h. */
typedef struct floe_io_backend {
    int (*output_open)(floe_io *io, const char *uri, const floe_output_options *opts,
                       void **out, floe_error *err);
    int (*output_write)(void *o, const void *p, size_t n, floe_error *err);
    int64_t (*output_tell)(const void *o);
    int (*output_close)(void *o, floe_error *err);
    void (*output_abort)(void *o);
    int (*input_open)(floe_io *io, const char *uri, void **out, floe_error *err);
    /* NULL: input_open (the backend learns the size as cheaply either way) */
    int (*input_open_sequential)(floe_io *io, const char *uri, void **out, floe_error *err);
    int64_t (*input_size)(const void *in);
    const char *(*input_uri)(const void *in);
    int (*input_read_at)(void *in, int64_t off, void *buf, size_t n, floe_error *err);
    /* NULL when the backend cannot map (floe_input_mmap returns 1) */
    int (*input_mmap)(void *in, const uint8_t **out, floe_error *err);
    bool (*input_mmap_shrank)(const void *in);
    void (*input_mmap_release)(void *in, int64_t off, size_t n);
    void (*input_mmap_prefault)(void *in, int64_t off, size_t n);
    void (*input_close)(void *in);
    int (*exists)(floe_io *io, const char *uri, bool *exists, floe_error *err);
    int (*remove)(floe_io *io, const char *uri, floe_error *err);
    /* NULL: one remove per uri */
    int (*remove_many)(floe_io *io, const char *const *uris, size_t n, floe_error *err);
    /* NULL: the store has no folders (mkdirs is a no-op) */
    int (*mkdirs)(floe_io *io, const char *uri, floe_error *err);
    int (*list)(floe_io *io, const char *prefix, int (*fn)(void *ctx, const floe_io_entry *e),
                void *ctx, floe_error *err);
} floe_io_backend;

extern const floe_io_backend floe_local_backend;
extern const floe_io_backend floe_s3_backend;

enum { FLOE_IO_GET, FLOE_IO_PUT, FLOE_IO_LIST, FLOE_IO_DELETE, FLOE_IO_HEAD, FLOE_IO_NCOUNTERS };

typedef struct floe_io_faults {
    _Atomic uint64_t count[FLOE_IO_FAULT_NKINDS];
    _Atomic uint64_t at[FLOE_IO_FAULT_NKINDS]; /* 0 = never */
    _Atomic int errnum[FLOE_IO_FAULT_NKINDS];
    _Atomic bool once[FLOE_IO_FAULT_NKINDS]; /* only the trigger call fails */
} floe_io_faults;

/* One scheme of the context's table: URIs "<name>://..." (and "<name>:..." for file) go
 * to backend. */
typedef struct floe_io_scheme {
    const char *name;
    const floe_io_backend *backend;
} floe_io_scheme;

struct floe_io {
    floe_io_scheme schemes[4]; /* s3, s3a, s3n; everything else (file:, plain) is local */
    size_t n_schemes;
    floe_s3_config s3; /* resolved object-storage settings */
    _Atomic int64_t requests[FLOE_IO_NCOUNTERS];
    _Atomic int64_t bytes_read, bytes_written;
    floe_io_faults faults;
};

/* NULL -> the default context. */
floe_io *floe_io_resolve(floe_io *io);

/* True when an injected fault of io fails this operation (errno is then set): call it
 * right before the system call it stands for, `if (floe_io_faulted(io, K) || call())`. */
static inline bool floe_io_faulted(floe_io *io, floe_io_fault_kind kind) {
    int e = floe_io_fault_hit(io, kind);
    if (e)
        errno = e;
    return e != 0;
}

void floe_io_count(floe_io *io, int kind, int64_t bytes);
bool floe_io_is_remote(const char *uri);
/* The local path inside a local uri (a suffix of it: no allocation, so cleanup paths
 * work when memory has run out); NULL for remote uris. */
const char *floe_io_local_path_ref(const char *uri);

/* floe_io_syncer of local folders (local.c); fileio.c's functions dispatch to these. */
typedef struct floe_local_syncer floe_local_syncer;
int floe_local_syncer_open(floe_io *io, const char *uri, size_t min_batch,
                           floe_local_syncer **out, floe_error *err);
int floe_local_syncer_sync(floe_local_syncer *sy, const char *const *uris, size_t n,
                           floe_error *err);
void floe_local_syncer_close(floe_local_syncer *sy);

#endif
