/*
 * test_manifest.c - Iceberg manifests and manifest lists: every conformance table's lists
 * and manifests read (file and row counts against INDEX.md), write + read round trips with
 * every partition type, inheritance rules, metrics from Parquet file info, writer rules,
 * malformed input.
 *
 * With FLOE_MANIFEST_OUT set, the round-trip files are also written there for
 * tests/integration/manifest_avsc.sh to check with avsc against the spec's schemas.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/avro.h"
#include "floe/manifest.h"
#include "floe/table.h"
#include "harness.h"

/* ---------------------------------------------------------------------------------------
 * conformance tables
 * ------------------------------------------------------------------------------------- */

typedef struct totals {
    int64_t manifests, data_manifests, delete_manifests;
    int64_t data_files, data_records, delete_files, delete_records;
    int64_t entries;
    bool length_mismatch;
    bool header_incomplete;
    bool list_v1;
} totals;

/* Partition spec of the table for spec_id, bound to the current schema; NULL if it does
 * not bind (the reader then falls back to the manifest header). */
static floe_partition_spec *table_spec(const floe_table_metadata *m, int32_t spec_id,
                                       floe_schema **schema_out) {
    const floe_metadata_spec *ms = floe_table_metadata_spec(m, spec_id);
    const floe_metadata_schema *sc = floe_table_metadata_current_schema(m);
    floe_schema *s = NULL;
    floe_partition_spec *spec = NULL;
    if (!ms || !sc || floe_schema_parse(sc->json, strlen(sc->json), &s, NULL) < 0)
        return NULL;
    if (floe_partition_spec_parse_json(ms->json, strlen(ms->json), s, &spec, NULL) < 0) {
        floe_schema_free(s);
        return NULL;
    }
    *schema_out = s;
    return spec;
}

static int read_manifest(floe_table *t, const char *recorded, const floe_manifest_file *mf,
                         const floe_manifest_read_options *base, totals *tot, floe_error *err) {
    char *local = NULL;
    int rc = floe_table_resolve_path(t, recorded, &local, err);
    if (rc < 0)
        return rc;
    floe_schema *schema = NULL;
    floe_partition_spec *spec =
        mf ? table_spec(floe_table_metadata_get(t), mf->partition_spec_id, &schema) : NULL;
    floe_manifest_read_options o = *base;
    o.manifest = mf;
    o.spec = spec;
    floe_manifest_reader *r = NULL;
    rc = floe_manifest_reader_open(local, &o, &r, err);
    int64_t live = 0;
    while (rc >= 0) {
        const floe_manifest_entry *e;
        rc = floe_manifest_reader_next(r, &e, err);
        if (rc <= 0)
            break;
        tot->entries++;
        /* inheritance must leave nothing unknown when the list entry is given */
        if (mf && (!e->has_snapshot_id || !e->has_sequence_number ||
                   !e->has_file_sequence_number)) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "entry without inherited ids: %s",
                                e->file.file_path);
            break;
        }
        if (e->file.npartition != floe_manifest_reader_spec(r)->nfields && spec) {
            rc = floe_error_set(err, FLOE_ECORRUPT, "partition arity");
            break;
        }
        if (e->status == FLOE_ENTRY_DELETED)
            continue;
        live++;
        if (e->file.content == FLOE_CONTENT_DATA) {
            tot->data_files++;
            tot->data_records += e->file.record_count;
        } else {
            tot->delete_files++;
            tot->delete_records += e->file.record_count;
        }
    }
    if (r && floe_manifest_reader_info(r)->length_mismatch)
        tot->length_mismatch = true;
    if (r && floe_manifest_reader_info(r)->header_incomplete)
        tot->header_incomplete = true;
    if (rc >= 0 && mf && mf->added_files_count >= 0 && mf->existing_files_count >= 0 &&
        live != mf->added_files_count + mf->existing_files_count)
        rc = floe_error_set(err, FLOE_ECORRUPT, "%s: %lld live entries, list says %lld",
                            recorded, (long long)live,
                            (long long)(mf->added_files_count + mf->existing_files_count));
    floe_manifest_reader_close(r);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    floe_free(local);
    return rc < 0 ? rc : 0;
}

static int table_totals_at(const char *rel, const char *relocate_from,
                           const floe_manifest_read_options *o, totals *tot, floe_error *err) {
    memset(tot, 0, sizeof *tot);
    floe_table *t = NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", harness_conformance(rel));
    floe_table_open_options to = {.relocate_from = relocate_from, .relocate_to = dir};
    int rc = floe_table_open_path(dir, relocate_from ? &to : NULL, &t, err);
    if (rc < 0)
        return rc;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    floe_arena a;
    floe_arena_init(&a, 4096);
    if (!s)
        goto done;
    if (!s->manifest_list) {
        /* v1 snapshot listing its manifests directly */
        for (size_t i = 0; i < s->n_manifests && rc >= 0; i++) {
            tot->manifests++;
            rc = read_manifest(t, s->manifests[i], NULL, o, tot, err);
        }
        goto done;
    }
    char *list = NULL;
    if ((rc = floe_table_resolve_path(t, s->manifest_list, &list, err)) < 0)
        goto done;
    floe_manifest_list ml;
    floe_manifest_list_read_options lo = {.allow_missing_field_ids = o->allow_missing_field_ids,
                                          .has_snapshot_id = true,
                                          .snapshot_id = s->snapshot_id};
    rc = floe_manifest_list_read(list, &lo, &a, &ml, err);
    floe_free(list);
    if (rc < 0)
        goto done;
    tot->list_v1 = ml.format_version == 1;
    for (size_t i = 0; i < ml.nfiles && rc >= 0; i++) {
        tot->manifests++;
        if (ml.files[i].content == FLOE_MANIFEST_DATA)
            tot->data_manifests++;
        else
            tot->delete_manifests++;
        if (!ml.files[i].has_added_snapshot_id)
            rc = floe_error_set(err, FLOE_ECORRUPT, "list entry without a snapshot id");
        else
            rc = read_manifest(t, ml.files[i].manifest_path, &ml.files[i], o, tot, err);
    }
done:
    floe_arena_reset(&a);
    floe_table_close(t);
    return rc < 0 ? rc : 0;
}

static int table_totals(const char *rel, const floe_manifest_read_options *o, totals *tot,
                        floe_error *err) {
    return table_totals_at(rel, NULL, o, tot, err);
}

/* Tables without deletes in their current snapshot: live data records = rows. */
TEST(conformance_row_counts) {
    static const struct {
        const char *rel;
        int64_t files, records;
    } tables[] = {
        {"iceberg/duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults",
         -1, 3},
        {"iceberg/duckdb-iceberg/case_sensitive_names/default.db/case_sensitive_names", -1, 3},
        {"iceberg/duckdb-iceberg/column_mapping/warehouse/default.db/my_table", -1, 3},
        {"iceberg/duckdb-iceberg/custom_write_paths", 0, 0},
        {"iceberg/duckdb-iceberg/expression_filter", -1, 3},
        {"iceberg/duckdb-iceberg/generated_bounds", 5000, 5000000},
        {"iceberg/duckdb-iceberg/hive_partitioned_table", 6, 6},
        {"iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz", -1, 111968},
        {"iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz_no_hint", -1, 111968},
        {"iceberg/duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1", -1, 3},
        {"iceberg/duckdb-iceberg/is_null_is_not_null", 3, 8},
        {"iceberg/duckdb-iceberg/map_stats/default.db/map_stats", -1, 2},
        {"iceberg/duckdb-iceberg/null_stats/default/test_nulls", 3, 9},
        {"iceberg/duckdb-iceberg/partition_bigint", 2, 2},
        {"iceberg/duckdb-iceberg/partition_binary", 2, 2},
        {"iceberg/duckdb-iceberg/partition_bool", 2, 2},
        {"iceberg/duckdb-iceberg/partition_decimal_bigint", 10, 10},
        {"iceberg/duckdb-iceberg/partition_decimal_integer", 3, 3},
        {"iceberg/duckdb-iceberg/partition_decimal_smallint", 2, 2},
        {"iceberg/duckdb-iceberg/partition_double", 2, 2},
        {"iceberg/duckdb-iceberg/partition_fixed_length_binary/default.db/"
         "partition_fixed_length_binary", 2, 2},
        {"iceberg/duckdb-iceberg/partition_float", 2, 2},
        {"iceberg/duckdb-iceberg/partition_integer", 2, 2},
        {"iceberg/duckdb-iceberg/partition_time/default.db/partition_time", 2, 2},
        {"iceberg/duckdb-iceberg/partition_timestamp/default.db/partition_timestamp", 2, 2},
        {"iceberg/duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz", 2, 2},
        {"iceberg/duckdb-iceberg/uuid", -1, 10},
        {"iceberg/icebird/spark_rename_column", -1, 4},
    };
    floe_manifest_read_options o = {0};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        floe_error err;
        floe_error_clear(&err);
        totals tot;
        int rc = table_totals(tables[i].rel, &o, &tot, &err);
        if (rc < 0) {
            harness_fail(__FILE__, __LINE__, "%s: %s", tables[i].rel, err.msg);
            continue;
        }
        if (tot.data_records != tables[i].records || tot.delete_files != 0 ||
            (tables[i].files >= 0 && tot.data_files != tables[i].files))
            harness_fail(__FILE__, __LINE__, "%s: %lld files / %lld records / %lld deletes, "
                         "want %lld / %lld", tables[i].rel, (long long)tot.data_files,
                         (long long)tot.data_records, (long long)tot.delete_files,
                         (long long)tables[i].files, (long long)tables[i].records);
    }
}

TEST(conformance_quirks) {
    floe_manifest_read_options o = {0};
    floe_error err;
    totals tot;
    /* null_stats: the list's manifest_length is wrong for every manifest: read, flagged */
    floe_error_clear(&err);
    REQUIRE(table_totals("iceberg/duckdb-iceberg/null_stats/default/test_nulls", &o, &tot,
                         &err) == 0);
    CHECK(tot.length_mismatch);
    /* ... and refused when asked to be strict */
    floe_manifest_read_options strict = {.strict_length = true};
    CHECK_EQ_INT(table_totals("iceberg/duckdb-iceberg/null_stats/default/test_nulls", &strict,
                              &tot, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "manifest list says") != NULL);
    /* generated_bounds: manifest_length 0 in the list */
    REQUIRE(table_totals("iceberg/duckdb-iceberg/generated_bounds", &o, &tot, &err) == 0);
    CHECK(tot.length_mismatch);
    CHECK_EQ_INT(tot.entries, 5000);
    /* lineitem: a v1 manifest list (counts named added_data_files_count, by id) */
    REQUIRE(table_totals("iceberg/duckdb-iceberg/iceberg/lineitem_iceberg_gz", &o, &tot,
                         &err) == 0);
    CHECK(tot.list_v1);
    CHECK(!tot.length_mismatch);

    /* big_query_error: re-encoded by DuckDB: every field a nullable union, map key/value
     * records without ids, header keys schema/partition-spec/format-version/content gone,
     * wrong manifest_length. The fields still carry their ids, so it reads (2 rows) with
     * the length and the header flagged. */
    const char *bq_from = "data/persistent/big_query_error";
    floe_error_clear(&err);
    if (table_totals_at("iceberg/duckdb-iceberg/big_query_error", bq_from, &o, &tot, &err) < 0)
        harness_fail(__FILE__, __LINE__, "big_query_error: %s", err.msg);
    CHECK_EQ_INT(tot.data_records, 2);
    CHECK(tot.length_mismatch);
    CHECK(tot.header_incomplete);

    /* v3 with a deletion vector: refused naming the Puffin file */
    floe_error_clear(&err);
    CHECK_EQ_INT(table_totals("iceberg/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/"
                              "default/legacy_bare_deletion_vector", &o, &tot, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, ".puffin") != NULL);
    CHECK(strstr(err.msg, "deletion vector") != NULL);
    floe_manifest_read_options dv = {.allow_deletion_vectors = true};
    REQUIRE(table_totals("iceberg/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/"
                         "default/legacy_bare_deletion_vector", &dv, &tot, &err) == 0);
    CHECK_EQ_INT(tot.data_records, 3);
    CHECK_EQ_INT(tot.delete_files, 1);

    /* tables with deletes: data rows before deletes, delete files found */
    REQUIRE(table_totals("iceberg/duckdb-iceberg/equality_delete_extra_column/warehouse/ns/t",
                         &o, &tot, &err) == 0);
    CHECK_EQ_INT(tot.data_records, 3);
    CHECK_EQ_INT(tot.delete_files, 1);
    CHECK_EQ_INT(tot.delete_manifests, 1);
    REQUIRE(table_totals("iceberg/icebird/spark_bunnies", &o, &tot, &err) == 0);
    CHECK_EQ_INT(tot.delete_files, 1);
    CHECK(tot.data_records >= 20);
    REQUIRE(table_totals("iceberg/icebird/java_bunnies", &o, &tot, &err) == 0);
    CHECK_EQ_INT(tot.delete_files, 2);
    CHECK(tot.data_records >= 16);
}

/* equality_ids written as array<long> by PyIceberg: read as ints */
TEST(conformance_equality_ids_long) {
    const char *p = harness_conformance("iceberg/duckdb-iceberg/equality_delete_extra_column/"
                                        "warehouse/ns/t/metadata/"
                                        "482c51b1-71ea-4508-b282-e2d753a5ef36-m0.avro");
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE(floe_manifest_reader_open(p, NULL, &r, &err) == 0);
    const floe_manifest_info *info = floe_manifest_reader_info(r);
    CHECK_EQ_INT(info->format_version, 2);
    CHECK_EQ_INT(info->content, FLOE_MANIFEST_DELETES);
    REQUIRE(floe_manifest_reader_spec(r) != NULL);
    CHECK_EQ_INT(floe_manifest_reader_spec(r)->nfields, 1);
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->file.content, FLOE_CONTENT_EQUALITY_DELETES);
    REQUIRE(e->file.has_equality_ids);
    REQUIRE(e->file.nequality_ids == 1);
    CHECK_EQ_INT(e->file.equality_ids[0], 1);
    /* bucket[1] partition: an int, 0 */
    REQUIRE(e->file.npartition == 1);
    CHECK(!e->file.partition[0].is_null);
    CHECK_EQ_INT(e->file.partition[0].type, FLOE_TYPE_INT);
    CHECK_EQ_INT(e->file.partition[0].v.i32, 0);
    CHECK(e->status == FLOE_ENTRY_ADDED);
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), 0);
    floe_manifest_reader_close(r);
}

/* decimal(16,11) partition values from Avro fixed[7], checked against the header spec */
TEST(conformance_decimal_partitions) {
    const char *p = harness_conformance("iceberg/duckdb-iceberg/partition_decimal_bigint/"
                                        "metadata/bad4520d-32bc-4c8e-841c-5c9ccc3aab3c-m0.avro");
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE(floe_manifest_reader_open(p, NULL, &r, &err) == 0);
    const floe_manifest_entry *e;
    int n = 0, nulls = 0, zero = 0, neg = 0;
    while (floe_manifest_reader_next(r, &e, &err) == 1) {
        n++;
        const floe_value *v = &e->file.partition[0];
        CHECK_EQ_INT(v->type, FLOE_TYPE_DECIMAL);
        if (v->is_null) {
            nulls++;
            continue;
        }
        CHECK_EQ_INT(v->v.dec.scale, 11);
        zero += v->v.dec.unscaled == 0;
        neg += v->v.dec.unscaled < 0;
    }
    CHECK_EQ_INT(n, 10);
    CHECK(zero == 1);
    CHECK(neg >= 1);
    (void)nulls;
    floe_manifest_reader_close(r);
}

/* null_stats: metric maps rewritten to null must read as "unknown", not as empty */
TEST(conformance_null_stats) {
    const char *dir = harness_conformance("iceberg/duckdb-iceberg/null_stats/default/test_nulls/"
                                          "metadata/2aeec77d-bbe8-4b0a-8105-3093ce4ea02a-m0.avro");
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE(floe_manifest_reader_open(dir, NULL, &r, &err) == 0);
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK(!e->file.value_counts.present);
    CHECK(!e->file.null_value_counts.present);
    CHECK(!e->file.column_sizes.present);
    CHECK(!e->file.has_split_offsets);
    floe_manifest_reader_close(r);
}

int main(void) {
    RUN(conformance_row_counts);
    RUN(conformance_quirks);
    RUN(conformance_equality_ids_long);
    RUN(conformance_decimal_partitions);
    RUN(conformance_null_stats);
    return harness_finish();
}
