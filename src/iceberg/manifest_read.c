/*
 * manifest_read.c - reading Iceberg manifest lists and manifests written by anyone
 * (format v1, v2, v3; Java, Spark, PyIceberg, hand-edited files).
 *
 * Spec: format/spec.md "Manifests", "Manifest Lists", "Sequence Number Inheritance",
 * "First Row ID Inheritance", "Writer requirements" (the v2+ read behaviour table: fields
 * required in v2 but absent in v1 are read as optional), Appendix E ("Reading v1 metadata
 * for v2": content 0, sequence numbers 0).
 *
 * Records are decoded in the writer's own Avro schema and picked apart by Iceberg field
 * id, so names (v1 lists say added_data_files_count), field order, extra fields, nullable
 * unions around required fields, int-vs-long (PyIceberg writes equality_ids as longs) and
 * bytes-vs-fixed do not matter. Only files without any field ids need a decision: they
 * are refused unless the caller allows matching by name.
 *
 * Invariants:
 *   R1. An entry returned by next() borrows from the Avro reader's current block and from
 *       the reader's per-entry arena; both stay put until the next call.
 *   R2. Every required field is checked for presence and type before it is used; a
 *       missing one is FLOE_ECORRUPT naming the manifest, the entry and the field.
 *   R3. Metric maps that are null stay "not present" (unknown), never zero.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "avro/avro_internal.h"
#include "common/keyset.h"
#include "floe/io.h"
#include "manifest_fast.h"
#include "scan_internal.h"

/* ---------------------------------------------------------------------------------------
 * schema navigation
 * ------------------------------------------------------------------------------------- */

typedef struct fdesc {
    int32_t id;
    const char *name;
    const char *alt; /* another name writers used (v1 lists), or NULL */
} fdesc;

/* The non-null branch of ["null", T] (or of a one-branch union); else n itself. */
static const floe_avro_node *unwrap(const floe_avro_node *n) {
    if (n && n->type == FLOE_AVRO_UNION) {
        const floe_avro_node *only = NULL;
        for (size_t i = 0; i < n->n_branches; i++) {
            if (n->branches[i]->type == FLOE_AVRO_NULL)
                continue;
            if (only)
                return n;
            only = n->branches[i];
        }
        return only ? only : n;
    }
    return n;
}

static bool record_has_ids(const floe_avro_node *rec) {
    for (size_t i = 0; i < rec->n_fields; i++)
        if (rec->fields[i].has_field_id)
            return true;
    return false;
}

/* Writer index of each described field (-1 when absent). */
static void resolve(const floe_avro_node *rec, const fdesc *d, size_t n, bool by_name,
                    int *idx) {
    for (size_t i = 0; i < n; i++) {
        size_t k;
        idx[i] = -1;
        if (!by_name) {
            if (floe_avro_node_field_by_id(rec, d[i].id, &k))
                idx[i] = (int)k;
        } else if (floe_avro_node_field(rec, d[i].name, &k) ||
                   (d[i].alt && floe_avro_node_field(rec, d[i].alt, &k))) {
            idx[i] = (int)k;
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * value access
 * ------------------------------------------------------------------------------------- */

static const floe_avro_value *field_val(const floe_avro_value *rec, int idx) {
    if (idx < 0 || rec->type != FLOE_AVRO_RECORD || (size_t)idx >= rec->u.list.n)
        return NULL;
    return &rec->u.list.items[idx];
}

static bool is_null(const floe_avro_value *v) { return !v || v->type == FLOE_AVRO_NULL; }

static bool as_long(const floe_avro_value *v, int64_t *out) {
    if (v->type == FLOE_AVRO_LONG)
        *out = v->u.l;
    else if (v->type == FLOE_AVRO_INT)
        *out = v->u.i;
    else
        return false;
    return true;
}

static bool as_int(const floe_avro_value *v, int32_t *out) {
    int64_t l;
    if (!as_long(v, &l) || l < INT32_MIN || l > INT32_MAX)
        return false;
    *out = (int32_t)l;
    return true;
}

/* Error context for one record: "manifest X: entry 12: data_file.record_count: ". */
typedef struct rctx {
    const char *kind; /* "manifest" / "manifest list" */
    const char *name;
    int64_t record;
    floe_error *err;
} rctx;

static int bad(const rctx *c, const char *field, const char *what, const floe_avro_value *v) {
    return floe_error_set(c->err, FLOE_ECORRUPT, "%s %s: %s %" PRId64 ": %s: %s%s%s",
                          c->kind, c->name, strcmp(c->kind, "manifest") == 0 ? "entry" : "record",
                          c->record, field, what, v ? ", got " : "",
                          v ? floe_avro_type_name(v->type) : "");
}

/* Optional long: *has false when absent/null. */
static int opt_long(const rctx *c, const char *field, const floe_avro_value *v, bool *has,
                    int64_t *out) {
    *has = false;
    if (is_null(v))
        return 0;
    if (!as_long(v, out))
        return bad(c, field, "expected long", v);
    *has = true;
    return 0;
}

static int req_long(const rctx *c, const char *field, const floe_avro_value *v, int64_t *out) {
    if (is_null(v))
        return bad(c, field, "required field is missing or null", NULL);
    if (!as_long(v, out))
        return bad(c, field, "expected long", v);
    return 0;
}

static int opt_int(const rctx *c, const char *field, const floe_avro_value *v, bool *has,
                   int32_t *out) {
    *has = false;
    if (is_null(v))
        return 0;
    if (!as_int(v, out))
        return bad(c, field, "expected int", v);
    *has = true;
    return 0;
}

static int req_string(const rctx *c, const char *field, const floe_avro_value *v,
                      const char **out) {
    if (is_null(v))
        return bad(c, field, "required field is missing or null", NULL);
    if (v->type != FLOE_AVRO_STRING)
        return bad(c, field, "expected string", v);
    if (memchr(v->u.bytes.p, 0, v->u.bytes.n))
        return bad(c, field, "string holds a NUL byte", NULL);
    *out = (const char *)v->u.bytes.p; /* the Avro reader NUL-terminates strings */
    return 0;
}

static int opt_bytes(const rctx *c, const char *field, const floe_avro_value *v, bool *has,
                     const uint8_t **p, size_t *n) {
    *has = false;
    if (is_null(v))
        return 0;
    if (v->type != FLOE_AVRO_BYTES && v->type != FLOE_AVRO_FIXED && v->type != FLOE_AVRO_STRING)
        return bad(c, field, "expected bytes", v);
    *p = v->u.bytes.p ? v->u.bytes.p : (const uint8_t *)"";
    *n = v->u.bytes.n;
    *has = true;
    return 0;
}

/* A metric map: Iceberg writes int-keyed maps as arrays of {key, value} records; accept
 * Avro maps with decimal string keys too. bounds: values are bytes, else longs. */
static int read_map(const rctx *c, const char *field, const floe_avro_value *v, bool bounds,
                    floe_arena *a, floe_count_map *counts, floe_bound_map *bmap) {
    if (is_null(v))
        return 0; /* not present: unknown */
    size_t n;
    if (v->type == FLOE_AVRO_ARRAY)
        n = v->u.list.n;
    else if (v->type == FLOE_AVRO_MAP)
        n = v->u.map.n;
    else
        return bad(c, field, "expected a map (array of key/value records)", v);
    floe_column_count *ci = NULL;
    floe_column_bound *bi = NULL;
    if (n && !(bounds ? (void *)(bi = floe_arena_alloc(a, n * sizeof *bi))
                      : (void *)(ci = floe_arena_alloc(a, n * sizeof *ci))))
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int32_t key;
        const floe_avro_value *val;
        if (v->type == FLOE_AVRO_ARRAY) {
            const floe_avro_value *kv = &v->u.list.items[i];
            if (kv->type != FLOE_AVRO_RECORD || kv->u.list.n != 2)
                return bad(c, field, "map entry is not a {key, value} record", kv);
            if (!as_int(&kv->u.list.items[0], &key))
                return bad(c, field, "map key is not an int", &kv->u.list.items[0]);
            val = &kv->u.list.items[1];
        } else {
            const floe_avro_map_entry *me = &v->u.map.entries[i];
            char kb[16];
            char *end;
            if (me->key_len == 0 || me->key_len >= sizeof kb)
                return bad(c, field, "map key is not a field id", NULL);
            memcpy(kb, me->key, me->key_len);
            kb[me->key_len] = 0;
            long k = strtol(kb, &end, 10);
            if (*end || k < INT32_MIN || k > INT32_MAX)
                return bad(c, field, "map key is not a field id", NULL);
            key = (int32_t)k;
            val = &me->value;
        }
        if (bounds) {
            bool has;
            bi[i].field_id = key;
            FLOE_FORWARD_IF_ERROR(opt_bytes(c, field, val, &has, &bi[i].p, &bi[i].n));
            if (!has)
                return bad(c, field, "null bound value", NULL);
        } else {
            ci[i].field_id = key;
            if (is_null(val) || !as_long(val, &ci[i].value))
                return bad(c, field, "map value is not a long", val);
        }
    }
    if (bounds) {
        bmap->present = true;
        bmap->items = bi;
        bmap->n = n;
    } else {
        counts->present = true;
        counts->items = ci;
        counts->n = n;
    }
    return 0;
}

static int read_long_list(const rctx *c, const char *field, const floe_avro_value *v,
                          floe_arena *a, bool *has, const int64_t **out, size_t *n) {
    if (is_null(v))
        return 0; /* *has stays as it is: false, or set by the streaming decoder */
    if (v->type != FLOE_AVRO_ARRAY)
        return bad(c, field, "expected an array", v);
    int64_t *o = v->u.list.n ? floe_arena_alloc(a, v->u.list.n * sizeof *o) : NULL;
    if (v->u.list.n && !o)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < v->u.list.n; i++)
        if (!as_long(&v->u.list.items[i], &o[i]))
            return bad(c, field, "element is not a long", &v->u.list.items[i]);
    *has = true;
    *out = o;
    *n = v->u.list.n;
    return 0;
}

static int read_int_list(const rctx *c, const char *field, const floe_avro_value *v,
                         floe_arena *a, bool *has, const int32_t **out, size_t *n) {
    if (is_null(v))
        return 0; /* *has stays as it is: false, or set by the streaming decoder */
    if (v->type != FLOE_AVRO_ARRAY)
        return bad(c, field, "expected an array", v);
    int32_t *o = v->u.list.n ? floe_arena_alloc(a, v->u.list.n * sizeof *o) : NULL;
    if (v->u.list.n && !o)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    /* PyIceberg writes list<int> as array<long>: accept longs that fit */
    for (size_t i = 0; i < v->u.list.n; i++)
        if (!as_int(&v->u.list.items[i], &o[i]))
            return bad(c, field, "element is not an int", &v->u.list.items[i]);
    *has = true;
    *out = o;
    *n = v->u.list.n;
    return 0;
}

/* Header metadata value as an integer in [lo, hi]: *has = false when the key is absent;
 * FLOE_ECORRUPT naming the file and key when it is not a decimal integer in that range
 * (never truncated or wrapped). */
static int meta_int_in(floe_avro_reader *ar, const char *kind, const char *name,
                       const char *key, int64_t lo, int64_t hi, bool *has, int64_t *out,
                       floe_error *err) {
    *has = false;
    const char *s = floe_avro_reader_meta_str(ar, key);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return floe_error_set(err, FLOE_ECORRUPT, "%s %s: header %s \"%.40s\" is not an "
                              "integer in [%" PRId64 ", %" PRId64 "]", kind, name, key, s, lo,
                              hi);
    *has = true;
    *out = v;
    return 0;
}

static int no_ids(const char *kind, const char *name, floe_error *err) {
    return floe_error_set(err, FLOE_EUNSUPPORTED,
                          "%s %s: the Avro schema has no Iceberg field ids (the file was "
                          "re-encoded by a writer that dropped them); refusing to guess "
                          "fields by name (allow_missing_field_ids reads it by name)",
                          kind, name);
}

/* ---------------------------------------------------------------------------------------
 * manifest lists
 * ------------------------------------------------------------------------------------- */

/* floe_manifest_set_generic_decoder: lists and manifests on the generic path */
static _Atomic bool generic_decoder;

static const fdesc list_fields[L_N] = {
    {FLOE_ML_PATH, "manifest_path", NULL},
    {FLOE_ML_LENGTH, "manifest_length", NULL},
    {FLOE_ML_SPEC_ID, "partition_spec_id", NULL},
    {FLOE_ML_CONTENT, "content", NULL},
    {FLOE_ML_SEQUENCE_NUMBER, "sequence_number", NULL},
    {FLOE_ML_MIN_SEQUENCE_NUMBER, "min_sequence_number", NULL},
    {FLOE_ML_ADDED_SNAPSHOT_ID, "added_snapshot_id", NULL},
    {FLOE_ML_ADDED_FILES, "added_files_count", "added_data_files_count"},
    {FLOE_ML_EXISTING_FILES, "existing_files_count", "existing_data_files_count"},
    {FLOE_ML_DELETED_FILES, "deleted_files_count", "deleted_data_files_count"},
    {FLOE_ML_ADDED_ROWS, "added_rows_count", NULL},
    {FLOE_ML_EXISTING_ROWS, "existing_rows_count", NULL},
    {FLOE_ML_DELETED_ROWS, "deleted_rows_count", NULL},
    {FLOE_ML_PARTITIONS, "partitions", NULL},
    {FLOE_ML_KEY_METADATA, "key_metadata", NULL},
    {FLOE_ML_FIRST_ROW_ID, "first_row_id", NULL},
};
static const fdesc summary_fields[S_N] = {
    {FLOE_ML_CONTAINS_NULL, "contains_null", NULL},
    {FLOE_ML_CONTAINS_NAN, "contains_nan", NULL},
    {FLOE_ML_LOWER, "lower_bound", NULL},
    {FLOE_ML_UPPER, "upper_bound", NULL},
};

static int count_field(const rctx *c, const char *field, const floe_avro_value *v,
                       int64_t *out) {
    bool has;
    FLOE_FORWARD_IF_ERROR(opt_long(c, field, v, &has, out));
    if (!has)
        *out = -1;
    else if (*out < 0)
        return bad(c, field, "negative count", NULL);
    return 0;
}

/* One field_summary from its fields by slot (f[S_*], NULL when absent). */
static int read_summary(const rctx *c, const floe_avro_value *const *f, floe_arena *a,
                        floe_field_summary *s) {
    const floe_avro_value *cn = f[S_NULL];
    if (is_null(cn) || cn->type != FLOE_AVRO_BOOLEAN)
        return bad(c, "partitions.contains_null", "required boolean missing", cn);
    s->contains_null = cn->u.b;
    const floe_avro_value *nan = f[S_NAN];
    s->has_contains_nan = !is_null(nan);
    if (s->has_contains_nan) {
        if (nan->type != FLOE_AVRO_BOOLEAN)
            return bad(c, "partitions.contains_nan", "expected boolean", nan);
        s->contains_nan = nan->u.b;
    }
    const uint8_t *p;
    size_t n;
    bool has;
    FLOE_FORWARD_IF_ERROR(opt_bytes(c, "partitions.lower_bound", f[S_LO], &has, &p, &n));
    s->has_lower = has;
    if (has) {
        if (!(s->lower_bound = floe_arena_memdup(a, p, n ? n : 1)))
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        s->lower_len = n;
    }
    FLOE_FORWARD_IF_ERROR(opt_bytes(c, "partitions.upper_bound", f[S_HI], &has, &p, &n));
    s->has_upper = has;
    if (has) {
        if (!(s->upper_bound = floe_arena_memdup(a, p, n ? n : 1)))
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        s->upper_len = n;
    }
    return 0;
}

/* The partitions field: v from the record (array, null or absent), its summaries either
 * in the value tree (sums NULL) or decoded by the streaming path (sums[0..nsums)). */
static int read_summaries(const rctx *c, const floe_avro_value *v, const int *sidx,
                          const floe_ml_summary *sums, size_t nsums, floe_arena *a,
                          floe_manifest_file *m) {
    if (is_null(v))
        return 0;
    if (v->type != FLOE_AVRO_ARRAY)
        return bad(c, "partitions", "expected an array", v);
    size_t n = sums ? nsums : v->u.list.n;
    floe_field_summary *s = n ? floe_arena_alloc(a, n * sizeof *s) : NULL;
    if (n && !s)
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const floe_avro_value *f[S_N];
        if (sums) {
            memcpy(f, sums[i].slot, sizeof f);
        } else {
            const floe_avro_value *r = &v->u.list.items[i];
            if (r->type != FLOE_AVRO_RECORD)
                return bad(c, "partitions", "field summary is not a record", r);
            for (int k = 0; k < S_N; k++)
                f[k] = field_val(r, sidx[k]);
        }
        FLOE_FORWARD_IF_ERROR(read_summary(c, f, a, &s[i]));
    }
    m->has_partitions = true;
    m->partitions = s;
    m->npartitions = n;
    return 0;
}

/* One manifest_file from its fields by slot (f[L_*], NULL when absent). path_in_arena:
 * the path string already lives in arena (the streaming path decodes into it). */
static int list_record(const rctx *c, const floe_avro_value *const *f, const int *sidx,
                       const floe_ml_summary *sums, size_t nsums, bool path_in_arena,
                       const floe_manifest_list_read_options *o, const floe_manifest_list *res,
                       floe_arena *arena, floe_manifest_file *out) {
    floe_manifest_file m = {0};
    const char *path;
    bool has;
    int32_t i32;
    int64_t l;
    FLOE_FORWARD_IF_ERROR(req_string(c, "manifest_path", f[L_PATH], &path));
    FLOE_FORWARD_IF_ERROR(req_long(c, "manifest_length", f[L_LEN], &m.manifest_length));
    const floe_avro_value *sv = f[L_SPEC];
    if (is_null(sv) || !as_int(sv, &m.partition_spec_id))
        return floe_error_set(c->err, FLOE_ECORRUPT, "manifest list %s: record %" PRId64 ": "
                              "partition_spec_id missing or not an int", c->name, c->record);
    FLOE_FORWARD_IF_ERROR(opt_int(c, "content", f[L_CONTENT], &has, &i32));
    if (has && i32 != 0 && i32 != 1)
        return floe_error_set(c->err, FLOE_ECORRUPT, "manifest list %s: record %" PRId64
                              ": content %d", c->name, c->record, (int)i32);
    m.content = has ? (floe_manifest_content)i32 : FLOE_MANIFEST_DATA;
    /* Appendix E: v1 lists have no sequence numbers: 0 */
    FLOE_FORWARD_IF_ERROR(opt_long(c, "sequence_number", f[L_SEQ], &has, &l));
    m.sequence_number = has ? l : 0;
    FLOE_FORWARD_IF_ERROR(opt_long(c, "min_sequence_number", f[L_MINSEQ], &has, &l));
    m.min_sequence_number = has ? l : 0;
    FLOE_FORWARD_IF_ERROR(opt_long(c, "added_snapshot_id", f[L_SNAP], &m.has_added_snapshot_id,
                                   &m.added_snapshot_id));
    if (!m.has_added_snapshot_id) {
        /* snapshot id inheritance: the snapshot that owns this list */
        if (o && o->has_snapshot_id) {
            m.has_added_snapshot_id = true;
            m.added_snapshot_id = o->snapshot_id;
        } else if (res->has_snapshot_id) {
            m.has_added_snapshot_id = true;
            m.added_snapshot_id = res->snapshot_id;
        }
    }
    FLOE_FORWARD_IF_ERROR(count_field(c, "added_files_count", f[L_AF], &m.added_files_count));
    FLOE_FORWARD_IF_ERROR(count_field(c, "existing_files_count", f[L_EF],
                                      &m.existing_files_count));
    FLOE_FORWARD_IF_ERROR(count_field(c, "deleted_files_count", f[L_DF],
                                      &m.deleted_files_count));
    FLOE_FORWARD_IF_ERROR(count_field(c, "added_rows_count", f[L_AR], &m.added_rows_count));
    FLOE_FORWARD_IF_ERROR(count_field(c, "existing_rows_count", f[L_ER],
                                      &m.existing_rows_count));
    FLOE_FORWARD_IF_ERROR(count_field(c, "deleted_rows_count", f[L_DR],
                                      &m.deleted_rows_count));
    FLOE_FORWARD_IF_ERROR(read_summaries(c, f[L_PARTS], sidx, sums, nsums, arena, &m));
    const uint8_t *kp;
    size_t kn;
    FLOE_FORWARD_IF_ERROR(opt_bytes(c, "key_metadata", f[L_KEY], &m.has_key_metadata, &kp,
                                    &kn));
    if (m.has_key_metadata) {
        if (!(m.key_metadata = floe_arena_memdup(arena, kp, kn ? kn : 1)))
            return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
        m.key_metadata_len = kn;
    }
    FLOE_FORWARD_IF_ERROR(opt_long(c, "first_row_id", f[L_FRID], &m.has_first_row_id,
                                   &m.first_row_id));
    if (!(m.manifest_path = path_in_arena ? path : floe_arena_strdup(arena, path)))
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    *out = m;
    return 0;
}

/* A manifest listed twice would have its files read twice (and read again for every
 * repetition: a small list could make a reader do unbounded work). The set holds the
 * paths' 64-bit hashes; equal hashes are told apart by the paths themselves. */
static int check_unique_manifests(const floe_manifest_list *res, const char *name,
                                  floe_error *err) {
    floe_hashset seen = {0};
    int rc = floe_hashset_reserve(&seen, res->nfiles);
    for (size_t i = 0; rc == 0 && i < res->nfiles; i++) {
        const char *path = res->files[i].manifest_path;
        uint64_t h = floe_hash64(path, strlen(path));
        size_t pos = 0;
        for (const int64_t *j; (j = floe_hashset_next(&seen, h, &pos));)
            if (!strcmp(res->files[*j].manifest_path, path)) {
                rc = floe_error_set(err, FLOE_ECORRUPT, "manifest list %s: records %" PRId64
                                    " and %zu both list manifest %s", name, *j, i, path);
                goto done;
            }
        if ((rc = floe_hashset_add(&seen, h, (int64_t)i)) < 0)
            break;
    }
    if (rc < 0)
        rc = floe_error_set(err, rc, "manifest list %s: %s", name, floe_strerror(rc));
done:
    floe_hashset_free(&seen);
    return rc;
}

/* A record decoded into scratch memory, copied into arena (options.keep kept it). */
static int copy_record(floe_arena *a, const floe_manifest_file *src, floe_manifest_file *dst,
                       floe_error *err) {
    floe_manifest_file m = *src;
    if (!(m.manifest_path = floe_arena_strdup(a, src->manifest_path)))
        goto oom;
    if (src->npartitions) {
        floe_field_summary *s = floe_arena_memdup(a, src->partitions,
                                                  src->npartitions * sizeof *s);
        if (!s)
            goto oom;
        for (size_t i = 0; i < src->npartitions; i++) {
            const floe_field_summary *f = &src->partitions[i];
            if (f->has_lower &&
                !(s[i].lower_bound = floe_arena_memdup(a, f->lower_bound,
                                                       f->lower_len ? f->lower_len : 1)))
                goto oom;
            if (f->has_upper &&
                !(s[i].upper_bound = floe_arena_memdup(a, f->upper_bound,
                                                       f->upper_len ? f->upper_len : 1)))
                goto oom;
        }
        m.partitions = s;
    }
    if (src->has_key_metadata &&
        !(m.key_metadata = floe_arena_memdup(a, src->key_metadata,
                                             src->key_metadata_len ? src->key_metadata_len
                                                                   : 1)))
        goto oom;
    *dst = m;
    return 0;
oom:
    return floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

/* With options.keep: *clash is set (and *out written) when two records' paths hash alike:
 * whether they are one manifest is told by reading the whole list again (read_list_checked). */
static int read_list(floe_avro_reader *ar, const char *name,
                     const floe_manifest_list_read_options *o, bool generic,
                     floe_arena *arena, floe_manifest_list *out, bool *clash,
                     floe_error *err) {
    int rc = 0;
    floe_manifest_list res = {0};
    /* options.keep: records are decoded into scratch, a kept one copied into arena; the
     * paths' hashes of all of them tell duplicates apart */
    const bool keep = o && o->keep;
    floe_arena scratch;
    floe_arena_init(&scratch, 16384);
    floe_arena *ra = keep ? &scratch : arena;
    floe_hashset hashes = {0}; /* the paths' hashes, options.keep only */
    *clash = false;
    floe_manifest_file *files = NULL; /* grown by realloc (large ones remap, not copy),
                                       * then the arena's, not copied */
    size_t cap = 0;
    floe_ml_program *fast = NULL;
    floe_ml_slots slots = {0};
    const floe_avro_node *root = floe_avro_reader_schema(ar);
    if (!root || root->type != FLOE_AVRO_RECORD)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest list %s: the Avro schema is not "
                              "a record", name);
    bool by_name = !record_has_ids(root);
    if (by_name) {
        if (!o || !o->allow_missing_field_ids)
            return no_ids("manifest list", name, err);
        floe_log(FLOE_LOG_WARN, "manifest list %s: no Iceberg field ids; matching fields by "
                 "name", name);
    }
    int idx[L_N], sidx[S_N] = {-1, -1, -1, -1};
    resolve(root, list_fields, L_N, by_name, idx);
    static const int required[] = {L_PATH, L_LEN, L_SPEC};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (idx[required[i]] < 0)
            return floe_error_set(err, FLOE_ECORRUPT, "manifest list %s: the schema has no "
                                  "%s (field id %d)", name, list_fields[required[i]].name,
                                  (int)list_fields[required[i]].id);
    if (idx[L_PARTS] >= 0) {
        const floe_avro_node *arr = unwrap(root->fields[idx[L_PARTS]].type);
        const floe_avro_node *rec = arr && arr->type == FLOE_AVRO_ARRAY ? unwrap(arr->items)
                                                                        : NULL;
        if (!rec || rec->type != FLOE_AVRO_RECORD)
            return floe_error_set(err, FLOE_ECORRUPT, "manifest list %s: partitions is not "
                                  "an array of field_summary records", name);
        resolve(rec, summary_fields, S_N, by_name || !record_has_ids(rec), sidx);
    }

    bool has_fv;
    int64_t fv;
    FLOE_FORWARD_IF_ERROR(meta_int_in(ar, "manifest list", name, "format-version", 1, 3,
                                      &has_fv, &fv, err));
    res.format_version = has_fv ? (int)fv : (idx[L_SEQ] >= 0 ? 2 : 1);
    FLOE_FORWARD_IF_ERROR(meta_int_in(ar, "manifest list", name, "snapshot-id", INT64_MIN,
                                      INT64_MAX, &res.has_snapshot_id, &res.snapshot_id, err));
    FLOE_FORWARD_IF_ERROR(meta_int_in(ar, "manifest list", name, "sequence-number", INT64_MIN,
                                      INT64_MAX, &res.has_sequence_number,
                                      &res.sequence_number, err));
    res.by_name = by_name;
    if (!generic && !atomic_load(&generic_decoder) &&
        (rc = floe_ml_program_compile(root, idx, sidx, &fast, err)) < 0)
        return rc;

    for (;;) {
        const floe_avro_value *f[L_N];
        bool fast_record = fast != NULL;
        if (fast) {
            floe_avro_cursor cur;
            rc = floe_avro_reader_raw_next(ar, &cur, err);
            if (rc == 1) {
                int drc = floe_ml_program_decode(fast, &cur, ra, &slots, err);
                if (drc == 0)
                    drc = floe_avro_reader_raw_done(ar, &cur, err);
                if (drc < 0) {
                    floe_avro_reader_raw_error(ar, err);
                    rc = drc;
                }
            }
            if (rc == 1)
                memcpy(f, slots.slot, sizeof f);
        } else {
            const floe_avro_value *v;
            rc = floe_avro_reader_next(ar, &v, err);
            if (rc == 1)
                for (int k = 0; k < L_N; k++)
                    f[k] = field_val(v, idx[k]);
        }
        if (rc < 0)
            goto done;
        if (rc == 0)
            break;
        rctx c = {"manifest list", name, floe_avro_reader_records(ar) - 1, err};
        floe_manifest_file rec;
        FLOE_CHECK(list_record(&c, f, sidx, fast_record ? slots.sums : NULL, slots.nsums,
                               fast_record, o, &res, ra, &rec));
        res.nlisted++;
        if (keep) {
            uint64_t h = floe_hash64(rec.manifest_path, strlen(rec.manifest_path));
            size_t pos = 0;
            if (floe_hashset_next(&hashes, h, &pos))
                *clash = true;
            else if (floe_hashset_add(&hashes, h, 0) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            if (!o->keep(o->keep_ctx, &rec))
                goto next;
        }
        if (res.nfiles == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            floe_manifest_file *nf = floe_arena_vec_grow(files, ncap * sizeof *nf);
            if (!nf)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            files = nf;
            cap = ncap;
        }
        if (keep)
            FLOE_CHECK(copy_record(arena, &rec, &files[res.nfiles], err));
        else
            files[res.nfiles] = rec;
        res.nfiles++;
    next:
        if (scratch.total > 65536) /* its blocks go back to malloc, to be taken again */
            floe_arena_reset(&scratch);
    }
    if (res.nfiles) {
        if (!(res.files = floe_arena_vec_keep(arena, files, res.nfiles * sizeof *files)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        files = NULL;
    }
    if (!keep)
        FLOE_CHECK(check_unique_manifests(&res, name, err));
    rc = 0;
    *out = res;
done:
    floe_arena_reset(&scratch);
    floe_hashset_free(&hashes);
    floe_arena_vec_free(files);
    floe_free(slots.sums);
    floe_ml_program_free(fast);
    return rc;
}

static int list_read_mem_once(const void *p, size_t n, const char *name,
                              const floe_manifest_list_read_options *o, bool generic,
                              floe_arena *arena, floe_manifest_list *out, bool *clash,
                              floe_error *err) {
    floe_avro_reader *ar = NULL;
    floe_avro_reader_options ao = {.name = name};
    int rc = floe_avro_reader_open_mem(p, n, &ao, &ar, err);
    if (rc < 0) {
        floe_error_prefix(err, "manifest list %s: ", name ? name : "(memory)");
        return rc;
    }
    rc = read_list(ar, name ? name : "(memory)", o, generic, arena, out, clash, err);
    if (rc == 0)
        out->file_length = (int64_t)n;
    floe_avro_reader_close(ar);
    return rc;
}

static int list_read_io_once(floe_io *io, const char *uri,
                             const floe_manifest_list_read_options *o, floe_arena *arena,
                             floe_manifest_list *out, bool *clash, floe_error *err) {
    floe_input *in = NULL;
    floe_avro_reader *ar = NULL;
    int rc = floe_input_open_sequential(io, uri, &in, err);
    if (rc < 0)
        return rc;
    floe_avro_reader_options ao = {.name = uri};
    rc = floe_avro_reader_open_input(in, &ao, &ar, err);
    if (rc < 0)
        floe_error_prefix(err, "manifest list %s: ", uri);
    else
        rc = read_list(ar, uri, o, false, arena, out, clash, err);
    if (rc == 0)
        out->file_length = floe_input_size(in);
    floe_avro_reader_close(ar);
    floe_input_close(in);
    return rc;
}

/* One list read (from p[0..n) when mem). With options.keep, when two records'
 * paths hash alike, the whole list is read again without it: check_unique_manifests then
 * tells one manifest listed twice (the same error as without keep) from two paths that
 * only hash alike (the kept records stand). */
static int list_read(floe_io *io, const char *uri, bool mem, const void *p, size_t n,
                     const floe_manifest_list_read_options *o, bool generic,
                     floe_arena *arena, floe_manifest_list *out, floe_error *err) {
    floe_manifest_list res;
    bool clash = false;
    int rc = !mem ? list_read_io_once(io, uri, o, arena, &res, &clash, err)
                  : list_read_mem_once(p, n, uri, o, generic, arena, &res, &clash, err);
    if (rc == 0 && clash) {
        floe_manifest_list_read_options all = *o;
        all.keep = NULL;
        floe_arena a;
        floe_arena_init(&a, 65536);
        floe_manifest_list whole;
        rc = !mem ? list_read_io_once(io, uri, &all, &a, &whole, &clash, err)
                  : list_read_mem_once(p, n, uri, &all, generic, &a, &whole, &clash, err);
        floe_arena_reset(&a);
    }
    if (rc == 0)
        *out = res;
    return rc;
}

static int list_read_mem(const void *p, size_t n, const char *name,
                         const floe_manifest_list_read_options *o, bool generic,
                         floe_arena *arena, floe_manifest_list *out, floe_error *err) {
    return list_read(NULL, name, true, p, n, o, generic, arena, out, err);
}

int floe_manifest_list_read_mem(const void *p, size_t n, const char *name,
                                const floe_manifest_list_read_options *o, floe_arena *arena,
                                floe_manifest_list *out, floe_error *err) {
    return list_read_mem(p, n, name, o, false, arena, out, err);
}

static bool same_opt_bytes(bool ha, const uint8_t *a, size_t an, bool hb, const uint8_t *b,
                           size_t bn) {
    return ha == hb && (!ha || (an == bn && (an == 0 || memcmp(a, b, an) == 0)));
}

/* The first field where two manifest_file records differ, or NULL. */
static const char *manifest_file_diff(const floe_manifest_file *a, const floe_manifest_file *b) {
    if (strcmp(a->manifest_path, b->manifest_path))
        return "manifest_path";
    if (a->manifest_length != b->manifest_length || a->partition_spec_id != b->partition_spec_id ||
        a->content != b->content)
        return "manifest_length, partition_spec_id or content";
    if (a->sequence_number != b->sequence_number ||
        a->min_sequence_number != b->min_sequence_number)
        return "sequence numbers";
    if (a->has_added_snapshot_id != b->has_added_snapshot_id ||
        a->added_snapshot_id != b->added_snapshot_id)
        return "added_snapshot_id";
    if (a->added_files_count != b->added_files_count ||
        a->existing_files_count != b->existing_files_count ||
        a->deleted_files_count != b->deleted_files_count ||
        a->added_rows_count != b->added_rows_count ||
        a->existing_rows_count != b->existing_rows_count ||
        a->deleted_rows_count != b->deleted_rows_count)
        return "counts";
    if (a->has_partitions != b->has_partitions || a->npartitions != b->npartitions)
        return "partitions";
    for (size_t i = 0; i < a->npartitions; i++) {
        const floe_field_summary *x = &a->partitions[i], *y = &b->partitions[i];
        if (x->contains_null != y->contains_null || x->has_contains_nan != y->has_contains_nan ||
            x->contains_nan != y->contains_nan ||
            !same_opt_bytes(x->has_lower, x->lower_bound, x->lower_len, y->has_lower,
                            y->lower_bound, y->lower_len) ||
            !same_opt_bytes(x->has_upper, x->upper_bound, x->upper_len, y->has_upper,
                            y->upper_bound, y->upper_len))
            return "partitions (a field summary)";
    }
    if (!same_opt_bytes(a->has_key_metadata, a->key_metadata, a->key_metadata_len,
                        b->has_key_metadata, b->key_metadata, b->key_metadata_len))
        return "key_metadata";
    if (a->has_first_row_id != b->has_first_row_id || a->first_row_id != b->first_row_id)
        return "first_row_id";
    return NULL;
}

int floe_ml_differential(const void *p, size_t n, floe_ml_diff *out) {
    floe_arena ag, af;
    floe_arena_init(&ag, 4096);
    floe_arena_init(&af, 4096);
    floe_error eg, ef;
    floe_error_clear(&eg);
    floe_error_clear(&ef);
    memset(out, 0, sizeof *out);
    floe_manifest_list lg = {0}, lf = {0};
    floe_manifest_list_read_options o = {.allow_missing_field_ids = true};
    out->generic_rc = list_read_mem(p, n, "differential", &o, true, &ag, &lg, &eg);
    out->fast_rc = list_read_mem(p, n, "differential", &o, false, &af, &lf, &ef);
    /* whether the streaming path ran: its program compiles for the writer's schema */
    floe_avro_reader *ar = NULL;
    floe_error ignored;
    floe_error_clear(&ignored);
    if (floe_avro_reader_open_mem(p, n, NULL, &ar, &ignored) == 0) {
        const floe_avro_node *root = floe_avro_reader_schema(ar);
        if (root && root->type == FLOE_AVRO_RECORD) {
            int idx[L_N], sidx[S_N] = {-1, -1, -1, -1};
            bool by_name = !record_has_ids(root);
            resolve(root, list_fields, L_N, by_name, idx);
            const floe_avro_node *arr =
                idx[L_PARTS] >= 0 ? unwrap(root->fields[idx[L_PARTS]].type) : NULL;
            const floe_avro_node *rec =
                arr && arr->type == FLOE_AVRO_ARRAY ? unwrap(arr->items) : NULL;
            if (rec && rec->type == FLOE_AVRO_RECORD)
                resolve(rec, summary_fields, S_N, by_name || !record_has_ids(rec), sidx);
            floe_ml_program *prog = NULL;
            out->fast = floe_ml_program_compile(root, idx, sidx, &prog, &ignored) == 0;
            floe_ml_program_free(prog);
        }
        floe_avro_reader_close(ar);
    }
    if (out->generic_rc == 0 && out->fast_rc < 0) {
        out->mismatch = true;
        snprintf(out->why, sizeof out->why, "only the generic path reads it: %.400s", ef.msg);
    } else if (out->generic_rc == 0) {
        if (lg.nfiles != lf.nfiles || lg.format_version != lf.format_version ||
            lg.has_snapshot_id != lf.has_snapshot_id || lg.snapshot_id != lf.snapshot_id ||
            lg.has_sequence_number != lf.has_sequence_number ||
            lg.sequence_number != lf.sequence_number || lg.by_name != lf.by_name) {
            out->mismatch = true;
            snprintf(out->why, sizeof out->why, "the lists differ (%zu and %zu manifests, or "
                     "the header)", lg.nfiles, lf.nfiles);
        }
        for (size_t i = 0; !out->mismatch && i < lg.nfiles; i++, out->files++) {
            const char *why = manifest_file_diff(&lg.files[i], &lf.files[i]);
            if (why) {
                out->mismatch = true;
                snprintf(out->why, sizeof out->why, "record %zu: %s", i, why);
            }
        }
    }
    floe_arena_reset(&ag);
    floe_arena_reset(&af);
    return 0;
}

int floe_manifest_list_read(floe_io *io, const char *uri, const floe_manifest_list_read_options *o,
                            floe_arena *arena, floe_manifest_list *out, floe_error *err) {
    return list_read(io, uri, false, NULL, 0, o, false, arena, out, err);
}

/* ---------------------------------------------------------------------------------------
 * manifests
 * ------------------------------------------------------------------------------------- */

static const fdesc entry_fields[E_N] = {
    {FLOE_MF_STATUS, "status", NULL},
    {FLOE_MF_SNAPSHOT_ID, "snapshot_id", NULL},
    {FLOE_MF_SEQUENCE_NUMBER, "sequence_number", NULL},
    {FLOE_MF_FILE_SEQUENCE_NUMBER, "file_sequence_number", NULL},
    {FLOE_MF_DATA_FILE, "data_file", NULL},
};
static const fdesc df_fields[D_N] = {
    {FLOE_DF_CONTENT, "content", NULL},
    {FLOE_DF_FILE_PATH, "file_path", NULL},
    {FLOE_DF_FILE_FORMAT, "file_format", NULL},
    {FLOE_DF_PARTITION, "partition", NULL},
    {FLOE_DF_RECORD_COUNT, "record_count", NULL},
    {FLOE_DF_FILE_SIZE, "file_size_in_bytes", NULL},
    {FLOE_DF_COLUMN_SIZES, "column_sizes", NULL},
    {FLOE_DF_VALUE_COUNTS, "value_counts", NULL},
    {FLOE_DF_NULL_VALUE_COUNTS, "null_value_counts", NULL},
    {FLOE_DF_NAN_VALUE_COUNTS, "nan_value_counts", NULL},
    {FLOE_DF_LOWER_BOUNDS, "lower_bounds", NULL},
    {FLOE_DF_UPPER_BOUNDS, "upper_bounds", NULL},
    {FLOE_DF_KEY_METADATA, "key_metadata", NULL},
    {FLOE_DF_SPLIT_OFFSETS, "split_offsets", NULL},
    {FLOE_DF_EQUALITY_IDS, "equality_ids", NULL},
    {FLOE_DF_SORT_ORDER_ID, "sort_order_id", NULL},
    {FLOE_DF_FIRST_ROW_ID, "first_row_id", NULL},
    {FLOE_DF_REFERENCED_DATA_FILE, "referenced_data_file", NULL},
    {FLOE_DF_CONTENT_OFFSET, "content_offset", NULL},
    {FLOE_DF_CONTENT_SIZE, "content_size_in_bytes", NULL},
};

struct floe_manifest_reader {
    char *name;
    floe_input *in;
    floe_avro_reader *ar;
    floe_manifest_info info;
    floe_schema *hdr_schema;       /* parsed header schema (owned) */
    floe_partition_spec *own_spec; /* parsed header spec (owned) */
    const floe_partition_spec *spec;
    size_t npart;
    const floe_field *ptypes;      /* npart partition field types */
    floe_field *derived;           /* types derived from the Avro schema (owned) */
    int *pidx;                     /* writer index in the partition record per field */
    bool part_record;              /* data_file.partition is present and a record */
    int eidx[E_N];
    int didx[D_N];
    /* inheritance from the manifest list entry */
    bool has_manifest;
    int64_t m_seq;
    bool m_has_snapshot;
    int64_t m_snapshot;
    bool assign_row_ids;
    int64_t next_row_id;
    bool allow_dv;
    int64_t entries;
    floe_arena ea;                 /* per-entry allocations (fast path: per block) */
    floe_value *pvals;
    floe_manifest_entry cur;
    floe_mf_program *fast;         /* streaming decoder; NULL = the generic path */
    int64_t fast_block;            /* Avro block the arena's contents belong to */
    floe_mf_slots slots;
};

bool floe_mf_reader_is_fast(const floe_manifest_reader *r) { return r->fast != NULL; }

void floe_mf_reader_force_generic(floe_manifest_reader *r) {
    floe_mf_program_free(r->fast);
    r->fast = NULL;
}

void floe_manifest_reader_close(floe_manifest_reader *r) {
    if (!r)
        return;
    floe_avro_reader_close(r->ar);
    floe_input_close(r->in);
    floe_partition_spec_free(r->own_spec);
    floe_schema_free(r->hdr_schema);
    floe_free(r->derived);
    floe_free(r->pidx);
    floe_free(r->pvals);
    floe_mf_program_free(r->fast);
    floe_arena_reset(&r->ea);
    floe_buf_free(&r->slots.items);
    floe_free(r->name);
    floe_free(r);
}

const floe_manifest_info *floe_manifest_reader_info(const floe_manifest_reader *r) {
    return &r->info;
}
const floe_partition_spec *floe_manifest_reader_spec(const floe_manifest_reader *r) {
    return r->spec;
}
int64_t floe_manifest_reader_entries(const floe_manifest_reader *r) { return r->entries; }

/* Iceberg type of a partition field from its Avro type (when no spec is at hand). */
static int derive_type(const floe_avro_node *n, floe_field *f) {
    n = unwrap(n);
    const char *lt = n->logical_type ? n->logical_type : "";
    switch (n->type) {
    case FLOE_AVRO_BOOLEAN: f->type = FLOE_TYPE_BOOLEAN; break;
    case FLOE_AVRO_INT: f->type = strcmp(lt, "date") == 0 ? FLOE_TYPE_DATE : FLOE_TYPE_INT; break;
    case FLOE_AVRO_LONG: {
        bool utc = n->props_json && strstr(n->props_json, "\"adjust-to-utc\":true");
        if (strcmp(lt, "time-micros") == 0)
            f->type = FLOE_TYPE_TIME;
        else if (strcmp(lt, "timestamp-micros") == 0)
            f->type = utc ? FLOE_TYPE_TIMESTAMPTZ : FLOE_TYPE_TIMESTAMP;
        else if (strcmp(lt, "timestamp-nanos") == 0)
            f->type = utc ? FLOE_TYPE_TIMESTAMPTZ_NS : FLOE_TYPE_TIMESTAMP_NS;
        else
            f->type = FLOE_TYPE_LONG;
        break;
    }
    case FLOE_AVRO_FLOAT: f->type = FLOE_TYPE_FLOAT; break;
    case FLOE_AVRO_DOUBLE: f->type = FLOE_TYPE_DOUBLE; break;
    case FLOE_AVRO_STRING: f->type = FLOE_TYPE_STRING; break;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED:
        if (strcmp(lt, "decimal") == 0) {
            f->type = FLOE_TYPE_DECIMAL;
            f->precision = n->precision;
            f->scale = n->scale;
        } else if (strcmp(lt, "uuid") == 0) {
            f->type = FLOE_TYPE_UUID;
        } else if (n->type == FLOE_AVRO_FIXED) {
            f->type = FLOE_TYPE_FIXED;
            f->length = n->size;
        } else {
            f->type = FLOE_TYPE_BINARY;
        }
        break;
    default:
        return -1;
    }
    return 0;
}

/* Decide the partition types and where each partition field is in the writer's record. */
static int plan_partition(floe_manifest_reader *r, const floe_avro_node *prec, bool by_name,
                          const floe_manifest_read_options *o, floe_error *err) {
    const char *name = r->name;
    if (o && o->spec) {
        if (!o->spec->bound)
            return floe_error_set(err, FLOE_EINVALID, "manifest %s: the partition spec given "
                                  "is not bound to a schema", name);
        r->spec = o->spec;
    } else if (r->info.partition_spec_json && r->info.schema_json) {
        floe_error e2;
        floe_error_clear(&e2);
        if (floe_schema_parse(r->info.schema_json, strlen(r->info.schema_json), &r->hdr_schema,
                              &e2) == 0 &&
            floe_partition_spec_parse_json(r->info.partition_spec_json,
                                           strlen(r->info.partition_spec_json), r->hdr_schema,
                                           &r->own_spec, &e2) == 0) {
            r->own_spec->spec_id = r->info.has_spec_id ? r->info.spec_id : 0;
            r->spec = r->own_spec;
        } else {
            floe_log(FLOE_LOG_WARN, "manifest %s: header partition-spec unusable (%s); taking "
                     "partition types from the Avro schema", name, e2.msg);
        }
    }
    size_t nwriter = prec ? prec->n_fields : 0;
    if (r->spec) {
        r->npart = r->spec->nfields;
        r->ptypes = r->spec->partition_type.children;
    } else {
        r->npart = nwriter;
        if (nwriter) {
            r->derived = floe_calloc(nwriter, sizeof *r->derived);
            if (!r->derived)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            for (size_t i = 0; i < nwriter; i++) {
                r->derived[i].name = prec->fields[i].name;
                r->derived[i].id = prec->fields[i].has_field_id ? prec->fields[i].field_id : -1;
                if (derive_type(prec->fields[i].type, &r->derived[i]) < 0)
                    return floe_error_set(err, FLOE_EUNSUPPORTED, "manifest %s: partition "
                                          "field %s has Avro type %s, which no Iceberg "
                                          "partition type maps to", name,
                                          prec->fields[i].name,
                                          floe_avro_type_name(unwrap(prec->fields[i].type)->type));
            }
        }
        r->ptypes = r->derived;
    }
    if (r->npart) {
        r->pidx = floe_calloc(r->npart, sizeof *r->pidx);
        r->pvals = floe_calloc(r->npart, sizeof *r->pvals);
        if (!r->pidx || !r->pvals)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    bool ids = prec && !by_name && record_has_ids(prec);
    for (size_t i = 0; i < r->npart; i++) {
        size_t k;
        r->pidx[i] = -1;
        if (!r->spec) {
            r->pidx[i] = (int)i;
            continue;
        }
        const floe_partition_field *pf = &r->spec->fields[i];
        if (ids ? floe_avro_node_field_by_id(prec, pf->field_id, &k) != NULL
                : (prec && floe_avro_node_field(prec, pf->name, &k) != NULL))
            r->pidx[i] = (int)k;
        else if (nwriter)
            /* a spec field the manifest does not have: read as null, but say so */
            floe_log(FLOE_LOG_WARN, "manifest %s: partition field %s (id %d) is not in the "
                     "manifest's partition struct; reading it as null", name, pf->name,
                     (int)pf->field_id);
    }
    return 0;
}

void floe_manifest_set_generic_decoder(bool on) { atomic_store(&generic_decoder, on); }

static _Atomic uint64_t default_max_bytes;

void floe_manifest_set_max_bytes(uint64_t n) { atomic_store(&default_max_bytes, n); }

/* Avro options of a manifest reader: its name and the cap on what its blocks decode to. */
static floe_avro_reader_options manifest_avro_options(const floe_manifest_reader *r,
                                                      const floe_manifest_read_options *o) {
    uint64_t cap = o && o->max_bytes ? o->max_bytes : atomic_load(&default_max_bytes);
    return (floe_avro_reader_options){
        .name = r->name,
        .max_total_bytes = cap ? cap : FLOE_MANIFEST_DEFAULT_MAX_BYTES,
        .total_cap_hint = "FLOE_MANIFEST_MAX_BYTES (max_bytes in the manifest read options)"};
}

static int open_common(floe_manifest_reader *r, const floe_manifest_read_options *o,
                       floe_error *err) {
    const char *name = r->name;
    floe_avro_reader *ar = r->ar;
    const floe_avro_node *root = floe_avro_reader_schema(ar);
    if (!root || root->type != FLOE_AVRO_RECORD)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: the Avro schema is not a "
                              "record", name);
    bool by_name = !record_has_ids(root);
    if (by_name) {
        if (!o || !o->allow_missing_field_ids)
            return no_ids("manifest", name, err);
        floe_log(FLOE_LOG_WARN, "manifest %s: no Iceberg field ids; matching fields by name",
                 name);
    }
    r->info.by_name = by_name;
    resolve(root, entry_fields, E_N, by_name, r->eidx);
    if (r->eidx[E_STATUS] < 0 || r->eidx[E_DF] < 0)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: the schema has no %s", name,
                              r->eidx[E_STATUS] < 0 ? "status (field id 0)"
                                                    : "data_file (field id 2)");
    const floe_avro_node *df = unwrap(root->fields[r->eidx[E_DF]].type);
    if (!df || df->type != FLOE_AVRO_RECORD)
        return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: data_file is not a record",
                              name);
    resolve(df, df_fields, D_N, by_name || !record_has_ids(df), r->didx);
    static const int required[] = {D_PATH, D_FORMAT, D_RECS, D_SIZE};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (r->didx[required[i]] < 0)
            return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: the schema has no "
                                  "data_file.%s (field id %d)", name,
                                  df_fields[required[i]].name, (int)df_fields[required[i]].id);
    const floe_avro_node *prec = NULL;
    if (r->didx[D_PART] >= 0) {
        prec = unwrap(df->fields[r->didx[D_PART]].type);
        if (!prec || prec->type != FLOE_AVRO_RECORD)
            return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: data_file.partition is not "
                                  "a record", name);
        r->part_record = true;
    }

    /* header */
    r->info.codec = floe_avro_reader_codec(ar);
    const char *fv = floe_avro_reader_meta_str(ar, "format-version");
    if (fv) {
        char *end;
        errno = 0;
        long v = strtol(fv, &end, 10);
        if (!*fv || *end || errno || v < 1 || v > 3)
            return floe_error_set(err, FLOE_EUNSUPPORTED, "manifest %s: format-version \"%.40s\"",
                                  name, fv);
        r->info.format_version = (int)v;
    } else {
        r->info.format_version = (r->eidx[E_SEQ] >= 0 || r->didx[D_CONTENT] >= 0) ? 2 : 1;
    }
    const char *content = floe_avro_reader_meta_str(ar, "content");
    if (content && strcmp(content, "deletes") == 0)
        r->info.content = FLOE_MANIFEST_DELETES;
    else if (!content || strcmp(content, "data") == 0)
        r->info.content = FLOE_MANIFEST_DATA;
    else
        return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: header content \"%s\" (want "
                              "data or deletes)", name, content);
    int64_t l;
    FLOE_FORWARD_IF_ERROR(meta_int_in(ar, "manifest", name, "schema-id", INT32_MIN, INT32_MAX,
                                      &r->info.has_schema_id, &l, err));
    if (r->info.has_schema_id)
        r->info.schema_id = (int32_t)l;
    FLOE_FORWARD_IF_ERROR(meta_int_in(ar, "manifest", name, "partition-spec-id", INT32_MIN,
                                      INT32_MAX, &r->info.has_spec_id, &l, err));
    if (r->info.has_spec_id)
        r->info.spec_id = (int32_t)l;
    r->info.schema_json = floe_avro_reader_meta_str(ar, "schema");
    r->info.partition_spec_json = floe_avro_reader_meta_str(ar, "partition-spec");
    if (!r->info.schema_json || !r->info.partition_spec_json) {
        r->info.header_incomplete = true;
        floe_log(FLOE_LOG_WARN, "manifest %s: the header lacks %s (required by every format "
                 "version; re-encoded by a non-Iceberg writer?)", name,
                 !r->info.schema_json ? "schema" : "partition-spec");
    }

    FLOE_FORWARD_IF_ERROR(plan_partition(r, prec, by_name, o, err));

    if (o && o->manifest) {
        const floe_manifest_file *m = o->manifest;
        r->has_manifest = true;
        r->m_seq = m->sequence_number;
        r->m_has_snapshot = m->has_added_snapshot_id;
        r->m_snapshot = m->added_snapshot_id;
        if (m->has_first_row_id && m->content == FLOE_MANIFEST_DATA) {
            r->assign_row_ids = true;
            r->next_row_id = m->first_row_id;
        }
        if (m->manifest_length != r->info.file_length) {
            r->info.length_mismatch = true;
            if (o->strict_length)
                return floe_error_set(err, FLOE_ECORRUPT, "manifest %s: %" PRId64 " bytes, but "
                                      "the manifest list says %" PRId64, name,
                                      r->info.file_length, m->manifest_length);
            floe_log(FLOE_LOG_WARN, "manifest %s: %" PRId64 " bytes, but the manifest list "
                     "says %" PRId64 "; reading it anyway", name, r->info.file_length,
                     m->manifest_length);
        }
    }
    r->allow_dv = o && o->allow_deletion_vectors;

    /* the streaming decoder, unless the schema has a shape only the generic path reads
     * (rc 1) or the process asked for the generic path (benchmarks, bisecting) */
    if (!atomic_load(&generic_decoder)) {
        int rc = floe_mf_program_compile(root, r->eidx, r->didx, r->pidx, r->npart, &r->fast,
                                         err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            r->fast = NULL;
    }
    return 0;
}

static int reader_new(const char *name, floe_manifest_reader **out, floe_error *err) {
    floe_manifest_reader *r = floe_calloc(1, sizeof *r);
    if (!r || !(r->name = floe_strdup(name ? name : "(memory)"))) {
        floe_free(r);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_arena_init(&r->ea, 4096);
    floe_buf_init(&r->slots.items, 0);
    *out = r;
    return 0;
}

int floe_manifest_reader_open_mem(const void *p, size_t n, const char *name,
                                  const floe_manifest_read_options *o,
                                  floe_manifest_reader **out, floe_error *err) {
    return floe_manifest_reader_open_mem_cached(p, n, name, o, NULL, out, err);
}

int floe_manifest_reader_open_mem_cached(const void *p, size_t n, const char *name,
                                         const floe_manifest_read_options *o,
                                         floe_avro_schema_cache *cache,
                                         floe_manifest_reader **out, floe_error *err) {
    floe_manifest_reader *r;
    FLOE_FORWARD_IF_ERROR(reader_new(name, &r, err));
    floe_avro_reader_options ao = manifest_avro_options(r, o);
    int rc = floe_avro_reader_open_mem_cached(p, n, &ao, cache, &r->ar, err);
    if (rc < 0) {
        floe_error_prefix(err, "manifest %s: ", r->name);
    } else {
        r->info.file_length = (int64_t)n;
        rc = open_common(r, o, err);
    }
    if (rc < 0) {
        floe_manifest_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int floe_manifest_reader_open(floe_io *io, const char *uri, const floe_manifest_read_options *o,
                              floe_manifest_reader **out, floe_error *err) {
    return floe_manifest_reader_open_cached(io, uri, o, NULL, out, err);
}

floe_avro_schema_cache *floe_manifest_schema_cache_new(void) {
    return floe_avro_schema_cache_new();
}

void floe_manifest_schema_cache_free(floe_avro_schema_cache *c) { floe_avro_schema_cache_free(c); }

int floe_manifest_reader_open_cached(floe_io *io, const char *uri,
                                     const floe_manifest_read_options *o,
                                     floe_avro_schema_cache *cache, floe_manifest_reader **out,
                                     floe_error *err) {
    floe_manifest_reader *r;
    FLOE_FORWARD_IF_ERROR(reader_new(uri, &r, err));
    int rc = floe_input_open_sequential(io, uri, &r->in, err);
    if (rc == 0) {
        floe_avro_reader_options ao = manifest_avro_options(r, o);
        r->info.file_length = floe_input_size(r->in);
        rc = floe_avro_reader_open_input_cached(r->in, &ao, cache, &r->ar, err);
        if (rc < 0)
            floe_error_prefix(err, "manifest %s: ", r->name);
        else
            rc = open_common(r, o, err);
    }
    if (rc < 0) {
        floe_manifest_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

static bool ieq_ascii(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

/* The entry from its fields' values, the same for both decoders. ev/dv: value per slot
 * (NULL: absent); part_missing: the data_file has no partition record although the spec
 * has fields; pv: value per partition field (NULL: absent). The generic path passes the
 * metric maps and lists as values; the streaming one decodes them into *e beforehand
 * and leaves their slots NULL. */
static int finish_entry(floe_manifest_reader *r, const floe_avro_value *const *ev,
                        const floe_avro_value *const *dv, bool part_missing,
                        const floe_avro_value *part_rec, const floe_avro_value *const *pv,
                        floe_manifest_entry *e0, const rctx *c) {
    floe_error *err = c->err;
    floe_arena *a = &r->ea;
    floe_manifest_entry e = *e0;
    floe_data_file *f = &e.file;
    int32_t i32;
    bool has;

    const floe_avro_value *sv = ev[E_STATUS];
    if (is_null(sv) || !as_int(sv, &i32) || i32 < 0 || i32 > 2)
        return bad(c, "status", "missing or not 0, 1 or 2", sv);
    e.status = (floe_entry_status)i32;
    FLOE_FORWARD_IF_ERROR(opt_long(c, "snapshot_id", ev[E_SNAP],
                                   &e.has_snapshot_id, &e.snapshot_id));
    FLOE_FORWARD_IF_ERROR(opt_long(c, "sequence_number", ev[E_SEQ],
                                   &e.has_sequence_number, &e.sequence_number));
    FLOE_FORWARD_IF_ERROR(opt_long(c, "file_sequence_number", ev[E_FSEQ],
                                   &e.has_file_sequence_number, &e.file_sequence_number));
    const floe_avro_value *d = ev[E_DF];
    if (is_null(d) || d->type != FLOE_AVRO_RECORD)
        return bad(c, "data_file", "missing or not a record", d);

    FLOE_FORWARD_IF_ERROR(opt_int(c, "data_file.content", dv[D_CONTENT], &has,
                                  &i32));
    if (has && (i32 < 0 || i32 > 2))
        return bad(c, "data_file.content", "not 0, 1 or 2", NULL);
    f->content = has ? (floe_file_content)i32 : FLOE_CONTENT_DATA; /* v1: data */
    FLOE_FORWARD_IF_ERROR(req_string(c, "data_file.file_path", dv[D_PATH],
                                     &f->file_path));
    FLOE_FORWARD_IF_ERROR(req_string(c, "data_file.file_format", dv[D_FORMAT],
                                     &f->file_format));
    FLOE_FORWARD_IF_ERROR(req_long(c, "data_file.record_count", dv[D_RECS],
                                   &f->record_count));
    FLOE_FORWARD_IF_ERROR(req_long(c, "data_file.file_size_in_bytes", dv[D_SIZE],
                                   &f->file_size_in_bytes));
    if (f->record_count < 0 || f->file_size_in_bytes < 0)
        return bad(c, "data_file", "negative record count or file size", NULL);

    /* partition tuple */
    if (part_missing)
        return bad(c, "data_file.partition", "missing or not a record", part_rec);
    for (size_t i = 0; i < r->npart; i++) {
        const floe_avro_value *x = pv[i];
        floe_avro_value null_v = {.type = FLOE_AVRO_NULL, .branch = -1};
        int rc = floe_mf_partition_from_avro(&r->ptypes[i], x ? x : &null_v, &r->pvals[i], err);
        if (rc < 0) {
            floe_error_prefix(err, "%s %s: entry %" PRId64 ": data_file.partition: ", c->kind,
                              c->name, c->record);
            return rc;
        }
    }
    f->partition = r->pvals;
    f->npartition = r->npart;

    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.column_sizes", dv[D_CSIZES],
                                   false, a, &f->column_sizes, NULL));
    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.value_counts", dv[D_VCOUNTS],
                                   false, a, &f->value_counts, NULL));
    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.null_value_counts",
                                   dv[D_NCOUNTS], false, a,
                                   &f->null_value_counts, NULL));
    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.nan_value_counts", dv[D_NANS],
                                   false, a, &f->nan_value_counts, NULL));
    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.lower_bounds", dv[D_LOWER],
                                   true, a, NULL, &f->lower_bounds));
    FLOE_FORWARD_IF_ERROR(read_map(c, "data_file.upper_bounds", dv[D_UPPER],
                                   true, a, NULL, &f->upper_bounds));
    FLOE_FORWARD_IF_ERROR(opt_bytes(c, "data_file.key_metadata", dv[D_KEY],
                                    &f->has_key_metadata, &f->key_metadata,
                                    &f->key_metadata_len));
    FLOE_FORWARD_IF_ERROR(read_long_list(c, "data_file.split_offsets",
                                         dv[D_SPLITS], a, &f->has_split_offsets,
                                         &f->split_offsets, &f->nsplit_offsets));
    FLOE_FORWARD_IF_ERROR(read_int_list(c, "data_file.equality_ids", dv[D_EQIDS],
                                        a, &f->has_equality_ids, &f->equality_ids,
                                        &f->nequality_ids));
    FLOE_FORWARD_IF_ERROR(opt_int(c, "data_file.sort_order_id", dv[D_SORT],
                                  &f->has_sort_order_id, &f->sort_order_id));
    FLOE_FORWARD_IF_ERROR(opt_long(c, "data_file.first_row_id", dv[D_FRID],
                                   &f->has_first_row_id, &f->first_row_id));
    const floe_avro_value *ref = dv[D_REF];
    if (!is_null(ref))
        FLOE_FORWARD_IF_ERROR(req_string(c, "data_file.referenced_data_file", ref,
                                         &f->referenced_data_file));
    FLOE_FORWARD_IF_ERROR(opt_long(c, "data_file.content_offset", dv[D_COFF],
                                   &f->has_content_offset, &f->content_offset));
    FLOE_FORWARD_IF_ERROR(opt_long(c, "data_file.content_size_in_bytes",
                                   dv[D_CSIZE], &f->has_content_size,
                                   &f->content_size_in_bytes));

    if (f->content == FLOE_CONTENT_POSITION_DELETES && !r->allow_dv &&
        (ieq_ascii(f->file_format, "puffin") || f->has_content_offset))
        return floe_error_set(err, FLOE_EUNSUPPORTED, "%s %s: entry %" PRId64 ": %s is a "
                              "deletion vector (format v3, Puffin); floe cannot apply "
                              "deletion vectors", c->kind, c->name, c->record, f->file_path);
    if (f->content == FLOE_CONTENT_POSITION_DELETES &&
        (ieq_ascii(f->file_format, "puffin") || f->has_content_offset) &&
        (!f->referenced_data_file || !f->has_content_offset || !f->has_content_size ||
         f->content_offset < 0 || f->content_size_in_bytes < 0))
        return floe_error_set(err, FLOE_ECORRUPT, "%s %s: entry %" PRId64 ": deletion vector "
                              "%s lacks referenced_data_file, content_offset or "
                              "content_size_in_bytes (the spec requires all three)", c->kind,
                              c->name, c->record, f->file_path);

    /* Inheritance (spec "Sequence Number Inheritance"; snapshot ids likewise). */
    if (!e.has_snapshot_id && r->m_has_snapshot) {
        e.has_snapshot_id = true;
        e.snapshot_id = r->m_snapshot;
    }
    if (r->has_manifest && (e.status == FLOE_ENTRY_ADDED || r->m_seq == 0)) {
        if (!e.has_sequence_number) {
            e.has_sequence_number = true;
            e.sequence_number = r->m_seq;
        }
        if (!e.has_file_sequence_number) {
            e.has_file_sequence_number = true;
            e.file_sequence_number = r->m_seq;
        }
    } else if (r->info.format_version == 1 && !r->has_manifest) {
        /* Appendix E: v1 manifests have no sequence numbers; they are all 0 */
        if (!e.has_sequence_number) {
            e.has_sequence_number = true;
            e.sequence_number = 0;
        }
        if (!e.has_file_sequence_number) {
            e.has_file_sequence_number = true;
            e.file_sequence_number = 0;
        }
    }
    /* DELETED entries take no ids: a manifest's id range covers its ADDED and EXISTING
     * rows (the writers' estimate, and what Iceberg's reader assigns) */
    if (r->assign_row_ids && f->content == FLOE_CONTENT_DATA && !f->has_first_row_id &&
        e.status != FLOE_ENTRY_DELETED) {
        f->has_first_row_id = true;
        f->first_row_id = r->next_row_id;
        r->next_row_id += f->record_count;
    }
    r->cur = e;
    return 0;
}

/* Generic path: the record's value tree, picked apart by writer index. */
static int decode_entry(floe_manifest_reader *r, const floe_avro_value *v, const rctx *c) {
    const floe_avro_value *ev[E_N], *dv[D_N] = {0}, *pv1[1], **pv = pv1;
    floe_manifest_entry e = {0};
    for (int i = 0; i < E_N; i++)
        ev[i] = field_val(v, r->eidx[i]);
    const floe_avro_value *d = ev[E_DF];
    if (!is_null(d) && d->type == FLOE_AVRO_RECORD)
        for (int i = 0; i < D_N; i++)
            dv[i] = field_val(d, r->didx[i]);
    const floe_avro_value *part = dv[D_PART];
    bool part_missing = r->npart && (is_null(part) || part->type != FLOE_AVRO_RECORD);
    if (r->npart > 1 && !(pv = floe_arena_alloc(&r->ea, r->npart * sizeof *pv)))
        return floe_error_set(c->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->npart && !part_missing; i++)
        pv[i] = field_val(part, r->pidx[i]);
    return finish_entry(r, ev, dv, part_missing, part, pv, &e, c);
}

/* Streaming path: decode the record's bytes into slots (manifest_fast.c). */
static int decode_entry_fast(floe_manifest_reader *r, floe_error *err) {
    floe_avro_cursor cur;
    int rc = floe_avro_reader_raw_next(r->ar, &cur, err);
    if (rc <= 0) {
        if (rc < 0)
            floe_error_prefix(err, "manifest %s: ", r->name);
        return rc;
    }
    /* entries borrow the block's bytes; the arena lives as long as the block (R1) */
    if (floe_avro_reader_blocks(r->ar) != r->fast_block) {
        floe_arena_reset(&r->ea);
        r->fast_block = floe_avro_reader_blocks(r->ar);
    }
    floe_mf_slots *s = &r->slots;
    rc = floe_mf_program_decode(r->fast, &cur, &r->ea, s, err);
    if (rc == 0)
        rc = floe_avro_reader_raw_done(r->ar, &cur, err);
    if (rc < 0) {
        floe_avro_reader_raw_error(r->ar, err);
        floe_error_prefix(err, "manifest %s: ", r->name);
        return rc;
    }
    floe_manifest_entry e = {0};
    e.file = s->file;
    rctx c = {"manifest", r->name, r->entries, err};
    rc = finish_entry(r, s->eslot, s->dslot, s->part_missing, s->part_rec, s->part, &e, &c);
    return rc < 0 ? rc : 1;
}

int floe_manifest_reader_next(floe_manifest_reader *r, const floe_manifest_entry **out,
                              floe_error *err) {
    int rc;
    if (r->fast) {
        rc = decode_entry_fast(r, err); /* its errors name the manifest */
        if (rc <= 0)
            return rc;
        r->entries++;
        *out = &r->cur;
        return 1;
    }
    const floe_avro_value *v;
    rc = floe_avro_reader_next(r->ar, &v, err);
    if (rc <= 0) {
        if (rc < 0)
            floe_error_prefix(err, "manifest %s: ", r->name);
        return rc;
    }
    floe_arena_reset(&r->ea);
    rctx c = {"manifest", r->name, r->entries, err};
    rc = decode_entry(r, v, &c);
    if (rc < 0)
        return rc;
    r->entries++;
    *out = &r->cur;
    return 1;
}
