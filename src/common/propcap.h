/*
 * common/propcap.h - the caps on the properties of a table or a namespace (docs/DESIGN.md,
 * "Property caps"). Internal to the library (not installed).
 *
 * Properties live in the table's metadata file (a namespace's in its catalog) and are
 * read whole by every load: without a cap, four 15 MB set-properties through floe
 * catalog serve made a 60 MB metadata file that every load parsed into gigabytes. A
 * change may leave at most FLOE_PROPCAP_COUNT properties of at most FLOE_PROPCAP_BYTES of
 * keys and values together, and set no value longer than FLOE_PROPCAP_VALUE. Caps hold
 * changes that grow, never reading: properties already past a cap (another writer's)
 * load, and a change that does not make the count or the bytes larger is taken.
 */
#ifndef FLOE_COMMON_PROPCAP_H
#define FLOE_COMMON_PROPCAP_H

#include <stddef.h>

#include "floe/common.h"

#define FLOE_PROPCAP_COUNT 1000                /* properties */
#define FLOE_PROPCAP_BYTES ((size_t)1 << 20)   /* keys + values, 1 MiB */
#define FLOE_PROPCAP_VALUE ((size_t)256 << 10) /* one value, 256 KiB */

/* How many properties and how many bytes of keys and values. */
typedef struct floe_propcap_tally {
    size_t count;
    size_t bytes;
} floe_propcap_tally;

/* One value set for key: FLOE_ELIMIT naming owner ("table", "namespace ns"), the key,
 * the value's size and the cap when it is longer than FLOE_PROPCAP_VALUE. */
int floe_propcap_value(const char *owner, const char *key, size_t value_len,
                       floe_error *err) FLOE_NODISCARD;

/* A change that takes the properties from `before` to `after`: FLOE_ELIMIT when after
 * passes a cap that before did not already pass as far (count, then bytes); the message
 * names owner, key (a key the change sets, for the reader; may be NULL), the sizes and
 * the cap. */
int floe_propcap_totals(const char *owner, const char *key, floe_propcap_tally before,
                        floe_propcap_tally after, floe_error *err) FLOE_NODISCARD;

/* The properties have[0..nhave) (keys hk, values hv) after removing rm[0..nrm) and
 * setting set[0..nset) (keys sk, values sv; a later duplicate wins) held to the caps:
 * every value set by floe_propcap_value, the result by floe_propcap_totals. hv and sv
 * may hold NULL for absent values (counted as empty). 0, FLOE_ELIMIT, FLOE_ENOMEM. */
int floe_propcap_check(const char *owner, const char *const *hk, const char *const *hv,
                       size_t nhave, const char *const *rm, size_t nrm, const char *const *sk,
                       const char *const *sv, size_t nset, floe_error *err) FLOE_NODISCARD;

#endif
