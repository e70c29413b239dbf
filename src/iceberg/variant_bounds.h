/*
 * variant_bounds.h - Iceberg bounds of a variant column (format/spec.md "Bounds for
 * Variant", Appendix D): each bound is a variant (metadata then value) whose value is an
 * object keyed by the normalized JSON paths of fields inside the variant, each holding the
 * lower or upper bound of that field as a variant primitive. Built from a data file's
 * shredded typed_value statistics (manifest_metrics.c) and read back when scan planning
 * prunes a predicate on a path inside a variant (scan_expr.c). Private to src/iceberg
 * (and src/table's footer pruning, which shares the comparison rules).
 */
#ifndef FLOE_ICEBERG_VARIANT_BOUNDS_H
#define FLOE_ICEBERG_VARIANT_BOUNDS_H

#include "floe/manifest.h"
#include "floe/schema.h"

struct floe_expr;

/* One path's bounds as the Parquet writer reports its typed_value column: the PLAIN
 * encoding of the file's minimum and maximum (either may be absent: NULL). */
typedef struct floe_vbound_field {
    const char *path;           /* normalized JSON path, "$['user']['country']" */
    floe_type_id type;          /* the typed_value's: BOOLEAN, INT, LONG, DOUBLE, STRING */
    const uint8_t *lo, *hi;
    size_t lo_len, hi_len;
} floe_vbound_field;

/* Append to out the lower (upper false) or upper bound of a variant whose fields
 * fs[0..n) qualify (the caller's duty: each path is not under an array and every
 * non-null value at it is of the field's type; the paths are unique). fs is sorted by
 * path. Values: boolean -> true/false, INT -> int32, LONG -> int64, DOUBLE -> double
 * (none when NaN), STRING -> a string truncated as m says for strings (a lower bound to
 * a prefix, an upper bound to an incremented prefix, none when it cannot be); other types
 * get none. Returns 1 when written, 0 when no field has this bound (out untouched),
 * FLOE_ENOMEM / FLOE_ELIMIT. */
int floe_variant_bound_build(floe_vbound_field *fs, size_t n, bool upper,
                             floe_metrics_mode m, floe_buf *out, floe_error *err);

/* A bound value read back, of the kinds pruning compares. */
typedef enum floe_vbound_kind {
    FLOE_VB_STRING = 1,
    FLOE_VB_INT,                /* int8, int16, int32, int64: one equivalence class */
    FLOE_VB_BOOL,
} floe_vbound_kind;

typedef struct floe_vbound {
    floe_vbound_kind kind;
    const uint8_t *s;           /* STRING: borrowed from the bound */
    size_t n;
    int64_t i;                  /* INT; BOOL: 0 or 1 */
} floe_vbound;

/* The value path[0..plen) holds in the variant bound p[0..n): 1 with *out set; 0 when the
 * bound has no such field, is not a valid variant object, or holds another type. */
int floe_variant_bound_get(const uint8_t *p, size_t n, const char *path, size_t plen,
                           floe_vbound *out);

/* May a value at variant predicate e's path satisfy e, when every non-null value there
 * is of one type and lies within [lo, hi] (NULL: unbounded on that side; bounds of two
 * kinds: no verdict)? Prunes =, !=, <, <=, >, >= and LIKE 'prefix%' with a 'string'
 * literal on strings; the same but LIKE with an integer literal on integers; = and !=
 * with true/false on booleans. Anything else may match. */
bool floe_variant_range_may(const struct floe_expr *e, const floe_vbound *lo,
                            const floe_vbound *hi);

/* manifest_metrics.c: a string (utf8) or binary bound p[0..n) as metrics mode m keeps it
 * (truncate(N): to N code points / bytes, an upper bound incremented), appended to out.
 * 1 when written, 0 when an upper bound cannot be shortened, FLOE_ENOMEM. */
int floe_metrics_truncate_bound(const uint8_t *p, size_t n, bool utf8, bool upper,
                                floe_metrics_mode m, floe_buf *out);

#endif
