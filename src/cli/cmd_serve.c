/*
 * cmd_serve.c - `floe serve`: run the HTTP ingestion server until SIGTERM / SIGINT.
 *
 * Signals are blocked in every thread and taken synchronously here with sigwait, so the
 * server's threads never run a handler: SIGTERM/SIGINT close the server (flush, finish
 * in-flight work), SIGHUP re-reads the configuration file (tokens, thresholds, maintenance settings).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/server.h"

static void serve_help(FILE *out) {
    fprintf(out,
            "usage: floe serve --config FILE\n"
            "       floe serve [--warehouse DIR] [--listen ADDR] [--node-id ID]\n"
            "       floe serve --example-config\n"
            "\n"
            "Takes JSON events over HTTP and makes them durable before answering; buffers\n"
            "them per partition into landing files and compacts those into Parquet files.\n"
            "\n"
            "  POST /v1/tables/NS.TABLE/events   NDJSON or a JSON array (gzip, zstd)\n"
            "  GET  /healthz, GET /metrics, POST /v1/admin/flush[?compact=1|wait=true]\n"
            "\n"
            "  --config FILE        configuration (see --example-config)\n"
            "  --example-config     print a commented example configuration\n"
            "  --warehouse DIR      warehouse folder (default ./warehouse); without --config\n"
            "                       tables are created on their first post (inferred schema,\n"
            "                       evolve mode, partitioned by day of the first timestamp);\n"
            "                       with --config only if its [server] sets auto_create = true\n"
            "  --listen ADDR        host:port (default 127.0.0.1:8080; port 0 = any free)\n"
            "  --node-id ID         names this node's landing files (default node1)\n"
            "  --port-file FILE     write the bound port to FILE once listening\n"
            "  --no-compact         do not compact landing files in this process\n"
            "  --role ROLE          all (default), ingest (compacts only on flush?compact=1)\n"
            "                       or compactor (no HTTP, no WAL: what floe work runs)\n"
            "  --catalog URI        SQLite path / sqlite:////abs/path (sqlite:///rel.db is\n"
            "                       relative, as everywhere) or postgresql://... (shared\n"
            "                       by every node of a scale-out deployment), or\n"
            "                       http(s)://... for a REST catalog (then state_db in\n"
            "                       [server] holds the landing index and leases, and\n"
            "                       [catalog] its token or credential: docs/REST.md)\n"
            "  --wal-dir DIR        local WAL folder (required with an s3:// warehouse)\n"
            "  -h, --help           this help\n"
            "\n"
            "SIGTERM or SIGINT: stop taking requests, finish in-flight work, seal every\n"
            "buffer, exit. SIGHUP: reload tokens, thresholds and [maintain] settings from\n"
            "--config.\n");
}

static void work_help(FILE *out) {
    fprintf(out,
            "usage: floe work --config FILE [--node-id ID] [--catalog URI] [--warehouse W]\n"
            "\n"
            "A compaction worker: compacts the landing files every `floe serve` node of the\n"
            "same catalog database and warehouse registered (any node's), one partition at a\n"
            "time under a lease in the catalog database (SELECT ... FOR UPDATE SKIP LOCKED,\n"
            "renewed while working, expiring after FLOE_COMPACT_LEASE_MS, default 60 s, when\n"
            "the worker dies). Same configuration file as floe serve (role = compactor);\n"
            "no HTTP listener, no WAL. SIGTERM or SIGINT: finish the partition, exit.\n");
}

void cli_serve_block_signals(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int serve_main(int argc, char **argv, bool work) {
    /* Blocked (already by main, before the configuration was first read), inherited by
     * every server thread, taken by the sigwait below: a SIGHUP (reload) or SIGTERM sent
     * while the server starts waits for it, instead of ending the process by the default
     * action (exit 129, nothing logged). */
    sigset_t set;
    cli_serve_block_signals(&set);
    const char *config = NULL, *warehouse = NULL, *listen = NULL, *node = NULL;
    const char *port_file = NULL, *role = NULL, *catalog = NULL, *wal_dir = NULL;
    bool no_compact = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (work)
                work_help(stdout);
            else
                serve_help(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--example-config")) {
            fputs(floe_server_example_config(), stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--no-compact")) {
            no_compact = true;
        } else if (!strcmp(a, "--config") || !strcmp(a, "--warehouse") ||
                   !strcmp(a, "--listen") || !strcmp(a, "--node-id") ||
                   !strcmp(a, "--port-file") || (!work && !strcmp(a, "--role")) ||
                   !strcmp(a, "--catalog") || (!work && !strcmp(a, "--wal-dir"))) {
            if (!v)
                return cli_usage(work ? "work" : "serve", "%s needs a value", a);
            if (!strcmp(a, "--config"))
                config = v;
            else if (!strcmp(a, "--warehouse"))
                warehouse = v;
            else if (!strcmp(a, "--listen"))
                listen = v;
            else if (!strcmp(a, "--node-id"))
                node = v;
            else if (!strcmp(a, "--role"))
                role = v;
            else if (!strcmp(a, "--catalog"))
                catalog = v;
            else if (!strcmp(a, "--wal-dir"))
                wal_dir = v;
            else
                port_file = v;
            i++;
        } else {
            return cli_usage(work ? "work" : "serve", "unknown option '%s'", a);
        }
    }
    floe_error err;
    floe_error_clear(&err);
    floe_server_config cfg;
    floe_server_config_init(&cfg);
    int rc = FLOE_EXIT_FAIL;
    floe_server *srv = NULL;
    if (cli_server_config_env(&cfg, &err) < 0)
        goto fail;
    if (config) {
        if (floe_server_config_load(&cfg, config, &err) < 0)
            goto fail;
    } else {
        /* the embedded default: tables appear on their first post */
        cfg.auto_create = true;
        cfg.defaults.mode = FLOE_SCHEMA_EVOLVE;
    }
    if ((warehouse && !(cfg.warehouse = floe_strdup(warehouse))) ||
        (listen && !(cfg.listen = floe_strdup(listen))) || (node && !(cfg.node_id = floe_strdup(node)))) {
        fprintf(stderr, "floe serve: out of memory\n");
        goto out;
    }
    if (no_compact)
        cfg.compact = false;
    if ((catalog && (floe_free(cfg.catalog), !(cfg.catalog = floe_strdup(catalog)))) ||
        (wal_dir && (floe_free(cfg.wal_dir), !(cfg.wal_dir = floe_strdup(wal_dir))))) {
        fprintf(stderr, "floe serve: out of memory\n");
        goto out;
    }
    if (work)
        cfg.role = FLOE_SERVER_ROLE_COMPACTOR;
    else if (role && !strcmp(role, "all"))
        cfg.role = FLOE_SERVER_ROLE_ALL;
    else if (role && !strcmp(role, "ingest"))
        cfg.role = FLOE_SERVER_ROLE_INGEST;
    else if (role && !strcmp(role, "compactor"))
        cfg.role = FLOE_SERVER_ROLE_COMPACTOR;
    else if (role) {
        floe_server_config_reset(&cfg);
        return cli_usage("serve", "--role: all, ingest or compactor ('%s')", role);
    }

    signal(SIGPIPE, SIG_IGN);
    /* before the server's threads take their malloc arenas */
    if (cfg.nsources && cfg.role != FLOE_SERVER_ROLE_COMPACTOR && !cli_malloc_env_tuned() &&
        floe_server_tune_malloc_kafka())
        floe_log(FLOE_LOG_INFO, "floe serve: Kafka sources: malloc keeps the memory a commit "
                 "frees for the next one (arenas: one per core; GLIBC_TUNABLES="
                 "glibc.malloc.* or MALLOC_ARENA_MAX overrides)");
    if (floe_server_open(&cfg, NULL, &srv, &err) < 0)
        goto fail;
    if (cfg.role == FLOE_SERVER_ROLE_COMPACTOR)
        fprintf(stderr, "floe %s: compacting (warehouse %s)\n", work ? "work" : "serve",
                cfg.warehouse ? cfg.warehouse : "./warehouse");
    else
        fprintf(stderr, "floe serve: listening on port %u (warehouse %s)\n",
                (unsigned)floe_server_port(srv), cfg.warehouse ? cfg.warehouse : "./warehouse");
    if (cfg.role != FLOE_SERVER_ROLE_COMPACTOR && cfg.auto_create)
        fprintf(stderr, "floe serve: tables are created on their first post, with the schema "
                "inferred from it (auto_create; to turn it off, start with --config FILE, "
                "whose [server] auto_create is false unless set)\n");
    else if (cfg.role != FLOE_SERVER_ROLE_COMPACTOR)
        fprintf(stderr, "floe serve: only the configured tables and those already in the "
                "catalog take posts (auto_create = false)\n");
    if (port_file) {
        FILE *f = fopen(port_file, "w");
        if (f) {
            fprintf(f, "%u\n", (unsigned)floe_server_port(srv));
            fclose(f);
        }
    }
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            if (!config) {
                fprintf(stderr, "floe serve: SIGHUP without --config: nothing to reload\n");
                continue;
            }
            floe_server_config fresh;
            floe_server_config_init(&fresh);
            floe_error e;
            floe_error_clear(&e);
            /* --catalog holds over the file, as at start (the check of [catalog] needs it) */
            if (cli_server_config_env(&fresh, &e) < 0 ||
                floe_server_config_load(&fresh, config, &e) < 0 ||
                (catalog && floe_io_options_set(&fresh.catalog, catalog, &e) < 0) ||
                floe_server_config_check(&fresh, &e) < 0 || floe_server_reload(srv, &fresh, &e) < 0)
                fprintf(stderr, "floe serve: reload failed, keeping the old settings: %s\n",
                        e.msg);
            else
                fprintf(stderr, "floe serve: configuration reloaded\n");
            floe_server_config_reset(&fresh);
            continue;
        }
        fprintf(stderr, "floe %s: stopping (signal %d)\n", work ? "work" : "serve", sig);
        break;
    }
    if (floe_server_close(srv, &err) < 0)
        goto fail;
    srv = NULL;
    rc = FLOE_EXIT_OK;
    goto out;
fail:
    rc = cli_fail(&err);
out:
    if (srv && floe_server_close(srv, &err) < 0 && rc == FLOE_EXIT_OK)
        rc = cli_fail(&err);
    floe_server_config_reset(&cfg);
    return rc;
}

int floe_cmd_serve(int argc, char **argv) {
    return serve_main(argc, argv, false);
}

int floe_cmd_work(int argc, char **argv) {
    return serve_main(argc, argv, true);
}
