/* test_pq_executor.c - the Parquet writer encoding its columns through a caller's
 * executor (floe_pq_executor): the file is byte for byte the one the writer makes on its
 * own, whatever order and threads the executor runs the tasks on (column appends and the
 * column work of each row group flush); bad executors are refused. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "floe/gen.h"
#include "floe/json.h"
#include "floe/parquet.h"
#include "harness.h"

/* Runs tasks in reverse order on the calling thread, as worker nworkers - 1. */
typedef struct serial_ex {
    int calls;
    size_t tasks;
} serial_ex;

static void serial_run(void *ctx, size_t n, floe_pq_task_fn fn, void *arg) {
    serial_ex *s = ctx;
    s->calls++;
    for (size_t i = n; i-- > 0;) {
        fn(arg, i, 2);
        s->tasks++;
    }
}

/* Runs tasks on a fresh thread (worker 0) and the calling one (worker 1), both taking
 * them from one counter. */
typedef struct pair_job {
    floe_pq_task_fn fn;
    void *arg;
    size_t n;
    atomic_size_t next;
} pair_job;

static void *pair_main(void *p) {
    pair_job *j = p;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->fn(j->arg, i, 0);
    return NULL;
}

static void pair_run(void *ctx, size_t n, floe_pq_task_fn fn, void *arg) {
    atomic_int *calls = ctx;
    atomic_fetch_add(calls, 1);
    pair_job j;
    j.fn = fn;
    j.arg = arg;
    j.n = n;
    atomic_init(&j.next, 0);
    pthread_t t;
    bool started = pthread_create(&t, NULL, pair_main, &j) == 0;
    for (size_t i; (i = atomic_fetch_add(&j.next, 1)) < n;)
        fn(arg, i, 1);
    if (started)
        pthread_join(t, NULL);
}

static int write_file(const char *path, const floe_schema *s, const floe_batch *batches,
                      size_t nb, const floe_pq_executor *ex, floe_error *err) {
    floe_pq_write_options o;
    floe_pq_write_options_init(&o);
    o.output.fsync = false;
    o.row_group_size = 256 << 10; /* several row groups */
    o.page_size = 16 << 10;
    o.executor = ex;
    floe_pq_writer *w = NULL;
    int rc = floe_pq_writer_open(NULL, path, s, &o, &w, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < nb; i++)
        if ((rc = floe_pq_writer_write_batch(w, &batches[i], err)) < 0) {
            floe_pq_writer_abort(w);
            return rc;
        }
    return floe_pq_writer_close(w, NULL, err);
}

TEST(test_executor_same_bytes) {
    floe_error err;
    floe_schema *s = NULL;
    REQUIRE_OK(floe_schema_load(harness_source_path("tests/data/events.schema.json"), &s, &err),
               err);
    floe_gen_opts go;
    floe_gen_opts_default(&go);
    go.seed = 9;
    floe_gen *g;
    REQUIRE_OK(floe_gen_new(&go, &g, &err), err);
    floe_shredder *sh;
    REQUIRE_OK(floe_shredder_new(s, NULL, &sh, &err), err);
    enum { NB = 6 };
    floe_batch batches[NB];
    floe_buf text;
    floe_buf_init(&text, 0);
    for (int k = 0; k < NB; k++) {
        REQUIRE(floe_batch_init(&batches[k], s) == 0);
        floe_buf_reset(&text);
        for (int i = 0; i < 1500; i++)
            REQUIRE_OK(floe_gen_next(g, &text, NULL, &err), err);
        REQUIRE_OK(floe_shredder_feed(sh, text.data, text.len, "gen", 1, 0, &batches[k], NULL,
                                      NULL, &err),
                   err);
        CHECK_EQ_INT(batches[k].nrows, 1500);
    }
    floe_buf_free(&text);
    floe_shredder_free(sh);
    floe_gen_free(g);

    const char *dir = harness_tmpdir();
    char p0[4200], p1[4200], p2[4200];
    snprintf(p0, sizeof p0, "%s/own.parquet", dir);
    snprintf(p1, sizeof p1, "%s/serial.parquet", dir);
    snprintf(p2, sizeof p2, "%s/pair.parquet", dir);
    REQUIRE_OK(write_file(p0, s, batches, NB, NULL, &err), err);
    serial_ex se = {0, 0};
    floe_pq_executor ex1 = {serial_run, &se, 3};
    REQUIRE_OK(write_file(p1, s, batches, NB, &ex1, &err), err);
    /* a task set per batch (batches are > 256 KiB) and one per row group flushed */
    CHECK(se.calls > NB);
    CHECK_EQ_INT(se.tasks, (size_t)se.calls * s->nleaves);
    atomic_int calls;
    atomic_init(&calls, 0);
    floe_pq_executor ex2 = {pair_run, &calls, 2};
    REQUIRE_OK(write_file(p2, s, batches, NB, &ex2, &err), err);
    CHECK_EQ_INT(atomic_load(&calls), se.calls);
    size_t n0, n1, n2;
    char *d0 = harness_read_file(p0, &n0), *d1 = harness_read_file(p1, &n1),
         *d2 = harness_read_file(p2, &n2);
    REQUIRE(d0 && d1 && d2);
    CHECK(n0 == n1 && !memcmp(d0, d1, n0));
    CHECK(n0 == n2 && !memcmp(d0, d2, n0));
    free(d0);
    free(d1);
    free(d2);

    /* an executor without workers, with too many, or without run is refused */
    floe_pq_executor bad[3] = {{serial_run, &se, 0}, {serial_run, &se, 65}, {NULL, &se, 2}};
    for (int k = 0; k < 3; k++)
        CHECK_EQ_INT(write_file(p1, s, batches, NB, &bad[k], &err), FLOE_EINVALID);
    for (int k = 0; k < NB; k++)
        floe_batch_free(&batches[k]);
    floe_schema_free(s);
}

int main(void) {
    RUN(test_executor_same_bytes);
    return harness_finish();
}
