/*
 * mapguard.c - SIGBUS on guarded file mappings becomes zero pages and a flag (see
 * floe/mapguard.h).
 *
 * The handler runs on the thread that touched the page. It only reads the guard table
 * (atomics, no locks) and calls mmap(2), which Linux performs safely from a signal
 * handler although POSIX does not list it as async-signal-safe. The table is a fixed
 * array: a slot is claimed with a compare-and-swap and published by its `used` flag after
 * its range is written, so the handler never sees a half-written range.
 */
#include "floe/mapguard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct floe_map_guard {
    atomic_int used; /* 0 free, 1 being filled, 2 live */
    _Atomic uintptr_t start, end;
    atomic_int hit;
};

static struct floe_map_guard guards[FLOE_MAP_GUARDS];
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;
static atomic_bool installed;
static struct sigaction previous;
static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    uintptr_t a = (uintptr_t)si->si_addr;
    for (size_t i = 0; i < FLOE_MAP_GUARDS; i++) {
        struct floe_map_guard *g = &guards[i];
        if (atomic_load(&g->used) != 2)
            continue;
        uintptr_t s = atomic_load(&g->start), e = atomic_load(&g->end);
        if (a < s || a >= e)
            continue;
        uintptr_t page = a & ~(page_size - 1);
        void *m = mmap((void *)page, e - page, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m != MAP_FAILED) {
            atomic_store(&g->hit, 1);
            return; /* the access runs again and reads zeros */
        }
        break;
    }
    /* not a guarded mapping: behave as if this handler were not installed */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, si, uc);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    signal(SIGBUS, SIG_DFL);
    /* returning re-runs the access, which now faults with the default action; a signal
     * sent with kill(2) would not, so send it again */
    if (si->si_code <= 0)
        raise(SIGBUS);
}

static void install(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous) != 0)
        install_errno = errno;
    else
        atomic_store(&installed, true);
}

int floe_map_guard_install(floe_error *err) {
    pthread_once(&install_once, install);
    if (install_errno)
        return floe_error_set(err, FLOE_EIO, "cannot install the SIGBUS handler: %s",
                              strerror(install_errno));
    return 0;
}

bool floe_map_guard_installed(void) { return atomic_load(&installed); }

int floe_map_guard_add(void *addr, size_t len, floe_map_guard **out, floe_error *err) {
    if (!atomic_load(&installed))
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "map guard: no SIGBUS handler (floe_map_guard_install)");
    uintptr_t s = (uintptr_t)addr;
    if (!addr || len == 0 || (s & (page_size - 1)) || len > UINTPTR_MAX - s - page_size)
        return floe_error_set(err, FLOE_EINVALID, "map guard: bad range");
    for (size_t i = 0; i < FLOE_MAP_GUARDS; i++) {
        struct floe_map_guard *g = &guards[i];
        int expect = 0;
        if (!atomic_compare_exchange_strong(&g->used, &expect, 1))
            continue;
        atomic_store(&g->start, s);
        atomic_store(&g->end, s + ((len + page_size - 1) & ~(page_size - 1)));
        atomic_store(&g->hit, 0);
        atomic_store(&g->used, 2);
        *out = g;
        return 0;
    }
    return floe_error_set(err, FLOE_ELIMIT, "map guard: %d mappings guarded already",
                          FLOE_MAP_GUARDS);
}

bool floe_map_guard_hit(const floe_map_guard *g) {
    return g && atomic_load(&((floe_map_guard *)g)->hit) != 0;
}

void floe_map_guard_remove(floe_map_guard *g) {
    if (!g)
        return;
    atomic_store(&g->used, 1);
    atomic_store(&g->start, 0);
    atomic_store(&g->end, 0);
    atomic_store(&g->used, 0);
}
