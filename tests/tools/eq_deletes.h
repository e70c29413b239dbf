/*
 * eq_deletes.h - test support: equality delete files as an upsert stream writes them
 * (floe writes none). Used by floe_eq_upsert, the unit tests of rewrite-deletes and
 * bench/rewrite_deletes (bench/lib/upsert_gen.c).
 */
#ifndef FLOE_TEST_EQ_DELETES_H
#define FLOE_TEST_EQ_DELETES_H

#include "floe/catalog.h"
#include "floe/column.h"
#include "floe/manifest.h"
#include "floe/schema.h"
#include "floe/table.h"

/* Open table ident (NS.NAME) of the SQLite catalog db (name catalog, warehouse) and
 * parse its current schema; the caller closes *t, then *cat, and frees *schema (each
 * set when opened, also on a later failure). */
int eq_table_open(const char *db, const char *catalog, const char *warehouse,
                  const char *ident, floe_catalog **cat, floe_table **t, floe_schema **schema,
                  floe_error *err);

/* Write batch b (rows of schema s) as <uuid>-<suffix>.parquet in t's data folder and
 * describe it in *out (content DATA, full metrics, no partition: for an unpartitioned
 * table), everything in arena. */
int table_file_write(floe_table *t, const floe_schema *s, const floe_batch *b,
                     const char *suffix, floe_arena *arena, floe_data_file *out,
                     floe_error *err);

/* Write an equality delete file on column f (a top-level string, int or long column of
 * t's schema) holding values (comma-separated text, one delete row each) into t's data
 * folder, and describe it in *out (content EQUALITY_DELETES, equality id f's, no
 * partition: for an unpartitioned table), everything in arena. */
int eq_delete_file_write(floe_table *t, const floe_field *f, const char *values,
                         floe_arena *arena, floe_data_file *out, floe_error *err);

/* An equality delete file on the top-level columns named in columns (comma-separated;
 * string, int, long, double or date columns of t's schema s) holding rows: one a line,
 * fields tab-separated, \N a null; otherwise as eq_delete_file_write. */
int eq_delete_rows_write(floe_table *t, const floe_schema *s, const char *columns,
                         const char *rows, floe_arena *arena, floe_data_file *out,
                         floe_error *err);

#endif
