/*
 * fuzz_server.c - libFuzzer target for what `floe serve` decodes from bytes it did not
 * produce itself: request bodies with Content-Encoding gzip or zstd (srv_decode_body, with
 * its cap on the decoded size), and WAL segments and frames as recovery reads them after a
 * crash (floe_frame_parse, floe_frame_next_section, floe_segment_header_ok).
 *
 * Every input is decoded as a gzip body and as a zstd body: success must stay within the
 * cap, failure must leave nothing decoded behind. It is then walked as a WAL segment (or,
 * without a segment header, as a run of frames) the way recovery does: frame by frame
 * until one fails its checks; every frame and section accepted must lie inside the input.
 * Errors are expected; crashes, leaks, sanitizer reports and the trap below are not.
 *
 * The HTTP layer itself (headers, routing, authentication) is libmicrohttpd plus
 * src/server/http.c and is exercised end to end by tests/integration/serve_*.sh.
 * Seeds: tests/fuzz/seeds/fuzz_server/.
 */
#include <stdio.h>
#include <string.h>

#include "server/frame.h"
#include "server/server_internal.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BODY_CAP (1u << 20)

static void decode(const uint8_t *data, size_t size, const char *encoding) {
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err;
    if (srv_decode_body(data, size, encoding, BODY_CAP, &out, &err) == 0)
        check(out.len <= BODY_CAP);
    floe_buf_free(&out);
}

static bool inside(const uint8_t *p, size_t n, const uint8_t *lo, size_t len) {
    return p >= lo && n <= len && (size_t)(p - lo) <= len - n;
}

static void walk_frames(const uint8_t *p, size_t n) {
    size_t pos = 0;
    for (int k = 0; k < 4096 && pos < n; k++) {
        floe_frame_view f;
        size_t used = 0;
        floe_error err;
        if (floe_frame_parse(p + pos, n - pos, &f, &used, &err) != 0)
            return; /* recovery cuts the segment here */
        check(used >= FLOE_FRAME_HEADER && used <= n - pos);
        check(inside(f.body, f.body_len, p + pos, used));
        size_t spos = 0;
        floe_frame_section s;
        uint32_t sections = 0;
        while (floe_frame_next_section(&f, &spos, &s) == 1) {
            check(inside(s.route, s.route_len, f.body, f.body_len));
            check(inside(s.stored, s.stored_len, f.body, f.body_len));
            check(++sections <= f.nsections);
        }
        pos += used;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    decode(data, size, "gzip");
    decode(data, size, "zstd");
    uint64_t segno;
    if (floe_segment_header_ok(data, size, &segno))
        walk_frames(data + FLOE_SEGMENT_HEADER, size - FLOE_SEGMENT_HEADER);
    else
        walk_frames(data, size);
    return 0;
}
