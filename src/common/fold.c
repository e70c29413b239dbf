/*
 * fold.c - names folded as a case-insensitive filesystem compares them (fold.h).
 *
 * With ICU: UTF-8 to UTF-16, NFD, u_strFoldCase (Unicode default case folding, the
 * folding APFS and NTFS approximate), NFC, back to UTF-8: Unicode's canonical caseless
 * match (D145), so a precomposed letter and its decomposed form, which APFS and HFS+ take
 * for one name, fold alike. The NFD before folding matters: folding turns some combining
 * marks into letters (U+0345 into U+03B9), so marks out of canonical order, folded first,
 * would attach to different letters in two canonically equal names. Without ICU, ASCII only:
 * the fold is conservative (names differing by a non-ASCII letter's case are not
 * caught), never wrong about ASCII.
 */
#include "common/fold.h"

#include <stdint.h>
#include <string.h>

#include "floe/common.h"

#ifdef FLOE_HAVE_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

static char *fold_ascii(const char *s) {
    char *out = floe_strdup(s);
    if (!out)
        return NULL;
    for (char *p = out; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return out;
}

#ifdef FLOE_HAVE_ICU
/* s folded through ICU, or NULL when ICU refuses it (not UTF-8) or on OOM. */
static char *fold_icu(const char *s) {
    size_t n = strlen(s);
    /* n UTF-8 bytes are at most n UTF-16 units; decomposing and folding may each triple. */
    if (n > ((size_t)INT32_MAX - 16) / 9)
        return NULL;
    int32_t cap = (int32_t)n * 9 + 16;
    UChar *a = floe_malloc((size_t)cap * sizeof *a), *b = floe_malloc((size_t)cap * sizeof *b);
    char *out = NULL;
    UErrorCode st = U_ZERO_ERROR;
    int32_t la = 0, lb = 0, lo = 0;
    const UNormalizer2 *nfd = NULL, *nfc = NULL;
    if (!a || !b)
        goto done;
    nfd = unorm2_getNFDInstance(&st);
    if (U_SUCCESS(st))
        nfc = unorm2_getNFCInstance(&st);
    if (U_SUCCESS(st))
        u_strFromUTF8(a, cap, &la, s, (int32_t)n, &st);
    if (U_SUCCESS(st))
        lb = unorm2_normalize(nfd, a, la, b, cap, &st);
    if (U_SUCCESS(st))
        la = u_strFoldCase(a, cap, b, lb, U_FOLD_CASE_DEFAULT, &st);
    if (U_SUCCESS(st))
        lb = unorm2_normalize(nfc, a, la, b, cap, &st);
    if (U_FAILURE(st))
        goto done;
    out = floe_malloc((size_t)lb * 3 + 1);
    if (!out)
        goto done;
    u_strToUTF8(out, lb * 3 + 1, &lo, b, lb, &st);
    if (U_FAILURE(st)) {
        floe_free(out);
        out = NULL;
    }
done:
    floe_free(a);
    floe_free(b);
    return out;
}
#endif

char *floe_fold_name(const char *s) {
#ifdef FLOE_HAVE_ICU
    char *f = fold_icu(s);
    if (f)
        return f;
#endif
    return fold_ascii(s);
}

bool floe_fold_unicode(void) {
#ifdef FLOE_HAVE_ICU
    return true;
#else
    return false;
#endif
}
