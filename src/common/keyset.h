/*
 * common/keyset.h - a set of byte strings, each with an int64 payload: open addressing,
 * linear probing, FNV-1a hashes. Internal to the library (not installed).
 *
 * Keys are copied into the set's own buffer; a set holds at most max_key_bytes of keys
 * (1 GiB when 0) and answers FLOE_ELIMIT past it. Zero-initialise a set before use; it is
 * not thread-safe.
 */
#ifndef FLOE_COMMON_KEYSET_H
#define FLOE_COMMON_KEYSET_H

#include "floe/common.h"

#include <stdint.h>

typedef struct floe_keyset {
    uint64_t *hash;       /* 0 = empty slot */
    uint32_t *off;        /* offset of the key in keys */
    uint32_t *len;
    int64_t *val;
    size_t cap, n;
    size_t max_key_bytes; /* 0: 1 GiB */
    floe_buf keys;
} floe_keyset;

/* FNV-1a of p[0..n), continuing from h (start with FLOE_FNV1A_SEED). */
#define FLOE_FNV1A_SEED 14695981039346656037ull
static inline uint64_t floe_fnv1a(const void *p, size_t n, uint64_t h) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

void floe_keyset_free(floe_keyset *s);
/* The payload of key (p, n), or NULL when absent. */
int64_t *floe_keyset_find(const floe_keyset *s, const void *p, size_t n);
/* Insert (p, n) -> val unless present; *slot (may be NULL) gets the payload of the key,
 * new or old (s->n tells whether it was added). FLOE_ENOMEM, FLOE_ELIMIT. */
int floe_keyset_put(floe_keyset *s, const void *p, size_t n, int64_t val, int64_t **slot);
/* Slots for nkeys more keys without growing (more still fit, at the cost of growing): a
 * set about to take many keys rehashes once. FLOE_ENOMEM leaves the set as it was. */
int floe_keyset_reserve(floe_keyset *s, size_t nkeys);
/* Key i of the slot array (for iteration over slots with hash[i] != 0). */
static inline const uint8_t *floe_keyset_key(const floe_keyset *s, size_t i) {
    return s->keys.data + s->off[i];
}

#endif
