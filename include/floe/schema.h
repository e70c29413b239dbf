/*
 * floe/schema.h - the Iceberg schema model shared by every module.
 *
 * A schema is a tree of fields with Iceberg field ids (format/spec.md "Schemas and Data
 * Types"). Leaves (primitive fields) map one to one onto Parquet columns, in depth-first
 * order. floe_schema_finish() derives for every field its Parquet definition and
 * repetition levels, using the layout Iceberg requires in Parquet:
 *
 *   optional field            -> def + 1
 *   list  -> <opt|req> group (LIST) { repeated group list { <opt|req> element } }
 *   map   -> <opt|req> group (MAP)  { repeated group key_value { required key; <opt|req> value } }
 *   each repeated group       -> def + 1, rep + 1
 *
 * Ownership: a floe_schema owns all of its fields and strings (one arena); fields are
 * valid until floe_schema_free().
 */
#ifndef FLOE_SCHEMA_H
#define FLOE_SCHEMA_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef enum floe_type_id {
    FLOE_TYPE_BOOLEAN = 1,
    FLOE_TYPE_INT,          /* 32-bit signed */
    FLOE_TYPE_LONG,         /* 64-bit signed */
    FLOE_TYPE_FLOAT,
    FLOE_TYPE_DOUBLE,
    FLOE_TYPE_DECIMAL,      /* decimal(P,S), P <= 38 */
    FLOE_TYPE_DATE,         /* days since 1970-01-01, int32 */
    FLOE_TYPE_TIME,         /* microseconds since midnight, int64 */
    FLOE_TYPE_TIMESTAMP,    /* microseconds since epoch, no zone */
    FLOE_TYPE_TIMESTAMPTZ,  /* microseconds since epoch, UTC */
    FLOE_TYPE_TIMESTAMP_NS, /* v3: nanoseconds */
    FLOE_TYPE_TIMESTAMPTZ_NS,
    FLOE_TYPE_STRING,       /* UTF-8 */
    FLOE_TYPE_UUID,         /* 16 bytes */
    FLOE_TYPE_FIXED,        /* fixed(L) */
    FLOE_TYPE_BINARY,
    FLOE_TYPE_STRUCT,
    FLOE_TYPE_LIST,
    FLOE_TYPE_MAP,
    FLOE_TYPE_VARIANT,      /* v3: any JSON-like value (Parquet VARIANT: floe/variant.h).
                             * floe_schema_finish gives it two children, the required
                             * binary leaves "metadata" and "value", with id -1 (they are
                             * not Iceberg fields: no id, not in to_json) */
    FLOE_TYPE_UNKNOWN,      /* v3: always null, never stored in data files (format/spec.md
                             * "Primitive Types", Appendix A): a field that is neither a
                             * leaf nor nested (leaf -1, no children, no Parquet column) */
} floe_type_id;

/* geometry and geography (format v3) hold WKB: floe gives them type FLOE_TYPE_BINARY, so
 * every path that moves bytes (ingest, scan output, rewrite, metrics counts) treats them
 * as binary, and marks them with geo. What differs is named by geo: the type string, the
 * Parquet GEOMETRY/GEOGRAPHY annotation, no byte-order min/max statistics, manifest bounds
 * (floe/table.h), and no filters or partition transforms on them. */
typedef enum floe_geo_kind {
    FLOE_GEO_NONE = 0,
    FLOE_GEO_GEOMETRY,  /* geometry(C): C defaults to OGC:CRS84 */
    FLOE_GEO_GEOGRAPHY, /* geography(C, A): C OGC:CRS84, A spherical by default */
} floe_geo_kind;

/* Edge-interpolation algorithms of geography, numbered as Parquet's
 * EdgeInterpolationAlgorithm (thrift enum: SPHERICAL = 0 .. KARNEY = 4). */
typedef enum floe_geo_algo {
    FLOE_GEO_ALGO_DEFAULT = -1, /* not given: spherical */
    FLOE_GEO_ALGO_SPHERICAL = 0,
    FLOE_GEO_ALGO_VINCENTY,
    FLOE_GEO_ALGO_THOMAS,
    FLOE_GEO_ALGO_ANDOYER,
    FLOE_GEO_ALGO_KARNEY,
} floe_geo_algo;

/* How a leaf's values are held in memory (and its Parquet physical type). */
typedef enum floe_phys {
    FLOE_PHYS_BOOLEAN = 0, /* parquet BOOLEAN; one byte per value (0/1) in buffers */
    FLOE_PHYS_INT32 = 1,
    FLOE_PHYS_INT64 = 2,
    FLOE_PHYS_INT96 = 3,   /* read only (legacy timestamps) */
    FLOE_PHYS_FLOAT = 4,
    FLOE_PHYS_DOUBLE = 5,
    FLOE_PHYS_BYTE_ARRAY = 6,
    FLOE_PHYS_FIXED = 7,   /* FIXED_LEN_BYTE_ARRAY */
} floe_phys;

typedef struct floe_field floe_field;
struct floe_field {
    int32_t id;            /* Iceberg field id (list element-id, map key-id/value-id) */
    const char *name;      /* "element", "key", "value" for list/map children */
    bool required;
    floe_type_id type;
    int32_t precision;     /* decimal */
    int32_t scale;         /* decimal */
    int32_t length;        /* fixed(L) */
    floe_field *children;  /* struct: its fields; list: [element]; map: [key, value] */
    size_t nchildren;
    const char *doc;                  /* may be NULL */
    const char *initial_default_json; /* JSON text of initial-default, or NULL */
    const char *write_default_json;   /* JSON text of write-default, or NULL */
    floe_geo_kind geo;     /* geometry/geography (type FLOE_TYPE_BINARY), else NONE */
    const char *geo_type;  /* geo: the type string as the schema gave it, written back
                            * byte for byte ("geography(srid:4326, karney)") */
    const char *geo_crs;   /* geo: the CRS parameter's text, NULL when not given */
    floe_geo_algo geo_algo; /* geography: the algorithm given, or DEFAULT */

    /* Derived by floe_schema_finish(). */
    floe_field *parent;    /* NULL for top-level fields */
    int32_t leaf;          /* index among leaves (Parquet column), -1 for nested types */
    int16_t def_level;     /* definition level at which this field's value is present */
    int16_t rep_level;     /* repetition level of this field (0 outside lists/maps) */
    floe_phys phys;        /* leaves: physical type */
    int32_t type_length;   /* leaves with FLOE_PHYS_FIXED: byte width */
};

typedef struct floe_schema {
    int32_t schema_id;
    floe_field root;                 /* a STRUCT holding the top-level fields */
    int32_t *identifier_field_ids;
    size_t n_identifier;
    size_t nleaves;
    floe_field **leaves;             /* depth-first order = Parquet column order */
    int32_t highest_field_id;
    floe_arena arena;                /* owns everything above */
} floe_schema;

/* Parse an Iceberg schema JSON object ({"type":"struct","schema-id":..,"fields":[..]}).
 * Also accepts a whole table-metadata document and takes its current schema. */
int floe_schema_parse(const char *json, size_t n, floe_schema **out, floe_error *err)
    FLOE_NODISCARD;
int floe_schema_load(const char *path, floe_schema **out, floe_error *err) FLOE_NODISCARD;
/* Serialize as Iceberg schema JSON (caller frees with floe_free). */
char *floe_schema_to_json(const floe_schema *s, bool pretty);
void floe_schema_free(floe_schema *s);

/* The deepest Parquet path a schema may have: the names from a top-level field down to a
 * leaf, where a list or map adds its repeated group ("list" / "key_value") to its own name.
 * floe's Parquet writer and reader take no deeper schema, so floe_schema_finish() refuses
 * one, naming the field. */
#define FLOE_PQ_PATH_MAX 64

/* Builders: allocate an empty schema, then fill root.children from the arena and call
 * floe_schema_finish() to derive leaves, levels and physical types. */
floe_schema *floe_schema_new(void);
int floe_schema_finish(floe_schema *s, floe_error *err) FLOE_NODISCARD;
/* Deep copy. */
int floe_schema_clone(const floe_schema *s, floe_schema **out, floe_error *err) FLOE_NODISCARD;

const floe_field *floe_schema_find_id(const floe_schema *s, int32_t id);
/* Dotted path of names ("device.os"); NULL if absent. */
const floe_field *floe_schema_find_path(const floe_schema *s, const char *path);
/* "a.b.element" style path of a field into buf. */
const char *floe_field_path(const floe_field *f, char *buf, size_t n);

const char *floe_type_name(floe_type_id t); /* "long", "timestamptz", "struct", ... */
/* Are a and b the same geometry / geography type (or neither)? Only geo, geo_crs and
 * geo_algo are looked at; defaults filled in (OGC:CRS84, spherical), the CRS compared
 * ignoring case. */
bool floe_field_geo_same(const floe_field *a, const floe_field *b);
/* A field's full type string as Iceberg JSON writes it: "decimal(10, 2)", "fixed[16]",
 * "long", "list", ... into buf (returned). */
const char *floe_field_type_str(const floe_field *f, char *buf, size_t n);
bool floe_type_is_nested(floe_type_id t);
/* Whether a finished schema has a variant column (at any depth). */
bool floe_schema_has_variant(const floe_schema *s);
/* Parquet/physical byte width for fixed-width leaves (bool 1, int32 4 ...), 0 for
 * BYTE_ARRAY. */
int floe_phys_width(floe_phys p, int32_t type_length);
/* Bytes needed for a decimal of precision p stored as FIXED_LEN_BYTE_ARRAY. */
int32_t floe_decimal_bytes(int32_t precision);

/* ---------------------------------------------------------------------------------------
 * Schema evolution (format/spec.md "Schema Evolution"): one change to a schema gives a
 * new schema. Fields are named by dotted paths of names ("payload.geo.lat"; a name
 * holding a dot quoted as in --where: "`a.b`.c"); the element of a list is
 * "NAME.element", a map's key and value "NAME.key", "NAME.value".
 * ------------------------------------------------------------------------------------- */
typedef enum floe_schema_change_kind {
    FLOE_SCHEMA_ADD_COLUMN = 1, /* path (its parent a struct, or a list or map whose element
                                 * or value is one), type, doc, required */
    FLOE_SCHEMA_RENAME_COLUMN,  /* path, new_name */
    FLOE_SCHEMA_DROP_COLUMN,    /* path */
    FLOE_SCHEMA_WIDEN_COLUMN,   /* path, type (a primitive type) */
    FLOE_SCHEMA_MAKE_OPTIONAL,  /* path */
    FLOE_SCHEMA_MOVE_COLUMN,    /* path, move, anchor */
    FLOE_SCHEMA_SET_IDENTIFIER, /* paths, npaths (none: the schema has no identifier) */
} floe_schema_change_kind;

typedef enum floe_schema_move {
    FLOE_SCHEMA_MOVE_FIRST,  /* first among its siblings */
    FLOE_SCHEMA_MOVE_BEFORE, /* just before anchor */
    FLOE_SCHEMA_MOVE_AFTER,  /* just after anchor */
} floe_schema_move;

typedef struct floe_schema_change {
    floe_schema_change_kind kind;
    const char *path;
    /* add: "long", "decimal(10, 2)", "fixed[16]", "struct<lat: double, lon: double>",
     * "list<string>", "map<string, long>" (nesting allowed; nested fields, list elements
     * and map values are optional); widen: the new primitive type */
    const char *type;
    const char *doc;      /* add: may be NULL */
    bool required;        /* add: always refused (a required column needs an
                           * initial-default, which floe does not write) */
    const char *new_name; /* rename */
    floe_schema_move move;
    const char *anchor;   /* move BEFORE/AFTER: a sibling's path, or its bare name */
    const char *const *paths;
    size_t npaths;
} floe_schema_change;

/* Whether path is a column path as floe_schema_change names them: names joined by dots,
 * each bare (any text but a dot) or quoted as --where quotes a column, `a.b` or "a.b"
 * (one name holding a dot; a doubled quote stands for one). FLOE_EINVALID naming the
 * offset of what does not parse (an empty name, an unterminated quote). */
int floe_schema_path_check(const char *path, floe_error *err) FLOE_NODISCARD;

/* Apply one change to base and return the new schema in *out (schema_id kept from base;
 * caller frees). New field ids (the added field, then its nested fields, a struct's
 * fields before their children) are *last_column_id + 1, + 2, ...; *last_column_id is
 * advanced past them. Refusals, with a message naming the field and the rule:
 * FLOE_ENOTFOUND for a path not in the schema; FLOE_EINVALID for what the spec forbids
 * (a required column without a default, a duplicate name, a type change other than
 * int->long, float->double and decimal(P,S)->decimal(P2,S) with P2 > P, dropping or
 * making optional an identifier field, changing a list element or map key by name,
 * identifier fields that are not required primitives outside lists and maps, or floats)
 * and FLOE_ESCHEMA for a malformed type. A change that leaves the schema as it was
 * still succeeds (compare the JSON to tell). */
/* Why field f of a finished schema cannot be an identifier field (spec "Identifier
 * Field IDs": not a primitive, a float or double, optional, inside a list or map or an
 * optional struct), or NULL when it can. */
const char *floe_schema_identifier_refusal(const floe_field *f);
int floe_schema_update(const floe_schema *base, const floe_schema_change *c,
                       int32_t *last_column_id, floe_schema **out, floe_error *err)
    FLOE_NODISCARD;
/* Whether text is a type floe_schema_change's type takes ("long", "decimal(10, 2)",
 * "struct<a: int>", ...): 0, or FLOE_ESCHEMA with a message naming the text and the byte
 * where it goes wrong (the floe command checks an argument so before opening the table:
 * a type that does not parse is a usage error, not a failed commit). */
int floe_schema_type_check(const char *text, floe_error *err) FLOE_NODISCARD;
/* Whether a value of type `from` may be read as `to` (spec "Schema Evolution" type
 * promotion: v1/v2's, and v3's date -> timestamp / timestamp_ns, which the caller allows
 * on format v3 tables only; the same type is allowed). Primitive fields only. */
bool floe_schema_type_promotable(const floe_field *from, const floe_field *to);

/* ---- name mapping (format/spec.md "Column Projection", schema.name-mapping.default) --
 * A JSON array of field mappings {"field-id", "names", "fields"} that gives files
 * without Parquet field ids their table field ids by column name. The texts returned are
 * owned by the caller (free with floe_free). */

/* The mapping of schema s as it is: each field mapped by its current name, nested fields
 * under "fields". NULL when out of memory. */
char *floe_name_mapping_of_schema(const floe_schema *s);

/* Whether text is a name mapping floe can read: a JSON array of objects, each with
 * "names" (an array of strings), an optional integer "field-id" and optional nested
 * "fields" (the same again), no name and no field id twice among the entries of one
 * level. FLOE_EINVALID naming the problem and where it is ("schema.name-mapping.default:
 * entry 2 (field-id 5): ..."). */
int floe_name_mapping_check(const char *text, floe_error *err) FLOE_NODISCARD;

/* The mapping `text` carried across a schema change from cur to next, as Iceberg's
 * schema update does in the same commit: a field of next that cur lacks gets an entry
 * with its name (and its nested fields') where its parent has an entry; a field whose
 * name changed gets the new name added to its entry (the old one kept, so files written
 * before still map); a name a field takes is removed from the other entries of its level
 * (a dropped field's entry keeps its other names; entries are never removed). Files
 * without field ids holding a column of that name read it as the new field from then on,
 * so the change is refused (FLOE_EINVALID naming the column, both fields and types) when
 * the field the name mapped to (in cur, else in the newest of older, the table's schemas)
 * has a type the new one cannot read: not the same type or a promotion
 * (floe_schema_type_promotable), for a struct, list or map down its fields of the same
 * names. *out is the new text, or NULL when the mapping is unchanged. FLOE_EINVALID too
 * when text is not a mapping (floe_name_mapping_check). */
int floe_name_mapping_evolve(const char *text, const floe_schema *cur, const floe_schema *next,
                             const floe_schema *const *older, size_t nolder, char **out,
                             floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
