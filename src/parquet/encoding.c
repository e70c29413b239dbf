/*
 * encoding.c - Parquet value and level encodings (parquet-format Encodings.md):
 * RLE/bit-packing hybrid (RLE = 3), the deprecated BIT_PACKED (4) levels, PLAIN booleans,
 * DELTA_BINARY_PACKED (5), DELTA_LENGTH_BYTE_ARRAY (6), DELTA_BYTE_ARRAY (7) and
 * BYTE_STREAM_SPLIT (9).
 *
 * Invariants:
 *   - Decoders never read p[n] or past it and never write past out[count). Every run
 *     length, value count, bit width and byte length read from the input is checked
 *     against the bytes that remain (and a cap) before it is used.
 *   - Bit-packed data is unpacked 8 values at a time by one unpacker per bit width, each
 *     compiled with the width as a constant (the shifts and masks fold), chosen once per
 *     run or miniblock through a table. The fast unpackers read whole 64-bit words and so
 *     may look up to UNPACK_SLACK bytes past a group; groups that close to the end of the
 *     input are copied into a zeroed scratch block first.
 *   - DELTA arithmetic is done in unsigned integers of the column's width, so the
 *     wrap-around the spec requires ("Overflow should be allowed and handled as wrapping
 *     around in 2's complement") is defined behaviour in C.
 */
#include "parquet/encoding.h"

#include <limits.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define FLOE_ALWAYS_INLINE inline __attribute__((always_inline))

/* Bytes an 8-value unpacker may read past the start of its group beyond the group's own
 * bw bytes: the last value of a 64-bit-wide group starts 7*bw/8 bytes in and reads 9. */
#define UNPACK_SLACK 16u

/* Spec: bit-packed-run-len and rle-run-len must be in [1, 2^31 - 1]. */
#define RLE_MAX_RUN 0x7fffffffu
#define RLE_MAX_GROUPS (RLE_MAX_RUN / 8u)

/* DELTA_BINARY_PACKED block geometry we write, and the largest block a header may
 * announce. The spec allows any multiple of 128; writers in the wild use 128 (parquet-java,
 * Arrow) up to a few thousand. The cap bounds how many values one header byte can claim. */
#define DELTA_BLOCK_SIZE 128u
#define DELTA_MINIBLOCKS 4u
#define DELTA_MAX_BLOCK_SIZE 32768u

/* ---- little-endian words ------------------------------------------------------------- */

static FLOE_ALWAYS_INLINE uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static FLOE_ALWAYS_INLINE void store64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* ---- 8-value unpackers, one per width -------------------------------------------------- */

/* Value i (0..7) of bw (1..32) bits of the group at in, LSB-first (the hybrid's order);
 * w is load64(in). For bw <= 8 the whole group lives in w. */
static FLOE_ALWAYS_INLINE uint32_t group_value(const uint8_t *in, uint64_t w, const unsigned i,
                                               const unsigned bw) {
    const uint64_t mask = ((uint64_t)1 << bw) - 1;
    if (bw <= 8)
        return (uint32_t)((w >> (i * bw)) & mask);
    const unsigned bit = i * bw;
    return (uint32_t)((load64(in + (bit >> 3)) >> (bit & 7)) & mask);
}

/* Unpack 8 values of bw (1..32) bits from in[0..bw). Reads in[0 .. bw + 8). bw is a
 * compile-time constant at every call site. The eight values are written out one by one:
 * gcc -O2 keeps a loop of 8 as a loop (a variable shift per value), and for the 16-bit
 * levels went through a 32-bit scratch array whose reload missed store forwarding. */
#define UNPACK8_BODY(T)                                                                    \
    do {                                                                                   \
        const uint64_t w = load64(in);                                                     \
        out[0] = (T)group_value(in, w, 0, bw);                                             \
        out[1] = (T)group_value(in, w, 1, bw);                                             \
        out[2] = (T)group_value(in, w, 2, bw);                                             \
        out[3] = (T)group_value(in, w, 3, bw);                                             \
        out[4] = (T)group_value(in, w, 4, bw);                                             \
        out[5] = (T)group_value(in, w, 5, bw);                                             \
        out[6] = (T)group_value(in, w, 6, bw);                                             \
        out[7] = (T)group_value(in, w, 7, bw);                                             \
    } while (0)

static FLOE_ALWAYS_INLINE void unpack8_u32(const uint8_t *in, uint32_t *out, const unsigned bw) {
    UNPACK8_BODY(uint32_t);
}

/* Same for bw 1..64 into 64-bit values (DELTA_BINARY_PACKED INT64). Reads in[0 .. bw + 9). */
static FLOE_ALWAYS_INLINE void unpack8_u64(const uint8_t *in, uint64_t *out, const unsigned bw) {
    const uint64_t mask = bw == 64 ? ~(uint64_t)0 : ((uint64_t)1 << (bw & 63)) - 1;
    for (unsigned i = 0; i < 8; i++) {
        const unsigned bit = i * bw, s = bit & 7;
        uint64_t v = load64(in + (bit >> 3)) >> s;
        if (bw + s > 64) /* a value of 57+ bits starting mid-byte spills into a ninth byte */
            v |= (uint64_t)in[(bit >> 3) + 8] << ((64 - s) & 63);
        out[i] = v & mask;
    }
}

/* Levels (bw 1..16). A 16-bit value above INT16_MAX is caught by the caller. */
static FLOE_ALWAYS_INLINE void unpack8_i16(const uint8_t *in, int16_t *out, const unsigned bw) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (bw == 1) {
        /* the width of every optional flat column's levels: four bits times
         * 1 + 2^15 + 2^30 + 2^45 puts bit k at bit 16k (the four products do not overlap),
         * so one multiply and mask make four 16-bit lanes */
        const uint64_t spread = 0x0000200040008001u, lanes = 0x0001000100010001u;
        const uint64_t lo = ((uint64_t)(in[0] & 15u) * spread) & lanes;
        const uint64_t hi = ((uint64_t)(in[0] >> 4) * spread) & lanes;
        memcpy(out, &lo, 8);
        memcpy(out + 4, &hi, 8);
        return;
    }
#endif
    UNPACK8_BODY(int16_t);
}

/* Pack 8 values of bw (1..32) bits LSB-first into out[0..bw); the values fit (the caller
 * checked). Writes exactly bw bytes. */
static FLOE_ALWAYS_INLINE void pack8_u32(const uint32_t *v, uint8_t *out, const unsigned bw) {
    if (bw <= 8) {
        uint64_t w = 0;
        uint8_t word[8];
        for (unsigned i = 0; i < 8; i++)
            w |= (uint64_t)v[i] << (i * bw);
        store64(word, w);
        memcpy(out, word, bw);
    } else {
        uint64_t acc = 0;
        unsigned bits = 0;
        for (unsigned i = 0; i < 8; i++) {
            acc |= (uint64_t)v[i] << bits;
            bits += bw;
            if (bits >= 32) {
                floe_store_le32(out, (uint32_t)acc);
                out += 4;
                acc >>= 32;
                bits -= 32;
            }
        }
        for (; bits; bits -= 8, acc >>= 8)
            *out++ = (uint8_t)acc;
    }
}

#define FLOE_W_1_16(M)                                                                     \
    M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) M(16)
#define FLOE_W_17_32(M)                                                                    \
    M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) M(30)  \
    M(31) M(32)
#define FLOE_W_33_64(M)                                                                    \
    M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) M(44) M(45) M(46)  \
    M(47) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) M(58) M(59) M(60)  \
    M(61) M(62) M(63) M(64)

typedef void (*unpack_u32_fn)(const uint8_t *in, uint32_t *out, size_t groups);
typedef void (*unpack_u64_fn)(const uint8_t *in, uint64_t *out, size_t groups);
typedef void (*unpack_i16_fn)(const uint8_t *in, int16_t *out, size_t groups);
typedef void (*pack_u32_fn)(const uint32_t *v, uint8_t *out, size_t groups);

#define DEF_UNPACK_U32(B)                                                                  \
    static void unpack_u32_w##B(const uint8_t *in, uint32_t *out, size_t groups) {        \
        for (size_t g = 0; g < groups; g++)                                                \
            unpack8_u32(in + g * B, out + g * 8, B);                                       \
    }
#define DEF_UNPACK_U64(B)                                                                  \
    static void unpack_u64_w##B(const uint8_t *in, uint64_t *out, size_t groups) {        \
        for (size_t g = 0; g < groups; g++)                                                \
            unpack8_u64(in + g * B, out + g * 8, B);                                       \
    }
#define DEF_UNPACK_I16(B)                                                                  \
    static void unpack_i16_w##B(const uint8_t *in, int16_t *out, size_t groups) {         \
        for (size_t g = 0; g < groups; g++)                                                \
            unpack8_i16(in + g * B, out + g * 8, B);                                       \
    }
#define DEF_PACK_U32(B)                                                                    \
    static void pack_u32_w##B(const uint32_t *v, uint8_t *out, size_t groups) {           \
        for (size_t g = 0; g < groups; g++)                                                \
            pack8_u32(v + g * 8, out + g * B, B);                                          \
    }

FLOE_W_1_16(DEF_UNPACK_U32)
FLOE_W_17_32(DEF_UNPACK_U32)
FLOE_W_1_16(DEF_UNPACK_U64)
FLOE_W_17_32(DEF_UNPACK_U64)
FLOE_W_33_64(DEF_UNPACK_U64)
FLOE_W_1_16(DEF_UNPACK_I16)
FLOE_W_1_16(DEF_PACK_U32)
FLOE_W_17_32(DEF_PACK_U32)

#define ENT_UNPACK_U32(B) unpack_u32_w##B,
#define ENT_UNPACK_U64(B) unpack_u64_w##B,
#define ENT_UNPACK_I16(B) unpack_i16_w##B,
#define ENT_PACK_U32(B) pack_u32_w##B,

/* Index = bit width; width 0 is handled by the callers (no bytes, all zeros). */
static const unpack_u32_fn unpack_u32_table[33] = {NULL, FLOE_W_1_16(ENT_UNPACK_U32)
                                                             FLOE_W_17_32(ENT_UNPACK_U32)};
static const unpack_u64_fn unpack_u64_table[65] = {
    NULL, FLOE_W_1_16(ENT_UNPACK_U64) FLOE_W_17_32(ENT_UNPACK_U64) FLOE_W_33_64(ENT_UNPACK_U64)};
static const unpack_i16_fn unpack_i16_table[17] = {NULL, FLOE_W_1_16(ENT_UNPACK_I16)};
static const pack_u32_fn pack_u32_table[33] = {NULL, FLOE_W_1_16(ENT_PACK_U32)
                                                         FLOE_W_17_32(ENT_PACK_U32)};

/* Unpack nvals values of bw bits from in, where `avail` bytes are readable from in and
 * avail >= ceil(nvals * bw / 8) (checked by the caller). Whole groups far enough from the
 * end go through the fast unpacker in place; the rest through a zero-padded copy. */
#define DEF_UNPACK_RUN(T, SUFFIX)                                                          \
    static void unpack_run_##SUFFIX(const uint8_t *in, size_t avail, unsigned bw, T *out, \
                                    size_t nvals) {                                        \
        if (bw == 0) {                                                                     \
            memset(out, 0, nvals * sizeof(T));                                             \
            return;                                                                        \
        }                                                                                  \
        size_t groups = nvals / 8, fast = groups;                                          \
        /* usually the whole run is far from the end; else count groups that are (a div) */ \
        if (groups * bw + UNPACK_SLACK > avail) {                                          \
            fast = avail >= bw + UNPACK_SLACK ? (avail - bw - UNPACK_SLACK) / bw + 1 : 0;  \
            if (fast > groups)                                                             \
                fast = groups;                                                             \
        }                                                                                  \
        if (fast)                                                                          \
            unpack_##SUFFIX##_table[bw](in, out, fast);                                    \
        for (size_t g = fast; g * 8 < nvals; g++) {                                        \
            uint8_t tmp[64 + UNPACK_SLACK];                                                \
            T vals[8];                                                                     \
            size_t off = g * bw, have = avail > off ? avail - off : 0;                     \
            if (have > bw)                                                                 \
                have = bw;                                                                 \
            memset(tmp, 0, sizeof tmp);                                                    \
            if (have)                                                                      \
                memcpy(tmp, in + off, have);                                               \
            unpack_##SUFFIX##_table[bw](tmp, vals, 1);                                     \
            size_t k = nvals - g * 8 < 8 ? nvals - g * 8 : 8;                              \
            memcpy(out + g * 8, vals, k * sizeof(T));                                      \
        }                                                                                  \
    }

DEF_UNPACK_RUN(uint32_t, u32)
DEF_UNPACK_RUN(uint64_t, u64)
DEF_UNPACK_RUN(int16_t, i16)

/* ceil(nvals * bw / 8) without overflow for any nvals that indexes memory. */
static inline uint64_t packed_bytes(uint64_t nvals, unsigned bw) {
    return (nvals / 8) * bw + ((nvals % 8) * bw + 7) / 8;
}

/* ======================================================================================
 * RLE / bit-packing hybrid
 * ==================================================================================== */

/* Run fills in blocks of 16 stores: gcc -O2 turns a fixed-count inner loop into vector
 * stores, a plain loop over the run length stays one store per value (levels of a page
 * without nulls are one long run). */
static void fill_i16(int16_t *out, size_t n, int16_t v) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (size_t k = 0; k < 16; k++)
            out[i + k] = v;
    for (; i < n; i++)
        out[i] = v;
}

static void fill_u32(uint32_t *out, size_t n, uint32_t v) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (size_t k = 0; k < 16; k++)
            out[i + k] = v;
    for (; i < n; i++)
        out[i] = v;
}

static FLOE_ALWAYS_INLINE int rle_decode_impl(const uint8_t *p, size_t n, int bit_width,
                                              void *outv, const bool is16, size_t count,
                                              size_t *consumed, floe_error *err) {
    uint32_t *out32 = outv;
    int16_t *out16 = outv;
    const int max_bw = is16 ? 16 : 32;
    FLOE_RETURN_ERROR_IF(bit_width < 0 || bit_width > max_bw, err, FLOE_EINVALID,
                         "RLE: bit width %d out of range 0..%d", bit_width, max_bw);
    const unsigned bw = (unsigned)bit_width;
    const size_t value_bytes = (bw + 7) / 8;
    size_t pos = 0, done = 0;

    while (done < count) {
        if (pos >= n)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos,
                                 "RLE: input ends after %zu of %zu values", done, count);
        uint64_t header;
        size_t hl = floe_uvarint_get(p + pos, n - pos, &header);
        if (!hl)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos, "RLE: bad run header");
        const size_t run_at = pos;
        pos += hl;
        const size_t want = count - done;
        if (header & 1) {
            /* Bit-packed run of (header >> 1) groups of 8. The last run may announce more
             * values than remain (padding to a whole group); only the needed ones are
             * decoded, and a writer that cut the padding bytes short is tolerated. */
            const uint64_t groups = header >> 1;
            const size_t avail = n - pos;
            const size_t take = groups >= want / 8 + 1 ? want : (size_t)groups * 8;
            const uint64_t need = packed_bytes(take, bw);
            if (need > avail)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)run_at,
                                     "RLE: bit-packed run of %llu groups needs %llu bytes, "
                                     "%zu remain",
                                     (unsigned long long)groups, (unsigned long long)need,
                                     avail);
            if (is16) {
                unpack_run_i16(p + pos, avail, bw, out16 + done, take);
                if (bw == 16)
                    for (size_t i = 0; i < take; i++)
                        if (out16[done + i] < 0)
                            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)run_at,
                                                 "RLE: level %u does not fit in int16",
                                                 (unsigned)(uint16_t)out16[done + i]);
            } else {
                unpack_run_u32(p + pos, avail, bw, out32 + done, take);
            }
            const uint64_t full = groups <= avail ? groups * bw : UINT64_MAX;
            pos += full < avail ? (size_t)full : avail;
            done += take;
        } else {
            if (value_bytes > n - pos)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)run_at,
                                     "RLE: run value truncated");
            uint32_t v = 0;
            for (size_t b = 0; b < value_bytes; b++)
                v |= (uint32_t)p[pos + b] << (8 * b);
            if (bw < 32 && (v >> bw) != 0)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)run_at,
                                     "RLE: run value %u does not fit in %u bits", v, bw);
            if (is16 && v > INT16_MAX)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)run_at,
                                     "RLE: level %u does not fit in int16", v);
            pos += value_bytes;
            const uint64_t len = header >> 1;
            const size_t take = len < want ? (size_t)len : want;
            if (is16)
                fill_i16(out16 + done, take, (int16_t)v);
            else
                fill_u32(out32 + done, take, v);
            done += take;
        }
    }
    if (consumed)
        *consumed = pos;
    return 0;
}

int floe_rle_decode_u32(const uint8_t *p, size_t n, int bit_width, uint32_t *out,
                        size_t count, size_t *consumed, floe_error *err) {
    return rle_decode_impl(p, n, bit_width, out, false, count, consumed, err);
}

int floe_rle_decode_i16(const uint8_t *p, size_t n, int bit_width, int16_t *out,
                        size_t count, size_t *consumed, floe_error *err) {
    return rle_decode_impl(p, n, bit_width, out, true, count, consumed, err);
}

static inline uint32_t rle_val(const void *vals, bool is16, size_t i) {
    return is16 ? (uint32_t)(uint16_t)((const int16_t *)vals)[i] : ((const uint32_t *)vals)[i];
}

/* Append values [from, to) as bit-packed runs, padding the final group with zeros. The
 * caller guarantees (to - from) is a multiple of 8 unless `to` is the end of the input. */
static int rle_put_literals(floe_buf *out, const void *vals, bool is16, size_t from, size_t to,
                            unsigned bw) {
    while (from < to) {
        size_t groups = (to - from + 7) / 8;
        if (groups > RLE_MAX_GROUPS)
            groups = RLE_MAX_GROUPS;
        FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, 10 + groups * bw));
        uint8_t *d = out->data + out->len;
        d += floe_uvarint_put(d, ((uint64_t)groups << 1) | 1);
        size_t whole = (to - from) / 8;
        if (whole > groups)
            whole = groups;
        if (bw == 0) {
            /* nothing to write: every value is 0 */
        } else if (!is16) {
            pack_u32_table[bw]((const uint32_t *)vals + from, d, whole);
            d += whole * bw;
        } else {
            uint32_t tmp[64];
            for (size_t g = 0; g < whole; g += 8) {
                size_t k = whole - g < 8 ? whole - g : 8;
                for (size_t i = 0; i < k * 8; i++)
                    tmp[i] = rle_val(vals, true, from + g * 8 + i);
                pack_u32_table[bw](tmp, d, k);
                d += k * bw;
            }
        }
        if (whole < groups) {
            /* the final, partial group: pad with zeros past the last value */
            uint32_t tmp[8] = {0};
            size_t start = from + whole * 8;
            for (size_t i = 0; start + i < to; i++)
                tmp[i] = rle_val(vals, is16, start + i);
            if (bw) {
                pack_u32_table[bw](tmp, d, 1);
                d += bw;
            }
        }
        out->len = (size_t)(d - out->data);
        from += groups * 8 < to - from ? groups * 8 : to - from;
    }
    return 0;
}

static int rle_put_run(floe_buf *out, uint32_t v, size_t len, unsigned bw) {
    const size_t value_bytes = (bw + 7) / 8;
    while (len) {
        size_t run = len > RLE_MAX_RUN ? RLE_MAX_RUN : len;
        FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, 16));
        uint8_t *d = out->data + out->len;
        d += floe_uvarint_put(d, (uint64_t)run << 1);
        for (size_t b = 0; b < value_bytes; b++)
            *d++ = (uint8_t)(v >> (8 * b));
        out->len = (size_t)(d - out->data);
        len -= run;
    }
    return 0;
}

/* Bit k of the result: v[i+k] == v[i+k+1], for k in 0..63 (reads v[i .. i+65)). SSE2
 * compares 8 (16-bit) or 4 (32-bit) neighbours per instruction and movemask gathers the
 * bits; the scalar loop is a shift and an or per value. */
static FLOE_ALWAYS_INLINE uint64_t rle_eq_mask64(const void *vals, const bool is16, size_t i) {
#ifdef __SSE2__
    uint64_t eq = 0;
    if (is16) {
        const int16_t *v = (const int16_t *)vals + i;
        for (unsigned j = 0; j < 4; j++) {
            __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)(v + 16 * j));
            __m128i b0 = _mm_loadu_si128((const __m128i *)(const void *)(v + 16 * j + 1));
            __m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(v + 16 * j + 8));
            __m128i b1 = _mm_loadu_si128((const __m128i *)(const void *)(v + 16 * j + 9));
            __m128i c = _mm_packs_epi16(_mm_cmpeq_epi16(a0, b0), _mm_cmpeq_epi16(a1, b1));
            eq |= (uint64_t)(uint32_t)_mm_movemask_epi8(c) << (16 * j);
        }
    } else {
        const uint32_t *v = (const uint32_t *)vals + i;
        for (unsigned j = 0; j < 4; j++) {
            const uint32_t *q = v + 16 * j;
            __m128i c0 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)q),
                                         _mm_loadu_si128((const __m128i *)(const void *)(q + 1)));
            __m128i c1 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + 4)),
                                         _mm_loadu_si128((const __m128i *)(const void *)(q + 5)));
            __m128i c2 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + 8)),
                                         _mm_loadu_si128((const __m128i *)(const void *)(q + 9)));
            __m128i c3 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + 12)),
                                         _mm_loadu_si128((const __m128i *)(const void *)(q + 13)));
            __m128i c = _mm_packs_epi16(_mm_packs_epi32(c0, c1), _mm_packs_epi32(c2, c3));
            eq |= (uint64_t)(uint32_t)_mm_movemask_epi8(c) << (16 * j);
        }
    }
    return eq;
#else
    uint64_t eq = 0;
    for (size_t k = 0; k < 64; k++)
        eq |= (uint64_t)(rle_val(vals, is16, i + k) == rle_val(vals, is16, i + k + 1)) << k;
    return eq;
#endif
}

/* First s >= pos where vals[s..s+8) are all equal, or n. Branch-free over 64 values at a
 * time: bit k of `eq` says v[i+k] == v[i+k+1], and a run of 8 starts at k exactly when
 * bits k..k+6 are all set, found by and-ing shifted copies (1, then 2, then 3 = 7 bits).
 * Random data thus costs no mispredicted branch per value. */
static FLOE_ALWAYS_INLINE size_t rle_next_run8(const void *vals, const bool is16, size_t pos,
                                               size_t n) {
    size_t i = pos;
    while (i + 8 <= n) {
        const size_t span = n - i - 1 < 64 ? n - i - 1 : 64; /* comparisons in this window */
        uint64_t eq = 0;
        if (span == 64) {
            eq = rle_eq_mask64(vals, is16, i);
        } else {
            for (size_t k = 0; k < span; k++)
                eq |= (uint64_t)(rle_val(vals, is16, i + k) == rle_val(vals, is16, i + k + 1))
                      << k;
        }
        uint64_t r = eq & (eq >> 1);
        r &= r >> 2;
        r &= r >> 3;
        /* only starts whose 7 comparisons all lie in this window count: k <= span - 7 */
        const size_t valid = span - 6;
        if (valid < 64)
            r &= ((uint64_t)1 << valid) - 1;
        if (r)
            return i + (size_t)__builtin_ctzll(r);
        if (span < 64)
            break;
        i += valid;
    }
    return n;
}

/* OR of all values (to check they fit the bit width), in blocks of 16 that gcc -O2
 * vectorizes (an open-ended loop it does not). */
static FLOE_ALWAYS_INLINE uint32_t rle_or_all(const void *vals, const bool is16, size_t n) {
    uint32_t all = 0;
    size_t i = 0;
    if (is16) {
        const uint16_t *v = vals;
        uint16_t a = 0;
        for (; i + 16 <= n; i += 16)
            for (size_t k = 0; k < 16; k++)
                a |= v[i + k];
        all = a;
    } else {
        const uint32_t *v = vals;
        for (; i + 16 <= n; i += 16)
            for (size_t k = 0; k < 16; k++)
                all |= v[i + k];
    }
    for (; i < n; i++)
        all |= rle_val(vals, is16, i);
    return all;
}

/* Runs of 8 or more equal values become RLE runs; everything else is bit-packed in groups
 * of 8. A bit-packed run must hold a whole number of groups unless it ends the data (a
 * group padded mid-stream would decode as extra values), so when a long run follows a
 * ragged stretch of literals, the run lends the literals values to complete their group;
 * if what is left of the run is then shorter than 8, the whole run stays literal. */
static FLOE_ALWAYS_INLINE int rle_encode_impl(const void *vals, const bool is16, size_t n,
                                              int bit_width, floe_buf *out) {
    if (bit_width < 0 || bit_width > (is16 ? 16 : 32))
        return FLOE_EINVALID;
    const unsigned bw = (unsigned)bit_width;
    if (n == 0)
        return 0;
    const uint32_t all = rle_or_all(vals, is16, n);
    if (bw < 32 && (all >> bw) != 0)
        return FLOE_EINVALID; /* a value does not fit in bit_width bits */

    size_t pos = 0, lit = 0; /* literals pending: [lit, pos) */
    while (pos < n) {
        size_t start = rle_next_run8(vals, is16, pos, n);
        if (start >= n)
            break;
        const uint32_t v = rle_val(vals, is16, start);
        size_t end = start + 8;
        /* extend the run 16 values at a time (levels are mostly one long run) */
        while (end + 16 <= n) {
            uint32_t diff = 0;
            for (size_t k = 0; k < 16; k++)
                diff |= rle_val(vals, is16, end + k) ^ v;
            if (diff)
                break;
            end += 16;
        }
        while (end < n && rle_val(vals, is16, end) == v)
            end++;
        size_t ragged = (start - lit) & 7;
        if (ragged) {
            size_t lend = 8 - ragged;
            if (end - start - lend < 8) {
                pos = end; /* the whole run stays literal */
                continue;
            }
            start += lend;
        }
        FLOE_FORWARD_IF_ERROR(rle_put_literals(out, vals, is16, lit, start, bw));
        FLOE_FORWARD_IF_ERROR(rle_put_run(out, v, end - start, bw));
        pos = lit = end;
    }
    return rle_put_literals(out, vals, is16, lit, n, bw);
}

int floe_rle_encode_u32(const uint32_t *vals, size_t n, int bit_width, floe_buf *out) {
    return rle_encode_impl(vals, false, n, bit_width, out);
}

int floe_rle_encode_i16(const int16_t *vals, size_t n, int bit_width, floe_buf *out) {
    return rle_encode_impl(vals, true, n, bit_width, out);
}

int floe_rle_encode_repeat(uint32_t v, size_t n, int bit_width, floe_buf *out) {
    if (bit_width < 0 || bit_width > 32 || (bit_width < 32 && (v >> bit_width) != 0))
        return FLOE_EINVALID;
    if (n < 8) { /* too short for a run: the bit-packed group the general encoder writes */
        uint32_t tmp[8];
        for (size_t i = 0; i < n; i++)
            tmp[i] = v;
        return rle_encode_impl(tmp, false, n, bit_width, out);
    }
    return rle_put_run(out, v, n, (unsigned)bit_width);
}

/* ---- deprecated BIT_PACKED (MSB-first) ------------------------------------------------- */

int floe_bitpacked_decode_i16(const uint8_t *p, size_t n, int bit_width, int16_t *out,
                              size_t count, size_t *consumed, floe_error *err) {
    FLOE_RETURN_ERROR_IF(bit_width < 0 || bit_width > 16, err, FLOE_EINVALID,
                         "BIT_PACKED: bit width %d out of range 0..16", bit_width);
    const unsigned bw = (unsigned)bit_width;
    const uint64_t need = packed_bytes(count, bw);
    if (need > n)
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)n,
                             "BIT_PACKED: %zu levels of %u bits need %llu bytes, %zu present",
                             count, bw, (unsigned long long)need, n);
    const uint32_t mask = (1u << bw) - 1;
    uint64_t acc = 0;
    unsigned bits = 0;
    size_t pos = 0;
    for (size_t i = 0; i < count; i++) {
        while (bits < bw) {
            acc = (acc << 8) | p[pos++];
            bits += 8;
        }
        uint32_t v = (uint32_t)(acc >> (bits - bw)) & mask;
        bits -= bw;
        if (v > INT16_MAX)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos,
                                 "BIT_PACKED: level %u does not fit in int16", v);
        out[i] = (int16_t)v;
    }
    if (consumed)
        *consumed = (size_t)need;
    return 0;
}

/* ---- PLAIN booleans ---------------------------------------------------------------------- */

int floe_plain_bool_encode(const uint8_t *vals, size_t n, floe_buf *out) {
    size_t bytes = n / 8 + (n % 8 != 0);
    FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, bytes));
    uint8_t *d = out->data + out->len;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint8_t b = 0;
        for (unsigned k = 0; k < 8; k++)
            b |= (uint8_t)((vals[i + k] != 0) << k);
        *d++ = b;
    }
    if (i < n) {
        uint8_t b = 0;
        for (unsigned k = 0; i + k < n; k++)
            b |= (uint8_t)((vals[i + k] != 0) << k);
        *d++ = b;
    }
    out->len += bytes;
    return 0;
}

int floe_plain_bool_decode(const uint8_t *p, size_t n, uint8_t *out, size_t count,
                           size_t *consumed, floe_error *err) {
    size_t bytes = count / 8 + (count % 8 != 0);
    if (bytes > n)
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)n,
                             "PLAIN BOOLEAN: %zu values need %zu bytes, %zu present", count,
                             bytes, n);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const uint8_t b = p[i / 8];
        for (unsigned k = 0; k < 8; k++)
            out[i + k] = (b >> k) & 1;
    }
    for (unsigned k = 0; i + k < count; k++)
        out[i + k] = (p[i / 8] >> k) & 1;
    if (consumed)
        *consumed = bytes;
    return 0;
}

/* ======================================================================================
 * DELTA_BINARY_PACKED
 * ==================================================================================== */

typedef struct delta_header {
    uint64_t block_size; /* values per block, a multiple of 128 */
    uint64_t miniblocks; /* miniblocks per block */
    uint64_t per_mini;   /* values per miniblock, a multiple of 32 */
    uint64_t total;      /* value count */
    int64_t first;       /* first value */
    size_t len;          /* header bytes */
} delta_header;

static int delta_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v, const char *what,
                        floe_error *err) {
    size_t k = floe_uvarint_get(p + *pos, n - *pos, v);
    if (!k)
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)*pos,
                             "DELTA_BINARY_PACKED: bad or truncated %s", what);
    *pos += k;
    return 0;
}

/* Parse and check the header. Besides the geometry, the value count must be one the
 * input can hold: every block needs at least its min delta and its bit-width bytes. */
static int delta_header_parse(const uint8_t *p, size_t n, bool is64, delta_header *h,
                              floe_error *err) {
    size_t pos = 0;
    uint64_t zz;
    FLOE_FORWARD_IF_ERROR(delta_varint(p, n, &pos, &h->block_size, "block size", err));
    FLOE_FORWARD_IF_ERROR(delta_varint(p, n, &pos, &h->miniblocks, "miniblock count", err));
    FLOE_FORWARD_IF_ERROR(delta_varint(p, n, &pos, &h->total, "value count", err));
    FLOE_FORWARD_IF_ERROR(delta_varint(p, n, &pos, &zz, "first value", err));
    if (h->block_size == 0 || h->block_size % 128 || h->block_size > DELTA_MAX_BLOCK_SIZE)
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "DELTA_BINARY_PACKED: block size %llu is not a multiple of 128 "
                             "in 128..%u",
                             (unsigned long long)h->block_size, DELTA_MAX_BLOCK_SIZE);
    if (h->miniblocks == 0 || h->block_size % h->miniblocks ||
        (h->block_size / h->miniblocks) % 32)
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "DELTA_BINARY_PACKED: %llu miniblocks do not split a block of "
                             "%llu into multiples of 32",
                             (unsigned long long)h->miniblocks,
                             (unsigned long long)h->block_size);
    h->per_mini = h->block_size / h->miniblocks;
    h->first = floe_unzigzag64(zz);
    if (!is64 && (h->first < INT32_MIN || h->first > INT32_MAX))
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "DELTA_BINARY_PACKED: first value %lld out of INT32 range",
                             (long long)h->first);
    if (h->total > 1) {
        uint64_t blocks = (h->total - 2) / h->block_size + 1;
        if (blocks > (n - pos) / (1 + h->miniblocks))
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos,
                                 "DELTA_BINARY_PACKED: %llu values cannot fit in the %zu "
                                 "bytes that remain",
                                 (unsigned long long)h->total, n - pos);
    }
    h->len = pos;
    return 0;
}

int floe_delta_header_count(const uint8_t *p, size_t n, uint64_t *count, floe_error *err) {
    delta_header h;
    FLOE_FORWARD_IF_ERROR(delta_header_parse(p, n, true, &h, err));
    *count = h.total;
    return 0;
}

static FLOE_ALWAYS_INLINE int delta_decode_impl(const uint8_t *p, size_t n, void *outv,
                                                const bool is64, size_t count,
                                                size_t *consumed, floe_error *err) {
    uint32_t *out32 = outv;
    uint64_t *out64 = outv;
    delta_header h;
    FLOE_FORWARD_IF_ERROR(delta_header_parse(p, n, is64, &h, err));
    if (h.total != count)
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "DELTA_BINARY_PACKED: header announces %llu values, page has %zu",
                             (unsigned long long)h.total, count);
    size_t pos = h.len;
    if (count == 0) {
        if (consumed)
            *consumed = pos;
        return 0;
    }
    const unsigned max_bw = is64 ? 64 : 32;
    uint64_t last = (uint64_t)h.first;
    if (is64)
        out64[0] = last;
    else
        out32[0] = (uint32_t)last;
    size_t done = 1;
    while (done < count) {
        const size_t block_at = pos;
        uint64_t zz;
        FLOE_FORWARD_IF_ERROR(delta_varint(p, n, &pos, &zz, "min delta", err));
        const int64_t min_delta = floe_unzigzag64(zz);
        if (!is64 && (min_delta < INT32_MIN || min_delta > INT32_MAX))
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)block_at,
                                 "DELTA_BINARY_PACKED: min delta %lld out of INT32 range",
                                 (long long)min_delta);
        if (h.miniblocks > n - pos)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos,
                                 "DELTA_BINARY_PACKED: miniblock bit widths truncated");
        const uint8_t *widths = p + pos;
        pos += (size_t)h.miniblocks;
        /* Widths of miniblocks past the last value may hold anything (spec), so only the
         * ones used are checked, and unused miniblocks have no body. */
        for (size_t m = 0; m < h.miniblocks && done < count; m++) {
            const unsigned bw = widths[m];
            if (bw > max_bw)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(widths + m - p),
                                     "DELTA_BINARY_PACKED: miniblock bit width %u exceeds %u",
                                     bw, max_bw);
            const size_t take = count - done < h.per_mini ? count - done : (size_t)h.per_mini;
            const size_t avail = n - pos;
            const uint64_t need = packed_bytes(take, bw);
            if (need > avail)
                return floe_error_at(err, FLOE_ECORRUPT, (int64_t)pos,
                                     "DELTA_BINARY_PACKED: miniblock needs %llu bytes, %zu "
                                     "remain",
                                     (unsigned long long)need, avail);
            if (is64) {
                uint64_t *o = out64 + done;
                unpack_run_u64(p + pos, avail, bw, o, take);
                const uint64_t md = (uint64_t)min_delta;
                for (size_t i = 0; i < take; i++) {
                    last += md + o[i];
                    o[i] = last;
                }
            } else {
                uint32_t *o = out32 + done;
                unpack_run_u32(p + pos, avail, bw, o, take);
                const uint32_t md = (uint32_t)min_delta;
                uint32_t l = (uint32_t)last;
                for (size_t i = 0; i < take; i++) {
                    l += md + o[i];
                    o[i] = l;
                }
                last = l;
            }
            /* the last miniblock is padded to full size; tolerate a writer that cut it */
            const uint64_t full = h.per_mini / 8 * bw;
            pos += full < avail ? (size_t)full : avail;
            done += take;
        }
    }
    if (consumed)
        *consumed = pos;
    return 0;
}

int floe_delta_decode_i32(const uint8_t *p, size_t n, int32_t *out, size_t count,
                          size_t *consumed, floe_error *err) {
    return delta_decode_impl(p, n, out, false, count, consumed, err);
}

int floe_delta_decode_i64(const uint8_t *p, size_t n, int64_t *out, size_t count,
                          size_t *consumed, floe_error *err) {
    return delta_decode_impl(p, n, out, true, count, consumed, err);
}

/* Pack 32 values of bw (1..64) bits LSB-first; writes exactly 4 * bw bytes. */
static void pack32_u64(const uint64_t *v, unsigned bw, uint8_t *out) {
    if (bw <= 32) {
        uint32_t t[32];
        for (unsigned i = 0; i < 32; i++)
            t[i] = (uint32_t)v[i];
        pack_u32_table[bw](t, out, 4);
        return;
    }
    /* 33..64 bits: feed each value as its low 32 bits then the rest, so the accumulator
     * never holds more than 63 bits. */
    uint64_t acc = 0;
    unsigned bits = 0;
    for (unsigned i = 0; i < 32; i++) {
        const uint64_t parts[2] = {v[i] & 0xffffffffu, v[i] >> 32};
        const unsigned widths[2] = {32, bw - 32};
        for (unsigned k = 0; k < 2; k++) {
            acc |= parts[k] << bits;
            bits += widths[k];
            if (bits >= 32) {
                floe_store_le32(out, (uint32_t)acc);
                out += 4;
                acc >>= 32;
                bits -= 32;
            }
        }
    }
    for (; bits; bits -= 8, acc >>= 8)
        *out++ = (uint8_t)acc;
}

static FLOE_ALWAYS_INLINE int delta_encode_impl(const void *valsv, const bool is64, size_t n,
                                                floe_buf *out) {
    const int32_t *v32 = valsv;
    const int64_t *v64 = valsv;
    uint8_t hdr[40];
    size_t h = 0;
    h += floe_uvarint_put(hdr + h, DELTA_BLOCK_SIZE);
    h += floe_uvarint_put(hdr + h, DELTA_MINIBLOCKS);
    h += floe_uvarint_put(hdr + h, n);
    h += floe_uvarint_put(hdr + h, floe_zigzag64(n == 0 ? 0 : is64 ? v64[0] : v32[0]));
    FLOE_FORWARD_IF_ERROR(floe_buf_append(out, hdr, h));

    const unsigned per_mini = DELTA_BLOCK_SIZE / DELTA_MINIBLOCKS;
    uint64_t rel[DELTA_BLOCK_SIZE];
    for (size_t start = 1; start < n; start += DELTA_BLOCK_SIZE) {
        const size_t cnt = n - start < DELTA_BLOCK_SIZE ? n - start : DELTA_BLOCK_SIZE;
        int64_t min_delta;
        if (is64) {
            /* deltas wrap in uint64; the minimum is taken as signed */
            min_delta = INT64_MAX;
            for (size_t i = 0; i < cnt; i++) {
                rel[i] = (uint64_t)v64[start + i] - (uint64_t)v64[start + i - 1];
                if ((int64_t)rel[i] < min_delta)
                    min_delta = (int64_t)rel[i];
            }
            for (size_t i = 0; i < cnt; i++)
                rel[i] -= (uint64_t)min_delta;
        } else {
            /* INT32 deltas wrap in uint32 so no miniblock needs more than 32 bits */
            int32_t m32 = INT32_MAX;
            for (size_t i = 0; i < cnt; i++) {
                uint32_t d = (uint32_t)v32[start + i] - (uint32_t)v32[start + i - 1];
                rel[i] = d;
                if ((int32_t)d < m32)
                    m32 = (int32_t)d;
            }
            for (size_t i = 0; i < cnt; i++)
                rel[i] = (uint32_t)((uint32_t)rel[i] - (uint32_t)m32);
            min_delta = m32;
        }
        for (size_t i = cnt; i < DELTA_BLOCK_SIZE; i++)
            rel[i] = 0; /* padding of the last miniblock */

        FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, 10 + DELTA_MINIBLOCKS + 4 * 64 * DELTA_MINIBLOCKS));
        uint8_t *d = out->data + out->len;
        d += floe_uvarint_put(d, floe_zigzag64(min_delta));
        uint8_t *widths = d;
        d += DELTA_MINIBLOCKS;
        const size_t used = (cnt + per_mini - 1) / per_mini;
        for (size_t m = 0; m < DELTA_MINIBLOCKS; m++) {
            if (m >= used) {
                widths[m] = 0;
                continue;
            }
            uint64_t all = 0;
            for (unsigned i = 0; i < per_mini; i++)
                all |= rel[m * per_mini + i];
            const unsigned bw = (unsigned)floe_bit_width(all);
            widths[m] = (uint8_t)bw;
            if (bw) {
                pack32_u64(rel + m * per_mini, bw, d);
                d += 4 * bw;
            }
        }
        out->len = (size_t)(d - out->data);
    }
    return 0;
}

int floe_delta_encode_i32(const int32_t *vals, size_t n, floe_buf *out) {
    return delta_encode_impl(vals, false, n, out);
}

int floe_delta_encode_i64(const int64_t *vals, size_t n, floe_buf *out) {
    return delta_encode_impl(vals, true, n, out);
}

/* ======================================================================================
 * DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY
 * ==================================================================================== */

/* Decode `count` lengths into lens, check each is >= 0 and that their sum fits in what
 * follows. *data_at receives where the concatenated bytes start, *total their length. */
static int dlba_lengths(const uint8_t *p, size_t n, size_t count, int32_t *lens,
                        size_t *data_at, uint64_t *total, const char *what, floe_error *err) {
    size_t hdr = 0;
    int rc = floe_delta_decode_i32(p, n, lens, count, &hdr, err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: ", what);
        return rc;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < count; i++) {
        if (lens[i] < 0)
            return floe_error_at(err, FLOE_ECORRUPT, 0, "%s: value %zu has length %d", what,
                                 i, (int)lens[i]);
        sum += (uint32_t)lens[i];
    }
    if (sum > n - hdr)
        return floe_error_at(err, FLOE_ECORRUPT, (int64_t)hdr,
                             "%s: lengths add up to %llu bytes, %zu remain", what,
                             (unsigned long long)sum, n - hdr);
    *data_at = hdr;
    *total = sum;
    return 0;
}

int floe_delta_length_decode(const uint8_t *p, size_t n, size_t count, uint32_t *offsets,
                             floe_buf *values, size_t *consumed, floe_error *err) {
    static const char what[] = "DELTA_LENGTH_BYTE_ARRAY";
    size_t data_at;
    uint64_t total;
    /* lengths land in offsets[1..count] and become end offsets in place */
    FLOE_FORWARD_IF_ERROR(
        dlba_lengths(p, n, count, (int32_t *)(offsets + 1), &data_at, &total, what, err));
    const size_t base = values->len;
    FLOE_RETURN_ERROR_IF(base > UINT32_MAX || total > UINT32_MAX - base, err, FLOE_ELIMIT,
                         "%s: %llu value bytes overflow 32-bit offsets", what,
                         (unsigned long long)total);
    int rc = floe_buf_append(values, p + data_at, (size_t)total);
    FLOE_RETURN_ERROR_IF(rc < 0, err, rc, "%s: %llu value bytes: %s", what,
                         (unsigned long long)total, floe_strerror(rc));
    uint32_t off = (uint32_t)base;
    offsets[0] = off;
    for (size_t i = 0; i < count; i++) {
        off += offsets[i + 1];
        offsets[i + 1] = off;
    }
    if (consumed)
        *consumed = data_at + (size_t)total;
    return 0;
}

int floe_delta_byte_array_decode(const uint8_t *p, size_t n, size_t count,
                                 uint32_t *offsets, floe_buf *values, size_t *consumed,
                                 floe_error *err) {
    static const char what[] = "DELTA_BYTE_ARRAY";
    int rc = 0;
    int32_t *prefix = NULL;
    delta_header h;
    /* the header's count is checked against the input before the prefix array exists */
    rc = delta_header_parse(p, n, false, &h, err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: prefix lengths: ", what);
        return rc;
    }
    if (h.total != count)
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "%s: header announces %llu values, page has %zu", what,
                             (unsigned long long)h.total, count);
    prefix = floe_malloc((count ? count : 1) * sizeof *prefix);
    FLOE_RETURN_ERROR_IF(!prefix, err, FLOE_ENOMEM, "%s: out of memory", what);
    size_t pl_len = 0, data_at;
    uint64_t suffix_total;
    rc = floe_delta_decode_i32(p, n, prefix, count, &pl_len, err);
    if (rc < 0) {
        if (err)
            floe_error_prefix(err, "%s: prefix lengths: ", what);
        goto done;
    }
    int32_t *suffix = (int32_t *)(offsets + 1);
    FLOE_CHECK(dlba_lengths(p + pl_len, n - pl_len, count, suffix, &data_at, &suffix_total,
                            "DELTA_BYTE_ARRAY suffixes", err));
    /* Each value is the first prefix[i] bytes of the previous value plus its suffix. The
     * output size is checked in full before anything is written, since prefixes let a
     * small page describe a huge one. */
    const size_t base = values->len;
    uint64_t out_total = 0, prev_len = 0;
    for (size_t i = 0; i < count; i++) {
        if (prefix[i] < 0 || (uint64_t)prefix[i] > prev_len)
            FLOE_FAIL(err, FLOE_ECORRUPT,
                      "%s: value %zu: prefix length %d exceeds previous value's %llu", what, i,
                      (int)prefix[i], (unsigned long long)prev_len);
        prev_len = (uint64_t)prefix[i] + (uint32_t)suffix[i];
        out_total += prev_len;
        if (base > UINT32_MAX || out_total > UINT32_MAX - base)
            FLOE_FAIL(err, FLOE_ELIMIT, "%s: value bytes overflow 32-bit offsets", what);
    }
    rc = floe_buf_reserve(values, (size_t)out_total);
    if (rc < 0)
        FLOE_FAIL(err, rc, "%s: %llu value bytes: %s", what, (unsigned long long)out_total,
                  floe_strerror(rc));
    const uint8_t *sfx = p + pl_len + data_at;
    uint8_t *d = values->data + base;
    size_t prev_at = base, at = base;
    offsets[0] = (uint32_t)base;
    for (size_t i = 0; i < count; i++) {
        const size_t pl = (size_t)prefix[i], sl = (uint32_t)suffix[i];
        if (pl)
            memmove(d + (at - base), values->data + prev_at, pl);
        if (sl)
            memcpy(d + (at - base) + pl, sfx, sl);
        sfx += sl;
        prev_at = at;
        at += pl + sl;
        offsets[i + 1] = (uint32_t)at; /* suffix[i] (same slot) was read above */
    }
    values->len = at;
    if (consumed)
        *consumed = pl_len + data_at + (size_t)suffix_total;
    rc = 0;
done:
    floe_free(prefix);
    return rc;
}

/* Lengths from offsets (absolute positions in data); FLOE_EINVALID if one is negative or
 * does not fit in INT32. */
static int lengths_from_offsets(const uint32_t *offsets, size_t count, int32_t *lens) {
    for (size_t i = 0; i < count; i++) {
        if (offsets[i + 1] < offsets[i] || offsets[i + 1] - offsets[i] > INT32_MAX)
            return FLOE_EINVALID;
        lens[i] = (int32_t)(offsets[i + 1] - offsets[i]);
    }
    return 0;
}

int floe_delta_length_encode(const uint8_t *data, const uint32_t *offsets, size_t count,
                             floe_buf *out) {
    int rc;
    int32_t *lens = floe_malloc((count ? count : 1) * sizeof *lens);
    if (!lens)
        return FLOE_ENOMEM;
    FLOE_CHECK(lengths_from_offsets(offsets, count, lens));
    FLOE_CHECK(floe_delta_encode_i32(lens, count, out));
    if (count && offsets[count] > offsets[0])
        FLOE_CHECK(floe_buf_append(out, data + offsets[0], offsets[count] - offsets[0]));
done:
    floe_free(lens);
    return rc;
}

int floe_delta_byte_array_encode(const uint8_t *data, const uint32_t *offsets,
                                 size_t count, floe_buf *out) {
    int rc;
    int32_t *lens = floe_malloc((count ? count : 1) * 2 * sizeof *lens);
    if (!lens)
        return FLOE_ENOMEM;
    int32_t *prefix = lens, *suffix = lens + count;
    FLOE_CHECK(lengths_from_offsets(offsets, count, suffix));
    for (size_t i = 0; i < count; i++) {
        size_t pl = 0;
        if (i > 0) {
            const uint8_t *a = data + offsets[i - 1], *b = data + offsets[i];
            size_t max = (size_t)suffix[i - 1]; /* full length of the previous value */
            if (max > (size_t)suffix[i])
                max = (size_t)suffix[i];
            while (pl < max && a[pl] == b[pl])
                pl++;
        }
        prefix[i] = (int32_t)pl;
    }
    /* suffix[] held full lengths until every prefix was known; now the suffix lengths */
    for (size_t i = 0; i < count; i++)
        suffix[i] = (int32_t)(offsets[i + 1] - offsets[i]) - prefix[i];
    FLOE_CHECK(floe_delta_encode_i32(prefix, count, out));
    FLOE_CHECK(floe_delta_encode_i32(suffix, count, out));
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes += (size_t)suffix[i];
    FLOE_CHECK(floe_buf_reserve(out, bytes));
    for (size_t i = 0; i < count; i++) {
        if (suffix[i] == 0)
            continue;
        memcpy(out->data + out->len, data + offsets[i] + prefix[i], (size_t)suffix[i]);
        out->len += (size_t)suffix[i];
    }
done:
    floe_free(lens);
    return rc;
}

/* ======================================================================================
 * BYTE_STREAM_SPLIT: K streams of N bytes, stream k holding byte k of every value.
 * ==================================================================================== */

static FLOE_ALWAYS_INLINE void bss_scatter(const uint8_t *vals, size_t count, const size_t w,
                                           uint8_t *d) {
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < w; k++)
            d[k * count + i] = vals[i * w + k];
}

static FLOE_ALWAYS_INLINE void bss_gather(const uint8_t *p, size_t count, const size_t w,
                                          uint8_t *out) {
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < w; k++)
            out[i * w + k] = p[k * count + i];
}

int floe_bss_encode(const uint8_t *vals, size_t count, int width, floe_buf *out) {
    if (width <= 0 || count > SIZE_MAX / (size_t)width)
        return FLOE_EINVALID;
    const size_t w = (size_t)width, bytes = count * w;
    FLOE_FORWARD_IF_ERROR(floe_buf_reserve(out, bytes));
    uint8_t *d = out->data + out->len;
    switch (w) {
    case 2: bss_scatter(vals, count, 2, d); break;
    case 4: bss_scatter(vals, count, 4, d); break;
    case 8: bss_scatter(vals, count, 8, d); break;
    default: bss_scatter(vals, count, w, d); break;
    }
    out->len += bytes;
    return 0;
}

int floe_bss_decode(const uint8_t *p, size_t n, int width, uint8_t *out, size_t count,
                    floe_error *err) {
    FLOE_RETURN_ERROR_IF(width <= 0, err, FLOE_EINVALID,
                         "BYTE_STREAM_SPLIT: width %d is not positive", width);
    const size_t w = (size_t)width;
    /* The streams' stride is the value count, so the data must be exactly count * width
     * bytes: the page ends where the last stream ends (spec: no padding). */
    if (count > SIZE_MAX / w || count * w != n)
        return floe_error_at(err, FLOE_ECORRUPT, 0,
                             "BYTE_STREAM_SPLIT: %zu bytes do not hold %zu values of width %zu",
                             n, count, w);
    switch (w) {
    case 2: bss_gather(p, count, 2, out); break;
    case 4: bss_gather(p, count, 4, out); break;
    case 8: bss_gather(p, count, 8, out); break;
    default: bss_gather(p, count, w, out); break;
    }
    return 0;
}
