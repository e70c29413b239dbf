/*
 * maint_args.h - what the maintenance commands (expire, orphans, rewrite-manifests,
 * maintain) share: times given as an age or a timestamp, counts per file kind.
 */
#ifndef FLOE_CLI_MAINT_ARGS_H
#define FLOE_CLI_MAINT_ARGS_H

#include <stdio.h>

#include "cli.h"
#include "floe/maint.h"

/* --older-than: an age ("5d": now minus it) or a point in time (ISO timestamp, date, or
 * milliseconds since the epoch). */
bool cli_parse_older_than(const char *s, int64_t now_ms, int64_t *ms);
/* Print "kind: n" lines (text) or "\"kind\":n" members (json, comma-separated, no braces)
 * for the non-zero kinds. */
void cli_print_kind_counts(FILE *f, const int64_t counts[FLOE_MAINT_NKINDS], bool json);

#endif
