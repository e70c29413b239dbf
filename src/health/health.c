/*
 * health.c - the analysis behind `floe health`: walk a snapshot's manifests once to
 * count files per partition, read every snapshot's manifest list for the history and the
 * expiry estimate, time the planning read path, and derive recommendations.
 *
 * Reads metadata only. Spec: format/spec.md "Manifests", "Manifest Lists", "Scan
 * Planning" (inclusive projection for pruning), "Snapshots"; Iceberg's rewrite options
 * (min-input-files 5, min-file-size-bytes = 75% of the target) and the history.expire.*
 * properties for the recommendations.
 *
 * The request model and its assumptions are in floe/health.h; every figure derived from
 * it is computed here and nowhere else, so the renderings cannot disagree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/health.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/partition.h"
#include "floe/scan.h"
#include "floe/schema.h"
#include "health_internal.h"
#include "iceberg/puffin.h"

const int64_t floe_health_bucket_lower[FLOE_HEALTH_NBUCKETS] = {
    0, 1LL << 20, 10LL << 20, 64LL << 20, 128LL << 20, 512LL << 20};
const char *const floe_health_bucket_label[FLOE_HEALTH_NBUCKETS] = {
    "< 1 MB", "1-10 MB", "10-64 MB", "64-128 MB", "128-512 MB", ">= 512 MB"};

int floe_health_bucket_of(int64_t bytes) {
    int b = 0;
    while (b + 1 < FLOE_HEALTH_NBUCKETS && bytes >= floe_health_bucket_lower[b + 1])
        b++;
    return b;
}

void floe_health_options_init(floe_health_options *o) {
    memset(o, 0, sizeof *o);
    o->queries_per_day = FLOE_HEALTH_QUERIES_PER_DAY;
    o->price_get = FLOE_HEALTH_PRICE_GET;
    o->price_list = FLOE_HEALTH_PRICE_LIST;
    o->price_put = FLOE_HEALTH_PRICE_PUT;
    o->timing_runs = FLOE_HEALTH_TIMING_RUNS;
    o->window_ms = FLOE_HEALTH_WINDOW_MS;
}

/* Cap on snapshots whose manifest lists are read for the history (newest kept). */
#define HEALTH_MAX_HISTORY 5000
#define HEALTH_MAX_TIMING_RUNS 1000

/* ---------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------- */
typedef struct spec_slot {
    int32_t spec_id;
    floe_partition_spec *spec; /* bound to the current schema, or NULL */
} spec_slot;

typedef struct hctx {
    floe_table *t;
    const floe_table_metadata *m;
    floe_health_report *r;
    floe_schema *schema;       /* current schema */
    spec_slot *specs;
    size_t nspecs;
    int64_t now_ms;
    /* Where the table keeps its files, as physical paths (local) or URIs without a
     * trailing '/': the location and write.data.path when set; the storage figures count
     * only what lies under them. nroots 0: unknown (every file counts as inside). */
    char *roots[2];
    size_t nroots;
} hctx;

static const floe_partition_spec *spec_of(const hctx *c, int32_t spec_id) {
    for (size_t i = 0; i < c->nspecs; i++)
        if (c->specs[i].spec_id == spec_id)
            return c->specs[i].spec;
    return NULL;
}

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

/* recorded path -> physical path (local) or URI without a trailing '/'; NULL on error. */
static char *physical_key(const hctx *c, const char *recorded) {
    char *uri = NULL;
    floe_error e;
    if (floe_table_resolve_path(c->t, recorded, &uri, &e) < 0)
        return NULL;
    char *lp = floe_io_local_path(uri);
    char *k = lp ? lp : uri;
    if (lp)
        floe_free(uri);
    size_t n = strlen(k);
    while (n > 1 && k[n - 1] == '/')
        k[--n] = '\0';
    return k;
}

static bool under(const char *path, const char *root) {
    size_t n = strlen(root);
    return !strncmp(path, root, n) && path[n] == '/';
}

/* Whether a file the table records lies under one of its roots. */
static bool in_roots(const hctx *c, const char *recorded) {
    if (!c->nroots)
        return true;
    char *k = physical_key(c, recorded);
    bool in = !k; /* unresolvable: not told apart */
    for (size_t i = 0; k && i < c->nroots && !in; i++)
        in = under(k, c->roots[i]);
    floe_free(k);
    return in;
}

static int64_t row_groups_of(const floe_data_file *f) {
    return f->has_split_offsets && f->nsplit_offsets > 0 ? (int64_t)f->nsplit_offsets : 1;
}

/* Size of a file, for manifests whose recorded length is unknown (0 or negative). */
static int64_t file_size_of(floe_io *io, const char *uri) {
    floe_input *in = NULL;
    floe_error e;
    if (floe_input_open(io, uri, &in, &e) < 0)
        return 0;
    int64_t n = floe_input_size(in);
    floe_input_close(in);
    return n;
}

/* Copy a value into arena (bytes included). */
static int value_copy(floe_arena *a, const floe_value *v, floe_value *out) {
    *out = *v;
    if (!v->is_null && (v->type == FLOE_TYPE_STRING || v->type == FLOE_TYPE_BINARY ||
                        v->type == FLOE_TYPE_FIXED)) {
        uint8_t *p = floe_arena_memdup(a, v->v.bytes.p ? v->v.bytes.p : (const uint8_t *)"",
                                       v->v.bytes.n + 1);
        if (!p)
            return FLOE_ENOMEM;
        out->v.bytes.p = p;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Filter text for one partition (the --where of floe rewrite)
 * ------------------------------------------------------------------------------------- */
/* One name of a column path: bare when the filter reads it back as it is, else in double
 * quotes ("" for "). */
static int put_name(floe_buf *b, const char *name) {
    bool plain = name[0] && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            plain = false;
    if (plain)
        return floe_buf_printf(b, "%s", name);
    int rc = floe_buf_append_byte(b, '"');
    for (const char *p = name; rc == 0 && *p; p++)
        rc = *p == '"' ? floe_buf_append(b, "\"\"", 2) : floe_buf_append_byte(b, (uint8_t)*p);
    return rc ? rc : floe_buf_append_byte(b, '"');
}

/* The column path of f as the filter reads it: its names from the top level, joined by
 * dots, each quoted where it needs to be (a name holding a dot among them). */
static int put_column(floe_buf *b, const floe_field *f) {
    const floe_field *chain[64];
    size_t depth = 0;
    const floe_field *x = f; /* a top-level field has no parent */
    for (; x && depth < sizeof chain / sizeof chain[0]; x = x->parent)
        chain[depth++] = x;
    if (x)
        return 1; /* deeper than any partition source: no filter text */
    int rc = 0;
    while (rc == 0 && depth-- > 0) {
        rc = put_name(b, chain[depth]->name);
        if (rc == 0 && depth)
            rc = floe_buf_append_byte(b, '.');
    }
    return rc;
}

/* A literal in the filter language: strings in single quotes ('' for '), dates, times,
 * timestamps, decimals and uuids as quoted text, numbers and booleans bare. Binary and
 * fixed are refused (1): their text form is not one the filter reads back reliably. */
int health_literal(floe_buf *b, const floe_value *v) {
    if (v->type == FLOE_TYPE_BINARY || v->type == FLOE_TYPE_FIXED)
        return 1;
    if (v->type == FLOE_TYPE_STRING) {
        int rc = floe_buf_append_byte(b, '\'');
        for (size_t i = 0; rc == 0 && i < v->v.bytes.n; i++) {
            uint8_t ch = v->v.bytes.p[i];
            rc = ch == '\'' ? floe_buf_append(b, "''", 2) : floe_buf_append_byte(b, ch);
        }
        return rc ? rc : floe_buf_append_byte(b, '\'');
    }
    if ((v->type == FLOE_TYPE_FLOAT && !isfinite(v->v.f)) ||
        (v->type == FLOE_TYPE_DOUBLE && !isfinite(v->v.d)))
        return 1;
    floe_buf j;
    floe_buf_init(&j, 4096);
    floe_error e;
    int rc = floe_value_to_json(v, &j, &e);
    if (rc == 0) {
        if (j.len >= 2 && j.data[0] == '"')
            rc = floe_buf_printf(b, "'%.*s'", (int)(j.len - 2), (const char *)j.data + 1);
        else
            rc = floe_buf_append(b, j.data, j.len);
    } else {
        rc = 1;
    }
    floe_buf_free(&j);
    return rc;
}

static void civil_text(int64_t days, char *buf, size_t n) {
    int64_t y;
    unsigned mo, d;
    floe_civil_from_days(days, &y, &mo, &d);
    snprintf(buf, n, "%04lld-%02u-%02u", (long long)y, mo, d);
}

/* Range [lo_days, hi_days) or hours as filter text on column col of type st. */
static int put_time_range(floe_buf *b, const floe_field *col, floe_type_id st, int64_t lo_hours,
                          int64_t hi_hours, bool hours) {
    char lo[48], hi[48];
    if (hours) {
        char d1[24], d2[24];
        civil_text(lo_hours >= 0 ? lo_hours / 24 : -((-lo_hours + 23) / 24), d1, sizeof d1);
        civil_text(hi_hours >= 0 ? hi_hours / 24 : -((-hi_hours + 23) / 24), d2, sizeof d2);
        int h1 = (int)(((lo_hours % 24) + 24) % 24), h2 = (int)(((hi_hours % 24) + 24) % 24);
        snprintf(lo, sizeof lo, "%sT%02d:00:00", d1, h1);
        snprintf(hi, sizeof hi, "%sT%02d:00:00", d2, h2);
    } else {
        civil_text(lo_hours, lo, sizeof lo);
        civil_text(hi_hours, hi, sizeof hi);
        if (st == FLOE_TYPE_DATE && hi_hours == lo_hours + 1) {
            int rc = put_column(b, col);
            return rc ? rc : floe_buf_printf(b, " = '%s'", lo);
        }
    }
    int rc = put_column(b, col);
    if (rc == 0)
        rc = floe_buf_printf(b, " >= '%s' AND ", lo);
    if (rc == 0)
        rc = put_column(b, col);
    return rc ? rc : floe_buf_printf(b, " < '%s'", hi);
}

static int64_t month_start_days(int64_t months) {
    int64_t y = 1970 + (months >= 0 ? months / 12 : -((-months + 11) / 12));
    int64_t mo = months - (y - 1970) * 12;
    return floe_days_from_civil(y, (unsigned)(mo + 1), 1);
}

/* The where text selecting exactly tuple under spec, or NULL (not expressible). */
static char *partition_where(floe_arena *a, const floe_partition_spec *spec,
                             const floe_value *tuple, size_t n) {
    if (!spec || !spec->bound || n != spec->nfields)
        return NULL;
    floe_buf b;
    floe_buf_init(&b, 1 << 20);
    int rc = 0;
    bool any = false;
    for (size_t i = 0; rc == 0 && i < spec->nfields; i++) {
        const floe_partition_field *pf = &spec->fields[i];
        const floe_value *v = &tuple[i];
        if (pf->transform.kind == FLOE_XF_VOID)
            continue;
        if (!pf->source || !pf->source_name || pf->transform.kind == FLOE_XF_UNKNOWN ||
            pf->transform.kind == FLOE_XF_BUCKET) {
            rc = 1;
            break;
        }
        if (any)
            rc = floe_buf_printf(&b, " AND ");
        any = true;
        if (rc)
            break;
        const floe_field *col = pf->source;
        floe_type_id st = col->type;
        if (v->is_null) {
            rc = put_column(&b, col);
            if (rc == 0)
                rc = floe_buf_printf(&b, " IS NULL");
            continue;
        }
        switch (pf->transform.kind) {
        case FLOE_XF_IDENTITY:
            rc = put_column(&b, col);
            if (rc == 0)
                rc = floe_buf_printf(&b, " = ");
            if (rc == 0)
                rc = health_literal(&b, v);
            break;
        case FLOE_XF_TRUNCATE: {
            int64_t w = pf->transform.param;
            if (v->type == FLOE_TYPE_INT || v->type == FLOE_TYPE_LONG) {
                int64_t lo = v->type == FLOE_TYPE_INT ? v->v.i32 : v->v.i64;
                if (lo > INT64_MAX - w) {
                    rc = 1;
                    break;
                }
                rc = put_column(&b, col);
                if (rc == 0)
                    rc = floe_buf_printf(&b, " >= %lld AND ", (long long)lo);
                if (rc == 0)
                    rc = put_column(&b, col);
                if (rc == 0)
                    rc = floe_buf_printf(&b, " < %lld", (long long)(lo + w));
            } else if (v->type == FLOE_TYPE_STRING) {
                for (size_t k = 0; k < v->v.bytes.n; k++)
                    if (v->v.bytes.p[k] == '%' || v->v.bytes.p[k] == '_' ||
                        v->v.bytes.p[k] == '\'')
                        rc = 1;
                if (rc)
                    break;
                rc = put_column(&b, col);
                if (rc == 0)
                    rc = floe_buf_printf(&b, " LIKE '%.*s%%'", (int)v->v.bytes.n,
                                         (const char *)v->v.bytes.p);
            } else {
                rc = 1;
            }
            break;
        }
        case FLOE_XF_DAY:
            rc = put_time_range(&b, col, st, v->v.i32, (int64_t)v->v.i32 + 1, false);
            break;
        case FLOE_XF_MONTH:
            rc = put_time_range(&b, col, st, month_start_days(v->v.i32),
                                month_start_days((int64_t)v->v.i32 + 1), false);
            break;
        case FLOE_XF_YEAR:
            rc = put_time_range(&b, col, st, month_start_days((int64_t)v->v.i32 * 12),
                                month_start_days(((int64_t)v->v.i32 + 1) * 12), false);
            break;
        case FLOE_XF_HOUR:
            if (st == FLOE_TYPE_DATE) {
                rc = 1;
                break;
            }
            rc = put_time_range(&b, col, st, v->v.i32, (int64_t)v->v.i32 + 1, true);
            break;
        default:
            rc = 1;
            break;
        }
    }
    char *s = NULL;
    if (rc == 0)
        s = floe_arena_strndup(a, any ? (const char *)b.data : "", any ? b.len : 0);
    floe_buf_free(&b);
    return s;
}

/* ---------------------------------------------------------------------------------------
 * Partition accumulation
 * ------------------------------------------------------------------------------------- */
typedef struct part_acc {
    floe_health_partition pub;
    const floe_partition_spec *spec; /* bound spec (ours), NULL if it would not bind */
    floe_value *tuple;               /* first file's tuple (arena) */
    size_t ntuple;
    const uint8_t *bound;            /* first data file's lower bound of the first
                                        partition field's source column, or NULL */
    size_t nbound;
    int32_t bound_field_id;          /* the column of `bound` */
    int64_t small_row_groups;
} part_acc;

typedef struct part_map {
    part_acc *items;
    size_t n, cap;
    size_t *slots;  /* index + 1; 0 = empty */
    size_t nslots;
    floe_arena *arena;
} part_map;

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

static void part_map_free(part_map *pm) {
    floe_free(pm->items);
    floe_free(pm->slots);
    memset(pm, 0, sizeof *pm);
}

static int part_map_grow(part_map *pm) {
    size_t ns = pm->nslots ? pm->nslots * 2 : 64;
    size_t *slots = floe_calloc(ns, sizeof *slots);
    if (!slots)
        return FLOE_ENOMEM;
    for (size_t i = 0; i < pm->n; i++) {
        const part_acc *pa = &pm->items[i];
        uint64_t h = fnv1a(pa->pub.path, strlen(pa->pub.path),
                           fnv1a(&pa->pub.spec_id, sizeof pa->pub.spec_id, 14695981039346656037ULL));
        size_t j = (size_t)(h & (ns - 1));
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = i + 1;
    }
    floe_free(pm->slots);
    pm->slots = slots;
    pm->nslots = ns;
    return 0;
}

/* Find or add the partition (spec_id, path). */
static int part_map_get(part_map *pm, int32_t spec_id, const char *path, size_t plen,
                        part_acc **out, bool *created) {
    if ((pm->n + 1) * 2 > pm->nslots) {
        int rc = part_map_grow(pm);
        if (rc < 0)
            return rc;
    }
    uint64_t h = fnv1a(path, plen, fnv1a(&spec_id, sizeof spec_id, 14695981039346656037ULL));
    size_t j = (size_t)(h & (pm->nslots - 1));
    while (pm->slots[j]) {
        part_acc *pa = &pm->items[pm->slots[j] - 1];
        if (pa->pub.spec_id == spec_id && strlen(pa->pub.path) == plen &&
            memcmp(pa->pub.path, path, plen) == 0) {
            *out = pa;
            *created = false;
            return 0;
        }
        j = (j + 1) & (pm->nslots - 1);
    }
    if (pm->n == pm->cap) {
        size_t nc = pm->cap ? pm->cap * 2 : 16;
        part_acc *items = floe_realloc(pm->items, nc * sizeof *items);
        if (!items)
            return FLOE_ENOMEM;
        pm->items = items;
        pm->cap = nc;
    }
    part_acc *pa = &pm->items[pm->n];
    memset(pa, 0, sizeof *pa);
    pa->pub.spec_id = spec_id;
    pa->pub.path = floe_arena_strndup(pm->arena, path, plen);
    if (!pa->pub.path)
        return FLOE_ENOMEM;
    pm->slots[j] = ++pm->n;
    *out = pa;
    *created = true;
    return 0;
}

static void files_add(floe_health_files *f, const floe_data_file *df, int64_t min_file_size,
                      int64_t *small_rg) {
    int64_t rg = row_groups_of(df);
    int64_t sz = df->file_size_in_bytes > 0 ? df->file_size_in_bytes : 0;
    switch (df->content) {
    case FLOE_CONTENT_DATA: {
        f->data_files++;
        f->data_bytes += sz;
        f->records += df->record_count > 0 ? df->record_count : 0;
        int b = floe_health_bucket_of(sz);
        f->buckets[b]++;
        f->bucket_bytes[b] += sz;
        f->row_groups += rg;
        if (sz < min_file_size) {
            f->small_files++;
            f->small_bytes += sz;
            if (small_rg)
                *small_rg += rg;
        }
        break;
    }
    case FLOE_CONTENT_POSITION_DELETES:
        if (floe_data_file_is_dv(df)) {
            f->dv_count++;
            f->dv_bytes += df->content_size_in_bytes > 0 ? df->content_size_in_bytes : 0;
            f->dv_records += df->record_count > 0 ? df->record_count : 0;
            break;
        }
        f->pos_delete_files++;
        f->pos_delete_bytes += sz;
        f->pos_delete_records += df->record_count > 0 ? df->record_count : 0;
        f->delete_row_groups += rg;
        break;
    case FLOE_CONTENT_EQUALITY_DELETES:
        f->eq_delete_files++;
        f->eq_delete_bytes += sz;
        f->eq_delete_records += df->record_count > 0 ? df->record_count : 0;
        f->delete_row_groups += rg;
        break;
    }
}

static int cmp_part(const void *a, const void *b) {
    const part_acc *x = a, *y = b;
    if (x->pub.files.data_files != y->pub.files.data_files)
        return x->pub.files.data_files > y->pub.files.data_files ? -1 : 1;
    if (x->pub.spec_id != y->pub.spec_id)
        return x->pub.spec_id < y->pub.spec_id ? -1 : 1;
    return strcmp(x->pub.path, y->pub.path);
}

/* ---------------------------------------------------------------------------------------
 * Planning, measured: the table layer's scan planner (floe/scan.h) from a cold start,
 * i.e. reading and parsing the metadata file first, as a query engine does per query.
 * Its plan also gives the point query's request counts.
 * ------------------------------------------------------------------------------------- */
typedef struct point_pred {
    bool active;
    const floe_field *field;
    floe_value lit;
} point_pred;

static bool bound_of(const floe_bound_map *m, int32_t id, const uint8_t **p, size_t *n) {
    if (!m->present)
        return false;
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].field_id == id) {
            *p = m->items[i].p;
            *n = m->items[i].n;
            return true;
        }
    return false;
}

typedef struct plan_result {
    int64_t manifests_read;
    int64_t data_files, delete_files;
    int64_t scan_get;
} plan_result;

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return x < y ? -1 : x > y;
}

static int plan_once(const hctx *c, int64_t snapshot_id, const char *where, plan_result *out,
                     floe_error *err) {
    int rc = 0;
    floe_table_metadata *m = NULL;
    floe_scan_plan *p = NULL;
    const floe_data_file **dels = NULL;
    plan_result res = {0};
    FLOE_CHECK(floe_table_metadata_read(floe_table_io(c->t), floe_table_metadata_location(c->t), &m, err));
    /* the point query's column and literal come from the current schema (the spec's
     * source field) */
    floe_scan_options so = {.where = where,
                            .has_snapshot_id = true,
                            .snapshot_id = snapshot_id,
                            .current_schema = true,
                            .allow_missing_field_ids = true};
    FLOE_CHECK(floe_scan_plan_files(c->t, &so, &p, err));
    res.manifests_read = p->stats.manifests_read;
    res.data_files = (int64_t)p->ntasks;
    size_t nd = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        nd += p->tasks[i].ndeletes;
    if (nd) {
        dels = floe_calloc(nd, sizeof *dels);
        if (!dels)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    }
    nd = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        res.scan_get += 1 + row_groups_of(p->tasks[i].file);
        for (size_t k = 0; k < p->tasks[i].ndeletes; k++)
            dels[nd++] = p->tasks[i].deletes[k];
    }
    /* A delete file that applies to several data files is still read once. */
    if (nd)
        qsort(dels, nd, sizeof *dels, cmp_ptr);
    for (size_t i = 0; i < nd; i++)
        if (i == 0 || dels[i] != dels[i - 1]) {
            res.delete_files++;
            res.scan_get += 1 + row_groups_of(dels[i]);
        }
    *out = res;
done:
    floe_free(dels);
    floe_scan_plan_free(p);
    floe_table_metadata_free(m);
    return rc;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median, min and max of `runs` timed plans (at least one run). */
static int time_plan(const hctx *c, int64_t snapshot_id, const char *where, int runs,
                     int64_t *median, int64_t *mn, int64_t *mx, plan_result *res,
                     floe_error *err) {
    if (runs < 1)
        runs = 1;
    int64_t *ns = floe_calloc((size_t)runs, sizeof *ns);
    if (!ns)
        return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
    int rc = 0;
    for (int i = 0; i < runs; i++) {
        int64_t t0 = floe_now_ns();
        rc = plan_once(c, snapshot_id, where, res, err);
        if (rc < 0)
            break;
        ns[i] = floe_now_ns() - t0;
    }
    if (rc == 0) {
        qsort(ns, (size_t)runs, sizeof *ns, cmp_i64);
        *median = ns[runs / 2];
        *mn = ns[0];
        *mx = ns[runs - 1];
    }
    floe_free(ns);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Choosing the point query: `col = v` on the source column of the first partition field
 * of the largest partition, with v taken from that partition (its identity value, the
 * start of its time period, its truncated value, or its first file's lower bound); for an
 * unpartitioned table the first column with a lower bound in the first data file.
 * ------------------------------------------------------------------------------------- */
static bool literal_from_partition(const part_acc *pa, point_pred *pp) {
    const floe_partition_spec *spec = pa->spec;
    if (!spec || !spec->bound || spec->nfields == 0 || pa->ntuple != spec->nfields)
        return false;
    const floe_partition_field *pf = &spec->fields[0];
    const floe_field *src = pf->source;
    if (!src)
        return false;
    const floe_value *pv = &pa->tuple[0];
    pp->field = src;
    if (!pv->is_null) {
        bool is_ts = src->type == FLOE_TYPE_TIMESTAMP || src->type == FLOE_TYPE_TIMESTAMPTZ;
        bool is_ns = src->type == FLOE_TYPE_TIMESTAMP_NS || src->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        int64_t unit = is_ns ? 1000000000LL : 1000000LL;
        int64_t days = INT64_MIN;
        switch (pf->transform.kind) {
        case FLOE_XF_IDENTITY:
        case FLOE_XF_TRUNCATE:
            if (pv->type == src->type) {
                pp->lit = *pv;
                return true;
            }
            break;
        case FLOE_XF_DAY: days = pv->v.i32; break;
        case FLOE_XF_MONTH: days = month_start_days(pv->v.i32); break;
        case FLOE_XF_YEAR: days = month_start_days((int64_t)pv->v.i32 * 12); break;
        case FLOE_XF_HOUR: {
            int64_t x;
            if ((is_ts || is_ns) && !__builtin_mul_overflow((int64_t)pv->v.i32, 3600 * unit, &x)) {
                pp->lit = floe_value_i64(src->type, x);
                return true;
            }
            break;
        }
        default: break;
        }
        if (days != INT64_MIN) {
            if (src->type == FLOE_TYPE_DATE) {
                pp->lit = floe_value_date((int32_t)days);
                return true;
            }
            /* a date column promoted to timestamp_ns (v3) keeps its dates' partition
             * values, which may lie outside the nanosecond range: no such literal */
            int64_t x;
            if ((is_ts || is_ns) && !__builtin_mul_overflow(days, 86400 * unit, &x)) {
                pp->lit = floe_value_i64(src->type, x);
                return true;
            }
        }
    }
    floe_error e;
    if (pa->bound && floe_value_from_binary(src, pa->bound, pa->nbound, &pp->lit, &e) == 0)
        return true;
    return false;
}

static int point_text(floe_arena *a, const point_pred *pp, const char **out) {
    floe_buf b;
    floe_buf_init(&b, 1 << 16);
    int rc = put_column(&b, pp->field);
    if (rc == 0)
        rc = floe_buf_printf(&b, " = ");
    if (rc == 0)
        rc = health_literal(&b, &pp->lit); /* 1: no literal form, no point query */
    if (rc == 0) {
        *out = floe_arena_strndup(a, (const char *)b.data, b.len);
        rc = *out ? 0 : FLOE_ENOMEM;
    }
    floe_buf_free(&b);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * One view: the figures at one snapshot
 * ------------------------------------------------------------------------------------- */
typedef struct view_extra {
    part_acc *parts;      /* the accumulators, sorted like view->partitions */
    size_t nparts;
    double avg_entry_bytes;
} view_extra;

static void ancestry_meta(const hctx *c, const floe_snapshot *s, floe_health_metadata *md) {
    const floe_table_metadata *m = c->m;
    if (s->snapshot_id == m->current_snapshot_id) {
        md->snapshots = (int64_t)m->n_snapshots;
        int64_t oldest = INT64_MAX;
        for (size_t i = 0; i < m->n_snapshots; i++)
            if (m->snapshots[i].timestamp_ms < oldest)
                oldest = m->snapshots[i].timestamp_ms;
        md->oldest_snapshot_ms = m->n_snapshots ? oldest : 0;
        return;
    }
    /* Another snapshot: what the table looked like then is its ancestry. */
    int64_t n = 0, oldest = s->timestamp_ms;
    for (const floe_snapshot *p = s; p && n <= (int64_t)m->n_snapshots; n++) {
        if (p->timestamp_ms < oldest)
            oldest = p->timestamp_ms;
        p = p->has_parent ? floe_table_metadata_snapshot(m, p->parent_snapshot_id) : NULL;
    }
    md->snapshots = n;
    md->oldest_snapshot_ms = oldest;
}

/* For a snapshot that is not the current one: the size of the metadata file current right
 * after it, when it is still there. */
static void metadata_bytes_then(hctx *c, const floe_snapshot *s, floe_health_metadata *md) {
    const floe_metadata_log_entry *best = NULL;
    for (size_t i = 0; i < c->m->n_metadata_log; i++) {
        const floe_metadata_log_entry *le = &c->m->metadata_log[i];
        if (le->timestamp_ms >= s->timestamp_ms && (!best || le->timestamp_ms < best->timestamp_ms))
            best = le;
    }
    if (!best)
        return;
    char *u = NULL;
    floe_error e;
    if (floe_table_resolve_path(c->t, best->metadata_file, &u, &e) == 0) {
        int64_t sz = file_size_of(floe_table_io(c->t), u);
        if (sz > 0)
            md->metadata_json_bytes = sz;
        floe_free(u);
    }
}

/* A partition's first bound, for the point query: of the spec's first source column, or
 * (unpartitioned) of the first top-level primitive column with one. */
static int partition_bound(hctx *c, part_acc *pa, const floe_partition_spec *spec,
                           const floe_data_file *f, floe_error *err) {
    floe_health_report *r = c->r;
    int32_t src_id = -1;
    if (spec && spec->nfields)
        src_id = spec->fields[0].source_id;
    else if (!spec || spec->nfields == 0) {
        /* Unpartitioned: the first top-level primitive with a bound. */
        for (size_t k = 0; src_id < 0 && c->schema && k < c->schema->root.nchildren; k++) {
            const floe_field *cf = &c->schema->root.children[k];
            const uint8_t *bp;
            size_t bn;
            if (!floe_type_is_nested(cf->type) &&
                bound_of(&f->lower_bounds, cf->id, &bp, &bn))
                src_id = cf->id;
        }
    }
    const uint8_t *bp;
    size_t bn;
    if (src_id >= 0 && bound_of(&f->lower_bounds, src_id, &bp, &bn)) {
        pa->bound = floe_arena_memdup(&r->arena, bn ? bp : (const uint8_t *)"", bn + 1);
        pa->nbound = bn;
        if (!pa->bound)
            return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
        pa->bound_field_id = src_id;
    }
    return 0;
}

/* One live entry of manifest mf: counted into its partition (created on first sight, its
 * path text rendered in pb) and into the view's totals. */
static int add_entry(hctx *c, floe_health_view *v, part_map *pm, floe_buf *pb,
                     const floe_manifest_file *mf, const floe_partition_spec *spec,
                     const floe_partition_spec *rspec, const floe_data_file *f,
                     floe_error *err) {
    floe_health_report *r = c->r;
    int rc;
    floe_buf_reset(pb);
    floe_error pe;
    if (rspec && f->npartition == rspec->nfields && rspec->nfields > 0 &&
        floe_partition_spec_path(rspec, f->partition, pb, &pe) < 0) {
        floe_buf_reset(pb);
        rc = floe_buf_printf(pb, "(spec %d: unprintable partition)", (int)mf->partition_spec_id);
        if (rc < 0)
            return rc;
    }
    part_acc *pa;
    bool created;
    rc = part_map_get(pm, mf->partition_spec_id, pb->len ? (const char *)pb->data : "",
                      pb->len, &pa, &created);
    if (rc < 0)
        return floe_error_set(err, rc, "health: out of memory");
    if (created) {
        pa->spec = spec;
        if (f->npartition) {
            pa->tuple = floe_arena_alloc(&r->arena, f->npartition * sizeof *pa->tuple);
            rc = pa->tuple ? 0 : FLOE_ENOMEM;
            for (size_t k = 0; rc == 0 && k < f->npartition; k++)
                rc = value_copy(&r->arena, &f->partition[k], &pa->tuple[k]);
            if (rc < 0)
                return floe_error_set(err, rc, "health: out of memory");
            pa->ntuple = f->npartition;
        }
        pa->pub.where = partition_where(&r->arena, spec, f->partition, f->npartition);
    }
    if (!pa->bound && f->content == FLOE_CONTENT_DATA)
        FLOE_FORWARD_IF_ERROR(partition_bound(c, pa, spec, f, err));
    files_add(&pa->pub.files, f, r->min_file_size, &pa->small_row_groups);
    files_add(&v->total, f, r->min_file_size, NULL);
    if (v == &r->current && !floe_data_file_is_dv(f) && !in_roots(c, f->file_path)) {
        r->churn.live_outside_files++;
        r->churn.live_outside_bytes += f->file_size_in_bytes > 0 ? f->file_size_in_bytes : 0;
    }
    return 0;
}

/* Every manifest of the snapshot's list (list_uri): sizes and counts into md, live
 * entries into partitions (pm) and totals. */
static int walk_manifests(hctx *c, const floe_snapshot *s, const char *list_uri,
                          floe_health_view *v, part_map *pm, floe_arena *scratch, floe_buf *pb,
                          floe_error *err) {
    floe_health_report *r = c->r;
    floe_health_metadata *md = &v->meta;
    int rc = 0;
    floe_manifest_list ml;
    floe_manifest_list_read_options lo = {.allow_missing_field_ids = true,
                                          .has_snapshot_id = true,
                                          .snapshot_id = s->snapshot_id};
    FLOE_FORWARD_IF_ERROR(
        floe_manifest_list_read(floe_table_io(c->t), list_uri, &lo, scratch, &ml, err));
    /* Per spec id, for the ideal manifest count. */
    int64_t spec_bytes[64] = {0};
    int32_t spec_ids[64];
    size_t nspec_ids = 0;
    for (size_t i = 0; i < ml.nfiles; i++) {
        const floe_manifest_file *mf = &ml.files[i];
        char *uri = NULL;
        FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(c->t, mf->manifest_path, &uri, err));
        int64_t len = mf->manifest_length > 0 ? mf->manifest_length : file_size_of(floe_table_io(c->t), uri);
        md->manifests++;
        md->manifest_bytes += len;
        if (mf->content == FLOE_MANIFEST_DATA) {
            md->data_manifests++;
            size_t k = 0;
            while (k < nspec_ids && spec_ids[k] != mf->partition_spec_id)
                k++;
            if (k == nspec_ids && nspec_ids < 64)
                spec_ids[nspec_ids++] = mf->partition_spec_id;
            if (k < 64)
                spec_bytes[k] += len;
        } else {
            md->delete_manifests++;
        }
        const floe_partition_spec *spec = spec_of(c, mf->partition_spec_id);
        floe_manifest_read_options ro = {.manifest = mf,
                                         .spec = spec,
                                         .allow_missing_field_ids = true,
                                         .allow_deletion_vectors = true};
        floe_manifest_reader *mr = NULL;
        rc = floe_manifest_reader_open(floe_table_io(c->t), uri, &ro, &mr, err);
        floe_free(uri);
        if (rc < 0)
            return rc;
        const floe_partition_spec *rspec = spec ? spec : floe_manifest_reader_spec(mr);
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(mr, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            md->manifest_entries++;
            if ((rc = add_entry(c, v, pm, pb, mf, spec, rspec, &e->file, err)) < 0)
                break;
        }
        floe_manifest_reader_close(mr);
        if (rc < 0)
            return rc;
    }
    for (size_t k = 0; k < nspec_ids; k++)
        md->ideal_manifests += spec_bytes[k] > 0 ? ceil_div(spec_bytes[k], r->manifest_target_size) : 0;
    return 0;
}

/* Small files of fragmented partitions (floe_health_files.fragmented_files): at least
 * min_input_files of them, and more than their bytes need at the target size. */
static void mark_fragmented(const floe_health_report *r, floe_health_files *f) {
    if (f->small_files >= r->min_input_files &&
        f->small_files > ceil_div(f->small_bytes > 0 ? f->small_bytes : 1, r->target_file_size)) {
        f->fragmented_files = f->small_files;
        f->fragmented_bytes = f->small_bytes;
    }
}

/* The partitions, largest first, into the view (public part) and x (with the bounds). */
static int collect_partitions(hctx *c, floe_health_view *v, view_extra *x, part_map *pm,
                              floe_error *err) {
    floe_health_report *r = c->r;
    if (pm->n)
        qsort(pm->items, pm->n, sizeof *pm->items, cmp_part);
    v->npartitions = pm->n;
    if (pm->n) {
        v->partitions = floe_arena_alloc(&r->arena, pm->n * sizeof *v->partitions);
        x->parts = floe_arena_alloc(&r->arena, pm->n * sizeof *x->parts);
        if (!v->partitions || !x->parts)
            return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
        memcpy(x->parts, pm->items, pm->n * sizeof *pm->items);
        for (size_t k = 0; k < pm->n; k++) {
            mark_fragmented(r, &x->parts[k].pub.files);
            v->total.fragmented_files += x->parts[k].pub.files.fragmented_files;
            v->total.fragmented_bytes += x->parts[k].pub.files.fragmented_bytes;
            v->partitions[k] = x->parts[k].pub;
        }
        x->nparts = pm->n;
    }
    const floe_health_metadata *md = &v->meta;
    x->avg_entry_bytes = md->manifest_entries ? (double)md->manifest_bytes / (double)md->manifest_entries : 0;
    return 0;
}

/* The point query: the largest partition's tuple, or its first bound when unpartitioned;
 * its text in v->point_filter. */
static int point_query(hctx *c, floe_health_view *v, const view_extra *x, point_pred *pp,
                       floe_error *err) {
    if (x->nparts) {
        const part_acc *big = &x->parts[0];
        if (big->spec && big->spec->nfields) {
            pp->active = literal_from_partition(big, pp);
        } else if (big->bound && c->schema) {
            const floe_field *f = floe_schema_find_id(c->schema, big->bound_field_id);
            floe_error e;
            if (f && floe_value_from_binary(f, big->bound, big->nbound, &pp->lit, &e) == 0) {
                pp->field = f;
                pp->active = true;
            }
        }
    }
    if (pp->active) {
        /* The literal may borrow the partition tuple: both live in the report arena. */
        int rc = point_text(&c->r->arena, pp, &v->point_filter);
        if (rc < 0)
            return floe_error_set(err, rc, "health: out of memory");
        pp->active = rc == 0;
    }
    return 0;
}

/* Planning through the scan planner, timed, and the GET requests a full and a point
 * query take. A table the planner refuses (a deletion vector, a filter it cannot parse)
 * still gets its figures: the error is reported instead of the times. */
static int plan_requests(hctx *c, const floe_snapshot *s, floe_health_view *v,
                         const point_pred *pp, floe_error *err) {
    floe_health_report *r = c->r;
    const floe_health_metadata *md = &v->meta;
    plan_result full = {0}, point = {0};
    bool point_ok = false;
    int runs = r->opts.timing_runs;
    floe_error pe;
    floe_error_clear(&pe);
    int prc = 0;
    if (runs > 0) {
        prc = time_plan(c, s->snapshot_id, NULL, runs, &v->timing.full_ns, &v->timing.full_min_ns,
                        &v->timing.full_max_ns, &full, &pe);
        if (prc == 0)
            v->timing.runs = runs;
    }
    if (prc == 0 && pp->active) {
        prc = time_plan(c, s->snapshot_id, v->point_filter, runs, &v->timing.point_ns,
                        &v->timing.point_min_ns, &v->timing.point_max_ns, &point, &pe);
        point_ok = prc == 0;
    }
    if (prc == FLOE_ENOMEM)
        return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
    if (prc < 0) {
        v->planning_error = floe_arena_strdup(&r->arena, pe.msg[0] ? pe.msg : floe_strerror(prc));
        if (!v->planning_error)
            return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
        if (!point_ok)
            v->timing.point_ns = v->timing.point_min_ns = v->timing.point_max_ns = 0;
    }
    if (point_ok) {
        v->req.point_manifests = point.manifests_read;
        v->req.point_files = point.data_files;
        v->req.point_scan_get = point.scan_get;
    } else {
        /* No point query (or the planner refused it): it costs what a full scan does. */
        v->point_filter = pp->active && !v->planning_error ? v->point_filter : NULL;
        v->req.point_manifests = md->manifests;
        v->req.point_files = v->total.data_files;
        v->req.point_scan_get = v->total.data_files + v->total.row_groups +
                                v->total.pos_delete_files + v->total.eq_delete_files +
                                v->total.dv_count + v->total.delete_row_groups;
    }
    v->req.plan_get = 2 + md->manifests;
    v->req.point_plan_get = 2 + v->req.point_manifests;
    v->req.scan_get = v->total.data_files + v->total.row_groups + v->total.pos_delete_files +
                      v->total.eq_delete_files + v->total.dv_count + v->total.delete_row_groups;
    return 0;
}

/* The LIST request of a table found by folder, and the monthly requests and cost. */
static int request_costs(hctx *c, floe_health_view *v, floe_error *err) {
    floe_health_report *r = c->r;
    if (!floe_table_catalog(c->t)) {
        /* Found by folder: without a version hint the metadata folder is listed. */
        char *dir = floe_strdup(floe_table_metadata_location(c->t));
        if (!dir)
            return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
        char *slash = strrchr(dir, '/');
        bool hint = false;
        if (slash) {
            *slash = 0;
            char *h = floe_io_join(dir, "version-hint.text");
            floe_error e;
            if (!h || floe_io_exists(floe_table_io(c->t), h, &hint, &e) < 0)
                hint = false;
            floe_free(h);
        }
        floe_free(dir);
        v->req.plan_list = hint ? 0 : 1;
    }
    double month = r->opts.queries_per_day * FLOE_HEALTH_DAYS_PER_MONTH;
    v->req.monthly_get = month * (double)(v->req.plan_get + v->req.scan_get);
    v->req.monthly_list = month * (double)v->req.plan_list;
    v->req.monthly_cost = v->req.monthly_get / 1000.0 * r->opts.price_get +
                          v->req.monthly_list / 1000.0 * r->opts.price_list;
    v->req.point_monthly_get = month * (double)(v->req.point_plan_get + v->req.point_scan_get);
    v->req.point_monthly_cost = v->req.point_monthly_get / 1000.0 * r->opts.price_get +
                                v->req.monthly_list / 1000.0 * r->opts.price_list;
    return 0;
}

/* The view of snapshot s (NULL: the table has none): metadata sizes, manifests and
 * partitions, the point query, planning times and the requests queries take. */
static int view_compute(hctx *c, const floe_snapshot *s, floe_health_view *v, view_extra *x,
                        floe_error *err) {
    floe_health_report *r = c->r;
    int rc = 0;
    part_map pm = {.arena = &r->arena};
    floe_arena scratch;
    floe_arena_init(&scratch, 64 << 10);
    char *list_uri = NULL;
    floe_buf pb;
    floe_buf_init(&pb, 1 << 20);
    memset(v, 0, sizeof *v);
    memset(x, 0, sizeof *x);
    floe_health_metadata *md = &v->meta;
    md->metadata_json_bytes = file_size_of(floe_table_io(c->t), floe_table_metadata_location(c->t));
    md->metadata_log = (int64_t)c->m->n_metadata_log;
    /* Figures that need no snapshot. */
    v->req.plan_get = 1;
    v->req.point_plan_get = 1;
    if (!s) {
        md->snapshots = 0;
    } else {
        v->has_snapshot = true;
        v->snapshot_id = s->snapshot_id;
        v->timestamp_ms = s->timestamp_ms;
        v->sequence_number = s->sequence_number;
        ancestry_meta(c, s, md);
        md->oldest_age_ms = md->oldest_snapshot_ms ? c->now_ms - md->oldest_snapshot_ms : 0;
        if (s->snapshot_id != c->m->current_snapshot_id)
            metadata_bytes_then(c, s, md);
        if (!s->manifest_list)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "health: snapshot %lld lists its manifests inline (v1 without a manifest "
                      "list)", (long long)s->snapshot_id);
        FLOE_CHECK(floe_table_resolve_path(c->t, s->manifest_list, &list_uri, err));
        md->manifest_list_bytes = file_size_of(floe_table_io(c->t), list_uri);
        FLOE_CHECK(walk_manifests(c, s, list_uri, v, &pm, &scratch, &pb, err));
        FLOE_CHECK(collect_partitions(c, v, x, &pm, err));
        point_pred pp = {0};
        FLOE_CHECK(point_query(c, v, x, &pp, err));
        FLOE_CHECK(plan_requests(c, s, v, &pp, err));
    }
    FLOE_CHECK(request_costs(c, v, err));
done:
    floe_buf_free(&pb);
    floe_free(list_uri);
    floe_arena_reset(&scratch);
    part_map_free(&pm);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * History: every snapshot's manifest list (newest HEALTH_MAX_HISTORY), and the manifests
 * each reaches, for the growth chart and the expiry estimate.
 * ------------------------------------------------------------------------------------- */
typedef struct mref {
    const char *path;
    int64_t bytes;
    bool retained;
} mref;

typedef struct hist_state {
    mref *refs;
    size_t n, cap;
    size_t *slots;
    size_t nslots;
    bool complete;              /* every list was read */
    int64_t *list_bytes;        /* per snapshot index of m->snapshots */
    const char ***snap_manifests; /* per snapshot: index into refs via slots... */
} hist_state;

static const char *summary_get(const floe_snapshot *s, const char *key) {
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, key))
            return s->summary[i].value;
    return NULL;
}

static int64_t summary_int(const floe_snapshot *s, const char *key) {
    const char *v = summary_get(s, key);
    int64_t x;
    return floe_parse_i64_cstr(v, &x) && x >= 0 ? x : -1;
}

static int cmp_snap_time(const void *a, const void *b) {
    const floe_snapshot *x = *(const floe_snapshot *const *)a, *y = *(const floe_snapshot *const *)b;
    if (x->timestamp_ms != y->timestamp_ms)
        return x->timestamp_ms < y->timestamp_ms ? -1 : 1;
    if (x->sequence_number != y->sequence_number)
        return x->sequence_number < y->sequence_number ? -1 : 1;
    return 0;
}

/* Find or add a manifest path in the reference set; *idx its index. */
static int mref_get(hist_state *h, const char *path, int64_t bytes, floe_arena *a, size_t *idx) {
    if ((h->n + 1) * 2 > h->nslots) {
        size_t ns = h->nslots ? h->nslots * 2 : 256;
        size_t *slots = floe_calloc(ns, sizeof *slots);
        if (!slots)
            return FLOE_ENOMEM;
        for (size_t i = 0; i < h->n; i++) {
            size_t j = (size_t)(fnv1a(h->refs[i].path, strlen(h->refs[i].path), 14695981039346656037ULL) & (ns - 1));
            while (slots[j])
                j = (j + 1) & (ns - 1);
            slots[j] = i + 1;
        }
        floe_free(h->slots);
        h->slots = slots;
        h->nslots = ns;
    }
    size_t j = (size_t)(fnv1a(path, strlen(path), 14695981039346656037ULL) & (h->nslots - 1));
    while (h->slots[j]) {
        if (!strcmp(h->refs[h->slots[j] - 1].path, path)) {
            *idx = h->slots[j] - 1;
            return 0;
        }
        j = (j + 1) & (h->nslots - 1);
    }
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        mref *refs = floe_realloc(h->refs, nc * sizeof *refs);
        if (!refs)
            return FLOE_ENOMEM;
        h->refs = refs;
        h->cap = nc;
    }
    h->refs[h->n].path = floe_arena_strdup(a, path);
    if (!h->refs[h->n].path)
        return FLOE_ENOMEM;
    h->refs[h->n].bytes = bytes;
    h->refs[h->n].retained = false;
    h->slots[j] = ++h->n;
    *idx = h->n - 1;
    return 0;
}

/* Snapshots the recommended expiry keeps: the newest `retain` of main's ancestry, every
 * ref head, and snapshots outside the ancestry younger than the age limit. */
static bool expire_keeps(const hctx *c, const floe_snapshot *s, const int64_t *anc, size_t retain,
                         int64_t max_age) {
    for (size_t i = 0; i < retain; i++)
        if (anc[i] == s->snapshot_id)
            return true;
    for (size_t i = 0; i < c->m->n_refs; i++)
        if (c->m->refs[i].snapshot_id == s->snapshot_id)
            return true;
    if (s->snapshot_id == c->m->current_snapshot_id)
        return true;
    return c->now_ms - s->timestamp_ms <= max_age;
}

typedef struct expire_plan {
    int64_t retain_last;
    int64_t expired;
    int64_t list_bytes, manifest_bytes, json_bytes;
    bool manifests_known;
} expire_plan;

/* One history point from snapshot s: its summary's totals, then, when its manifest list
 * can be read, the counts of its manifests (which override the summary's) and the
 * manifests it reaches, as indices into h's manifest refs in *list (*nlist of them). An
 * unreadable list leaves the history incomplete, not failed. */
static int history_point(hctx *c, hist_state *h, const floe_snapshot *s,
                         floe_health_history_point *hp, size_t **list, size_t *nlist,
                         floe_error *err) {
    floe_health_report *r = c->r;
    memset(hp, 0, sizeof *hp);
    hp->snapshot_id = s->snapshot_id;
    hp->timestamp_ms = s->timestamp_ms;
    hp->sequence_number = s->sequence_number;
    hp->operation = s->operation ? floe_arena_strdup(&r->arena, s->operation) : NULL;
    hp->data_files = summary_int(s, "total-data-files");
    hp->records = summary_int(s, "total-records");
    hp->delete_files = summary_int(s, "total-delete-files");
    if (!s->manifest_list) {
        h->complete = false;
        return 0;
    }
    char *uri = NULL;
    floe_error e;
    floe_arena la;
    floe_arena_init(&la, 16 << 10);
    floe_manifest_list ml;
    floe_manifest_list_read_options lo = {.allow_missing_field_ids = true,
                                          .has_snapshot_id = true,
                                          .snapshot_id = s->snapshot_id};
    if (floe_table_resolve_path(c->t, s->manifest_list, &uri, &e) < 0 ||
        floe_manifest_list_read(floe_table_io(c->t), uri, &lo, &la, &ml, &e) < 0) {
        h->complete = false;
        floe_free(uri);
        floe_arena_reset(&la);
        return 0;
    }
    int rc = 0;
    hp->list_read = true;
    r->current.meta.manifest_lists++;
    r->current.meta.all_manifest_list_bytes += file_size_of(floe_table_io(c->t), uri);
    floe_free(uri);
    int64_t files = 0, rows = 0, dfiles = 0;
    bool counts = true;
    *list = floe_calloc(ml.nfiles ? ml.nfiles : 1, sizeof **list);
    if (!*list)
        FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    for (size_t i = 0; i < ml.nfiles; i++) {
        const floe_manifest_file *mf = &ml.files[i];
        hp->manifests++;
        hp->manifest_bytes += mf->manifest_length > 0 ? mf->manifest_length : 0;
        if (mf->added_files_count < 0 || mf->existing_files_count < 0 ||
            mf->added_rows_count < 0 || mf->existing_rows_count < 0)
            counts = false;
        else if (mf->content == FLOE_MANIFEST_DATA) {
            files += mf->added_files_count + mf->existing_files_count;
            rows += mf->added_rows_count + mf->existing_rows_count;
        } else {
            dfiles += mf->added_files_count + mf->existing_files_count;
        }
        size_t idx;
        rc = mref_get(h, mf->manifest_path, mf->manifest_length > 0 ? mf->manifest_length : 0,
                      &r->arena, &idx);
        if (rc < 0)
            FLOE_FAIL(err, rc, "health: out of memory");
        (*list)[(*nlist)++] = idx;
    }
    if (counts) {
        hp->data_files = files;
        hp->records = rows;
        hp->delete_files = dfiles;
    }
done:
    floe_arena_reset(&la);
    return rc;
}

/* How many of main's ancestry (anc, newest first, nanc of them) the recommended expiry
 * keeps: those younger than max_age, at least the table's min-snapshots-to-keep, at least
 * one. */
static size_t expire_retain(const hctx *c, const int64_t *anc, size_t nanc, int64_t max_age) {
    const floe_table_metadata *m = c->m;
    int64_t min_keep = floe_table_metadata_property_int(m, FLOE_PROP_MIN_SNAPSHOTS_TO_KEEP, 1);
    size_t young = 0;
    for (size_t i = 0; i < nanc; i++) {
        const floe_snapshot *s = floe_table_metadata_snapshot(m, anc[i]);
        if (s && c->now_ms - s->timestamp_ms <= max_age)
            young = i + 1;
    }
    size_t retain = young;
    if ((int64_t)retain < min_keep)
        retain = (size_t)(min_keep > 0 ? min_keep : 1);
    if (retain > nanc)
        retain = nanc;
    return retain ? retain : 1;
}

/* What expiring the history's snapshots (snaps, nh of them, the manifests each reaches in
 * lists) that the expiry keeps no reason for would free: their entries in the metadata
 * file, their manifest lists, and (when every list was read) the manifests only they
 * reach. */
static void expire_estimate(hctx *c, hist_state *h, const floe_snapshot *const *snaps, size_t nh,
                            size_t *const *lists, const size_t *nlists, const int64_t *anc,
                            size_t retain, int64_t max_age, expire_plan *ep) {
    floe_health_report *r = c->r;
    for (size_t k = 0; k < nh; k++) {
        const floe_snapshot *s = snaps[k];
        if (expire_keeps(c, s, anc, retain, max_age)) {
            for (size_t i = 0; i < nlists[k]; i++)
                h->refs[lists[k][i]].retained = true;
            continue;
        }
        ep->expired++;
        /* The snapshot's entry in the metadata file: its fixed keys and its summary. */
        int64_t jb = 160 + (s->manifest_list ? (int64_t)strlen(s->manifest_list) : 0);
        for (size_t i = 0; i < s->n_summary; i++)
            jb += (int64_t)(strlen(s->summary[i].key) + strlen(s->summary[i].value) + 8);
        ep->json_bytes += jb + 60; /* + its snapshot-log entry */
        if (!r->history[k].list_read)
            continue;
        char *uri = NULL;
        floe_error e;
        if (floe_table_resolve_path(c->t, s->manifest_list, &uri, &e) == 0)
            ep->list_bytes += file_size_of(floe_table_io(c->t), uri);
        floe_free(uri);
    }
    ep->manifests_known = h->complete;
    if (h->complete)
        for (size_t i = 0; i < h->n; i++)
            if (!h->refs[i].retained)
                ep->manifest_bytes += h->refs[i].bytes;
}

/* The report's history (the newest HEALTH_MAX_HISTORY snapshots by time) and, in ep, what
 * the recommended expiry would remove. */
static int history_compute(hctx *c, expire_plan *ep, floe_error *err) {
    floe_health_report *r = c->r;
    const floe_table_metadata *m = c->m;
    int rc = 0;
    hist_state h = {.complete = true};
    const floe_snapshot **order = NULL;
    size_t **lists = NULL;   /* per history point: manifest ref indices */
    size_t *nlists = NULL;
    int64_t *anc = NULL;
    memset(ep, 0, sizeof *ep);
    if (m->n_snapshots == 0)
        return 0;
    order = floe_calloc(m->n_snapshots, sizeof *order);
    anc = floe_calloc(m->n_snapshots, sizeof *anc);
    if (!order || !anc)
        FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    for (size_t i = 0; i < m->n_snapshots; i++)
        order[i] = &m->snapshots[i];
    qsort(order, m->n_snapshots, sizeof *order, cmp_snap_time);
    size_t first = m->n_snapshots > HEALTH_MAX_HISTORY ? m->n_snapshots - HEALTH_MAX_HISTORY : 0;
    size_t nh = m->n_snapshots - first;
    if (first)
        h.complete = false;
    r->history = floe_arena_alloc(&r->arena, nh * sizeof *r->history);
    lists = floe_calloc(nh, sizeof *lists);
    nlists = floe_calloc(nh, sizeof *nlists);
    if (!r->history || !lists || !nlists)
        FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    r->nhistory = nh;
    for (size_t k = 0; k < nh; k++)
        FLOE_CHECK(history_point(c, &h, order[first + k], &r->history[k], &lists[k], &nlists[k],
                                 err));

    /* Expiry: main's ancestry, newest first. */
    size_t nanc = 0;
    for (const floe_snapshot *p = floe_table_metadata_current_snapshot(m);
         p && nanc < m->n_snapshots;
         p = p->has_parent ? floe_table_metadata_snapshot(m, p->parent_snapshot_id) : NULL)
        anc[nanc++] = p->snapshot_id;
    int64_t max_age = floe_table_metadata_property_int(m, FLOE_PROP_MAX_SNAPSHOT_AGE_MS, 432000000);
    size_t retain = expire_retain(c, anc, nanc, max_age);
    ep->retain_last = (int64_t)retain;
    expire_estimate(c, &h, order + first, nh, lists, nlists, anc, retain, max_age, ep);
done:
    if (lists)
        for (size_t k = 0; k < r->nhistory; k++)
            floe_free(lists[k]);
    floe_free(lists);
    floe_free(nlists);
    floe_free(order);
    floe_free(anc);
    floe_free(h.refs);
    floe_free(h.slots);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Recommendations
 * ------------------------------------------------------------------------------------- */
typedef struct rec_list {
    floe_health_rec *items;
    size_t n, cap;
} rec_list;

static int rec_push(rec_list *l, const floe_health_rec *rec) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        floe_health_rec *items = floe_realloc(l->items, nc * sizeof *items);
        if (!items)
            return FLOE_ENOMEM;
        l->items = items;
        l->cap = nc;
    }
    l->items[l->n++] = *rec;
    return 0;
}

static char *arena_buf(floe_arena *a, floe_buf *b) {
    return floe_arena_strndup(a, b->len ? (const char *)b->data : "", b->len);
}

/* "floe VERB REF" + extra (already quoted). */
static char *command(floe_arena *a, const char *verb, const char *ref, const char *where,
                     const char *extra) {
    floe_buf b;
    floe_buf_init(&b, 1 << 20);
    int rc = floe_buf_printf(&b, "floe %s ", verb);
    if (rc == 0)
        rc = floe_health_shell_quote(&b, ref);
    if (rc == 0 && where) {
        rc = floe_buf_printf(&b, " --where ");
        if (rc == 0)
            rc = floe_health_shell_quote(&b, where);
    }
    if (rc == 0 && extra)
        rc = floe_buf_printf(&b, " %s", extra);
    char *s = rc == 0 ? arena_buf(a, &b) : NULL;
    floe_buf_free(&b);
    return s;
}

typedef struct rewrite_est {
    int64_t inputs, input_bytes, before_get, after_get, outputs, deletes;
} rewrite_est;

/* What rewriting the small files (and applying the deletes) of one partition saves. */
static bool rewrite_estimate(const floe_health_report *r, const part_acc *pa, rewrite_est *out) {
    const floe_health_files *f = &pa->pub.files;
    int64_t deletes = f->pos_delete_files + f->eq_delete_files + f->dv_count;
    rewrite_est e = {0};
    if (f->small_files >= r->min_input_files) {
        e.inputs = f->small_files;
        e.input_bytes = f->small_bytes;
        e.before_get = f->small_files + pa->small_row_groups;
    } else if (deletes > 0 && f->data_files > 0) {
        e.inputs = f->data_files;
        e.input_bytes = f->data_bytes;
        e.before_get = f->data_files + f->row_groups;
    } else {
        return false;
    }
    e.deletes = deletes;
    e.before_get += deletes + f->delete_row_groups;
    e.outputs = e.input_bytes > 0 ? ceil_div(e.input_bytes, r->target_file_size) : 1;
    int64_t out_rg = ceil_div(e.input_bytes, r->row_group_size);
    if (out_rg < e.outputs)
        out_rg = e.outputs;
    e.after_get = e.outputs + out_rg;
    if (e.after_get >= e.before_get)
        return false;
    *out = e;
    return true;
}

static int cmp_rec(const void *a, const void *b) {
    const floe_health_rec *x = a, *y = b;
    if (x->monthly_requests_saved != y->monthly_requests_saved)
        return x->monthly_requests_saved > y->monthly_requests_saved ? -1 : 1;
    if (x->requests_saved != y->requests_saved)
        return x->requests_saved > y->requests_saved ? -1 : 1;
    if (x->metadata_bytes_saved != y->metadata_bytes_saved)
        return x->metadata_bytes_saved > y->metadata_bytes_saved ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

static void rec_money(const floe_health_report *r, floe_health_rec *rec) {
    rec->monthly_requests_saved =
        (double)rec->requests_saved * r->opts.queries_per_day * FLOE_HEALTH_DAYS_PER_MONTH;
    rec->monthly_cost_saved = rec->monthly_requests_saved / 1000.0 * r->opts.price_get;
}

static int recs_compute(hctx *c, const view_extra *x, const expire_plan *ep, floe_error *err) {
    floe_health_report *r = c->r;
    floe_arena *a = &r->arena;
    const floe_health_view *v = &r->current;
    rec_list l = {0};
    int rc = 0;
    char text[512];

    /* Rewrites. */
    size_t qualifying = 0;
    bool inexpressible = false;
    rewrite_est sum = {0};
    for (size_t i = 0; i < x->nparts; i++) {
        rewrite_est e;
        if (!rewrite_estimate(r, &x->parts[i], &e))
            continue;
        qualifying++;
        if (!x->parts[i].pub.where)
            inexpressible = true;
        sum.inputs += e.inputs;
        sum.input_bytes += e.input_bytes;
        sum.before_get += e.before_get;
        sum.after_get += e.after_get;
        sum.outputs += e.outputs;
        sum.deletes += e.deletes;
    }
    bool table_wide = qualifying > FLOE_HEALTH_MAX_PARTITION_RECS || inexpressible ||
                      (qualifying == 1 && x->nparts == 1);
    if (qualifying && table_wide) {
        floe_health_rec rec = {.kind = FLOE_HEALTH_REC_REWRITE_TABLE};
        rec.command = command(a, "rewrite", r->table_ref, NULL, NULL);
        /* Each partition is written apart, so the outputs are at least one per partition:
         * more than the bytes fill at the target size when the partitions are small.
         * The size then said is their average, not the target. */
        char outs[96], avg[32];
        if (sum.outputs > ceil_div(sum.input_bytes > 0 ? sum.input_bytes : 1,
                                   r->target_file_size))
            snprintf(outs, sizeof outs, "~%lld file%s of ~%s on average (each partition "
                     "apart)", (long long)sum.outputs, health_s(sum.outputs),
                     health_fmt_bytes((double)sum.input_bytes / (double)sum.outputs, avg,
                                      sizeof avg));
        else
            snprintf(outs, sizeof outs, "~%lld file%s of up to %.4g MB",
                     (long long)sum.outputs, health_s(sum.outputs),
                     (double)r->target_file_size / 1048576.0);
        snprintf(text, sizeof text,
                 "%zu partition%s hold%s %lld small file%s (under %.4g MB)%s: rewriting "
                 "them into %s saves %lld GET%s per full scan",
                 qualifying, health_s((int64_t)qualifying), qualifying == 1 ? "s" : "",
                 (long long)sum.inputs, health_s(sum.inputs),
                 (double)r->min_file_size / 1048576.0,
                 sum.deletes ? " and delete files" : "", outs,
                 (long long)(sum.before_get - sum.after_get),
                 health_s(sum.before_get - sum.after_get));
        rec.reason = floe_arena_strdup(a, text);
        rec.requests_saved = sum.before_get - sum.after_get;
        rec.metadata_bytes_saved =
            (int64_t)((double)(sum.inputs + sum.deletes - sum.outputs) * x->avg_entry_bytes);
        rec.files_before = sum.inputs;
        rec.files_after = sum.outputs;
        rec.one_off_get = sum.before_get;
        rec.one_off_put = sum.outputs + 3;
        rec_money(r, &rec);
        if (!rec.command || !rec.reason || rec_push(&l, &rec) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    } else {
        for (size_t i = 0; i < x->nparts; i++) {
            const part_acc *pa = &x->parts[i];
            rewrite_est e;
            if (!rewrite_estimate(r, pa, &e))
                continue;
            floe_health_rec rec = {.kind = FLOE_HEALTH_REC_REWRITE_PARTITION};
            rec.partition = pa->pub.path;
            rec.command = command(a, "rewrite", r->table_ref,
                                  pa->pub.where && *pa->pub.where ? pa->pub.where : NULL, NULL);
            snprintf(text, sizeof text,
                     "%lld of %lld file%s %s under %.4g MB%s: ~%lld file%s after rewriting, "
                     "%lld fewer GET%s per full scan",
                     (long long)pa->pub.files.small_files, (long long)pa->pub.files.data_files,
                     health_s(pa->pub.files.data_files),
                     pa->pub.files.small_files == 1 ? "is" : "are",
                     (double)r->min_file_size / 1048576.0,
                     e.deletes ? ", with delete files to apply" : "", (long long)e.outputs,
                     health_s(e.outputs), (long long)(e.before_get - e.after_get),
                     health_s(e.before_get - e.after_get));
            rec.reason = floe_arena_strdup(a, text);
            rec.requests_saved = e.before_get - e.after_get;
            rec.metadata_bytes_saved =
                (int64_t)((double)(e.inputs + e.deletes - e.outputs) * x->avg_entry_bytes);
            rec.files_before = e.inputs;
            rec.files_after = e.outputs;
            rec.one_off_get = e.before_get;
            rec.one_off_put = e.outputs + 3;
            rec_money(r, &rec);
            if (!rec.command || !rec.reason || rec_push(&l, &rec) < 0)
                FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
        }
    }

    /* Manifests: one GET each per plan; a table needs about bytes / target of them. */
    int64_t ideal = v->meta.ideal_manifests ? v->meta.ideal_manifests : 1;
    int64_t excess = v->meta.data_manifests - ideal;
    if (excess >= 4 && v->meta.data_manifests >= 2 * ideal) {
        floe_health_rec rec = {.kind = FLOE_HEALTH_REC_REWRITE_MANIFESTS};
        rec.command = command(a, "rewrite-manifests", r->table_ref, NULL, NULL);
        snprintf(text, sizeof text,
                 "%lld data manifests where ~%lld would hold the same entries at %lld MB "
                 "each: %lld fewer GET%s per plan",
                 (long long)v->meta.data_manifests, (long long)ideal,
                 (long long)(r->manifest_target_size >> 20), (long long)excess,
                 health_s(excess));
        rec.reason = floe_arena_strdup(a, text);
        rec.requests_saved = excess;
        rec.files_before = v->meta.data_manifests;
        rec.files_after = ideal;
        rec.one_off_get = 2 + v->meta.data_manifests;
        rec.one_off_put = ideal + 2;
        rec_money(r, &rec);
        if (!rec.command || !rec.reason || rec_push(&l, &rec) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    }

    /* Deletes (format v3): every equality delete file is read by every scan and its keys
     * compared with the rows of every older data file, every v2 position delete file is
     * read too; floe rewrite-deletes leaves one Puffin file of vectors in their place. */
    int64_t resolvable = v->total.eq_delete_files + v->total.pos_delete_files;
    if (c->m->format_version >= 3 &&
        (v->total.eq_delete_files > 0 || v->total.pos_delete_files > 1)) {
        floe_health_rec rec = {.kind = FLOE_HEALTH_REC_REWRITE_DELETES};
        rec.command = command(a, "rewrite-deletes", r->table_ref, NULL, NULL);
        int64_t saved = resolvable - 1;
        snprintf(text, sizeof text,
                 "%lld equality and %lld position delete file%s apply to scans (equality "
                 "keys compared with every older row): resolving them into deletion vectors "
                 "leaves one Puffin file, %lld fewer GET%s per full scan",
                 (long long)v->total.eq_delete_files, (long long)v->total.pos_delete_files,
                 health_s(v->total.pos_delete_files), (long long)saved, health_s(saved));
        rec.reason = floe_arena_strdup(a, text);
        rec.requests_saved = saved;
        rec.files_before = resolvable;
        rec.files_after = 1;
        rec.one_off_get = resolvable + v->total.data_files; /* at most every data file read */
        rec.one_off_put = 4; /* the Puffin file, manifests, list, metadata */
        rec_money(r, &rec);
        if (!rec.command || !rec.reason || rec_push(&l, &rec) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    }

    /* Snapshots past the table's history.expire.* settings. */
    if (ep->expired > 0) {
        floe_health_rec rec = {.kind = FLOE_HEALTH_REC_EXPIRE};
        char extra[64];
        snprintf(extra, sizeof extra, "--retain-last %lld", (long long)ep->retain_last);
        rec.command = command(a, "expire", r->table_ref, NULL, extra);
        int64_t max_age = floe_table_metadata_property_int(c->m, FLOE_PROP_MAX_SNAPSHOT_AGE_MS, 432000000);
        snprintf(text, sizeof text,
                 "%lld of %zu snapshots %s older than %.1f days (history.expire.max-snapshot-"
                 "age-ms): expiring %s drops %s manifest list%s%s and ~%lld bytes of "
                 "the metadata file",
                 (long long)ep->expired, c->m->n_snapshots, ep->expired == 1 ? "is" : "are",
                 (double)max_age / 86400000.0, ep->expired == 1 ? "it" : "them",
                 ep->expired == 1 ? "its" : "their", health_s(ep->expired),
                 ep->manifests_known ? (ep->expired == 1 ? " and the manifests only it references" : " and the manifests only they reference") : "",
                 (long long)ep->json_bytes);
        rec.reason = floe_arena_strdup(a, text);
        rec.metadata_bytes_saved = ep->list_bytes + ep->manifest_bytes + ep->json_bytes;
        rec.files_before = (int64_t)c->m->n_snapshots;
        rec.files_after = (int64_t)c->m->n_snapshots - ep->expired;
        rec.one_off_get = 1 + (int64_t)c->m->n_snapshots;
        rec.one_off_put = 1;
        rec_money(r, &rec);
        if (!rec.command || !rec.reason || rec_push(&l, &rec) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    }

    if (l.n) {
        qsort(l.items, l.n, sizeof *l.items, cmp_rec);
        r->recs = floe_arena_memdup(a, l.items, l.n * sizeof *l.items);
        if (!r->recs)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
        r->nrecs = l.n;
    }
done:
    floe_free(l.items);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Entry point
 * ------------------------------------------------------------------------------------- */
void floe_health_report_free(floe_health_report *r) {
    if (!r)
        return;
    floe_arena_reset(&r->arena);
    floe_free(r);
}

/* ---------------------------------------------------------------------------------------
 * Churn: write amplification over the window, bytes on disk versus live
 * ------------------------------------------------------------------------------------- */

typedef struct disk_ctx {
    const char *md;           /* the metadata folder, physical, no trailing '/' */
    size_t mdl;
    floe_health_churn *ch;
} disk_ctx;

static int on_disk_entry(void *vctx, const floe_io_entry *e) {
    disk_ctx *d = vctx;
    bool md = !strncmp(e->uri, d->md, d->mdl) && e->uri[d->mdl] == '/';
    if (md) {
        d->ch->disk_metadata_files++;
        d->ch->disk_metadata_bytes += e->size;
    } else {
        d->ch->disk_data_files++;
        d->ch->disk_data_bytes += e->size;
    }
    return 0;
}

static int churn_compute(hctx *c, floe_error *err) {
    floe_health_report *r = c->r;
    floe_health_churn *ch = &r->churn;
    const floe_table_metadata *m = c->m;
    ch->window_ms = r->opts.window_ms;
    ch->to_ms = c->now_ms;
    ch->from_ms = -1;
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        if (s->timestamp_ms < c->now_ms - ch->window_ms || s->timestamp_ms > c->now_ms)
            continue;
        if (ch->from_ms < 0 || s->timestamp_ms < ch->from_ms)
            ch->from_ms = s->timestamp_ms;
        int64_t added = summary_int(s, "added-files-size");
        if (added < 0)
            added = 0;
        if (s->operation && !strcmp(s->operation, "replace")) {
            ch->rewrite_commits++;
            ch->bytes_rewritten += added;
        } else {
            ch->writer_commits++;
            ch->bytes_appended += added;
        }
    }
    if (ch->from_ms < 0)
        ch->from_ms = c->now_ms;
    ch->write_amplification = ch->bytes_appended > 0
                                  ? (double)ch->bytes_rewritten / (double)ch->bytes_appended
                                  : -1;
    const floe_health_files *f = &r->current.total;
    ch->live_bytes = f->data_bytes + f->pos_delete_bytes + f->eq_delete_bytes;
    ch->storage_amplification = -1;
    if (r->opts.no_listing)
        return 0;
    char *root = NULL, *md_rec = NULL, *md = NULL;
    floe_error le;
    floe_error_clear(&le);
    int rc = floe_table_resolve_path(c->t, m->location, &root, &le);
    if (rc == 0) {
        const char *custom = floe_table_metadata_property(m, "write.metadata.path");
        md_rec = custom && *custom ? floe_strdup(custom) : floe_io_join(m->location, "metadata");
        if (!md_rec)
            rc = floe_error_set(&le, FLOE_ENOMEM, "out of memory");
    }
    if (rc == 0)
        rc = floe_table_resolve_path(c->t, md_rec, &md, &le);
    if (rc == 0) {
        size_t n = strlen(md);
        while (n > 1 && md[n - 1] == '/')
            md[--n] = '\0';
        disk_ctx d = {md, n, ch};
        rc = floe_io_list(floe_table_io(c->t), root, on_disk_entry, &d, &le);
        /* write.metadata.path and write.data.path outside the location: list them too */
        size_t rl = strlen(root);
        while (rl > 1 && root[rl - 1] == '/')
            root[--rl] = '\0';
        if (rc == 0 && !under(md, root) && strcmp(md, root))
            rc = floe_io_list(floe_table_io(c->t), md, on_disk_entry, &d, &le);
        /* roots[1] (write.data.path) compared in the same form as roots[0] */
        char *mdk = c->nroots == 2 ? physical_key(c, md_rec) : NULL;
        if (rc == 0 && mdk && !under(c->roots[1], c->roots[0]) &&
            strcmp(c->roots[1], c->roots[0]) && !under(c->roots[1], mdk) &&
            strcmp(c->roots[1], mdk))
            rc = floe_io_list(floe_table_io(c->t), c->roots[1], on_disk_entry, &d, &le);
        floe_free(mdk);
    }
    if (rc == FLOE_ENOMEM)
        FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    if (rc < 0) {
        /* the other figures stand without it */
        ch->listing_error = floe_arena_strdup(&r->arena, le.msg);
    } else {
        ch->listed = true;
        /* files the table references outside its folders (appended where they were) are
         * on nobody's listing: they count on neither side */
        int64_t inside = ch->live_bytes - ch->live_outside_bytes;
        if (inside > 0)
            ch->storage_amplification = (double)ch->disk_data_bytes / (double)inside;
    }
    rc = 0;
done:
    floe_free(root);
    floe_free(md_rec);
    floe_free(md);
    return rc;
}

int floe_health_analyze(floe_table *t, const floe_health_options *o,
                        floe_health_report **out, floe_error *err) {
    int rc = 0;
    hctx c = {.t = t, .m = floe_table_metadata_get(t)};
    floe_health_report *r = floe_calloc(1, sizeof *r);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "health: out of memory");
    floe_arena_init(&r->arena, 64 << 10);
    c.r = r;
    if (o)
        r->opts = *o;
    else
        floe_health_options_init(&r->opts);
    if (r->opts.timing_runs < 0 || r->opts.timing_runs > HEALTH_MAX_TIMING_RUNS)
        FLOE_FAIL(err, FLOE_EINVALID, "health: timing runs must be 0..%d", HEALTH_MAX_TIMING_RUNS);
    if (r->opts.window_ms <= 0)
        FLOE_FAIL(err, FLOE_EINVALID, "health: the churn window must be > 0");
    if (!(r->opts.queries_per_day >= 0) || !(r->opts.price_get >= 0) ||
        !(r->opts.price_list >= 0) || !(r->opts.price_put >= 0))
        FLOE_FAIL(err, FLOE_EINVALID, "health: query rate and prices must be >= 0");
    const floe_table_metadata *m = c.m;
    c.now_ms = r->opts.now_ms ? r->opts.now_ms : floe_wall_ms();
    r->generated_ms = c.now_ms;
    const char *ref = r->opts.table_ref ? r->opts.table_ref : floe_table_name(t);
    if (!ref)
        ref = floe_table_root(t); /* a table opened by path has no name */
    r->table_ref = floe_arena_strdup(&r->arena, ref ? ref : "");
    r->metadata_location = floe_arena_strdup(&r->arena, floe_table_metadata_location(t));
    r->table_location = floe_arena_strdup(&r->arena, m->location ? m->location : "");
    if (!r->table_ref || !r->metadata_location || !r->table_location)
        FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
    r->opts.table_ref = r->table_ref;
    r->format_version = m->format_version;
    r->target_file_size = floe_table_metadata_property_int(m, "write.target-file-size-bytes",
                                                           FLOE_HEALTH_DEFAULT_TARGET_FILE_SIZE);
    if (r->target_file_size <= 0)
        r->target_file_size = FLOE_HEALTH_DEFAULT_TARGET_FILE_SIZE;
    r->min_file_size = r->target_file_size / 4 * 3;
    r->min_input_files = FLOE_HEALTH_MIN_INPUT_FILES;
    r->row_group_size = floe_table_metadata_property_int(m, "write.parquet.row-group-size-bytes",
                                                         128LL << 20);
    if (r->row_group_size <= 0)
        r->row_group_size = 128LL << 20;
    r->manifest_target_size = floe_table_metadata_property_int(m, "commit.manifest.target-size-bytes",
                                                               8LL << 20);
    if (r->manifest_target_size <= 0)
        r->manifest_target_size = 8LL << 20;

    /* Schema and specs, bound once (a spec whose source column was dropped is bound to the
     * older schema it resolves in; one that binds nowhere stays NULL: the manifest reader
     * then derives the partition types itself). */
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    if (ms) {
        floe_error e;
        if (floe_schema_parse(ms->json, strlen(ms->json), &c.schema, &e) < 0)
            c.schema = NULL;
    }
    if (m->n_specs) {
        c.specs = floe_calloc(m->n_specs, sizeof *c.specs);
        if (!c.specs)
            FLOE_FAIL(err, FLOE_ENOMEM, "health: out of memory");
        for (size_t i = 0; i < m->n_specs; i++) {
            floe_error e;
            c.specs[i].spec_id = m->specs[i].spec_id;
            if (!c.schema || (floe_partition_spec_parse_json(m->specs[i].json,
                                                             strlen(m->specs[i].json), c.schema,
                                                             &c.specs[i].spec, &e) < 0 &&
                              floe_table_metadata_bind_spec(m, m->specs[i].spec_id, NULL,
                                                            &c.specs[i].spec, &e) < 0))
                c.specs[i].spec = NULL;
        }
        c.nspecs = m->n_specs;
    }

    const floe_snapshot *s;
    if (r->opts.has_snapshot_id) {
        s = floe_table_metadata_snapshot(m, r->opts.snapshot_id);
        if (!s)
            FLOE_FAIL(err, FLOE_ENOTFOUND, "health: no snapshot %lld in %s",
                      (long long)r->opts.snapshot_id, r->metadata_location);
    } else {
        s = floe_table_metadata_current_snapshot(m);
    }
    const floe_snapshot *cs = NULL;
    if (r->opts.has_compare_id) {
        cs = floe_table_metadata_snapshot(m, r->opts.compare_id);
        if (!cs)
            FLOE_FAIL(err, FLOE_ENOTFOUND, "health: no snapshot %lld to compare with in %s",
                      (long long)r->opts.compare_id, r->metadata_location);
    }
    if (m->location && (c.roots[0] = physical_key(&c, m->location)) != NULL) {
        c.nroots = 1;
        const char *dp = floe_table_metadata_property(m, "write.data.path");
        if (dp && *dp && (c.roots[1] = physical_key(&c, dp)) != NULL)
            c.nroots = 2;
    }
    view_extra x, cx;
    FLOE_CHECK(view_compute(&c, s, &r->current, &x, err));
    if (cs) {
        FLOE_CHECK(view_compute(&c, cs, &r->compare, &cx, err));
        r->has_compare = true;
    }
    expire_plan ep;
    FLOE_CHECK(history_compute(&c, &ep, err));
    r->compare.meta.manifest_lists = r->current.meta.manifest_lists;
    r->compare.meta.all_manifest_list_bytes = r->current.meta.all_manifest_list_bytes;
    FLOE_CHECK(recs_compute(&c, &x, &ep, err));
    FLOE_CHECK(churn_compute(&c, err));
    *out = r;
    r = NULL;
done:
    for (size_t i = 0; i < c.nspecs; i++)
        floe_partition_spec_free(c.specs[i].spec);
    floe_free(c.specs);
    floe_free(c.roots[0]);
    floe_free(c.roots[1]);
    floe_schema_free(c.schema);
    floe_health_report_free(r);
    return rc;
}
