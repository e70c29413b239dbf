/*
 * metadata.c - Iceberg table metadata: parse (v1, v2, v3; plain or gzip), typed view,
 * serialization, lookups.
 *
 * Spec: format/spec.md "Table Metadata Fields", "Snapshots", "Snapshot References",
 * "Appendix C: JSON serialization" (Table Metadata and Snapshots), "Appendix E" (reading
 * v1 metadata for v2: last-sequence-number and snapshot sequence-number default to 0),
 * "Appendix F" (-1 as "no current snapshot"; gzip metadata names).
 *
 * Invariants:
 *   - The jansson document (m->doc->root) is the source of truth. The typed view in
 *     floe_table_metadata is derived from it by build_view() and lives in m->arena; the
 *     view is never edited in place. Writing serializes the document, so fields floe does
 *     not interpret survive a rewrite byte-for-byte in meaning.
 *   - Every view is validated when it is built: required fields for the document's
 *     format version are present and typed, current-schema-id, default-spec-id,
 *     default-sort-order-id, current-snapshot-id and every ref point at something that
 *     exists. A document that fails is FLOE_ECORRUPT naming the field.
 *   - Input bytes are hostile: sizes are capped before inflating or parsing, jansson
 *     rejects duplicate keys and NUL in strings, and its nesting depth is bounded.
 */
#include "metadata_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codec/zstream.h"

#include "floe/io.h"

/* ---------------------------------------------------------------------------------------
 * jansson allocation hook
 * ------------------------------------------------------------------------------------- */

/* jansson reports an allocation failure during parsing as a syntax error; the flag lets
 * the parser tell the two apart. */
static _Thread_local bool json_alloc_failed;
static void *json_alloc_hook(size_t n) {
    void *p = floe_malloc(n);
    if (!p)
        json_alloc_failed = true;
    return p;
}
static void json_free_hook(void *p) { floe_free(p); }
static pthread_once_t json_once = PTHREAD_ONCE_INIT;
bool floe_metadata_json_take_alloc_failure(void) {
    bool failed = json_alloc_failed;
    json_alloc_failed = false;
    return failed;
}
static void json_init_once(void) { json_set_alloc_funcs(json_alloc_hook, json_free_hook); }
void floe_metadata_json_init(void) { pthread_once(&json_once, json_init_once); }

/* ---------------------------------------------------------------------------------------
 * gzip
 * ------------------------------------------------------------------------------------- */


static bool is_gzip(const uint8_t *p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

/* Inflate a gzip stream into out (bounded by out->max). */
static int gunzip(const uint8_t *p, size_t n, const char *name, floe_buf *out, floe_error *err) {
    floe_zstream_options o = {.kind = FLOE_ZSTREAM_GZIP, .gzip_one_member = true};
    floe_zstream *z = NULL;
    if (floe_zstream_new(&o, &z, NULL) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "%s: cannot start gzip inflate", name);
    int rc = 0;
    while (!floe_zstream_complete(z)) {
        rc = floe_buf_reserve(out, 64 * 1024);
        if (rc < 0) {
            rc = rc == FLOE_ELIMIT
                     ? floe_error_set(err, FLOE_ELIMIT,
                                      "%s: gzip metadata inflates past %u bytes", name,
                                      (unsigned)out->max)
                     : floe_error_set(err, rc, "%s: out of memory inflating", name);
            break;
        }
        size_t room = out->cap - out->len, used, got;
        floe_error zerr;
        floe_error_clear(&zerr);
        rc = floe_zstream_decode(z, p, n, &used, out->data + out->len, room, &got, &zerr);
        out->len += got;
        p += used;
        n -= used;
        if (rc == FLOE_ENOMEM) {
            rc = floe_error_set(err, FLOE_ENOMEM, "%s: out of memory inflating", name);
            break;
        }
        if (rc < 0) { /* "gzip: <what zlib says>" */
            rc = floe_error_at(err, FLOE_ECORRUPT, (int64_t)floe_zstream_total_in(z),
                               "%s: bad gzip data: %s", name,
                               strncmp(zerr.msg, "gzip: ", 6) ? zerr.msg : zerr.msg + 6);
            break;
        }
        if (!floe_zstream_complete(z) && n == 0 && got < room) {
            rc = floe_error_at(err, FLOE_ECORRUPT, (int64_t)floe_zstream_total_in(z),
                               "%s: truncated gzip metadata", name);
            break;
        }
    }
    floe_zstream_free(z);
    return rc;
}

static int gzip_bytes(const char *p, size_t n, floe_buf *out, floe_error *err) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = floe_zlib_alloc;
    zs.zfree = floe_zlib_free;
    if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return floe_error_set(err, FLOE_ENOMEM, "cannot start gzip deflate");
    int rc = 0;
    uLong bound = deflateBound(&zs, (uLong)n);
    rc = floe_buf_reserve(out, (size_t)bound + 64);
    if (rc < 0) {
        rc = floe_error_set(err, rc, "out of memory compressing metadata");
        goto done;
    }
    zs.next_in = (Bytef *)(uintptr_t)p;
    zs.avail_in = (uInt)n;
    zs.next_out = out->data + out->len;
    zs.avail_out = (uInt)(out->cap - out->len);
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
        rc = floe_error_set(err, FLOE_EINTERNAL, "gzip deflate did not finish");
        goto done;
    }
    out->len += zs.total_out;
done:
    deflateEnd(&zs);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Integers outside the signed 64-bit range. Every integer in table metadata (ids, sequence
 * numbers, timestamps, sizes) is a long in the spec. jansson refuses numbers past 64 bits
 * unsigned with a message that names no field; ids in [2^63, 2^64), which some writers
 * emit, it would need wrapped to fit. Neither is acceptable: such metadata is refused with
 * the field's name. Only integer tokens outside strings are looked at.
 * ------------------------------------------------------------------------------------- */

/* The key of the member the value at p[at] belongs to: the last "key": before it (for a
 * value inside an array, the array's key). */
static void key_before(const char *p, size_t at, char *key, size_t n) {
    snprintf(key, n, "(an array element)");
    for (size_t i = at; i-- > 1;) {
        if (p[i] != ':')
            continue;
        size_t q = i;
        while (q > 0 && (p[q - 1] == ' ' || p[q - 1] == '\t' || p[q - 1] == '\n' ||
                         p[q - 1] == '\r'))
            q--;
        if (q == 0 || p[q - 1] != '"')
            continue;
        size_t close = q - 1, open = close;
        while (open > 0 && p[open - 1] != '"')
            open--;
        if (open == 0)
            return;
        snprintf(key, n, "\"%.*s\"", (int)(close - open > 200 ? 200 : close - open),
                 p + open);
        return;
    }
}

static int check_integer_range(const char *p, size_t n, const char *name, floe_error *err) {
    size_t i = 0;
    bool in_str = false;
    while (i < n) {
        char c = p[i];
        if (in_str) {
            if (c == '\\')
                i += 2;
            else {
                if (c == '"')
                    in_str = false;
                i++;
            }
            continue;
        }
        if (c == '"') {
            in_str = true;
            i++;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) {
            i++;
            continue;
        }
        size_t start = i;
        bool neg = c == '-';
        if (neg)
            i++;
        size_t dstart = i;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
        size_t ndig = i - dstart;
        bool integer = !(i < n && (p[i] == '.' || p[i] == 'e' || p[i] == 'E'));
        while (i < n && (p[i] == '.' || p[i] == 'e' || p[i] == 'E' || p[i] == '+' ||
                         p[i] == '-' || (p[i] >= '0' && p[i] <= '9')))
            i++;
        if (!integer || ndig < 19)
            continue;
        /* magnitude against 2^63 - 1 (2^63 for a negative number), digit by digit */
        static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
        const char *lim = neg ? min : max;
        bool out = ndig > 19 || memcmp(p + dstart, lim, 19) > 0;
        if (!out)
            continue;
        char key[210];
        key_before(p, start, key, sizeof key);
        size_t line = 1, col = 1;
        for (size_t k = 0; k < start; k++) {
            if (p[k] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)start,
                             "%s: table metadata: %s is %.*s (line %zu column %zu), outside "
                             "the signed 64-bit range the spec gives ids and longs; refused "
                             "rather than wrapped",
                             name, key, (int)(i - start > 40 ? 40 : i - start), p + start, line,
                             col);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Typed view
 * ------------------------------------------------------------------------------------- */

typedef struct view_ctx {
    floe_table_metadata *m;
    const char *name;
    floe_error *err;
} view_ctx;

#define VIEW_FAIL(vc, ...) floe_error_set((vc)->err, FLOE_ECORRUPT, __VA_ARGS__)

static int get_long(view_ctx *vc, const json_t *obj, const char *where, const char *key,
                    bool required, int64_t dflt, int64_t *out) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return VIEW_FAIL(vc, "%s: table metadata: %s\"%s\" is missing", vc->name, where,
                             key);
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v))
        return VIEW_FAIL(vc, "%s: table metadata: %s\"%s\" must be an integer", vc->name, where,
                         key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int get_int(view_ctx *vc, const json_t *obj, const char *where, const char *key,
                   bool required, int32_t dflt, int32_t *out) {
    int64_t v = 0;
    int rc = get_long(vc, obj, where, key, required, dflt, &v);
    if (rc < 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return VIEW_FAIL(vc, "%s: table metadata: %s\"%s\" %" PRId64 " is out of int range",
                         vc->name, where, key, v);
    *out = (int32_t)v;
    return 0;
}

static int get_str(view_ctx *vc, const json_t *obj, const char *where, const char *key,
                   bool required, const char **out) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return VIEW_FAIL(vc, "%s: table metadata: %s\"%s\" is missing", vc->name, where,
                             key);
        *out = NULL;
        return 0;
    }
    if (!json_is_string(v))
        return VIEW_FAIL(vc, "%s: table metadata: %s\"%s\" must be a string", vc->name, where,
                         key);
    const char *s = floe_arena_strndup(&vc->m->arena, json_string_value(v), json_string_length(v));
    if (!s)
        return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    *out = s;
    return 0;
}

/* JSON text of v, copied into the arena. */
static const char *arena_dump(view_ctx *vc, const json_t *v) {
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        return NULL;
    const char *s = floe_arena_strdup(&vc->m->arena, text);
    floe_free(text);
    return s;
}

/* A string map (properties, summary): string values as they are, other scalars as their
 * JSON text (some writers put numbers there), objects/arrays refused. */
static int get_string_map(view_ctx *vc, const json_t *obj, const char *what, floe_kv **out,
                          size_t *n) {
    *out = NULL;
    *n = 0;
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return VIEW_FAIL(vc, "%s: table metadata: %s must be an object", vc->name, what);
    size_t cnt = json_object_size(obj);
    if (cnt == 0)
        return 0;
    floe_kv *kv = floe_arena_alloc(&vc->m->arena, cnt * sizeof *kv);
    if (!kv)
        return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    size_t i = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        kv[i].key = floe_arena_strdup(&vc->m->arena, key);
        if (json_is_string(val))
            kv[i].value = floe_arena_strndup(&vc->m->arena, json_string_value(val),
                                             json_string_length(val));
        else if (json_is_object(val) || json_is_array(val))
            return VIEW_FAIL(vc, "%s: table metadata: %s.\"%s\" must be a string", vc->name,
                             what, key);
        else
            kv[i].value = arena_dump(vc, val);
        if (!kv[i].key || !kv[i].value)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        i++;
    }
    *out = kv;
    *n = cnt;
    return 0;
}

static int view_schemas(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    int fv = m->format_version;
    json_t *schemas = json_object_get(root, "schemas");
    json_t *legacy = json_object_get(root, "schema");
    if (schemas && !json_is_null(schemas)) {
        if (!json_is_array(schemas) || json_array_size(schemas) == 0)
            return VIEW_FAIL(vc, "%s: table metadata: \"schemas\" must be a non-empty array",
                             vc->name);
        size_t cnt = json_array_size(schemas);
        m->schemas = floe_arena_alloc(&m->arena, cnt * sizeof *m->schemas);
        if (!m->schemas)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            json_t *s = json_array_get(schemas, i);
            char where[48];
            snprintf(where, sizeof where, "schemas[%zu].", i);
            if (!json_is_object(s))
                return VIEW_FAIL(vc, "%s: table metadata: schemas[%zu] must be an object",
                                 vc->name, i);
            int rc = get_int(vc, s, where, "schema-id", fv >= 2, 0, &m->schemas[i].schema_id);
            if (rc < 0)
                return rc;
            for (size_t k = 0; k < i; k++)
                if (m->schemas[k].schema_id == m->schemas[i].schema_id)
                    return VIEW_FAIL(vc, "%s: table metadata: schema-id %d appears twice",
                                     vc->name, (int)m->schemas[i].schema_id);
            if (!(m->schemas[i].json = arena_dump(vc, s)))
                return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        }
        m->n_schemas = cnt;
        int rc = get_int(vc, root, "", "current-schema-id", fv >= 2, m->schemas[0].schema_id,
                         &m->current_schema_id);
        if (rc < 0)
            return rc;
    } else if (fv >= 2) {
        return VIEW_FAIL(vc, "%s: table metadata: \"schemas\" is missing", vc->name);
    } else {
        if (!legacy || !json_is_object(legacy))
            return VIEW_FAIL(vc, "%s: table metadata: neither \"schemas\" nor \"schema\" is present",
                             vc->name);
        m->schemas = floe_arena_alloc(&m->arena, sizeof *m->schemas);
        if (!m->schemas)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        int rc = get_int(vc, legacy, "schema.", "schema-id", false, 0, &m->schemas[0].schema_id);
        if (rc < 0)
            return rc;
        if (!(m->schemas[0].json = arena_dump(vc, legacy)))
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        m->n_schemas = 1;
        m->current_schema_id = m->schemas[0].schema_id;
    }
    if (!floe_table_metadata_schema(m, m->current_schema_id))
        return VIEW_FAIL(vc, "%s: table metadata: current-schema-id %d is not among \"schemas\"",
                         vc->name, (int)m->current_schema_id);
    return 0;
}

static int spec_fields_max_id(view_ctx *vc, const json_t *fields, const char *where,
                              int32_t *max_id) {
    if (!json_is_array(fields))
        return VIEW_FAIL(vc, "%s: table metadata: %s fields must be an array", vc->name, where);
    for (size_t k = 0; k < json_array_size(fields); k++) {
        json_t *f = json_array_get(fields, k);
        if (!json_is_object(f) || !json_is_string(json_object_get(f, "transform")))
            return VIEW_FAIL(vc, "%s: table metadata: %s field %zu needs a \"transform\"",
                             vc->name, where, k);
        json_t *fid = json_object_get(f, "field-id");
        if (fid && json_is_integer(fid) && json_integer_value(fid) > *max_id &&
            json_integer_value(fid) <= INT32_MAX)
            *max_id = (int32_t)json_integer_value(fid);
        else if (!fid)
            /* Very old v1 specs have no field ids: the spec assigns 1000 + position. */
            *max_id = *max_id > 999 + (int32_t)k + 1 ? *max_id : 999 + (int32_t)k + 1;
    }
    return 0;
}

static int view_specs(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    int fv = m->format_version;
    json_t *specs = json_object_get(root, "partition-specs");
    json_t *legacy = json_object_get(root, "partition-spec");
    int32_t max_field_id = 999;
    int rc;
    if (specs && !json_is_null(specs)) {
        if (!json_is_array(specs) || json_array_size(specs) == 0)
            return VIEW_FAIL(vc, "%s: table metadata: \"partition-specs\" must be a non-empty array",
                             vc->name);
        size_t cnt = json_array_size(specs);
        m->specs = floe_arena_alloc(&m->arena, cnt * sizeof *m->specs);
        if (!m->specs)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            json_t *s = json_array_get(specs, i);
            char where[48];
            snprintf(where, sizeof where, "partition-specs[%zu].", i);
            if (!json_is_object(s))
                return VIEW_FAIL(vc, "%s: table metadata: partition-specs[%zu] must be an object",
                                 vc->name, i);
            if ((rc = get_int(vc, s, where, "spec-id", true, 0, &m->specs[i].spec_id)) < 0)
                return rc;
            if ((rc = spec_fields_max_id(vc, json_object_get(s, "fields"), where,
                                         &max_field_id)) < 0)
                return rc;
            if (!(m->specs[i].json = arena_dump(vc, s)))
                return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        }
        m->n_specs = cnt;
        if ((rc = get_int(vc, root, "", "default-spec-id", fv >= 2, m->specs[0].spec_id,
                          &m->default_spec_id)) < 0)
            return rc;
    } else if (fv >= 2) {
        return VIEW_FAIL(vc, "%s: table metadata: \"partition-specs\" is missing", vc->name);
    } else {
        if (!legacy)
            return VIEW_FAIL(vc,
                             "%s: table metadata: neither \"partition-specs\" nor \"partition-spec\" is present",
                             vc->name);
        if ((rc = spec_fields_max_id(vc, legacy, "partition-spec", &max_field_id)) < 0)
            return rc;
        json_t *obj = json_pack("{s:i, s:O}", "spec-id", 0, "fields", legacy);
        if (!obj)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        m->specs = floe_arena_alloc(&m->arena, sizeof *m->specs);
        const char *text = arena_dump(vc, obj);
        json_decref(obj);
        if (!m->specs || !text)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        m->specs[0].spec_id = 0;
        m->specs[0].json = text;
        m->n_specs = 1;
        m->default_spec_id = 0;
    }
    if (!floe_table_metadata_spec(m, m->default_spec_id))
        return VIEW_FAIL(vc, "%s: table metadata: default-spec-id %d is not among \"partition-specs\"",
                         vc->name, (int)m->default_spec_id);
    return get_int(vc, root, "", "last-partition-id", fv >= 2, max_field_id,
                   &m->last_partition_id);
}

static int view_sort_orders(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    int fv = m->format_version;
    json_t *orders = json_object_get(root, "sort-orders");
    int rc;
    if (!orders || json_is_null(orders)) {
        if (fv >= 2)
            return VIEW_FAIL(vc, "%s: table metadata: \"sort-orders\" is missing", vc->name);
        m->default_sort_order_id = 0; /* v1 without sort orders: unsorted */
        return 0;
    }
    if (!json_is_array(orders))
        return VIEW_FAIL(vc, "%s: table metadata: \"sort-orders\" must be an array", vc->name);
    size_t cnt = json_array_size(orders);
    if (cnt) {
        m->sort_orders = floe_arena_alloc(&m->arena, cnt * sizeof *m->sort_orders);
        if (!m->sort_orders)
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cnt; i++) {
        json_t *o = json_array_get(orders, i);
        char where[48];
        snprintf(where, sizeof where, "sort-orders[%zu].", i);
        if (!json_is_object(o) || !json_is_array(json_object_get(o, "fields")))
            return VIEW_FAIL(vc, "%s: table metadata: sort-orders[%zu] must be an object with \"fields\"",
                             vc->name, i);
        if ((rc = get_int(vc, o, where, "order-id", true, 0, &m->sort_orders[i].order_id)) < 0)
            return rc;
        if (!(m->sort_orders[i].json = arena_dump(vc, o)))
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    }
    m->n_sort_orders = cnt;
    if ((rc = get_int(vc, root, "", "default-sort-order-id", fv >= 2, 0,
                      &m->default_sort_order_id)) < 0)
        return rc;
    bool found = m->default_sort_order_id == 0 && cnt == 0;
    for (size_t i = 0; i < cnt; i++)
        found |= m->sort_orders[i].order_id == m->default_sort_order_id;
    if (!found)
        return VIEW_FAIL(vc, "%s: table metadata: default-sort-order-id %d is not among \"sort-orders\"",
                         vc->name, (int)m->default_sort_order_id);
    return 0;
}

static int view_snapshot(view_ctx *vc, const json_t *s, size_t i, floe_snapshot *out) {
    floe_table_metadata *m = vc->m;
    int fv = m->format_version;
    char where[48];
    snprintf(where, sizeof where, "snapshots[%zu].", i);
    int rc;
    if (!json_is_object(s))
        return VIEW_FAIL(vc, "%s: table metadata: snapshots[%zu] must be an object", vc->name, i);
    if ((rc = get_long(vc, s, where, "snapshot-id", true, 0, &out->snapshot_id)) < 0)
        return rc;
    /* -1 is "no snapshot" (Appendix F): as current-snapshot-id it would name both none
     * and this one, and engines disagree which (Iceberg Java refuses the table) */
    if (out->snapshot_id == -1)
        return VIEW_FAIL(vc, "%s: table metadata: %s\"snapshot-id\" is -1, the value that "
                             "means no snapshot (snapshot ids are positive)", vc->name, where);
    json_t *parent = json_object_get(s, "parent-snapshot-id");
    if (parent && !json_is_null(parent)) {
        if ((rc = get_long(vc, s, where, "parent-snapshot-id", true, 0,
                           &out->parent_snapshot_id)) < 0)
            return rc;
        out->has_parent = true;
    }
    if ((rc = get_long(vc, s, where, "sequence-number", fv >= 2, 0, &out->sequence_number)) < 0)
        return rc;
    if ((rc = get_long(vc, s, where, "timestamp-ms", true, 0, &out->timestamp_ms)) < 0)
        return rc;
    if ((rc = get_str(vc, s, where, "manifest-list", false, &out->manifest_list)) < 0)
        return rc;
    json_t *manifests = json_object_get(s, "manifests");
    if (manifests && !json_is_null(manifests)) {
        if (!json_is_array(manifests))
            return VIEW_FAIL(vc, "%s: table metadata: %s\"manifests\" must be an array", vc->name,
                             where);
        size_t cnt = json_array_size(manifests);
        if (cnt) {
            out->manifests = floe_arena_alloc(&m->arena, cnt * sizeof *out->manifests);
            if (!out->manifests)
                return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        }
        for (size_t k = 0; k < cnt; k++) {
            json_t *e = json_array_get(manifests, k);
            if (!json_is_string(e))
                return VIEW_FAIL(vc, "%s: table metadata: %s\"manifests\"[%zu] must be a string",
                                 vc->name, where, k);
            if (!(out->manifests[k] = floe_arena_strdup(&m->arena, json_string_value(e))))
                return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        }
        out->n_manifests = cnt;
    }
    if (!out->manifest_list && !manifests)
        return VIEW_FAIL(vc, "%s: table metadata: %s\"manifest-list\" is missing", vc->name,
                         where);
    if (fv >= 2 && !out->manifest_list)
        return VIEW_FAIL(vc, "%s: table metadata: %s\"manifest-list\" is required in format v%d",
                         vc->name, where, fv);
    char what[64];
    snprintf(what, sizeof what, "%ssummary", where);
    json_t *summary = json_object_get(s, "summary");
    if ((rc = get_string_map(vc, summary, what, &out->summary, &out->n_summary)) < 0)
        return rc;
    for (size_t k = 0; k < out->n_summary; k++)
        if (!strcmp(out->summary[k].key, "operation"))
            out->operation = out->summary[k].value;
    if (fv >= 2 && !out->operation)
        return VIEW_FAIL(vc, "%s: table metadata: %ssummary has no \"operation\"", vc->name, where);
    json_t *sid = json_object_get(s, "schema-id");
    if (sid && !json_is_null(sid)) {
        if ((rc = get_int(vc, s, where, "schema-id", true, 0, &out->schema_id)) < 0)
            return rc;
        out->has_schema_id = true;
    }
    return 0;
}

static int view_refs(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    json_t *refs = json_object_get(root, "refs");
    size_t cnt = 0;
    if (refs && !json_is_null(refs)) {
        if (!json_is_object(refs))
            return VIEW_FAIL(vc, "%s: table metadata: \"refs\" must be an object", vc->name);
        cnt = json_object_size(refs);
    }
    bool has_main = refs && json_object_get(refs, "main");
    size_t total = cnt + (!has_main && m->current_snapshot_id != -1 ? 1 : 0);
    if (total == 0)
        return 0;
    m->refs = floe_arena_alloc(&m->arena, total * sizeof *m->refs);
    if (!m->refs)
        return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    size_t i = 0;
    int rc;
    if (cnt) {
        const char *key;
        json_t *r;
        json_object_foreach(refs, key, r) {
            floe_snapshot_ref *ref = &m->refs[i++];
            char where[160];
            snprintf(where, sizeof where, "refs.%.100s.", key);
            if (!json_is_object(r))
                return VIEW_FAIL(vc, "%s: table metadata: refs.\"%s\" must be an object", vc->name,
                                 key);
            if (!(ref->name = floe_arena_strdup(&m->arena, key)))
                return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
            const char *type;
            if ((rc = get_long(vc, r, where, "snapshot-id", true, 0, &ref->snapshot_id)) < 0 ||
                (rc = get_str(vc, r, where, "type", true, &type)) < 0)
                return rc;
            if (strcmp(type, "tag") && strcmp(type, "branch"))
                return VIEW_FAIL(vc, "%s: table metadata: %s\"type\" must be \"branch\" or \"tag\"",
                                 vc->name, where);
            ref->is_tag = !strcmp(type, "tag");
            if ((rc = get_int(vc, r, where, "min-snapshots-to-keep", false, -1,
                              &ref->min_snapshots_to_keep)) < 0 ||
                (rc = get_long(vc, r, where, "max-snapshot-age-ms", false, -1,
                               &ref->max_snapshot_age_ms)) < 0 ||
                (rc = get_long(vc, r, where, "max-ref-age-ms", false, -1, &ref->max_ref_age_ms)) < 0)
                return rc;
            if (!floe_table_metadata_snapshot(m, ref->snapshot_id))
                return VIEW_FAIL(vc, "%s: table metadata: refs.\"%s\" points at snapshot %" PRId64
                                     " which is not among \"snapshots\"",
                                 vc->name, key, ref->snapshot_id);
            if (!strcmp(key, "main") && ref->snapshot_id != m->current_snapshot_id)
                return VIEW_FAIL(vc, "%s: table metadata: refs.main (%" PRId64
                                     ") disagrees with current-snapshot-id (%" PRId64 ")",
                                 vc->name, ref->snapshot_id, m->current_snapshot_id);
        }
    }
    if (i < total) { /* spec: "There is always a main branch reference ..." */
        floe_snapshot_ref *ref = &m->refs[i++];
        ref->name = "main";
        ref->snapshot_id = m->current_snapshot_id;
        ref->is_tag = false;
        ref->min_snapshots_to_keep = -1;
        ref->max_snapshot_age_ms = -1;
        ref->max_ref_age_ms = -1;
    }
    m->n_refs = i;
    return 0;
}

static int view_logs(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    int rc;
    json_t *slog = json_object_get(root, "snapshot-log");
    if (slog && !json_is_null(slog)) {
        if (!json_is_array(slog))
            return VIEW_FAIL(vc, "%s: table metadata: \"snapshot-log\" must be an array", vc->name);
        size_t cnt = json_array_size(slog);
        if (cnt && !(m->snapshot_log = floe_arena_alloc(&m->arena, cnt * sizeof *m->snapshot_log)))
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            json_t *e = json_array_get(slog, i);
            char where[48];
            snprintf(where, sizeof where, "snapshot-log[%zu].", i);
            if (!json_is_object(e))
                return VIEW_FAIL(vc, "%s: table metadata: %s must be an object", vc->name, where);
            if ((rc = get_long(vc, e, where, "timestamp-ms", true, 0,
                               &m->snapshot_log[i].timestamp_ms)) < 0 ||
                (rc = get_long(vc, e, where, "snapshot-id", true, 0,
                               &m->snapshot_log[i].snapshot_id)) < 0)
                return rc;
        }
        m->n_snapshot_log = cnt;
    }
    json_t *mlog = json_object_get(root, "metadata-log");
    if (mlog && !json_is_null(mlog)) {
        if (!json_is_array(mlog))
            return VIEW_FAIL(vc, "%s: table metadata: \"metadata-log\" must be an array", vc->name);
        size_t cnt = json_array_size(mlog);
        if (cnt && !(m->metadata_log = floe_arena_alloc(&m->arena, cnt * sizeof *m->metadata_log)))
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            json_t *e = json_array_get(mlog, i);
            char where[48];
            snprintf(where, sizeof where, "metadata-log[%zu].", i);
            if (!json_is_object(e))
                return VIEW_FAIL(vc, "%s: table metadata: %s must be an object", vc->name, where);
            if ((rc = get_long(vc, e, where, "timestamp-ms", true, 0,
                               &m->metadata_log[i].timestamp_ms)) < 0 ||
                (rc = get_str(vc, e, where, "metadata-file", true,
                              &m->metadata_log[i].metadata_file)) < 0)
                return rc;
        }
        m->n_metadata_log = cnt;
    }
    return 0;
}

static int snap_key_cmp(const void *a, const void *b) {
    const floe_snap_key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The snapshots sorted by id (doc->by_id); a snapshot-id that appears twice is refused. */
static int index_snapshots(view_ctx *vc) {
    floe_table_metadata *m = vc->m;
    floe_table_metadata_doc *doc = m->doc;
    size_t n = m->n_snapshots;
    if (!n)
        return 0;
    floe_snap_key *k = floe_malloc(n * sizeof *k);
    if (!k)
        return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        k[i] = (floe_snap_key){m->snapshots[i].snapshot_id, i};
    qsort(k, n, sizeof *k, snap_key_cmp);
    doc->by_id = k;
    doc->n_by_id = n;
    doc->base = m->snapshots;
    for (size_t i = 1; i < n; i++)
        if (k[i].id == k[i - 1].id)
            return VIEW_FAIL(vc, "%s: table metadata: snapshot-id %" PRId64 " appears twice "
                             "(snapshots[%zu] and [%zu])", vc->name, k[i].id, k[i - 1].idx,
                             k[i].idx);
    return 0;
}

static int build_view(view_ctx *vc, const json_t *root) {
    floe_table_metadata *m = vc->m;
    int rc;
    if (!json_is_object(root))
        return VIEW_FAIL(vc, "%s: table metadata must be a JSON object", vc->name);
    int64_t fv;
    if ((rc = get_long(vc, root, "", "format-version", true, 0, &fv)) < 0)
        return rc;
    if (fv > 3)
        return floe_error_set(vc->err, FLOE_EUNSUPPORTED,
                              "%s: table metadata: format-version %" PRId64
                              " is newer than floe supports (1 to 3)",
                              vc->name, fv);
    if (fv < 1)
        return VIEW_FAIL(vc, "%s: table metadata: format-version %" PRId64 " is not valid",
                         vc->name, fv);
    m->format_version = (int)fv;
    if ((rc = get_str(vc, root, "", "table-uuid", fv >= 2, &m->table_uuid)) < 0 ||
        (rc = get_str(vc, root, "", "location", true, &m->location)) < 0 ||
        (rc = get_long(vc, root, "", "last-sequence-number", fv >= 2, 0,
                       &m->last_sequence_number)) < 0 ||
        (rc = get_long(vc, root, "", "last-updated-ms", true, 0, &m->last_updated_ms)) < 0 ||
        (rc = get_int(vc, root, "", "last-column-id", true, 0, &m->last_column_id)) < 0)
        return rc;
    if ((rc = view_schemas(vc, root)) < 0 || (rc = view_specs(vc, root)) < 0 ||
        (rc = view_sort_orders(vc, root)) < 0)
        return rc;
    if ((rc = get_string_map(vc, json_object_get(root, "properties"), "\"properties\"",
                             &m->properties, &m->n_properties)) < 0)
        return rc;
    if ((rc = get_long(vc, root, "", "current-snapshot-id", false, -1,
                       &m->current_snapshot_id)) < 0)
        return rc;
    json_t *snaps = json_object_get(root, "snapshots");
    if (snaps && !json_is_null(snaps)) {
        if (!json_is_array(snaps))
            return VIEW_FAIL(vc, "%s: table metadata: \"snapshots\" must be an array", vc->name);
        size_t cnt = json_array_size(snaps);
        if (cnt && !(m->snapshots = floe_arena_alloc(&m->arena, cnt * sizeof *m->snapshots)))
            return floe_error_set(vc->err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            if ((rc = view_snapshot(vc, json_array_get(snaps, i), i, &m->snapshots[i])) < 0)
                return rc;
            m->n_snapshots = i + 1;
        }
        if ((rc = index_snapshots(vc)) < 0)
            return rc;
    }
    if (m->current_snapshot_id != -1 && !floe_table_metadata_snapshot(m, m->current_snapshot_id))
        return VIEW_FAIL(vc, "%s: table metadata: current-snapshot-id %" PRId64
                             " is not among \"snapshots\"",
                         vc->name, m->current_snapshot_id);
    if ((rc = view_refs(vc, root)) < 0 || (rc = view_logs(vc, root)) < 0)
        return rc;
    return 0;
}

int floe_metadata_from_json(json_t *root, const char *name, floe_table_metadata **out,
                            floe_error *err) {
    floe_table_metadata *m = floe_calloc(1, sizeof *m);
    floe_table_metadata_doc *doc = floe_malloc(sizeof *doc);
    if (!m || !doc) {
        floe_free(m);
        floe_free(doc);
        json_decref(root);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    doc->root = root;
    doc->by_id = NULL;
    doc->n_by_id = 0;
    doc->base = NULL;
    m->doc = doc;
    floe_arena_init(&m->arena, 16 * 1024);
    view_ctx vc = {m, name ? name : "metadata", err};
    int rc = build_view(&vc, root);
    if (rc < 0) {
        floe_table_metadata_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int floe_table_metadata_parse(const void *p, size_t n, const char *name,
                              floe_table_metadata **out, floe_error *err) {
    floe_metadata_json_init();
    if (!name)
        name = "metadata";
    floe_buf inflated;
    floe_buf_init(&inflated, FLOE_METADATA_MAX_BYTES);
    int rc = 0;
    const char *text = p;
    size_t len = n;
    if (n > FLOE_METADATA_MAX_BYTES)
        FLOE_FAIL(err, FLOE_ELIMIT, "%s: metadata file of %zu bytes is past the %u byte cap",
                  name, n, (unsigned)FLOE_METADATA_MAX_BYTES);
    if (is_gzip(p, n)) {
        FLOE_CHECK(gunzip(p, n, name, &inflated, err));
        text = (const char *)inflated.data;
        len = inflated.len;
    }
    if (len == 0)
        FLOE_FAIL(err, FLOE_ECORRUPT, "%s: empty metadata file", name);
    FLOE_CHECK(check_integer_range(text, len, name, err));
    json_error_t jerr;
    json_alloc_failed = false;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root && (json_alloc_failed || json_error_code(&jerr) == json_error_out_of_memory)) {
        rc = floe_error_set(err, FLOE_ENOMEM, "%s: out of memory parsing JSON", name);
        goto done;
    }
    if (!root) {
        rc = floe_error_at(err, FLOE_ECORRUPT, jerr.position,
                           "%s: not table metadata JSON: line %d column %d: %s", name, jerr.line,
                           jerr.column, jerr.text);
        goto done;
    }
    rc = floe_metadata_from_json(root, name, out, err);
done:
    floe_buf_free(&inflated);
    return rc;
}

int floe_table_metadata_read(floe_io *io, const char *uri, floe_table_metadata **out, floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, FLOE_METADATA_MAX_BYTES);
    int rc = floe_io_read_all(io, uri, FLOE_METADATA_MAX_BYTES, &b, err);
    if (rc == 0)
        rc = floe_table_metadata_parse(b.data ? b.data : (const uint8_t *)"", b.len, uri, out, err);
    floe_buf_free(&b);
    return rc;
}

void floe_table_metadata_free(floe_table_metadata *m) {
    if (!m)
        return;
    if (m->doc) {
        json_decref(m->doc->root);
        floe_free(m->doc->by_id);
        floe_free(m->doc);
    }
    floe_arena_reset(&m->arena);
    floe_free(m);
}

int floe_table_metadata_clone(const floe_table_metadata *m, floe_table_metadata **out,
                              floe_error *err) {
    floe_metadata_json_init();
    json_t *copy = json_deep_copy(m->doc->root);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return floe_metadata_from_json(copy, "metadata", out, err);
}

int floe_table_metadata_to_json(const floe_table_metadata *m, bool pretty, char **out,
                                size_t *len, floe_error *err) {
    floe_metadata_json_init();
    char *text = json_dumps(m->doc->root, pretty ? JSON_INDENT(2) : JSON_COMPACT);
    if (!text)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory serializing metadata");
    *out = text;
    if (len)
        *len = strlen(text);
    return 0;
}

typedef struct size_count {
    size_t n, limit;
} size_count;

static int count_bytes(const char *buffer, size_t size, void *data) {
    (void)buffer;
    size_count *c = data;
    c->n += size;
    return c->n > c->limit ? -1 : 0; /* past the limit: the rest need not be made */
}

size_t floe_table_metadata_json_size(const floe_table_metadata *m, size_t limit) {
    floe_metadata_json_init();
    size_count c = {0, limit};
    if (json_dump_callback(m->doc->root, count_bytes, &c, JSON_COMPACT) != 0 && c.n <= limit)
        return SIZE_MAX; /* jansson failed otherwise (out of memory): treated as too large */
    return c.n > limit ? (limit == SIZE_MAX ? SIZE_MAX : limit + 1) : c.n;
}

bool floe_table_metadata_wants_gzip(const floe_table_metadata *m) {
    const char *codec = floe_table_metadata_property(m, FLOE_PROP_METADATA_COMPRESSION);
    return codec && !strcasecmp(codec, "gzip");
}

int floe_table_metadata_write(floe_io *io, const floe_table_metadata *m, const char *uri,
                              bool gzip, bool no_overwrite, floe_error *err) {
    char *text = NULL;
    size_t len = 0;
    floe_buf z;
    floe_buf_init(&z, 0);
    int rc;
    FLOE_CHECK(floe_table_metadata_to_json(m, false, &text, &len, err));
    floe_output_options opts = {.fsync = true, .no_overwrite = no_overwrite};
    if (gzip) {
        FLOE_CHECK(gzip_bytes(text, len, &z, err));
        rc = floe_io_write_all(io, uri, z.data, z.len, &opts, err);
    } else {
        rc = floe_io_write_all(io, uri, text, len, &opts, err);
    }
done:
    floe_free(text);
    floe_buf_free(&z);
    return rc;
}

/* Whether floe can write a new version of m: format v3 tables can be written (row
 * lineage is assigned on every snapshot, see metadata_build.c) unless encrypted. */
static int check_writable(const floe_table_metadata *m, floe_error *err) {
    const json_t *root = m->doc->root;
    if (m->format_version > 3)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "table metadata is format-version %d; "
                              "floe knows versions 1 to 3", m->format_version);
    if (m->format_version == 3 && json_object_get(root, "encryption-keys"))
        return floe_error_set(err, FLOE_EUNSUPPORTED, "table metadata: format v3 "
                              "\"encryption-keys\" (an encrypted table); floe cannot keep "
                              "encryption state consistent and will not write it");
    for (size_t i = 0; i < m->n_snapshots; i++) {
        if (!m->snapshots[i].operation)
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "table metadata: snapshots[%zu] (id %" PRId64
                                  ") has no summary \"operation\", which format v2 requires; "
                                  "floe will not invent one",
                                  i, m->snapshots[i].snapshot_id);
        if (!m->snapshots[i].manifest_list)
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "table metadata: snapshots[%zu] (id %" PRId64
                                  ") lists \"manifests\" without a \"manifest-list\"; floe "
                                  "cannot upgrade such a v1 table to v2",
                                  i, m->snapshots[i].snapshot_id);
    }
    return 0;
}

int floe_table_metadata_check_writable(const floe_table_metadata *m, floe_error *err) {
    return check_writable(m, err);
}

/* ---------------------------------------------------------------------------------------
 * Lookups
 * ------------------------------------------------------------------------------------- */

const floe_snapshot *floe_table_metadata_snapshot(const floe_table_metadata *m, int64_t id) {
    const floe_table_metadata_doc *doc = m->doc;
    if (doc && doc->by_id && doc->base == m->snapshots && doc->n_by_id == m->n_snapshots) {
        size_t lo = 0, hi = doc->n_by_id;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (doc->by_id[mid].id < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < doc->n_by_id && doc->by_id[lo].id == id ? &m->snapshots[doc->by_id[lo].idx]
                                                            : NULL;
    }
    for (size_t i = 0; i < m->n_snapshots; i++)
        if (m->snapshots[i].snapshot_id == id)
            return &m->snapshots[i];
    return NULL;
}

const floe_snapshot *floe_table_metadata_current_snapshot(const floe_table_metadata *m) {
    return m->current_snapshot_id == -1 ? NULL
                                        : floe_table_metadata_snapshot(m, m->current_snapshot_id);
}

const floe_metadata_schema *floe_table_metadata_schema(const floe_table_metadata *m,
                                                       int32_t schema_id) {
    for (size_t i = 0; i < m->n_schemas; i++)
        if (m->schemas[i].schema_id == schema_id)
            return &m->schemas[i];
    return NULL;
}

const floe_metadata_schema *floe_table_metadata_current_schema(const floe_table_metadata *m) {
    return floe_table_metadata_schema(m, m->current_schema_id);
}

const floe_metadata_spec *floe_table_metadata_spec(const floe_table_metadata *m,
                                                   int32_t spec_id) {
    for (size_t i = 0; i < m->n_specs; i++)
        if (m->specs[i].spec_id == spec_id)
            return &m->specs[i];
    return NULL;
}

const floe_metadata_spec *floe_table_metadata_default_spec(const floe_table_metadata *m) {
    return floe_table_metadata_spec(m, m->default_spec_id);
}

/* The current schema first; then the others, newest (highest id) first: the newest
 * schema that still has every source column is the one the spec was last used with. */
int floe_table_metadata_bind_spec(const floe_table_metadata *m, int32_t spec_id,
                                  floe_schema **schema_out, floe_partition_spec **spec_out,
                                  floe_error *err) {
    const floe_metadata_spec *ms = floe_table_metadata_spec(m, spec_id);
    if (!ms)
        return floe_error_set(err, FLOE_ENOTFOUND, "the table has no partition spec %d",
                              (int)spec_id);
    const floe_metadata_schema *cur = floe_table_metadata_current_schema(m);
    int32_t below = INT32_MAX; /* schema ids already tried lie at or above it */
    floe_error first;
    floe_error_clear(&first);
    int first_rc = 0;
    for (size_t tries = 0; tries <= m->n_schemas; tries++) {
        const floe_metadata_schema *sc = NULL;
        if (tries == 0) {
            sc = cur;
        } else {
            for (size_t i = 0; i < m->n_schemas; i++)
                if (m->schemas[i].schema_id < below && (!cur || &m->schemas[i] != cur) &&
                    (!sc || m->schemas[i].schema_id > sc->schema_id))
                    sc = &m->schemas[i];
            if (!sc)
                break;
            below = sc->schema_id;
        }
        if (!sc)
            continue;
        floe_schema *schema = NULL;
        floe_partition_spec *spec = NULL;
        floe_error e;
        floe_error_clear(&e);
        int rc = floe_schema_parse(sc->json, strlen(sc->json), &schema, &e);
        if (rc == 0)
            rc = floe_partition_spec_parse_json(ms->json, strlen(ms->json), schema, &spec, &e);
        if (rc == 0) {
            *spec_out = spec;
            if (schema_out)
                *schema_out = schema;
            else /* the bound fields point into it: it lives as long as the spec */
                spec->bound_schema = schema;
            return 0;
        }
        floe_schema_free(schema);
        if (rc == FLOE_ENOMEM)
            return floe_error_set(err, rc, "out of memory");
        if (!first_rc) {
            first_rc = rc;
            first = e;
        }
    }
    if (!first_rc)
        return floe_error_set(err, FLOE_ECORRUPT, "table metadata: no schema");
    if (err)
        *err = first;
    floe_error_prefix(err, "partition spec %d binds to none of the table's schemas: ",
                      (int)spec_id);
    return first_rc;
}

const floe_snapshot_ref *floe_table_metadata_ref(const floe_table_metadata *m,
                                                 const char *name) {
    for (size_t i = 0; i < m->n_refs; i++)
        if (!strcmp(m->refs[i].name, name))
            return &m->refs[i];
    return NULL;
}

const char *floe_table_metadata_property(const floe_table_metadata *m, const char *key) {
    for (size_t i = 0; i < m->n_properties; i++)
        if (!strcmp(m->properties[i].key, key))
            return m->properties[i].value;
    return NULL;
}

int64_t floe_table_metadata_property_int(const floe_table_metadata *m, const char *key,
                                         int64_t dflt) {
    int64_t x;
    return floe_parse_i64_cstr(floe_table_metadata_property(m, key), &x) ? x : dflt;
}

bool floe_table_metadata_property_bool(const floe_table_metadata *m, const char *key,
                                       bool dflt) {
    const char *v = floe_table_metadata_property(m, key);
    if (!v)
        return dflt;
    if (!strcasecmp(v, "true"))
        return true;
    if (!strcasecmp(v, "false"))
        return false;
    return dflt;
}

int floe_table_metadata_foreach_statistics(const floe_table_metadata *m, floe_statistics_fn fn,
                                           void *ctx, floe_error *err) {
    static const char *const lists[2] = {"statistics", "partition-statistics"};
    for (int li = 0; li < 2; li++) {
        const json_t *arr = json_object_get(m->doc->root, lists[li]);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            const json_t *e = json_array_get(arr, i);
            const json_t *sid = json_object_get(e, "snapshot-id");
            const json_t *path = json_object_get(e, "statistics-path");
            if (!json_is_integer(sid) || !json_is_string(path))
                continue;
            int rc = fn(ctx, (int64_t)json_integer_value(sid), json_string_value(path), li == 1,
                        err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static void highest_id_walk(const json_t *t, int depth, int32_t *best) {
    if (!json_is_object(t) || depth > 64) /* nesting is hostile input: bounded */
        return;
    static const char *const id_keys[] = {"id", "element-id", "key-id", "value-id"};
    for (size_t k = 0; k < 4; k++) {
        json_t *v = json_object_get(t, id_keys[k]);
        if (json_is_integer(v) && json_integer_value(v) > *best &&
            json_integer_value(v) <= INT32_MAX)
            *best = (int32_t)json_integer_value(v);
    }
    json_t *fields = json_object_get(t, "fields");
    if (json_is_array(fields))
        for (size_t i = 0; i < json_array_size(fields); i++)
            highest_id_walk(json_array_get(fields, i), depth + 1, best);
    static const char *const child_keys[] = {"type", "element", "key", "value"};
    for (size_t k = 0; k < 4; k++)
        highest_id_walk(json_object_get(t, child_keys[k]), depth + 1, best);
}

int32_t floe_metadata_schema_highest_id(const json_t *schema) {
    int32_t best = -1;
    highest_id_walk(schema, 0, &best);
    return best;
}
