/*
 * connguard.c - slow and idle clients of a libmicrohttpd server (common/connguard.h).
 *
 * The connections are a list under the guard's mutex; their phase, the time it began and
 * the body bytes read are atomics the request threads set without the lock. The watchdog
 * and make_room shut a socket down (the library then closes the connection) under the
 * lock, and the close notification unlinks a connection under it, so neither touches an
 * fd after it is closed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/connguard.h"

typedef struct conn_state {
    struct conn_state *prev, *next;
    int fd;
    _Atomic int phase;
    _Atomic int64_t since_ms;
    _Atomic int64_t body_bytes; /* of the body being read (FLOE_CONN_BODY) */
    int64_t opened_ms;
    bool shut;
} conn_state;

struct floe_connguard {
    floe_connguard_config cfg;
    pthread_mutex_t mu;
    conn_state *conns; /* mu */
    int64_t nconns;    /* mu */
    _Atomic uint64_t evicted;
    _Atomic bool stop;
    pthread_t thr;
};

static int64_t now_ms(void) {
    return floe_now_ns() / 1000000;
}

/* Called with mu held when a connection arrives with max_connections open. */
static void make_room(floe_connguard *g, conn_state *newcomer, int64_t now) {
    conn_state *idle = NULL, *slow = NULL;
    double slow_rate = 0;
    for (conn_state *cs = g->conns; cs; cs = cs->next) {
        if (cs == newcomer || cs->shut || cs->fd < 0 ||
            now - cs->opened_ms < FLOE_CONNGUARD_GRACE_MS)
            continue;
        int ph = atomic_load(&cs->phase);
        int64_t since = atomic_load(&cs->since_ms);
        if (ph == FLOE_CONN_HEADERS && now - since >= FLOE_CONNGUARD_GRACE_MS) {
            if (!idle || since < atomic_load(&idle->since_ms))
                idle = cs;
        } else if (ph == FLOE_CONN_BODY && now - since >= FLOE_CONNGUARD_GRACE_MS) {
            double rate = (double)atomic_load(&cs->body_bytes) * 1000.0 / (double)(now - since);
            if (!slow || rate < slow_rate) {
                slow = cs;
                slow_rate = rate;
            }
        }
    }
    conn_state *victim = idle ? idle : slow ? slow : newcomer;
    if (victim->fd >= 0)
        shutdown(victim->fd, SHUT_RDWR);
    victim->shut = true;
    if (victim != newcomer)
        atomic_fetch_add(&g->evicted, 1);
}

void floe_connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe) {
    floe_connguard *g = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_state *cs = floe_calloc(1, sizeof *cs);
        if (!cs)
            return; /* unguarded: the library's own timeout still closes it when silent */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        cs->fd = ci ? ci->connect_fd : -1;
        int64_t now = now_ms();
        cs->opened_ms = now;
        atomic_store(&cs->phase, FLOE_CONN_HEADERS);
        atomic_store(&cs->since_ms, now);
        pthread_mutex_lock(&g->mu);
        cs->next = g->conns;
        if (cs->next)
            cs->next->prev = cs;
        g->conns = cs;
        if (++g->nconns > g->cfg.max_connections)
            make_room(g, cs, now);
        pthread_mutex_unlock(&g->mu);
        *socket_context = cs;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_state *cs = *socket_context;
        if (!cs)
            return;
        pthread_mutex_lock(&g->mu);
        if (cs->prev)
            cs->prev->next = cs->next;
        else
            g->conns = cs->next;
        if (cs->next)
            cs->next->prev = cs->prev;
        g->nconns--;
        pthread_mutex_unlock(&g->mu);
        floe_free(cs);
        *socket_context = NULL;
    }
}

static conn_state *conn_of(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? (conn_state *)ci->socket_context : NULL;
}

void floe_connguard_phase(struct MHD_Connection *c, floe_conn_phase phase) {
    conn_state *cs = conn_of(c);
    if (!cs)
        return;
    atomic_store(&cs->since_ms, now_ms());
    if (phase == FLOE_CONN_BODY)
        atomic_store(&cs->body_bytes, 0);
    atomic_store(&cs->phase, (int)phase);
}

void floe_connguard_body_bytes(struct MHD_Connection *c, int64_t n) {
    conn_state *cs = conn_of(c);
    if (cs)
        atomic_store(&cs->body_bytes, n);
}

/* Shut down what outlasted its phase's timeout, five times a second. */
static void *watchdog_main(void *arg) {
    floe_connguard *g = arg;
    (void)pthread_setname_np(pthread_self(), "floe-watch"); /* cosmetic */
    while (!atomic_load(&g->stop)) {
        usleep(200000);
        int64_t now = now_ms();
        pthread_mutex_lock(&g->mu);
        for (conn_state *cs = g->conns; cs; cs = cs->next) {
            int ph = atomic_load(&cs->phase);
            int64_t age = now - atomic_load(&cs->since_ms);
            int64_t limit = ph == FLOE_CONN_HEADERS ? g->cfg.header_timeout_ms
                            : ph == FLOE_CONN_BODY  ? g->cfg.read_timeout_ms
                                                    : INT64_MAX;
            if (!cs->shut && cs->fd >= 0 && age > limit) {
                shutdown(cs->fd, SHUT_RDWR);
                cs->shut = true;
            }
        }
        pthread_mutex_unlock(&g->mu);
    }
    return NULL;
}

int floe_connguard_start(const floe_connguard_config *cfg, floe_connguard **out, floe_error *err) {
    floe_connguard *g = floe_calloc(1, sizeof *g);
    if (!g)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    g->cfg = *cfg;
    pthread_mutex_init(&g->mu, NULL);
    if (pthread_create(&g->thr, NULL, watchdog_main, g) != 0) {
        pthread_mutex_destroy(&g->mu);
        floe_free(g);
        return floe_error_set(err, FLOE_EIO, "cannot start the connection watchdog thread");
    }
    *out = g;
    return 0;
}

void floe_connguard_stop(floe_connguard *g) {
    if (!g)
        return;
    atomic_store(&g->stop, true);
    pthread_join(g->thr, NULL);
    /* connections the daemon did not report closed (it is stopped: none should be) */
    for (conn_state *cs = g->conns, *next; cs; cs = next) {
        next = cs->next;
        floe_free(cs);
    }
    pthread_mutex_destroy(&g->mu);
    floe_free(g);
}

unsigned floe_connguard_mhd_limit(const floe_connguard_config *cfg) {
    return (unsigned)(cfg->max_connections + cfg->max_connections / 8 + 8);
}

unsigned floe_connguard_mhd_timeout_s(const floe_connguard_config *cfg) {
    return (unsigned)((cfg->header_timeout_ms + cfg->read_timeout_ms) / 1000 + 1);
}

int64_t floe_connguard_open(floe_connguard *g) {
    pthread_mutex_lock(&g->mu);
    int64_t n = g->nconns;
    pthread_mutex_unlock(&g->mu);
    return n;
}

uint64_t floe_connguard_evicted(floe_connguard *g) {
    return atomic_load(&g->evicted);
}
