/*
 * fault.c - I/O fault injection for tests (floe_io_fault_* in floe/io.h).
 *
 * One counter and one trigger per kind of operation. Every backend call of that kind asks
 * floe_io_fault_hit() first; once the counter reaches the trigger, that call and every
 * later one of the kind fail with the chosen errno without reaching the system, the way a
 * full or broken disk behaves. With no trigger set the cost is two relaxed atomics per
 * system call. Thread-safe: convert's worker threads and writer share the counters.
 */
#include "floe/io.h"
#include "common/testing.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

static _Atomic uint64_t fault_count[FLOE_IO_FAULT_NKINDS];
static _Atomic uint64_t fault_at[FLOE_IO_FAULT_NKINDS]; /* 0 = never */
static _Atomic int fault_errno[FLOE_IO_FAULT_NKINDS];
static _Atomic bool fault_once[FLOE_IO_FAULT_NKINDS]; /* only the trigger call fails */

static void inject(floe_io_fault_kind kind, uint64_t nth, int errnum, bool once) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return;
    atomic_store(&fault_at[kind], 0);
    atomic_store(&fault_count[kind], 0);
    atomic_store(&fault_errno[kind], errnum > 0 ? errnum : EIO);
    atomic_store(&fault_once[kind], once);
    atomic_store(&fault_at[kind], nth);
}

void floe_io_fault_inject(floe_io_fault_kind kind, uint64_t nth, int errnum) {
    inject(kind, nth, errnum, false);
}

void floe_io_fault_inject_once(floe_io_fault_kind kind, uint64_t nth, int errnum) {
    inject(kind, nth, errnum, true);
}

void floe_io_fault_clear(void) {
    for (int k = 0; k < FLOE_IO_FAULT_NKINDS; k++) {
        atomic_store(&fault_at[k], 0);
        atomic_store(&fault_count[k], 0);
    }
}

uint64_t floe_io_fault_count(floe_io_fault_kind kind) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return 0;
    return atomic_load(&fault_count[kind]);
}

int floe_io_fault_hit(floe_io_fault_kind kind) {
    if ((unsigned)kind >= FLOE_IO_FAULT_NKINDS)
        return 0;
    if (kind == FLOE_IO_FAULT_WRITE || kind == FLOE_IO_FAULT_FSYNC ||
        kind == FLOE_IO_FAULT_RENAME)
        floe_crash_point(); /* a step that changes what is on disk */
    uint64_t n = atomic_fetch_add_explicit(&fault_count[kind], 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&fault_at[kind], memory_order_relaxed);
    if (at == 0 || n < at || (n > at && atomic_load(&fault_once[kind])))
        return 0;
    return atomic_load(&fault_errno[kind]);
}
