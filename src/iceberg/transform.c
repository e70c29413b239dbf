/*
 * transform.c - Iceberg single values, the 32-bit hash, partition transforms, their human
 * strings and the inclusive projection of predicates through them.
 *
 * Spec (apache/iceberg format/spec.md): "Partition Transforms", "Bucket Transform
 * Details", "Truncate Transform Details", "Appendix B: 32-bit Hash Requirements", "Scan
 * Planning" (inclusive projection), "Sorting" (float order).
 *
 * Invariants:
 *   - every transform maps null to null and non-null to non-null (void: always null);
 *   - every transform is monotone (non-decreasing) in the source order except bucket,
 *     which is why bucket projects only equality;
 *   - byte results are prefixes of their input and borrow its memory.
 * Where Iceberg's Java reference wraps on overflow (truncate of values within W of the
 * type's minimum) floe computes the same wrapped value so that partition tuples agree,
 * and projection gives up (always true) around those values rather than prune wrongly.
 */
#include "floe/partition.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/value_text.h"

/* Type names as the spec writes them. Kept here (not floe_type_name) so the transforms do
 * not depend on the schema module being linked. */
const char *floe_xf_type_name(floe_type_id t) {
    switch (t) {
    case FLOE_TYPE_BOOLEAN: return "boolean";
    case FLOE_TYPE_INT: return "int";
    case FLOE_TYPE_LONG: return "long";
    case FLOE_TYPE_FLOAT: return "float";
    case FLOE_TYPE_DOUBLE: return "double";
    case FLOE_TYPE_DECIMAL: return "decimal";
    case FLOE_TYPE_DATE: return "date";
    case FLOE_TYPE_TIME: return "time";
    case FLOE_TYPE_TIMESTAMP: return "timestamp";
    case FLOE_TYPE_TIMESTAMPTZ: return "timestamptz";
    case FLOE_TYPE_TIMESTAMP_NS: return "timestamp_ns";
    case FLOE_TYPE_TIMESTAMPTZ_NS: return "timestamptz_ns";
    case FLOE_TYPE_STRING: return "string";
    case FLOE_TYPE_UUID: return "uuid";
    case FLOE_TYPE_FIXED: return "fixed";
    case FLOE_TYPE_BINARY: return "binary";
    case FLOE_TYPE_STRUCT: return "struct";
    case FLOE_TYPE_LIST: return "list";
    case FLOE_TYPE_MAP: return "map";
    case FLOE_TYPE_VARIANT: return "variant";
    case FLOE_TYPE_UNKNOWN: return "unknown";
    }
    return "unknown";
}

/* ---- values ---------------------------------------------------------------------------- */

floe_value floe_value_null(floe_type_id type) {
    floe_value v;
    memset(&v, 0, sizeof v);
    v.type = type;
    v.is_null = true;
    return v;
}

static floe_value make(floe_type_id type) {
    floe_value v;
    memset(&v, 0, sizeof v);
    v.type = type;
    return v;
}

floe_value floe_value_bool(bool b) {
    floe_value v = make(FLOE_TYPE_BOOLEAN);
    v.v.b = b;
    return v;
}
floe_value floe_value_int(int32_t x) {
    floe_value v = make(FLOE_TYPE_INT);
    v.v.i32 = x;
    return v;
}
floe_value floe_value_long(int64_t x) {
    floe_value v = make(FLOE_TYPE_LONG);
    v.v.i64 = x;
    return v;
}
floe_value floe_value_float(float x) {
    floe_value v = make(FLOE_TYPE_FLOAT);
    v.v.f = x;
    return v;
}
floe_value floe_value_double(double x) {
    floe_value v = make(FLOE_TYPE_DOUBLE);
    v.v.d = x;
    return v;
}
floe_value floe_value_date(int32_t days) {
    floe_value v = make(FLOE_TYPE_DATE);
    v.v.i32 = days;
    return v;
}
floe_value floe_value_i64(floe_type_id type, int64_t x) {
    floe_value v = make(type);
    v.v.i64 = x;
    return v;
}
floe_value floe_value_string(const char *s, size_t n) {
    floe_value v = make(FLOE_TYPE_STRING);
    v.v.bytes.p = (const uint8_t *)s;
    v.v.bytes.n = n;
    return v;
}
floe_value floe_value_binary(const void *p, size_t n) {
    floe_value v = make(FLOE_TYPE_BINARY);
    v.v.bytes.p = p;
    v.v.bytes.n = n;
    return v;
}
floe_value floe_value_fixed(const void *p, size_t n) {
    floe_value v = make(FLOE_TYPE_FIXED);
    v.v.bytes.p = p;
    v.v.bytes.n = n;
    return v;
}
floe_value floe_value_decimal(floe_i128 unscaled, int32_t precision, int32_t scale) {
    floe_value v = make(FLOE_TYPE_DECIMAL);
    v.v.dec.unscaled = unscaled;
    v.v.dec.precision = precision;
    v.v.dec.scale = scale;
    return v;
}
floe_value floe_value_uuid(const uint8_t bytes[16]) {
    floe_value v = make(FLOE_TYPE_UUID);
    memcpy(v.v.uuid, bytes, 16);
    return v;
}

static bool is_i32_type(floe_type_id t) { return t == FLOE_TYPE_INT || t == FLOE_TYPE_DATE; }
static bool is_i64_type(floe_type_id t) {
    return t == FLOE_TYPE_LONG || t == FLOE_TYPE_TIME || t == FLOE_TYPE_TIMESTAMP ||
           t == FLOE_TYPE_TIMESTAMPTZ || t == FLOE_TYPE_TIMESTAMP_NS ||
           t == FLOE_TYPE_TIMESTAMPTZ_NS;
}
static bool is_bytes_type(floe_type_id t) {
    return t == FLOE_TYPE_STRING || t == FLOE_TYPE_BINARY || t == FLOE_TYPE_FIXED;
}

/* Java's Double.compare order: map the bits to a signed key that sorts like the spec's
 * "-NaN < -inf < -x < -0 < 0 < x < inf < NaN". */
static int64_t double_key(double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return (bits >> 63) ? (int64_t)(bits ^ 0x7fffffffffffffffull) : (int64_t)bits;
}

#define CMP3(a, b) (((a) > (b)) - ((a) < (b)))

static int cmp_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    size_t n = na < nb ? na : nb;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? CMP3(c, 0) : CMP3(na, nb);
}

static floe_i128 pow10_i128(int e) {
    floe_i128 p = 1;
    while (e-- > 0)
        p *= 10;
    return p;
}

static int cmp_decimal(floe_i128 a, int32_t sa, floe_i128 b, int32_t sb) {
    if (sa == sb)
        return CMP3(a, b);
    /* bring the smaller scale up; past 38 digits of difference the magnitudes decide */
    bool swap = sa > sb;
    if (swap) {
        floe_i128 t = a;
        a = b;
        b = t;
        int32_t ts = sa;
        sa = sb;
        sb = ts;
    }
    int64_t diff = (int64_t)sb - sa;
    int r;
    if (diff > 38) {
        r = a == 0 ? -CMP3(b, 0) : CMP3(a, 0);
    } else {
        floe_i128 p = pow10_i128((int)diff);
        floe_i128 lim = ((floe_i128)1 << 126) / p;
        if (a > lim || a < -lim)
            r = CMP3(a, 0);
        else
            r = CMP3(a * p, b);
    }
    return swap ? -r : r;
}

int floe_value_compare(const floe_value *a, const floe_value *b) {
    if (a->is_null || b->is_null)
        return a->is_null && b->is_null ? 0 : (a->is_null ? -1 : 1);
    switch (a->type) {
    case FLOE_TYPE_BOOLEAN:
        return CMP3(a->v.b, b->v.b);
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        return CMP3(a->v.i32, b->v.i32);
    case FLOE_TYPE_FLOAT:
        return CMP3(double_key((double)a->v.f), double_key((double)b->v.f));
    case FLOE_TYPE_DOUBLE:
        return CMP3(double_key(a->v.d), double_key(b->v.d));
    case FLOE_TYPE_DECIMAL:
        return cmp_decimal(a->v.dec.unscaled, a->v.dec.scale, b->v.dec.unscaled,
                           b->v.dec.scale);
    case FLOE_TYPE_UUID:
        return cmp_bytes(a->v.uuid, 16, b->v.uuid, 16);
    default:
        if (is_i64_type(a->type))
            return CMP3(a->v.i64, b->v.i64);
        if (is_bytes_type(a->type))
            return cmp_bytes(a->v.bytes.p, a->v.bytes.n, b->v.bytes.p, b->v.bytes.n);
        return 0;
    }
}

bool floe_value_equal(const floe_value *a, const floe_value *b) {
    if (a->is_null || b->is_null)
        return a->is_null && b->is_null;
    return a->type == b->type && floe_value_compare(a, b) == 0;
}

/* ---- hashing (Appendix B) ---------------------------------------------------------------- */

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t floe_murmur3_32(const void *data, size_t n, uint32_t seed) {
    const uint8_t *p = data;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    size_t nblocks = n / 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint32_t k = floe_load_le32(p + 4 * i);
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    const uint8_t *tail = p + 4 * nblocks;
    uint32_t k = 0;
    switch (n & 3) {
    case 3:
        k ^= (uint32_t)tail[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)tail[1] << 8;
        /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)n; /* the reference hashes lengths as 32-bit */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static int32_t hash_long(int64_t v) {
    uint8_t b[8];
    floe_store_le64(b, (uint64_t)v);
    return (int32_t)floe_murmur3_32(b, 8, 0);
}

/* Minimal big-endian two's complement bytes of v (java BigInteger.toByteArray): at least
 * one byte, and no leading byte that only repeats the sign of the next. */
static size_t decimal_min_bytes(floe_i128 v, uint8_t out[16]) {
    uint8_t full[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--) {
        full[i] = (uint8_t)u;
        u >>= 8;
    }
    size_t start = 0;
    while (start < 15) {
        uint8_t b0 = full[start], b1 = full[start + 1];
        if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xff && (b1 & 0x80)))
            start++;
        else
            break;
    }
    memcpy(out, full + start, 16 - start);
    return 16 - start;
}

int floe_value_hash(const floe_value *v, int32_t *out, floe_error *err) {
    FLOE_RETURN_ERROR_IF(v->is_null, err, FLOE_EINVALID, "hash: null value");
    int32_t h;
    switch (v->type) {
    case FLOE_TYPE_BOOLEAN:
        h = hash_long(v->v.b ? 1 : 0);
        break;
    case FLOE_TYPE_INT:
    case FLOE_TYPE_DATE:
        /* int and long must hash alike so that promotion keeps buckets (note 1) */
        h = hash_long(v->v.i32);
        break;
    case FLOE_TYPE_LONG:
    case FLOE_TYPE_TIME:
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMPTZ:
        h = hash_long(v->v.i64);
        break;
    case FLOE_TYPE_TIMESTAMP_NS:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        /* note 3: nanos hash as micros so both precisions bucket alike */
        h = hash_long(floe_floordiv64(v->v.i64, 1000));
        break;
    case FLOE_TYPE_FLOAT:
    case FLOE_TYPE_DOUBLE: {
        /* note 5: floats widen to double; canonical NaN; -0.0 hashes as 0.0 */
        double d = v->type == FLOE_TYPE_FLOAT ? (double)v->v.f : v->v.d;
        uint64_t bits;
        if (isnan(d))
            bits = 0x7ff8000000000000ull;
        else {
            if (d == 0)
                d = 0.0;
            memcpy(&bits, &d, sizeof bits);
        }
        h = hash_long((int64_t)bits);
        break;
    }
    case FLOE_TYPE_DECIMAL: {
        uint8_t b[16];
        size_t n = decimal_min_bytes(v->v.dec.unscaled, b);
        h = (int32_t)floe_murmur3_32(b, n, 0);
        break;
    }
    case FLOE_TYPE_UUID:
        h = (int32_t)floe_murmur3_32(v->v.uuid, 16, 0);
        break;
    case FLOE_TYPE_STRING:
    case FLOE_TYPE_BINARY:
    case FLOE_TYPE_FIXED:
        h = (int32_t)floe_murmur3_32(v->v.bytes.p, v->v.bytes.n, 0);
        break;
    default:
        return floe_error_set(err, FLOE_EINVALID, "hash: type %s cannot be hashed",
                              floe_xf_type_name(v->type));
    }
    *out = h;
    return 0;
}

/* ---- transform names and typing -------------------------------------------------------- */

static bool ieq(const char *a, size_t na, const char *b) {
    size_t nb = strlen(b);
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

int floe_transform_parse(const char *s, floe_transform *out, floe_error *err) {
    size_t n = strlen(s);
    floe_transform t = {FLOE_XF_UNKNOWN, 0};
    const char *lb = memchr(s, '[', n);
    if (lb && n >= 3 && s[n - 1] == ']' && lb > s && lb + 1 < s + n - 1) {
        /* "<word>[<digits>]", the reference's width pattern */
        const char *d = lb + 1, *end = s + n - 1;
        bool digits = true;
        for (const char *q = d; q < end; q++)
            digits = digits && *q >= '0' && *q <= '9';
        bool bucket = ieq(s, (size_t)(lb - s), "bucket");
        bool trunc = ieq(s, (size_t)(lb - s), "truncate");
        if (digits && (bucket || trunc)) {
            int64_t w = 0;
            for (const char *q = d; q < end; q++) {
                w = w * 10 + (*q - '0');
                FLOE_RETURN_ERROR_IF(w > INT32_MAX, err, FLOE_EINVALID,
                                     "transform \"%s\": parameter out of range", s);
            }
            FLOE_RETURN_ERROR_IF(w <= 0, err, FLOE_EINVALID,
                                 "transform \"%s\": %s must be > 0", s,
                                 bucket ? "number of buckets" : "width");
            t.kind = bucket ? FLOE_XF_BUCKET : FLOE_XF_TRUNCATE;
            t.param = (int32_t)w;
        }
    } else {
        static const struct {
            const char *name;
            floe_transform_kind kind;
        } names[] = {{"identity", FLOE_XF_IDENTITY}, {"year", FLOE_XF_YEAR},
                     {"month", FLOE_XF_MONTH},       {"day", FLOE_XF_DAY},
                     {"hour", FLOE_XF_HOUR},         {"void", FLOE_XF_VOID}};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (ieq(s, n, names[i].name))
                t.kind = names[i].kind;
    }
    *out = t;
    return 0;
}

const char *floe_transform_name(floe_transform t, char *buf, size_t n) {
    const char *s = "unknown";
    switch (t.kind) {
    case FLOE_XF_IDENTITY: s = "identity"; break;
    case FLOE_XF_BUCKET: snprintf(buf, n, "bucket[%d]", (int)t.param); return buf;
    case FLOE_XF_TRUNCATE: snprintf(buf, n, "truncate[%d]", (int)t.param); return buf;
    case FLOE_XF_YEAR: s = "year"; break;
    case FLOE_XF_MONTH: s = "month"; break;
    case FLOE_XF_DAY: s = "day"; break;
    case FLOE_XF_HOUR: s = "hour"; break;
    case FLOE_XF_VOID: s = "void"; break;
    case FLOE_XF_UNKNOWN: break;
    }
    snprintf(buf, n, "%s", s);
    return buf;
}

static bool is_ts_type(floe_type_id t) {
    return t == FLOE_TYPE_TIMESTAMP || t == FLOE_TYPE_TIMESTAMPTZ ||
           t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS;
}

bool floe_transform_accepts(floe_transform t, floe_type_id s) {
    bool primitive = s >= FLOE_TYPE_BOOLEAN && s <= FLOE_TYPE_BINARY;
    switch (t.kind) {
    case FLOE_XF_IDENTITY:
        return primitive;
    case FLOE_XF_BUCKET:
        return primitive && s != FLOE_TYPE_BOOLEAN && s != FLOE_TYPE_FLOAT &&
               s != FLOE_TYPE_DOUBLE;
    case FLOE_XF_TRUNCATE:
        return s == FLOE_TYPE_INT || s == FLOE_TYPE_LONG || s == FLOE_TYPE_DECIMAL ||
               s == FLOE_TYPE_STRING || s == FLOE_TYPE_BINARY;
    case FLOE_XF_YEAR:
    case FLOE_XF_MONTH:
    case FLOE_XF_DAY:
        return s == FLOE_TYPE_DATE || is_ts_type(s);
    case FLOE_XF_HOUR:
        return is_ts_type(s);
    case FLOE_XF_VOID:
    case FLOE_XF_UNKNOWN:
        return true;
    }
    return false;
}

floe_type_id floe_transform_result_type(floe_transform t, floe_type_id source) {
    switch (t.kind) {
    case FLOE_XF_BUCKET:
    case FLOE_XF_YEAR:
    case FLOE_XF_MONTH:
    case FLOE_XF_HOUR:
        return FLOE_TYPE_INT;
    case FLOE_XF_DAY:
        return FLOE_TYPE_DATE;
    case FLOE_XF_UNKNOWN:
        return FLOE_TYPE_STRING;
    default:
        return source;
    }
}

/* ---- applying transforms --------------------------------------------------------------- */

static int64_t units_per_sec(floe_type_id t) {
    return (t == FLOE_TYPE_TIMESTAMP_NS || t == FLOE_TYPE_TIMESTAMPTZ_NS) ? 1000000000
                                                                          : 1000000;
}

/* year/month/day/hour ordinal of a date or timestamp; false if it does not fit an int */
static bool time_ordinal(floe_transform_kind k, const floe_value *v, int32_t *out) {
    int64_t days, r;
    if (v->type == FLOE_TYPE_DATE) {
        days = v->v.i32;
        if (k == FLOE_XF_HOUR)
            return false;
    } else {
        int64_t ups = units_per_sec(v->type);
        if (k == FLOE_XF_HOUR) {
            r = floe_floordiv64(v->v.i64, ups * 3600);
            goto fit;
        }
        days = floe_floordiv64(v->v.i64, ups * 86400);
    }
    if (k == FLOE_XF_DAY) {
        r = days;
    } else {
        int64_t y;
        unsigned m, d;
        floe_civil_from_days(days, &y, &m, &d);
        r = k == FLOE_XF_YEAR ? y - 1970 : (y - 1970) * 12 + (int64_t)m - 1;
    }
fit:
    if (r < INT32_MIN || r > INT32_MAX)
        return false;
    *out = (int32_t)r;
    return true;
}

/* Truncation as Iceberg's reference computes it, including its two's complement wrap
 * for values within W of the minimum (so that both write the same partition value). */
static int32_t trunc_i32(int32_t v, int32_t w) {
    int32_t r1 = v % w;
    int32_t s = (int32_t)((uint32_t)r1 + (uint32_t)w);
    int32_t r2 = s % w;
    return (int32_t)((uint32_t)v - (uint32_t)r2);
}
static int64_t trunc_i64(int64_t v, int64_t w) {
    int64_t r = ((v % w) + w) % w; /* |v % w| < w <= 2^31: no overflow */
    return (int64_t)((uint64_t)v - (uint64_t)r);
}

/* Length of the first `cps` code points of UTF-8 text (continuation bytes are those of
 * the form 10xxxxxx; a cut never splits a sequence). */
static size_t utf8_prefix(const uint8_t *p, size_t n, int64_t cps) {
    size_t i = 0;
    int64_t seen = 0;
    for (; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            if (seen == cps)
                break;
            seen++;
        }
    }
    return i;
}

int floe_transform_apply(floe_transform t, const floe_value *v, floe_value *out,
                         floe_error *err) {
    char name[32];
    FLOE_RETURN_ERROR_IF(t.kind == FLOE_XF_UNKNOWN, err, FLOE_EUNSUPPORTED,
                         "cannot apply an unknown partition transform");
    FLOE_RETURN_ERROR_IF(!floe_transform_accepts(t, v->type), err, FLOE_EINVALID,
                         "transform %s does not accept type %s",
                         floe_transform_name(t, name, sizeof name),
                         floe_xf_type_name(v->type));
    floe_type_id rt = floe_transform_result_type(t, v->type);
    if (v->is_null || t.kind == FLOE_XF_VOID) {
        floe_value nv = floe_value_null(rt);
        if (v->type == FLOE_TYPE_DECIMAL && rt == FLOE_TYPE_DECIMAL)
            nv.v.dec = v->v.dec; /* keep precision and scale for the null's type */
        *out = nv;
        return 0;
    }
    floe_value r = *v;
    switch (t.kind) {
    case FLOE_XF_IDENTITY:
        break;
    case FLOE_XF_BUCKET: {
        int32_t h;
        FLOE_FORWARD_IF_ERROR(floe_value_hash(v, &h, err));
        r = floe_value_int((int32_t)((uint32_t)h & 0x7fffffffu) % t.param);
        break;
    }
    case FLOE_XF_TRUNCATE:
        switch (v->type) {
        case FLOE_TYPE_INT:
            r.v.i32 = trunc_i32(v->v.i32, t.param);
            break;
        case FLOE_TYPE_LONG:
            r.v.i64 = trunc_i64(v->v.i64, t.param);
            break;
        case FLOE_TYPE_DECIMAL: {
            /* W is applied to the unscaled value, i.e. at the column's scale (note 2) */
            floe_i128 u = v->v.dec.unscaled, w = t.param;
            r.v.dec.unscaled = u - (((u % w) + w) % w);
            break;
        }
        case FLOE_TYPE_STRING:
            r.v.bytes.n = utf8_prefix(v->v.bytes.p, v->v.bytes.n, t.param);
            break;
        default: /* binary: bytes, not characters (note 4) */
            if (r.v.bytes.n > (size_t)t.param)
                r.v.bytes.n = (size_t)t.param;
            break;
        }
        break;
    case FLOE_XF_YEAR:
    case FLOE_XF_MONTH:
    case FLOE_XF_DAY:
    case FLOE_XF_HOUR: {
        int32_t o;
        FLOE_RETURN_ERROR_IF(!time_ordinal(t.kind, v, &o), err, FLOE_EINVALID,
                             "%s(%s): value %" PRId64 " out of range",
                             floe_transform_name(t, name, sizeof name),
                             floe_xf_type_name(v->type), v->v.i64);
        r = t.kind == FLOE_XF_DAY ? floe_value_date(o) : floe_value_int(o);
        break;
    }
    default:
        return floe_error_set(err, FLOE_EINTERNAL, "transform kind %d", (int)t.kind);
    }
    *out = r;
    return 0;
}

/* ---- human strings --------------------------------------------------------------------- */

static int value_human(const floe_value *v, floe_buf *b) {
    switch (v->type) {
    case FLOE_TYPE_BOOLEAN:
        return v->v.b ? floe_buf_append(b, "true", 4) : floe_buf_append(b, "false", 5);
    case FLOE_TYPE_INT:
        return floe_buf_printf(b, "%" PRId32, v->v.i32);
    case FLOE_TYPE_LONG:
        return floe_buf_printf(b, "%" PRId64, v->v.i64);
    case FLOE_TYPE_FLOAT:
        return floe_vt_float_java(b, (double)v->v.f, true);
    case FLOE_TYPE_DOUBLE:
        return floe_vt_float_java(b, v->v.d, false);
    case FLOE_TYPE_DECIMAL:
        return floe_vt_decimal_java(b, v->v.dec.unscaled, v->v.dec.scale);
    case FLOE_TYPE_DATE:
        return floe_vt_day_human(b, v->v.i32);
    case FLOE_TYPE_TIME:
        if (v->v.i64 < 0 || v->v.i64 >= 86400000000ll)
            return FLOE_EINVALID;
        return floe_vt_time_java(b, v->v.i64 * 1000);
    case FLOE_TYPE_TIMESTAMP:
    case FLOE_TYPE_TIMESTAMP_NS:
        return floe_vt_timestamp(b, v->v.i64, units_per_sec(v->type), 0, false);
    case FLOE_TYPE_TIMESTAMPTZ:
    case FLOE_TYPE_TIMESTAMPTZ_NS:
        return floe_vt_timestamp(b, v->v.i64, units_per_sec(v->type), 0, true);
    case FLOE_TYPE_STRING:
        return floe_buf_append(b, v->v.bytes.p, v->v.bytes.n);
    case FLOE_TYPE_UUID:
        return floe_vt_uuid(b, v->v.uuid);
    case FLOE_TYPE_FIXED:
    case FLOE_TYPE_BINARY:
        return floe_base64_append(b, v->v.bytes.p, v->v.bytes.n);
    default:
        return FLOE_EINVALID;
    }
}

int floe_transform_human_string(floe_transform t, const floe_value *pv, floe_buf *out,
                                floe_error *err) {
    int rc;
    if (pv->is_null || t.kind == FLOE_XF_VOID) {
        rc = floe_buf_append(out, "null", 4);
    } else {
        switch (t.kind) {
        case FLOE_XF_YEAR:
            rc = floe_buf_printf(out, "%04" PRId64, (int64_t)1970 + pv->v.i32);
            break;
        case FLOE_XF_MONTH:
            rc = floe_buf_printf(out, "%04" PRId64 "-%02d",
                                 1970 + floe_floordiv64(pv->v.i32, 12),
                                 (int)(1 + floe_floormod64(pv->v.i32, 12)));
            break;
        case FLOE_XF_DAY:
            rc = floe_vt_day_human(out, pv->v.i32);
            break;
        case FLOE_XF_HOUR:
            rc = floe_vt_day_human(out, floe_floordiv64(pv->v.i32, 24));
            if (rc == 0)
                rc = floe_buf_printf(out, "-%02d", (int)floe_floormod64(pv->v.i32, 24));
            break;
        default:
            rc = value_human(pv, out);
            break;
        }
    }
    if (rc == FLOE_EINVALID)
        return floe_error_set(err, rc, "partition value of type %s has no text form",
                              floe_xf_type_name(pv->type));
    if (rc < 0)
        return floe_error_set(err, rc, "partition value text: %s", floe_strerror(rc));
    return 0;
}

/* ---- predicates and projection --------------------------------------------------------- */

bool floe_pred_eval(floe_pred_op op, const floe_value *v, const floe_value *lit) {
    if (op == FLOE_PRED_IS_NULL)
        return v->is_null;
    if (op == FLOE_PRED_NOT_NULL)
        return !v->is_null;
    if (v->is_null || lit->is_null)
        return false;
    if (op == FLOE_PRED_STARTS_WITH) {
        if (!is_bytes_type(v->type) || !is_bytes_type(lit->type))
            return false;
        return v->v.bytes.n >= lit->v.bytes.n &&
               (lit->v.bytes.n == 0 || !memcmp(v->v.bytes.p, lit->v.bytes.p, lit->v.bytes.n));
    }
    int c = floe_value_compare(v, lit);
    switch (op) {
    case FLOE_PRED_LT: return c < 0;
    case FLOE_PRED_LE: return c <= 0;
    case FLOE_PRED_GT: return c > 0;
    case FLOE_PRED_GE: return c >= 0;
    case FLOE_PRED_EQ: return c == 0;
    case FLOE_PRED_NE: return c != 0;
    default: return false;
    }
}

/* lit + delta (delta = +1 / -1) in the literal's own unit; false past the type's range */
static bool step(const floe_value *lit, int delta, floe_value *out) {
    floe_value r = *lit;
    if (is_i32_type(lit->type)) {
        if ((delta < 0 && lit->v.i32 == INT32_MIN) || (delta > 0 && lit->v.i32 == INT32_MAX))
            return false;
        r.v.i32 += delta;
    } else if (is_i64_type(lit->type)) {
        if ((delta < 0 && lit->v.i64 == INT64_MIN) || (delta > 0 && lit->v.i64 == INT64_MAX))
            return false;
        r.v.i64 += delta;
    } else if (lit->type == FLOE_TYPE_DECIMAL) {
        r.v.dec.unscaled += delta; /* |unscaled| < 10^38, far from the int128 limits */
    } else {
        return false;
    }
    *out = r;
    return true;
}

/* would truncation of some x >= lit wrap around (lit within W of the type's minimum)? */
static bool trunc_wrap_zone(const floe_value *lit, int32_t w) {
    if (lit->type == FLOE_TYPE_INT)
        return (int64_t)lit->v.i32 < (int64_t)INT32_MIN + w;
    if (lit->type == FLOE_TYPE_LONG)
        return lit->v.i64 < INT64_MIN + (int64_t)w;
    return false;
}

int floe_transform_project(floe_transform t, floe_pred_op op, const floe_value *lit,
                           floe_projection *out, floe_error *err) {
    floe_projection p;
    memset(&p, 0, sizeof p);
    p.always_true = true;
    char name[32];
    if (op == FLOE_PRED_IS_NULL || op == FLOE_PRED_NOT_NULL) {
        /* every transform but void keeps null-ness */
        if (t.kind != FLOE_XF_VOID && t.kind != FLOE_XF_UNKNOWN) {
            p.always_true = false;
            p.op = op;
            p.value = floe_value_null(lit ? floe_transform_result_type(t, lit->type)
                                          : FLOE_TYPE_INT);
        }
        *out = p;
        return 0;
    }
    FLOE_RETURN_ERROR_IF(!lit || lit->is_null, err, FLOE_EINVALID,
                         "projection: comparison with a null literal");
    if (t.kind == FLOE_XF_VOID || t.kind == FLOE_XF_UNKNOWN) {
        *out = p;
        return 0;
    }
    FLOE_RETURN_ERROR_IF(!floe_transform_accepts(t, lit->type), err, FLOE_EINVALID,
                         "projection: transform %s does not accept type %s",
                         floe_transform_name(t, name, sizeof name),
                         floe_xf_type_name(lit->type));
    if (t.kind == FLOE_XF_IDENTITY) {
        p.always_true = false;
        p.op = op;
        p.value = *lit;
        *out = p;
        return 0;
    }
    if (op == FLOE_PRED_NE) {
        *out = p; /* x != v says nothing about a many-to-one image */
        return 0;
    }
    if (t.kind == FLOE_XF_BUCKET) {
        if (op == FLOE_PRED_EQ) {
            FLOE_FORWARD_IF_ERROR(floe_transform_apply(t, lit, &p.value, err));
            p.always_true = false;
            p.op = FLOE_PRED_EQ;
        }
        *out = p;
        return 0;
    }

    bool bytes = is_bytes_type(lit->type);
    if (op == FLOE_PRED_STARTS_WITH) {
        if (t.kind == FLOE_XF_TRUNCATE && bytes) {
            /* x starts with s: a long s fixes trunc(x); a short one stays a prefix */
            floe_value tv;
            FLOE_FORWARD_IF_ERROR(floe_transform_apply(t, lit, &tv, err));
            p.always_true = false;
            p.op = tv.v.bytes.n < lit->v.bytes.n ? FLOE_PRED_EQ : FLOE_PRED_STARTS_WITH;
            p.value = tv;
            if (lit->type == FLOE_TYPE_STRING && tv.v.bytes.n == lit->v.bytes.n)
                p.op = FLOE_PRED_STARTS_WITH;
        }
        *out = p;
        return 0;
    }
    if (t.kind == FLOE_XF_TRUNCATE && trunc_wrap_zone(lit, t.param) &&
        (op == FLOE_PRED_GT || op == FLOE_PRED_GE || op == FLOE_PRED_EQ)) {
        *out = p;
        return 0;
    }
    if (t.kind == FLOE_XF_TRUNCATE && op == FLOE_PRED_EQ && lit->type == FLOE_TYPE_LONG &&
        lit->v.i64 >= INT32_MIN && lit->v.i64 < (int64_t)INT32_MIN + t.param) {
        /* the column may have been an int when a file was written: such an x truncated
         * (wrapping) in 32 bits, to a partition value near INT32_MAX */
        *out = p;
        return 0;
    }

    /* truncate and the time transforms are monotone: x < v implies t(x) <= t(v - 1) for
     * discrete sources (for strings/binary, t(x) <= t(v)), and likewise upwards */
    floe_value bound = *lit;
    floe_pred_op pop = op;
    switch (op) {
    case FLOE_PRED_LT:
        pop = FLOE_PRED_LE;
        if (!bytes && !step(lit, -1, &bound)) {
            *out = p; /* x < MIN matches nothing; "true" is still inclusive */
            return 0;
        }
        break;
    case FLOE_PRED_GT:
        pop = FLOE_PRED_GE;
        if (!bytes && !step(lit, +1, &bound)) {
            *out = p;
            return 0;
        }
        break;
    case FLOE_PRED_LE:
    case FLOE_PRED_GE:
    case FLOE_PRED_EQ:
        break;
    default:
        *out = p;
        return 0;
    }
    floe_value tv;
    if (t.kind == FLOE_XF_TRUNCATE && (op == FLOE_PRED_LT || op == FLOE_PRED_LE) &&
        (lit->type == FLOE_TYPE_INT || lit->type == FLOE_TYPE_LONG)) {
        /* x within W of the minimum truncates (wrapping, as the reference does) to a value
         * above max - W: those partitions may hold rows below any v */
        p.or_above = true;
        p.above = lit->type == FLOE_TYPE_INT ? floe_value_int(INT32_MAX - t.param + 1)
                                             : floe_value_long(INT64_MAX - t.param + 1);
        p.wrap_w = t.param;
    }
    if (t.kind != FLOE_XF_TRUNCATE) {
        int32_t o;
        if (!time_ordinal(t.kind, &bound, &o)) {
            *out = p; /* beyond the int range of the partition value: no pruning */
            return 0;
        }
        tv = t.kind == FLOE_XF_DAY ? floe_value_date(o) : floe_value_int(o);
    } else {
        FLOE_FORWARD_IF_ERROR(floe_transform_apply(t, &bound, &tv, err));
    }
    p.always_true = false;
    p.op = pop;
    p.value = tv;
    *out = p;
    return 0;
}

bool floe_projection_holds(const floe_projection *p, const floe_value *v) {
    if (p->always_true)
        return true;
    if (floe_pred_eval(p->op, v, &p->value))
        return true;
    if (!p->or_above || v->is_null)
        return false;
    if (p->above.type == FLOE_TYPE_LONG && p->wrap_w > 0 &&
        (v->type == FLOE_TYPE_INT || v->type == FLOE_TYPE_LONG)) {
        /* a file written before the column was promoted from int: 32-bit wrap */
        int64_t x = v->type == FLOE_TYPE_INT ? v->v.i32 : v->v.i64;
        if (x > (int64_t)INT32_MAX - p->wrap_w && x <= INT32_MAX)
            return true;
    }
    return v->type == p->above.type && floe_value_compare(v, &p->above) > 0;
}
