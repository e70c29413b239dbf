/*
 * cmd_orphans.c - `floe orphans`: delete files in the table location that nothing
 * references and that are older than a threshold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/maint.h"
#include "maint_args.h"
#include "table_args.h"

/* A threshold closer to now than this must be asked for with --force: files being written
 * right now are not referenced yet and only their age protects them. */
#define MIN_SAFE_AGE_MS (3600 * 1000LL)

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe orphans TABLE [--older-than T] [--location L] [--dry-run]\n"
            "                    [--prefix-mismatch error|ignore|delete] [--threads N]\n"
            "                    [--list] [--force] [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "Lists the table location and deletes the files no snapshot, manifest, metadata\n"
            "file, statistics file or version hint references and that are older than T.\n"
            "Files under hidden or underscore folders (_landing, _quarantine, .x) are never\n"
            "touched. Everything else in the location counts as the table's: floe creates a\n"
            "table only in a missing or empty folder; run --dry-run --list first on a table\n"
            "another tool created. A table whose property gc.enabled is false is refused\n"
            "(its files may be other tables' too).\n"
            "\n"
            "  --older-than T        an age (3d, 12h) or a time; default 3 days. Files still\n"
            "                        being written are protected only by their age: less than\n"
            "                        1 hour needs --force\n"
            "  --location L          list only L (inside the table location)\n"
            "  --dry-run             delete nothing; report the orphans\n"
            "  --prefix-mismatch M   a listed file whose path matches a reference but whose\n"
            "                        scheme or authority does not (s3, s3a and s3n count as\n"
            "                        one scheme): error (default: stop, delete nothing),\n"
            "                        ignore (keep such files), delete (delete them)\n"
            "  --threads N           parallel deletes (default 4; 0 = all cores; at most 32)\n"
            "  --list                print every orphan\n"
            "  --json                print the result as JSON\n");
}

typedef struct list_ctx {
    bool json;
    bool first;
} list_ctx;

static void on_file(void *vctx, floe_maint_file_kind kind, const char *uri) {
    (void)kind;
    list_ctx *c = vctx;
    if (c->json) {
        printf("%s", c->first ? "" : ",");
        cli_json_str(stdout, uri);
        c->first = false;
    } else {
        printf("%s\n", uri);
    }
}

int floe_cmd_orphans(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    floe_orphan_options o;
    floe_orphan_options_init(&o);
    bool list = false, force = false;
    int64_t now = floe_wall_ms();
    o.older_than_ms = now - 3 * FLOE_MAINT_DAY_MS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_table_opt(argc, argv, &i, &to);
        if (c < 0)
            return cli_usage("orphans", "%s needs a value", a);
        if (c > 0)
            continue;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = true;
        } else if (!strcmp(a, "--list")) {
            list = true;
        } else if (!strcmp(a, "--force")) {
            force = true;
        } else if (!strcmp(a, "--older-than") && val) {
            if (!cli_parse_older_than(val, now, &o.older_than_ms))
                return cli_usage("orphans", "--older-than %s: not an age or a time", val);
            i++;
        } else if (!strcmp(a, "--location") && val) {
            o.location = val;
            i++;
        } else if (!strcmp(a, "--prefix-mismatch") && val) {
            if (!strcmp(val, "error"))
                o.prefix_mismatch = FLOE_PREFIX_MISMATCH_ERROR;
            else if (!strcmp(val, "ignore"))
                o.prefix_mismatch = FLOE_PREFIX_MISMATCH_IGNORE;
            else if (!strcmp(val, "delete"))
                o.prefix_mismatch = FLOE_PREFIX_MISMATCH_DELETE;
            else
                return cli_usage("orphans", "--prefix-mismatch wants error, ignore or delete");
            i++;
        } else if (!strcmp(a, "--threads") && val) {
            if (!cli_parse_threads(val, 32, &o.threads))
                return cli_usage("orphans", "--threads wants 0..32 (0 = all cores)");
            i++;
        } else if (a[0] == '-') {
            return cli_usage("orphans", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            return cli_usage("orphans", "one table at a time");
        }
    }
    if (!table)
        return cli_usage("orphans", "which table?");
    if (!o.dry_run && !force && o.older_than_ms > now - MIN_SAFE_AGE_MS)
        return cli_usage("orphans",
                         "--older-than is less than 1 hour ago: files being written now would "
                         "look like orphans. Use --dry-run, or --force if no writer is running");
    o.now_ms = now;
    list_ctx lc = {to.json, true};
    if (list) {
        o.on_file = on_file;
        o.on_file_ctx = &lc;
    }
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    if (cli_open_table(table, &to, false, &cat, &t, &err) < 0)
        return cli_fail(&err);
    if (to.json) {
        printf("{\"table\":");
        cli_json_str(stdout, table);
        printf(",\"dry_run\":%s", o.dry_run ? "true" : "false");
        if (list)
            printf(",\"orphan_files\":[");
    }
    floe_orphan_result r;
    int rc = floe_maint_orphans(t, &o, &r, &err);
    if (to.json && list)
        printf("]");
    if (rc == 0) {
        if (to.json) {
            printf(",\"listed\":%lld,\"hidden\":%lld,\"too_recent\":%lld,\"referenced\":%lld,"
                   "\"conflicts\":%lld,\"%s\":%lld,\"orphan_bytes\":%lld,"
                   "\"delete_failures\":%lld,\"references\":%lld,\"kept_outside\":%lld}\n",
                   (long long)r.listed, (long long)r.hidden, (long long)r.too_recent,
                   (long long)r.referenced, (long long)r.conflicts,
                   o.dry_run ? "would_delete" : "deleted", (long long)r.orphans,
                   (long long)r.orphan_bytes, (long long)r.delete_failures,
                   (long long)r.references, (long long)r.kept_outside);
        } else {
            char b[32];
            printf("listed %lld files: %lld hidden, %lld too recent, %lld referenced\n",
                   (long long)r.listed, (long long)r.hidden, (long long)r.too_recent,
                   (long long)r.referenced);
            printf("%s %lld orphan file%s (%s)\n", o.dry_run ? "would delete" : "deleted",
                   (long long)r.orphans, r.orphans == 1 ? "" : "s",
                   cli_fmt_bytes((double)r.orphan_bytes, b, sizeof b));
            if (r.conflicts)
                printf("%lld file%s matched a reference by path only (%s)\n",
                       (long long)r.conflicts, r.conflicts == 1 ? "" : "s",
                       o.prefix_mismatch == FLOE_PREFIX_MISMATCH_DELETE ? "deleted" : "kept");
            if (r.delete_failures)
                printf("%lld delete%s failed\n", (long long)r.delete_failures,
                       r.delete_failures == 1 ? "" : "s");
        }
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    /* under --json the result object is open: the error closes it */
    return rc == 0 ? FLOE_EXIT_OK : to.json ? cli_fail_in_object(&err) : cli_fail(&err);
}
