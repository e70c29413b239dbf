/*
 * s3_config.c - where the S3 backend gets its credentials, region, endpoint and knobs.
 *
 * Follows the AWS conventions (docs/S3.md has the table):
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
#include <pthread.h>
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

static char *env_dup(const char *name) {
    const char *v = getenv(name);
    return v && *v ? floe_strdup(v) : NULL;
}

static int env_int(const char *name, int64_t lo, int64_t hi, int64_t *out, floe_error *err) {
    const char *v = getenv(name);
    if (!v || !*v)
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

int floe_s3_config_load(floe_s3_config *out, floe_error *err) {
    floe_s3_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int rc = 0;
    char *cred = NULL, *conf = NULL, *cred_path = NULL, *conf_path = NULL;
    char *addressing = NULL, *force = NULL;
    size_t cred_n = 0, conf_n = 0;

    const char *home = getenv("HOME");
    const char *profile = getenv("AWS_PROFILE");
    if (!profile || !*profile)
        profile = getenv("AWS_DEFAULT_PROFILE");
    if (!profile || !*profile)
        profile = "default";
    cred_path = env_dup("AWS_SHARED_CREDENTIALS_FILE");
    if (!cred_path && home)
        cred_path = floe_asprintf("%s/.aws/credentials", home);
    conf_path = env_dup("AWS_CONFIG_FILE");
    if (!conf_path && home)
        conf_path = floe_asprintf("%s/.aws/config", home);
    if (cred_path)
        cred = read_small_file(cred_path, &cred_n);
    if (conf_path)
        conf = read_small_file(conf_path, &conf_n);

    cfg.access_key = env_dup("AWS_ACCESS_KEY_ID");
    cfg.secret_key = env_dup("AWS_SECRET_ACCESS_KEY");
    if (cfg.access_key && cfg.secret_key) {
        cfg.session_token = env_dup("AWS_SESSION_TOKEN");
    } else {
        floe_free(cfg.access_key);
        floe_free(cfg.secret_key);
        cfg.access_key =
            profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_access_key_id");
        cfg.secret_key =
            profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_secret_access_key");
        if (cfg.access_key && cfg.secret_key)
            cfg.session_token =
                profile_get(cred, cred_n, conf, conf_n, profile, NULL, "aws_session_token");
    }
    if (!cfg.access_key || !cfg.secret_key) {
        floe_free(cfg.access_key);
        floe_free(cfg.secret_key);
        cfg.access_key = cfg.secret_key = NULL;
    }

    cfg.region = env_dup("AWS_REGION");
    if (!cfg.region)
        cfg.region = env_dup("AWS_DEFAULT_REGION");
    if (!cfg.region)
        cfg.region = profile_get(NULL, 0, conf, conf_n, profile, NULL, "region");
    if (!cfg.region)
        cfg.region = floe_strdup("us-east-1");

    cfg.endpoint = env_dup("AWS_ENDPOINT_URL_S3");
    if (!cfg.endpoint)
        cfg.endpoint = env_dup("AWS_ENDPOINT_URL");
    if (!cfg.endpoint)
        cfg.endpoint = profile_get(NULL, 0, conf, conf_n, profile, "s3", "endpoint_url");
    if (!cfg.endpoint)
        cfg.endpoint = profile_get(NULL, 0, conf, conf_n, profile, NULL, "endpoint_url");
    if (!cfg.region)
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

    cfg.path_style = cfg.endpoint != NULL;
    addressing = profile_get(NULL, 0, conf, conf_n, profile, "s3", "addressing_style");
    if (addressing && !strcmp(addressing, "path"))
        cfg.path_style = true;
    else if (addressing && !strcmp(addressing, "virtual"))
        cfg.path_style = false;
    const char *fa = getenv("FLOE_S3_ADDRESSING");
    if (fa && *fa) {
        if (!strcmp(fa, "path"))
            cfg.path_style = true;
        else if (!strcmp(fa, "virtual"))
            cfg.path_style = false;
        else
            FLOE_FAIL(err, FLOE_EINVALID, "FLOE_S3_ADDRESSING=%s: expected path or virtual", fa);
    }
    force = env_dup("AWS_S3_FORCE_PATH_STYLE");
    if (force) {
        int b = parse_bool(force);
        if (b < 0)
            FLOE_FAIL(err, FLOE_EINVALID, "AWS_S3_FORCE_PATH_STYLE=%s: expected true or false",
                      force);
        cfg.path_style = b == 1;
    }
    cfg.anonymous = parse_bool(getenv("FLOE_S3_ANONYMOUS")) == 1;
    cfg.unsigned_payload = parse_bool(getenv("FLOE_S3_UNSIGNED_PAYLOAD")) == 1;

    int64_t v;
    v = (int64_t)(8u << 20);
    FLOE_CHECK(env_int("FLOE_S3_PART_SIZE", (int64_t)MIN_PART_SIZE, (int64_t)MAX_PART_SIZE, &v,
                       err));
    cfg.part_size = (size_t)v;
    v = 10;
    FLOE_CHECK(env_int("FLOE_S3_MAX_ATTEMPTS", 1, 100, &v, err));
    cfg.max_attempts = (int)v;
    cfg.retry_budget_ms = 120000;
    FLOE_CHECK(env_int("FLOE_S3_RETRY_BUDGET_MS", 0, INT64_C(86400000), &cfg.retry_budget_ms,
                       err));
    cfg.base_delay_ms = 100;
    FLOE_CHECK(env_int("FLOE_S3_RETRY_BASE_MS", 0, 60000, &cfg.base_delay_ms, err));
    cfg.max_delay_ms = 20000;
    FLOE_CHECK(env_int("FLOE_S3_RETRY_MAX_MS", 0, 600000, &cfg.max_delay_ms, err));
    cfg.timeout_ms = 300000;
    FLOE_CHECK(env_int("FLOE_S3_TIMEOUT_MS", 100, INT64_C(86400000), &cfg.timeout_ms, err));
    cfg.connect_timeout_ms = 10000;
    FLOE_CHECK(env_int("FLOE_S3_CONNECT_TIMEOUT_MS", 100, 600000, &cfg.connect_timeout_ms,
                       err));
    v = 1000;
    FLOE_CHECK(env_int("FLOE_S3_LIST_MAX_KEYS", 1, 1000, &v, err));
    cfg.list_page_size = (int)v;

    *out = cfg;
    memset(&cfg, 0, sizeof cfg);
done:
    floe_s3_config_free(&cfg);
    floe_free(cred);
    floe_free(conf);
    floe_free(cred_path);
    floe_free(conf_path);
    floe_free(addressing);
    floe_free(force);
    return rc;
}

static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static floe_s3_config cfg_global;
static bool cfg_loaded;

int floe_s3_config_get(const floe_s3_config **cfg, floe_error *err) {
    int rc = 0;
    pthread_mutex_lock(&cfg_lock);
    if (!cfg_loaded) {
        rc = floe_s3_config_load(&cfg_global, err);
        cfg_loaded = rc == 0;
    }
    pthread_mutex_unlock(&cfg_lock);
    if (rc == 0)
        *cfg = &cfg_global;
    return rc;
}

void floe_s3_config_reset(void) {
    pthread_mutex_lock(&cfg_lock);
    if (cfg_loaded)
        floe_s3_config_free(&cfg_global);
    cfg_loaded = false;
    pthread_mutex_unlock(&cfg_lock);
}
