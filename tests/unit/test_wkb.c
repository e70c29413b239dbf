/*
 * test_wkb.c - bounding boxes of WKB geometries (floe/wkb.h): points of every dimension,
 * both byte orders, extended WKB flags, collections, NaN coordinates, the bound form of
 * Appendix D, and hostile values (truncated, counts past the end, trailing bytes, deep
 * nesting, unknown codes) refused with the box unchanged.
 */
#include <math.h>
#include <string.h>

#include "floe/wkb.h"
#include "harness.h"

/* A little WKB builder: bytes appended in the order given. */
typedef struct wbuf {
    uint8_t b[4096];
    size_t n;
    bool be;
} wbuf;

static void put_u8(wbuf *w, uint8_t v) { w->b[w->n++] = v; }
static void put_u32(wbuf *w, uint32_t v) {
    for (int i = 0; i < 4; i++)
        w->b[w->n++] = (uint8_t)(w->be ? v >> (24 - 8 * i) : v >> (8 * i));
}
static void put_f64(wbuf *w, double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++)
        w->b[w->n++] = (uint8_t)(w->be ? u >> (56 - 8 * i) : u >> (8 * i));
}
static void head(wbuf *w, uint32_t code) {
    put_u8(w, w->be ? 0 : 1);
    put_u32(w, code);
}

static double get_f64(const uint8_t *p) {
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

TEST(test_wkb_point_and_line) {
    floe_wkb_bbox b;
    floe_wkb_bbox_init(&b);
    floe_error err;
    floe_error_clear(&err);
    wbuf w = {0};
    head(&w, 1);
    put_f64(&w, 1);
    put_f64(&w, 2);
    CHECK_OK(floe_wkb_bbox_add(&b, w.b, w.n, &err), err);
    wbuf l = {.be = true};
    head(&l, 2);
    put_u32(&l, 2);
    put_f64(&l, -3);
    put_f64(&l, 4);
    put_f64(&l, 5);
    put_f64(&l, -6);
    CHECK_OK(floe_wkb_bbox_add(&b, l.b, l.n, &err), err);
    uint8_t lo[32], hi[32];
    size_t len = 0;
    REQUIRE(floe_wkb_bbox_bounds(&b, lo, hi, &len));
    CHECK_EQ_INT(len, 16);
    CHECK(get_f64(lo) == -3 && get_f64(lo + 8) == -6);
    CHECK(get_f64(hi) == 5 && get_f64(hi + 8) == 4);
}

TEST(test_wkb_dimensions) {
    floe_error err;
    floe_error_clear(&err);
    uint8_t lo[32], hi[32];
    size_t len = 0;
    /* ISO XYM point: x:y:NaN:m */
    floe_wkb_bbox b;
    floe_wkb_bbox_init(&b);
    wbuf w = {0};
    head(&w, 2001);
    put_f64(&w, 1);
    put_f64(&w, 2);
    put_f64(&w, 9);
    CHECK_OK(floe_wkb_bbox_add(&b, w.b, w.n, &err), err);
    REQUIRE(floe_wkb_bbox_bounds(&b, lo, hi, &len));
    CHECK_EQ_INT(len, 32);
    CHECK(isnan(get_f64(lo + 16)) && get_f64(lo + 24) == 9 && get_f64(hi + 24) == 9);
    /* extended WKB Z with an SRID inside a multipoint; a NaN y is skipped */
    floe_wkb_bbox_init(&b);
    wbuf m = {0};
    head(&m, 4);
    put_u32(&m, 2);
    head(&m, 0xA0000001u);
    put_u32(&m, 4326);
    put_f64(&m, 7);
    put_f64(&m, NAN);
    put_f64(&m, -1);
    head(&m, 1001);
    put_f64(&m, 3);
    put_f64(&m, 8);
    put_f64(&m, 2);
    CHECK_OK(floe_wkb_bbox_add(&b, m.b, m.n, &err), err);
    REQUIRE(floe_wkb_bbox_bounds(&b, lo, hi, &len));
    CHECK_EQ_INT(len, 24);
    CHECK(get_f64(lo) == 3 && get_f64(hi) == 7 && get_f64(lo + 8) == 8 && get_f64(hi + 8) == 8);
    CHECK(get_f64(lo + 16) == -1 && get_f64(hi + 16) == 2);
    /* an empty point (NaN, NaN) alone: no box */
    floe_wkb_bbox_init(&b);
    wbuf e = {0};
    head(&e, 1);
    put_f64(&e, NAN);
    put_f64(&e, NAN);
    CHECK_OK(floe_wkb_bbox_add(&b, e.b, e.n, &err), err);
    CHECK(!floe_wkb_bbox_bounds(&b, lo, hi, &len));
}

TEST(test_wkb_hostile) {
    floe_error err;
    floe_wkb_bbox b;
    floe_wkb_bbox_init(&b);
    wbuf ok = {0};
    head(&ok, 1);
    put_f64(&ok, 1);
    put_f64(&ok, 1);
    floe_error_clear(&err);
    REQUIRE(floe_wkb_bbox_add(&b, ok.b, ok.n, &err) == 0);
    floe_wkb_bbox before = b;
    /* every truncation of a valid polygon */
    wbuf poly = {0};
    head(&poly, 3);
    put_u32(&poly, 1);
    put_u32(&poly, 3);
    for (int i = 0; i < 6; i++)
        put_f64(&poly, 100 + i);
    for (size_t cut = 0; cut < poly.n; cut++) {
        floe_error_clear(&err);
        CHECK_EQ_INT(floe_wkb_bbox_add(&b, poly.b, cut, &err), FLOE_ECORRUPT);
    }
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    /* trailing bytes, a count far past the end, an unknown code, a bad byte order */
    wbuf t = ok;
    put_u8(&t, 0);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_wkb_bbox_add(&b, t.b, t.n, &err), FLOE_ECORRUPT);
    wbuf c = {0};
    head(&c, 2);
    put_u32(&c, 0xFFFFFFFFu);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_wkb_bbox_add(&b, c.b, c.n, &err), FLOE_ECORRUPT);
    wbuf u = {0};
    head(&u, 17);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_wkb_bbox_add(&b, u.b, u.n, &err), FLOE_ECORRUPT);
    uint8_t bad[] = {2, 1, 0, 0, 0};
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_wkb_bbox_add(&b, bad, sizeof bad, &err), FLOE_ECORRUPT);
    /* collections nested past the cap */
    wbuf d = {0};
    for (int i = 0; i <= FLOE_WKB_MAX_DEPTH + 1; i++) {
        head(&d, 7);
        put_u32(&d, 1);
    }
    head(&d, 1);
    put_f64(&d, 0);
    put_f64(&d, 0);
    floe_error_clear(&err);
    CHECK_EQ_INT(floe_wkb_bbox_add(&b, d.b, d.n, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "nest") != NULL);
    CHECK(memcmp(&b, &before, sizeof b) == 0);
}

/* The ISO type codes of the values (not their parts; EWKB flags as ISO codes), and when
 * a box may bound a geography: points only, within [-180, 180] x [-90, 90]. */
TEST(test_wkb_types_geography) {
    floe_error err;
    floe_error_clear(&err);
    floe_wkb_bbox b;
    floe_wkb_bbox_init(&b);
    int32_t codes[FLOE_WKB_MAX_TYPES];
    CHECK_EQ_INT(floe_wkb_bbox_types(&b, codes), 0);
    CHECK(!floe_wkb_bbox_geography_ok(&b));
    wbuf p = {0}; /* a multipoint of an XYM point (EWKB flag) and an XYZM one */
    head(&p, 4);
    put_u32(&p, 2);
    head(&p, 0x40000001u);
    put_f64(&p, 180);
    put_f64(&p, 89);
    put_f64(&p, 5);
    head(&p, 3001);
    for (int i = 0; i < 4; i++)
        put_f64(&p, -90 + i);
    CHECK_OK(floe_wkb_bbox_add(&b, p.b, p.n, &err), err);
    wbuf q = {.be = true}; /* an XYM point at the top */
    head(&q, 0x40000001u);
    put_f64(&q, 0);
    put_f64(&q, 0);
    put_f64(&q, 1);
    CHECK_OK(floe_wkb_bbox_add(&b, q.b, q.n, &err), err);
    REQUIRE(floe_wkb_bbox_types(&b, codes) == 2);
    CHECK(codes[0] == 4 && codes[1] == 2001);
    CHECK(floe_wkb_bbox_geography_ok(&b));
    floe_wkb_bbox pts = b;
    /* a point past x 180: no geography box; the geometry box stays */
    wbuf far = {0};
    head(&far, 1);
    put_f64(&far, 180.5);
    put_f64(&far, 0);
    CHECK_OK(floe_wkb_bbox_add(&b, far.b, far.n, &err), err);
    CHECK(!floe_wkb_bbox_geography_ok(&b));
    /* a line inside a collection: edges, no geography box; types 4, 7, 2001 */
    b = pts;
    wbuf c = {0};
    head(&c, 7);
    put_u32(&c, 1);
    head(&c, 2);
    put_u32(&c, 2);
    for (int i = 0; i < 4; i++)
        put_f64(&c, i);
    CHECK_OK(floe_wkb_bbox_add(&b, c.b, c.n, &err), err);
    CHECK(!floe_wkb_bbox_geography_ok(&b));
    REQUIRE(floe_wkb_bbox_types(&b, codes) == 3);
    CHECK(codes[0] == 4 && codes[1] == 7 && codes[2] == 2001);
    /* merge carries both */
    floe_wkb_bbox m;
    floe_wkb_bbox_init(&m);
    floe_wkb_bbox_merge(&m, &b);
    CHECK(m.edges && m.types == b.types);
}

int main(void) {
    RUN(test_wkb_types_geography);
    RUN(test_wkb_point_and_line);
    RUN(test_wkb_dimensions);
    RUN(test_wkb_hostile);
    return harness_finish();
}
