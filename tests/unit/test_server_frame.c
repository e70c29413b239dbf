/* test_server_frame.c - WAL frames (round trip, torn and corrupt frames at every byte),
 * the serve configuration parser, and partition path escaping for hostile values. */
#include <stdlib.h>
#include <string.h>

#include "floe/partition.h"
#include "floe/server.h"
#include "harness.h"
#include "server/frame.h"

static void make_frame(floe_buf *b) {
    REQUIRE(floe_frame_begin(b) == 0);
    const char route[] = "ns.t\0ts_day=2026-10-06";
    REQUIRE(floe_frame_add_section(b, FLOE_SECTION_RECORDS, 0, route, sizeof route - 1, 2, 12,
                                   "{\"a\":1}\n{}\n\n", 12) == 0);
    REQUIRE(floe_frame_add_section(b, FLOE_SECTION_QUARANTINE, 0, "ns.t", 4, 1, 5, "{x}\n\n",
                                   5) == 0);
    REQUIRE(floe_frame_add_section(b, FLOE_SECTION_ANSWER, 0, "ns.t\0key", 8, 0, 3, "{}}",
                                   3) == 0);
    floe_frame_end(b);
    floe_frame_stamp(b->data, 42, 1700000000000ull);
}

TEST(test_frame_round_trip) {
    floe_buf b;
    floe_buf_init(&b, 0);
    make_frame(&b);
    floe_frame_view v;
    size_t used = 0;
    floe_error err;
    REQUIRE_OK(floe_frame_parse(b.data, b.len, &v, &used, &err), err);
    CHECK_EQ_U64(used, b.len);
    CHECK_EQ_U64(v.frame_id, 42);
    CHECK_EQ_U64(v.time_ms, 1700000000000ull);
    CHECK_EQ_INT(v.nsections, 3);
    CHECK_EQ_INT(v.records, 2); /* only records sections count */
    CHECK_EQ_INT(v.raw_len, 12);
    size_t pos = 0;
    floe_frame_section s;
    REQUIRE(floe_frame_next_section(&v, &pos, &s) == 1);
    CHECK_EQ_INT(s.kind, FLOE_SECTION_RECORDS);
    CHECK_EQ_INT(s.route_len, 22);
    CHECK(memcmp(s.route, "ns.t\0ts_day=2026-10-06", 22) == 0);
    CHECK_EQ_INT(s.records, 2);
    CHECK(s.stored_len == 12 && memcmp(s.stored, "{\"a\":1}\n{}\n\n", 12) == 0);
    REQUIRE(floe_frame_next_section(&v, &pos, &s) == 1);
    CHECK_EQ_INT(s.kind, FLOE_SECTION_QUARANTINE);
    REQUIRE(floe_frame_next_section(&v, &pos, &s) == 1);
    CHECK_EQ_INT(s.kind, FLOE_SECTION_ANSWER);
    CHECK(s.stored_len == 3 && memcmp(s.stored, "{}}", 3) == 0);
    CHECK(floe_frame_next_section(&v, &pos, &s) == 0);
    /* two frames back to back parse one after the other */
    floe_buf two;
    floe_buf_init(&two, 0);
    REQUIRE(floe_buf_append(&two, b.data, b.len) == 0);
    REQUIRE(floe_buf_append(&two, b.data, b.len) == 0);
    REQUIRE_OK(floe_frame_parse(two.data + used, two.len - used, &v, &used, &err), err);
    floe_buf_free(&two);
    floe_buf_free(&b);
}

TEST(test_frame_torn_and_corrupt) {
    floe_buf b;
    floe_buf_init(&b, 0);
    make_frame(&b);
    floe_frame_view v;
    size_t used;
    floe_error err;
    /* every truncation is refused (a torn tail) */
    for (size_t n = 0; n < b.len; n++)
        if (floe_frame_parse(b.data, n, &v, &used, &err) != FLOE_ECORRUPT)
            harness_fail(__FILE__, __LINE__, "torn frame of %zu/%zu bytes accepted", n, b.len);
    /* every single-bit flip is caught by a CRC or a check */
    for (size_t i = 0; i < b.len; i++) {
        if (i >= 44 && i < 48)
            continue; /* reserved bytes are not covered */
        for (int bit = 0; bit < 8; bit += 3) {
            b.data[i] ^= (uint8_t)(1 << bit);
            if (floe_frame_parse(b.data, b.len, &v, &used, &err) == 0)
                harness_fail(__FILE__, __LINE__, "flip of byte %zu bit %d not detected", i, bit);
            b.data[i] ^= (uint8_t)(1 << bit);
        }
    }
    /* a hostile body length past the cap, with a valid header CRC */
    uint8_t h[FLOE_FRAME_HEADER + 8];
    memcpy(h, b.data, FLOE_FRAME_HEADER);
    floe_store_le32(h + 24, 0xFFFFFFF0u);
    floe_store_le32(h + 40, floe_crc32c(0, h, 40));
    CHECK_EQ_INT(floe_frame_parse(h, sizeof h, &v, &used, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "cap") != NULL);
    /* sections that claim more than the body holds, with valid CRCs */
    floe_buf bad;
    floe_buf_init(&bad, 0);
    REQUIRE(floe_frame_begin(&bad) == 0);
    REQUIRE(floe_frame_add_section(&bad, FLOE_SECTION_RECORDS, 0, "t", 1, 1, 3, "ab\n", 3) == 0);
    floe_store_le32(bad.data + FLOE_FRAME_HEADER + 12, 1000); /* stored length */
    floe_frame_end(&bad);
    floe_frame_stamp(bad.data, 1, 1);
    CHECK_EQ_INT(floe_frame_parse(bad.data, bad.len, &v, &used, &err), FLOE_ECORRUPT);
    floe_buf_free(&bad);
    floe_buf_free(&b);
    uint8_t seg[FLOE_SEGMENT_HEADER];
    uint64_t no = 0;
    floe_segment_header(seg, 77);
    CHECK(floe_segment_header_ok(seg, sizeof seg, &no) && no == 77);
    CHECK(!floe_segment_header_ok(seg, 8, &no));
}

TEST(test_config_parse) {
    floe_server_config c;
    floe_server_config_init(&c);
    floe_error err;
    const char *ex = floe_server_example_config();
    REQUIRE_OK(floe_server_config_parse(&c, ex, strlen(ex), "example", &err), err);
    CHECK_EQ_STR(c.listen, "127.0.0.1:8080");
    CHECK_EQ_INT(c.max_body, 16 << 20);
    CHECK_EQ_INT(c.ntables, 1);
    CHECK_EQ_STR(c.tables[0].name, "analytics.events");
    CHECK_EQ_STR(c.tables[0].partition, "event_type, day(ts)");
    CHECK_EQ_INT(c.tables[0].mode, FLOE_SCHEMA_EVOLVE);
    CHECK_EQ_INT(c.ntokens, 2);
    CHECK_EQ_INT(c.tokens[1].ngrants, 2);
    CHECK_EQ_STR(c.tokens[1].grants[0], "admin");
    floe_server_table_config ts;
    floe_server_table_settings(&c, "analytics.events", &ts);
    CHECK_EQ_INT(ts.seal_bytes, 5 << 20);
    CHECK_EQ_INT(ts.seal_age_ms, 300000);
    CHECK_EQ_INT(ts.compact_age_ms, 900000);
    CHECK_OK(floe_server_config_check(&c, &err), err);
    floe_server_config_reset(&c);

    const char *bad[] = {
        "[server]\nmax_body = lots\n",         "[server]\nnope = 1\n",
        "listen = 1.2.3.4:5\n",                "[table ../x]\n",
        "[token t]\ngrants = *\n",             "[token t]\nsecret = short\n",
        "[defaults]\nschema_mode = loose\n",   "[server]\nnode_id = a/b\n",
        "[weird]\n",                           "[server]\nheader_timeout = 5 fortnights\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        floe_server_config_init(&c);
        if (floe_server_config_parse(&c, bad[i], strlen(bad[i]), "t.conf", &err) != FLOE_EINVALID)
            harness_fail(__FILE__, __LINE__, "accepted bad config %zu: %s", i, bad[i]);
        floe_server_config_reset(&c);
    }
    /* beyond loopback, tokens are required */
    floe_server_config_init(&c);
    const char *open_cfg = "[server]\nlisten = 0.0.0.0:8080\n";
    REQUIRE_OK(floe_server_config_parse(&c, open_cfg, strlen(open_cfg), "t", &err), err);
    CHECK_EQ_INT(floe_server_config_check(&c, &err), FLOE_EINVALID);
    floe_server_config_reset(&c);
}

TEST(test_partition_escaping) {
    const char *in[] = {"../x", "a/b", "..", ".", "%2F", "a b", "/etc/passwd", "ok-1_2.3*"};
    const char *out[] = {"..%2Fx", "a%2Fb", "%2E%2E", "%2E", "%252F", "a+b", "%2Fetc%2Fpasswd",
                         "ok-1_2.3*"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        REQUIRE(floe_partition_escape(in[i], strlen(in[i]), &b) == 0);
        REQUIRE(floe_buf_append_byte(&b, 0) == 0);
        CHECK_EQ_STR((const char *)b.data, out[i]);
        CHECK(strchr((const char *)b.data, '/') == NULL);
        floe_buf_free(&b);
    }
}

int main(void) {
    RUN(test_frame_round_trip);
    RUN(test_frame_torn_and_corrupt);
    RUN(test_config_parse);
    RUN(test_partition_escaping);
    return harness_finish();
}
