/*
 * rewrite_split.c - floe append --split: an existing Parquet file whose rows span several
 * partitions of a table's spec is rewritten as one file per partition (the table's
 * write properties, floe's own metrics) instead of being refused.
 *
 * It is a rewrite of one group: the file is its only input, read as batches of the
 * table's current schema (rewrite_read.c: field ids or the name mapping, promotions,
 * defaults), and its rows are routed by the default spec's tuple (rewrite_exec.c) into
 * the table's data folder. Nothing is committed here: the files are added to the caller's
 * append, which commits them with everything else in one snapshot.
 */
#include <string.h>

#include "floe/io.h"
#include "floe/parquet_reader.h"
#include "rewrite_internal.h"
#include "table/commit_files.h"

int floe_rewrite_split_file(floe_table *t, const char *uri, const char *name_mapping,
                            bool fsync, floe_append *a, char ***written, size_t *nwritten,
                            floe_error *err) {
    floe_rewrite_plan *p = NULL;
    floe_pq_reader *r = NULL;
    rw_group_out out;
    memset(&out, 0, sizeof out);
    bool ran = false;
    char **paths = NULL;
    size_t npaths = 0;
    int rc = 0;
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.fsync = fsync;
    o.threads = 1;
    o.fast_copy = 0;
    o.page_carry = false;
    if (!(p = floe_calloc(1, sizeof *p)) || !(p->priv = floe_calloc(1, sizeof *p->priv)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_arena_init(&p->priv->arena, 16 * 1024);
    p->snapshot_id = -1;
    FLOE_CHECK(rw_plan_setup(t, &o, p, err));
    if (!p->priv->name_mapping && name_mapping &&
        !(p->priv->name_mapping = floe_strdup(name_mapping)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    /* the input as a data file (what the reader checks it against) */
    FLOE_CHECK(floe_pq_reader_open(floe_table_io(t), uri, NULL, &r, err));
    floe_pq_reader_file pf;
    floe_pq_reader_file_info(r, &pf);
    floe_arena *arena = &p->priv->arena;
    floe_data_file *df = floe_arena_alloc(arena, sizeof *df);
    floe_rewrite_group *g = floe_calloc(1, sizeof *g);
    floe_rewrite_input *in = floe_arena_alloc(arena, sizeof *in);
    if (!df || !g || !in)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    p->groups = g;
    p->ngroups = 1;
    memset(df, 0, sizeof *df);
    memset(in, 0, sizeof *in);
    df->content = FLOE_CONTENT_DATA;
    df->file_format = "parquet";
    df->file_path = floe_arena_strdup(arena, uri);
    df->record_count = pf.num_rows;
    df->file_size_in_bytes = pf.file_size;
    in->file = df;
    in->uri = df->file_path;
    in->spec_id = -1;
    if (!df->file_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* spec -1: rows are routed by the output (default) spec */
    g->global_index = 1;
    g->partition_index = 1;
    g->spec_id = -1;
    g->partition_text = "";
    g->inputs = in;
    g->ninputs = 1;
    g->input_bytes = pf.file_size;
    g->input_records = pf.num_rows;
    g->expected_output_files = 1;
    g->split_size = INT64_MAX;
    g->max_output_file_size = floe_rewrite_write_max_file_size(&p->limits);
    floe_pq_reader_close(r);
    r = NULL;

    ran = true;
    FLOE_CHECK(rw_execute_groups(t, p, &o, &out, err));
    paths = floe_calloc(out.nfiles ? out.nfiles : 1, sizeof *paths);
    if (!paths)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < out.nfiles; i++) {
        FLOE_CHECK(floe_append_add_file(a, &out.files[i], err));
        paths[npaths++] = out.phys[i];
        out.phys[i] = NULL; /* handed over */
    }
    *written = paths;
    *nwritten = npaths;
    paths = NULL;
    npaths = 0;
done:
    if (rc < 0 && ran) {
        /* not added (or the append will not commit them): none may stay behind, inside
         * the table's own folders (floe/table.h, "Confinement") */
        floe_commit_files_delete_at(t, (const char *const *)paths, npaths, "split");
        if (out.phys)
            floe_commit_files_delete_at(t, (const char *const *)out.phys, out.nfiles,
                                        "split");
    }
    for (size_t i = 0; i < npaths; i++)
        floe_free(paths[i]);
    floe_free(paths);
    rw_group_out_free(&out);
    floe_pq_reader_close(r);
    floe_rewrite_plan_free(p);
    if (rc < 0)
        floe_error_prefix(err, "splitting %s: ", uri);
    return rc;
}
