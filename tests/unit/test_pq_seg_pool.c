/*
 * test_pq_seg_pool.c - the Parquet writer's chunk segments kept from one row group for the
 * next (floe_pq_writer.seg_pool, writer_behind.c).
 */
#include <stdlib.h>

#include "floe/column.h"
#include "floe/parquet.h"
#include "floe/parquet_reader.h"
#include "floe/schema.h"
#include "harness.h"
#include "parquet/writer_internal.h"

static floe_error err;

/* Chunk segments kept across row groups (floe_pq_writer.seg_pool): row groups closed at
 * row_group_size hand their large segments (4 MiB and up, at most three quarters of
 * them) to the next row group, once written, synchronously or by the write-behind
 * thread. The pool is counted in
 * floe_pq_writer_buffered_bytes, emptied by an explicit flush, and the file holds every
 * value (read back), byte for byte the same with and without write-behind. */
TEST(test_chunk_segments_kept) {
    floe_schema *s = harness_schema_of(
        "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"x\",\"required\":true,\"type\":\"double\"},"
        "{\"id\":2,\"name\":\"y\",\"required\":false,\"type\":\"long\"}]}");
    REQUIRE(s != NULL);
    const size_t nrows = 500000, nbatches = 8;
    floe_batch b;
    REQUIRE(floe_batch_init(&b, s) == 0);
    uint8_t *file[2] = {NULL, NULL};
    size_t flen[2] = {0, 0};
    for (int behind = 0; behind < 2; behind++) {
        floe_pq_write_options o;
        floe_pq_write_options_init(&o);
        o.codec = FLOE_CODEC_SNAPPY;
        o.output.fsync = false;
        o.write_behind = behind;
        o.row_group_size = (size_t)12 << 20; /* ~8 MB of random values per chunk */
        char path[512];
        snprintf(path, sizeof path, "%s/segs-%d.parquet", harness_tmpdir(), behind);
        floe_pq_writer *w = NULL;
        REQUIRE_OK(floe_pq_writer_open(NULL, path, s, &o, &w, &err), err);
        harness_rng_seed(0xA4093822299F31D0ull);
        size_t kept_max = 0;
        for (size_t k = 0; k < nbatches; k++) {
            floe_batch_clear(&b);
            for (size_t r = 0; r < nrows; r++) {
                uint64_t u = harness_rnd();
                double x = (double)(u >> 11) / 9007199254740992.0 * 1e6;
                int64_t y = (int64_t)(harness_rnd() >> 1);
                REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, &x, 8) == 0);
                REQUIRE(((u & 15) == 0 ? floe_colbuf_push_null(&b.cols[1], 0, 0)
                                       : floe_colbuf_push_value(&b.cols[1], 0, &y, 8)) == 0);
            }
            b.nrows = nrows;
            size_t rgs = w->nrgs;
            REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
            if (!behind && w->nrgs > rgs) { /* written now: its segments are in the pool */
                size_t kept = pqw_seg_pool_bytes(w);
                CHECK(kept >= 2 * CHUNK_SEG_HUGE);
                CHECK(floe_pq_writer_buffered_bytes(w) >= kept);
                if (kept > kept_max)
                    kept_max = kept;
            }
        }
        CHECK(w->nrgs >= 3);
        if (!behind) {
            CHECK(kept_max > 0);
            /* the pool never holds more than three quarters of one row group's chunks */
            CHECK(kept_max <= o.row_group_size);
        }
        REQUIRE_OK(floe_pq_writer_flush(w, &err), err);
        CHECK_EQ_U64(pqw_seg_pool_bytes(w), 0);
        REQUIRE_OK(floe_pq_writer_close(w, NULL, &err), err);
        file[behind] = (uint8_t *)harness_read_file(path, &flen[behind]);
        REQUIRE(file[behind] != NULL);

        /* every value back, in order */
        floe_pq_reader *rd = NULL;
        REQUIRE_OK(floe_pq_reader_open(NULL, path, NULL, &rd, &err), err);
        harness_rng_seed(0xA4093822299F31D0ull);
        size_t rows = 0, bad = 0, pos[2] = {0, 0};
        for (;;) {
            const floe_pq_rowset *x = NULL;
            int rc = floe_pq_reader_next(rd, &x, &err);
            REQUIRE(rc >= 0);
            if (rc == 0)
                break;
            pos[0] = pos[1] = 0;
            for (size_t r = 0; r < (size_t)x->nrows; r++, rows++) {
                uint64_t u = harness_rnd();
                double want = (double)(u >> 11) / 9007199254740992.0 * 1e6;
                int64_t y = (int64_t)(harness_rnd() >> 1);
                double got;
                memcpy(&got, x->cols[0].values + pos[0]++ * 8, 8);
                bad += memcmp(&got, &want, 8) != 0;
                bool null = (u & 15) == 0;
                bad += (x->cols[1].def[r] == 0) != null;
                if (!null) {
                    int64_t gy;
                    memcpy(&gy, x->cols[1].values + pos[1]++ * 8, 8);
                    bad += gy != y;
                }
            }
        }
        floe_pq_reader_close(rd);
        CHECK_EQ_INT(rows, nrows * nbatches);
        CHECK_EQ_INT(bad, 0);
    }
    CHECK(flen[0] == flen[1] && memcmp(file[0], file[1], flen[0]) == 0);
    free(file[0]);
    free(file[1]);
    floe_batch_free(&b);
    floe_schema_free(s);
}

int main(void) {
    RUN(test_chunk_segments_kept);
    return harness_finish();
}
