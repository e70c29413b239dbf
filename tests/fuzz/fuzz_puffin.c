/*
 * fuzz_puffin.c - libFuzzer target for deletion vectors (src/iceberg/puffin.c): the Puffin
 * footer, deletion-vector-v1 blobs and the portable 64-bit Roaring bitmap.
 *
 * Each input is read two ways: as a whole Puffin file (footer, then every
 * deletion-vector-v1 blob it lists) and as a bare 64-bit bitmap. Checked besides the
 * absence of crashes and sanitizer reports:
 *   - a refusal is FLOE_ECORRUPT or FLOE_ELIMIT, says why and names a byte offset inside
 *     the input;
 *   - decoded positions are non-negative, ascending and distinct, and survive a round
 *     trip: encoded again and decoded, the same positions.
 *
 * Seeds: tests/fuzz/seeds/fuzz_puffin/ and the conformance .puffin files (targets.conf).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/puffin.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const size_t MAX_CARD = (size_t)1 << 20;

static void refused(int rc, const floe_error *err, int64_t lo, int64_t hi) {
    check(rc == FLOE_ECORRUPT || rc == FLOE_ELIMIT || rc == FLOE_ENOMEM);
    check(err->msg[0] != 0);
    if (rc == FLOE_ECORRUPT)
        check(err->offset >= lo && err->offset <= hi);
}

static void accepted(const floe_dv_positions *dv, bool blob) {
    for (size_t i = 0; i < dv->n; i++)
        check(dv->pos[i] >= 0 && (i == 0 || dv->pos[i] > dv->pos[i - 1]));
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err = {0};
    int rc = blob ? floe_dv_blob_encode(dv->pos, dv->n, &b, &err)
                  : floe_roaring64_encode(dv->pos, dv->n, &b, &err);
    if (rc == 0) {
        floe_dv_positions again = {0};
        rc = blob ? floe_dv_blob_decode(b.data, b.len, 0, INT64_MAX, MAX_CARD, &again, &err)
                  : floe_roaring64_decode(b.data, b.len, 0, INT64_MAX, MAX_CARD, &again, &err);
        check(rc == 0);
        check(again.n == dv->n);
        check(dv->n == 0 || memcmp(again.pos, dv->pos, dv->n * sizeof *dv->pos) == 0);
        floe_free(again.pos);
    } else {
        check(rc == FLOE_ENOMEM);
    }
    floe_buf_free(&b);
}

static void as_puffin(const uint8_t *data, size_t size) {
    floe_error err = {0};
    if (size < FLOE_PUFFIN_TAIL || memcmp(data, FLOE_PUFFIN_MAGIC, 4))
        return;
    int64_t start;
    int rc = floe_puffin_footer_start(data + size - FLOE_PUFFIN_TAIL, (int64_t)size, &start,
                                      &err);
    if (rc < 0) {
        refused(rc, &err, 0, (int64_t)size);
        return;
    }
    check(start >= 4 && start <= (int64_t)size - 4 - FLOE_PUFFIN_TAIL);
    floe_puffin_footer f = {0};
    rc = floe_puffin_footer_decode(data + start, size - (size_t)start, (int64_t)size, &f, &err);
    if (rc < 0) {
        refused(rc, &err, 0, (int64_t)size);
        return;
    }
    for (size_t i = 0; i < f.nblobs; i++) {
        const floe_puffin_blob *b = &f.blobs[i];
        check(b->type != NULL);
        check(b->offset >= 4 && b->length >= 0 && b->offset + b->length <= start);
        if (strcmp(b->type, "deletion-vector-v1"))
            continue;
        floe_dv_positions dv = {0};
        rc = floe_dv_blob_decode(data + b->offset, (size_t)b->length, b->offset, INT64_MAX,
                                 MAX_CARD, &dv, &err);
        if (rc < 0) {
            refused(rc, &err, b->offset, b->offset + b->length);
            continue;
        }
        accepted(&dv, true);
        floe_free(dv.pos);
    }
    floe_puffin_footer_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    as_puffin(data, size);
    floe_dv_positions dv = {0};
    floe_error err = {0};
    int rc = floe_roaring64_decode(data, size, 0, INT64_MAX, MAX_CARD, &dv, &err);
    if (rc < 0) {
        refused(rc, &err, 0, (int64_t)size);
    } else {
        accepted(&dv, false);
        floe_free(dv.pos);
    }
    return 0;
}
