/*
 * maint_common.c - path sets, path normalisation, reading what snapshots reach, and the
 * parallel deleter shared by expiry, orphan removal and the landing lifecycle.
 *
 * Path comparison follows Iceberg's DeleteOrphanFiles: s3, s3a and s3n name one store;
 * file:/x, file:///x, file://localhost/x and /x name one local file. Repeated slashes are
 * collapsed only for local paths (on object storage "a//b" and "a/b" are two keys).
 *
 * Invariant of the path set: a slot's string never moves once inserted (it lives in the
 * set's arena), so callers may keep `const char *` members across inserts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "floe/io.h"
#include "maint_internal.h"

/* ---------------------------------------------------------------------------------------
 * path set
 * ------------------------------------------------------------------------------------- */

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

void maint_pathset_init(maint_pathset *ps) {
    memset(ps, 0, sizeof *ps);
    floe_arena_init(&ps->arena, 64 * 1024);
}

void maint_pathset_free(maint_pathset *ps) {
    if (!ps)
        return;
    floe_free(ps->slots);
    floe_arena_reset(&ps->arena);
    memset(ps, 0, sizeof *ps);
}

static maint_slot *probe(const maint_pathset *ps, const char *s, uint64_t h) {
    size_t mask = ps->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        maint_slot *sl = &ps->slots[i];
        if (!sl->s || (sl->hash == h && !strcmp(sl->s, s)))
            return sl;
    }
}

static bool grow(maint_pathset *ps) {
    size_t ncap = ps->cap ? ps->cap * 2 : 1024;
    maint_slot *ns = floe_calloc(ncap, sizeof *ns);
    if (!ns)
        return false;
    maint_slot *old = ps->slots;
    size_t ocap = ps->cap;
    ps->slots = ns;
    ps->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].s)
            *probe(ps, old[i].s, old[i].hash) = old[i];
    floe_free(old);
    return true;
}

maint_slot *maint_pathset_add(maint_pathset *ps, const char *s, uint8_t tag, bool *added) {
    /* load factor <= 1/2 keeps linear probing short */
    if ((ps->used + 1) * 2 > ps->cap && !grow(ps))
        return NULL;
    uint64_t h = hash_str(s);
    maint_slot *sl = probe(ps, s, h);
    if (sl->s) {
        bool revived = sl->dead;
        if (revived) {
            sl->dead = 0;
            sl->tag = tag;
            ps->live++;
        }
        if (added)
            *added = revived;
        return sl;
    }
    char *copy = floe_arena_strdup(&ps->arena, s);
    if (!copy)
        return NULL;
    sl->s = copy;
    sl->hash = h;
    sl->tag = tag;
    sl->dead = 0;
    sl->flag = 0;
    ps->used++;
    ps->live++;
    if (added)
        *added = true;
    return sl;
}

maint_slot *maint_pathset_find(const maint_pathset *ps, const char *s) {
    if (!ps->cap)
        return NULL;
    maint_slot *sl = probe(ps, s, hash_str(s));
    return sl->s && !sl->dead ? sl : NULL;
}

bool maint_pathset_has(const maint_pathset *ps, const char *s) {
    return maint_pathset_find(ps, s) != NULL;
}

bool maint_pathset_remove(maint_pathset *ps, const char *s) {
    maint_slot *sl = maint_pathset_find(ps, s);
    if (!sl)
        return false;
    sl->dead = 1;
    ps->live--;
    return true;
}

/* ---------------------------------------------------------------------------------------
 * paths
 * ------------------------------------------------------------------------------------- */

bool floe_maint_uri_split(const char *uri, char *buf, size_t bufsize, floe_uri_parts *out) {
    if (!uri || !*uri || bufsize < strlen(uri) + 8)
        return false;
    const char *sep = strstr(uri, "://");
    const char *colon = strchr(uri, ':');
    const char *slash = strchr(uri, '/');
    char *w = buf;
    const char *scheme = w, *authority, *path;
    const char *rest;
    bool has_scheme = colon && (!slash || colon < slash) && colon > uri;
    if (has_scheme) {
        for (const char *p = uri; p < colon; p++)
            *w++ = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        *w++ = '\0';
        if (!strcmp(scheme, "s3a") || !strcmp(scheme, "s3n"))
            strcpy((char *)scheme, "s3");
        rest = colon + 1;
    } else {
        *w++ = '\0';
        rest = uri;
    }
    authority = w;
    if (has_scheme && sep == colon) {
        const char *a = colon + 3, *e = strchr(a, '/');
        if (!e)
            e = a + strlen(a);
        memcpy(w, a, (size_t)(e - a));
        w += e - a;
        *w++ = '\0';
        rest = e;
    } else {
        *w++ = '\0';
    }
    bool local = !*scheme || !strcmp(scheme, "file");
    if (local && !strcmp(authority, "localhost"))
        ((char *)authority)[0] = '\0';
    if (!strcmp(scheme, "file"))
        ((char *)scheme)[0] = '\0'; /* file: and plain paths are one thing */
    path = w;
    if (local)
        while (rest[0] == '.' && rest[1] == '/')
            rest += 2;
    for (const char *p = rest; *p; p++) {
        if (local && *p == '/' && w > path && w[-1] == '/')
            continue;
        *w++ = *p;
    }
    *w = '\0';
    out->scheme = scheme;
    out->authority = authority;
    out->path = path;
    return true;
}

char *maint_path_key(const char *uri) {
    size_t n = strlen(uri) + 8;
    char *buf = floe_malloc(n);
    if (!buf)
        return NULL;
    floe_uri_parts p;
    char *key = NULL;
    if (floe_maint_uri_split(uri, buf, n, &p)) {
        if (!*p.scheme && !*p.authority)
            key = floe_strdup(p.path);
        else
            key = floe_asprintf("%s://%s%s", *p.scheme ? p.scheme : "file", p.authority,
                                p.path);
    }
    floe_free(buf);
    return key;
}

int maint_resolve(const floe_table *t, const char *recorded, char **uri, char **key,
                  floe_error *err) {
    char *u = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(t, recorded, &u, err));
    char *k = maint_path_key(u);
    if (!k) {
        floe_free(u);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    if (uri)
        *uri = u;
    else
        floe_free(u);
    if (key)
        *key = k;
    else
        floe_free(k);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * statistics files (kept in the JSON document, not in the typed view)
 * ------------------------------------------------------------------------------------- */

static bool id_listed(const int64_t *ids, size_t n, int64_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

typedef struct stats_ctx {
    const floe_table *t;
    const int64_t *ids; /* NULL: every snapshot's */
    size_t nids;
    maint_pathset *set;
} stats_ctx;

static int on_statistics(void *vctx, int64_t snapshot_id, const char *path, bool partition,
                         floe_error *err) {
    (void)partition;
    const stats_ctx *c = vctx;
    if (c->ids && !id_listed(c->ids, c->nids, snapshot_id))
        return 0;
    char *key = NULL;
    FLOE_FORWARD_IF_ERROR(maint_resolve(c->t, path, NULL, &key, err));
    bool ok = maint_pathset_add(c->set, key, FLOE_MAINT_STATISTICS, NULL) != NULL;
    floe_free(key);
    return ok ? 0 : floe_error_set(err, FLOE_ENOMEM, "out of memory");
}

int maint_statistics_paths(const floe_table *t, const floe_table_metadata *m,
                           const int64_t *ids, size_t nids, maint_pathset *set,
                           floe_error *err) {
    stats_ctx c = {t, ids, nids, set};
    return floe_table_metadata_foreach_statistics(m, on_statistics, &c, err);
}

/* ---------------------------------------------------------------------------------------
 * reading snapshots
 * ------------------------------------------------------------------------------------- */

int maint_snapshot_manifests(const floe_table *t, const floe_snapshot *s,
                             maint_manifest_fn fn, void *ctx, floe_error *err) {
    int rc = 0;
    if (!s->manifest_list) {
        for (size_t i = 0; i < s->n_manifests; i++)
            FLOE_FORWARD_IF_ERROR(fn(ctx, s->manifests[i], NULL, err));
        return 0;
    }
    char *uri = NULL;
    floe_arena a;
    floe_arena_init(&a, 16 * 1024);
    FLOE_CHECK(floe_table_resolve_path(t, s->manifest_list, &uri, err));
    floe_manifest_list_read_options ro = {.allow_missing_field_ids = true,
                                          .has_snapshot_id = true,
                                          .snapshot_id = s->snapshot_id};
    floe_manifest_list ml;
    FLOE_CHECK(floe_manifest_list_read(floe_table_io(t), uri, &ro, &a, &ml, err));
    for (size_t i = 0; i < ml.nfiles; i++)
        FLOE_CHECK(fn(ctx, ml.files[i].manifest_path, &ml.files[i], err));
done:
    floe_free(uri);
    floe_arena_reset(&a);
    return rc;
}

int maint_manifest_entries(const floe_table *t, const char *recorded,
                           const floe_manifest_file *mf, maint_entry_fn fn, void *ctx,
                           floe_error *err) {
    char *uri = NULL;
    floe_manifest_reader *r = NULL;
    int rc = 0;
    FLOE_CHECK(floe_table_resolve_path(t, recorded, &uri, err));
    floe_manifest_read_options o = {.manifest = mf,
                                    .allow_missing_field_ids = true,
                                    .allow_deletion_vectors = true};
    FLOE_CHECK(floe_manifest_reader_open(floe_table_io(t), uri, &o, &r, err));
    for (;;) {
        const floe_manifest_entry *e = NULL;
        FLOE_CHECK(floe_manifest_reader_next(r, &e, err));
        if (rc == 0)
            break;
        FLOE_CHECK(fn(ctx, e, err));
    }
    rc = 0;
done:
    floe_manifest_reader_close(r);
    floe_free(uri);
    return rc;
}

floe_maint_file_kind maint_kind_of_content(floe_file_content c) {
    switch (c) {
    case FLOE_CONTENT_POSITION_DELETES:
        return FLOE_MAINT_POSITION_DELETES;
    case FLOE_CONTENT_EQUALITY_DELETES:
        return FLOE_MAINT_EQUALITY_DELETES;
    default:
        return FLOE_MAINT_DATA;
    }
}

const char *floe_maint_file_kind_name(floe_maint_file_kind k) {
    static const char *const names[FLOE_MAINT_NKINDS] = {
        "data", "position-deletes", "equality-deletes", "manifest",
        "manifest-list", "statistics", "metadata", "other"};
    return (unsigned)k < FLOE_MAINT_NKINDS ? names[k] : "?";
}

/* ---------------------------------------------------------------------------------------
 * parallel deletes
 * ------------------------------------------------------------------------------------- */

int maint_delete_list_push(maint_delete_list *l, const char *uri, floe_maint_file_kind kind,
                           floe_error *err) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        char **nu = floe_realloc(l->uris, nc * sizeof *nu);
        if (!nu)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        l->uris = nu;
        uint8_t *nk = floe_realloc(l->kinds, nc);
        if (!nk)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        l->kinds = nk;
        l->cap = nc;
    }
    char *c = floe_strdup(uri);
    if (!c)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    l->uris[l->n] = c;
    l->kinds[l->n++] = (uint8_t)kind;
    return 0;
}

void maint_delete_list_free(maint_delete_list *l) {
    for (size_t i = 0; i < l->n; i++)
        floe_free(l->uris[i]);
    floe_free(l->uris);
    floe_free(l->kinds);
    memset(l, 0, sizeof *l);
}

int maint_delete_lists_confine(const floe_table *t, maint_delete_list *lists, size_t n,
                               const char *who, int64_t *kept, floe_error *err) {
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += lists[k].n;
    if (total == 0)
        return 0;
    floe_table_confinement *c = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_confinement_open(t, &c, err));
    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        maint_delete_list *l = &lists[k];
        size_t to = 0, i = 0;
        for (; i < l->n && rc == 0; i++) {
            rc = floe_table_confinement_admit(c, l->uris[i], err);
            if (rc == 0) {
                floe_free(l->uris[i]);
                continue;
            }
            if (rc < 0)
                break; /* uris[i] stays, with the rest */
            rc = 0;
            l->uris[to] = l->uris[i];
            l->kinds[to++] = l->kinds[i];
        }
        for (; i < l->n; i++) { /* after an error: keep every uri once, for the free */
            l->uris[to] = l->uris[i];
            l->kinds[to++] = l->kinds[i];
        }
        l->n = to;
    }
    const char *report = rc == 0 ? floe_table_confinement_report(c) : NULL;
    if (report)
        floe_log(FLOE_LOG_WARN, "%s %s: %s", who,
                 floe_table_name(t) ? floe_table_name(t) : floe_table_root(t), report);
    *kept += floe_table_confinement_kept(c);
    floe_table_confinement_free(c);
    return rc;
}

#define DELETE_BATCH 1000 /* S3 DeleteObjects takes up to 1000 keys */

typedef struct delete_pool {
    floe_io *io;
    const maint_delete_list *l;
    _Atomic size_t next;  /* next batch start */
    _Atomic int64_t deleted[FLOE_MAINT_NKINDS];
    _Atomic int64_t failures;
} delete_pool;

static void delete_batch(delete_pool *p, size_t from, size_t to) {
    const maint_delete_list *l = p->l;
    floe_error e;
    floe_error_clear(&e);
    if (floe_io_delete_many(p->io, (const char *const *)l->uris + from, to - from, &e) == 0) {
        for (size_t i = from; i < to; i++)
            atomic_fetch_add(&p->deleted[l->kinds[i]], 1);
        return;
    }
    /* which ones failed is not known: go one by one (deleting twice is harmless) */
    for (size_t i = from; i < to; i++) {
        floe_error_clear(&e);
        if (floe_io_delete(p->io, l->uris[i], &e) == 0) {
            atomic_fetch_add(&p->deleted[l->kinds[i]], 1);
        } else {
            atomic_fetch_add(&p->failures, 1);
            floe_log(FLOE_LOG_WARN, "maint: could not delete %s: %s", l->uris[i], e.msg);
        }
    }
}

static void *delete_worker(void *arg) {
    delete_pool *p = arg;
    for (;;) {
        size_t from = atomic_fetch_add(&p->next, DELETE_BATCH);
        if (from >= p->l->n)
            return NULL;
        size_t to = from + DELETE_BATCH < p->l->n ? from + DELETE_BATCH : p->l->n;
        delete_batch(p, from, to);
    }
}

void maint_delete_run(floe_io *io, const maint_delete_list *l, int threads,
                      int64_t deleted[], int64_t *failures) {
    delete_pool p;
    memset(&p, 0, sizeof p);
    p.io = io;
    p.l = l;
    atomic_store(&p.next, 0);
    atomic_store(&p.failures, 0);
    for (int k = 0; k < FLOE_MAINT_NKINDS; k++)
        atomic_store(&p.deleted[k], 0);
    if (threads <= 0)
        threads = 4;
    if (threads > 32)
        threads = 32;
    size_t batches = (l->n + DELETE_BATCH - 1) / DELETE_BATCH;
    if ((size_t)threads > batches)
        threads = (int)batches;
    pthread_t tids[32];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tids[started], NULL, delete_worker, &p) != 0)
            break; /* fewer threads is fine: the caller's thread works too */
        started++;
    }
    delete_worker(&p);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    for (int k = 0; k < FLOE_MAINT_NKINDS; k++)
        deleted[k] += atomic_load(&p.deleted[k]);
    *failures += atomic_load(&p.failures);
}

