/*
 * replay_main.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over saved inputs,
 * without libFuzzer, so `make test` (gcc or clang, ASan+UBSan) replays every seed and
 * every past crash.
 *
 *   replay_<target> [FILE|DIR]...
 *
 * With no arguments it replays what belongs to its target (FLOE_FUZZ_TARGET, set by
 * CMake): tests/fuzz/seeds/<target>/, tests/fuzz/crashes/<target>/ (both under
 * $FLOE_SOURCE_DIR) and the conformance or repository files that tests/fuzz/targets.conf
 * lists for the target ($FLOE_CONFORMANCE; never copied into the repository). The seeds
 * folder and every listed source must exist and hold at least one input, or the run fails
 * naming the path: a replay that silently replays nothing would be a test that cannot
 * fail. With arguments it replays just those files and folders (to reproduce a crash).
 *
 * Each input is read into a buffer of exactly its size, so an over-read is caught by ASan.
 * If an input kills the process, its path is printed first (a death callback under the
 * sanitizers, signal handlers otherwise).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef FLOE_FUZZ_TARGET
#error "FLOE_FUZZ_TARGET must name the fuzz target (set by CMakeLists.txt)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

#define MAX_INPUT_BYTES (64u << 20) /* conformance files are small; refuse surprises */

static char current[4096]; /* the input being replayed, for the crash message */
static long n_replayed;

static void say_current(void) {
    static const char pre[] = "\nreplay: " FLOE_FUZZ_TARGET " died on input: ";
    if (!current[0])
        return;
    /* async-signal-safe: write(2) only */
    ssize_t w = write(2, pre, sizeof pre - 1);
    w = write(2, current, strlen(current));
    w = write(2, "\n", 1);
    (void)w;
}

static void on_signal(int sig) {
    say_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > MAX_INPUT_BYTES) {
        fprintf(stderr, "replay: %s: missing or larger than %u bytes\n", path, MAX_INPUT_BYTES);
        fclose(f);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf || fread(buf, 1, n, f) != n) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(current, sizeof current, "%s", path);
    (void)LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    current[0] = '\0';
    n_replayed++;
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay path (a file, or every file under a folder whose name ends in suffix, sorted so
 * runs are repeatable). Returns the number of inputs replayed, or -1. */
static long replay_path(const char *path, const char *suffix, int depth) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        size_t pl = strlen(path), sl = suffix ? strlen(suffix) : 0;
        if (sl && (pl < sl || strcmp(path + pl - sl, suffix) != 0))
            return 0;
        return replay_file(path) == 0 ? 1 : -1;
    }
    if (depth > 16)
        return 0;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') /* ., .., and hidden files such as .gitkeep */
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                abort();
            names = nn;
        }
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n])
            abort();
        snprintf(names[n], len, "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    long total = 0;
    for (size_t i = 0; i < n; i++) {
        long r = total >= 0 ? replay_path(names[i], suffix, depth + 1) : 0;
        if (r < 0)
            total = -1;
        else if (total >= 0)
            total += r;
        free(names[i]);
    }
    free(names);
    return total;
}

/* One source that must exist and yield at least one input. */
static int replay_required(const char *what, const char *path, const char *suffix) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = replay_path(path, suffix, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (n <= 0) {
        fprintf(stderr, "replay: " FLOE_FUZZ_TARGET ": %s %s%s%s: %s\n", what, path,
                suffix ? " *" : "", suffix ? suffix : "",
                n == 0 ? "no inputs (a replay of nothing proves nothing)" : "failed");
        return -1;
    }
    printf("replay: " FLOE_FUZZ_TARGET ": %ld %s from %s (%.2f s)\n", n, what, path, s);
    return 0;
}

/* tests/fuzz/targets.conf: "<target> conformance|repo <relative path> [suffix]" lines. */
static int replay_listed(const char *src_dir, const char *conf_dir) {
    char conf_path[4096];
    snprintf(conf_path, sizeof conf_path, "%s/tests/fuzz/targets.conf", src_dir);
    FILE *f = fopen(conf_path, "r");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", conf_path, strerror(errno));
        return -1;
    }
    int rc = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char target[128], where[32], rel[512], suffix[64] = "";
        if (line[0] == '#' || sscanf(line, "%127s %31s %511s %63s", target, where, rel, suffix) < 3)
            continue;
        if (strcmp(target, FLOE_FUZZ_TARGET) != 0)
            continue;
        char path[4096];
        if (!strcmp(where, "conformance")) {
            if (!conf_dir) {
                fprintf(stderr, "replay: FLOE_CONFORMANCE is not set\n");
                rc = -1;
                continue;
            }
            snprintf(path, sizeof path, "%s/%s", conf_dir, rel);
        } else if (!strcmp(where, "repo")) {
            snprintf(path, sizeof path, "%s/%s", src_dir, rel);
        } else {
            fprintf(stderr, "replay: %s: unknown source kind '%s'\n", conf_path, where);
            rc = -1;
            continue;
        }
        if (replay_required(where, path, suffix[0] ? suffix : NULL) < 0)
            rc = -1;
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv) {
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(say_current);
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGILL, on_signal); /* __builtin_trap in a target's own checks */
    signal(SIGABRT, on_signal);
    signal(SIGFPE, on_signal);
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);

    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (replay_path(argv[i], NULL, 0) < 0)
                rc = 1;
    } else {
        const char *src = getenv("FLOE_SOURCE_DIR");
        const char *conf = getenv("FLOE_CONFORMANCE");
        if (!src)
            src = ".";
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/fuzz/seeds/" FLOE_FUZZ_TARGET, src);
        if (replay_required("seeds", path, NULL) < 0)
            rc = 1;
        /* past crashes: the folder may not exist yet for a target that never crashed */
        snprintf(path, sizeof path, "%s/tests/fuzz/crashes/" FLOE_FUZZ_TARGET, src);
        if (access(path, F_OK) == 0 && replay_path(path, NULL, 0) < 0)
            rc = 1;
        else if (access(path, F_OK) == 0)
            printf("replay: " FLOE_FUZZ_TARGET ": crashes from %s replayed\n", path);
        if (replay_listed(src, conf) < 0)
            rc = 1;
    }
    printf("replay: " FLOE_FUZZ_TARGET ": %ld inputs, %s\n", n_replayed, rc ? "FAILED" : "ok");
    return rc;
}
