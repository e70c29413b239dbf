/*
 * floe/parquet_reader.h - reading Parquet files written by any writer.
 *
 * A reader opens a file through FileIO (footer first, then only the column chunks it
 * needs), decodes the footer, builds the Parquet schema tree and, when the file's types
 * can be expressed in Iceberg, a floe_schema. Reading is one row group at a time: the
 * projected leaf columns of a row group are decoded page by page straight into
 * floe_colbufs (def/rep levels + non-null values, floe/column.h), so memory is bounded
 * by the row group, not the file.
 *
 * Values in the colbufs are in floe's in-memory form for the leaf's value type, which
 * may differ from the file's physical type:
 *   INT96 timestamps       -> INT64 microseconds since the epoch
 *   FLOAT16                -> FLOAT
 *   UINT_32 / UINT(32)     -> INT64
 *   TIME/TIMESTAMP millis  -> INT64 microseconds (TIME nanos -> microseconds)
 *   DECIMAL(P,S)           -> Iceberg's layout: INT32 (P<=9), INT64 (P<=18), else FIXED
 *                             of floe_decimal_bytes(P) bytes, big-endian
 * Everything else keeps its physical layout. The levels are the file's own (a legacy
 * two-level list keeps its two levels).
 *
 * Filtering: floe_pq_reader_set_filter() takes an expression over leaf columns
 *   expr   := or ; or := and ("OR" and)* ; and := not ("AND" not)* ;
 *   not    := "NOT" not | "(" expr ")" | cmp
 *   cmp    := column op literal | column ["NOT"] "IN" "(" literal, ... ")"
 *           | column "IS" ["NOT"] "NULL" | column ["NOT"] "LIKE" 'prefix%'
 *   op     := = | == | != | <> | < | <= | > | >=
 *   column := dotted path (a.b.c), optionally "double-quoted" or `backquoted`
 *   literal:= number | 'string' | true | false | null
 * Literals are typed from the column (dates 'YYYY-MM-DD', timestamps as ISO strings,
 * decimals exactly). Row groups are skipped by column statistics, pages by the page
 * index; floe_pq_reader_row_matches() is the exact per-row filter (SQL three-valued
 * logic: a row matches when the expression is TRUE). Comparison semantics: numbers by
 * value (NaN sorts above every number and equals itself, as in DuckDB), strings and
 * binaries bytewise unsigned. It is floe scan's language (one parser, src/common/filter.c);
 * floe scan compares NaN as IEEE does instead.
 *
 * Errors: FLOE_ECORRUPT (malformed input; message names the row group, column, page and
 * byte offset), FLOE_EENCRYPTED ("encrypted Parquet is not supported"),
 * FLOE_EUNSUPPORTED ("unsupported: <feature>"), FLOE_ELIMIT (a cap), FLOE_ENOMEM,
 * FLOE_EIO.
 *
 * Ownership and threads: a floe_pq_reader owns its file and footer until
 * floe_pq_reader_close; what it returns as const pointers (nodes, schema, metadata) is
 * borrowed until then. One thread at a time per reader.
 */
#ifndef FLOE_PARQUET_READER_H
#define FLOE_PARQUET_READER_H

#include "floe/column.h"
#include "floe/common.h"
#include "floe/io.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_pq_reader floe_pq_reader;

typedef struct floe_pq_reader_options {
    size_t max_footer_bytes; /* 0 = 64 MiB: larger footers are FLOE_ELIMIT */
    size_t max_chunk_bytes;  /* 0 = 2 GiB: one column chunk's stored size */
    size_t max_page_bytes;   /* 0 = 1 GiB: one page's decompressed size (a page is held
                              * whole in memory; larger pages are FLOE_ELIMIT naming the
                              * cap). Raise it for files with larger pages, such as
                              * single values over 1 GiB */
    size_t max_read_bytes;   /* 0 = 1 GiB, or twice a max_page_bytes above 1 GiB: the
                              * pages of one read (a row group, or the rows of one
                              * floe_pq_reader_read_rows) together, decompressed, over
                              * every column read; a read whose pages pass it fails with
                              * FLOE_ELIMIT naming the file, row group, column, the page's
                              * byte offset and the cap, before that page is decompressed */
    bool skip_crc;           /* do not verify page CRCs (default: verify when present) */
    bool no_map;             /* read local files with pread, never through a mapping
                              * (default: column chunks of local files of 1 MiB or more
                              * are decoded straight from an mmap of the file, see
                              * floe_input_mmap; a file that shrinks meanwhile fails the
                              * read with FLOE_EIO instead of a SIGBUS) */
    bool read_whole;         /* the caller reads every column (rewrite): a file of less
                              * than 1 MiB is read with one read at open. Without it such
                              * a file is read whole once the projection needs half its
                              * bytes, else chunk by chunk (a read each) */
} floe_pq_reader_options;

/* One node of the file's Parquet schema tree (borrowed from the reader, valid until
 * floe_pq_reader_close). */
typedef struct floe_pq_node floe_pq_node;
struct floe_pq_node {
    const char *name;
    const char *path;        /* dotted path below the root: "a.list.element" */
    int repetition;          /* 0 required, 1 optional, 2 repeated */
    int phys;                /* physical type (floe_phys numbering = parquet Type), -1 group */
    int32_t type_length;     /* FIXED_LEN_BYTE_ARRAY width */
    int converted_type;      /* parquet ConvertedType, -1 if absent */
    int logical_kind;        /* parquet LogicalType member id, 0 if absent */
    const char *type_text;   /* "INT64 TIMESTAMP(MICROS,true)", "group LIST", ... */
    bool has_field_id;
    int32_t field_id;        /* thrift 9: field_id */
    int16_t def_level;       /* max definition level at this node */
    int16_t rep_level;       /* max repetition level at this node */
    int32_t column;          /* leaves: column index (file order); groups: -1 */
    const floe_pq_node *parent; /* NULL for the root */
    const floe_pq_node *children;
    size_t nchildren;
    /* leaves: the value type floe decodes to (see the table above) */
    floe_type_id value_type;
    int32_t precision, scale; /* decimals */
    bool is_unsigned;        /* UINT_64 kept in an INT64: print and compare unsigned */
};

typedef struct floe_pq_reader_file {
    int32_t version;
    int64_t num_rows;
    size_t num_row_groups;
    size_t num_columns;
    const char *created_by;  /* NULL if absent */
    size_t num_kv;           /* key-value metadata entries */
    int64_t file_size;
    int64_t footer_length;
} floe_pq_reader_file;

typedef struct floe_pq_row_group_info {
    int64_t num_rows;
    int64_t total_byte_size;       /* uncompressed */
    int64_t compressed_size;       /* sum of the chunks' stored sizes */
    int64_t file_offset;           /* -1 if absent */
    int32_t ordinal;               /* -1 if absent */
} floe_pq_row_group_info;

typedef struct floe_pq_chunk_info {
    const char *path;              /* dotted path_in_schema */
    int phys;                      /* physical type */
    int codec;                     /* floe_codec */
    int64_t num_values;
    int64_t compressed_size, uncompressed_size;
    int64_t data_page_offset;
    int64_t dictionary_page_offset; /* -1 if absent */
    const int32_t *encodings;      /* parquet Encoding ids (borrowed) */
    size_t n_encodings;
    bool has_statistics;
    bool has_min_max;              /* usable min/max for this column's type */
    int64_t null_count;            /* -1 if absent */
    int64_t distinct_count;        /* -1 if absent */
    bool has_column_index, has_offset_index, has_bloom_filter;
    size_t num_kv;                 /* column chunk key-value metadata entries */
    /* GeospatialStatistics (GEOMETRY / GEOGRAPHY chunks, Geospatial.md), as stored */
    bool has_geo_statistics;
    bool has_geo_bbox;             /* geo_bbox: xmin, xmax, ymin, ymax, zmin, zmax, mmin, mmax */
    bool geo_bbox_has_z, geo_bbox_has_m;
    double geo_bbox[8];
    bool has_geo_types;            /* geospatial_types given (empty: not known) */
    const int32_t *geo_types;      /* ISO WKB type codes (borrowed from the reader) */
    size_t n_geo_types;
} floe_pq_chunk_info;

/* Counters for one reader since open (or the last floe_pq_reader_rewind). */
typedef struct floe_pq_read_stats {
    int64_t row_groups_read, row_groups_skipped;
    int64_t pages_read, pages_skipped; /* data pages */
    int64_t rows_read;                 /* rows decoded into colbufs */
    int64_t bytes_read;                /* bytes fetched for column chunks */
    int64_t bytes_mapped;              /* of bytes_read, those decoded straight from a
                                          mapping of the file (no copy) */
    int64_t pages_direct;              /* data pages whose values were decompressed
                                          straight into the column buffer (fixed-width
                                          PLAIN; PLAIN byte arrays, compacted there) */
} floe_pq_read_stats;

/* Projected columns of one row group (borrowed from the reader; valid until the next
 * read or close). cols[i] holds leaf nodes[i]; cols[i].field is the Iceberg leaf when
 * the file maps onto Iceberg, else NULL. Read-only, buffers included: the reader counts
 * on what they hold (definition levels a later page without nulls does not rewrite). */
typedef struct floe_pq_rowset {
    size_t ncols;
    floe_colbuf *cols;
    const floe_pq_node **nodes;
    int64_t nrows;                 /* rows held (after page skipping) */
    size_t row_group;              /* which row group */
} floe_pq_rowset;

/* ---- open / close ----------------------------------------------------------------- */
/* Open uri, read and validate the footer. opts may be NULL. */
int floe_pq_reader_open(floe_io *io, const char *uri, const floe_pq_reader_options *opts,
                        floe_pq_reader **out, floe_error *err) FLOE_NODISCARD;
/* Same over an already open input; takes ownership of `in` (closed on failure too). */
int floe_pq_reader_open_input(floe_input *in, const floe_pq_reader_options *opts,
                              floe_pq_reader **out, floe_error *err) FLOE_NODISCARD;
/* Same over bytes in memory (borrowed: p must outlive the reader). name is used in
 * messages. */
int floe_pq_reader_open_memory(const uint8_t *p, size_t n, const char *name,
                               const floe_pq_reader_options *opts, floe_pq_reader **out,
                               floe_error *err) FLOE_NODISCARD;
void floe_pq_reader_close(floe_pq_reader *r); /* accepts NULL */

/* ---- metadata ----------------------------------------------------------------------- */
void floe_pq_reader_file_info(const floe_pq_reader *r, floe_pq_reader_file *out);
/* File key-value metadata entry i: value may be NULL (absent). */
void floe_pq_reader_kv(const floe_pq_reader *r, size_t i, const char **key,
                       const char **value, size_t *value_len);
const floe_pq_node *floe_pq_reader_root(const floe_pq_reader *r);
const floe_pq_node *floe_pq_reader_leaf(const floe_pq_reader *r, size_t column);
/* A leaf's GEOMETRY or GEOGRAPHY annotation (LogicalTypes.md) as the geo, geo_crs and
 * geo_algo of a field: FLOE_GEO_NONE when the leaf has none. *crs (the reader's string,
 * NULL when the file gives none: OGC:CRS84) and *algo (FLOE_GEO_ALGO_DEFAULT when not
 * given) are set only for an annotated leaf. */
floe_geo_kind floe_pq_reader_leaf_geo(const floe_pq_reader *r, size_t column,
                                      const char **crs, floe_geo_algo *algo);

/* How the reader assembles a node's values (the LogicalTypes rules, with their
 * backward-compatibility cases for lists and maps). */
typedef enum floe_pq_shape {
    FLOE_PQ_SHAPE_PRIMITIVE, /* a leaf */
    FLOE_PQ_SHAPE_STRUCT,    /* a group of named fields (nd's children) */
    FLOE_PQ_SHAPE_LIST,      /* *child = the element node */
    FLOE_PQ_SHAPE_MAP,       /* *child = the repeated key_value group: key first */
} floe_pq_shape;
/* Shape of nd read as a field value, or (as_element) as the element of an enclosing list
 * whose repeated node it is: a repeated node outside a LIST group is a list of itself
 * (*child = nd, to be read as_element). *child is NULL for primitives and structs. */
floe_pq_shape floe_pq_node_shape(const floe_pq_node *nd, bool as_element,
                                 const floe_pq_node **child);
void floe_pq_reader_row_group_info(const floe_pq_reader *r, size_t rg,
                                   floe_pq_row_group_info *out);
void floe_pq_reader_chunk_info(const floe_pq_reader *r, size_t rg, size_t column,
                               floe_pq_chunk_info *out);
/* Column chunk key-value metadata entry i. */
void floe_pq_reader_chunk_kv(const floe_pq_reader *r, size_t rg, size_t column, size_t i,
                             const char **key, const char **value, size_t *value_len);
/* Append the chunk's min (want_max false) or max statistic as a JSON value to out.
 * FLOE_ENOTFOUND when the chunk has no usable statistic. */
int floe_pq_reader_chunk_stat_json(const floe_pq_reader *r, size_t rg, size_t column,
                                   bool want_max, floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* The chunk's minimum and maximum non-null value as its statistics give them, in the
 * column's in-memory form (the table above; BYTE_ARRAY: the bytes), into min and max
 * (reset first), for metrics that must be exact. 1 when the statistics give them:
 * min_value/max_value under the column's TYPE_DEFINED_ORDER, or the deprecated min/max
 * of a signed integer, float, boolean or INT32/INT64 decimal column (whose order never
 * changed); not marked inexact (truncated); not NaN. A float zero comes back as -0.0 for
 * the minimum and +0.0 for the maximum, as parquet.thrift asks of readers. 0 when they
 * do not (absent, truncated, order undefined or signed where it must not be, NaN, INT96,
 * a value of the wrong width): only the values themselves can tell. FLOE_ENOMEM. */
int floe_pq_reader_chunk_bounds(const floe_pq_reader *r, size_t rg, size_t column,
                                floe_buf *min, floe_buf *max, floe_error *err) FLOE_NODISCARD;
/* The Iceberg field of file column `column` after floe_pq_reader_iceberg_schema: its
 * leaf, or for a column inside a variant's shredding (below a typed_value, or a variant's
 * value beside a metadata) the variant field; NULL otherwise. Borrowed; valid until close. */
const floe_field *floe_pq_reader_iceberg_field(const floe_pq_reader *r, size_t column);
/* "PLAIN", "RLE_DICTIONARY", ... ("UNKNOWN(n)" is not produced: returns "UNKNOWN"). */
const char *floe_pq_encoding_name(int encoding);
/* The file as an Iceberg schema (field ids from the file, or assigned depth-first from
 * 1 when the file has none). FLOE_EUNSUPPORTED ("unsupported: ...") when the file holds
 * something Iceberg cannot express. Borrowed; valid until close. */
int floe_pq_reader_iceberg_schema(floe_pq_reader *r, const floe_schema **out,
                                  floe_error *err) FLOE_NODISCARD;

/* ---- projection and filtering ----------------------------------------------------- */
/* Select the columns under the given nodes (dotted paths of the Parquet tree, e.g. "a",
 * "a.b", "m.key_value.key"; a top-level name selects the whole field). n == 0 selects
 * every column (the default). A map with any column selected has its key columns selected
 * too (its values print by key; unselected values print null), so a projection prints
 * what the full read prints for the columns it names. FLOE_ENOTFOUND names an unknown
 * path. */
int floe_pq_reader_select_paths(floe_pq_reader *r, const char *const *paths, size_t n,
                                floe_error *err) FLOE_NODISCARD;
/* Same by Parquet field id. */
int floe_pq_reader_select_ids(floe_pq_reader *r, const int32_t *ids, size_t n,
                              floe_error *err) FLOE_NODISCARD;
/* Rows shaped by a table schema instead of the file's: each field is printed under
 * `name`, from file node `node` (by field id or name mapping: the caller's matching) or,
 * when node is NULL, as the constant JSON text const_ndjson (const_canonical in the
 * canonical form; NULL: the same text). A struct's children are its fields in output
 * order; a list has one child (its element, node = the list's element node), a map two
 * (key, value: the key node is required). Leaves print as the field's type: the file
 * value is widened or re-rendered (int -> long, float -> double, decimal precision,
 * date -> timestamp[_ns], timestamp units and zone, fixed/binary <-> uuid/string), and a
 * file type that cannot be read as the field's is FLOE_EUNSUPPORTED naming both. A
 * struct whose fields all come from constants still reads one column of its file group,
 * so its nulls and repetitions are the file's. fields (and everything they point to)
 * are borrowed until the next selection or close. Replaces any path or id selection. */
typedef struct floe_pq_read_field floe_pq_read_field;
struct floe_pq_read_field {
    const char *name;
    const floe_field *field;         /* the table field: type, and children for nesting */
    const floe_pq_node *node;        /* file node, or NULL for a constant */
    const char *const_ndjson;        /* node NULL: the value's text; NULL means null */
    const char *const_canonical;
    const floe_pq_read_field *children;
    size_t nchildren;
};
int floe_pq_reader_select_fields(floe_pq_reader *r, const floe_pq_read_field *fields,
                                 size_t n, floe_error *err) FLOE_NODISCARD;
/* Parse expr (see above) and use it to skip row groups and pages; NULL clears. Columns
 * the filter needs are read even when not selected (they are not printed). FLOE_EINVALID
 * for a syntax or typing error, FLOE_ENOTFOUND for an unknown column,
 * FLOE_EUNSUPPORTED for a repeated column. */
int floe_pq_reader_set_filter(floe_pq_reader *r, const char *expr, floe_error *err) FLOE_NODISCARD;
/* Disable row-group and page skipping (the filter stays usable per row). For tests. */
void floe_pq_reader_set_pruning(floe_pq_reader *r, bool row_groups, bool pages);

/* Check the CRC of every page of the file that carries one (PageHeader 4: crc), reading
 * each page's stored bytes one page at a time and decoding none: for a caller that takes
 * the file without reading its pages (floe append of a Parquet file whose statistics
 * suffice). 0 when every CRC present holds (*pages_checked, may be NULL: how many were
 * checked; 0 with skip_crc set); FLOE_ECORRUPT at the page body's offset, naming the
 * file, row group, column and the page's offset, for the first that does not; a page
 * header that does not decode or runs past the data FLOE_ECORRUPT too. Read errors. */
int floe_pq_reader_verify_checksums(floe_pq_reader *r, int64_t *pages_checked,
                                    floe_error *err) FLOE_NODISCARD;

/* ---- reading ----------------------------------------------------------------------- */
/* Read the next row group that may match the filter. Returns 1 with *out set, 0 at the
 * end of the file, or a negative error. */
int floe_pq_reader_next(floe_pq_reader *r, const floe_pq_rowset **out, floe_error *err)
    FLOE_NODISCARD;
/* Read row group rg (no statistics skipping; page skipping still applies). */
int floe_pq_reader_read_row_group(floe_pq_reader *r, size_t rg, const floe_pq_rowset **out,
                                  floe_error *err) FLOE_NODISCARD;
/* floe_pq_reader_read_row_group, but the levels and values of file column c are appended
 * to into[c] where that is not NULL (into has floe_pq_reader_file.num_columns entries),
 * and the row set's column is left empty: a caller gathering row groups in buffers of its
 * own is spared copying them (rewrite). An into[c] whose layout (phys, width, max_def,
 * max_rep) is not the row set column's, or whose column is not read, is set to NULL and
 * that column read into the row set as usual. into[c]'s field is kept. On an error each
 * into[c] is truncated back to the rows it held. Takes no filter (FLOE_EINVALID). */
int floe_pq_reader_read_row_group_into(floe_pq_reader *r, size_t rg, floe_colbuf **into,
                                       const floe_pq_rowset **out, floe_error *err) FLOE_NODISCARD;
/* Read rows [first, first + n) of row group rg only (no statistics or filter skipping):
 * the rowset holds exactly n rows, so a large row group can be decoded a slice at a time.
 * With an offset index only the pages overlapping the rows are fetched and decoded (plus
 * the dictionary pages); without one the chunk is read page by page (one page buffered),
 * and a call for rows at or after the previous call's picks up where that one stopped, so
 * consecutive slices decode each page about once. FLOE_EINVALID for rows outside the row
 * group, FLOE_ECORRUPT when the pages do not yield exactly n rows. */
int floe_pq_reader_read_rows(floe_pq_reader *r, size_t rg, int64_t first, int64_t n,
                             const floe_pq_rowset **out, floe_error *err) FLOE_NODISCARD;
/* After a read (floe_pq_reader_next, _read_row_group, _read_rows), the value of the
 * selected VARIANT group `group` put back together as one unshredded variant value per
 * entry of its metadata column where the variant is present (in that column's order;
 * VariantShredding.md "Reconstructing a Shredded Variant"): the value column's bytes as
 * they are, typed values as their variant primitives, objects and arrays rebuilt with the
 * row's metadata, whose dictionary holds every field name (a shredded field name it lacks
 * is FLOE_ECORRUPT). The values are appended to `values`; offsets receives one uint32
 * (host order) per value plus one, positions in `values`. The metadata column's levels
 * say where the variant is null. FLOE_EINVALID when group is not a selected variant;
 * FLOE_ECORRUPT naming the column for an invalid layout or value; FLOE_ELIMIT past 4 GiB;
 * FLOE_ENOMEM. */
int floe_pq_reader_variant_values(floe_pq_reader *r, const floe_pq_node *group, floe_buf *values,
                                  floe_buf *offsets, floe_error *err) FLOE_NODISCARD;
/* The same values read through (metadata and value checked against VariantEncoding.md, as
 * floe_variant_to_json checks them) and discarded: 0, or FLOE_ECORRUPT naming the row
 * group and the column of the first invalid value. For a variant written unshredded the
 * value bytes are otherwise taken as they are. */
int floe_pq_reader_variant_check(floe_pq_reader *r, const floe_pq_node *group,
                                 floe_error *err) FLOE_NODISCARD;
/* True when every selected column of row group rg declares an offset index (page
 * locations), so floe_pq_reader_read_rows fetches only the pages it needs. */
bool floe_pq_reader_has_page_locations(const floe_pq_reader *r, size_t rg);
/* Start again at row group 0 and zero the counters. */
void floe_pq_reader_rewind(floe_pq_reader *r);
void floe_pq_reader_stats(const floe_pq_reader *r, floe_pq_read_stats *out);

/* ---- rows --------------------------------------------------------------------------- */
typedef enum floe_pq_row_format {
    FLOE_PQ_ROWS_NDJSON = 0,   /* one JSON object per line, human-friendly values; a map
                                  with string keys as an object, others as an array of
                                  {"key":..,"value":..} */
    FLOE_PQ_ROWS_CANONICAL,    /* the NDJSON form of tests/js/read_parquet.mjs (maps as
                                  sorted [key, value] pairs) */
} floe_pq_row_format;

/* Called with formatted output; returns 0 or a negative floe code to stop. */
typedef int (*floe_pq_sink_fn)(void *ctx, const void *p, size_t n);

/* Assemble every row of every (remaining) row group from its levels, keep the rows the
 * filter matches exactly, stop after limit rows (limit < 0: no limit), and write them in
 * `format` to sink. *rows_out (may be NULL) receives the rows written. */
int floe_pq_reader_dump(floe_pq_reader *r, floe_pq_row_format format, int64_t limit,
                        floe_pq_sink_fn sink, void *sink_ctx, int64_t *rows_out,
                        floe_error *err) FLOE_NODISCARD;

/* A piece of text that is not NUL-terminated. */
typedef struct floe_pq_text {
    const char *p;
    size_t n;
} floe_pq_text;

/* Rows as columns: called once with values == NULL before any row (the printed columns'
 * labels, also when no row follows), then once per row with each column's value as the
 * JSON text FLOE_PQ_ROWS_NDJSON prints for it ("null" for null). labels and values are
 * valid during the call only. Returns 0 or a negative floe code to stop. */
typedef int (*floe_pq_row_fn)(void *ctx, size_t ncols, const char *const *labels,
                              const floe_pq_text *values);

/* floe_pq_reader_dump, handing each row to fn column by column instead of as text. */
int floe_pq_reader_dump_rows(floe_pq_reader *r, int64_t limit, floe_pq_row_fn fn, void *ctx,
                             int64_t *rows_out, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
