/*
 * eq_deletes.c - equality delete files for tests (eq_deletes.h): a one-column Parquet file
 * of the key values (spec "Equality Delete Files": the columns of the equality ids,
 * by field id), with full metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eq_deletes.h"
#include "floe/append.h"
#include "floe/column.h"
#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/table_metadata.h"

int eq_delete_file_write(floe_table *t, const floe_field *f, const char *values,
                         floe_arena *arena, floe_data_file *out, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const char *type = f->type == FLOE_TYPE_STRING ? "string"
                       : f->type == FLOE_TYPE_INT  ? "int"
                       : f->type == FLOE_TYPE_LONG ? "long"
                                                   : NULL;
    if (!type)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: not a string, int or long",
                              f->name);
    char sj[512];
    snprintf(sj, sizeof sj,
             "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":%d,\"name\":\"%s\","
             "\"required\":false,\"type\":\"%s\"}]}",
             (int)f->id, f->name, type);
    floe_schema *ds = NULL;
    floe_metrics_config *mc = NULL;
    floe_pq_writer *w = NULL;
    floe_batch b;
    memset(&b, 0, sizeof b);
    char *dir = NULL, *phys = NULL, *rec = NULL;
    char *vals = strdup(values);
    floe_pq_file_info fi;
    bool have_fi = false;
    int rc = floe_schema_parse(sj, strlen(sj), &ds, err);
    if (rc == 0)
        rc = floe_table_data_dir(t, &dir, err);
    char uuid[37], name[64];
    floe_uuid4(uuid);
    snprintf(name, sizeof name, "%s-eq-deletes.parquet", uuid);
    if (rc == 0 && (!vals || !(rec = floe_io_join(dir, name))))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0)
        rc = floe_table_resolve_path(t, rec, &phys, err);
    floe_pq_write_options po;
    if (rc == 0)
        rc = floe_table_parquet_options(m, &po, err);
    if (rc == 0)
        rc = floe_pq_writer_open(floe_table_io(t), phys, ds, &po, &w, err);
    if (rc == 0 && floe_batch_init(&b, ds) < 0)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (char *save = NULL, *v = rc == 0 ? strtok_r(vals, ",", &save) : NULL; v && rc == 0;
         v = strtok_r(NULL, ",", &save)) {
        int64_t l = strtoll(v, NULL, 10);
        int32_t i = (int32_t)l;
        int prc = f->type == FLOE_TYPE_STRING ? floe_colbuf_push_value(&b.cols[0], 0, v, strlen(v))
                  : f->type == FLOE_TYPE_INT  ? floe_colbuf_push_value(&b.cols[0], 0, &i, 4)
                                              : floe_colbuf_push_value(&b.cols[0], 0, &l, 8);
        if (prc < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        b.nrows++;
    }
    if (rc == 0)
        rc = floe_pq_writer_write_batch(w, &b, err);
    if (rc == 0) {
        rc = floe_pq_writer_close(w, &fi, err);
        w = NULL;
        have_fi = rc == 0;
    }
    const floe_kv full = {FLOE_PROP_METRICS_DEFAULT, "full"};
    if (rc == 0)
        rc = floe_metrics_config_new(&full, 1, ds, NULL, &mc, err);
    memset(out, 0, sizeof *out);
    if (rc == 0)
        rc = floe_data_file_from_parquet(&fi, mc, arena, out, err);
    if (rc == 0) {
        int32_t *ids = floe_arena_alloc(arena, sizeof *ids);
        out->file_path = floe_arena_strdup(arena, rec);
        if (!ids || !out->file_path)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        else {
            ids[0] = f->id;
            out->content = FLOE_CONTENT_EQUALITY_DELETES;
            out->has_equality_ids = true;
            out->equality_ids = ids;
            out->nequality_ids = 1;
        }
    }
    floe_pq_writer_abort(w);
    if (have_fi)
        floe_pq_file_info_free(&fi);
    floe_batch_free(&b);
    floe_metrics_config_free(mc);
    floe_schema_free(ds);
    floe_free(dir);
    floe_free(phys);
    floe_free(rec);
    free(vals);
    return rc;
}

