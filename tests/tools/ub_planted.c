/*
 * ub_planted.c - undefined behaviour on purpose, for the test sanitizer_reports_ub: in
 * the sanitized test build a signed overflow must stop the program with UBSan's report
 * naming this file and the line of the overflow.
 */
#include <limits.h>
#include <stdio.h>

static int add(int a, int b) {
    return a + b; /* overflows when called below */
}

int main(int argc, char **argv) {
    (void)argv;
    volatile int big = INT_MAX;
    printf("%d\n", add(big, argc)); /* argc >= 1: INT_MAX + 1 */
    return 0;
}
