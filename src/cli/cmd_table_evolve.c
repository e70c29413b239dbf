/*
 * cmd_table_evolve.c - `floe table properties` and `floe table sort-order`: showing and
 * changing a table's properties and its default sort order.
 *
 * Each change is one catalog commit (floe_table_commit: validation against fresh
 * metadata, optimistic-concurrency retry); a change that leaves the metadata as it was
 * commits nothing. Tables are named NS.NAME to be changed; a folder or metadata file can
 * be shown.
 *
 * Reserved properties are those Iceberg derives from the metadata itself (the REST
 * catalog's reserved set): format-version, uuid, snapshot-count, current-snapshot-id,
 * current-snapshot-summary, current-snapshot-timestamp-ms, current-schema,
 * default-partition-spec, default-sort-order. Setting one would not change what it names,
 * so it is refused, pointing at the command that does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/partition.h"
#include "floe/schema.h"
#include "table_args.h"
#include "table_evolve.h"

static const struct {
    const char *key, *instead;
} reserved_props[] = {
    {"format-version", "floe table upgrade NS.NAME changes the format version"},
    {"uuid", "the table uuid never changes"},
    {"snapshot-count", "it is derived from the snapshots"},
    {"current-snapshot-id", "floe snapshots set-current or rollback moves it"},
    {"current-snapshot-summary", "it is derived from the current snapshot"},
    {"current-snapshot-timestamp-ms", "it is derived from the current snapshot"},
    {"current-schema", "it is derived from the current schema"},
    {"default-partition-spec", "it is derived from the default partition spec"},
    {"default-sort-order", "floe table sort-order NS.NAME set ... changes it"},
};

const char *cli_reserved_property(const char *key) {
    for (size_t i = 0; i < sizeof reserved_props / sizeof reserved_props[0]; i++)
        if (!strcmp(key, reserved_props[i].key))
            return reserved_props[i].instead;
    return NULL;
}

typedef struct props_change {
    const floe_kv *set;
    size_t nset;
    const char *const *unset;
    size_t nunset;
    bool changed; /* out: the last attempt changed something */
} props_change;

static int props_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    props_change *pc = ctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    bool changed = false;
    /* on this attempt's base: the properties that go together still do */
    FLOE_FORWARD_IF_ERROR(floe_table_properties_check(base, pc->set, pc->nset, pc->unset,
                                                      pc->nunset, err));
    for (size_t i = 0; i < pc->nset; i++) {
        const char *cur = floe_table_metadata_property(base, pc->set[i].key);
        if (cur && !strcmp(cur, pc->set[i].value))
            continue;
        changed = true;
        FLOE_FORWARD_IF_ERROR(
            floe_metadata_builder_set_property(b, pc->set[i].key, pc->set[i].value, err));
    }
    for (size_t i = 0; i < pc->nunset; i++) {
        if (!floe_table_metadata_property(base, pc->unset[i]))
            continue;
        changed = true;
        FLOE_FORWARD_IF_ERROR(floe_metadata_builder_remove_property(b, pc->unset[i], err));
    }
    pc->changed = changed;
    return changed ? 0 : FLOE_COMMIT_NOOP;
}

/* floe table properties TABLE [set K=V... | unset K...] */
int cli_table_properties(int nargs, char **args, const cli_table_opts *to) {
    if (nargs < 1)
        return cli_usage("table", "properties needs NS.NAME");
    const char *ident = args[0];
    const char *verb = nargs > 1 ? args[1] : NULL;
    if (verb && strcmp(verb, "set") && strcmp(verb, "unset"))
        return cli_usage("table", "properties: %s: the actions are set K=V... and unset K...",
                         verb);
    if (verb && nargs < 3)
        return cli_usage("table", "properties %s: which %s?", verb,
                         !strcmp(verb, "set") ? "K=V" : "K");
    size_t n = verb ? (size_t)nargs - 2 : 0;
    floe_kv *set = calloc(n + 1, sizeof *set);
    char **copies = calloc(n + 1, sizeof *copies);
    bool *absent = calloc(n + 1, sizeof *absent); /* keys to unset that are not set */
    char **folders = calloc(n + 1, sizeof *folders); /* write paths made absolute */
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    props_change pc = {0};
    if (!set || !copies || !absent || !folders) {
        code = FLOE_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *a = args[2 + i];
        char *cp = copies[i] = strdup(a);
        if (!cp) {
            code = FLOE_EXIT_FAIL;
            goto out;
        }
        char *eq = strchr(cp, '=');
        if (!strcmp(verb, "set")) {
            if (!eq || eq == cp) {
                code = cli_usage("table", "properties set: %s is not K=V", a);
                goto out;
            }
            *eq = 0;
            set[i] = (floe_kv){cp, eq + 1};
        } else if (eq || !*cp) {
            code = cli_usage("table", "properties unset: %s is not a property name", a);
            goto out;
        }
        const char *why = cli_reserved_property(cp);
        if (why) {
            code = cli_usage("table", "properties %s: %s is reserved: %s", verb, cp, why);
            goto out;
        }
        if (eq && floe_table_property_check(cp, eq + 1, &err) < 0) {
            code = cli_usage("table", "properties set: %s", err.msg);
            goto out;
        }
    }
    if (verb && !strcmp(verb, "set")) {
        pc.set = set;
        pc.nset = n;
    } else if (verb) {
        pc.unset = (const char *const *)copies;
        pc.nunset = n;
    }
    if (cli_open_table(ident, to, verb != NULL, &c, &t, &err) < 0)
        goto fail;
    /* a folder the table writes to is recorded absolute, and must be the table's own:
     * inside another table's location, that table's orphan removal would delete its files */
    for (size_t i = 0; i < pc.nset; i++) {
        const char *tns = floe_table_namespace(t);
        int rc = floe_table_check_write_path(tns ? c : NULL, tns, floe_table_name(t),
                                             floe_table_root(t), set[i].key, set[i].value,
                                             &folders[i], &err);
        if (rc == FLOE_ENOMEM)
            goto fail;
        if (rc < 0) {
            code = cli_usage("table", "properties set: %s", err.msg);
            goto out;
        }
        if (folders[i])
            set[i].value = folders[i];
    }
    if (verb && floe_table_properties_check(floe_table_metadata_get(t), pc.set, pc.nset,
                                            pc.unset, pc.nunset, &err) < 0) {
        code = cli_usage("table", "properties %s: %s", verb, err.msg);
        goto out;
    }
    bool committed = false;
    /* which of the keys to unset are there now (for the text report) */
    for (size_t i = 0; i < pc.nunset; i++)
        absent[i] = !floe_table_metadata_property(floe_table_metadata_get(t), pc.unset[i]);
    if (verb) {
        if (floe_table_commit(t, props_apply, &pc, &err) < 0)
            goto fail;
        committed = pc.changed;
    }
    const floe_table_metadata *m = floe_table_metadata_get(t);
    if (to->json) {
        if (!verb) {
            cli_print_kv_json(m->properties, m->n_properties);
            printf("\n");
        } else {
            printf("{\"table\":");
            cli_json_str(stdout, ident);
            printf(",\"changed\":%s,\"properties\":", committed ? "true" : "false");
            cli_print_kv_json(m->properties, m->n_properties);
            printf("}\n");
        }
    } else if (!verb) {
        for (size_t i = 0; i < m->n_properties; i++)
            cli_print_kv_text("", m->properties[i].key, m->properties[i].value);
    } else {
        for (size_t i = 0; i < pc.nset; i++)
            cli_print_kv_text("", pc.set[i].key, pc.set[i].value);
        for (size_t i = 0; i < pc.nunset; i++)
            printf(absent[i] ? "%s: not set\n" : "unset %s\n", pc.unset[i]);
        if (!committed)
            printf("%s: nothing changed (the properties already were so)\n", ident);
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    cli_close_table(c, t);
    for (size_t i = 0; copies && i < n; i++)
        free(copies[i]);
    free(copies);
    for (size_t i = 0; folders && i < n; i++)
        floe_free(folders[i]);
    free(folders);
    free(absent);
    free(set);
    return code;
}

/* ---------------------------------------------------------------------------------------
 * sort order
 * ------------------------------------------------------------------------------------- */

/* The default sort order of m as text ("" when unsorted); NULL on failure (err set). */
char *cli_sort_order_text(const floe_table_metadata *m, floe_error *err) {
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    floe_schema *schema = NULL;
    floe_sort_order *order = NULL;
    char *text = NULL;
    if (m->default_sort_order_id == 0)
        return floe_strdup("");
    for (size_t i = 0; i < m->n_sort_orders; i++) {
        if (m->sort_orders[i].order_id != m->default_sort_order_id)
            continue;
        if (ms && floe_schema_parse(ms->json, strlen(ms->json), &schema, err) < 0)
            goto done;
        if (floe_sort_order_parse_json(m->sort_orders[i].json, strlen(m->sort_orders[i].json),
                                       NULL, &order, err) < 0)
            goto done;
        if (!(text = floe_sort_order_to_string(order, schema)))
            floe_error_set(err, FLOE_ENOMEM, "out of memory");
        goto done;
    }
    floe_error_set(err, FLOE_ECORRUPT, "default-sort-order-id %d names no sort order",
                   (int)m->default_sort_order_id);
done:
    floe_sort_order_free(order);
    floe_schema_free(schema);
    return text;
}

typedef struct sort_change {
    const char *text; /* NULL: clear */
    int32_t order_id; /* out */
    bool changed;     /* out: the last attempt changed the default order */
} sort_change;

static int sort_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    sort_change *sc = ctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(base);
    floe_schema *schema = NULL;
    floe_sort_order *order = NULL;
    char *json = NULL;
    int rc = 0;
    if (sc->text) {
        if (!ms)
            FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema");
        FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &schema, err));
        FLOE_CHECK(floe_sort_order_parse(schema, sc->text, 1, &order, err));
        if (!(json = floe_sort_order_to_json(order)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    int32_t before = base->default_sort_order_id;
    FLOE_CHECK(floe_metadata_builder_set_default_sort_order(b, json, &sc->order_id, err));
    /* the same order already the default: nothing to commit */
    sc->changed = sc->order_id != before;
    if (!sc->changed)
        rc = FLOE_COMMIT_NOOP;
done:
    floe_free(json);
    floe_sort_order_free(order);
    floe_schema_free(schema);
    return rc;
}

/* sort-order set TEXT: an order that does not parse against the current schema is a bad
 * argument, a usage error naming it (the commit reads it again against the metadata it
 * commits on). FLOE_EXIT_OK when it parses. */
static int sort_check(const floe_table_metadata *m, const char *text) {
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    floe_error err;
    floe_error_clear(&err);
    floe_schema *schema = NULL;
    floe_sort_order *order = NULL;
    int code = FLOE_EXIT_OK;
    if (ms && floe_schema_parse(ms->json, strlen(ms->json), &schema, &err) < 0)
        code = cli_fail(&err);
    else if (ms && floe_sort_order_parse(schema, text, 1, &order, &err) < 0)
        code = err.code == FLOE_ENOMEM ? cli_fail(&err)
                                       : cli_usage("table", "sort-order set \"%s\": %s", text,
                                                   err.msg);
    floe_sort_order_free(order);
    floe_schema_free(schema);
    return code;
}

/* floe table sort-order TABLE [set "ts DESC, id" | clear] */
int cli_table_sort_order(int nargs, char **args, const cli_table_opts *to) {
    if (nargs < 1)
        return cli_usage("table", "sort-order needs NS.NAME");
    const char *ident = args[0];
    const char *verb = nargs > 1 ? args[1] : NULL;
    sort_change sc = {0};
    if (verb && !strcmp(verb, "set") && nargs == 3) {
        sc.text = args[2];
        if (!*sc.text)
            return cli_usage("table", "sort-order set: an empty order; use sort-order %s clear",
                             ident);
    } else if (verb && !(!strcmp(verb, "clear") && nargs == 2)) {
        return cli_usage("table", "sort-order: the actions are set \"col [ASC|DESC] [NULLS "
                         "FIRST|LAST], bucket(N, col) ...\" (one argument) and clear");
    }
    int code = FLOE_EXIT_OK;
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    char *text = NULL;
    bool committed = false;
    if (cli_open_table(ident, to, verb != NULL, &c, &t, &err) < 0)
        goto fail;
    if (sc.text && (code = sort_check(floe_table_metadata_get(t), sc.text)) != FLOE_EXIT_OK)
        goto out;
    if (verb) {
        if (floe_table_commit(t, sort_apply, &sc, &err) < 0)
            goto fail;
        committed = sc.changed;
    }
    const floe_table_metadata *m = floe_table_metadata_get(t);
    if (!(text = cli_sort_order_text(m, &err)))
        goto fail;
    if (to->json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        printf(",\"sort_order_id\":%d,\"sort_order\":", (int)m->default_sort_order_id);
        cli_json_str(stdout, text);
        if (verb)
            printf(",\"changed\":%s", committed ? "true" : "false");
        printf("}\n");
    } else if (!*text) {
        printf("%s is unsorted%s\n", ident, verb && !committed ? " (nothing changed)" : "");
    } else {
        printf("%s is sorted by %s (order %d)%s\n", ident, text, (int)m->default_sort_order_id,
               verb && !committed ? " (nothing changed)" : "");
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    floe_free(text);
    cli_close_table(c, t);
    return code;
}
