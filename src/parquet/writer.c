/*
 * writer.c - the Parquet writer (floe/parquet.h).
 *
 * Spec: apache/parquet-format parquet.thrift (FileMetaData, ColumnChunk, PageHeader,
 * Statistics, ColumnOrder), Encodings.md (PLAIN, RLE_DICTIONARY, RLE levels,
 * DELTA_BINARY_PACKED), PageIndex.md (ColumnIndex/OffsetIndex after the row groups,
 * before the footer), LogicalTypes.md (annotations and sort orders); Iceberg spec
 * "Parquet" type mapping (field ids, 3-level lists and maps).
 *
 * File layout: "PAR1" | row group 0: chunk 0 [dict page] data pages... | chunk 1 ... |
 * row group 1 ... | ColumnIndex of every chunk | OffsetIndex of every chunk | FileMetaData
 * | footer length (LE32) | "PAR1".
 *
 * State machine (DESIGN.md "Parquet writer"):
 *
 *     floe_pq_writer_open
 *            |
 *            v
 *     +-> ACCEPTING --- write_batch: rows appended to per-column pages; a page is cut
 *     |      |          (cut_page) at a row boundary when it reaches page_size or
 *     |      |          page_row_limit
 *     |      | buffered >= row_group_size (write_batch) or floe_pq_writer_flush
 *     |      v
 *     +-- ROW GROUP FLUSHING (flush_row_group: chunks written, page index encoded)
 *            |
 *            | bytes_written >= target_file_size: should_roll() turns true (FILE FULL;
 *            | advisory, rows are still accepted)
 *            v
 *     floe_pq_writer_close: last row group, page index, footer (FOOTER WRITTEN),
 *     floe_output_close publishes the file (CLOSED, writer freed)
 *
 *     any error -> FAILED: only close (which then discards) or abort are accepted.
 *
 * Write-behind (opts.write_behind): flush_chunk hands the storage of each chunk (and its
 * dictionary page) to a writer thread instead of writing it, in file order, and the
 * column starts its next chunk in a new buffer. w->pos counts the handed-over bytes, so
 * offsets are computed as before. Every other write (page index, footer, copied row
 * groups) first waits until the thread has written everything (wb_drain), so the bytes
 * reach the output in order and only one thread touches it at a time. The thread's
 * first error stops it (later buffers are freed unwritten) and is returned by the next
 * hand-over or drain. At most WB_MAX_BYTES wait in the queue: a hand-over beyond that
 * waits for the thread, so memory does not depend on how fast the device is.
 *
 * Invariants:
 *   - pages start and end at row boundaries (repetition level 0), so the OffsetIndex's
 *     first_row_index is exact;
 *   - one column chunk has at most one dictionary: once the dictionary is abandoned
 *     (too big, or not smaller than plain on the first page) the chunk's remaining pages
 *     use the fallback encoding;
 *   - statistics min/max never contain NaN; float zero bounds are written as -0.0 (min)
 *     and +0.0 (max);
 *   - nothing depends on addresses, clocks or hash seeds: output is deterministic.
 */
#include "floe/parquet.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "parquet/encoding.h"
#include "parquet/metadata.h"
#include "parquet/writer_copy.h"

#ifndef FLOE_BUILD_ID
#define FLOE_BUILD_ID "unknown"
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "the Parquet writer assumes a little-endian host (PLAIN values are copied as is)"
#endif

/* Per page and per span bounds: a flat column's span is re-checked against the page
 * limits every SPAN_MAX slots, so a page overshoots its byte target by at most that many
 * values; nested columns are checked every NESTED_SPAN slots (at a row boundary). */
#define SPAN_MAX 4096u
#define BYTES_SPAN_MAX 256u
#define NESTED_SPAN 256u
#define PAGE_MAX_LEVELS ((size_t)1 << 28)
/* Room for a PLAIN page's levels before its values (col.phead): enough for the run of a
 * page without nulls; a page whose levels needed more raises it to their size plus the
 * slack, up to the cap (past it the levels and values are copied together as before). */
#define PPLAIN_HEAD0 64u
#define PPLAIN_HEAD_SLACK 256u
#define PPLAIN_HEAD_MAX ((size_t)256 << 10)

/* How min/max compare for a column (ColumnOrder TYPE_DEFINED_ORDER per LogicalTypes.md). */
enum col_order {
    ORDER_BOOL,
    ORDER_INT32,
    ORDER_INT64,
    ORDER_FLOAT,
    ORDER_DOUBLE,
    ORDER_BYTES,        /* unsigned byte-wise (strings, binary, uuid, fixed) */
    ORDER_SIGNED_FIXED, /* decimal in FLBA: big-endian two's complement */
};

enum col_mode { MODE_DICT, MODE_FALLBACK };
enum fallback_enc { FB_UNDECIDED, FB_PLAIN, FB_DELTA };

/* min/max of a set of values, PLAIN bytes without length prefix; inexact when they came
 * from truncated statistics of a copied chunk (bounds, not values). */
typedef struct vstat {
    bool has;
    floe_buf min, max;
    bool min_inexact, max_inexact;
} vstat;

typedef struct page_entry {
    int64_t offset;        /* within the chunk's data-page buffer */
    int32_t size;          /* header + compressed body */
    int64_t first_row;     /* within the row group */
    int64_t nulls, nans;
    bool null_page;
    bool all_nan;          /* values present but all NaN: no ColumnIndex for the chunk */
    size_t min_off, min_len, max_off, max_len; /* into col.pi_bounds */
} page_entry;

struct kslot {
    uint64_t key;
    uint32_t idx1;            /* entry index + 1, 0 = empty */
    uint32_t pad;
};

typedef struct col {
    const floe_field *leaf;
    floe_phys phys;
    int32_t width;            /* bytes per value (BOOLEAN 1), 0 for BYTE_ARRAY */
    int16_t max_def, max_rep;
    int order;
    bool utf8;                /* truncate bounds at character boundaries */
    bool truncatable;         /* BYTE_ARRAY bounds may be truncated */
    bool is_float;
    bool signed_stats;        /* deprecated min/max agree with the column order */
    const char **path;        /* path_in_schema (writer arena) */
    size_t npath;

    /* --- page being built --- */
    int16_t *pdef, *prep;
    size_t plevels, plevels_cap;
    size_t pvalues, prows;
    int64_t pnulls, pnans;
    uint32_t *pidx;           /* dictionary indices (MODE_DICT) */
    size_t pidx_cap;
    floe_buf pplain;          /* PLAIN values (MODE_FALLBACK; booleans one byte each),
                                 from pplain.data + phead on (pplain.len 0 = none yet) */
    size_t phead;             /* bytes kept free before the values: cut_page puts the
                                 page's levels there and compresses the page in place
                                 instead of copying the values after the levels; grows
                                 (between pages) when a page's levels did not fit */
    size_t pplain_est;        /* bytes the page's values would take in PLAIN */
    vstat pstat;

    /* --- dictionary of the chunk --- */
    int mode;
    int fallback;             /* enum fallback_enc */
    bool dict_checked;        /* first-page benefit check done */
    uint64_t *slots;          /* open addressing: entry hash << 32 | entry index + 1, 0 =
                                 empty (the hash in the slot settles most misses without
                                 touching the entry) */
    size_t nslots;            /* power of two */
    struct kslot *kslots;     /* 4- and 8-byte values: key stored in the slot (one cache
                                 miss per lookup instead of three); nslots entries */
    bool small_keys;
    uint32_t *dhash;          /* per entry */
    uint32_t *doff;           /* per entry: offset of its PLAIN bytes in dplain */
    size_t ndict, dict_cap;
    floe_buf dplain;          /* PLAIN encoded dictionary (the dictionary page body) */
    /* Page min/max of byte-array and fixed-length columns in dictionary mode, kept as
     * entries: an entry is compared only the first time a page uses it (dstamp[e] ==
     * page_gen), not once per value. dict_stat_flush moves them into pstat. */
    bool track_entries;
    uint32_t *dstamp;         /* per entry */
    uint32_t page_gen;
    uint32_t pmin1, pmax1;    /* entry index + 1, 0 = none yet */
    int64_t dict_data_pages;  /* data pages encoded with the dictionary */
    int64_t carried_pages;    /* stored pages placed as they are (whole file) */

    /* --- chunk being built --- */
    floe_buf chunk;           /* data pages: headers + bodies */
    floe_buf fdict;           /* at flush: the dictionary page, header included
                                 (flush_prepare) */
    int64_t fdict_unc;        /* its uncompressed size, header included */
    int64_t chunk_rows;
    int64_t chunk_values;     /* slots */
    int64_t chunk_nulls, chunk_nans;
    int64_t chunk_uncompressed; /* incl. headers */
    vstat cstat;
    int64_t plain_pages, delta_pages;
    page_entry *pages;
    size_t npages, pages_cap;
    floe_buf pi_bounds;

    /* --- whole file, for floe_pq_file_info --- */
    vstat fstat;
    int64_t f_values, f_nulls, f_nans, f_size;
} col;

typedef struct chunk_index_ref {
    int64_t ci_off, oi_off;   /* within ci_all / oi_all; ci_off < 0: no ColumnIndex */
    int32_t ci_len, oi_len;
} chunk_index_ref;

/* Per-thread scratch: page bodies, compression output, headers, codec state. Columns are
 * encoded independently, each with the scratch of the thread that encodes it. */
typedef struct enc_scratch {
    floe_buf body, comp, hdr, tmp;
    floe_codec_ctx *cctx;
} enc_scratch;

struct floe_pq_writer {
    const floe_schema *schema;
    floe_pq_write_options opts;
    floe_output *out;
    int64_t pos;              /* bytes written to out */
    int failed;               /* sticky error code */

    col *cols;
    size_t ncols;
    int64_t rg_rows;          /* rows buffered in the current row group */
    int64_t total_rows;

    floe_arena arena;         /* schema elements, paths, footer metadata */
    floe_pq_schema_element *elems;
    size_t nelems;
    floe_pq_key_value *kv;
    size_t nkv;
    char *created_by;

    floe_pq_row_group *rgs;
    size_t nrgs, rgs_cap;
    chunk_index_ref *refs;    /* nrgs * ncols */
    floe_buf ci_all, oi_all;

    /* scratch reused for every page: one per encoding thread (scr[0] for serial work) */
    enc_scratch *scr;
    int nscr;

    struct write_behind *wb;  /* opts.write_behind: the writer thread, once started */
};

/* =====================================================================================
 * Write-behind: a thread writing handed-over buffers to the output, in order
 * =================================================================================== */

/* Bytes handed over and not yet written, at most (one larger buffer alone may exceed
 * it): without a bound a device slower than the encoding would let whole row groups
 * queue up, and peak memory would depend on the disk. */
#define WB_MAX_BYTES ((size_t)32 << 20)

typedef struct wb_item {
    uint8_t *data; /* owned: freed once written (or dropped) */
    size_t len;
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
} write_behind;

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
        floe_free(it.data);
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
static int wb_drain(floe_pq_writer *w, floe_error *err) {
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
static void wb_stop(floe_pq_writer *w) {
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

/* Start the thread. 1 when it cannot be started (write synchronously instead). */
static int wb_start(floe_pq_writer *w) {
    write_behind *wb = floe_calloc(1, sizeof *wb);
    if (!wb)
        return FLOE_ENOMEM;
    wb->out = w->out;
    wb->cap = 16;
    wb->q = floe_malloc(wb->cap * sizeof *wb->q);
    if (!wb->q) {
        floe_free(wb);
        return FLOE_ENOMEM;
    }
    pthread_mutex_init(&wb->mu, NULL);
    pthread_cond_init(&wb->cv, NULL);
    if (pthread_create(&wb->tid, NULL, wb_main, wb) != 0) {
        pthread_mutex_destroy(&wb->mu);
        pthread_cond_destroy(&wb->cv);
        floe_free(wb->q);
        floe_free(wb);
        return 1;
    }
    w->wb = wb;
    return 0;
}


/* =====================================================================================
 * Options
 * =================================================================================== */

void floe_pq_write_options_init(floe_pq_write_options *o) {
    memset(o, 0, sizeof *o);
    o->codec = FLOE_CODEC_SNAPPY;
    o->page_size = (size_t)1 << 20;
    o->page_row_limit = 20000;
    o->row_group_size = (size_t)128 << 20;
    o->dict_page_size_limit = (size_t)1 << 20;
    o->dictionary = true;
    o->delta_ints = true;
    o->write_page_index = true;
    o->page_checksum = true;
    o->stats_truncate_length = 64;
    o->output.fsync = true;
}

/* =====================================================================================
 * Bound truncation
 * =================================================================================== */

static size_t utf8_cut(const uint8_t *p, size_t n, size_t len) {
    if (n <= len)
        return n;
    size_t k = len;
    while (k > 0 && (p[k] & 0xC0) == 0x80) /* p[k] is the first byte not kept */
        k--;
    return k;
}

int floe_pq_truncate_lower(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated) {
    size_t k = n <= len ? n : (utf8 ? utf8_cut(p, n, len) : len);
    *truncated = k < n;
    return floe_buf_append(out, p, k);
}

/* Decode the code point that starts at p[i] (well-formed input assumed; malformed bytes
 * count as one-byte characters). Returns its length. */
static size_t utf8_decode(const uint8_t *p, size_t n, size_t i, uint32_t *cp) {
    uint8_t b = p[i];
    size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
                 : (b & 0xF8) == 0xF0 ? 4 : 1;
    if (i + len > n)
        len = 1;
    if (len == 1) {
        *cp = b;
        return 1;
    }
    uint32_t c = b & (0x7F >> len);
    for (size_t k = 1; k < len; k++)
        c = (c << 6) | (p[i + k] & 0x3F);
    *cp = c;
    return len;
}

static size_t utf8_encode(uint32_t cp, uint8_t *o) {
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

int floe_pq_truncate_upper(const uint8_t *p, size_t n, size_t len, bool utf8, floe_buf *out,
                           bool *truncated) {
    if (n <= len) {
        *truncated = false;
        return floe_buf_append(out, p, n);
    }
    if (!utf8) {
        size_t k = len;
        while (k > 0 && p[k - 1] == 0xFF)
            k--;
        if (k == 0)
            return FLOE_ENOTFOUND;
        int rc = floe_buf_append(out, p, k);
        if (rc < 0)
            return rc;
        out->data[out->len - 1]++;
        *truncated = true;
        return 0;
    }
    /* UTF-8: split the kept prefix into characters, increment the last one that can be
     * incremented (skipping the surrogate block), drop the ones after it. */
    size_t k = utf8_cut(p, n, len);
    size_t starts[64 + 1];
    size_t nchars = 0, i = 0;
    /* Only the last few characters can matter; walk the prefix keeping a bounded ring. */
    size_t ring = sizeof starts / sizeof starts[0];
    while (i < k) {
        uint32_t cp;
        starts[nchars % ring] = i;
        nchars++;
        i += utf8_decode(p, k, i, &cp);
    }
    for (size_t back = 0; back < nchars && back < ring; back++) {
        size_t ci = nchars - 1 - back;
        size_t at = starts[ci % ring];
        uint32_t cp;
        size_t clen = utf8_decode(p, k, at, &cp);
        (void)clen;
        uint32_t next = cp + 1;
        if (next >= 0xD800 && next <= 0xDFFF)
            next = 0xE000;
        if (next > 0x10FFFF)
            continue;
        uint8_t enc[4];
        size_t elen = utf8_encode(next, enc);
        int rc = floe_buf_append(out, p, at);
        if (rc == 0)
            rc = floe_buf_append(out, enc, elen);
        if (rc < 0)
            return rc;
        *truncated = true;
        return 0;
    }
    return FLOE_ENOTFOUND;
}

/* =====================================================================================
 * Comparisons and statistics
 * =================================================================================== */

static inline uint64_t load_be64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* The first m (< 8) bytes of p as an integer that orders as the bytes do among strings
 * of the same m: overlapping loads never read outside [p, p + m), and the bytes they
 * share were already found equal by the time they decide (first word, then last). */
static inline uint64_t short_key(const uint8_t *p, size_t m) {
    if (m >= 4) {
        uint32_t hi, lo;
        memcpy(&hi, p, 4);
        memcpy(&lo, p + m - 4, 4);
        return (uint64_t)__builtin_bswap32(hi) << 32 | __builtin_bswap32(lo);
    }
    if (m == 0)
        return 0;
    return (uint64_t)p[0] << 16 | (uint64_t)p[m / 2] << 8 | p[m - 1];
}

static inline int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    size_t m = an < bn ? an : bn;
    if (m >= 8) { /* most pairs differ in their first 8 bytes: settle them without a call */
        uint64_t x = load_be64(a), y = load_be64(b);
        if (x != y)
            return x < y ? -1 : 1;
        int c = memcmp(a, b, m);
        if (c)
            return c;
    } else {
        uint64_t x = short_key(a, m), y = short_key(b, m);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return an < bn ? -1 : an > bn;
}

/* a[0..n) == b[0..n) without a library call for n <= 16 (dictionary hits on short
 * strings): overlapping loads inside both ranges. */
static inline bool eq_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n >= 8) {
        if (n > 16)
            return memcmp(a, b, n) == 0;
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&b0, b, 8);
        memcpy(&a1, a + n - 8, 8);
        memcpy(&b1, b + n - 8, 8);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    if (n >= 4) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4);
        memcpy(&b0, b, 4);
        memcpy(&a1, a + n - 4, 4);
        memcpy(&b1, b + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* Compare two PLAIN values of column c (never NaN). */
static int cmp_plain(const col *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    switch (c->order) {
    case ORDER_BOOL:
        return (a[0] > b[0]) - (a[0] < b[0]);
    case ORDER_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case ORDER_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case ORDER_FLOAT: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case ORDER_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case ORDER_SIGNED_FIXED:
        if (an && bn && ((a[0] ^ b[0]) & 0x80))
            return (a[0] & 0x80) ? -1 : 1; /* different signs */
        return cmp_bytes(a, an, b, bn);
    default:
        return cmp_bytes(a, an, b, bn);
    }
}

/* Merge [minp,maxp] into s (min_inexact / max_inexact: they are bounds, not values). */
static int vstat_merge_bounds(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                              bool min_inexact, const uint8_t *maxp, size_t maxn,
                              bool max_inexact) {
    int rc;
    if (!s->has || cmp_plain(c, minp, minn, s->min.data, s->min.len) < 0) {
        floe_buf_reset(&s->min);
        if ((rc = floe_buf_append(&s->min, minp, minn)) < 0)
            return rc;
        s->min_inexact = min_inexact;
    }
    if (!s->has || cmp_plain(c, maxp, maxn, s->max.data, s->max.len) > 0) {
        floe_buf_reset(&s->max);
        if ((rc = floe_buf_append(&s->max, maxp, maxn)) < 0)
            return rc;
        s->max_inexact = max_inexact;
    }
    s->has = true;
    return 0;
}

/* Merge the values [minp,maxp] into s. */
static int vstat_merge(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                       const uint8_t *maxp, size_t maxn) {
    return vstat_merge_bounds(c, s, minp, minn, false, maxp, maxn, false);
}

static int vstat_merge_stat(const col *c, vstat *dst, const vstat *src) {
    if (!src->has)
        return 0;
    return vstat_merge_bounds(c, dst, src->min.data, src->min.len, src->min_inexact,
                              src->max.data, src->max.len, src->max_inexact);
}

static void vstat_reset(vstat *s) {
    s->has = false;
    s->min_inexact = s->max_inexact = false;
    floe_buf_reset(&s->min);
    floe_buf_reset(&s->max);
}

static void vstat_free(vstat *s) {
    floe_buf_free(&s->min);
    floe_buf_free(&s->max);
}

/* Float bounds: -0.0 for a zero minimum, +0.0 for a zero maximum (parquet.thrift
 * ColumnOrder rules), so readers that see +0 as min or -0 as max cannot skip wrongly. */
static void fix_zero(const col *c, uint8_t *v, bool is_min) {
    if (c->order == ORDER_FLOAT) {
        float f;
        memcpy(&f, v, 4);
        if (f == 0.0f) {
            f = is_min ? -0.0f : 0.0f;
            memcpy(v, &f, 4);
        }
    } else if (c->order == ORDER_DOUBLE) {
        double d;
        memcpy(&d, v, 8);
        if (d == 0.0) {
            d = is_min ? -0.0 : 0.0;
            memcpy(v, &d, 8);
        }
    }
}

/* Bounds of a stat as written (zero-fixed, truncated). Appends to out: min then max;
 * offsets returned. */
typedef struct bounds {
    size_t min_off, min_len, max_off, max_len;
    bool min_exact, max_exact;
} bounds;

static int make_bounds(const col *c, const vstat *s, size_t trunc, floe_buf *out, bounds *b) {
    int rc;
    bool t = false;
    b->min_off = out->len;
    if (c->truncatable && trunc > 0) {
        if ((rc = floe_pq_truncate_lower(s->min.data, s->min.len, trunc, c->utf8, out, &t)) < 0)
            return rc;
    } else if ((rc = floe_buf_append(out, s->min.data, s->min.len)) < 0) {
        return rc;
    }
    b->min_len = out->len - b->min_off;
    b->min_exact = !t;
    if (c->is_float && b->min_len)
        fix_zero(c, out->data + b->min_off, true);
    b->max_off = out->len;
    t = false;
    rc = FLOE_ENOTFOUND;
    if (c->truncatable && trunc > 0)
        rc = floe_pq_truncate_upper(s->max.data, s->max.len, trunc, c->utf8, out, &t);
    if (rc == FLOE_ENOTFOUND) {
        t = false;
        rc = floe_buf_append(out, s->max.data, s->max.len);
    }
    if (rc < 0)
        return rc;
    b->max_len = out->len - b->max_off;
    b->max_exact = !t;
    if (c->is_float && b->max_len)
        fix_zero(c, out->data + b->max_off, false);
    return 0;
}

/* =====================================================================================
 * Dictionary (open addressing, linear probing, load <= 1/2)
 * =================================================================================== */

static inline uint32_t hash64(uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ULL;
    v ^= v >> 33;
    return (uint32_t)v;
}

/* The tail (< 8 bytes) is read with at most two overlapping fixed-size loads: a memcpy of
 * a variable length would be a library call plus a store-forwarding stall per value. */
static inline uint32_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    size_t len = n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v;
        if (len >= 8) { /* the last 8 bytes, overlapping the previous word */
            memcpy(&v, p + n - 8, 8);
        } else if (n >= 4) {
            uint32_t lo, hi;
            memcpy(&lo, p, 4);
            memcpy(&hi, p + n - 4, 4);
            v = (uint64_t)hi << 32 | lo;
        } else {
            v = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
        }
        h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
    }
    /* one multiply to finish (the words were multiplied in already): fold the high bits
     * down before and after it, since the table index takes the low bits. The hash
     * decides slots only; dictionary order is first occurrence, so output bytes do not
     * depend on it. */
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h ^ (h >> 32));
}

#define DICT_PREFETCH 8 /* values looked up ahead: hides the miss on the slot */

static inline uint64_t small_key(const col *c, const uint8_t *v) {
    return c->width == 4 ? floe_load_le32(v) : floe_load_le64(v);
}

/* The new table is zeroed with memset, not calloc: calloc'd large blocks are fresh pages
 * that the probes below first read (mapping the shared zero page) and then write, and
 * each such copy-on-write flushes the TLB of every thread of the process (an IPI per
 * page; 3% of a 2-thread convert). Writing first maps each page once. */
static int dict_grow_table(col *c) {
    size_t ns = c->nslots ? c->nslots * 2 : 1024;
    if (c->small_keys) {
        struct kslot *ks = floe_malloc(ns * sizeof *ks);
        if (!ks)
            return FLOE_ENOMEM;
        memset(ks, 0, ns * sizeof *ks);
        size_t mask = ns - 1;
        for (size_t e = 0; e < c->ndict; e++) {
            uint64_t key = small_key(c, c->dplain.data + c->doff[e]);
            size_t i = hash64(key) & mask;
            while (ks[i].idx1)
                i = (i + 1) & mask;
            ks[i].key = key;
            ks[i].idx1 = (uint32_t)(e + 1);
        }
        floe_free(c->kslots);
        c->kslots = ks;
        c->nslots = ns;
        return 0;
    }
    uint64_t *slots = floe_malloc(ns * sizeof *slots);
    if (!slots)
        return FLOE_ENOMEM;
    memset(slots, 0, ns * sizeof *slots);
    size_t mask = ns - 1;
    for (size_t e = 0; e < c->ndict; e++) {
        size_t i = c->dhash[e] & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint64_t)c->dhash[e] << 32 | (uint32_t)(e + 1);
    }
    floe_free(c->slots);
    c->slots = slots;
    c->nslots = ns;
    return 0;
}

static int dict_reserve_entry(col *c) {
    if (c->ndict >= UINT32_MAX - 1)
        return FLOE_ELIMIT;
    if (c->ndict == c->dict_cap) {
        size_t nc = c->dict_cap ? c->dict_cap * 2 : 256;
        uint32_t *h = floe_realloc(c->dhash, nc * sizeof *h);
        if (!h)
            return FLOE_ENOMEM;
        c->dhash = h;
        uint32_t *o = floe_realloc(c->doff, nc * sizeof *o);
        if (!o)
            return FLOE_ENOMEM;
        c->doff = o;
        if (c->track_entries) {
            uint32_t *st = floe_realloc(c->dstamp, nc * sizeof *st);
            if (!st)
                return FLOE_ENOMEM;
            c->dstamp = st;
        }
        c->dict_cap = nc;
    }
    if (c->track_entries)
        c->dstamp[c->ndict] = 0; /* the entry about to be added: no page uses it yet */
    if ((c->ndict + 1) * 2 > c->nslots)
        return dict_grow_table(c);
    return 0;
}

/* Index of the fixed-width value v (width bytes), inserting it if new. */
static inline int dict_fixed(col *c, const uint8_t *v, size_t width, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            break;
        uint32_t e = (uint32_t)s - 1;
        if ((uint32_t)(s >> 32) == h && eq_bytes(c->dplain.data + c->doff[e], v, width)) {
            *idx = e;
            return 0;
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) { /* table grew: find the empty slot again */
        mask = c->nslots - 1;
        i = h & mask;
        while (c->slots[i])
            i = (i + 1) & mask;
    }
    if (c->dplain.len > UINT32_MAX - width)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = h;
    c->doff[e] = (uint32_t)c->dplain.len;
    if ((rc = floe_buf_append(&c->dplain, v, width)) < 0)
        return rc;
    c->slots[i] = (uint64_t)h << 32 | (e + 1);
    *idx = e;
    return 0;
}

/* Index of a 4- or 8-byte value (key = its bits), inserting it if new. */
static inline int dict_small(col *c, const uint8_t *v, uint64_t key, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        const struct kslot *k = &c->kslots[i];
        if (!k->idx1)
            break;
        if (k->key == key) {
            *idx = k->idx1 - 1;
            return 0;
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) {
        mask = c->nslots - 1;
        i = h & mask;
        while (c->kslots[i].idx1)
            i = (i + 1) & mask;
    }
    size_t width = (size_t)c->width;
    if (c->dplain.len > UINT32_MAX - width)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = 0;
    c->doff[e] = (uint32_t)c->dplain.len;
    if ((rc = floe_buf_append(&c->dplain, v, width)) < 0)
        return rc;
    c->kslots[i].key = key;
    c->kslots[i].idx1 = e + 1;
    *idx = e;
    return 0;
}

static inline int dict_bytes(col *c, const uint8_t *v, size_t n, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            break;
        uint32_t e = (uint32_t)s - 1;
        if ((uint32_t)(s >> 32) == h) {
            const uint8_t *d = c->dplain.data + c->doff[e];
            if (floe_load_le32(d) == n && eq_bytes(d + 4, v, n)) {
                *idx = e;
                return 0;
            }
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) {
        mask = c->nslots - 1;
        i = h & mask;
        while (c->slots[i])
            i = (i + 1) & mask;
    }
    if (c->dplain.len > UINT32_MAX - 4 - n)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = h;
    c->doff[e] = (uint32_t)c->dplain.len;
    uint8_t lenb[4];
    floe_store_le32(lenb, (uint32_t)n);
    if ((rc = floe_buf_append(&c->dplain, lenb, 4)) < 0 ||
        (n && (rc = floe_buf_append(&c->dplain, v, n)) < 0))
        return rc;
    c->slots[i] = (uint64_t)h << 32 | (e + 1);
    *idx = e;
    return 0;
}

/* The PLAIN bytes of dictionary entry e (without the length prefix of byte arrays). */
static inline const uint8_t *dict_entry(const col *c, uint32_t e, size_t *n) {
    const uint8_t *d = c->dplain.data + c->doff[e];
    if (c->phys == FLOE_PHYS_BYTE_ARRAY) {
        *n = floe_load_le32(d);
        return d + 4;
    }
    *n = (size_t)c->width;
    return d;
}

/* Page min/max over the entries idx[0..nv) refer to (track_entries columns). */
static void dict_track(col *c, const uint32_t *idx, size_t nv) {
    const uint32_t gen = c->page_gen;
    uint32_t *st = c->dstamp;
    for (size_t i = 0; i < nv; i++) {
        uint32_t e = idx[i];
        if (st[e] == gen)
            continue;
        st[e] = gen;
        if (!c->pmin1) {
            c->pmin1 = c->pmax1 = e + 1;
            continue;
        }
        size_t n, mn, mx;
        const uint8_t *v = dict_entry(c, e, &n);
        const uint8_t *lo = dict_entry(c, c->pmin1 - 1, &mn);
        const uint8_t *hi = dict_entry(c, c->pmax1 - 1, &mx);
        if (cmp_plain(c, v, n, lo, mn) < 0)
            c->pmin1 = e + 1;
        if (cmp_plain(c, v, n, hi, mx) > 0)
            c->pmax1 = e + 1;
    }
}

/* Merge the tracked entries into pstat and start tracking afresh (page cut, or the
 * dictionary about to be dropped). */
static int dict_stat_flush(col *c) {
    if (++c->page_gen == 0) { /* wrapped: no stamp may look current */
        if (c->dstamp)
            memset(c->dstamp, 0, c->dict_cap * sizeof *c->dstamp);
        c->page_gen = 1;
    }
    if (!c->pmin1)
        return 0;
    size_t mn, mx;
    const uint8_t *lo = dict_entry(c, c->pmin1 - 1, &mn);
    const uint8_t *hi = dict_entry(c, c->pmax1 - 1, &mx);
    c->pmin1 = c->pmax1 = 0;
    return vstat_merge(c, &c->pstat, lo, mn, hi, mx);
}

/* The column leaves dictionary mode for the rest of the chunk: its lookup tables are not
 * read again before the next chunk, which grows them afresh (dict_reserve_entry). Kept,
 * they would stay resident through the row group's flush, the writer's peak: up to 8 MiB
 * per column of 8-byte values (a 1 MiB dictionary's slots at load 1/2, 16 bytes each).
 * The entries (dplain, ndict) stay: the dictionary page is built from them. */
static void dict_drop_tables(col *c) {
    floe_free(c->slots);
    floe_free(c->kslots);
    floe_free(c->dhash);
    floe_free(c->doff);
    floe_free(c->dstamp);
    c->slots = NULL;
    c->kslots = NULL;
    c->dhash = c->doff = c->dstamp = NULL;
    c->nslots = 0;
    c->dict_cap = 0;
}

static void dict_clear(col *c) {
    if (c->slots)
        memset(c->slots, 0, c->nslots * sizeof *c->slots);
    if (c->kslots)
        memset(c->kslots, 0, c->nslots * sizeof *c->kslots);
    c->ndict = 0;
    floe_buf_reset(&c->dplain);
    c->dict_data_pages = 0;
}

/* =====================================================================================
 * Appending values to the page being built
 * =================================================================================== */

static int grow_arr(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) {
        if (nc > SIZE_MAX / 4 / elem)
            return FLOE_ENOMEM;
        nc *= 2;
    }
    void *np = floe_realloc(*p, nc * elem);
    if (!np)
        return FLOE_ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

/* Start the page's PLAIN values after phead free bytes (on the first value). */
static int pplain_start(col *c) {
    if (c->pplain.len)
        return 0;
    int rc = floe_buf_reserve(&c->pplain, c->phead);
    if (rc < 0)
        return rc;
    c->pplain.len = c->phead;
    return 0;
}

static inline uint8_t *pplain_vals(const col *c) {
    return c->pplain.len ? c->pplain.data + c->phead : c->pplain.data;
}

static inline size_t pplain_vlen(const col *c) {
    return c->pplain.len ? c->pplain.len - c->phead : 0;
}

/* Statistics of a span of fixed-width values; NaNs counted and skipped. Sets *mi and *ma to
 * the indexes of the extreme values (SIZE_MAX if none). */
static void span_minmax_fixed(const col *c, const uint8_t *v, size_t nv, size_t *mi,
                              size_t *ma, int64_t *nans) {
    size_t a = SIZE_MAX, b = SIZE_MAX;
    switch (c->order) {
    case ORDER_BOOL: {
        for (size_t i = 0; i < nv; i++) {
            if (a == SIZE_MAX || v[i] < v[a])
                a = i;
            if (b == SIZE_MAX || v[i] > v[b])
                b = i;
        }
        break;
    }
    case ORDER_INT32: {
        int32_t lo = 0, hi = 0;
        for (size_t i = 0; i < nv; i++) {
            int32_t x;
            memcpy(&x, v + i * 4, 4);
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        break;
    }
    case ORDER_INT64: {
        int64_t lo = 0, hi = 0;
        for (size_t i = 0; i < nv; i++) {
            int64_t x;
            memcpy(&x, v + i * 8, 8);
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        break;
    }
    case ORDER_FLOAT: {
        float lo = 0, hi = 0;
        int64_t nn = 0;
        for (size_t i = 0; i < nv; i++) {
            float x;
            memcpy(&x, v + i * 4, 4);
            if (isnan(x)) { nn++; continue; }
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        *nans += nn;
        break;
    }
    case ORDER_DOUBLE: {
        double lo = 0, hi = 0;
        int64_t nn = 0;
        for (size_t i = 0; i < nv; i++) {
            double x;
            memcpy(&x, v + i * 8, 8);
            if (isnan(x)) { nn++; continue; }
            if (a == SIZE_MAX || x < lo) { lo = x; a = i; }
            if (b == SIZE_MAX || x > hi) { hi = x; b = i; }
        }
        *nans += nn;
        break;
    }
    default: {
        size_t w = (size_t)c->width;
        for (size_t i = 0; i < nv; i++) {
            const uint8_t *x = v + i * w;
            if (a == SIZE_MAX || cmp_plain(c, x, w, v + a * w, w) < 0)
                a = i;
            if (b == SIZE_MAX || cmp_plain(c, x, w, v + b * w, w) > 0)
                b = i;
        }
        break;
    }
    }
    *mi = a;
    *ma = b;
}

/* min/max of nv numbers by value (no index): fixed blocks of 16 that gcc -O2 turns into
 * vector min/max, where the index-tracking loop above costs a branch per value. NaNs are
 * counted and left out (x < lo and x > hi are false for them). Returns false when no value
 * counts. The zero sign of a float bound may differ from the first zero's: make_bounds
 * writes every zero bound as -0.0 (min) or +0.0 (max) anyway. */
#define DEF_MINMAX_NUM(name, T, LO0, HI0, NANCHK)                                          \
    static bool name(const uint8_t *v, size_t nv, T *plo, T *phi, int64_t *nans) {       \
        T lo = LO0, hi = HI0;                                                             \
        size_t i = 0, nn = 0;                                                             \
        for (; i + 16 <= nv; i += 16) {                                                   \
            T x[16];                                                                      \
            memcpy(x, v + i * sizeof(T), sizeof x);                                       \
            T l = lo, h = hi;                                                             \
            for (size_t k = 0; k < 16; k++) {                                             \
                l = x[k] < l ? x[k] : l;                                                  \
                h = x[k] > h ? x[k] : h;                                                  \
                if (NANCHK)                                                               \
                    nn += x[k] != x[k];                                                   \
            }                                                                             \
            lo = l;                                                                       \
            hi = h;                                                                       \
        }                                                                                 \
        for (; i < nv; i++) {                                                             \
            T x;                                                                          \
            memcpy(&x, v + i * sizeof(T), sizeof x);                                      \
            lo = x < lo ? x : lo;                                                         \
            hi = x > hi ? x : hi;                                                         \
            if (NANCHK)                                                                   \
                nn += x != x;                                                             \
        }                                                                                 \
        *nans += (int64_t)nn;                                                             \
        *plo = lo;                                                                        \
        *phi = hi;                                                                        \
        return nv > nn;                                                                   \
    }
DEF_MINMAX_NUM(minmax_i32, int32_t, INT32_MAX, INT32_MIN, 0)
DEF_MINMAX_NUM(minmax_i64, int64_t, INT64_MAX, INT64_MIN, 0)
DEF_MINMAX_NUM(minmax_f32, float, INFINITY, -INFINITY, 1)
DEF_MINMAX_NUM(minmax_f64, double, (double)INFINITY, -(double)INFINITY, 1)
#undef DEF_MINMAX_NUM

/* Statistics of a span of fixed-width values into pstat (NaNs counted into pnans). */
static int span_stats_fixed(col *c, const uint8_t *v, size_t nv) {
    uint8_t lo[8], hi[8];
    bool has;
    size_t w = (size_t)c->width;
    switch (c->order) {
    case ORDER_INT32: {
        int32_t a, b;
        has = minmax_i32(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 4);
        memcpy(hi, &b, 4);
        break;
    }
    case ORDER_INT64: {
        int64_t a, b;
        has = minmax_i64(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 8);
        memcpy(hi, &b, 8);
        break;
    }
    case ORDER_FLOAT: {
        float a, b;
        has = minmax_f32(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 4);
        memcpy(hi, &b, 4);
        break;
    }
    case ORDER_DOUBLE: {
        double a, b;
        has = minmax_f64(v, nv, &a, &b, &c->pnans);
        memcpy(lo, &a, 8);
        memcpy(hi, &b, 8);
        break;
    }
    default: {
        size_t mi, ma;
        span_minmax_fixed(c, v, nv, &mi, &ma, &c->pnans);
        if (mi == SIZE_MAX)
            return 0;
        return vstat_merge(c, &c->pstat, v + mi * w, w, v + ma * w, w);
    }
    }
    if (!has)
        return 0;
    return vstat_merge(c, &c->pstat, lo, w, hi, w);
}

static int add_fixed(col *c, const uint8_t *v, size_t nv) {
    size_t w = (size_t)c->width;
    int rc;
    bool track = c->mode == MODE_DICT && c->track_entries;
    if (!track && (rc = span_stats_fixed(c, v, nv)) < 0)
        return rc;
    c->pplain_est += nv * w;
    if (c->mode == MODE_DICT) {
        if ((rc = grow_arr((void **)&c->pidx, &c->pidx_cap, c->pvalues + nv, sizeof *c->pidx)) < 0)
            return rc;
        uint32_t *out = c->pidx + c->pvalues;
        if (c->nslots == 0 && (rc = dict_grow_table(c)) < 0)
            return rc;
        if (w == 4 || w == 8) {
            /* hash a few values ahead and prefetch their slots: large dictionaries (ids,
             * prices) miss the cache on nearly every lookup otherwise */
            uint32_t hs[DICT_PREFETCH];
            for (size_t k = 0; k < DICT_PREFETCH && k < nv; k++) {
                hs[k] = hash64(small_key(c, v + k * w));
                __builtin_prefetch(&c->kslots[hs[k] & (c->nslots - 1)]);
            }
            for (size_t i = 0; i < nv; i++) {
                if ((rc = dict_small(c, v + i * w, small_key(c, v + i * w),
                                     hs[i % DICT_PREFETCH], &out[i])) < 0)
                    return rc;
                size_t ahead = i + DICT_PREFETCH;
                if (ahead < nv) {
                    uint32_t h = hash64(small_key(c, v + ahead * w));
                    hs[ahead % DICT_PREFETCH] = h;
                    __builtin_prefetch(&c->kslots[h & (c->nslots - 1)]);
                }
            }
        } else {
            for (size_t i = 0; i < nv; i++)
                if ((rc = dict_fixed(c, v + i * w, w, hash_bytes(v + i * w, w), &out[i])) < 0)
                    return rc;
        }
        if (track)
            dict_track(c, out, nv);
    } else if ((rc = pplain_start(c)) < 0 || (rc = floe_buf_append(&c->pplain, v, nv * w)) < 0) {
        return rc;
    }
    c->pvalues += nv;
    return 0;
}

/* min/max of a span of byte arrays into pstat. */
static int span_minmax_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv) {
    size_t a = 0, b = 0;
    for (size_t i = 1; i < nv; i++) {
        const uint8_t *x = data + off[i];
        size_t xn = off[i + 1] - off[i];
        if (cmp_bytes(x, xn, data + off[a], off[a + 1] - off[a]) < 0)
            a = i;
        if (cmp_bytes(x, xn, data + off[b], off[b + 1] - off[b]) > 0)
            b = i;
    }
    if (!nv)
        return 0;
    return vstat_merge(c, &c->pstat, data + off[a], off[a + 1] - off[a], data + off[b],
                       off[b + 1] - off[b]);
}

static int add_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv) {
    int rc;
    if ((c->mode != MODE_DICT || !c->track_entries) &&
        (rc = span_minmax_bytes(c, data, off, nv)) < 0)
        return rc;
    c->pplain_est += (size_t)(off[nv] - off[0]) + 4 * nv;
    if (c->mode == MODE_DICT) {
        if ((rc = grow_arr((void **)&c->pidx, &c->pidx_cap, c->pvalues + nv, sizeof *c->pidx)) < 0)
            return rc;
        if (c->nslots == 0 && (rc = dict_grow_table(c)) < 0)
            return rc;
        uint32_t *out = c->pidx + c->pvalues;
        uint32_t hs[DICT_PREFETCH];
        for (size_t k = 0; k < DICT_PREFETCH && k < nv; k++) {
            hs[k] = hash_bytes(data + off[k], off[k + 1] - off[k]);
            __builtin_prefetch(&c->slots[hs[k] & (c->nslots - 1)]);
        }
        for (size_t i = 0; i < nv; i++) {
            const uint8_t *x = data + off[i];
            size_t xn = off[i + 1] - off[i];
            if ((rc = dict_bytes(c, x, xn, hs[i % DICT_PREFETCH], &out[i])) < 0)
                return rc;
            size_t ahead = i + DICT_PREFETCH;
            if (ahead < nv) {
                uint32_t h = hash_bytes(data + off[ahead], off[ahead + 1] - off[ahead]);
                hs[ahead % DICT_PREFETCH] = h;
                __builtin_prefetch(&c->slots[h & (c->nslots - 1)]);
            }
        }
        if (c->track_entries)
            dict_track(c, out, nv);
    } else {
        size_t total = (size_t)(off[nv] - off[0]) + 4 * nv;
        /* values up to 32 bytes (ids, codes) move as one or two fixed 16-byte copies
         * instead of a memcpy call each, when the source has that many bytes left and
         * the buffer has room past the value (what lands past a value is overwritten by
         * the next one) */
        if ((rc = pplain_start(c)) < 0 || (rc = floe_buf_reserve(&c->pplain, total)) < 0)
            return rc;
        uint8_t *o = c->pplain.data + c->pplain.len;
        const uint8_t *end = data + off[nv];
        const uint8_t *oend = c->pplain.data + c->pplain.cap;
        for (size_t i = 0; i < nv; i++) {
            uint32_t xn = off[i + 1] - off[i];
            const uint8_t *x = data + off[i];
            floe_store_le32(o, xn);
            size_t room = (size_t)(oend - (o + 4));
            if (xn <= 16 && end - x >= 16 && room >= 16) {
                memcpy(o + 4, x, 16);
            } else if (xn <= 32 && end - x >= 32 && room >= 32) {
                memcpy(o + 4, x, 16);
                memcpy(o + 20, x + 16, 16);
            } else {
                memcpy(o + 4, x, xn);
            }
            o += 4 + xn;
        }
        c->pplain.len += total;
    }
    c->pvalues += nv;
    return 0;
}

/* Append the value span [vi, vi + nv) of cb. */
static int add_values(col *c, const floe_colbuf *cb, size_t vi, size_t nv) {
    if (nv == 0)
        return 0;
    if (c->phys == FLOE_PHYS_BYTE_ARRAY)
        return add_bytes(c, cb->values, cb->offsets + vi, nv);
    return add_fixed(c, cb->values + vi * (size_t)c->width, nv);
}

/* =====================================================================================
 * Pages
 * =================================================================================== */

static size_t page_est(const col *c) {
    size_t lv = c->plevels * (size_t)((c->max_def ? 1 : 0) + (c->max_rep ? 1 : 0)) / 4;
    if (c->mode == MODE_DICT) {
        int bw = floe_bit_width(c->ndict ? c->ndict - 1 : 0);
        return lv + c->pvalues * (size_t)(bw ? bw : 1) / 8 + 1;
    }
    return lv + pplain_vlen(c);
}

static bool page_full(const floe_pq_writer *w, const col *c) {
    return c->plevels > 0 &&
           (c->prows >= w->opts.page_row_limit || page_est(c) >= w->opts.page_size ||
            c->plevels >= PAGE_MAX_LEVELS);
}

/* The current page's dictionary-encoded values, re-expanded to PLAIN (fallback). */
static int page_dict_to_plain(col *c) {
    int rc;
    floe_buf_reset(&c->pplain);
    if (c->pvalues && (rc = pplain_start(c)) < 0)
        return rc;
    for (size_t i = 0; i < c->pvalues; i++) {
        uint32_t e = c->pidx[i];
        const uint8_t *d = c->dplain.data + c->doff[e];
        size_t n = c->phys == FLOE_PHYS_BYTE_ARRAY ? 4 + floe_load_le32(d) : (size_t)c->width;
        if ((rc = floe_buf_append(&c->pplain, d, n)) < 0)
            return rc;
    }
    return 0;
}

/* Before the chunk's first data page: drop the dictionary (re-expanding the page's values
 * to PLAIN) when it is not smaller than PLAIN would be. Unique values (ids, random
 * timestamps) are caught after DICT_PROBE_VALUES values instead of a whole page, which
 * saves most of the hashing such columns would cost. */
#define DICT_PROBE_VALUES 4096u

static int dict_abandon_if_useless(col *c, bool probe) {
    /* A dictionary that is merely as large as PLAIN on the first values usually pays over
     * the whole chunk, because repeats accumulate (coordinates, prices, low-cardinality
     * floats: 88% distinct in the first 4096 values, 6% over 400k rows). So the probe only
     * drops near-unique columns, and the first page keeps any dictionary that already
     * saw a quarter of its values repeat. */
    if (probe ? c->ndict * 20 <= c->pvalues * 19 : c->ndict * 4 <= c->pvalues * 3)
        return 0;
    int bw = floe_bit_width(c->ndict ? c->ndict - 1 : 0);
    size_t dict_cost = c->dplain.len + c->pvalues * (size_t)bw / 8 + 8;
    if (dict_cost < c->pplain_est)
        return 0;
    int rc = dict_stat_flush(c);
    if (rc < 0)
        return rc;
    rc = page_dict_to_plain(c);
    if (rc < 0)
        return rc;
    dict_clear(c);
    dict_drop_tables(c);
    c->mode = MODE_FALLBACK;
    return 0;
}

/* Levels lv[0..n), or n copies of max when lv is NULL. */
static int levels_append(floe_buf *body, const int16_t *lv, size_t n, int16_t max) {
    size_t at = body->len;
    int rc = floe_buf_append(body, "\0\0\0\0", 4);
    if (rc < 0)
        return rc;
    int bw = floe_bit_width((uint64_t)max);
    rc = lv ? floe_rle_encode_i16(lv, n, bw, body)
            : floe_rle_encode_repeat((uint32_t)max, n, bw, body);
    if (rc < 0)
        return rc;
    size_t len = body->len - at - 4;
    if (len > INT32_MAX)
        return FLOE_ELIMIT;
    floe_store_le32(body->data + at, (uint32_t)len);
    return 0;
}

/* The page body is bdata[0..blen) (sc->body, or a PLAIN page in place in its column's
 * pplain, or the dictionary itself), compressed here; or, with stored_ulen >= 0, a body
 * already compressed with the writer's codec from stored_ulen bytes (a carried page). */
static int write_page(floe_pq_writer *w, enc_scratch *sc, col *c, int page_type, int encoding,
                      int32_t nvals, const floe_pq_statistics *stats, const uint8_t *bdata,
                      size_t blen, int64_t stored_ulen, floe_buf *dst, int64_t *uncompressed,
                      floe_error *err) {
    int rc;
    const uint8_t *payload = bdata;
    size_t plen = blen;
    if (blen > INT32_MAX || stored_ulen > INT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "page of %zu bytes is too large", blen);
    if (stored_ulen >= 0) {
        blen = (size_t)stored_ulen; /* the uncompressed size the header declares */
    } else if (w->opts.codec != FLOE_CODEC_UNCOMPRESSED) {
        floe_buf_reset(&sc->comp);
        if ((rc = floe_codec_compress(sc->cctx, w->opts.codec, w->opts.codec_level, bdata,
                                      blen, &sc->comp, err)) < 0)
            return rc;
        if (sc->comp.len > INT32_MAX)
            return floe_error_set(err, FLOE_ELIMIT, "compressed page too large");
        payload = sc->comp.data;
        plen = sc->comp.len;
    }
    floe_pq_page_header ph;
    memset(&ph, 0, sizeof ph);
    ph.type = page_type;
    ph.uncompressed_page_size = (int32_t)blen;
    ph.compressed_page_size = (int32_t)plen;
    if (w->opts.page_checksum) {
        ph.has_crc = true;
        ph.crc = (int32_t)floe_crc32(0, payload, plen);
    }
    if (page_type == FLOE_PQ_DICTIONARY_PAGE) {
        ph.has_dictionary_page_header = true;
        ph.dictionary_page_header.num_values = nvals;
        ph.dictionary_page_header.encoding = FLOE_PQ_ENC_PLAIN;
    } else {
        ph.has_data_page_header = true;
        ph.data_page_header.num_values = nvals;
        ph.data_page_header.encoding = encoding;
        ph.data_page_header.definition_level_encoding = FLOE_PQ_ENC_RLE;
        ph.data_page_header.repetition_level_encoding = FLOE_PQ_ENC_RLE;
        if (stats) {
            ph.data_page_header.has_statistics = true;
            ph.data_page_header.statistics = *stats;
        }
    }
    floe_buf_reset(&sc->hdr);
    if ((rc = floe_pq_page_header_encode(&ph, &sc->hdr, err)) < 0)
        return rc;
    if ((rc = floe_buf_append(dst, sc->hdr.data, sc->hdr.len)) < 0 ||
        (rc = floe_buf_append(dst, payload, plen)) < 0)
        return floe_error_set(err, rc, "column %s: buffering page: %s", c->leaf->name,
                              floe_strerror(rc));
    *uncompressed += (int64_t)(sc->hdr.len + blen);
    return 0;
}

/* Fill a Statistics struct from a stat and counts; bounds bytes go to scratch (must stay
 * alive while st is used). */
static int stats_fill(const floe_pq_writer *w, const col *c, const vstat *s, int64_t nulls,
                      int64_t nans, floe_buf *scratch, floe_pq_statistics *st, bounds *b) {
    memset(st, 0, sizeof *st);
    st->has_null_count = true;
    st->null_count = nulls;
    if (c->is_float) {
        st->has_nan_count = true;
        st->nan_count = nans;
    }
    if (!s->has)
        return 0;
    int rc = make_bounds(c, s, w->opts.stats_truncate_length, scratch, b);
    if (rc < 0)
        return rc;
    return 0;
}

static void stats_point(const col *c, floe_pq_statistics *st, const floe_buf *scratch,
                        const bounds *b, bool has) {
    if (!has)
        return;
    st->has_min_value = st->has_max_value = true;
    st->min_value = (floe_pq_bytes){scratch->data + b->min_off, b->min_len};
    st->max_value = (floe_pq_bytes){scratch->data + b->max_off, b->max_len};
    st->has_is_min_value_exact = st->has_is_max_value_exact = true;
    st->is_min_value_exact = b->min_exact;
    st->is_max_value_exact = b->max_exact;
    if (c->signed_stats) {
        st->has_min = st->has_max = true;
        st->min = st->min_value;
        st->max = st->max_value;
    }
}

/* Write the current page (c's page counters and pstat describe it) with the body
 * bdata[0..blen) (see write_page for stored_ulen), record it in the chunk and start the
 * next. */
static int page_finish(floe_pq_writer *w, enc_scratch *sc, col *c, int encoding,
                       const uint8_t *bdata, size_t blen, int64_t stored_ulen,
                       size_t phead_next, floe_error *err) {
    int rc;
    /* page statistics (page index, optional header statistics) */
    page_entry pe;
    memset(&pe, 0, sizeof pe);
    pe.offset = (int64_t)c->chunk.len;
    pe.first_row = c->chunk_rows;
    pe.nulls = c->pnulls;
    pe.nans = c->pnans;
    pe.null_page = c->pvalues == 0;
    pe.all_nan = c->pvalues > 0 && !c->pstat.has;
    floe_pq_statistics st, *stp = NULL;
    bounds b;
    memset(&b, 0, sizeof b);
    if (c->pstat.has) {
        if ((rc = make_bounds(c, &c->pstat, w->opts.stats_truncate_length, &c->pi_bounds, &b)) <
            0)
            return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
        pe.min_off = b.min_off;
        pe.min_len = b.min_len;
        pe.max_off = b.max_off;
        pe.max_len = b.max_len;
    }
    if (w->opts.page_statistics) {
        memset(&st, 0, sizeof st);
        st.has_null_count = true;
        st.null_count = c->pnulls;
        if (c->is_float) {
            st.has_nan_count = true;
            st.nan_count = c->pnans;
        }
        stats_point(c, &st, &c->pi_bounds, &b, c->pstat.has);
        stp = &st;
    }
    if ((rc = write_page(w, sc, c, FLOE_PQ_DATA_PAGE, encoding, (int32_t)c->plevels, stp, bdata,
                         blen, stored_ulen, &c->chunk, &c->chunk_uncompressed, err)) < 0)
        return rc;
    pe.size = (int32_t)((int64_t)c->chunk.len - pe.offset);
    if ((rc = grow_arr((void **)&c->pages, &c->pages_cap, c->npages + 1, sizeof *c->pages)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    c->pages[c->npages++] = pe;

    if ((rc = vstat_merge_stat(c, &c->cstat, &c->pstat)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    c->chunk_rows += (int64_t)c->prows;
    c->chunk_values += (int64_t)c->plevels;
    c->chunk_nulls += c->pnulls;
    c->chunk_nans += c->pnans;

    c->plevels = c->pvalues = c->prows = 0;
    c->pnulls = c->pnans = 0;
    c->pplain_est = 0;
    floe_buf_reset(&c->pplain);
    if (phead_next > PPLAIN_HEAD_MAX)
        phead_next = PPLAIN_HEAD_MAX;
    if (phead_next > c->phead)
        c->phead = phead_next; /* pplain is empty: the next page's values start there */
    vstat_reset(&c->pstat);
    return 0;
}

static int cut_page(floe_pq_writer *w, enc_scratch *sc, col *c, floe_error *err) {
    int rc;
    if (c->plevels == 0)
        return 0;
    if (c->plevels > INT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "column %s: page with %zu values",
                              c->leaf->name, c->plevels);
    if ((rc = dict_stat_flush(c)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    /* First page of a dictionary chunk: keep the dictionary only if it pays. */
    if (c->mode == MODE_DICT && !c->dict_checked) {
        c->dict_checked = true;
        if ((rc = dict_abandon_if_useless(c, false)) < 0)
            return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    }

    floe_buf *body = &sc->body;
    floe_buf_reset(body);
    uint8_t *page = NULL; /* the page body when not in `body` */
    size_t page_len = 0, phead_next = c->phead;
    if (c->max_rep > 0 && (rc = levels_append(body, c->prep, c->plevels, c->max_rep)) < 0)
        return floe_error_set(err, rc, "column %s: encoding levels", c->leaf->name);
    /* a flat page without nulls: every definition level is max_def */
    const int16_t *defs = c->max_rep == 0 && c->pnulls == 0 ? NULL : c->pdef;
    if (c->max_def > 0 && (rc = levels_append(body, defs, c->plevels, c->max_def)) < 0)
        return floe_error_set(err, rc, "column %s: encoding levels", c->leaf->name);

    int encoding;
    if (c->mode == MODE_DICT) {
        int bw = floe_bit_width(c->ndict ? c->ndict - 1 : 0);
        encoding = FLOE_PQ_ENC_RLE_DICTIONARY;
        if ((rc = floe_buf_append_byte(body, (uint8_t)bw)) < 0 ||
            (rc = floe_rle_encode_u32(c->pidx, c->pvalues, bw, body)) < 0)
            return floe_error_set(err, rc, "column %s: encoding indices", c->leaf->name);
        c->dict_data_pages++;
    } else if (c->phys == FLOE_PHYS_BOOLEAN) {
        encoding = FLOE_PQ_ENC_PLAIN;
        if ((rc = floe_plain_bool_encode(pplain_vals(c), c->pvalues, body)) < 0)
            return floe_error_set(err, rc, "column %s: encoding booleans", c->leaf->name);
        c->plain_pages++;
    } else {
        bool ints = c->phys == FLOE_PHYS_INT32 || c->phys == FLOE_PHYS_INT64;
        if (c->fallback == FB_UNDECIDED && ints && w->opts.delta_ints) {
            /* Decide once per chunk, on its first fallback page. */
            floe_buf_reset(&sc->tmp);
            if (c->phys == FLOE_PHYS_INT32)
                rc = floe_delta_encode_i32((const int32_t *)(void *)pplain_vals(c), c->pvalues,
                                           &sc->tmp);
            else
                rc = floe_delta_encode_i64((const int64_t *)(void *)pplain_vals(c), c->pvalues,
                                           &sc->tmp);
            if (rc < 0)
                return floe_error_set(err, rc, "column %s: delta encoding", c->leaf->name);
            c->fallback = sc->tmp.len < pplain_vlen(c) ? FB_DELTA : FB_PLAIN;
        } else if (c->fallback == FB_UNDECIDED) {
            c->fallback = FB_PLAIN;
        }
        if (c->fallback == FB_DELTA) {
            encoding = FLOE_PQ_ENC_DELTA_BINARY_PACKED;
            if (c->phys == FLOE_PHYS_INT32)
                rc = floe_delta_encode_i32((const int32_t *)(void *)pplain_vals(c), c->pvalues,
                                           body);
            else
                rc = floe_delta_encode_i64((const int64_t *)(void *)pplain_vals(c), c->pvalues,
                                           body);
            c->delta_pages++;
        } else {
            encoding = FLOE_PQ_ENC_PLAIN;
            size_t vlen = pplain_vlen(c);
            if (vlen && body->len <= c->phead) {
                /* the levels go in front of the values: the page is compressed where it
                 * is instead of being copied after them */
                page = pplain_vals(c) - body->len;
                if (body->len)
                    memcpy(page, body->data, body->len);
                page_len = body->len + vlen;
            } else {
                rc = floe_buf_append(body, pplain_vals(c), vlen);
                if (body->len - vlen > c->phead) /* from the next page on (pplain empty) */
                    phead_next = (body->len - vlen + PPLAIN_HEAD_SLACK + 15) & ~(size_t)15;
            }
            c->plain_pages++;
        }
        if (rc < 0)
            return floe_error_set(err, rc, "column %s: encoding values", c->leaf->name);
    }

    return page_finish(w, sc, c, encoding, page ? page : body->data,
                       page ? page_len : body->len, -1, phead_next, err);
}

/* =====================================================================================
 * Batches
 * =================================================================================== */

/* Append the slots [*lvp, end) of cb, whose values start at *vip; both advance. */
static int col_append_span(floe_pq_writer *w, enc_scratch *sc, col *c, const floe_colbuf *cb,
                           size_t *lvp, size_t stop, size_t *vip, floe_error *err) {
    int rc;
    const size_t n = stop;
    size_t lv = *lvp, vi = *vip;
    while (lv < n) {
        if (page_full(w, c) && (rc = cut_page(w, sc, c, err)) < 0)
            return rc;
        size_t budget_rows = w->opts.page_row_limit > c->prows ? w->opts.page_row_limit - c->prows
                                                                : 1;
        size_t end, rows;
        if (c->max_rep == 0) {
            size_t span = n - lv;
            if (span > budget_rows)
                span = budget_rows;
            if (c->width == 0) {
                if (span > BYTES_SPAN_MAX)
                    span = BYTES_SPAN_MAX;
            } else {
                size_t est = page_est(c);
                size_t left = w->opts.page_size > est ? w->opts.page_size - est : 0;
                size_t per = c->mode == MODE_DICT ? 1 : (size_t)c->width;
                size_t fit = left / per + 1;
                if (span > fit)
                    span = fit;
                if (span > SPAN_MAX)
                    span = SPAN_MAX;
            }
            end = lv + span;
            rows = span;
        } else {
            end = lv + 1;
            rows = 1;
            while (end < n) {
                if (cb->rep[end] == 0) {
                    if (rows >= budget_rows || end - lv >= NESTED_SPAN)
                        break;
                    rows++;
                }
                end++;
            }
        }
        size_t ns = end - lv;
        size_t old_cap = c->plevels_cap;
        if ((rc = grow_arr((void **)&c->pdef, &c->plevels_cap, c->plevels + ns,
                           sizeof *c->pdef)) < 0)
            return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
        if (c->max_rep > 0 && (c->plevels_cap != old_cap || !c->prep)) {
            /* prep follows pdef's capacity */
            int16_t *np = floe_realloc(c->prep, c->plevels_cap * sizeof *np);
            if (!np)
                return floe_error_set(err, FLOE_ENOMEM, "column %s: out of memory",
                                      c->leaf->name);
            c->prep = np;
        }
        size_t nv = ns;
        if (c->max_def > 0) {
            const int16_t *d = cb->def + lv;
            int16_t *o = c->pdef + c->plevels;
            size_t cnt = 0;
            unsigned bad = 0;
            const int16_t md = c->max_def;
            size_t i = 0;
            /* blocks of 16 that gcc -O2 vectorizes (an open-ended loop it does not) */
            for (; i + 16 <= ns; i += 16) {
                int16_t x[16];
                memcpy(x, d + i, sizeof x); /* a local block: no aliasing with o */
                memcpy(o + i, x, sizeof x);
                uint16_t bc = 0, bb = 0;
                for (size_t k = 0; k < 16; k++) {
                    bc += x[k] == md;
                    bb |= (uint16_t)((uint16_t)x[k] > (uint16_t)md); /* < 0 wraps high */
                }
                cnt += bc;
                bad |= bb;
            }
            for (; i < ns; i++) {
                int16_t x = d[i];
                o[i] = x;
                cnt += x == md;
                bad |= (x < 0) | (x > md);
            }
            if (bad)
                return floe_error_set(err, FLOE_EINVALID,
                                      "column %s: definition level out of range", c->leaf->name);
            nv = cnt;
        }
        if (c->max_rep > 0) {
            const int16_t *r = cb->rep + lv;
            unsigned bad = 0;
            for (size_t i = 0; i < ns; i++)
                bad |= (r[i] < 0) | (r[i] > c->max_rep);
            if (bad)
                return floe_error_set(err, FLOE_EINVALID,
                                      "column %s: repetition level out of range", c->leaf->name);
            memcpy(c->prep + c->plevels, r, ns * sizeof *r);
        }
        if (nv > cb->nvalues - vi)
            return floe_error_set(err, FLOE_EINVALID,
                                  "column %s: levels announce more values than the buffer holds",
                                  c->leaf->name);
        if ((rc = add_values(c, cb, vi, nv)) < 0)
            return floe_error_set(err, rc, "column %s: %s", c->leaf->name, floe_strerror(rc));
        c->plevels += ns;
        c->prows += rows;
        c->pnulls += (int64_t)(ns - nv);
        lv = end;
        vi += nv;
        if (c->mode == MODE_DICT && !c->dict_checked && c->pvalues >= DICT_PROBE_VALUES &&
            c->npages == 0) {
            c->dict_checked = true;
            if ((rc = dict_abandon_if_useless(c, true)) < 0)
                return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
        }
        if (c->mode == MODE_DICT && c->dplain.len > w->opts.dict_page_size_limit) {
            /* Dictionary full: this page keeps it, the rest of the chunk falls back. */
            if ((rc = cut_page(w, sc, c, err)) < 0)
                return rc;
            if (c->mode == MODE_DICT) {
                c->mode = MODE_FALLBACK;
                dict_drop_tables(c);
            }
        }
    }
    *lvp = lv;
    *vip = vi;
    return 0;
}

/* Page carry (floe/column.h, floe_colbuf_page): a stored page of the batch goes into the
 * chunk as it is when it is what this column would write at this point anyway, PLAIN
 * values in a chunk that has left (or never used) its dictionary, and no worse than a
 * page encoded here: the writer's codec, one with no level setting (a copy would not
 * honour write.parquet.compression-level), within the page size and row limits, and
 * large enough that compressing it alone costs next to nothing in ratio (Snappy works on
 * independent 64 KiB blocks anyway). Only the stored body is reused: levels and values
 * are checked against the batch, statistics and the page index entry are computed from
 * the batch's values, and the header is written here. */
#define CARRY_MIN_PAGE ((size_t)64 << 10)

uint32_t floe_pq_write_options_carry_min(const floe_pq_write_options *o) {
    if (o->codec != FLOE_CODEC_SNAPPY && o->codec != FLOE_CODEC_LZ4_RAW &&
        o->codec != FLOE_CODEC_UNCOMPRESSED)
        return 0;
    size_t m = o->page_size / 2 < CARRY_MIN_PAGE ? o->page_size / 2 : CARRY_MIN_PAGE;
    return m ? (uint32_t)m : 1;
}

static bool carry_ok(const floe_pq_writer *w, const col *c, const floe_colbuf *cb,
                     const floe_colbuf_page *pg) {
    uint32_t min = floe_pq_write_options_carry_min(&w->opts);
    if (!min || c->mode != MODE_FALLBACK || c->max_rep != 0 || cb->max_def != c->max_def ||
        c->phys == FLOE_PHYS_BOOLEAN || c->phys == FLOE_PHYS_INT96)
        return false;
    bool ints = c->phys == FLOE_PHYS_INT32 || c->phys == FLOE_PHYS_INT64;
    if (c->fallback == FB_DELTA || (c->fallback == FB_UNDECIDED && ints && w->opts.delta_ints))
        return false;
    /* page_size is a target that pages cut here overshoot by up to a span of values; so
     * may stored ones, by half of it at most */
    if (w->opts.codec == FLOE_CODEC_UNCOMPRESSED && pg->ulen != pg->clen)
        return false;
    return pg->codec == (int32_t)w->opts.codec && pg->ulen >= min &&
           pg->ulen <= w->opts.page_size + w->opts.page_size / 2 &&
           pg->nlevels <= w->opts.page_row_limit && pg->nlevels > 0;
}

/* Write the stored page pg of cb (carry_ok) as the chunk's next page. */
static int carry_page(floe_pq_writer *w, enc_scratch *sc, col *c, const floe_colbuf *cb,
                      const floe_colbuf_page *pg, floe_error *err) {
    int rc;
    if ((rc = cut_page(w, sc, c, err)) < 0)
        return rc;
    /* the page was decoded into cb, so its levels are these: checked again all the same,
     * as a wrong entry would make a file that reads back other rows */
    size_t present = pg->nlevels;
    if (c->max_def > 0) {
        const int16_t *d = cb->def + pg->level0;
        const int16_t md = c->max_def;
        size_t cnt = 0;
        unsigned bad = 0;
        for (size_t i = 0; i < pg->nlevels; i++) {
            cnt += d[i] == md;
            bad |= (d[i] < 0) | (d[i] > md);
        }
        if (bad)
            return floe_error_set(err, FLOE_EINVALID,
                                  "column %s: definition level out of range", c->leaf->name);
        present = cnt;
    }
    if (present != pg->nvalues)
        return floe_error_set(err, FLOE_EINVALID,
                              "column %s: a carried page holds %u values, its levels %zu",
                              c->leaf->name, pg->nvalues, present);
    if (c->phys == FLOE_PHYS_BYTE_ARRAY)
        rc = span_minmax_bytes(c, cb->values, cb->offsets + pg->value0, pg->nvalues);
    else
        rc = span_stats_fixed(c, cb->values + pg->value0 * (size_t)c->width, pg->nvalues);
    if (rc < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    c->fallback = FB_PLAIN;
    c->plevels = c->prows = pg->nlevels;
    c->pvalues = pg->nvalues;
    c->pnulls = (int64_t)(pg->nlevels - pg->nvalues);
    c->plain_pages++;
    c->carried_pages++;
    return page_finish(w, sc, c, FLOE_PQ_ENC_PLAIN, cb->carry_bytes.data + pg->at, pg->clen,
                       (int64_t)pg->ulen, 0, err);
}

static int col_append(floe_pq_writer *w, enc_scratch *sc, col *c, const floe_colbuf *cb,
                      floe_error *err) {
    int rc;
    size_t lv = 0, vi = 0;
    /* with repetition a span must end at a row boundary: no carry there (carry_ok) */
    for (size_t k = 0; k < cb->ncarry && c->max_rep == 0; k++) {
        const floe_colbuf_page *pg = &cb->carry[k];
        if (pg->level0 < lv || pg->level0 > cb->nlevels ||
            pg->nlevels > cb->nlevels - pg->level0 || pg->nvalues > pg->nlevels ||
            pg->at > cb->carry_bytes.len || pg->clen > cb->carry_bytes.len - pg->at)
            return floe_error_set(err, FLOE_EINVALID,
                                  "column %s: a carried page lies outside the batch",
                                  c->leaf->name);
        if ((rc = col_append_span(w, sc, c, cb, &lv, pg->level0, &vi, err)) < 0)
            return rc;
        if (!carry_ok(w, c, cb, pg))
            continue; /* its slots go with the next span */
        if (vi != pg->value0 || pg->nvalues > cb->nvalues - vi)
            return floe_error_set(err, FLOE_EINVALID,
                                  "column %s: a carried page's values are not its slots'",
                                  c->leaf->name);
        if ((rc = carry_page(w, sc, c, cb, pg, err)) < 0)
            return rc;
        lv += pg->nlevels;
        vi += pg->nvalues;
    }
    if ((rc = col_append_span(w, sc, c, cb, &lv, cb->nlevels, &vi, err)) < 0)
        return rc;
    if (vi != cb->nvalues)
        return floe_error_set(err, FLOE_EINVALID,
                              "column %s: %zu values but levels announce %zu", c->leaf->name,
                              cb->nvalues, vi);
    return 0;
}

static size_t col_buffered(const col *c) {
    return c->chunk.len + c->dplain.len + page_est(c);
}

static size_t buffered_bytes(const floe_pq_writer *w) {
    size_t t = 0;
    for (size_t i = 0; i < w->ncols; i++)
        t += col_buffered(&w->cols[i]);
    return t;
}

static int write_out(floe_pq_writer *w, const void *p, size_t n, floe_error *err) {
    if (n == 0)
        return 0;
    int rc = wb_drain(w, err); /* what was handed over goes first */
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
static int write_out_buf(floe_pq_writer *w, floe_buf *b, floe_error *err) {
    if (b->len == 0)
        return 0;
    int rc;
    if (!w->opts.write_behind)
        return write_out(w, b->data, b->len, err);
    if (!w->wb && (rc = wb_start(w)) != 0) {
        if (rc < 0)
            return floe_error_set(err, rc, "out of memory");
        w->opts.write_behind = false; /* no thread: write synchronously from now on */
        return write_out(w, b->data, b->len, err);
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
        wb->q[(wb->head + wb->n) % wb->cap] = (wb_item){b->data, b->len};
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

/* Boundary order over the non-null pages of a chunk. */
static int boundary_order(const col *c) {
    bool asc = true, desc = true;
    const page_entry *prev = NULL;
    for (size_t i = 0; i < c->npages; i++) {
        const page_entry *p = &c->pages[i];
        if (p->null_page)
            continue;
        if (prev) {
            const uint8_t *b = c->pi_bounds.data;
            int cmin = cmp_plain(c, b + prev->min_off, prev->min_len, b + p->min_off, p->min_len);
            int cmax = cmp_plain(c, b + prev->max_off, prev->max_len, b + p->max_off, p->max_len);
            if (cmin > 0 || cmax > 0)
                asc = false;
            if (cmin < 0 || cmax < 0)
                desc = false;
        }
        prev = p;
    }
    if (asc)
        return FLOE_PQ_ASCENDING;
    if (desc)
        return FLOE_PQ_DESCENDING;
    return FLOE_PQ_UNORDERED;
}

static int encode_page_index(floe_pq_writer *w, const col *c, int64_t data_start,
                             chunk_index_ref *ref, floe_error *err) {
    int rc = 0;
    bool *null_pages = NULL;
    floe_pq_bytes *mins = NULL, *maxs = NULL;
    int64_t *nulls = NULL, *nans = NULL;
    floe_pq_page_location *locs = NULL;
    size_t np = c->npages;
    bool ci_ok = true;
    for (size_t i = 0; i < np; i++)
        if (c->pages[i].all_nan)
            ci_ok = false; /* parquet.thrift ColumnIndex: all-NaN page => no ColumnIndex */
    locs = floe_calloc(np ? np : 1, sizeof *locs);
    null_pages = floe_calloc(np ? np : 1, sizeof *null_pages);
    mins = floe_calloc(np ? np : 1, sizeof *mins);
    maxs = floe_calloc(np ? np : 1, sizeof *maxs);
    nulls = floe_calloc(np ? np : 1, sizeof *nulls);
    nans = floe_calloc(np ? np : 1, sizeof *nans);
    if (!locs || !null_pages || !mins || !maxs || !nulls || !nans)
        FLOE_FAIL(err, FLOE_ENOMEM, "column %s: out of memory", c->leaf->name);
    for (size_t i = 0; i < np; i++) {
        const page_entry *p = &c->pages[i];
        locs[i].offset = data_start + p->offset;
        locs[i].compressed_page_size = p->size;
        locs[i].first_row_index = p->first_row;
        null_pages[i] = p->null_page;
        nulls[i] = p->nulls;
        nans[i] = p->nans;
        if (!p->null_page && !p->all_nan) {
            mins[i] = (floe_pq_bytes){c->pi_bounds.data + p->min_off, p->min_len};
            maxs[i] = (floe_pq_bytes){c->pi_bounds.data + p->max_off, p->max_len};
        }
    }
    ref->ci_off = -1;
    if (ci_ok) {
        floe_pq_column_index ci;
        memset(&ci, 0, sizeof ci);
        ci.null_pages = null_pages;
        ci.n_pages = np;
        ci.min_values = mins;
        ci.max_values = maxs;
        ci.boundary_order = boundary_order(c);
        ci.null_counts = nulls;
        ci.n_null_counts = np;
        if (c->is_float) {
            ci.nan_counts = nans;
            ci.n_nan_counts = np;
        }
        size_t at = w->ci_all.len;
        FLOE_CHECK(floe_pq_column_index_encode(&ci, &w->ci_all, err));
        ref->ci_off = (int64_t)at;
        ref->ci_len = (int32_t)(w->ci_all.len - at);
    }
    floe_pq_offset_index oi;
    memset(&oi, 0, sizeof oi);
    oi.page_locations = locs;
    oi.n_pages = np;
    size_t at = w->oi_all.len;
    FLOE_CHECK(floe_pq_offset_index_encode(&oi, &w->oi_all, err));
    ref->oi_off = (int64_t)at;
    ref->oi_len = (int32_t)(w->oi_all.len - at);
done:
    floe_free(locs);
    floe_free(null_pages);
    floe_free(mins);
    floe_free(maxs);
    floe_free(nulls);
    floe_free(nans);
    return rc;
}

static int sort_i32_unique(int32_t *v, size_t n) {
    /* insertion sort + unique; n is tiny */
    for (size_t i = 1; i < n; i++) {
        int32_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return (int)k;
}

/* Write one column chunk and fill its footer metadata. */
/* The column work of a flush, independent for each column (run on several threads when
 * the writer has an executor): the last data page is cut and the dictionary page built
 * into c->fdict. flush_chunk then writes, in column order. */
static int flush_prepare(floe_pq_writer *w, enc_scratch *sc, col *c, floe_error *err) {
    int rc;
    if ((rc = cut_page(w, sc, c, err)) < 0)
        return rc;
    floe_buf_reset(&c->fdict);
    c->fdict_unc = 0;
    if (c->dict_data_pages > 0) {
        if ((rc = write_page(w, sc, c, FLOE_PQ_DICTIONARY_PAGE, FLOE_PQ_ENC_PLAIN,
                             (int32_t)c->ndict, NULL, c->dplain.data, c->dplain.len, -1,
                             &c->fdict, &c->fdict_unc, err)) < 0)
            return rc;
    }
    return 0;
}

/* Write a prepared column chunk (flush_prepare) and fill its metadata. */
static int flush_chunk(floe_pq_writer *w, col *c, floe_pq_column_chunk *cc, chunk_index_ref *ref,
                       floe_error *err) {
    int rc;
    enc_scratch *sc = &w->scr[0];
    int64_t dict_uncompressed = c->fdict_unc;
    bool has_dict = c->dict_data_pages > 0;
    int64_t start = w->pos;
    size_t dict_len = c->fdict.len, chunk_len = c->chunk.len;
    rc = write_out_buf(w, &c->fdict, err);
    floe_buf_free(&c->fdict); /* up to the dictionary limit per column: not kept */
    if (rc < 0)
        return rc;
    int64_t data_start = w->pos;
    if ((rc = write_out_buf(w, &c->chunk, err)) < 0)
        return rc;

    floe_pq_column_metadata *m = &cc->meta_data;
    memset(cc, 0, sizeof *cc);
    cc->file_offset = 0; /* deprecated: 0 since no ColumnMetaData is written outside */
    cc->has_meta_data = true;
    m->type = c->phys == FLOE_PHYS_FIXED ? FLOE_PQ_FIXED_LEN_BYTE_ARRAY : (int32_t)c->phys;
    int32_t encs[6];
    size_t nenc = 0;
    if (c->max_def > 0 || c->max_rep > 0)
        encs[nenc++] = FLOE_PQ_ENC_RLE;
    if (has_dict) {
        encs[nenc++] = FLOE_PQ_ENC_PLAIN;
        encs[nenc++] = FLOE_PQ_ENC_RLE_DICTIONARY;
    }
    if (c->plain_pages)
        encs[nenc++] = FLOE_PQ_ENC_PLAIN;
    if (c->delta_pages)
        encs[nenc++] = FLOE_PQ_ENC_DELTA_BINARY_PACKED;
    nenc = (size_t)sort_i32_unique(encs, nenc);
    m->encodings = floe_arena_memdup(&w->arena, encs, nenc * sizeof *encs);
    m->n_encodings = nenc;
    m->path_in_schema = c->path;
    m->n_path = c->npath;
    m->codec = (int32_t)w->opts.codec;
    m->num_values = c->chunk_values;
    m->total_uncompressed_size = c->chunk_uncompressed + dict_uncompressed;
    m->total_compressed_size = (int64_t)(dict_len + chunk_len);
    m->data_page_offset = data_start;
    if (has_dict) {
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = start;
    }
    floe_pq_page_encoding_stats es[3];
    size_t nes = 0;
    if (has_dict) {
        es[nes++] = (floe_pq_page_encoding_stats){FLOE_PQ_DICTIONARY_PAGE, FLOE_PQ_ENC_PLAIN, 1};
        es[nes++] = (floe_pq_page_encoding_stats){FLOE_PQ_DATA_PAGE, FLOE_PQ_ENC_RLE_DICTIONARY,
                                                  (int32_t)c->dict_data_pages};
    }
    if (c->plain_pages)
        es[nes++] = (floe_pq_page_encoding_stats){FLOE_PQ_DATA_PAGE, FLOE_PQ_ENC_PLAIN,
                                                  (int32_t)c->plain_pages};
    if (c->delta_pages)
        es[nes++] = (floe_pq_page_encoding_stats){FLOE_PQ_DATA_PAGE,
                                                  FLOE_PQ_ENC_DELTA_BINARY_PACKED,
                                                  (int32_t)c->delta_pages};
    m->encoding_stats = floe_arena_memdup(&w->arena, es, nes * sizeof *es);
    m->n_encoding_stats = nes;

    /* chunk statistics, bounds copied into the writer arena */
    floe_buf_reset(&sc->tmp);
    bounds b;
    memset(&b, 0, sizeof b);
    m->has_statistics = true;
    if ((rc = stats_fill(w, c, &c->cstat, c->chunk_nulls, c->chunk_nans, &sc->tmp, &m->statistics,
                         &b)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    if (c->cstat.has) {
        uint8_t *copy = floe_arena_memdup(&w->arena, sc->tmp.data, sc->tmp.len ? sc->tmp.len : 1);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_buf view = {.data = copy, .len = sc->tmp.len, .cap = sc->tmp.len, .max = 0};
        stats_point(c, &m->statistics, &view, &b, true);
    }
    if (nenc && !m->encodings)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");

    if (w->opts.write_page_index) {
        if ((rc = encode_page_index(w, c, data_start, ref, err)) < 0)
            return rc;
    } else {
        ref->ci_off = ref->oi_off = -1;
    }

    /* file totals */
    if ((rc = vstat_merge_stat(c, &c->fstat, &c->cstat)) < 0)
        return floe_error_set(err, rc, "out of memory");
    c->f_values += c->chunk_values;
    c->f_nulls += c->chunk_nulls;
    c->f_nans += c->chunk_nans;
    c->f_size += m->total_compressed_size;

    /* reset the chunk */
    floe_buf_reset(&c->chunk);
    c->chunk_rows = c->chunk_values = c->chunk_nulls = c->chunk_nans = 0;
    c->chunk_uncompressed = 0;
    vstat_reset(&c->cstat);
    c->plain_pages = c->delta_pages = 0;
    c->npages = 0;
    floe_buf_reset(&c->pi_bounds);
    dict_clear(c);
    c->mode = (w->opts.dictionary && c->phys != FLOE_PHYS_BOOLEAN) ? MODE_DICT : MODE_FALLBACK;
    c->fallback = FB_UNDECIDED;
    c->dict_checked = false;
    return 0;
}

static int prepare_columns(floe_pq_writer *w, floe_error *err);

static int flush_row_group(floe_pq_writer *w, floe_error *err) {
    int rc;
    if (w->rg_rows == 0)
        return 0;
    if (w->nrgs == w->rgs_cap) {
        size_t nc = w->rgs_cap ? w->rgs_cap * 2 : 8;
        floe_pq_row_group *g = floe_realloc(w->rgs, nc * sizeof *g);
        if (!g)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        w->rgs = g;
        chunk_index_ref *r = floe_realloc(w->refs, nc * (w->ncols ? w->ncols : 1) * sizeof *r);
        if (!r)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        w->refs = r;
        w->rgs_cap = nc;
    }
    floe_pq_row_group *rg = &w->rgs[w->nrgs];
    memset(rg, 0, sizeof *rg);
    rg->columns = floe_arena_alloc(&w->arena, (w->ncols ? w->ncols : 1) * sizeof *rg->columns);
    if (!rg->columns)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rg->n_columns = w->ncols;
    rg->num_rows = w->rg_rows;
    rg->has_file_offset = true;
    rg->file_offset = w->pos;
    int64_t total_unc = 0, total_comp = 0;
    if ((rc = prepare_columns(w, err)) < 0) {
        floe_error_prefix(err, "row group %zu: ", w->nrgs);
        return rc;
    }
    for (size_t i = 0; i < w->ncols; i++) {
        if ((rc = flush_chunk(w, &w->cols[i], &rg->columns[i], &w->refs[w->nrgs * w->ncols + i],
                              err)) < 0) {
            floe_error_prefix(err, "row group %zu: ", w->nrgs);
            return rc;
        }
        total_unc += rg->columns[i].meta_data.total_uncompressed_size;
        total_comp += rg->columns[i].meta_data.total_compressed_size;
    }
    rg->total_byte_size = total_unc;
    rg->has_total_compressed_size = true;
    rg->total_compressed_size = total_comp;
    if (w->nrgs <= INT16_MAX) {
        rg->has_ordinal = true;
        rg->ordinal = (int16_t)w->nrgs;
    }
    w->nrgs++;
    w->rg_rows = 0;
    return 0;
}

/* =====================================================================================
 * Schema conversion (Iceberg -> Parquet SchemaElements)
 * =================================================================================== */

typedef struct schema_build {
    floe_pq_writer *w;
    size_t n, cap;
    const char *path[64];
    size_t depth;
    size_t leaf;
    floe_error *err;
} schema_build;

static floe_pq_schema_element *elem_new(schema_build *sb) {
    if (sb->n == sb->cap)
        return NULL;
    floe_pq_schema_element *e = &sb->w->elems[sb->n++];
    memset(e, 0, sizeof *e);
    return e;
}

static size_t count_elems(const floe_field *f) {
    size_t n = 1;
    if (f->type == FLOE_TYPE_LIST || f->type == FLOE_TYPE_MAP)
        n++; /* the repeated group */
    for (size_t i = 0; i < f->nchildren; i++)
        n += count_elems(&f->children[i]);
    return n;
}

static int set_leaf_type(floe_pq_schema_element *e, const floe_field *f, floe_error *err) {
    e->has_type = true;
    switch (f->phys) {
    case FLOE_PHYS_BOOLEAN: e->type = FLOE_PQ_BOOLEAN; break;
    case FLOE_PHYS_INT32: e->type = FLOE_PQ_INT32; break;
    case FLOE_PHYS_INT64: e->type = FLOE_PQ_INT64; break;
    case FLOE_PHYS_FLOAT: e->type = FLOE_PQ_FLOAT; break;
    case FLOE_PHYS_DOUBLE: e->type = FLOE_PQ_DOUBLE; break;
    case FLOE_PHYS_BYTE_ARRAY: e->type = FLOE_PQ_BYTE_ARRAY; break;
    case FLOE_PHYS_FIXED:
        e->type = FLOE_PQ_FIXED_LEN_BYTE_ARRAY;
        e->has_type_length = true;
        e->type_length = f->type_length;
        break;
    default:
        return floe_error_set(err, FLOE_EUNSUPPORTED, "field '%s': cannot write physical type %d",
                              f->name, (int)f->phys);
    }
    floe_pq_logical_type *lt = &e->logical_type;
    switch (f->type) {
    case FLOE_TYPE_STRING:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_STRING;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_UTF8;
        break;
    case FLOE_TYPE_DATE:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_DATE;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_DATE;
        break;
    case FLOE_TYPE_TIME:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIME;
        lt->is_adjusted_to_utc = false;
        lt->time_unit = FLOE_PQ_MICROS;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_TIME_MICROS;
        break;
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIMESTAMP;
        lt->is_adjusted_to_utc = f->type == FLOE_TYPE_TIMESTAMPTZ;
        lt->time_unit = FLOE_PQ_MICROS;
        /* LogicalTypes.md: writers must annotate local timestamps with the legacy
         * TIMESTAMP_MICROS too */
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_TIMESTAMP_MICROS;
        break;
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_TIMESTAMP;
        lt->is_adjusted_to_utc = f->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        lt->time_unit = FLOE_PQ_NANOS; /* no ConvertedType exists for nanoseconds */
        break;
    case FLOE_TYPE_DECIMAL:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_DECIMAL;
        lt->decimal_precision = f->precision;
        lt->decimal_scale = f->scale;
        e->has_converted_type = true;
        e->converted_type = FLOE_PQ_CT_DECIMAL;
        e->has_precision = e->has_scale = true;
        e->precision = f->precision;
        e->scale = f->scale;
        break;
    case FLOE_TYPE_UUID:
        e->has_logical_type = true;
        lt->kind = FLOE_PQ_LT_UUID;
        break;
    default:
        break;
    }
    return 0;
}

static int build_field(schema_build *sb, const floe_field *f) {
    floe_pq_writer *w = sb->w;
    floe_pq_schema_element *e = elem_new(sb);
    if (!e || sb->depth + 3 > sizeof sb->path / sizeof sb->path[0])
        return floe_error_set(sb->err, FLOE_EUNSUPPORTED, "schema too deep for the writer");
    e->name = f->name;
    e->has_repetition_type = true;
    e->repetition_type = f->required ? FLOE_PQ_REQUIRED : FLOE_PQ_OPTIONAL;
    e->has_field_id = true;
    e->field_id = f->id;
    size_t saved = sb->depth;
    sb->path[sb->depth++] = f->name;
    int rc = 0;
    switch (f->type) {
    case FLOE_TYPE_STRUCT:
        e->has_num_children = true;
        e->num_children = (int32_t)f->nchildren;
        for (size_t i = 0; i < f->nchildren && rc == 0; i++)
            rc = build_field(sb, &f->children[i]);
        break;
    case FLOE_TYPE_LIST:
    case FLOE_TYPE_MAP: {
        bool is_list = f->type == FLOE_TYPE_LIST;
        e->has_num_children = true;
        e->num_children = 1;
        e->has_logical_type = true;
        e->logical_type.kind = is_list ? FLOE_PQ_LT_LIST : FLOE_PQ_LT_MAP;
        e->has_converted_type = true;
        e->converted_type = is_list ? FLOE_PQ_CT_LIST : FLOE_PQ_CT_MAP;
        floe_pq_schema_element *g = elem_new(sb);
        if (!g)
            return floe_error_set(sb->err, FLOE_EINTERNAL, "schema element count");
        g->name = is_list ? "list" : "key_value";
        g->has_repetition_type = true;
        g->repetition_type = FLOE_PQ_REPEATED;
        g->has_num_children = true;
        g->num_children = (int32_t)f->nchildren;
        sb->path[sb->depth++] = g->name;
        for (size_t i = 0; i < f->nchildren && rc == 0; i++)
            rc = build_field(sb, &f->children[i]);
        break;
    }
    default: {
        if ((rc = set_leaf_type(e, f, sb->err)) < 0)
            break;
        if (sb->leaf >= w->ncols || f->leaf != (int32_t)sb->leaf)
            return floe_error_set(sb->err, FLOE_EINVALID,
                                  "field '%s': leaf order does not match the schema", f->name);
        col *c = &w->cols[sb->leaf++];
        c->npath = sb->depth;
        c->path = floe_arena_alloc(&w->arena, sb->depth * sizeof *c->path);
        if (!c->path)
            return floe_error_set(sb->err, FLOE_ENOMEM, "out of memory");
        memcpy(c->path, sb->path, sb->depth * sizeof *c->path);
        break;
    }
    }
    sb->depth = saved;
    return rc;
}

static int build_schema(floe_pq_writer *w, floe_error *err) {
    const floe_schema *s = w->schema;
    size_t n = 1;
    for (size_t i = 0; i < s->root.nchildren; i++)
        n += count_elems(&s->root.children[i]);
    w->elems = floe_arena_alloc(&w->arena, n * sizeof *w->elems);
    if (!w->elems)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    schema_build sb;
    memset(&sb, 0, sizeof sb);
    sb.w = w;
    sb.cap = n;
    sb.err = err;
    floe_pq_schema_element *root = elem_new(&sb);
    root->name = "table";
    root->has_num_children = true;
    root->num_children = (int32_t)s->root.nchildren;
    for (size_t i = 0; i < s->root.nchildren; i++)
        FLOE_FORWARD_IF_ERROR(build_field(&sb, &s->root.children[i]));
    if (sb.leaf != w->ncols)
        return floe_error_set(err, FLOE_EINVALID, "schema has %zu leaves, found %zu", w->ncols,
                              sb.leaf);
    w->nelems = sb.n;
    return 0;
}

/* =====================================================================================
 * Public API
 * =================================================================================== */

static void col_init(floe_pq_writer *w, col *c, const floe_field *leaf) {
    memset(c, 0, sizeof *c);
    c->leaf = leaf;
    c->phys = leaf->phys;
    c->width = c->phys == FLOE_PHYS_BYTE_ARRAY ? 0 : floe_phys_width(leaf->phys, leaf->type_length);
    c->max_def = leaf->def_level;
    c->max_rep = leaf->rep_level;
    switch (c->phys) {
    case FLOE_PHYS_BOOLEAN: c->order = ORDER_BOOL; c->signed_stats = true; break;
    case FLOE_PHYS_INT32: c->order = ORDER_INT32; c->signed_stats = true; break;
    case FLOE_PHYS_INT64: c->order = ORDER_INT64; c->signed_stats = true; break;
    case FLOE_PHYS_FLOAT: c->order = ORDER_FLOAT; c->signed_stats = true; c->is_float = true; break;
    case FLOE_PHYS_DOUBLE:
        c->order = ORDER_DOUBLE;
        c->signed_stats = true;
        c->is_float = true;
        break;
    case FLOE_PHYS_FIXED:
        c->order = leaf->type == FLOE_TYPE_DECIMAL ? ORDER_SIGNED_FIXED : ORDER_BYTES;
        break;
    default:
        c->order = ORDER_BYTES;
        c->truncatable = true;
        c->utf8 = leaf->type == FLOE_TYPE_STRING;
        break;
    }
    c->mode = (w->opts.dictionary && c->phys != FLOE_PHYS_BOOLEAN) ? MODE_DICT : MODE_FALLBACK;
    c->small_keys = c->width == 4 || c->width == 8;
    c->track_entries = c->phys == FLOE_PHYS_BYTE_ARRAY || c->phys == FLOE_PHYS_FIXED;
    c->page_gen = 1;
    c->phead = PPLAIN_HEAD0;
    floe_buf_init(&c->pplain, 0);
    floe_buf_init(&c->dplain, 0);
    floe_buf_init(&c->chunk, 0);
    floe_buf_init(&c->fdict, 0);
    floe_buf_init(&c->pi_bounds, 0);
    floe_buf_init(&c->pstat.min, 0);
    floe_buf_init(&c->pstat.max, 0);
    floe_buf_init(&c->cstat.min, 0);
    floe_buf_init(&c->cstat.max, 0);
    floe_buf_init(&c->fstat.min, 0);
    floe_buf_init(&c->fstat.max, 0);
}

static void col_free(col *c) {
    floe_free(c->pdef);
    floe_free(c->prep);
    floe_free(c->pidx);
    floe_buf_free(&c->pplain);
    vstat_free(&c->pstat);
    floe_free(c->slots);
    floe_free(c->kslots);
    floe_free(c->dhash);
    floe_free(c->doff);
    floe_free(c->dstamp);
    floe_buf_free(&c->dplain);
    floe_buf_free(&c->chunk);
    floe_buf_free(&c->fdict);
    vstat_free(&c->cstat);
    floe_free(c->pages);
    floe_buf_free(&c->pi_bounds);
    vstat_free(&c->fstat);
}

static void writer_free(floe_pq_writer *w) {
    if (!w)
        return;
    wb_stop(w);
    for (size_t i = 0; i < w->ncols; i++)
        col_free(&w->cols[i]);
    floe_free(w->cols);
    for (int i = 0; w->scr && i < w->nscr; i++) {
        floe_codec_ctx_free(w->scr[i].cctx);
        floe_buf_free(&w->scr[i].body);
        floe_buf_free(&w->scr[i].comp);
        floe_buf_free(&w->scr[i].hdr);
        floe_buf_free(&w->scr[i].tmp);
    }
    floe_free(w->scr);
    floe_arena_reset(&w->arena);
    floe_free(w->rgs);
    floe_free(w->refs);
    floe_buf_free(&w->ci_all);
    floe_buf_free(&w->oi_all);
    floe_free(w);
}

int floe_pq_writer_open(floe_io *io, const char *uri, const floe_schema *schema,
                        const floe_pq_write_options *opts, floe_pq_writer **out,
                        floe_error *err) {
    int rc = 0;
    floe_pq_writer *w = floe_calloc(1, sizeof *w);
    if (!w)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_arena_init(&w->arena, 16384);
    if (opts)
        w->opts = *opts;
    else
        floe_pq_write_options_init(&w->opts);
    w->schema = schema;
    floe_pq_write_options *o = &w->opts;
    if (o->page_size == 0 || o->page_row_limit == 0 || o->row_group_size == 0)
        FLOE_FAIL(err, FLOE_EINVALID, "parquet writer: page_size, page_row_limit and "
                                      "row_group_size must be positive");
    switch (o->codec) {
    case FLOE_CODEC_UNCOMPRESSED:
    case FLOE_CODEC_SNAPPY:
    case FLOE_CODEC_GZIP:
    case FLOE_CODEC_BROTLI:
    case FLOE_CODEC_ZSTD:
    case FLOE_CODEC_LZ4_RAW:
        break;
    default:
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "parquet writer: codec %d cannot be written",
                  (int)o->codec);
    }
    if (!schema || (schema->nleaves && !schema->leaves))
        FLOE_FAIL(err, FLOE_EINVALID, "parquet writer: schema is not finished");
    w->cols = floe_calloc(schema->nleaves ? schema->nleaves : 1, sizeof *w->cols);
    if (!w->cols)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    w->ncols = schema->nleaves;
    for (size_t i = 0; i < w->ncols; i++) {
        const floe_field *leaf = schema->leaves[i];
        if (leaf->phys == FLOE_PHYS_INT96)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED, "field '%s': INT96 is read-only", leaf->name);
        if (leaf->phys == FLOE_PHYS_FIXED && leaf->type_length <= 0)
            FLOE_FAIL(err, FLOE_EINVALID, "field '%s': fixed length %d", leaf->name,
                      (int)leaf->type_length);
        col_init(w, &w->cols[i], leaf);
    }
    FLOE_CHECK(build_schema(w, err));

    /* footer strings owned by the writer */
    if (o->created_by)
        w->created_by = floe_arena_strdup(&w->arena, o->created_by);
    else {
        char cb[128];
        snprintf(cb, sizeof cb, "floe version %s (build %s)", FLOE_VERSION_STRING,
                 FLOE_BUILD_ID);
        w->created_by = floe_arena_strdup(&w->arena, cb);
    }
    if (!w->created_by)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (o->nkv) {
        w->kv = floe_arena_alloc(&w->arena, o->nkv * sizeof *w->kv);
        if (!w->kv)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->nkv; i++) {
            if (!o->kv[i].key)
                FLOE_FAIL(err, FLOE_EINVALID, "parquet writer: key-value %zu has no key", i);
            w->kv[i].key = floe_arena_strdup(&w->arena, o->kv[i].key);
            if (o->kv[i].value) {
                w->kv[i].value = floe_arena_strdup(&w->arena, o->kv[i].value);
                w->kv[i].value_len = strlen(o->kv[i].value);
                if (!w->kv[i].value)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            }
            if (!w->kv[i].key)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        w->nkv = o->nkv;
    }
    o->created_by = NULL; /* the copies above are what the writer uses */
    o->kv = NULL;

    floe_buf_init(&w->ci_all, 0);
    floe_buf_init(&w->oi_all, 0);
    if (o->executor && (o->executor->nworkers < 1 || o->executor->nworkers > 64 ||
                        !o->executor->run))
        FLOE_FAIL(err, FLOE_EINVALID, "parquet writer: executor needs 1 to 64 workers");
    if (o->executor)
        o->threads = o->executor->nworkers;
    if (o->threads < 1)
        o->threads = 1;
    if (o->threads > 64)
        o->threads = 64;
    w->nscr = o->threads;
    w->scr = floe_calloc((size_t)w->nscr, sizeof *w->scr);
    if (!w->scr)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (int i = 0; i < w->nscr; i++) {
        enc_scratch *sc = &w->scr[i];
        floe_buf_init(&sc->body, 0);
        floe_buf_init(&sc->comp, 0);
        floe_buf_init(&sc->hdr, 0);
        floe_buf_init(&sc->tmp, 0);
        if (o->codec != FLOE_CODEC_UNCOMPRESSED && !(sc->cctx = floe_codec_ctx_new()))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    FLOE_CHECK(floe_output_open(io, uri, &o->output, &w->out, err));
    FLOE_CHECK(write_out(w, "PAR1", 4, err));
    *out = w;
    return 0;
done:
    if (w->out)
        floe_output_abort(w->out);
    writer_free(w);
    return rc;
}

/* Column encoding across threads. Each column's state is touched by one thread only, and
 * each thread uses its own scratch; columns are handed out by an atomic counter, largest
 * first, so one heavy column (free text) does not leave the other threads idle at the end.
 * The result does not depend on the thread count: every column is encoded exactly as the
 * serial loop would. */
typedef struct enc_job {
    floe_pq_writer *w;
    const floe_batch *b;
    const uint32_t *order;    /* column indices, largest batch column first */
    atomic_size_t next;
    atomic_int rc;            /* first error (0 none) */
    floe_error err;           /* the error of the column that set rc */
    pthread_mutex_t mu;
} enc_job;

typedef struct enc_arg {
    enc_job *job;
    int slot;                 /* scratch index */
} enc_arg;

static void *enc_worker(void *arg) {
    enc_arg *a = arg;
    enc_job *j = a->job;
    floe_pq_writer *w = j->w;
    floe_error err;
    floe_error_clear(&err);
    for (;;) {
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= w->ncols || atomic_load(&j->rc) != 0)
            break;
        size_t i = j->order[k];
        int rc = col_append(w, &w->scr[a->slot], &w->cols[i], &j->b->cols[i], &err);
        if (rc < 0) {
            pthread_mutex_lock(&j->mu);
            if (atomic_load(&j->rc) == 0) {
                j->err = err;
                atomic_store(&j->rc, rc);
            }
            pthread_mutex_unlock(&j->mu);
            break;
        }
    }
    return NULL;
}

/* Executor task: column order[k] with the scratch of the worker running it. */
static void enc_task(void *arg, size_t k, int worker) {
    enc_job *j = arg;
    floe_pq_writer *w = j->w;
    if (atomic_load(&j->rc) != 0)
        return;
    size_t i = j->order[k];
    floe_error err;
    floe_error_clear(&err);
    int rc = col_append(w, &w->scr[worker], &w->cols[i], &j->b->cols[i], &err);
    if (rc < 0) {
        pthread_mutex_lock(&j->mu);
        if (atomic_load(&j->rc) == 0) {
            j->err = err;
            atomic_store(&j->rc, rc);
        }
        pthread_mutex_unlock(&j->mu);
    }
}

static int append_columns(floe_pq_writer *w, const floe_batch *b, floe_error *err) {
    int threads = w->nscr;
    const floe_pq_executor *ex = w->opts.executor;
    if (threads > (int)w->ncols)
        threads = (int)w->ncols;
    /* a small batch is not worth the threads */
    if (threads <= 1 || floe_batch_bytes(b) < ((size_t)256 << 10)) {
        /* (with an executor too: one batch at a time, so scratch 0 is free) */
        for (size_t i = 0; i < w->ncols; i++)
            FLOE_FORWARD_IF_ERROR(col_append(w, &w->scr[0], &w->cols[i], &b->cols[i], err));
        return 0;
    }
    uint32_t *order = floe_malloc(w->ncols * sizeof *order);
    size_t *weight = floe_malloc(w->ncols * sizeof *weight);
    pthread_t tids[64];
    enc_arg args[64];
    int started = 0, rc = 0;
    enc_job job;
    if (!order || !weight) {
        floe_free(order);
        floe_free(weight);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->ncols; i++) {
        order[i] = (uint32_t)i;
        weight[i] = floe_colbuf_bytes(&b->cols[i]);
    }
    for (size_t i = 1; i < w->ncols; i++) { /* insertion sort: few columns */
        uint32_t o = order[i];
        size_t k = i;
        while (k > 0 && weight[order[k - 1]] < weight[o]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = o;
    }
    job.w = w;
    job.b = b;
    job.order = order;
    atomic_init(&job.next, 0);
    atomic_init(&job.rc, 0);
    floe_error_clear(&job.err);
    pthread_mutex_init(&job.mu, NULL);
    if (ex) {
        ex->run(ex->ctx, w->ncols, enc_task, &job);
        threads = 0; /* nothing to start or join below */
    }
    for (int t = 1; t < threads; t++) {
        args[t].job = &job;
        args[t].slot = t;
        if (pthread_create(&tids[t], NULL, enc_worker, &args[t]) != 0)
            break;
        started++;
    }
    args[0].job = &job;
    args[0].slot = 0;
    if (!ex)
        enc_worker(&args[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(tids[t], NULL);
    rc = atomic_load(&job.rc);
    if (rc < 0 && err)
        *err = job.err;
    pthread_mutex_destroy(&job.mu);
    floe_free(order);
    floe_free(weight);
    return rc;
}

/* Executor task: flush_prepare for column order[k]. */
static void prep_task(void *arg, size_t k, int worker) {
    enc_job *j = arg;
    floe_pq_writer *w = j->w;
    if (atomic_load(&j->rc) != 0)
        return;
    floe_error err;
    floe_error_clear(&err);
    int rc = flush_prepare(w, &w->scr[worker], &w->cols[j->order[k]], &err);
    if (rc < 0) {
        pthread_mutex_lock(&j->mu);
        if (atomic_load(&j->rc) == 0) {
            j->err = err;
            atomic_store(&j->rc, rc);
        }
        pthread_mutex_unlock(&j->mu);
    }
}

/* flush_prepare for every column: on the executor when there is one (the last pages and
 * the dictionary pages of a row group are compressed in parallel; only the writes that
 * follow are serial), else one column after the other. */
static int prepare_columns(floe_pq_writer *w, floe_error *err) {
    const floe_pq_executor *ex = w->opts.executor;
    if (!ex || ex->nworkers < 2 || w->ncols < 2) {
        for (size_t i = 0; i < w->ncols; i++)
            FLOE_FORWARD_IF_ERROR(flush_prepare(w, &w->scr[0], &w->cols[i], err));
        return 0;
    }
    uint32_t *order = floe_malloc(w->ncols * sizeof *order);
    size_t *weight = floe_malloc(w->ncols * sizeof *weight);
    if (!order || !weight) {
        floe_free(order);
        floe_free(weight);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->ncols; i++) { /* largest work first */
        order[i] = (uint32_t)i;
        weight[i] = page_est(&w->cols[i]) + w->cols[i].dplain.len;
    }
    for (size_t i = 1; i < w->ncols; i++) {
        uint32_t o = order[i];
        size_t k = i;
        while (k > 0 && weight[order[k - 1]] < weight[o]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = o;
    }
    enc_job job;
    job.w = w;
    job.b = NULL;
    job.order = order;
    atomic_init(&job.next, 0);
    atomic_init(&job.rc, 0);
    floe_error_clear(&job.err);
    pthread_mutex_init(&job.mu, NULL);
    ex->run(ex->ctx, w->ncols, prep_task, &job);
    int rc = atomic_load(&job.rc);
    if (rc < 0 && err)
        *err = job.err;
    pthread_mutex_destroy(&job.mu);
    floe_free(order);
    floe_free(weight);
    return rc;
}

int floe_pq_writer_write_batch(floe_pq_writer *w, const floe_batch *b, floe_error *err) {
    int rc = 0;
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    if (b->ncols != w->ncols)
        FLOE_FAIL(err, FLOE_EINVALID, "batch has %zu columns, schema %zu", b->ncols, w->ncols);
    /* validate shapes and row counts before anything is appended */
    for (size_t i = 0; i < w->ncols; i++) {
        const floe_colbuf *cb = &b->cols[i];
        const col *c = &w->cols[i];
        if (cb->phys != c->phys || cb->max_def != c->max_def || cb->max_rep != c->max_rep ||
            (c->width && cb->width != c->width))
            FLOE_FAIL(err, FLOE_EINVALID, "column %s: batch column does not match the schema",
                      c->leaf->name);
        if (cb->nvalues > cb->nlevels || (c->max_def == 0 && cb->nvalues != cb->nlevels))
            FLOE_FAIL(err, FLOE_EINVALID, "column %s: %zu values for %zu slots", c->leaf->name,
                      cb->nvalues, cb->nlevels);
        size_t rows = cb->nlevels;
        if (c->max_rep > 0) {
            if (cb->nlevels && cb->rep[0] != 0)
                FLOE_FAIL(err, FLOE_EINVALID, "column %s: batch starts inside a row",
                          c->leaf->name);
            rows = 0;
            for (size_t k = 0; k < cb->nlevels; k++)
                rows += cb->rep[k] == 0;
        }
        if (rows != b->nrows)
            FLOE_FAIL(err, FLOE_EINVALID, "column %s: %zu rows, batch says %zu", c->leaf->name,
                      rows, b->nrows);
        if (c->width == 0 && cb->nvalues && (!cb->offsets || cb->offsets[0] != 0))
            FLOE_FAIL(err, FLOE_EINVALID, "column %s: bad offsets", c->leaf->name);
    }
    FLOE_CHECK(append_columns(w, b, err));
    w->rg_rows += (int64_t)b->nrows;
    w->total_rows += (int64_t)b->nrows;
    if (buffered_bytes(w) >= w->opts.row_group_size)
        FLOE_CHECK(flush_row_group(w, err));
done:
    if (rc < 0)
        w->failed = rc;
    return rc;
}

int floe_pq_writer_flush(floe_pq_writer *w, floe_error *err) {
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    int rc = flush_row_group(w, err);
    if (rc < 0)
        w->failed = rc;
    return rc;
}

int64_t floe_pq_writer_bytes_written(const floe_pq_writer *w) {
    return w->pos + (int64_t)buffered_bytes(w);
}

int64_t floe_pq_writer_rows(const floe_pq_writer *w) { return w->total_rows; }

int64_t floe_pq_writer_carried_pages(const floe_pq_writer *w) {
    int64_t n = 0;
    for (size_t i = 0; i < w->ncols; i++)
        n += w->cols[i].carried_pages;
    return n;
}

size_t floe_pq_writer_buffered_bytes(const floe_pq_writer *w) { return buffered_bytes(w); }

bool floe_pq_writer_should_roll(const floe_pq_writer *w) {
    return w->opts.target_file_size > 0 &&
           floe_pq_writer_bytes_written(w) >= w->opts.target_file_size;
}

void floe_pq_file_info_free(floe_pq_file_info *fi) {
    if (!fi)
        return;
    for (size_t i = 0; i < fi->ncolumns; i++) {
        floe_free(fi->columns[i].lower_bound);
        floe_free(fi->columns[i].upper_bound);
    }
    floe_free(fi->columns);
    floe_free(fi->split_offsets);
    memset(fi, 0, sizeof *fi);
}

static int make_file_info(const floe_pq_writer *w, floe_pq_file_info *fi, floe_error *err) {
    int rc = 0;
    floe_buf tmp;
    floe_buf_init(&tmp, 0);
    memset(fi, 0, sizeof *fi);
    fi->record_count = w->total_rows;
    fi->file_size_in_bytes = w->pos;
    fi->row_group_count = (int64_t)w->nrgs;
    fi->columns = floe_calloc(w->ncols ? w->ncols : 1, sizeof *fi->columns);
    fi->split_offsets = floe_calloc(w->nrgs ? w->nrgs : 1, sizeof *fi->split_offsets);
    if (!fi->columns || !fi->split_offsets)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    fi->ncolumns = w->ncols;
    fi->nsplits = w->nrgs;
    for (size_t g = 0; g < w->nrgs; g++)
        fi->split_offsets[g] = w->rgs[g].file_offset;
    for (size_t i = 0; i < w->ncols; i++) {
        const col *c = &w->cols[i];
        floe_pq_column_info *ci = &fi->columns[i];
        ci->field = c->leaf;
        ci->field_id = c->leaf->id;
        ci->repeated = c->max_rep > 0;
        ci->column_size = c->f_size;
        ci->value_count = c->f_values;
        ci->null_value_count = c->f_nulls;
        ci->has_nan_count = c->is_float;
        ci->nan_value_count = c->f_nans;
        if (!c->fstat.has)
            continue;
        bounds b;
        floe_buf_reset(&tmp);
        /* exact: the table's metrics mode decides what the manifest keeps of them */
        if ((rc = make_bounds(c, &c->fstat, 0, &tmp, &b)) < 0)
            FLOE_FAIL(err, rc, "out of memory");
        ci->lower_bound = floe_malloc(b.min_len ? b.min_len : 1);
        ci->upper_bound = floe_malloc(b.max_len ? b.max_len : 1);
        if (!ci->lower_bound || !ci->upper_bound)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        memcpy(ci->lower_bound, tmp.data + b.min_off, b.min_len);
        memcpy(ci->upper_bound, tmp.data + b.max_off, b.max_len);
        ci->lower_len = b.min_len;
        ci->upper_len = b.max_len;
        ci->lower_truncated = !b.min_exact || c->fstat.min_inexact;
        ci->upper_truncated = !b.max_exact || c->fstat.max_inexact;
        ci->has_bounds = true;
    }
done:
    floe_buf_free(&tmp);
    if (rc < 0)
        floe_pq_file_info_free(fi);
    return rc;
}

int floe_pq_writer_close(floe_pq_writer *w, floe_pq_file_info *out, floe_error *err) {
    int rc = 0;
    floe_buf footer;
    floe_buf_init(&footer, 0);
    int *orders = NULL;
    floe_pq_file_info fi;
    memset(&fi, 0, sizeof fi);
    if (w->failed)
        FLOE_FAIL(err, w->failed, "parquet writer: an earlier error stopped it");
    FLOE_CHECK(flush_row_group(w, err));

    /* page index: every ColumnIndex, then every OffsetIndex (PageIndex.md layout) */
    int64_t ci_base = w->pos;
    FLOE_CHECK(write_out(w, w->ci_all.data, w->ci_all.len, err));
    int64_t oi_base = w->pos;
    FLOE_CHECK(write_out(w, w->oi_all.data, w->oi_all.len, err));
    for (size_t g = 0; g < w->nrgs; g++)
        for (size_t i = 0; i < w->ncols; i++) {
            const chunk_index_ref *r = &w->refs[g * w->ncols + i];
            floe_pq_column_chunk *cc = &w->rgs[g].columns[i];
            if (r->ci_off >= 0) {
                cc->has_column_index = true;
                cc->column_index_offset = ci_base + r->ci_off;
                cc->column_index_length = r->ci_len;
            }
            if (r->oi_off >= 0) {
                cc->has_offset_index = true;
                cc->offset_index_offset = oi_base + r->oi_off;
                cc->offset_index_length = r->oi_len;
            }
        }

    orders = floe_calloc(w->ncols ? w->ncols : 1, sizeof *orders);
    if (!orders)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < w->ncols; i++)
        orders[i] = FLOE_PQ_ORDER_TYPE_DEFINED;
    floe_pq_file_metadata md;
    memset(&md, 0, sizeof md);
    md.version = 1;
    md.schema = w->elems;
    md.n_schema = w->nelems;
    md.num_rows = w->total_rows;
    md.row_groups = w->rgs;
    md.n_row_groups = w->nrgs;
    md.key_value_metadata = w->kv;
    md.n_kv = w->nkv;
    md.created_by = w->created_by;
    md.column_orders = orders;
    md.n_column_orders = w->ncols;
    FLOE_CHECK(floe_pq_file_metadata_encode(&md, &footer, err));
    if (footer.len > UINT32_MAX)
        FLOE_FAIL(err, FLOE_ELIMIT, "footer of %zu bytes", footer.len);
    uint8_t tail[8];
    floe_store_le32(tail, (uint32_t)footer.len);
    memcpy(tail + 4, "PAR1", 4);
    FLOE_CHECK(write_out(w, footer.data, footer.len, err));
    FLOE_CHECK(write_out(w, tail, 8, err));
    if (out)
        FLOE_CHECK(make_file_info(w, &fi, err));
    FLOE_CHECK(wb_drain(w, err));
    wb_stop(w);
    floe_output *o = w->out;
    w->out = NULL;
    FLOE_CHECK(floe_output_close(o, err));
    if (out)
        *out = fi;
    memset(&fi, 0, sizeof fi);
done:
    floe_free(orders);
    floe_buf_free(&footer);
    floe_pq_file_info_free(&fi);
    wb_stop(w); /* idle after the footer's write; on failure its queue is dropped */
    if (w->out)
        floe_output_abort(w->out);
    writer_free(w);
    return rc;
}

void floe_pq_writer_abort(floe_pq_writer *w) {
    if (!w)
        return;
    wb_stop(w);
    if (w->out)
        floe_output_abort(w->out);
    writer_free(w);
}

/* =====================================================================================
 * Copied row groups (writer_copy.h): stored pages of another file placed verbatim
 * =================================================================================== */

static const uint8_t *arena_dup(floe_arena *a, const floe_pq_bytes *b, bool *oom) {
    if (!b->n)
        return (const uint8_t *)"";
    const uint8_t *p = floe_arena_memdup(a, b->p, b->n);
    if (!p)
        *oom = true;
    return p;
}

static void *arena_dup_arr(floe_arena *a, const void *p, size_t n, size_t elem, bool *oom) {
    if (!n)
        return NULL;
    void *q = floe_arena_memdup(a, p, n * elem);
    if (!q)
        *oom = true;
    return q;
}

/* The input's ColumnMetaData re-based by delta, everything it points to copied into the
 * writer's arena (the input's metadata is freed after the call). */
static int copy_chunk_meta(floe_pq_writer *w, const col *c, const pq_copy_chunk *ch,
                           int64_t delta, floe_pq_column_chunk *cc) {
    const floe_pq_column_metadata *in = ch->meta;
    floe_pq_column_metadata *m = &cc->meta_data;
    bool oom = false;
    memset(cc, 0, sizeof *cc);
    cc->file_offset = 0; /* deprecated: 0 since no ColumnMetaData is written outside */
    cc->has_meta_data = true;
    m->type = in->type;
    m->encodings = arena_dup_arr(&w->arena, in->encodings, in->n_encodings,
                                 sizeof *in->encodings, &oom);
    m->n_encodings = in->n_encodings;
    m->path_in_schema = c->path; /* the writer's names, not the input's */
    m->n_path = c->npath;
    m->codec = in->codec;
    m->num_values = in->num_values;
    m->total_uncompressed_size = in->total_uncompressed_size;
    m->total_compressed_size = in->total_compressed_size;
    m->data_page_offset = in->data_page_offset + delta;
    if (in->has_dictionary_page_offset) {
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = in->dictionary_page_offset + delta;
    }
    /* key-value metadata, index page and bloom filter are not carried over */
    if (in->has_statistics) {
        const floe_pq_statistics *s = &in->statistics;
        floe_pq_statistics *d = &m->statistics;
        m->has_statistics = true;
        *d = *s;
        if (s->has_max)
            d->max.p = arena_dup(&w->arena, &s->max, &oom);
        if (s->has_min)
            d->min.p = arena_dup(&w->arena, &s->min, &oom);
        if (s->has_max_value)
            d->max_value.p = arena_dup(&w->arena, &s->max_value, &oom);
        if (s->has_min_value)
            d->min_value.p = arena_dup(&w->arena, &s->min_value, &oom);
    }
    m->encoding_stats = arena_dup_arr(&w->arena, in->encoding_stats, in->n_encoding_stats,
                                      sizeof *in->encoding_stats, &oom);
    m->n_encoding_stats = in->n_encoding_stats;
    if (in->has_size_statistics) {
        const floe_pq_size_statistics *s = &in->size_statistics;
        floe_pq_size_statistics *d = &m->size_statistics;
        m->has_size_statistics = true;
        *d = *s;
        d->repetition_level_histogram = arena_dup_arr(&w->arena, s->repetition_level_histogram,
                                                      s->n_rep_hist, sizeof(int64_t), &oom);
        d->definition_level_histogram = arena_dup_arr(&w->arena, s->definition_level_histogram,
                                                      s->n_def_hist, sizeof(int64_t), &oom);
    }
    return oom ? FLOE_ENOMEM : 0;
}

/* The copied chunk's page index: the ColumnIndex as it is (no offsets in it), the
 * OffsetIndex with every page location moved by delta. */
static int copy_chunk_index(floe_pq_writer *w, const pq_copy_chunk *ch, int64_t delta,
                            chunk_index_ref *ref, floe_error *err) {
    ref->ci_off = ref->oi_off = -1;
    if (!w->opts.write_page_index || !ch->offset_index)
        return 0;
    const floe_pq_offset_index *src = ch->offset_index;
    floe_pq_offset_index oi = *src;
    oi.page_locations = floe_malloc((src->n_pages ? src->n_pages : 1) * sizeof *oi.page_locations);
    if (!oi.page_locations)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t k = 0; k < src->n_pages; k++) {
        oi.page_locations[k] = src->page_locations[k];
        oi.page_locations[k].offset += delta;
    }
    size_t at = w->oi_all.len;
    int rc = floe_pq_offset_index_encode(&oi, &w->oi_all, err);
    floe_free(oi.page_locations);
    if (rc < 0)
        return rc;
    ref->oi_off = (int64_t)at;
    ref->oi_len = (int32_t)(w->oi_all.len - at);
    if (ch->column_index && ch->column_index_len && ch->column_index_len <= INT32_MAX) {
        at = w->ci_all.len;
        if ((rc = floe_buf_append(&w->ci_all, ch->column_index, ch->column_index_len)) < 0)
            return floe_error_set(err, rc, "out of memory");
        ref->ci_off = (int64_t)at;
        ref->ci_len = (int32_t)ch->column_index_len;
    }
    return 0;
}

int pq_writer_add_copied_row_group(floe_pq_writer *w, const pq_copy_chunk *chunks, size_t n,
                                   int64_t num_rows, floe_error *err) {
    int rc = 0;
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    if (n != w->ncols || num_rows <= 0)
        FLOE_FAIL(err, FLOE_EINVALID, "copied row group: %zu columns and %lld rows for a "
                  "schema of %zu columns", n, (long long)num_rows, w->ncols);
    for (size_t i = 0; i < n; i++) {
        const col *c = &w->cols[i];
        int32_t t = c->phys == FLOE_PHYS_FIXED ? FLOE_PQ_FIXED_LEN_BYTE_ARRAY : (int32_t)c->phys;
        if (chunks[i].meta->type != t || chunks[i].meta->codec != (int32_t)w->opts.codec ||
            chunks[i].len != (uint64_t)chunks[i].meta->total_compressed_size)
            FLOE_FAIL(err, FLOE_EINVALID, "copied row group: column %s does not match the "
                      "writer's type or codec", c->leaf->name);
    }
    if (w->nrgs == w->rgs_cap) {
        size_t nc = w->rgs_cap ? w->rgs_cap * 2 : 8;
        floe_pq_row_group *g = floe_realloc(w->rgs, nc * sizeof *g);
        if (!g)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        w->rgs = g;
        chunk_index_ref *r = floe_realloc(w->refs, nc * (w->ncols ? w->ncols : 1) * sizeof *r);
        if (!r)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        w->refs = r;
        w->rgs_cap = nc;
    }
    floe_pq_row_group *rg = &w->rgs[w->nrgs];
    memset(rg, 0, sizeof *rg);
    rg->columns = floe_arena_alloc(&w->arena, (n ? n : 1) * sizeof *rg->columns);
    if (!rg->columns)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    rg->n_columns = n;
    rg->num_rows = num_rows;
    rg->has_file_offset = true;
    rg->file_offset = w->pos; /* first page of the first chunk */
    int64_t total_unc = 0, total_comp = 0;
    for (size_t i = 0; i < n; i++) {
        const pq_copy_chunk *ch = &chunks[i];
        col *c = &w->cols[i];
        int64_t delta = w->pos - ch->src_start;
        FLOE_CHECK(write_out(w, ch->bytes, ch->len, err));
        if (copy_chunk_meta(w, c, ch, delta, &rg->columns[i]) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(copy_chunk_index(w, ch, delta, &w->refs[w->nrgs * w->ncols + i], err));
        if (ch->has_bounds &&
            (rc = vstat_merge_bounds(c, &c->fstat, ch->min.p, ch->min.n, !ch->min_exact,
                                     ch->max.p, ch->max.n, !ch->max_exact)) < 0)
            FLOE_FAIL(err, rc, "out of memory");
        c->f_values += ch->meta->num_values;
        c->f_nulls += ch->nulls;
        c->f_nans += ch->nans;
        c->f_size += ch->meta->total_compressed_size;
        total_unc += ch->meta->total_uncompressed_size;
        total_comp += ch->meta->total_compressed_size;
    }
    rg->total_byte_size = total_unc;
    rg->has_total_compressed_size = true;
    rg->total_compressed_size = total_comp;
    if (w->nrgs <= INT16_MAX) {
        rg->has_ordinal = true;
        rg->ordinal = (int16_t)w->nrgs;
    }
    w->nrgs++;
    w->total_rows += num_rows;
done:
    if (rc < 0)
        w->failed = rc;
    return rc;
}
