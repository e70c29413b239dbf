/*
 * http_bench.h - what the libcurl load generators of bench/ share (bench/ingest_client.c,
 * bench/rest_client.c): a monotonic clock, a body sink, and a growing latency array.
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

/* Append ms to *lat (n used of cap), growing it; aborts when memory runs out. */
static inline void bench_lat_push(double **lat, size_t *n, size_t *cap, double ms) {
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *lat = realloc(*lat, *cap * sizeof **lat);
        if (!*lat)
            abort();
    }
    (*lat)[(*n)++] = ms;
}

#endif
