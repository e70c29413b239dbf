/*
 * table_args.c - shared argument handling of the table commands.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "floe/io.h"
#include "floe/sql.h"
#include "table_args.h"

int cli_table_opt(int argc, char **argv, int *i, cli_table_opts *o) {
    const char *a = argv[*i];
    const char **slot = !strcmp(a, "--catalog")    ? &o->catalog
                        : !strcmp(a, "--config")   ? &o->config
                        : !strcmp(a, "--relocate") ? &o->relocate
                                                   : NULL;
    if (!strcmp(a, "--json")) {
        o->json = true;
        return 1;
    }
    if (!slot)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *slot = argv[++*i];
    return 1;
}

int cli_open_catalog(const cli_table_opts *o, floe_catalog **out, floe_error *err) {
    floe_catalog_config cfg = {0};
    int rc = cli_catalog_config_load(o->catalog, o->config, &cfg, err);
    if (rc < 0)
        return rc;
    rc = floe_catalog_open(&cfg, out, err);
    floe_catalog_config_reset(&cfg);
    return rc;
}

bool cli_split_ident(const char *ident, char **ns, char **name) {
    const char *dot = strrchr(ident, '.');
    if (!dot || dot == ident || !dot[1])
        return false;
    *ns = floe_strndup(ident, (size_t)(dot - ident));
    *name = floe_strdup(dot + 1);
    if (!*ns || !*name) {
        floe_free(*ns);
        floe_free(*name);
        return false;
    }
    return true;
}

bool cli_is_table_path(const char *t) {
    if (strchr(t, '/') || strstr(t, ".metadata.json"))
        return true;
    struct stat st;
    return stat(t, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_open_table(const char *t, const cli_table_opts *o, bool writable, floe_catalog **cat,
                   floe_table **out, floe_error *err) {
    *cat = NULL;
    floe_table_open_options oo = {.io = cli_io()};
    char *from = NULL;
    if (o->relocate) {
        const char *eq = strchr(o->relocate, '=');
        if (!eq || eq == o->relocate || !eq[1])
            return floe_error_set(err, FLOE_EINVALID, "--relocate wants FROM=TO");
        from = floe_strndup(o->relocate, (size_t)(eq - o->relocate));
        if (!from)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        oo.relocate_from = from;
        oo.relocate_to = eq + 1;
    }
    int rc = 0;
    if (cli_is_table_path(t)) {
        if (writable)
            rc = floe_error_set(err, FLOE_EINVALID,
                                "%s is a path: changing a table needs its catalog name NS.NAME",
                                t);
        else
            rc = floe_table_open_path(t, &oo, out, err);
        floe_free(from);
        return rc;
    }
    char *ns = NULL, *name = NULL;
    if (!cli_split_ident(t, &ns, &name)) {
        floe_free(from);
        return floe_error_set(err, FLOE_EINVALID,
                              "table %s: expected NS.NAME, a table folder or a metadata file", t);
    }
    rc = cli_open_catalog(o, cat, err);
    if (rc == 0) {
        /* for a catalog table --relocate maps a moved or copied warehouse: read from TO,
         * and the next commit records the table's paths there */
        rc = floe_table_load_ex(*cat, ns, name, &oo, out, err);
        if (rc < 0) {
            floe_catalog_close(*cat);
            *cat = NULL;
        }
    }
    floe_free(ns);
    floe_free(name);
    floe_free(from);
    return rc;
}

void cli_json_str(FILE *f, const char *s) {
    floe_buf b;
    floe_buf_init(&b, 0);
    /* JSON is UTF-8: a byte that is not (a name another tool wrote) as the text \xHH */
    if (floe_json_append_text(&b, (const uint8_t *)s, strlen(s)) == 0)
        fwrite(b.data, 1, b.len, f);
    else
        fputs("\"\"", f); /* out of memory: still valid JSON */
    floe_buf_free(&b);
}

void cli_print_kv_json(const floe_kv *kv, size_t n) {
    printf("{");
    for (size_t i = 0; i < n; i++) {
        printf("%s", i ? "," : "");
        cli_json_str(stdout, kv[i].key);
        printf(":");
        cli_json_str(stdout, kv[i].value ? kv[i].value : "");
    }
    printf("}");
}

const char *cli_summary_value(const floe_snapshot *s, const char *key) {
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, key))
            return s->summary[i].value;
    return NULL;
}

int cli_one_table_args(int argc, char **argv, const char *cmd, const char *help,
                       cli_table_opts *to, const char **table) {
    *table = NULL;
    for (int i = 1; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, to);
        if (r < 0)
            return cli_usage(cmd, "%s needs a value", argv[i]);
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(help, stdout);
            return FLOE_EXIT_OK;
        }
        if ((argv[i][0] == '-' && argv[i][1]) || *table)
            return cli_usage(cmd, "unexpected %s", argv[i]);
        *table = argv[i];
    }
    if (!*table)
        return cli_usage(cmd, "no TABLE given");
    return -1;
}

int cli_one_table_open(int argc, char **argv, const char *cmd, const char *help,
                       cli_table_opts *to, floe_catalog **cat, floe_table **t) {
    const char *table = NULL;
    *cat = NULL;
    *t = NULL;
    int code = cli_one_table_args(argc, argv, cmd, help, to, &table);
    if (code >= 0)
        return code;
    code = cli_open_table_or_fail(table, to, false, cat, t);
    return code == FLOE_EXIT_OK ? -1 : code;
}

int cli_open_table_or_fail(const char *t, const cli_table_opts *o, bool writable,
                           floe_catalog **cat, floe_table **out) {
    floe_error err;
    floe_error_clear(&err);
    *out = NULL;
    if (cli_open_table(t, o, writable, cat, out, &err) < 0) {
        *cat = NULL;
        return cli_fail(&err);
    }
    return FLOE_EXIT_OK;
}

void cli_close_table(floe_catalog *cat, floe_table *t) {
    floe_table_close(t);
    floe_catalog_close(cat);
}

/* ---------------------------------------------------------------------------------------
 * a folder that a catalog manages
 * ------------------------------------------------------------------------------------- */

static bool same_place(const char *a, const char *b) {
    char *ka = floe_io_uri_key(a), *kb = floe_io_uri_key(b);
    bool same = ka && kb && !strcmp(ka, kb);
    floe_free(ka);
    floe_free(kb);
    return same;
}

/* The folder of a metadata file: the parent of its metadata/ folder. Caller frees. */
static char *table_folder_of(const char *metadata_uri) {
    char *dir = floe_strdup(metadata_uri);
    if (!dir)
        return NULL;
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(dir, '/');
    if (slash && !strcmp(slash + 1, "metadata"))
        *slash = '\0';
    return dir;
}

/* The configured catalog, when it exists already (nothing is created to look). */
static int configured_owner(const char *folder, const cli_table_opts *o, char **owner,
                            floe_error *err) {
    floe_catalog_config cfg = {0};
    floe_error e;
    floe_error_clear(&e);
    if (cli_catalog_config_load(o->catalog, o->config, &cfg, &e) < 0)
        return 0; /* no catalog configured: nothing manages it that we know of */
    bool exists = true;
    struct stat st;
    if (cfg.type && !strcmp(cfg.type, "filesystem")) {
        char *local = cfg.warehouse ? floe_io_local_path(cfg.warehouse) : NULL;
        exists = local && stat(local, &st) == 0;
        floe_free(local);
    } else if (cfg.uri && strncmp(cfg.uri, "postgres", 8)) {
        /* SQLAlchemy's form: sqlite:///rel.db, sqlite:////abs.db */
        const char *p = !strncmp(cfg.uri, "sqlite:///", 10) ? cfg.uri + 10 : cfg.uri;
        exists = stat(p, &st) == 0;
    }
    floe_catalog *c = NULL;
    int rc = 0;
    if (exists && floe_catalog_open(&cfg, &c, &e) == 0) {
        floe_table_place *ps = NULL;
        size_t n = 0;
        if (floe_catalog_table_places(c, &ps, &n, &e) == 0) {
            for (size_t i = 0; i < n && !*owner; i++)
                if (same_place(ps[i].location, folder) &&
                    !(*owner = floe_asprintf("table %s.%s of catalog %s", ps[i].ns,
                                             ps[i].name, floe_catalog_name(c))))
                    rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            floe_table_places_free(ps, n);
        }
        floe_catalog_close(c);
    }
    floe_catalog_config_reset(&cfg);
    return rc;
}

typedef struct owner_ctx {
    const char *warehouse; /* the folder holding the catalog database */
    const char *folder;
    const char *db;
    char **owner;
} owner_ctx;

static int row_owner(void *vctx, const char *const *cols, size_t n, floe_error *err) {
    owner_ctx *c = vctx;
    if (n < 4 || !cols[1] || !cols[2] || !cols[3] || *c->owner)
        return 0;
    /* the table's folder as its pointer names it, and as the catalog's warehouse would */
    char *ptr = NULL, *at = NULL, *nsp = NULL, *home = NULL;
    if (floe_catalog_resolve_location_in(c->warehouse, cols[1], cols[2], cols[3], &ptr, NULL) == 0)
        at = table_folder_of(ptr);
    nsp = floe_strdup(cols[1]);
    for (char *q = nsp; q && *q; q++)
        if (*q == '.')
            *q = '/';
    home = nsp ? floe_asprintf("%s/%s/%s", c->warehouse, nsp, cols[2]) : NULL;
    if ((at && same_place(at, c->folder)) || (home && same_place(home, c->folder)))
        *c->owner = floe_asprintf("table %s.%s of the catalog in %s (catalog name %s)",
                                  cols[1], cols[2], c->db, cols[0] ? cols[0] : "?");
    floe_free(ptr);
    floe_free(at);
    floe_free(nsp);
    floe_free(home);
    (void)err; /* a row that cannot be placed owns nothing we can name */
    return 0;
}

/* A SQLite catalog database (catalog.db) in a folder above, as floe's embedded layout and
 * a copied warehouse keep it. */
static int ancestor_owner(const char *folder, char **owner, floe_error *err) {
    char *dir = floe_io_local_path(folder);
    if (!dir)
        return 0;
    int rc = 0;
    for (char *slash = strrchr(dir, '/'); slash && !*owner && rc == 0;
         slash = strrchr(dir, '/')) {
        *slash = '\0';
        char *db = floe_asprintf("%s/catalog.db", *dir ? dir : "");
        char *wh = floe_asprintf("file://%s", *dir ? dir : "/");
        struct stat st;
        if (!db || !wh) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        } else if (stat(db, &st) == 0 && S_ISREG(st.st_mode)) {
            floe_sql *sql = NULL;
            floe_error e;
            floe_error_clear(&e);
            if (floe_sql_open_with(db, cli_sql_options(), &sql, &e) == 0) {
                owner_ctx oc = {wh, folder, db, owner};
                /* a catalog that cannot be read owns nothing we can name */
                FLOE_IGNORE_RESULT(floe_sql_query(sql, "SELECT catalog_name, table_namespace, "
                                                  "table_name, metadata_location FROM "
                                                  "iceberg_tables", NULL, 0, row_owner, &oc,
                                                  &e));
                floe_sql_close(sql);
            }
        }
        floe_free(db);
        floe_free(wh);
    }
    floe_free(dir);
    return rc;
}

int cli_refuse_managed_folder(const floe_table *t, const cli_table_opts *o, floe_error *err) {
    if (floe_table_catalog(t))
        return 0;
    const char *folder = floe_table_root(t);
    char *owner = NULL;
    int rc = configured_owner(folder, o, &owner, err);
    if (rc == 0 && !owner)
        rc = ancestor_owner(folder, &owner, err);
    if (rc == 0 && owner)
        rc = floe_error_set(err, FLOE_EINVALID,
                            "%s is the folder of %s: a commit through the folder would fork "
                            "the table's metadata beside the catalog's, and the catalog would "
                            "never see it (its orphan removal would delete the new files). "
                            "Change the table through its catalog, by its name",
                            folder, owner);
    floe_free(owner);
    return rc;
}

int cli_check_where(const char *cmd, const floe_table *t, const floe_scan_options *so) {
    floe_error err;
    floe_error_clear(&err);
    if (floe_scan_check_filter(t, so, &err) == 0)
        return -1;
    if (err.code == FLOE_EINVALID || err.code == FLOE_ENOTFOUND)
        return cli_usage(cmd, "%s", err.msg);
    return cli_fail(&err);
}
