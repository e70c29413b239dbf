/*
 * cmd_append.c - `floe append TABLE FILES...`: convert NDJSON files (or take Parquet files
 * as they are) and commit them to the table as one append snapshot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/append.h"
#include "floe/json.h"
#include "floe/rewrite.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe append NS.NAME FILE... [--format ndjson|parquet] [--threads N]\n"
            "                   [--strict] [--quarantine FILE] [--summary K=V]...\n"
            "                   [--once K=V] [--branch NAME] [--no-merge] [--split] [--copy]\n"
            "                   [--skip-page-crc] [--json] [--quiet]\n"
            "                   [--catalog NAME] [--config FILE]\n"
            "\n"
            "NDJSON files (plain, gzip or zstd; '-' = standard input) are converted with the\n"
            "table's schema, partition spec and write.* properties into its data folder;\n"
            "rejected records go to the quarantine, which the result names. When every\n"
            "record is rejected nothing is committed and the append fails (exit 1) naming\n"
            "the quarantine; input without records commits nothing (exit 0). Parquet files\n"
            "(.parquet, or --format parquet) are checked against the table schema and added\n"
            "where they are, with exact bounds (read from the values where the statistics\n"
            "cannot be trusted); a file must hold the rows of one partition of the table's\n"
            "spec.\n"
            "Without --copy the Parquet files themselves become the table's files (read\n"
            "and rewritten as its own); floe deletes only files inside the table's own\n"
            "folders, so once a rewrite replaced them an expiry keeps them where they are\n"
            "and says so.\n"
            "A file the table already has live (checked again in each commit attempt:\n"
            "of two appends of the same file at once, one commits), or one in another\n"
            "table's location (append a copy), fails the append.\n"
            "Everything lands in one snapshot.\n"
            "\n"
            "  --threads N     threads converting NDJSON (default 1; 0 = all cores; at most\n"
            "                  256)\n"
            "  --quarantine FILE  where rejected records go (default\n"
            "                  <warehouse>/_quarantine/NS.NAME/<uuid>.ndjson)\n"
            "  --strict        a rejected record fails the append instead\n"
            "  --summary K=V   extra snapshot summary entry\n"
            "  --once K=V      exactly once: commit nothing when a snapshot added since the\n"
            "                  table state this run started from already carries K=V\n"
            "  --branch NAME   commit to branch NAME (made with floe ref create) instead of\n"
            "                  main, for write-audit-publish: readers of the table see\n"
            "                  nothing until main is moved (floe ref fast-forward NS.NAME\n"
            "                  main NAME, or floe snapshots cherrypick)\n"
            "  --no-merge      do not merge manifests in this commit\n"
            "  --split         rewrite a Parquet file whose rows span several partitions\n"
            "                  into one file per partition (in the table's data folder)\n"
            "                  instead of refusing it\n"
            "  --copy          copy Parquet files into the table's data folder and add the\n"
            "                  copies: the files given stay yours, untouched by maintenance.\n"
            "                  A copy is named after the SHA-256 of its bytes: the same\n"
            "                  bytes appended again (any file name) are refused, as the same\n"
            "                  file is without --copy; a copy left by a run that failed\n"
            "                  before committing is kept and reused\n"
            "  --skip-page-crc add Parquet files without checking their page CRCs (by\n"
            "                  default each file is read once and one whose CRC does not\n"
            "                  hold is refused, naming the file, column and page offset)\n"
            "  --quiet, -q     no progress line (drawn on standard error only when it is a\n"
            "                  terminal: bytes read of the total, rate, time left)\n");
}

static bool split_kv(char *s, floe_kv *out) {
    char *eq = strchr(s, '=');
    if (!eq || eq == s)
        return false;
    *eq = 0;
    out->key = s;
    out->value = eq + 1;
    return true;
}

int floe_cmd_append(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    floe_kv *summary = calloc((size_t)argc + 1, sizeof *summary);
    size_t ninputs = 0, nsummary = 0;
    bool quiet = false;
    cli_progress ui;
    memset(&ui, 0, sizeof ui);
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    floe_error err;
    floe_error_clear(&err);
    int code = FLOE_EXIT_OK;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_table_append_result res;
    memset(&res, 0, sizeof res);
    if (!inputs || !summary) {
        floe_error_set(&err, FLOE_ENOMEM, "out of memory");
        code = cli_fail(&err);
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0) {
            code = cli_usage("append", "%s needs a value", a);
            goto out;
        }
        if (r > 0)
            continue;
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            goto out;
        } else if (!strcmp(a, "--format") && has_val) {
            o.format = argv[++i];
            if (strcmp(o.format, "ndjson") && strcmp(o.format, "parquet")) {
                code = cli_usage("append", "--format is ndjson or parquet");
                goto out;
            }
        } else if (!strcmp(a, "--threads") && has_val) {
            if (!cli_parse_threads(argv[++i], 256, &o.threads)) {
                code = cli_usage("append", "--threads wants a number up to 256 (0 = all cores)");
                goto out;
            }
        } else if (!strcmp(a, "--strict")) {
            o.strict = true;
        } else if (!strcmp(a, "--quarantine") && has_val) {
            o.quarantine_uri = argv[++i];
        } else if (!strcmp(a, "--summary") && has_val) {
            if (!split_kv(argv[++i], &summary[nsummary])) {
                code = cli_usage("append", "--summary wants K=V");
                goto out;
            }
            nsummary++;
        } else if (!strcmp(a, "--once") && has_val) {
            floe_kv kv;
            if (!split_kv(argv[++i], &kv)) {
                code = cli_usage("append", "--once wants K=V");
                goto out;
            }
            o.once_key = kv.key;
            o.once_value = kv.value;
        } else if (!strcmp(a, "--branch") && has_val) {
            o.branch = argv[++i];
        } else if (!strcmp(a, "--no-merge")) {
            o.manifest_merge = 0;
        } else if (!strcmp(a, "--split")) {
            o.split = floe_rewrite_split_file;
        } else if (!strcmp(a, "--copy")) {
            o.copy = true;
        } else if (!strcmp(a, "--skip-page-crc")) {
            o.skip_page_crc = true;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = true;
        } else if (!strcmp(a, "--no-fsync")) {
            o.fsync = false;
        } else if (a[0] == '-' && a[1]) {
            code = cli_usage("append", "unknown option %s", a);
            goto out;
        } else if (!table) {
            table = a;
        } else {
            inputs[ninputs++] = a;
        }
    }
    if (!table || ninputs == 0) {
        code = cli_usage("append", "TABLE and at least one FILE are needed");
        goto out;
    }
    o.summary = summary;
    o.nsummary = nsummary;
    cli_progress_init(&ui, "floe append", cli_inputs_size(inputs, ninputs), quiet || to.json);
    o.progress = cli_progress_bytes;
    o.progress_ctx = &ui;
    int rc = cli_open_table(table, &to, true, &cat, &t, &err);
    if (rc == 0)
        rc = floe_table_append_files(t, inputs, ninputs, &o, &res, &err);
    cli_progress_end(&ui);
    if (rc < 0) {
        code = cli_fail(&err);
        if (err.code == FLOE_EUNKNOWN_STATE)
            fprintf(stderr, "floe: the files written were kept; check the table before "
                            "appending again\n");
        goto out;
    }
    if (to.json) {
        printf("{\"noop\":%s,\"snapshot_id\":%" PRId64 ",\"sequence_number\":%" PRId64
               ",\"attempts\":%d,\"added_files\":%" PRId64 ",\"added_records\":%" PRId64
               ",\"added_bytes\":%" PRId64 ",\"manifests\":%" PRId64
               ",\"manifests_merged\":%" PRId64 ",\"parquet_files\":%" PRId64
               ",\"parquet_files_copied\":%" PRId64
               ",\"parquet_files_split\":%" PRId64 ",\"split_files\":%" PRId64
               ",\"records_in\":%" PRId64 ",\"rejected\":%" PRId64 ",\"quarantine\":",
               res.commit.noop ? "true" : "false", res.commit.snapshot_id,
               res.commit.sequence_number, res.commit.attempts, res.commit.added_files,
               res.commit.added_records, res.commit.added_bytes, res.commit.manifests,
               res.commit.manifests_merged, res.parquet_files, res.parquet_files_copied,
               res.parquet_files_split,
               res.split_files, res.convert.records_in,
               res.convert.rejected);
        if (res.quarantine_uri)
            cli_json_str(stdout, res.quarantine_uri);
        else
            fputs("null", stdout);
        printf(",\"branch\":");
        cli_json_str(stdout, o.branch ? o.branch : "main");
        printf(",\"metadata_location\":");
        cli_json_str(stdout, res.commit.metadata_location ? res.commit.metadata_location : "");
        printf("}\n");
    } else if (res.empty) {
        printf("nothing to do: the input holds no records; nothing committed\n");
    } else if (res.commit.noop) {
        printf("nothing to do: a snapshot already carries %s=%s\n", o.once_key, o.once_value);
    } else {
        printf("snapshot %" PRId64 "%s", res.commit.snapshot_id, o.branch ? " on branch " : "");
        cli_print_text(stdout, o.branch ? o.branch : "");
        printf(" (sequence %" PRId64 "): %" PRId64 " files, %" PRId64
               " records, %" PRId64 " bytes; %" PRId64 " manifests (%" PRId64 " merged)\n",
               res.commit.sequence_number, res.commit.added_files,
               res.commit.added_records, res.commit.added_bytes, res.commit.manifests,
               res.commit.manifests_merged);
        if (res.parquet_files_copied)
            printf("%" PRId64 " Parquet file(s) copied into the table's data folder\n",
                   res.parquet_files_copied);
        if (res.parquet_files_split)
            printf("%" PRId64 " Parquet file(s) spanning partitions rewritten as %" PRId64
                   " file(s), one per partition\n", res.parquet_files_split, res.split_files);
        if (res.convert.rejected)
            printf("%" PRId64 " of %" PRId64 " records rejected: they are in %s\n",
                   res.convert.rejected, res.convert.records_in, res.quarantine_uri);
    }
out:
    floe_table_append_result_reset(&res);
    floe_table_close(t);
    floe_catalog_close(cat);
    free(inputs);
    free(summary);
    return code;
}
