/*
 * keyset.c - a set of byte strings with an int64 payload (see common/keyset.h).
 */
#include "common/keyset.h"

#include <string.h>

#define DEFAULT_MAX_KEY_BYTES (1u << 30)

static uint64_t key_hash(const void *p, size_t n) {
    uint64_t h = floe_fnv1a(p, n, FLOE_FNV1A_SEED);
    h ^= h >> 29; /* FNV's low bits, which pick the slot, mix poorly */
    return h ? h : 1;
}

uint64_t floe_keyset_hash(const void *p, size_t n) { return key_hash(p, n); }

void floe_keyset_prefetch(const floe_keyset *s, uint64_t h) {
    if (!s->cap)
        return;
    size_t i = h & (s->cap - 1);
    __builtin_prefetch(&s->hash[i]);
    __builtin_prefetch(&s->off[i]);
    __builtin_prefetch(&s->len[i]);
    __builtin_prefetch(&s->val[i]);
}

void floe_keyset_free(floe_keyset *s) {
    floe_free(s->hash);
    floe_free(s->off);
    floe_free(s->len);
    floe_free(s->val);
    floe_buf_free(&s->keys);
    size_t max = s->max_key_bytes;
    memset(s, 0, sizeof *s);
    s->max_key_bytes = max;
}

/* The first empty slot of an open-addressed table of cap (a power of two) hash slots, probing
 * linearly from h's home slot; the table must have one. */
static size_t free_slot(const uint64_t *hash, size_t cap, uint64_t h) {
    size_t i = h & (cap - 1);
    while (hash[i])
        i = (i + 1) & (cap - 1);
    return i;
}

static int64_t *find_hashed(const floe_keyset *s, uint64_t h, const void *p, size_t n) {
    if (!s->cap)
        return NULL;
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->hash[i])
            return NULL;
        if (s->hash[i] == h && s->len[i] == n && !memcmp(s->keys.data + s->off[i], p, n))
            return &s->val[i];
    }
}

int64_t *floe_keyset_find(const floe_keyset *s, const void *p, size_t n) {
    return find_hashed(s, key_hash(p, n), p, n);
}

int64_t *floe_keyset_find_hash(const floe_keyset *s, uint64_t h, const void *p, size_t n) {
    return find_hashed(s, h, p, n);
}

static int grow_to(floe_keyset *s, size_t nc) {
    uint64_t *nh = floe_calloc(nc, sizeof *nh);
    uint32_t *no = floe_malloc(nc * sizeof *no);
    uint32_t *nl = floe_malloc(nc * sizeof *nl);
    int64_t *nv = floe_malloc(nc * sizeof *nv);
    if (!nh || !no || !nl || !nv) {
        floe_free(nh);
        floe_free(no);
        floe_free(nl);
        floe_free(nv);
        return FLOE_ENOMEM;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->hash[i])
            continue;
        size_t j = free_slot(nh, nc, s->hash[i]);
        nh[j] = s->hash[i];
        no[j] = s->off[i];
        nl[j] = s->len[i];
        nv[j] = s->val[i];
    }
    floe_free(s->hash);
    floe_free(s->off);
    floe_free(s->len);
    floe_free(s->val);
    s->hash = nh;
    s->off = no;
    s->len = nl;
    s->val = nv;
    s->cap = nc;
    return 0;
}

static int grow(floe_keyset *s) { return grow_to(s, s->cap ? s->cap * 2 : 256); }

int floe_keyset_reserve(floe_keyset *s, size_t nkeys) {
    size_t nc = s->cap ? s->cap : 256;
    if (nkeys > SIZE_MAX / 8 - s->n)
        return FLOE_ENOMEM;
    while ((s->n + nkeys) * 4 > nc * 3)
        nc *= 2;
    return nc == s->cap ? 0 : grow_to(s, nc);
}

int floe_keyset_put(floe_keyset *s, const void *p, size_t n, int64_t val, int64_t **slot) {
    uint64_t h = key_hash(p, n);
    int64_t *f = find_hashed(s, h, p, n);
    if (f) {
        if (slot)
            *slot = f;
        return 0;
    }
    size_t max = s->max_key_bytes ? s->max_key_bytes : DEFAULT_MAX_KEY_BYTES;
    if (max > UINT32_MAX)
        max = UINT32_MAX; /* offsets are 32-bit */
    if (n > max || s->keys.len > max - n)
        return FLOE_ELIMIT;
    if ((s->n + 1) * 4 > s->cap * 3) {
        int rc = grow(s);
        if (rc < 0)
            return rc;
    }
    if (!s->keys.data && s->keys.max == 0)
        floe_buf_init(&s->keys, 0); /* zero-initialised sets start here */
    size_t off = s->keys.len;
    if (floe_buf_append(&s->keys, n ? p : (const void *)"", n) < 0)
        return FLOE_ENOMEM;
    size_t i = free_slot(s->hash, s->cap, h);
    s->hash[i] = h;
    s->off[i] = (uint32_t)off;
    s->len[i] = (uint32_t)n;
    s->val[i] = val;
    s->n++;
    if (slot)
        *slot = &s->val[i];
    return 0;
}

int floe_pairs_first_repeat(const char *const *a, const char *const *b, size_t n, size_t *dup,
                            size_t *first) {
    floe_keyset set = {0};
    floe_buf key;
    floe_buf_init(&key, 0);
    size_t found = n, earlier = n;
    int rc = floe_keyset_reserve(&set, n);
    for (size_t i = 0; rc == 0 && i < n && found == n; i++) {
        floe_buf_reset(&key);
        /* a's NUL ends it: ("a.b", "c") and ("a", "b.c") stay apart */
        if (floe_buf_append(&key, a[i], strlen(a[i]) + 1) < 0 ||
            floe_buf_append(&key, b[i], strlen(b[i])) < 0) {
            rc = FLOE_ENOMEM;
            break;
        }
        size_t before = set.n;
        int64_t *slot = NULL;
        rc = floe_keyset_put(&set, key.data, key.len, (int64_t)i, &slot);
        if (rc == 0 && set.n == before) {
            found = i;
            earlier = (size_t)*slot;
        }
    }
    floe_buf_free(&key);
    floe_keyset_free(&set);
    if (rc < 0)
        return rc;
    *dup = found;
    if (first)
        *first = earlier;
    return 0;
}

/* ---- sets of hashes ----------------------------------------------------------------- */

uint64_t floe_hash64(const void *p, size_t n) {
    const uint8_t *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (; n >= 8; b += 8, n -= 8)
        h = (h ^ floe_mix64(floe_load_le64(b))) * 0x100000001b3ull + 0x632be59bd9b4e019ull;
    uint64_t tail = 0;
    for (size_t i = 0; i < n; i++)
        tail |= (uint64_t)b[i] << (8 * i);
    return floe_mix64(h ^ floe_mix64(tail ^ 0xa0761d6478bd642full));
}

void floe_hashset_free(floe_hashset *s) {
    floe_free(s->slot);
    memset(s, 0, sizeof *s);
}

static int hashset_grow_to(floe_hashset *s, size_t nc) {
    /* a plan's million paths: 32 MB probed at random, so in huge pages past 4 MB */
    size_t bytes = nc * sizeof(floe_hashslot);
    floe_hashslot *ns = bytes >= FLOE_HUGE_MIN ? floe_alloc_huge(bytes) : floe_malloc(bytes);
    if (!ns)
        return FLOE_ENOMEM;
    memset(ns, 0, bytes);
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slot[i].hash)
            continue;
        size_t j = s->slot[i].hash & (nc - 1);
        while (ns[j].hash)
            j = (j + 1) & (nc - 1);
        ns[j] = s->slot[i];
    }
    floe_free(s->slot);
    s->slot = ns;
    s->cap = nc;
    return 0;
}

int floe_hashset_reserve(floe_hashset *s, size_t n) {
    size_t nc = s->cap ? s->cap : 64;
    while (nc / 2 < n) { /* load at most one half */
        if (nc > SIZE_MAX / 2 / sizeof(uint64_t))
            return FLOE_ENOMEM;
        nc *= 2;
    }
    return nc == s->cap ? 0 : hashset_grow_to(s, nc);
}

int floe_hashset_add(floe_hashset *s, uint64_t h, int64_t val) {
    if (s->n + 1 > s->cap / 2) {
        int rc = floe_hashset_reserve(s, s->n + 1 > 32 ? (s->n + 1) * 2 : 32);
        if (rc < 0)
            return rc;
    }
    h = h ? h : 1;
    size_t i = h & (s->cap - 1);
    while (s->slot[i].hash)
        i = (i + 1) & (s->cap - 1);
    s->slot[i].hash = h;
    s->slot[i].val = val;
    s->n++;
    return 0;
}

const int64_t *floe_hashset_next(const floe_hashset *s, uint64_t h, size_t *pos) {
    if (!s->cap)
        return NULL;
    h = h ? h : 1;
    /* *pos counts the slots already probed from h's home slot */
    for (size_t k = *pos; k < s->cap; k++) {
        size_t i = (h + k) & (s->cap - 1);
        if (!s->slot[i].hash)
            return NULL;
        if (s->slot[i].hash == h) {
            *pos = k + 1;
            return &s->slot[i].val;
        }
    }
    return NULL;
}
