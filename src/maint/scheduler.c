/*
 * scheduler.c - `floe maintain`: per table and per job, on its own cadence and
 * thresholds, run landing compaction, small-file rewrites, manifest rewrites, expiry,
 * orphan removal and the landing lifecycle, each under a lease so that two maintainers
 * never run the same job on the same table at once.
 *
 * One run of a job:
 *
 *   due ──acquire lease──> held ──heartbeat (renew every ttl/3)──> ... ──job done──>
 *    │        │ busy                                                        │
 *    │        └──> skipped (lease_busy counted, logged)                     v
 *    │                                                              record end, release
 *    └── disabled / hook missing / threshold not met: skipped (logged)
 *
 * The run's end time is taken before the lease is released and its start after the lease
 * is acquired, so the logged [start, end] intervals of one (table, job) never overlap
 * across maintainers that share the lease table. A lost lease (renew found someone else's
 * row: ours had expired) is logged; the job itself stays safe because every change it
 * makes goes through the catalog's compare-and-swap and every delete through a
 * reachability check.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floe/delete.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "maint_internal.h"

/* ---------------------------------------------------------------------------------------
 * configuration
 * ------------------------------------------------------------------------------------- */

static const char *const job_names[FLOE_JOB_COUNT] = {
    "landing-compact", "rewrite-data", "rewrite-manifests", "expire", "orphans",
    "landing-lifecycle", "rewrite-deletes"};

const char *floe_maint_job_name(floe_maint_job j) {
    return (unsigned)j < FLOE_JOB_COUNT ? job_names[j] : "?";
}

const char *floe_maint_run_result(const floe_maint_run *r) {
    return r->lease_busy ? "busy" : r->rc < 0 ? "failed" : r->skipped ? "skipped" : "ok";
}

int floe_maint_run_json(const floe_maint_run *r, floe_buf *out) {
    const floe_maint_job_stats *st = &r->stats;
    int rc = floe_buf_printf(out, "{\"table\":");
    if (rc == 0)
        rc = floe_json_append_cstr(out, r->table);
    if (rc == 0)
        rc = floe_buf_printf(out, ",\"job\":\"%s\",\"owner\":", floe_maint_job_name(r->job));
    if (rc == 0)
        rc = floe_json_append_cstr(out, r->owner);
    if (rc == 0)
        rc = floe_buf_printf(out,
                             ",\"start_ms\":%" PRId64 ",\"end_ms\":%" PRId64
                             ",\"result\":\"%s\",\"detail\":",
                             r->start_ms, r->end_ms, floe_maint_run_result(r));
    if (rc == 0)
        rc = floe_json_append_cstr(out, r->detail);
    if (rc == 0)
        rc = floe_buf_printf(out,
                             ",\"files_read\":%" PRId64 ",\"bytes_read\":%" PRId64
                             ",\"files_written\":%" PRId64 ",\"bytes_written\":%" PRId64
                             ",\"files_deleted\":%" PRId64 ",\"bytes_deleted\":%" PRId64
                             ",\"snapshots_expired\":%" PRId64
                             ",\"commits\":%" PRId64 ",\"attempts\":%" PRId64
                             ",\"conflicts\":%" PRId64 ",\"commit_interval_ms\":%" PRId64 "}\n",
                             st->files_read, st->bytes_read, st->files_written,
                             st->bytes_written, st->files_deleted, st->bytes_deleted,
                             st->snapshots_expired, st->commits, st->attempts, st->conflicts,
                             r->commit_interval_ms);
    return rc < 0 ? FLOE_ENOMEM : 0;
}

static void defaults_init(floe_maint_table_config *t) {
    static const int64_t intervals[FLOE_JOB_COUNT] = {
        5 * 60000LL, 3600000LL, 3600000LL, 3600000LL, FLOE_MAINT_DAY_MS, 3600000LL, 3600000LL};
    memset(t, 0, sizeof *t);
    for (int j = 0; j < FLOE_JOB_COUNT; j++) {
        floe_maint_job_config *c = &t->jobs[j];
        c->enabled = true;
        c->interval_ms = intervals[j];
        c->interval_auto = true;
        c->older_than_ms = -1;
        c->retain_last = 0;
        c->planner = FLOE_MAINT_PLANNER_AUTO;
        c->min_manifests = 10;
        c->target_size_bytes = 0;
        c->quarantine_retention_ms = -1;
    }
    t->jobs[FLOE_JOB_ORPHANS].older_than_ms = 3 * FLOE_MAINT_DAY_MS;
    t->jobs[FLOE_JOB_LANDING_LIFECYCLE].older_than_ms = 3 * FLOE_MAINT_DAY_MS;
}

void floe_maint_config_init(floe_maint_config *c) {
    memset(c, 0, sizeof *c);
    defaults_init(&c->defaults);
    c->lease_ttl_ms = 10 * 60000LL;
    c->tick_ms = 1000;
    c->rate_probe_ms = 30000;
}

void floe_maint_config_reset(floe_maint_config *c) {
    for (size_t i = 0; i < c->ntables; i++)
        floe_free(c->tables[i].name);
    floe_free(c->tables);
    floe_maint_config_init(c);
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static bool parse_bool(const char *v, bool *out) {
    if (!strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0"))
        *out = false;
    else
        return false;
    return true;
}

/* key "<job>.<setting>" = value into t */
static bool apply_setting(floe_maint_table_config *t, const char *key, const char *val) {
    const char *dot = strchr(key, '.');
    if (!dot)
        return false;
    int j = -1;
    for (int i = 0; i < FLOE_JOB_COUNT; i++)
        if (strlen(job_names[i]) == (size_t)(dot - key) &&
            !strncmp(key, job_names[i], (size_t)(dot - key)))
            j = i;
    if (j < 0)
        return false;
    floe_maint_job_config *c = &t->jobs[j];
    const char *s = dot + 1;
    if (!strcmp(s, "enabled"))
        return parse_bool(val, &c->enabled);
    if (!strcmp(s, "interval")) {
        if (!strcmp(val, "auto")) {
            c->interval_auto = true;
            return true;
        }
        c->interval_auto = false;
        return floe_parse_duration(val, 1, &c->interval_ms);
    }
    if (!strcmp(s, "planner") && j == FLOE_JOB_REWRITE_DATA) {
        if (!strcmp(val, "auto"))
            c->planner = FLOE_MAINT_PLANNER_AUTO;
        else if (!strcmp(val, "bin-pack") || !strcmp(val, "binpack"))
            c->planner = FLOE_MAINT_PLANNER_BINPACK;
        else if (!strcmp(val, "generational"))
            c->planner = FLOE_MAINT_PLANNER_GENERATIONAL;
        else
            return false;
        return true;
    }
    if (!strcmp(s, "options") && j == FLOE_JOB_REWRITE_DATA) {
        size_t n = strlen(val);
        if (n >= sizeof c->rewrite_options)
            return false;
        memcpy(c->rewrite_options, val, n + 1);
        return true;
    }
    if (!strcmp(s, "older-than") || !strcmp(s, "age"))
        return floe_parse_duration(val, 1, &c->older_than_ms);
    if (!strcmp(s, "retain-last")) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (*end || v < 1)
            return false;
        c->retain_last = v;
        return true;
    }
    if (!strcmp(s, "min-manifests")) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (*end || v < 0)
            return false;
        c->min_manifests = v;
        return true;
    }
    if (!strcmp(s, "target-size"))
        return floe_parse_size(val, &c->target_size_bytes);
    if (!strcmp(s, "quarantine-retention")) {
        if (!strcmp(val, "keep")) {
            c->quarantine_retention_ms = -1;
            return true;
        }
        return floe_parse_duration(val, 1, &c->quarantine_retention_ms);
    }
    return false;
}

/* Two passes: top-level settings and [defaults] first, then every [table X] section on
 * a copy of the final defaults (so section order does not matter). */
int floe_maint_config_parse(floe_maint_config *c, const char *text, size_t n,
                            const char *source, floe_error *err) {
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        size_t pos = 0;
        int line_no = 0;
        floe_maint_table_config *section = &c->defaults; /* top level = defaults */
        bool in_defaults = true;
        while (pos < n && rc == 0) {
            size_t e = pos;
            while (e < n && text[e] != '\n')
                e++;
            line_no++;
            char *line = floe_strndup(text + pos, e - pos);
            pos = e + 1;
            if (!line)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            char *l = trim(line);
            if (!*l || *l == '#' || *l == ';') {
                floe_free(line);
                continue;
            }
            if (*l == '[') {
                char *close = strchr(l, ']');
                if (!close) {
                    rc = floe_error_set(err, FLOE_EINVALID, "%s:%d: unclosed section", source,
                                        line_no);
                } else {
                    *close = '\0';
                    char *name = trim(l + 1);
                    if (!strcmp(name, "defaults")) {
                        in_defaults = true;
                        section = &c->defaults;
                    } else if (!strncmp(name, "table ", 6) && *trim(name + 6)) {
                        in_defaults = false;
                        section = NULL;
                        if (pass == 1) {
                            const char *tn = trim(name + 6);
                            for (size_t i = 0; i < c->ntables && !section; i++)
                                if (!strcmp(c->tables[i].name, tn))
                                    section = &c->tables[i];
                            if (!section) {
                                floe_maint_table_config *nt = floe_realloc(
                                    c->tables, (c->ntables + 1) * sizeof *nt);
                                char *dup = floe_strdup(tn);
                                if (!nt || !dup) {
                                    floe_free(dup);
                                    if (nt)
                                        c->tables = nt;
                                    floe_free(line);
                                    return floe_error_set(err, FLOE_ENOMEM, "out of memory");
                                }
                                c->tables = nt;
                                section = &c->tables[c->ntables++];
                                *section = c->defaults;
                                section->name = dup;
                            }
                        }
                    } else {
                        rc = floe_error_set(err, FLOE_EINVALID,
                                            "%s:%d: unknown section [%s] (want [defaults] or "
                                            "[table NS.NAME])", source, line_no, name);
                    }
                }
                floe_free(line);
                continue;
            }
            char *eq = strchr(l, '=');
            if (!eq) {
                rc = floe_error_set(err, FLOE_EINVALID, "%s:%d: expected key = value", source,
                                    line_no);
                floe_free(line);
                continue;
            }
            *eq = '\0';
            char *key = trim(l), *val = trim(eq + 1);
            bool apply = (pass == 0) == in_defaults;
            bool ok = true;
            if (in_defaults && (!strcmp(key, "lease-ttl") || !strcmp(key, "tick") ||
                                !strcmp(key, "job-delay") || !strcmp(key, "rate-probe"))) {
                int64_t *dst = !strcmp(key, "lease-ttl")    ? &c->lease_ttl_ms
                               : !strcmp(key, "tick")       ? &c->tick_ms
                               : !strcmp(key, "rate-probe") ? &c->rate_probe_ms
                                                            : &c->job_delay_ms;
                int64_t v;
                ok = floe_parse_duration(val, 1, &v) && (v > 0 || dst == &c->job_delay_ms);
                if (ok && apply)
                    *dst = v;
            } else if (apply) {
                ok = apply_setting(section, key, val);
            } else {
                floe_maint_table_config scratch;
                defaults_init(&scratch);
                ok = apply_setting(&scratch, key, val);
            }
            if (!ok)
                rc = floe_error_set(err, FLOE_EINVALID, "%s:%d: bad setting %s = %s", source,
                                    line_no, key, val);
            floe_free(line);
        }
    }
    return rc;
}

const floe_maint_job_config *floe_maint_config_job(const floe_maint_config *c,
                                                   const char *table, floe_maint_job j) {
    for (size_t i = 0; table && i < c->ntables; i++)
        if (!strcmp(c->tables[i].name, table))
            return &c->tables[i].jobs[j];
    return &c->defaults.jobs[j];
}

/* ---------------------------------------------------------------------------------------
 * the scheduler
 * ------------------------------------------------------------------------------------- */

typedef struct mtable {
    char *ns, *name, *full;
    int64_t next_due[FLOE_JOB_COUNT];
    int64_t last_end[FLOE_JOB_COUNT]; /* when the job last finished here; 0 never */
    int64_t commit_interval_ms; /* writer commits, as last measured; -1 unknown */
    int64_t rate_checked_ms;    /* when it was measured */
} mtable;

static int64_t job_interval_ms(const floe_maint_job_config *jc, const mtable *mt,
                               floe_maint_job j);

struct floe_maint {
    floe_catalog *cat;
    floe_lease_store *leases;
    floe_maint_config cfg;
    floe_maint_hooks hooks;
    char owner[160];
    mtable *tables;
    size_t ntables;
    floe_maint_run_fn on_run;
    void *on_run_ctx;
    pthread_mutex_t mu; /* metrics */
    floe_maint_metrics metrics;
};

static int config_copy(const floe_maint_config *src, floe_maint_config *dst, floe_error *err) {
    *dst = *src;
    dst->tables = NULL;
    dst->ntables = 0;
    if (!src->ntables)
        return 0;
    dst->tables = floe_calloc(src->ntables, sizeof *dst->tables);
    if (!dst->tables)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < src->ntables; i++) {
        dst->tables[i] = src->tables[i];
        dst->tables[i].name = floe_strdup(src->tables[i].name);
        dst->ntables++;
        if (!dst->tables[i].name)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    return 0;
}

int floe_maint_new(floe_catalog *cat, floe_lease_store *leases, const floe_maint_config *cfg,
                   const floe_maint_hooks *hooks, floe_maint **out, floe_error *err) {
    floe_maint *m = floe_calloc(1, sizeof *m);
    if (!m)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    m->cat = cat;
    m->leases = leases;
    pthread_mutex_init(&m->mu, NULL);
    floe_maint_config defaults;
    if (!cfg) {
        floe_maint_config_init(&defaults);
        cfg = &defaults;
    }
    int rc = config_copy(cfg, &m->cfg, err);
    if (rc < 0) {
        floe_maint_free(m);
        return rc;
    }
    if (hooks)
        m->hooks = *hooks;
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    uint32_t rnd;
    floe_random_bytes(&rnd, sizeof rnd);
    snprintf(m->owner, sizeof m->owner, "%s:%ld:%08x", host, (long)getpid(), rnd);
    *out = m;
    return 0;
}

int floe_maint_set_config(floe_maint *m, const floe_maint_config *cfg, floe_error *err) {
    floe_maint_config fresh;
    int rc = config_copy(cfg, &fresh, err);
    if (rc < 0) {
        floe_maint_config_reset(&fresh);
        return rc;
    }
    floe_maint_config_reset(&m->cfg);
    m->cfg = fresh;
    /* a shorter interval counts from now; a longer one lets the planned run happen */
    int64_t now = floe_wall_ms();
    for (size_t i = 0; i < m->ntables; i++)
        for (int j = 0; j < FLOE_JOB_COUNT; j++) {
            const floe_maint_job_config *jc =
                floe_maint_config_job(&m->cfg, m->tables[i].full, (floe_maint_job)j);
            int64_t due = now + job_interval_ms(jc, &m->tables[i], (floe_maint_job)j);
            if (m->tables[i].next_due[j] > due)
                m->tables[i].next_due[j] = due;
        }
    return 0;
}

void floe_maint_free(floe_maint *m) {
    if (!m)
        return;
    for (size_t i = 0; i < m->ntables; i++) {
        floe_free(m->tables[i].ns);
        floe_free(m->tables[i].name);
        floe_free(m->tables[i].full);
    }
    floe_free(m->tables);
    floe_maint_config_reset(&m->cfg);
    pthread_mutex_destroy(&m->mu);
    floe_free(m);
}

const char *floe_maint_owner(const floe_maint *m) {
    return m->owner;
}

void floe_maint_on_run(floe_maint *m, floe_maint_run_fn fn, void *ctx) {
    m->on_run = fn;
    m->on_run_ctx = ctx;
}

int floe_maint_add_table(floe_maint *m, const char *ns, const char *name, floe_error *err) {
    mtable *nt = floe_realloc(m->tables, (m->ntables + 1) * sizeof *nt);
    if (!nt)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    m->tables = nt;
    mtable *t = &m->tables[m->ntables];
    memset(t, 0, sizeof *t);
    t->commit_interval_ms = -1;
    t->ns = floe_strdup(ns);
    t->name = floe_strdup(name);
    t->full = floe_asprintf("%s.%s", ns, name);
    if (!t->ns || !t->name || !t->full) {
        floe_free(t->ns);
        floe_free(t->name);
        floe_free(t->full);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    m->ntables++;
    return 0;
}

void floe_maint_metrics_get(const floe_maint *m, floe_maint_metrics *out) {
    pthread_mutex_lock((pthread_mutex_t *)&m->mu);
    *out = m->metrics;
    pthread_mutex_unlock((pthread_mutex_t *)&m->mu);
}

/* ---- heartbeat ------------------------------------------------------------------- */

typedef struct heartbeat {
    floe_maint *m;
    const floe_lease_key *key;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    bool lost;
    pthread_t thr;
} heartbeat;

static void *heartbeat_main(void *arg) {
    heartbeat *h = arg;
    int64_t every = h->m->cfg.lease_ttl_ms / 3;
    if (every < 10)
        every = 10;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(every / 1000);
        ts.tv_nsec += (long)(every % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (h->stop)
            break;
        pthread_mutex_unlock(&h->mu);
        bool held = true;
        floe_error e;
        floe_error_clear(&e);
        if (floe_lease_renew(h->m->leases, h->key, h->m->owner, h->m->cfg.lease_ttl_ms, &held,
                             &e) < 0)
            floe_log(FLOE_LOG_WARN, "maintain: renewing lease %s: %s", h->key->job, e.msg);
        pthread_mutex_lock(&h->mu);
        if (!held && !h->lost) {
            h->lost = true;
            floe_log(FLOE_LOG_ERROR, "maintain: lease %s.%s/%s was lost (taken over after it "
                     "expired)", h->key->table_namespace, h->key->table_name, h->key->job);
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- cadence from the commit rate ------------------------------------------------ */

/* A table whose writers commit at least this often is maintained for streaming. */
#define FREQUENT_COMMITS_MS (5 * 60000LL)
#define RATE_WINDOW_MS 3600000LL

/* Mean interval between the writers' commits (every snapshot but this maintenance's
 * "replace" ones) over the last hour, and at least the time since the last one: -1 with
 * fewer than two in the window. */
static int64_t writer_commit_interval(const floe_table_metadata *m, int64_t now) {
    int64_t lo = INT64_MAX, hi = INT64_MIN, n = 0;
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        if ((s->operation && !strcmp(s->operation, "replace")) ||
            s->timestamp_ms < now - RATE_WINDOW_MS)
            continue;
        n++;
        if (s->timestamp_ms < lo)
            lo = s->timestamp_ms;
        if (s->timestamp_ms > hi)
            hi = s->timestamp_ms;
    }
    if (n < 2)
        return -1;
    int64_t mean = (hi - lo) / (n - 1);
    return now - hi > mean ? now - hi : mean;
}

static bool frequent(const mtable *mt) {
    return mt->commit_interval_ms >= 0 && mt->commit_interval_ms < FREQUENT_COMMITS_MS;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* Snapshot retention of a table with frequent commits when neither the configuration nor
 * the table says: the last 100 commits, at least 5 minutes (the time a query planned on
 * a snapshot has to read its files), at most an hour. */
static int64_t auto_retention_ms(const mtable *mt) {
    return clamp64(100 * mt->commit_interval_ms, 5 * 60000LL, 3600000LL);
}

/* The cadence of job j on this table. */
static int64_t job_interval_ms(const floe_maint_job_config *jc, const mtable *mt,
                               floe_maint_job j) {
    int64_t configured = jc->interval_ms > 0 ? jc->interval_ms : 60000;
    if (!jc->interval_auto || !frequent(mt))
        return configured;
    int64_t c = mt->commit_interval_ms;
    switch (j) {
    case FLOE_JOB_REWRITE_DATA: /* a hot partition gains a file or two between runs */
        return clamp64(2 * c, 1000, configured);
    case FLOE_JOB_REWRITE_MANIFESTS: /* appends add one manifest each */
        return clamp64(8 * c, 10000, configured);
    case FLOE_JOB_EXPIRE: /* five runs per retention period */
        return clamp64(auto_retention_ms(mt) / 5, 60000, configured);
    default:
        return configured;
    }
}

/* ---- the jobs -------------------------------------------------------------------- */

/* Data manifests of the current snapshot and their bytes. */
static int count_manifests(floe_table *t, int64_t *n, int64_t *bytes, floe_error *err) {
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(t));
    *n = 0;
    *bytes = 0;
    if (!s)
        return 0;
    if (!s->manifest_list) {
        *n = (int64_t)s->n_manifests;
        return 0;
    }
    char *uri = NULL;
    floe_arena a;
    floe_arena_init(&a, 16 * 1024);
    int rc = floe_table_resolve_path(t, s->manifest_list, &uri, err);
    floe_manifest_list ml;
    floe_manifest_list_read_options ro = {.allow_missing_field_ids = true};
    if (rc == 0)
        rc = floe_manifest_list_read(floe_table_io(t), uri, &ro, &a, &ml, err);
    for (size_t i = 0; rc == 0 && i < ml.nfiles; i++) {
        if (ml.files[i].content != FLOE_MANIFEST_DATA)
            continue;
        (*n)++;
        *bytes += ml.files[i].manifest_length > 0 ? ml.files[i].manifest_length : 0;
    }
    floe_free(uri);
    floe_arena_reset(&a);
    return rc;
}

static int do_job(floe_maint *m, mtable *mt, floe_maint_job j,
                  const floe_maint_job_config *jc, bool *skipped,
                  floe_maint_job_stats *st, char *detail, size_t dn, floe_error *err) {
    floe_table *t = NULL;
    floe_sql *state = NULL; /* a REST catalog's state database, for the landing lifecycle */
    int rc = 0;
    int64_t now = floe_wall_ms();
    *skipped = false;
    memset(st, 0, sizeof *st);
    /* Ages are judged by the catalog database's clock where there is one: every node that
     * maintains the table (and writes the landing index it ages) then cuts at the same
     * moment, however far its own clock is off. */
    floe_sql *cdb = floe_catalog_sql(m->cat);
    if (cdb)
        FLOE_CHECK(floe_sql_clock_ms(cdb, &now, err));
    if (j != FLOE_JOB_LANDING_LIFECYCLE) {
        FLOE_CHECK(floe_table_load(m->cat, mt->ns, mt->name, &t, err));
        mt->commit_interval_ms = writer_commit_interval(floe_table_metadata_get(t), now);
        mt->rate_checked_ms = now;
    }
    /* gc.enabled=false: the jobs that delete the table's files are skipped, not failed -
     * the table asks for it (floe/table.h floe_table_gc_check); the others run */
    if ((j == FLOE_JOB_EXPIRE || j == FLOE_JOB_ORPHANS) &&
        !floe_table_metadata_gc_enabled(floe_table_metadata_get(t))) {
        *skipped = true;
        snprintf(detail, dn, "table property %s is false: no %s (deleting files may corrupt "
                 "other tables)", FLOE_PROP_GC_ENABLED,
                 j == FLOE_JOB_EXPIRE ? "snapshot expiry" : "orphan removal");
        goto done;
    }
    switch (j) {
    case FLOE_JOB_LANDING_COMPACT:
        if (!m->hooks.landing_compact) {
            *skipped = true;
            snprintf(detail, dn, "no landing compaction hook here (it runs inside floe serve)");
            break;
        }
        rc = m->hooks.landing_compact(m->hooks.ctx, t, err);
        snprintf(detail, dn, "landing compaction done");
        break;
    case FLOE_JOB_REWRITE_DATA:
        if (!m->hooks.rewrite_data) {
            *skipped = true;
            snprintf(detail, dn, "small-file rewrite not available in this build");
            break;
        }
        {
            floe_maint_rewrite_params rp = {
                .generational = jc->planner == FLOE_MAINT_PLANNER_GENERATIONAL ||
                                (jc->planner == FLOE_MAINT_PLANNER_AUTO && frequent(mt)),
                .options = jc->rewrite_options};
            rc = m->hooks.rewrite_data(m->hooks.ctx, t, &rp, st, detail, dn, err);
        }
        break;
    case FLOE_JOB_REWRITE_MANIFESTS: {
        int64_t n = 0, bytes = 0;
        FLOE_CHECK(count_manifests(t, &n, &bytes, err));
        int64_t target = jc->target_size_bytes > 0
                             ? jc->target_size_bytes
                             : floe_table_metadata_property_int(floe_table_metadata_get(t),
                                                                "commit.manifest.target-size-"
                                                                "bytes", 8LL << 20);
        if (target <= 0)
            target = 8LL << 20;
        int64_t ideal = (bytes + target - 1) / target;
        if (n <= jc->min_manifests || n <= 2 * ideal) {
            *skipped = true;
            snprintf(detail, dn, "%" PRId64 " data manifests (%" PRId64 " bytes), threshold %"
                     PRId64, n, bytes, jc->min_manifests > 2 * ideal ? jc->min_manifests
                                                                     : 2 * ideal);
            break;
        }
        floe_rewrite_manifests_options o;
        floe_rewrite_manifests_options_init(&o);
        o.target_size_bytes = jc->target_size_bytes;
        floe_rewrite_manifests_result r;
        FLOE_CHECK(floe_maint_rewrite_manifests(t, &o, &r, err));
        st->files_read = r.manifests_replaced;
        st->files_written = r.manifests_created;
        st->attempts = r.attempts;
        st->commits = r.noop ? 0 : 1;
        st->conflicts = r.attempts > 1 ? r.attempts - 1 : 0; /* the last one decided */
        snprintf(detail, dn, "manifests %" PRId64 " -> %" PRId64 " (snapshot %" PRId64 ", %d "
                 "attempt(s))", r.manifests_before, r.manifests_after, r.snapshot_id,
                 r.attempts);
        break;
    }
    case FLOE_JOB_EXPIRE: {
        floe_expire_options o;
        floe_expire_options_init(&o);
        int64_t age = jc->older_than_ms;
        if (age < 0 && frequent(mt) &&
            !floe_table_metadata_property(floe_table_metadata_get(t),
                                          FLOE_PROP_MAX_SNAPSHOT_AGE_MS))
            age = auto_retention_ms(mt);
        if (age >= 0)
            o.older_than_ms = now - age;
        o.retain_last = jc->retain_last;
        floe_expire_result r;
        FLOE_CHECK(floe_maint_expire(t, &o, &r, err));
        for (int k = 0; k < FLOE_MAINT_NKINDS; k++)
            st->files_deleted += r.files[k];
        st->snapshots_expired = r.snapshots_expired;
        st->attempts = r.attempts;
        st->commits = r.snapshots_expired > 0 ? 1 : 0;
        st->conflicts = r.attempts > 1 ? r.attempts - 1 : 0; /* the last one decided */
        if (age >= 0)
            snprintf(detail, dn, "%" PRId64 " snapshots expired (older than %" PRId64 " s), %"
                     PRId64 " files deleted", r.snapshots_expired, age / 1000, st->files_deleted);
        else
            snprintf(detail, dn, "%" PRId64 " snapshots expired, %" PRId64 " files deleted",
                     r.snapshots_expired, st->files_deleted);
        floe_expire_result_reset(&r);
        break;
    }
    case FLOE_JOB_ORPHANS: {
        floe_orphan_options o;
        floe_orphan_options_init(&o);
        o.older_than_ms = now - (jc->older_than_ms >= 0 ? jc->older_than_ms
                                                        : 3 * FLOE_MAINT_DAY_MS);
        floe_orphan_result r;
        FLOE_CHECK(floe_maint_orphans(t, &o, &r, err));
        st->files_deleted = r.orphans;
        st->bytes_deleted = r.orphan_bytes;
        snprintf(detail, dn, "%" PRId64 " listed, %" PRId64 " orphans deleted (%" PRId64
                 " bytes)", r.listed, r.orphans, r.orphan_bytes);
        break;
    }
    case FLOE_JOB_LANDING_LIFECYCLE: {
        floe_landing_lifecycle_options o;
        floe_landing_lifecycle_options_init(&o);
        o.table = mt->full;
        o.age_ms = jc->older_than_ms;
        o.quarantine_retention_ms = jc->quarantine_retention_ms;
        /* floe serve keeps the index in the catalog's database, or in a REST catalog's
         * state database */
        o.db = cdb;
        if (!cdb && floe_catalog_state_db(m->cat)) {
            FLOE_CHECK(floe_sql_open_with(floe_catalog_state_db(m->cat),
                                          floe_catalog_sql_options(m->cat), &state, err));
            o.db = state;
        }
        o.io = floe_catalog_io(m->cat);
        o.sql = *floe_catalog_sql_options(m->cat);
        o.now_ms = now;
        floe_landing_lifecycle_result r;
        FLOE_CHECK(floe_maint_landing_lifecycle(floe_catalog_warehouse(m->cat), &o, &r, err));
        st->files_deleted = r.landing_deleted + r.quarantine_deleted;
        st->bytes_deleted = r.landing_bytes;
        if (r.no_index)
            snprintf(detail, dn, "no landing index");
        else
            snprintf(detail, dn, "%" PRId64 " landing and %" PRId64 " quarantine files deleted, "
                     "%" PRId64 " uncommitted kept", r.landing_deleted, r.quarantine_deleted,
                     r.kept_uncommitted);
        break;
    }
    case FLOE_JOB_REWRITE_DELETES: {
        int fv = floe_table_metadata_get(t)->format_version;
        if (fv < 3) { /* vectors need v3; the job is not an upgrade */
            *skipped = true;
            snprintf(detail, dn, "format v%d: deletion vectors need v3", fv);
            break;
        }
        floe_rewrite_deletes_result r;
        FLOE_CHECK(floe_table_rewrite_deletes(t, NULL, &r, err));
        if (r.noop) {
            *skipped = true;
            snprintf(detail, dn, "no equality or position delete file to resolve");
            break;
        }
        st->files_read = r.files_scanned;
        st->files_written = r.dvs_added;
        st->files_deleted = r.equality_delete_files_removed + r.position_delete_files_removed;
        st->commits = 1;
        st->attempts = r.attempts;
        st->conflicts = r.attempts > 1 ? r.attempts - 1 : 0; /* the last one decided */
        snprintf(detail, dn, "%" PRId64 " equality and %" PRId64 " position delete files "
                 "resolved into %" PRId64 " vectors over %" PRId64 " data files (snapshot %"
                 PRId64 ", %d plan(s))", r.equality_delete_files_removed,
                 r.position_delete_files_removed, r.dvs_added, r.data_files_resolved,
                 r.snapshot_id, r.plans);
        break;
    }
    default:
        rc = floe_error_set(err, FLOE_EINVALID, "unknown job %d", (int)j);
    }
done:
    floe_sql_close(state);
    floe_table_close(t);
    return rc;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Run one job on one table under its lease; never fails the scheduler (errors are the
 * run's result). */
static void run_job(floe_maint *m, mtable *mt, floe_maint_job j) {
    const floe_maint_job_config *jc = floe_maint_config_job(&m->cfg, mt->full, j);
    if (!jc->enabled)
        return;
    floe_lease_key key = {floe_catalog_name(m->cat), mt->ns, mt->name, job_names[j]};
    floe_maint_run run = {.table = mt->full, .job = j, .owner = m->owner};
    char detail[FLOE_ERROR_MSG_MAX + 64] = "";
    floe_error err;
    floe_error_clear(&err);
    heartbeat hb;
    bool hb_started = false, leased = false;
    if (m->leases) {
        bool acquired = false;
        int rc = floe_lease_acquire(m->leases, &key, m->owner, m->cfg.lease_ttl_ms, &acquired,
                                    &err);
        if (rc < 0 || !acquired) {
            run.lease_busy = rc == 0;
            run.skipped = true;
            run.rc = rc;
            run.start_ms = run.end_ms = floe_wall_ms();
            snprintf(detail, sizeof detail, "%s", rc < 0 ? err.msg : "lease held by another "
                     "maintainer");
            goto report;
        }
        leased = true;
        memset(&hb, 0, sizeof hb);
        hb.m = m;
        hb.key = &key;
        pthread_mutex_init(&hb.mu, NULL);
        pthread_cond_init(&hb.cv, NULL);
        hb_started = pthread_create(&hb.thr, NULL, heartbeat_main, &hb) == 0;
        if (!hb_started) {
            pthread_mutex_destroy(&hb.mu);
            pthread_cond_destroy(&hb.cv);
        }
    }
    run.start_ms = floe_wall_ms();
    run.rc = do_job(m, mt, j, jc, &run.skipped, &run.stats, detail, sizeof detail, &err);
    run.commit_interval_ms = mt->commit_interval_ms;
    int64_t deleted = run.stats.files_deleted;
    if (run.rc < 0)
        snprintf(detail, sizeof detail, "%s", err.msg);
    if (m->cfg.job_delay_ms > 0)
        sleep_ms(m->cfg.job_delay_ms);
    run.end_ms = floe_wall_ms();
    if (hb_started) {
        pthread_mutex_lock(&hb.mu);
        hb.stop = true;
        pthread_cond_signal(&hb.cv);
        pthread_mutex_unlock(&hb.mu);
        pthread_join(hb.thr, NULL);
        pthread_mutex_destroy(&hb.mu);
        pthread_cond_destroy(&hb.cv);
    }
    if (leased) {
        floe_error e;
        floe_error_clear(&e);
        if (floe_lease_release(m->leases, &key, m->owner, &e) < 0)
            floe_log(FLOE_LOG_WARN, "maintain: releasing lease %s: %s", key.job, e.msg);
    }
    pthread_mutex_lock(&m->mu);
    {
        floe_maint_job_metrics *jm = &m->metrics.jobs[j];
        if (run.skipped) {
            jm->skipped++;
        } else {
            jm->runs++;
            if (run.rc < 0)
                jm->failed++;
            else
                jm->ok++;
        }
        jm->files_deleted += deleted;
        jm->last_start_ms = run.start_ms;
        jm->last_duration_ms = run.end_ms - run.start_ms;
        jm->last_rc = run.rc;
    }
    pthread_mutex_unlock(&m->mu);
report:
    if (run.lease_busy) {
        pthread_mutex_lock(&m->mu);
        m->metrics.jobs[j].lease_busy++;
        pthread_mutex_unlock(&m->mu);
    }
    run.detail = detail;
    floe_log(run.rc < 0 ? FLOE_LOG_ERROR : FLOE_LOG_INFO,
             "maintain: %s %s: %s%s (%" PRId64 " ms)", mt->full, job_names[j],
             run.rc < 0 ? "failed: " : run.skipped ? "skipped: " : "ok: ", detail,
             run.end_ms - run.start_ms);
    if (m->on_run)
        m->on_run(m->on_run_ctx, &run);
}

int floe_maint_run_once(floe_maint *m, floe_error *err) {
    (void)err;
    for (size_t i = 0; i < m->ntables; i++)
        for (int j = 0; j < FLOE_JOB_COUNT; j++)
            run_job(m, &m->tables[i], (floe_maint_job)j);
    return 0;
}

/* A table measured quiet is looked at again every rate_probe_ms: when its writers speed
 * up, the cadences that follow the commit rate must not wait out an hourly interval. */
static void probe_rate(floe_maint *m, mtable *mt, int64_t now) {
    floe_table *t = NULL;
    floe_error e;
    floe_error_clear(&e);
    mt->rate_checked_ms = now;
    if (floe_table_load(m->cat, mt->ns, mt->name, &t, &e) < 0)
        return; /* the job's own run reports it */
    mt->commit_interval_ms = writer_commit_interval(floe_table_metadata_get(t), now);
    floe_table_close(t);
    for (int j = 0; j < FLOE_JOB_COUNT; j++) {
        if (!mt->last_end[j])
            continue;
        const floe_maint_job_config *jc =
            floe_maint_config_job(&m->cfg, mt->full, (floe_maint_job)j);
        int64_t due = mt->last_end[j] + job_interval_ms(jc, mt, (floe_maint_job)j);
        if (due < mt->next_due[j])
            mt->next_due[j] = due;
    }
}

int floe_maint_tick(floe_maint *m, const volatile int *stop, floe_error *err) {
    (void)err;
    int64_t now = floe_wall_ms();
    for (size_t i = 0; i < m->ntables && !*stop; i++) {
        mtable *mt = &m->tables[i];
        if (!frequent(mt) && now - mt->rate_checked_ms >= m->cfg.rate_probe_ms)
            probe_rate(m, mt, now);
        for (int j = 0; j < FLOE_JOB_COUNT && !*stop; j++) {
            const floe_maint_job_config *jc =
                floe_maint_config_job(&m->cfg, mt->full, (floe_maint_job)j);
            if (!jc->enabled || now < mt->next_due[j])
                continue;
            run_job(m, mt, (floe_maint_job)j);
            mt->last_end[j] = floe_wall_ms();
            mt->next_due[j] = mt->last_end[j] + job_interval_ms(jc, mt, (floe_maint_job)j);
        }
    }
    return 0;
}

int floe_maint_run_loop(floe_maint *m, const volatile int *stop, floe_error *err) {
    while (!*stop) {
        FLOE_FORWARD_IF_ERROR(floe_maint_tick(m, stop, err));
        for (int64_t slept = 0; slept < m->cfg.tick_ms && !*stop; slept += 50)
            sleep_ms(50);
    }
    return 0;
}
