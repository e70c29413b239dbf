/*
 * writer_dict.c - the dictionary of a Parquet column chunk being written.
 */
#include <string.h>

#include "common/keyset.h"
#include "parquet/writer_internal.h"

/* a[0..n) == b[0..n) without a library call for n <= 16 (dictionary hits on short
 * strings): overlapping loads inside both ranges. */
static inline bool eq_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n >= 8) {
        if (n > 16)
            return memcmp(a, b, n) == 0;
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&b0, b, 8);
        memcpy(&a1, a + n - 8, 8);
        memcpy(&b1, b + n - 8, 8);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    if (n >= 4) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4);
        memcpy(&b0, b, 4);
        memcpy(&a1, a + n - 4, 4);
        memcpy(&b1, b + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* =====================================================================================
 * Dictionary (open addressing, linear probing, load <= 3/4)
 * =================================================================================== */

static inline uint32_t hash64(uint64_t v) { return (uint32_t)floe_mix64(v); }

/* The tail (< 8 bytes) is read with at most two overlapping fixed-size loads: a memcpy of
 * a variable length would be a library call plus a store-forwarding stall per value. */
static inline uint32_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    size_t len = n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v;
        if (len >= 8) { /* the last 8 bytes, overlapping the previous word */
            memcpy(&v, p + n - 8, 8);
        } else if (n >= 4) {
            uint32_t lo, hi;
            memcpy(&lo, p, 4);
            memcpy(&hi, p + n - 4, 4);
            v = (uint64_t)hi << 32 | lo;
        } else {
            v = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
        }
        h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
    }
    /* one multiply to finish (the words were multiplied in already): fold the high bits
     * down before and after it, since the table index takes the low bits. The hash
     * decides slots only; dictionary order is first occurrence, so output bytes do not
     * depend on it. */
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h ^ (h >> 32));
}

#define DICT_PREFETCH 8 /* values looked up ahead: hides the miss on the slot */

static inline uint64_t small_key(const col *c, const uint8_t *v) {
    return c->width == 4 ? floe_load_le32(v) : floe_load_le64(v);
}

/* The new table is zeroed with memset, not calloc: calloc'd large blocks are fresh pages
 * that the probes below first read (mapping the shared zero page) and then write, and
 * each such copy-on-write flushes the TLB of every thread of the process (an IPI per
 * page; 3% of a 2-thread convert). Writing first maps each page once. */
/* A table of n bytes: from 2 MiB on in huge pages. Every page of a table is touched (the
 * hash spreads the entries), and each is fresh memory (a table twice the size of all the
 * smaller ones freed before it); in 4 KiB pages a column of 80,000 distinct longs cost
 * 2,000 page faults for its last two tables. */
#define DICT_TABLE_HUGE ((size_t)2 << 20)
static void *table_alloc(size_t n) {
    return n >= DICT_TABLE_HUGE ? floe_alloc_huge(n) : floe_malloc(n);
}

static int dict_grow_table(col *c) {
    size_t ns = c->nslots ? c->nslots * 2 : 64; /* small: a wide schema has many */
    if (c->small_keys) {
        struct kslot *ks = table_alloc(ns * sizeof *ks);
        if (!ks)
            return FLOE_ENOMEM;
        memset(ks, 0, ns * sizeof *ks);
        size_t mask = ns - 1;
        for (size_t e = 0; e < c->ndict; e++) {
            uint64_t key = small_key(c, c->dplain.data + c->doff[e]);
            size_t i = hash64(key) & mask;
            while (ks[i].idx1)
                i = (i + 1) & mask;
            ks[i].key = key;
            ks[i].idx1 = (uint32_t)(e + 1);
        }
        floe_free(c->kslots);
        c->kslots = ks;
        c->nslots = ns;
        return 0;
    }
    uint64_t *slots = table_alloc(ns * sizeof *slots);
    if (!slots)
        return FLOE_ENOMEM;
    memset(slots, 0, ns * sizeof *slots);
    size_t mask = ns - 1;
    for (size_t e = 0; e < c->ndict; e++) {
        size_t i = c->dhash[e] & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint64_t)c->dhash[e] << 32 | (uint32_t)(e + 1);
    }
    floe_free(c->slots);
    c->slots = slots;
    c->nslots = ns;
    return 0;
}

static int dict_reserve_entry(col *c) {
    if (c->ndict >= UINT32_MAX - 1)
        return FLOE_ELIMIT;
    if (c->ndict == c->dict_cap) {
        size_t nc = c->dict_cap ? c->dict_cap * 2 : 256;
        uint32_t *h = floe_realloc(c->dhash, nc * sizeof *h);
        if (!h)
            return FLOE_ENOMEM;
        c->dhash = h;
        uint32_t *o = floe_realloc(c->doff, nc * sizeof *o);
        if (!o)
            return FLOE_ENOMEM;
        c->doff = o;
        if (c->track_entries) {
            uint32_t *st = floe_realloc(c->dstamp, nc * sizeof *st);
            if (!st)
                return FLOE_ENOMEM;
            c->dstamp = st;
        }
        c->dict_cap = nc;
    }
    if (c->track_entries)
        c->dstamp[c->ndict] = 0; /* the entry about to be added: no page uses it yet */
    if ((c->ndict + 1) * 4 > c->nslots * 3)
        return dict_grow_table(c);
    return 0;
}

/* Index of the fixed-width value v (width bytes), inserting it if new. */
static inline int dict_fixed(col *c, const uint8_t *v, size_t width, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            break;
        uint32_t e = (uint32_t)s - 1;
        if ((uint32_t)(s >> 32) == h && eq_bytes(c->dplain.data + c->doff[e], v, width)) {
            *idx = e;
            return 0;
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) { /* table grew: find the empty slot again */
        mask = c->nslots - 1;
        i = h & mask;
        while (c->slots[i])
            i = (i + 1) & mask;
    }
    if (c->dplain.len > UINT32_MAX - width)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = h;
    c->doff[e] = (uint32_t)c->dplain.len;
    if ((rc = floe_buf_append(&c->dplain, v, width)) < 0)
        return rc;
    c->slots[i] = (uint64_t)h << 32 | (e + 1);
    *idx = e;
    return 0;
}

/* Index of a 4- or 8-byte value (key = its bits), inserting it if new. */
static inline int dict_small(col *c, const uint8_t *v, uint64_t key, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        const struct kslot *k = &c->kslots[i];
        if (!k->idx1)
            break;
        if (k->key == key) {
            *idx = k->idx1 - 1;
            return 0;
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) {
        mask = c->nslots - 1;
        i = h & mask;
        while (c->kslots[i].idx1)
            i = (i + 1) & mask;
    }
    size_t width = (size_t)c->width;
    if (c->dplain.len > UINT32_MAX - width)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = 0;
    c->doff[e] = (uint32_t)c->dplain.len;
    if ((rc = floe_buf_append(&c->dplain, v, width)) < 0)
        return rc;
    c->kslots[i].key = key;
    c->kslots[i].idx1 = e + 1;
    *idx = e;
    return 0;
}

static inline int dict_bytes(col *c, const uint8_t *v, size_t n, uint32_t h, uint32_t *idx) {
    size_t mask = c->nslots - 1;
    size_t i = h & mask;
    for (;;) {
        uint64_t s = c->slots[i];
        if (!s)
            break;
        uint32_t e = (uint32_t)s - 1;
        if ((uint32_t)(s >> 32) == h) {
            const uint8_t *d = c->dplain.data + c->doff[e];
            if (floe_load_le32(d) == n && eq_bytes(d + 4, v, n)) {
                *idx = e;
                return 0;
            }
        }
        i = (i + 1) & mask;
    }
    int rc = dict_reserve_entry(c);
    if (rc < 0)
        return rc;
    if (c->nslots - 1 != mask) {
        mask = c->nslots - 1;
        i = h & mask;
        while (c->slots[i])
            i = (i + 1) & mask;
    }
    if (c->dplain.len > UINT32_MAX - 4 - n)
        return FLOE_ELIMIT;
    uint32_t e = (uint32_t)c->ndict++;
    c->dhash[e] = h;
    c->doff[e] = (uint32_t)c->dplain.len;
    uint8_t lenb[4];
    floe_store_le32(lenb, (uint32_t)n);
    if ((rc = floe_buf_append(&c->dplain, lenb, 4)) < 0 ||
        (n && (rc = floe_buf_append(&c->dplain, v, n)) < 0))
        return rc;
    c->slots[i] = (uint64_t)h << 32 | (e + 1);
    *idx = e;
    return 0;
}

/* The PLAIN bytes of dictionary entry e (without the length prefix of byte arrays). */
static inline const uint8_t *dict_entry(const col *c, uint32_t e, size_t *n) {
    const uint8_t *d = c->dplain.data + c->doff[e];
    if (c->phys == FLOE_PHYS_BYTE_ARRAY) {
        *n = floe_load_le32(d);
        return d + 4;
    }
    *n = (size_t)c->width;
    return d;
}

/* Dictionary indices of the nv fixed-width values v into out[0..nv), adding new values. */
int pqw_dict_add_fixed(col *c, const uint8_t *v, size_t nv, uint32_t *out) {
    size_t w = (size_t)c->width;
    int rc;
    if (c->nslots == 0 && (rc = dict_grow_table(c)) < 0)
        return rc;
    if (w == 4 || w == 8) {
        /* hash a few values ahead and prefetch their slots: large dictionaries (ids,
         * prices) miss the cache on nearly every lookup otherwise. A value equal to the
         * one before it (runs: a file number, a date) takes its index without a hash or a
         * probe; its slot in hs is left unset and never read. */
        uint32_t hs[DICT_PREFETCH];
        for (size_t k = 0; k < DICT_PREFETCH && k < nv; k++) {
            hs[k] = hash64(small_key(c, v + k * w));
            __builtin_prefetch(&c->kslots[hs[k] & (c->nslots - 1)]);
        }
        uint64_t prev = 0;
        for (size_t i = 0; i < nv; i++) {
            uint64_t key = small_key(c, v + i * w);
            if (i > 0 && key == prev)
                out[i] = out[i - 1];
            else if ((rc = dict_small(c, v + i * w, key, hs[i % DICT_PREFETCH], &out[i])) < 0)
                return rc;
            size_t ahead = i + DICT_PREFETCH;
            if (ahead < nv) {
                uint64_t ak = small_key(c, v + ahead * w);
                if (ak != small_key(c, v + (ahead - 1) * w)) {
                    uint32_t h = hash64(ak);
                    hs[ahead % DICT_PREFETCH] = h;
                    __builtin_prefetch(&c->kslots[h & (c->nslots - 1)]);
                }
            }
            prev = key;
        }
    } else {
        for (size_t i = 0; i < nv; i++)
            if ((rc = dict_fixed(c, v + i * w, w, hash_bytes(v + i * w, w), &out[i])) < 0)
                return rc;
    }
    return 0;
}

/* Dictionary indices of the nv byte arrays data[off[i]..off[i+1]) into out[0..nv),
 * adding new values. */
int pqw_dict_add_bytes(col *c, const uint8_t *data, const uint32_t *off, size_t nv,
                       uint32_t *out) {
    int rc;
    if (c->nslots == 0 && (rc = dict_grow_table(c)) < 0)
        return rc;
    uint32_t hs[DICT_PREFETCH];
    for (size_t k = 0; k < DICT_PREFETCH && k < nv; k++) {
        hs[k] = hash_bytes(data + off[k], off[k + 1] - off[k]);
        __builtin_prefetch(&c->slots[hs[k] & (c->nslots - 1)]);
    }
    for (size_t i = 0; i < nv; i++) {
        const uint8_t *x = data + off[i];
        size_t xn = off[i + 1] - off[i];
        if ((rc = dict_bytes(c, x, xn, hs[i % DICT_PREFETCH], &out[i])) < 0)
            return rc;
        size_t ahead = i + DICT_PREFETCH;
        if (ahead < nv) {
            uint32_t h = hash_bytes(data + off[ahead], off[ahead + 1] - off[ahead]);
            hs[ahead % DICT_PREFETCH] = h;
            __builtin_prefetch(&c->slots[h & (c->nslots - 1)]);
        }
    }
    return 0;
}

/* Page min/max over the entries idx[0..nv) refer to (track_entries columns). */
void pqw_dict_track(col *c, const uint32_t *idx, size_t nv) {
    const uint32_t gen = c->page_gen;
    uint32_t *st = c->dstamp;
    for (size_t i = 0; i < nv; i++) {
        uint32_t e = idx[i];
        if (st[e] == gen)
            continue;
        st[e] = gen;
        if (!c->pmin1) {
            c->pmin1 = c->pmax1 = e + 1;
            continue;
        }
        size_t n, mn, mx;
        const uint8_t *v = dict_entry(c, e, &n);
        const uint8_t *lo = dict_entry(c, c->pmin1 - 1, &mn);
        const uint8_t *hi = dict_entry(c, c->pmax1 - 1, &mx);
        if (pqw_cmp_plain(c, v, n, lo, mn) < 0)
            c->pmin1 = e + 1;
        if (pqw_cmp_plain(c, v, n, hi, mx) > 0)
            c->pmax1 = e + 1;
    }
}

/* Merge the tracked entries into pstat and start tracking afresh (page cut, or the
 * dictionary about to be dropped). */
int pqw_dict_stat_flush(col *c) {
    if (++c->page_gen == 0) { /* wrapped: no stamp may look current */
        if (c->dstamp)
            memset(c->dstamp, 0, c->dict_cap * sizeof *c->dstamp);
        c->page_gen = 1;
    }
    if (!c->pmin1)
        return 0;
    size_t mn, mx;
    const uint8_t *lo = dict_entry(c, c->pmin1 - 1, &mn);
    const uint8_t *hi = dict_entry(c, c->pmax1 - 1, &mx);
    c->pmin1 = c->pmax1 = 0;
    return pqw_vstat_merge(c, &c->pstat, lo, mn, hi, mx);
}

/* The column leaves dictionary mode for the rest of the chunk: its lookup tables are not
 * read again before the next chunk, which grows them afresh (dict_reserve_entry). Kept,
 * they would stay resident through the row group's flush, the writer's peak: up to 4 MiB
 * per column of 8-byte values (a 1 MiB dictionary's slots at load <= 3/4, 16 bytes each).
 * The entries (dplain, ndict) stay: the dictionary page is built from them. */
void pqw_dict_drop_tables(col *c) {
    floe_free(c->slots);
    floe_free(c->kslots);
    floe_free(c->dhash);
    floe_free(c->doff);
    floe_free(c->dstamp);
    c->slots = NULL;
    c->kslots = NULL;
    c->dhash = c->doff = c->dstamp = NULL;
    c->nslots = 0;
    c->dict_cap = 0;
}

void pqw_dict_clear(col *c) {
    if (c->slots)
        memset(c->slots, 0, c->nslots * sizeof *c->slots);
    if (c->kslots)
        memset(c->kslots, 0, c->nslots * sizeof *c->kslots);
    c->ndict = 0;
    floe_buf_reset(&c->dplain);
    c->dict_data_pages = 0;
}
