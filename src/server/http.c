/*
 * http.c - the HTTP face of `floe serve` on libmicrohttpd: routes, bearer tokens with
 * per-table grants, request limits, /healthz, /metrics, and a watchdog for slow clients.
 *
 * libmicrohttpd runs one thread per connection (capped by max_connections), so a request
 * may block until the WAL fsync that covers its frame without holding anyone else up, and
 * many requests waiting at once is what makes group commit effective.
 *
 * Slow clients: common/connguard.h (header_timeout, read_timeout, and room made for a
 * newcomer when max_connections are open).
 *
 * Memory: the body is taken from the in-flight budget (srv_budget_hold) before it is
 * stored - all of it at the first call when Content-Length announces it, so a request
 * that does not fit is answered 503 before a byte is read - and a gzip or zstd body is
 * decoded as it arrives (srv_decoder), its decoded bytes taken from the budget as they
 * grow, stopping at max_decoded. A failure while the body arrives is answered once it
 * has been read (libmicrohttpd cannot answer in the middle), the rest being discarded.
 */
#include <arpa/inet.h>
#include <limits.h>
#include "common/lazy_mhd.h"
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floe/io.h"

#include "floe/quarantine.h"
#include "server_internal.h"
#include "common/connguard.h"
#include "common/httphead.h"
#include "common/testing.h"

const double srv_lat_bounds_ms[SRV_LAT_BUCKETS] = {1,   2,   5,    10,   20,   50,   100,
                                                   200, 500, 1000, 2000, 5000, 10000, 30000};

enum { REQ_EVENTS = 1, REQ_FLUSH };

typedef struct req_state {
    int kind;
    char table[256];
    char *key;
    char encoding[16];
    int fail_status;        /* set while the body arrives: the answer once it is read */
    int fail_retry;
    char fail_msg[256];
    floe_buf body;          /* identity: the body; gzip/zstd: the decoded body */
    srv_decoder *dec;       /* gzip/zstd */
    int64_t wire;           /* body bytes received */
    int64_t held;           /* of the in-flight budget: body.cap + the decoder's */
    int64_t start_ns;
    struct MHD_Connection *conn;
} req_state;

static void free_answer(void *p) {
    floe_free(p);
}

static void count_status(floe_server *s, int status) {
    int cls = status < 300 ? 0 : status == 401 || status == 403 ? 2 : status == 413 ? 3
              : status == 429 || status == 503                  ? 4
              : status >= 500                                   ? 5
                                                                : 1;
    atomic_fetch_add(&s->m.requests[cls], 1);
}

/* Takes ownership of body. A JSON body ends in a newline, as a line of output does (curl
 * then leaves the prompt on a line of its own); the answers built without one - and those
 * recorded for an idempotency key - get it here. */
static enum MHD_Result respond(floe_server *s, struct MHD_Connection *c, int status,
                               char *body, size_t len, const char *ctype, int retry_after) {
    if (!strcmp(ctype, "application/json") && (len == 0 || body[len - 1] != '\n')) {
        char *nl = floe_realloc(body, len + 1);
        if (!nl) {
            floe_free(body);
            return MHD_NO;
        }
        body = nl;
        body[len++] = '\n';
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(
        len, body, free_answer);
    if (!resp) {
        floe_free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    if (retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    if (status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"floe\"");
    count_status(s, status);
    enum MHD_Result r = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result respond_error(floe_server *s, struct MHD_Connection *c, int status,
                                     const char *msg, int retry_after) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "{\"error\":{\"status\":%d,\"message\":", status);
    floe_json_append_string(&b, (const uint8_t *)msg, strlen(msg));
    floe_buf_printf(&b, "}}");
    size_t len = 0;
    char *body = floe_buf_detach(&b, &len);
    if (!body)
        return MHD_NO;
    return respond(s, c, status, body, len, "application/json", retry_after);
}

/* 0 ok, 401 or 403: a grant for table, or (table NULL) the literal grant `grant`
 * ("admin", "metrics"). Without configured tokens everything is open: the server then
 * listens on loopback only (floe_server_config_check). */
static int authorize(floe_server *s, struct MHD_Connection *c, const char *table,
                     const char *grant) {
    int status = 401;
    pthread_mutex_lock(&s->cfg_mu);
    if (s->cfg.ntokens == 0) {
        status = 0; /* loopback without tokens (floe_server_config_check) */
        goto done;
    }
    const floe_server_token *t = floe_token_find(
        s->cfg.tokens, s->cfg.ntokens,
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"));
    if (!t)
        goto done;
    status = 403;
    for (size_t g = 0; g < t->ngrants; g++)
        if (table ? floe_grant_covers_table(t->grants[g], table) : !strcmp(t->grants[g], grant))
            status = 0;
done:
    pthread_mutex_unlock(&s->cfg_mu);
    return status;
}

static bool media_type_ok(const char *ct) {
    static const char *ok[] = {"application/x-ndjson", "application/ndjson",
                               "application/jsonl", "application/json",
                               "application/x-jsonlines"};
    if (!ct)
        return false;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strlen(ok[i]) == n && !strncasecmp(ct, ok[i], n))
            return true;
    return false;
}

static bool key_ok(const char *k) {
    size_t n = strlen(k);
    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++)
        if (k[i] < 0x21 || k[i] > 0x7e)
            return false;
    return true;
}

/* ---- metrics ------------------------------------------------------------------------ */

static char *metrics_text(floe_server *s, size_t *len) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "# TYPE floe_events_accepted_total counter\n"
                        "# TYPE floe_events_rejected_total counter\n"
                        "# TYPE floe_bytes_accepted_total counter\n"
                        "# TYPE floe_bytes_rejected_total counter\n"
                        "# TYPE floe_unknown_fields_total counter\n"
                        "# TYPE floe_schema_updates_total counter\n");
    pthread_mutex_lock(&s->tables_mu);
    for (size_t i = 0; i < s->ntables; i++) {
        srv_table *t = s->tables[i];
        const char *n = t->name; /* names are [A-Za-z0-9_.-]: no label escaping needed */
        floe_buf_printf(&b,
                        "floe_events_accepted_total{table=\"%s\"} %llu\n"
                        "floe_events_rejected_total{table=\"%s\"} %llu\n"
                        "floe_bytes_accepted_total{table=\"%s\"} %llu\n"
                        "floe_bytes_rejected_total{table=\"%s\"} %llu\n"
                        "floe_unknown_fields_total{table=\"%s\"} %llu\n"
                        "floe_schema_updates_total{table=\"%s\"} %llu\n",
                        n, (unsigned long long)atomic_load(&t->events_accepted), n,
                        (unsigned long long)atomic_load(&t->events_rejected), n,
                        (unsigned long long)atomic_load(&t->bytes_accepted), n,
                        (unsigned long long)atomic_load(&t->bytes_rejected), n,
                        (unsigned long long)atomic_load(&t->unknown_fields), n,
                        (unsigned long long)atomic_load(&t->schema_updates));
    }
    pthread_mutex_unlock(&s->tables_mu);
    int64_t nconns = s->guard ? floe_connguard_open(s->guard) : 0;
    int64_t oldest = atomic_load(&s->land.oldest_pending_ms);
    double lag = oldest ? (double)(floe_wall_ms() - oldest) / 1000.0 : 0.0;
    floe_buf_printf(&b,
                    "# TYPE floe_buffered_bytes gauge\nfloe_buffered_bytes %lld\n"
                    "# TYPE floe_wal_queued_bytes gauge\nfloe_wal_queued_bytes %lld\n"
                    "# TYPE floe_pending_landing_files gauge\nfloe_pending_landing_files %lld\n"
                    "# TYPE floe_pending_landing_bytes gauge\nfloe_pending_landing_bytes %lld\n"
                    "# TYPE floe_compaction_lag_seconds gauge\nfloe_compaction_lag_seconds %.3f\n"
                    "# TYPE floe_landing_files_sealed_total counter\n"
                    "floe_landing_files_sealed_total %llu\n"
                    "# TYPE floe_wal_fsyncs_total counter\nfloe_wal_fsyncs_total %llu\n"
                    "# TYPE floe_wal_frames_total counter\nfloe_wal_frames_total %llu\n"
                    "# TYPE floe_compactions_total counter\nfloe_compactions_total %llu\n"
                    "# TYPE floe_commits_total counter\nfloe_commits_total %llu\n"
                    "# TYPE floe_commit_conflicts_total counter\nfloe_commit_conflicts_total %llu\n"
                    "# TYPE floe_commit_retries_total counter\nfloe_commit_retries_total %llu\n"
                    "# TYPE floe_commit_failures_total counter\nfloe_commit_failures_total %llu\n"
                    "# TYPE floe_idempotent_replays_total counter\n"
                    "floe_idempotent_replays_total %llu\n"
                    "# TYPE floe_landing_files_settled_total counter\n"
                    "floe_landing_files_settled_total %llu\n"
                    "# TYPE floe_events_committed_total counter\n"
                    "floe_events_committed_total %llu\n"
                    "# TYPE floe_seal_failures_total counter\nfloe_seal_failures_total %llu\n"
                    "# TYPE floe_seal_quarantined_records_total counter\n"
                    "floe_seal_quarantined_records_total %llu\n"
                    "# TYPE floe_backlog_waits_total counter\nfloe_backlog_waits_total %llu\n"
                    "# TYPE floe_backlog_wait_seconds_total counter\n"
                    "floe_backlog_wait_seconds_total %.3f\n"
                    "# TYPE floe_inflight_bytes gauge\nfloe_inflight_bytes %lld\n"
                    "# TYPE floe_inflight_limit_bytes gauge\nfloe_inflight_limit_bytes %lld\n"
                    "# TYPE floe_scratch_pooled_bytes gauge\nfloe_scratch_pooled_bytes %lld\n"
                    "# TYPE floe_inflight_refusals_total counter\n"
                    "floe_inflight_refusals_total %llu\n"
                    "# TYPE floe_connections gauge\nfloe_connections %lld\n"
                    "# TYPE floe_connections_evicted_total counter\n"
                    "floe_connections_evicted_total %llu\n"
                    "# TYPE floe_wal_failures_total counter\nfloe_wal_failures_total %llu\n"
                    "# TYPE floe_wal_recoveries_total counter\nfloe_wal_recoveries_total %llu\n"
                    "# TYPE floe_offline gauge\nfloe_offline %d\n",
                    (long long)atomic_load(&s->land.buffered_bytes), (long long)srv_wal_queued(s),
                    (long long)atomic_load(&s->land.pending_files),
                    (long long)atomic_load(&s->land.pending_bytes), lag,
                    (unsigned long long)atomic_load(&s->m.sealed_files),
                    (unsigned long long)atomic_load(&s->m.wal_fsyncs),
                    (unsigned long long)atomic_load(&s->m.wal_frames),
                    (unsigned long long)atomic_load(&s->m.compactions),
                    (unsigned long long)atomic_load(&s->m.commits),
                    (unsigned long long)atomic_load(&s->m.conflicts),
                    (unsigned long long)atomic_load(&s->m.retries),
                    (unsigned long long)atomic_load(&s->m.commit_failures),
                    (unsigned long long)atomic_load(&s->m.idempotent_replays),
                    (unsigned long long)atomic_load(&s->m.settled),
                    (unsigned long long)atomic_load(&s->m.events_committed),
                    (unsigned long long)atomic_load(&s->m.seal_failures),
                    (unsigned long long)atomic_load(&s->m.seal_quarantined_records),
                    (unsigned long long)atomic_load(&s->m.backlog_waits),
                    (double)atomic_load(&s->m.backlog_wait_us) / 1e6,
                    (long long)atomic_load(&s->budget.used),
                    (long long)atomic_load(&s->budget.limit),
                    (long long)atomic_load(&s->pooled_bytes),
                    (unsigned long long)atomic_load(&s->m.budget_refusals), (long long)nconns,
                    (unsigned long long)(s->guard ? floe_connguard_evicted(s->guard) : 0),
                    (unsigned long long)atomic_load(&s->m.wal_failures),
                    (unsigned long long)atomic_load(&s->m.wal_recoveries),
                    (int)atomic_load(&s->offline));
    floe_buf_printf(&b, "# TYPE floe_up gauge\n");
    pthread_mutex_lock(&s->health_mu);
    for (int i = 0; i < SRV_H_COUNT; i++)
        floe_buf_printf(&b, "floe_up{subsystem=\"%s\"} %d\n", srv_health_names[i],
                        !s->health[i].failing);
    pthread_mutex_unlock(&s->health_mu);
    if (!atomic_load(&s->offline)) /* (s->maint is set by then) */
        srv_maint_metrics(s, &b);
    srv_kafka_metrics(s, &b);
    static const char *cls[6] = {"2xx", "4xx", "auth", "413", "busy", "5xx"};
    floe_buf_printf(&b, "# TYPE floe_http_requests_total counter\n");
    for (int i = 0; i < 6; i++)
        floe_buf_printf(&b, "floe_http_requests_total{class=\"%s\"} %llu\n", cls[i],
                        (unsigned long long)atomic_load(&s->m.requests[i]));
    floe_buf_printf(&b, "# TYPE floe_ingest_request_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < SRV_LAT_BUCKETS; i++) {
        cum += atomic_load(&s->m.lat[i]);
        floe_buf_printf(&b, "floe_ingest_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                        srv_lat_bounds_ms[i] / 1000.0, (unsigned long long)cum);
    }
    cum += atomic_load(&s->m.lat[SRV_LAT_BUCKETS]);
    floe_buf_printf(&b, "floe_ingest_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                        "floe_ingest_request_duration_seconds_sum %.6f\n"
                        "floe_ingest_request_duration_seconds_count %llu\n",
                    (unsigned long long)cum,
                    (double)atomic_load(&s->m.lat_sum_us) / 1e6,
                    (unsigned long long)atomic_load(&s->m.lat_count));
    return floe_buf_detach(&b, len);
}

/* ---- health ------------------------------------------------------------------------- */

/* The prober thread: every PROBE_MS, whether the catalog database (with a REST catalog:
 * the state database) answers (its own connection: SELECT 1) and the warehouse's storage
 * (a HEAD or stat of the landing folder), and what maintenance's last runs say; every
 * REST_PROBE_MS whether a REST catalog answers (its own handle: GET /v1/config with the
 * catalog's token, floe_catalog_ping). /healthz only reads what the probes found. The
 * other parts report themselves. */
#define PROBE_MS 2000
#define REST_PROBE_MS 5000

/* Probe the REST catalog on *cat (opened on the first probe, and again after a failed
 * open). */
static void probe_rest(floe_server *s, floe_catalog **cat) {
    floe_error e;
    floe_error_clear(&e);
    int rc = *cat ? floe_catalog_ping(*cat, &e) : floe_catalog_open(&s->catcfg, cat, &e);
    if (rc < 0)
        srv_health_fail(s, SRV_H_CATALOG, "the REST catalog does not answer: %s", e.msg);
    else
        srv_health_ok(s, SRV_H_CATALOG);
}

static int probe_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)ctx, (void)cols, (void)n, (void)err;
    return 0;
}

static void *probe_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-health");
    floe_crash_exempt_thread();
    floe_sql *db = NULL;
    floe_catalog *rest = NULL;
    bool is_rest = s->catcfg.state_db != NULL; /* (only a REST catalog has one) */
    int64_t rest_next_ns = 0;
    while (!atomic_load(&s->watch_stop)) {
        floe_error e;
        floe_error_clear(&e);
        int rc = db ? 0 : floe_sql_open_with(srv_state_uri(s), &s->catcfg.sql, &db, &e);
        if (rc == 0)
            rc = floe_sql_query(db, "SELECT 1", NULL, 0, probe_row, NULL, &e);
        if (rc < 0)
            srv_health_fail(s, is_rest ? SRV_H_STATE_DB : SRV_H_CATALOG,
                            "the %s database does not answer: %s", is_rest ? "state" : "catalog",
                            e.msg);
        else
            srv_health_ok(s, is_rest ? SRV_H_STATE_DB : SRV_H_CATALOG);
        if (is_rest && floe_now_ns() >= rest_next_ns) {
            probe_rest(s, &rest);
            rest_next_ns = floe_now_ns() + REST_PROBE_MS * 1000000LL;
        }
        floe_error_clear(&e);
        bool exists = false;
        if (floe_io_exists(s->cfg.io, s->landing_root, &exists, &e) < 0)
            srv_health_fail(s, SRV_H_STORAGE, "the warehouse's storage does not answer: %s",
                            e.msg);
        else
            srv_health_ok(s, SRV_H_STORAGE);
        char msg[256];
        int failing = atomic_load(&s->offline) ? 0 : srv_maint_failing(s, msg, sizeof msg);
        if (failing)
            srv_health_fail(s, SRV_H_MAINT, "%d job%s failed on %s last run; first: %s", failing,
                            failing > 1 ? "s" : "", failing > 1 ? "their" : "its", msg);
        else
            srv_health_ok(s, SRV_H_MAINT);
        for (int i = 0; i < PROBE_MS / 100 && !atomic_load(&s->watch_stop); i++)
            usleep(100000);
    }
    floe_sql_close(db);
    floe_catalog_close(rest);
    return NULL;
}

/* GET /healthz: 200 while posts are taken ("ok", or "degraded" when another part fails),
 * 503 ("failing") when they are not (the WAL does not write) or a buffer has failed to
 * seal for a minute (srv_landing_health), or the server is stopping. With tokens
 * configured, the error texts (they may name tables and paths) need the metrics or the
 * admin grant; the states are shown to anyone. */
static enum MHD_Result healthz(floe_server *s, struct MHD_Connection *c) {
    bool details = authorize(s, c, NULL, "metrics") == 0 || authorize(s, c, NULL, "admin") == 0;
    bool enabled[SRV_H_COUNT] = {true, s->role != FLOE_SERVER_ROLE_COMPACTOR, true, true, true,
                                 !atomic_load(&s->offline) && s->maint != NULL,
                                 s->catcfg.state_db != NULL};
    srv_health_item h[SRV_H_COUNT];
    pthread_mutex_lock(&s->health_mu);
    memcpy(h, s->health, sizeof h);
    pthread_mutex_unlock(&s->health_mu);
    floe_buf notes; /* the sealer's: a long failure, records it quarantined */
    floe_buf_init(&notes, 0);
    bool seal_ok = s->role == FLOE_SERVER_ROLE_COMPACTOR || srv_landing_health(s, &notes);
    if (notes.len && notes.data[notes.len - 1] == '\n')
        notes.len--;
    bool stopping = atomic_load(&s->stopping);
    bool down = stopping || h[SRV_H_WAL].failing || !seal_ok, degraded = false;
    for (int i = 0; i < SRV_H_COUNT; i++)
        degraded |= enabled[i] && h[i].failing;
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "{\"status\":\"%s\",\"node\":",
                    stopping ? "stopping" : down ? "failing" : degraded ? "degraded" : "ok");
    floe_json_append_string(&b, (const uint8_t *)s->node, strlen(s->node));
    floe_buf_printf(&b, ",\"checks\":{");
    for (int i = 0; i < SRV_H_COUNT; i++) {
        floe_buf_printf(&b, "%s\"%s\":{\"ok\":%s", i ? "," : "", srv_health_names[i],
                        enabled[i] && h[i].failing ? "false" : "true");
        if (!enabled[i])
            floe_buf_printf(&b, ",\"enabled\":false");
        if (i == SRV_H_COMPACTOR && enabled[i] && !s->cfg.compact)
            floe_buf_printf(&b, ",\"runs\":\"on flush\"");
        if (i == SRV_H_SEALER && enabled[i]) {
            floe_buf_printf(&b, ",\"quarantined_records\":%llu",
                            (unsigned long long)atomic_load(&s->m.seal_quarantined_records));
            if (details && notes.len) {
                floe_buf_printf(&b, ",\"notes\":");
                floe_json_append_string(&b, notes.data, notes.len);
            }
        }
        if (enabled[i] && h[i].failing) {
            char since[32];
            srv_iso_ms(h[i].since_ms, since);
            floe_buf_printf(&b, ",\"since\":\"%s\",\"failures\":%llu", since,
                            (unsigned long long)h[i].failures);
            if (details) {
                floe_buf_printf(&b, ",\"error\":");
                floe_json_append_string(&b, (const uint8_t *)h[i].error, strlen(h[i].error));
            }
        }
        floe_buf_printf(&b, "}");
    }
    floe_buf_free(&notes);
    if (floe_buf_printf(&b, "}}\n") < 0) {
        floe_buf_free(&b);
        return MHD_NO;
    }
    size_t len = 0;
    char *body = floe_buf_detach(&b, &len);
    if (!body)
        return MHD_NO;
    return respond(s, c, down ? 503 : 200, body, len, "application/json", down ? 5 : 0);
}

/* ---- the request handler ------------------------------------------------------------- */

static enum MHD_Result first_call(floe_server *s, struct MHD_Connection *c, const char *url,
                                  const char *method, req_state *r) {
    int bad_status = 0;
    const char *bad = floe_http_head_error(c, &bad_status); /* framing, Host */
    if (bad)
        return respond_error(s, c, bad_status, bad, 0); /* before any body byte: then closed */
    if (!strcmp(method, "GET") && !strcmp(url, "/healthz"))
        return healthz(s, c);
    if (!strcmp(method, "GET") && !strcmp(url, "/metrics")) {
        /* table names and volumes: for holders of the metrics grant */
        int a = authorize(s, c, NULL, "metrics");
        if (a)
            return respond_error(s, c, a, a == 401 ? "missing or unknown bearer token"
                                                   : "the token lacks the metrics grant", 0);
        size_t len = 0;
        char *m = metrics_text(s, &len);
        if (!m)
            return MHD_NO;
        return respond(s, c, 200, m, len, "text/plain; version=0.0.4", 0);
    }
    if (!strcmp(url, "/v1/admin/flush")) {
        if (strcmp(method, "POST"))
            return respond_error(s, c, 405, "use POST", 0);
        int a = authorize(s, c, NULL, "admin");
        if (a)
            return respond_error(s, c, a, a == 401 ? "missing or unknown bearer token"
                                                   : "the token lacks the admin grant", 0);
        r->kind = REQ_FLUSH;
        return MHD_YES;
    }
    static const char prefix[] = "/v1/tables/", suffix[] = "/events";
    size_t ul = strlen(url), pl = sizeof prefix - 1, sl = sizeof suffix - 1;
    if (ul <= pl + sl || strncmp(url, prefix, pl) || strcmp(url + ul - sl, suffix))
        return respond_error(s, c, 404, "no such endpoint", 0);
    size_t tl = ul - pl - sl;
    if (tl >= sizeof r->table)
        return respond_error(s, c, 404, "no such table", 0);
    memcpy(r->table, url + pl, tl);
    r->table[tl] = 0;
    if (strcmp(method, "POST"))
        return respond_error(s, c, 405, "use POST", 0);
    if (atomic_load(&s->stopping))
        return respond_error(s, c, 503, "the server is stopping", 5);
    if (!srv_valid_table_name(r->table))
        return respond_error(s, c, 404, "no such table (names are namespace.table of "
                             "letters, digits, '_' and '-')", 0);
    int a = authorize(s, c, r->table, NULL);
    if (a)
        return respond_error(s, c, a, a == 401 ? "missing or unknown bearer token"
                                               : "the token has no grant for this table", 0);
    if (!media_type_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")))
        return respond_error(s, c, 415, "Content-Type must be application/x-ndjson or "
                             "application/json", 0);
    const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    if (!enc || !*enc || !strcasecmp(enc, "identity"))
        enc = "identity";
    else if (strcasecmp(enc, "gzip") && strcasecmp(enc, "x-gzip") && strcasecmp(enc, "zstd"))
        return respond_error(s, c, 415, "Content-Encoding must be gzip, zstd or identity", 0);
    snprintf(r->encoding, sizeof r->encoding, "%s", enc);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > (unsigned long long)s->cfg.max_body)
        return respond_error(s, c, 413, "request body too large", 0);
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key) {
        if (!key_ok(key))
            return respond_error(s, c, 400, "Idempotency-Key must be 1 to 128 printable "
                                 "ASCII characters", 0);
        if (!(r->key = floe_strdup(key)))
            return MHD_NO;
    }
    if (!s->cfg.auto_create && !srv_table_find(s, r->table)) {
        floe_error e;
        floe_error_clear(&e);
        srv_table *t;
        int rc = srv_table_get(s, r->table, NULL, 0, &t, &e);
        if (rc == FLOE_ENOTFOUND)
            return respond_error(s, c, 404, "no such table", 0);
        if (rc == FLOE_EBUSY) /* the catalog does not answer */
            return respond_error(s, c, 503, e.msg, 5);
        if (rc < 0)
            return respond_error(s, c, 500, e.msg, 0);
    }
    r->kind = REQ_EVENTS;
    bool identity = !strcmp(r->encoding, "identity");
    floe_buf_init(&r->body, (size_t)(identity ? s->cfg.max_body : s->cfg.max_decoded + 1));
    int rc = 0;
    if (!identity) {
        floe_error e;
        floe_error_clear(&e);
        if (srv_decoder_new(r->encoding, &r->dec, &e) < 0)
            return respond_error(s, c, 500, e.msg, 0);
        rc = srv_budget_hold(s, &r->held, (int64_t)srv_decoder_bytes(r->dec), 0);
    } else if (cl) {
        /* all of the announced body now (checked against max_body above), so a request
         * the budget cannot take is refused before a byte of it is read, and the body is
         * stored in one allocation (MHD enforces the real length) */
        size_t want = (size_t)strtoull(cl, NULL, 10) + 1; /* + floe_buf's NUL byte */
        if (want > 1 && (rc = srv_budget_hold(s, &r->held, (int64_t)want, 0)) == 0) {
            if (!(r->body.data = floe_malloc(want)))
                return MHD_NO;
            r->body.cap = want;
        }
    }
    if (rc < 0) {
        int retry = 0;
        const char *msg;
        int status = srv_budget_status(s, rc, &retry, &msg);
        return respond_error(s, c, status, msg, retry);
    }
    return MHD_YES;
}

/* The answer once the body is read, for a failure while it arrived (the rest of the body
 * is then discarded). */
static void fail_later(req_state *r, int status, int retry, const char *msg) {
    if (r->fail_status)
        return;
    r->fail_status = status;
    r->fail_retry = retry;
    size_t n = strlen(msg);
    if (n >= sizeof r->fail_msg)
        n = sizeof r->fail_msg - 1;
    memcpy(r->fail_msg, msg, n);
    r->fail_msg[n] = 0;
    /* nothing of the body is needed any more: give its memory back now */
    srv_decoder_free(r->dec);
    r->dec = NULL;
    floe_buf_free(&r->body);
}

typedef struct room_ctx {
    floe_server *s;
    req_state *r;
    int budget_rc;          /* the budget refused the decoded body's growth */
} room_ctx;

static int body_room(void *ctx, floe_buf *out, size_t want) {
    room_ctx *rc = ctx;
    int r = srv_buf_room(rc->s, &rc->r->held, 0, out, want);
    if (r < 0)
        rc->budget_rc = r;
    return r;
}

/* The next bytes of the body. */
static void take_body(floe_server *s, req_state *r, const char *data, size_t n) {
    r->wire += (int64_t)n;
    floe_connguard_body_bytes(r->conn, r->wire);
    if (r->fail_status)
        return;
    if (r->wire > s->cfg.max_body) {
        fail_later(r, 413, 0, "request body too large");
        return;
    }
    int rc;
    if (!r->dec) {
        rc = srv_buf_room(s, &r->held, 0, &r->body, n);
        if (rc == 0)
            rc = floe_buf_append(&r->body, data, n);
    } else {
        /* the decoder's own memory (a zstd frame's window) first, then what it decodes */
        int64_t dec_now = (int64_t)srv_decoder_bytes(r->dec);
        int64_t ahead = (int64_t)srv_decoder_ahead(r->dec, (const uint8_t *)data, n);
        rc = srv_budget_hold(s, &r->held, r->held + (ahead - dec_now), 0);
        if (rc == 0) {
            floe_error e;
            floe_error_clear(&e);
            room_ctx ctx = {s, r, 0};
            rc = srv_decoder_feed(r->dec, (const uint8_t *)data, n, (size_t)s->cfg.max_decoded,
                                  &r->body, body_room, &ctx, &e);
            if (rc < 0 && !ctx.budget_rc) {
                /* 400 corrupt stream, 413 decoded size or zstd window over the cap */
                fail_later(r, rc == FLOE_ECORRUPT ? 400 : rc == FLOE_ELIMIT ? 413 : 500, 0,
                           e.msg);
                return;
            }
        }
        if (rc == 0) /* true up: what the decoder and the body really hold */
            rc = srv_budget_hold(s, &r->held,
                                 (int64_t)(r->body.cap + srv_decoder_bytes(r->dec)), 0);
    }
    if (rc < 0) {
        int retry = 0;
        const char *msg;
        int status = srv_budget_status(s, rc, &retry, &msg);
        fail_later(r, status, retry, msg);
    }
}

static enum MHD_Result finish_events(floe_server *s, struct MHD_Connection *c, req_state *r) {
    if (!r->fail_status && r->dec) {
        floe_error e;
        floe_error_clear(&e);
        if (srv_decoder_finish(r->dec, &e) < 0)
            fail_later(r, 400, 0, e.msg);
        /* the decoder is done: its memory goes back before the records are taken */
        srv_decoder_free(r->dec);
        r->dec = NULL;
        (void)srv_budget_hold(s, &r->held, (int64_t)r->body.cap, 0);
    }
    if (!r->fail_status && !r->dec && !strcmp(r->encoding, "identity") &&
        r->body.len > (size_t)s->cfg.max_decoded)
        fail_later(r, 413, 0, "request body too large");
    if (r->fail_status)
        return respond_error(s, c, r->fail_status, r->fail_msg, r->fail_retry);
    char source[300];
    snprintf(source, sizeof source, "http:%s", r->table);
    srv_post post = {.table = r->table, .key = r->key,
                     .body = r->body.data ? r->body.data : (const uint8_t *)"",
                     .n = r->body.len, .is_array_ok = true, .source = source, .held = r->held};
    char *ans = NULL;
    size_t alen = 0;
    int retry = 0;
    atomic_fetch_add(&s->inflight, 1);
    int status = srv_ingest(s, &post, &ans, &alen, &retry);
    atomic_fetch_sub(&s->inflight, 1);
    floe_buf_free(&r->body);
    srv_budget_release(s, &r->held);
    if (!ans)
        return MHD_NO;
    return respond(s, c, status, ans, alen, "application/json", retry);
}

/* A yes/no query argument: absent is no; 1, true, yes and 0, false, no (any case) are
 * taken; anything else is false with *bad set. */
static bool arg_bool(struct MHD_Connection *c, const char *name, bool *bad) {
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    if (!v)
        return false;
    if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"))
        return true;
    if (strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no"))
        *bad = true;
    return false;
}

/* POST /v1/admin/flush: seal every buffer. With compact=1, also compact what is
 * registered and answer what was committed and what is still pending and why; with
 * wait=true (implies compact), go on until nothing of it is pending, at most timeout
 * seconds (default 120: twice a compaction lease), answering 202 when some is left. */
static enum MHD_Result flush(floe_server *s, struct MHD_Connection *c) {
    bool bad_wait = false, bad_compact = false;
    bool wait = arg_bool(c, "wait", &bad_wait);
    bool compact = arg_bool(c, "compact", &bad_compact) || wait;
    if (bad_wait || bad_compact)
        return respond_error(s, c, 400, bad_wait ? "wait: want 1, true or yes, or 0, false or no"
                                                 : "compact: want 1, true or yes, or 0, false "
                                                   "or no", 0);
    int64_t timeout_ms = 120000;
    const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeout");
    if (t) {
        char *end;
        long long v = strtoll(t, &end, 10);
        if (end == t || *end || v < 0 || v > 3600)
            return respond_error(s, c, 400, "timeout: whole seconds, 0 to 3600", 0);
        timeout_ms = v * 1000;
    }
    floe_error e;
    floe_error_clear(&e);
    if (!compact) {
        int rc = floe_server_flush(s, false, &e);
        if (rc == FLOE_EBUSY)
            return respond_error(s, c, 503, e.msg, 5);
        if (rc < 0)
            return respond_error(s, c, 500, e.msg, 0);
        char *ok = floe_strdup("{\"flushed\":true}");
        return ok ? respond(s, c, 200, ok, strlen(ok), "application/json", 0) : MHD_NO;
    }
    floe_flush_result fr;
    int frc = floe_server_flush_report(s, wait ? timeout_ms : 0, &fr, &e);
    if (frc == FLOE_EBUSY)
        return respond_error(s, c, 503, e.msg, 5);
    if (frc < 0)
        return respond_error(s, c, 500, e.msg, 0);
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b, "{\"flushed\":true,\"complete\":%s,\"rounds\":%d,\"committed\":"
                    "{\"events\":%lld,\"landing_files\":%lld},\"pending\":{\"landing_files\":"
                    "%lld,\"partitions\":%lld,\"by_partition\":%s}}",
                    fr.pending_files ? "false" : "true", fr.rounds,
                    (long long)fr.events_committed, (long long)fr.landing_committed,
                    (long long)fr.pending_files, (long long)fr.pending_partitions,
                    fr.pending_json ? fr.pending_json : "[]");
    bool complete = fr.pending_files == 0;
    floe_flush_result_reset(&fr);
    size_t len = 0;
    char *body = floe_buf_detach(&b, &len);
    if (!body)
        return MHD_NO;
    return respond(s, c, wait && !complete ? 202 : 200, body, len, "application/json", 0);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    (void)version;
    floe_server *s = cls;
    req_state *r = *con_cls;
    if (!r) {
        r = floe_calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        r->start_ns = floe_now_ns();
        r->conn = c;
        floe_connguard_phase(c, FLOE_CONN_BODY);
        return first_call(s, c, url, method, r);
    }
    if (*upload_data_size) {
        if (r->kind == REQ_EVENTS)
            take_body(s, r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    floe_connguard_phase(c, FLOE_CONN_BUSY);
    if (r->kind == REQ_FLUSH)
        return flush(s, c);
    if (r->kind == REQ_EVENTS)
        return finish_events(s, c, r);
    return MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)toe;
    floe_server *s = cls;
    req_state *r = *con_cls;
    floe_connguard_phase(c, FLOE_CONN_HEADERS); /* keep-alive: the next request's headers */
    if (!r)
        return;
    if (r->kind == REQ_EVENTS) {
        int64_t us = (floe_now_ns() - r->start_ns) / 1000;
        double ms = (double)us / 1000.0;
        int b = 0;
        while (b < SRV_LAT_BUCKETS && ms > srv_lat_bounds_ms[b])
            b++;
        atomic_fetch_add(&s->m.lat[b], 1);
        atomic_fetch_add(&s->m.lat_sum_us, (uint64_t)us);
        atomic_fetch_add(&s->m.lat_count, 1);
    }
    floe_buf_free(&r->body);
    srv_decoder_free(r->dec);
    srv_budget_release(s, &r->held);
    floe_free(r->key);
    floe_free(r);
    *con_cls = NULL;
}

static int parse_listen(const char *listen, struct sockaddr_in *sa, floe_error *err) {
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return floe_error_set(err, FLOE_EINVALID, "listen: expected host:port, not '%s'",
                              listen);
    char host[64];
    size_t hl = (size_t)(colon - listen);
    if (hl >= sizeof host)
        return floe_error_set(err, FLOE_EINVALID, "listen: host too long");
    memcpy(host, listen, hl);
    host[hl] = 0;
    if (!strcmp(host, "localhost"))
        strcpy(host, "127.0.0.1");
    if (!*host)
        strcpy(host, "0.0.0.0");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535 || end == colon + 1)
        return floe_error_set(err, FLOE_EINVALID, "listen: bad port in '%s'", listen);
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return floe_error_set(err, FLOE_EINVALID, "listen: '%s' is not an IPv4 address", host);
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

int srv_http_start(floe_server *s, floe_error *err) {
    struct sockaddr_in sa;
    FLOE_FORWARD_IF_ERROR(parse_listen(s->cfg.listen, &sa, err));
    /* libmicrohttpd first: the handlers and the guard run on the daemon this starts */
    if (!floe_lazy_mhd(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    floe_connguard_config gc = {s->cfg.max_connections, s->cfg.header_timeout_ms,
                                s->cfg.read_timeout_ms};
    FLOE_FORWARD_IF_ERROR(floe_connguard_start(&gc, &s->guard, err));
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, floe_connguard_mhd_limit(&gc),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)s->cfg.max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, floe_connguard_mhd_timeout_s(&gc),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, floe_connguard_notify, s->guard,
        MHD_OPTION_END);
    if (!d) {
        floe_connguard_stop(s->guard);
        s->guard = NULL;
        return floe_error_set(err, FLOE_EIO, "cannot listen on %s", s->cfg.listen);
    }
    s->mhd = d;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : ntohs(sa.sin_port);
    if (pthread_create(&s->probe_thr, NULL, probe_main, s) == 0)
        s->probe_started = true;
    return 0;
}

void srv_http_stop(floe_server *s) {
    if (s->mhd) {
        /* stop taking connections first, then let in-flight requests finish */
        MHD_quiesce_daemon(s->mhd);
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
    }
    floe_connguard_stop(s->guard);
    s->guard = NULL;
    if (s->probe_started) {
        atomic_store(&s->watch_stop, true);
        pthread_join(s->probe_thr, NULL);
        s->probe_started = false;
    }
}
