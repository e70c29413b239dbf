/* test_landing_crash.c - exactly once across a crash at every step of landing compaction,
 * then snapshot expiry and a restart (DESIGN.md I2), on the embedded default: a SQLite
 * catalog and a local warehouse.
 *
 * 40 events land in two partitions (sealed landing files, nothing compacted). Then, for
 * every crash point N of one compaction round (floe_crash_arm: each local write, fsync
 * and rename, each SQL write and commit - from converting the first landing file to
 * marking the last one committed), in a fresh warehouse:
 *   1. a child process opens the server and compacts; it dies at crash point N (_exit, as
 *      kill -9 would: nothing rolled back or flushed);
 *   2. another writer appends a snapshot, and expiry (older than now, retain 1) removes
 *      every other snapshot - the ones whose floe.landing-ids would tell a restarted
 *      compactor what was committed;
 *   3. the server starts again and compacts everything.
 * Afterwards every event is in the table exactly once and every landing file is
 * committed. The runs cover both sides of each commit: a crash just before the catalog
 * transaction commits and just after. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floe/catalog.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "harness.h"
#include "harness_serve.h"
#include "common/testing.h"

#define NEVENTS 40

static void server_config(floe_server_config *c, const char *dir) {
    char wh[4300];
    snprintf(wh, sizeof wh, "%s/wh", dir);
    hs_server_config(c, dir, wh, "maintain = false\n", "partition = name\n");
}

/* 1..NEVENTS posted and sealed into landing files of partitions a and b; nothing
 * compacted. */
static void land_events(const char *dir) {
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    const char *names[2] = {"a", "b"};
    CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", 1, NEVENTS / 2, names, 2), 200);
    CHECK_EQ_INT(hs_post_ids(floe_server_port(s), "shop.t", NEVENTS / 2 + 1, NEVENTS, names,
                             2), 200);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);
    floe_server_config_reset(&cfg);
}

/* In a child process: open the server and compact with crash point `at` armed (0: none).
 * Returns the child's exit status: FLOE_CRASH_EXIT when it died there, 0 when the round
 * finished; *points (when set) receives the crash points the round passed. */
static int compact_in_child(const char *dir, uint64_t at, uint64_t *points) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        floe_server_config cfg;
        server_config(&cfg, dir);
        floe_server *s = NULL;
        floe_error err;
        if (floe_server_open(&cfg, NULL, &s, &err) != 0)
            _exit(2);
        /* a sealing round first: its start-up work (expiring old answers) is done before
         * the count begins, so the points are the compaction's alone */
        if (floe_server_flush(s, false, &err) != 0)
            _exit(2);
        floe_crash_arm(at);
        int rc = floe_server_flush(s, true, &err);
        uint64_t n = floe_crash_count();
        floe_crash_arm(0);
        FLOE_IGNORE_RESULT(floe_server_close(s, NULL));
        if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n)
            _exit(3);
        _exit(rc == 0 ? 0 : 4); /* _exit: the harness's exit handlers are the parent's */
    }
    close(fds[1]);
    uint64_t n = 0;
    ssize_t got = read(fds[0], &n, sizeof n);
    close(fds[0]);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    if (points && got == (ssize_t)sizeof n)
        *points = n;
    return WEXITSTATUS(status);
}

/* Another writer's snapshot, then expiry keeping only it. */
static void append_and_expire(const char *dir) {
    char db[4300], wh[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    hs_append_and_expire_sqlite(db, wh, "shop", "t");
}

/* Restart, compact everything, and check: every event once, every landing file
 * committed. Returns false (after failing the test) on a duplicate or a loss. */
static bool restart_and_check(const char *dir, uint64_t at) {
    floe_server_config cfg;
    server_config(&cfg, dir);
    floe_server *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    int rc = floe_server_flush(s, true, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "crash at %llu: compaction after the restart: %s",
                     (unsigned long long)at, err.msg);
    CHECK_OK(floe_server_close(s, &err), err);
    floe_server_config_reset(&cfg);

    char db[4300], wh[4300];
    snprintf(db, sizeof db, "%s/wh/catalog.db", dir);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    int counts[NEVENTS + 1];
    bool ok = hs_check_once(counts, hs_count_ids_sqlite(db, wh, "shop", "t", counts,
                                                         NEVENTS + 1), NEVENTS);
    if (!ok) {
        harness_fail(__FILE__, __LINE__, "... after a crash at point %llu",
                     (unsigned long long)at);
        return false;
    }
    floe_sql *sql = NULL;
    REQUIRE_OK(floe_sql_open(db, &sql, &err), err);
    hs_states st = hs_landing_states(sql, "shop.t");
    floe_sql_close(sql);
    if (st.committed != 2 || st.pending || st.compacting || st.other) {
        harness_fail(__FILE__, __LINE__, "crash at %llu: landing files committed %d, pending "
                     "%d, compacting %d, other %d", (unsigned long long)at, st.committed,
                     st.pending, st.compacting, st.other);
        ok = false;
    }
    return ok;
}

/* dir as the template left it (the warehouse records absolute paths: every run uses
 * the one folder the events were landed in). */
static void copy_template(const char *tmpl, const char *dir) {
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", dir, tmpl, dir);
    REQUIRE(system(cmd) == 0);
}

TEST(test_crash_at_every_step_then_expire_and_restart) {
    const char *root = harness_tmpdir();
    char dir[4200], tmpl[4200], cmd[9000];
    snprintf(dir, sizeof dir, "%s/run", root);
    snprintf(tmpl, sizeof tmpl, "%s/template", root);
    REQUIRE(mkdir(dir, 0755) == 0);
    land_events(dir);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", dir, tmpl);
    REQUIRE(system(cmd) == 0);
    /* a clean round: how many crash points it passes */
    uint64_t points = 0;
    CHECK_EQ_INT(compact_in_child(dir, 0, &points), 0);
    REQUIRE(points > 10);
    append_and_expire(dir);
    REQUIRE(restart_and_check(dir, 0));

    uint64_t crashed = 0;
    for (uint64_t at = 1; at <= points; at++) {
        copy_template(tmpl, dir);
        int st = compact_in_child(dir, at, NULL);
        if (st != FLOE_CRASH_EXIT && st != 0)
            harness_fail(__FILE__, __LINE__, "crash at %llu: the child exited with %d",
                         (unsigned long long)at, st);
        crashed += st == FLOE_CRASH_EXIT;
        append_and_expire(dir);
        if (!restart_and_check(dir, at))
            break;
    }
    fprintf(stderr, "  %llu crash points, %llu runs crashed\n", (unsigned long long)points,
            (unsigned long long)crashed);
    CHECK(crashed == points);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    RUN(test_crash_at_every_step_then_expire_and_restart);
    curl_global_cleanup();
    return harness_finish();
}
