/*
 * floe/manifest.h - Iceberg manifests and manifest lists (the Avro layer of a snapshot).
 *
 * Spec: apache/iceberg format/spec.md "Manifests" (manifest_entry, data_file, "Manifest
 * Metadata"), "Manifest Lists" (manifest_file, field_summary), "Sequence Number
 * Inheritance", "First Row ID Inheritance", "Appendix A" (Avro field ids, maps as arrays
 * of key/value records), "Appendix D" (bounds), "Appendix E" (reading v1 as v2).
 *
 * Writing always produces format v2 files with the spec's Avro schemas, field ids
 * included. Reading accepts v1, v2 and v3 files from any writer, matching fields by
 * Iceberg field id (by name only when asked to, for files re-encoded without ids).
 *
 * Models:
 *   floe_data_file       one data or delete file (data_file struct, ids 100..145)
 *   floe_manifest_entry  status + snapshot id + sequence numbers + the file (ids 0..4)
 *   floe_manifest_file   one manifest as its manifest list records it (ids 500..520)
 *
 * Nullable spec fields carry a `has_` flag (false = null / absent in the file). Metric
 * maps carry `present`: false means the writer recorded nothing (unknown), which is not
 * the same as an empty map, and never the same as zero.
 *
 * Ownership and threads: entries and lists read into a caller's arena live as long as the
 * arena; a manifest reader or writer owns its state until its _close and is used by one
 * thread at a time.
 */
#ifndef FLOE_MANIFEST_H
#define FLOE_MANIFEST_H

#include <strings.h>

#include "floe/codec.h"
#include "floe/common.h"
#include "floe/parquet.h"
#include "floe/partition.h"
#include "floe/schema.h"
#include "floe/table_metadata.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* A sequence number that the commit has not assigned yet (the manifest list writer fills
 * it in). Real sequence numbers are >= 0. */
#define FLOE_SEQ_UNASSIGNED (-1)

typedef enum floe_file_content {
    FLOE_CONTENT_DATA = 0,
    FLOE_CONTENT_POSITION_DELETES = 1,
    FLOE_CONTENT_EQUALITY_DELETES = 2,
} floe_file_content;

typedef enum floe_manifest_content {
    FLOE_MANIFEST_DATA = 0,    /* header content "data", list content 0 */
    FLOE_MANIFEST_DELETES = 1, /* header content "deletes", list content 1 */
} floe_manifest_content;

typedef enum floe_entry_status {
    FLOE_ENTRY_EXISTING = 0,
    FLOE_ENTRY_ADDED = 1,
    FLOE_ENTRY_DELETED = 2,
} floe_entry_status;

/* One entry of a metric map: column field id -> count, or -> bound (Appendix D bytes). */
typedef struct floe_column_count {
    int32_t field_id; /* map key */
    int64_t value;    /* map value */
} floe_column_count;

typedef struct floe_column_bound {
    int32_t field_id;
    const uint8_t *p; /* single-value binary serialization */
    size_t n;
} floe_column_bound;

typedef struct floe_count_map {
    bool present;                   /* false: null in the manifest (unknown) */
    const floe_column_count *items; /* n entries */
    size_t n;
} floe_count_map;

typedef struct floe_bound_map {
    bool present;
    const floe_column_bound *items;
    size_t n;
} floe_bound_map;

typedef struct floe_data_file {
    floe_file_content content;          /* iceberg 134: content (v1: 0) */
    const char *file_path;              /* iceberg 100: file_path */
    const char *file_format;            /* iceberg 101: file_format ("parquet", "avro",
                                           "orc", "puffin"; the reference writes them
                                           upper-case: compare without case) */
    const floe_value *partition;        /* iceberg 102: partition, one value per field of
                                           the manifest's spec (in spec order) */
    size_t npartition;
    int64_t record_count;               /* iceberg 103: record_count */
    int64_t file_size_in_bytes;         /* iceberg 104: file_size_in_bytes */
    floe_count_map column_sizes;        /* iceberg 108: column_sizes (117 -> 118) */
    floe_count_map value_counts;        /* iceberg 109: value_counts (119 -> 120) */
    floe_count_map null_value_counts;   /* iceberg 110: null_value_counts (121 -> 122) */
    floe_count_map nan_value_counts;    /* iceberg 137: nan_value_counts (138 -> 139) */
    floe_bound_map lower_bounds;        /* iceberg 125: lower_bounds (126 -> 127) */
    floe_bound_map upper_bounds;        /* iceberg 128: upper_bounds (129 -> 130) */
    bool has_key_metadata;
    const uint8_t *key_metadata;        /* iceberg 131: key_metadata */
    size_t key_metadata_len;
    bool has_split_offsets;
    const int64_t *split_offsets;       /* iceberg 132: split_offsets (element 133) */
    size_t nsplit_offsets;
    bool has_equality_ids;
    const int32_t *equality_ids;        /* iceberg 135: equality_ids (element 136) */
    size_t nequality_ids;
    bool has_sort_order_id;
    int32_t sort_order_id;              /* iceberg 140: sort_order_id */
    bool has_first_row_id;
    int64_t first_row_id;               /* iceberg 142: first_row_id (v3; a v3 writer
                                           leaves it null on ADDED entries) */
    const char *referenced_data_file;   /* iceberg 143: referenced_data_file, or NULL */
    bool has_content_offset;
    int64_t content_offset;             /* iceberg 144: content_offset (v3) */
    bool has_content_size;
    int64_t content_size_in_bytes;      /* iceberg 145: content_size_in_bytes (v3) */
} floe_data_file;

/* A delete file entry that is a deletion vector (v3: a blob in a Puffin file) rather than
 * a position delete file. */
static inline bool floe_data_file_is_dv(const floe_data_file *f) {
    return f->content == FLOE_CONTENT_POSITION_DELETES &&
           ((f->file_format && !strcasecmp(f->file_format, "puffin")) || f->has_content_offset);
}

typedef struct floe_manifest_entry {
    floe_entry_status status;           /* iceberg 0: status */
    bool has_snapshot_id;
    int64_t snapshot_id;                /* iceberg 1: snapshot_id */
    bool has_sequence_number;
    int64_t sequence_number;            /* iceberg 3: sequence_number (data sequence) */
    bool has_file_sequence_number;
    int64_t file_sequence_number;       /* iceberg 4: file_sequence_number */
    floe_data_file file;                /* iceberg 2: data_file */
} floe_manifest_entry;

typedef struct floe_field_summary {
    bool contains_null;                 /* iceberg 509: contains_null */
    bool has_contains_nan;
    bool contains_nan;                  /* iceberg 518: contains_nan */
    bool has_lower;
    const uint8_t *lower_bound;         /* iceberg 510: lower_bound (Appendix D) */
    size_t lower_len;
    bool has_upper;
    const uint8_t *upper_bound;         /* iceberg 511: upper_bound */
    size_t upper_len;
} floe_field_summary;

typedef struct floe_manifest_file {
    const char *manifest_path;          /* iceberg 500: manifest_path */
    int64_t manifest_length;            /* iceberg 501: manifest_length */
    int32_t partition_spec_id;          /* iceberg 502: partition_spec_id */
    floe_manifest_content content;      /* iceberg 517: content (v1: data) */
    int64_t sequence_number;            /* iceberg 515: sequence_number (v1: 0; a new
                                           manifest: FLOE_SEQ_UNASSIGNED) */
    int64_t min_sequence_number;        /* iceberg 516: min_sequence_number (likewise) */
    bool has_added_snapshot_id;
    int64_t added_snapshot_id;          /* iceberg 503: added_snapshot_id */
    /* iceberg 504, 505, 506, 512, 513, 514. -1 = null (v1 lists may omit them; the spec
     * says to assume non-zero then). */
    int64_t added_files_count;
    int64_t existing_files_count;
    int64_t deleted_files_count;
    int64_t added_rows_count;
    int64_t existing_rows_count;
    int64_t deleted_rows_count;
    bool has_partitions;
    const floe_field_summary *partitions; /* iceberg 507: partitions (element 508) */
    size_t npartitions;
    bool has_key_metadata;
    const uint8_t *key_metadata;        /* iceberg 519: key_metadata */
    size_t key_metadata_len;
    bool has_first_row_id;
    int64_t first_row_id;               /* iceberg 520: first_row_id (v3; see
                                           floe_manifest_list_assign_row_ids) */
} floe_manifest_file;

/* Deep copy of f (strings, arrays) into arena. FLOE_ENOMEM. */
int floe_manifest_file_copy(const floe_manifest_file *f, floe_arena *arena,
                            floe_manifest_file *out, floe_error *err) FLOE_NODISCARD;
/* Deep copy of a data file (partition values, maps, strings) into arena. */
int floe_data_file_copy(const floe_data_file *f, floe_arena *arena, floe_data_file *out,
                        floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * File names other writers use, under a table's metadata folder:
 *   manifests       <metadata>/<commit-uuid>-m<N>.avro
 *   manifest lists  <metadata>/snap-<snapshot-id>-<attempt>-<commit-uuid>.avro
 * commit_uuid NULL = a fresh v4 uuid. Caller frees the result; NULL on OOM.
 * ------------------------------------------------------------------------------------- */
char *floe_manifest_path_new(const char *metadata_dir, const char *commit_uuid, int n);
char *floe_manifest_list_path_new(const char *metadata_dir, int64_t snapshot_id, int attempt,
                                  const char *commit_uuid);

/* ---------------------------------------------------------------------------------------
 * Avro codec from table properties: write.avro.compression-codec (gzip (default) = Avro
 * deflate, zstd, snappy, uncompressed / none) and write.avro.compression-level (0 = the
 * codec's default). FLOE_EINVALID names the property for values floe cannot write.
 * props may be NULL when nprops is 0.
 * ------------------------------------------------------------------------------------- */
#define FLOE_PROP_AVRO_CODEC "write.avro.compression-codec"
#define FLOE_PROP_AVRO_LEVEL "write.avro.compression-level"
int floe_manifest_codec_from_props(const floe_kv *props, size_t nprops, floe_codec *codec,
                                   int *level, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Metrics: table properties -> per-column metrics modes, and Parquet file metrics ->
 * Iceberg data file metrics.
 *
 *   write.metadata.metrics.default                 none | counts | truncate(N) | full;
 *                                                  default truncate(16)
 *   write.metadata.metrics.column.<full name>      the same, for one column ("a.b",
 *                                                  "tags.element", "m.key")
 *   write.metadata.metrics.max-inferred-column-defaults   100: when the default is not
 *       set explicitly and the schema has more top-level columns than this, only the
 *       first N top-level columns (with everything nested in them) get truncate(16); the
 *       others get none.
 * Columns of the sort order (order-preserving transforms) get at least truncate(16).
 * Invalid modes are ignored with a warning (the reference does the same).
 * ------------------------------------------------------------------------------------- */
#define FLOE_PROP_METRICS_DEFAULT "write.metadata.metrics.default"
#define FLOE_PROP_METRICS_COLUMN_PREFIX "write.metadata.metrics.column."
#define FLOE_PROP_METRICS_MAX_INFERRED "write.metadata.metrics.max-inferred-column-defaults"

typedef enum floe_metrics_kind {
    FLOE_METRICS_NONE = 0,
    FLOE_METRICS_COUNTS,
    FLOE_METRICS_TRUNCATE,
    FLOE_METRICS_FULL,
} floe_metrics_kind;

typedef struct floe_metrics_mode {
    floe_metrics_kind kind;
    int32_t length; /* TRUNCATE: characters (strings) or bytes (binary, fixed) */
} floe_metrics_mode;

/* "none", "counts", "full", "truncate(16)" (case-insensitive). FLOE_EINVALID otherwise. */
int floe_metrics_mode_parse(const char *s, floe_metrics_mode *out, floe_error *err) FLOE_NODISCARD;

typedef struct floe_metrics_config floe_metrics_config;

/* schema: the schema the data files are written with (borrowed only during the call).
 * order may be NULL. */
int floe_metrics_config_new(const floe_kv *props, size_t nprops, const floe_schema *schema,
                            const floe_sort_order *order, floe_metrics_config **out,
                            floe_error *err) FLOE_NODISCARD;
/* The mode of the column with this field id (the default for unknown ids). */
floe_metrics_mode floe_metrics_config_mode(const floe_metrics_config *c, int32_t field_id);
void floe_metrics_config_free(floe_metrics_config *c);

/* Fill record_count, file_size_in_bytes, the metric maps and split_offsets of out from a
 * Parquet writer's file info; set file_format to "parquet". Everything else in out is left
 * as it was (the caller sets path, content, partition). Bounds are converted from Parquet
 * PLAIN bytes to Appendix D (decimals stored as int32/int64/fixed become minimal
 * big-endian two's complement), truncated per the column's mode (strings to N code
 * points, binary and fixed to N bytes; an upper bound that cannot be incremented is
 * dropped); columns inside lists and maps get counts but no bounds (as the reference);
 * float and double columns get NaN counts. cfg NULL = every column truncate(16). Arrays
 * and bytes live in arena. */
int floe_data_file_from_parquet(const floe_pq_file_info *fi, const floe_metrics_config *cfg,
                                floe_arena *arena, floe_data_file *out, floe_error *err)
    FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Manifest writer (format v2)
 *
 *   open -> add / existing / deleted / append* -> close (file written to uri, the
 *   manifest_file record returned) | abort (nothing written).
 *
 * Entries are encoded as they come; the file is kept in memory and written at close.
 * Rules enforced (spec "Manifests", "Sequence Number Inheritance"):
 *   - ADDED entries may leave snapshot id and sequence numbers null (inherited at read
 *     time from the manifest list); a data sequence number may be given explicitly for
 *     data that logically belongs to an older snapshot, but the file sequence number is
 *     always written null for ADDED entries.
 *   - EXISTING and DELETED entries must carry both sequence numbers and a snapshot id.
 *   - every file's content must agree with the manifest's content; equality deletes need
 *     equality ids and nothing else may have them; the partition tuple must match the
 *     spec's partition type.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_manifest_writer floe_manifest_writer;

typedef struct floe_manifest_write_options {
    floe_manifest_content content;
    const floe_schema *schema;       /* the table schema (header "schema", "schema-id") */
    const floe_partition_spec *spec; /* bound spec (header "partition-spec", "-spec-id") */
    bool has_snapshot_id;            /* the snapshot adding this manifest; false = leave
                                        entry snapshot ids null (inherited) */
    int64_t snapshot_id;
    floe_codec codec;                /* FLOE_CODEC_DEFLATE (Iceberg's gzip default),
                                        SNAPPY, ZSTD or UNCOMPRESSED */
    int level;                       /* 0 = codec default */
    const uint8_t *sync;             /* 16 bytes for deterministic output; NULL = random */
    int format_version;              /* 2 (or 0); 1 for a v1 table: the v1 manifest_entry
                                        schema, header format-version "1", no "content";
                                        data only, every entry with its snapshot id. 3: the
                                        v3 schema (first_row_id written for EXISTING and
                                        DELETED data files, null for ADDED ones;
                                        content_offset / content_size_in_bytes) */
} floe_manifest_write_options;

/* Fill o with defaults: data, deflate, no snapshot id. */
void floe_manifest_write_options_init(floe_manifest_write_options *o);

/* uri: where close() writes (copied). o is copied; schema and spec are borrowed and must
 * outlive the writer. FLOE_EINVALID for an unbound spec or a spec with unknown
 * transforms (the spec forbids writing them). */
int floe_manifest_writer_open(floe_io *io, const char *uri, const floe_manifest_write_options *o,
                              floe_manifest_writer **out, floe_error *err) FLOE_NODISCARD;
/* A new file: status ADDED, snapshot id from the options (or null), data sequence number
 * null unless data_sequence_number >= 0, file sequence number null. */
int floe_manifest_writer_add(floe_manifest_writer *w, const floe_data_file *f,
                             int64_t data_sequence_number, floe_error *err) FLOE_NODISCARD;
/* Carry a live entry over as EXISTING (its snapshot id and sequence numbers kept; they
 * must be known, i.e. read with inheritance applied). */
int floe_manifest_writer_existing(floe_manifest_writer *w, const floe_manifest_entry *e,
                                  floe_error *err) FLOE_NODISCARD;
/* Mark a live entry DELETED by this writer's snapshot (sequence numbers kept). */
int floe_manifest_writer_delete(floe_manifest_writer *w, const floe_manifest_entry *e,
                                floe_error *err) FLOE_NODISCARD;
/* Any entry, written as given after the checks above. */
int floe_manifest_writer_append(floe_manifest_writer *w, const floe_manifest_entry *e,
                                floe_error *err) FLOE_NODISCARD;
int64_t floe_manifest_writer_entries(const floe_manifest_writer *w);
/* Write the file and free w (in every case). On success *out describes the manifest for
 * the list: path, length, spec id, content, counts, partition summaries; sequence_number
 * is FLOE_SEQ_UNASSIGNED, min_sequence_number too unless every live entry had an
 * explicit one. Strings and arrays of *out live in arena. out may be NULL. */
int floe_manifest_writer_close(floe_manifest_writer *w, const floe_output_options *oo,
                               floe_arena *arena, floe_manifest_file *out, floe_error *err)
    FLOE_NODISCARD;
void floe_manifest_writer_abort(floe_manifest_writer *w); /* accepts NULL */

/* ---------------------------------------------------------------------------------------
 * Manifest list writer (format v1, v2, v3)
 *
 * Header: snapshot-id, parent-snapshot-id ("null" when none), sequence-number,
 * format-version. Manifests with an unassigned sequence number are the ones this
 * snapshot adds: they get the snapshot's sequence number (and, when their
 * min_sequence_number is unassigned, that too) and its id as added_snapshot_id.
 * A v3 list needs first_row_id on every data manifest and on no delete manifest: call
 * floe_manifest_list_assign_row_ids on the list first.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_manifest_list_write_options {
    int64_t snapshot_id;
    bool has_parent;
    int64_t parent_snapshot_id;
    int64_t sequence_number;         /* the snapshot's sequence number (>= 1) */
    floe_codec codec;                /* default deflate */
    int level;
    const uint8_t *sync;
    int format_version;              /* 2 (or 0); 1: the v1 manifest_file schema (no
                                        content or sequence numbers), no sequence-number
                                        header; 3: the v3 schema (first_row_id) */
} floe_manifest_list_write_options;

/* The defaults listed above. */
void floe_manifest_list_write_options_init(floe_manifest_list_write_options *o);

/* Write the manifest list of files[0..n) to uri. *length_out (may be NULL) receives the
 * file's size. FLOE_EINVALID for a manifest without counts (a v1 list entry: rewrite the
 * manifest first) or with a sequence number above the snapshot's. */
int floe_manifest_list_write(floe_io *io, const char *uri, const floe_manifest_list_write_options *o,
                             const floe_manifest_file *files, size_t n,
                             const floe_output_options *oo, int64_t *length_out,
                             floe_error *err) FLOE_NODISCARD;
/* Row lineage (spec "First Row ID Assignment", format v3): give each data manifest of
 * files[0..n) without a first_row_id one, in list order, starting at first_row_id (the
 * snapshot's first-row-id, i.e. the table's next-row-id) and advancing by the manifest's
 * added_rows_count + existing_rows_count (every file that may inherit an id from it).
 * Manifests that have one keep it; delete manifests are left without. *assigned_rows
 * receives the id space used: the snapshot's added-rows, by which next-row-id advances.
 * FLOE_EINVALID for a data manifest without row counts, FLOE_ELIMIT past 2^63. */
int floe_manifest_list_assign_row_ids(floe_manifest_file *files, size_t n, int64_t first_row_id,
                                      int64_t *assigned_rows, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Manifest list reader (v1, v2, v3). Lists are small: read whole.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_manifest_list {
    floe_manifest_file *files;
    size_t nfiles;
    int format_version;          /* header format-version; else inferred from the schema */
    bool has_snapshot_id;
    int64_t snapshot_id;         /* header snapshot-id */
    bool has_sequence_number;
    int64_t sequence_number;     /* header sequence-number */
    bool by_name;                /* the file had no field ids: read by field names */
    size_t nlisted;              /* records in the list: nfiles, unless options.keep
                                  * dropped some */
    int64_t file_length;         /* the list's bytes */
} floe_manifest_list;

typedef struct floe_manifest_list_read_options {
    /* Files whose Avro schema has no Iceberg field ids (re-encoded by a non-Iceberg
     * writer) are refused unless this is set; then fields are matched by name and a
     * warning is logged. */
    bool allow_missing_field_ids;
    /* The snapshot this list belongs to: its id fills a null added_snapshot_id (v1). */
    bool has_snapshot_id;
    int64_t snapshot_id;
    /* When set, files holds only the records keep(keep_ctx, record) is true for, in list
     * order; the others are decoded and checked all the same (a bad record is still an
     * error, a manifest listed twice still refused) and then dropped, so a caller that
     * prunes the list (a point query: one of 10,000 manifests) does not hold it all.
     * The record passed to keep is valid only during the call. */
    bool (*keep)(void *keep_ctx, const floe_manifest_file *record);
    void *keep_ctx;
} floe_manifest_list_read_options;

/* Everything in *out lives in arena. o may be NULL. FLOE_ECORRUPT (naming the file and
 * the field) for missing required fields or wrong types, FLOE_EUNSUPPORTED for files
 * without field ids (see above). */
int floe_manifest_list_read(floe_io *io, const char *uri, const floe_manifest_list_read_options *o,
                            floe_arena *arena, floe_manifest_list *out, floe_error *err)
    FLOE_NODISCARD;
int floe_manifest_list_read_mem(const void *p, size_t n, const char *name,
                                const floe_manifest_list_read_options *o, floe_arena *arena,
                                floe_manifest_list *out, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Manifest reader (v1, v2, v3), streaming: one Avro block in memory at a time.
 *
 * Inheritance, with the manifest_file from the list (options.manifest):
 *   snapshot_id null -> added_snapshot_id;
 *   sequence numbers null -> the manifest's sequence number when the entry is ADDED or
 *   the manifest's sequence number is 0 (v1 metadata: every sequence number is 0);
 *   first_row_id null on a data file in a manifest with first_row_id -> that plus the
 *   record counts of the earlier data files that had none.
 * Without options.manifest nothing is inherited except v1's zeros.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_manifest_reader floe_manifest_reader;

typedef struct floe_manifest_read_options {
    const floe_manifest_file *manifest; /* list entry (borrowed during open); may be NULL */
    /* The partition spec the manifest was written with, bound to the table schema
     * (borrowed; must outlive the reader). NULL = parse the header's partition-spec and
     * schema, or failing that derive the partition types from the Avro schema. */
    const floe_partition_spec *spec;
    bool allow_missing_field_ids;       /* as for lists */
    /* Deletion vectors (v3 position deletes in Puffin files) are refused with a message
     * naming the file unless this is set: readers that apply them (the scan planner,
     * through floe's Puffin reader) or only need file names (maintenance) set it. With
     * it set, a vector lacking referenced_data_file, content_offset or
     * content_size_in_bytes is FLOE_ECORRUPT. */
    bool allow_deletion_vectors;
    /* A manifest whose size differs from manifest_length is read (several writers get
     * the length wrong) with a warning; set this to refuse it instead. */
    bool strict_length;
    /* The most bytes the manifest's Avro blocks may decompress to together; past it
     * next() fails with FLOE_ELIMIT naming the file and the cap. What a reader's caller
     * keeps per entry (a scan plan keeps every live data file) is a few times this, so
     * it bounds the memory one manifest costs however well it compresses.
     * 0 = the process-wide default (floe_manifest_set_max_bytes). */
    uint64_t max_bytes;
} floe_manifest_read_options;

/* Process-wide default of floe_manifest_read_options.max_bytes: 256 MiB unless set (the
 * floe command sets it from FLOE_MANIFEST_MAX_BYTES). 0 restores the default. */
#define FLOE_MANIFEST_DEFAULT_MAX_BYTES (256ull << 20)
void floe_manifest_set_max_bytes(uint64_t n);

typedef struct floe_manifest_info {
    int format_version;               /* header format-version; else inferred */
    floe_manifest_content content;    /* header content ("data" when absent) */
    bool has_schema_id;
    int32_t schema_id;                /* header schema-id */
    bool has_spec_id;
    int32_t spec_id;                  /* header partition-spec-id */
    const char *schema_json;          /* header schema, or NULL */
    const char *partition_spec_json;  /* header partition-spec, or NULL */
    floe_codec codec;
    int64_t file_length;              /* the manifest's actual size */
    bool length_mismatch;             /* file_length != the list's manifest_length */
    bool by_name;                     /* no field ids: fields matched by name */
    bool header_incomplete;           /* schema or partition-spec missing from the header
                                         (both required since v1): a non-Iceberg writer
                                         re-encoded the file; logged as a warning */
} floe_manifest_info;

/* Process-wide: every manifest reader opened and manifest list read from now on uses the
 * generic Avro value-tree decoder instead of the streaming one (same entries; for
 * benchmarks and bisecting). Off by default; the floe command sets it from FLOE_MANIFEST_DECODER=generic. */
void floe_manifest_set_generic_decoder(bool on);

/* o may be NULL. Errors name the file. */
int floe_manifest_reader_open(floe_io *io, const char *uri, const floe_manifest_read_options *o,
                              floe_manifest_reader **out, floe_error *err) FLOE_NODISCARD;
/* Over a manifest in memory (p borrowed, must outlive the reader). */
int floe_manifest_reader_open_mem(const void *p, size_t n, const char *name,
                                  const floe_manifest_read_options *o,
                                  floe_manifest_reader **out, floe_error *err) FLOE_NODISCARD;
/* Next entry: 1 with *out set (borrowed, valid until the next call or close), 0 at the
 * end, negative on error (FLOE_ECORRUPT naming the entry, FLOE_EUNSUPPORTED for a
 * deletion vector). */
int floe_manifest_reader_next(floe_manifest_reader *r, const floe_manifest_entry **out,
                              floe_error *err) FLOE_NODISCARD;
const floe_manifest_info *floe_manifest_reader_info(const floe_manifest_reader *r);
/* The partition spec the entries' partition tuples follow (borrowed, lives with r); NULL
 * when neither the options nor the header gave a usable one (then the partition types
 * were derived from the Avro schema, one per field of the file's partition struct). */
const floe_partition_spec *floe_manifest_reader_spec(const floe_manifest_reader *r);
int64_t floe_manifest_reader_entries(const floe_manifest_reader *r);
void floe_manifest_reader_close(floe_manifest_reader *r); /* accepts NULL */

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_MANIFEST_H */
