/*
 * scan_plan.c - scan planning: snapshot selection, manifest pruning, file pruning and
 * delete-file pairing.
 *
 * Spec: format/spec.md "Scan Planning":
 *   - manifests whose partition summaries cannot match the filter's inclusive projection
 *     are not read (per manifest, through that manifest's own spec);
 *   - data files are pruned by their partition tuple, then by column metrics (missing
 *     metrics never prune);
 *   - a position delete file applies to a data file when its data sequence number is >=
 *     the data file's and it is in the same partition (same spec), or when its
 *     referenced_data_file names the data file;
 *   - an equality delete file applies when its data sequence number is strictly greater
 *     than the data file's and it is in the same partition, or its spec is unpartitioned.
 * Snapshot selection follows "Point in Time Reads" (snapshot-log) and refs.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/keyset.h"
#include "common/literal.h"
#include "floe/io.h"
#include "floe/scan.h"
#include "iceberg/scan_internal.h"


struct floe_scan_plan_priv {
    floe_arena arena;
    floe_schema *schema;
    floe_partition_spec **specs;   /* parsed per spec id as met (bound to schema) */
    int32_t *spec_ids;
    size_t nspecs;
    floe_expr *filter;             /* as parsed (rows) */
    char **columns;
    size_t ncolumns;
};

/* Private accessors for scan_read.c. */
const floe_schema *floe_scan_plan_schema(const floe_scan_plan *p);
const floe_expr *floe_scan_plan_filter(const floe_scan_plan *p);
const char *const *floe_scan_plan_columns(const floe_scan_plan *p, size_t *n);

const floe_schema *floe_scan_plan_schema(const floe_scan_plan *p) { return p->priv->schema; }
const floe_expr *floe_scan_plan_filter(const floe_scan_plan *p) { return p->priv->filter; }
const char *const *floe_scan_plan_columns(const floe_scan_plan *p, size_t *n) {
    *n = p->priv->ncolumns;
    return (const char *const *)p->priv->columns;
}

void floe_scan_plan_free(floe_scan_plan *p) {
    if (!p)
        return;
    if (p->priv) {
        for (size_t i = 0; i < p->priv->nspecs; i++)
            floe_partition_spec_free(p->priv->specs[i]);
        floe_free(p->priv->specs);
        floe_free(p->priv->spec_ids);
        floe_schema_free(p->priv->schema);
        floe_arena_reset(&p->priv->arena);
        floe_free(p->priv);
    }
    floe_free(p->tasks);
    floe_free(p);
}

/* ---------------------------------------------------------------------------------------
 * snapshot selection
 * ------------------------------------------------------------------------------------- */

int floe_scan_parse_time(const char *s, int64_t *ms, floe_error *err) {
    size_t n = strlen(s);
    bool digits = n > 0;
    for (size_t i = 0; i < n && digits; i++)
        digits = s[i] >= '0' && s[i] <= '9';
    if (digits && n > 10) { /* a long number: milliseconds (a date has dashes) */
        int64_t v;
        FLOE_RETURN_ERROR_IF(!floe_parse_i64_cstr(s, &v), err, FLOE_EINVALID,
                             "time %s: milliseconds since the epoch past 64 bits", s);
        *ms = v;
        return 0;
    }
    floe_lit_ts t;
    char why[128];
    int rc = floe_lit_timestamp(s, n, FLOE_LIT_USER, &t, why, sizeof why);
    if (rc == FLOE_LIT_OK)
        rc = floe_lit_ts_units(&t, 3, ms, why, sizeof why);
    if (rc == FLOE_LIT_RANGE)
        return floe_error_set(err, FLOE_EINVALID, "time %s: %s", s, why);
    if (rc == FLOE_LIT_OK)
        return 0;
    /* a short number that is no date is milliseconds too: 0 is 1970-01-01T00:00:00Z, a
     * negative one a time before it */
    int64_t v;
    if ((digits || (n > 1 && s[0] == '-' && strspn(s + 1, "0123456789") == n - 1)) &&
        floe_parse_i64_cstr(s, &v)) {
        *ms = v;
        return 0;
    }
    return floe_error_set(err, FLOE_EINVALID,
                          "time %s: expected milliseconds since the epoch, YYYY-MM-DD or "
                          "YYYY-MM-DDTHH:MM[:SS[.fff]][Z|+HH:MM]", s);
}

/* Milliseconds since the epoch as 2026-10-06T12:00:00.000Z (UTC). */
void floe_scan_format_time(int64_t ms, char *buf, size_t n) {
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t in_day = ms - days * 86400000, y;
    unsigned mo, d;
    floe_civil_from_days(days, &y, &mo, &d);
    snprintf(buf, n, "%04" PRId64 "-%02u-%02uT%02d:%02d:%02d.%03dZ", y, mo, d,
             (int)(in_day / 3600000), (int)(in_day / 60000 % 60), (int)(in_day / 1000 % 60),
             (int)(in_day % 1000));
}

int floe_scan_resolve_snapshot(const floe_table_metadata *m, const floe_scan_options *o,
                               int64_t *out, floe_error *err) {
    if (o && o->has_snapshot_id) {
        FLOE_RETURN_ERROR_IF(!floe_table_metadata_snapshot(m, o->snapshot_id), err,
                             FLOE_ENOTFOUND, "no snapshot %" PRId64 " in the table",
                             o->snapshot_id);
        *out = o->snapshot_id;
        return 0;
    }
    if (o && o->ref) {
        const floe_snapshot_ref *r = floe_table_metadata_ref(m, o->ref);
        FLOE_RETURN_ERROR_IF(!r, err, FLOE_ENOTFOUND, "no branch or tag named %s", o->ref);
        *out = r->snapshot_id;
        return 0;
    }
    if (o && o->has_as_of) {
        bool found = false, any = false;
        int64_t id = -1, oldest = INT64_MAX;
        if (m->n_snapshot_log) {
            for (size_t i = 0; i < m->n_snapshot_log; i++) {
                any = true;
                if (m->snapshot_log[i].timestamp_ms < oldest)
                    oldest = m->snapshot_log[i].timestamp_ms;
                if (m->snapshot_log[i].timestamp_ms <= o->as_of_ms) {
                    id = m->snapshot_log[i].snapshot_id;
                    found = true;
                }
            }
        } else {
            const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
            for (size_t steps = 0; s && steps <= m->n_snapshots; steps++) {
                any = true;
                if (s->timestamp_ms < oldest)
                    oldest = s->timestamp_ms;
                if (s->timestamp_ms <= o->as_of_ms) {
                    id = s->snapshot_id;
                    found = true;
                    break;
                }
                s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id)
                                  : NULL;
            }
        }
        char at[40], first[40];
        floe_scan_format_time(o->as_of_ms, at, sizeof at);
        floe_scan_format_time(oldest, first, sizeof first);
        FLOE_RETURN_ERROR_IF(!found && !any, err, FLOE_ENOTFOUND,
                             "no snapshot was current at %s: the table has none", at);
        FLOE_RETURN_ERROR_IF(!found, err, FLOE_ENOTFOUND,
                             "no snapshot was current at %s: the oldest one is from %s", at,
                             first);
        FLOE_RETURN_ERROR_IF(!floe_table_metadata_snapshot(m, id), err, FLOE_ENOTFOUND,
                             "snapshot %" PRId64 " (current at %s) has expired", id, at);
        *out = id;
        return 0;
    }
    /* ids may be negative (64 bits written unsigned by some writers): test presence */
    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    *out = cur ? cur->snapshot_id : -1;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * planning
 * ------------------------------------------------------------------------------------- */

typedef struct planner {
    floe_table *t;
    const floe_table_metadata *m;
    floe_scan_plan *p;
    const floe_scan_options *o;
    floe_error *err;
    /* live delete files */
    floe_data_file **dels;         /* each in the plan arena */
    int64_t *del_seq;
    int32_t *del_spec;
    size_t ndel, delcap;
    size_t taskcap;
    /* streaming (floe_scan_plan_stream): each planned data file goes to emit as it is
     * planned instead of to p->tasks */
    floe_scan_task_fn emit;
    void *emit_ctx;
    const floe_data_file **dbuf;   /* the deletes of the task being emitted (ndel room) */
    int64_t *dsbuf;
    /* the planned data files' path hashes -> where the path is (manifest index in mfs <<
     * 32 | entry ordinal in it): a file live twice in one snapshot would have its rows
     * read twice. Equal hashes are told apart by reading that entry's path again. */
    floe_hashset planned;
    const floe_manifest_file *mfs;
    size_t cur;                    /* the manifest being read */
    int64_t ordinal;               /* the entry being read: its ordinal in the manifest */
    floe_avro_schema_cache *schemas; /* the manifests' Avro schemas, parsed once each */
    const floe_partition_spec **specs; /* per manifest of mfs: spec_for its spec id */
} planner;

/* The spec with this id, parsed and bound to the scan schema, or when a source column is
 * not in it (dropped since), to the older schema the spec resolves in (cached); NULL when
 * the metadata has no such spec or it binds nowhere (then the manifest header decides). */
static const floe_partition_spec *spec_for(planner *pl, int32_t id) {
    floe_scan_plan_priv *pv = pl->p->priv;
    for (size_t i = 0; i < pv->nspecs; i++)
        if (pv->spec_ids[i] == id)
            return pv->specs[i];
    const floe_metadata_spec *ms = floe_table_metadata_spec(pl->m, id);
    floe_partition_spec *s = NULL;
    if (ms) {
        floe_error e;
        floe_error_clear(&e);
        if (floe_partition_spec_parse_json(ms->json, strlen(ms->json), pv->schema, &s, &e) < 0 &&
            floe_table_metadata_bind_spec(pl->m, id, NULL, &s, &e) < 0)
            s = NULL;
    }
    floe_partition_spec **ns = floe_realloc(pv->specs, (pv->nspecs + 1) * sizeof *ns);
    int32_t *ni = ns ? floe_realloc(pv->spec_ids, (pv->nspecs + 1) * sizeof *ni) : NULL;
    if (ns)
        pv->specs = ns;
    if (!ni) {
        floe_partition_spec_free(s);
        return NULL;
    }
    pv->spec_ids = ni;
    pv->specs[pv->nspecs] = s;
    pv->spec_ids[pv->nspecs] = id;
    pv->nspecs++;
    return s;
}

static bool tuple_equal(const floe_data_file *a, const floe_data_file *b) {
    if (a->npartition != b->npartition)
        return false;
    for (size_t i = 0; i < a->npartition; i++) {
        const floe_value *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null || y->is_null) {
            if (x->is_null != y->is_null)
                return false;
            continue;
        }
        if (x->type != y->type || !floe_value_equal(x, y))
            return false;
    }
    return true;
}

static int open_manifest(planner *pl, const floe_manifest_file *mf,
                         floe_manifest_reader **out) {
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(pl->t, mf->manifest_path, &uri, pl->err));
    floe_manifest_read_options ro = {.manifest = mf,
                                     .spec = spec_for(pl, mf->partition_spec_id),
                                     .allow_missing_field_ids = pl->o->allow_missing_field_ids,
                                     .allow_deletion_vectors = true};
    int rc = floe_manifest_reader_open_cached(floe_table_io(pl->t), uri, &ro, pl->schemas, out,
                                              pl->err);
    floe_free(uri);
    return rc;
}

/* Is the entry at `where` (as the planned set stores it) a data file named path? Read
 * again from its manifest: only when two paths' 64-bit hashes are equal. */
static int same_path_at(planner *pl, int64_t where, const char *path, bool *same) {
    const floe_manifest_file *mf = &pl->mfs[(uint64_t)where >> 32];
    int64_t want = where & 0xffffffff, k = 0;
    floe_manifest_reader *r = NULL;
    FLOE_FORWARD_IF_ERROR(open_manifest(pl, mf, &r));
    const floe_manifest_entry *e;
    int rc;
    *same = false;
    while ((rc = floe_manifest_reader_next(r, &e, pl->err)) == 1 && k++ < want)
        ;
    if (rc == 1)
        *same = !strcmp(e->file.file_path, path);
    floe_manifest_reader_close(r);
    if (rc < 0)
        floe_error_prefix(pl->err, "manifest %s: ", mf->manifest_path);
    return rc < 0 ? rc : 0;
}

/* Refuse a data file planned twice; else remember it. */
static int check_planned(planner *pl, const char *path) {
    if (pl->cur > INT32_MAX || pl->ordinal > (int64_t)UINT32_MAX)
        return floe_error_set(pl->err, FLOE_ELIMIT, "more than 2^31 manifests or 2^32 "
                              "entries in one manifest");
    uint64_t h = floe_hash64(path, strlen(path));
    size_t pos = 0;
    for (const int64_t *at; (at = floe_hashset_next(&pl->planned, h, &pos));) {
        bool same;
        FLOE_FORWARD_IF_ERROR(same_path_at(pl, *at, path, &same));
        if (!same)
            continue;
        size_t first = (size_t)((uint64_t)*at >> 32);
        const char *other = pl->mfs[first].manifest_path;
        return floe_error_set(pl->err, FLOE_ECORRUPT,
                              "snapshot %" PRId64 ": data file %s is live in two manifest "
                              "entries (%s%s%s); refusing to read its rows twice",
                              pl->p->snapshot_id, path, other,
                              first == pl->cur ? ", twice" : " and ",
                              first == pl->cur ? "" : pl->mfs[pl->cur].manifest_path);
    }
    int rc = floe_hashset_add(&pl->planned, h, (int64_t)((uint64_t)pl->cur << 32 |
                                                         (uint64_t)pl->ordinal));
    if (rc < 0)
        return floe_error_set(pl->err, rc, "data file paths: %s", floe_strerror(rc));
    return 0;
}

static size_t task_deletes(planner *pl, const floe_scan_task *t, const floe_data_file **buf,
                           int64_t *sbuf);

static int add_task(planner *pl, const floe_data_file *kept, int64_t seq, int32_t spec_id,
                    const floe_partition_spec *spec) {
    floe_scan_plan *p = pl->p;
    FLOE_FORWARD_IF_ERROR(check_planned(pl, kept->file_path));
    p->records += kept->record_count;
    p->stats.data_files++;
    if (pl->emit) {
        /* the deletes were all read before the first data manifest */
        floe_scan_task t = {.file = kept,
                            .spec_id = spec_id,
                            .spec = spec,
                            .data_sequence_number = seq};
        t.ndeletes = task_deletes(pl, &t, pl->dbuf, pl->dsbuf);
        if (t.ndeletes) {
            t.deletes = pl->dbuf;
            t.delete_sequence_numbers = pl->dsbuf;
        }
        return pl->emit(pl->emit_ctx, &t, pl->err);
    }
    if (p->ntasks == pl->taskcap) {
        size_t nc = pl->taskcap ? pl->taskcap * 2 : 64;
        floe_scan_task *nt = floe_realloc(p->tasks, nc * sizeof *nt);
        if (!nt)
            return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
        p->tasks = nt;
        pl->taskcap = nc;
    }
    floe_data_file *f = floe_arena_alloc(&p->priv->arena, sizeof *f);
    if (!f)
        return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(kept, &p->priv->arena, f, pl->err));
    floe_scan_task *t = &p->tasks[p->ntasks++];
    memset(t, 0, sizeof *t);
    t->file = f;
    t->spec_id = spec_id;
    t->spec = spec;
    t->data_sequence_number = seq;
    return 0;
}

static int add_delete(planner *pl, const floe_data_file *df, int64_t seq, int32_t spec_id) {
    if (pl->ndel == pl->delcap) {
        size_t nc = pl->delcap ? pl->delcap * 2 : 16;
        floe_data_file **nd = floe_realloc(pl->dels, nc * sizeof *nd);
        if (!nd)
            return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
        pl->dels = nd;
        int64_t *ns = floe_realloc(pl->del_seq, nc * sizeof *ns);
        if (!ns)
            return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
        pl->del_seq = ns;
        int32_t *sp = floe_realloc(pl->del_spec, nc * sizeof *sp);
        if (!sp)
            return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
        pl->del_spec = sp;
        pl->delcap = nc;
    }
    floe_data_file *f = floe_arena_alloc(&pl->p->priv->arena, sizeof *f);
    if (!f)
        return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(df, &pl->p->priv->arena, f, pl->err));
    pl->dels[pl->ndel] = f;
    pl->del_seq[pl->ndel] = seq;
    pl->del_spec[pl->ndel] = spec_id;
    pl->ndel++;
    return 0;
}

/* The manifest's partition summaries cannot match the filter? */
static bool manifest_pruned(planner *pl, const floe_manifest_file *mf) {
    const floe_partition_spec *spec = spec_for(pl, mf->partition_spec_id);
    return spec && pl->p->priv->filter && !pl->o->no_partition_pruning &&
           !floe_expr_manifest_may_match(pl->p->priv->filter, spec, mf);
}

/* options.keep of the manifest list: a point query keeps one manifest of 10,000, and
 * the others are not held (nor copied) at all */
static bool keep_manifest(void *ctx, const floe_manifest_file *mf) {
    return !manifest_pruned(ctx, mf);
}

/* Room in the planned-paths set for the files of the manifests that are read, as their
 * list entries count them (a hint: counts may be absent or wrong; capped), so the set
 * rehashes once rather than at every doubling. */
static int reserve_paths(planner *pl, const floe_manifest_file *mfs, const bool *pruned,
                         size_t n) {
    int64_t files = 0;
    for (size_t i = 0; i < n; i++) {
        const floe_manifest_file *mf = &mfs[i];
        if (pruned[i] || mf->content != FLOE_MANIFEST_DATA)
            continue;
        files += mf->added_files_count > 0 ? mf->added_files_count : 0;
        files += mf->existing_files_count > 0 ? mf->existing_files_count : 0;
        if (files > ((int64_t)1 << 22))
            files = (int64_t)1 << 22;
    }
    if (files > 0 && floe_hashset_reserve(&pl->planned, (size_t)files) < 0)
        return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * reading manifests: decoded by worker threads (or inline), consumed in order
 *
 * A manifest is fetched, decoded and pruned (partition tuple, column metrics) into a slot
 * by whichever thread claims it; the planner then takes the slots in list order, so the
 * plan, its duplicate checks and its errors are those of a serial read. Workers stay at
 * most `window` manifests ahead of the planner, which bounds memory.
 * ------------------------------------------------------------------------------------- */

/* A live entry that survived pruning, copied out of the reader's block. */
typedef struct kept_entry {
    floe_data_file file;           /* data files: metrics dropped unless keep_metrics */
    int64_t ordinal;               /* in its manifest */
    int64_t sequence_number;       /* 0 when the entry has none */
} kept_entry;

typedef struct slot {
    size_t idx;                    /* manifest index in the list */
    size_t pos;                    /* its position in order */
    int state;                     /* SLOT_FREE, SLOT_BUSY, SLOT_DONE */
    int rc;
    floe_error err;
    floe_arena arena;              /* the kept entries' data */
    kept_entry *e;
    size_t n, cap;
    floe_manifest_reader *r;       /* open until consumed: a header spec lives with it */
    const floe_partition_spec *rspec;
    floe_scan_stats st;            /* manifests/entries read, files skipped, bytes */
    bool sink_failed;              /* rc is the sink's, not the reader's */
    uint8_t *data;                 /* fetched: the whole manifest (NULL: read it) */
    size_t len;
    size_t held;                   /* bytes the fetch budget counts for it */
} slot;

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

/* What decoding needs, read-only once workers start. */
typedef struct decode_ctx {
    floe_io *io;
    const floe_manifest_file *mfs;
    char **uris;                   /* resolved manifest paths */
    const floe_partition_spec **specs; /* per manifest: spec_for its spec id */
    const floe_scan_options *o;
    const floe_expr *filter;
    const floe_schema *schema;
    const size_t *order;           /* manifest indexes in the order they are consumed */
    size_t norder;
    /* shared, under lock. Two conditions, each signalled to the one thread that can go
     * on: a broadcast on one shared condition woke every waiting worker each time the
     * planner freed a slot (196,000 context switches for bench/plan's 10,000 local
     * manifests with 32 threads) */
    pthread_mutex_t lock;
    pthread_cond_t room;           /* workers wait here for a free slot (or stop) */
    pthread_cond_t done;           /* the planner waits here for slot `awaited` */
    slot *slots;                   /* window slots; order[k] uses slots[k % window] */
    size_t window;
    size_t next;                   /* next position in order to claim */
    size_t consumed;               /* positions the planner has taken */
    size_t awaited;                /* position the planner waits for; SIZE_MAX: none */
    size_t idle;                   /* workers waiting for room */
    bool stop;
    /* object stores: one thread fetches whole manifests (fetch_thread) and the planner
     * decodes them as it plans, with no copy in between */
    floe_io_fetcher *fetch;
    size_t held;                   /* bytes fetched or in flight, not yet planned */
    bool fetch_wants_room;         /* the fetch thread waits for a slot or bytes */
} decode_ctx;

static void slot_reset(slot *sl) {
    floe_manifest_reader_close(sl->r);
    floe_free(sl->data);
    sl->data = NULL;
    sl->len = sl->held = 0;
    floe_arena_reset(&sl->arena);
    floe_free(sl->e);
    sl->e = NULL;
    sl->r = NULL;
    sl->rspec = NULL;
    sl->n = sl->cap = 0;
    sl->rc = 0;
    sl->sink_failed = false;
    memset(&sl->st, 0, sizeof sl->st);
    floe_error_clear(&sl->err);
    sl->state = SLOT_FREE;
}

/* The entry's file as the plan keeps it: the column metrics have done their pruning, so
 * a plan of a million files keeps them only when asked. Shallow: points into e. */
static floe_data_file planned_file(const floe_manifest_entry *e, bool metrics) {
    floe_data_file f = e->file;
    if (!metrics) {
        f.column_sizes = f.value_counts = (floe_count_map){0};
        f.null_value_counts = f.nan_value_counts = (floe_count_map){0};
        f.lower_bounds = f.upper_bounds = (floe_bound_map){0};
    }
    return f;
}

static int64_t entry_sequence(const floe_manifest_entry *e) {
    return e->has_sequence_number ? e->sequence_number : 0;
}

/* What decoding does with each entry it keeps: copy it into the slot (a worker's read,
 * planned later in list order), or plan it at once (the planner's own read of the next
 * manifest in order, which then needs no copy in between). On failure the sink has set
 * its error: sl->err for keep_entry, the planner's for plan_now. */
typedef int (*entry_sink)(void *ctx, slot *sl, const floe_manifest_entry *e, int64_t ordinal,
                          bool metrics);

static int keep_entry(void *ctx, slot *sl, const floe_manifest_entry *e, int64_t ordinal,
                      bool metrics) {
    (void)ctx;
    if (sl->n == sl->cap) {
        size_t nc = sl->cap ? sl->cap * 2 : 64;
        kept_entry *ne = floe_realloc(sl->e, nc * sizeof *ne);
        if (!ne)
            return floe_error_set(&sl->err, FLOE_ENOMEM, "out of memory");
        sl->e = ne;
        sl->cap = nc;
    }
    floe_data_file f = planned_file(e, metrics);
    kept_entry *k = &sl->e[sl->n];
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(&f, &sl->arena, &k->file, &sl->err));
    k->ordinal = ordinal;
    k->sequence_number = entry_sequence(e);
    sl->n++;
    return 0;
}

/* Read manifest sl->idx into sl: every live delete file its partition tuple keeps, every
 * live data file both prunings keep. Any thread; cache is the thread's own. */
static void decode_manifest(const decode_ctx *dc, floe_avro_schema_cache *cache, slot *sl,
                            entry_sink sink, void *sink_ctx) {
    const floe_manifest_file *mf = &dc->mfs[sl->idx];
    const floe_partition_spec *spec = dc->specs[sl->idx];
    const floe_scan_options *o = dc->o;
    floe_manifest_read_options ro = {.manifest = mf,
                                     .spec = spec,
                                     .allow_missing_field_ids = o->allow_missing_field_ids,
                                     .allow_deletion_vectors = true};
    int rc = sl->data ? floe_manifest_reader_open_mem_cached(sl->data, sl->len,
                                                             dc->uris[sl->idx], &ro, cache,
                                                             &sl->r, &sl->err)
                      : floe_manifest_reader_open_cached(dc->io, dc->uris[sl->idx], &ro, cache,
                                                         &sl->r, &sl->err);
    if (rc < 0) {
        sl->rc = rc; /* the reader's error names the manifest */
        return;
    }
    const floe_manifest_info *info = floe_manifest_reader_info(sl->r);
    const floe_partition_spec *rspec = spec ? spec : floe_manifest_reader_spec(sl->r);
    sl->rspec = rspec;
    floe_scan_stats *st = &sl->st;
    st->manifests_read = 1;
    st->delete_manifests_read =
        mf->content == FLOE_MANIFEST_DELETES || info->content == FLOE_MANIFEST_DELETES;
    st->bytes_read = info->file_length;
    const floe_manifest_entry *e;
    for (int64_t ordinal = 0; (rc = floe_manifest_reader_next(sl->r, &e, &sl->err)) == 1;
         ordinal++) {
        if (e->status == FLOE_ENTRY_DELETED)
            continue;
        st->entries_read++;
        bool part_ok = !dc->filter || o->no_partition_pruning || !rspec ||
                       floe_expr_partition_may_match(dc->filter, rspec, e->file.partition,
                                                     e->file.npartition);
        if (e->file.content != FLOE_CONTENT_DATA) {
            st->delete_files++;
            if (part_ok && (rc = sink(sink_ctx, sl, e, ordinal, true)) < 0) {
                sl->sink_failed = true;
                break;
            }
            continue;
        }
        if (!part_ok) {
            st->files_skipped_partition++;
            continue;
        }
        if (dc->filter && !o->no_metrics_pruning &&
            !floe_expr_file_may_match(dc->filter, dc->schema, &e->file)) {
            st->files_skipped_metrics++;
            continue;
        }
        if ((rc = sink(sink_ctx, sl, e, ordinal, o->keep_metrics)) < 0) {
            sl->sink_failed = true;
            break;
        }
    }
    sl->rc = rc < 0 ? rc : 0;
    /* the error is in sl->err unless plan_now put it in the planner's */
    if (rc < 0 && (!sl->sink_failed || sink == keep_entry))
        floe_error_prefix(&sl->err, "manifest %s: ", mf->manifest_path);
}

/* Slot sl is ready for the planner (decoded, fetched, or to be read by it); dc->lock held. */
static void slot_done(decode_ctx *dc, slot *sl) {
    sl->state = SLOT_DONE;
    if (dc->awaited == sl->pos)
        pthread_cond_signal(&dc->done);
}

static void *decode_worker(void *arg) {
    decode_ctx *dc = arg;
    floe_avro_schema_cache *cache = floe_manifest_schema_cache_new();
    pthread_mutex_lock(&dc->lock);
    for (;;) {
        while (!dc->stop && dc->next < dc->norder && dc->next >= dc->consumed + dc->window) {
            dc->idle++;
            pthread_cond_wait(&dc->room, &dc->lock);
            dc->idle--;
        }
        if (dc->stop || dc->next >= dc->norder)
            break;
        slot *sl = &dc->slots[dc->next % dc->window];
        sl->pos = dc->next;
        sl->idx = dc->order[dc->next++];
        sl->state = SLOT_BUSY;
        pthread_mutex_unlock(&dc->lock);
        if (cache)
            decode_manifest(dc, cache, sl, keep_entry, NULL);
        else
            sl->rc = floe_error_set(&sl->err, FLOE_ENOMEM, "out of memory");
        pthread_mutex_lock(&dc->lock);
        slot_done(dc, sl);
    }
    /* the last one out of work: the others may wait for room that will not come */
    pthread_cond_broadcast(&dc->room);
    pthread_mutex_unlock(&dc->lock);
    floe_manifest_schema_cache_free(cache);
    return NULL;
}

/* Manifests fetched whole while the planner plans: at most this many bytes held (fetched
 * or in flight, not yet planned), and none larger than FETCH_MAX (read as a stream). */
#define FETCH_BUDGET ((size_t)64 << 20)
#define FETCH_MAX ((size_t)8 << 20)
/* GETs in flight by default: one thread waits on them all, so more cost little CPU; with
 * 5 ms a request, 32 left bench/plan's planner waiting ~1 s for 10,000 manifests (load ~9),
 * 64 ~0.35 s */
#define FETCH_INFLIGHT 64

/* The fetch thread: claims the positions in order, window and byte budget allowing, and
 * keeps their GETs in flight; a manifest not fetched (an error, larger than FETCH_MAX)
 * comes back without data and the planner reads it the ordinary way. */
static void *fetch_thread(void *arg) {
    decode_ctx *dc = arg;
    (void)pthread_setname_np(pthread_self(), "floe-fetch"); /* cosmetic: for profiles */
    pthread_mutex_lock(&dc->lock);
    for (;;) {
        while (!dc->stop && dc->next < dc->norder && dc->next < dc->consumed + dc->window) {
            size_t idx = dc->order[dc->next];
            int64_t len = dc->mfs[idx].manifest_length;
            size_t want = len > 0 && (uint64_t)len <= FETCH_MAX ? (size_t)len : 0;
            if (want && dc->held && dc->held + want > FETCH_BUDGET)
                break;
            slot *sl = &dc->slots[dc->next % dc->window];
            sl->pos = dc->next++;
            sl->idx = idx;
            sl->state = SLOT_BUSY;
            sl->held = want;
            dc->held += want;
            pthread_mutex_unlock(&dc->lock);
            int rc = floe_io_fetch_add(dc->fetch, dc->uris[idx], want, sl, NULL);
            pthread_mutex_lock(&dc->lock);
            if (rc < 0) /* the planner reads it */
                slot_done(dc, sl);
        }
        if (dc->stop || (dc->next >= dc->norder && floe_io_fetch_pending(dc->fetch) == 0))
            break;
        dc->fetch_wants_room = dc->next < dc->norder;
        pthread_mutex_unlock(&dc->lock);
        floe_io_fetched got;
        int k = floe_io_fetch_next(dc->fetch, 200, &got);
        pthread_mutex_lock(&dc->lock);
        dc->fetch_wants_room = false;
        if (k == 1) {
            slot *sl = got.tag;
            sl->data = got.data;
            sl->len = got.len;
            slot_done(dc, sl);
        }
    }
    pthread_mutex_unlock(&dc->lock);
    return NULL;
}

/* Plan one entry of manifest pl->cur (its file copied into the plan when kept). */
static int plan_entry(planner *pl, const floe_data_file *f, int64_t ordinal, int64_t seq,
                      const floe_partition_spec *rspec) {
    const floe_manifest_file *mf = &pl->mfs[pl->cur];
    pl->ordinal = ordinal;
    if (f->content == FLOE_CONTENT_DATA)
        return add_task(pl, f, seq, mf->partition_spec_id, rspec);
    if (pl->emit && mf->content != FLOE_MANIFEST_DELETES)
        /* streaming pairs deletes as files are planned: they are read first, from the
         * manifests the list says hold them */
        return floe_error_set(pl->err, FLOE_ECORRUPT, "entry %" PRId64 ": a delete file "
                              "(%s) in a manifest the list records as a data manifest",
                              ordinal, f->file_path);
    return add_delete(pl, f, seq, mf->partition_spec_id);
}

static int plan_now(void *ctx, slot *sl, const floe_manifest_entry *e, int64_t ordinal,
                    bool metrics) {
    floe_data_file f = planned_file(e, metrics);
    return plan_entry(ctx, &f, ordinal, entry_sequence(e), sl->rspec);
}

/* After manifest sl->idx is planned: its counts into the plan's, the error to return
 * (entries planned before a read error keep their order: a duplicate among them is the
 * error), and no task left pointing at a spec that lives with the reader. */
static int finish_slot(planner *pl, slot *sl, int rc) {
    floe_scan_plan *p = pl->p;
    const floe_manifest_file *mf = &pl->mfs[sl->idx];
    floe_scan_stats *st = &p->stats;
    st->manifests_read += sl->st.manifests_read;
    st->delete_manifests_read += sl->st.delete_manifests_read;
    st->bytes_read += sl->st.bytes_read;
    st->entries_read += sl->st.entries_read;
    st->delete_files += sl->st.delete_files;
    st->files_skipped_partition += sl->st.files_skipped_partition;
    st->files_skipped_metrics += sl->st.files_skipped_metrics;
    if (rc >= 0 && sl->rc < 0) {
        *pl->err = sl->err; /* the manifest's own error, after the entries before it */
        return sl->rc;
    }
    if (rc < 0)
        floe_error_prefix(pl->err, "manifest %s: ", mf->manifest_path);
    if (!pl->specs[sl->idx])
        for (size_t i = 0; i < p->ntasks; i++)
            if (p->tasks[i].spec == sl->rspec)
                p->tasks[i].spec = NULL;
    return rc;
}

/* Plan the entries a worker decoded into sl, in entry order. */
static int consume_slot(planner *pl, slot *sl) {
    pl->cur = sl->idx;
    int rc = 0;
    for (size_t i = 0; i < sl->n && rc >= 0; i++) {
        const kept_entry *k = &sl->e[i];
        rc = plan_entry(pl, &k->file, k->ordinal, k->sequence_number, sl->rspec);
    }
    return finish_slot(pl, sl, rc);
}

/* Read manifest sl->idx on the planner's thread, planning each entry as it is decoded. */
static int read_inline(planner *pl, decode_ctx *dc, slot *sl) {
    pl->cur = sl->idx;
    decode_manifest(dc, pl->schemas, sl, plan_now, pl);
    return finish_slot(pl, sl, sl->sink_failed ? sl->rc : 0);
}

/* Decoding threads for the manifests to read (as manifest_threads says; automatic: none
 * for local files, 32 for object stores, where waiting for requests is the work: with
 * 5 ms a request, 16 left bench/plan's 10,000 manifests at >= 3.1 s of waiting alone),
 * none for a single manifest. read_manifests replaces them with one fetch thread where
 * the store has a fetcher (S3). */
static size_t decode_threads(const decode_ctx *dc) {
    size_t n = dc->norder;
    if (n < 2 || dc->o->manifest_threads == 1)
        return 0;
    size_t k;
    if (dc->o->manifest_threads > 1) {
        k = dc->o->manifest_threads < 64 ? (size_t)dc->o->manifest_threads : 64;
    } else {
        /* local manifests decode at the speed of one core: more threads cost CPU
         * (copies, allocations in several heaps) and gained no steady wall time on a
         * shared 2-core machine (bench/plan) */
        if (!floe_io_uri_has_remote_scheme(dc->uris[dc->order[0]]))
            return 0;
        k = 32;
    }
    return k < n ? k : n;
}

/* Read the manifests order[0..n) into the plan, in that order. between (may be NULL) runs
 * after position `split` has been consumed. */
static int read_manifests(planner *pl, decode_ctx *dc, size_t split,
                          int (*between)(planner *pl)) {
    size_t nthreads = decode_threads(dc);
    /* an object store: GETs in flight on one fetch thread (manifest_threads of them, by
     * default FETCH_INFLIGHT) instead of decoding threads each blocked in its own request */
    if (nthreads) {
        size_t inflight = dc->o->manifest_threads > 1 ? nthreads : FETCH_INFLIGHT;
        if (inflight > dc->norder)
            inflight = dc->norder;
        if (floe_io_fetcher_new(dc->io, dc->uris[dc->order[0]], inflight, &dc->fetch,
                                NULL) == 0)
            nthreads = inflight;
    }
    dc->window = nthreads ? nthreads * 4 : 1;
    if (dc->fetch)
        nthreads = 1;
    dc->slots = floe_calloc(dc->window, sizeof *dc->slots);
    pthread_t *th = nthreads ? floe_calloc(nthreads, sizeof *th) : NULL;
    if (!dc->slots || (nthreads && !th)) {
        floe_free(dc->slots);
        floe_free(th);
        floe_io_fetcher_free(dc->fetch);
        dc->fetch = NULL;
        return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < dc->window; i++)
        floe_arena_init(&dc->slots[i].arena, 16 * 1024);
    size_t started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&th[started], NULL, dc->fetch ? fetch_thread : decode_worker,
                           dc) != 0)
            break; /* fewer threads, or none: the planner decodes what is left itself */
    int rc = 0;
    for (size_t k = 0; k < dc->norder && rc >= 0; k++) {
        if (k == split && between && (rc = between(pl)) < 0)
            break;
        slot *sl = &dc->slots[k % dc->window];
        pthread_mutex_lock(&dc->lock);
        if (dc->next == k) {
            /* no worker has claimed it (none started, or all busy further on): every
             * manifest before it is planned, so its entries are planned as read */
            sl->pos = k;
            sl->idx = dc->order[dc->next++];
            sl->state = SLOT_BUSY;
            pthread_mutex_unlock(&dc->lock);
            rc = read_inline(pl, dc, sl);
        } else {
            dc->awaited = k;
            while (sl->state != SLOT_DONE)
                pthread_cond_wait(&dc->done, &dc->lock);
            dc->awaited = SIZE_MAX;
            pthread_mutex_unlock(&dc->lock);
            /* fetched: decoded and planned here, straight from the bytes */
            rc = dc->fetch ? read_inline(pl, dc, sl) : consume_slot(pl, sl);
        }
        size_t held = sl->held;
        slot_reset(sl);
        pthread_mutex_lock(&dc->lock);
        dc->consumed = k + 1;
        dc->held -= held;
        if (dc->idle) /* one slot freed: one worker can claim it */
            pthread_cond_signal(&dc->room);
        if (dc->fetch_wants_room) {
            dc->fetch_wants_room = false;
            floe_io_fetch_wakeup(dc->fetch);
        }
        pthread_mutex_unlock(&dc->lock);
    }
    if (rc >= 0 && split == dc->norder && between)
        rc = between(pl);
    pthread_mutex_lock(&dc->lock);
    dc->stop = true;
    pthread_cond_broadcast(&dc->room);
    if (dc->fetch)
        floe_io_fetch_wakeup(dc->fetch);
    pthread_mutex_unlock(&dc->lock);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    floe_io_fetcher_free(dc->fetch);
    dc->fetch = NULL;
    for (size_t i = 0; i < dc->window; i++) {
        slot_reset(&dc->slots[i]);
        floe_arena_reset(&dc->slots[i].arena);
    }
    floe_free(dc->slots);
    floe_free(th);
    return rc;
}

/* The delete files that apply to t, into buf and sbuf (room for pl->ndel): how many. */
static size_t task_deletes(planner *pl, const floe_scan_task *t, const floe_data_file **buf,
                           int64_t *sbuf) {
    size_t k = 0;
    for (size_t d = 0; d < pl->ndel; d++) {
        const floe_data_file *df = pl->dels[d];
        int64_t ds = pl->del_seq[d];
        bool applies = false;
        if (df->content == FLOE_CONTENT_POSITION_DELETES) {
            if (ds < t->data_sequence_number)
                continue;
            if (df->referenced_data_file)
                applies = !floe_pos_delete_excludes(df, t->file->file_path);
            else
                applies = pl->del_spec[d] == t->spec_id && tuple_equal(df, t->file) &&
                          (pl->o->no_metrics_pruning ||
                           !floe_pos_delete_excludes(df, t->file->file_path));
        } else if (df->content == FLOE_CONTENT_EQUALITY_DELETES) {
            if (ds <= t->data_sequence_number)
                continue;
            const floe_partition_spec *ds_spec = spec_for(pl, pl->del_spec[d]);
            bool unpartitioned = df->npartition == 0 || (ds_spec && ds_spec->nfields == 0);
            applies = unpartitioned ||
                      (pl->del_spec[d] == t->spec_id && tuple_equal(df, t->file));
        }
        if (applies) {
            buf[k] = df;
            sbuf[k] = ds;
            k++;
        }
    }
    return k;
}

/* Room for one task's deletes (all of them, at most). */
static int delete_buffers(planner *pl) {
    if (pl->ndel == 0)
        return 0;
    pl->dbuf = floe_malloc(pl->ndel * sizeof *pl->dbuf);
    pl->dsbuf = floe_malloc(pl->ndel * sizeof *pl->dsbuf);
    if (!pl->dbuf || !pl->dsbuf)
        return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static int pair_deletes(planner *pl) {
    floe_scan_plan *p = pl->p;
    if (pl->ndel == 0)
        return 0;
    FLOE_FORWARD_IF_ERROR(delete_buffers(pl));
    for (size_t i = 0; i < p->ntasks; i++) {
        floe_scan_task *t = &p->tasks[i];
        size_t k = task_deletes(pl, t, pl->dbuf, pl->dsbuf);
        if (k) {
            const floe_data_file **dl = floe_arena_memdup(&p->priv->arena, pl->dbuf,
                                                          k * sizeof *dl);
            int64_t *sl = floe_arena_memdup(&p->priv->arena, pl->dsbuf, k * sizeof *sl);
            if (!dl || !sl)
                return floe_error_set(pl->err, FLOE_ENOMEM, "out of memory");
            t->deletes = dl;
            t->delete_sequence_numbers = sl;
            t->ndeletes = k;
        }
    }
    return 0;
}

/* The schema rows are read with: the table's current one; a time-travel read by id or
 * time, or of a tag, uses the schema snapshot snap was written with, as the reference
 * does (a branch is read with the table's schema: it is written to with it). NULL when
 * the metadata has none. */
static const floe_metadata_schema *read_schema(const floe_table_metadata *m,
                                               const floe_scan_options *o,
                                               const floe_snapshot *snap) {
    const floe_snapshot_ref *r = o->ref ? floe_table_metadata_ref(m, o->ref) : NULL;
    bool travel = (o->has_snapshot_id && !o->current_schema) || o->has_as_of ||
                  (r && r->is_tag);
    if (snap && travel && snap->has_schema_id &&
        floe_table_metadata_schema(m, snap->schema_id))
        return floe_table_metadata_schema(m, snap->schema_id);
    return floe_table_metadata_current_schema(m);
}

int floe_scan_check_filter(const floe_table *t, const floe_scan_options *o, floe_error *err) {
    if (!o || ((!o->where || !*o->where) && !o->ncolumns))
        return 0;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    int64_t id = -1;
    floe_error ignored;
    floe_error_clear(&ignored);
    /* a selection that does not resolve is the plan's error to report */
    if (floe_scan_resolve_snapshot(m, o, &id, &ignored) < 0)
        return 0;
    const floe_metadata_schema *ms = read_schema(m, o, floe_table_metadata_snapshot(m, id));
    if (!ms)
        return 0;
    floe_schema *schema = NULL;
    floe_arena arena;
    floe_arena_init(&arena, 4096);
    floe_expr *e;
    int rc = 0;
    if (floe_schema_parse(ms->json, strlen(ms->json), &schema, &ignored) < 0)
        rc = 0; /* likewise */
    else if (o->where && *o->where)
        rc = floe_expr_parse(schema, o->where, &arena, &e, err);
    for (size_t i = 0; rc == 0 && schema && i < o->ncolumns; i++)
        if (!floe_schema_find_path(schema, o->columns[i]) && !floe_lineage_column(o->columns[i]))
            rc = floe_error_set(err, FLOE_ENOTFOUND, "--columns: no column %s in the table schema",
                                o->columns[i]);
    floe_schema_free(schema);
    floe_arena_reset(&arena);
    return rc;
}

static int plan_scan(floe_table *t, const floe_scan_options *o, floe_scan_task_fn emit,
                     void *emit_ctx, floe_scan_plan **out, floe_error *err) {
    floe_scan_options none;
    memset(&none, 0, sizeof none);
    if (!o)
        o = &none;
    const int64_t t0 = floe_now_ns();
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_scan_plan *p = floe_calloc(1, sizeof *p);
    planner pl = {.t = t, .m = m, .p = p, .o = o, .err = err, .emit = emit,
                  .emit_ctx = emit_ctx};
    int rc = 0;
    char *list_uri = NULL;
    bool *pruned = NULL;
    char **uris = NULL;
    size_t nuris = 0, *order = NULL;
    if (!p || !(p->priv = floe_calloc(1, sizeof *p->priv))) {
        floe_free(p);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    floe_arena_init(&p->priv->arena, 64 * 1024);
    FLOE_CHECK(floe_scan_resolve_snapshot(m, o, &p->snapshot_id, err));
    const floe_snapshot *snap = floe_table_metadata_snapshot(m, p->snapshot_id);
    const floe_metadata_schema *ms = read_schema(m, o, snap);
    if (!ms)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema");
    p->schema_id = ms->schema_id;
    p->schema_json = ms->json;
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &p->priv->schema, err));

    if (o->where && *o->where) {
        FLOE_CHECK(floe_expr_parse(p->priv->schema, o->where, &p->priv->arena, &p->priv->filter,
                                   err));
    }
    if (o->ncolumns) {
        p->priv->columns = floe_arena_alloc(&p->priv->arena, o->ncolumns * sizeof(char *));
        if (!p->priv->columns)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->ncolumns; i++) {
            if (!floe_schema_find_path(p->priv->schema, o->columns[i]) &&
                !floe_lineage_column(o->columns[i]))
                FLOE_FAIL(err, FLOE_ENOTFOUND, "no column %s in the table schema",
                          o->columns[i]);
            if (!(p->priv->columns[i] = floe_arena_strdup(&p->priv->arena, o->columns[i])))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        p->priv->ncolumns = o->ncolumns;
    }

    if (snap) {
        floe_manifest_list list = {0};
        floe_manifest_file *v1 = NULL;
        if (snap->manifest_list) {
            FLOE_CHECK(floe_table_resolve_path(t, snap->manifest_list, &list_uri, err));
            floe_manifest_list_read_options lo = {
                .allow_missing_field_ids = o->allow_missing_field_ids,
                .has_snapshot_id = true,
                .snapshot_id = snap->snapshot_id};
            /* the manifests partition summaries prune are dropped while the list is read */
            if (p->priv->filter && !o->no_partition_pruning) {
                lo.keep = keep_manifest;
                lo.keep_ctx = &pl;
            }
            FLOE_CHECK(floe_manifest_list_read(floe_table_io(t), list_uri, &lo, &p->priv->arena, &list, err));
            p->stats.manifests_skipped += (int64_t)(list.nlisted - list.nfiles);
            p->stats.bytes_read += list.file_length;
        } else {
            /* v1 snapshot listing its manifests directly (no list): what the list would
             * say is unknown, so nothing is pruned by summaries and sequence numbers are
             * 0 (spec Appendix E) */
            v1 = floe_arena_alloc(&p->priv->arena,
                                  (snap->n_manifests ? snap->n_manifests : 1) * sizeof *v1);
            if (!v1)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            for (size_t i = 0; i < snap->n_manifests; i++) {
                v1[i].manifest_path = snap->manifests[i];
                v1[i].partition_spec_id = m->default_spec_id;
                v1[i].content = FLOE_MANIFEST_DATA;
                v1[i].has_added_snapshot_id = true;
                v1[i].added_snapshot_id = snap->snapshot_id;
                v1[i].added_files_count = v1[i].existing_files_count = -1;
                v1[i].deleted_files_count = v1[i].added_rows_count = -1;
                v1[i].existing_rows_count = v1[i].deleted_rows_count = -1;
            }
            list.files = v1;
            list.nfiles = snap->n_manifests;
        }
        p->stats.manifests_total = (int64_t)(snap->manifest_list ? list.nlisted : list.nfiles);
        if (list.nfiles > 1 && !(pl.schemas = floe_manifest_schema_cache_new()))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        /* data manifests first is not required: deletes are paired after all are read */
        pl.mfs = list.files;
        pruned = floe_calloc(list.nfiles ? list.nfiles : 1, sizeof *pruned);
        if (!pruned)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        for (size_t i = 0; i < list.nfiles; i++) {
            pruned[i] = manifest_pruned(&pl, &list.files[i]);
            p->stats.manifests_skipped += pruned[i];
        }
        FLOE_CHECK(reserve_paths(&pl, list.files, pruned, list.nfiles));
        /* what decoding needs, resolved here: workers touch neither table nor planner */
        uris = floe_calloc(list.nfiles ? list.nfiles : 1, sizeof *uris);
        pl.specs = floe_calloc(list.nfiles ? list.nfiles : 1, sizeof *pl.specs);
        order = floe_malloc((list.nfiles ? list.nfiles : 1) * sizeof *order);
        if (!uris || !pl.specs || !order)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        nuris = list.nfiles;
        size_t norder = 0, split = 0;
        for (int pass = emit ? 0 : 1; pass < 2; pass++) {
            /* streaming: every delete manifest first, so each data file leaves with its
             * deletes */
            for (size_t i = 0; i < list.nfiles; i++) {
                bool dm = list.files[i].content == FLOE_MANIFEST_DELETES;
                if (pruned[i] || (emit && dm != (pass == 0)))
                    continue;
                FLOE_CHECK(floe_table_resolve_path(t, list.files[i].manifest_path, &uris[i],
                                                   err));
                pl.specs[i] = spec_for(&pl, list.files[i].partition_spec_id);
                order[norder++] = i;
            }
            if (pass == 0)
                split = norder;
        }
        decode_ctx dc = {.io = floe_table_io(t), .mfs = list.files, .uris = uris,
                         .specs = pl.specs, .o = o, .filter = p->priv->filter,
                         .schema = p->priv->schema, .order = order, .norder = norder,
                         .awaited = SIZE_MAX};
        pthread_mutex_init(&dc.lock, NULL);
        pthread_cond_init(&dc.room, NULL);
        pthread_cond_init(&dc.done, NULL);
        rc = read_manifests(&pl, &dc, emit ? split : norder, emit ? delete_buffers : NULL);
        pthread_cond_destroy(&dc.room);
        pthread_cond_destroy(&dc.done);
        pthread_mutex_destroy(&dc.lock);
        FLOE_CHECK(rc);
        if (!emit)
            FLOE_CHECK(pair_deletes(&pl));
    }
    p->stats.plan_ms = (double)(floe_now_ns() - t0) / 1e6;
done:
    floe_free(list_uri);
    floe_free(pl.dels);
    floe_free(pl.del_seq);
    floe_free(pl.del_spec);
    floe_free(pl.dbuf);
    floe_free(pl.dsbuf);
    floe_hashset_free(&pl.planned);
    floe_manifest_schema_cache_free(pl.schemas);
    floe_free(pruned);
    for (size_t i = 0; i < nuris; i++)
        floe_free(uris[i]);
    floe_free(uris);
    floe_free(order);
    floe_free(pl.specs);
    if (rc < 0) {
        floe_scan_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int floe_scan_plan_files(floe_table *t, const floe_scan_options *o, floe_scan_plan **out,
                         floe_error *err) {
    return plan_scan(t, o, NULL, NULL, out, err);
}

int floe_scan_plan_stream(floe_table *t, const floe_scan_options *o, floe_scan_task_fn fn,
                          void *ctx, floe_scan_plan **out, floe_error *err) {
    FLOE_RETURN_ERROR_IF(!fn, err, FLOE_EINVALID, "floe_scan_plan_stream: no task function");
    return plan_scan(t, o, fn, ctx, out, err);
}
