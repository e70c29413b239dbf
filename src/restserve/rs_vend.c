/*
 * rs_vend.c - credential vending of `floe catalog serve`: S3 keys from a configuration
 * file ([vend NAME] sections, docs/REST.md), handed to clients per table prefix.
 *
 * Spec: apache/iceberg open-api/rest-catalog-open-api.yaml: the
 * X-Iceberg-Access-Delegation header (vended-credentials), LoadTableResult's `config`
 * and `storage-credentials`, GET .../tables/{table}/credentials (LoadCredentialsResponse).
 *
 * Invariants:
 *   S1. Keys go only to a client that asked (the header names vended-credentials, or the
 *       credentials route) and only for a table whose location lies under a section's
 *       prefix at a '/' boundary (the location is the prefix, or continues it with '/';
 *       a prefix ending in '/' is its folder): the longest such prefix. So a prefix
 *       s3://wh/shop/ev covers table s3://wh/shop/ev and not s3://wh/shop/ev2.
 *   S2. A section is complete when loaded (a prefix and both keys), so serving never
 *       meets half a configuration.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/io.h"
#include "floe/table.h"
#include "rs_internal.h"

/* The config keys a section may hold besides prefix and expires-in: passed as they are. */
static const char *const PASSED[] = {
    "s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.endpoint",
    "s3.region",        "client.region",        "s3.path-style-access",
};

void floe_rest_vend_free(floe_rest_vend *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) {
        floe_free(v[i].name);
        floe_free(v[i].prefix);
        for (size_t k = 0; k < v[i].n; k++) {
            floe_free(v[i].keys[k]);
            floe_free(v[i].values[k]);
        }
        floe_free(v[i].keys);
        floe_free(v[i].values);
    }
    floe_free(v);
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static const char *vend_get(const floe_rest_vend *v, const char *key) {
    for (size_t k = 0; k < v->n; k++)
        if (!strcmp(v->keys[k], key))
            return v->values[k];
    return NULL;
}

/* S2: the section just read is complete. */
static int vend_check(const char *path, const floe_rest_vend *v, floe_error *err) {
    if (!v->prefix || !*v->prefix)
        return floe_error_set(err, FLOE_EINVALID, "%s: [vend %s] has no prefix", path, v->name);
    if (!vend_get(v, "s3.access-key-id") || !vend_get(v, "s3.secret-access-key"))
        return floe_error_set(err, FLOE_EINVALID, "%s: [vend %s] needs s3.access-key-id and "
                              "s3.secret-access-key", path, v->name);
    return 0;
}

/* One key = value of a section (line lineno). */
static int vend_set(const char *path, int lineno, floe_rest_vend *v, const char *key,
                    const char *value, floe_error *err) {
    if (!strcmp(key, "prefix")) {
        floe_free(v->prefix);
        if (!(v->prefix = floe_strdup(value)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return 0;
    }
    if (!strcmp(key, "expires-in")) {
        char *end;
        long long s = strtoll(value, &end, 10);
        if (end == value || *end || s <= 0 || s > 7LL * 24 * 3600)
            return floe_error_set(err, FLOE_EINVALID, "%s:%d: expires-in \"%s\": seconds, "
                                  "1 to 604800", path, lineno, value);
        v->expires_in_s = s;
        return 0;
    }
    bool known = false;
    for (size_t i = 0; i < sizeof PASSED / sizeof PASSED[0]; i++)
        known = known || !strcmp(key, PASSED[i]);
    if (!known)
        return floe_error_set(err, FLOE_EINVALID, "%s:%d: unknown key %s in [vend %s]", path,
                              lineno, key, v->name);
    for (size_t k = 0; k < v->n; k++)
        if (!strcmp(v->keys[k], key)) {
            char *c = floe_strdup(value);
            if (!c)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            floe_free(v->values[k]);
            v->values[k] = c;
            return 0;
        }
    char **keys = floe_realloc(v->keys, (v->n + 1) * sizeof *keys);
    if (keys)
        v->keys = keys;
    char **values = keys ? floe_realloc(v->values, (v->n + 1) * sizeof *values) : NULL;
    if (values)
        v->values = values;
    char *k = values ? floe_strdup(key) : NULL;
    char *val = k ? floe_strdup(value) : NULL;
    if (!val) {
        floe_free(k);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    v->keys[v->n] = k;
    v->values[v->n++] = val;
    return 0;
}

int floe_rest_vend_load(const char *path, floe_rest_vend **out, size_t *nout, floe_error *err) {
    *out = NULL;
    *nout = 0;
    floe_buf text;
    floe_buf_init(&text, 1u << 20);
    floe_rest_vend *v = NULL;
    size_t n = 0;
    int rc = floe_io_read_all(NULL, path, 1u << 20, &text, err);
    if (rc < 0 || floe_buf_append_byte(&text, 0) < 0) {
        if (rc == 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_buf_free(&text);
        return rc;
    }
    char *p = (char *)text.data;
    bool in_vend = false;
    for (int lineno = 1; p && *p; lineno++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        char *line = p;
        p = nl ? nl + 1 : NULL;
        char *hash = strstr(line, " #");
        if (hash)
            *hash = '\0';
        line = trim(line);
        if (!*line || *line == '#' || *line == ';')
            continue;
        if (*line == '[') {
            char *close = strchr(line, ']');
            if (!close || close[1])
                FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: bad section header", path, lineno);
            *close = '\0';
            char *sec = trim(line + 1);
            if (in_vend)
                FLOE_CHECK(vend_check(path, &v[n - 1], err));
            in_vend = !strncmp(sec, "vend", 4) && (isspace((unsigned char)sec[4]) || !sec[4]);
            if (!in_vend)
                continue; /* other sections (a floe serve file's) are not read here */
            char *name = trim(sec + 4);
            if (!*name)
                FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [vend NAME] needs a name", path, lineno);
            floe_rest_vend *grown = floe_realloc(v, (n + 1) * sizeof *grown);
            if (!grown)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            v = grown;
            memset(&v[n], 0, sizeof v[n]);
            if (!(v[n++].name = floe_strdup(name)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            continue;
        }
        if (!in_vend)
            continue;
        char *eq = strchr(line, '=');
        if (!eq)
            FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: expected key = value", path, lineno);
        *eq = '\0';
        FLOE_CHECK(vend_set(path, lineno, &v[n - 1], trim(line), trim(eq + 1), err));
    }
    if (in_vend)
        FLOE_CHECK(vend_check(path, &v[n - 1], err));
    if (n == 0)
        FLOE_FAIL(err, FLOE_EINVALID, "%s: no [vend NAME] section", path);
    *out = v;
    *nout = n;
    v = NULL;
    n = 0;
done:
    floe_rest_vend_free(v, n);
    floe_buf_free(&text);
    return rc;
}

/* The section for a table location (S1), or NULL. */
static const floe_rest_vend *vend_for(const floe_rest_server *s, const char *location) {
    const floe_rest_vend *best = NULL;
    for (size_t i = 0; location && i < s->nvend; i++) {
        size_t pl = strlen(s->vend[i].prefix);
        if (floe_io_uri_within(location, s->vend[i].prefix) &&
            (!best || pl > strlen(best->prefix)))
            best = &s->vend[i];
    }
    return best;
}

/* A section's config object: its keys, and when they expire. */
static void put_config(floe_buf *b, const floe_rest_vend *v) {
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '{')); /* checked in send */
    for (size_t k = 0; k < v->n; k++) {
        if (k)
            FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)v->keys[k],
                                                   strlen(v->keys[k])));
        FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ':'));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)v->values[k],
                                                   strlen(v->values[k])));
    }
    if (v->expires_in_s)
        FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"s3.session-token-expires-at-ms\":\"%lld\"",
                                           (long long)(floe_wall_ms() + v->expires_in_s * 1000)));
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
}

static void put_storage_credentials(floe_buf *b, const floe_rest_vend *v) {
    FLOE_IGNORE_RESULT(floe_buf_printf(b, "\"storage-credentials\":["));
    if (v) {
        FLOE_IGNORE_RESULT(floe_buf_printf(b, "{\"prefix\":"));
        FLOE_IGNORE_RESULT(floe_json_append_string(b, (const uint8_t *)v->prefix,
                                                   strlen(v->prefix)));
        FLOE_IGNORE_RESULT(floe_buf_printf(b, ",\"config\":"));
        put_config(b, v);
        FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
    }
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ']'));
}

/* True when the request's X-Iceberg-Access-Delegation lists vended-credentials. */
static bool asks_for_keys(const rs_req *q) {
    const char *h = rs_header(q, "X-Iceberg-Access-Delegation");
    for (const char *p = h; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m && p[m - 1] == ' ')
            m--;
        if (m == 18 && !strncmp(p, "vended-credentials", 18))
            return true;
        p += n;
    }
    return false;
}

void rs_vend_add(const rs_req *q, const floe_table *t, rs_resp *r) {
    static const char TAIL[] = "\"config\":{}}";
    const size_t tl = sizeof TAIL - 1;
    floe_buf *b = &r->body;
    if (r->status != 200 || !q->s->nvend || !asks_for_keys(q))
        return;
    const floe_rest_vend *v = vend_for(q->s, floe_table_root(t));
    if (!v || b->len < tl || memcmp(b->data + b->len - tl, TAIL, tl))
        return;
    floe_log(FLOE_LOG_INFO, "catalog serve: load of %s.%s: the keys of [vend %s]", q->ns,
             q->table ? q->table : floe_table_name(t), v->name);
    b->len -= 3; /* the "{}}" after "config": */
    put_config(b, v);
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, ','));
    put_storage_credentials(b, v);
    FLOE_IGNORE_RESULT(floe_buf_append_byte(b, '}'));
}

int rs_load_credentials(rs_req *q, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    int rc = floe_table_load(q->cat, q->ns, q->table, &t, &err);
    if (rc < 0)
        return rs_floe_error(r, rc, &err, "NoSuchTableException");
    const floe_rest_vend *v = vend_for(q->s, floe_table_root(t));
    floe_log(FLOE_LOG_INFO, "catalog serve: credentials of %s.%s: %s%s%s", q->ns, q->table,
             v ? "the keys of [vend " : "none", v ? v->name : "", v ? "]" : "");
    FLOE_IGNORE_RESULT(floe_buf_append_byte(&r->body, '{'));
    put_storage_credentials(&r->body, v);
    FLOE_IGNORE_RESULT(floe_buf_append_byte(&r->body, '}'));
    r->status = 200;
    floe_table_close(t);
    return 0;
}
