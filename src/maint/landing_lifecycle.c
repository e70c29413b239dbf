/*
 * landing_lifecycle.c - delete landing files whose records are in the table (maint.h S5).
 *
 * Works on the server's landing index (src/server/landing.c): in the catalog's own
 * database (or, through index_path, a SQLite file of an earlier release,
 * <warehouse>/_landing/_index.db), reached through floe_sql either way:
 *     landing_files(id, node, seq, tbl, part, kind, uri, bytes, raw_bytes, records,
 *                   first_frame, last_frame, created_ms, state, lease_until_ms,
 *                   snapshot_id)
 * and the states of DESIGN.md's landing-file machine: pending, compacting, committed,
 * missing, quarantine (quarantine files), and deleted (written here).
 *
 * Ages: created_ms is the database's clock, and so is "now" (unless the caller gives one).
 *
 * Per file: delete the file, then mark the row 'deleted' - with "AND state=<expected>" so
 * a row someone else changed meanwhile is left alone. A crash in between leaves a row
 * that is still 'committed' for a file that is gone; the next run deletes nothing (a
 * missing file is not an error) and marks it. Rows are never removed: the server derives
 * its replay watermarks from them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "floe/io.h"
#include "floe/sql.h"
#include "maint_internal.h"

#define DEFAULT_LANDING_AGE_MS (3 * FLOE_MAINT_DAY_MS)

void floe_landing_lifecycle_options_init(floe_landing_lifecycle_options *o) {
    memset(o, 0, sizeof *o);
    o->age_ms = -1;
    o->quarantine_retention_ms = -1;
}

typedef struct victim {
    int64_t id;
    char *uri;
    int64_t bytes;
    bool quarantine;
} victim;

/* uri lies under root at a '/' boundary (after normalisation) */
static bool under(const char *uri, const char *root_key) {
    char *k = maint_path_key(uri);
    if (!k)
        return false;
    size_t n = strlen(root_key);
    bool ok = !strncmp(k, root_key, n) && k[n] == '/' && !strstr(k + n, "/../");
    floe_free(k);
    return ok;
}

typedef struct scan_ctx {
    const char *land, *quar;
    char *land_key, *quar_key;
    victim *v;
    size_t nv, cap;
    int64_t count;
} scan_ctx;

static int int_col(const char *s, int64_t *out) {
    return s && floe_parse_i64(s, strlen(s), out) ? 0 : -1;
}

static int on_exists(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    (void)cols;
    (void)ncols;
    (void)err;
    *(bool *)ctx = true;
    return 0;
}

static int on_count(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    scan_ctx *c = ctx;
    if (ncols < 1 || int_col(cols[0], &c->count) < 0)
        return floe_error_set(err, FLOE_ECORRUPT, "landing index: bad count");
    return 0;
}

/* id, uri, bytes, state */
static int on_victim(void *ctx, const char *const *cols, size_t ncols, floe_error *err) {
    scan_ctx *c = ctx;
    int64_t id, bytes;
    if (ncols < 4 || !cols[1] || !cols[3] || int_col(cols[0], &id) < 0 ||
        int_col(cols[2], &bytes) < 0)
        return floe_error_set(err, FLOE_ECORRUPT,
                              "landing index: malformed landing_files row (is it a floe "
                              "landing index?)");
    bool q = !strcmp(cols[3], "quarantine");
    if (!under(cols[1], q ? c->quar_key : c->land_key)) {
        floe_log(FLOE_LOG_WARN, "landing lifecycle: %s is outside %s: left alone", cols[1],
                 q ? c->quar : c->land);
        return 0;
    }
    if (c->nv == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 256;
        victim *nvv = floe_realloc(c->v, nc * sizeof *nvv);
        if (!nvv)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        c->v = nvv;
        c->cap = nc;
    }
    victim *v = &c->v[c->nv];
    v->id = id;
    v->bytes = bytes;
    v->quarantine = q;
    if (!(v->uri = floe_strdup(cols[1])))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    c->nv++;
    return 0;
}

int floe_maint_landing_lifecycle(const char *warehouse,
                                 const floe_landing_lifecycle_options *opts,
                                 floe_landing_lifecycle_result *res, floe_error *err) {
    floe_landing_lifecycle_options defaults;
    if (!opts) {
        floe_landing_lifecycle_options_init(&defaults);
        opts = &defaults;
    }
    floe_landing_lifecycle_result r;
    memset(&r, 0, sizeof r);
    scan_ctx sc = {0};
    floe_sql *db = opts->db, *owned = NULL;
    char *index = NULL, *land = NULL, *quar = NULL, *index_local = NULL;
    int rc = 0;
    int64_t now = opts->now_ms > 0 ? opts->now_ms : floe_wall_ms();
    int64_t age = opts->age_ms >= 0 ? opts->age_ms : DEFAULT_LANDING_AGE_MS;

    land = floe_io_join(warehouse, "_landing");
    quar = floe_io_join(warehouse, "_quarantine");
    if (!land || !quar)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    sc.land = land;
    sc.quar = quar;
    sc.land_key = maint_path_key(land);
    sc.quar_key = maint_path_key(quar);
    if (!sc.land_key || !sc.quar_key)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!db) {
        index = opts->index_path ? floe_strdup(opts->index_path)
                                 : floe_io_join(land, "_index.db");
        if (!index)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        index_local = floe_io_local_path(index);
        if (!index_local)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED, "landing index %s: not a local file", index);
        bool exists = false;
        FLOE_CHECK(floe_io_exists(opts->io, index_local, &exists, err));
        if (!exists) {
            r.no_index = true;
            goto done;
        }
        FLOE_CHECK(floe_sql_open_with(index_local, &opts->sql, &owned, err));
        db = owned;
    }
    /* a catalog database no server ever used has no landing_files table */
    bool has_table = false;
    const char *probe = !strcmp(floe_sql_dialect(db), "postgresql")
                            ? "SELECT 1 FROM information_schema.tables WHERE "
                              "table_name = 'landing_files' AND table_schema = "
                              "current_schema()"
                            : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                              "name = 'landing_files'";
    FLOE_CHECK(floe_sql_query(db, probe, NULL, 0, on_exists, &has_table, err));
    if (!has_table) {
        r.no_index = true;
        goto done;
    }
    /* created_ms is the database's clock (floe serve writes it so): so is the cut */
    if (opts->now_ms <= 0)
        FLOE_CHECK(floe_sql_clock_ms(db, &now, err));

    char cut[24], qcut[24];
    snprintf(cut, sizeof cut, "%" PRId64, now - age);
    snprintf(qcut, sizeof qcut, "%" PRId64,
             now - (opts->quarantine_retention_ms >= 0 ? opts->quarantine_retention_ms : 0));
    const char *qon = opts->quarantine_retention_ms >= 0 ? "1" : "0";

    /* committed files past the age; quarantine files past their retention */
    const char *sel[] = {cut, qon, qcut, opts->table, opts->table};
    FLOE_CHECK(floe_sql_query(
        db,
        "SELECT id, uri, bytes, state FROM landing_files WHERE "
        "((state = 'committed' AND created_ms < CAST(? AS BIGINT)) OR "
        "(state = 'quarantine' AND CAST(? AS INTEGER) = 1 AND created_ms < CAST(? AS BIGINT))) "
        "AND (CAST(? AS TEXT) IS NULL OR tbl = ?) ORDER BY id",
        sel, 5, on_victim, &sc, err));

    /* counted for the report: old enough but not committed */
    const char *cnt[] = {cut, opts->table, opts->table};
    FLOE_CHECK(floe_sql_query(db,
                              "SELECT COUNT(*) FROM landing_files WHERE state IN "
                              "('pending','compacting','missing') AND created_ms < "
                              "CAST(? AS BIGINT) AND (CAST(? AS TEXT) IS NULL OR tbl = ?)",
                              cnt, 3, on_count, &sc, err));
    r.kept_uncommitted = sc.count;

    for (size_t i = 0; i < sc.nv; i++) {
        victim *v = &sc.v[i];
        if (opts->on_file)
            opts->on_file(opts->on_file_ctx, FLOE_MAINT_OTHER, v->uri);
        if (!opts->dry_run) {
            floe_error e;
            floe_error_clear(&e);
            if (floe_io_delete(opts->io, v->uri, &e) < 0) {
                r.failures++;
                floe_log(FLOE_LOG_WARN, "landing lifecycle: %s", e.msg);
                continue;
            }
            char id[24];
            snprintf(id, sizeof id, "%" PRId64, v->id);
            const char *up[] = {id, v->quarantine ? "quarantine" : "committed"};
            floe_error_clear(&e);
            if (floe_sql_exec(db,
                              "UPDATE landing_files SET state = 'deleted' WHERE "
                              "id = CAST(? AS BIGINT) AND state = ?",
                              up, 2, NULL, &e) < 0) {
                r.failures++;
                floe_log(FLOE_LOG_WARN, "landing lifecycle: marking %s deleted: %s", v->uri,
                         e.msg);
                continue;
            }
        }
        if (v->quarantine) {
            r.quarantine_deleted++;
        } else {
            r.landing_deleted++;
            r.landing_bytes += v->bytes;
        }
    }
done:
    floe_sql_close(owned);
    for (size_t i = 0; i < sc.nv; i++)
        floe_free(sc.v[i].uri);
    floe_free(sc.v);
    floe_free(sc.land_key);
    floe_free(sc.quar_key);
    floe_free(index);
    floe_free(index_local);
    floe_free(land);
    floe_free(quar);
    if (rc == 0 && res)
        *res = r;
    return rc;
}
