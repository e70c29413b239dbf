/*
 * append_sqlite.c - append NDJSON files to an Iceberg table in a SQLite catalog.
 *
 *     append_sqlite CATALOG.db WAREHOUSE_DIR INPUT.ndjson...
 *
 * Opens (or creates) the catalog, creates namespace "demo" and table demo.events when
 * missing, and commits the inputs as one snapshot.
 * Build: cc append_sqlite.c $(pkg-config --cflags --libs floe)
 */
#include <floe/floe.h>
#include <inttypes.h>
#include <stdio.h>

static const char schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"event\",\"required\":false,\"type\":\"string\"}]}";

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s CATALOG.db WAREHOUSE_DIR INPUT.ndjson...\n", argv[0]);
        return 2;
    }
    floe_error err;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    int rc = floe_catalog_open_sqlite(NULL, argv[1], "default", argv[2], &cat, &err);
    if (rc < 0)
        goto done;
    rc = floe_catalog_create_namespace(cat, "demo", NULL, NULL, 0, &err);
    if (rc == FLOE_EEXISTS)
        rc = 0;
    if (rc < 0)
        goto done;
    rc = floe_table_load(cat, "demo", "events", &t, &err);
    if (rc == FLOE_ENOTFOUND) {
        floe_table_create_options co = {.floe_defaults = true};
        rc = floe_table_create(cat, "demo", "events", schema_json, &co, &t, &err);
    }
    if (rc < 0)
        goto done;

    floe_table_append_options ao;
    floe_table_append_options_init(&ao);
    floe_table_append_result res = {0}; /* written only on success */
    rc = floe_table_append_files(t, (const char *const *)argv + 3, (size_t)argc - 3, &ao, &res,
                                 &err);
    if (rc == 0) {
        printf("snapshot %" PRId64 " added files %" PRId64 " records %" PRId64
               " rejected %" PRId64 "\n", res.commit.snapshot_id, res.commit.added_files,
               res.commit.added_records, res.convert.rejected);
        printf("metadata %s\n", res.commit.metadata_location);
    }
    floe_table_append_result_reset(&res); /* frees what the result owns */
done:
    if (rc < 0)
        fprintf(stderr, "append: %s\n", err.msg);
    floe_table_close(t);   /* before its catalog */
    floe_catalog_close(cat);
    return rc < 0 ? 1 : 0;
}
