/*
 * alloc.c - the one allocation hook, arenas and bounded buffers.
 *
 * Every heap allocation in floe passes through floe_malloc/floe_realloc so tests can fail
 * the Nth one (floe_alloc_fail_after) and check that each operation unwinds cleanly.
 * The counter is atomic: worker threads allocate too.
 *
 * Arena invariant: blocks form a singly linked list, newest first; an allocation larger
 * than a quarter of the block size gets a block of its own, so waste stays bounded.
 */
#include "floe/common.h"
#include "common/testing.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static _Atomic uint64_t alloc_count;
static _Atomic uint64_t alloc_fail_at; /* 0 = never */

void floe_alloc_fail_after(uint64_t n) {
    atomic_store(&alloc_count, 0);
    atomic_store(&alloc_fail_at, n);
}

uint64_t floe_alloc_count(void) { return atomic_load(&alloc_count); }

static bool alloc_should_fail(void) {
    uint64_t n = atomic_fetch_add(&alloc_count, 1) + 1;
    uint64_t at = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
    return at != 0 && n >= at;
}

void *floe_malloc(size_t n) {
    if (alloc_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *floe_calloc(size_t count, size_t size) {
    if (alloc_should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return calloc(count, size);
}

void *floe_realloc(void *p, size_t n) {
    if (alloc_should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void floe_free(void *p) { free(p); }

void *floe_alloc_huge(size_t n) {
    const size_t huge = (size_t)2 << 20;
    if (alloc_should_fail() || n > SIZE_MAX - huge)
        return NULL;
    size_t len = (n + huge - 1) & ~(huge - 1);
    void *p = aligned_alloc(huge, len ? len : huge);
#ifdef MADV_HUGEPAGE
    if (p) /* advice: a kernel without THP leaves 4 KiB pages, which work as well */
        (void)madvise(p, len ? len : huge, MADV_HUGEPAGE);
#endif
    return p;
}

char *floe_strndup(const char *s, size_t n) {
    char *d = floe_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *floe_strdup(const char *s) { return floe_strndup(s, strlen(s)); }

char *floe_asprintf(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = NULL;
    if (n >= 0 && (s = floe_malloc((size_t)n + 1)) != NULL)
        vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

/* ---- arena ------------------------------------------------------------------------- */

struct floe_arena_block {
    floe_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void floe_arena_init(floe_arena *a, size_t block_size) {
    a->head = NULL;
    a->block_size = block_size ? block_size : 16384;
    a->total = 0;
    a->cap = 0;
}

void floe_arena_reset(floe_arena *a) {
    floe_arena_block *b = a->head;
    while (b) {
        floe_arena_block *next = b->next;
        floe_free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}

/* A full block of its own (a big allocation, a kept vec) joins the arena behind the
 * head, so the head keeps its free space. */
static void link_own_block(floe_arena *a, floe_arena_block *own, size_t need) {
    floe_arena_block *b = a->head;
    if (b) {
        own->next = b->next;
        b->next = own;
    } else {
        own->next = NULL;
        a->head = own;
    }
    a->total += need;
}

/* n bytes of the arena, not zeroed (for copies, which write every byte). */
static void *arena_alloc_raw(floe_arena *a, size_t n) {
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n)
        return NULL;
    if (a->cap && (need > a->cap || a->total > a->cap - need))
        return NULL;
    floe_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t bs = a->block_size;
        if (need > bs / 4) {
            floe_arena_block *own = floe_malloc(sizeof *own + need);
            if (!own)
                return NULL;
            own->size = need;
            own->used = need;
            link_own_block(a, own, need);
            return own->data;
        }
        b = floe_malloc(sizeof *b + bs);
        if (!b)
            return NULL;
        b->size = bs;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    a->total += need;
    return p;
}

void *floe_arena_alloc(floe_arena *a, size_t n) {
    void *p = arena_alloc_raw(a, n);
    if (p)
        memset(p, 0, (n + 15) & ~(size_t)15);
    return p;
}

void *floe_arena_memdup(floe_arena *a, const void *p, size_t n) {
    uint8_t *d = arena_alloc_raw(a, n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    else if (d)
        d[0] = 0;
    return d;
}

/* A vec is an arena block from the start: its storage is the block's data, so keeping
 * it is linking the block in. */
static floe_arena_block *vec_block(void *v) {
    return (floe_arena_block *)(void *)((unsigned char *)v - offsetof(floe_arena_block, data));
}

void *floe_arena_vec_grow(void *v, size_t n) {
    if (n > SIZE_MAX - sizeof(floe_arena_block))
        return NULL;
    floe_arena_block *b = floe_realloc(v ? vec_block(v) : NULL, sizeof *b + (n ? n : 1));
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = b->used = 0;
    return b->data;
}

void *floe_arena_vec_keep(floe_arena *a, void *v, size_t used) {
    size_t need = (used + 15) & ~(size_t)15;
    if (!v || need < used || (a->cap && (need > a->cap || a->total > a->cap - need)))
        return NULL;
    floe_arena_block *own = vec_block(v);
    own->size = own->used = used;
    link_own_block(a, own, need);
    return v;
}

void floe_arena_vec_free(void *v) {
    if (v)
        floe_free(vec_block(v));
}

char *floe_arena_strndup(floe_arena *a, const char *s, size_t n) {
    char *d = arena_alloc_raw(a, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *floe_arena_strdup(floe_arena *a, const char *s) {
    return floe_arena_strndup(a, s, strlen(s));
}

/* ---- bounded buffer ---------------------------------------------------------------- */

void floe_buf_init(floe_buf *b, size_t max) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max ? max : SIZE_MAX;
    b->error = 0;
}

void floe_buf_free(floe_buf *b) {
    floe_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->error = 0;
}

static int buf_fail(floe_buf *b, int code) {
    b->error = code;
    return code;
}

/* Room for extra more bytes: the capacity doubled until it fits, or (exact) just that. */
static int buf_grow(floe_buf *b, size_t extra, bool exact) {
    if (b->error)
        return b->error;
    if (extra > b->max || b->len > b->max - extra)
        return buf_fail(b, FLOE_ELIMIT);
    size_t need = b->len + extra + 1; /* room for a NUL for detach */
    if (need <= b->cap)
        return 0;
    size_t ncap = exact ? need : b->cap ? b->cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    uint8_t *p = floe_realloc(b->data, ncap);
    if (!p)
        return buf_fail(b, FLOE_ENOMEM);
    b->data = p;
    b->cap = ncap;
    return 0;
}

int floe_buf_reserve(floe_buf *b, size_t extra) {
    return buf_grow(b, extra, false);
}

int floe_buf_reserve_exact(floe_buf *b, size_t extra) {
    return buf_grow(b, extra, true);
}

int floe_buf_append(floe_buf *b, const void *p, size_t n) {
    if (n == 0)
        return b->error;
    int rc = floe_buf_reserve(b, n);
    if (rc < 0)
        return rc;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int floe_buf_append_byte(floe_buf *b, uint8_t c) {
    if (b->len + 1 < b->cap && !b->error) {
        b->data[b->len++] = c;
        return 0;
    }
    return floe_buf_append(b, &c, 1);
}

int floe_buf_printf(floe_buf *b, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    int rc = 0;
    if (b->error)
        rc = b->error;
    else if (n < 0)
        rc = buf_fail(b, FLOE_EINVALID);
    else if ((rc = floe_buf_reserve(b, (size_t)n)) == 0) {
        vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
    return rc;
}

char *floe_buf_detach(floe_buf *b, size_t *len_out) {
    if (floe_buf_reserve(b, 0) < 0)
        return NULL;
    b->data[b->len] = '\0';
    char *s = (char *)b->data;
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->error = 0;
    return s;
}
