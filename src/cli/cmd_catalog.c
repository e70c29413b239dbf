/*
 * cmd_catalog.c - `floe catalog`: show the resolved catalog configuration, find the current
 * metadata of a table folder, serve the catalog over Iceberg REST. Namespaces and tables
 * are floe namespace's and floe table's (cmd_table.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "table_args.h"
#include "floe/catalog.h"
#include "floe/rest_server.h"
#include "floe/server.h"
#include "floe/table.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe catalog [--catalog NAME] [--config FILE] [--json] ACTION [ARGS]\n"
            "\n"
            "actions:\n"
            "  show                         the resolved catalog configuration\n"
            "  locate PATH                  current metadata file of a table folder\n"
            "  serve [--listen HOST:PORT] [--port-file FILE] [--tokens FILE] [--vend FILE]\n"
            "        [--max-inflight-bytes N] [--max-wait D] [--max-answer-bytes N]\n"
            "        [--max-metadata-bytes N] [--shutdown-grace D]\n"
            "                               serve the catalog as an Iceberg REST catalog\n"
            "                               (default 127.0.0.1:8181; port 0 picks a free\n"
            "                               port, written to FILE). --tokens: bearer tokens\n"
            "                               with grants, the [token NAME] sections of a floe\n"
            "                               serve configuration file; without them, loopback\n"
            "                               only. --vend: S3 keys vended to clients per table\n"
            "                               prefix, [vend NAME] sections (docs/REST.md).\n"
            "                               --max-inflight-bytes N: request bodies held at\n"
            "                               once (default 64MiB; past it 503 + Retry-After)\n"
            "                               --max-wait D: how long a request waits for one\n"
            "                               of the 8 catalog handles (default 10s, bare\n"
            "                               number: seconds; then 503 + Retry-After)\n"
            "                               --max-answer-bytes N: answers over 64KiB held at\n"
            "                               once for clients still reading them (default\n"
            "                               256MiB; past it 503 + Retry-After)\n"
            "                               --max-metadata-bytes N: the largest table\n"
            "                               metadata a commit may write (default 16MiB;\n"
            "                               past it 400, unless the table shrinks)\n"
            "                               --shutdown-grace D: on SIGTERM or SIGINT, new\n"
            "                               connections are refused and requests begun get\n"
            "                               up to D to finish (default 10s; bare number:\n"
            "                               seconds; 0: none); then the rest are cut off\n"
            "\n"
            "Namespaces and tables: floe namespace list|create|drop|properties, floe table\n"
            "list|describe|drop|... (NS.NAME).\n"
            "\n"
            "The catalog comes from FLOE_CATALOG_URI / FLOE_WAREHOUSE, floe.conf\n"
            "([catalog.NAME] type/uri/warehouse), .pyiceberg.yaml, or ./warehouse with\n"
            "./warehouse/catalog.db.\n");
}

static int catalog_serve_run(const floe_catalog_config *cfg, const floe_rest_server_config *rcp,
                             const char *port_file, int64_t grace_ms);

/* The tokens file holds bearer secrets: like ssh with a private key, refuse one that
 * group or others may read or write, and an empty one (FLOE_EINVALID naming the file). */
static int tokens_file_check(const char *path, floe_error *err) {
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* the load says why it cannot be read */
    if (st.st_mode & 077)
        return floe_error_set(err, FLOE_EINVALID,
                              "%s: mode 0%03o lets group or others %s the token secrets; "
                              "make it the owner's alone: chmod 600 %s", path,
                              (unsigned)(st.st_mode & 0777),
                              st.st_mode & 044 ? "read" : "change", path);
    if (S_ISREG(st.st_mode) && st.st_size == 0)
        return floe_error_set(err, FLOE_EINVALID, "%s: empty: no [token NAME] section "
                              "(secret = ..., grants = ...; README, floe serve)", path);
    return 0;
}

/* `floe catalog serve`: run the REST catalog until SIGINT or SIGTERM. */
static int catalog_serve(const floe_catalog_config *cfg, int nargs, char **args) {
    floe_rest_server_config rc = {.catalog = cfg};
    const char *port_file = NULL, *tokens_file = NULL, *vend_file = NULL;
    int64_t grace_ms = 10000;
    for (int k = 0; k < nargs; k++) {
        if (!strcmp(args[k], "--listen") && k + 1 < nargs)
            rc.listen = args[++k];
        else if (!strcmp(args[k], "--port-file") && k + 1 < nargs)
            port_file = args[++k];
        else if (!strcmp(args[k], "--tokens") && k + 1 < nargs)
            tokens_file = args[++k];
        else if (!strcmp(args[k], "--vend") && k + 1 < nargs)
            vend_file = args[++k];
        else if (!strcmp(args[k], "--max-inflight-bytes") && k + 1 < nargs) {
            if (!floe_parse_size(args[++k], &rc.max_inflight_bytes) ||
                rc.max_inflight_bytes < 1024)
                return cli_usage("catalog", "serve: --max-inflight-bytes wants a size of 1KiB "
                                 "or more (64MiB, 1048576), not '%s'", args[k]);
        } else if (!strcmp(args[k], "--max-wait") && k + 1 < nargs) {
            if (!floe_parse_duration(args[++k], 1000, &rc.max_wait_ms) || rc.max_wait_ms < 1 ||
                rc.max_wait_ms > 3600 * 1000)
                return cli_usage("catalog", "serve: --max-wait wants a duration from 1ms to 1h "
                                 "(10s, 500ms; a bare number is seconds), not '%s'", args[k]);
        } else if (!strcmp(args[k], "--max-answer-bytes") && k + 1 < nargs) {
            if (!floe_parse_size(args[++k], &rc.max_answer_bytes) || rc.max_answer_bytes < 1024)
                return cli_usage("catalog", "serve: --max-answer-bytes wants a size of 1KiB "
                                 "or more (256MiB), not '%s'", args[k]);
        } else if (!strcmp(args[k], "--max-metadata-bytes") && k + 1 < nargs) {
            int64_t v = 0;
            if (!floe_parse_size(args[++k], &v) || v < 1024 || (uint64_t)v > SIZE_MAX / 2)
                return cli_usage("catalog", "serve: --max-metadata-bytes wants a size of 1KiB "
                                 "or more (16MiB, 1048576), not '%s'", args[k]);
            rc.max_metadata_bytes = (size_t)v;
        } else if (!strcmp(args[k], "--shutdown-grace") && k + 1 < nargs) {
            if (!floe_parse_duration(args[++k], 1000, &grace_ms) || grace_ms > 3600 * 1000)
                return cli_usage("catalog", "serve: --shutdown-grace wants a duration up to 1h "
                                 "(10s, 500ms, 0; a bare number is seconds), not '%s'", args[k]);
        } else
            return cli_usage("catalog", "serve: unknown argument %s", args[k]);
    }
    /* tests only: FLOE_TEST_REST_FAULT=MODE[:N] fails the first N commit requests (crash:
     * keyed requests; hold: requests taking a catalog handle keep it a while) */
    const char *fault = getenv("FLOE_TEST_REST_FAULT");
    if (fault && *fault) {
        static const char *const modes[] = {"commit-500", "commit-drop", "lost-500", "lost-drop",
                                            "crash", "hold"};
        size_t ml = strcspn(fault, ":");
        for (int m = 0; m < 6; m++)
            if (strlen(modes[m]) == ml && !strncmp(fault, modes[m], ml))
                rc.fault = (floe_rest_fault)(FLOE_REST_FAULT_COMMIT_500 + m);
        char *end = NULL;
        long n = fault[ml] == ':' ? strtol(fault + ml + 1, &end, 10) : 1;
        if (!rc.fault || n < 1 || n > 1000000 || (end && *end))
            return cli_usage("catalog", "serve: FLOE_TEST_REST_FAULT must be "
                             "commit-500|commit-drop|lost-500|lost-drop|crash|hold[:N], not '%s'",
                             fault);
        rc.fault_count = (int)n;
        fprintf(stderr, "floe catalog serve: test fault %s on the first %ld %s request(s)\n",
                modes[rc.fault - FLOE_REST_FAULT_COMMIT_500], n,
                rc.fault == FLOE_REST_FAULT_CRASH  ? "keyed"
                : rc.fault == FLOE_REST_FAULT_HOLD ? "handle-taking"
                                                   : "commit");
    }
    floe_error err;
    floe_error_clear(&err);
    /* the [token NAME] sections of a floe serve configuration file */
    floe_server_config scfg;
    floe_server_config_init(&scfg);
    if (tokens_file) {
        /* a file the server would misread is refused before it listens (exit 2) */
        int lrc = tokens_file_check(tokens_file, &err);
        if (lrc == 0)
            lrc = floe_server_config_load(&scfg, tokens_file, &err);
        if (lrc == 0 && scfg.ntokens == 0)
            lrc = floe_error_set(&err, FLOE_EINVALID, "%s: no [token NAME] section (secret = "
                                 "..., grants = ...; README, floe serve)", tokens_file);
        if (lrc < 0) {
            floe_server_config_reset(&scfg);
            return lrc == FLOE_EINVALID ? cli_usage("catalog", "serve: --tokens %s", err.msg)
                                        : cli_fail(&err);
        }
        rc.tokens = scfg.tokens;
        rc.ntokens = scfg.ntokens;
    }
    /* the [vend NAME] sections: S3 keys handed to clients per table prefix */
    floe_rest_vend *vend = NULL;
    size_t nvend = 0;
    if (vend_file && floe_rest_vend_load(vend_file, &vend, &nvend, &err) < 0) {
        floe_server_config_reset(&scfg);
        return cli_fail(&err);
    }
    rc.vend = vend;
    rc.nvend = nvend;
    int code = catalog_serve_run(cfg, &rc, port_file, grace_ms);
    floe_rest_vend_free(vend, nvend);
    floe_server_config_reset(&scfg);
    return code;
}

static int catalog_serve_run(const floe_catalog_config *cfg, const floe_rest_server_config *rcp,
                             const char *port_file, int64_t grace_ms) {
    floe_rest_server_config rc = *rcp;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by the server's threads */
    signal(SIGPIPE, SIG_IGN);
    floe_error err;
    floe_error_clear(&err);
    floe_rest_server *s = NULL;
    if (floe_rest_server_start(&rc, &s, &err) < 0)
        return cli_fail(&err);
    unsigned port = floe_rest_server_port(s);
    fprintf(stderr, "floe catalog serve: catalog %s (warehouse %s) at http://127.0.0.1:%u/v1\n",
            cfg->name, cfg->warehouse ? cfg->warehouse : "-", port);
    if (port_file) {
        FILE *f = fopen(port_file, "w");
        if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0) {
            floe_rest_server_stop(s);
            fprintf(stderr, "floe: cannot write %s\n", port_file);
            return FLOE_EXIT_FAIL;
        }
    }
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    /* graceful: no new connections; the requests begun get grace_ms to be answered (a
     * commit whose body is still arriving runs and is answered), a second signal ends the
     * wait */
    fprintf(stderr, "floe catalog serve: stopping (signal %d): new connections refused, "
            "requests in flight get %lld ms (--shutdown-grace)\n", sig, (long long)grace_ms);
    int64_t until_ns = floe_now_ns() + grace_ms * 1000000;
    for (;;) {
        int64_t left_ms = (until_ns - floe_now_ns()) / 1000000;
        int64_t running = floe_rest_server_drain(s, left_ms < 0 ? 0 : left_ms < 100 ? left_ms : 100);
        if (running == 0)
            break;
        if (left_ms <= 100) {
            fprintf(stderr, "floe catalog serve: %lld request(s) still running after the "
                    "%lld ms grace: their connections are closed\n", (long long)running,
                    (long long)grace_ms);
            break;
        }
        const struct timespec now = {0, 0};
        if (sigtimedwait(&set, NULL, &now) > 0) {
            fprintf(stderr, "floe catalog serve: second signal: %lld request(s) still running "
                    "are cut off\n", (long long)running);
            break;
        }
    }
    floe_rest_server_stop(s);
    return FLOE_EXIT_OK;
}

int floe_cmd_catalog(int argc, char **argv) {
    const char *name = NULL, *config = NULL;
    bool json = false;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--catalog") && i + 1 < argc) {
            name = argv[++i];
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (argv[i][0] == '-') {
            return cli_usage("catalog", "unknown option %s", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc)
        return cli_usage("catalog", "no action given");
    const char *action = argv[i++];
    /* --json, --config and --catalog may also follow the action */
    int nargs = 0;
    char **args = argv + i;
    for (int k = i; k < argc; k++) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) { /* catalog serve --help */
            usage(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(argv[k], "--json")) {
            json = true;
        } else if (!strcmp(argv[k], "--config") && k + 1 < argc) {
            config = argv[++k];
        } else if (!strcmp(argv[k], "--catalog") && k + 1 < argc) {
            name = argv[++k];
        } else {
            args[nargs++] = argv[k];
        }
    }
    /* the actions that were namespaces' and tables' before those commands had them */
    static const struct {
        const char *old, *now;
    } moved[] = {{"namespaces", "floe namespace list [PARENT]"},
                 {"create-namespace", "floe namespace create NS [K=V...]"},
                 {"drop-namespace", "floe namespace drop NS"},
                 {"tables", "floe table list NS"},
                 {"table", "floe table describe NS.NAME"},
                 {"drop-table", "floe table drop NS.NAME"}};
    for (size_t k = 0; k < sizeof moved / sizeof moved[0]; k++)
        if (!strcmp(action, moved[k].old))
            return cli_usage("catalog", "%s is now %s", action, moved[k].now);
    floe_error err;
    floe_error_clear(&err);

    if (!strcmp(action, "locate")) {
        if (nargs != 1)
            return cli_usage("catalog", "locate takes one PATH");
        char *uri = NULL;
        if (floe_table_locate_metadata(cli_io(), args[0], &uri, &err) < 0)
            return cli_fail(&err);
        if (json) {
            printf("{\"metadata_location\":");
            cli_json_str(stdout, uri);
            printf("}\n");
        } else {
            printf("%s\n", uri);
        }
        floe_free(uri);
        return FLOE_EXIT_OK;
    }

    floe_catalog_config cfg = {0};
    if (cli_catalog_config_load(name, config, &cfg, &err) < 0)
        return cli_fail(&err);
    if (!strcmp(action, "serve")) {
        /* tests only: FLOE_TEST_FS_COMMIT_PAUSE_MS=N (1..10000) holds each commit on a
         * filesystem catalog N ms between its look at the current version and its create
         * of the next (tests/integration/rest_purge_race.sh) */
        const char *pause = getenv("FLOE_TEST_FS_COMMIT_PAUSE_MS");
        if (pause && *pause) {
            char *end = NULL;
            long ms = strtol(pause, &end, 10);
            if (*end || ms < 0 || ms > 10000) {
                floe_catalog_config_reset(&cfg);
                return cli_usage("catalog", "serve: FLOE_TEST_FS_COMMIT_PAUSE_MS must be 0 to "
                                 "10000 (ms), not '%s'", pause);
            }
            cfg.test_commit_pause_ms = (int)ms;
        }
        int code = catalog_serve(&cfg, nargs, args);
        floe_catalog_config_reset(&cfg);
        return code;
    }
    if (!strcmp(action, "show")) {
        /* a SQLite database named by a relative path moves with the current folder: say
         * where it is (SQLAlchemy's form: sqlite:///rel.db, sqlite:////abs.db) */
        char db[4096] = "";
        bool sqlite = cfg.uri && !strcmp(cfg.type, "sql") && strncmp(cfg.uri, "postgres", 8);
        if (sqlite) {
            const char *p = !strncmp(cfg.uri, "sqlite:///", 10) ? cfg.uri + 10 : cfg.uri;
            char cwd[2048];
            if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
                snprintf(db, sizeof db, "%s", p);
            else
                snprintf(db, sizeof db, "%s/%s", cwd, p);
        }
        if (json) {
            printf("{\"name\":");
            cli_json_str(stdout, cfg.name);
            printf(",\"type\":");
            cli_json_str(stdout, cfg.type);
            printf(",\"uri\":");
            cli_json_str(stdout, cfg.uri ? cfg.uri : "");
            printf(",\"warehouse\":");
            cli_json_str(stdout, cfg.warehouse ? cfg.warehouse : "");
            printf(",\"source\":");
            cli_json_str(stdout, cfg.source);
            if (sqlite) {
                printf(",\"database\":");
                cli_json_str(stdout, db);
            }
            printf("}\n");
        } else {
            printf("name:      %s\ntype:      %s\nuri:       %s\nwarehouse: %s\nfrom:      %s\n",
                   cfg.name, cfg.type, cfg.uri ? cfg.uri : "-",
                   cfg.warehouse ? cfg.warehouse : "- (from the REST catalog)", cfg.source);
            if (sqlite)
                printf("database:  %s\n", db);
        }
        floe_catalog_config_reset(&cfg);
        return FLOE_EXIT_OK;
    }
    floe_catalog_config_reset(&cfg);
    return cli_usage("catalog", "unknown action %s", action);
}
