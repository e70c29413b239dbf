/*
 * quarantine.c - rejected records with their reasons (see floe/quarantine.h).
 *
 * Invariant I5 (DESIGN.md): every record floe is given ends in the table or here. The
 * file is opened lazily so a clean run leaves nothing, written through FileIO (so it is
 * published atomically at close) and guarded by one mutex.
 */
#include "floe/quarantine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "floe/io.h"

struct floe_quarantine {
    floe_io *io;
    char *uri;
    floe_output *out;
    pthread_mutex_t mu;
    int64_t count;
    floe_buf line;
    bool streaming;
    /* A write failed part-way, or a streamed record lost a piece: the file may end in a
     * record cut short, so it must not be published (close discards it). */
    bool torn;
    uint8_t b64_carry[3];
    size_t b64_carry_len;
};

int floe_quarantine_open(floe_io *io, const char *uri, floe_quarantine **out, floe_error *err) {
    floe_quarantine *q = floe_calloc(1, sizeof *q);
    if (!q)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    q->uri = floe_strdup(uri);
    if (!q->uri) {
        floe_free(q);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    q->io = io;
    pthread_mutex_init(&q->mu, NULL);
    floe_buf_init(&q->line, 0);
    *out = q;
    return 0;
}

static int ensure_open(floe_quarantine *q, floe_error *err) {
    if (q->out)
        return 0;
    int rc = floe_output_open(q->io, q->uri, NULL, &q->out, err);
    if (rc < 0)
        floe_error_prefix(err, "quarantine: ");
    return rc;
}

static int put_header(floe_quarantine *q, const char *source, int64_t line, int64_t offset,
                      const char *reason) {
    int rc;
    floe_buf_reset(&q->line);
    if ((rc = floe_buf_printf(&q->line, "{\"source\":")) < 0 ||
        (rc = floe_json_append_string(&q->line, (const uint8_t *)source, strlen(source))) < 0 ||
        (rc = floe_buf_printf(&q->line, ",\"line\":%lld,\"offset\":%lld,\"reason\":",
                              (long long)line, (long long)offset)) < 0 ||
        (rc = floe_json_append_string(&q->line, (const uint8_t *)reason, strlen(reason))) < 0)
        return rc;
    return 0;
}

int floe_quarantine_add(floe_quarantine *q, const char *source, int64_t line, int64_t offset,
                        const char *reason, const uint8_t *record, size_t n, floe_error *err) {
    pthread_mutex_lock(&q->mu);
    int rc = ensure_open(q, err);
    if (rc < 0)
        goto done;
    if ((rc = put_header(q, source, line, offset, reason)) < 0)
        goto oom;
    if (floe_utf8_valid(record, n)) {
        if ((rc = floe_buf_printf(&q->line, ",\"record\":")) < 0 ||
            (rc = floe_json_append_string(&q->line, record, n)) < 0)
            goto oom;
    } else {
        if ((rc = floe_buf_printf(&q->line, ",\"record_base64\":\"")) < 0 ||
            (rc = floe_base64_append(&q->line, record, n)) < 0 ||
            (rc = floe_buf_append_byte(&q->line, '"')) < 0)
            goto oom;
    }
    if ((rc = floe_buf_append(&q->line, "}\n", 2)) < 0)
        goto oom;
    if ((rc = floe_output_write(q->out, q->line.data, q->line.len, err)) < 0) {
        q->torn = true;
        goto done;
    }
    q->count++;
    goto done;
oom:
    rc = floe_error_set(err, rc, "quarantine %s: out of memory", q->uri);
done:
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int floe_quarantine_stream_begin(floe_quarantine *q, const char *source, int64_t line,
                                 int64_t offset, const char *reason, floe_error *err) {
    pthread_mutex_lock(&q->mu); /* held until stream_end */
    int rc = ensure_open(q, err);
    if (rc < 0) {
        pthread_mutex_unlock(&q->mu);
        return rc;
    }
    if ((rc = put_header(q, source, line, offset, reason)) < 0 ||
        (rc = floe_buf_printf(&q->line, ",\"record_base64\":\"")) < 0 ||
        (rc = floe_output_write(q->out, q->line.data, q->line.len, err)) < 0) {
        q->torn = q->torn || rc != FLOE_ENOMEM; /* ENOMEM: nothing was written */
        pthread_mutex_unlock(&q->mu);
        return rc == FLOE_ENOMEM ? floe_error_set(err, rc, "out of memory") : rc;
    }
    q->streaming = true;
    q->b64_carry_len = 0;
    return 0;
}

int floe_quarantine_stream_piece(floe_quarantine *q, const uint8_t *p, size_t n,
                                 floe_error *err) {
    int rc;
    floe_buf_reset(&q->line);
    /* complete the carried partial triple first */
    while (q->b64_carry_len > 0 && q->b64_carry_len < 3 && n > 0) {
        q->b64_carry[q->b64_carry_len++] = *p++;
        n--;
    }
    if (q->b64_carry_len == 3) {
        if ((rc = floe_base64_append(&q->line, q->b64_carry, 3)) < 0)
            goto lost;
        q->b64_carry_len = 0;
    }
    size_t whole = n / 3 * 3;
    if ((rc = floe_base64_append(&q->line, p, whole)) < 0)
        goto lost;
    memcpy(q->b64_carry + q->b64_carry_len, p + whole, n - whole);
    q->b64_carry_len += n - whole;
    if ((rc = floe_output_write(q->out, q->line.data, q->line.len, err)) < 0) {
        q->torn = true;
        return rc;
    }
    return 0;
lost:
    q->torn = true; /* this record is missing bytes from here on */
    return floe_error_set(err, rc, "out of memory");
}

int floe_quarantine_stream_end(floe_quarantine *q, floe_error *err) {
    int rc;
    floe_buf_reset(&q->line);
    if (q->torn) /* a piece was lost: do not close the record as if it were whole */
        rc = floe_error_set(err, FLOE_EIO, "quarantine %s: record cut short", q->uri);
    else if ((rc = floe_base64_append(&q->line, q->b64_carry, q->b64_carry_len)) < 0 ||
             (rc = floe_buf_append(&q->line, "\"}\n", 3)) < 0)
        rc = floe_error_set(err, rc, "out of memory");
    else if ((rc = floe_output_write(q->out, q->line.data, q->line.len, err)) == 0)
        q->count++;
    if (rc < 0)
        q->torn = true; /* the record's header and pieces are in the file, its end is not */
    q->streaming = false;
    q->b64_carry_len = 0;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int64_t floe_quarantine_count(const floe_quarantine *q) { return q->count; }
const char *floe_quarantine_uri(const floe_quarantine *q) { return q->uri; }

int floe_quarantine_close(floe_quarantine *q, floe_error *err) {
    if (!q)
        return 0;
    int rc = 0;
    if (q->out && q->torn) {
        floe_output_abort(q->out);
        rc = floe_error_set(err, FLOE_EIO,
                            "quarantine %s: discarded: a record in it was cut short by an "
                            "earlier error",
                            q->uri);
    } else if (q->out && q->count == 0) {
        /* opened for a record that then failed before any byte of it was written: keep
         * the promise that an empty quarantine leaves no file */
        floe_output_abort(q->out);
    } else if (q->out) {
        rc = floe_output_close(q->out, err);
        if (rc < 0)
            floe_error_prefix(err, "quarantine: ");
    }
    pthread_mutex_destroy(&q->mu);
    floe_buf_free(&q->line);
    floe_free(q->uri);
    floe_free(q);
    return rc;
}
