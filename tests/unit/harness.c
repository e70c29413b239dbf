/* harness.c - see harness.h. */
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

void harness_run(const char *name, void (*fn)(void)) {
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

const char *harness_tmpdir(void) {
    static char path[4096];
    if (!tmp_root) {
        char tmpl[] = "/tmp/floe-test-XXXXXX";
        char *d = mkdtemp(tmpl);
        if (!d) {
            harness_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
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

char *harness_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
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
    FILE *f = fopen(path, "wb");
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
