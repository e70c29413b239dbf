/*
 * fault.c - I/O fault injection for tests (floe_io_fault_* in io_faults.h).
 *
 * One counter and one trigger per kind of operation, in each context. Every backend call
 * of that kind asks floe_io_fault_hit() first; once the counter reaches the trigger, that call and every
 * later one of the kind fail with the chosen errno without reaching the system, the way a
 * full or broken disk behaves. With no trigger set the cost is two relaxed atomics per
 * system call. Thread-safe: convert's worker threads and writer share the counters.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/testing.h"
#include "io_internal.h"

static void inject(floe_io *io, floe_io_fault_kind kind, uint64_t nth, int errnum, bool once) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return;
    floe_io_faults *f = &floe_io_resolve(io)->faults;
    atomic_store(&f->at[kind], 0);
    atomic_store(&f->count[kind], 0);
    atomic_store(&f->errnum[kind], errnum > 0 ? errnum : EIO);
    atomic_store(&f->once[kind], once);
    atomic_store(&f->at[kind], nth);
}

void floe_io_fault_inject(floe_io *io, floe_io_fault_kind kind, uint64_t nth, int errnum) {
    inject(io, kind, nth, errnum, false);
}

void floe_io_fault_inject_once(floe_io *io, floe_io_fault_kind kind, uint64_t nth,
                               int errnum) {
    inject(io, kind, nth, errnum, true);
}

void floe_io_fault_clear(floe_io *io) {
    floe_io_faults *f = &floe_io_resolve(io)->faults;
    for (int k = 0; k < FLOE_IO_FAULT_NKINDS; k++) {
        atomic_store(&f->at[k], 0);
        atomic_store(&f->count[k], 0);
    }
}

uint64_t floe_io_fault_count(floe_io *io, floe_io_fault_kind kind) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return 0;
    return atomic_load(&floe_io_resolve(io)->faults.count[kind]);
}

int floe_io_fault_hit(floe_io *io, floe_io_fault_kind kind) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return 0;
    if (kind == FLOE_IO_FAULT_WRITE || kind == FLOE_IO_FAULT_FSYNC ||
        kind == FLOE_IO_FAULT_RENAME)
        floe_crash_point(); /* a step that changes what is on disk */
    floe_io_faults *f = &floe_io_resolve(io)->faults;
    uint64_t n = atomic_fetch_add_explicit(&f->count[kind], 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&f->at[kind], memory_order_relaxed);
    if (at == 0 || n < at || (n > at && atomic_load(&f->once[kind])))
        return 0;
    return atomic_load(&f->errnum[kind]);
}
