/*
 * rest_client.c - the load generator of bench/rest: CLIENTS threads, each with one
 * keep-alive libcurl handle, send requests to `floe catalog serve` for SECONDS and time
 * each one.
 *
 *   rest_client URL load|commit SECONDS CLIENTS NAMESPACE TABLES
 *
 * load:   GET  URL/v1/namespaces/NAMESPACE/tables/t<i % TABLES> (loadTable)
 * commit: POST the same path with a CommitTableRequest (no requirements; one
 *         set-properties update with a counter), client i committing to t<i % TABLES>
 *
 * Prints one JSON line: requests, errors (a status other than 200), seconds, per second,
 * p50/p99/max latency in ms.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/http_bench.h"

typedef struct client {
    int id;
    const char *url, *mode, *ns;
    int tables;
    double seconds;
    bench_lat lat;
    long errors;
} client;

static void *run(void *arg) {
    client *c = arg;
    CURL *h = curl_easy_init();
    char path[512], body[256];
    snprintf(path, sizeof path, "%s/v1/namespaces/%s/tables/t%d", c->url, c->ns,
             c->id % c->tables);
    bool commit = !strcmp(c->mode, "commit");
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, path);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_sink);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    if (commit)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    double end = bench_now() + c->seconds;
    for (long k = 0;; k++) {
        double t0 = bench_now();
        if (t0 >= end)
            break;
        if (commit) {
            snprintf(body, sizeof body,
                     "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\","
                     "\"updates\":{\"bench.client-%d\":\"%ld\"}}]}",
                     c->id, k);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        }
        CURLcode rc = curl_easy_perform(h);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status != 200)
            c->errors++;
        bench_lat_push(&c->lat, (bench_now() - t0) * 1e3);
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: rest_client URL load|commit SECONDS CLIENTS NAMESPACE TABLES\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    int nc = atoi(argv[4]);
    client *cs = calloc((size_t)nc, sizeof *cs);
    pthread_t *th = calloc((size_t)nc, sizeof *th);
    if (!cs || !th)
        return 1;
    double t0 = bench_now();
    for (int i = 0; i < nc; i++) {
        cs[i] = (client){.id = i, .url = argv[1], .mode = argv[2], .seconds = atof(argv[3]),
                         .ns = argv[5], .tables = atoi(argv[6])};
        pthread_create(&th[i], NULL, run, &cs[i]);
    }
    size_t total = 0;
    long errors = 0;
    for (int i = 0; i < nc; i++) {
        pthread_join(th[i], NULL);
        total += cs[i].lat.n;
        errors += cs[i].errors;
    }
    double secs = bench_now() - t0;
    bench_lat all = {0};
    for (int i = 0; i < nc; i++)
        bench_lat_append(&all, &cs[i].lat);
    double p50, p99, mx;
    bench_lat_summary(&all, &p50, &p99, &mx);
    printf("{\"mode\":\"%s\",\"clients\":%d,\"requests\":%zu,\"errors\":%ld,\"seconds\":%.2f,"
           "\"per_second\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f}\n",
           argv[2], nc, total, errors, secs, (double)total / secs, p50, p99, mx);
    free(cs);
    free(th);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
