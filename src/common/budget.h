/*
 * common/budget.h - a byte budget shared by the requests of a server (floe serve's
 * max_inflight_bytes, floe catalog serve's request bodies). Internal to the library (not
 * installed).
 *
 * A request takes bytes from the budget before it allocates them and gives them back when
 * it frees them; *held is what one holder has taken. Every operation is one atomic
 * compare-and-swap, so any thread may hold and release. The limit may move while bytes
 * are held (a reload): what is held stays held, only new takes see the new limit.
 */
#ifndef FLOE_COMMON_BUDGET_H
#define FLOE_COMMON_BUDGET_H

#include <stdatomic.h>
#include <stdint.h>

#include "floe/common.h"

typedef struct floe_budget {
    _Atomic int64_t used;  /* held by every holder together */
    _Atomic int64_t limit; /* at most this much held at once */
} floe_budget;

/* Make *held `want`: giving back always works; taking more fails with FLOE_EBUSY when
 * the budget is in use by others now (answer 503 + Retry-After), or FLOE_ELIMIT when
 * want + other (what the same holder holds elsewhere) is more than the whole limit
 * (answer 413: it can never fit). *held changes only on success. */
int floe_budget_hold(floe_budget *b, int64_t *held, int64_t want, int64_t other);
/* Give back all of *held (0 after). */
void floe_budget_release(floe_budget *b, int64_t *held);
/* Room for `extra` more bytes in buf (floe_buf_reserve), its growth taken from the budget
 * first (as floe_budget_hold). FLOE_ELIMIT also past buf->max; FLOE_ENOMEM. */
int floe_budget_buf_room(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                         size_t extra);

#endif
