/*
 * main.c - the floe command: subcommand dispatch, help and version.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/manifest.h"
#include "table_args.h"

static int cmd_version(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("floe %s\n", FLOE_VERSION_STRING);
    return FLOE_EXIT_OK;
}

static const floe_cmd commands[] = {
    /* one line per subcommand; keep in the order `floe help` should list them */
    {"gen", "write deterministic synthetic events as NDJSON", floe_cmd_gen},
    {"convert", "convert NDJSON events to Parquet files checked against a schema", floe_cmd_convert},
    {"schema", "infer an Iceberg schema from NDJSON, or show a schema's columns", floe_cmd_schema},
    {"inspect", "show a Parquet file's schema, row groups, column chunks and statistics", floe_cmd_inspect},
    {"cat", "print a Parquet file's rows as NDJSON or CSV (projection, filter, limit)", floe_cmd_cat},
    {"catalog", "list and manage catalog namespaces and tables; locate a table's metadata", floe_cmd_catalog},
    {"serve", "run the HTTP ingestion server: durable acks, landing files, compaction", floe_cmd_serve},
    {"work", "run a compaction worker for the landing files of every serve node (leases)", floe_cmd_work},
    {"table", "create, list, describe, rename and drop Iceberg tables", floe_cmd_table},
    {"namespace", "create, list and drop namespaces; show and set their properties", floe_cmd_namespace},
    {"append", "append NDJSON (converted) or Parquet files to a table in one snapshot", floe_cmd_append},
    {"scan", "read a table's rows (filter, time travel, projection) or show the scan plan", floe_cmd_scan},
    {"snapshots", "list a table's snapshots", floe_cmd_snapshots},
    {"files", "list a table's live data files", floe_cmd_files},
    {"rewrite", "compact a table's data files (Iceberg rewrite_data_files, bin-pack or sort)", floe_cmd_rewrite},
    {"health", "measure a table's fragmentation and its cost; text, JSON or an HTML report", floe_cmd_health},
    {"expire", "expire snapshots and delete the files only they reached", floe_cmd_expire},
    {"orphans", "delete files in a table location that nothing references", floe_cmd_orphans},
    {"rewrite-manifests", "regroup a snapshot's manifests by partition into target-size manifests", floe_cmd_rewrite_manifests},
    {"maintain", "run table maintenance (expiry, orphans, manifests, landing lifecycle) under leases", floe_cmd_maintain},
    {"version", "print the version", cmd_version},
};

static void print_help(FILE *out) {
    fprintf(out,
            "floe %s - keeps Iceberg tables fed with big files, not millions of small ones\n"
            "\n"
            "usage: floe COMMAND [OPTIONS]\n"
            "       floe COMMAND --help\n"
            "       floe --version\n"
            "\n"
            "commands:\n",
            FLOE_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-18s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit codes: 0 ok, 1 failure, 2 usage error\n");
}

/* Set by main when the command line asks for --json: errors are then also printed on
 * standard output as {"error": {"code", "exit", "message"}}, so a caller parsing the
 * output sees why there is no result. */
static bool json_errors;

static void json_error(const char *code, int exit_code, const char *msg) {
    if (!json_errors)
        return;
    fputs("{\"error\":{\"code\":", stdout);
    cli_json_str(stdout, code);
    printf(",\"exit\":%d,\"message\":", exit_code);
    cli_json_str(stdout, msg);
    fputs("}}\n", stdout);
    fflush(stdout);
}

int cli_fail(const floe_error *err) {
    const char *msg = err->msg[0] ? err->msg : floe_strerror(err->code);
    fprintf(stderr, "floe: %s\n", msg);
    json_error(floe_errname(err->code), FLOE_EXIT_FAIL, msg);
    return FLOE_EXIT_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "floe %s: %s\n(see 'floe %s --help')\n", cmd, msg, cmd);
    json_error("USAGE", FLOE_EXIT_USAGE, msg);
    return FLOE_EXIT_USAGE;
}

bool cli_parse_id(const char *s, int64_t *out) { return floe_parse_i64_cstr(s, out); }

bool cli_parse_int(const char *s, int64_t *out) {
    int64_t v;
    if (!cli_parse_id(s, &v) || v < 0)
        return false;
    *out = v;
    return true;
}

bool cli_parse_page_size(const char *s, size_t *out) {
    int64_t v;
    if (!floe_parse_size(s, &v) || v < 1024 || (uint64_t)v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

const char *cli_fmt_bytes(double bytes, char *buf, size_t n) {
    const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

static floe_io *io_ctx;

floe_io *cli_io(void) { return io_ctx; }

const char *cli_getenv(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

int cli_catalog_config_load(const char *name, const char *config_path,
                            floe_catalog_config *out, floe_error *err) {
    int rc = floe_catalog_config_load(name, config_path, cli_getenv, NULL, out, err);
    if (rc == 0)
        out->io = io_ctx;
    return rc;
}

/* The settings of this run from the environment (docs/CONFIG.md): the log level
 * (FLOE_LOG) and the I/O context. */
static int io_setup(floe_error *err) {
    const char *lv = getenv("FLOE_LOG");
    if (lv && !strcmp(lv, "error"))
        floe_log_set_level(FLOE_LOG_ERROR);
    else if (lv && !strcmp(lv, "info"))
        floe_log_set_level(FLOE_LOG_INFO);
    else if (lv && !strcmp(lv, "debug"))
        floe_log_set_level(FLOE_LOG_DEBUG);
    const char *dec = getenv("FLOE_MANIFEST_DECODER");
    if (dec && !strcmp(dec, "generic"))
        floe_manifest_set_generic_decoder(true);
    floe_io_options o;
    floe_io_options_init(&o);
    int rc = floe_io_options_from_env(&o, cli_getenv, NULL, err);
    if (rc == 0)
        rc = floe_io_new(&o, &io_ctx, err);
    floe_io_options_free(&o);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return FLOE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2) {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(commands[i].name, argv[2])) {
                    char *av[] = {argv[2], "--help", NULL};
                    return commands[i].run(2, av);
                }
            fprintf(stderr, "floe: no such command '%s'\n", argv[2]);
            return FLOE_EXIT_USAGE;
        }
        print_help(stdout);
        return FLOE_EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("floe %s\n", FLOE_VERSION_STRING);
        return FLOE_EXIT_OK;
    }
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--json"))
            json_errors = true;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) {
            floe_error err;
            floe_error_clear(&err);
            if (io_setup(&err) < 0)
                return cli_fail(&err);
            int rc = commands[i].run(argc - 1, argv + 1);
            floe_io_free(io_ctx);
            io_ctx = NULL;
            return rc;
        }
    fprintf(stderr, "floe: no such command '%s' (see 'floe help')\n", name);
    return FLOE_EXIT_USAGE;
}
