/*
 * mixed_gen.c - builds the bench/rewrite_mixed table: a format v2 table whose data files
 * carry both kinds of row-level deletes, as an upsert stream plus row-level deletes
 * leave it. NFILES data files of ROWS rows are committed in 10 rounds of NFILES/10:
 *
 *   - each round is one append commit of its data files and, from the second round on,
 *     NEQ/9 equality delete files (column id) of KEYS keys each, the keys drawn from the
 *     ids of earlier rounds (distinct within a round); their new rows are the first rows
 *     of the round's data files (an upsert: delete and insert in one commit, so the
 *     delete applies to the older rows only);
 *   - then, per pair of the round's data files, one `floe delete` (floe_table_delete_rows,
 *     position delete files on v2) of the rows with d = 0: 10% of the rows, one position
 *     delete file per pair.
 *
 * Schema (id long, v long, f int, d int, x double, s string): f is the data file's number
 * (0..NFILES-1, what the position deletes select by), d = row % 10, fresh ids count up
 * from 0. The table NS.NAME must exist in the SQLite catalog with that schema, format v2,
 * and be empty. Writes "<equality delete file> <its sequence number>" per line to LOG
 * (`floe scan --plan` prints no delete sequence numbers).
 *
 * usage: mixed_gen CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME NFILES ROWS NEQ KEYS LOG
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/tools/eq_deletes.h"
#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/column.h"
#include "floe/delete.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/schema.h"
#include "floe/table.h"
#include "floe/table_metadata.h"

#define ROUNDS 10

static void die(const char *what, const floe_error *err) {
    fprintf(stderr, "mixed_gen: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* Data file number fn: its first nup rows the new rows of keys up[], the rest fresh ids
 * from *next_id on. */
static int write_data(floe_table *t, const floe_schema *s, int32_t fn, int64_t rows,
                      const int64_t *up, int64_t nup, int64_t *next_id, floe_arena *arena,
                      floe_data_file *out, floe_error *err) {
    floe_batch b;
    memset(&b, 0, sizeof b);
    char text[96];
    int rc = floe_batch_init(&b, s) < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
    for (int64_t i = 0; i < rows && rc == 0; i++) {
        int64_t id = i < nup ? up[i] : (*next_id)++;
        int64_t v = (int64_t)fn * 1000000 + i;
        int32_t d = (int32_t)(i % 10);
        double x = (double)(next_rand() % 1000000) / 1000.0;
        int len = snprintf(text, sizeof text, "event %lld of file %d, payload %llx",
                           (long long)id, (int)fn, (unsigned long long)(next_rand() >> 20));
        if (floe_colbuf_push_value(&b.cols[0], 0, &id, 8) < 0 ||
            floe_colbuf_push_value(&b.cols[1], 0, &v, 8) < 0 ||
            floe_colbuf_push_value(&b.cols[2], 0, &fn, 4) < 0 ||
            floe_colbuf_push_value(&b.cols[3], 0, &d, 4) < 0 ||
            floe_colbuf_push_value(&b.cols[4], 0, &x, 8) < 0 ||
            floe_colbuf_push_value(&b.cols[5], 0, text, (size_t)len) < 0)
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        b.nrows++;
    }
    if (rc == 0)
        rc = table_file_write(t, s, &b, "data", arena, out, err);
    floe_batch_free(&b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: mixed_gen CATALOG_DB CATALOG_NAME WAREHOUSE NS.NAME NFILES "
                        "ROWS NEQ KEYS LOG\n");
        return 2;
    }
    long long nfiles = atoll(argv[5]), rows = atoll(argv[6]), neq = atoll(argv[7]),
              per = atoll(argv[8]);
    long long eq_round = neq / (ROUNDS - 1), files_round = nfiles / ROUNDS;
    long long up_round = eq_round * per, up_file = files_round ? up_round / files_round : 0;
    if (nfiles < ROUNDS || nfiles % ROUNDS || rows <= 0 || neq < 0 || per <= 0 ||
        up_file > rows || up_round > rows * files_round) {
        fprintf(stderr, "mixed_gen: bad arguments (NFILES a multiple of %d, an upsert round's "
                        "keys no more than its rows)\n", ROUNDS);
        return 2;
    }
    FILE *log = fopen(argv[9], "w");
    if (!log) {
        perror(argv[9]);
        return 1;
    }
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *cat = NULL;
    floe_table *t = NULL;
    floe_schema *s = NULL;
    if (eq_table_open(argv[1], argv[2], argv[3], argv[4], &cat, &t, &s, &err) < 0)
        die("table", &err);
    if (s->root.nchildren != 6)
        die("schema (id long, v long, f int, d int, x double, s string) expected", NULL);
    int64_t *keys = calloc((size_t)(up_round ? up_round : 1), sizeof *keys);
    char *values = malloc((size_t)per * 24 + 1);
    unsigned char *taken = calloc((size_t)(rows * nfiles), 1);
    if (!keys || !values || !taken)
        die("out of memory", NULL);
    int64_t next_id = 0;
    for (int round = 0; round < ROUNDS; round++) {
        floe_arena arena;
        floe_arena_init(&arena, 64 * 1024);
        floe_append *a = NULL;
        floe_append_result res;
        memset(&res, 0, sizeof res);
        if (floe_table_refresh(t, &err) < 0 || floe_append_new(t, &a, &err) < 0)
            die("append", &err);
        int64_t nup = round > 0 ? up_round : 0;
        int64_t pool = next_id; /* ids of the earlier rounds */
        if (nup > pool)
            die("more upsert keys per round than rows before it", NULL);
        for (int64_t i = 0; i < nup; i++) {
            int64_t k;
            do
                k = (int64_t)(next_rand() % (uint64_t)pool);
            while (taken[k]);
            taken[k] = 1;
            keys[i] = k;
        }
        for (int64_t i = 0; i < nup; i++)
            taken[keys[i]] = 0;
        floe_data_file *dels = calloc((size_t)(eq_round ? eq_round : 1), sizeof *dels);
        if (!dels)
            die("out of memory", NULL);
        for (int64_t e = 0; round > 0 && e < eq_round; e++) {
            size_t len = 0;
            for (int64_t i = 0; i < per; i++)
                len += (size_t)sprintf(values + len, "%s%lld", i ? "," : "",
                                       (long long)keys[e * per + i]);
            if (eq_delete_file_write(t, &s->root.children[0], values, &arena, &dels[e], &err) < 0 ||
                floe_append_add_file(a, &dels[e], &err) < 0)
                die("equality delete file", &err);
        }
        for (int64_t k = 0; k < files_round; k++) {
            floe_data_file df;
            int32_t fn = (int32_t)(round * files_round + k);
            /* the round's upserts spread over its files, the remainder on the last */
            int64_t u0 = k * up_file, un = k + 1 == files_round ? nup - u0 : up_file;
            if (nup == 0)
                u0 = un = 0;
            if (write_data(t, s, fn, rows, keys + u0, un, &next_id, &arena, &df, &err) < 0 ||
                floe_append_add_file(a, &df, &err) < 0)
                die("data file", &err);
        }
        if (floe_append_commit(a, &res, &err) < 0)
            die("commit", &err);
        for (int64_t e = 0; round > 0 && e < eq_round; e++) {
            char *phys = NULL;
            if (floe_table_resolve_path(t, dels[e].file_path, &phys, &err) < 0)
                die("path", &err);
            char *local = floe_io_local_path(phys);
            fprintf(log, "%s %lld\n", local ? local : phys, (long long)res.sequence_number);
            floe_free(local);
            floe_free(phys);
        }
        free(dels);
        floe_append_result_reset(&res);
        floe_append_free(a);
        floe_arena_reset(&arena);
        for (int64_t k = 0; k + 1 < files_round; k += 2) {
            char where[128];
            int32_t fn = (int32_t)(round * files_round + k);
            snprintf(where, sizeof where, "f IN (%d, %d) AND d = 0", (int)fn, (int)fn + 1);
            floe_delete_options o = {.where = where};
            floe_delete_result dr;
            if (floe_table_refresh(t, &err) < 0 || floe_table_delete_rows(t, &o, &dr, &err) < 0)
                die("delete", &err);
        }
        fprintf(stderr, "mixed_gen: round %d of %d\n", round + 1, ROUNDS);
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
