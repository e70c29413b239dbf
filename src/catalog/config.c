/*
 * config.c - catalog configuration: environment, the floe config file, PyIceberg's
 * .pyiceberg.yaml, the embedded default (the order and formats are documented in
 * include/floe/catalog.h).
 *
 * Both file parsers read hostile text: the file size and line length are capped, YAML
 * nesting is capped, and anything outside the supported subset (flow collections,
 * anchors, multi-line scalars, tabs for indentation) is skipped rather than guessed at:
 * only the catalog: <name>: <key>: <scalar> entries are used.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog_internal.h"
#include "floe/io.h"

#define CONFIG_MAX_BYTES (1u << 20)
#define CONFIG_LINE_MAX 4096
#define YAML_DEPTH_MAX 16

void floe_catalog_config_reset(floe_catalog_config *cfg) {
    if (!cfg)
        return;
    floe_free(cfg->name);
    floe_free(cfg->type);
    floe_free(cfg->uri);
    floe_free(cfg->warehouse);
    floe_free(cfg->source);
    floe_free(cfg->state_db);
    floe_s3_properties_reset(&cfg->s3);
    floe_rest_properties_reset(&cfg->rest);
    memset(cfg, 0, sizeof *cfg);
}

void floe_rest_properties_reset(floe_rest_properties *p) {
    if (!p)
        return;
    floe_free(p->token);
    floe_free(p->credential);
    floe_free(p->scope);
    floe_free(p->oauth2_server_uri);
    floe_free(p->prefix);
    floe_free(p->sigv4_enabled);
    floe_free(p->signing_region);
    floe_free(p->signing_name);
    for (size_t i = 0; i < p->nheaders; i++) {
        floe_free(p->header_names[i]);
        floe_free(p->header_values[i]);
    }
    floe_free(p->header_names);
    floe_free(p->header_values);
    memset(p, 0, sizeof *p);
}

static int set_field(char **field, const char *v, size_t n, floe_error *err) {
    char *copy = floe_strndup(v, n);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(*field);
    *field = copy;
    return 0;
}

size_t floe_rest_control_at(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return i;
    return n;
}

/* A header name: one or more of HTTP's token characters (RFC 9110, 5.1). */
static bool header_name_ok(const char *name, size_t nlen) {
    for (size_t i = 0; i < nlen; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("!#$%&'*+-.^_`|~", name[i]))
            return false;
    return nlen > 0;
}

/* FLOE_EINVALID naming `what` (where the value came from) when a value bound for a
 * request header holds a control character; 0 otherwise. */
static int check_header_value(const char *what, const char *v, size_t vlen, floe_error *err) {
    size_t at = floe_rest_control_at(v, vlen);
    if (at < vlen)
        return floe_error_set(err, FLOE_EINVALID, "%s: the value holds a control character "
                              "(0x%02x at byte %zu); it goes into a request header",
                              what, (unsigned char)v[at], at);
    return 0;
}

/* A "header.<name>" setting: one more request header (a name given twice: the last). */
static int take_header(floe_rest_properties *p, const char *name, size_t nlen, const char *v,
                       size_t vlen, floe_error *err) {
    if (!header_name_ok(name, nlen))
        return floe_error_set(err, FLOE_EINVALID, "header.%.*s: not a header name (letters, "
                              "digits and !#$%%&'*+-.^_`|~ only)", (int)nlen, name);
    if (floe_rest_control_at(v, vlen) < vlen) {
        char what[300];
        snprintf(what, sizeof what, "header.%.*s", (int)(nlen < 256 ? nlen : 256), name);
        return check_header_value(what, v, vlen, err);
    }
    for (size_t i = 0; i < p->nheaders; i++)
        if (strlen(p->header_names[i]) == nlen && !strncasecmp(p->header_names[i], name, nlen))
            return set_field(&p->header_values[i], v, vlen, err);
    char **names = floe_realloc(p->header_names, (p->nheaders + 1) * sizeof *names);
    if (names)
        p->header_names = names;
    char **values = names ? floe_realloc(p->header_values, (p->nheaders + 1) * sizeof *values)
                          : NULL;
    if (values)
        p->header_values = values;
    char *n = values ? floe_strndup(name, nlen) : NULL;
    char *val = n ? floe_strndup(v, vlen) : NULL;
    if (!val) {
        floe_free(n);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    p->header_names[p->nheaders] = n;
    p->header_values[p->nheaders++] = val;
    return 0;
}

static const struct {
    const char *key;
    size_t off;
} rest_fields[] = {
    {"token", offsetof(floe_rest_properties, token)},
    {"credential", offsetof(floe_rest_properties, credential)},
    {"scope", offsetof(floe_rest_properties, scope)},
    {"oauth2-server-uri", offsetof(floe_rest_properties, oauth2_server_uri)},
    {"prefix", offsetof(floe_rest_properties, prefix)},
    {"rest.sigv4-enabled", offsetof(floe_rest_properties, sigv4_enabled)},
    {"rest.signing-region", offsetof(floe_rest_properties, signing_region)},
    {"rest.signing-name", offsetof(floe_rest_properties, signing_name)},
};
#define REST_FIELD(p, i) ((char **)((char *)(p) + rest_fields[i].off))
#define REST_NFIELDS (sizeof rest_fields / sizeof rest_fields[0])

int floe_rest_properties_take(floe_rest_properties *p, const char *key, size_t klen,
                              const char *v, size_t vlen, floe_error *err) {
    for (size_t i = 0; i < REST_NFIELDS; i++)
        if (strlen(rest_fields[i].key) == klen && !strncmp(key, rest_fields[i].key, klen)) {
            int rc = !strcmp(rest_fields[i].key, "token")
                         ? check_header_value(rest_fields[i].key, v, vlen, err)
                         : 0;
            if (rc == 0)
                rc = set_field(REST_FIELD(p, i), v, vlen, err);
            return rc < 0 ? rc : 1;
        }
    if (klen > 7 && !strncmp(key, "header.", 7)) {
        int rc = take_header(p, key + 7, klen - 7, v, vlen, err);
        return rc < 0 ? rc : 1;
    }
    return 0;
}

int floe_rest_properties_copy(const floe_rest_properties *src, floe_rest_properties *dst,
                              floe_error *err) {
    memset(dst, 0, sizeof *dst);
    int rc = 0;
    for (size_t i = 0; i < REST_NFIELDS && rc == 0; i++) {
        const char *v = *REST_FIELD(src, i);
        if (v)
            rc = set_field(REST_FIELD(dst, i), v, strlen(v), err);
    }
    for (size_t i = 0; i < src->nheaders && rc == 0; i++)
        rc = take_header(dst, src->header_names[i], strlen(src->header_names[i]),
                         src->header_values[i], strlen(src->header_values[i]), err);
    if (rc < 0)
        floe_rest_properties_reset(dst);
    return rc;
}

bool floe_rest_properties_any(const floe_rest_properties *p) {
    for (size_t i = 0; i < REST_NFIELDS; i++)
        if (*REST_FIELD(p, i))
            return true;
    return p->nheaders > 0;
}

/* Take key=value into cfg when it is one we use. */
static int take_setting(floe_catalog_config *cfg, const char *key, size_t klen, const char *v,
                        size_t vlen, floe_error *err) {
    if (klen == 4 && !strncmp(key, "type", 4))
        return set_field(&cfg->type, v, vlen, err);
    if (klen == 3 && !strncmp(key, "uri", 3))
        return set_field(&cfg->uri, v, vlen, err);
    if (klen == 9 && !strncmp(key, "warehouse", 9))
        return set_field(&cfg->warehouse, v, vlen, err);
    if (klen == 8 && !strncmp(key, "state-db", 8))
        return set_field(&cfg->state_db, v, vlen, err);
    int taken = floe_s3_properties_take(&cfg->s3, key, klen, v, vlen, err);
    if (taken == 0)
        taken = floe_rest_properties_take(&cfg->rest, key, klen, v, vlen, err);
    return taken < 0 ? taken : 0;
}

/* Fill what a catalog entry left out. */
static int complete(floe_catalog_config *cfg, const char *name, const char *source,
                    floe_error *err) {
    int rc = 0;
    if (!cfg->name)
        rc = set_field(&cfg->name, name ? name : "default", strlen(name ? name : "default"), err);
    if (rc == 0 && !cfg->type && cfg->uri &&
        (!strncmp(cfg->uri, "http://", 7) || !strncmp(cfg->uri, "https://", 8)))
        rc = set_field(&cfg->type, "rest", 4, err);
    if (rc == 0 && !cfg->type)
        rc = set_field(&cfg->type, "sql", 3, err);
    /* a REST catalog's warehouse comes from the server when the entry names none */
    if (rc == 0 && !cfg->warehouse && strcmp(cfg->type, "rest"))
        rc = set_field(&cfg->warehouse, "warehouse", 9, err);
    if (rc == 0 && !cfg->uri && !strcmp(cfg->type, "sql")) {
        char *wh = floe_io_local_path(cfg->warehouse);
        char *db = wh ? floe_io_join(wh, "catalog.db") : NULL;
        rc = db ? set_field(&cfg->uri, db, strlen(db), err)
                : floe_error_set(err, FLOE_EINVALID,
                                 "catalog %s: a sql catalog needs a uri when the warehouse "
                                 "is not local",
                                 cfg->name);
        floe_free(wh);
        floe_free(db);
    }
    if (rc == 0)
        rc = set_field(&cfg->source, source, strlen(source), err);
    return rc;
}

/* Strip spaces and one level of matching quotes; returns the trimmed span. */
static void trim_value(const char **v, size_t *n) {
    const char *s = *v;
    size_t len = *n;
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len >= 2 && ((s[0] == '"' && s[len - 1] == '"') || (s[0] == '\'' && s[len - 1] == '\''))) {
        s++;
        len -= 2;
    }
    *v = s;
    *n = len;
}

/* Remove a trailing " # comment" outside quotes. */
static size_t strip_comment(const char *line, size_t n) {
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = line[i];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
            return i;
        }
    }
    return n;
}

/* ---------------------------------------------------------------------------------------
 * floe.conf
 * ------------------------------------------------------------------------------------- */

int floe_catalog_config_from_floe_conf(const char *text, size_t n, const char *name,
                                       floe_catalog_config *out, floe_error *err) {
    if (n > CONFIG_MAX_BYTES)
        return floe_error_set(err, FLOE_ELIMIT, "config file larger than %u bytes",
                              (unsigned)CONFIG_MAX_BYTES);
    floe_catalog_config cfg = {0};
    char *default_name = NULL;
    char section[256] = "";
    bool found = false;
    int rc = 0;
    /* Pass 0 finds the top-level "catalog = x" default, pass 1 reads the section. */
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        const char *want = name ? name : default_name;
        if (pass == 0 && name)
            continue;
        size_t pos = 0, lineno = 0;
        section[0] = '\0';
        while (pos < n && rc == 0) {
            const char *line = text + pos;
            const char *nl = memchr(line, '\n', n - pos);
            size_t len = nl ? (size_t)(nl - line) : n - pos;
            pos += len + (nl ? 1 : 0);
            lineno++;
            if (len > CONFIG_LINE_MAX) {
                rc = floe_error_set(err, FLOE_ELIMIT, "config line %zu is too long", lineno);
                break;
            }
            len = strip_comment(line, len);
            const char *s = line;
            trim_value(&s, &len); /* whitespace only; quotes cannot wrap a whole line here */
            if (len == 0 || s[0] == ';')
                continue;
            if (s[0] == '[') {
                if (s[len - 1] != ']' || len - 2 >= sizeof section) {
                    rc = floe_error_set(err, FLOE_EINVALID, "config line %zu: bad section header",
                                        lineno);
                    break;
                }
                memcpy(section, s + 1, len - 2);
                section[len - 2] = '\0';
                continue;
            }
            const char *eq = memchr(s, '=', len);
            if (!eq) {
                rc = floe_error_set(err, FLOE_EINVALID, "config line %zu: expected key = value",
                                    lineno);
                break;
            }
            const char *k = s, *v = eq + 1;
            size_t klen = (size_t)(eq - s), vlen = len - klen - 1;
            trim_value(&k, &klen);
            trim_value(&v, &vlen);
            if (!section[0]) {
                if (pass == 0 && klen == 7 && !strncmp(k, "catalog", 7) && !default_name &&
                    !(default_name = floe_strndup(v, vlen)))
                    rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                continue;
            }
            if (pass == 0 || strncmp(section, "catalog.", 8))
                continue;
            const char *sec_name = section + 8;
            if (want ? strcmp(sec_name, want) != 0 : (found && strcmp(cfg.name, sec_name) != 0))
                continue;
            if (!found) {
                found = true;
                rc = set_field(&cfg.name, sec_name, strlen(sec_name), err);
            }
            if (rc == 0)
                rc = take_setting(&cfg, k, klen, v, vlen, err);
        }
    }
    floe_free(default_name);
    if (rc == 0 && !found)
        rc = floe_error_set(err, FLOE_ENOTFOUND, "no [catalog.%s] section",
                            name ? name : "<any>");
    if (rc < 0) {
        floe_catalog_config_reset(&cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * .pyiceberg.yaml (subset)
 * ------------------------------------------------------------------------------------- */

int floe_catalog_config_from_pyiceberg_yaml(const char *text, size_t n, const char *name,
                                            floe_catalog_config *out, floe_error *err) {
    if (n > CONFIG_MAX_BYTES)
        return floe_error_set(err, FLOE_ELIMIT, ".pyiceberg.yaml larger than %u bytes",
                              (unsigned)CONFIG_MAX_BYTES);
    struct {
        size_t indent;
        char key[256];
    } stack[YAML_DEPTH_MAX];
    size_t depth = 0;
    floe_catalog_config cfg = {0};
    char *default_name = NULL;
    bool found = false;
    int rc = 0;
    /* Pass 0 finds a top-level default-catalog, pass 1 reads the catalog entry. */
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        const char *want = name ? name : default_name;
        if (pass == 0 && name)
            continue;
        size_t pos = 0, lineno = 0;
        depth = 0;
        while (pos < n && rc == 0) {
            const char *line = text + pos;
            const char *nl = memchr(line, '\n', n - pos);
            size_t len = nl ? (size_t)(nl - line) : n - pos;
            pos += len + (nl ? 1 : 0);
            lineno++;
            if (len > CONFIG_LINE_MAX) {
                rc = floe_error_set(err, FLOE_ELIMIT, ".pyiceberg.yaml line %zu is too long",
                                    lineno);
                break;
            }
            if (len && line[len - 1] == '\r')
                len--;
            len = strip_comment(line, len);
            size_t indent = 0;
            while (indent < len && line[indent] == ' ')
                indent++;
            if (indent < len && line[indent] == '\t')
                continue; /* tabs are not YAML indentation: skip the line */
            const char *s = line + indent;
            size_t slen = len - indent;
            while (slen && isspace((unsigned char)s[slen - 1]))
                slen--;
            if (slen == 0 || (slen >= 3 && !strncmp(s, "---", 3)) || s[0] == '-')
                continue;
            /* key: find ": " or a trailing ':' outside quotes */
            const char *colon = NULL;
            char quote = 0;
            for (size_t i = 0; i < slen; i++) {
                if (quote) {
                    if (s[i] == quote)
                        quote = 0;
                } else if (s[i] == '"' || s[i] == '\'') {
                    quote = s[i];
                } else if (s[i] == ':' && (i + 1 == slen || s[i + 1] == ' ')) {
                    colon = s + i;
                    break;
                }
            }
            if (!colon)
                continue;
            const char *k = s, *v = colon + 1;
            size_t klen = (size_t)(colon - s), vlen = slen - klen - 1;
            trim_value(&k, &klen);
            trim_value(&v, &vlen);
            while (depth && stack[depth - 1].indent >= indent)
                depth--;
            if (vlen == 0) { /* opens a map */
                if (depth >= YAML_DEPTH_MAX || klen >= sizeof stack[0].key)
                    continue;
                stack[depth].indent = indent;
                memcpy(stack[depth].key, k, klen);
                stack[depth].key[klen] = '\0';
                depth++;
                continue;
            }
            if (depth == 0 && klen == 15 && !strncmp(k, "default-catalog", 15)) {
                if (pass == 0 && !default_name && !(default_name = floe_strndup(v, vlen)))
                    rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                continue;
            }
            if (pass == 0 || depth != 2 || strcmp(stack[0].key, "catalog"))
                continue;
            const char *cat = stack[1].key;
            if (want ? strcmp(cat, want) != 0 : (found && strcmp(cfg.name, cat) != 0))
                continue;
            if (!found) {
                found = true;
                rc = set_field(&cfg.name, cat, strlen(cat), err);
            }
            if (rc == 0)
                rc = take_setting(&cfg, k, klen, v, vlen, err);
        }
    }
    floe_free(default_name);
    if (rc == 0 && !found)
        rc = floe_error_set(err, FLOE_ENOTFOUND, ".pyiceberg.yaml: no catalog %s",
                            name ? name : "entry");
    if (rc < 0) {
        floe_catalog_config_reset(&cfg);
        return rc;
    }
    if (!cfg.type && cfg.uri &&
        (!strncmp(cfg.uri, "sqlite:", 7) || !strncmp(cfg.uri, "postgres", 8))) {
        if ((rc = set_field(&cfg.type, "sql", 3, err)) < 0) {
            floe_catalog_config_reset(&cfg);
            return rc;
        }
    }
    *out = cfg;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * resolution
 * ------------------------------------------------------------------------------------- */

/* Read a config file; FLOE_ENOTFOUND when absent. Caller frees buf. */
static int read_file(const char *path, floe_buf *buf, floe_error *err) {
    bool exists = false;
    FLOE_FORWARD_IF_ERROR(floe_io_exists(NULL, path, &exists, err));
    if (!exists)
        return FLOE_ENOTFOUND;
    return floe_io_read_all(NULL, path, CONFIG_MAX_BYTES, buf, err);
}

typedef int (*parse_fn)(const char *, size_t, const char *, floe_catalog_config *, floe_error *);

/* 0 = found, FLOE_ENOTFOUND = not here, other = error. */
static int try_file(const char *path, parse_fn parse, const char *name,
                    floe_catalog_config *out, floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, CONFIG_MAX_BYTES);
    int rc = read_file(path, &b, err);
    if (rc == 0) {
        floe_error tmp;
        floe_error_clear(&tmp);
        rc = parse(b.data ? (const char *)b.data : "", b.len, name, out, &tmp);
        if (rc < 0 && rc != FLOE_ENOTFOUND) {
            if (err)
                *err = tmp;
            floe_error_prefix(err, "%s: ", path);
        }
        if (rc == 0)
            rc = complete(out, name, path, err);
        if (rc < 0 && rc != FLOE_ENOTFOUND)
            floe_catalog_config_reset(out);
    }
    floe_buf_free(&b);
    return rc;
}

/* The caller's setting name, or NULL (no lookup, or unset). */
static const char *env_get(floe_io_lookup_fn env, void *env_ctx, const char *name) {
    return env ? env(env_ctx, name) : NULL;
}

int floe_catalog_config_load(const char *name, const char *config_path, floe_io_lookup_fn env,
                             void *env_ctx, floe_catalog_config *out, floe_error *err) {
    floe_catalog_config cfg = {0};
    int rc;
    const char *env_name = env_get(env, env_ctx, "FLOE_CATALOG");
    const char *want = name ? name : (env_name && *env_name ? env_name : NULL);
    const char *env_uri = env_get(env, env_ctx, "FLOE_CATALOG_URI");
    const char *env_wh = env_get(env, env_ctx, "FLOE_WAREHOUSE");
    const char *env_type = env_get(env, env_ctx, "FLOE_CATALOG_TYPE");
    /* 1. environment */
    if ((env_uri && *env_uri) || (env_wh && *env_wh)) {
        rc = 0;
        if (env_uri && *env_uri)
            rc = set_field(&cfg.uri, env_uri, strlen(env_uri), err);
        if (rc == 0 && env_wh && *env_wh)
            rc = set_field(&cfg.warehouse, env_wh, strlen(env_wh), err);
        if (rc == 0 && env_type && *env_type)
            rc = set_field(&cfg.type, env_type, strlen(env_type), err);
        if (rc == 0 && want)
            rc = set_field(&cfg.name, want, strlen(want), err);
        const char *env_token = env_get(env, env_ctx, "FLOE_CATALOG_TOKEN");
        const char *env_cred = env_get(env, env_ctx, "FLOE_CATALOG_CREDENTIAL");
        if (rc == 0 && env_token && *env_token)
            rc = check_header_value("FLOE_CATALOG_TOKEN", env_token, strlen(env_token), err);
        if (rc == 0 && env_token && *env_token)
            rc = set_field(&cfg.rest.token, env_token, strlen(env_token), err);
        if (rc == 0 && env_cred && *env_cred)
            rc = set_field(&cfg.rest.credential, env_cred, strlen(env_cred), err);
        const char *env_state = env_get(env, env_ctx, "FLOE_STATE_DB");
        if (rc == 0 && env_state && *env_state)
            rc = set_field(&cfg.state_db, env_state, strlen(env_state), err);
        if (rc == 0)
            rc = complete(&cfg, want, "environment", err);
        if (rc < 0) {
            floe_catalog_config_reset(&cfg);
            return rc;
        }
        *out = cfg;
        return 0;
    }
    /* 2. the floe config file */
    const char *conf = config_path ? config_path : env_get(env, env_ctx, "FLOE_CONFIG");
    bool conf_explicit = conf && *conf;
    rc = try_file(conf_explicit ? conf : "floe.conf", floe_catalog_config_from_floe_conf, want,
                  &cfg, err);
    if (rc == 0) {
        *out = cfg;
        return 0;
    }
    if (rc != FLOE_ENOTFOUND)
        return rc;
    if (conf_explicit && config_path) {
        bool exists = false;
        floe_io_exists(NULL, conf, &exists, NULL);
        if (!exists)
            return floe_error_set(err, FLOE_ENOTFOUND, "config file %s does not exist", conf);
    }
    /* 3. PyIceberg's file */
    const char *dirs[3] = {env_get(env, env_ctx, "PYICEBERG_HOME"), env_get(env, env_ctx, "HOME"),
                          "."};
    for (size_t i = 0; i < 3; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        char *path = floe_io_join(dirs[i], ".pyiceberg.yaml");
        if (!path)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        rc = try_file(path, floe_catalog_config_from_pyiceberg_yaml, want, &cfg, err);
        floe_free(path);
        if (rc == 0) {
            *out = cfg;
            return 0;
        }
        if (rc != FLOE_ENOTFOUND)
            return rc;
    }
    /* 4. embedded default; a catalog asked for by name must exist somewhere */
    if (want && strcmp(want, "default"))
        return floe_error_set(err, FLOE_ENOTFOUND,
                              "catalog %s is not configured (environment, floe.conf, "
                              ".pyiceberg.yaml)",
                              want);
    rc = complete(&cfg, "default", "default", err);
    if (rc < 0) {
        floe_catalog_config_reset(&cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}
