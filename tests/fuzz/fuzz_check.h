/*
 * fuzz_check.h - check(cond) for the fuzz targets: a broken promise says which (file, line
 * and the condition), then traps, so that libFuzzer and the replay report the input.
 */
#ifndef FLOE_FUZZ_CHECK_H
#define FLOE_FUZZ_CHECK_H

#include <stdio.h>

#define check(cond) ((cond) ? (void)0 : fuzz_broken(__FILE__, __LINE__, #cond))

static inline void fuzz_broken(const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    __builtin_trap();
}

#endif
