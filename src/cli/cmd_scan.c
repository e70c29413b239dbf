/*
 * cmd_scan.c - `floe scan TABLE`: plan a scan (partition and metrics pruning, delete
 * pairing) and print the rows, or with --plan the chosen files and the planning counters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/io.h"
#include "floe/scan.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe scan TABLE [--where EXPR] [--snapshot ID | --as-of TIME | --ref NAME]\n"
            "                 [--columns a,b.c] [--format ndjson|csv|canonical] [--limit N]\n"
            "                 [--plan [--json]] [--stats] [--no-prune] [--max-page-size SIZE]\n"
            "                 [--max-read-size SIZE] [--manifest-threads N]\n"
            "                 [--catalog NAME] [--config FILE] [--relocate FROM=TO]\n"
            "\n"
            "TABLE is NS.NAME in the configured catalog, or a table folder or metadata file.\n"
            "\n"
            "  --where EXPR     rows where EXPR is true: = != < <= > >= IN, IS [NOT] NULL,\n"
            "                   LIKE 'prefix%%', AND, OR, NOT over the table's columns\n"
            "                   (a.b: field b of struct a; `a.b` or \"a.b\": a column named\n"
            "                   a.b; v.k1.k2: the value at keys k1.k2 in variant v);\n"
            "                   manifests and files that cannot match are not read\n"
            "  --snapshot ID    read that snapshot\n"
            "  --as-of TIME     the snapshot current at TIME, by commit time (UTC:\n"
            "                   YYYY-MM-DD[THH:MM:SS[.fff]], or ms since the epoch)\n"
            "  --ref NAME       a branch or tag\n"
            "  --columns LIST   output columns (comma separated, dotted for nested; a\n"
            "                   path through a list gives the list of its elements'\n"
            "                   values: l.element.x; through a map's keys the list of\n"
            "                   keys: m.key; through its values the map with each value\n"
            "                   taken down the path: m.value.x)\n"
            "  --format F       ndjson (default), csv, or canonical (test oracle form)\n"
            "  --limit N        stop after N rows\n"
            "  --plan           print the planned files and counters instead of rows\n"
            "  --json           with --plan: the plan as one JSON document\n"
            "  --stats          planning and reading counters on stderr (JSON)\n"
            "  --no-prune       read every manifest and file (the filter still applies;\n"
            "                   no skipping by metrics, partitions or shredded variant\n"
            "                   statistics)\n"
            "  --manifest-threads N  manifests fetched and decoded at once (1-64; object\n"
            "                   stores: requests in flight, default 64; local files:\n"
            "                   default 1; the plan is the same)\n"
            "  --max-page-size SIZE  the largest Parquet page to decompress (default 1GiB;\n"
            "                   a page is held whole in memory): raise it for files with\n"
            "                   larger pages, e.g. single values over 1 GiB (\"2GiB\")\n"
            "  --max-read-size SIZE  the most bytes the pages of one row group may\n"
            "                   decompress to over all the columns read (default 1GiB, or\n"
            "                   twice a larger --max-page-size; a row group is held decoded)\n");
}

static int write_stdout(void *ctx, const void *p, size_t n) {
    (void)ctx;
    return fwrite(p, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

static void print_stats_json(FILE *f, const floe_scan_plan *p) {
    const floe_scan_stats *s = &p->stats;
    fprintf(f,
            "\"snapshot_id\":%" PRId64 ",\"plan_ms\":%.3f,\"manifests_total\":%" PRId64
            ",\"manifests_read\":%" PRId64 ",\"manifests_skipped\":%" PRId64
            ",\"delete_manifests_read\":%" PRId64 ",\"entries_read\":%" PRId64
            ",\"files_skipped_partition\":%" PRId64 ",\"files_skipped_metrics\":%" PRId64
            ",\"data_files\":%" PRId64 ",\"delete_files\":%" PRId64 ",\"bytes_read\":%" PRId64
            ",\"records\":%" PRId64,
            p->snapshot_id, s->plan_ms, s->manifests_total, s->manifests_read,
            s->manifests_skipped, s->delete_manifests_read, s->entries_read,
            s->files_skipped_partition, s->files_skipped_metrics, s->data_files, s->delete_files,
            s->bytes_read, p->records);
}

/* The plan's file lines: as files are planned (floe_scan_plan_stream), into memory,
 * since the counters that head them are known only at the end. */
typedef struct plan_lines {
    floe_table *t;
    bool json;
    size_t n;
    floe_buf out;      /* the lines since the last full chunk */
    floe_buf *chunks;  /* full chunks: a growing buffer of tens of megabytes would be
                        * copied at every growth */
    size_t nchunks;
} plan_lines;

/* The first lines grow an ordinary buffer (a point query prints one); past PLAN_FIRST
 * bytes, chunks of PLAN_CHUNK in huge pages (floe_alloc_huge): a million lines are ~70 MB,
 * which in 4 KiB pages cost 17,000 page faults. */
#define PLAN_FIRST ((size_t)64 << 10)
#define PLAN_CHUNK ((size_t)4 << 20)
#define PLAN_SLACK ((size_t)64 << 10) /* room kept for the line that ends a chunk */

/* Start a new chunk when this one is full. */
static int plan_chunk(plan_lines *pl) {
    if (pl->out.len < (pl->nchunks ? PLAN_CHUNK - PLAN_SLACK : PLAN_FIRST))
        return 0;
    floe_buf *nc = floe_realloc(pl->chunks, (pl->nchunks + 1) * sizeof *nc);
    if (!nc)
        return FLOE_ENOMEM;
    pl->chunks = nc;
    pl->chunks[pl->nchunks++] = pl->out;
    floe_buf_init(&pl->out, 0);
    if (!(pl->out.data = floe_alloc_huge(PLAN_CHUNK)))
        return FLOE_ENOMEM;
    pl->out.cap = PLAN_CHUNK;
    return 0;
}

static void plan_lines_free(plan_lines *pl) {
    for (size_t i = 0; i < pl->nchunks; i++)
        floe_buf_free(&pl->chunks[i]);
    floe_free(pl->chunks);
    floe_buf_free(&pl->out);
}

/* v in decimal, as %" PRId64 " prints it. */
static void append_i64(floe_buf *b, int64_t v) {
    char d[24];
    size_t i = sizeof d;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        d[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        d[--i] = '-';
    floe_buf_append(b, d + i, sizeof d - i);
}

static int plan_line(void *ctx, const floe_scan_task *tk, floe_error *err) {
    plan_lines *pl = ctx;
    floe_buf *out = &pl->out;
    char *phys = NULL;
    if (floe_table_resolve_path(pl->t, tk->file->file_path, &phys, NULL) < 0)
        phys = NULL;
    char *lp = phys ? floe_io_local_path(phys) : NULL; /* file:// forms -> a path */
    if (lp) {
        floe_free(phys);
        phys = lp;
    }
    if (pl->json) {
        floe_buf_printf(out, "%s{\"path\":", pl->n ? "," : "");
        floe_json_append_cstr(out, tk->file->file_path);
        floe_buf_printf(out, ",\"local_path\":");
        floe_json_append_cstr(out, phys ? phys : "");
        floe_buf_printf(out, ",\"records\":%" PRId64 ",\"bytes\":%" PRId64 ",\"spec_id\":%d"
                        ",\"sequence_number\":%" PRId64 ",\"deletes\":[",
                        tk->file->record_count, tk->file->file_size_in_bytes, tk->spec_id,
                        tk->data_sequence_number);
        for (size_t d = 0; d < tk->ndeletes; d++) {
            const floe_data_file *df = tk->deletes[d];
            char *dp = NULL;
            /* a path that does not resolve prints as "" */
            FLOE_IGNORE_RESULT(floe_table_resolve_path(pl->t, df->file_path, &dp, NULL));
            char *dl = dp ? floe_io_local_path(dp) : NULL; /* as the data file's */
            if (dl) {
                floe_free(dp);
                dp = dl;
            }
            bool dv = floe_data_file_is_dv(df);
            floe_buf_printf(out, "%s{\"path\":", d ? "," : "");
            floe_json_append_cstr(out, df->file_path);
            floe_buf_printf(out, ",\"local_path\":");
            floe_json_append_cstr(out, dp ? dp : "");
            /* the three kinds apply differently: a vector (v3) holds the positions of one
             * data file, a blob at an offset of a Puffin file */
            floe_buf_printf(out, ",\"content\":\"%s\"",
                            dv ? "deletion_vector"
                            : df->content == FLOE_CONTENT_POSITION_DELETES ? "position"
                                                                           : "equality");
            if (dv && df->has_content_offset && df->has_content_size)
                floe_buf_printf(out, ",\"content_offset\":%" PRId64 ",\"content_size_in_bytes\":"
                                "%" PRId64, df->content_offset, df->content_size_in_bytes);
            floe_buf_printf(out, ",\"records\":%" PRId64 "}", df->record_count);
            floe_free(dp);
        }
        floe_buf_printf(out, "]}");
    } else {
        /* a million of these: put together by hand, not through printf */
        const char *shown = phys ? phys : tk->file->file_path;
        floe_buf_append(out, shown, strlen(shown));
        floe_buf_append_byte(out, '\t');
        append_i64(out, tk->file->record_count);
        floe_buf_append(out, " rows\t", 6);
        append_i64(out, tk->file->file_size_in_bytes);
        floe_buf_append(out, " bytes", 6);
        size_t ndv = 0;
        for (size_t d = 0; d < tk->ndeletes; d++)
            ndv += floe_data_file_is_dv(tk->deletes[d]);
        if (ndv)
            floe_buf_printf(out, "\t%zu deletion vector%s", ndv, ndv == 1 ? "" : "s");
        if (tk->ndeletes > ndv)
            floe_buf_printf(out, "%s%zu delete file%s", ndv ? ", " : "\t",
                            tk->ndeletes - ndv, tk->ndeletes - ndv == 1 ? "" : "s");
        floe_buf_append_byte(out, '\n');
    }
    floe_free(phys);
    pl->n++;
    return floe_buf_error(out) || plan_chunk(pl) < 0
               ? floe_error_set(err, FLOE_ENOMEM, "plan output: out of memory")
               : 0;
}

/* Plan and print the files, the counters first. */
static int print_plan(floe_table *t, const floe_scan_options *so, bool json) {
    floe_error err;
    floe_error_clear(&err);
    plan_lines pl = {.t = t, .json = json};
    floe_buf_init(&pl.out, 0);
    floe_scan_plan *p = NULL;
    if (floe_scan_plan_stream(t, so, plan_line, &pl, &p, &err) < 0) {
        plan_lines_free(&pl);
        floe_scan_plan_free(p);
        return cli_fail(&err);
    }
    if (json) {
        printf("{");
        print_stats_json(stdout, p);
        printf(",\"files\":[");
    } else {
        printf("snapshot %" PRId64 ": %zu data files, %" PRId64 " records\n", p->snapshot_id,
               pl.n, p->records);
        printf("manifests: %" PRId64 " in the list, %" PRId64 " read, %" PRId64
               " skipped by partition summaries\n",
               p->stats.manifests_total, p->stats.manifests_read, p->stats.manifests_skipped);
        printf("files skipped: %" PRId64 " by partition, %" PRId64 " by column metrics\n",
               p->stats.files_skipped_partition, p->stats.files_skipped_metrics);
        printf("planning: %.3f ms, %" PRId64 " bytes of metadata read\n", p->stats.plan_ms,
               p->stats.bytes_read);
    }
    for (size_t i = 0; i < pl.nchunks; i++)
        fwrite(pl.chunks[i].data, 1, pl.chunks[i].len, stdout);
    if (pl.out.len) /* no lines: no storage either */
        fwrite(pl.out.data, 1, pl.out.len, stdout);
    if (json)
        printf("]}\n");
    plan_lines_free(&pl);
    floe_scan_plan_free(p);
    return FLOE_EXIT_OK;
}

int floe_cmd_scan(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL, *where = NULL, *columns = NULL, *format = "ndjson";
    const char *as_of = NULL;
    floe_scan_options so;
    memset(&so, 0, sizeof so);
    int64_t limit = -1;
    size_t max_page = 0, max_read = 0;
    bool plan_only = false, stats = false;
    floe_error err;
    floe_error_clear(&err);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0)
            return cli_usage("scan", "%s needs a value", a);
        if (r > 0)
            continue;
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--where") && has_val) {
            if (where)
                return cli_usage("scan", "--where given twice (combine filters with AND)");
            where = argv[++i];
        } else if (!strcmp(a, "--columns") && has_val) {
            if (columns)
                return cli_usage("scan", "--columns given twice (list them in one)");
            columns = argv[++i];
        } else if (!strcmp(a, "--format") && has_val) {
            format = argv[++i];
        } else if (!strcmp(a, "--limit") && has_val) {
            if (!cli_parse_int(argv[++i], &limit))
                return cli_usage("scan", "--limit wants a number");
        } else if (!strcmp(a, "--snapshot") && has_val) {
            if (so.has_snapshot_id)
                return cli_usage("scan", "--snapshot given twice");
            if (!cli_parse_id(argv[++i], &so.snapshot_id))
                return cli_usage("scan", "--snapshot wants a snapshot id (a signed 64-bit "
                                 "integer)");
            so.has_snapshot_id = true;
        } else if (!strcmp(a, "--as-of") && has_val) {
            if (as_of)
                return cli_usage("scan", "--as-of given twice");
            as_of = argv[i + 1];
            if (floe_scan_parse_time(argv[++i], &so.as_of_ms, &err) < 0)
                return cli_usage("scan", "%s", err.msg);
            so.has_as_of = true;
        } else if (!strcmp(a, "--ref") && has_val) {
            if (so.ref)
                return cli_usage("scan", "--ref given twice");
            so.ref = argv[++i];
        } else if (!strcmp(a, "--plan")) {
            plan_only = true;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (!strcmp(a, "--no-prune")) {
            so.no_partition_pruning = so.no_metrics_pruning = true;
        } else if (!strcmp(a, "--manifest-threads") && has_val) {
            int64_t n;
            if (!cli_parse_int(argv[++i], &n) || n < 1 || n > 64)
                return cli_usage("scan", "--manifest-threads wants a number from 1 to 64");
            so.manifest_threads = (int)n;
        } else if (!strcmp(a, "--max-page-size") && has_val) {
            if (!cli_parse_page_size(argv[++i], &max_page))
                return cli_usage("scan", "--max-page-size wants a size of at least 1KiB "
                                 "(e.g. 2GiB)");
        } else if (!strcmp(a, "--max-read-size") && has_val) {
            if (!cli_parse_page_size(argv[++i], &max_read))
                return cli_usage("scan", "--max-read-size wants a size of at least 1KiB "
                                 "(e.g. 4GiB)");
        } else if (a[0] == '-' && a[1]) {
            return cli_usage("scan", "unknown option %s", a);
        } else if (!table) {
            table = a;
        } else {
            return cli_usage("scan", "one TABLE only (got %s too)", a);
        }
    }
    if (!table)
        return cli_usage("scan", "no TABLE given");
    if ((so.has_snapshot_id + so.has_as_of + (so.ref != NULL)) > 1)
        return cli_usage("scan", "--snapshot, --as-of and --ref exclude each other");
    /* rows are NDJSON (or --format's form), many documents: --json is the plan's */
    if (to.json && !plan_only)
        return cli_usage("scan", "--json is for --plan (rows print as NDJSON lines, or as "
                         "--format says)");
    cli_csv csv = {.f = stdout};
    floe_buf_init(&csv.out, 0);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = limit,
                                 .max_page_bytes = max_page, .max_read_bytes = max_read,
                                 .no_prune = so.no_metrics_pruning};
    if (!strcmp(format, "csv")) {
        ro.row = cli_csv_row;
        ro.row_ctx = &csv;
    } else if (!strcmp(format, "canonical"))
        ro.format = FLOE_PQ_ROWS_CANONICAL;
    else if (strcmp(format, "ndjson"))
        return cli_usage("scan", "--format is ndjson, csv or canonical");
    so.where = where;
    char *colcopy = NULL;
    const char *cols[256];
    if (columns) {
        colcopy = strdup(columns);
        if (!colcopy)
            return cli_fail(&err);
        /* each name once: no empty one (an empty list is not "all"), no repeat (a row
         * would hold its key twice) */
        for (char *tok = colcopy, *next; tok; tok = next) {
            if ((next = strchr(tok, ',')))
                *next++ = 0;
            while (*tok == ' ')
                tok++;
            const char *bad = !*tok                 ? "an empty column name"
                              : so.ncolumns == 256 ? "at most 256 columns"
                                                   : NULL;
            for (size_t k = 0; !bad && k < so.ncolumns; k++)
                if (!strcmp(cols[k], tok))
                    bad = "a column named twice";
            if (bad) {
                int u = cli_usage("scan", "--columns \"%s\": %s%s%s", columns, bad,
                                  *tok ? ": " : "", tok);
                free(colcopy);
                return u;
            }
            cols[so.ncolumns++] = tok;
        }
        so.columns = cols;
    }
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *p = NULL;
    int code = FLOE_EXIT_OK;
    if (cli_open_table(table, &to, false, &cat, &t, &err) < 0) {
        code = cli_fail(&err);
        goto out;
    }
    if ((code = cli_check_where("scan", t, &so)) >= 0)
        goto out;
    code = FLOE_EXIT_OK;
    int64_t snap;
    if (as_of && floe_scan_resolve_snapshot(floe_table_metadata_get(t), &so, &snap, &err) < 0) {
        floe_error_prefix(&err, "--as-of %s: ", as_of); /* as typed: the message has UTC */
        code = cli_fail(&err);
        goto out;
    }
    if (plan_only) {
        code = print_plan(t, &so, to.json);
    } else {
        if (floe_scan_plan_files(t, &so, &p, &err) < 0) {
            code = cli_fail(&err);
            goto out;
        }
        floe_scan_read_stats rs;
        if (floe_scan_read(t, p, &ro, write_stdout, NULL, &rs, &err) < 0 ||
            (ro.row && cli_csv_flush(&csv) < 0 &&
             floe_error_set(&err, FLOE_EIO, "writing the output failed") < 0)) {
            code = cli_fail(&err);
            goto out;
        }
        if (fflush(stdout) != 0) {
            floe_error_set(&err, FLOE_EIO, "writing the output failed");
            code = cli_fail(&err);
            goto out;
        }
        if (stats) {
            fprintf(stderr, "{");
            print_stats_json(stderr, p);
            fprintf(stderr,
                    ",\"files_read\":%" PRId64 ",\"rows_read\":%" PRId64
                    ",\"rows_position_deleted\":%" PRId64 ",\"rows_equality_deleted\":%" PRId64
                    ",\"rows_filtered\":%" PRId64 ",\"rows_out\":%" PRId64
                    ",\"files_skipped_variant\":%" PRId64 "}\n",
                    rs.files_read, rs.rows_read, rs.rows_position_deleted,
                    rs.rows_equality_deleted, rs.rows_filtered, rs.rows_out,
                    rs.files_skipped_variant);
        }
    }
out:
    floe_scan_plan_free(p);
    floe_table_close(t);
    floe_catalog_close(cat);
    free(colcopy);
    floe_buf_free(&csv.out);
    return code;
}
