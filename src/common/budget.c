/*
 * budget.c - a byte budget shared by the requests of a server (common/budget.h).
 */
#include "common/budget.h"

int floe_budget_hold(floe_budget *b, int64_t *held, int64_t want, int64_t other) {
    int64_t d = want - *held;
    if (d <= 0) {
        if (d < 0)
            atomic_fetch_sub(&b->used, -d);
        *held = want;
        return 0;
    }
    int64_t limit = atomic_load(&b->limit);
    if (want + other > limit)
        return FLOE_ELIMIT;
    int64_t cur = atomic_load(&b->used);
    do {
        if (cur + d > limit)
            return FLOE_EBUSY;
    } while (!atomic_compare_exchange_weak(&b->used, &cur, cur + d));
    *held = want;
    return 0;
}

int floe_budget_hold_alone(floe_budget *b, int64_t *held, int64_t want) {
    int64_t none = 0;
    if (*held != 0 || !atomic_compare_exchange_strong(&b->used, &none, want))
        return FLOE_EBUSY;
    *held = want;
    return 0;
}

void floe_budget_hold_anyway(floe_budget *b, int64_t *held, int64_t want) {
    if (want > *held) {
        atomic_fetch_add(&b->used, want - *held);
        *held = want;
    }
}

bool floe_budget_full(floe_budget *b) {
    return atomic_load(&b->used) >= atomic_load(&b->limit);
}

void floe_budget_release(floe_budget *b, int64_t *held) {
    (void)floe_budget_hold(b, held, 0, 0);
}

/* The capacity floe_buf_reserve gives a buffer of capacity cap that needs need bytes. */
static size_t grown_cap(size_t cap, size_t need) {
    size_t ncap = cap ? cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return need;
        ncap *= 2;
    }
    return ncap;
}

static int buf_room(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                    size_t extra, bool exact) {
    if (buf->len + extra + 1 <= buf->cap)
        return 0;
    if (extra > buf->max || buf->len > buf->max - extra)
        return FLOE_ELIMIT;
    size_t need = buf->len + extra + 1;
    size_t ncap = exact ? need : grown_cap(buf->cap, need);
    FLOE_FORWARD_IF_ERROR(floe_budget_hold(b, held, *held + (int64_t)(ncap - buf->cap), other));
    return exact ? floe_buf_reserve_exact(buf, extra) : floe_buf_reserve(buf, extra);
}

int floe_budget_buf_room(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                         size_t extra) {
    return buf_room(b, held, other, buf, extra, false);
}

int floe_budget_buf_room_exact(floe_budget *b, int64_t *held, int64_t other, floe_buf *buf,
                               size_t extra) {
    return buf_room(b, held, other, buf, extra, true);
}
