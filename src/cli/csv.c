/*
 * csv.c - the CSV form of rows, shared by `floe cat` and `floe scan`: a header line of
 * the column labels (also when no row follows), then one line per row. A null is an
 * empty field, a JSON string without escapes is its text, any other value is its JSON
 * text; a field holding a comma, a quote, CR or LF is quoted, its quotes doubled.
 * Lines are buffered and written 64 KiB at a time, the rest by cli_csv_flush (with no
 * FILE, all stay in the buffer).
 */
#include <string.h>

#include "cli.h"

static int csv_field(floe_buf *b, const char *p, size_t n) {
    bool q = false;
    for (size_t i = 0; i < n && !q; i++)
        q = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!q)
        return floe_buf_append(b, p, n);
    int rc = floe_buf_append_byte(b, '"');
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (p[i] == '"')
            rc = floe_buf_append_byte(b, '"');
        if (rc == 0)
            rc = floe_buf_append_byte(b, (uint8_t)p[i]);
    }
    return rc < 0 ? rc : floe_buf_append_byte(b, '"');
}

static int csv_value(floe_buf *b, floe_pq_text v) {
    if (v.n == 4 && !memcmp(v.p, "null", 4))
        return 0;
    if (v.n >= 2 && v.p[0] == '"' && !memchr(v.p + 1, '\\', v.n - 2))
        return csv_field(b, v.p + 1, v.n - 2);
    return csv_field(b, v.p, v.n);
}

int cli_csv_flush(cli_csv *c) {
    int rc = c->out.len && fwrite(c->out.data, 1, c->out.len, c->f) != c->out.len
                 ? FLOE_EIO : 0;
    floe_buf_reset(&c->out);
    return rc;
}

int cli_csv_row(void *ctx, size_t ncols, const char *const *labels,
                const floe_pq_text *values) {
    cli_csv *c = ctx;
    int rc = 0;
    for (size_t i = 0; i < ncols && rc == 0; i++) {
        if (i)
            rc = floe_buf_append_byte(&c->out, ',');
        if (rc == 0)
            rc = values ? csv_value(&c->out, values[i])
                        : csv_field(&c->out, labels[i], strlen(labels[i]));
    }
    if (rc == 0)
        rc = floe_buf_append_byte(&c->out, '\n');
    if (rc == 0 && values && c->f && c->out.len >= (64u << 10))
        rc = cli_csv_flush(c);
    return rc;
}
