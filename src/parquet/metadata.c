/*
 * metadata.c - Parquet footer, page header and page index structures: compact-protocol
 * encoders and decoders (apache/parquet-format parquet.thrift, PageIndex.md).
 *
 * Decoders follow generated Thrift code in spirit: fields may come in any order, unknown
 * ids and fields whose wire type does not match the IDL are skipped, and required fields
 * are checked once the struct's STOP is seen. Everything a decoder returns is allocated in
 * the caller's arena (except page headers, see metadata.h). Lists are bounded by the
 * thrift reader before any allocation (size <= remaining bytes, size <= cap).
 */
#include "parquet/metadata.h"

#include <inttypes.h>
#include <string.h>

#include "thrift/thrift.h"

/* ======================================================================================
 * Encoding
 * ==================================================================================== */

static void enc_bytes(floe_thrift_writer *w, int16_t id, floe_pq_bytes b) {
    floe_thrift_field_binary(w, id, b.p, b.n);
}

static void enc_statistics(floe_thrift_writer *w, const floe_pq_statistics *s) {
    floe_thrift_struct_begin(w);
    if (s->has_max)
        enc_bytes(w, 1, s->max);
    if (s->has_min)
        enc_bytes(w, 2, s->min);
    if (s->has_null_count)
        floe_thrift_field_i64(w, 3, s->null_count);
    if (s->has_distinct_count)
        floe_thrift_field_i64(w, 4, s->distinct_count);
    if (s->has_max_value)
        enc_bytes(w, 5, s->max_value);
    if (s->has_min_value)
        enc_bytes(w, 6, s->min_value);
    if (s->has_is_max_value_exact)
        floe_thrift_field_bool(w, 7, s->is_max_value_exact);
    if (s->has_is_min_value_exact)
        floe_thrift_field_bool(w, 8, s->is_min_value_exact);
    if (s->has_nan_count)
        floe_thrift_field_i64(w, 9, s->nan_count);
    floe_thrift_struct_end(w);
}

static void enc_time_unit(floe_thrift_writer *w, int16_t id, int unit) {
    floe_thrift_field_struct_begin(w, id);
    floe_thrift_field_empty_struct(w, (int16_t)unit);
    floe_thrift_struct_end(w);
}

static void enc_logical_type(floe_thrift_writer *w, const floe_pq_logical_type *lt) {
    floe_thrift_struct_begin(w);
    int16_t k = (int16_t)lt->kind;
    switch (lt->kind) {
    case FLOE_PQ_LT_DECIMAL:
        floe_thrift_field_struct_begin(w, k);
        floe_thrift_field_i32(w, 1, lt->decimal_scale);
        floe_thrift_field_i32(w, 2, lt->decimal_precision);
        floe_thrift_struct_end(w);
        break;
    case FLOE_PQ_LT_TIME:
    case FLOE_PQ_LT_TIMESTAMP:
        floe_thrift_field_struct_begin(w, k);
        floe_thrift_field_bool(w, 1, lt->is_adjusted_to_utc);
        enc_time_unit(w, 2, lt->time_unit);
        floe_thrift_struct_end(w);
        break;
    case FLOE_PQ_LT_INTEGER:
        floe_thrift_field_struct_begin(w, k);
        floe_thrift_field_byte(w, 1, lt->int_bit_width);
        floe_thrift_field_bool(w, 2, lt->int_is_signed);
        floe_thrift_struct_end(w);
        break;
    case FLOE_PQ_LT_VARIANT:
        floe_thrift_field_struct_begin(w, k);
        if (lt->has_variant_version)
            floe_thrift_field_byte(w, 1, lt->variant_version);
        floe_thrift_struct_end(w);
        break;
    case FLOE_PQ_LT_GEOMETRY:
    case FLOE_PQ_LT_GEOGRAPHY:
        floe_thrift_field_struct_begin(w, k);
        if (lt->geo_crs)
            floe_thrift_field_string(w, 1, lt->geo_crs);
        if (lt->kind == FLOE_PQ_LT_GEOGRAPHY && lt->has_geo_algorithm)
            floe_thrift_field_i32(w, 2, lt->geo_algorithm);
        floe_thrift_struct_end(w);
        break;
    default: /* the empty-struct members */
        floe_thrift_field_empty_struct(w, k);
        break;
    }
    floe_thrift_struct_end(w);
}

static void enc_schema_element(floe_thrift_writer *w, const floe_pq_schema_element *e) {
    floe_thrift_struct_begin(w);
    if (e->has_type)
        floe_thrift_field_i32(w, 1, e->type);
    if (e->has_type_length)
        floe_thrift_field_i32(w, 2, e->type_length);
    if (e->has_repetition_type)
        floe_thrift_field_i32(w, 3, e->repetition_type);
    floe_thrift_field_string(w, 4, e->name ? e->name : "");
    if (e->has_num_children)
        floe_thrift_field_i32(w, 5, e->num_children);
    if (e->has_converted_type)
        floe_thrift_field_i32(w, 6, e->converted_type);
    if (e->has_scale)
        floe_thrift_field_i32(w, 7, e->scale);
    if (e->has_precision)
        floe_thrift_field_i32(w, 8, e->precision);
    if (e->has_field_id)
        floe_thrift_field_i32(w, 9, e->field_id);
    if (e->has_logical_type) {
        floe_thrift_field_begin(w, FLOE_THRIFT_STRUCT, 10);
        enc_logical_type(w, &e->logical_type);
    }
    if (e->has_vector_length)
        floe_thrift_field_i32(w, 11, e->vector_length);
    floe_thrift_struct_end(w);
}

static void enc_kv_list(floe_thrift_writer *w, int16_t id, const floe_pq_key_value *kv,
                        size_t n) {
    floe_thrift_field_list_begin(w, id, FLOE_THRIFT_STRUCT, n);
    for (size_t i = 0; i < n; i++) {
        floe_thrift_struct_begin(w);
        floe_thrift_field_string(w, 1, kv[i].key);
        if (kv[i].value)
            floe_thrift_field_binary(w, 2, kv[i].value, kv[i].value_len);
        floe_thrift_struct_end(w);
    }
}

static void enc_i64_list(floe_thrift_writer *w, int16_t id, const int64_t *v, size_t n) {
    floe_thrift_field_list_begin(w, id, FLOE_THRIFT_I64, n);
    for (size_t i = 0; i < n; i++)
        floe_thrift_write_i64(w, v[i]);
}

static void enc_column_metadata(floe_thrift_writer *w, const floe_pq_column_metadata *m) {
    floe_thrift_struct_begin(w);
    floe_thrift_field_i32(w, 1, m->type);
    floe_thrift_field_list_begin(w, 2, FLOE_THRIFT_I32, m->n_encodings);
    for (size_t i = 0; i < m->n_encodings; i++)
        floe_thrift_write_i32(w, m->encodings[i]);
    floe_thrift_field_list_begin(w, 3, FLOE_THRIFT_BINARY, m->n_path);
    for (size_t i = 0; i < m->n_path; i++)
        floe_thrift_write_binary(w, m->path_in_schema[i], strlen(m->path_in_schema[i]));
    floe_thrift_field_i32(w, 4, m->codec);
    floe_thrift_field_i64(w, 5, m->num_values);
    floe_thrift_field_i64(w, 6, m->total_uncompressed_size);
    floe_thrift_field_i64(w, 7, m->total_compressed_size);
    if (m->n_kv)
        enc_kv_list(w, 8, m->key_value_metadata, m->n_kv);
    floe_thrift_field_i64(w, 9, m->data_page_offset);
    if (m->has_index_page_offset)
        floe_thrift_field_i64(w, 10, m->index_page_offset);
    if (m->has_dictionary_page_offset)
        floe_thrift_field_i64(w, 11, m->dictionary_page_offset);
    if (m->has_statistics) {
        floe_thrift_field_begin(w, FLOE_THRIFT_STRUCT, 12);
        enc_statistics(w, &m->statistics);
    }
    if (m->n_encoding_stats) {
        floe_thrift_field_list_begin(w, 13, FLOE_THRIFT_STRUCT, m->n_encoding_stats);
        for (size_t i = 0; i < m->n_encoding_stats; i++) {
            floe_thrift_struct_begin(w);
            floe_thrift_field_i32(w, 1, m->encoding_stats[i].page_type);
            floe_thrift_field_i32(w, 2, m->encoding_stats[i].encoding);
            floe_thrift_field_i32(w, 3, m->encoding_stats[i].count);
            floe_thrift_struct_end(w);
        }
    }
    if (m->has_bloom_filter_offset)
        floe_thrift_field_i64(w, 14, m->bloom_filter_offset);
    if (m->has_bloom_filter_length)
        floe_thrift_field_i32(w, 15, m->bloom_filter_length);
    if (m->has_size_statistics) {
        const floe_pq_size_statistics *s = &m->size_statistics;
        floe_thrift_field_struct_begin(w, 16);
        if (s->has_unencoded_byte_array_data_bytes)
            floe_thrift_field_i64(w, 1, s->unencoded_byte_array_data_bytes);
        if (s->n_rep_hist)
            enc_i64_list(w, 2, s->repetition_level_histogram, s->n_rep_hist);
        if (s->n_def_hist)
            enc_i64_list(w, 3, s->definition_level_histogram, s->n_def_hist);
        floe_thrift_struct_end(w);
    }
    if (m->has_geospatial_statistics) {
        const floe_pq_geospatial_statistics *g = &m->geospatial_statistics;
        floe_thrift_field_struct_begin(w, 17);
        if (g->has_bbox) {
            const floe_pq_bounding_box *b = &g->bbox;
            floe_thrift_field_struct_begin(w, 1);
            floe_thrift_field_double(w, 1, b->xmin);
            floe_thrift_field_double(w, 2, b->xmax);
            floe_thrift_field_double(w, 3, b->ymin);
            floe_thrift_field_double(w, 4, b->ymax);
            if (b->has_z) {
                floe_thrift_field_double(w, 5, b->zmin);
                floe_thrift_field_double(w, 6, b->zmax);
            }
            if (b->has_m) {
                floe_thrift_field_double(w, 7, b->mmin);
                floe_thrift_field_double(w, 8, b->mmax);
            }
            floe_thrift_struct_end(w);
        }
        if (g->has_types) {
            floe_thrift_field_list_begin(w, 2, FLOE_THRIFT_I32, g->n_types);
            for (size_t i = 0; i < g->n_types; i++)
                floe_thrift_write_i32(w, g->geospatial_types[i]);
        }
        floe_thrift_struct_end(w);
    }
    floe_thrift_struct_end(w);
}

static void enc_column_chunk(floe_thrift_writer *w, const floe_pq_column_chunk *c) {
    floe_thrift_struct_begin(w);
    if (c->file_path)
        floe_thrift_field_string(w, 1, c->file_path);
    floe_thrift_field_i64(w, 2, c->file_offset);
    if (c->has_meta_data) {
        floe_thrift_field_begin(w, FLOE_THRIFT_STRUCT, 3);
        enc_column_metadata(w, &c->meta_data);
    }
    if (c->has_offset_index) {
        floe_thrift_field_i64(w, 4, c->offset_index_offset);
        floe_thrift_field_i32(w, 5, c->offset_index_length);
    }
    if (c->has_column_index) {
        floe_thrift_field_i64(w, 6, c->column_index_offset);
        floe_thrift_field_i32(w, 7, c->column_index_length);
    }
    floe_thrift_struct_end(w);
}

static void enc_row_group(floe_thrift_writer *w, const floe_pq_row_group *g) {
    floe_thrift_struct_begin(w);
    floe_thrift_field_list_begin(w, 1, FLOE_THRIFT_STRUCT, g->n_columns);
    for (size_t i = 0; i < g->n_columns; i++)
        enc_column_chunk(w, &g->columns[i]);
    floe_thrift_field_i64(w, 2, g->total_byte_size);
    floe_thrift_field_i64(w, 3, g->num_rows);
    if (g->n_sorting) {
        floe_thrift_field_list_begin(w, 4, FLOE_THRIFT_STRUCT, g->n_sorting);
        for (size_t i = 0; i < g->n_sorting; i++) {
            floe_thrift_struct_begin(w);
            floe_thrift_field_i32(w, 1, g->sorting_columns[i].column_idx);
            floe_thrift_field_bool(w, 2, g->sorting_columns[i].descending);
            floe_thrift_field_bool(w, 3, g->sorting_columns[i].nulls_first);
            floe_thrift_struct_end(w);
        }
    }
    if (g->has_file_offset)
        floe_thrift_field_i64(w, 5, g->file_offset);
    if (g->has_total_compressed_size)
        floe_thrift_field_i64(w, 6, g->total_compressed_size);
    if (g->has_ordinal)
        floe_thrift_field_i16(w, 7, g->ordinal);
    floe_thrift_struct_end(w);
}

static int enc_finish(floe_thrift_writer *w, floe_error *err, const char *what) {
    int rc = floe_thrift_writer_finish(w);
    if (rc < 0)
        return floe_error_set(err, rc, "%s: encoding failed: %s", what, floe_strerror(rc));
    return 0;
}

int floe_pq_file_metadata_encode(const floe_pq_file_metadata *md, floe_buf *out,
                                 floe_error *err) {
    floe_thrift_writer w;
    floe_thrift_writer_init(&w, out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, md->version);
    floe_thrift_field_list_begin(&w, 2, FLOE_THRIFT_STRUCT, md->n_schema);
    for (size_t i = 0; i < md->n_schema; i++)
        enc_schema_element(&w, &md->schema[i]);
    floe_thrift_field_i64(&w, 3, md->num_rows);
    floe_thrift_field_list_begin(&w, 4, FLOE_THRIFT_STRUCT, md->n_row_groups);
    for (size_t i = 0; i < md->n_row_groups; i++)
        enc_row_group(&w, &md->row_groups[i]);
    if (md->n_kv)
        enc_kv_list(&w, 5, md->key_value_metadata, md->n_kv);
    if (md->created_by)
        floe_thrift_field_string(&w, 6, md->created_by);
    if (md->n_column_orders) {
        floe_thrift_field_list_begin(&w, 7, FLOE_THRIFT_STRUCT, md->n_column_orders);
        for (size_t i = 0; i < md->n_column_orders; i++) {
            floe_thrift_struct_begin(&w);
            floe_thrift_field_empty_struct(&w, (int16_t)md->column_orders[i]);
            floe_thrift_struct_end(&w);
        }
    }
    floe_thrift_struct_end(&w);
    return enc_finish(&w, err, "FileMetaData");
}

int floe_pq_page_header_encode(const floe_pq_page_header *ph, floe_buf *out, floe_error *err) {
    floe_thrift_writer w;
    floe_thrift_writer_init(&w, out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, ph->type);
    floe_thrift_field_i32(&w, 2, ph->uncompressed_page_size);
    floe_thrift_field_i32(&w, 3, ph->compressed_page_size);
    if (ph->has_crc)
        floe_thrift_field_i32(&w, 4, ph->crc);
    if (ph->has_data_page_header) {
        const floe_pq_data_page_header *d = &ph->data_page_header;
        floe_thrift_field_struct_begin(&w, 5);
        floe_thrift_field_i32(&w, 1, d->num_values);
        floe_thrift_field_i32(&w, 2, d->encoding);
        floe_thrift_field_i32(&w, 3, d->definition_level_encoding);
        floe_thrift_field_i32(&w, 4, d->repetition_level_encoding);
        if (d->has_statistics) {
            floe_thrift_field_begin(&w, FLOE_THRIFT_STRUCT, 5);
            enc_statistics(&w, &d->statistics);
        }
        floe_thrift_struct_end(&w);
    }
    if (ph->has_index_page_header)
        floe_thrift_field_empty_struct(&w, 6);
    if (ph->has_dictionary_page_header) {
        const floe_pq_dictionary_page_header *d = &ph->dictionary_page_header;
        floe_thrift_field_struct_begin(&w, 7);
        floe_thrift_field_i32(&w, 1, d->num_values);
        floe_thrift_field_i32(&w, 2, d->encoding);
        if (d->has_is_sorted)
            floe_thrift_field_bool(&w, 3, d->is_sorted);
        floe_thrift_struct_end(&w);
    }
    if (ph->has_data_page_header_v2) {
        const floe_pq_data_page_header_v2 *d = &ph->data_page_header_v2;
        floe_thrift_field_struct_begin(&w, 8);
        floe_thrift_field_i32(&w, 1, d->num_values);
        floe_thrift_field_i32(&w, 2, d->num_nulls);
        floe_thrift_field_i32(&w, 3, d->num_rows);
        floe_thrift_field_i32(&w, 4, d->encoding);
        floe_thrift_field_i32(&w, 5, d->definition_levels_byte_length);
        floe_thrift_field_i32(&w, 6, d->repetition_levels_byte_length);
        floe_thrift_field_bool(&w, 7, d->is_compressed);
        if (d->has_statistics) {
            floe_thrift_field_begin(&w, FLOE_THRIFT_STRUCT, 8);
            enc_statistics(&w, &d->statistics);
        }
        floe_thrift_struct_end(&w);
    }
    floe_thrift_struct_end(&w);
    return enc_finish(&w, err, "PageHeader");
}

int floe_pq_column_index_encode(const floe_pq_column_index *ci, floe_buf *out,
                                floe_error *err) {
    floe_thrift_writer w;
    floe_thrift_writer_init(&w, out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_list_begin(&w, 1, FLOE_THRIFT_BOOL_ELEM, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++)
        floe_thrift_write_bool(&w, ci->null_pages[i]);
    floe_thrift_field_list_begin(&w, 2, FLOE_THRIFT_BINARY, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++)
        floe_thrift_write_binary(&w, ci->min_values[i].p, ci->min_values[i].n);
    floe_thrift_field_list_begin(&w, 3, FLOE_THRIFT_BINARY, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++)
        floe_thrift_write_binary(&w, ci->max_values[i].p, ci->max_values[i].n);
    floe_thrift_field_i32(&w, 4, ci->boundary_order);
    if (ci->n_null_counts)
        enc_i64_list(&w, 5, ci->null_counts, ci->n_null_counts);
    if (ci->n_rep_hist)
        enc_i64_list(&w, 6, ci->repetition_level_histograms, ci->n_rep_hist);
    if (ci->n_def_hist)
        enc_i64_list(&w, 7, ci->definition_level_histograms, ci->n_def_hist);
    if (ci->n_nan_counts)
        enc_i64_list(&w, 8, ci->nan_counts, ci->n_nan_counts);
    floe_thrift_struct_end(&w);
    return enc_finish(&w, err, "ColumnIndex");
}

int floe_pq_offset_index_encode(const floe_pq_offset_index *oi, floe_buf *out,
                                floe_error *err) {
    floe_thrift_writer w;
    floe_thrift_writer_init(&w, out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_list_begin(&w, 1, FLOE_THRIFT_STRUCT, oi->n_pages);
    for (size_t i = 0; i < oi->n_pages; i++) {
        floe_thrift_struct_begin(&w);
        floe_thrift_field_i64(&w, 1, oi->page_locations[i].offset);
        floe_thrift_field_i32(&w, 2, oi->page_locations[i].compressed_page_size);
        floe_thrift_field_i64(&w, 3, oi->page_locations[i].first_row_index);
        floe_thrift_struct_end(&w);
    }
    if (oi->n_unencoded)
        enc_i64_list(&w, 2, oi->unencoded_byte_array_data_bytes, oi->n_unencoded);
    floe_thrift_struct_end(&w);
    return enc_finish(&w, err, "OffsetIndex");
}

/* ======================================================================================
 * Decoding
 * ==================================================================================== */

typedef struct dec {
    floe_thrift_reader r;
    floe_arena *arena; /* NULL: borrow binaries from the input (page headers) */
} dec;

static int dec_nomem(dec *d) {
    return floe_error_set(d->r.err, FLOE_ENOMEM, "%s: out of memory decoding metadata",
                          d->r.what ? d->r.what : "parquet");
}

static void *dec_alloc(dec *d, size_t count, size_t size) {
    if (count == 0)
        return NULL;
    return floe_arena_alloc(d->arena, count * size); /* count capped by the reader */
}

/* Each rd_* reads a field of the expected wire type, or skips a mismatched one (as
 * generated code does: a type we do not expect is an unknown field). */
static int rd_i32(dec *d, floe_thrift_type t, int32_t *v, bool *has) {
    if (t != FLOE_THRIFT_I32)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_i32(&d->r, v);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_i64(dec *d, floe_thrift_type t, int64_t *v, bool *has) {
    if (t != FLOE_THRIFT_I64)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_i64(&d->r, v);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_i16(dec *d, floe_thrift_type t, int16_t *v, bool *has) {
    if (t != FLOE_THRIFT_I16)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_i16(&d->r, v);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_byte(dec *d, floe_thrift_type t, int8_t *v, bool *has) {
    if (t != FLOE_THRIFT_BYTE)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_byte(&d->r, v);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_bool(dec *d, floe_thrift_type t, bool *v, bool *has) {
    if (t != FLOE_THRIFT_TRUE && t != FLOE_THRIFT_FALSE)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_bool(&d->r, v);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_bin_value(dec *d, floe_pq_bytes *b) {
    const uint8_t *p;
    size_t n;
    int rc = floe_thrift_read_binary(&d->r, &p, &n);
    if (rc < 0)
        return rc;
    if (d->arena && n) {
        uint8_t *c = floe_arena_memdup(d->arena, p, n);
        if (!c)
            return dec_nomem(d);
        p = c;
    }
    b->p = p;
    b->n = n;
    return 0;
}

static int rd_bin(dec *d, floe_thrift_type t, floe_pq_bytes *b, bool *has) {
    if (t != FLOE_THRIFT_BINARY)
        return floe_thrift_skip(&d->r, t);
    int rc = rd_bin_value(d, b);
    if (rc == 0 && has)
        *has = true;
    return rc;
}

static int rd_str_value(dec *d, const char **s, size_t *len) {
    const uint8_t *p;
    size_t n;
    int rc = floe_thrift_read_binary(&d->r, &p, &n);
    if (rc < 0)
        return rc;
    char *c = floe_arena_strndup(d->arena, (const char *)p, n);
    if (!c)
        return dec_nomem(d);
    *s = c;
    if (len)
        *len = n;
    return 0;
}

static int rd_str(dec *d, floe_thrift_type t, const char **s, size_t *len) {
    if (t != FLOE_THRIFT_BINARY)
        return floe_thrift_skip(&d->r, t);
    return rd_str_value(d, s, len);
}

/* A list whose elements are read by fn into an arena array of esz-byte elements. A list
 * of another element type is skipped. */
typedef int (*elem_fn)(dec *d, void *elem);

static int rd_list(dec *d, floe_thrift_type t, floe_thrift_type want, size_t esz, elem_fn fn,
                   void **out, size_t *count) {
    if (t != FLOE_THRIFT_LIST)
        return floe_thrift_skip(&d->r, t);
    floe_thrift_type et;
    size_t n;
    int rc = floe_thrift_read_list_begin(&d->r, &et, &n);
    if (rc < 0)
        return rc;
    if (et != want) {
        for (size_t i = 0; i < n; i++)
            if ((rc = floe_thrift_skip(&d->r, et)) < 0)
                return rc;
        return 0;
    }
    uint8_t *arr = dec_alloc(d, n, esz);
    if (n && !arr)
        return dec_nomem(d);
    for (size_t i = 0; i < n; i++)
        if ((rc = fn(d, arr + i * esz)) < 0)
            return rc;
    *out = arr;
    *count = n;
    return 0;
}

static int el_i32(dec *d, void *e) { return floe_thrift_read_i32(&d->r, e); }
static int el_i64(dec *d, void *e) { return floe_thrift_read_i64(&d->r, e); }
static int el_bool(dec *d, void *e) { return floe_thrift_read_bool(&d->r, e); }
static int el_bin(dec *d, void *e) { return rd_bin_value(d, e); }
static int el_str(dec *d, void *e) { return rd_str_value(d, e, NULL); }

#define RD_LIST(d, t, want, arr, cnt, fn)                                                \
    rd_list((d), (t), (want), sizeof *(arr), (fn), (void **)&(arr), &(cnt))

/* Struct loop: for each field, `body` switches on `fid` and sets rc; STOP ends it. */
#define STRUCT_LOOP(d, body)                                                           \
    do {                                                                               \
        int rc_;                                                                       \
        if ((rc_ = floe_thrift_read_struct_begin(&(d)->r)) < 0)                        \
            return rc_;                                                                \
        for (;;) {                                                                     \
            floe_thrift_type ft;                                                       \
            int16_t fid;                                                               \
            int rc = 0;                                                                \
            if ((rc_ = floe_thrift_read_field(&(d)->r, &ft, &fid)) < 0)                \
                return rc_;                                                            \
            if (ft == FLOE_THRIFT_STOP)                                                \
                break;                                                                 \
            body                                                                       \
            if (rc < 0)                                                                \
                return rc;                                                             \
        }                                                                              \
        if ((rc_ = floe_thrift_read_struct_end(&(d)->r)) < 0)                          \
            return rc_;                                                                \
    } while (0)

static int missing(dec *d, const char *st, int id, const char *name) {
    return floe_thrift_reader_fail(&d->r, "%s: missing required field %d (%s)", st, id, name);
}

static int dec_statistics(dec *d, floe_pq_statistics *s) {
    memset(s, 0, sizeof *s);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_bin(d, ft, &s->max, &s->has_max); break;
        case 2: rc = rd_bin(d, ft, &s->min, &s->has_min); break;
        case 3: rc = rd_i64(d, ft, &s->null_count, &s->has_null_count); break;
        case 4: rc = rd_i64(d, ft, &s->distinct_count, &s->has_distinct_count); break;
        case 5: rc = rd_bin(d, ft, &s->max_value, &s->has_max_value); break;
        case 6: rc = rd_bin(d, ft, &s->min_value, &s->has_min_value); break;
        case 7: rc = rd_bool(d, ft, &s->is_max_value_exact, &s->has_is_max_value_exact); break;
        case 8: rc = rd_bool(d, ft, &s->is_min_value_exact, &s->has_is_min_value_exact); break;
        case 9: rc = rd_i64(d, ft, &s->nan_count, &s->has_nan_count); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    return 0;
}

/* A union: the id of its (first) member; the member's struct is skipped. */
static int dec_union_id(dec *d, int *kind) {
    int k = 0;
    STRUCT_LOOP(d, {
        if (ft == FLOE_THRIFT_STRUCT && k == 0)
            k = fid;
        rc = floe_thrift_skip(&d->r, ft);
    });
    *kind = k;
    return 0;
}

static int dec_time_like(dec *d, floe_pq_logical_type *lt) {
    bool has_utc = false, has_unit = false;
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_bool(d, ft, &lt->is_adjusted_to_utc, &has_utc); break;
        case 2:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_union_id(d, &lt->time_unit);
                has_unit = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!has_utc)
        return missing(d, "TimestampType/TimeType", 1, "isAdjustedToUTC");
    if (!has_unit)
        return missing(d, "TimestampType/TimeType", 2, "unit");
    return 0;
}

static int dec_decimal_type(dec *d, floe_pq_logical_type *lt) {
    bool hs = false;
    bool hp = false;
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &lt->decimal_scale, &hs); break;
        case 2: rc = rd_i32(d, ft, &lt->decimal_precision, &hp); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!hs)
        return missing(d, "DecimalType", 1, "scale");
    if (!hp)
        return missing(d, "DecimalType", 2, "precision");
    return 0;
}

static int dec_int_type(dec *d, floe_pq_logical_type *lt) {
    bool hw = false;
    bool hs = false;
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_byte(d, ft, &lt->int_bit_width, &hw); break;
        case 2: rc = rd_bool(d, ft, &lt->int_is_signed, &hs); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!hw)
        return missing(d, "IntType", 1, "bitWidth");
    if (!hs)
        return missing(d, "IntType", 2, "isSigned");
    return 0;
}

static int dec_variant_type(dec *d, floe_pq_logical_type *lt) {
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_byte(d, ft, &lt->variant_version, &lt->has_variant_version); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    return 0;
}

static int dec_geo_type(dec *d, floe_pq_logical_type *lt) {
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_str(d, ft, &lt->geo_crs, NULL); break;
        case 2: rc = rd_i32(d, ft, &lt->geo_algorithm, &lt->has_geo_algorithm); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    return 0;
}

static int dec_logical_member(dec *d, floe_pq_logical_type *lt, int16_t id) {
    lt->kind = id;
    switch (id) {
    case FLOE_PQ_LT_DECIMAL: return dec_decimal_type(d, lt);
    case FLOE_PQ_LT_TIME:
    case FLOE_PQ_LT_TIMESTAMP: return dec_time_like(d, lt);
    case FLOE_PQ_LT_INTEGER: return dec_int_type(d, lt);
    case FLOE_PQ_LT_VARIANT: return dec_variant_type(d, lt);
    case FLOE_PQ_LT_GEOMETRY:
    case FLOE_PQ_LT_GEOGRAPHY: return dec_geo_type(d, lt);
    default: /* empty structs and members we do not know: the kind is recorded */
        return floe_thrift_skip(&d->r, FLOE_THRIFT_STRUCT);
    }
}

static int dec_logical_type(dec *d, floe_pq_logical_type *lt) {
    memset(lt, 0, sizeof *lt);
    STRUCT_LOOP(d, {
        if (ft != FLOE_THRIFT_STRUCT || lt->kind != 0)
            rc = floe_thrift_skip(&d->r, ft);
        else
            rc = dec_logical_member(d, lt, fid);
    });
    return 0;
}

/* A name holding a NUL byte (Parquet's names are length-prefixed, so another writer may
 * write one: DuckDB shreds a variant key "a\0b" into a group of that name) would be cut
 * at the NUL by every C string floe keeps it in, and read as another field ("a"): the
 * file is refused instead, naming the element and its byte offset. */
static int rd_name(dec *d, floe_thrift_type t, const char **s) {
    int64_t at = d->r.base_offset + (int64_t)d->r.pos;
    size_t len = 0;
    int rc = rd_str(d, t, s, &len);
    if (rc == 0 && *s && memchr(*s, '\0', len))
        return floe_error_at(d->r.err, FLOE_EUNSUPPORTED, at,
                             "%s%sschema element name \"%s\\u0000...\" holds a NUL byte, "
                             "which floe cannot read (byte %" PRId64 ")",
                             d->r.what ? d->r.what : "", d->r.what ? ": " : "", *s, at);
    return rc;
}

static int dec_schema_element(dec *d, void *elem) {
    floe_pq_schema_element *e = elem;
    memset(e, 0, sizeof *e);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &e->type, &e->has_type); break;
        case 2: rc = rd_i32(d, ft, &e->type_length, &e->has_type_length); break;
        case 3: rc = rd_i32(d, ft, &e->repetition_type, &e->has_repetition_type); break;
        case 4: rc = rd_name(d, ft, &e->name); break;
        case 5: rc = rd_i32(d, ft, &e->num_children, &e->has_num_children); break;
        case 6: rc = rd_i32(d, ft, &e->converted_type, &e->has_converted_type); break;
        case 7: rc = rd_i32(d, ft, &e->scale, &e->has_scale); break;
        case 8: rc = rd_i32(d, ft, &e->precision, &e->has_precision); break;
        case 9: rc = rd_i32(d, ft, &e->field_id, &e->has_field_id); break;
        case 10:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_logical_type(d, &e->logical_type);
                e->has_logical_type = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        case 11: rc = rd_i32(d, ft, &e->vector_length, &e->has_vector_length); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!e->name)
        return missing(d, "SchemaElement", 4, "name");
    return 0;
}

static int dec_key_value(dec *d, void *elem) {
    floe_pq_key_value *kv = elem;
    memset(kv, 0, sizeof *kv);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_str(d, ft, &kv->key, NULL); break;
        case 2: rc = rd_str(d, ft, &kv->value, &kv->value_len); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!kv->key)
        return missing(d, "KeyValue", 1, "key");
    return 0;
}

static int dec_encoding_stats(dec *d, void *elem) {
    floe_pq_page_encoding_stats *s = elem;
    bool h1 = false, h2 = false, h3 = false;
    memset(s, 0, sizeof *s);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &s->page_type, &h1); break;
        case 2: rc = rd_i32(d, ft, &s->encoding, &h2); break;
        case 3: rc = rd_i32(d, ft, &s->count, &h3); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1 || !h2 || !h3)
        return missing(d, "PageEncodingStats", !h1 ? 1 : !h2 ? 2 : 3,
                       !h1 ? "page_type" : !h2 ? "encoding" : "count");
    return 0;
}

static int dec_sorting_column(dec *d, void *elem) {
    floe_pq_sorting_column *s = elem;
    bool h1 = false, h2 = false, h3 = false;
    memset(s, 0, sizeof *s);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &s->column_idx, &h1); break;
        case 2: rc = rd_bool(d, ft, &s->descending, &h2); break;
        case 3: rc = rd_bool(d, ft, &s->nulls_first, &h3); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1 || !h2 || !h3)
        return missing(d, "SortingColumn", !h1 ? 1 : !h2 ? 2 : 3,
                       !h1 ? "column_idx" : !h2 ? "descending" : "nulls_first");
    return 0;
}

static int dec_size_statistics(dec *d, floe_pq_size_statistics *s) {
    memset(s, 0, sizeof *s);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i64(d, ft, &s->unencoded_byte_array_data_bytes,
                            &s->has_unencoded_byte_array_data_bytes); break;
        case 2: rc = RD_LIST(d, ft, FLOE_THRIFT_I64, s->repetition_level_histogram,
                             s->n_rep_hist, el_i64); break;
        case 3: rc = RD_LIST(d, ft, FLOE_THRIFT_I64, s->definition_level_histogram,
                             s->n_def_hist, el_i64); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    return 0;
}

static int rd_double(dec *d, floe_thrift_type t, double *v, bool *has) {
    if (t != FLOE_THRIFT_DOUBLE)
        return floe_thrift_skip(&d->r, t);
    int rc = floe_thrift_read_double(&d->r, v);
    if (rc == 0)
        *has = true;
    return rc;
}

static int dec_bounding_box(dec *d, floe_pq_bounding_box *b) {
    bool h[9] = {false};
    double v[9] = {0};
    STRUCT_LOOP(d, if (fid >= 1 && fid <= 8) rc = rd_double(d, ft, &v[fid], &h[fid]);
                   else rc = floe_thrift_skip(&d->r, ft););
    static const char *names[] = {"", "xmin", "xmax", "ymin", "ymax"};
    for (int i = 1; i <= 4; i++)
        if (!h[i])
            return missing(d, "BoundingBox", i, names[i]);
    *b = (floe_pq_bounding_box){.xmin = v[1], .xmax = v[2], .ymin = v[3], .ymax = v[4],
                                .has_z = h[5] && h[6], .zmin = v[5], .zmax = v[6],
                                .has_m = h[7] && h[8], .mmin = v[7], .mmax = v[8]};
    return 0;
}

static int dec_geospatial_statistics(dec *d, floe_pq_geospatial_statistics *g) {
    memset(g, 0, sizeof *g);
    STRUCT_LOOP(d, switch (fid) {
        case 1:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_bounding_box(d, &g->bbox);
                g->has_bbox = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        case 2: rc = RD_LIST(d, ft, FLOE_THRIFT_I32, g->geospatial_types, g->n_types, el_i32);
                g->has_types = g->has_types || ft == FLOE_THRIFT_LIST; break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    return 0;
}

static int dec_column_metadata(dec *d, floe_pq_column_metadata *m) {
    bool h1 = false, h2 = false, h3 = false, h4 = false, h5 = false, h6 = false, h7 = false,
         h9 = false;
    memset(m, 0, sizeof *m);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &m->type, &h1); break;
        case 2: rc = RD_LIST(d, ft, FLOE_THRIFT_I32, m->encodings, m->n_encodings, el_i32);
                h2 = h2 || ft == FLOE_THRIFT_LIST; break;
        case 3: rc = RD_LIST(d, ft, FLOE_THRIFT_BINARY, m->path_in_schema, m->n_path, el_str);
                h3 = h3 || ft == FLOE_THRIFT_LIST; break;
        case 4: rc = rd_i32(d, ft, &m->codec, &h4); break;
        case 5: rc = rd_i64(d, ft, &m->num_values, &h5); break;
        case 6: rc = rd_i64(d, ft, &m->total_uncompressed_size, &h6); break;
        case 7: rc = rd_i64(d, ft, &m->total_compressed_size, &h7); break;
        case 8: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, m->key_value_metadata, m->n_kv,
                             dec_key_value); break;
        case 9: rc = rd_i64(d, ft, &m->data_page_offset, &h9); break;
        case 10: rc = rd_i64(d, ft, &m->index_page_offset, &m->has_index_page_offset); break;
        case 11: rc = rd_i64(d, ft, &m->dictionary_page_offset,
                             &m->has_dictionary_page_offset); break;
        case 12:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_statistics(d, &m->statistics);
                m->has_statistics = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        case 13: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, m->encoding_stats,
                              m->n_encoding_stats, dec_encoding_stats); break;
        case 14: rc = rd_i64(d, ft, &m->bloom_filter_offset, &m->has_bloom_filter_offset); break;
        case 15: rc = rd_i32(d, ft, &m->bloom_filter_length, &m->has_bloom_filter_length); break;
        case 16:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_size_statistics(d, &m->size_statistics);
                m->has_size_statistics = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        case 17:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_geospatial_statistics(d, &m->geospatial_statistics);
                m->has_geospatial_statistics = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    static const char *names[] = {"", "type", "encodings", "path_in_schema", "codec",
                                  "num_values", "total_uncompressed_size",
                                  "total_compressed_size", "", "data_page_offset"};
    bool have[] = {true, h1, h2, h3, h4, h5, h6, h7, true, h9};
    for (int i = 1; i <= 9; i++)
        if (!have[i])
            return missing(d, "ColumnMetaData", i, names[i]);
    return 0;
}

static int dec_column_chunk(dec *d, void *elem) {
    floe_pq_column_chunk *c = elem;
    bool h2 = false;
    memset(c, 0, sizeof *c);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_str(d, ft, &c->file_path, NULL); break;
        case 2: rc = rd_i64(d, ft, &c->file_offset, &h2); break;
        case 3:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_column_metadata(d, &c->meta_data);
                c->has_meta_data = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        case 4: rc = rd_i64(d, ft, &c->offset_index_offset, &c->has_offset_index); break;
        case 5: rc = rd_i32(d, ft, &c->offset_index_length, NULL); break;
        case 6: rc = rd_i64(d, ft, &c->column_index_offset, &c->has_column_index); break;
        case 7: rc = rd_i32(d, ft, &c->column_index_length, NULL); break;
        case 8: c->has_crypto_metadata = true; rc = floe_thrift_skip(&d->r, ft); break;
        case 9: c->has_encrypted_column_metadata = true; rc = floe_thrift_skip(&d->r, ft); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    /* file_offset is required in the IDL but old writers omit it; 0 is its default. */
    (void)h2;
    return 0;
}

static int dec_row_group(dec *d, void *elem) {
    floe_pq_row_group *g = elem;
    bool h1 = false, h2 = false, h3 = false;
    memset(g, 0, sizeof *g);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, g->columns, g->n_columns,
                             dec_column_chunk);
                h1 = h1 || ft == FLOE_THRIFT_LIST; break;
        case 2: rc = rd_i64(d, ft, &g->total_byte_size, &h2); break;
        case 3: rc = rd_i64(d, ft, &g->num_rows, &h3); break;
        case 4: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, g->sorting_columns, g->n_sorting,
                             dec_sorting_column); break;
        case 5: rc = rd_i64(d, ft, &g->file_offset, &g->has_file_offset); break;
        case 6: rc = rd_i64(d, ft, &g->total_compressed_size,
                            &g->has_total_compressed_size); break;
        case 7: rc = rd_i16(d, ft, &g->ordinal, &g->has_ordinal); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1)
        return missing(d, "RowGroup", 1, "columns");
    if (!h2)
        return missing(d, "RowGroup", 2, "total_byte_size");
    if (!h3)
        return missing(d, "RowGroup", 3, "num_rows");
    return 0;
}

static int dec_column_order(dec *d, void *elem) { return dec_union_id(d, elem); }

static void dec_init(dec *d, const uint8_t *p, size_t n, int64_t base, floe_arena *a,
                     const char *what, floe_error *err) {
    floe_thrift_reader_init(&d->r, p, n, err);
    d->r.base_offset = base;
    d->r.what = what;
    d->arena = a;
}

static int dec_file_metadata(dec *d, floe_pq_file_metadata *md) {
    bool h1 = false, h2 = false, h3 = false, h4 = false;
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &md->version, &h1); break;
        case 2: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, md->schema, md->n_schema,
                             dec_schema_element);
                h2 = h2 || ft == FLOE_THRIFT_LIST; break;
        case 3: rc = rd_i64(d, ft, &md->num_rows, &h3); break;
        case 4: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, md->row_groups, md->n_row_groups,
                             dec_row_group);
                h4 = h4 || ft == FLOE_THRIFT_LIST; break;
        case 5: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, md->key_value_metadata, md->n_kv,
                             dec_key_value); break;
        case 6: rc = rd_str(d, ft, &md->created_by, NULL); break;
        case 7: rc = RD_LIST(d, ft, FLOE_THRIFT_STRUCT, md->column_orders,
                             md->n_column_orders, dec_column_order); break;
        case 8: md->has_encryption_algorithm = true; rc = floe_thrift_skip(&d->r, ft); break;
        case 9: md->has_footer_signing_key_metadata = true;
                rc = floe_thrift_skip(&d->r, ft); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1)
        return missing(d, "FileMetaData", 1, "version");
    if (!h2)
        return missing(d, "FileMetaData", 2, "schema");
    if (!h3)
        return missing(d, "FileMetaData", 3, "num_rows");
    if (!h4)
        return missing(d, "FileMetaData", 4, "row_groups");
    return 0;
}

int floe_pq_file_metadata_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                 floe_arena *arena, floe_pq_file_metadata *out,
                                 floe_error *err) {
    dec d;
    floe_pq_file_metadata md;
    memset(&md, 0, sizeof md);
    dec_init(&d, p, n, base_offset, arena, "footer", err);
    int rc = dec_file_metadata(&d, &md);
    if (rc < 0)
        return rc;
    *out = md;
    return 0;
}

int floe_pq_file_metadata_check_encryption(const floe_pq_file_metadata *md, floe_error *err) {
    if (md->has_encryption_algorithm || md->has_footer_signing_key_metadata)
        return floe_error_set(err, FLOE_EENCRYPTED,
                              "footer: encrypted Parquet is not supported (plaintext footer "
                              "with encryption algorithm)");
    for (size_t g = 0; g < md->n_row_groups; g++)
        for (size_t c = 0; c < md->row_groups[g].n_columns; c++) {
            const floe_pq_column_chunk *cc = &md->row_groups[g].columns[c];
            if (cc->has_crypto_metadata || cc->has_encrypted_column_metadata)
                return floe_error_set(err, FLOE_EENCRYPTED,
                                      "row group %zu: column %zu: encrypted Parquet is not "
                                      "supported",
                                      g, c);
        }
    return 0;
}

static int dec_data_page_header(dec *d, floe_pq_data_page_header *h) {
    bool h1 = false, h2 = false, h3 = false, h4 = false;
    memset(h, 0, sizeof *h);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &h->num_values, &h1); break;
        case 2: rc = rd_i32(d, ft, &h->encoding, &h2); break;
        case 3: rc = rd_i32(d, ft, &h->definition_level_encoding, &h3); break;
        case 4: rc = rd_i32(d, ft, &h->repetition_level_encoding, &h4); break;
        case 5:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_statistics(d, &h->statistics);
                h->has_statistics = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1 || !h2 || !h3 || !h4)
        return missing(d, "DataPageHeader", !h1 ? 1 : !h2 ? 2 : !h3 ? 3 : 4,
                       !h1 ? "num_values" : !h2 ? "encoding" : !h3 ? "definition_level_encoding"
                                                             : "repetition_level_encoding");
    return 0;
}

static int dec_dictionary_page_header(dec *d, floe_pq_dictionary_page_header *h) {
    bool h1 = false, h2 = false;
    memset(h, 0, sizeof *h);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &h->num_values, &h1); break;
        case 2: rc = rd_i32(d, ft, &h->encoding, &h2); break;
        case 3: rc = rd_bool(d, ft, &h->is_sorted, &h->has_is_sorted); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1)
        return missing(d, "DictionaryPageHeader", 1, "num_values");
    if (!h2)
        return missing(d, "DictionaryPageHeader", 2, "encoding");
    return 0;
}

static int dec_data_page_header_v2(dec *d, floe_pq_data_page_header_v2 *h) {
    bool hv[7] = {false};
    memset(h, 0, sizeof *h);
    h->is_compressed = true;
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i32(d, ft, &h->num_values, &hv[1]); break;
        case 2: rc = rd_i32(d, ft, &h->num_nulls, &hv[2]); break;
        case 3: rc = rd_i32(d, ft, &h->num_rows, &hv[3]); break;
        case 4: rc = rd_i32(d, ft, &h->encoding, &hv[4]); break;
        case 5: rc = rd_i32(d, ft, &h->definition_levels_byte_length, &hv[5]); break;
        case 6: rc = rd_i32(d, ft, &h->repetition_levels_byte_length, &hv[6]); break;
        case 7: rc = rd_bool(d, ft, &h->is_compressed, NULL); break;
        case 8:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_statistics(d, &h->statistics);
                h->has_statistics = true;
            } else {
                rc = floe_thrift_skip(&d->r, ft);
            }
            break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    static const char *names[] = {"", "num_values", "num_nulls", "num_rows", "encoding",
                                  "definition_levels_byte_length",
                                  "repetition_levels_byte_length"};
    for (int i = 1; i <= 6; i++)
        if (!hv[i])
            return missing(d, "DataPageHeaderV2", i, names[i]);
    return 0;
}

int floe_pq_page_header_decode(const uint8_t *p, size_t n, int64_t base_offset,
                               floe_pq_page_header *out, size_t *consumed, floe_error *err) {
    dec d;
    floe_pq_page_header h;
    bool h1 = false, h2 = false, h3 = false;
    memset(&h, 0, sizeof h);
    dec_init(&d, p, n, base_offset, NULL, "page header", err);
    STRUCT_LOOP(&d, switch (fid) {
        case 1: rc = rd_i32(&d, ft, &h.type, &h1); break;
        case 2: rc = rd_i32(&d, ft, &h.uncompressed_page_size, &h2); break;
        case 3: rc = rd_i32(&d, ft, &h.compressed_page_size, &h3); break;
        case 4: rc = rd_i32(&d, ft, &h.crc, &h.has_crc); break;
        case 5:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_data_page_header(&d, &h.data_page_header);
                h.has_data_page_header = true;
            } else {
                rc = floe_thrift_skip(&d.r, ft);
            }
            break;
        case 6:
            h.has_index_page_header = ft == FLOE_THRIFT_STRUCT;
            rc = floe_thrift_skip(&d.r, ft);
            break;
        case 7:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_dictionary_page_header(&d, &h.dictionary_page_header);
                h.has_dictionary_page_header = true;
            } else {
                rc = floe_thrift_skip(&d.r, ft);
            }
            break;
        case 8:
            if (ft == FLOE_THRIFT_STRUCT) {
                rc = dec_data_page_header_v2(&d, &h.data_page_header_v2);
                h.has_data_page_header_v2 = true;
            } else {
                rc = floe_thrift_skip(&d.r, ft);
            }
            break;
        default: rc = floe_thrift_skip(&d.r, ft);
    });
    if (!h1)
        return missing(&d, "PageHeader", 1, "type");
    if (!h2)
        return missing(&d, "PageHeader", 2, "uncompressed_page_size");
    if (!h3)
        return missing(&d, "PageHeader", 3, "compressed_page_size");
    if (h.uncompressed_page_size < 0 || h.compressed_page_size < 0)
        return floe_thrift_reader_fail(&d.r, "PageHeader: negative page size");
    *out = h;
    if (consumed)
        *consumed = d.r.pos;
    return 0;
}

int floe_pq_column_index_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                floe_arena *arena, floe_pq_column_index *out,
                                floe_error *err) {
    dec d;
    floe_pq_column_index ci;
    size_t n_min = 0, n_max = 0;
    bool h1 = false, h2 = false, h3 = false, h4 = false;
    memset(&ci, 0, sizeof ci);
    dec_init(&d, p, n, base_offset, arena, "column index", err);
    STRUCT_LOOP(&d, switch (fid) {
        case 1: rc = RD_LIST(&d, ft, FLOE_THRIFT_TRUE, ci.null_pages, ci.n_pages, el_bool);
                h1 = h1 || ft == FLOE_THRIFT_LIST; break;
        case 2: rc = RD_LIST(&d, ft, FLOE_THRIFT_BINARY, ci.min_values, n_min, el_bin);
                h2 = h2 || ft == FLOE_THRIFT_LIST; break;
        case 3: rc = RD_LIST(&d, ft, FLOE_THRIFT_BINARY, ci.max_values, n_max, el_bin);
                h3 = h3 || ft == FLOE_THRIFT_LIST; break;
        case 4: rc = rd_i32(&d, ft, &ci.boundary_order, &h4); break;
        case 5: rc = RD_LIST(&d, ft, FLOE_THRIFT_I64, ci.null_counts, ci.n_null_counts,
                             el_i64); break;
        case 6: rc = RD_LIST(&d, ft, FLOE_THRIFT_I64, ci.repetition_level_histograms,
                             ci.n_rep_hist, el_i64); break;
        case 7: rc = RD_LIST(&d, ft, FLOE_THRIFT_I64, ci.definition_level_histograms,
                             ci.n_def_hist, el_i64); break;
        case 8: rc = RD_LIST(&d, ft, FLOE_THRIFT_I64, ci.nan_counts, ci.n_nan_counts,
                             el_i64); break;
        default: rc = floe_thrift_skip(&d.r, ft);
    });
    if (!h1 || !h2 || !h3 || !h4)
        return missing(&d, "ColumnIndex", !h1 ? 1 : !h2 ? 2 : !h3 ? 3 : 4,
                       !h1 ? "null_pages" : !h2 ? "min_values" : !h3 ? "max_values"
                                                              : "boundary_order");
    if (n_min != ci.n_pages || n_max != ci.n_pages ||
        (ci.n_null_counts && ci.n_null_counts != ci.n_pages) ||
        (ci.n_nan_counts && ci.n_nan_counts != ci.n_pages))
        return floe_thrift_reader_fail(&d.r, "ColumnIndex: list lengths disagree");
    *out = ci;
    return 0;
}

static int dec_page_location(dec *d, void *elem) {
    floe_pq_page_location *l = elem;
    bool h1 = false, h2 = false, h3 = false;
    memset(l, 0, sizeof *l);
    STRUCT_LOOP(d, switch (fid) {
        case 1: rc = rd_i64(d, ft, &l->offset, &h1); break;
        case 2: rc = rd_i32(d, ft, &l->compressed_page_size, &h2); break;
        case 3: rc = rd_i64(d, ft, &l->first_row_index, &h3); break;
        default: rc = floe_thrift_skip(&d->r, ft);
    });
    if (!h1 || !h2 || !h3)
        return missing(d, "PageLocation", !h1 ? 1 : !h2 ? 2 : 3,
                       !h1 ? "offset" : !h2 ? "compressed_page_size" : "first_row_index");
    return 0;
}

int floe_pq_offset_index_decode(const uint8_t *p, size_t n, int64_t base_offset,
                                floe_arena *arena, floe_pq_offset_index *out,
                                floe_error *err) {
    dec d;
    floe_pq_offset_index oi;
    bool h1 = false;
    memset(&oi, 0, sizeof oi);
    dec_init(&d, p, n, base_offset, arena, "offset index", err);
    STRUCT_LOOP(&d, switch (fid) {
        case 1: rc = RD_LIST(&d, ft, FLOE_THRIFT_STRUCT, oi.page_locations, oi.n_pages,
                             dec_page_location);
                h1 = h1 || ft == FLOE_THRIFT_LIST; break;
        case 2: rc = RD_LIST(&d, ft, FLOE_THRIFT_I64, oi.unencoded_byte_array_data_bytes,
                             oi.n_unencoded, el_i64); break;
        default: rc = floe_thrift_skip(&d.r, ft);
    });
    if (!h1)
        return missing(&d, "OffsetIndex", 1, "page_locations");
    *out = oi;
    return 0;
}
