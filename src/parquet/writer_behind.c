/*
 * writer_behind.c - the Parquet writer's write-behind thread and its output writes (see
 * writer.c for how the writer uses it).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "parquet/writer_internal.h"

/* =====================================================================================
 * Write-behind: a thread writing handed-over buffers to the output, in order
 * =================================================================================== */

/* Bytes handed over and not yet written, at most (one larger buffer alone may exceed
 * it): without a bound a device slower than the encoding would let whole row groups
 * queue up, and peak memory would depend on the disk. */
#define WB_MAX_BYTES ((size_t)32 << 20)

typedef struct wb_item {
    uint8_t *data; /* owned: freed once written (or dropped), or kept (keep_cap) */
    size_t len;
    size_t keep_cap; /* a chunk segment of this capacity for the pool; 0: free it */
} wb_item;

typedef struct write_behind {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* items queued, an item done, stop */
    wb_item *q;              /* ring of cap items: n queued from head */
    size_t head, n, cap;
    size_t bytes;            /* bytes queued or being written */
    bool busy;               /* the thread is writing an item taken off the ring */
    bool stop;               /* leave once the ring is empty */
    int rc;                  /* first write error: later items are dropped */
    floe_error err;
    floe_output *out;
    floe_pq_writer *w;       /* its segment pool */
} write_behind;

/* =====================================================================================
 * Chunk segments kept for the next row group (floe_pq_writer.seg_pool)
 * =================================================================================== */

/* A segment the pool takes: one of floe_alloc_huge's (aligned to 2 MiB) of 4 MiB and
 * more; glibc maps those apart (floe convert's mmap threshold), where the 2 MiB ones of
 * its heap leave holes that other buffers reuse. */
static bool seg_poolable(const floe_buf *b) {
    return b->data && b->cap >= 2 * CHUNK_SEG_HUGE &&
           ((uintptr_t)b->data & (CHUNK_SEG_HUGE - 1)) == 0;
}

/* b's storage into the pool (freed when the pool has what the next row group needs, or
 * cannot grow); b is left empty. */
static void seg_pool_put(floe_pq_writer *w, floe_buf *b) {
    pthread_mutex_lock(&w->seg_mu);
    size_t kept = atomic_load(&w->seg_pool_bytes);
    bool room = kept + w->seg_held + b->cap <= w->seg_target;
    if (room && w->seg_npool == w->seg_pool_cap) {
        size_t nc = w->seg_pool_cap ? w->seg_pool_cap * 2 : 16;
        floe_buf *np = floe_realloc(w->seg_pool, nc * sizeof *np);
        if (np) {
            w->seg_pool = np;
            w->seg_pool_cap = nc;
        }
    }
    if (room && w->seg_npool < w->seg_pool_cap) {
        floe_buf *k = &w->seg_pool[w->seg_npool++];
        floe_buf_init(k, 0);
        k->data = b->data;
        k->cap = b->cap;
        atomic_store(&w->seg_pool_bytes, kept + b->cap);
        b->data = NULL;
    }
    pthread_mutex_unlock(&w->seg_mu);
    floe_buf_free(b); /* nothing left when kept */
}

bool pqw_seg_take(floe_pq_writer *w, size_t size, floe_buf *b) {
    pthread_mutex_lock(&w->seg_mu);
    /* the smallest kept segment of at least size bytes */
    size_t best = w->seg_npool;
    for (size_t i = 0; i < w->seg_npool; i++)
        if (w->seg_pool[i].cap >= size &&
            (best == w->seg_npool || w->seg_pool[i].cap < w->seg_pool[best].cap))
            best = i;
    size_t kept = atomic_load(&w->seg_pool_bytes);
    if (best < w->seg_npool) {
        size_t cap = w->seg_pool[best].cap;
        b->data = w->seg_pool[best].data; /* b's limit and error stay */
        b->cap = cap;
        b->len = 0;
        w->seg_pool[best] = w->seg_pool[--w->seg_npool];
        atomic_store(&w->seg_pool_bytes, kept - cap);
        w->seg_held += cap;
        pthread_mutex_unlock(&w->seg_mu);
        return true;
    }
    /* none fits: the caller allocates size fresh bytes; the kept ones it cannot use go
     * first, as far as they would take the pool and the columns past the last row
     * group's segments */
    while (w->seg_npool > 0 && kept + w->seg_held + size > w->seg_target) {
        floe_buf *k = &w->seg_pool[--w->seg_npool];
        kept -= k->cap;
        floe_buf_free(k);
    }
    atomic_store(&w->seg_pool_bytes, kept);
    pthread_mutex_unlock(&w->seg_mu);
    return false;
}

void pqw_seg_held(floe_pq_writer *w, size_t bytes) {
    pthread_mutex_lock(&w->seg_mu);
    w->seg_held += bytes;
    pthread_mutex_unlock(&w->seg_mu);
}

/* The pool keeps three quarters of a row group's segments: the last quarter of the next
 * one's is allocated fresh, as without the pool. The next row group grows while the last
 * one's segments are still being written, and a pool as large as the whole row group
 * raised the peak RSS past the 1.5 x row group + 64 MiB bound (iot 2 GB, two threads, 128
 * MiB row groups: 264-265 MiB against 248 before the pool; 246 MiB now). */
void pqw_seg_row_group_done(floe_pq_writer *w) {
    pthread_mutex_lock(&w->seg_mu);
    w->seg_target = w->seg_pool_on ? w->seg_held - w->seg_held / 4 : 0;
    w->seg_held = 0;
    pthread_mutex_unlock(&w->seg_mu);
}

void pqw_seg_keep(floe_pq_writer *w, floe_buf *b) {
    if (w->seg_pool_on && seg_poolable(b))
        seg_pool_put(w, b);
    else
        floe_buf_free(b);
}

void pqw_seg_release(floe_pq_writer *w) {
    pthread_mutex_lock(&w->seg_mu);
    for (size_t i = 0; i < w->seg_npool; i++)
        floe_buf_free(&w->seg_pool[i]);
    w->seg_npool = 0;
    atomic_store(&w->seg_pool_bytes, 0);
    pthread_mutex_unlock(&w->seg_mu);
}

size_t pqw_seg_pool_bytes(const floe_pq_writer *w) { return atomic_load(&w->seg_pool_bytes); }

static void *wb_main(void *arg) {
    write_behind *wb = arg;
    pthread_mutex_lock(&wb->mu);
    for (;;) {
        if (wb->n == 0) {
            if (wb->stop)
                break;
            pthread_cond_wait(&wb->cv, &wb->mu);
            continue;
        }
        wb_item it = wb->q[wb->head];
        wb->head = (wb->head + 1) % wb->cap;
        wb->n--;
        wb->busy = true;
        int failed = wb->rc;
        pthread_mutex_unlock(&wb->mu);
        floe_error err;
        floe_error_clear(&err);
        int rc = failed ? 0 : floe_output_write(wb->out, it.data, it.len, &err);
        if (it.keep_cap) {
            floe_buf b;
            floe_buf_init(&b, 0);
            b.data = it.data;
            b.cap = it.keep_cap;
            seg_pool_put(wb->w, &b);
        } else {
            floe_free(it.data);
        }
        pthread_mutex_lock(&wb->mu);
        wb->bytes -= it.len;
        if (rc < 0 && wb->rc == 0) {
            wb->rc = rc;
            wb->err = err;
        }
        wb->busy = false;
        pthread_cond_broadcast(&wb->cv);
    }
    pthread_mutex_unlock(&wb->mu);
    return NULL;
}

/* Wait until everything handed over is written; the thread's error, if any. */
int pqw_wb_drain(floe_pq_writer *w, floe_error *err) {
    write_behind *wb = w->wb;
    if (!wb)
        return 0;
    pthread_mutex_lock(&wb->mu);
    while (wb->n > 0 || wb->busy)
        pthread_cond_wait(&wb->cv, &wb->mu);
    int rc = wb->rc;
    if (rc < 0 && err)
        *err = wb->err;
    pthread_mutex_unlock(&wb->mu);
    return rc;
}

/* Stop and join the thread; what is still queued is dropped (the output is being
 * discarded, or was drained). */
void pqw_wb_stop(floe_pq_writer *w) {
    write_behind *wb = w->wb;
    if (!wb)
        return;
    pthread_mutex_lock(&wb->mu);
    wb->stop = true;
    if (wb->rc == 0)
        wb->rc = FLOE_EINVALID; /* drop the rest unwritten */
    pthread_cond_broadcast(&wb->cv);
    pthread_mutex_unlock(&wb->mu);
    pthread_join(wb->tid, NULL);
    for (size_t k = 0; k < wb->n; k++)
        floe_free(wb->q[(wb->head + k) % wb->cap].data);
    pthread_mutex_destroy(&wb->mu);
    pthread_cond_destroy(&wb->cv);
    floe_free(wb->q);
    floe_free(wb);
    w->wb = NULL;
}

/* Under a real-time policy (SCHED_FIFO, SCHED_RR) the thread runs one priority above the
 * thread starting it: a thread of the same priority never preempts one that is running,
 * and the encoding threads (floe_convert's workers) run from one chunk to the next without
 * blocking, so the writes would wait for the end of the input (two threads, iot 200 MB,
 * chrt -f: 14 of 42 MB written when the last record was in). It writes a block and waits
 * for the device, so it takes little of the CPU it is given first; glibc's AIO threads
 * take the priority of the thread that queued the write. When raising it is not allowed,
 * the thread inherits the starting thread's. Other policies: nothing changes. */
static void wb_attr_priority(pthread_attr_t *attr) {
    int policy;
    struct sched_param sp;
    if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
        (policy != SCHED_FIFO && policy != SCHED_RR) ||
        sp.sched_priority >= sched_get_priority_max(policy))
        return;
    sp.sched_priority++;
    if (pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED) != 0 ||
        pthread_attr_setschedpolicy(attr, policy) != 0 ||
        pthread_attr_setschedparam(attr, &sp) != 0)
        (void)pthread_attr_setinheritsched(attr, PTHREAD_INHERIT_SCHED);
}

/* Start the thread. 1 when it cannot be started (write synchronously instead). */
static int wb_start(floe_pq_writer *w) {
    write_behind *wb = floe_calloc(1, sizeof *wb);
    if (!wb)
        return FLOE_ENOMEM;
    wb->out = w->out;
    wb->w = w;
    wb->cap = 16;
    wb->q = floe_malloc(wb->cap * sizeof *wb->q);
    if (!wb->q) {
        floe_free(wb);
        return FLOE_ENOMEM;
    }
    pthread_mutex_init(&wb->mu, NULL);
    pthread_cond_init(&wb->cv, NULL);
    pthread_attr_t attr;
    int started = -1;
    if (pthread_attr_init(&attr) == 0) {
        wb_attr_priority(&attr);
        started = pthread_create(&wb->tid, &attr, wb_main, wb);
        if (started == EPERM) /* not allowed a higher priority: inherit it */
            started = pthread_create(&wb->tid, NULL, wb_main, wb);
        pthread_attr_destroy(&attr);
    }
    if (started != 0) {
        pthread_mutex_destroy(&wb->mu);
        pthread_cond_destroy(&wb->cv);
        floe_free(wb->q);
        floe_free(wb);
        return 1;
    }
    w->wb = wb;
    return 0;
}


int pqw_write_out(floe_pq_writer *w, const void *p, size_t n, floe_error *err) {
    if (n == 0)
        return 0;
    int rc = pqw_wb_drain(w, err); /* what was handed over goes first */
    if (rc < 0)
        return rc;
    rc = floe_output_write(w->out, p, n, err);
    if (rc < 0)
        return rc;
    w->pos += (int64_t)n;
    return 0;
}

/* Write b's bytes. With write-behind its storage is handed to the writer thread and b is
 * left empty (no storage); otherwise it is written now and b keeps its storage. */
int pqw_write_out_buf(floe_pq_writer *w, floe_buf *b, floe_error *err) {
    if (b->len == 0)
        return 0;
    int rc;
    if (!w->opts.write_behind)
        return pqw_write_out(w, b->data, b->len, err);
    if (!w->wb && (rc = wb_start(w)) != 0) {
        if (rc < 0)
            return floe_error_set(err, rc, "out of memory");
        w->opts.write_behind = false; /* no thread: write synchronously from now on */
        return pqw_write_out(w, b->data, b->len, err);
    }
    write_behind *wb = w->wb;
    pthread_mutex_lock(&wb->mu);
    /* bounded: a slow device makes the writer wait rather than the queue grow */
    while (wb->rc == 0 && wb->bytes > 0 && wb->bytes + b->len > WB_MAX_BYTES)
        pthread_cond_wait(&wb->cv, &wb->mu);
    rc = wb->rc;
    if (rc < 0) {
        if (err)
            *err = wb->err;
    } else if (wb->n == wb->cap) {
        /* grow the ring, unrolled so that it starts at 0 */
        wb_item *q = floe_malloc(wb->cap * 2 * sizeof *q);
        if (!q) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        } else {
            for (size_t k = 0; k < wb->n; k++)
                q[k] = wb->q[(wb->head + k) % wb->cap];
            floe_free(wb->q);
            wb->q = q;
            wb->head = 0;
            wb->cap *= 2;
        }
    }
    if (rc == 0) {
        wb->q[(wb->head + wb->n) % wb->cap] =
            (wb_item){b->data, b->len, w->seg_pool_on && seg_poolable(b) ? b->cap : 0};
        wb->n++;
        wb->bytes += b->len;
        w->pos += (int64_t)b->len;
        size_t max = b->max;
        floe_buf_init(b, max); /* the storage is the thread's now */
        pthread_cond_broadcast(&wb->cv);
    }
    pthread_mutex_unlock(&wb->mu);
    return rc;
}
