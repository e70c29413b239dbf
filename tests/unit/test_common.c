/* test_common.c - errors, allocation hook, arena, bounded buffer, varints, crc. */
#include "floe/common.h"

#include <zlib.h>

#include "harness.h"
#include "common/testing.h"

TEST(test_error_table) {
    CHECK_EQ_STR(floe_strerror(FLOE_ECORRUPT), "corrupt data");
    CHECK_EQ_STR(floe_errname(FLOE_ECONFLICT), "CONFLICT");
    CHECK(FLOE_ECONFLICT != FLOE_EUNKNOWN_STATE);
    CHECK_EQ_STR(floe_strerror(12345), "unknown error");
}

TEST(test_error_prefix) {
    floe_error err;
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_error_at(&err, FLOE_ECORRUPT, 42, "bad sync marker"), FLOE_ECORRUPT);
    floe_error_prefix(&err, "block %d: ", 2);
    floe_error_prefix(&err, "manifest-list %s: ", "3a2f.avro");
    CHECK_EQ_STR(err.msg, "manifest-list 3a2f.avro: block 2: bad sync marker");
    CHECK_EQ_INT(err.offset, 42);
    /* a very long prefix truncates, never overflows */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    floe_error_prefix(&err, "%s", big);
    CHECK_EQ_INT(strlen(err.msg), FLOE_ERROR_MSG_MAX - 1);
}

TEST(test_alloc_fail_after) {
    floe_alloc_fail_after(3);
    void *a = floe_malloc(10), *b = floe_malloc(10), *c = floe_malloc(10);
    CHECK(a != NULL);
    CHECK(b != NULL);
    CHECK(c == NULL);
    floe_alloc_fail_after(0);
    void *d = floe_malloc(10);
    CHECK(d != NULL);
    floe_free(a);
    floe_free(b);
    floe_free(d);
}

TEST(test_arena) {
    floe_arena a;
    floe_arena_init(&a, 256);
    char *s = floe_arena_strdup(&a, "hello");
    CHECK_EQ_STR(s, "hello");
    void *big = floe_arena_alloc(&a, 10000); /* own block */
    REQUIRE(big != NULL);
    CHECK(((uintptr_t)big & 15) == 0);
    char *t = floe_arena_strdup(&a, "world");
    CHECK_EQ_STR(t, "world");
    CHECK_EQ_STR(s, "hello");
    a.cap = a.total + 32;
    CHECK(floe_arena_alloc(&a, 64) == NULL);
    floe_arena_reset(&a);
    CHECK(a.head == NULL);
}

TEST(test_buf_bounded) {
    floe_buf b;
    floe_buf_init(&b, 10);
    CHECK_OK(floe_buf_append(&b, "12345", 5), (floe_error){0});
    CHECK_EQ_INT(floe_buf_append(&b, "123456", 6), FLOE_ELIMIT);
    CHECK_EQ_INT(b.len, 5);
    CHECK_EQ_INT(floe_buf_error(&b), 0 + FLOE_ELIMIT);
    /* the first failure sticks: later appends that would fit change nothing */
    CHECK_EQ_INT(floe_buf_printf(&b, "%d", 42), FLOE_ELIMIT);
    CHECK_EQ_INT(floe_buf_append_byte(&b, 'x'), FLOE_ELIMIT);
    CHECK_EQ_INT(floe_buf_append(&b, "", 0), FLOE_ELIMIT);
    CHECK_EQ_INT(b.len, 5);
    CHECK(floe_buf_detach(&b, NULL) == NULL);
    floe_buf_truncate(&b, 5); /* undoing the failed appends clears it */
    CHECK_EQ_INT(floe_buf_error(&b), 0);
    CHECK_OK(floe_buf_printf(&b, "%d", 42), (floe_error){0});
    size_t n;
    char *s = floe_buf_detach(&b, &n);
    CHECK_EQ_STR(s, "1234542");
    CHECK_EQ_INT(n, 7);
    floe_free(s);
    floe_buf_free(&b);
}

/* A chain of appends checked once: an allocation failure in the middle is not hidden by
 * the appends after it succeeding. */
TEST(test_buf_sticky_out_of_memory) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_alloc_fail_after(1);
    floe_buf_append(&b, "<Delete>", 8);
    floe_alloc_fail_after(0);
    floe_buf_append(&b, "<Object>", 8);
    floe_buf_printf(&b, "%s", "</Delete>");
    CHECK_EQ_INT(floe_buf_error(&b), 0 + FLOE_ENOMEM);
    CHECK_EQ_INT(b.len, 0);
    floe_buf_reset(&b);
    CHECK_OK(floe_buf_append(&b, "ok", 2), (floe_error){0});
    CHECK_EQ_INT(floe_buf_error(&b), 0);
    floe_buf_free(&b);
}

TEST(test_varint) {
    uint8_t out[10];
    uint64_t v;
    CHECK_EQ_INT(floe_uvarint_put(out, 0), 1);
    CHECK_EQ_INT(floe_uvarint_put(out, 300), 2);
    CHECK(out[0] == 0xAC && out[1] == 0x02);
    CHECK_EQ_INT(floe_uvarint_get(out, 2, &v), 2);
    CHECK_EQ_U64(v, 300);
    CHECK_EQ_INT(floe_uvarint_get(out, 1, &v), 0); /* truncated */
    CHECK_EQ_INT(floe_uvarint_put(out, UINT64_MAX), 10);
    CHECK_EQ_INT(floe_uvarint_get(out, 10, &v), 10);
    CHECK_EQ_U64(v, UINT64_MAX);
    uint8_t over[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0};
    CHECK_EQ_INT(floe_uvarint_get(over, 11, &v), 0);
    CHECK_EQ_U64(floe_zigzag64(-1), 1);
    CHECK_EQ_U64(floe_zigzag64(1), 2);
    CHECK_EQ_INT(floe_unzigzag64(floe_zigzag64(INT64_MIN)), INT64_MIN);
}

TEST(test_crc) {
    /* standard check values for "123456789" */
    CHECK_EQ_U64(floe_crc32(0, "123456789", 9), 0xCBF43926u);
    /* CRC-32 equals zlib's (an independent implementation) at every length and alignment
     * around the vector widths, in one call and chained */
    uint8_t buf[5000];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t n = 0; n <= 600; n += (n < 130 ? 1 : 37))
        for (size_t off = 0; off < 16; off += 5) {
            uint32_t want = (uint32_t)crc32(0, buf + off, (uInt)n);
            CHECK_EQ_U64(floe_crc32(0, buf + off, n), want);
            uint32_t c2 = floe_crc32(floe_crc32(0, buf + off, n / 3), buf + off + n / 3, n - n / 3);
            CHECK_EQ_U64(c2, want);
        }
    CHECK_EQ_U64(floe_crc32(0, buf, sizeof buf), (uint32_t)crc32(0, buf, sizeof buf));
    CHECK_EQ_U64(floe_crc32c(0, "123456789", 9), 0xE3069283u);
    /* incremental equals one-shot */
    uint32_t c = floe_crc32c(0, "12345", 5);
    c = floe_crc32c(c, "6789", 4);
    CHECK_EQ_U64(c, 0xE3069283u);
}

TEST(test_parse_literals) {
    int64_t i = 7;
    uint64_t u = 7;
    double d = 0;
    CHECK(floe_parse_i64("-42", 3, &i) && i == -42);
    CHECK(floe_parse_i64("9223372036854775807x", 19, &i) && i == INT64_MAX); /* bounded */
    i = 7;
    CHECK(!floe_parse_i64("9223372036854775808", 19, &i) && i == 7); /* out of range */
    CHECK(!floe_parse_i64("12a", 3, &i) && !floe_parse_i64("", 0, &i));
    CHECK(!floe_parse_i64("123456789012345678901234567890123", 33, &i)); /* overlong */
    CHECK(floe_parse_u64("18446744073709551615", 20, &u) && u == UINT64_MAX);
    CHECK(!floe_parse_u64("-1", 2, &u) && u == UINT64_MAX);
    CHECK(floe_parse_f64("2.5e3", 5, &d) && d == 2500.0);
    CHECK(!floe_parse_f64("2.5e", 4, &d) && !floe_parse_f64("1.5 ", 4, &d));
}

/* One parser for sizes and durations everywhere (CLI, serve's configuration, maintenance
 * settings); only the meaning of a bare number differs between them. */
TEST(test_parse_size_duration) {
    int64_t x = 7;
    CHECK(floe_parse_size("128MB", &x) && x == 128LL << 20);
    CHECK(floe_parse_size("1.5 GiB", &x) && x == 3LL << 29);
    CHECK(floe_parse_size("64k", &x) && x == 64 << 10);
    CHECK(floe_parse_size("4096", &x) && x == 4096);
    CHECK(floe_parse_size("16kb", &x) && x == 16 << 10);
    CHECK(floe_parse_size("0", &x) && x == 0);
    x = 7;
    CHECK(!floe_parse_size("", &x) && !floe_parse_size(NULL, &x) && !floe_parse_size("MB", &x));
    CHECK(!floe_parse_size("-1MB", &x) && !floe_parse_size("1TB", &x));
    CHECK(!floe_parse_size("nan", &x) && !floe_parse_size("inf", &x));
    CHECK(!floe_parse_size("9e18GB", &x) && !floe_parse_size("12 MB junk", &x));
    CHECK(x == 7); /* untouched on failure */
    CHECK(floe_parse_duration("250ms", 0, &x) && x == 250);
    CHECK(floe_parse_duration("1.5h", 0, &x) && x == 5400000);
    CHECK(floe_parse_duration("3d", 0, &x) && x == 3 * 86400000LL);
    CHECK(floe_parse_duration("90 min", 0, &x) && x == 5400000);
    CHECK(floe_parse_duration("2m", 0, &x) && x == 120000);
    CHECK(floe_parse_duration("30s", 0, &x) && x == 30000);
    x = 7;
    CHECK(!floe_parse_duration("30", 0, &x) && x == 7); /* bare number refused */
    CHECK(floe_parse_duration("30", 1000, &x) && x == 30000); /* or seconds */
    CHECK(floe_parse_duration("30", 1, &x) && x == 30);       /* or ms */
    CHECK(!floe_parse_duration("5 years", 1, &x) && !floe_parse_duration("nan", 1, &x));
    CHECK(!floe_parse_duration("-1s", 1, &x) && !floe_parse_duration("1e300d", 1, &x));
    CHECK(!floe_parse_duration("1H", 1, &x)); /* duration units are lower case */
}

int main(void) {
    RUN(test_error_table);
    RUN(test_error_prefix);
    RUN(test_alloc_fail_after);
    RUN(test_arena);
    RUN(test_buf_bounded);
    RUN(test_buf_sticky_out_of_memory);
    RUN(test_varint);
    RUN(test_crc);
    RUN(test_parse_literals);
    RUN(test_parse_size_duration);
    return harness_finish();
}
