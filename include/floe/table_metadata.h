/*
 * floe/table_metadata.h - Iceberg table metadata: parse, typed view, write, builders.
 *
 * Implements format/spec.md "Table Metadata" (fields for v1, v2 and v3), "Snapshots",
 * "Snapshot References", "Appendix C: JSON serialization" and "Appendix E" (reading v1 as
 * v2). The parsed JSON document is the source of truth: the typed fields below are a view
 * of it, and everything floe does not interpret (statistics, partition-statistics, unknown
 * properties, v3 additions, writer-specific keys) is kept and written back unchanged.
 *
 * Reading accepts format versions 1, 2 and 3 and metadata files compressed with gzip
 * (detected by the magic bytes, whatever the name). Writing keeps the table's format:
 * v1 stays v1 until upgraded (spec: "All version 1 data and metadata files are valid after
 * upgrading a table to version 2"), v2 stays v2, v3 stays v3 with row lineage maintained
 * (next-row-id; first-row-id and added-rows on each snapshot); an encrypted v3 table
 * ("encryption-keys") is refused.
 *
 * Snapshot ids are Iceberg longs. Some writers put ids in [2^63, 2^64) into the JSON (an
 * unsigned reading of the 64 bits); they are read as the same 64 bits in two's complement,
 * which is also what a 64-bit Avro long in the manifests holds.
 *
 * Ownership: a floe_table_metadata owns every string and array reachable from it; they are
 * valid until floe_table_metadata_free(). Metadata objects are immutable once returned;
 * changes go through a floe_metadata_builder that produces a new object.
 */
#ifndef FLOE_TABLE_METADATA_H
#define FLOE_TABLE_METADATA_H

#include "floe/common.h"
#include "floe/io.h"
#include "floe/partition.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Hard caps on what a metadata document may hold (hostile input). */
#define FLOE_METADATA_MAX_BYTES (256u << 20) /* 256 MiB, after gunzip */

/* Table properties floe reads, with the defaults Iceberg documents (configuration.md). */
#define FLOE_PROP_COMMIT_NUM_RETRIES "commit.retry.num-retries"             /* 4 */
#define FLOE_PROP_COMMIT_MIN_WAIT_MS "commit.retry.min-wait-ms"             /* 100 */
#define FLOE_PROP_COMMIT_MAX_WAIT_MS "commit.retry.max-wait-ms"             /* 60000 */
#define FLOE_PROP_COMMIT_TOTAL_TIMEOUT_MS "commit.retry.total-timeout-ms"   /* 1800000 */
#define FLOE_PROP_METADATA_COMPRESSION "write.metadata.compression-codec"   /* none|gzip */
#define FLOE_PROP_VARIANT_SHREDDING "variant.shredding" /* writer: PATH:TYPE,... (README) */
#define FLOE_PROP_METADATA_DELETE_AFTER_COMMIT "write.metadata.delete-after-commit.enabled"
#define FLOE_PROP_METADATA_PREVIOUS_MAX "write.metadata.previous-versions-max" /* 100 */
#define FLOE_PROP_MAX_SNAPSHOT_AGE_MS "history.expire.max-snapshot-age-ms"  /* 432000000 */
#define FLOE_PROP_MIN_SNAPSHOTS_TO_KEEP "history.expire.min-snapshots-to-keep" /* 1 */
#define FLOE_PROP_MAX_REF_AGE_MS "history.expire.max-ref-age-ms"            /* INT64_MAX */
#define FLOE_PROP_GC_ENABLED "gc.enabled"                                   /* true */

typedef struct floe_kv {
    const char *key;
    const char *value;
} floe_kv;

/* A schema, partition spec or sort order, kept as its JSON text (compact) so callers can
 * hand it to floe_schema_parse() or the partition module's parser. */
typedef struct floe_metadata_schema {
    int32_t schema_id; /* "schema-id" (v1 "schema" without one: 0) */
    const char *json;
} floe_metadata_schema;

typedef struct floe_metadata_spec {
    int32_t spec_id;   /* "spec-id" (v1 bare "partition-spec" list: 0) */
    const char *json;  /* always an object {"spec-id":N,"fields":[...]} */
} floe_metadata_spec;

typedef struct floe_metadata_sort_order {
    int32_t order_id;  /* "order-id" */
    const char *json;
} floe_metadata_sort_order;

typedef struct floe_snapshot {
    int64_t snapshot_id;        /* snapshot-id */
    bool has_parent;
    int64_t parent_snapshot_id; /* parent-snapshot-id (valid when has_parent) */
    int64_t sequence_number;    /* sequence-number; 0 when absent (v1, spec Appendix E) */
    int64_t timestamp_ms;       /* timestamp-ms */
    const char *manifest_list;  /* manifest-list; NULL for v1 snapshots with "manifests" */
    const char **manifests;     /* v1 "manifests" list (n_manifests entries) */
    size_t n_manifests;
    const char *operation;      /* summary "operation"; NULL when absent (v1) */
    floe_kv *summary;           /* every summary entry, operation included */
    size_t n_summary;
    bool has_schema_id;
    int32_t schema_id;          /* schema-id */
} floe_snapshot;

typedef struct floe_snapshot_log_entry {
    int64_t timestamp_ms;
    int64_t snapshot_id;
} floe_snapshot_log_entry;

typedef struct floe_metadata_log_entry {
    int64_t timestamp_ms;
    const char *metadata_file;
} floe_metadata_log_entry;

typedef struct floe_snapshot_ref {
    const char *name;
    int64_t snapshot_id;
    bool is_tag;                   /* type "tag"; else "branch" */
    int32_t min_snapshots_to_keep; /* -1 = unset (table default) */
    int64_t max_snapshot_age_ms;   /* -1 = unset */
    int64_t max_ref_age_ms;        /* -1 = unset */
} floe_snapshot_ref;

typedef struct floe_table_metadata_doc floe_table_metadata_doc; /* private: the JSON */

typedef struct floe_table_metadata {
    int format_version;            /* format-version: 1, 2 or 3 */
    const char *table_uuid;        /* table-uuid; NULL only in v1 documents without one */
    const char *location;          /* location */
    int64_t last_sequence_number;  /* last-sequence-number (0 for v1) */
    int64_t last_updated_ms;       /* last-updated-ms */
    int32_t last_column_id;        /* last-column-id */
    int32_t current_schema_id;     /* current-schema-id (v1: the "schema"'s id) */
    floe_metadata_schema *schemas; /* schemas (v1: from "schema" when "schemas" absent) */
    size_t n_schemas;
    int32_t default_spec_id;       /* default-spec-id */
    floe_metadata_spec *specs;     /* partition-specs (v1: from "partition-spec") */
    size_t n_specs;
    int32_t last_partition_id;     /* last-partition-id (v1 default: highest field id) */
    int32_t default_sort_order_id; /* default-sort-order-id (0 = unsorted when absent) */
    floe_metadata_sort_order *sort_orders;
    size_t n_sort_orders;
    floe_kv *properties;           /* properties, in document order */
    size_t n_properties;
    int64_t current_snapshot_id;   /* current-snapshot-id; -1 = none (-1, null, absent) */
    floe_snapshot *snapshots;
    size_t n_snapshots;
    floe_snapshot_log_entry *snapshot_log;
    size_t n_snapshot_log;
    floe_metadata_log_entry *metadata_log;
    size_t n_metadata_log;
    floe_snapshot_ref *refs;       /* refs; v1/absent: a "main" branch implied by
                                    * current-snapshot-id is added here */
    size_t n_refs;

    floe_arena arena;              /* owns the view above */
    floe_table_metadata_doc *doc;  /* owns the JSON document */
} floe_table_metadata;

/* Parse a metadata document (plain or gzip-compressed JSON). `name` names the file in
 * error messages. FLOE_ECORRUPT for malformed JSON or missing/mistyped required fields,
 * FLOE_EUNSUPPORTED for format versions above 3, FLOE_ELIMIT past the size cap. */
int floe_table_metadata_parse(const void *p, size_t n, const char *name,
                              floe_table_metadata **out, floe_error *err) FLOE_NODISCARD;
/* Read and parse the metadata file at uri. */
int floe_table_metadata_read(floe_io *io, const char *uri, floe_table_metadata **out, floe_error *err)
    FLOE_NODISCARD;
void floe_table_metadata_free(floe_table_metadata *m);
/* Deep copy. */
int floe_table_metadata_clone(const floe_table_metadata *m, floe_table_metadata **out,
                              floe_error *err) FLOE_NODISCARD;

/* The length of floe_table_metadata_to_json(m, false) without making it, counted up to
 * limit: a longer document answers limit + 1 (SIZE_MAX when jansson fails) and is not
 * serialized further. */
size_t floe_table_metadata_json_size(const floe_table_metadata *m, size_t limit);
/* Serialize the document (with everything floe did not interpret). Caller frees *out
 * with floe_free. */
int floe_table_metadata_to_json(const floe_table_metadata *m, bool pretty, char **out,
                                size_t *len, floe_error *err) FLOE_NODISCARD;
/* Serialize and write to uri, gzip-compressed when `gzip`. With no_overwrite the write
 * is an atomic create-if-absent (FLOE_EEXISTS when the file exists). */
int floe_table_metadata_write(floe_io *io, const floe_table_metadata *m, const char *uri,
                              bool gzip, bool no_overwrite, floe_error *err) FLOE_NODISCARD;
/* Whether the table wants gzip-compressed metadata (write.metadata.compression-codec). */
bool floe_table_metadata_wants_gzip(const floe_table_metadata *m);

/* Whether floe can write a new version of this table. FLOE_EUNSUPPORTED with a message
 * naming the field when it cannot (format v3 "encryption-keys", a format version past 3,
 * a v1 snapshot without a manifest list). */
int floe_table_metadata_check_writable(const floe_table_metadata *m, floe_error *err)
    FLOE_NODISCARD;

/* Lookups; NULL when absent. Pointers are borrowed from m. */
const floe_snapshot *floe_table_metadata_snapshot(const floe_table_metadata *m, int64_t id);
const floe_snapshot *floe_table_metadata_current_snapshot(const floe_table_metadata *m);
const floe_metadata_schema *floe_table_metadata_schema(const floe_table_metadata *m,
                                                       int32_t schema_id);
const floe_metadata_schema *floe_table_metadata_current_schema(const floe_table_metadata *m);
const floe_metadata_spec *floe_table_metadata_spec(const floe_table_metadata *m,
                                                   int32_t spec_id);
const floe_metadata_spec *floe_table_metadata_default_spec(const floe_table_metadata *m);
const floe_snapshot_ref *floe_table_metadata_ref(const floe_table_metadata *m,
                                                 const char *name);
const char *floe_table_metadata_property(const floe_table_metadata *m, const char *key);
/* Partition spec spec_id bound to the schema its source columns resolve in: the current
 * schema, or, when one of them has since been dropped, the newest older schema that has
 * them all (the one files of that spec were written under). *spec_out and, when
 * schema_out is not NULL, *schema_out (that schema, which must outlive the spec) are the
 * caller's to free; without schema_out the spec owns that schema.
 * FLOE_ENOTFOUND when the table has no such spec; the binding error of the current schema
 * when no schema binds it. */
int floe_table_metadata_bind_spec(const floe_table_metadata *m, int32_t spec_id,
                                  floe_schema **schema_out, floe_partition_spec **spec_out,
                                  floe_error *err) FLOE_NODISCARD;
/* Integer / boolean property with a default when absent or not a number. */
int64_t floe_table_metadata_property_int(const floe_table_metadata *m, const char *key,
                                         int64_t dflt);
bool floe_table_metadata_property_bool(const floe_table_metadata *m, const char *key,
                                       bool dflt);
/* Calls fn for each statistics file (partition false) and partition statistics file
 * (partition true) m records, with its snapshot id and statistics-path as recorded
 * (entries without an integer snapshot-id or a string path are skipped). A nonzero return
 * of fn stops the walk and is returned. */
typedef int (*floe_statistics_fn)(void *ctx, int64_t snapshot_id, const char *path,
                                  bool partition, floe_error *err);
int floe_table_metadata_foreach_statistics(const floe_table_metadata *m, floe_statistics_fn fn,
                                           void *ctx, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Builders: each commit makes its changes on a builder created from the base metadata,
 * then finish() produces the new document with last-updated-ms, snapshot-log and
 * metadata-log maintained. A builder copies the base; the base is not modified.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_metadata_builder floe_metadata_builder;

/* Start from existing metadata. Refuses what floe cannot write (as
 * floe_table_metadata_check_writable: an encrypted v3 table). A v3 base stays v3 (its
 * snapshots then carry row lineage, see floe_snapshot_new). A v1 base stays v1
 * (spec "Version 1" writer rules: no sequence numbers, "schema" and "partition-spec"
 * written) unless floe_metadata_builder_upgrade is called. */
int floe_metadata_builder_new(const floe_table_metadata *base, floe_metadata_builder **out,
                              floe_error *err) FLOE_NODISCARD;
/* A new table: fresh table-uuid (v4), schema ids, field ids of the partition spec and the
 * sort order assigned (schema-id 0, spec-id 0, order-id 1 or 0 when unsorted).
 * schema_json is an Iceberg schema object (its field ids are kept; last-column-id is the
 * highest of them). spec_json is {"fields":[{"source-id":..,"transform":..,"name":..}]}
 * or a bare field list or NULL (unpartitioned); sort_json likewise ({"fields":[...]}) or
 * NULL (unsorted). props may be NULL when nprops is 0. */
int floe_metadata_builder_new_table(const char *location, const char *schema_json,
                                    const char *spec_json, const char *sort_json,
                                    const floe_kv *props, size_t nprops,
                                    floe_metadata_builder **out, floe_error *err) FLOE_NODISCARD;
/* A table with nothing in it yet (REST staged creates, built by the client's updates): a
 * fresh table-uuid and the location, no schema, spec or sort order (current and default
 * ids -1), which updates must add and select before finish() accepts the document. */
int floe_metadata_builder_new_empty(const char *location, floe_metadata_builder **out,
                                    floe_error *err) FLOE_NODISCARD;
void floe_metadata_builder_free(floe_metadata_builder *b);

/* The metadata the builder started from (NULL for a new table); borrowed. */
const floe_table_metadata *floe_metadata_builder_base(const floe_metadata_builder *b);
/* Sequence number the next added snapshot receives (last-sequence-number + 1); a v1
 * table records none (its snapshots get 0). */
int64_t floe_metadata_builder_next_sequence_number(const floe_metadata_builder *b);
/* The format version the builder writes: 1 for a v1 base not upgraded, 3 for a v3 one,
 * else 2. Manifests and manifest lists of the commit must be written in it. */
int floe_metadata_builder_format_version(const floe_metadata_builder *b);
/* Format v3: the table's next-row-id, which the next snapshot added must take as its
 * first-row-id (pass it to floe_manifest_list_assign_row_ids); -1 before v3. */
int64_t floe_metadata_builder_next_row_id(const floe_metadata_builder *b);
/* Upgrade the working document to format_version 2 or 3: from v1, spec "Appendix E"
 * (sequence numbers 0 for the v1 snapshots, the deprecated fields dropped); to 3,
 * next-row-id 0 (spec "Row Lineage for Upgraded Tables": the snapshots before keep no
 * row ids). No-op when already there; FLOE_EUNSUPPORTED for a downgrade or past 3. */
int floe_metadata_builder_upgrade(floe_metadata_builder *b, int format_version,
                                  floe_error *err) FLOE_NODISCARD;

int floe_metadata_builder_set_property(floe_metadata_builder *b, const char *key,
                                       const char *value, floe_error *err) FLOE_NODISCARD;
/* Property key as the updates so far leave it (NULL when unset); valid until the next
 * change on b. */
const char *floe_metadata_builder_property(const floe_metadata_builder *b, const char *key);
/* How many properties the updates so far leave and their bytes of keys and values (the
 * property caps, docs/DESIGN.md "Property caps"). */
void floe_metadata_builder_property_sizes(const floe_metadata_builder *b, size_t *count,
                                          size_t *bytes);
/* Removing an absent key is not an error. */
int floe_metadata_builder_remove_property(floe_metadata_builder *b, const char *key,
                                          floe_error *err) FLOE_NODISCARD;
int floe_metadata_builder_set_location(floe_metadata_builder *b, const char *location,
                                       floe_error *err) FLOE_NODISCARD;
/* Add a schema; it gets the next free schema-id (written to *schema_id when non-NULL).
 * last-column-id rises to the highest field id in it. */
int floe_metadata_builder_add_schema(floe_metadata_builder *b, const char *schema_json,
                                     int32_t *schema_id, floe_error *err) FLOE_NODISCARD;
int floe_metadata_builder_set_current_schema(floe_metadata_builder *b, int32_t schema_id,
                                             floe_error *err) FLOE_NODISCARD;
/* Add a partition spec ({"fields":[...]}); fields without "field-id" get fresh ids above
 * last-partition-id. The spec gets the next free spec-id. */
int floe_metadata_builder_add_spec(floe_metadata_builder *b, const char *spec_json,
                                   int32_t *spec_id, floe_error *err) FLOE_NODISCARD;
int floe_metadata_builder_set_default_spec(floe_metadata_builder *b, int32_t spec_id,
                                           floe_error *err) FLOE_NODISCARD;

/* Add a sort order (sort_json {"fields":[...]} or a bare field list; NULL, "" or no
 * fields: the unsorted order 0) and make it the default. An order with the same fields
 * already in sort-orders is reused with its id; a new one gets the next free order-id
 * (at least 1). The chosen id is written to *order_id when non-NULL. */
int floe_metadata_builder_set_default_sort_order(floe_metadata_builder *b, const char *sort_json,
                                                int32_t *order_id, floe_error *err) FLOE_NODISCARD;
/* Add a sort order as floe_metadata_builder_set_default_sort_order does, without making
 * it the default (REST add-sort-order). */
int floe_metadata_builder_add_sort_order(floe_metadata_builder *b, const char *sort_json,
                                         int32_t *order_id, floe_error *err) FLOE_NODISCARD;
/* Make an existing sort order the default; FLOE_EINVALID when there is no such order. */
int floe_metadata_builder_set_default_sort_order_id(floe_metadata_builder *b, int32_t order_id,
                                                    floe_error *err) FLOE_NODISCARD;
/* Set table-uuid (REST assign-uuid); FLOE_EINVALID unless uuid has the 8-4-4-4-12 hex
 * form. */
int floe_metadata_builder_assign_uuid(floe_metadata_builder *b, const char *uuid,
                                      floe_error *err) FLOE_NODISCARD;

/* 0 when schema_json (a whole schema another writer gives, as REST add-schema does) keeps
 * every field id of each of m's schemas at its type or a promotion the spec allows (int to
 * long, float to double, a wider decimal precision, date to timestamp / timestamp_ns when
 * format_version >= 3, unknown to any type; a struct, list or map stays one): the data
 * files written under an older schema stay readable. FLOE_EINVALID naming the field and
 * both types otherwise; m NULL (a table being created): 0. */
int floe_metadata_schema_check_evolution(const floe_table_metadata *m, const char *schema_json,
                                         int format_version, floe_error *err) FLOE_NODISCARD;
/* Schema evolution (format/spec.md "Schema Evolution"): apply c to the base's current
 * schema (floe_schema_update) and make the result the current schema: a schema the
 * table already has gets its id back, a new one the next schema-id, last-column-id
 * advanced past new field ids. Besides floe_schema_update's refusals, FLOE_EINVALID for
 * dropping a source column of the default partition spec or the default sort order and
 * for widening a decimal that an identity or truncate partition field stores. Returns 0
 * with the current schema id in *schema_id (when non-NULL), or 1 when the schema would
 * not change (nothing done). A table with a name mapping (schema.name-mapping.default)
 * gets it carried across the change in the same commit (floe_name_mapping_evolve);
 * FLOE_EINVALID when that property is not a name mapping. */
int floe_metadata_builder_update_schema(floe_metadata_builder *b, const floe_schema_change *c,
                                        int32_t *schema_id, floe_error *err) FLOE_NODISCARD;

/* Partition spec evolution (format/spec.md "Partition Evolution"). */
typedef enum floe_spec_change_kind {
    FLOE_SPEC_ADD_FIELD = 1, /* text: one term, "bucket(16, id)", "day(ts) AS d", "event_type" */
    FLOE_SPEC_DROP_FIELD,    /* text: a partition field's name, or its term ("day(ts)") */
    FLOE_SPEC_REPLACE,       /* text: the whole new spec ("" = unpartitioned) */
} floe_spec_change_kind;

typedef struct floe_spec_change {
    floe_spec_change_kind kind;
    const char *text;
} floe_spec_change;

/* Change the default partition spec into a new one and make it the default. Field ids:
 * kept for the fields that stay; in v2 an equivalent field (same source, transform and
 * name) of any earlier spec gives its id back; others get ids above last-partition-id.
 * v2 removes a dropped field; v1 keeps it with the void transform and adds new fields at
 * the end. A spec equivalent to one the table has gets that spec's id instead of a new
 * one. Refused (FLOE_EINVALID / FLOE_ENOTFOUND, naming the field): a field redundant
 * with another (same column and transform, or two time transforms of one column), a
 * name already used or that is another column's, a transform its column's type does not
 * take, dropping a field the spec does not have. Returns 0 with the default spec id in
 * *spec_id (when non-NULL), or 1 when the spec would not change (nothing done). */
int floe_metadata_builder_update_spec(floe_metadata_builder *b, const floe_spec_change *c,
                                      int32_t *spec_id, floe_error *err) FLOE_NODISCARD;

typedef struct floe_snapshot_new {
    int64_t snapshot_id;       /* 0 = generate one; negative: FLOE_EINVALID */
    const char *operation;     /* "append", "replace", "overwrite", "delete" */
    const char *manifest_list; /* required */
    const floe_kv *summary;    /* extra summary entries (operation is added); may be NULL */
    size_t n_summary;
    int64_t timestamp_ms;      /* 0 = now */
    int32_t schema_id;         /* -1 = current schema */
    const char *branch;        /* NULL = "main"; the branch is moved to the new snapshot */
    /* format v3 row lineage ("Snapshot Row IDs"), required on v3 tables and refused
     * before: first_row_id is floe_metadata_builder_next_row_id of the builder committing
     * it, added_rows what floe_manifest_list_assign_row_ids assigned */
    bool row_lineage;
    int64_t first_row_id;
    int64_t added_rows;
} floe_snapshot_new;

/* Add a snapshot whose parent is the branch head, with sequence number
 * last-sequence-number + 1, and move the branch to it (for main: current-snapshot-id and
 * snapshot-log too); on v3, next-row-id advances by added_rows. Writes the snapshot id and
 * sequence number when non-NULL. FLOE_EINVALID when row lineage is missing on a v3 table
 * or its first_row_id is not the table's next-row-id. */
int floe_metadata_builder_add_snapshot(floe_metadata_builder *b, const floe_snapshot_new *s,
                                       int64_t *snapshot_id, int64_t *sequence_number,
                                       floe_error *err) FLOE_NODISCARD;
/* Add a snapshot written by someone else exactly as given (REST add-snapshot): a JSON
 * object with snapshot-id, timestamp-ms, manifest-list and summary.operation. No ref
 * moves (set the ref afterwards). v2: a missing sequence-number becomes
 * last-sequence-number + 1, one with a parent must be above last-sequence-number, and
 * last-sequence-number rises to it; v1: the sequence number is dropped. FLOE_EEXISTS when
 * the id is taken, FLOE_EINVALID for a malformed snapshot or an id not above 0 (-1 is
 * "no snapshot"; Iceberg Java refuses a table whose main points at it), or a manifest-list
 * that is a file the table holds in another role: another snapshot's manifest list (or
 * v1 manifest), a statistics or partition statistics file, a file of the metadata-log
 * (an expiry of either would delete it from under the other). v3: first-row-id and
 * added-rows are required, first-row-id not below next-row-id, which then moves past the
 * snapshot's ids. */
int floe_metadata_builder_add_snapshot_json(floe_metadata_builder *b, const char *snapshot_json,
                                            floe_error *err) FLOE_NODISCARD;
/* Record a statistics file (spec "Table Statistics"; partition: "Partition Statistics")
 * for its snapshot, replacing the one that snapshot had. stats_json is the file's JSON
 * object as the spec writes it. FLOE_EINVALID when malformed, the snapshot is absent, or
 * its statistics-path is a file the table holds in another role: a snapshot's manifest
 * list (or v1 manifest) or a file of the metadata-log (an expiry deletes a removed
 * snapshot's statistics file). */
int floe_metadata_builder_set_statistics(floe_metadata_builder *b, bool partition,
                                         const char *stats_json, floe_error *err) FLOE_NODISCARD;
/* Forget the statistics file of a snapshot (none: not an error). */
int floe_metadata_builder_remove_statistics(floe_metadata_builder *b, bool partition,
                                            int64_t snapshot_id, floe_error *err) FLOE_NODISCARD;
/* Create or move a branch or tag. For "main" this also sets current-snapshot-id.
 * FLOE_EINVALID for a snapshot id not above 0 or not among the snapshots. */
int floe_metadata_builder_set_ref(floe_metadata_builder *b, const char *name,
                                  int64_t snapshot_id, bool is_tag, floe_error *err) FLOE_NODISCARD;
/* Retention of a ref (spec "Snapshot References"): each field -1 removes the setting (the
 * table property then applies), a positive value sets it. min-snapshots-to-keep and
 * max-snapshot-age-ms apply to branches only, max-ref-age-ms to every ref but main. */
typedef struct floe_ref_retention {
    int32_t min_snapshots_to_keep;
    int64_t max_snapshot_age_ms;
    int64_t max_ref_age_ms;
} floe_ref_retention;
int floe_metadata_builder_set_ref_retention(floe_metadata_builder *b, const char *name,
                                            const floe_ref_retention *r, floe_error *err)
    FLOE_NODISCARD;
/* Remove a branch or tag (none: not an error). Removing main leaves the table without a
 * current snapshot (current-snapshot-id -1; the snapshots and snapshot-log stay) until a
 * set_ref of main, as Iceberg Java's builder does for a replace transaction. */
int floe_metadata_builder_remove_ref(floe_metadata_builder *b, const char *name,
                                     floe_error *err) FLOE_NODISCARD;
/* Remove snapshots (expiry): drops them, their statistics and partition-statistics
 * entries, and snapshot-log history up to the last removed one. Refuses to remove the
 * current snapshot (FLOE_EINVALID) and a snapshot any ref points at (FLOE_ECONFLICT: the
 * refs changed since the caller planned; remove a ref that is meant to go first). Unknown
 * ids are ignored. */
int floe_metadata_builder_remove_snapshots(floe_metadata_builder *b, const int64_t *ids,
                                           size_t n, floe_error *err) FLOE_NODISCARD;

/* Produce the new metadata: last-updated-ms = max(now, base's), metadata-log gets the
 * base file (base_metadata_location, NULL for a new table) and is pruned to
 * write.metadata.previous-versions-max entries. The builder stays usable (finish may be
 * called again, e.g. with another location after a failed write). */
int floe_metadata_builder_finish(floe_metadata_builder *b, const char *base_metadata_location,
                                 floe_table_metadata **out, floe_error *err) FLOE_NODISCARD;

/* Every path the document records, for rewriting them all (a table whose files moved,
 * or whose paths were recorded relative): the location, each snapshot's manifest list,
 * metadata-log entries, statistics and partition-statistics files, and the properties
 * write.data.path, write.metadata.path, write.object-storage.path and
 * write.folder-storage.path. fn sets *out to the new path (allocated; the builder frees
 * it) or leaves it NULL to keep the path; snapshot_id is the snapshot the path belongs to
 * (-1 when none). */
typedef enum floe_metadata_path_kind {
    FLOE_PATH_LOCATION,
    FLOE_PATH_MANIFEST_LIST,
    FLOE_PATH_METADATA_LOG,
    FLOE_PATH_STATISTICS,
    FLOE_PATH_PROPERTY,
} floe_metadata_path_kind;
typedef int (*floe_metadata_path_fn)(void *ctx, floe_metadata_path_kind kind,
                                     int64_t snapshot_id, const char *path, char **out,
                                     floe_error *err);
int floe_metadata_builder_map_paths(floe_metadata_builder *b, floe_metadata_path_fn fn,
                                    void *ctx, floe_error *err) FLOE_NODISCARD;

/* A fresh positive snapshot id (random, as the spec's Appendix F suggests). */
int64_t floe_metadata_new_snapshot_id(void);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
