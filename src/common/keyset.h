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
    uint64_t *hash;       /* floe_keyset_hash of the slot's key; 0 = empty slot */
    uint32_t *off;        /* offset of the key in keys */
    uint32_t *len;
    int64_t *val;
    size_t cap, n;
    size_t max_key_bytes; /* 0: 1 GiB */
    floe_buf keys;
} floe_keyset;

/* A 64-bit finaliser (murmur3's fmix64): every bit of h moves about half of the result's. */
static inline uint64_t floe_mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

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
/* The hash floe_keyset_find computes of (p, n); floe_keyset_find_hash finds (p, n) by it
 * (h must be floe_keyset_hash(p, n)), and floe_keyset_prefetch starts loading the slot
 * arrays where that search begins: a caller probing many keys fetches the slots of the
 * next ones while it compares this one. */
uint64_t floe_keyset_hash(const void *p, size_t n);
int64_t *floe_keyset_find_hash(const floe_keyset *s, uint64_t h, const void *p, size_t n);
void floe_keyset_prefetch(const floe_keyset *s, uint64_t h);
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

/* The first i whose pair (a[i], b[i]) equals an earlier pair (j < i): *dup = i (and
 * *first = j when first is not NULL), or *dup = n when all n pairs differ. Hashed:
 * linear in n (a table named twice in one commit). 0, FLOE_ENOMEM or FLOE_ELIMIT. */
int floe_pairs_first_repeat(const char *const *a, const char *const *b, size_t n, size_t *dup,
                            size_t *first);

/* ---- sets of hashes over keys the caller holds ---------------------------------------- */

/* A 64-bit hash of p[0..n), eight bytes at a time (not FNV's byte at a time): for sets
 * of many long keys, such as a plan's data file paths. Not a cryptographic hash. */
uint64_t floe_hash64(const void *p, size_t n);

/* A multiset of 64-bit hashes, each with an int64 payload. The keys stay with the caller,
 * who tells equal hashes of different keys apart by comparing its own keys: 16 bytes a
 * slot, whatever the keys' length. Zero-initialise before use; not thread-safe. */
typedef struct floe_hashslot {
    uint64_t hash; /* 0 = empty slot (a hash of 0 is stored as 1) */
    int64_t val;
} floe_hashslot;
typedef struct floe_hashset {
    floe_hashslot *slot; /* a hash and its payload side by side: one cache line a probe */
    size_t cap, n;
} floe_hashset;

void floe_hashset_free(floe_hashset *s);
/* Room for n entries in all without growing. FLOE_ENOMEM leaves the set as it was. */
int floe_hashset_reserve(floe_hashset *s, size_t n);
/* Add h -> val (even when h is there already). FLOE_ENOMEM. */
int floe_hashset_add(floe_hashset *s, uint64_t h, int64_t val);
/* The payloads stored under h, one a call: start with *pos = 0; NULL when no more. The
 * pointers stay valid until the next add. */
const int64_t *floe_hashset_next(const floe_hashset *s, uint64_t h, size_t *pos);

#endif
