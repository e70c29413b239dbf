/*
 * eq_deletes.c - equality delete files for tests (eq_deletes.h): a Parquet file of the key
 * values (spec "Equality Delete Files": the columns of the equality ids, by field id), with
 * full metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eq_deletes.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/column.h"
#include "floe/io.h"
#include "floe/parquet.h"
#include "floe/table_metadata.h"

int eq_table_open(const char *db, const char *catalog, const char *warehouse,
                  const char *ident, floe_catalog **cat, floe_table **t, floe_schema **schema,
                  floe_error *err) {
    const char *dot = strchr(ident, '.');
    if (!dot || dot - ident >= 256)
        return floe_error_set(err, FLOE_EINVALID, "%s: not NS.NAME", ident);
    char ns[256];
    snprintf(ns, sizeof ns, "%.*s", (int)(dot - ident), ident);
    int rc = floe_catalog_open_sqlite(NULL, db, catalog, warehouse, cat, err);
    if (rc == 0)
        rc = floe_table_load(*cat, ns, dot + 1, t, err);
    const floe_metadata_schema *ms =
        rc == 0 ? floe_table_metadata_current_schema(floe_table_metadata_get(*t)) : NULL;
    if (rc == 0 && !ms)
        rc = floe_error_set(err, FLOE_ECORRUPT, "%s: no current schema", ident);
    if (rc == 0)
        rc = floe_schema_parse(ms->json, strlen(ms->json), schema, err);
    return rc;
}

int table_file_write(floe_table *t, const floe_schema *s, const floe_batch *b,
                     const char *suffix, floe_arena *arena, floe_data_file *out,
                     floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_metrics_config *mc = NULL;
    floe_pq_writer *w = NULL;
    char *dir = NULL, *phys = NULL, *rec = NULL;
    floe_pq_file_info fi;
    bool have_fi = false;
    char uuid[37], name[128];
    floe_uuid4(uuid);
    snprintf(name, sizeof name, "%s-%s.parquet", uuid, suffix);
    int rc = floe_table_data_dir(t, &dir, err);
    if (rc == 0 && !(rec = floe_io_join(dir, name)))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0)
        rc = floe_table_resolve_path(t, rec, &phys, err);
    floe_pq_write_options po;
    if (rc == 0)
        rc = floe_table_parquet_options(m, &po, err);
    if (rc == 0)
        rc = floe_pq_writer_open(floe_table_io(t), phys, s, &po, &w, err);
    if (rc == 0)
        rc = floe_pq_writer_write_batch(w, b, err);
    if (rc == 0) {
        rc = floe_pq_writer_close(w, &fi, err);
        w = NULL;
        have_fi = rc == 0;
    }
    const floe_kv full = {FLOE_PROP_METRICS_DEFAULT, "full"};
    if (rc == 0)
        rc = floe_metrics_config_new(&full, 1, s, NULL, &mc, err);
    memset(out, 0, sizeof *out);
    if (rc == 0)
        rc = floe_data_file_from_parquet(&fi, mc, arena, out, err);
    if (rc == 0 && !(out->file_path = floe_arena_strdup(arena, rec)))
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_pq_writer_abort(w);
    if (have_fi)
        floe_pq_file_info_free(&fi);
    floe_metrics_config_free(mc);
    floe_free(dir);
    floe_free(phys);
    floe_free(rec);
    return rc;
}

int eq_delete_file_write(floe_table *t, const floe_field *f, const char *values,
                         floe_arena *arena, floe_data_file *out, floe_error *err) {
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
    floe_batch b;
    memset(&b, 0, sizeof b);
    char *vals = strdup(values);
    int rc = vals ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0)
        rc = floe_schema_parse(sj, strlen(sj), &ds, err);
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
        rc = table_file_write(t, ds, &b, "eq-deletes", arena, out, err);
    if (rc == 0) {
        int32_t *ids = floe_arena_alloc(arena, sizeof *ids);
        if (!ids)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        else {
            ids[0] = f->id;
            out->content = FLOE_CONTENT_EQUALITY_DELETES;
            out->has_equality_ids = true;
            out->equality_ids = ids;
            out->nequality_ids = 1;
        }
    }
    floe_batch_free(&b);
    floe_schema_free(ds);
    free(vals);
    return rc;
}

static const char *rows_type(floe_type_id t) {
    return t == FLOE_TYPE_STRING ? "string"
           : t == FLOE_TYPE_INT  ? "int"
           : t == FLOE_TYPE_LONG ? "long"
           : t == FLOE_TYPE_DOUBLE ? "double"
           : t == FLOE_TYPE_DATE ? "date"
                                 : NULL;
}

/* One field's text v (NUL-ended) into column c of type t; \N is a null. */
static int rows_push(floe_colbuf *c, floe_type_id t, const char *v) {
    if (!strcmp(v, "\\N"))
        return floe_colbuf_push_null(c, 0, 0);
    if (t == FLOE_TYPE_STRING)
        return floe_colbuf_push_value(c, 0, v, strlen(v));
    if (t == FLOE_TYPE_DOUBLE) {
        double d = strtod(v, NULL);
        return floe_colbuf_push_value(c, 0, &d, 8);
    }
    int64_t l = strtoll(v, NULL, 10);
    int32_t i = (int32_t)l;
    return t == FLOE_TYPE_LONG ? floe_colbuf_push_value(c, 0, &l, 8)
                               : floe_colbuf_push_value(c, 0, &i, 4);
}

int eq_delete_rows_write(floe_table *t, const floe_schema *s, const char *columns,
                         const char *rows, floe_arena *arena, floe_data_file *out,
                         floe_error *err) {
    enum { MAX_COLS = 8 };
    const floe_field *f[MAX_COLS];
    size_t nf = 0;
    char sj[4096];
    size_t at = (size_t)snprintf(sj, sizeof sj, "{\"type\":\"struct\",\"schema-id\":0,"
                                                "\"fields\":[");
    char *cols = strdup(columns), *text = strdup(rows);
    floe_schema *ds = NULL;
    floe_batch b;
    memset(&b, 0, sizeof b);
    int rc = cols && text ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (char *save = NULL, *c = rc == 0 ? strtok_r(cols, ",", &save) : NULL; c && rc == 0;
         c = strtok_r(NULL, ",", &save)) {
        const floe_field *x = floe_schema_find_path(s, c);
        if (!x || x->parent || !rows_type(x->type) || nf == MAX_COLS) {
            rc = floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: not a top-level string, "
                                "int, long, double or date column", c);
            break;
        }
        f[nf++] = x;
        at += (size_t)snprintf(sj + at, sizeof sj - at,
                               "%s{\"id\":%d,\"name\":\"%s\",\"required\":false,\"type\":\"%s\"}",
                               nf > 1 ? "," : "", (int)x->id, x->name, rows_type(x->type));
    }
    if (rc == 0 && (nf == 0 || at + 3 > sizeof sj))
        rc = floe_error_set(err, FLOE_EINVALID, "bad column list %s", columns);
    if (rc == 0) {
        snprintf(sj + at, sizeof sj - at, "]}");
        rc = floe_schema_parse(sj, strlen(sj), &ds, err);
    }
    if (rc == 0 && floe_batch_init(&b, ds) < 0)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* lines; the empty text after a last newline is no row */
    for (char *line = text; rc == 0 && line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        char *field = line;
        for (size_t k = 0; k < nf && rc == 0; k++) {
            char *tab = strchr(field, '\t');
            if ((tab == NULL) != (k + 1 == nf)) {
                rc = floe_error_set(err, FLOE_EINVALID, "row '%s': not %zu fields", line, nf);
                break;
            }
            if (tab)
                *tab = 0;
            if (rows_push(&b.cols[k], f[k]->type, field) < 0)
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            field = tab ? tab + 1 : NULL;
        }
        b.nrows++;
        line = nl ? nl + 1 : NULL;
    }
    if (rc == 0)
        rc = table_file_write(t, ds, &b, "eq-deletes", arena, out, err);
    if (rc == 0) {
        int32_t *ids = floe_arena_alloc(arena, nf * sizeof *ids);
        if (!ids)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        for (size_t k = 0; rc == 0 && k < nf; k++)
            ids[k] = f[k]->id;
        if (rc == 0) {
            out->content = FLOE_CONTENT_EQUALITY_DELETES;
            out->has_equality_ids = true;
            out->equality_ids = ids;
            out->nequality_ids = nf;
        }
    }
    floe_batch_free(&b);
    floe_schema_free(ds);
    free(cols);
    free(text);
    return rc;
}
