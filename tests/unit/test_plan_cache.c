/*
 * test_plan_cache.c - the scan planner's shortcuts change nothing in the plan. The planner
 * parses each distinct manifest Avro schema once for all manifests (a schema cache), reads
 * only the manifests that survive pruning, and drops the planned data files' column metrics
 * unless asked to keep them. For conformance tables of other writers (several specs and
 * schemas among them: evolved partition specs, renamed columns, v1 and v2, Spark, Java,
 * PyIceberg), the plan with the streaming decoder and the cache is compared, task by task,
 * with the plan by the generic decoder keeping metrics (files, order, specs, sequence
 * numbers, partitions, delete files paired), and its data files with a serial reference:
 * the manifest list and every manifest opened on their own (no cache, generic decoder),
 * live data files in list order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/manifest.h"
#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"

static const char *const TABLES[] = {
    "duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults",
    "duckdb-iceberg/expression_filter",
    "duckdb-iceberg/hive_partitioned_table",
    "duckdb-iceberg/iceberg/lineitem_iceberg_gz",
    "duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1",
    "duckdb-iceberg/is_null_is_not_null",
    "duckdb-iceberg/null_stats/default/test_nulls",
    "duckdb-iceberg/partition_bigint",
    "duckdb-iceberg/partition_decimal_integer",
    "duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz",
    "duckdb-iceberg/uuid",
    "icebird/java_bunnies",
    "icebird/spark_bunnies",
    "icebird/spark_rename_column",
};

static bool metrics_present(const floe_data_file *f) {
    return f->column_sizes.present || f->value_counts.present || f->null_value_counts.present ||
           f->nan_value_counts.present || f->lower_bounds.present || f->upper_bounds.present;
}

static bool same_partition(const floe_data_file *a, const floe_data_file *b) {
    if (a->npartition != b->npartition)
        return false;
    for (size_t i = 0; i < a->npartition; i++) {
        const floe_value *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null != y->is_null || (!x->is_null && !floe_value_equal(x, y)))
            return false;
    }
    return true;
}

/* Plan p (streaming, cached, no metrics) against q (generic, metrics kept). */
static void compare_plans(const char *dir, const floe_scan_plan *p, const floe_scan_plan *q,
                          size_t *with_metrics) {
    CHECK_EQ_INT(p->ntasks, q->ntasks);
    CHECK_EQ_INT(p->records, q->records);
    CHECK_EQ_INT(p->stats.manifests_read, q->stats.manifests_read);
    CHECK_EQ_INT(p->stats.manifests_skipped, q->stats.manifests_skipped);
    for (size_t i = 0; i < p->ntasks && i < q->ntasks; i++) {
        const floe_scan_task *a = &p->tasks[i], *b = &q->tasks[i];
        bool same = !strcmp(a->file->file_path, b->file->file_path) &&
                    a->spec_id == b->spec_id && (a->spec == NULL) == (b->spec == NULL) &&
                    a->data_sequence_number == b->data_sequence_number &&
                    a->file->record_count == b->file->record_count &&
                    a->file->file_size_in_bytes == b->file->file_size_in_bytes &&
                    a->file->nsplit_offsets == b->file->nsplit_offsets &&
                    same_partition(a->file, b->file) && a->ndeletes == b->ndeletes;
        for (size_t k = 0; same && k < a->ndeletes; k++)
            same = !strcmp(a->deletes[k]->file_path, b->deletes[k]->file_path) &&
                   a->delete_sequence_numbers[k] == b->delete_sequence_numbers[k];
        if (!same) {
            harness_fail(__FILE__, __LINE__, "%s: task %zu differs: %s (spec %d, seq %" PRId64
                         ", %zu deletes) against %s (spec %d, seq %" PRId64 ", %zu deletes)",
                         dir, i, a->file->file_path, (int)a->spec_id, a->data_sequence_number,
                         a->ndeletes, b->file->file_path, (int)b->spec_id,
                         b->data_sequence_number, b->ndeletes);
            return;
        }
        if (metrics_present(a->file))
            harness_fail(__FILE__, __LINE__, "%s: task %zu kept its column metrics unasked",
                         dir, i);
        *with_metrics += metrics_present(b->file);
    }
}

/* The live data files of the current snapshot, manifest by manifest in list order, each
 * manifest opened on its own; compared with the plan's tasks in order. */
static void compare_reference(floe_table *t, const char *dir, const floe_scan_plan *p) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_snapshot *snap = floe_table_metadata_current_snapshot(m);
    if (!snap) {
        CHECK_EQ_INT(p->ntasks, 0);
        return;
    }
    floe_error err;
    floe_error_clear(&err);
    floe_arena arena;
    floe_arena_init(&arena, 64 * 1024);
    char *uri = NULL;
    floe_manifest_list list = {0};
    floe_manifest_list_read_options lo = {.allow_missing_field_ids = true};
    size_t k = 0;
    /* a v1 snapshot may name its manifests without a list */
    size_t n = snap->manifest_list ? 0 : snap->n_manifests;
    if (snap->manifest_list &&
        (floe_table_resolve_path(t, snap->manifest_list, &uri, &err) < 0 ||
         floe_manifest_list_read(floe_table_io(t), uri, &lo, &arena, &list, &err) < 0)) {
        harness_fail(__FILE__, __LINE__, "%s: manifest list: %s", dir, err.msg);
        goto out;
    }
    if (snap->manifest_list)
        n = list.nfiles;
    for (size_t i = 0; i < n; i++) {
        char *mu = NULL;
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options ro = {.manifest = snap->manifest_list ? &list.files[i] : NULL,
                                         .allow_missing_field_ids = true};
        const char *path = snap->manifest_list ? list.files[i].manifest_path
                                               : snap->manifests[i];
        if (floe_table_resolve_path(t, path, &mu, &err) < 0 ||
            floe_manifest_reader_open(floe_table_io(t), mu, &ro, &r, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s: %s", dir, path, err.msg);
            free(mu);
            goto out;
        }
        free(mu);
        const floe_manifest_entry *e;
        int rc;
        while ((rc = floe_manifest_reader_next(r, &e, &err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED || e->file.content != FLOE_CONTENT_DATA)
                continue;
            if (k >= p->ntasks || strcmp(p->tasks[k].file->file_path, e->file.file_path)) {
                harness_fail(__FILE__, __LINE__, "%s: reference file %zu is %s, the plan has "
                             "%s", dir, k, e->file.file_path,
                             k < p->ntasks ? p->tasks[k].file->file_path : "no more");
                floe_manifest_reader_close(r);
                goto out;
            }
            k++;
        }
        if (rc < 0)
            harness_fail(__FILE__, __LINE__, "%s: %s", dir, err.msg);
        floe_manifest_reader_close(r);
    }
    CHECK_EQ_INT(k, p->ntasks);
out:
    free(uri);
    floe_arena_reset(&arena);
}

TEST(cached_plans_equal_generic_plans) {
    const char *ice = harness_conformance("iceberg");
    size_t tables = 0, tasks = 0, with_metrics = 0;
    for (size_t ci = 0; ci < sizeof TABLES / sizeof TABLES[0]; ci++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", ice, TABLES[ci]);
        floe_table *t = NULL;
        floe_error err;
        floe_error_clear(&err);
        if (floe_table_open_path(path, NULL, &t, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s", TABLES[ci], err.msg);
            continue;
        }
        floe_scan_plan *p = NULL, *q = NULL;
        floe_scan_options so = {.allow_missing_field_ids = true};
        floe_scan_options keep = {.allow_missing_field_ids = true, .keep_metrics = true};
        int rc = floe_scan_plan_files(t, &so, &p, &err);
        floe_manifest_set_generic_decoder(true);
        if (rc == 0)
            rc = floe_scan_plan_files(t, &keep, &q, &err);
        floe_manifest_set_generic_decoder(false);
        if (rc < 0) {
            harness_fail(__FILE__, __LINE__, "%s: plan: %s", TABLES[ci], err.msg);
        } else {
            compare_plans(TABLES[ci], p, q, &with_metrics);
            compare_reference(t, TABLES[ci], p);
            tables++;
            tasks += p->ntasks;
        }
        floe_scan_plan_free(p);
        floe_scan_plan_free(q);
        floe_table_close(t);
    }
    CHECK_EQ_INT(tables, sizeof TABLES / sizeof TABLES[0]);
    /* the comparison means something: files were planned, and metrics kept when asked */
    CHECK(tasks > 20);
    CHECK(with_metrics > 0);
    printf("  %zu tables, %zu tasks compared, %zu with metrics kept when asked\n", tables,
           tasks, with_metrics);
}

int main(void) {
    RUN(cached_plans_equal_generic_plans);
    return harness_finish();
}
