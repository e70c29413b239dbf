/*
 * test_pg_catalog.c - the SQL catalog on PostgreSQL, leases on both databases, and the
 * connection-loss cases of the libpq driver.
 *
 * Needs a server: FLOE_PG_URI=postgresql://user:pass@host:port/db (a database the tests
 * may fill; each test uses its own catalog name). tests/integration/pg_catalog.sh starts
 * a throwaway server (tests/lib/pg.sh) and runs this program; without FLOE_PG_URI only
 * the SQLite lease tests and the URI parsing run, and the run exits 77 (a skip for ctest).
 *
 * An independent libpq connection ("admin") plays the other parties: it holds row locks,
 * terminates floe's server processes, and reads information_schema for the layout check.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "catalog/sql_driver.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/lease.h"
#include "floe/maint.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "catalog_suite.h"
#include "table/commit_testing.h"

static const char *pg_uri;

#define NEED_PG()                                                                      \
    do {                                                                               \
        if (!pg_uri) {                                                                 \
            printf("skip: FLOE_PG_URI is not set\n");                                  \
            return;                                                                    \
        }                                                                              \
    } while (0)

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static floe_catalog *open_pg(const char *name, const char *dir) {
    char wh[4096];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    if (floe_catalog_open_postgres(NULL, pg_uri, name, wh, &c, &err) != 0)
        harness_fail(__FILE__, __LINE__, "open catalog: %s", err.msg);
    return c;
}

/* The independent connection. */
static PGconn *admin(void) {
    PGconn *a = PQconnectdb(pg_uri);
    if (PQstatus(a) != CONNECTION_OK) {
        harness_fail(__FILE__, __LINE__, "admin connection: %s", PQerrorMessage(a));
        PQfinish(a);
        return NULL;
    }
    PQclear(PQexec(a, "SET client_min_messages = warning"));
    return a;
}

static bool admin_ok(PGconn *a, const char *sql) {
    PGresult *r = PQexec(a, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        harness_fail(__FILE__, __LINE__, "admin: %s: %s", sql, PQerrorMessage(a));
    PQclear(r);
    return ok;
}

/* First column of the first row as text (malloc'ed), NULL when no row. */
static char *admin_value(PGconn *a, const char *sql) {
    PGresult *r = PQexec(a, sql);
    char *v = NULL;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
        v = strdup(PQgetvalue(r, 0, 0));
    else if (PQresultStatus(r) != PGRES_TUPLES_OK)
        harness_fail(__FILE__, __LINE__, "admin: %s: %s", sql, PQerrorMessage(a));
    PQclear(r);
    return v;
}

static int row_text(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    if (n >= 1 && cols[0])
        snprintf(ctx, 64, "%s", cols[0]);
    return 0;
}

/* The server process behind a floe connection. */
static int backend_pid(floe_sql *db) {
    char pid[64] = "";
    floe_error err;
    floe_error_clear(&err);
    if (floe_sql_query(db, "SELECT pg_backend_pid()", NULL, 0, row_text, pid, &err) != 0)
        harness_fail(__FILE__, __LINE__, "backend pid: %s", err.msg);
    return atoi(pid);
}

/* Terminate a server process and wait until it is gone. */
static void kill_backend(PGconn *a, int pid) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", pid);
    char *v = admin_value(a, sql);
    CHECK(v && !strcmp(v, "t"));
    free(v);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid);
    for (int i = 0; i < 500; i++) {
        v = admin_value(a, sql);
        bool gone = v && !strcmp(v, "0");
        free(v);
        if (gone) {
            /* The backend leaves pg_stat_activity before its process exits and its socket
             * closes; the tests' servers run on this machine, so wait for the process
             * itself (bounded: with a remote server the pid means nothing here). */
            for (int j = 0; j < 500 && !(kill(pid, 0) < 0 && errno == ESRCH); j++)
                sleep_ms(10);
            return;
        }
        sleep_ms(10);
    }
    harness_fail(__FILE__, __LINE__, "backend %d did not exit", pid);
}

static floe_catalog *open_cb(const void *ctx, const char *dir) {
    return open_pg(ctx, dir);
}

static floe_table *fresh_table(const char *name, const char *dir, floe_catalog **cat,
                               const floe_kv *props, size_t nprops) {
    return suite_fresh_table(open_cb, name, dir, cat, props, nprops);
}

/* A catalog name nobody else used in this database. */
static const char *cat_name(const char *base) {
    static char buf[8][96];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, 96, "%s_%ld_%ld", base, (long)getpid(), (long)time(NULL));
    return b;
}

/* ---------------------------------------------------------------------------------------
 * URIs (no server needed)
 * ------------------------------------------------------------------------------------- */

TEST(uri_forms) {
    int pg = -1;
    char *t = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_sql_uri_parse("postgresql://u:p@h:5432/db", &pg, &t, &err), err);
    CHECK_EQ_INT(pg, 1);
    CHECK_EQ_STR(t, "postgresql://u:p@h:5432/db");
    floe_free(t);
    REQUIRE_OK(floe_sql_uri_parse("postgres://h/db", &pg, &t, &err), err);
    CHECK_EQ_STR(t, "postgresql://h/db");
    floe_free(t);
    REQUIRE_OK(floe_sql_uri_parse("postgresql+psycopg2://u:p@h/db?sslmode=disable", &pg, &t, &err),
               err);
    CHECK_EQ_INT(pg, 1);
    CHECK_EQ_STR(t, "postgresql://u:p@h/db?sslmode=disable");
    floe_free(t);
    REQUIRE_OK(floe_sql_uri_parse("sqlite:////abs/c.db", &pg, &t, &err), err);
    CHECK_EQ_INT(pg, 0);
    CHECK_EQ_STR(t, "/abs/c.db");
    floe_free(t);
    REQUIRE_OK(floe_sql_uri_parse("rel/c.db", &pg, &t, &err), err);
    CHECK_EQ_STR(t, "rel/c.db");
    floe_free(t);
    CHECK_EQ_INT(floe_sql_uri_parse("mysql://h/db", &pg, &t, &err), FLOE_EUNSUPPORTED);
    CHECK_EQ_INT(floe_sql_uri_parse("sqlite://", &pg, &t, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_sql_uri_parse("", &pg, &t, &err), FLOE_EINVALID);
    char *r = floe_sql_uri_redact("postgresql://alice:s3cret@db.example:5432/cat");
    CHECK_EQ_STR(r, "postgresql://alice:***@db.example:5432/cat");
    floe_free(r);
    r = floe_sql_uri_redact("postgresql://h/db?user=a&password=s3cret&x=1");
    CHECK_EQ_STR(r, "postgresql://h/db?user=a&password=***&x=1");
    floe_free(r);
    /* .pyiceberg.yaml with SQLAlchemy's PostgreSQL URL: a sql catalog */
    const char *yaml = "catalog:\n  pg:\n    uri: postgresql+psycopg2://u:p@h:5432/ice\n"
                       "    warehouse: file:///tmp/wh\n";
    floe_catalog_config cfg = {0};
    REQUIRE_OK(floe_catalog_config_from_pyiceberg_yaml(yaml, strlen(yaml), "pg", &cfg, &err), err);
    CHECK_EQ_STR(cfg.type, "sql");
    CHECK_EQ_STR(cfg.uri, "postgresql+psycopg2://u:p@h:5432/ice");
    floe_catalog_config_reset(&cfg);
}

TEST(unreachable_server_names_no_password) {
    /* a port nobody listens on (bound, never listening) */
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    int rc = floe_catalog_open_postgres(NULL, "postgresql://u:topsecret@127.0.0.1:1/db?connect_timeout=2",
                                        "x", "/tmp/wh", &c, &err);
    CHECK_EQ_INT(rc, FLOE_EIO);
    CHECK(c == NULL);
    CHECK(strstr(err.msg, "topsecret") == NULL);
    CHECK(strstr(err.msg, "127.0.0.1") != NULL);
}

/* ---------------------------------------------------------------------------------------
 * the catalog suite
 * ------------------------------------------------------------------------------------- */

TEST(namespaces_pg) {
    NEED_PG();
    floe_catalog *c = open_pg(cat_name("ns"), harness_tmpdir());
    REQUIRE(c != NULL);
    CHECK_EQ_STR(floe_catalog_type(c), "sql");
    CHECK(floe_catalog_swap_outcome_final(c));
    floe_error err;
    floe_error_clear(&err);
    bool ex = true;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "sales", &ex, &err), err);
    CHECK(!ex);
    const char *keys[] = {"owner"}, *vals[] = {"team-a"};
    REQUIRE_OK(floe_catalog_create_namespace(c, "sales", keys, vals, 1, &err), err);
    CHECK_EQ_INT(floe_catalog_create_namespace(c, "sales", NULL, NULL, 0, &err), FLOE_EEXISTS);
    REQUIRE_OK(floe_catalog_create_namespace(c, "sales.eu", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "ops", NULL, NULL, 0, &err), err);
    /* LIKE wildcards in names are literal */
    REQUIRE_OK(floe_catalog_create_namespace(c, "a_b", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_namespace_exists(c, "axb", &ex, &err), err);
    CHECK(!ex);
    floe_strlist l = {0};
    REQUIRE_OK(floe_catalog_list_namespaces(c, NULL, &l, &err), err);
    REQUIRE(l.n == 3);
    CHECK_EQ_STR(l.items[0], "a_b");
    CHECK_EQ_STR(l.items[1], "ops");
    CHECK_EQ_STR(l.items[2], "sales");
    floe_strlist_free(&l);
    REQUIRE_OK(floe_catalog_list_namespaces(c, "sales", &l, &err), err);
    REQUIRE(l.n == 1);
    CHECK_EQ_STR(l.items[0], "sales.eu");
    floe_strlist_free(&l);
    CHECK_EQ_INT(floe_catalog_list_namespaces(c, "nope", &l, &err), FLOE_ENOTFOUND);
    floe_strlist pk = {0}, pv = {0};
    const char *rm[] = {"owner"}, *nk[] = {"region", "tier"}, *nv[] = {"eu", "gold"};
    REQUIRE_OK(floe_catalog_update_namespace_properties(c, "sales", rm, 1, nk, nv, 2, &err), err);
    REQUIRE_OK(floe_catalog_load_namespace_properties(c, "sales", &pk, &pv, &err), err);
    REQUIRE(pk.n == 2);
    CHECK_EQ_STR(pk.items[0], "region");
    CHECK_EQ_STR(pv.items[0], "eu");
    CHECK_EQ_STR(pk.items[1], "tier");
    CHECK_EQ_STR(pv.items[1], "gold");
    floe_strlist_free(&pk);
    floe_strlist_free(&pv);
    REQUIRE_OK(floe_catalog_load_namespace_properties(c, "ops", &pk, &pv, &err), err);
    REQUIRE(pk.n == 1);
    CHECK_EQ_STR(pk.items[0], "exists");
    CHECK_EQ_STR(pv.items[0], "true");
    floe_strlist_free(&pk);
    floe_strlist_free(&pv);
    /* a property value over VARCHAR(1000) is refused before it reaches the server */
    char big[1100];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *bk[] = {"big"}, *bv[] = {big};
    CHECK_EQ_INT(floe_catalog_update_namespace_properties(c, "ops", NULL, 0, bk, bv, 1, &err),
                 FLOE_EINVALID);
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "sales", &err), FLOE_EINVALID);
    REQUIRE_OK(floe_catalog_drop_namespace(c, "sales.eu", &err), err);
    REQUIRE_OK(floe_catalog_drop_namespace(c, "sales", &err), err);
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "sales", &err), FLOE_ENOTFOUND);
    floe_catalog_close(c);
}

TEST(tables_pg) {
    NEED_PG();
    const char *name = cat_name("tables");
    floe_catalog *c = open_pg(name, harness_tmpdir());
    REQUIRE(c != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_table *t = NULL;
    CHECK_EQ_INT(floe_table_create(c, "db", "events", SCHEMA, NULL, &t, &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_catalog_create_namespace(c, "db2", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(c, "db", "events", SCHEMA, NULL, &t, &err), err);
    floe_table *extra = NULL;
    REQUIRE_OK(floe_table_create(c, "db", "Zeta", SCHEMA, NULL, &extra, &err), err);
    floe_table_close(extra);
    REQUIRE_OK(floe_table_create(c, "db", "alpha", SCHEMA, NULL, &extra, &err), err);
    floe_table_close(extra);
    const char *loc = floe_table_metadata_location(t);
    CHECK(strstr(loc, "/db/events/metadata/00000-") != NULL);
    floe_table *dup = NULL;
    CHECK_EQ_INT(floe_table_create(c, "db", "events", SCHEMA, NULL, &dup, &err), FLOE_EEXISTS);
    CHECK(dup == NULL);
    CHECK_EQ_INT(floe_catalog_register_table(c, "db", "events", loc, &err), FLOE_EEXISTS);
    floe_strlist l = {0};
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &l, &err), err);
    REQUIRE(l.n == 3); /* byte order, whatever the server's collation */
    CHECK_EQ_STR(l.items[0], "Zeta");
    CHECK_EQ_STR(l.items[1], "alpha");
    CHECK_EQ_STR(l.items[2], "events");
    floe_strlist_free(&l);
    CHECK_EQ_INT(floe_catalog_drop_namespace(c, "db", &err), FLOE_EINVALID);
    floe_table *t2 = NULL;
    REQUIRE_OK(floe_table_load(c, "db", "events", &t2, &err), err);
    CHECK_EQ_STR(floe_table_metadata_location(t2), loc);
    floe_table_close(t2);
    CHECK_EQ_INT(floe_table_load(c, "db", "nope", &t2, &err), FLOE_ENOTFOUND);
    /* another catalog name in the same database sees nothing */
    floe_catalog *other = open_pg(cat_name("other"), harness_tmpdir());
    REQUIRE(other != NULL);
    CHECK_EQ_INT(floe_table_load(other, "db", "events", &t2, &err), FLOE_ENOTFOUND);
    floe_catalog_close(other);
    REQUIRE_OK(floe_catalog_rename_table(c, "db", "events", "db2", "ev", &err), err);
    CHECK_EQ_INT(floe_table_load(c, "db", "events", &t2, &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_table_load(c, "db2", "ev", &t2, &err), err);
    floe_table_close(t2);
    CHECK_EQ_INT(floe_catalog_rename_table(c, "db", "alpha", "db2", "ev", &err), FLOE_EEXISTS);
    CHECK_EQ_INT(floe_catalog_rename_table(c, "db", "events", "db2", "x", &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_catalog_rename_table(c, "db2", "ev", "nons", "x", &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_catalog_drop_table(c, "db2", "ev", &err), err);
    CHECK_EQ_INT(floe_catalog_drop_table(c, "db2", "ev", &err), FLOE_ENOTFOUND);
    floe_table_close(t);
    floe_catalog_close(c);
    /* the same catalog through the configuration path: FLOE_CATALOG_URI */
    setenv("FLOE_CATALOG_URI", pg_uri, 1);
    setenv("FLOE_WAREHOUSE", harness_tmpdir(), 1);
    setenv("FLOE_CATALOG", name, 1);
    floe_catalog_config cfg = {0};
    REQUIRE_OK(floe_catalog_config_load(NULL, NULL, harness_getenv, NULL, &cfg, &err), err);
    unsetenv("FLOE_CATALOG_URI");
    unsetenv("FLOE_WAREHOUSE");
    unsetenv("FLOE_CATALOG");
    REQUIRE_OK(floe_catalog_open(&cfg, &c, &err), err);
    floe_catalog_config_reset(&cfg);
    REQUIRE_OK(floe_catalog_list_tables(c, "db", &l, &err), err);
    CHECK_EQ_INT(l.n, 2);
    floe_strlist_free(&l);
    floe_catalog_close(c);
}

TEST(cas_conflict_and_retry_pg) {
    NEED_PG();
    suite_conflict_and_retry(open_cb, cat_name("cas"), harness_tmpdir(), true);
}

TEST(drop_at_pg) {
    NEED_PG();
    suite_drop_at(open_cb, cat_name("dropat"), harness_tmpdir());
}

TEST(commit_gate_pg) {
    NEED_PG();
    suite_commit_gate(open_cb, cat_name("gate"), harness_tmpdir());
}

TEST(placement_pg) {
    NEED_PG();
    suite_placement(open_cb, cat_name("place"), harness_tmpdir(), true);
}

TEST(namespace_location_pg) {
    NEED_PG();
    suite_namespace_location(open_cb, cat_name("nsloc"), harness_tmpdir());
}

TEST(injected_faults_pg) {
    NEED_PG();
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}, {"commit.retry.max-wait-ms", "5"}};
    floe_table *t = fresh_table(cat_name("inj"), harness_tmpdir(), &c, props, 2);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    /* unknown, swap really happened: settled as committed */
    floe_commit_fault f = {.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .after_apply = true};
    floe_table_commit_inject(&f);
    work w2 = {.key = "k2", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w2, &err), err);
    CHECK_EQ_INT(w2.calls, 1);
    /* unknown, swap did not happen: provably (PostgreSQL outcomes are final once read) */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE};
    floe_table_commit_inject(&f);
    size_t files = suite_count_metadata_files(t);
    work w3 = {.key = "k3", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w3, &err), err);
    CHECK_EQ_INT(w3.calls, 2);
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    /* unknown and unresolvable: reported, our file kept */
    f = (floe_commit_fault){.nth_swap = 1, .code = FLOE_EUNKNOWN_STATE, .fail_resolve = true};
    floe_table_commit_inject(&f);
    files = suite_count_metadata_files(t);
    work w4 = {.key = "k4", .add_snapshot = true};
    CHECK_EQ_INT(floe_table_commit(t, apply_work, &w4, &err), FLOE_EUNKNOWN_STATE);
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    floe_table_commit_inject(NULL);
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 2);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* The driver loses the reply of a swap that the server committed: the commit reports
 * nothing wrong in the end, because the resolve step reads (after the old server process
 * is gone) that the pointer moved to our file. */
TEST(lost_reply_after_swap_pg) {
    NEED_PG();
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}};
    floe_table *t = fresh_table(cat_name("lost"), harness_tmpdir(), &c, props, 1);
    REQUIRE(t != NULL);
    floe_error err;
    floe_error_clear(&err);
    /* a first commit opens what commits use besides the catalog's connection (the commit
     * lease store), so the injected loss below hits the swap and nothing else */
    work warm = {.key = "warm", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &warm, &err), err);
    int pid_before = backend_pid(floe_catalog_sql(c));
    size_t files = suite_count_metadata_files(t);
    /* at the raw level: unknown, then the next read settles it */
    char *base = floe_strdup(floe_table_metadata_location(t));
    floe_pg_inject_lost_reply(1);
    work w = {.key = "lost", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    CHECK_EQ_INT(w.calls, 1); /* settled as applied: not re-applied */
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, floe_table_metadata_location(t));
    CHECK(strcmp(cur, base) != 0);
    floe_free(cur);
    CHECK(backend_pid(floe_catalog_sql(c)) != pid_before); /* a new connection */
    /* a raw swap whose reply is lost is FLOE_EUNKNOWN_STATE, never a conflict */
    char *now_loc = floe_strdup(floe_table_metadata_location(t));
    floe_pg_inject_lost_reply(1);
    CHECK_EQ_INT(floe_catalog_swap(c, "db", "t", now_loc, "/tmp/elsewhere.metadata.json", &err),
                 FLOE_EUNKNOWN_STATE);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, "/tmp/elsewhere.metadata.json");
    REQUIRE_OK(floe_catalog_swap(c, "db", "t", cur, now_loc, &err), err); /* put it back */
    floe_free(cur);
    floe_free(now_loc);
    floe_free(base);
    floe_pg_inject_lost_reply(0);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* ---------------------------------------------------------------------------------------
 * connection loss
 * ------------------------------------------------------------------------------------- */

typedef struct {
    int pid, fd;   /* floe's server process; our end of its connection */
} cut_ctx;

/* Wait until the server process waits for a lock, then cut the connection on our side
 * only: the process lives on, blocked, as after a network failure. */
static void *cut_when_blocked(void *arg) {
    cut_ctx *x = arg;
    PGconn *a = admin();
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pg_stat_activity WHERE pid = %d AND "
             "wait_event_type = 'Lock'", x->pid);
    for (int i = 0; a && i < 1000; i++) {
        char *v = admin_value(a, sql);
        free(v);
        if (v)
            break;
        sleep_ms(10);
    }
    shutdown(x->fd, SHUT_RDWR);
    PQfinish(a);
    return NULL;
}

/* Our socket connected from local port `port` (the client_port the server sees). */
static int socket_of_port(int port) {
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_storage ss;
        socklen_t n = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &n) != 0)
            continue;
        if (ss.ss_family == AF_INET && ntohs(((struct sockaddr_in *)&ss)->sin_port) == port)
            return fd;
        if (ss.ss_family == AF_INET6 && ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == port)
            return fd;
    }
    return -1;
}

/* floe_sql_options.settle_ms bounds the wait for the server process of a write whose
 * connection was lost: while that process is alive and may not be terminated (a role
 * without pg_terminate_backend), the next statement fails after settle_ms (here 300 ms)
 * with the outcome unsettled; once it is gone, statements run again and see what it did. */
TEST(settle_limit_pg) {
    NEED_PG();
    PGconn *a = admin();
    REQUIRE(a != NULL);
    const char *at = strrchr(pg_uri, '@');
    REQUIRE(at != NULL);
    char uri[1024];
    snprintf(uri, sizeof uri, "postgresql://floe_settle:settle-pw-1%s", at);
    admin_ok(a, "DROP TABLE IF EXISTS settle_t");
    admin_ok(a, "DROP ROLE IF EXISTS floe_settle");
    admin_ok(a, "CREATE ROLE floe_settle LOGIN NOSUPERUSER PASSWORD 'settle-pw-1'");
    admin_ok(a, "CREATE TABLE settle_t(id INTEGER PRIMARY KEY, v INTEGER)");
    admin_ok(a, "INSERT INTO settle_t VALUES(1, 0)");
    admin_ok(a, "GRANT SELECT, UPDATE ON settle_t TO floe_settle");
    admin_ok(a, "REVOKE EXECUTE ON FUNCTION pg_terminate_backend(integer, bigint) FROM PUBLIC");
    floe_sql_options o = {.settle_ms = 300};
    floe_sql *db = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_sql_open_with(uri, &o, &db, &err), err);
    cut_ctx x = {.pid = backend_pid(db), .fd = -1};
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT client_port FROM pg_stat_activity WHERE pid = %d", x.pid);
    char *port = admin_value(a, sql);
    REQUIRE(port != NULL);
    x.fd = socket_of_port(atoi(port));
    free(port);
    REQUIRE(x.fd >= 0);
    admin_ok(a, "BEGIN");
    admin_ok(a, "SELECT v FROM settle_t WHERE id = 1 FOR UPDATE");
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, cut_when_blocked, &x) == 0);
    CHECK_EQ_INT(floe_sql_exec(db, "UPDATE settle_t SET v = 1 WHERE id = 1", NULL, 0, NULL, &err),
                 FLOE_EUNKNOWN_STATE);
    pthread_join(th, NULL);
    char v[64] = "";
    int64_t t0 = floe_wall_ms();
    CHECK_EQ_INT(floe_sql_query(db, "SELECT v FROM settle_t WHERE id = 1", NULL, 0, row_text, v,
                                &err), FLOE_EIO);
    int64_t took = floe_wall_ms() - t0;
    CHECK(strstr(err.msg, "still running after 300 ms") != NULL);
    CHECK(took >= 300 && took < 10000);
    /* the lock goes: the process runs the update, cannot answer, ends; settled */
    admin_ok(a, "COMMIT");
    REQUIRE_OK(floe_sql_query(db, "SELECT v FROM settle_t WHERE id = 1", NULL, 0, row_text, v,
                              &err), err);
    CHECK_EQ_STR(v, "1");
    floe_sql_close(db);
    admin_ok(a, "GRANT EXECUTE ON FUNCTION pg_terminate_backend(integer, bigint) TO PUBLIC");
    admin_ok(a, "DROP TABLE settle_t");
    admin_ok(a, "DROP ROLE floe_settle");
    PQfinish(a);
}

static int first_col(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    snprintf(ctx, 64, "%s", n && cols[0] ? cols[0] : "");
    return 0;
}

static void sync_commit_of(const char *uri, char out[64]) {
    floe_error err;
    floe_error_clear(&err);
    floe_sql *db = NULL;
    out[0] = '\0';
    REQUIRE_OK(floe_sql_open(uri, &db, &err), err);
    REQUIRE_OK(floe_sql_query(db, "SHOW synchronous_commit", NULL, 0, first_col, out, &err), err);
    floe_sql_close(db);
}

/* A server set to synchronous_commit=off (tests/lib/pg.sh sets it so) forgets commits it
 * acknowledged when it crashes: floe's sessions raise off to local, and keep other values. */
TEST(synchronous_commit_never_off) {
    NEED_PG();
    PGconn *a = admin();
    REQUIRE(a != NULL);
    PGresult *r = PQexec(a, "SHOW synchronous_commit");
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
    bool server_off = !strcmp(PQgetvalue(r, 0, 0), "off");
    PQclear(r);
    PQfinish(a);
    REQUIRE(server_off); /* the case this test is about */
    char v[64];
    sync_commit_of(pg_uri, v);
    CHECK_EQ_STR(v, "local");
    char uri[2048];
    snprintf(uri, sizeof uri, "%s%soptions=-c%%20synchronous_commit%%3Dremote_write", pg_uri,
             strchr(pg_uri, '?') ? "&" : "?");
    sync_commit_of(uri, v);
    CHECK_EQ_STR(v, "remote_write");
}

/* Two processes creating the catalog's tables at once on a fresh database: the loser can
 * be told the table's row type already exists (42710 duplicate_object) rather than the
 * table (42P07). Both mean "already there", which opening a catalog accepts; the race
 * failed int_rest_pg's start of two servers. The SQLSTATE itself, made on purpose: */
TEST(duplicate_object_is_exists) {
    NEED_PG();
    floe_error err;
    floe_error_clear(&err);
    floe_sql *db = NULL;
    REQUIRE_OK(floe_sql_open(pg_uri, &db, &err), err);
    REQUIRE_OK(floe_sql_exec(db, "DROP TYPE IF EXISTS floe_test_dup_t", NULL, 0, NULL, &err), err);
    REQUIRE_OK(floe_sql_exec(db, "CREATE TYPE floe_test_dup_t AS (a int)", NULL, 0, NULL, &err),
               err);
    CHECK_EQ_INT(floe_sql_exec(db, "CREATE TYPE floe_test_dup_t AS (a int)", NULL, 0, NULL, &err),
                 FLOE_EEXISTS);
    REQUIRE_OK(floe_sql_exec(db, "DROP TYPE floe_test_dup_t", NULL, 0, NULL, &err), err);
    floe_sql_close(db);
}

TEST(reads_reconnect_after_terminate) {
    NEED_PG();
    floe_catalog *c = NULL;
    floe_table *t = fresh_table(cat_name("recon"), harness_tmpdir(), &c, NULL, 0);
    REQUIRE(t != NULL);
    PGconn *a = admin();
    REQUIRE(a != NULL);
    floe_error err;
    floe_error_clear(&err);
    /* idle connection killed: a read reconnects */
    int pid = backend_pid(floe_catalog_sql(c));
    kill_backend(a, pid);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, floe_table_metadata_location(t));
    floe_free(cur);
    int pid2 = backend_pid(floe_catalog_sql(c));
    CHECK(pid2 != pid);
    /* killed again: a write is not reported unknown either - the idle check noticed the
     * dead connection before anything was sent */
    kill_backend(a, pid2);
    REQUIRE_OK(floe_catalog_create_namespace(c, "after_kill", NULL, NULL, 0, &err), err);
    bool ex = false;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "after_kill", &ex, &err), err);
    CHECK(ex);
    /* and a commit after a kill just works */
    kill_backend(a, backend_pid(floe_catalog_sql(c)));
    work w = {.key = "after", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    CHECK_EQ_INT(w.calls, 1);
    /* inside a transaction a lost connection ends it: EIO, never applied */
    floe_sql *db = floe_catalog_sql(c);
    REQUIRE_OK(floe_sql_begin(db, &err), err);
    const char *p[] = {floe_catalog_name(c), "in_tx_ns", "k", "v"};
    REQUIRE_OK(floe_sql_exec(db,
                             "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                             "property_key, property_value) VALUES (?, ?, ?, ?)",
                             p, 4, NULL, &err),
               err);
    kill_backend(a, backend_pid(db));
    CHECK_EQ_INT(floe_sql_exec(db, "SELECT 1", NULL, 0, NULL, &err), FLOE_EIO);
    CHECK_EQ_INT(floe_sql_commit(db, &err), FLOE_EIO);
    CHECK(!floe_sql_in_transaction(db));
    REQUIRE_OK(floe_catalog_namespace_exists(c, "in_tx_ns", &ex, &err), err);
    CHECK(!ex);
    PQfinish(a);
    floe_table_close(t);
    floe_catalog_close(c);
}

typedef struct committer {
    floe_table *t;
    work w;
    int rc;
    floe_error err;
} committer;

static void *commit_thread(void *arg) {
    committer *cm = arg;
    floe_error_clear(&cm->err);
    cm->rc = floe_table_commit(cm->t, apply_work, &cm->w, &cm->err);
    return NULL;
}

/* A commit whose UPDATE waits on a row lock has its server process terminated: the
 * driver reports an unknown outcome, the resolve step (new connection, old process gone)
 * reads the old pointer, knows the swap did not happen, and the retry commits once. */
TEST(commit_in_flight_killed) {
    NEED_PG();
    const char *name = cat_name("inflight");
    floe_catalog *c = NULL;
    floe_kv props[] = {{"commit.retry.min-wait-ms", "1"}, {"commit.retry.max-wait-ms", "5"}};
    floe_table *t = fresh_table(name, harness_tmpdir(), &c, props, 2);
    REQUIRE(t != NULL);
    PGconn *blocker = admin(), *a = admin();
    REQUIRE(blocker && a);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = '%s' AND "
             "table_namespace = 'db' AND table_name = 't' FOR UPDATE",
             name);
    REQUIRE(admin_ok(blocker, "BEGIN"));
    REQUIRE(admin_ok(blocker, sql));
    size_t files = suite_count_metadata_files(t);
    int first_pid = backend_pid(floe_catalog_sql(c));
    committer cm = {.t = t, .w = {.key = "inflight", .add_snapshot = true}};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, commit_thread, &cm) == 0);
    /* wait until floe's UPDATE is blocked on the lock */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE pid = %d AND wait_event_type = 'Lock'",
             first_pid);
    bool waiting = false;
    for (int i = 0; i < 500 && !waiting; i++) {
        char *v = admin_value(a, sql);
        waiting = v && !strcmp(v, "1");
        free(v);
        if (!waiting)
            sleep_ms(10);
    }
    CHECK(waiting);
    kill_backend(a, first_pid);
    sleep_ms(200); /* the retry's UPDATE now waits on the lock from a new connection */
    REQUIRE(admin_ok(blocker, "ROLLBACK"));
    pthread_join(th, NULL);
    CHECK_EQ_INT(cm.rc, 0);
    if (cm.rc != 0)
        printf("commit: %s\n", cm.err.msg);
    CHECK_EQ_INT(cm.w.calls, 2);                       /* re-applied once */
    CHECK_EQ_INT(suite_count_metadata_files(t), files + 1);  /* the lost attempt's file removed */
    floe_error err;
    floe_error_clear(&err);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, floe_table_metadata_location(t));
    floe_free(cur);
    CHECK_EQ_INT(floe_table_metadata_get(t)->n_snapshots, 1);
    PQfinish(blocker);
    PQfinish(a);
    floe_table_close(t);
    floe_catalog_close(c);
}

/* ---------------------------------------------------------------------------------------
 * transactions across the catalog and other state
 * ------------------------------------------------------------------------------------- */

typedef struct hook_ctx {
    int calls;
    int fail_with;
    const char *catalog;
} hook_ctx;

static int record_hook(void *ctx, floe_sql *db, const char *ns, const char *name,
                       const char *expected, const char *new_location, floe_error *err) {
    (void)expected;
    hook_ctx *h = ctx;
    h->calls++;
    if (h->fail_with)
        return floe_error_set(err, h->fail_with, "hook refused");
    const char *p[] = {h->catalog, ns, name, new_location};
    return floe_sql_exec(db,
                         "INSERT INTO floe_test_landing (catalog_name, ns, tbl, location) "
                         "VALUES (?, ?, ?, ?)",
                         p, 4, NULL, err);
}

static int count_landing(floe_sql *db, const char *catalog) {
    char n[64] = "";
    floe_error err;
    floe_error_clear(&err);
    const char *p[] = {catalog};
    if (floe_sql_query(db, "SELECT count(*) FROM floe_test_landing WHERE catalog_name = ?", p, 1,
                       row_text, n, &err) != 0)
        harness_fail(__FILE__, __LINE__, "count: %s", err.msg);
    return atoi(n);
}

static void swap_hook_suite(floe_catalog *c, floe_table *t) {
    floe_error err;
    floe_error_clear(&err);
    floe_sql *db = floe_catalog_sql(c);
    REQUIRE(db != NULL);
    const char *create =
        "CREATE TABLE IF NOT EXISTS floe_test_landing (catalog_name VARCHAR(255), ns "
        "VARCHAR(255), tbl VARCHAR(255), location VARCHAR(1000))";
    REQUIRE_OK(floe_sql_exec(db, create, NULL, 0, NULL, &err), err);
    hook_ctx h = {.catalog = floe_catalog_name(c)};
    REQUIRE_OK(floe_catalog_set_swap_hook(c, record_hook, &h, &err), err);
    /* a commit and the hook's row: together */
    work w = {.key = "h1", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    CHECK_EQ_INT(h.calls, 1);
    CHECK_EQ_INT(count_landing(db, h.catalog), 1);
    /* a conflicting swap does not run the hook */
    CHECK_EQ_INT(floe_catalog_swap(c, "db", "t", "/not/current.metadata.json", "/x.json", &err),
                 FLOE_ECONFLICT);
    CHECK_EQ_INT(h.calls, 1);
    /* the hook fails: the swap is rolled back with it */
    char *before = floe_strdup(floe_table_metadata_location(t));
    h.fail_with = FLOE_EIO;
    CHECK_EQ_INT(floe_catalog_swap(c, "db", "t", before, "/tmp/y.metadata.json", &err), FLOE_EIO);
    CHECK_EQ_INT(h.calls, 2);
    char *cur = NULL;
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, before);
    floe_free(cur);
    CHECK_EQ_INT(count_landing(db, h.catalog), 1);
    h.fail_with = 0;
    REQUIRE_OK(floe_catalog_set_swap_hook(c, NULL, NULL, &err), err);
    /* the caller's own transaction: swap + row, rolled back together */
    REQUIRE_OK(floe_sql_begin(db, &err), err);
    REQUIRE_OK(floe_catalog_swap(c, "db", "t", before, "/tmp/z.metadata.json", &err), err);
    const char *p[] = {h.catalog, "db", "t", "/tmp/z.metadata.json"};
    REQUIRE_OK(floe_sql_exec(db,
                             "INSERT INTO floe_test_landing (catalog_name, ns, tbl, location) "
                             "VALUES (?, ?, ?, ?)",
                             p, 4, NULL, &err),
               err);
    floe_sql_rollback(db);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, before);
    floe_free(cur);
    CHECK_EQ_INT(count_landing(db, h.catalog), 1);
    /* ... and committed together */
    REQUIRE_OK(floe_sql_begin(db, &err), err);
    REQUIRE_OK(floe_catalog_swap(c, "db", "t", before, "/tmp/z.metadata.json", &err), err);
    REQUIRE_OK(floe_sql_exec(db,
                             "INSERT INTO floe_test_landing (catalog_name, ns, tbl, location) "
                             "VALUES (?, ?, ?, ?)",
                             p, 4, NULL, &err),
               err);
    REQUIRE_OK(floe_sql_commit(db, &err), err);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "t", &cur, &err), err);
    CHECK_EQ_STR(cur, "/tmp/z.metadata.json");
    floe_free(cur);
    CHECK_EQ_INT(count_landing(db, h.catalog), 2);
    floe_free(before);
}

typedef struct change_ctx {
    int calls;
    int fail_with;
    floe_catalog_change last;
    char location[256];
} change_ctx;

static int change_hook(void *ctx, floe_sql *db, floe_catalog_change kind, const char *ns,
                       const char *name, const char *to_ns, const char *to_name,
                       const char *location, floe_error *err) {
    (void)db, (void)ns, (void)name, (void)to_ns, (void)to_name;
    change_ctx *h = ctx;
    h->calls++;
    h->last = kind;
    snprintf(h->location, sizeof h->location, "%s", location ? location : "");
    return h->fail_with ? floe_error_set(err, h->fail_with, "hook refused") : 0;
}

/* The change hook: told of each register, rename and drop inside its transaction; its
 * error rolls the change back; a rename or drop that finds no table does not call it. */
static void change_hook_suite(floe_catalog *c) {
    floe_error err;
    floe_error_clear(&err);
    change_ctx h = {0};
    char *loc = NULL;
    REQUIRE_OK(floe_catalog_set_change_hook(c, change_hook, &h, &err), err);
    REQUIRE_OK(floe_catalog_register_table(c, "db", "c1", "/tmp/c1.metadata.json", &err), err);
    CHECK_EQ_INT(h.calls, 1);
    CHECK_EQ_INT((int)h.last, (int)FLOE_CATALOG_CHANGE_REGISTER);
    CHECK_EQ_STR(h.location, "/tmp/c1.metadata.json");
    h.fail_with = FLOE_EIO;
    CHECK_EQ_INT(floe_catalog_register_table(c, "db", "c2", "/tmp/c2.metadata.json", &err),
                 FLOE_EIO);
    CHECK_EQ_INT(floe_catalog_load_table(c, "db", "c2", &loc, &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(floe_catalog_rename_table(c, "db", "c1", "db", "c3", &err), FLOE_EIO);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "c1", &loc, &err), err);
    floe_free(loc);
    loc = NULL;
    CHECK_EQ_INT(floe_catalog_drop_table(c, "db", "c1", &err), FLOE_EIO);
    REQUIRE_OK(floe_catalog_load_table(c, "db", "c1", &loc, &err), err);
    floe_free(loc);
    loc = NULL;
    h.fail_with = 0;
    int before = h.calls;
    CHECK_EQ_INT(floe_catalog_drop_table(c, "db", "nope", &err), FLOE_ENOTFOUND);
    CHECK_EQ_INT(h.calls, before);
    REQUIRE_OK(floe_catalog_rename_table(c, "db", "c1", "db", "c3", &err), err);
    CHECK_EQ_INT((int)h.last, (int)FLOE_CATALOG_CHANGE_RENAME);
    REQUIRE_OK(floe_catalog_drop_table(c, "db", "c3", &err), err);
    CHECK_EQ_INT((int)h.last, (int)FLOE_CATALOG_CHANGE_DROP);
    CHECK_EQ_INT(h.calls, before + 2);
    REQUIRE_OK(floe_catalog_set_change_hook(c, NULL, NULL, &err), err);
}

TEST(swap_hook_and_transactions_pg) {
    NEED_PG();
    floe_catalog *c = NULL;
    floe_table *t = fresh_table(cat_name("hook"), harness_tmpdir(), &c, NULL, 0);
    REQUIRE(t != NULL);
    CHECK_EQ_STR(floe_sql_dialect(floe_catalog_sql(c)), "postgresql");
    swap_hook_suite(c, t);
    change_hook_suite(c);
    floe_table_close(t);
    floe_catalog_close(c);
}

TEST(swap_hook_and_transactions_sqlite) {
    const char *dir = harness_tmpdir();
    char db[4096], wh[4096];
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "hook", wh, &c, &err), err);
    floe_table *t = NULL;
    REQUIRE_OK(floe_catalog_create_namespace(c, "db", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(c, "db", "t", SCHEMA, NULL, &t, &err), err);
    CHECK_EQ_STR(floe_sql_dialect(floe_catalog_sql(c)), "sqlite");
    swap_hook_suite(c, t);
    change_hook_suite(c);
    floe_table_close(t);
    floe_catalog_close(c);
    floe_catalog *fs = NULL;
    REQUIRE_OK(floe_catalog_open_fs(NULL, wh, &fs, &err), err);
    CHECK(floe_catalog_sql(fs) == NULL);
    CHECK_EQ_INT(floe_catalog_set_swap_hook(fs, record_hook, NULL, &err), FLOE_EUNSUPPORTED);
    CHECK_EQ_INT(floe_catalog_set_change_hook(fs, change_hook, NULL, &err), FLOE_EUNSUPPORTED);
    floe_catalog_close(fs);
}

/* ---------------------------------------------------------------------------------------
 * the landing lifecycle on a landing index kept in the catalog's database (floe serve on
 * PostgreSQL or a remote warehouse puts it there)
 * ------------------------------------------------------------------------------------- */

static void plant_file(const char *path) {
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_io_write_all(NULL, path, "x", 1, NULL, &err), err);
}

static bool exists_file(const char *path) {
    bool ex = false;
    return floe_io_exists(NULL, path, &ex, NULL) == 0 && ex;
}

static void lifecycle_in_catalog(floe_catalog *c, const char *wh) {
    floe_sql *db = floe_catalog_sql(c);
    REQUIRE(db != NULL);
    bool pg = !strcmp(floe_sql_dialect(db), "postgresql");
    floe_error err;
    floe_error_clear(&err);
    floe_landing_lifecycle_options o;
    floe_landing_lifecycle_options_init(&o);
    o.db = db;
    floe_landing_lifecycle_result r;
    REQUIRE_OK(floe_sql_exec(db, "DROP TABLE IF EXISTS landing_files", NULL, 0, NULL, &err),
               err);
    /* no server ever used this database: nothing to do, not an error */
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK(r.no_index);
    REQUIRE_OK(floe_sql_exec(db,
                             pg ? "CREATE TABLE landing_files(id BIGSERIAL PRIMARY KEY, "
                                  "tbl TEXT NOT NULL, uri TEXT NOT NULL, bytes BIGINT NOT "
                                  "NULL, created_ms BIGINT NOT NULL, state TEXT NOT NULL)"
                                : "CREATE TABLE landing_files(id INTEGER PRIMARY KEY, "
                                  "tbl TEXT NOT NULL, uri TEXT NOT NULL, bytes INTEGER NOT "
                                  "NULL, created_ms INTEGER NOT NULL, state TEXT NOT NULL)",
                             NULL, 0, NULL, &err),
               err);
    int64_t now = floe_wall_ms();
    struct {
        const char *state, *dir, *tbl;
        int64_t age_days;
    } rows[] = {
        {"committed", "_landing", "db.t", 4},   /* deleted */
        {"committed", "_landing", "db.t", 1},   /* too young */
        {"pending", "_landing", "db.t", 9},     /* not committed: kept, counted */
        {"quarantine", "_quarantine", "db.t", 9}, /* retention 7 days: deleted */
        {"committed", "_landing", "db.u", 9},   /* another table */
    };
    char paths[5][4200];
    for (int i = 0; i < 5; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s/%s/n1-%d.ndjson.zst", wh, rows[i].dir,
                 rows[i].tbl, i);
        plant_file(paths[i]);
        char created[32];
        snprintf(created, sizeof created, "%lld",
                 (long long)(now - rows[i].age_days * FLOE_MAINT_DAY_MS));
        const char *p[] = {rows[i].tbl, paths[i], created, rows[i].state};
        REQUIRE_OK(floe_sql_exec(db,
                                 "INSERT INTO landing_files(tbl, uri, bytes, created_ms, "
                                 "state) VALUES (?, ?, 1, CAST(? AS BIGINT), ?)",
                                 p, 4, NULL, &err),
                   err);
    }
    o.table = "db.t";
    o.quarantine_retention_ms = 7 * FLOE_MAINT_DAY_MS;
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK(!r.no_index);
    CHECK_EQ_INT(r.landing_deleted, 1);
    CHECK_EQ_INT(r.quarantine_deleted, 1);
    CHECK_EQ_INT(r.kept_uncommitted, 1);
    CHECK_EQ_INT(r.failures, 0);
    CHECK(!exists_file(paths[0]));
    CHECK(exists_file(paths[1]));
    CHECK(exists_file(paths[2]));
    CHECK(!exists_file(paths[3]));
    CHECK(exists_file(paths[4]));
    char ndeleted[64] = "";
    REQUIRE_OK(floe_sql_query(db, "SELECT COUNT(*) FROM landing_files WHERE state = 'deleted'",
                              NULL, 0, row_text, ndeleted, &err),
               err);
    CHECK_EQ_STR(ndeleted, "2");
    /* a second run finds nothing more */
    REQUIRE_OK(floe_maint_landing_lifecycle(wh, &o, &r, &err), err);
    CHECK_EQ_INT(r.landing_deleted + r.quarantine_deleted, 0);
    REQUIRE_OK(floe_sql_exec(db, "DROP TABLE landing_files", NULL, 0, NULL, &err), err);
}

TEST(landing_lifecycle_in_catalog_sqlite) {
    const char *dir = harness_tmpdir();
    char db[4096], wh[4096];
    snprintf(db, sizeof db, "%s/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "life", wh, &c, &err), err);
    lifecycle_in_catalog(c, wh);
    floe_catalog_close(c);
}

TEST(landing_lifecycle_in_catalog_pg) {
    NEED_PG();
    char wh[4096];
    snprintf(wh, sizeof wh, "%s/wh", harness_tmpdir());
    floe_catalog *c = open_pg(cat_name("life"), harness_tmpdir());
    lifecycle_in_catalog(c, wh);
    floe_catalog_close(c);
}

/* ---------------------------------------------------------------------------------------
 * many processes, one table
 * ------------------------------------------------------------------------------------- */

#define PROCS 6
#define COMMITS 50

TEST(concurrent_commits_pg) {
    NEED_PG();
    suite_concurrent_commits(open_cb, cat_name("conc"), "postgresql", PROCS, COMMITS);
}

/* ---------------------------------------------------------------------------------------
 * the layout PyIceberg and Java expect
 * ------------------------------------------------------------------------------------- */

/* Columns as information_schema reports them: name, type, length, nullable; then the
 * primary key columns in key order. This is what SQLAlchemy creates for PyIceberg's
 * models (String(255)/String(1000), nullable flags, composite keys) and Java's JdbcUtil
 * for iceberg_type VARCHAR(5). */
TEST(schema_matches_pyiceberg_and_java) {
    NEED_PG();
    floe_catalog *c = open_pg(cat_name("layout"), harness_tmpdir());
    REQUIRE(c != NULL);
    floe_catalog_close(c);
    PGconn *a = admin();
    REQUIRE(a != NULL);
    static const struct {
        const char *table, *want;
    } expect[] = {
        {"iceberg_tables",
         "catalog_name character varying 255 NO|table_namespace character varying 255 NO|"
         "table_name character varying 255 NO|metadata_location character varying 1000 YES|"
         "previous_metadata_location character varying 1000 YES|"
         "iceberg_type character varying 5 YES|"
         "pk:catalog_name,table_namespace,table_name"},
        {"iceberg_namespace_properties",
         "catalog_name character varying 255 NO|namespace character varying 255 NO|"
         "property_key character varying 255 NO|property_value character varying 1000 NO|"
         "pk:catalog_name,namespace,property_key"},
    };
    for (size_t i = 0; i < 2; i++) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "SELECT string_agg(column_name || ' ' || data_type || ' ' || "
                 "coalesce(character_maximum_length::text, '-') || ' ' || is_nullable, '|' "
                 "ORDER BY ordinal_position) || '|pk:' || (SELECT string_agg(k.column_name, ',' "
                 "ORDER BY k.ordinal_position) FROM information_schema.table_constraints tc JOIN "
                 "information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name "
                 "AND k.table_schema = tc.table_schema WHERE tc.table_name = '%s' AND "
                 "tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema()) "
                 "FROM information_schema.columns WHERE table_name = '%s' AND table_schema = "
                 "current_schema()",
                 expect[i].table, expect[i].table);
        char *got = admin_value(a, sql);
        CHECK_EQ_STR(got, expect[i].want);
        free(got);
    }
    PQfinish(a);
}

/* A database whose tables PyIceberg made (no iceberg_type), in its own schema: floe uses
 * it without altering it. Also exercises libpq URI options (search_path). */
TEST(pyiceberg_made_database_pg) {
    NEED_PG();
    PGconn *a = admin();
    REQUIRE(a != NULL);
    char schema[64];
    snprintf(schema, sizeof schema, "py_%ld", (long)getpid());
    char sql[2048];
    snprintf(sql, sizeof sql,
             "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s; "
             "CREATE TABLE %s.iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
             "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
             "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
             "PRIMARY KEY (catalog_name, table_namespace, table_name)); "
             "CREATE TABLE %s.iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, "
             "namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
             "property_value VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, namespace, "
             "property_key)); "
             "INSERT INTO %s.iceberg_namespace_properties VALUES ('py', 'pyns', 'exists', 'true')",
             schema, schema, schema, schema, schema);
    REQUIRE(admin_ok(a, sql));
    char uri[1024];
    snprintf(uri, sizeof uri, "%s%soptions=-csearch_path%%3D%s", pg_uri,
             strchr(pg_uri, '?') ? "&" : "?", schema);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    char wh[4200];
    snprintf(wh, sizeof wh, "%s/wh", harness_tmpdir());
    REQUIRE_OK(floe_catalog_open_postgres(NULL, uri, "py", wh, &c, &err), err);
    bool ex = false;
    REQUIRE_OK(floe_catalog_namespace_exists(c, "pyns", &ex, &err), err);
    CHECK(ex);
    floe_table *t = NULL;
    REQUIRE_OK(floe_table_create(c, "pyns", "t", SCHEMA, NULL, &t, &err), err);
    work w = {.key = "y", .add_snapshot = true};
    REQUIRE_OK(floe_table_commit(t, apply_work, &w, &err), err);
    snprintf(sql, sizeof sql,
             "SELECT metadata_location || ' ' || (SELECT count(*) FROM "
             "information_schema.columns WHERE table_schema = '%s' AND table_name = "
             "'iceberg_tables') FROM %s.iceberg_tables WHERE catalog_name = 'py' AND "
             "table_namespace = 'pyns' AND table_name = 't'",
             schema, schema);
    char *got = admin_value(a, sql);
    char want[2048];
    snprintf(want, sizeof want, "%s 5", floe_table_metadata_location(t));
    CHECK_EQ_STR(got, want);
    free(got);
    floe_table_close(t);
    floe_catalog_close(c);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
    admin_ok(a, sql);
    PQfinish(a);
}

/* ---------------------------------------------------------------------------------------
 * leases
 * ------------------------------------------------------------------------------------- */

static floe_lease_store *open_leases(bool pg, const char *dir) {
    floe_error err;
    floe_error_clear(&err);
    floe_lease_store *s = NULL;
    int rc;
    if (pg) {
        floe_catalog_config cfg = {.type = (char *)"sql", .uri = (char *)pg_uri};
        rc = floe_lease_store_open(&cfg, &s, &err);
    } else {
        char path[4200];
        snprintf(path, sizeof path, "%s/leases.db", dir);
        rc = floe_lease_store_open_sqlite(path, NULL, &s, &err);
    }
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "open leases: %s", err.msg);
    return s;
}

static void lease_basics(bool pg) {
    const char *dir = harness_tmpdir();
    floe_lease_store *s = open_leases(pg, dir);
    REQUIRE(s != NULL);
    floe_error err;
    floe_error_clear(&err);
    floe_lease_key k = {cat_name("lease"), "db", "t", "expire"};
    bool got = false, held = false;
    floe_lease_info info;
    CHECK_EQ_INT(floe_lease_get(s, &k, &info, &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_lease_acquire(s, &k, "A", 60000, &got, &err), err);
    CHECK(got);
    REQUIRE_OK(floe_lease_get(s, &k, &info, &err), err);
    CHECK_EQ_STR(info.owner, "A");
    CHECK(info.expires_at > info.now + 50000 && info.expires_at <= info.now + 60000);
    REQUIRE_OK(floe_lease_acquire(s, &k, "B", 60000, &got, &err), err);
    CHECK(!got);
    REQUIRE_OK(floe_lease_acquire(s, &k, "A", 60000, &got, &err), err); /* ours: renews */
    CHECK(got);
    REQUIRE_OK(floe_lease_renew(s, &k, "A", 60000, &held, &err), err);
    CHECK(held);
    REQUIRE_OK(floe_lease_renew(s, &k, "B", 60000, &held, &err), err);
    CHECK(!held);
    /* another job of the same table is independent */
    floe_lease_key k2 = k;
    k2.job = "orphans";
    REQUIRE_OK(floe_lease_acquire(s, &k2, "B", 60000, &got, &err), err);
    CHECK(got);
    REQUIRE_OK(floe_lease_release(s, &k, "B", &err), err); /* not B's: nothing happens */
    REQUIRE_OK(floe_lease_get(s, &k, &info, &err), err);
    CHECK_EQ_STR(info.owner, "A");
    REQUIRE_OK(floe_lease_release(s, &k, "A", &err), err);
    CHECK_EQ_INT(floe_lease_get(s, &k, &info, &err), FLOE_ENOTFOUND);
    REQUIRE_OK(floe_lease_acquire(s, &k, "B", 60000, &got, &err), err);
    CHECK(got);
    /* expiry: a short lease runs out and another owner takes over; the old holder's
     * renew then says it lost the lease */
    floe_lease_key k3 = k;
    k3.job = "short";
    REQUIRE_OK(floe_lease_acquire(s, &k3, "A", 150, &got, &err), err);
    CHECK(got);
    REQUIRE_OK(floe_lease_acquire(s, &k3, "B", 150, &got, &err), err);
    CHECK(!got);
    sleep_ms(250);
    REQUIRE_OK(floe_lease_get(s, &k3, &info, &err), err);
    CHECK(info.expires_at <= info.now);
    REQUIRE_OK(floe_lease_acquire(s, &k3, "B", 60000, &got, &err), err);
    CHECK(got);
    REQUIRE_OK(floe_lease_renew(s, &k3, "A", 60000, &held, &err), err);
    CHECK(!held);
    /* expired but not taken over: the holder may still renew */
    floe_lease_key k4 = k;
    k4.job = "renew-late";
    REQUIRE_OK(floe_lease_acquire(s, &k4, "A", 100, &got, &err), err);
    sleep_ms(150);
    REQUIRE_OK(floe_lease_renew(s, &k4, "A", 60000, &held, &err), err);
    CHECK(held);
    /* hostile input */
    CHECK_EQ_INT(floe_lease_acquire(s, &k, "", 1000, &got, &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_lease_acquire(s, &k, "A", 0, &got, &err), FLOE_EINVALID);
    char longname[300];
    memset(longname, 'j', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    floe_lease_key bad = k;
    bad.job = longname;
    CHECK_EQ_INT(floe_lease_acquire(s, &bad, "A", 1000, &got, &err), FLOE_EINVALID);
    char owner[128];
    floe_lease_owner_id(owner);
    CHECK(strchr(owner, ':') != NULL);
    floe_lease_store_close(s);
}

TEST(lease_basics_pg) {
    NEED_PG();
    lease_basics(true);
}
TEST(lease_basics_sqlite) { lease_basics(false); }

#define CONTENDERS 4
#define ROUNDS 15

/* CONTENDERS processes race for the same free lease, ROUNDS times: each time exactly one
 * gets it. Each round starts when the parent writes a byte to every child's own pipe, so
 * the attempts really overlap; results carry their round (2-byte writes are atomic). */
static void lease_contention(bool pg) {
    const char *dir = harness_tmpdir();
    const char *catalog = cat_name("contend");
    floe_lease_store *init = open_leases(pg, dir); /* the table exists before the race */
    REQUIRE(init != NULL);
    floe_lease_store_close(init);
    int go[CONTENDERS][2], res[2];
    REQUIRE(pipe(res) == 0);
    for (int p = 0; p < CONTENDERS; p++)
        REQUIRE(pipe(go[p]) == 0);
    pid_t pids[CONTENDERS];
    for (int p = 0; p < CONTENDERS; p++) {
        pids[p] = fork();
        REQUIRE(pids[p] >= 0);
        if (pids[p] == 0) {
            close(res[0]);
            floe_lease_store *s = open_leases(pg, dir);
            if (!s)
                _exit(2);
            char owner[32];
            snprintf(owner, sizeof owner, "proc%d", p);
            for (int r = 0; r < ROUNDS; r++) {
                char job[32], b;
                snprintf(job, sizeof job, "round%d", r);
                if (read(go[p][0], &b, 1) != 1)
                    _exit(3);
                floe_lease_key k = {catalog, "db", "t", job};
                bool got = false;
                floe_error err;
                floe_error_clear(&err);
                int rc = floe_lease_acquire(s, &k, owner, 60000, &got, &err);
                char out[2] = {(char)r, rc != 0 ? 'E' : got ? 'Y' : 'N'};
                if (rc != 0)
                    fprintf(stderr, "%s: %s\n", owner, err.msg);
                if (write(res[1], out, 2) != 2)
                    _exit(4);
            }
            floe_lease_store_close(s);
            _exit(0);
        }
    }
    close(res[1]);
    int winners[ROUNDS] = {0}, answers[ROUNDS] = {0}, errors = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int p = 0; p < CONTENDERS; p++)
            REQUIRE(write(go[p][1], "g", 1) == 1);
        for (int p = 0; p < CONTENDERS; p++) {
            char o[2];
            REQUIRE(read(res[0], o, 2) == 2);
            REQUIRE(o[0] >= 0 && o[0] < ROUNDS);
            answers[(int)o[0]]++;
            winners[(int)o[0]] += o[1] == 'Y';
            errors += o[1] == 'E';
        }
    }
    for (int r = 0; r < ROUNDS; r++)
        if (winners[r] != 1 || answers[r] != CONTENDERS)
            harness_fail(__FILE__, __LINE__, "round %d: %d winners of %d", r, winners[r],
                         answers[r]);
    CHECK_EQ_INT(errors, 0);
    close(res[0]);
    for (int p = 0; p < CONTENDERS; p++) {
        close(go[p][1]);
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

TEST(lease_contention_pg) {
    NEED_PG();
    lease_contention(true);
}
TEST(lease_contention_sqlite) { lease_contention(false); }

/* acquire_any from several processes: every candidate claimed by exactly one. */
static void lease_claim_all(bool pg) {
    const char *dir = harness_tmpdir();
    const char *catalog = cat_name("claim");
    enum { JOBS = 12 };
    const char *jobs[JOBS];
    char names[JOBS][32];
    for (int i = 0; i < JOBS; i++) {
        snprintf(names[i], sizeof names[i], "part=%02d", i);
        jobs[i] = names[i];
    }
    floe_lease_store *init = open_leases(pg, dir);
    REQUIRE(init != NULL);
    floe_lease_store_close(init);
    int res[2];
    REQUIRE(pipe(res) == 0);
    pid_t pids[CONTENDERS];
    for (int p = 0; p < CONTENDERS; p++) {
        pids[p] = fork();
        REQUIRE(pids[p] >= 0);
        if (pids[p] == 0) {
            close(res[0]);
            floe_lease_store *s = open_leases(pg, dir);
            if (!s)
                _exit(2);
            char owner[32];
            snprintf(owner, sizeof owner, "w%d", p);
            floe_lease_key k = {catalog, "db", "t", NULL};
            for (;;) {
                size_t which = JOBS;
                floe_error err;
                floe_error_clear(&err);
                if (floe_lease_acquire_any(s, &k, jobs, JOBS, owner, 60000, &which, &err) != 0) {
                    fprintf(stderr, "%s: %s\n", owner, err.msg);
                    _exit(5);
                }
                if (which == JOBS)
                    break;
                unsigned char b = (unsigned char)which;
                if (write(res[1], &b, 1) != 1)
                    _exit(4);
            }
            floe_lease_store_close(s);
            _exit(0);
        }
    }
    close(res[1]);
    int claimed[JOBS] = {0};
    unsigned char b;
    while (read(res[0], &b, 1) == 1)
        if (b < JOBS)
            claimed[b]++;
    close(res[0]);
    for (int p = 0; p < CONTENDERS; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    for (int i = 0; i < JOBS; i++)
        if (claimed[i] != 1)
            harness_fail(__FILE__, __LINE__, "%s claimed %d times", jobs[i], claimed[i]);
}

TEST(lease_claim_all_pg) {
    NEED_PG();
    lease_claim_all(true);
}
TEST(lease_claim_all_sqlite) { lease_claim_all(false); }

/* SKIP LOCKED: a candidate row another transaction has locked is passed over at once,
 * not waited for. */
TEST(lease_skip_locked_pg) {
    NEED_PG();
    floe_lease_store *s = open_leases(true, harness_tmpdir());
    REQUIRE(s != NULL);
    const char *catalog = cat_name("skip");
    floe_lease_key k = {catalog, "db", "t", NULL};
    const char *jobs[] = {"j0", "j1"};
    size_t which = 9;
    floe_error err;
    floe_error_clear(&err);
    /* make the rows exist, then free them again */
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "setup", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 0); /* never held, then by name */
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "setup", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 1); /* the one left */
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "setup", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 2); /* none left: held candidates are not taken, not even by owner */
    floe_lease_key k0 = {catalog, "db", "t", "j0"};
    REQUIRE_OK(floe_lease_release(s, &k0, "setup", &err), err);
    /* j0 has no row now; re-create both as free */
    floe_lease_info info;
    CHECK_EQ_INT(floe_lease_get(s, &k0, &info, &err), FLOE_ENOTFOUND);
    PGconn *a = admin();
    REQUIRE(a != NULL);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO floe_leases VALUES ('%s', 'db', 't', 'j0', '', 0) ON CONFLICT DO NOTHING",
             catalog);
    REQUIRE(admin_ok(a, sql));
    snprintf(sql, sizeof sql,
             "SELECT job FROM floe_leases WHERE catalog_name = '%s' AND job = 'j0' FOR UPDATE",
             catalog);
    REQUIRE(admin_ok(a, "BEGIN"));
    REQUIRE(admin_ok(a, sql));
    /* j0 is free but locked, j1 is held: nothing to claim, and no waiting */
    int64_t t0 = floe_now_ns();
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "w", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 2);
    CHECK((floe_now_ns() - t0) / 1000000 < 2000);
    /* j1 released: it is claimed while j0 stays locked */
    floe_lease_key k1 = {catalog, "db", "t", "j1"};
    REQUIRE_OK(floe_lease_release(s, &k1, "setup", &err), err);
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "w", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 1);
    REQUIRE(admin_ok(a, "ROLLBACK"));
    /* unlocked: j0 goes too */
    REQUIRE_OK(floe_lease_acquire_any(s, &k, jobs, 2, "w", 60000, &which, &err), err);
    CHECK_EQ_INT(which, 0);
    REQUIRE_OK(floe_lease_get(s, &k0, &info, &err), err);
    CHECK_EQ_STR(info.owner, "w");
    /* the catalog's own connection works as a lease store too */
    floe_catalog *c = open_pg(catalog, harness_tmpdir());
    REQUIRE(c != NULL);
    floe_lease_store *cs = NULL;
    REQUIRE_OK(floe_lease_store_open_sql(floe_catalog_sql(c), &cs, &err), err);
    REQUIRE_OK(floe_lease_get(cs, &k0, &info, &err), err);
    CHECK_EQ_STR(info.owner, "w");
    floe_lease_store_close(cs);
    floe_catalog_close(c);
    PQfinish(a);
    floe_lease_store_close(s);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    pg_uri = getenv("FLOE_PG_URI");
    if (pg_uri && !*pg_uri)
        pg_uri = NULL;
    if (!pg_uri)
        printf("test_pg_catalog: FLOE_PG_URI is not set: the PostgreSQL tests are skipped "
               "(tests/integration/pg_catalog.sh starts a server and runs them)\n");
    RUN(uri_forms);
    RUN(unreachable_server_names_no_password);
    RUN(lease_basics_sqlite);
    RUN(lease_contention_sqlite);
    RUN(lease_claim_all_sqlite);
    RUN(swap_hook_and_transactions_sqlite);
    RUN(landing_lifecycle_in_catalog_sqlite);
    RUN(namespaces_pg);
    RUN(tables_pg);
    RUN(cas_conflict_and_retry_pg);
    RUN(drop_at_pg);
    RUN(commit_gate_pg);
    RUN(placement_pg);
    RUN(namespace_location_pg);
    RUN(injected_faults_pg);
    RUN(lost_reply_after_swap_pg);
    RUN(synchronous_commit_never_off);
    RUN(duplicate_object_is_exists);
    RUN(reads_reconnect_after_terminate);
    RUN(commit_in_flight_killed);
    RUN(swap_hook_and_transactions_pg);
    RUN(landing_lifecycle_in_catalog_pg);
    RUN(schema_matches_pyiceberg_and_java);
    RUN(pyiceberg_made_database_pg);
    RUN(lease_basics_pg);
    RUN(lease_contention_pg);
    RUN(lease_claim_all_pg);
    RUN(lease_skip_locked_pg);
    RUN(concurrent_commits_pg);
    RUN(settle_limit_pg);
    int rc = harness_finish();
    /* the SQLite part passed, the PostgreSQL part did not run: a skip for ctest (77) */
    return rc == 0 && !pg_uri ? 77 : rc;
}
