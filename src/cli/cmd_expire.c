/*
 * cmd_expire.c - `floe expire`: expire snapshots and delete the files only they reached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/maint.h"
#include "maint_args.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe expire TABLE [--older-than T] [--retain-last N]\n"
            "                   [--snapshot-ids ID[,ID...]] [--dry-run] [--keep-files]\n"
            "                   [--threads N] [--list] [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "Removes snapshots per Iceberg's retention rules, commits that, then deletes the\n"
            "manifest lists, manifests, data and delete files and statistics files that only\n"
            "the removed snapshots reached (and old metadata files when\n"
            "write.metadata.delete-after-commit.enabled is set).\n"
            "\n"
            "  TABLE              NS.NAME (a folder or metadata file only with --dry-run)\n"
            "  --older-than T     expire snapshots older than T: an age (5d, 12h) or a time\n"
            "                     (2026-10-01T00:00:00Z, epoch ms); default: the table's\n"
            "                     history.expire.max-snapshot-age-ms, else 5 days\n"
            "  --retain-last N    keep at least N snapshots of each branch's history; default:\n"
            "                     history.expire.min-snapshots-to-keep, else 1\n"
            "  --snapshot-ids L   also expire these snapshots (refused when a branch or tag\n"
            "                     points at one, or a branch's retention keeps it)\n"
            "  --dry-run          change nothing; report what would be expired and deleted\n"
            "  --keep-files       commit the expiry but delete no files\n"
            "  --threads N        parallel deletes (default 4; 0 = all cores; at most 32)\n"
            "  --list             print every file deleted (or, with --dry-run, deletable)\n"
            "  --json             print the result as JSON\n"
            "\n"
            "Refs: branches and tags older than their max-ref-age-ms (else\n"
            "history.expire.max-ref-age-ms) are removed; main never is. A branch's own\n"
            "max-snapshot-age-ms and min-snapshots-to-keep override the defaults.\n"
            "\n"
            "A table whose property gc.enabled is false (its files may be other tables' too)\n"
            "is refused, also with --dry-run or --keep-files, as Iceberg's engines refuse it.\n");
}

typedef struct list_ctx {
    bool json;
    bool first;
} list_ctx;

static void on_file(void *vctx, floe_maint_file_kind kind, const char *uri) {
    list_ctx *c = vctx;
    if (c->json) {
        printf("%s{\"kind\":\"%s\",\"path\":", c->first ? "" : ",",
               floe_maint_file_kind_name(kind));
        cli_json_str(stdout, uri);
        putchar('}');
        c->first = false;
    } else {
        printf("%s\t%s\n", floe_maint_file_kind_name(kind), uri);
    }
}

static bool parse_ids(const char *s, int64_t **ids, size_t *n) {
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    int64_t *v = realloc(*ids, (*n + cap) * sizeof *v);
    if (!v)
        return false;
    *ids = v;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',') || errno == ERANGE)
            return false;
        v[(*n)++] = x;
        p = *end ? end + 1 : end;
    }
    return true;
}

int floe_cmd_expire(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    floe_expire_options o;
    floe_expire_options_init(&o);
    bool list = false;
    int64_t *ids = NULL;
    size_t nids = 0;
    int64_t now = floe_wall_ms();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_table_opt(argc, argv, &i, &to);
        if (c < 0) {
            free(ids);
            return cli_usage("expire", "%s needs a value", a);
        }
        if (c > 0)
            continue;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(ids);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = true;
        } else if (!strcmp(a, "--keep-files")) {
            o.keep_files = true;
        } else if (!strcmp(a, "--list")) {
            list = true;
        } else if (!strcmp(a, "--older-than") && val) {
            if (!cli_parse_older_than(val, now, &o.older_than_ms)) {
                free(ids);
                return cli_usage("expire", "--older-than %s: not an age or a time", val);
            }
            i++;
        } else if (!strcmp(a, "--retain-last") && val) {
            if (!cli_parse_int(val, &o.retain_last) || o.retain_last < 1) {
                free(ids);
                return cli_usage("expire", "--retain-last wants a number >= 1");
            }
            i++;
        } else if (!strcmp(a, "--snapshot-ids") && val) {
            if (!parse_ids(val, &ids, &nids)) {
                free(ids);
                return cli_usage("expire", "--snapshot-ids %s: not a list of ids", val);
            }
            i++;
        } else if (!strcmp(a, "--threads") && val) {
            if (!cli_parse_threads(val, 32, &o.threads)) {
                free(ids);
                return cli_usage("expire", "--threads wants 0..32 (0 = all cores)");
            }
            i++;
        } else if (a[0] == '-') {
            free(ids);
            return cli_usage("expire", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            free(ids);
            return cli_usage("expire", "one table at a time");
        }
    }
    if (!table) {
        free(ids);
        return cli_usage("expire", "which table?");
    }
    o.snapshot_ids = ids;
    o.n_snapshot_ids = nids;
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
    /* a table folder is expired as a Hadoop table commits, unless a catalog manages it */
    int rc = cli_open_table(table, &to, false, &cat, &t, &err);
    if (rc == 0 && !o.dry_run)
        rc = cli_refuse_managed_folder(t, &to, &err);
    if (rc < 0) {
        floe_table_close(t);
        floe_catalog_close(cat);
        free(ids);
        return cli_fail(&err);
    }
    if (to.json) {
        printf("{\"table\":");
        cli_json_str(stdout, table);
        printf(",\"dry_run\":%s", o.dry_run ? "true" : "false");
        if (list)
            printf(",\"files\":[");
    }
    floe_expire_result r;
    rc = floe_maint_expire(t, &o, &r, &err);
    if (to.json && list)
        printf("]");
    if (rc == 0) {
        if (to.json) {
            printf(",\"snapshots_expired\":%lld,\"snapshots_retained\":%lld,"
                   "\"refs_removed\":%lld,\"attempts\":%d,\"delete_failures\":%lld,"
                   "\"unreadable\":%lld,\"kept_outside\":%lld,\"expired_ids\":[",
                   (long long)r.snapshots_expired, (long long)r.snapshots_retained,
                   (long long)r.refs_removed, r.attempts, (long long)r.delete_failures,
                   (long long)r.unreadable, (long long)r.kept_outside);
            for (size_t i = 0; i < r.n_expired_ids; i++)
                printf("%s%lld", i ? "," : "", (long long)r.expired_ids[i]);
            printf("],\"%s\":{", o.dry_run ? "would_delete" : "deleted");
            cli_print_kind_counts(stdout, r.files, true);
            printf("}}\n");
        } else {
            printf("%s %lld snapshot%s (%lld retained, %lld ref%s removed)\n",
                   o.dry_run ? "would expire" : "expired", (long long)r.snapshots_expired,
                   r.snapshots_expired == 1 ? "" : "s", (long long)r.snapshots_retained,
                   (long long)r.refs_removed, r.refs_removed == 1 ? "" : "s");
            int64_t total = 0;
            for (int k = 0; k < FLOE_MAINT_NKINDS; k++)
                total += r.files[k];
            printf("%s %lld file%s%s\n", o.dry_run ? "would delete" : "deleted",
                   (long long)total, total == 1 ? "" : "s", total ? ":" : "");
            cli_print_kind_counts(stdout, r.files, false);
            if (r.delete_failures)
                printf("%lld delete%s failed (left for orphan removal)\n",
                       (long long)r.delete_failures, r.delete_failures == 1 ? "" : "s");
            if (r.kept_outside)
                printf("kept %lld file%s outside the table's location (not its to delete)\n",
                       (long long)r.kept_outside, r.kept_outside == 1 ? "" : "s");
        }
        floe_expire_result_reset(&r);
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    free(ids);
    /* under --json the result object is open: the error closes it */
    return rc == 0 ? FLOE_EXIT_OK : to.json ? cli_fail_in_object(&err) : cli_fail(&err);
}
