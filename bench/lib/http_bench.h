/*
 * http_bench.h - what the libcurl load generators of bench/ share (bench/ingest_client.c,
 * bench/rest_client.c): a monotonic clock, a body sink, and latency sets with their percentiles.
 * Header-only: each generator is one C file built by its script.
 */
#ifndef FLOE_BENCH_HTTP_BENCH_H
#define FLOE_BENCH_HTTP_BENCH_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CURLOPT_WRITEFUNCTION that drops the answer. */
static inline size_t bench_sink(char *p, size_t size, size_t n, void *ctx) {
    (void)p;
    (void)ctx;
    return size * n;
}

/* Latencies in ms, growing as they are pushed. */
typedef struct bench_lat {
    double *v;
    size_t n, cap;
} bench_lat;

/* Append ms to l; aborts when memory runs out. */
static inline void bench_lat_push(bench_lat *l, double ms) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    l->v[l->n++] = ms;
}

static inline int bench_lat_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Move the latencies of `from` onto the end of `into`; `from` is left empty. */
static inline void bench_lat_append(bench_lat *into, bench_lat *from) {
    for (size_t i = 0; i < from->n; i++)
        bench_lat_push(into, from->v[i]);
    free(from->v);
    *from = (bench_lat){0};
}

/* Sort l and give its median, 99th percentile and maximum (0 when empty); l is freed. */
static inline void bench_lat_summary(bench_lat *l, double *p50, double *p99, double *max) {
    qsort(l->v, l->n, sizeof *l->v, bench_lat_cmp);
    *p50 = l->n ? l->v[l->n / 2] : 0;
    *p99 = l->n ? l->v[(size_t)((double)l->n * 0.99)] : 0;
    *max = l->n ? l->v[l->n - 1] : 0;
    free(l->v);
    *l = (bench_lat){0};
}

#endif
