/*
 * partition_evolve.c - partition spec evolution as a builder change: add or drop a
 * partition field, or replace the spec, and make the result the default spec.
 *
 * Spec: format/spec.md "Partitioning" (equivalent specs: same source ids, transforms and
 * names; "Writers must not create a new partition spec if there already exists a
 * compatible partition spec"; "Partition field IDs must be reused if an existing
 * partition spec contains an equivalent field"), "Partition Evolution" (new field ids
 * above last-partition-id; in v1 fields are not dropped but their transform becomes
 * void, not reordered, and new ones go at the end).
 *
 * The fields are edited as a plain list (spec_work) started from the default spec of the
 * builder's base, then written as spec JSON and parsed back bound to the current schema,
 * which checks each transform against its column's type.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "floe/table_metadata.h"

/* ---------------------------------------------------------------------------------------
 * partition spec
 * ------------------------------------------------------------------------------------- */

typedef struct spec_field {
    int32_t source_id;
    int32_t field_id; /* 0: to assign */
    floe_transform transform;
    char transform_text[48];
    char name[256];
} spec_field;

typedef struct spec_work {
    const floe_table_metadata *m;
    const floe_schema *schema;
    int format_version;
    spec_field *fields;
    size_t n, cap;
    floe_error *err;
} spec_work;

static int work_push(spec_work *w, const spec_field *f) {
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 8;
        if (nc > FLOE_PARTITION_MAX_FIELDS + 1)
            return floe_error_set(w->err, FLOE_ELIMIT, "more than %d partition fields",
                                  FLOE_PARTITION_MAX_FIELDS);
        spec_field *nf = floe_realloc(w->fields, nc * sizeof *nf);
        if (!nf)
            return floe_error_set(w->err, FLOE_ENOMEM, "out of memory");
        w->fields = nf;
        w->cap = nc;
    }
    w->fields[w->n++] = *f;
    return 0;
}

static int field_from(const floe_partition_field *pf, spec_field *out, floe_error *err) {
    memset(out, 0, sizeof *out);
    out->source_id = pf->source_id;
    out->field_id = pf->field_id;
    out->transform = pf->transform;
    const char *tt = pf->transform.kind == FLOE_XF_UNKNOWN && pf->transform_text
                         ? pf->transform_text
                         : floe_transform_name(pf->transform, out->transform_text,
                                               sizeof out->transform_text);
    if (tt != out->transform_text)
        snprintf(out->transform_text, sizeof out->transform_text, "%s", tt);
    if (pf->nsource_ids > 1)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "partition field %s has several source "
                              "columns (format v3), which floe does not evolve", pf->name);
    if (strlen(pf->name) >= sizeof out->name)
        return floe_error_set(err, FLOE_ELIMIT, "partition field name too long");
    strcpy(out->name, pf->name);
    return 0;
}

static bool same_transform(const spec_field *a, const spec_field *b) {
    return a->transform.kind == b->transform.kind && a->transform.param == b->transform.param &&
           (a->transform.kind != FLOE_XF_UNKNOWN || !strcmp(a->transform_text, b->transform_text));
}

static bool is_time(floe_transform_kind k) {
    return k == FLOE_XF_YEAR || k == FLOE_XF_MONTH || k == FLOE_XF_DAY || k == FLOE_XF_HOUR;
}

/* Refuse a field that repeats another or whose name clashes (spec: names unique; like
 * the reference, a partition name that is a column's must be that column's identity). */
static int check_new_field(spec_work *w, const spec_field *f, const char *what) {
    char a[48];
    for (size_t i = 0; i < w->n; i++) {
        const spec_field *o = &w->fields[i];
        if (o->transform.kind == FLOE_XF_VOID)
            continue;
        if (!strcmp(o->name, f->name))
            return floe_error_set(w->err, FLOE_EINVALID,
                                  "%s: the spec already has a partition field named %s", what,
                                  f->name);
        if (o->source_id == f->source_id &&
            (same_transform(o, f) || (is_time(o->transform.kind) && is_time(f->transform.kind))))
            return floe_error_set(w->err, FLOE_EINVALID,
                                  "%s: redundant with partition field %s (%s of the same "
                                  "column): drop that one first or replace the spec", what,
                                  o->name, floe_transform_name(o->transform, a, sizeof a));
    }
    const floe_field *col = floe_schema_find_path(w->schema, f->name);
    if (col && !(f->transform.kind == FLOE_XF_IDENTITY && col->id == f->source_id))
        return floe_error_set(w->err, FLOE_EINVALID,
                              "%s: the partition field name %s is a column's name; give it "
                              "another with AS NAME", what, f->name);
    return 0;
}

/* A v1 void field that would share its name with a new field is renamed NAME_FIELDID, as
 * the reference implementation does. */
static int rename_clashing_void(spec_work *w, const char *name) {
    for (size_t i = 0; i < w->n; i++) {
        spec_field *o = &w->fields[i];
        if (o->transform.kind != FLOE_XF_VOID || strcmp(o->name, name))
            continue;
        char nn[sizeof o->name];
        int k = snprintf(nn, sizeof nn, "%s_%d", o->name, (int)o->field_id);
        if (k < 0 || (size_t)k >= sizeof nn)
            return floe_error_set(w->err, FLOE_ELIMIT, "partition field name too long");
        strcpy(o->name, nn);
    }
    return 0;
}

/* v2: the id of an equivalent field (same source, transform and name) in any spec the
 * table has; 0 when none. */
static int reuse_field_id(spec_work *w, const spec_field *f, int32_t *id) {
    *id = 0;
    if (w->format_version < 2)
        return 0;
    for (size_t s = 0; s < w->m->n_specs && !*id; s++) {
        floe_partition_spec *sp = NULL;
        const floe_metadata_spec *ms = &w->m->specs[s];
        FLOE_FORWARD_IF_ERROR(
            floe_partition_spec_parse_json(ms->json, strlen(ms->json), NULL, &sp, w->err));
        for (size_t i = 0; i < sp->nfields && !*id; i++) {
            spec_field o;
            if (field_from(&sp->fields[i], &o, w->err) < 0)
                continue;
            if (o.source_id == f->source_id && same_transform(&o, f) && !strcmp(o.name, f->name))
                *id = o.field_id;
        }
        floe_partition_spec_free(sp);
    }
    return 0;
}

static int add_fields(spec_work *w, const char *text, bool one, const char *what) {
    floe_partition_spec *add = NULL;
    int rc = 0;
    FLOE_CHECK(floe_partition_spec_parse(w->schema, text, 0, 0, &add, w->err));
    if (one && add->nfields != 1)
        FLOE_FAIL(w->err, FLOE_EINVALID, "%s: one partition field at a time (%zu given); "
                  "replace sets a whole spec", what, add->nfields);
    for (size_t i = 0; i < add->nfields; i++) {
        spec_field f;
        FLOE_CHECK(field_from(&add->fields[i], &f, w->err));
        f.field_id = 0;
        FLOE_CHECK(check_new_field(w, &f, what));
        FLOE_CHECK(rename_clashing_void(w, f.name));
        FLOE_CHECK(reuse_field_id(w, &f, &f.field_id));
        FLOE_CHECK(work_push(w, &f));
    }
done:
    floe_partition_spec_free(add);
    return rc;
}

/* The current field a drop names: its partition name, or its term ("day(ts)", "id"). */
static int find_field(spec_work *w, const char *name, size_t *at) {
    for (size_t i = 0; i < w->n; i++)
        if (w->fields[i].transform.kind != FLOE_XF_VOID && !strcmp(w->fields[i].name, name)) {
            *at = i;
            return 0;
        }
    floe_partition_spec *t = NULL;
    floe_error e;
    floe_error_clear(&e);
    if (floe_partition_spec_parse(w->schema, name, 0, 0, &t, &e) == 0 && t->nfields == 1) {
        spec_field f;
        if (field_from(&t->fields[0], &f, &e) == 0)
            for (size_t i = 0; i < w->n; i++)
                if (w->fields[i].source_id == f.source_id && same_transform(&w->fields[i], &f) &&
                    w->fields[i].transform.kind != FLOE_XF_VOID) {
                    *at = i;
                    floe_partition_spec_free(t);
                    return 0;
                }
    }
    floe_partition_spec_free(t);
    return floe_error_set(w->err, FLOE_ENOTFOUND,
                          "drop-field: the current spec has no partition field %s", name);
}

static void drop_at(spec_work *w, size_t at) {
    if (w->format_version < 2) {
        w->fields[at].transform = (floe_transform){FLOE_XF_VOID, 0};
        strcpy(w->fields[at].transform_text, "void");
        return;
    }
    memmove(&w->fields[at], &w->fields[at + 1], (w->n - at - 1) * sizeof *w->fields);
    w->n--;
}

static int replace_fields(spec_work *w, const char *text) {
    floe_partition_spec *want = NULL;
    int rc = 0;
    FLOE_CHECK(floe_partition_spec_parse(w->schema, text, 0, 0, &want, w->err));
    /* keep (in v1: in place) the fields the new spec repeats, drop the others */
    bool *kept = floe_calloc(want->nfields + 1, sizeof *kept);
    if (!kept)
        FLOE_FAIL(w->err, FLOE_ENOMEM, "out of memory");
    for (size_t i = w->n; i-- > 0;) {
        bool keep = false;
        for (size_t k = 0; k < want->nfields && !keep; k++) {
            spec_field f;
            if ((rc = field_from(&want->fields[k], &f, w->err)) < 0)
                break;
            if (!kept[k] && f.source_id == w->fields[i].source_id &&
                same_transform(&f, &w->fields[i]) && !strcmp(f.name, w->fields[i].name))
                keep = kept[k] = true;
        }
        if (rc < 0)
            break;
        if (!keep && w->fields[i].transform.kind != FLOE_XF_VOID)
            drop_at(w, i);
    }
    if (rc == 0 && w->format_version >= 2) {
        /* v2 takes the order given: rebuild it from the new spec */
        spec_work old = *w;
        w->fields = NULL;
        w->n = w->cap = 0;
        for (size_t k = 0; k < want->nfields && rc == 0; k++) {
            spec_field f;
            if ((rc = field_from(&want->fields[k], &f, w->err)) < 0)
                break;
            f.field_id = 0;
            for (size_t i = 0; i < old.n; i++)
                if (old.fields[i].source_id == f.source_id && same_transform(&old.fields[i], &f) &&
                    !strcmp(old.fields[i].name, f.name))
                    f.field_id = old.fields[i].field_id;
            if (!f.field_id && (rc = check_new_field(w, &f, "replace")) == 0)
                rc = reuse_field_id(w, &f, &f.field_id);
            if (rc == 0)
                rc = work_push(w, &f);
        }
        floe_free(old.fields);
    } else if (rc == 0) {
        for (size_t k = 0; k < want->nfields && rc == 0; k++) {
            spec_field f;
            if (kept[k] || (rc = field_from(&want->fields[k], &f, w->err)) < 0)
                continue;
            f.field_id = 0;
            if ((rc = check_new_field(w, &f, "replace")) == 0 &&
                (rc = rename_clashing_void(w, f.name)) == 0)
                rc = work_push(w, &f);
        }
    }
    floe_free(kept);
done:
    floe_partition_spec_free(want);
    return rc;
}

static char *work_to_json(const spec_work *w) {
    json_t *fields = json_array();
    for (size_t i = 0; fields && i < w->n; i++) {
        const spec_field *f = &w->fields[i];
        json_t *o = json_pack("{s:i, s:s, s:s}", "source-id", (int)f->source_id, "transform",
                              f->transform_text, "name", f->name);
        if (o && f->field_id > 0 && json_object_set_new(o, "field-id", json_integer(f->field_id)))
            o = (json_decref(o), NULL);
        if (!o || json_array_append_new(fields, o)) {
            json_decref(fields);
            return NULL;
        }
    }
    /* the spec id is the builder's to give; 0 keeps the text parseable */
    json_t *spec = fields ? json_pack("{s:i, s:o}", "spec-id", 0, "fields", fields) : NULL;
    char *text = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
    json_decref(spec);
    char *out = text ? floe_strdup(text) : NULL;
    free(text);
    return out;
}

int floe_metadata_builder_update_spec(floe_metadata_builder *b, const floe_spec_change *c,
                                      int32_t *spec_id, floe_error *err) {
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    const floe_metadata_schema *msc = m ? floe_table_metadata_current_schema(m) : NULL;
    const floe_metadata_spec *msp = m ? floe_table_metadata_default_spec(m) : NULL;
    floe_schema *schema = NULL;
    floe_partition_spec *cur = NULL, *next = NULL, *other = NULL;
    spec_work w = {.m = m, .err = err};
    char *json = NULL;
    int rc = 0;
    if (!msc || !msp)
        return floe_error_set(err, FLOE_ECORRUPT, "table metadata without a current schema "
                              "or a default partition spec");
    w.format_version = floe_metadata_builder_format_version(b);
    FLOE_CHECK(floe_schema_parse(msc->json, strlen(msc->json), &schema, err));
    w.schema = schema;
    FLOE_CHECK(floe_partition_spec_parse_json(msp->json, strlen(msp->json), NULL, &cur, err));
    for (size_t i = 0; i < cur->nfields; i++) {
        spec_field f;
        FLOE_CHECK(field_from(&cur->fields[i], &f, err));
        FLOE_CHECK(work_push(&w, &f));
    }
    switch (c->kind) {
    case FLOE_SPEC_ADD_FIELD: FLOE_CHECK(add_fields(&w, c->text, true, "add-field")); break;
    case FLOE_SPEC_DROP_FIELD: {
        size_t at = 0;
        FLOE_CHECK(find_field(&w, c->text, &at));
        drop_at(&w, at);
        break;
    }
    case FLOE_SPEC_REPLACE: FLOE_CHECK(replace_fields(&w, c->text)); break;
    default: FLOE_FAIL(err, FLOE_EINVALID, "unknown partition spec change %d", (int)c->kind);
    }
    /* fresh ids above last-partition-id, for the fields not reusing one */
    int32_t last = m->last_partition_id < FLOE_PARTITION_FIRST_FIELD_ID - 1
                       ? FLOE_PARTITION_FIRST_FIELD_ID - 1
                       : m->last_partition_id;
    for (size_t i = 0; i < w.n; i++)
        if (w.fields[i].field_id > last)
            last = w.fields[i].field_id;
    for (size_t i = 0; i < w.n; i++)
        if (!w.fields[i].field_id) {
            if (last == INT32_MAX)
                FLOE_FAIL(err, FLOE_ELIMIT, "partition field ids exhausted");
            w.fields[i].field_id = ++last;
        }
    if (!(json = work_to_json(&w)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* binding checks each transform against its source column's type */
    FLOE_CHECK(floe_partition_spec_parse_json(json, strlen(json), schema, &next, err));
    for (size_t s = 0; s < m->n_specs; s++) {
        floe_partition_spec_free(other);
        other = NULL;
        FLOE_CHECK(floe_partition_spec_parse_json(m->specs[s].json, strlen(m->specs[s].json),
                                                  NULL, &other, err));
        bool same_ids = other->nfields == next->nfields;
        for (size_t i = 0; same_ids && i < next->nfields; i++)
            same_ids = other->fields[i].field_id == next->fields[i].field_id;
        if (!same_ids || !floe_partition_spec_equivalent(other, next))
            continue;
        if (m->specs[s].spec_id == m->default_spec_id)
            rc = 1;
        else
            FLOE_CHECK(floe_metadata_builder_set_default_spec(b, m->specs[s].spec_id, err));
        if (spec_id)
            *spec_id = m->specs[s].spec_id;
        goto done;
    }
    int32_t id = 0;
    FLOE_CHECK(floe_metadata_builder_add_spec(b, json, &id, err));
    FLOE_CHECK(floe_metadata_builder_set_default_spec(b, id, err));
    if (spec_id)
        *spec_id = id;
done:
    floe_free(json);
    floe_free(w.fields);
    floe_partition_spec_free(other);
    floe_partition_spec_free(next);
    floe_partition_spec_free(cur);
    floe_schema_free(schema);
    return rc;
}
