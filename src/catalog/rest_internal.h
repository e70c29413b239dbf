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
/* The commit that creates a staged table (CommitTableRequest): the requirement
 * assert-create alone, and the updates that build metadata_json from nothing
 * (assign-uuid with its uuid, upgrade-format-version, add-schema, set-current-schema,
 * add-spec, set-default-spec, add-sort-order, set-default-sort-order, set-location,
 * set-properties, and add-snapshot / set-snapshot-ref for the snapshots it holds).
 * *out is a new reference. */
int floe_rest_create_request(const char *metadata_json, json_t **out, floe_error *err);

/* Vended credentials (rest_creds.c): the I/O context of each table whose load answered
 * S3 keys (config, storage-credentials), made from the catalog's context with those keys
 * (and the endpoint and region the answer gives), kept until rest_vends_free. */
typedef struct rest_vends rest_vends;

/* Asks the catalog again for table ns.name's credentials: *answer (a new reference) is a
 * load answer or a LoadCredentialsResponse. Called from any thread doing I/O. */
typedef int (*rest_vend_refresh_fn)(void *ctx, const char *ns, const char *name,
                                    json_t **answer, floe_error *err);

int rest_vends_new(floe_io *base, rest_vend_refresh_fn refresh, void *ctx, rest_vends **out,
                   floe_error *err);
void rest_vends_free(rest_vends *vs);
/* Take the keys of an answer for table ns.name: the first that has keys makes the
 * table's context, later ones replace the keys in it (an answer without keys changes
 * nothing). */
int rest_vends_take(rest_vends *vs, const char *ns, const char *name, const json_t *answer,
                    floe_error *err);
/* The table's context, or NULL when nothing was vended for it. */
floe_io *rest_vends_io(rest_vends *vs, const char *ns, const char *name);

#endif
