/*
 * metadata_internal.h - what metadata.c shares with the builders (metadata_build.c): the
 * JSON document behind a floe_table_metadata. Private to src/iceberg.
 */
#ifndef FLOE_ICEBERG_METADATA_INTERNAL_H
#define FLOE_ICEBERG_METADATA_INTERNAL_H

#include <jansson.h>

#include "floe/table_metadata.h"

struct floe_table_metadata_doc {
    json_t *root; /* the whole document; owned */
};

/* Route jansson's allocations through floe_malloc (so failure injection reaches them). */
void floe_metadata_json_init(void);

/* Whether a jansson allocation failed since the last call (and reset the flag): tells
 * "out of memory" from "not valid UTF-8" when json_string() returns NULL. */
bool floe_metadata_json_take_alloc_failure(void);

/* Wrap a document (takes ownership of root, also on failure) and derive the typed view,
 * validating it. `name` names the document in error messages. */
int floe_metadata_from_json(json_t *root, const char *name, floe_table_metadata **out,
                            floe_error *err);

/* Highest field id in an Iceberg schema JSON object (ids, element-id, key-id, value-id);
 * -1 if none. Depth is capped. */
int32_t floe_metadata_schema_highest_id(const json_t *schema);

#endif
