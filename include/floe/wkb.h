/*
 * floe/wkb.h - bounding boxes of WKB geometries (format v3 geometry columns).
 *
 * WKB as OGC Simple Features 1.2.1 defines it (ISO codes: type + 1000 for Z, 2000 for M,
 * 3000 for ZM), also the extended form PostGIS writes (Z 0x80000000, M 0x40000000 and
 * SRID 0x20000000 flags), either byte order, Point through GeometryCollection.
 *
 * The box follows format/spec.md "Bounds for Variant, Geometry, and Geography" (and the
 * Parquet Geospatial.md bounding box): per dimension x, y, z, m the least and greatest
 * coordinate of every point, NaN coordinates skipped; a dimension with no value is left
 * out, and without x or y there is no box.
 */
#ifndef FLOE_WKB_H
#define FLOE_WKB_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

/* Nesting cap for collections; deeper WKB is refused as corrupt. */
#define FLOE_WKB_MAX_DEPTH 32

/* ISO WKB type codes: kind 1 (Point) .. 7 (GeometryCollection), plus 1000 for Z, 2000
 * for M, 3000 for ZM; 28 in all. */
#define FLOE_WKB_MAX_TYPES 28

typedef struct floe_wkb_bbox {
    double min[4], max[4]; /* x, y, z, m */
    bool seen[4];          /* a non-NaN coordinate of that dimension was seen */
    uint32_t types;        /* the ISO codes of the values added (not of their parts):
                            * bit 7 * (code / 1000) + code % 1000 - 1 */
    bool edges;            /* some value holds a LineString or a Polygon (at any depth) */
} floe_wkb_bbox;

/* An empty box (no dimension seen). */
void floe_wkb_bbox_init(floe_wkb_bbox *b);

/* Widen b by every point of the WKB value p[0..n). 0, or FLOE_ECORRUPT (b unchanged)
 * when p is not one well-formed WKB geometry (truncated, trailing bytes, an unknown type
 * code, counts past the bytes there are, nesting past FLOE_WKB_MAX_DEPTH); err names the
 * byte offset in p. */
int floe_wkb_bbox_add(floe_wkb_bbox *b, const uint8_t *p, size_t n, floe_error *err)
    FLOE_NODISCARD;

/* Widen dst by src. */
void floe_wkb_bbox_merge(floe_wkb_bbox *dst, const floe_wkb_bbox *src);

/* The ISO WKB codes of the values b holds (Parquet Geospatial.md "Geospatial Types":
 * extended WKB's Z and M flags counted as ISO's 1000 and 2000), ascending, into codes;
 * returns how many. */
size_t floe_wkb_bbox_types(const floe_wkb_bbox *b, int32_t codes[FLOE_WKB_MAX_TYPES]);

/* Does b bound a geography column? format/spec.md "Bounds for Geometry and Geography" and
 * Geospatial.md "Bounding Box": a geography box must contain every object, edges
 * included, within X [-180, 180] and Y [-90, 90]. The box of the points bounds a
 * geography only when no value has an edge (edges are curves on the sphere and may
 * leave it, across a pole or the antimeridian) and every point is in those ranges; then
 * xmin <= xmax (floe never writes a box that wraps the antimeridian). false also when
 * the box has no x or no y. */
bool floe_wkb_bbox_geography_ok(const floe_wkb_bbox *b);

/* The box as the manifest's lower and upper bound (Appendix D "Bound serialization":
 * x:y, x:y:z, or x:y:NaN:m / x:y:z:m, 8-byte little-endian doubles) into lower and
 * upper (each *len bytes, at most 32). false when the box has no x or no y. */
bool floe_wkb_bbox_bounds(const floe_wkb_bbox *b, uint8_t lower[32], uint8_t upper[32],
                          size_t *len);

FLOE_API_END

#ifdef __cplusplus
}
#endif

#endif
