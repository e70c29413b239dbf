/*
 * gen.c - the deterministic event generator (floe/gen.h).
 *
 * Two xoshiro256** streams, both seeded from the user seed through splitmix64: `rng`
 * draws every value of a valid event, `bad` decides which lines are malformed and how.
 * Keeping them apart means a run with --malformed-rate R differs from the clean run only
 * on the malformed lines, which lets tests line the two up.
 *
 * Invariants:
 *   - Only integer arithmetic feeds the output (the two doubles in the options are turned
 *     into integers once, by IEEE-exact operations), so the bytes do not depend on libm,
 *     locale or platform.
 *   - One event line never exceeds FLOE_GEN_MAX_EVENT_BYTES; emit_event() writes into a
 *     buffer reserved for that much and never checks as it goes.
 *   - Per-user attributes (device, home city, app version) come from a hash of the user
 *     id, so one user looks the same across events, as in real traffic.
 */
#include "floe/gen.h"

#include "common/literal.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Random numbers: splitmix64 to seed, xoshiro256** to draw.
 * ------------------------------------------------------------------------------------- */
typedef struct rng256 {
    uint64_t s[4];
} rng256;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A stateless 64-bit mixer for per-user attributes. */
static uint64_t mix64(uint64_t v) {
    uint64_t x = v;
    return splitmix64(&x);
}

static void rng_seed(rng256 *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl64(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng256 *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0. Lemire's multiply-shift; the tiny bias is irrelevant here and
 * keeps the draw count fixed (one draw per call), which keeps streams aligned. */
static inline uint64_t rng_below(rng256 *r, uint64_t n) {
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* True with probability pct/100. */
static inline bool rng_pct(rng256 *r, unsigned pct) {
    return rng_below(r, 100) < pct;
}

/* ---------------------------------------------------------------------------------------
 * Catalogues.
 * ------------------------------------------------------------------------------------- */
/* In Zipf rank order: the first is the most frequent. */
static const char *const k_event_types[] = {
    "page_view", "click",  "search",     "add_to_cart", "purchase",  "login",
    "view_item", "scroll", "logout",     "share",       "video_play", "signup",
    "error",     "app_open", "checkout", "remove_from_cart",
};
#define N_EVENT_TYPES (sizeof k_event_types / sizeof k_event_types[0])

typedef struct device_family {
    const char *os;
    unsigned weight; /* percent */
    const char *const *versions;
    size_t nversions;
    const char *const *models;
    size_t nmodels;
} device_family;

static const char *const k_android_versions[] = {"12", "13", "14", "15"};
static const char *const k_android_models[] = {"Pixel 8",      "Pixel 7a",   "Galaxy S24",
                                               "Galaxy A54",   "Redmi Note 13", "OnePlus 12",
                                               "Moto G84"};
static const char *const k_ios_versions[] = {"16.7", "17.5", "17.6", "18.0", "18.1"};
static const char *const k_ios_models[] = {"iPhone 13", "iPhone 14",  "iPhone 15",
                                           "iPhone 15 Pro", "iPhone SE", "iPad Air"};
static const char *const k_web_versions[] = {"Chrome 129", "Firefox 131", "Safari 18",
                                             "Edge 129"};
static const char *const k_web_models[] = {"desktop", "laptop", "tablet"};
static const char *const k_desktop_versions[] = {"11", "10", "14.6", "15.0"};
static const char *const k_desktop_models[] = {"ThinkPad X1", "MacBook Air", "Surface Pro"};

#define FAMILY(os, w, v, m) {os, w, v, sizeof v / sizeof v[0], m, sizeof m / sizeof m[0]}
static const device_family k_families[] = {
    FAMILY("android", 46, k_android_versions, k_android_models),
    FAMILY("ios", 34, k_ios_versions, k_ios_models),
    FAMILY("web", 15, k_web_versions, k_web_models),
    FAMILY("windows", 5, k_desktop_versions, k_desktop_models),
};
#define N_FAMILIES (sizeof k_families / sizeof k_families[0])

typedef struct city {
    const char *country;
    const char *name;
    int32_t lat_e4; /* degrees * 10^4 */
    int32_t lon_e4;
    const char *currency;
} city;

static const city k_cities[] = {
    {"DE", "Berlin", 525200, 134050, "EUR"},       {"DE", "Munich", 481351, 115820, "EUR"},
    {"FR", "Paris", 488566, 23522, "EUR"},         {"ES", "Madrid", 404168, -37038, "EUR"},
    {"IT", "Milan", 454642, 91900, "EUR"},         {"NL", "Amsterdam", 523676, 49041, "EUR"},
    {"GB", "London", 515072, -1276, "GBP"},        {"US", "New York", 407128, -740060, "USD"},
    {"US", "San Francisco", 377749, -1224194, "USD"}, {"US", "Austin", 302672, -977431, "USD"},
    {"CA", "Toronto", 436532, -793832, "CAD"},     {"BR", "S\\u00e3o Paulo", -235505, -466333, "BRL"},
    {"MX", "Mexico City", 194326, -991332, "MXN"}, {"JP", "T\\u014dky\\u014d", 356762, 1396503, "JPY"},
    {"IN", "Bengaluru", 129716, 775946, "INR"},    {"SG", "Singapore", 13521, 1038198, "SGD"},
    {"AU", "Sydney", -338688, 1512093, "AUD"},     {"ZA", "Cape Town", -339249, 184241, "ZAR"},
    {"PL", "Krak\xc3\xb3w", 500647, 199450, "PLN"}, {"SE", "Stockholm", 593293, 180686, "SEK"},
    {"KR", "Seoul", 375665, 1269780, "KRW"},       {"NG", "Lagos", 65244, 33792, "NGN"},
    {"AR", "Buenos Aires", -346037, -583816, "ARS"}, {"TR", "Istanbul", 410082, 289784, "TRY"},
};
#define N_CITIES (sizeof k_cities / sizeof k_cities[0])

static const char *const k_tags[] = {
    "new_user", "returning", "promo", "mobile", "desktop", "ab_test_a", "ab_test_b",
    "newsletter", "organic", "paid", "referral", "beta", "dark_mode", "premium", "trial",
    "cart_abandoned", "wishlist", "sale", "holiday", "push", "email", "sms", "vip", "churn_risk",
    "onboarding", "feature_x", "feature_y", "slow_network", "offline", "retry", "deep_link",
    "widget",
};
#define N_TAGS (sizeof k_tags / sizeof k_tags[0])

/* Payload words, already JSON-escaped. A few carry escapes, non-ASCII text (raw UTF-8
 * and \u escapes, including a surrogate pair) and control characters, so the shredders
 * meet them in every benchmark. */
static const char *const k_words[] = {
    "the", "user", "clicked", "on", "a", "button", "and", "then", "scrolled", "down", "to",
    "see", "more", "items", "in", "list", "page", "loaded", "after", "ms", "with", "status",
    "ok", "error", "timeout", "retrying", "request", "sent", "from", "app", "widget", "home",
    "screen", "product", "detail", "cart", "checkout", "payment", "accepted", "declined",
    "session", "started", "ended", "quickly", "slowly", "banner", "shown", "hidden",
    "\\\"quoted\\\"", "back\\\\slash", "tab\\there", "line\\nbreak", "caf\xc3\xa9",
    "na\\u00efve", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "emoji\\ud83d\\ude00",
    "\xf0\x9f\x9a\x80", "ctrl\\u0001char", "slash\\/ok", "50%", "<b>bold</b>", "a&b",
    "\xc3\x9c\x62ung", "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82",
};
#define N_WORDS (sizeof k_words / sizeof k_words[0])
#define MAX_PAYLOAD_WORDS 96

/* Share of event types in which amount is present, percent; the rest is null. */
static unsigned amount_pct(const char *type) {
    if (!strcmp(type, "purchase"))
        return 96;
    if (!strcmp(type, "add_to_cart") || !strcmp(type, "checkout"))
        return 60;
    if (!strcmp(type, "remove_from_cart"))
        return 40;
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * The generator.
 * ------------------------------------------------------------------------------------- */
#define PS_PER_US 1000000ull
#define SESSION_WINDOW_US (30ll * 60 * 1000000)

typedef struct type_slot {
    char name[24];
    unsigned amount_pct;
} type_slot;

struct floe_gen {
    floe_gen_opts opts;
    rng256 rng; /* values of valid events */
    rng256 bad; /* malformed decisions and mutations */
    int64_t count;
    int64_t nominal_us;    /* nominal time of the next event */
    uint64_t rem_ps;       /* sub-microsecond remainder of the nominal clock */
    uint64_t period_ps;    /* 1/rate in picoseconds */
    uint64_t bad_threshold; /* malformed if (draw >> 11) < bad_threshold (53-bit scale) */
    uint64_t user_salt;
    type_slot *types;
    uint64_t *type_cdf;    /* cumulative Zipf weights */
    uint64_t type_total;
    int64_t ts_sec;        /* second cached in ts_prefix, or INT64_MIN */
    char ts_prefix[24];    /* "YYYY-MM-DDTHH:MM:SS" of ts_sec */
};

void floe_gen_opts_default(floe_gen_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->start_us = 1791244800ll * 1000000; /* 2026-10-06T00:00:00Z */
    o->rate = 1000;
    o->partitions = 8;
    o->jitter_us = 2000000;
    o->malformed_rate = 0;
}

int floe_gen_new(const floe_gen_opts *opts, floe_gen **out, floe_error *err) {
    int rc = 0;
    floe_gen *g = NULL;
    /* The comparisons are written so that NaN fails them. */
    if (!(opts->rate >= 1e-3 && opts->rate <= 1e9))
        FLOE_FAIL(err, FLOE_EINVALID, "gen: rate must be between 0.001 and 1e9 events/s");
    if (opts->partitions < 1 || opts->partitions > FLOE_GEN_MAX_PARTITIONS)
        FLOE_FAIL(err, FLOE_EINVALID, "gen: partitions must be between 1 and %d",
                  FLOE_GEN_MAX_PARTITIONS);
    if (opts->jitter_us < 0 || opts->jitter_us > 86400ll * 1000000)
        FLOE_FAIL(err, FLOE_EINVALID, "gen: jitter must be between 0 and 1 day");
    if (!(opts->malformed_rate >= 0 && opts->malformed_rate <= 1))
        FLOE_FAIL(err, FLOE_EINVALID, "gen: malformed rate must be between 0 and 1");
    /* Keep every timestamp within years 0001..9998 so the fixed-width format holds. */
    if (opts->start_us < -62135596800ll * 1000000 + 86400ll * 1000000 ||
        opts->start_us > 253370764800ll * 1000000)
        FLOE_FAIL(err, FLOE_EINVALID, "gen: start time out of range");

    g = floe_calloc(1, sizeof *g);
    if (!g)
        FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
    g->opts = *opts;
    rng_seed(&g->rng, opts->seed);
    rng_seed(&g->bad, opts->seed ^ 0x6261645F6C696E65ull); /* "bad_line" */
    g->user_salt = mix64(opts->seed ^ 0x7573657273616C74ull);
    g->nominal_us = opts->start_us;
    /* Both operations are exactly rounded IEEE ones: the same on every platform. */
    double period = 1e12 / opts->rate;
    g->period_ps = period < 1.0 ? 1 : (uint64_t)(period + 0.5);
    g->bad_threshold = (uint64_t)(opts->malformed_rate * 9007199254740992.0); /* 2^53 */
    g->ts_sec = INT64_MIN;

    size_t k = (size_t)opts->partitions;
    g->types = floe_calloc(k, sizeof *g->types);
    g->type_cdf = floe_calloc(k, sizeof *g->type_cdf);
    if (!g->types || !g->type_cdf)
        FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
    uint64_t total = 0;
    for (size_t i = 0; i < k; i++) {
        type_slot *t = &g->types[i];
        if (i < N_EVENT_TYPES)
            snprintf(t->name, sizeof t->name, "%s", k_event_types[i]);
        else
            snprintf(t->name, sizeof t->name, "event_%03u", (unsigned)(i + 1));
        t->amount_pct = amount_pct(t->name);
        /* Zipf with exponent 1: weight of rank r is 1/r. */
        total += (1ull << 24) / (i + 1);
        g->type_cdf[i] = total;
    }
    g->type_total = total;
    *out = g;
    g = NULL;
done:
    floe_gen_free(g);
    return rc;
}

void floe_gen_free(floe_gen *g) {
    if (!g)
        return;
    floe_free(g->types);
    floe_free(g->type_cdf);
    floe_free(g);
}

int64_t floe_gen_count(const floe_gen *g) {
    return g->count;
}

const char *floe_gen_partition_name(const floe_gen *g, int32_t k) {
    if (k < 0 || k >= g->opts.partitions)
        return NULL;
    return g->types[k].name;
}

/* ---------------------------------------------------------------------------------------
 * Time.
 * ------------------------------------------------------------------------------------- */
static inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void put2(char *p, unsigned v) {
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
}

/* "YYYY-MM-DDTHH:MM:SS" for second `sec` since the epoch (19 bytes). */
static void format_second(int64_t sec, char *p) {
    int64_t days = floor_div(sec, 86400);
    unsigned sod = (unsigned)(sec - days * 86400);
    int64_t y;
    unsigned m, d;
    floe_civil_from_days(days, &y, &m, &d);
    unsigned yy = (unsigned)(y < 0 ? 0 : y > 9999 ? 9999 : y);
    put2(p, yy / 100);
    put2(p + 2, yy % 100);
    p[4] = '-';
    put2(p + 5, m);
    p[7] = '-';
    put2(p + 8, d);
    p[10] = 'T';
    put2(p + 11, sod / 3600);
    p[13] = ':';
    put2(p + 14, sod / 60 % 60);
    p[16] = ':';
    put2(p + 17, sod % 60);
}

static void put_micros(char *p, unsigned us) {
    for (int i = 5; i >= 0; i--) {
        p[i] = (char)('0' + us % 10);
        us /= 10;
    }
}

size_t floe_gen_format_time(int64_t us, char *out) {
    int64_t sec = floor_div(us, 1000000);
    format_second(sec, out);
    out[19] = '.';
    put_micros(out + 20, (unsigned)(us - sec * 1000000));
    out[26] = 'Z';
    out[27] = '\0';
    return 27;
}

int floe_gen_parse_time(const char *s, int64_t *out_us, floe_error *err) {
    floe_lit_ts t;
    char why[128];
    int rc = floe_lit_timestamp(s, strlen(s), FLOE_LIT_USER, &t, why, sizeof why);
    if (rc == FLOE_LIT_OK)
        rc = floe_lit_ts_units(&t, 6, out_us, why, sizeof why);
    if (rc == FLOE_LIT_RANGE)
        return floe_error_set(err, FLOE_EINVALID, "gen: bad time '%s': %s", s, why);
    if (rc != FLOE_LIT_OK)
        return floe_error_set(err, FLOE_EINVALID,
                              "gen: bad time '%s' (want YYYY-MM-DD[THH:MM[:SS[.ffffff]]][Z|+HH:MM])",
                              s);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Writing an event. Everything goes through `char *p`, which has room for
 * FLOE_GEN_MAX_EVENT_BYTES.
 * ------------------------------------------------------------------------------------- */
#define PUT_LIT(p, lit)                                                                \
    do {                                                                               \
        memcpy((p), (lit), sizeof(lit) - 1);                                           \
        (p) += sizeof(lit) - 1;                                                        \
    } while (0)

static inline char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_u64(char *p, uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A fixed-point number value/10^scale in the shortest form a JSON writer would use:
 * 1250 scale 2 -> "12.5", 1200 -> "12", -5 scale 4 -> "-0.0005". */
static char *put_fixed(char *p, int64_t value, unsigned scale) {
    uint64_t mag = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    uint64_t pow10 = 1;
    for (unsigned i = 0; i < scale; i++)
        pow10 *= 10;
    uint64_t ip = mag / pow10, fp = mag % pow10;
    if (value < 0)
        *p++ = '-';
    p = put_u64(p, ip);
    if (fp) {
        *p++ = '.';
        char digits[20];
        unsigned nd = scale;
        for (unsigned i = scale; i > 0; i--) {
            digits[i - 1] = (char)('0' + fp % 10);
            fp /= 10;
        }
        while (nd > 0 && digits[nd - 1] == '0')
            nd--;
        memcpy(p, digits, nd);
        p += nd;
    }
    return p;
}

static const char k_hex[] = "0123456789abcdef";

static char *put_uuid(char *p, uint64_t hi, uint64_t lo) {
    /* version 4 (random), variant 10 (RFC 9562) */
    hi = (hi & ~0xF000ull) | 0x4000ull;
    lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
    uint8_t b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(hi >> (56 - 8 * i));
        b[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
    }
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = k_hex[b[i] >> 4];
        *p++ = k_hex[b[i] & 15];
    }
    return p;
}

/* Which required field a wrong-type or missing-field record mangles. */
enum mangle {
    MANGLE_NONE = 0,
    MANGLE_EVENT_ID,
    MANGLE_EVENT_TYPE,
    MANGLE_TS,
    MANGLE_USER_ID,
};

static void next_timestamp(floe_gen *g, int64_t *nominal, int64_t *ts) {
    *nominal = g->nominal_us;
    uint64_t period_us = g->period_ps / PS_PER_US;
    if (rng_pct(&g->rng, 90)) {
        *ts = g->nominal_us + (int64_t)rng_below(&g->rng, period_us ? period_us : 1);
    } else {
        uint64_t late = (uint64_t)g->opts.jitter_us + 1;
        *ts = g->nominal_us - (int64_t)rng_below(&g->rng, late);
    }
    g->rem_ps += g->period_ps;
    g->nominal_us += (int64_t)(g->rem_ps / PS_PER_US);
    g->rem_ps %= PS_PER_US;
}

static char *put_timestamp(floe_gen *g, char *p, int64_t us) {
    int64_t sec = floor_div(us, 1000000);
    if (sec != g->ts_sec) {
        format_second(sec, g->ts_prefix);
        g->ts_sec = sec;
    }
    memcpy(p, g->ts_prefix, 19);
    p[19] = '.';
    put_micros(p + 20, (unsigned)(us - sec * 1000000));
    p[26] = 'Z';
    return p + 27;
}

/* Writes one event (no newline) and returns the end. */
static char *emit_event(floe_gen *g, char *p, int32_t type, enum mangle mangle,
                        bool wrong_type, int64_t *ts_out) {
    rng256 *r = &g->rng;
    const type_slot *t = &g->types[type];
    int64_t nominal, ts;
    next_timestamp(g, &nominal, &ts);
    *ts_out = ts;

    /* The draws happen in a fixed order whatever is printed, so a mangled field does not
     * shift the values of the fields after it. */
    uint64_t id_hi = rng_next(r), id_lo = rng_next(r);
    unsigned bits = (unsigned)rng_below(r, 21);
    uint64_t user_id = (1ull << bits) + rng_below(r, 1ull << bits);

    *p++ = '{';
    bool first = true;
#define SEP()                                                                          \
    do {                                                                               \
        if (!first)                                                                    \
            *p++ = ',';                                                                \
        first = false;                                                                 \
    } while (0)

    if (mangle != MANGLE_EVENT_ID) {
        SEP();
        PUT_LIT(p, "\"event_id\":\"");
        p = put_uuid(p, id_hi, id_lo);
        *p++ = '"';
    } else if (wrong_type) {
        SEP();
        PUT_LIT(p, "\"event_id\":\"not-a-uuid-");
        p = put_u64(p, id_lo % 100000);
        *p++ = '"';
    }
    if (mangle != MANGLE_EVENT_TYPE) {
        SEP();
        PUT_LIT(p, "\"event_type\":\"");
        p = put_str(p, t->name);
        *p++ = '"';
    }
    if (mangle != MANGLE_TS) {
        SEP();
        PUT_LIT(p, "\"ts\":\"");
        p = put_timestamp(g, p, ts);
        *p++ = '"';
    } else if (wrong_type) {
        SEP();
        PUT_LIT(p, "\"ts\":true");
    }
    if (mangle != MANGLE_USER_ID) {
        SEP();
        PUT_LIT(p, "\"user_id\":");
        p = put_u64(p, user_id);
    } else if (wrong_type) {
        SEP();
        PUT_LIT(p, "\"user_id\":\"user-");
        p = put_u64(p, user_id);
        *p++ = '"';
    }
#undef SEP

    /* Sessions: one per user per 30-minute window of nominal time. */
    uint64_t uh = mix64(user_id ^ g->user_salt);
    uint64_t sid = mix64(uh ^ (uint64_t)floor_div(nominal, SESSION_WINDOW_US));
    PUT_LIT(p, ",\"session_id\":\"s-");
    for (int i = 15; i >= 0; i--)
        p[15 - i] = k_hex[(sid >> (4 * i)) & 15];
    p += 16;
    *p++ = '"';

    /* Device: the family, model and version belong to the user; a few events lose it. */
    bool device_null = rng_pct(r, 2);
    bool model_null = rng_pct(r, 1);
    PUT_LIT(p, ",\"device\":");
    if (device_null) {
        PUT_LIT(p, "null");
    } else {
        unsigned pick = (unsigned)(uh % 100), acc = 0;
        const device_family *f = &k_families[N_FAMILIES - 1];
        for (size_t i = 0; i < N_FAMILIES; i++) {
            acc += k_families[i].weight;
            if (pick < acc) {
                f = &k_families[i];
                break;
            }
        }
        PUT_LIT(p, "{\"os\":\"");
        p = put_str(p, f->os);
        PUT_LIT(p, "\",\"os_version\":\"");
        p = put_str(p, f->versions[(uh >> 8) % f->nversions]);
        PUT_LIT(p, "\",\"model\":");
        if (model_null) {
            PUT_LIT(p, "null");
        } else {
            *p++ = '"';
            p = put_str(p, f->models[(uh >> 16) % f->nmodels]);
            *p++ = '"';
        }
        PUT_LIT(p, ",\"app_version\":\"");
        p = put_u64(p, 2 + (uh >> 24) % 3);
        *p++ = '.';
        p = put_u64(p, (uh >> 28) % 12);
        *p++ = '.';
        p = put_u64(p, (uh >> 32) % 20);
        PUT_LIT(p, "\"}");
    }

    /* Geo: the user's home city most of the time, a random one when travelling. */
    bool geo_null = rng_pct(r, 3);
    bool travelling = rng_pct(r, 5);
    uint64_t travel_city = rng_below(r, N_CITIES);
    int64_t dlat = (int64_t)rng_below(r, 1001) - 500, dlon = (int64_t)rng_below(r, 1001) - 500;
    const city *c = &k_cities[travelling ? travel_city : (uh >> 40) % N_CITIES];
    PUT_LIT(p, ",\"geo\":");
    if (geo_null) {
        PUT_LIT(p, "null");
    } else {
        PUT_LIT(p, "{\"country\":\"");
        p = put_str(p, c->country);
        PUT_LIT(p, "\",\"city\":\"");
        p = put_str(p, c->name);
        PUT_LIT(p, "\",\"lat\":");
        p = put_fixed(p, c->lat_e4 + dlat, 4);
        PUT_LIT(p, ",\"lon\":");
        p = put_fixed(p, c->lon_e4 + dlon, 4);
        *p++ = '}';
    }

    /* Amount: cents on a log scale, 0.99 .. ~1300. currency only when amount is set. */
    bool has_amount = rng_pct(r, t->amount_pct);
    unsigned abits = 7 + (unsigned)rng_below(r, 11);
    int64_t cents = 99 + (int64_t)rng_below(r, 1ull << abits);
    PUT_LIT(p, ",\"amount\":");
    if (has_amount) {
        p = put_fixed(p, cents, 2);
        PUT_LIT(p, ",\"currency\":\"");
        p = put_str(p, c->currency);
        *p++ = '"';
    } else {
        PUT_LIT(p, "null");
    }

    /* Tags: 0-5, a fifth of the events have none. */
    unsigned ntags = rng_pct(r, 20) ? 0 : 1 + (unsigned)rng_below(r, 5);
    PUT_LIT(p, ",\"tags\":[");
    for (unsigned i = 0; i < ntags; i++) {
        if (i)
            *p++ = ',';
        *p++ = '"';
        p = put_str(p, k_tags[rng_below(r, N_TAGS)]);
        *p++ = '"';
    }
    *p++ = ']';

    /* Payload: free text, mostly short, sometimes long; a few null or empty. */
    unsigned pkind = (unsigned)rng_below(r, 100);
    PUT_LIT(p, ",\"payload\":");
    if (pkind < 2) {
        PUT_LIT(p, "null");
    } else {
        *p++ = '"';
        if (pkind >= 5) {
            unsigned wbits = (unsigned)rng_below(r, 7);
            unsigned nwords = 1 + (unsigned)rng_below(r, 3ull << wbits) % MAX_PAYLOAD_WORDS;
            for (unsigned i = 0; i < nwords; i++) {
                if (i)
                    *p++ = ' ';
                /* Common words far more often than the special ones at the end. */
                uint64_t w = rng_below(r, 16) ? rng_below(r, 48) : rng_below(r, N_WORDS);
                p = put_str(p, k_words[w]);
            }
        }
        *p++ = '"';
    }

    bool is_bot = rng_pct(r, 3);
    unsigned consent = (unsigned)rng_below(r, 100);
    PUT_LIT(p, ",\"is_bot\":");
    if (is_bot)
        PUT_LIT(p, "true");
    else
        PUT_LIT(p, "false");
    PUT_LIT(p, ",\"consent\":");
    if (consent < 85)
        PUT_LIT(p, "true");
    else if (consent < 95)
        PUT_LIT(p, "false");
    else
        PUT_LIT(p, "null");
    *p++ = '}';
    return p;
}

/* Break a valid line [start, end) so that no JSON parser accepts it. Returns the new end. */
static char *break_json(floe_gen *g, char *start, char *end) {
    size_t len = (size_t)(end - start);
    switch (rng_below(&g->bad, 3)) {
    case 0: {
        /* Truncated: the object is never closed. Cut on a UTF-8 character boundary so the
         * line stays valid text for the quarantine's readers. */
        size_t cut = 1 + (size_t)rng_below(&g->bad, len - 1);
        while (cut > 1 && ((unsigned char)start[cut] & 0xC0) == 0x80)
            cut--;
        return start + cut;
    }
    case 1:
        /* Trailing garbage after a complete object. */
        PUT_LIT(end, ",\"oops\"}");
        return end;
    default: {
        /* Single-quoted key: a classic hand-written-JSON mistake. */
        start[1] = '\'';
        char *q = memchr(start + 2, '"', len - 2);
        assert(q != NULL);
        *q = '\'';
        return end;
    }
    }
}

int floe_gen_next(floe_gen *g, floe_buf *out, floe_gen_event_info *info, floe_error *err) {
    int rc = 0;
    floe_gen_malformed kind = FLOE_GEN_OK;
    enum mangle mangle = MANGLE_NONE;
    /* The malformed decision is drawn from its own stream on every event. */
    uint64_t draw = rng_next(&g->bad) >> 11;
    if (draw < g->bad_threshold) {
        kind = (floe_gen_malformed)(1 + rng_below(&g->bad, 3));
        if (kind == FLOE_GEN_MISSING_FIELD) {
            mangle = (enum mangle)(MANGLE_EVENT_ID + rng_below(&g->bad, 4));
        } else if (kind == FLOE_GEN_WRONG_TYPE) {
            /* Not event_type: a string column may legitimately take other JSON text. */
            static const enum mangle typed[] = {MANGLE_EVENT_ID, MANGLE_TS, MANGLE_USER_ID};
            mangle = typed[rng_below(&g->bad, 3)];
        }
    }
    /* Event type drawn here, before the body, so every stream position is fixed. */
    uint64_t u = rng_below(&g->rng, g->type_total);
    int32_t lo = 0, hi = g->opts.partitions - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (u < g->type_cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }

    rc = floe_buf_reserve(out, FLOE_GEN_MAX_EVENT_BYTES);
    if (rc < 0)
        FLOE_FAIL(err, rc, "gen: output buffer: %s", floe_strerror(rc));
    char *start = (char *)out->data + out->len;
    int64_t ts;
    char *end = emit_event(g, start, lo, mangle, kind == FLOE_GEN_WRONG_TYPE, &ts);
    if (kind == FLOE_GEN_BAD_JSON)
        end = break_json(g, start, end);
    *end++ = '\n';
    assert((size_t)(end - start) <= FLOE_GEN_MAX_EVENT_BYTES);
    out->len += (size_t)(end - start);
    g->count++;
    if (info) {
        info->partition = lo;
        info->malformed = kind;
        info->ts_us = ts;
    }
done:
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * The schema. Field ids: top-level fields 1..13 first, then nested ones in order, the way
 * Iceberg assigns fresh ids. Kept byte-identical with tests/data/events.schema.json.
 * ------------------------------------------------------------------------------------- */
static const char k_schema_json[] =
    "{\n"
    "  \"type\" : \"struct\",\n"
    "  \"schema-id\" : 0,\n"
    "  \"identifier-field-ids\" : [ 1 ],\n"
    "  \"fields\" : [ {\n"
    "    \"id\" : 1,\n    \"name\" : \"event_id\",\n    \"required\" : true,\n"
    "    \"type\" : \"uuid\"\n"
    "  }, {\n"
    "    \"id\" : 2,\n    \"name\" : \"event_type\",\n    \"required\" : true,\n"
    "    \"type\" : \"string\"\n"
    "  }, {\n"
    "    \"id\" : 3,\n    \"name\" : \"ts\",\n    \"required\" : true,\n"
    "    \"type\" : \"timestamptz\"\n"
    "  }, {\n"
    "    \"id\" : 4,\n    \"name\" : \"user_id\",\n    \"required\" : true,\n"
    "    \"type\" : \"long\"\n"
    "  }, {\n"
    "    \"id\" : 5,\n    \"name\" : \"session_id\",\n    \"required\" : false,\n"
    "    \"type\" : \"string\"\n"
    "  }, {\n"
    "    \"id\" : 6,\n    \"name\" : \"device\",\n    \"required\" : false,\n"
    "    \"type\" : {\n"
    "      \"type\" : \"struct\",\n"
    "      \"fields\" : [ {\n"
    "        \"id\" : 14,\n        \"name\" : \"os\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      }, {\n"
    "        \"id\" : 15,\n        \"name\" : \"os_version\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      }, {\n"
    "        \"id\" : 16,\n        \"name\" : \"model\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      }, {\n"
    "        \"id\" : 17,\n        \"name\" : \"app_version\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      } ]\n"
    "    }\n"
    "  }, {\n"
    "    \"id\" : 7,\n    \"name\" : \"geo\",\n    \"required\" : false,\n"
    "    \"type\" : {\n"
    "      \"type\" : \"struct\",\n"
    "      \"fields\" : [ {\n"
    "        \"id\" : 18,\n        \"name\" : \"country\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      }, {\n"
    "        \"id\" : 19,\n        \"name\" : \"city\",\n        \"required\" : false,\n"
    "        \"type\" : \"string\"\n"
    "      }, {\n"
    "        \"id\" : 20,\n        \"name\" : \"lat\",\n        \"required\" : false,\n"
    "        \"type\" : \"double\"\n"
    "      }, {\n"
    "        \"id\" : 21,\n        \"name\" : \"lon\",\n        \"required\" : false,\n"
    "        \"type\" : \"double\"\n"
    "      } ]\n"
    "    }\n"
    "  }, {\n"
    "    \"id\" : 8,\n    \"name\" : \"amount\",\n    \"required\" : false,\n"
    "    \"type\" : \"double\"\n"
    "  }, {\n"
    "    \"id\" : 9,\n    \"name\" : \"currency\",\n    \"required\" : false,\n"
    "    \"type\" : \"string\"\n"
    "  }, {\n"
    "    \"id\" : 10,\n    \"name\" : \"tags\",\n    \"required\" : false,\n"
    "    \"type\" : {\n"
    "      \"type\" : \"list\",\n"
    "      \"element-id\" : 22,\n"
    "      \"element\" : \"string\",\n"
    "      \"element-required\" : true\n"
    "    }\n"
    "  }, {\n"
    "    \"id\" : 11,\n    \"name\" : \"payload\",\n    \"required\" : false,\n"
    "    \"type\" : \"string\"\n"
    "  }, {\n"
    "    \"id\" : 12,\n    \"name\" : \"is_bot\",\n    \"required\" : false,\n"
    "    \"type\" : \"boolean\"\n"
    "  }, {\n"
    "    \"id\" : 13,\n    \"name\" : \"consent\",\n    \"required\" : false,\n"
    "    \"type\" : \"boolean\"\n"
    "  } ]\n"
    "}\n";

const char *floe_gen_schema_json(void) {
    return k_schema_json;
}
