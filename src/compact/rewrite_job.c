/*
 * rewrite_job.c - floe rewrite as a maintenance job (see floe_rewrite_maint_job).
 */
#include <string.h>

#include "floe/rewrite.h"

int floe_rewrite_maint_job(void *ctx, floe_table *t, floe_error *err) {
    (void)ctx;
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_rewrite_result res;
    memset(&res, 0, sizeof res);
    int rc = floe_rewrite(t, &o, &res, err);
    if (rc == 0)
        floe_log(FLOE_LOG_INFO, "maintain: %s: rewrote %lld small files into %lld (%lld failed)",
                 floe_table_name(t), (long long)res.rewritten_data_files_count,
                 (long long)res.added_data_files_count,
                 (long long)res.failed_data_files_count);
    return rc;
}
