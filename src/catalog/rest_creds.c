/*
 * rest_creds.c - vended credentials of a REST catalog: each table's I/O context built
 * from what a load answered (X-Iceberg-Access-Delegation: vended-credentials).
 *
 * Spec: apache/iceberg open-api/rest-catalog-open-api.yaml, LoadTableResult (`config`:
 * s3.access-key-id, s3.secret-access-key, s3.session-token, s3.endpoint, s3.region or
 * client.region, s3.path-style-access (Iceberg Java's S3FileIO name) and
 * s3.force-virtual-addressing (PyIceberg's);
 * `storage-credentials`: [{prefix, config}], the longest matching prefix wins and is
 * looked at before `config`) and LoadCredentialsResponse
 * (GET .../tables/{table}/credentials). s3.session-token-expires-at-ms (Iceberg Java's
 * and PyIceberg's name) says when keys expire.
 *
 * Invariants:
 *   V1. A table's context is made once (at the first load that vends keys) and lives
 *       until the catalog closes, so tables and readers may keep it; later loads only
 *       replace the keys inside it (under its lock).
 *   V2. Keys are asked for again (the refresh callback: the credentials route, else a
 *       load) when a request comes less than VEND_EARLY_MS before they expire; keys
 *       that failed to refresh are used until they expire, never after.
 *   V3. The keys for a URI are those of the longest `storage-credentials` prefix it
 *       starts with, else those of `config`; none is FLOE_EAUTH naming the URI.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rest_internal.h"

#define VEND_EARLY_MS 60000 /* refresh this long before the keys expire */

typedef struct vend_keys {
    char *prefix; /* "" for the keys of `config` */
    floe_io_credentials k;
    int64_t expires_ms; /* wall clock; 0: not said */
} vend_keys;

typedef struct rest_vend {
    rest_vends *owner;
    char *ns, *name;
    floe_io *io;
    pthread_mutex_t mu; /* keys, nkeys */
    vend_keys *keys;
    size_t nkeys;
} rest_vend;

struct rest_vends {
    floe_io *base;
    rest_vend_refresh_fn refresh;
    void *refresh_ctx;
    pthread_mutex_t mu; /* tables, ntables */
    rest_vend **tables;
    size_t ntables;
};

static void keys_free(vend_keys *k, size_t n) {
    for (size_t i = 0; i < n; i++) {
        floe_free(k[i].prefix);
        floe_io_credentials_reset(&k[i].k);
    }
    floe_free(k);
}

static const char *cfg_str(const json_t *cfg, const char *key) {
    const char *v = json_string_value(json_object_get(cfg, key));
    return v && *v ? v : NULL;
}

/* A vended boolean: 1 true, 0 false, -1 absent; FLOE_EINVALID for another value. */
static int cfg_bool(const json_t *cfg, const char *key, int *out, floe_error *err) {
    const json_t *v = json_object_get(cfg, key);
    const char *s = json_string_value(v);
    *out = -1;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else if (s && !strcasecmp(s, "true"))
        *out = 1;
    else if (s && !strcasecmp(s, "false"))
        *out = 0;
    else
        return floe_error_set(err, FLOE_EINVALID, "config %s: not true or false", key);
    return 0;
}

/* How the table's S3 requests address the bucket: s3.path-style-access true is path
 * style, false virtual-host style; s3.force-virtual-addressing true virtual-host style;
 * neither: the catalog's context decides (AUTO). The two contradicting: FLOE_EINVALID. */
static int vended_addressing(const json_t *cfg, floe_io_s3_addressing *out, floe_error *err) {
    int path = -1, virt = -1;
    FLOE_FORWARD_IF_ERROR(cfg_bool(cfg, "s3.path-style-access", &path, err));
    FLOE_FORWARD_IF_ERROR(cfg_bool(cfg, "s3.force-virtual-addressing", &virt, err));
    if (path == 1 && virt == 1)
        return floe_error_set(err, FLOE_EINVALID, "config: s3.path-style-access and "
                              "s3.force-virtual-addressing are both true");
    *out = path == 1 ? FLOE_IO_S3_ADDRESSING_PATH
           : path == 0 || virt == 1 ? FLOE_IO_S3_ADDRESSING_VIRTUAL
                                    : FLOE_IO_S3_ADDRESSING_AUTO;
    return 0;
}

/* Append the S3 keys of one config object (none: nothing appended). */
static int keys_take(vend_keys **keys, size_t *n, const char *prefix, const json_t *cfg,
                     floe_error *err) {
    const char *ak = cfg_str(cfg, "s3.access-key-id");
    const char *sk = cfg_str(cfg, "s3.secret-access-key");
    if (!ak || !sk)
        return 0;
    const char *tok = cfg_str(cfg, "s3.session-token");
    const char *exp = cfg_str(cfg, "s3.session-token-expires-at-ms");
    vend_keys *grown = floe_realloc(*keys, (*n + 1) * sizeof *grown);
    if (!grown)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *keys = grown;
    vend_keys *k = &grown[*n];
    memset(k, 0, sizeof *k);
    k->prefix = floe_strdup(prefix);
    k->k.access_key = floe_strdup(ak);
    k->k.secret_key = floe_strdup(sk);
    k->k.session_token = tok ? floe_strdup(tok) : NULL;
    k->expires_ms = exp ? strtoll(exp, NULL, 10) : 0;
    (*n)++; /* freed with the others on failure */
    if (!k->prefix || !k->k.access_key || !k->k.secret_key || (tok && !k->k.session_token))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The keys of an answer (config, storage-credentials) in *out (NULL, 0: none). */
static int answer_keys(const json_t *answer, vend_keys **out, size_t *n, floe_error *err) {
    *out = NULL;
    *n = 0;
    int rc = 0;
    size_t i;
    const json_t *sc;
    json_array_foreach(json_object_get(answer, "storage-credentials"), i, sc) {
        const char *prefix = json_string_value(json_object_get(sc, "prefix"));
        if (prefix && (rc = keys_take(out, n, prefix, json_object_get(sc, "config"), err)) < 0)
            break;
    }
    if (rc == 0)
        rc = keys_take(out, n, "", json_object_get(answer, "config"), err);
    if (rc < 0) {
        keys_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* The keys for uri (V3), or NULL. */
static const vend_keys *keys_for(const rest_vend *v, const char *uri) {
    const vend_keys *best = NULL;
    for (size_t i = 0; i < v->nkeys; i++) {
        const vend_keys *k = &v->keys[i];
        size_t pl = strlen(k->prefix);
        if (strncmp(uri, k->prefix, pl))
            continue;
        if (!best || (*best->prefix == '\0' && pl > 0) || pl > strlen(best->prefix))
            best = k;
    }
    return best;
}

/* Replace v's keys with those of answer when it has any. Caller holds v->mu. */
static int vend_update(rest_vend *v, const json_t *answer, floe_error *err) {
    vend_keys *keys;
    size_t n;
    FLOE_FORWARD_IF_ERROR(answer_keys(answer, &keys, &n, err));
    if (n == 0)
        return 0;
    keys_free(v->keys, v->nkeys);
    v->keys = keys;
    v->nkeys = n;
    return 0;
}

/* The credentials callback of a table's context (floe_io_credentials_fn). */
static int vend_credentials(void *ctx, const char *uri, floe_io_credentials *out,
                            floe_error *err) {
    rest_vend *v = ctx;
    int rc = 0;
    pthread_mutex_lock(&v->mu);
    const vend_keys *k = keys_for(v, uri);
    int64_t now = floe_wall_ms();
    if (!k || (k->expires_ms && now + VEND_EARLY_MS >= k->expires_ms)) { /* V2 */
        json_t *answer = NULL;
        floe_error rerr;
        floe_error_clear(&rerr);
        int r = v->owner->refresh(v->owner->refresh_ctx, v->ns, v->name, &answer, &rerr);
        if (r == 0)
            r = vend_update(v, answer, &rerr);
        json_decref(answer);
        k = keys_for(v, uri);
        if (r < 0 && k && (!k->expires_ms || now < k->expires_ms))
            floe_log(FLOE_LOG_WARN, "table %s.%s: vended credentials not refreshed (%s); the "
                     "current ones are used until they expire", v->ns, v->name, rerr.msg);
        else if (r < 0) {
            FLOE_FAIL(err, r, "table %s.%s: %s: credentials from the REST catalog: %s", v->ns,
                      v->name, uri, rerr.msg);
        }
    }
    if (!k)
        FLOE_FAIL(err, FLOE_EAUTH, "table %s.%s: %s: the REST catalog vended no credentials "
                  "for this location", v->ns, v->name, uri);
    if (k->expires_ms && now >= k->expires_ms)
        FLOE_FAIL(err, FLOE_EAUTH, "table %s.%s: %s: the vended credentials expired", v->ns,
                  v->name, uri);
    out->access_key = floe_strdup(k->k.access_key);
    out->secret_key = floe_strdup(k->k.secret_key);
    out->session_token = k->k.session_token ? floe_strdup(k->k.session_token) : NULL;
    if (!out->access_key || !out->secret_key || (k->k.session_token && !out->session_token)) {
        floe_io_credentials_reset(out);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
done:
    pthread_mutex_unlock(&v->mu);
    return rc;
}

static void vend_free(rest_vend *v) {
    if (!v)
        return;
    floe_io_free(v->io);
    keys_free(v->keys, v->nkeys);
    pthread_mutex_destroy(&v->mu);
    floe_free(v->ns);
    floe_free(v->name);
    floe_free(v);
}

static rest_vend *vend_find(rest_vends *vs, const char *ns, const char *name) {
    for (size_t i = 0; i < vs->ntables; i++)
        if (!strcmp(vs->tables[i]->ns, ns) && !strcmp(vs->tables[i]->name, name))
            return vs->tables[i];
    return NULL;
}

int rest_vends_new(floe_io *base, rest_vend_refresh_fn refresh, void *ctx, rest_vends **out,
                   floe_error *err) {
    rest_vends *vs = floe_calloc(1, sizeof *vs);
    if (!vs)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    vs->base = base;
    vs->refresh = refresh;
    vs->refresh_ctx = ctx;
    pthread_mutex_init(&vs->mu, NULL);
    *out = vs;
    return 0;
}

void rest_vends_free(rest_vends *vs) {
    if (!vs)
        return;
    for (size_t i = 0; i < vs->ntables; i++)
        vend_free(vs->tables[i]);
    floe_free(vs->tables);
    pthread_mutex_destroy(&vs->mu);
    floe_free(vs);
}

int rest_vends_take(rest_vends *vs, const char *ns, const char *name, const json_t *answer,
                    floe_error *err) {
    int rc = 0;
    pthread_mutex_lock(&vs->mu);
    rest_vend *v = vend_find(vs, ns, name), *fresh = NULL;
    if (v) { /* V1: the keys inside the context it has */
        pthread_mutex_lock(&v->mu);
        rc = vend_update(v, answer, err);
        pthread_mutex_unlock(&v->mu);
        goto done;
    }
    vend_keys *keys;
    size_t n;
    FLOE_CHECK(answer_keys(answer, &keys, &n, err));
    if (n == 0)
        goto done; /* nothing vended: the catalog's own context serves the table */
    fresh = floe_calloc(1, sizeof *fresh);
    rest_vend **grown = fresh ? floe_realloc(vs->tables, (vs->ntables + 1) * sizeof *grown)
                              : NULL;
    if (grown)
        vs->tables = grown;
    if (!fresh || !grown) {
        keys_free(keys, n);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&fresh->mu, NULL);
    fresh->owner = vs;
    fresh->keys = keys;
    fresh->nkeys = n;
    fresh->ns = floe_strdup(ns);
    fresh->name = floe_strdup(name);
    if (!fresh->ns || !fresh->name)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* where the keys are good: the endpoint and region the catalog says, else the
     * catalog's context's */
    const json_t *cfg = json_object_get(answer, "config");
    const char *endpoint = cfg_str(cfg, "s3.endpoint");
    const char *region = cfg_str(cfg, "s3.region") ? cfg_str(cfg, "s3.region")
                                                   : cfg_str(cfg, "client.region");
    floe_io_s3_addressing addressing = FLOE_IO_S3_ADDRESSING_AUTO;
    FLOE_CHECK(vended_addressing(cfg, &addressing, err));
    FLOE_CHECK(floe_io_new_derived(vs->base, endpoint, region, addressing, vend_credentials,
                                   fresh, &fresh->io, err));
    vs->tables[vs->ntables++] = fresh;
    fresh = NULL;
done:
    vend_free(fresh);
    pthread_mutex_unlock(&vs->mu);
    if (rc < 0)
        floe_error_prefix(err, "table %s.%s: vended credentials: ", ns, name);
    return rc;
}

floe_io *rest_vends_io(rest_vends *vs, const char *ns, const char *name) {
    pthread_mutex_lock(&vs->mu);
    rest_vend *v = vend_find(vs, ns, name);
    floe_io *io = v ? v->io : NULL;
    pthread_mutex_unlock(&vs->mu);
    return io;
}
