/*
 * fuzz_s3_xml.c - libFuzzer target for the S3 backend's parsers of untrusted bytes
 * (src/io/s3_xml.c, src/io/s3_config.c): the XML scanner that reads every S3 response
 * body, the RFC 3339 timestamps of listings, and the INI subset of ~/.aws/config. Errors
 * are expected; crashes, leaks, over-reads and sanitizer reports are not. A leaf's text
 * is never longer than the input.
 *
 * Seeds: tests/fuzz/seeds/fuzz_s3_xml/.
 */
#include <stdio.h>
#include <string.h>

#include "io/s3_internal.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct leaf_ctx {
    size_t input;
    size_t leaves;
} leaf_ctx;

static int on_leaf(void *ctx, const char *parent, const char *name, const char *text,
                   size_t len) {
    leaf_ctx *c = ctx;
    check(parent != NULL && name != NULL && name[0] != '\0');
    if (text) {
        check(len <= c->input);
        check(text[len] == '\0');
    }
    c->leaves++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    leaf_ctx c = {size, 0};
    floe_error err;
    (void)floe_s3_xml_scan((const char *)data, size, on_leaf, &c, &err);

    char ts[64];
    size_t n = size < sizeof ts - 1 ? size : sizeof ts - 1;
    memcpy(ts, data, n);
    ts[n] = '\0';
    int64_t ms;
    (void)floe_s3_parse_time(ts, &ms, &err);

    static const char *const sections[] = {"default", "profile dev"};
    for (size_t i = 0; i < 2; i++) {
        char *v = floe_s3_ini_get((const char *)data, size, sections[i], NULL, "region");
        check(!v || strlen(v) <= size);
        floe_free(v);
        v = floe_s3_ini_get((const char *)data, size, sections[i], "s3", "addressing_style");
        check(!v || strlen(v) <= size);
        floe_free(v);
    }
    return 0;
}
