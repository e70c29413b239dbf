/*
 * ingest_client.c - load generator for `floe serve` (bench/ingest).
 *
 *   ingest_client URL BODY_FILE EVENTS_PER_BODY THREADS SECONDS [RATE_REQ_PER_S [COUNT]]
 *
 * Each thread posts BODY_FILE over one keep-alive connection (libcurl), back to back or,
 * with RATE, paced so all threads together send RATE requests per second (open loop: a
 * request's latency counts from its scheduled time, so queueing shows). With COUNT, each
 * thread stops after COUNT requests (or SECONDS, whichever comes first): a fixed amount of
 * work, for counting instructions per event (bench/ingest_ab). Prints one JSON line:
 * requests, errors, events/s, MB/s, p50/p99/max acknowledgement latency in ms.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/http_bench.h"

static const char *url;
static char *body;
static size_t body_len;
static double seconds, rate;
static int nthreads;
static long count; /* requests per thread, 0: until SECONDS */

typedef struct worker {
    pthread_t t;
    int id;
    bench_lat lat;
    long errors;
} worker;

static void *run(void *arg) {
    worker *w = arg;
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bench_sink);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    double start = bench_now(), interval = rate > 0 ? nthreads / rate : 0;
    double next = start + (interval > 0 ? interval * w->id / nthreads : 0);
    for (long sent = 0; bench_now() - start < seconds && (!count || sent < count); sent++) {
        double t0 = bench_now();
        if (interval > 0) {
            if (t0 < next) {
                struct timespec ts = {0, (long)((next - t0) * 1e9)};
                nanosleep(&ts, NULL);
            }
            t0 = next; /* open loop: measure from the scheduled time */
            next += interval;
        }
        long code = 0;
        if (curl_easy_perform(c) != CURLE_OK ||
            (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
            w->errors++;
            continue;
        }
        bench_lat_push(&w->lat, (bench_now() - t0) * 1000.0);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s URL BODY EVENTS_PER_BODY THREADS SECONDS [RATE [COUNT]]\n",
                argv[0]);
        return 2;
    }
    url = argv[1];
    FILE *f = fopen(argv[2], "rb");
    if (!f)
        return perror(argv[2]), 1;
    fseek(f, 0, SEEK_END);
    body_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    body = malloc(body_len);
    if (fread(body, 1, body_len, f) != body_len)
        return 1;
    fclose(f);
    long events = atol(argv[3]);
    nthreads = atoi(argv[4]);
    seconds = atof(argv[5]);
    rate = argc > 6 ? atof(argv[6]) : 0;
    count = argc > 7 ? atol(argv[7]) : 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    worker *w = calloc((size_t)nthreads, sizeof *w);
    double t0 = bench_now();
    for (int i = 0; i < nthreads; i++) {
        w[i].id = i;
        pthread_create(&w[i].t, NULL, run, &w[i]);
    }
    size_t total = 0;
    long errors = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].t, NULL);
        total += w[i].lat.n;
        errors += w[i].errors;
    }
    double el = bench_now() - t0;
    bench_lat all = {0};
    for (int i = 0; i < nthreads; i++)
        bench_lat_append(&all, &w[i].lat);
    double p50, p99, mx;
    bench_lat_summary(&all, &p50, &p99, &mx);
    printf("{\"requests\":%zu,\"errors\":%ld,\"seconds\":%.2f,\"events_per_s\":%.0f,"
           "\"mb_per_s\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f}\n",
           total, errors, el, (double)total * (double)events / el,
           (double)total * (double)body_len / el / 1e6, p50, p99, mx);
    free(w);
    free(body);
    curl_global_cleanup();
    return 0;
}
