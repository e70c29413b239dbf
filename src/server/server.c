/*
 * server.c - the life of a `floe serve` process: open (recovery), reload, flush, close.
 *
 * Start order: landing index (reconcile files), WAL replay into the buffers, configured
 * tables, then the threads (WAL writer, sealer, compactor, maintenance) and last the HTTP
 * listener, so no request is taken before recovery is complete.
 *
 * Stop order (SIGTERM): stop taking connections and let in-flight requests finish (their
 * frames reach the WAL), let the maintenance job in progress finish (maint.c), stop the
 * WAL writer, let the compactor finish its partition, seal every buffer, store the
 * idempotency answers, delete the WAL segments.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "floe/io.h"
#include "server_internal.h"

void srv_thread_name(const char *name) {
    (void)pthread_setname_np(pthread_self(), name); /* cosmetic: failure is harmless */
}

void srv_iso_ms(int64_t ms, char out[32]) {
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

const char *const srv_health_names[SRV_H_COUNT] = {"wal", "sealer", "compactor", "catalog",
                                                   "object_store", "maintenance", "state_db"};

void srv_health_ok(floe_server *s, int which) {
    pthread_mutex_lock(&s->health_mu);
    srv_health_item *h = &s->health[which];
    if (h->failing)
        floe_log(FLOE_LOG_INFO, "serve: %s: working again after %llu failures",
                 srv_health_names[which], (unsigned long long)h->failures);
    h->failing = false;
    h->failures = 0;
    h->error[0] = 0;
    pthread_mutex_unlock(&s->health_mu);
}

void srv_note_v(char *dst, size_t cap, const char *fmt, va_list ap) {
    static const char cut[] = "... (shortened)";
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n >= 0 && (size_t)n < cap)
        return;
    if (cap >= sizeof cut) {
        /* not inside a UTF-8 sequence */
        size_t end = cap - sizeof cut;
        while (end > 0 && ((unsigned char)dst[end] & 0xC0) == 0x80)
            end--;
        memcpy(dst + end, cut, sizeof cut);
    } else if (cap) {
        dst[0] = '\0';
    }
}

void srv_note(char *dst, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    srv_note_v(dst, cap, fmt, ap);
    va_end(ap);
}

void srv_health_fail(floe_server *s, int which, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->health_mu);
    srv_health_item *h = &s->health[which];
    if (!h->failing)
        h->since_ms = floe_wall_ms();
    h->failing = true;
    h->failures++;
    srv_note_v(h->error, sizeof h->error, fmt, ap);
    pthread_mutex_unlock(&s->health_mu);
    va_end(ap);
}

static void server_free(floe_server *s) {
    if (s->catalog)
        floe_catalog_close(s->catalog);
    floe_catalog_config_reset(&s->catcfg);
    srv_landing_close(s);
    for (size_t i = 0; i < s->ntables; i++)
        srv_table_free(s->tables[i]);
    floe_free(s->tables);
    floe_server_config_reset(&s->cfg);
    for (size_t i = 0; i < s->nold_cfgs; i++)
        floe_server_config_reset(&s->old_cfgs[i]);
    floe_free(s->old_cfgs);
    floe_free(s->node);
    floe_free(s->warehouse);
    floe_free(s->wal_dir);
    floe_free(s->landing_root);
    floe_free(s->quarantine_root);
    floe_strlist_free(&s->comp_round_fails);
    pthread_mutex_destroy(&s->cfg_mu);
    pthread_mutex_destroy(&s->cat_mu);
    pthread_mutex_destroy(&s->commit_gate);
    pthread_mutex_destroy(&s->tables_mu);
    pthread_mutex_destroy(&s->wal.mu);
    pthread_cond_destroy(&s->wal.cv_work);
    pthread_cond_destroy(&s->wal.cv_done);
    pthread_mutex_destroy(&s->land.mu);
    pthread_mutex_destroy(&s->land.idx_mu);
    pthread_cond_destroy(&s->land.cv);
    pthread_cond_destroy(&s->land.cv_flush);
    pthread_cond_destroy(&s->land.cv_backlog);
    pthread_cond_destroy(&s->land.cv_idem);
    pthread_mutex_destroy(&s->comp_mu);
    pthread_cond_destroy(&s->comp_cv);
    pthread_mutex_destroy(&s->health_mu);
    floe_free(s);
}

/* ---- the part of a start that needs the catalog database and the object store ------ */

/* The catalog, the landing index (watermarks, files to reconcile) and the configured
 * tables. */
static int open_services(floe_server *s, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_catalog_open(&s->catcfg, &s->catalog, err));
    floe_catalog_set_commit_gate(s->catalog, &s->commit_gate);
    FLOE_FORWARD_IF_ERROR(srv_landing_open(s, err));
    return srv_table_load_configured(s, err);
}

/* Undo a failed open_services (the WAL's segment references stay; the tables loaded
 * stay too once requests may hold them: drop_tables only before HTTP starts). */
static void unopen_services(floe_server *s, bool drop_tables) {
    srv_landing_unopen(s);
    for (size_t i = 0; drop_tables && i < s->ntables; i++)
        srv_table_free(s->tables[i]);
    if (drop_tables)
        s->ntables = 0;
    if (s->catalog)
        floe_catalog_close(s->catalog);
    s->catalog = NULL;
}

/* Errors of a service that does not answer (connection refused, timeouts, I/O), which a
 * later try may not have; anything else (a bad configuration, a corrupt table) stops the
 * start. */
static bool outage(int rc) {
    return rc == FLOE_EIO || rc == FLOE_ETIMEOUT || rc == FLOE_EBUSY;
}

static int start_services(floe_server *s, floe_error *err) {
    if (s->role != FLOE_SERVER_ROLE_COMPACTOR && !s->land.thr_started)
        FLOE_FORWARD_IF_ERROR(srv_landing_start(s, err));
    if (!s->comp_started) {
        int rc = srv_compactor_start(s, err);
        if (rc < 0) {
            srv_compactor_stop(s); /* frees what it set up: tried again */
            return rc;
        }
    }
    if (!s->maint)
        FLOE_FORWARD_IF_ERROR(srv_maint_start(s, err));
    /* the Kafka consumers read and commit offsets through the catalog */
    if (s->role != FLOE_SERVER_ROLE_COMPACTOR && !s->kafka)
        FLOE_FORWARD_IF_ERROR(srv_kafka_start(s, err));
    return 0;
}

static void offline_health(floe_server *s, const char *why) {
    srv_health_fail(s, SRV_H_SEALER, "not started: the catalog database or the object store "
                    "cannot be reached (%s); posts are kept in the WAL until they answer",
                    why);
    srv_health_fail(s, SRV_H_COMPACTOR, "not started: the catalog database or the object "
                    "store cannot be reached");
}

/* Sleep ms, or less when the server stops; true when it stops. */
static bool nap(floe_server *s, int64_t ms) {
    for (int64_t t = 0; t < ms && !atomic_load(&s->stopping); t += 100)
        usleep(100000);
    return atomic_load(&s->stopping);
}

/* A start without the services: try the rest of it with a backoff (0.5 s doubling to
 * 10 s) until it succeeds - open the services, replay the WAL into the buffers (every
 * frame taken meanwhile included; keyed posts were refused, so no answer is missing from
 * memory), start sealing, compaction and maintenance - then take keyed posts again. */
static void *services_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-services");
    int64_t backoff = 500;
    bool opened = false, replayed = false;
    while (!nap(s, backoff)) {
        floe_error e;
        floe_error_clear(&e);
        int rc = 0;
        if (!opened) {
            rc = open_services(s, &e);
            if (rc < 0)
                unopen_services(s, false);
            opened = rc == 0;
        }
        if (rc == 0 && !replayed) {
            rc = srv_wal_catch_up(s, &e);
            if (rc < 0) { /* some frames may be buffered: only a restart replays cleanly */
                floe_log(FLOE_LOG_ERROR, "serve: replaying the WAL: %s; restart the server",
                         e.msg);
                srv_health_fail(s, SRV_H_SEALER, "replaying the WAL failed (%s): "
                                "restart the server", e.msg);
                break;
            }
            replayed = true;
        }
        if (rc == 0)
            rc = start_services(s, &e);
        if (rc == 0) {
            atomic_store(&s->offline, false);
            srv_health_ok(s, SRV_H_SEALER);
            srv_health_ok(s, SRV_H_COMPACTOR);
            floe_log(FLOE_LOG_INFO, "serve: the catalog database and the object store answer: "
                     "the WAL is replayed, sealing and compaction run");
            break;
        }
        floe_log(FLOE_LOG_WARN, "serve: the services still do not answer: %s", e.msg);
        offline_health(s, e.msg);
        backoff = backoff * 2 > 10000 ? 10000 : backoff * 2;
    }
    return NULL;
}

static void stop_threads(floe_server *s) {
    atomic_store(&s->stopping, true);
    srv_http_stop(s);
    if (s->services_started) {
        pthread_join(s->services_thr, NULL);
        s->services_started = false;
    }
    srv_kafka_stop(s); /* commits what its consumers hold */
    srv_maint_stop(s);
    srv_wal_stop(s);
    srv_compactor_stop(s);
    srv_landing_stop(s);
}

int floe_server_open(const floe_server_config *cfg, const floe_server_hooks *hooks,
                     floe_server **out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_server_config_check(cfg, err));
    floe_server *s = floe_calloc(1, sizeof *s);
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    char *db = NULL;
    pthread_mutex_init(&s->cfg_mu, NULL);
    pthread_mutex_init(&s->cat_mu, NULL);
    pthread_mutex_init(&s->commit_gate, NULL);
    pthread_mutex_init(&s->tables_mu, NULL);
    pthread_mutex_init(&s->wal.mu, NULL);
    pthread_cond_init(&s->wal.cv_work, NULL);
    pthread_cond_init(&s->wal.cv_done, NULL);
    pthread_mutex_init(&s->land.mu, NULL);
    pthread_mutex_init(&s->land.idx_mu, NULL);
    pthread_cond_init(&s->land.cv, NULL);
    pthread_cond_init(&s->land.cv_flush, NULL);
    pthread_cond_init(&s->land.cv_backlog, NULL);
    pthread_cond_init(&s->land.cv_idem, NULL);
    pthread_mutex_init(&s->comp_mu, NULL);
    pthread_cond_init(&s->comp_cv, NULL);
    pthread_mutex_init(&s->health_mu, NULL);
    s->wal.fd = -1;
    if (getrandom(&s->route_seed, sizeof s->route_seed, 0) != (ssize_t)sizeof s->route_seed)
        s->route_seed = (uint64_t)floe_now_ns() ^ (uint64_t)(uintptr_t)s;
    if (hooks)
        s->hooks = *hooks;
    FLOE_CHECK(srv_config_copy(cfg, &s->cfg, err));
    atomic_store(&s->budget.limit, s->cfg.max_inflight_bytes);
    if (!s->cfg.listen && !(s->cfg.listen = floe_strdup("127.0.0.1:8080")))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    s->warehouse = floe_strdup(cfg->warehouse ? cfg->warehouse : "./warehouse");
    s->node = floe_strdup(cfg->node_id ? cfg->node_id : "node1");
    if (!s->warehouse || !s->node)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    s->role = cfg->role;
    if (s->role == FLOE_SERVER_ROLE_INGEST)
        s->cfg.compact = false; /* compacts only when a flush asks for it */
    /* The WAL is the local, fsynced part of durability: it never goes to object storage.
     * A remote warehouse therefore needs wal_dir set (no silent local default that a
     * container restart would lose). */
    bool remote = strstr(s->warehouse, "://") && strncmp(s->warehouse, "file:", 5);
    if (cfg->wal_dir && strstr(cfg->wal_dir, "://") && strncmp(cfg->wal_dir, "file:", 5))
        FLOE_FAIL(err, FLOE_EINVALID, "wal_dir %s: the WAL must be on a local disk",
                  cfg->wal_dir);
    if (remote && !cfg->wal_dir && s->role != FLOE_SERVER_ROLE_COMPACTOR)
        FLOE_FAIL(err, FLOE_EINVALID, "warehouse %s is remote: set wal_dir to a local folder "
                  "(the WAL is fsynced on this machine's disk)", s->warehouse);
    if (remote && !cfg->catalog)
        FLOE_FAIL(err, FLOE_EINVALID, "warehouse %s is remote: set catalog (postgresql://... "
                  "to share it between nodes, or a local SQLite file)", s->warehouse);
    s->wal_dir = cfg->wal_dir ? floe_strdup(cfg->wal_dir)
                              : floe_asprintf("%s/_wal/%s", s->warehouse, s->node);
    s->landing_root = floe_asprintf("%s/_landing", s->warehouse);
    s->quarantine_root = floe_asprintf("%s/_quarantine", s->warehouse);
    if (!s->wal_dir || !s->landing_root || !s->quarantine_root)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    bool pg = cfg->catalog && (!strncmp(cfg->catalog, "postgresql", 10) ||
                               !strncmp(cfg->catalog, "postgres://", 11));
    bool rest = cfg->catalog && (!strncmp(cfg->catalog, "http://", 7) ||
                                 !strncmp(cfg->catalog, "https://", 8));
    if (remote && rest && !cfg->state_db)
        FLOE_FAIL(err, FLOE_EINVALID, "warehouse %s is remote: with a REST catalog set "
                  "state_db (postgresql://... to share it between nodes, or a local SQLite "
                  "file) for the landing index and leases", s->warehouse);
    /* Any other URI (mysql://...) would otherwise be taken as a relative file name and
     * quietly become a fresh SQLite catalog (with the password in the path). The scheme
     * only in the message: the rest may hold credentials. */
    if (!pg && !rest && cfg->catalog && strstr(cfg->catalog, "://") &&
        strncmp(cfg->catalog, "sqlite://", 9))
        FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                  "catalog %.*s://...: floe serve takes a SQLite catalog (a path or "
                  "sqlite:///path), a PostgreSQL one (postgresql://...) or a REST one "
                  "(http(s)://...)",
                  (int)(strstr(cfg->catalog, "://") - cfg->catalog), cfg->catalog);
    if (!remote)
        FLOE_CHECK(floe_io_mkdirs(s->cfg.io, s->warehouse, err));
    if (pg || rest)
        db = floe_strdup(cfg->catalog);
    else if (cfg->catalog)
        /* SQLAlchemy's reading, as every other command's: sqlite:///rel.db is relative,
         * sqlite:////abs.db absolute */
        db = floe_strdup(!strncmp(cfg->catalog, "sqlite:///", 10) ? cfg->catalog + 10
                         : !strncmp(cfg->catalog, "sqlite://", 9) ? cfg->catalog + 9
                                                                  : cfg->catalog);
    else
        db = floe_asprintf("%s/catalog.db", s->warehouse);
    if (!db)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* Tables record their location: under a relative warehouse they would be readable
     * only from this working directory. (Landing paths stay as configured: the index
     * holds them.) */
    char *wh_abs = NULL;
    if (!strstr(s->warehouse, "://") && s->warehouse[0] != '/') {
        char *abs = realpath(s->warehouse, NULL);
        if (!abs)
            FLOE_FAIL(err, FLOE_EIO, "warehouse %s: %s", s->warehouse, strerror(errno));
        wh_abs = floe_strdup(abs);
        free(abs); /* realpath's allocation */
        if (!wh_abs)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    s->catcfg.io = s->cfg.io;
    s->catcfg.sql = s->cfg.sql;
    s->catcfg.name = floe_strdup("default");
    s->catcfg.type = floe_strdup(rest ? "rest" : "sql");
    s->catcfg.uri = db;
    if (rest) {
        /* what the REST catalog does not hold: landing index, leases, answers */
        char *local = cfg->state_db ? NULL : floe_io_local_path(s->warehouse);
        s->catcfg.state_db = cfg->state_db ? floe_strdup(cfg->state_db)
                                           : local ? floe_io_join(local, "_floe_state.db") : NULL;
        floe_free(local);
        if (!s->catcfg.state_db)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    /* a REST catalog's [catalog] warehouse is what its /v1/config is asked for */
    if (rest && cfg->catalog_warehouse) {
        floe_free(wh_abs);
        s->catcfg.warehouse = floe_strdup(cfg->catalog_warehouse);
    } else {
        s->catcfg.warehouse = wh_abs ? wh_abs : floe_strdup(s->warehouse);
    }
    db = NULL;
    /* [catalog]: auth, prefix, headers, SigV4 (its secrets are in no message: errors
     * name the uri) */
    if (rest)
        FLOE_CHECK(floe_rest_properties_copy(&cfg->rest, &s->catcfg.rest, err));
    if (!s->catcfg.name || !s->catcfg.type || !s->catcfg.warehouse)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    bool ingest = s->role != FLOE_SERVER_ROLE_COMPACTOR;
    floe_error oe;
    floe_error_clear(&oe);
    int orc = open_services(s, &oe);
    if (orc < 0 && (!ingest || !outage(orc))) {
        *err = oe;
        rc = orc;
        goto done;
    }
    if (orc < 0) {
        /* the WAL is local: take posts, and finish the start once the services answer */
        floe_log(FLOE_LOG_WARN, "serve: starting without the catalog database or the object "
                 "store (%s): posts are taken into the WAL; the rest of the start is retried",
                 oe.msg);
        unopen_services(s, true);
        atomic_store(&s->offline, true);
        offline_health(s, oe.msg);
    }
    if (ingest)
        FLOE_CHECK(srv_wal_open(s, orc == 0, err));
    if (orc < 0)
        srv_table_load_copies(s);
    if (ingest)
        FLOE_CHECK(srv_wal_start(s, err));
    if (orc == 0)
        FLOE_CHECK(start_services(s, err));
    if (ingest)
        FLOE_CHECK(srv_http_start(s, err));
    if (orc < 0) {
        if (pthread_create(&s->services_thr, NULL, services_main, s) != 0)
            FLOE_FAIL(err, FLOE_EINTERNAL, "cannot start the services thread");
        s->services_started = true;
    }
    *out = s;
    s = NULL;
done:
    floe_free(db);
    if (s) {
        stop_threads(s);
        server_free(s);
    }
    return rc;
}

uint16_t floe_server_port(const floe_server *s) {
    return s->port;
}

int floe_server_reload(floe_server *s, const floe_server_config *cfg, floe_error *err) {
    if (atomic_load(&s->offline)) /* maintenance is not started yet */
        return floe_error_set(err, FLOE_EBUSY, "the catalog database or the object store has "
                              "not answered since the server started: reload once it has");
    floe_server_config fresh;
    FLOE_FORWARD_IF_ERROR(srv_config_copy(cfg, &fresh, err));
    floe_server_config *olds = floe_realloc(s->old_cfgs, (s->nold_cfgs + 1) * sizeof *olds);
    if (!olds) {
        floe_server_config_reset(&fresh);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    s->old_cfgs = olds;
    int rc = srv_maint_reload(s, fresh.maint_config, fresh.maint_run_log, err);
    if (rc < 0) {
        floe_server_config_reset(&fresh);
        return rc;
    }
    if (fresh.maintain != s->cfg.maintain)
        floe_log(FLOE_LOG_WARN, "serve: reload: maintain = %s takes a restart",
                 fresh.maintain ? "true" : "false");
    else if (fresh.maintain && fresh.maint_start_delay_ms != s->cfg.maint_start_delay_ms)
        floe_log(FLOE_LOG_WARN, "serve: reload: maintenance start-delay takes a restart");
    pthread_mutex_lock(&s->cfg_mu);
    /* tokens, table and maintenance settings move to the new values; the rest stays
     * (restart) */
    floe_server_config *keep = &s->old_cfgs[s->nold_cfgs++];
    floe_server_config_init(keep);
    keep->tokens = s->cfg.tokens;
    keep->ntokens = s->cfg.ntokens;
    keep->tables = s->cfg.tables;
    keep->ntables = s->cfg.ntables;
    keep->defaults = s->cfg.defaults;
    keep->maint_config = s->cfg.maint_config;
    keep->maint_run_log = s->cfg.maint_run_log;
    s->cfg.maint_config = fresh.maint_config;
    s->cfg.maint_run_log = fresh.maint_run_log;
    fresh.maint_config = fresh.maint_run_log = NULL;
    s->cfg.tokens = fresh.tokens;
    s->cfg.ntokens = fresh.ntokens;
    s->cfg.tables = fresh.tables;
    s->cfg.ntables = fresh.ntables;
    s->cfg.defaults = fresh.defaults;
    s->cfg.buffer_cap = fresh.buffer_cap;
    s->cfg.max_request_partitions = fresh.max_request_partitions;
    if (fresh.max_inflight_bytes >= s->cfg.max_body) {
        s->cfg.max_inflight_bytes = fresh.max_inflight_bytes;
        atomic_store(&s->budget.limit, fresh.max_inflight_bytes);
    }
    s->cfg.max_pending_bytes = fresh.max_pending_bytes;
    s->cfg.idempotency_window_ms = fresh.idempotency_window_ms;
    fresh.tokens = NULL;
    fresh.ntokens = 0;
    fresh.tables = NULL;
    fresh.ntables = 0;
    memset(&fresh.defaults, 0, sizeof fresh.defaults);
    pthread_mutex_unlock(&s->cfg_mu);
    floe_server_config_reset(&fresh);
    return 0;
}

static int offline_refusal(floe_error *err) {
    return floe_error_set(err, FLOE_EBUSY, "the catalog database or the object store has not "
                          "answered since the server started: posts are kept in the WAL, and "
                          "sealed and compacted once they answer; retry later");
}

int floe_server_flush(floe_server *s, bool compact, floe_error *err) {
    if (atomic_load(&s->offline))
        return offline_refusal(err);
    if (s->role != FLOE_SERVER_ROLE_COMPACTOR) {
        FLOE_FORWARD_IF_ERROR(srv_kafka_flush(s, err));
        FLOE_FORWARD_IF_ERROR(srv_landing_flush(s, err));
    }
    if (compact)
        FLOE_FORWARD_IF_ERROR(srv_compactor_run_now(s, NULL, err));
    return 0;
}

void floe_flush_result_reset(floe_flush_result *r) {
    floe_free(r->pending_json);
    memset(r, 0, sizeof *r);
}

int floe_server_flush_report(floe_server *s, int64_t wait_ms, floe_flush_result *out,
                             floe_error *err) {
    memset(out, 0, sizeof *out);
    int rc = 0;
    floe_buf json;
    floe_buf_init(&json, 0);
    srv_round round = {0};
    if (atomic_load(&s->offline))
        FLOE_CHECK(offline_refusal(err));
    if (s->role != FLOE_SERVER_ROLE_COMPACTOR) {
        FLOE_CHECK(srv_kafka_flush(s, err));
        FLOE_CHECK(srv_landing_flush(s, err));
    }
    /* the landing files this flush is about: every one registered by now */
    int64_t cutoff = 0;
    FLOE_CHECK(srv_landing_max_id(s, &cutoff, err));
    int64_t deadline = floe_now_ns() / 1000000 + (wait_ms > 0 ? wait_ms : 0);
    for (;;) {
        floe_strlist_free(&round.fails);
        floe_error re;
        floe_error_clear(&re);
        (void)srv_compactor_run_now(s, &round, &re); /* its failures are in the report */
        out->rounds++;
        out->events_committed += round.events;
        out->landing_committed += round.files;
        floe_buf_reset(&json);
        FLOE_CHECK(srv_compactor_pending(s, cutoff, &round.fails, &json, &out->pending_files,
                                         &out->pending_partitions, err));
        int64_t now = floe_now_ns() / 1000000;
        if (out->pending_files == 0 || wait_ms <= 0 || now >= deadline ||
            atomic_load(&s->stopping))
            break;
        /* another round once a lease may have run out or a failure may have cleared */
        int64_t pause = deadline - now < 1000 ? deadline - now : 1000;
        usleep((useconds_t)pause * 1000);
    }
    if (floe_buf_append_byte(&json, 0) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t len;
    out->pending_json = floe_buf_detach(&json, &len);
done:
    floe_buf_free(&json);
    floe_strlist_free(&round.fails);
    return rc;
}

int floe_server_close(floe_server *s, floe_error *err) {
    (void)err;
    if (!s)
        return 0;
    stop_threads(s);
    if (s->role != FLOE_SERVER_ROLE_COMPACTOR && !atomic_load(&s->offline))
        srv_landing_release_all(s); /* (offline: the WAL keeps every frame for the next start) */
    /* the object-store requests of this process (bench/scale reads them) */
    floe_io_stats st;
    floe_io_stats_get(s->cfg.io, &st);
    floe_log(FLOE_LOG_INFO, "serve: %s: object store requests GET %lld PUT %lld LIST %lld "
             "DELETE %lld HEAD %lld, bytes read %lld written %lld", s->node,
             (long long)st.get_requests, (long long)st.put_requests,
             (long long)st.list_requests, (long long)st.delete_requests,
             (long long)st.head_requests, (long long)st.bytes_read,
             (long long)st.bytes_written);
    server_free(s);
    return 0;
}
