/*
 * eq_upsert.c - test tool: commit an upsert as a streaming writer (Flink's upsert mode)
 * does, through floe's library: one equality delete file holding the given key values,
 * and the given Parquet data files, in one "overwrite" snapshot (floe_append with an
 * equality delete file, floe/append.h). floe itself writes no equality deletes; the
 * tests of `floe rewrite-deletes` need tables that have them.
 *
 *   floe_eq_upsert CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME COLUMN VALUES [DATA.parquet...]
 *
 * COLUMN is a top-level string, int or long column of an unpartitioned table (an
 * unpartitioned delete file applies to every data file with a lower sequence number);
 * VALUES is a comma-separated list of its values, one delete row each, or @FILE: the values
 * read from FILE (commas or newlines between them; for lists longer than an argument may
 * be), or @@FILE: rows of the columns COLUMN names (comma-separated; string, int, long,
 * double or date), one a line of FILE, fields tab-separated, \N a null (keys of several
 * columns, and null keys). The data files are
 * added where they are (they must be in the table's location to be read back). Prints
 * the snapshot id. Exit 0 ok, 1 failure, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eq_deletes.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/column.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "floe/table.h"
#include "floe/table_metadata.h"

/* The text of path (malloc'd), or NULL. */
static char *read_text(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    fclose(fp);
    if (buf)
        buf[n] = 0;
    return buf;
}

/* The text of path with newlines made commas (malloc'd), or NULL. */
static char *read_values(const char *path) {
    char *buf = read_text(path);
    if (!buf)
        return NULL;
    size_t n = strlen(buf);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\n')
            buf[i] = ',';
    return buf;
}

static int usage(void) {
    fprintf(stderr, "usage: floe_eq_upsert CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME COLUMN "
                    "V1,V2,...|@FILE|@@FILE [DATA.parquet...]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 7)
        return usage();
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_append *a = NULL;
    floe_schema *schema = NULL;
    floe_arena arena;
    floe_arena_init(&arena, 16 * 1024);
    int rc = eq_table_open(argv[1], argv[2], argv[3], argv[4], &cat, &t, &schema, &err);
    const floe_table_metadata *m = rc == 0 ? floe_table_metadata_get(t) : NULL;
    bool by_rows = !strncmp(argv[6], "@@", 2);
    const floe_field *f = rc == 0 && !by_rows ? floe_schema_find_path(schema, argv[5]) : NULL;
    if (rc == 0 && !by_rows && (!f || f->parent))
        rc = floe_error_set(&err, FLOE_ENOTFOUND, "no top-level column %s", argv[5]);
    floe_data_file del;
    memset(&del, 0, sizeof del);
    char *values = NULL;
    if (by_rows)
        values = read_text(argv[6] + 2);
    else if (argv[6][0] == '@')
        values = read_values(argv[6] + 1);
    if (rc == 0 && argv[6][0] == '@' && !values)
        rc = floe_error_set(&err, FLOE_EIO, "cannot read %s", argv[6] + (by_rows ? 2 : 1));
    if (rc == 0 && by_rows)
        rc = eq_delete_rows_write(t, schema, argv[5], values, &arena, &del, &err);
    else if (rc == 0)
        rc = eq_delete_file_write(t, f, values ? values : argv[6], &arena, &del, &err);
    free(values);
    if (rc == 0)
        rc = floe_append_new(t, &a, &err);
    if (rc == 0)
        rc = floe_append_add_file(a, &del, &err);
    for (int i = 7; i < argc && rc == 0; i++) {
        floe_data_file df;
        rc = floe_data_file_from_parquet_footer(floe_table_io(t), m, argv[i], argv[i], NULL, 0,
                                                &arena, &df, NULL, &err);
        if (rc == 0)
            rc = floe_append_add_file(a, &df, &err);
    }
    floe_append_result res;
    memset(&res, 0, sizeof res);
    if (rc == 0)
        rc = floe_append_commit(a, &res, &err);
    if (rc == 0)
        printf("%lld\n", (long long)res.snapshot_id);
    else
        fprintf(stderr, "floe_eq_upsert: %s\n", err.msg);
    floe_append_result_reset(&res);
    floe_append_free(a);
    floe_schema_free(schema);
    floe_table_close(t);
    floe_catalog_close(cat);
    floe_arena_reset(&arena);
    return rc == 0 ? 0 : 1;
}
