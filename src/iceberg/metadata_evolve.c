/*
 * metadata_evolve.c - schema evolution as a builder change: the table's rules around
 * floe_schema_update, and the new schema made current.
 *
 * Spec: format/spec.md "Schema Evolution" (a new schema with a unique id becomes the
 * current one; type promotion is refused for a partition source whose transform would
 * give other values; date -> timestamp / timestamp_ns on format v3 only).
 *
 * The change is computed from the builder's base, which is the state the commit applies
 * to (the apply function runs again on fresh metadata after a conflict). A schema equal
 * to one the table already has is made current again instead of added twice. The table's
 * name mapping (schema.name-mapping.default), when it has one, is carried across the change
 * in the same commit (floe_name_mapping_evolve).
 */
#include <string.h>

#include "floe/partition.h"
#include "floe/schema.h"
#include "floe/table_metadata.h"

/* ---------------------------------------------------------------------------------------
 * schema
 * ------------------------------------------------------------------------------------- */

static bool id_within(const floe_field *f, int32_t id) {
    if (f->id == id)
        return true;
    for (size_t i = 0; i < f->nchildren; i++)
        if (id_within(&f->children[i], id))
            return true;
    return false;
}

/* The default spec's fields and the default sort order must keep their source columns. */
static int check_drop(const floe_table_metadata *m, const floe_schema *cur, const char *path,
                      floe_error *err) {
    const floe_field *f = floe_schema_find_path(cur, path);
    const floe_metadata_spec *ms = floe_table_metadata_default_spec(m);
    floe_partition_spec *spec = NULL;
    floe_sort_order *order = NULL;
    char tbuf[48];
    int rc = 0;
    if (!f)
        return 0; /* floe_schema_update says so */
    if (ms) {
        FLOE_CHECK(floe_partition_spec_parse_json(ms->json, strlen(ms->json), NULL, &spec, err));
        for (size_t i = 0; i < spec->nfields; i++) {
            const floe_partition_field *pf = &spec->fields[i];
            if (!id_within(f, pf->source_id))
                continue;
            FLOE_FAIL(err, FLOE_EINVALID,
                      "drop-column: %s is the source of partition field %s (%s) of the current "
                      "partition spec %d: %s", path, pf->name,
                      floe_transform_name(pf->transform, tbuf, sizeof tbuf), (int)spec->spec_id,
                      pf->transform.kind == FLOE_XF_VOID
                          ? "a format v1 table keeps dropped partition fields as void ones, "
                            "which still name their source"
                          : "drop the partition field first (floe table partition NS.NAME "
                            "drop-field NAME)");
        }
    }
    for (size_t i = 0; i < m->n_sort_orders; i++) {
        const floe_metadata_sort_order *so = &m->sort_orders[i];
        if (so->order_id != m->default_sort_order_id || so->order_id == 0)
            continue;
        FLOE_CHECK(floe_sort_order_parse_json(so->json, strlen(so->json), NULL, &order, err));
        for (size_t k = 0; k < order->nfields; k++)
            if (id_within(f, order->fields[k].source_id))
                FLOE_FAIL(err, FLOE_EINVALID,
                          "drop-column: %s is in the table's sort order %d: change it first "
                          "(floe table sort-order NS.NAME set ... or clear)", path,
                          (int)so->order_id);
    }
done:
    floe_sort_order_free(order);
    floe_partition_spec_free(spec);
    return rc;
}

static bool feeds(const floe_partition_field *pf, int32_t id) {
    if (pf->source_id == id)
        return true;
    for (size_t k = 0; k < pf->nsource_ids; k++)
        if (pf->source_ids[k] == id)
            return true;
    return false;
}

/* Refuse widening field f at path when, in any of the table's specs, it feeds a partition
 * field whose transform is identity or `other`: "widen: PATH is the source of partition
 * field NAME of spec N (TRANSFORM)<why>". */
static int refuse_partition_source(const floe_table_metadata *m, const floe_field *f,
                                   const char *path, floe_transform_kind other,
                                   const char *why, floe_error *err) {
    int rc = 0;
    floe_partition_spec *spec = NULL;
    for (size_t s = 0; s < m->n_specs; s++) {
        const floe_metadata_spec *ms = &m->specs[s];
        floe_partition_spec_free(spec);
        spec = NULL;
        FLOE_CHECK(floe_partition_spec_parse_json(ms->json, strlen(ms->json), NULL, &spec, err));
        for (size_t i = 0; i < spec->nfields; i++) {
            const floe_partition_field *pf = &spec->fields[i];
            floe_transform_kind k = pf->transform.kind;
            if (feeds(pf, f->id) && (k == FLOE_XF_IDENTITY || k == other))
                FLOE_FAIL(err, FLOE_EINVALID,
                          "widen: %s is the source of partition field %s of spec %d (%s)%s",
                          path, pf->name, (int)spec->spec_id,
                          k == FLOE_XF_IDENTITY ? "identity"
                          : k == FLOE_XF_BUCKET ? "bucket"
                                                : "truncate",
                          why);
        }
    }
done:
    floe_partition_spec_free(spec);
    return rc;
}

/* Partition values are stored in manifests typed as their source at write time: a
 * promotion changes what identity and truncate store for decimals (their fixed width
 * follows the precision), so those are refused; int->long and float->double keep values
 * and their Avro encoding promotes. date -> timestamp / timestamp_ns is format v3's: year,
 * month and day give the same ordinals for a date and its midnight, identity and bucket do
 * not (a date hashes as an int, a timestamp as microseconds), so a column feeding those
 * in any spec is refused. */
static int check_widen(const floe_table_metadata *m, const floe_schema *cur, const char *path,
                       const floe_schema *next, floe_error *err) {
    const floe_field *f = floe_schema_find_path(cur, path);
    const floe_field *nf = f ? floe_schema_find_id(next, f->id) : NULL;
    if (!f || !nf)
        return 0;
    if (f->type == FLOE_TYPE_DATE && nf->type != FLOE_TYPE_DATE) {
        if (m->format_version < 3)
            return floe_error_set(err, FLOE_EINVALID,
                                  "widen: %s: date to %s is a format v3 promotion (this table "
                                  "is v%d: floe table upgrade NS.NAME --format-version 3)",
                                  path, floe_type_name(nf->type), m->format_version);
        return refuse_partition_source(m, f, path, FLOE_XF_BUCKET,
                                       ", which gives other values for a date than for its "
                                       "timestamp", err);
    }
    if (f->type != FLOE_TYPE_DECIMAL || nf->precision == f->precision)
        return 0;
    return refuse_partition_source(m, f, path, FLOE_XF_TRUNCATE,
                                   ", whose values are stored with the decimal's precision",
                                   err);
}

/* Files without field ids read through the name mapping: a schema change carries it
 * along in the same commit (added and renamed fields mapped by their new names), or is
 * refused when a name it moves would make such files unreadable. */
static int evolve_name_mapping(floe_metadata_builder *b, const floe_table_metadata *m,
                               const floe_schema *cur, const floe_schema *next,
                               floe_error *err) {
    const char *text = floe_table_metadata_property(m, "schema.name-mapping.default");
    char *evolved = NULL;
    floe_schema **older = NULL;
    size_t nolder = 0;
    int rc = 0;
    if (!text)
        return 0;
    if ((rc = floe_name_mapping_check(text, err)) < 0) {
        floe_error_prefix(err, "the schema change cannot carry the table's name mapping "
                          "along (fix or unset the property): ");
        return rc;
    }
    /* a name the change moves may have mapped to a field only older schemas hold */
    if (!(older = floe_calloc(m->n_schemas ? m->n_schemas : 1, sizeof *older)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (; nolder < m->n_schemas; nolder++)
        FLOE_CHECK(floe_schema_parse(m->schemas[nolder].json, strlen(m->schemas[nolder].json),
                                     &older[nolder], err));
    FLOE_CHECK(floe_name_mapping_evolve(text, cur, next, (const floe_schema *const *)older,
                                        nolder, &evolved, err));
    if (evolved)
        rc = floe_metadata_builder_set_property(b, "schema.name-mapping.default", evolved, err);
done:
    for (size_t i = 0; older && i < m->n_schemas; i++)
        floe_schema_free(older[i]);
    floe_free(older);
    floe_free(evolved);
    return rc;
}

int floe_metadata_builder_update_schema(floe_metadata_builder *b, const floe_schema_change *c,
                                        int32_t *schema_id, floe_error *err) {
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    const floe_metadata_schema *ms = m ? floe_table_metadata_current_schema(m) : NULL;
    floe_schema *cur = NULL, *next = NULL, *old = NULL;
    char *next_json = NULL, *old_json = NULL;
    int rc = 0;
    if (!ms)
        return floe_error_set(err, FLOE_ECORRUPT, "table metadata without a current schema");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &cur, err));
    int32_t last = m->last_column_id;
    FLOE_CHECK(floe_schema_update(cur, c, &last, &next, err));
    if (c->kind == FLOE_SCHEMA_DROP_COLUMN)
        FLOE_CHECK(check_drop(m, cur, c->path, err));
    if (c->kind == FLOE_SCHEMA_WIDEN_COLUMN)
        FLOE_CHECK(check_widen(m, cur, c->path, next, err));
    /* the same schema as one the table has: that one (the current one: no change) */
    for (size_t i = 0; i < m->n_schemas; i++) {
        floe_schema_free(old);
        old = NULL;
        floe_free(old_json);
        floe_free(next_json);
        old_json = next_json = NULL;
        FLOE_CHECK(floe_schema_parse(m->schemas[i].json, strlen(m->schemas[i].json), &old, err));
        next->schema_id = old->schema_id;
        if (!(old_json = floe_schema_to_json(old, false)) ||
            !(next_json = floe_schema_to_json(next, false)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (strcmp(old_json, next_json))
            continue;
        if (old->schema_id == m->current_schema_id) {
            rc = 1;
        } else {
            FLOE_CHECK(floe_metadata_builder_set_current_schema(b, old->schema_id, err));
        }
        if (schema_id)
            *schema_id = old->schema_id;
        goto done;
    }
    floe_free(next_json);
    if (!(next_json = floe_schema_to_json(next, false)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    int32_t id = 0;
    FLOE_CHECK(floe_metadata_builder_add_schema(b, next_json, &id, err));
    FLOE_CHECK(floe_metadata_builder_set_current_schema(b, id, err));
    if (schema_id)
        *schema_id = id;
done:
    if (rc == 0 && next)
        rc = evolve_name_mapping(b, m, cur, next, err);
    floe_free(next_json);
    floe_free(old_json);
    floe_schema_free(old);
    floe_schema_free(next);
    floe_schema_free(cur);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * a schema given whole (the REST add-schema)
 * ------------------------------------------------------------------------------------- */

/* FLOE_EINVALID when field nf of the new schema (schema-id of the table's old schema,
 * holding of, the field of the same id) changes its type other than by a promotion the
 * spec allows (format/spec.md "Schema Evolution"): int to long, float to double, a decimal's
 * precision widened, date to timestamp / timestamp_ns on format v3, unknown to any type; a
 * nested type stays the nested type it was. */
static int check_same_or_promoted(const floe_field *of, int32_t schema_id, const floe_field *nf,
                                  int format_version, floe_error *err) {
    char was[64], now[64];
    bool ok;
    if (of->type == FLOE_TYPE_UNKNOWN)
        ok = true;
    else if (floe_type_is_nested(of->type) || floe_type_is_nested(nf->type))
        ok = of->type == nf->type;
    else if (of->type == FLOE_TYPE_DATE && nf->type != FLOE_TYPE_DATE)
        ok = format_version >= 3 && floe_schema_type_promotable(of, nf);
    else
        ok = floe_schema_type_promotable(of, nf);
    if (ok)
        return 0;
    floe_field_type_str(of, was, sizeof was);
    floe_field_type_str(nf, now, sizeof now);
    return floe_error_set(err, FLOE_EINVALID,
                          "field %d (%s): type %s in schema %d cannot become %s: the spec "
                          "allows only int to long, float to double, a wider decimal "
                          "precision, date to timestamp or timestamp_ns (format v3) and "
                          "unknown to any type, and the table's files hold %s values",
                          (int)nf->id, nf->name ? nf->name : "?", was, (int)schema_id, now, was);
}

static int check_fields_against(const floe_field *f, const floe_schema *old, int format_version,
                                floe_error *err) {
    for (size_t i = 0; i < f->nchildren; i++) {
        const floe_field *nf = &f->children[i];
        const floe_field *of = floe_schema_find_id(old, nf->id);
        if (of)
            FLOE_FORWARD_IF_ERROR(check_same_or_promoted(of, old->schema_id, nf, format_version,
                                                         err));
        FLOE_FORWARD_IF_ERROR(check_fields_against(nf, old, format_version, err));
    }
    return 0;
}

int floe_metadata_schema_check_evolution(const floe_table_metadata *m, const char *schema_json,
                                         int format_version, floe_error *err) {
    floe_schema *next = NULL, *old = NULL;
    int rc = 0;
    if (!m)
        return 0;
    FLOE_CHECK(floe_schema_parse(schema_json, strlen(schema_json), &next, err));
    for (size_t i = 0; i < m->n_schemas; i++) {
        floe_schema_free(old);
        old = NULL;
        FLOE_CHECK(floe_schema_parse(m->schemas[i].json, strlen(m->schemas[i].json), &old, err));
        old->schema_id = m->schemas[i].schema_id;
        FLOE_CHECK(check_fields_against(&next->root, old, format_version, err));
    }
done:
    floe_schema_free(old);
    floe_schema_free(next);
    return rc;
}
