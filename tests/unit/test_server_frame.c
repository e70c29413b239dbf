/* test_server_frame.c - WAL frames (round trip, torn and corrupt frames at every byte),
 * section codecs (none, zstd, lz4: round trips, what liblz4 and the NDJSON line reader make
 * of floe's LZ4 frames, corrupt and truncated sections), CRC-32C (hardware against the
 * table version and known vectors), the serve configuration parser, partition path
 * escaping for hostile values, the request body decoder (gzip, zstd fed in pieces of every
 * size, stopping at the cap as it streams) and the in-flight budget. */
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/input.h"
#include "floe/partition.h"
#include "floe/server.h"
#include "harness.h"
#include "server/frame.h"
#include "server/server_internal.h"

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


/* NDJSON-like text of n bytes (compressible, but not trivially). */
static void sample_text(floe_buf *b, size_t n, uint32_t seed) {
    floe_buf_reset(b);
    uint32_t x = seed * 2654435761u + 1;
    while (b->len < n) {
        x = x * 1103515245u + 12345u;
        char line[96];
        int k = snprintf(line, sizeof line, "{\"id\":%u,\"kind\":\"%s\",\"v\":%u}\n", x >> 8,
                         (x >> 4) & 1 ? "click" : "page_view", (x >> 16) % 1000);
        size_t take = (size_t)k < n - b->len ? (size_t)k : n - b->len;
        REQUIRE(floe_buf_append(b, line, take) == 0);
    }
}

TEST(test_section_codecs) {
    floe_section_coder *c = floe_section_coder_new();
    REQUIRE(c);
    floe_buf raw, enc, dec;
    floe_buf_init(&raw, 0);
    floe_buf_init(&enc, 0);
    floe_buf_init(&dec, 0);
    floe_error err;
    /* sizes around the 256 KiB block boundary, empty and tiny, and incompressible */
    const size_t sizes[] = {0, 1, 17, 1000, 65536, 262143, 262144, 262145, 600000};
    const uint8_t codecs[] = {FLOE_CODEC_NONE_, FLOE_CODEC_ZSTD_, FLOE_CODEC_LZ4_};
    LZ4F_dctx *d = NULL;
    REQUIRE(!LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)));
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int noise = 0; noise < 2; noise++) {
            sample_text(&raw, sizes[si], (uint32_t)si);
            if (noise) /* random bytes: the LZ4 blocks are stored raw */
                for (size_t i = 0; i < raw.len; i++)
                    raw.data[i] = (uint8_t)((i * 2654435761u) >> 13 ^ (i >> 3) * 40503u);
            for (size_t ci = 0; ci < 3; ci++) {
                REQUIRE(floe_section_encode(c, codecs[ci], 1, raw.data, raw.len, &enc) == 0);
                floe_buf_reset(&dec);
                REQUIRE(floe_buf_append(&dec, "x", 1) == 0); /* decode appends */
                REQUIRE_OK(floe_section_decode(codecs[ci], enc.data, enc.len,
                                               (uint32_t)raw.len, &dec, &err), err);
                CHECK(dec.len == raw.len + 1 && dec.data[0] == 'x' &&
                      (raw.len == 0 || !memcmp(dec.data + 1, raw.data, raw.len)));
                /* a wrong announced length, a cut and a flipped byte are corrupt */
                floe_buf_reset(&dec);
                CHECK_EQ_INT(floe_section_decode(codecs[ci], enc.data, enc.len,
                                                 (uint32_t)raw.len + 1, &dec, &err),
                             FLOE_ECORRUPT);
                if (enc.len > 0) {
                    floe_buf_reset(&dec);
                    CHECK_EQ_INT(floe_section_decode(codecs[ci], enc.data, enc.len - 1,
                                                     (uint32_t)raw.len, &dec, &err),
                                 FLOE_ECORRUPT);
                }
                if (codecs[ci] != FLOE_CODEC_LZ4_)
                    continue;
                /* liblz4's own frame decoder reads floe's frames byte for byte */
                uint8_t *out = floe_malloc(raw.len + 1);
                REQUIRE(out);
                size_t in_n = enc.len, out_n = raw.len + 1;
                size_t hint = LZ4F_decompress(d, out, &out_n, enc.data, &in_n, NULL);
                CHECK(hint == 0 && in_n == enc.len && out_n == raw.len &&
                      (raw.len == 0 || !memcmp(out, raw.data, raw.len)));
                floe_free(out);
                LZ4F_resetDecompressionContext(d);
                /* the header checksum is checked */
                floe_buf_reset(&dec);
                enc.data[14] ^= 0x5a;
                CHECK_EQ_INT(floe_section_decode(codecs[ci], enc.data, enc.len,
                                                 (uint32_t)raw.len, &dec, &err),
                             FLOE_ECORRUPT);
                enc.data[14] ^= 0x5a;
                /* a block's data flipped: corrupt or another length, never a crash (ASan) */
                if (enc.len > 40 && !noise) {
                    enc.data[enc.len / 2] ^= 0xff;
                    floe_buf_reset(&dec);
                    (void)floe_section_decode(codecs[ci], enc.data, enc.len, (uint32_t)raw.len,
                                              &dec, &err);
                }
            }
        }
    }
    LZ4F_freeDecompressionContext(d);
    /* unknown codec, hostile raw length */
    CHECK_EQ_INT(floe_section_encode(c, 9, 1, (const uint8_t *)"a", 1, &enc), FLOE_EINVALID);
    CHECK_EQ_INT(floe_section_decode(9, (const uint8_t *)"a", 1, 1, &dec, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(floe_section_decode(FLOE_CODEC_LZ4_, (const uint8_t *)"a", 1, 0xFFFFFFFFu, &dec,
                                     &err), FLOE_ELIMIT);
    /* XXH32 known vectors (the LZ4 header checksum depends on them) */
    CHECK_EQ_U64(floe_section_xxh32("", 0, 0), 0x02CC5D05u);
    CHECK_EQ_U64(floe_section_xxh32("a", 1, 0), 0x550D7456u);
    CHECK_EQ_U64(floe_section_xxh32("abc", 3, 0), 0x32D153FFu);
    CHECK_EQ_U64(floe_section_xxh32("Nobody inspects the spammish repetition", 39, 0),
                 0xE2293B2Fu);
    floe_buf_free(&raw);
    floe_buf_free(&enc);
    floe_buf_free(&dec);
    floe_section_coder_free(c);
}

/* A landing file as the sealer writes it: sections of one codec concatenated. The NDJSON
 * line reader (what landing compaction reads with) sniffs the codec and reads every line. */
TEST(test_landing_file_codecs) {
    floe_section_coder *c = floe_section_coder_new();
    REQUIRE(c);
    const uint8_t codecs[] = {FLOE_CODEC_NONE_, FLOE_CODEC_ZSTD_, FLOE_CODEC_LZ4_};
    floe_buf raw, enc, all, got;
    floe_buf_init(&raw, 0);
    floe_buf_init(&enc, 0);
    floe_buf_init(&all, 0);
    floe_buf_init(&got, 0);
    char path[] = "/tmp/floe-landing-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    for (size_t ci = 0; ci < 3; ci++) {
        floe_buf_reset(&all);
        floe_buf_reset(&got);
        FILE *f = fopen(path, "wb");
        REQUIRE(f);
        for (uint32_t k = 0; k < 7; k++) {
            /* sections end at line ends, as the ingest path cuts them */
            sample_text(&raw, 1000 + k * 70000, k);
            while (raw.len && raw.data[raw.len - 1] != '\n')
                raw.len--;
            REQUIRE(floe_buf_append(&all, raw.data, raw.len) == 0);
            REQUIRE(floe_section_encode(c, codecs[ci], 1, raw.data, raw.len, &enc) == 0);
            REQUIRE(fwrite(enc.data, 1, enc.len, f) == enc.len);
        }
        fclose(f);
        floe_line_reader *r = NULL;
        floe_error err;
        floe_chunk ch;
        memset(&ch, 0, sizeof ch);
        floe_buf_init(&ch.data, 0);
        int rc;
        /* read mode, and map mode (what convert asks for: only plain files are mapped) */
        for (int map = 0; map < 2; map++) {
            floe_line_reader_options o = {.chunk_size = 100000, .map = map != 0};
            floe_buf_reset(&got);
            REQUIRE_OK(floe_line_reader_open(path, &o, &r, &err), err);
            while ((rc = floe_line_reader_next(r, &ch, &err)) == 1)
                REQUIRE(floe_buf_append(&got, ch.bytes, ch.len) == 0);
            CHECK_OK(rc, err);
            CHECK(got.len == all.len && !memcmp(got.data, all.data, all.len));
            /* only plain files are mapped: an LZ4 or zstd file read as plain is garbage */
            CHECK(floe_line_reader_mapped(r) == (map && codecs[ci] == FLOE_CODEC_NONE_));
            floe_chunk_release(&ch);
            floe_line_reader_close(r);
        }
        floe_line_reader_options o = {.chunk_size = 100000};
        /* cut in the middle of the last section: an error, not a short read */
        if (codecs[ci] != FLOE_CODEC_NONE_) {
            REQUIRE(truncate(path, 2000) == 0);
            REQUIRE_OK(floe_line_reader_open(path, &o, &r, &err), err);
            while ((rc = floe_line_reader_next(r, &ch, &err)) == 1)
                ;
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            floe_line_reader_close(r);
        }
        floe_buf_free(&ch.data);
    }
    unlink(path);
    floe_buf_free(&raw);
    floe_buf_free(&enc);
    floe_buf_free(&all);
    floe_buf_free(&got);
    floe_section_coder_free(c);
}

TEST(test_crc32c_vectors) {
    /* RFC 3720 B.4 and the classic check value */
    CHECK_EQ_U64(floe_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t z[32], o[32], inc[32];
    memset(z, 0, sizeof z);
    memset(o, 0xff, sizeof o);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    CHECK_EQ_U64(floe_crc32c(0, z, 32), 0x8A9136AAu);
    CHECK_EQ_U64(floe_crc32c(0, o, 32), 0x62A8AB43u);
    CHECK_EQ_U64(floe_crc32c(0, inc, 32), 0x46DD794Eu);
    CHECK_EQ_U64(floe_crc32c_portable(0, "123456789", 9), 0xE3069283u);
    /* every length and alignment against the table version, and chaining */
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += (n < 70 ? 1 : 23)) {
            uint32_t a = floe_crc32c(0, buf + off, n), b = floe_crc32c_portable(0, buf + off, n);
            if (a != b)
                harness_fail(__FILE__, __LINE__, "crc32c off %zu len %zu: %08x vs %08x", off, n,
                             a, b);
            size_t h = n / 3;
            CHECK_EQ_U64(floe_crc32c(floe_crc32c(0, buf + off, h), buf + off + h, n - h), a);
        }
    printf("crc32c: %s\n", floe_crc32c_hardware() ? "hardware (SSE4.2)" : "table");
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
    CHECK_EQ_INT(c.ntokens, 3);
    CHECK_EQ_INT(c.tokens[1].ngrants, 2);
    CHECK_EQ_STR(c.tokens[1].grants[0], "admin");
    CHECK_EQ_INT(c.tokens[2].ngrants, 1);
    CHECK_EQ_STR(c.tokens[2].grants[0], "metrics");
    floe_server_table_config ts;
    floe_server_table_settings(&c, "analytics.events", &ts);
    CHECK_EQ_INT(ts.seal_bytes, 5 << 20);
    CHECK_EQ_INT(ts.seal_age_ms, 300000);
    CHECK_EQ_INT(ts.compact_age_ms, 900000);
    CHECK_OK(floe_server_config_check(&c, &err), err);
    CHECK_EQ_INT(c.landing_codec, FLOE_LANDING_LZ4);
    CHECK(c.max_pending_bytes == (1LL << 30));
    CHECK_EQ_INT(c.nsources, 1);
    CHECK_EQ_STR(c.sources[0].name, "clickstream");
    CHECK_EQ_STR(c.sources[0].keys[0], "bootstrap.servers");
    CHECK_EQ_STR(c.sources[0].values[0], "broker1:9092");
    CHECK(c.s3.endpoint == NULL); /* commented out in the example */
    floe_server_config_reset(&c);
    /* [server] s3.* keys: kept for the program's I/O context, applied as floe.conf's */
    const char *s3 = "[server]\ns3.endpoint = http://127.0.0.1:9\ns3.region = eu-west-1\n"
                     "s3.access-key-id = AK\ns3.secret-access-key = SK\n"
                     "s3.force-virtual-addressing = true\n";
    REQUIRE_OK(floe_server_config_parse(&c, s3, strlen(s3), "t", &err), err);
    CHECK_EQ_STR(c.s3.endpoint, "http://127.0.0.1:9");
    CHECK_EQ_STR(c.s3.secret_access_key, "SK");
    floe_io_options o;
    floe_io_options_init(&o);
    CHECK_OK(floe_io_options_apply_s3(&o, &c.s3, "t", &err), err);
    CHECK_EQ_STR(o.s3.region, "eu-west-1");
    CHECK_EQ_STR(o.s3.access_key, "AK");
    CHECK_EQ_INT(o.s3.credentials, FLOE_IO_CREDS_STATIC);
    CHECK_EQ_INT(o.s3.addressing, FLOE_IO_S3_ADDRESSING_VIRTUAL);
    floe_io_options_free(&o);
    floe_server_config copy;
    REQUIRE_OK(srv_config_copy(&c, &copy, &err), err);
    CHECK_EQ_STR(copy.s3.region, "eu-west-1");
    floe_server_config_reset(&copy);
    floe_server_config_reset(&c);
    /* [source kafka NAME]: every key checked, a bad one named */
    static const struct {
        const char *text, *want;
    } bad_src[] = {
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "colour = red\n", "unknown key 'colour'"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\n", "table is required"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "format = xml\n", "format"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "convert_ahead = maybe\n", "convert_ahead: true or false"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = nodot\n",
         "table 'nodot'"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "commit_interval = soon\n", "commit_interval"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "column.offset =\n", "column.offset"},
        /* the group id is part of quarantine paths (.kafka-<group>/) and property keys */
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "group.id = ../x\n", "group.id '../x': no '=', ',', '/' or control characters"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "group.id = a=b\n", "group.id 'a=b': no '='"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "group.id =\n", "group.id '': empty"},
        {"[source kafka s]\nbootstrap.servers = b:9092\ntopics = t\ntable = a.b\n"
         "group.id = gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"
         "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"
         "ggggggggggggggggggggggggggggggggggggggggggggggggggggg\n", "longer than 200 bytes"},
    };
    for (size_t i = 0; i < sizeof bad_src / sizeof *bad_src; i++) {
        floe_server_config_init(&c);
        REQUIRE_OK(floe_server_config_parse(&c, bad_src[i].text, strlen(bad_src[i].text), "t",
                                            &err), err);
        CHECK(floe_server_config_check(&c, &err) == FLOE_EINVALID);
        CHECK(strstr(err.msg, bad_src[i].want) != NULL);
        floe_server_config_reset(&c);
    }
    floe_server_config_init(&c);
    const char *wrong = "[source http s]\ntopics = t\n";
    CHECK(floe_server_config_parse(&c, wrong, strlen(wrong), "t", &err) == FLOE_EINVALID);
    floe_server_config_reset(&c);
    const char *good = "[source kafka s]\nbootstrap.servers = b:9092\ntopics = t, ^u.*\n"
                       "table = raw.{topic}\nformat = ndjson\ncommit_bytes = 4MB\n"
                       "commit_interval = 500ms\ncolumn.offset = _off\n"
                       "kafka.fetch.max.bytes = 1000000\ntopics = t2\n";
    REQUIRE_OK(floe_server_config_parse(&c, good, strlen(good), "t", &err), err);
    CHECK_OK(floe_server_config_check(&c, &err), err);
    CHECK_EQ_INT(c.sources[0].n, 8); /* topics given twice: the later value */
    CHECK_EQ_STR(c.sources[0].values[1], "t2");
    floe_server_config_reset(&c);
    /* "." and ".." are group ids like any other: file names only alone, never here */
    for (int dots = 1; dots <= 2; dots++) {
        char dotted[200];
        snprintf(dotted, sizeof dotted, "[source kafka s]\nbootstrap.servers = b:9092\n"
                 "topics = t\ntable = a.b\ngroup.id = %s\n", dots == 1 ? "." : "..");
        floe_server_config_init(&c);
        REQUIRE_OK(floe_server_config_parse(&c, dotted, strlen(dotted), "t", &err), err);
        CHECK_OK(floe_server_config_check(&c, &err), err);
        floe_server_config_reset(&c);
    }
    floe_server_config_init(&c);
    const char *codec_cfg = "[server]\nlanding_codec = zstd\nmax_pending_bytes = 0\n";
    REQUIRE_OK(floe_server_config_parse(&c, codec_cfg, strlen(codec_cfg), "t", &err), err);
    CHECK_EQ_INT(c.landing_codec, FLOE_LANDING_ZSTD);
    CHECK(c.max_pending_bytes == 0);
    floe_server_config_reset(&c);

    const char *bad[] = {
        "[server]\nlanding_codec = lzo\n",    "[server]\nmax_pending_bytes = -1\n",
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

static size_t gzip_member(const uint8_t *p, size_t n, uint8_t *out, size_t cap) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (Bytef *)p;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t len = cap - zs.avail_out;
    deflateEnd(&zs);
    return len;
}

typedef struct room_count {
    size_t calls;
    size_t max_want;
} room_count;

static int room_counted(void *ctx, floe_buf *out, size_t want) {
    room_count *rc = ctx;
    rc->calls++;
    if (want > rc->max_want)
        rc->max_want = want;
    return floe_buf_reserve(out, want);
}

/* Feed enc[0..n) in pieces of `step`: 0 and the whole text, or the first error. */
static int decode_in_steps(const char *encoding, const uint8_t *enc, size_t n, size_t step,
                           size_t cap, floe_buf *out, floe_error *err) {
    srv_decoder *d = NULL;
    floe_buf_reset(out);
    REQUIRE_OK(srv_decoder_new(encoding, &d, err), *err);
    room_count rc = {0};
    int r = 0;
    for (size_t at = 0; at < n && r == 0; at += step)
        r = srv_decoder_feed(d, enc + at, n - at < step ? n - at : step, cap, out,
                             room_counted, &rc, err);
    if (r == 0)
        r = srv_decoder_finish(d, err);
    CHECK(rc.max_want <= 64 * 1024); /* grows in steps, never the whole at once */
    srv_decoder_free(d);
    return r;
}

TEST(test_body_decoder) {
    /* 300 KB of text; gzip as two members, zstd as two frames */
    size_t n = 300000;
    uint8_t *text = malloc(n);
    REQUIRE(text);
    for (size_t i = 0; i < n; i++)
        text[i] = (uint8_t)("{\"a\":12345}\n"[i % 12] + (i % 977 == 0));
    size_t gcap = n + 1024, zcap = ZSTD_compressBound(n) * 2;
    uint8_t *gz = malloc(gcap), *zs = malloc(zcap);
    REQUIRE(gz && zs);
    size_t glen = gzip_member(text, n / 3, gz, gcap);
    glen += gzip_member(text + n / 3, n - n / 3, gz + glen, gcap - glen);
    size_t zlen = ZSTD_compress(zs, zcap, text, n / 2, 3);
    REQUIRE(!ZSTD_isError(zlen));
    size_t z2 = ZSTD_compress(zs + zlen, zcap - zlen, text + n / 2, n - n / 2, 3);
    REQUIRE(!ZSTD_isError(z2));
    zlen += z2;
    floe_buf out;
    floe_buf_init(&out, 0);
    floe_error err;
    const size_t steps[] = {1, 7, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        for (int z = 0; z < 2; z++) {
            const char *enc = z ? "zstd" : "gzip";
            const uint8_t *e = z ? zs : gz;
            size_t el = z ? zlen : glen;
            REQUIRE_OK(decode_in_steps(enc, e, el, steps[k], n, &out, &err), err);
            CHECK_EQ_U64(out.len, n);
            CHECK(out.len == n && !memcmp(out.data, text, n));
            /* one byte under the decoded size: refused as it streams, having decoded at
             * most one byte past the cap */
            floe_error_clear(&err);
            CHECK_EQ_INT(decode_in_steps(enc, e, el, steps[k], n - 1, &out, &err), FLOE_ELIMIT);
            CHECK(out.len <= n);
            CHECK(strstr(err.msg, "larger than") != NULL);
            /* truncated: an error at the end, not a short body */
            CHECK_EQ_INT(decode_in_steps(enc, e, el - 5, steps[k], n, &out, &err),
                         FLOE_ECORRUPT);
        }
    }
    /* the whole-body entry agrees */
    REQUIRE_OK(srv_decode_body(gz, glen, "x-gzip", n, &out, &err), err);
    CHECK_EQ_U64(out.len, n);
    CHECK_EQ_INT(srv_decode_body(gz, glen, "br", n, &out, &err), FLOE_EUNSUPPORTED);
    /* empty bodies are truncated streams */
    CHECK_EQ_INT(srv_decode_body(gz, 0, "gzip", n, &out, &err), FLOE_ECORRUPT);
    CHECK_EQ_INT(srv_decode_body(zs, 0, "zstd", n, &out, &err), FLOE_ECORRUPT);
    /* a zstd window over 8 MiB is refused (RFC 9659), and announced ahead from the frame
     * header (RFC 8878 3.1.1.1) so the budget is taken before the decoder allocates it */
    /* frames: magic, a descriptor without single segment, a window descriptor (exponent
     * windowLog - 10), one empty last raw block */
    uint8_t w24[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, (24 - 10) << 3, 0x01, 0x00, 0x00};
    uint8_t w22[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, (22 - 10) << 3, 0x01, 0x00, 0x00};
    REQUIRE_OK(srv_decode_body(w22, sizeof w22, "zstd", n, &out, &err), err);
    CHECK_EQ_U64(out.len, 0);
    CHECK_EQ_INT(srv_decode_body(w24, sizeof w24, "zstd", n, &out, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "window") != NULL);
    srv_decoder *d = NULL;
    REQUIRE_OK(srv_decoder_new("zstd", &d, &err), err);
    size_t ahead = srv_decoder_ahead(d, w22, sizeof w22);
    CHECK(ahead >= ((size_t)4 << 20) && ahead < ((size_t)5 << 20));
    CHECK(srv_decoder_ahead(d, w24, sizeof w24) < ((size_t)9 << 20)); /* capped at 8 MiB */
    srv_decoder_free(d);
    floe_buf_free(&out);
    free(text);
    free(gz);
    free(zs);
}

/* The budget: taking past the limit is FLOE_EBUSY (others hold it) or FLOE_ELIMIT (more
 * than the whole); giving back always works; a failure changes nothing. */
TEST(test_inflight_budget) {
    floe_server *s = calloc(1, sizeof *s);
    REQUIRE(s);
    atomic_store(&s->budget.limit, 1000);
    int64_t a = 0, b = 0;
    REQUIRE(srv_budget_hold(s, &a, 600, 0) == 0);
    CHECK_EQ_INT(srv_budget_hold(s, &b, 500, 0), FLOE_EBUSY);
    CHECK_EQ_INT(b, 0);
    CHECK_EQ_INT(srv_budget_hold(s, &b, 300, 800), FLOE_ELIMIT);
    REQUIRE(srv_budget_hold(s, &b, 400, 0) == 0);
    CHECK_EQ_INT(atomic_load(&s->budget.used), 1000);
    REQUIRE(srv_budget_hold(s, &a, 100, 0) == 0);
    CHECK_EQ_INT(atomic_load(&s->budget.used), 500);
    floe_buf buf;
    floe_buf_init(&buf, 0);
    CHECK_EQ_INT(srv_buf_room(s, &a, 0, &buf, 2000), FLOE_ELIMIT);
    REQUIRE(srv_buf_room(s, &a, 0, &buf, 200) == 0);
    CHECK(buf.cap >= 201 && (int64_t)buf.cap + 100 == a);
    srv_budget_release(s, &a);
    srv_budget_release(s, &b);
    CHECK_EQ_INT(atomic_load(&s->budget.used), 0);
    floe_buf_free(&buf);
    free(s);
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

/* A message kept for /healthz (a seal, the WAL replay, the catalog at start) holds a
 * floe_error's whole message: it was cut at 160 or 200 bytes (%.160s), so a long table
 * name or path read as a shorter one. One too long for the room says it was shortened. */
TEST(test_health_message_whole) {
    floe_server *s = calloc(1, sizeof *s);
    REQUIRE(s != NULL);
    pthread_mutex_init(&s->health_mu, NULL);
    char path[FLOE_ERROR_MSG_MAX];
    memset(path, 'p', sizeof path - 1);
    path[0] = '/';
    memcpy(path + sizeof path - 12, "/tail.jsonl", 12); /* ends the path, NUL included */
    floe_error e;
    floe_error_set(&e, FLOE_EIO, "%s", path);
    srv_health_fail(s, SRV_H_SEALER, "replaying the WAL failed (%s): restart the server", e.msg);
    CHECK(strstr(s->health[SRV_H_SEALER].error, "/tail.jsonl): restart the server") != NULL);
    CHECK(strstr(s->health[SRV_H_SEALER].error, "shortened") == NULL);
    /* twice that: cut, and said so, on a UTF-8 boundary */
    char big[2 * FLOE_ERROR_MSG_MAX];
    for (size_t i = 0; i + 2 < sizeof big; i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[sizeof big - 1] = 0;
    srv_health_fail(s, SRV_H_SEALER, "sealing %s", big);
    const char *msg = s->health[SRV_H_SEALER].error;
    size_t n = strlen(msg);
    CHECK(n >= 15 && !strcmp(msg + n - 15, "... (shortened)"));
    CHECK(((unsigned char)msg[n - 16] & 0xC0) != 0xC0); /* no lead byte left dangling */
    pthread_mutex_destroy(&s->health_mu);
    free(s);
}

int main(void) {
    RUN(test_frame_round_trip);
    RUN(test_frame_torn_and_corrupt);
    RUN(test_section_codecs);
    RUN(test_landing_file_codecs);
    RUN(test_crc32c_vectors);
    RUN(test_config_parse);
    RUN(test_partition_escaping);
    RUN(test_body_decoder);
    RUN(test_inflight_budget);
    RUN(test_health_message_whole);
    return harness_finish();
}

