/*
 * cmd_catalog.c - `floe catalog`: look at and manage the catalog (namespaces, tables) and
 * find the current metadata of a table folder.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            "  namespaces [PARENT]          list namespaces (children of PARENT)\n"
            "  create-namespace NS [K=V...] create a namespace with properties\n"
            "  drop-namespace NS            drop an empty namespace\n"
            "  tables NS                    list the tables of a namespace\n"
            "  table NS NAME                current metadata of a table\n"
            "  drop-table NS NAME           forget a table (its files stay)\n"
            "  locate PATH                  current metadata file of a table folder\n"
            "  serve [--listen HOST:PORT] [--port-file FILE] [--tokens FILE]\n"
            "                               serve the catalog as an Iceberg REST catalog\n"
            "                               (default 127.0.0.1:8181; port 0 picks a free\n"
            "                               port, written to FILE). --tokens: bearer tokens\n"
            "                               with grants, the [token NAME] sections of a floe\n"
            "                               serve configuration file; without them, loopback\n"
            "                               only (docs/REST.md)\n"
            "\n"
            "The catalog comes from FLOE_CATALOG_URI / FLOE_WAREHOUSE, floe.conf\n"
            "([catalog.NAME] type/uri/warehouse), .pyiceberg.yaml, or ./warehouse with\n"
            "./warehouse/catalog.db.\n");
}

static void print_list(const floe_strlist *l, bool json) {
    if (json) {
        putchar('[');
        for (size_t i = 0; i < l->n; i++) {
            if (i)
                putchar(',');
            cli_json_str(stdout, l->items[i]);
        }
        printf("]\n");
    } else {
        for (size_t i = 0; i < l->n; i++)
            printf("%s\n", l->items[i]);
    }
}

static int catalog_serve_run(const floe_catalog_config *cfg, const floe_rest_server_config *rcp,
                             const char *port_file);

/* `floe catalog serve`: run the REST catalog until SIGINT or SIGTERM. */
static int catalog_serve(const floe_catalog_config *cfg, int nargs, char **args) {
    floe_rest_server_config rc = {.catalog = cfg};
    const char *port_file = NULL, *tokens_file = NULL;
    for (int k = 0; k < nargs; k++) {
        if (!strcmp(args[k], "--listen") && k + 1 < nargs)
            rc.listen = args[++k];
        else if (!strcmp(args[k], "--port-file") && k + 1 < nargs)
            port_file = args[++k];
        else if (!strcmp(args[k], "--tokens") && k + 1 < nargs)
            tokens_file = args[++k];
        else
            return cli_usage("catalog", "serve: unknown argument %s", args[k]);
    }
    /* tests only: FLOE_TEST_REST_FAULT=MODE[:N] fails the first N commit requests */
    const char *fault = getenv("FLOE_TEST_REST_FAULT");
    if (fault && *fault) {
        static const char *const modes[] = {"commit-500", "commit-drop", "lost-500", "lost-drop"};
        size_t ml = strcspn(fault, ":");
        for (int m = 0; m < 4; m++)
            if (strlen(modes[m]) == ml && !strncmp(fault, modes[m], ml))
                rc.fault = (floe_rest_fault)(FLOE_REST_FAULT_COMMIT_500 + m);
        char *end = NULL;
        long n = fault[ml] == ':' ? strtol(fault + ml + 1, &end, 10) : 1;
        if (!rc.fault || n < 1 || n > 1000000 || (end && *end))
            return cli_usage("catalog", "serve: FLOE_TEST_REST_FAULT must be "
                             "commit-500|commit-drop|lost-500|lost-drop[:N], not '%s'", fault);
        rc.fault_count = (int)n;
        fprintf(stderr, "floe catalog serve: test fault %s on the first %ld commit request(s)\n",
                modes[rc.fault - FLOE_REST_FAULT_COMMIT_500], n);
    }
    floe_error err;
    floe_error_clear(&err);
    /* the [token NAME] sections of a floe serve configuration file */
    floe_server_config scfg;
    floe_server_config_init(&scfg);
    if (tokens_file) {
        if (floe_server_config_load(&scfg, tokens_file, &err) < 0) {
            floe_server_config_reset(&scfg);
            return cli_fail(&err);
        }
        if (scfg.ntokens == 0) {
            floe_server_config_reset(&scfg);
            fprintf(stderr, "floe: %s has no [token NAME] section\n", tokens_file);
            return FLOE_EXIT_FAIL;
        }
        rc.tokens = scfg.tokens;
        rc.ntokens = scfg.ntokens;
    }
    int code = catalog_serve_run(cfg, &rc, port_file);
    floe_server_config_reset(&scfg);
    return code;
}

static int catalog_serve_run(const floe_catalog_config *cfg, const floe_rest_server_config *rcp,
                             const char *port_file) {
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
    fprintf(stderr, "floe catalog serve: stopping (signal %d)\n", sig);
    floe_rest_server_stop(s);
    return FLOE_EXIT_OK;
}

static int print_table(const floe_table *t, bool json) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    if (json) {
        printf("{\"metadata_location\":");
        cli_json_str(stdout, floe_table_metadata_location(t));
        printf(",\"format_version\":%d,\"table_uuid\":", m->format_version);
        cli_json_str(stdout, m->table_uuid ? m->table_uuid : "");
        printf(",\"location\":");
        cli_json_str(stdout, m->location);
        printf(",\"current_snapshot_id\":%lld,\"snapshots\":%zu,\"last_sequence_number\":%lld,"
               "\"schemas\":%zu,\"partition_specs\":%zu}\n",
               (long long)m->current_snapshot_id, m->n_snapshots,
               (long long)m->last_sequence_number, m->n_schemas, m->n_specs);
        return FLOE_EXIT_OK;
    }
    printf("metadata:         %s\n", floe_table_metadata_location(t));
    printf("format version:   %d\n", m->format_version);
    printf("table uuid:       %s\n", m->table_uuid ? m->table_uuid : "-");
    printf("location:         %s\n", m->location);
    if (cur)
        printf("current snapshot: %lld (%s, sequence %lld)\n", (long long)cur->snapshot_id,
               cur->operation ? cur->operation : "?", (long long)cur->sequence_number);
    else
        printf("current snapshot: none\n");
    printf("snapshots:        %zu\n", m->n_snapshots);
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
        int code = catalog_serve(&cfg, nargs, args);
        floe_catalog_config_reset(&cfg);
        return code;
    }
    if (!strcmp(action, "show")) {
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
            printf("}\n");
        } else {
            printf("name:      %s\ntype:      %s\nuri:       %s\nwarehouse: %s\nfrom:      %s\n",
                   cfg.name, cfg.type, cfg.uri ? cfg.uri : "-",
                   cfg.warehouse ? cfg.warehouse : "- (from the REST catalog)", cfg.source);
        }
        floe_catalog_config_reset(&cfg);
        return FLOE_EXIT_OK;
    }
    floe_catalog *c = NULL;
    int rc = floe_catalog_open(&cfg, &c, &err);
    floe_catalog_config_reset(&cfg);
    if (rc < 0)
        return cli_fail(&err);
    int exit_code = FLOE_EXIT_OK;
    floe_strlist l = {0};
    if (!strcmp(action, "namespaces") && nargs <= 1) {
        rc = floe_catalog_list_namespaces(c, nargs ? args[0] : NULL, &l, &err);
        if (rc == 0)
            print_list(&l, json);
    } else if (!strcmp(action, "tables") && nargs == 1) {
        rc = floe_catalog_list_tables(c, args[0], &l, &err);
        if (rc == 0)
            print_list(&l, json);
    } else if (!strcmp(action, "create-namespace") && nargs >= 1) {
        size_t n = (size_t)nargs - 1;
        const char **keys = calloc(n + 1, sizeof *keys), **vals = calloc(n + 1, sizeof *vals);
        char **copies = calloc(n + 1, sizeof *copies);
        if (!keys || !vals || !copies) {
            rc = floe_error_set(&err, FLOE_ENOMEM, "out of memory");
        } else {
            for (size_t k = 0; k < n && rc == 0; k++) {
                copies[k] = strdup(args[1 + k]);
                char *eq = copies[k] ? strchr(copies[k], '=') : NULL;
                if (!eq) {
                    exit_code = cli_usage("catalog", "property %s is not KEY=VALUE", args[1 + k]);
                    rc = 1;
                    break;
                }
                *eq = '\0';
                keys[k] = copies[k];
                vals[k] = eq + 1;
            }
            if (rc == 0)
                rc = floe_catalog_create_namespace(c, args[0], keys, vals, n, &err);
            if (rc == 0 && json) {
                printf("{\"namespace\":");
                cli_json_str(stdout, args[0]);
                printf(",\"created\":true}\n");
            }
            for (size_t k = 0; k < n; k++)
                free(copies[k]);
        }
        free(keys);
        free(vals);
        free(copies);
    } else if (!strcmp(action, "drop-namespace") && nargs == 1) {
        rc = floe_catalog_drop_namespace(c, args[0], &err);
        if (rc == 0 && json) {
            printf("{\"namespace\":");
            cli_json_str(stdout, args[0]);
            printf(",\"dropped\":true}\n");
        }
    } else if (!strcmp(action, "table") && nargs == 2) {
        floe_table *t = NULL;
        rc = floe_table_load(c, args[0], args[1], &t, &err);
        if (rc == 0)
            print_table(t, json);
        floe_table_close(t);
    } else if (!strcmp(action, "drop-table") && nargs == 2) {
        rc = floe_catalog_drop_table(c, args[0], args[1], &err);
    } else {
        exit_code = cli_usage("catalog", "unknown action or wrong arguments: %s", action);
        rc = 1;
    }
    floe_strlist_free(&l);
    floe_catalog_close(c);
    if (rc < 0)
        return cli_fail(&err);
    return exit_code;
}
