/*
 * cmd_delete.c - `floe delete TABLE --where EXPR`: row-level deletes (deletion vectors on
 * format v3 tables, position delete files on v2), committed as a "delete" snapshot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/delete.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe delete TABLE --where EXPR [--branch B] [--dry-run] [--json]\n"
            "                   [--catalog NAME] [--config FILE]\n"
            "\n"
            "Deletes the live rows for which EXPR is true (GDPR erasure of one user's\n"
            "events, say) without rewriting data files. The data files that may hold such\n"
            "rows (partition and column statistics decide) are read with their deletes\n"
            "applied. On a format v3 table each affected data file gets one deletion\n"
            "vector (a Puffin file) holding its earlier deletes too, and its earlier vector\n"
            "is removed in the same commit; on a v2 table the rows go to position delete\n"
            "files, one per partition. A data file none of whose rows is left is removed\n"
            "instead. Format v1 tables are refused (floe table upgrade NS.NAME\n"
            "--format-version 2). Commits a \"delete\" snapshot; when a concurrent commit\n"
            "changes the files the delete planned, it plans again. `floe rewrite` later\n"
            "drops the deleted rows from the files for good.\n"
            "\n"
            "TABLE is NS.NAME in the configured catalog, or a table folder no catalog\n"
            "manages.\n"
            "\n"
            "  --where EXPR   the rows to delete: = != < <= > >= IN, IS [NOT] NULL,\n"
            "                 LIKE 'prefix%%', AND, OR, NOT over the table's columns (as in\n"
            "                 floe scan); required\n"
            "  --branch B     delete on branch B (default main)\n"
            "  --dry-run      count the rows and files, write nothing\n"
            "  --json         print the result as JSON\n");
}

int floe_cmd_delete(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    floe_delete_options o = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_table_opt(argc, argv, &i, &to);
        if (c < 0)
            return cli_usage("delete", "%s needs a value", a);
        if (c > 0)
            continue;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = true;
        } else if (!strcmp(a, "--where") || !strcmp(a, "--branch")) {
            if (!val)
                return cli_usage("delete", "%s needs a value", a);
            const char **slot = !strcmp(a, "--where") ? &o.where : &o.branch;
            if (*slot) /* a second filter would silently replace the first */
                return cli_usage("delete", "%s given twice (combine filters with AND)", a);
            *slot = val;
            i++;
        } else if (a[0] == '-') {
            return cli_usage("delete", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            return cli_usage("delete", "one table at a time");
        }
    }
    if (!table)
        return cli_usage("delete", "which table?");
    if (!o.where || !*o.where)
        return cli_usage("delete", "which rows? --where EXPR is required (a delete of "
                                   "every row is a table drop or truncate, not this)");
    if (o.branch && !*o.branch)
        return cli_usage("delete", "--branch wants a name");
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
    floe_scan_options so = {.where = o.where, .ref = o.branch};
    int bad = cli_check_where("delete", t, &so);
    if (bad >= 0) {
        floe_table_close(t);
        floe_catalog_close(cat);
        return bad;
    }
    floe_delete_result r;
    int rc = floe_table_delete_rows(t, &o, &r, &err);
    if (rc == 0) {
        if (to.json) {
            printf("{\"table\":");
            cli_json_str(stdout, table);
            printf(",\"dry_run\":%s,\"noop\":%s,\"snapshot_id\":%lld,\"format_version\":%d,"
                   "\"rows_deleted\":%lld,\"files_scanned\":%lld,\"data_files_affected\":%lld,"
                   "\"data_files_removed\":%lld,\"delete_files_added\":%lld,"
                   "\"delete_files_removed\":%lld,\"plans\":%d,\"attempts\":%d}\n",
                   o.dry_run ? "true" : "false", r.noop ? "true" : "false",
                   (long long)r.snapshot_id, r.format_version, (long long)r.rows_deleted,
                   (long long)r.files_scanned, (long long)r.data_files_affected,
                   (long long)r.data_files_removed, (long long)r.delete_files_added,
                   (long long)r.delete_files_removed, r.plans, r.attempts);
        } else if (r.noop) {
            printf("no live row matches: nothing deleted (%lld file%s read)\n",
                   (long long)r.files_scanned, r.files_scanned == 1 ? "" : "s");
        } else {
            printf("%s %lld row%s in %lld data file%s (%lld read)", o.dry_run ? "would delete"
                                                                              : "deleted",
                   (long long)r.rows_deleted, r.rows_deleted == 1 ? "" : "s",
                   (long long)r.data_files_affected, r.data_files_affected == 1 ? "" : "s",
                   (long long)r.files_scanned);
            if (r.data_files_removed)
                printf(", %lld file%s %s whole", (long long)r.data_files_removed,
                       r.data_files_removed == 1 ? "" : "s",
                       o.dry_run ? "would go" : "removed");
            if (!o.dry_run)
                printf(": %lld %s added, %lld replaced, snapshot %lld",
                       (long long)r.delete_files_added,
                       r.format_version >= 3 ? "deletion vector(s)" : "position delete file(s)",
                       (long long)r.delete_files_removed, (long long)r.snapshot_id);
            printf("\n");
        }
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    return rc < 0 ? cli_fail(&err) : FLOE_EXIT_OK;
}
