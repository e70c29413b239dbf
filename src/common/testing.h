/*
 * common/testing.h - test hooks of the library: allocation failures, a skewed wall clock
 * and simulated crashes. Not installed and not exported by libfloe.so: tests reach them
 * by linking the static library (or the object library) with src/ on the include path.
 * Every hook is process-wide; the library's own code calls floe_crash_point() and
 * floe_crash_exempt_thread().
 */
#ifndef FLOE_COMMON_TESTING_H
#define FLOE_COMMON_TESTING_H

#include "floe/common.h"

/* Failure injection for tests: the Nth allocation from now (1-based) and every later one
 * fail; 0 disables. Returns the number of allocations performed since the last call. */
void floe_alloc_fail_after(uint64_t n);
uint64_t floe_alloc_count(void);

/* Test hook: floe_wall_ms() runs ms ahead of the system clock (behind when negative), as
 * on a machine whose clock is off. Process-wide; 0 = the system clock. */
void floe_wall_clock_skew(int64_t ms);

/* Test hook: simulated crashes. After floe_crash_arm(n), the nth crash point reached
 * ends the process at once with _exit(FLOE_CRASH_EXIT): no cleanup, nothing flushed or
 * rolled back, as a kill -9 at that point would. Crash points are the steps that change
 * durable state: each local write(2), fsync(2) and rename/link (before it), and each SQL
 * statement or commit that may write (before it, and again after it succeeded).
 * floe_crash_arm(0) disarms and only counts; floe_crash_count() is the number of points
 * passed since the last arm. Process-wide. */
#define FLOE_CRASH_EXIT 86
void floe_crash_arm(uint64_t nth);
uint64_t floe_crash_count(void);
void floe_crash_point(void);
/* The calling thread's steps are no crash points from now on: a thread that only looks
 * (the server's health probe) runs on a timer, and counting its steps would make the
 * points of the work under test depend on timing. */
void floe_crash_exempt_thread(void);

/* Test hook: the shredder's count of struct instances (the stamps that tell which fields
 * of one object were seen) jumps to stamp, as after that many objects: a long-lived
 * shredder (floe serve's pooled ones) reaches any count. */
struct floe_shredder;
void floe_shredder_testing_set_stamp(struct floe_shredder *sh, uint64_t stamp);

/* Test hook: shredders made from now on (floe_shredder_new) take every value through
 * shred_value, no number or string inline in the containers' quick path, so that a test
 * can compare the two. Process-wide; false (the default) restores the quick path. */
void floe_shredder_testing_quick_off(bool off);

#endif
