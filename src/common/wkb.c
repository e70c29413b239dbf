/*
 * wkb.c - bounding boxes of WKB geometries (floe/wkb.h).
 *
 * A recursive walk over one WKB value with every count checked against the bytes left
 * before it is used (a count is hostile: n points of k coordinates need n * k * 8
 * bytes), nesting capped at FLOE_WKB_MAX_DEPTH. The walk fills a scratch box; the
 * caller's box changes only when the whole value parsed.
 */
#include "floe/wkb.h"

#include <math.h>
#include <string.h>

typedef struct wkb_walk {
    const uint8_t *p;
    size_t n, at;
    floe_wkb_bbox box;
    floe_error *err;
} wkb_walk;

static int wkb_fail(wkb_walk *w, const char *what) {
    return floe_error_at(w->err, FLOE_ECORRUPT, (int64_t)w->at, "WKB: byte %zu: %s", w->at,
                         what);
}

static int rd_u32(wkb_walk *w, bool le, uint32_t *out) {
    if (w->n - w->at < 4)
        return wkb_fail(w, "truncated");
    const uint8_t *q = w->p + w->at;
    *out = le ? floe_load_le32(q)
              : ((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]);
    w->at += 4;
    return 0;
}

static double rd_f64(wkb_walk *w, bool le) {
    const uint8_t *q = w->p + w->at;
    uint64_t u = 0;
    if (le)
        u = floe_load_le64(q);
    else
        for (int i = 0; i < 8; i++)
            u = u << 8 | q[i];
    double d;
    memcpy(&d, &u, sizeof d);
    w->at += 8;
    return d;
}

/* npoints points of the given dimensions: their coordinates into the box. */
static int wkb_points(wkb_walk *w, bool le, uint32_t npoints, bool z, bool m) {
    size_t ncoord = 2 + (size_t)z + (size_t)m;
    if ((w->n - w->at) / (ncoord * 8) < npoints)
        return wkb_fail(w, "point count past the end of the value");
    for (uint32_t i = 0; i < npoints; i++) {
        double c[4] = {rd_f64(w, le), rd_f64(w, le), NAN, NAN};
        if (z)
            c[2] = rd_f64(w, le);
        if (m)
            c[3] = rd_f64(w, le);
        for (int d = 0; d < 4; d++) {
            if (isnan(c[d]))
                continue; /* spec: NaN coordinates do not count */
            if (!w->box.seen[d] || c[d] < w->box.min[d])
                w->box.min[d] = c[d];
            if (!w->box.seen[d] || c[d] > w->box.max[d])
                w->box.max[d] = c[d];
            w->box.seen[d] = true;
        }
    }
    return 0;
}

static int wkb_geometry(wkb_walk *w, int depth) {
    if (depth > FLOE_WKB_MAX_DEPTH)
        return wkb_fail(w, "collections nest too deeply");
    if (w->at >= w->n)
        return wkb_fail(w, "truncated");
    uint8_t order = w->p[w->at];
    if (order > 1)
        return wkb_fail(w, "byte order is neither 0 nor 1");
    w->at++;
    bool le = order == 1;
    uint32_t code;
    FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &code));
    bool z = (code & 0x80000000u) != 0, m = (code & 0x40000000u) != 0;
    if (code & 0x20000000u) { /* extended WKB: an SRID follows */
        uint32_t srid;
        FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &srid));
    }
    code &= 0x0fffffffu;
    uint32_t dim = code / 1000, kind = code % 1000;
    if (dim > 3 || kind < 1 || kind > 7)
        return wkb_fail(w, "unknown geometry type code");
    z = z || dim == 1 || dim == 3;
    m = m || dim == 2 || dim == 3;
    if (depth == 0) /* Geospatial.md lists the values' types, not their parts' */
        w->box.types |= 1u << (7 * ((unsigned)z + 2 * (unsigned)m) + kind - 1);
    if (kind == 2 || kind == 3)
        w->box.edges = true;
    uint32_t count;
    switch (kind) {
    case 1: return wkb_points(w, le, 1, z, m);
    case 2:
        FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &count));
        return wkb_points(w, le, count, z, m);
    case 3:
        FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &count));
        if ((w->n - w->at) / 4 < count)
            return wkb_fail(w, "ring count past the end of the value");
        for (uint32_t i = 0; i < count; i++) {
            uint32_t np;
            FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &np));
            FLOE_FORWARD_IF_ERROR(wkb_points(w, le, np, z, m));
        }
        return 0;
    default: /* multi-point, -linestring, -polygon, collection: whole geometries */
        FLOE_FORWARD_IF_ERROR(rd_u32(w, le, &count));
        if ((w->n - w->at) / 5 < count) /* each at least a byte order and a type */
            return wkb_fail(w, "geometry count past the end of the value");
        for (uint32_t i = 0; i < count; i++)
            FLOE_FORWARD_IF_ERROR(wkb_geometry(w, depth + 1));
        return 0;
    }
}

void floe_wkb_bbox_init(floe_wkb_bbox *b) { memset(b, 0, sizeof *b); }

int floe_wkb_bbox_add(floe_wkb_bbox *b, const uint8_t *p, size_t n, floe_error *err) {
    wkb_walk w = {.p = p, .n = n, .at = 0, .err = err};
    floe_wkb_bbox_init(&w.box);
    FLOE_FORWARD_IF_ERROR(wkb_geometry(&w, 0));
    if (w.at != n)
        return wkb_fail(&w, "bytes after the geometry");
    floe_wkb_bbox_merge(b, &w.box);
    return 0;
}

void floe_wkb_bbox_merge(floe_wkb_bbox *dst, const floe_wkb_bbox *src) {
    for (int d = 0; d < 4; d++) {
        if (!src->seen[d])
            continue;
        if (!dst->seen[d] || src->min[d] < dst->min[d])
            dst->min[d] = src->min[d];
        if (!dst->seen[d] || src->max[d] > dst->max[d])
            dst->max[d] = src->max[d];
        dst->seen[d] = true;
    }
    dst->types |= src->types;
    dst->edges = dst->edges || src->edges;
}

size_t floe_wkb_bbox_types(const floe_wkb_bbox *b, int32_t codes[FLOE_WKB_MAX_TYPES]) {
    size_t n = 0;
    for (int dim = 0; dim < 4; dim++) /* ascending: 1..7, 1001..1007, ... */
        for (int kind = 1; kind <= 7; kind++)
            if (b->types & (1u << (7 * dim + kind - 1)))
                codes[n++] = 1000 * dim + kind;
    return n;
}

bool floe_wkb_bbox_geography_ok(const floe_wkb_bbox *b) {
    return b->seen[0] && b->seen[1] && !b->edges && b->min[0] >= -180 && b->max[0] <= 180 &&
           b->min[1] >= -90 && b->max[1] <= 90;
}

static void put_f64(uint8_t *o, double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    floe_store_le64(o, u);
}

bool floe_wkb_bbox_bounds(const floe_wkb_bbox *b, uint8_t lower[32], uint8_t upper[32],
                          size_t *len) {
    if (!b->seen[0] || !b->seen[1])
        return false;
    size_t nd = b->seen[3] ? 4 : b->seen[2] ? 3 : 2;
    for (size_t d = 0; d < nd; d++) {
        /* x:y:NaN:m when m has values and z none */
        put_f64(lower + 8 * d, b->seen[d] ? b->min[d] : NAN);
        put_f64(upper + 8 * d, b->seen[d] ? b->max[d] : NAN);
    }
    *len = nd * 8;
    return true;
}
