/*
 * rest_internal.h - what the REST catalog's files share. Private to src/catalog.
 */
#ifndef FLOE_REST_INTERNAL_H
#define FLOE_REST_INTERNAL_H

#include <jansson.h>

#include "catalog_internal.h"

/* The body of a table commit (CommitTableRequest: "requirements" and "updates") that
 * takes a table from the metadata document base to the document next (both whole
 * table-metadata JSON, format/spec.md). Requirements: assert-table-uuid always;
 * assert-ref-snapshot-id for each ref the change moves, adds or removes;
 * assert-current-schema-id and assert-last-assigned-field-id when schemas change;
 * assert-default-spec-id and assert-last-assigned-partition-id when specs change;
 * assert-default-sort-order-id when sort orders change. Updates: what differs, in an
 * order the server can apply one by one. FLOE_EUNSUPPORTED for a difference no update
 * expresses (another table uuid, a snapshot changed in place, a lower format version).
 * *out is a new reference (json_decref). */
int floe_rest_commit_request(const char *base_json, const char *next_json, json_t **out,
                             floe_error *err);

#endif
