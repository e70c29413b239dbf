/*
 * cmd_delete.c - `floe delete TABLE --where EXPR`: row-level deletes (deletion vectors on
 * format v3 tables, position delete files on v2), committed as a "delete" snapshot; and
 * `floe rewrite-deletes TABLE`: equality deletes and position delete files resolved into
 * deletion vectors (format v3), committed as a "replace" snapshot. Both take the same
 * options (floe/delete.h).
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

/* What both commands take. */
typedef struct delete_args {
    cli_table_opts to;
    const char *table, *where, *branch;
    bool dry_run;
} delete_args;

/* Parse argv into da; opens the table (t, cat) when the arguments are right. Returns -1
 * to go on, else the exit code (help, usage or open error). */
static int parse_and_open(const char *cmd, void (*help)(FILE *), bool where_required,
                          int argc, char **argv, delete_args *da, floe_catalog **cat,
                          floe_table **t) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_table_opt(argc, argv, &i, &da->to);
        if (c < 0)
            return cli_usage(cmd, "%s needs a value", a);
        if (c > 0)
            continue;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--dry-run")) {
            da->dry_run = true;
        } else if (!strcmp(a, "--where") || !strcmp(a, "--branch")) {
            if (!val)
                return cli_usage(cmd, "%s needs a value", a);
            const char **slot = !strcmp(a, "--where") ? &da->where : &da->branch;
            if (*slot) /* a second filter would silently replace the first */
                return cli_usage(cmd, "%s given twice (combine filters with AND)", a);
            *slot = val;
            i++;
        } else if (a[0] == '-') {
            return cli_usage(cmd, "unknown option %s", a);
        } else if (!da->table) {
            da->table = a;
        } else {
            return cli_usage(cmd, "one table at a time");
        }
    }
    if (!da->table)
        return cli_usage(cmd, "which table?");
    if (where_required && (!da->where || !*da->where))
        return cli_usage(cmd, "which rows? --where EXPR is required (a delete of "
                              "every row is a table drop or truncate, not this)");
    if (da->where && !*da->where)
        return cli_usage(cmd, "--where wants an expression");
    if (da->branch && !*da->branch)
        return cli_usage(cmd, "--branch wants a name");
    floe_error err;
    floe_error_clear(&err);
    if (cli_open_table(da->table, &da->to, false, cat, t, &err) < 0 ||
        (!da->dry_run && cli_refuse_managed_folder(*t, &da->to, &err) < 0)) {
        floe_table_close(*t);
        floe_catalog_close(*cat);
        return cli_fail(&err);
    }
    if (da->where) {
        floe_scan_options so = {.where = da->where, .ref = da->branch};
        int bad = cli_check_where(cmd, *t, &so);
        if (bad >= 0) {
            floe_table_close(*t);
            floe_catalog_close(*cat);
            return bad;
        }
    }
    return -1;
}

int floe_cmd_delete(int argc, char **argv) {
    delete_args da = {0};
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    int ex = parse_and_open("delete", usage, true, argc, argv, &da, &cat, &t);
    if (ex >= 0)
        return ex;
    cli_table_opts to = da.to;
    const char *table = da.table;
    floe_delete_options o = {.where = da.where, .branch = da.branch, .dry_run = da.dry_run};
    floe_error err;
    floe_error_clear(&err);
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

static void usage_rewrite(FILE *out) {
    fprintf(out,
            "usage: floe rewrite-deletes TABLE [--where EXPR] [--branch B] [--dry-run] [--json]\n"
            "                            [--catalog NAME] [--config FILE]\n"
            "\n"
            "Resolves the table's equality deletes (an upsert stream writes them by the\n"
            "thousand) and position delete files into deletion vectors, without rewriting\n"
            "data files: every data file they apply to is read with its deletes applied and\n"
            "gets one vector holding every row that is no longer live (its earlier vector\n"
            "too, which goes); a data file with no live row left is removed. An equality or\n"
            "position delete file is removed in the same commit once every data file it\n"
            "applies to has its vector; a delete file that applies to no live data file at\n"
            "all (dangling: say an equality delete older than every data file after a\n"
            "compaction) is removed too. Scans return the same rows before and after; they\n"
            "just stop matching equality keys. Commits a \"replace\" snapshot validated\n"
            "against concurrent writers: appends and new equality deletes committed meanwhile\n"
            "are kept as they are; a commit that removes a planned file, adds deletes to one\n"
            "or adds data files with an older sequence number makes it plan again.\n"
            "Deletion vectors need format v3: a v2 table is refused (floe table upgrade\n"
            "NS.NAME --format-version 3 keeps its position delete files readable; this then\n"
            "rewrites them into vectors).\n"
            "\n"
            "TABLE is NS.NAME in the configured catalog, or a table folder no catalog\n"
            "manages.\n"
            "\n"
            "  --where EXPR   only data files that may hold rows EXPR matches (partition and\n"
            "                 column statistics, floe scan's language); a delete file that\n"
            "                 also applies to a file left out is kept\n"
            "  --branch B     on branch B (default main)\n"
            "  --dry-run      read and count, write nothing\n"
            "  --json         print the result as JSON\n");
}

int floe_cmd_rewrite_deletes(int argc, char **argv) {
    delete_args da = {0};
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    int ex = parse_and_open("rewrite-deletes", usage_rewrite, false, argc, argv, &da, &cat, &t);
    if (ex >= 0)
        return ex;
    floe_rewrite_deletes_options o = {.where = da.where, .branch = da.branch,
                                      .dry_run = da.dry_run};
    floe_error err;
    floe_error_clear(&err);
    floe_rewrite_deletes_result r;
    int rc = floe_table_rewrite_deletes(t, &o, &r, &err);
    if (rc == 0) {
        if (da.to.json) {
            printf("{\"table\":");
            cli_json_str(stdout, da.table);
            printf(",\"dry_run\":%s,\"noop\":%s,\"snapshot_id\":%lld,\"files_scanned\":%lld,"
                   "\"data_files_resolved\":%lld,\"data_files_removed\":%lld,"
                   "\"rows_resolved\":%lld,\"dvs_added\":%lld,\"dvs_removed\":%lld,"
                   "\"position_delete_files_removed\":%lld,"
                   "\"equality_delete_files_removed\":%lld,\"plans\":%d,\"attempts\":%d}\n",
                   da.dry_run ? "true" : "false", r.noop ? "true" : "false",
                   (long long)r.snapshot_id, (long long)r.files_scanned,
                   (long long)r.data_files_resolved, (long long)r.data_files_removed,
                   (long long)r.rows_resolved, (long long)r.dvs_added, (long long)r.dvs_removed,
                   (long long)r.position_delete_files_removed,
                   (long long)r.equality_delete_files_removed, r.plans, r.attempts);
        } else if (r.noop) {
            printf("no equality or position delete files to resolve: nothing done\n");
        } else {
            printf("%s the deletes of %lld data file%s (%lld row%s deleted by equality)",
                   da.dry_run ? "would resolve" : "resolved", (long long)r.data_files_resolved,
                   r.data_files_resolved == 1 ? "" : "s", (long long)r.rows_resolved,
                   r.rows_resolved == 1 ? "" : "s");
            if (r.data_files_removed)
                printf(", %lld file%s with no live row %s", (long long)r.data_files_removed,
                       r.data_files_removed == 1 ? "" : "s",
                       da.dry_run ? "would go" : "removed");
            printf(": %lld deletion vector(s) %s, %lld replaced; %lld equality and %lld "
                   "position delete file(s) %s",
                   (long long)r.dvs_added, da.dry_run ? "to write" : "written",
                   (long long)r.dvs_removed, (long long)r.equality_delete_files_removed,
                   (long long)r.position_delete_files_removed,
                   da.dry_run ? "would go" : "removed");
            if (!da.dry_run)
                printf(", snapshot %lld", (long long)r.snapshot_id);
            printf("\n");
        }
    }
    floe_table_close(t);
    floe_catalog_close(cat);
    return rc < 0 ? cli_fail(&err) : FLOE_EXIT_OK;
}
