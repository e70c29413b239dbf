/*
 * rewrite_job.c - floe rewrite as a maintenance job (see floe_rewrite_maint_job), and the
 * "key=value,..." option lists the maintenance configuration gives it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "floe/rewrite.h"

int floe_rewrite_options_parse_list(floe_rewrite_options *o, const char *list,
                                    floe_error *err) {
    if (!list)
        return 0;
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, ",");
        char *item = floe_strndup(p, n);
        if (!item)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        char *end = item + strlen(item);
        while (end > item && end[-1] == ' ')
            *--end = '\0';
        char *eq = strchr(item, '=');
        int rc = 0;
        if (!eq || eq == item) {
            rc = floe_error_set(err, FLOE_EINVALID, "rewrite options: '%s' is not key=value",
                                item);
        } else {
            *eq = '\0';
            rc = floe_rewrite_option_set(o, item, eq + 1, err);
        }
        floe_free(item);
        if (rc < 0)
            return rc;
        p += n;
    }
    return 0;
}

int floe_rewrite_maint_job(void *ctx, floe_table *t, const floe_maint_rewrite_params *p,
                           floe_maint_job_stats *st, char *detail, size_t dn,
                           floe_error *err) {
    (void)ctx;
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    if (p && p->generational)
        o.planner = FLOE_RW_PLANNER_GENERATIONAL;
    if (p)
        FLOE_FORWARD_IF_ERROR(floe_rewrite_options_parse_list(&o, p->options, err));
    floe_rewrite_result res;
    memset(&res, 0, sizeof res);
    int rc = floe_rewrite(t, &o, &res, err);
    if (st) {
        st->files_read = res.rewritten_data_files_count;
        st->bytes_read = res.bytes_read;
        st->files_written = res.added_data_files_count;
        st->bytes_written = res.bytes_written;
        st->commits = res.commits;
        st->attempts = res.attempts;
        st->conflicts = res.conflicts;
    }
    if (detail && dn)
        snprintf(detail, dn,
                 "%s: rewrote %" PRId64 " data files (%" PRId64 " bytes read) into %" PRId64
                 " (%" PRId64 " bytes written) in %" PRId64 " commit(s), %" PRId64
                 " attempt(s), %" PRId64 " conflict(s), %" PRId64 " failed",
                 o.planner == FLOE_RW_PLANNER_GENERATIONAL ? "generational" : "bin-pack",
                 res.rewritten_data_files_count, res.bytes_read, res.added_data_files_count,
                 res.bytes_written, res.commits, res.attempts, res.conflicts,
                 res.failed_data_files_count);
    return rc;
}
