/*
 * maint_args.c - shared argument handling of the maintenance commands.
 */
#include <stdlib.h>
#include <string.h>

#include "floe/scan.h"
#include "maint_args.h"

bool cli_parse_duration(const char *s, int64_t *ms) {
    if (!s || !*s)
        return false;
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return false;
    double mul;
    if (!strcmp(end, "ms"))
        mul = 1;
    else if (!strcmp(end, "s"))
        mul = 1000;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        mul = 60000;
    else if (!strcmp(end, "h"))
        mul = 3600000;
    else if (!strcmp(end, "d"))
        mul = 86400000;
    else
        return false; /* a bare number is not a duration (it is a timestamp) */
    if (v * mul > 9.0e18)
        return false;
    *ms = (int64_t)(v * mul);
    return true;
}

bool cli_parse_older_than(const char *s, int64_t now_ms, int64_t *ms) {
    int64_t d;
    if (cli_parse_duration(s, &d)) {
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
