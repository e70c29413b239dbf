/*
 * append.c - the snapshot producer for appends: new manifest, manifest list re-derived on
 * every attempt, commit-time manifest merging, snapshot summary, exactly-once marker and
 * cleanup of the files a commit wrote.
 *
 * Spec: format/spec.md "Snapshots" (operation append, summary fields "added-data-files",
 * "added-records", "added-files-size", "changed-partition-count", "total-*"), "Manifests"
 * (status ADDED / EXISTING, DELETED entries of older snapshots are dropped when a manifest
 * is rewritten), "Manifest Lists", "Sequence Number Inheritance", "Commit Conflict
 * Resolution and Retry"; configuration docs for commit.manifest-merge.enabled,
 * commit.manifest.target-size-bytes and commit.manifest.min-count-to-merge.
 *
 * The producer's states (floe_append):
 *
 *   staged --commit()--> manifest written --floe_table_commit--> attempt k:
 *       apply(): once-check (marker, caller's check) -> base list read -> merge -> list k
 *                written -> snapshot added
 *   -> committed: files of attempts other than the winning one deleted
 *   -> noop (once-marker found): every file written deleted
 *   -> failed (conflict exhausted, error): every file written deleted
 *   -> unknown: nothing deleted (the table may reference any of them)
 *
 * Invariants:
 *   A1. Everything an attempt derives comes from the base it is handed (apply may run
 *       several times); only the new manifest, written before the first attempt, is
 *       shared between attempts.
 *   A2. A file this append wrote is deleted only when the commit outcome is known and the
 *       committed metadata does not reference it.
 *   A3. Merged manifests keep each entry's snapshot id and sequence numbers (EXISTING);
 *       the entries this snapshot adds stay ADDED with inherited sequence numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "commit_files.h"
#include "table_internal.h"

#define MERGE_TARGET_DEFAULT (8 * 1024 * 1024)
#define MERGE_MIN_COUNT_DEFAULT 100

struct floe_append {
    floe_table *t;
    floe_arena arena;             /* staged files, summary strings, the new manifest */
    floe_data_file *files;
    size_t nfiles, cap;
    floe_kv *summary;
    size_t nsummary, summary_cap;
    const char *once_key, *once_value;
    floe_append_check_fn check;   /* caller's exactly-once rule, or NULL */
    void *check_ctx;
    floe_kv *props;               /* properties set by the same commit */
    size_t nprops;
    const char *branch;           /* the branch the snapshot goes to (arena); NULL = main */
    int merge_enabled;            /* -1 = table property */
    int64_t merge_target, merge_min;

    /* commit state */
    bool committed;
    bool has_start;
    int64_t start_snapshot_id;    /* branch head when the commit started */
    int64_t snapshot_id;
    char commit_uuid[37];
    char *md_dir;                 /* recorded metadata dir */
    floe_schema *schema;
    floe_partition_spec *spec;
    bool has_spec_id;             /* floe_append_set_spec: spec_id, not the default */
    int32_t spec_id;
    floe_schema *spec_schema;     /* the schema spec binds in when not the current one */
    floe_manifest_file new_manifest;
    bool has_new_manifest;
    size_t ndeletes;              /* equality delete files among files (a row delta) */
    floe_manifest_file new_del_manifest; /* theirs, carried as it is (never merged) */
    bool has_new_del_manifest;
    floe_strlist written;         /* recorded paths of every file this append wrote */
    floe_strlist final_refs;      /* manifests + list of the last attempt */
    int attempts;
    bool noop;
    int64_t seq;
    int64_t manifests, merged;
};

/* ---------------------------------------------------------------------------------------
 * staging
 * ------------------------------------------------------------------------------------- */

int floe_append_new(floe_table *t, floe_append **out, floe_error *err) {
    floe_append *a = floe_calloc(1, sizeof *a);
    if (!a)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    a->t = t;
    floe_arena_init(&a->arena, 64 * 1024);
    a->merge_enabled = -1;
    *out = a;
    return 0;
}

void floe_append_free(floe_append *a) {
    if (!a)
        return;
    floe_arena_reset(&a->arena);
    floe_free(a->files);
    floe_free(a->summary);
    floe_free(a->props);
    floe_free(a->md_dir);
    floe_schema_free(a->schema);
    floe_schema_free(a->spec_schema);
    floe_partition_spec_free(a->spec);
    floe_strlist_free(&a->written);
    floe_strlist_free(&a->final_refs);
    floe_free(a);
}

int floe_append_set_branch(floe_append *a, const char *branch, floe_error *err) {
    FLOE_RETURN_ERROR_IF(a->committed, err, FLOE_EINVALID, "append already committed");
    if (!branch || !strcmp(branch, "main")) {
        a->branch = NULL;
        return 0;
    }
    FLOE_RETURN_ERROR_IF(!*branch, err, FLOE_EINVALID, "branch name must not be empty");
    size_t n = strlen(branch) + 1;
    char *copy = floe_arena_alloc(&a->arena, n);
    FLOE_RETURN_ERROR_IF(!copy, err, FLOE_ENOMEM, "out of memory");
    memcpy(copy, branch, n);
    a->branch = copy;
    return 0;
}

int floe_append_set_spec(floe_append *a, int32_t spec_id, floe_error *err) {
    FLOE_RETURN_ERROR_IF(a->committed, err, FLOE_EINVALID, "append already committed");
    a->has_spec_id = true;
    a->spec_id = spec_id;
    return 0;
}

int floe_append_add_file(floe_append *a, const floe_data_file *f, floe_error *err) {
    FLOE_RETURN_ERROR_IF(a->committed, err, FLOE_EINVALID, "append already committed");
    bool eq = f->content == FLOE_CONTENT_EQUALITY_DELETES;
    FLOE_RETURN_ERROR_IF(f->content != FLOE_CONTENT_DATA && !eq, err, FLOE_EINVALID,
                         "append: %s is neither a data file nor an equality delete file",
                         f->file_path);
    FLOE_RETURN_ERROR_IF(eq && f->nequality_ids == 0, err, FLOE_EINVALID,
                         "append: equality delete file %s names no equality field",
                         f->file_path);
    FLOE_RETURN_ERROR_IF(!f->file_path || f->record_count < 0 || f->file_size_in_bytes < 0,
                         err, FLOE_EINVALID, "append: data file without path or counts");
    if (a->nfiles == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        floe_data_file *nf = floe_realloc(a->files, nc * sizeof *nf);
        if (!nf)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        a->files = nf;
        a->cap = nc;
    }
    FLOE_FORWARD_IF_ERROR(floe_data_file_copy(f, &a->arena, &a->files[a->nfiles], err));
    a->nfiles++;
    a->ndeletes += eq;
    return 0;
}

int floe_append_set_summary(floe_append *a, const char *key, const char *value,
                            floe_error *err) {
    FLOE_RETURN_ERROR_IF(!key || !value, err, FLOE_EINVALID, "summary: key and value needed");
    for (size_t i = 0; i < a->nsummary; i++)
        if (!strcmp(a->summary[i].key, key)) {
            const char *v = floe_arena_strdup(&a->arena, value);
            FLOE_RETURN_ERROR_IF(!v, err, FLOE_ENOMEM, "out of memory");
            a->summary[i].value = v;
            return 0;
        }
    if (a->nsummary == a->summary_cap) {
        size_t nc = a->summary_cap ? a->summary_cap * 2 : 8;
        floe_kv *ns = floe_realloc(a->summary, nc * sizeof *ns);
        if (!ns)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        a->summary = ns;
        a->summary_cap = nc;
    }
    const char *k = floe_arena_strdup(&a->arena, key);
    const char *v = floe_arena_strdup(&a->arena, value);
    FLOE_RETURN_ERROR_IF(!k || !v, err, FLOE_ENOMEM, "out of memory");
    a->summary[a->nsummary++] = (floe_kv){k, v};
    return 0;
}

int floe_append_set_once(floe_append *a, const char *key, const char *value,
                         floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_append_set_summary(a, key, value, err));
    a->once_key = floe_arena_strdup(&a->arena, key);
    a->once_value = floe_arena_strdup(&a->arena, value);
    FLOE_RETURN_ERROR_IF(!a->once_key || !a->once_value, err, FLOE_ENOMEM, "out of memory");
    return 0;
}

void floe_append_set_check(floe_append *a, floe_append_check_fn fn, void *ctx) {
    a->check = fn;
    a->check_ctx = ctx;
}

int floe_append_set_property(floe_append *a, const char *key, const char *value,
                             floe_error *err) {
    floe_kv *np = floe_realloc(a->props, (a->nprops + 1) * sizeof *np);
    if (!np)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    a->props = np;
    const char *k = floe_arena_strdup(&a->arena, key);
    const char *v = floe_arena_strdup(&a->arena, value);
    FLOE_RETURN_ERROR_IF(!k || !v, err, FLOE_ENOMEM, "out of memory");
    a->props[a->nprops++] = (floe_kv){k, v};
    return 0;
}

void floe_append_set_merge(floe_append *a, int enabled, int64_t target_size_bytes,
                           int64_t min_count_to_merge) {
    a->merge_enabled = enabled < 0 ? -1 : enabled != 0;
    a->merge_target = target_size_bytes > 0 ? target_size_bytes : 0;
    a->merge_min = min_count_to_merge > 0 ? min_count_to_merge : 0;
}

void floe_append_result_reset(floe_append_result *r) {
    if (!r)
        return;
    floe_free(r->metadata_location);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------
 * helpers
 * ------------------------------------------------------------------------------------- */

static const char *summary_get(const floe_snapshot *s, const char *key) {
    for (size_t i = 0; s && i < s->n_summary; i++)
        if (s->summary[i].key && !strcmp(s->summary[i].key, key))
            return s->summary[i].value;
    return NULL;
}

/* The head of the branch the append goes to (NULL when it has none yet). A branch other
 * than main must exist and be a branch. */
static int branch_head(const floe_append *a, const floe_table_metadata *m,
                       const floe_snapshot **out, floe_error *err) {
    if (!a->branch) {
        *out = floe_table_metadata_current_snapshot(m);
        return 0;
    }
    const floe_snapshot_ref *ref = floe_table_metadata_ref(m, a->branch);
    FLOE_RETURN_ERROR_IF(!ref, err, FLOE_ENOTFOUND,
                         "no branch named %s (create it with floe ref create)", a->branch);
    FLOE_RETURN_ERROR_IF(ref->is_tag, err, FLOE_EINVALID, "%s is a tag, not a branch",
                         a->branch);
    const floe_snapshot *s = floe_table_metadata_snapshot(m, ref->snapshot_id);
    FLOE_RETURN_ERROR_IF(!s, err, FLOE_ECORRUPT, "branch %s names a missing snapshot %" PRId64,
                         a->branch, ref->snapshot_id);
    *out = s;
    return 0;
}

/* Is the once-marker in a snapshot of the branch's lineage added after start_id? */
static bool once_found(const floe_append *a, const floe_table_metadata *m) {
    if (!a->once_key)
        return false;
    const floe_snapshot *s = NULL;
    floe_error ignored;
    if (branch_head(a, m, &s, &ignored) < 0)
        return false; /* the commit reports it */
    /* the lineage is walked at most n_snapshots steps: a cycle in hostile metadata ends */
    for (size_t steps = 0; s && steps <= m->n_snapshots; steps++) {
        if (a->has_start && s->snapshot_id == a->start_snapshot_id)
            break;
        const char *v = summary_get(s, a->once_key);
        if (v && !strcmp(v, a->once_value))
            return true;
        s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
    }
    return false;
}

static int track(floe_append *a, const char *path, floe_error *err) {
    return floe_strlist_push(&a->written, path, err);
}

/* Physical location of a recorded path for writing or reading. */
static int physical(const floe_append *a, const char *recorded, char **out, floe_error *err) {
    return floe_table_resolve_path(a->t, recorded, out, err);
}

/* The current schema into a->schema and the files' spec into a->spec: the default spec,
 * or the one floe_append_set_spec named, bound where its source columns resolve (an older
 * schema, kept in a->spec_schema, when one of them has been dropped since). */
static int parse_schema_spec(floe_append *a, const floe_table_metadata *m, floe_error *err) {
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
    FLOE_RETURN_ERROR_IF(!ms || !sp, err, FLOE_ECORRUPT,
                         "table metadata without a current schema or default spec");
    FLOE_FORWARD_IF_ERROR(floe_schema_parse(ms->json, strlen(ms->json), &a->schema, err));
    if (!a->has_spec_id)
        return floe_partition_spec_parse_json(sp->json, strlen(sp->json), a->schema, &a->spec,
                                              err);
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_bind_spec(m, a->spec_id, &a->spec_schema,
                                                        &a->spec, err));
    if (a->spec_schema->schema_id == a->schema->schema_id) {
        floe_schema_free(a->spec_schema);
        a->spec_schema = NULL;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * the new manifest (written once, before the first attempt)
 * ------------------------------------------------------------------------------------- */

/* The manifest of the staged files of one content (data, or equality deletes). */
static int write_new_manifest(floe_append *a, const floe_table_metadata *m, bool deletes,
                              floe_error *err) {
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.content = deletes ? FLOE_MANIFEST_DELETES : FLOE_MANIFEST_DATA;
    o.schema = a->spec_schema ? a->spec_schema : a->schema;
    o.spec = a->spec;
    o.has_snapshot_id = true;
    o.snapshot_id = a->snapshot_id;
    o.format_version = m->format_version; /* a table keeps its format */
    FLOE_FORWARD_IF_ERROR(
        floe_manifest_codec_from_props(m->properties, m->n_properties, &o.codec, &o.level, err));
    char *recorded = floe_manifest_path_new(a->md_dir, a->commit_uuid, deletes ? 1 : 0);
    char *phys = NULL;
    floe_manifest_writer *w = NULL;
    int rc = 0;
    if (!recorded)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(physical(a, recorded, &phys, err));
    FLOE_CHECK(floe_manifest_writer_open(floe_table_io(a->t), phys, &o, &w, err));
    for (size_t i = 0; i < a->nfiles; i++) {
        if ((a->files[i].content == FLOE_CONTENT_EQUALITY_DELETES) != deletes)
            continue;
        if (a->files[i].npartition != a->spec->nfields)
            FLOE_FAIL(err, FLOE_EINVALID,
                      "append: %s has %zu partition values, spec %d has %zu fields",
                      a->files[i].file_path, a->files[i].npartition, a->spec->spec_id,
                      a->spec->nfields);
        FLOE_CHECK(floe_manifest_writer_add(w, &a->files[i], -1, err));
    }
    FLOE_CHECK(track(a, recorded, err));
    floe_manifest_file *mf = deletes ? &a->new_del_manifest : &a->new_manifest;
    rc = floe_manifest_writer_close(w, NULL, &a->arena, mf, err);
    w = NULL;
    if (rc < 0) {
        a->written.n--; /* the writer left nothing behind */
        floe_free(a->written.items[a->written.n]);
        goto done;
    }
    /* the list records where the manifest is as the table names it */
    mf->manifest_path = floe_arena_strdup(&a->arena, recorded);
    if (!mf->manifest_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (deletes)
        a->has_new_del_manifest = true;
    else
        a->has_new_manifest = true;
done:
    floe_manifest_writer_abort(w);
    floe_free(recorded);
    floe_free(phys);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * merging (per attempt)
 * ------------------------------------------------------------------------------------- */

typedef struct attempt_ctx {
    floe_append *a;
    const floe_table_metadata *base;
    int fv;                    /* format version of the commit (1, 2 or 3) */
    floe_arena arena;
    floe_manifest_file *out;   /* the new list */
    size_t nout, outcap;
    int merged_n;              /* merged manifests written this attempt */
    int64_t merged_inputs;
} attempt_ctx;

static int out_push(attempt_ctx *c, const floe_manifest_file *f, floe_error *err) {
    if (c->nout == c->outcap) {
        size_t nc = c->outcap ? c->outcap * 2 : 16;
        floe_manifest_file *n = floe_realloc(c->out, nc * sizeof *n);
        if (!n)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        c->out = n;
        c->outcap = nc;
    }
    c->out[c->nout++] = *f;
    return 0;
}

/* Rewrite the manifests bin[0..n) as one manifest of spec `spec`. */
static int merge_bin(attempt_ctx *c, const floe_manifest_file *const *bin, size_t n,
                     const floe_partition_spec *spec, floe_manifest_content content,
                     floe_manifest_file *merged, floe_error *err) {
    floe_append *a = c->a;
    floe_manifest_write_options o;
    floe_manifest_write_options_init(&o);
    o.content = content;
    o.schema = a->schema;
    o.spec = spec;
    o.has_snapshot_id = true;
    o.snapshot_id = a->snapshot_id;
    o.format_version = c->fv;
    FLOE_FORWARD_IF_ERROR(floe_manifest_codec_from_props(c->base->properties,
                                                         c->base->n_properties, &o.codec,
                                                         &o.level, err));
    int rc = 0;
    char *recorded = NULL, *phys = NULL;
    floe_manifest_writer *w = NULL;
    floe_manifest_reader *r = NULL;
    /* names m1.. are per attempt: m<attempt*1000 + k> keeps them unique across attempts */
    recorded = floe_manifest_path_new(a->md_dir, a->commit_uuid,
                                      a->attempts * 1000 + ++c->merged_n);
    if (!recorded)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(physical(a, recorded, &phys, err));
    FLOE_CHECK(floe_manifest_writer_open(floe_table_io(c->a->t), phys, &o, &w, err));
    for (size_t i = 0; i < n; i++) {
        const floe_manifest_file *mf = bin[i];
        char *src = NULL;
        FLOE_CHECK(physical(a, mf->manifest_path, &src, err));
        /* a v3 delete manifest holds deletion vectors: carried as they are */
        floe_manifest_read_options ro = {.manifest = mf, .spec = spec,
                                         .allow_deletion_vectors = true};
        rc = floe_manifest_reader_open(floe_table_io(c->a->t), src, &ro, &r, err);
        floe_free(src);
        if (rc < 0)
            goto done;
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(r, &e, err)) == 1) {
            if (e->status == FLOE_ENTRY_DELETED)
                continue; /* deletions of older snapshots are history, not state */
            if (mf == &a->new_manifest)
                rc = floe_manifest_writer_add(w, &e->file, -1, err);
            else
                rc = floe_manifest_writer_existing(w, e, err);
            if (rc < 0)
                goto done;
        }
        if (rc < 0)
            goto done;
        floe_manifest_reader_close(r);
        r = NULL;
    }
    FLOE_CHECK(track(a, recorded, err));
    rc = floe_manifest_writer_close(w, NULL, &c->arena, merged, err);
    w = NULL;
    if (rc < 0)
        goto done;
    merged->manifest_path = floe_arena_strdup(&c->arena, recorded);
    if (!merged->manifest_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    c->merged_inputs += (int64_t)n;
done:
    floe_manifest_reader_close(r);
    floe_manifest_writer_abort(w);
    floe_free(recorded);
    floe_free(phys);
    return rc;
}

/* One group (same content and spec), in list order: bin-pack from the end with a
 * lookback of one (so the under-filled bin is the newest, merged again next time), then
 * merge each bin of two or more - except the bin holding the group's first (newest)
 * manifest while it has fewer than min_count manifests. */
static int merge_group(attempt_ctx *c, const floe_manifest_file *const *g, size_t n,
                       int64_t target, int64_t min_count, floe_error *err) {
    int rc = 0;
    size_t *bin_start = floe_malloc((n + 1) * sizeof *bin_start);
    floe_partition_spec *spec = NULL;
    if (!bin_start)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* packing from the end: bins are cut walking backwards */
    size_t nb = 0;
    {
        size_t *starts_rev = bin_start; /* filled backwards, reversed below */
        int64_t w = 0;
        size_t end = n;
        for (size_t k = n; k-- > 0;) {
            int64_t len = g[k]->manifest_length > 0 ? g[k]->manifest_length : 1;
            if (k + 1 < end && w + len > target) {
                starts_rev[nb++] = k + 1;
                w = 0;
                end = k + 1;
            }
            w += len;
        }
        starts_rev[nb++] = 0;
        for (size_t i = 0; i < nb / 2; i++) {
            size_t tmp = starts_rev[i];
            starts_rev[i] = starts_rev[nb - 1 - i];
            starts_rev[nb - 1 - i] = tmp;
        }
        bin_start[nb] = n;
    }
    const floe_metadata_spec *ms = floe_table_metadata_spec(c->base, g[0]->partition_spec_id);
    floe_error e2;
    floe_error_clear(&e2);
    if (!ms || floe_partition_spec_parse_json(ms->json, strlen(ms->json), c->a->schema, &spec,
                                              &e2) < 0) {
        /* a spec that no longer binds to the current schema: leave its manifests alone */
        spec = NULL;
    }
    for (size_t b = 0; b < nb; b++) {
        size_t s = bin_start[b], e = bin_start[b + 1];
        size_t cnt = e - s;
        bool keep = cnt == 1 || !spec || (s == 0 && (int64_t)cnt < min_count);
        if (keep) {
            for (size_t i = s; i < e; i++)
                FLOE_CHECK(out_push(c, g[i], err));
            continue;
        }
        floe_manifest_file merged;
        FLOE_CHECK(merge_bin(c, g + s, cnt, spec, g[s]->content, &merged, err));
        FLOE_CHECK(out_push(c, &merged, err));
    }
done:
    floe_partition_spec_free(spec);
    floe_free(bin_start);
    return rc;
}

/* The new list: [new manifest] + base manifests, merged per group when enabled. Groups are
 * emitted in the order their first manifest appears. */
static int build_list(attempt_ctx *c, const floe_manifest_file *base, size_t nbase,
                      floe_error *err) {
    floe_append *a = c->a;
    size_t n = nbase + 1;
    const floe_manifest_file **all = floe_malloc(n * sizeof *all);
    const floe_manifest_file **grp = floe_malloc(n * sizeof *grp);
    bool *used = floe_calloc(n, sizeof *used);
    int rc = 0;
    if (!all || !grp || !used)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t nall = 0;
    if (a->has_new_manifest) /* not for a row delta of equality deletes only */
        all[nall++] = &a->new_manifest;
    for (size_t i = 0; i < nbase; i++)
        all[nall++] = &base[i];
    n = nall;
    const floe_table_metadata *m = c->base;
    bool enabled = a->merge_enabled >= 0
                       ? a->merge_enabled == 1
                       : floe_table_metadata_property_bool(m, FLOE_PROP_MANIFEST_MERGE_ENABLED,
                                                           true);
    int64_t target = a->merge_target ? a->merge_target
                                     : floe_table_metadata_property_int(
                                           m, FLOE_PROP_MANIFEST_TARGET_SIZE,
                                           MERGE_TARGET_DEFAULT);
    int64_t min_count = a->merge_min ? a->merge_min
                                     : floe_table_metadata_property_int(
                                           m, FLOE_PROP_MANIFEST_MIN_MERGE,
                                           MERGE_MIN_COUNT_DEFAULT);
    if (target <= 0)
        target = MERGE_TARGET_DEFAULT;
    if (!enabled || min_count <= 0) {
        for (size_t i = 0; i < n; i++)
            FLOE_CHECK(out_push(c, all[i], err));
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (used[i])
            continue;
        size_t ng = 0;
        for (size_t k = i; k < n; k++)
            if (!used[k] && all[k]->content == all[i]->content &&
                all[k]->partition_spec_id == all[i]->partition_spec_id) {
                grp[ng++] = all[k];
                used[k] = true;
            }
        FLOE_CHECK(merge_group(c, grp, ng, target, min_count, err));
    }
done:
    floe_free(all);
    floe_free(grp);
    floe_free(used);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * summary
 * ------------------------------------------------------------------------------------- */

static int count_partitions(const floe_append *a, int64_t *out, floe_error *err) {
    char **keys = floe_calloc(a->nfiles ? a->nfiles : 1, sizeof *keys);
    if (!keys)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    floe_buf b;
    floe_buf_init(&b, 0);
    for (size_t i = 0; i < a->nfiles; i++) {
        floe_buf_reset(&b);
        FLOE_CHECK(floe_partition_spec_path(a->spec, a->files[i].partition, &b, err));
        if (!(keys[i] = floe_strndup(b.len ? (const char *)b.data : "", b.len)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    int64_t distinct = 0;
    for (size_t i = 0; i < a->nfiles; i++) {
        bool seen = false;
        /* quadratic, but an append carries few files per distinct partition */
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(keys[k], keys[i]);
        distinct += !seen;
    }
    *out = distinct;
done:
    for (size_t i = 0; i < a->nfiles; i++)
        floe_free(keys[i]);
    floe_free(keys);
    floe_buf_free(&b);
    return rc;
}

typedef struct summary_acc {
    floe_kv *kv;
    size_t n, cap;
    floe_arena *arena;
} summary_acc;

static int sum_put(summary_acc *s, const char *k, const char *v, floe_error *err) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->kv[i].key, k)) {
            s->kv[i].value = v;
            return 0;
        }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 32;
        floe_kv *n = floe_arena_alloc(s->arena, nc * sizeof *n);
        if (!n)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (s->n)
            memcpy(n, s->kv, s->n * sizeof *n);
        s->kv = n;
        s->cap = nc;
    }
    s->kv[s->n++] = (floe_kv){k, v};
    return 0;
}

static int sum_int(summary_acc *s, const char *k, int64_t v, floe_error *err) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    const char *d = floe_arena_strdup(s->arena, buf);
    if (!d)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return sum_put(s, k, d, err);
}

/* total-<x>: the parent's value plus what this snapshot adds; without a parent just the
 * addition; omitted when the parent did not record it (the total is then unknown). */
/* ---------------------------------------------------------------------------------------
 * apply
 * ------------------------------------------------------------------------------------- */

static int apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    floe_append *a = ctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    a->attempts++;
    if (once_found(a, base)) {
        a->noop = true;
        return FLOE_COMMIT_NOOP;
    }
    if (a->check) {
        int crc = a->check(a->check_ctx, base, err);
        if (crc == FLOE_COMMIT_NOOP)
            a->noop = true;
        if (crc != 0)
            return crc;
    }
    /* The files keep the spec they were written with, as every Iceberg file does: a new
     * default spec committed meanwhile (partition evolution) leaves them valid, and only
     * the spec's removal from the table would not. */
    FLOE_RETURN_ERROR_IF(!floe_table_metadata_spec(base, a->spec->spec_id), err, FLOE_EINVALID,
                         "the table's partition spec %d, which the appended files were "
                         "written with, was removed during the append", a->spec->spec_id);
    attempt_ctx c = {.a = a, .base = base, .fv = floe_metadata_builder_format_version(b)};
    floe_arena_init(&c.arena, 64 * 1024);
    int rc = 0;
    char *list_rec = NULL, *list_phys = NULL, *src = NULL;
    const floe_snapshot *parent = NULL;
    floe_manifest_list bl = {0};
    FLOE_CHECK(branch_head(a, base, &parent, err));
    if (parent) {
        FLOE_RETURN_ERROR_IF(!parent->manifest_list, err, FLOE_EUNSUPPORTED,
                             "snapshot %" PRId64 " has no manifest list (v1 manifests field)",
                             parent->snapshot_id);
        FLOE_CHECK(physical(a, parent->manifest_list, &src, err));
        floe_manifest_list_read_options lo = {.has_snapshot_id = true,
                                              .snapshot_id = parent->snapshot_id};
        FLOE_CHECK(floe_manifest_list_read(floe_table_io(c.a->t), src, &lo, &c.arena, &bl, err));
    }
    FLOE_CHECK(build_list(&c, bl.files, bl.nfiles, err));
    if (a->has_new_del_manifest)
        FLOE_CHECK(out_push(&c, &a->new_del_manifest, err));
    /* v3: row ids for the manifests without them, from the next-row-id of this attempt */
    int64_t first_row_id = floe_metadata_builder_next_row_id(b), added_rows = 0;
    if (first_row_id >= 0)
        FLOE_CHECK(floe_manifest_list_assign_row_ids(c.out, c.nout, first_row_id, &added_rows,
                                                     err));

    /* list file for this attempt */
    int64_t seq = floe_metadata_builder_next_sequence_number(b);
    list_rec = floe_manifest_list_path_new(a->md_dir, a->snapshot_id, a->attempts,
                                           a->commit_uuid);
    if (!list_rec)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(physical(a, list_rec, &list_phys, err));
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = a->snapshot_id;
    lo.has_parent = parent != NULL;
    lo.parent_snapshot_id = parent ? parent->snapshot_id : 0;
    lo.sequence_number = seq;
    lo.format_version = c.fv;
    FLOE_CHECK(floe_manifest_codec_from_props(base->properties, base->n_properties, &lo.codec,
                                              &lo.level, err));
    FLOE_CHECK(track(a, list_rec, err));
    rc = floe_manifest_list_write(floe_table_io(c.a->t), list_phys, &lo, c.out, c.nout, NULL, NULL, err);
    if (rc < 0) {
        a->written.n--;
        floe_free(a->written.items[a->written.n]);
        goto done;
    }
    floe_strlist_free(&a->final_refs);
    FLOE_CHECK(floe_strlist_push(&a->final_refs, list_rec, err));
    for (size_t i = 0; i < c.nout; i++)
        FLOE_CHECK(floe_strlist_push(&a->final_refs, c.out[i].manifest_path, err));

    /* summary */
    /* a row delta's equality deletes count apart (spec "Optional Snapshot Summary
     * Fields"); its files' sizes are added files' sizes too */
    int64_t added_records = 0, added_size = 0, changed = 0, eq_records = 0;
    for (size_t i = 0; i < a->nfiles; i++) {
        if (a->files[i].content == FLOE_CONTENT_EQUALITY_DELETES)
            eq_records += a->files[i].record_count;
        else
            added_records += a->files[i].record_count;
        added_size += a->files[i].file_size_in_bytes;
    }
    FLOE_CHECK(count_partitions(a, &changed, err));
    summary_acc s = {.arena = &c.arena};
    for (size_t i = 0; i < a->nsummary; i++)
        FLOE_CHECK(sum_put(&s, a->summary[i].key, a->summary[i].value, err));
    FLOE_CHECK(sum_int(&s, "added-data-files", (int64_t)(a->nfiles - a->ndeletes), err));
    FLOE_CHECK(sum_int(&s, "added-records", added_records, err));
    FLOE_CHECK(sum_int(&s, "added-files-size", added_size, err));
    FLOE_CHECK(sum_int(&s, "changed-partition-count", changed, err));
    if (a->ndeletes) {
        FLOE_CHECK(sum_int(&s, "added-delete-files", (int64_t)a->ndeletes, err));
        FLOE_CHECK(sum_int(&s, "added-equality-delete-files", (int64_t)a->ndeletes, err));
        FLOE_CHECK(sum_int(&s, "added-equality-deletes", eq_records, err));
    }
    floe_snapshot_totals added = {.records = added_records,
                                  .files_size = added_size,
                                  .data_files = (int64_t)(a->nfiles - a->ndeletes),
                                  .delete_files = (int64_t)a->ndeletes,
                                  .equality_deletes = eq_records},
                         tot;
    FLOE_CHECK(floe_table_next_totals(a->t, parent, bl.files, bl.nfiles, &added, &tot, err));
    for (int k = 0; k < 6; k++)
        FLOE_CHECK(sum_int(&s, floe_snapshot_total_keys[k], floe_snapshot_total(&tot, k), err));

    floe_snapshot_new sn = {.snapshot_id = a->snapshot_id,
                            /* a row delta (spec "Snapshots"): overwrite */
                            .operation = a->ndeletes ? "overwrite" : "append",
                            .manifest_list = list_rec,
                            .summary = s.kv,
                            .n_summary = s.n,
                            .schema_id = -1,
                            .branch = a->branch,
                            .row_lineage = first_row_id >= 0,
                            .first_row_id = first_row_id,
                            .added_rows = added_rows};
    for (size_t i = 0; i < a->nprops; i++)
        FLOE_CHECK(floe_metadata_builder_set_property(b, a->props[i].key, a->props[i].value,
                                                      err));
    int64_t got_seq = 0;
    FLOE_CHECK(floe_metadata_builder_add_snapshot(b, &sn, NULL, &got_seq, err));
    a->seq = got_seq;
    a->manifests = (int64_t)c.nout;
    a->merged = c.merged_inputs;
done:
    floe_free(c.out);
    floe_arena_reset(&c.arena);
    floe_free(list_rec);
    floe_free(list_phys);
    floe_free(src);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * commit
 * ------------------------------------------------------------------------------------- */

/* Delete the files this append wrote; keep_refs keeps what the committed snapshot uses. */
static void cleanup(floe_append *a, bool keep_refs) {
    floe_commit_files_delete(a->t, &a->written, keep_refs ? &a->final_refs : NULL, "append");
}

int64_t floe_append_snapshot_id(const floe_append *a) { return a ? a->snapshot_id : 0; }

int floe_append_commit(floe_append *a, floe_append_result *res, floe_error *err) {
    FLOE_RETURN_ERROR_IF(a->committed, err, FLOE_EINVALID, "append already committed");
    a->committed = true;
    floe_table *t = a->t;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    int rc = 0;
    FLOE_RETURN_ERROR_IF(!floe_table_catalog(t), err, FLOE_EUNSUPPORTED,
                         "table at %s was opened by path: appends need a catalog",
                         floe_table_root(t));
    FLOE_FORWARD_IF_ERROR(floe_table_metadata_check_writable(m, err));
    const floe_snapshot *head = NULL;
    FLOE_FORWARD_IF_ERROR(branch_head(a, m, &head, err));
    a->has_start = head != NULL;
    a->start_snapshot_id = head ? head->snapshot_id : 0;
    /* the marker may already be there from an earlier run that did not see its outcome */
    if (a->once_key) {
        a->has_start = false; /* the first check looks at the whole lineage */
        bool found = once_found(a, m);
        a->has_start = head != NULL;
        if (found) {
            a->noop = true;
            goto finish;
        }
    }
    if (a->check) { /* settle it before writing anything */
        rc = a->check(a->check_ctx, m, err);
        if (rc == FLOE_COMMIT_NOOP) {
            rc = 0;
            a->noop = true;
            goto finish;
        }
        if (rc < 0)
            return rc;
    }
    FLOE_CHECK(parse_schema_spec(a, m, err));
    a->snapshot_id = floe_metadata_new_snapshot_id();
    floe_uuid4(a->commit_uuid);
    FLOE_CHECK(floe_table_metadata_write_dir(t, &a->md_dir, err));
    FLOE_RETURN_ERROR_IF(a->ndeletes && m->format_version < 2, err, FLOE_EUNSUPPORTED,
                         "equality deletes need format v2 or later (the table is v%d)",
                         m->format_version);
    if (a->ndeletes < a->nfiles || !a->ndeletes)
        FLOE_CHECK(write_new_manifest(a, m, false, err));
    if (a->ndeletes)
        FLOE_CHECK(write_new_manifest(a, m, true, err));
    rc = floe_table_commit(t, apply, a, err);
    if (rc == FLOE_EUNKNOWN_STATE)
        return rc; /* A2: the table may reference anything we wrote */
    if (rc < 0 || a->noop) {
        cleanup(a, false);
        if (rc < 0)
            return rc;
    } else {
        cleanup(a, true);
    }
finish:
    if (res) {
        memset(res, 0, sizeof *res);
        res->noop = a->noop;
        res->attempts = a->attempts;
        if (!a->noop) {
            res->snapshot_id = a->snapshot_id;
            res->sequence_number = a->seq;
            res->manifests = a->manifests;
            res->manifests_merged = a->merged;
            for (size_t i = 0; i < a->nfiles; i++) {
                if (a->files[i].content == FLOE_CONTENT_DATA)
                    res->added_records += a->files[i].record_count;
                res->added_bytes += a->files[i].file_size_in_bytes;
            }
            res->added_files = (int64_t)a->nfiles; /* data and delete files */
        }
        /* The commit stands: an error now would make callers delete committed files
         * (fault-injection finding). Out of memory only costs the location (NULL). */
        const char *loc = floe_table_metadata_location(t);
        if (loc)
            res->metadata_location = floe_strdup(loc);
    }
    return 0;
done:
    if (rc < 0 && rc != FLOE_EUNKNOWN_STATE)
        cleanup(a, false);
    return rc;
}
