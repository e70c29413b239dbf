/*
 * puffin.c - deletion vectors (Iceberg format v3): the Puffin container, the
 * deletion-vector-v1 blob and the portable 64-bit Roaring bitmap.
 *
 * Specs: apache/iceberg format/puffin-spec.md ("File structure", "Footer structure",
 * "deletion-vector-v1 blob type"), RoaringFormatSpec ("General layout" of 32-bit bitmaps,
 * "Extension for 64-bit implementations"), Iceberg spec "Deletion Vectors".
 *
 * Layout of a Puffin file: "PFA1", the blobs, then the footer "PFA1" payload
 * payload-size(le32) flags(4 bytes; bit 0 of byte 0: payload LZ4-compressed) "PFA1". The
 * payload is JSON: {"blobs": [{type, fields, snapshot-id, sequence-number, offset,
 * length, compression-codec?, properties?}], "properties"?}.
 *
 * A deletion-vector-v1 blob: be32 length of (magic + bitmap), magic D1 D3 39 64, the
 * bitmap, be32 CRC-32 of (magic + bitmap). The bitmap: le64 count of 32-bit bitmaps, then
 * per bitmap (keys ascending) le32 key (the positions' high 32 bits) and a 32-bit Roaring
 * bitmap of the low 32 bits.
 *
 * The decoders are strict (see puffin.h) and never trust a count before checking it
 * against the bytes left; the caps bound what a few hostile bytes can make us allocate
 * (one run container may claim 65536 positions in 6 bytes).
 */
#include "iceberg/puffin.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "codec/zstream.h"
#include "iceberg/metadata_internal.h"

enum {
    COOKIE_NO_RUN = 12346,
    COOKIE_RUN = 12347,
    NO_OFFSET_THRESHOLD = 4,
    ARRAY_MAX = 4096,
    BITSET_BYTES = 8192,
};

static const uint8_t DV_MAGIC[4] = {0xD1, 0xD3, 0x39, 0x64};

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ---------------------------------------------------------------------------------------
 * Roaring decode
 * ------------------------------------------------------------------------------------- */

typedef struct rdec {
    const uint8_t *p;
    size_t n;
    int64_t base;       /* file offset of p[0] */
    int64_t limit;
    size_t max_card;
    int64_t *pos;
    size_t npos, cap;
    floe_error *err;
} rdec;

static int bad(rdec *d, size_t at, const char *fmt, const char *what) {
    int64_t off = d->base + (int64_t)at;
    return floe_error_at(d->err, FLOE_ECORRUPT, off, "roaring bitmap: byte %" PRId64 ": %s%s",
                         off, fmt, what ? what : "");
}

static int need(rdec *d, size_t at, size_t len, const char *what) {
    if (at > d->n || d->n - at < len)
        return floe_error_at(d->err, FLOE_ECORRUPT, d->base + (int64_t)at,
                             "roaring bitmap: byte %" PRId64 ": %s needs %zu bytes, %zu left",
                             d->base + (int64_t)at, what, len, at > d->n ? 0 : d->n - at);
    return 0;
}

/* Room for card more positions, within the cap. */
static int reserve(rdec *d, size_t card, size_t at) {
    if (card > d->max_card - d->npos)
        return floe_error_at(d->err, FLOE_ELIMIT, d->base + (int64_t)at,
                             "roaring bitmap: byte %" PRId64 ": more than %zu positions",
                             d->base + (int64_t)at, d->max_card);
    if (d->npos + card <= d->cap)
        return 0;
    size_t nc = d->cap ? d->cap : 64;
    while (nc < d->npos + card)
        nc = nc > SIZE_MAX / 2 ? d->npos + card : nc * 2;
    if (nc > SIZE_MAX / sizeof *d->pos)
        return floe_error_set(d->err, FLOE_ENOMEM, "out of memory");
    int64_t *np = floe_realloc(d->pos, nc * sizeof *np);
    if (!np)
        return floe_error_set(d->err, FLOE_ENOMEM, "out of memory");
    d->pos = np;
    d->cap = nc;
    return 0;
}

/* Append one position (ascending by construction). */
static int emit(rdec *d, uint64_t v, size_t at) {
    if (v >= (uint64_t)d->limit) {
        int64_t off = d->base + (int64_t)at;
        return floe_error_at(d->err, FLOE_ECORRUPT, off, "roaring bitmap: byte %" PRId64
                             ": position %" PRIu64 " is past the data file's %" PRId64 " rows",
                             off, v, d->limit);
    }
    d->pos[d->npos++] = (int64_t)v;
    return 0;
}

/* One container of a 32-bit bitmap at d->p[*at]. */
static int container(rdec *d, size_t *at, uint64_t high, bool run, uint32_t card) {
    size_t c = *at;
    FLOE_FORWARD_IF_ERROR(reserve(d, card, c));
    if (run) {
        FLOE_FORWARD_IF_ERROR(need(d, c, 2, "run container"));
        size_t nruns = le16(d->p + c);
        FLOE_FORWARD_IF_ERROR(need(d, c + 2, 4 * nruns, "run container"));
        if (nruns == 0)
            return bad(d, c, "run container without runs", NULL);
        uint64_t total = 0;
        int64_t prev_end = -1;
        for (size_t r = 0; r < nruns; r++) {
            const uint8_t *q = d->p + c + 2 + 4 * r;
            uint32_t start = le16(q), len = (uint32_t)le16(q + 2) + 1;
            if ((int64_t)start <= prev_end)
                return bad(d, c + 2 + 4 * r, "runs overlap or are not sorted", NULL);
            if (start + len > 65536)
                return bad(d, c + 2 + 4 * r, "run goes past 65535", NULL);
            total += len;
            if (total > card)
                return bad(d, c + 2 + 4 * r, "runs hold more values than the header's "
                           "cardinality", NULL);
            for (uint32_t k = 0; k < len; k++)
                FLOE_FORWARD_IF_ERROR(emit(d, high | (start + k), c + 2 + 4 * r));
            prev_end = (int64_t)start + len - 1;
        }
        if (total != card)
            return bad(d, c, "runs hold fewer values than the header's cardinality", NULL);
        *at = c + 2 + 4 * nruns;
    } else if (card <= ARRAY_MAX) {
        FLOE_FORWARD_IF_ERROR(need(d, c, 2 * (size_t)card, "array container"));
        int32_t prev = -1;
        for (uint32_t k = 0; k < card; k++) {
            uint16_t v = le16(d->p + c + 2 * k);
            if ((int32_t)v <= prev)
                return bad(d, c + 2 * k, "array container values are not ascending", NULL);
            prev = v;
            FLOE_FORWARD_IF_ERROR(emit(d, high | v, c + 2 * k));
        }
        *at = c + 2 * (size_t)card;
    } else {
        FLOE_FORWARD_IF_ERROR(need(d, c, BITSET_BYTES, "bitset container"));
        uint32_t count = 0;
        for (size_t w = 0; w < BITSET_BYTES / 8; w++)
            count += (uint32_t)__builtin_popcountll(floe_load_le64(d->p + c + 8 * w));
        if (count != card)
            return bad(d, c, "bitset container's bit count differs from the header's "
                       "cardinality", NULL);
        for (size_t w = 0; w < BITSET_BYTES / 8; w++) {
            uint64_t word = floe_load_le64(d->p + c + 8 * w);
            while (word) {
                unsigned b = (unsigned)__builtin_ctzll(word);
                word &= word - 1;
                FLOE_FORWARD_IF_ERROR(emit(d, high | (w * 64 + b), c + 8 * w));
            }
        }
        *at = c + BITSET_BYTES;
    }
    return 0;
}

/* One 32-bit bitmap at d->p[*at] for the positions whose high 32 bits are key. */
static int bitmap32(rdec *d, size_t *at, uint32_t key) {
    size_t s = *at, c = s;
    FLOE_FORWARD_IF_ERROR(need(d, c, 4, "cookie"));
    uint32_t cookie = floe_load_le32(d->p + c);
    size_t size;
    const uint8_t *runs = NULL;
    if (cookie == COOKIE_NO_RUN) {
        FLOE_FORWARD_IF_ERROR(need(d, c + 4, 4, "container count"));
        uint32_t k = floe_load_le32(d->p + c + 4);
        if (k > 65536)
            return bad(d, c + 4, "more than 65536 containers", NULL);
        size = k;
        c += 8;
    } else if ((cookie & 0xFFFF) == COOKIE_RUN) {
        size = (cookie >> 16) + 1;
        FLOE_FORWARD_IF_ERROR(need(d, c + 4, (size + 7) / 8, "run flags"));
        runs = d->p + c + 4;
        c += 4 + (size + 7) / 8;
    } else {
        return bad(d, c, "not a Roaring bitmap (cookie is neither 12346 nor 12347)", NULL);
    }
    size_t desc = c;
    FLOE_FORWARD_IF_ERROR(need(d, desc, 4 * size, "descriptive header"));
    c += 4 * size;
    if (!runs || size >= NO_OFFSET_THRESHOLD) {
        FLOE_FORWARD_IF_ERROR(need(d, c, 4 * size, "offset header"));
        c += 4 * size;
    }
    int32_t prev = -1;
    for (size_t i = 0; i < size; i++) {
        uint16_t k16 = le16(d->p + desc + 4 * i);
        uint32_t card = (uint32_t)le16(d->p + desc + 4 * i + 2) + 1;
        if ((int32_t)k16 <= prev)
            return bad(d, desc + 4 * i, "container keys are not ascending", NULL);
        prev = k16;
        bool run = runs && (runs[i / 8] >> (i % 8) & 1);
        uint64_t high = ((uint64_t)key << 32) | ((uint64_t)k16 << 16);
        FLOE_FORWARD_IF_ERROR(container(d, &c, high, run, card));
    }
    *at = c;
    return 0;
}

int floe_roaring64_decode(const uint8_t *p, size_t n, int64_t base, int64_t limit,
                          size_t max_card, floe_dv_positions *out, floe_error *err) {
    rdec d = {.p = p, .n = n, .base = base, .limit = limit < 0 ? 0 : limit,
              .max_card = max_card, .err = err};
    size_t at = 0;
    int rc = 0;
    FLOE_CHECK(need(&d, 0, 8, "bitmap count"));
    uint64_t nb = floe_load_le64(p);
    /* each 32-bit bitmap takes at least its key and an 8-byte header */
    if (nb > (n - 8) / 12)
        FLOE_CHECK(floe_error_at(err, FLOE_ECORRUPT, base, "roaring bitmap: byte %" PRId64
                                 ": %" PRIu64 " bitmaps cannot fit in %zu bytes", base, nb, n));
    at = 8;
    int64_t prev = -1;
    for (uint64_t b = 0; b < nb; b++) {
        FLOE_CHECK(need(&d, at, 4, "bitmap key"));
        uint32_t key = floe_load_le32(p + at);
        if ((int64_t)key <= prev)
            FLOE_CHECK(bad(&d, at, "bitmap keys are not ascending", NULL));
        if (key & 0x80000000u)
            FLOE_CHECK(bad(&d, at, "positions past 2^63 (key's high bit set)", NULL));
        prev = key;
        at += 4;
        FLOE_CHECK(bitmap32(&d, &at, key));
    }
    if (at != n)
        FLOE_CHECK(bad(&d, at, "bytes after the bitmap's end", NULL));
    out->pos = d.pos;
    out->n = d.npos;
    return 0;
done:
    floe_free(d.pos);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Roaring encode
 * ------------------------------------------------------------------------------------- */

typedef struct cinfo {
    uint16_t key;
    uint32_t card;
    size_t first;       /* index of its first position */
    size_t nruns;
    enum { C_ARRAY, C_BITSET, C_RUN } kind;
} cinfo;

static size_t cbytes(const cinfo *c) {
    return c->kind == C_RUN ? 2 + 4 * c->nruns : c->kind == C_ARRAY ? 2 * (size_t)c->card
                                                                   : BITSET_BYTES;
}

static int put16(floe_buf *b, uint16_t v) {
    uint8_t q[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    return floe_buf_append(b, q, 2);
}
static int put32(floe_buf *b, uint32_t v) {
    uint8_t q[4];
    floe_store_le32(q, v);
    return floe_buf_append(b, q, 4);
}

/* The 32-bit bitmap of pos[0..n) (all with the same high 32 bits). */
static int encode32(const int64_t *pos, size_t n, cinfo *cs, floe_buf *b) {
    size_t nc = 0;
    for (size_t i = 0; i < n;) {
        uint16_t key = (uint16_t)((uint64_t)pos[i] >> 16);
        size_t j = i, nruns = 0;
        while (j < n && (uint16_t)((uint64_t)pos[j] >> 16) == key) {
            if (j == i || pos[j] != pos[j - 1] + 1)
                nruns++;
            j++;
        }
        cinfo *c = &cs[nc++];
        *c = (cinfo){.key = key, .card = (uint32_t)(j - i), .first = i, .nruns = nruns};
        c->kind = c->card <= ARRAY_MAX ? C_ARRAY : C_BITSET;
        if (2 + 4 * nruns < cbytes(c))
            c->kind = C_RUN;
        i = j;
    }
    bool hasrun = false;
    for (size_t k = 0; k < nc; k++)
        hasrun |= cs[k].kind == C_RUN;
    int rc = 0;
    size_t start = b->len;
    if (hasrun) {
        rc |= put32(b, COOKIE_RUN | (uint32_t)((nc - 1) << 16));
        for (size_t k = 0; k < (nc + 7) / 8; k++) {
            uint8_t flags = 0;
            for (size_t q = k * 8; q < nc && q < k * 8 + 8; q++)
                flags |= (uint8_t)((cs[q].kind == C_RUN) << (q % 8));
            rc |= floe_buf_append_byte(b, flags);
        }
    } else {
        rc |= put32(b, COOKIE_NO_RUN);
        rc |= put32(b, (uint32_t)nc);
    }
    for (size_t k = 0; k < nc; k++) {
        rc |= put16(b, cs[k].key);
        rc |= put16(b, (uint16_t)(cs[k].card - 1));
    }
    if (!hasrun || nc >= NO_OFFSET_THRESHOLD) {
        size_t off = b->len - start + 4 * nc;
        for (size_t k = 0; k < nc; k++) {
            rc |= put32(b, (uint32_t)off);
            off += cbytes(&cs[k]);
        }
    }
    for (size_t k = 0; k < nc && rc == 0; k++) {
        const cinfo *c = &cs[k];
        const int64_t *v = pos + c->first;
        if (c->kind == C_ARRAY) {
            for (uint32_t q = 0; q < c->card; q++)
                rc |= put16(b, (uint16_t)v[q]);
        } else if (c->kind == C_RUN) {
            rc |= put16(b, (uint16_t)c->nruns);
            for (uint32_t q = 0; q < c->card;) {
                uint32_t e = q;
                while (e + 1 < c->card && v[e + 1] == v[e] + 1)
                    e++;
                rc |= put16(b, (uint16_t)v[q]);
                rc |= put16(b, (uint16_t)(e - q));
                q = e + 1;
            }
        } else {
            uint8_t words[BITSET_BYTES] = {0};
            for (uint32_t q = 0; q < c->card; q++) {
                uint16_t x = (uint16_t)v[q];
                words[x / 8] |= (uint8_t)(1u << (x % 8));
            }
            rc |= floe_buf_append(b, words, sizeof words);
        }
    }
    return rc ? FLOE_ENOMEM : 0;
}

int floe_roaring64_encode(const int64_t *pos, size_t n, floe_buf *out, floe_error *err) {
    for (size_t i = 0; i < n; i++)
        FLOE_RETURN_ERROR_IF(pos[i] < 0 || (i && pos[i] <= pos[i - 1]), err, FLOE_EINVALID,
                             "deletion vector: positions must be non-negative, sorted and "
                             "distinct (position %zu is %" PRId64 ")", i, pos[i]);
    cinfo *cs = floe_malloc(65536 * sizeof *cs);
    FLOE_RETURN_ERROR_IF(!cs, err, FLOE_ENOMEM, "out of memory");
    uint64_t nb = 0;
    for (size_t i = 0; i < n; i++)
        nb += i == 0 || (pos[i] >> 32) != (pos[i - 1] >> 32);
    uint8_t q[8];
    floe_store_le64(q, nb);
    int rc = floe_buf_append(out, q, 8);
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && (pos[j] >> 32) == (pos[i] >> 32))
            j++;
        rc = put32(out, (uint32_t)(pos[i] >> 32));
        if (rc == 0)
            rc = encode32(pos + i, j - i, cs, out);
        i = j;
    }
    floe_free(cs);
    return rc < 0 ? floe_error_set(err, FLOE_ENOMEM, "out of memory") : 0;
}

/* ---------------------------------------------------------------------------------------
 * deletion-vector-v1 blob
 * ------------------------------------------------------------------------------------- */

int floe_dv_blob_decode(const uint8_t *p, size_t n, int64_t base, int64_t limit,
                        size_t max_card, floe_dv_positions *out, floe_error *err) {
    if (n < 12)
        return floe_error_at(err, FLOE_ECORRUPT, base, "deletion vector: byte %" PRId64
                             ": %zu bytes, less than length, magic and CRC", base, n);
    uint32_t len = be32(p);
    if (len < 4 || (uint64_t)len + 8 != n)
        return floe_error_at(err, FLOE_ECORRUPT, base, "deletion vector: byte %" PRId64
                             ": length field says %" PRIu32 " bytes of magic and bitmap; the "
                             "blob holds %zu", base, len, n - 8);
    if (memcmp(p + 4, DV_MAGIC, 4))
        return floe_error_at(err, FLOE_ECORRUPT, base + 4, "deletion vector: byte %" PRId64
                             ": bad magic (want D1 D3 39 64)", base + 4);
    uint32_t want = be32(p + 4 + len), got = floe_crc32(0, p + 4, len);
    if (want != got)
        return floe_error_at(err, FLOE_ECORRUPT, base + 4 + len, "deletion vector: byte %"
                             PRId64 ": CRC-32 mismatch (stored %08" PRIx32 ", computed %08"
                             PRIx32 ")", base + 4 + (int64_t)len, want, got);
    return floe_roaring64_decode(p + 8, len - 4, base + 8, limit, max_card, out, err);
}

int floe_dv_blob_encode(const int64_t *pos, size_t n, floe_buf *out, floe_error *err) {
    size_t start = out->len;
    uint8_t head[8] = {0, 0, 0, 0, 0xD1, 0xD3, 0x39, 0x64};
    FLOE_RETURN_ERROR_IF(floe_buf_append(out, head, 8) < 0, err, FLOE_ENOMEM, "out of memory");
    FLOE_FORWARD_IF_ERROR(floe_roaring64_encode(pos, n, out, err));
    size_t len = out->len - start - 4;
    FLOE_RETURN_ERROR_IF(len > UINT32_MAX - 4, err, FLOE_ELIMIT,
                         "deletion vector: %zu bytes, too large for its length field", len);
    put_be32(out->data + start, (uint32_t)len);
    uint8_t crc[4];
    put_be32(crc, floe_crc32(0, out->data + start + 4, len));
    FLOE_RETURN_ERROR_IF(floe_buf_append(out, crc, 4) < 0, err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Puffin footer
 * ------------------------------------------------------------------------------------- */

int floe_puffin_footer_start(const uint8_t tail[FLOE_PUFFIN_TAIL], int64_t file_size,
                             int64_t *start, floe_error *err) {
    int64_t at = file_size - FLOE_PUFFIN_TAIL;
    if (file_size < 4 + 4 + FLOE_PUFFIN_TAIL)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "Puffin: %" PRId64 " bytes, too short for "
                             "a Puffin file", file_size);
    if (memcmp(tail + 8, FLOE_PUFFIN_MAGIC, 4))
        return floe_error_at(err, FLOE_ECORRUPT, at + 8, "Puffin: byte %" PRId64 ": no PFA1 "
                             "magic at the end of the file", at + 8);
    int32_t size = (int32_t)floe_load_le32(tail);
    if (size < 0 || (int64_t)size > file_size - 4 - 4 - FLOE_PUFFIN_TAIL)
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: byte %" PRId64 ": footer payload "
                             "size %" PRId32 " does not fit in the file", at, size);
    *start = at - size - 4;
    return 0;
}

static int jstr(json_t *o, const char *key, char **out, bool required, int64_t at,
                const char *what, floe_error *err) {
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (!required)
            return 0;
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s lacks \"%s\"", what,
                             key);
    }
    if (!json_is_string(v))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: \"%s\" is not a "
                             "string", what, key);
    if (!(*out = floe_strdup(json_string_value(v))))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

static int jlong(json_t *o, const char *key, int64_t *out, int64_t at, const char *what,
                 floe_error *err) {
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: \"%s\" is %s", what,
                             key, v ? "not an integer" : "missing");
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int blob_meta(json_t *b, floe_puffin_blob *out, int64_t at, int64_t blobs_end,
                     const char *what, floe_error *err) {
    if (!json_is_object(b))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s is not an object",
                             what);
    FLOE_FORWARD_IF_ERROR(jstr(b, "type", &out->type, true, at, what, err));
    FLOE_FORWARD_IF_ERROR(jlong(b, "snapshot-id", &out->snapshot_id, at, what, err));
    FLOE_FORWARD_IF_ERROR(jlong(b, "sequence-number", &out->sequence_number, at, what, err));
    FLOE_FORWARD_IF_ERROR(jlong(b, "offset", &out->offset, at, what, err));
    FLOE_FORWARD_IF_ERROR(jlong(b, "length", &out->length, at, what, err));
    json_t *fields = json_object_get(b, "fields");
    if (!json_is_array(fields))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: \"fields\" is not "
                             "a list", what);
    if (out->offset < 4 || out->length < 0 || out->offset > blobs_end ||
        out->length > blobs_end - out->offset)
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: offset %" PRId64
                             " length %" PRId64 " is outside the blobs (bytes 4..%" PRId64 ")",
                             what, out->offset, out->length, blobs_end);
    FLOE_FORWARD_IF_ERROR(jstr(b, "compression-codec", &out->compression_codec, false, at,
                               what, err));
    json_t *props = json_object_get(b, "properties");
    if (props && !json_is_object(props))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: \"properties\" is "
                             "not an object", what);
    if (props) {
        FLOE_FORWARD_IF_ERROR(jstr(props, "referenced-data-file", &out->referenced_data_file,
                                   false, at, what, err));
        char *card = NULL;
        FLOE_FORWARD_IF_ERROR(jstr(props, "cardinality", &card, false, at, what, err));
        if (card) {
            char *end = NULL;
            long long v = strtoll(card, &end, 10);
            bool ok = *card >= '0' && *card <= '9' && end && !*end && v >= 0;
            floe_free(card);
            if (!ok)
                return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer: %s: property "
                                     "cardinality is not a non-negative integer", what);
            out->has_cardinality = true;
            out->cardinality = v;
        }
    }
    return 0;
}

static int footer_json(const char *text, size_t len, int64_t at, int64_t blobs_end,
                       floe_puffin_footer *out, floe_error *err) {
    floe_metadata_json_init();
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    int rc = 0;
    if (!root)
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer payload at byte %" PRId64
                             ": bad JSON: %s (payload byte %d)", at, je.text, je.position);
    json_t *blobs = json_object_get(root, "blobs");
    if (!json_is_object(root) || !json_is_array(blobs)) {
        rc = floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer payload at byte %" PRId64
                           ": no \"blobs\" list", at);
        goto done;
    }
    size_t nb = json_array_size(blobs);
    out->blobs = floe_calloc(nb ? nb : 1, sizeof *out->blobs);
    if (!out->blobs)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    out->nblobs = nb;
    for (size_t i = 0; i < nb; i++) {
        char what[32];
        snprintf(what, sizeof what, "blobs[%zu]", i);
        FLOE_CHECK(blob_meta(json_array_get(blobs, i), &out->blobs[i], at, blobs_end, what,
                             err));
    }
    json_t *props = json_object_get(root, "properties");
    if (props && !json_is_object(props)) {
        rc = floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer payload at byte %" PRId64
                           ": \"properties\" is not an object", at);
        goto done;
    }
    if (props)
        FLOE_CHECK(jstr(props, "created-by", &out->created_by, false, at, "properties", err));
done:
    json_decref(root);
    return rc;
}

int floe_puffin_footer_decode(const uint8_t *p, size_t n, int64_t file_size,
                              floe_puffin_footer *out, floe_error *err) {
    int64_t at = file_size - (int64_t)n; /* file offset of p[0] */
    if (n < 4 + FLOE_PUFFIN_TAIL || at < 4)
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer at byte %" PRId64 ": too "
                             "short", at);
    if (memcmp(p, FLOE_PUFFIN_MAGIC, 4))
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: byte %" PRId64 ": no PFA1 magic "
                             "at the footer's start", at);
    const uint8_t *tail = p + n - FLOE_PUFFIN_TAIL;
    size_t size = floe_load_le32(tail);
    if (size != n - 4 - FLOE_PUFFIN_TAIL)
        return floe_error_at(err, FLOE_ECORRUPT, at, "Puffin: footer at byte %" PRId64 ": "
                             "payload size %zu, but the footer holds %zu", at, size,
                             n - 4 - FLOE_PUFFIN_TAIL);
    uint8_t flags = tail[4];
    if ((flags & ~1u) || tail[5] || tail[6] || tail[7])
        return floe_error_at(err, FLOE_ECORRUPT, file_size - 8, "Puffin: byte %" PRId64
                             ": unknown footer flags %02x %02x %02x %02x", file_size - 8,
                             tail[4], tail[5], tail[6], tail[7]);
    floe_puffin_footer f = {0};
    int rc = 0;
    uint8_t *plain = NULL;
    const char *text = (const char *)p + 4;
    size_t len = size;
    if (flags & 1) {
        /* one LZ4 frame; the decoded payload is capped at 64 MiB */
        floe_zstream_options zo = {.kind = FLOE_ZSTREAM_LZ4, .cap = 64u << 20,
                                   .what = "Puffin footer payload"};
        floe_zstream *z = NULL;
        floe_buf b;
        floe_buf_init(&b, 0);
        rc = floe_zstream_new(&zo, &z, err);
        size_t inpos = 0;
        while (rc == 0) {
            if ((rc = floe_buf_reserve(&b, 64 * 1024)) < 0) {
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
                break;
            }
            size_t used = 0, produced = 0;
            rc = floe_zstream_decode(z, p + 4 + inpos, size - inpos, &used, b.data + b.len,
                                     b.cap - b.len, &produced, err);
            inpos += used;
            b.len += produced;
            if (rc == 0 && inpos == size && produced == 0)
                break;
        }
        if (rc == 0 && !floe_zstream_complete(z))
            rc = floe_error_set(err, FLOE_ECORRUPT, "lz4: the frame is cut short");
        floe_zstream_free(z);
        if (rc < 0) {
            floe_buf_free(&b);
            floe_error_prefix(err, "Puffin: footer payload at byte %" PRId64 ": ", at + 4);
            if (rc == FLOE_ECORRUPT && err && err->offset < 0)
                err->offset = at + 4; /* the frame names no position; its start does */
            return rc;
        }
        plain = (uint8_t *)floe_buf_detach(&b, &len);
        text = (const char *)plain;
    }
    rc = footer_json(text ? text : "", len, at + 4, at, &f, err);
    floe_free(plain);
    if (rc < 0) {
        floe_puffin_footer_free(&f);
        return rc;
    }
    *out = f;
    return 0;
}

void floe_puffin_footer_free(floe_puffin_footer *f) {
    if (!f)
        return;
    for (size_t i = 0; i < f->nblobs; i++) {
        floe_free(f->blobs[i].type);
        floe_free(f->blobs[i].compression_codec);
        floe_free(f->blobs[i].referenced_data_file);
    }
    floe_free(f->blobs);
    floe_free(f->created_by);
    memset(f, 0, sizeof *f);
}

/* ---------------------------------------------------------------------------------------
 * Reading and writing deletion vectors
 * ------------------------------------------------------------------------------------- */

/* An open Puffin file and its footer, decoded once; blobs indexed by offset. */
struct floe_dv_file {
    floe_input *in;
    char *uri;
    floe_puffin_footer f;
    size_t *by_offset; /* blob indexes ordered by (offset, footer order) */
};

void floe_dv_file_close(floe_dv_file *d) {
    if (!d)
        return;
    floe_input_close(d->in);
    floe_puffin_footer_free(&d->f);
    floe_free(d->by_offset);
    floe_free(d->uri);
    floe_free(d);
}

static int cmp_blob_offset(const void *a, const void *b, void *ctx) {
    const floe_puffin_blob *blobs = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int64_t x = blobs[i].offset, y = blobs[j].offset;
    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j);
}

int floe_dv_file_open(floe_io *io, const char *uri, floe_dv_file **out, floe_error *err) {
    uint8_t *buf = NULL;
    int rc = 0;
    floe_dv_file *d = floe_calloc(1, sizeof *d);
    if (!d || !(d->uri = floe_strdup(uri)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_input_open(io, uri, &d->in, err));
    int64_t size = floe_input_size(d->in);
    uint8_t head[4] = {0}, tail[FLOE_PUFFIN_TAIL];
    if (size >= 4)
        FLOE_CHECK(floe_input_read_at(d->in, 0, head, 4, err));
    if (size < 4 || memcmp(head, FLOE_PUFFIN_MAGIC, 4))
        FLOE_FAIL(err, FLOE_ECORRUPT, "not a Puffin file (no PFA1 magic at byte 0): a bare "
                  "deletion vector blob, as early writers made, is not a valid format v3 "
                  "delete file");
    if (size >= FLOE_PUFFIN_TAIL)
        FLOE_CHECK(floe_input_read_at(d->in, size - FLOE_PUFFIN_TAIL, tail, FLOE_PUFFIN_TAIL,
                                      err));
    else
        memset(tail, 0, sizeof tail);
    int64_t start;
    FLOE_CHECK(floe_puffin_footer_start(tail, size, &start, err));
    size_t flen = (size_t)(size - start);
    if (!(buf = floe_malloc(flen)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_input_read_at(d->in, start, buf, flen, err));
    FLOE_CHECK(floe_puffin_footer_decode(buf, flen, size, &d->f, err));
    if (!(d->by_offset = floe_malloc((d->f.nblobs ? d->f.nblobs : 1) * sizeof *d->by_offset)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < d->f.nblobs; i++)
        d->by_offset[i] = i;
    qsort_r(d->by_offset, d->f.nblobs, sizeof *d->by_offset, cmp_blob_offset, d->f.blobs);
    *out = d;
    d = NULL;
done:
    if (rc < 0)
        floe_error_prefix(err, "%s: ", uri);
    floe_free(buf);
    floe_dv_file_close(d);
    return rc;
}

/* The first blob in footer order at offset, or NULL. */
static const floe_puffin_blob *blob_at(const floe_dv_file *d, int64_t offset) {
    size_t lo = 0, hi = d->f.nblobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->f.blobs[d->by_offset[mid]].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->f.nblobs && d->f.blobs[d->by_offset[lo]].offset == offset)
        return &d->f.blobs[d->by_offset[lo]];
    return NULL;
}

int floe_dv_file_read(floe_dv_file *d, int64_t offset, int64_t length,
                      const char *referenced_data_file, int64_t limit, floe_dv_positions *out,
                      floe_error *err) {
    uint8_t *buf = NULL;
    int rc = 0;
    const floe_puffin_blob *b = blob_at(d, offset);
    if (!b)
        FLOE_FAIL(err, FLOE_ECORRUPT, "the footer lists no blob at byte %" PRId64
                  " (the manifest's content_offset)", offset);
    if (strcmp(b->type, "deletion-vector-v1"))
        FLOE_FAIL(err, FLOE_ECORRUPT, "the blob at byte %" PRId64 " is a %s, not a "
                  "deletion-vector-v1", offset, b->type);
    if (b->length != length)
        FLOE_FAIL(err, FLOE_ECORRUPT, "the blob at byte %" PRId64 " is %" PRId64 " bytes, the "
                  "manifest's content_size_in_bytes says %" PRId64, offset, b->length, length);
    if (b->compression_codec)
        FLOE_FAIL(err, FLOE_ECORRUPT, "the deletion vector at byte %" PRId64 " is compressed "
                  "(%s); deletion-vector-v1 blobs never are", offset, b->compression_codec);
    /* a relative path in the blob (as early writers of tables with relative locations
     * made) cannot be compared with the manifest's resolved one */
    if (referenced_data_file && b->referenced_data_file &&
        (b->referenced_data_file[0] == '/' || strstr(b->referenced_data_file, "://")) &&
        strcmp(referenced_data_file, b->referenced_data_file))
        floe_log(FLOE_LOG_WARN, "%s: the deletion vector at byte %" PRId64 " names %s; the "
                 "manifest says it applies to %s (the manifest wins)", d->uri, offset,
                 b->referenced_data_file, referenced_data_file);
    if (!(buf = floe_malloc(length ? (size_t)length : 1)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_input_read_at(d->in, offset, buf, (size_t)length, err));
    floe_dv_positions dv;
    size_t cap = limit >= 0 && (uint64_t)limit < FLOE_DV_MAX_CARD ? (size_t)limit
                                                                  : FLOE_DV_MAX_CARD;
    FLOE_CHECK(floe_dv_blob_decode(buf, (size_t)length, offset, limit, cap, &dv, err));
    if (b->has_cardinality && b->cardinality != (int64_t)dv.n) {
        floe_free(dv.pos);
        FLOE_FAIL(err, FLOE_ECORRUPT, "the deletion vector at byte %" PRId64 " holds %zu "
                  "positions, its cardinality property says %" PRId64, offset, dv.n,
                  b->cardinality);
    }
    *out = dv;
done:
    if (rc < 0)
        floe_error_prefix(err, "%s: ", d->uri);
    floe_free(buf);
    return rc;
}

int floe_dv_read(floe_io *io, const char *uri, int64_t offset, int64_t length,
                 const char *referenced_data_file, int64_t limit, floe_dv_positions *out,
                 floe_error *err) {
    floe_dv_file *d = NULL;
    FLOE_FORWARD_IF_ERROR(floe_dv_file_open(io, uri, &d, err));
    int rc = floe_dv_file_read(d, offset, length, referenced_data_file, limit, out, err);
    floe_dv_file_close(d);
    return rc;
}

void floe_dv_cache_free(floe_dv_cache *c) {
    for (size_t i = 0; i < FLOE_DV_CACHE_SLOTS; i++)
        floe_dv_file_close(c->slot[i]);
    memset(c, 0, sizeof *c);
}

int floe_dv_cache_read(floe_dv_cache *c, floe_io *io, const char *uri, int64_t offset,
                       int64_t length, const char *referenced_data_file, int64_t limit,
                       floe_dv_positions *out, floe_error *err) {
    size_t at = FLOE_DV_CACHE_SLOTS, oldest = 0;
    for (size_t i = 0; i < FLOE_DV_CACHE_SLOTS; i++) {
        if (c->slot[i] && !strcmp(c->slot[i]->uri, uri)) {
            at = i;
            break;
        }
        if (!c->slot[i] || (c->slot[oldest] && c->used[i] < c->used[oldest]))
            oldest = i;
    }
    if (at == FLOE_DV_CACHE_SLOTS) {
        floe_dv_file *d = NULL;
        FLOE_FORWARD_IF_ERROR(floe_dv_file_open(io, uri, &d, err));
        floe_dv_file_close(c->slot[oldest]);
        c->slot[oldest] = d;
        at = oldest;
    }
    c->used[at] = ++c->tick;
    return floe_dv_file_read(c->slot[at], offset, length, referenced_data_file, limit, out, err);
}

int floe_puffin_write_dvs(floe_io *io, const char *uri, const char *const *paths,
                          const floe_dv_positions *pos, size_t n, int64_t *offsets,
                          int64_t *lengths, int64_t *size, floe_error *err) {
    floe_buf b;
    floe_buf_init(&b, 0);
    json_t *root = NULL, *blobs = NULL;
    char *text = NULL;
    int rc = 0;
    floe_metadata_json_init();
    if (floe_buf_append(&b, FLOE_PUFFIN_MAGIC, 4) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    root = json_object();
    blobs = json_array();
    if (!root || !blobs || json_object_set_new(root, "blobs", blobs) < 0) {
        json_decref(blobs);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t at = b.len;
        FLOE_CHECK(floe_dv_blob_encode(pos[i].pos, pos[i].n, &b, err));
        offsets[i] = (int64_t)at;
        lengths[i] = (int64_t)(b.len - at);
        char card[24];
        snprintf(card, sizeof card, "%zu", pos[i].n);
        json_t *bm = json_pack("{s:s, s:[i], s:i, s:i, s:I, s:I, s:{s:s, s:s}}", "type",
                               "deletion-vector-v1", "fields", 2147483645, "snapshot-id", -1,
                               "sequence-number", -1, "offset", (json_int_t)offsets[i],
                               "length", (json_int_t)lengths[i], "properties",
                               "referenced-data-file", paths[i], "cardinality", card);
        if (!bm || json_array_append_new(blobs, bm) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    json_t *props = json_pack("{s:s}", "created-by", "floe");
    if (!props || json_object_set_new(root, "properties", props) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!(text = json_dumps(root, JSON_COMPACT)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    size_t tl = strlen(text);
    uint8_t tail[FLOE_PUFFIN_TAIL] = {0};
    floe_store_le32(tail, (uint32_t)tl);
    memcpy(tail + 8, FLOE_PUFFIN_MAGIC, 4);
    if (floe_buf_append(&b, FLOE_PUFFIN_MAGIC, 4) < 0 || floe_buf_append(&b, text, tl) < 0 ||
        floe_buf_append(&b, tail, sizeof tail) < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_output_options oo = {.fsync = true, .no_overwrite = true};
    FLOE_CHECK(floe_io_write_all(io, uri, b.data, b.len, &oo, err));
    *size = (int64_t)b.len;
done:
    floe_free(text);
    json_decref(root);
    floe_buf_free(&b);
    return rc;
}
