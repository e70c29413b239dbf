/*
 * reader_schema.c - the file's Parquet schema as a tree, each leaf's value type, the
 * mapping onto an Iceberg schema, and the record-assembly plan.
 *
 * Specs: parquet-format parquet.thrift (SchemaElement), LogicalTypes.md (logical and
 * converted types; "Nested Types" with the backward-compatibility rules for lists and
 * maps).
 *
 * Nested layouts accepted (LogicalTypes.md "Lists" / "Maps"):
 *   <r> group a (LIST) { repeated group list { <r> element } }      three-level
 *   <r> group a (LIST) { repeated <prim> element }                   two-level
 *   <r> group a (LIST) { repeated group array|a_tuple|g{>1 fields} } element = the group
 *   repeated <anything> x (no annotation)                           list of required x
 *   <r> group m (MAP|MAP_KEY_VALUE) { repeated group kv { key; [value] } }
 * and a MAP whose repeated child is not marked repeated in the way the spec wants
 * (incorrect_map_schema.parquet) as long as the child group is repeated.
 */
#include <stdio.h>
#include <string.h>

#include "floe/variant.h"
#include "parquet/reader_internal.h"

#define PQ_MAX_DEPTH FLOE_PQ_PATH_MAX

typedef struct build_ctx {
    floe_pq_reader *r;
    size_t pos;      /* next schema element */
    size_t leaf;     /* next column index */
    floe_error *err;
} build_ctx;

static const char *phys_name(int t) {
    static const char *n[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE",
                              "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t <= 7 ? n[t] : "?";
}

static const char *unit_name(int u) {
    return u == FLOE_PQ_MILLIS ? "MILLIS" : u == FLOE_PQ_MICROS ? "MICROS"
                                          : u == FLOE_PQ_NANOS  ? "NANOS" : "?";
}

static const char *ct_name(int ct) {
    static const char *n[] = {"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL",
                              "DATE", "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS",
                              "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64",
                              "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON",
                              "INTERVAL"};
    return ct >= 0 && ct <= 21 ? n[ct] : "?";
}

static void logical_text(const floe_pq_schema_element *e, char *buf, size_t n) {
    const floe_pq_logical_type *lt = &e->logical_type;
    switch (lt->kind) {
    case FLOE_PQ_LT_STRING: snprintf(buf, n, "STRING"); break;
    case FLOE_PQ_LT_MAP: snprintf(buf, n, "MAP"); break;
    case FLOE_PQ_LT_LIST: snprintf(buf, n, "LIST"); break;
    case FLOE_PQ_LT_ENUM: snprintf(buf, n, "ENUM"); break;
    case FLOE_PQ_LT_DECIMAL:
        snprintf(buf, n, "DECIMAL(%d,%d)", lt->decimal_precision, lt->decimal_scale);
        break;
    case FLOE_PQ_LT_DATE: snprintf(buf, n, "DATE"); break;
    case FLOE_PQ_LT_TIME:
        snprintf(buf, n, "TIME(%s,%s)", unit_name(lt->time_unit),
                 lt->is_adjusted_to_utc ? "true" : "false");
        break;
    case FLOE_PQ_LT_TIMESTAMP:
        snprintf(buf, n, "TIMESTAMP(%s,%s)", unit_name(lt->time_unit),
                 lt->is_adjusted_to_utc ? "true" : "false");
        break;
    case FLOE_PQ_LT_INTEGER:
        snprintf(buf, n, "INTEGER(%d,%s)", lt->int_bit_width,
                 lt->int_is_signed ? "true" : "false");
        break;
    case FLOE_PQ_LT_UNKNOWN: snprintf(buf, n, "UNKNOWN"); break;
    case FLOE_PQ_LT_JSON: snprintf(buf, n, "JSON"); break;
    case FLOE_PQ_LT_BSON: snprintf(buf, n, "BSON"); break;
    case FLOE_PQ_LT_UUID: snprintf(buf, n, "UUID"); break;
    case FLOE_PQ_LT_FLOAT16: snprintf(buf, n, "FLOAT16"); break;
    case FLOE_PQ_LT_VARIANT: snprintf(buf, n, "VARIANT"); break;
    case FLOE_PQ_LT_GEOMETRY:
    case FLOE_PQ_LT_GEOGRAPHY: {
        /* LogicalTypes.md: crs (absent: OGC:CRS84) and, for GEOGRAPHY, algorithm (absent:
         * SPHERICAL); what the file gives is shown, as given, its bytes made printable */
        static const char *const algos[] = {"SPHERICAL", "VINCENTY", "THOMAS", "ANDOYER",
                                            "KARNEY"};
        bool geog = lt->kind == FLOE_PQ_LT_GEOGRAPHY;
        char crs[96] = "";
        size_t k = 0;
        for (const char *c = lt->geo_crs; c && *c && k + 4 < sizeof crs; c++)
            crs[k++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
        if (lt->geo_crs && strlen(lt->geo_crs) > k)
            memcpy(crs + k, "...", 4);
        else
            crs[k] = 0;
        char algo[32] = "";
        if (geog && lt->has_geo_algorithm) {
            if (lt->geo_algorithm >= 0 && lt->geo_algorithm <= 4)
                snprintf(algo, sizeof algo, "algorithm=%s", algos[lt->geo_algorithm]);
            else
                snprintf(algo, sizeof algo, "algorithm=%d", (int)lt->geo_algorithm);
        }
        const char *kw = geog ? "GEOGRAPHY" : "GEOMETRY";
        if (!lt->geo_crs && !algo[0])
            snprintf(buf, n, "%s", kw);
        else
            snprintf(buf, n, "%s(%s%s%s%s)", kw, lt->geo_crs ? "crs=" : "", crs,
                     lt->geo_crs && algo[0] ? ", " : "", algo);
        break;
    }
    default: snprintf(buf, n, "LOGICAL(%d)", lt->kind); break;
    }
}

/* Decide a leaf's value type, in-memory layout and conversion from its annotations.
 * Unknown or unusable annotations fall back to the physical type. */
static void leaf_type(const floe_pq_schema_element *e, floe_pq_node *nd, pq_leaf *lf) {
    int t = e->type;
    const floe_pq_logical_type *lt = e->has_logical_type ? &e->logical_type : NULL;
    int ct = e->has_converted_type ? e->converted_type : -1;
    int lk = lt ? lt->kind : 0;
    int32_t flen = e->has_type_length ? e->type_length : 0;

    lf->node = nd;
    lf->src_phys = t;
    lf->src_width = t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY ? flen
                    : t == FLOE_PQ_BYTE_ARRAY         ? 0
                                                      : floe_phys_width((floe_phys)t, 0);
    if (t == FLOE_PQ_INT96)
        lf->src_width = 12;
    lf->conv = PQ_CONV_NONE;
    lf->out_phys = (floe_phys)t;
    lf->out_width = lf->src_width;
    lf->time_unit = FLOE_PQ_MICROS;
    nd->is_unsigned = false;
    nd->precision = nd->scale = 0;

    /* physical fallback first */
    switch (t) {
    case FLOE_PQ_BOOLEAN: nd->value_type = FLOE_TYPE_BOOLEAN; lf->ck = PQ_CK_BOOL; break;
    case FLOE_PQ_INT32: nd->value_type = FLOE_TYPE_INT; lf->ck = PQ_CK_I64; break;
    case FLOE_PQ_INT64: nd->value_type = FLOE_TYPE_LONG; lf->ck = PQ_CK_I64; break;
    case FLOE_PQ_INT96:
        /* Spark/Impala timestamps: julian day + nanos of day, read as UTC micros */
        nd->value_type = FLOE_TYPE_TIMESTAMP;
        lf->conv = PQ_CONV_INT96_US;
        lf->out_phys = FLOE_PHYS_INT64;
        lf->out_width = 8;
        lf->ck = PQ_CK_I64; /* statistics unusable: INT96 has no defined order */
        break;
    case FLOE_PQ_FLOAT: nd->value_type = FLOE_TYPE_FLOAT; lf->ck = PQ_CK_F64; break;
    case FLOE_PQ_DOUBLE: nd->value_type = FLOE_TYPE_DOUBLE; lf->ck = PQ_CK_F64; break;
    case FLOE_PQ_BYTE_ARRAY: nd->value_type = FLOE_TYPE_BINARY; lf->ck = PQ_CK_BYTES; break;
    default: nd->value_type = FLOE_TYPE_FIXED; lf->ck = PQ_CK_BYTES; break;
    }
    lf->stats_signed_ok = t == FLOE_PQ_INT32 || t == FLOE_PQ_INT64 || t == FLOE_PQ_FLOAT ||
                          t == FLOE_PQ_DOUBLE || t == FLOE_PQ_BOOLEAN;

    bool is_string = lk == FLOE_PQ_LT_STRING || lk == FLOE_PQ_LT_ENUM || lk == FLOE_PQ_LT_JSON ||
                     (!lt && (ct == FLOE_PQ_CT_UTF8 || ct == FLOE_PQ_CT_ENUM ||
                              ct == FLOE_PQ_CT_JSON));
    if (is_string && t == FLOE_PQ_BYTE_ARRAY) {
        nd->value_type = FLOE_TYPE_STRING;
        return;
    }
    /* decimals */
    int32_t prec = -1, scale = 0;
    if (lk == FLOE_PQ_LT_DECIMAL) {
        prec = lt->decimal_precision;
        scale = lt->decimal_scale;
    } else if (!lt && ct == FLOE_PQ_CT_DECIMAL && e->has_precision) {
        prec = e->precision;
        scale = e->has_scale ? e->scale : 0;
    }
    if (prec >= 1 && prec <= 38 && scale >= 0 && scale <= prec &&
        (t == FLOE_PQ_INT32 || t == FLOE_PQ_INT64 || t == FLOE_PQ_BYTE_ARRAY ||
         (t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY && flen >= 1 && flen <= 16))) {
        nd->value_type = FLOE_TYPE_DECIMAL;
        nd->precision = prec;
        nd->scale = scale;
        lf->ck = PQ_CK_DEC;
        lf->stats_signed_ok = t == FLOE_PQ_INT32 || t == FLOE_PQ_INT64;
        floe_phys want = prec <= 9 ? FLOE_PHYS_INT32 : prec <= 18 ? FLOE_PHYS_INT64
                                                                  : FLOE_PHYS_FIXED;
        int32_t wlen = want == FLOE_PHYS_FIXED ? floe_decimal_bytes(prec)
                                               : floe_phys_width(want, 0);
        if ((int)want != t || (want == FLOE_PHYS_FIXED && wlen != flen)) {
            lf->conv = PQ_CONV_DECIMAL;
            lf->out_phys = want;
            lf->out_width = wlen;
        }
        return;
    }
    if ((lk == FLOE_PQ_LT_DATE || (!lt && ct == FLOE_PQ_CT_DATE)) && t == FLOE_PQ_INT32) {
        nd->value_type = FLOE_TYPE_DATE;
        return;
    }
    int unit = 0;
    bool utc = false, is_time = false, is_ts = false;
    if (lk == FLOE_PQ_LT_TIME || lk == FLOE_PQ_LT_TIMESTAMP) {
        unit = lt->time_unit;
        utc = lt->is_adjusted_to_utc;
        is_time = lk == FLOE_PQ_LT_TIME;
        is_ts = !is_time;
    } else if (!lt) {
        /* converted types: TIMESTAMP_* are instants (adjusted to UTC) */
        if (ct == FLOE_PQ_CT_TIME_MILLIS || ct == FLOE_PQ_CT_TIME_MICROS) {
            is_time = true;
            unit = ct == FLOE_PQ_CT_TIME_MILLIS ? FLOE_PQ_MILLIS : FLOE_PQ_MICROS;
            utc = true;
        } else if (ct == FLOE_PQ_CT_TIMESTAMP_MILLIS || ct == FLOE_PQ_CT_TIMESTAMP_MICROS) {
            is_ts = true;
            unit = ct == FLOE_PQ_CT_TIMESTAMP_MILLIS ? FLOE_PQ_MILLIS : FLOE_PQ_MICROS;
            utc = true;
        }
    }
    if (is_time) {
        if (unit == FLOE_PQ_MILLIS && t == FLOE_PQ_INT32) {
            nd->value_type = FLOE_TYPE_TIME;
            lf->conv = PQ_CONV_MS_US_32;
            lf->out_phys = FLOE_PHYS_INT64;
            lf->out_width = 8;
        } else if (unit == FLOE_PQ_MICROS && t == FLOE_PQ_INT64) {
            nd->value_type = FLOE_TYPE_TIME;
        } else if (unit == FLOE_PQ_NANOS && t == FLOE_PQ_INT64) {
            nd->value_type = FLOE_TYPE_TIME;
            lf->conv = PQ_CONV_NS_US_64;
        }
        return;
    }
    if (is_ts && t == FLOE_PQ_INT64) {
        if (unit == FLOE_PQ_NANOS) {
            nd->value_type = utc ? FLOE_TYPE_TIMESTAMPTZ_NS : FLOE_TYPE_TIMESTAMP_NS;
            lf->time_unit = FLOE_PQ_NANOS;
        } else if (unit == FLOE_PQ_MICROS || unit == FLOE_PQ_MILLIS) {
            nd->value_type = utc ? FLOE_TYPE_TIMESTAMPTZ : FLOE_TYPE_TIMESTAMP;
            if (unit == FLOE_PQ_MILLIS)
                lf->conv = PQ_CONV_MS_US_64;
        }
        return;
    }
    /* integers */
    int bw = 0;
    bool is_signed = true;
    if (lk == FLOE_PQ_LT_INTEGER) {
        bw = lt->int_bit_width;
        is_signed = lt->int_is_signed;
    } else if (!lt && ct >= FLOE_PQ_CT_UINT_8 && ct <= FLOE_PQ_CT_INT_64) {
        static const int w[] = {8, 16, 32, 64, 8, 16, 32, 64};
        bw = w[ct - FLOE_PQ_CT_UINT_8];
        is_signed = ct >= FLOE_PQ_CT_INT_8;
    }
    if (bw && !is_signed) {
        if (t == FLOE_PQ_INT32 && bw == 32) {
            nd->value_type = FLOE_TYPE_LONG;
            lf->conv = PQ_CONV_U32_I64;
            lf->out_phys = FLOE_PHYS_INT64;
            lf->out_width = 8;
            lf->stats_signed_ok = false;
        } else if (t == FLOE_PQ_INT64) {
            nd->is_unsigned = true;
            lf->ck = PQ_CK_U64;
            lf->stats_signed_ok = false;
        } else if (t == FLOE_PQ_INT32) {
            /* UINT_8 / UINT_16 fit an int; stored zero-extended */
            lf->stats_signed_ok = false;
        }
        return;
    }
    if (lk == FLOE_PQ_LT_UUID && t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY && flen == 16) {
        nd->value_type = FLOE_TYPE_UUID;
        return;
    }
    if (lk == FLOE_PQ_LT_FLOAT16 && t == FLOE_PQ_FIXED_LEN_BYTE_ARRAY && flen == 2) {
        nd->value_type = FLOE_TYPE_FLOAT;
        lf->conv = PQ_CONV_F16;
        lf->out_phys = FLOE_PHYS_FLOAT;
        lf->out_width = 4;
        lf->ck = PQ_CK_F64;
        return;
    }
}

static int build_node(build_ctx *c, floe_pq_node *parent, floe_pq_node *nd, int depth) {
    floe_pq_reader *r = c->r;
    floe_error *err = c->err;
    if (depth > PQ_MAX_DEPTH)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: footer: schema nested deeper than %d",
                              r->name, PQ_MAX_DEPTH);
    if (c->pos >= r->md.n_schema)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: footer: schema: num_children exceeds the %zu elements",
                              r->name, r->md.n_schema);
    size_t ei = c->pos++;
    const floe_pq_schema_element *e = &r->md.schema[ei];
    nd->name = e->name ? e->name : "";
    nd->parent = parent;
    nd->repetition = parent && e->has_repetition_type ? e->repetition_type : 0;
    if (nd->repetition < 0 || nd->repetition > 2)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: footer: schema element %zu (%s): bad repetition_type %d",
                              r->name, ei, nd->name, nd->repetition);
    nd->has_field_id = e->has_field_id;
    nd->field_id = e->field_id;
    nd->converted_type = e->has_converted_type ? e->converted_type : -1;
    nd->logical_kind = e->has_logical_type ? e->logical_type.kind : 0;
    nd->type_length = e->has_type_length ? e->type_length : 0;
    nd->def_level = (int16_t)((parent ? parent->def_level : 0) + (nd->repetition != 0 ? 1 : 0));
    nd->rep_level = (int16_t)((parent ? parent->rep_level : 0) + (nd->repetition == 2 ? 1 : 0));
    nd->column = -1;
    if (parent && parent->parent) {
        nd->path = floe_arena_alloc(&r->arena, strlen(parent->path) + strlen(nd->name) + 2);
        if (!nd->path)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        sprintf((char *)nd->path, "%s.%s", parent->path, nd->name);
    } else {
        nd->path = parent ? nd->name : "";
    }

    char lt[160] = "", tt[256];
    if (e->has_logical_type)
        logical_text(e, lt, sizeof lt);
    else if (e->has_converted_type)
        snprintf(lt, sizeof lt, "%s", ct_name(e->converted_type));
    if (e->has_converted_type && e->converted_type == FLOE_PQ_CT_DECIMAL && !e->has_logical_type)
        snprintf(lt, sizeof lt, "DECIMAL(%d,%d)", e->precision, e->scale);

    bool is_group = e->has_num_children && e->num_children > 0 ? true : !e->has_type;
    if (!parent)
        is_group = true;
    if (is_group) {
        int32_t nc = e->has_num_children ? e->num_children : 0;
        if (nc < 0 || (size_t)nc > r->md.n_schema - c->pos)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: footer: schema element %zu (%s): num_children %d exceeds "
                                  "the remaining elements",
                                  r->name, ei, nd->name, nc);
        nd->phys = -1;
        snprintf(tt, sizeof tt, "group%s%s", lt[0] ? " " : "", lt);
        floe_pq_node *kids = NULL;
        if (nc > 0) {
            kids = floe_arena_alloc(&r->arena, (size_t)nc * sizeof *kids);
            if (!kids)
                return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        }
        nd->children = kids;
        nd->nchildren = (size_t)nc;
        for (int32_t i = 0; i < nc; i++)
            FLOE_FORWARD_IF_ERROR(build_node(c, nd, &kids[i], depth + 1));
    } else {
        if (e->type < 0 || e->type > 7)
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: footer: schema element %zu (%s): bad physical type %d",
                                  r->name, ei, nd->name, e->type);
        if (e->type == FLOE_PQ_FIXED_LEN_BYTE_ARRAY &&
            (!e->has_type_length || e->type_length <= 0 || e->type_length > (1 << 24)))
            return floe_error_set(err, FLOE_ECORRUPT,
                                  "%s: footer: schema element %zu (%s): bad type_length",
                                  r->name, ei, nd->name);
        if (c->leaf >= r->nleaves)
            return floe_error_set(err, FLOE_EINTERNAL, "%s: leaf count", r->name);
        nd->phys = e->type;
        nd->column = (int32_t)c->leaf;
        leaf_type(e, nd, &r->leaves[c->leaf]);
        c->leaf++;
        if (e->type == FLOE_PQ_FIXED_LEN_BYTE_ARRAY)
            snprintf(tt, sizeof tt, "%s(%d)%s%s", phys_name(e->type), e->type_length,
                     lt[0] ? " " : "", lt);
        else
            snprintf(tt, sizeof tt, "%s%s%s", phys_name(e->type), lt[0] ? " " : "", lt);
    }
    nd->type_text = floe_arena_strdup(&r->arena, tt);
    if (!nd->type_text)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    return 0;
}

int pq_schema_build(floe_pq_reader *r, floe_error *err) {
    const floe_pq_file_metadata *md = &r->md;
    if (md->n_schema == 0)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: footer: empty schema", r->name);
    /* count leaves: elements that are not groups */
    size_t nleaves = 0;
    for (size_t i = 1; i < md->n_schema; i++) {
        const floe_pq_schema_element *e = &md->schema[i];
        bool group = e->has_num_children && e->num_children > 0 ? true : !e->has_type;
        if (!group)
            nleaves++;
    }
    r->nleaves = nleaves;
    r->leaves = floe_arena_alloc(&r->arena, (nleaves ? nleaves : 1) * sizeof *r->leaves);
    r->nodes = floe_arena_alloc(&r->arena, sizeof *r->nodes);
    if (!r->leaves || !r->nodes)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    build_ctx c = {r, 0, 0, err};
    FLOE_FORWARD_IF_ERROR(build_node(&c, NULL, r->nodes, 0));
    if (c.pos != md->n_schema)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "%s: footer: schema has %zu elements but the tree uses %zu",
                              r->name, md->n_schema, c.pos);
    if (c.leaf != nleaves)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: footer: schema leaf count mismatch",
                              r->name);
    r->nnodes = c.pos;
    return 0;
}

/* ---- assembly plan -------------------------------------------------------------------- */

/* Does any selected column live under nd? */
static bool any_selected(const floe_pq_reader *r, const floe_pq_node *nd) {
    if (nd->column >= 0)
        return r->selected[nd->column];
    for (size_t i = 0; i < nd->nchildren; i++)
        if (any_selected(r, &nd->children[i]))
            return true;
    return false;
}

static bool is_list_node(const floe_pq_node *nd) {
    return nd->phys < 0 && (nd->logical_kind == FLOE_PQ_LT_LIST ||
                            nd->converted_type == FLOE_PQ_CT_LIST);
}
static bool is_map_node(const floe_pq_node *nd) {
    return nd->phys < 0 && (nd->logical_kind == FLOE_PQ_LT_MAP ||
                            nd->converted_type == FLOE_PQ_CT_MAP ||
                            nd->converted_type == FLOE_PQ_CT_MAP_KEY_VALUE);
}

/* The element of a LIST-annotated group whose single child is the repeated node rep
 * (LogicalTypes.md backward-compatibility rules). Returns rep itself when the repeated
 * node is the element. */
static const floe_pq_node *list_element(const floe_pq_node *list, const floe_pq_node *rep) {
    if (rep->phys >= 0)
        return rep;                          /* repeated primitive: two-level */
    if (rep->nchildren != 1)
        return rep;                          /* a struct of several fields */
    if (!strcmp(rep->name, "array"))
        return rep;
    size_t ln = strlen(list->name);
    if (!strncmp(rep->name, list->name, ln) && !strcmp(rep->name + ln, "_tuple"))
        return rep;
    return &rep->children[0];                /* three-level */
}

floe_pq_shape floe_pq_node_shape(const floe_pq_node *nd, bool as_element,
                                 const floe_pq_node **child) {
    *child = NULL;
    if (nd->repetition == 2 && !as_element) {
        *child = nd; /* a bare repeated field: a list of required elements */
        return FLOE_PQ_SHAPE_LIST;
    }
    if (nd->phys >= 0)
        return FLOE_PQ_SHAPE_PRIMITIVE;
    if ((is_list_node(nd) || is_map_node(nd)) && nd->nchildren == 1 &&
        nd->children[0].repetition == 2) {
        const floe_pq_node *rep = &nd->children[0];
        if (is_list_node(nd) || rep->phys >= 0 || rep->nchildren == 0) {
            *child = list_element(nd, rep);
            return FLOE_PQ_SHAPE_LIST;
        }
        *child = rep;
        return FLOE_PQ_SHAPE_MAP;
    }
    return FLOE_PQ_SHAPE_STRUCT;
}

/* The key_value group of a node read as a map, or NULL. */
static const floe_pq_node *map_key_value(const floe_pq_node *nd) {
    const floe_pq_node *kv;
    return floe_pq_node_shape(nd, false, &kv) == FLOE_PQ_SHAPE_MAP ? kv : NULL;
}

void pq_select_under(floe_pq_reader *r, const floe_pq_node *nd) {
    if (nd->column >= 0)
        r->selected[nd->column] = true;
    for (size_t i = 0; i < nd->nchildren; i++)
        pq_select_under(r, &nd->children[i]);
}

static bool is_variant_node(const floe_pq_node *nd) {
    return nd->phys < 0 && nd->logical_kind == FLOE_PQ_LT_VARIANT;
}

void pq_select_map_keys(floe_pq_reader *r, const floe_pq_node *nd) {
    const floe_pq_node *kv = map_key_value(nd);
    if (kv && any_selected(r, kv))
        pq_select_under(r, &kv->children[0]);
    if (is_variant_node(nd) && any_selected(r, nd)) {
        pq_select_under(r, nd); /* a variant is read whole */
        return;
    }
    for (size_t i = 0; i < nd->nchildren; i++)
        pq_select_map_keys(r, &nd->children[i]);
}

static int plan_node(floe_pq_reader *r, const floe_pq_node *nd, const floe_pq_read_field *rf,
                     bool as_element, pq_plan *p, int depth, floe_error *err);
static int plan_read_children(floe_pq_reader *r, const floe_pq_read_field *rf,
                              const floe_pq_node *group, pq_plan *p, int depth,
                              floe_error *err);

static int plan_children(floe_pq_reader *r, const floe_pq_node *nd, pq_plan *p, int depth,
                         floe_error *err) {
    size_t n = 0;
    for (size_t i = 0; i < nd->nchildren; i++)
        n += any_selected(r, &nd->children[i]);
    p->children = floe_arena_alloc(&r->arena, (n ? n : 1) * sizeof *p->children);
    if (!p->children)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    p->nchildren = 0;
    for (size_t i = 0; i < nd->nchildren; i++) {
        if (!any_selected(r, &nd->children[i]))
            continue;
        FLOE_FORWARD_IF_ERROR(plan_node(r, &nd->children[i], NULL, false,
                                        &p->children[p->nchildren++], depth + 1, err));
    }
    return 0;
}

static void plan_range(pq_plan *p) {
    if (p->kind == PQ_P_LEAF) {
        p->first_col = p->slot;
        p->end_col = p->slot + 1;
        return;
    }
    p->first_col = INT32_MAX;
    p->end_col = -1;
    for (size_t i = 0; i < p->nchildren; i++) {
        plan_range(&p->children[i]);
        if (p->children[i].first_col < p->first_col)
            p->first_col = p->children[i].first_col;
        if (p->children[i].end_col > p->end_col)
            p->end_col = p->children[i].end_col;
    }
}

/* Levels of node nd's own value (as_element: nd is the repeated node of an enclosing
 * list used as its element: its repetition is consumed by the list, its value is
 * required). For a list or map, rep is its repeated node. */
static void plan_levels(pq_plan *p, const floe_pq_node *nd, bool as_element,
                        const floe_pq_node *rep) {
    if (nd->repetition == 2 && !as_element) {
        p->nullable = false;
        p->def_present = (int16_t)(nd->def_level - 1);
        p->rep_def = nd->def_level;
        p->rep_level = nd->rep_level;
        return;
    }
    p->nullable = nd->repetition == 1;
    p->def_present = nd->def_level;
    if (rep) {
        p->rep_def = rep->def_level;
        p->rep_level = rep->rep_level;
    }
}

/* ---- rows shaped by a table schema (floe_pq_reader_select_fields) ------------------------ */

static bool is_timestamp(floe_type_id t) {
    return t == FLOE_TYPE_TIMESTAMP || t == FLOE_TYPE_TIMESTAMPTZ ||
           t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS;
}

/* Can file leaf nd be printed as a value of table field f? */
static bool readable_as(const floe_pq_node *nd, const floe_field *f) {
    floe_type_id ft = nd->value_type, tt = f->type;
    if (ft == tt) {
        if (tt == FLOE_TYPE_DECIMAL)
            return nd->scale == f->scale && nd->precision <= f->precision;
        if (tt == FLOE_TYPE_FIXED)
            return nd->type_length == f->length;
        return true;
    }
    switch (tt) {
    case FLOE_TYPE_LONG: return ft == FLOE_TYPE_INT;
    case FLOE_TYPE_DOUBLE: return ft == FLOE_TYPE_FLOAT;
    case FLOE_TYPE_TIMESTAMP: case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS: case FLOE_TYPE_TIMESTAMPTZ_NS:
        return is_timestamp(ft) || (ft == FLOE_TYPE_DATE && (tt == FLOE_TYPE_TIMESTAMP ||
                                                            tt == FLOE_TYPE_TIMESTAMP_NS));
    case FLOE_TYPE_STRING: return ft == FLOE_TYPE_BINARY;
    case FLOE_TYPE_BINARY: return ft == FLOE_TYPE_STRING || ft == FLOE_TYPE_FIXED ||
                                  ft == FLOE_TYPE_UUID;
    case FLOE_TYPE_UUID:
        return (ft == FLOE_TYPE_FIXED && nd->type_length == 16) || ft == FLOE_TYPE_BINARY;
    case FLOE_TYPE_FIXED: return ft == FLOE_TYPE_UUID && f->length == 16;
    default: return false;
    }
}

static const char *const shape_name[] = {"a primitive", "a struct", "a list", "a map"};

/* Check a read field against the node it reads, select its leaves. */
static int check_read_field(floe_pq_reader *r, const floe_pq_read_field *rf, bool as_element,
                            int depth, floe_error *err) {
    if (depth > PQ_MAX_DEPTH)
        return floe_error_set(err, FLOE_EINVALID, "%s: read schema too deep", r->name);
    if (!rf->node)
        return 0;
    const floe_pq_node *nd = rf->node, *child;
    const floe_pq_node *top = nd;
    while (top->parent)
        top = top->parent;
    if (top != r->nodes || nd == r->nodes)
        return floe_error_set(err, FLOE_EINVALID, "%s: field %s: not a node of this file",
                              r->name, rf->name);
    floe_type_id t = rf->field->type;
    if (t == FLOE_TYPE_VARIANT || is_variant_node(nd)) {
        if (t != FLOE_TYPE_VARIANT || !is_variant_node(nd) || (nd->repetition == 2 && !as_element))
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s is %s in the table but "
                                  "%s in the file", r->name, rf->name,
                                  t == FLOE_TYPE_VARIANT ? "a variant" : floe_type_name(t),
                                  is_variant_node(nd) ? "a variant" : nd->type_text);
        pq_select_under(r, nd); /* read whole */
        return 0;
    }
    floe_pq_shape shape = floe_pq_node_shape(nd, as_element, &child);
    floe_pq_shape want = t == FLOE_TYPE_STRUCT ? FLOE_PQ_SHAPE_STRUCT
                         : t == FLOE_TYPE_LIST ? FLOE_PQ_SHAPE_LIST
                         : t == FLOE_TYPE_MAP  ? FLOE_PQ_SHAPE_MAP
                                               : FLOE_PQ_SHAPE_PRIMITIVE;
    if (shape != want)
        return floe_error_set(err, FLOE_EUNSUPPORTED,
                              "%s: column %s is %s in the table but %s (%s) in the file",
                              r->name, rf->name, shape_name[want], shape_name[shape],
                              nd->path);
    switch (shape) {
    case FLOE_PQ_SHAPE_PRIMITIVE:
        if (!readable_as(nd, rf->field))
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "%s: column %s: file type %s cannot be read as %s", r->name,
                                  nd->path, nd->type_text, floe_type_name(rf->field->type));
        r->selected[nd->column] = true;
        return 0;
    case FLOE_PQ_SHAPE_STRUCT:
        for (size_t i = 0; i < rf->nchildren; i++) {
            const floe_pq_node *c = rf->children[i].node;
            if (c && c->parent != nd)
                return floe_error_set(err, FLOE_EINVALID, "%s: field %s: %s is not in %s",
                                      r->name, rf->children[i].name, c->path, nd->path);
            FLOE_FORWARD_IF_ERROR(check_read_field(r, &rf->children[i], false, depth + 1, err));
        }
        return 0;
    case FLOE_PQ_SHAPE_LIST:
        if (rf->nchildren != 1 || rf->children[0].node != child)
            return floe_error_set(err, FLOE_EINVALID, "%s: list %s: the element must read %s",
                                  r->name, rf->name, child->path);
        return check_read_field(r, &rf->children[0],
                                child == nd || child == &nd->children[0], depth + 1, err);
    case FLOE_PQ_SHAPE_MAP:
        if (rf->nchildren != 2 || rf->children[0].node != &child->children[0] ||
            (rf->children[1].node && (child->nchildren < 2 ||
                                      rf->children[1].node != &child->children[1])))
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s: map %s: key and value must read %s's children", r->name,
                                  rf->name, child->path);
        for (size_t i = 0; i < 2; i++)
            FLOE_FORWARD_IF_ERROR(check_read_field(r, &rf->children[i], false, depth + 1, err));
        return 0;
    }
    return 0;
}

static const floe_pq_node *first_leaf(const floe_pq_node *nd) {
    if (nd->column >= 0)
        return nd;
    for (size_t i = 0; i < nd->nchildren; i++) {
        const floe_pq_node *l = first_leaf(&nd->children[i]);
        if (l)
            return l;
    }
    return NULL;
}

/* Does any read field below (or at) rf read a file column? */
static bool reads_file(const floe_pq_read_field *rf) {
    if (!rf->node)
        return false;
    if (rf->field->type != FLOE_TYPE_STRUCT)
        return true;
    for (size_t i = 0; i < rf->nchildren; i++)
        if (reads_file(&rf->children[i]))
            return true;
    return false;
}

/* Select one leaf of every struct group whose read fields are all constants: its levels
 * say where the struct is null (and, under lists, how often it repeats). */
static void select_carriers(floe_pq_reader *r, const floe_pq_read_field *rf) {
    if (!rf->node)
        return;
    if (rf->field->type == FLOE_TYPE_STRUCT && !reads_file(rf)) {
        const floe_pq_node *l = first_leaf(rf->node);
        if (l)
            r->selected[l->column] = true;
        return;
    }
    for (size_t i = 0; i < rf->nchildren; i++)
        select_carriers(r, &rf->children[i]);
}

int floe_pq_reader_select_fields(floe_pq_reader *r, const floe_pq_read_field *fields,
                                 size_t n, floe_error *err) {
    for (size_t i = 0; i < r->nleaves; i++)
        r->selected[i] = false;
    r->shaped = false;
    r->plan_dirty = true;
    for (size_t i = 0; i < n; i++)
        FLOE_FORWARD_IF_ERROR(check_read_field(r, &fields[i], false, 0, err));
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        select_carriers(r, &fields[i]);
        any |= reads_file(&fields[i]);
    }
    if (!any && r->nodes->nchildren) {
        /* only constants: one column gives the rows */
        const floe_pq_node *l = first_leaf(r->nodes);
        if (l)
            r->selected[l->column] = true;
    }
    r->shaped = true;
    r->read_fields = fields;
    r->nread_fields = n;
    return 0;
}

/* The plan of the file group `nd` (as_element as in plan_node) restricted to the selected
 * columns below it, printed nowhere: it consumes their levels. */
static int plan_hidden(floe_pq_reader *r, const floe_pq_node *nd, pq_plan *p, int depth,
                       floe_error *err) {
    for (size_t i = 0; i < nd->nchildren; i++)
        if (any_selected(r, &nd->children[i])) {
            FLOE_FORWARD_IF_ERROR(plan_node(r, &nd->children[i], NULL, false, p, depth + 1, err));
            p->hidden = true;
            return 0;
        }
    memset(p, 0, sizeof *p);
    p->kind = PQ_P_CONST;
    p->hidden = true;
    return 0;
}

static int plan_read_children(floe_pq_reader *r, const floe_pq_read_field *rf,
                              const floe_pq_node *group, pq_plan *p, int depth,
                              floe_error *err) {
    /* the fields, and a hidden carrier when none of them reads the file */
    bool carrier = group && !reads_file(rf);
    size_t n = rf->nchildren + carrier;
    p->children = floe_arena_alloc(&r->arena, (n ? n : 1) * sizeof *p->children);
    if (!p->children)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    p->nchildren = n;
    for (size_t i = 0; i < rf->nchildren; i++)
        FLOE_FORWARD_IF_ERROR(plan_node(r, rf->children[i].node, &rf->children[i], false,
                                        &p->children[i], depth + 1, err));
    if (carrier)
        FLOE_FORWARD_IF_ERROR(plan_hidden(r, group, &p->children[rf->nchildren], depth, err));
    return 0;
}

/* ---- Variant groups ----------------------------------------------------------------- */

static const floe_pq_node *child_named(const floe_pq_node *nd, const char *name) {
    for (size_t i = 0; i < nd->nchildren; i++)
        if (!strcmp(nd->children[i].name, name))
            return &nd->children[i];
    return NULL;
}

/* The variant primitive a shredded typed_value leaf holds (VariantShredding.md, "Shredded
 * Value Types"), or -1 when the table has no such type. */
static int variant_prim_of(const floe_pq_reader *r, const floe_pq_node *nd) {
    const pq_leaf *lf = &r->leaves[nd->column];
    if (lf->src_phys == FLOE_PQ_INT96 || lf->conv == PQ_CONV_F16 || nd->is_unsigned ||
        lf->conv == PQ_CONV_U32_I64)
        return -1;
    switch (nd->value_type) {
    case FLOE_TYPE_BOOLEAN: return FLOE_VARIANT_TRUE; /* or FALSE, by the value */
    case FLOE_TYPE_INT: return FLOE_VARIANT_INT32;
    case FLOE_TYPE_LONG: return FLOE_VARIANT_INT64;
    case FLOE_TYPE_FLOAT: return FLOE_VARIANT_FLOAT;
    case FLOE_TYPE_DOUBLE: return FLOE_VARIANT_DOUBLE;
    case FLOE_TYPE_DECIMAL: return FLOE_VARIANT_DECIMAL16;
    case FLOE_TYPE_DATE: return FLOE_VARIANT_DATE;
    case FLOE_TYPE_TIME: return FLOE_VARIANT_TIME_NTZ;
    case FLOE_TYPE_TIMESTAMP: return FLOE_VARIANT_TIMESTAMP_NTZ;
    case FLOE_TYPE_TIMESTAMPTZ: return FLOE_VARIANT_TIMESTAMP;
    case FLOE_TYPE_TIMESTAMP_NS: return FLOE_VARIANT_TIMESTAMP_NTZ_NS;
    case FLOE_TYPE_TIMESTAMPTZ_NS: return FLOE_VARIANT_TIMESTAMP_NS;
    case FLOE_TYPE_STRING: return FLOE_VARIANT_STRING;
    case FLOE_TYPE_BINARY: return nd->phys == FLOE_PQ_BYTE_ARRAY ? FLOE_VARIANT_BINARY : -1;
    case FLOE_TYPE_UUID: return FLOE_VARIANT_UUID;
    default: return -1;
    }
}

static int plan_vpair(floe_pq_reader *r, const floe_pq_node *nd, pq_plan *p, size_t first,
                      int depth, floe_error *err);

/* A variant's binary leaf (metadata or value): read as bytes, never printed itself. */
static void plan_vleaf(const floe_pq_reader *r, const floe_pq_node *leaf, pq_plan *p) {
    memset(p, 0, sizeof *p);
    plan_levels(p, leaf, false, NULL);
    p->kind = PQ_P_LEAF;
    p->node = leaf;
    p->name = leaf->name;
    p->slot = r->slot_of_col[leaf->column];
    p->vprim = -1;
}

/* The plan of a typed_value node. */
static int plan_vtyped(floe_pq_reader *r, const floe_pq_node *nd, pq_plan *p, int depth,
                       floe_error *err) {
    memset(p, 0, sizeof *p);
    if (depth > PQ_MAX_DEPTH)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: schema too deep", r->name);
    p->node = nd;
    p->name = nd->name;
    p->vprim = -1;
    const floe_pq_node *child;
    floe_pq_shape shape = floe_pq_node_shape(nd, false, &child);
    if (nd->repetition == 2)
        shape = FLOE_PQ_SHAPE_MAP; /* refused below */
    switch (shape) {
    case FLOE_PQ_SHAPE_PRIMITIVE:
        plan_levels(p, nd, false, NULL);
        p->kind = PQ_P_LEAF;
        p->slot = r->slot_of_col[nd->column];
        p->vprim = (int8_t)variant_prim_of(r, nd);
        if (p->vprim < 0)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: unsupported shredded "
                                  "value type %s", r->name, nd->path, nd->type_text);
        return 0;
    case FLOE_PQ_SHAPE_STRUCT:
        if (nd->nchildren == 0)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: shredded variant "
                                  "object without fields", r->name, nd->path);
        plan_levels(p, nd, false, NULL);
        p->kind = PQ_P_STRUCT;
        p->children = floe_arena_alloc(&r->arena, nd->nchildren * sizeof *p->children);
        if (!p->children)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        p->nchildren = nd->nchildren;
        for (size_t i = 0; i < nd->nchildren; i++) {
            const floe_pq_node *f = &nd->children[i];
            pq_plan *fp = &p->children[i];
            memset(fp, 0, sizeof *fp);
            if (f->phys >= 0 || f->repetition != 0)
                return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: a shredded "
                                      "variant field must be a required group", r->name,
                                      f->path);
            fp->kind = PQ_P_VFIELD;
            fp->node = f;
            fp->name = f->name;
            plan_levels(fp, f, false, NULL);
            FLOE_FORWARD_IF_ERROR(plan_vpair(r, f, fp, 0, depth + 1, err));
        }
        return 0;
    case FLOE_PQ_SHAPE_LIST: {
        if (child == nd || child->phys >= 0 || child->repetition != 0)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: a shredded variant "
                                  "array's element must be a required group", r->name,
                                  nd->path);
        plan_levels(p, nd, false, &nd->children[0]);
        p->kind = PQ_P_LIST;
        p->children = floe_arena_alloc(&r->arena, sizeof *p->children);
        if (!p->children)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        p->nchildren = 1;
        pq_plan *ep = p->children;
        memset(ep, 0, sizeof *ep);
        ep->kind = PQ_P_VFIELD;
        ep->node = child;
        ep->name = "element";
        plan_levels(ep, child, false, NULL);
        return plan_vpair(r, child, ep, 0, depth + 1, err);
    }
    case FLOE_PQ_SHAPE_MAP:
        break;
    }
    return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: unsupported shredded value "
                          "type %s", r->name, nd->path, nd->type_text);
}

/* The value and typed_value of group nd into p->children[first...]. */
static int plan_vpair(floe_pq_reader *r, const floe_pq_node *nd, pq_plan *p, size_t first,
                      int depth, floe_error *err) {
    const floe_pq_node *value = child_named(nd, "value");
    const floe_pq_node *typed = child_named(nd, "typed_value");
    if (!value && !typed)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: a variant group needs a "
                              "value or a typed_value field", r->name, nd->path);
    if (value && (value->phys != FLOE_PQ_BYTE_ARRAY || value->repetition == 2))
        return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: a variant's value must "
                              "be binary", r->name, value->path);
    size_t n = first + (value != NULL) + (typed != NULL);
    pq_plan *kids = floe_arena_alloc(&r->arena, n * sizeof *kids);
    if (!kids)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    if (first)
        memcpy(kids, p->children, first * sizeof *kids);
    p->children = kids;
    p->nchildren = first;
    p->v_value = p->v_typed = -1;
    if (value) {
        plan_vleaf(r, value, &kids[p->nchildren]);
        p->v_value = (int8_t)p->nchildren++;
    }
    if (typed) {
        FLOE_FORWARD_IF_ERROR(plan_vtyped(r, typed, &kids[p->nchildren], depth + 1, err));
        p->v_typed = (int8_t)p->nchildren++;
    }
    return 0;
}

static int plan_variant(floe_pq_reader *r, const floe_pq_node *nd, bool as_element,
                        pq_plan *p, int depth, floe_error *err) {
    const floe_pq_node *meta = child_named(nd, "metadata");
    if (!meta || meta->phys != FLOE_PQ_BYTE_ARRAY || meta->repetition != 0)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: column %s: a VARIANT group needs a "
                              "required binary metadata field", r->name, nd->path);
    plan_levels(p, nd, as_element, NULL);
    p->kind = PQ_P_VARIANT;
    pq_plan *mp = floe_arena_alloc(&r->arena, sizeof *mp);
    if (!mp)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    plan_vleaf(r, meta, mp);
    p->children = mp;
    return plan_vpair(r, nd, p, 1, depth, err);
}

/* The plan of node nd (as_element as in plan_levels): with rf, shaped by that read field
 * (floe_pq_reader_select_fields), else over the selected columns below nd. */
static int plan_node(floe_pq_reader *r, const floe_pq_node *nd, const floe_pq_read_field *rf,
                     bool as_element, pq_plan *p, int depth, floe_error *err) {
    memset(p, 0, sizeof *p);
    if (depth > PQ_MAX_DEPTH)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: schema too deep", r->name);
    p->name = rf ? rf->name : nd->name;
    if (rf && !rf->node) {
        p->kind = PQ_P_CONST;
        p->const_text[0] = rf->const_ndjson ? rf->const_ndjson : "null";
        p->const_text[1] = rf->const_canonical ? rf->const_canonical : p->const_text[0];
        return 0;
    }
    if (is_variant_node(nd) && (nd->repetition != 2 || as_element)) {
        p->node = nd;
        return plan_variant(r, nd, as_element, p, depth, err);
    }
    const floe_pq_node *child;
    floe_pq_shape shape = floe_pq_node_shape(nd, as_element, &child);
    p->node = nd;
    p->ptype = rf ? rf->field->type : 0;
    switch (shape) {
    case FLOE_PQ_SHAPE_PRIMITIVE:
        plan_levels(p, nd, as_element, NULL);
        p->kind = PQ_P_LEAF;
        p->slot = r->slot_of_col[nd->column];
        return 0;
    case FLOE_PQ_SHAPE_STRUCT:
        plan_levels(p, nd, as_element, NULL);
        p->kind = PQ_P_STRUCT;
        return rf ? plan_read_children(r, rf, nd, p, depth, err)
                  : plan_children(r, nd, p, depth, err);
    case FLOE_PQ_SHAPE_LIST:
        plan_levels(p, nd, as_element, child == nd ? nd : &nd->children[0]);
        p->kind = PQ_P_LIST;
        p->children = floe_arena_alloc(&r->arena, sizeof *p->children);
        if (!p->children)
            return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
        p->nchildren = 1;
        FLOE_FORWARD_IF_ERROR(plan_node(r, child, rf ? &rf->children[0] : NULL,
                                        child == nd || child == &nd->children[0], p->children,
                                        depth + 1, err));
        if (!rf && child == nd)
            p->children[0].name = "element";
        return 0;
    case FLOE_PQ_SHAPE_MAP:
        /* key_value group with key (and value); the key is read whenever anything of
         * the map is, so children[0] is the key */
        plan_levels(p, nd, as_element, child);
        p->kind = PQ_P_MAP;
        return rf ? plan_read_children(r, rf, NULL, p, depth, err)
                  : plan_children(r, child, p, depth, err);
    }
    return 0;
}

static int plan_read_root(floe_pq_reader *r, pq_plan *root, floe_error *err) {
    floe_pq_read_field top = {.name = "", .node = NULL, .children = r->read_fields,
                              .nchildren = r->nread_fields};
    bool carrier = false;
    for (size_t i = 0; i < r->nleaves; i++)
        carrier |= r->selected[i];
    for (size_t i = 0; i < r->nread_fields; i++)
        carrier &= !reads_file(&r->read_fields[i]);
    return plan_read_children(r, &top, carrier ? r->nodes : NULL, root, 0, err);
}

int pq_plan_build(floe_pq_reader *r, floe_error *err) {
    pq_plan *root = floe_arena_alloc(&r->arena, sizeof *root);
    if (!root)
        return floe_error_set(err, FLOE_ENOMEM, "%s: out of memory", r->name);
    memset(root, 0, sizeof *root);
    root->kind = PQ_P_STRUCT;
    root->node = r->nodes;
    if (r->shaped)
        FLOE_FORWARD_IF_ERROR(plan_read_root(r, root, err));
    else
        FLOE_FORWARD_IF_ERROR(plan_children(r, r->nodes, root, 0, err));
    plan_range(root);
    r->plan = root;
    return 0;
}

/* ---- Iceberg mapping -------------------------------------------------------------------- */

typedef struct ice_ctx {
    floe_pq_reader *r;
    floe_schema *s;
    int32_t next_id;
    bool use_file_ids;
    floe_field **leaf_field; /* per column */
    char why[FLOE_ERROR_MSG_MAX];
} ice_ctx;

static int ice_node(ice_ctx *c, const floe_pq_node *nd, bool as_element, floe_field *f,
                    int depth);

static int32_t ice_id(ice_ctx *c, const floe_pq_node *nd) {
    if (c->use_file_ids)
        return nd->field_id;
    return c->next_id++;
}

static int ice_leaf(ice_ctx *c, const floe_pq_node *nd, floe_field *f) {
    f->type = nd->value_type;
    f->precision = nd->precision;
    f->scale = nd->scale;
    if (f->type == FLOE_TYPE_FIXED)
        f->length = nd->type_length;
    c->leaf_field[nd->column] = f;
    return 0;
}

static int ice_children(ice_ctx *c, const floe_pq_node *nd, floe_field *f, int depth) {
    f->type = FLOE_TYPE_STRUCT;
    if (nd->nchildren == 0) {
        snprintf(c->why, sizeof c->why, "empty group %s", nd->path);
        return FLOE_EUNSUPPORTED;
    }
    f->children = floe_arena_alloc(&c->s->arena, nd->nchildren * sizeof *f->children);
    if (!f->children)
        return FLOE_ENOMEM;
    f->nchildren = nd->nchildren;
    for (size_t i = 0; i < nd->nchildren; i++)
        FLOE_FORWARD_IF_ERROR(ice_node(c, &nd->children[i], false, &f->children[i], depth + 1));
    return 0;
}

static int ice_node(ice_ctx *c, const floe_pq_node *nd, bool as_element, floe_field *f,
                    int depth) {
    memset(f, 0, sizeof *f);
    f->name = floe_arena_strdup(&c->s->arena, nd->name);
    if (!f->name)
        return FLOE_ENOMEM;
    f->id = ice_id(c, nd);
    f->required = nd->repetition == 0 || as_element;
    if (nd->repetition == 2 && !as_element) {
        f->type = FLOE_TYPE_LIST;
        f->required = true;
        f->children = floe_arena_alloc(&c->s->arena, sizeof *f->children);
        if (!f->children)
            return FLOE_ENOMEM;
        f->nchildren = 1;
        FLOE_FORWARD_IF_ERROR(ice_node(c, nd, true, f->children, depth + 1));
        f->children[0].name = "element";
        if (c->use_file_ids) {
            snprintf(c->why, sizeof c->why, "bare repeated field %s has no element id",
                     nd->path);
            return FLOE_EUNSUPPORTED;
        }
        return 0;
    }
    if (nd->phys >= 0)
        return ice_leaf(c, nd, f);
    if (is_variant_node(nd)) {
        /* Iceberg's variant; its metadata and value leaves are the parts
         * floe_schema_finish expects (a shredded typed_value has no Iceberg field) */
        f->type = FLOE_TYPE_VARIANT;
        f->children = floe_arena_alloc(&c->s->arena, 2 * sizeof *f->children);
        if (!f->children)
            return FLOE_ENOMEM;
        f->nchildren = 2;
        static const char *const parts[2] = {"metadata", "value"};
        for (int i = 0; i < 2; i++) {
            floe_field *p = &f->children[i];
            memset(p, 0, sizeof *p);
            p->name = parts[i];
            p->required = true;
            p->type = FLOE_TYPE_BINARY;
            p->id = -1;
            const floe_pq_node *leaf = child_named(nd, parts[i]);
            if (leaf && leaf->phys >= 0)
                c->leaf_field[leaf->column] = p;
        }
        return 0;
    }
    if ((is_list_node(nd) || is_map_node(nd)) && nd->nchildren == 1 &&
        nd->children[0].repetition == 2) {
        const floe_pq_node *rep = &nd->children[0];
        if (is_list_node(nd) || rep->phys >= 0) {
            const floe_pq_node *el = list_element(nd, rep);
            f->type = FLOE_TYPE_LIST;
            f->children = floe_arena_alloc(&c->s->arena, sizeof *f->children);
            if (!f->children)
                return FLOE_ENOMEM;
            f->nchildren = 1;
            FLOE_FORWARD_IF_ERROR(ice_node(c, el, el == rep, f->children, depth + 1));
            f->children[0].name = "element";
            return 0;
        }
        if (rep->nchildren != 2) {
            snprintf(c->why, sizeof c->why, "map %s without a value column", nd->path);
            return FLOE_EUNSUPPORTED;
        }
        f->type = FLOE_TYPE_MAP;
        f->children = floe_arena_alloc(&c->s->arena, 2 * sizeof *f->children);
        if (!f->children)
            return FLOE_ENOMEM;
        f->nchildren = 2;
        FLOE_FORWARD_IF_ERROR(ice_node(c, &rep->children[0], false, &f->children[0], depth + 1));
        FLOE_FORWARD_IF_ERROR(ice_node(c, &rep->children[1], false, &f->children[1], depth + 1));
        f->children[0].name = "key";
        f->children[0].required = true;
        f->children[1].name = "value";
        return 0;
    }
    return ice_children(c, nd, f, depth);
}

/* Are the file's field ids usable as Iceberg ids: present on every node Iceberg gives an
 * id (all but the repeated middle of a list or map) and unique? */
static bool ids_walk(const floe_pq_node *nd, int32_t *seen, size_t *nseen, int depth) {
    if (depth > PQ_MAX_DEPTH)
        return false;
    const floe_pq_node *par = nd->parent;
    bool middle = par && par->parent && nd->repetition == 2 && par->nchildren == 1 &&
                  (is_map_node(par) || (is_list_node(par) && list_element(par, nd) != nd));
    if (!middle) {
        if (!nd->has_field_id)
            return false;
        for (size_t k = 0; k < *nseen; k++)
            if (seen[k] == nd->field_id)
                return false;
        seen[(*nseen)++] = nd->field_id;
    }
    if (is_variant_node(nd))
        return true; /* its parts carry no ids */
    for (size_t k = 0; k < nd->nchildren; k++)
        if (!ids_walk(&nd->children[k], seen, nseen, depth + 1))
            return false;
    return true;
}

static bool ids_usable(const floe_pq_reader *r) {
    int32_t *seen = floe_malloc((r->nnodes + 1) * sizeof *seen);
    if (!seen)
        return false;
    size_t nseen = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < r->nodes->nchildren; i++)
        ok = ids_walk(&r->nodes->children[i], seen, &nseen, 1);
    floe_free(seen);
    return ok;
}

int pq_schema_iceberg(floe_pq_reader *r, floe_error *err) {
    if (r->iceberg || r->iceberg_rc)
        goto out;
    ice_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.s = floe_schema_new();
    c.next_id = 1;
    c.leaf_field = floe_calloc(r->nleaves ? r->nleaves : 1, sizeof *c.leaf_field);
    int rc = 0;
    if (!c.s || !c.leaf_field) {
        rc = FLOE_ENOMEM;
        goto fail;
    }
    c.use_file_ids = ids_usable(r);
    floe_field *root = &c.s->root;
    root->type = FLOE_TYPE_STRUCT;
    const floe_pq_node *top = r->nodes;
    if (top->nchildren == 0) {
        snprintf(c.why, sizeof c.why, "schema without columns");
        rc = FLOE_EUNSUPPORTED;
        goto fail;
    }
    root->children = floe_arena_alloc(&c.s->arena, top->nchildren * sizeof *root->children);
    if (!root->children) {
        rc = FLOE_ENOMEM;
        goto fail;
    }
    root->nchildren = top->nchildren;
    for (size_t i = 0; i < top->nchildren && rc == 0; i++)
        rc = ice_node(&c, &top->children[i], false, &root->children[i], 1);
    if (rc == FLOE_EUNSUPPORTED && c.use_file_ids && strstr(c.why, "no element id")) {
        /* retry with assigned ids */
        floe_schema_free(c.s);
        c.s = floe_schema_new();
        if (!c.s) {
            rc = FLOE_ENOMEM;
            goto fail;
        }
        c.use_file_ids = false;
        c.next_id = 1;
        c.why[0] = 0;
        root = &c.s->root;
        root->type = FLOE_TYPE_STRUCT;
        root->children = floe_arena_alloc(&c.s->arena, top->nchildren * sizeof *root->children);
        rc = root->children ? 0 : FLOE_ENOMEM;
        root->nchildren = top->nchildren;
        for (size_t i = 0; i < top->nchildren && rc == 0; i++)
            rc = ice_node(&c, &top->children[i], false, &root->children[i], 1);
    }
    if (rc < 0)
        goto fail;
    floe_error e2;
    floe_error_clear(&e2);
    rc = floe_schema_finish(c.s, &e2);
    if (rc < 0) {
        snprintf(c.why, sizeof c.why, "%s", e2.msg);
        rc = FLOE_EUNSUPPORTED;
        goto fail;
    }
    r->iceberg = c.s;
    r->ice_leaf = c.leaf_field; /* freed at close */
    goto out;
fail:
    floe_schema_free(c.s);
    floe_free(c.leaf_field);
    r->iceberg_rc = rc;
    /* kept for the next call: as an error cuts it (a long name loses its middle) */
    floe_error e3;
    if (rc == FLOE_ENOMEM)
        floe_error_set(&e3, rc, "%s: out of memory", r->name);
    else
        floe_error_set(&e3, rc, "%s: unsupported: %s", r->name, c.why[0] ? c.why : "schema");
    memcpy(r->iceberg_msg, e3.msg, sizeof r->iceberg_msg);
out:
    if (r->iceberg_rc)
        return floe_error_set(err, r->iceberg_rc, "%s", r->iceberg_msg);
    return 0;
}
