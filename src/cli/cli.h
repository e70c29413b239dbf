/*
 * cli.h - shared pieces of the floe command: the subcommand table and option helpers.
 *
 * Exit codes, the same for every subcommand: 0 ok, 1 failure, 2 usage error.
 * Every subcommand takes --help; those that print a result take --json.
 */
#ifndef FLOE_CLI_H
#define FLOE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/io.h"

#define FLOE_EXIT_OK 0
#define FLOE_EXIT_FAIL 1
#define FLOE_EXIT_USAGE 2

typedef struct floe_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} floe_cmd;

/* Subcommand entry points (one file each: src/cli/cmd_<name>.c). */
int floe_cmd_gen(int argc, char **argv);
int floe_cmd_convert(int argc, char **argv);
int floe_cmd_schema(int argc, char **argv);
int floe_cmd_inspect(int argc, char **argv);
int floe_cmd_cat(int argc, char **argv);
int floe_cmd_catalog(int argc, char **argv);
int floe_cmd_table(int argc, char **argv);
int floe_cmd_namespace(int argc, char **argv);
int floe_cmd_append(int argc, char **argv);
int floe_cmd_scan(int argc, char **argv);
int floe_cmd_snapshots(int argc, char **argv);
int floe_cmd_files(int argc, char **argv);
int floe_cmd_serve(int argc, char **argv);
int floe_cmd_work(int argc, char **argv);
int floe_cmd_expire(int argc, char **argv);
int floe_cmd_orphans(int argc, char **argv);
int floe_cmd_rewrite_manifests(int argc, char **argv);
int floe_cmd_maintain(int argc, char **argv);
int floe_cmd_health(int argc, char **argv);
int floe_cmd_rewrite(int argc, char **argv);

/* The I/O context of this run, built by main from the environment before the
 * subcommand starts (see docs/CONFIG.md); every catalog, table, reader and writer the
 * subcommand opens uses it. */
floe_io *cli_io(void);
/* getenv as the lookup the library's loaders take: the floe command is where settings
 * come from the environment. */
const char *cli_getenv(void *ctx, const char *name);
/* floe_catalog_config_load over the environment, with out->io = cli_io(). */
int cli_catalog_config_load(const char *name, const char *config_path,
                            floe_catalog_config *out, floe_error *err);

/* Print "floe: <msg>" for an error to stderr; returns FLOE_EXIT_FAIL. */
int cli_fail(const floe_error *err);
int cli_usage(const char *cmd, const char *fmt, ...) FLOE_PRINTF(2, 3);
/* Parse a non-negative integer (false past INT64_MAX: never clamped). */
bool cli_parse_int(const char *s, int64_t *out);
/* Parse a snapshot id: a signed 64-bit integer (false outside that range). */
bool cli_parse_id(const char *s, int64_t *out);
/* --max-page-size: a size ("2GiB", "1500MB", bytes) of at least 1 KiB for
 * floe_pq_reader_options.max_page_bytes. */
bool cli_parse_page_size(const char *s, size_t *out);
/* Human-readable byte count into buf ("12.3 MB"). */
const char *cli_fmt_bytes(double bytes, char *buf, size_t n);

#endif
