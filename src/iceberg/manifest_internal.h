/*
 * manifest_internal.h - pieces shared by the manifest files of src/iceberg: the Avro
 * schemas of manifests and manifest lists, and value conversions between Iceberg
 * partition values and Avro. Private to src/iceberg.
 */
#ifndef FLOE_ICEBERG_MANIFEST_INTERNAL_H
#define FLOE_ICEBERG_MANIFEST_INTERNAL_H

#include "floe/avro.h"
#include "floe/manifest.h"

/* Iceberg field ids of manifest_entry / data_file / manifest_file / field_summary. */
enum {
    FLOE_MF_STATUS = 0,
    FLOE_MF_SNAPSHOT_ID = 1,
    FLOE_MF_DATA_FILE = 2,
    FLOE_MF_SEQUENCE_NUMBER = 3,
    FLOE_MF_FILE_SEQUENCE_NUMBER = 4,
    FLOE_DF_FILE_PATH = 100,
    FLOE_DF_FILE_FORMAT = 101,
    FLOE_DF_PARTITION = 102,
    FLOE_DF_RECORD_COUNT = 103,
    FLOE_DF_FILE_SIZE = 104,
    FLOE_DF_COLUMN_SIZES = 108,
    FLOE_DF_VALUE_COUNTS = 109,
    FLOE_DF_NULL_VALUE_COUNTS = 110,
    FLOE_DF_LOWER_BOUNDS = 125,
    FLOE_DF_UPPER_BOUNDS = 128,
    FLOE_DF_KEY_METADATA = 131,
    FLOE_DF_SPLIT_OFFSETS = 132,
    FLOE_DF_CONTENT = 134,
    FLOE_DF_EQUALITY_IDS = 135,
    FLOE_DF_NAN_VALUE_COUNTS = 137,
    FLOE_DF_SORT_ORDER_ID = 140,
    FLOE_DF_FIRST_ROW_ID = 142,
    FLOE_DF_REFERENCED_DATA_FILE = 143,
    FLOE_DF_CONTENT_OFFSET = 144,
    FLOE_DF_CONTENT_SIZE = 145,
    FLOE_ML_PATH = 500,
    FLOE_ML_LENGTH = 501,
    FLOE_ML_SPEC_ID = 502,
    FLOE_ML_ADDED_SNAPSHOT_ID = 503,
    FLOE_ML_ADDED_FILES = 504,
    FLOE_ML_EXISTING_FILES = 505,
    FLOE_ML_DELETED_FILES = 506,
    FLOE_ML_PARTITIONS = 507,
    FLOE_ML_SUMMARY = 508,
    FLOE_ML_CONTAINS_NULL = 509,
    FLOE_ML_LOWER = 510,
    FLOE_ML_UPPER = 511,
    FLOE_ML_ADDED_ROWS = 512,
    FLOE_ML_EXISTING_ROWS = 513,
    FLOE_ML_DELETED_ROWS = 514,
    FLOE_ML_SEQUENCE_NUMBER = 515,
    FLOE_ML_MIN_SEQUENCE_NUMBER = 516,
    FLOE_ML_CONTENT = 517,
    FLOE_ML_CONTAINS_NAN = 518,
    FLOE_ML_KEY_METADATA = 519,
    FLOE_ML_FIRST_ROW_ID = 520,
};

/* The manifest_entry Avro schema of format_version (1, 2 or 3) for a bound partition spec
 * (the partition struct is record r102 with one optional field per partition field, ids =
 * partition field ids), appended to out as JSON. v1: snapshot_id required, no sequence
 * numbers, no content / equality_ids / referenced_data_file, block_size_in_bytes. v3: v2
 * plus first_row_id, content_offset and content_size_in_bytes. */
int floe_mf_entry_schema_json(const floe_partition_spec *spec, int format_version,
                              floe_buf *out, floe_error *err);
/* The manifest_file Avro schema of format_version (1, 2 or 3; JSON text, static). v1: no
 * content and sequence numbers, the counts optional; v3: first_row_id. */
const char *floe_mf_list_schema_json(int format_version);

/* A name Avro accepts ([A-Za-z_][A-Za-z0-9_]*), made as the reference does: a leading
 * digit gets "_" in front, any other character becomes "_x" + its code in upper-case
 * hex. Appended to out. */
int floe_mf_avro_name(const char *name, floe_buf *out);

/* Avro value for a partition value of Iceberg type t (value must be null or of type
 * t->type). Fixed-size scratch (decimals) is taken from arena. */
int floe_mf_partition_to_avro(const floe_field *t, const floe_value *v, floe_arena *arena,
                              floe_avro_value *out, floe_error *err);
/* Iceberg value of type t from a decoded Avro value (any branch of a union already
 * chosen). Bytes borrow from the Avro value. Accepts the encodings writers use: int or
 * long for integers, fixed or bytes for decimals, uuid and fixed. FLOE_ECORRUPT. */
int floe_mf_partition_from_avro(const floe_field *t, const floe_avro_value *v,
                                floe_value *out, floe_error *err);

#endif
