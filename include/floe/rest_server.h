/*
 * floe/rest_server.h - `floe catalog serve`: an Iceberg REST catalog over a floe catalog.
 *
 * The server speaks the REST catalog protocol of apache/iceberg
 * open-api/rest-catalog-open-api.yaml to any client (Iceberg Java, PyIceberg,
 * iceberg-js, floe) and keeps its tables in the floe catalog it is given (the SQL store:
 * SQLite, or PostgreSQL shared by several servers; the pointer swap is the store's
 * compare-and-swap, so servers and local floe commands can commit to one table at once).
 * Paths are taken with and without the {prefix} segment; the prefix, when given, is the
 * catalog's name (GET /v1/config returns it as overrides.prefix). Implemented:
 *
 *   GET    /v1/config
 *   GET    /v1/{prefix}/namespaces                        (pageToken, pageSize, parent)
 *   POST   /v1/{prefix}/namespaces
 *   GET    /v1/{prefix}/namespaces/{namespace}
 *   HEAD   /v1/{prefix}/namespaces/{namespace}
 *   DELETE /v1/{prefix}/namespaces/{namespace}
 *   POST   /v1/{prefix}/namespaces/{namespace}/properties
 *   GET    /v1/{prefix}/namespaces/{namespace}/tables     (pageToken, pageSize)
 *   POST   /v1/{prefix}/namespaces/{namespace}/tables     (stage-create too)
 *   POST   /v1/{prefix}/namespaces/{namespace}/register
 *   GET    /v1/{prefix}/namespaces/{namespace}/tables/{table} (ETag, If-None-Match, snapshots)
 *   HEAD   /v1/{prefix}/namespaces/{namespace}/tables/{table}
 *   POST   /v1/{prefix}/namespaces/{namespace}/tables/{table} (commit; also of a
 *                                                               staged create)
 *   DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table} (purgeRequested)
 *   POST   /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics (logged)
 *   GET    /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials (vending)
 *   POST   /v1/{prefix}/tables/rename
 *   POST   /v1/{prefix}/transactions/commit                (atomic across tables)
 *
 * Idempotency-Key is honoured on the mutation routes when the catalog is a SQL catalog
 * (the answers are recorded in its database - a commit's in the swap's own transaction;
 * /v1/config advertises idempotency-key-lifetime then). On a SQLite catalog the server
 * puts the database in write-ahead-log mode with synchronous=FULL.
 *
 * Anything else is 404 (no such route) or 405 (route without that method). Errors are
 * the spec's IcebergErrorResponse: {"error":{"message","type","code"}}.
 *
 * Authentication: bearer tokens with grants per namespace and table (the config's tokens;
 * docs/REST.md says which grant each route needs). Without tokens the server listens on
 * loopback addresses only. TLS belongs to a proxy in front.
 *
 * Slow and idle clients: as floe serve's defaults, 256 connections at once (an idle or
 * slow one makes room for a newcomer), headers within 10 s, a body within 30 s.
 *
 * Threads: libmicrohttpd runs a thread per connection; requests run on a pool of 8
 * catalog handles, up to 8 at once (commits to different tables write their metadata side
 * by side; the catalog's compare-and-swap keeps commits to one table apart). GET
 * /v1/config takes no handle. A request that finds no handle free waits at most
 * max_wait_ms for one, then is answered 503 ServiceUnavailableException + Retry-After.
 * Answers held for clients that read them slowly are bounded by max_answer_bytes (503 +
 * Retry-After past it).
 */
#ifndef FLOE_REST_SERVER_H
#define FLOE_REST_SERVER_H

#include "floe/auth.h"
#include "floe/catalog.h"
#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_rest_server floe_rest_server;

/* Test-only fault injection on the commit route (POST .../tables/{table}), for the
 * tests of clients' unknown-outcome handling: the first fault_count commit requests
 * are run (or answered from the Idempotency-Key record) and then answered 500
 * (FLOE_REST_FAULT_COMMIT_500) or their connection dropped unanswered
 * (FLOE_REST_FAULT_COMMIT_DROP), or not run at all and answered 500
 * (FLOE_REST_FAULT_LOST_500) or dropped (FLOE_REST_FAULT_LOST_DROP).
 * FLOE_REST_FAULT_CRASH is a crash instead: the first fault_count requests that carry an
 * Idempotency-Key, on any route that takes one, are run and then the process ends at
 * once (_exit(FLOE_REST_FAULT_CRASH_STATUS)), before anything else is written or
 * answered. The floe command sets it from FLOE_TEST_REST_FAULT (docs/REST.md); nothing
 * else should. */
typedef enum floe_rest_fault {
    FLOE_REST_FAULT_NONE = 0,
    FLOE_REST_FAULT_COMMIT_500,
    FLOE_REST_FAULT_COMMIT_DROP,
    FLOE_REST_FAULT_LOST_500,
    FLOE_REST_FAULT_LOST_DROP,
    FLOE_REST_FAULT_CRASH,
    FLOE_REST_FAULT_HOLD,
} floe_rest_fault;
/* FLOE_REST_FAULT_HOLD: the first fault_count requests that take a catalog handle keep it
 * this long (or until the server stops) before they run, as a slow request would. */
#define FLOE_REST_FAULT_HOLD_MS 10000
#define FLOE_REST_FAULT_CRASH_STATUS 86

/* Credential vending: the S3 keys handed to clients for the tables whose location starts
 * with prefix (the longest prefix wins), in LoadTableResult's config and
 * storage-credentials when a load or create asks (X-Iceberg-Access-Delegation:
 * vended-credentials), and from .../tables/{table}/credentials. */
typedef struct floe_rest_vend {
    char *name;   /* of the [vend NAME] section */
    char *prefix; /* "s3://bucket/path/" */
    char **keys, **values; /* the config handed out: s3.access-key-id and
                              s3.secret-access-key, optionally s3.session-token,
                              s3.endpoint, s3.region, client.region, s3.path-style-access */
    size_t n;
    int64_t expires_in_s; /* > 0: s3.session-token-expires-at-ms = now + this is added */
} floe_rest_vend;

/* Read the [vend NAME] sections of a configuration file (keys: prefix, expires-in and
 * the config keys above; other sections are skipped): FLOE_EINVALID names the file and
 * line of a bad one, or a section without a prefix or keys. Free with
 * floe_rest_vend_free. */
int floe_rest_vend_load(const char *path, floe_rest_vend **out, size_t *n,
                        floe_error *err) FLOE_NODISCARD;
void floe_rest_vend_free(floe_rest_vend *v, size_t n);

typedef struct floe_rest_server_config {
    const char *listen;                 /* "127.0.0.1:8181" (NULL: that); a loopback IPv4
                                           address; port 0 picks a free port */
    const floe_catalog_config *catalog; /* the catalog served (borrowed for the call) */
    size_t max_body;                    /* largest request body in bytes; 0: 16 MiB */
    /* Bytes of request bodies held at once over all connections; 0: 64 MiB. A body is
     * taken from it before it is read (all of an announced Content-Length on the
     * headers): past it 503 + Retry-After, or 413 when the body alone is larger. */
    int64_t max_inflight_bytes;
    /* Bearer tokens with grants (floe/auth.h; borrowed until floe_rest_server_stop).
     * Without tokens every request is served and the server listens on loopback only;
     * with tokens each request needs one whose grants cover what it touches (401, 403)
     * and any address may be listened on. */
    const floe_server_token *tokens;
    size_t ntokens;
    floe_rest_fault fault; /* tests only (above); 0: none */
    int fault_count;       /* how many requests fail (0: 1) */
    const floe_rest_vend *vend; /* credential vending (borrowed until stop); none: off */
    size_t nvend;
    /* How long a request waits for a free catalog handle (all 8 busy, or busy with a
     * request of the same Idempotency-Key) before it is answered 503 + Retry-After; 0:
     * 10 s. GET /v1/config needs no handle and never waits. */
    int64_t max_wait_ms;
    /* Bytes of answers held at once for clients still reading them (an answer is held
     * from when it is made until its last byte is sent); 0: 256 MiB. Past it 503 +
     * Retry-After. Answers of 64 KiB or less and error answers are not counted (at most
     * 256 connections hold them); an answer larger than the whole budget is sent when no
     * other counted answer is held. */
    int64_t max_answer_bytes;
    /* The largest table metadata (compact JSON) a commit or create may write; 0: 16 MiB.
     * A commit that would write more than this and than the table has now is a 400
     * (floe_catalog_set_max_metadata_bytes; docs/DESIGN.md, "Property caps"). */
    size_t max_metadata_bytes;
} floe_rest_server_config;

/* Open the catalog and start listening. FLOE_EINVALID for a bad or non-loopback listen
 * address, FLOE_EIO when the address cannot be bound, the catalog's errors when it cannot
 * be opened. */
int floe_rest_server_start(const floe_rest_server_config *cfg, floe_rest_server **out,
                           floe_error *err) FLOE_NODISCARD;
/* The port the server listens on (the one picked when the config asked for port 0). */
unsigned floe_rest_server_port(const floe_rest_server *s);
/* Graceful stop, first step: the listening socket is closed (a new connection is
 * refused), a request arriving later on a connection already open is answered 503 +
 * Retry-After, and every answer from now on closes its connection. Requests begun before
 * (their headers in, a body perhaps still arriving) go on. Waits up to wait_ms (0: not at
 * all) for them to be answered; returns how many are still running (0: all answered).
 * Call it again to wait more; then floe_rest_server_stop. */
int64_t floe_rest_server_drain(floe_rest_server *s, int64_t wait_ms);
/* Stop: requests still running give up their long work where they can (503), every
 * connection is closed (a request whose body is still arriving, or whose answer is still
 * being sent, is cut off), the catalog is closed. NULL is a no-op. */
void floe_rest_server_stop(floe_rest_server *s);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
