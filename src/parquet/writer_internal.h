/*
 * writer_internal.h - the Parquet writer's state, shared by its files (private to
 * src/parquet):
 *
 *   writer.c         the public API, appending values, pages, row groups, the footer
 *   writer_stats.c   bound truncation, value comparison, min/max statistics
 *   writer_dict.c    the dictionary of a column chunk (hash table, entry statistics)
 *   writer_schema.c  Iceberg schema -> Parquet SchemaElements
 *   writer_behind.c  write-behind: the thread writing handed-over chunks, in order
 *   writer_copy.c    row groups copied verbatim from another file
 *
 * Functions shared between these files are prefixed pqw_.
 */
#ifndef FLOE_PQ_WRITER_INTERNAL_H
#define FLOE_PQ_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "floe/codec.h"
#include "floe/parquet.h"
#include "floe/wkb.h"
#include "parquet/metadata.h"

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
    /* geometry / geography (leaf->geo): no min/max statistics or column index
     * (LogicalTypes.md: their sort order is undefined). geo_chunk: the bounding box and
     * types of the chunk's values, its GeospatialStatistics (geo_chunk_ok false once a
     * value is not WKB: then none); merged into geo_box, the file's bounds, when the
     * chunk is flushed (geo_box_ok false once a chunk was not ok). A geography box is
     * written only when floe_wkb_bbox_geography_ok (all points, in range). */
    bool geo_box_ok, geo_chunk_ok;
    floe_wkb_bbox geo_box, geo_chunk;
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
     * page_gen), not once per value. pqw_dict_stat_flush moves them into pstat. */
    bool track_entries;
    uint32_t *dstamp;         /* per entry */
    uint32_t page_gen;
    uint32_t pmin1, pmax1;    /* entry index + 1, 0 = none yet */
    int64_t dict_data_pages;  /* data pages encoded with the dictionary */
    int64_t carried_pages;    /* stored pages placed as they are (whole file) */

    /* --- chunk being built --- */
    /* data pages (headers + bodies) in segments of growing size: a page is appended to
     * the last one, or starts a new one, so no byte is copied again as the chunk grows
     * (one growing buffer's reallocs copied it ~1x over and first-touched ~2x its pages) */
    floe_buf *segs;
    size_t nsegs, segs_cap;
    size_t chunk_len;         /* bytes in all segments */
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

/* Chunk segments from this size on are allocated in transparent huge pages
 * (floe_alloc_huge); from twice this size on, kept for the next row group (seg_pool). */
#define CHUNK_SEG_HUGE ((size_t)2 << 20)

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
    /* Chunk segments from 2 x CHUNK_SEG_HUGE bytes on, kept once written for the next row
     * group's chunks (writer_behind.c: pqw_seg_take, pqw_seg_keep): fresh memory is the
     * dearest thing a conversion touches, and every row group would otherwise fault in
     * its chunks' pages anew. Only row groups closed at row_group_size feed it (the next
     * one needs as much); an explicit flush or close empties it, and
     * floe_pq_writer_buffered_bytes counts it. */
    pthread_mutex_t seg_mu;
    floe_buf *seg_pool;       /* kept segments (len 0), seg_npool of seg_pool_cap */
    size_t seg_npool, seg_pool_cap;
    _Atomic size_t seg_pool_bytes; /* changed under seg_mu, read without it */
    /* Under seg_mu: the huge segments' bytes the columns hold now, and three quarters of
     * what those of the last row group closed at row_group_size came to (target). The
     * pool keeps a segment only while pool + held <= target (pqw_seg_row_group_done). */
    size_t seg_held, seg_target;
    bool seg_pool_on;         /* hand-overs now feed the pool */
    struct pqw_shred *shred;  /* opts.variant_shredding: schema is its physical schema */
    /* variant_shredding auto: until the paths are chosen (settle_auto), the rows written
     * are held here (logical: the caller's schema) and the writer has no columns yet */
    bool auto_pending;
    const floe_schema *logical;
    floe_batch held;
};

/* Where pqw_make_bounds put a stat's bounds (zero-fixed, truncated) in its output buffer. */
typedef struct bounds {
    size_t min_off, min_len, max_off, max_len;
    bool min_exact, max_exact;
} bounds;

/* writer_behind.c: write-behind */
int pqw_wb_drain(floe_pq_writer *w, floe_error *err);
void pqw_wb_stop(floe_pq_writer *w);
int pqw_write_out(floe_pq_writer *w, const void *p, size_t n, floe_error *err);
int pqw_write_out_buf(floe_pq_writer *w, floe_buf *b, floe_error *err);
/* Chunk segments: the smallest kept one of at least size bytes of capacity, or false (then
 * the kept ones the caller's fresh size bytes would crowd past the limit are freed); b's
 * storage once
 * written: kept when the pool is on and b is a huge segment, freed otherwise (b is left
 * empty either way); every kept one freed. */
bool pqw_seg_take(floe_pq_writer *w, size_t size, floe_buf *b);
void pqw_seg_held(floe_pq_writer *w, size_t bytes); /* a fresh huge segment */
void pqw_seg_row_group_done(floe_pq_writer *w);      /* before its segments are handed over */
void pqw_seg_keep(floe_pq_writer *w, floe_buf *b);
void pqw_seg_release(floe_pq_writer *w);
size_t pqw_seg_pool_bytes(const floe_pq_writer *w);

/* writer_stats.c: bound truncation, comparisons and statistics */
int pqw_cmp_plain(const col *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);
int pqw_vstat_merge_bounds(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                           bool min_inexact, const uint8_t *maxp, size_t maxn,
                           bool max_inexact);
int pqw_vstat_merge(const col *c, vstat *s, const uint8_t *minp, size_t minn,
                    const uint8_t *maxp, size_t maxn);
int pqw_vstat_merge_stat(const col *c, vstat *dst, const vstat *src);
void pqw_vstat_reset(vstat *s);
void pqw_vstat_free(vstat *s);
int pqw_make_bounds(const col *c, const vstat *s, size_t trunc, floe_buf *out, bounds *b);
int pqw_span_stats_fixed(col *c, const uint8_t *v, size_t nv);
int pqw_span_minmax_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv);
int pqw_stats_fill(const floe_pq_writer *w, const col *c, const vstat *s, int64_t nulls,
                   int64_t nans, floe_buf *scratch, floe_pq_statistics *st, bounds *b);
void pqw_stats_point(const col *c, floe_pq_statistics *st, const floe_buf *scratch,
                     const bounds *b, bool has);

/* writer_dict.c: the column chunk dictionary */
int pqw_dict_add_fixed(col *c, const uint8_t *v, size_t nv, uint32_t *out);
int pqw_dict_add_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv,
                       uint32_t *out);
void pqw_dict_track(col *c, const uint32_t *idx, size_t nv);
int pqw_dict_stat_flush(col *c);
void pqw_dict_drop_tables(col *c);
void pqw_dict_clear(col *c);

/* writer_shred.c: variant shredding. pqw_shred_new builds the physical schema for the
 * caller's (borrowed: outlives it) and spec; pqw_shred_batch splits a batch of the
 * caller's schema into *out (valid until the next call or the free, borrowing in's
 * buffers); pqw_shred_logical_leaf is the caller's leaf for a physical column (NULL for
 * a shredded variant's parts). */
typedef struct pqw_shred pqw_shred;
int pqw_shred_new(const floe_schema *logical, const char *spec, pqw_shred **out,
                  floe_error *err);
/* spec is the word auto (blanks around it aside). */
bool pqw_shred_is_auto(const char *spec);
/* The shredder of the paths variant.shredding auto chooses from sample's rows (a batch of
 * logical; borrowed for the call); *out NULL when it chooses none. */
int pqw_shred_new_auto(const floe_schema *logical, const floe_batch *sample, pqw_shred **out,
                       floe_error *err);
/* writer.c: variant_shredding auto: choose the paths from the rows held and write them
 * (once; 0 with nothing to do after). */
int pqw_settle_auto(floe_pq_writer *w, floe_error *err);
/* auto: rows held before the paths are chosen (whole batches: the batch that reaches it
 * is included). */
#define PQW_AUTO_SAMPLE_ROWS 10000
void pqw_shred_free(pqw_shred *s);
const floe_schema *pqw_shred_schema(const pqw_shred *s);
const floe_field *pqw_shred_logical_leaf(const pqw_shred *s, size_t column);
/* Is physical column a shredded path's primitive typed_value? 1 with the variant's field
 * id, the column of the path's value leaf and the path's normalized JSON form ("$" for
 * the variant's root, "$['a']['b']"; path reset first); 0 when not; FLOE_ENOMEM. */
int pqw_shred_typed_leaf(const pqw_shred *s, size_t column, int32_t *variant_id,
                         size_t *value_column, floe_buf *path);
int pqw_shred_batch(pqw_shred *s, const floe_batch *in, const floe_batch **out,
                    floe_error *err);

/* writer_schema.c: schema conversion */
int pqw_build_schema(floe_pq_writer *w, floe_error *err);

#endif
