/*
 * convert.c - the NDJSON -> Parquet pipeline (see floe/convert.h).
 *
 * Threads and slots. A ring of slots carries chunks through three stages:
 *
 *     FREE --reader fills chunk--> READY --a worker shreds--> DONE --the writer writes--> FREE
 *
 * The reader (the calling thread) fills slots in input order, numbering them with seq.
 * A pool of `threads` workers does the rest (see "the pool" below): any worker shreds
 * READY slots, in seq order but concurrently; the worker holding the writer role writes
 * the slot with the next seq once it is DONE, so batches and rejected records reach the
 * Parquet writer and the quarantine in input order, and the writer spreads each batch's
 * column encoding over the pool (floe_pq_executor). A slot is touched only by the stage
 * that owns its state, so slot contents need no lock; states, counters, the writer role
 * and the column task set are guarded by mu.
 *
 * With one thread everything runs inline in the caller: read, shred, write.
 *
 * Partitioned output: the worker that shreds a slot also routes its rows. It computes
 * each row's partition tuple from the source columns, serialises it as a key, and moves
 * runs of rows with the same key into per-partition sub-batches of the slot (rows keep
 * their input order within a partition). The writer looks each key up in its table of
 * open partition writers. Memory stays bounded by max_buffered_bytes (the largest writer
 * flushes its row group) and max_open_files (the least recently used file is closed).
 *
 * Errors: the first error wins (copied into the pipeline), sets abort, and every stage
 * stops at its next wait. Files this call wrote are then removed (nothing half-done is
 * left behind); the quarantine keeps what it received, so no rejected record is lost.
 */
#include "common/keyset.h"
#include "schema/column_scatter.h"
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
    floe_batch batch;        /* from its shredding to its recycling; else none (cols NULL,
                                see pipeline.spare) */
    floe_buf rejects; /* reject_hdr, message, record; repeated */
    int64_t nrejects;
    int64_t nlines;   /* lines the chunk held (records, rejected ones and blank lines) */
    int64_t in_end;   /* input bytes read once the chunk was (progress's count) */
    /* partitioned output: the slot's rows split by partition key */
    struct slot_part *parts;
    size_t nparts, parts_cap;
    size_t parts_init;       /* parts whose batch is initialised (kept, cleared, for reuse:
                                growing them again for every chunk costs page faults) */
    floe_batch **dsts;       /* the parts' batches, for floe_batch_scatter_rows */
    size_t dsts_cap;
    uint32_t *row_part;      /* partition index per row of batch */
    size_t row_part_cap;
    floe_buf keys;           /* the parts' keys, back to back */
} slot;

/* Rows of one partition within a slot. */
typedef struct slot_part {
    size_t key_off, key_len; /* in slot.keys */
    uint64_t hash;
    floe_batch batch;
} slot_part;

/* One partition's output stream in the writer. */
typedef struct out_part {
    uint8_t *key;
    size_t key_len;
    uint64_t hash;
    floe_value *tuple;       /* decoded from key (bytes borrow key) */
    floe_pq_writer *pq;      /* NULL when no file is open */
    char *uri;
    uint64_t last_used;
    int64_t rg_start;        /* input position where pq's current row group began */
    int64_t rg_seen;         /* pq's row groups when last looked at */
} out_part;

typedef struct pipeline {
    const floe_convert_options *opts;
    const char *const *inputs;
    char **sources; /* display names per input */
    slot *slots;
    size_t nslots;
    /* Batches no slot holds, cleared, the last one given back on top. A slot takes the
     * top one when its shredding starts and gives it back when it is recycled, so only
     * as many batches are grown as are shredded or waiting to be written at once (two
     * threads: 3-4 of 6 slots), and the one taken is the most recently used: its buffers
     * are grown and still in cache. One batch per slot grew six (iot: ~4 MB each, by
     * realloc copies into fresh pages) and took them in turn, each cold. */
    floe_batch *spare;
    size_t nspare;
    size_t chunk_size; /* bytes per chunk: opts->chunk_size, or chunk_default's */
    floe_shredder **shredders;
    int nworkers;

    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_free; /* work for the pool; a free slot for the reader */
    /* the pool (threads > 1): the writer role and the column tasks it hands out */
    bool writing;
    bool closing, closed;      /* a worker closes the files at the end */
    int writer_id;
    floe_pq_executor ex;
    floe_pq_task_fn task_fn;   /* NULL: no task set */
    void *task_arg;
    size_t task_n, task_next, task_done;
    int64_t next_fill, next_shred, next_write;
    bool eof, abort;
    int rc;
    floe_error err;

    /* writer state (owned by the writer stage) */
    floe_quarantine *quarantine;
    floe_buf msg;
    floe_convert_result *res;
    int64_t file_seq;
    bool partitioned;
    floe_pq_write_options write; /* opts->write, with the encoding threads filled in */
    out_part *outs;          /* every partition seen; unpartitioned: one, empty key */
    size_t nouts, outs_cap;
    size_t open_files;
    uint64_t use_clock;
    floe_buf path;
    int64_t oversized; /* records quarantined by the reader (too large) */
    int64_t next_line; /* writer: line number after the last slot written */
    int64_t write_pos; /* writer: in_end of the last slot written */
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
    pthread_cond_broadcast(&p->cv_work);
    pthread_cond_broadcast(&p->cv_free);
    pthread_mutex_unlock(&p->mu);
}

static int route_slot(pipeline *p, slot *s, floe_error *err);
static int close_all(pipeline *p, floe_error *err);

/* The slot takes a batch for its chunk (under mu with a pool). There is always one: a
 * slot holds at most one, and there are as many as slots. */
static void slot_take_batch(pipeline *p, slot *s) { s->batch = p->spare[--p->nspare]; }

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

static uint64_t lines_fed(const floe_shredder *sh) {
    floe_shred_stats st;
    floe_shredder_stats(sh, &st);
    return st.records_accepted + st.records_rejected + st.blank_lines;
}

/* A mapped chunk may not know its first line (floe/input.h): it is then shredded as if
 * it started at line 1, and the writer, which sees the slots in order, shifts the line
 * numbers of its rejected records (see write_slot). */
static int shred_slot(pipeline *p, floe_shredder *sh, slot *s, floe_error *err) {
    reject_ctx rc_ctx = {s};
    uint64_t before = lines_fed(sh);
    bool known = s->chunk.first_line > 0;
    int rc = floe_shredder_feed(sh, s->chunk.bytes, s->chunk.len, p->sources[s->source_idx],
                                known ? s->chunk.first_line : 1, s->chunk.first_offset,
                                &s->batch, on_reject, &rc_ctx, err);
    s->nlines = (int64_t)(lines_fed(sh) - before);
    if (rc < 0) {
        if (!known)
            floe_error_prefix(err, "chunk at byte offset %lld: ",
                              (long long)s->chunk.first_offset);
        floe_error_prefix(err, "%s: ", p->sources[s->source_idx]);
    } else if (p->partitioned && s->batch.nrows > 0) {
        rc = route_slot(p, s, err);
    }
    return rc;
}

/* ---- routing (worker side) ---------------------------------------------------------- */

/* The value of row's slot in a flat (non-repeated) leaf column, as a floe_value of the
 * leaf's Iceberg type. *vi is the running value index of the column. */
static floe_value leaf_value(const floe_colbuf *c, size_t row, size_t *vi) {
    const floe_field *f = c->field;
    if (c->max_def > 0 && c->def[row] != c->max_def)
        return floe_value_null(f->type);
    size_t v = (*vi)++;
    const uint8_t *p = c->width ? c->values + v * (size_t)c->width : c->values + c->offsets[v];
    switch (f->type) {
    case FLOE_TYPE_BOOLEAN:
        return floe_value_bool(p[0] != 0);
    case FLOE_TYPE_INT:
        return floe_value_int((int32_t)floe_load_le32(p));
    case FLOE_TYPE_DATE:
        return floe_value_date((int32_t)floe_load_le32(p));
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        return floe_value_i64(f->type, (int64_t)floe_load_le64(p));
    case FLOE_TYPE_FLOAT: {
        float x;
        memcpy(&x, p, 4);
        return floe_value_float(x);
    }
    case FLOE_TYPE_DOUBLE: {
        double x;
        memcpy(&x, p, 8);
        return floe_value_double(x);
    }
    case FLOE_TYPE_DECIMAL: {
        floe_i128 u = 0;
        if (c->phys == FLOE_PHYS_INT32) {
            u = (int32_t)floe_load_le32(p);
        } else if (c->phys == FLOE_PHYS_INT64) {
            u = (int64_t)floe_load_le64(p);
        } else { /* big-endian two's complement, sign-extended */
            u = (c->width > 0 && (p[0] & 0x80)) ? -1 : 0;
            for (int32_t k = 0; k < c->width; k++)
                u = (floe_i128)(((unsigned __int128)u << 8) | p[k]);
        }
        return floe_value_decimal(u, f->precision, f->scale);
    }
    case FLOE_TYPE_UUID:
        return floe_value_uuid(p);
    case FLOE_TYPE_FIXED:
        return floe_value_fixed(p, (size_t)c->width);
    case FLOE_TYPE_STRING:
        return floe_value_string((const char *)p, c->offsets[v + 1] - c->offsets[v]);
    case FLOE_TYPE_BINARY:
        return floe_value_binary(p, c->offsets[v + 1] - c->offsets[v]);
    default:
        return floe_value_null(f->type);
    }
}

/* Append the key of a tuple: per field a null flag, then length + Appendix D bytes. */
static int tuple_key(const floe_partition_spec *spec, const floe_value *tuple, floe_buf *key,
                     floe_buf *tmp, floe_error *err) {
    for (size_t k = 0; k < spec->nfields; k++) {
        if (tuple[k].is_null) {
            FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(key, 0) < 0
                                      ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                                      : 0);
            continue;
        }
        floe_buf_reset(tmp);
        FLOE_FORWARD_IF_ERROR(floe_value_to_binary(&tuple[k], tmp, err));
        uint8_t hdr[5] = {1};
        floe_store_le32(hdr + 1, (uint32_t)tmp->len);
        if (floe_buf_append(key, hdr, 5) < 0 || floe_buf_append(key, tmp->data, tmp->len) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    return 0;
}

static int slot_part_find(pipeline *p, slot *s, const uint8_t *key, size_t key_len,
                          uint64_t h, uint32_t *idx, floe_error *err) {
    for (size_t i = s->nparts; i-- > 0;) { /* recent partitions first: runs repeat */
        slot_part *sp = &s->parts[i];
        if (sp->hash == h && sp->key_len == key_len &&
            !memcmp(s->keys.data + sp->key_off, key, key_len)) {
            *idx = (uint32_t)i;
            return 0;
        }
    }
    if (s->nparts == s->parts_cap) {
        size_t nc = s->parts_cap ? s->parts_cap * 2 : 8;
        slot_part *np = floe_realloc(s->parts, nc * sizeof *np);
        if (!np)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        s->parts = np;
        s->parts_cap = nc;
    }
    slot_part *sp = &s->parts[s->nparts];
    if (s->nparts == s->parts_init) {
        memset(sp, 0, sizeof *sp);
        if (floe_batch_init(&sp->batch, p->opts->schema) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        s->parts_init++;
    }
    sp->key_off = s->keys.len;
    sp->key_len = key_len;
    sp->hash = h;
    /* key may point into s->keys' tail (the scratch area): copy via memmove semantics */
    if (floe_buf_reserve(&s->keys, key_len) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory"); /* sp->batch is kept */
    memmove(s->keys.data + s->keys.len, key, key_len);
    s->keys.len += key_len;
    *idx = (uint32_t)s->nparts++;
    return 0;
}

/* Split the slot's batch into per-partition sub-batches. */
static int route_slot(pipeline *p, slot *s, floe_error *err) {
    const floe_partition_spec *spec = p->opts->spec;
    const floe_batch *b = &s->batch;
    size_t nf = spec->nfields;
    int rc = 0;
    floe_value src_vals[16], tuple[16];
    size_t vis[16];
    floe_buf key, tmp;
    floe_buf_init(&key, 0);
    floe_buf_init(&tmp, 0);
    if (nf > 16)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "partition specs with more than 16 fields");
    if (s->row_part_cap < b->nrows) {
        uint32_t *np = floe_realloc(s->row_part, b->nrows * sizeof *np);
        if (!np)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        s->row_part = np;
        s->row_part_cap = b->nrows;
    }
    memset(vis, 0, sizeof vis);
    for (size_t r = 0; r < b->nrows; r++) {
        for (size_t k = 0; k < nf; k++) {
            const floe_colbuf *c = &b->cols[spec->fields[k].source->leaf];
            src_vals[k] = leaf_value(c, r, &vis[k]);
        }
        FLOE_CHECK(floe_partition_spec_tuple(spec, src_vals, tuple, err));
        floe_buf_reset(&key);
        FLOE_CHECK(tuple_key(spec, tuple, &key, &tmp, err));
        uint32_t idx = 0;
        uint64_t h = floe_fnv1a(key.data, key.len, FLOE_FNV1A_SEED);
        FLOE_CHECK(slot_part_find(p, s, key.data, key.len, h, &idx, err));
        s->row_part[r] = idx;
    }
    if (s->dsts_cap < s->nparts) {
        floe_batch **nd = floe_realloc(s->dsts, s->nparts * sizeof *nd);
        if (!nd)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        s->dsts = nd;
        s->dsts_cap = s->nparts;
    }
    for (size_t i = 0; i < s->nparts; i++)
        s->dsts[i] = &s->parts[i].batch;
    if ((rc = floe_batch_scatter_rows(s->dsts, s->nparts, b, s->row_part)) < 0)
        FLOE_FAIL(err, rc, "routing rows to partitions: %s", floe_strerror(rc));
done:
    floe_buf_free(&key);
    floe_buf_free(&tmp);
    return rc;
}

/* ---- writing ----------------------------------------------------------------------- */

static int close_part(pipeline *p, out_part *o, floe_error *err) {
    if (!o->pq)
        return 0;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    floe_pq_writer *w = o->pq;
    char *uri = o->uri;
    o->pq = NULL;
    o->uri = NULL;
    p->open_files--;
    int rc = floe_pq_writer_close(w, &fi, err);
    if (rc < 0) {
        floe_free(uri);
        return rc;
    }
    floe_convert_result *res = p->res;
    char **nu = floe_realloc(res->file_uris, (size_t)(res->files + 1) * sizeof *nu);
    if (!nu) {
        floe_pq_file_info_free(&fi);
        floe_io_delete(p->opts->io, uri, NULL);
        floe_free(uri);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    res->file_uris = nu;
    res->file_uris[res->files++] = uri;
    res->bytes_out += fi.file_size_in_bytes;
    if (p->opts->on_file)
        rc = p->opts->on_file(p->opts->on_file_ctx, uri, &fi, o->tuple,
                              p->partitioned ? p->opts->spec->nfields : 0, err);
    floe_pq_file_info_free(&fi);
    return rc;
}

static int close_all(pipeline *p, floe_error *err) {
    for (size_t i = 0; i < p->nouts; i++)
        FLOE_FORWARD_IF_ERROR(close_part(p, &p->outs[i], err));
    return 0;
}

static int open_part(pipeline *p, out_part *o, floe_error *err) {
    const floe_convert_options *opt = p->opts;
    size_t max_open = opt->max_open_files ? opt->max_open_files : 64;
    if (p->open_files >= max_open) { /* close the least recently used */
        out_part *lru = NULL;
        for (size_t i = 0; i < p->nouts; i++)
            if (p->outs[i].pq && (!lru || p->outs[i].last_used < lru->last_used))
                lru = &p->outs[i];
        if (lru)
            FLOE_FORWARD_IF_ERROR(close_part(p, lru, err));
    }
    floe_buf_reset(&p->path);
    if (p->partitioned) {
        FLOE_FORWARD_IF_ERROR(floe_partition_spec_path(opt->spec, o->tuple, &p->path, err));
        if (p->path.len && floe_buf_append_byte(&p->path, '/') < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    if (floe_buf_append_byte(&p->path, 0) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    o->uri = floe_asprintf("%s/%s%s-%05lld.parquet", opt->out_dir, (const char *)p->path.data,
                           opt->file_prefix ? opt->file_prefix : "part",
                           (long long)p->file_seq++);
    if (!o->uri)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_pq_writer_open(opt->io, o->uri, opt->schema, &p->write, &o->pq, err);
    if (rc < 0) {
        floe_free(o->uri);
        o->uri = NULL;
        return rc;
    }
    o->rg_start = p->write_pos;
    o->rg_seen = 0;
    p->open_files++;
    return 0;
}

/* The writer's partition for a key, created on first sight. */
static int find_out(pipeline *p, const uint8_t *key, size_t key_len, uint64_t h,
                    out_part **out, floe_error *err) {
    for (size_t i = 0; i < p->nouts; i++) {
        out_part *o = &p->outs[i];
        if (o->hash == h && o->key_len == key_len && (key_len == 0 || !memcmp(o->key, key, key_len))) {
            *out = o;
            return 0;
        }
    }
    if (p->nouts == p->outs_cap) {
        size_t nc = p->outs_cap ? p->outs_cap * 2 : 8;
        out_part *np = floe_realloc(p->outs, nc * sizeof *np);
        if (!np)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        p->outs = np;
        p->outs_cap = nc;
    }
    out_part *o = &p->outs[p->nouts];
    memset(o, 0, sizeof *o);
    o->key = floe_malloc(key_len ? key_len : 1);
    if (!o->key)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (key_len)
        memcpy(o->key, key, key_len);
    o->key_len = key_len;
    o->hash = h;
    p->nouts++;
    if (p->partitioned) {
        const floe_partition_spec *spec = p->opts->spec;
        o->tuple = floe_calloc(spec->nfields, sizeof *o->tuple);
        if (!o->tuple)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        const uint8_t *k = o->key, *end = o->key + key_len;
        for (size_t f = 0; f < spec->nfields; f++) {
            const floe_field *ft = &spec->partition_type.children[f];
            if (k < end && *k == 0) {
                o->tuple[f] = floe_value_null(ft->type);
                k++;
                continue;
            }
            uint32_t n = floe_load_le32(k + 1);
            FLOE_FORWARD_IF_ERROR(floe_value_from_binary(ft, k + 5, n, &o->tuple[f], err));
            k += 5 + n;
        }
    }
    *out = o;
    return 0;
}

static int write_rows(pipeline *p, out_part *o, const floe_batch *b, floe_error *err) {
    if (b->nrows == 0)
        return 0;
    o->last_used = ++p->use_clock;
    if (!o->pq)
        FLOE_FORWARD_IF_ERROR(open_part(p, o, err));
    FLOE_FORWARD_IF_ERROR(floe_pq_writer_write_batch(o->pq, b, err));
    p->res->records_out += (int64_t)b->nrows;
    if (floe_pq_writer_should_roll(o->pq))
        FLOE_FORWARD_IF_ERROR(close_part(p, o, err));
    if (!p->partitioned)
        return 0;
    /* bound the memory all open writers hold together */
    size_t cap = p->opts->max_buffered_bytes ? p->opts->max_buffered_bytes : (size_t)256 << 20;
    for (;;) {
        size_t total = 0, best = 0;
        out_part *largest = NULL;
        for (size_t i = 0; i < p->nouts; i++) {
            if (!p->outs[i].pq)
                continue;
            size_t bb = floe_pq_writer_buffered_bytes(p->outs[i].pq);
            total += bb;
            if (bb > best) {
                best = bb;
                largest = &p->outs[i];
            }
        }
        if (total <= cap || !largest)
            break;
        FLOE_FORWARD_IF_ERROR(floe_pq_writer_flush(largest->pq, err));
    }
    return 0;
}

/* The short last row groups of an unpartitioned output whose input size is known
 * (floe_convert_options.input_size): a row group's column chunks follow one another in
 * the file, so none of its bytes can be written before its last row is in, and the last
 * row group is written after the last record, while every worker waits. So the row group
 * that reaches the end of the input is ended early, once it has read twice what is left:
 * each one is written (by the write-behind thread, floe/parquet.h) while the next, a third
 * of its size, is built, and the last holds between tail_min and three times that: 4
 * MiB (the caller's chunk size), or 1/64 of the input when that is more (200 MB: row
 * groups of about 68%, 22%, 8% and 2% of the rows, where there was one). The writes
 * keep up when the output is written at least three times as fast as it is produced
 * (iot, two threads: ~110 MB/s produced, 165-800 MB/s written on the test VM). Decided
 * from input positions after whole chunks, which do not depend on the thread count: the
 * files stay byte-identical whatever it is. */
static int64_t tail_min(const pipeline *p, int64_t total) {
    /* 4 MiB also when the chunks follow a small row group (chunk_default): cutting a
     * row group of a few MiB gains little, and plain and compressed input (sizes in
     * different bytes) made the same file there (convert_interop: 10 MB, 1 MB row
     * groups) */
    int64_t chunk = p->opts->chunk_size ? (int64_t)p->opts->chunk_size : (int64_t)4 << 20;
    return total / 64 > chunk ? total / 64 : chunk;
}

/* After the rows of a slot that ended at input position end went into o. */
static int tail_cut(pipeline *p, out_part *o, int64_t end, floe_error *err) {
    if (!o->pq) /* the file rolled and closed */
        return 0;
    int64_t n = floe_pq_writer_row_groups(o->pq);
    if (n != o->rg_seen) { /* the writer ended one by its size, at this slot's end */
        o->rg_seen = n;
        o->rg_start = end;
        return 0;
    }
    int64_t total = p->opts->input_size;
    int64_t rem = total - end, cur = end - o->rg_start;
    if (total <= 0 || rem < tail_min(p, total) || cur < 2 * rem)
        return 0;
    FLOE_FORWARD_IF_ERROR(floe_pq_writer_end_row_group(o->pq, err));
    o->rg_seen = floe_pq_writer_row_groups(o->pq);
    o->rg_start = end;
    return 0;
}

static int write_slot(pipeline *p, slot *s, floe_error *err) {
    int rc = 0;
    floe_convert_result *res = p->res;
    /* checked before anything of the slot is written: its bytes may be stand-in zeros */
    if (floe_chunk_input_shrank(&s->chunk))
        return floe_error_set(err, FLOE_EIO, "%s: the file shrank, or a read of it failed, while it was mapped",
                              p->sources[s->source_idx]);
    /* a chunk with no first line (map mode) follows the previous one directly */
    int64_t shift = 0;
    if (s->chunk.first_line > 0) {
        p->next_line = s->chunk.first_line + s->nlines;
    } else {
        shift = p->next_line - 1;
        p->next_line += s->nlines;
    }
    /* rejected records first, in input order, so the quarantine reads like the input */
    const uint8_t *r = s->rejects.data, *end = s->rejects.data + s->rejects.len;
    while (r < end) {
        reject_hdr h;
        memcpy(&h, r, sizeof h);
        h.line += shift;
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
    if (s->batch.nrows == 0) {
        p->write_pos = s->in_end;
        return 0;
    }
    out_part *o;
    if (!p->partitioned) {
        FLOE_FORWARD_IF_ERROR(find_out(p, NULL, 0, 0, &o, err));
        FLOE_FORWARD_IF_ERROR(write_rows(p, o, &s->batch, err));
        p->write_pos = s->in_end;
        return tail_cut(p, o, s->in_end, err);
    }
    for (size_t i = 0; i < s->nparts; i++) {
        slot_part *sp = &s->parts[i];
        FLOE_FORWARD_IF_ERROR(
            find_out(p, s->keys.data + sp->key_off, sp->key_len, sp->hash, &o, err));
        FLOE_FORWARD_IF_ERROR(write_rows(p, o, &sp->batch, err));
    }
    return 0;
}

/* Bytes of storage a batch's buffers hold (their capacity). */
static size_t batch_capacity(const floe_batch *b) {
    size_t t = 0;
    for (size_t i = 0; i < b->ncols; i++) {
        const floe_colbuf *c = &b->cols[i];
        t += c->levels_cap * sizeof(int16_t) * ((c->max_def > 0) + (c->max_rep > 0)) +
             c->values_cap + c->offsets_cap * sizeof(uint32_t);
    }
    return t;
}

static void slot_recycle(pipeline *p, slot *s) {
    floe_chunk_release(&s->chunk);
    /* the parts' batches are kept for the next chunk, emptied, up to 4 times the bytes of
     * this chunk's rows (capacities round up to powers of two, and parts take turns
     * growing when partitions vary from chunk to chunk: the bound keeps a slot from
     * holding every partition's largest) */
    size_t keep = 4 * floe_batch_bytes(&s->batch) + ((size_t)4 << 20), kept = 0;
    if (s->batch.cols) {
        floe_batch_clear(&s->batch);
        p->spare[p->nspare++] = s->batch;
        memset(&s->batch, 0, sizeof s->batch);
    }
    for (size_t i = 0; i < s->parts_init; i++) {
        kept += batch_capacity(&s->parts[i].batch);
        if (kept > keep) {
            for (size_t j = i; j < s->parts_init; j++)
                floe_batch_free(&s->parts[j].batch);
            s->parts_init = i;
            break;
        }
        floe_batch_clear(&s->parts[i].batch);
    }
    s->nparts = 0;
    floe_buf_reset(&s->keys);
    floe_buf_reset(&s->rejects);
    s->nrejects = 0;
    s->state = SLOT_FREE;
}

/* ---- threads ----------------------------------------------------------------------- */

/* The pool. Every worker does whatever work there is, in this order of preference:
 *   1. a column task of the batch being written (the writer runs the Parquet writer's
 *      column encoding through pool_run, floe_pq_executor);
 *   2. the writer role, when no one holds it and the next slot in input order is DONE:
 *      write_slot (rejected records, rows to the Parquet writer, which fans its columns
 *      out as tasks), then recycle the slot;
 *   3. shredding the next READY slot.
 * So while one column of a batch is still being encoded, the other cores encode the
 * rest or shred ahead, instead of waiting at the batch's end; and no thread is
 * dedicated to a stage that may have nothing to do. The writer role passes between
 * workers but is held by one at a time, so batches are written in input order.
 * The writer itself does not shred while its batch's last columns are encoded
 * elsewhere: it waits for them. A shred takes a chunk's whole time (~5 ms for 4 MiB of
 * iot), the last column usually microseconds, and a writer that shredded kept the role
 * and its slot all that time: the slots behind it stayed DONE, the reader had no free
 * slot to fill, and the other worker, done with its column, found nothing to do (iot
 * 200 MB, two threads, traced: 41 ms of a 264 ms run idle on one worker, 5-13 ms
 * without). */

typedef struct worker_arg {
    pipeline *p;
    int id;
} worker_arg;

/* Under mu: shred the next READY slot (mu released meanwhile). */
static void shred_next(pipeline *p, int id) {
    slot *s = &p->slots[p->next_shred % (int64_t)p->nslots];
    p->next_shred++;
    s->state = SLOT_SHREDDING;
    slot_take_batch(p, s);
    pthread_mutex_unlock(&p->mu);
    floe_error err;
    floe_error_clear(&err);
    int rc = shred_slot(p, p->shredders[id], s, &err);
    if (rc < 0)
        fail(p, rc, &err);
    pthread_mutex_lock(&p->mu);
    s->state = SLOT_DONE;
    pthread_cond_broadcast(&p->cv_work);
}

/* Under mu: run column task i of the current set (mu released meanwhile). */
static void task_next(pipeline *p, int id) {
    size_t i = p->task_next++;
    floe_pq_task_fn fn = p->task_fn;
    void *arg = p->task_arg;
    pthread_mutex_unlock(&p->mu);
    fn(arg, i, id);
    pthread_mutex_lock(&p->mu);
    if (++p->task_done == p->task_n)
        pthread_cond_broadcast(&p->cv_work);
}

/* floe_pq_executor.run, called by the worker holding the writer role. */
static void pool_run(void *ctx, size_t n, floe_pq_task_fn fn, void *arg) {
    pipeline *p = ctx;
    int id = p->writer_id;
    pthread_mutex_lock(&p->mu);
    p->task_fn = fn;
    p->task_arg = arg;
    p->task_n = n;
    p->task_next = p->task_done = 0;
    pthread_cond_broadcast(&p->cv_work);
    for (;;) {
        if (p->task_next < p->task_n)
            task_next(p, id);
        else if (p->task_done == p->task_n)
            break;
        else
            pthread_cond_wait(&p->cv_work, &p->mu);
    }
    p->task_fn = NULL;
    p->task_n = p->task_next = p->task_done = 0;
    pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg) {
    worker_arg *wa = arg;
    pipeline *p = wa->p;
    floe_error err;
    floe_error_clear(&err);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->task_fn && p->task_next < p->task_n) { /* tasks run even after an abort */
            task_next(p, wa->id);
            continue;
        }
        if (p->abort)
            break;
        slot *s = &p->slots[p->next_write % (int64_t)p->nslots];
        if (!p->writing && s->state == SLOT_DONE && s->seq == p->next_write) {
            p->writing = true;
            p->writer_id = wa->id;
            pthread_mutex_unlock(&p->mu);
            int rc = write_slot(p, s, &err);
            if (rc < 0)
                fail(p, rc, &err);
            pthread_mutex_lock(&p->mu);
            slot_recycle(p, s);
            p->next_write++;
            p->writing = false;
            pthread_cond_broadcast(&p->cv_free);
            pthread_cond_broadcast(&p->cv_work);
            continue;
        }
        if (p->eof && p->next_write >= p->next_fill && !p->writing) {
            /* everything written: one worker closes the files (their last row groups are
             * flushed on the pool too), the others help, then all leave */
            if (p->closed)
                break;
            if (!p->closing) {
                p->closing = p->writing = true;
                p->writer_id = wa->id;
                pthread_mutex_unlock(&p->mu);
                int rc = close_all(p, &err);
                if (rc < 0)
                    fail(p, rc, &err);
                pthread_mutex_lock(&p->mu);
                p->closed = true;
                p->writing = false;
                pthread_cond_broadcast(&p->cv_work);
                continue;
            }
        }
        if (p->next_shred < p->next_fill) {
            shred_next(p, wa->id);
            continue;
        }
        pthread_cond_wait(&p->cv_work, &p->mu);
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
        FLOE_IGNORE_RESULT(floe_quarantine_stream_end(p->quarantine, NULL)); /* oc->rc says */
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

/* The chunk size when the caller gives none: 4 MiB, or a quarter of the row group when
 * that is less (not under 256 KiB). Every slot holds a chunk and its batch, (2 x threads
 * + 2) of them, a part of the memory that does not shrink with the row group: 4 MiB
 * chunks on two threads at a row group of 4 MB made a peak RSS of 77 MiB (plain file)
 * and 104 MiB (zstd), over the 1.5 x row group + 64 MiB bound (70 MiB); a row group of
 * 16 MiB and more keeps 4 MiB (files as they were). Smaller chunks cost more hand-overs
 * per byte, which a row group that small costs anyway. */
static size_t chunk_default(const floe_pq_write_options *w) {
    size_t chunk = (size_t)4 << 20, floor = (size_t)256 << 10;
    size_t rg = w->row_group_size ? w->row_group_size : (size_t)128 << 20;
    if (rg / 4 < chunk)
        chunk = rg / 4 > floor ? rg / 4 : floor;
    return chunk;
}

/* Read every input into slots; with no workers, shred and write inline. */
static int read_inputs(pipeline *p, size_t ninputs, bool inline_mode, floe_error *err) {
    const floe_convert_options *o = p->opts;
    over_ctx oc = {p, {0}, 0};
    floe_error_clear(&oc.err);
    int64_t done_before = 0; /* input bytes of the inputs finished (progress) */
    for (size_t i = 0; i < ninputs; i++) {
        floe_line_reader_options lo = {p->chunk_size, o->shred.max_record, on_oversize, &oc,
                                       true, o->io, NULL, 0, NULL, NULL};
        if (o->input_mem && ninputs == 1) {
            lo.mem = o->input_mem;
            lo.mem_len = o->input_mem_len;
            lo.mem_more = o->input_mem_more;
            lo.mem_more_ctx = o->input_mem_more_ctx;
        }
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
            s->in_end = done_before + floe_line_reader_input_pos(lr);
            if (o->progress)
                o->progress(o->progress_ctx, s->in_end);
            s->source_idx = i;
            if (inline_mode) {
                s->seq = p->next_fill++;
                slot_take_batch(p, s);
                if ((rc = shred_slot(p, p->shredders[0], s, err)) < 0 ||
                    (rc = write_slot(p, s, err)) < 0)
                    break;
                slot_recycle(p, s);
                continue;
            }
            pthread_mutex_lock(&p->mu);
            s->seq = p->next_fill++;
            s->state = SLOT_READY;
            pthread_cond_broadcast(&p->cv_work);
            pthread_mutex_unlock(&p->mu);
        }
        p->res->bytes_in += floe_line_reader_bytes_in(lr);
        done_before += floe_line_reader_input_pos(lr);
        if (o->progress && rc == 0)
            o->progress(o->progress_ctx, done_before);
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
    if (opts->spec && opts->spec->nfields > 0 && !opts->spec->bound)
        return floe_error_set(err, FLOE_EINVALID, "convert: the partition spec is not bound");
    int64_t t0 = floe_now_ns();
    pipeline p;
    memset(&p, 0, sizeof p);
    floe_convert_result res;
    memset(&res, 0, sizeof res);
    p.opts = opts;
    p.inputs = inputs;
    p.res = &res;
    p.partitioned = opts->spec && opts->spec->nfields > 0;
    floe_buf_init(&p.msg, 0);
    floe_buf_init(&p.path, 0);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv_work, NULL);
    pthread_cond_init(&p.cv_free, NULL);
    int threads = opts->threads > 0 ? opts->threads : 1;
    if (threads > 64)
        threads = 64;
    bool inline_mode = threads == 1;
    /* with a pool, the writer encodes its columns on the pool's workers */
    p.write = opts->write;
    if (!inline_mode) {
        p.ex.run = pool_run;
        p.ex.ctx = &p;
        p.ex.nworkers = threads;
        p.write.executor = &p.ex;
    }
    p.nworkers = threads;
    p.nslots = inline_mode ? 1 : (size_t)threads * 2 + 2;
    p.chunk_size = opts->chunk_size ? opts->chunk_size : chunk_default(&opts->write);
    pthread_t *tids = NULL;
    worker_arg *wargs = NULL;
    int started = 0;
    int rc = 0;
    char *qdefault = NULL;

    p.sources = floe_calloc(ninputs, sizeof *p.sources);
    p.slots = floe_calloc(p.nslots, sizeof *p.slots);
    p.spare = floe_calloc(p.nslots, sizeof *p.spare);
    p.shredders = floe_calloc((size_t)threads, sizeof *p.shredders);
    tids = floe_calloc((size_t)threads, sizeof *tids);
    wargs = floe_calloc((size_t)threads, sizeof *wargs);
    if (!p.sources || !p.slots || !p.spare || !p.shredders || !tids || !wargs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < ninputs; i++)
        if (!(p.sources[i] = floe_strdup(strcmp(inputs[i], "-") ? inputs[i] : "<stdin>")))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < p.nslots; i++) {
        floe_buf_init(&p.slots[i].chunk.data, 0);
        floe_buf_init(&p.slots[i].rejects, 0);
        floe_buf_init(&p.slots[i].keys, 0);
        if (floe_batch_init(&p.spare[i], opts->schema) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        p.nspare++;
    }
    {
        /* a record whose hour() partition value cannot be made: that record rejected */
        floe_shred_options so = opts->shred;
        int32_t *hours = NULL;
        int hrc = floe_partition_spec_hour_sources(opts->spec, &hours, &so.nhour_sources, err);
        so.hour_sources = hours;
        for (int i = 0; hrc == 0 && i < threads; i++)
            hrc = floe_shredder_new(opts->schema, &so, &p.shredders[i], err);
        floe_free(hours);
        FLOE_CHECK(hrc);
    }
    FLOE_CHECK(floe_pq_schema_writable(opts->schema, err)); /* before any folder or file */
    FLOE_CHECK(floe_io_mkdirs(opts->io, opts->out_dir, err));
    if (!opts->quarantine_uri &&
        !(qdefault = floe_asprintf("%s/_quarantine/quarantine.ndjson", opts->out_dir)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_quarantine_open(opts->io, opts->quarantine_uri ? opts->quarantine_uri : qdefault,
                                    &p.quarantine, err));

    if (!inline_mode) {
        for (; started < threads; started++) {
            wargs[started].p = &p;
            wargs[started].id = started;
            if (pthread_create(&tids[started], NULL, worker_main, &wargs[started]) != 0) {
                fail(&p, FLOE_EINTERNAL, NULL);
                break;
            }
        }
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
    pthread_cond_broadcast(&p.cv_work);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (p.rc < 0) {
        rc = p.rc;
        if (err)
            *err = p.err;
        goto done;
    }
    if (!p.closed)
        FLOE_CHECK(close_all(&p, err));
    res.rejected += p.oversized;
    res.records_in += p.oversized;
    res.rejected_by_reason[FLOE_REJECT_TOO_LARGE] += p.oversized;
    res.seconds = (double)(floe_now_ns() - t0) / 1e9;

done:
    for (size_t i = 0; i < p.nouts; i++) {
        floe_pq_writer_abort(p.outs[i].pq); /* files still open: the run failed */
        floe_free(p.outs[i].uri);
        floe_free(p.outs[i].key);
        floe_free(p.outs[i].tuple);
    }
    floe_free(p.outs);
    floe_buf_free(&p.path);
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
            floe_io_delete(opts->io, res.file_uris[i], NULL);
        floe_convert_result_free(&res);
    } else {
        *out = res;
    }
    if (p.slots)
        for (size_t i = 0; i < p.nslots; i++) {
            floe_buf_free(&p.slots[i].chunk.data);
            floe_buf_free(&p.slots[i].rejects);
            floe_batch_free(&p.slots[i].batch);
            slot_recycle(&p, &p.slots[i]);
            for (size_t j = 0; j < p.slots[i].parts_init; j++)
                floe_batch_free(&p.slots[i].parts[j].batch);
            floe_free(p.slots[i].parts);
            floe_free(p.slots[i].dsts);
            floe_free(p.slots[i].row_part);
            floe_buf_free(&p.slots[i].keys);
        }
    if (p.shredders)
        for (int i = 0; i < threads; i++)
            floe_shredder_free(p.shredders[i]);
    if (p.sources)
        for (size_t i = 0; i < ninputs; i++)
            floe_free(p.sources[i]);
    floe_free(p.sources);
    if (p.spare)
        for (size_t i = 0; i < p.nspare; i++)
            floe_batch_free(&p.spare[i]);
    floe_free(p.slots);
    floe_free(p.spare);
    floe_free(p.shredders);
    floe_free(tids);
    floe_free(wargs);
    floe_free(qdefault);
    floe_buf_free(&p.msg);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv_work);
    pthread_cond_destroy(&p.cv_free);
    return rc;
}
