/*
 * cmd_table_schema.c - `floe table schema` and `floe table partition`: showing a table's
 * current schema or partition spec, and evolving them.
 *
 *   floe table schema TABLE
 *   floe table schema NS.NAME add-column PATH TYPE [--doc TEXT]
 *                             rename-column PATH NEW_NAME | drop-column PATH
 *                             widen PATH TYPE | make-optional PATH
 *                             move-column PATH first|before X|after X
 *                             set-identifier-fields [PATH...]
 *   floe table partition TABLE
 *   floe table partition NS.NAME add-field TERM | drop-field NAME|TERM | replace "SPEC"
 *
 * Each change is one catalog commit (floe_table_commit: applied to fresh metadata,
 * retried on a conflict) through floe_metadata_builder_update_schema / _update_spec,
 * which hold the spec's rules; a change that leaves the table as it was commits nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "table_args.h"
#include "table_evolve.h"

/* ---------------------------------------------------------------------------------------
 * schema
 * ------------------------------------------------------------------------------------- */

static void print_field(const floe_field *f, int depth) {
    char ty[96];
    printf("  %-5d %*s", (int)f->id, depth * 2, "");
    cli_print_text(stdout, f->name);
    printf(": %s%s", floe_field_type_str(f, ty, sizeof ty), f->required ? " (required)" : "");
    if (f->doc) {
        printf("  -- ");
        cli_print_text(stdout, f->doc);
    }
    printf("\n");
    for (size_t i = 0; f->type != FLOE_TYPE_VARIANT && i < f->nchildren; i++)
        print_field(&f->children[i], depth + 1); /* a variant's parts are no fields */
}

static int print_schema(const char *ident, const floe_table_metadata *m, const char *verb,
                        bool committed, bool json, floe_error *err) {
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    floe_schema *s = NULL;
    if (!ms)
        return floe_error_set(err, FLOE_ECORRUPT, "%s: no current schema", ident);
    FLOE_FORWARD_IF_ERROR(floe_schema_parse(ms->json, strlen(ms->json), &s, err));
    if (json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        if (verb)
            printf(",\"changed\":%s", committed ? "true" : "false");
        printf(",\"schema_id\":%d,\"last_column_id\":%d,\"schema\":%s}\n",
               (int)m->current_schema_id, (int)m->last_column_id, ms->json);
    } else {
        if (verb && !committed)
            printf("%s: nothing changed (the schema already was so)\n", ident);
        printf("%s: schema %d (last column id %d)\n", ident, (int)m->current_schema_id,
               (int)m->last_column_id);
        for (size_t i = 0; i < s->root.nchildren; i++)
            print_field(&s->root.children[i], 0);
        if (s->n_identifier) {
            char p[512];
            printf("identifier fields:");
            for (size_t i = 0; i < s->n_identifier; i++) {
                const floe_field *f = floe_schema_find_id(s, s->identifier_field_ids[i]);
                printf("%s %s", i ? "," : "", f ? floe_field_path(f, p, sizeof p) : "?");
            }
            printf("\n");
        }
    }
    floe_schema_free(s);
    return 0;
}

typedef struct schema_commit {
    const floe_schema_change *change;
    floe_table *t;  /* the table (commit_and_print sets it): a drop reads its manifests */
    bool changed; /* out: the last attempt changed the schema */
} schema_commit;

static int schema_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    schema_commit *sc = ctx;
    int rc = floe_metadata_builder_update_schema(b, sc->change, NULL, err);
    if (rc < 0)
        return rc;
    /* on the base this attempt commits on: a delete added meanwhile counts */
    if (rc == 0 && sc->change->kind == FLOE_SCHEMA_DROP_COLUMN && sc->t &&
        (rc = floe_table_check_drop_column(sc->t, floe_metadata_builder_base(b),
                                           sc->change->path, err)) < 0)
        return rc;
    sc->changed = rc == 0;
    return sc->changed ? 0 : FLOE_COMMIT_NOOP;
}

/* A table change's commit and report; shared by schema and partition changes. check, when
 * given, reads the change's text against the table as opened: what it refuses is a bad
 * argument (a usage error naming it), not a failure of the commit. *table (when given)
 * holds the table while apply may run. */
static int commit_and_print(const char *ident, const cli_table_opts *to, const char *verb,
                            floe_commit_apply_fn apply, void *ctx, const bool *changed,
                            floe_table **table,
                            int (*check)(const floe_table_metadata *, const void *,
                                         floe_error *),
                            int (*print)(const char *, const floe_table_metadata *,
                                         const char *, bool, bool, floe_error *)) {
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int code = FLOE_EXIT_OK;
    if (cli_open_table(ident, to, verb != NULL, &c, &t, &err) < 0)
        code = cli_fail(&err);
    else if (check && check(floe_table_metadata_get(t), ctx, &err) < 0)
        code = err.code == FLOE_EINVALID || err.code == FLOE_ENOTFOUND
                   ? cli_usage("table", "%s", err.msg)
                   : cli_fail(&err);
    else {
        if (table)
            *table = t;
        if ((verb && floe_table_commit(t, apply, ctx, &err) < 0) ||
            print(ident, floe_table_metadata_get(t), verb, verb && *changed, to->json, &err) < 0)
            code = cli_fail(&err);
    }
    floe_table_close(t);
    floe_catalog_close(c);
    return code;
}

static const struct {
    const char *verb;
    floe_schema_change_kind kind;
    int nargs; /* positional arguments after PATH (-1: any number of paths, PATH included) */
} schema_verbs[] = {
    {"add-column", FLOE_SCHEMA_ADD_COLUMN, 1},     {"rename-column", FLOE_SCHEMA_RENAME_COLUMN, 1},
    {"drop-column", FLOE_SCHEMA_DROP_COLUMN, 0},   {"widen", FLOE_SCHEMA_WIDEN_COLUMN, 1},
    {"make-optional", FLOE_SCHEMA_MAKE_OPTIONAL, 0}, {"move-column", FLOE_SCHEMA_MOVE_COLUMN, 1},
    {"set-identifier-fields", FLOE_SCHEMA_SET_IDENTIFIER, -1},
};

#define SCHEMA_VERBS "add-column, rename-column, drop-column, widen, make-optional, " \
                     "move-column, set-identifier-fields"

/* A change naming a column the table does not have (as opened; the commit reads it again)
 * is a bad argument, as it is to partition add-field and sort-order set. What the rules of
 * schema evolution refuse is left to the commit (exit 1, README). */
static int schema_check(const floe_table_metadata *m, const void *ctx, floe_error *err) {
    const schema_commit *sc = ctx;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    floe_schema *base = NULL, *s = NULL;
    int32_t last = m->last_column_id;
    int rc = 0;
    if (!ms)
        return 0; /* the commit reports it */
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &base, err));
    rc = floe_schema_update(base, sc->change, &last, &s, err);
    if (rc < 0 && err->code != FLOE_ENOTFOUND) {
        floe_error_clear(err);
        rc = 0;
    }
done:
    floe_schema_free(s);
    floe_schema_free(base);
    return rc;
}

/* floe table schema TABLE [VERB ARGS...] */
int cli_table_schema(int nargs, char **args, const cli_table_opts *to) {
    if (nargs < 1)
        return cli_usage("table", "schema needs a TABLE");
    const char *ident = args[0];
    const char *verb = nargs > 1 ? args[1] : NULL;
    floe_schema_change ch = {0};
    schema_commit sc = {.change = &ch};
    const char *pos[4];
    size_t npos = 0;
    int want = 0;
    if (!verb)
        return commit_and_print(ident, to, NULL, NULL, NULL, NULL, NULL, NULL, print_schema);
    size_t v = 0;
    while (v < sizeof schema_verbs / sizeof schema_verbs[0] && strcmp(schema_verbs[v].verb, verb))
        v++;
    if (v == sizeof schema_verbs / sizeof schema_verbs[0])
        return cli_usage("table", "schema: %s: the changes are " SCHEMA_VERBS, verb);
    ch.kind = schema_verbs[v].kind;
    want = schema_verbs[v].nargs;
    char **rest = args + 2;
    int nrest = nargs - 2;
    if (ch.kind == FLOE_SCHEMA_SET_IDENTIFIER) {
        for (int i = 0; i < nrest; i++)
            if (rest[i][0] == '-')
                return cli_usage("table", "schema set-identifier-fields: unknown option %s",
                                 rest[i]);
        ch.paths = (const char *const *)rest;
        ch.npaths = (size_t)nrest;
    } else {
        for (int i = 0; i < nrest; i++) {
            const char *a = rest[i];
            if (!strcmp(a, "--doc") && ch.kind == FLOE_SCHEMA_ADD_COLUMN) {
                if (i + 1 >= nrest)
                    return cli_usage("table", "--doc needs a value");
                ch.doc = rest[++i];
            } else if (!strcmp(a, "--required") && ch.kind == FLOE_SCHEMA_ADD_COLUMN) {
                ch.required = true;
            } else if (a[0] == '-' && a[1]) {
                return cli_usage("table", "schema %s: unknown option %s", verb, a);
            } else if (npos < sizeof pos / sizeof pos[0]) {
                pos[npos++] = a;
            } else {
                return cli_usage("table", "schema %s: too many arguments", verb);
            }
        }
        if (ch.kind == FLOE_SCHEMA_MOVE_COLUMN) {
            /* move-column PATH first | before X | after X */
            const char *where = npos > 1 ? pos[1] : "";
            if (npos == 2 && !strcmp(where, "first"))
                ch.move = FLOE_SCHEMA_MOVE_FIRST;
            else if (npos == 3 && (!strcmp(where, "before") || !strcmp(where, "after"))) {
                ch.move = !strcmp(where, "before") ? FLOE_SCHEMA_MOVE_BEFORE : FLOE_SCHEMA_MOVE_AFTER;
                ch.anchor = pos[2];
            } else
                return cli_usage("table", "schema move-column PATH first|before X|after X");
        } else if (npos != (size_t)want + 1) {
            return cli_usage("table", "schema %s wants %s", verb,
                             ch.kind == FLOE_SCHEMA_ADD_COLUMN    ? "PATH TYPE [--doc TEXT]"
                             : ch.kind == FLOE_SCHEMA_RENAME_COLUMN ? "PATH NEW_NAME"
                             : ch.kind == FLOE_SCHEMA_WIDEN_COLUMN  ? "PATH TYPE"
                                                                    : "PATH");
        }
        ch.path = pos[0];
        if (!*ch.path)
            return cli_usage("table", "schema %s: which column? (PATH is empty)", verb);
        if (ch.kind == FLOE_SCHEMA_ADD_COLUMN || ch.kind == FLOE_SCHEMA_WIDEN_COLUMN)
            ch.type = pos[1];
        else if (ch.kind == FLOE_SCHEMA_RENAME_COLUMN)
            ch.new_name = pos[1];
    }
    /* a new name is JSON text in the metadata (floe_schema_update refuses it too) */
    const char *const named[][2] = {
        {ch.kind == FLOE_SCHEMA_ADD_COLUMN ? ch.path : NULL, "the column name"},
        {ch.doc, "the doc"},
        {ch.new_name, "the new name"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i][0] && !floe_utf8_valid((const uint8_t *)named[i][0], strlen(named[i][0])))
            return cli_usage("table", "schema %s: %s is not valid UTF-8", verb, named[i][1]);
    /* a path or a type that does not parse is a bad argument, as a bad option value is */
    floe_error err;
    floe_error_clear(&err);
    const char *paths[3] = {ch.path, ch.anchor, NULL};
    for (size_t i = 0; i < (ch.kind == FLOE_SCHEMA_SET_IDENTIFIER ? ch.npaths : 2); i++) {
        const char *p = ch.kind == FLOE_SCHEMA_SET_IDENTIFIER ? ch.paths[i] : paths[i];
        if (p && floe_schema_path_check(p, &err) < 0)
            return cli_usage("table", "schema %s: %s", verb, err.msg);
    }
    if ((ch.kind == FLOE_SCHEMA_ADD_COLUMN || ch.kind == FLOE_SCHEMA_WIDEN_COLUMN) &&
        floe_schema_type_check(ch.type, &err) < 0)
        return cli_usage("table", "schema %s: %s", verb, err.msg);
    return commit_and_print(ident, to, verb, schema_apply, &sc, &sc.changed, &sc.t, schema_check,
                            print_schema);
}

/* ---------------------------------------------------------------------------------------
 * partition spec
 * ------------------------------------------------------------------------------------- */

static int print_spec(const char *ident, const floe_table_metadata *m, const char *verb,
                      bool committed, bool json, floe_error *err) {
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
    floe_schema *s = NULL;
    floe_partition_spec *spec = NULL;
    char *text = NULL;
    int rc = 0;
    if (!ms || !sp)
        FLOE_FAIL(err, FLOE_ECORRUPT, "%s: no current schema or default partition spec", ident);
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &s, err));
    FLOE_CHECK(floe_partition_spec_parse_json(sp->json, strlen(sp->json), s, &spec, err));
    if (!(text = floe_partition_spec_to_string(spec)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        if (verb)
            printf(",\"changed\":%s", committed ? "true" : "false");
        printf(",\"spec_id\":%d,\"last_partition_id\":%d,\"partition_spec\":",
               (int)m->default_spec_id, (int)m->last_partition_id);
        cli_json_str(stdout, text);
        printf(",\"spec\":%s}\n", sp->json);
    } else {
        printf("%s: partition spec %d: %s%s\n", ident, (int)m->default_spec_id,
               *text ? text : "(unpartitioned)",
               verb && !committed ? " (nothing changed)" : "");
        for (size_t i = 0; i < spec->nfields; i++) {
            char tb[48];
            printf("  %-5d ", (int)spec->fields[i].field_id);
            cli_print_padded(stdout, spec->fields[i].name, 24);
            printf(" %s(%s)\n", floe_transform_name(spec->fields[i].transform, tb, sizeof tb),
                   spec->fields[i].source_name ? spec->fields[i].source_name : "?");
        }
    }
done:
    floe_free(text);
    floe_partition_spec_free(spec);
    floe_schema_free(s);
    return rc;
}

typedef struct spec_commit {
    floe_spec_change change;
    bool changed;
} spec_commit;

static int spec_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    spec_commit *pc = ctx;
    int rc = floe_metadata_builder_update_spec(b, &pc->change, NULL, err);
    if (rc < 0)
        return rc;
    pc->changed = rc == 0;
    return pc->changed ? 0 : FLOE_COMMIT_NOOP;
}

/* add-field TERM / replace SPEC: the text parses against the current schema (the commit
 * reads it again against the metadata it commits on). */
static int spec_check(const floe_table_metadata *m, const void *ctx, floe_error *err) {
    const spec_commit *pc = ctx;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    floe_schema *s = NULL;
    floe_partition_spec *spec = NULL;
    int rc = 0;
    if (!ms)
        return 0; /* the commit reports it */
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &s, err));
    rc = floe_partition_spec_parse(s, pc->change.text, 0, 0, &spec, err);
    if (rc < 0)
        floe_error_prefix(err, "partition %s \"%s\": ",
                          pc->change.kind == FLOE_SPEC_ADD_FIELD ? "add-field" : "replace",
                          pc->change.text);
done:
    floe_partition_spec_free(spec);
    floe_schema_free(s);
    return rc;
}

/* floe table partition TABLE [add-field TERM | drop-field NAME | replace SPEC] */
int cli_table_partition(int nargs, char **args, const cli_table_opts *to) {
    if (nargs < 1)
        return cli_usage("table", "partition needs a TABLE");
    const char *ident = args[0];
    const char *verb = nargs > 1 ? args[1] : NULL;
    spec_commit pc = {0};
    if (!verb)
        return commit_and_print(ident, to, NULL, NULL, NULL, NULL, NULL, NULL, print_spec);
    if (!strcmp(verb, "add-field"))
        pc.change.kind = FLOE_SPEC_ADD_FIELD;
    else if (!strcmp(verb, "drop-field"))
        pc.change.kind = FLOE_SPEC_DROP_FIELD;
    else if (!strcmp(verb, "replace"))
        pc.change.kind = FLOE_SPEC_REPLACE;
    else
        return cli_usage("table", "partition: %s: the changes are add-field, drop-field and "
                         "replace", verb);
    if (nargs != 3)
        return cli_usage("table", "partition %s wants one argument (quote a spec: "
                         "\"event_type, day(ts)\")", verb);
    pc.change.text = args[2];
    if (pc.change.kind != FLOE_SPEC_REPLACE && !*pc.change.text)
        return cli_usage("table", "partition %s: which field?", verb);
    return commit_and_print(ident, to, verb, spec_apply, &pc, &pc.changed, NULL,
                            pc.change.kind == FLOE_SPEC_DROP_FIELD ? NULL : spec_check,
                            print_spec);
}
