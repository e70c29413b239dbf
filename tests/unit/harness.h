/*
 * harness.h - the minimal unit-test harness.
 *
 *   TEST(test_name) { CHECK(x == 1); CHECK_EQ_INT(a, b); REQUIRE(p != NULL); }
 *   int main(void) { RUN(test_name); return harness_finish(); }
 *
 * CHECK records a failure and goes on; REQUIRE ends the current test. Each program prints
 * one line per failed check and closes with "<program>: N passed, N failed".
 */
#ifndef FLOE_TEST_HARNESS_H
#define FLOE_TEST_HARNESS_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEST(name) static void name(void)
#define RUN(name) harness_run(#name, name)

/* Run one test. Before the first test not run bare, the process is set up as the floe
 * command sets it up: the SIGBUS handler of guarded mappings (floe_map_guard_install). */
void harness_run(const char *name, void (*fn)(void));
/* Set while running tests that need the process as the library leaves it (no handler
 * installed yet): run them before the others. */
extern bool harness_bare_process;
int harness_finish(void);
void harness_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void harness_abort_test(void);

/* Path of the shared conformance folder joined with rel; fails the test (REQUIRE-style)
 * with a message naming the path when it is missing. Returned string is static per call
 * site until the next call. */
const char *harness_conformance(const char *rel);
/* Path of the source tree (FLOE_SOURCE_DIR, else ".") joined with rel ("tests/js",
 * "tests/data/events.schema.json"). The string stays valid for the next 7 calls (a ring
 * of buffers, so a few can be used in one expression). */
const char *harness_source_path(const char *rel);
/* getenv as a floe_io_lookup_fn (for the library's loaders, which read no environment
 * of their own). */
const char *harness_getenv(void *ctx, const char *name);
/* A fresh empty scratch directory for this test (removed at exit unless KEEP_TMP=1). */
const char *harness_tmpdir(void);
/* Path to the built floe program (FLOE_BIN). */
const char *harness_floe_bin(void);
/* Read a whole file; NULL if missing. Caller frees with free(). */
char *harness_read_file(const char *path, size_t *len);
int harness_write_file(const char *path, const void *p, size_t n);
/* Run a shell command, capturing stdout into *out (malloc'ed, may be NULL); returns the
 * exit status (or -1). */
int harness_run_cmd(const char *cmd, char **out);

/* Run fn(arg) in a forked child and measure its memory: returns 0 with *peak_kib set to
 * how far the child's peak resident set (VmHWM) rose above its resident set when fn
 * started, in KiB; -1 (and a failed check naming the reason) when fn returned non-zero or
 * the child died. The parent watches the child's resident set while it runs and kills it
 * once it is limit_kib above where it started (then 0 with *peak_kib what it reached, over
 * the limit), so a runaway case fails in moments instead of taking the machine's memory. */
int harness_child_peak_kib(int (*fn)(void *arg), void *arg, long long limit_kib,
                           long long *peak_kib);

/* Random numbers: xorshift64 (shifts 13, 7, 17), so a seed gives the same stream on every
 * machine and a failing case replays. harness_xorshift64 advances the stream held in
 * *state (never 0) and returns its new value. */
uint64_t harness_xorshift64(uint64_t *state);
/* The program's one shared stream: harness_rng_seed (re)starts it at seed (never 0; it
 * starts at 0x9e3779b97f4a7c15 unseeded), harness_rnd draws its next value,
 * harness_rndn(n) one below n (0, drawing nothing, when n is 0). */
void harness_rng_seed(uint64_t seed);
uint64_t harness_rnd(void);
uint32_t harness_rndn(uint32_t n);

struct floe_schema;
/* The schema of a JSON text; NULL after failing the test (with the parser's message) when
 * it does not parse. */
struct floe_schema *harness_schema_of(const char *json);
/* An exact-size heap copy of p[0..n) (malloc'ed, 1 byte for n 0), so that ASan flags any
 * read past n. */
uint8_t *harness_dup_exact(const void *p, size_t n);
/* A row sink (floe_scan_read, floe_pq_reader_dump) appending to the floe_buf at ctx. */
int harness_buf_sink(void *ctx, const void *p, size_t n);
/* Whether a local file or a URI exists (false when it cannot tell). */
bool harness_file_exists(const char *uri);

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond))                                                                   \
            harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                      \
    } while (0)

#define REQUIRE(cond)                                                                  \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            harness_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond);                    \
            harness_abort_test();                                                      \
        }                                                                              \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                             \
    do {                                                                               \
        long long va_ = (long long)(a), vb_ = (long long)(b);                          \
        if (va_ != vb_)                                                                \
            harness_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, va_, vb_); \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                             \
    do {                                                                               \
        unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
        if (va_ != vb_)                                                                \
            harness_fail(__FILE__, __LINE__, "%s == %s: %llu != %llu", #a, #b, va_, vb_); \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                             \
    do {                                                                               \
        const char *sa_ = (a), *sb_ = (b);                                             \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0)                                     \
            harness_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,     \
                         sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                  \
    } while (0)

#define CHECK_EQ_MEM(a, b, n)                                                          \
    do {                                                                               \
        if (memcmp((a), (b), (n)) != 0)                                                \
            harness_fail(__FILE__, __LINE__, "%s == %s (%zu bytes) differ", #a, #b,    \
                         (size_t)(n));                                                 \
    } while (0)

/* rc is a floe return code; err a floe_error. */
#define CHECK_OK(rc, err)                                                              \
    do {                                                                               \
        int rc_ = (rc);                                                                \
        if (rc_ != 0)                                                                  \
            harness_fail(__FILE__, __LINE__, "%s returned %d: %s", #rc, rc_, (err).msg); \
    } while (0)

#define REQUIRE_OK(rc, err)                                                            \
    do {                                                                               \
        int rc_ = (rc);                                                                \
        if (rc_ != 0) {                                                                \
            harness_fail(__FILE__, __LINE__, "%s returned %d: %s", #rc, rc_, (err).msg); \
            harness_abort_test();                                                      \
        }                                                                              \
    } while (0)

#endif
