/*
 * append_files.c - appending NDJSON and existing Parquet files to a table.
 *
 * NDJSON goes through floe_convert with the table's current schema, default partition
 * spec (Hive-style folders) and write.* properties into the table's data folder; each
 * file it closes becomes a data file with metrics (floe_data_file_from_parquet).
 * Existing Parquet files are added where they are (append_parquet.c: schema check,
 * metrics from the footer or the values, one partition per file), once every page CRC
 * they carry is found to hold (unless skip_page_crc).
 *
 * Iceberg configuration docs: write.data.path, write.target-file-size-bytes (512 MiB),
 * write.parquet.row-group-size-bytes (128 MiB), write.parquet.page-size-bytes (1 MiB),
 * write.parquet.page-row-limit (20000), write.parquet.dict-size-bytes (2 MiB),
 * write.parquet.compression-codec (zstd since Iceberg 1.4), -level.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/keyset.h"
#include "common/propcap.h"
#include "floe/codec.h"
#include "floe/append.h"
#include "floe/io.h"
#include "floe/parquet_reader.h"
#include "floe/scan.h"
#include "iceberg/scan_internal.h"
#include "table_internal.h"

#define COPY_CHUNK ((size_t)8 << 20) /* append --copy: bytes read and written at a time */
#define CONTENT_HEX 32                /* append --copy: hex digits of <content> */

/* ---------------------------------------------------------------------------------------
 * table properties
 * ------------------------------------------------------------------------------------- */

int floe_table_data_dir(const floe_table *t, char **out, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const char *custom = floe_table_metadata_property(m, "write.data.path");
    char *rec = custom && *custom ? floe_strdup(custom) : floe_io_join(m->location, "data");
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* as new files are recorded: an absolute URI, also while the table waits for its
     * paths to be migrated */
    int rc = floe_table_record_path(t, rec, out, err);
    floe_free(rec);
    return rc;
}

/* The Parquet write properties floe reads, with their defaults ("" for none). */
static const struct {
    const char *key, *dflt;
} parquet_props[] = {
    {"write.parquet.compression-codec", "zstd"},
    {"write.parquet.compression-level", ""},
    {"write.parquet.row-group-size-bytes", "134217728"},
    {"write.parquet.page-size-bytes", "1048576"},
    {"write.parquet.page-row-limit", "20000"},
    {"write.parquet.dict-size-bytes", "2097152"},
    {"write.target-file-size-bytes", "536870912"},
};

static int positive(const char *key, const char *v, int64_t *out, floe_error *err) {
    FLOE_RETURN_ERROR_IF(!floe_parse_i64_cstr(v, out) || *out <= 0, err, FLOE_EINVALID,
                         "table property %s=%s: expected a positive integer", key, v);
    return 0;
}

/* Check the value of one of parquet_props and apply it to o. */
static int parquet_prop(const char *key, const char *v, floe_pq_write_options *o,
                        floe_error *err) {
    int64_t x = 0;
    if (!strcmp(key, "write.parquet.compression-codec")) {
        floe_codec c;
        if (!strcasecmp(v, "uncompressed") || !strcasecmp(v, "none"))
            c = FLOE_CODEC_UNCOMPRESSED;
        else if (floe_codec_from_name(v, &c) < 0 || c == FLOE_CODEC_LZO ||
                 c == FLOE_CODEC_LZ4 || c == FLOE_CODEC_DEFLATE)
            return floe_error_set(err, FLOE_EINVALID,
                                  "table property write.parquet.compression-codec=%s: floe "
                                  "writes zstd, snappy, gzip, lz4_raw, brotli or uncompressed",
                                  v);
        o->codec = c;
    } else if (!strcmp(key, "write.parquet.compression-level")) {
        if (!*v)
            return 0;
        FLOE_RETURN_ERROR_IF(!floe_parse_i64_cstr(v, &x) || x < INT32_MIN || x > INT32_MAX,
                             err, FLOE_EINVALID, "table property %s=%s: expected an integer",
                             key, v);
        o->codec_level = (int)x;
    } else {
        FLOE_FORWARD_IF_ERROR(positive(key, v, &x, err));
        if (!strcmp(key, "write.parquet.row-group-size-bytes"))
            o->row_group_size = (size_t)x;
        else if (!strcmp(key, "write.parquet.page-size-bytes"))
            o->page_size = (size_t)x;
        else if (!strcmp(key, "write.parquet.page-row-limit"))
            o->page_row_limit = (size_t)x;
        else if (!strcmp(key, "write.parquet.dict-size-bytes"))
            o->dict_page_size_limit = (size_t)x;
        else
            o->target_file_size = x;
    }
    return 0;
}

/* Property key of base after the changes set / unset (NULL: not set). */
static const char *changed_property(const floe_table_metadata *base, const floe_kv *set,
                                    size_t nset, const char *const *unset, size_t nunset,
                                    const char *key) {
    for (size_t i = nset; i-- > 0;)
        if (!strcmp(set[i].key, key))
            return set[i].value;
    for (size_t i = 0; i < nunset; i++)
        if (!strcmp(unset[i], key))
            return NULL;
    return base ? floe_table_metadata_property(base, key) : NULL;
}

/* The compression level against the codec it goes with (o holds both). */
static int check_codec_level(const floe_pq_write_options *o, const char *codec,
                             const char *level, floe_error *err) {
    int rc = floe_codec_check_level(o->codec, o->codec_level, err);
    if (rc < 0)
        floe_error_prefix(err, "table properties write.parquet.compression-codec=%s and "
                          "write.parquet.compression-level=%s: ", codec, level);
    return rc;
}

int floe_table_parquet_options(const floe_table_metadata *m, floe_pq_write_options *o,
                               floe_error *err) {
    floe_pq_write_options_init(o);
    const char *v[sizeof parquet_props / sizeof parquet_props[0]];
    for (size_t i = 0; i < sizeof parquet_props / sizeof parquet_props[0]; i++) {
        v[i] = floe_table_metadata_property(m, parquet_props[i].key);
        if (!v[i])
            v[i] = parquet_props[i].dflt;
        FLOE_FORWARD_IF_ERROR(parquet_prop(parquet_props[i].key, v[i], o, err));
    }
    FLOE_FORWARD_IF_ERROR(check_codec_level(o, v[0], v[1], err)); /* codec, level */
    const char *shred = floe_table_metadata_property(m, FLOE_PROP_VARIANT_SHREDDING);
    if (shred && *shred) {
        FLOE_FORWARD_IF_ERROR(floe_table_property_check(FLOE_PROP_VARIANT_SHREDDING, shred,
                                                        err));
        snprintf(o->variant_shredding, sizeof o->variant_shredding, "%s", shred);
    }
    return 0;
}

/* The properties of base after the change held to the caps (common/propcap.h). */
static int check_caps(const floe_table_metadata *base, const floe_kv *set, size_t nset,
                      const char *const *unset, size_t nunset, floe_error *err) {
    size_t nhave = base ? base->n_properties : 0;
    const char **s = floe_calloc(2 * (nhave + nset) + 1, sizeof *s);
    if (!s)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    const char **hk = s, **hv = s + nhave, **sk = s + 2 * nhave, **sv = sk + nset;
    for (size_t i = 0; i < nhave; i++) {
        hk[i] = base->properties[i].key;
        hv[i] = base->properties[i].value;
    }
    for (size_t i = 0; i < nset; i++) {
        sk[i] = set[i].key;
        sv[i] = set[i].value;
    }
    int rc = floe_propcap_check("table", hk, hv, nhave, unset, nunset, sk, sv, nset, err);
    floe_free(s);
    return rc;
}

int floe_table_properties_check(const floe_table_metadata *base, const floe_kv *set,
                                size_t nset, const char *const *unset, size_t nunset,
                                floe_error *err) {
    /* the caps first: a value past them is not parsed (a name mapping) */
    FLOE_FORWARD_IF_ERROR(check_caps(base, set, nset, unset, nunset, err));
    for (size_t i = 0; i < nset; i++)
        FLOE_FORWARD_IF_ERROR(floe_table_property_check(set[i].key, set[i].value, err));
    const char *codec = changed_property(base, set, nset, unset, nunset, parquet_props[0].key);
    const char *level = changed_property(base, set, nset, unset, nunset, parquet_props[1].key);
    if (!level || !*level)
        return 0;
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    if (!codec)
        codec = parquet_props[0].dflt;
    FLOE_FORWARD_IF_ERROR(parquet_prop(parquet_props[0].key, codec, &o, err));
    FLOE_FORWARD_IF_ERROR(parquet_prop(parquet_props[1].key, level, &o, err));
    return check_codec_level(&o, codec, level, err);
}

int floe_table_property_check(const char *key, const char *value, floe_error *err) {
    for (size_t i = 0; i < sizeof parquet_props / sizeof parquet_props[0]; i++)
        if (!strcmp(key, parquet_props[i].key)) {
            floe_pq_write_options o;
            floe_pq_write_options_init(&o);
            return parquet_prop(key, value, &o, err);
        }
    /* integers floe reads, with the least value that means something */
    static const struct {
        const char *key;
        int64_t min;
    } ints[] = {{FLOE_PROP_COMMIT_NUM_RETRIES, 0},    {FLOE_PROP_COMMIT_MIN_WAIT_MS, 0},
                {FLOE_PROP_COMMIT_MAX_WAIT_MS, 0},    {FLOE_PROP_COMMIT_TOTAL_TIMEOUT_MS, 0},
                {FLOE_PROP_MAX_SNAPSHOT_AGE_MS, 0},   {FLOE_PROP_MIN_SNAPSHOTS_TO_KEEP, 1},
                {FLOE_PROP_MAX_REF_AGE_MS, 0},        {FLOE_PROP_METADATA_PREVIOUS_MAX, 1},
                {FLOE_PROP_MANIFEST_TARGET_SIZE, 1},  {FLOE_PROP_MANIFEST_MIN_MERGE, 0},
                {FLOE_PROP_METRICS_MAX_INFERRED, 0}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int64_t x;
        if (!strcmp(key, ints[i].key))
            FLOE_RETURN_ERROR_IF(!floe_parse_i64_cstr(value, &x) || x < ints[i].min, err,
                                 FLOE_EINVALID,
                                 "table property %s=%s: expected an integer >= %lld%s", key,
                                 value, (long long)ints[i].min,
                                 strstr(key, "-ms") ? " (milliseconds)" : "");
    }
    if (!strcmp(key, FLOE_PROP_METADATA_DELETE_AFTER_COMMIT) ||
        !strcmp(key, FLOE_PROP_MANIFEST_MERGE_ENABLED) || !strcmp(key, FLOE_PROP_GC_ENABLED))
        FLOE_RETURN_ERROR_IF(strcasecmp(value, "true") && strcasecmp(value, "false"), err,
                             FLOE_EINVALID, "table property %s=%s: expected true or false",
                             key, value);
    /* the metrics modes every write reads (floe_metrics_config_new): refused here rather
     * than warned about on each append */
    if (!strcmp(key, FLOE_PROP_METRICS_DEFAULT) ||
        !strncmp(key, FLOE_PROP_METRICS_COLUMN_PREFIX, strlen(FLOE_PROP_METRICS_COLUMN_PREFIX))) {
        floe_metrics_mode mode;
        if (floe_metrics_mode_parse(value, &mode, err) < 0) {
            floe_error_prefix(err, "table property %s: ", key);
            return FLOE_EINVALID;
        }
    }
    /* the file format of new data and delete files: floe writes (and compacts, and
     * reads) Parquet only, so a table that asks for ORC or Avro would get files it does
     * not say, or files from other writers floe cannot read */
    if (!strcmp(key, "write.format.default") || !strcmp(key, "write.delete.format.default"))
        FLOE_RETURN_ERROR_IF(strcasecmp(value, "parquet"), err, FLOE_EINVALID,
                             "table property %s=%s: floe writes and reads Parquet files only "
                             "(expected parquet)",
                             key, value);
    if (!strcmp(key, FLOE_PROP_METADATA_COMPRESSION))
        FLOE_RETURN_ERROR_IF(strcasecmp(value, "none") && strcasecmp(value, "gzip"), err,
                             FLOE_EINVALID, "table property %s=%s: expected none or gzip", key,
                             value);
    if (!strcmp(key, FLOE_PROP_VARIANT_SHREDDING) && *value) { /* read by every write */
        if (floe_pq_variant_shredding_check(value, err) < 0) {
            floe_error_prefix(err, "table property ");
            return FLOE_EINVALID;
        }
    }
    if (!strcmp(key, "schema.name-mapping.default")) /* read by every scan */
        return floe_name_mapping_check(value, err);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * floe_table_append_files
 * ------------------------------------------------------------------------------------- */

void floe_table_append_options_init(floe_table_append_options *o) {
    memset(o, 0, sizeof *o);
    o->fsync = true;
    o->manifest_merge = -1;
}

void floe_table_append_result_reset(floe_table_append_result *r) {
    if (!r)
        return;
    floe_append_result_reset(&r->commit);
    floe_convert_result_free(&r->convert);
    floe_free(r->quarantine_uri);
    memset(r, 0, sizeof *r);
}

typedef struct convert_ctx {
    const floe_table_append_options *o;
    int64_t done;                /* input bytes of the Parquet inputs (progress) */
    floe_append *a;
    floe_metrics_config *cfg;
    floe_arena arena;
    const char *phys_dir, *rec_dir;
    int64_t files;
} convert_ctx;

static void on_convert_progress(void *ctx, int64_t bytes) {
    const convert_ctx *c = ctx;
    c->o->progress(c->o->progress_ctx, c->done + bytes);
}

static int on_file(void *ctx, const char *uri, const floe_pq_file_info *fi,
                   const floe_value *partition, size_t npartition, floe_error *err) {
    convert_ctx *c = ctx;
    floe_data_file df;
    memset(&df, 0, sizeof df);
    FLOE_FORWARD_IF_ERROR(floe_data_file_from_parquet(fi, c->cfg, &c->arena, &df, err));
    size_t pl = strlen(c->phys_dir);
    char *rec = NULL;
    if (!strncmp(uri, c->phys_dir, pl))
        rec = floe_asprintf("%s%s", c->rec_dir, uri + pl);
    else
        rec = floe_strdup(uri);
    if (!rec)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    df.file_path = rec;
    df.content = FLOE_CONTENT_DATA;
    df.partition = partition;
    df.npartition = npartition;
    int rc = floe_append_add_file(c->a, &df, err);
    floe_free(rec);
    c->files++;
    return rc;
}

/* The snapshot an append to `branch` (NULL: main) lands on in m: *has false when the
 * branch has none yet (or does not exist: the commit says so). */
static int64_t target_head(const floe_table_metadata *m, const char *branch, bool *has) {
    const floe_snapshot *s = NULL;
    if (!branch || !strcmp(branch, "main")) {
        s = floe_table_metadata_current_snapshot(m);
    } else {
        const floe_snapshot_ref *r = floe_table_metadata_ref(m, branch);
        if (r && !r->is_tag)
            s = floe_table_metadata_snapshot(m, r->snapshot_id);
    }
    *has = s != NULL;
    return s ? s->snapshot_id : 0;
}

/* The Parquet inputs an append adds that must not be live in the table it commits to:
 * the files added where they are (by local path, or URI) and the copies (by <content>).
 * They are checked against the table state the append starts from before anything is
 * written, and again in every commit attempt whose base has another head (snapshot
 * `head`): of two appends of the same file that both passed the first check, the second
 * to commit finds the first's snapshot in its attempt and fails instead of committing
 * the file twice. */
typedef struct dup_check {
    floe_table *t;
    const char *branch;            /* NULL: main */
    const char *when;              /* how the error says when the file got in */
    floe_keyset paths;             /* inputs added as they are */
    floe_keyset *contents;         /* the copies' <content> (copy_state.given) */
    floe_keyset *live_contents;    /* when not NULL: collect the <content> of the live
                                      copies instead of checking contents */
    bool checked;                  /* head (has_head) has been checked */
    bool has_head;
    int64_t head;
    char *found;                   /* the live file an input is, when one is */
    bool found_copy;               /* ... found by its <content> */
} dup_check;

static bool is_content_name(const char *base);

static int dup_task(void *ctx, const floe_scan_task *task, floe_error *err) {
    dup_check *dc = ctx;
    const char *path = task->file->file_path;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((dc->contents || dc->live_contents) && is_content_name(base)) {
        if (dc->live_contents) {
            int rc = floe_keyset_put(dc->live_contents, base, CONTENT_HEX, 0, NULL);
            if (rc < 0)
                return floe_error_set(err, rc, "%s", floe_strerror(rc));
        } else if (floe_keyset_find(dc->contents, base, CONTENT_HEX)) {
            dc->found_copy = true;
            if (!(dc->found = floe_strdup(path)))
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            return FLOE_EINVALID; /* dup_scan says it */
        }
    }
    if (!dc->paths.n)
        return 0;
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(dc->t, path, &uri, err));
    char *lp = floe_io_local_path(uri);
    const char *key = lp ? lp : uri;
    int rc = 0;
    if (floe_keyset_find(&dc->paths, key, strlen(key))) {
        rc = (dc->found = floe_strdup(path)) ? FLOE_EINVALID /* dup_scan says it */
                                             : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_free(lp);
    floe_free(uri);
    return rc;
}

/* Check the inputs against the live files of the head of the append's branch in m (t's
 * metadata), unless that head was checked already. */
static int dup_scan(dup_check *dc, const floe_table_metadata *m, floe_error *err) {
    bool has = false;
    int64_t head = target_head(m, dc->branch, &has);
    if (dc->checked && has == dc->has_head && head == dc->head)
        return 0;
    if (has && (dc->paths.n || dc->contents || dc->live_contents)) {
        floe_scan_options so = {.has_snapshot_id = true, .snapshot_id = head};
        floe_scan_plan *p = NULL;
        int rc = floe_scan_plan_stream(dc->t, &so, dup_task, dc, &p, err);
        floe_scan_plan_free(p);
        if (dc->found) {
            floe_error_clear(err);
            if (dc->found_copy)
                rc = floe_error_set(err, FLOE_EINVALID, "the bytes of a file to copy are "
                                    "already in the table as %s (snapshot %" PRId64 "%s); "
                                    "appending them again would count their rows twice",
                                    dc->found, head, dc->when);
            else
                rc = floe_error_set(err, FLOE_EINVALID, "%s is already a data file of the "
                                    "table (snapshot %" PRId64 "%s); appending it again "
                                    "would count its rows twice", dc->found, head, dc->when);
            floe_free(dc->found);
            dc->found = NULL;
            return rc;
        }
        if (rc < 0) {
            floe_error_prefix(err, "checking the table's files for the appended ones: ");
            return rc;
        }
    }
    dc->checked = true;
    dc->has_head = has;
    dc->head = head;
    return 0;
}

/* floe_append_check_fn: the check above on each attempt's base. */
static int dup_attempt(void *ctx, const floe_table_metadata *base, floe_error *err) {
    dup_check *dc = ctx;
    dc->when = ", committed while this append ran";
    return dup_scan(dc, base, err);
}

/* The tables of the catalog, loaded the first time an input lies in its warehouse. */
typedef struct owners {
    bool loaded;
    floe_table_place *places;
    size_t n;
} owners;

/* Refuse Parquet input `recorded`, added as it is, when it lies in the location of
 * another table of the catalog: it would be the file of two tables, and either one's
 * maintenance (rewrite + expire, drop --purge) would delete it from the other. Only
 * inputs under the warehouse are looked up (where the catalog's tables are unless a
 * location says otherwise). */
/* Every page CRC of the Parquet file at uri holds: its pages are not all decoded when it
 * is added (exact statistics spare the values), and a file that fails every read later is
 * refused now, before anything is committed. */
static int verify_page_crcs(floe_io *io, const char *uri, floe_error *err) {
    floe_pq_reader *r = NULL;
    int rc = floe_pq_reader_open(io, uri, NULL, &r, err);
    if (rc == 0)
        rc = floe_pq_reader_verify_checksums(r, NULL, err);
    floe_pq_reader_close(r);
    return rc;
}

static int check_owner(floe_table *t, const char *recorded, owners *ow, floe_error *err) {
    floe_catalog *cat = floe_table_catalog(t);
    const char *wh = cat ? floe_catalog_warehouse(cat) : NULL;
    const char *own = floe_table_metadata_get(t)->location;
    if (!wh || !floe_io_uri_within(recorded, wh) || (own && floe_io_uri_within(recorded, own)))
        return 0;
    if (!ow->loaded) {
        FLOE_FORWARD_IF_ERROR(floe_catalog_table_places(cat, &ow->places, &ow->n, err));
        ow->loaded = true;
    }
    for (size_t i = 0; i < ow->n; i++) {
        const floe_table_place *p = &ow->places[i];
        if (floe_table_namespace(t) && !strcmp(p->ns, floe_table_namespace(t)) &&
            !strcmp(p->name, floe_table_name(t)))
            continue;
        if (floe_io_uri_within(recorded, p->location))
            return floe_error_set(err, FLOE_EINVALID, "%s lies in the location of table "
                                  "%s.%s: added as it is, it would be a file of both tables "
                                  "and the maintenance of either would delete it from the "
                                  "other; append a copy (--copy)", recorded, p->ns, p->name);
    }
    return 0;
}

static bool is_parquet_name(const char *p) {
    size_t n = strlen(p);
    return (n > 8 && !strcasecmp(p + n - 8, ".parquet")) || (n > 5 && !strcasecmp(p + n - 5, ".parq"));
}

/* Parquet input `recorded`, whose rows span several partitions, rewritten per partition
 * by o->split (the pieces carry field ids; the file itself is not added): the pieces are
 * added to a and appended to *written (removed unless committed), *nw of them. */
static int split_input(floe_table *t, const floe_table_metadata *m,
                       const floe_table_append_options *o, floe_append *a,
                       const floe_schema *schema, const char *recorded,
                       const floe_parquet_file_report *rep, char ***written, size_t *nwritten,
                       size_t *nw, floe_error *err) {
    const char *nm = floe_table_metadata_property(m, "schema.name-mapping.default");
    char *own = NULL;
    if (!rep->has_ids && !nm && !(nm = own = floe_name_mapping_of_schema(schema)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    char **w = NULL;
    *nw = 0;
    int rc = o->split(t, recorded, rep->has_ids ? NULL : nm, o->fsync, a, &w, nw, err);
    floe_free(own);
    if (rc < 0)
        return rc;
    char **grown = floe_realloc(*written, (*nwritten + *nw + 1) * sizeof **written);
    if (!grown) {
        for (size_t k = 0; k < *nw; k++) {
            floe_io_delete(floe_table_io(t), w[k], NULL);
            floe_free(w[k]);
        }
        floe_free(w);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    *written = grown;
    for (size_t k = 0; k < *nw; k++)
        (*written)[(*nwritten)++] = w[k];
    floe_free(w);
    return 0;
}

/* append --copy: each copy is named <content>-<file name>, <content> being the first 128
 * bits of the SHA-256 of the file's bytes in hex, so the name says which bytes it holds
 * whoever wrote it: a second append of the same bytes finds them live in the table and is
 * refused as a second append of the same file is without --copy, and a re-run after a
 * crash between the copy and the commit finds the copy written (writes are atomic: a
 * file under that name is complete) and adds it instead of copying again. A copy is
 * never deleted by the append that wrote it, even when that append fails: another append
 * of the same bytes running at the same time may have found it under its name and be
 * committing it (the next append of those bytes takes it; floe orphans removes it when
 * none does). */

typedef struct copy_state {
    const char *branch;   /* the append's, NULL: main */
    floe_keyset live;     /* <content> of the live copies of the table */
    bool live_loaded;
    floe_keyset given;    /* <content> of the inputs copied by this append */
    uint8_t *buf;         /* COPY_CHUNK bytes */
} copy_state;

static void copy_state_free(copy_state *cs) {
    floe_keyset_free(&cs->live);
    floe_keyset_free(&cs->given);
    floe_free(cs->buf);
}

static bool is_content_name(const char *base) {
    if (strlen(base) <= CONTENT_HEX || base[CONTENT_HEX] != '-')
        return false;
    for (size_t i = 0; i < CONTENT_HEX; i++)
        if (!strchr("0123456789abcdef", base[i]))
            return false;
    return true;
}

/* The <content> of every live data file of the table named as a copy is. */
static int load_live_copies(floe_table *t, copy_state *cs, floe_error *err) {
    cs->live_loaded = true;
    dup_check dc = {.t = t, .branch = cs->branch, .live_contents = &cs->live};
    return dup_scan(&dc, floe_table_metadata_get(t), err);
}

/* hex = <content> of input `in`. */
static int content_of(floe_input *in, uint8_t *buf, char hex[CONTENT_HEX + 1],
                      floe_error *err) {
    floe_sha256_state *h = floe_sha256_begin(err);
    if (!h)
        return err ? err->code : FLOE_ENOMEM;
    int64_t size = floe_input_size(in);
    for (int64_t off = 0; off < size;) {
        size_t k = size - off < (int64_t)COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK;
        int rc = floe_input_read_at(in, off, buf, k, err);
        if (rc < 0) {
            floe_sha256_free(h);
            return rc;
        }
        floe_sha256_update(h, buf, k);
        off += (int64_t)k;
    }
    uint8_t d[32];
    floe_sha256_end(h, d);
    for (size_t i = 0; i < CONTENT_HEX / 2; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

/* A file already at the copy's name `phys`: written by an earlier run that did not
 * commit (or whose commit was not seen), complete since writes are atomic. It is taken
 * when its size is the input's; anything else there is refused, never overwritten. */
static int check_existing_copy(floe_table *t, const char *phys, int64_t size,
                               floe_error *err) {
    floe_input *in = NULL;
    FLOE_FORWARD_IF_ERROR(floe_input_open(floe_table_io(t), phys, &in, err));
    int64_t have = floe_input_size(in);
    floe_input_close(in);
    if (have != size)
        return floe_error_set(err, FLOE_EEXISTS, "%s already exists with %" PRId64 " bytes, "
                              "not the %" PRId64 " of the copy named after these bytes; "
                              "refusing to replace it", phys, have, size);
    return 0;
}

/* Copy Parquet input `recorded` into the table's data folder as <content>-<file name>,
 * *rec as the table records it (the caller's), or take the copy an earlier run left there.
 * Refused when those bytes are a live file of the table or were given before in this
 * append. */
static int copy_input(floe_table *t, copy_state *cs, const char *recorded, bool fsync,
                      char **rec, floe_error *err) {
    char *rec_dir = NULL, *phys_dir = NULL, *name = NULL, *phys = NULL;
    floe_input *in = NULL;
    floe_output *out = NULL;
    int rc = 0;
    char hex[CONTENT_HEX + 1];
    *rec = NULL;
    if (!cs->buf && !(cs->buf = floe_malloc(COPY_CHUNK)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!cs->live_loaded)
        FLOE_CHECK(load_live_copies(t, cs, err));
    FLOE_CHECK(floe_input_open(floe_table_io(t), recorded, &in, err));
    FLOE_CHECK(content_of(in, cs->buf, hex, err));
    if (floe_keyset_find(&cs->live, hex, CONTENT_HEX))
        FLOE_FAIL(err, FLOE_EINVALID, "its bytes are already in the table as a copy named "
                  "%s-...; appending them again would count their rows twice", hex);
    size_t before = cs->given.n;
    if ((rc = floe_keyset_put(&cs->given, hex, CONTENT_HEX, 0, NULL)) < 0)
        FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
    if (cs->given.n == before)
        FLOE_FAIL(err, FLOE_EINVALID, "a file with the same bytes is given earlier in this "
                  "append: its rows would be added twice");
    FLOE_CHECK(floe_table_data_dir(t, &rec_dir, err));
    FLOE_CHECK(floe_table_resolve_path(t, rec_dir, &phys_dir, err));
    const char *base = strrchr(recorded, '/');
    if (!(name = floe_asprintf("%s-%s", hex, base ? base + 1 : recorded)) ||
        !(*rec = floe_io_join(rec_dir, name)) || !(phys = floe_io_join(phys_dir, name)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    int64_t size = floe_input_size(in);
    floe_output_options oo = {.fsync = fsync, .no_overwrite = true};
    floe_error oe;
    floe_error_clear(&oe);
    rc = floe_output_open(floe_table_io(t), phys, &oo, &out, &oe);
    for (int64_t off = 0; rc == 0 && off < size;) {
        size_t k = size - off < (int64_t)COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK;
        if ((rc = floe_input_read_at(in, off, cs->buf, k, &oe)) == 0)
            rc = floe_output_write(out, cs->buf, k, &oe);
        off += (int64_t)k;
    }
    if (rc == 0) {
        rc = floe_output_close(out, &oe);
        out = NULL;
    }
    if (rc == FLOE_EEXISTS) {
        rc = check_existing_copy(t, phys, size, err);
    } else if (rc < 0 && err) {
        *err = oe;
    }
done:
    if (rc < 0)
        floe_error_prefix(err, "copying %s into the table: ", recorded);
    floe_output_abort(out);
    floe_input_close(in);
    floe_free(name);
    floe_free(rec_dir);
    floe_free(phys_dir);
    floe_free(phys);
    if (rc < 0) {
        floe_free(*rec);
        *rec = NULL;
    }
    return rc;
}

/* Convert the NDJSON inputs into Parquet files in the table's data folder (*rec_dir as
 * recorded, *phys_dir as written; the caller frees both and *quarantine), each added to a
 * as it is written; rejected records go to the options' quarantine, else to
 * <warehouse>/_quarantine/<ns>.<table>/<uuid>.ndjson. */
static int convert_inputs(floe_table *t, const floe_table_metadata *m,
                          const floe_table_append_options *o,
                          const floe_schema *schema, const floe_partition_spec *spec,
                          floe_append *a, convert_ctx *cc, const char **ndjson, size_t nndjson,
                          char **rec_dir, char **phys_dir, char **quarantine,
                          floe_convert_result *out, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_table_data_dir(t, rec_dir, err));
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(t, *rec_dir, phys_dir, err));
    floe_convert_options co;
    floe_convert_options_init(&co);
    co.io = floe_table_io(t);
    co.schema = schema;
    FLOE_FORWARD_IF_ERROR(floe_table_parquet_options(m, &co.write, err));
    co.write.output.fsync = o->fsync;
    co.threads = o->threads;
    co.out_dir = *phys_dir;
    char uuid[37];
    floe_uuid4(uuid);
    co.file_prefix = uuid;
    co.spec = spec->nfields ? spec : NULL;
    co.strict = o->strict;
    if (o->quarantine_uri) {
        co.quarantine_uri = o->quarantine_uri;
    } else {
        floe_catalog *cat = floe_table_catalog(t);
        const char *wh = cat ? floe_catalog_warehouse(cat) : NULL;
        if (wh && floe_table_namespace(t))
            *quarantine = floe_asprintf("%s/_quarantine/%s.%s/%s.ndjson", wh,
                                       floe_table_namespace(t), floe_table_name(t), uuid);
        else
            *quarantine = floe_asprintf("%s/_quarantine/%s.ndjson", *phys_dir, uuid);
        if (!*quarantine)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        co.quarantine_uri = *quarantine;
    }
    FLOE_FORWARD_IF_ERROR(floe_metrics_config_new(m->properties, m->n_properties, schema, NULL,
                                                  &cc->cfg, err));
    cc->a = a;
    cc->phys_dir = *phys_dir;
    cc->rec_dir = *rec_dir;
    co.on_file = on_file;
    co.on_file_ctx = cc;
    if (o->progress) {
        co.progress = on_convert_progress;
        co.progress_ctx = cc;
    }
    return floe_convert(ndjson, nndjson, &co, out, err);
}

/* Parquet input `recorded` (its data file df, from its footer) copied into the data
 * folder and the copy added to a in its place. */
static int add_copy(floe_table *t, const floe_table_append_options *o, copy_state *cs,
                    floe_append *a, floe_data_file *df, const char *recorded,
                    floe_arena *arena, floe_error *err) {
    char *rec = NULL;
    FLOE_FORWARD_IF_ERROR(copy_input(t, cs, recorded, o->fsync, &rec, err));
    df->file_path = floe_arena_strdup(arena, rec);
    floe_free(rec);
    if (!df->file_path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return floe_append_add_file(a, df, err);
}

int floe_table_append_files(floe_table *t, const char *const *inputs, size_t n,
                            const floe_table_append_options *o, floe_table_append_result *res,
                            floe_error *err) {
    floe_table_append_options dflt;
    floe_table_append_options_init(&dflt);
    if (!o)
        o = &dflt;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_append *a = NULL;
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    char *rec_dir = NULL, *phys_dir = NULL, *quarantine = NULL, *mapping = NULL;
    const char **ndjson = NULL;
    size_t nndjson = 0;
    convert_ctx cc;
    memset(&cc, 0, sizeof cc);
    cc.o = o;
    floe_arena_init(&cc.arena, 64 * 1024);
    floe_table_append_result r;
    memset(&r, 0, sizeof r);
    bool need_mapping = false;
    char **split_written = NULL; /* files written by o->split, removed unless committed */
    size_t nsplit_written = 0;
    floe_keyset given = {0};     /* the Parquet inputs (local paths or URIs) */
    dup_check dc;                /* dc.paths: those added as they are (not split) */
    memset(&dc, 0, sizeof dc);
    dc.t = t;
    dc.branch = o->branch;
    dc.when = "";
    copy_state cs;               /* o->copy */
    memset(&cs, 0, sizeof cs);
    cs.branch = o->branch;
    owners ow = {0};             /* inputs added as they are: other tables' locations */
    int rc = 0;
    FLOE_CHECK(floe_table_metadata_check_writable(m, err));
    FLOE_CHECK(floe_append_new(t, &a, err));
    floe_append_set_merge(a, o->manifest_merge, 0, 0);
    for (size_t i = 0; i < o->nsummary; i++)
        FLOE_CHECK(floe_append_set_summary(a, o->summary[i].key, o->summary[i].value, err));
    if (o->once_key && o->once_value)
        FLOE_CHECK(floe_append_set_once(a, o->once_key, o->once_value, err));
    FLOE_CHECK(floe_append_set_branch(a, o->branch, err));
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *msp = floe_table_metadata_default_spec(m);
    if (!ms || !msp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema or spec");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &schema, err));
    FLOE_CHECK(floe_schema_check_defaults(schema, err));
    FLOE_CHECK(floe_partition_spec_parse_json(msp->json, strlen(msp->json), schema, &spec, err));
    ndjson = floe_calloc(n ? n : 1, sizeof *ndjson);
    if (!ndjson)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");

    /* existing Parquet files first: they fail fast on a schema mismatch */
    for (size_t i = 0; i < n; i++) {
        bool pq = o->format ? !strcasecmp(o->format, "parquet") : is_parquet_name(inputs[i]);
        if (!pq) {
            ndjson[nndjson++] = inputs[i];
            continue;
        }
        floe_data_file df;
        floe_parquet_file_report rep;
        char *abs = NULL;
        /* the table records the file where it is: a file:// URI of its absolute path for
         * local files */
        char *lp = floe_io_local_path(inputs[i]);
        if (lp) {
            char *real = realpath(lp, NULL);
            floe_free(lp);
            if (!real)
                FLOE_FAIL(err, FLOE_ENOTFOUND, "%s: no such file", inputs[i]);
            abs = floe_asprintf("file://%s", real);
            free(real); /* realpath's allocation */
            if (!abs)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        const char *recorded = abs ? abs : inputs[i];
        const char *key = abs ? abs + strlen("file://") : inputs[i];
        size_t before = given.n;
        if ((rc = floe_keyset_put(&given, key, strlen(key), 0, NULL)) < 0) {
            floe_free(abs);
            FLOE_FAIL(err, rc, "%s", floe_strerror(rc));
        }
        if (given.n == before) {
            floe_free(abs);
            FLOE_FAIL(err, FLOE_EINVALID, "%s is given twice: its rows would be added twice",
                      inputs[i]);
        }
        rc = o->skip_page_crc ? 0 : verify_page_crcs(floe_table_io(t), recorded, err);
        if (rc == 0)
            rc = floe_data_file_from_parquet_footer(floe_table_io(t), m, recorded, recorded,
                                                    NULL, 0, &cc.arena, &df, &rep, err);
        if (rc == FLOE_EINVALID && rep.several_partitions && o->split) {
            if (err)
                floe_error_clear(err);
            size_t nw = 0;
            rc = split_input(t, m, o, a, schema, recorded, &rep, &split_written, &nsplit_written,
                             &nw, err);
            floe_free(abs);
            if (rc < 0)
                goto done;
            r.parquet_files_split++;
            r.split_files += (int64_t)nw;
            continue;
        }
        if (rc == 0 && o->copy) {
            rc = add_copy(t, o, &cs, a, &df, recorded, &cc.arena, err);
            r.parquet_files_copied += rc == 0;
        } else if (rc == 0 && (rc = check_owner(t, recorded, &ow, err)) == 0) {
            rc = floe_append_add_file(a, &df, err);
            if (rc == 0 && (rc = floe_keyset_put(&dc.paths, key, strlen(key), 0, NULL)) < 0)
                floe_error_set(err, rc, "%s", floe_strerror(rc));
        }
        floe_free(abs);
        if (rc < 0)
            goto done;
        need_mapping |= !rep.has_ids;
        r.parquet_files++;
        cc.done += df.file_size_in_bytes;
        if (o->progress)
            o->progress(o->progress_ctx, cc.done);
    }
    /* the copies were checked as they were made, the files added as they are now; each
     * commit attempt checks both again on a base with another head */
    dc.contents = cs.given.n ? &cs.given : NULL;
    if (dc.paths.n) {
        FLOE_CHECK(dup_scan(&dc, m, err));
    } else {
        dc.head = target_head(m, o->branch, &dc.has_head);
        dc.checked = true;
    }
    if (dc.paths.n || dc.contents)
        floe_append_set_check(a, dup_attempt, &dc);
    if (need_mapping && !floe_table_metadata_property(m, "schema.name-mapping.default")) {
        if (!(mapping = floe_name_mapping_of_schema(schema)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }

    if (nndjson)
        FLOE_CHECK(convert_inputs(t, m, o, schema, spec, a, &cc, ndjson, nndjson, &rec_dir,
                                  &phys_dir, &quarantine, &r.convert, err));
    if (r.convert.rejected > 0 &&
        !(r.quarantine_uri = floe_strdup(o->quarantine_uri ? o->quarantine_uri : quarantine)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (r.parquet_files + r.split_files + r.convert.files == 0) {
        /* no data file to add: an empty snapshot would only say "nothing happened" */
        if (r.convert.rejected > 0)
            FLOE_FAIL(err, FLOE_EINVALID,
                      "all %" PRId64 " records were rejected; nothing was committed (the "
                      "records and the reasons are in the quarantine %s)",
                      r.convert.rejected, r.quarantine_uri);
        r.commit.noop = true;
        r.empty = true;
        goto keep;
    }
    if (mapping) /* files without ids are readable only through it: same commit */
        FLOE_CHECK(floe_append_set_property(a, "schema.name-mapping.default", mapping, err));
    rc = floe_append_commit(a, &r.commit, err);
    if (rc == FLOE_EUNKNOWN_STATE)
        goto keep;
    if (rc < 0 || r.commit.noop)
        goto remove_outputs;
    goto keep;
remove_outputs:
    for (size_t i = 0; i < (size_t)r.convert.files && r.convert.file_uris; i++)
        floe_io_delete(floe_table_io(t), r.convert.file_uris[i], NULL);
    for (size_t i = 0; i < nsplit_written; i++)
        floe_io_delete(floe_table_io(t), split_written[i], NULL);
    if (rc < 0)
        goto done;
keep:
    if (rc == 0 && res) {
        *res = r;
        memset(&r, 0, sizeof r);
    }
done:
    if (rc < 0 && rc != FLOE_EUNKNOWN_STATE && r.convert.file_uris)
        for (size_t i = 0; i < (size_t)r.convert.files; i++)
            floe_io_delete(floe_table_io(t), r.convert.file_uris[i], NULL);
    if (rc < 0 && rc != FLOE_EUNKNOWN_STATE)
        for (size_t i = 0; i < nsplit_written; i++)
            floe_io_delete(floe_table_io(t), split_written[i], NULL);
    for (size_t i = 0; i < nsplit_written; i++)
        floe_free(split_written[i]);
    floe_free(split_written);
    floe_keyset_free(&given);
    floe_keyset_free(&dc.paths);
    copy_state_free(&cs);
    floe_table_places_free(ow.places, ow.n);
    floe_table_append_result_reset(&r);
    floe_metrics_config_free(cc.cfg);
    floe_arena_reset(&cc.arena);
    floe_append_free(a);
    floe_schema_free(schema);
    floe_partition_spec_free(spec);
    floe_free(rec_dir);
    floe_free(phys_dir);
    floe_free(quarantine);
    floe_free(ndjson);
    if (mapping)
        floe_free(mapping);
    return rc;
}
