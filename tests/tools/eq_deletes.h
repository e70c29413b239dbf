/*
 * eq_deletes.h - test support: equality delete files as an upsert stream writes them
 * (floe writes none). Used by floe_eq_upsert and the unit tests of rewrite-deletes.
 */
#ifndef FLOE_TEST_EQ_DELETES_H
#define FLOE_TEST_EQ_DELETES_H

#include "floe/manifest.h"
#include "floe/schema.h"
#include "floe/table.h"

/* Write an equality delete file on column f (a top-level string, int or long column of
 * t's schema) holding values (comma-separated text, one delete row each) into t's data
 * folder, and describe it in *out (content EQUALITY_DELETES, equality id f's, no
 * partition: for an unpartitioned table), everything in arena. */
int eq_delete_file_write(floe_table *t, const floe_field *f, const char *values,
                         floe_arena *arena, floe_data_file *out, floe_error *err);

#endif
