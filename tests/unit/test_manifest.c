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
#include "iceberg/manifest_fast.h"
#include "iceberg/manifest_internal.h"
#include "common/testing.h"

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
    rc = floe_manifest_reader_open(NULL, local, &o, &r, err);
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
    rc = floe_manifest_list_read(NULL, list, &lo, &a, &ml, err);
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

    /* snapshot id 9876543210123456789 (PyIceberg): past the signed 64-bit range, refused
     * naming the field rather than wrapped */
    floe_error_clear(&err);
    CHECK_EQ_INT(table_totals("iceberg/duckdb-iceberg/equality_delete_extra_column/warehouse/"
                              "ns/t", &o, &tot, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "outside the signed 64-bit range") != NULL);
    /* tables with deletes: data rows before deletes, delete files found */
    REQUIRE(table_totals("iceberg/icebird/spark_bunnies", &o, &tot, &err) == 0);
    CHECK_EQ_INT(tot.delete_files, 1);
    CHECK(tot.data_records >= 20);
    REQUIRE(table_totals("iceberg/icebird/java_bunnies", &o, &tot, &err) == 0);
    CHECK_EQ_INT(tot.delete_files, 2);
    CHECK(tot.data_records >= 16);
}

/* PyIceberg's delete manifest of equality_delete_extra_column: its entry's snapshot id,
 * 9876543210123456789, is past the signed 64-bit range: refused naming the field, not
 * wrapped (Java's decoder would wrap it). */
TEST(conformance_snapshot_id_past_64_bits) {
    const char *p = harness_conformance("iceberg/duckdb-iceberg/equality_delete_extra_column/"
                                        "warehouse/ns/t/metadata/"
                                        "482c51b1-71ea-4508-b282-e2d753a5ef36-m0.avro");
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE(floe_manifest_reader_open(NULL, p, NULL, &r, &err) == 0);
    const floe_manifest_entry *e;
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "snapshot_id: long at byte") != NULL);
    CHECK(strstr(err.msg, "outside the signed 64-bit range") != NULL);
    floe_manifest_reader_close(r);
}

/* equality_ids written as array<long>, as PyIceberg writes them (the spec has list<int>):
 * read as ints by both decoders; a long past the int range is refused. */
TEST(equality_ids_long) {
    static const char schema[] =
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"field-id\":1},"
        "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
        "\"fields\":["
        "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
        "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
        "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
        "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
        "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
        "\"long\",\"element-id\":136}],\"field-id\":135}]}}]}";
    static const int64_t ids[2][2] = {{1, 3}, {1, (int64_t)INT32_MAX + 1}};
    for (int k = 0; k < 2; k++) {
        floe_error err;
        floe_avro_schema *sc = NULL;
        REQUIRE_OK(floe_avro_schema_parse(schema, strlen(schema), &sc, &err), err);
        floe_buf out;
        floe_buf_init(&out, 0);
        static const char iceberg_schema[] = "{\"type\":\"struct\",\"schema-id\":0,"
                                             "\"fields\":[{\"id\":1,\"name\":\"id\","
                                             "\"required\":true,\"type\":\"long\"}]}";
        floe_avro_meta meta[] = {{"schema", iceberg_schema, sizeof iceberg_schema - 1},
                                 {"partition-spec", "[]", 2},
                                 {"partition-spec-id", "0", 1},
                                 {"format-version", "2", 1},
                                 {"content", "deletes", 7}};
        floe_avro_writer_options wo = {.meta = meta, .n_meta = 5};
        floe_avro_writer *w = NULL;
        REQUIRE_OK(floe_avro_writer_open(sc, &wo, &out, &w, &err), err);
        floe_arena a;
        floe_arena_init(&a, 4096);
        floe_avro_value rec;
        REQUIRE(floe_avro_set_record(&rec, &a, 3) == 0);
        floe_avro_set_int(&rec.u.list.items[0], 1);
        floe_avro_set_long(&rec.u.list.items[1], 42);
        floe_avro_set_branch(&rec.u.list.items[1], 1);
        floe_avro_value *df = &rec.u.list.items[2];
        REQUIRE(floe_avro_set_record(df, &a, 6) == 0);
        floe_avro_set_int(&df->u.list.items[0], FLOE_CONTENT_EQUALITY_DELETES);
        floe_avro_set_string(&df->u.list.items[1], "s3://b/eq.parquet");
        floe_avro_set_string(&df->u.list.items[2], "PARQUET");
        floe_avro_set_long(&df->u.list.items[3], 2);
        floe_avro_set_long(&df->u.list.items[4], 100);
        floe_avro_value *eq = &df->u.list.items[5];
        REQUIRE(floe_avro_set_array(eq, &a, 2) == 0);
        floe_avro_set_long(&eq->u.list.items[0], ids[k][0]);
        floe_avro_set_long(&eq->u.list.items[1], ids[k][1]);
        floe_avro_set_branch(eq, 1);
        REQUIRE_OK(floe_avro_writer_append(w, &rec, &err), err);
        REQUIRE_OK(floe_avro_writer_close(w, &err), err);
        floe_arena_reset(&a);
        floe_avro_schema_free(sc);
        for (int generic = 0; generic < 2; generic++) {
            floe_manifest_reader *r = NULL;
            REQUIRE_OK(floe_manifest_reader_open_mem(out.data, out.len, "eq.avro", NULL, &r,
                                                     &err),
                       err);
            if (generic)
                floe_mf_reader_force_generic(r);
            const floe_manifest_entry *e = NULL;
            int rc = floe_manifest_reader_next(r, &e, &err);
            if (k == 0) {
                CHECK_EQ_INT(rc, 1);
                if (rc == 1) {
                    CHECK_EQ_INT(e->file.content, FLOE_CONTENT_EQUALITY_DELETES);
                    REQUIRE(e->file.has_equality_ids && e->file.nequality_ids == 2);
                    CHECK_EQ_INT(e->file.equality_ids[0], 1);
                    CHECK_EQ_INT(e->file.equality_ids[1], 3);
                }
            } else {
                CHECK_EQ_INT(rc, FLOE_ECORRUPT);
                CHECK(strstr(err.msg, "equality_ids") != NULL);
            }
            floe_manifest_reader_close(r);
        }
        floe_buf_free(&out);
    }
}

/* One record of a manifest list (manifest_path, manifest_length, partition_spec_id) with
 * the given header entries. */
static void list_with_header(const floe_avro_meta *meta, size_t nmeta, floe_buf *out) {
    static const char schema[] =
        "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
        "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
        "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
        "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502}]}";
    floe_error err;
    floe_avro_schema *sc = NULL;
    REQUIRE_OK(floe_avro_schema_parse(schema, strlen(schema), &sc, &err), err);
    floe_buf_init(out, 0);
    floe_avro_writer_options wo = {.meta = meta, .n_meta = nmeta};
    floe_avro_writer *w = NULL;
    REQUIRE_OK(floe_avro_writer_open(sc, &wo, out, &w, &err), err);
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_avro_value rec;
    REQUIRE(floe_avro_set_record(&rec, &a, 3) == 0);
    floe_avro_set_string(&rec.u.list.items[0], "s3://b/m.avro");
    floe_avro_set_long(&rec.u.list.items[1], 100);
    floe_avro_set_int(&rec.u.list.items[2], 0);
    REQUIRE_OK(floe_avro_writer_append(w, &rec, &err), err);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    floe_arena_reset(&a);
    floe_avro_schema_free(sc);
}

/* Integers in Avro headers are checked, never truncated or wrapped: a snapshot id past the
 * signed 64-bit range, a format-version or a schema id that does not fit. */
TEST(header_integers_checked) {
    static const struct {
        const char *key, *value, *needle;
    } cases[] = {
        {"snapshot-id", "9876543210123456789", "header snapshot-id \"9876543210123456789\""},
        {"sequence-number", "12x", "header sequence-number \"12x\""},
        {"format-version", "4294967298", "header format-version \"4294967298\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        floe_avro_meta meta[1] = {{cases[i].key, cases[i].value, strlen(cases[i].value)}};
        floe_buf f;
        list_with_header(meta, 1, &f);
        floe_arena a;
        floe_arena_init(&a, 1024);
        floe_manifest_list l;
        floe_error err;
        floe_error_clear(&err);
        CHECK_EQ_INT(floe_manifest_list_read_mem(f.data, f.len, "l.avro", NULL, &a, &l, &err),
                     FLOE_ECORRUPT);
        if (!strstr(err.msg, cases[i].needle))
            harness_fail(__FILE__, __LINE__, "case %zu: %s", i, err.msg);
        floe_arena_reset(&a);
        floe_buf_free(&f);
    }
    /* the range's end reads */
    floe_avro_meta ok[1] = {{"snapshot-id", "9223372036854775807", 19}};
    floe_buf f;
    list_with_header(ok, 1, &f);
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_manifest_list l;
    floe_error err;
    REQUIRE_OK(floe_manifest_list_read_mem(f.data, f.len, "l.avro", NULL, &a, &l, &err), err);
    CHECK(l.has_snapshot_id && l.snapshot_id == INT64_MAX);
    CHECK(l.nfiles == 1 && l.files[0].added_snapshot_id == INT64_MAX);
    floe_arena_reset(&a);
    floe_buf_free(&f);
}

/* decimal(16,11) partition values from Avro fixed[7], checked against the header spec */
TEST(conformance_decimal_partitions) {
    const char *p = harness_conformance("iceberg/duckdb-iceberg/partition_decimal_bigint/"
                                        "metadata/bad4520d-32bc-4c8e-841c-5c9ccc3aab3c-m0.avro");
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE(floe_manifest_reader_open(NULL, p, NULL, &r, &err) == 0);
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
    REQUIRE(floe_manifest_reader_open(NULL, dir, NULL, &r, &err) == 0);
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK(!e->file.value_counts.present);
    CHECK(!e->file.null_value_counts.present);
    CHECK(!e->file.column_sizes.present);
    CHECK(!e->file.has_split_offsets);
    floe_manifest_reader_close(r);
}

/* ---------------------------------------------------------------------------------------
 * round trips
 * ------------------------------------------------------------------------------------- */

static const char RT_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":3,\"fields\":["
    "{\"id\":1,\"name\":\"b\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"l\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":6,\"name\":\"dec9\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":7,\"name\":\"dec38\",\"required\":false,\"type\":\"decimal(38, 10)\"},"
    "{\"id\":8,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":9,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":10,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":11,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":12,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":13,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":14,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[4]\"},"
    "{\"id\":15,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":16,\"name\":\"dec9b\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":17,\"name\":\"9 lives\",\"required\":false,\"type\":\"string\"}]}";
static const char RT_SPEC[] = "b, i, l, f, d, dec9, dec38, dt, tm, ts, tstz, s, u, fx, bin, "
                              "dec9b, `9 lives`, bucket(8, l), truncate(3, s), day(tstz)";
#define RT_NPART 20

typedef struct rt_env {
    floe_schema *schema;
    floe_partition_spec *spec;
    char dir[4096];
} rt_env;

static void rt_setup(rt_env *env) {
    floe_error err;
    memset(env, 0, sizeof *env);
    const char *out = getenv("FLOE_MANIFEST_OUT");
    snprintf(env->dir, sizeof env->dir, "%s", out && *out ? out : harness_tmpdir());
    REQUIRE(floe_schema_parse(RT_SCHEMA, strlen(RT_SCHEMA), &env->schema, &err) == 0);
    if (floe_partition_spec_parse(env->schema, RT_SPEC, 2, 0, &env->spec, &err) < 0)
        harness_fail(__FILE__, __LINE__, "spec: %s", err.msg);
    REQUIRE(env->spec != NULL);
    REQUIRE(env->spec->nfields == RT_NPART);
}

static void rt_teardown(rt_env *env) {
    floe_partition_spec_free(env->spec);
    floe_schema_free(env->schema);
}

static const uint8_t UUID_A[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
                                   0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
static const uint8_t UUID_B[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                   0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

/* Partition tuple k: 0 = one set of values, 1 = nulls (NaN for f), 2 = another set. */
static void rt_tuple(const rt_env *env, int k, floe_value *t) {
    static const floe_i128 big = (floe_i128)123456789012345678LL * 1000000000000000000LL;
    if (k == 1) {
        for (size_t i = 0; i < RT_NPART; i++)
            t[i] = floe_value_null(env->spec->partition_type.children[i].type);
        t[3] = floe_value_float(NAN);
        return;
    }
    bool a = k == 0;
    t[0] = floe_value_bool(a);
    t[1] = floe_value_int(a ? -7 : 2147483647);
    t[2] = floe_value_long(a ? INT64_MIN : 42);
    t[3] = floe_value_float(a ? -0.0f : 1.5f);
    t[4] = floe_value_double(a ? 3.25 : -1e300);
    t[5] = floe_value_decimal(a ? -12345 : 999999999, 9, 2);
    t[6] = floe_value_decimal(a ? big : -big, 38, 10);
    t[7] = floe_value_date(a ? 20000 : -1);
    t[8] = floe_value_i64(FLOE_TYPE_TIME, a ? 0 : 86399999999LL);
    t[9] = floe_value_i64(FLOE_TYPE_TIMESTAMP, a ? 1700000000000000LL : -5);
    t[10] = floe_value_i64(FLOE_TYPE_TIMESTAMPTZ, a ? 1700000000000000LL : 1800000000000000LL);
    t[11] = a ? floe_value_string("héllo", strlen("héllo")) : floe_value_string("", 0);
    t[12] = floe_value_uuid(a ? UUID_A : UUID_B);
    t[13] = floe_value_fixed(a ? "\x00\x01\x02\xff" : "abcd", 4);
    t[14] = floe_value_binary(a ? "\x80\x00" : "", a ? 2 : 0);
    t[15] = floe_value_decimal(a ? 1 : -1, 9, 2);
    t[16] = floe_value_string(a ? "x" : "y", 1);
    t[17] = floe_value_int(a ? 3 : 5);
    t[18] = floe_value_string(a ? "hél" : "", a ? strlen("hél") : 0);
    t[19] = floe_value_date(a ? 19675 : 20833);
}

static const floe_column_count RT_SIZES[] = {{1, 100}, {12, 2000}};
static const floe_column_count RT_NULLS[] = {{1, 0}, {12, 5}};
static const floe_column_count RT_NANS[] = {{4, 3}};
static const floe_column_bound RT_LOWER[] = {{2, (const uint8_t *)"\x01\x00\x00\x00", 4},
                                             {12, (const uint8_t *)"", 0}};
static const floe_column_bound RT_UPPER[] = {{2, (const uint8_t *)"\xff\x00\x00\x00", 4},
                                             {12, (const uint8_t *)"zz", 2}};
static const int64_t RT_SPLITS[] = {4, 1048576, 2097152};

static floe_data_file rt_file(const char *path, const floe_value *tuple, int64_t records) {
    floe_data_file f = {0};
    f.content = FLOE_CONTENT_DATA;
    f.file_path = path;
    f.file_format = "parquet";
    f.partition = tuple;
    f.npartition = RT_NPART;
    f.record_count = records;
    f.file_size_in_bytes = 1000 + records;
    f.column_sizes = (floe_count_map){true, RT_SIZES, 2};
    f.value_counts = (floe_count_map){true, RT_SIZES, 2};
    f.null_value_counts = (floe_count_map){true, RT_NULLS, 2};
    f.nan_value_counts = (floe_count_map){true, RT_NANS, 1};
    f.lower_bounds = (floe_bound_map){true, RT_LOWER, 2};
    f.upper_bounds = (floe_bound_map){true, RT_UPPER, 2};
    f.has_split_offsets = true;
    f.split_offsets = RT_SPLITS;
    f.nsplit_offsets = 3;
    f.has_sort_order_id = true;
    f.sort_order_id = 1;
    f.has_key_metadata = true;
    f.key_metadata = (const uint8_t *)"\x00key";
    f.key_metadata_len = 4;
    return f;
}

static bool same_counts(const floe_count_map *a, const floe_count_map *b) {
    if (!a->present && !b->present)
        return true;
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].field_id != b->items[i].field_id || a->items[i].value != b->items[i].value)
            return false;
    return true;
}

static bool same_bounds(const floe_bound_map *a, const floe_bound_map *b) {
    if (!a->present && !b->present)
        return true;
    if (a->present != b->present || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].field_id != b->items[i].field_id || a->items[i].n != b->items[i].n ||
            memcmp(a->items[i].p, b->items[i].p, a->items[i].n) != 0)
            return false;
    return true;
}

static void check_file_equal(const floe_data_file *got, const floe_data_file *want) {
    CHECK_EQ_INT(got->content, want->content);
    CHECK_EQ_STR(got->file_path, want->file_path);
    CHECK_EQ_STR(got->file_format, want->file_format);
    CHECK_EQ_INT(got->record_count, want->record_count);
    CHECK_EQ_INT(got->file_size_in_bytes, want->file_size_in_bytes);
    REQUIRE(got->npartition == want->npartition);
    for (size_t i = 0; i < got->npartition; i++) {
        const floe_value *g = &got->partition[i], *w = &want->partition[i];
        bool nan_both = !g->is_null && !w->is_null && g->type == FLOE_TYPE_FLOAT &&
                        isnan(g->v.f) && isnan(w->v.f);
        if (g->is_null != w->is_null || g->type != w->type ||
            (!g->is_null && !nan_both && !floe_value_equal(g, w)))
            harness_fail(__FILE__, __LINE__, "%s: partition field %zu differs", want->file_path,
                         i);
    }
    CHECK(same_counts(&got->column_sizes, &want->column_sizes));
    CHECK(same_counts(&got->value_counts, &want->value_counts));
    CHECK(same_counts(&got->null_value_counts, &want->null_value_counts));
    CHECK(same_counts(&got->nan_value_counts, &want->nan_value_counts));
    CHECK(same_bounds(&got->lower_bounds, &want->lower_bounds));
    CHECK(same_bounds(&got->upper_bounds, &want->upper_bounds));
    CHECK_EQ_INT(got->has_key_metadata, want->has_key_metadata);
    if (got->has_key_metadata && want->has_key_metadata)
        CHECK(got->key_metadata_len == want->key_metadata_len &&
              memcmp(got->key_metadata, want->key_metadata, want->key_metadata_len) == 0);
    CHECK_EQ_INT(got->has_split_offsets, want->has_split_offsets);
    if (want->has_split_offsets)
        CHECK_EQ_INT(got->nsplit_offsets, want->nsplit_offsets);
    for (size_t i = 0; want->has_split_offsets && i < got->nsplit_offsets &&
                       i < want->nsplit_offsets; i++)
        CHECK_EQ_INT(got->split_offsets[i], want->split_offsets[i]);
    CHECK_EQ_INT(got->has_equality_ids, want->has_equality_ids);
    CHECK_EQ_INT(got->nequality_ids, want->nequality_ids);
    for (size_t i = 0; i < got->nequality_ids && i < want->nequality_ids; i++)
        CHECK_EQ_INT(got->equality_ids[i], want->equality_ids[i]);
    CHECK_EQ_INT(got->has_sort_order_id, want->has_sort_order_id &&
                                             want->content != FLOE_CONTENT_POSITION_DELETES);
    if (got->has_sort_order_id)
        CHECK_EQ_INT(got->sort_order_id, want->sort_order_id);
    CHECK((got->referenced_data_file == NULL) == (want->referenced_data_file == NULL));
    if (got->referenced_data_file && want->referenced_data_file)
        CHECK_EQ_STR(got->referenced_data_file, want->referenced_data_file);
}

/* Decoded summary bound of partition field i. */
static floe_value summary_bound(const rt_env *env, const floe_field_summary *s, size_t i,
                                bool upper) {
    floe_value v;
    floe_error err;
    const floe_field *t = &env->spec->partition_type.children[i];
    int rc = upper ? floe_value_from_binary(t, s->upper_bound, s->upper_len, &v, &err)
                   : floe_value_from_binary(t, s->lower_bound, s->lower_len, &v, &err);
    if (rc < 0) {
        harness_fail(__FILE__, __LINE__, "summary %zu: %s", i, err.msg);
        return floe_value_null(t->type);
    }
    return v;
}

TEST(round_trip_data_manifest) {
    rt_env env;
    rt_setup(&env);
    floe_error err;
    floe_value t0[RT_NPART], t1[RT_NPART], t2[RT_NPART];
    rt_tuple(&env, 0, t0);
    rt_tuple(&env, 1, t1);
    rt_tuple(&env, 2, t2);
    floe_data_file fa = rt_file("s3://b/t/data/a.parquet", t0, 10);
    floe_data_file fb = rt_file("s3://b/t/data/b.parquet", t1, 20);
    floe_data_file fc = rt_file("s3://b/t/data/c.parquet", t2, 30);
    floe_data_file fd = rt_file("s3://b/t/data/d.parquet", t0, 40);
    fb.column_sizes.present = false; /* unknown stays unknown */
    fb.has_key_metadata = false;
    fc.referenced_data_file = NULL;
    fd.has_split_offsets = false;

    char *mpath = floe_io_join(env.dir, "floe-data-m0.avro");
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.schema = env.schema;
    o.spec = env.spec;
    o.has_snapshot_id = true;
    o.snapshot_id = 555;
    floe_manifest_writer *w = NULL;
    REQUIRE(floe_manifest_writer_open(NULL, mpath, &o, &w, &err) == 0);
    CHECK(floe_manifest_writer_add(w, &fa, -1, &err) == 0);
    CHECK(floe_manifest_writer_add(w, &fb, 2, &err) == 0);
    floe_manifest_entry ec = {.status = FLOE_ENTRY_ADDED, .has_snapshot_id = true,
                              .snapshot_id = 111, .has_sequence_number = true,
                              .sequence_number = 3, .has_file_sequence_number = true,
                              .file_sequence_number = 4, .file = fc};
    CHECK(floe_manifest_writer_existing(w, &ec, &err) == 0);
    floe_manifest_entry ed = {.status = FLOE_ENTRY_EXISTING, .has_snapshot_id = true,
                              .snapshot_id = 100, .has_sequence_number = true,
                              .sequence_number = 1, .has_file_sequence_number = true,
                              .file_sequence_number = 1, .file = fd};
    CHECK(floe_manifest_writer_delete(w, &ed, &err) == 0);
    CHECK_EQ_INT(floe_manifest_writer_entries(w), 4);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_file mf;
    floe_output_options oo = {.fsync = false};
    REQUIRE(floe_manifest_writer_close(w, &oo, &a, &mf, &err) == 0);
    CHECK_EQ_STR(mf.manifest_path, mpath);
    CHECK_EQ_INT(mf.partition_spec_id, 2);
    CHECK_EQ_INT(mf.content, FLOE_MANIFEST_DATA);
    CHECK_EQ_INT(mf.sequence_number, FLOE_SEQ_UNASSIGNED);
    CHECK_EQ_INT(mf.min_sequence_number, 2); /* b's explicit 2, c's 3; d is deleted */
    CHECK(mf.has_added_snapshot_id && mf.added_snapshot_id == 555);
    CHECK_EQ_INT(mf.added_files_count, 2);
    CHECK_EQ_INT(mf.existing_files_count, 1);
    CHECK_EQ_INT(mf.deleted_files_count, 1);
    CHECK_EQ_INT(mf.added_rows_count, 30);
    CHECK_EQ_INT(mf.existing_rows_count, 30);
    CHECK_EQ_INT(mf.deleted_rows_count, 40);
    bool exists = false;
    CHECK(floe_io_exists(NULL, mpath, &exists, &err) == 0 && exists);
    floe_buf raw;
    floe_buf_init(&raw, 0);
    REQUIRE(floe_io_read_all(NULL, mpath, 1 << 24, &raw, &err) == 0);
    CHECK_EQ_INT(mf.manifest_length, (int64_t)raw.len);

    /* partition summaries over a (t0), b (t1: nulls, NaN), c (t2), d (t0) */
    REQUIRE(mf.has_partitions && mf.npartitions == RT_NPART);
    for (size_t i = 0; i < RT_NPART; i++) {
        const floe_field_summary *s = &mf.partitions[i];
        CHECK(s->contains_null == (i != 3));
        CHECK(s->has_contains_nan);
        CHECK(s->contains_nan == (i == 3));
        REQUIRE(s->has_lower && s->has_upper);
        floe_value lo = summary_bound(&env, s, i, false), hi = summary_bound(&env, s, i, true);
        const floe_value *x = &t0[i], *y = &t2[i];
        const floe_value *want_lo = floe_value_compare(x, y) <= 0 ? x : y;
        const floe_value *want_hi = floe_value_compare(x, y) <= 0 ? y : x;
        if (!floe_value_equal(&lo, want_lo) || !floe_value_equal(&hi, want_hi))
            harness_fail(__FILE__, __LINE__, "summary of partition field %zu wrong", i);
    }
    /* -0.0 is a value of f: the lower bound must be -0.0, not +0.0 (spec note 2) */
    CHECK(signbit(summary_bound(&env, &mf.partitions[3], 3, false).v.f));

    /* manifest list: this manifest (new) plus an older one carried over */
    floe_manifest_file old = mf;
    old.manifest_path = "s3://b/t/metadata/old-m0.avro";
    old.sequence_number = 5;
    old.min_sequence_number = 4;
    old.added_snapshot_id = 444;
    old.content = FLOE_MANIFEST_DATA;
    floe_manifest_file files[2] = {mf, old};
    char *lpath = floe_io_join(env.dir, "snap-555-1-floe.avro");
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = 555;
    lo.has_parent = true;
    lo.parent_snapshot_id = 444;
    lo.sequence_number = 7;
    int64_t llen = 0;
    REQUIRE(floe_manifest_list_write(NULL, lpath, &lo, files, 2, &oo, &llen, &err) == 0);
    CHECK(llen > 0);
    floe_manifest_list ml;
    REQUIRE(floe_manifest_list_read(NULL, lpath, NULL, &a, &ml, &err) == 0);
    CHECK_EQ_INT(ml.format_version, 2);
    CHECK(ml.has_snapshot_id && ml.snapshot_id == 555);
    CHECK(ml.has_sequence_number && ml.sequence_number == 7);
    REQUIRE(ml.nfiles == 2);
    const floe_manifest_file *m0 = &ml.files[0];
    CHECK_EQ_STR(m0->manifest_path, mpath);
    CHECK_EQ_INT(m0->manifest_length, mf.manifest_length);
    CHECK_EQ_INT(m0->sequence_number, 7);
    CHECK_EQ_INT(m0->min_sequence_number, 2);
    CHECK_EQ_INT(m0->added_snapshot_id, 555);
    CHECK_EQ_INT(m0->added_files_count, 2);
    CHECK_EQ_INT(m0->existing_rows_count, 30);
    CHECK_EQ_INT(m0->deleted_rows_count, 40);
    REQUIRE(m0->npartitions == RT_NPART);
    for (size_t i = 0; i < RT_NPART; i++) {
        CHECK_EQ_INT(m0->partitions[i].contains_null, mf.partitions[i].contains_null);
        CHECK(m0->partitions[i].lower_len == mf.partitions[i].lower_len &&
              memcmp(m0->partitions[i].lower_bound, mf.partitions[i].lower_bound,
                     mf.partitions[i].lower_len) == 0);
    }
    CHECK_EQ_INT(ml.files[1].sequence_number, 5);
    CHECK_EQ_INT(ml.files[1].min_sequence_number, 4);
    CHECK_EQ_INT(ml.files[1].added_snapshot_id, 444);

    /* read back with inheritance from the list entry */
    floe_manifest_read_options ro = {.manifest = m0, .spec = env.spec};
    floe_manifest_reader *r = NULL;
    REQUIRE(floe_manifest_reader_open(NULL, mpath, &ro, &r, &err) == 0);
    const floe_manifest_info *info = floe_manifest_reader_info(r);
    CHECK_EQ_INT(info->format_version, 2);
    CHECK_EQ_INT(info->content, FLOE_MANIFEST_DATA);
    CHECK(info->has_schema_id && info->schema_id == 3);
    CHECK(info->has_spec_id && info->spec_id == 2);
    CHECK(!info->length_mismatch && !info->header_incomplete && !info->by_name);
    CHECK_EQ_INT(info->codec, FLOE_CODEC_DEFLATE);
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->status, FLOE_ENTRY_ADDED);
    CHECK(e->has_snapshot_id && e->snapshot_id == 555);
    CHECK(e->has_sequence_number && e->sequence_number == 7);
    CHECK(e->has_file_sequence_number && e->file_sequence_number == 7);
    check_file_equal(&e->file, &fa);
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->sequence_number, 2); /* explicit data sequence number kept */
    CHECK_EQ_INT(e->file_sequence_number, 7);
    check_file_equal(&e->file, &fb);
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->status, FLOE_ENTRY_EXISTING);
    CHECK_EQ_INT(e->snapshot_id, 111);
    CHECK_EQ_INT(e->sequence_number, 3);
    CHECK_EQ_INT(e->file_sequence_number, 4);
    check_file_equal(&e->file, &fc);
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->status, FLOE_ENTRY_DELETED);
    CHECK_EQ_INT(e->snapshot_id, 555);
    CHECK_EQ_INT(e->sequence_number, 1);
    check_file_equal(&e->file, &fd);
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), 0);
    floe_manifest_reader_close(r);

    /* without the list entry: the ADDED entry's sequence numbers stay null, and the spec
     * comes from the header (same partition values) */
    REQUIRE(floe_manifest_reader_open_mem(raw.data, raw.len, "mem", NULL, &r, &err) == 0);
    REQUIRE(floe_manifest_reader_spec(r) != NULL);
    CHECK_EQ_INT(floe_manifest_reader_spec(r)->spec_id, 2);
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK(!e->has_sequence_number && !e->has_file_sequence_number);
    CHECK(e->has_snapshot_id && e->snapshot_id == 555);
    check_file_equal(&e->file, &fa);
    floe_manifest_reader_close(r);

    floe_buf_free(&raw);
    floe_arena_reset(&a);
    floe_free(mpath);
    floe_free(lpath);
    rt_teardown(&env);
}

TEST(round_trip_delete_manifest_and_codecs) {
    rt_env env;
    rt_setup(&env);
    floe_error err;
    floe_value t0[RT_NPART];
    rt_tuple(&env, 0, t0);
    static const int32_t eq_ids[] = {1, 12};
    floe_data_file eq = rt_file("s3://b/t/data/eq.parquet", t0, 5);
    eq.content = FLOE_CONTENT_EQUALITY_DELETES;
    eq.has_equality_ids = true;
    eq.equality_ids = eq_ids;
    eq.nequality_ids = 2;
    floe_data_file pos = rt_file("s3://b/t/data/pos.parquet", t0, 6);
    pos.content = FLOE_CONTENT_POSITION_DELETES;
    pos.referenced_data_file = "s3://b/t/data/a.parquet";
    static const floe_codec codecs[] = {FLOE_CODEC_DEFLATE, FLOE_CODEC_SNAPPY, FLOE_CODEC_ZSTD,
                                        FLOE_CODEC_UNCOMPRESSED};
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        char name[64];
        snprintf(name, sizeof name, "floe-deletes-%s-m%zu.avro", floe_codec_name(codecs[c]), c);
        char *path = floe_io_join(env.dir, name);
        floe_manifest_write_options o;
        floe_manifest_write_options_init(&o);
        o.content = FLOE_MANIFEST_DELETES;
        o.schema = env.schema;
        o.spec = env.spec;
        o.codec = codecs[c];
        floe_manifest_writer *w = NULL;
        REQUIRE(floe_manifest_writer_open(NULL, path, &o, &w, &err) == 0);
        CHECK(floe_manifest_writer_add(w, &eq, -1, &err) == 0);
        CHECK(floe_manifest_writer_add(w, &pos, -1, &err) == 0);
        floe_arena a;
        floe_arena_init(&a, 1024);
        floe_manifest_file mf;
        REQUIRE(floe_manifest_writer_close(w, NULL, &a, &mf, &err) == 0);
        CHECK(!mf.has_added_snapshot_id); /* inherited by the list writer */
        floe_manifest_reader *r = NULL;
        REQUIRE(floe_manifest_reader_open(NULL, path, NULL, &r, &err) == 0);
        CHECK_EQ_INT(floe_manifest_reader_info(r)->content, FLOE_MANIFEST_DELETES);
        CHECK_EQ_INT(floe_manifest_reader_info(r)->codec, codecs[c]);
        const floe_manifest_entry *e;
        REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
        CHECK(!e->has_snapshot_id); /* written null: inherited from the list */
        check_file_equal(&e->file, &eq);
        REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
        check_file_equal(&e->file, &pos);
        CHECK(!e->file.has_sort_order_id); /* position deletes: sort order id null */
        floe_manifest_reader_close(r);
        /* in a list, the snapshot adding it fills added_snapshot_id and sequence numbers */
        char *lpath = floe_io_join(env.dir, c == 0 ? "snap-9-1-deletes.avro" : "tmp-list.avro");
        floe_manifest_list_write_options lo;
        floe_manifest_list_write_options_init(&lo);
        lo.snapshot_id = 9;
        lo.sequence_number = 3;
        lo.codec = codecs[c];
        REQUIRE(floe_manifest_list_write(NULL, lpath, &lo, &mf, 1, NULL, NULL, &err) == 0);
        floe_manifest_list ml;
        REQUIRE(floe_manifest_list_read(NULL, lpath, NULL, &a, &ml, &err) == 0);
        REQUIRE(ml.nfiles == 1);
        CHECK_EQ_INT(ml.files[0].content, FLOE_MANIFEST_DELETES);
        CHECK_EQ_INT(ml.files[0].added_snapshot_id, 9);
        CHECK_EQ_INT(ml.files[0].sequence_number, 3);
        CHECK_EQ_INT(ml.files[0].min_sequence_number, 3);
        CHECK(!ml.files[0].has_first_row_id);
        floe_manifest_read_options ro = {.manifest = &ml.files[0]};
        REQUIRE(floe_manifest_reader_open(NULL, path, &ro, &r, &err) == 0);
        REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
        CHECK(e->has_snapshot_id && e->snapshot_id == 9);
        CHECK_EQ_INT(e->sequence_number, 3);
        floe_manifest_reader_close(r);
        floe_arena_reset(&a);
        floe_free(lpath);
        floe_free(path);
    }
    rt_teardown(&env);
}

/* ---------------------------------------------------------------------------------------
 * format v3: row lineage in manifests and lists
 * ------------------------------------------------------------------------------------- */

/* Spec "First Row ID Inheritance" / "First Row ID Assignment": a v3 manifest writes null
 * first_row_id for ADDED files and the inherited value for EXISTING and DELETED ones; a
 * list assigns first_row_id to data manifests without one, in order, by added + existing
 * rows, keeps the others', none for delete manifests; a v3 list refuses a data manifest
 * without one; readers inherit ids for files without one, DELETED entries excepted. */
TEST(v3_row_lineage) {
    rt_env env;
    rt_setup(&env);
    floe_error err;
    floe_value t0[RT_NPART];
    rt_tuple(&env, 0, t0);
    floe_arena a;
    floe_arena_init(&a, 4096);
    char *path = floe_io_join(harness_tmpdir(), "v3-m0.avro");
    char *lpath = floe_io_join(harness_tmpdir(), "snap-v3.avro");
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.schema = env.schema;
    o.spec = env.spec;
    o.has_snapshot_id = true;
    o.snapshot_id = 5;
    o.format_version = 3;
    floe_manifest_writer *w = NULL;
    REQUIRE(floe_manifest_writer_open(NULL, path, &o, &w, &err) == 0);
    floe_data_file old = rt_file("s3://b/t/data/old.parquet", t0, 7);
    old.has_first_row_id = true;
    old.first_row_id = 100;
    floe_manifest_entry ex = {.status = FLOE_ENTRY_EXISTING, .has_snapshot_id = true,
                              .snapshot_id = 1, .has_sequence_number = true,
                              .sequence_number = 1, .has_file_sequence_number = true,
                              .file_sequence_number = 1, .file = old};
    REQUIRE_OK(floe_manifest_writer_append(w, &ex, &err), err);
    floe_data_file gone = rt_file("s3://b/t/data/gone.parquet", t0, 50);
    floe_manifest_entry del = ex; /* deleted, with no id: takes none on read */
    del.file = gone;
    REQUIRE_OK(floe_manifest_writer_delete(w, &del, &err), err);
    floe_data_file n1 = rt_file("s3://b/t/data/n1.parquet", t0, 10);
    n1.has_first_row_id = true; /* staged with one (a cherry-pick): written null */
    n1.first_row_id = 999;
    REQUIRE_OK(floe_manifest_writer_add(w, &n1, -1, &err), err);
    floe_data_file n2 = rt_file("s3://b/t/data/n2.parquet", t0, 5);
    REQUIRE_OK(floe_manifest_writer_add(w, &n2, -1, &err), err);
    floe_data_file bad = rt_file("s3://b/t/data/n3.parquet", t0, 5);
    bad.has_first_row_id = true;
    bad.first_row_id = -1;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    floe_manifest_file mf;
    REQUIRE_OK(floe_manifest_writer_close(w, NULL, &a, &mf, &err), err);
    CHECK_EQ_INT(mf.added_rows_count, 15);
    CHECK_EQ_INT(mf.existing_rows_count, 7);

    /* the list: an earlier manifest keeps its id, a delete manifest gets none */
    floe_manifest_file kept = mf, dm = mf;
    kept.manifest_path = "s3://b/t/metadata/kept-m0.avro";
    kept.sequence_number = kept.min_sequence_number = 1;
    kept.has_first_row_id = true;
    kept.first_row_id = 40;
    dm.manifest_path = "s3://b/t/metadata/del-m0.avro";
    dm.content = FLOE_MANIFEST_DELETES;
    floe_manifest_file files[4] = {mf, kept, dm, mf};
    files[3].manifest_path = "s3://b/t/metadata/second-m0.avro";
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = 5;
    lo.sequence_number = 2;
    lo.format_version = 3;
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, files, 4, NULL, NULL, &err),
                 FLOE_EINVALID); /* ids not assigned yet */
    CHECK(strstr(err.msg, "first_row_id") != NULL);
    int64_t added = -1;
    REQUIRE_OK(floe_manifest_list_assign_row_ids(files, 4, 200, &added, &err), err);
    CHECK_EQ_INT(added, 44); /* 2 x (15 added + 7 existing) */
    CHECK(files[0].has_first_row_id && files[0].first_row_id == 200);
    CHECK(files[1].has_first_row_id && files[1].first_row_id == 40);
    CHECK(!files[2].has_first_row_id);
    CHECK(files[3].has_first_row_id && files[3].first_row_id == 222);
    REQUIRE_OK(floe_manifest_list_write(NULL, lpath, &lo, files, 4, NULL, NULL, &err), err);
    floe_manifest_list ml;
    REQUIRE_OK(floe_manifest_list_read(NULL, lpath, NULL, &a, &ml, &err), err);
    REQUIRE(ml.nfiles == 4);
    CHECK(ml.files[0].has_first_row_id && ml.files[0].first_row_id == 200);
    CHECK(ml.files[1].first_row_id == 40 && !ml.files[2].has_first_row_id);
    CHECK(ml.files[3].first_row_id == 222);

    /* reading with inheritance: the existing file keeps 100, the deleted one takes no
     * ids, the new ones follow the manifest's 200 */
    floe_manifest_read_options ro = {.manifest = &ml.files[0]};
    floe_manifest_reader *r = NULL;
    REQUIRE_OK(floe_manifest_reader_open(NULL, path, &ro, &r, &err), err);
    const floe_manifest_entry *e;
    const int64_t want[4] = {100, -1, 200, 210};
    for (int k = 0; k < 4; k++) {
        REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
        if (want[k] < 0) {
            CHECK(!e->file.has_first_row_id);
        } else {
            CHECK(e->file.has_first_row_id);
            CHECK_EQ_INT(e->file.first_row_id, want[k]);
        }
    }
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), 0);
    floe_manifest_reader_close(r);

    /* v2 lists and manifests still refuse v3 fields */
    lo.format_version = 2;
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, files, 4, NULL, NULL, &err),
                 FLOE_EINVALID);
    floe_arena_reset(&a);
    floe_free(path);
    floe_free(lpath);
    rt_teardown(&env);
}

/* ---------------------------------------------------------------------------------------
 * writer rules
 * ------------------------------------------------------------------------------------- */

/* options.keep of the list tests: ctx = {mode, records seen}; mode 0 keeps none, 1 the
 * first, 2 all, 3 every seventh */
static bool keep_some(void *ctx, const floe_manifest_file *m) {
    int *st = ctx;
    int i = st[1]++;
    (void)m;
    return st[0] == 0 ? false : st[0] == 1 ? i == 0 : st[0] == 2 ? true : i % 7 == 0;
}

TEST(writer_rules) {
    rt_env env;
    rt_setup(&env);
    floe_error err;
    floe_value t0[RT_NPART];
    rt_tuple(&env, 0, t0);
    char *path = floe_io_join(harness_tmpdir(), "rules-m0.avro");
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.schema = env.schema;
    o.spec = env.spec;
    floe_manifest_writer *w = NULL;
    REQUIRE(floe_manifest_writer_open(NULL, path, &o, &w, &err) == 0);
    floe_data_file f = rt_file("s3://b/t/data/x.parquet", t0, 1);

    floe_manifest_entry e = {.status = FLOE_ENTRY_EXISTING, .file = f};
    CHECK_EQ_INT(floe_manifest_writer_append(w, &e, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "EXISTING") != NULL);
    e.status = FLOE_ENTRY_ADDED;
    e.has_file_sequence_number = true;
    e.file_sequence_number = 3;
    CHECK_EQ_INT(floe_manifest_writer_append(w, &e, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "file_sequence_number") != NULL);

    floe_data_file bad = f;
    bad.content = FLOE_CONTENT_EQUALITY_DELETES;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    bad = f;
    static const int32_t ids[] = {1};
    bad.has_equality_ids = true;
    bad.equality_ids = ids;
    bad.nequality_ids = 1;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    bad = f;
    bad.npartition = 3;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    floe_value wrong[RT_NPART];
    memcpy(wrong, t0, sizeof wrong);
    wrong[1] = floe_value_string("7", 1); /* i is an int */
    bad = f;
    bad.partition = wrong;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "partition field i") != NULL);
    memcpy(wrong, t0, sizeof wrong);
    wrong[5] = floe_value_decimal((floe_i128)10000000000LL, 9, 2); /* > 9 digits */
    bad.partition = wrong;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    static const int64_t desc[] = {10, 4};
    bad = f;
    bad.split_offsets = desc;
    bad.nsplit_offsets = 2;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);
    bad = f;
    bad.has_first_row_id = true;
    CHECK_EQ_INT(floe_manifest_writer_add(w, &bad, -1, &err), FLOE_EINVALID);

    /* rejected entries left nothing behind: one good entry, then close */
    CHECK(floe_manifest_writer_add(w, &f, -1, &err) == 0);
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_manifest_file mf;
    REQUIRE(floe_manifest_writer_close(w, NULL, &a, &mf, &err) == 0);
    CHECK_EQ_INT(mf.added_files_count, 1);
    floe_manifest_reader *r = NULL;
    REQUIRE(floe_manifest_reader_open(NULL, path, NULL, &r, &err) == 0);
    const floe_manifest_entry *pe;
    CHECK_EQ_INT(floe_manifest_reader_next(r, &pe, &err), 1);
    CHECK_EQ_INT(floe_manifest_reader_next(r, &pe, &err), 0);
    floe_manifest_reader_close(r);

    /* a data file cannot go into a delete manifest */
    o.content = FLOE_MANIFEST_DELETES;
    REQUIRE(floe_manifest_writer_open(NULL, path, &o, &w, &err) == 0);
    CHECK_EQ_INT(floe_manifest_writer_add(w, &f, -1, &err), FLOE_EINVALID);
    floe_manifest_writer_abort(w);

    /* list rules: unknown counts (v1), sequence numbers past the snapshot's */
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = 1;
    lo.sequence_number = 2;
    floe_manifest_file v1 = mf;
    v1.added_files_count = -1;
    char *lpath = floe_io_join(harness_tmpdir(), "snap-rules.avro");
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, &v1, 1, NULL, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "counts unknown") != NULL);
    floe_manifest_file late = mf;
    late.sequence_number = 5;
    late.min_sequence_number = 5;
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, &late, 1, NULL, NULL, &err),
                 FLOE_EINVALID);
    floe_manifest_file other = mf;
    other.has_added_snapshot_id = true;
    other.added_snapshot_id = 77; /* unassigned sequence number but not this snapshot's */
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, &other, 1, NULL, NULL, &err),
                 FLOE_EINVALID);
    /* a manifest listed twice: the writer refuses, and a list written so by another
     * writer is refused by the reader (its files would be read twice) */
    floe_manifest_file twice[2] = {mf, mf};
    CHECK_EQ_INT(floe_manifest_list_write(NULL, lpath, &lo, twice, 2, NULL, NULL, &err),
                 FLOE_EINVALID);
    CHECK(strstr(err.msg, "entries 0 and 1 both name manifest") != NULL);
    bool exists = true;
    CHECK(floe_io_exists(NULL, lpath, &exists, &err) == 0 && !exists);
    /* written with a second name of the same length, then that name patched back */
    char *renamed = floe_strdup(mf.manifest_path);
    char *m0 = strstr(renamed, "rules-m0.avro");
    REQUIRE(m0 != NULL);
    m0[7] = '1';
    twice[1].manifest_path = renamed;
    lo.codec = FLOE_CODEC_UNCOMPRESSED;
    char *l2 = floe_io_join(harness_tmpdir(), "snap-twice.avro");
    REQUIRE(floe_manifest_list_write(NULL, l2, &lo, twice, 2, NULL, NULL, &err) == 0);
    floe_buf lb;
    floe_buf_init(&lb, 0);
    REQUIRE(floe_io_read_all(NULL, l2, 1 << 20, &lb, &err) == 0);
    floe_manifest_list ml;
    REQUIRE(floe_manifest_list_read_mem(lb.data, lb.len, "twice", NULL, &a, &ml, &err) == 0);
    CHECK_EQ_INT(ml.nfiles, 2);
    uint8_t *hit = memmem(lb.data, lb.len, renamed, strlen(renamed));
    REQUIRE(hit != NULL);
    memcpy(hit, mf.manifest_path, strlen(renamed));
    CHECK_EQ_INT(floe_manifest_list_read_mem(lb.data, lb.len, "twice", NULL, &a, &ml, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "records 0 and 1 both list manifest") != NULL);
    /* the same with options.keep dropping either or both records: still refused */
    for (int k = 0; k < 3; k++) {
        int st[2] = {k, 0};
        floe_manifest_list_read_options ko = {.keep = keep_some, .keep_ctx = st};
        floe_error_clear(&err);
        CHECK_EQ_INT(floe_manifest_list_read_mem(lb.data, lb.len, "twice", &ko, &a, &ml, &err),
                     FLOE_ECORRUPT);
        CHECK(strstr(err.msg, "records 0 and 1 both list manifest") != NULL);
    }
    floe_buf_free(&lb);
    floe_free(l2);
    floe_free(renamed);

    /* options.keep: the kept records, in order, as a whole read has them; the others
     * counted and dropped */
    enum { NL = 50 };
    floe_manifest_file many[NL];
    char *names[NL];
    for (int i = 0; i < NL; i++) {
        many[i] = mf;
        names[i] = floe_asprintf("%s.%02d", mf.manifest_path, i);
        many[i].manifest_path = names[i];
        many[i].manifest_length = 1000 + i;
    }
    char *l3 = floe_io_join(harness_tmpdir(), "snap-keep.avro");
    REQUIRE(floe_manifest_list_write(NULL, l3, &lo, many, NL, NULL, NULL, &err) == 0);
    floe_buf_init(&lb, 0);
    REQUIRE(floe_io_read_all(NULL, l3, 1 << 20, &lb, &err) == 0);
    floe_manifest_list whole, kept;
    floe_arena wa, ka;
    floe_arena_init(&wa, 4096);
    floe_arena_init(&ka, 4096);
    REQUIRE_OK(floe_manifest_list_read_mem(lb.data, lb.len, "keep", NULL, &wa, &whole, &err),
               err);
    CHECK_EQ_INT(whole.nfiles, NL);
    CHECK_EQ_INT(whole.nlisted, NL);
    int st[2] = {3, 0}; /* every seventh */
    floe_manifest_list_read_options ko = {.keep = keep_some, .keep_ctx = st};
    REQUIRE_OK(floe_manifest_list_read_mem(lb.data, lb.len, "keep", &ko, &ka, &kept, &err), err);
    CHECK_EQ_INT(kept.nlisted, NL);
    CHECK_EQ_INT(kept.nfiles, (NL + 6) / 7);
    for (size_t i = 0; i < kept.nfiles; i++) {
        const floe_manifest_file *x = &kept.files[i], *y = &whole.files[i * 7];
        CHECK_EQ_STR(x->manifest_path, y->manifest_path);
        CHECK_EQ_INT(x->manifest_length, y->manifest_length);
        CHECK_EQ_INT(x->added_files_count, y->added_files_count);
        CHECK_EQ_INT(x->added_snapshot_id, y->added_snapshot_id);
        CHECK_EQ_INT(x->sequence_number, y->sequence_number);
        CHECK_EQ_INT(x->npartitions, y->npartitions);
        for (size_t j = 0; j < x->npartitions && j < y->npartitions; j++) {
            const floe_field_summary *u = &x->partitions[j], *v = &y->partitions[j];
            CHECK(u->contains_null == v->contains_null && u->has_lower == v->has_lower &&
                  u->has_upper == v->has_upper && u->lower_len == v->lower_len &&
                  u->upper_len == v->upper_len);
            CHECK(!u->has_lower || !memcmp(u->lower_bound, v->lower_bound, u->lower_len));
            CHECK(!u->has_upper || !memcmp(u->upper_bound, v->upper_bound, u->upper_len));
            CHECK(!u->has_lower || u->lower_bound != v->lower_bound);
        }
    }
    /* the dropped records are not held: the arena has the kept ones only */
    CHECK(ka.total * 3 < wa.total);
    floe_arena_reset(&ka);
    floe_arena_reset(&wa);
    floe_buf_free(&lb);
    floe_free(l3);
    for (int i = 0; i < NL; i++)
        floe_free(names[i]);

    /* unknown transforms may not be written */
    floe_partition_spec *uspec = NULL;
    const char *uj = "{\"spec-id\":9,\"fields\":[{\"source-id\":3,\"field-id\":1000,"
                     "\"name\":\"z\",\"transform\":\"zorder\"}]}";
    REQUIRE(floe_partition_spec_parse_json(uj, strlen(uj), env.schema, &uspec, &err) == 0);
    o.content = FLOE_MANIFEST_DATA;
    o.spec = uspec;
    CHECK_EQ_INT(floe_manifest_writer_open(NULL, path, &o, &w, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "unknown transform") != NULL);
    floe_partition_spec_free(uspec);

    floe_arena_reset(&a);
    floe_free(lpath);
    floe_free(path);
    rt_teardown(&env);
}

TEST(names_and_props) {
    char *p = floe_manifest_path_new("s3://b/t/metadata/", "abc", 0);
    CHECK_EQ_STR(p, "s3://b/t/metadata/abc-m0.avro");
    floe_free(p);
    p = floe_manifest_list_path_new("/t/metadata", 123, 1, "abc");
    CHECK_EQ_STR(p, "/t/metadata/snap-123-1-abc.avro");
    floe_free(p);
    p = floe_manifest_path_new("/m", NULL, 3);
    REQUIRE(p != NULL);
    CHECK(strlen(p) == strlen("/m/") + 36 + strlen("-m3.avro"));
    floe_free(p);

    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK(floe_mf_avro_name("9 lives", &b) == 0);
    CHECK(floe_mf_avro_name("a.b", &b) == 0);
    CHECK(floe_mf_avro_name("\xc3\xa9t\xc3\xa9", &b) == 0);
    CHECK(floe_mf_avro_name("ok_1", &b) == 0);
    floe_buf_append_byte(&b, 0);
    CHECK_EQ_STR((const char *)b.data, "_9_x20livesa_x2Eb_xE9t_xE9ok_1");
    floe_buf_free(&b);

    floe_codec c;
    int lv;
    floe_error err;
    CHECK(floe_manifest_codec_from_props(NULL, 0, &c, &lv, &err) == 0 && c == FLOE_CODEC_DEFLATE);
    floe_kv kv[2] = {{FLOE_PROP_AVRO_CODEC, "zstd"}, {FLOE_PROP_AVRO_LEVEL, "3"}};
    CHECK(floe_manifest_codec_from_props(kv, 2, &c, &lv, &err) == 0 && c == FLOE_CODEC_ZSTD &&
          lv == 3);
    kv[0].value = "SNAPPY";
    CHECK(floe_manifest_codec_from_props(kv, 1, &c, &lv, &err) == 0 && c == FLOE_CODEC_SNAPPY);
    kv[0].value = "uncompressed";
    CHECK(floe_manifest_codec_from_props(kv, 1, &c, &lv, &err) == 0 &&
          c == FLOE_CODEC_UNCOMPRESSED);
    kv[0].value = "gzip";
    CHECK(floe_manifest_codec_from_props(kv, 1, &c, &lv, &err) == 0 && c == FLOE_CODEC_DEFLATE);
    kv[0].value = "lz4";
    CHECK_EQ_INT(floe_manifest_codec_from_props(kv, 1, &c, &lv, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, FLOE_PROP_AVRO_CODEC) != NULL);
}

/* ---------------------------------------------------------------------------------------
 * malformed input
 * ------------------------------------------------------------------------------------- */

/* An Avro container with the given schema holding one record built by fill(). */
static void make_avro(const char *schema_json, const floe_avro_meta *meta, size_t nmeta,
                      void (*fill)(floe_arena *, floe_avro_value *), floe_buf *out) {
    floe_avro_schema *s = NULL;
    floe_error err;
    if (floe_avro_schema_parse(schema_json, strlen(schema_json), &s, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
        harness_abort_test();
    }
    floe_avro_writer_options o = {.meta = meta, .n_meta = nmeta};
    floe_avro_writer *w = NULL;
    REQUIRE(floe_avro_writer_open(s, &o, out, &w, &err) == 0);
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_avro_value v;
    fill(&a, &v);
    if (floe_avro_writer_append(w, &v, &err) < 0)
        harness_fail(__FILE__, __LINE__, "append: %s", err.msg);
    REQUIRE(floe_avro_writer_close(w, &err) == 0);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
}

/* status, snapshot_id, data_file{file_path, file_format, record_count, file_size} */
static void fill_small(floe_arena *a, floe_avro_value *v) {
    floe_avro_set_record(v, a, 3);
    floe_avro_set_int(&v->u.list.items[0], 7);
    floe_avro_set_long(&v->u.list.items[1], 1);
    floe_avro_value *d = &v->u.list.items[2];
    floe_avro_set_record(d, a, 3);
    floe_avro_set_string(&d->u.list.items[0], "parquet");
    floe_avro_set_long(&d->u.list.items[1], 3);
    floe_avro_set_long(&d->u.list.items[2], 100);
}

static void fill_ok(floe_arena *a, floe_avro_value *v) {
    floe_avro_set_record(v, a, 3);
    floe_avro_set_int(&v->u.list.items[0], 1);
    floe_avro_set_long(&v->u.list.items[1], 1);
    floe_avro_value *d = &v->u.list.items[2];
    floe_avro_set_record(d, a, 4);
    floe_avro_set_string(&d->u.list.items[0], "/x.parquet");
    floe_avro_set_string(&d->u.list.items[1], "parquet");
    floe_avro_set_long(&d->u.list.items[2], 3);
    floe_avro_set_long(&d->u.list.items[3], 100);
}

TEST(malformed_manifests) {
    floe_error err;
    floe_manifest_reader *r = NULL;
    /* not Avro */
    CHECK(floe_manifest_reader_open_mem("PAR1xxxx", 8, "junk", NULL, &r, &err) < 0);
    CHECK(strstr(err.msg, "junk") != NULL);
    CHECK(floe_manifest_reader_open(NULL, "/nonexistent/m.avro", NULL, &r, &err) < 0);

    /* a v1 manifest (ids, no sequence numbers) with status 7 and no file_path */
    const char *no_path =
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"snapshot_id\",\"type\":\"long\",\"field-id\":1},"
        "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
        "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
        "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104}]},"
        "\"field-id\":2}]}";
    floe_buf b;
    floe_buf_init(&b, 0);
    make_avro(no_path, NULL, 0, fill_small, &b);
    CHECK_EQ_INT(floe_manifest_reader_open_mem(b.data, b.len, "nopath", NULL, &r, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "file_path") != NULL);

    /* the same with file_path, but status 7 */
    const char *v1 =
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"snapshot_id\",\"type\":\"long\",\"field-id\":1},"
        "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
        "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
        "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
        "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104}]},"
        "\"field-id\":2}]}";
    floe_buf_reset(&b);
    make_avro(v1, NULL, 0, fill_ok, &b);
    /* a valid v1 manifest: sequence numbers default to 0, content to data */
    REQUIRE(floe_manifest_reader_open_mem(b.data, b.len, "v1", NULL, &r, &err) == 0);
    CHECK_EQ_INT(floe_manifest_reader_info(r)->format_version, 1);
    CHECK(floe_manifest_reader_info(r)->header_incomplete);
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK(e->has_sequence_number && e->sequence_number == 0);
    CHECK_EQ_INT(e->file.content, FLOE_CONTENT_DATA);
    CHECK_EQ_INT(e->file.npartition, 0);
    floe_manifest_reader_close(r);
    /* corrupt the status: 1 -> zigzag 14 = 7 */
    uint8_t *st = NULL;
    for (size_t i = b.len; i-- > 0;)
        if (b.data[i] == 0x02 && i + 1 < b.len && b.data[i + 1] == 0x02) {
            st = &b.data[i]; /* status 1 then snapshot_id 1 */
            break;
        }
    REQUIRE(st != NULL);
    *st = 14;
    REQUIRE(floe_manifest_reader_open_mem(b.data, b.len, "bad-status", NULL, &r, &err) == 0);
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "bad-status: entry 0: status") != NULL);
    floe_manifest_reader_close(r);

    /* no field ids at all: refused, or read by name when allowed */
    const char *noids =
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\"},"
        "{\"name\":\"snapshot_id\",\"type\":\"long\"},"
        "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
        "{\"name\":\"file_path\",\"type\":\"string\"},"
        "{\"name\":\"file_format\",\"type\":\"string\"},"
        "{\"name\":\"record_count\",\"type\":\"long\"},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\"}]}}]}";
    floe_buf_reset(&b);
    make_avro(noids, NULL, 0, fill_ok, &b);
    CHECK_EQ_INT(floe_manifest_reader_open_mem(b.data, b.len, "noids", NULL, &r, &err),
                 FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "noids") && strstr(err.msg, "field ids"));
    floe_manifest_read_options byname = {.allow_missing_field_ids = true};
    REQUIRE(floe_manifest_reader_open_mem(b.data, b.len, "noids", &byname, &r, &err) == 0);
    CHECK(floe_manifest_reader_info(r)->by_name);
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_STR(e->file.file_path, "/x.parquet");
    CHECK_EQ_INT(e->file.record_count, 3);
    floe_manifest_reader_close(r);

    /* every truncation of a real manifest fails cleanly, never reads all its entries */
    char real[4096]; /* harness_conformance reuses its buffer */
    snprintf(real, sizeof real, "%s",
             harness_conformance("iceberg/icebird/java_bunnies/metadata/"
                                 "a01399a1-e864-4562-b921-c8cb56e6e4a9-m0.avro"));
    floe_buf full;
    floe_buf_init(&full, 0);
    REQUIRE(floe_io_read_all(NULL, real, 1 << 20, &full, &err) == 0);
    int64_t all = 0;
    REQUIRE(floe_manifest_reader_open_mem(full.data, full.len, "full", NULL, &r, &err) == 0);
    while (floe_manifest_reader_next(r, &e, &err) == 1)
        all++;
    floe_manifest_reader_close(r);
    REQUIRE(all > 0);
    for (size_t cut = 0; cut < full.len; cut += 1 + cut / 16) {
        int64_t n = 0;
        r = NULL;
        int rc = floe_manifest_reader_open_mem(full.data, cut, "cut", NULL, &r, &err);
        while (rc >= 0 && (rc = floe_manifest_reader_next(r, &e, &err)) == 1)
            n++;
        if (rc == 0 && n == all)
            harness_fail(__FILE__, __LINE__, "cut at %zu of %zu read as complete", cut,
                         full.len);
        floe_manifest_reader_close(r);
        r = NULL;
    }
    /* flipped bytes: never a crash, errors name the file */
    for (size_t i = 0; i < full.len; i += 7) {
        floe_buf_reset(&b);
        floe_buf_append(&b, full.data, full.len);
        b.data[i] ^= 0x5a;
        r = NULL;
        int rc = floe_manifest_reader_open_mem(b.data, b.len, "flip", NULL, &r, &err);
        while (rc >= 0 && (rc = floe_manifest_reader_next(r, &e, &err)) == 1) {
        }
        if (rc < 0 && !strstr(err.msg, "flip"))
            harness_fail(__FILE__, __LINE__, "error without the file name: %s", err.msg);
        floe_manifest_reader_close(r);
        r = NULL;
    }
    /* a manifest list is not a manifest */
    const char *list = harness_conformance("iceberg/icebird/java_bunnies/metadata/"
                                           "snap-4951213507629824583-1-583a45a0-7389-4d71-9305-"
                                           "ac3a8725c38b.avro");
    CHECK_EQ_INT(floe_manifest_reader_open(NULL, list, NULL, &r, &err), FLOE_ECORRUPT);
    /* and a manifest is not a list */
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_manifest_list ml;
    CHECK_EQ_INT(floe_manifest_list_read(NULL, real, NULL, &a, &ml, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "manifest_path") != NULL);
    floe_arena_reset(&a);
    floe_buf_free(&full);
    floe_buf_free(&b);
}

TEST(alloc_failures) {
    rt_env env;
    rt_setup(&env);
    floe_value t0[RT_NPART];
    rt_tuple(&env, 0, t0);
    floe_data_file f = rt_file("s3://b/t/data/a.parquet", t0, 10);
    char *path = floe_io_join(harness_tmpdir(), "alloc-m0.avro");
    floe_output_options nosync = {.fsync = false};
    bool done = false;
    for (uint64_t n = 1; n < 4000 && !done; n++) {
        floe_error err;
        floe_arena a;
        floe_arena_init(&a, 1024);
        floe_manifest_write_options o;
        floe_manifest_write_options_init(&o);
        o.schema = env.schema;
        o.spec = env.spec;
        floe_manifest_writer *w = NULL;
        floe_manifest_reader *r = NULL;
        floe_manifest_file mf;
        const floe_manifest_entry *e;
        /* Injection starts after open: floe_partition_spec_fields_to_json (partition_spec.c)
         * double-frees under OOM (jansson's *_new consume their argument on failure);
         * reported to its owner. */
        int rc = floe_manifest_writer_open(NULL, path, &o, &w, &err);
        floe_alloc_fail_after(n);
        if (rc == 0 && (rc = floe_manifest_writer_add(w, &f, -1, &err)) < 0)
            floe_manifest_writer_abort(w);
        else if (rc == 0)
            rc = floe_manifest_writer_close(w, &nosync, &a, &mf, &err);
        if (rc == 0)
            rc = floe_manifest_reader_open(NULL, path, NULL, &r, &err);
        if (rc == 0)
            rc = floe_manifest_reader_next(r, &e, &err);
        floe_alloc_fail_after(0);
        floe_manifest_reader_close(r);
        if (rc == 1)
            done = true;
        else if (rc == 0)
            harness_fail(__FILE__, __LINE__, "alloc %llu: empty manifest",
                         (unsigned long long)n);
        floe_arena_reset(&a);
    }
    CHECK(done);
    floe_free(path);
    rt_teardown(&env);
}

/* ---------------------------------------------------------------------------------------
 * metrics
 * ------------------------------------------------------------------------------------- */

static const char MX_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":2,\"name\":\"dec\",\"required\":false,\"type\":\"decimal(9, 2)\"},"
    "{\"id\":3,\"name\":\"b\",\"required\":true,\"type\":\"boolean\"},"
    "{\"id\":4,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":5,\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":6,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":7,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":8,\"name\":\"dl\",\"required\":false,\"type\":\"decimal(20, 2)\"},"
    "{\"id\":9,\"name\":\"s2\",\"required\":false,\"type\":\"string\"}]}";

static const floe_column_bound *find_bound(const floe_bound_map *m, int32_t id) {
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id)
            return &m->items[i];
    return NULL;
}
static const floe_column_count *find_count(const floe_count_map *m, int32_t id) {
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id)
            return &m->items[i];
    return NULL;
}

static bool bound_is(const floe_bound_map *m, int32_t id, const void *p, size_t n) {
    const floe_column_bound *b = find_bound(m, id);
    return b && b->n == n && memcmp(b->p, p, n) == 0;
}

TEST(metrics_modes_and_conversion) {
    floe_error err;
    floe_metrics_mode m;
    CHECK(floe_metrics_mode_parse("Truncate(8)", &m, &err) == 0 &&
          m.kind == FLOE_METRICS_TRUNCATE && m.length == 8);
    CHECK(floe_metrics_mode_parse("FULL", &m, &err) == 0 && m.kind == FLOE_METRICS_FULL);
    CHECK(floe_metrics_mode_parse("counts", &m, &err) == 0 && m.kind == FLOE_METRICS_COUNTS);
    CHECK(floe_metrics_mode_parse("none", &m, &err) == 0 && m.kind == FLOE_METRICS_NONE);
    CHECK_EQ_INT(floe_metrics_mode_parse("truncate(0)", &m, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_metrics_mode_parse("truncate(x)", &m, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_metrics_mode_parse("bogus", &m, &err), FLOE_EINVALID);

    floe_schema *s = NULL;
    REQUIRE(floe_schema_parse(MX_SCHEMA, strlen(MX_SCHEMA), &s, &err) == 0);
    REQUIRE(s->nleaves == 8);
    floe_kv props[] = {
        {FLOE_PROP_METRICS_DEFAULT, "truncate(4)"},
        {FLOE_PROP_METRICS_COLUMN_PREFIX "dec", "none"},
        {FLOE_PROP_METRICS_COLUMN_PREFIX "bin", "counts"},
        {FLOE_PROP_METRICS_COLUMN_PREFIX "s2", "full"},
        {FLOE_PROP_METRICS_COLUMN_PREFIX "tags.element", "full"},
        {FLOE_PROP_METRICS_COLUMN_PREFIX "f", "nonsense"}, /* ignored with a warning */
    };
    floe_metrics_config *cfg = NULL;
    REQUIRE(floe_metrics_config_new(props, 6, s, NULL, &cfg, &err) == 0);
    CHECK(floe_metrics_config_mode(cfg, 1).kind == FLOE_METRICS_TRUNCATE);
    CHECK_EQ_INT(floe_metrics_config_mode(cfg, 1).length, 4);
    CHECK(floe_metrics_config_mode(cfg, 2).kind == FLOE_METRICS_NONE);
    CHECK(floe_metrics_config_mode(cfg, 7).kind == FLOE_METRICS_COUNTS);
    CHECK(floe_metrics_config_mode(cfg, 9).kind == FLOE_METRICS_FULL);
    CHECK(floe_metrics_config_mode(cfg, 5).kind == FLOE_METRICS_FULL);
    CHECK(floe_metrics_config_mode(cfg, 6).kind == FLOE_METRICS_TRUNCATE);

    /* hand-made Parquet file info, bounds in Parquet PLAIN form */
    floe_pq_column_info cols[8];
    memset(cols, 0, sizeof cols);
    static uint8_t s_lo[] = "h\xc3\xa9llo w\xc3\xb6rld";          /* héllo wörld */
    static uint8_t s_hi[] = "zzz\xf4\x8f\xbf\xbf" "abc";          /* zzz U+10FFFF abc */
    static uint8_t dec_lo[] = {0x39, 0x30, 0, 0}, dec_hi[] = {0x40, 0x42, 0x0f, 0};
    static uint8_t b_lo[] = {0}, b_hi[] = {1};
    static uint8_t t_lo[] = "a", t_hi[] = "b";
    static uint8_t f_lo[] = {0, 0, 0x80, 0xbf}, f_hi[] = {0, 0, 0x80, 0x3f};
    static uint8_t bin_lo[] = {1, 2, 3, 4, 5, 6}, bin_hi[] = {0xff, 0xff, 0xff, 0xff, 0xff, 1};
    static uint8_t dl_lo[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x85};
    static uint8_t dl_hi[] = {0, 0, 0, 0, 0, 0, 0, 0x01, 0x00};
    static uint8_t s2_lo[] = "abcdefghijklmnopqrstuvwxyz", s2_hi[] = "zyxwvutsrqponmlkjihgfedcba";
    struct { uint8_t *lo, *hi; size_t nlo, nhi; } b[8] = {
        {s_lo, s_hi, sizeof s_lo - 1, sizeof s_hi - 1}, {dec_lo, dec_hi, 4, 4},
        {b_lo, b_hi, 1, 1}, {t_lo, t_hi, 1, 1}, {f_lo, f_hi, 4, 4}, {bin_lo, bin_hi, 6, 6},
        {dl_lo, dl_hi, 9, 9}, {s2_lo, s2_hi, 26, 26}};
    for (size_t i = 0; i < 8; i++) {
        cols[i].field = s->leaves[i];
        cols[i].field_id = s->leaves[i]->id;
        cols[i].repeated = s->leaves[i]->rep_level > 0;
        cols[i].column_size = 100 + (int64_t)i;
        cols[i].value_count = 10;
        cols[i].null_value_count = (int64_t)i;
        cols[i].has_nan_count = s->leaves[i]->type == FLOE_TYPE_FLOAT;
        cols[i].nan_value_count = 2;
        cols[i].has_bounds = true;
        cols[i].lower_bound = b[i].lo;
        cols[i].lower_len = b[i].nlo;
        cols[i].upper_bound = b[i].hi;
        cols[i].upper_len = b[i].nhi;
    }
    CHECK(cols[3].repeated);
    int64_t splits[] = {4, 5000};
    floe_pq_file_info fi = {.record_count = 10, .file_size_in_bytes = 9999, .row_group_count = 2,
                            .columns = cols, .ncolumns = 8, .split_offsets = splits,
                            .nsplits = 2};
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_data_file df = {0};
    REQUIRE(floe_data_file_from_parquet(&fi, cfg, &a, &df, &err) == 0);
    CHECK_EQ_STR(df.file_format, "parquet");
    CHECK_EQ_INT(df.record_count, 10);
    CHECK_EQ_INT(df.file_size_in_bytes, 9999);
    CHECK(df.has_split_offsets && df.nsplit_offsets == 2 && df.split_offsets[1] == 5000);
    /* dec: none -> absent everywhere */
    CHECK(!find_count(&df.column_sizes, 2) && !find_count(&df.value_counts, 2) &&
          !find_bound(&df.lower_bounds, 2));
    CHECK(find_count(&df.column_sizes, 1) && find_count(&df.column_sizes, 1)->value == 100);
    CHECK(find_count(&df.null_value_counts, 3)->value == 2);
    /* strings truncated to 4 code points; the upper bound skips U+10FFFF */
    CHECK(bound_is(&df.lower_bounds, 1, "h\xc3\xa9ll", 5));
    CHECK(bound_is(&df.upper_bounds, 1, "zz{", 3));
    CHECK(bound_is(&df.lower_bounds, 3, "\x00", 1));
    CHECK(bound_is(&df.upper_bounds, 3, "\x01", 1));
    /* list element: counts, no bounds, even in full mode */
    CHECK(find_count(&df.value_counts, 5) != NULL);
    CHECK(!find_bound(&df.lower_bounds, 5) && !find_bound(&df.upper_bounds, 5));
    /* float: NaN count, bounds as is */
    CHECK(find_count(&df.nan_value_counts, 6) && find_count(&df.nan_value_counts, 6)->value == 2);
    CHECK_EQ_INT(df.nan_value_counts.n, 1);
    CHECK(bound_is(&df.lower_bounds, 6, f_lo, 4));
    /* binary counts mode: no bounds */
    CHECK(find_count(&df.value_counts, 7) && !find_bound(&df.lower_bounds, 7));
    /* decimal(20,2) stored as fixed[9]: minimal big-endian */
    CHECK(bound_is(&df.lower_bounds, 8, "\x85", 1));
    CHECK(bound_is(&df.upper_bounds, 8, "\x01\x00", 2));
    /* full: untouched */
    CHECK(bound_is(&df.lower_bounds, 9, s2_lo, 26));
    floe_metrics_config_free(cfg);

    /* defaults (truncate(16)): decimal(9,2) as int32 12345 -> 0x3039; binary upper bound
     * truncation drops the 0xff run and fails -> absent when all 0xff within 16 */
    floe_data_file d2 = {0};
    REQUIRE(floe_data_file_from_parquet(&fi, NULL, &a, &d2, &err) == 0);
    CHECK(bound_is(&d2.lower_bounds, 2, "\x30\x39", 2));
    CHECK(bound_is(&d2.upper_bounds, 2, "\x0f\x42\x40", 3));
    CHECK(bound_is(&d2.lower_bounds, 9, "abcdefghijklmnop", 16));
    CHECK(bound_is(&d2.upper_bounds, 9, "zyxwvutsrqponmll", 16));
    CHECK(bound_is(&d2.upper_bounds, 7, bin_hi, 6)); /* short enough: as is */
    uint8_t all_ff[20];
    memset(all_ff, 0xff, sizeof all_ff);
    cols[5].upper_bound = all_ff;
    cols[5].upper_len = sizeof all_ff;
    floe_data_file d3 = {0};
    REQUIRE(floe_data_file_from_parquet(&fi, NULL, &a, &d3, &err) == 0);
    CHECK(!find_bound(&d3.upper_bounds, 7));
    CHECK(find_bound(&d3.lower_bounds, 7) != NULL);

    /* max-inferred-column-defaults: 8 top-level columns > 2: only the first two get
     * truncate(16); the sort order column b is promoted */
    floe_kv lim[] = {{FLOE_PROP_METRICS_MAX_INFERRED, "2"}};
    floe_sort_order *order = NULL;
    REQUIRE(floe_sort_order_parse(s, "b", 1, &order, &err) == 0);
    REQUIRE(floe_metrics_config_new(lim, 1, s, order, &cfg, &err) == 0);
    CHECK(floe_metrics_config_mode(cfg, 1).kind == FLOE_METRICS_TRUNCATE);
    CHECK(floe_metrics_config_mode(cfg, 2).kind == FLOE_METRICS_TRUNCATE);
    CHECK(floe_metrics_config_mode(cfg, 3).kind == FLOE_METRICS_TRUNCATE);
    CHECK(floe_metrics_config_mode(cfg, 5).kind == FLOE_METRICS_NONE);
    CHECK(floe_metrics_config_mode(cfg, 9).kind == FLOE_METRICS_NONE);
    floe_metrics_config_free(cfg);
    /* an explicit default applies everywhere, whatever the width */
    floe_kv lim2[] = {{FLOE_PROP_METRICS_MAX_INFERRED, "2"}, {FLOE_PROP_METRICS_DEFAULT, "counts"}};
    REQUIRE(floe_metrics_config_new(lim2, 2, s, order, &cfg, &err) == 0);
    CHECK(floe_metrics_config_mode(cfg, 9).kind == FLOE_METRICS_COUNTS);
    CHECK(floe_metrics_config_mode(cfg, 3).kind == FLOE_METRICS_TRUNCATE); /* sorted */
    floe_metrics_config_free(cfg);
    floe_sort_order_free(order);
    floe_arena_reset(&a);
    floe_schema_free(s);
}

int main(void) {
    RUN(conformance_row_counts);
    RUN(conformance_quirks);
    RUN(conformance_snapshot_id_past_64_bits);
    RUN(equality_ids_long);
    RUN(header_integers_checked);
    RUN(conformance_decimal_partitions);
    RUN(conformance_null_stats);
    RUN(round_trip_data_manifest);
    RUN(round_trip_delete_manifest_and_codecs);
    RUN(v3_row_lineage);
    RUN(writer_rules);
    RUN(names_and_props);
    RUN(malformed_manifests);
    RUN(alloc_failures);
    RUN(metrics_modes_and_conversion);
    return harness_finish();
}
