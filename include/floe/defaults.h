/*
 * floe/defaults.h - field default values of an Iceberg schema (initial-default,
 * write-default): checked, rendered as row text, and given to the leaves of a column a
 * data file lacks.
 *
 * Spec: format/spec.md "Default values", Appendix C/D "JSON single-value serialization".
 * Values produced here live in the caller's arena; rendered text is appended to the
 * caller's buffer. Nothing is kept between calls.
 */
#ifndef FLOE_DEFAULTS_H
#define FLOE_DEFAULTS_H

#include "floe/common.h"
#include "floe/parquet_reader.h"
#include "floe/partition.h"
#include "floe/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* The default of field f (initial-default when initial, else write-default) as the text
 * floe's row printers print (fmt NDJSON or CANONICAL), appended
 * to out: "null" when the field has none; a struct default is the object of its fields'
 * values, each field left out of it taking its own default (format/spec.md "Default
 * values"). FLOE_EINVALID names the field when the JSON is not a valid value of its type
 * (Appendix C/D single-value serialization). */
int floe_default_render(const floe_field *f, bool initial, floe_pq_row_format fmt,
                        floe_buf *out, floe_error *err) FLOE_NODISCARD;
/* The value a field a data file lacks gives to one of its leaves: `from` is the
 * outermost field the file lacks (top-level, or its parent is in the file), leaf a
 * primitive at or below it. from's value is its initial-default (initial) or
 * write-default; each struct on the way down gives the next field the value its default
 * object holds for it, else that field's own default. *value is the leaf's value, *def
 * the definition level it gets: leaf->def_level for a value, else the level of the
 * first null on the way (or of an empty list or map). FLOE_EUNSUPPORTED for a required
 * field left null, or a non-empty list or map default (rows cannot repeat a constant);
 * FLOE_EINVALID for a default that is not a value of its type. */
int floe_default_at(const floe_field *from, const floe_field *leaf, bool initial,
                    floe_arena *arena, floe_value *value, int16_t *def, floe_error *err)
    FLOE_NODISCARD;
/* Check every initial-default and write-default of a schema (FLOE_EINVALID naming the
 * schema and field). */
int floe_schema_check_defaults(const floe_schema *s, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif

#endif
