/*
 * mapguard.h - reading memory-mapped input files without dying when they shrink.
 *
 * A file mapped with mmap(2) that another process truncates turns every access to the
 * pages past its new end into SIGBUS, which kills the process. floe maps inputs it only
 * reads (NDJSON for convert), and input must never crash floe. A guarded mapping is
 * registered here; a SIGBUS whose address falls inside a registered mapping replaces the
 * mapping from that page to its end with zero-filled pages (so the access completes and
 * reads zeros) and marks the guard as hit. The owner checks floe_map_guard_hit() before
 * trusting what it read and fails with a clear error: the file changed while being read.
 * The kernel raises the same SIGBUS when a mapped page cannot be read (an I/O error), and
 * it is answered the same way. A SIGBUS anywhere else is not ours: the previous disposition is restored and the
 * signal delivered again, as if no handler were there.
 *
 * Up to FLOE_MAP_GUARDS mappings are guarded at once; floe_map_guard_add returns
 * FLOE_ELIMIT past that (the caller then reads with read(2) instead).
 *
 * What the program must do: guarding needs a process-wide SIGBUS handler, and the library
 * installs none by itself. The program calls floe_map_guard_install once, at start,
 * before it starts threads (the floe command does). Until it has, floe_map_guard_add
 * fails with FLOE_EUNSUPPORTED and the library maps no input file: local files that
 * would be mapped (NDJSON inputs of the converter, floe_input_mmap views of Parquet files and
 * manifests) are read with read(2) instead - the same results, with the copies that
 * reading makes - so a file truncated while being read never raises SIGBUS. A program
 * with a SIGBUS handler of its own installs it first: floe's handler passes every SIGBUS
 * outside a guarded mapping to the disposition in place when floe_map_guard_install ran
 * (a handler installed later replaces floe's, and a truncated guarded file then reaches
 * that handler instead of reading zeros).
 */
#ifndef FLOE_MAPGUARD_H
#define FLOE_MAPGUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

#define FLOE_MAP_GUARDS 64

typedef struct floe_map_guard floe_map_guard;

/* Install the SIGBUS handler of guarded mappings (process-wide; once: later calls return
 * 0 and change nothing). FLOE_EIO when sigaction fails. */
int floe_map_guard_install(floe_error *err) FLOE_NODISCARD;
/* Whether floe_map_guard_install has run: guarded mappings are possible. */
bool floe_map_guard_installed(void);

/* Guard [addr, addr+len), a mapping of a file (addr page-aligned, as mmap returns it).
 * FLOE_EUNSUPPORTED before floe_map_guard_install. */
int floe_map_guard_add(void *addr, size_t len, floe_map_guard **out, floe_error *err)
    FLOE_NODISCARD;
/* True once an access past the end of the file was answered with zeros. */
bool floe_map_guard_hit(const floe_map_guard *g);
/* Stop guarding (before munmap). NULL is allowed. */
void floe_map_guard_remove(floe_map_guard *g);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
