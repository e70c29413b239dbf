/*
 * table_args.c - shared argument handling of the table commands.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    int rc = floe_catalog_config_load(o->catalog, o->config, &cfg, err);
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
    if (cli_is_table_path(t)) {
        if (writable)
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s is a path: changing a table needs its catalog name "
                                  "NS.NAME", t);
        floe_table_open_options oo = {0};
        char *from = NULL;
        if (o->relocate) {
            const char *eq = strchr(o->relocate, '=');
            if (!eq)
                return floe_error_set(err, FLOE_EINVALID, "--relocate wants FROM=TO");
            from = floe_strndup(o->relocate, (size_t)(eq - o->relocate));
            if (!from)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            oo.relocate_from = from;
            oo.relocate_to = eq + 1;
        }
        int rc = floe_table_open_path(t, &oo, out, err);
        floe_free(from);
        return rc;
    }
    char *ns = NULL, *name = NULL;
    if (!cli_split_ident(t, &ns, &name))
        return floe_error_set(err, FLOE_EINVALID,
                              "table %s: expected NS.NAME, a table folder or a metadata file", t);
    int rc = cli_open_catalog(o, cat, err);
    if (rc == 0) {
        rc = floe_table_load(*cat, ns, name, out, err);
        if (rc < 0) {
            floe_catalog_close(*cat);
            *cat = NULL;
        }
    }
    floe_free(ns);
    floe_free(name);
    return rc;
}

void cli_json_str(FILE *f, const char *s) {
    floe_buf b;
    floe_buf_init(&b, 0);
    if (floe_json_append_cstr(&b, s) == 0)
        fwrite(b.data, 1, b.len, f);
    else
        fputs("\"\"", f); /* out of memory: still valid JSON */
    floe_buf_free(&b);
}
