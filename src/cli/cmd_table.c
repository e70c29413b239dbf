/*
 * cmd_table.c - `floe table create|list|describe|rename|drop|upgrade` (properties and
 * sort-order: cmd_table_evolve.c; schema and partition: cmd_table_schema.c), `floe namespace ...`, `floe snapshots TABLE`,
 * `floe files TABLE`.
 *
 * `floe namespace create|list|drop|properties` manage namespaces (`floe catalog` keeps
 * what is not a table's or a namespace's: show, locate, serve).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/manifest.h"
#include "floe/partition.h"
#include "floe/scan.h"
#include "table_args.h"
#include "table_evolve.h"

/* ---------------------------------------------------------------------------------------
 * floe table
 * ------------------------------------------------------------------------------------- */

static void table_usage(FILE *out) {
    fprintf(out,
            "usage: floe table ACTION ... [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "  create NS.NAME --schema S.json [--partition \"event_type, day(ts)\"]\n"
            "         [--sort \"ts DESC\"] [--property K=V]... [--location L]\n"
            "                            L: a missing or empty folder of its own (orphan\n"
            "                            removal deletes whatever else is in it)\n"
            "                            --property format-version=3 makes a format v3\n"
            "                            table (row lineage; the default is 2)\n"
            "  list [NS]                 tables of NS (all namespaces without one)\n"
            "  describe TABLE            schema, partitioning, sort order, properties,\n"
            "                            current snapshot\n"
            "  properties TABLE          the table's properties\n"
            "  properties NS.NAME set K=V [K=V]...\n"
            "  properties NS.NAME unset K [K]...\n"
            "                            change them in one commit; the reserved ones\n"
            "                            (format-version, uuid, current-snapshot-id, ...)\n"
            "                            are refused: other commands change what they name\n"
            "  sort-order TABLE          the table's default sort order\n"
            "  sort-order NS.NAME set \"ts DESC NULLS LAST, bucket(16, id), name\"\n"
            "  sort-order NS.NAME clear  set or clear the default sort order, which\n"
            "                            floe rewrite --strategy sort uses\n"
            "  schema TABLE              the current schema, nested fields with their ids\n"
            "  schema NS.NAME CHANGE     evolve it (format/spec.md \"Schema Evolution\");\n"
            "                            a PATH may leave out a list's element and a map's\n"
            "                            value: items.c is items.element.c, m.c m.value.c;\n"
            "                            a name holding a dot is quoted as in --where:\n"
            "                            `a.b` (or \"a.b\") is the column a.b, a.b is\n"
            "                            field b of struct a\n"
            "    add-column PATH TYPE [--doc TEXT]\n"
            "                            a new optional column; PATH a.b.c adds c to struct\n"
            "                            a.b;\n"
            "                            TYPE long, decimal(10, 2), struct<lat: double,\n"
            "                            lon: double>, list<string>, map<string, long>, ...\n"
            "                            (--required is refused: it would need a default)\n"
            "    rename-column PATH NEW_NAME\n"
            "    drop-column PATH        not an identifier field, a source of the current\n"
            "                            partition spec or the sort order, nor the only\n"
            "                            field of a struct (drop the struct), nor a key\n"
            "                            of a live equality delete file (rewrite first)\n"
            "    widen PATH TYPE         int to long, float to double, decimal(P, S) to\n"
            "                            decimal(P2, S) with P2 > P; on format v3 date to\n"
            "                            timestamp or timestamp_ns (not for a bucket or\n"
            "                            identity partition source)\n"
            "    make-optional PATH\n"
            "    move-column PATH first|before X|after X\n"
            "                            among its siblings (X: a path or a sibling's name)\n"
            "    set-identifier-fields [PATH...]\n"
            "                            required primitive columns; without a PATH:\n"
            "                            no identifier fields\n"
            "                            Each change commits a new schema (or an equal earlier\n"
            "                            one) as the current one; new fields get ids above\n"
            "                            last-column-id; data files stay as written and read\n"
            "                            by field id (added columns read as null)\n"
            "  partition TABLE           the default partition spec with its field ids\n"
            "  partition NS.NAME add-field TERM\n"
            "  partition NS.NAME drop-field NAME|TERM\n"
            "  partition NS.NAME replace \"SPEC\"\n"
            "                            TERM: col, bucket(16, col), truncate(4, col),\n"
            "                            year|month|day|hour(ts), each [AS name]; a new spec\n"
            "                            becomes the default (new field ids above\n"
            "                            last-partition-id; format v1 keeps dropped fields\n"
            "                            as void). Files keep the spec they were written\n"
            "                            with; appends, serve and rewrite use the new one\n"
            "  register NS.NAME METADATA add an existing table by its metadata file\n"
            "  rename NS.NAME NEW        NEW is NAME or NS.NAME (SQL catalogs only)\n"
            "  drop NS.NAME [--purge]    forget the table; --purge also deletes the files\n"
            "                            under its location that its metadata references\n"
            "                            (a REST catalog is asked to: purgeRequested=true);\n"
            "                            refused, the table kept, when its property\n"
            "                            gc.enabled is false\n"
            "  upgrade NS.NAME [--format-version 2|3]\n"
            "                            upgrade a format v1 table to v2 (spec Appendix E;\n"
            "                            v1 manifests stay valid), or a v1 or v2 table to v3\n"
            "                            (row lineage: next-row-id starts at 0; rows written\n"
            "                            before read with a null _row_id). floe keeps a\n"
            "                            table's format otherwise; a table folder is upgraded\n"
            "                            to v2 by floe rewrite FOLDER -o format-version=2.\n"
            "                            Without --format-version: 2 (a v2 or v3 table is\n"
            "                            left as it is). Format versions cannot go down: a\n"
            "                            --format-version below the table's is refused (exit 2)\n"
            "\n"
            "TABLE for describe may also be a table folder or a metadata file.\n"
            "\n"
            "create sets these properties unless --property gives them (a table committed\n"
            "to every few seconds then keeps its metadata bounded):\n"
            "  write.metadata.delete-after-commit.enabled=true\n"
            "  write.metadata.previous-versions-max=10\n"
            "  commit.manifest.min-count-to-merge=8\n");
}

typedef struct upgrade {
    int to;   /* the version asked for */
    bool at_least; /* no --format-version: v2, and a v3 table is past it (nothing to do) */
    int from; /* out: the table's version before */
} upgrade;

static int upgrade_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    upgrade *u = ctx;
    u->from = floe_metadata_builder_format_version(b);
    if (u->from > u->to && !u->at_least) /* table_upgrade reports it as a bad argument */
        return floe_error_set(err, FLOE_EINVALID, "upgrade: %d is below the table's format "
                              "version %d: format versions cannot go down", u->to, u->from);
    if (u->from >= u->to)
        return FLOE_COMMIT_NOOP;
    return floe_metadata_builder_upgrade(b, u->to, err);
}

/* floe table upgrade: a v1 table becomes v2 or v3, a v2 table v3 (nothing to do for a
 * table already there; a lower version than the table's is a usage error). */
static int table_upgrade(const char *ident, int version, bool version_given,
                         const cli_table_opts *to) {
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int code = FLOE_EXIT_OK;
    upgrade u = {.to = version, .at_least = !version_given};
    if (version != 2 && version != 3) {
        code = cli_usage("table", "upgrade: --format-version %d: floe upgrades tables to 2 "
                         "or 3", version);
    } else if (cli_open_table(ident, to, false, &c, &t, &err) < 0) {
        code = cli_fail(&err);
    } else if (!floe_table_catalog(t)) {
        floe_error_set(&err, FLOE_EUNSUPPORTED,
                       "%s is a table folder: upgrade it with its next rewrite, floe rewrite "
                       "%s -o format-version=2", ident, ident);
        code = cli_fail(&err);
    } else {
        int rc = floe_table_commit(t, upgrade_apply, &u, &err);
        bool done = u.from < u.to;
        if (rc < 0 && rc != FLOE_COMMIT_NOOP && u.from > u.to && !u.at_least)
            code = cli_usage("table", "%s: %s", ident, err.msg);
        else if (rc < 0 && rc != FLOE_COMMIT_NOOP)
            code = cli_fail(&err);
        else if (to->json) {
            printf("{\"table\":");
            cli_json_str(stdout, ident);
            printf(",\"format_version_before\":%d,\"format_version\":%d,\"upgraded\":%s}\n",
                   u.from, done ? u.to : u.from, done ? "true" : "false");
        } else if (done)
            printf("upgraded %s from format v%d to v%d\n", ident, u.from, u.to);
        else
            printf("%s is already at format version %d: nothing to do\n", ident, u.from);
    }
    cli_close_table(c, t);
    return code;
}

/* --location names a folder that must hold no files yet (orphan removal would delete
 * them): refused here as a bad argument; floe_table_create checks it again. */
static int location_unused(floe_catalog *cat, const char *ns, const char *name, const char *loc,
                           floe_error *err) {
    char *abs = NULL;
    int rc = floe_io_uri_absolute(loc, NULL, &abs, err);
    if (rc == 0)
        rc = floe_table_check_location_unused(cat, ns, name, abs, err);
    floe_free(abs);
    return rc;
}

static int table_create(int nargs, char **args, const cli_table_opts *to) {
    const char *ident = NULL, *schema_path = NULL, *part = NULL, *sort = NULL, *loc = NULL;
    const char *bad_opt = NULL, *bad_text = NULL; /* the option that did not parse */
    floe_kv *props = calloc((size_t)nargs + 1, sizeof *props);
    char **copies = calloc((size_t)nargs + 1, sizeof *copies);
    size_t nprops = 0;
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    floe_sort_order *order = NULL;
    char *schema_json = NULL, *spec_json = NULL, *sort_json = NULL, *ns = NULL, *name = NULL;
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    if (!props || !copies) {
        floe_error_set(&err, FLOE_ENOMEM, "out of memory");
        code = cli_fail(&err);
        goto out;
    }
    for (int i = 0; i < nargs; i++) {
        const char *a = args[i];
        bool v = i + 1 < nargs;
        if (!strcmp(a, "--schema") && v) {
            schema_path = args[++i];
        } else if (!strcmp(a, "--partition") && v) {
            part = args[++i];
        } else if (!strcmp(a, "--sort") && v) {
            sort = args[++i];
        } else if (!strcmp(a, "--location") && v) {
            loc = args[++i];
        } else if (!strcmp(a, "--property") && v) {
            char *c = copies[nprops] = strdup(args[++i]);
            char *eq = c ? strchr(c, '=') : NULL;
            if (!eq || eq == c) {
                code = cli_usage("table", "--property wants K=V");
                goto out;
            }
            *eq = 0;
            props[nprops++] = (floe_kv){c, eq + 1};
            const char *why = strcmp(c, "format-version") ? cli_reserved_property(c) : NULL;
            if (why) {
                code = cli_usage("table", "create: --property %s is reserved: %s", c, why);
                goto out;
            }
            if (floe_table_property_check(c, eq + 1, &err) < 0) {
                code = cli_usage("table", "create: %s", err.msg);
                goto out;
            }
        } else if (a[0] == '-') {
            code = cli_usage("table", "create: unknown option %s", a);
            goto out;
        } else if (!ident) {
            ident = a;
        } else {
            code = cli_usage("table", "create: unexpected %s", a);
            goto out;
        }
    }
    if (!ident || !schema_path) {
        code = cli_usage("table", "create needs NS.NAME and --schema");
        goto out;
    }
    if (floe_table_properties_check(NULL, props, nprops, NULL, 0, &err) < 0) {
        code = cli_usage("table", "create: %s", err.msg);
        goto out;
    }
    if (!cli_split_ident(ident, &ns, &name)) {
        code = cli_usage("table", "create: %s is not NS.NAME", ident);
        goto out;
    }
    if (floe_catalog_check_names(ns, name, &err) < 0) {
        code = cli_usage("table", "create: %s", err.msg);
        goto out;
    }
    if (floe_schema_load(schema_path, &schema, &err) < 0)
        goto fail;
    if (!(schema_json = floe_schema_to_json(schema, false)))
        goto nomem;
    /* a spec or order that does not parse against the schema is a bad argument */
    if (part && *part) {
        if (floe_partition_spec_parse(schema, part, 0, 0, &spec, &err) < 0) {
            bad_opt = "--partition";
            bad_text = part;
            goto bad_arg;
        }
        if (!(spec_json = floe_partition_spec_to_json(spec)))
            goto nomem;
    }
    if (sort && *sort) {
        if (floe_sort_order_parse(schema, sort, 1, &order, &err) < 0) {
            bad_opt = "--sort";
            bad_text = sort;
            goto bad_arg;
        }
        if (!(sort_json = floe_sort_order_to_json(order)))
            goto nomem;
    }
    floe_table_create_options co = {.location = loc,
                                    .spec_json = spec_json,
                                    .sort_json = sort_json,
                                    .props = props,
                                    .nprops = nprops,
                                    .floe_defaults = true};
    if (cli_open_catalog(to, &cat, &err) < 0)
        goto fail;
    if (loc && location_unused(cat, ns, name, loc, &err) < 0) {
        if (err.code != FLOE_EINVALID)
            goto fail;
        bad_opt = "--location";
        bad_text = loc;
        goto bad_arg;
    }
    /* a folder property the table could not own is a bad argument too (create checks it
     * again, against the location it settles on) */
    for (size_t i = 0; i < nprops; i++) {
        char *abs = NULL;
        int rc = floe_table_check_write_path(cat, ns, name, loc, props[i].key, props[i].value,
                                             &abs, &err);
        floe_free(abs);
        if (rc < 0 && err.code != FLOE_ENOMEM) {
            code = cli_usage("table", "create: %s", err.msg);
            goto out;
        }
        if (rc < 0)
            goto fail;
    }
    if (floe_table_create(cat, ns, name, schema_json, &co, &t, &err) < 0)
        goto fail;
    if (to->json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        printf(",\"location\":");
        cli_json_str(stdout, floe_table_metadata_get(t)->location);
        printf(",\"metadata_location\":");
        cli_json_str(stdout, floe_table_metadata_location(t));
        printf("}\n");
    } else {
        printf("created %s at %s\n", ident, floe_table_metadata_get(t)->location);
    }
    goto out;
bad_arg:
    if (err.code != FLOE_ENOMEM) {
        code = cli_usage("table", "create: %s \"%s\": %s", bad_opt, bad_text, err.msg);
        goto out;
    }
    goto fail;
nomem:
    floe_error_set(&err, FLOE_ENOMEM, "out of memory");
fail:
    code = cli_fail(&err);
out:
    floe_table_close(t);
    floe_catalog_close(cat);
    floe_schema_free(schema);
    floe_partition_spec_free(spec);
    floe_sort_order_free(order);
    floe_free(schema_json);
    floe_free(spec_json);
    floe_free(sort_json);
    floe_free(ns);
    floe_free(name);
    for (size_t i = 0; copies && i < (size_t)nargs; i++)
        free(copies[i]);
    free(copies);
    free(props);
    return code;
}

/* The tables of ns and of the namespaces below it: printed one a line, or under --json
 * (json not NULL) gathered into json as the members of an array, which the caller prints
 * whole once every listing succeeded (a failure part-way leaves the error document
 * alone: the output stays one JSON document). */
static int list_ns(floe_catalog *c, const char *ns, floe_buf *json, floe_error *err) {
    floe_strlist tl = {0}, nl = {0};
    int rc = 0;
    if (ns) {
        if ((rc = floe_catalog_list_tables(c, ns, &tl, err)) < 0)
            goto done;
        for (size_t i = 0; i < tl.n; i++) {
            char *full = floe_asprintf("%s.%s", ns, tl.items[i]);
            if (!full) {
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                goto done;
            }
            if (json) {
                if (json->len)
                    floe_buf_append_byte(json, ',');
                floe_json_append_cstr(json, full);
            } else {
                printf("%s\n", full);
            }
            floe_free(full);
            if (json && floe_buf_error(json)) {
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                goto done;
            }
        }
    }
    if ((rc = floe_catalog_list_namespaces(c, ns, &nl, err)) < 0)
        goto done;
    for (size_t i = 0; i < nl.n && rc == 0; i++)
        if (!ns || strcmp(nl.items[i], ns))
            rc = list_ns(c, nl.items[i], json, err);
done:
    floe_strlist_free(&tl);
    floe_strlist_free(&nl);
    return rc;
}

static int table_describe(floe_table *t, bool json) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
    const floe_snapshot *cur = floe_table_metadata_current_snapshot(m);
    floe_error err;
    floe_error_clear(&err);
    floe_schema *schema = NULL;
    floe_partition_spec *spec = NULL;
    char *spec_text = NULL, *sort_text = cli_sort_order_text(m, &err);
    if (ms && floe_schema_parse(ms->json, strlen(ms->json), &schema, &err) == 0 && sp &&
        floe_partition_spec_parse_json(sp->json, strlen(sp->json), schema, &spec, &err) == 0)
        spec_text = floe_partition_spec_to_string(spec);
    if (json) {
        printf("{\"metadata_location\":");
        cli_json_str(stdout, floe_table_metadata_location(t));
        printf(",\"location\":");
        cli_json_str(stdout, m->location);
        printf(",\"table_uuid\":");
        cli_json_str(stdout, m->table_uuid ? m->table_uuid : "");
        printf(",\"format_version\":%d,\"schema_id\":%d,\"schema\":%s,\"partition_spec\":",
               m->format_version, m->current_schema_id, ms ? ms->json : "null");
        cli_json_str(stdout, spec_text ? spec_text : "");
        printf(",\"sort_order_id\":%d,\"sort_order\":", (int)m->default_sort_order_id);
        cli_json_str(stdout, sort_text ? sort_text : "");
        printf(",\"spec_id\":%d,\"current_snapshot_id\":%" PRId64
               ",\"snapshots\":%zu,\"last_sequence_number\":%" PRId64 ",\"properties\":",
               m->default_spec_id, m->current_snapshot_id, m->n_snapshots,
               m->last_sequence_number);
        cli_print_kv_json(m->properties, m->n_properties);
        printf(",\"summary\":");
        if (cur)
            cli_print_kv_json(cur->summary, cur->n_summary);
        else
            printf("{}");
        printf("}\n");
    } else {
        printf("table:          %s\n", floe_table_name(t) ? floe_table_name(t) : floe_table_root(t));
        printf("metadata:       %s\n", floe_table_metadata_location(t));
        printf("location:       %s\n", m->location);
        printf("uuid:           %s\n", m->table_uuid ? m->table_uuid : "-");
        printf("format version: %d\n", m->format_version);
        printf("partitioned by: ");
        cli_print_text(stdout, spec_text && *spec_text ? spec_text : "(unpartitioned)");
        printf(" (spec %d)\n", (int)m->default_spec_id);
        if (sort_text && *sort_text) {
            printf("sorted by:      ");
            cli_print_text(stdout, sort_text);
            printf(" (order %d)\n", (int)m->default_sort_order_id);
        } else
            printf("sorted by:      %s\n", sort_text ? "(unsorted)" : "?");
        if (schema) {
            printf("columns (schema %d):\n", m->current_schema_id);
            for (size_t i = 0; i < schema->root.nchildren; i++) {
                const floe_field *f = &schema->root.children[i];
                char ty[96];
                printf("  %-4d ", f->id);
                cli_print_padded(stdout, f->name, 24);
                printf(" %s%s\n", floe_field_type_str(f, ty, sizeof ty),
                       f->required ? " (required)" : "");
            }
        }
        if (m->n_properties) {
            printf("properties:\n");
            for (size_t i = 0; i < m->n_properties; i++)
                cli_print_kv_text("  ", m->properties[i].key, m->properties[i].value);
        }
        if (cur) {
            printf("current snapshot: %" PRId64 " (%s, sequence %" PRId64 ")\n", cur->snapshot_id,
                   cur->operation ? cur->operation : "?", cur->sequence_number);
            for (size_t i = 0; i < cur->n_summary; i++)
                if (!strncmp(cur->summary[i].key, "total-", 6))
                    printf("  %s = %s\n", cur->summary[i].key, cur->summary[i].value);
        } else {
            printf("current snapshot: none\n");
        }
        printf("snapshots:      %zu\n", m->n_snapshots);
    }
    floe_free(spec_text);
    floe_free(sort_text);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    return FLOE_EXIT_OK;
}

/* {"renamed":"NS.NAME","to":"NS.NAME"} */
static void print_renamed_json(const char *ns, const char *name, const char *tns,
                               const char *tname) {
    char *from = floe_asprintf("%s.%s", ns, name), *to = floe_asprintf("%s.%s", tns, tname);
    printf("{\"renamed\":");
    cli_json_str(stdout, from ? from : "");
    printf(",\"to\":");
    cli_json_str(stdout, to ? to : "");
    printf("}\n");
    floe_free(from);
    floe_free(to);
}

static int table_drop(floe_catalog *c, const char *ident, bool purge, bool json) {
    floe_error err;
    floe_error_clear(&err);
    char *ns = NULL, *name = NULL;
    floe_table *t = NULL;
    int code = FLOE_EXIT_OK;
    size_t deleted = 0;
    if (!cli_split_ident(ident, &ns, &name))
        return cli_usage("table", "drop: %s is not NS.NAME", ident);
    /* a catalog that purges (REST: purgeRequested=true) deletes the files on its side;
     * otherwise floe_table_drop_purge drops the table only at the metadata it read and
     * then deletes the files that metadata reaches (a commit racing the drop keeps the
     * table, or finds it gone) */
    bool by_catalog = purge && floe_catalog_drop_purges(c);
    /* a table whose gc.enabled is false keeps its files, and its catalog entry: the purge
     * is refused before the drop (as Iceberg's engines refuse it), whoever would purge */
    if (by_catalog && (floe_table_load(c, ns, name, &t, &err) < 0 ||
                       floe_table_gc_check(t, NULL, "purge its files", &err) < 0))
        goto fail;
    if (by_catalog) {
        if (floe_catalog_drop_table_purge(c, ns, name, &err) < 0)
            goto fail;
    } else if (purge) {
        if (floe_table_drop_purge(c, ns, name, NULL, &deleted, &err) < 0)
            goto fail;
    } else if (floe_catalog_drop_table(c, ns, name, &err) < 0) {
        goto fail;
    }
    if (json) {
        printf("{\"dropped\":");
        cli_json_str(stdout, ident);
        if (by_catalog)
            printf(",\"files_deleted\":null,\"purged_by\":\"catalog\"}\n");
        else
            printf(",\"files_deleted\":%zu}\n", deleted);
    } else {
        printf("dropped %s.%s%s\n", ns, name,
               by_catalog ? " (files purged by the catalog)" : purge ? " (files purged)" : "");
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    floe_table_close(t);
    floe_free(ns);
    floe_free(name);
    return code;
}

int floe_cmd_table(int argc, char **argv) {
    cli_table_opts to = {0};
    char **args = calloc((size_t)argc + 1, sizeof *args);
    int nargs = 0, fv = 2;
    bool purge = false, fv_given = false;
    if (!args)
        return FLOE_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0) {
            free(args);
            return cli_usage("table", "%s needs a value", argv[i]);
        }
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            table_usage(stdout);
            free(args);
            return FLOE_EXIT_OK;
        }
        if (!strcmp(argv[i], "--purge")) {
            purge = true;
            continue;
        }
        if (!strcmp(argv[i], "--format-version")) {
            if (i + 1 >= argc) {
                free(args);
                return cli_usage("table", "--format-version needs a value");
            }
            char *end;
            long v = strtol(argv[++i], &end, 10);
            fv = *end || end == argv[i] || v < 1 || v > 9 ? -1 : (int)v;
            fv_given = true;
            continue;
        }
        args[nargs++] = argv[i];
    }
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    const char *action = nargs ? args[0] : "";
    /* create and a schema change (after TABLE CHANGE) take options of their own and refuse
     * the ones they do not know; the rest take none but the shared ones, --purge and
     * --format-version */
    const char *unknown = NULL;
    int ncheck = !strcmp(action, "create") ? 0 : !strcmp(action, "schema") ? 3 : nargs;
    for (int k = 1; k < nargs && k < ncheck && !unknown; k++)
        if (args[k][0] == '-' && args[k][1])
            unknown = args[k];
    if (unknown) {
        code = cli_usage("table", "%s: unknown option %s", action, unknown);
    } else if ((purge && strcmp(action, "drop")) || (fv_given && strcmp(action, "upgrade"))) {
        code = cli_usage("table", "%s: --purge is for drop, --format-version for upgrade",
                         action);
    } else if (to.relocate && strcmp(action, "describe")) {
        code = cli_usage("table", "--relocate applies to describe only (and to the commands "
                         "that read or change a table: scan, append, rewrite, ...)");
    } else if (!strcmp(action, "create")) {
        code = table_create(nargs - 1, args + 1, &to);
    } else if (!strcmp(action, "describe") && nargs == 2) {
        code = cli_open_table_or_fail(args[1], &to, false, &c, &t);
        if (code == FLOE_EXIT_OK)
            code = table_describe(t, to.json);
    } else if (!strcmp(action, "list") && nargs <= 2) {
        floe_strlist probe = {0};
        floe_buf names;
        floe_buf_init(&names, 0);
        /* a missing namespace is NOTFOUND, not an empty list */
        if (cli_open_catalog(&to, &c, &err) < 0 ||
            (nargs == 2 && floe_catalog_list_tables(c, args[1], &probe, &err) < 0) ||
            list_ns(c, nargs == 2 ? args[1] : NULL, to.json ? &names : NULL, &err) < 0)
            code = cli_fail(&err);
        else if (to.json) {
            putchar('[');
            if (names.len)
                fwrite(names.data, 1, names.len, stdout);
            puts("]");
        }
        floe_buf_free(&names);
        floe_strlist_free(&probe);
    } else if (!strcmp(action, "rename") && nargs == 3) {
        char *ns = NULL, *name = NULL, *tns = NULL, *tname = NULL;
        if (!cli_split_ident(args[1], &ns, &name)) {
            code = cli_usage("table", "rename: %s is not NS.NAME", args[1]);
        } else {
            if (!cli_split_ident(args[2], &tns, &tname)) {
                tns = floe_strdup(ns);
                tname = floe_strdup(args[2]);
            }
            if (floe_catalog_check_names(tns, tname, &err) < 0)
                code = cli_usage("table", "rename: %s", err.msg);
            else if (cli_open_catalog(&to, &c, &err) < 0 ||
                floe_table_rename(c, ns, name, tns, tname, &err) < 0)
                code = cli_fail(&err);
            else if (to.json)
                print_renamed_json(ns, name, tns, tname);
            else
                printf("renamed %s.%s to %s.%s\n", ns, name, tns, tname);
        }
        floe_free(ns);
        floe_free(name);
        floe_free(tns);
        floe_free(tname);
    } else if (!strcmp(action, "register") && nargs == 3) {
        char *ns = NULL, *name = NULL, *pointer = NULL;
        if (!cli_split_ident(args[1], &ns, &name)) {
            code = cli_usage("table", "register: %s is not NS.NAME", args[1]);
        } else if (floe_catalog_check_names(ns, name, &err) < 0) {
            code = cli_usage("table", "register: %s", err.msg);
        } else if (cli_open_catalog(&to, &c, &err) < 0 ||
                   floe_table_register(c, ns, name, args[2], &err) < 0 ||
                   floe_catalog_load_table(c, ns, name, &pointer, &err) < 0) {
            code = cli_fail(&err);
        } else if (to.json) {
            printf("{\"registered\":");
            cli_json_str(stdout, args[1]);
            printf(",\"metadata_location\":");
            cli_json_str(stdout, pointer);
            printf("}\n");
        } else {
            printf("registered %s at %s\n", args[1], pointer);
        }
        floe_free(pointer);
        floe_free(ns);
        floe_free(name);
    } else if (!strcmp(action, "properties")) {
        code = cli_table_properties(nargs - 1, args + 1, &to);
    } else if (!strcmp(action, "sort-order")) {
        code = cli_table_sort_order(nargs - 1, args + 1, &to);
    } else if (!strcmp(action, "schema")) {
        code = cli_table_schema(nargs - 1, args + 1, &to);
    } else if (!strcmp(action, "partition")) {
        code = cli_table_partition(nargs - 1, args + 1, &to);
    } else if (!strcmp(action, "upgrade") && nargs == 2) {
        code = table_upgrade(args[1], fv, fv_given, &to);
    } else if (!strcmp(action, "drop") && nargs == 2) {
        if (cli_open_catalog(&to, &c, &err) < 0)
            code = cli_fail(&err);
        else
            code = table_drop(c, args[1], purge, to.json);
    } else {
        code = cli_usage("table", "unknown action or wrong arguments: %s", action);
    }
    cli_close_table(c, t);
    free(args);
    return code;
}

/* ---------------------------------------------------------------------------------------
 * floe namespace
 * ------------------------------------------------------------------------------------- */

static void print_list(const floe_strlist *l, bool json) {
    if (json)
        putchar('[');
    for (size_t i = 0; i < l->n; i++) {
        if (json) {
            printf("%s", i ? "," : "");
            cli_json_str(stdout, l->items[i]);
        } else {
            cli_print_text(stdout, l->items[i]);
            putchar('\n');
        }
    }
    if (json)
        printf("]\n");
}

/* PyIceberg's SqlCatalog marks every namespace with a row "exists" = "true": its
 * bookkeeping, not a property anyone set (without it, an empty namespace is gone). */
#define NS_EXISTS_KEY "exists"

/* floe namespace create NS [K=V | --property K=V]... | list [PARENT] | drop NS */
static int namespace_basic(const char *action, int argc, char **argv) {
    cli_table_opts to = {0};
    bool create = !strcmp(action, "create"), list = !strcmp(action, "list");
    const char *ns = NULL;
    const char **keys = calloc((size_t)argc + 1, sizeof *keys);
    const char **vals = calloc((size_t)argc + 1, sizeof *vals);
    char **copies = calloc((size_t)argc + 1, sizeof *copies);
    size_t nprops = 0;
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_strlist l = {0};
    if (!keys || !vals || !copies) {
        code = FLOE_EXIT_FAIL;
        goto out;
    }
    for (int i = 2; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0) {
            code = cli_usage("namespace", "%s needs a value", argv[i]);
            goto out;
        }
        if (r > 0)
            continue;
        const char *a = argv[i];
        bool prop = create && !strcmp(a, "--property") && i + 1 < argc;
        if (prop)
            a = argv[++i]; /* as table create spells properties */
        if (!prop && a[0] == '-' && a[1]) {
            code = cli_usage("namespace", "%s: unknown option %s", action, a);
            goto out;
        }
        if (!prop && !ns) {
            ns = a;
            continue;
        }
        char *eq = create ? strchr(a, '=') : NULL;
        if (!eq || eq == a) {
            code = create ? cli_usage("namespace", "create: property %s is not KEY=VALUE (or "
                                      "--property KEY=VALUE)", a)
                          : cli_usage("namespace", "%s: unexpected %s", action, a);
            goto out;
        }
        if (!(copies[nprops] = floe_strndup(a, (size_t)(eq - a)))) {
            code = FLOE_EXIT_FAIL;
            goto out;
        }
        keys[nprops] = copies[nprops];
        vals[nprops++] = eq + 1;
    }
    if (!ns && !list) {
        code = cli_usage("namespace", "%s needs NS", action);
        goto out;
    }
    if (to.relocate) {
        code = cli_usage("namespace", "unknown option --relocate");
        goto out;
    }
    if (create && floe_catalog_check_names(ns, NULL, &err) < 0) {
        code = cli_usage("namespace", "create: %s", err.msg);
        goto out;
    }
    if (cli_open_catalog(&to, &c, &err) < 0)
        goto fail;
    if (list) {
        if (floe_catalog_list_namespaces(c, ns, &l, &err) < 0)
            goto fail;
        print_list(&l, to.json);
        goto out;
    }
    if (create ? floe_catalog_create_namespace(c, ns, keys, vals, nprops, &err) < 0
               : floe_catalog_drop_namespace(c, ns, &err) < 0)
        goto fail;
    if (to.json) {
        printf("{\"namespace\":");
        cli_json_str(stdout, ns);
        printf(",\"%s\":true}\n", create ? "created" : "dropped");
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    floe_strlist_free(&l);
    floe_catalog_close(c);
    for (size_t i = 0; copies && i < nprops; i++)
        floe_free(copies[i]);
    free(copies);
    free(keys);
    free(vals);
    return code;
}

/* The namespace's properties as {"k":"v",...}, or "k = v" lines, without PyIceberg's
 * "exists" marker. */
static void print_namespace_properties(const floe_strlist *lk, const floe_strlist *lv,
                                       bool json) {
    if (json)
        printf("{");
    for (size_t i = 0, shown = 0; i < lk->n; i++) {
        if (!strcmp(lk->items[i], NS_EXISTS_KEY))
            continue;
        const char *v = i < lv->n ? lv->items[i] : "";
        if (json) {
            printf("%s", shown++ ? "," : "");
            cli_json_str(stdout, lk->items[i]);
            printf(":");
            cli_json_str(stdout, v);
        } else {
            cli_print_kv_text("", lk->items[i], v);
        }
    }
    if (json)
        printf("}");
}

/* The value of key among the loaded properties, or NULL. */
static const char *ns_property(const floe_strlist *lk, const floe_strlist *lv, const char *key) {
    for (size_t i = 0; i < lk->n; i++)
        if (!strcmp(lk->items[i], key))
            return i < lv->n ? lv->items[i] : "";
    return NULL;
}

/* floe namespace properties NS [set K=V... | unset K...]: the same form as
 * floe table properties. */
static int namespace_properties(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *ns = NULL, *verb = NULL;
    char **items = calloc((size_t)argc + 1, sizeof *items);
    const char **keys = calloc((size_t)argc + 1, sizeof *keys);
    const char **vals = calloc((size_t)argc + 1, sizeof *vals);
    bool *absent = calloc((size_t)argc + 1, sizeof *absent); /* keys to unset not set */
    size_t n = 0;
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_strlist lk = {0}, lv = {0};
    if (!items || !keys || !vals || !absent) {
        code = FLOE_EXIT_FAIL;
        goto out;
    }
    for (int i = 2; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0) {
            code = cli_usage("namespace", "%s needs a value", argv[i]);
            goto out;
        }
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (!strcmp(a, "--set") || !strcmp(a, "--remove")) {
            code = cli_usage("namespace", "properties: %s is gone: floe namespace properties "
                             "NS set K=V... | unset K... (as floe table properties)", a);
            goto out;
        }
        if (a[0] == '-' && a[1]) {
            code = cli_usage("namespace", "properties: unknown option %s", a);
            goto out;
        }
        if (!ns)
            ns = a;
        else if (!verb)
            verb = a;
        else
            items[n++] = strdup(a);
        if (n && !items[n - 1]) {
            code = FLOE_EXIT_FAIL;
            goto out;
        }
    }
    if (!ns) {
        code = cli_usage("namespace", "properties needs NS");
        goto out;
    }
    if (verb && strcmp(verb, "set") && strcmp(verb, "unset")) {
        code = cli_usage("namespace", "properties: %s: the actions are set K=V... and unset K...",
                         verb);
        goto out;
    }
    bool set = verb && !strcmp(verb, "set");
    if (verb && !n) {
        code = cli_usage("namespace", "properties %s: which %s?", verb, set ? "K=V" : "K");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(items[i], '=');
        if (set && (!eq || eq == items[i])) {
            code = cli_usage("namespace", "properties set: %s is not K=V", items[i]);
            goto out;
        }
        if (!set && (eq || !*items[i])) {
            code = cli_usage("namespace", "properties unset: %s is not a property name",
                             items[i]);
            goto out;
        }
        if (eq)
            *eq = 0;
        keys[i] = items[i];
        vals[i] = eq ? eq + 1 : NULL;
        if (!strcmp(keys[i], NS_EXISTS_KEY)) {
            code = cli_usage("namespace", "properties %s: %s is reserved: the SQL catalog's "
                             "marker that the namespace exists", verb, keys[i]);
            goto out;
        }
    }
    if (to.relocate) {
        code = cli_usage("namespace", "unknown option --relocate");
        goto out;
    }
    if (cli_open_catalog(&to, &c, &err) < 0 ||
        floe_catalog_load_namespace_properties(c, ns, &lk, &lv, &err) < 0)
        goto fail;
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        const char *cur = ns_property(&lk, &lv, keys[i]);
        absent[i] = !cur;
        changed = changed || (set ? !cur || strcmp(cur, vals[i]) : cur != NULL);
    }
    if (changed) {
        if (floe_catalog_update_namespace_properties(c, ns, set ? NULL : keys, set ? 0 : n,
                                                     set ? keys : NULL, set ? vals : NULL,
                                                     set ? n : 0, &err) < 0)
            goto fail;
        floe_strlist_free(&lk);
        floe_strlist_free(&lv);
        if (floe_catalog_load_namespace_properties(c, ns, &lk, &lv, &err) < 0)
            goto fail;
    }
    if (to.json && verb) {
        printf("{\"namespace\":");
        cli_json_str(stdout, ns);
        printf(",\"changed\":%s,\"properties\":", changed ? "true" : "false");
        print_namespace_properties(&lk, &lv, true);
        printf("}\n");
    } else if (to.json || !verb) {
        print_namespace_properties(&lk, &lv, to.json);
        if (to.json)
            printf("\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            if (set) {
                cli_print_kv_text("", keys[i], vals[i]);
            } else {
                if (!absent[i])
                    fputs("unset ", stdout);
                cli_print_text(stdout, keys[i]);
                fputs(absent[i] ? ": not set\n" : "\n", stdout);
            }
        }
        if (!changed) {
            cli_print_text(stdout, ns);
            printf(": nothing changed (the properties already were so)\n");
        }
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    floe_strlist_free(&lk);
    floe_strlist_free(&lv);
    floe_catalog_close(c);
    for (size_t i = 0; items && i < n; i++)
        free(items[i]);
    free(items);
    free(keys);
    free(vals);
    free(absent);
    return code;
}

int floe_cmd_namespace(int argc, char **argv) {
    bool help = argc < 2;
    for (int i = 1; i < argc; i++) /* --help after an action too: namespace create --help */
        help = help || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
    if (help) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: floe namespace create NS [K=V | --property K=V]... | list [PARENT] |\n"
                "                      drop NS |\n"
                "                      properties NS [set K=V... | unset K...]\n"
                "                      [--json] [--catalog NAME] [--config FILE]\n"
                "\nproperties takes set and unset as floe table properties does; a change\n"
                "prints what it did (--json: {\"namespace\", \"changed\", \"properties\"}).\n");
        return argc < 2 ? FLOE_EXIT_USAGE : FLOE_EXIT_OK;
    }
    const char *action = argv[1];
    if (!strcmp(action, "create") || !strcmp(action, "list") || !strcmp(action, "drop"))
        return namespace_basic(action, argc, argv);
    if (!strcmp(action, "properties"))
        return namespace_properties(argc, argv);
    return cli_usage("namespace", "unknown action %s", action);
}

/* ---------------------------------------------------------------------------------------
 * floe snapshots / floe files
 * ------------------------------------------------------------------------------------- */

/* s right-aligned in width columns, as cli_print_text writes it. */
static void print_right(const char *s, size_t width) {
    size_t w = cli_text_width(s);
    for (; w < width; w++)
        putchar(' ');
    cli_print_text(stdout, s);
}

int floe_cmd_snapshots(int argc, char **argv) {
    cli_table_opts to = {0};
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    static const char *const actions[] = {"rollback", "set-current", "cherrypick"};
    for (size_t k = 0; argc > 1 && k < sizeof actions / sizeof actions[0]; k++)
        if (!strcmp(argv[1], actions[k]))
            return cli_snapshots_action(argc - 1, argv + 1);
    int code = cli_one_table_open(
        argc, argv, "snapshots",
        "usage: floe snapshots TABLE [--json] [--catalog NAME] [--config FILE]\n"
        "       floe snapshots rollback|set-current|cherrypick ... (see\n"
        "       floe snapshots rollback --help)\n"
        "\nLists the table's snapshots, oldest first, with operation, sequence\n"
        "number, parent, time and the summary's record counts.\n",
        &to, &c, &t);
    if (code >= 0)
        return code;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    if (to.json)
        printf("[");
    else
        printf("%-20s %-20s %5s %-24s %-10s %12s %12s\n", "snapshot", "parent", "seq", "time",
               "operation", "added-rec", "total-rec");
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        char tb[48];
        floe_scan_format_time(s->timestamp_ms, tb, sizeof tb);
        if (to.json) {
            printf("%s{\"snapshot_id\":%" PRId64 ",\"parent_snapshot_id\":", i ? "," : "",
                   s->snapshot_id);
            if (s->has_parent)
                printf("%" PRId64, s->parent_snapshot_id);
            else
                printf("null");
            printf(",\"sequence_number\":%" PRId64 ",\"timestamp_ms\":%" PRId64
                   ",\"current\":%s,\"manifest_list\":",
                   s->sequence_number, s->timestamp_ms,
                   s->snapshot_id == m->current_snapshot_id ? "true" : "false");
            cli_json_str(stdout, s->manifest_list ? s->manifest_list : "");
            printf(",\"summary\":");
            cli_print_kv_json(s->summary, s->n_summary);
            printf("}");
        } else {
            char parent[24] = "-";
            if (s->has_parent)
                snprintf(parent, sizeof parent, "%" PRId64, s->parent_snapshot_id);
            const char *ar = cli_summary_value(s, "added-records"), *tr = cli_summary_value(s, "total-records");
            printf("%-20" PRId64 " %-20s %5" PRId64 " %-24s ", s->snapshot_id, parent,
                   s->sequence_number, tb);
            /* operation and counts are strings another engine may have written */
            cli_print_padded(stdout, s->operation ? s->operation : "?", 10);
            putchar(' ');
            print_right(ar ? ar : "-", 12);
            putchar(' ');
            print_right(tr ? tr : "-", 12);
            printf("%s\n", s->snapshot_id == m->current_snapshot_id ? "  (current)" : "");
        }
    }
    if (to.json)
        printf("]\n");
    cli_close_table(c, t);
    return FLOE_EXIT_OK;
}

int floe_cmd_files(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *table = NULL;
    floe_scan_options so;
    memset(&so, 0, sizeof so);
    for (int i = 1; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0)
            return cli_usage("files", "%s needs a value", argv[i]);
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: floe files TABLE [--snapshot ID] [--json] [--catalog NAME]\n"
                   "\nLists the live data files of the current (or given) snapshot with\n"
                   "their partition, record count, size and the delete files that apply.\n");
            return FLOE_EXIT_OK;
        }
        if (!strcmp(argv[i], "--snapshot") && i + 1 < argc) {
            if (!cli_parse_id(argv[++i], &so.snapshot_id))
                return cli_usage("files", "--snapshot wants an id (a signed 64-bit integer)");
            so.has_snapshot_id = true;
            continue;
        }
        if (argv[i][0] == '-' || table)
            return cli_usage("files", "unexpected %s", argv[i]);
        table = argv[i];
    }
    if (!table)
        return cli_usage("files", "no TABLE given");
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    floe_scan_plan *p = NULL;
    int code = FLOE_EXIT_OK;
    floe_buf b;
    floe_buf_init(&b, 0);
    if (cli_open_table(table, &to, false, &c, &t, &err) < 0 ||
        floe_scan_plan_files(t, &so, &p, &err) < 0) {
        code = cli_fail(&err);
        goto out;
    }
    if (to.json)
        printf("[");
    for (size_t i = 0; i < p->ntasks; i++) {
        const floe_scan_task *k = &p->tasks[i];
        floe_buf_reset(&b);
        if (k->spec && k->spec->nfields &&
            floe_partition_spec_path(k->spec, k->file->partition, &b, NULL) < 0)
            floe_buf_reset(&b); /* a tuple without a path prints as "" */
        floe_buf_append_byte(&b, 0);
        if (to.json) {
            printf("%s{\"path\":", i ? "," : "");
            cli_json_str(stdout, k->file->file_path);
            printf(",\"partition\":");
            cli_json_str(stdout, (const char *)b.data);
            printf(",\"spec_id\":%d,\"records\":%" PRId64 ",\"bytes\":%" PRId64
                   ",\"sequence_number\":%" PRId64 ",\"delete_files\":%zu}",
                   k->spec_id, k->file->record_count, k->file->file_size_in_bytes,
                   k->data_sequence_number, k->ndeletes);
        } else {
            /* paths and partition values other engines wrote: a tab or newline in
             * them must not forge columns or lines */
            cli_print_text(stdout, k->file->file_path);
            putchar('\t');
            cli_print_text(stdout, *(const char *)b.data ? (const char *)b.data : "-");
            printf("\t%" PRId64 " rows\t%" PRId64 " bytes%s\n", k->file->record_count,
                   k->file->file_size_in_bytes, k->ndeletes ? "\t(with deletes)" : "");
        }
    }
    if (to.json)
        printf("]\n");
out:
    floe_buf_free(&b);
    floe_scan_plan_free(p);
    cli_close_table(c, t);
    return code;
}
