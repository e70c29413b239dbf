/*
 * upsert_gen.c - builds the bench/rewrite_deletes table: the commits a Flink upsert
 * stream (upsert mode, key column id) makes on a format v3 table. Each of NCOMMIT
 * commits is one "overwrite" snapshot holding an equality delete file of KEYS keys and a
 * data file with the new rows of those keys (floe_append with an equality delete file, as
 * tests/tools/eq_upsert.c does; the delete file is written by tests/tools/eq_deletes.c).
 * Keys are drawn from [0, NKEYS) by a fixed generator, distinct within a commit; a key's
 * new row carries v = commit * 1000000 + its place in the commit.
 *
 * The table NS.NAME (id long, v long, s string) must exist in the SQLite catalog, format
 * v3, with its base rows appended. Writes one line per commit to LOG:
 * "<equality delete file> <its sequence number>" (what the DuckDB check in
 * bench/rewrite_deletes needs, since `floe scan --plan` prints no delete sequence numbers).
 *
 * usage: upsert_gen CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME NKEYS NCOMMIT KEYS LOG
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/tools/eq_deletes.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/column.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "floe/table.h"
#include "floe/table_metadata.h"

static void die(const char *what, const floe_error *err) {
    fprintf(stderr, "upsert_gen: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* The new rows of one commit as a data file of t, described in *out (arena). */
static int write_rows(floe_table *t, const floe_schema *s, const int64_t *keys, size_t n,
                      int64_t commit, floe_arena *arena, floe_data_file *out, floe_error *err) {
    floe_batch b;
    memset(&b, 0, sizeof b);
    char text[64];
    int rc = floe_batch_init(&b, s) < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int64_t v = commit * 1000000 + (int64_t)i;
        int len = snprintf(text, sizeof text, "upsert %lld of key %lld", (long long)commit,
                           (long long)keys[i]);
        if (floe_colbuf_push_value(&b.cols[0], 0, &keys[i], 8) < 0 ||
            floe_colbuf_push_value(&b.cols[1], 0, &v, 8) < 0 ||
            floe_colbuf_push_value(&b.cols[2], 0, text, (size_t)len) < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        b.nrows++;
    }
    if (rc == 0)
        rc = table_file_write(t, s, &b, "upsert", arena, out, err);
    floe_batch_free(&b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: upsert_gen CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME NKEYS "
                        "NCOMMIT KEYS LOG\n");
        return 2;
    }
    long long nkeys = atoll(argv[5]), ncommit = atoll(argv[6]), per = atoll(argv[7]);
    if (nkeys <= 0 || ncommit <= 0 || per <= 0 || per > nkeys) {
        fprintf(stderr, "upsert_gen: bad arguments\n");
        return 2;
    }
    FILE *log = fopen(argv[8], "w");
    if (!log) {
        perror(argv[8]);
        return 1;
    }
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_schema *s = NULL;
    if (eq_table_open(argv[1], argv[2], argv[3], argv[4], &cat, &t, &s, &err) < 0)
        die("table", &err);
    if (s->root.nchildren != 3 || s->root.children[0].type != FLOE_TYPE_LONG ||
        s->root.children[1].type != FLOE_TYPE_LONG || s->root.children[2].type != FLOE_TYPE_STRING)
        die("schema", NULL); /* (id long, v long, s string) expected */
    int64_t *keys = calloc((size_t)per, sizeof *keys);
    char *values = malloc((size_t)per * 24 + 1);
    unsigned char *taken = calloc((size_t)nkeys, 1);
    if (!keys || !values || !taken)
        die("out of memory", NULL);
    for (long long c = 1; c <= ncommit; c++) {
        size_t len = 0;
        for (long long i = 0; i < per; i++) {
            int64_t k;
            do
                k = (int64_t)(next_rand() % (uint64_t)nkeys);
            while (taken[k]);
            taken[k] = 1;
            keys[i] = k;
            len += (size_t)sprintf(values + len, "%s%lld", i ? "," : "", (long long)k);
        }
        for (long long i = 0; i < per; i++)
            taken[keys[i]] = 0;
        floe_arena arena;
        floe_arena_init(&arena, 64 * 1024);
        floe_data_file del, rows;
        floe_append *a = NULL;
        floe_append_result res;
        memset(&res, 0, sizeof res);
        if (eq_delete_file_write(t, &s->root.children[0], values, &arena, &del, &err) < 0 ||
            write_rows(t, s, keys, (size_t)per, c, &arena, &rows, &err) < 0 ||
            floe_append_new(t, &a, &err) < 0 || floe_append_add_file(a, &del, &err) < 0 ||
            floe_append_add_file(a, &rows, &err) < 0 || floe_append_commit(a, &res, &err) < 0)
            die("commit", &err);
        char *phys = NULL;
        if (floe_table_resolve_path(t, del.file_path, &phys, &err) < 0)
            die("path", &err);
        char *local = floe_io_local_path(phys);
        fprintf(log, "%s %lld\n", local ? local : phys, (long long)res.sequence_number);
        floe_free(local);
        floe_free(phys);
        floe_append_result_reset(&res);
        floe_append_free(a);
        floe_arena_reset(&arena);
        if (c % 100 == 0)
            fprintf(stderr, "upsert_gen: %lld commits\n", c);
    }
    if (fclose(log) != 0)
        die("log", NULL);
    free(keys);
    free(values);
    free(taken);
    floe_schema_free(s);
    floe_table_close(t);
    floe_catalog_close(cat);
    return 0;
}
