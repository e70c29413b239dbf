/* harness.c - see harness.h. */
#include "harness.h"

#include "common/scratch.h"
#include "floe/common.h"
#include "floe/io.h"
#include "floe/mapguard.h"
#include "floe/schema.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
static int cur_failed;
static const char *cur_name;
static jmp_buf cur_jmp;
static char *tmp_root;
static int tmp_seq;

void harness_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "FAIL %s (%s:%d): ", cur_name ? cur_name : "?", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cur_failed++;
}

void harness_abort_test(void) { longjmp(cur_jmp, 1); }

bool harness_bare_process;

void harness_run(const char *name, void (*fn)(void)) {
    static bool set_up;
    if (!set_up && !harness_bare_process) {
        floe_error err;
        floe_error_clear(&err);
        if (floe_map_guard_install(&err) < 0) {
            fprintf(stderr, "harness: %s\n", err.msg);
            exit(1);
        }
        set_up = true;
    }
    cur_name = name;
    cur_failed = 0;
    if (setjmp(cur_jmp) == 0)
        fn();
    if (cur_failed) {
        failed++;
        fprintf(stderr, "not ok - %s\n", name);
    } else {
        passed++;
        fprintf(stderr, "ok - %s\n", name);
    }
    cur_name = NULL;
}

static void rm_tmp(void) {
    if (!tmp_root)
        return;
    const char *keep = getenv("KEEP_TMP");
    if (!(keep && *keep == '1')) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp_root);
    }
    free(tmp_root);
    tmp_root = NULL;
}

int harness_finish(void) {
    rm_tmp();
    const char *prog = program_invocation_short_name;
    printf("%s: %d passed, %d failed\n", prog, passed, failed);
    fflush(stdout);
    return failed ? 1 : (passed ? 0 : 1);
}

const char *harness_conformance(const char *rel) {
    static char path[4096];
    const char *base = getenv("FLOE_CONFORMANCE");
    if (!base)
        base = "../shared/conformance";
    snprintf(path, sizeof path, "%s/%s", base, rel);
    struct stat st;
    if (stat(path, &st) != 0) {
        harness_fail(__FILE__, __LINE__, "conformance path missing: %s", path);
        harness_abort_test();
    }
    return path;
}

const char *harness_source_path(const char *rel) {
    static char ring[8][4096];
    static unsigned next;
    char *path = ring[next++ % 8];
    const char *base = getenv("FLOE_SOURCE_DIR");
    snprintf(path, sizeof ring[0], "%s/%s", base ? base : ".", rel);
    return path;
}

const char *harness_getenv(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

/* The scratch folders of test programs that died before their exit handlers ran (a
 * sanitizer's abort, ctest's kill at a timeout): each program holds a flock on its folder
 * while it runs (forked children share it), so a folder over a minute old whose lock is
 * free is a dead program's. */
static void sweep_dead_roots(void) {
    DIR *d = opendir("/tmp");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "floe-unit-", 10) || strlen(e->d_name) != 16)
            continue;
        int fd = floe_scratch_take_stale(dirfd(d), e->d_name, 60);
        if (fd >= 0) {
            char cmd[600];
            snprintf(cmd, sizeof cmd, "rm -rf '/tmp/%s'", e->d_name);
            if (system(cmd) != 0)
                fprintf(stderr, "could not remove /tmp/%s\n", e->d_name);
            close(fd);
        }
    }
    closedir(d);
}

const char *harness_tmpdir(void) {
    static char path[4096];
    if (!tmp_root) {
        sweep_dead_roots();
        char tmpl[] = "/tmp/floe-unit-XXXXXX";
        char *d = mkdtemp(tmpl);
        if (!d) {
            harness_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
            harness_abort_test();
        }
        /* held until the program ends (the descriptor is never closed) */
        if (floe_scratch_hold(d) < 0) {
            harness_fail(__FILE__, __LINE__, "lock %s: %s", d, strerror(errno));
            harness_abort_test();
        }
        tmp_root = strdup(d);
        atexit(rm_tmp);
    }
    snprintf(path, sizeof path, "%s/%d", tmp_root, ++tmp_seq);
    if (mkdir(path, 0700) != 0) {
        harness_fail(__FILE__, __LINE__, "mkdir %s: %s", path, strerror(errno));
        harness_abort_test();
    }
    return path;
}

const char *harness_floe_bin(void) {
    const char *b = getenv("FLOE_BIN");
    return b ? b : "build/floe";
}

/* floe records local files as file:///abs: the helpers take either form */
static const char *local_form(const char *path) {
    return !strncmp(path, "file:///", 8) ? path + 7 : path;
}

char *harness_read_file(const char *path, size_t *len) {
    FILE *f = fopen(local_form(path), "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int harness_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(local_form(path), "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, 1, n, f);
    int rc = fclose(f);
    return (w == n && rc == 0) ? 0 : -1;
}

int harness_run_cmd(const char *cmd, char **out) {
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += r;
        if (cap - n < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[n] = '\0';
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A "Name:   123 kB" line of /proc/<pid>/status, in KiB; -1 when absent. */
static long long status_kib(pid_t pid, const char *name) {
    char path[64], line[256];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long v = -1;
    size_t nl = strlen(name);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, nl) == 0 && line[nl] == ':') {
            v = strtoll(line + nl + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

int harness_child_peak_kib(int (*fn)(void *arg), void *arg, long long limit_kib,
                           long long *peak_kib) {
    int fd[2];
    *peak_kib = -1;
    if (pipe(fd) != 0) {
        harness_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        harness_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        long long start[2] = {status_kib(0, "VmRSS"), 0};
        ssize_t w = write(fd[1], start, sizeof start); /* the parent's baseline */
        int rc = fn(arg);
        long long end[2] = {status_kib(0, "VmHWM"), rc};
        w = write(fd[1], end, sizeof end);
        (void)w;
        _exit(rc == 0 ? 0 : 1);
    }
    close(fd[1]);
    long long start[2] = {-1, 0}, end[2] = {-1, -1};
    bool got_start = read(fd[0], start, sizeof start) == (ssize_t)sizeof start;
    long long reached = 0;
    bool killed = false;
    int st = 0;
    for (;;) {
        pid_t done = waitpid(pid, &st, WNOHANG);
        if (done == pid)
            break;
        long long rss = status_kib(pid, "VmRSS");
        if (got_start && rss > start[0] && rss - start[0] > reached)
            reached = rss - start[0];
        if (!killed && got_start && reached > limit_kib) {
            kill(pid, SIGKILL);
            killed = true;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    bool got_end = read(fd[0], end, sizeof end) == (ssize_t)sizeof end;
    close(fd[0]);
    if (killed) {
        *peak_kib = reached;
        fprintf(stderr, "  child killed: its resident set grew by %lld KiB, past the %lld "
                "KiB limit\n", reached, limit_kib);
        return 0;
    }
    if (!got_start || !got_end || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || end[1] != 0 ||
        start[0] < 0 || end[0] < 0) {
        harness_fail(__FILE__, __LINE__, "child failed (status %d, fn returned %lld)", st,
                     end[1]);
        return -1;
    }
    *peak_kib = end[0] > start[0] ? end[0] - start[0] : 0;
    return 0;
}

uint64_t harness_xorshift64(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

void harness_rng_seed(uint64_t seed) { rng_state = seed; }

uint64_t harness_rnd(void) { return harness_xorshift64(&rng_state); }

uint32_t harness_rndn(uint32_t n) { return n ? (uint32_t)(harness_rnd() % n) : 0; }

floe_schema *harness_schema_of(const char *json) {
    floe_schema *s = NULL;
    floe_error err;
    floe_error_clear(&err);
    if (floe_schema_parse(json, strlen(json), &s, &err) != 0)
        harness_fail(__FILE__, __LINE__, "schema parse: %s", err.msg);
    return s;
}

uint8_t *harness_dup_exact(const void *p, size_t n) {
    uint8_t *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

int harness_buf_sink(void *ctx, const void *p, size_t n) { return floe_buf_append(ctx, p, n); }

bool harness_file_exists(const char *uri) {
    bool yes = false;
    return floe_io_exists(NULL, uri, &yes, NULL) == 0 && yes;
}
