/*
 * lazy_snappy.h - libsnappy, loaded when first called (see common/lazylib.h).
 *
 * Include this instead of <snappy-c.h>. libsnappy is C++: linking it loaded and
 * relocated libstdc++ and libgcc_s at every command's start (~2.5 ms of CPU, issue 22),
 * though only Snappy pages and Avro blocks call it. Each Snappy case of codec.c first
 * calls floe_lazy_snappy(err) and calls through the table it returns.
 */
#ifndef FLOE_LAZY_SNAPPY_H
#define FLOE_LAZY_SNAPPY_H

#include <snappy-c.h>

#include "common/lazylib.h"

#define FLOE_LAZY_SNAPPY_FNS(X) \
    X(snappy_compress) \
    X(snappy_max_compressed_length) \
    X(snappy_uncompress) \
    X(snappy_uncompressed_length)

typedef struct floe_lazy_snappy_fns {
    FLOE_LAZY_SNAPPY_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_snappy_fns;

/* The table, libsnappy loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). */
const floe_lazy_snappy_fns *floe_lazy_snappy(floe_error *err);
/* The loaded table (aborts as a bug when floe_lazy_snappy has not loaded it). */
const floe_lazy_snappy_fns *floe_lazy_snappy_table(void);

#endif
