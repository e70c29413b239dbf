/*
 * calendar.c - civil dates <-> days since the Unix epoch.
 *
 * The year is shifted to start on March 1 so the leap day is the last day of a year; the
 * days are then counted in 400-year eras of 146097 days, which keeps the arithmetic exact
 * for years before 1970 and before year 0 alike.
 */
#include "floe/common.h"

int64_t floe_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                          /* [0, 399] */
    int64_t doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                  /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void floe_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d) {
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;                                    /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                     /* [0, 11] */
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}
