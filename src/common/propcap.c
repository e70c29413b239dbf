/*
 * propcap.c - the caps on a table's or a namespace's properties (common/propcap.h): the
 * one place that counts them, for every path that changes them (floe table create and
 * properties, floe namespace, and floe catalog serve's create, commit and namespace
 * routes).
 */
#include "common/propcap.h"

#include <string.h>

#include "common/keyset.h"

#define CAP_NOTE "(docs/DESIGN.md, \"Property caps\")"

int floe_propcap_value(const char *owner, const char *key, size_t value_len, floe_error *err) {
    if (value_len <= FLOE_PROPCAP_VALUE)
        return 0;
    return floe_error_set(err, FLOE_ELIMIT,
                          "%s property %s: the value is %zu bytes; a value may be at most "
                          "%zu bytes (256 KiB) %s",
                          owner, key, value_len, FLOE_PROPCAP_VALUE, CAP_NOTE);
}

int floe_propcap_totals(const char *owner, const char *key, floe_propcap_tally before,
                        floe_propcap_tally after, floe_error *err) {
    const char *k = key ? key : "";
    const char *sep = key ? " " : "";
    if (after.count > FLOE_PROPCAP_COUNT && after.count > before.count)
        return floe_error_set(err, FLOE_ELIMIT,
                              "%s property%s%s: the change leaves %zu properties; at most %d "
                              "are kept %s",
                              owner, sep, k, after.count, FLOE_PROPCAP_COUNT, CAP_NOTE);
    if (after.bytes > FLOE_PROPCAP_BYTES && after.bytes > before.bytes)
        return floe_error_set(err, FLOE_ELIMIT,
                              "%s property%s%s: the change leaves %zu bytes of property keys "
                              "and values; at most %zu bytes (1 MiB) are kept %s",
                              owner, sep, k, after.bytes, FLOE_PROPCAP_BYTES, CAP_NOTE);
    return 0;
}

static size_t len_or_0(const char *s) {
    return s ? strlen(s) : 0;
}

int floe_propcap_check(const char *owner, const char *const *hk, const char *const *hv,
                       size_t nhave, const char *const *rm, size_t nrm, const char *const *sk,
                       const char *const *sv, size_t nset, floe_error *err) {
    floe_keyset gone = {0}; /* keys removed or set: their old values leave */
    floe_keyset set = {0};  /* keys set: payload, the index of the last setting */
    floe_keyset had = {0};  /* keys there before */
    floe_propcap_tally before = {0, 0}, after = {0, 0};
    int rc = 0;
    for (size_t i = 0; i < nset; i++)
        FLOE_CHECK(floe_propcap_value(owner, sk[i], len_or_0(sv[i]), err));
    for (size_t i = 0; i < nrm; i++)
        if (floe_keyset_put(&gone, rm[i], strlen(rm[i]), 0, NULL) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nset; i++) {
        int64_t *slot = NULL;
        size_t kl = strlen(sk[i]);
        if (floe_keyset_put(&set, sk[i], kl, (int64_t)i, &slot) < 0 ||
            floe_keyset_put(&gone, sk[i], kl, 0, NULL) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        *slot = (int64_t)i; /* the last setting of a key named twice */
    }
    for (size_t i = 0; i < nhave; i++) {
        size_t b = strlen(hk[i]) + len_or_0(hv[i]);
        before.count++;
        before.bytes += b;
        if (floe_keyset_put(&had, hk[i], strlen(hk[i]), 0, NULL) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        if (!floe_keyset_find(&gone, hk[i], strlen(hk[i]))) {
            after.count++;
            after.bytes += b;
        }
    }
    for (size_t i = 0; i < nset; i++) {
        if (*floe_keyset_find(&set, sk[i], strlen(sk[i])) != (int64_t)i)
            continue; /* set again later */
        after.count++;
        after.bytes += strlen(sk[i]) + len_or_0(sv[i]);
    }
    /* the key named: the first the change adds, else the first it sets */
    const char *named = nset ? sk[0] : NULL;
    for (size_t i = 0; i < nset; i++)
        if (!floe_keyset_find(&had, sk[i], strlen(sk[i]))) {
            named = sk[i];
            break;
        }
    rc = floe_propcap_totals(owner, named, before, after, err);
done:
    floe_keyset_free(&had);
    floe_keyset_free(&gone);
    floe_keyset_free(&set);
    return rc;
}
