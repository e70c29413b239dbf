/*
 * fold.c - names folded as a case-insensitive filesystem compares them (fold.h).
 *
 * With ICU: UTF-8 to UTF-16, NFD, u_strFoldCase (Unicode default case folding, the
 * folding APFS and NTFS approximate), NFC, back to UTF-8: Unicode's canonical caseless
 * match (D145), so a precomposed letter and its decomposed form, which APFS and HFS+ take
 * for one name, fold alike. The NFD before folding matters: folding turns some combining
 * marks into letters (U+0345 into U+03B9), so marks out of canonical order, folded first,
 * would attach to different letters in two canonically equal names. libicuuc is loaded on
 * the first fold (common/lazy_icu.h); when it cannot be, the fold is an error, never a
 * quiet ASCII fold (it would miss names macOS takes for one). Built without ICU, ASCII only:
 * the fold is conservative (names differing by a non-ASCII letter's case are not
 * caught), never wrong about ASCII.
 */
#include "common/fold.h"

#include <stdint.h>
#include <string.h>

#include "floe/common.h"

#include "common/lazy_icu.h"

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
/* s folded through ICU (table I), or NULL when ICU refuses it (not UTF-8) or on OOM. */
static char *fold_icu(const floe_lazy_icu_fns *I, const char *s) {
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
    nfd = I->unorm2_getNFDInstance(&st);
    if (U_SUCCESS(st))
        nfc = I->unorm2_getNFCInstance(&st);
    if (U_SUCCESS(st))
        I->u_strFromUTF8(a, cap, &la, s, (int32_t)n, &st);
    if (U_SUCCESS(st))
        lb = I->unorm2_normalize(nfd, a, la, b, cap, &st);
    if (U_SUCCESS(st))
        la = I->u_strFoldCase(a, cap, b, lb, U_FOLD_CASE_DEFAULT, &st);
    if (U_SUCCESS(st))
        lb = I->unorm2_normalize(nfc, a, la, b, cap, &st);
    if (U_FAILURE(st))
        goto done;
    out = floe_malloc((size_t)lb * 3 + 1);
    if (!out)
        goto done;
    I->u_strToUTF8(out, lb * 3 + 1, &lo, b, lb, &st);
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

int floe_fold_name(const char *s, char **out, floe_error *err) {
    char *f = NULL;
#ifdef FLOE_HAVE_ICU
    const floe_lazy_icu_fns *I = floe_lazy_icu(err);
    if (!I)
        return err ? err->code : FLOE_EUNSUPPORTED;
    f = fold_icu(I, s);
#endif
    if (!f && !(f = fold_ascii(s)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    *out = f;
    return 0;
}

bool floe_fold_unicode(void) {
#ifdef FLOE_HAVE_ICU
    return true;
#else
    return false;
#endif
}
