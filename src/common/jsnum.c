/*
 * jsnum.c - doubles in JavaScript's Number.prototype.toString form, the canonical number
 * text of record assembly (floe cat) and table scans (floe scan), and of the JS oracles.
 *
 * The digits are the shortest %.Ne that reads back to the same double; their placement
 * follows ECMA-262 Number::toString: plain notation for decimal exponents -7 < n <= 21,
 * exponential otherwise ("1e+21", "1.5e-7").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "floe/common.h"

static int js_number(floe_buf *b, double v) {
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* buf: [-]d[.ddd]e[+-]XX */
    const char *s = buf;
    bool neg = *s == '-';
    if (neg)
        s++;
    char dig[24];
    int k = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && k < 23)
            dig[k++] = *s;
    while (k > 1 && dig[k - 1] == '0')
        k--;
    int point = atoi(s + 1) + 1; /* digits before the decimal point */
    if (neg)
        floe_buf_append_byte(b, '-');
    if (k <= point && point <= 21) {
        floe_buf_append(b, dig, (size_t)k);
        for (int i = k; i < point; i++)
            floe_buf_append_byte(b, '0');
    } else if (0 < point && point <= 21) {
        floe_buf_append(b, dig, (size_t)point);
        floe_buf_append_byte(b, '.');
        floe_buf_append(b, dig + point, (size_t)(k - point));
    } else if (-6 < point && point <= 0) {
        floe_buf_append(b, "0.", 2);
        for (int i = 0; i < -point; i++)
            floe_buf_append_byte(b, '0');
        floe_buf_append(b, dig, (size_t)k);
    } else {
        floe_buf_append_byte(b, (uint8_t)dig[0]);
        if (k > 1) {
            floe_buf_append_byte(b, '.');
            floe_buf_append(b, dig + 1, (size_t)(k - 1));
        }
        floe_buf_printf(b, "e%c%d", point - 1 >= 0 ? '+' : '-', abs(point - 1));
    }
    return floe_buf_error(b); /* the first failed append, if any */
}

int floe_buf_append_js_double(floe_buf *b, double v) {
    if (isnan(v))
        return floe_buf_append(b, "\"NaN\"", 5);
    if (isinf(v))
        return v > 0 ? floe_buf_append(b, "\"Infinity\"", 10)
                     : floe_buf_append(b, "\"-Infinity\"", 11);
    if (v == 0)
        return signbit(v) ? floe_buf_append(b, "-0", 2) : floe_buf_append_byte(b, '0');
    return js_number(b, v);
}
