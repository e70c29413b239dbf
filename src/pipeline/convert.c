/*
 * convert.c - the NDJSON -> Parquet pipeline (see floe/convert.h).
 *
 * Threads and slots. A ring of slots carries chunks through three stages:
 *
 *     FREE --reader fills chunk--> READY --worker shreds--> DONE --writer writes--> FREE
 *
 * The reader (the calling thread) fills slots in input order, numbering them with seq;
 * workers take READY slots in seq order and shred them concurrently; the writer waits for
 * the slot with the next seq to be DONE, so batches and rejected records reach the Parquet
 * writer and the quarantine in input order. A slot is touched only by the stage that owns
 * its state, so slot contents need no lock; the states and counters are guarded by mu.
 *
 * With one thread everything runs inline in the caller: read, shred, write.
 *
 * Errors: the first error wins (copied into the pipeline), sets abort, and every stage
 * stops at its next wait. Files this call wrote are then removed (nothing half-done is
 * left behind); the quarantine keeps what it received, so no rejected record is lost.
 */
#include "floe/convert.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "floe/input.h"
#include "floe/io.h"
#include "floe/quarantine.h"

enum slot_state { SLOT_FREE, SLOT_READY, SLOT_SHREDDING, SLOT_DONE };

/* A rejected record as kept in a slot until the writer stores it. */
typedef struct reject_hdr {
    int64_t line, offset;
    int32_t reason;
    uint32_t msg_len, rec_len;
} reject_hdr;

typedef struct slot {
    enum slot_state state;
    int64_t seq;
    floe_chunk chunk;
    size_t source_idx;
    floe_batch batch;
    floe_buf rejects; /* reject_hdr, message, record; repeated */
    int64_t nrejects;
} slot;

typedef struct pipeline {
    const floe_convert_options *opts;
    const char *const *inputs;
    char **sources; /* display names per input */
    slot *slots;
    size_t nslots;
    floe_shredder **shredders;
    int nworkers;

    pthread_mutex_t mu;
    pthread_cond_t cv_ready, cv_done, cv_free;
    int64_t next_fill, next_shred, next_write;
    bool eof, abort;
    int rc;
    floe_error err;

    /* writer state (owned by the writer stage) */
    floe_quarantine *quarantine;
    floe_pq_writer *pq;
    char *pq_uri;
    floe_buf msg;
    floe_convert_result *res;
    int64_t file_seq;
    int64_t oversized; /* records quarantined by the reader (too large) */
} pipeline;

static void fail(pipeline *p, int rc, const floe_error *err) {
    pthread_mutex_lock(&p->mu);
    if (p->rc == 0) {
        p->rc = rc;
        if (err)
            p->err = *err;
        else
            floe_error_set(&p->err, rc, "%s", floe_strerror(rc));
    }
    p->abort = true;
    pthread_cond_broadcast(&p->cv_ready);
    pthread_cond_broadcast(&p->cv_done);
    pthread_cond_broadcast(&p->cv_free);
    pthread_mutex_unlock(&p->mu);
}

/* ---- shredding --------------------------------------------------------------------- */

typedef struct reject_ctx {
    slot *s;
} reject_ctx;

static int on_reject(void *ctx, const floe_reject *r) {
    slot *s = ((reject_ctx *)ctx)->s;
    char msg[1024];
    int ml;
    if (r->column > 0)
        ml = snprintf(msg, sizeof msg, "%s: %s (at byte %lld of the record)",
                      floe_reject_reason_name(r->reason), r->message, (long long)r->column);
    else
        ml = snprintf(msg, sizeof msg, "%s: %s", floe_reject_reason_name(r->reason),
                      r->message);
    if (ml < 0)
        ml = 0;
    if ((size_t)ml >= sizeof msg)
        ml = (int)sizeof msg - 1;
    if (r->record_len > UINT32_MAX)
        return FLOE_ELIMIT;
    reject_hdr h = {r->line, r->offset, (int32_t)r->reason, (uint32_t)ml,
                    (uint32_t)r->record_len};
    int rc;
    if ((rc = floe_buf_append(&s->rejects, &h, sizeof h)) < 0 ||
        (rc = floe_buf_append(&s->rejects, msg, (size_t)ml)) < 0 ||
        (rc = floe_buf_append(&s->rejects, r->record, r->record_len)) < 0)
        return rc;
    s->nrejects++;
    return 0;
}

static int shred_slot(pipeline *p, floe_shredder *sh, slot *s, floe_error *err) {
    reject_ctx rc_ctx = {s};
    int rc = floe_shredder_feed(sh, s->chunk.data.data, s->chunk.data.len,
                                p->sources[s->source_idx], s->chunk.first_line,
                                s->chunk.first_offset, &s->batch, on_reject, &rc_ctx, err);
    if (rc < 0)
        floe_error_prefix(err, "%s: ", p->sources[s->source_idx]);
    return rc;
}

/* ---- writing ----------------------------------------------------------------------- */

static int close_file(pipeline *p, floe_error *err) {
    if (!p->pq)
        return 0;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    floe_pq_writer *w = p->pq;
    p->pq = NULL;
    int rc = floe_pq_writer_close(w, &fi, err);
    if (rc < 0) {
        floe_free(p->pq_uri);
        p->pq_uri = NULL;
        return rc;
    }
    floe_convert_result *res = p->res;
    char **nu = floe_realloc(res->file_uris, (size_t)(res->files + 1) * sizeof *nu);
    if (!nu) {
        floe_pq_file_info_free(&fi);
        floe_io_delete(p->pq_uri, NULL);
        floe_free(p->pq_uri);
        p->pq_uri = NULL;
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    res->file_uris = nu;
    res->file_uris[res->files++] = p->pq_uri;
    res->bytes_out += fi.file_size_in_bytes;
    const char *uri = p->pq_uri;
    p->pq_uri = NULL;
    if (p->opts->on_file)
        rc = p->opts->on_file(p->opts->on_file_ctx, uri, &fi, err);
    floe_pq_file_info_free(&fi);
    return rc;
}

static int open_file(pipeline *p, floe_error *err) {
    const floe_convert_options *o = p->opts;
    p->pq_uri = floe_asprintf("%s/%s-%05lld.parquet", o->out_dir,
                              o->file_prefix ? o->file_prefix : "part",
                              (long long)p->file_seq++);
    if (!p->pq_uri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_pq_writer_open(p->pq_uri, o->schema, &o->write, &p->pq, err);
    if (rc < 0) {
        floe_free(p->pq_uri);
        p->pq_uri = NULL;
    }
    return rc;
}

static int write_slot(pipeline *p, slot *s, floe_error *err) {
    int rc = 0;
    floe_convert_result *res = p->res;
    /* rejected records first: they precede nothing in particular, but keeping input order
     * makes the quarantine read like the input */
    const uint8_t *r = s->rejects.data, *end = s->rejects.data + s->rejects.len;
    while (r < end) {
        reject_hdr h;
        memcpy(&h, r, sizeof h);
        const char *m = (const char *)r + sizeof h;
        const uint8_t *rec = r + sizeof h + h.msg_len;
        const char *src = p->sources[s->source_idx];
        floe_buf_reset(&p->msg);
        if (floe_buf_append(&p->msg, m, h.msg_len) < 0 || floe_buf_append_byte(&p->msg, 0) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (p->opts->strict)
            return floe_error_at(err, FLOE_ESCHEMA, h.offset,
                                 "%s: line %lld (byte offset %lld): %s (--strict)", src,
                                 (long long)h.line, (long long)h.offset,
                                 (const char *)p->msg.data);
        if ((rc = floe_quarantine_add(p->quarantine, src, h.line, h.offset,
                                      (const char *)p->msg.data, rec, h.rec_len, err)) < 0)
            return rc;
        res->rejected++;
        if (h.reason >= 0 && h.reason < FLOE_REJECT_NREASONS)
            res->rejected_by_reason[h.reason]++;
        r = rec + h.rec_len;
    }
    res->records_in += (int64_t)s->batch.nrows + s->nrejects;
    if (s->batch.nrows == 0)
        return 0;
    if (!p->pq && (rc = open_file(p, err)) < 0)
        return rc;
    if ((rc = floe_pq_writer_write_batch(p->pq, &s->batch, err)) < 0)
        return rc;
    res->records_out += (int64_t)s->batch.nrows;
    if (floe_pq_writer_should_roll(p->pq))
        rc = close_file(p, err);
    return rc;
}

static void slot_recycle(slot *s) {
    floe_batch_clear(&s->batch);
    floe_buf_reset(&s->rejects);
    s->nrejects = 0;
    s->state = SLOT_FREE;
}

/* ---- threads ----------------------------------------------------------------------- */

typedef struct worker_arg {
    pipeline *p;
    floe_shredder *sh;
} worker_arg;

static void *worker_main(void *arg) {
    worker_arg *wa = arg;
    pipeline *p = wa->p;
    floe_error err;
    floe_error_clear(&err);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->abort && p->next_shred >= p->next_fill && !p->eof)
            pthread_cond_wait(&p->cv_ready, &p->mu);
        if (p->abort || p->next_shred >= p->next_fill)
            break;
        slot *s = &p->slots[p->next_shred % (int64_t)p->nslots];
        p->next_shred++;
        s->state = SLOT_SHREDDING;
        pthread_mutex_unlock(&p->mu);
        int rc = shred_slot(p, wa->sh, s, &err);
        if (rc < 0) {
            fail(p, rc, &err);
            pthread_mutex_lock(&p->mu);
            break;
        }
        pthread_mutex_lock(&p->mu);
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&p->cv_done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void *writer_main(void *arg) {
    pipeline *p = arg;
    floe_error err;
    floe_error_clear(&err);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        slot *s = &p->slots[p->next_write % (int64_t)p->nslots];
        while (!p->abort && !(s->state == SLOT_DONE && s->seq == p->next_write) &&
               !(p->eof && p->next_write >= p->next_fill))
            pthread_cond_wait(&p->cv_done, &p->mu);
        if (p->abort || !(s->state == SLOT_DONE && s->seq == p->next_write))
            break;
        pthread_mutex_unlock(&p->mu);
        int rc = write_slot(p, s, &err);
        if (rc < 0) {
            fail(p, rc, &err);
            pthread_mutex_lock(&p->mu);
            break;
        }
        pthread_mutex_lock(&p->mu);
        slot_recycle(s);
        p->next_write++;
        pthread_cond_broadcast(&p->cv_free);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- oversized records: straight to the quarantine from the reader ------------------ */

typedef struct over_ctx {
    pipeline *p;
    floe_error err;
    int rc;
} over_ctx;

static int on_oversize(void *ctx, const char *source, int64_t line, int64_t offset,
                       const uint8_t *bytes, size_t n, bool first, bool last,
                       int64_t total_len) {
    over_ctx *oc = ctx;
    pipeline *p = oc->p;
    int rc = 0;
    if (first) {
        if (p->opts->strict) {
            oc->rc = floe_error_at(&oc->err, FLOE_ESCHEMA, offset,
                                   "%s: line %lld (byte offset %lld): record larger than "
                                   "%zu bytes (--strict)",
                                   source, (long long)line, (long long)offset,
                                   p->opts->shred.max_record ? p->opts->shred.max_record
                                                             : (size_t)1 << 20);
            return 1;
        }
        char reason[160];
        snprintf(reason, sizeof reason, "%s: record larger than the limit of %zu bytes",
                 floe_reject_reason_name(FLOE_REJECT_TOO_LARGE),
                 p->opts->shred.max_record ? p->opts->shred.max_record : (size_t)1 << 20);
        rc = floe_quarantine_stream_begin(p->quarantine, source, line, offset, reason,
                                          &oc->err);
        if (rc < 0) {
            oc->rc = rc;
            return 1;
        }
    }
    if (n > 0 && (rc = floe_quarantine_stream_piece(p->quarantine, bytes, n, &oc->err)) < 0) {
        oc->rc = rc;
        floe_quarantine_stream_end(p->quarantine, NULL);
        return 1;
    }
    if (last) {
        (void)total_len;
        if ((rc = floe_quarantine_stream_end(p->quarantine, &oc->err)) < 0) {
            oc->rc = rc;
            return 1;
        }
        p->oversized++; /* reader-owned; added to the result after the threads end */
    }
    return 0;
}

/* ---- the driver -------------------------------------------------------------------- */

void floe_convert_options_init(floe_convert_options *o) {
    memset(o, 0, sizeof *o);
    floe_pq_write_options_init(&o->write);
    o->threads = 1;
}

void floe_convert_result_free(floe_convert_result *r) {
    if (!r)
        return;
    for (int64_t i = 0; i < r->files; i++)
        floe_free(r->file_uris[i]);
    floe_free(r->file_uris);
    r->file_uris = NULL;
    r->files = 0;
}

/* Read every input into slots; with no workers, shred and write inline. */
static int read_inputs(pipeline *p, size_t ninputs, bool inline_mode, floe_error *err) {
    const floe_convert_options *o = p->opts;
    over_ctx oc = {p, {0}, 0};
    floe_error_clear(&oc.err);
    for (size_t i = 0; i < ninputs; i++) {
        floe_line_reader_options lo = {o->chunk_size, o->shred.max_record, on_oversize, &oc};
        floe_line_reader *lr = NULL;
        int rc = floe_line_reader_open(p->inputs[i], &lo, &lr, err);
        if (rc < 0)
            return rc;
        for (;;) {
            slot *s = &p->slots[p->next_fill % (int64_t)p->nslots];
            if (!inline_mode) {
                pthread_mutex_lock(&p->mu);
                while (!p->abort && s->state != SLOT_FREE)
                    pthread_cond_wait(&p->cv_free, &p->mu);
                bool ab = p->abort;
                pthread_mutex_unlock(&p->mu);
                if (ab) {
                    floe_line_reader_close(lr);
                    return FLOE_ECANCELLED;
                }
            }
            rc = floe_line_reader_next(lr, &s->chunk, err);
            if (rc < 0 && oc.rc < 0) {
                rc = oc.rc;
                *err = oc.err;
            }
            if (rc <= 0)
                break;
            s->source_idx = i;
            if (inline_mode) {
                s->seq = p->next_fill++;
                if ((rc = shred_slot(p, p->shredders[0], s, err)) < 0 ||
                    (rc = write_slot(p, s, err)) < 0)
                    break;
                slot_recycle(s);
                continue;
            }
            pthread_mutex_lock(&p->mu);
            s->seq = p->next_fill++;
            s->state = SLOT_READY;
            pthread_cond_broadcast(&p->cv_ready);
            pthread_mutex_unlock(&p->mu);
        }
        p->res->bytes_in += floe_line_reader_bytes_in(lr);
        p->res->bytes_decompressed += floe_line_reader_bytes_out(lr);
        floe_line_reader_close(lr);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int floe_convert(const char *const *inputs, size_t ninputs, const floe_convert_options *opts,
                 floe_convert_result *out, floe_error *err) {
    if (!opts || !opts->schema || !opts->out_dir)
        return floe_error_set(err, FLOE_EINVALID, "convert: schema and output folder are required");
    if (ninputs == 0)
        return floe_error_set(err, FLOE_EINVALID, "convert: no input");
    int64_t t0 = floe_now_ns();
    pipeline p;
    memset(&p, 0, sizeof p);
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    p.opts = opts;
    p.inputs = inputs;
    p.res = &res;
    floe_buf_init(&p.msg, 0);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv_ready, NULL);
    pthread_cond_init(&p.cv_done, NULL);
    pthread_cond_init(&p.cv_free, NULL);
    int threads = opts->threads > 0 ? opts->threads : 1;
    if (threads > 64)
        threads = 64;
    bool inline_mode = threads == 1;
    p.nworkers = threads;
    p.nslots = inline_mode ? 1 : (size_t)threads * 2 + 2;
    pthread_t *tids = NULL;
    worker_arg *wargs = NULL;
    pthread_t writer_tid;
    bool writer_started = false;
    int started = 0;
    int rc = 0;
    char *qdefault = NULL;

    p.sources = floe_calloc(ninputs, sizeof *p.sources);
    p.slots = floe_calloc(p.nslots, sizeof *p.slots);
    p.shredders = floe_calloc((size_t)threads, sizeof *p.shredders);
    tids = floe_calloc((size_t)threads, sizeof *tids);
    wargs = floe_calloc((size_t)threads, sizeof *wargs);
    if (!p.sources || !p.slots || !p.shredders || !tids || !wargs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < ninputs; i++)
        if (!(p.sources[i] = floe_strdup(strcmp(inputs[i], "-") ? inputs[i] : "<stdin>")))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < p.nslots; i++) {
        floe_buf_init(&p.slots[i].chunk.data, 0);
        floe_buf_init(&p.slots[i].rejects, 0);
        if (floe_batch_init(&p.slots[i].batch, opts->schema) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (int i = 0; i < threads; i++)
        FLOE_CHECK(floe_shredder_new(opts->schema, &opts->shred, &p.shredders[i], err));
    FLOE_CHECK(floe_io_mkdirs(opts->out_dir, err));
    if (!opts->quarantine_uri &&
        !(qdefault = floe_asprintf("%s/_quarantine/quarantine.ndjson", opts->out_dir)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_quarantine_open(opts->quarantine_uri ? opts->quarantine_uri : qdefault,
                                    &p.quarantine, err));

    if (!inline_mode) {
        for (; started < threads; started++) {
            wargs[started].p = &p;
            wargs[started].sh = p.shredders[started];
            if (pthread_create(&tids[started], NULL, worker_main, &wargs[started]) != 0) {
                fail(&p, FLOE_EINTERNAL, NULL);
                break;
            }
        }
        if (pthread_create(&writer_tid, NULL, writer_main, &p) == 0)
            writer_started = true;
        else
            fail(&p, FLOE_EINTERNAL, NULL);
    }
    floe_error rerr;
    floe_error_clear(&rerr);
    int rrc = read_inputs(&p, ninputs, inline_mode, &rerr);
    if (rrc < 0 && rrc != FLOE_ECANCELLED)
        fail(&p, rrc, &rerr);
    else if (rrc == FLOE_ECANCELLED && p.rc == 0)
        fail(&p, rrc, &rerr);
    pthread_mutex_lock(&p.mu);
    p.eof = true;
    pthread_cond_broadcast(&p.cv_ready);
    pthread_cond_broadcast(&p.cv_done);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (writer_started)
        pthread_join(writer_tid, NULL);
    if (p.rc < 0) {
        rc = p.rc;
        if (err)
            *err = p.err;
        goto done;
    }
    FLOE_CHECK(close_file(&p, err));
    res.rejected += p.oversized;
    res.records_in += p.oversized;
    res.rejected_by_reason[FLOE_REJECT_TOO_LARGE] += p.oversized;
    res.seconds = (double)(floe_now_ns() - t0) / 1e9;

done:
    if (p.pq)
        floe_pq_writer_abort(p.pq);
    floe_free(p.pq_uri);
    if (p.quarantine) {
        floe_error qerr;
        int qrc = floe_quarantine_close(p.quarantine, &qerr);
        if (qrc < 0 && rc == 0) {
            rc = qrc;
            if (err)
                *err = qerr;
        }
    }
    if (rc < 0) {
        for (int64_t i = 0; i < res.files; i++)
            floe_io_delete(res.file_uris[i], NULL);
        floe_convert_result_free(&res);
    } else {
        *out = res;
    }
    if (p.slots)
        for (size_t i = 0; i < p.nslots; i++) {
            floe_buf_free(&p.slots[i].chunk.data);
            floe_buf_free(&p.slots[i].rejects);
            floe_batch_free(&p.slots[i].batch);
        }
    if (p.shredders)
        for (int i = 0; i < threads; i++)
            floe_shredder_free(p.shredders[i]);
    if (p.sources)
        for (size_t i = 0; i < ninputs; i++)
            floe_free(p.sources[i]);
    floe_free(p.sources);
    floe_free(p.slots);
    floe_free(p.shredders);
    floe_free(tids);
    floe_free(wargs);
    floe_free(qdefault);
    floe_buf_free(&p.msg);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv_ready);
    pthread_cond_destroy(&p.cv_done);
    pthread_cond_destroy(&p.cv_free);
    return rc;
}
