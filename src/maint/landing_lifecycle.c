/*
 * landing_lifecycle.c - delete landing files whose records are in the table (maint.h S5).
 *
 * Works on the server's landing index (src/server/landing.c), a SQLite database at
 * <warehouse>/_landing/_index.db with
 *     landing_files(id, node, seq, tbl, part, kind, uri, bytes, raw_bytes, records,
 *                   first_frame, last_frame, created_ms, state, lease_until_ms,
 *                   snapshot_id)
 * and the states of DESIGN.md's landing-file machine: pending, compacting, committed,
 * missing, quarantine (quarantine files), and deleted (written here).
 *
 * Per file: delete the file, then mark the row 'deleted' - with "AND state=<expected>" so
 * a row someone else changed meanwhile is left alone. A crash in between leaves a row
 * that is still 'committed' for a file that is gone; the next run deletes nothing (a
 * missing file is not an error) and marks it. Rows are never removed: the server derives
 * its replay watermarks from them.
 */
#include <sqlite3.h>
#include <string.h>

#include "floe/io.h"
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

static int db_error(sqlite3 *db, floe_error *err, const char *what) {
    int rc = sqlite3_errcode(db);
    return floe_error_sys(err, rc == SQLITE_BUSY ? FLOE_EBUSY : FLOE_EIO, rc,
                          "landing index: %s: %s", what, sqlite3_errmsg(db));
}

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
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    victim *v = NULL;
    size_t nv = 0, cap = 0;
    char *index = NULL, *land_key = NULL, *quar_key = NULL, *land = NULL, *quar = NULL;
    char *index_local = NULL;
    int rc = 0;
    int64_t now = opts->now_ms > 0 ? opts->now_ms : floe_wall_ms();
    int64_t age = opts->age_ms >= 0 ? opts->age_ms : DEFAULT_LANDING_AGE_MS;

    land = floe_io_join(warehouse, "_landing");
    quar = floe_io_join(warehouse, "_quarantine");
    index = opts->index_path ? floe_strdup(opts->index_path) : floe_io_join(land, "_index.db");
    if (!land || !quar || !index)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    land_key = maint_path_key(land);
    quar_key = maint_path_key(quar);
    index_local = floe_io_local_path(index);
    if (!land_key || !quar_key)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!index_local)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "landing index %s: not a local file", index);
    bool exists = false;
    FLOE_CHECK(floe_io_exists(index_local, &exists, err));
    if (!exists) {
        r.no_index = true;
        goto done;
    }
    if (sqlite3_open_v2(index_local, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = floe_error_set(err, FLOE_EIO, "landing index %s: %s", index_local,
                            db ? sqlite3_errmsg(db) : "cannot open");
        goto done;
    }
    sqlite3_busy_timeout(db, 10000);

    /* committed files past the age; quarantine files past their retention */
    const char *sql =
        "SELECT id, uri, bytes, state FROM landing_files WHERE "
        "((state='committed' AND created_ms < ?1) OR (state='quarantine' AND ?2 AND "
        "created_ms < ?3)) AND (?4 IS NULL OR tbl = ?4) ORDER BY id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        FLOE_FAIL(err, FLOE_EIO, "landing index %s: %s (is it a floe landing index?)",
                  index_local, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, now - age);
    sqlite3_bind_int(st, 2, opts->quarantine_retention_ms >= 0);
    sqlite3_bind_int64(st, 3, now - (opts->quarantine_retention_ms >= 0
                                         ? opts->quarantine_retention_ms : 0));
    if (opts->table)
        sqlite3_bind_text(st, 4, opts->table, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 4);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *uri = (const char *)sqlite3_column_text(st, 1);
        const char *state = (const char *)sqlite3_column_text(st, 3);
        if (!uri || !state)
            continue;
        bool q = !strcmp(state, "quarantine");
        if (!under(uri, q ? quar_key : land_key)) {
            floe_log(FLOE_LOG_WARN, "landing lifecycle: %s is outside %s: left alone", uri,
                     q ? quar : land);
            continue;
        }
        if (nv == cap) {
            size_t nc = cap ? cap * 2 : 256;
            victim *nvv = floe_realloc(v, nc * sizeof *nvv);
            if (!nvv)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            v = nvv;
            cap = nc;
        }
        v[nv].id = sqlite3_column_int64(st, 0);
        v[nv].bytes = sqlite3_column_int64(st, 2);
        v[nv].quarantine = q;
        v[nv].uri = floe_strdup(uri);
        if (!v[nv].uri)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        nv++;
    }
    if (s != SQLITE_DONE)
        FLOE_FAIL(err, FLOE_EIO, "landing index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    st = NULL;

    /* counted for the report: old enough but not committed */
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM landing_files WHERE state IN "
                           "('pending','compacting','missing') AND created_ms < ?1 AND "
                           "(?2 IS NULL OR tbl = ?2)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now - age);
        if (opts->table)
            sqlite3_bind_text(st, 2, opts->table, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 2);
        if (sqlite3_step(st) == SQLITE_ROW)
            r.kept_uncommitted = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;

    if (sqlite3_prepare_v2(db, "UPDATE landing_files SET state='deleted' WHERE id=?1 AND "
                           "state=?2", -1, &st, NULL) != SQLITE_OK)
        FLOE_CHECK(db_error(db, err, "prepare"));
    for (size_t i = 0; i < nv; i++) {
        if (opts->on_file)
            opts->on_file(opts->on_file_ctx, FLOE_MAINT_OTHER, v[i].uri);
        if (opts->dry_run) {
            if (v[i].quarantine)
                r.quarantine_deleted++;
            else {
                r.landing_deleted++;
                r.landing_bytes += v[i].bytes;
            }
            continue;
        }
        floe_error e;
        floe_error_clear(&e);
        if (floe_io_delete(v[i].uri, &e) < 0) {
            r.failures++;
            floe_log(FLOE_LOG_WARN, "landing lifecycle: %s", e.msg);
            continue;
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, v[i].id);
        sqlite3_bind_text(st, 2, v[i].quarantine ? "quarantine" : "committed", -1,
                          SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            r.failures++;
            floe_log(FLOE_LOG_WARN, "landing lifecycle: marking %s deleted: %s", v[i].uri,
                     sqlite3_errmsg(db));
            continue;
        }
        if (v[i].quarantine) {
            r.quarantine_deleted++;
        } else {
            r.landing_deleted++;
            r.landing_bytes += v[i].bytes;
        }
    }
done:
    sqlite3_finalize(st);
    if (db)
        sqlite3_close(db);
    for (size_t i = 0; i < nv; i++)
        floe_free(v[i].uri);
    floe_free(v);
    floe_free(index);
    floe_free(index_local);
    floe_free(land);
    floe_free(quar);
    floe_free(land_key);
    floe_free(quar_key);
    if (rc == 0 && res)
        *res = r;
    return rc;
}
