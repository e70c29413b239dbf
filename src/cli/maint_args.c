/*
 * maint_args.c - shared argument handling of the maintenance commands.
 */
#include <stdlib.h>
#include <string.h>

#include "floe/scan.h"
#include "maint_args.h"

bool cli_parse_older_than(const char *s, int64_t now_ms, int64_t *ms) {
    int64_t d;
    if (floe_parse_duration(s, 0, &d)) {
        *ms = now_ms - d;
        return true;
    }
    floe_error err;
    floe_error_clear(&err);
    return floe_scan_parse_time(s, ms, &err) == 0;
}

void cli_print_kind_counts(FILE *f, const int64_t counts[FLOE_MAINT_NKINDS], bool json) {
    bool first = true;
    for (int k = 0; k < FLOE_MAINT_NKINDS; k++) {
        if (json) {
            fprintf(f, "%s\"%s\":%lld", first ? "" : ",",
                    floe_maint_file_kind_name((floe_maint_file_kind)k), (long long)counts[k]);
            first = false;
        } else if (counts[k]) {
            fprintf(f, "  %-18s %lld\n", floe_maint_file_kind_name((floe_maint_file_kind)k),
                    (long long)counts[k]);
        }
    }
}
