/*
 * scan_filter.c - plan a scan of an Iceberg table with a row filter and print its rows.
 *
 *     scan_filter CATALOG.db WAREHOUSE_DIR NAMESPACE TABLE 'FILTER'
 *
 * The filter is floe's --where language, e.g. "id >= 2 AND event = 'click'". Planning
 * prunes manifests and files by partition values and column metrics; reading applies
 * deletes and the filter to each row and prints rows as NDJSON.
 * Build: cc scan_filter.c $(pkg-config --cflags --libs floe)
 */
#include <floe/floe.h>
#include <inttypes.h>
#include <stdio.h>

static int print_rows(void *ctx, const void *p, size_t n) {
    (void)ctx;
    return fwrite(p, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s CATALOG.db WAREHOUSE_DIR NAMESPACE TABLE FILTER\n", argv[0]);
        return 2;
    }
    floe_error err;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    int rc = floe_catalog_open_sqlite(NULL, argv[1], "default", argv[2], &cat, &err);
    if (rc == 0)
        rc = floe_table_load(cat, argv[3], argv[4], &t, &err);
    floe_scan_options so = {.where = argv[5]};
    if (rc == 0)
        rc = floe_scan_plan_files(t, &so, &plan, &err);
    if (rc == 0) {
        fprintf(stderr, "plan: snapshot %" PRId64 ", %zu data files, %" PRId64
                " skipped by metrics\n", plan->snapshot_id, plan->ntasks,
                plan->stats.files_skipped_metrics);
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
        floe_scan_read_stats st = {0};
        rc = floe_scan_read(t, plan, &ro, print_rows, NULL, &st, &err);
        if (rc == 0)
            fprintf(stderr, "read: %" PRId64 " rows out of %" PRId64 "\n", st.rows_out,
                    st.rows_read);
    }
    if (rc < 0)
        fprintf(stderr, "scan: %s\n", err.msg);
    floe_scan_plan_free(plan); /* the plan owns its tasks; free it before the table */
    floe_table_close(t);
    floe_catalog_close(cat);
    return rc < 0 ? 1 : 0;
}
