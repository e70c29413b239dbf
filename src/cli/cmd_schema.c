/*
 * cmd_schema.c - `floe schema`: infer an Iceberg schema from NDJSON samples, or show a
 * schema (from a schema file or table metadata) with its Parquet column layout.
 *
 *   floe schema infer FILE... [--sample N] [--format-version N] [-o OUT] [--json]
 *   floe schema show FILE|NS.NAME [--columns] [--json]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "table_args.h"
#include "floe/input.h"
#include "floe/json.h"
#include "floe/schema.h"

#define DEFAULT_SAMPLE 10000

static void schema_help(FILE *out) {
    fprintf(out,
            "usage: floe schema infer FILE... [--sample N] [--format-version N] [-o OUT]\n"
            "                         [--json]\n"
            "       floe schema show FILE|NS.NAME [--columns] [--json] [--catalog NAME]\n"
            "                        [--config FILE]\n"
            "\n"
            "infer: reads the first N records (default %d) of each NDJSON file ('-' for\n"
            "  standard input; gzip and zstd are detected) and prints an Iceberg schema:\n"
            "  booleans, long, double (long and double mixed), timestamptz / timestamp / date\n"
            "  for ISO-8601 strings, string otherwise; objects become structs, or\n"
            "  map<string, V> when their keys vary widely (more than 64 distinct, or 16+\n"
            "  of which each object holds under a quarter); arrays become lists. Every field\n"
            "  is optional; ids are assigned depth-first from 1. Conflicting kinds take the\n"
            "  most frequent one, with a warning on stderr; for a format v3 table\n"
            "  (--format-version 3) they become variant instead: a field whose kind varies\n"
            "  between records (say an object in one, a string in another), and an object\n"
            "  whose fields' kinds vary, as a whole; and timestamps whose values carry\n"
            "  digits below the microsecond become timestamptz_ns / timestamp_ns.\n"
            "show: parses a schema JSON file or a table metadata file (current schema), or\n"
            "  takes a catalog table's current schema (NS.NAME, when no such file exists), and\n"
            "  prints it normalised; --columns lists the Parquet leaf columns instead, with\n"
            "  their physical type and max definition/repetition levels.\n"            "A table's schema is shown and evolved (add, rename, drop, widen, move columns)\n"
            "with floe table schema NS.NAME ... (see 'floe table --help').\n"
            "\n"
            "  --sample N      records to read per file (0 = all)\n"
            "  --format-version N  the format version of the table the schema is for (1, 2\n"
            "                  or 3; default 2): 3 allows variant and nanosecond\n"
            "                  timestamps\n"
            "  -o, --output F  write the schema to F instead of stdout\n"
            "  --columns       (show) list leaf columns\n"
            "  --json          compact one-line JSON\n"
            "  -h, --help      this help\n",
            DEFAULT_SAMPLE);
}

static int ignore_oversize(void *ctx, const char *source, int64_t line, int64_t offset,
                           const uint8_t *p, size_t n, bool first, bool last,
                           int64_t total_len) {
    (void)ctx, (void)source, (void)line, (void)offset, (void)p, (void)n, (void)first;
    (void)last, (void)total_len;
    return 0; /* a record too large to sample is simply not sampled */
}

/* Feed up to `sample` records of one file (0 = all). */
static int infer_file(floe_infer *inf, const char *path, int64_t sample, floe_error *err) {
    floe_line_reader_options ro = {.max_record = 16u << 20, .oversize = ignore_oversize};
    floe_line_reader *r = NULL;
    floe_chunk chunk = {0};
    floe_buf_init(&chunk.data, 0);
    int rc = floe_line_reader_open(path, &ro, &r, err);
    if (rc < 0)
        return rc;
    uint64_t start = floe_infer_records(inf) + floe_infer_skipped(inf);
    bool done = false;
    const char *name = strcmp(path, "-") ? path : "standard input";
    while (!done && (rc = floe_line_reader_next(r, &chunk, err)) > 0) {
        const uint8_t *p = chunk.data.data, *end = p + chunk.data.len;
        /* warnings name the line a value was first seen on */
        if (floe_infer_at(inf, name, chunk.first_line) < 0) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            goto out;
        }
        while (p < end) {
            uint64_t seen = floe_infer_records(inf) + floe_infer_skipped(inf) - start;
            if (sample > 0 && seen >= (uint64_t)sample) {
                done = true;
                break;
            }
            const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
            const uint8_t *le = nl ? nl + 1 : end;
            if ((rc = floe_infer_feed(inf, p, (size_t)(le - p), err)) < 0)
                goto out;
            p = le;
        }
    }
out:
    floe_buf_free(&chunk.data);
    floe_line_reader_close(r);
    return rc < 0 ? rc : 0;
}

static int write_text(const char *out_path, const char *text) {
    FILE *f = stdout;
    if (out_path && strcmp(out_path, "-") != 0 && !(f = fopen(out_path, "w"))) {
        fprintf(stderr, "floe schema: %s: %s\n", out_path, strerror(errno));
        return FLOE_EXIT_FAIL;
    }
    int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f != stdout)
        ok = (fclose(f) == 0) && ok;
    else
        ok = (fflush(f) == 0) && ok;
    if (!ok) {
        fprintf(stderr, "floe schema: write %s failed\n", out_path ? out_path : "stdout");
        return FLOE_EXIT_FAIL;
    }
    return FLOE_EXIT_OK;
}

static int run_infer(int argc, char **argv) {
    int64_t sample = DEFAULT_SAMPLE, format_version = 2;
    const char *out_path = NULL;
    bool json = false;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t nfiles = 0;
    int status = FLOE_EXIT_FAIL;
    floe_infer *inf = NULL;
    floe_schema *s = NULL;
    char *text = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (!files) {
        fprintf(stderr, "floe schema: out of memory\n");
        return FLOE_EXIT_FAIL;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--sample") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], &sample)) {
                status = cli_usage("schema", "--sample wants a number, not '%s'", argv[i]);
                goto done;
            }
        } else if (!strcmp(a, "--format-version") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], &format_version) || format_version < 1 ||
                format_version > 3) {
                status = cli_usage("schema", "--format-version wants 1, 2 or 3, not '%s'",
                                   argv[i]);
                goto done;
            }
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            schema_help(stdout);
            status = FLOE_EXIT_OK;
            goto done;
        } else if (a[0] == '-' && a[1]) {
            status = cli_usage("schema", "unknown option '%s'", a);
            goto done;
        } else {
            files[nfiles++] = a;
        }
    }
    if (!nfiles) {
        status = cli_usage("schema", "infer needs at least one FILE");
        goto done;
    }
    floe_infer_options io = {.variant = format_version >= 3, .nanos = format_version >= 3};
    if (floe_infer_new(&io, &inf, &err) < 0) {
        status = cli_fail(&err);
        goto done;
    }
    for (size_t i = 0; i < nfiles; i++)
        if (infer_file(inf, files[i], sample, &err) < 0) {
            status = cli_fail(&err);
            goto done;
        }
    if (floe_infer_finish(inf, &s, &err) < 0) {
        status = cli_fail(&err);
        goto done;
    }
    for (size_t i = 0; i < floe_infer_warning_count(inf); i++)
        fprintf(stderr, "floe schema: warning: %s\n", floe_infer_warning(inf, i));
    if (floe_infer_skipped(inf)) {
        char at[640];
        bool one = floe_infer_skipped(inf) == 1;
        fprintf(stderr, "floe schema: %" PRIu64 " %s and %s skipped (the first%s)\n",
                floe_infer_skipped(inf), one ? "line was not a JSON object" : "lines were not JSON objects",
                one ? "was" : "were",
                floe_infer_first_skipped(inf, at, sizeof at));
    }
    if (!(text = floe_schema_to_json(s, !json))) {
        fprintf(stderr, "floe schema: out of memory\n");
        goto done;
    }
    status = write_text(out_path, text);
done:
    floe_free(text);
    floe_schema_free(s);
    floe_infer_free(inf);
    free(files);
    return status;
}

static const char *phys_name(floe_phys p) {
    static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

/* The schema `show` names: a schema or metadata file, else a catalog table NS.NAME
 * (its current schema). */
static int load_shown(const char *path, const cli_table_opts *to, floe_schema **out,
                      floe_error *err) {
    struct stat st;
    char *ns = NULL, *name = NULL;
    if (stat(path, &st) == 0 || !cli_split_ident(path, &ns, &name) || strchr(path, '/'))
        return floe_schema_load(path, out, err);
    floe_free(ns);
    floe_free(name);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int rc = cli_open_table(path, to, false, &c, &t, err);
    if (rc == FLOE_ENOTFOUND)
        floe_error_set(err, rc, "%s: no such file, nor a table of that name in the catalog",
                       path);
    if (rc == 0) {
        const floe_metadata_schema *ms =
            floe_table_metadata_current_schema(floe_table_metadata_get(t));
        rc = ms ? floe_schema_parse(ms->json, strlen(ms->json), out, err)
                : floe_error_set(err, FLOE_ECORRUPT, "%s: no current schema", path);
    }
    floe_table_close(t);
    floe_catalog_close(c);
    return rc;
}

static int run_show(int argc, char **argv) {
    const char *path = NULL;
    bool columns = false, json = false;
    cli_table_opts to = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--catalog") || !strcmp(a, "--config")) {
            if (i + 1 >= argc)
                return cli_usage("schema", "%s needs a value", a);
            *(!strcmp(a, "--catalog") ? &to.catalog : &to.config) = argv[++i];
        } else if (!strcmp(a, "--columns"))
            columns = true;
        else if (!strcmp(a, "--json"))
            json = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            schema_help(stdout);
            return FLOE_EXIT_OK;
        } else if (a[0] == '-' && a[1])
            return cli_usage("schema", "unknown option '%s'", a);
        else if (path)
            return cli_usage("schema", "show takes one FILE");
        else
            path = a;
    }
    if (!path)
        return cli_usage("schema", "show needs a FILE");
    floe_error err;
    floe_schema *s = NULL;
    if (load_shown(path, &to, &s, &err) < 0)
        return cli_fail(&err);
    int status = FLOE_EXIT_OK;
    if (columns) {
        char p[512], t[64];
        if (json)
            printf("[");
        for (size_t i = 0; i < s->nleaves; i++) {
            const floe_field *f = s->leaves[i];
            floe_field_path(f, p, sizeof p);
            floe_field_type_str(f, t, sizeof t);
            if (json) {
                printf("%s{\"column\":%zu,\"path\":", i ? "," : "", i);
                cli_json_str(stdout, p);
                printf(",\"id\":%d,\"type\":\"%s\",\"physical\":\"%s\",\"type_length\":%d,"
                       "\"max_def\":%d,\"max_rep\":%d}",
                       (int)f->id, t, phys_name(f->phys), (int)f->type_length, f->def_level,
                       f->rep_level);
            } else {
                printf("%3zu  ", i);
                cli_print_padded(stdout, p, 32);
                printf(" id %-5d %-16s %-22s def %d rep %d\n", (int)f->id, t,
                       phys_name(f->phys), f->def_level, f->rep_level);
            }
        }
        if (json)
            printf("]\n");
    } else {
        char *text = floe_schema_to_json(s, !json);
        if (!text) {
            fprintf(stderr, "floe schema: out of memory\n");
            status = FLOE_EXIT_FAIL;
        } else {
            status = write_text(NULL, text);
            floe_free(text);
        }
    }
    floe_schema_free(s);
    return status;
}

int floe_cmd_schema(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        schema_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? FLOE_EXIT_USAGE : FLOE_EXIT_OK;
    }
    if (!strcmp(argv[1], "infer"))
        return run_infer(argc, argv);
    if (!strcmp(argv[1], "show"))
        return run_show(argc, argv);
    return cli_usage("schema", "unknown action '%s' (infer, show)", argv[1]);
}
