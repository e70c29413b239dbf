/*
 * scan_internal.h - pieces shared by the scan planner, the scan reader and the file
 * appender: the canonical row-value text form and filter expressions over a table
 * schema, and which data files a position delete file may name. Private to src/iceberg,
 * src/table and src/compact.
 *
 * Canonical text is the form floe's Parquet reader prints (tests/js/lib/canon.mjs):
 * numbers as JSON numbers (floats widened to double, JavaScript digits, "NaN" /
 * "Infinity" as strings), decimals as strings with exactly the column's scale, dates
 * "YYYY-MM-DD", times "HH:MM:SS.ffffff", timestamps "YYYY-MM-DDTHH:MM:SS.ffffff[Z]"
 * (9 digits for _ns), uuid text, binary and fixed as lowercase hex.
 */
#ifndef FLOE_ICEBERG_SCAN_INTERNAL_H
#define FLOE_ICEBERG_SCAN_INTERNAL_H

#include "floe/manifest.h"
#include "floe/partition.h"
#include "common/filter.h"
#include "floe/schema.h"

/* Position delete files and the data files they may name (spec "Position Delete Files":
 * file_path is field 2147483546; "Scan Planning": a position delete file applies to the
 * data files whose path its file_path bounds hold). One rule for the scan planner's
 * pairing, the rewrite planner's counts and the rewrite commit's validation
 * (manifest_metrics.c). */
#define FLOE_POS_DELETE_FILE_PATH_ID 2147483546
/* d's lower and upper bounds of file_path, each NULL when d has none. */
void floe_pos_delete_path_bounds(const floe_data_file *d, const floe_column_bound **lo,
                                 const floe_column_bound **hi);
/* Position delete file d cannot name a row of the data file at path: its
 * referenced_data_file is another file, or its file_path bounds exclude path. A bound is
 * taken as possibly truncated (an upper bound that is a proper prefix of path excludes
 * nothing), so false whenever d might name it. Partition and sequence number are the
 * caller's. */
bool floe_pos_delete_excludes(const floe_data_file *d, const char *path);
/* d is scoped to one data file: referenced_data_file, or equal file_path bounds (Iceberg's
 * ContentFileUtil.referencedDataFile); *path and *len (not NUL-terminated) name it. */
bool floe_pos_delete_scoped(const floe_data_file *d, const char **path, size_t *len);

/* Parsed manifest schemas shared by the manifest readers of one scan plan: the manifests
 * of one writer have the same Avro schema text, parsed and resolved once instead of once
 * per manifest (src/avro/avro_internal.h; not thread-safe). */
typedef struct floe_avro_schema_cache floe_avro_schema_cache;
floe_avro_schema_cache *floe_manifest_schema_cache_new(void);
void floe_manifest_schema_cache_free(floe_avro_schema_cache *c);
/* floe_manifest_reader_open with a schema cache (NULL: none). */
int floe_manifest_reader_open_cached(floe_io *io, const char *uri,
                                     const floe_manifest_read_options *o,
                                     floe_avro_schema_cache *cache, floe_manifest_reader **out,
                                     floe_error *err);
/* floe_manifest_reader_open_mem with a schema cache (NULL: none); p[0..n) must outlive
 * the reader. name: the manifest's uri, as messages name it. */
int floe_manifest_reader_open_mem_cached(const void *p, size_t n, const char *name,
                                         const floe_manifest_read_options *o,
                                         floe_avro_schema_cache *cache,
                                         floe_manifest_reader **out, floe_error *err);

/* Parse canonical text of a primitive value of field f's type. "null" gives a null value.
 * Decoded bytes (strings with escapes, hex) live in arena; others borrow p. Numbers of a
 * narrower type than f (int -> long, float -> double) are accepted. FLOE_EINVALID on text
 * that does not fit the type. */
int floe_sv_from_canonical(const floe_field *f, const char *p, size_t n, floe_arena *arena,
                           floe_value *out, floe_error *err);
/* floe_value_from_json of a parsed JSON value (floe/partition.h). */
struct json_t;
int floe_value_from_jsont(const floe_field *type, const struct json_t *j, floe_arena *arena,
                          floe_value *out, floe_error *err);
/* Canonical text of a value (null -> null), appended to out. */
int floe_sv_to_canonical(const floe_value *v, floe_buf *out);
/* A user literal for a column of type f: like canonical text, but also accepting
 * unquoted words, dates for timestamps ('2026-10-01' = midnight), ' ' for 'T', a zone
 * suffix Z/+00:00 on any timestamp, decimals with fewer fraction digits, numbers for
 * floats. */
int floe_sv_from_literal(const floe_field *f, const char *p, size_t n, floe_arena *arena,
                         floe_value *out, floe_error *err);

/* JSON text as the Parquet reader prints rows and variants (no whitespace; keys escaped by
 * floe_json_append_string): spans of values located without parsing them. */
typedef struct floe_jspan {
    const char *p;
    size_t n;
} floe_jspan;
/* The end of the value starting at s[i]. */
size_t floe_jtext_skip_value(const char *s, size_t n, size_t i);
/* Call fn for each member of the object text s[0..n) (keys: the raw text between the
 * quotes) until it returns nonzero, which is returned. FLOE_ECORRUPT for text that is not
 * an object. */
typedef int (*floe_jtext_kv_fn)(void *ctx, floe_jspan key, floe_jspan value);
int floe_jtext_each_member(const char *s, size_t n, floe_jtext_kv_fn fn, void *ctx);
/* Whether a raw key spells name. */
bool floe_jtext_key_is(floe_jspan key, const char *name);
/* Member name of the object text obj: false when obj is not an object or lacks it. */
bool floe_jtext_member(floe_jspan obj, const char *name, floe_jspan *out);

/* ---------------------------------------------------------------------------------------
 * Filter expressions over a table schema (the --where language, common/filter.h, with
 * columns named by the table's current names and resolved to field ids).
 * ------------------------------------------------------------------------------------- */
typedef enum floe_expr_kind {
    FLOE_EXPR_TRUE = 0,
    FLOE_EXPR_FALSE,
    FLOE_EXPR_AND,
    FLOE_EXPR_OR,
    FLOE_EXPR_NOT,
    FLOE_EXPR_PRED,  /* field op literal (IS NULL / NOT NULL without literal) */
} floe_expr_kind;

typedef struct floe_expr floe_expr;
struct floe_expr {
    floe_expr_kind kind;
    floe_expr *a, *b;          /* AND / OR: both; NOT: a */
    const floe_field *field;   /* PRED: the column (borrowed from the schema) */
    int32_t field_id;
    floe_pred_op op;
    floe_value lit;            /* bytes in the expression arena */
    bool is_nan;               /* x = NaN (literal 'NaN' on a float column) */
    bool or_nan;               /* also true for NaN values: a negated range on a float
                                  column (NOT (x < 5) holds for NaN, where x < 5 is false);
                                  on a variant path, also true for a value of another
                                  type than the literal's */
    /* PRED on a path inside a variant field (field): the object keys below it, and the
     * literal as written (lit is then unused). The row value is the variant's JSON text. */
    bool variant;
    const char *const *vpath;
    size_t nvpath;
    floe_filter_lit_kind vlit_kind; /* common/filter.h: STRING or WORD */
    const char *vlit;
    size_t vlit_n;
    const char *vnorm;         /* the path's normalized JSON form, "$['a']['b']": the key
                                  of the variant's manifest bounds (variant_bounds.h) */
    size_t vnorm_n;
};

/* Parse text (common/filter.h) against schema. Everything lives in arena. Only primitive
 * columns outside lists and maps are accepted. NOT is pushed down to the predicates (a
 * negated range on a float column marked or_nan); the one NOT node left is NOT LIKE's,
 * which rows evaluate and the inclusive checks pass. */
int floe_expr_parse(const floe_schema *schema, const char *text, floe_arena *arena,
                    floe_expr **out, floe_error *err);

/* Three-valued result: 1 true, 0 false, -1 unknown (null involved). get gives a
 * variant field's value as FLOE_TYPE_VARIANT whose bytes are its JSON text. */
typedef int (*floe_expr_value_fn)(void *ctx, int32_t field_id, floe_value *out);
int floe_expr_eval_row(const floe_expr *e, floe_expr_value_fn get, void *ctx);

/* Inclusive checks (false = certainly no matching rows). */
bool floe_expr_file_may_match(const floe_expr *e, const floe_schema *schema,
                              const floe_data_file *f);
/* Partition tuple of a file under spec (bound). */
bool floe_expr_partition_may_match(const floe_expr *e, const floe_partition_spec *spec,
                                   const floe_value *tuple, size_t n);
/* Manifest partition summaries. */
bool floe_expr_manifest_may_match(const floe_expr *e, const floe_partition_spec *spec,
                                  const floe_manifest_file *mf);

#endif
