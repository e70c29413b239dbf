/*
 * cli.h - shared pieces of the floe command: the subcommand table and option helpers.
 *
 * Exit codes, the same for every subcommand: 0 ok, 1 failure, 2 usage error.
 * Every subcommand takes --help; those that print a result take --json.
 */
#ifndef FLOE_CLI_H
#define FLOE_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/io.h"
#include "floe/parquet_reader.h"
#include "floe/server.h"

#define FLOE_EXIT_OK 0
#define FLOE_EXIT_FAIL 1
#define FLOE_EXIT_USAGE 2

/* Rows as CSV (src/cli/csv.c): cli_csv_row is a floe_pq_row_fn taking a cli_csv *;
 * cli_csv_flush writes what is buffered to f (f NULL: everything stays in out). Free out with floe_buf_free. */
typedef struct cli_csv {
    floe_buf out;
    FILE *f;
} cli_csv;
int cli_csv_row(void *ctx, size_t ncols, const char *const *labels,
                const floe_pq_text *values);
int cli_csv_flush(cli_csv *c);

typedef struct floe_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
    bool rewrites; /* may rewrite data files: main tunes the allocator for it */
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
int floe_cmd_ref(int argc, char **argv);
int floe_cmd_history(int argc, char **argv);
/* floe snapshots rollback|set-current|cherrypick (cmd_ref.c); argv[0] is the action. */
int cli_snapshots_action(int argc, char **argv);
int floe_cmd_serve(int argc, char **argv);
int floe_cmd_work(int argc, char **argv);
/* The signals floe serve and floe work take with sigwait (SIGTERM, SIGINT, SIGHUP) into
 * *set, blocked in the calling thread: main blocks them before it first reads the
 * configuration file, so one sent while the server starts waits for the server. */
void cli_serve_block_signals(sigset_t *set);
int floe_cmd_expire(int argc, char **argv);
int floe_cmd_orphans(int argc, char **argv);
int floe_cmd_rewrite_manifests(int argc, char **argv);
int floe_cmd_maintain(int argc, char **argv);
int floe_cmd_health(int argc, char **argv);
int floe_cmd_rewrite(int argc, char **argv);
int floe_cmd_delete(int argc, char **argv);
int floe_cmd_rewrite_deletes(int argc, char **argv);

/* The I/O context of this run, built by main from the environment before the
 * subcommand starts (see docs/CONFIG.md); every catalog, table, reader and writer the
 * subcommand opens uses it. */
floe_io *cli_io(void);
/* getenv as the lookup the library's loaders take: the floe command is where settings
 * come from the environment. */
const char *cli_getenv(void *ctx, const char *name);
/* Database connection options from the environment: FLOE_SQLITE_BUSY_MS,
 * FLOE_PG_SETTLE_MS (docs/CONFIG.md). */
const floe_sql_options *cli_sql_options(void);
/* floe_catalog_config_load over the environment, with out->io = cli_io() and out->sql =
 * *cli_sql_options(). */
int cli_catalog_config_load(const char *name, const char *config_path,
                            floe_catalog_config *out, floe_error *err);
/* The settings of floe serve / floe work that come from the environment:
 * cfg->io = cli_io(), cfg->sql, FLOE_COMPACT_LEASE_MS, TMPDIR (staging). */
int cli_server_config_env(floe_server_config *cfg, floe_error *err);
/* Whether the environment tunes glibc's malloc (GLIBC_TUNABLES glibc.malloc.*, MALLOC_*_):
 * then the floe command leaves the allocator's settings alone. */
bool cli_malloc_env_tuned(void);

/* Print "floe: <msg>" for an error to stderr; returns FLOE_EXIT_FAIL. Under --json the
 * error is also printed on stdout as {"error":{"code","exit","message"}} (both). */
int cli_fail(const floe_error *err);
/* cli_fail for a command whose --json result object is already open on standard output
 * ('{' and members printed, not closed): the error becomes the object's last member,
 * ,"error":{"code","exit","message"}} and a newline, so the output stays one JSON
 * document. Returns FLOE_EXIT_FAIL. */
int cli_fail_in_object(const floe_error *err);
/* Print a usage error as one line, "floe CMD: <msg> (see 'floe CMD --help')", to stderr;
 * returns FLOE_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) FLOE_PRINTF(2, 3);
/* Parse a non-negative integer (false past INT64_MAX: never clamped). */
bool cli_parse_int(const char *s, int64_t *out);
/* Parse --threads: 0..max, where 0 means the machine's cores (at most max). */
bool cli_parse_threads(const char *s, int max, int *out);
/* Parse a snapshot id: a signed 64-bit integer (false outside that range). */
bool cli_parse_id(const char *s, int64_t *out);
/* --max-page-size, --max-read-size: a size ("2GiB", "1500MB", bytes) of at least 1 KiB
 * for floe_pq_reader_options.max_page_bytes and max_read_bytes. */
bool cli_parse_page_size(const char *s, size_t *out);
/* The columns a terminal draws s in: one per code point of UTF-8, two for East Asian
 * wide and fullwidth characters and emoji. */
size_t cli_display_width(const char *s);
/* s, then spaces up to width columns (nothing more when s is wider): printf's "%-*s" by
 * display columns instead of bytes, so names in any script line up. Written as
 * cli_print_text writes it. */
void cli_print_padded(FILE *f, const char *s, size_t width);
/* A name or value from table metadata in human text: control characters (C0 and DEL)
 * as \xHH, so a name holding ESC or CR cannot drive the terminal or forge lines. */
void cli_print_text(FILE *f, const char *s);
/* Does s hold a control character (C0 or DEL)? */
bool cli_has_control(const char *s);
/* Display columns of s as cli_print_text writes it. */
size_t cli_text_width(const char *s);
/* "<indent>key = value\n" on standard output, key and value as cli_print_text writes
 * them (value NULL: empty). */
void cli_print_kv_text(const char *indent, const char *key, const char *value);
/* Human-readable byte count into buf ("12.3 MB"). */
const char *cli_fmt_bytes(double bytes, char *buf, size_t n);

/* The progress line of a long command (progress.c): drawn on standard error only when it
 * is a terminal and quiet is false (callers pass --quiet || --json). */
typedef struct cli_progress {
    bool on, printed;
    const char *what;
    int64_t total;               /* bytes; <= 0: unknown (no percentage or time left) */
    double t0, last;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *what, int64_t total, bool quiet);
/* done bytes of total; extra: more to show ("groups 2/5") or NULL. */
void cli_progress_update(cli_progress *p, int64_t done, const char *extra);
/* Clear the line (before the command prints its result). */
void cli_progress_end(cli_progress *p);
/* cli_progress_update(ctx, done, NULL) as a library progress callback. */
void cli_progress_bytes(void *ctx, int64_t done);
/* The total size of local input files; 0 (unknown) when one is '-', a URI or not a
 * regular file. */
int64_t cli_inputs_size(const char *const *paths, size_t n);

#endif
