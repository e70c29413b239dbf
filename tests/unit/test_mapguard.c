/*
 * test_mapguard.c - the library installs no SIGBUS handler by itself: until the program
 * calls floe_map_guard_install nothing is guarded and local inputs are read, not mapped.
 * Once installed, a guarded file mapping whose file shrinks reads zeros past the new end
 * and reports it, from any thread; a SIGBUS outside guarded mappings still ends the
 * process; the guard table has a limit.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floe/io.h"
#include "floe/mapguard.h"
#include "harness.h"

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* A file of npages pages of 'x', mapped read-only; *fd stays open. */
static unsigned char *map_file(const char *name, size_t npages, int *fd) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", harness_tmpdir(), name);
    size_t len = npages * page();
    char *buf = malloc(len);
    REQUIRE(buf != NULL);
    memset(buf, 'x', len);
    REQUIRE(harness_write_file(path, buf, len) == 0);
    free(buf);
    *fd = open(path, O_RDWR);
    REQUIRE(*fd >= 0);
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, *fd, 0);
    REQUIRE(m != MAP_FAILED);
    return m;
}

static volatile unsigned char sink;

/* The SIGBUS disposition, to tell whether something replaced it (a sanitizer may have
 * one of its own in place). */
static void *sigbus_handler(void) {
    struct sigaction sa;
    REQUIRE(sigaction(SIGBUS, NULL, &sa) == 0);
    return (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
}

/* Run bare (harness_bare_process): the process as the library leaves it. */
TEST(no_handler_until_installed) {
    void *before = sigbus_handler();
    CHECK(!floe_map_guard_installed());
    char path[4200];
    snprintf(path, sizeof path, "%s/bare", harness_tmpdir());
    char *data = malloc(2 * page());
    REQUIRE(data != NULL);
    memset(data, 'x', 2 * page());
    int wrote = harness_write_file(path, data, 2 * page());
    free(data);
    REQUIRE(wrote == 0);
    int fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    unsigned char *m = mmap(NULL, 2 * page(), PROT_READ, MAP_PRIVATE, fd, 0);
    REQUIRE(m != MAP_FAILED);
    floe_map_guard *g = NULL;
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_map_guard_add(m, 2 * page(), &g, &err), FLOE_EUNSUPPORTED);
    CHECK(strstr(err.msg, "floe_map_guard_install") != NULL);
    munmap(m, 2 * page());
    close(fd);
    /* a local input is read, not mapped */
    floe_input *in = NULL;
    REQUIRE_OK(floe_input_open(NULL, path, &in, &err), err);
    const uint8_t *view = NULL;
    CHECK_EQ_INT(floe_input_mmap(in, &view, &err), 1);
    unsigned char b[4] = {0};
    REQUIRE_OK(floe_input_read_at(in, (int64_t)page(), b, sizeof b, &err), err);
    CHECK(b[0] == 'x' && b[3] == 'x');
    floe_input_close(in);
    CHECK(sigbus_handler() == before);
    /* installing is explicit, once */
    REQUIRE_OK(floe_map_guard_install(&err), err);
    CHECK(floe_map_guard_installed());
    void *ours = sigbus_handler();
    CHECK(ours != before);
    REQUIRE_OK(floe_map_guard_install(&err), err);
    CHECK(sigbus_handler() == ours);
}

TEST(shrunk_file_reads_zeros) {
    int fd;
    unsigned char *m = map_file("a", 4, &fd);
    floe_map_guard *g = NULL;
    floe_error err;
    REQUIRE_OK(floe_map_guard_add(m, 4 * page(), &g, &err), err);
    CHECK_EQ_INT(m[3 * page()], 'x');
    CHECK(!floe_map_guard_hit(g));
    REQUIRE(ftruncate(fd, (off_t)(page() + 10)) == 0);
    CHECK_EQ_INT(m[0], 'x');
    CHECK_EQ_INT(m[page() + 9], 'x');
    CHECK_EQ_INT(m[page() + 10], 0); /* the rest of the last page: zeros, no signal */
    CHECK(!floe_map_guard_hit(g));
    CHECK_EQ_INT(m[2 * page() + 5], 0); /* past the end: SIGBUS, answered with zeros */
    CHECK(floe_map_guard_hit(g));
    CHECK_EQ_INT(m[4 * page() - 1], 0);
    floe_map_guard_remove(g);
    munmap(m, 4 * page());
    close(fd);
}

typedef struct touch_arg {
    const unsigned char *p;
    int got;
} touch_arg;

static void *touch(void *arg) {
    touch_arg *t = arg;
    t->got = t->p[0];
    return NULL;
}

TEST(another_thread_reads_zeros) {
    int fd;
    unsigned char *m = map_file("b", 3, &fd);
    floe_map_guard *g = NULL;
    floe_error err;
    REQUIRE_OK(floe_map_guard_add(m, 3 * page(), &g, &err), err);
    REQUIRE(ftruncate(fd, 0) == 0);
    touch_arg t = {m + page(), -1};
    pthread_t tid;
    REQUIRE(pthread_create(&tid, NULL, touch, &t) == 0);
    pthread_join(tid, NULL);
    CHECK_EQ_INT(t.got, 0);
    CHECK(floe_map_guard_hit(g));
    floe_map_guard_remove(g);
    munmap(m, 3 * page());
    close(fd);
}

TEST(unguarded_sigbus_still_ends_the_process) {
    int fd1, fd2;
    unsigned char *guarded = map_file("c", 2, &fd1);
    unsigned char *bare = map_file("d", 2, &fd2);
    floe_map_guard *g = NULL;
    floe_error err;
    REQUIRE_OK(floe_map_guard_add(guarded, 2 * page(), &g, &err), err);
    REQUIRE(ftruncate(fd2, 0) == 0);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) /* the sanitizer's report, if any */
            _exit(3);
        sink = bare[page()]; /* SIGBUS outside every guard */
        _exit(0);            /* reached only if the fault was swallowed */
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    /* killed by SIGBUS, or ended by the sanitizer's SIGBUS report (an exit status, or
     * SIGABRT with abort_on_error); never a clean exit */
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
    if (WIFSIGNALED(status))
        CHECK(WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT);
    CHECK(!floe_map_guard_hit(g));
    floe_map_guard_remove(g);
    munmap(guarded, 2 * page());
    munmap(bare, 2 * page());
    close(fd1);
    close(fd2);
}

TEST(guard_table_limit_and_bad_ranges) {
    static char area[1];
    floe_map_guard *g[FLOE_MAP_GUARDS + 1];
    floe_error err;
    void *base = mmap(NULL, page(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base != MAP_FAILED);
    for (int i = 0; i < FLOE_MAP_GUARDS; i++)
        REQUIRE_OK(floe_map_guard_add(base, page(), &g[i], &err), err);
    CHECK_EQ_INT(floe_map_guard_add(base, page(), &g[FLOE_MAP_GUARDS], &err), FLOE_ELIMIT);
    floe_map_guard_remove(g[7]);
    REQUIRE_OK(floe_map_guard_add(base, page(), &g[7], &err), err); /* a freed slot is reused */
    for (int i = 0; i < FLOE_MAP_GUARDS; i++)
        floe_map_guard_remove(g[i]);
    CHECK_EQ_INT(floe_map_guard_add(NULL, page(), &g[0], &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_map_guard_add(base, 0, &g[0], &err), FLOE_EINVALID);
    if (((uintptr_t)area & (page() - 1)) != 0)
        CHECK_EQ_INT(floe_map_guard_add(area, 1, &g[0], &err), FLOE_EINVALID);
    floe_map_guard_remove(NULL);
    CHECK(!floe_map_guard_hit(NULL));
    munmap(base, page());
}

int main(void) {
    harness_bare_process = true;
    RUN(no_handler_until_installed);
    harness_bare_process = false;
    RUN(shrunk_file_reads_zeros);
    RUN(another_thread_reads_zeros);
    RUN(unguarded_sigbus_still_ends_the_process);
    RUN(guard_table_limit_and_bad_ranges);
    return harness_finish();
}
