/*
 * writer.c - the Parquet writer (floe/parquet.h): the public API, appending values, pages,
 * row groups, the page index and the footer. Statistics, the dictionary, schema
 * conversion, write-behind and copied row groups have their own files (the list is in
 * writer_internal.h).
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
 *     variant_shredding auto: open leaves the writer HOLDING (no columns yet): write_batch
 *     copies rows into w->held (hold_rows) until PQW_AUTO_SAMPLE_ROWS rows or a row
 *     group's bytes; then, or at the first flush, close or copy_row_group, settle_auto
 *     chooses the paths, creates the columns and writes the held rows: ACCEPTING.
 *
 * Write-behind (opts.write_behind, writer_behind.c): flush_chunk hands the storage of
 * each chunk (and its dictionary page) to a writer thread instead of writing it, in file
 * order, and the column starts its next chunk in a new buffer. w->pos counts the
 * handed-over bytes, so offsets are computed as before. Every other write (page index,
 * footer, copied row groups) first waits until the thread has written everything
 * (pqw_wb_drain), so the bytes reach the output in order and only one thread touches it
 * at a time. The thread's first error stops it (later buffers are freed unwritten) and
 * is returned by the next hand-over or drain. At most WB_MAX_BYTES wait in the queue: a
 * hand-over beyond that waits for the thread, so memory does not depend on how fast the
 * device is.
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
#include <sys/mman.h>
#include <unistd.h>

#include "parquet/encoding.h"
#include "parquet/metadata.h"
#include "parquet/writer_copy.h"
#include "parquet/writer_internal.h"

#ifndef FLOE_BUILD_ID
#define FLOE_BUILD_ID "unknown"
#endif

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
 * Appending values to the page being built
 * =================================================================================== */

static int grow_arr(void **p, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first;
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

static int add_fixed(col *c, const uint8_t *v, size_t nv) {
    size_t w = (size_t)c->width;
    int rc;
    bool track = c->mode == MODE_DICT && c->track_entries;
    if (!track && (rc = pqw_span_stats_fixed(c, v, nv)) < 0)
        return rc;
    c->pplain_est += nv * w;
    if (c->mode == MODE_DICT) {
        if ((rc = grow_arr((void **)&c->pidx, &c->pidx_cap, c->pvalues + nv, sizeof *c->pidx,
                            1024)) < 0)
            return rc;
        uint32_t *out = c->pidx + c->pvalues;
        if ((rc = pqw_dict_add_fixed(c, v, nv, out)) < 0)
            return rc;
        if (track)
            pqw_dict_track(c, out, nv);
    } else if ((rc = pplain_start(c)) < 0 || (rc = floe_buf_append(&c->pplain, v, nv * w)) < 0) {
        return rc;
    }
    c->pvalues += nv;
    return 0;
}

/* A geometry or geography column's values into the chunk's bounding box and types. A
 * value that is not WKB (ingest refuses them, but a rewrite copies another writer's
 * bytes as they are) gives up the chunk's statistics and the file's bounds. */
static void geo_box_add(col *c, const uint8_t *data, const uint32_t *off, size_t nv) {
    if (!c->leaf->geo)
        return;
    for (size_t i = 0; c->geo_chunk_ok && i < nv; i++) {
        floe_error e;
        floe_error_clear(&e);
        if (floe_wkb_bbox_add(&c->geo_chunk, data + off[i], off[i + 1] - off[i], &e) < 0)
            c->geo_chunk_ok = false;
    }
}

/* The chunk's GeospatialStatistics (Geospatial.md "Statistics") into m, then the chunk's
 * box into the file's. No statistics when a value was not WKB or the chunk has none. */
static int geo_chunk_flush(floe_pq_writer *w, col *c, floe_pq_column_metadata *m) {
    const floe_wkb_bbox *b = &c->geo_chunk;
    if (c->geo_chunk_ok && b->types) {
        floe_pq_geospatial_statistics *g = &m->geospatial_statistics;
        int32_t codes[FLOE_WKB_MAX_TYPES];
        size_t n = floe_wkb_bbox_types(b, codes);
        m->has_geospatial_statistics = true;
        g->has_types = true;
        g->geospatial_types = floe_arena_memdup(&w->arena, codes, n * sizeof *codes);
        g->n_types = n;
        if (!g->geospatial_types)
            return FLOE_ENOMEM;
        bool box = b->seen[0] && b->seen[1] &&
                   (c->leaf->geo == FLOE_GEO_GEOMETRY || floe_wkb_bbox_geography_ok(b));
        if (box) {
            g->has_bbox = true;
            g->bbox = (floe_pq_bounding_box){
                .xmin = b->min[0], .xmax = b->max[0], .ymin = b->min[1], .ymax = b->max[1],
                .has_z = b->seen[2], .zmin = b->min[2], .zmax = b->max[2],
                .has_m = b->seen[3], .mmin = b->min[3], .mmax = b->max[3]};
        }
    }
    if (!c->geo_chunk_ok)
        c->geo_box_ok = false;
    else
        floe_wkb_bbox_merge(&c->geo_box, b);
    c->geo_chunk_ok = true;
    floe_wkb_bbox_init(&c->geo_chunk);
    return 0;
}

static int add_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv) {
    int rc;
    geo_box_add(c, data, off, nv);
    if ((c->mode != MODE_DICT || !c->track_entries) &&
        (rc = pqw_span_minmax_bytes(c, data, off, nv)) < 0)
        return rc;
    c->pplain_est += (size_t)(off[nv] - off[0]) + 4 * nv;
    if (c->mode == MODE_DICT) {
        if ((rc = grow_arr((void **)&c->pidx, &c->pidx_cap, c->pvalues + nv, sizeof *c->pidx,
                            1024)) < 0)
            return rc;
        uint32_t *out = c->pidx + c->pvalues;
        if ((rc = pqw_dict_add_bytes(c, data, off, nv, out)) < 0)
            return rc;
        if (c->track_entries)
            pqw_dict_track(c, out, nv);
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

/* All open pages' unencoded levels, and the least page_row_limit scaled to meet it. */
#define PAGE_LEVELS_BUDGET ((size_t)16 << 20)
#define PAGE_ROWS_FLOOR ((size_t)1024)

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
    int rc = pqw_dict_stat_flush(c);
    if (rc < 0)
        return rc;
    rc = page_dict_to_plain(c);
    if (rc < 0)
        return rc;
    pqw_dict_clear(c);
    pqw_dict_drop_tables(c);
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

/* Chunk segments: the first fits the chunk's first page (from CHUNK_SEG_MIN bytes, in
 * powers of two, up to CHUNK_SEG0), the second holds at least CHUNK_SEG0 bytes, each next
 * one twice the last, up to CHUNK_SEG_MAX (a page larger than that gets a segment of its
 * own size). A small first segment keeps the many small chunks of a wide schema small:
 * malloc's heap is in huge pages (floe convert), so untouched room is memory too. */
#define CHUNK_SEG_MIN ((size_t)4 << 10)
#define CHUNK_SEG0 ((size_t)64 << 10)
#define CHUNK_SEG_MAX ((size_t)8 << 20)

/* The segment of c's chunk with room for n more bytes (a new one if the last has none). */
static floe_buf *chunk_room(floe_pq_writer *w, col *c, size_t n) {
    if (c->nsegs > 0) {
        floe_buf *last = &c->segs[c->nsegs - 1];
        if (last->len == 0 || last->cap - last->len > n) /* reserve keeps one byte for a NUL */
            return last;
    }
    if (c->nsegs == c->segs_cap) {
        size_t nc = c->segs_cap ? c->segs_cap * 2 : 8;
        floe_buf *s = floe_realloc(c->segs, nc * sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = c->segs_cap; i < nc; i++)
            floe_buf_init(&s[i], 0);
        c->segs = s;
        c->segs_cap = nc;
    }
    size_t size = CHUNK_SEG_MIN;
    if (c->nsegs > 0) {
        size = c->segs[c->nsegs - 1].cap * 2;
        if (size < CHUNK_SEG0)
            size = CHUNK_SEG0;
        if (size > CHUNK_SEG_MAX)
            size = CHUNK_SEG_MAX;
    } else {
        while (size <= n && size < CHUNK_SEG0)
            size *= 2;
    }
    floe_buf *b = &c->segs[c->nsegs];
    if (size >= CHUNK_SEG_HUGE && size > n && b->cap == 0 && pqw_seg_take(w, size, b)) {
        /* a segment of an earlier row group: its pages are there already */
    } else if (size >= CHUNK_SEG_HUGE && size > n && b->cap == 0) {
        /* fresh memory filled once: in 2 MiB pages it costs a fault per 2 MiB instead of
         * 512 (a column past its first 2 MiB; its last page is at most 2 MiB unused) */
        uint8_t *d = floe_alloc_huge(size);
        if (!d)
            return NULL;
        b->data = d;
        b->cap = size;
        pqw_seg_held(w, size);
    } else if (floe_buf_reserve(b, size > n ? size - 1 : n) < 0) { /* reserve adds the NUL's byte */
        return NULL;
    }
#ifdef MADV_POPULATE_WRITE
    else if (c->nsegs > 0) {
        /* the chunk's next segment is filled whole unless the chunk ends first: its
         * pages in one call rather than a fault each (the first segment stays lazy: a
         * small column may never fill it) */
        long pg = sysconf(_SC_PAGESIZE);
        uintptr_t m = (uintptr_t)(pg > 0 ? pg : 4096) - 1;
        uintptr_t lo = ((uintptr_t)b->data + m) & ~m, hi = ((uintptr_t)b->data + b->cap) & ~m;
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
    }
#endif
    c->nsegs++;
    return b;
}

/* A page header but for its compressed size and checksum. */
static void page_header_fill(floe_pq_page_header *ph, int page_type, int encoding,
                             int32_t nvals, const floe_pq_statistics *stats, size_t blen) {
    memset(ph, 0, sizeof *ph);
    ph->type = page_type;
    ph->uncompressed_page_size = (int32_t)blen;
    if (page_type == FLOE_PQ_DICTIONARY_PAGE) {
        ph->has_dictionary_page_header = true;
        ph->dictionary_page_header.num_values = nvals;
        ph->dictionary_page_header.encoding = FLOE_PQ_ENC_PLAIN;
    } else {
        ph->has_data_page_header = true;
        ph->data_page_header.num_values = nvals;
        ph->data_page_header.encoding = encoding;
        ph->data_page_header.definition_level_encoding = FLOE_PQ_ENC_RLE;
        ph->data_page_header.repetition_level_encoding = FLOE_PQ_ENC_RLE;
        if (stats) {
            ph->data_page_header.has_statistics = true;
            ph->data_page_header.statistics = *stats;
        }
    }
}

/* Pages from this many bytes on are compressed straight into the chunk (see
 * write_page_in_place). */
#define PAGE_IN_PLACE_MIN ((size_t)4 << 10)

/* write_page of a page to compress into c's chunk: the compressed bytes go straight
 * into the segment, after room for the header, instead of into sc->comp and then copied
 * (that copy was 5% of a conversion). The header's length depends on the compressed size
 * and the checksum (varints), so the room is a guess - half the page, and a checksum of
 * five bytes, as most are - and the payload moves when the guess was wrong. The bytes
 * are those write_page writes. */
static int write_page_in_place(floe_pq_writer *w, enc_scratch *sc, col *c, int page_type,
                               int encoding, int32_t nvals, const floe_pq_statistics *stats,
                               const uint8_t *bdata, size_t blen, int64_t *uncompressed,
                               floe_error *err) {
    int rc;
    floe_pq_page_header ph;
    page_header_fill(&ph, page_type, encoding, nvals, stats, blen);
    ph.compressed_page_size = (int32_t)(blen / 2);
    if (w->opts.page_checksum) {
        ph.has_crc = true;
        ph.crc = (int32_t)0x40000000; /* zigzag 2^31: five bytes */
    }
    floe_buf_reset(&sc->hdr);
    if ((rc = floe_pq_page_header_encode(&ph, &sc->hdr, err)) < 0)
        return rc;
    size_t guess = sc->hdr.len;
    floe_buf *dst = chunk_room(w, c, guess + blen + blen / 6 + 64); /* snappy's bound and more */
    if (!dst)
        return floe_error_set(err, FLOE_ENOMEM, "column %s: buffering page: out of memory",
                              c->leaf->name);
    size_t before = dst->len;
    dst->len = before + guess;
    if ((rc = floe_codec_compress(sc->cctx, w->opts.codec, w->opts.codec_level, bdata, blen,
                                  dst, err)) < 0) {
        dst->len = before;
        return rc;
    }
    size_t plen = dst->len - before - guess;
    if (plen > INT32_MAX) {
        dst->len = before;
        return floe_error_set(err, FLOE_ELIMIT, "compressed page too large");
    }
    ph.compressed_page_size = (int32_t)plen;
    if (w->opts.page_checksum)
        ph.crc = (int32_t)floe_crc32(0, dst->data + before + guess, plen);
    floe_buf_reset(&sc->hdr);
    if ((rc = floe_pq_page_header_encode(&ph, &sc->hdr, err)) < 0) {
        dst->len = before;
        return rc;
    }
    size_t hl = sc->hdr.len;
    if (hl != guess) {
        if (hl > guess && floe_buf_reserve(dst, hl - guess) < 0) {
            dst->len = before;
            return floe_error_set(err, FLOE_ENOMEM, "column %s: buffering page: out of memory",
                                  c->leaf->name);
        }
        memmove(dst->data + before + hl, dst->data + before + guess, plen);
        dst->len = before + hl + plen;
    }
    memcpy(dst->data + before, sc->hdr.data, hl);
    *uncompressed += (int64_t)(hl + blen);
    c->chunk_len += hl + plen;
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
    if (!dst && stored_ulen < 0 && w->opts.codec != FLOE_CODEC_UNCOMPRESSED &&
        blen >= PAGE_IN_PLACE_MIN && blen <= INT32_MAX / 2)
        return write_page_in_place(w, sc, c, page_type, encoding, nvals, stats, bdata, blen,
                                   uncompressed, err);
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
    page_header_fill(&ph, page_type, encoding, nvals, stats, blen);
    ph.compressed_page_size = (int32_t)plen;
    if (w->opts.page_checksum) {
        ph.has_crc = true;
        ph.crc = (int32_t)floe_crc32(0, payload, plen);
    }
    floe_buf_reset(&sc->hdr);
    if ((rc = floe_pq_page_header_encode(&ph, &sc->hdr, err)) < 0)
        return rc;
    if (!dst && !(dst = chunk_room(w, c, sc->hdr.len + plen)))
        return floe_error_set(err, FLOE_ENOMEM, "column %s: buffering page: out of memory",
                              c->leaf->name);
    size_t before = dst->len;
    if ((rc = floe_buf_append(dst, sc->hdr.data, sc->hdr.len)) < 0 ||
        (rc = floe_buf_append(dst, payload, plen)) < 0)
        return floe_error_set(err, rc, "column %s: buffering page: %s", c->leaf->name,
                              floe_strerror(rc));
    *uncompressed += (int64_t)(sc->hdr.len + blen);
    if (dst != &c->fdict)
        c->chunk_len += dst->len - before;
    return 0;
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
    pe.offset = (int64_t)c->chunk_len;
    pe.first_row = c->chunk_rows;
    pe.nulls = c->pnulls;
    pe.nans = c->pnans;
    pe.null_page = c->pvalues == 0;
    pe.all_nan = c->pvalues > 0 && !c->pstat.has;
    floe_pq_statistics st, *stp = NULL;
    bounds b;
    memset(&b, 0, sizeof b);
    if (c->pstat.has) {
        if ((rc = pqw_make_bounds(c, &c->pstat, w->opts.stats_truncate_length, &c->pi_bounds, &b)) <
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
        pqw_stats_point(c, &st, &c->pi_bounds, &b, c->pstat.has);
        stp = &st;
    }
    if ((rc = write_page(w, sc, c, FLOE_PQ_DATA_PAGE, encoding, (int32_t)c->plevels, stp, bdata,
                         blen, stored_ulen, NULL, &c->chunk_uncompressed, err)) < 0)
        return rc;
    pe.size = (int32_t)((int64_t)c->chunk_len - pe.offset);
    if ((rc = grow_arr((void **)&c->pages, &c->pages_cap, c->npages + 1, sizeof *c->pages, 4)) <
        0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    c->pages[c->npages++] = pe;

    if ((rc = pqw_vstat_merge_stat(c, &c->cstat, &c->pstat)) < 0)
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
    pqw_vstat_reset(&c->pstat);
    return 0;
}

static int cut_page(floe_pq_writer *w, enc_scratch *sc, col *c, floe_error *err) {
    int rc;
    if (c->plevels == 0)
        return 0;
    if (c->plevels > INT32_MAX)
        return floe_error_set(err, FLOE_ELIMIT, "column %s: page with %zu values",
                              c->leaf->name, c->plevels);
    if ((rc = pqw_dict_stat_flush(c)) < 0)
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
                           sizeof *c->pdef, 1024)) < 0)
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
                pqw_dict_drop_tables(c);
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
    if (c->phys == FLOE_PHYS_BYTE_ARRAY) {
        geo_box_add(c, cb->values, cb->offsets + pg->value0, pg->nvalues);
        rc = pqw_span_minmax_bytes(c, cb->values, cb->offsets + pg->value0, pg->nvalues);
    } else {
        rc = pqw_span_stats_fixed(c, cb->values + pg->value0 * (size_t)c->width, pg->nvalues);
    }
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
    return c->chunk_len + c->dplain.len + page_est(c);
}

static size_t buffered_bytes(const floe_pq_writer *w) {
    size_t t = w->auto_pending ? floe_batch_bytes(&w->held) : 0;
    for (size_t i = 0; i < w->ncols; i++)
        t += col_buffered(&w->cols[i]);
    return t;
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
            int cmin =
                pqw_cmp_plain(c, b + prev->min_off, prev->min_len, b + p->min_off, p->min_len);
            int cmax =
                pqw_cmp_plain(c, b + prev->max_off, prev->max_len, b + p->max_off, p->max_len);
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
    bool ci_ok = !c->leaf->geo; /* no order for WKB: no min/max per page */
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
    size_t dict_len = c->fdict.len, chunk_len = c->chunk_len;
    rc = pqw_write_out_buf(w, &c->fdict, err);
    floe_buf_free(&c->fdict); /* up to the dictionary limit per column: not kept */
    if (rc < 0)
        return rc;
    int64_t data_start = w->pos;
    for (size_t i = 0; i < c->nsegs; i++)
        if ((rc = pqw_write_out_buf(w, &c->segs[i], err)) < 0)
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
    if ((rc = pqw_stats_fill(w, c, &c->cstat, c->chunk_nulls, c->chunk_nans, &sc->tmp,
                             &m->statistics, &b)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);
    if (c->cstat.has) {
        uint8_t *copy = floe_arena_memdup(&w->arena, sc->tmp.data, sc->tmp.len ? sc->tmp.len : 1);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_buf view = {.data = copy, .len = sc->tmp.len, .cap = sc->tmp.len, .max = 0};
        pqw_stats_point(c, &m->statistics, &view, &b, true);
    }
    if (nenc && !m->encodings)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if ((rc = geo_chunk_flush(w, c, m)) < 0)
        return floe_error_set(err, rc, "column %s: out of memory", c->leaf->name);

    if (w->opts.write_page_index) {
        if ((rc = encode_page_index(w, c, data_start, ref, err)) < 0)
            return rc;
    } else {
        ref->ci_off = ref->oi_off = -1;
    }

    /* file totals */
    if ((rc = pqw_vstat_merge_stat(c, &c->fstat, &c->cstat)) < 0)
        return floe_error_set(err, rc, "out of memory");
    c->f_values += c->chunk_values;
    c->f_nulls += c->chunk_nulls;
    c->f_nans += c->chunk_nans;
    c->f_size += m->total_compressed_size;

    /* reset the chunk */
    /* the first segment is kept (without write-behind it still has its storage) */
    if (c->nsegs > 0)
        floe_buf_reset(&c->segs[0]);
    for (size_t i = 1; i < c->nsegs; i++)
        pqw_seg_keep(w, &c->segs[i]);
    c->nsegs = c->segs_cap && c->segs[0].cap ? 1 : 0;
    c->chunk_len = 0;
    c->chunk_rows = c->chunk_values = c->chunk_nulls = c->chunk_nans = 0;
    c->chunk_uncompressed = 0;
    pqw_vstat_reset(&c->cstat);
    c->plain_pages = c->delta_pages = 0;
    c->npages = 0;
    floe_buf_reset(&c->pi_bounds);
    pqw_dict_clear(c);
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
    pqw_seg_row_group_done(w);
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
 * Public API
 * =================================================================================== */

static void col_init(floe_pq_writer *w, col *c, const floe_field *leaf) {
    memset(c, 0, sizeof *c);
    c->leaf = leaf;
    c->phys = leaf->phys;
    c->width = c->phys == FLOE_PHYS_BYTE_ARRAY ? 0 : floe_phys_width(leaf->phys, leaf->type_length);
    c->max_def = leaf->def_level;
    c->max_rep = leaf->rep_level;
    c->geo_box_ok = c->geo_chunk_ok = true;
    floe_wkb_bbox_init(&c->geo_box);
    floe_wkb_bbox_init(&c->geo_chunk);
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
    pqw_vstat_free(&c->pstat);
    floe_free(c->slots);
    floe_free(c->kslots);
    floe_free(c->dhash);
    floe_free(c->doff);
    floe_free(c->dstamp);
    floe_buf_free(&c->dplain);
    for (size_t i = 0; i < c->segs_cap; i++)
        floe_buf_free(&c->segs[i]);
    floe_free(c->segs);
    floe_buf_free(&c->fdict);
    pqw_vstat_free(&c->cstat);
    floe_free(c->pages);
    floe_buf_free(&c->pi_bounds);
    pqw_vstat_free(&c->fstat);
}

static void writer_free(floe_pq_writer *w) {
    if (!w)
        return;
    pqw_wb_stop(w);
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
    pqw_seg_release(w);
    floe_free(w->seg_pool);
    pthread_mutex_destroy(&w->seg_mu);
    floe_free(w->rgs);
    floe_free(w->refs);
    floe_buf_free(&w->ci_all);
    floe_buf_free(&w->oi_all);
    pqw_shred_free(w->shred);
    floe_batch_free(&w->held);
    floe_free(w);
}

/* The column writers and the Parquet schema of w->schema. */
static int writer_columns(floe_pq_writer *w, floe_error *err) {
    const floe_schema *schema = w->schema;
    w->cols = floe_calloc(schema->nleaves ? schema->nleaves : 1, sizeof *w->cols);
    if (!w->cols)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    w->ncols = schema->nleaves;
    for (size_t i = 0; i < w->ncols; i++) {
        const floe_field *leaf = schema->leaves[i];
        if (leaf->phys == FLOE_PHYS_INT96)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "field '%s': INT96 is read-only",
                                  leaf->name);
        if (leaf->phys == FLOE_PHYS_FIXED && leaf->type_length <= 0)
            return floe_error_set(err, FLOE_EINVALID, "field '%s': fixed length %d",
                                  leaf->name, (int)leaf->type_length);
        col_init(w, &w->cols[i], leaf);
    }
    return pqw_build_schema(w, err);
}

int floe_pq_writer_open(floe_io *io, const char *uri, const floe_schema *schema,
                        const floe_pq_write_options *opts, floe_pq_writer **out,
                        floe_error *err) {
    int rc = 0;
    floe_pq_writer *w = floe_calloc(1, sizeof *w);
    if (!w)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_init(&w->seg_mu, NULL);
    atomic_init(&w->seg_pool_bytes, 0);
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
    /* A page holds its levels unencoded (2 bytes each) until it is cut, and page_est counts
     * them as bits: with many leaves, page_row_limit rows x leaves x 2 bytes is what every
     * open page holds whatever row_group_size says. Scale the limit down so all the open
     * pages' levels stay within PAGE_LEVELS_BUDGET; schemas of up to ~400 leaves keep it. */
    if (schema->nleaves) {
        size_t cap = PAGE_LEVELS_BUDGET / (2 * schema->nleaves);
        if (cap < PAGE_ROWS_FLOOR)
            cap = PAGE_ROWS_FLOOR;
        if (o->page_row_limit > cap)
            o->page_row_limit = cap;
    }
    o->variant_shredding[FLOE_PQ_SHREDDING_MAX - 1] = 0;
    if (pqw_shred_is_auto(o->variant_shredding)) {
        /* the columns wait for the rows the paths are chosen from (settle_auto) */
        w->auto_pending = floe_schema_has_variant(schema);
        w->logical = schema;
        if (w->auto_pending && floe_batch_init(&w->held, schema) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    } else if (o->variant_shredding[0]) {
        FLOE_CHECK(pqw_shred_new(schema, o->variant_shredding, &w->shred, err));
        w->schema = schema = pqw_shred_schema(w->shred);
    }
    if (!w->auto_pending)
        FLOE_CHECK(writer_columns(w, err));

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
    FLOE_CHECK(pqw_write_out(w, "PAR1", 4, err));
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

static int write_rows(floe_pq_writer *w, const floe_batch *b, floe_error *err);

/* The row group ends with more rows to come: its chunk segments are kept for the next
 * one's (seg_pool), where floe_pq_writer_flush frees them. */
static int end_row_group(floe_pq_writer *w, floe_error *err) {
    w->seg_pool_on = true; /* the next row group fills as many segments */
    int rc = flush_row_group(w, err);
    w->seg_pool_on = false;
    return rc;
}

/* variant_shredding auto: choose the paths from sample (NULL: the rows held), set up the
 * columns, and write the rows held. Nothing to do once chosen. */
static int settle_auto(floe_pq_writer *w, const floe_batch *sample, floe_error *err) {
    if (!w->auto_pending)
        return 0;
    FLOE_FORWARD_IF_ERROR(
        pqw_shred_new_auto(w->logical, sample ? sample : &w->held, &w->shred, err));
    if (w->shred)
        w->schema = pqw_shred_schema(w->shred);
    w->auto_pending = false;
    FLOE_FORWARD_IF_ERROR(writer_columns(w, err));
    if (w->held.nrows)
        FLOE_FORWARD_IF_ERROR(write_rows(w, &w->held, err));
    floe_batch_free(&w->held);
    return 0;
}

/* While auto has not chosen: hold b's rows (1), and choose once PQW_AUTO_SAMPLE_ROWS rows
 * or a row group's worth are held; or, when nothing is held and b has that many rows,
 * choose from b alone and leave b to the caller to write (0). */
int pqw_settle_auto(floe_pq_writer *w, floe_error *err) {
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    return settle_auto(w, NULL, err);
}

static int hold_rows(floe_pq_writer *w, const floe_batch *b, floe_error *err) {
    if (w->held.nrows == 0 && b->nrows >= PQW_AUTO_SAMPLE_ROWS)
        return settle_auto(w, b, err);
    floe_batch_cursor cur;
    if (floe_batch_cursor_init(&cur, b) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_batch_take_rows(&w->held, b, &cur, b->nrows);
    floe_batch_cursor_free(&cur);
    if (rc < 0)
        return floe_error_set(err, rc, "parquet writer: holding a batch of %zu rows: %s",
                              b->nrows, floe_strerror(rc));
    if (w->held.nrows >= PQW_AUTO_SAMPLE_ROWS ||
        floe_batch_bytes(&w->held) >= w->opts.row_group_size)
        FLOE_FORWARD_IF_ERROR(settle_auto(w, NULL, err));
    return 1;
}

int floe_pq_writer_write_batch(floe_pq_writer *w, const floe_batch *b, floe_error *err) {
    int rc = 0;
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    if (w->auto_pending) {
        if (b->ncols != w->logical->nleaves)
            FLOE_FAIL(err, FLOE_EINVALID, "batch has %zu columns, schema %zu", b->ncols,
                      w->logical->nleaves);
        FLOE_CHECK(hold_rows(w, b, err));
        if (rc == 1) {
            rc = 0;
            goto done;
        }
    }
    rc = write_rows(w, b, err);
done:
    if (rc < 0)
        w->failed = rc;
    return rc;
}

/* b's rows into the columns (w->schema chosen). */
static int write_rows(floe_pq_writer *w, const floe_batch *b, floe_error *err) {
    int rc = 0;
    if (w->shred)
        FLOE_CHECK(pqw_shred_batch(w->shred, b, &b, err));
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
        FLOE_CHECK(end_row_group(w, err));
done:
    if (rc < 0)
        w->failed = rc;
    return rc;
}

/* The caller ends the row group: to free memory (flush), or with more rows to come (keep:
 * the next row group reuses its segments). */
static int caller_ends_row_group(floe_pq_writer *w, bool keep, floe_error *err) {
    if (w->failed)
        return floe_error_set(err, w->failed, "parquet writer: an earlier error stopped it");
    int rc = settle_auto(w, NULL, err);
    if (rc == 0)
        rc = keep ? end_row_group(w, err) : flush_row_group(w, err);
    if (!keep)
        pqw_seg_release(w); /* asked to flush: to free memory */
    if (rc < 0)
        w->failed = rc;
    return rc;
}

int floe_pq_writer_flush(floe_pq_writer *w, floe_error *err) {
    return caller_ends_row_group(w, false, err);
}

int floe_pq_writer_end_row_group(floe_pq_writer *w, floe_error *err) {
    return caller_ends_row_group(w, true, err);
}

int64_t floe_pq_writer_row_groups(const floe_pq_writer *w) { return (int64_t)w->nrgs; }

int64_t floe_pq_writer_bytes_written(const floe_pq_writer *w) {
    return w->pos + (int64_t)buffered_bytes(w);
}

int64_t floe_pq_writer_rows(const floe_pq_writer *w) {
    return w->total_rows + (w->auto_pending ? (int64_t)w->held.nrows : 0);
}

int64_t floe_pq_writer_carried_pages(const floe_pq_writer *w) {
    int64_t n = 0;
    for (size_t i = 0; i < w->ncols; i++)
        n += w->cols[i].carried_pages;
    return n;
}

size_t floe_pq_writer_buffered_bytes(const floe_pq_writer *w) {
    return buffered_bytes(w) + pqw_seg_pool_bytes(w);
}

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
        floe_free(fi->columns[i].variant_path);
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
        ci->field = w->shred ? pqw_shred_logical_leaf(w->shred, i) : c->leaf;
        ci->field_id = c->leaf->id;
        ci->repeated = c->max_rep > 0;
        ci->column_size = c->f_size;
        ci->value_count = c->f_values;
        ci->null_value_count = c->f_nulls;
        ci->has_nan_count = c->is_float;
        ci->nan_value_count = c->f_nans;
        size_t vcol;
        int shredded = w->shred ? pqw_shred_typed_leaf(w->shred, i, &ci->variant_id, &vcol,
                                                       &tmp)
                                : 0;
        if (shredded < 0)
            FLOE_FAIL(err, shredded, "out of memory");
        if (shredded) {
            if (!(ci->variant_path = floe_strndup((const char *)tmp.data, tmp.len)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            ci->variant_type = c->leaf->type;
            ci->variant_uniform =
                vcol < w->ncols && w->cols[vcol].f_nulls == w->cols[vcol].f_values;
        }
        if (c->leaf->geo) {
            uint8_t lo[32], hi[32];
            size_t len;
            if (!c->geo_box_ok ||
                (c->leaf->geo == FLOE_GEO_GEOGRAPHY && !floe_wkb_bbox_geography_ok(&c->geo_box)) ||
                !floe_wkb_bbox_bounds(&c->geo_box, lo, hi, &len))
                continue;
            ci->lower_bound = floe_malloc(len);
            ci->upper_bound = floe_malloc(len);
            if (!ci->lower_bound || !ci->upper_bound)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            memcpy(ci->lower_bound, lo, len);
            memcpy(ci->upper_bound, hi, len);
            ci->lower_len = ci->upper_len = len;
            ci->has_bounds = true;
            continue;
        }
        if (!c->fstat.has)
            continue;
        bounds b;
        floe_buf_reset(&tmp);
        /* exact: the table's metrics mode decides what the manifest keeps of them */
        if ((rc = pqw_make_bounds(c, &c->fstat, 0, &tmp, &b)) < 0)
            FLOE_FAIL(err, rc, "out of memory");
        ci->lower_bound = floe_malloc(b.min_len ? b.min_len : 1);
        ci->upper_bound = floe_malloc(b.max_len ? b.max_len : 1);
        if (!ci->lower_bound || !ci->upper_bound)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (b.min_len) /* an empty string's bound: tmp may hold nothing */
            memcpy(ci->lower_bound, tmp.data + b.min_off, b.min_len);
        if (b.max_len)
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
    FLOE_CHECK(settle_auto(w, NULL, err));
    FLOE_CHECK(flush_row_group(w, err));
    pqw_seg_release(w);

    /* page index: every ColumnIndex, then every OffsetIndex (PageIndex.md layout) */
    int64_t ci_base = w->pos;
    FLOE_CHECK(pqw_write_out(w, w->ci_all.data, w->ci_all.len, err));
    int64_t oi_base = w->pos;
    FLOE_CHECK(pqw_write_out(w, w->oi_all.data, w->oi_all.len, err));
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
    FLOE_CHECK(pqw_write_out(w, footer.data, footer.len, err));
    FLOE_CHECK(pqw_write_out(w, tail, 8, err));
    if (out)
        FLOE_CHECK(make_file_info(w, &fi, err));
    FLOE_CHECK(pqw_wb_drain(w, err));
    pqw_wb_stop(w);
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
    pqw_wb_stop(w); /* idle after the footer's write; on failure its queue is dropped */
    if (w->out)
        floe_output_abort(w->out);
    writer_free(w);
    return rc;
}

void floe_pq_writer_abort(floe_pq_writer *w) {
    if (!w)
        return;
    pqw_wb_stop(w);
    if (w->out)
        floe_output_abort(w->out);
    writer_free(w);
}
