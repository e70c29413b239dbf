/*
 * frame.c - encoding and checking WAL frames (layout in frame.h).
 *
 * Every length read back is checked against the bytes that remain before it is used; the
 * header CRC is checked before any header field is trusted, the body CRC before any
 * section is looked at.
 */
#include "frame.h"

#include <string.h>

int floe_frame_begin(floe_buf *b) {
    floe_buf_reset(b);
    int rc = floe_buf_reserve(b, FLOE_FRAME_HEADER);
    if (rc < 0)
        return rc;
    memset(b->data, 0, FLOE_FRAME_HEADER);
    b->len = FLOE_FRAME_HEADER;
    return 0;
}

int floe_frame_add_section(floe_buf *b, uint8_t kind, uint8_t codec, const void *route,
                           size_t route_len, uint32_t records, uint32_t raw_len,
                           const void *stored, size_t stored_len) {
    if (route_len > 0xFFFF || stored_len > FLOE_FRAME_MAX_BODY ||
        b->len + FLOE_SECTION_HEADER + route_len + stored_len >
            FLOE_FRAME_HEADER + (size_t)FLOE_FRAME_MAX_BODY)
        return FLOE_ELIMIT;
    int rc = floe_buf_reserve(b, FLOE_SECTION_HEADER + route_len + stored_len);
    if (rc < 0)
        return rc;
    uint8_t *h = b->data + b->len;
    h[0] = kind;
    h[1] = codec;
    h[2] = (uint8_t)route_len;
    h[3] = (uint8_t)(route_len >> 8);
    floe_store_le32(h + 4, records);
    floe_store_le32(h + 8, raw_len);
    floe_store_le32(h + 12, (uint32_t)stored_len);
    b->len += FLOE_SECTION_HEADER;
    if (route_len)
        memcpy(b->data + b->len, route, route_len);
    b->len += route_len;
    if (stored_len)
        memcpy(b->data + b->len, stored, stored_len);
    b->len += stored_len;
    /* running totals live in the header until floe_frame_end */
    uint8_t *fh = b->data;
    fh[6] = (uint8_t)(fh[6] + 1); /* section count, low byte; carried below */
    if (fh[6] == 0)
        fh[7]++;
    if (kind == FLOE_SECTION_RECORDS) {
        floe_store_le32(fh + 16, floe_load_le32(fh + 16) + records);
        floe_store_le32(fh + 20, floe_load_le32(fh + 20) + raw_len);
    }
    return 0;
}

void floe_frame_end(floe_buf *b) {
    uint8_t *h = b->data;
    floe_store_le32(h, FLOE_FRAME_MAGIC);
    h[4] = FLOE_FRAME_VERSION;
    h[5] = 0;
    size_t body = b->len - FLOE_FRAME_HEADER;
    floe_store_le32(h + 24, (uint32_t)body);
    floe_store_le32(h + 28, floe_crc32c(0, h + FLOE_FRAME_HEADER, body));
}

void floe_frame_stamp(uint8_t *frame, uint64_t frame_id, uint64_t time_ms) {
    floe_store_le64(frame + 8, frame_id);
    floe_store_le64(frame + 32, time_ms);
    floe_store_le32(frame + 40, floe_crc32c(0, frame, 40));
    floe_store_le32(frame + 44, 0);
}

int floe_frame_parse(const uint8_t *p, size_t n, floe_frame_view *out, size_t *consumed,
                     floe_error *err) {
    if (n < FLOE_FRAME_HEADER)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "frame: torn header (%zu bytes)", n);
    if (floe_load_le32(p) != FLOE_FRAME_MAGIC)
        return floe_error_at(err, FLOE_ECORRUPT, 0, "frame: bad magic");
    if (floe_load_le32(p + 40) != floe_crc32c(0, p, 40))
        return floe_error_at(err, FLOE_ECORRUPT, 40, "frame: header checksum mismatch");
    if (p[4] != FLOE_FRAME_VERSION)
        return floe_error_at(err, FLOE_ECORRUPT, 4, "frame: unsupported version %u", p[4]);
    uint32_t body = floe_load_le32(p + 24);
    if (body > FLOE_FRAME_MAX_BODY)
        return floe_error_at(err, FLOE_ECORRUPT, 24, "frame: body length %u past the cap",
                             body);
    if (body > n - FLOE_FRAME_HEADER)
        return floe_error_at(err, FLOE_ECORRUPT, 24,
                             "frame: torn body (%u bytes announced, %zu present)", body,
                             n - FLOE_FRAME_HEADER);
    const uint8_t *b = p + FLOE_FRAME_HEADER;
    if (floe_load_le32(p + 28) != floe_crc32c(0, b, body))
        return floe_error_at(err, FLOE_ECORRUPT, 28, "frame: body checksum mismatch");
    floe_frame_view v = {0};
    v.frame_id = floe_load_le64(p + 8);
    v.time_ms = floe_load_le64(p + 32);
    v.nsections = (uint32_t)p[6] | ((uint32_t)p[7] << 8);
    v.records = floe_load_le32(p + 16);
    v.raw_len = floe_load_le32(p + 20);
    v.body = b;
    v.body_len = body;
    /* Walk the sections once so iterators can trust them. */
    size_t pos = 0;
    uint32_t nsec = 0;
    uint64_t recs = 0;
    while (pos < body) {
        if (body - pos < FLOE_SECTION_HEADER)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: torn section header");
        const uint8_t *s = b + pos;
        size_t route = (size_t)s[2] | ((size_t)s[3] << 8);
        size_t stored = floe_load_le32(s + 12);
        if (s[0] < FLOE_SECTION_RECORDS || s[0] > FLOE_SECTION_ANSWER || s[1] > 1)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: bad section kind %u / codec %u", s[0], s[1]);
        if (route + stored > body - pos - FLOE_SECTION_HEADER)
            return floe_error_at(err, FLOE_ECORRUPT, (int64_t)(FLOE_FRAME_HEADER + pos),
                                 "frame: section longer than the body");
        if (s[0] == FLOE_SECTION_RECORDS)
            recs += floe_load_le32(s + 4);
        pos += FLOE_SECTION_HEADER + route + stored;
        nsec++;
    }
    if (nsec != v.nsections || recs != v.records)
        return floe_error_at(err, FLOE_ECORRUPT, 6, "frame: section count or records do not "
                             "add up");
    *out = v;
    *consumed = FLOE_FRAME_HEADER + body;
    return 0;
}

int floe_frame_next_section(const floe_frame_view *f, size_t *pos, floe_frame_section *s) {
    if (*pos >= f->body_len)
        return 0;
    const uint8_t *h = f->body + *pos;
    s->kind = h[0];
    s->codec = h[1];
    s->route_len = (size_t)h[2] | ((size_t)h[3] << 8);
    s->records = floe_load_le32(h + 4);
    s->raw_len = floe_load_le32(h + 8);
    s->stored_len = floe_load_le32(h + 12);
    s->route = h + FLOE_SECTION_HEADER;
    s->stored = s->route + s->route_len;
    *pos += FLOE_SECTION_HEADER + s->route_len + s->stored_len;
    return 1;
}

void floe_segment_header(uint8_t out[FLOE_SEGMENT_HEADER], uint64_t segno) {
    memcpy(out, "FLOEWAL1", 8);
    floe_store_le64(out + 8, segno);
}

bool floe_segment_header_ok(const uint8_t *p, size_t n, uint64_t *segno) {
    if (n < FLOE_SEGMENT_HEADER || memcmp(p, "FLOEWAL1", 8) != 0)
        return false;
    *segno = floe_load_le64(p + 8);
    return true;
}
