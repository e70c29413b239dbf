/*
 * reader.c - the Parquet reader: footer, metadata accessors, column chunks and pages.
 *
 * Specs: parquet-format README ("File format", "Data Pages", "Column chunks", "Checksumming"),
 * parquet.thrift (PageHeader, DataPageHeader[V2], DictionaryPageHeader), Encodings.md,
 * Compression.md, PageIndex.md (OffsetIndex for page skipping).
 *
 * Reading order: the last 8 bytes (footer length + magic), then the footer, then for each
 * row group only the projected column chunks (one ranged read per chunk; with page
 * skipping, one per dictionary prefix and per selected page).
 *
 * Invariants:
 *   - Every size, count and offset from the file is checked against the bytes that remain,
 *     the chunk's range or a cap before anything is allocated or read from it.
 *   - Pages decode straight into the slot's colbuf: levels at nlevels.., values at
 *     nvalues..; a page either appends completely or the read fails.
 *   - Values are in the in-memory form of parquet_reader.h (conversion happens once, when
 *     a value or a dictionary entry is decoded).
 *   - With a row selection every slot holds exactly the selected rows, in order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parquet/encoding.h"
#include "parquet/reader_internal.h"

#define PQ_DEFAULT_MAX_FOOTER ((size_t)64 << 20)
#define PQ_DEFAULT_MAX_CHUNK ((size_t)2 << 30)
#define PQ_DEFAULT_MAX_PAGE ((size_t)1 << 30) /* one page, decompressed */
#define PQ_DEFAULT_MAX_READ ((size_t)1 << 30) /* the pages of one read, decompressed */
#define PQ_MAX_PAGE_LEVELS ((int64_t)1 << 26) /* level entries in one page */
#define PQ_MAX_INDEX_BYTES ((size_t)64 << 20) /* one column's offset/column index */
/* Smaller files are read, not mapped: for them mmap, the page faults and munmap cost more
 * than the copy they save. */
#define PQ_MAP_MIN_BYTES ((int64_t)1 << 20)
/* Smaller files are read whole, with one read, where the columns read cover most of them:
 * a read per column chunk costs a system call (or a GET) each, 22 for a file of 19
 * columns, where the bytes copied are about the same. Below the mapping threshold, so
 * larger files keep the mapped path; the buffer is one more file-sized allocation per
 * open reader. */
#define PQ_WHOLE_MAX_BYTES PQ_MAP_MIN_BYTES

static const uint8_t MAGIC[4] = {'P', 'A', 'R', '1'};
static const uint8_t MAGIC_ENC[4] = {'P', 'A', 'R', 'E'};

/* ---- source ------------------------------------------------------------------------ */

static int src_read(floe_pq_reader *r, int64_t off, void *buf, size_t n, floe_error *err) {
    if (off < 0 || (uint64_t)off > (uint64_t)r->file_size ||
        n > (uint64_t)(r->file_size - off))
        return floe_error_at(err, FLOE_ECORRUPT, off,
                             "%s: read of %zu bytes at offset %lld is past the end of the "
                             "file (%lld bytes)",
                             r->name, n, (long long)off, (long long)r->file_size);
    if (n == 0)
        return 0;
    if (r->mem) {
        memcpy(buf, r->mem + off, n);
        return 0;
    }
    return floe_input_read_at(r->in, off, buf, n, err);
}

/* Read the whole file into r->whole and serve every later read from it (as a memory
 * reader). The size is the one the input had at open: a file that shrank since fails
 * here with the input's error, which names it. */
static int read_whole(floe_pq_reader *r, floe_error *err) {
    size_t n = (size_t)r->file_size;
    if (floe_buf_reserve(&r->whole, n ? n : 1) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "%s: cannot buffer %zu bytes", r->name, n);
    FLOE_FORWARD_IF_ERROR(floe_input_read_at(r->in, 0, r->whole.data, n, err));
    r->whole.len = n;
    r->mem = r->whole.data;
    r->mem_len = n;
    r->map_tried = true;
    return 0;
}

static bool whole_fits(const floe_pq_reader *r) {
    return r->in && !r->mem && !r->map && r->file_size <= PQ_WHOLE_MAX_BYTES;
}

/* Read [off, off+n) into b (replacing its contents). */
static int src_read_buf(floe_pq_reader *r, int64_t off, size_t n, floe_buf *b,
                        floe_error *err) {
    floe_buf_reset(b);
    int rc = floe_buf_reserve(b, n ? n : 1);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: cannot buffer %zu bytes", r->name, n);
    FLOE_FORWARD_IF_ERROR(src_read(r, off, b->data, n, err));
    b->len = n;
    r->stats.bytes_read += (int64_t)n;
    return 0;
}

/* View [off, off+n) of the file: straight into the mapping when the file is mapped
 * (*mapped true: check for a shrunken file after reading, see read_pages_mapped), in
 * memory for open_memory readers, else read into b. */
static int src_view(floe_pq_reader *r, int64_t off, size_t n, floe_buf *b,
                    const uint8_t **out, bool *mapped, floe_error *err) {
    *mapped = false;
    if (r->in && !r->map_tried && !r->opts.no_map && r->file_size >= PQ_MAP_MIN_BYTES) {
        r->map_tried = true;
        const uint8_t *m = NULL;
        int rc = floe_input_mmap(r->in, &m, err);
        if (rc < 0)
            return rc;
        if (rc == 0 && floe_input_size(r->in) == r->file_size)
            r->map = m;
    }
    if (r->map || r->mem) {
        if (off < 0 || (uint64_t)off > (uint64_t)r->file_size ||
            n > (uint64_t)(r->file_size - off))
            return src_read(r, off, NULL, n, err); /* the past-the-end error */
        r->stats.bytes_read += (int64_t)n;
        if (!r->mem)
            r->stats.bytes_mapped += (int64_t)n;
        *mapped = r->mem == NULL;
        *out = (r->mem ? r->mem : r->map) + off;
        /* the whole view is read next (a chunk or a page): one call maps it, where
         * touching it would take a fault every few pages (about 0.5% of a full read) */
        if (*mapped)
            floe_input_mmap_prefault(r->in, off, n);
        return 0;
    }
    FLOE_FORWARD_IF_ERROR(src_read_buf(r, off, n, b, err));
    *out = b->data;
    return 0;
}

/* ---- open ------------------------------------------------------------------------------ */

static int validate_metadata(floe_pq_reader *r, floe_error *err) {
    const floe_pq_file_metadata *md = &r->md;
    if (md->num_rows < 0)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: footer: negative num_rows", r->name);
    for (size_t g = 0; g < md->n_row_groups; g++) {
        const floe_pq_row_group *rg = &md->row_groups[g];
        if (rg->num_rows < 0)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: row group %zu: negative num_rows", r->name, g);
        if (rg->n_columns != r->nleaves)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: row group %zu: %zu column chunks for %zu schema columns",
                                  r->name, g, rg->n_columns, r->nleaves);
        for (size_t c = 0; c < rg->n_columns; c++) {
            const floe_pq_column_chunk *cc = &rg->columns[c];
            const char *path = r->leaves[c].node->path;
            if (!cc->has_meta_data) {
                if (cc->file_path)
                    return floe_error_set(err, FLOE_EUNSUPPORTED,
                                          "%s: unsupported: column chunk in another file (%s)",
                                          r->name, cc->file_path);
                return floe_error_set(err, FLOE_ECORRUPT,
                                      "%s: row group %zu: column %s: no column metadata",
                                      r->name, g, path);
            }
            const floe_pq_column_metadata *m = &cc->meta_data;
            if (m->type != r->leaves[c].src_phys)
                return floe_error_set(err, FLOE_ECORRUPT,
                                      "%s: row group %zu: column %s: chunk type %d differs "
                                      "from the schema's %d",
                                      r->name, g, path, m->type, r->leaves[c].src_phys);
            if (m->num_values < 0 || m->total_compressed_size < 0 ||
                m->total_uncompressed_size < 0 || m->data_page_offset < 0)
                return floe_error_set(err, FLOE_ECORRUPT,
                                      "%s: row group %zu: column %s: negative size or offset",
                                      r->name, g, path);
        }
    }
    return 0;
}

static int reader_init(floe_pq_reader *r, floe_error *err) {
    int rc = 0;
    uint8_t tail[8], head[4];
    if (r->file_size < 12)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: not a Parquet file (%lld bytes, need at least 12)", r->name,
                              (long long)r->file_size);
    if (r->opts.read_whole && whole_fits(r))
        FLOE_FORWARD_IF_ERROR(read_whole(r, err));
    FLOE_FORWARD_IF_ERROR(src_read(r, r->file_size - 8, tail, 8, err));
    FLOE_FORWARD_IF_ERROR(src_read(r, 0, head, 4, err));
    if (!memcmp(tail + 4, MAGIC_ENC, 4) || !memcmp(head, MAGIC_ENC, 4))
        return floe_error_set(err, FLOE_EENCRYPTED,
                              "%s: encrypted Parquet is not supported (PARE magic)", r->name);
    if (memcmp(tail + 4, MAGIC, 4) || memcmp(head, MAGIC, 4))
        return floe_error_at(err, FLOE_ECORRUPT, memcmp(head, MAGIC, 4) ? 0 : r->file_size - 4,
                             "%s: not a Parquet file (bad magic)", r->name);
    uint32_t flen = floe_load_le32(tail);
    if ((int64_t)flen > r->file_size - 12)
        return floe_error_at(err, FLOE_ECORRUPT, r->file_size - 8,
                             "%s: footer length %u exceeds the file (%lld bytes)", r->name,
                             flen, (long long)r->file_size);
    if (flen > r->opts.max_footer_bytes)
        return floe_error_set(err, FLOE_ELIMIT, "%s: footer of %u bytes exceeds the %zu cap",
                              r->name, flen, r->opts.max_footer_bytes);
    if (flen == 0)
        return floe_error_at(err, FLOE_ECORRUPT, r->file_size - 8, "%s: empty footer", r->name);
    r->footer_len = flen;
    r->footer_start = r->file_size - 8 - (int64_t)flen;
    floe_buf fb;
    floe_buf_init(&fb, 0);
    rc = src_read_buf(r, r->footer_start, flen, &fb, err);
    r->stats.bytes_read = 0;
    if (rc < 0) {
        floe_buf_free(&fb);
        return rc;
    }
    /* decoded structures are a bounded multiple of the footer's bytes */
    r->arena.cap = (size_t)flen * 48 + ((size_t)64 << 20);
    rc = floe_pq_file_metadata_decode(fb.data, fb.len, r->footer_start, &r->arena, &r->md, err);
    floe_buf_free(&fb);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: ", r->name);
        return rc;
    }
    rc = floe_pq_file_metadata_check_encryption(&r->md, err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: ", r->name);
        return rc;
    }
    FLOE_FORWARD_IF_ERROR(pq_schema_build(r, err));
    FLOE_FORWARD_IF_ERROR(validate_metadata(r, err));
    r->selected = floe_arena_alloc(&r->arena, (r->nleaves + 1) * sizeof *r->selected);
    r->needed = floe_arena_alloc(&r->arena, (r->nleaves + 1) * sizeof *r->needed);
    r->slot_of_col = floe_arena_alloc(&r->arena, (r->nleaves + 1) * sizeof *r->slot_of_col);
    if (!r->selected || !r->needed || !r->slot_of_col)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    for (size_t i = 0; i < r->nleaves; i++)
        r->selected[i] = true;
    r->plan_dirty = true;
    r->prune_rg = r->prune_pages = true;
    r->codec = floe_codec_ctx_new();
    return 0;
}

static floe_pq_reader *reader_new(const char *name, const floe_pq_reader_options *opts) {
    floe_pq_reader *r = floe_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->name = floe_strdup(name ? name : "parquet");
    if (!r->name) {
        floe_free(r);
        return NULL;
    }
    if (opts)
        r->opts = *opts;
    if (!r->opts.max_footer_bytes)
        r->opts.max_footer_bytes = PQ_DEFAULT_MAX_FOOTER;
    if (!r->opts.max_chunk_bytes)
        r->opts.max_chunk_bytes = PQ_DEFAULT_MAX_CHUNK;
    if (!r->opts.max_page_bytes)
        r->opts.max_page_bytes = PQ_DEFAULT_MAX_PAGE;
    if (!r->opts.max_read_bytes)
        r->opts.max_read_bytes = r->opts.max_page_bytes <= PQ_DEFAULT_MAX_READ
                                     ? PQ_DEFAULT_MAX_READ
                                 : r->opts.max_page_bytes > SIZE_MAX / 2
                                     ? SIZE_MAX
                                     : 2 * r->opts.max_page_bytes;
    floe_arena_init(&r->arena, 64 << 10);
    floe_buf_init(&r->chunk, 0);
    floe_buf_init(&r->page, 0);
    floe_buf_init(&r->stage, 0);
    floe_buf_init(&r->stage_bytes, 0);
    floe_buf_init(&r->whole, 0);
    return r;
}

static int finish_open(floe_pq_reader *r, floe_pq_reader **out, floe_error *err) {
    int rc = reader_init(r, err);
    if (rc < 0) {
        floe_pq_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int floe_pq_reader_open_input(floe_input *in, const floe_pq_reader_options *opts,
                              floe_pq_reader **out, floe_error *err) {
    floe_pq_reader *r = reader_new(floe_input_uri(in), opts);
    if (!r) {
        floe_input_close(in);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    r->in = in;
    r->file_size = floe_input_size(in);
    return finish_open(r, out, err);
}

int floe_pq_reader_open(floe_io *io, const char *uri, const floe_pq_reader_options *opts,
                        floe_pq_reader **out, floe_error *err) {
    floe_input *in = NULL;
    FLOE_FORWARD_IF_ERROR(floe_input_open(io, uri, &in, err));
    return floe_pq_reader_open_input(in, opts, out, err);
}

int floe_pq_reader_open_memory(const uint8_t *p, size_t n, const char *name,
                               const floe_pq_reader_options *opts, floe_pq_reader **out,
                               floe_error *err) {
    floe_pq_reader *r = reader_new(name, opts);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    r->mem = p;
    r->mem_len = n;
    r->file_size = (int64_t)n;
    return finish_open(r, out, err);
}

static void free_slots(floe_pq_reader *r) {
    if (r->cols)
        for (size_t i = 0; i < r->nslots; i++)
            floe_colbuf_free(&r->cols[i]);
    floe_free(r->cols);
    floe_free(r->rs_nodes);
    floe_free(r->def_all);
    r->cols = NULL;
    r->rs_nodes = NULL;
    r->def_all = NULL;
    r->nslots = 0;
}

void floe_pq_reader_close(floe_pq_reader *r) {
    if (!r)
        return;
    free_slots(r);
    floe_colbuf_free(&r->dict);
    floe_buf_free(&r->chunk);
    floe_buf_free(&r->page);
    floe_buf_free(&r->stage);
    floe_buf_free(&r->stage_bytes);
    floe_buf_free(&r->whole);
    floe_free(r->idx);
    floe_free(r->stage_offsets);
    floe_free(r->resume);
    floe_codec_ctx_free(r->codec);
    floe_schema_free(r->iceberg);
    floe_free(r->ice_leaf);
    floe_arena_reset(&r->arena);
    if (r->in)
        floe_input_close(r->in);
    floe_free(r->name);
    floe_free(r);
}

/* ---- metadata accessors ------------------------------------------------------------- */

void floe_pq_reader_file_info(const floe_pq_reader *r, floe_pq_reader_file *out) {
    memset(out, 0, sizeof *out);
    out->version = r->md.version;
    out->num_rows = r->md.num_rows;
    out->num_row_groups = r->md.n_row_groups;
    out->num_columns = r->nleaves;
    out->created_by = r->md.created_by;
    out->num_kv = r->md.n_kv;
    out->file_size = r->file_size;
    out->footer_length = r->footer_len;
}

void floe_pq_reader_kv(const floe_pq_reader *r, size_t i, const char **key,
                       const char **value, size_t *value_len) {
    const floe_pq_key_value *kv = &r->md.key_value_metadata[i];
    *key = kv->key ? kv->key : "";
    *value = kv->value;
    *value_len = kv->value ? kv->value_len : 0;
}

const floe_pq_node *floe_pq_reader_root(const floe_pq_reader *r) { return r->nodes; }

const floe_pq_node *floe_pq_reader_leaf(const floe_pq_reader *r, size_t column) {
    return column < r->nleaves ? r->leaves[column].node : NULL;
}

floe_geo_kind floe_pq_reader_leaf_geo(const floe_pq_reader *r, size_t column,
                                      const char **crs, floe_geo_algo *algo) {
    if (column >= r->nleaves)
        return FLOE_GEO_NONE;
    /* leaves are the schema's non-group elements in order (pq_schema_build) */
    size_t k = 0;
    for (size_t i = 1; i < r->md.n_schema; i++) {
        const floe_pq_schema_element *e = &r->md.schema[i];
        bool group = e->has_num_children && e->num_children > 0 ? true : !e->has_type;
        if (group)
            continue;
        if (k++ != column)
            continue;
        if (!e->has_logical_type || (e->logical_type.kind != FLOE_PQ_LT_GEOMETRY &&
                                     e->logical_type.kind != FLOE_PQ_LT_GEOGRAPHY))
            return FLOE_GEO_NONE;
        const floe_pq_logical_type *lt = &e->logical_type;
        *crs = lt->geo_crs;
        *algo = lt->kind == FLOE_PQ_LT_GEOGRAPHY && lt->has_geo_algorithm
                    ? (floe_geo_algo)lt->geo_algorithm
                    : FLOE_GEO_ALGO_DEFAULT;
        return lt->kind == FLOE_PQ_LT_GEOGRAPHY ? FLOE_GEO_GEOGRAPHY : FLOE_GEO_GEOMETRY;
    }
    return FLOE_GEO_NONE;
}

void floe_pq_reader_row_group_info(const floe_pq_reader *r, size_t rg,
                                   floe_pq_row_group_info *out) {
    const floe_pq_row_group *g = &r->md.row_groups[rg];
    memset(out, 0, sizeof *out);
    out->num_rows = g->num_rows;
    out->total_byte_size = g->total_byte_size;
    int64_t cs = 0;
    for (size_t c = 0; c < g->n_columns; c++)
        cs += g->columns[c].meta_data.total_compressed_size;
    out->compressed_size = g->has_total_compressed_size ? g->total_compressed_size : cs;
    out->file_offset = g->has_file_offset ? g->file_offset : -1;
    out->ordinal = g->has_ordinal ? g->ordinal : -1;
}

static const floe_pq_statistics *chunk_stats(const floe_pq_reader *r, size_t rg, size_t col) {
    const floe_pq_column_metadata *m = &r->md.row_groups[rg].columns[col].meta_data;
    return m->has_statistics ? &m->statistics : NULL;
}

/* The usable min and max bytes of a statistics struct for this leaf. */
bool pq_stats_min_max(const pq_leaf *lf, const floe_pq_statistics *s, floe_pq_bytes *mn,
                          floe_pq_bytes *mx) {
    if (!s || lf->src_phys == FLOE_PQ_INT96 || lf->ck == PQ_CK_NONE)
        return false;
    if (s->has_min_value && s->has_max_value) {
        *mn = s->min_value;
        *mx = s->max_value;
        return true;
    }
    if (s->has_min && s->has_max && lf->stats_signed_ok) {
        *mn = s->min;
        *mx = s->max;
        return true;
    }
    return false;
}

void floe_pq_reader_chunk_info(const floe_pq_reader *r, size_t rg, size_t column,
                               floe_pq_chunk_info *out) {
    const floe_pq_column_chunk *cc = &r->md.row_groups[rg].columns[column];
    const floe_pq_column_metadata *m = &cc->meta_data;
    memset(out, 0, sizeof *out);
    out->path = r->leaves[column].node->path;
    out->phys = m->type;
    out->codec = m->codec;
    out->num_values = m->num_values;
    out->compressed_size = m->total_compressed_size;
    out->uncompressed_size = m->total_uncompressed_size;
    out->data_page_offset = m->data_page_offset;
    out->dictionary_page_offset = m->has_dictionary_page_offset ? m->dictionary_page_offset : -1;
    out->encodings = m->encodings;
    out->n_encodings = m->n_encodings;
    out->has_statistics = m->has_statistics;
    floe_pq_bytes a, b;
    out->has_min_max = r->leaves[column].ck != PQ_CK_NONE &&
                       pq_stats_min_max(&r->leaves[column], chunk_stats(r, rg, column), &a, &b);
    out->null_count = m->has_statistics && m->statistics.has_null_count
                          ? m->statistics.null_count : -1;
    out->distinct_count = m->has_statistics && m->statistics.has_distinct_count
                              ? m->statistics.distinct_count : -1;
    out->has_column_index = cc->has_column_index;
    out->has_offset_index = cc->has_offset_index;
    out->has_bloom_filter = m->has_bloom_filter_offset;
    out->num_kv = m->n_kv;
    if (m->has_geospatial_statistics) {
        const floe_pq_geospatial_statistics *g = &m->geospatial_statistics;
        const floe_pq_bounding_box *box = &g->bbox;
        out->has_geo_statistics = true;
        out->has_geo_bbox = g->has_bbox;
        out->geo_bbox_has_z = g->has_bbox && box->has_z;
        out->geo_bbox_has_m = g->has_bbox && box->has_m;
        double v[8] = {box->xmin, box->xmax, box->ymin, box->ymax,
                       box->zmin, box->zmax, box->mmin, box->mmax};
        memcpy(out->geo_bbox, v, sizeof v);
        out->has_geo_types = g->has_types;
        out->geo_types = g->geospatial_types;
        out->n_geo_types = g->n_types;
    }
}

void floe_pq_reader_chunk_kv(const floe_pq_reader *r, size_t rg, size_t column, size_t i,
                             const char **key, const char **value, size_t *value_len) {
    const floe_pq_key_value *kv = &r->md.row_groups[rg].columns[column].meta_data
                                       .key_value_metadata[i];
    *key = kv->key ? kv->key : "";
    *value = kv->value;
    *value_len = kv->value ? kv->value_len : 0;
}

int floe_pq_reader_chunk_stat_json(const floe_pq_reader *r, size_t rg, size_t column,
                                   bool want_max, floe_buf *out, floe_error *err) {
    floe_pq_bytes mn, mx;
    const pq_leaf *lf = &r->leaves[column];
    if (!pq_stats_min_max(lf, chunk_stats(r, rg, column), &mn, &mx))
        return floe_error_set(err, FLOE_ENOTFOUND, "no statistics");
    floe_pq_bytes b = want_max ? mx : mn;
    int rc = pq_format_stat_json(lf, b.p, b.n, out);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: statistics of %s unreadable", r->name,
                              lf->node->path);
    return 0;
}

/* Does the file say min_value/max_value of column follow the type's defined order? Only
 * then are byte-wise and unsigned orders known; the order of signed integers, floats,
 * booleans and decimals in INT32/INT64 never changed, so their statistics stand without
 * column_orders (as the deprecated min/max of those types do). */
static bool order_defined(const floe_pq_reader *r, size_t column) {
    const pq_leaf *lf = &r->leaves[column];
    int32_t order = column < r->md.n_column_orders ? r->md.column_orders[column]
                                                   : FLOE_PQ_ORDER_UNKNOWN;
    if (order == FLOE_PQ_ORDER_TYPE_DEFINED)
        return true;
    if (lf->ck == PQ_CK_F64)
        return order == FLOE_PQ_ORDER_IEEE754_TOTAL || lf->stats_signed_ok;
    return order == FLOE_PQ_ORDER_UNKNOWN && lf->stats_signed_ok;
}

static bool stat_is_nan(const pq_leaf *lf, const uint8_t *p) {
    if (lf->ck != PQ_CK_F64)
        return false;
    if (lf->out_phys == FLOE_PHYS_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        return isnan(f);
    }
    double d;
    memcpy(&d, p, 8);
    return isnan(d);
}

/* A float bound of zero as -0.0 (min) or +0.0 (max): writers that compare with IEEE
 * rules may record +0.0 as the minimum of a chunk holding -0.0 (parquet.thrift asks
 * readers to widen them so). */
static void widen_zero(const pq_leaf *lf, uint8_t *p, bool is_min) {
    if (lf->ck != PQ_CK_F64)
        return;
    if (lf->out_phys == FLOE_PHYS_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        if (f == 0.0f) {
            f = is_min ? -0.0f : 0.0f;
            memcpy(p, &f, 4);
        }
    } else {
        double d;
        memcpy(&d, p, 8);
        if (d == 0.0) {
            d = is_min ? -0.0 : 0.0;
            memcpy(p, &d, 8);
        }
    }
}

int floe_pq_reader_chunk_bounds(const floe_pq_reader *r, size_t rg, size_t column,
                                floe_buf *min, floe_buf *max, floe_error *err) {
    const pq_leaf *lf = &r->leaves[column];
    const floe_pq_statistics *s = chunk_stats(r, rg, column);
    floe_pq_bytes mn, mx;
    if (!s || !pq_stats_min_max(lf, s, &mn, &mx))
        return 0;
    bool new_style = s->has_min_value && s->has_max_value;
    if (new_style && !order_defined(r, column))
        return 0;
    if ((s->has_is_min_value_exact && !s->is_min_value_exact) ||
        (s->has_is_max_value_exact && !s->is_max_value_exact))
        return 0; /* truncated: bounds, but not the values */
    for (int up = 0; up < 2; up++) {
        floe_buf *out = up ? max : min;
        floe_pq_bytes b = up ? mx : mn;
        floe_buf_reset(out);
        size_t n = lf->out_phys == FLOE_PHYS_BYTE_ARRAY ? b.n : (size_t)lf->out_width;
        if (lf->out_phys != FLOE_PHYS_BYTE_ARRAY &&
            ((lf->src_phys != FLOE_PQ_BYTE_ARRAY && b.n != (size_t)lf->src_width) ||
             lf->out_width <= 0 || lf->out_width > 32))
            return 0; /* a statistic of the wrong width: not this column's value */
        int rc = floe_buf_reserve(out, n ? n : 1);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: statistics of %s: %s", r->name,
                                  lf->node->path, floe_strerror(rc));
        if (lf->out_phys == FLOE_PHYS_BYTE_ARRAY) {
            if (n)
                memcpy(out->data, b.p, n);
        } else if (pq_convert_one(lf, b.p, b.n, out->data) < 0) {
            return 0;
        }
        out->len = n;
        if (stat_is_nan(lf, out->data))
            return 0;
        widen_zero(lf, out->data, !up);
    }
    return 1;
}

const char *floe_pq_encoding_name(int e) {
    switch (e) {
    case 0: return "PLAIN";
    case 2: return "PLAIN_DICTIONARY";
    case 3: return "RLE";
    case 4: return "BIT_PACKED";
    case 5: return "DELTA_BINARY_PACKED";
    case 6: return "DELTA_LENGTH_BYTE_ARRAY";
    case 7: return "DELTA_BYTE_ARRAY";
    case 8: return "RLE_DICTIONARY";
    case 9: return "BYTE_STREAM_SPLIT";
    default: return "UNKNOWN";
    }
}

int floe_pq_reader_iceberg_schema(floe_pq_reader *r, const floe_schema **out,
                                  floe_error *err) {
    FLOE_FORWARD_IF_ERROR(pq_schema_iceberg(r, err));
    *out = r->iceberg;
    return 0;
}

const floe_field *floe_pq_reader_iceberg_field(const floe_pq_reader *r, size_t column) {
    if (!r->iceberg || column >= r->nleaves)
        return NULL;
    if (r->ice_leaf[column])
        return r->ice_leaf[column];
    /* a shredded part: the variant whose metadata column has a leaf */
    for (const floe_pq_node *nd = r->leaves[column].node->parent; nd && nd->parent;
         nd = nd->parent) {
        if (nd->phys >= 0 || nd->logical_kind != FLOE_PQ_LT_VARIANT)
            continue;
        for (size_t i = 0; i < nd->nchildren; i++) {
            const floe_pq_node *m = &nd->children[i];
            if (m->phys >= 0 && !strcmp(m->name, "metadata") && r->ice_leaf[m->column])
                return r->ice_leaf[m->column]->parent;
        }
    }
    return NULL;
}

/* ---- projection ----------------------------------------------------------------------- */

static const floe_pq_node *find_path(const floe_pq_node *nd, const char *path) {
    if (nd->parent && !strcmp(nd->path, path))
        return nd;
    for (size_t i = 0; i < nd->nchildren; i++) {
        const floe_pq_node *c = &nd->children[i];
        size_t cl = strlen(c->path);
        if (!strncmp(path, c->path, cl) && (path[cl] == 0 || path[cl] == '.')) {
            const floe_pq_node *f = find_path(c, path);
            if (f)
                return f;
        }
    }
    return NULL;
}

int floe_pq_reader_select_paths(floe_pq_reader *r, const char *const *paths, size_t n,
                                floe_error *err) {
    for (size_t i = 0; i < n; i++)
        if (!find_path(r->nodes, paths[i]))
            return floe_error_set(err, FLOE_ENOTFOUND, "%s: no column '%s'", r->name, paths[i]);
    for (size_t i = 0; i < r->nleaves; i++)
        r->selected[i] = n == 0;
    r->shaped = false;
    for (size_t i = 0; i < n; i++)
        pq_select_under(r, find_path(r->nodes, paths[i]));
    pq_select_map_keys(r, r->nodes);
    r->plan_dirty = true;
    return 0;
}

static const floe_pq_node *find_id(const floe_pq_node *nd, int32_t id) {
    if (nd->parent && nd->has_field_id && nd->field_id == id)
        return nd;
    for (size_t i = 0; i < nd->nchildren; i++) {
        const floe_pq_node *f = find_id(&nd->children[i], id);
        if (f)
            return f;
    }
    return NULL;
}

int floe_pq_reader_select_ids(floe_pq_reader *r, const int32_t *ids, size_t n,
                              floe_error *err) {
    for (size_t i = 0; i < n; i++)
        if (!find_id(r->nodes, ids[i]))
            return floe_error_set(err, FLOE_ENOTFOUND, "%s: no field with id %d", r->name,
                                  ids[i]);
    for (size_t i = 0; i < r->nleaves; i++)
        r->selected[i] = n == 0;
    r->shaped = false;
    for (size_t i = 0; i < n; i++)
        pq_select_under(r, find_id(r->nodes, ids[i]));
    pq_select_map_keys(r, r->nodes);
    r->plan_dirty = true;
    return 0;
}

int floe_pq_reader_set_filter(floe_pq_reader *r, const char *expr, floe_error *err) {
    if (!expr || !*expr) {
        r->filter = NULL;
        r->plan_dirty = true;
        return 0;
    }
    pq_expr *e = NULL;
    FLOE_FORWARD_IF_ERROR(pq_filter_parse(r, expr, &e, err));
    r->filter = e;
    r->plan_dirty = true;
    return 0;
}

void floe_pq_reader_set_pruning(floe_pq_reader *r, bool row_groups, bool pages) {
    r->prune_rg = row_groups;
    r->prune_pages = pages;
}

void floe_pq_reader_rewind(floe_pq_reader *r) {
    r->next_rg = 0;
    if (r->resume)
        memset(r->resume, 0, r->nleaves * sizeof *r->resume);
    memset(&r->stats, 0, sizeof r->stats);
}

void floe_pq_reader_stats(const floe_pq_reader *r, floe_pq_read_stats *out) { *out = r->stats; }

/* Lay out the slots (needed columns) and the assembly plan after a projection or filter
 * change. */
static int prepare(floe_pq_reader *r, floe_error *err) {
    if (!r->plan_dirty)
        return 0;
    free_slots(r);
    size_t n = 0;
    for (size_t i = 0; i < r->nleaves; i++)
        r->needed[i] = r->selected[i];
    if (r->filter)
        pq_filter_columns(r->filter, r->needed);
    for (size_t i = 0; i < r->nleaves; i++)
        r->slot_of_col[i] = r->needed[i] ? (int32_t)n++ : -1;
    r->cols = floe_calloc(n ? n : 1, sizeof *r->cols);
    r->rs_nodes = floe_calloc(n ? n : 1, sizeof *r->rs_nodes);
    r->def_all = floe_calloc(n ? n : 1, sizeof *r->def_all);
    if (!r->cols || !r->rs_nodes || !r->def_all)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    r->nslots = n;
    if (!r->iceberg && !r->iceberg_rc)
        (void)pq_schema_iceberg(r, NULL); /* optional: colbuf.field stays NULL without */
    for (size_t i = 0; i < r->nleaves; i++) {
        int32_t s = r->slot_of_col[i];
        if (s < 0)
            continue;
        floe_colbuf *c = &r->cols[s];
        const pq_leaf *lf = &r->leaves[i];
        c->field = r->ice_leaf ? r->ice_leaf[i] : NULL;
        c->phys = lf->out_phys;
        c->width = lf->out_phys == FLOE_PHYS_BYTE_ARRAY ? 0 : lf->out_width;
        c->max_def = lf->node->def_level;
        c->max_rep = lf->node->rep_level;
        r->rs_nodes[s] = lf->node;
    }
    FLOE_FORWARD_IF_ERROR(pq_plan_build(r, err));
    if (whole_fits(r)) {
        /* the stored bytes of the needed chunks (sizes checked non-negative at open) */
        int64_t need = 0;
        for (size_t g = 0; g < r->md.n_row_groups && need < r->file_size / 2; g++)
            for (size_t i = 0; i < r->nleaves && need < r->file_size / 2; i++)
                if (r->needed[i]) {
                    int64_t cs = r->md.row_groups[g].columns[i].meta_data.total_compressed_size;
                    need += cs < r->file_size ? cs : r->file_size; /* no overflow */
                }
        if (need >= r->file_size / 2)
            FLOE_FORWARD_IF_ERROR(read_whole(r, err));
    }
    r->rowset.cols = r->cols;
    r->rowset.nodes = r->rs_nodes;
    r->rowset.ncols = n;
    r->plan_dirty = false;
    return 0;
}

int pq_prepare(floe_pq_reader *r, floe_error *err) { return prepare(r, err); }

/* ---- values ----------------------------------------------------------------------------- */

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal: value = mant * 2^-24 */
            float f = (float)mant * 5.9604644775390625e-8f;
            return sign ? -f : f;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static pq_i128 load_be_i128(const uint8_t *p, size_t n) {
    /* sign-extended big-endian two's complement, n <= 16 */
    uint64_t hi = n && (p[0] & 0x80) ? ~(uint64_t)0 : 0, lo = hi;
    for (size_t i = 0; i < n; i++) {
        hi = (hi << 8) | (lo >> 56);
        lo = (lo << 8) | p[i];
    }
    return (pq_i128)(((unsigned __int128)hi << 64) | lo);
}

static void store_be_i128(uint8_t *p, size_t n, pq_i128 v) {
    unsigned __int128 u = (unsigned __int128)v;
    for (size_t i = n; i-- > 0;) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
}

int pq_convert_one(const pq_leaf *lf, const uint8_t *src, size_t n, uint8_t *out) {
    switch (lf->conv) {
    case PQ_CONV_NONE:
        memcpy(out, src, (size_t)lf->out_width);
        return 0;
    case PQ_CONV_INT96_US: {
        uint64_t nanos = floe_load_le64(src);
        int64_t jd = (int32_t)floe_load_le32(src + 8);
        /* julian day 2440588 is 1970-01-01 */
        int64_t ns = (int64_t)nanos;
        int64_t us = ns / 1000 - (ns % 1000 < 0 ? 1 : 0);
        uint64_t v = (uint64_t)(jd - 2440588) * 86400000000ull + (uint64_t)us;
        floe_store_le64(out, v);
        return 0;
    }
    case PQ_CONV_F16: {
        float f = half_to_float((uint16_t)(src[0] | (src[1] << 8)));
        memcpy(out, &f, 4);
        return 0;
    }
    case PQ_CONV_U32_I64:
        floe_store_le64(out, (uint64_t)floe_load_le32(src));
        return 0;
    case PQ_CONV_MS_US_32:
        floe_store_le64(out, (uint64_t)((int64_t)(int32_t)floe_load_le32(src) * 1000));
        return 0;
    case PQ_CONV_MS_US_64:
        floe_store_le64(out, floe_load_le64(src) * 1000u);
        return 0;
    case PQ_CONV_NS_US_64: {
        int64_t ns = (int64_t)floe_load_le64(src);
        int64_t us = ns / 1000 - (ns % 1000 < 0 ? 1 : 0);
        floe_store_le64(out, (uint64_t)us);
        return 0;
    }
    case PQ_CONV_DECIMAL: {
        pq_i128 v;
        if (lf->src_phys == FLOE_PQ_INT32)
            v = (int32_t)floe_load_le32(src);
        else if (lf->src_phys == FLOE_PQ_INT64)
            v = (int64_t)floe_load_le64(src);
        else {
            if (lf->src_phys == FLOE_PQ_FIXED_LEN_BYTE_ARRAY)
                n = (size_t)lf->src_width;
            /* allow redundant sign bytes beyond 16 */
            while (n > 16 && (src[0] == 0 || src[0] == 0xff) &&
                   ((src[0] & 0x80) == (src[1] & 0x80))) {
                src++;
                n--;
            }
            if (n > 16)
                return FLOE_ECORRUPT;
            v = load_be_i128(src, n);
        }
        if (lf->out_phys == FLOE_PHYS_INT32)
            floe_store_le32(out, (uint32_t)(int32_t)v);
        else if (lf->out_phys == FLOE_PHYS_INT64)
            floe_store_le64(out, (uint64_t)(int64_t)v);
        else
            store_be_i128(out, (size_t)lf->out_width, v);
        return 0;
    }
    }
    return FLOE_EINTERNAL;
}

static void value_from_mem(const pq_leaf *lf, const uint8_t *m, size_t n, pq_value *v) {
    memset(v, 0, sizeof *v);
    switch (lf->ck) {
    case PQ_CK_BOOL: v->i = m[0] != 0; break;
    case PQ_CK_I64:
        v->i = lf->out_phys == FLOE_PHYS_INT32 ? (int64_t)(int32_t)floe_load_le32(m)
                                              : (int64_t)floe_load_le64(m);
        break;
    case PQ_CK_U64: v->u = floe_load_le64(m); break;
    case PQ_CK_F64:
        if (lf->out_phys == FLOE_PHYS_FLOAT) {
            float f;
            memcpy(&f, m, 4);
            v->d = f;
        } else {
            memcpy(&v->d, m, 8);
        }
        v->is_nan = isnan(v->d);
        break;
    case PQ_CK_DEC:
        if (lf->out_phys == FLOE_PHYS_INT32)
            v->dec = (int32_t)floe_load_le32(m);
        else if (lf->out_phys == FLOE_PHYS_INT64)
            v->dec = (int64_t)floe_load_le64(m);
        else
            v->dec = load_be_i128(m, n > 16 ? 16 : n);
        break;
    case PQ_CK_BYTES:
    case PQ_CK_NONE:
        v->p = m;
        v->n = n;
        break;
    }
}

void pq_value_from_col(const pq_leaf *lf, const floe_colbuf *c, size_t i, pq_value *v) {
    if (c->width == 0)
        value_from_mem(lf, c->values + c->offsets[i], c->offsets[i + 1] - c->offsets[i], v);
    else
        value_from_mem(lf, c->values + i * (size_t)c->width, (size_t)c->width, v);
}

bool pq_value_from_stat(const pq_leaf *lf, const uint8_t *p, size_t n, pq_value *v) {
    uint8_t tmp[32];
    if (lf->ck == PQ_CK_NONE || lf->src_phys == FLOE_PQ_INT96)
        return false;
    if (lf->out_phys == FLOE_PHYS_BYTE_ARRAY) {
        value_from_mem(lf, p, n, v);
        return true;
    }
    if (lf->conv != PQ_CONV_NONE) {
        if (lf->src_phys != FLOE_PQ_BYTE_ARRAY && n != (size_t)lf->src_width)
            return false;
        if (lf->out_width > (int32_t)sizeof tmp || pq_convert_one(lf, p, n, tmp) < 0)
            return false;
        value_from_mem(lf, tmp, (size_t)lf->out_width, v);
    } else {
        if (n != (size_t)lf->out_width)
            return false;
        value_from_mem(lf, p, n, v);
    }
    return !(lf->ck == PQ_CK_F64 && v->is_nan);
}

int pq_value_cmp(const pq_leaf *lf, const pq_value *a, const pq_value *b) {
    switch (lf->ck) {
    case PQ_CK_BOOL:
    case PQ_CK_I64: return a->i < b->i ? -1 : a->i > b->i;
    case PQ_CK_U64: return a->u < b->u ? -1 : a->u > b->u;
    case PQ_CK_F64:
        if (a->is_nan || b->is_nan)
            return a->is_nan - b->is_nan;
        return a->d < b->d ? -1 : a->d > b->d;
    case PQ_CK_DEC: return a->dec < b->dec ? -1 : a->dec > b->dec;
    default: {
        size_t m = a->n < b->n ? a->n : b->n;
        int c = m ? memcmp(a->p, b->p, m) : 0;
        if (c)
            return c < 0 ? -1 : 1;
        return a->n < b->n ? -1 : a->n > b->n;
    }
    }
}

/* ---- page decoding ---------------------------------------------------------------------- */

typedef struct chunk_ctx {
    floe_pq_reader *r;
    const pq_leaf *lf;
    floe_colbuf *c;
    size_t rg, col;
    int codec;
    bool have_dict;
    int64_t levels;        /* level entries decoded in this chunk */
    int64_t row;           /* file row index of the next row to start */
    const int64_t *ranges; /* selection, NULL for all */
    size_t nranges;
    int64_t rows_kept;
    bool overrun;          /* a page header claimed bytes past the chunk's end */
    bool page_starts_row;  /* the last data page's first entry starts a row (rep 0) */
    size_t declared_len;   /* the chunk's total_compressed_size */
} chunk_ctx;

static int cfail(chunk_ctx *x, floe_error *err, int code, int64_t off, const char *what) {
    return floe_error_at(err, code, off, "%s: row group %zu: column %s: %s", x->r->name, x->rg,
                         x->lf->node->path, what);
}

static int grow_u32(uint32_t **p, size_t *cap, size_t need) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    uint32_t *np = floe_realloc(*p, n * sizeof *np);
    if (!np)
        return FLOE_ENOMEM;
    *p = np;
    *cap = n;
    return 0;
}

/* Number of levels equal to v. Blocks of 16 with a narrow sum let the compiler use
 * vector compares at -O2, where a plain counting loop stays one value per step. */
static size_t count_eq_i16(const int16_t *l, size_t n, int16_t v) {
    size_t total = 0, i = 0;
    for (; i + 16 <= n; i += 16) {
        unsigned s = 0;
        for (size_t k = 0; k < 16; k++)
            s += l[i + k] == v;
        total += s;
    }
    for (; i < n; i++)
        total += l[i] == v;
    return total;
}

/* The value of the first run of RLE hybrid data q[0..qn) of bit width bw (1..16) when it
 * is a repeated run covering all count levels, else -1. A page without nulls is one such
 * run; knowing it spares a pass that counts or checks the levels. Call it after the data
 * decoded without error (the value fits then). */
static int32_t single_run_level(const uint8_t *q, size_t qn, int bw, size_t count) {
    uint64_t h;
    size_t hl = floe_uvarint_get(q, qn, &h);
    size_t vb = ((size_t)bw + 7) / 8;
    if (!hl || (h & 1) || (h >> 1) < count || vb > qn - hl)
        return -1;
    uint32_t v = q[hl];
    if (vb == 2)
        v |= (uint32_t)q[hl + 1] << 8;
    return (int32_t)v;
}

/* Decode count levels (maximum maxl) from p[0..n) into out; *used receives the bytes
 * they took. When n_max is not NULL it receives how many levels equal maxl (for
 * definition levels: the values present). out[0 .. known) already hold maxl: when the
 * data is one run of maxl over count <= known levels, nothing is written. */
static int decode_levels(chunk_ctx *x, int enc, int16_t maxl, const uint8_t *p, size_t n,
                         bool prefixed, int16_t *out, size_t count, size_t known, size_t *used,
                         size_t *n_max, int64_t off, floe_error *err) {
    int bw = floe_bit_width((uint64_t)maxl);
    int32_t run = -1;
    if (enc == FLOE_PQ_ENC_RLE) {
        const uint8_t *q = p;
        size_t qn = n, pre = 0;
        if (prefixed) {
            if (n < 4)
                return cfail(x, err, FLOE_ECORRUPT, off, "level length prefix truncated");
            uint32_t len = floe_load_le32(p);
            if (len > n - 4)
                return cfail(x, err, FLOE_ECORRUPT, off, "level data longer than the page");
            q = p + 4;
            qn = len;
            pre = 4;
        }
        /* the decoder would read no further than this run, and its value fits */
        if (count > 0 && count <= known && single_run_level(q, qn, bw, count) == maxl) {
            *used = pre + qn;
            if (n_max)
                *n_max = count;
            return 0;
        }
        FLOE_FORWARD_IF_ERROR(floe_rle_decode_i16(q, qn, bw, out, count, NULL, err));
        *used = pre + qn;
        if (count > 0)
            run = single_run_level(q, qn, bw, count);
    } else if (enc == FLOE_PQ_ENC_BIT_PACKED) {
        uint64_t bytes = ((uint64_t)count * (uint64_t)bw + 7) / 8;
        if (bytes > n)
            return cfail(x, err, FLOE_ECORRUPT, off, "bit-packed levels longer than the page");
        FLOE_FORWARD_IF_ERROR(floe_bitpacked_decode_i16(p, (size_t)bytes, bw, out, count, NULL,
                                                        err));
        *used = (size_t)bytes;
    } else {
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "%s: column %s: unsupported: level encoding %s", x->r->name,
                              x->lf->node->path, floe_pq_encoding_name(enc));
    }
    if (run >= 0) { /* every level is run */
        if (run > maxl)
            return cfail(x, err, FLOE_ECORRUPT, off, "level above the column's maximum");
        if (n_max)
            *n_max = run == maxl ? count : 0;
        return 0;
    }
    /* a bit width holds values up to 2^bw - 1: only then can a level pass the maximum */
    if (maxl != (int16_t)((1 << bw) - 1)) {
        int16_t worst = 0;
        for (size_t i = 0; i < count; i++)
            worst = out[i] > worst ? out[i] : worst;
        if (worst > maxl)
            return cfail(x, err, FLOE_ECORRUPT, off, "level above the column's maximum");
    }
    if (n_max)
        *n_max = count_eq_i16(out, count, maxl);
    return 0;
}

/* Definition levels of the page into c->def + l0 (decode_levels), skipping the write when
 * the slot's buffer holds max_def there already (r->def_all), and keeping that record
 * true: it grows by a page that wrote only max_def right after it, and shrinks to l0
 * when anything else (or nothing certain, on an error) was written. */
static int decode_def(chunk_ctx *x, int enc, const uint8_t *p, size_t n, bool prefixed,
                      size_t l0, size_t count, size_t *used, size_t *present, int64_t off,
                      floe_error *err) {
    floe_colbuf *c = x->c;
    struct pq_def_memo *m = &x->r->def_all[x->r->slot_of_col[x->col]];
    if (m->def != c->def) {
        m->def = c->def;
        m->n = 0;
    }
    size_t known = m->n > l0 ? m->n - l0 : 0;
    /* a column without levels (or an empty page) has no buffer yet */
    int16_t *out = c->def ? c->def + l0 : NULL;
    int rc = decode_levels(x, enc, c->max_def, p, n, prefixed, out, count, known, used, present,
                           off, err);
    if (rc == 0 && *present == count) {
        if (l0 <= m->n && l0 + count > m->n)
            m->n = l0 + count;
    } else if (m->n > l0) {
        m->n = l0;
    }
    return rc;
}

/* Append count fixed-width file values at raw (src_width each) to c, converting. */
static int emit_fixed(chunk_ctx *x, floe_colbuf *c, const uint8_t *raw, size_t count,
                      int64_t off, floe_error *err) {
    const pq_leaf *lf = x->lf;
    int rc = floe_colbuf_reserve_values(c, count, 0);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", x->r->name);
    uint8_t *dst = c->values + c->values_len;
    size_t ow = (size_t)lf->out_width, sw = (size_t)lf->src_width;
    if (lf->conv == PQ_CONV_NONE) {
        memcpy(dst, raw, count * ow);
    } else {
        for (size_t i = 0; i < count; i++)
            if (pq_convert_one(lf, raw + i * sw, sw, dst + i * ow) < 0)
                return cfail(x, err, FLOE_ECORRUPT, off, "value cannot be converted");
    }
    c->values_len += count * ow;
    c->nvalues += count;
    return 0;
}

/* Append count byte arrays given by offsets (count + 1, absolute into bytes). */
static int emit_bytes(chunk_ctx *x, floe_colbuf *c, const uint8_t *bytes,
                      const uint32_t *offs, size_t count, int64_t off, floe_error *err) {
    const pq_leaf *lf = x->lf;
    int rc;
    if (lf->conv == PQ_CONV_DECIMAL) {
        rc = floe_colbuf_reserve_values(c, count, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", x->r->name);
        uint8_t *dst = c->values + c->values_len;
        for (size_t i = 0; i < count; i++)
            if (pq_convert_one(lf, bytes + offs[i], offs[i + 1] - offs[i],
                               dst + i * (size_t)lf->out_width) < 0)
                return cfail(x, err, FLOE_ECORRUPT, off, "decimal wider than 16 bytes");
        c->values_len += count * (size_t)lf->out_width;
        c->nvalues += count;
        return 0;
    }
    size_t total = offs[count] - offs[0];
    if (total > UINT32_MAX - c->values_len)
        return cfail(x, err, FLOE_ELIMIT, off, "more than 4 GiB of values in one row group");
    rc = floe_colbuf_reserve_values(c, count, total + 1);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", x->r->name);
    memcpy(c->values + c->values_len, bytes + offs[0], total);
    uint32_t base = (uint32_t)c->values_len - offs[0];
    uint32_t *o = c->offsets + c->nvalues + 1;
    for (size_t i = 0; i < count; i++)
        o[i] = offs[i + 1] + base;
    c->values_len += total;
    c->nvalues += count;
    return 0;
}

/* Spare bytes reserved past the values of a byte-array column when copying into it, so a
 * short value can be moved with a fixed 16-byte copy that may write past its end. */
#define COPY_SLACK 16

/* Spare bytes for plain_bytes_direct: values up to 32 bytes (hashes, ids) move as two
 * fixed 16-byte copies instead of one libc call each. */
#define DIRECT_SLACK 32

/* The length of the PLAIN byte array whose prefix starts at p[pos], checked to fit in n. */
static inline int byte_array_len(chunk_ctx *x, const uint8_t *p, size_t n, size_t pos,
                                 uint32_t *len, int64_t off, floe_error *err) {
    if (n - pos < 4)
        return cfail(x, err, FLOE_ECORRUPT, off, "byte-array length truncated");
    *len = floe_load_le32(p + pos);
    if (*len > n - pos - 4)
        return cfail(x, err, FLOE_ECORRUPT, off, "byte-array value past the page end");
    return 0;
}

/* PLAIN byte arrays in one pass: validate each length and copy the value straight into c.
 * The values' total is at most n, so reserving n bytes up front replaces the separate
 * validation pass (whose dependent length loads stalled on every value). On an error,
 * c's lengths are unchanged: the bytes written past values_len are not part of it. */
static int plain_bytes_direct(chunk_ctx *x, floe_colbuf *c, const uint8_t *p, size_t n,
                              size_t count, size_t *used, int64_t off, floe_error *err) {
    int rc = floe_colbuf_reserve_values(c, count, n + DIRECT_SLACK);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", x->r->name);
    uint8_t *base = c->values;
    uint32_t *o = c->offsets + c->nvalues + 1;
    uint32_t at = (uint32_t)c->values_len;
    size_t pos = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t len = 0; /* set by byte_array_len; gcc -O2 cannot tell */
        FLOE_FORWARD_IF_ERROR(byte_array_len(x, p, n, pos, &len, off, err));
        const uint8_t *s = p + pos + 4;
        uint8_t *dst = base + at;
        if (len <= DIRECT_SLACK && n - pos - 4 >= DIRECT_SLACK) {
            memcpy(dst, s, 16);
            memcpy(dst + 16, s + 16, 16);
        } else {
            memcpy(dst, s, len);
        }
        pos += 4 + (size_t)len;
        at += len;
        o[i] = at;
    }
    *used = pos;
    c->values_len = at;
    c->nvalues += count;
    return 0;
}

/* PLAIN byte arrays: validate lengths into stage offsets, then emit. */
static int plain_bytes(chunk_ctx *x, floe_colbuf *c, const uint8_t *p, size_t n, size_t count,
                       size_t *used, int64_t off, floe_error *err) {
    floe_pq_reader *r = x->r;
    if (count > n / 4)
        return cfail(x, err, FLOE_ECORRUPT, off, "more byte-array values than bytes");
    if (x->lf->conv != PQ_CONV_DECIMAL && n <= UINT32_MAX - c->values_len)
        return plain_bytes_direct(x, c, p, n, count, used, off, err);
    if (grow_u32(&r->stage_offsets, &r->stage_offsets_cap, count + 1) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    /* Offsets are positions in p of each value's bytes; values are not contiguous in p
     * (length prefixes in between), so emit them one by one into c. */
    size_t pos = 0, total = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t len = 0; /* set by byte_array_len; gcc -O2 cannot tell */
        FLOE_FORWARD_IF_ERROR(byte_array_len(x, p, n, pos, &len, off, err));
        r->stage_offsets[i] = (uint32_t)(pos + 4);
        pos += 4 + (size_t)len;
        total += len;
    }
    *used = pos;
    if (x->lf->conv == PQ_CONV_DECIMAL) {
        int rc = floe_colbuf_reserve_values(c, count, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", r->name);
        for (size_t i = 0; i < count; i++) {
            size_t s = r->stage_offsets[i];
            size_t l = floe_load_le32(p + s - 4);
            if (pq_convert_one(x->lf, p + s, l, c->values + c->values_len) < 0)
                return cfail(x, err, FLOE_ECORRUPT, off, "decimal wider than 16 bytes");
            c->values_len += (size_t)x->lf->out_width;
            c->nvalues++;
        }
        return 0;
    }
    if (total > UINT32_MAX - c->values_len)
        return cfail(x, err, FLOE_ELIMIT, off, "more than 4 GiB of values in one row group");
    /* COPY_SLACK spare bytes let short values move as one fixed 16-byte copy (no libc
     * call per value) when the page also has 16 bytes from the value on */
    int rc = floe_colbuf_reserve_values(c, count, total + COPY_SLACK);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", r->name);
    uint8_t *dst = c->values + c->values_len;
    uint32_t *o = c->offsets + c->nvalues + 1;
    uint32_t at = (uint32_t)c->values_len;
    for (size_t i = 0; i < count; i++) {
        size_t s = r->stage_offsets[i];
        uint32_t l = floe_load_le32(p + s - 4);
        if (l <= 16 && n - s >= 16)
            memcpy(dst, p + s, 16);
        else
            memcpy(dst, p + s, l);
        dst += l;
        at += l;
        o[i] = at;
    }
    c->values_len += total;
    c->nvalues += count;
    return 0;
}

/* Largest count * longest-entry bound gather_dict reserves for byte arrays without
 * summing the lengths first (an overestimate costs address space, not work). */
#define GATHER_BOUND_MAX ((uint64_t)16 << 20)

static int gather_dict(chunk_ctx *x, floe_colbuf *c, const floe_colbuf *d, const uint32_t *idx,
                       size_t count, int64_t off, floe_error *err) {
    /* one bounds check on the largest index: a max over the indices vectorizes, a loop
     * that may exit early on each value does not */
    uint32_t top = 0;
    size_t i0 = 0;
    for (; i0 + 16 <= count; i0 += 16) {
        uint32_t m = 0;
        for (size_t k = 0; k < 16; k++)
            m = idx[i0 + k] > m ? idx[i0 + k] : m;
        top = m > top ? m : top;
    }
    for (; i0 < count; i0++)
        top = idx[i0] > top ? idx[i0] : top;
    if (count > 0 && top >= d->nvalues)
        return cfail(x, err, FLOE_ECORRUPT, off, "dictionary index out of range");
    int rc;
    if (c->width == 0) {
        /* locals: the copies store through uint8_t pointers, which may alias the
         * dictionary's fields, so the compiler would reload them for every value */
        const uint32_t *doff = d->offsets;
        const uint8_t *dv = d->values;
        const size_t dlen = d->values_len;
        /* the longest entry bounds the total: reserving count times it (when that stays
         * small) spares a pass over the indices that only sums lengths */
        uint64_t total = (uint64_t)count * x->r->dict_max_len;
        if (total > GATHER_BOUND_MAX) {
            total = 0;
            for (size_t i = 0; i < count; i++)
                total += doff[idx[i] + 1] - doff[idx[i]];
        }
        if (total > UINT32_MAX - c->values_len)
            return cfail(x, err, FLOE_ELIMIT, off, "more than 4 GiB of values in one row group");
        rc = floe_colbuf_reserve_values(c, count, (size_t)total + COPY_SLACK);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", x->r->name);
        uint8_t *dst = c->values + c->values_len;
        uint32_t *o = c->offsets + c->nvalues + 1;
        uint32_t at = (uint32_t)c->values_len;
        for (size_t i = 0; i < count; i++) {
            uint32_t s = doff[idx[i]], l = doff[idx[i] + 1] - s;
            if (l <= 16 && dlen - s >= 16) /* short value: one fixed copy (see plain_bytes) */
                memcpy(dst, dv + s, 16);
            else
                memcpy(dst, dv + s, l);
            dst += l;
            at += l;
            o[i] = at;
        }
        c->values_len = at;
        c->nvalues += count;
        return 0;
    }
    rc = floe_colbuf_reserve_values(c, count, 0);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", x->r->name);
    uint8_t *dst = c->values + c->values_len;
    size_t w = (size_t)c->width;
    if (w == 4) {
        const uint8_t *dv = d->values;
        for (size_t i = 0; i < count; i++)
            memcpy(dst + i * 4, dv + (size_t)idx[i] * 4, 4);
    } else if (w == 8) {
        const uint8_t *dv = d->values;
        for (size_t i = 0; i < count; i++)
            memcpy(dst + i * 8, dv + (size_t)idx[i] * 8, 8);
    } else {
        for (size_t i = 0; i < count; i++)
            memcpy(dst + i * w, d->values + (size_t)idx[i] * w, w);
    }
    c->values_len += count * w;
    c->nvalues += count;
    return 0;
}

/* Append `count` values encoded with `enc` in p[0..n) to c. */
static int decode_values(chunk_ctx *x, floe_colbuf *c, int enc, const uint8_t *p, size_t n,
                         size_t count, bool dict_page, int64_t off, floe_error *err) {
    floe_pq_reader *r = x->r;
    const pq_leaf *lf = x->lf;
    int t = lf->src_phys;
    size_t sw = (size_t)lf->src_width;
    int rc;
    if (count == 0)
        return 0;
    if (dict_page && enc == FLOE_PQ_ENC_PLAIN_DICTIONARY)
        enc = FLOE_PQ_ENC_PLAIN;
    switch (enc) {
    case FLOE_PQ_ENC_PLAIN:
        if (t == FLOE_PQ_BYTE_ARRAY) {
            size_t used;
            return plain_bytes(x, c, p, n, count, &used, off, err);
        }
        if (t == FLOE_PQ_BOOLEAN) {
            rc = floe_colbuf_reserve_values(c, count, 0);
            if (rc < 0)
                return floe_error_set(err, rc, "%s: out of memory", r->name);
            FLOE_FORWARD_IF_ERROR(floe_plain_bool_decode(p, n, c->values + c->values_len, count,
                                                         NULL, err));
            c->values_len += count;
            c->nvalues += count;
            return 0;
        }
        if (count > n / sw)
            return cfail(x, err, FLOE_ECORRUPT, off, "fewer PLAIN values than announced");
        return emit_fixed(x, c, p, count, off, err);
    case FLOE_PQ_ENC_PLAIN_DICTIONARY:
    case FLOE_PQ_ENC_RLE_DICTIONARY: {
        if (!x->have_dict)
            return cfail(x, err, FLOE_ECORRUPT, off, "dictionary-encoded page without a dictionary");
        if (n < 1)
            return cfail(x, err, FLOE_ECORRUPT, off, "dictionary page data empty");
        int bw = p[0];
        if (bw > 32)
            return cfail(x, err, FLOE_ECORRUPT, off, "dictionary index bit width above 32");
        if (grow_u32(&r->idx, &r->idx_cap, count) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        FLOE_FORWARD_IF_ERROR(floe_rle_decode_u32(p + 1, n - 1, bw, r->idx, count, NULL, err));
        return gather_dict(x, c, &r->dict, r->idx, count, off, err);
    }
    case FLOE_PQ_ENC_RLE: {
        if (t != FLOE_PQ_BOOLEAN)
            break;
        if (n < 4)
            return cfail(x, err, FLOE_ECORRUPT, off, "RLE boolean length prefix truncated");
        uint32_t len = floe_load_le32(p);
        if (len > n - 4)
            return cfail(x, err, FLOE_ECORRUPT, off, "RLE boolean data past the page end");
        if (grow_u32(&r->idx, &r->idx_cap, count) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        FLOE_FORWARD_IF_ERROR(floe_rle_decode_u32(p + 4, len, 1, r->idx, count, NULL, err));
        rc = floe_colbuf_reserve_values(c, count, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", r->name);
        for (size_t i = 0; i < count; i++)
            c->values[c->values_len + i] = (uint8_t)(r->idx[i] != 0);
        c->values_len += count;
        c->nvalues += count;
        return 0;
    }
    case FLOE_PQ_ENC_DELTA_BINARY_PACKED: {
        if (t != FLOE_PQ_INT32 && t != FLOE_PQ_INT64)
            break;
        floe_buf_reset(&r->stage);
        if (floe_buf_reserve(&r->stage, count * sw) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        if (t == FLOE_PQ_INT32)
            FLOE_FORWARD_IF_ERROR(floe_delta_decode_i32(p, n, (int32_t *)(void *)r->stage.data,
                                                        count, NULL, err));
        else
            FLOE_FORWARD_IF_ERROR(floe_delta_decode_i64(p, n, (int64_t *)(void *)r->stage.data,
                                                        count, NULL, err));
        return emit_fixed(x, c, r->stage.data, count, off, err);
    }
    case FLOE_PQ_ENC_BYTE_STREAM_SPLIT: {
        if (t == FLOE_PQ_BOOLEAN || t == FLOE_PQ_BYTE_ARRAY || t == FLOE_PQ_INT96)
            break;
        if (count > n / sw)
            return cfail(x, err, FLOE_ECORRUPT, off, "fewer BYTE_STREAM_SPLIT values than announced");
        floe_buf_reset(&r->stage);
        if (floe_buf_reserve(&r->stage, count * sw) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        FLOE_FORWARD_IF_ERROR(floe_bss_decode(p, n, (int)sw, r->stage.data, count, err));
        return emit_fixed(x, c, r->stage.data, count, off, err);
    }
    case FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case FLOE_PQ_ENC_DELTA_BYTE_ARRAY: {
        if (t != FLOE_PQ_BYTE_ARRAY &&
            !(enc == FLOE_PQ_ENC_DELTA_BYTE_ARRAY && t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY))
            break;
        if (grow_u32(&r->stage_offsets, &r->stage_offsets_cap, count + 1) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        floe_buf_reset(&r->stage_bytes);
        if (enc == FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY)
            FLOE_FORWARD_IF_ERROR(floe_delta_length_decode(p, n, count, r->stage_offsets,
                                                           &r->stage_bytes, NULL, err));
        else
            FLOE_FORWARD_IF_ERROR(floe_delta_byte_array_decode(p, n, count, r->stage_offsets,
                                                               &r->stage_bytes, NULL, err));
        if (t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY) {
            for (size_t i = 0; i < count; i++)
                if (r->stage_offsets[i + 1] - r->stage_offsets[i] != sw)
                    return cfail(x, err, FLOE_ECORRUPT, off,
                                 "DELTA_BYTE_ARRAY value length differs from the fixed length");
            return emit_fixed(x, c, r->stage_bytes.data + r->stage_offsets[0], count, off, err);
        }
        return emit_bytes(x, c, r->stage_bytes.data, r->stage_offsets, count, off, err);
    }
    default:
        break;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: unsupported: encoding %s (%d) "
                          "for %s", r->name, lf->node->path, floe_pq_encoding_name(enc), enc,
                          lf->node->type_text);
}

static int page_too_big(chunk_ctx *x, size_t ulen, int64_t off, floe_error *err) {
    char what[200];
    snprintf(what, sizeof what, "page of %zu bytes decompressed is larger than the %zu-byte "
             "cap (raise it with --max-page-size in floe cat and floe scan, max_page_bytes "
             "in the reader API)", ulen, x->r->opts.max_page_bytes);
    return cfail(x, err, FLOE_ELIMIT, off, what);
}

/* Decompress a page body into r->page when the codec compresses; returns the bytes to use. */
static int page_bytes(chunk_ctx *x, const uint8_t *body, size_t blen, size_t ulen,
                      bool compressed, const uint8_t **out, size_t *outn, int64_t off,
                      floe_error *err) {
    floe_pq_reader *r = x->r;
    if (!compressed || x->codec == FLOE_CODEC_UNCOMPRESSED) {
        *out = body;
        *outn = blen;
        return 0;
    }
    if (ulen > r->opts.max_page_bytes)
        return page_too_big(x, ulen, off, err);
    if (ulen == 0 && blen == 0) {
        *out = body;
        *outn = 0;
        return 0;
    }
    floe_buf_reset(&r->page);
    if (floe_buf_reserve(&r->page, ulen ? ulen : 1) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    int rc = floe_codec_decompress(r->codec, (floe_codec)x->codec, body, blen, r->page.data, ulen,
                                   err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: row group %zu: column %s: page at %lld: ", r->name, x->rg,
                              x->lf->node->path, (long long)off);
        return rc;
    }
    r->page.len = ulen;
    *out = r->page.data;
    *outn = ulen;
    return 0;
}

/* PLAIN values of a fixed width that need no conversion are the column buffer's bytes
 * already: such pages can be decompressed straight into it instead of into r->page and
 * copied. */
static bool plain_fixed_direct_ok(const chunk_ctx *x, int enc) {
    const pq_leaf *lf = x->lf;
    return enc == FLOE_PQ_ENC_PLAIN && x->codec != FLOE_CODEC_UNCOMPRESSED &&
           lf->src_phys != FLOE_PQ_BOOLEAN && lf->src_phys != FLOE_PQ_BYTE_ARRAY &&
           lf->conv == PQ_CONV_NONE && lf->src_width > 0 && lf->out_width == lf->src_width &&
           x->c->max_rep == 0;
}

/* Data page v1 with PLAIN fixed-width values (plain_fixed_direct_ok) and, where the column
 * is optional, statistics promising no nulls: the page is the level prefix followed by
 * count values, so its values go straight into c (the prefix, when there is one, into
 * r->page by floe_codec_decompress_split). Returns 1 when levels and values are decoded,
 * 2 when the page turned out to hold nulls after all (it is then whole in r->page, for the
 * normal path), 0 when this path does not apply, negative on error. */
static int plain_fixed_direct_v1(chunk_ctx *x, const floe_pq_data_page_header *h,
                                 const uint8_t *body, size_t blen, size_t ulen, size_t count,
                                 size_t l0, int64_t off, int64_t boff, floe_error *err) {
    floe_pq_reader *r = x->r;
    floe_colbuf *c = x->c;
    size_t sw = (size_t)x->lf->src_width;
    if (count == 0 || ulen > r->opts.max_page_bytes || count > ulen / sw)
        return 0;
    size_t vbytes = count * sw, head = ulen - vbytes;
    if (c->max_def == 0 ? head != 0 : head < 4 || h->definition_level_encoding != FLOE_PQ_ENC_RLE)
        return 0;
    int rc = floe_colbuf_reserve_values(c, count, 0);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", r->name);
    uint8_t *dst = c->values + c->values_len;
    if (head == 0)
        rc = floe_codec_decompress(r->codec, (floe_codec)x->codec, body, blen, dst, vbytes, err);
    else
        rc = floe_codec_decompress_split(r->codec, (floe_codec)x->codec, body, blen, &r->page,
                                         head, dst, vbytes, err);
    if (rc == 1)
        return 0;
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: row group %zu: column %s: page at %lld: ", r->name, x->rg,
                              x->lf->node->path, (long long)off);
        return rc;
    }
    if (head > 0) {
        const uint8_t *lv = r->page.data;
        size_t lused = 0, present = 0;
        bool whole = floe_load_le32(lv) == head - 4;
        if (whole) {
            FLOE_FORWARD_IF_ERROR(decode_def(x, FLOE_PQ_ENC_RLE, lv, head, true, l0, count,
                                             &lused, &present, boff, err));
            whole = present == count;
        }
        if (!whole) { /* nulls after all: the values start elsewhere; reassemble the page */
            if (floe_buf_reserve(&r->page, ulen) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
            memcpy(r->page.data + head, c->values + c->values_len, vbytes);
            r->page.len = ulen;
            return 2;
        }
    }
    c->values_len += vbytes;
    c->nvalues += count;
    r->stats.pages_direct++;
    return 1;
}

/* PLAIN byte arrays of a compressed page can be decompressed into the column buffer
 * itself (reserving the page's size) and compacted there: each value moves left over its
 * own length prefix and those before it. That replaces a write of the page to r->page and
 * a copy out of it (two streams through memory) by work on lines already in cache. */
static bool plain_bytes_inplace_ok(const chunk_ctx *x, int enc) {
    return enc == FLOE_PQ_ENC_PLAIN && x->codec != FLOE_CODEC_UNCOMPRESSED &&
           x->lf->src_phys == FLOE_PQ_BYTE_ARRAY && x->lf->conv == PQ_CONV_NONE;
}

/* The page's values were decompressed to c->values + c->values_len, after `head` bytes of
 * levels (n bytes in all): compact count of them in place. On an error c's lengths are
 * unchanged (the bytes past values_len are not part of it).
 *
 * Each value's position depends on the length loaded just before it, a chain of dependent
 * loads that serialises the loop. Columns of fixed-length strings (hashes, ids) are common,
 * so after each value a run of values with its length takes a loop that steps by that
 * length and only compares each prefix with it: the next position no longer waits for the
 * load, and the comparison is a branch the CPU predicts. */
static int plain_bytes_inplace(chunk_ctx *x, floe_colbuf *c, size_t head, size_t n,
                               size_t count, int64_t off, floe_error *err) {
    uint8_t *b = c->values + c->values_len;
    uint32_t *o = c->offsets + c->nvalues + 1;
    const uint32_t vbase = (uint32_t)c->values_len; /* caller: values_len + n <= UINT32_MAX */
    size_t at = 0, pos = head, i = 0;
    if (count > (n - head) / 4)
        return cfail(x, err, FLOE_ECORRUPT, off, "more byte-array values than bytes");
    while (i < count) {
        uint32_t len = 0; /* set by byte_array_len; gcc -O2 cannot tell */
        FLOE_FORWARD_IF_ERROR(byte_array_len(x, b, n, pos, &len, off, err));
        size_t src = pos + 4;
        /* dst < src always. Two 16-byte loads, then the stores: exact when the 32 bytes
         * written end before the next unread byte (src + len), which holds from the
         * 8th value on (src - at grows by 4 per value) */
        if (len <= 32 && n - src >= 32 && src - at >= 32 - (size_t)len) {
            uint8_t t0[16], t1[16];
            memcpy(t0, b + src, 16);
            memcpy(t1, b + src + 16, 16);
            memcpy(b + at, t0, 16);
            memcpy(b + at + 16, t1, 16);
        } else {
            memmove(b + at, b + src, len);
        }
        at += len;
        pos = src + len;
        o[i++] = vbase + (uint32_t)at;
        if (len > 32)
            continue;
        /* the run of values of the same length: each is whole in the page and its 32-byte
         * copy ends before the next prefix (the conditions above, checked without the
         * load); a prefix that differs ends the run and goes through the checks above */
        const size_t step = 4 + (size_t)len;
        while (i < count && n - pos >= 36 && pos + 4 - at >= 32 - (size_t)len &&
               floe_load_le32(b + pos) == len) {
            uint8_t t0[16], t1[16];
            memcpy(t0, b + pos + 4, 16);
            memcpy(t1, b + pos + 20, 16);
            memcpy(b + at, t0, 16);
            memcpy(b + at + 16, t1, 16);
            at += len;
            pos += step;
            o[i++] = vbase + (uint32_t)at;
        }
    }
    c->values_len += at;
    c->nvalues += count;
    x->r->stats.pages_direct++;
    return 0;
}

/* Statistics (page, else chunk) say the page has no nulls. */
static bool page_has_no_nulls(const chunk_ctx *x, const floe_pq_data_page_header *h) {
    if (h->has_statistics && h->statistics.has_null_count)
        return h->statistics.null_count == 0;
    const floe_pq_column_metadata *m = &x->r->md.row_groups[x->rg].columns[x->col].meta_data;
    return m->has_statistics && m->statistics.has_null_count && m->statistics.null_count == 0;
}

static bool row_selected(const chunk_ctx *x, int64_t row, size_t *k) {
    while (*k < x->nranges && x->ranges[2 * *k + 1] <= row)
        (*k)++;
    return *k < x->nranges && x->ranges[2 * *k] <= row;
}

/* Keep only the selected rows among entries [l0, nlevels) (values from v0), whose first
 * row is x->row. Advances x->row past the page's rows. */
static void select_rows(chunk_ctx *x, size_t l0, size_t v0) {
    floe_colbuf *c = x->c;
    int64_t rows = 0;
    if (c->max_rep == 0)
        rows = (int64_t)(c->nlevels - l0);
    else
        for (size_t i = l0; i < c->nlevels; i++)
            rows += c->rep[i] == 0;
    int64_t first = x->row;
    x->row += rows;
    if (!x->ranges) {
        x->rows_kept += rows;
        return;
    }
    /* whole page inside one range: nothing to move */
    size_t k = 0;
    while (k < x->nranges && x->ranges[2 * k + 1] <= first)
        k++;
    if (rows == 0 || (k < x->nranges && x->ranges[2 * k] <= first &&
                      x->ranges[2 * k + 1] >= first + rows)) {
        x->rows_kept += rows;
        return;
    }
    size_t wl = l0, wv = v0, vi = v0;
    size_t w = (size_t)c->width;
    struct pq_def_memo *m = &x->r->def_all[x->r->slot_of_col[x->col]];
    if (m->n > l0) /* levels move down over [l0, ...) */
        m->n = l0;
    /* a byte-array column with no value decoded yet has no offsets array */
    size_t wb = w ? v0 * w : (c->offsets ? c->offsets[v0] : 0);
    int64_t row = first - 1;
    bool keep = false;
    for (size_t i = l0; i < c->nlevels; i++) {
        if (c->max_rep == 0 || c->rep[i] == 0) {
            row++;
            keep = row_selected(x, row, &k);
            x->rows_kept += keep;
        }
        bool is_val = c->max_def == 0 || c->def[i] == c->max_def;
        if (keep) {
            if (c->max_def)
                c->def[wl] = c->def[i];
            if (c->max_rep)
                c->rep[wl] = c->rep[i];
            wl++;
            if (is_val) {
                if (w) {
                    memmove(c->values + wv * w, c->values + vi * w, w);
                } else {
                    uint32_t s = c->offsets[vi], e = c->offsets[vi + 1];
                    memmove(c->values + wb, c->values + s, e - s);
                    wb += e - s;
                    c->offsets[wv + 1] = (uint32_t)wb;
                }
                wv++;
            }
        }
        if (is_val)
            vi++;
    }
    c->nlevels = wl;
    c->nvalues = wv;
    c->values_len = w ? wv * w : wb;
}

/* A dictionary page: decoded into r->dict (at most one per column chunk). */
static int read_dict_page(chunk_ctx *x, const floe_pq_page_header *ph, const uint8_t *body,
                          size_t blen, int64_t off, floe_error *err) {
    floe_pq_reader *r = x->r;
    floe_colbuf *c = x->c;
    const uint8_t *d;
    size_t dn;
    if (!ph->has_dictionary_page_header)
        return cfail(x, err, FLOE_ECORRUPT, off, "dictionary page without its header");
    const floe_pq_dictionary_page_header *dh = &ph->dictionary_page_header;
    if (x->have_dict)
        return cfail(x, err, FLOE_ECORRUPT, off, "second dictionary page in a column chunk");
    if (dh->encoding != FLOE_PQ_ENC_PLAIN && dh->encoding != FLOE_PQ_ENC_PLAIN_DICTIONARY)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "%s: column %s: unsupported: dictionary encoding %s", r->name,
                              x->lf->node->path, floe_pq_encoding_name(dh->encoding));
    FLOE_FORWARD_IF_ERROR(page_bytes(x, body, blen, (size_t)ph->uncompressed_page_size, true,
                                     &d, &dn, off, err));
    if (dh->num_values < 0 || (dh->num_values > 0 && (size_t)dh->num_values > dn * 8 + 8))
        return cfail(x, err, FLOE_ECORRUPT, off, "dictionary size exceeds the page");
    floe_colbuf_clear(&r->dict);
    r->dict.phys = x->lf->out_phys;
    r->dict.width = c->width;
    r->dict.max_def = r->dict.max_rep = 0;
    FLOE_FORWARD_IF_ERROR(floe_colbuf_reserve_values(&r->dict, 0, 0) < 0
                              ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                              : 0);
    FLOE_FORWARD_IF_ERROR(decode_values(x, &r->dict, FLOE_PQ_ENC_PLAIN, d, dn,
                                        (size_t)dh->num_values, true, off, err));
    r->dict_max_len = 0;
    if (r->dict.width == 0)
        for (size_t i = 0; i < r->dict.nvalues; i++) {
            uint32_t l = r->dict.offsets[i + 1] - r->dict.offsets[i];
            r->dict_max_len = l > r->dict_max_len ? l : r->dict_max_len;
        }
    x->have_dict = true;
    return 0;
}

/* A data page once its levels are decoded: where its values are and how they go into
 * the column (read_page_inner). */
typedef struct page_vals {
    const uint8_t *d;   /* the page's levels and values, decompressed (v1) */
    size_t dn;
    const uint8_t *vals; /* the encoded values */
    size_t vn;
    size_t nonnull;     /* levels at max_def: values in the page (decode_levels) */
    bool values_done;   /* decompressed straight into c (plain_fixed_direct_ok) */
    bool inplace;       /* page decompressed into c's spare values (plain_bytes_inplace) */
    bool carry;         /* recorded in c as a stored page (floe_colbuf_page) */
} page_vals;

/* A DATA_PAGE_V2: its levels (stored uncompressed before the values) into c at l0, and
 * its values decompressed, or straight into c when they are fixed-width PLAIN. */
static int data_page_v2(chunk_ctx *x, const floe_pq_page_header *ph, int enc,
                        const uint8_t *body, size_t blen, size_t count, size_t l0, int64_t off,
                        int64_t boff, page_vals *pv, floe_error *err) {
    floe_pq_reader *r = x->r;
    floe_colbuf *c = x->c;
    int rc;
    const floe_pq_data_page_header_v2 *h = &ph->data_page_header_v2;
    int32_t rl = h->repetition_levels_byte_length, dl = h->definition_levels_byte_length;
    if (rl < 0 || dl < 0 || (size_t)rl + (size_t)dl > blen)
        return cfail(x, err, FLOE_ECORRUPT, off, "v2 level lengths exceed the page");
    size_t lused;
    if (c->max_rep > 0)
        FLOE_FORWARD_IF_ERROR(decode_levels(x, FLOE_PQ_ENC_RLE, c->max_rep, body, (size_t)rl,
                                            false, c->rep ? c->rep + l0 : NULL, count, 0, &lused,
                                            NULL, boff, err));
    if (c->max_def > 0)
        FLOE_FORWARD_IF_ERROR(decode_def(x, FLOE_PQ_ENC_RLE, body + rl, (size_t)dl, false,
                                         l0, count, &lused, &pv->nonnull, boff, err));
    size_t lv = (size_t)rl + (size_t)dl;
    if ((size_t)ph->uncompressed_page_size < lv)
        return cfail(x, err, FLOE_ECORRUPT, off, "v2 page smaller than its levels");
    size_t vlen = (size_t)ph->uncompressed_page_size - lv;
    if (h->is_compressed && plain_fixed_direct_ok(x, enc) && pv->nonnull > 0 &&
        vlen == pv->nonnull * (size_t)x->lf->src_width && vlen <= r->opts.max_page_bytes) {
        /* levels are outside the compressed part: the values go straight into c */
        rc = floe_colbuf_reserve_values(c, pv->nonnull, 0);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", r->name);
        rc = floe_codec_decompress(r->codec, (floe_codec)x->codec, body + lv, blen - lv,
                                   c->values + c->values_len, vlen, err);
        if (rc < 0) {
            if (err)
                floe_error_prefix(err, "%s: row group %zu: column %s: page at %lld: ",
                                  r->name, x->rg, x->lf->node->path, (long long)off);
            return rc;
        }
        c->values_len += vlen;
        c->nvalues += pv->nonnull;
        r->stats.pages_direct++;
        pv->values_done = true;
        pv->vals = NULL;
        pv->vn = 0;
    } else {
        FLOE_FORWARD_IF_ERROR(page_bytes(x, body + lv, blen - lv, vlen, h->is_compressed,
                                         &pv->vals, &pv->vn, off, err));
    }
    return 0;
}

/* A DATA_PAGE (v1): levels and values compressed together; the values go straight into c
 * where the page allows (plain_fixed_direct_v1, plain_bytes_inplace), and a whole PLAIN
 * page may be kept as stored (pv->carry). */
static int data_page_v1(chunk_ctx *x, const floe_pq_page_header *ph, int enc,
                        const uint8_t *body, size_t blen, size_t count, size_t l0, int64_t off,
                        int64_t boff, page_vals *pv, floe_error *err) {
    floe_pq_reader *r = x->r;
    floe_colbuf *c = x->c;
    int rc;
    const floe_pq_data_page_header *h = &ph->data_page_header;
    size_t ulen = (size_t)ph->uncompressed_page_size;
    int direct = 0;
    /* a whole page of PLAIN values read as stored, levels in the writer's encoding */
    pv->carry = c->carry_min > 0 && enc == FLOE_PQ_ENC_PLAIN && !x->ranges && c->max_rep == 0 &&
                (c->max_def == 0 || h->definition_level_encoding == FLOE_PQ_ENC_RLE) &&
                x->lf->conv == PQ_CONV_NONE && x->lf->src_phys != FLOE_PQ_BOOLEAN &&
                x->codec == c->carry_codec && ulen >= c->carry_min && ulen <= UINT32_MAX &&
                blen <= UINT32_MAX && count <= UINT32_MAX &&
                (x->codec != FLOE_CODEC_UNCOMPRESSED || ulen == blen); /* sizes agree */
    if (plain_fixed_direct_ok(x, enc) && (c->max_def == 0 || page_has_no_nulls(x, h)))
        direct = plain_fixed_direct_v1(x, h, body, blen, ulen, count, l0, off, boff, err);
    FLOE_FORWARD_IF_ERROR(direct);
    if (direct == 2) {
        pv->d = r->page.data;
        pv->dn = ulen;
    } else if (direct == 0 && plain_bytes_inplace_ok(x, enc) && ulen > 0 &&
               ulen <= r->opts.max_page_bytes && ulen <= UINT32_MAX - c->values_len) {
        rc = floe_colbuf_reserve_values(c, count, ulen);
        if (rc < 0)
            return floe_error_set(err, rc, "%s: out of memory", r->name);
        uint8_t *dst = c->values + c->values_len;
        rc = floe_codec_decompress(r->codec, (floe_codec)x->codec, body, blen, dst, ulen, err);
        if (rc < 0) {
            if (err)
                floe_error_prefix(err, "%s: row group %zu: column %s: page at %lld: ",
                                  r->name, x->rg, x->lf->node->path, (long long)off);
            return rc;
        }
        pv->d = dst;
        pv->dn = ulen;
        pv->inplace = true;
    } else if (direct == 0) {
        FLOE_FORWARD_IF_ERROR(page_bytes(x, body, blen, ulen, true, &pv->d, &pv->dn, off, err));
    } else {
        pv->d = NULL;
        pv->dn = 0;
    }
    pv->values_done = direct == 1;
    size_t pos = 0, lused = 0;
    if (c->max_rep > 0) {
        FLOE_FORWARD_IF_ERROR(decode_levels(x, h->repetition_level_encoding, c->max_rep, pv->d,
                                            pv->dn, true, c->rep ? c->rep + l0 : NULL, count, 0,
                                            &lused, NULL, boff, err));
        pos += lused;
    }
    if (c->max_def > 0 && !pv->values_done) {
        FLOE_FORWARD_IF_ERROR(decode_def(x, h->definition_level_encoding, pv->d + pos,
                                         pv->dn - pos, true, l0, count, &lused, &pv->nonnull,
                                         boff, err));
        pos += lused;
    }
    pv->vals = pv->values_done ? NULL : pv->d + pos;
    pv->vn = pv->values_done ? 0 : pv->dn - pos;
    return 0;
}

/* Decode one page (header at p[0..], within n bytes). *used receives the page's size. */
/* The CRC of the page at off (header ph, body at file offset boff) holds, or
 * FLOE_ECORRUPT at boff naming the file, row group, column and page. */
static int page_crc_check(const chunk_ctx *x, const floe_pq_page_header *ph,
                          const uint8_t *body, size_t blen, int64_t off, int64_t boff,
                          floe_error *err) {
    uint32_t crc = floe_crc32(0, body, blen);
    if (crc == (uint32_t)ph->crc)
        return 0;
    return floe_error_at(err, FLOE_ECORRUPT, boff,
                         "%s: row group %zu: column %s: page at offset %lld: checksum "
                         "mismatch (CRC-32 stored %08x, computed %08x)",
                         x->r->name, x->rg, x->lf->node->path, (long long)off,
                         (uint32_t)ph->crc, crc);
}

static int read_page_inner(chunk_ctx *x, const uint8_t *p, size_t n, int64_t off,
                           size_t *used, bool *was_data, floe_error *err) {
    floe_pq_reader *r = x->r;
    floe_colbuf *c = x->c;
    floe_pq_page_header ph;
    size_t hl = 0;
    int rc = floe_pq_page_header_decode(p, n, off, &ph, &hl, err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: row group %zu: column %s: ", r->name, x->rg,
                              x->lf->node->path);
        return rc;
    }
    if ((size_t)ph.compressed_page_size > n - hl)
    {
        x->overrun = true;
        return cfail(x, err, FLOE_ECORRUPT, off, "page extends past its column chunk");
    }
    /* every page of a read is held decoded until the read returns (the column buffers),
     * so their sum is capped, not only each page (a compressed page past the page cap
     * is refused by page_bytes, naming that cap) */
    size_t ulen_all = ph.uncompressed_page_size > 0 ? (size_t)ph.uncompressed_page_size : 0;
    bool over_page_cap = x->codec != FLOE_CODEC_UNCOMPRESSED && ulen_all > r->opts.max_page_bytes;
    if (!over_page_cap && ulen_all > r->opts.max_read_bytes - r->read_bytes) {
        char what[320];
        snprintf(what, sizeof what, "page at byte %lld: its %zu bytes decompressed would "
                 "take this read's pages past %llu bytes, the cap for one read of a row "
                 "group over all its columns (%llu bytes so far; raise it with "
                 "--max-read-size in floe cat and floe scan, max_read_bytes in the reader API)",
                 (long long)off, ulen_all, (unsigned long long)r->opts.max_read_bytes,
                 (unsigned long long)r->read_bytes);
        return cfail(x, err, FLOE_ELIMIT, off, what);
    }
    r->read_bytes += ulen_all;
    const uint8_t *body = p + hl;
    size_t blen = (size_t)ph.compressed_page_size;
    *used = hl + blen;
    *was_data = false;
    int64_t boff = off + (int64_t)hl;
    if (ph.has_crc && !r->opts.skip_crc)
        FLOE_FORWARD_IF_ERROR(page_crc_check(x, &ph, body, blen, off, boff, err));
    if (ph.type == FLOE_PQ_DICTIONARY_PAGE)
        return read_dict_page(x, &ph, body, blen, off, err);
    if (ph.type != FLOE_PQ_DATA_PAGE && ph.type != FLOE_PQ_DATA_PAGE_V2)
        return 0; /* index pages and unknown page types are skipped */
    bool v2 = ph.type == FLOE_PQ_DATA_PAGE_V2;
    if ((!v2 && !ph.has_data_page_header) || (v2 && !ph.has_data_page_header_v2))
        return cfail(x, err, FLOE_ECORRUPT, off, "data page without its header");
    int64_t nv = v2 ? ph.data_page_header_v2.num_values : ph.data_page_header.num_values;
    int enc = v2 ? ph.data_page_header_v2.encoding : ph.data_page_header.encoding;
    if (nv < 0 || nv > PQ_MAX_PAGE_LEVELS)
        return cfail(x, err, FLOE_ECORRUPT, off, "page value count out of range");
    const floe_pq_column_metadata *cm = &r->md.row_groups[x->rg].columns[x->col].meta_data;
    if (nv > cm->num_values - x->levels && x->ranges == NULL)
        return cfail(x, err, FLOE_ECORRUPT, off, "pages hold more values than the chunk declares");
    size_t count = (size_t)nv;
    size_t l0 = c->nlevels, v0 = c->nvalues;
    rc = floe_colbuf_reserve_levels(c, count);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: out of memory", r->name);
    page_vals pv;
    memset(&pv, 0, sizeof pv);
    pv.nonnull = count;
    if (v2)
        FLOE_FORWARD_IF_ERROR(
            data_page_v2(x, &ph, enc, body, blen, count, l0, off, boff, &pv, err));
    else
        FLOE_FORWARD_IF_ERROR(
            data_page_v1(x, &ph, enc, body, blen, count, l0, off, boff, &pv, err));
    if (c->max_rep > 0 && count > 0 && x->levels == 0 && c->rep[l0] != 0)
        return cfail(x, err, FLOE_ECORRUPT, off, "column chunk starts inside a row");
    if (!pv.values_done) {
        if (pv.inplace)
            FLOE_FORWARD_IF_ERROR(plain_bytes_inplace(x, c, (size_t)(pv.vals - pv.d), pv.dn,
                                                      pv.nonnull, off, err));
        else
            FLOE_FORWARD_IF_ERROR(
                decode_values(x, c, enc, pv.vals, pv.vn, pv.nonnull, false, off, err));
    }
    c->nlevels += count;
    if (pv.carry &&
        (rc = floe_colbuf_carry_add(c, (uint32_t)count, (uint32_t)(c->nvalues - v0),
                                    (uint32_t)ph.uncompressed_page_size, body, (uint32_t)blen,
                                    x->codec)) < 0)
        return floe_error_set(err, rc, "%s: out of memory", r->name);
    x->levels += (int64_t)count;
    x->page_starts_row = c->max_rep == 0 || count == 0 || c->rep[l0] == 0;
    *was_data = true;
    r->stats.pages_read++;
    select_rows(x, l0, v0);
    return 0;
}

/* Decode one page; errors from the encoding and codec layers get the file, row group,
 * column and page offset in front. */
static int read_page(chunk_ctx *x, const uint8_t *p, size_t n, int64_t off, size_t *used,
                     bool *was_data, floe_error *err) {
    int rc = read_page_inner(x, p, n, off, used, was_data, err);
    if (rc < 0 && err && strncmp(err->msg, x->r->name, strlen(x->r->name)) != 0)
        floe_error_prefix(err, "%s: row group %zu: column %s: page at offset %lld: ", x->r->name,
                          x->rg, x->lf->node->path, (long long)off);
    return rc;
}

static int chunk_range(chunk_ctx *x, int64_t *start, int64_t *len, floe_error *err) {
    floe_pq_reader *r = x->r;
    const floe_pq_column_metadata *m = &r->md.row_groups[x->rg].columns[x->col].meta_data;
    int64_t s = m->data_page_offset;
    /* dictionary_page_offset 0 is a known writer quirk: the dictionary sits at
     * data_page_offset then */
    if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
        m->dictionary_page_offset < s)
        s = m->dictionary_page_offset;
    int64_t l = m->total_compressed_size;
    if (s < 4 || s > r->footer_start || l > r->footer_start - s)
        return cfail(x, err, FLOE_ECORRUPT, s, "column chunk outside the file's data");
    if ((uint64_t)l > r->opts.max_chunk_bytes)
        return cfail(x, err, FLOE_ELIMIT, s, "column chunk larger than the cap");
    *start = s;
    *len = l;
    return 0;
}

/* Parse pages in p[0..n) (file offset base) until the end. */
static int read_pages(chunk_ctx *x, const uint8_t *p, size_t n, int64_t base, floe_error *err) {
    size_t pos = 0;
    const floe_pq_column_metadata *m = &x->r->md.row_groups[x->rg].columns[x->col].meta_data;
    /* n may extend past the declared length (the lenient retry): stop there once the
     * chunk's values are all decoded */
    while (pos < n && (pos < x->declared_len || x->levels < m->num_values)) {
        size_t used = 0;
        bool data = false;
        FLOE_FORWARD_IF_ERROR(read_page(x, p + pos, n - pos, base + (int64_t)pos, &used, &data,
                                        err));
        pos += used;
    }
    return 0;
}

/* Run read_pages (one_page false) or read_page on p[0..n), which is part of the file's
 * mapping when mapped. Should the file shrink meanwhile, the mapping reads zeros past its
 * new end (floe/mapguard.h): whatever the decoders made of them, the chunk fails. */
static int read_pages_mapped(chunk_ctx *x, const uint8_t *p, size_t n, int64_t base,
                             bool mapped, bool one_page, floe_error *err) {
    size_t used = 0;
    bool data = false;
    int rc = one_page ? read_page(x, p, n, base, &used, &data, err)
                      : read_pages(x, p, n, base, err);
    if (!mapped)
        return rc;
    if (floe_input_mmap_shrank(x->r->in))
        return floe_error_at(err, FLOE_EIO, base,
                             "%s: row group %zu: column %s: the file shrank, or a read of it failed, while it was mapped",
                             x->r->name, x->rg, x->lf->node->path);
    floe_input_mmap_release(x->r->in, base, n);
    return rc;
}

static int load_offset_index(floe_pq_reader *r, size_t rg, size_t col, floe_arena *a,
                             floe_pq_offset_index *oi, floe_error *err) {
    const floe_pq_column_chunk *cc = &r->md.row_groups[rg].columns[col];
    if (!cc->has_offset_index || cc->offset_index_length <= 0 ||
        (size_t)cc->offset_index_length > PQ_MAX_INDEX_BYTES)
        return 1;
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = src_read_buf(r, cc->offset_index_offset, (size_t)cc->offset_index_length, &b, err);
    if (rc == 0)
        rc = floe_pq_offset_index_decode(b.data, b.len, cc->offset_index_offset, a, oi, err);
    floe_buf_free(&b);
    return rc;
}

int pq_load_offset_index(floe_pq_reader *r, size_t rg, size_t col, floe_arena *a,
                         floe_pq_offset_index *oi, floe_error *err) {
    return load_offset_index(r, rg, col, a, oi, err);
}

/* ---- slices of a chunk without page locations ------------------------------------------
 *
 * Without an offset index, which page holds a row is known only by decoding the pages
 * before it. A reader asked for consecutive slices (floe_pq_reader_read_rows, as rewrite
 * does with large row groups) would then decode the chunk from its start for every slice.
 * Instead each slice reads pages one at a time from where the previous slice of that
 * column stopped: the last page that starts at a row boundary (its first entry has
 * repetition level 0; every page of a flat column does) at or before the slice's end. So
 * every page is decoded about once, and only one page is buffered at a time. The
 * dictionary page is read again for every slice (it is cleared between columns).
 */

/* Pages have headers of any size (statistics): read this much first, then the rest. */
#define PQ_PAGE_PEEK ((size_t)64 << 10)
#define PQ_MAX_PAGE_HEADER ((size_t)16 << 20)

/* The page at pos (header and body) into r->chunk; end bounds it. */
static int stream_page(chunk_ctx *x, int64_t pos, int64_t end, floe_error *err) {
    floe_pq_reader *r = x->r;
    size_t left = (size_t)(end - pos), peek = PQ_PAGE_PEEK;
    for (;;) {
        size_t n = peek < left ? peek : left;
        FLOE_FORWARD_IF_ERROR(src_read_buf(r, pos, n, &r->chunk, err));
        floe_pq_page_header ph;
        size_t hl = 0;
        floe_error e2;
        floe_error_clear(&e2);
        int rc = floe_pq_page_header_decode(r->chunk.data, n, pos, &ph, &hl, &e2);
        if (rc < 0) {
            if (n < left && peek < PQ_MAX_PAGE_HEADER) { /* maybe a header longer than the peek */
                peek *= 8;
                continue;
            }
            if (err)
                *err = e2;
            return rc;
        }
        if (ph.compressed_page_size < 0 || (size_t)ph.compressed_page_size > left - hl)
            return cfail(x, err, FLOE_ECORRUPT, pos, "page extends past its column chunk");
        size_t total = hl + (size_t)ph.compressed_page_size;
        if (total > n) {
            if (floe_buf_reserve(&r->chunk, total) < 0)
                return floe_error_set(err, FLOE_ENOMEM, "%s: cannot buffer %zu bytes", r->name,
                                      total);
            FLOE_FORWARD_IF_ERROR(src_read(r, pos + (int64_t)n, r->chunk.data + n, total - n, err));
            r->stats.bytes_read += (int64_t)(total - n);
        }
        r->chunk.len = total;
        return 0;
    }
}

/* Rows [r0, r1) of the chunk [start, start+len), page by page (see above). */
static int read_chunk_stream(chunk_ctx *x, int64_t start, int64_t len, int64_t r0, int64_t r1,
                             floe_error *err) {
    floe_pq_reader *r = x->r;
    if (!r->resume) {
        r->resume = floe_calloc(r->nleaves, sizeof *r->resume);
        if (!r->resume)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    }
    struct pq_resume *rs = &r->resume[x->col];
    const floe_pq_column_metadata *m = &r->md.row_groups[x->rg].columns[x->col].meta_data;
    /* pages may run past an under-counted total_compressed_size (old parquet-mr), up to
     * the footer, until the declared values are all read (as the whole-chunk path does) */
    int64_t end = r->footer_start, declared_end = start + len;
    int64_t pos = start, dict_end = -1;
    x->row = 0;
    x->levels = 0;
    if (rs->valid && rs->rg == x->rg && rs->row <= r0) {
        if (rs->dict_end > start) {
            FLOE_FORWARD_IF_ERROR(src_read_buf(r, start, (size_t)(rs->dict_end - start),
                                               &r->chunk, err));
            FLOE_FORWARD_IF_ERROR(read_pages(x, r->chunk.data, r->chunk.len, start, err));
        }
        pos = rs->off;
        x->row = rs->row;
        x->levels = rs->levels;
        dict_end = rs->dict_end;
    }
    rs->valid = false;
    struct pq_resume next = {true, x->rg, pos, x->row, x->levels, dict_end};
    bool flat = x->c->max_rep == 0;
    while (pos < end && (pos < declared_end || x->levels < m->num_values)) {
        FLOE_FORWARD_IF_ERROR(stream_page(x, pos, end, err));
        int64_t first = x->row, lv0 = x->levels;
        size_t used = 0;
        bool data = false;
        FLOE_FORWARD_IF_ERROR(read_page(x, r->chunk.data, r->chunk.len, pos, &used, &data, err));
        if (!data) {
            if (next.dict_end < 0 && x->levels == 0)
                next.dict_end = pos + (int64_t)used;
            pos += (int64_t)used;
            continue;
        }
        if (next.dict_end < 0)
            next.dict_end = pos;
        if (x->page_starts_row && first <= r1) {
            next.off = pos;
            next.row = first;
            next.levels = lv0;
        }
        pos += (int64_t)used;
        if (x->page_starts_row && first >= r1)
            break; /* wholly past the slice: read only to learn where the next one starts */
        if (flat && x->row >= r1) {
            if (x->row == r1) { /* ends exactly at the slice: the next one starts after it */
                next.off = pos;
                next.row = x->row;
                next.levels = x->levels;
            }
            break;
        }
    }
    *rs = next;
    return 0;
}

/* floe_pq_reader_verify_checksums: every page of every chunk, one page in memory at a
 * time (stream_page), nothing decoded. A chunk whose declared length falls short of its
 * last page (old parquet-mr) is read on to the footer, as read_chunk does. */
int floe_pq_reader_verify_checksums(floe_pq_reader *r, int64_t *pages_checked,
                                    floe_error *err) {
    int64_t checked = 0;
    for (size_t rg = 0; rg < r->md.n_row_groups && !r->opts.skip_crc; rg++) {
        /* an empty row group's chunks may point anywhere (as read_rg_keep says) */
        bool empty = r->md.row_groups[rg].num_rows == 0;
        for (size_t col = 0; col < r->nleaves && !empty; col++) {
            chunk_ctx x;
            memset(&x, 0, sizeof x);
            x.r = r;
            x.lf = &r->leaves[col];
            x.rg = rg;
            x.col = col;
            int64_t start = 0, len = 0;
            FLOE_FORWARD_IF_ERROR(chunk_range(&x, &start, &len, err));
            for (int64_t pos = start; pos < start + len;) {
                FLOE_FORWARD_IF_ERROR(stream_page(&x, pos, r->footer_start, err));
                floe_pq_page_header ph;
                size_t hl = 0;
                FLOE_FORWARD_IF_ERROR(floe_pq_page_header_decode(r->chunk.data, r->chunk.len,
                                                                 pos, &ph, &hl, err));
                if (ph.has_crc) {
                    FLOE_FORWARD_IF_ERROR(page_crc_check(&x, &ph, r->chunk.data + hl,
                                                         r->chunk.len - hl, pos,
                                                         pos + (int64_t)hl, err));
                    checked++;
                }
                pos += (int64_t)r->chunk.len;
            }
        }
    }
    floe_buf_reset(&r->chunk);
    if (pages_checked)
        *pages_checked = checked;
    return 0;
}

static int read_chunk(floe_pq_reader *r, size_t rg, size_t col, const int64_t *ranges,
                      size_t nranges, floe_error *err) {
    chunk_ctx x;
    memset(&x, 0, sizeof x);
    x.r = r;
    x.lf = &r->leaves[col];
    x.c = &r->cols[r->slot_of_col[col]];
    x.rg = rg;
    x.col = col;
    x.ranges = ranges;
    x.nranges = nranges;
    const floe_pq_column_metadata *m = &r->md.row_groups[rg].columns[col].meta_data;
    int64_t num_rows = r->md.row_groups[rg].num_rows;
    x.codec = m->codec;
    if (x.codec == FLOE_CODEC_LZO || x.codec < 0 || x.codec > FLOE_CODEC_LZ4_RAW)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: unsupported: codec %s (%d)",
                              r->name, x.lf->node->path,
                              x.codec == FLOE_CODEC_LZO ? "LZO" : "unknown", x.codec);
    int64_t start = 0, len = 0; /* set by chunk_range; initialised for -Wmaybe-uninitialized at -O2 */
    FLOE_FORWARD_IF_ERROR(chunk_range(&x, &start, &len, err));
    int rc = 0;
    floe_arena a;
    floe_arena_init(&a, 16 << 10);
    a.cap = (size_t)256 << 20;
    floe_pq_offset_index oi;
    memset(&oi, 0, sizeof oi);
    bool use_oi = false;
    if (ranges) {
        rc = load_offset_index(r, rg, col, &a, &oi, err);
        if (rc < 0)
            goto done;
        use_oi = rc == 0 && oi.n_pages > 0;
        rc = 0;
        /* validate before trusting it: inside the chunk, rows ascending from 0 */
        for (size_t k = 0; use_oi && k < oi.n_pages; k++) {
            const floe_pq_page_location *pl = &oi.page_locations[k];
            if (pl->offset < start || pl->compressed_page_size <= 0 ||
                pl->offset - start > len - pl->compressed_page_size ||
                pl->first_row_index < 0 || pl->first_row_index > num_rows ||
                (k == 0 ? pl->first_row_index != 0
                        : pl->first_row_index < oi.page_locations[k - 1].first_row_index))
                use_oi = false;
        }
    }
    if (!use_oi && ranges && nranges == 1) {
        rc = read_chunk_stream(&x, start, len, ranges[0], ranges[1], err);
        if (rc < 0)
            goto done;
    } else if (!use_oi) {
        x.declared_len = (size_t)len;
        size_t l0 = x.c->nlevels, v0 = x.c->nvalues;
        uint64_t rb0 = r->read_bytes;
        const uint8_t *cp = NULL;
        bool mapped = false;
        FLOE_CHECK(src_view(r, start, (size_t)len, &r->chunk, &cp, &mapped, err));
        rc = read_pages_mapped(&x, cp, (size_t)len, start, mapped, false, err);
        if (rc < 0 && x.overrun && len < r->footer_start - start) {
            /* Some writers (old parquet-mr) under-count total_compressed_size; read on to
             * the footer and stop once the declared values are decoded. */
            int64_t len2 = r->footer_start - start;
            if ((uint64_t)len2 > r->opts.max_chunk_bytes)
                len2 = (int64_t)r->opts.max_chunk_bytes;
            floe_colbuf_truncate(x.c, l0, v0);
            floe_colbuf_clear(&r->dict);
            x.have_dict = false;
            x.levels = x.row = x.rows_kept = 0;
            x.overrun = false;
            r->read_bytes = rb0;
            if (err)
                floe_error_clear(err);
            FLOE_CHECK(src_read_buf(r, start, (size_t)len2, &r->chunk, err));
            rc = read_pages(&x, r->chunk.data, r->chunk.len, start, err);
        }
        if (rc < 0)
            goto done;
    } else {
        int64_t first = oi.page_locations[0].offset;
        if (first > start) { /* dictionary (and index) pages ahead of the first data page */
            FLOE_CHECK(src_read_buf(r, start, (size_t)(first - start), &r->chunk, err));
            FLOE_CHECK(read_pages(&x, r->chunk.data, r->chunk.len, start, err));
        }
        size_t k = 0;
        for (size_t pg = 0; pg < oi.n_pages; pg++) {
            const floe_pq_page_location *pl = &oi.page_locations[pg];
            int64_t r0 = pl->first_row_index;
            int64_t r1 = pg + 1 < oi.n_pages ? oi.page_locations[pg + 1].first_row_index
                                             : num_rows;
            while (k < nranges && ranges[2 * k + 1] <= r0)
                k++;
            if (!(k < nranges && ranges[2 * k] < r1)) {
                r->stats.pages_skipped++;
                continue;
            }
            const uint8_t *pp = NULL;
            bool mapped = false;
            FLOE_CHECK(src_view(r, pl->offset, (size_t)pl->compressed_page_size, &r->chunk, &pp,
                                &mapped, err));
            x.row = r0;
            FLOE_CHECK(read_pages_mapped(&x, pp, (size_t)pl->compressed_page_size, pl->offset,
                                         mapped, true, err));
        }
    }
    if (!use_oi && !(ranges && nranges == 1)) { /* the streamed path reads part of the chunk */
        if (x.levels != m->num_values)
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "%s: row group %zu: column %s: chunk declares %lld values, its pages "
                      "hold %lld",
                      r->name, rg, x.lf->node->path, (long long)m->num_values,
                      (long long)x.levels);
        if (x.row != num_rows)
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "%s: row group %zu: column %s: %lld rows, the row group has %lld",
                      r->name, rg, x.lf->node->path, (long long)x.row, (long long)num_rows);
    }
    r->rowset.nrows = x.rows_kept;
done:
    floe_arena_reset(&a);
    return rc;
}

/* keep: the slots are not cleared first (read_row_group_into cleared them, or swapped a
 * caller's buffer in to append to). */
static int read_rg_keep(floe_pq_reader *r, size_t rg, const int64_t *ranges, size_t nranges,
                        bool keep, const floe_pq_rowset **out, floe_error *err) {
    int64_t nrows = -1;
    r->read_bytes = 0;
    for (size_t s = 0; s < r->nslots && !keep; s++)
        floe_colbuf_clear(&r->cols[s]);
    floe_colbuf_clear(&r->dict);
    /* an empty row group's chunks may point anywhere (some writers leave offsets 0) */
    bool empty = r->md.row_groups[rg].num_rows == 0;
    for (size_t col = 0; col < r->nleaves && !empty; col++) {
        if (r->slot_of_col[col] < 0)
            continue;
        FLOE_FORWARD_IF_ERROR(read_chunk(r, rg, col, ranges, nranges, err));
        if (nrows >= 0 && r->rowset.nrows != nrows)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: row group %zu: column %s holds %lld rows, others %lld",
                                  r->name, rg, r->leaves[col].node->path,
                                  (long long)r->rowset.nrows, (long long)nrows);
        nrows = r->rowset.nrows;
        floe_colbuf_clear(&r->dict);
    }
    if (nrows < 0) { /* nothing projected */
        nrows = 0;
        if (!ranges)
            nrows = r->md.row_groups[rg].num_rows;
        else
            for (size_t k = 0; k < nranges; k++)
                nrows += ranges[2 * k + 1] - ranges[2 * k];
    }
    r->rowset.nrows = nrows;
    r->rowset.row_group = rg;
    r->stats.rows_read += nrows;
    r->stats.row_groups_read++;
    *out = &r->rowset;
    return 0;
}

static int read_rg(floe_pq_reader *r, size_t rg, const int64_t *ranges, size_t nranges,
                   const floe_pq_rowset **out, floe_error *err) {
    return read_rg_keep(r, rg, ranges, nranges, false, out, err);
}

static int read_rg_filtered(floe_pq_reader *r, size_t rg, const floe_pq_rowset **out,
                            bool *skipped, floe_error *err) {
    int64_t *ranges = NULL;
    size_t nranges = 0;
    *skipped = false;
    if (r->filter && r->prune_pages) {
        int rc = pq_filter_page_ranges(r, rg, &ranges, &nranges, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            floe_free(ranges);
            ranges = NULL;
        } else if (nranges == 0) {
            floe_free(ranges);
            *skipped = true;
            return 0;
        }
    }
    int rc = read_rg(r, rg, ranges, nranges, out, err);
    floe_free(ranges);
    return rc;
}

int floe_pq_reader_read_row_group(floe_pq_reader *r, size_t rg, const floe_pq_rowset **out,
                                  floe_error *err) {
    if (rg >= r->md.n_row_groups)
        return floe_error_set(err, FLOE_EINVALID, "%s: no row group %zu", r->name, rg);
    FLOE_FORWARD_IF_ERROR(prepare(r, err));
    bool skipped;
    FLOE_FORWARD_IF_ERROR(read_rg_filtered(r, rg, out, &skipped, err));
    if (skipped) {
        for (size_t s = 0; s < r->nslots; s++)
            floe_colbuf_clear(&r->cols[s]);
        r->rowset.nrows = 0;
        r->rowset.row_group = rg;
        *out = &r->rowset;
    }
    return 0;
}

static bool same_layout(const floe_colbuf *a, const floe_colbuf *b) {
    return a->phys == b->phys && a->width == b->width && a->max_def == b->max_def &&
           a->max_rep == b->max_rep;
}

/* Swap the caller's buffers with the slots they stand for (both directions: the second
 * call undoes the first). The slot's record of max_def levels (decode_def) is dropped
 * each time: it is keyed by the buffer's address, which a caller's buffer may come to
 * share with one of other contents. */
static void swap_into(floe_pq_reader *r, floe_colbuf **into) {
    for (size_t col = 0; col < r->nleaves; col++) {
        int32_t s = r->slot_of_col[col];
        if (s < 0 || !into[col])
            continue;
        floe_colbuf t = r->cols[s];
        r->cols[s] = *into[col];
        *into[col] = t;
        r->def_all[s].def = NULL;
        r->def_all[s].n = 0;
    }
}

int floe_pq_reader_read_row_group_into(floe_pq_reader *r, size_t rg, floe_colbuf **into,
                                       const floe_pq_rowset **out, floe_error *err) {
    if (rg >= r->md.n_row_groups)
        return floe_error_set(err, FLOE_EINVALID, "%s: no row group %zu", r->name, rg);
    FLOE_FORWARD_IF_ERROR(prepare(r, err));
    if (r->filter)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: reading into the caller's buffers takes no filter", r->name);
    for (size_t col = 0; col < r->nleaves; col++) {
        int32_t s = r->slot_of_col[col];
        if (into[col] && (s < 0 || !same_layout(into[col], &r->cols[s])))
            into[col] = NULL;
    }
    /* the lengths to go back to on an error: the caller's buffers are whole again */
    size_t *l0 = floe_malloc((r->nleaves ? r->nleaves : 1) * 2 * sizeof *l0);
    if (!l0)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    for (size_t col = 0; col < r->nleaves; col++)
        if (into[col]) {
            l0[2 * col] = into[col]->nlevels;
            l0[2 * col + 1] = into[col]->nvalues;
        }
    for (size_t s = 0; s < r->nslots; s++)
        floe_colbuf_clear(&r->cols[s]);
    swap_into(r, into);
    int rc = read_rg_keep(r, rg, NULL, 0, true, out, err);
    swap_into(r, into);
    if (rc < 0)
        for (size_t col = 0; col < r->nleaves; col++)
            if (into[col])
                floe_colbuf_truncate(into[col], l0[2 * col], l0[2 * col + 1]);
    floe_free(l0);
    return rc;
}

int floe_pq_reader_read_rows(floe_pq_reader *r, size_t rg, int64_t first, int64_t n,
                             const floe_pq_rowset **out, floe_error *err) {
    if (rg >= r->md.n_row_groups)
        return floe_error_set(err, FLOE_EINVALID, "%s: no row group %zu", r->name, rg);
    int64_t rows = r->md.row_groups[rg].num_rows;
    if (first < 0 || n <= 0 || first > rows || n > rows - first)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: row group %zu: rows %lld+%lld outside its %lld rows", r->name,
                              rg, (long long)first, (long long)n, (long long)rows);
    FLOE_FORWARD_IF_ERROR(prepare(r, err));
    int64_t range[2] = {first, first + n};
    FLOE_FORWARD_IF_ERROR(read_rg(r, rg, range, 1, out, err));
    /* a lying offset index (first_row_index) would shift rows between columns: every
     * column is cross-checked in read_rg, the count here */
    if ((*out)->nrows != n)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: row group %zu: rows %lld+%lld decoded as %lld rows", r->name,
                              rg, (long long)first, (long long)n, (long long)(*out)->nrows);
    return 0;
}

bool floe_pq_reader_has_page_locations(const floe_pq_reader *r, size_t rg) {
    if (rg >= r->md.n_row_groups)
        return false;
    for (size_t col = 0; col < r->nleaves; col++) {
        const floe_pq_column_chunk *cc = &r->md.row_groups[rg].columns[col];
        if (!r->selected[col])
            continue;
        if (!cc->has_offset_index || cc->offset_index_length <= 0 ||
            (size_t)cc->offset_index_length > PQ_MAX_INDEX_BYTES)
            return false;
    }
    return true;
}

int floe_pq_reader_next(floe_pq_reader *r, const floe_pq_rowset **out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(prepare(r, err));
    while (r->next_rg < r->md.n_row_groups) {
        size_t rg = r->next_rg++;
        if (r->filter && r->prune_rg && !pq_filter_rg_may_match(r, rg)) {
            r->stats.row_groups_skipped++;
            continue;
        }
        bool skipped;
        FLOE_FORWARD_IF_ERROR(read_rg_filtered(r, rg, out, &skipped, err));
        if (skipped) {
            r->stats.row_groups_skipped++;
            continue;
        }
        return 1;
    }
    return 0;
}
