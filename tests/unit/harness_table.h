/*
 * harness_table.h - a table to test against: a SQLite catalog in a fresh scratch folder,
 * namespace "ns", one table, NDJSON appends, and the table's rows in a comparable form.
 * Shared by the tests that rewrite, copy and slice tables.
 */
#ifndef FLOE_TEST_HARNESS_TABLE_H
#define FLOE_TEST_HARNESS_TABLE_H

#include "floe/catalog.h"
#include "floe/table.h"

typedef struct harness_table {
    char dir[4096]; /* the scratch folder: catalog.db, wh/ and the appended inputs */
    floe_catalog *cat;
    floe_table *t;
} harness_table;

/* Create ns.NAME with the schema, and the partition spec, sort order and properties
 * when given (NULL / 0 for none). Fails the test on error. */
void harness_table_open(harness_table *e, const char *name, const char *schema_json,
                        const char *spec_json, const char *sort_json, const floe_kv *props,
                        size_t nprops);
void harness_table_close(harness_table *e);
/* Write ndjson to DIR/in-TAG.ndjson and append that file to the table (no fsync). */
void harness_table_append_ndjson(harness_table *e, int64_t tag, const floe_buf *ndjson);
/* Sort the lines of text (NUL-terminated, modified in place) and join them again, each
 * ending in '\n' (caller frees with floe_free). */
char *harness_sorted_lines(char *text, int64_t *nlines);
/* The table's rows (refreshed first) as sorted canonical lines (caller frees with
 * floe_free); NULL after failing the test when the scan fails. */
char *harness_table_rows(floe_table *t, int64_t *nrows);

/* Spec "Snapshot Summary" (optional totals): the current snapshot's total-records,
 * total-files-size, total-data-files, total-delete-files, total-position-deletes and
 * total-equality-deletes must all be present and equal the sums over the live (ADDED or
 * EXISTING) entries of its manifests; fails the test naming the total otherwise. The
 * table is refreshed first. Nothing to check without a current snapshot. */
void harness_check_summary_totals(floe_table *t);

#endif
