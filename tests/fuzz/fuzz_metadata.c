/*
 * fuzz_metadata.c - libFuzzer target for Iceberg table metadata (src/iceberg/metadata.c,
 * metadata_build.c) and for the mapping of recorded paths onto a table folder
 * (floe_table_resolve_path in src/table/table.c).
 *
 * Each input is parsed as a metadata document (plain or gzip JSON). One that parses is
 * looked at through every accessor, serialized, parsed again and serialized again (same
 * text), cloned (same text), and, when floe could write it, run through a builder that
 * sets a property and finishes. The input is also, as a string, a path recorded in the
 * metadata of a table opened by folder: whatever it is, a mapped path must stay inside
 * that folder (start with it at a '/' and have no ".." component after it). Errors are
 * expected; crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_metadata/ and the conformance tables' metadata files
 * (targets.conf).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/table.h"
#include "floe/table_metadata.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TABLE_METADATA[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"s3://bucket/wh/db/tbl\",\"last-sequence-number\":0,"
    "\"last-updated-ms\":1700000000000,\"last-column-id\":1,\"current-schema-id\":0,"
    "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"x\","
    "\"required\":false,\"type\":\"long\"}]}],\"default-spec-id\":0,"
    "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],\"last-partition-id\":999,"
    "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
    "\"properties\":{},\"current-snapshot-id\":-1,\"snapshots\":[],\"snapshot-log\":[],"
    "\"metadata-log\":[]}";

static floe_table *table; /* opened by folder: confined to it */
static char table_dir[256];

static void cleanup(void) {
    floe_table_close(table);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", table_dir);
    if (table_dir[0] && system(cmd) != 0)
        fprintf(stderr, "fuzz_metadata: could not remove %s\n", table_dir);
}

static void setup(void) {
    char tmpl[] = "/tmp/floe-fuzz-metadata-XXXXXX";
    floe_error err;
    if (!mkdtemp(tmpl))
        abort();
    snprintf(table_dir, sizeof table_dir, "%s", tmpl);
    char path[512];
    snprintf(path, sizeof path, "%s/tbl/metadata/v1.metadata.json", table_dir);
    if (floe_io_write_all(NULL, path, TABLE_METADATA, strlen(TABLE_METADATA), NULL, &err) < 0)
        abort();
    snprintf(path, sizeof path, "%s/tbl", table_dir);
    if (floe_table_open_path(path, NULL, &table, &err) < 0) {
        fprintf(stderr, "fuzz_metadata: setup: %s\n", err.msg);
        abort();
    }
    atexit(cleanup);
}

static void fuzz_resolve(const uint8_t *data, size_t size) {
    if (size > 4096 || memchr(data, '\0', size))
        return;
    char *recorded = fuzz_text(data, size);
    check(recorded != NULL);
    char *mapped = NULL;
    floe_error err;
    if (floe_table_resolve_path(table, recorded, &mapped, &err) == 0) {
        const char *root = floe_table_root(table);
        size_t rl = strlen(root);
        while (rl > 1 && root[rl - 1] == '/')
            rl--;
        check(strncmp(mapped, root, rl) == 0 && (mapped[rl] == '\0' || mapped[rl] == '/'));
        for (const char *p = mapped + rl; *p;) {
            while (*p == '/')
                p++;
            size_t len = strcspn(p, "/");
            check(!(len == 2 && p[0] == '.' && p[1] == '.'));
            p += len;
        }
        floe_free(mapped);
    }
    free(recorded);
}

static void look(const floe_table_metadata *m) {
    (void)floe_table_metadata_current_snapshot(m);
    (void)floe_table_metadata_current_schema(m);
    (void)floe_table_metadata_default_spec(m);
    (void)floe_table_metadata_wants_gzip(m);
    (void)floe_table_metadata_ref(m, "main");
    (void)floe_table_metadata_property(m, "write.format.default");
    (void)floe_table_metadata_property_int(m, "commit.retry.num-retries", 4);
    (void)floe_table_metadata_property_bool(m, "write.metadata.delete-after-commit.enabled",
                                            false);
    for (size_t i = 0; i < m->n_snapshots; i++)
        check(floe_table_metadata_snapshot(m, m->snapshots[i].snapshot_id) != NULL);
    for (size_t i = 0; i < m->n_schemas; i++)
        (void)floe_table_metadata_schema(m, m->schemas[i].schema_id);
    for (size_t i = 0; i < m->n_specs; i++)
        (void)floe_table_metadata_spec(m, m->specs[i].spec_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!table)
        setup();
    fuzz_resolve(data, size);

    floe_table_metadata *m = NULL, *m2 = NULL, *copy = NULL, *built = NULL;
    floe_error err;
    if (floe_table_metadata_parse(data, size, "fuzz.metadata.json", &m, &err) < 0)
        return 0;
    look(m);
    char *t1 = NULL, *t2 = NULL, *t3 = NULL;
    size_t l1 = 0, l2 = 0, l3 = 0;
    check(floe_table_metadata_to_json(m, false, &t1, &l1, &err) == 0);
    check(floe_table_metadata_parse(t1, l1, "again", &m2, &err) == 0);
    look(m2);
    check(floe_table_metadata_to_json(m2, false, &t2, &l2, &err) == 0);
    check(l1 == l2 && memcmp(t1, t2, l1) == 0);
    check(floe_table_metadata_clone(m, &copy, &err) == 0);
    check(floe_table_metadata_to_json(copy, false, &t3, &l3, &err) == 0);
    check(l1 == l3 && memcmp(t1, t3, l1) == 0);

    if (floe_table_metadata_check_writable(m, &err) == 0) {
        floe_metadata_builder *b = NULL;
        if (floe_metadata_builder_new(m, &b, &err) == 0) {
            if (floe_metadata_builder_set_property(b, "floe.fuzz", "1", &err) == 0 &&
                floe_metadata_builder_finish(b, "fuzz.metadata.json", &built, &err) == 0) {
                look(built);
                floe_table_metadata_free(built);
            }
            floe_metadata_builder_free(b);
        }
    }
    floe_free(t1);
    floe_free(t2);
    floe_free(t3);
    floe_table_metadata_free(copy);
    floe_table_metadata_free(m2);
    floe_table_metadata_free(m);
    return 0;
}
