/*
 * test_metadata.c - Iceberg table metadata: every conformance table's current metadata
 * (v1, v2, v3, gzip), finding it per INDEX.md quirk, round trips that keep unknown fields,
 * builders, refusals, malformed input, and mapping recorded paths onto the folder.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/schema.h"
#include "floe/table.h"
#include "floe/table_metadata.h"
#include "harness.h"
#include "common/testing.h"

static char *conf(const char *rel) { return strdup(harness_conformance(rel)); }

typedef struct conf_table {
    const char *folder;       /* under iceberg/ */
    const char *current;      /* expected current metadata file name */
    int format_version;
    int64_t current_snapshot; /* -1 none */
    bool paths_map;           /* the current snapshot's manifest list maps into the folder */
} conf_table;

/* The table whose current file is refused, and what the refusal must name. */
#define REFUSED_TABLE "duckdb-iceberg/equality_delete_extra_column/warehouse/ns/t"
#define REFUSED_FIELD "\"current-snapshot-id\" is 9876543210123456789"

static const conf_table TABLES[] = {
    {"duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults",
     "00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json", 2, 1915606074736806848, true},
    {"duckdb-iceberg/big_query_error", "v1749025517.metadata.json", 2, 5128775320967886225, false},
    {"duckdb-iceberg/case_sensitive_names/default.db/case_sensitive_names",
     "00001-a7a3a44c-4aac-4619-bebd-11be37b27351.metadata.json", 2, 5298355539581857556, true},
    {"duckdb-iceberg/column_mapping/warehouse/default.db/my_table",
     "00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json", 2, 6154553663017965981, true},
    {"duckdb-iceberg/custom_write_paths", "00000-acdf842e-3a9d-4b9b-ad87-daf785831925.metadata.json",
     2, -1, false},
    /* snapshot id 9876543210123456789: past the signed 64-bit range, refused (Iceberg
     * Java's JsonUtil refuses it as well: "Cannot parse to a long value") */
    {REFUSED_TABLE, "vfinal.metadata.json", 2, -1, true},
    {"duckdb-iceberg/expression_filter", "00001-19739cda-f528-4429-84cc-377ffdd24c75.metadata.json",
     2, 8096310958539014181, true},
    {"duckdb-iceberg/generated_bounds", "v1.metadata.json", 2, 1000000000000000001, true},
    {"duckdb-iceberg/hive_partitioned_table", "v4.metadata.json", 2, 5128628767169163501, true},
    {"duckdb-iceberg/iceberg/lineitem_iceberg_gz", "v2.gz.metadata.json", 1, 4468019210336628573,
     true},
    {"duckdb-iceberg/iceberg/lineitem_iceberg_gz_no_hint", "v2.gz.metadata.json", 1,
     4468019210336628573, true},
    {"duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1", "v2.metadata.json", 1,
     2456114553637229296, true},
    {"duckdb-iceberg/is_null_is_not_null", "00001-43ceeb9a-cd0d-4556-b1e2-513b5bf88ff8.metadata.json",
     2, 1222714758486840798, true},
    {"duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector",
     "00002-legacy-bare-dv.metadata.json", 3, 7777777777777777776, true},
    {"duckdb-iceberg/map_stats/default.db/map_stats",
     "00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json", 2, 554549470069664013, true},
    {"duckdb-iceberg/null_stats/default/test_nulls",
     "00003-9d6a621e-8a72-4190-a880-f6ca02e32b86.metadata.json", 2, 4694394728259848547, true},
    {"duckdb-iceberg/partition_bigint", "v2.metadata.json", 2, 1919487672997309926, true},
    {"duckdb-iceberg/partition_binary", "v2.metadata.json", 2, 7057859339050714145, true},
    {"duckdb-iceberg/partition_bool", "v2.metadata.json", 2, 3510418671079281357, true},
    {"duckdb-iceberg/partition_decimal_bigint", "v2.metadata.json", 2, 7397340839278125996, true},
    {"duckdb-iceberg/partition_decimal_integer", "v2.metadata.json", 2, 2266524373707409896, true},
    {"duckdb-iceberg/partition_decimal_smallint", "v2.metadata.json", 2, 8728621871136059473, true},
    {"duckdb-iceberg/partition_double", "v2.metadata.json", 2, 265372873090926682, true},
    {"duckdb-iceberg/partition_fixed_length_binary/default.db/partition_fixed_length_binary",
     "00001-b4b3d6d2-cac2-4480-952e-0e4b3b88b5d7.metadata.json", 2, 8035702046957338196, true},
    {"duckdb-iceberg/partition_float", "v2.metadata.json", 2, 7743143018202347074, true},
    {"duckdb-iceberg/partition_integer", "v2.metadata.json", 2, 5470601323427916272, true},
    {"duckdb-iceberg/partition_time/default.db/partition_time",
     "00001-44546aa6-1ee5-48c5-9e3b-bc6c0bc0a60c.metadata.json", 2, 5142311260901683077, true},
    {"duckdb-iceberg/partition_timestamp/default.db/partition_timestamp",
     "00001-0c9938a5-103e-4185-b46d-331368ae4db7.metadata.json", 2, 2508913168551256223, true},
    {"duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz",
     "00001-ffeadb58-2a9e-46ba-8b4f-f363f05de68c.metadata.json", 2, 1930660809162697972, true},
    {"duckdb-iceberg/uuid", "00001-43fda1f4-1c96-4376-ad16-91beb71d0759.metadata.json", 2,
     3974286791591741252, true},
    {"icebird/spark_bunnies", "v5.metadata.json", 2, 2701171901096418979, true},
    {"icebird/spark_rename_column", "v3.metadata.json", 2, 5276958600260276572, true},
    {"icebird/java_bunnies", "v5.metadata.json", 2, 9158179788527662767, true},
};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static char *table_path(const conf_table *ct) {
    char rel[512];
    snprintf(rel, sizeof rel, "iceberg/%s", ct->folder);
    return conf(rel);
}

TEST(conformance_current_metadata) {
    for (size_t i = 0; i < NTABLES; i++) {
        const conf_table *ct = &TABLES[i];
        char *dir = table_path(ct);
        floe_error err;
        floe_error_clear(&err);
        char *uri = NULL;
        int rc = floe_table_locate_metadata(NULL, dir, &uri, &err);
        if (!strcmp(ct->folder, REFUSED_TABLE)) {
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            if (!strstr(err.msg, REFUSED_FIELD) || !strstr(err.msg, ct->current) ||
                !strstr(err.msg, "outside the signed 64-bit range"))
                harness_fail(__FILE__, __LINE__, "%s: want a refusal naming %s, got: %s",
                             ct->folder, REFUSED_FIELD, err.msg);
            floe_table *t = NULL;
            CHECK_EQ_INT(floe_table_open_path(dir, NULL, &t, &err), FLOE_ECORRUPT);
            floe_free(uri);
            free(dir);
            continue;
        }
        if (rc != 0) {
            harness_fail(__FILE__, __LINE__, "%s: locate: %s", ct->folder, err.msg);
            free(dir);
            continue;
        }
        const char *base = strrchr(uri, '/') + 1;
        if (strcmp(base, ct->current))
            harness_fail(__FILE__, __LINE__, "%s: current is %s, expected %s", ct->folder, base,
                         ct->current);
        floe_table *t = NULL;
        rc = floe_table_open_path(dir, NULL, &t, &err);
        if (rc != 0) {
            harness_fail(__FILE__, __LINE__, "%s: open: %s", ct->folder, err.msg);
            floe_free(uri);
            free(dir);
            continue;
        }
        const floe_table_metadata *m = floe_table_metadata_get(t);
        CHECK_EQ_INT(m->format_version, ct->format_version);
        CHECK_EQ_INT(m->current_snapshot_id, ct->current_snapshot);
        CHECK(m->n_schemas >= 1);
        CHECK(floe_table_metadata_current_schema(m) != NULL);
        CHECK(floe_table_metadata_default_spec(m) != NULL);
        const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
        CHECK((cur != NULL) == (ct->current_snapshot != -1));
        if (cur) {
            const floe_snapshot_ref *main = floe_table_metadata_ref(m, "main");
            REQUIRE(main != NULL);
            CHECK_EQ_INT(main->snapshot_id, cur->snapshot_id);
            CHECK(!main->is_tag);
            const char *rec = cur->manifest_list ? cur->manifest_list : cur->manifests[0];
            char *local = NULL;
            rc = floe_table_resolve_path(t, rec, &local, &err);
            if (ct->paths_map) {
                if (rc != 0)
                    harness_fail(__FILE__, __LINE__, "%s: resolve %s: %s", ct->folder, rec, err.msg);
                else if (!harness_file_exists(local))
                    harness_fail(__FILE__, __LINE__, "%s: %s -> %s does not exist", ct->folder, rec,
                                 local);
                else if (!floe_io_uri_within(local, dir))
                    harness_fail(__FILE__, __LINE__, "%s: %s left the folder", ct->folder, local);
            } else {
                CHECK_EQ_INT(rc, FLOE_EINVALID); /* big_query_error: outside its location */
            }
            floe_free(local);
            /* every schema parses with the schema module */
            for (size_t k = 0; k < m->n_schemas; k++) {
                floe_schema *s = NULL;
                rc = floe_schema_parse(m->schemas[k].json, strlen(m->schemas[k].json), &s, &err);
                if (rc != 0)
                    harness_fail(__FILE__, __LINE__, "%s: schema %d: %s", ct->folder,
                                 (int)m->schemas[k].schema_id, err.msg);
                floe_schema_free(s);
            }
        }
        floe_table_close(t);
        floe_free(uri);
        free(dir);
    }
}

/* Every metadata file in the conformance set survives parse -> write -> parse with the
 * same JSON (json_equal), unknown fields and all. */
static int roundtrip_one(const char *path) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = NULL, *m2 = NULL;
    int rc = floe_table_metadata_read(NULL, path, &m, &err);
    if (rc != 0)
        return rc;
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    rc = floe_table_metadata_to_json(m, false, &text, &len, &err);
    if (rc == 0)
        rc = floe_table_metadata_parse(text, len, "roundtrip", &m2, &err);
    if (rc == 0)
        rc = floe_table_metadata_to_json(m2, false, &text2, &len2, &err);
    if (rc == 0 && (len != len2 || memcmp(text, text2, len)))
        harness_fail(__FILE__, __LINE__, "%s: second serialization differs", path);
    /* the size the metadata cap measures is the serialized length, counted up to a limit
     * (floe_table_metadata_json_size) */
    if (rc == 0 && (floe_table_metadata_json_size(m, SIZE_MAX - 1) != len ||
                    floe_table_metadata_json_size(m, len) != len ||
                    floe_table_metadata_json_size(m, len - 1) != len ||
                    floe_table_metadata_json_size(m, 10) != 11))
        harness_fail(__FILE__, __LINE__, "%s: floe_table_metadata_json_size is not %zu", path,
                     len);
    /* against the original bytes (plain files without >int64 ids) */
    size_t olen = 0;
    char *orig = harness_read_file(path, &olen);
    if (rc == 0 && orig && olen > 2 && (unsigned char)orig[0] != 0x1f && !strstr(path, "vfinal")) {
        json_t *a = json_loadb(orig, olen, 0, NULL), *b = json_loadb(text, len, 0, NULL);
        if (!a || !b || !json_equal(a, b))
            harness_fail(__FILE__, __LINE__, "%s: rewritten JSON is not equal to the original",
                         path);
        json_decref(a);
        json_decref(b);
    }
    free(orig);
    floe_free(text);
    floe_free(text2);
    floe_table_metadata_free(m);
    floe_table_metadata_free(m2);
    return rc;
}

TEST(conformance_roundtrip_all_files) {
    int parsed = 0, total = 0;
    for (size_t i = 0; i < NTABLES; i++) {
        char *dir = table_path(&TABLES[i]);
        char md[4096];
        snprintf(md, sizeof md, "%s/metadata", dir);
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "ls '%s' | grep 'metadata.json$'", md);
        char *list = NULL;
        harness_run_cmd(cmd, &list);
        for (char *line = list ? strtok(list, "\n") : NULL; line; line = strtok(NULL, "\n")) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", md, line);
            int rc = roundtrip_one(path);
            total++;
            if (rc == 0)
                parsed++;
            else if (!strstr(path, "big_query_error/metadata/v0.metadata.json") &&
                     !strstr(path, "equality_delete_extra_column/warehouse/ns/t/metadata/"
                                   "vfinal.metadata.json"))
                harness_fail(__FILE__, __LINE__, "%s: parse failed (%d)", path, rc);
        }
        free(list);
        free(dir);
    }
    /* 80 files; big_query_error's 97-byte v0 stub is not metadata, and
     * equality_delete_extra_column's vfinal has a snapshot id past 2^63 - 1 */
    CHECK_EQ_INT(total, 80);
    CHECK_EQ_INT(parsed, total - 2);
}

TEST(v1_gzip_fields) {
    char *dir = conf("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, dir, &m, &err), err);
    CHECK_EQ_INT(m->format_version, 1);
    CHECK_EQ_INT(m->last_sequence_number, 0);
    CHECK_EQ_INT(m->n_snapshots, 1);
    CHECK_EQ_INT(m->snapshots[0].sequence_number, 0); /* Appendix E default */
    CHECK_EQ_STR(m->snapshots[0].operation, "append");
    CHECK_EQ_STR(floe_table_metadata_property(m, FLOE_PROP_METADATA_COMPRESSION), "gzip");
    CHECK(floe_table_metadata_wants_gzip(m));
    floe_schema *s = NULL;
    const floe_metadata_schema *cs = floe_table_metadata_current_schema(m);
    REQUIRE(cs != NULL);
    REQUIRE_OK(floe_schema_parse(cs->json, strlen(cs->json), &s, &err), err);
    CHECK_EQ_INT(s->root.nchildren, 16); /* TPC-H lineitem */
    floe_schema_free(s);
    floe_table_metadata_free(m);
    free(dir);
}

TEST(v1_deprecated_fields) {
    char *p = conf("iceberg/duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1/metadata/v2.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, p, &m, &err), err);
    CHECK_EQ_INT(m->format_version, 1);
    CHECK_EQ_INT(m->n_schemas, 1);
    CHECK_EQ_INT(m->n_specs, 1);
    CHECK_EQ_INT(m->default_spec_id, 0);
    CHECK(strstr(m->specs[0].json, "\"spec-id\":0") != NULL);
    CHECK(strstr(m->specs[0].json, "identity") != NULL);
    CHECK_EQ_INT(m->last_partition_id, 1000);
    REQUIRE(m->n_snapshots == 1);
    CHECK(m->snapshots[0].manifest_list == NULL);
    CHECK(m->snapshots[0].n_manifests >= 1);
    /* floe cannot write it: no manifest list to carry into v2 */
    floe_metadata_builder *b = NULL;
    CHECK_EQ_INT(floe_metadata_builder_new(m, &b, &err), FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "manifests") != NULL);
    CHECK(b == NULL);
    floe_table_metadata_free(m);
    free(p);
}

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":7,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":4,"
    "\"element\":\"string\",\"element-required\":false}}]}";

/* Spec "Row Lineage", "Snapshot Row IDs": a v3 table is written as v3; every snapshot added
 * takes the table's next-row-id as its first-row-id, records added-rows, and next-row-id
 * moves past them; a snapshot without lineage (or with a stale first-row-id) is refused. */
TEST(v3_snapshots_carry_row_lineage) {
    char *p = conf("iceberg/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/"
                   "legacy_bare_deletion_vector/metadata/00002-legacy-bare-dv.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, p, &m, &err), err);
    CHECK_EQ_INT(m->format_version, 3);
    char *text = NULL;
    REQUIRE_OK(floe_table_metadata_to_json(m, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"next-row-id\":3") != NULL); /* kept on rewrite */
    floe_free(text);
    CHECK_OK(floe_table_metadata_check_writable(m, &err), err);
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_format_version(b), 3);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 3);
    CHECK_OK(floe_metadata_builder_set_property(b, "k", "v", &err), err);
    floe_snapshot_new s = {.operation = "append", .manifest_list = "x.avro", .schema_id = -1};
    CHECK_EQ_INT(floe_metadata_builder_add_snapshot(b, &s, NULL, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "row lineage") != NULL);
    s.row_lineage = true;
    s.first_row_id = 2; /* not the table's next-row-id: assigned on stale metadata */
    s.added_rows = 10;
    CHECK_EQ_INT(floe_metadata_builder_add_snapshot(b, &s, NULL, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "next-row-id") != NULL);
    s.first_row_id = 3;
    int64_t id = 0;
    REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &s, &id, NULL, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 13);
    /* on another branch too: ids are table-wide */
    floe_snapshot_new s2 = {.operation = "append", .manifest_list = "y.avro", .schema_id = -1,
                            .branch = "dev", .row_lineage = true, .first_row_id = 13,
                            .added_rows = 0};
    REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &s2, NULL, NULL, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 13);
    /* a snapshot written by someone else (REST): first-row-id not below next-row-id */
    CHECK_EQ_INT(floe_metadata_builder_add_snapshot_json(
                     b, "{\"snapshot-id\":77,\"timestamp-ms\":1,\"manifest-list\":\"z.avro\","
                        "\"summary\":{\"operation\":\"append\"}}", &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "first-row-id") != NULL);
    CHECK_EQ_INT(floe_metadata_builder_add_snapshot_json(
                     b, "{\"snapshot-id\":77,\"timestamp-ms\":1,\"manifest-list\":\"z.avro\","
                        "\"summary\":{\"operation\":\"append\"},\"first-row-id\":12,"
                        "\"added-rows\":5}", &err), FLOE_EINVALID);
    REQUIRE_OK(floe_metadata_builder_add_snapshot_json(
                   b, "{\"snapshot-id\":77,\"timestamp-ms\":1,\"manifest-list\":\"z.avro\","
                      "\"summary\":{\"operation\":\"append\"},\"first-row-id\":20,"
                      "\"added-rows\":5}", &err), err);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 25);
    floe_table_metadata *n = NULL;
    REQUIRE_OK(floe_metadata_builder_finish(b, NULL, &n, &err), err);
    CHECK_EQ_INT(n->format_version, 3);
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"next-row-id\":25") != NULL);
    CHECK(strstr(text, "\"first-row-id\":3,\"added-rows\":10") != NULL);
    CHECK(strstr(text, "\"k\":\"v\"") != NULL);
    floe_free(text);
    floe_table_metadata_free(n);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(m);
    free(p);
}

/* Upgrades to v3 ("Row Lineage for Upgraded Tables"): next-row-id 0, the snapshots before
 * keep no first-row-id; v1 goes through v2 (Appendix E); a downgrade is refused; a new
 * table made with format-version=3 (a reserved property, not stored) starts at 0. */
TEST(v3_upgrade_and_create) {
    char *p = conf("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL, *n = NULL;
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, p, &m, &err), err);
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), -1);
    REQUIRE_OK(floe_metadata_builder_upgrade(b, 3, &err), err); /* v1 -> v3 */
    CHECK_EQ_INT(floe_metadata_builder_format_version(b), 3);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 0);
    CHECK_EQ_INT(floe_metadata_builder_upgrade(b, 2, &err), FLOE_EUNSUPPORTED);
    REQUIRE_OK(floe_metadata_builder_finish(b, NULL, &n, &err), err);
    CHECK_EQ_INT(n->format_version, 3);
    char *text = NULL;
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"next-row-id\":0") != NULL);
    CHECK(strstr(text, "\"schema\":") == NULL);
    CHECK(strstr(text, "first-row-id") == NULL);
    CHECK(strstr(text, "\"sequence-number\":0") != NULL);
    floe_free(text);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    n = NULL;
    /* v2 -> v3 */
    floe_table_metadata *v2 = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    REQUIRE_OK(floe_metadata_builder_upgrade(b, 2, &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, NULL, &v2, &err), err);
    floe_metadata_builder_free(b);
    REQUIRE_OK(floe_metadata_builder_new(v2, &b, &err), err);
    REQUIRE_OK(floe_metadata_builder_upgrade(b, 3, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_next_row_id(b), 0);
    CHECK_EQ_INT(floe_metadata_builder_upgrade(b, 4, &err), FLOE_EUNSUPPORTED);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(v2);
    /* create */
    floe_kv props[] = {{"format-version", "3"}, {"k", "v"}};
    REQUIRE_OK(floe_metadata_builder_new_table("/tmp/wh/ns/t3", SCHEMA, NULL, NULL, props, 2, &b,
                                               &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, NULL, &n, &err), err);
    CHECK_EQ_INT(n->format_version, 3);
    CHECK(floe_table_metadata_property(n, "format-version") == NULL);
    CHECK_EQ_STR(floe_table_metadata_property(n, "k"), "v");
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"next-row-id\":0") != NULL);
    floe_free(text);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    props[0].value = "1";
    CHECK_EQ_INT(floe_metadata_builder_new_table("/tmp/wh/ns/t1", SCHEMA, NULL, NULL, props, 2,
                                                 &b, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "format-version=1") != NULL);
    floe_table_metadata_free(m);
    free(p);
}

TEST(v1_upgrade_to_v2) {
    char *p = conf("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL, *n = NULL;
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, p, &m, &err), err);
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_format_version(b), 1);
    REQUIRE_OK(floe_metadata_builder_upgrade(b, 2, &err), err); /* asked for */
    CHECK_EQ_INT(floe_metadata_builder_format_version(b), 2);
    REQUIRE_OK(floe_metadata_builder_set_property(b, "floe.test", "1", &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, "old.metadata.json", &n, &err), err);
    CHECK_EQ_INT(n->format_version, 2);
    CHECK_EQ_INT(n->last_sequence_number, 0);
    CHECK(n->table_uuid != NULL);
    CHECK_EQ_STR(n->table_uuid, m->table_uuid);
    CHECK_EQ_INT(n->n_schemas, 1);
    CHECK_EQ_INT(n->current_snapshot_id, m->current_snapshot_id);
    CHECK(floe_table_metadata_ref(n, "main") != NULL);
    CHECK_EQ_STR(floe_table_metadata_property(n, "floe.test"), "1");
    REQUIRE(n->n_metadata_log >= 1);
    CHECK_EQ_STR(n->metadata_log[n->n_metadata_log - 1].metadata_file, "old.metadata.json");
    char *text = NULL;
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"schema\":") == NULL);
    CHECK(strstr(text, "\"partition-spec\":") == NULL);
    CHECK(strstr(text, "\"sort-orders\":") != NULL);
    floe_free(text);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
    free(p);
}

/* Spec "Version 1" / "Appendix E": a change to a v1 table keeps it v1 unless the
 * upgrade is asked for: no last-sequence-number, no snapshot sequence-number, the
 * required v1 fields "schema" and "partition-spec" written (equal to the current schema
 * and default spec); a downgrade is refused. */
TEST(v1_stays_v1) {
    char *p = conf("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json");
    floe_error err;
    floe_table_metadata *m = NULL, *n = NULL;
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_table_metadata_read(NULL, p, &m, &err), err);
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_format_version(b), 1);
    floe_snapshot_new sn = {.operation = "append", .manifest_list = "snap-x.avro",
                            .schema_id = -1};
    int64_t id = 0, seq = -1;
    REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &sn, &id, &seq, &err), err);
    CHECK_EQ_INT(seq, 0);
    REQUIRE_OK(floe_metadata_builder_finish(b, "old.metadata.json", &n, &err), err);
    CHECK_EQ_INT(n->format_version, 1);
    CHECK_EQ_INT(n->current_snapshot_id, id);
    char *text = NULL;
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &text, NULL, &err), err);
    CHECK(strstr(text, "\"format-version\":1") != NULL);
    CHECK(strstr(text, "\"schema\":{") != NULL);
    CHECK(strstr(text, "\"partition-spec\":[") != NULL);
    CHECK(strstr(text, "last-sequence-number") == NULL);
    CHECK(strstr(text, "\"sequence-number\"") == NULL);
    floe_free(text);
    /* a v1 table cannot be downgraded */
    CHECK_EQ_INT(floe_metadata_builder_upgrade(b, 0, &err), FLOE_EUNSUPPORTED);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
    free(p);
}

TEST(unknown_fields_survive_builders) {
    char *p = conf("iceberg/icebird/java_bunnies/metadata/v5.metadata.json");
    size_t len = 0;
    char *orig = harness_read_file(p, &len);
    REQUIRE(orig != NULL);
    json_t *doc = json_loadb(orig, len, 0, NULL);
    REQUIRE(doc != NULL);
    json_object_set_new(doc, "x-vendor-extension", json_pack("{s:[i,i]}", "a", 1, 2));
    json_object_set_new(doc, "statistics",
                        json_pack("[{s:I, s:s, s:i, s:i, s:[]}]", "snapshot-id",
                                  (json_int_t)9158179788527662767, "statistics-path", "s.puffin",
                                  "file-size-in-bytes", 10, "file-footer-size-in-bytes", 5,
                                  "blob-metadata"));
    json_object_set_new(json_object_get(doc, "properties"), "vendor.unknown", json_string("keep me"));
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    floe_error err;
    floe_table_metadata *m = NULL, *n = NULL;
    REQUIRE_OK(floe_table_metadata_parse(text, strlen(text), "edited", &m, &err), err);
    free(text);
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    int64_t sid = 0, seq = 0;
    floe_kv extra[] = {{"added-records", "5"}};
    floe_snapshot_new s = {.operation = "append", .manifest_list = "ml.avro", .summary = extra,
                           .n_summary = 1, .schema_id = -1};
    REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &s, &sid, &seq, &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, "base.json", &n, &err), err);
    char *out = NULL;
    REQUIRE_OK(floe_table_metadata_to_json(n, false, &out, NULL, &err), err);
    CHECK(strstr(out, "\"x-vendor-extension\":{\"a\":[1,2]}") != NULL);
    CHECK(strstr(out, "\"statistics-path\":\"s.puffin\"") != NULL);
    CHECK(strstr(out, "\"vendor.unknown\":\"keep me\"") != NULL);
    CHECK_EQ_INT(seq, m->last_sequence_number + 1);
    CHECK_EQ_INT(n->last_sequence_number, seq);
    CHECK_EQ_INT(n->current_snapshot_id, sid);
    const floe_snapshot *ns = floe_table_metadata_current_snapshot(n);
    REQUIRE(ns != NULL);
    CHECK(ns->has_parent);
    CHECK_EQ_INT(ns->parent_snapshot_id, m->current_snapshot_id);
    CHECK_EQ_STR(ns->operation, "append");
    CHECK_EQ_INT(n->snapshot_log[n->n_snapshot_log - 1].snapshot_id, sid);
    CHECK(n->last_updated_ms >= m->last_updated_ms);
    CHECK_EQ_INT(floe_table_metadata_ref(n, "main")->snapshot_id, sid);
    floe_free(out);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(m);
    floe_table_metadata_free(n);
    free(orig);
    free(p);
}

static floe_table_metadata *new_table(floe_error *err) {
    floe_metadata_builder *b = NULL;
    floe_table_metadata *m = NULL;
    floe_kv props[] = {{"write.metadata.previous-versions-max", "3"}};
    const char *spec = "{\"fields\":[{\"source-id\":2,\"transform\":\"day\",\"name\":\"ts_day\"}]}";
    if (floe_metadata_builder_new_table("/tmp/wh/ns/t", SCHEMA, spec, NULL, props, 1, &b, err) ==
        0)
        FLOE_IGNORE_RESULT(floe_metadata_builder_finish(b, NULL, &m, err)); /* m stays NULL */
    floe_metadata_builder_free(b);
    return m;
}

TEST(new_table_assigns_ids) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err);
    REQUIRE(m != NULL);
    CHECK_EQ_INT(m->format_version, 2);
    CHECK_EQ_INT(m->last_column_id, 4);
    CHECK_EQ_INT(m->current_schema_id, 0);
    CHECK_EQ_INT(m->schemas[0].schema_id, 0);
    CHECK_EQ_INT(m->last_partition_id, 1000);
    CHECK(strstr(m->specs[0].json, "\"field-id\":1000") != NULL);
    CHECK_EQ_INT(m->current_snapshot_id, -1);
    CHECK_EQ_INT(m->n_snapshots, 0);
    CHECK_EQ_INT(m->default_sort_order_id, 0);
    REQUIRE(m->table_uuid != NULL);
    CHECK_EQ_INT(strlen(m->table_uuid), 36);
    CHECK(m->table_uuid[14] == '4'); /* version 4 */
    CHECK(strchr("89ab", m->table_uuid[19]) != NULL);
    floe_table_metadata *m2 = new_table(&err);
    REQUIRE(m2 != NULL);
    CHECK(strcmp(m->table_uuid, m2->table_uuid) != 0);
    /* add a schema and a spec, switch to them */
    floe_metadata_builder *b = NULL;
    floe_table_metadata *n = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    int32_t sid = -1, spid = -1;
    const char *s2 = "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,"
                     "\"type\":\"long\"},{\"id\":9,\"name\":\"x\",\"required\":false,\"type\":\"int\"}]}";
    REQUIRE_OK(floe_metadata_builder_add_schema(b, s2, &sid, &err), err);
    REQUIRE_OK(floe_metadata_builder_set_current_schema(b, sid, &err), err);
    REQUIRE_OK(floe_metadata_builder_add_spec(b, "[{\"source-id\":9,\"transform\":\"bucket[4]\",\"name\":\"xb\"}]",
                                              &spid, &err),
               err);
    REQUIRE_OK(floe_metadata_builder_set_default_spec(b, spid, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_set_current_schema(b, 42, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_metadata_builder_add_schema(b, "{\"type\":\"struct\",\"fields\":[{\"id\":1}]}",
                                                  NULL, &err),
                 FLOE_ESCHEMA);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v1.metadata.json", &n, &err), err);
    CHECK_EQ_INT(sid, 1);
    CHECK_EQ_INT(n->current_schema_id, 1);
    CHECK_EQ_INT(n->last_column_id, 9);
    CHECK_EQ_INT(spid, 1);
    CHECK_EQ_INT(n->default_spec_id, 1);
    CHECK_EQ_INT(n->last_partition_id, 1001);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
    floe_table_metadata_free(m2);
}

TEST(metadata_log_pruned_and_snapshots_removed) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err);
    REQUIRE(m != NULL);
    int64_t ids[5];
    for (int i = 0; i < 5; i++) {
        floe_metadata_builder *b = NULL;
        floe_table_metadata *n = NULL;
        REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
        floe_snapshot_new s = {.operation = "append", .manifest_list = "ml.avro", .schema_id = -1,
                               .timestamp_ms = 1000 + i};
        REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &s, &ids[i], NULL, &err), err);
        char loc[32];
        snprintf(loc, sizeof loc, "v%d.metadata.json", i + 1);
        REQUIRE_OK(floe_metadata_builder_finish(b, loc, &n, &err), err);
        floe_metadata_builder_free(b);
        floe_table_metadata_free(m);
        m = n;
    }
    /* previous-versions-max = 3 */
    REQUIRE(m->n_metadata_log == 3);
    CHECK_EQ_STR(m->metadata_log[0].metadata_file, "v3.metadata.json");
    CHECK_EQ_STR(m->metadata_log[2].metadata_file, "v5.metadata.json");
    CHECK_EQ_INT(m->n_snapshots, 5);
    CHECK_EQ_INT(m->n_snapshot_log, 5);
    CHECK_EQ_INT(m->last_sequence_number, 5);
    /* a tag or branch on a snapshot to remove is a conflict (refs changed since the
     * caller planned), never dropped with it; removed first, the snapshot goes */
    floe_metadata_builder *b = NULL;
    floe_table_metadata *n = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    REQUIRE_OK(floe_metadata_builder_set_ref(b, "keep", ids[1], true, &err), err);
    REQUIRE_OK(floe_metadata_builder_set_ref(b, "dev", ids[0], false, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_remove_snapshots(b, &ids[4], 1, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_metadata_builder_remove_snapshots(b, ids, 2, &err), FLOE_ECONFLICT);
    REQUIRE_OK(floe_metadata_builder_remove_ref(b, "keep", &err), err);
    CHECK_EQ_INT(floe_metadata_builder_remove_snapshots(b, ids, 2, &err), FLOE_ECONFLICT);
    CHECK(strstr(err.msg, "branch dev points at it") != NULL);
    REQUIRE_OK(floe_metadata_builder_remove_ref(b, "dev", &err), err);
    REQUIRE_OK(floe_metadata_builder_remove_snapshots(b, ids, 2, &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v6.metadata.json", &n, &err), err);
    CHECK_EQ_INT(n->n_snapshots, 3);
    CHECK(floe_table_metadata_snapshot(n, ids[0]) == NULL);
    CHECK(floe_table_metadata_ref(n, "keep") == NULL);
    CHECK_EQ_INT(n->n_snapshot_log, 3);
    CHECK_EQ_INT(n->snapshot_log[0].snapshot_id, ids[2]);
    CHECK_EQ_INT(n->current_snapshot_id, ids[4]);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
}

/* Ref retention: written under the spec's names, read back into floe_snapshot_ref, -1
 * removes a setting; branch-only settings on a tag, max-ref-age-ms on main and an
 * unknown ref are refused. */
TEST(ref_retention) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err), *n = NULL;
    REQUIRE(m != NULL);
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    floe_snapshot_new s = {.operation = "append", .manifest_list = "ml.avro", .schema_id = -1};
    int64_t id = 0;
    REQUIRE_OK(floe_metadata_builder_add_snapshot(b, &s, &id, NULL, &err), err);
    REQUIRE_OK(floe_metadata_builder_set_ref(b, "br", id, false, &err), err);
    REQUIRE_OK(floe_metadata_builder_set_ref(b, "tg", id, true, &err), err);
    floe_ref_retention r = {3, 3600000, 86400000};
    REQUIRE_OK(floe_metadata_builder_set_ref_retention(b, "br", &r, &err), err);
    floe_ref_retention tag_ok = {-1, -1, 7200000}, tag_bad = {2, -1, -1};
    REQUIRE_OK(floe_metadata_builder_set_ref_retention(b, "tg", &tag_ok, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_set_ref_retention(b, "tg", &tag_bad, &err), FLOE_EINVALID);
    floe_ref_retention main_bad = {-1, -1, 1000}, main_ok = {5, -1, -1};
    CHECK_EQ_INT(floe_metadata_builder_set_ref_retention(b, "main", &main_bad, &err),
                 FLOE_EINVALID);
    REQUIRE_OK(floe_metadata_builder_set_ref_retention(b, "main", &main_ok, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_set_ref_retention(b, "nosuch", &main_ok, &err),
                 FLOE_ENOTFOUND);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v2.metadata.json", &n, &err), err);
    const floe_snapshot_ref *br = floe_table_metadata_ref(n, "br"),
                            *tg = floe_table_metadata_ref(n, "tg"),
                            *mn = floe_table_metadata_ref(n, "main");
    REQUIRE(br && tg && mn);
    CHECK_EQ_INT(br->min_snapshots_to_keep, 3);
    CHECK_EQ_INT(br->max_snapshot_age_ms, 3600000);
    CHECK_EQ_INT(br->max_ref_age_ms, 86400000);
    CHECK(tg->is_tag);
    CHECK_EQ_INT(tg->max_ref_age_ms, 7200000);
    CHECK_EQ_INT(tg->min_snapshots_to_keep, -1);
    CHECK_EQ_INT(mn->min_snapshots_to_keep, 5);
    floe_table_metadata_free(n);
    n = NULL;
    floe_ref_retention clear = {-1, 3600000, -1};
    REQUIRE_OK(floe_metadata_builder_set_ref_retention(b, "br", &clear, &err), err);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v2.metadata.json", &n, &err), err);
    br = floe_table_metadata_ref(n, "br");
    REQUIRE(br != NULL);
    CHECK_EQ_INT(br->min_snapshots_to_keep, -1);
    CHECK_EQ_INT(br->max_snapshot_age_ms, 3600000);
    CHECK_EQ_INT(br->max_ref_age_ms, -1);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
}

/* The default sort order: a new order gets the next id, the same fields keep theirs,
 * clearing selects order 0 (added when the table had none). */
TEST(default_sort_order) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err), *n = NULL;
    REQUIRE(m != NULL);
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    const char *by_ts = "{\"fields\":[{\"transform\":\"identity\",\"source-id\":2,"
                        "\"direction\":\"desc\",\"null-order\":\"nulls-last\"}]}";
    const char *by_id = "[{\"transform\":\"bucket[4]\",\"source-id\":1,"
                        "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]";
    int32_t id = -1;
    REQUIRE_OK(floe_metadata_builder_set_default_sort_order(b, by_ts, &id, &err), err);
    CHECK_EQ_INT(id, 1);
    REQUIRE_OK(floe_metadata_builder_set_default_sort_order(b, by_id, &id, &err), err);
    CHECK_EQ_INT(id, 2);
    REQUIRE_OK(floe_metadata_builder_set_default_sort_order(b, by_ts, &id, &err), err);
    CHECK_EQ_INT(id, 1);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v2.metadata.json", &n, &err), err);
    CHECK_EQ_INT(n->default_sort_order_id, 1);
    CHECK_EQ_INT(n->n_sort_orders, 3); /* 0 (unsorted, from create), 1, 2 */
    floe_table_metadata_free(n);
    n = NULL;
    REQUIRE_OK(floe_metadata_builder_set_default_sort_order(b, NULL, &id, &err), err);
    CHECK_EQ_INT(id, 0);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v2.metadata.json", &n, &err), err);
    CHECK_EQ_INT(n->default_sort_order_id, 0);
    CHECK_EQ_INT(n->n_sort_orders, 3);
    CHECK_EQ_INT(floe_metadata_builder_set_default_sort_order(b, "{\"fields\":3}", &id, &err),
                 FLOE_EINVALID);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
}

/* A table keeping thousands of sort orders and specs: the builder's id cache gives the
 * same ids and duplicates as a walk of the lists would (ids from the highest + 1, an
 * order with the same fields - keys in any order - keeps its id), across a second
 * builder on the finished metadata. (The cache makes each update O(1): adversary
 * adv21h H4, 1,000 add-sort-orders on 100,000 orders ran 353 s.) */
TEST(many_sort_orders_and_specs) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err), *n = NULL, *n2 = NULL;
    REQUIRE(m != NULL);
    floe_metadata_builder *b = NULL;
    REQUIRE_OK(floe_metadata_builder_new(m, &b, &err), err);
    char text[256];
    int32_t id = -1;
    for (int i = 1; i <= 3000; i++) {
        snprintf(text, sizeof text, "[{\"transform\":\"bucket[%d]\",\"source-id\":1,"
                 "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]", i + 1);
        REQUIRE_OK(floe_metadata_builder_add_sort_order(b, text, &id, &err), err);
        CHECK_EQ_INT(id, i);
    }
    for (int i = 1; i <= 300; i++) {
        snprintf(text, sizeof text, "[{\"source-id\":1,\"transform\":\"bucket[%d]\","
                 "\"name\":\"b%d\"}]", i + 1, i);
        REQUIRE_OK(floe_metadata_builder_add_spec(b, text, &id, &err), err);
        CHECK_EQ_INT(id, i);
    }
    REQUIRE_OK(floe_metadata_builder_set_default_spec(b, 300, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_set_default_spec(b, 301, &err), FLOE_EINVALID);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v2.metadata.json", &n, &err), err);
    floe_metadata_builder_free(b);
    CHECK_EQ_INT(n->n_sort_orders, 3001);
    CHECK_EQ_INT(n->n_specs, 301);

    REQUIRE_OK(floe_metadata_builder_new(n, &b, &err), err);
    /* order 1234's fields, keys in another order: the same order */
    REQUIRE_OK(floe_metadata_builder_add_sort_order(
                   b, "{\"fields\":[{\"null-order\":\"nulls-first\",\"direction\":\"asc\","
                      "\"source-id\":1,\"transform\":\"bucket[1235]\"}]}",
                   &id, &err),
               err);
    CHECK_EQ_INT(id, 1234);
    REQUIRE_OK(floe_metadata_builder_add_sort_order(b, NULL, &id, &err), err);
    CHECK_EQ_INT(id, 0); /* unsorted, from the create */
    REQUIRE_OK(floe_metadata_builder_add_sort_order(
                   b, "[{\"transform\":\"identity\",\"source-id\":2,\"direction\":\"desc\","
                      "\"null-order\":\"nulls-last\"}]",
                   &id, &err),
               err);
    CHECK_EQ_INT(id, 3001);
    REQUIRE_OK(floe_metadata_builder_set_default_sort_order_id(b, 3001, &err), err);
    CHECK_EQ_INT(floe_metadata_builder_set_default_sort_order_id(b, 3002, &err), FLOE_EINVALID);
    REQUIRE_OK(floe_metadata_builder_add_spec(b, "[]", &id, &err), err);
    CHECK_EQ_INT(id, 301);
    REQUIRE_OK(floe_metadata_builder_finish(b, "v3.metadata.json", &n2, &err), err);
    CHECK_EQ_INT(n2->n_sort_orders, 3002);
    CHECK_EQ_INT(n2->default_sort_order_id, 3001);
    CHECK_EQ_INT(n2->n_specs, 302);
    floe_metadata_builder_free(b);
    floe_table_metadata_free(n2);
    floe_table_metadata_free(n);
    floe_table_metadata_free(m);
}

TEST(gzip_write_read) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err), *r = NULL;
    REQUIRE(m != NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/v1.gz.metadata.json", harness_tmpdir());
    REQUIRE_OK(floe_table_metadata_write(NULL, m, path, true, true, &err), err);
    size_t len = 0;
    char *raw = harness_read_file(path, &len);
    REQUIRE(raw != NULL && len > 2);
    CHECK((unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
    REQUIRE_OK(floe_table_metadata_read(NULL, path, &r, &err), err);
    CHECK_EQ_STR(r->table_uuid, m->table_uuid);
    /* create-if-absent */
    CHECK_EQ_INT(floe_table_metadata_write(NULL, m, path, true, true, &err), FLOE_EEXISTS);
    /* truncated gzip is corrupt, not a crash */
    for (size_t cut = 0; cut < len; cut += 7) {
        floe_table_metadata *x = NULL;
        int rc = floe_table_metadata_parse(raw, cut, "cut.gz", &x, &err);
        CHECK(rc == FLOE_ECORRUPT);
        floe_table_metadata_free(x);
    }
    free(raw);
    floe_table_metadata_free(r);
    floe_table_metadata_free(m);
}

TEST(malformed_metadata) {
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = NULL;
    char *bad = conf("iceberg/duckdb-iceberg/bad_data/bad_iceberg_metadata.json");
    CHECK_EQ_INT(floe_table_metadata_read(NULL, bad, &m, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "bad_iceberg_metadata.json") != NULL);
    floe_table *t = NULL;
    CHECK_EQ_INT(floe_table_open_path(bad, NULL, &t, &err), FLOE_ECORRUPT);
    CHECK(t == NULL);
    free(bad);
    char *stub = conf("iceberg/duckdb-iceberg/big_query_error/metadata/v0.metadata.json");
    CHECK_EQ_INT(floe_table_metadata_read(NULL, stub, &m, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "format-version") != NULL);
    free(stub);
    static const struct {
        const char *json, *needle;
        int code;
    } cases[] = {
        {"[]", "JSON object", FLOE_ECORRUPT},
        {"{\"format-version\":4}", "newer", FLOE_EUNSUPPORTED},
        {"{\"format-version\":\"2\"}", "format-version", FLOE_ECORRUPT},
        {"{\"format-version\":2,\"format-version\":2}", "duplicate", FLOE_ECORRUPT},
        {"{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\",\"last-sequence-number\":0,"
         "\"last-updated-ms\":1,\"last-column-id\":1,\"current-schema-id\":0,\"partition-specs\":[],"
         "\"default-spec-id\":0}",
         "schemas", FLOE_ECORRUPT},
        {"{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\",\"last-sequence-number\":0,"
         "\"last-updated-ms\":1,\"last-column-id\":1,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,"
         "\"fields\":[]}],\"current-schema-id\":3,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
         "\"default-spec-id\":0,\"last-partition-id\":999,\"sort-orders\":[{\"order-id\":0,"
         "\"fields\":[]}],\"default-sort-order-id\":0}",
         "current-schema-id 3", FLOE_ECORRUPT},
        {"{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\",\"last-sequence-number\":0,"
         "\"last-updated-ms\":1,\"last-column-id\":1,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,"
         "\"fields\":[]}],\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
         "\"default-spec-id\":0,\"last-partition-id\":999,\"sort-orders\":[{\"order-id\":0,"
         "\"fields\":[]}],\"default-sort-order-id\":0,\"current-snapshot-id\":5,\"snapshots\":[]}",
         "current-snapshot-id 5", FLOE_ECORRUPT},
        {"{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\",\"last-sequence-number\":0,"
         "\"last-updated-ms\":1,\"last-column-id\":1,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,"
         "\"fields\":[]}],\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
         "\"default-spec-id\":0,\"last-partition-id\":999,\"sort-orders\":[{\"order-id\":0,"
         "\"fields\":[]}],\"default-sort-order-id\":0,\"snapshots\":[{\"snapshot-id\":1,"
         "\"timestamp-ms\":1,\"manifest-list\":\"x\",\"summary\":{\"operation\":\"append\"}}]}",
         "sequence-number", FLOE_ECORRUPT},
        {"{\"format-version\":2, \"x\": 99999999999999999999999}",
         "\"x\" is 99999999999999999999999 (line 1 column 27), outside the signed 64-bit",
         FLOE_ECORRUPT},
        {"{\"format-version\":2, \"x\": \"a\\u0000b\"}", "NUL", FLOE_ECORRUPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_error_clear(&err);
        int rc = floe_table_metadata_parse(cases[i].json, strlen(cases[i].json), "case.json", &m,
                                           &err);
        if (rc != cases[i].code || !strstr(err.msg, cases[i].needle))
            harness_fail(__FILE__, __LINE__, "case %zu: rc %d msg \"%s\" (want %d, \"%s\")", i, rc,
                         err.msg, cases[i].code, cases[i].needle);
    }
    /* every truncation of a real file fails cleanly */
    char *p = conf("iceberg/icebird/spark_bunnies/metadata/v5.metadata.json");
    size_t len = 0;
    char *raw = harness_read_file(p, &len);
    REQUIRE(raw != NULL);
    for (size_t cut = 0; cut < len - 1; cut += 13) {
        m = NULL;
        int rc = floe_table_metadata_parse(raw, cut, "cut.json", &m, &err);
        CHECK(rc < 0);
        CHECK(m == NULL);
    }
    free(raw);
    free(p);
}

/* A table with one snapshot whose id (and the refs') is ID, and last-sequence-number SEQ. */
static char *one_snapshot_doc(const char *id, const char *seq) {
    return floe_asprintf(
        "{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\","
        "\"last-sequence-number\":%s,\"last-updated-ms\":1,\"last-column-id\":1,"
        "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}],"
        "\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"default-spec-id\":0,\"last-partition-id\":999,\"sort-orders\":[{\"order-id\":0,"
        "\"fields\":[]}],\"default-sort-order-id\":0,\"current-snapshot-id\":%s,"
        "\"refs\":{\"main\":{\"snapshot-id\":%s,\"type\":\"branch\"}},"
        "\"snapshots\":[{\"snapshot-id\":%s,\"sequence-number\":1,\"timestamp-ms\":1,"
        "\"manifest-list\":\"x\",\"summary\":{\"operation\":\"append\","
        "\"big\":\"99999999999999999999\"}}],\"snapshot-log\":[{\"timestamp-ms\":1,"
        "\"snapshot-id\":%s}]}",
        seq, id, id, id, id);
}

/* Integers past the signed 64-bit range are refused naming the field, never wrapped
 * (format/spec.md: ids, sequence numbers and timestamps are longs). The range's ends read
 * and are written back exactly; digits inside strings are not integers. */
TEST(longs_past_64_bits_refused) {
    static const struct {
        const char *id, *seq;
        int code;
        const char *needle;
    } cases[] = {
        {"9223372036854775807", "1", 0, NULL},
        {"-9223372036854775808", "1", 0, NULL},
        {"9223372036854775808", "1", FLOE_ECORRUPT, "\"current-snapshot-id\" is 9223372036854775808"},
        {"9876543210123456789", "1", FLOE_ECORRUPT, "\"current-snapshot-id\" is 9876543210123456789"},
        {"18446744073709551616", "1", FLOE_ECORRUPT, "is 18446744073709551616"},
        {"-9223372036854775809", "1", FLOE_ECORRUPT, "is -9223372036854775809"},
        {"7", "18446744073709551615", FLOE_ECORRUPT, "\"last-sequence-number\" is 1844674407"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *doc = one_snapshot_doc(cases[i].id, cases[i].seq);
        REQUIRE(doc != NULL);
        floe_table_metadata *m = NULL;
        floe_error err;
        floe_error_clear(&err);
        int rc = floe_table_metadata_parse(doc, strlen(doc), "ids.json", &m, &err);
        if (rc != cases[i].code ||
            (cases[i].needle && (!strstr(err.msg, cases[i].needle) ||
                                 !strstr(err.msg, "outside the signed 64-bit range"))))
            harness_fail(__FILE__, __LINE__, "case %zu: rc %d msg \"%s\" (want %d, \"%s\")", i,
                         rc, err.msg, cases[i].code, cases[i].needle ? cases[i].needle : "");
        if (rc == 0) {
            int64_t want = strtoll(cases[i].id, NULL, 10);
            CHECK_EQ_INT(m->current_snapshot_id, want);
            /* written back exactly */
            char path[4200];
            snprintf(path, sizeof path, "%s/v1.metadata.json", harness_tmpdir());
            REQUIRE_OK(floe_table_metadata_write(NULL, m, path, false, false, &err), err);
            size_t n = 0;
            char *text = harness_read_file(path, &n);
            REQUIRE(text != NULL);
            CHECK(strstr(text, cases[i].id) != NULL);
            floe_table_metadata *back = NULL;
            REQUIRE_OK(floe_table_metadata_parse(text, n, path, &back, &err), err);
            CHECK_EQ_INT(back->current_snapshot_id, want);
            CHECK_EQ_INT(floe_table_metadata_current_snapshot(back)->snapshot_id, want);
            floe_table_metadata_free(back);
            free(text);
        }
        floe_table_metadata_free(m);
        floe_free(doc);
    }
}

TEST(allocation_failures_unwind) {
    char *p = conf("iceberg/icebird/java_bunnies/metadata/v5.metadata.json");
    size_t len = 0;
    char *raw = harness_read_file(p, &len);
    REQUIRE(raw != NULL);
    int failures = 0;
    for (uint64_t n = 1; n < 5000; n++) {
        floe_error err;
        floe_error_clear(&err);
        floe_table_metadata *m = NULL, *out = NULL;
        floe_metadata_builder *b = NULL;
        floe_alloc_fail_after(n);
        int rc = floe_table_metadata_parse(raw, len, "v5", &m, &err);
        if (rc == 0)
            rc = floe_metadata_builder_new(m, &b, &err);
        if (rc == 0)
            rc = floe_metadata_builder_set_property(b, "k", "v", &err);
        if (rc == 0)
            rc = floe_metadata_builder_finish(b, "x", &out, &err);
        floe_alloc_fail_after(0);
        floe_metadata_builder_free(b);
        floe_table_metadata_free(out);
        floe_table_metadata_free(m);
        if (rc == 0)
            break;
        if (rc != FLOE_ENOMEM)
            harness_fail(__FILE__, __LINE__, "allocation %llu: rc %d: %s", (unsigned long long)n,
                         rc, err.msg);
        failures++;
    }
    CHECK(failures > 10);
    free(raw);
    free(p);
}

/* INDEX.md location quirks, one by one. */
static void check_map(const char *folder, const char *recorded, const char *expect_suffix,
                      const floe_table_open_options *opts, int expect_rc) {
    char rel[512];
    snprintf(rel, sizeof rel, "iceberg/%s", folder);
    char *dir = conf(rel);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    int rc = floe_table_open_path(dir, opts, &t, &err);
    if (rc != 0) {
        harness_fail(__FILE__, __LINE__, "%s: %s", folder, err.msg);
        free(dir);
        return;
    }
    char *out = NULL;
    rc = floe_table_resolve_path(t, recorded, &out, &err);
    if (rc != expect_rc)
        harness_fail(__FILE__, __LINE__, "%s: %s: rc %d (%s), want %d", folder, recorded, rc,
                     err.msg, expect_rc);
    if (rc == 0 && expect_suffix) {
        size_t n = strlen(out), m = strlen(expect_suffix);
        if (n < m || strcmp(out + n - m, expect_suffix))
            harness_fail(__FILE__, __LINE__, "%s: %s -> %s, want ...%s", folder, recorded, out,
                         expect_suffix);
        if (!harness_file_exists(out))
            harness_fail(__FILE__, __LINE__, "%s: %s does not exist", folder, out);
    }
    if (rc == FLOE_EINVALID && !strstr(err.msg, recorded))
        harness_fail(__FILE__, __LINE__, "refusal does not name the path: %s", err.msg);
    floe_free(out);
    floe_table_close(t);
    free(dir);
}

TEST(location_mapping_quirks) {
    /* data/persistent/... */
    check_map("duckdb-iceberg/hive_partitioned_table",
              "data/persistent/hive_partitioned_table/metadata/v4.metadata.json",
              "hive_partitioned_table/metadata/v4.metadata.json", NULL, 0);
    /* file://data/persistent/... (relative after file://) */
    check_map("duckdb-iceberg/map_stats/default.db/map_stats",
              "file://data/persistent/map_stats/default.db/map_stats/metadata/"
              "00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json",
              "map_stats/metadata/00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json", NULL, 0);
    /* ./lineitem_iceberg_gz with paths lineitem_iceberg_gz/... */
    check_map("duckdb-iceberg/iceberg/lineitem_iceberg_gz",
              "lineitem_iceberg_gz/metadata/v1.gz.metadata.json",
              "lineitem_iceberg_gz/metadata/v1.gz.metadata.json", NULL, 0);
    /* the location names the other folder: still maps onto the one we were given */
    check_map("duckdb-iceberg/iceberg/lineitem_iceberg_gz_no_hint",
              "lineitem_iceberg_gz/metadata/v1.gz.metadata.json",
              "lineitem_iceberg_gz_no_hint/metadata/v1.gz.metadata.json", NULL, 0);
    /* s3a://... */
    check_map("icebird/spark_bunnies", "s3a://hyperparam-iceberg/spark/bunnies/metadata/v1.metadata.json",
              "spark_bunnies/metadata/v1.metadata.json", NULL, 0);
    /* gs:// location with paths that ignore it: refused unless relocated */
    check_map("duckdb-iceberg/big_query_error", "data/persistent/big_query_error/metadata/v0.metadata.json",
              NULL, NULL, FLOE_EINVALID);
    char *bq = conf("iceberg/duckdb-iceberg/big_query_error");
    floe_table_open_options reloc = {"data/persistent/big_query_error", bq, NULL};
    check_map("duckdb-iceberg/big_query_error", "data/persistent/big_query_error/metadata/v0.metadata.json",
              "big_query_error/metadata/v0.metadata.json", &reloc, 0);
    free(bq);
    /* a data file outside the table (column_mapping): refused, allowed by relocation */
    const char *outside = "data/persistent/column_mapping/warehouse/example/mock_data.parquet";
    check_map("duckdb-iceberg/column_mapping/warehouse/default.db/my_table", outside, NULL, NULL,
              FLOE_EINVALID);
    char *dd = conf("iceberg/duckdb-iceberg");
    floe_table_open_options reloc2 = {"data/persistent", dd, NULL};
    check_map("duckdb-iceberg/column_mapping/warehouse/default.db/my_table", outside,
              "column_mapping/warehouse/example/mock_data.parquet", &reloc2, 0);
    free(dd);
    /* s3://fake-bucket data paths of generated_bounds: outside, refused */
    check_map("duckdb-iceberg/generated_bounds", "s3://fake-bucket/d/0000000001/t.parquet", NULL, NULL,
              FLOE_EINVALID);
    /* climbing out with .. after the prefix, or a sibling that shares the prefix text */
    check_map("duckdb-iceberg/hive_partitioned_table",
              "data/persistent/hive_partitioned_table/../partition_bool/metadata/v2.metadata.json",
              NULL, NULL, FLOE_EINVALID);
    check_map("duckdb-iceberg/iceberg/lineitem_iceberg_gz",
              "lineitem_iceberg_gz_no_hint/metadata/v1.gz.metadata.json", NULL, NULL, FLOE_EINVALID);
    check_map("duckdb-iceberg/hive_partitioned_table", "/etc/passwd", NULL, NULL, FLOE_EINVALID);
}

TEST(locate_hint_quirks) {
    /* a stale numeric hint walks forward; a hint naming nothing falls back to listing */
    const char *d = harness_tmpdir();
    char md[4096], p[4200];
    snprintf(md, sizeof md, "%s/metadata", d);
    floe_error err;
    floe_error_clear(&err);
    floe_table_metadata *m = new_table(&err);
    REQUIRE(m != NULL);
    for (int v = 1; v <= 3; v++) {
        snprintf(p, sizeof p, "%s/v%d.metadata.json", md, v);
        REQUIRE_OK(floe_table_metadata_write(NULL, m, p, false, true, &err), err);
    }
    snprintf(p, sizeof p, "%s/version-hint.text", md);
    harness_write_file(p, "1\n", 2);
    char *uri = NULL;
    REQUIRE_OK(floe_table_locate_metadata(NULL, d, &uri, &err), err);
    CHECK(strstr(uri, "/v3.metadata.json") != NULL);
    floe_free(uri);
    harness_write_file(p, "nonsense-stem", 13);
    REQUIRE_OK(floe_table_locate_metadata(NULL, d, &uri, &err), err);
    CHECK(strstr(uri, "/v3.metadata.json") != NULL);
    floe_free(uri);
    harness_write_file(p, "../../etc/passwd", 16);
    REQUIRE_OK(floe_table_locate_metadata(NULL, d, &uri, &err), err);
    CHECK(strstr(uri, "/v3.metadata.json") != NULL);
    floe_free(uri);
    /* an empty folder is not a table */
    CHECK_EQ_INT(floe_table_locate_metadata(NULL, harness_tmpdir(), &uri, &err), FLOE_ENOTFOUND);
    floe_table_metadata_free(m);
}

/* Snapshots are found by id through a sorted index (tables keep hundreds of thousands:
 * a linear search per look-up, and per snapshot for the duplicate check, made 200,000
 * snapshots take a minute to open): every id of a scattered set is found, a missing one
 * is not, and an id that appears twice is refused naming both places. */
static char *snapshots_doc(size_t n, bool dup) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"l\","
                    "\"last-sequence-number\":1,\"last-updated-ms\":1,\"last-column-id\":1,"
                    "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}],"
                    "\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
                    "\"default-spec-id\":0,\"last-partition-id\":999,\"sort-orders\":"
                    "[{\"order-id\":0,\"fields\":[]}],\"default-sort-order-id\":0,"
                    "\"current-snapshot-id\":%lld,\"snapshots\":[",
                    (long long)((n - 1) * 7919 % 100003 + 1));
    for (size_t i = 0; i < n; i++) {
        long long id = (long long)(i * 7919 % 100003 + 1); /* distinct for n < 100003 */
        if (dup && i == n - 1)
            id = (long long)(2 * 7919 % 100003 + 1);
        floe_buf_printf(&b, "%s{\"snapshot-id\":%lld,", i ? "," : "", id);
        if (i)
            floe_buf_printf(&b, "\"parent-snapshot-id\":%lld,",
                            (long long)((i - 1) * 7919 % 100003 + 1));
        floe_buf_printf(&b, "\"sequence-number\":1,\"timestamp-ms\":%zu,\"manifest-list\":"
                        "\"x\",\"summary\":{\"operation\":\"append\"}}", i);
    }
    floe_buf_printf(&b, "]}");
    floe_buf_append_byte(&b, 0);
    return (char *)b.data;
}

TEST(many_snapshots_by_id) {
    const size_t n = 20000;
    char *doc = snapshots_doc(n, false);
    REQUIRE(doc);
    floe_table_metadata *m = NULL;
    floe_error err;
    REQUIRE_OK(floe_table_metadata_parse(doc, strlen(doc), "many.json", &m, &err), err);
    CHECK_EQ_U64(m->n_snapshots, n);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t id = (int64_t)(i * 7919 % 100003 + 1);
        const floe_snapshot *sn = floe_table_metadata_snapshot(m, id);
        if (sn && sn->snapshot_id == id && sn == &m->snapshots[i])
            found++;
    }
    CHECK_EQ_U64(found, n);
    CHECK(floe_table_metadata_snapshot(m, 0) == NULL);
    CHECK(floe_table_metadata_snapshot(m, 100004) == NULL);
    CHECK(floe_table_metadata_snapshot(m, INT64_MIN) == NULL);
    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    CHECK(cur == &m->snapshots[n - 1]);
    /* the parent chain walks back to the first snapshot */
    size_t depth = 1;
    for (const floe_snapshot *p = cur; p && p->has_parent; depth++)
        p = floe_table_metadata_snapshot(m, p->parent_snapshot_id);
    CHECK_EQ_U64(depth, n);
    floe_table_metadata *c = NULL;
    REQUIRE_OK(floe_table_metadata_clone(m, &c, &err), err);
    CHECK(floe_table_metadata_snapshot(c, (int64_t)(5 * 7919 % 100003 + 1)) == &c->snapshots[5]);
    floe_table_metadata_free(c);
    floe_table_metadata_free(m);
    free(doc);
    doc = snapshots_doc(n, true);
    REQUIRE(doc);
    CHECK_EQ_INT(floe_table_metadata_parse(doc, strlen(doc), "many.json", &m, &err),
                 FLOE_ECORRUPT);
    char want[96];
    snprintf(want, sizeof want, "snapshot-id %d appears twice (snapshots[2] and [%zu])",
             2 * 7919 % 100003 + 1, n - 1);
    CHECK(strstr(err.msg, want) != NULL);
    CHECK(strstr(err.msg, "many.json") != NULL);
    free(doc);
}

int main(void) {
    RUN(conformance_current_metadata);
    RUN(conformance_roundtrip_all_files);
    RUN(v1_gzip_fields);
    RUN(v1_deprecated_fields);
    RUN(v3_snapshots_carry_row_lineage);
    RUN(v3_upgrade_and_create);
    RUN(v1_upgrade_to_v2);
    RUN(v1_stays_v1);
    RUN(unknown_fields_survive_builders);
    RUN(new_table_assigns_ids);
    RUN(metadata_log_pruned_and_snapshots_removed);
    RUN(default_sort_order);
    RUN(many_sort_orders_and_specs);
    RUN(ref_retention);
    RUN(gzip_write_read);
    RUN(malformed_metadata);
    RUN(longs_past_64_bits_refused);
    RUN(allocation_failures_unwind);
    RUN(location_mapping_quirks);
    RUN(locate_hint_quirks);
    RUN(many_snapshots_by_id);
    return harness_finish();
}
