/*
 * fuzz_variant.c - libFuzzer target for the Variant codec (src/json/variant.c).
 *
 * Each input is read two ways:
 *   - as a metadata blob followed by a value blob (the layout of the conformance
 *     shredded_variant .variant.bin files): the metadata's own offsets say where it ends.
 *     A refusal is FLOE_ECORRUPT, FLOE_ELIMIT or FLOE_EUNSUPPORTED with a message and a
 *     byte offset inside the blob; an accepted value's JSON encodes again and decodes to
 *     the same text;
 *   - as JSON text for the encoder: what it accepts decodes (a refusal is FLOE_EINVALID or
 *     FLOE_ELIMIT naming an offset inside the text, and leaves the outputs empty), and the
 *     decoded text encodes and decodes to itself again.
 *
 * Seeds: tests/fuzz/seeds/fuzz_variant/ and the conformance .variant.bin files
 * (targets.conf).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/variant.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static floe_variant_encoder *encoder(void) {
    static floe_variant_encoder *e;
    if (!e) {
        floe_error err = {0};
        check(floe_variant_encoder_new(&e, &err) == 0);
    }
    return e;
}

static void refused(int rc, const floe_error *err, size_t n) {
    check(rc == FLOE_ECORRUPT || rc == FLOE_ELIMIT || rc == FLOE_EUNSUPPORTED ||
          rc == FLOE_EINVALID || rc == FLOE_ENOMEM);
    check(err->msg[0] != 0);
    if (rc != FLOE_ENOMEM)
        check(err->offset >= 0 && (size_t)err->offset <= n);
}

static void as_blobs(const uint8_t *data, size_t size) {
    floe_error err = {0};
    size_t msize;
    int rc = floe_variant_metadata_check(data, size, true, &msize, &err);
    if (rc < 0) {
        refused(rc, &err, size);
        return;
    }
    check(msize <= size);
    floe_buf json, m, v, again;
    floe_buf_init(&json, 0);
    floe_buf_init(&m, 0);
    floe_buf_init(&v, 0);
    floe_buf_init(&again, 0);
    rc = floe_variant_to_json(data, msize, data + msize, size - msize, &json, &err);
    if (rc < 0) {
        refused(rc, &err, size - msize);
        goto done;
    }
    rc = floe_variant_encode_json(encoder(), json.data, json.len, &m, &v, &err);
    check(rc == 0 || rc == FLOE_ENOMEM);
    if (rc == 0) {
        check(floe_variant_to_json(m.data, m.len, v.data, v.len, &again, &err) == 0);
        check(again.len == json.len && memcmp(again.data, json.data, json.len) == 0);
    }
done:
    floe_buf_free(&json);
    floe_buf_free(&m);
    floe_buf_free(&v);
    floe_buf_free(&again);
}

static void as_json(const uint8_t *data, size_t size) {
    floe_error err = {0};
    floe_buf m, v, json, m2, v2, json2;
    floe_buf_init(&m, 0);
    floe_buf_init(&v, 0);
    floe_buf_init(&json, 0);
    floe_buf_init(&m2, 0);
    floe_buf_init(&v2, 0);
    floe_buf_init(&json2, 0);
    int rc = floe_variant_encode_json(encoder(), data, size, &m, &v, &err);
    if (rc < 0) {
        refused(rc, &err, size);
        check(m.len == 0 && v.len == 0);
        goto done;
    }
    check(floe_variant_to_json(m.data, m.len, v.data, v.len, &json, &err) == 0);
    check(floe_variant_encode_json(encoder(), json.data, json.len, &m2, &v2, &err) == 0);
    check(floe_variant_to_json(m2.data, m2.len, v2.data, v2.len, &json2, &err) == 0);
    check(json2.len == json.len && memcmp(json2.data, json.data, json.len) == 0);
done:
    floe_buf_free(&json2);
    floe_buf_free(&m);
    floe_buf_free(&v);
    floe_buf_free(&json);
    floe_buf_free(&m2);
    floe_buf_free(&v2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    as_blobs(data, size);
    as_json(data, size);
    return 0;
}
