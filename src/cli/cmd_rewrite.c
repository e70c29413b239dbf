/*
 * cmd_rewrite.c - `floe rewrite TABLE`: bin-pack (or sort) compaction of a table's data
 * files with Iceberg's rewrite_data_files options, safe alongside live writers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/rewrite.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe rewrite TABLE [--option KEY=VALUE]... [--where EXPR]\n"
            "                    [--strategy binpack|sort [--sort-order ORDER]]\n"
            "                    [--threads N] [--dry-run] [--json] [--quiet]\n"
            "                    [--catalog NAME] [--config FILE] [--relocate FROM=TO]\n"
            "\n"
            "Rewrites the table's small (and oversized) data files into files of the target\n"
            "size, partition by partition, with position and equality deletes applied, and\n"
            "commits a 'replace' snapshot validated against the snapshot it started from.\n"
            "TABLE is NS.NAME (through the catalog) or a table folder (committed Hadoop-style:\n"
            "v<N+1>.metadata.json next to the current file).\n"
            "\n"
            "Options (Iceberg's names and defaults):\n"
            "  target-file-size-bytes      table's write.target-file-size-bytes, else 512 MB\n"
            "  min-file-size-bytes         75%% of target     max-file-size-bytes  180%% of target\n"
            "  min-input-files             5                 rewrite-all          false\n"
            "  max-file-group-size-bytes   100 GB            max-files-to-rewrite (no limit)\n"
            "  delete-file-threshold       2147483647        delete-ratio-threshold 0.3\n"
            "  partial-progress.enabled    false             partial-progress.max-commits 10\n"
            "  partial-progress.max-failed-commits (max-commits)\n"
            "  max-concurrent-file-group-rewrites 5          rewrite-job-order    none\n"
            "      (none, bytes-asc, bytes-desc, files-asc, files-desc)\n"
            "  use-starting-sequence-number true             remove-dangling-deletes false\n"
            "  output-spec-id              the default spec; an older spec whose source\n"
            "      column was dropped since takes its own files (per partition, values\n"
            "      kept) and leaves other specs' files as they are\n"
            "  format-version              the table's (a v1 table stays v1: v1 manifests\n"
            "      and metadata); 2 upgrades a v1 table with the commit\n"
            "  planner                     bin-pack (Iceberg's rules, the default) or\n"
            "      generational (floe): files under min-file-size-bytes in size tiers, a tier\n"
            "      merged once it holds tier-fanout files, so each byte is rewritten about\n"
            "      log(min-file-size / commit size) times (docs/MAINTENANCE.md)\n"
            "  tier-fanout 5   max-files-per-partition 10   cold-partition-age-ms 3600000\n"
            "  threads                     worker threads (floe), 0 = all cores, at most 1024\n"
            "  fast-copy                   auto (floe): copy row groups as stored, without\n"
            "      decoding, from files laid out as the table with its codec and no deletes;\n"
            "      true: every such row group; auto: those of >= min(8 MiB, row-group size)\n"
            "  page-carry                  true (floe): keep the stored body of whole PLAIN\n"
            "      pages the output would compress again from the same bytes\n"
            "  equality-delete-buffer-bytes 268435456 (floe): equality-delete keys a group\n"
            "      holds at once; more are hash-partitioned, a pass over its files a part\n"
            "\n"
            "  --where EXPR     only files that may hold matching rows (floe scan's language)\n"
            "  --strategy sort  sort each file group by the table's sort order, or by ORDER;\n"
            "                   a group's decoded rows are sorted sort-buffer-bytes at a time\n"
            "                   (floe option, 1 GiB; a group that fits is sorted as a whole)\n"
            "  --sort-order ORDER\n"
            "                   \"col [ASC|DESC] [NULLS FIRST|LAST], ...\" or \"zorder(c1, c2, ...)\":\n"
            "                   Iceberg Spark's z-order over numbers, strings, binaries, dates,\n"
            "                   times and timestamps (identity partition columns left out),\n"
            "                   with the options var-length-contribution (8 bytes of each\n"
            "                   string) and max-output-size (bytes of the z-value, unlimited)\n"
            "  --threads N      worker threads, as convert and append take it (0: all cores);\n"
            "                   the same as --option threads=N\n"
            "  --dry-run        print the plan (groups per partition, inputs, expected outputs)\n"
            "  --quiet, -q      no progress line (drawn on standard error only when it is a\n"
            "                   terminal: bytes read of the total, rate, time left)\n");
}

static void on_progress(void *ctx, const floe_rewrite_progress *p) {
    cli_progress *ui = ctx;
    char extra[64];
    snprintf(extra, sizeof extra, "groups %" PRId64 "/%" PRId64, p->groups_done, p->groups_total);
    ui->total = p->bytes_total;
    cli_progress_update(ui, p->bytes_read, extra);
}

/* Files of other specs an output spec whose source column was dropped cannot take. */
static void print_left_out(const floe_rewrite_plan *p) {
    if (p->files_left_out)
        printf("%" PRId64 " data file(s) of other partition specs left as they are: a source "
               "column of output spec %d has been dropped, so their rows cannot be placed "
               "in its partitions\n", p->files_left_out, p->output_spec_id);
}

static void print_plan_text(const floe_rewrite_plan *p) {
    char a[32], b[32], c[32], d[32];
    const floe_rewrite_limits *l = &p->limits;
    int64_t files = 0, bytes = 0, outs = 0;
    for (size_t i = 0; i < p->ngroups; i++) {
        files += (int64_t)p->groups[i].ninputs;
        bytes += p->groups[i].input_bytes;
        outs += p->groups[i].expected_output_files;
    }
    printf("snapshot %" PRId64 " (sequence %" PRId64 "), %" PRId64 " live data files\n",
           p->snapshot_id, p->sequence_number, p->data_files);
    print_left_out(p);
    printf("target %s (min %s, max %s), groups up to %s, min-input-files %" PRId64 "\n",
           cli_fmt_bytes((double)l->target, a, sizeof a), cli_fmt_bytes((double)l->min, b, sizeof b),
           cli_fmt_bytes((double)l->max, c, sizeof c),
           cli_fmt_bytes((double)l->max_group_size, d, sizeof d), l->min_input_files);
    printf("%zu group(s) in %zu partition(s) (%zu planned): %" PRId64 " input files, %s, "
           "%" PRId64 " expected output file(s)\n",
           p->ngroups, p->partitions, p->total_groups, files,
           cli_fmt_bytes((double)bytes, a, sizeof a), outs);
    for (size_t i = 0; i < p->ngroups; i++) {
        const floe_rewrite_group *g = &p->groups[i];
        printf("  group %d (partition ", g->global_index);
        cli_print_text(stdout, g->partition_text[0] ? g->partition_text : "(unpartitioned)");
        printf(", #%d): %zu files, %s, %" PRId64 " records -> %" PRId64 " file(s)\n",
               g->partition_index, g->ninputs, cli_fmt_bytes((double)g->input_bytes, a, sizeof a),
               g->input_records, g->expected_output_files);
    }
}

static void print_plan_json(const floe_rewrite_plan *p) {
    printf("{\"dry_run\":true,\"snapshot_id\":%" PRId64 ",\"sequence_number\":%" PRId64
           ",\"target_file_size_bytes\":%" PRId64 ",\"min_file_size_bytes\":%" PRId64
           ",\"max_file_size_bytes\":%" PRId64 ",\"data_files\":%" PRId64
           ",\"files_left_out\":%" PRId64 ",\"output_spec_id\":%d"
           ",\"total_groups\":%zu,\"partitions\":%zu,\"plan_ms\":%.3f,\"groups\":[",
           p->snapshot_id, p->sequence_number, p->limits.target, p->limits.min, p->limits.max,
           p->data_files, p->files_left_out, p->output_spec_id, p->total_groups, p->partitions,
           p->plan_ms);
    for (size_t i = 0; i < p->ngroups; i++) {
        const floe_rewrite_group *g = &p->groups[i];
        printf("%s{\"global_index\":%d,\"partition_index\":%d,\"spec_id\":%d,\"partition\":",
               i ? "," : "", g->global_index, g->partition_index, g->spec_id);
        cli_json_str(stdout, g->partition_text);
        printf(",\"input_files\":%zu,\"input_bytes\":%" PRId64 ",\"input_records\":%" PRId64
               ",\"expected_output_files\":%" PRId64 ",\"split_size\":%" PRId64 ",\"files\":[",
               g->ninputs, g->input_bytes, g->input_records, g->expected_output_files,
               g->split_size);
        for (size_t k = 0; k < g->ninputs; k++) {
            if (k)
                putchar(',');
            cli_json_str(stdout, g->inputs[k].file->file_path);
        }
        printf("]}");
    }
    printf("]}\n");
}

static void print_result(const floe_rewrite_result *r, bool json) {
    if (json) {
        printf("{\"rewritten_data_files_count\":%" PRId64 ",\"added_data_files_count\":%" PRId64
               ",\"rewritten_bytes_count\":%" PRId64 ",\"failed_data_files_count\":%" PRId64
               ",\"removed_delete_files_count\":%" PRId64 ",\"groups_planned\":%" PRId64
               ",\"groups_committed\":%" PRId64 ",\"groups_failed\":%" PRId64
               ",\"groups_replaced\":%" PRId64 ",\"commits\":%" PRId64 ",\"failed_commits\":%" PRId64
               ",\"attempts\":%" PRId64 ",\"conflicts\":%" PRId64 ",\"bytes_read\":%" PRId64
               ",\"records_read\":%" PRId64
               ",\"records_deleted\":%" PRId64 ",\"records_written\":%" PRId64
               ",\"bytes_written\":%" PRId64 ",\"fast_copied_row_groups\":%" PRId64
               ",\"reencoded_row_groups\":%" PRId64 ",\"carried_pages\":%" PRId64
               ",\"peak_group_buffer_bytes\":%" PRId64
               ",\"eq_delete_passes\":%" PRId64 ",\"eq_delete_key_bytes_peak\":%" PRId64
               ",\"eq_delete_rows_filtered\":%" PRId64
               ",\"snapshot_id\":%" PRId64 ",\"format_version\":%d,\"format_upgraded\":%s"
               ",\"unknown_state\":%s,\"plan_ms\":%.3f"
               ",\"rewrite_ms\":%.3f,\"commit_ms\":%.3f,\"total_ms\":%.3f,\"first_failure\":",
               r->rewritten_data_files_count, r->added_data_files_count, r->rewritten_bytes_count,
               r->failed_data_files_count, r->removed_delete_files_count, r->groups_planned,
               r->groups_committed, r->groups_failed, r->groups_replaced, r->commits,
               r->failed_commits,
               r->attempts, r->conflicts, r->bytes_read, r->records_read, r->records_deleted, r->records_written, r->bytes_written,
               r->fast_copied_row_groups, r->reencoded_row_groups, r->carried_pages,
               r->peak_group_buffer_bytes, r->eq_delete_passes, r->eq_delete_key_bytes_peak,
               r->eq_delete_rows_filtered,
               r->snapshot_id, r->format_version,
               r->format_upgraded ? "true" : "false", r->unknown_state ? "true" : "false",
               r->plan_ms, r->rewrite_ms, r->commit_ms, r->total_ms);
        cli_json_str(stdout, r->first_failure);
        printf("}\n");
        return;
    }
    char a[32], b[32];
    printf("rewrote %" PRId64 " data files (%s) into %" PRId64 " (%s written) in %" PRId64
           " commit(s) (%" PRId64 " attempt(s), %" PRId64 " conflict(s)); %" PRId64
           " failed; %" PRId64 " delete files removed; %.1f s\n",
           r->rewritten_data_files_count, cli_fmt_bytes((double)r->rewritten_bytes_count, a, sizeof a),
           r->added_data_files_count, cli_fmt_bytes((double)r->bytes_written, b, sizeof b),
           r->commits, r->attempts, r->conflicts, r->failed_data_files_count,
           r->removed_delete_files_count, r->total_ms / 1000.0);
    if (r->fast_copied_row_groups)
        printf("row groups: %" PRId64 " copied as stored, %" PRId64 " re-encoded\n",
               r->fast_copied_row_groups, r->reencoded_row_groups);
    if (r->carried_pages)
        printf("pages: %" PRId64 " written with their stored body (page-carry)\n",
               r->carried_pages);
    if (r->format_upgraded)
        printf("table upgraded from format v1 to v2 (format-version=2)\n");
    else if (r->format_version == 1)
        printf("table kept at format v1 (v1 manifests); -o format-version=2 upgrades it\n");
    if (r->groups_replaced)
        printf("%" PRId64 " group(s) left out: a file each was planned with was replaced by a "
               "concurrent commit (and expired) since the plan; nothing committed for them "
               "(floe rewrite again compacts what replaced them; the log names the files)\n",
               r->groups_replaced);
    if (r->first_failure[0])
        printf("first failure: %s\n", r->first_failure);
}

int floe_cmd_rewrite(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    bool dry = false, quiet = false;
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_error err;
    floe_error_clear(&err);
    int code = FLOE_EXIT_OK;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_rewrite_plan *plan = NULL;
    char *optbuf = NULL;
    cli_progress ui;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0)
            return cli_usage("rewrite", "%s needs a value", a);
        if (r > 0)
            continue;
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if ((!strcmp(a, "--option") || !strcmp(a, "-o")) && has_val) {
            const char *kv = argv[++i];
            const char *eq = strchr(kv, '=');
            if (!eq || eq == kv)
                return cli_usage("rewrite", "--option wants KEY=VALUE");
            floe_free(optbuf);
            optbuf = floe_strndup(kv, (size_t)(eq - kv));
            if (!optbuf || floe_rewrite_option_set(&o, optbuf, eq + 1, &err) < 0) {
                floe_free(optbuf);
                return cli_usage("rewrite", "%s", err.msg);
            }
        } else if (!strcmp(a, "--threads") && has_val) {
            if (floe_rewrite_option_set(&o, FLOE_RW_THREADS, argv[++i], &err) < 0) {
                floe_free(optbuf);
                return cli_usage("rewrite", "--threads: %s", err.msg);
            }
        } else if (!strcmp(a, "--where") && has_val) {
            if (o.where)
                return cli_usage("rewrite", "--where given twice (combine filters with AND)");
            o.where = argv[++i];
        } else if (!strcmp(a, "--strategy") && has_val) {
            const char *s = argv[++i];
            if (!strcmp(s, "binpack"))
                o.strategy = FLOE_RW_BINPACK;
            else if (!strcmp(s, "sort"))
                o.strategy = FLOE_RW_SORT;
            else
                return cli_usage("rewrite", "--strategy is binpack or sort");
        } else if (!strcmp(a, "--sort-order") && has_val) {
            o.sort_order = argv[++i];
        } else if (!strcmp(a, "--dry-run")) {
            dry = true;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = true;
        } else if (a[0] == '-' && a[1]) {
            floe_free(optbuf);
            return cli_usage("rewrite", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            floe_free(optbuf);
            return cli_usage("rewrite", "unexpected %s", a);
        }
    }
    floe_free(optbuf);
    if (!table)
        return cli_usage("rewrite", "no TABLE given");
    if (o.sort_order && o.strategy != FLOE_RW_SORT)
        return cli_usage("rewrite", "--sort-order needs --strategy sort");
    if (cli_open_table(table, &to, false, &cat, &t, &err) < 0 ||
        (!dry && cli_refuse_managed_folder(t, &to, &err) < 0)) {
        code = cli_fail(&err);
        goto out;
    }
    floe_scan_options where = {.where = o.where}; /* the plan reads the current schema */
    if ((code = cli_check_where("rewrite", t, &where)) >= 0)
        goto out;
    /* a sort order naming no column, zorder() misused, an option for another strategy:
     * the arguments are at fault, as with a bad --where (exit 2) */
    if (floe_rewrite_options_check(t, &o, &err) < 0) {
        code = err.code == FLOE_EINVALID ? cli_usage("rewrite", "%s", err.msg) : cli_fail(&err);
        goto out;
    }
    code = FLOE_EXIT_OK;
    cli_progress_init(&ui, "floe rewrite", 0, quiet || dry || to.json);
    o.progress = on_progress;
    o.progress_ctx = &ui;
    floe_rewrite_result res;
    memset(&res, 0, sizeof res); /* printed even when the execution stops before filling it */
    int rc;
    for (int round = 1;; round++) {
        rc = floe_rewrite_plan_new(t, &o, &plan, &err);
        if (rc == 0 && dry) {
            if (to.json)
                print_plan_json(plan);
            else
                print_plan_text(plan);
            goto out;
        }
        if (rc == 0)
            rc = floe_rewrite_execute(t, plan, &o, &res, &err);
        if (rc < 0 && floe_rewrite_again(t, rc, round, &err)) {
            floe_rewrite_plan_free(plan);
            plan = NULL;
            continue;
        }
        break;
    }
    if (!plan) { /* the plan could not be made */
        code = cli_fail(&err);
        goto out;
    }
    cli_progress_end(&ui);
    print_result(&res, to.json);
    if (!to.json)
        print_left_out(plan);
    if (rc < 0) {
        code = cli_fail(&err);
        goto out;
    }
    if (res.failed_data_files_count > 0) {
        /* the table is consistent, but not everything planned was rewritten */
        fprintf(stderr, "floe: %" PRId64 " group(s) failed; %s\n", res.groups_failed,
                res.first_failure[0] ? res.first_failure : "see the log");
        code = FLOE_EXIT_FAIL;
    }
out:
    floe_rewrite_plan_free(plan);
    floe_table_close(t);
    floe_catalog_close(cat);
    return code;
}
