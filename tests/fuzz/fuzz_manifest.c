/*
 * fuzz_manifest.c - libFuzzer target for manifest reading (src/iceberg/manifest_read.c):
 * the streaming manifest-entry decoder (manifest_fast.c) and the generic value-tree path,
 * run side by side over each input.
 *
 * Each input is an Iceberg manifest (an Avro object container file). Both decoders read it
 * in lock step (floe_mf_differential); besides crashes, leaks, hangs and sanitizer
 * reports, a disagreement is a finding: an entry both return that differs, or the
 * streaming path refusing an entry the generic path reads. It aborts so the fuzzer keeps
 * the input.
 *
 * Seeds: tests/fuzz/seeds/fuzz_manifest/ (uncompressed manifests, so mutations reach the
 * decoders rather than the codec) and the conformance manifests (targets.conf).
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg/manifest_fast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    floe_mf_diff d;
    floe_mf_differential(data, size, &d);
    if (d.mismatch) {
        fprintf(stderr, "fuzz_manifest: the decoders disagree: %s\n", d.why);
        abort();
    }
    return 0;
}
