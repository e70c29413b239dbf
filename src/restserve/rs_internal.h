/*
 * rs_internal.h - what the REST catalog server's files share: the server, one request as
 * the router hands it to a handler, the answer being built, and the helpers that turn
 * floe errors into the spec's IcebergErrorResponse. Private to src/restserve.
 */
#ifndef FLOE_RESTSERVE_RS_INTERNAL_H
#define FLOE_RESTSERVE_RS_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/budget.h"
#include "floe/catalog.h"
#include "floe/rest_server.h"

/* Catalog handles of a server: requests run on as many at once (a handle is used by one
 * thread at a time, as floe/catalog.h requires). Commits to different tables then write
 * and sync their metadata files side by side; the catalog's compare-and-swap keeps them
 * apart as it keeps several servers apart. */
#define RS_CATALOG_HANDLES 8

/* What a handle's swap and change hooks record (rs_idem.c): the Idempotency-Key of the
 * request running on the handle, if any, and whether the answer was recorded with the
 * change. */
typedef struct rs_idem_slot {
    struct floe_rest_server *s;
    const char *key;
    const char *fp;
    int status;     /* the answer on success: 200 (commit, create, register) or 204
                       (transaction, rename, drop) */
    bool recorded;  /* a change with the record ran (its transaction may still fail) */
    char owner[37]; /* this request's claim on the key (rs_idem_claim): a random UUID in
                       the key's row while the request runs, so its change records its
                       answer only on its own claim */
    bool lost;      /* the key's claim is not this request's any more: its change was
                       rolled back and the answer is the other request's */
    char uuid[40];  /* the table-uuid of the table the change is made to (a commit) or
                       makes (a create), recorded with the key ("" unknown: rs_idem_table) */
} rs_idem_slot;

struct floe_rest_server {
    struct MHD_Daemon *mhd;
    struct floe_connguard *guard; /* slow and idle clients (common/connguard.h) */
    pthread_mutex_t mu;  /* guards busy and keys */
    pthread_cond_t freed; /* a handle was given back (CLOCK_MONOTONIC for timed waits) */
    int64_t max_wait_ms;  /* a request waits this long for a handle, then 503 */
    floe_catalog *cats[RS_CATALOG_HANDLES];
    bool busy[RS_CATALOG_HANDLES];
    const char *keys[RS_CATALOG_HANDLES]; /* the Idempotency-Key of the request on each
                                             busy handle, or NULL */
    rs_idem_slot slots[RS_CATALOG_HANDLES];
    int64_t idem_swept_ms; /* when expired answers were last removed (guarded by mu) */
    floe_rest_fault fault; /* test-only fault injection (floe/rest_server.h) */
    int fault_left;        /* commit requests still to fail (guarded by mu) */
    floe_catalog *cat;  /* cats[0], for what is done once (start, idempotency table) */
    char *name;         /* the catalog's name: the {prefix} of the paths */
    size_t max_body;
    floe_budget bodies; /* request bodies held at once (max_inflight_bytes) */
    floe_budget answers; /* answers held at once until sent (max_answer_bytes) */
    char *warehouse;    /* the catalog's warehouse, for GET /v1/config (no handle) */
    unsigned port;
    bool idem;          /* Idempotency-Key honoured (a SQL catalog: rs_idem.c) */
    const floe_server_token *tokens; /* borrowed from the config; none: no authentication */
    size_t ntokens;
    const floe_rest_vend *vend; /* credential vending (rs_vend.c), borrowed; none: off */
    size_t nvend;
    atomic_bool stopping; /* floe_rest_server_stop has begun: long work gives up
                             (rs_abandoned) rather than hold the stop */
    atomic_bool draining; /* floe_rest_server_drain has begun: no new connections; a
                             new request on an open one is answered 503, every answer
                             closes its connection */
    int64_t requests;     /* requests begun (headers in) and not yet completed (answer
                             sent or connection closed; guarded by mu) */
    pthread_cond_t drained; /* signalled when requests drops to 0 while draining */
};

/* A request after routing. Path segments are percent-decoded. */
typedef struct rs_req {
    floe_rest_server *s;
    floe_catalog *cat;   /* the handle this request runs on (NULL: a route that needs
                            none, GET /v1/config) */
    size_t h;            /* its index in s->cats (and s->slots) */
    const floe_server_token *token; /* the caller's bearer token; NULL without --tokens */
    struct MHD_Connection *conn;
    const char *method;
    char *ns;            /* the {namespace} segment as floe's dotted name, or NULL */
    char *table;         /* the {table} segment, or NULL */
    json_t *body;        /* the parsed JSON body of a POST, or NULL */
} rs_req;

/* The answer. body is JSON (or empty for 204/304). */
typedef struct rs_resp {
    int status;
    floe_buf body;
    char etag[48];       /* sent as ETag when set */
} rs_resp;

/* Set an IcebergErrorResponse: {"error":{"message":..,"type":..,"code":status}}. Returns
 * 0 so handlers can `return rs_error(...)`. */
int rs_error(rs_resp *r, int status, const char *type, const char *fmt, ...) FLOE_PRINTF(4, 5);
/* The answer for a floe error: FLOE_ENOTFOUND 404 with not_found_type, FLOE_EEXISTS 409
 * AlreadyExistsException, FLOE_EINVALID / FLOE_ESCHEMA / FLOE_ECORRUPT / FLOE_ELIMIT 400,
 * FLOE_EUNSUPPORTED 406, FLOE_ECONFLICT 409 CommitFailedException, FLOE_EUNKNOWN_STATE
 * 500 CommitStateUnknownException, FLOE_EBUSY 503, anything else 500. */
int rs_floe_error(rs_resp *r, int rc, const floe_error *err, const char *not_found_type);
/* True when the work of q is no longer wanted: the server is stopping, or the client has
 * closed its connection (a read of it would find the end; checked without blocking, a
 * poll and a peek). Long work (a transaction's tables) asks between steps and gives up
 * with FLOE_ECANCELLED (503). A client that shuts down its sending side while it waits
 * for the answer looks gone too: HTTP clients do not. */
bool rs_abandoned(const rs_req *q);
/* Query parameter `name`, percent-decoded (caller frees), or NULL when absent. */
char *rs_query(const rs_req *q, const char *name);
/* Header value (borrowed) or NULL. */
const char *rs_header(const rs_req *q, const char *name);

/* True when the caller may see namespace ns in a listing: no tokens are configured, or
 * its token has "*", a grant on the parent of ns ("parent.*"), or a grant on ns, on a
 * table in ns, or on a namespace or table below ns (so a caller finds its way to what it
 * was granted). */
bool rs_namespace_visible(const rs_req *q, const char *ns);

/* True when the caller may create tables in namespace ns: no tokens are configured, or
 * its token has "*" or "ns.*" (what POST .../tables needs; a grant on one table lets the
 * caller change that table, not make one, by whatever route). */
bool rs_may_create_in(const rs_req *q, const char *ns);

/* The most levels a namespace may have (a request's namespace array or path segment). */
#define RS_NAMESPACE_LEVELS_MAX 64
/* Append a floe dotted namespace as a JSON array of its levels. */
void rs_put_namespace(floe_buf *b, const char *dotted);
/* A JSON namespace array ["a","b"] as a dotted name (caller frees); NULL and a 400 in r
 * when a level is empty or holds '.' (floe's SQL catalog joins levels with dots). */
char *rs_namespace_from_json(const json_t *levels, rs_resp *r);
/* True when name may be given to a new table (create, register, rename, a staged
 * create's commit); false with a 400 in r when it holds a '.' (floe's identifiers join
 * namespace levels and the table name with dots, so "x.y" of "shop" would read as table
 * "y" of "shop.x"). */
bool rs_table_name_ok(const char *name, rs_resp *r);
/* The end of a refusal's message about where files may be. */
#define RS_LOCATIONS_TAIL " (docs/REST.md, \"Locations\")"
/* Locations (rs_place.c; docs/REST.md "Locations"). 0 when location may be table
 * ns.name's: absolute, no "." or ".." segment, strictly inside namespace ns's folder and
 * outside every child namespace's; else FLOE_EINVALID naming the rule. (The catalog's
 * placement check, floe_table_check_location, keeps tables apart from each other.) */
int rs_table_location_check(floe_catalog *cat, const char *ns, const char *name,
                            const char *location, floe_error *err);
/* 0 when table property prop = value may be set on a table at location: anything but a
 * write path (write.data.path, write.folder-storage.path, write.object-storage.path,
 * write.metadata.path), and those inside location; else FLOE_EINVALID naming prop. */
int rs_write_path_check(const char *prop, const char *value, const char *location,
                        floe_error *err);
/* 0 when location may be namespace ns's `location` property: its default folder
 * <parent folder>/<level> (the warehouse's for a top-level namespace) or inside it. */
int rs_namespace_location_check(floe_catalog *cat, const char *ns, const char *location,
                                floe_error *err);
/* 0 when namespace ns may have folder location (NULL: its home, where it goes without a
 * location property): apart from every other namespace's folder (strictly inside its
 * ancestors', strictly around its descendants'), not inside any table's location, holding no table's location but those
 * of ns and the namespaces below it; else FLOE_EINVALID naming what is in the way. Reads
 * every table of the catalog. */
int rs_namespace_place_check(floe_catalog *cat, const char *ns, const char *location,
                             floe_error *err);
/* Sort the list and keep the items after pageToken, at most pageSize of them (the query
 * parameters): [*from, *to). *next gets the token of the next page (borrowed from the
 * list) or NULL. Returns 0, or -1 with a 400 in r for a bad pageSize. */
int rs_page(const rs_req *q, floe_strlist *list, size_t *from, size_t *to, const char **next,
            rs_resp *r);
/* Close a page: `],"next-page-token":<next or null>}`. */
void rs_page_end(floe_buf *b, const char *next);

/* Handlers (rs_namespaces.c, rs_tables.c, rs_commit.c). Each fills r. */
int rs_list_namespaces(rs_req *q, rs_resp *r);
int rs_create_namespace(rs_req *q, rs_resp *r);
int rs_load_namespace(rs_req *q, rs_resp *r);
int rs_namespace_exists(rs_req *q, rs_resp *r);
int rs_drop_namespace(rs_req *q, rs_resp *r);
int rs_update_namespace_properties(rs_req *q, rs_resp *r);
int rs_list_tables(rs_req *q, rs_resp *r);
int rs_create_table(rs_req *q, rs_resp *r);
int rs_register_table(rs_req *q, rs_resp *r);
int rs_load_table(rs_req *q, rs_resp *r);
int rs_table_exists(rs_req *q, rs_resp *r);
int rs_drop_table(rs_req *q, rs_resp *r);
int rs_rename_table(rs_req *q, rs_resp *r);
int rs_commit_table(rs_req *q, rs_resp *r);
int rs_commit_transaction(rs_req *q, rs_resp *r);
int rs_report_metrics(rs_req *q, rs_resp *r);
int rs_load_credentials(rs_req *q, rs_resp *r); /* rs_vend.c */

/* Vended credentials (rs_vend.c): when q asked for them (X-Iceberg-Access-Delegation:
 * vended-credentials) and a [vend] section covers t's location, put its keys in the
 * `config` and `storage-credentials` of the LoadTableResult in r. */
struct floe_table;
void rs_vend_add(const rs_req *q, const struct floe_table *t, rs_resp *r);

/* Idempotency-Key (rs_idem.c). The lifetime advertised in /v1/config. */
#define RS_IDEM_LIFETIME "PT30M"
#define RS_IDEM_LIFETIME_MS (30 * 60 * 1000)
/* Create the table of recorded answers, set s->idem and the handles' swap and change
 * hooks, on a SQL catalog. */
int rs_idem_open(floe_rest_server *s, floe_error *err);
/* Before and after the handler of a request with key on handle h: the change it makes (a
 * commit's swap; a create, register, rename or drop) records the answer (status on
 * success, the new metadata location) in its own transaction. */
void rs_idem_begin(floe_rest_server *s, size_t h, const char *key, const char *fp, int status);
void rs_idem_end(floe_rest_server *s, size_t h);
/* True when the change of the request on handle h was refused because another request
 * holds its key (the change rolled back): the caller answers with rs_idem_replay. */
bool rs_idem_lost(const floe_rest_server *s, size_t h);
/* The table-uuid of the table request q changes or makes (NULL: none known), recorded with
 * its Idempotency-Key: a replay after that table was dropped and another created under its
 * name then answers that the table is gone rather than with the other table's state. */
void rs_idem_table(rs_req *q, const char *uuid);
/* A key as the spec gives it: a UUID in its 36-character form. */
bool rs_idem_key_valid(const char *key);
/* What identifies a request (method, path, body: the caller gives the body canonically,
 * restserve.c fingerprint) as 64 hex digits: 0, or an error (out of memory; libcrypto,
 * which hashes it, cannot be loaded). */
int rs_idem_fingerprint(const char *method, const char *url, const void *body, size_t len,
                        char out[65], floe_error *err);
/* Claim the key of the request on q's handle (after rs_idem_begin) in the catalog
 * database before it runs: false when claimed (the request runs; rs_idem_record then
 * records its answer on the claim, or releases the claim on a 5xx). While another request
 * holds the key (on any server on the catalog), wait for its answer, at most --max-wait;
 * true with that answer (or the 400 of a key reused, or a 503) in r. A claim left by a
 * request whose answer never came (its server died) lapses after 10 minutes. take false:
 * wait for the other's answer only (a request whose claim was lost). */
bool rs_idem_claim(rs_req *q, const char *fp_raw, bool take, rs_resp *r);
/* Record r on the key's claim unless the change of the request on handle h recorded it
 * already; a 5xx is not recorded: the claim is released, so a retry runs. A failure to
 * record is logged. */
void rs_idem_record(rs_req *q, size_t h, const char *key, const char *fp, const rs_resp *r);
/* Around a namespace change (create, drop, update properties) of a request with a key
 * on a SQL catalog: _change_begin opens a transaction on the handle's connection (1; 0
 * when there is nothing to record, -1 with the error in r), the handler makes the change
 * and its answer inside it, and _change_end records a successful answer in it and
 * commits, or rolls back an unsuccessful one (opened: _change_begin's result). */
int rs_idem_change_begin(rs_req *q, rs_resp *r);
void rs_idem_change_end(rs_req *q, int opened, rs_resp *r);

/* Answer with a LoadTableResult for table t (rs_tables.c): metadata-location, metadata
 * (all snapshots, or with refs_only those a branch or tag points at), config; and the
 * ETag of that representation. */
struct floe_table;
int rs_table_result(rs_resp *r, const struct floe_table *t, bool refs_only);
/* The same for the metadata file at location (read through the catalog's I/O); when it
 * cannot be read, the error in err and r untouched. */
int rs_table_result_at(rs_resp *r, floe_catalog *cat, const char *location,
                       floe_error *err);
/* The ETag of a metadata location as served with or without refs_only. */
void rs_etag(const char *metadata_location, bool refs_only, char out[48]);

#endif
