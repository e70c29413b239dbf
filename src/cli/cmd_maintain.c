/*
 * cmd_maintain.c - `floe maintain`: run the maintenance scheduler (floe/maint.h) over
 * tables of the catalog, once or continuously, with leases in the catalog database.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/maint.h"
#include "floe/rewrite.h"
#include "maint_args.h"
#include "table_args.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: floe maintain [TABLE...] [--once] [--schedule FILE] [--run-log FILE]\n"
            "                     [--lease-ttl D] [--job-delay D] [--json]\n"
            "                     [--catalog NAME] [--config FILE]\n"
            "\n"
            "Runs, per table and each on its own cadence: landing compaction (inside floe\n"
            "serve), small-file rewrites (when available), manifest rewrites (past a manifest\n"
            "count), snapshot expiry, orphan removal, the landing lifecycle and, on format\n"
            "v3 tables, equality and position deletes resolved into deletion vectors\n"
            "(floe rewrite-deletes, when there are any). Each job of\n"
            "each table runs under a lease in the catalog database, so any number of\n"
            "maintainers can run: a job another maintainer holds is skipped.\n"
            "\n"
            "  TABLE               NS.NAME; default: every table of the catalog\n"
            "  --once              run every enabled job once and exit\n"
            "  --schedule FILE     schedule and thresholds (INI):\n"
            "                        lease-ttl = 10m\n"
            "                        [defaults]           (or [table NS.NAME])\n"
            "                        expire.interval = 1h       expire.older-than = 5d\n"
            "                        expire.retain-last = 1     orphans.older-than = 3d\n"
            "                        orphans.interval = 1d      <job>.enabled = false\n"
            "                        rewrite-data.planner = auto  (bin-pack, generational)\n"
            "                        rewrite-data.options = tier-fanout=5,...\n"
            "                        rewrite-manifests.min-manifests = 10\n"
            "                        rewrite-manifests.target-size = 8MB\n"
            "                        <job>.interval = auto  (or a duration)\n"
            "                        landing-lifecycle.age = 3d\n"
            "                        landing-lifecycle.quarantine-retention = 30d | keep\n"
            "                      jobs: landing-compact, rewrite-data, rewrite-manifests,\n"
            "                      expire, orphans, landing-lifecycle, rewrite-deletes\n"
            "  --run-log FILE      append one JSON line per run (table, job, owner, start_ms,\n"
            "                      end_ms, result, detail, files/bytes read, written and\n"
            "                      deleted, commits, attempts, conflicts)\n"
            "  --lease-ttl D       lease time to live (default 10m; renewed every ttl/3)\n"
            "  --job-delay D       hold each lease D longer after the job (testing)\n"
            "  --json              print runs as JSON lines\n"
            "  --catalog NAME, --config FILE  the catalog and its configuration file, as in\n"
            "                      every command (a schedule given as --config is refused)\n"
            "\n"
            "Each run prints what it did: files rewritten and bytes, manifests rewritten,\n"
            "snapshots expired, files and orphans deleted (--json: the run log's line).\n"
            "With --once, exit 1 when a run failed, naming the first (--json: a last line\n"
            "{\"error\":{\"code\",\"exit\",\"message\"}}, as every command prints a failure).\n");
}

static volatile int stop_flag;

static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

typedef struct run_out {
    int log_fd;
    bool json;
    int runs, failures;
    floe_error first; /* the first failed run's, naming its table and job */
} run_out;

static void on_run(void *vctx, const floe_maint_run *r) {
    run_out *o = vctx;
    o->runs++;
    if (r->rc < 0 && o->failures++ == 0)
        floe_error_set(&o->first, r->rc, "%s %s: %s", r->table, floe_maint_job_name(r->job),
                       r->detail ? r->detail : floe_strerror(r->rc));
    floe_buf b;
    floe_buf_init(&b, 1 << 10);
    bool line = floe_maint_run_json(r, &b) == 0;
    if (o->log_fd >= 0 && line) {
        /* one write(2) per line on an O_APPEND file: lines of concurrent maintainers do
         * not interleave */
        ssize_t w = write(o->log_fd, b.data, b.len);
        (void)w;
    }
    if (o->json) {
        if (line)
            fwrite(b.data, 1, b.len, stdout);
    } else {
        cli_print_padded(stdout, r->table, 24);
        printf(" %-18s %-7s %s (%lld ms)\n", floe_maint_job_name(r->job),
               floe_maint_run_result(r), r->detail ? r->detail : "",
               (long long)(r->end_ms - r->start_ms));
    }
    fflush(stdout);
    floe_buf_free(&b);
}

/* A file that parses as a maintenance schedule and names no catalog: what --config
 * meant for floe maintain before it became the catalog configuration. */
static bool is_schedule(const char *path) {
    floe_buf text;
    floe_buf_init(&text, 1 << 16);
    floe_error err;
    floe_error_clear(&err);
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    bool yes = floe_io_read_all(cli_io(), path, 1 << 20, &text, &err) == 0 && text.len &&
               !memmem(text.data, text.len, "[catalog.", 9) &&
               floe_maint_config_parse(&mc, (const char *)text.data, text.len, path, &err) == 0;
    floe_maint_config_reset(&mc);
    floe_buf_free(&text);
    return yes;
}

/* Every table of every namespace, depth first. */
static int all_tables(floe_catalog *c, const char *parent, floe_maint *m, floe_error *err) {
    floe_strlist ns = {0};
    int rc = floe_catalog_list_namespaces(c, parent, &ns, err);
    for (size_t i = 0; rc == 0 && i < ns.n; i++) {
        floe_strlist tables = {0};
        rc = floe_catalog_list_tables(c, ns.items[i], &tables, err);
        for (size_t k = 0; rc == 0 && k < tables.n; k++)
            rc = floe_maint_add_table(m, ns.items[i], tables.items[k], err);
        floe_strlist_free(&tables);
        if (rc == 0)
            rc = all_tables(c, ns.items[i], m, err);
    }
    floe_strlist_free(&ns);
    return rc;
}

int floe_cmd_maintain(int argc, char **argv) {
    const char *catalog_name = NULL, *catalog_config = NULL, *config = NULL, *run_log = NULL;
    bool once = false, json = false;
    int64_t lease_ttl = -1, job_delay = -1;
    const char **tables = calloc((size_t)argc + 1, sizeof *tables);
    size_t ntables = 0;
    if (!tables)
        return FLOE_EXIT_FAIL;
    int exit_code = FLOE_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(tables);
            return FLOE_EXIT_OK;
        } else if (!strcmp(a, "--once")) {
            once = true;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--schedule") && val) {
            config = val;
            i++;
        } else if (!strcmp(a, "--catalog") && val) {
            catalog_name = val;
            i++;
        } else if (!strcmp(a, "--config") && val) {
            catalog_config = val;
            i++;
        } else if (!strcmp(a, "--catalog-config")) {
            free(tables);
            return cli_usage("maintain", "--catalog-config is now --config FILE (the catalog "
                             "configuration, as in every command)");
        } else if (!strcmp(a, "--run-log") && val) {
            run_log = val;
            i++;
        } else if ((!strcmp(a, "--lease-ttl") || !strcmp(a, "--job-delay")) && val) {
            int64_t *dst = !strcmp(a, "--lease-ttl") ? &lease_ttl : &job_delay;
            if (!floe_parse_duration(val, 0, dst)) {
                free(tables);
                return cli_usage("maintain", "%s %s: not a duration (10m, 30s, 500ms)", a, val);
            }
            i++;
        } else if (a[0] == '-') {
            free(tables);
            return cli_usage("maintain", "unknown option or missing value: %s", a);
        } else {
            tables[ntables++] = a;
        }
    }
    floe_error err;
    floe_error_clear(&err);
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    floe_catalog_config cc = {0};
    floe_catalog *cat = NULL;
    floe_lease_store *leases = NULL;
    floe_maint *m = NULL;
    floe_maint_hooks hooks = {.rewrite_data = floe_rewrite_maint_job};
    run_out out = {.log_fd = -1, .json = json};
    floe_error_clear(&out.first);
    int rc = 0;
    if (catalog_config && is_schedule(catalog_config)) {
        exit_code = cli_usage("maintain", "--config %s is a maintenance schedule: give it as "
                              "--schedule %s (--config is the catalog configuration, as in "
                              "every command)", catalog_config, catalog_config);
        goto done;
    }
    if (config) {
        floe_buf text;
        floe_buf_init(&text, 1 << 20);
        rc = floe_io_read_all(cli_io(), config, 1 << 20, &text, &err);
        if (rc == 0)
            rc = floe_maint_config_parse(&mc, (const char *)text.data, text.len, config, &err);
        floe_buf_free(&text);
        /* the rewrite options are the rewrite's to check */
        for (size_t i = 0; rc == 0 && i <= mc.ntables; i++) {
            const floe_maint_table_config *tc = i < mc.ntables ? &mc.tables[i] : &mc.defaults;
            floe_rewrite_options ro;
            floe_rewrite_options_init(&ro);
            rc = floe_rewrite_options_parse_list(
                &ro, tc->jobs[FLOE_JOB_REWRITE_DATA].rewrite_options, &err);
            if (rc < 0)
                floe_error_prefix(&err, "%s: %s%s%srewrite-data.options: ", config,
                                  tc->name ? "[table " : "", tc->name ? tc->name : "",
                                  tc->name ? "] " : "");
        }
        if (rc < 0)
            goto done;
    }
    if (lease_ttl > 0)
        mc.lease_ttl_ms = lease_ttl;
    if (job_delay >= 0)
        mc.job_delay_ms = job_delay;
    if ((rc = cli_catalog_config_load(catalog_name, catalog_config, &cc, &err)) < 0 ||
        (rc = floe_catalog_open(&cc, &cat, &err)) < 0 ||
        (rc = floe_lease_store_open(&cc, &leases, &err)) < 0 ||
        (rc = floe_maint_new(cat, leases, &mc, &hooks, &m, &err)) < 0)
        goto done;
    for (size_t i = 0; i < ntables && rc == 0; i++) {
        char *ns = NULL, *name = NULL, *pointer = NULL;
        if (!cli_split_ident(tables[i], &ns, &name)) {
            exit_code = cli_usage("maintain", "table %s: expected NS.NAME", tables[i]);
            goto done;
        }
        /* a table named that does not exist is the command's failure, not each job's; one
         * that exists and cannot be loaded (a REST catalog loads the metadata to answer)
         * fails in each job, as on a SQL catalog */
        rc = floe_catalog_load_table(cat, ns, name, &pointer, &err);
        floe_free(pointer);
        if (rc < 0 && rc != FLOE_ENOTFOUND && rc != FLOE_ENOMEM)
            rc = 0;
        if (rc == 0)
            rc = floe_maint_add_table(m, ns, name, &err);
        floe_free(ns);
        floe_free(name);
    }
    if (rc == 0 && ntables == 0)
        rc = all_tables(cat, NULL, m, &err);
    if (rc < 0)
        goto done;
    if (run_log) {
        out.log_fd = open(run_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (out.log_fd < 0) {
            rc = floe_error_errno(&err, errno, "run log %s", run_log);
            goto done;
        }
    }
    floe_maint_on_run(m, on_run, &out);
    if (once) {
        rc = floe_maint_run_once(m, &err);
    } else {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        rc = floe_maint_run_loop(m, &stop_flag, &err);
    }
done:
    if (out.log_fd >= 0)
        close(out.log_fd);
    floe_maint_free(m);
    floe_lease_store_close(leases);
    floe_catalog_close(cat);
    floe_catalog_config_reset(&cc);
    floe_maint_config_reset(&mc);
    free(tables);
    if (exit_code != FLOE_EXIT_OK)
        return exit_code;
    if (rc < 0)
        return cli_fail(&err);
    if (out.failures && once) {
        /* one error, as every command prints a failure (under --json: the last line) */
        floe_error_prefix(&out.first, "%d of %d maintenance runs failed; the first: ",
                          out.failures, out.runs);
        return cli_fail(&out.first);
    }
    return FLOE_EXIT_OK;
}
