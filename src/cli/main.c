/*
 * main.c - the floe command: subcommand dispatch, help and version.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "floe/manifest.h"
#include "floe/mapguard.h"
#include "floe/rewrite.h"
#include "floe/server.h"
#include "table_args.h"

/* floe version [--json] (also floe --version) */
static int cmd_version(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: floe version [--json]\n"
                   "       floe --version\n"
                   "\n"
                   "prints floe's version (--json: {\"version\": \"...\"})\n");
            return FLOE_EXIT_OK;
        }
        if (strcmp(argv[i], "--json"))
            return cli_usage("version", "%s %s", argv[i][0] == '-' ? "unknown option" : "unexpected",
                             argv[i]);
        json = true;
    }
    if (json) {
        fputs("{\"version\":", stdout);
        cli_json_str(stdout, FLOE_VERSION_STRING);
        fputs("}\n", stdout);
    } else {
        printf("floe %s\n", FLOE_VERSION_STRING);
    }
    return FLOE_EXIT_OK;
}

static const floe_cmd commands[] = {
    /* one line per subcommand; keep in the order `floe help` should list them */
    {"gen", "write deterministic synthetic events as NDJSON", floe_cmd_gen, false},
    {"convert", "convert NDJSON events to Parquet files checked against a schema", floe_cmd_convert, false},
    {"schema", "infer an Iceberg schema from NDJSON, or show a schema's columns", floe_cmd_schema, false},
    {"inspect", "show a Parquet file's schema, row groups, column chunks and statistics", floe_cmd_inspect, false},
    {"cat", "print a Parquet file's rows as NDJSON or CSV (projection, filter, limit)", floe_cmd_cat, false},
    {"catalog", "show the catalog configuration, locate a table folder's metadata, serve REST", floe_cmd_catalog, false},
    {"serve", "run the HTTP ingestion server: durable acks, landing files, compaction", floe_cmd_serve, true},
    {"work", "run a compaction worker for the landing files of every serve node (leases)", floe_cmd_work, true},
    {"table", "create, list, describe, rename, drop Iceberg tables; set properties, sort order", floe_cmd_table, false},
    {"namespace", "create, list and drop namespaces; show and set their properties", floe_cmd_namespace, false},
    {"append", "append NDJSON (converted) or Parquet files to a table in one snapshot", floe_cmd_append, false},
    {"scan", "read a table's rows (filter, time travel, projection) or show the scan plan", floe_cmd_scan, false},
    {"delete", "delete the rows a filter matches (deletion vectors on v3, position deletes on v2)", floe_cmd_delete, false},
    {"snapshots", "list a table's snapshots; roll back, set the current one, cherry-pick", floe_cmd_snapshots, false},
    {"ref", "list, create, replace, drop and fast-forward a table's branches and tags", floe_cmd_ref, false},
    {"history", "show a table's snapshot log: what each operation did, rollbacks", floe_cmd_history, false},
    {"files", "list a table's live data files", floe_cmd_files, false},
    {"rewrite", "compact a table's data files (Iceberg rewrite_data_files, bin-pack or sort)", floe_cmd_rewrite, true},
    {"health", "measure a table's fragmentation and its cost; text, JSON or an HTML report", floe_cmd_health, false},
    {"expire", "expire snapshots and delete the files only they reached", floe_cmd_expire, false},
    {"orphans", "delete files in a table location that nothing references", floe_cmd_orphans, false},
    {"rewrite-deletes", "resolve equality and position deletes into deletion vectors (v3)", floe_cmd_rewrite_deletes, false},
    {"rewrite-manifests", "regroup a snapshot's manifests by partition into target-size manifests", floe_cmd_rewrite_manifests, false},
    {"maintain", "run table maintenance (expiry, orphans, manifests, landing lifecycle) under leases", floe_cmd_maintain, true},
    {"version", "print the version", cmd_version, false},
};

static void print_help(FILE *out) {
    fprintf(out,
            "floe %s - keeps Iceberg tables fed with big files, not millions of small ones\n"
            "\n"
            "usage: floe COMMAND [OPTIONS]\n"
            "       floe COMMAND --help\n"
            "       floe --version\n"
            "\n"
            "commands:\n",
            FLOE_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-18s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nobject storage, on any command (over the environment, floe.conf and\n"
                 ".pyiceberg.yaml; docs/CONFIG.md):\n"
                 "  --s3-endpoint URL  --s3-region R  --s3-access-key-id K\n"
                 "  --s3-secret-access-key S  --s3-session-token T\n"
                 "  --s3-force-virtual-addressing true|false\n");
    fprintf(out, "\nexit codes: 0 ok, 1 failure, 2 usage error\n");
}

/* Set by main when the command line asks for --json: errors are then also printed on
 * standard output as {"error": {"code", "exit", "message"}}, so a caller parsing the
 * output sees why there is no result. */
static bool json_errors;

/* {"code":..,"exit":..,"message":..}: the body of an error under --json */
static void json_error_body(const char *code, int exit_code, const char *msg) {
    fputs("{\"code\":", stdout);
    cli_json_str(stdout, code);
    printf(",\"exit\":%d,\"message\":", exit_code);
    cli_json_str(stdout, msg);
    fputc('}', stdout);
}

static void json_error(const char *code, int exit_code, const char *msg) {
    if (!json_errors)
        return;
    fputs("{\"error\":", stdout);
    json_error_body(code, exit_code, msg);
    fputs("}\n", stdout);
    fflush(stdout);
}

/* "floe: <msg>" on standard error; the message to report */
static const char *fail_line(const floe_error *err) {
    const char *msg = err->msg[0] ? err->msg : floe_strerror(err->code);
    /* messages quote names and paths from metadata and arguments: one line, no escapes
     * reaching the terminal */
    fputs("floe: ", stderr);
    cli_print_text(stderr, msg);
    fputc('\n', stderr);
    return msg;
}

int cli_fail(const floe_error *err) {
    json_error(floe_errname(err->code), FLOE_EXIT_FAIL, fail_line(err));
    return FLOE_EXIT_FAIL;
}

int cli_fail_in_object(const floe_error *err) {
    const char *msg = fail_line(err);
    if (json_errors) {
        fputs(",\"error\":", stdout);
        json_error_body(floe_errname(err->code), FLOE_EXIT_FAIL, msg);
        fputs("}\n", stdout);
        fflush(stdout);
    }
    return FLOE_EXIT_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "floe %s: ", cmd);
    cli_print_text(stderr, msg);
    fprintf(stderr, " (see 'floe %s --help')\n", cmd);
    json_error("USAGE", FLOE_EXIT_USAGE, msg);
    return FLOE_EXIT_USAGE;
}

bool cli_parse_id(const char *s, int64_t *out) { return floe_parse_i64_cstr(s, out); }

bool cli_parse_int(const char *s, int64_t *out) {
    int64_t v;
    if (!cli_parse_id(s, &v) || v < 0)
        return false;
    *out = v;
    return true;
}

bool cli_parse_threads(const char *s, int max, int *out) {
    int64_t v;
    if (!cli_parse_int(s, &v) || v > max)
        return false;
    if (v == 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        v = ncpu > max ? max : ncpu > 0 ? ncpu : 1;
    }
    *out = (int)v;
    return true;
}

bool cli_parse_page_size(const char *s, size_t *out) {
    int64_t v;
    if (!floe_parse_size(s, &v) || v < 1024 || (uint64_t)v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

const char *cli_fmt_bytes(double bytes, char *buf, size_t n) {
    const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

/* Code points that a terminal draws two columns wide: East Asian Wide and Fullwidth
 * (Unicode UAX #11) in the blocks names use - Hangul, CJK, kana, fullwidth forms - and
 * the emoji blocks. */
static bool is_wide(uint32_t c) {
    static const uint32_t wide[][2] = {
        {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
        {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
        {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F},
        {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (c >= wide[i][0] && c <= wide[i][1])
            return true;
    return false;
}

size_t cli_display_width(const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    size_t w = 0;
    while (*p) {
        /* a lead byte and its continuation bytes are one code point; a stray
         * continuation byte counts as one column, as a terminal shows a replacement */
        uint32_t c = *p++;
        int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        c &= more == 3 ? 0x07 : more == 2 ? 0x0F : more == 1 ? 0x1F : 0xFF;
        for (; more && (*p & 0xC0) == 0x80; more--)
            c = c << 6 | (*p++ & 0x3F);
        w += is_wide(c) ? 2 : 1;
    }
    return w;
}

static bool is_control(uint8_t c) { return c < 0x20 || c == 0x7F; }

bool cli_has_control(const char *s) {
    for (const uint8_t *p = (const uint8_t *)s; *p; p++)
        if (is_control(*p))
            return true;
    return false;
}

void cli_print_text(FILE *f, const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = floe_utf8_seq_len(p + i, n - i);
        if (len == 0 || is_control(p[i])) { /* bytes that are not UTF-8 text too */
            fprintf(f, "\\x%02x", p[i]);
            i++;
            continue;
        }
        fwrite(p + i, 1, len, f);
        i += len;
    }
}

void cli_print_kv_text(const char *indent, const char *key, const char *value) {
    fputs(indent, stdout);
    cli_print_text(stdout, key);
    fputs(" = ", stdout);
    cli_print_text(stdout, value ? value : "");
    fputc('\n', stdout);
}

size_t cli_text_width(const char *s) {
    size_t w = cli_display_width(s);
    for (const uint8_t *p = (const uint8_t *)s; *p; p++)
        w += is_control(*p) ? 3 : 0; /* \xHH in place of one column */
    return w;
}

void cli_print_padded(FILE *f, const char *s, size_t width) {
    cli_print_text(f, s);
    for (size_t w = cli_text_width(s); w < width; w++)
        fputc(' ', f);
}

static floe_io *io_ctx;

floe_io *cli_io(void) { return io_ctx; }

static floe_sql_options sql_opts;

const char *cli_getenv(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

/* A positive integer setting of the environment; 0 when unset or not one. */
static int64_t env_ms(const char *name) {
    const char *v = getenv(name);
    int64_t n = 0;
    return v && floe_parse_i64(v, strlen(v), &n) && n > 0 ? n : 0;
}

const floe_sql_options *cli_sql_options(void) { return &sql_opts; }

int cli_catalog_config_load(const char *name, const char *config_path,
                            floe_catalog_config *out, floe_error *err) {
    int rc = floe_catalog_config_load(name, config_path, cli_getenv, NULL, out, err);
    if (rc == 0) {
        out->io = io_ctx;
        out->sql = sql_opts;
    }
    return rc;
}

int cli_server_config_env(floe_server_config *cfg, floe_error *err) {
    cfg->io = io_ctx;
    cfg->sql = sql_opts;
    /* out of range: the default, as before these were options */
    int64_t lease = env_ms("FLOE_COMPACT_LEASE_MS");
    if (lease >= 300 && lease <= 24LL * 3600 * 1000)
        cfg->compact_lease_ms = lease;
    /* tests only: FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=N (1..60000) holds each Kafka commit N ms
     * after its conversion, so a test can act while a batch commits (kafka_pipeline.sh) */
    int64_t pause = env_ms("FLOE_TEST_KAFKA_COMMIT_PAUSE_MS");
    if (pause > 0 && pause <= 60000)
        cfg->kafka_test_commit_pause_ms = pause;
    /* tests only: FLOE_TEST_KAFKA_STAGED_AGE_MS=N (100..600000) makes a Kafka interval
     * holding staged segments due after N ms and dropped when its commit still fails after
     * 3N (kafka_staged_age.sh; 15 and 45 min otherwise) */
    int64_t staged = env_ms("FLOE_TEST_KAFKA_STAGED_AGE_MS");
    if (staged >= 100 && staged <= 600000)
        cfg->kafka_test_staged_age_ms = staged;
    /* tests only: FLOE_TEST_KAFKA_AHEAD_BYTES=N (1..1048576) starts a Kafka batch's
     * conversion ahead at N spool bytes and reads it in chunks of N, so that the tests'
     * small batches convert while they are taken (kafka_pipeline.sh, kafka_chaos.sh) */
    int64_t ahead = env_ms("FLOE_TEST_KAFKA_AHEAD_BYTES");
    if (ahead > 0 && ahead <= (1 << 20))
        cfg->kafka_test_ahead_bytes = ahead;
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp && strlen(tmp) < 400 &&
        floe_io_options_set(&cfg->staging_dir, tmp, err) < 0)
        return FLOE_ENOMEM;
    return 0;
}

/* Process-wide settings the library leaves to the program (floe/mapguard.h,
 * floe/rewrite.h): the SIGBUS handler of guarded mappings for every command, and the
 * allocator thresholds of rewrites for the commands that rewrite, unless the operator
 * tuned glibc's malloc through the environment. */
static int process_setup(const floe_cmd *cmd, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(floe_map_guard_install(err));
    /* tests only: FLOE_TEST_LAZYLIB_SONAME=LIB=SONAME[,LIB=SONAME...] loads libcurl,
     * libpq, librdkafka, libmicrohttpd, libsnappy, libcrypto or libicuuc (LIB curl, pq,
     * kafka, mhd, snappy, crypto, icu) from another soname
     * (floe_lazylib_soname_set): a library that is missing */
    const char *lazy = getenv("FLOE_TEST_LAZYLIB_SONAME");
    if (lazy && *lazy) {
        char *list = floe_strdup(lazy), *save = NULL;
        if (!list)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int rc = 0;
        for (char *item = strtok_r(list, ",", &save); item && rc == 0;
             item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            if (!eq) {
                rc = floe_error_set(err, FLOE_EINVALID, "FLOE_TEST_LAZYLIB_SONAME: '%s' is "
                                    "not LIB=SONAME", item);
                break;
            }
            *eq = '\0';
            rc = floe_lazylib_soname_set(item, eq + 1, err);
        }
        floe_free(list);
        FLOE_FORWARD_IF_ERROR(rc);
    }
    if (cmd->rewrites && !cli_malloc_env_tuned())
        floe_rewrite_tune_malloc();
    return 0;
}

bool cli_malloc_env_tuned(void) {
    const char *tun = getenv("GLIBC_TUNABLES");
    return (tun && strstr(tun, "glibc.malloc.")) || getenv("MALLOC_MMAP_THRESHOLD_") ||
           getenv("MALLOC_TRIM_THRESHOLD_") || getenv("MALLOC_ARENA_MAX");
}

/* floe convert runs again, at once, with glibc's malloc told to use transparent huge
 * pages, one arena and a fixed mmap threshold of 4 MiB (GLIBC_TUNABLES=
 * glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=4194304),
 * unless the operator tuned glibc's malloc through the environment (then also after this
 * exec: it happens once) or the kernel has THP off. Why: a conversion fills fresh memory
 * (batches, dictionary tables, page buffers) and on hosts that charge a first touch per
 * 4 KiB page (a paravirtualised guest here: ~15 us of CPU each, against ~0.3 us per 4 KiB
 * of a 2 MiB page) the faults were a tenth of a one-thread conversion's CPU. Worker
 * threads allocate from arenas of their own, which the setting does not cover: with one
 * arena they share the main one (they allocate rarely: buffers are grown and kept).
 * bench/convert shapes, iot: page faults 6,400 -> 2,200 (1 thread), 10,500 -> 2,200 (2
 * threads). The threshold: glibc's own rises to the size of each mmapped block freed (up to
 * 32 MiB), after which a row group's large buffers (page segments, batches: 4-32 MiB) come
 * from the heap, where the holes the last row group left do not fit the next one's: the
 * heap grew by ~40 MiB a row group (iot 2 GB, 17 row groups: peak RSS 387 MiB against
 * 238 with the threshold fixed; faults 9,000 -> 3,200 at 200 MB, CPU unchanged).
 * The tunables are read at start only, so the program is executed again
 * (the file /proc/self/exe names, same arguments and descriptors, same process); if that
 * fails it goes on as it is. Library users choose their own malloc settings. */
static void exec_with_huge_heap(char **argv) {
#if defined(__GLIBC__) && defined(__linux__)
    if (cli_malloc_env_tuned())
        return;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = '\0';
        fclose(f);
    }
    if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
        return;
    const char *old = getenv("GLIBC_TUNABLES");
    char *saved = old ? floe_strdup(old) : NULL;
    char *tun = floe_asprintf("%s%sglibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:"
                              "glibc.malloc.mmap_threshold=4194304",
                              old ? old : "", old && *old ? ":" : "");
    /* by its path, not by /proc/self/exe: the process's name (comm, what ps and top
     * show) is the name executed, and would become "exe" */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0 && (size_t)n < sizeof self - 1) {
        self[n] = '\0';
        if (access(self, X_OK) != 0) /* replaced or deleted since it started */
            snprintf(self, sizeof self, "/proc/self/exe");
    } else {
        snprintf(self, sizeof self, "/proc/self/exe");
    }
    if (tun && (!old || saved) && setenv("GLIBC_TUNABLES", tun, 1) == 0) {
        execv(self, argv);
        /* no /proc, or exec refused: run with the allocator as it is */
        if (saved)
            (void)setenv("GLIBC_TUNABLES", saved, 1);
        else
            (void)unsetenv("GLIBC_TUNABLES");
    }
    floe_free(tun);
    floe_free(saved);
#else
    (void)argv;
#endif
}

/* The S3 settings given on the command line (global flags, taken out of argv). */
static const struct {
    const char *flag;
    size_t off;
} s3_flags[] = {
    {"--s3-endpoint", offsetof(floe_s3_properties, endpoint)},
    {"--s3-region", offsetof(floe_s3_properties, region)},
    {"--s3-access-key-id", offsetof(floe_s3_properties, access_key_id)},
    {"--s3-secret-access-key", offsetof(floe_s3_properties, secret_access_key)},
    {"--s3-session-token", offsetof(floe_s3_properties, session_token)},
    {"--s3-force-virtual-addressing", offsetof(floe_s3_properties, force_virtual_addressing)},
};
static floe_s3_properties s3_cli;

#define S3_FIELD(cfg, off) ((char **)((char *)(cfg) + (off)))

/* Take the --s3-* flags (FLAG VALUE or FLAG=VALUE) out of argv into s3_cli; returns the
 * new argc, -1 with a usage message on a flag without its value. */
static int take_s3_flags(int argc, char **argv, floe_error *err) {
    int out = 2;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            while (i < argc)
                argv[out++] = argv[i++];
            break;
        }
        size_t k = 0, nk = sizeof s3_flags / sizeof s3_flags[0];
        const char *v = NULL;
        for (; k < nk; k++) {
            size_t fl = strlen(s3_flags[k].flag);
            if (!strncmp(argv[i], s3_flags[k].flag, fl) && (argv[i][fl] == '=' || !argv[i][fl])) {
                if (argv[i][fl] == '=')
                    v = argv[i] + fl + 1;
                else if (i + 1 < argc)
                    v = argv[++i];
                else
                    return floe_error_set(err, FLOE_EINVALID, "%s needs a value", s3_flags[k].flag);
                break;
            }
        }
        if (k == nk) {
            argv[out++] = argv[i];
            continue;
        }
        char **field = S3_FIELD(&s3_cli, s3_flags[k].off);
        floe_free(*field);
        if (!(*field = floe_strdup(v)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    argv[out] = NULL;
    return out;
}

/* The value of --NAME VALUE / --NAME=VALUE in the command's arguments, or NULL. */
static const char *arg_value(int argc, char **argv, const char *name) {
    size_t n = strlen(name);
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strncmp(argv[i], name, n)) {
            if (argv[i][n] == '=')
                return argv[i] + n + 1;
            if (!argv[i][n] && i + 1 < argc)
                return argv[i + 1];
        }
    return NULL;
}

/* Read a catalog entry's settings from a config file with parse; absent file or entry: an
 * empty entry. */
static int read_entry(const char *path, const char *name,
                      int (*parse)(const char *, size_t, const char *, floe_catalog_config *,
                                   floe_error *),
                      floe_catalog_config *out, floe_error *err) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *text = floe_malloc((1u << 20) + 1);
    if (!text) {
        fclose(f);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    size_t n = fread(text, 1, (1u << 20) + 1, f);
    fclose(f);
    int rc = parse(text, n, name, out, err);
    floe_free(text);
    if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(err);
        return 0;
    }
    if (rc < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return floe_error_set(err, rc, "%s: %s", path, msg);
    }
    return 0;
}

/* The I/O options of this run, lowest precedence first (docs/CONFIG.md): .pyiceberg.yaml,
 * the floe config file (for floe serve and floe work given --config: that file's [server]
 * section), the environment, the --s3-* flags. The catalog entry read from the files is
 * the one --catalog (else FLOE_CATALOG, else the file's default) names. */
static int io_options(floe_io_options *o, const floe_cmd *cmd, int argc, char **argv,
                      floe_error *err) {
    const char *name = arg_value(argc, argv, "--catalog");
    if (!name || !*name)
        name = getenv("FLOE_CATALOG");
    if (name && !*name)
        name = NULL;
    floe_catalog_config c;
    int rc = 0;
    const char *dirs[3] = {getenv("PYICEBERG_HOME"), getenv("HOME"), "."};
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        char *path = floe_io_join(dirs[i], ".pyiceberg.yaml");
        if (!path)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        rc = read_entry(path, name, floe_catalog_config_from_pyiceberg_yaml, &c, err);
        bool hit = c.name != NULL;
        if (rc == 0)
            rc = floe_io_options_apply_s3(o, &c.s3, path, err);
        floe_catalog_config_reset(&c);
        floe_free(path);
        if (hit)
            break; /* the file the catalog loader would use */
    }
    const char *conf = arg_value(argc, argv, "--config");
    if (!conf || !*conf)
        conf = getenv("FLOE_CONFIG");
    if (!conf || !*conf)
        conf = "floe.conf";
    if ((!strcmp(cmd->name, "serve") || !strcmp(cmd->name, "work")) &&
        arg_value(argc, argv, "--config")) {
        /* floe serve / floe work --config: that file's [server] s3.* keys */
        floe_server_config sc;
        floe_server_config_init(&sc);
        if (rc == 0)
            rc = floe_server_config_load(&sc, conf, err);
        if (rc == 0)
            rc = floe_io_options_apply_s3(o, &sc.s3, conf, err);
        floe_server_config_reset(&sc);
    } else {
        if (rc == 0)
            rc = read_entry(conf, name, floe_catalog_config_from_floe_conf, &c, err);
        if (rc == 0)
            rc = floe_io_options_apply_s3(o, &c.s3, conf, err);
        floe_catalog_config_reset(&c);
    }
    if (rc == 0)
        rc = floe_io_options_from_env(o, cli_getenv, NULL, err);
    if (rc == 0)
        rc = floe_io_options_apply_s3(o, &s3_cli, "command line", err);
    return rc;
}

/* The settings of this run (docs/CONFIG.md): from the environment the log level
 * (FLOE_LOG), the manifest decoder and cap, the database connection options; the I/O
 * context from io_options. */
static int io_setup(const floe_cmd *cmd, int argc, char **argv, floe_error *err) {
    const char *lv = getenv("FLOE_LOG");
    if (lv && !strcmp(lv, "error"))
        floe_log_set_level(FLOE_LOG_ERROR);
    else if (lv && !strcmp(lv, "info"))
        floe_log_set_level(FLOE_LOG_INFO);
    else if (lv && !strcmp(lv, "debug"))
        floe_log_set_level(FLOE_LOG_DEBUG);
    const char *dec = getenv("FLOE_MANIFEST_DECODER");
    if (dec && !strcmp(dec, "generic"))
        floe_manifest_set_generic_decoder(true);
    const char *rr = getenv("FLOE_REWRITE_READER");
    if (rr && !strcmp(rr, "generic"))
        floe_rewrite_set_generic_reader(true);
    sql_opts.busy_timeout_ms = env_ms("FLOE_SQLITE_BUSY_MS");
    sql_opts.settle_ms = env_ms("FLOE_PG_SETTLE_MS");
    const char *mb = getenv("FLOE_MANIFEST_MAX_BYTES");
    if (mb && *mb) {
        int64_t v;
        if (!floe_parse_size(mb, &v) || v < 1024)
            return floe_error_set(err, FLOE_EINVALID, "FLOE_MANIFEST_MAX_BYTES=%s: want a size "
                                  "of at least 1KiB (\"512MiB\", bytes)", mb);
        floe_manifest_set_max_bytes((uint64_t)v);
    }
    floe_io_options o;
    floe_io_options_init(&o);
    int rc = io_options(&o, cmd, argc, argv, err);
    if (rc == 0)
        rc = floe_io_new(&o, &io_ctx, err);
    floe_io_options_free(&o);
    return rc;
}

int main(int argc, char **argv) {
    /* standard error is unbuffered: a message written in pieces (an escaped name, a
     * formatted number) went out as one write per piece, a byte at a time for an
     * escaped text, interleaved with the lines of other threads and processes. Line
     * buffered, each line is one write; the progress line flushes itself. */
    setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
    if (argc < 2) {
        print_help(stderr);
        return FLOE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2) {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(commands[i].name, argv[2])) {
                    char *av[] = {argv[2], "--help", NULL};
                    return commands[i].run(2, av);
                }
            fprintf(stderr, "floe: no such command '%s'\n", argv[2]);
            return FLOE_EXIT_USAGE;
        }
        print_help(stdout);
        return FLOE_EXIT_OK;
    }
    if (!strcmp(name, "--version"))
        name = "version";
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--json"))
            json_errors = true;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) {
            /* the version needs no I/O setup: it answers whatever the environment holds */
            if (commands[i].run == cmd_version)
                return cmd_version(argc - 1, argv + 1);
            if (commands[i].run == floe_cmd_convert)
                exec_with_huge_heap(argv);
            if (commands[i].run == floe_cmd_serve || commands[i].run == floe_cmd_work) {
                sigset_t set; /* before io_setup reads the configuration file */
                cli_serve_block_signals(&set);
            }
            floe_error err;
            floe_error_clear(&err);
            if ((argc = take_s3_flags(argc, argv, &err)) < 0) {
                floe_s3_properties_reset(&s3_cli);
                return cli_usage(name, "%s", err.msg);
            }
            int setup = process_setup(&commands[i], &err) < 0
                            ? -1
                            : io_setup(&commands[i], argc, argv, &err);
            floe_s3_properties_reset(&s3_cli);
            if (setup < 0)
                return cli_fail(&err);
            int rc = commands[i].run(argc - 1, argv + 1);
            floe_io_free(io_ctx);
            io_ctx = NULL;
            return rc;
        }
    fprintf(stderr, "floe: no such command '%s' (see 'floe help')\n", name);
    return FLOE_EXIT_USAGE;
}
