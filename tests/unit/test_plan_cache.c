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
 * live data files in list order. Manifests decoded by several threads give the plan of
 * one thread: for those tables, and for a table of many manifests collected and streamed,
 * with an error in a manifest in the middle named the same way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_table.h"

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
        floe_scan_options keep = {.allow_missing_field_ids = true, .keep_metrics = true,
                                  .manifest_threads = 1};
        floe_scan_options threads = {.allow_missing_field_ids = true, .manifest_threads = 3};
        floe_scan_plan *r = NULL;
        int rc = floe_scan_plan_files(t, &so, &p, &err);
        floe_manifest_set_generic_decoder(true);
        if (rc == 0)
            rc = floe_scan_plan_files(t, &keep, &q, &err);
        floe_manifest_set_generic_decoder(false);
        if (rc == 0)
            rc = floe_scan_plan_files(t, &threads, &r, &err);
        if (rc < 0) {
            harness_fail(__FILE__, __LINE__, "%s: plan: %s", TABLES[ci], err.msg);
        } else {
            compare_plans(TABLES[ci], p, q, &with_metrics);
            compare_plans(TABLES[ci], r, q, &with_metrics);
            compare_reference(t, TABLES[ci], p);
            tables++;
            tasks += p->ntasks;
        }
        floe_scan_plan_free(p);
        floe_scan_plan_free(q);
        floe_scan_plan_free(r);
        floe_table_close(t);
    }
    CHECK_EQ_INT(tables, sizeof TABLES / sizeof TABLES[0]);
    /* the comparison means something: files were planned, and metrics kept when asked */
    CHECK(tasks > 20);
    CHECK(with_metrics > 0);
    printf("  %zu tables, %zu tasks compared, %zu with metrics kept when asked\n", tables,
           tasks, with_metrics);
}

/* A streamed plan as text: one line per task (path, sequence number, deletes). */
static int stream_line(void *ctx, const floe_scan_task *t, floe_error *err) {
    (void)err;
    floe_buf *b = ctx;
    char line[512];
    snprintf(line, sizeof line, "%s %" PRId64 " %zu\n", t->file->file_path,
             t->data_sequence_number, t->ndeletes);
    return floe_buf_append(b, line, strlen(line));
}

static char *plan_text(const floe_scan_plan *p) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (size_t i = 0; i < p->ntasks; i++)
        REQUIRE(stream_line(&b, &p->tasks[i], NULL) == 0);
    REQUIRE(floe_buf_append(&b, "", 1) == 0);
    return (char *)b.data;
}

/* Plan t with n threads, collected and streamed; the collected plan's text (or the
 * error) in *out, and the streamed one must say the same. */
static void plan_with(floe_table *t, int n, const char *where, char **out) {
    floe_scan_options so = {.manifest_threads = n, .where = where};
    floe_scan_plan *p = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_scan_plan_files(t, &so, &p, &err) < 0) {
        *out = floe_strdup(err.msg);
    } else {
        *out = plan_text(p);
        floe_scan_plan_free(p);
    }
    floe_buf sb;
    floe_buf_init(&sb, 0);
    floe_error_clear(&err);
    p = NULL;
    if (floe_scan_plan_stream(t, &so, stream_line, &sb, &p, &err) < 0) {
        /* a failed stream may have handed out the files before the failure */
        CHECK_EQ_STR(err.msg, *out);
    } else {
        REQUIRE(floe_buf_append(&sb, "", 1) == 0);
        CHECK_EQ_STR((char *)sb.data, *out);
    }
    floe_scan_plan_free(p);
    floe_buf_free(&sb);
}

TEST(threaded_plans_equal_serial_plans) {
    harness_table e;
    floe_kv props[] = {{"commit.manifest-merge.enabled", "false"}};
    harness_table_open(&e, "many",
                       "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                       "{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":\"long\"},"
                       "{\"id\":2,\"name\":\"part\",\"required\":false,\"type\":\"int\"}]}",
                       "{\"spec-id\":0,\"fields\":[{\"source-id\":2,\"field-id\":1000,"
                       "\"name\":\"part\",\"transform\":\"identity\"}]}",
                       NULL, props, 1);
    enum { APPENDS = 40 };
    for (int i = 0; i < APPENDS; i++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        for (int r = 0; r < 1 + i % 3; r++) {
            char line[96];
            snprintf(line, sizeof line, "{\"id\":%d,\"part\":%d}\n", i * 10 + r, i % 5 + r);
            REQUIRE(floe_buf_append(&b, line, strlen(line)) == 0);
        }
        harness_table_append_ndjson(&e, i, &b);
        floe_buf_free(&b);
    }
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    const char *wheres[] = {NULL, "part = 3", "id >= 200 AND part < 2"};
    for (size_t w = 0; w < 3; w++) {
        char *serial = NULL;
        plan_with(e.t, 1, wheres[w], &serial);
        CHECK(strchr(serial, '\n') != NULL); /* files were planned */
        int counts[] = {2, 5, 64, 0};
        for (size_t k = 0; k < 4; k++) {
            char *other = NULL;
            plan_with(e.t, counts[k], wheres[w], &other);
            CHECK_EQ_STR(other, serial);
            floe_free(other);
        }
        floe_free(serial);
    }

    /* a manifest in the middle cut short: the same error, whoever decoded it */
    const floe_snapshot *snap =
        floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    REQUIRE(snap && snap->manifest_list);
    floe_arena arena;
    floe_arena_init(&arena, 4096);
    floe_manifest_list list = {0};
    char *uri = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, snap->manifest_list, &uri, &err), err);
    REQUIRE_OK(floe_manifest_list_read(floe_table_io(e.t), uri, NULL, &arena, &list, &err), err);
    free(uri);
    CHECK_EQ_INT(list.nfiles, APPENDS);
    char *mpath = floe_io_local_path(list.files[list.nfiles / 2].manifest_path);
    REQUIRE(mpath != NULL);
    FILE *f = fopen(mpath, "r+b");
    REQUIRE(f != NULL);
    REQUIRE(fseek(f, 0, SEEK_END) == 0);
    long size = ftell(f);
    REQUIRE(ftruncate(fileno(f), size / 2) == 0);
    fclose(f);
    char *serial = NULL;
    plan_with(e.t, 1, NULL, &serial);
    CHECK(strstr(serial, mpath) != NULL);
    for (int n = 2; n <= 8; n *= 2) {
        char *other = NULL;
        plan_with(e.t, n, NULL, &other);
        CHECK_EQ_STR(other, serial);
        floe_free(other);
    }
    floe_free(serial);
    floe_free(mpath);
    floe_arena_reset(&arena);
    harness_table_close(&e);
}

int main(void) {
    RUN(cached_plans_equal_generic_plans);
    RUN(threaded_plans_equal_serial_plans);
    return harness_finish();
}
