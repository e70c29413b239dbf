/*
 * floe/server.h - `floe serve`: durable HTTP ingestion, per-partition buffering, landing
 * files and triggered landing compaction (DESIGN.md "The four paths" 1-3, I1, I2, I5, I6).
 *
 * HTTP API (all answers are JSON unless noted):
 *   POST /v1/tables/{namespace}.{table}/events
 *        body: NDJSON (application/x-ndjson, application/ndjson, application/jsonl) or a
 *        JSON array of objects / NDJSON (application/json); Content-Encoding identity,
 *        gzip or zstd. Optional Idempotency-Key (1..128 printable ASCII bytes).
 *        200 {"batch_id":"<node>-<frame>","accepted":N,"rejected":M,
 *             "errors":[{"index":i,"reason":"type_mismatch","message":"..."}]}
 *            only after the WAL frame holding the accepted records is fsynced;
 *        400 malformed body (broken JSON array, bad gzip/zstd stream, no records),
 *        401 missing or unknown bearer token, 403 token without a grant for the table,
 *        404 unknown table, 413 body (or its decoded size) over the limit, or records
 *            of more than max_request_partitions partitions (nothing taken),
 *        415 Content-Type or Content-Encoding not supported,
 *        409 + Retry-After while another node takes a request with the same
 *            Idempotency-Key (several ingest nodes share the index);
 *        503 + Retry-After when the buffers are full (I6), the in-flight memory
 *            (max_inflight_bytes) is in use by other requests, the server is stopping,
 *            or a request has an Idempotency-Key and the landing index (the catalog
 *            database) cannot be asked whether the key was answered before: such a
 *            request is never taken blind (it may be a retry of one already taken);
 *            requests without a key are still taken into the WAL;
 *        the answer lists the first 1000 rejected records ("errors"; with more,
 *            "errors_listed" says how many are listed; all are quarantined).
 *   Every request: two Content-Length values that differ (or one that is not a number),
 *        Content-Length with Transfer-Encoding, or a Transfer-Encoding other than chunked
 *        is answered 400 before any body byte is read, and the connection closed
 *        (RFC 9112 section 6.3).
 *   GET  /healthz                       {"status":"ok|degraded|failing|stopping","node":..,
 *                                       "checks":{"wal":{"ok":true},"sealer":..,
 *                                       "compactor":..,"catalog":..,"object_store":..,
 *                                       "maintenance":..}}: a failing check has "since",
 *                                       "failures" and (with tokens configured, for the
 *                                       metrics or admin grant) "error". 200 while posts
 *                                       are taken, 503 when the WAL cannot write, a buffer
 *                                       has failed to seal for a minute, or the server is
 *                                       stopping. The sealer's check also counts accepted
 *                                       records moved to the quarantine because they could
 *                                       not be sealed ("quarantined_records").
 *   GET  /metrics                       Prometheus text format; with tokens configured,
 *                                       a token with the "metrics" grant
 *   POST /v1/admin/flush[?compact=1|wait=true[&timeout=S]]  needs the "admin" grant.
 *        Seals every buffer now: {"flushed":true}. With compact=1 also compacts every
 *        landing file registered so far and says what it did and what is left:
 *        {"flushed":true,"complete":bool,"rounds":N,"committed":{"events":E,
 *         "landing_files":F},"pending":{"landing_files":P,"partitions":Q,"by_partition":
 *         [{"table","partition","landing_files","bytes","reason"}]}} - reason names the
 *        failure, or the holder of the file or partition lease and until when. wait=true
 *        rounds on (one a second) until nothing is left, at most timeout seconds (120):
 *        200 when complete, 202 with the same body when the time ran out.
 *
 * Durability. Accepted records (and the rejected ones, bound for the quarantine, and the
 * idempotency answer) of one request become one WAL frame; one writer thread appends the
 * frames of all waiting requests and fsyncs once (group commit); a request is answered
 * after the fsync that covers its frame. Frames are routed to per-partition buffers that
 * are sealed (5 MB / 300 s) into immutable landing files registered in the landing index;
 * a WAL segment is deleted once every record in it is in a registered landing file.
 * floe_server_open succeeds on an ingest node whose catalog database or object store does
 * not answer (a connection or I/O error): keyless posts are taken into the WAL, keyed
 * posts, flushes and reloads get 503 (FLOE_EBUSY from the API), and a thread finishes the
 * start (WAL replay, sealing, compaction, maintenance) once they answer (docs/DESIGN.md).
 *
 * Threads: the HTTP library runs one thread per connection (capped); the WAL writer, the
 * sealer, the compactor, the watchdog (slow clients), the health prober and (after a start
 * without the services) the services thread have one thread each, and each
 * [source kafka NAME] one consumer thread (started with the services: topics to tables,
 * the Kafka offsets committed in the table's properties with the data: DESIGN.md "Kafka
 * source").
 */
#ifndef FLOE_SERVER_H
#define FLOE_SERVER_H

#include "floe/auth.h"
#include "floe/catalog.h"
#include "floe/common.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "floe/sql.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef enum floe_schema_mode {
    FLOE_SCHEMA_STRICT = 0, /* unknown fields send the record to the quarantine */
    FLOE_SCHEMA_EVOLVE,     /* unknown fields become optional columns (schema update) */
    FLOE_SCHEMA_IGNORE,     /* unknown fields are dropped and counted */
} floe_schema_mode;

/* Per-table settings. Sizes in bytes, ages in milliseconds; -1 = take the default. */
/* What a node does (floe_server_config.role). Several nodes share one catalog database
 * (PostgreSQL) and one warehouse (s3://): ingest nodes take events and register landing
 * files, compactor nodes compact any node's landing files under per-partition leases. */
typedef enum floe_server_role {
    FLOE_SERVER_ROLE_ALL = 0,   /* ingest and compact (the default) */
    FLOE_SERVER_ROLE_INGEST,    /* HTTP, WAL, sealing; compacts only when asked (flush) */
    FLOE_SERVER_ROLE_COMPACTOR, /* no HTTP, no WAL: compaction only (`floe work`) */
} floe_server_role;

/* How WAL sections and landing files are compressed (the codec is recorded per section,
 * so changing it keeps older WAL segments and landing files readable). */
typedef enum floe_landing_codec {
    FLOE_LANDING_LZ4 = 0,       /* LZ4 frames (the default: cheapest CPU per byte) */
    FLOE_LANDING_ZSTD,          /* zstd frames at compression_level (smaller files) */
    FLOE_LANDING_NONE,          /* plain NDJSON (twice the disk writes of lz4) */
} floe_landing_codec;

typedef struct floe_server_table_config {
    char *name;              /* "namespace.table" (NULL for the defaults entry) */
    char *schema_path;       /* Iceberg schema JSON used when the table is created */
    char *partition;         /* partition spec in the user form ("event_type, day(ts)")
                                used when the table is created; NULL = unpartitioned */
    int mode;                /* floe_schema_mode, -1 = default (strict) */
    int64_t seal_bytes;      /* seal a partition buffer at this many NDJSON bytes (5 MB) */
    int64_t seal_age_ms;     /* ... or when its oldest record is this old (300 s) */
    int64_t compact_bytes;   /* compact a partition at this many pending bytes (50 MB) */
    int64_t compact_age_ms;  /* ... or when its oldest pending file is this old (15 min) */
    int64_t target_file_size; /* Parquet output target (128 MB) */
} floe_server_table_config;

/* A [source kafka NAME] section: its keys as written, in order (src/server/kafka.c reads
 * and checks them; floe_server_config_check names a bad one). */
typedef struct floe_server_source_config {
    char *name;
    char **keys, **values;
    size_t n;
} floe_server_source_config;

typedef struct floe_server_config {
    floe_io *io;             /* I/O context of the warehouse, catalog and landing files
                                (borrowed; NULL: the default) */
    char *listen;            /* "127.0.0.1:8080"; port 0 picks a free port */
    char *warehouse;         /* "./warehouse" */
    char *catalog;           /* sqlite path, sqlite:///path or postgresql://...;
                                NULL = <warehouse>/catalog.db (local warehouses only);
                                or http(s)://... for an Iceberg REST catalog (tables
                                created and committed through it, state_db below) */
    char *state_db;          /* with a REST catalog: the database of the landing index,
                                the leases and the answers (sqlite path, sqlite:///path or
                                postgresql://... shared by several nodes); NULL =
                                <warehouse>/_floe_state.db (local warehouses only). Unused
                                with a SQL catalog, whose database holds them */
    floe_rest_properties rest; /* with a REST catalog: the [catalog] section's auth,
                                prefix, headers and SigV4 settings (floe.conf's names;
                                docs/REST.md); read at start only */
    char *catalog_warehouse; /* with a REST catalog: the [catalog] section's warehouse,
                                sent to its /v1/config (a warehouse name or location);
                                NULL: the warehouse above */
    char *node_id;           /* names landing files; NULL = "node1" */
    char *wal_dir;           /* a local folder; NULL = <warehouse>/_wal/<node_id> (a
                                remote warehouse needs it set) */
    int role;                /* floe_server_role (default all) */
    int64_t max_body;        /* bytes on the wire per request (16 MiB) */
    int64_t max_decoded;     /* bytes after gzip/zstd decoding (64 MiB) */
    int64_t max_record;      /* bytes per record (1 MiB) */
    int64_t max_connections; /* connections served at once (256); when all are taken, a
                                new one makes room by closing the one that has waited
                                longest for headers (idle keep-alive or slowloris) or
                                sends its body slowest, else it is refused */
    int64_t max_connections_per_ip; /* per client address (0 = no limit, the default:
                                       behind a proxy every client is the proxy) */
    int64_t max_inflight_bytes; /* every byte held for requests being taken (raw and
                                   decoded bodies, decoder state, parse state), together;
                                   past it new requests get 503 + Retry-After, and a
                                   request that alone needs more gets 413 (256 MiB) */
    int64_t header_timeout_ms; /* headers must arrive within (10 s); also keep-alive idle */
    int64_t read_timeout_ms; /* the body must arrive within (30 s) */
    int64_t buffer_cap;      /* buffered + queued bytes before 503 (256 MiB) */
    int64_t max_request_partitions; /* partitions one request may hold records of; a
                                       request over it is refused whole with 413 (1000) */
    int64_t idempotency_window_ms; /* 24 h */
    int64_t wal_segment_bytes; /* roll WAL segments at (64 MiB) */
    int64_t compression_level; /* zstd level when landing_codec is zstd (1) */
    int landing_codec;       /* floe_landing_codec of WAL sections and landing files (lz4) */
    int64_t max_pending_bytes; /* landing bytes sealed but not yet compacted past which
                                  posts wait for the compactor (up to read_timeout, then
                                  503 + Retry-After), so ingest never outruns compaction
                                  for long (1 GiB; 0 = no limit) */
    bool auto_create;        /* create unknown tables on their first post (inferred schema,
                                evolve mode, day(first timestamp)); default false, true in
                                no-config mode */
    bool compact;            /* run the landing compactor (default true) */
    bool maintain;           /* run the maintenance scheduler (floe/maint.h) on the served
                                tables: expiry, orphans, manifest and small-file rewrites,
                                landing lifecycle, under the catalog's leases (default true) */
    int64_t maint_start_delay_ms; /* first maintenance runs this long after start (5 min) */
    char *maint_config;      /* the [maintain] / [maintain table X] sections, as
                                floe_maint_config_parse text ([defaults] / [table X]);
                                NULL = the scheduler's defaults */
    char *maint_run_log;     /* append one JSON line per maintenance run here (NULL: none) */
    int64_t compact_lease_ms; /* a compactor's lease on a partition's landing files expires
                                 this long after its last renewal, when its process died
                                 (60 s; 300 ms .. 24 h) */
    char *staging_dir;       /* local folder where the compactor stages landing files of a
                                remote warehouse (NULL: /tmp) */
    int64_t kafka_test_commit_pause_ms; /* tests only: each commit of a Kafka source waits
                                this long between its conversion and its append (0) */
    int64_t kafka_test_staged_age_ms; /* tests only: a Kafka interval holding staged
                                segments is due after this long, dropped when its commit
                                still fails after three times it (0: 15 min, 45 min) */
    int64_t kafka_test_ahead_bytes; /* tests only: a Kafka source's batch converts ahead
                                once its spool holds this many bytes, in chunks of this
                                size (0: 1 MiB, and the pipeline's chunks) */
    floe_sql_options sql;    /* options of the catalog database's connections */
    floe_s3_properties s3;   /* [server] s3.* keys, as the file gave them: the program
                                builds io from them (floe_io_options_apply_s3, under the
                                environment and flags: docs/CONFIG.md); the server itself
                                uses io only. A reload keeps the io of the start */
    floe_server_table_config defaults;
    floe_server_table_config *tables;
    size_t ntables;
    floe_server_token *tokens;
    size_t ntokens;
    floe_server_source_config *sources; /* Kafka topics consumed into tables */
    size_t nsources;
} floe_server_config;

/* Defaults as listed above. */
void floe_server_config_init(floe_server_config *cfg);
void floe_server_config_reset(floe_server_config *cfg); /* frees, then init */
/* Parse the configuration text (format: floe_server_example_config()) into cfg, which must
 * have been initialised; later values override earlier ones. FLOE_EINVALID with the line. */
int floe_server_config_parse(floe_server_config *cfg, const char *text, size_t n,
                             const char *source, floe_error *err) FLOE_NODISCARD;
int floe_server_config_load(floe_server_config *cfg, const char *path, floe_error *err)
    FLOE_NODISCARD;
/* Check the settings together (tokens required beyond loopback, limits sane). */
int floe_server_config_check(const floe_server_config *cfg, floe_error *err) FLOE_NODISCARD;
/* A commented example configuration (static text). */
const char *floe_server_example_config(void);
/* Effective settings of a table: its own, else the defaults, else the built-in ones. */
void floe_server_table_settings(const floe_server_config *cfg, const char *table,
                                floe_server_table_config *out);

/* ---------------------------------------------------------------------------------------
 * Landing compaction and its commit (DESIGN.md I2).
 *
 * Landing files have ids "<node>-<seq>". Every landing-compaction snapshot records the ids
 * it consumed in its summary: floe.landing-ids = the ids joined with ',' (plus floe.node
 * and floe.partition for people reading the history). The due partitions of a table that
 * one compaction round claims are committed together, in one snapshot. For each leased
 * partition the
 * compactor first looks the leased ids up in the table's history (every snapshot's
 * floe.landing-ids): ids already there are marked committed in the landing index with the
 * snapshot that holds them and dropped from the job, so a lease holding both files a
 * commit consumed before a crash and newer ones converts and commits only the newer ones.
 * The rest is converted into Parquet files under the table's data dir, routed by the
 * table's default spec, and handed to the commit hook.
 *
 * The default hook (floe_server_commit_iceberg) appends the files in one snapshot; on
 * every attempt, on the metadata the attempt starts from, it checks that none of the ids
 * appears in any snapshot, and the pointer swap itself marks the landing files committed
 * in the landing index (in the catalog database, in the swap's transaction) provided
 * each is still leased to this worker. If an id is in a snapshot, or a file is no longer
 * this worker's (another worker whose lease ran out got there first), nothing is
 * committed and the outcome is a conflict.
 *
 * Hook results:
 *   0                    committed; *snapshot_id set
 *   FLOE_COMMIT_NOOP (1) every id is already in the table's history, in snapshot
 *                        *snapshot_id; the data files are deleted (the default hook does
 *                        not report it: the compactor settles such ids before converting)
 *   FLOE_ECONFLICT       nothing committed (retries ran out, or some landing file was
 *                        committed by someone else meanwhile); files deleted; landing files
 *                        the table now holds are marked committed, the others go back to
 *                        pending if this worker still holds their lease
 *   FLOE_EUNKNOWN_STATE  the swap may have happened: nothing is deleted, the landing files
 *                        stay leased until a restart or the lease's end; then the history
 *                        check settles it
 *   other negative       failure: as conflict
 * Everything in c is borrowed for the call. The hook runs on the compactor thread.
 * ------------------------------------------------------------------------------------- */
typedef struct floe_landing_commit {
    const char *table;              /* "namespace.table" */
    const char *partition;          /* landing partition paths, joined with ',' ("" when
                                       unpartitioned; past 1000 bytes "... and N more") */
    const floe_schema *schema;      /* the schema the files were written with */
    int32_t spec_id;                /* the spec their partition tuples follow */
    const floe_data_file *files;    /* the Parquet files: path as the table records it,
                                       partition tuple, metrics; content DATA */
    size_t nfiles;
    const char *const *landing_ids; /* "<node>-<seq>" of the landing files consumed */
    size_t nlanding;
    int64_t records;                /* rows in the data files */
    int64_t retries;                /* out: attempts after the first (for metrics) */
} floe_landing_commit;

typedef int (*floe_server_commit_fn)(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                                     floe_error *err);

typedef struct floe_server_hooks {
    /* NULL = floe_server_commit_iceberg with the server as ctx. Tests inject their own
     * (which may wrap the default one). */
    floe_server_commit_fn commit;
    void *commit_ctx;
} floe_server_hooks;

typedef struct floe_server floe_server;

/* glibc, a server with [source kafka] sections: keep the memory a commit frees for the
 * next one (malloc arenas: one per core; mmap threshold 32 MiB; trim threshold 1 GiB),
 * through mallopt, for the whole process; call it before floe_server_open. The resident
 * set then stays near the largest commit's peak. true when set; other C libraries: nothing
 * (false). */
bool floe_server_tune_malloc_kafka(void);

/* Recover (replay the WAL, reconcile the landing index with the files), start the
 * threads and listen. cfg is copied. hooks may be NULL. */
int floe_server_open(const floe_server_config *cfg, const floe_server_hooks *hooks,
                     floe_server **out, floe_error *err) FLOE_NODISCARD;
/* The bound TCP port (useful with port 0). */
uint16_t floe_server_port(const floe_server *s);
/* Take new tokens and thresholds (SIGHUP). Listen address, warehouse, WAL settings and
 * the [source kafka] sections are kept (a restart changes them). */
int floe_server_reload(floe_server *s, const floe_server_config *cfg, floe_error *err)
    FLOE_NODISCARD;
/* Seal every buffer now; with compact, also compact every pending landing file now
 * (whatever the triggers say). Waits for the work to finish. With compact, the first
 * failure of that compaction round is returned (the round still tries every other
 * partition; the failed ones stay pending for the next round, or stay leased after
 * FLOE_EUNKNOWN_STATE until the history check settles them); a partition another
 * worker holds the lease of is left to that worker and is not a failure. */
int floe_server_flush(floe_server *s, bool compact, floe_error *err) FLOE_NODISCARD;
/* What a flush with compaction did and left: floe_server_flush_report. */
typedef struct floe_flush_result {
    int rounds;                 /* compaction rounds run */
    int64_t events_committed;   /* rows committed to tables by those rounds */
    int64_t landing_committed;  /* landing files marked committed by them (converted and
                                   committed, found already in the table, or all of whose
                                   records went to the quarantine) */
    int64_t pending_files;      /* landing files registered before the flush that are
                                   still not committed */
    int64_t pending_partitions;
    char *pending_json;         /* a JSON array of at most 100 of those partitions:
                                   {"table","partition","landing_files","bytes","reason"},
                                   reason naming the failure or the lease holder and until
                                   when (floe_malloc'ed) */
} floe_flush_result;
void floe_flush_result_reset(floe_flush_result *r);
/* Seal every buffer, then compact every landing file registered so far, and report what
 * was committed and what is still pending and why. With wait_ms > 0, rounds go on (one a
 * second) until nothing of it is pending or wait_ms has passed. Returns a failure of
 * sealing or of reading the index; compaction failures are reasons in the report. */
int floe_server_flush_report(floe_server *s, int64_t wait_ms, floe_flush_result *out,
                             floe_error *err) FLOE_NODISCARD;
/* The default commit hook: ctx is the floe_server. Appends c->files to the table through
 * the server's catalog in one snapshot with the summary described above and the per-attempt
 * id check. Results as listed for the hooks. */
int floe_server_commit_iceberg(void *ctx, floe_landing_commit *c, int64_t *snapshot_id,
                               floe_error *err) FLOE_NODISCARD;

/* Stop accepting, finish in-flight requests and the compaction in progress, seal every
 * buffer, persist idempotency keys, delete the WAL segments and free s (always). */
int floe_server_close(floe_server *s, floe_error *err) FLOE_NODISCARD;

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif /* FLOE_SERVER_H */
