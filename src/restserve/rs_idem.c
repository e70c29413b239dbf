/*
 * rs_idem.c - Idempotency-Key (spec: components/parameters/idempotency-key; CatalogConfig
 * idempotency-key-lifetime).
 *
 * On the mutation routes the spec gives the header (create, drop and update of
 * namespaces, create, register, commit, drop and rename of tables, transactions/commit),
 * a request carrying a key is answered at most once: its final answer - any status but
 * 5xx - is recorded under the key, and a later request with the same key gets that answer
 * again (status, body, ETag) without running anything. A key reused for another request
 * (another method, path or body) is a 400. Bodies are compared as JSON, not as bytes (the
 * fingerprint is made of the body written again with sorted keys and no blanks), so a
 * retry that writes the same JSON another way is the same request. A request with two
 * Idempotency-Key headers is refused (400) before anything runs. A 5xx is not recorded,
 * so the retry runs.
 *
 * The answers are kept in the catalog's own database (table floe_rest_idempotency, one
 * row per catalog name and key), so every server on one PostgreSQL catalog answers a
 * retry alike, and the key outlives a restart. Rows are kept for twice the advertised
 * lifetime (the grace the spec allows) and removed by the next recording after that.
 * A SQL catalog is needed; on a filesystem catalog the header is not honoured and
 * /v1/config does not advertise a lifetime.
 *
 * A change's answer is recorded by the change itself: the handle's swap hook (a commit,
 * a transaction, a register with overwrite) and change hook (a create or register, a
 * rename, a drop: floe_catalog_set_change_hook) insert the row in the transaction that
 * makes the change, with the table's new metadata location (none for a rename or drop),
 * so the record exists exactly when the change does - also when the answer is lost
 * afterwards (a 500, a dropped connection, a crash). A replay of such a row answers the
 * LoadTableResult of that metadata file (204 for a rename, drop or transaction). The row
 * also holds the table-uuid of the table a commit changed or a create made: when that
 * metadata file cannot be read any more and the table now under the name is another one
 * (purged and created anew), the replay says the table is gone - 404 NoSuchTableException
 * for a commit (a 409 CommitFailedException would have the client refresh and apply its
 * change to the other table), 409 AlreadyExistsException for a create - and never answers
 * with the other table's state as if the old request had been applied to it.
 *
 * A namespace change (create, drop, update properties) runs in a transaction of the
 * handle's connection that the handler opens (rs_idem_change_begin) and that commits the
 * change with its answer's row (rs_idem_change_end): the record of its answer, too, exists
 * exactly when the change does.
 *
 * The row is first the key's claim: rs_idem_claim inserts it (status 0, a random claim
 * id) before the request runs, in a statement of its own, and the change's transaction
 * (or the recording after a change-less answer) fills in the answer on that claim only.
 * Two requests with one key that arrive at two servers at the same moment (a client's
 * retry after its first request timed out, while that one still runs) cannot both run:
 * the second finds the claim (the database's unique key orders the two inserts) and waits
 * for the first's answer, at most --max-wait (then 503), and answers with it - never with
 * the 409 or 404 its own run would have met once the first's change landed (adversary
 * adv21h H5). A 5xx releases the claim, so a retry runs; a claim whose server died before
 * answering lapses after CLAIM_LEASE_MS, and a change whose claim was taken over is
 * refused (rolled back). A transaction over several tables claims the key once: the swap
 * hook of its next tables finds the row recorded on this request's claim and goes on.
 * On one server the second request waits for the first's answer before it starts.
 *
 * Limits: answers that change nothing (a staged create, refusals) are recorded after the
 * operation, in a statement of their own, so a server that dies between the two runs the
 * retry again (which changes nothing either); a drop with purge is recorded with the drop,
 * so a retry after purging stopped answers 204 and purges nothing more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/sql.h"
#include "floe/table.h"
#include "rs_internal.h"

#define KEEP_MS (2 * RS_IDEM_LIFETIME_MS)
/* A claim (status 0: the request runs) older than this is taken for abandoned (its server
 * died before answering): a retry may take the key over and run. */
#define CLAIM_LEASE_MS ((long long)10 * 60 * 1000)

static const char SQL_CREATE[] =
    "CREATE TABLE IF NOT EXISTS floe_rest_idempotency ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "idempotency_key VARCHAR(36) NOT NULL, "
    "request VARCHAR(64) NOT NULL, "
    "status INTEGER NOT NULL, "
    "etag VARCHAR(48), "
    "body TEXT, "
    "created_ms BIGINT NOT NULL, "
    "metadata_location TEXT, "
    "table_uuid VARCHAR(40), "
    "claim VARCHAR(40), "
    "PRIMARY KEY (catalog_name, idempotency_key))";

static int no_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)ctx, (void)cols, (void)n, (void)err;
    return 0;
}

static int on_location(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)n, (void)err;
    char **loc = ctx;
    if (!(*loc = floe_strdup(cols[0] ? cols[0] : "")))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* The key is someone else's: the change is refused (rolled back by the caller of the
 * hook) and the request is answered from the other's record. */
static int claim_lost(rs_idem_slot *slot, floe_error *err) {
    slot->lost = true;
    return floe_error_set(err, FLOE_EEXISTS,
                          "Idempotency-Key %s: another request with this key made its change "
                          "first", slot->key);
}

/* A request with a key records in the transaction of the change it makes the answer a
 * later retry is given: the row of its claim (rs_idem_claim) gets the status the route
 * answers on success and the metadata location a table result is made from (NULL for a
 * drop or rename). The change is refused (FLOE_EEXISTS, slot->lost) when the claim is not
 * this request's any more (taken over as abandoned). A transaction's next tables find the
 * row recorded by this request already, and go on. */
static int record_in_change(rs_idem_slot *slot, floe_sql *db, const char *location,
                            floe_error *err) {
    if (!slot->key)
        return 0;
    char status[16];
    snprintf(status, sizeof status, "%d", slot->status);
    const char *params[] = {status, location, slot->uuid[0] ? slot->uuid : NULL,
                            slot->s->name, slot->key, slot->owner};
    int64_t updated = 0;
    FLOE_FORWARD_IF_ERROR(floe_sql_exec(
        db, "UPDATE floe_rest_idempotency SET status = CAST(? AS INTEGER), "
        "metadata_location = ?, table_uuid = ? WHERE catalog_name = ? AND idempotency_key = ? "
        "AND claim = ? AND status = 0", params, 6, &updated, err));
    if (updated == 0) {
        char *held = NULL;
        FLOE_FORWARD_IF_ERROR(floe_sql_query(
            db, "SELECT claim FROM floe_rest_idempotency WHERE catalog_name = ? "
            "AND idempotency_key = ?", params + 3, 2, on_location, &held, err));
        bool ours = held && !strcmp(held, slot->owner);
        floe_free(held);
        return ours ? 0 : claim_lost(slot, err);
    }
    slot->recorded = true;
    return 0;
}

/* The swap hook of every handle: a commit (or a register with overwrite). */
static int swap_hook(void *ctx, floe_sql *db, const char *ns, const char *name,
                     const char *expected, const char *new_location, floe_error *err) {
    (void)ns, (void)name, (void)expected;
    return record_in_change(ctx, db, new_location, err);
}

/* The change hook of every handle: a create or register (the new table's metadata), a
 * rename or a drop. */
static int change_hook(void *ctx, floe_sql *db, floe_catalog_change kind, const char *ns,
                       const char *name, const char *to_ns, const char *to_name,
                       const char *location, floe_error *err) {
    (void)kind, (void)ns, (void)name, (void)to_ns, (void)to_name;
    return record_in_change(ctx, db, location, err);
}

int rs_idem_open(floe_rest_server *s, floe_error *err) {
    floe_sql *db = floe_catalog_sql(s->cat);
    if (!db)
        return 0;
    /* two servers starting at once on PostgreSQL: the loser of the race on CREATE TABLE IF
     * NOT EXISTS is told the table (or its row type) exists, which is all it wants */
    int rc = floe_sql_exec(db, SQL_CREATE, NULL, 0, NULL, err);
    if (rc == FLOE_EEXISTS) {
        floe_error_clear(err);
        rc = 0;
    }
    FLOE_FORWARD_IF_ERROR(rc);
    /* a table made before the columns were added */
    static const char *const added[][2] = {{"metadata_location", "TEXT"},
                                           {"table_uuid", "VARCHAR(40)"},
                                           {"claim", "VARCHAR(40)"}};
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
        char sql[160];
        floe_error probe;
        floe_error_clear(&probe);
        snprintf(sql, sizeof sql, "SELECT %s FROM floe_rest_idempotency WHERE 1 = 0",
                 added[i][0]);
        if (floe_sql_query(db, sql, NULL, 0, no_row, NULL, &probe) == 0)
            continue;
        snprintf(sql, sizeof sql, "ALTER TABLE floe_rest_idempotency ADD COLUMN %s %s",
                 added[i][0], added[i][1]);
        FLOE_FORWARD_IF_ERROR(floe_sql_exec(db, sql, NULL, 0, NULL, err));
    }
    for (size_t i = 0; i < RS_CATALOG_HANDLES; i++) {
        s->slots[i] = (rs_idem_slot){.s = s};
        FLOE_FORWARD_IF_ERROR(floe_catalog_set_swap_hook(s->cats[i], swap_hook, &s->slots[i], err));
        FLOE_FORWARD_IF_ERROR(
            floe_catalog_set_change_hook(s->cats[i], change_hook, &s->slots[i], err));
    }
    s->idem = true;
    return 0;
}

void rs_idem_begin(floe_rest_server *s, size_t h, const char *key, const char *fp, int status) {
    s->slots[h] = (rs_idem_slot){.s = s, .key = key, .fp = fp, .status = status};
    floe_uuid4(s->slots[h].owner);
}

void rs_idem_end(floe_rest_server *s, size_t h) {
    s->slots[h] = (rs_idem_slot){.s = s};
}

bool rs_idem_lost(const floe_rest_server *s, size_t h) {
    return s->slots[h].lost;
}

void rs_idem_table(rs_req *q, const char *uuid) {
    rs_idem_slot *slot = &q->s->slots[q->h];
    snprintf(slot->uuid, sizeof slot->uuid, "%s", uuid ? uuid : "");
}

bool rs_idem_key_valid(const char *key) {
    if (strlen(key) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        char c = key[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (dash ? c != '-' : !hex)
            return false;
    }
    return true;
}

int rs_idem_fingerprint(const char *method, const char *url, const void *body, size_t len,
                        char out[65], floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, 0);
    FLOE_IGNORE_RESULT(floe_buf_printf(&b, "%s %s\n", method, url)); /* checked below */
    FLOE_IGNORE_RESULT(floe_buf_append(&b, body, len));
    uint8_t h[32];
    int rc = floe_buf_error(&b) < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                                    : floe_sha256(b.data, b.len, h, err);
    floe_buf_free(&b);
    if (rc < 0)
        return rc;
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
    return 0;
}

typedef struct found {
    bool any;
    char request[65];
    int status;
    char etag[48];
    floe_buf *body;
    char *location; /* the metadata a commit's swap recorded */
    char uuid[40];  /* the table-uuid recorded with it ("" none) */
} found;

static int on_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    found *f = ctx;
    (void)n;
    f->any = true;
    snprintf(f->request, sizeof f->request, "%s", cols[0] ? cols[0] : "");
    f->status = cols[1] ? atoi(cols[1]) : 500;
    snprintf(f->etag, sizeof f->etag, "%s", cols[2] ? cols[2] : "");
    if (cols[3] && floe_buf_append(f->body, cols[3], strlen(cols[3])) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (n > 4 && cols[4] && !(f->location = floe_strdup(cols[4])))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    snprintf(f->uuid, sizeof f->uuid, "%s", n > 5 && cols[5] ? cols[5] : "");
    return 0;
}

/* The answer to a replayed commit: the LoadTableResult of the metadata file its swap
 * recorded. When that file cannot be read any more (the table dropped with purge since,
 * the file removed as old metadata), the answer is still definite - never a 500, which a
 * client reads as "outcome unknown" and retries - and names no server path (those go to
 * the log): the table as it is now (200: the commit landed, and the table has moved on
 * from it), or 404 NoSuchTableException when there is no such table any more - also when
 * the table there now is another one than uuid (recorded: the table changed or made; ""
 * unknown), which a create's replay answers with 409 AlreadyExistsException instead. */
static void replay_table_result(rs_req *q, const char *key, const char *location,
                                const char *uuid, rs_resp *r) {
    floe_error err;
    floe_error_clear(&err);
    if (rs_table_result_at(r, q->cat, location, &err) == 0)
        return;
    floe_log(FLOE_LOG_WARN, "catalog serve: Idempotency-Key %s: the metadata %s of the "
             "recorded commit cannot be read (%s): answering from the table as it is now",
             key, location, err.msg);
    floe_buf_reset(&r->body);
    r->etag[0] = '\0';
    /* the table: the path's (a commit), or the body's name (a create or register) */
    const char *name = q->table ? q->table : json_string_value(json_object_get(q->body, "name"));
    floe_table *t = NULL;
    floe_error_clear(&err);
    int rc = q->ns && name ? floe_table_load(q->cat, q->ns, name, &t, &err) : FLOE_ENOTFOUND;
    const char *now = rc == 0 ? floe_table_metadata_get(t)->table_uuid : NULL;
    if (rc == 0 && *uuid && now && strcmp(now, uuid)) {
        if (q->table)
            rs_error(r, 404, "NoSuchTableException",
                     "the table the change sent with Idempotency-Key %s was made to (table-uuid "
                     "%s) has been dropped since: %s.%s is now another table (table-uuid %s), "
                     "which that change never touched", key, uuid, q->ns, name, now);
        else
            rs_error(r, 409, "AlreadyExistsException",
                     "the table created with Idempotency-Key %s (table-uuid %s) has been "
                     "dropped since, and %s.%s is now another table (table-uuid %s)", key, uuid,
                     q->ns, name, now);
    } else if (rc == 0) {
        rs_table_result(r, t, false);
    } else if (rc == FLOE_ENOTFOUND) {
        rs_error(r, 404, "NoSuchTableException",
                 "table %s.%s does not exist: the change sent with Idempotency-Key %s was "
                 "made, and the table has been dropped since", q->ns ? q->ns : "?",
                 name ? name : "?", key);
    } else {
        floe_log(FLOE_LOG_WARN, "catalog serve: Idempotency-Key %s: loading %s.%s: %s", key,
                 q->ns, name, err.msg);
        rs_error(r, 503, "ServiceUnavailableException",
                 "the change sent with Idempotency-Key %s was made, but table %s.%s cannot be "
                 "read now: retry later", key, q->ns, name);
    }
    floe_table_close(t);
}

/* When an answer is recorded under key: put it (or the 400 of a key reused for another
 * request) in r and return true. The request is the recorded one when its fingerprint is
 * fp, or fp_raw (NULL: none; the raw body's, as earlier servers recorded it). A failed
 * lookup answers 5xx and returns true. *pending when the key is claimed by a request
 * still running (status 0, within its lease): false then, nothing in r. */
static bool lookup(rs_req *q, const char *key, const char *fp, const char *fp_raw, rs_resp *r,
                   bool *pending) {
    floe_sql *db = floe_catalog_sql(q->cat);
    char sql[640];
    const char *now = floe_sql_clock_ms_expr(db);
    *pending = false;
    snprintf(sql, sizeof sql,
             "SELECT request, status, etag, body, metadata_location, table_uuid FROM "
             "floe_rest_idempotency WHERE "
             "catalog_name = ? AND idempotency_key = ? AND created_ms > %s - %lld AND "
             "(status <> 0 OR created_ms > %s - %lld)",
             now, (long long)KEEP_MS, now, CLAIM_LEASE_MS);
    const char *params[] = {q->s->name, key};
    floe_buf_reset(&r->body);
    found f = {.body = &r->body};
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_sql_query(db, sql, params, 2, on_row, &f, &err);
    if (rc < 0) {
        rs_floe_error(r, rc == FLOE_EBUSY ? rc : FLOE_EIO, &err, "NotFoundException");
        return true; /* not knowing whether it ran, run nothing: the 5xx invites a retry */
    }
    if (!f.any)
        return false;
    if (strcmp(f.request, fp) && (!fp_raw || strcmp(f.request, fp_raw))) {
        floe_free(f.location);
        rs_error(r, 400, "BadRequestException",
                 "Idempotency-Key %s was used for another request (keys must not be reused "
                 "across operations)", key);
        return true;
    }
    if (f.status == 0) {
        floe_free(f.location);
        floe_buf_reset(&r->body);
        *pending = true;
        return false;
    }
    r->status = f.status;
    snprintf(r->etag, sizeof r->etag, "%s", f.etag);
    if (f.location && f.status == 200 && !r->body.len)
        replay_table_result(q, key, f.location, f.uuid, r); /* recorded by the change */
    floe_free(f.location);
    floe_log(FLOE_LOG_INFO, "catalog serve: Idempotency-Key %s: the recorded answer (%d) again",
             key, f.status);
    return true;
}

bool rs_idem_claim(rs_req *q, const char *fp_raw, bool take, rs_resp *r) {
    rs_idem_slot *slot = &q->s->slots[q->h];
    floe_sql *db = floe_catalog_sql(q->cat);
    const char *now = floe_sql_clock_ms_expr(db);
    int64_t until = floe_now_ns() / 1000000 + q->s->max_wait_ms;
    for (;;) {
        bool pending;
        if (lookup(q, slot->key, slot->fp, fp_raw, r, &pending))
            return true;
        floe_error err;
        floe_error_clear(&err);
        if (!pending && take) {
            /* an expired answer, or a claim abandoned by a server that died, gives way */
            char sql[512];
            snprintf(sql, sizeof sql,
                     "DELETE FROM floe_rest_idempotency WHERE catalog_name = ? AND "
                     "idempotency_key = ? AND (created_ms <= %s - %lld OR (status = 0 AND "
                     "created_ms <= %s - %lld))", now, (long long)KEEP_MS, now, CLAIM_LEASE_MS);
            const char *params[] = {q->s->name, slot->key, slot->fp, slot->owner};
            int rc = floe_sql_exec(db, sql, params, 2, NULL, &err);
            snprintf(sql, sizeof sql,
                     "INSERT INTO floe_rest_idempotency (catalog_name, idempotency_key, request, "
                     "status, created_ms, claim) VALUES (?, ?, ?, 0, %s, ?) "
                     "ON CONFLICT (catalog_name, idempotency_key) DO NOTHING", now);
            int64_t inserted = 0;
            if (rc == 0)
                rc = floe_sql_exec(db, sql, params, 4, &inserted, &err);
            if (rc < 0) {
                rs_floe_error(r, rc == FLOE_EBUSY ? rc : FLOE_EIO, &err, "NotFoundException");
                return true;
            }
            if (inserted)
                return false; /* the key is this request's: it runs */
            continue;         /* another request claimed it just now */
        }
        if (!pending) {
            rs_error(r, 503, "ServiceUnavailableException",
                     "Idempotency-Key %s: another request with this key ran and left no "
                     "answer; retry", slot->key);
            return true;
        }
        if (atomic_load(&q->s->stopping) || floe_now_ns() / 1000000 >= until) {
            rs_error(r, 503, "ServiceUnavailableException",
                     "another request with Idempotency-Key %s is still running after %lld ms "
                     "(--max-wait); retry later for its answer", slot->key,
                     (long long)q->s->max_wait_ms);
            return true;
        }
        usleep(20 * 1000);
    }
}

/* Record answer r on the claim of slot on db (inside the caller's transaction when one is
 * open); *updated 0 when the claim is not the slot's any more. */
static int update_answer(floe_sql *db, const rs_idem_slot *slot, const rs_resp *r,
                         int64_t *updated, floe_error *err) {
    char sql[512], status[16];
    snprintf(status, sizeof status, "%d", r->status);
    floe_buf body;
    floe_buf_init(&body, 0);
    FLOE_IGNORE_RESULT(floe_buf_append(&body, r->body.data, r->body.len)); /* checked below */
    FLOE_IGNORE_RESULT(floe_buf_append_byte(&body, 0));
    int rc = 0;
    if (floe_buf_error(&body) < 0) {
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    } else {
        snprintf(sql, sizeof sql,
                 "UPDATE floe_rest_idempotency SET status = CAST(? AS INTEGER), etag = ?, "
                 "body = ? WHERE catalog_name = ? AND idempotency_key = ? AND claim = ? AND "
                 "status = 0");
        const char *params[] = {status, r->etag[0] ? r->etag : NULL,
                                r->body.len ? (const char *)body.data : NULL,
                                slot->s->name, slot->key, slot->owner};
        rc = floe_sql_exec(db, sql, params, 6, updated, err);
    }
    floe_buf_free(&body);
    return rc;
}

void rs_idem_record(rs_req *q, size_t h, const char *key, const char *fp, const rs_resp *r) {
    (void)fp;
    rs_idem_slot *slot = &q->s->slots[h];
    floe_sql *db = floe_catalog_sql(q->cat);
    char sql[512];
    floe_error err;
    floe_error_clear(&err);
    int rc = 0;
    if (slot->recorded && r->status < 300)
        return; /* the change recorded it */
    if (r->status >= 500 || floe_buf_error(&r->body) < 0) {
        /* no answer: the claim goes, so a retry runs */
        const char *params[] = {q->s->name, key, slot->owner};
        if (floe_sql_exec(db, "DELETE FROM floe_rest_idempotency WHERE catalog_name = ? AND "
                          "idempotency_key = ? AND claim = ? AND status = 0", params, 3, NULL,
                          &err) < 0)
            floe_log(FLOE_LOG_WARN, "catalog serve: Idempotency-Key %s: the claim could not "
                     "be released (a retry waits until it lapses): %s", key, err.msg);
        return;
    }
    /* expired answers go at most once a minute (a write of its own each time) */
    int64_t now = floe_now_ns() / 1000000;
    pthread_mutex_lock(&q->s->mu);
    bool sweep = now - q->s->idem_swept_ms >= 60000;
    if (sweep)
        q->s->idem_swept_ms = now;
    pthread_mutex_unlock(&q->s->mu);
    if (sweep) {
        snprintf(sql, sizeof sql,
                 "DELETE FROM floe_rest_idempotency WHERE catalog_name = ? AND created_ms <= %s - %lld",
                 floe_sql_clock_ms_expr(db), (long long)KEEP_MS);
        const char *del[] = {q->s->name};
        rc = floe_sql_exec(db, sql, del, 1, NULL, &err);
    }
    if (rc == 0)
        rc = update_answer(db, slot, r, NULL, &err);
    if (rc < 0)
        floe_log(FLOE_LOG_WARN,
                 "catalog serve: Idempotency-Key %s: the answer could not be recorded (a retry "
                 "will run again): %s", key, err.msg);
}

int rs_idem_change_begin(rs_req *q, rs_resp *r) {
    floe_sql *db = floe_catalog_sql(q->cat);
    if (!q->s->slots[q->h].key || !db)
        return 0;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_sql_begin(db, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, "NoSuchNamespaceException");
        return -1;
    }
    return 1;
}

void rs_idem_change_end(rs_req *q, int opened, rs_resp *r) {
    if (opened <= 0)
        return;
    floe_sql *db = floe_catalog_sql(q->cat);
    rs_idem_slot *slot = &q->s->slots[q->h];
    if (r->status >= 300 || floe_buf_error(&r->body) < 0) {
        floe_sql_rollback(db); /* a refusal changed nothing; its answer is recorded after */
        return;
    }
    floe_error err;
    floe_error_clear(&err);
    int64_t inserted = 0;
    int rc = update_answer(db, slot, r, &inserted, &err);
    if (rc < 0) {
        floe_sql_rollback(db);
        rs_floe_error(r, rc == FLOE_EBUSY ? rc : FLOE_EIO, &err, "NoSuchNamespaceException");
        return;
    }
    if (inserted == 0) { /* the key is another request's: its answer is the one */
        floe_sql_rollback(db);
        slot->lost = true;
        return;
    }
    rc = floe_sql_commit(db, &err);
    if (rc < 0) {
        rs_floe_error(r, rc, &err, "NoSuchNamespaceException");
        return;
    }
    slot->recorded = true;
}
