/*
 * cmd_cat.c - `floe cat FILE`: print a Parquet file's rows as NDJSON or CSV, optionally
 * projected (--columns), filtered (--where; row groups and pages that cannot match are not
 * read) and limited.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/parquet_reader.h"

static void cat_help(FILE *out) {
    fprintf(out,
            "usage: floe cat FILE [--columns a,b.c] [--where EXPR] [--limit N]\n"
            "                [--format ndjson|csv] [--canonical] [--no-prune] [--count] [--stats]\n"
            "                [--max-page-size SIZE] [--max-read-size SIZE]\n"
            "\n"
            "Prints the rows of a Parquet file, one per line, nested values assembled from\n"
            "their repetition and definition levels.\n"
            "\n"
            "  --columns LIST  comma-separated column paths (a top-level name selects the\n"
            "                  whole field; nested paths use dots: a.b). A selection prints\n"
            "                  what the full read prints for its columns; any column of a\n"
            "                  map brings the map's keys (values not selected print null)\n"
            "  --where EXPR    keep rows where EXPR is true, e.g.\n"
            "                    \"ts >= '2026-01-01T00:00:00Z' AND (kind IN ('a','b') OR\n"
            "                     NOT n IS NULL)\"\n"
            "                  operators = != <> < <= > >= IN, NOT IN, IS [NOT] NULL, AND,\n"
            "                  OR, NOT, parentheses; columns as in --columns, a name\n"
            "                  holding a dot or a space quoted (`a.b` or \"a.b\": a column\n"
            "                  named a.b); literals are typed from the column\n"
            "                  (dates and timestamps as ISO strings). Row groups and pages\n"
            "                  whose statistics or page index exclude a match are skipped.\n"
            "  --limit N       stop after N rows\n"
            "  --format F      ndjson (default) or csv (header line; nested values as the\n"
            "                  JSON NDJSON prints)\n"
            "  --canonical     the canonical NDJSON of the test oracles (tests/js/lib/\n"
            "                  canon.mjs): maps as sorted [key, value] pairs\n"
            "  --no-prune      read every row group and page (the filter still applies)\n"
            "  --count         print only the number of matching rows (without --where:\n"
            "                  decode every selected column, assemble no records)\n"
            "  --stats         print row groups / pages read and skipped to stderr as JSON\n"
            "  --max-page-size SIZE  the largest page to decompress (default 1GiB; a page is\n"
            "                  held whole in memory): raise it for files with larger pages,\n"
            "                  e.g. single values over 1 GiB (\"2GiB\")\n"
            "  --max-read-size SIZE  the most bytes the pages of one row group may\n"
            "                  decompress to over all the columns read (default 1GiB, or\n"
            "                  twice a larger --max-page-size; a row group is held decoded)\n"
            "  -h, --help      this help\n");
}

static int write_stdout(void *ctx, const void *p, size_t n) {
    (void)ctx;
    return fwrite(p, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

static int discard(void *ctx, const void *p, size_t n) {
    (void)ctx, (void)p, (void)n;
    return 0;
}

int floe_cmd_cat(int argc, char **argv) {
    const char *path = NULL, *columns = NULL, *where = NULL, *format = "ndjson";
    int64_t limit = -1;
    bool canonical = false, no_prune = false, stats = false, count = false;
    floe_pq_reader_options ro = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cat_help(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--columns") && i + 1 < argc) {
            columns = argv[++i];
        } else if (!strcmp(a, "--where") && i + 1 < argc) {
            if (where)
                return cli_usage("cat", "--where given twice (combine filters with AND)");
            where = argv[++i];
        } else if (!strcmp(a, "--limit") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], &limit))
                return cli_usage("cat", "--limit needs a non-negative integer");
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(a, "--canonical")) {
            canonical = true;
        } else if (!strcmp(a, "--no-prune")) {
            no_prune = true;
        } else if (!strcmp(a, "--count")) {
            count = true;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (!strcmp(a, "--max-page-size") && i + 1 < argc) {
            if (!cli_parse_page_size(argv[++i], &ro.max_page_bytes))
                return cli_usage("cat", "--max-page-size needs a size of at least 1KiB "
                                 "(e.g. 2GiB)");
        } else if (!strcmp(a, "--max-read-size") && i + 1 < argc) {
            if (!cli_parse_page_size(argv[++i], &ro.max_read_bytes))
                return cli_usage("cat", "--max-read-size needs a size of at least 1KiB "
                                 "(e.g. 4GiB)");
        } else if (a[0] == '-' && a[1]) {
            return cli_usage("cat", "unknown or incomplete option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return cli_usage("cat", "one FILE only");
        }
    }
    if (!path)
        return cli_usage("cat", "missing FILE");
    floe_pq_row_format fmt = FLOE_PQ_ROWS_NDJSON;
    bool csv = false;
    if (!strcmp(format, "ndjson"))
        fmt = canonical ? FLOE_PQ_ROWS_CANONICAL : FLOE_PQ_ROWS_NDJSON;
    else if (!strcmp(format, "csv"))
        csv = true;
    else
        return cli_usage("cat", "--format must be ndjson or csv");

    floe_error err;
    floe_error_clear(&err);
    floe_pq_reader *r = NULL;
    char *cols_copy = NULL;
    const char **paths = NULL;
    int rc = FLOE_EXIT_FAIL;
    if (floe_pq_reader_open(cli_io(), path, &ro, &r, &err) < 0)
        return cli_fail(&err);
    if (columns) {
        cols_copy = floe_strdup(columns);
        size_t n = 1;
        for (const char *c = columns; *c; c++)
            n += *c == ',';
        paths = floe_calloc(n, sizeof *paths);
        if (!cols_copy || !paths) {
            floe_error_set(&err, FLOE_ENOMEM, "out of memory");
            goto fail;
        }
        size_t k = 0;
        for (char *save = NULL, *tok = strtok_r(cols_copy, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save))
            if (*tok)
                paths[k++] = tok;
        if (k == 0) {
            rc = cli_usage("cat", "--columns needs at least one column");
            goto out;
        }
        if (floe_pq_reader_select_paths(r, paths, k, &err) < 0)
            goto fail;
    }
    if (where && floe_pq_reader_set_filter(r, where, &err) < 0) {
        /* syntax, typing, no such column, a repeated column */
        if (err.code == FLOE_EINVALID || err.code == FLOE_ENOTFOUND ||
            err.code == FLOE_EUNSUPPORTED) {
            rc = cli_usage("cat", "%s", err.msg);
            goto out;
        }
        goto fail;
    }
    if (no_prune)
        floe_pq_reader_set_pruning(r, false, false);
    int64_t rows = 0;
    if (count && !where) {
        /* decode every selected column of every row group, assemble nothing */
        const floe_pq_rowset *rs;
        int n;
        while ((n = floe_pq_reader_next(r, &rs, &err)) > 0)
            rows += rs->nrows;
        if (n < 0)
            goto fail;
        printf("%" PRId64 "\n", rows);
    } else if (count) {
        if (floe_pq_reader_dump(r, fmt, limit, discard, NULL, &rows, &err) < 0)
            goto fail;
        printf("%" PRId64 "\n", rows);
    } else if (csv) {
        cli_csv cc = {.f = stdout};
        floe_buf_init(&cc.out, 0);
        int drc = floe_pq_reader_dump_rows(r, limit, cli_csv_row, &cc, &rows, &err);
        if (drc == 0 && cli_csv_flush(&cc) < 0)
            drc = floe_error_set(&err, FLOE_EIO, "cannot write to standard output");
        floe_buf_free(&cc.out);
        if (drc < 0)
            goto fail;
    } else if (floe_pq_reader_dump(r, fmt, limit, write_stdout, NULL, &rows, &err) < 0) {
        goto fail;
    }
    if (fflush(stdout) != 0) {
        floe_error_set(&err, FLOE_EIO, "cannot write to standard output");
        goto fail;
    }
    if (stats) {
        floe_pq_read_stats st;
        floe_pq_reader_stats(r, &st);
        fprintf(stderr,
                "{\"rows\":%" PRId64 ",\"rows_read\":%" PRId64 ",\"row_groups_read\":%" PRId64
                ",\"row_groups_skipped\":%" PRId64 ",\"pages_read\":%" PRId64
                ",\"pages_skipped\":%" PRId64 ",\"bytes_read\":%" PRId64
                ",\"bytes_mapped\":%" PRId64 ",\"pages_direct\":%" PRId64 "}\n",
                rows, st.rows_read, st.row_groups_read, st.row_groups_skipped, st.pages_read,
                st.pages_skipped, st.bytes_read, st.bytes_mapped, st.pages_direct);
    }
    rc = FLOE_EXIT_OK;
    goto out;
fail:
    rc = cli_fail(&err);
out:
    floe_free(paths);
    floe_free(cols_copy);
    floe_pq_reader_close(r);
    return rc;
}
