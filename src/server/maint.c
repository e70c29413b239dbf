/*
 * maint.c - table maintenance inside `floe serve`: one thread runs the scheduler of
 * `floe maintain` (floe/maint.h) over the served tables.
 *
 * Same scheduler, same leases: the thread opens its own catalog connection and a lease
 * store on the catalog database (floe_lease_store_open), with the catalog's name, so the
 * lease rows are the ones any `floe maintain` on that catalog takes; a job another
 * maintainer holds is skipped (counted as "busy"). The jobs are the scheduler's own:
 * rewrite-data (floe rewrite, Iceberg bin-pack defaults), rewrite-manifests, expire,
 * orphans and the landing lifecycle. Landing compaction is not one of them here: the
 * server's compactor thread does it on its own triggers, so the scheduler's
 * landing-compact job is forced off (config.c refuses its keys).
 *
 * The table set grows while serving (auto-created tables): before every tick the thread
 * adds the tables it has not seen, between two floe_maint_tick calls (the scheduler is
 * used by this thread only).
 *
 * Commits: the thread's catalog handle shares the server's commit gate, so a maintenance
 * commit never loses a race to this server's landing commits (they wait for its attempt
 * to end); races with other nodes go through the usual retry.
 *
 * Stop: srv_maint_stop sets the flag and wakes the thread; the scheduler checks it between
 * jobs, so the job in progress finishes (its changes go through the catalog's
 * compare-and-swap either way) and releases its lease before the thread ends.
 *
 * Reload (SIGHUP, floe_server_reload): srv_maint_reload parses the new [maintain]
 * settings and run log on the caller's thread (an error keeps the old ones) and hands them
 * to the thread, which takes them before its next tick (floe_maint_set_config): cadences,
 * ages, thresholds, per-table sections, lease TTL, tick and run log. Turning maintenance
 * on or off, and start-delay, take a restart.
 *
 * Results: the scheduler logs one line per run (info level: FLOE_LOG=info; failures are
 * errors); the run callback keeps per table and job counts and the last run's time,
 * duration and result for /metrics (floe_maint_*), and appends one JSON line per run to
 * the run log when one is configured (the lines of `floe maintain --run-log`).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floe/lease.h"
#include "floe/maint.h"
#include "floe/rewrite.h"
#include "server_internal.h"

typedef struct job_stat {
    int64_t ok, failed, skipped, busy;
    int64_t last_end_ms, last_duration_ms;
    int last_rc;
    char last_error[200];   /* the last failed run's detail */
} job_stat;

typedef struct maint_table {
    char *name; /* "ns.table" */
    job_stat jobs[FLOE_JOB_COUNT];
} maint_table;

typedef struct srv_maint {
    floe_server *s;
    floe_catalog *cat;
    floe_lease_store *leases;
    floe_maint *m;
    int log_fd;              /* run log (O_APPEND), -1 = none */
    int64_t tick_ms;
    int64_t start_delay_ms;
    pthread_t thr;
    bool started;
    pthread_mutex_t mu; /* stop flag, cv */
    pthread_cond_t cv;
    volatile int stop;
    pthread_mutex_t stats_mu; /* tables, their stats */
    maint_table *tables;
    size_t ntables;
    /* mu: settings of a reload (SIGHUP), applied by the thread before its next tick */
    bool has_pending;
    floe_maint_config pending;
    int pending_log_fd;      /* the new run log, -1 = none */
} srv_maint;

static maint_table *stats_find(srv_maint *mt, const char *name) {
    for (size_t i = 0; i < mt->ntables; i++)
        if (!strcmp(mt->tables[i].name, name))
            return &mt->tables[i];
    return NULL;
}

static void run_log_write(srv_maint *mt, const floe_maint_run *r) {
    floe_buf b;
    floe_buf_init(&b, 1 << 10);
    /* one write(2) per line on an O_APPEND file: lines of several maintainers sharing
     * the file do not interleave */
    if (floe_maint_run_json(r, &b) == 0 && write(mt->log_fd, b.data, b.len) < 0)
        floe_log(FLOE_LOG_WARN, "maintain: run log: %s", strerror(errno));
    floe_buf_free(&b);
}

static void on_run(void *ctx, const floe_maint_run *r) {
    srv_maint *mt = ctx;
    if (mt->log_fd >= 0)
        run_log_write(mt, r);
    pthread_mutex_lock(&mt->stats_mu);
    maint_table *t = stats_find(mt, r->table);
    if (t && (unsigned)r->job < FLOE_JOB_COUNT) {
        job_stat *j = &t->jobs[r->job];
        if (r->lease_busy)
            j->busy++;
        else if (r->rc < 0)
            j->failed++;
        else if (r->skipped)
            j->skipped++;
        else
            j->ok++;
        j->last_end_ms = r->end_ms;
        j->last_duration_ms = r->end_ms - r->start_ms;
        j->last_rc = r->rc;
        if (r->rc < 0)
            snprintf(j->last_error, sizeof j->last_error, "%s",
                     r->detail && *r->detail ? r->detail : floe_strerror(r->rc));
    }
    pthread_mutex_unlock(&mt->stats_mu);
}

/* Add the served tables the scheduler does not know yet. */
static int add_new_tables(srv_maint *mt, floe_error *err) {
    floe_server *s = mt->s;
    floe_strlist ns = {0}, names = {0};
    int rc = 0;
    pthread_mutex_lock(&s->tables_mu);
    for (size_t i = 0; i < s->ntables && rc == 0; i++) {
        const srv_table *t = s->tables[i];
        pthread_mutex_lock(&mt->stats_mu);
        bool known = stats_find(mt, t->name) != NULL;
        pthread_mutex_unlock(&mt->stats_mu);
        if (known)
            continue;
        rc = floe_strlist_push(&ns, t->ns, err);
        if (rc == 0)
            rc = floe_strlist_push(&names, t->tname, err);
    }
    pthread_mutex_unlock(&s->tables_mu);
    for (size_t i = 0; i < ns.n && i < names.n && rc == 0; i++) {
        char *full = floe_asprintf("%s.%s", ns.items[i], names.items[i]);
        if (!full) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
        pthread_mutex_lock(&mt->stats_mu);
        maint_table *grown = floe_realloc(mt->tables, (mt->ntables + 1) * sizeof *grown);
        if (grown) {
            mt->tables = grown;
            memset(&grown[mt->ntables], 0, sizeof *grown);
            grown[mt->ntables++].name = full;
            full = NULL;
        }
        pthread_mutex_unlock(&mt->stats_mu);
        if (full) {
            floe_free(full);
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
        rc = floe_maint_add_table(mt->m, ns.items[i], names.items[i], err);
        if (rc == 0)
            floe_log(FLOE_LOG_INFO, "maintain: %s.%s: scheduled", ns.items[i], names.items[i]);
    }
    floe_strlist_free(&ns);
    floe_strlist_free(&names);
    return rc;
}

/* Wait up to ms or until stopped (or, with for_reload, until a reload is pending); true
 * when stopped. Called with mt->mu held. */
static bool wait_stop_locked(srv_maint *mt, int64_t ms, bool for_reload) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (!mt->stop && !(for_reload && mt->has_pending))
        if (pthread_cond_timedwait(&mt->cv, &mt->mu, &ts) == ETIMEDOUT)
            break;
    return mt->stop != 0;
}

/* The scheduler settings of a [maintain] text: landing compaction is the compactor
 * thread's, never a second one. */
static int build_config(const char *text, floe_maint_config *mc, floe_error *err) {
    floe_maint_config_init(mc);
    if (text)
        FLOE_FORWARD_IF_ERROR(floe_maint_config_parse(mc, text, strlen(text), "[maintain]",
                                                      err));
    mc->defaults.jobs[FLOE_JOB_LANDING_COMPACT].enabled = false;
    for (size_t i = 0; i < mc->ntables; i++)
        mc->tables[i].jobs[FLOE_JOB_LANDING_COMPACT].enabled = false;
    return 0;
}

static int open_run_log(const char *path, int *fd, floe_error *err) {
    *fd = -1;
    if (!path)
        return 0;
    *fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (*fd < 0)
        return floe_error_set(err, FLOE_EIO, "run log %s: %s", path, strerror(errno));
    return 0;
}

/* On the thread, between ticks: take the settings of a reload. */
static void apply_pending(srv_maint *mt) {
    pthread_mutex_lock(&mt->mu);
    if (!mt->has_pending) {
        pthread_mutex_unlock(&mt->mu);
        return;
    }
    floe_maint_config mc = mt->pending;
    int fd = mt->pending_log_fd;
    floe_maint_config_init(&mt->pending);
    mt->pending_log_fd = -1;
    mt->has_pending = false;
    pthread_mutex_unlock(&mt->mu);
    floe_error err;
    floe_error_clear(&err);
    if (floe_maint_set_config(mt->m, &mc, &err) < 0) {
        floe_log(FLOE_LOG_ERROR, "maintain: reload: %s; keeping the old settings", err.msg);
        if (fd >= 0)
            close(fd);
    } else {
        mt->tick_ms = mc.tick_ms > 0 ? mc.tick_ms : 1000;
        if (mt->log_fd >= 0)
            close(mt->log_fd);
        mt->log_fd = fd;
        floe_log(FLOE_LOG_INFO, "maintain: settings reloaded (tick %lld ms)",
                 (long long)mt->tick_ms);
    }
    floe_maint_config_reset(&mc);
}

int srv_maint_reload(floe_server *s, const char *maint_config, const char *run_log,
                     floe_error *err) {
    srv_maint *mt = s->maint;
    if (!mt)
        return 0;
    floe_maint_config mc;
    int fd = -1;
    int rc = build_config(maint_config, &mc, err);
    if (rc == 0)
        rc = open_run_log(run_log, &fd, err);
    if (rc < 0) {
        floe_maint_config_reset(&mc);
        floe_error_prefix(err, "maintenance: ");
        return rc;
    }
    pthread_mutex_lock(&mt->mu);
    if (mt->has_pending) { /* a reload the thread has not taken yet: this one wins */
        floe_maint_config_reset(&mt->pending);
        if (mt->pending_log_fd >= 0)
            close(mt->pending_log_fd);
    }
    mt->pending = mc;
    mt->pending_log_fd = fd;
    mt->has_pending = true;
    pthread_cond_broadcast(&mt->cv);
    pthread_mutex_unlock(&mt->mu);
    return 0;
}

static void *maint_main(void *arg) {
    srv_maint *mt = arg;
    srv_thread_name("floe-maint");
    pthread_mutex_lock(&mt->mu);
    bool stopped = mt->start_delay_ms > 0 && wait_stop_locked(mt, mt->start_delay_ms, false);
    pthread_mutex_unlock(&mt->mu);
    while (!stopped) {
        floe_error err;
        floe_error_clear(&err);
        apply_pending(mt);
        if (add_new_tables(mt, &err) < 0)
            floe_log(FLOE_LOG_WARN, "maintain: listing the served tables: %s", err.msg);
        floe_error_clear(&err);
        if (floe_maint_tick(mt->m, &mt->stop, &err) < 0)
            floe_log(FLOE_LOG_WARN, "maintain: %s", err.msg);
        pthread_mutex_lock(&mt->mu);
        stopped = wait_stop_locked(mt, mt->tick_ms, true);
        pthread_mutex_unlock(&mt->mu);
    }
    return NULL;
}

static void maint_free(srv_maint *mt) {
    floe_maint_free(mt->m);
    floe_lease_store_close(mt->leases);
    floe_catalog_close(mt->cat);
    if (mt->log_fd >= 0)
        close(mt->log_fd);
    if (mt->pending_log_fd >= 0)
        close(mt->pending_log_fd);
    floe_maint_config_reset(&mt->pending);
    for (size_t i = 0; i < mt->ntables; i++)
        floe_free(mt->tables[i].name);
    floe_free(mt->tables);
    pthread_mutex_destroy(&mt->mu);
    pthread_cond_destroy(&mt->cv);
    pthread_mutex_destroy(&mt->stats_mu);
    floe_free(mt);
}

int srv_maint_start(floe_server *s, floe_error *err) {
    if (!s->cfg.maintain)
        return 0;
    int rc = 0;
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    floe_catalog_config cc = {0};
    srv_maint *mt = floe_calloc(1, sizeof *mt);
    if (!mt) {
        floe_maint_config_reset(&mc);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    mt->s = s;
    mt->log_fd = -1;
    mt->pending_log_fd = -1;
    floe_maint_config_init(&mt->pending);
    pthread_mutex_init(&mt->mu, NULL);
    pthread_cond_init(&mt->cv, NULL);
    pthread_mutex_init(&mt->stats_mu, NULL);
    FLOE_CHECK(build_config(s->cfg.maint_config, &mc, err));
    mt->tick_ms = mc.tick_ms > 0 ? mc.tick_ms : 1000;
    mt->start_delay_ms = s->cfg.maint_start_delay_ms;
    /* A connection of our own to the server's catalog (as server.c opens it), under the
     * same catalog name: the lease rows are those of every maintainer of this catalog. */
    cc.io = s->cfg.io;
    cc.name = floe_strdup(floe_catalog_name(s->catalog));
    cc.type = floe_strdup(s->catcfg.type);
    cc.uri = floe_strdup(s->catcfg.uri);
    cc.warehouse = floe_strdup(s->catcfg.warehouse);
    cc.state_db = s->catcfg.state_db ? floe_strdup(s->catcfg.state_db) : NULL;
    if (!cc.name || !cc.type || !cc.uri || !cc.warehouse || (s->catcfg.state_db && !cc.state_db))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_rest_properties_copy(&s->catcfg.rest, &cc.rest, err));
    FLOE_CHECK(floe_catalog_open(&cc, &mt->cat, err));
    /* the landing committer's gate: this thread's commits never race this server's */
    floe_catalog_set_commit_gate(mt->cat, &s->commit_gate);
    FLOE_CHECK(floe_lease_store_open(&cc, &mt->leases, err));
    FLOE_CHECK(open_run_log(s->cfg.maint_run_log, &mt->log_fd, err));
    floe_maint_hooks hooks = {.rewrite_data = floe_rewrite_maint_job};
    FLOE_CHECK(floe_maint_new(mt->cat, mt->leases, &mc, &hooks, &mt->m, err));
    floe_maint_on_run(mt->m, on_run, mt);
    if (pthread_create(&mt->thr, NULL, maint_main, mt) != 0)
        FLOE_FAIL(err, FLOE_EIO, "cannot start the maintenance thread");
    mt->started = true;
    floe_log(FLOE_LOG_INFO, "maintain: scheduler %s starts in %lld ms (tick %lld ms)",
             floe_maint_owner(mt->m), (long long)mt->start_delay_ms, (long long)mt->tick_ms);
    s->maint = mt;
    mt = NULL;
done:
    if (mt) {
        floe_error_prefix(err, "maintenance: ");
        maint_free(mt);
    }
    floe_catalog_config_reset(&cc);
    floe_maint_config_reset(&mc);
    return rc;
}

void srv_maint_stop(floe_server *s) {
    srv_maint *mt = s->maint;
    if (!mt)
        return;
    pthread_mutex_lock(&mt->mu);
    mt->stop = 1;
    pthread_cond_broadcast(&mt->cv);
    pthread_mutex_unlock(&mt->mu);
    if (mt->started)
        pthread_join(mt->thr, NULL);
    s->maint = NULL;
    maint_free(mt);
}

int srv_maint_failing(floe_server *s, char *msg, size_t n) {
    srv_maint *mt = s->maint;
    int failing = 0;
    if (n)
        msg[0] = 0;
    if (!mt)
        return 0;
    pthread_mutex_lock(&mt->stats_mu);
    for (size_t i = 0; i < mt->ntables; i++)
        for (int j = 0; j < FLOE_JOB_COUNT; j++) {
            const job_stat *js = &mt->tables[i].jobs[j];
            if (!js->last_end_ms || js->last_rc >= 0)
                continue;
            if (!failing++ && n)
                snprintf(msg, n, "%s %s: %s", mt->tables[i].name,
                         floe_maint_job_name((floe_maint_job)j), js->last_error);
        }
    pthread_mutex_unlock(&mt->stats_mu);
    return failing;
}

void srv_maint_metrics(floe_server *s, floe_buf *b) {
    srv_maint *mt = s->maint;
    if (!mt)
        return;
    static const char *const results[4] = {"ok", "failed", "skipped", "busy"};
    floe_buf_printf(b, "# TYPE floe_maint_runs_total counter\n"
                       "# TYPE floe_maint_last_run_timestamp_seconds gauge\n"
                       "# TYPE floe_maint_last_run_duration_seconds gauge\n"
                       "# TYPE floe_maint_last_run_ok gauge\n");
    pthread_mutex_lock(&mt->stats_mu);
    for (size_t i = 0; i < mt->ntables; i++) {
        const maint_table *t = &mt->tables[i];
        for (int j = 0; j < FLOE_JOB_COUNT; j++) {
            if (j == FLOE_JOB_LANDING_COMPACT)
                continue; /* the compactor's (floe_compactions_total) */
            const job_stat *js = &t->jobs[j];
            const char *jn = floe_maint_job_name((floe_maint_job)j);
            const int64_t counts[4] = {js->ok, js->failed, js->skipped, js->busy};
            for (int r = 0; r < 4; r++)
                floe_buf_printf(b, "floe_maint_runs_total{table=\"%s\",job=\"%s\","
                                "result=\"%s\"} %" PRId64 "\n", t->name, jn, results[r],
                                counts[r]);
            if (!js->last_end_ms)
                continue;
            floe_buf_printf(b,
                            "floe_maint_last_run_timestamp_seconds{table=\"%s\",job=\"%s\"} "
                            "%.3f\n"
                            "floe_maint_last_run_duration_seconds{table=\"%s\",job=\"%s\"} "
                            "%.3f\n"
                            "floe_maint_last_run_ok{table=\"%s\",job=\"%s\"} %d\n",
                            t->name, jn, (double)js->last_end_ms / 1000.0, t->name, jn,
                            (double)js->last_duration_ms / 1000.0, t->name, jn,
                            js->last_rc >= 0);
        }
    }
    pthread_mutex_unlock(&mt->stats_mu);
    floe_maint_metrics mm;
    floe_maint_metrics_get(mt->m, &mm);
    floe_buf_printf(b, "# TYPE floe_maint_files_deleted_total counter\n");
    for (int j = 0; j < FLOE_JOB_COUNT; j++)
        if (j != FLOE_JOB_LANDING_COMPACT)
            floe_buf_printf(b, "floe_maint_files_deleted_total{job=\"%s\"} %" PRId64 "\n",
                            floe_maint_job_name((floe_maint_job)j), mm.jobs[j].files_deleted);
}
