/* test_common.c - errors, allocation hook, arena, bounded buffer, varints, crc, key and
 * hash sets, property caps. */
#include "floe/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "common/keyset.h"
#include "common/propcap.h"
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
    /* a very long prefix is cut in its middle, never overflows; the reason stays */
    char big[2 * FLOE_ERROR_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    floe_error_prefix(&err, "%s", big);
    size_t n = strlen(err.msg);
    CHECK(n < FLOE_ERROR_MSG_MAX && n > FLOE_ERROR_MSG_MAX - 64);
    CHECK(strstr(err.msg, ": block 2: bad sync marker") != NULL);
    CHECK(strstr(err.msg, " bytes cut ...]") != NULL);
}

static bool ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !memcmp(s + a - b, tail, b);
}

/* A message longer than floe_error's buffer (a long path named twice, as a reader's error
 * prefixed with the file by its caller) loses its middle, marked, not its end: the
 * reason and the byte offset stay, so does the file's own name (the end of its path); so
 * does the start. It was cut at the end, so the reason went first. UTF-8 is cut between
 * characters. */
TEST(test_error_long_message) {
    static char path[3000];
    size_t n = (size_t)snprintf(path, sizeof path, "file:///wh/");
    while (n + 40 < sizeof path)
        n += (size_t)snprintf(path + n, sizeof path - n, "folder-\xc3\xa9t\xc3\xa9/");
    snprintf(path + n, sizeof path - n, "data.parquet");
    const char *reason = "row group 0: page at offset 123456: checksum mismatch";
    floe_error err;
    floe_error_clear(&err);
    floe_error_at(&err, FLOE_ECORRUPT, 123456, "%s: %s", path, reason);
    size_t len = strlen(err.msg);
    CHECK(len < FLOE_ERROR_MSG_MAX && len > FLOE_ERROR_MSG_MAX - 64);
    CHECK(!strncmp(err.msg, "file:///wh/folder-", 18));
    CHECK(ends_with(err.msg, "/data.parquet: row group 0: page at offset 123456: checksum "
                             "mismatch"));
    const char *mark = strstr(err.msg, "[... ");
    REQUIRE(mark != NULL);
    const char *after = strchr(mark, ']') + 1;
    /* the marker says how many bytes it stands for */
    size_t whole = strlen(path) + 2 + strlen(reason), kept = len - (size_t)(after - mark);
    CHECK_EQ_INT((int64_t)strtoul(mark + 5, NULL, 10), (int64_t)(whole - kept));
    CHECK(((unsigned char)mark[-1] & 0xC0) != 0xC0);  /* no lead byte without its tail */
    CHECK(((unsigned char)after[0] & 0xC0) != 0x80); /* nor a tail without its lead */
    CHECK_EQ_INT(err.offset, 123456);
    /* the caller's context in front: still the start, the marker, the reason */
    floe_error_prefix(&err, "rewrite: group %d: %s: ", 3, path);
    len = strlen(err.msg);
    CHECK(len < FLOE_ERROR_MSG_MAX);
    CHECK(!strncmp(err.msg, "rewrite: group 3: file:///wh/", 29));
    CHECK(ends_with(err.msg, "/data.parquet: row group 0: page at offset 123456: checksum "
                             "mismatch"));
    /* another error's message as an argument (a different floe_error: a message is never
     * formatted from its own msg) */
    floe_error e2;
    floe_error_clear(&e2);
    floe_error_set(&e2, FLOE_EIO, "reading %s: %s", path, err.msg);
    CHECK(!strncmp(e2.msg, "reading file:///wh/", 19));
    CHECK(ends_with(e2.msg, "page at offset 123456: checksum mismatch"));
    /* errno's text stays at the end */
    floe_error_errno(&e2, ENOSPC, "writing %s", path);
    CHECK(ends_with(e2.msg, "data.parquet: No space left on device"));
    CHECK_EQ_INT(e2.code, FLOE_ENOSPACE);
    /* a message that fits is kept as it is */
    floe_error_set(&e2, FLOE_EIO, "%s", "short");
    CHECK_EQ_STR(e2.msg, "short");
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

/* floe_arena_vec_*: an array grown by realloc becomes the arena's without a copy (the
 * manifest list's records, issue 22's point query) */
TEST(test_arena_vec) {
    floe_arena a;
    floe_arena_init(&a, 256);
    char *s = floe_arena_strdup(&a, "head");
    int64_t *v = NULL;
    size_t cap = 0;
    for (int64_t i = 0; i < 100000; i++) {
        if ((size_t)i == cap) {
            cap = cap ? cap * 2 : 8;
            int64_t *nv = floe_arena_vec_grow(v, cap * sizeof *nv);
            REQUIRE(nv != NULL);
            CHECK(((uintptr_t)nv & 15) == 0);
            v = nv;
        }
        v[i] = i * 7;
    }
    /* a failed grow leaves the array as it was */
    floe_alloc_fail_after(1);
    CHECK(floe_arena_vec_grow(v, 2 * cap * sizeof *v) == NULL);
    floe_alloc_fail_after(0);
    CHECK_EQ_INT(v[99999], 99999 * 7);
    /* past the cap: refused, still the caller's */
    a.cap = a.total + 64;
    CHECK(floe_arena_vec_keep(&a, v, 100000 * sizeof *v) == NULL);
    a.cap = 0;
    size_t before = a.total;
    int64_t *kept = floe_arena_vec_keep(&a, v, 100000 * sizeof *v);
    CHECK(kept == v); /* the same storage: no copy */
    CHECK_EQ_INT(a.total, before + 100000 * sizeof *v);
    bool same = true;
    for (int64_t i = 0; i < 100000; i++)
        same &= kept[i] == i * 7;
    CHECK(same);
    /* the head block keeps its free space */
    char *t = floe_arena_strdup(&a, "after");
    CHECK_EQ_STR(t, "after");
    CHECK_EQ_STR(s, "head");
    CHECK(t - s > 0 && t - s < 256);
    /* one never kept, and NULL */
    void *w = floe_arena_vec_grow(NULL, 100);
    REQUIRE(w != NULL);
    floe_arena_vec_free(w);
    floe_arena_vec_free(NULL);
    floe_arena_reset(&a); /* frees the kept array (ASan: no leak) */
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
        harness_xorshift64(&x);
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
    /* exact: whole numbers, every digit kept, up to INT64_MAX */
    CHECK(floe_parse_duration_exact("9007199254740993", 1, &x) && x == 9007199254740993LL);
    CHECK(floe_parse_duration_exact("9223372036854775807", 1, &x) && x == INT64_MAX);
    CHECK(floe_parse_duration_exact("7d", 1, &x) && x == 7 * 86400000LL);
    CHECK(floe_parse_duration_exact("90min", 0, &x) && x == 5400000);
    CHECK(floe_parse_duration_exact("0", 1, &x) && x == 0);
    x = 7;
    CHECK(!floe_parse_duration_exact("30", 0, &x)); /* bare number refused */
    CHECK(!floe_parse_duration_exact("9223372036854775808", 1, &x));
    CHECK(floe_parse_duration_exact("106751991167d", 1, &x) && x == 106751991167LL * 86400000);
    x = 7;
    CHECK(!floe_parse_duration_exact("106751991168d", 1, &x)); /* overflows at the unit */
    CHECK(!floe_parse_duration_exact("0x10", 1, &x) && !floe_parse_duration_exact("1e3", 1, &x));
    CHECK(!floe_parse_duration_exact(" 5", 1, &x) && !floe_parse_duration_exact("5 ", 1, &x));
    CHECK(!floe_parse_duration_exact("+5", 1, &x) && !floe_parse_duration_exact("1.5d", 1, &x));
    CHECK(!floe_parse_duration_exact("7 d", 1, &x) && !floe_parse_duration_exact("", 1, &x));
    CHECK(!floe_parse_duration_exact(NULL, 1, &x) && x == 7);
}

/* Keys 0..n-1 as decimal text with a varying-length prefix, so lengths and hashes vary. */
static size_t key_text(char *out, size_t i) {
    return (size_t)snprintf(out, 48, "%.*s%zu", (int)(i % 7), "kkkkkkk", i);
}

TEST(test_keyset) {
    floe_keyset s = {0};
    char k[48];
    CHECK(floe_keyset_find(&s, "a", 1) == NULL); /* empty, never grown */
    enum { N = 20000 };
    for (size_t i = 0; i < N; i++) {
        int64_t *slot = NULL;
        CHECK_EQ_INT(floe_keyset_put(&s, k, key_text(k, i), (int64_t)i * 3, &slot), 0);
        REQUIRE(slot != NULL);
        CHECK(*slot == (int64_t)i * 3);
    }
    CHECK_EQ_U64(s.n, N);
    /* every key survives the rehashes; a second put keeps the first payload */
    for (size_t i = 0; i < N; i += 7) {
        int64_t *v = floe_keyset_find(&s, k, key_text(k, i));
        REQUIRE(v != NULL);
        CHECK(*v == (int64_t)i * 3);
        int64_t *slot = NULL;
        CHECK_EQ_INT(floe_keyset_put(&s, k, key_text(k, i), -1, &slot), 0);
        CHECK(slot == v && *slot == (int64_t)i * 3);
    }
    CHECK_EQ_U64(s.n, N);
    CHECK(floe_keyset_find(&s, "kkkk20000", 9) == NULL);
    CHECK(floe_keyset_find(&s, "", 0) == NULL);
    CHECK_EQ_INT(floe_keyset_put(&s, "", 0, 42, NULL), 0); /* the empty key is a key */
    REQUIRE(floe_keyset_find(&s, "", 0) != NULL);
    CHECK(*floe_keyset_find(&s, "", 0) == 42);
    /* iteration over slots sees each key once */
    size_t seen = 0;
    for (size_t i = 0; i < s.cap; i++)
        if (s.hash[i])
            seen += floe_keyset_find(&s, floe_keyset_key(&s, i), s.len[i]) == &s.val[i];
    CHECK_EQ_U64(seen, N + 1);
    floe_keyset_free(&s);

    /* the key budget: FLOE_ELIMIT past max_key_bytes, the set unchanged */
    floe_keyset b = {.max_key_bytes = 10};
    CHECK_EQ_INT(floe_keyset_put(&b, "0123456789", 10, 1, NULL), 0);
    CHECK_EQ_INT(floe_keyset_put(&b, "x", 1, 2, NULL), FLOE_ELIMIT);
    CHECK_EQ_U64(b.n, 1);
    CHECK(floe_keyset_find(&b, "x", 1) == NULL);
    /* a failed reserve leaves the set as it was */
    floe_alloc_fail_after(1);
    CHECK_EQ_INT(floe_keyset_reserve(&b, 100000), FLOE_ENOMEM);
    floe_alloc_fail_after(0);
    REQUIRE(floe_keyset_find(&b, "0123456789", 10) != NULL);
    CHECK(*floe_keyset_find(&b, "0123456789", 10) == 1);
    floe_keyset_free(&b);
    CHECK(b.max_key_bytes == 10); /* free keeps the budget */
}

TEST(test_hashset) {
    floe_hashset s = {0};
    size_t pos = 0;
    CHECK(floe_hashset_next(&s, 5, &pos) == NULL);
    /* many distinct hashes, and runs of equal ones (what colliding keys look like) */
    enum { N = 5000 };
    for (int64_t i = 0; i < N; i++) {
        CHECK_EQ_INT(floe_hashset_add(&s, floe_hash64(&i, sizeof i), i), 0);
        if (i % 100 == 0)
            CHECK_EQ_INT(floe_hashset_add(&s, 77, i), 0);
    }
    CHECK_EQ_INT(floe_hashset_add(&s, 0, -5), 0); /* 0 is stored as 1 */
    CHECK_EQ_U64(s.n, N + N / 100 + 1);
    for (int64_t i = 0; i < N; i += 3) {
        pos = 0;
        int found = 0;
        for (const int64_t *v; (v = floe_hashset_next(&s, floe_hash64(&i, sizeof i), &pos));)
            found += *v == i;
        CHECK_EQ_INT(found, 1);
    }
    int64_t sum = 0;
    int count = 0;
    pos = 0;
    for (const int64_t *v; (v = floe_hashset_next(&s, 77, &pos)); count++)
        sum += *v;
    CHECK_EQ_INT(count, N / 100);
    CHECK(sum == (int64_t)100 * (N / 100) * (N / 100 - 1) / 2);
    pos = 0;
    const int64_t *z = floe_hashset_next(&s, 0, &pos);
    REQUIRE(z != NULL);
    CHECK(*z == -5);
    CHECK(floe_hashset_next(&s, 0, &pos) == NULL);
    /* floe_hash64 reads eight bytes at a time: every tail length counts */
    const char *t = "abcdefghijklmnopq";
    for (size_t n = 1; n <= 17; n++)
        CHECK(floe_hash64(t, n) != floe_hash64(t, n - 1));
    size_t cap = s.cap;
    floe_alloc_fail_after(1);
    CHECK_EQ_INT(floe_hashset_reserve(&s, cap * 4), FLOE_ENOMEM);
    floe_alloc_fail_after(0);
    CHECK_EQ_U64(s.cap, cap);
    floe_hashset_free(&s);
}

/* The property caps (common/propcap.h) at each edge: the limit taken, one more refused,
 * and properties already past a cap kept for changes that do not grow them. */
TEST(test_propcap) {
    floe_error err;
    floe_error_clear(&err);
    /* one value */
    CHECK_EQ_INT(floe_propcap_value("table", "k", FLOE_PROPCAP_VALUE, &err), 0);
    CHECK_EQ_INT(floe_propcap_value("table", "k", FLOE_PROPCAP_VALUE + 1, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "table property k") && strstr(err.msg, "262145") &&
          strstr(err.msg, "262144"));
    /* totals: the count, then the bytes; growth past a cap refused, the rest taken */
    floe_propcap_tally none = {0, 0}, at = {FLOE_PROPCAP_COUNT, FLOE_PROPCAP_BYTES};
    floe_propcap_tally count1 = {FLOE_PROPCAP_COUNT + 1, 10}, bytes1 = {1, FLOE_PROPCAP_BYTES + 1};
    CHECK_EQ_INT(floe_propcap_totals("table", "k", none, at, &err), 0);
    CHECK_EQ_INT(floe_propcap_totals("namespace a", "k", none, count1, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "namespace a property k") && strstr(err.msg, "1001") &&
          strstr(err.msg, "1000"));
    CHECK_EQ_INT(floe_propcap_totals("table", NULL, none, bytes1, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "1048577") && strstr(err.msg, "1048576"));
    CHECK_EQ_INT(floe_propcap_totals("table", "k", count1, count1, &err), 0); /* no growth */
    floe_propcap_tally fewer = {FLOE_PROPCAP_COUNT + 1, FLOE_PROPCAP_BYTES + 5};
    CHECK_EQ_INT(floe_propcap_totals("table", "k", bytes1, fewer, &err), FLOE_ELIMIT);
    CHECK_EQ_INT(floe_propcap_totals("table", "k", fewer, bytes1, &err), 0); /* shrinks */

    /* the merge: have 999 (k0..k998), set k0 again and k999 -> 1000 taken; one more new
     * key refused, unless one is removed in the same change */
    enum { N = FLOE_PROPCAP_COUNT + 1 };
    static char names[N][16];
    const char *hk[N], *hv[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "k%d", i);
        hk[i] = names[i];
        hv[i] = "v";
    }
    const char *sk[] = {"k0", "k999", "k1000"}, *sv[] = {"w", "v", "v"};
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, 999, NULL, 0, sk, sv, 2, &err), 0);
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, 999, NULL, 0, sk, sv, 3, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "property k999") && strstr(err.msg, "1001")); /* first new key */
    const char *rm[] = {"k5"};
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, 999, rm, 1, sk, sv, 3, &err), 0);
    /* a key set twice counts once, its last value */
    const char *dk[] = {"k999", "k999"}, *dv[] = {"v", "v"};
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, 999, NULL, 0, dk, dv, 2, &err), 0);
    /* 1001 stored (another writer's): a value replaced or one removed taken, one added not */
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, N, NULL, 0, sk, sv, 1, &err), 0);
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, N, rm, 1, NULL, NULL, 0, &err), 0);
    const char *nk[] = {"new"}, *nv[] = {"v"};
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, N, NULL, 0, nk, nv, 1, &err), FLOE_ELIMIT);
    /* bytes: values of 256 KiB each; four with their keys past 1 MiB, the key counted */
    char *big = malloc(FLOE_PROPCAP_VALUE + 2);
    REQUIRE(big != NULL);
    memset(big, 'x', FLOE_PROPCAP_VALUE + 1);
    big[FLOE_PROPCAP_VALUE + 1] = 0;
    const char *bk[] = {"a", "b", "c", "d"};
    const char *bv[] = {big + 1, big + 1, big + 1, big + 1 + 4};
    CHECK_EQ_INT(floe_propcap_check("table", NULL, NULL, 0, NULL, 0, bk, bv, 4, &err), 0);
    bv[3] = big + 4; /* 1 MiB + 1 */
    CHECK_EQ_INT(floe_propcap_check("table", NULL, NULL, 0, NULL, 0, bk, bv, 4, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "1048577"));
    bv[3] = big; /* a value of 256 KiB + 1 */
    CHECK_EQ_INT(floe_propcap_check("table", NULL, NULL, 0, NULL, 0, bk, bv, 4, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "property d") && strstr(err.msg, "262145"));
    /* out of memory: a clean error */
    floe_alloc_fail_after(1);
    CHECK_EQ_INT(floe_propcap_check("table", hk, hv, 10, NULL, 0, sk, sv, 2, &err), FLOE_ENOMEM);
    floe_alloc_fail_after(0);
    free(big);
}

int main(void) {
    RUN(test_error_table);
    RUN(test_error_prefix);
    RUN(test_error_long_message);
    RUN(test_alloc_fail_after);
    RUN(test_arena);
    RUN(test_arena_vec);
    RUN(test_buf_bounded);
    RUN(test_buf_sticky_out_of_memory);
    RUN(test_varint);
    RUN(test_crc);
    RUN(test_parse_literals);
    RUN(test_parse_size_duration);
    RUN(test_keyset);
    RUN(test_hashset);
    RUN(test_propcap);
    return harness_finish();
}
