/*
 * cmd_inspect.c - `floe inspect FILE [--json]`: a Parquet file's metadata: the schema tree
 * with field ids and levels, the Iceberg schema it maps to, key-value metadata, and per
 * row group the column chunks with codec, encodings, sizes, statistics and page index
 * presence. Reads only the footer.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/codec.h"
#include "floe/parquet_reader.h"

static void inspect_help(FILE *out) {
    fprintf(out,
            "usage: floe inspect FILE [--json]\n"
            "\n"
            "Prints a Parquet file's metadata: format version, writer (created_by), rows,\n"
            "the schema tree (repetition, physical and logical type, field id, max\n"
            "definition/repetition levels, the value type floe reads), the Iceberg schema\n"
            "the file maps to, key-value metadata, and for each row group its column\n"
            "chunks: codec, encodings, values, stored/uncompressed sizes, page offsets,\n"
            "statistics (min, max, null count; for GEOMETRY and GEOGRAPHY columns the\n"
            "bounding box and the ISO WKB type codes of GeospatialStatistics) and whether a\n"
            "page index or bloom filter is present. Only the footer is read.\n"
            "\n"
            "  --json      one JSON document\n"
            "  -h, --help  this help\n");
}

static const char *rep_name(int r) {
    return r == 0 ? "required" : r == 1 ? "optional" : "repeated";
}

static char *stat_text(floe_pq_reader *r, size_t rg, size_t c, bool max) {
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_pq_reader_chunk_stat_json(r, rg, c, max, &b, NULL) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return floe_buf_detach(&b, NULL);
}

/* A coordinate of a GeospatialStatistics box: a JSON number, null when not finite. */
static json_t *coord_json(double v) {
    return v == v && v - v == 0 ? json_real(v) : json_null();
}

static json_t *geo_stats_json(const floe_pq_chunk_info *ci) {
    static const char *const names[8] = {"xmin", "xmax", "ymin", "ymax",
                                         "zmin", "zmax", "mmin", "mmax"};
    json_t *o = json_object();
    if (ci->has_geo_bbox) {
        json_t *b = json_object();
        for (int i = 0; i < 8; i++)
            if (i < 4 || (i < 6 && ci->geo_bbox_has_z) || (i >= 6 && ci->geo_bbox_has_m))
                json_object_set_new(b, names[i], coord_json(ci->geo_bbox[i]));
        json_object_set_new(o, "bbox", b);
    }
    if (ci->has_geo_types) {
        json_t *t = json_array();
        for (size_t i = 0; i < ci->n_geo_types; i++)
            json_array_append_new(t, json_integer(ci->geo_types[i]));
        json_object_set_new(o, "geospatial_types", t);
    }
    return o;
}

/* ", bbox x [XMIN, XMAX] y [..] z [..] m [..], geo types [1, 1002]" */
static void print_geo_stats(const floe_pq_chunk_info *ci) {
    static const char axis[4] = {'x', 'y', 'z', 'm'};
    if (ci->has_geo_bbox) {
        printf(", bbox");
        for (int d = 0; d < 4; d++)
            if (d < 2 || (d == 2 && ci->geo_bbox_has_z) || (d == 3 && ci->geo_bbox_has_m))
                printf(" %c [%.17g, %.17g]", axis[d], ci->geo_bbox[2 * d],
                       ci->geo_bbox[2 * d + 1]);
    }
    if (ci->has_geo_types) {
        printf(", geo types [");
        for (size_t i = 0; i < ci->n_geo_types; i++)
            printf("%s%d", i ? ", " : "", (int)ci->geo_types[i]);
        printf("]");
    }
}

static json_t *node_json(const floe_pq_node *n) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(n->name));
    if (n->parent)
        json_object_set_new(o, "repetition", json_string(rep_name(n->repetition)));
    json_object_set_new(o, "type", json_string(n->type_text));
    if (n->has_field_id)
        json_object_set_new(o, "field_id", json_integer(n->field_id));
    json_object_set_new(o, "max_def", json_integer(n->def_level));
    json_object_set_new(o, "max_rep", json_integer(n->rep_level));
    if (n->column >= 0) {
        json_object_set_new(o, "column", json_integer(n->column));
        char buf[64];
        const char *vt = floe_type_name(n->value_type);
        if (n->value_type == FLOE_TYPE_DECIMAL)
            snprintf(buf, sizeof buf, "decimal(%d, %d)", n->precision, n->scale);
        else if (n->value_type == FLOE_TYPE_FIXED)
            snprintf(buf, sizeof buf, "fixed[%d]", n->type_length);
        else
            snprintf(buf, sizeof buf, "%s%s", vt, n->is_unsigned ? " (unsigned)" : "");
        json_object_set_new(o, "reads_as", json_string(buf));
    } else {
        json_t *kids = json_array();
        for (size_t i = 0; i < n->nchildren; i++)
            json_array_append_new(kids, node_json(&n->children[i]));
        json_object_set_new(o, "children", kids);
    }
    return o;
}

static json_t *kv_json(const char *k, const char *v, size_t vl) {
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(k));
    json_t *jv = v ? json_stringn(v, vl) : json_null();
    json_object_set_new(o, "value", jv ? jv : json_string("(not UTF-8)"));
    return o;
}

static json_t *inspect_json(floe_pq_reader *r) {
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    json_t *o = json_object();
    json_object_set_new(o, "file_size", json_integer(fi.file_size));
    json_object_set_new(o, "footer_length", json_integer(fi.footer_length));
    json_object_set_new(o, "version", json_integer(fi.version));
    json_object_set_new(o, "created_by", fi.created_by ? json_string(fi.created_by) : json_null());
    json_object_set_new(o, "num_rows", json_integer(fi.num_rows));
    json_object_set_new(o, "num_row_groups", json_integer((json_int_t)fi.num_row_groups));
    json_object_set_new(o, "num_columns", json_integer((json_int_t)fi.num_columns));
    json_object_set_new(o, "schema", node_json(floe_pq_reader_root(r)));
    const floe_schema *is = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_pq_reader_iceberg_schema(r, &is, &err) == 0) {
        char *txt = floe_schema_to_json(is, false);
        json_t *ij = txt ? json_loads(txt, 0, NULL) : NULL;
        json_object_set_new(o, "iceberg_schema", ij ? ij : json_null());
        floe_free(txt);
    } else {
        json_object_set_new(o, "iceberg_schema", json_null());
        json_object_set_new(o, "iceberg_schema_error", json_string(err.msg));
    }
    json_t *kvs = json_array();
    for (size_t i = 0; i < fi.num_kv; i++) {
        const char *k, *v;
        size_t vl;
        floe_pq_reader_kv(r, i, &k, &v, &vl);
        json_array_append_new(kvs, kv_json(k, v, vl));
    }
    json_object_set_new(o, "key_value_metadata", kvs);
    json_t *rgs = json_array();
    for (size_t g = 0; g < fi.num_row_groups; g++) {
        floe_pq_row_group_info gi;
        floe_pq_reader_row_group_info(r, g, &gi);
        json_t *go = json_object();
        json_object_set_new(go, "num_rows", json_integer(gi.num_rows));
        json_object_set_new(go, "total_byte_size", json_integer(gi.total_byte_size));
        json_object_set_new(go, "compressed_size", json_integer(gi.compressed_size));
        json_t *cols = json_array();
        for (size_t c = 0; c < fi.num_columns; c++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(r, g, c, &ci);
            json_t *co = json_object();
            json_object_set_new(co, "path", json_string(ci.path));
            json_object_set_new(co, "codec", json_string(floe_codec_name((floe_codec)ci.codec)));
            json_t *encs = json_array();
            for (size_t e = 0; e < ci.n_encodings; e++)
                json_array_append_new(encs, json_string(floe_pq_encoding_name(ci.encodings[e])));
            json_object_set_new(co, "encodings", encs);
            json_object_set_new(co, "num_values", json_integer(ci.num_values));
            json_object_set_new(co, "compressed_size", json_integer(ci.compressed_size));
            json_object_set_new(co, "uncompressed_size", json_integer(ci.uncompressed_size));
            json_object_set_new(co, "data_page_offset", json_integer(ci.data_page_offset));
            if (ci.dictionary_page_offset >= 0)
                json_object_set_new(co, "dictionary_page_offset",
                                    json_integer(ci.dictionary_page_offset));
            if (ci.has_statistics) {
                json_t *st = json_object();
                char *mn = stat_text(r, g, c, false), *mx = stat_text(r, g, c, true);
                json_t *jmn = mn ? json_loads(mn, JSON_DECODE_ANY, NULL) : NULL;
                json_t *jmx = mx ? json_loads(mx, JSON_DECODE_ANY, NULL) : NULL;
                json_object_set_new(st, "min", jmn ? jmn : json_null());
                json_object_set_new(st, "max", jmx ? jmx : json_null());
                floe_free(mn);
                floe_free(mx);
                json_object_set_new(st, "null_count",
                                    ci.null_count >= 0 ? json_integer(ci.null_count) : json_null());
                if (ci.distinct_count >= 0)
                    json_object_set_new(st, "distinct_count", json_integer(ci.distinct_count));
                json_object_set_new(co, "statistics", st);
            }
            if (ci.has_geo_statistics)
                json_object_set_new(co, "geospatial_statistics", geo_stats_json(&ci));
            json_object_set_new(co, "column_index", json_boolean(ci.has_column_index));
            json_object_set_new(co, "offset_index", json_boolean(ci.has_offset_index));
            json_object_set_new(co, "bloom_filter", json_boolean(ci.has_bloom_filter));
            if (ci.num_kv) {
                json_t *ckv = json_array();
                for (size_t i = 0; i < ci.num_kv; i++) {
                    const char *k, *v;
                    size_t vl;
                    floe_pq_reader_chunk_kv(r, g, c, i, &k, &v, &vl);
                    json_array_append_new(ckv, kv_json(k, v, vl));
                }
                json_object_set_new(co, "key_value_metadata", ckv);
            }
            json_array_append_new(cols, co);
        }
        json_object_set_new(go, "columns", cols);
        json_array_append_new(rgs, go);
    }
    json_object_set_new(o, "row_groups", rgs);
    return o;
}

static void print_node(const floe_pq_node *n, int depth) {
    if (!n->parent) {
        printf("  message %s\n", n->name[0] ? n->name : "schema");
    } else {
        printf("  %*s%s %s %s", depth * 2, "", rep_name(n->repetition), n->type_text, n->name);
        if (n->has_field_id)
            printf(" = %d", n->field_id);
        printf("  [def %d rep %d", n->def_level, n->rep_level);
        if (n->column >= 0) {
            if (n->value_type == FLOE_TYPE_DECIMAL)
                printf(", reads as decimal(%d, %d)", n->precision, n->scale);
            else
                printf(", reads as %s%s", floe_type_name(n->value_type),
                       n->is_unsigned ? " (unsigned)" : "");
        }
        printf("]\n");
    }
    for (size_t i = 0; i < n->nchildren; i++)
        print_node(&n->children[i], depth + 1);
}

static void print_human(floe_pq_reader *r, const char *path) {
    floe_pq_reader_file fi;
    floe_pq_reader_file_info(r, &fi);
    char b1[32], b2[32];
    printf("file:        %s\n", path);
    printf("size:        %s (footer %s)\n", cli_fmt_bytes((double)fi.file_size, b1, sizeof b1),
           cli_fmt_bytes((double)fi.footer_length, b2, sizeof b2));
    printf("version:     %d\n", fi.version);
    printf("created by:  %s\n", fi.created_by ? fi.created_by : "(unknown)");
    printf("rows:        %" PRId64 " in %zu row group%s, %zu column%s\n", fi.num_rows,
           fi.num_row_groups, fi.num_row_groups == 1 ? "" : "s", fi.num_columns,
           fi.num_columns == 1 ? "" : "s");
    printf("schema:\n");
    print_node(floe_pq_reader_root(r), 0);
    const floe_schema *is = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_pq_reader_iceberg_schema(r, &is, &err) == 0) {
        char *txt = floe_schema_to_json(is, false);
        printf("iceberg schema: %s\n", txt ? txt : "?");
        floe_free(txt);
    } else {
        printf("iceberg schema: none (%s)\n", err.msg);
    }
    if (fi.num_kv) {
        printf("key-value metadata:\n");
        for (size_t i = 0; i < fi.num_kv; i++) {
            const char *k, *v;
            size_t vl;
            floe_pq_reader_kv(r, i, &k, &v, &vl);
            int shown = v ? (int)(vl > 120 ? 120 : vl) : 0;
            printf("  %s = %.*s%s\n", k, shown, v ? v : "", v && vl > 120 ? "..." : "");
        }
    }
    for (size_t g = 0; g < fi.num_row_groups; g++) {
        floe_pq_row_group_info gi;
        floe_pq_reader_row_group_info(r, g, &gi);
        printf("row group %zu: %" PRId64 " rows, %s stored, %s uncompressed\n", g, gi.num_rows,
               cli_fmt_bytes((double)gi.compressed_size, b1, sizeof b1),
               cli_fmt_bytes((double)gi.total_byte_size, b2, sizeof b2));
        for (size_t c = 0; c < fi.num_columns; c++) {
            floe_pq_chunk_info ci;
            floe_pq_reader_chunk_info(r, g, c, &ci);
            printf("  %s: %s, %" PRId64 " values, %s / %s, ", ci.path,
                   floe_codec_name((floe_codec)ci.codec), ci.num_values,
                   cli_fmt_bytes((double)ci.compressed_size, b1, sizeof b1),
                   cli_fmt_bytes((double)ci.uncompressed_size, b2, sizeof b2));
            for (size_t e = 0; e < ci.n_encodings; e++)
                printf("%s%s", e ? "," : "", floe_pq_encoding_name(ci.encodings[e]));
            if (ci.has_statistics) {
                char *mn = stat_text(r, g, c, false), *mx = stat_text(r, g, c, true);
                if (mn && mx)
                    printf(", min %s max %s", mn, mx);
                if (ci.null_count >= 0)
                    printf(", nulls %" PRId64, ci.null_count);
                floe_free(mn);
                floe_free(mx);
            }
            if (ci.has_geo_statistics)
                print_geo_stats(&ci);
            if (ci.has_column_index || ci.has_offset_index)
                printf(", page index%s%s", ci.has_column_index ? " column" : "",
                       ci.has_offset_index ? " offset" : "");
            if (ci.has_bloom_filter)
                printf(", bloom filter");
            printf("\n");
        }
    }
}

int floe_cmd_inspect(int argc, char **argv) {
    bool json = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            inspect_help(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage("inspect", "unknown option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return cli_usage("inspect", "one FILE only");
        }
    }
    if (!path)
        return cli_usage("inspect", "missing FILE");
    floe_error err;
    floe_error_clear(&err);
    floe_pq_reader *r = NULL;
    if (floe_pq_reader_open(cli_io(), path, NULL, &r, &err) < 0)
        return cli_fail(&err);
    if (json) {
        json_t *o = inspect_json(r);
        char *txt = json_dumps(o, JSON_COMPACT);
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(o);
    } else {
        print_human(r, path);
    }
    floe_pq_reader_close(r);
    return FLOE_EXIT_OK;
}
