/*
 * read_many.c - the many-small-files case of bench/read: open every Parquet file of a
 * folder in turn and decode every column of every row group into column buffers (what
 * `floe cat --count` does for one file), in one process, one thread.
 *
 *   read_many DIR     prints {"files":N,"rows":R,"bytes":B,"seconds":S}
 *
 * Files are taken in name order; the listing is read before the clock starts.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "floe/parquet_reader.h"

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: read_many DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int64_t bytes = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".parquet") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            char **np = realloc(paths, cap * sizeof *np);
            if (!np)
                return 1;
            paths = np;
        }
        size_t pl = strlen(argv[1]) + l + 2;
        if (!(paths[n] = malloc(pl)))
            return 1;
        snprintf(paths[n], pl, "%s/%s", argv[1], e->d_name);
        struct stat st;
        if (stat(paths[n], &st) == 0)
            bytes += st.st_size;
        n++;
    }
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "read_many: no .parquet files in %s\n", argv[1]);
        return 1;
    }
    qsort(paths, n, sizeof *paths, by_name);
    int64_t rows = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++) {
        floe_error err;
        floe_pq_reader *r = NULL;
        const floe_pq_rowset *rs;
        int rc;
        if (floe_pq_reader_open(NULL, paths[i], NULL, &r, &err) < 0) {
            fprintf(stderr, "read_many: %s: %s\n", paths[i], err.msg);
            return 1;
        }
        while ((rc = floe_pq_reader_next(r, &rs, &err)) > 0)
            rows += rs->nrows;
        if (rc < 0) {
            fprintf(stderr, "read_many: %s: %s\n", paths[i], err.msg);
            return 1;
        }
        floe_pq_reader_close(r);
    }
    double secs = now() - t0;
    printf("{\"files\":%zu,\"rows\":%" PRId64 ",\"bytes\":%" PRId64 ",\"seconds\":%.3f}\n", n,
           rows, bytes, secs);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return 0;
}
