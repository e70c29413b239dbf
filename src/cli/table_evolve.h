/*
 * table_evolve.h - `floe table properties` and `floe table sort-order` (cmd_table_evolve.c),
 * `floe table schema` and `floe table partition` (cmd_table_schema.c), called by
 * `floe table` with the arguments after the action and the shared options.
 */
#ifndef FLOE_CLI_TABLE_EVOLVE_H
#define FLOE_CLI_TABLE_EVOLVE_H

#include "table_args.h"

int cli_table_properties(int nargs, char **args, const cli_table_opts *to);
int cli_table_sort_order(int nargs, char **args, const cli_table_opts *to);
int cli_table_schema(int nargs, char **args, const cli_table_opts *to);
int cli_table_partition(int nargs, char **args, const cli_table_opts *to);
/* The default sort order of m as text ("" when unsorted); NULL on failure (err set).
 * Caller frees with floe_free. */
char *cli_sort_order_text(const floe_table_metadata *m, floe_error *err);
/* Why a table property key cannot be set as a property (what changes what it names
 * instead), or NULL when it can: the properties Iceberg derives from the metadata. */
const char *cli_reserved_property(const char *key);

#endif
