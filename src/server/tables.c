/*
 * tables.c - the tables `floe serve` ingests into: loaded from the catalog, created from
 * the configuration or (auto_create) from the first batch, and evolved in `evolve` mode.
 *
 * A table's schema and partition spec are read once and cached; an evolve commit swaps
 * them (schema_lock) and keeps the old schema alive until the server closes, because
 * shredder scratches compiled against it may still be in use by a request.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "floe/io.h"
#include "floe/quarantine.h"
#include "floe/scan.h"
#include "server_internal.h"

int64_t srv_table_setting(floe_server *s, const char *table, int which) {
    floe_server_table_config ts;
    pthread_mutex_lock(&s->cfg_mu);
    floe_server_table_settings(&s->cfg, table, &ts);
    pthread_mutex_unlock(&s->cfg_mu);
    switch (which) {
    case SET_SEAL_BYTES: return ts.seal_bytes;
    case SET_SEAL_AGE: return ts.seal_age_ms;
    case SET_COMPACT_BYTES: return ts.compact_bytes;
    case SET_COMPACT_AGE: return ts.compact_age_ms;
    default: return ts.target_file_size;
    }
}

floe_schema_mode srv_table_mode_named(floe_server *s, const char *name) {
    floe_server_table_config ts;
    pthread_mutex_lock(&s->cfg_mu);
    floe_server_table_settings(&s->cfg, name, &ts);
    pthread_mutex_unlock(&s->cfg_mu);
    return (floe_schema_mode)ts.mode;
}

floe_schema_mode srv_table_mode(floe_server *s, const srv_table *t) {
    return srv_table_mode_named(s, t->name);
}

void srv_table_free(srv_table *t) {
    if (!t)
        return;
    while (t->pool) {
        srv_scratch *n = *(srv_scratch **)t->pool; /* first member is `next` */
        srv_scratch_free(t->pool);
        t->pool = n;
    }
    floe_partition_spec_free(t->spec);
    floe_schema_free(t->schema);
    for (size_t i = 0; i < t->nold; i++)
        floe_schema_free(t->old_schemas[i]);
    floe_free(t->old_schemas);
    pthread_rwlock_destroy(&t->schema_lock);
    pthread_mutex_destroy(&t->pool_mu);
    pthread_mutex_destroy(&t->evolve_mu);
    floe_free(t->name);
    floe_free(t->ns);
    floe_free(t->tname);
    floe_free(t->location);
    floe_free(t);
}

/* Schema and spec of an open catalog table into t. */
static int read_table(floe_table *ft, floe_schema **schema, floe_partition_spec **spec,
                      char **location, floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(ft);
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
    floe_schema *sc = NULL;
    floe_partition_spec *ps = NULL;
    int rc = 0;
    if (!ms)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table has no current schema");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &sc, err));
    FLOE_CHECK(floe_schema_check_defaults(sc, err));
    if (sp)
        FLOE_CHECK(floe_partition_spec_parse_json(sp->json, strlen(sp->json), sc, &ps, err));
    else
        FLOE_CHECK(floe_partition_spec_parse(sc, "", 0, 0, &ps, err));
    if (location) {
        char *l = floe_strdup(floe_table_root(ft));
        if (!l)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        *location = l;
    }
    *schema = sc;
    *spec = ps;
    sc = NULL;
    ps = NULL;
done:
    floe_schema_free(sc);
    floe_partition_spec_free(ps);
    return rc;
}

/* Ensure every level of a dotted namespace exists. */
static int ensure_namespace(floe_catalog *c, const char *ns, floe_error *err) {
    char buf[256];
    size_t n = strlen(ns);
    if (n >= sizeof buf)
        return floe_error_set(err, FLOE_EINVALID, "namespace too long");
    for (size_t i = 0; i <= n; i++) {
        if (ns[i] != '.' && ns[i] != 0)
            continue;
        memcpy(buf, ns, i);
        buf[i] = 0;
        bool ex = false;
        FLOE_FORWARD_IF_ERROR(floe_catalog_namespace_exists(c, buf, &ex, err));
        if (!ex) {
            int rc = floe_catalog_create_namespace(c, buf, NULL, NULL, 0, err);
            if (rc < 0 && rc != FLOE_EEXISTS)
                return rc;
        }
    }
    return 0;
}

/* NDJSON lines of a body (a JSON array's elements become lines) for inference. */
static int body_as_lines(const uint8_t *p, size_t n, floe_buf *out) {
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    if (i == n || p[i] != '[')
        return floe_buf_append(out, p, n);
    i++;
    int depth = 0;
    bool in_str = false;
    for (; i < n; i++) {
        uint8_t c = p[i];
        if (in_str) {
            if (c == '\\' && i + 1 < n) {
                FLOE_FORWARD_IF_ERROR(floe_buf_append(out, p + i, 2));
                i++;
                continue;
            }
            if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                break;
            depth--;
        } else if (c == ',' && depth == 0) {
            FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, '\n'));
            continue;
        } else if (c == '\n' || c == '\r') {
            c = ' ';
        }
        FLOE_FORWARD_IF_ERROR(floe_buf_append_byte(out, c));
    }
    return floe_buf_append_byte(out, '\n');
}

/* variant: the table is format v3, so type conflicts may become variant (floe/json.h). */
static int infer_schema(const uint8_t *p, size_t n, const floe_infer_options *io,
                        floe_schema **out, floe_error *err) {
    floe_buf lines;
    floe_buf_init(&lines, 0);
    int rc = body_as_lines(p, n, &lines);
    if (rc < 0)
        rc = floe_error_set(err, rc, "out of memory");
    else
        rc = floe_schema_infer(lines.data, lines.len, io, out, err);
    floe_buf_free(&lines);
    return rc;
}

/* {"fields":[{"source-id":ID,"transform":"day","name":"<ts>_day"}]} for the first
 * top-level timestamp, or NULL (unpartitioned). */
static char *auto_spec(const floe_schema *sc) {
    for (size_t i = 0; i < sc->root.nchildren; i++) {
        const floe_field *f = &sc->root.children[i];
        if (f->type != FLOE_TYPE_TIMESTAMP && f->type != FLOE_TYPE_TIMESTAMPTZ &&
            f->type != FLOE_TYPE_TIMESTAMP_NS && f->type != FLOE_TYPE_TIMESTAMPTZ_NS)
            continue;
        floe_buf b;
        floe_buf_init(&b, 0);
        char *name = floe_asprintf("%s_day", f->name);
        if (!name)
            return NULL;
        if (floe_buf_printf(&b, "{\"fields\":[{\"source-id\":%d,\"transform\":\"day\",\"name\":",
                            f->id) < 0 ||
            floe_json_append_string(&b, (const uint8_t *)name, strlen(name)) < 0 ||
            floe_buf_printf(&b, "}]}") < 0) {
            floe_free(name);
            floe_buf_free(&b);
            return NULL;
        }
        floe_free(name);
        return floe_buf_detach(&b, NULL);
    }
    return NULL;
}

static int create_table(floe_server *s, const char *ns, const char *tname,
                        const floe_server_table_config *tc, const uint8_t *sample, size_t n,
                        floe_table **out, floe_error *err) {
    floe_schema *sc = NULL;
    floe_partition_spec *ps = NULL;
    char *schema_json = NULL, *spec_json = NULL;
    int rc = 0;
    if (tc && tc->schema_path) {
        FLOE_CHECK(floe_schema_load(tc->schema_path, &sc, err));
        if (tc->partition) {
            FLOE_CHECK(floe_partition_spec_parse(sc, tc->partition, 0, 0, &ps, err));
            spec_json = floe_partition_spec_to_json(ps);
            if (!spec_json)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
    } else if (s->cfg.auto_create && sample) {
        floe_infer_options io = {0}; /* a table created v2 */
        rc = infer_schema(sample, n, &io, &sc, err);
        if (rc < 0) {
            floe_error_prefix(err, "cannot infer a schema from the first batch: ");
            rc = FLOE_EINVALID;
            goto done;
        }
        spec_json = auto_spec(sc);
    } else {
        FLOE_FAIL(err, FLOE_ENOTFOUND, "no table %s.%s", ns, tname);
    }
    schema_json = floe_schema_to_json(sc, false);
    if (!schema_json)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(ensure_namespace(s->catalog, ns, err));
    floe_table_create_options co = {.spec_json = spec_json, .floe_defaults = true};
    rc = floe_table_create(s->catalog, ns, tname, schema_json, &co, out, err);
    if (rc == FLOE_EEXISTS) /* someone else created it meanwhile */
        rc = floe_table_load(s->catalog, ns, tname, out, err);
    if (rc == 0)
        floe_log(FLOE_LOG_INFO, "serve: created table %s.%s%s%s", ns, tname,
                 spec_json ? " partitioned by " : "", spec_json ? spec_json : "");
done:
    floe_schema_free(sc);
    floe_partition_spec_free(ps);
    floe_free(schema_json);
    floe_free(spec_json);
    return rc;
}

srv_table *srv_table_find(floe_server *s, const char *name) {
    srv_table *t = NULL;
    pthread_mutex_lock(&s->tables_mu);
    for (size_t i = 0; i < s->ntables; i++)
        if (!strcmp(s->tables[i]->name, name))
            t = s->tables[i];
    pthread_mutex_unlock(&s->tables_mu);
    return t;
}

/* Room for the longest file name this node gives a landing, quarantine or data file:
 * "<node>-<seq>-<uuid>-<n>.parquet" and the like. */
#define FILE_NAME_ROOM 64
#define S3_KEY_MAX 1024

/* Whether root + tail bytes more is a path (or object key) the store takes. */
static int path_fits(const char *root, size_t tail, const char *what, const char *table,
                     floe_error *err) {
    const char *sep = strstr(root, "://");
    if (sep && strncmp(root, "file:", 5)) {
        /* an object key: what follows "<scheme>://<bucket>/" */
        const char *key = strchr(sep + 3, '/');
        size_t len = (key ? strlen(key + 1) + 1 : 0) + tail;
        if (len > S3_KEY_MAX)
            return floe_error_set(err, FLOE_EINVALID, "the %s of table %s could get object "
                                  "keys of %zu bytes under %s (the store takes %d): use a "
                                  "shorter warehouse prefix, table name or node id", what,
                                  table, len, root, S3_KEY_MAX);
        return 0;
    }
    char *local = floe_io_local_path(root);
    size_t len = (local ? strlen(local) : strlen(root)) + tail;
    floe_free(local);
    if (len >= PATH_MAX)
        return floe_error_set(err, FLOE_EINVALID, "the %s of table %s could get paths of %zu "
                              "bytes under %s (the system takes %d): use a shorter warehouse "
                              "path, table name or node id", what, table, len, root, PATH_MAX);
    return 0;
}

/* Every file the server writes for table t - landing files, quarantine files, data files
 * - has a path the store takes, for any partition value: partition folders are bounded
 * (floe_partition_spec_path), so what is left to check is the configuration (warehouse,
 * table location, table name, node id). Checked when the table is first served, so an
 * event is never accepted into a file that could not be written. */
static int check_path_room(floe_server *s, const srv_table *t, floe_error *err) {
    size_t part = floe_partition_spec_path_max(t->spec);
    size_t file = strlen(s->node) + FILE_NAME_ROOM;
    size_t name = strlen(t->name);
    if (file > NAME_MAX)
        return floe_error_set(err, FLOE_EINVALID, "node id %s: too long for file names (at "
                              "most %d bytes)", s->node, NAME_MAX - FILE_NAME_ROOM);
    FLOE_FORWARD_IF_ERROR(path_fits(s->landing_root, 1 + name + 1 + part + 1 + file,
                                    "landing files", t->name, err));
    FLOE_FORWARD_IF_ERROR(path_fits(s->quarantine_root, 1 + name + 1 + file,
                                    "quarantine files", t->name, err));
    return path_fits(t->location, strlen("/data/") + part + 1 + file, "data files", t->name,
                     err);
}

/* ---- the local copy of what posts need -------------------------------------------- */

/* <wal_dir>/tables/<name>.json holds a table's schema, partition spec and location as last
 * loaded from the catalog or evolved, so that a node started while the catalog database
 * or the object store cannot be reached takes posts for the tables it served before
 * (floe_server_open). Ingest roles only: the WAL folder is theirs, on local disk. Failing
 * to write it is logged, not an error (it only helps such a start). */
static char *cache_path(floe_server *s, const char *name) {
    return floe_asprintf("%s/tables/%s.json", s->wal_dir, name);
}

static void cache_store(floe_server *s, srv_table *t) {
    if (s->role == FLOE_SERVER_ROLE_COMPACTOR)
        return;
    pthread_rwlock_rdlock(&t->schema_lock);
    char *sj = floe_schema_to_json(t->schema, false);
    char *pj = floe_partition_spec_to_json(t->spec);
    pthread_rwlock_unlock(&t->schema_lock);
    json_t *o = sj && pj ? json_pack("{s:s,s:s,s:s}", "schema", sj, "spec", pj, "location",
                                     t->location ? t->location : "")
                         : NULL;
    char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
    char *p = cache_path(s, t->name);
    floe_error e;
    floe_error_clear(&e);
    if (!txt || !p)
        floe_log(FLOE_LOG_WARN, "serve: table %s: keeping a local copy: out of memory",
                 t->name);
    else if (floe_io_write_all(s->cfg.io, p, txt, strlen(txt), NULL, &e) < 0)
        floe_log(FLOE_LOG_WARN, "serve: table %s: keeping a local copy: %s", t->name, e.msg);
    json_decref(o);
    free(txt); /* jansson's */
    floe_free(sj);
    floe_free(pj);
    floe_free(p);
}

static int cache_load(floe_server *s, srv_table *t, floe_error *err) {
    char *p = cache_path(s, t->name);
    floe_buf b;
    floe_buf_init(&b, 0);
    json_t *o = NULL;
    int rc = 0;
    if (!p)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    rc = floe_io_read_all(s->cfg.io, p, (size_t)64 << 20, &b, err);
    if (rc == FLOE_ENOTFOUND)
        FLOE_FAIL(err, FLOE_EBUSY, "table %s: the catalog cannot be reached and this node has "
                  "not served the table before; retry later", t->name);
    if (rc < 0)
        goto done;
    json_error_t je;
    o = json_loadb((const char *)b.data, b.len, 0, &je);
    const char *sj = json_string_value(json_object_get(o, "schema"));
    const char *pj = json_string_value(json_object_get(o, "spec"));
    const char *loc = json_string_value(json_object_get(o, "location"));
    if (!sj || !pj || !loc)
        FLOE_FAIL(err, FLOE_ECORRUPT, "%s: not a table copy of floe serve", p);
    FLOE_CHECK(floe_schema_parse(sj, strlen(sj), &t->schema, err));
    FLOE_CHECK(floe_partition_spec_parse_json(pj, strlen(pj), t->schema, &t->spec, err));
    if (!(t->location = floe_strdup(loc)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
done:
    json_decref(o);
    floe_buf_free(&b);
    floe_free(p);
    return rc;
}

/* Whether the server creates table name on a first post: configured, or auto_create. */
static bool creates(floe_server *s, const char *name) {
    floe_server_table_config tc;
    pthread_mutex_lock(&s->cfg_mu);
    floe_server_table_settings(&s->cfg, name, &tc);
    bool configured = tc.name != NULL;
    pthread_mutex_unlock(&s->cfg_mu);
    return configured || s->cfg.auto_create;
}

/* Create t's table again from what posts are checked against. cat_mu held. */
static int create_again(floe_server *s, srv_table *t, floe_error *err) {
    pthread_rwlock_rdlock(&t->schema_lock);
    char *sj = floe_schema_to_json(t->schema, false);
    char *pj = t->spec->nfields ? floe_partition_spec_to_json(t->spec) : NULL;
    bool nomem = !sj || (t->spec->nfields && !pj);
    pthread_rwlock_unlock(&t->schema_lock);
    floe_table *ft = NULL;
    int rc = 0;
    if (nomem)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(ensure_namespace(s->catalog, t->ns, err));
    floe_table_create_options co = {.spec_json = pj, .floe_defaults = true};
    rc = floe_table_create(s->catalog, t->ns, t->tname, sj, &co, &ft, err);
    if (rc == FLOE_EEXISTS) { /* someone else created it meanwhile */
        floe_error_clear(err);
        rc = 0;
    } else if (rc == 0) {
        floe_log(FLOE_LOG_WARN, "serve: table %s was dropped while served; created it again "
                 "with the schema posts are checked against (auto_create), so the events "
                 "accepted for it are committed", t->name);
    }
done:
    floe_table_close(ft);
    floe_free(sj);
    floe_free(pj);
    return rc;
}

/* Whether the catalog names table ns.tname (its metadata may still be unreadable).
 * cat_mu held. */
static int named(floe_server *s, const char *ns, const char *tname, bool *out,
                 floe_error *err) {
    char *pointer = NULL;
    int rc = floe_catalog_load_table(s->catalog, ns, tname, &pointer, err);
    floe_free(pointer);
    *out = rc == 0;
    if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(err);
        rc = 0;
    }
    return rc;
}

int srv_table_gone(floe_server *s, const char *name, bool *gone, floe_error *err) {
    const char *dot = strrchr(name, '.');
    char *ns = dot ? floe_strndup(name, (size_t)(dot - name)) : NULL;
    if (!ns)
        return dot ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                   : floe_error_set(err, FLOE_EINVALID, "no table %s", name);
    bool exists = false;
    pthread_mutex_lock(&s->cat_mu);
    int rc = named(s, ns, dot + 1, &exists, err);
    pthread_mutex_unlock(&s->cat_mu);
    floe_free(ns);
    *gone = rc == 0 && !exists;
    return rc;
}

int srv_table_recreate(floe_server *s, srv_table *t, floe_error *err) {
    bool exists = false;
    pthread_mutex_lock(&s->cat_mu);
    int rc = named(s, t->ns, t->tname, &exists, err);
    if (rc == 0 && !exists) {
        if (!creates(s, t->name)) {
            rc = floe_error_set(err, FLOE_ENOTFOUND, "table %s was dropped", t->name);
        } else {
            rc = create_again(s, t, err);
            if (rc == FLOE_EINVALID || rc == FLOE_ENOTFOUND) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                rc = floe_error_set(err, FLOE_ENOTFOUND,
                                    "table %s was dropped (and cannot be created again: %s)",
                                    t->name, msg);
            }
        }
    }
    pthread_mutex_unlock(&s->cat_mu);
    if (rc == 0 && atomic_exchange(&t->dropped, false))
        floe_log(FLOE_LOG_INFO, "serve: table %s exists again: its posts are taken", t->name);
    else if (rc == FLOE_ENOTFOUND && !atomic_exchange(&t->dropped, true))
        floe_log(FLOE_LOG_WARN, "serve: %s: its posts are refused (404) until it exists "
                 "again", err->msg);
    return rc;
}

/* The table, loaded from the catalog (created there when configured or auto_create), or
 * with from_copy from its local copy. One found dropped (srv_table_recreate) is looked
 * for again. */
static int table_get(floe_server *s, const char *name, const uint8_t *sample, size_t n,
                     bool from_copy, srv_table **out, floe_error *err) {
    srv_table *t = srv_table_find(s, name);
    if (t && atomic_load(&t->dropped) && !from_copy) {
        int rc = srv_table_recreate(s, t, err);
        if (rc < 0)
            return rc;
    }
    if (t) {
        *out = t;
        return 0;
    }
    if (!srv_valid_table_name(name))
        return floe_error_set(err, FLOE_ENOTFOUND, "no table %s", name);
    int rc = 0;
    floe_table *ft = NULL;
    pthread_mutex_lock(&s->tables_mu); /* one creator at a time */
    for (size_t i = 0; i < s->ntables; i++)
        if (!strcmp(s->tables[i]->name, name))
            t = s->tables[i];
    if (t) {
        pthread_mutex_unlock(&s->tables_mu);
        *out = t;
        return 0;
    }
    t = floe_calloc(1, sizeof *t);
    if (!t)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    pthread_rwlock_init(&t->schema_lock, NULL);
    pthread_mutex_init(&t->pool_mu, NULL);
    pthread_mutex_init(&t->evolve_mu, NULL);
    const char *dot = strrchr(name, '.');
    t->name = floe_strdup(name);
    t->ns = floe_strndup(name, (size_t)(dot - name));
    t->tname = floe_strdup(dot + 1);
    if (!t->name || !t->ns || !t->tname)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_server_table_config tc;
    pthread_mutex_lock(&s->cfg_mu);
    floe_server_table_settings(&s->cfg, name, &tc);
    bool configured = tc.name != NULL;
    pthread_mutex_unlock(&s->cfg_mu);
    if (from_copy) {
        if (!configured && !s->cfg.auto_create)
            FLOE_FAIL(err, FLOE_ENOTFOUND, "no table %s", name);
        FLOE_CHECK(cache_load(s, t, err));
    } else {
        pthread_mutex_lock(&s->cat_mu);
        rc = floe_table_load(s->catalog, t->ns, t->tname, &ft, err);
        if (rc == FLOE_ENOTFOUND && (configured || s->cfg.auto_create)) {
            floe_error_clear(err);
            rc = create_table(s, t->ns, t->tname, configured ? &tc : NULL, sample, n, &ft,
                              err);
        }
        if (rc == 0)
            rc = read_table(ft, &t->schema, &t->spec, &t->location, err);
        if (rc == 0)
            rc = check_path_room(s, t, err);
        floe_table_close(ft);
        pthread_mutex_unlock(&s->cat_mu);
        if (rc < 0)
            goto done;
        cache_store(s, t);
    }
    if (s->ntables == s->tables_cap) {
        size_t nc = s->tables_cap ? s->tables_cap * 2 : 8;
        srv_table **nt = floe_realloc(s->tables, nc * sizeof *nt);
        if (!nt)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        s->tables = nt;
        s->tables_cap = nc;
    }
    s->tables[s->ntables++] = t;
    *out = t;
    t = NULL;
done:
    pthread_mutex_unlock(&s->tables_mu);
    srv_table_free(t);
    return rc;
}

int srv_table_get(floe_server *s, const char *name, const uint8_t *sample, size_t n,
                  srv_table **out, floe_error *err) {
    return table_get(s, name, sample, n, atomic_load(&s->offline), out, err);
}

void srv_table_load_copies(floe_server *s) {
    for (size_t i = 0; i < s->cfg.ntables; i++) {
        srv_table *t;
        floe_error e;
        floe_error_clear(&e);
        if (table_get(s, s->cfg.tables[i].name, NULL, 0, true, &t, &e) < 0)
            floe_log(FLOE_LOG_WARN, "serve: %s (its posts are refused until the catalog "
                     "answers)", e.msg);
    }
}

int srv_table_load_configured(floe_server *s, floe_error *err) {
    for (size_t i = 0; i < s->cfg.ntables; i++) {
        srv_table *t;
        int rc = table_get(s, s->cfg.tables[i].name, NULL, 0, false, &t, err);
        if (rc < 0) {
            floe_error_prefix(err, "table %s: ", s->cfg.tables[i].name);
            return rc;
        }
    }
    return 0;
}

/* ---- evolve ------------------------------------------------------------------------ */

typedef struct evolve_ctx {
    json_t *additions;   /* the inferred top-level fields (ids to be reassigned) */
    json_t *fields_only; /* the same inferred with variant_fields_only (v3), or additions */
    int32_t new_schema_id;
    bool changed;
} evolve_ctx;

static void renumber(json_t *type, int32_t *next) {
    if (!json_is_object(type))
        return;
    const char *t = json_string_value(json_object_get(type, "type"));
    if (!t)
        return;
    if (!strcmp(t, "struct")) {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(type, "fields"), i, f) {
            json_object_set_new(f, "id", json_integer((*next)++));
            renumber(json_object_get(f, "type"), next);
        }
    } else if (!strcmp(t, "list")) {
        json_object_set_new(type, "element-id", json_integer((*next)++));
        renumber(json_object_get(type, "element"), next);
    } else if (!strcmp(t, "map")) {
        json_object_set_new(type, "key-id", json_integer((*next)++));
        json_object_set_new(type, "value-id", json_integer((*next)++));
        renumber(json_object_get(type, "key"), next);
        renumber(json_object_get(type, "value"), next);
    }
}

static int max_id(json_t *type) {
    int m = 0;
    if (!json_is_object(type))
        return 0;
    const char *keys[] = {"id", "element-id", "key-id", "value-id"};
    for (int k = 0; k < 4; k++) {
        json_t *v = json_object_get(type, keys[k]);
        if (json_is_integer(v) && json_integer_value(v) > m)
            m = (int)json_integer_value(v);
    }
    const char *sub[] = {"type", "element", "key", "value"};
    for (int k = 0; k < 4; k++) {
        int x = max_id(json_object_get(type, sub[k]));
        if (x > m)
            m = x;
    }
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(type, "fields"), i, f) {
        int x = max_id(f);
        if (x > m)
            m = x;
    }
    return m;
}

static bool merge_fields(json_t *fields, json_t *afields, json_t *lfields, int32_t *next);

/* The field of a struct's fields array named name, or NULL. */
static json_t *field_named(json_t *fields, const char *name) {
    size_t k;
    json_t *f;
    json_array_foreach(fields, k, f) {
        const char *fn = json_string_value(json_object_get(f, "name"));
        if (fn && !strcmp(fn, name))
            return f;
    }
    return NULL;
}

/* holder[key] is a field's type (or a list's element, a map's value) in the current
 * schema; at the inferred type at the same place, lt the type inferred there with
 * variant_fields_only (NULL: as at). Widens int -> long and float -> double, goes into
 * structs, list elements and map values; any other difference is left alone (such values
 * are type mismatches: rejected at post time, or the quarantine's business).
 *
 * A struct the table has meets `variant` where the events give it a field whose kind
 * varies (v3: a new object would be a variant as a whole). The struct cannot become one,
 * so its new fields come from lt, where only the varying values are variants. */
static bool merge_type(json_t *holder, const char *key, json_t *at, json_t *lt,
                       int32_t *next) {
    json_t *ht = json_object_get(holder, key);
    if (!lt)
        lt = at;
    if (json_is_object(ht) && json_is_string(at) && json_is_object(lt) &&
        !strcmp(json_string_value(at), "variant"))
        at = lt;
    if (json_is_string(ht) && json_is_string(at)) {
        const char *h = json_string_value(ht), *a = json_string_value(at);
        if ((!strcmp(h, "int") && !strcmp(a, "long")) ||
            (!strcmp(h, "float") && !strcmp(a, "double"))) {
            json_object_set_new(holder, key, json_string(a));
            return true;
        }
        return false;
    }
    if (!json_is_object(ht) || !json_is_object(at))
        return false;
    const char *h = json_string_value(json_object_get(ht, "type"));
    const char *a = json_string_value(json_object_get(at, "type"));
    if (!h || !a || strcmp(h, a))
        return false;
    const char *l = json_string_value(json_object_get(lt, "type"));
    json_t *lsame = l && !strcmp(l, a) ? lt : at;
    if (!strcmp(h, "struct"))
        return merge_fields(json_object_get(ht, "fields"), json_object_get(at, "fields"),
                            json_object_get(lsame, "fields"), next);
    if (!strcmp(h, "list"))
        return merge_type(ht, "element", json_object_get(at, "element"),
                          json_object_get(lsame, "element"), next);
    if (!strcmp(h, "map"))
        return merge_type(ht, "value", json_object_get(at, "value"),
                          json_object_get(lsame, "value"), next);
    return false;
}

/* Adds the inferred fields the struct lacks (optional, fresh ids), at any depth, and
 * widens the ones it has; lfields are the same inferred with variant_fields_only (see
 * merge_type). True when anything changed. */
static bool merge_fields(json_t *fields, json_t *afields, json_t *lfields, int32_t *next) {
    bool changed = false;
    size_t i;
    json_t *af;
    json_array_foreach(afields, i, af) {
        const char *name = json_string_value(json_object_get(af, "name"));
        if (!name)
            continue;
        json_t *have = field_named(fields, name), *lf = field_named(lfields, name);
        if (have) {
            changed |= merge_type(have, "type", json_object_get(af, "type"),
                                  lf ? json_object_get(lf, "type") : NULL, next);
            continue;
        }
        json_t *nf = json_deep_copy(af);
        if (!nf)
            continue;
        json_object_set_new(nf, "id", json_integer((*next)++));
        json_object_set_new(nf, "required", json_false());
        renumber(json_object_get(nf, "type"), next);
        json_array_append_new(fields, nf);
        changed = true;
    }
    return changed;
}

/* Re-derived on every attempt from the base the commit gives (it may be fresher). */
static int evolve_apply(void *vctx, floe_metadata_builder *b, floe_error *err) {
    evolve_ctx *ec = vctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(base);
    json_error_t je;
    json_t *sc = json_loads(ms->json, 0, &je);
    if (!sc)
        return floe_error_set(err, FLOE_ECORRUPT, "current schema: %s", je.text);
    json_t *fields = json_object_get(sc, "fields");
    int32_t next = base->last_column_id;
    int m = max_id(sc);
    if (m > next)
        next = m;
    next++;
    bool changed = merge_fields(fields, ec->additions, ec->fields_only, &next);
    int rc = 0;
    if (!changed) {
        rc = FLOE_COMMIT_NOOP;
        goto done;
    }
    json_object_del(sc, "schema-id");
    char *txt = json_dumps(sc, JSON_COMPACT);
    if (!txt)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    int32_t id = 0;
    rc = floe_metadata_builder_add_schema(b, txt, &id, err);
    free(txt);
    if (rc == 0)
        rc = floe_metadata_builder_set_current_schema(b, id, err);
    ec->new_schema_id = id;
    ec->changed = true;
done:
    json_decref(sc);
    return rc;
}

/* Make *cur and *spec (taken) the schema and spec posts are checked and routed against.
 * evolve_mu held. The old schema stays alive until the server closes (scratches compiled
 * against it may be in use). */
static int adopt(floe_server *s, srv_table *t, floe_schema **cur, floe_partition_spec **spec,
                 floe_error *err) {
    floe_schema **olds = floe_realloc(t->old_schemas, (t->nold + 2) * sizeof *olds);
    if (!olds)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    t->old_schemas = olds;
    pthread_rwlock_wrlock(&t->schema_lock);
    t->old_schemas[t->nold++] = t->schema;
    floe_partition_spec_free(t->spec); /* specs are only used under the read lock */
    t->schema = *cur;
    t->spec = *spec;
    t->schema_gen++;
    pthread_rwlock_unlock(&t->schema_lock);
    *cur = NULL;
    *spec = NULL;
    atomic_fetch_add(&t->schema_updates, 1);
    cache_store(s, t);
    return 0;
}

/* The table's current schema and default spec in the catalog, adopted when they are not
 * the ones posts are checked against (changed by another process: `floe table schema`,
 * another node); *format_version (may be NULL) gets the table's format version.
 * evolve_mu held; takes cat_mu. */
static int sync_locked(floe_server *s, srv_table *t, int *format_version, floe_error *err) {
    floe_table *ft = NULL;
    floe_schema *cur = NULL;
    floe_partition_spec *spec = NULL;
    int rc = 0;
    pthread_mutex_lock(&s->cat_mu);
    rc = floe_table_load(s->catalog, t->ns, t->tname, &ft, err);
    if (rc == 0) {
        const floe_table_metadata *m = floe_table_metadata_get(ft);
        const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
        const floe_metadata_spec *sp = floe_table_metadata_default_spec(m);
        if (format_version)
            *format_version = m->format_version;
        pthread_rwlock_rdlock(&t->schema_lock);
        bool same = ms && ms->schema_id == t->schema->schema_id &&
                    (sp ? sp->spec_id : 0) == t->spec->spec_id;
        pthread_rwlock_unlock(&t->schema_lock);
        if (!same)
            rc = read_table(ft, &cur, &spec, NULL, err);
    }
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    if (rc == 0 && cur) {
        floe_log(FLOE_LOG_INFO, "serve: table %s: schema %d / spec %d changed in the "
                 "catalog, adopted", t->name, (int)cur->schema_id, (int)spec->spec_id);
        rc = adopt(s, t, &cur, &spec, err);
    }
    floe_schema_free(cur);
    floe_partition_spec_free(spec);
    return rc;
}

int srv_table_sync(floe_server *s, srv_table *t, int32_t schema_id, int32_t spec_id,
                   floe_error *err) {
    pthread_rwlock_rdlock(&t->schema_lock);
    bool same = t->schema->schema_id == schema_id && t->spec->spec_id == spec_id;
    pthread_rwlock_unlock(&t->schema_lock);
    if (same)
        return 0;
    pthread_mutex_lock(&t->evolve_mu);
    int rc = sync_locked(s, t, NULL, err);
    pthread_mutex_unlock(&t->evolve_mu);
    return rc;
}

/* The schema inferred from body (io), as JSON in *out (the caller decrefs). */
static int infer_json(const uint8_t *body, size_t n, const floe_infer_options *io,
                      json_t **out, floe_error *err) {
    floe_schema *inferred = NULL;
    int rc = infer_schema(body, n, io, &inferred, err);
    if (rc < 0)
        return rc;
    char *txt = floe_schema_to_json(inferred, false);
    floe_schema_free(inferred);
    if (!txt)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    json_error_t je;
    *out = json_loads(txt, 0, &je);
    floe_free(txt);
    return *out ? 0 : floe_error_set(err, FLOE_EINTERNAL, "inferred schema: %s", je.text);
}

/* The offsets of the records a shredder rejects (filter_take). */
typedef struct reject_offsets {
    int64_t *at;
    size_t n, cap;
} reject_offsets;

static int note_reject(void *ctx, const floe_reject *r) {
    reject_offsets *ro = ctx;
    if (ro->n == ro->cap) {
        size_t cap = ro->cap ? 2 * ro->cap : 64;
        int64_t *na = floe_realloc(ro->at, cap * sizeof *na);
        if (!na)
            return FLOE_ENOMEM;
        ro->at = na;
        ro->cap = cap;
    }
    ro->at[ro->n++] = r->offset;
    return 0;
}

/* Shred lines against schema (unknown fields rejected, as the post's second pass does)
 * and drop from lines every record that is rejected; *dropped gets how many were. */
static int filter_take(floe_server *s, const floe_schema *schema, floe_buf *lines,
                       size_t *dropped, floe_error *err) {
    floe_shredder *sh = NULL;
    floe_batch batch;
    bool batch_ok = false;
    reject_offsets ro = {0};
    floe_buf kept;
    floe_buf_init(&kept, 0);
    floe_shred_options so = {.max_record = (size_t)s->cfg.max_record,
                             .unknown = FLOE_UNKNOWN_REJECT};
    int rc = floe_shredder_new(schema, &so, &sh, err);
    if (rc == 0) {
        rc = floe_batch_init(&batch, schema);
        batch_ok = rc == 0;
        if (rc < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    /* a line at a time: the batch never holds more than one record */
    const uint8_t *p = lines->data;
    size_t n = lines->len, i = 0;
    int64_t line = 1;
    while (rc == 0 && i < n) {
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - p) + 1 : n;
        size_t before = ro.n;
        rc = floe_shredder_feed(sh, p + i, end - i, NULL, line, (int64_t)i, &batch,
                                note_reject, &ro, err);
        if (rc == FLOE_ENOMEM)
            floe_error_set(err, rc, "out of memory");
        if (rc == 0 && ro.n == before)
            rc = floe_buf_append(&kept, p + i, end - i) < 0
                     ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
        floe_batch_clear(&batch);
        i = end;
        line++;
    }
    if (rc == 0) {
        *dropped = ro.n;
        floe_buf tmp = *lines;
        *lines = kept;
        kept = tmp;
    }
    floe_buf_free(&kept);
    floe_free(ro.at);
    if (batch_ok)
        floe_batch_free(&batch);
    floe_shredder_free(sh);
    return rc;
}

/* The additions for t inferred from lines, in *ij (and *lj, v3: with variant_fields_only),
 * and whether they change t's schema (*news). Only records the evolved schema accepts
 * count: the candidate schema is tried on them, the rejected ones are dropped from lines
 * and the rest inferred again, until none is rejected (a few rounds at most, else no
 * evolution). A record the post rejects (malformed, a value that fits neither its known
 * field nor the type inferred for a new one) never adds a field. */
#define EVOLVE_FILTER_ROUNDS 8
static int evolve_candidate(floe_server *s, srv_table *t, floe_buf *lines, int format_version,
                            json_t **ij, json_t **lj, bool *news, floe_error *err) {
    int rc = 0;
    *news = false;
    for (int round = 0; round < EVOLVE_FILTER_ROUNDS; round++) {
        json_decref(*ij);
        json_decref(*lj);
        *ij = *lj = NULL;
        if (lines->len == 0)
            return 0; /* every record rejected: nothing to learn from */
        floe_infer_options io = {.variant = format_version >= 3, .nanos = format_version >= 3};
        FLOE_FORWARD_IF_ERROR(infer_json(lines->data, lines->len, &io, ij, err));
        if (io.variant) { /* for the structs the table has (merge_type) */
            io.variant_fields_only = true;
            FLOE_FORWARD_IF_ERROR(infer_json(lines->data, lines->len, &io, lj, err));
        }
        /* anything the current schema lacks (at any depth) or may widen? Tried on a copy;
         * the commit merges again on the metadata each attempt starts from. */
        json_error_t je;
        pthread_rwlock_rdlock(&t->schema_lock);
        char *curjson = floe_schema_to_json(t->schema, false);
        pthread_rwlock_unlock(&t->schema_lock);
        json_t *curj = curjson ? json_loads(curjson, 0, &je) : NULL;
        floe_free(curjson);
        if (!curj)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        int32_t scratch_id = 1 << 30;
        bool changed = merge_fields(json_object_get(curj, "fields"),
                                    json_object_get(*ij, "fields"),
                                    json_object_get(*lj ? *lj : *ij, "fields"), &scratch_id);
        if (!changed) {
            json_decref(curj);
            return 0;
        }
        char *cand = json_dumps(curj, JSON_COMPACT);
        json_decref(curj);
        if (!cand)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_schema *cs = NULL;
        rc = floe_schema_parse(cand, strlen(cand), &cs, err);
        free(cand);
        if (rc < 0)
            return rc;
        size_t dropped = 0;
        rc = filter_take(s, cs, lines, &dropped, err);
        floe_schema_free(cs);
        if (rc < 0)
            return rc;
        if (dropped == 0) {
            *news = true;
            return 0;
        }
    }
    floe_log(FLOE_LOG_WARN, "serve: table %s: the post's records did not settle on a schema "
             "in %d rounds: not evolved", t->name, EVOLVE_FILTER_ROUNDS);
    json_decref(*ij);
    json_decref(*lj);
    *ij = *lj = NULL;
    return 0;
}

int srv_table_evolve(floe_server *s, srv_table *t, const uint8_t *body, size_t n,
                     bool is_array, floe_error *err) {
    (void)is_array;
    floe_schema *cur = NULL;
    floe_partition_spec *spec = NULL;
    json_t *ij = NULL, *lj = NULL;
    floe_table *ft = NULL;
    floe_buf all, lines;
    floe_buf_init(&all, 0);
    floe_buf_init(&lines, 0);
    int rc = 0;
    if (atomic_load(&s->offline))
        return floe_error_set(err, FLOE_EBUSY, "the catalog cannot be reached");
    if (body_as_lines(body, n, &all) < 0) {
        floe_buf_free(&all);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&t->evolve_mu);
    /* new against the table as it is now, not as this server last saw it: a field
     * another process dropped is new again */
    bool news = false;
    /* a schema adopted meanwhile (a refresh) is merged against again, a few times at most:
     * the caller rejects what stays unknown */
    for (int round = 0; round < 3; round++) {
        int format_version = 2;
        FLOE_CHECK(sync_locked(s, t, &format_version, err));
        int gen = t->schema_gen;
        floe_buf_reset(&lines);
        if (floe_buf_append(&lines, all.data, all.len) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        FLOE_CHECK(evolve_candidate(s, t, &lines, format_version, &ij, &lj, &news, err));
        if (!news || gen == t->schema_gen)
            break;
        news = false;
    }
    if (!news)
        goto done; /* nothing new */
    json_t *adds = json_incref(json_object_get(ij, "fields"));
    evolve_ctx ec = {.additions = adds,
                     .fields_only = json_object_get(lj ? lj : ij, "fields")};
    pthread_mutex_lock(&s->cat_mu);
    rc = floe_table_load(s->catalog, t->ns, t->tname, &ft, err);
    if (rc == 0)
        rc = floe_table_commit(ft, evolve_apply, &ec, err);
    if (rc >= 0) {
        floe_error_clear(err);
        rc = floe_table_refresh(ft, err);
    }
    if (rc == 0)
        rc = read_table(ft, &cur, &spec, NULL, err);
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    json_decref(adds);
    if (rc < 0)
        goto done;
    FLOE_CHECK(adopt(s, t, &cur, &spec, err));
    floe_log(FLOE_LOG_INFO, "serve: table %s: schema evolved", t->name);
done:
    pthread_mutex_unlock(&t->evolve_mu);
    json_decref(ij);
    json_decref(lj);
    floe_schema_free(cur);
    floe_partition_spec_free(spec);
    floe_buf_free(&all);
    floe_buf_free(&lines);
    return rc;
}
