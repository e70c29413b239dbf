/*
 * plan_gen.c - synthetic table for bench/plan: FILES data files in MANIFESTS manifests,
 * one partition value per manifest (identity(part)), id bounds per file, in a SQLite
 * catalog table db.plan. Data files do not exist: planning only reads metadata.
 *
 *   plan_gen create WAREHOUSE MANIFESTS FILES_PER_MANIFEST
 *   plan_gen merge WAREHOUSE     one append with commit-time merging forced (every
 *                                manifest folded into 8 MB ones), as a real commit does it
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/manifest.h"
#include "floe/table.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"part\",\"required\":true,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"payload\",\"required\":false,\"type\":\"string\"}]}";
static const char *SPEC =
    "{\"fields\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"part\"}]}";

static void die(const floe_error *e, const char *what) {
    fprintf(stderr, "plan_gen: %s: %s\n", what, e->msg);
    exit(1);
}

typedef struct gen_ctx {
    const char *list;
    int64_t snapshot_id;
} gen_ctx;

static int add_snapshot(void *ctx, floe_metadata_builder *b, floe_error *err) {
    gen_ctx *g = ctx;
    floe_kv summary[] = {{"floe.bench", "plan"}};
    floe_snapshot_new s = {.snapshot_id = g->snapshot_id, .operation = "append",
                           .manifest_list = g->list, .summary = summary, .n_summary = 1,
                           .schema_id = -1};
    return floe_metadata_builder_add_snapshot(b, &s, NULL, NULL, err);
}

/* A fake data file of partition `part` with ids [lo, hi]. */
static void fake_file(floe_data_file *f, char *path, size_t pn, int64_t k, floe_value *part,
                      uint8_t *lo, uint8_t *hi, floe_column_bound *lb, floe_column_bound *ub,
                      floe_column_count *counts) {
    memset(f, 0, sizeof *f);
    snprintf(path, pn, "s3://bench/plan/data/part=%d/f%08" PRId64 ".parquet", part->v.i32, k);
    f->content = FLOE_CONTENT_DATA;
    f->file_path = path;
    f->file_format = "parquet";
    f->partition = part;
    f->npartition = 1;
    f->record_count = 1000;
    f->file_size_in_bytes = 1 << 20;
    floe_store_le64(lo, (uint64_t)(k * 1000));
    floe_store_le64(hi, (uint64_t)(k * 1000 + 999));
    lb[0] = (floe_column_bound){1, lo, 8};
    ub[0] = (floe_column_bound){1, hi, 8};
    f->lower_bounds = (floe_bound_map){true, lb, 1};
    f->upper_bounds = (floe_bound_map){true, ub, 1};
    counts[0] = (floe_column_count){1, 1000};
    counts[1] = (floe_column_count){1, 0};
    f->value_counts = (floe_count_map){true, &counts[0], 1};
    f->null_value_counts = (floe_count_map){true, &counts[1], 1};
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: plan_gen create WAREHOUSE MANIFESTS FILES | merge WAREHOUSE\n");
        return 2;
    }
    floe_error err;
    floe_error_clear(&err);
    const char *wh = argv[2];
    char db[4096];
    snprintf(db, sizeof db, "%s/catalog.db", wh);
    floe_catalog *c = NULL;
    if (floe_catalog_open_sqlite(NULL, db, "bench", wh, &c, &err) < 0)
        die(&err, "catalog");
    floe_table *t = NULL;
    if (!strcmp(argv[1], "merge")) {
        if (floe_table_load(c, "db", "plan", &t, &err) < 0)
            die(&err, "load");
        floe_append *a = NULL;
        floe_data_file f;
        char path[256];
        uint8_t lo[8], hi[8];
        floe_column_bound lb, ub;
        floe_column_count counts[2];
        floe_value part = floe_value_int(-1);
        fake_file(&f, path, sizeof path, 999999999, &part, lo, hi, &lb, &ub, counts);
        floe_append_result res;
        if (floe_append_new(t, &a, &err) < 0 || floe_append_add_file(a, &f, &err) < 0)
            die(&err, "append");
        floe_append_set_merge(a, 1, 8 << 20, 2);
        int64_t t0 = floe_now_ns();
        if (floe_append_commit(a, &res, &err) < 0)
            die(&err, "merge commit");
        printf("{\"manifests\":%" PRId64 ",\"merged\":%" PRId64 ",\"seconds\":%.2f}\n",
               res.manifests, res.manifests_merged, (double)(floe_now_ns() - t0) / 1e9);
        floe_append_result_reset(&res);
        floe_append_free(a);
        floe_table_close(t);
        floe_catalog_close(c);
        return 0;
    }
    if (argc < 5)
        return 2;
    int64_t nman = atoll(argv[3]), per = atoll(argv[4]);
    if (floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err) < 0 && err.code != FLOE_EEXISTS)
        die(&err, "namespace");
    floe_kv props[] = {{"commit.manifest-merge.enabled", "false"}};
    floe_table_create_options co = {.spec_json = SPEC, .props = props, .nprops = 1};
    if (floe_table_create(c, "db", "plan", SCHEMA, &co, &t, &err) < 0)
        die(&err, "create");
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    if (floe_schema_parse(SCHEMA, strlen(SCHEMA), &schema, &err) < 0 ||
        floe_partition_spec_parse_json(floe_table_metadata_default_spec(m)->json,
                                       strlen(floe_table_metadata_default_spec(m)->json), schema,
                                       &spec, &err) < 0)
        die(&err, "schema");
    int64_t snap = floe_metadata_new_snapshot_id();
    char md[4096];
    snprintf(md, sizeof md, "%s/metadata", m->location);
    floe_arena arena;
    floe_arena_init(&arena, 1 << 20);
    floe_manifest_file *files = calloc((size_t)nman, sizeof *files);
    floe_output_options oo = {.fsync = false};
    for (int64_t i = 0; i < nman; i++) {
        floe_manifest_write_options o;
        floe_manifest_write_options_init(&o);
        o.schema = schema;
        o.spec = spec;
        o.has_snapshot_id = true;
        o.snapshot_id = snap;
        char *p = floe_manifest_path_new(md, NULL, (int)i);
        floe_manifest_writer *w = NULL;
        if (floe_manifest_writer_open(NULL, p, &o, &w, &err) < 0)
            die(&err, "manifest");
        floe_value part = floe_value_int((int32_t)i);
        for (int64_t k = 0; k < per; k++) {
            floe_data_file f;
            char path[256];
            uint8_t lo[8], hi[8];
            floe_column_bound lb, ub;
            floe_column_count counts[2];
            fake_file(&f, path, sizeof path, i * per + k, &part, lo, hi, &lb, &ub, counts);
            if (floe_manifest_writer_add(w, &f, -1, &err) < 0)
                die(&err, "entry");
        }
        if (floe_manifest_writer_close(w, &oo, &arena, &files[i], &err) < 0)
            die(&err, "close");
        floe_free(p);
    }
    char *list = floe_manifest_list_path_new(md, snap, 1, NULL);
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = snap;
    lo.sequence_number = 1;
    if (floe_manifest_list_write(NULL, list, &lo, files, (size_t)nman, &oo, NULL, &err) < 0)
        die(&err, "list");
    gen_ctx g = {.list = list, .snapshot_id = snap};
    if (floe_table_commit(t, add_snapshot, &g, &err) < 0)
        die(&err, "commit");
    printf("{\"manifests\":%" PRId64 ",\"files\":%" PRId64 "}\n", nman, nman * per);
    floe_free(list);
    free(files);
    floe_arena_reset(&arena);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    floe_table_close(t);
    floe_catalog_close(c);
    return 0;
}
