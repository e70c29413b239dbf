/*
 * schema_internal.h - helpers shared by the files of src/schema (not part of the API).
 */
#ifndef FLOE_SCHEMA_INTERNAL_H
#define FLOE_SCHEMA_INTERNAL_H

#include "floe/schema.h"

/* Set f's type from a primitive type name as Iceberg JSON writes it ("long",
 * "decimal(10, 2)", "fixed[16]", "geometry(srid:4326)", ...). FLOE_ESCHEMA naming the
 * text when it is none. A geometry or geography type's text is kept in arena (with
 * arena NULL it is refused, FLOE_EUNSUPPORTED). */
int floe_schema_primitive_type(const char *name, floe_field *f, floe_arena *arena,
                               floe_error *err);


#endif
