/*
 * fuzz_jnum.c - libFuzzer target for JSON number tokens (src/json/scalar.c): the input is
 * the text of a number.
 *
 * Checked besides the absence of crashes and sanitizer reports: when the whole input is
 * one JSON number, floe_jnum_to_double (its exact path, Eisel-Lemire for up to 19
 * significant digits, strtod beyond) gives strtod's double bit for bit, or refuses the
 * overflow strtod gives as an infinity; floe_jnum_to_float likewise against strtof.
 *
 * Seeds: tests/fuzz/seeds/fuzz_jnum/.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_internal.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static locale_t c;
    if (!c)
        c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (size == 0 || size > 4096 || !c)
        return 0;
    floe_jnum n;
    if (floe_jnum_scan(data, data + size, &n, NULL) != size)
        return 0;
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    double want = strtod_l(text, NULL, c), got = 0;
    int rc = floe_jnum_to_double(&n, c, &got);
    if (isinf(want))
        check(rc == FLOE_SC_RANGE);
    else
        check(rc == FLOE_SC_OK && memcmp(&got, &want, sizeof got) == 0);
    float wantf = strtof_l(text, NULL, c), gotf = 0;
    rc = floe_jnum_to_float(&n, c, &gotf);
    if (isinf(wantf))
        check(rc == FLOE_SC_RANGE);
    else
        check(rc == FLOE_SC_OK && memcmp(&gotf, &wantf, sizeof gotf) == 0);
    free(text);
    return 0;
}
