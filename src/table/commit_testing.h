/*
 * table/commit_testing.h - test hooks of the commit: injected swap failures and a commit
 * racing each attempt. Not installed and not exported by libfloe.so (tests link the static
 * library). Process-wide.
 */
#ifndef FLOE_TABLE_COMMIT_TESTING_H
#define FLOE_TABLE_COMMIT_TESTING_H

#include "floe/table.h"

/* Failure injection for tests (process-wide). The nth swap from now (1-based) reports
 * `code` (FLOE_ECONFLICT or FLOE_EUNKNOWN_STATE): before the store is touched, or with
 * after_apply once the swap has really happened. With fail_resolve the catalog reads that
 * try to settle an unknown state fail too. nth = 0 disables. */
typedef struct floe_commit_fault {
    int nth_swap;
    int code;
    bool after_apply;
    bool fail_resolve;
} floe_commit_fault;
void floe_table_commit_inject(const floe_commit_fault *f);
/* For tests: fn(ctx, t) runs in every attempt of every floe_table_commit after apply()
 * and before the swap (fn decides by t whether to act): a commit it makes through another
 * handle lands "during" the attempt, which then loses, deterministically. NULL removes it.
 * Process-wide; set it while no commit runs. */
typedef void (*floe_commit_race_fn)(void *ctx, floe_table *t);
void floe_table_commit_set_race(floe_commit_race_fn fn, void *ctx);

#endif
