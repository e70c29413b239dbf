/*
 * progress.c - the one progress line of long commands (convert, append, rewrite): bytes
 * done of the total, rate and time left, redrawn on standard error at most four times a
 * second, only when standard error is a terminal and the command is not --quiet or
 * --json; nothing otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_init(cli_progress *p, const char *what, int64_t total, bool quiet) {
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(STDERR_FILENO);
    p->what = what;
    p->total = total;
    p->t0 = now_s();
    p->last = -1;
}

void cli_progress_update(cli_progress *p, int64_t done, const char *extra) {
    if (!p->on)
        return;
    double t = now_s();
    if (p->last >= 0 && t - p->last < 0.25 && (p->total <= 0 || done < p->total))
        return;
    p->last = t;
    double el = t - p->t0, rate = el > 0 ? (double)done / el : 0;
    char a[32], b[32], r[32], eta[32] = "";
    if (p->total > 0 && rate > 0 && done <= p->total)
        snprintf(eta, sizeof eta, ", %.0f s left", (double)(p->total - done) / rate);
    if (p->total > 0)
        fprintf(stderr, "\r%s: %s of %s (%.0f%%), %s/s%s%s%s\033[K", p->what,
                cli_fmt_bytes((double)done, a, sizeof a),
                cli_fmt_bytes((double)p->total, b, sizeof b),
                100.0 * (double)done / (double)p->total, cli_fmt_bytes(rate, r, sizeof r), eta,
                extra ? ", " : "", extra ? extra : "");
    else
        fprintf(stderr, "\r%s: %s, %s/s%s%s\033[K", p->what, cli_fmt_bytes((double)done, a, sizeof a),
                cli_fmt_bytes(rate, r, sizeof r), extra ? ", " : "", extra ? extra : "");
    fflush(stderr); /* no newline: line buffering would hold it */
    p->printed = true;
}

void cli_progress_end(cli_progress *p) {
    if (p->on && p->printed) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->printed = false;
}

void cli_progress_bytes(void *ctx, int64_t done) { cli_progress_update(ctx, done, NULL); }

int64_t cli_inputs_size(const char *const *paths, size_t n) {
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!strcmp(paths[i], "-") || strstr(paths[i], "://") || stat(paths[i], &st) != 0 ||
            !S_ISREG(st.st_mode))
            return 0;
        total += (int64_t)st.st_size;
    }
    return total;
}
