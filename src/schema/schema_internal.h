/*
 * schema_internal.h - helpers shared by the files of src/schema (not part of the API).
 */
#ifndef FLOE_SCHEMA_INTERNAL_H
#define FLOE_SCHEMA_INTERNAL_H

#include "floe/schema.h"

/* Set f's type from a primitive type name as Iceberg JSON writes it ("long",
 * "decimal(10, 2)", "fixed[16]", ...). FLOE_ESCHEMA naming the text when it is none. */
int floe_schema_primitive_type(const char *name, floe_field *f, floe_error *err);

#endif
