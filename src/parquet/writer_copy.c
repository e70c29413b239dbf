/*
 * writer_copy.c - loading a row group of a Parquet file as stored bytes, checked, so that
 * the writer can place it in another file without decoding it (floe/parquet_copy.h), and
 * placing it there (pq_writer_add_copied_row_group: offsets re-based, statistics merged
 * into the file metrics).
 *
 * Spec: apache/parquet-format parquet.thrift: ColumnMetaData (data_page_offset,
 * dictionary_page_offset, total_compressed_size, statistics), ColumnChunk (offset and
 * column index offsets/lengths), PageHeader, OffsetIndex/PageLocation (offset is a file
 * offset, first_row_index is relative to the row group, compressed_page_size includes the
 * header), ColumnIndex (no offsets: copied as is), ColumnOrder (min_value/max_value follow
 * TYPE_DEFINED_ORDER).
 *
 * Invariants:
 *   C1. What is copied is exactly the chunk the metadata describes: the pages are walked
 *       header by header over total_compressed_size bytes, the first data page sits at
 *       data_page_offset, a dictionary page (only first) at dictionary_page_offset, and the
 *       data pages hold num_values values.
 *   C2. A page index is carried over only when its OffsetIndex lists exactly the walked
 *       data pages; otherwise the chunk loses its page index (never a wrong one).
 *   C3. The statistics used for the file metrics are bounds of every non-null, non-NaN
 *       value: new-style min_value/max_value under TYPE_DEFINED_ORDER, of the column's
 *       width, not NaN; a chunk without them is copyable only when it has no such value.
 *       Statistics marked inexact (truncated) are kept as bounds and said to be inexact
 *       (floe_pq_raw_row_group_exact), so the file info can say so too.
 *   C4. Everything the loaded row group points to is its own (it outlives the reader).
 */
#include "floe/parquet_copy.h"

#include <math.h>
#include <string.h>

#include "parquet/reader_internal.h"
#include "parquet/writer_copy.h"
#include "parquet/writer_internal.h"

#define COPY_MAX_INDEX_BYTES ((size_t)64 << 20)  /* one chunk's column or offset index */
#define COPY_MAX_RG_BYTES ((int64_t)2 << 30)     /* stored bytes of one copied row group */

struct floe_pq_raw_row_group {
    floe_arena arena;            /* metadata copies, offset indexes, column index bytes */
    floe_buf bytes;              /* every chunk's stored pages, chunk after chunk */
    size_t *at;                  /* per chunk: offset in bytes */
    pq_copy_chunk *chunks;
    size_t n;
    int64_t num_rows;
};

typedef struct walked_page {
    int64_t off;                 /* within the chunk */
    int64_t size;                /* header + compressed body */
    int64_t values;
} walked_page;

static int src_read(floe_pq_reader *r, int64_t off, uint8_t *buf, size_t n, floe_error *err) {
    if (off < 0 || off > r->file_size || (uint64_t)n > (uint64_t)(r->file_size - off))
        return floe_error_at(err, FLOE_ECORRUPT, off, "%s: read of %zu bytes at offset %lld "
                             "is past the end of the file", r->name, n, (long long)off);
    if (n == 0)
        return 0;
    if (r->mem) {
        memcpy(buf, r->mem + off, n);
        return 0;
    }
    return floe_input_read_at(r->in, off, buf, n, err);
}

void floe_pq_raw_row_group_free(floe_pq_raw_row_group *g) {
    if (!g)
        return;
    floe_arena_reset(&g->arena);
    floe_buf_free(&g->bytes);
    floe_free(g->at);
    floe_free(g->chunks);
    floe_free(g);
}

int64_t floe_pq_raw_row_group_rows(const floe_pq_raw_row_group *g) { return g->num_rows; }

bool floe_pq_raw_row_group_exact(const floe_pq_raw_row_group *g, size_t column) {
    if (column >= g->n)
        return false;
    const pq_copy_chunk *ch = &g->chunks[column];
    return !ch->has_bounds || (ch->min_exact && ch->max_exact);
}

int64_t floe_pq_raw_row_group_bytes(const floe_pq_raw_row_group *g) {
    return (int64_t)g->bytes.len;
}

static bool dup_bytes(floe_arena *a, floe_pq_bytes *b) {
    if (!b->n) {
        b->p = (const uint8_t *)"";
        return true;
    }
    b->p = floe_arena_memdup(a, b->p, b->n);
    return b->p != NULL;
}

static bool dup_arr(floe_arena *a, void *pp, size_t n, size_t elem) {
    void **p = pp;
    if (!n) {
        *p = NULL;
        return true;
    }
    *p = floe_arena_memdup(a, *p, n * elem);
    return *p != NULL;
}

/* A copy of the reader's ColumnMetaData that lives in the row group's arena (C4), without
 * what is not carried over (paths: the writer's; key-value metadata; bloom filter; index
 * page). */
static int own_meta(floe_arena *a, const floe_pq_column_metadata *in,
                    floe_pq_column_metadata **out) {
    floe_pq_column_metadata *m = floe_arena_alloc(a, sizeof *m);
    if (!m)
        return FLOE_ENOMEM;
    *m = *in;
    m->path_in_schema = NULL;
    m->n_path = 0;
    m->key_value_metadata = NULL;
    m->n_kv = 0;
    m->has_bloom_filter_offset = m->has_bloom_filter_length = false;
    m->has_index_page_offset = false;
    bool ok = dup_arr(a, &m->encodings, m->n_encodings, sizeof *m->encodings) &&
              dup_arr(a, &m->encoding_stats, m->n_encoding_stats, sizeof *m->encoding_stats);
    floe_pq_statistics *s = &m->statistics;
    if (m->has_statistics) {
        ok = ok && (!s->has_min || dup_bytes(a, &s->min)) &&
             (!s->has_max || dup_bytes(a, &s->max)) &&
             (!s->has_min_value || dup_bytes(a, &s->min_value)) &&
             (!s->has_max_value || dup_bytes(a, &s->max_value));
    }
    if (m->has_size_statistics) {
        floe_pq_size_statistics *z = &m->size_statistics;
        ok = ok && dup_arr(a, &z->repetition_level_histogram, z->n_rep_hist, sizeof(int64_t)) &&
             dup_arr(a, &z->definition_level_histogram, z->n_def_hist, sizeof(int64_t));
    }
    if (!ok)
        return FLOE_ENOMEM;
    *out = m;
    return 0;
}

static bool is_nan_bound(int32_t type, const floe_pq_bytes *b) {
    if (type == FLOE_PQ_FLOAT && b->n == 4) {
        float f;
        memcpy(&f, b->p, 4);
        return isnan(f);
    }
    if (type == FLOE_PQ_DOUBLE && b->n == 8) {
        double d;
        memcpy(&d, b->p, 8);
        return isnan(d);
    }
    return false;
}

/* C3: the statistics as metrics of column i, or FLOE_EUNSUPPORTED. */
static int chunk_metrics(const floe_pq_reader *r, size_t i, const floe_field *leaf,
                         const floe_pq_column_metadata *m, pq_copy_chunk *ch, floe_error *err) {
    const floe_pq_statistics *s = &m->statistics;
    bool is_float = m->type == FLOE_PQ_FLOAT || m->type == FLOE_PQ_DOUBLE;
    if (!m->has_statistics || !s->has_null_count || s->null_count < 0 ||
        s->null_count > m->num_values)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: no null count", leaf->name);
    if (is_float && (!s->has_nan_count || s->nan_count < 0 ||
                     s->nan_count > m->num_values - s->null_count))
        return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: no NaN count", leaf->name);
    ch->nulls = s->null_count;
    ch->nans = is_float ? s->nan_count : 0;
    bool type_defined = i < r->md.n_column_orders &&
                        r->md.column_orders[i] == FLOE_PQ_ORDER_TYPE_DEFINED;
    if (s->has_min_value && s->has_max_value && type_defined) {
        int width = floe_phys_width(leaf->phys, leaf->type_length);
        if (width > 0 && (s->min_value.n != (size_t)width || s->max_value.n != (size_t)width))
            return floe_error_set(err, FLOE_ECORRUPT, "column %s: statistics of the wrong "
                                  "width", leaf->name);
        if (is_nan_bound(m->type, &s->min_value) || is_nan_bound(m->type, &s->max_value))
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: NaN in the statistics",
                                  leaf->name);
        ch->has_bounds = true;
        ch->min = s->min_value;
        ch->max = s->max_value;
        ch->min_exact = !(s->has_is_min_value_exact && !s->is_min_value_exact);
        ch->max_exact = !(s->has_is_max_value_exact && !s->is_max_value_exact);
        return 0;
    }
    if (ch->nulls + ch->nans == m->num_values)
        return 0; /* nothing to bound */
    return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: no usable min/max statistics",
                          leaf->name);
}

/* C1: walk the pages of one chunk; fix the dictionary offset; list the data pages. */
static int walk_pages(const uint8_t *p, size_t n, int64_t start, bool check_crc,
                      floe_pq_column_metadata *m, walked_page **pages, size_t *npages,
                      floe_error *err) {
    size_t pos = 0, cap = 0, np = 0;
    walked_page *pg = NULL;
    int64_t values = 0;
    bool dict = false;
    int rc = 0;
    while (pos < n) {
        floe_pq_page_header ph;
        size_t used = 0;
        FLOE_CHECK(floe_pq_page_header_decode(p + pos, n - pos, start + (int64_t)pos, &ph, &used,
                                              err));
        if (ph.compressed_page_size < 0 || (size_t)ph.compressed_page_size > n - pos - used)
            FLOE_FAIL(err, FLOE_ECORRUPT, "page at offset %lld runs past the chunk",
                      (long long)(start + (int64_t)pos));
        int64_t size = (int64_t)used + ph.compressed_page_size;
        /* a page is copied with its CRC: one that does not hold is not copied (decoding
         * it fails as a scan of the input does, rather than the output keeping it) */
        if (check_crc && ph.has_crc &&
            floe_crc32(0, p + pos + used, (size_t)ph.compressed_page_size) != (uint32_t)ph.crc)
            FLOE_FAIL(err, FLOE_ECORRUPT, "page at offset %lld: checksum mismatch",
                      (long long)(start + (int64_t)pos));
        if (ph.type == FLOE_PQ_DICTIONARY_PAGE) {
            if (pos != 0)
                FLOE_FAIL(err, FLOE_ECORRUPT, "dictionary page at offset %lld is not the "
                          "chunk's first page", (long long)(start + (int64_t)pos));
            dict = true;
        } else if (ph.type == FLOE_PQ_DATA_PAGE || ph.type == FLOE_PQ_DATA_PAGE_V2) {
            int64_t nv = ph.type == FLOE_PQ_DATA_PAGE ? ph.data_page_header.num_values
                                                      : ph.data_page_header_v2.num_values;
            if ((ph.type == FLOE_PQ_DATA_PAGE && !ph.has_data_page_header) ||
                (ph.type == FLOE_PQ_DATA_PAGE_V2 && !ph.has_data_page_header_v2) || nv < 0)
                FLOE_FAIL(err, FLOE_ECORRUPT, "data page at offset %lld has no header",
                          (long long)(start + (int64_t)pos));
            if (np == cap) {
                size_t nc = cap ? cap * 2 : 16;
                walked_page *q = floe_realloc(pg, nc * sizeof *q);
                if (!q)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                pg = q;
                cap = nc;
            }
            pg[np++] = (walked_page){(int64_t)pos, size, nv};
            values += nv;
        } else {
            FLOE_FAIL(err, FLOE_EUNSUPPORTED, "page of type %d at offset %lld", (int)ph.type,
                      (long long)(start + (int64_t)pos));
        }
        pos += (size_t)size;
    }
    if (np == 0 || values != m->num_values)
        FLOE_FAIL(err, FLOE_ECORRUPT, "chunk at offset %lld: its pages hold %lld values, the "
                  "metadata says %lld", (long long)start, (long long)values,
                  (long long)m->num_values);
    if (start + pg[0].off != m->data_page_offset)
        FLOE_FAIL(err, FLOE_ECORRUPT, "chunk at offset %lld: data_page_offset %lld is not its "
                  "first data page", (long long)start, (long long)m->data_page_offset);
    /* a dictionary offset of 0 is a known writer quirk; write the true one */
    m->has_dictionary_page_offset = dict;
    m->dictionary_page_offset = dict ? start : 0;
    *pages = pg;
    *npages = np;
    pg = NULL;
done:
    floe_free(pg);
    return rc;
}

/* C2: keep the chunk's page index only when its OffsetIndex lists exactly the pages. */
static int chunk_page_index(floe_pq_reader *r, size_t rg, size_t column, int64_t start,
                            const walked_page *pg, size_t np, bool flat, floe_arena *a,
                            pq_copy_chunk *ch, floe_error *err) {
    const floe_pq_column_chunk *cc = &r->md.row_groups[rg].columns[column];
    int64_t num_rows = r->md.row_groups[rg].num_rows;
    floe_pq_offset_index *oi = floe_arena_alloc(a, sizeof *oi);
    if (!oi)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_error e2;
    int rc = pq_load_offset_index(r, rg, column, a, oi, &e2);
    if (rc == FLOE_ENOMEM || rc == FLOE_EIO)
        return floe_error_set(err, rc, "%s", e2.msg);
    if (rc != 0 || oi->n_pages != np)
        return 0; /* none, unreadable or not these pages: dropped */
    int64_t rows = 0;
    for (size_t k = 0; k < np; k++) {
        const floe_pq_page_location *l = &oi->page_locations[k];
        if (l->offset != start + pg[k].off || l->compressed_page_size != pg[k].size ||
            l->first_row_index < 0 || l->first_row_index >= num_rows ||
            (k == 0 ? l->first_row_index != 0
                    : l->first_row_index <= oi->page_locations[k - 1].first_row_index) ||
            (flat && l->first_row_index != rows))
            return 0;
        rows += pg[k].values;
    }
    if (oi->n_unencoded && oi->n_unencoded != np)
        oi->n_unencoded = 0, oi->unencoded_byte_array_data_bytes = NULL;
    ch->offset_index = oi;
    if (!cc->has_column_index || cc->column_index_length <= 0 ||
        (size_t)cc->column_index_length > COPY_MAX_INDEX_BYTES)
        return 0;
    size_t n = (size_t)cc->column_index_length;
    uint8_t *b = floe_arena_alloc(a, n);
    if (!b)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    rc = src_read(r, cc->column_index_offset, b, n, &e2);
    if (rc == FLOE_ENOMEM || rc == FLOE_EIO)
        return floe_error_set(err, rc, "%s", e2.msg);
    if (rc < 0)
        return 0;
    floe_pq_column_index ci;
    if (floe_pq_column_index_decode(b, n, cc->column_index_offset, a, &ci, &e2) < 0 ||
        ci.n_pages != np)
        return 0;
    ch->column_index = b;
    ch->column_index_len = n;
    return 0;
}

int floe_pq_raw_row_group_load(floe_pq_reader *r, size_t rg, const floe_schema *schema,
                               floe_codec codec, floe_pq_raw_row_group **out,
                               floe_error *err) {
    int rc = 0;
    walked_page *pg = NULL;
    floe_pq_raw_row_group *g = NULL;
    FLOE_RETURN_ERROR_IF(rg >= r->md.n_row_groups, err, FLOE_EINVALID, "%s: no row group %zu",
                         r->name, rg);
    const floe_pq_row_group *in = &r->md.row_groups[rg];
    size_t n = schema->nleaves;
    FLOE_RETURN_ERROR_IF(in->num_rows <= 0, err, FLOE_EUNSUPPORTED, "empty row group");
    FLOE_RETURN_ERROR_IF(r->nleaves != n || in->n_columns != n, err, FLOE_EUNSUPPORTED,
                         "the file has %zu columns, the table %zu", r->nleaves, n);
    /* layout: type, width, levels, no conversion on read */
    for (size_t i = 0; i < n; i++) {
        const pq_leaf *lf = &r->leaves[i];
        const floe_field *f = schema->leaves[i];
        int32_t t = f->phys == FLOE_PHYS_FIXED ? FLOE_PQ_FIXED_LEN_BYTE_ARRAY : (int32_t)f->phys;
        const floe_pq_column_chunk *cc = &in->columns[i];
        if (f->geo) /* the bounding box comes from the values: decode them */
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: geometry/geography",
                                  f->name);
        if (lf->conv != PQ_CONV_NONE || lf->src_phys != t || lf->node->is_unsigned ||
            (t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY && lf->src_width != f->type_length) ||
            lf->node->def_level != f->def_level || lf->node->rep_level != f->rep_level)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: stored differently",
                                  f->name);
        if (!cc->has_meta_data || cc->file_path || cc->has_crypto_metadata ||
            cc->has_encrypted_column_metadata || cc->meta_data.type != t)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: chunk not copyable",
                                  f->name);
        if (cc->meta_data.codec != (int32_t)codec)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "column %s: codec %d, not %d",
                                  f->name, (int)cc->meta_data.codec, (int)codec);
    }
    g = floe_calloc(1, sizeof *g);
    if (!g)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_arena_init(&g->arena, 16 * 1024);
    floe_buf_init(&g->bytes, 0);
    g->n = n;
    g->num_rows = in->num_rows;
    g->chunks = floe_calloc(n ? n : 1, sizeof *g->chunks);
    g->at = floe_calloc(n ? n : 1, sizeof *g->at);
    if (!g->chunks || !g->at)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const floe_field *f = schema->leaves[i];
        pq_copy_chunk *ch = &g->chunks[i];
        floe_pq_column_metadata *m;
        if (own_meta(&g->arena, &in->columns[i].meta_data, &m) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        ch->meta = m;
        FLOE_CHECK(chunk_metrics(r, i, f, m, ch, err));
        /* the chunk's bytes: from the dictionary page (0 is the quirk) or the data page */
        int64_t start = m->data_page_offset;
        if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
            m->dictionary_page_offset < start)
            start = m->dictionary_page_offset;
        int64_t len = m->total_compressed_size;
        if (start < 4 || start > r->footer_start || len <= 0 || len > r->footer_start - start)
            FLOE_FAIL(err, FLOE_ECORRUPT, "column %s: chunk outside the file's data", f->name);
        if ((int64_t)g->bytes.len + len > COPY_MAX_RG_BYTES)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED, "row group larger than %lld bytes",
                      (long long)COPY_MAX_RG_BYTES);
        g->at[i] = g->bytes.len;
        if (floe_buf_reserve(&g->bytes, (size_t)len) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        uint8_t *dst = g->bytes.data + g->bytes.len;
        FLOE_CHECK(src_read(r, start, dst, (size_t)len, err));
        g->bytes.len += (size_t)len;
        r->stats.bytes_read += len;
        size_t np = 0;
        floe_free(pg);
        pg = NULL;
        FLOE_CHECK(walk_pages(dst, (size_t)len, start, !r->opts.skip_crc, m, &pg, &np, err));
        ch->src_start = start;
        ch->len = (size_t)len;
        FLOE_CHECK(chunk_page_index(r, rg, i, start, pg, np, f->rep_level == 0, &g->arena, ch,
                                    err));
    }
    for (size_t i = 0; i < n; i++)
        g->chunks[i].bytes = g->bytes.data + g->at[i];
    *out = g;
    g = NULL;
done:
    floe_free(pg);
    if (rc < 0 && err)
        floe_error_prefix(err, "%s: row group %zu: ", r->name, rg);
    floe_pq_raw_row_group_free(g);
    return rc;
}

int floe_pq_writer_copy_row_group(floe_pq_writer *w, const floe_pq_raw_row_group *g,
                                  floe_error *err) {
    /* variant_shredding auto: the rows held go first, and decide what w writes */
    int rc = pqw_settle_auto(w, err);
    if (rc < 0) {
        w->failed = rc;
        return rc;
    }
    if (w->shred) /* g has the caller's columns, w writes others */
        return floe_error_set(err, FLOE_EUNSUPPORTED, "parquet writer: a row group cannot "
                              "be copied into a file whose variants are shredded");
    return pq_writer_add_copied_row_group(w, g->chunks, g->n, g->num_rows, err);
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
        FLOE_CHECK(pqw_write_out(w, ch->bytes, ch->len, err));
        if (copy_chunk_meta(w, c, ch, delta, &rg->columns[i]) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(copy_chunk_index(w, ch, delta, &w->refs[w->nrgs * w->ncols + i], err));
        if (ch->has_bounds &&
            (rc = pqw_vstat_merge_bounds(c, &c->fstat, ch->min.p, ch->min.n, !ch->min_exact,
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
