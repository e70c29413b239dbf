/*
 * harness_serve.h - driving `floe serve` from unit tests: POSTs over HTTP (libcurl, on
 * 127.0.0.1), event bodies of numbered ids, and what a table and its landing index hold.
 * Shared by the tests of the server's exactly-once paths.
 */
#ifndef FLOE_TEST_HARNESS_SERVE_H
#define FLOE_TEST_HARNESS_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "floe/catalog.h"
#include "floe/server.h"
#include "floe/sql.h"

/* The schema of the tests' events: {"id": long (required), "name": string}. */
extern const char hs_schema_json[];
/* A test server's configuration: listening on a free loopback port, warehouse wh, no
 * compaction (the tests drive it), the server_extra lines, and table shop.t with
 * hs_schema_json (written to dir/schema.json) and the table_extra lines. */
void hs_server_config(floe_server_config *c, const char *dir, const char *wh,
                      const char *server_extra, const char *table_extra);

/* POST body (NDJSON) to /v1/tables/<table>/events with an Idempotency-Key when key is set.
 * Returns the HTTP status (0 when nothing came back); *answer (when not NULL) receives
 * the answer body (floe_malloc'ed, NUL-terminated) and *retry_after the Retry-After
 * seconds (-1 when absent), when not NULL. */
long hs_post(uint16_t port, const char *table, const char *body, const char *key,
             char **answer, long *retry_after);
/* libcurl write callback appending to the floe_buf ctx. */
size_t hs_collect(char *p, size_t sz, size_t n, void *ctx);
/* Records {"id":i,"name":names[i % nnames]} for i in [from, to], one a line (floe_malloc'ed). */
char *hs_ids_body(int from, int to, const char *const *names, int nnames);
/* hs_post of hs_ids_body(from, to, names, nnames) without a key. */
long hs_post_ids(uint16_t port, const char *table, int from, int to,
                 const char *const *names, int nnames);

/* Every row of ns.name by its "id": counts[id] is how often id is there (ids outside
 * [0, cap) only count in the total). Returns the rows, or -1 after failing the test. */
int64_t hs_count_ids(floe_catalog *cat, const char *ns, const char *name, int *counts,
                     int cap);
/* The same through a SQLite catalog file with warehouse wh. */
int64_t hs_count_ids_sqlite(const char *catalog_db, const char *wh, const char *ns,
                            const char *name, int *counts, int cap);

/* Another writer's snapshot (an append of nothing) on ns.name, then expiry of every
 * other snapshot (older than now, retain 1). Fails the test on error. */
void hs_append_and_expire(floe_catalog *cat, const char *ns, const char *name);
/* The same through a SQLite catalog file with warehouse wh. */
void hs_append_and_expire_sqlite(const char *catalog_db, const char *wh, const char *ns,
                                 const char *name);

/* rows == n and every id in [1, n] counted once (hs_count_ids); fails the test naming
 * the first id that is not. Returns whether all was well. */
bool hs_check_once(const int *counts, int64_t rows, int n);

/* Landing files (kind 1) of the index on db by state. */
typedef struct hs_states {
    int pending, compacting, committed, other, with_snapshot;
} hs_states;
hs_states hs_landing_states(floe_sql *db, const char *table);

/* The sum of a metric's samples in /metrics of the server on port (0 when absent). */
long long hs_metric(uint16_t port, const char *name);
/* Waits up to 60 s for hs_metric(port, name) to reach want; returns whether it did. */
bool hs_wait_metric(uint16_t port, const char *name, long long want);

#endif
