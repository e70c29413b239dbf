/*
 * config.c - the `floe serve` configuration file (format: floe_server_example_config).
 *
 * INI-like: "# comment", "[server]", "[defaults]", "[table ns.name]", "[token name]",
 * "key = value". Sizes take B/KB/MB/GB/KiB/MiB/GiB (powers of 1024 for both spellings,
 * as the rest of floe), durations ms/s/m/h/d. Unknown keys are errors (a typo must not
 * silently fall back to a default).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/rewrite.h"
#include "server_internal.h"

static const char example_config[] =
    "# floe serve configuration (floe serve --config FILE)\n"
    "#\n"
    "# Sizes take B, KB, MB, GB (KiB, MiB, GiB are the same: powers of 1024);\n"
    "# durations ms, s, m, h, d. Send SIGHUP to reload [token] sections and thresholds.\n"
    "\n"
    "[server]\n"
    "listen = 127.0.0.1:8080          # beyond loopback, [token] sections are required\n"
    "warehouse = ./warehouse          # tables, _landing/, _quarantine/, _wal/\n"
    "# catalog = ./warehouse/catalog.db   # SQLite catalog (default <warehouse>/catalog.db)\n"
    "# catalog = postgresql://user:pass@host/db  # shared by several nodes (scale-out)\n"
    "# catalog = http://127.0.0.1:8181  # an Iceberg REST catalog; then the landing index\n"
    "# state_db = ./warehouse/_floe_state.db  # and leases go to state_db (or PostgreSQL)\n"
    "# role = all                     # all | ingest | compactor (see floe work)\n"
    "node_id = node1                  # names this node's landing files and WAL\n"
    "# wal_dir = ./warehouse/_wal/node1\n"
    "max_body = 16MiB                 # request body on the wire (413 beyond)\n"
    "max_decoded = 64MiB              # after gzip/zstd decoding (413 beyond)\n"
    "max_record = 1MiB                # one record (rejected as too_large beyond)\n"
    "max_connections = 256            # served at once: an idle or slow one makes room\n"
    "# max_connections_per_ip = 0     # per client address (0 = no limit; behind a proxy)\n"
    "max_inflight_bytes = 256MiB      # bodies and parse state of requests in progress\n"
    "                                 # together (503 + Retry-After beyond)\n"
    "header_timeout = 10s             # request headers (and keep-alive idle time)\n"
    "read_timeout = 30s               # request body\n"
    "buffer_cap = 256MiB              # buffered + queued bytes before 503 + Retry-After\n"
    "max_request_partitions = 1000    # partitions one request may span (413 beyond)\n"
    "idempotency_window = 24h\n"
    "wal_segment_size = 64MiB\n"
    "landing_codec = lz4              # lz4 | zstd | none: WAL frames and landing files\n"
    "compression_level = 1            # zstd level when landing_codec = zstd\n"
    "max_pending_bytes = 1GiB         # landing bytes not yet compacted: posts wait beyond\n"
    "auto_create = false              # create unknown tables from their first batch\n"
    "compact = true                   # run landing compaction in this process\n"
    "maintain = true                  # run table maintenance in this process ([maintain])\n"
    "# Object storage of an s3:// warehouse, as in floe.conf (PyIceberg's names); the\n"
    "# environment (AWS_*) and floe's --s3-* flags override these (docs/CONFIG.md)\n"
    "# s3.endpoint = http://127.0.0.1:9000\n"
    "# s3.region = us-east-1\n"
    "# s3.access-key-id = AKIA...      # with s3.secret-access-key\n"
    "# s3.secret-access-key = ...\n"
    "# s3.session-token = ...\n"
    "# s3.force-virtual-addressing = false  # true: bucket.host addressing\n"
    "\n"
    "# With a REST catalog (catalog = http(s)://...): its settings, as a floe.conf\n"
    "# [catalog.NAME] names them (docs/REST.md); read at start, not on SIGHUP\n"
    "# [catalog]\n"
    "# credential = client-id:client-secret  # OAuth2 client credentials, or\n"
    "# token = ...                    # a bearer token\n"
    "# scope = catalog\n"
    "# oauth2-server-uri = https://idp.example/oauth/token  # default <uri>/v1/oauth/tokens\n"
    "# warehouse = lake               # asked of /v1/config (default: [server] warehouse)\n"
    "# prefix = ...                   # also header.<Name>, rest.sigv4-enabled,\n"
    "#                                # rest.signing-region, rest.signing-name\n"
    "\n"
    "[defaults]                       # for every table unless it says otherwise\n"
    "schema_mode = strict             # strict | evolve | ignore\n"
    "seal_bytes = 5MB                 # seal a partition buffer into a landing file\n"
    "seal_age = 300s\n"
    "compact_bytes = 50MB             # compact a partition's pending landing files\n"
    "compact_age = 15m\n"
    "target_file_size = 128MB         # Parquet files written by landing compaction\n"
    "\n"
    "[table analytics.events]\n"
    "schema = events.schema.json      # Iceberg schema JSON, used if the table is created\n"
    "partition = event_type, day(ts)  # partition spec, used if the table is created\n"
    "schema_mode = evolve\n"
    "\n"
    "# Table maintenance inside floe serve: the `floe maintain` scheduler and its keys\n"
    "# (<job>.<setting>; jobs rewrite-data, rewrite-manifests, expire, orphans,\n"
    "# landing-lifecycle) over the served tables. Each job of each table runs under a lease in\n"
    "# the catalog database, shared with any `floe maintain` on the same catalog: a job held\n"
    "# elsewhere is skipped. Landing compaction is the compactor's (compact_* above), not a\n"
    "# maintenance job here. Runs are logged and counted in /metrics (floe_maint_*).\n"
    "[maintain]\n"
    "start-delay = 5m                 # first runs this long after start\n"
    "lease-ttl = 10m                  # renewed every ttl/3 while a job runs\n"
    "# run-log = maintain.jsonl       # one JSON line per run (as floe maintain --run-log)\n"
    "# Unset cadences (<job>.interval, or = auto) follow the commit rate of a table with\n"
    "# frequent commits (rewrite-data every few seconds, expiry keeping minutes); a value\n"
    "# set here is used as is (docs/MAINTENANCE.md).\n"
    "# expire.interval = 1h\n"
    "# expire.older-than = 5d         # default: history.expire.max-snapshot-age-ms, or\n"
    "                                 # the last 100 commits for busy tables\n"
    "expire.retain-last = 1           # default: history.expire.min-snapshots-to-keep\n"
    "orphans.interval = 1d\n"
    "orphans.older-than = 3d          # at least 1h here (files being written are young)\n"
    "# rewrite-manifests.interval = 1h\n"
    "rewrite-manifests.min-manifests = 10\n"
    "rewrite-manifests.target-size = 8MB\n"
    "# rewrite-data.interval = 1h\n"
    "rewrite-data.planner = auto      # generational for busy tables, else Iceberg's bin-pack\n"
    "# rewrite-data.options = tier-fanout=5,max-files-per-partition=10\n"
    "landing-lifecycle.interval = 1h\n"
    "landing-lifecycle.age = 3d       # committed landing files older than this go\n"
    "landing-lifecycle.quarantine-retention = keep\n"
    "# <job>.enabled = false turns a job off\n"
    "\n"
    "[maintain table analytics.events]  # this table's own settings over [maintain]\n"
    "expire.retain-last = 10\n"
    "\n"
    "# Kafka topics consumed into a table, exactly once (README 'Kafka as a source'): the\n"
    "# offsets are committed with the data, in the table's properties\n"
    "[source kafka clickstream]\n"
    "bootstrap.servers = broker1:9092\n"
    "topics = events                  # names, or regexes starting with ^\n"
    "group.id = floe-loaders\n"
    "table = analytics.events         # or ns.{topic}: one table per topic, or\n"
    "                                 # ns.ev_{field:event_type}: by a record's member\n"
    "format = json                    # json (one object per message) | ndjson | array\n"
    "commit_interval = 60s            # commit a table's batch at this age ...\n"
    "commit_bytes = 128MB             # ... or size\n"
    "max_buffered_bytes = 256MB       # fetching pauses past it while commits fail\n"
    "# column.topic = _topic          # also column.partition, .offset, .key, .timestamp,\n"
    "#                                # .headers: metadata columns (in the table's schema)\n"
    "# kafka.security.protocol = SASL_SSL   # kafka.* is passed to librdkafka\n"
    "\n"
    "[token ingest]\n"
    "secret = change-me               # sent as: Authorization: Bearer change-me\n"
    "grants = analytics.events        # ns.table, ns.*, * (all tables), admin, metrics\n"
    "\n"
    "[token ops]\n"
    "secret = change-me-too\n"
    "grants = admin, *\n"
    "\n"
    "[token prometheus]                # GET /metrics needs the metrics grant when tokens\n"
    "secret = change-me-three          # are configured (without tokens the server is on\n"
    "grants = metrics                  # loopback only, and /metrics is open there)\n";

const char *floe_server_example_config(void) {
    return example_config;
}

static void table_config_init(floe_server_table_config *t) {
    memset(t, 0, sizeof *t);
    t->mode = -1;
    t->seal_bytes = t->seal_age_ms = t->compact_bytes = t->compact_age_ms = -1;
    t->target_file_size = -1;
}

static void table_config_free(floe_server_table_config *t) {
    floe_free(t->name);
    floe_free(t->schema_path);
    floe_free(t->partition);
    table_config_init(t);
}

void floe_server_config_init(floe_server_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->max_body = 16 << 20;
    cfg->max_decoded = 64 << 20;
    cfg->max_record = 1 << 20;
    cfg->max_connections = 256;
    cfg->max_inflight_bytes = 256 << 20;
    cfg->header_timeout_ms = 10000;
    cfg->read_timeout_ms = 30000;
    cfg->buffer_cap = 256 << 20;
    cfg->max_request_partitions = 1000;
    cfg->idempotency_window_ms = 24LL * 3600 * 1000;
    cfg->wal_segment_bytes = 64 << 20;
    cfg->compression_level = 1;
    cfg->landing_codec = FLOE_LANDING_LZ4;
    cfg->max_pending_bytes = 1LL << 30;
    cfg->compact = true;
    cfg->maintain = true;
    cfg->maint_start_delay_ms = 5 * 60000;
    cfg->compact_lease_ms = 60000;
    table_config_init(&cfg->defaults);
}

static int dup_opt(char **dst, const char *src);

static void source_free(floe_server_source_config *src) {
    floe_free(src->name);
    for (size_t i = 0; i < src->n; i++) {
        floe_free(src->keys[i]);
        floe_free(src->values[i]);
    }
    floe_free(src->keys);
    floe_free(src->values);
    memset(src, 0, sizeof *src);
}

/* A key of a [source] section; a key given again replaces the earlier value. */
static int source_key(floe_server_source_config *src, const char *k, const char *v,
                      floe_error *err) {
    size_t i;
    for (i = 0; i < src->n && strcmp(src->keys[i], k); i++)
        ;
    char *nv = floe_strdup(v);
    if (!nv)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (i < src->n) {
        floe_free(src->values[i]);
        src->values[i] = nv;
        return 0;
    }
    char **nk = floe_realloc(src->keys, (src->n + 1) * sizeof *nk);
    if (nk)
        src->keys = nk;
    char **nvs = nk ? floe_realloc(src->values, (src->n + 1) * sizeof *nvs) : NULL;
    if (nvs)
        src->values = nvs;
    char *kc = nvs ? floe_strdup(k) : NULL;
    if (!kc) {
        floe_free(nv);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    src->keys[src->n] = kc;
    src->values[src->n] = nv;
    src->n++;
    return 0;
}

static int source_copy(const floe_server_source_config *src, floe_server_source_config *dst) {
    memset(dst, 0, sizeof *dst);
    if (dup_opt(&dst->name, src->name) < 0)
        return FLOE_ENOMEM;
    for (size_t i = 0; i < src->n; i++)
        if (source_key(dst, src->keys[i], src->values[i], NULL) < 0)
            return FLOE_ENOMEM;
    return 0;
}

static void token_free(floe_server_token *t) {
    floe_free(t->name);
    floe_free(t->secret);
    for (size_t i = 0; i < t->ngrants; i++)
        floe_free(t->grants[i]);
    floe_free(t->grants);
}

void floe_server_config_reset(floe_server_config *cfg) {
    floe_free(cfg->listen);
    floe_free(cfg->warehouse);
    floe_free(cfg->catalog);
    floe_free(cfg->state_db);
    floe_free(cfg->node_id);
    floe_free(cfg->wal_dir);
    floe_free(cfg->maint_config);
    floe_free(cfg->maint_run_log);
    floe_free(cfg->staging_dir);
    floe_s3_properties_reset(&cfg->s3);
    floe_rest_properties_reset(&cfg->rest);
    floe_free(cfg->catalog_warehouse);
    table_config_free(&cfg->defaults);
    for (size_t i = 0; i < cfg->ntables; i++)
        table_config_free(&cfg->tables[i]);
    floe_free(cfg->tables);
    for (size_t i = 0; i < cfg->ntokens; i++)
        token_free(&cfg->tokens[i]);
    floe_free(cfg->tokens);
    for (size_t i = 0; i < cfg->nsources; i++)
        source_free(&cfg->sources[i]);
    floe_free(cfg->sources);
    floe_server_config_init(cfg);
}

/* A bare number is seconds here; at most ~285 years, so that deadlines computed from
 * now plus it (in ns too) stay far from overflow. */
static bool parse_duration(const char *s, int64_t *out_ms) {
    int64_t ms;
    if (!floe_parse_duration(s, 1000, &ms) || ms > 9000000000000000LL)
        return false;
    *out_ms = ms;
    return true;
}

static bool parse_bool(const char *s, bool *out) {
    if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1") ||
        !strcasecmp(s, "on"))
        *out = true;
    else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0") ||
             !strcasecmp(s, "off"))
        *out = false;
    else
        return false;
    return true;
}

static int parse_mode(const char *s) {
    if (!strcasecmp(s, "strict"))
        return FLOE_SCHEMA_STRICT;
    if (!strcasecmp(s, "evolve"))
        return FLOE_SCHEMA_EVOLVE;
    if (!strcasecmp(s, "ignore"))
        return FLOE_SCHEMA_IGNORE;
    return -1;
}

bool srv_valid_table_name(const char *name) {
    /* namespace levels and the table name: [A-Za-z0-9_-]+ joined by single dots; at
     * least one dot. These names become path segments, so nothing else is allowed. */
    size_t n = strlen(name), seg = 0, dots = 0;
    if (n == 0 || n > 200)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c == '.') {
            if (seg == 0)
                return false;
            seg = 0;
            dots++;
        } else if (isalnum((unsigned char)c) || c == '_' || c == '-') {
            seg++;
        } else {
            return false;
        }
    }
    return seg > 0 && dots > 0;
}

bool srv_valid_source_name(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
            return false;
    return true;
}

static int set_dup(char **dst, const char *v, floe_error *err) {
    char *d = floe_strdup(v);
    if (!d)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(*dst);
    *dst = d;
    return 0;
}

/* A grant as floe/auth.h defines it: "*", a literal grant ("admin", "metrics"), "NS.*" or
 * "NS.TABLE" with NS a well-formed namespace (levels joined by dots) and TABLE a
 * well-formed table name (the catalog's name rules). A misspelt grant would otherwise
 * grant nothing, silently, or another table than meant. */
static int check_grant(const char *g, floe_error *err) {
    if (!strcmp(g, "*") || !strcmp(g, "admin") || !strcmp(g, "metrics"))
        return 0;
    const char *dot = strrchr(g, '.');
    if (!dot)
        return floe_error_set(err, FLOE_EINVALID, "unknown grant '%s' (grants: *, NS.*, "
                              "NS.TABLE, admin, metrics)", g);
    char *ns = floe_strndup(g, (size_t)(dot - g));
    if (!ns)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_error why;
    floe_error_clear(&why);
    const char *table = dot + 1;
    int rc = 0;
    if (strchr(ns, '*') || (strcmp(table, "*") && strchr(table, '*')))
        rc = floe_error_set(&why, FLOE_EINVALID, "'*' stands alone, for every table of a "
                            "namespace (NS.*) or for everything");
    else
        rc = floe_catalog_check_names(ns, strcmp(table, "*") ? table : NULL, &why);
    floe_free(ns);
    if (rc < 0)
        return floe_error_set(err, rc == FLOE_ENOMEM ? FLOE_ENOMEM : FLOE_EINVALID,
                              "grant '%s' names no namespace or table (NS.*, NS.TABLE): %s",
                              g, why.msg);
    return 0;
}

static int split_grants(floe_server_token *t, const char *v, floe_error *err) {
    for (size_t i = 0; i < t->ngrants; i++)
        floe_free(t->grants[i]);
    floe_free(t->grants);
    t->grants = NULL;
    t->ngrants = 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ' && *q != '\t')
            q++;
        if (q > p) {
            char **g = floe_realloc(t->grants, (t->ngrants + 1) * sizeof *g);
            if (!g)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            t->grants = g;
            if (!(g[t->ngrants] = floe_strndup(p, (size_t)(q - p))))
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            t->ngrants++;
            FLOE_FORWARD_IF_ERROR(check_grant(g[t->ngrants - 1], err));
        }
        p = q;
    }
    if (t->ngrants == 0)
        return floe_error_set(err, FLOE_EINVALID, "grants: no grant named (*, NS.*, NS.TABLE, "
                              "admin, metrics)");
    return 0;
}

static int table_key(floe_server_table_config *t, const char *k, const char *v,
                     floe_error *err) {
    int64_t x;
    if (!strcmp(k, "schema_mode")) {
        int m = parse_mode(v);
        if (m < 0)
            return floe_error_set(err, FLOE_EINVALID, "schema_mode must be strict, evolve "
                                  "or ignore, not '%s'", v);
        t->mode = m;
    } else if (!strcmp(k, "seal_bytes") || !strcmp(k, "compact_bytes") ||
               !strcmp(k, "target_file_size")) {
        if (!floe_parse_size(v, &x) || x <= 0)
            return floe_error_set(err, FLOE_EINVALID, "%s: bad size '%s'", k, v);
        if (k[0] == 's')
            t->seal_bytes = x;
        else if (k[0] == 'c')
            t->compact_bytes = x;
        else
            t->target_file_size = x;
    } else if (!strcmp(k, "seal_age") || !strcmp(k, "compact_age")) {
        if (!parse_duration(v, &x))
            return floe_error_set(err, FLOE_EINVALID, "%s: bad duration '%s'", k, v);
        if (k[0] == 's')
            t->seal_age_ms = x;
        else
            t->compact_age_ms = x;
    } else if (!strcmp(k, "schema") && t->name) {
        return set_dup(&t->schema_path, v, err);
    } else if (!strcmp(k, "partition") && t->name) {
        return set_dup(&t->partition, v, err);
    } else {
        return floe_error_set(err, FLOE_EINVALID, "unknown key '%s'", k);
    }
    return 0;
}

static int server_key(floe_server_config *c, const char *k, const char *v, floe_error *err) {
    int64_t x;
    struct {
        const char *name;
        int64_t *dst;
        int kind; /* 0 size, 1 duration, 2 count, 3 size or 0, 4 count or 0 */
    } nums[] = {
        {"max_body", &c->max_body, 0},
        {"max_decoded", &c->max_decoded, 0},
        {"max_record", &c->max_record, 0},
        {"max_connections", &c->max_connections, 2},
        {"max_connections_per_ip", &c->max_connections_per_ip, 4},
        {"max_inflight_bytes", &c->max_inflight_bytes, 0},
        {"header_timeout", &c->header_timeout_ms, 1},
        {"read_timeout", &c->read_timeout_ms, 1},
        {"buffer_cap", &c->buffer_cap, 0},
        {"max_request_partitions", &c->max_request_partitions, 2},
        {"idempotency_window", &c->idempotency_window_ms, 1},
        {"wal_segment_size", &c->wal_segment_bytes, 0},
        {"compression_level", &c->compression_level, 2},
        {"max_pending_bytes", &c->max_pending_bytes, 3},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (strcmp(k, nums[i].name))
            continue;
        bool ok;
        if (nums[i].kind == 1) {
            ok = parse_duration(v, &x);
        } else if (nums[i].kind == 0 || nums[i].kind == 3) {
            ok = (nums[i].kind == 3 && !strcmp(v, "0")) ? (x = 0, true) : floe_parse_size(v, &x);
        } else {
            char *end;
            long long ll = strtoll(v, &end, 10);
            ok = end != v && !*end;
            x = ll;
        }
        if (!ok || (nums[i].kind < 2 && x <= 0) || (nums[i].kind == 3 && x < 0) ||
            (nums[i].kind == 2 && k[0] == 'm' && x <= 0) || (nums[i].kind == 4 && x < 0))
            return floe_error_set(err, FLOE_EINVALID, "%s: bad value '%s'", k, v);
        *nums[i].dst = x;
        return 0;
    }
    int s3 = floe_s3_properties_take(&c->s3, k, strlen(k), v, strlen(v), err);
    if (s3 != 0)
        return s3 < 0 ? s3 : 0;
    if (!strcmp(k, "listen"))
        return set_dup(&c->listen, v, err);
    if (!strcmp(k, "warehouse"))
        return set_dup(&c->warehouse, v, err);
    if (!strcmp(k, "catalog"))
        return set_dup(&c->catalog, v, err);
    if (!strcmp(k, "state_db"))
        return set_dup(&c->state_db, v, err);
    if (!strcmp(k, "wal_dir"))
        return set_dup(&c->wal_dir, v, err);
    if (!strcmp(k, "landing_codec")) {
        if (!strcmp(v, "lz4"))
            c->landing_codec = FLOE_LANDING_LZ4;
        else if (!strcmp(v, "zstd"))
            c->landing_codec = FLOE_LANDING_ZSTD;
        else if (!strcmp(v, "none"))
            c->landing_codec = FLOE_LANDING_NONE;
        else
            return floe_error_set(err, FLOE_EINVALID, "landing_codec: lz4, zstd or none "
                                  "('%s')", v);
        return 0;
    }
    if (!strcmp(k, "role")) {
        if (!strcmp(v, "all"))
            c->role = FLOE_SERVER_ROLE_ALL;
        else if (!strcmp(v, "ingest"))
            c->role = FLOE_SERVER_ROLE_INGEST;
        else if (!strcmp(v, "compactor"))
            c->role = FLOE_SERVER_ROLE_COMPACTOR;
        else
            return floe_error_set(err, FLOE_EINVALID, "role: all, ingest or compactor ('%s')",
                                  v);
        return 0;
    }
    if (!strcmp(k, "node_id")) {
        for (const char *p = v; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '_')
                return floe_error_set(err, FLOE_EINVALID, "node_id: only letters, digits "
                                      "and '_' ('%s')", v);
        if (!*v || strlen(v) > 64)
            return floe_error_set(err, FLOE_EINVALID, "node_id: 1 to 64 characters");
        return set_dup(&c->node_id, v, err);
    }
    if (!strcmp(k, "auto_create") || !strcmp(k, "compact") || !strcmp(k, "maintain")) {
        bool b;
        if (!parse_bool(v, &b))
            return floe_error_set(err, FLOE_EINVALID, "%s: expected true or false", k);
        if (k[0] == 'a')
            c->auto_create = b;
        else if (k[0] == 'c')
            c->compact = b;
        else
            c->maintain = b;
        return 0;
    }
    return floe_error_set(err, FLOE_EINVALID, "unknown key '%s'", k);
}

/* One key of the [catalog] section: the settings of a REST catalog, as a floe.conf
 * [catalog.NAME] entry names them. Its URI is [server] catalog. */
static int catalog_key(floe_server_config *c, const char *k, const char *v, floe_error *err) {
    if (!strcmp(k, "warehouse"))
        return set_dup(&c->catalog_warehouse, v, err);
    int taken = floe_rest_properties_take(&c->rest, k, strlen(k), v, strlen(v), err);
    if (taken != 0)
        return taken < 0 ? taken : 0;
    if (!strcmp(k, "uri") || !strcmp(k, "type"))
        return floe_error_set(err, FLOE_EINVALID, "%s: the catalog's URI is [server] catalog "
                              "(http(s)://... for a REST catalog)", k);
    if (!strcmp(k, "state-db"))
        return floe_error_set(err, FLOE_EINVALID, "state-db: this is [server] state_db here");
    return floe_error_set(err, FLOE_EINVALID, "unknown key '%s' (a REST catalog's: token, "
                          "credential, scope, oauth2-server-uri, prefix, warehouse, "
                          "header.<Name>, rest.sigv4-enabled, rest.signing-region, "
                          "rest.signing-name)", k);
}

/* One key of a [maintain] (table NULL) or [maintain table X] section: checked by the
 * maintenance scheduler's own parser, then appended to cfg->maint_config, which is that
 * parser's format ([defaults] / [table X]), so the keys are exactly `floe maintain`'s. */
static int maint_key(floe_server_config *c, const char *table, const char *k, const char *v,
                     floe_error *err) {
    if (!strcmp(k, "start-delay")) {
        if (table || !parse_duration(v, &c->maint_start_delay_ms))
            return floe_error_set(err, FLOE_EINVALID, "start-delay: a duration, in [maintain] "
                                  "only ('%s')", v);
        return 0;
    }
    if (!strcmp(k, "run-log")) {
        if (table || !*v)
            return floe_error_set(err, FLOE_EINVALID, "run-log: a file, in [maintain] only");
        return set_dup(&c->maint_run_log, v, err);
    }
    if (!strncmp(k, "landing-compact.", 16))
        return floe_error_set(err, FLOE_EINVALID, "%s: landing compaction in floe serve is the "
                              "compactor's (compact_bytes, compact_age, compact = false)", k);
    char *line = table ? floe_asprintf("[table %s]\n%s = %s\n", table, k, v)
                       : floe_asprintf("[defaults]\n%s = %s\n", k, v);
    if (!line)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    floe_error e;
    floe_error_clear(&e);
    int rc = floe_maint_config_parse(&mc, line, strlen(line), "maintain", &e);
    if (rc < 0) {
        rc = floe_error_set(err, FLOE_EINVALID, "bad maintenance setting %s = %s", k, v);
    } else if (!strcmp(k, "rewrite-data.options")) {
        floe_rewrite_options ro;
        floe_rewrite_options_init(&ro);
        if (floe_rewrite_options_parse_list(&ro, v, &e) < 0)
            rc = floe_error_set(err, FLOE_EINVALID, "%s: %s", k, e.msg);
    } else if (!strncmp(k, "orphans.", 8) &&
               floe_maint_config_job(&mc, table, FLOE_JOB_ORPHANS)->older_than_ms < 3600000) {
        /* Files the compactor is writing are referenced by nothing until their commit;
         * only their age protects them from orphan removal. */
        rc = floe_error_set(err, FLOE_EINVALID, "%s: orphan removal inside floe serve needs "
                            "an age of at least 1h ('%s')", k, v);
    }
    floe_maint_config_reset(&mc);
    if (rc == 0) {
        size_t old = c->maint_config ? strlen(c->maint_config) : 0, add = strlen(line);
        char *grown = floe_realloc(c->maint_config, old + add + 1);
        if (!grown) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        } else {
            memcpy(grown + old, line, add + 1);
            c->maint_config = grown;
        }
    }
    floe_free(line);
    return rc;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

int floe_server_config_parse(floe_server_config *cfg, const char *text, size_t n,
                             const char *source, floe_error *err) {
    enum { SEC_NONE, SEC_SERVER, SEC_CATALOG, SEC_DEFAULTS, SEC_TABLE, SEC_TOKEN, SEC_MAINT,
           SEC_SOURCE } sec = SEC_NONE;
    size_t cur = 0;
    char *maint_table = NULL; /* [maintain table X]: X; [maintain]: NULL */
    int rc = 0;
    /* the lines of each token's section header and secret, for the checks that compare
     * tokens (tokens before first_token were not read from this text) */
    size_t first_token = cfg->ntokens;
    int *token_line = NULL, *secret_line = NULL;
    char *copy = floe_strndup(text, n);
    if (!copy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    char *line = copy;
    int lineno = 0;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        /* comments: '#' at the start or after whitespace */
        for (char *h = line; *h; h++)
            if (*h == '#' && (h == line || h[-1] == ' ' || h[-1] == '\t')) {
                *h = 0;
                break;
            }
        char *l = trim(line);
        if (!*l)
            goto next;
        if (*l == '[') {
            char *close = strchr(l, ']');
            if (!close || close[1])
                FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: bad section header", source, lineno);
            *close = 0;
            char *name = trim(l + 1);
            if (!strcmp(name, "server")) {
                sec = SEC_SERVER;
            } else if (!strcmp(name, "catalog")) {
                sec = SEC_CATALOG;
            } else if (!strcmp(name, "defaults")) {
                sec = SEC_DEFAULTS;
            } else if (!strcmp(name, "maintain") || !strncmp(name, "maintain table ", 15)) {
                floe_free(maint_table);
                maint_table = NULL;
                if (name[8]) {
                    char *id = trim(name + 15);
                    if (!srv_valid_table_name(id))
                        FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: bad table name '%s'", source,
                                  lineno, id);
                    if (!(maint_table = floe_strdup(id)))
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                }
                sec = SEC_MAINT;
            } else if (!strncmp(name, "source ", 7)) {
                char *rest = trim(name + 7);
                if (strncmp(rest, "kafka", 5) || (rest[5] != ' ' && rest[5] != '\t'))
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [source TYPE NAME]: the type must "
                              "be kafka", source, lineno);
                char *id = trim(rest + 6);
                if (!srv_valid_source_name(id))
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: bad source name '%s' (letters, "
                              "digits, '_' and '-')", source, lineno, id);
                size_t i;
                for (i = 0; i < cfg->nsources && strcmp(cfg->sources[i].name, id); i++)
                    ;
                if (i == cfg->nsources) {
                    floe_server_source_config *ns =
                        floe_realloc(cfg->sources, (i + 1) * sizeof *ns);
                    if (!ns)
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    cfg->sources = ns;
                    memset(&ns[i], 0, sizeof ns[i]);
                    if (!(ns[i].name = floe_strdup(id)))
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    cfg->nsources++;
                }
                cur = i;
                sec = SEC_SOURCE;
            } else if (!strncmp(name, "table ", 6) || !strncmp(name, "token ", 6)) {
                bool is_table = name[1] == 'a';
                char *id = trim(name + 6);
                if (is_table && !srv_valid_table_name(id))
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: bad table name '%s' (namespace."
                              "table, letters, digits, '_' and '-')", source, lineno, id);
                if (!*id)
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: section needs a name", source,
                              lineno);
                if (is_table) {
                    size_t i;
                    for (i = 0; i < cfg->ntables && strcmp(cfg->tables[i].name, id); i++)
                        ;
                    if (i == cfg->ntables) {
                        floe_server_table_config *t =
                            floe_realloc(cfg->tables, (i + 1) * sizeof *t);
                        if (!t)
                            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                        cfg->tables = t;
                        table_config_init(&t[i]);
                        if (!(t[i].name = floe_strdup(id)))
                            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                        cfg->ntables++;
                    }
                    cur = i;
                    sec = SEC_TABLE;
                } else {
                    size_t i;
                    for (i = 0; i < cfg->ntokens && strcmp(cfg->tokens[i].name, id); i++)
                        ;
                    /* a second section of one name would merge into the first: two
                     * tokens meant, one secret kept */
                    if (i < cfg->ntokens && i >= first_token)
                        FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [token %s] again (its section "
                                  "is at line %d): each token is one section", source, lineno,
                                  id, token_line[i - first_token]);
                    if (i < cfg->ntokens)
                        FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [token %s] again", source,
                                  lineno, id);
                    floe_server_token *t = floe_realloc(cfg->tokens, (i + 1) * sizeof *t);
                    if (!t)
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    cfg->tokens = t;
                    memset(&t[i], 0, sizeof t[i]);
                    if (!(t[i].name = floe_strdup(id)))
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    cfg->ntokens++;
                    size_t mine = cfg->ntokens - first_token;
                    int *tl = floe_realloc(token_line, mine * sizeof *tl);
                    if (tl)
                        token_line = tl;
                    int *sl = tl ? floe_realloc(secret_line, mine * sizeof *sl) : NULL;
                    if (sl)
                        secret_line = sl;
                    if (!tl || !sl)
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    token_line[mine - 1] = lineno;
                    secret_line[mine - 1] = 0;
                    cur = i;
                    sec = SEC_TOKEN;
                }
            } else {
                FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: unknown section [%s]", source, lineno,
                          name);
            }
            goto next;
        }
        char *eq = strchr(l, '=');
        if (!eq)
            FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: expected key = value", source, lineno);
        *eq = 0;
        char *k = trim(l), *v = trim(eq + 1);
        switch (sec) {
        case SEC_NONE:
            FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: key outside a section", source, lineno);
        case SEC_SERVER: rc = server_key(cfg, k, v, err); break;
        case SEC_CATALOG: rc = catalog_key(cfg, k, v, err); break;
        case SEC_DEFAULTS: rc = table_key(&cfg->defaults, k, v, err); break;
        case SEC_TABLE: rc = table_key(&cfg->tables[cur], k, v, err); break;
        case SEC_MAINT: rc = maint_key(cfg, maint_table, k, v, err); break;
        case SEC_SOURCE: rc = source_key(&cfg->sources[cur], k, v, err); break;
        case SEC_TOKEN:
            if (!strcmp(k, "secret")) {
                if (strlen(v) < 8)
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: token secrets need at least 8 "
                              "characters", source, lineno);
                if (cfg->tokens[cur].secret)
                    FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [token %s] has a secret already "
                              "(line %d)", source, lineno, cfg->tokens[cur].name,
                              secret_line[cur - first_token]);
                /* one secret for two tokens: the server would take the first's grants */
                for (size_t i = 0; i < cfg->ntokens; i++)
                    if (i != cur && cfg->tokens[i].secret && !strcmp(cfg->tokens[i].secret, v))
                        FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [token %s] has the secret of "
                                  "[token %s] (line %d): each token needs its own", source,
                                  lineno, cfg->tokens[cur].name, cfg->tokens[i].name,
                                  i >= first_token ? secret_line[i - first_token] : 0);
                secret_line[cur - first_token] = lineno;
                rc = set_dup(&cfg->tokens[cur].secret, v, err);
            } else if (!strcmp(k, "grants")) {
                rc = split_grants(&cfg->tokens[cur], v, err);
            } else {
                rc = floe_error_set(err, FLOE_EINVALID, "unknown key '%s'", k);
            }
            break;
        }
        if (rc < 0) {
            floe_error_prefix(err, "%s:%d: ", source, lineno);
            goto done;
        }
    next:
        line = nl ? nl + 1 : NULL;
    }
    for (size_t i = first_token; i < cfg->ntokens; i++)
        if (!cfg->tokens[i].secret)
            FLOE_FAIL(err, FLOE_EINVALID, "%s:%d: [token %s] has no secret", source,
                      token_line[i - first_token], cfg->tokens[i].name);
done:
    floe_free(token_line);
    floe_free(secret_line);
    floe_free(maint_table);
    floe_free(copy);
    return rc;
}

int floe_server_config_load(floe_server_config *cfg, const char *path, floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, 1 << 20);
    int rc = floe_io_read_all(cfg->io, path, 1 << 20, &b, err);
    if (rc == 0)
        rc = floe_server_config_parse(cfg, (const char *)b.data, b.len, path, err);
    floe_buf_free(&b);
    return rc;
}

static bool is_loopback(const char *listen) {
    if (!listen)
        return true;
    return !strncmp(listen, "127.", 4) || !strncmp(listen, "localhost:", 10) ||
           !strncmp(listen, "[::1]", 5);
}

int floe_server_config_check(const floe_server_config *cfg, floe_error *err) {
    bool rest = cfg->catalog && (!strncmp(cfg->catalog, "http://", 7) ||
                                 !strncmp(cfg->catalog, "https://", 8));
    if (!rest && (floe_rest_properties_any(&cfg->rest) || cfg->catalog_warehouse))
        return floe_error_set(err, FLOE_EINVALID, "[catalog] settings are a REST catalog's: "
                              "set [server] catalog = http(s)://... or remove them");
    if (!is_loopback(cfg->listen) && cfg->ntokens == 0)
        return floe_error_set(err, FLOE_EINVALID, "listening on %s beyond loopback needs "
                              "[token] sections in the configuration", cfg->listen);
    if (cfg->max_record > cfg->max_decoded)
        return floe_error_set(err, FLOE_EINVALID, "max_record is larger than max_decoded");
    if (cfg->compact_lease_ms < 300 || cfg->compact_lease_ms > 24LL * 3600 * 1000)
        return floe_error_set(err, FLOE_EINVALID, "compact_lease_ms (%lld): 300 ms .. 24 h",
                              (long long)cfg->compact_lease_ms);
    if (cfg->max_inflight_bytes < cfg->max_body)
        return floe_error_set(err, FLOE_EINVALID, "max_inflight_bytes (%lld) is smaller than "
                              "max_body (%lld): no request that large could be taken",
                              (long long)cfg->max_inflight_bytes, (long long)cfg->max_body);
    if (cfg->max_connections > 100000 || cfg->max_connections_per_ip > cfg->max_connections)
        return floe_error_set(err, FLOE_EINVALID, "max_connections: at most 100000, and "
                              "max_connections_per_ip at most max_connections");
    if (cfg->max_request_partitions > (1 << 24))
        return floe_error_set(err, FLOE_EINVALID, "max_request_partitions: at most %d",
                              1 << 24);
    if (cfg->compression_level < -7 || cfg->compression_level > 19)
        return floe_error_set(err, FLOE_EINVALID, "compression_level must be -7..19");
    for (size_t i = 0; i < cfg->ntables; i++) {
        const floe_server_table_config *t = &cfg->tables[i];
        if (t->partition && !t->schema_path)
            return floe_error_set(err, FLOE_EINVALID, "[table %s]: partition needs schema",
                                  t->name);
    }
    for (size_t i = 0; i < cfg->nsources; i++)
        FLOE_FORWARD_IF_ERROR(srv_kafka_check(&cfg->sources[i], err));
    return 0;
}

void floe_server_table_settings(const floe_server_config *cfg, const char *table,
                                floe_server_table_config *out) {
    floe_server_table_config r;
    table_config_init(&r);
    const floe_server_table_config *own = NULL;
    for (size_t i = 0; table && i < cfg->ntables; i++)
        if (!strcmp(cfg->tables[i].name, table))
            own = &cfg->tables[i];
    const floe_server_table_config *d = &cfg->defaults;
#define PICK(f, dflt) r.f = own && own->f >= 0 ? own->f : d->f >= 0 ? d->f : (dflt)
    PICK(mode, FLOE_SCHEMA_STRICT);
    PICK(seal_bytes, 5LL << 20);
    PICK(seal_age_ms, 300000);
    PICK(compact_bytes, 50LL << 20);
    PICK(compact_age_ms, 15LL * 60000);
    PICK(target_file_size, 128LL << 20);
#undef PICK
    r.name = own ? own->name : NULL;
    r.schema_path = own ? own->schema_path : NULL;
    r.partition = own ? own->partition : NULL;
    *out = r;
}

static int dup_opt(char **dst, const char *src) {
    *dst = NULL;
    if (!src)
        return 0;
    *dst = floe_strdup(src);
    return *dst ? 0 : FLOE_ENOMEM;
}

static int table_config_copy(const floe_server_table_config *src, floe_server_table_config *dst) {
    *dst = *src;
    dst->name = dst->schema_path = dst->partition = NULL;
    if (dup_opt(&dst->name, src->name) < 0 || dup_opt(&dst->schema_path, src->schema_path) < 0 ||
        dup_opt(&dst->partition, src->partition) < 0)
        return FLOE_ENOMEM;
    return 0;
}

int srv_config_copy(const floe_server_config *src, floe_server_config *dst, floe_error *err) {
    floe_server_config_init(dst);
    floe_server_config c = *src;
    c.listen = c.warehouse = c.catalog = c.state_db = c.node_id = c.wal_dir = c.maint_config = c.maint_run_log =
        c.staging_dir = NULL;
    memset(&c.s3, 0, sizeof c.s3);
    memset(&c.rest, 0, sizeof c.rest);
    c.catalog_warehouse = NULL;
    c.tables = NULL;
    c.tokens = NULL;
    c.sources = NULL;
    c.ntables = c.ntokens = c.nsources = 0;
    table_config_init(&c.defaults);
    *dst = c;
    if (dup_opt(&dst->listen, src->listen) < 0 || dup_opt(&dst->warehouse, src->warehouse) < 0 ||
        dup_opt(&dst->catalog, src->catalog) < 0 || dup_opt(&dst->state_db, src->state_db) < 0 ||
        dup_opt(&dst->catalog_warehouse, src->catalog_warehouse) < 0 ||
        floe_rest_properties_copy(&src->rest, &dst->rest, NULL) < 0 ||
        dup_opt(&dst->node_id, src->node_id) < 0 ||
        dup_opt(&dst->wal_dir, src->wal_dir) < 0 ||
        dup_opt(&dst->maint_config, src->maint_config) < 0 ||
        dup_opt(&dst->maint_run_log, src->maint_run_log) < 0 ||
        dup_opt(&dst->staging_dir, src->staging_dir) < 0 ||
        dup_opt(&dst->s3.endpoint, src->s3.endpoint) < 0 ||
        dup_opt(&dst->s3.region, src->s3.region) < 0 ||
        dup_opt(&dst->s3.access_key_id, src->s3.access_key_id) < 0 ||
        dup_opt(&dst->s3.secret_access_key, src->s3.secret_access_key) < 0 ||
        dup_opt(&dst->s3.session_token, src->s3.session_token) < 0 ||
        dup_opt(&dst->s3.force_virtual_addressing, src->s3.force_virtual_addressing) < 0 ||
        table_config_copy(&src->defaults, &dst->defaults) < 0)
        goto nomem;
    if (src->ntables) {
        dst->tables = floe_calloc(src->ntables, sizeof *dst->tables);
        if (!dst->tables)
            goto nomem;
        for (size_t i = 0; i < src->ntables; i++) {
            dst->ntables++;
            if (table_config_copy(&src->tables[i], &dst->tables[i]) < 0)
                goto nomem;
        }
    }
    if (src->ntokens) {
        dst->tokens = floe_calloc(src->ntokens, sizeof *dst->tokens);
        if (!dst->tokens)
            goto nomem;
        for (size_t i = 0; i < src->ntokens; i++) {
            floe_server_token *t = &dst->tokens[i];
            dst->ntokens++;
            if (dup_opt(&t->name, src->tokens[i].name) < 0 ||
                dup_opt(&t->secret, src->tokens[i].secret) < 0)
                goto nomem;
            if (src->tokens[i].ngrants) {
                t->grants = floe_calloc(src->tokens[i].ngrants, sizeof *t->grants);
                if (!t->grants)
                    goto nomem;
                for (size_t g = 0; g < src->tokens[i].ngrants; g++) {
                    t->ngrants++;
                    if (dup_opt(&t->grants[g], src->tokens[i].grants[g]) < 0)
                        goto nomem;
                }
            }
        }
    }
    if (src->nsources) {
        dst->sources = floe_calloc(src->nsources, sizeof *dst->sources);
        if (!dst->sources)
            goto nomem;
        for (size_t i = 0; i < src->nsources; i++) {
            dst->nsources++;
            if (source_copy(&src->sources[i], &dst->sources[i]) < 0)
                goto nomem;
        }
    }
    return 0;
nomem:
    floe_server_config_reset(dst);
    return floe_error_set(err, FLOE_ENOMEM, "out of memory");
}
