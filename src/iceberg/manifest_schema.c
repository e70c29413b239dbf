/*
 * manifest_schema.c - the Avro schemas of Iceberg manifests and manifest lists, and the
 * Avro form of partition values.
 *
 * Spec: format/spec.md "Manifests" (manifest_entry and data_file, v1 and v2), "Manifest
 * Lists" (manifest_file v1 and v2, field_summary), "Appendix A: Avro" (field-id / element-id
 * properties, maps with int keys as arrays of key/value records with logicalType "map",
 * optional fields as ["null", T] with default null, decimals as fixed of the minimum
 * size for the precision, uuid as fixed[16]).
 *
 * Record names follow the reference writer (manifest_entry, r2, r102, k117_v118, r508)
 * so other readers that look at names see what they expect; ids carry the meaning.
 */
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

/* ---------------------------------------------------------------------------------------
 * names
 * ------------------------------------------------------------------------------------- */

static bool name_start(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static bool name_char(unsigned char c) { return name_start(c) || (c >= '0' && c <= '9'); }

int floe_mf_avro_name(const char *name, floe_buf *out) {
    const unsigned char *s = (const unsigned char *)name;
    size_t n = strlen(name);
    if (n == 0)
        return floe_buf_append_byte(out, '_');
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        bool ok = i == 0 ? name_start(c) : name_char(c);
        if (ok) {
            FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, c));
            i++;
            continue;
        }
        if (i == 0 && c >= '0' && c <= '9') {
            FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, '_'));
            FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, c));
            i++;
            continue;
        }
        /* one code point (malformed UTF-8 bytes count alone) -> _x<HEX> */
        uint32_t cp = c;
        size_t len = 1;
        if (c >= 0xC0) {
            size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (i + want <= n) {
                uint32_t v = c & (0x3Fu >> (want - 1));
                bool good = true;
                for (size_t k = 1; k < want; k++) {
                    if ((s[i + k] & 0xC0) != 0x80)
                        good = false;
                    v = (v << 6) | (s[i + k] & 0x3Fu);
                }
                if (good) {
                    cp = v;
                    len = want;
                }
            }
        }
        FLOE_FORWARD_IF_ERROR(floe_buf_printf(out, "_x%X", (unsigned)cp));
        i += len;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * manifest_entry
 * ------------------------------------------------------------------------------------- */

/* Named Avro types (fixed) may be defined once per schema; later uses name them. */
typedef struct named_types {
    char names[FLOE_PARTITION_MAX_FIELDS][40];
    size_t n;
} named_types;

static bool named_seen(named_types *nt, const char *name) {
    for (size_t i = 0; i < nt->n; i++)
        if (strcmp(nt->names[i], name) == 0)
            return true;
    if (nt->n < FLOE_PARTITION_MAX_FIELDS)
        snprintf(nt->names[nt->n++], sizeof nt->names[0], "%s", name);
    return false;
}

static int fixed_json(floe_buf *b, named_types *nt, const char *name, int32_t size,
                      const char *extra) {
    if (named_seen(nt, name))
        return floe_buf_printf(b, "\"%s\"", name);
    return floe_buf_printf(b, "{\"type\":\"fixed\",\"name\":\"%s\",\"size\":%d%s}", name,
                           (int)size, extra ? extra : "");
}

/* Avro type of an Iceberg primitive (Appendix A). */
static int avro_type_json(floe_buf *b, named_types *nt, const floe_field *t,
                          floe_error *err) {
    char name[40], extra[96];
    switch (t->type) {
    case FLOE_TYPE_BOOLEAN: return floe_buf_printf(b, "\"boolean\"");
    case FLOE_TYPE_INT: return floe_buf_printf(b, "\"int\"");
    case FLOE_TYPE_LONG: return floe_buf_printf(b, "\"long\"");
    case FLOE_TYPE_FLOAT: return floe_buf_printf(b, "\"float\"");
    case FLOE_TYPE_DOUBLE: return floe_buf_printf(b, "\"double\"");
    case FLOE_TYPE_DATE: return floe_buf_printf(b, "{\"type\":\"int\",\"logicalType\":\"date\"}");
    case FLOE_TYPE_TIME:
        return floe_buf_printf(b, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}");
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
        return floe_buf_printf(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
                                  "\"adjust-to-utc\":%s}",
                               t->type == FLOE_TYPE_TIMESTAMPTZ ? "true" : "false");
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        return floe_buf_printf(b, "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\","
                                  "\"adjust-to-utc\":%s}",
                               t->type == FLOE_TYPE_TIMESTAMPTZ_NS ? "true" : "false");
    case FLOE_TYPE_STRING: return floe_buf_printf(b, "\"string\"");
    case FLOE_TYPE_BINARY: return floe_buf_printf(b, "\"bytes\"");
    case FLOE_TYPE_UUID:
        return fixed_json(b, nt, "uuid_fixed", 16, ",\"logicalType\":\"uuid\"");
    case FLOE_TYPE_FIXED:
        snprintf(name, sizeof name, "fixed_%d", (int)t->length);
        return fixed_json(b, nt, name, t->length, NULL);
    case FLOE_TYPE_DECIMAL:
        snprintf(name, sizeof name, "decimal_%d_%d", (int)t->precision, (int)t->scale);
        snprintf(extra, sizeof extra, ",\"logicalType\":\"decimal\",\"precision\":%d,"
                                      "\"scale\":%d", (int)t->precision, (int)t->scale);
        return fixed_json(b, nt, name, floe_decimal_bytes(t->precision), extra);
    default:
        return floe_error_set(err, FLOE_EINVALID, "partition type %s has no Avro form",
                              floe_type_name(t->type));
    }
}

static int count_map_json(floe_buf *b, const char *name, int id, int kid, int vid,
                          const char *value_type) {
    return floe_buf_printf(
        b,
        ",{\"name\":\"%s\",\"type\":[\"null\",{\"type\":\"array\",\"logicalType\":\"map\","
        "\"items\":{\"type\":\"record\",\"name\":\"k%d_v%d\",\"fields\":["
        "{\"name\":\"key\",\"type\":\"int\",\"field-id\":%d},"
        "{\"name\":\"value\",\"type\":\"%s\",\"field-id\":%d}]}}],"
        "\"default\":null,\"field-id\":%d}",
        name, kid, vid, kid, value_type, vid, id);
}

int floe_mf_entry_schema_json(const floe_partition_spec *spec, int format_version,
                              floe_buf *b, floe_error *err) {
    int rc = 0;
    bool v1 = format_version == 1;
    named_types *nt = floe_calloc(1, sizeof *nt);
    if (!nt)
        return floe_error_set(err, FLOE_ENOMEM, "manifest schema: out of memory");
    if (v1) /* v1: snapshot_id required, no sequence numbers, no content */
        FLOE_CHECK(floe_buf_printf(
            b, "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
               "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
               "{\"name\":\"snapshot_id\",\"type\":\"long\",\"field-id\":1},"
               "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\","
               "\"fields\":["));
    else
        FLOE_CHECK(floe_buf_printf(
            b, "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
               "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
               "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,"
               "\"field-id\":1},"
               "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,"
               "\"field-id\":3},"
               "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],"
               "\"default\":null,\"field-id\":4},"
               "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\","
               "\"fields\":["
               "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"));
    FLOE_CHECK(floe_buf_printf(
        b, "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
           "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
           "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\","
           "\"fields\":["));
    for (size_t i = 0; i < spec->nfields; i++) {
        const floe_field *t = &spec->partition_type.children[i];
        FLOE_CHECK(floe_buf_printf(b, "%s{\"name\":\"", i ? "," : ""));
        FLOE_CHECK(floe_mf_avro_name(spec->fields[i].name, b));
        FLOE_CHECK(floe_buf_printf(b, "\",\"type\":[\"null\","));
        FLOE_CHECK(avro_type_json(b, nt, t, err));
        FLOE_CHECK(floe_buf_printf(b, "],\"default\":null,\"field-id\":%d}",
                                   (int)spec->fields[i].field_id));
    }
    FLOE_CHECK(floe_buf_printf(b, "]},\"field-id\":102},"
                                  "{\"name\":\"record_count\",\"type\":\"long\","
                                  "\"field-id\":103},"
                                  "{\"name\":\"file_size_in_bytes\",\"type\":\"long\","
                                  "\"field-id\":104}"));
    if (v1) /* required in v1, deprecated: writers put 64 MiB */
        FLOE_CHECK(floe_buf_printf(b, ",{\"name\":\"block_size_in_bytes\",\"type\":\"long\","
                                      "\"field-id\":105}"));
    FLOE_CHECK(count_map_json(b, "column_sizes", 108, 117, 118, "long"));
    FLOE_CHECK(count_map_json(b, "value_counts", 109, 119, 120, "long"));
    FLOE_CHECK(count_map_json(b, "null_value_counts", 110, 121, 122, "long"));
    FLOE_CHECK(count_map_json(b, "nan_value_counts", 137, 138, 139, "long"));
    FLOE_CHECK(count_map_json(b, "lower_bounds", 125, 126, 127, "bytes"));
    FLOE_CHECK(count_map_json(b, "upper_bounds", 128, 129, 130, "bytes"));
    if (v1)
        FLOE_CHECK(floe_buf_printf(
            b, ",{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
               "\"field-id\":131},"
               "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\","
               "\"items\":\"long\",\"element-id\":133}],\"default\":null,\"field-id\":132},"
               "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,"
               "\"field-id\":140}"
               "]},\"field-id\":2}]}"));
    else
        FLOE_CHECK(floe_buf_printf(
        b, ",{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
           "\"field-id\":131},"
           "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\","
           "\"items\":\"long\",\"element-id\":133}],\"default\":null,\"field-id\":132},"
           "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\","
           "\"items\":\"int\",\"element-id\":136}],\"default\":null,\"field-id\":135},"
           "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,"
           "\"field-id\":140},"
           "{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],"
           "\"default\":null,\"field-id\":143}"));
    if (format_version >= 3) /* v3: row lineage and deletion-vector blob offsets */
        FLOE_CHECK(floe_buf_printf(
            b, ",{\"name\":\"first_row_id\",\"type\":[\"null\",\"long\"],"
               "\"default\":null,\"field-id\":142},"
               "{\"name\":\"content_offset\",\"type\":[\"null\",\"long\"],"
               "\"default\":null,\"field-id\":144},"
               "{\"name\":\"content_size_in_bytes\",\"type\":[\"null\",\"long\"],"
               "\"default\":null,\"field-id\":145}"));
    if (!v1)
        FLOE_CHECK(floe_buf_printf(b, "]},\"field-id\":2}]}"));
done:
    floe_free(nt);
    if (rc < 0 && err && err->code == 0)
        floe_error_set(err, rc, "manifest schema: %s", floe_strerror(rc));
    return rc;
}

#define LIST_COUNTS_V2                                                                      \
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"                 \
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"                  \
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"               \
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"                \
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"                  \
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"               \
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
/* v1: the counts are optional (floe always writes them) */
#define OPT(name, type, id)                                                                 \
    "{\"name\":\"" name "\",\"type\":[\"null\",\"" type "\"],\"default\":null,\"field-id\":" id "},"
#define LIST_COUNTS_V1                                                                      \
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"                 \
    OPT("added_files_count", "int", "504") OPT("existing_files_count", "int", "505")        \
    OPT("deleted_files_count", "int", "506") OPT("added_rows_count", "long", "512")         \
    OPT("existing_rows_count", "long", "513") OPT("deleted_rows_count", "long", "514")
#define LIST_TAIL                                                                           \
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"           \
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["                                  \
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"                  \
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,"         \
    "\"field-id\":518},"                                                                    \
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"            \
    "\"field-id\":510},"                                                                    \
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"            \
    "\"field-id\":511}]},\"element-id\":508}],\"default\":null,\"field-id\":507},"            \
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"           \
    "\"field-id\":519}"
#define LIST_V3_ROW_ID                                                                      \
    ",{\"name\":\"first_row_id\",\"type\":[\"null\",\"long\"],\"default\":null,"         \
    "\"field-id\":520}"

#define LIST_HEAD                                                                           \
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["                        \
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"                   \
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"                   \
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
#define LIST_V2_SEQ                                                                         \
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"                            \
    "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"                   \
    "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"

const char *floe_mf_list_schema_json(int format_version) {
    if (format_version == 1) /* v1: no content, no sequence numbers */
        return LIST_HEAD LIST_COUNTS_V1 LIST_TAIL "]}";
    if (format_version >= 3) /* v3: first_row_id */
        return LIST_HEAD LIST_V2_SEQ LIST_COUNTS_V2 LIST_TAIL LIST_V3_ROW_ID "]}";
    return LIST_HEAD LIST_V2_SEQ LIST_COUNTS_V2 LIST_TAIL "]}";
}

/* ---------------------------------------------------------------------------------------
 * partition values <-> Avro
 * ------------------------------------------------------------------------------------- */

int floe_mf_partition_to_avro(const floe_field *t, const floe_value *v, floe_arena *arena,
                              floe_avro_value *out, floe_error *err) {
    if (v->is_null) {
        floe_avro_set_null(out);
        return 0;
    }
    if (v->type != t->type)
        return floe_error_set(err, FLOE_EINVALID, "partition value of type %s where the spec "
                              "has %s", floe_type_name(v->type), floe_type_name(t->type));
    switch (t->type) {
    case FLOE_TYPE_BOOLEAN: floe_avro_set_bool(out, v->v.b); break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE: floe_avro_set_int(out, v->v.i32); break;
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: floe_avro_set_long(out, v->v.i64); break;
    case FLOE_TYPE_FLOAT: floe_avro_set_float(out, v->v.f); break;
    case FLOE_TYPE_DOUBLE: floe_avro_set_double(out, v->v.d); break;
    case FLOE_TYPE_STRING: floe_avro_set_stringn(out, (const char *)v->v.bytes.p, v->v.bytes.n);
        break;
    case FLOE_TYPE_BINARY: floe_avro_set_bytes(out, v->v.bytes.p, v->v.bytes.n); break;
    case FLOE_TYPE_FIXED:
        if (t->length > 0 && v->v.bytes.n != (size_t)t->length)
            return floe_error_set(err, FLOE_EINVALID, "partition value: fixed[%d] given %zu "
                                  "bytes", (int)t->length, v->v.bytes.n);
        floe_avro_set_fixed(out, v->v.bytes.p, v->v.bytes.n);
        break;
    case FLOE_TYPE_UUID: {
        uint8_t *p = floe_arena_memdup(arena, v->v.uuid, 16);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_avro_set_fixed(out, p, 16);
        break;
    }
    case FLOE_TYPE_DECIMAL: {
        int32_t size = floe_decimal_bytes(t->precision);
        if (v->v.dec.scale != t->scale)
            return floe_error_set(err, FLOE_EINVALID, "partition value: decimal scale %d "
                                  "where the spec has %d", (int)v->v.dec.scale, (int)t->scale);
        if (size < 1 || size > 16)
            return floe_error_set(err, FLOE_EINVALID, "decimal precision %d", (int)t->precision);
        uint8_t *p = floe_arena_alloc(arena, (size_t)size);
        if (!p)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        /* two's complement big-endian, sign-extended to the fixed size */
        unsigned __int128 u = (unsigned __int128)v->v.dec.unscaled;
        for (int i = size - 1; i >= 0; i--, u >>= 8)
            p[i] = (uint8_t)u;
        /* what was shifted out must be pure sign extension, else it does not fit */
        floe_i128 back = 0;
        unsigned __int128 ub = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
        for (int i = 0; i < size; i++)
            ub = (ub << 8) | p[i];
        back = (floe_i128)ub;
        if (back != v->v.dec.unscaled)
            return floe_error_set(err, FLOE_EINVALID, "partition value: decimal does not "
                                  "fit precision %d", (int)t->precision);
        floe_avro_set_fixed(out, p, (size_t)size);
        break;
    }
    default:
        return floe_error_set(err, FLOE_EINVALID, "partition type %s has no Avro form",
                              floe_type_name(t->type));
    }
    return 0;
}

static int want(const floe_field *t, const floe_avro_value *v, floe_error *err) {
    return floe_error_set(err, FLOE_ECORRUPT, "partition value for %s type %s is Avro %s",
                          t->name ? t->name : "?", floe_type_name(t->type),
                          floe_avro_type_name(v->type));
}

int floe_mf_partition_from_avro(const floe_field *t, const floe_avro_value *v,
                                floe_value *out, floe_error *err) {
    if (v->type == FLOE_AVRO_NULL) {
        *out = floe_value_null(t->type);
        return 0;
    }
    int64_t l;
    switch (t->type) {
    case FLOE_TYPE_BOOLEAN:
        if (v->type != FLOE_AVRO_BOOLEAN)
            return want(t, v, err);
        *out = floe_value_bool(v->u.b);
        return 0;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        if (v->type == FLOE_AVRO_INT)
            l = v->u.i;
        else if (v->type == FLOE_AVRO_LONG && v->u.l >= INT32_MIN && v->u.l <= INT32_MAX)
            l = v->u.l;
        else
            return want(t, v, err);
        *out = t->type == FLOE_TYPE_INT ? floe_value_int((int32_t)l) : floe_value_date((int32_t)l);
        return 0;
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        if (v->type == FLOE_AVRO_LONG)
            l = v->u.l;
        else if (v->type == FLOE_AVRO_INT)
            l = v->u.i;
        else
            return want(t, v, err);
        *out = t->type == FLOE_TYPE_LONG ? floe_value_long(l) : floe_value_i64(t->type, l);
        return 0;
    case FLOE_TYPE_FLOAT:
        if (v->type != FLOE_AVRO_FLOAT)
            return want(t, v, err);
        *out = floe_value_float(v->u.f);
        return 0;
    case FLOE_TYPE_DOUBLE:
        if (v->type == FLOE_AVRO_DOUBLE)
            *out = floe_value_double(v->u.d);
        else if (v->type == FLOE_AVRO_FLOAT)
            *out = floe_value_double(v->u.f);
        else
            return want(t, v, err);
        return 0;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_UUID:
    case FLOE_TYPE_DECIMAL:
        if (v->type != FLOE_AVRO_STRING && v->type != FLOE_AVRO_BYTES &&
            v->type != FLOE_AVRO_FIXED)
            return want(t, v, err);
        if (t->type == FLOE_TYPE_DECIMAL && v->u.bytes.n > 16) {
            /* wider than needed: accept pure sign extension only */
            size_t extra = v->u.bytes.n - 16;
            uint8_t sign = (v->u.bytes.p[extra] & 0x80) ? 0xFF : 0x00;
            for (size_t i = 0; i < extra; i++)
                if (v->u.bytes.p[i] != sign)
                    return floe_error_set(err, FLOE_ECORRUPT, "partition value for %s: "
                                          "decimal of %zu bytes", t->name ? t->name : "?",
                                          v->u.bytes.n);
            return floe_value_from_binary(t, v->u.bytes.p + extra, 16, out, err);
        }
        return floe_value_from_binary(t, v->u.bytes.p, v->u.bytes.n, out, err);
    default:
        return floe_error_set(err, FLOE_EUNSUPPORTED, "partition type %s",
                              floe_type_name(t->type));
    }
}
