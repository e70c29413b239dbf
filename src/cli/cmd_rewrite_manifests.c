/*
 * cmd_rewrite_manifests.c - `floe rewrite-manifests`: regroup the current snapshot's data
 * manifests by partition into target-size manifests (a "replace" snapshot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/maint.h"
#include "maint_args.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe rewrite-manifests TABLE [--target-size 8MB] [--spec-id N] [--dry-run]\n"
            "                              [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "Sorts the live entries of the current snapshot's data manifests of one partition\n"
            "spec by partition and writes them into manifests of about the target size, so\n"
            "that scan planning skips whole manifests. Entries keep their snapshot ids and\n"
            "sequence numbers; delete manifests and other specs' manifests are kept. Commits\n"
            "a \"replace\" snapshot (summary: manifests-created, manifests-replaced,\n"
            "manifests-kept, entries-processed).\n"
            "\n"
            "  --target-size S   manifest size (default: commit.manifest.target-size-bytes,\n"
            "                    else 8MB)\n"
            "  --spec-id N       the partition spec whose manifests to rewrite (default: the\n"
            "                    table's default spec)\n"
            "  --dry-run         plan only: how many manifests would be written\n"
            "  --json            print the result as JSON\n");
}

int floe_cmd_rewrite_manifests(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    floe_rewrite_manifests_options o;
    floe_rewrite_manifests_options_init(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_table_opt(argc, argv, &i, &to);
        if (c < 0)
            return cli_usage("rewrite-manifests", "%s needs a value", a);
        if (c > 0)
            continue;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = true;
        } else if (!strcmp(a, "--target-size") && val) {
            if (!floe_parse_size(val, &o.target_size_bytes) || o.target_size_bytes < 1)
                return cli_usage("rewrite-manifests", "--target-size %s: not a size", val);
            i++;
        } else if (!strcmp(a, "--spec-id") && val) {
            int64_t n;
            if (!cli_parse_int(val, &n) || n > INT32_MAX)
                return cli_usage("rewrite-manifests", "--spec-id wants a number");
            o.spec_id = (int32_t)n;
            i++;
        } else if (a[0] == '-') {
            return cli_usage("rewrite-manifests", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            return cli_usage("rewrite-manifests", "one table at a time");
        }
    }
    if (!table)
        return cli_usage("rewrite-manifests", "which table?");
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    if (cli_open_table(table, &to, false, &cat, &t, &err) < 0 ||
        (!o.dry_run && cli_refuse_managed_folder(t, &to, &err) < 0)) {
        floe_table_close(t);
        floe_catalog_close(cat);
        return cli_fail(&err);
    }
    floe_rewrite_manifests_result r;
    int rc = floe_maint_rewrite_manifests(t, &o, &r, &err);
    if (rc == 0) {
        if (to.json) {
            printf("{\"table\":");
            cli_json_str(stdout, table);
            printf(",\"dry_run\":%s,\"noop\":%s,\"snapshot_id\":%lld,\"manifests_before\":%lld,"
                   "\"manifests_after\":%lld,\"manifests_created\":%lld,"
                   "\"manifests_replaced\":%lld,\"manifests_kept\":%lld,"
                   "\"entries_processed\":%lld,\"attempts\":%d,\"recomputed\":%d}\n",
                   o.dry_run ? "true" : "false", r.noop ? "true" : "false",
                   (long long)r.snapshot_id, (long long)r.manifests_before,
                   (long long)r.manifests_after, (long long)r.manifests_created,
                   (long long)r.manifests_replaced, (long long)r.manifests_kept,
                   (long long)r.entries_processed, r.attempts, r.recomputed);
        } else if (r.noop) {
            printf("nothing to rewrite\n");
        } else {
            printf("%s %lld manifest%s with %lld entries into %lld (%lld kept): %lld -> %lld "
                   "manifests",
                   o.dry_run ? "would rewrite" : "rewrote", (long long)r.manifests_replaced,
                   r.manifests_replaced == 1 ? "" : "s", (long long)r.entries_processed,
                   (long long)r.manifests_created, (long long)r.manifests_kept,
                   (long long)r.manifests_before, (long long)r.manifests_after);
            if (!o.dry_run)
                printf(", snapshot %lld", (long long)r.snapshot_id);
            printf("\n");
        }
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    return rc < 0 ? cli_fail(&err) : FLOE_EXIT_OK;
}
