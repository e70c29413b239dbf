/*
 * shred.c - schema-directed NDJSON shredder: JSON records straight into Dremel-shredded
 * column buffers (floe/json.h documents the contract and the coercion rules).
 *
 * Shape: floe_shredder_new() compiles the schema into a tree of `snode`s, one per field,
 * each knowing its definition level when present, the repetition level of its entries
 * (lists/maps) and the contiguous range of leaf columns below it (leaves are numbered
 * depth-first, so every subtree owns one range). Structs get a small open-addressing hash
 * of their field names plus a "next field" guess, so records whose keys come in schema
 * order (the common case) match with one memcmp per key.
 *
 * One record = one recursive descent over its bytes:
 *   - a present leaf pushes its value with def = max_def and the current rep;
 *   - a null or absent node pushes, into every leaf below it, one slot with the
 *     definition level of its parent (present-level - 1 for an optional node);
 *   - an empty list/map pushes one slot with the list's own present level;
 *   - the first entry of a list/map inherits the caller's rep, later entries get the
 *     list's repetition level (Dremel).
 * Because every column is independent, object keys are handled in input order; after the
 * closing brace, the fields not seen get their absent slots (stamps per struct instance
 * tell which were seen, and catch duplicate keys).
 *
 * Invariants: between records, every column holds exactly one slot sequence per accepted
 * record (nrows); a rejected record is rolled back with floe_colbuf_truncate to where
 * each column stood at its start (marks taken then for repeated columns; a column that is
 * not repeated holds one slot per record, so its start follows from the rows accepted).
 * Internal functions return 0, REJ (> 0: record rejected, reason in the shredder) or a
 * negative FLOE_E* code (hard error, the record is rolled back too).
 */
#include "floe/json.h"

#include <ctype.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/testing.h"
#include "floe/variant.h"
#include "floe/wkb.h"
#include "json/json_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define REJ 1
#define QUICK_MISS 2 /* leaf_number_quick: not its form, nothing consumed or pushed */

/* Leaves whose common values the containers convert inline (shred_value_quick): none,
 * numbers into int64 (long, timestamps), int32 (int, date) or double (leaf_number_quick),
 * strings. */
enum { QUICK_NONE, QUICK_I64, QUICK_I32, QUICK_F64, QUICK_STR };

static _Atomic bool quick_off; /* floe_shredder_testing_quick_off */

void floe_shredder_testing_quick_off(bool off) { quick_off = off; }

/* The string scan's fast path is small and runs for every key and string value: inline it
 * at every call (gcc otherwise keeps one out-of-line copy, paying a call per string). */
#if defined(__GNUC__)
#define SHRED_INLINE inline __attribute__((always_inline))
#else
#define SHRED_INLINE inline
#endif
#define UNKNOWN_MAX_PATHS 1024
#define MAP_LINEAR_MAX 16 /* map duplicate-key check: linear scan up to this many keys */

typedef struct snode snode;
struct snode {
    const floe_field *f;
    floe_type_id type;
    bool required;
    int16_t def;        /* definition level when this node is present */
    int16_t rep_inner;  /* lists/maps: repetition level of their entries */
    uint32_t leaf0;     /* first leaf column below (or of) this node */
    uint32_t nleaf;     /* number of leaf columns below */
    uint8_t quick;      /* QUICK_*: a leaf its container converts inline */
    const char *name;   /* struct children: the JSON key */
    uint32_t nlen;
    uint64_t name8[2];  /* its first 16 bytes, zero-padded (kid_is) */
    /* the name and its closing quote as the record holds them, zero-padded, and the mask
     * of their bytes; qmask[0] == 0 when the name is longer than 15 bytes or needs
     * escaping or UTF-8 checks in JSON (quoted_key_is) */
    uint64_t qkey[2], qmask[2];
    snode *kids;
    uint32_t nkids;
    /* structs */
    uint32_t *slots;    /* open addressing: kid index + 1, 0 = empty */
    uint32_t mask;
    uint32_t guess;     /* kid expected next */
    uint32_t seen_base; /* into floe_shredder.stamps */
    /* maps: duplicate-key hash (kid 0 is the key leaf) */
    uint32_t *ht;
    uint32_t htcap;
    /* leaves */
    int digits;         /* timestamps: 6 or 9 */
    bool hour_source;   /* an hour() partition's source: its integer must give an int hour */
    /* the field's write-default as a record would hold it (NULL: none, or null) */
    uint8_t *wdef;
    uint32_t wdef_len;
};

typedef struct unknown_path {
    char *path;
    uint64_t seen;
} unknown_path;

struct floe_shredder {
    const floe_schema *schema;
    floe_shred_options opt;
    snode root;
    snode *pool;
    size_t npool;
    /* per struct field, the number of the object that last held it; objects are numbered
     * in 64 bits, which no shredder exhausts (a 32-bit count did wrap: the memset that
     * restarted it forgot the fields an enclosing object had already seen) */
    uint64_t *stamps;
    size_t nstamps;
    uint64_t stamp;
    locale_t cloc;
    floe_variant_encoder *venc; /* variant fields: made at the first one */
    floe_buf vmeta, vvalue;     /* a variant field's encoded parts */
    floe_buf scratch;    /* decoded string values */
    floe_buf keybuf;     /* decoded keys */
    /* Rollback marks. A record adds exactly one slot to each column that is not
     * repeated (max_rep 0), so such a column's slots at a record's start are its slots
     * when the batch was handed to the feed (feed_levels) plus one per record accepted
     * since (feed_rows): only the repeated columns (rep_cols) are marked per record. */
    size_t *mark_levels; /* per column, at the start of the record (repeated columns) */
    size_t *mark_values;
    size_t *feed_levels; /* per column, at check_batch (columns not repeated) */
    size_t feed_rows;    /* the batch's rows at check_batch */
    uint32_t *rep_cols;  /* the repeated columns */
    size_t nrep_cols;
    floe_batch *out;     /* the batch being fed */
    floe_shred_stats stats;
    unknown_path *unknown;
    size_t nunknown;
    uint32_t *unknown_ht; /* index + 1, size 2 * UNKNOWN_MAX_PATHS */

    /* per record */
    const uint8_t *rec, *end;
    floe_colbuf *cols;
    int depth;
    bool lenient;         /* structure-only scan (array pre-pass): no UTF-8 checks */
    bool nl_is_ws;        /* a newline is whitespace (array bodies, not NDJSON) */
    /* an array body shredded in steps (floe_shredder_feed_array_part): the line of body
     * at arr_counted */
    int64_t arr_line;
    size_t arr_counted;
    floe_reject_reason rej_reason;
    int64_t rej_column;
    char rej_msg[512];
};

static const char *const reason_names[FLOE_REJECT_NREASONS] = {
    [0] = "unknown",
    [FLOE_REJECT_MALFORMED] = "malformed_json",
    [FLOE_REJECT_UTF8] = "invalid_utf8",
    [FLOE_REJECT_TYPE] = "type_mismatch",
    [FLOE_REJECT_RANGE] = "out_of_range",
    [FLOE_REJECT_MISSING] = "missing_required",
    [FLOE_REJECT_TOO_LARGE] = "too_large",
    [FLOE_REJECT_UNKNOWN_FIELD] = "unknown_field",
    [FLOE_REJECT_DUPLICATE_KEY] = "duplicate_key",
};

const char *floe_reject_reason_name(floe_reject_reason r) {
    if ((int)r <= 0 || (int)r >= FLOE_REJECT_NREASONS)
        return "unknown";
    return reason_names[r];
}

/* ---- rejections ------------------------------------------------------------------------- */

static int rej(floe_shredder *sh, floe_reject_reason reason, const uint8_t *at, const char *fmt,
               ...) FLOE_PRINTF(4, 5);
static int rej(floe_shredder *sh, floe_reject_reason reason, const uint8_t *at, const char *fmt,
               ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->rej_msg, sizeof sh->rej_msg, fmt, ap);
    va_end(ap);
    sh->rej_reason = reason;
    sh->rej_column = at ? (int64_t)(at - sh->rec) + 1 : 0;
    return REJ;
}

static int malformed(floe_shredder *sh, const uint8_t *at, const char *what) {
    return rej(sh, FLOE_REJECT_MALFORMED, at, "malformed JSON at column %lld: %s",
               (long long)((at ? at - sh->rec : 0) + 1), what);
}

static const char *path_of(const snode *n, char *buf, size_t len) {
    return floe_field_path(n->f, buf, len);
}

static const char *found_kind(const uint8_t *p, const uint8_t *end) {
    if (p >= end)
        return "end of record";
    switch (*p) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "boolean";
    case 'n': return "null";
    default: return (*p == '-' || (*p >= '0' && *p <= '9')) ? "number" : "invalid JSON";
    }
}

static int mismatch(floe_shredder *sh, const snode *n, const uint8_t *at) {
    char path[256], type[64];
    if (found_kind(at, sh->end)[0] == 'i')
        return malformed(sh, at, "unexpected character");
    return rej(sh, FLOE_REJECT_TYPE, at, "field '%s': expected %s, found %s",
               path_of(n, path, sizeof path), floe_field_type_str(n->f, type, sizeof type),
               found_kind(at, sh->end));
}

/* ---- lexing -------------------------------------------------------------------------------- */

/* Whitespace between tokens. A newline counts only inside a JSON array body (NDJSON lines
 * hold none, and the speculative record parse relies on stopping at one: see
 * floe_shredder_feed). */
static inline const uint8_t *skip_ws_(const floe_shredder *sh, const uint8_t *p,
                                      const uint8_t *end) {
    /* one compare settles the usual case: no whitespace between tokens */
    while (p < end && *p <= ' ' &&
           (*p == ' ' || *p == '\t' || *p == '\r' || (*p == '\n' && sh->nl_is_ws)))
        p++;
    return p;
}
#define skip_ws(p, end) skip_ws_(sh, (p), (end))

/* SWAR: does any byte of w equal b, fall below 0x20, or have its high bit set? */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t has_zero(uint64_t w) { return (w - ONES) & ~w & HIGHS; }
static inline bool plain8(uint64_t w) {
    uint64_t special = has_zero(w ^ (ONES * '"')) | has_zero(w ^ (ONES * '\\')) |
                       ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
    return special == 0;
}

static int hex4(const uint8_t *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (uint32_t)((c | 0x20) - 'a' + 10);
        else
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at p (p[0] >= 0x80), 0 if invalid (RFC 3629). */
static inline size_t utf8_seq(const uint8_t *p, const uint8_t *end) {
    uint8_t c = p[0];
    size_t avail = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF)
        return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 3 || (p[2] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

/* The general string scan: from p (inside the string that opens at *pp) to its closing
 * quote, through escapes and multi-byte UTF-8. See scan_string. */
static int scan_string_from(floe_shredder *sh, const uint8_t **pp, const uint8_t *p,
                            const uint8_t **s, size_t *n, bool *escaped) {
    const uint8_t *end = sh->end;
    bool esc = false;
    for (;;) {
#ifdef __SSE2__
        /* 16 bytes at a time: jump straight to the first '"', '\\', control or non-ASCII
         * byte (the signed compare flags bytes >= 0x80 together with those < 0x20) */
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i sp = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            unsigned mask = (unsigned)_mm_movemask_epi8(sp);
            if (mask) {
                p += __builtin_ctz(mask);
                break;
            }
            p += 16;
        }
#endif
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (!plain8(w))
                break;
            p += 8;
        }
        if (p >= end)
            return malformed(sh, *pp, "unterminated string");
        uint8_t c = *p;
        if (c == '"')
            break;
        if (c == '\\') {
            esc = true;
            if (end - p < 2)
                return malformed(sh, p, "unterminated string");
            uint8_t e = p[1];
            if (e == 'u') {
                uint32_t cp;
                if (end - p < 6 || hex4(p + 2, &cp) < 0)
                    return malformed(sh, p, "bad \\u escape");
                if (!sh->lenient && cp >= 0xD800 && cp <= 0xDFFF) {
                    uint32_t lo;
                    if (cp >= 0xDC00 || end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
                        hex4(p + 8, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                        return rej(sh, FLOE_REJECT_UTF8, p,
                                   "lone surrogate \\u%04X at column %lld", (unsigned)cp,
                                   (long long)(p - sh->rec + 1));
                    p += 6;
                }
                p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                       e == 'r' || e == 't') {
                p += 2;
            } else {
                return malformed(sh, p, "bad escape in string");
            }
        } else if (c < 0x20) {
            return malformed(sh, p, "control character in string");
        } else if (c >= 0x80) {
            size_t k = sh->lenient ? 1 : utf8_seq(p, end);
            if (!k)
                return rej(sh, FLOE_REJECT_UTF8, p, "invalid UTF-8 in string at column %lld",
                           (long long)(p - sh->rec + 1));
            p += k;
        } else {
            p++;
        }
    }
    *s = *pp + 1;
    *n = (size_t)(p - *s);
    *escaped = esc;
    *pp = p + 1;
    return 0;
}

/* Lowest byte of w that is '"', '\\', a control byte (< 0x20) or >= 0x80, as a byte index;
 * 8 if none. The borrow tricks can flag bytes above a true hit, never below one, so the
 * lowest flag is exact. */
static inline unsigned special8(uint64_t w) {
    uint64_t special = has_zero(w ^ (ONES * '"')) | has_zero(w ^ (ONES * '\\')) |
                       ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
    return special ? (unsigned)__builtin_ctzll(special) >> 3 : 8;
}

/* Scan the string starting at the '"' at *pp. On success *pp is past the closing quote,
 * (s, n) the raw contents and *escaped tells whether a decode pass is needed. Validates
 * escapes and UTF-8 unless sh->lenient.
 *
 * Inline fast path for the common string (printable ASCII up to the closing quote): find
 * the first byte that needs a look, 16 bytes at a time with SSE2 or 8 at a time with
 * word tricks; anything but the closing quote continues in scan_string_from. */
static SHRED_INLINE int scan_string(floe_shredder *sh, const uint8_t **pp, const uint8_t **s,
                                    size_t *n, bool *escaped) {
    const uint8_t *p = *pp + 1, *end = sh->end;
#ifdef __SSE2__
    /* the signed compare flags bytes >= 0x80 together with those < 0x20 */
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned mask = (unsigned)_mm_movemask_epi8(sp);
        if (mask) {
            p += __builtin_ctz(mask);
            goto found;
        }
        p += 16;
    }
#endif
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        unsigned k = special8(w);
        p += k;
        if (k < 8)
            goto found;
    }
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80)
        p++;
    if (p >= end)
        return scan_string_from(sh, pp, p, s, n, escaped); /* reports the error */
found:
    if (*p != '"')
        return scan_string_from(sh, pp, p, s, n, escaped);
    *s = *pp + 1;
    *n = (size_t)(p - *s);
    *escaped = false;
    *pp = p + 1;
    return 0;
}

static inline size_t put_utf8(uint8_t *o, uint32_t cp) {
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | cp >> 18);
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode validated string contents (from scan_string) into b (reset first). The output is
 * never longer than the input. */
static int decode_string(floe_buf *b, const uint8_t *s, size_t n) {
    floe_buf_reset(b);
    int rc = floe_buf_reserve(b, n);
    if (rc < 0)
        return rc;
    uint8_t *o = b->data;
    const uint8_t *end = s + n;
    while (s < end) {
        if (*s != '\\') { /* copy the run up to the next escape in one go */
            const uint8_t *bs = memchr(s, '\\', (size_t)(end - s));
            size_t run = (size_t)((bs ? bs : end) - s);
            memcpy(o, s, run);
            o += run;
            s += run;
            continue;
        }
        uint8_t e = s[1];
        s += 2;
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t cp = 0, lo = 0xDC00;
            hex4(s, &cp);
            s += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                hex4(s + 2, &lo);
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            o += put_utf8(o, cp);
            break;
        }
        default: *o++ = e; break; /* " \ / */
        }
    }
    b->len = (size_t)(o - b->data);
    return 0;
}

static int expect_literal(floe_shredder *sh, const uint8_t **pp, const char *lit, size_t n) {
    if ((size_t)(sh->end - *pp) < n || memcmp(*pp, lit, n) != 0)
        return malformed(sh, *pp, "invalid literal");
    *pp += n;
    return 0;
}

/* Validate and skip one value of any shape (unknown fields, array pre-pass). */
static int skip_value(floe_shredder *sh, const uint8_t **pp) {
    const uint8_t *p = *pp, *end = sh->end;
    int rc;
    if (p >= end)
        return malformed(sh, p, "expected a value");
    switch (*p) {
    case '"': {
        const uint8_t *s;
        size_t n;
        bool esc;
        if ((rc = scan_string(sh, &p, &s, &n, &esc)) != 0)
            return rc;
        break;
    }
    case '{':
    case '[': {
        bool obj = *p == '{';
        uint8_t close = obj ? '}' : ']';
        if (++sh->depth > sh->opt.max_depth)
            return malformed(sh, p, "nesting too deep");
        p = skip_ws(p + 1, end);
        if (p < end && *p == close) {
            p++;
            sh->depth--;
            break;
        }
        for (;;) {
            if (obj) {
                const uint8_t *s;
                size_t n;
                bool esc;
                if (p >= end || *p != '"')
                    return malformed(sh, p, "expected '\"' to start an object key");
                if ((rc = scan_string(sh, &p, &s, &n, &esc)) != 0)
                    return rc;
                p = skip_ws(p, end);
                if (p >= end || *p != ':')
                    return malformed(sh, p, "expected ':' after object key");
                p = skip_ws(p + 1, end);
            }
            if ((rc = skip_value(sh, &p)) != 0)
                return rc;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == close) {
                p++;
                break;
            }
            return malformed(sh, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        sh->depth--;
        break;
    }
    case 't':
        if ((rc = expect_literal(sh, &p, "true", 4)) != 0)
            return rc;
        break;
    case 'f':
        if ((rc = expect_literal(sh, &p, "false", 5)) != 0)
            return rc;
        break;
    case 'n':
        if ((rc = expect_literal(sh, &p, "null", 4)) != 0)
            return rc;
        break;
    default: {
        floe_jnum num;
        size_t bad = 0;
        if (!floe_jnum_scan(p, end, &num, &bad))
            return malformed(sh, p + bad, "invalid number");
        p += num.len;
        break;
    }
    }
    *pp = p;
    return 0;
}

/* ---- column pushes -------------------------------------------------------------------------- */

/* A fixed-width value of w bytes when its column has room: no calls (w a constant folds
 * the copy into one store). false: no room. */
static inline __attribute__((always_inline)) bool push_fixed_room(floe_colbuf *c, int16_t rep,
                                                                  const void *v, size_t w) {
    if (c->nlevels >= c->levels_cap || c->values_len + w > c->values_cap)
        return false;
    memcpy(c->values + c->values_len, v, w);
    c->values_len += w;
    floe_colbuf_push_level(c, rep);
    return true;
}

static inline int push_value(floe_shredder *sh, uint32_t col, int16_t rep, const void *v,
                             size_t n) {
    floe_colbuf *c = &sh->cols[col];
    /* fast path for fixed-width values with room, constant sizes for the common widths */
    if (c->width) {
        size_t w = (size_t)c->width;
        if (w == 8 ? push_fixed_room(c, rep, v, 8)
                   : w == 4 ? push_fixed_room(c, rep, v, 4) : push_fixed_room(c, rep, v, w))
            return 0;
    } else if (c->nlevels < c->levels_cap && c->offsets && c->nvalues + 2 <= c->offsets_cap &&
               n <= c->values_cap - c->values_len && n <= UINT32_MAX - c->values_len) {
        /* the same for strings and binary: room for the level, the offset and the bytes */
        if (n)
            memcpy(c->values + c->values_len, v, n);
        c->values_len += n;
        c->offsets[c->nvalues + 1] = (uint32_t)c->values_len;
        floe_colbuf_push_level(c, rep);
        return 0;
    }
    return floe_colbuf_push_value(c, rep, v, n);
}

/* push_value of an 8-byte value with its room-left path inline: the numbers of a record
 * go through here (a call each was ~7% of a numeric conversion). */
static inline __attribute__((always_inline)) int push8(floe_shredder *sh, uint32_t col,
                                                        int16_t rep, const void *v) {
    floe_colbuf *c = &sh->cols[col];
    if (c->width == 8 && push_fixed_room(c, rep, v, 8))
        return 0;
    return push_value(sh, col, rep, v, 8);
}

static int emit_null(floe_shredder *sh, const snode *n, int16_t def, int16_t rep) {
    for (uint32_t i = 0; i < n->nleaf; i++) {
        floe_colbuf *c = &sh->cols[n->leaf0 + i];
        if (c->nlevels < c->levels_cap) {
            if (c->max_def > 0)
                c->def[c->nlevels] = def;
            if (c->max_rep > 0)
                c->rep[c->nlevels] = rep;
            c->nlevels++;
        } else {
            int rc = floe_colbuf_push_null(c, def, rep);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* ---- leaves ----------------------------------------------------------------------------- */

static int range_err(floe_shredder *sh, const snode *n, const uint8_t *at, const char *what) {
    char path[256], type[64];
    return rej(sh, FLOE_REJECT_RANGE, at, "field '%s': %s out of range for %s",
               path_of(n, path, sizeof path), what, floe_field_type_str(n->f, type, sizeof type));
}

static int push_decimal(floe_shredder *sh, const snode *n, int16_t rep, floe_i128 v) {
    const floe_field *f = n->f;
    if (f->phys == FLOE_PHYS_INT32) {
        int32_t x = (int32_t)v;
        return push_value(sh, n->leaf0, rep, &x, 4);
    }
    if (f->phys == FLOE_PHYS_INT64) {
        int64_t x = (int64_t)v;
        return push_value(sh, n->leaf0, rep, &x, 8);
    }
    uint8_t be[16];
    floe_i128_to_be(v, be, f->type_length);
    return push_value(sh, n->leaf0, rep, be, (size_t)f->type_length);
}

static int shred_value(floe_shredder *sh, snode *n, const uint8_t **pp, int16_t rep);

/* A JSON number at *pp into leaf n. */
static int leaf_number(floe_shredder *sh, const snode *n, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp;
    floe_jnum num;
    size_t bad = 0;
    char path[256], type[64], why[128];
    if (!floe_jnum_scan(p, sh->end, &num, &bad))
        return malformed(sh, p + bad, "invalid number");
    *pp = p + num.len;
    int rc;
    int64_t iv;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (n->type) {
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        lo = INT32_MIN;
        hi = INT32_MAX;
        /* fall through */
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        if (n->type == FLOE_TYPE_TIME) {
            lo = 0;
            hi = 86400LL * 1000000 - 1;
        }
        if (n->hour_source) {
            /* hour = floor(v / units an hour) must fit an int: [INT32_MIN, INT32_MAX] hours */
            int64_t uph = n->digits == 9 ? INT64_C(3600000000000) : INT64_C(3600000000);
            int64_t hlo, hhi;
            if (!__builtin_mul_overflow((int64_t)INT32_MIN, uph, &hlo))
                lo = hlo;
            if (!__builtin_mul_overflow((int64_t)INT32_MAX + 1, uph, &hhi))
                hi = hhi - 1;
        }
        if (num.simple && !num.neg && num.simple_value <= (uint64_t)hi) {
            iv = (int64_t)num.simple_value; /* the common case: a plain small integer */
        } else {
            rc = floe_jnum_to_i64(&num, lo, hi, &iv);
            if (rc == FLOE_SC_NONINTEGRAL)
                return rej(sh, FLOE_REJECT_TYPE, p,
                           "field '%s': expected %s, found non-integral number %.*s",
                           path_of(n, path, sizeof path),
                           floe_field_type_str(n->f, type, sizeof type),
                           (int)(num.len > 40 ? 40 : num.len), (const char *)p);
            if (rc != FLOE_SC_OK) {
                snprintf(why, sizeof why, "%.*s%s", (int)(num.len > 40 ? 40 : num.len),
                         (const char *)p,
                         n->hour_source && floe_jnum_to_i64(&num, INT64_MIN, INT64_MAX, &iv) ==
                                               FLOE_SC_OK
                             ? " (its hour, a partition value, must fit an int)"
                             : "");
                return range_err(sh, n, p, why);
            }
        }
        if (n->f->phys == FLOE_PHYS_INT32) {
            int32_t x = (int32_t)iv;
            return push_value(sh, n->leaf0, rep, &x, 4);
        }
        return push8(sh, n->leaf0, rep, &iv);
    case FLOE_TYPE_DOUBLE: {
        double d;
        if (num.simple && num.simple_value <= (1ull << 53)) {
            d = (double)num.simple_value;
            if (num.neg)
                d = -d;
        } else if (floe_jnum_to_double_fast(&num, &d)) {
            /* exact: the common short decimals */
        } else if ((rc = floe_jnum_to_double(&num, sh->cloc, &d)) != FLOE_SC_OK) {
            if (rc == FLOE_SC_NOMEM)
                return FLOE_ENOMEM;
            snprintf(why, sizeof why, "%.*s", (int)(num.len > 40 ? 40 : num.len), (const char *)p);
            return range_err(sh, n, p, why);
        }
        return push8(sh, n->leaf0, rep, &d);
    }
    case FLOE_TYPE_FLOAT: {
        float x;
        if ((rc = floe_jnum_to_float(&num, sh->cloc, &x)) != FLOE_SC_OK) {
            if (rc == FLOE_SC_NOMEM)
                return FLOE_ENOMEM;
            snprintf(why, sizeof why, "%.*s", (int)(num.len > 40 ? 40 : num.len), (const char *)p);
            return range_err(sh, n, p, why);
        }
        return push_value(sh, n->leaf0, rep, &x, 4);
    }
    case FLOE_TYPE_DECIMAL: {
        floe_i128 v;
        if (floe_jnum_to_decimal(&num, n->f->precision, n->f->scale, &v, why, sizeof why) !=
            FLOE_SC_OK)
            return rej(sh, FLOE_REJECT_RANGE, p, "field '%s': %.*s has %s for %s",
                       path_of(n, path, sizeof path), (int)(num.len > 40 ? 40 : num.len),
                       (const char *)p, why, floe_field_type_str(n->f, type, sizeof type));
        return push_decimal(sh, n, rep, v);
    }
    default:
        return mismatch(sh, n, p);
    }
}

/* leaf_number's common case without a floe_jnum: an optional minus, an integer part and
 * an optional fraction, no exponent, at most 19 digits; an int64 or int32 leaf takes
 * integers only (within int32 for the latter), a double leaf mantissas up to 2^53 with up
 * to 22 fraction digits. It consumes the bytes floe_jnum_scan would and pushes the value
 * leaf_number would (the same integer; the same Clinger division for a double). Anything
 * else (an exponent, more digits, a fraction for an integer, no digit at all) returns
 * QUICK_MISS with nothing consumed or pushed, for leaf_number to scan again: ~120 of the
 * ~190 instructions a number took (bench shapes iot: 23 numbers a record). */
static inline __attribute__((always_inline)) int leaf_number_quick(floe_shredder *sh,
                                                                   const snode *n,
                                                                   const uint8_t **pp,
                                                                   int16_t rep) {
    const uint8_t *p = *pp, *end = sh->end;
    bool neg = *p == '-';
    p += neg;
    const uint8_t *d0 = p;
    uint64_t m = 0;
    if (p < end && *p == '0')
        p++; /* no leading zeros: "012" is the number 0, then a stray digit */
    else
        while (p < end && IS_DIGIT(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
    size_t nint = (size_t)(p - d0), nfrac = 0;
    if (!nint)
        return QUICK_MISS;
    if (p < end && *p == '.') {
        const uint8_t *f0 = ++p;
        while (p < end && IS_DIGIT(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
        nfrac = (size_t)(p - f0);
        if (!nfrac)
            return QUICK_MISS;
    }
    if ((p < end && (*p | 0x20) == 'e') || nint + nfrac > 19)
        return QUICK_MISS;
    if (n->quick == QUICK_F64) {
        if (m > (1ull << 53) || nfrac > 22)
            return QUICK_MISS;
        double d = (double)m;
        if (nfrac)
            d /= floe_pow10_exact[nfrac];
        /* the sign by its bit, no branch: signs alternate at random in many columns */
        uint64_t bits;
        memcpy(&bits, &d, 8);
        bits |= (uint64_t)neg << 63;
        memcpy(&d, &bits, 8);
        *pp = p;
        return push8(sh, n->leaf0, rep, &d);
    }
    if (nfrac || nint > 18)
        return QUICK_MISS;
    int64_t v = neg ? -(int64_t)m : (int64_t)m;
    if (n->quick == QUICK_I64) {
        *pp = p;
        return push8(sh, n->leaf0, rep, &v);
    }
    if (v < INT32_MIN || v > INT32_MAX)
        return QUICK_MISS; /* leaf_number says so */
    int32_t x = (int32_t)v;
    *pp = p;
    return push_value(sh, n->leaf0, rep, &x, 4);
}

/* shred_value, with a number leaf's common numbers converted inline, and a string leaf's
 * string pushed as leaf_value and leaf_text would (no call chain, no type dispatch). */
static inline __attribute__((always_inline)) int shred_value_quick(floe_shredder *sh, snode *n,
                                                                   const uint8_t **pp,
                                                                   int16_t rep) {
    if (n->quick == QUICK_STR) {
        if (**pp == '"') {
            const uint8_t *p = *pp, *s;
            size_t len;
            bool esc;
            int rc = scan_string(sh, &p, &s, &len, &esc);
            if (rc != 0)
                return rc;
            *pp = p;
            if (esc) {
                if ((rc = decode_string(&sh->scratch, s, len)) < 0)
                    return rc;
                s = sh->scratch.data;
                len = sh->scratch.len;
            }
            return push_value(sh, n->leaf0, rep, s, len);
        }
    } else if (n->quick && (IS_DIGIT(**pp) || **pp == '-')) {
        int rc = leaf_number_quick(sh, n, pp, rep);
        if (rc != QUICK_MISS)
            return rc;
    }
    return shred_value(sh, n, pp, rep);
}

/* Convert string text (already decoded) into leaf n. `at` is the string's position in the
 * record for messages. Also used for map keys. */
static int leaf_text(floe_shredder *sh, const snode *n, const uint8_t *s, size_t len,
                     const uint8_t *at, int16_t rep) {
    char path[256], type[64], why[160];
    int rc;
    int shown = (int)(len > 60 ? 60 : len);
    why[0] = 0; /* only the first byte: this runs for every string value */
    switch (n->type) {
    case FLOE_TYPE_STRING:
        return push_value(sh, n->leaf0, rep, s, len);
    case FLOE_TYPE_INT:
    case FLOE_TYPE_LONG: {
        /* only map keys reach here: integers written as key text */
        floe_jnum num;
        int64_t v;
        bool is_int32 = n->type == FLOE_TYPE_INT;
        bool digits_only = len > (s[0] == '-' ? 1u : 0u);
        for (size_t i = s[0] == '-' ? 1 : 0; i < len && digits_only; i++)
            digits_only = s[i] >= '0' && s[i] <= '9';
        if (!digits_only || floe_jnum_scan(s, s + len, &num, NULL) != len)
            return rej(sh, FLOE_REJECT_TYPE, at, "field '%s': expected %s key, found \"%.*s\"",
                       path_of(n, path, sizeof path), floe_type_name(n->type), shown,
                       (const char *)s);
        if (floe_jnum_to_i64(&num, is_int32 ? INT32_MIN : INT64_MIN,
                             is_int32 ? INT32_MAX : INT64_MAX, &v) != FLOE_SC_OK)
            return range_err(sh, n, at, "key");
        if (is_int32) {
            int32_t x = (int32_t)v;
            return push_value(sh, n->leaf0, rep, &x, 4);
        }
        return push_value(sh, n->leaf0, rep, &v, 8);
    }
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE: {
        double d;
        if (len == 3 && !memcmp(s, "NaN", 3))
            d = (double)NAN;
        else if (len == 8 && !memcmp(s, "Infinity", 8))
            d = (double)INFINITY;
        else if (len == 9 && !memcmp(s, "-Infinity", 9))
            d = -(double)INFINITY;
        else
            return mismatch(sh, n, at);
        if (n->type == FLOE_TYPE_FLOAT) {
            float x = (float)d;
            return push_value(sh, n->leaf0, rep, &x, 4);
        }
        return push_value(sh, n->leaf0, rep, &d, 8);
    }
    case FLOE_TYPE_DECIMAL: {
        floe_jnum num;
        floe_i128 v;
        if (!len || floe_jnum_scan(s, s + len, &num, NULL) != len)
            return rej(sh, FLOE_REJECT_TYPE, at, "field '%s': expected %s, found \"%.*s\"",
                       path_of(n, path, sizeof path),
                       floe_field_type_str(n->f, type, sizeof type), shown, (const char *)s);
        if (floe_jnum_to_decimal(&num, n->f->precision, n->f->scale, &v, why, sizeof why) !=
            FLOE_SC_OK)
            return rej(sh, FLOE_REJECT_RANGE, at, "field '%s': \"%.*s\" has %s for %s",
                       path_of(n, path, sizeof path), shown, (const char *)s, why,
                       floe_field_type_str(n->f, type, sizeof type));
        return push_decimal(sh, n, rep, v);
    }
    case FLOE_TYPE_DATE: {
        int32_t d;
        rc = floe_lit_date((const char *)s, len, FLOE_LIT_STRICT, &d, why, sizeof why);
        if (rc == FLOE_LIT_OK)
            return push_value(sh, n->leaf0, rep, &d, 4);
        if (rc == FLOE_LIT_RANGE)
            return rej(sh, FLOE_REJECT_RANGE, at, "field '%s': date \"%.*s\": %s",
                       path_of(n, path, sizeof path), shown, (const char *)s, why);
        return rej(sh, FLOE_REJECT_TYPE, at,
                   "field '%s': expected date (YYYY-MM-DD), found \"%.*s\"",
                   path_of(n, path, sizeof path), shown, (const char *)s);
    }
    case FLOE_TYPE_TIME: {
        int64_t t;
        rc = floe_lit_time((const char *)s, len, &t, why, sizeof why);
        if (rc == FLOE_LIT_OK) {
            t /= 1000; /* microseconds */
            return push_value(sh, n->leaf0, rep, &t, 8);
        }
        if (rc == FLOE_LIT_RANGE)
            return rej(sh, FLOE_REJECT_RANGE, at, "field '%s': time \"%.*s\": %s",
                       path_of(n, path, sizeof path), shown, (const char *)s, why);
        return rej(sh, FLOE_REJECT_TYPE, at,
                   "field '%s': expected time (HH:MM:SS[.ffffff]), found \"%.*s\"",
                   path_of(n, path, sizeof path), shown, (const char *)s);
    }
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS: {
        int64_t t;
        floe_lit_ts ts;
        bool tz = n->type == FLOE_TYPE_TIMESTAMPTZ || n->type == FLOE_TYPE_TIMESTAMPTZ_NS;
        rc = floe_lit_timestamp((const char *)s, len, FLOE_LIT_STRICT, &ts, why, sizeof why);
        if (rc == FLOE_LIT_OK && ts.zone && !tz)
            return rej(sh, FLOE_REJECT_TYPE, at,
                       "field '%s': %s has no time zone but \"%.*s\" carries one (use %s)",
                       path_of(n, path, sizeof path), floe_type_name(n->type), shown,
                       (const char *)s,
                       n->type == FLOE_TYPE_TIMESTAMP_NS ? "timestamptz_ns" : "timestamptz");
        if (rc == FLOE_LIT_OK)
            rc = floe_lit_ts_units(&ts, n->digits, &t, why, sizeof why);
        if (rc == FLOE_LIT_OK)
            return push_value(sh, n->leaf0, rep, &t, 8);
        if (rc == FLOE_LIT_RANGE)
            return rej(sh, FLOE_REJECT_RANGE, at, "field '%s': timestamp \"%.*s\": %s",
                       path_of(n, path, sizeof path), shown, (const char *)s, why);
        return rej(sh, FLOE_REJECT_TYPE, at,
                   "field '%s': expected ISO-8601 timestamp, found \"%.*s\"%s%s",
                   path_of(n, path, sizeof path), shown, (const char *)s, *why ? ": " : "",
                   why);
    }
    case FLOE_TYPE_UUID: {
        uint8_t u[16];
        if (floe_parse_uuid(s, len, u) != FLOE_SC_OK)
            return rej(sh, FLOE_REJECT_TYPE, at, "field '%s': expected uuid, found \"%.*s\"",
                       path_of(n, path, sizeof path), shown, (const char *)s);
        return push_value(sh, n->leaf0, rep, u, 16);
    }
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED: {
        /* decode into whichever scratch buffer does not hold the text itself */
        bool in_scratch = sh->scratch.data &&
                          (uintptr_t)s - (uintptr_t)sh->scratch.data < sh->scratch.cap;
        floe_buf *b = in_scratch ? &sh->keybuf : &sh->scratch;
        floe_buf_reset(b);
        if ((rc = floe_buf_reserve(b, len / 4 * 3 + 3)) < 0)
            return rc;
        size_t outlen;
        if (floe_base64_decode(s, len, b->data, &outlen) != FLOE_SC_OK)
            return rej(sh, FLOE_REJECT_TYPE, at, "field '%s': expected base64, found \"%.*s\"",
                       path_of(n, path, sizeof path), shown, (const char *)s);
        if (n->type == FLOE_TYPE_FIXED && outlen != (size_t)n->f->length) {
            snprintf(why, sizeof why, "length %zu", outlen);
            return range_err(sh, n, at, why);
        }
        if (n->f->geo) { /* format/spec.md Appendix G: WKB; anything else is refused here */
            floe_wkb_bbox box;
            floe_error e;
            floe_wkb_bbox_init(&box);
            floe_error_clear(&e);
            if (floe_wkb_bbox_add(&box, b->data, outlen, &e) < 0)
                return rej(sh, FLOE_REJECT_TYPE, at,
                           "field '%s': %s value is not WKB (%zu bytes; %s)",
                           path_of(n, path, sizeof path),
                           n->f->geo == FLOE_GEO_GEOGRAPHY ? "geography" : "geometry", outlen,
                           e.msg);
        }
        return push_value(sh, n->leaf0, rep, b->data, outlen);
    }
    default:
        return mismatch(sh, n, at);
    }
}

static int leaf_value(floe_shredder *sh, const snode *n, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp;
    int rc;
    switch (*p) {
    case '"': {
        const uint8_t *s;
        size_t len;
        bool esc;
        if ((rc = scan_string(sh, &p, &s, &len, &esc)) != 0)
            return rc;
        *pp = p;
        if (n->type == FLOE_TYPE_BOOLEAN || n->type == FLOE_TYPE_INT || n->type == FLOE_TYPE_LONG)
            return mismatch(sh, n, s - 1);
        if (esc) {
            if ((rc = decode_string(&sh->scratch, s, len)) < 0)
                return rc;
            return leaf_text(sh, n, sh->scratch.data, sh->scratch.len, s - 1, rep);
        }
        return leaf_text(sh, n, s, len, s - 1, rep);
    }
    case 't':
    case 'f': {
        bool v = *p == 't';
        if ((rc = expect_literal(sh, &p, v ? "true" : "false", v ? 4 : 5)) != 0)
            return rc;
        if (n->type != FLOE_TYPE_BOOLEAN)
            return mismatch(sh, n, *pp);
        *pp = p;
        uint8_t b = v;
        return push_value(sh, n->leaf0, rep, &b, 1);
    }
    case '{':
    case '[':
        return mismatch(sh, n, p);
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return leaf_number(sh, n, pp, rep);
        return malformed(sh, p, "expected a value");
    }
}

/* ---- nested values ---------------------------------------------------------------------------- */

static uint32_t name_hash(const uint8_t *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

static inline bool same_bytes(const char *a, const uint8_t *b, size_t n) {
    /* keys are short: a plain loop beats a libc call */
    for (size_t i = 0; i < n; i++)
        if ((uint8_t)a[i] != b[i])
            return false;
    return true;
}

/* Is the key k (klen bytes, inside the record) the name of kid c? Names up to 16 bytes
 * are compared as two words against the zero-padded copy in the node, when the record
 * has 16 bytes from k on (the key's closing quote and the value follow it, so it nearly
 * always has). */
static inline bool kid_is(const snode *c, const uint8_t *k, size_t klen, const uint8_t *end) {
    if (c->nlen != klen)
        return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (klen <= 16 && end - k >= 16) {
        uint64_t w0, w1;
        memcpy(&w0, k, 8);
        memcpy(&w1, k + 8, 8);
        uint64_t m0 = klen >= 8 ? ~0ull : ((1ull << (klen * 8)) - 1);
        uint64_t m1 = klen >= 16 ? ~0ull : klen <= 8 ? 0 : ((1ull << ((klen - 8) * 8)) - 1);
        return ((w0 & m0) ^ c->name8[0]) == 0 && ((w1 & m1) ^ c->name8[1]) == 0;
    }
#endif
    return same_bytes(c->name, k, klen);
}

/* end: how far bytes may be read from k (the record's end, or the key's end when it was
 * decoded into a scratch buffer). */
static inline int lookup_kid(snode *st, const uint8_t *k, size_t klen, const uint8_t *end) {
    uint32_t g = st->guess;
    if (g < st->nkids && kid_is(&st->kids[g], k, klen, end)) {
        st->guess = g + 1;
        return (int)g;
    }
    if (!st->nkids)
        return -1;
    uint32_t i = name_hash(k, klen) & st->mask;
    for (;;) {
        uint32_t s = st->slots[i];
        if (!s)
            return -1;
        snode *c = &st->kids[s - 1];
        if (c->nlen == klen && !memcmp(c->name, k, klen)) {
            st->guess = s;
            return (int)(s - 1);
        }
        i = (i + 1) & st->mask;
    }
}

/* Is the text at k (16 readable bytes) the name of c followed by its closing quote? */
static inline bool quoted_key_is(const snode *c, const uint8_t *k) {
    uint64_t w0, w1;
    memcpy(&w0, k, 8);
    memcpy(&w1, k + 8, 8);
    return ((w0 & c->qmask[0]) ^ c->qkey[0]) == 0 && ((w1 & c->qmask[1]) ^ c->qkey[1]) == 0;
}

static int note_unknown(floe_shredder *sh, const snode *st, const uint8_t *k, size_t klen) {
    sh->stats.unknown_fields++;
    if (sh->opt.unknown != FLOE_UNKNOWN_COLLECT)
        return 0;
    char path[512];
    char parent[256];
    if (st->f)
        snprintf(path, sizeof path, "%s.%.*s", path_of(st, parent, sizeof parent),
                 (int)(klen > 200 ? 200 : klen), (const char *)k);
    else
        snprintf(path, sizeof path, "%.*s", (int)(klen > 200 ? 200 : klen), (const char *)k);
    size_t plen = strlen(path);
    uint32_t cap = 2 * UNKNOWN_MAX_PATHS;
    uint32_t i = name_hash((const uint8_t *)path, plen) & (cap - 1);
    for (;;) {
        uint32_t s = sh->unknown_ht[i];
        if (!s)
            break;
        if (!strcmp(sh->unknown[s - 1].path, path)) {
            sh->unknown[s - 1].seen++;
            return 0;
        }
        i = (i + 1) & (cap - 1);
    }
    if (sh->nunknown >= UNKNOWN_MAX_PATHS)
        return 0;
    char *copy = floe_strndup(path, plen);
    if (!copy)
        return FLOE_ENOMEM;
    sh->unknown[sh->nunknown].path = copy;
    sh->unknown[sh->nunknown].seen = 1;
    sh->unknown_ht[i] = (uint32_t)++sh->nunknown;
    return 0;
}

/* Does the object at obj (to its end) repeat a key, at any depth? Asked only on the way
 * to rejecting a record for an unknown field: a field that `floe serve`'s evolve mode did
 * not add because its record repeats a key is rejected for the duplicate, the reason the
 * record is refused whatever the schema, as it is when the field is known. Sets the
 * rejection and returns true when so. */
static bool duplicate_in_object(floe_shredder *sh, const uint8_t *obj, const snode *st) {
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)obj, (size_t)(sh->end - obj),
                             JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                             &jerr);
    if (doc) {
        json_decref(doc);
        return false;
    }
    if (json_error_code(&jerr) != json_error_duplicate_key)
        return false;
    char path[256];
    const uint8_t *at = obj + (jerr.position > 0 ? jerr.position - 1 : 0);
    if (st->f)
        rej(sh, FLOE_REJECT_DUPLICATE_KEY, at, "object '%s': %s", path_of(st, path, sizeof path),
            jerr.text);
    else
        rej(sh, FLOE_REJECT_DUPLICATE_KEY, at, "%s", jerr.text);
    return true;
}

/* Kids tried by their quoted name from the one expected next on, before a key is scanned
 * and looked up: wide sparse records (125 fields, ~23 present in order) skip ~5 on
 * average, so most keys are found in the first few words compared. */
#define KEY_LOOKAHEAD 8u

static int shred_struct(floe_shredder *sh, snode *st, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp, *end = sh->end;
    int rc;
    if (++sh->depth > sh->opt.max_depth)
        return malformed(sh, p, "nesting too deep");
    uint64_t stamp = ++sh->stamp;
    uint64_t *seen = sh->stamps + st->seen_base;
    uint32_t nseen = 0;
    st->guess = 0;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
    } else {
        /* Whitespace is looked for only where the next token is not the usual one (a
         * quote, a colon, a comma): compact records take one skip_ws a field. */
        for (;;) {
            const uint8_t *s, *kpos = p;
            size_t klen;
            int k;
            if (p >= end || *p != '"')
                return malformed(sh, p, "expected '\"' to start an object key");
            /* the key expected next, or one of the few after it (a sparse record skips
             * fields but keeps the schema's order), closing quote included: no scan, no
             * lookup */
            k = -1;
            snode *kid = NULL;
            if (end - p > 16) {
                uint32_t g = st->guess, lim = g + KEY_LOOKAHEAD < st->nkids ? g + KEY_LOOKAHEAD
                                                                           : st->nkids;
                for (snode *c = st->kids + g; g < lim; g++, c++)
                    if (c->qmask[0] && quoted_key_is(c, p + 1)) {
                        k = (int)g;
                        kid = c;
                        st->guess = g + 1;
                        klen = c->nlen;
                        break;
                    }
            }
            if (k >= 0) {
                s = p + 1;
                p += klen + 2;
            } else {
                bool esc;
                if ((rc = scan_string(sh, &p, &s, &klen, &esc)) != 0)
                    return rc;
                if (esc) {
                    if ((rc = decode_string(&sh->keybuf, s, klen)) < 0)
                        return rc;
                    s = sh->keybuf.data;
                    klen = sh->keybuf.len;
                }
                /* a decoded key lives in keybuf, not the record: compare it byte by byte */
                k = lookup_kid(st, s, klen, esc ? s + klen : sh->end);
                if (k >= 0)
                    kid = &st->kids[k];
            }
            if (p >= end || *p != ':') {
                p = skip_ws(p, end);
                if (p >= end || *p != ':')
                    return malformed(sh, p, "expected ':' after object key");
            }
            p = skip_ws(p + 1, end);
            if (k >= 0) {
                if (seen[k] == stamp) {
                    char path[256];
                    return rej(sh, FLOE_REJECT_DUPLICATE_KEY, kpos,
                               "duplicate key for field '%s'", path_of(kid, path, sizeof path));
                }
                seen[k] = stamp;
                nseen++;
                if (p >= end)
                    return malformed(sh, p, "expected a value");
                if ((rc = shred_value_quick(sh, kid, &p, rep)) != 0)
                    return rc;
            } else {
                if (sh->opt.unknown == FLOE_UNKNOWN_REJECT) {
                    char parent[256];
                    int shown = (int)(klen > 100 ? 100 : klen);
                    if (duplicate_in_object(sh, *pp, st))
                        return REJ;
                    if (st->f)
                        return rej(sh, FLOE_REJECT_UNKNOWN_FIELD, kpos, "unknown field '%s.%.*s'",
                                   path_of(st, parent, sizeof parent), shown, (const char *)s);
                    return rej(sh, FLOE_REJECT_UNKNOWN_FIELD, kpos, "unknown field '%.*s'", shown,
                               (const char *)s);
                }
                if ((rc = note_unknown(sh, st, s, klen)) != 0)
                    return rc;
                if ((rc = skip_value(sh, &p)) != 0)
                    return rc;
            }
            if (p >= end || (*p != ',' && *p != '}'))
                p = skip_ws(p, end);
            if (p < end && *p == ',') {
                if (++p < end && *p != '"')
                    p = skip_ws(p, end);
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return malformed(sh, p, "expected ',' or '}'");
        }
    }
    if (nseen < st->nkids) {
        for (uint32_t k = 0; k < st->nkids; k++) {
            if (seen[k] == stamp)
                continue;
            snode *kid = &st->kids[k];
            if (kid->wdef) {
                /* an absent field takes its write-default (format/spec.md "Default
                 * values"), shredded as if the record held it */
                const uint8_t *save_rec = sh->rec, *save_end = sh->end, *dp = kid->wdef;
                sh->rec = kid->wdef;
                sh->end = kid->wdef + kid->wdef_len;
                rc = shred_value(sh, kid, &dp, rep);
                sh->rec = save_rec;
                sh->end = save_end;
                if (rc > 0) {
                    char path[256], msg[sizeof sh->rej_msg];
                    snprintf(msg, sizeof msg, "%s", sh->rej_msg);
                    return rej(sh, sh->rej_reason, NULL, "write-default of field '%s': %s",
                               path_of(kid, path, sizeof path), msg);
                }
                if (rc < 0)
                    return rc;
                continue;
            }
            if (kid->required) {
                char path[256];
                return rej(sh, FLOE_REJECT_MISSING, NULL, "missing required field '%s'",
                           path_of(kid, path, sizeof path));
            }
            if (kid->nleaf == 1) { /* a leaf (most absent fields of a sparse record): inline */
                floe_colbuf *c = &sh->cols[kid->leaf0];
                if (c->nlevels < c->levels_cap) {
                    if (c->max_def > 0)
                        c->def[c->nlevels] = (int16_t)(kid->def - 1);
                    if (c->max_rep > 0)
                        c->rep[c->nlevels] = rep;
                    c->nlevels++;
                    continue;
                }
            }
            if ((rc = emit_null(sh, kid, (int16_t)(kid->def - 1), rep)) < 0)
                return rc;
        }
    }
    sh->depth--;
    *pp = p;
    return 0;
}

static int shred_list(floe_shredder *sh, snode *ln, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp, *end = sh->end;
    int rc;
    if (++sh->depth > sh->opt.max_depth)
        return malformed(sh, p, "nesting too deep");
    p = skip_ws(p + 1, end);
    if (p < end && *p == ']') {
        p++;
        if ((rc = emit_null(sh, ln, ln->def, rep)) < 0)
            return rc;
    } else {
        snode *el = &ln->kids[0];
        int16_t r = rep;
        for (;;) {
            if (p >= end)
                return malformed(sh, p, "expected a value");
            if ((rc = shred_value_quick(sh, el, &p, r)) != 0)
                return rc;
            r = ln->rep_inner;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == ']') {
                p++;
                break;
            }
            return malformed(sh, p, "expected ',' or ']'");
        }
    }
    sh->depth--;
    *pp = p;
    return 0;
}

/* Is the key just pushed (index `last` of the key column) equal to an earlier key of this
 * map (indexes first..last-1)? */
static bool key_equal(const floe_colbuf *c, size_t i, size_t j) {
    if (c->width)
        return !memcmp(c->values + i * (size_t)c->width, c->values + j * (size_t)c->width,
                       (size_t)c->width);
    size_t li = c->offsets[i + 1] - c->offsets[i], lj = c->offsets[j + 1] - c->offsets[j];
    return li == lj && !memcmp(c->values + c->offsets[i], c->values + c->offsets[j], li);
}

static uint32_t key_hash(const floe_colbuf *c, size_t i) {
    if (c->width)
        return name_hash(c->values + i * (size_t)c->width, (size_t)c->width);
    return name_hash(c->values + c->offsets[i], c->offsets[i + 1] - c->offsets[i]);
}

static int ht_insert(snode *m, const floe_colbuf *c, size_t first, size_t idx, bool *dup) {
    uint32_t i = key_hash(c, idx) & (m->htcap - 1);
    for (;;) {
        uint32_t s = m->ht[i];
        if (!s) {
            m->ht[i] = (uint32_t)(idx - first + 1);
            *dup = false;
            return 0;
        }
        if (key_equal(c, first + s - 1, idx)) {
            *dup = true;
            return 0;
        }
        i = (i + 1) & (m->htcap - 1);
    }
}

static int check_dup_key(floe_shredder *sh, snode *m, size_t first, bool *dup) {
    const floe_colbuf *c = &sh->cols[m->kids[0].leaf0];
    size_t idx = c->nvalues - 1, count = idx - first + 1;
    *dup = false;
    if (count <= MAP_LINEAR_MAX) {
        for (size_t j = first; j < idx; j++)
            if (key_equal(c, j, idx)) {
                *dup = true;
                return 0;
            }
        return 0;
    }
    if (count > UINT32_MAX / 4)
        return FLOE_ELIMIT;
    if (count * 2 > m->htcap || count == MAP_LINEAR_MAX + 1) {
        /* (re)build the table over all keys so far */
        uint32_t cap = m->htcap ? m->htcap : 64;
        while (cap < count * 2)
            cap *= 2;
        if (cap != m->htcap) {
            uint32_t *ht = floe_realloc(m->ht, cap * sizeof *ht);
            if (!ht)
                return FLOE_ENOMEM;
            m->ht = ht;
            m->htcap = cap;
        }
        memset(m->ht, 0, m->htcap * sizeof *m->ht);
        for (size_t j = first; j < idx; j++) {
            bool d;
            ht_insert(m, c, first, j, &d);
        }
    }
    return ht_insert(m, c, first, idx, dup);
}

static int shred_map(floe_shredder *sh, snode *m, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp, *end = sh->end;
    int rc;
    if (++sh->depth > sh->opt.max_depth)
        return malformed(sh, p, "nesting too deep");
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
        if ((rc = emit_null(sh, m, m->def, rep)) < 0)
            return rc;
    } else {
        snode *key = &m->kids[0], *val = &m->kids[1];
        size_t first = sh->cols[key->leaf0].nvalues;
        int16_t r = rep;
        for (;;) {
            const uint8_t *s, *kpos = p;
            size_t klen;
            bool esc;
            if (p >= end || *p != '"')
                return malformed(sh, p, "expected '\"' to start an object key");
            if ((rc = scan_string(sh, &p, &s, &klen, &esc)) != 0)
                return rc;
            if (esc) {
                if ((rc = decode_string(&sh->keybuf, s, klen)) < 0)
                    return rc;
                s = sh->keybuf.data;
                klen = sh->keybuf.len;
            }
            if ((rc = leaf_text(sh, key, s, klen, kpos, r)) != 0)
                return rc;
            bool dup;
            if ((rc = check_dup_key(sh, m, first, &dup)) < 0)
                return rc;
            if (dup) {
                char path[256];
                floe_buf kt; /* the key as a JSON string: a NUL or a quote shown escaped */
                floe_buf_init(&kt, 0);
                if (floe_json_append_text(&kt, s, klen > 60 ? 60 : klen) < 0) {
                    floe_buf_free(&kt);
                    return FLOE_ENOMEM;
                }
                rc = rej(sh, FLOE_REJECT_DUPLICATE_KEY, kpos, "map '%s': duplicate key %.*s",
                         path_of(m, path, sizeof path), (int)kt.len, (const char *)kt.data);
                floe_buf_free(&kt);
                return rc;
            }
            p = skip_ws(p, end);
            if (p >= end || *p != ':')
                return malformed(sh, p, "expected ':' after object key");
            p = skip_ws(p + 1, end);
            if (p >= end)
                return malformed(sh, p, "expected a value");
            if ((rc = shred_value_quick(sh, val, &p, r)) != 0)
                return rc;
            r = m->rep_inner;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return malformed(sh, p, "expected ',' or '}'");
        }
    }
    sh->depth--;
    *pp = p;
    return 0;
}

/* A variant field: the JSON value as it is, encoded (floe/variant.h) into its metadata
 * and value leaves. */
static int shred_variant(floe_shredder *sh, snode *n, const uint8_t **pp, int16_t rep) {
    const uint8_t *start = *pp, *p = start;
    int rc = skip_value(sh, &p); /* the same JSON checks as everywhere */
    if (rc != 0)
        return rc;
    floe_error err;
    floe_error_clear(&err);
    if (!sh->venc && floe_variant_encoder_new(&sh->venc, &err) < 0)
        return err.code;
    floe_buf_reset(&sh->vmeta);
    floe_buf_reset(&sh->vvalue);
    rc = floe_variant_encode_json(sh->venc, start, (size_t)(p - start), &sh->vmeta, &sh->vvalue,
                                  &err);
    if (rc == FLOE_ENOMEM)
        return rc;
    if (rc < 0) {
        char path[256];
        return rej(sh, rc == FLOE_EINVALID && strstr(err.msg, "duplicate key")
                           ? FLOE_REJECT_DUPLICATE_KEY : FLOE_REJECT_RANGE,
                   start + (err.offset > 0 ? err.offset : 0), "field '%s' at column %lld: %s",
                   path_of(n, path, sizeof path),
                   (long long)(start - sh->rec + (err.offset > 0 ? err.offset : 0) + 1), err.msg);
    }
    if ((rc = push_value(sh, n->leaf0, rep, sh->vmeta.data, sh->vmeta.len)) < 0 ||
        (rc = push_value(sh, n->leaf0 + 1, rep, sh->vvalue.data, sh->vvalue.len)) < 0)
        return rc;
    *pp = p;
    return 0;
}

/* *pp points at the first byte of a value (not whitespace, not past the end). */
static int shred_value(floe_shredder *sh, snode *n, const uint8_t **pp, int16_t rep) {
    const uint8_t *p = *pp;
    int rc;
    if (*p == 'n' && n->type == FLOE_TYPE_VARIANT && n->required)
        return shred_variant(sh, n, pp, rep); /* a variant null */
    if (*p == 'n') {
        if ((rc = expect_literal(sh, &p, "null", 4)) != 0)
            return rc;
        if (n->required) {
            char path[256];
            return rej(sh, FLOE_REJECT_MISSING, *pp, "required field '%s' is null",
                       path_of(n, path, sizeof path));
        }
        *pp = p;
        return emit_null(sh, n, (int16_t)(n->def - 1), rep);
    }
    switch (n->type) {
    case FLOE_TYPE_STRUCT:
        return *p == '{' ? shred_struct(sh, n, pp, rep) : mismatch(sh, n, p);
    case FLOE_TYPE_LIST:
        return *p == '[' ? shred_list(sh, n, pp, rep) : mismatch(sh, n, p);
    case FLOE_TYPE_MAP:
        return *p == '{' ? shred_map(sh, n, pp, rep) : mismatch(sh, n, p);
    case FLOE_TYPE_VARIANT:
        return shred_variant(sh, n, pp, rep);
    case FLOE_TYPE_UNKNOWN: { /* format/spec.md: always null, never stored */
        char path[256];
        if (found_kind(p, sh->end)[0] == 'i')
            return malformed(sh, p, "unexpected character");
        return rej(sh, FLOE_REJECT_TYPE, p, "field '%s': type unknown takes only null, found %s",
                   path_of(n, path, sizeof path), found_kind(p, sh->end));
    }
    default:
        return leaf_value(sh, n, pp, rep);
    }
}

/* ---- records ------------------------------------------------------------------------------- */

static void mark(floe_shredder *sh) {
    for (size_t j = 0; j < sh->nrep_cols; j++) {
        uint32_t i = sh->rep_cols[j];
        sh->mark_levels[i] = sh->cols[i].nlevels;
        sh->mark_values[i] = sh->cols[i].nvalues;
    }
}

/* Back to the start of the record being shredded (see mark_levels). */
static void rollback(floe_shredder *sh) {
    size_t ncols = sh->out->ncols, rows = sh->out->nrows - sh->feed_rows;
    for (size_t i = 0; i < ncols; i++) {
        floe_colbuf *c = &sh->cols[i];
        if (c->max_rep > 0) {
            floe_colbuf_truncate(c, sh->mark_levels[i], sh->mark_values[i]);
            continue;
        }
        size_t lv = sh->feed_levels[i] + rows, nv = c->nvalues;
        for (size_t j = lv; j < c->nlevels; j++) /* the record's slot, if it got one */
            nv -= c->max_def == 0 || c->def[j] == c->max_def;
        floe_colbuf_truncate(c, lv, nv);
    }
}

/* Shred one record rec[0..n) (leading whitespace allowed). Returns 0, REJ or < 0. */
static int shred_record(floe_shredder *sh, const uint8_t *rec, size_t n, floe_batch *out) {
    sh->rec = rec;
    sh->end = rec + n;
    sh->depth = 0;
    sh->lenient = false;
    if (n > sh->opt.max_record)
        return rej(sh, FLOE_REJECT_TOO_LARGE, NULL, "record of %zu bytes exceeds the %zu-byte limit",
                   n, sh->opt.max_record);
    mark(sh);
    const uint8_t *p = skip_ws(rec, sh->end);
    int rc;
    if (p < sh->end && *p == '{') {
        rc = shred_struct(sh, &sh->root, &p, 0);
        if (rc == 0) {
            p = skip_ws(p, sh->end);
            if (p < sh->end)
                rc = malformed(sh, p, "unexpected data after the record");
        }
    } else if (p < sh->end && found_kind(p, sh->end)[0] != 'i') {
        /* a JSON value that is not an object; not JSON at all (not json) is malformed */
        const uint8_t *q = p;
        rc = skip_value(sh, &q);
        if (rc == 0)
            rc = rej(sh, FLOE_REJECT_TYPE, p, "record must be a JSON object, found %s",
                     found_kind(p, sh->end));
    } else {
        rc = malformed(sh, p, "expected a JSON object");
    }
    if (rc != 0) {
        rollback(sh);
        return rc;
    }
    out->nrows++;
    return 0;
}

static int report(floe_shredder *sh, const char *source, int64_t line, int64_t offset,
                  const uint8_t *rec, size_t n, floe_reject_fn on_reject, void *ctx) {
    sh->stats.records_rejected++;
    sh->stats.rejected_by_reason[sh->rej_reason]++;
    if (!on_reject)
        return 0;
    floe_reject r = {
        .source = source,
        .line = line,
        .offset = offset,
        .column = sh->rej_column,
        .reason = sh->rej_reason,
        .message = sh->rej_msg,
        .record = rec,
        .record_len = n,
    };
    int rc = on_reject(ctx, &r);
    return rc < 0 ? rc : 0;
}

static int check_batch(floe_shredder *sh, floe_batch *out, floe_error *err) {
    if (!out || out->ncols != sh->schema->nleaves || (out->ncols && !out->cols))
        return floe_error_set(err, FLOE_EINVALID, "shredder: batch does not match the schema");
    sh->cols = out->cols;
    sh->out = out;
    sh->feed_rows = out->nrows;
    sh->nrep_cols = 0;
    for (size_t i = 0; i < out->ncols; i++) {
        if (out->cols[i].max_rep > 0)
            sh->rep_cols[sh->nrep_cols++] = (uint32_t)i;
        else
            sh->feed_levels[i] = out->cols[i].nlevels;
    }
    return 0;
}

static int hard_error(int rc, int64_t line, int64_t offset, floe_error *err) {
    if (rc == FLOE_ELIMIT)
        return floe_error_at(err, rc, offset, "line %lld: a column passed its 4 GiB limit",
                             (long long)line);
    if (rc == FLOE_ENOMEM)
        return floe_error_at(err, rc, offset, "line %lld: out of memory while shredding",
                             (long long)line);
    return floe_error_at(err, rc, offset, "line %lld: stopped by the reject callback",
                         (long long)line);
}

int floe_shredder_feed(floe_shredder *sh, const uint8_t *chunk, size_t n, const char *source,
                       int64_t first_line, int64_t first_offset, floe_batch *out,
                       floe_reject_fn on_reject, void *ctx, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_batch(sh, out, err));
    const uint8_t *p = chunk, *end = chunk + n;
    int64_t line = first_line;
    sh->stats.bytes += n;
    sh->nl_is_ws = false;
    /* Speculation: a line that starts with '{' is parsed against the end of the chunk, not
     * of its line, so the line is not scanned for its newline first. That is safe because
     * nothing in a record can cross a newline (whitespace stops at it, a string rejects
     * it, a number or literal ends before it): the parse ends inside the line, and then
     * only blanks may remain before the newline. Anything else (a rejection, a line too
     * long) is rolled back and redone the exact way below, so results and messages are
     * the same. Unknown-field paths (COLLECT) cannot be rolled back: no speculation. */
    bool speculate = sh->opt.unknown != FLOE_UNKNOWN_COLLECT;
    while (p < end) {
        if (speculate && *p == '{') {
            uint64_t unknown = sh->stats.unknown_fields;
            /* records are read once, in order: ask for the bytes a few records ahead
             * (the hardware prefetcher stops at each 4 KiB page) */
            if (end - p > 2048)
                __builtin_prefetch(p + 2048);
            const uint8_t *q = p;
            sh->rec = p;
            sh->end = end;
            sh->depth = 0;
            sh->lenient = false;
            mark(sh);
            if (shred_struct(sh, &sh->root, &q, 0) == 0) {
                while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
                    q++;
                size_t len = (size_t)(q - p);
                if (len && q[-1] == '\r')
                    len--;
                if ((q == end || *q == '\n') && len <= sh->opt.max_record) {
                    out->nrows++;
                    sh->stats.records_accepted++;
                    p = q < end ? q + 1 : end;
                    line++;
                    continue;
                }
            }
            rollback(sh);
            sh->stats.unknown_fields = unknown;
        }
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        size_t len = (size_t)(le - p);
        if (len && p[len - 1] == '\r')
            len--;
        const uint8_t *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == p + len) {
            sh->stats.blank_lines++;
        } else {
            int64_t offset = first_offset + (int64_t)(p - chunk);
            int rc = shred_record(sh, p, len, out);
            if (rc == 0) {
                sh->stats.records_accepted++;
            } else if (rc == REJ) {
                rc = report(sh, source, line, offset, p, len, on_reject, ctx);
                if (rc < 0)
                    return hard_error(rc, line, offset, err);
            } else {
                return hard_error(rc, line, offset, err);
            }
        }
        p = nl ? nl + 1 : end;
        line++;
    }
    return 0;
}

int floe_shredder_feed_array_part(floe_shredder *sh, const uint8_t *body, size_t n,
                                  const char *source, int64_t first_offset, size_t *pos,
                                  size_t max_bytes, floe_batch *out, floe_reject_fn on_reject,
                                  void *ctx, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(check_batch(sh, out, err));
    const uint8_t *end = body + n;
    sh->nl_is_ws = true; /* a JSON text: newlines are whitespace */
    const uint8_t *p, *q;
    int rc;
    if (*pos == 0) {
        /* pass 1: the structure of the whole body, without UTF-8 or type checks (those
         * are per element and reject only their element) */
        sh->rec = body;
        sh->end = end;
        sh->depth = -1; /* the array itself does not count against the records' nesting */
        sh->lenient = true;
        p = skip_ws(body, end);
        if (p >= end || *p != '[')
            return floe_error_at(err, FLOE_ECORRUPT, first_offset + (p - body),
                                 "%s: body is not a JSON array", source ? source : "input");
        q = p;
        rc = skip_value(sh, &q);
        if (rc == 0 && skip_ws(q, end) != end)
            rc = malformed(sh, skip_ws(q, end), "unexpected data after the array");
        sh->lenient = false;
        if (rc != 0)
            return floe_error_at(err, FLOE_ECORRUPT, first_offset + sh->rej_column - 1,
                                 "%s: %s", source ? source : "input", sh->rej_msg);
        sh->stats.bytes += n;
        sh->arr_line = 1;
        sh->arr_counted = 0;
        p = skip_ws(p + 1, end);
    } else {
        if (*pos > n)
            return floe_error_set(err, FLOE_EINVALID, "array part: position past the body");
        p = body + *pos;
    }
    /* pass 2: each element is a record */
    const uint8_t *from = p;
    while (p < end && *p != ']' && (p == from || (size_t)(p - from) < max_bytes)) {
        const uint8_t *start = p;
        sh->rec = body;
        sh->end = end;
        sh->depth = 0;
        sh->lenient = true;
        q = p;
        skip_value(sh, &q); /* cannot fail: pass 1 checked it */
        sh->lenient = false;
        for (; sh->arr_counted < (size_t)(start - body); sh->arr_counted++)
            sh->arr_line += body[sh->arr_counted] == '\n';
        int64_t line = sh->arr_line;
        size_t len = (size_t)(q - start);
        int64_t offset = first_offset + (int64_t)(start - body);
        rc = shred_record(sh, start, len, out);
        if (rc == 0) {
            sh->stats.records_accepted++;
        } else if (rc == REJ) {
            if ((rc = report(sh, source, line, offset, start, len, on_reject, ctx)) < 0)
                return hard_error(rc, line, offset, err);
        } else {
            return hard_error(rc, line, offset, err);
        }
        p = skip_ws(q, end);
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
    }
    *pos = p < end && *p != ']' ? (size_t)(p - body) : n;
    return 0;
}

int floe_shredder_feed_array(floe_shredder *sh, const uint8_t *body, size_t n,
                             const char *source, int64_t first_offset, floe_batch *out,
                             floe_reject_fn on_reject, void *ctx, floe_error *err) {
    size_t pos = 0;
    return floe_shredder_feed_array_part(sh, body, n, source, first_offset, &pos, SIZE_MAX,
                                         out, on_reject, ctx, err);
}

/* ---- construction ----------------------------------------------------------------------- */

static size_t count_nodes(const floe_field *f) {
    size_t n = f->nchildren;
    for (size_t i = 0; i < f->nchildren; i++)
        n += count_nodes(&f->children[i]);
    return n;
}

static uint32_t count_leaves_below(const floe_field *f) {
    if (f->leaf >= 0)
        return 1;
    uint32_t n = 0;
    for (size_t i = 0; i < f->nchildren; i++)
        n += count_leaves_below(&f->children[i]);
    return n;
}

static int first_leaf(const floe_field *f) {
    if (f->leaf >= 0)
        return f->leaf;
    for (size_t i = 0; i < f->nchildren; i++) {
        int l = first_leaf(&f->children[i]);
        if (l >= 0)
            return l;
    }
    return -1;
}

/* A JSON single value (format/spec.md Appendix D: structs by field id, maps as
 * {"keys", "values"}, binary and fixed as hex) as a record holds it (json.h: structs by
 * field name, maps as objects keyed by the key's text, binary and fixed as base64). */
static json_t *default_as_record(const floe_field *f, json_t *v, int depth) {
    if (json_is_null(v) || depth > 64)
        return json_is_null(v) ? json_null() : NULL;
    switch (f->type) {
    case FLOE_TYPE_STRUCT: {
        if (!json_is_object(v))
            return NULL;
        json_t *out = json_object();
        for (size_t i = 0; out && i < f->nchildren; i++) {
            char id[16];
            snprintf(id, sizeof id, "%d", (int)f->children[i].id);
            json_t *x = json_object_get(v, id);
            if (!x)
                continue; /* left out: the field's own write-default */
            json_t *c = default_as_record(&f->children[i], x, depth + 1);
            if (!c || json_object_set_new(out, f->children[i].name, c) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    case FLOE_TYPE_LIST: {
        if (!json_is_array(v))
            return NULL;
        json_t *out = json_array();
        for (size_t i = 0; out && i < json_array_size(v); i++) {
            json_t *c = default_as_record(&f->children[0], json_array_get(v, i), depth + 1);
            if (!c || json_array_append_new(out, c) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    case FLOE_TYPE_MAP: {
        json_t *keys = json_object_get(v, "keys"), *vals = json_object_get(v, "values");
        if (!json_is_array(keys) || !json_is_array(vals) ||
            json_array_size(keys) != json_array_size(vals))
            return NULL;
        json_t *out = json_object();
        for (size_t i = 0; out && i < json_array_size(keys); i++) {
            json_t *k = default_as_record(&f->children[0], json_array_get(keys, i), depth + 1);
            json_t *c = default_as_record(&f->children[1], json_array_get(vals, i), depth + 1);
            char num[32];
            const char *kt = json_is_string(k)    ? json_string_value(k)
                             : json_is_integer(k) ? (snprintf(num, sizeof num, "%lld",
                                                              (long long)json_integer_value(k)),
                                                     num)
                                                  : NULL;
            int bad = !kt || !c || json_object_set_new(out, kt, c) < 0;
            json_decref(k);
            if (bad) {
                if (!kt)
                    json_decref(c);
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED: {
        const char *hex = json_string_value(v);
        size_t n = hex ? strlen(hex) : 1;
        if (!hex || n % 2)
            return NULL;
        uint8_t *bytes = floe_malloc(n / 2 + 1);
        floe_buf b64;
        floe_buf_init(&b64, 0);
        bool ok = bytes != NULL;
        for (size_t i = 0; ok && i < n / 2; i++) {
            unsigned x;
            ok = sscanf(hex + 2 * i, "%2x", &x) == 1 && isxdigit((unsigned char)hex[2 * i]) &&
                 isxdigit((unsigned char)hex[2 * i + 1]);
            if (ok)
                bytes[i] = (uint8_t)x;
        }
        json_t *out = NULL;
        if (ok && floe_base64_append(&b64, bytes, n / 2) == 0 &&
            floe_buf_append_byte(&b64, 0) == 0)
            out = json_string((const char *)b64.data);
        floe_free(bytes);
        floe_buf_free(&b64);
        return out;
    }
    default:
        return json_incref(v);
    }
}

/* n->wdef from field f's write-default. */
static int compile_default(snode *n, const floe_field *f, floe_error *err) {
    if (!f->write_default_json)
        return 0;
    char path[256];
    json_error_t je;
    json_t *v = json_loads(f->write_default_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    json_t *rec = v ? default_as_record(f, v, 0) : NULL;
    json_decref(v);
    if (!rec)
        return floe_error_set(err, FLOE_EINVALID, "field %s: write-default %s is not a %s value",
                              floe_field_path(f, path, sizeof path), f->write_default_json,
                              floe_type_name(f->type));
    int rc = 0;
    if (!json_is_null(rec)) {
        char *text = json_dumps(rec, JSON_ENCODE_ANY | JSON_COMPACT);
        size_t len = text ? strlen(text) : 0;
        n->wdef = text ? floe_malloc(len + 1) : NULL;
        if (n->wdef) {
            memcpy(n->wdef, text, len + 1);
            n->wdef_len = (uint32_t)len;
        } else {
            rc = floe_error_set(err, FLOE_ENOMEM, "shredder: out of memory");
        }
        free(text); /* jansson's allocation */
    }
    json_decref(rec);
    return rc;
}

static int compile(floe_shredder *sh, snode *n, const floe_field *f, bool is_root,
                   floe_error *err) {
    n->f = is_root ? NULL : f;
    n->type = f->type;
    n->required = is_root ? true : f->required;
    n->def = is_root ? 0 : f->def_level;
    n->rep_inner = (int16_t)(f->rep_level + 1);
    n->nleaf = count_leaves_below(f);
    int fl = first_leaf(f);
    n->leaf0 = fl >= 0 ? (uint32_t)fl : 0;
    n->name = f->name ? f->name : "";
    n->nlen = (uint32_t)strlen(n->name);
    memcpy(n->name8, n->name, n->nlen < 16 ? n->nlen : 16);
    bool plain = n->nlen < 16;
    for (uint32_t i = 0; i < n->nlen && plain; i++)
        plain = n->name[i] >= 0x20 && n->name[i] < 0x7f && n->name[i] != '"' && n->name[i] != '\\';
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (plain) {
        uint8_t q[16] = {0}, m[16] = {0};
        memcpy(q, n->name, n->nlen);
        q[n->nlen] = '"';
        memset(m, 0xff, n->nlen + 1);
        memcpy(n->qkey, q, 16);
        memcpy(n->qmask, m, 16);
    }
#endif
    n->quick = QUICK_NONE;
    if (!f->nchildren && !quick_off) {
        switch (f->type) {
        case FLOE_TYPE_LONG:
        case FLOE_TYPE_TIMESTAMP:
        case FLOE_TYPE_TIMESTAMPTZ:
        case FLOE_TYPE_TIMESTAMP_NS:
        case FLOE_TYPE_TIMESTAMPTZ_NS:
            n->quick = f->phys == FLOE_PHYS_INT64 ? QUICK_I64 : QUICK_NONE;
            break;
        case FLOE_TYPE_INT:
        case FLOE_TYPE_DATE:
            n->quick = f->phys == FLOE_PHYS_INT32 ? QUICK_I32 : QUICK_NONE;
            break;
        case FLOE_TYPE_DOUBLE:
            n->quick = QUICK_F64;
            break;
        case FLOE_TYPE_STRING:
            n->quick = QUICK_STR;
            break;
        default:
            break;
        }
    }
    n->digits = (f->type == FLOE_TYPE_TIMESTAMP_NS || f->type == FLOE_TYPE_TIMESTAMPTZ_NS) ? 9 : 6;
    n->hour_source = false;
    if (!is_root && !f->nchildren &&
        (f->type == FLOE_TYPE_TIMESTAMP || f->type == FLOE_TYPE_TIMESTAMPTZ ||
         f->type == FLOE_TYPE_TIMESTAMP_NS || f->type == FLOE_TYPE_TIMESTAMPTZ_NS))
        for (size_t i = 0; i < sh->opt.nhour_sources; i++)
            if (sh->opt.hour_sources[i] == f->id)
                n->hour_source = true;
    if (!is_root)
        FLOE_FORWARD_IF_ERROR(compile_default(n, f, err));
    if (f->type == FLOE_TYPE_MAP) {
        floe_type_id kt = f->children[0].type;
        if (kt == FLOE_TYPE_BOOLEAN || kt == FLOE_TYPE_FLOAT || kt == FLOE_TYPE_DOUBLE) {
            char path[256];
            return floe_error_set(err, FLOE_EUNSUPPORTED,
                                  "map '%s': %s keys have no JSON text form",
                                  floe_field_path(f, path, sizeof path), floe_type_name(kt));
        }
    }
    if (!f->nchildren)
        return 0;
    n->kids = sh->pool + sh->npool;
    n->nkids = (uint32_t)f->nchildren;
    sh->npool += f->nchildren;
    for (size_t i = 0; i < f->nchildren; i++)
        FLOE_FORWARD_IF_ERROR(compile(sh, &n->kids[i], &f->children[i], false, err));
    if (f->type == FLOE_TYPE_STRUCT) {
        uint32_t cap = 4;
        while (cap < n->nkids * 2)
            cap *= 2;
        n->slots = floe_calloc(cap, sizeof *n->slots);
        if (!n->slots)
            return floe_error_set(err, FLOE_ENOMEM, "shredder: out of memory");
        n->mask = cap - 1;
        for (uint32_t i = 0; i < n->nkids; i++) {
            uint32_t h = name_hash((const uint8_t *)n->kids[i].name, n->kids[i].nlen) & n->mask;
            while (n->slots[h])
                h = (h + 1) & n->mask;
            n->slots[h] = i + 1;
        }
        n->seen_base = (uint32_t)sh->nstamps;
        sh->nstamps += n->nkids;
    }
    return 0;
}

static void free_nodes(snode *n) {
    for (uint32_t i = 0; i < n->nkids; i++)
        free_nodes(&n->kids[i]);
    floe_free(n->slots);
    floe_free(n->ht);
    floe_free(n->wdef);
}

void floe_shredder_testing_set_stamp(floe_shredder *sh, uint64_t stamp) {
    sh->stamp = stamp;
}

void floe_shredder_free(floe_shredder *sh) {
    if (!sh)
        return;
    if (sh->pool || sh->root.slots)
        free_nodes(&sh->root);
    floe_free(sh->pool);
    floe_free(sh->stamps);
    floe_free(sh->mark_levels);
    floe_free(sh->mark_values);
    floe_free(sh->feed_levels);
    floe_free(sh->rep_cols);
    floe_buf_free(&sh->scratch);
    floe_buf_free(&sh->keybuf);
    for (size_t i = 0; i < sh->nunknown; i++)
        floe_free(sh->unknown[i].path);
    floe_free(sh->unknown);
    floe_free(sh->unknown_ht);
    if (sh->cloc)
        freelocale(sh->cloc);
    floe_variant_encoder_free(sh->venc);
    floe_buf_free(&sh->vmeta);
    floe_buf_free(&sh->vvalue);
    floe_free(sh);
}

int floe_shredder_new(const floe_schema *schema, const floe_shred_options *opts,
                      floe_shredder **out, floe_error *err) {
    int rc = 0;
    floe_shredder *sh = floe_calloc(1, sizeof *sh);
    if (!sh)
        return floe_error_set(err, FLOE_ENOMEM, "shredder: out of memory");
    sh->schema = schema;
    if (opts)
        sh->opt = *opts;
    if (!sh->opt.max_record)
        sh->opt.max_record = 1u << 20;
    if (sh->opt.max_depth <= 0)
        sh->opt.max_depth = 64;
    floe_buf_init(&sh->scratch, 0);
    floe_buf_init(&sh->keybuf, 0);
    floe_buf_init(&sh->vmeta, 0);
    floe_buf_init(&sh->vvalue, 0);
    size_t nnodes = count_nodes(&schema->root);
    size_t ncols = schema->nleaves;
    sh->pool = floe_calloc(nnodes ? nnodes : 1, sizeof *sh->pool);
    sh->mark_levels = floe_calloc(ncols ? ncols : 1, sizeof *sh->mark_levels);
    sh->mark_values = floe_calloc(ncols ? ncols : 1, sizeof *sh->mark_values);
    sh->feed_levels = floe_calloc(ncols ? ncols : 1, sizeof *sh->feed_levels);
    sh->rep_cols = floe_calloc(ncols ? ncols : 1, sizeof *sh->rep_cols);
    if (!sh->pool || !sh->mark_levels || !sh->mark_values || !sh->feed_levels || !sh->rep_cols)
        FLOE_FAIL(err, FLOE_ENOMEM, "shredder: out of memory");
    FLOE_CHECK(compile(sh, &sh->root, &schema->root, true, err));
    sh->opt.hour_sources = NULL; /* borrowed for the compile only */
    sh->opt.nhour_sources = 0;
    sh->stamps = floe_calloc(sh->nstamps ? sh->nstamps : 1, sizeof *sh->stamps);
    if (!sh->stamps)
        FLOE_FAIL(err, FLOE_ENOMEM, "shredder: out of memory");
    if (sh->opt.unknown == FLOE_UNKNOWN_COLLECT) {
        sh->unknown = floe_calloc(UNKNOWN_MAX_PATHS, sizeof *sh->unknown);
        sh->unknown_ht = floe_calloc(2 * UNKNOWN_MAX_PATHS, sizeof *sh->unknown_ht);
        if (!sh->unknown || !sh->unknown_ht)
            FLOE_FAIL(err, FLOE_ENOMEM, "shredder: out of memory");
    }
    sh->cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!sh->cloc)
        FLOE_FAIL(err, FLOE_ENOMEM, "shredder: cannot create the C locale");
    *out = sh;
    sh = NULL;
done:
    floe_shredder_free(sh);
    return rc;
}

void floe_shredder_stats(const floe_shredder *sh, floe_shred_stats *out) { *out = sh->stats; }

size_t floe_shredder_unknown_count(const floe_shredder *sh) { return sh->nunknown; }

const char *floe_shredder_unknown_name(const floe_shredder *sh, size_t i, uint64_t *seen) {
    if (i >= sh->nunknown)
        return NULL;
    if (seen)
        *seen = sh->unknown[i].seen;
    return sh->unknown[i].path;
}
