/*
 * util.c - varints, checksums and digests, logging and clocks.
 *
 * CRC-32 (IEEE) comes from libdeflate. CRC-32C has no Debian C library, so it is computed here
 * with a slicing-by-8 table built once at first use (RFC 3720 polynomial 0x82F63B78).
 */
#include "floe/common.h"
#include "common/lazy_crypto.h"
#include "common/testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <libdeflate.h>

size_t floe_uvarint_put(uint8_t *out, uint64_t v) {
    size_t i = 0;
    while (v >= 0x80) {
        out[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[i++] = (uint8_t)v;
    return i;
}

size_t floe_uvarint_get(const uint8_t *p, size_t n, uint64_t *v) {
    uint64_t r = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        uint64_t b = p[i];
        if (i == 9 && b > 1)
            return 0; /* overlong: more than 64 bits */
        r |= (b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

/* CRC-32 (ISO-HDLC, zlib's) through libdeflate, which folds with carry-less multiplies
 * where the CPU has them: page checksums of every Parquet page written and read, and Avro
 * blocks, at several times zlib's speed (zlib 1.2.13 computes it a table at a time). */
uint32_t floe_crc32(uint32_t crc, const void *p, size_t n) {
    return libdeflate_crc32(crc, p, n);
}

static uint32_t crc32c_table[8][256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static void crc32c_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc32c_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc32c_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = crc32c_table[0][c & 0xff] ^ (c >> 8);
            crc32c_table[t][i] = c;
        }
    }
}

uint32_t floe_crc32c_portable(uint32_t crc, const void *p, size_t n) {
    pthread_once(&crc32c_once, crc32c_init);
    const uint8_t *b = p;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint32_t lo = floe_load_le32(b) ^ c;
        uint32_t hi = floe_load_le32(b + 4);
        c = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff] ^
            crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24] ^
            crc32c_table[3][hi & 0xff] ^ crc32c_table[2][(hi >> 8) & 0xff] ^
            crc32c_table[1][(hi >> 16) & 0xff] ^ crc32c_table[0][hi >> 24];
        b += 8;
        n -= 8;
    }
    while (n--)
        c = crc32c_table[0][(c ^ *b++) & 0xff] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* SSE4.2's CRC32 instruction computes exactly CRC-32C (polynomial 0x1EDC6F41, reflected),
 * 8 bytes per instruction: the WAL checksums every acknowledged byte, and the table
 * version was ~3% of the server's CPU. Chosen once at run time (cpuid); the table
 * version stays the fallback and the reference the tests compare against. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *p,
                                                             size_t n) {
    const uint8_t *b = p;
    uint64_t c = ~crc;
    while (n && ((uintptr_t)b & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *b++);
        n--;
    }
    while (n >= 32) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, b, 8);
        memcpy(&w1, b + 8, 8);
        memcpy(&w2, b + 16, 8);
        memcpy(&w3, b + 24, 8);
        c = __builtin_ia32_crc32di(c, w0);
        c = __builtin_ia32_crc32di(c, w1);
        c = __builtin_ia32_crc32di(c, w2);
        c = __builtin_ia32_crc32di(c, w3);
        b += 32;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        c = __builtin_ia32_crc32di(c, w);
        b += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *b++);
    return ~(uint32_t)c;
}

static uint32_t (*_Atomic crc32c_impl)(uint32_t, const void *, size_t);

uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n) {
    uint32_t (*f)(uint32_t, const void *, size_t) = crc32c_impl;
    if (!f) {
        __builtin_cpu_init();
        f = __builtin_cpu_supports("sse4.2") ? crc32c_hw : floe_crc32c_portable;
        crc32c_impl = f;
    }
    return f(crc, p, n);
}

bool floe_crc32c_hardware(void) {
    (void)floe_crc32c(0, NULL, 0);
    return crc32c_impl == crc32c_hw;
}
#else
uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n) {
    return floe_crc32c_portable(crc, p, n);
}

bool floe_crc32c_hardware(void) { return false; }
#endif

/* ---- logging ----------------------------------------------------------------------- */

static _Atomic int log_level = FLOE_LOG_WARN;

void floe_log_set_level(int level) { atomic_store(&log_level, level); }

int floe_log_level(void) { return atomic_load(&log_level); }

void floe_log(int level, const char *fmt, ...) {
    if (level > floe_log_level())
        return;
    static const char *names[] = {"error", "warn", "info", "debug"};
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "floe: %s: %s\n", names[level], line);
}

int64_t floe_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void floe_random_bytes(void *p, size_t n) {
    uint8_t *b = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(b + got, n - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < n) { /* no entropy source: mix the clocks (unique enough for file names) */
        uint64_t x = (uint64_t)floe_now_ns() ^ ((uint64_t)floe_wall_ms() << 20) ^ (uintptr_t)p;
        for (size_t i = got; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b[i] = (uint8_t)x;
        }
    }
}

void floe_uuid4(char out[37]) {
    uint8_t u[16];
    floe_random_bytes(u, sizeof u);
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

int floe_sha256(const void *p, size_t n, uint8_t out[32], floe_error *err) {
    unsigned int len = 32;
    if (!floe_lazy_crypto(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1)
        return floe_error_set(err, FLOE_EINTERNAL, "libcrypto: SHA-256 failed");
    return 0;
}

struct floe_sha256_state {
    EVP_MD_CTX *md;
};

floe_sha256_state *floe_sha256_begin(floe_error *err) {
    if (!floe_lazy_crypto(err))
        return NULL;
    floe_sha256_state *h = floe_malloc(sizeof *h);
    if (!h) {
        floe_error_set(err, FLOE_ENOMEM, "out of memory");
        return NULL;
    }
    if (!(h->md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
        floe_sha256_free(h);
        floe_error_set(err, FLOE_ENOMEM, "libcrypto: cannot begin a SHA-256 (out of memory)");
        return NULL;
    }
    return h;
}

void floe_sha256_update(floe_sha256_state *h, const void *p, size_t n) {
    EVP_DigestUpdate(h->md, p, n);
}

void floe_sha256_end(floe_sha256_state *h, uint8_t out[32]) {
    unsigned int len = 32;
    EVP_DigestFinal_ex(h->md, out, &len);
    floe_sha256_free(h);
}

void floe_sha256_free(floe_sha256_state *h) {
    if (!h)
        return;
    EVP_MD_CTX_free(h->md);
    floe_free(h);
}

static _Atomic int64_t wall_skew_ms;

void floe_wall_clock_skew(int64_t ms) { atomic_store(&wall_skew_ms, ms); }

int64_t floe_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
           atomic_load_explicit(&wall_skew_ms, memory_order_relaxed);
}

/* ---- simulated crashes (tests) ------------------------------------------------------- */

static _Atomic uint64_t crash_at;    /* 0 = never */
static _Atomic uint64_t crash_seen;

void floe_crash_arm(uint64_t nth) {
    atomic_store(&crash_at, 0);
    atomic_store(&crash_seen, 0);
    atomic_store(&crash_at, nth);
}

uint64_t floe_crash_count(void) { return atomic_load(&crash_seen); }

static _Thread_local bool crash_exempt;

void floe_crash_exempt_thread(void) { crash_exempt = true; }

void floe_crash_point(void) {
    if (crash_exempt)
        return;
    uint64_t n = atomic_fetch_add_explicit(&crash_seen, 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&crash_at, memory_order_relaxed);
    if (at && n == at)
        _exit(FLOE_CRASH_EXIT);
}
