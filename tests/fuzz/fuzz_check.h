/*
 * fuzz_check.h - for the fuzz targets: check(cond), a broken promise that says which (file,
 * line and the condition), then traps, so that libFuzzer and the replay report the input;
 * fuzz_text, the input as a C string.
 */
#ifndef FLOE_FUZZ_CHECK_H
#define FLOE_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(cond) ((cond) ? (void)0 : fuzz_broken(__FILE__, __LINE__, #cond))

static inline void fuzz_broken(const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    __builtin_trap();
}

/* The size bytes of data and a NUL in a new malloc'd block (free it), or NULL when out of
 * memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
    char *t = malloc(size + 1);
    if (t) {
        memcpy(t, data, size);
        t[size] = '\0';
    }
    return t;
}

#endif
