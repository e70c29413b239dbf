/*
 * rewrite_exec.c - running a rewrite plan: file groups rewritten concurrently on worker
 * threads, outputs rolled at the split size, commits of finished groups (all at the end,
 * or in batches with partial progress), cleanup of what failed.
 *
 * Threads: `workers` threads take groups in plan order (the job order); each group runs a
 * reader thread (prefetch: the next row groups and files are decoded while the worker
 * encodes) when more than one thread is allowed. The thread calling floe_rewrite_execute
 * commits, reports progress and never touches group data while a worker owns it.
 *
 * Group state:
 *
 *   planned -> running -> written (outputs closed) -> committed
 *                    \          \-> failed validation (outputs deleted)
 *                     \-> failed (read/write error: outputs deleted)
 *   written -> unknown (its commit's outcome is unknown: outputs kept, nothing more done)
 *
 * Output files are rolled as Spark's bin-pack rewrite splits its input: a file is closed
 * once the input it holds reaches the group's split size (so a group yields its expected
 * output count), or when the file reaches writeMaxFileSize.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "floe/io.h"
#include "floe/manifest.h"
#include "common/errmsg.h"
#include "rewrite_internal.h"

#define ROUTE_MAX_OPEN 16           /* open writers of a pooled group */
#define CHUNK_ROWS 16384            /* rows per write when feeding a large batch */
#define CHUNK_BYTES (8u << 20)
#define SORT_BUFFER_DEFAULT ((int64_t)1 << 30) /* sort-buffer-bytes */
#define EQ_BUFFER_DEFAULT ((int64_t)256 << 20) /* equality-delete-buffer-bytes */
#define EQ_MAX_PASSES ((uint64_t)1 << 16)     /* hash parts of the keys, at most */
#define BATCH_BYTES ((size_t)2 << 20) /* decoded input rows gathered per writer batch */
#define FAST_COPY_MIN_RG ((int64_t)8 << 20) /* auto copy: stored bytes of a row group */

/* large input row groups: uncompressed bytes decoded at a time (rw_reader_set_slice) */
int64_t rw_slice_bytes = (int64_t)8 << 20;

/* glibc malloc thresholds of floe_rewrite_tune_malloc */
#define RW_MMAP_THRESHOLD (2 << 20)
#define RW_TRIM_THRESHOLD (32 << 20)

/* glibc raises its mmap threshold to the size of every mapped block freed (up to 32 MiB),
 * and its trim threshold to twice that. A rewrite frees such blocks early (a writer's
 * dictionary tables at fallback, a closed output's chunk buffers), so from then on its
 * buffers of 2-32 MiB live in the heap: each doubling of a chunk buffer leaves the old
 * block behind as a hole, and freed blocks stay resident. Re-encoding floe's own files
 * of 128 MiB row groups (bench/compact, 1 thread) peaked at 331 MiB that way, 276 MiB
 * with these fixed thresholds: blocks of 2 MiB and more are mapped, grow with mremap
 * (no copy, untouched capacity not resident) and go back to the kernel when freed. The
 * price is page faults on the blocks freed and allocated again (mostly the writer's
 * dictionary tables, regrown for every chunk): 10,000-16,000 more in that run and in
 * the small-file rewrite, about 0.3% of their CPU time; a 1 MiB threshold saved 7 MiB
 * more for twice the faults. The trim threshold keeps up to 32 MiB of free heap top for
 * the small blocks that come and go. */
void floe_rewrite_tune_malloc(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    (void)mallopt(M_MMAP_THRESHOLD, RW_MMAP_THRESHOLD);
    (void)mallopt(M_TRIM_THRESHOLD, RW_TRIM_THRESHOLD);
#endif
}

/* ---------------------------------------------------------------------------------------
 * the input side of a group: files in order, as batches
 * ------------------------------------------------------------------------------------- */
typedef struct group_src {
    floe_io *io;
    const floe_rewrite_plan *p;
    const floe_rewrite_group *g;
    rw_deletes *dels;
    rw_reader *cur;
    size_t next_file;
    rw_read_stats st;
    rw_copy_policy copy;
    size_t batch_bytes;          /* decoded bytes gathered per batch */
    floe_pq_raw_row_group *pending_raw; /* a copy that follows the rows handed over */
    int64_t pending_bytes;
    /* Sliced row groups (one writer, unsorted, where only the batch boundaries matter):
     * a batch that would hold a large row group and be written in CHUNK_ROWS pieces
     * (writer_put) is handed out as those pieces while the row group is decoded slice by
     * slice, so the file is the same and the decoded input held stays small. */
    bool slice;
    bool stage_on;               /* pieces of a large batch are being handed out */
    bool stage_more;             /* its row group has slices left to read */
    floe_batch stage;            /* rows not handed out yet: one slice */
    bool stage_init;
    floe_batch_cursor scur;
    bool scur_init;
    size_t stage_left;
    int64_t stage_in;            /* stored bytes of the whole batch (with its last piece) */
    /* equality deletes resolved in passes (eq_resolve_in_passes): per input, the file
     * positions of its rows they delete; NULL when the keys fit at once */
    int64_t **eq_pos;
    size_t *neq_pos;
    int64_t eq_passes;           /* 0: no equality delete, 1: in one go, else passes */
} group_src;

static void stage_reset(group_src *s) {
    if (s->scur_init)
        floe_batch_cursor_free(&s->scur);
    s->scur_init = false;
    s->stage_on = s->stage_more = false;
    s->stage_left = 0;
    s->stage_in = 0;
    if (s->stage_init)
        floe_batch_clear(&s->stage);
}

/* The next CHUNK_ROWS rows of the large batch into b (cleared), reading slices as needed.
 * A piece that spans two slices takes the rows left in the old one, then the first rows
 * of the next, read into the same stage: only one slice is held (and no rows are moved
 * twice). The next slice is read as soon as the stage is used up, so a piece with
 * *partial false (the last, with the batch's stored bytes) is known to be the last; it
 * has rows unless deletes emptied the slices after the one before it. */
static int stage_next(group_src *s, floe_batch *b, int64_t *in_bytes, bool *partial,
                      floe_error *err) {
    for (;;) {
        size_t want = CHUNK_ROWS - b->nrows;
        size_t n = s->stage_left < want ? s->stage_left : want;
        int rc = n ? floe_batch_take_rows(b, &s->stage, &s->scur, n) : 0;
        if (rc < 0)
            return floe_error_set(err, rc, "slicing a row group: %s", floe_strerror(rc));
        s->stage_left -= n;
        if (s->stage_left > 0 || !s->stage_more)
            break;
        floe_batch_clear(&s->stage);
        int64_t ib = 0;
        bool more = false;
        FLOE_FORWARD_IF_ERROR(rw_reader_next(s->cur, &s->stage, true, NULL, &ib, &more, err));
        s->stage_in += ib;
        s->stage_more = more;
        s->stage_left = s->stage.nrows;
        floe_batch_cursor_free(&s->scur);
        s->scur_init = false;
        FLOE_RETURN_ERROR_IF(floe_batch_cursor_init(&s->scur, &s->stage) < 0, err, FLOE_ENOMEM,
                             "out of memory");
        s->scur_init = true;
    }
    *partial = s->stage_left > 0;
    if (!*partial) {
        *in_bytes = s->stage_in;
        stage_reset(s);
    }
    return 1;
}

/* b holds a large row group's first slices (after the batch's earlier rows): hand it out
 * in pieces from here on. */
static int stage_start(group_src *s, floe_batch *b, int64_t in_bytes, floe_error *err) {
    if (!s->stage_init) {
        if (floe_batch_init(&s->stage, s->p->priv->schema) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        s->stage_init = true;
    }
    floe_batch t = s->stage;
    s->stage = *b;
    *b = t;
    floe_batch_clear(b);
    FLOE_RETURN_ERROR_IF(floe_batch_cursor_init(&s->scur, &s->stage) < 0, err, FLOE_ENOMEM,
                         "out of memory");
    s->scur_init = true;
    s->stage_on = s->stage_more = true;
    s->stage_left = s->stage.nrows;
    s->stage_in = in_bytes;
    return 0;
}

/* The next piece of the group's input: rows of one or more row groups appended into b
 * until it holds batch_bytes decoded (so the writer gets batches worth encoding on
 * several threads, and per-batch costs are paid less often), or one row group to copy in
 * *raw (b then holds no rows). *in_bytes: the stored bytes the piece came from. */
static int src_next(group_src *s, floe_batch *b, floe_pq_raw_row_group **raw,
                    int64_t *in_bytes, bool *partial, floe_error *err) {
    floe_batch_clear(b);
    *in_bytes = 0;
    *raw = NULL;
    *partial = false;
    if (s->stage_on)
        return stage_next(s, b, in_bytes, partial, err);
    if (s->pending_raw) {
        *raw = s->pending_raw;
        *in_bytes = s->pending_bytes;
        s->pending_raw = NULL;
        return 1;
    }
    bool any = false;
    for (;;) {
        if (!s->cur) {
            if (s->next_file >= s->g->ninputs)
                return any ? 1 : 0;
            size_t fi = s->next_file++;
            const floe_rewrite_input *in = &s->g->inputs[fi];
            FLOE_FORWARD_IF_ERROR(rw_reader_open(s->io, s->p->priv->schema, s->p->priv->name_mapping,
                                                 in, in->spec, s->dels, &s->copy, &s->cur,
                                                 err));
            if (s->eq_pos) {
                int arc = rw_reader_add_positions(s->cur, s->eq_pos[fi], s->neq_pos[fi], err);
                floe_free(s->eq_pos[fi]);
                s->eq_pos[fi] = NULL;
                if (arc < 0)
                    return arc;
            }
            if (s->slice)
                rw_reader_set_slice(s->cur, rw_slice_bytes);
        }
        floe_pq_raw_row_group *rg_raw = NULL;
        int64_t ib = 0;
        bool more = false;
        int rc = rw_reader_next(s->cur, b, true, s->copy.enabled ? &rg_raw : NULL, &ib, &more,
                                err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if (rg_raw) {
                if (any) { /* hand over the rows first, the copy next time */
                    s->pending_raw = rg_raw;
                    s->pending_bytes = ib;
                } else {
                    *raw = rg_raw;
                    *in_bytes = ib;
                }
                return 1;
            }
            any = true;
            *in_bytes += ib;
            if (more) {
                /* a sliced row group: once the batch is sure to be written in pieces
                 * (writer_put's test), hand the pieces out as they are decoded */
                if (floe_batch_bytes(b) > CHUNK_BYTES && b->nrows > CHUNK_ROWS) {
                    FLOE_FORWARD_IF_ERROR(stage_start(s, b, *in_bytes, err));
                    *in_bytes = 0;
                    return stage_next(s, b, in_bytes, partial, err);
                }
                continue;
            }
            if (floe_batch_bytes(b) >= s->batch_bytes || b->nrows >= CHUNK_ROWS)
                return 1;
            continue;
        }
        rw_read_stats st;
        rw_reader_stats(s->cur, &st);
        s->st.rows_read += st.rows_read;
        s->st.rows_pos_deleted += st.rows_pos_deleted;
        s->st.rows_eq_deleted += st.rows_eq_deleted;
        s->st.rows_eq_filtered += st.rows_eq_filtered;
        s->st.row_groups += st.row_groups;
        s->st.row_groups_copied += st.row_groups_copied;
        rw_reader_close(s->cur);
        s->cur = NULL;
    }
}

/* Prefetch: a reader thread fills batches ahead of the writer, up to PIPE_SLOTS of them
 * while they hold less than PIPE_BYTES together, and always two. More than two keeps the
 * reader busy while the writer flushes a row group (the second core idled otherwise);
 * the byte cap keeps large pieces (row groups to copy, slices) to two as before. */
#define PIPE_SLOTS 4
#define PIPE_BYTES ((size_t)8 << 20)
typedef struct pipe_slot {
    floe_batch b;
    floe_pq_raw_row_group *raw;  /* a row group to copy (then b holds no rows) */
    int64_t in_bytes;
    bool partial;
    size_t held;                 /* bytes the slot holds (decoded rows, or the copy's) */
} pipe_slot;

typedef struct group_pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pipe_slot slot[PIPE_SLOTS];
    size_t head, nready;
    size_t held;                 /* of the ready slots */
    bool done, cancel;
    int rc;
    floe_error err;
    group_src *src;
} group_pipe;

static void *pipe_main(void *arg) {
    group_pipe *pp = arg;
    size_t tail = 0;
    for (;;) {
        pthread_mutex_lock(&pp->mu);
        while ((pp->nready == PIPE_SLOTS || (pp->nready >= 2 && pp->held >= PIPE_BYTES)) &&
               !pp->cancel)
            pthread_cond_wait(&pp->cv, &pp->mu);
        bool cancel = pp->cancel;
        pthread_mutex_unlock(&pp->mu);
        if (cancel)
            break;
        pipe_slot *s = &pp->slot[tail];
        int rc = src_next(pp->src, &s->b, &s->raw, &s->in_bytes, &s->partial, &pp->err);
        s->held = s->raw ? (size_t)(s->in_bytes > 0 ? s->in_bytes : 0) : floe_batch_bytes(&s->b);
        pthread_mutex_lock(&pp->mu);
        if (rc <= 0) {
            pp->rc = rc;
            pp->done = true;
            pthread_cond_broadcast(&pp->cv);
            pthread_mutex_unlock(&pp->mu);
            break;
        }
        pp->nready++;
        pp->held += s->held;
        tail = (tail + 1) % PIPE_SLOTS;
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->mu);
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * the output side: writers per partition tuple
 * ------------------------------------------------------------------------------------- */
typedef struct out_writer {
    floe_pq_writer *w;
    char *phys, *rec;
    const floe_value *tuple;     /* lives in the group's arena */
    size_t ntuple;
    const char *dir;             /* partition path ("a=1/b=2" or "") */
    uint8_t *key;
    size_t keylen;
    int64_t in_consumed;         /* input bytes routed to the open file */
    int64_t last_used;
} out_writer;

typedef struct rw_exec rw_exec;

typedef struct group_run {
    rw_exec *x;
    const floe_rewrite_group *g;
    rw_group_out *out;
    const floe_partition_spec *ospec;
    bool route;                  /* rows need their output tuple computed */
    out_writer *ws;
    size_t nws, wcap;
    int64_t clock;
    int file_seq;
    floe_batch sortbuf, sorted, chunk, routed;
    int64_t sort_in;             /* input bytes of the rows in sortbuf */
    bool batches_init;
    size_t fcap;
    int64_t peak;
    floe_buf kb, pathb;
} group_run;

struct rw_exec {
    floe_table *t;
    floe_rewrite_plan *p;
    const floe_rewrite_options *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_group;
    rw_group_out *outs;
    bool *finished;              /* worker done with the group (ok or failed) */
    size_t nfinished;
    bool stop;
    /* Without partial progress, the first group that fails to execute (read, write,
     * memory) fails the whole rewrite, as in Iceberg: nothing is committed. */
    int exec_rc;
    char exec_msg[FLOE_ERROR_MSG_MAX];
    bool prefetch;
    char uuid[37];
    floe_pq_write_options wo;
    /* counters (under mu) */
    int64_t bytes_read, bytes_written, records_read, records_deleted, records_written;
    int64_t peak;
    int64_t eq_key_peak, eq_passes, eq_filtered;
    int64_t rg_copied, rg_reencoded;
    int64_t pages_carried;
    /* what the rewrite may delete of what it wrote (floe/table.h, "Confinement"): the
     * table's write paths chose where its outputs went; under conf_mu */
    floe_table_confinement *conf;
    pthread_mutex_t conf_mu;
};

/* Delete outputs the table will not reference, those inside its own folders. */
static void delete_written(rw_exec *x, char *const *phys, size_t n) {
    pthread_mutex_lock(&x->conf_mu);
    floe_table_confinement_delete(x->conf, floe_table_io(x->t), (const char *const *)phys, n,
                                  "rewrite");
    pthread_mutex_unlock(&x->conf_mu);
}

static int writer_open(group_run *gr, out_writer *ow, floe_error *err) {
    rw_exec *x = gr->x;
    int rc = 0;
    char name[128];
    snprintf(name, sizeof name, "%s-%d-%d.parquet", x->uuid, gr->g->global_index, ++gr->file_seq);
    floe_buf_reset(&gr->pathb);
    const char *rec_dir = x->p->priv->data_dir_rec, *phys_dir = x->p->priv->data_dir_phys;
    char *rel = ow->dir && *ow->dir ? floe_asprintf("%s/%s", ow->dir, name) : floe_strdup(name);
    if (!rel)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    ow->rec = floe_io_join(rec_dir, rel);
    ow->phys = floe_io_join(phys_dir, rel);
    floe_free(rel);
    if (!ow->rec || !ow->phys)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_pq_write_options wo = x->wo;
    wo.target_file_size = gr->g->max_output_file_size;
    /* a group routed to several partitions keeps up to ROUTE_MAX_OPEN files open: no
     * 2 MiB of direct blocks for each */
    if (gr->route)
        wo.output.direct = false;
    FLOE_CHECK(floe_pq_writer_open(floe_table_io(gr->x->t), ow->phys, x->p->priv->schema, &wo, &ow->w, err));
    ow->in_consumed = 0;
done:
    if (rc < 0) {
        floe_free(ow->rec);
        floe_free(ow->phys);
        ow->rec = ow->phys = NULL;
    }
    return rc;
}

static int writer_close(group_run *gr, out_writer *ow, floe_error *err) {
    if (!ow->w)
        return 0;
    rw_exec *x = gr->x;
    rw_group_out *out = gr->out;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    int64_t carried = floe_pq_writer_carried_pages(ow->w);
    int rc = floe_pq_writer_close(ow->w, &fi, err);
    ow->w = NULL;
    if (rc < 0)
        goto done;
    if (fi.record_count == 0) {
        /* every row of the file's input was deleted: nothing to add */
        delete_written(x, &ow->phys, 1);
        goto done;
    }
    if (out->nfiles == gr->fcap) {
        size_t nc = gr->fcap ? gr->fcap * 2 : 4;
        floe_data_file *nf = floe_realloc(out->files, nc * sizeof *nf);
        char **np = nf ? floe_realloc(out->phys, nc * sizeof *np) : NULL;
        if (nf)
            out->files = nf;
        if (!np)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        out->phys = np;
        gr->fcap = nc;
    }
    floe_data_file *df = &out->files[out->nfiles];
    memset(df, 0, sizeof *df);
    FLOE_CHECK(floe_data_file_from_parquet(&fi, x->p->priv->metrics, &out->arena, df, err));
    df->content = FLOE_CONTENT_DATA;
    df->file_path = floe_arena_strdup(&out->arena, ow->rec);
    df->partition = ow->tuple;
    df->npartition = ow->ntuple;
    if (x->o->strategy == FLOE_RW_SORT && x->p->priv->order &&
        x->p->priv->order == x->p->priv->sort) {
        df->has_sort_order_id = true;
        df->sort_order_id = x->p->priv->sort->order_id;
    }
    if (!df->file_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    out->phys[out->nfiles] = ow->phys;
    ow->phys = NULL;
    out->nfiles++;
    out->bytes += fi.file_size_in_bytes;
    out->records += fi.record_count;
    pthread_mutex_lock(&x->mu);
    x->bytes_written += fi.file_size_in_bytes;
    x->records_written += fi.record_count;
    x->pages_carried += carried;
    pthread_mutex_unlock(&x->mu);
done:
    floe_pq_file_info_free(&fi);
    floe_free(ow->rec);
    floe_free(ow->phys);
    ow->rec = ow->phys = NULL;
    return rc;
}

static void track_peak(group_run *gr, const floe_batch *in) {
    int64_t m = (int64_t)floe_batch_bytes(in) * (gr->x->prefetch ? 2 : 1);
    for (size_t i = 0; i < gr->nws; i++)
        if (gr->ws[i].w)
            m += (int64_t)floe_pq_writer_buffered_bytes(gr->ws[i].w);
    if (gr->batches_init)
        m += (int64_t)(floe_batch_bytes(&gr->sortbuf) + floe_batch_bytes(&gr->sorted));
    if (m > gr->peak)
        gr->peak = m;
}

/* Write b to ow, in chunks when it is large (the writer flushes row groups only between
 * batches). */
static int writer_put(group_run *gr, out_writer *ow, const floe_batch *b, floe_error *err) {
    if (!ow->w)
        FLOE_FORWARD_IF_ERROR(writer_open(gr, ow, err));
    ow->last_used = ++gr->clock;
    if (floe_batch_bytes(b) <= CHUNK_BYTES || b->nrows <= CHUNK_ROWS)
        return floe_pq_writer_write_batch(ow->w, b, err);
    floe_batch_cursor cur;
    FLOE_RETURN_ERROR_IF(floe_batch_cursor_init(&cur, b) < 0, err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t r = 0; r < b->nrows && rc >= 0; r += CHUNK_ROWS) {
        size_t n = b->nrows - r < CHUNK_ROWS ? b->nrows - r : CHUNK_ROWS;
        floe_batch_clear(&gr->chunk);
        rc = floe_batch_take_rows(&gr->chunk, b, &cur, n);
        if (rc < 0) {
            rc = floe_error_set(err, rc, "chunking a batch: %s", floe_strerror(rc));
            break;
        }
        rc = floe_pq_writer_write_batch(ow->w, &gr->chunk, err);
        track_peak(gr, b);
    }
    floe_batch_cursor_free(&cur);
    return rc;
}

/* The writer of a tuple (routing), opening a slot when new. */
static int writer_for(group_run *gr, const uint8_t *key, size_t keylen, const floe_value *tuple,
                      size_t ntuple, out_writer **out, floe_error *err) {
    for (size_t i = 0; i < gr->nws; i++)
        if (gr->ws[i].keylen == keylen && !memcmp(gr->ws[i].key, key, keylen)) {
            *out = &gr->ws[i];
            return 0;
        }
    /* too many open: finish the least recently used file */
    size_t open = 0, lru = SIZE_MAX;
    for (size_t i = 0; i < gr->nws; i++)
        if (gr->ws[i].w) {
            open++;
            if (lru == SIZE_MAX || gr->ws[i].last_used < gr->ws[lru].last_used)
                lru = i;
        }
    if (open >= ROUTE_MAX_OPEN && lru != SIZE_MAX)
        FLOE_FORWARD_IF_ERROR(writer_close(gr, &gr->ws[lru], err));
    if (gr->nws == gr->wcap) {
        size_t nc = gr->wcap ? gr->wcap * 2 : 4;
        out_writer *nw = floe_realloc(gr->ws, nc * sizeof *nw);
        FLOE_RETURN_ERROR_IF(!nw, err, FLOE_ENOMEM, "out of memory");
        gr->ws = nw;
        gr->wcap = nc;
    }
    out_writer *ow = &gr->ws[gr->nws];
    memset(ow, 0, sizeof *ow);
    floe_arena *a = &gr->out->arena;
    floe_value *tv = floe_arena_alloc(a, (ntuple + 1) * sizeof *tv);
    ow->key = floe_arena_memdup(a, key, keylen ? keylen : 1);
    FLOE_RETURN_ERROR_IF(!tv || !ow->key, err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < ntuple; i++) {
        tv[i] = tuple[i];
        if (!tv[i].is_null && (tv[i].type == FLOE_TYPE_STRING || tv[i].type == FLOE_TYPE_BINARY ||
                               tv[i].type == FLOE_TYPE_FIXED)) {
            /* n bytes and a terminator: the source's bytes end at n (an empty value's
             * pointer may be anything) */
            tv[i].v.bytes.p = (const uint8_t *)floe_arena_strndup(
                a, (const char *)tv[i].v.bytes.p, tv[i].v.bytes.n);
            FLOE_RETURN_ERROR_IF(!tv[i].v.bytes.p, err, FLOE_ENOMEM, "out of memory");
        }
    }
    ow->keylen = keylen;
    ow->tuple = tv;
    ow->ntuple = ntuple;
    floe_buf_reset(&gr->pathb);
    if (gr->ospec && gr->ospec->nfields)
        FLOE_FORWARD_IF_ERROR(floe_partition_spec_path(gr->ospec, tv, &gr->pathb, err));
    ow->dir = floe_arena_strndup(a, gr->pathb.len ? (const char *)gr->pathb.data : "",
                                 gr->pathb.len);
    FLOE_RETURN_ERROR_IF(!ow->dir, err, FLOE_ENOMEM, "out of memory");
    gr->nws++;
    *out = ow;
    return 0;
}

/* A row's source value of a partition field (top-level or struct-nested, not repeated);
 * vi holds each column's cursor into its non-null values, so one call a row per column. */
static floe_value row_source(const floe_batch *b, const floe_field *f, size_t row, size_t *vi) {
    const floe_colbuf *c = &b->cols[f->leaf];
    floe_value v;
    memset(&v, 0, sizeof v);
    v.type = f->type;
    if (c->max_def && c->def[row] < c->max_def) {
        v.is_null = true;
        return v;
    }
    size_t k = vi[f->leaf]++;
    const uint8_t *p = c->width ? c->values + k * (size_t)c->width : NULL;
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN: v.v.b = p[0]; break;
    case FLOE_TYPE_INT: case FLOE_TYPE_DATE: v.v.i32 = (int32_t)floe_load_le32(p); break;
    case FLOE_TYPE_FLOAT: memcpy(&v.v.f, p, 4); break;
    case FLOE_TYPE_DOUBLE: memcpy(&v.v.d, p, 8); break;
    case FLOE_TYPE_UUID: memcpy(v.v.uuid, p, 16); break;
    case FLOE_TYPE_STRING: case FLOE_TYPE_BINARY:
        v.v.bytes.p = c->values + c->offsets[k];
        v.v.bytes.n = c->offsets[k + 1] - c->offsets[k];
        break;
    case FLOE_TYPE_FIXED: v.v.bytes.p = p; v.v.bytes.n = (size_t)c->width; break;
    case FLOE_TYPE_DECIMAL: {
        floe_i128 x;
        if (c->phys == FLOE_PHYS_INT32) x = (int32_t)floe_load_le32(p);
        else if (c->phys == FLOE_PHYS_INT64) x = (int64_t)floe_load_le64(p);
        else {
            x = (p[0] & 0x80) ? -1 : 0;
            for (int32_t i = 0; i < c->width; i++)
                x = (floe_i128)(((unsigned __int128)x << 8) | p[i]);
        }
        v.v.dec.unscaled = x;
        v.v.dec.scale = f->scale;
        v.v.dec.precision = f->precision;
        break;
    }
    default: v.v.i64 = (int64_t)floe_load_le64(p); break;
    }
    return v;
}

typedef struct route_key {
    size_t row;
    uint32_t off, len;
} route_key;

static int cmp_route_r(const void *a, const void *b, void *ctx) {
    const route_key *x = a, *y = b;
    const uint8_t *k = ctx;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(k + x->off, k + y->off, n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Rows whose output tuple must be computed: order them by tuple, then write each run. */
static int put_routed(group_run *gr, const floe_batch *b, int64_t in_bytes, floe_error *err) {
    const floe_partition_spec *sp = gr->ospec;
    size_t n = b->nrows, nf = sp->nfields;
    int rc = 0;
    route_key *rk = floe_malloc((n + 1) * sizeof *rk);
    size_t *vi = floe_calloc(b->ncols + 1, sizeof *vi);
    size_t *perm = floe_malloc((n + 1) * sizeof *perm);
    floe_value *src = floe_malloc((nf + 1) * sizeof *src);
    floe_value *tup = floe_malloc((nf + 1) * sizeof *tup);
    floe_value *tuples = floe_malloc((n * nf + 1) * sizeof *tuples);
    if (!rk || !vi || !perm || !src || !tup || !tuples)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_buf_reset(&gr->kb);
    for (size_t row = 0; row < n; row++) {
        for (size_t k = 0; k < nf; k++) {
            const floe_field *f = sp->fields[k].source;
            if (!f || f->leaf < 0 || f->rep_level > 0)
                FLOE_FAIL(err, FLOE_EUNSUPPORTED, "partition field %s: source not writable",
                          sp->fields[k].name);
            size_t j = 0; /* fields of one source column share its value (and cursor) */
            while (j < k && sp->fields[j].source->leaf != f->leaf)
                j++;
            src[k] = j < k ? src[j] : row_source(b, f, row, vi);
        }
        FLOE_CHECK(floe_partition_spec_tuple(sp, src, tup, err));
        size_t at = gr->kb.len;
        for (size_t k = 0; k < nf; k++) {
            tuples[row * nf + k] = tup[k];
            if (floe_buf_append_byte(&gr->kb, tup[k].is_null ? 0 : 1) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            if (!tup[k].is_null) {
                size_t lat = gr->kb.len;
                uint32_t len = 0;
                if (floe_buf_append(&gr->kb, &len, 4) < 0)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                FLOE_CHECK(floe_value_to_binary(&tup[k], &gr->kb, err));
                len = (uint32_t)(gr->kb.len - lat - 4);
                memcpy(gr->kb.data + lat, &len, 4);
            }
        }
        rk[row] = (route_key){row, (uint32_t)at, (uint32_t)(gr->kb.len - at)};
    }
    qsort_r(rk, n, sizeof *rk, cmp_route_r, gr->kb.data);
    for (size_t i = 0; i < n; i++)
        perm[i] = rk[i].row;
    floe_batch_clear(&gr->routed);
    FLOE_CHECK(rw_batch_gather(b, perm, n, &gr->routed, err));
    floe_batch_cursor cur;
    if (floe_batch_cursor_init(&cur, &gr->routed) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc >= 0;) {
        size_t j = i;
        while (j < n && rk[j].len == rk[i].len &&
               !memcmp(gr->kb.data + rk[j].off, gr->kb.data + rk[i].off, rk[i].len))
            j++;
        out_writer *ow;
        rc = writer_for(gr, gr->kb.data + rk[i].off, rk[i].len, &tuples[rk[i].row * nf], nf, &ow,
                        err);
        if (rc >= 0) {
            floe_batch_clear(&gr->chunk);
            rc = floe_batch_take_rows(&gr->chunk, &gr->routed, &cur, j - i);
            if (rc < 0)
                rc = floe_error_set(err, rc, "routing rows: %s", floe_strerror(rc));
        }
        if (rc >= 0)
            rc = writer_put(gr, ow, &gr->chunk, err);
        if (rc >= 0) {
            ow->in_consumed += (int64_t)((double)in_bytes * (double)(j - i) / (double)n);
            if (floe_pq_writer_should_roll(ow->w))
                rc = writer_close(gr, ow, err);
        }
        i = j;
    }
    floe_batch_cursor_free(&cur);
done:
    floe_free(rk);
    floe_free(vi);
    floe_free(perm);
    floe_free(src);
    floe_free(tup);
    floe_free(tuples);
    return rc;
}

/* Sort the buffered rows and write them as output files of the group's split size (input
 * bytes shared evenly among the rows), the last one closed too: files of one buffer hold
 * consecutive ranges of the order and no file mixes two buffers. */
static int sort_flush(group_run *gr, floe_error *err) {
    const struct floe_rewrite_plan_priv *pv = gr->x->p->priv;
    out_writer *ow = &gr->ws[0];
    if (pv->zorder)
        FLOE_FORWARD_IF_ERROR(rw_zorder_batch(pv->zorder, &gr->sortbuf, &gr->sorted, err));
    else
        FLOE_FORWARD_IF_ERROR(rw_sort_batch(pv->order, &gr->sortbuf, &gr->sorted, err));
    track_peak(gr, &gr->sortbuf);
    double per_row = gr->sorted.nrows ? (double)gr->sort_in / (double)gr->sorted.nrows : 0;
    floe_batch_clear(&gr->sortbuf);
    gr->sort_in = 0;
    floe_batch_cursor cur;
    FLOE_RETURN_ERROR_IF(floe_batch_cursor_init(&cur, &gr->sorted) < 0, err, FLOE_ENOMEM,
                         "out of memory");
    int rc = 0;
    size_t r = 0, n = gr->sorted.nrows;
    while (r < n && rc >= 0) {
        /* rows up to the split size, at most CHUNK_ROWS at a time */
        double room = (double)(gr->g->split_size - (ow->w ? ow->in_consumed : 0));
        size_t k = per_row > 0 && room > 0 ? (size_t)(room / per_row) + 1 : 1;
        if (k > CHUNK_ROWS)
            k = CHUNK_ROWS;
        if (k > n - r)
            k = n - r;
        floe_batch_clear(&gr->chunk);
        rc = floe_batch_take_rows(&gr->chunk, &gr->sorted, &cur, k);
        if (rc < 0) {
            rc = floe_error_set(err, rc, "sorted rows: %s", floe_strerror(rc));
            break;
        }
        rc = writer_put(gr, ow, &gr->chunk, err);
        if (rc < 0)
            break;
        ow->in_consumed += (int64_t)(per_row * (double)k);
        r += k;
        if (ow->in_consumed >= gr->g->split_size || floe_pq_writer_should_roll(ow->w) || r == n)
            rc = writer_close(gr, ow, err);
    }
    floe_batch_cursor_free(&cur);
    floe_batch_clear(&gr->sorted);
    return rc;
}

/* One batch of input rows into the outputs. partial: a piece of a larger batch (see
 * group_src), not the last: no file is rolled after it. */
static int put_batch(group_run *gr, const floe_batch *b, int64_t in_bytes, bool partial,
                     floe_error *err) {
    track_peak(gr, b);
    if (b->nrows == 0) {
        if (gr->nws && gr->ws[0].w)
            gr->ws[0].in_consumed += in_bytes;
        return 0;
    }
    if (gr->route)
        return put_routed(gr, b, in_bytes, err);
    out_writer *ow = &gr->ws[0];
    if (gr->x->o->strategy == FLOE_RW_SORT) {
        floe_batch_cursor cur;
        FLOE_RETURN_ERROR_IF(floe_batch_cursor_init(&cur, b) < 0, err, FLOE_ENOMEM,
                             "out of memory");
        int rc = floe_batch_take_rows(&gr->sortbuf, b, &cur, b->nrows);
        floe_batch_cursor_free(&cur);
        if (rc < 0)
            return floe_error_set(err, rc, "sort buffer: %s", floe_strerror(rc));
        gr->sort_in += in_bytes;
        int64_t cap = gr->x->o->sort_buffer_bytes > 0 ? gr->x->o->sort_buffer_bytes
                                                      : SORT_BUFFER_DEFAULT;
        if ((int64_t)floe_batch_bytes(&gr->sortbuf) < cap)
            return 0;
        return sort_flush(gr, err);
    }
    FLOE_FORWARD_IF_ERROR(writer_put(gr, ow, b, err));
    ow->in_consumed += in_bytes;
    if (partial)
        return 0;
    if (ow->in_consumed >= gr->g->split_size || floe_pq_writer_should_roll(ow->w))
        return writer_close(gr, ow, err);
    return 0;
}

/* One input row group copied as stored bytes (binpack, one writer: see run_group). */
static int put_raw(group_run *gr, const floe_pq_raw_row_group *raw, int64_t in_bytes,
                   floe_error *err) {
    out_writer *ow = &gr->ws[0];
    if (!ow->w)
        FLOE_FORWARD_IF_ERROR(writer_open(gr, ow, err));
    ow->last_used = ++gr->clock;
    int64_t m = floe_pq_raw_row_group_bytes(raw) * (gr->x->prefetch ? 2 : 1) +
                (int64_t)floe_pq_writer_buffered_bytes(ow->w);
    if (m > gr->peak)
        gr->peak = m;
    FLOE_FORWARD_IF_ERROR(floe_pq_writer_copy_row_group(ow->w, raw, err));
    ow->in_consumed += in_bytes;
    if (ow->in_consumed >= gr->g->split_size || floe_pq_writer_should_roll(ow->w))
        return writer_close(gr, ow, err);
    return 0;
}

static int finish_outputs(group_run *gr, floe_error *err) {
    if (gr->x->o->strategy == FLOE_RW_SORT && !gr->route && gr->sortbuf.nrows)
        FLOE_FORWARD_IF_ERROR(sort_flush(gr, err));
    for (size_t i = 0; i < gr->nws; i++)
        FLOE_FORWARD_IF_ERROR(writer_close(gr, &gr->ws[i], err));
    return 0;
}

static void delete_outputs(rw_exec *x, rw_group_out *out) {
    delete_written(x, out->phys, out->nfiles);
}

/* The group's writers: its batches, and the one writer of an output that is not routed by
 * partition (the group's tuple; empty for an unpartitioned output spec). */
static int group_writers_setup(group_run *gr, floe_error *err) {
    const floe_schema *schema = gr->x->p->priv->schema;
    const floe_rewrite_group *g = gr->g;
    /* set first: run_group frees all four (a batch never initialised is zero, which
     * floe_batch_free takes) also when a later one fails here */
    gr->batches_init = true;
    if (floe_batch_init(&gr->sortbuf, schema) < 0 || floe_batch_init(&gr->sorted, schema) < 0 ||
        floe_batch_init(&gr->chunk, schema) < 0 || floe_batch_init(&gr->routed, schema) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (gr->route)
        return 0;
    static const uint8_t nokey = 0;
    const floe_value *tuple = g->spec_id >= 0 ? g->partition : NULL;
    size_t nt = g->spec_id >= 0 ? g->npartition : 0;
    out_writer *ow;
    return writer_for(gr, &nokey, 0, tuple, nt, &ow, err);
}

/* How the group's inputs are read: row groups copied whole only where rows go to one
 * writer unchanged and unsorted (with the columns whose metrics keep more of a string than
 * truncated statistics give in *needs_exact, which the caller frees), pages carried where
 * batches go to the writer as they are, and the deletes that apply. */
static int group_src_setup(rw_exec *x, const group_run *gr, group_src *src, bool **needs_exact,
                           floe_error *err) {
    const floe_schema *schema = x->p->priv->schema;
    /* a writer that shreds variants writes other columns than the inputs' row groups; on
     * a table without a variant column the property changes nothing */
    src->copy.enabled = x->o->fast_copy != 0 && x->o->strategy != FLOE_RW_SORT && !gr->route &&
                        !(x->wo.variant_shredding[0] && floe_schema_has_variant(schema));
    src->copy.codec = x->wo.codec;
    src->copy.min_rg_bytes = 0;
    src->copy.carry_min = x->o->page_carry && x->o->strategy != FLOE_RW_SORT && !gr->route
                              ? floe_pq_write_options_carry_min(&x->wo)
                              : 0;
    src->batch_bytes = BATCH_BYTES;
    src->slice = x->o->strategy != FLOE_RW_SORT && !gr->route;
    if (src->copy.enabled) {
        size_t nl = schema->nleaves;
        bool *ne = floe_calloc(nl ? nl : 1, sizeof *ne);
        if (!ne)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < nl; i++) {
            floe_metrics_mode mm = floe_metrics_config_mode(x->p->priv->metrics,
                                                            schema->leaves[i]->id);
            ne[i] = mm.kind == FLOE_METRICS_FULL ||
                    (mm.kind == FLOE_METRICS_TRUNCATE && mm.length > 16);
        }
        *needs_exact = ne;
        src->copy.needs_exact = ne;
    }
    if (x->o->fast_copy < 0) { /* auto: only row groups that are large already */
        int64_t rgs = (int64_t)x->wo.row_group_size;
        src->copy.min_rg_bytes = rgs > 0 && rgs < FAST_COPY_MIN_RG ? rgs : FAST_COPY_MIN_RG;
    }
    return rw_deletes_new(src->io, schema, x->p->priv->name_mapping, &src->dels, err);
}

/* in_bytes of the group's input were read (counted: the group's own tally). */
static void add_bytes_read(rw_exec *x, int64_t in_bytes, int64_t *counted) {
    *counted += in_bytes;
    pthread_mutex_lock(&x->mu);
    x->bytes_read += in_bytes;
    pthread_mutex_unlock(&x->mu);
}

/* Feed the group's input to its writers from a reader thread that reads up to PIPE_SLOTS
 * batches ahead, so that reading and writing overlap. */
static int feed_prefetched(rw_exec *x, group_run *gr, group_src *src, int64_t *counted,
                           floe_error *err) {
    group_pipe pp;
    memset(&pp, 0, sizeof pp);
    pthread_t th;
    int rc = 0;
    pthread_mutex_init(&pp.mu, NULL);
    pthread_cond_init(&pp.cv, NULL);
    pp.src = src;
    for (int k = 0; k < PIPE_SLOTS; k++)
        if (floe_batch_init(&pp.slot[k].b, x->p->priv->schema) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (pthread_create(&th, NULL, pipe_main, &pp) != 0)
        FLOE_FAIL(err, FLOE_EINTERNAL, "cannot start a reader thread");
    for (;;) {
        pthread_mutex_lock(&pp.mu);
        while (pp.nready == 0 && !pp.done)
            pthread_cond_wait(&pp.cv, &pp.mu);
        if (pp.nready == 0) {
            pthread_mutex_unlock(&pp.mu);
            break;
        }
        pipe_slot *s = &pp.slot[pp.head];
        pthread_mutex_unlock(&pp.mu);
        rc = s->raw ? put_raw(gr, s->raw, s->in_bytes, err)
                    : put_batch(gr, &s->b, s->in_bytes, s->partial, err);
        floe_pq_raw_row_group_free(s->raw);
        s->raw = NULL;
        add_bytes_read(x, s->in_bytes, counted);
        pthread_mutex_lock(&pp.mu);
        pp.nready--;
        pp.held -= s->held;
        pp.head = (pp.head + 1) % PIPE_SLOTS;
        if (rc < 0)
            pp.cancel = true;
        pthread_cond_broadcast(&pp.cv);
        pthread_mutex_unlock(&pp.mu);
        if (rc < 0)
            break;
    }
    pthread_join(th, NULL);
    if (rc >= 0 && pp.rc < 0) {
        rc = pp.rc;
        if (err)
            *err = pp.err;
    }
done:
    for (int k = 0; k < PIPE_SLOTS; k++) {
        floe_batch_free(&pp.slot[k].b);
        floe_pq_raw_row_group_free(pp.slot[k].raw);
    }
    pthread_mutex_destroy(&pp.mu);
    pthread_cond_destroy(&pp.cv);
    return rc;
}

/* Feed the group's input to its writers, reading and writing in turn. */
static int feed_direct(rw_exec *x, group_run *gr, group_src *src, int64_t *counted,
                       floe_error *err) {
    floe_batch b;
    if (floe_batch_init(&b, x->p->priv->schema) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int64_t in_bytes = 0;
    floe_pq_raw_row_group *raw = NULL;
    bool partial = false;
    int rc;
    while ((rc = src_next(src, &b, &raw, &in_bytes, &partial, err)) == 1) {
        rc = raw ? put_raw(gr, raw, in_bytes, err) : put_batch(gr, &b, in_bytes, partial, err);
        floe_pq_raw_row_group_free(raw);
        raw = NULL;
        add_bytes_read(x, in_bytes, counted);
        if (rc < 0)
            break;
    }
    floe_batch_free(&b);
    return rc;
}

/* Load the equality delete files of every input of the group (the current slice of their
 * keys). */
static int eq_load_all(group_src *src, floe_error *err) {
    for (size_t i = 0; i < src->g->ninputs; i++)
        FLOE_FORWARD_IF_ERROR(rw_deletes_load_eq(src->dels, &src->g->inputs[i], err));
    return 0;
}

/* One pass of eq_resolve_in_passes: every input with equality deletes read with the keys
 * loaded, the positions of the rows they delete added to src->eq_pos. */
static int eq_pass(const rw_exec *x, group_src *src, floe_batch *b, floe_error *err) {
    int rc = 0;
    rw_reader *r = NULL;
    for (size_t i = 0; i < src->g->ninputs && rc == 0; i++) {
        const floe_rewrite_input *in = &src->g->inputs[i];
        if (!rw_input_has_eq(in))
            continue;
        FLOE_CHECK(rw_reader_open(src->io, x->p->priv->schema, x->p->priv->name_mapping, in,
                                  in->spec, src->dels, NULL, &r, err));
        rw_reader_collect_eq(r);
        int64_t ib = 0;
        bool more = false;
        while ((rc = rw_reader_next(r, b, false, NULL, &ib, &more, err)) == 1)
            ;
        if (rc < 0)
            goto done;
        int64_t *pos = NULL;
        size_t n = 0;
        rw_reader_take_eq_positions(r, &pos, &n);
        rw_reader_close(r);
        r = NULL;
        if (n) {
            int64_t *np = floe_realloc(src->eq_pos[i], (src->neq_pos[i] + n) * sizeof *np);
            if (!np) {
                floe_free(pos);
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
            memcpy(np + src->neq_pos[i], pos, n * sizeof *pos);
            src->eq_pos[i] = np;
            src->neq_pos[i] += n;
        }
        floe_free(pos);
    }
done:
    rw_reader_close(r);
    return rc < 0 ? rc : 0;
}

static void eq_pos_free(group_src *src) {
    for (size_t i = 0; src->eq_pos && i < src->g->ninputs; i++)
        floe_free(src->eq_pos[i]);
    floe_free(src->eq_pos);
    floe_free(src->neq_pos);
    src->eq_pos = NULL;
    src->neq_pos = NULL;
}

/* The group's equality-delete keys within the budget (floe_rewrite_options.
 * eq_delete_buffer_bytes): loaded at once when they fit (the readers then find them in the
 * cache); otherwise hash-partitioned into P = 2, 4, 8, ... parts until each fits, one pass
 * over the data files with equality deletes per part, noting the positions of the rows
 * each part deletes; the readers then skip the equality delete files and delete those
 * positions instead. A part that does not fit (skewed keys) starts over with twice as
 * many. */
static int eq_resolve_in_passes(rw_exec *x, group_src *src, floe_error *err) {
    int64_t budget = x->o->eq_delete_buffer_bytes > 0 ? x->o->eq_delete_buffer_bytes
                                                      : EQ_BUFFER_DEFAULT;
    bool any = false;
    for (size_t i = 0; i < src->g->ninputs && !any; i++)
        any = rw_input_has_eq(&src->g->inputs[i]);
    if (!any)
        return 0;
    rw_deletes_set_budget(src->dels, budget);
    src->eq_passes = 1;
    int rc = eq_load_all(src, err);
    if (rc == 0)
        rc = rw_deletes_merge_eq(src->dels, err);
    if (rc == 0 || !rw_deletes_over_budget(src->dels))
        return rc;
    floe_batch b;
    if (floe_batch_init(&b, x->p->priv->schema) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rc = 0;
    for (uint64_t n = 2;; n *= 2) {
        rw_deletes_drop_eq(src->dels);
        eq_pos_free(src);
        if (n > EQ_MAX_PASSES)
            FLOE_FAIL(err, FLOE_ELIMIT, "equality delete keys do not fit in %s=%" PRId64
                      " bytes even in %" PRIu64 " passes", FLOE_RW_EQ_DELETE_BUFFER, budget,
                      EQ_MAX_PASSES);
        src->eq_pos = floe_calloc(src->g->ninputs ? src->g->ninputs : 1, sizeof *src->eq_pos);
        src->neq_pos = floe_calloc(src->g->ninputs ? src->g->ninputs : 1, sizeof *src->neq_pos);
        if (!src->eq_pos || !src->neq_pos)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        floe_log(FLOE_LOG_DEBUG, "rewrite: group %d: equality delete keys over %" PRId64
                 " bytes: %" PRIu64 " passes", src->g->global_index, budget, n);
        bool fits = true;
        for (uint64_t k = 0; k < n && fits; k++) {
            rw_deletes_set_slice(src->dels, n, k);
            rc = eq_load_all(src, err);
            if (rc == 0)
                rc = rw_deletes_merge_eq(src->dels, err);
            if (rc < 0 && rw_deletes_over_budget(src->dels)) {
                fits = false;
                rc = 0;
                break;
            }
            FLOE_CHECK(rc);
            FLOE_CHECK(eq_pass(x, src, &b, err));
            rw_deletes_drop_eq(src->dels);
        }
        if (fits) {
            src->eq_passes = (int64_t)n;
            break;
        }
    }
    rw_deletes_set_slice(src->dels, 1, 0);
    rw_deletes_set_eq_resolved(src->dels, true);
done:
    floe_batch_free(&b);
    return rc;
}

/* Rewrite group gi into x->outs[gi]: set up its writers and its reading, feed every input
 * row through, finish the outputs; then add the group's figures to x's. On failure the
 * group's outputs are deleted. */
static int run_group(rw_exec *x, size_t gi, floe_error *err) {
    const floe_rewrite_group *g = &x->p->groups[gi];
    rw_group_out *out = &x->outs[gi];
    group_run gr;
    memset(&gr, 0, sizeof gr);
    gr.x = x;
    gr.g = g;
    gr.out = out;
    floe_buf_init(&gr.kb, 0);
    floe_buf_init(&gr.pathb, 0);
    group_src src = {.io = floe_table_io(x->t), .p = x->p, .g = g};
    bool *needs_exact = NULL;
    int rc = 0;
    int64_t counted = 0;
    gr.ospec = rw_plan_spec(x->p, x->p->output_spec_id);
    gr.route = g->spec_id < 0 && gr.ospec && gr.ospec->nfields > 0;
    FLOE_CHECK(group_writers_setup(&gr, err));
    FLOE_CHECK(group_src_setup(x, &gr, &src, &needs_exact, err));
    FLOE_CHECK(eq_resolve_in_passes(x, &src, err));
    FLOE_CHECK(x->prefetch ? feed_prefetched(x, &gr, &src, &counted, err)
                           : feed_direct(x, &gr, &src, &counted, err));
    FLOE_CHECK(finish_outputs(&gr, err));
done:
    rw_reader_close(src.cur);
    floe_pq_raw_row_group_free(src.pending_raw);
    stage_reset(&src);
    if (src.stage_init)
        floe_batch_free(&src.stage);
    pthread_mutex_lock(&x->mu);
    if (src.dels && rw_deletes_key_bytes_peak(src.dels) > x->eq_key_peak)
        x->eq_key_peak = rw_deletes_key_bytes_peak(src.dels);
    if (src.eq_passes > x->eq_passes)
        x->eq_passes = src.eq_passes;
    pthread_mutex_unlock(&x->mu);
    eq_pos_free(&src);
    rw_deletes_free(src.dels);
    floe_free(needs_exact);
    for (size_t i = 0; i < gr.nws; i++) {
        floe_pq_writer_abort(gr.ws[i].w);
        floe_free(gr.ws[i].rec);
        floe_free(gr.ws[i].phys);
    }
    floe_free(gr.ws);
    if (gr.batches_init) {
        floe_batch_free(&gr.sortbuf);
        floe_batch_free(&gr.sorted);
        floe_batch_free(&gr.chunk);
        floe_batch_free(&gr.routed);
    }
    floe_buf_free(&gr.kb);
    floe_buf_free(&gr.pathb);
    pthread_mutex_lock(&x->mu);
    if (rc >= 0 && g->input_bytes > counted)
        x->bytes_read += g->input_bytes - counted; /* footers and headers */
    x->records_read += src.st.rows_read;
    x->rg_copied += src.st.row_groups_copied;
    x->rg_reencoded += src.st.row_groups - src.st.row_groups_copied;
    x->records_deleted += src.st.rows_pos_deleted + src.st.rows_eq_deleted;
    x->eq_filtered += src.st.rows_eq_filtered;
    if (gr.peak > x->peak)
        x->peak = gr.peak;
    pthread_mutex_unlock(&x->mu);
    if (rc < 0) {
        delete_outputs(x, out);
        for (size_t i = 0; i < out->nfiles; i++)
            floe_free(out->phys[i]);
        out->nfiles = 0;
    }
    return rc;
}

static void *worker_main(void *arg) {
    rw_exec *x = arg;
    for (;;) {
        pthread_mutex_lock(&x->mu);
        if (x->stop || x->next_group >= x->p->ngroups) {
            pthread_mutex_unlock(&x->mu);
            break;
        }
        size_t gi = x->next_group++;
        pthread_mutex_unlock(&x->mu);
        floe_error e;
        floe_error_clear(&e);
        int rc = run_group(x, gi, &e);
        pthread_mutex_lock(&x->mu);
        if (rc < 0) {
            x->outs[gi].failed = true;
            x->outs[gi].input_gone = rc == FLOE_ENOTFOUND;
            rw_group_why(&x->outs[gi], "", e.msg[0] ? e.msg : floe_strerror(rc));
            floe_log(FLOE_LOG_WARN, "rewrite: group %d failed: %s",
                     x->p->groups[gi].global_index, rw_group_why_text(&x->outs[gi]));
            if (!x->o->partial_progress && !x->exec_rc) {
                x->exec_rc = rc;
                char pre[48];
                snprintf(pre, sizeof pre, "rewrite: group %d: ", x->p->groups[gi].global_index);
                floe_msg_fit2(x->exec_msg, sizeof x->exec_msg, pre,
                              rw_group_why_text(&x->outs[gi]));
                x->stop = true;
            }
        }
        x->finished[gi] = true;
        x->nfinished++;
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * driving: workers, commits, progress
 * ------------------------------------------------------------------------------------- */

static int online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 1024 ? (int)n : 1;
}

static void report(rw_exec *x, const floe_rewrite_options *o, int64_t t0, int64_t commits,
                   int64_t failed) {
    if (!o->progress)
        return;
    floe_rewrite_progress pr = {0};
    pthread_mutex_lock(&x->mu);
    pr.groups_total = (int64_t)x->p->ngroups;
    pr.groups_done = (int64_t)x->nfinished;
    pr.bytes_read = x->bytes_read;
    pr.bytes_written = x->bytes_written;
    pthread_mutex_unlock(&x->mu);
    for (size_t i = 0; i < x->p->ngroups; i++)
        pr.bytes_total += x->p->groups[i].input_bytes;
    pr.groups_failed = failed;
    pr.commits = commits;
    pr.elapsed_s = (double)(floe_now_ns() - t0) / 1e9;
    o->progress(o->progress_ctx, &pr);
}

/* What every run of groups starts from (the caller destroys mu and cv). */
static void exec_init(rw_exec *x, floe_table *t, floe_rewrite_plan *p,
                      const floe_rewrite_options *o) {
    x->t = t;
    x->p = p;
    x->o = o;
    pthread_mutex_init(&x->mu, NULL);
    pthread_mutex_init(&x->conf_mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    floe_uuid4(x->uuid);
    x->wo = p->priv->write;
    x->wo.output.fsync = o->fsync;
}

/* After a run: what the deletes kept (outputs the table's write paths placed outside its
 * own folders), and the confinement freed. */
static void exec_fini(rw_exec *x) {
    const char *report = floe_table_confinement_report(x->conf);
    if (report)
        floe_log(FLOE_LOG_WARN, "rewrite: %s", report);
    floe_table_confinement_free(x->conf);
    x->conf = NULL;
    pthread_mutex_destroy(&x->conf_mu);
}

/* Start the workers: as many groups at once as the options and the threads allow, each
 * group's writer encoding on the threads left to it. *nth receives the threads started. */
static int start_workers(rw_exec *x, pthread_t **th, size_t *nth, floe_error *err) {
    const floe_rewrite_options *o = x->o;
    int threads = o->threads > 0 ? o->threads : online_cpus();
    int64_t conc = o->max_concurrent_groups > 0 ? o->max_concurrent_groups : 1;
    /* each group can use two threads (reader + writer); keep groups to what the
     * threads allow, but always at least one */
    int64_t by_threads = threads >= 2 ? threads / 2 : 1;
    if (conc > by_threads)
        conc = by_threads;
    if (conc > (int64_t)x->p->ngroups)
        conc = (int64_t)x->p->ngroups;
    x->prefetch = threads >= 2;
    /* No write-behind: it would spare the worker its waits in write(2), but its fresh
     * chunk buffers per row group raise peak memory past the bound of one group's
     * (bench/RESULTS.md, "Choices") */
    /* a group's writer encodes columns on the threads the group has, beside its reader
     * thread (the file is the same whatever the number) */
    int64_t per_group = threads / conc;
    x->wo.threads = per_group > 1 ? (int)(per_group > 8 ? 8 : per_group) : 1;
    *th = floe_calloc((size_t)conc, sizeof **th);
    if (!*th)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (int64_t i = 0; i < conc; i++) {
        if (pthread_create(&(*th)[*nth], NULL, worker_main, x) != 0)
            break;
        (*nth)++;
    }
    if (*nth == 0)
        return floe_error_set(err, FLOE_EINTERNAL, "cannot start worker threads");
    return 0;
}

/* The commit loop's state: finished groups are committed in batches of per_commit. */
typedef struct commit_loop {
    rw_exec *x;
    floe_rewrite_result *r;
    rw_group_out **batch;
    bool *committed_or_dropped;  /* per group: handled */
    size_t handled;
    int64_t per_commit;
    int64_t max_failed;          /* failed commits tolerated with partial progress */
    int64_t t0, last_report;
    double commit_ns;
    bool fatal;                  /* stop committing */
    int rc;
} commit_loop;

/* Groups never started count as handled (after a fatal stop). Called with x->mu held. */
static void drop_unstarted(commit_loop *l) {
    for (size_t i = l->x->next_group; i < l->x->p->ngroups; i++)
        if (!l->committed_or_dropped[i]) {
            l->committed_or_dropped[i] = true;
            l->handled++;
        }
}

/* Wait for per_commit finished groups (or the last ones), reporting progress meanwhile,
 * and take the successful ones into l->batch. Returns how many were taken. */
static size_t next_batch(commit_loop *l, floe_error *err) {
    rw_exec *x = l->x;
    const floe_rewrite_plan *p = x->p;
    size_t nb = 0;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        size_t ready = 0;
        for (size_t i = 0; i < p->ngroups; i++)
            ready += x->finished[i] && !l->committed_or_dropped[i];
        /* (after a stop, groups never started will not finish) */
        if ((int64_t)ready >= l->per_commit || x->nfinished == p->ngroups ||
            (x->stop && x->nfinished == x->next_group))
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&x->cv, &x->mu, &ts);
        pthread_mutex_unlock(&x->mu);
        if (floe_now_ns() - l->last_report > 250 * 1000 * 1000LL) {
            report(x, x->o, l->t0, l->r->commits, l->r->groups_failed);
            l->last_report = floe_now_ns();
        }
        pthread_mutex_lock(&x->mu);
    }
    for (size_t i = 0; i < p->ngroups && (int64_t)nb < l->per_commit; i++) {
        if (!x->finished[i] || l->committed_or_dropped[i])
            continue;
        l->committed_or_dropped[i] = true;
        l->handled++;
        if (x->outs[i].failed)
            continue;
        l->batch[nb++] = &x->outs[i];
    }
    if (x->exec_rc && !l->fatal) {
        l->fatal = true;
        l->rc = floe_error_set(err, x->exec_rc, "%s", x->exec_msg);
    }
    if (l->fatal)
        drop_unstarted(l);
    pthread_mutex_unlock(&x->mu);
    return nb;
}

/* Stop the workers after a fatal commit outcome (its error in ce). */
static void commit_fatal(commit_loop *l, int crc, const floe_error *ce, floe_error *err) {
    l->rc = crc;
    if (err)
        *err = *ce;
    l->fatal = true;
    pthread_mutex_lock(&l->x->mu);
    l->x->stop = true;
    pthread_mutex_unlock(&l->x->mu);
}

/* Commit the nb groups of l->batch and account for the outcome: committed, failed (the
 * outputs deleted; fatal past max_failed), or unknown (the outputs kept; fatal). */
static void commit_batch(commit_loop *l, size_t nb, floe_error *err) {
    rw_exec *x = l->x;
    floe_rewrite_result *r = l->r;
    rw_group_out **batch = l->batch;
    floe_table *t = x->t;
    int64_t c0 = floe_now_ns();
    rw_commit_stats cs = {0};
    floe_error ce;
    floe_error_clear(&ce);
    int crc = rw_commit_groups(t, x->p, x->o, batch, nb, &cs, &ce);
    l->commit_ns += (double)(floe_now_ns() - c0);
    r->attempts += cs.attempts;
    /* every attempt but the last lost to another commit; the last too when the
     * retries ran out */
    if (cs.attempts > 0)
        r->conflicts += cs.attempts - (crc == FLOE_ECONFLICT ? 0 : 1);
    if (crc == 0) {
        bool any = false;
        for (size_t k = 0; k < nb; k++) {
            if (batch[k]->failed) {
                delete_outputs(x, batch[k]);
                continue;
            }
            batch[k]->committed = true;
            any = true;
        }
        if (any) {
            r->commits++;
            r->snapshot_id = cs.snapshot_id;
            r->removed_delete_files_count += cs.removed_delete_files;
            r->format_version = cs.format_version;
            r->format_upgraded |= cs.format_upgraded;
        }
    } else if (crc == FLOE_EUNKNOWN_STATE) {
        /* the outputs may be referenced: keep them, commit nothing more */
        r->unknown_state = true;
        commit_fatal(l, crc, &ce, err);
    } else {
        r->failed_commits++;
        for (size_t k = 0; k < nb; k++) {
            batch[k]->failed = true;
            rw_group_why(batch[k], "commit failed: ", ce.msg[0] ? ce.msg : floe_strerror(crc));
            delete_outputs(x, batch[k]);
        }
        floe_log(FLOE_LOG_WARN, "rewrite: commit of %zu group(s) failed: %s", nb, ce.msg);
        bool too_many = x->o->partial_progress ? r->failed_commits > l->max_failed : true;
        if (too_many)
            commit_fatal(l, crc, &ce, err);
    }
    if (l->fatal) {
        pthread_mutex_lock(&x->mu);
        drop_unstarted(l);
        pthread_mutex_unlock(&x->mu);
    }
}

/* The first file group g was planned with (a data file or one of its delete files) that
 * is not where the plan found it, or NULL. */
static const char *gone_file(rw_exec *x, const floe_rewrite_group *g) {
    for (size_t i = 0; i < g->ninputs; i++) {
        const floe_rewrite_input *in = &g->inputs[i];
        for (size_t d = 0; d <= in->ndeletes; d++) {
            const char *uri = d == 0 ? in->uri : in->delete_uris[d - 1];
            bool exists = true;
            floe_error e;
            floe_error_clear(&e);
            if (floe_io_exists(floe_table_io(x->t), uri, &exists, &e) == 0 && !exists)
                return d == 0 ? in->file->file_path : in->deletes[d - 1]->file_path;
        }
    }
    return NULL;
}

/* Groups that failed on a file not found, once the workers have stopped: when the table
 * has moved on since the plan, a concurrent commit replaced that file and an expiry deleted
 * it. Their reason says so; with partial progress they are left out (replaced), not failed.
 * The table is asked once. Returns whether it moved (false when no group is such). */
static bool mark_replaced(rw_exec *x, const floe_rewrite_options *o) {
    const floe_rewrite_plan *p = x->p;
    int moved = -1;
    for (size_t i = 0; i < p->ngroups; i++) {
        rw_group_out *g = &x->outs[i];
        if (!g->input_gone || g->committed)
            continue;
        if (moved < 0)
            moved = floe_table_base_gone(x->t, FLOE_ENOTFOUND);
        if (!moved)
            return false;
        const char *f = gone_file(x, g->group);
        char head[FLOE_ERROR_MSG_MAX];
        snprintf(head, sizeof head, "%s %s, planned from snapshot %" PRId64 ", is no longer "
                 "there: the table has moved on since (a concurrent commit replaced it and an "
                 "expiry deleted it); nothing committed for this group, %s: ",
                 f ? "file" : "a file", f ? f : "of the group", p->snapshot_id,
                 o->partial_progress ? "left out (run floe rewrite again for what replaced "
                                       "it)"
                                     : "re-run");
        char *was = g->why ? floe_strdup(g->why) : NULL;
        rw_group_why(g, head, was ? was : "not found");
        floe_free(was);
        if (o->partial_progress) {
            g->replaced = true;
            floe_log(FLOE_LOG_WARN, "rewrite: group %d: %s", g->group->global_index,
                     rw_group_why_text(g));
        }
    }
    return moved > 0;
}

/* The result's counts, once every worker has stopped. */
static void tally(const rw_exec *x, floe_rewrite_result *r) {
    const floe_rewrite_plan *p = x->p;
    for (size_t i = 0; i < p->ngroups; i++) {
        const rw_group_out *g = &x->outs[i];
        if (g->committed) {
            r->groups_committed++;
            r->rewritten_data_files_count += (int64_t)g->group->ninputs;
            r->rewritten_bytes_count += g->group->input_bytes;
            r->added_data_files_count += (int64_t)g->nfiles;
        } else if (g->replaced) {
            r->groups_replaced++;
        } else {
            r->groups_failed += g->failed || x->finished[i];
            r->failed_data_files_count += (int64_t)g->group->ninputs;
            if (g->failed && !r->first_failure[0]) {
                char pre[32];
                snprintf(pre, sizeof pre, "group %d: ", g->group->global_index);
                floe_msg_fit2(r->first_failure, sizeof r->first_failure, pre,
                              rw_group_why_text(g));
            }
        }
    }
    r->bytes_written = x->bytes_written;
    r->bytes_read = x->bytes_read;
    r->records_read = x->records_read;
    r->records_deleted = x->records_deleted;
    r->records_written = x->records_written;
    r->fast_copied_row_groups = x->rg_copied;
    r->reencoded_row_groups = x->rg_reencoded;
    r->carried_pages = x->pages_carried;
    r->peak_group_buffer_bytes = x->peak;
    r->eq_delete_passes = x->eq_passes;
    r->eq_delete_key_bytes_peak = x->eq_key_peak;
    r->eq_delete_rows_filtered = x->eq_filtered;
}

int floe_rewrite_execute(floe_table *t, floe_rewrite_plan *p, const floe_rewrite_options *o,
                         floe_rewrite_result *res, floe_error *err) {
    int64_t t0 = floe_now_ns();
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    r.plan_ms = p->plan_ms;
    r.groups_planned = (int64_t)p->ngroups;
    int rc = 0;
    rw_exec x;
    memset(&x, 0, sizeof x);
    pthread_t *th = NULL;
    size_t nth = 0;
    commit_loop l;
    memset(&l, 0, sizeof l);
    if (p->ngroups == 0)
        goto finish;
    FLOE_RETURN_ERROR_IF(!floe_table_metadata_get(t), err, FLOE_EINVALID, "no table metadata");
    /* a schema no output can have fails here, not once per group after reading it */
    FLOE_FORWARD_IF_ERROR(floe_pq_schema_writable(p->priv->schema, err));
    if (floe_table_migration_due(t)) {
        /* the plan names input files by the paths the table records now; its paths are
         * migrated first and the same plan made again on them */
        FLOE_FORWARD_IF_ERROR(floe_table_migrate(t, err));
        floe_rewrite_plan *fresh = NULL;
        FLOE_FORWARD_IF_ERROR(floe_rewrite_plan_new(t, o, &fresh, err));
        rc = floe_rewrite_execute(t, fresh, o, res, err);
        floe_rewrite_plan_free(fresh);
        return rc;
    }
    FLOE_FORWARD_IF_ERROR(floe_table_confinement_open(t, &x.conf, err));
    exec_init(&x, t, p, o);
    /* outputs are large and synced at close anyway: write them past the page cache, whose
     * copy costs more than the direct writes (bench/RESULTS.md, "Choices") */
    x.wo.output.direct = o->fsync;
    x.outs = floe_calloc(p->ngroups, sizeof *x.outs);
    x.finished = floe_calloc(p->ngroups, sizeof *x.finished);
    l.batch = floe_calloc(p->ngroups, sizeof *l.batch);
    l.committed_or_dropped = floe_calloc(p->ngroups, sizeof *l.committed_or_dropped);
    if (!x.outs || !x.finished || !l.batch || !l.committed_or_dropped)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->ngroups; i++) {
        x.outs[i].group = &p->groups[i];
        floe_arena_init(&x.outs[i].arena, 16 * 1024);
    }
    FLOE_CHECK(start_workers(&x, &th, &nth, err));

    /* commit loop */
    l.x = &x;
    l.r = &r;
    l.t0 = t0;
    l.per_commit = (int64_t)p->ngroups;
    if (o->partial_progress) {
        int64_t mc = o->partial_max_commits > 0 ? o->partial_max_commits : 10;
        l.per_commit = ((int64_t)p->ngroups + mc - 1) / mc;
        if (l.per_commit < 1)
            l.per_commit = 1;
    }
    l.max_failed = o->partial_max_failed_commits >= 0 ? o->partial_max_failed_commits
                   : (o->partial_max_commits > 0 ? o->partial_max_commits : 10);
    int64_t rw_start = floe_now_ns();
    while (l.handled < p->ngroups) {
        size_t nb = next_batch(&l, err);
        if (nb == 0 || l.fatal)
            continue;
        commit_batch(&l, nb, err);
    }
    rc = l.rc;
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    nth = 0;
    /* groups finished after a fatal stop: their outputs are not in the table */
    for (size_t i = 0; i < p->ngroups; i++) {
        rw_group_out *g = &x.outs[i];
        if (!g->committed && !r.unknown_state && !g->failed && g->nfiles) {
            delete_outputs(&x, g);
        }
    }
    r.rewrite_ms = (double)(floe_now_ns() - rw_start - (int64_t)l.commit_ns) / 1e6;
    r.commit_ms = l.commit_ns / 1e6;
    if (mark_replaced(&x, o) && rc == FLOE_ENOTFOUND) {
        /* the group that stopped the rewrite: its reason, now saying why */
        for (size_t i = 0; i < p->ngroups; i++)
            if (x.outs[i].input_gone) {
                floe_error_set(err, rc, "rewrite: group %d: %s", p->groups[i].global_index,
                               rw_group_why_text(&x.outs[i]));
                break;
            }
    }
    tally(&x, &r);
    report(&x, o, t0, r.commits, r.groups_failed);
done:
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    floe_free(th);
    if (x.outs) {
        for (size_t i = 0; i < p->ngroups; i++)
            rw_group_out_free(&x.outs[i]);
        floe_free(x.outs);
        pthread_mutex_destroy(&x.mu);
        pthread_cond_destroy(&x.cv);
    }
    exec_fini(&x);
    floe_free(x.finished);
    floe_free(l.batch);
    floe_free(l.committed_or_dropped);
finish:
    r.total_ms = (double)(floe_now_ns() - t0) / 1e6 + p->plan_ms;
    if (res)
        *res = r;
    return rc;
}

void rw_group_out_free(rw_group_out *g) {
    for (size_t k = 0; g->phys && k < g->nfiles; k++)
        floe_free(g->phys[k]);
    floe_free(g->phys);
    floe_free(g->files);
    floe_free(g->why);
    floe_arena_reset(&g->arena);
    g->phys = NULL;
    g->files = NULL;
    g->why = NULL;
    g->nfiles = 0;
}

void rw_group_why(rw_group_out *g, const char *prefix, const char *msg) {
    if (!g->why)
        g->why = floe_malloc(FLOE_ERROR_MSG_MAX);
    if (g->why)
        floe_msg_fit2(g->why, FLOE_ERROR_MSG_MAX, prefix, msg);
}

const char *rw_group_why_text(const rw_group_out *g) {
    return g->why ? g->why : g->failed ? "(its reason could not be kept: out of memory)" : "";
}

int rw_execute_groups(floe_table *t, floe_rewrite_plan *p, const floe_rewrite_options *o,
                      rw_group_out *outs, floe_error *err) {
    rw_exec x;
    memset(&x, 0, sizeof x);
    int rc = 0;
    FLOE_RETURN_ERROR_IF(!floe_table_metadata_get(t), err, FLOE_EINVALID, "no table metadata");
    FLOE_FORWARD_IF_ERROR(floe_table_confinement_open(t, &x.conf, err));
    exec_init(&x, t, p, o);
    x.outs = outs;
    for (size_t i = 0; i < p->ngroups; i++) {
        outs[i].group = &p->groups[i];
        floe_arena_init(&outs[i].arena, 16 * 1024);
    }
    for (size_t i = 0; i < p->ngroups && rc == 0; i++)
        rc = run_group(&x, i, err); /* deletes its own outputs when it fails */
    if (rc < 0)
        for (size_t i = 0; i < p->ngroups; i++)
            delete_outputs(&x, &outs[i]);
    exec_fini(&x);
    pthread_mutex_destroy(&x.mu);
    pthread_cond_destroy(&x.cv);
    return rc;
}

bool floe_rewrite_again(floe_table *t, int rc, int round, floe_error *err) {
    floe_commit_retry retry;
    floe_commit_retry_from(floe_table_metadata_get(t), &retry);
    if (round > retry.num_retries || !floe_table_base_gone(t, rc))
        return false;
    floe_log(FLOE_LOG_INFO, "rewrite: %s: the table moved on and a file of the snapshot "
             "planned on is gone (%s); planning again", floe_table_name(t),
             err ? err->msg : "");
    floe_error_clear(err);
    return floe_table_refresh(t, err) == 0;
}

int floe_rewrite(floe_table *t, const floe_rewrite_options *o, floe_rewrite_result *res,
                 floe_error *err) {
    for (int round = 1;; round++) {
        floe_rewrite_plan *p = NULL;
        int rc = floe_rewrite_plan_new(t, o, &p, err);
        if (rc == 0)
            rc = floe_rewrite_execute(t, p, o, res, err);
        floe_rewrite_plan_free(p);
        if (rc < 0 && floe_rewrite_again(t, rc, round, err))
            continue;
        return rc;
    }
}
