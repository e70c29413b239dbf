/*
 * server_internal.h - the parts of `floe serve` and how they share state.
 *
 *   http.c      libmicrohttpd glue: routes, auth, limits, watchdog for slow clients,
 *               /metrics
 *   ingest.c    one POST: decode, shred-validate, route to partitions, build the frame
 *   wal.c       the WAL writer thread (group commit), segments, replay at start
 *   landing.c   partition buffers, the sealer thread, the landing index (floe_sql: in
 *               the catalog's database), idempotency answers, WAL segment release
 *   compactor.c the landing compactor thread: lease, settle against the table's
 *               history, convert, commit (floe_server_commit_iceberg, the default hook)
 *   tables.c    the tables served: load or create through the catalog, schema modes
 *   config.c    the configuration file
 *   maint.c     the maintenance thread: floe/maint.h's scheduler over the served tables
 *   kafka.c     [source kafka NAME]: consumer threads, offsets committed with the data
 *   server.c    open (recovery), reload, flush, close
 *
 * Locks (never taken in the reverse order): tables_mu -> table.pool_mu;
 * wal.mu; land.mu -> idx.mu; cfg_mu alone; cat_mu (catalog and table objects) -> commit_gate
 * (held by floe_table_commit only).
 *
 * Landing file state machine (DESIGN.md):
 *
 *   open (in WAL + buffer) --seal: job_write() + fsync or syncer--> sealed (durable)
 *     --register: register_file() / seal_batch()--> pending --lease: lease_take()--> compacting
 *     --the swap of the commit (swap_hook), or found in the table's history (settle)-->
 *     committed;
 *   compacting --hook failed: lease_release() / restart: release_predecessor()--> pending
 *     (compare-and-set on the lease owner: never from committed); a lease that ran out is
 *     taken again by lease_take. The full table is in compactor.c.
 *
 * A WAL segment is deleted (landing_release_segments) once no buffer holds a record from
 * it, the answers in it are in the index, and it is not the segment being written.
 */
#ifndef FLOE_SERVER_INTERNAL_H
#define FLOE_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "floe/catalog.h"
#include "floe/json.h"
#include "floe/lease.h"
#include "floe/manifest.h"
#include "floe/partition.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "frame.h"
#include "common/budget.h"

typedef struct floe_server floe_server;

/* ---- metrics -------------------------------------------------------------------- */
#define SRV_LAT_BUCKETS 14
extern const double srv_lat_bounds_ms[SRV_LAT_BUCKETS];

typedef struct srv_metrics {
    _Atomic uint64_t requests[6];  /* by class: 2xx 4xx(other) 401/403 413 429/503 5xx */
    _Atomic uint64_t lat[SRV_LAT_BUCKETS + 1];
    _Atomic uint64_t lat_sum_us, lat_count;
    _Atomic uint64_t wal_frames, wal_fsyncs, wal_bytes;
    _Atomic uint64_t sealed_files, sealed_bytes;
    _Atomic uint64_t commits, conflicts, retries, commit_failures, compactions;
    _Atomic uint64_t idempotent_replays;
    _Atomic uint64_t settled;      /* landing files found already committed (I2) */
    _Atomic uint64_t events_committed; /* rows this process's compactions committed */
    _Atomic uint64_t landing_committed; /* landing files this process marked committed
                                            (converted, found in the table, or all
                                            quarantined) */
    _Atomic uint64_t backlog_waits, backlog_wait_us; /* posts held for the compactor */
    _Atomic uint64_t budget_refusals; /* 503: the in-flight budget was in use */
    _Atomic uint64_t seal_failures;  /* landing files that could not be written (retried) */
    _Atomic uint64_t seal_quarantined_records; /* ... for good: records to the quarantine */
    _Atomic uint64_t wal_failures, wal_recoveries;
} srv_metrics;

/* ---- health (/healthz, /metrics) ------------------------------------------------- */
/* What each part last reported: set by the part itself (wal.c, landing.c's sealer,
 * compactor.c's rounds, maint.c's runs) and by the health prober (http.c: the catalog
 * database and the object store, every few seconds). */
/* SRV_H_CATALOG: the catalog database, or with a REST catalog its server (and then
 * SRV_H_STATE_DB the state database beside it). */
enum { SRV_H_WAL, SRV_H_SEALER, SRV_H_COMPACTOR, SRV_H_CATALOG, SRV_H_STORAGE,
       SRV_H_MAINT, SRV_H_STATE_DB, SRV_H_COUNT };
extern const char *const srv_health_names[SRV_H_COUNT];

/* The room of a message kept for later (health, a failed seal or flush): a floe_error's
 * message and the words around it; srv_note says when one is shortened all the same. */
#define SRV_NOTE_MAX (FLOE_ERROR_MSG_MAX + 512)

typedef struct srv_health_item {
    bool failing;
    char error[SRV_NOTE_MAX];
    int64_t since_ms;       /* failing since (wall clock, ms) */
    uint64_t failures;      /* in a row */
} srv_health_item;

/* ---- tables ---------------------------------------------------------------------- */
typedef struct srv_scratch srv_scratch;

typedef struct srv_table {
    char *name;             /* "ns.table" */
    char *ns, *tname;
    char *location;         /* table root (data files go to <location>/data/...) */
    pthread_rwlock_t schema_lock; /* schema/spec swap on evolve */
    floe_schema *schema;
    floe_partition_spec *spec;
    int schema_gen;         /* bumps on every schema change */
    floe_schema **old_schemas; /* kept alive until close (scratches may still use them) */
    size_t nold;
    pthread_mutex_t pool_mu;
    srv_scratch *pool;
    int64_t pool_bytes;     /* pool_mu: what the pooled scratches hold (ingest.c) */
    pthread_mutex_t evolve_mu;
    _Atomic uint64_t events_accepted, events_rejected, bytes_accepted, bytes_rejected;
    _Atomic uint64_t unknown_fields, schema_updates;
    _Atomic bool dropped;   /* gone from the catalog and not created again: posts get 404
                               until the table exists again (srv_table_recreate) */
} srv_table;

/* ---- WAL -------------------------------------------------------------------------- */
typedef struct wal_req {
    struct wal_req *next;
    floe_buf *frame;        /* prepared by floe_frame_begin/add/end; stamped by the WAL */
    bool done;
    int rc;
    uint64_t frame_id;
} wal_req;

typedef struct srv_wal {
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    wal_req *head, *tail;
    int64_t queued_bytes;
    bool stop;
    int fd;
    uint64_t segno;         /* segment being written */
    _Atomic uint64_t active_seg;
    int64_t seg_bytes;
    uint64_t next_frame_id;
    int failed;             /* error after a failed write/fsync: every frame is refused
                               until the writer has recovered (wal.c) */
    bool failed_for_good;   /* a durable frame could not be buffered: only a restart (its
                               replay) brings it back */
    int64_t synced_bytes;   /* of the segment being written: what the last fsync covered */
    int64_t failed_bytes;   /* the batch that failed (a full disk: recovery waits until
                               twice as much is free) */
    int64_t retry_ms;       /* backoff of the next recovery attempt */
    int64_t retry_at_ms;
    bool apply;             /* durable frames go into the buffers (false while the node
                               runs without its catalog: srv_wal_catch_up replays them) */
    bool hold, busy;        /* catch-up holds the writer; a batch is being written */
    pthread_t thr;
    bool thr_started;
} srv_wal;

/* ---- landing ---------------------------------------------------------------------- */
typedef struct seg_ref {
    uint64_t segno;
    int64_t refs;
} seg_ref;

typedef struct pbuf {
    char *table;
    char *part;             /* partition path; "" unpartitioned */
    int kind;               /* FLOE_SECTION_RECORDS or FLOE_SECTION_QUARANTINE */
    floe_buf data;          /* concatenated frames of `codec` (quarantine: plain lines) */
    uint8_t codec;          /* frame.h codec of data; set by its first section */
    int64_t raw_bytes, records;
    uint64_t first_frame, last_frame;
    uint64_t watermark;     /* replay: frames up to this one are in landing files */
    int64_t created_ms;     /* when its first record arrived */
    seg_ref *segs;          /* segments its records came from */
    size_t nsegs, segs_cap;
    bool sealing;           /* a job of its records is not registered yet (sealer) */
    int64_t charged;        /* its memory as counted in srv_landing.buffered_bytes */
    struct pbuf *next;      /* hash chain */
} pbuf;

typedef struct idem_entry {
    char *key;              /* "<table>\0<key>" flattened as "<table>\n<key>" */
    bool done;
    bool persisted;
    char *answer;           /* response body */
    int64_t created_ms;
    struct idem_entry *next;
} idem_entry;

/* Statements that compare or record times, in the index's dialect: each reads the
 * database's clock, so every node sharing the index judges ages, claims and leases by
 * one clock (landing.c builds them at open). */
enum {
    SQ_REGISTER,        /* a sealed file (created_ms = now) */
    SQ_IDEM_LOOKUP,     /* an answer younger than the window */
    SQ_IDEM_STORE,      /* an answer, aged as the node saw it */
    SQ_IDEM_EXPIRE,     /* answers older than the window */
    SQ_IDEM_CLAIM,      /* claim a key, or take over a stale claim */
    SQ_DUE,             /* compactor: partitions with pending files, their bytes and age */
    SQ_LEASE_SELECT,    /* compactor: a partition's pending files and expired leases */
    SQ_LEASE_TAKE,      /* compactor: lease one of them (compare-and-set) */
    SQ_PENDING,         /* backlog gauges */
    SQ_COUNT
};

typedef struct srv_landing {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* wakes the sealer */
    pthread_cond_t cv_flush;
    pbuf **buckets;
    size_t nbuckets, nbufs;
    seg_ref *segs;          /* global refcounts by segment, ascending */
    size_t nsegs, segs_cap;
    uint64_t oldest_seg;    /* lowest segment that may still exist */
    _Atomic int64_t buffered_bytes; /* memory of the buffers and of the seal jobs not
                                     * done yet (what buffer_cap bounds): their data's
                                     * capacity, keys, segment lists and structures */
    int64_t next_seq;       /* next landing file sequence of this node */
    bool force_seal;        /* flush requested */
    uint64_t flush_gen, flush_done_gen;
    uint64_t flush_failed_gen; /* a forced round that left buffers unsealed ... */
    char flush_error[SRV_NOTE_MAX]; /* ... and why: flush reports it instead of waiting */
    int64_t seal_failing_since_ms; /* a buffer has failed to seal since (0 = none is) */
    char seal_error[SRV_NOTE_MAX];  /* ... the first error of the last round */
    char seal_quarantine_reason[SRV_NOTE_MAX]; /* why records last went to the quarantine */
    bool stop;
    pthread_t thr;
    bool thr_started;

    /* idempotency answers not yet in the index (plus in-flight requests) */
    idem_entry **ibuckets;
    size_t nibuckets;
    pthread_cond_t cv_idem;

    pthread_mutex_t idx_mu; /* the index connection (one thread at a time) */
    floe_sql *db;           /* the catalog's database (its own connection) */
    bool shared;            /* several nodes may share the index (PostgreSQL, or a remote
                               warehouse): Idempotency-Keys are claimed in it */
    char *q[SQ_COUNT];      /* statements that read the database's clock (landing.c) */
    _Atomic int64_t pending_files, pending_bytes, oldest_pending_ms;
    pthread_cond_t cv_backlog; /* (with mu) pending_bytes went down */
    /* transcoding a section whose codec differs from its buffer's (apply, under mu) */
    floe_section_coder *coder;
    floe_buf xraw, xenc;
} srv_landing;

/* ---- the server ------------------------------------------------------------------- */
struct floe_server {
    floe_server_config cfg;
    pthread_mutex_t cfg_mu; /* tokens, thresholds */
    floe_server_hooks hooks;
    char *node;
    char *warehouse;
    char *wal_dir;
    char *landing_root;     /* <warehouse>/_landing */
    char *quarantine_root;  /* <warehouse>/_quarantine */

    pthread_mutex_t cat_mu;
    pthread_mutex_t commit_gate; /* the catalog handles' commit gate (landing, maintenance) */
    floe_catalog *catalog;
    floe_catalog_config catcfg; /* how it was opened (leases open their own connection);
                                   a REST catalog's state_db holds the landing index */
    int role;               /* FLOE_SERVER_ROLE_* */
    const floe_landing_commit *swap_job; /* cat_mu: the commit the swap hook records */
    const struct floe_append *swap_append; /* ... and the append carrying it */

    pthread_mutex_t tables_mu;
    srv_table **tables;
    size_t ntables, tables_cap;

    srv_wal wal;
    srv_landing land;
    srv_metrics m;

    /* compactor */
    pthread_mutex_t comp_mu;
    pthread_cond_t comp_cv;
    bool comp_stop, comp_force;
    uint64_t comp_gen, comp_done_gen;
    int comp_round_rc;      /* result of the last forced round (flush with compact) */
    floe_error comp_round_err;
    int64_t comp_round_events, comp_round_files; /* ... what it committed */
    floe_strlist comp_round_fails; /* ... "<table>\t<partition>\t<error>" per failure */
    pthread_t comp_thr;
    bool comp_started;
    _Atomic int64_t compact_lag_ms;
    struct srv_comp *comp;  /* compactor.c: partition leases and their renewer */

    /* http */
    void *mhd;
    uint16_t port;
    struct floe_connguard *guard; /* slow and idle clients (common/connguard.h) */
    _Atomic bool watch_stop; /* the probe thread's */
    _Atomic bool stopping;
    floe_server_config *old_cfgs; /* replaced by reload; kept until close */
    size_t nold_cfgs;
    _Atomic int64_t inflight;
    uint64_t route_seed;    /* ingest.c's partition tuple hash: random per process */
    floe_budget budget;           /* the in-flight budget (srv_budget_hold); its limit is
                                   * max_inflight_bytes (reload moves it) */
    _Atomic int64_t pooled_bytes; /* idle request scratch kept for reuse, all tables (held
                                   * in budget.used too; at most budget.limit / 4) */

    struct srv_maint *maint; /* maint.c; NULL when maintenance is off */

    /* Started while the catalog database or the object store could not be reached
     * (server.c): posts go into the WAL only, the tables come from their local copies,
     * keyed posts, flushes and schema changes are refused (503), and the services
     * thread retries the rest of the start until it succeeds, then replays the WAL
     * (srv_wal_catch_up) and starts sealing, compaction and maintenance. */
    _Atomic bool offline;
    pthread_t services_thr;
    bool services_started;

    pthread_mutex_t health_mu;
    srv_health_item health[SRV_H_COUNT];
    pthread_t probe_thr;    /* http.c: the catalog database and the object store */
    bool probe_started;
    struct srv_kafka **kafka; /* kafka.c: the [source kafka] consumers */
    size_t nkafka;
};

/* Record a part's state: ok, or failing with a message (the first failure of a run sets
 * since_ms; later ones count). */
void srv_health_ok(floe_server *s, int which);
void srv_health_fail(floe_server *s, int which, const char *fmt, ...) FLOE_PRINTF(3, 4);
/* Format into dst (cap bytes) in full, or, when it does not fit, cut and ended with
 * "... (shortened)" so that a cut name or path is never taken for the whole one. */
void srv_note(char *dst, size_t cap, const char *fmt, ...) FLOE_PRINTF(3, 4);
void srv_note_v(char *dst, size_t cap, const char *fmt, va_list ap) FLOE_PRINTF(3, 0);
/* ms since the epoch as 2026-01-02T03:04:05.678Z */
void srv_iso_ms(int64_t ms, char out[32]);

/* tables.c */
int srv_table_get(floe_server *s, const char *name, const uint8_t *sample, size_t n,
                  srv_table **out, floe_error *err);
srv_table *srv_table_find(floe_server *s, const char *name);
void srv_table_free(srv_table *t);
int srv_table_evolve(floe_server *s, srv_table *t, const uint8_t *body, size_t n,
                     bool is_array, floe_error *err);
/* Adopt the table's current schema and default spec from the catalog unless they are
 * schema_id / spec_id already (the ids a compaction just read). */
int srv_table_sync(floe_server *s, srv_table *t, int32_t schema_id, int32_t spec_id,
                   floe_error *err);
/* Table t is gone from the catalog (dropped while served). When the server would create
 * it on a first post (configured, or auto_create), it is created again with the schema
 * and spec posts are checked against (logged): 0, as when it exists again anyway. Else
 * FLOE_ENOTFOUND with the reason ("table NS.NAME was dropped", and why it cannot be
 * created again), and t is marked dropped. Other errors (the catalog does not answer)
 * decide nothing. Takes cat_mu. */
int srv_table_recreate(floe_server *s, srv_table *t, floe_error *err);
/* *gone: the catalog does not name table name (ns.table) at all (not: its metadata
 * cannot be read). */
int srv_table_gone(floe_server *s, const char *name, bool *gone, floe_error *err);
int srv_table_load_configured(floe_server *s, floe_error *err);
/* The configured tables from their local copies (a start without the catalog): those
 * without one are logged and loaded at their first post once the catalog answers. */
void srv_table_load_copies(floe_server *s);
floe_schema_mode srv_table_mode(floe_server *s, const srv_table *t);
/* The same by the table's name (its configuration only: no catalog). */
floe_schema_mode srv_table_mode_named(floe_server *s, const char *name);

/* ingest.c */
typedef struct srv_post {
    const char *table;
    const char *key;        /* may be NULL */
    const uint8_t *body;    /* decoded */
    size_t n;
    bool is_array_ok;       /* application/json: a JSON array is allowed */
    const char *source;     /* for the quarantine */
    int64_t held;           /* of the in-flight budget, held by the caller for this request
                               (its body): a request holding more than the whole budget
                               is refused with 413 */
} srv_post;
/* Returns the HTTP status; *answer (floe_malloc'ed JSON) is the body. */
int srv_ingest(floe_server *s, const srv_post *p, char **answer, size_t *answer_len,
               int *retry_after);
void srv_scratch_free(srv_scratch *sc);
/* The top-level elements of a JSON array, from p[i] (just past its '[', or the first byte
 * of one of its elements) up to n: fn(ctx, start, end) for each element's span, white
 * space around it left out. *pos (when set) receives the index just past the closing ']',
 * or n. Returns 1 when the array closed, 0 when n came first, FLOE_ECORRUPT at an empty
 * element (a ',' with nothing before it), else fn's error. Values are not checked. */
int srv_json_array_elements(const uint8_t *p, size_t i, size_t n,
                            int (*fn)(void *ctx, size_t start, size_t end), void *ctx,
                            size_t *pos);
/* The in-flight budget (max_inflight_bytes): every byte the server holds for requests
 * (raw and decoded bodies, decoder state, parse state) is taken from it before it is
 * allocated. *held is what the caller holds; make it `want`: giving back always works;
 * taking more fails with FLOE_EBUSY when the budget is in use by others now (answer 503 +
 * Retry-After) or FLOE_ELIMIT when want + other (what the same request holds elsewhere)
 * is more than the whole budget (answer 413). *held changes only on success. */
int srv_budget_hold(floe_server *s, int64_t *held, int64_t want, int64_t other);
void srv_budget_release(floe_server *s, int64_t *held);
/* A refusal by the budget (rc FLOE_EBUSY: 503 + Retry-After, counted; FLOE_ELIMIT: 413;
 * else 500): the status, *retry_after and the message (static text). */
int srv_budget_status(floe_server *s, int rc, int *retry_after, const char **msg);
/* Room for `extra` more bytes in b (floe_buf_reserve), its growth taken from the budget
 * first (as srv_budget_hold). FLOE_ELIMIT also past b->max; FLOE_ENOMEM. */
int srv_buf_room(floe_server *s, int64_t *held, int64_t other, floe_buf *b, size_t extra);
/* Content-Encoding gzip / x-gzip / zstd, decoded as the body arrives. */
typedef struct srv_decoder srv_decoder;
/* Grow out by at least `want` bytes of room (the caller takes it from the budget first):
 * 0, or a negative code that stops the decoder and is returned by srv_decoder_feed. */
typedef int (*srv_room_fn)(void *ctx, floe_buf *out, size_t want);
/* FLOE_EUNSUPPORTED for another encoding, FLOE_ENOMEM. */
int srv_decoder_new(const char *encoding, srv_decoder **out, floe_error *err);
void srv_decoder_free(srv_decoder *d);
/* Bytes the decoder itself holds (its window and state). */
size_t srv_decoder_bytes(const srv_decoder *d);
/* Bytes it may hold once it has decoded p[0..n), the next bytes of the body (the window a
 * zstd frame starting there declares, up to the 8 MiB accepted): taken from the budget
 * before srv_decoder_feed. */
size_t srv_decoder_ahead(const srv_decoder *d, const uint8_t *p, size_t n);
/* Decode p[0..n) (the next bytes of the body) onto out. More than cap decoded bytes:
 * FLOE_ELIMIT at once (the rest is not decoded); corrupt stream FLOE_ECORRUPT; room's own
 * codes. out grows only through room. */
int srv_decoder_feed(srv_decoder *d, const uint8_t *p, size_t n, size_t cap, floe_buf *out,
                     srv_room_fn room, void *ctx, floe_error *err);
/* The body is complete: FLOE_ECORRUPT when the stream is truncated. */
int srv_decoder_finish(srv_decoder *d, floe_error *err);
/* Decode a whole body in memory (the fuzz target's entry): as above, out growing freely. */
int srv_decode_body(const uint8_t *p, size_t n, const char *encoding, size_t cap,
                    floe_buf *out, floe_error *err);

/* wal.c */
/* Open the WAL: replay its segments into the buffers (replay) or, on a start without the
 * catalog database or the object store, only find the highest frame id in them (frames
 * are then kept in the WAL, not buffered, until srv_wal_catch_up); then a new segment. */
int srv_wal_open(floe_server *s, bool replay, floe_error *err);
/* Once the index is reachable: hold the writer, replay every segment (the one being
 * written up to its last fsync) into the buffers, and let the writer buffer from then on. */
int srv_wal_catch_up(floe_server *s, floe_error *err);
int srv_wal_start(floe_server *s, floe_error *err);
int srv_wal_submit(floe_server *s, wal_req *r);
void srv_wal_stop(floe_server *s);
int64_t srv_wal_queued(floe_server *s);

/* landing.c */
int srv_landing_open(floe_server *s, floe_error *err);   /* index, reconcile files */
int srv_landing_start(floe_server *s, floe_error *err);
void srv_landing_stop(floe_server *s);
void srv_landing_close(floe_server *s);
/* Undo a failed srv_landing_open so that it can be tried again (a start without the
 * catalog); the WAL segments' references stay. */
void srv_landing_unopen(floe_server *s);
/* Called by the WAL thread (after the fsync) or the replay for each durable frame. */
int srv_landing_apply(floe_server *s, const floe_frame_view *f, uint64_t segno,
                      bool replay, floe_error *err);
/* Highest frame id the index knows of this node (next frame id >= this + 1). */
uint64_t srv_landing_max_frame(floe_server *s);
int srv_landing_flush(floe_server *s, floe_error *err);
/* At close, after the last seal: delete every WAL segment nothing needs. */
void srv_landing_release_all(floe_server *s);
void srv_landing_segment_opened(floe_server *s, uint64_t segno);
/* Idempotency: 0 = not seen (an in-flight entry, and on a shared index a claim, are now
 * held by the caller), 1 = answer found (*answer malloc'ed), FLOE_EBUSY = another node
 * holds the key's claim (answer 409). */
int srv_idem_begin(floe_server *s, const char *table, const char *key, char **answer);
void srv_idem_abort(floe_server *s, const char *table, const char *key);
/* One statement on the index connection; the caller holds idx_mu. */
int srv_index_exec(floe_server *s, const char *sql, const char *const *params,
                   size_t nparams, floe_error *err);
/* Mark the landing files of ids ("<node>-<seq>") committed on db (the swap hook's
 * connection, inside the swap's transaction) - each only while it is still compacting
 * under owner's lease: FLOE_ECANCELLED otherwise (the swap is then rolled back). */
int srv_index_mark_committed(floe_sql *db, const char *const *ids, size_t n,
                             const char *owner, int64_t snapshot, floe_error *err);
/* Decimal text of v in buf (for statement parameters). */
const char *srv_i64(char buf[24], int64_t v);
int64_t srv_atoi64(const char *s);
/* Pending files/bytes/oldest gauges from the index (the sealer does it every second, the
 * compactor after every job); wakes the posts waiting for the backlog to shrink. */
void srv_landing_refresh_metrics(floe_server *s);
/* /healthz lines about sealing (appended to b); returns false when a buffer has been
 * failing to seal for a minute or more. */
bool srv_landing_health(floe_server *s, floe_buf *b);
/* Hold a post while the landing backlog (pending_bytes) is over max_pending_bytes, up to
 * wait_ms. 0 = go on, FLOE_EBUSY = still over after wait_ms (answer 503). */
int srv_landing_wait_backlog(floe_server *s, int64_t wait_ms);

/* compactor.c */
int srv_compactor_start(floe_server *s, floe_error *err);
void srv_compactor_stop(floe_server *s);
/* A forced round (flush with compact), waited for. round (may be NULL) receives what it
 * committed and its failures (the caller frees fails). Returns the round's first failure. */
typedef struct srv_round {
    int64_t events, files;
    floe_strlist fails;     /* "<table>\t<partition>\t<error>" */
} srv_round;
int srv_compactor_run_now(floe_server *s, srv_round *round, floe_error *err);
/* The landing files of index rows id <= cutoff that are not committed yet, by partition,
 * each with why (fails: a round's failures; a file or partition lease and its holder
 * until when; otherwise not reached yet): appended to json as an array of at most 100
 * objects. *files and *parts receive the totals. */
int srv_compactor_pending(floe_server *s, int64_t cutoff, const floe_strlist *fails,
                          floe_buf *json, int64_t *files, int64_t *parts, floe_error *err);
/* The highest landing index row id (0 when none). */
int srv_landing_max_id(floe_server *s, int64_t *out, floe_error *err);

/* What a conversion into a table needs from it (compactor.c; the Kafka source too). */
typedef struct srv_job_table {
    floe_schema *schema;            /* current schema */
    floe_partition_spec *spec;      /* default spec, bound to schema */
    floe_metrics_config *metrics;   /* write.metadata.metrics.* */
    floe_pq_write_options write;    /* Snappy and the configured target unless the table
                                       sets its own */
    char *rec_dir;                  /* data dir as the table records paths */
    char *phys_dir;                 /* ... and where it is */
    floe_table_confinement *conf;   /* what of it srv_files_delete may delete */
} srv_job_table;
/* The target file size the configuration sets for the table, or -1 (takes cfg_mu: call
 * it before cat_mu). */
int64_t srv_configured_target(floe_server *s, const char *tbl);
/* Read it from ft (loaded by the caller, under cat_mu); target from the above. */
int srv_job_table_read(const srv_table *t, floe_table *ft, int64_t target, srv_job_table *jt,
                       floe_error *err);
void srv_job_table_free(srv_job_table *jt);
/* The data files a conversion wrote, as the table will record them: set jt and an arena,
 * pass srv_files_on_file as floe_convert_options.on_file. */
typedef struct srv_files {
    const srv_job_table *jt;
    floe_arena arena;               /* the records and everything they point at */
    floe_data_file *files;
    size_t n, cap;
    floe_strlist uris;              /* where they are, for deleting */
} srv_files;
void srv_files_init(srv_files *fc, const srv_job_table *jt);
int srv_files_on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                      const floe_value *partition, size_t npartition, floe_error *err);
/* Delete the files through io, those jt's confinement holds (floe/table.h); the rest are
 * kept and logged. Not thread-safe for one jt. */
void srv_files_delete(floe_io *io, srv_files *fc);
void srv_files_free(srv_files *fc); /* the records; the files stay */

/* kafka.c: [source kafka NAME] consumers (one thread each) */
int srv_kafka_check(const floe_server_source_config *src, floe_error *err);
int srv_kafka_start(floe_server *s, floe_error *err);
/* Commit what every source holds, then stop (close) or go on. */
void srv_kafka_stop(floe_server *s);
int srv_kafka_flush(floe_server *s, floe_error *err);
void srv_kafka_metrics(floe_server *s, floe_buf *b);
bool srv_valid_source_name(const char *name);

/* http.c */
int srv_http_start(floe_server *s, floe_error *err);
void srv_http_stop(floe_server *s);

/* maint.c: the maintenance thread (own catalog connection and lease store; takes
 * tables_mu briefly to see new tables). stop waits for the job in progress. */
int srv_maint_start(floe_server *s, floe_error *err);
void srv_maint_stop(floe_server *s);   /* also frees; safe when never started */
/* New [maintain] settings and run log for the running scheduler (none running: 0). */
int srv_maint_reload(floe_server *s, const char *maint_config, const char *run_log,
                     floe_error *err);
void srv_maint_metrics(floe_server *s, floe_buf *b);
/* Jobs whose last run failed; the first one's table, job and error in msg. */
int srv_maint_failing(floe_server *s, char *msg, size_t n);

/* config.c */
int srv_config_copy(const floe_server_config *src, floe_server_config *dst, floe_error *err);

/* helpers */
/* Name the calling thread (top, perf and bench/ingest tell the parts apart by it). */
void srv_thread_name(const char *name);
int64_t srv_table_setting(floe_server *s, const char *table, int which);
enum { SET_SEAL_BYTES, SET_SEAL_AGE, SET_COMPACT_BYTES, SET_COMPACT_AGE, SET_TARGET };
bool srv_valid_table_name(const char *name);

/* The database of the landing index, the leases and the answers: the catalog's own, or
 * a REST catalog's state database. */
static inline const char *srv_state_uri(const floe_server *s) {
    return s->catcfg.state_db ? s->catcfg.state_db : s->catcfg.uri;
}

#endif
