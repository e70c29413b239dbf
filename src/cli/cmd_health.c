/*
 * cmd_health.c - `floe health`: how fragmented a table is and what it costs, as text,
 * JSON or a self-contained HTML report (floe/health.h does the work).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "floe/catalog.h"
#include "floe/health.h"
#include "floe/io.h"
#include "floe/table.h"

static const char usage_text[] =
    "usage: floe health TABLE [OPTIONS]\n"
    "\n"
    "Measure how fragmented an Iceberg table is and what that costs: data and delete files\n"
    "per table and partition (size histogram, files under the rewrite minimum), metadata\n"
    "(manifests, manifest lists, metadata file, snapshots), object-store requests to plan\n"
    "and scan, their monthly price, measured planning time, and recommendations with the\n"
    "floe command for each, and the churn of the last hour (write amplification; storage\n"
    "amplification: bytes on disk in the table's folders over the live bytes in them, files\n"
    "appended from elsewhere shown apart). Reads metadata only, and lists the table\n"
    "location once (and write.metadata.path / write.data.path when outside it).\n"
    "\n"
    "TABLE is a catalog name (ns.table) or a table folder / metadata file.\n"
    "\n"
    "options:\n"
    "      --json                 print the report as JSON\n"
    "      --html FILE            also write a self-contained HTML report to FILE (its\n"
    "                             folder must exist; a link's target, a FIFO or a\n"
    "                             device such as /dev/stdout is written into)\n"
    "      --snapshot ID          analyze this snapshot instead of the current one\n"
    "      --compare ID           show the figures at snapshot ID beside the current ones\n"
    "      --queries-per-day N    full-table scans per day for the monthly figures (100)\n"
    "      --price-get X          USD per 1000 GET requests (0.0004, S3 Standard)\n"
    "      --price-list Y         USD per 1000 LIST requests (0.005)\n"
    "      --price-put Z          USD per 1000 PUT requests (0.005)\n"
    "      --runs N               planning runs per timing, median reported (5; 0 = skip)\n"
    "      --window D             churn window: write amplification of compaction over\n"
    "                             the snapshots of the last D (1h)\n"
    "      --no-listing           do not list the table location (bytes on disk versus\n"
    "                             live: 1 LIST request per 1000 objects)\n"
    "      --catalog NAME         catalog to load TABLE from (default: the configured one)\n"
    "      --config FILE          floe config file (default: FLOE_CONFIG or ./floe.conf)\n"
    "  -h, --help                 this help\n"
    "\n"
    "Request model: plan = 1 GET metadata + 1 GET manifest list + 1 GET per manifest;\n"
    "scan = per file 1 GET footer + 1 GET per row group.\n";

static bool parse_double(const char *s, double *out) {
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v >= 0) || v > 1e15)
        return false;
    *out = v;
    return true;
}

/* --html FILE on local disk must go into a folder that exists: a typo in a folder name
 * fails at once, naming the folder, instead of after the analysis (or creating folders
 * nobody asked for). Object-store keys have no folders. */
static int check_html_folder(const char *path, floe_error *err) {
    char *local = floe_io_local_path(path);
    if (!local)
        return 0;
    int rc = 0;
    char *slash = strrchr(local, '/');
    if (slash && slash != local) {
        *slash = 0;
        struct stat st;
        if (stat(local, &st) != 0)
            rc = floe_error_set(err, FLOE_ENOTFOUND, "health: --html %s: folder %s does not "
                                "exist (create it first)", path, local);
        else if (!S_ISDIR(st.st_mode))
            rc = floe_error_set(err, FLOE_EINVALID, "health: --html %s: %s is not a folder",
                                path, local);
    }
    floe_free(local);
    return rc;
}

/* Write the HTML report to path. A local path that exists and is not a regular file (a
 * device, a FIFO, /dev/stdout) is written in place: the atomic write would rename a new
 * file over it (as root, over the device node itself). A symbolic link is followed, so
 * the file it names gets the report and the link stays. Anything else: an atomic write. */
static int write_html(const char *path, const floe_buf *b, floe_error *err) {
    char *local = floe_io_local_path(path);
    struct stat st;
    int rc = 0;
    if (local && stat(local, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = floe_error_set(err, FLOE_EINVALID, "health: --html %s is a folder", path);
    } else if (local && stat(local, &st) == 0 && !S_ISREG(st.st_mode)) {
        FILE *f = fopen(local, "w");
        bool ok = f && fwrite(b->data, 1, b->len, f) == b->len;
        if ((f && fclose(f) != 0) || !ok)
            rc = floe_error_sys(err, FLOE_EIO, errno, "health: --html %s", path);
    } else {
        char *real = local ? realpath(local, NULL) : NULL; /* a link's target */
        rc = floe_io_write_all(cli_io(), real ? real : path, b->data, b->len, NULL, err);
        free(real); /* realpath's allocation */
    }
    floe_free(local);
    return rc;
}

/* A path when it exists on disk (or names a remote object store); else ns.table. */
static int open_table(const char *ref, const char *catalog_name, const char *config,
                      floe_catalog **cat, floe_table **t, floe_error *err) {
    struct stat st;
    floe_table_open_options oo = {.io = cli_io()};
    if (stat(ref, &st) == 0 || strstr(ref, "://"))
        return floe_table_open_path(ref, &oo, t, err);
    const char *dot = strrchr(ref, '.');
    if (!dot || dot == ref || !dot[1])
        return floe_error_set(err, FLOE_EINVALID,
                              "health: %s is neither a table folder nor a name ns.table", ref);
    char *ns = floe_strndup(ref, (size_t)(dot - ref));
    if (!ns)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_catalog_config cfg = {0};
    int rc = cli_catalog_config_load(catalog_name, config, &cfg, err);
    if (rc == 0)
        rc = floe_catalog_open(&cfg, cat, err);
    if (rc == 0)
        rc = floe_table_load(*cat, ns, dot + 1, t, err);
    floe_catalog_config_reset(&cfg);
    floe_free(ns);
    return rc;
}

int floe_cmd_health(int argc, char **argv) {
    enum { O_JSON = 256, O_HTML, O_SNAP, O_CMP, O_QPD, O_PGET, O_PLIST, O_PPUT, O_RUNS,
           O_CATALOG, O_CONFIG, O_WINDOW, O_NOLIST };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, O_JSON},
        {"html", required_argument, NULL, O_HTML},
        {"snapshot", required_argument, NULL, O_SNAP},
        {"compare", required_argument, NULL, O_CMP},
        {"queries-per-day", required_argument, NULL, O_QPD},
        {"price-get", required_argument, NULL, O_PGET},
        {"price-list", required_argument, NULL, O_PLIST},
        {"price-put", required_argument, NULL, O_PPUT},
        {"runs", required_argument, NULL, O_RUNS},
        {"window", required_argument, NULL, O_WINDOW},
        {"no-listing", no_argument, NULL, O_NOLIST},
        {"catalog", required_argument, NULL, O_CATALOG},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    floe_health_options o;
    floe_health_options_init(&o);
    bool json = false;
    const char *html_path = NULL, *catalog_name = NULL, *config = NULL;
    optind = 1;
    opterr = 0; /* one line, ours */
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int64_t n;
        switch (opt) {
        case O_JSON: json = true; break;
        case O_HTML:
            if (!*optarg)
                return cli_usage("health", "--html wants a file name");
            html_path = optarg;
            break;
        case O_SNAP:
            if (!cli_parse_id(optarg, &o.snapshot_id))
                return cli_usage("health", "--snapshot takes a snapshot id, not %s", optarg);
            o.has_snapshot_id = true;
            break;
        case O_CMP:
            if (!cli_parse_id(optarg, &o.compare_id))
                return cli_usage("health", "--compare takes a snapshot id, not %s", optarg);
            o.has_compare_id = true;
            break;
        case O_QPD:
            if (!parse_double(optarg, &o.queries_per_day))
                return cli_usage("health", "--queries-per-day takes a number >= 0, not %s", optarg);
            break;
        case O_PGET:
            if (!parse_double(optarg, &o.price_get))
                return cli_usage("health", "--price-get takes a price >= 0, not %s", optarg);
            break;
        case O_PLIST:
            if (!parse_double(optarg, &o.price_list))
                return cli_usage("health", "--price-list takes a price >= 0, not %s", optarg);
            break;
        case O_PPUT:
            if (!parse_double(optarg, &o.price_put))
                return cli_usage("health", "--price-put takes a price >= 0, not %s", optarg);
            break;
        case O_RUNS:
            if (!cli_parse_int(optarg, &n) || n > 1000)
                return cli_usage("health", "--runs takes 0..1000, not %s", optarg);
            o.timing_runs = (int)n;
            break;
        case O_WINDOW:
            if (!floe_parse_duration(optarg, 1, &o.window_ms) || o.window_ms <= 0)
                return cli_usage("health", "--window takes a duration (1h, 30m), not %s", optarg);
            break;
        case O_NOLIST: o.no_listing = true; break;
        case O_CATALOG: catalog_name = optarg; break;
        case O_CONFIG: config = optarg; break;
        case 'h': fputs(usage_text, stdout); return FLOE_EXIT_OK;
        case ':': return cli_usage("health", "%s needs a value", argv[optind - 1]);
        default: return cli_usage("health", "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return cli_usage("health", "expected one TABLE (ns.table or a table folder)");
    const char *ref = argv[optind];
    o.table_ref = ref;

    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_health_report *r = NULL;
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = html_path ? check_html_folder(html_path, &err) : 0;
    if (rc == 0)
        rc = open_table(ref, catalog_name, config, &cat, &t, &err);
    if (rc == 0)
        rc = floe_health_analyze(t, &o, &r, &err);
    if (rc == 0 && html_path) {
        rc = floe_health_report_html(r, &b, &err);
        if (rc == 0)
            rc = write_html(html_path, &b, &err);
        floe_buf_reset(&b);
    }
    if (rc == 0)
        rc = json ? floe_health_report_json(r, &b, &err) : floe_health_report_text(r, &b, &err);
    if (rc == 0) {
        fwrite(b.data, 1, b.len, stdout);
        if (html_path && !json)
            printf("\nHTML report: %s\n", html_path);
    }
    floe_buf_free(&b);
    floe_health_report_free(r);
    floe_table_close(t);
    floe_catalog_close(cat);
    if (rc < 0)
        return cli_fail(&err);
    return fflush(stdout) == 0 ? FLOE_EXIT_OK : FLOE_EXIT_FAIL;
}
