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
#include <stdbool.h>
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
/* Take want bytes for a holder that holds none (*held 0) when nothing at all is held, even
 * past the limit: one thing larger than the whole budget goes through alone, and nothing
 * else is taken while it is held. FLOE_EBUSY when anything is held. */
int floe_budget_hold_alone(floe_budget *b, int64_t *held, int64_t want);
/* Make *held want (want >= *held) whatever the limit: for what must be held anyway (an
 * answer to a change already made). Later takes see it. */
void floe_budget_hold_anyway(floe_budget *b, int64_t *held, int64_t want);
/* True when the budget is used up (a new take of any size would fail now). */
bool floe_budget_full(floe_budget *b);
/* Give back all of *held (0 after). */
void floe_budget_release(floe_budget *b, int64_t *held);
/* Room for `extra` more bytes in buf (floe_buf_reserve), its growth taken from the budget
 * first (as floe_budget_hold). FLOE_ELIMIT also past buf->max; FLOE_ENOMEM. */
int floe_budget_buf_room(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                         size_t extra);
/* The same with floe_buf_reserve_exact: a buffer that grows is given, and charged,
 * exactly len + extra + 1 bytes. */
int floe_budget_buf_room_exact(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                               size_t extra);

#endif
