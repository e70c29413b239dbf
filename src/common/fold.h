/*
 * fold.h - names as a case-insensitive, normalization-insensitive filesystem sees them
 * (macOS APFS and HFS+, Windows NTFS): two names whose folds are equal are one folder
 * there. Private to floe's library.
 */
#ifndef FLOE_COMMON_FOLD_H
#define FLOE_COMMON_FOLD_H

#include <stdbool.h>

#include "floe/common.h"

/* *out = the fold of UTF-8 text s (caller frees with floe_free): Unicode default case
 * folding then NFC with ICU (FLOE_HAVE_ICU), else ASCII letters lowered and every other
 * byte kept; text that is not UTF-8 folds byte for byte as without ICU. ICU's libicuuc
 * is loaded on the first fold (common/lazy_icu.h). 0, or (*out untouched) FLOE_ENOMEM, or
 * FLOE_EUNSUPPORTED when libicuuc cannot be loaded (err names it; a build with ICU never
 * folds ASCII only instead: it would let two folders through that macOS takes for one). */
int floe_fold_name(const char *s, char **out, floe_error *err);
/* True when floe_fold_name takes Unicode case and normalization into account (built
 * with ICU), false when it folds ASCII letters only. */
bool floe_fold_unicode(void);

#endif
