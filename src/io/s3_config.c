/*
 * s3_config.c - a context's object-storage settings: floe_io_options, resolved into the
 * S3 backend's configuration, and read from environment-style settings by
 * floe_io_options_from_env through the caller's lookup (never getenv).
 *
 * floe_io_options_from_env follows the AWS conventions (docs/S3.md has the table):
 *   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), else the
 *                profile AWS_PROFILE (default "default") in AWS_SHARED_CREDENTIALS_FILE
 *                (~/.aws/credentials), else the same profile in AWS_CONFIG_FILE
 *                (~/.aws/config, sections "[profile NAME]" and "[default]")
 *   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region, "us-east-1"
 *   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's s3.endpoint_url or
 *                endpoint_url, else AWS itself
 *   addressing   AWS_S3_FORCE_PATH_STYLE=true|false, FLOE_S3_ADDRESSING=path|virtual, the
 *                profile's s3.addressing_style; default path style with a custom endpoint,
 *                virtual-hosted on AWS
 * and floe's own FLOE_S3_* knobs for multipart and retries.
 *
 * The shared files are untrusted text: they are read with a size cap, lines past a length
 * cap are skipped, and nothing in them is interpreted beyond "key = value".
 */
#include <errno.h>
#include <strings.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define INI_MAX_FILE (1u << 20)
#define INI_MAX_LINE 4096
#define MIN_PART_SIZE ((size_t)5 << 20)
#define MAX_PART_SIZE ((size_t)5 << 30)

static bool ini_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Trim [*s, *e) of spaces on both ends. */
static void trim(const char **s, const char **e) {
    while (*s < *e && ini_space(**s))
        (*s)++;
    while (*e > *s && ini_space((*e)[-1]))
        (*e)--;
}

static bool span_eq(const char *s, const char *e, const char *z) {
    size_t n = strlen(z);
    return (size_t)(e - s) == n && !memcmp(s, z, n);
}

char *floe_s3_ini_get(const char *text, size_t n, const char *section, const char *sub,
                      const char *key) {
    const char *p = text, *end = text + n;
    bool in_section = false;
    bool in_sub = false; /* inside the nested block "sub =" of the wanted section */
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const char *ls = p, *le = eol;
        p = eol < end ? eol + 1 : end;
        if ((size_t)(le - ls) > INI_MAX_LINE)
            continue;
        bool indented = ls < le && (*ls == ' ' || *ls == '\t');
        trim(&ls, &le);
        if (ls == le || *ls == '#' || *ls == ';')
            continue;
        if (*ls == '[') {
            in_sub = false;
            const char *cs = ls + 1, *ce = le;
            if (ce <= cs || ce[-1] != ']') {
                in_section = false;
                continue;
            }
            ce--;
            trim(&cs, &ce);
            in_section = span_eq(cs, ce, section);
            continue;
        }
        if (!in_section)
            continue;
        const char *eq = memchr(ls, '=', (size_t)(le - ls));
        if (!eq)
            continue;
        const char *ks = ls, *ke = eq, *vs = eq + 1, *ve = le;
        trim(&ks, &ke);
        trim(&vs, &ve);
        if (!indented) {
            /* "s3 =" with nothing after it opens a nested block of indented lines */
            in_sub = sub && vs == ve && span_eq(ks, ke, sub);
            if (!sub && span_eq(ks, ke, key))
                return floe_strndup(vs, (size_t)(ve - vs));
            continue;
        }
        if (sub && in_sub && span_eq(ks, ke, key))
            return floe_strndup(vs, (size_t)(ve - vs));
    }
    return NULL;
}

/* Read a small text file; NULL when missing, unreadable or larger than the cap. */
static char *read_small_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = floe_malloc(INI_MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, INI_MAX_FILE + 1, f) : 0;
    fclose(f);
    if (!buf || n > INI_MAX_FILE) {
        if (buf)
            floe_log(FLOE_LOG_WARN, "s3: %s is larger than 1 MiB; ignored", path);
        floe_free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The settings a floe_io_options_from_env call reads, through its lookup. */
typedef struct env_src {
    floe_io_lookup_fn lookup;
    void *ctx;
} env_src;

static const char *env_get(const env_src *e, const char *name) {
    const char *v = e->lookup(e->ctx, name);
    return v && *v ? v : NULL;
}

static char *env_dup(const env_src *e, const char *name) {
    const char *v = env_get(e, name);
    return v ? floe_strdup(v) : NULL;
}

static int env_int(const env_src *e, const char *name, int64_t lo, int64_t hi, int64_t *out,
                   floe_error *err) {
    const char *v = env_get(e, name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    int64_t mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024 * 1024 * 1024, end++;
    if (*end == 'i' || *end == 'B')
        end += *end == 'i' && end[1] == 'B' ? 2 : 1;
    if (errno || *end || x < lo / mult || x > hi / mult || x * mult < lo)
        return floe_error_set(err, FLOE_EINVALID, "%s=%s: expected a number from %lld to %lld",
                              name, v, (long long)lo, (long long)hi);
    *out = x * mult;
    return 0;
}

/* true/false/1/0/yes/no; -1 when unset or not a boolean. */
static int parse_bool(const char *v) {
    if (!v)
        return -1;
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
        return 1;
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
        return 0;
    return -1;
}

void floe_s3_config_free(floe_s3_config *cfg) {
    if (!cfg)
        return;
    floe_free(cfg->access_key);
    floe_free(cfg->secret_key);
    floe_free(cfg->session_token);
    floe_free(cfg->region);
    floe_free(cfg->endpoint);
    memset(cfg, 0, sizeof *cfg);
}

/* Look key up in the profile: credentials file first, then config file. */
static char *profile_get(const char *cred, size_t cred_n, const char *conf, size_t conf_n,
                         const char *profile, const char *sub, const char *key) {
    char *v = NULL;
    if (cred && !sub)
        v = floe_s3_ini_get(cred, cred_n, profile, NULL, key);
    if (!v && conf) {
        char *sect = strcmp(profile, "default") ? floe_asprintf("profile %s", profile)
                                                : floe_strdup("default");
        if (sect)
            v = floe_s3_ini_get(conf, conf_n, sect, sub, key);
        floe_free(sect);
    }
    return v;
}

void floe_io_options_init(floe_io_options *o) {
    memset(o, 0, sizeof *o);
    o->s3.part_size = (size_t)8 << 20;
    o->s3.list_page_size = 1000;
    o->retry.max_attempts = 10;
    o->retry.budget_ms = 120000;
    o->retry.base_delay_ms = 100;
    o->retry.max_delay_ms = 20000;
    o->retry.timeout_ms = 300000;
    o->retry.connect_timeout_ms = 10000;
}

void floe_io_options_free(floe_io_options *o) {
    if (!o)
        return;
    char **strs[] = {&o->s3.endpoint,      &o->s3.region,        &o->s3.access_key,
                     &o->s3.secret_key,    &o->s3.session_token, &o->s3.profile,
                     &o->s3.credentials_file, &o->s3.config_file};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        floe_free(*strs[i]);
    floe_io_options_init(o);
}

int floe_io_options_set(char **field, const char *value, floe_error *err) {
    char *copy = NULL;
    if (value && !(copy = floe_strdup(value)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(*field);
    *field = copy;
    return 0;
}

void floe_s3_properties_reset(floe_s3_properties *p) {
    if (!p)
        return;
    floe_free(p->endpoint);
    floe_free(p->region);
    floe_free(p->access_key_id);
    floe_free(p->secret_access_key);
    floe_free(p->session_token);
    floe_free(p->force_virtual_addressing);
    memset(p, 0, sizeof *p);
}

int floe_s3_properties_take(floe_s3_properties *p, const char *key, size_t klen, const char *v,
                            size_t vlen, floe_error *err) {
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"s3.endpoint", offsetof(floe_s3_properties, endpoint)},
        {"s3.region", offsetof(floe_s3_properties, region)},
        {"s3.access-key-id", offsetof(floe_s3_properties, access_key_id)},
        {"s3.secret-access-key", offsetof(floe_s3_properties, secret_access_key)},
        {"s3.session-token", offsetof(floe_s3_properties, session_token)},
        {"s3.force-virtual-addressing", offsetof(floe_s3_properties, force_virtual_addressing)},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (klen != strlen(keys[i].key) || strncmp(key, keys[i].key, klen))
            continue;
        char **field = (char **)((char *)p + keys[i].off);
        char *copy = floe_strndup(v, vlen);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(*field);
        *field = copy;
        return 1;
    }
    return 0;
}

int floe_s3_credential_check(const char *what, const char *value, floe_error *err) {
    for (size_t i = 0; value && value[i]; i++) {
        unsigned char ch = (unsigned char)value[i];
        if (ch < 0x20 || ch == 0x7f)
            /* the value itself is a secret: only where the bad byte is */
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s holds a control character (0x%02x at byte %zu): refused, "
                                  "since it would go into an HTTP header of every S3 request "
                                  "(a CR or LF would start a header of its own); check for a "
                                  "stray line break where it was set",
                                  what, ch, i);
    }
    return 0;
}

/* The three parts of a key pair from one source, each checked under its own name. */
static int check_key_pair(const char *ak_name, const char *ak, const char *sk_name,
                          const char *sk, const char *tok_name, const char *tok,
                          floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_s3_credential_check(ak_name, ak, err));
    FLOE_FORWARD_IF_ERROR(floe_s3_credential_check(sk_name, sk, err));
    return floe_s3_credential_check(tok_name, tok, err);
}

int floe_io_options_apply_s3(floe_io_options *o, const floe_s3_properties *p, const char *source,
                             floe_error *err) {
    int rc = 0;
    if (p->endpoint)
        rc = floe_io_options_set(&o->s3.endpoint, p->endpoint, err);
    if (rc == 0 && p->region)
        rc = floe_io_options_set(&o->s3.region, p->region, err);
    if (rc == 0) {
        rc = check_key_pair("s3.access-key-id", p->access_key_id, "s3.secret-access-key",
                            p->secret_access_key, "s3.session-token", p->session_token, err);
        if (rc < 0)
            floe_error_prefix(err, "%s: ", source);
    }
    if (rc == 0 && p->access_key_id && p->secret_access_key) {
        o->s3.credentials = FLOE_IO_CREDS_STATIC;
        rc = floe_io_options_set(&o->s3.access_key, p->access_key_id, err);
        if (rc == 0)
            rc = floe_io_options_set(&o->s3.secret_key, p->secret_access_key, err);
        if (rc == 0)
            rc = floe_io_options_set(&o->s3.session_token, p->session_token, err);
    } else if (rc == 0 && p->session_token) {
        rc = floe_io_options_set(&o->s3.session_token, p->session_token, err);
    }
    if (rc == 0 && !p->access_key_id != !p->secret_access_key) {
        /* one of the pair replaces that half of a key pair a lower source gave */
        if (o->s3.credentials == FLOE_IO_CREDS_STATIC && o->s3.access_key && o->s3.secret_key)
            rc = p->access_key_id ? floe_io_options_set(&o->s3.access_key, p->access_key_id, err)
                                  : floe_io_options_set(&o->s3.secret_key, p->secret_access_key,
                                                        err);
        else
            rc = floe_error_set(err, FLOE_EINVALID, "%s: s3.access-key-id and "
                                "s3.secret-access-key go together", source);
    }
    const char *fv = p->force_virtual_addressing;
    if (rc == 0 && fv) {
        if (!strcmp(fv, "true") || !strcmp(fv, "True") || !strcmp(fv, "1"))
            o->s3.addressing = FLOE_IO_S3_ADDRESSING_VIRTUAL;
        else if (!strcmp(fv, "false") || !strcmp(fv, "False") || !strcmp(fv, "0"))
            o->s3.addressing = FLOE_IO_S3_ADDRESSING_AUTO;
        else
            rc = floe_error_set(err, FLOE_EINVALID, "%s: s3.force-virtual-addressing=%s: "
                                "expected true or false", source, fv);
    }
    return rc;
}

/* Replace *field with v (taking ownership; NULL leaves *field as it is). */
static void take(char **field, char *v) {
    if (!v)
        return;
    floe_free(*field);
    *field = v;
}

int floe_io_options_from_env(floe_io_options *o, floe_io_lookup_fn lookup, void *lookup_ctx,
                             floe_error *err) {
    env_src env = {lookup, lookup_ctx};
    const env_src *e = &env;
    int rc = 0;
    char *cred = NULL, *conf = NULL, *cred_path = NULL, *conf_path = NULL;
    char *addressing = NULL, *force = NULL, *endpoint = NULL, *region = NULL;
    char *ak = NULL, *sk = NULL, *tok = NULL;
    size_t cred_n = 0, conf_n = 0;

    const char *home = env_get(e, "HOME");
    const char *profile = env_get(e, "AWS_PROFILE");
    if (!profile)
        profile = env_get(e, "AWS_DEFAULT_PROFILE");
    if (!profile)
        profile = "default";
    cred_path = env_dup(e, "AWS_SHARED_CREDENTIALS_FILE");
    if (!cred_path && home)
        cred_path = floe_asprintf("%s/.aws/credentials", home);
    conf_path = env_dup(e, "AWS_CONFIG_FILE");
    if (!conf_path && home)
        conf_path = floe_asprintf("%s/.aws/config", home);
    if (cred_path)
        cred = read_small_file(cred_path, &cred_n);
    if (conf_path)
        conf = read_small_file(conf_path, &conf_n);

    ak = env_dup(e, "AWS_ACCESS_KEY_ID");
    sk = env_dup(e, "AWS_SECRET_ACCESS_KEY");
    if (ak && sk) {
        tok = env_dup(e, "AWS_SESSION_TOKEN");
        FLOE_CHECK(check_key_pair("AWS_ACCESS_KEY_ID", ak, "AWS_SECRET_ACCESS_KEY", sk,
                                  "AWS_SESSION_TOKEN", tok, err));
    } else {
        floe_free(ak);
        floe_free(sk);
        ak = profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_access_key_id");
        sk = profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_secret_access_key");
        if (ak && sk)
            tok = profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_session_token");
        if (ak && sk) {
            rc = check_key_pair("aws_access_key_id", ak, "aws_secret_access_key", sk,
                                "aws_session_token", tok, err);
            if (rc < 0) {
                floe_error_prefix(err, "S3 profile \"%s\" (%s, %s): ", profile,
                                  cred_path ? cred_path : "(no credentials file)",
                                  conf_path ? conf_path : "(no config file)");
                goto done;
            }
        }
    }
    if (ak && sk) {
        o->s3.credentials = FLOE_IO_CREDS_STATIC;
        take(&o->s3.access_key, ak);
        take(&o->s3.secret_key, sk);
        floe_free(o->s3.session_token);
        o->s3.session_token = tok;
        ak = sk = tok = NULL;
    }

    region = env_dup(e, "AWS_REGION");
    if (!region)
        region = env_dup(e, "AWS_DEFAULT_REGION");
    if (!region)
        region = profile_get(NULL, 0, conf, conf_n, profile, NULL, "region");
    take(&o->s3.region, region);
    region = NULL;

    endpoint = env_dup(e, "AWS_ENDPOINT_URL_S3");
    if (!endpoint)
        endpoint = env_dup(e, "AWS_ENDPOINT_URL");
    if (!endpoint)
        endpoint = profile_get(NULL, 0, conf, conf_n, profile, "s3", "endpoint_url");
    if (!endpoint)
        endpoint = profile_get(NULL, 0, conf, conf_n, profile, NULL, "endpoint_url");
    take(&o->s3.endpoint, endpoint);
    endpoint = NULL;

    addressing = profile_get(NULL, 0, conf, conf_n, profile, "s3", "addressing_style");
    if (addressing && !strcmp(addressing, "path"))
        o->s3.addressing = FLOE_IO_S3_ADDRESSING_PATH;
    else if (addressing && !strcmp(addressing, "virtual"))
        o->s3.addressing = FLOE_IO_S3_ADDRESSING_VIRTUAL;
    const char *fa = env_get(e, "FLOE_S3_ADDRESSING");
    if (fa) {
        if (!strcmp(fa, "path"))
            o->s3.addressing = FLOE_IO_S3_ADDRESSING_PATH;
        else if (!strcmp(fa, "virtual"))
            o->s3.addressing = FLOE_IO_S3_ADDRESSING_VIRTUAL;
        else
            FLOE_FAIL(err, FLOE_EINVALID, "FLOE_S3_ADDRESSING=%s: expected path or virtual", fa);
    }
    force = env_dup(e, "AWS_S3_FORCE_PATH_STYLE");
    if (force) {
        int b = parse_bool(force);
        if (b < 0)
            FLOE_FAIL(err, FLOE_EINVALID, "AWS_S3_FORCE_PATH_STYLE=%s: expected true or false",
                      force);
        o->s3.addressing = b == 1 ? FLOE_IO_S3_ADDRESSING_PATH : FLOE_IO_S3_ADDRESSING_VIRTUAL;
    }
    if (env_get(e, "FLOE_S3_ANONYMOUS"))
        o->s3.anonymous = parse_bool(env_get(e, "FLOE_S3_ANONYMOUS")) == 1;
    if (env_get(e, "FLOE_S3_UNSIGNED_PAYLOAD"))
        o->s3.unsigned_payload = parse_bool(env_get(e, "FLOE_S3_UNSIGNED_PAYLOAD")) == 1;

    int64_t v;
    v = (int64_t)o->s3.part_size;
    FLOE_CHECK(env_int(e, "FLOE_S3_PART_SIZE", (int64_t)MIN_PART_SIZE, (int64_t)MAX_PART_SIZE,
                       &v, err));
    o->s3.part_size = (size_t)v;
    v = o->retry.max_attempts;
    FLOE_CHECK(env_int(e, "FLOE_S3_MAX_ATTEMPTS", 1, 100, &v, err));
    o->retry.max_attempts = (int)v;
    FLOE_CHECK(env_int(e, "FLOE_S3_RETRY_BUDGET_MS", 0, INT64_C(86400000), &o->retry.budget_ms,
                       err));
    FLOE_CHECK(env_int(e, "FLOE_S3_RETRY_BASE_MS", 0, 60000, &o->retry.base_delay_ms, err));
    FLOE_CHECK(env_int(e, "FLOE_S3_RETRY_MAX_MS", 0, 600000, &o->retry.max_delay_ms, err));
    FLOE_CHECK(env_int(e, "FLOE_S3_TIMEOUT_MS", 100, INT64_C(86400000), &o->retry.timeout_ms,
                       err));
    FLOE_CHECK(env_int(e, "FLOE_S3_CONNECT_TIMEOUT_MS", 100, 600000,
                       &o->retry.connect_timeout_ms, err));
    v = o->s3.list_page_size;
    FLOE_CHECK(env_int(e, "FLOE_S3_LIST_MAX_KEYS", 1, 1000, &v, err));
    o->s3.list_page_size = (int)v;
done:
    floe_free(cred);
    floe_free(conf);
    floe_free(cred_path);
    floe_free(conf_path);
    floe_free(addressing);
    floe_free(force);
    floe_free(ak);
    floe_free(sk);
    floe_free(tok);
    return rc;
}

static char *dup_or_null(const char *s, bool *oom) {
    if (!s)
        return NULL;
    char *c = floe_strdup(s);
    if (!c)
        *oom = true;
    return c;
}

int floe_s3_config_from_options(const floe_io_options *o, floe_s3_config *out,
                                floe_error *err) {
    floe_s3_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int rc = 0;
    bool oom = false;
    char *cred = NULL, *conf = NULL;
    size_t cred_n = 0, conf_n = 0;

    switch (o->s3.credentials) {
    case FLOE_IO_CREDS_NONE:
        break;
    case FLOE_IO_CREDS_STATIC:
        if (!o->s3.access_key || !o->s3.secret_key)
            FLOE_FAIL(err, FLOE_EINVALID, "static S3 credentials need an access key and a "
                                          "secret key");
        FLOE_CHECK(check_key_pair("the S3 access key", o->s3.access_key,
                                  "the S3 secret key", o->s3.secret_key,
                                  "the S3 session token", o->s3.session_token, err));
        cfg.access_key = dup_or_null(o->s3.access_key, &oom);
        cfg.secret_key = dup_or_null(o->s3.secret_key, &oom);
        cfg.session_token = dup_or_null(o->s3.session_token, &oom);
        break;
    case FLOE_IO_CREDS_PROFILE: {
        const char *profile = o->s3.profile ? o->s3.profile : "default";
        if (o->s3.credentials_file)
            cred = read_small_file(o->s3.credentials_file, &cred_n);
        if (o->s3.config_file)
            conf = read_small_file(o->s3.config_file, &conf_n);
        cfg.access_key =
            profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_access_key_id");
        cfg.secret_key =
            profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_secret_access_key");
        if (!cfg.access_key || !cfg.secret_key)
            FLOE_FAIL(err, FLOE_EINVALID, "S3 profile \"%s\": no aws_access_key_id and "
                      "aws_secret_access_key in %s or %s", profile,
                      o->s3.credentials_file ? o->s3.credentials_file : "(no credentials file)",
                      o->s3.config_file ? o->s3.config_file : "(no config file)");
        cfg.session_token =
            profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_session_token");
        rc = check_key_pair("aws_access_key_id", cfg.access_key, "aws_secret_access_key",
                            cfg.secret_key, "aws_session_token", cfg.session_token, err);
        if (rc < 0) {
            floe_error_prefix(err, "S3 profile \"%s\" (%s, %s): ", profile,
                              o->s3.credentials_file ? o->s3.credentials_file
                                                     : "(no credentials file)",
                              o->s3.config_file ? o->s3.config_file : "(no config file)");
            goto done;
        }
        break;
    }
    case FLOE_IO_CREDS_CALLBACK:
        if (!o->s3.credentials_fn)
            FLOE_FAIL(err, FLOE_EINVALID, "S3 credentials callback missing");
        cfg.credentials_fn = o->s3.credentials_fn;
        cfg.credentials_ctx = o->s3.credentials_ctx;
        break;
    default:
        FLOE_FAIL(err, FLOE_EINVALID, "unknown S3 credentials source %d",
                  (int)o->s3.credentials);
    }
    cfg.region = floe_strdup(o->s3.region ? o->s3.region : "us-east-1");
    if (!cfg.region)
        oom = true;
    cfg.endpoint = dup_or_null(o->s3.endpoint, &oom);
    if (oom)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (cfg.endpoint) {
        size_t el = strlen(cfg.endpoint);
        while (el > 0 && cfg.endpoint[el - 1] == '/')
            cfg.endpoint[--el] = '\0';
        if (strncmp(cfg.endpoint, "http://", 7) && strncmp(cfg.endpoint, "https://", 8))
            FLOE_FAIL(err, FLOE_EINVALID,
                      "S3 endpoint \"%s\": expected http://host[:port] or https://...",
                      cfg.endpoint);
        if (strpbrk(cfg.endpoint, " \t\r\n\"'?#"))
            FLOE_FAIL(err, FLOE_EINVALID, "S3 endpoint \"%s\": unexpected characters",
                      cfg.endpoint);
    }
    cfg.path_style = o->s3.addressing == FLOE_IO_S3_ADDRESSING_PATH ||
                     (o->s3.addressing == FLOE_IO_S3_ADDRESSING_AUTO && cfg.endpoint);
    cfg.anonymous = o->s3.anonymous;
    cfg.unsigned_payload = o->s3.unsigned_payload;
    if (o->s3.part_size < MIN_PART_SIZE || o->s3.part_size > MAX_PART_SIZE)
        FLOE_FAIL(err, FLOE_EINVALID, "S3 part size %zu: expected 5 MiB to 5 GiB",
                  o->s3.part_size);
    cfg.part_size = o->s3.part_size;
    if (o->s3.list_page_size < 1 || o->s3.list_page_size > 1000)
        FLOE_FAIL(err, FLOE_EINVALID, "S3 list page size %d: expected 1 to 1000",
                  o->s3.list_page_size);
    cfg.list_page_size = o->s3.list_page_size;
    if (o->retry.max_attempts < 1 || o->retry.max_attempts > 100)
        FLOE_FAIL(err, FLOE_EINVALID, "S3 max attempts %d: expected 1 to 100",
                  o->retry.max_attempts);
    cfg.max_attempts = o->retry.max_attempts;
    if (o->retry.budget_ms < 0 || o->retry.base_delay_ms < 0 || o->retry.max_delay_ms < 0 ||
        o->retry.timeout_ms < 1 || o->retry.connect_timeout_ms < 1)
        FLOE_FAIL(err, FLOE_EINVALID, "S3 retry policy: negative or zero times");
    cfg.retry_budget_ms = o->retry.budget_ms;
    cfg.base_delay_ms = o->retry.base_delay_ms;
    cfg.max_delay_ms = o->retry.max_delay_ms;
    cfg.timeout_ms = o->retry.timeout_ms;
    cfg.connect_timeout_ms = o->retry.connect_timeout_ms;
    *out = cfg;
    memset(&cfg, 0, sizeof cfg);
done:
    floe_s3_config_free(&cfg);
    floe_free(cred);
    floe_free(conf);
    return rc;
}

int floe_s3_config_load(floe_s3_config *cfg, floe_io_lookup_fn lookup, void *lookup_ctx,
                        floe_error *err) {
    floe_io_options o;
    floe_io_options_init(&o);
    int rc = floe_io_options_from_env(&o, lookup, lookup_ctx, err);
    if (rc == 0)
        rc = floe_s3_config_from_options(&o, cfg, err);
    floe_io_options_free(&o);
    return rc;
}
