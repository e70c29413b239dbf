/*
 * metadata_internal.h - what metadata.c shares with the builders (metadata_build.c): the
 * JSON document behind a floe_table_metadata. Private to src/iceberg.
 */
#ifndef FLOE_ICEBERG_METADATA_INTERNAL_H
#define FLOE_ICEBERG_METADATA_INTERNAL_H

#include <jansson.h>

#include "floe/table_metadata.h"

/* A snapshot by id: the view's snapshots sorted by snapshot_id, for lookups in
 * O(log n) (a table may keep hundreds of thousands of snapshots). */
typedef struct floe_snap_key {
    int64_t id;
    size_t idx; /* in floe_table_metadata.snapshots */
} floe_snap_key;

struct floe_table_metadata_doc {
    json_t *root;               /* the whole document; owned */
    floe_snap_key *by_id;       /* n_by_id keys sorted by id; owned (NULL: none) */
    size_t n_by_id;
    const floe_snapshot *base;  /* the snapshots array the keys index */
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
