/*
 * lazy_icu.h - ICU's libicuuc, loaded when first called (see common/lazylib.h); built
 * with ICU only (FLOE_HAVE_ICU).
 *
 * libicuuc (with libicudata, libstdc++ and libgcc_s behind it) was loaded and relocated
 * at every command's start, though only placing a table or namespace folds a name
 * (common/fold.c). ICU's headers rename its functions by version (u_strFoldCase is
 * u_strFoldCase_72, the major version U_ICU_VERSION_MAJOR_NUM): the members below are
 * those macros expanded, and lazylib.c looks up the expanded names, so the table matches
 * the library the headers belong to. Call through the table floe_lazy_icu(err) returns.
 */
#ifndef FLOE_LAZY_ICU_H
#define FLOE_LAZY_ICU_H

#ifdef FLOE_HAVE_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "common/lazylib.h"

#define FLOE_LAZY_ICU_FNS(X) \
    X(unorm2_getNFDInstance) \
    X(unorm2_getNFCInstance) \
    X(unorm2_normalize) \
    X(u_strFromUTF8) \
    X(u_strFoldCase) \
    X(u_strToUTF8)

typedef struct floe_lazy_icu_fns {
    FLOE_LAZY_ICU_FNS(FLOE_LAZY_MEMBER)
} floe_lazy_icu_fns;

/* The table, libicuuc loaded on the first call (thread-safe); NULL when it cannot be,
 * with err (if non-NULL) set to FLOE_EUNSUPPORTED and a message naming the library, what
 * needs it and why it did not load (the same for every caller). */
const floe_lazy_icu_fns *floe_lazy_icu(floe_error *err);
/* The loaded table (aborts as a bug when floe_lazy_icu has not loaded it). */
const floe_lazy_icu_fns *floe_lazy_icu_table(void);
#endif

#endif
