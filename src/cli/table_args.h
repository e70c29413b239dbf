/*
 * table_args.h - what the table commands (table, namespace, append, scan, snapshots,
 * files) share: catalog options, naming a table as NS.NAME or by path, JSON strings.
 */
#ifndef FLOE_CLI_TABLE_ARGS_H
#define FLOE_CLI_TABLE_ARGS_H

#include <stdio.h>

#include "cli.h"
#include "floe/catalog.h"
#include "floe/scan.h"
#include "floe/table.h"

typedef struct cli_table_opts {
    const char *catalog;  /* --catalog NAME */
    const char *config;   /* --config FILE */
    const char *relocate; /* --relocate FROM=TO: paths recorded under FROM are read from
                             TO (path tables; catalog tables: a moved warehouse, whose
                             next commit records the paths under TO) */
    bool json;            /* --json */
} cli_table_opts;

/* Consume a shared option at argv[*i] (advancing *i past its value). 1 when consumed,
 * 0 when not a shared option, -1 when its value is missing. */
int cli_table_opt(int argc, char **argv, int *i, cli_table_opts *o);
int cli_open_catalog(const cli_table_opts *o, floe_catalog **out, floe_error *err);
/* "a.b.t" -> ns "a.b", name "t" (caller frees both). false without a dot. */
bool cli_split_ident(const char *ident, char **ns, char **name);
/* A table argument that names a folder or metadata file rather than NS.NAME. */
bool cli_is_table_path(const char *t);
/* Open table t: a path (read-only: *cat stays NULL; refused when writable is true) or
 * NS.NAME through the configured catalog (*cat must be closed after the table). */
int cli_open_table(const char *t, const cli_table_opts *o, bool writable, floe_catalog **cat,
                   floe_table **out, floe_error *err);
/* cli_open_table for a command: FLOE_EXIT_OK with *cat and *out set, else the exit code
 * of the failure, which is printed (*cat and *out NULL). */
int cli_open_table_or_fail(const char *t, const cli_table_opts *o, bool writable,
                           floe_catalog **cat, floe_table **out);
/* Close a table cli_open_table opened, then its catalog. Either may be NULL. */
void cli_close_table(floe_catalog *cat, floe_table *t);
void cli_json_str(FILE *f, const char *s);
/* {"k":"v",...} on stdout. */
void cli_print_kv_json(const floe_kv *kv, size_t n);
/* A snapshot's summary value for key, or NULL. */
const char *cli_summary_value(const floe_snapshot *s, const char *key);
/* The arguments of a command that takes one TABLE and the shared options: -1 when they
 * parsed (*table set), else the exit code to return (--help printed, a usage error). */
int cli_one_table_args(int argc, char **argv, const char *cmd, const char *help,
                       cli_table_opts *to, const char **table);
/* cli_one_table_args, then cli_open_table_or_fail (read-only): -1 when the table is open
 * (*cat, *t: close them with cli_close_table), else the exit code to return. */
int cli_one_table_open(int argc, char **argv, const char *cmd, const char *help,
                       cli_table_opts *to, floe_catalog **cat, floe_table **t);
/* --where of a command that reads table t (floe scan, floe rewrite): a filter that does
 * not parse, names no column of the schema read or has a literal that does not fit its
 * column is a usage error, printed (the exit code returned); -1 when it is good or there
 * is none. so selects the snapshot (and so the schema) the filter is read against. */
int cli_check_where(const char *cmd, const floe_table *t, const floe_scan_options *so);
/* For commands that commit to a table given as a folder (rewrite, expire,
 * rewrite-manifests): FLOE_EINVALID, naming the table, when a catalog manages that folder -
 * the configured catalog (when it exists), or a SQLite catalog database (catalog.db) in a
 * folder above it, as the embedded layout and a copied warehouse have. 0 for catalog
 * tables and unmanaged folders. */
int cli_refuse_managed_folder(const floe_table *t, const cli_table_opts *o, floe_error *err);

#endif
