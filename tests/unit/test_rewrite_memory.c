/*
 * test_rewrite_memory.c - a rewrite leaves glibc's malloc thresholds alone (they are
 * process-wide: the program decides), and floe_rewrite_tune_malloc fixes them: after it,
 * a freed block of a few MiB goes back to the kernel even when a larger mapped block was
 * freed first. With glibc's default (dynamic) thresholds that first free moves blocks of
 * that size into the heap, where freed ones stay resident: the probe below shows it
 * without the tuning, and still after a rewrite. Under a sanitizer (its own allocator,
 * which ignores mallopt) or another C library only the rewrite itself is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/rewrite.h"
#include "harness.h"
#include "harness_table.h"

#if defined(__SANITIZE_ADDRESS__)
#define PROBE_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define PROBE_MALLOC 0
#endif
#endif
#if !defined(PROBE_MALLOC) && defined(__GLIBC__)
#define PROBE_MALLOC 1
#endif
#ifndef PROBE_MALLOC
#define PROBE_MALLOC 0
#endif

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"}]}";

#define MIB ((size_t)1 << 20)

/* Resident bytes of this process (/proc/self/statm), or -1. */
static long long resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long long size = 0, res = 0;
    int n = fscanf(f, "%lld %lld", &size, &res);
    fclose(f);
    return n == 2 ? res * (long long)sysconf(_SC_PAGESIZE) : -1;
}

/* Write one byte per page: through a volatile pointer, so no store is elided (a block
 * written and freed unread is dead to the compiler). */
static void touch(volatile unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i += 4096)
        p[i] = 1;
}

/* Free a touched 16 MiB block, then touch and free a 4 MiB one (above the rewrite's 2 MiB
 * threshold): how many bytes that free gave back to the kernel. */
static long long released_by_free(void) {
    unsigned char *big = malloc(16 * MIB);
    REQUIRE(big);
    touch(big, 16 * MIB);
    free(big);
    unsigned char *p = malloc(4 * MIB);
    REQUIRE(p);
    touch(p, 4 * MIB);
    long long touched = resident_bytes();
    free(p);
    long long after = resident_bytes();
    REQUIRE(touched > 0 && after > 0);
    return touched - after;
}

/* In a child forked while the heap holds no freed large block (blocks freed by earlier
 * probes would be reused from the heap whatever the thresholds): tuned, the probe's
 * 4 MiB block is mapped and goes back to the kernel when freed. */
static int tuned_probe(void *arg) {
    (void)arg;
    floe_rewrite_tune_malloc();
    return PROBE_MALLOC && released_by_free() < (long long)(3 * MIB);
}

TEST(rewrite_leaves_malloc_alone_tuning_returns_freed_blocks) {
    if (PROBE_MALLOC && (getenv("GLIBC_TUNABLES") || getenv("MALLOC_MMAP_THRESHOLD_"))) {
        fprintf(stderr, "  malloc tunables set in the environment: the probe is skipped\n");
        return;
    }
    long long peak = 0;
    CHECK(harness_child_peak_kib(tuned_probe, NULL, 1LL << 20, &peak) == 0);
    /* glibc's default: the 4 MiB block comes from the heap and stays resident */
    if (PROBE_MALLOC)
        CHECK(released_by_free() < (long long)MIB);

    harness_table e;
    harness_table_open(&e, "t", SCHEMA, NULL, NULL, NULL, 0);
    for (int f = 0; f < 2; f++) {
        floe_buf b;
        floe_buf_init(&b, 0);
        for (int i = 0; i < 100; i++)
            floe_buf_printf(&b, "{\"id\":%d,\"name\":\"n%d\"}\n", f * 100 + i, i % 7);
        harness_table_append_ndjson(&e, f, &b);
        floe_buf_free(&b);
    }
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.min_input_files = 2;
    o.fsync = false;
    floe_rewrite_result r;
    memset(&r, 0, sizeof r);
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.rewritten_data_files_count, 2);
    CHECK_EQ_INT(r.records_written, 200);
    harness_table_close(&e);

    /* the rewrite changed nothing process-wide */
    if (PROBE_MALLOC)
        CHECK(released_by_free() < (long long)MIB);
}

int main(void) {
    RUN(rewrite_leaves_malloc_alone_tuning_returns_freed_blocks);
    return harness_finish();
}
