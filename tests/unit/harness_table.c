/*
 * harness_table.c - see harness_table.h.
 */
#include "harness_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/manifest.h"
#include "floe/scan.h"
#include "harness.h"

void harness_table_open(harness_table *e, const char *name, const char *schema_json,
                        const char *spec_json, const char *sort_json, const floe_kv *props,
                        size_t nprops) {
    floe_error err;
    floe_error_clear(&err);
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", harness_tmpdir());
    char db[4200], wh[4200];
    snprintf(db, sizeof db, "%s/catalog.db", e->dir);
    snprintf(wh, sizeof wh, "%s/wh", e->dir);
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &e->cat, &err), err);
    FLOE_IGNORE_RESULT(floe_catalog_create_namespace(e->cat, "ns", NULL, NULL, 0, &err)); /* may exist */
    floe_table_create_options co = {.spec_json = spec_json, .sort_json = sort_json,
                                    .props = props, .nprops = nprops};
    REQUIRE_OK(floe_table_create(e->cat, "ns", name, schema_json, &co, &e->t, &err), err);
}

void harness_table_close(harness_table *e) {
    floe_table_close(e->t);
    floe_catalog_close(e->cat);
    e->t = NULL;
    e->cat = NULL;
}

void harness_table_append_ndjson(harness_table *e, int64_t tag, const floe_buf *ndjson) {
    char path[4300];
    snprintf(path, sizeof path, "%s/in-%lld.ndjson", e->dir, (long long)tag);
    REQUIRE(harness_write_file(path, ndjson->data, ndjson->len) == 0);
    const char *in[1] = {path};
    floe_table_append_options o;
    floe_table_append_options_init(&o);
    o.fsync = false;
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_append_files(e->t, in, 1, &o, &r, &err), err);
    floe_table_append_result_reset(&r);
    harness_check_summary_totals(e->t);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *harness_sorted_lines(char *text, int64_t *nlines) {
    size_t n = 0, cap = 16;
    char **lines = malloc(cap * sizeof *lines);
    REQUIRE(lines != NULL);
    char *save = NULL;
    for (char *s = strtok_r(text, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
        if (n == cap) {
            char **nl = realloc(lines, (cap *= 2) * sizeof *lines);
            REQUIRE(nl != NULL);
            lines = nl;
        }
        lines[n++] = s;
    }
    qsort(lines, n, sizeof *lines, cmp_str);
    floe_buf out;
    floe_buf_init(&out, 0);
    for (size_t i = 0; i < n; i++)
        floe_buf_printf(&out, "%s\n", lines[i]);
    free(lines);
    floe_buf_append_byte(&out, 0);
    if (nlines)
        *nlines = (int64_t)n;
    return (char *)out.data;
}

char *harness_table_rows(floe_table *t, int64_t *nrows) {
    floe_error err;
    floe_error_clear(&err);
    floe_scan_plan *p = NULL;
    if (floe_table_refresh(t, &err) < 0 || floe_scan_plan_files(t, NULL, &p, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "scan: %s", err.msg);
        return NULL;
    }
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
    if (floe_scan_read(t, p, &ro, harness_buf_sink, &b, NULL, &err) < 0)
        harness_fail(__FILE__, __LINE__, "scan read: %s", err.msg);
    floe_scan_plan_free(p);
    floe_buf_append_byte(&b, 0);
    char *s = harness_sorted_lines((char *)b.data, nrows);
    floe_buf_free(&b);
    return s;
}

static const char *summary_get(const floe_snapshot *s, const char *k) {
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, k))
            return s->summary[i].value;
    return NULL;
}

void harness_check_summary_totals(floe_table *t) {
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    if (!s)
        return;
    REQUIRE(s->manifest_list != NULL);
    char *list = NULL;
    REQUIRE_OK(floe_table_resolve_path(t, s->manifest_list, &list, &err), err);
    floe_arena arena;
    floe_arena_init(&arena, 64 * 1024);
    floe_manifest_list ml;
    floe_manifest_list_read_options lo = {.has_snapshot_id = true, .snapshot_id = s->snapshot_id};
    REQUIRE_OK(floe_manifest_list_read(NULL, list, &lo, &arena, &ml, &err), err);
    floe_free(list);
    /* records, files-size, data-files, delete-files, position-deletes, equality-deletes */
    long long got[6] = {0};
    for (size_t i = 0; i < ml.nfiles; i++) {
        char *path = NULL;
        REQUIRE_OK(floe_table_resolve_path(t, ml.files[i].manifest_path, &path, &err), err);
        floe_manifest_read_options ro = {.manifest = &ml.files[i],
                                         .allow_deletion_vectors = true};
        floe_manifest_reader *r = NULL;
        REQUIRE_OK(floe_manifest_reader_open(NULL, path, &ro, &r, &err), err);
        floe_free(path);
        const floe_manifest_entry *e;
        int rc;
        while ((rc = floe_manifest_reader_next(r, &e, &err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            got[1] += e->file.file_size_in_bytes;
            if (e->file.content == FLOE_CONTENT_DATA) {
                got[0] += e->file.record_count;
                got[2]++;
            } else {
                got[3]++;
                got[e->file.content == FLOE_CONTENT_POSITION_DELETES ? 4 : 5] +=
                    e->file.record_count;
            }
        }
        CHECK_OK(rc < 0 ? rc : 0, err);
        floe_manifest_reader_close(r);
    }
    floe_arena_reset(&arena);
    static const char *const keys[6] = {"total-records",    "total-files-size",
                                        "total-data-files", "total-delete-files",
                                        "total-position-deletes", "total-equality-deletes"};
    for (int k = 0; k < 6; k++) {
        const char *v = summary_get(s, keys[k]);
        char want[32];
        snprintf(want, sizeof want, "%lld", got[k]);
        if (!v || strcmp(v, want))
            harness_fail(__FILE__, __LINE__,
                         "snapshot %lld (%s): summary %s is %s, the manifests give %s",
                         (long long)s->snapshot_id, s->operation ? s->operation : "?", keys[k],
                         v ? v : "(absent)", want);
    }
}
