/*
 * maint_gen.c - builds the bench/maintain table: NSNAP snapshots, each appending FILES
 * empty data files in a manifest of its own; every 100 snapshots the block's manifests
 * are merged into one (entries EXISTING, as commit-time merging does), so a manifest list
 * holds at most ~100 + NSNAP/100 manifests. The table is registered as ns.big in a SQLite
 * catalog.
 *
 * usage: maint_gen DIR NSNAP FILES_PER_SNAPSHOT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/table.h"

#define BLOCK 100

static void die(const char *what, const floe_error *err) {
    fprintf(stderr, "maint_gen: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: maint_gen DIR NSNAP FILES\n");
        return 2;
    }
    const char *dir = argv[1];
    int nsnap = atoi(argv[2]), nfiles = atoi(argv[3]);
    floe_error err;
    char wh[1024], db[1100], loc[1100], md[1200];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(loc, sizeof loc, "%s/ns/big", wh);
    snprintf(md, sizeof md, "%s/metadata", loc);
    const char *schema_json = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,"
                              "\"name\":\"v\",\"required\":false,\"type\":\"long\"}]}";
    floe_catalog *cat = NULL;
    if (floe_catalog_open_sqlite(NULL, db, "default", wh, &cat, &err) < 0)
        die("catalog", &err);
    floe_catalog_create_namespace(cat, "ns", NULL, NULL, 0, NULL);
    floe_metadata_builder *b = NULL;
    if (floe_metadata_builder_new_table(loc, schema_json, NULL, NULL, NULL, 0, &b, &err) < 0)
        die("builder", &err);
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    const char *spec_json = "{\"spec-id\":0,\"fields\":[]}";
    if (floe_schema_parse(schema_json, strlen(schema_json), &schema, &err) < 0 ||
        floe_partition_spec_parse_json(spec_json, strlen(spec_json), schema, &spec, &err) < 0)
        die("schema", &err);

    floe_arena arena;
    floe_arena_init(&arena, 1 << 20);
    /* the current block's small manifests and the merged ones of finished blocks */
    floe_manifest_file *block = calloc(BLOCK, sizeof *block);
    floe_manifest_file *merged = calloc((size_t)nsnap / BLOCK + 2, sizeof *merged);
    floe_manifest_file *list = calloc((size_t)nsnap / BLOCK + BLOCK + 2, sizeof *list);
    int64_t *block_ids = calloc(BLOCK, sizeof *block_ids);
    int nblock = 0, nmerged = 0;
    int64_t now = floe_wall_ms();
    floe_output_options oo = {.fsync = false};
    char path[1400];
    if (floe_io_mkdirs(NULL, md, &err) < 0)
        die("mkdirs", &err);
    char data[1200];
    snprintf(data, sizeof data, "%s/data", loc);
    floe_io_mkdirs(NULL, data, NULL);

    for (int i = 0; i < nsnap; i++) {
        int64_t id = i + 1, seq = floe_metadata_builder_next_sequence_number(b);
        floe_manifest_write_options wo;
        floe_manifest_write_options_init(&wo);
        wo.schema = schema;
        wo.spec = spec;
        wo.has_snapshot_id = true;
        wo.snapshot_id = id;
        wo.codec = FLOE_CODEC_UNCOMPRESSED;
        snprintf(path, sizeof path, "%s/m-%06d.avro", md, i);
        floe_manifest_writer *w = NULL;
        if (floe_manifest_writer_open(NULL, path, &wo, &w, &err) < 0)
            die("manifest", &err);
        for (int f = 0; f < nfiles; f++) {
            char fp[1400];
            snprintf(fp, sizeof fp, "%s/data/f%06d-%03d.parquet", loc, i, f);
            FILE *fh = fopen(fp, "w");
            if (!fh)
                die(fp, NULL);
            fclose(fh);
            floe_data_file df;
            memset(&df, 0, sizeof df);
            df.file_path = fp;
            df.file_format = "parquet";
            df.record_count = 100;
            df.file_size_in_bytes = 1000;
            if (floe_manifest_writer_add(w, &df, -1, &err) < 0)
                die("add", &err);
        }
        floe_manifest_file *mf = &block[nblock];
        if (floe_manifest_writer_close(w, &oo, &arena, mf, &err) < 0)
            die("close", &err);
        mf->sequence_number = seq; /* what the list writer assigns */
        mf->min_sequence_number = seq;
        mf->has_added_snapshot_id = true;
        mf->added_snapshot_id = id;
        block_ids[nblock++] = id;
        if (nblock == BLOCK) {
            /* merge the block: every entry EXISTING with its own snapshot and sequence */
            floe_manifest_write_options mo = wo;
            snprintf(path, sizeof path, "%s/merged-%06d.avro", md, nmerged);
            if (floe_manifest_writer_open(NULL, path, &mo, &w, &err) < 0)
                die("merged", &err);
            for (int k = 0; k < BLOCK; k++) {
                floe_manifest_reader *r = NULL;
                floe_manifest_read_options ro = {.manifest = &block[k]};
                if (floe_manifest_reader_open(NULL, block[k].manifest_path, &ro, &r, &err) < 0)
                    die("read", &err);
                const floe_manifest_entry *e;
                while (floe_manifest_reader_next(r, &e, &err) == 1)
                    if (floe_manifest_writer_existing(w, e, &err) < 0)
                        die("existing", &err);
                floe_manifest_reader_close(r);
            }
            floe_manifest_file *m = &merged[nmerged++];
            if (floe_manifest_writer_close(w, &oo, &arena, m, &err) < 0)
                die("close merged", &err);
            int64_t minseq = m->min_sequence_number;
            m->sequence_number = seq;
            m->min_sequence_number = minseq >= 0 ? minseq : seq;
            m->has_added_snapshot_id = true;
            m->added_snapshot_id = id;
            /* this commit's own small manifest went straight into the merge: no list
             * references it (commit-time merging deletes it too) */
            floe_io_delete(NULL, block[BLOCK - 1].manifest_path, NULL);
            nblock = 0;
        }
        size_t n = 0;
        for (int k = nblock - 1; k >= 0; k--)
            list[n++] = block[k];
        for (int k = nmerged - 1; k >= 0; k--)
            list[n++] = merged[k];
        floe_manifest_list_write_options lo;
        floe_manifest_list_write_options_init(&lo);
        lo.snapshot_id = id;
        lo.has_parent = i > 0;
        lo.parent_snapshot_id = id - 1;
        lo.sequence_number = seq;
        lo.codec = FLOE_CODEC_UNCOMPRESSED;
        snprintf(path, sizeof path, "%s/snap-%lld-1-bench.avro", md, (long long)id);
        if (floe_manifest_list_write(NULL, path, &lo, list, n, &oo, NULL, &err) < 0)
            die("list", &err);
        char recs[32], total[32];
        snprintf(recs, sizeof recs, "%d", nfiles * 100);
        snprintf(total, sizeof total, "%lld", (long long)(i + 1) * nfiles * 100);
        floe_kv summary[2] = {{"added-records", recs}, {"total-records", total}};
        floe_snapshot_new sn = {.snapshot_id = id,
                                .operation = "append",
                                .manifest_list = path,
                                .summary = summary,
                                .n_summary = 2,
                                .timestamp_ms = now - 30LL * 86400000 + (int64_t)i * 60000,
                                .schema_id = -1};
        if (floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, &err) < 0)
            die("snapshot", &err);
        if (i % 1000 == 999)
            fprintf(stderr, "maint_gen: %d snapshots\n", i + 1);
    }
    floe_table_metadata *m = NULL;
    if (floe_metadata_builder_finish(b, NULL, &m, &err) < 0)
        die("finish", &err);
    snprintf(path, sizeof path, "%s/00000-bench.metadata.json", md);
    if (floe_table_metadata_write(NULL, m, path, false, false, &err) < 0)
        die("write metadata", &err);
    if (floe_catalog_register_table(cat, "ns", "big", path, &err) < 0)
        die("register", &err);
    floe_table_metadata_free(m);
    floe_metadata_builder_free(b);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    floe_arena_reset(&arena);
    free(block);
    free(merged);
    free(list);
    free(block_ids);
    floe_catalog_close(cat);
    return 0;
}
