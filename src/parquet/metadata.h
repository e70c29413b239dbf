/*
 * metadata.h - Parquet metadata structures (apache/parquet-format parquet.thrift) with
 * compact-protocol encoders (for the writer) and decoders (for the reader).
 *
 * Field comments carry the thrift field id. Optional scalar fields have a has_<name> flag;
 * optional structs likewise; lists are (pointer, count) with count 0 meaning absent.
 *
 * Decoding: every decoder takes an arena and allocates everything it returns from it
 * (strings NUL-terminated, binaries copied), so the result outlives the input buffer and
 * is freed with the arena. Unknown fields are skipped; missing required fields are
 * FLOE_ECORRUPT naming the struct and field. Encryption-related fields are recorded (not
 * decoded) so a reader can refuse the file with FLOE_EENCRYPTED
 * (floe_pq_file_metadata_check_encryption). Page headers are the exception to the arena
 * rule: floe_pq_page_header_decode borrows binaries from the input (it is on the hot path
 * and its statistics are rarely used).
 *
 * Encoding: encoders append to a floe_buf; they write exactly the fields that are set.
 */
#ifndef FLOE_PQ_METADATA_H
#define FLOE_PQ_METADATA_H

#include "floe/common.h"

/* parquet.thrift enums */
enum floe_pq_type {
    FLOE_PQ_BOOLEAN = 0, FLOE_PQ_INT32 = 1, FLOE_PQ_INT64 = 2, FLOE_PQ_INT96 = 3,
    FLOE_PQ_FLOAT = 4, FLOE_PQ_DOUBLE = 5, FLOE_PQ_BYTE_ARRAY = 6,
    FLOE_PQ_FIXED_LEN_BYTE_ARRAY = 7,
};
enum floe_pq_converted_type {
    FLOE_PQ_CT_UTF8 = 0, FLOE_PQ_CT_MAP = 1, FLOE_PQ_CT_MAP_KEY_VALUE = 2, FLOE_PQ_CT_LIST = 3,
    FLOE_PQ_CT_ENUM = 4, FLOE_PQ_CT_DECIMAL = 5, FLOE_PQ_CT_DATE = 6,
    FLOE_PQ_CT_TIME_MILLIS = 7, FLOE_PQ_CT_TIME_MICROS = 8, FLOE_PQ_CT_TIMESTAMP_MILLIS = 9,
    FLOE_PQ_CT_TIMESTAMP_MICROS = 10, FLOE_PQ_CT_UINT_8 = 11, FLOE_PQ_CT_UINT_16 = 12,
    FLOE_PQ_CT_UINT_32 = 13, FLOE_PQ_CT_UINT_64 = 14, FLOE_PQ_CT_INT_8 = 15,
    FLOE_PQ_CT_INT_16 = 16, FLOE_PQ_CT_INT_32 = 17, FLOE_PQ_CT_INT_64 = 18,
    FLOE_PQ_CT_JSON = 19, FLOE_PQ_CT_BSON = 20, FLOE_PQ_CT_INTERVAL = 21,
};
enum floe_pq_repetition {
    FLOE_PQ_REQUIRED = 0, FLOE_PQ_OPTIONAL = 1, FLOE_PQ_REPEATED = 2, FLOE_PQ_VECTOR = 3,
};
enum floe_pq_encoding {
    FLOE_PQ_ENC_PLAIN = 0, FLOE_PQ_ENC_PLAIN_DICTIONARY = 2, FLOE_PQ_ENC_RLE = 3,
    FLOE_PQ_ENC_BIT_PACKED = 4, FLOE_PQ_ENC_DELTA_BINARY_PACKED = 5,
    FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6, FLOE_PQ_ENC_DELTA_BYTE_ARRAY = 7,
    FLOE_PQ_ENC_RLE_DICTIONARY = 8, FLOE_PQ_ENC_BYTE_STREAM_SPLIT = 9,
};
enum floe_pq_page_type {
    FLOE_PQ_DATA_PAGE = 0, FLOE_PQ_INDEX_PAGE = 1, FLOE_PQ_DICTIONARY_PAGE = 2,
    FLOE_PQ_DATA_PAGE_V2 = 3,
};
enum floe_pq_boundary_order {
    FLOE_PQ_UNORDERED = 0, FLOE_PQ_ASCENDING = 1, FLOE_PQ_DESCENDING = 2,
};
/* LogicalType union member ids. */
enum floe_pq_logical_kind {
    FLOE_PQ_LT_NONE = 0, FLOE_PQ_LT_STRING = 1, FLOE_PQ_LT_MAP = 2, FLOE_PQ_LT_LIST = 3,
    FLOE_PQ_LT_ENUM = 4, FLOE_PQ_LT_DECIMAL = 5, FLOE_PQ_LT_DATE = 6, FLOE_PQ_LT_TIME = 7,
    FLOE_PQ_LT_TIMESTAMP = 8, FLOE_PQ_LT_INTEGER = 10, FLOE_PQ_LT_UNKNOWN = 11,
    FLOE_PQ_LT_JSON = 12, FLOE_PQ_LT_BSON = 13, FLOE_PQ_LT_UUID = 14,
    FLOE_PQ_LT_FLOAT16 = 15, FLOE_PQ_LT_VARIANT = 16, FLOE_PQ_LT_GEOMETRY = 17,
    FLOE_PQ_LT_GEOGRAPHY = 18, FLOE_PQ_LT_VECTOR = 19,
};
/* TimeUnit union member ids. */
enum floe_pq_time_unit { FLOE_PQ_MILLIS = 1, FLOE_PQ_MICROS = 2, FLOE_PQ_NANOS = 3 };
/* ColumnOrder union member ids. */
enum floe_pq_column_order {
    FLOE_PQ_ORDER_UNKNOWN = 0, FLOE_PQ_ORDER_TYPE_DEFINED = 1,
    FLOE_PQ_ORDER_IEEE754_TOTAL = 2, FLOE_PQ_ORDER_INT96_TIMESTAMP = 3,
};

/* A binary value: borrowed (encoding, page headers) or arena-owned (decoding). */
typedef struct floe_pq_bytes {
    const uint8_t *p;
    size_t n;
} floe_pq_bytes;

typedef struct floe_pq_statistics {
    bool has_max; floe_pq_bytes max;                     /* thrift 1: max (deprecated) */
    bool has_min; floe_pq_bytes min;                     /* thrift 2: min (deprecated) */
    bool has_null_count; int64_t null_count;             /* thrift 3: null_count */
    bool has_distinct_count; int64_t distinct_count;     /* thrift 4: distinct_count */
    bool has_max_value; floe_pq_bytes max_value;         /* thrift 5: max_value */
    bool has_min_value; floe_pq_bytes min_value;         /* thrift 6: min_value */
    bool has_is_max_value_exact; bool is_max_value_exact; /* thrift 7 */
    bool has_is_min_value_exact; bool is_min_value_exact; /* thrift 8 */
    bool has_nan_count; int64_t nan_count;               /* thrift 9: nan_count */
} floe_pq_statistics;

typedef struct floe_pq_logical_type {
    int kind;                      /* union member id (enum floe_pq_logical_kind) */
    int32_t decimal_scale;         /* DecimalType thrift 1: scale */
    int32_t decimal_precision;     /* DecimalType thrift 2: precision */
    bool is_adjusted_to_utc;       /* Time/TimestampType thrift 1: isAdjustedToUTC */
    int time_unit;                 /* Time/TimestampType thrift 2: unit (TimeUnit id) */
    int8_t int_bit_width;          /* IntType thrift 1: bitWidth */
    bool int_is_signed;            /* IntType thrift 2: isSigned */
    bool has_variant_version; int8_t variant_version; /* VariantType thrift 1 */
    const char *geo_crs;           /* Geometry/GeographyType thrift 1: crs (NULL if absent) */
    bool has_geo_algorithm; int32_t geo_algorithm;    /* GeographyType thrift 2 */
} floe_pq_logical_type;

typedef struct floe_pq_schema_element {
    bool has_type; int32_t type;                         /* thrift 1: type */
    bool has_type_length; int32_t type_length;           /* thrift 2: type_length */
    bool has_repetition_type; int32_t repetition_type;   /* thrift 3: repetition_type */
    const char *name;                                    /* thrift 4: name (required) */
    bool has_num_children; int32_t num_children;         /* thrift 5: num_children */
    bool has_converted_type; int32_t converted_type;     /* thrift 6: converted_type */
    bool has_scale; int32_t scale;                       /* thrift 7: scale */
    bool has_precision; int32_t precision;               /* thrift 8: precision */
    bool has_field_id; int32_t field_id;                 /* thrift 9: field_id */
    bool has_logical_type; floe_pq_logical_type logical_type; /* thrift 10: logicalType */
    bool has_vector_length; int32_t vector_length;       /* thrift 11: vector_length */
} floe_pq_schema_element;

typedef struct floe_pq_key_value {
    const char *key;               /* thrift 1: key (required) */
    const char *value;             /* thrift 2: value (NULL if absent) */
    size_t value_len;
} floe_pq_key_value;

typedef struct floe_pq_sorting_column {
    int32_t column_idx;            /* thrift 1: column_idx */
    bool descending;               /* thrift 2: descending */
    bool nulls_first;              /* thrift 3: nulls_first */
} floe_pq_sorting_column;

typedef struct floe_pq_page_encoding_stats {
    int32_t page_type;             /* thrift 1: page_type */
    int32_t encoding;              /* thrift 2: encoding */
    int32_t count;                 /* thrift 3: count */
} floe_pq_page_encoding_stats;

typedef struct floe_pq_size_statistics {
    bool has_unencoded_byte_array_data_bytes;
    int64_t unencoded_byte_array_data_bytes;             /* thrift 1 */
    int64_t *repetition_level_histogram; size_t n_rep_hist; /* thrift 2 */
    int64_t *definition_level_histogram; size_t n_def_hist; /* thrift 3 */
} floe_pq_size_statistics;

/* Geospatial.md "Bounding Box": X and Y always, Z and M when the values have them. */
typedef struct floe_pq_bounding_box {
    double xmin, xmax, ymin, ymax;                       /* thrift 1..4 (required) */
    bool has_z; double zmin, zmax;                       /* thrift 5, 6 (both, or neither) */
    bool has_m; double mmin, mmax;                       /* thrift 7, 8 (both, or neither) */
} floe_pq_bounding_box;

typedef struct floe_pq_geospatial_statistics {
    bool has_bbox; floe_pq_bounding_box bbox;            /* thrift 1: bbox */
    bool has_types;                                      /* thrift 2: geospatial_types */
    int32_t *geospatial_types; size_t n_types;           /* (empty: not known) */
} floe_pq_geospatial_statistics;

typedef struct floe_pq_column_metadata {
    int32_t type;                                        /* thrift 1: type */
    int32_t *encodings; size_t n_encodings;              /* thrift 2: encodings */
    const char **path_in_schema; size_t n_path;          /* thrift 3: path_in_schema */
    int32_t codec;                                       /* thrift 4: codec */
    int64_t num_values;                                  /* thrift 5: num_values */
    int64_t total_uncompressed_size;                     /* thrift 6 */
    int64_t total_compressed_size;                       /* thrift 7 */
    floe_pq_key_value *key_value_metadata; size_t n_kv;  /* thrift 8 */
    int64_t data_page_offset;                            /* thrift 9: data_page_offset */
    bool has_index_page_offset; int64_t index_page_offset; /* thrift 10 */
    bool has_dictionary_page_offset; int64_t dictionary_page_offset; /* thrift 11 */
    bool has_statistics; floe_pq_statistics statistics;  /* thrift 12: statistics */
    floe_pq_page_encoding_stats *encoding_stats; size_t n_encoding_stats; /* thrift 13 */
    bool has_bloom_filter_offset; int64_t bloom_filter_offset; /* thrift 14 */
    bool has_bloom_filter_length; int32_t bloom_filter_length; /* thrift 15 */
    bool has_size_statistics; floe_pq_size_statistics size_statistics; /* thrift 16 */
    bool has_geospatial_statistics;                      /* thrift 17 */
    floe_pq_geospatial_statistics geospatial_statistics;
} floe_pq_column_metadata;

typedef struct floe_pq_column_chunk {
    const char *file_path;                               /* thrift 1 (NULL if absent) */
    int64_t file_offset;                                 /* thrift 2: file_offset */
    bool has_meta_data; floe_pq_column_metadata meta_data; /* thrift 3: meta_data */
    bool has_offset_index; int64_t offset_index_offset;  /* thrift 4 */
    int32_t offset_index_length;                         /* thrift 5 */
    bool has_column_index; int64_t column_index_offset;  /* thrift 6 */
    int32_t column_index_length;                         /* thrift 7 */
    bool has_crypto_metadata;                            /* thrift 8 (not decoded) */
    bool has_encrypted_column_metadata;                  /* thrift 9 (not decoded) */
} floe_pq_column_chunk;

typedef struct floe_pq_row_group {
    floe_pq_column_chunk *columns; size_t n_columns;     /* thrift 1: columns */
    int64_t total_byte_size;                             /* thrift 2: total_byte_size */
    int64_t num_rows;                                    /* thrift 3: num_rows */
    floe_pq_sorting_column *sorting_columns; size_t n_sorting; /* thrift 4 */
    bool has_file_offset; int64_t file_offset;           /* thrift 5: file_offset */
    bool has_total_compressed_size; int64_t total_compressed_size; /* thrift 6 */
    bool has_ordinal; int16_t ordinal;                   /* thrift 7: ordinal */
} floe_pq_row_group;

typedef struct floe_pq_file_metadata {
    int32_t version;                                     /* thrift 1: version */
    floe_pq_schema_element *schema; size_t n_schema;     /* thrift 2: schema */
    int64_t num_rows;                                    /* thrift 3: num_rows */
    floe_pq_row_group *row_groups; size_t n_row_groups;  /* thrift 4: row_groups */
    floe_pq_key_value *key_value_metadata; size_t n_kv;  /* thrift 5 */
    const char *created_by;                              /* thrift 6 (NULL if absent) */
    int *column_orders; size_t n_column_orders;          /* thrift 7 (ColumnOrder ids) */
    bool has_encryption_algorithm;                       /* thrift 8 (not decoded) */
    bool has_footer_signing_key_metadata;                /* thrift 9 (not decoded) */
} floe_pq_file_metadata;

typedef struct floe_pq_data_page_header {
    int32_t num_values;                                  /* thrift 1: num_values */
    int32_t encoding;                                    /* thrift 2: encoding */
    int32_t definition_level_encoding;                   /* thrift 3 */
    int32_t repetition_level_encoding;                   /* thrift 4 */
    bool has_statistics; floe_pq_statistics statistics;  /* thrift 5: statistics */
} floe_pq_data_page_header;

typedef struct floe_pq_dictionary_page_header {
    int32_t num_values;                                  /* thrift 1: num_values */
    int32_t encoding;                                    /* thrift 2: encoding */
    bool has_is_sorted; bool is_sorted;                  /* thrift 3: is_sorted */
} floe_pq_dictionary_page_header;

typedef struct floe_pq_data_page_header_v2 {
    int32_t num_values;                                  /* thrift 1: num_values */
    int32_t num_nulls;                                   /* thrift 2: num_nulls */
    int32_t num_rows;                                    /* thrift 3: num_rows */
    int32_t encoding;                                    /* thrift 4: encoding */
    int32_t definition_levels_byte_length;               /* thrift 5 */
    int32_t repetition_levels_byte_length;               /* thrift 6 */
    bool is_compressed;                                  /* thrift 7 (default true) */
    bool has_statistics; floe_pq_statistics statistics;  /* thrift 8: statistics */
} floe_pq_data_page_header_v2;

typedef struct floe_pq_page_header {
    int32_t type;                                        /* thrift 1: type */
    int32_t uncompressed_page_size;                      /* thrift 2 */
    int32_t compressed_page_size;                        /* thrift 3 */
    bool has_crc; int32_t crc;                           /* thrift 4: crc */
    bool has_data_page_header; floe_pq_data_page_header data_page_header; /* thrift 5 */
    bool has_index_page_header;                          /* thrift 6 (empty struct) */
    bool has_dictionary_page_header;
    floe_pq_dictionary_page_header dictionary_page_header; /* thrift 7 */
    bool has_data_page_header_v2;
    floe_pq_data_page_header_v2 data_page_header_v2;     /* thrift 8 */
} floe_pq_page_header;

typedef struct floe_pq_page_location {
    int64_t offset;                                      /* thrift 1: offset */
    int32_t compressed_page_size;                        /* thrift 2 */
    int64_t first_row_index;                             /* thrift 3: first_row_index */
} floe_pq_page_location;

typedef struct floe_pq_offset_index {
    floe_pq_page_location *page_locations; size_t n_pages; /* thrift 1 */
    int64_t *unencoded_byte_array_data_bytes; size_t n_unencoded; /* thrift 2 */
} floe_pq_offset_index;

typedef struct floe_pq_column_index {
    bool *null_pages; size_t n_pages;                    /* thrift 1: null_pages */
    floe_pq_bytes *min_values;                           /* thrift 2: min_values (n_pages) */
    floe_pq_bytes *max_values;                           /* thrift 3: max_values (n_pages) */
    int32_t boundary_order;                              /* thrift 4: boundary_order */
    int64_t *null_counts; size_t n_null_counts;          /* thrift 5: null_counts */
    int64_t *repetition_level_histograms; size_t n_rep_hist; /* thrift 6 */
    int64_t *definition_level_histograms; size_t n_def_hist; /* thrift 7 */
    int64_t *nan_counts; size_t n_nan_counts;            /* thrift 8: nan_counts */
} floe_pq_column_index;

/* ---- encoders: append to out; FLOE_ENOMEM / FLOE_ELIMIT ---------------------------- */
int floe_pq_file_metadata_encode(const floe_pq_file_metadata *md, floe_buf *out,
                                 floe_error *err);
int floe_pq_page_header_encode(const floe_pq_page_header *ph, floe_buf *out, floe_error *err);
int floe_pq_column_index_encode(const floe_pq_column_index *ci, floe_buf *out,
                                floe_error *err);
int floe_pq_offset_index_encode(const floe_pq_offset_index *oi, floe_buf *out,
                                floe_error *err);

/* ---- decoders ----------------------------------------------------------------------- */
/* Decode a footer (the bytes between the last data and the length+magic trailer).
 * base_offset is the file offset of p[0] (for error offsets). Everything is allocated in
 * `arena`; give the arena a cap to bound memory. *out written only on success. */
int floe_pq_file_metadata_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                 floe_arena *arena, floe_pq_file_metadata *out,
                                 floe_error *err);
/* FLOE_EENCRYPTED if the decoded footer or any column chunk carries encryption fields. */
int floe_pq_file_metadata_check_encryption(const floe_pq_file_metadata *md, floe_error *err);
/* Decode one page header from p[0..n); *consumed receives its size. Statistics binaries
 * are borrowed from p (valid while p is). FLOE_ECORRUPT if truncated or invalid. */
int floe_pq_page_header_decode(const uint8_t *p, size_t n, int64_t base_offset,
                               floe_pq_page_header *out, size_t *consumed, floe_error *err);
int floe_pq_column_index_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                floe_arena *arena, floe_pq_column_index *out,
                                floe_error *err);
int floe_pq_offset_index_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                floe_arena *arena, floe_pq_offset_index *out,
                                floe_error *err);

#endif
