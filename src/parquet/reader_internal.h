/*
 * reader_internal.h - state shared by the Parquet reader's files (private to src/parquet).
 *
 *   reader.c          open, footer, metadata accessors, column chunk and page decoding
 *   reader_schema.c   the Parquet schema tree, value types, Iceberg mapping, assembly plan
 *   reader_filter.c   the filter language: parse, statistics / page index / row evaluation
 *   reader_rows.c     record assembly from levels and the NDJSON / CSV printers
 */
#ifndef FLOE_PQ_READER_INTERNAL_H
#define FLOE_PQ_READER_INTERNAL_H

#include "floe/codec.h"
#include "floe/parquet_reader.h"
#include "parquet/metadata.h"

__extension__ typedef __int128 pq_i128;

/* How a leaf's file values become its in-memory values (see parquet_reader.h). */
typedef enum pq_conv {
    PQ_CONV_NONE = 0,
    PQ_CONV_INT96_US,  /* INT96 (nanos of day, julian day) -> int64 micros */
    PQ_CONV_F16,       /* FLBA(2) half float -> float */
    PQ_CONV_U32_I64,   /* uint32 in INT32 -> int64 */
    PQ_CONV_MS_US_32,  /* TIME millis int32 -> int64 micros */
    PQ_CONV_MS_US_64,  /* TIMESTAMP millis int64 -> micros */
    PQ_CONV_NS_US_64,  /* TIME nanos int64 -> micros */
    PQ_CONV_DECIMAL,   /* any decimal storage -> Iceberg's storage for the precision */
} pq_conv;

/* Comparison domain of a leaf's in-memory values (filters, statistics). */
typedef enum pq_cmp_kind {
    PQ_CK_NONE = 0, PQ_CK_BOOL, PQ_CK_I64, PQ_CK_U64, PQ_CK_F64, PQ_CK_DEC, PQ_CK_BYTES,
} pq_cmp_kind;

typedef struct pq_leaf {
    floe_pq_node *node;
    int src_phys;          /* file physical type */
    int32_t src_width;     /* file value width (0 for BYTE_ARRAY) */
    pq_conv conv;
    floe_phys out_phys;    /* colbuf layout */
    int32_t out_width;
    pq_cmp_kind ck;
    int time_unit;         /* TIMESTAMP_NS and friends: 3 nanos, else micros (2) */
    bool stats_signed_ok;  /* deprecated min/max usable */
} pq_leaf;

/* A typed scalar in a leaf's comparison domain. Bytes are borrowed. */
typedef struct pq_value {
    bool is_null;
    bool is_nan;
    int64_t i;
    uint64_t u;
    double d;
    pq_i128 dec;
    const uint8_t *p;
    size_t n;
} pq_value;

/* ---- filter expressions ----------------------------------------------------------- */
typedef enum pq_expr_kind {
    PQ_X_AND, PQ_X_OR, PQ_X_CMP, PQ_X_IN, PQ_X_NOT_IN, PQ_X_IS_NULL, PQ_X_NOT_NULL,
    PQ_X_LIKE, PQ_X_NOT_LIKE, /* lits[0]: the prefix */
    PQ_X_FALSE,
} pq_expr_kind;
/* in floe_filter_op's order */
typedef enum pq_cmp_op { PQ_EQ, PQ_NE, PQ_LT, PQ_LE, PQ_GT, PQ_GE } pq_cmp_op;

typedef struct pq_expr pq_expr;
struct pq_expr {
    pq_expr_kind kind;
    pq_cmp_op op;
    pq_expr *a, *b;
    int32_t column;        /* leaf column */
    pq_value *lits;        /* CMP: 1; IN: n */
    size_t nlits;
    uint8_t *lit_storage;  /* literal bytes (arena) */
};

/* ---- assembly plan ------------------------------------------------------------------ */
/* A Variant group (VariantEncoding.md, VariantShredding.md) plans as PQ_P_VARIANT:
 * children[0] the metadata leaf, then (value, typed_value) as below. A (value,
 * typed_value) pair - the group itself, each shredded object field, each shredded array
 * element - has v_value / v_typed: the index in children of the `value` leaf and of the
 * `typed_value` plan, -1 when the file has none. A typed_value plan is a PQ_P_LEAF with
 * vprim (the variant primitive it holds), a PQ_P_LIST whose element is a PQ_P_VFIELD, or
 * a PQ_P_STRUCT (a shredded object) of PQ_P_VFIELDs named by their fields. */
typedef enum pq_plan_kind {
    PQ_P_LEAF, PQ_P_STRUCT, PQ_P_LIST, PQ_P_MAP, PQ_P_CONST, PQ_P_VARIANT, PQ_P_VFIELD
} pq_plan_kind;
typedef struct pq_plan pq_plan;
struct pq_plan {
    pq_plan_kind kind;
    const floe_pq_node *node;  /* the node whose value this is */
    const char *name;          /* JSON key */
    bool nullable;             /* value may be null: null when def < def_present */
    int16_t def_present;       /* def level at which the value is non-null */
    int16_t rep_def;           /* LIST/MAP: def level at which an element exists */
    int16_t rep_level;         /* LIST/MAP: repetition level of the repeated node */
    int32_t first_col, end_col; /* projected column slots [first, end) under this plan */
    int32_t slot;              /* LEAF: projected column slot */
    pq_plan *children;         /* STRUCT: fields; LIST: [element]; MAP: [key, value?] */
    size_t nchildren;
    /* rows shaped by a table schema (floe_pq_reader_select_fields) */
    floe_type_id ptype;        /* LEAF: print as this type (0: the file's) */
    const char *const_text[2]; /* CONST: the value in NDJSON and in canonical form */
    bool hidden;               /* consumes its columns' entries, prints nothing */
    int8_t v_value, v_typed;   /* VARIANT, VFIELD: children indexes, -1 for none */
    int8_t vprim;              /* LEAF under a variant's typed_value: floe_variant_prim */
};

/* Where the next slice of a column chunk without page locations picks up (reader.c). */
struct pq_resume {
    bool valid;
    size_t rg;
    int64_t off;      /* a data page starting at a row boundary */
    int64_t row;      /* its first row */
    int64_t levels;   /* entries in the pages before it */
    int64_t dict_end; /* end of the pages before the first data page (dictionary), or -1 */
};

struct floe_pq_reader {
    floe_input *in;            /* NULL when reading memory */
    const uint8_t *mem;
    const uint8_t *map;        /* floe_input_mmap view of in (read under a guard), or NULL */
    floe_buf whole;            /* a small file read whole (read_whole): mem points here */
    bool map_tried;
    size_t mem_len;
    char *name;
    floe_pq_reader_options opts;
    uint64_t read_bytes;       /* decompressed page bytes of the current read (max_read_bytes) */
    int64_t file_size;
    int64_t footer_start;      /* offset of the footer's first byte */
    int64_t footer_len;
    floe_arena arena;          /* footer, schema tree, plan, filter */
    floe_pq_file_metadata md;

    floe_pq_node *nodes;       /* schema tree in element order; nodes[0] is the root */
    size_t nnodes;
    pq_leaf *leaves;           /* one per column */
    size_t nleaves;

    floe_schema *iceberg;      /* lazily built */
    floe_field **ice_leaf;     /* per column: its Iceberg leaf (when iceberg is built) */
    int iceberg_rc;
    char iceberg_msg[FLOE_ERROR_MSG_MAX];

    bool *selected;            /* per column: chosen by the projection */
    bool *needed;              /* selected or used by the filter */
    pq_expr *filter;
    bool prune_rg, prune_pages;

    /* current row set */
    floe_pq_rowset rowset;
    floe_colbuf *cols;         /* one per slot (needed column) */
    size_t nslots;
    /* per slot: cols[s].def[0 .. def_all[s].n) hold max_def, left there by earlier pages
     * or row groups (the buffer is reused as is); a page without nulls over that range
     * need not write them again. Valid while cols[s].def is def_all[s].def. */
    struct pq_def_memo {
        const int16_t *def;
        size_t n;
    } *def_all;
    const floe_pq_node **rs_nodes;
    int32_t *slot_of_col;      /* column -> rowset slot, -1 if not read */
    pq_plan *plan;             /* top-level STRUCT over the printed columns */
    bool shaped;               /* rows shaped by read_fields (borrowed) */
    const floe_pq_read_field *read_fields;
    size_t nread_fields;
    bool plan_dirty;
    size_t next_rg;

    /* scratch, reused across pages */
    floe_buf chunk;            /* stored bytes of the current column chunk */
    floe_buf page;             /* decompressed page */
    floe_buf stage;            /* raw values before conversion */
    floe_buf stage_bytes;      /* BYTE_ARRAY staging */
    uint32_t *idx;             /* dictionary indices */
    size_t idx_cap;
    uint32_t *stage_offsets;
    size_t stage_offsets_cap;
    floe_colbuf dict;          /* current column chunk's dictionary (in-memory form) */
    uint32_t dict_max_len;     /* longest entry of a byte-array dict (gather_dict) */
    floe_codec_ctx *codec;
    floe_pq_read_stats stats;
    /* per column: where the next slice of a chunk without page locations picks up */
    struct pq_resume *resume;
};

/* reader_schema.c */
int pq_schema_build(floe_pq_reader *r, floe_error *err);
int pq_schema_iceberg(floe_pq_reader *r, floe_error *err);
/* Select every column under nd. */
void pq_select_under(floe_pq_reader *r, const floe_pq_node *nd);
/* Select the key columns of every map under nd that has any column selected: a map's
 * values are printed by key, so a projection of a value leaf reads the keys too. */
void pq_select_map_keys(floe_pq_reader *r, const floe_pq_node *nd);
/* Build r->plan over the selected columns (slots assigned by r->slot_of_col). */
int pq_plan_build(floe_pq_reader *r, floe_error *err);

/* reader.c */
/* Convert one raw file value (src_width bytes, or n bytes for BYTE_ARRAY) of leaf into
 * its in-memory form at out (out_width bytes; BYTE_ARRAY values are not converted). */
int pq_convert_one(const pq_leaf *lf, const uint8_t *src, size_t n, uint8_t *out);
/* The in-memory value i (value index, not level) of colbuf c as a pq_value. */
void pq_value_from_col(const pq_leaf *lf, const floe_colbuf *c, size_t i, pq_value *v);
/* A statistic's bytes as a pq_value; false if unusable. */
bool pq_value_from_stat(const pq_leaf *lf, const uint8_t *p, size_t n, pq_value *v);
/* Compare two values of the same leaf: <0, 0, >0. NaN sorts above every number. */
int pq_value_cmp(const pq_leaf *lf, const pq_value *a, const pq_value *b);

/* Usable min/max bytes of a statistics struct for this leaf (false if none). */
bool pq_stats_min_max(const pq_leaf *lf, const floe_pq_statistics *s, floe_pq_bytes *mn,
                      floe_pq_bytes *mx);
/* Lay out slots and the plan after a projection/filter change. */
int pq_prepare(floe_pq_reader *r, floe_error *err);
/* Returns 1 when the chunk has no usable offset index. */
int pq_load_offset_index(floe_pq_reader *r, size_t rg, size_t col, floe_arena *a,
                         floe_pq_offset_index *oi, floe_error *err);

/* reader_filter.c */
int pq_filter_parse(floe_pq_reader *r, const char *text, pq_expr **out, floe_error *err);
void pq_filter_columns(const pq_expr *e, bool *needed);
/* May any row of row group rg match? */
bool pq_filter_rg_may_match(floe_pq_reader *r, size_t rg);
/* Row ranges of rg that may match by the page index: ranges[2k], ranges[2k+1] = [start,
 * end). *n = number of ranges. Returns 0, or 1 when no page index applies (read all). */
int pq_filter_page_ranges(floe_pq_reader *r, size_t rg, int64_t **ranges, size_t *n,
                          floe_error *err);
/* Exact filter for row `row` of the current rowset; row_value[slot] is the value index of
 * that row in each non-repeated column (or -1 when the row's slot is null). */
bool pq_filter_row(const floe_pq_reader *r, const pq_expr *e, const int64_t *row_value);

/* reader_rows.c */
int pq_format_value(const floe_pq_reader *r, const pq_leaf *lf, const pq_value *v,
                    const floe_colbuf *c, size_t vi, floe_pq_row_format fmt, floe_buf *out);
int pq_format_stat_json(const pq_leaf *lf, const uint8_t *p, size_t n, floe_buf *out);

#endif
