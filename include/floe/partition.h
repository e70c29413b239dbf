/*
 * floe/partition.h - Iceberg single values, partition transforms, partition specs, sort
 * orders and Hive-style partition paths.
 *
 * Spec sections (apache/iceberg format/spec.md): "Partitioning", "Partition Transforms",
 * "Bucket Transform Details", "Truncate Transform Details", "Sorting", "Scan Planning"
 * (inclusive projection), "Appendix B: 32-bit Hash Requirements", "Appendix C: JSON
 * serialization" (Partition Specs, Sort Orders), "Appendix D: Single-value serialization".
 *
 * Values. A floe_value is a typed single value (a partition value, a bound, a literal). It
 * never owns memory: string, binary and fixed values point at bytes owned by the caller
 * (or by the arena / input named in the function that produced them). Transforms that
 * shorten bytes (truncate) return a prefix of their input, so a transformed value lives
 * exactly as long as the value it came from.
 *
 * Units, as the spec stores them: date = days since 1970-01-01 (i32); time = micros since
 * midnight (i64); timestamp[tz] = micros since the epoch (i64); timestamp[tz]_ns = nanos
 * since the epoch (i64); decimal = unscaled 128-bit integer plus the column's scale; uuid =
 * 16 bytes in big-endian (RFC 4122 text) order.
 *
 * Ownership: a parsed partition spec or sort order owns its fields and strings until its
 * _free; values never own memory (above).
 */
#ifndef FLOE_PARTITION_H
#define FLOE_PARTITION_H

#include "floe/common.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* gcc and clang both provide a 128-bit integer; decimals up to precision 38 need it. */
__extension__ typedef __int128 floe_i128;

typedef struct floe_value {
    floe_type_id type;
    bool is_null;
    union {
        bool b;        /* boolean */
        int32_t i32;   /* int, date */
        int64_t i64;   /* long, time, timestamp[tz], timestamp[tz]_ns */
        float f;       /* float */
        double d;      /* double */
        struct {
            const uint8_t *p; /* borrowed */
            size_t n;
        } bytes;       /* string (UTF-8), binary, fixed */
        struct {
            floe_i128 unscaled;
            int32_t scale;
            int32_t precision; /* 0 when unknown */
        } dec;         /* decimal(P,S) */
        uint8_t uuid[16];
    } v;
} floe_value;

/* Constructors (no allocation; byte values borrow p). */
floe_value floe_value_null(floe_type_id type);
floe_value floe_value_bool(bool b);
floe_value floe_value_int(int32_t v);
floe_value floe_value_long(int64_t v);
floe_value floe_value_float(float v);
floe_value floe_value_double(double v);
floe_value floe_value_date(int32_t days);
/* type: TIME, TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS or TIMESTAMPTZ_NS. */
floe_value floe_value_i64(floe_type_id type, int64_t v);
floe_value floe_value_string(const char *s, size_t n);
floe_value floe_value_binary(const void *p, size_t n);
floe_value floe_value_fixed(const void *p, size_t n);
floe_value floe_value_decimal(floe_i128 unscaled, int32_t precision, int32_t scale);
floe_value floe_value_uuid(const uint8_t bytes[16]);

/* Total order on two non-null values of the same type: negative, 0, positive. Floats and
 * doubles follow the spec's "Sorting" order (-NaN < -inf < -x < -0 < 0 < x < inf < NaN);
 * strings compare by code point (= UTF-8 bytes), binary/fixed/uuid as unsigned bytes;
 * decimals of different scales compare by value. Nulls sort first. */
int floe_value_compare(const floe_value *a, const floe_value *b);
bool floe_value_equal(const floe_value *a, const floe_value *b);

/* ---------------------------------------------------------------------------------------
 * Hashing (Appendix B)
 * ------------------------------------------------------------------------------------- */
/* Murmur3 x86 32-bit of p[0..n) with the given seed (Iceberg uses seed 0). */
uint32_t floe_murmur3_32(const void *p, size_t n, uint32_t seed);
/* The Appendix B hash of a non-null value, for every type the spec lists (including
 * boolean/float/double from its second table). FLOE_EINVALID for null or nested types. */
int floe_value_hash(const floe_value *v, int32_t *out, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Transforms
 * ------------------------------------------------------------------------------------- */
typedef enum floe_transform_kind {
    FLOE_XF_IDENTITY = 0,
    FLOE_XF_BUCKET,   /* bucket[N] */
    FLOE_XF_TRUNCATE, /* truncate[W] */
    FLOE_XF_YEAR,
    FLOE_XF_MONTH,
    FLOE_XF_DAY,
    FLOE_XF_HOUR,
    FLOE_XF_VOID,
    FLOE_XF_UNKNOWN,  /* kept for reading only: never applied, never used to write */
} floe_transform_kind;

typedef struct floe_transform {
    floe_transform_kind kind;
    int32_t param; /* N for bucket, W for truncate, else 0 */
} floe_transform;

/* Parse the spec's JSON form ("identity", "bucket[16]", "truncate[4]", "day", ...; names
 * case-insensitive as in the reference implementation). Unrecognized names yield
 * FLOE_XF_UNKNOWN (v3 readers must tolerate them). A bucket/truncate parameter that is not
 * a positive 32-bit integer is FLOE_EINVALID. */
int floe_transform_parse(const char *s, floe_transform *out, floe_error *err) FLOE_NODISCARD;
/* The JSON form into buf ("bucket[16]"); unknown transforms print "unknown". */
const char *floe_transform_name(floe_transform t, char *buf, size_t n);
/* Whether the transform accepts a source of this type (spec table "Partition Transforms"). */
bool floe_transform_accepts(floe_transform t, floe_type_id source);
/* Result type for a source type: bucket/year/month/hour -> int, day -> date, identity /
 * truncate / void -> the source type. Unknown -> string (as the reference does). */
floe_type_id floe_transform_result_type(floe_transform t, floe_type_id source);

/* Apply t to v (null in -> null out). Byte results borrow v's bytes. FLOE_EINVALID when t
 * does not accept v's type; FLOE_EUNSUPPORTED for unknown transforms. */
int floe_transform_apply(floe_transform t, const floe_value *v, floe_value *out,
                         floe_error *err) FLOE_NODISCARD;

/* The partition value as Iceberg Java's Transform.toHumanString renders it (for paths):
 * null -> "null"; year "2026"; month "2026-10"; day "2026-10-06"; hour "2026-10-06-12";
 * identity/truncate by value type: date ISO, time as java LocalTime, timestamp ISO local
 * date-time, timestamptz with "+00:00", binary/fixed base64, uuid lowercase, decimal as
 * java BigDecimal.toString, floats as java Float/Double.toString. Appends to out. */
int floe_transform_human_string(floe_transform t, const floe_value *partition_value,
                                floe_buf *out, floe_error *err) FLOE_NODISCARD;

/* Predicates, for inclusive projection (spec "Scan Planning"). */
typedef enum floe_pred_op {
    FLOE_PRED_IS_NULL = 0,
    FLOE_PRED_NOT_NULL,
    FLOE_PRED_LT,
    FLOE_PRED_LE,
    FLOE_PRED_GT,
    FLOE_PRED_GE,
    FLOE_PRED_EQ,
    FLOE_PRED_NE,
    FLOE_PRED_STARTS_WITH, /* strings only */
} floe_pred_op;

/* Evaluate `v op lit` on a value (null v: only IS_NULL holds; NOT_NULL holds for any
 * non-null v). lit is ignored for IS_NULL / NOT_NULL. */
bool floe_pred_eval(floe_pred_op op, const floe_value *v, const floe_value *lit);

typedef struct floe_projection {
    bool always_true;  /* no partition predicate: every partition may hold matching rows */
    floe_pred_op op;   /* else: the partition value must satisfy `op value` */
    floe_value value;  /* may borrow bytes from the literal */
    bool or_above;     /* ... or be greater than `above` (truncate of int / long: values
                          within W of the type's minimum wrap around to the top, as in
                          the reference, so x < v also holds where t(x) is near the max) */
    floe_value above;
    int32_t wrap_w;    /* with or_above on a long: the truncate width W; an int partition
                          value above INT32_MAX - W also holds (a file written before the
                          column was promoted from int wrapped in 32 bits) */
} floe_projection;

/* Inclusive projection of `source op lit` through t: whenever the source predicate holds
 * for a row value x, the projection holds for apply(t, x). Identity passes predicates
 * through; bucket projects only EQ; truncate and year/month/day/hour project ranges with
 * the boundary adjustments of the reference (x < v -> p <= t(v - 1), x > v -> p >= t(v + 1))
 * and EQ; NE projects only through identity; void and unknown give always_true.
 * floe_projection_holds tests a partition value against it. */
int floe_transform_project(floe_transform t, floe_pred_op op, const floe_value *lit,
                           floe_projection *out, floe_error *err) FLOE_NODISCARD;
/* Does partition value v satisfy the projection (always_true: yes)? */
bool floe_projection_holds(const floe_projection *p, const floe_value *v);

/* The calendar helpers the transforms use (floe_days_from_civil, floe_civil_from_days)
 * are declared in floe/common.h. */

/* ---------------------------------------------------------------------------------------
 * Single-value serialization (Appendix D)
 * ------------------------------------------------------------------------------------- */
/* Binary form of a non-null value, appended to out. Decimals use the minimum big-endian
 * two's complement bytes of the unscaled value. FLOE_EINVALID for null or nested. */
int floe_value_to_binary(const floe_value *v, floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* Decode p[0..n) as a value of `type` (its type, precision, scale and length are used).
 * Byte values borrow p. Lengths that do not fit the type are FLOE_ECORRUPT. */
int floe_value_from_binary(const floe_field *type, const uint8_t *p, size_t n,
                           floe_value *out, floe_error *err) FLOE_NODISCARD;

/* JSON single-value form of a primitive value (null -> "null") as JSON text appended to
 * out: numbers for int/long/float/double (NaN/inf are FLOE_EINVALID: JSON has none),
 * strings for decimal ("14.20"; negative scales "2E+20"), date ("2017-11-16"), time
 * ("22:31:08.123456"), timestamp ("2017-11-16T22:31:08.123456"), timestamptz (with
 * "+00:00"), _ns variants with 9 fraction digits, uuid (lowercase), fixed/binary (hex). */
int floe_value_to_json(const floe_value *v, floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* Parse JSON text (one value) of `type`. Decoded bytes (strings, hex) live in arena.
 * Decimal strings must carry exactly the column's scale; timestamptz must end in +00:00
 * (or Z). Bad input is FLOE_EINVALID. */
int floe_value_from_json(const floe_field *type, const char *json, size_t n,
                         floe_arena *arena, floe_value *out, floe_error *err) FLOE_NODISCARD;

/* ---------------------------------------------------------------------------------------
 * Partition specs
 * ------------------------------------------------------------------------------------- */
#define FLOE_PARTITION_FIRST_FIELD_ID 1000
#define FLOE_PARTITION_MAX_FIELDS 1024 /* cap on fields read from hostile JSON / text */

typedef struct floe_partition_field {
    int32_t source_id;       /* iceberg: source-id */
    const int32_t *source_ids; /* iceberg v3: source-ids; NULL unless read with >1 id */
    size_t nsource_ids;
    int32_t field_id;        /* iceberg: field-id (partition tuple field id) */
    const char *name;        /* iceberg: name */
    floe_transform transform;
    const char *transform_text; /* iceberg: transform, as read (kept for unknown ones) */

    /* Filled by floe_partition_spec_bind(): */
    const floe_field *source; /* borrowed from the bound schema */
    const char *source_name;  /* full dotted column name ("device.os"), spec arena */
} floe_partition_field;

typedef struct floe_partition_spec {
    int32_t spec_id;                 /* iceberg: spec-id */
    floe_partition_field *fields;
    size_t nfields;
    int32_t last_field_id;           /* highest field-id in the spec (999 when empty) */
    bool bound;                      /* floe_partition_spec_bind() succeeded */
    /* The partition tuple type (manifest data_file field 102 "partition"): a STRUCT
     * whose children are the result types, ids = partition field ids, all optional.
     * Valid once bound. */
    floe_field partition_type;
    floe_arena arena;                /* owns everything above */
    floe_schema *bound_schema;       /* the schema fields[].source point into, when the spec
                                        owns it (floe_table_metadata_bind_spec without
                                        schema_out); freed with the spec. Else NULL */
} floe_partition_spec;

/* Parse Iceberg JSON: the object form {"spec-id":0,"fields":[...]} or the bare fields
 * list used in manifest metadata (spec id 0 then). Fields without field-id (v1) get
 * 1000, 1001, ... in order. If schema is non-NULL the spec is also bound to it. */
int floe_partition_spec_parse_json(const char *json, size_t n, const floe_schema *schema,
                                   floe_partition_spec **out, floe_error *err) FLOE_NODISCARD;
/* The reference builder's naming rule: a partition field may take the name of a schema
 * column (exact, case-sensitive) only as the identity (or void) of that same column.
 * FLOE_EINVALID naming the field. _check_names: every field of spec. */
int floe_partition_name_check(const floe_schema *schema, const char *name, int32_t source_id,
                              floe_transform_kind kind, floe_error *err) FLOE_NODISCARD;
int floe_partition_spec_check_names(const floe_partition_spec *spec, const floe_schema *schema,
                                    floe_error *err) FLOE_NODISCARD;
/* Parse the user form against schema: "" (unpartitioned), "event_type, day(ts)",
 * "bucket(16, user_id), truncate(4, name)", "hour(ts)", "identity(x)", "void(x)",
 * optionally "<term> AS <name>". Also accepts bucket(col, N) / truncate(col, W) and the
 * plural years/months/days/hours. Field ids are first_field_id, +1, ... (0 means 1000).
 * Default names follow the reference builder: identity -> the column's full name,
 * "<col>_year", "_month", "_day", "_hour", "_bucket", "_trunc", "_null".
 * Errors (FLOE_EINVALID, FLOE_ENOTFOUND for unknown columns) name the offending term. */
int floe_partition_spec_parse(const floe_schema *schema, const char *text, int32_t spec_id,
                              int32_t first_field_id, floe_partition_spec **out,
                              floe_error *err) FLOE_NODISCARD;
/* Resolve source fields and build partition_type. FLOE_ENOTFOUND if a source id is not in
 * the schema; FLOE_EINVALID if it is nested in a list/map, not primitive, or the
 * transform does not accept its type. Unknown transforms bind with a string result. */
int floe_partition_spec_bind(floe_partition_spec *spec, const floe_schema *schema,
                             floe_error *err) FLOE_NODISCARD;
/* Iceberg JSON object form (caller frees with floe_free); NULL on OOM. */
char *floe_partition_spec_to_json(const floe_partition_spec *spec);
/* The fields list alone (manifest key-value metadata "partition-spec"). */
char *floe_partition_spec_fields_to_json(const floe_partition_spec *spec);
/* Human form "event_type, day(ts)" (names differing from the default get " AS name"). */
char *floe_partition_spec_to_string(const floe_partition_spec *spec);
void floe_partition_spec_free(floe_partition_spec *spec);
/* Same fields, source ids, transforms and names (spec "Partitioning": equivalence). */
bool floe_partition_spec_equivalent(const floe_partition_spec *a,
                                    const floe_partition_spec *b);

/* The source field ids of spec's hour() fields into *ids (floe_malloc'd; NULL when there
 * are none), *n of them: what floe_shred_options.hour_sources takes. 0 or FLOE_ENOMEM. */
int floe_partition_spec_hour_sources(const floe_partition_spec *spec, int32_t **ids,
                                     size_t *n, floe_error *err) FLOE_NODISCARD;

/* A row's partition tuple: source_values[i] is the value of fields[i]'s source column;
 * tuple[i] receives the transformed value (borrowing source bytes). Spec must be bound.
 * FLOE_EUNSUPPORTED for unknown transforms (writers must not use them). */
int floe_partition_spec_tuple(const floe_partition_spec *spec,
                              const floe_value *source_values, floe_value *tuple,
                              floe_error *err) FLOE_NODISCARD;
/* The Hive-style path "event_type=orders/ts_day=2026-10-06" for a tuple, appended to out
 * (no leading or trailing '/'; nothing for an unpartitioned spec). Names and human values
 * are escaped like java.net.URLEncoder (UTF-8; A-Za-z0-9 . - * _ kept; ' ' -> '+'; all
 * else %XX), so no value can contain '/' or leave its folder. Each "name=value" segment is
 * at most 128 bytes (less with more than three fields: the path stays within about 512
 * bytes): a longer one is cut between escapes and ends in '~' and 24 hex digits of its
 * SHA-256, so any value can be a folder on a file system (255 bytes per name) and on S3
 * (1024 bytes per key); the exact value is the manifest's. */
int floe_partition_spec_path(const floe_partition_spec *spec, const floe_value *tuple,
                             floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* The longest path floe_partition_spec_path can give for spec (0 when unpartitioned). */
size_t floe_partition_spec_path_max(const floe_partition_spec *spec);
/* The escaping above for one string; additionally a whole string "." or ".." comes out as
 * "%2E" / "%2E%2E" so an escaped string is never a special path segment on its own. */
int floe_partition_escape(const char *s, size_t n, floe_buf *out);

/* ---------------------------------------------------------------------------------------
 * Sort orders
 * ------------------------------------------------------------------------------------- */
typedef enum floe_sort_direction { FLOE_SORT_ASC = 0, FLOE_SORT_DESC } floe_sort_direction;
typedef enum floe_null_order { FLOE_NULLS_FIRST = 0, FLOE_NULLS_LAST } floe_null_order;

typedef struct floe_sort_field {
    floe_transform transform;   /* iceberg: transform */
    const char *transform_text;
    int32_t source_id;          /* iceberg: source-id */
    const int32_t *source_ids;  /* iceberg v3: source-ids (NULL unless >1 id) */
    size_t nsource_ids;
    floe_sort_direction direction; /* iceberg: direction "asc" / "desc" */
    floe_null_order null_order;    /* iceberg: null-order "nulls-first" / "nulls-last" */
} floe_sort_field;

typedef struct floe_sort_order {
    int32_t order_id;           /* iceberg: order-id (0 = unsorted, no fields) */
    floe_sort_field *fields;
    size_t nfields;
    floe_arena arena;
} floe_sort_order;

/* Parse {"order-id":1,"fields":[...]}; schema may be NULL (then no type checks). */
int floe_sort_order_parse_json(const char *json, size_t n, const floe_schema *schema,
                               floe_sort_order **out, floe_error *err) FLOE_NODISCARD;
/* Parse "ts DESC NULLS LAST, user_id, bucket(16, id) ASC" against schema. Null order
 * defaults as in Iceberg/Spark: ASC -> NULLS FIRST, DESC -> NULLS LAST. An empty string
 * gives the unsorted order (id 0); otherwise the order gets order_id (0 or less: 1). */
int floe_sort_order_parse(const floe_schema *schema, const char *text, int32_t order_id,
                          floe_sort_order **out, floe_error *err) FLOE_NODISCARD;
char *floe_sort_order_to_json(const floe_sort_order *order);
/* "ts DESC NULLS LAST, user_id ASC NULLS FIRST" (column names from schema; ids if NULL). */
char *floe_sort_order_to_string(const floe_sort_order *order, const floe_schema *schema);
void floe_sort_order_free(floe_sort_order *order);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_PARTITION_H */
