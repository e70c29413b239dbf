/*
 * health_html.c - the health report as one self-contained HTML page: inline CSS, charts
 * as inline SVG drawn here, no script, no fonts or images from the network.
 *
 * Sections: headline (one sentence and six figures), file-size histogram, files per
 * partition (top N, small files stacked), metadata growth over snapshots (manifests,
 * data files, records; small multiples so each keeps its own scale), before/after when
 * comparing, recommendations, and the detailed figures.
 *
 * Every string that comes from the table (names, paths, partition values, commands) goes
 * through floe_health_html_escape; numbers are formatted here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "health_internal.h"

#define TOP_PARTITIONS 15
#define TOP_RECS 25
#define LABEL_MAX_CHARS 40

typedef struct html {
    floe_buf *b;
    int rc;
} html;

static void put(html *h, const char *s) {
    if (h->rc == 0)
        h->rc = floe_buf_append(h->b, s, strlen(s));
}

static void putf(html *h, const char *fmt, ...) FLOE_PRINTF(2, 3);
static void putf(html *h, const char *fmt, ...) {
    if (h->rc)
        return;
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        h->rc = FLOE_EINTERNAL;
        return;
    }
    h->rc = floe_buf_append(h->b, tmp, (size_t)n);
}

static void esc(html *h, const char *s) {
    if (h->rc == 0)
        h->rc = floe_health_html_escape(h->b, s);
}

/* The byte offset after the first `chars` UTF-8 characters of s (or its end). */
static size_t utf8_skip(const char *s, size_t chars) {
    size_t i = 0;
    for (size_t k = 0; s[i] && k < chars; k++) {
        i++;
        while ((s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

/* Escape s; past max characters (UTF-8 aware) keep its beginning and its end with an
 * ellipsis between, so both the first partition field and the last stay readable (the
 * whole text goes in a title). */
static void esc_cut_middle(html *h, const char *s, size_t max) {
    size_t chars = 0;
    for (const char *p = s; *p; p++)
        chars += (*p & 0xC0) != 0x80;
    if (chars <= max) {
        esc(h, s);
        return;
    }
    size_t head = (max - 1) / 2, tail = max - 1 - head;
    char *a = floe_strndup(s, utf8_skip(s, head));
    if (!a) {
        h->rc = FLOE_ENOMEM;
        return;
    }
    esc(h, a);
    floe_free(a);
    put(h, "\xe2\x80\xa6");
    esc(h, s + utf8_skip(s, chars - tail));
}

static const char css[] =
    ":root{--ink:#1d2433;--muted:#5b6475;--line:#e3e7ee;--bg:#f6f7fb;--card:#fff;"
    "--accent:#2f6fed;--bad:#d64545;--warn:#e8903a;--ok:#2f9e6e;--old:#9aa3b2}"
    "*{box-sizing:border-box}"
    "body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 -apple-system,"
    "BlinkMacSystemFont,'Segoe UI',Roboto,'Helvetica Neue','DejaVu Sans',Arial,sans-serif}"
    "main{max-width:1240px;margin:0 auto;padding:32px 32px 56px}"
    "header{margin-bottom:20px}"
    ".kicker{text-transform:uppercase;letter-spacing:.12em;font-size:12px;color:var(--accent);"
    "font-weight:700}"
    "h1{font-size:30px;margin:4px 0 4px;letter-spacing:-.01em;overflow-wrap:anywhere}"
    ".sub{color:var(--muted);font-size:13px}"
    ".sub code{font-size:12px}"
    ".headline{font-size:22px;font-weight:600;margin:18px 0 18px;line-height:1.35}"
    ".headline .hl{color:var(--bad)}"
    ".cards{display:grid;grid-template-columns:repeat(6,1fr);gap:12px;margin-bottom:22px}"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:10px;"
    "padding:14px 16px}"
    ".card .v{font-size:24px;font-weight:700;letter-spacing:-.01em;white-space:nowrap}"
    ".card .l{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.06em}"
    ".card .n{font-size:12px;color:var(--muted)}"
    ".grid{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin-bottom:16px}"
    "section.panel{background:var(--card);border:1px solid var(--line);border-radius:10px;"
    "padding:18px 20px;margin-bottom:16px}"
    "h2{font-size:16px;margin:0 0 2px}"
    ".note{color:var(--muted);font-size:12.5px;margin:0 0 10px}"
    "svg{display:block;width:100%;height:auto}"
    "svg text{font-family:inherit;fill:#3b4456}"
    "table{border-collapse:collapse;width:100%;font-size:13.5px}"
    "th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}"
    "th{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);"
    "font-weight:600}"
    "td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    "code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12.5px;"
    "background:#f0f3f9;border-radius:5px;padding:2px 6px;overflow-wrap:anywhere}"
    ".why{color:var(--muted);font-size:12.5px;margin-top:4px}"
    ".legend{display:flex;gap:16px;font-size:12px;color:var(--muted);margin:0 0 6px}"
    ".sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;"
    "vertical-align:-1px}"
    ".good{color:var(--ok);font-weight:600}"
    "footer{color:var(--muted);font-size:12px;margin-top:20px}"
    "@media (max-width:900px){.cards{grid-template-columns:repeat(2,1fr)}.grid{grid-template-columns:1fr}}";

static const char *const bucket_color[FLOE_HEALTH_NBUCKETS] = {
    "#d64545", "#e8703a", "#e8a33a", "#c9b63c", "#5fae7a", "#2f9e6e"};

/* A "nice" axis maximum and step (1, 2, 5 x 10^k) covering v with about n ticks. */
static void nice_axis(double v, int n, double *max, double *step) {
    if (!(v > 0))
        v = 1;
    double raw = v / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
    double s = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    *step = s * mag;
    if (*step < 1)
        *step = 1;
    *max = ceil(v / *step) * *step;
}

/* ---------------------------------------------------------------------------------------
 * Charts
 * ------------------------------------------------------------------------------------- */
static void chart_histogram(html *h, const floe_health_files *f) {
    const double W = 560, H = 290, L = 56, R = 12, T = 24, B = 54;
    double maxv = 0, step;
    for (int i = 0; i < FLOE_HEALTH_NBUCKETS; i++)
        if ((double)f->buckets[i] > maxv)
            maxv = (double)f->buckets[i];
    double top;
    nice_axis(maxv, 4, &top, &step);
    putf(h, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"file-size histogram\">", W, H);
    char buf[64];
    for (double y = 0; y <= top + 1e-9; y += step) {
        double py = T + (H - T - B) * (1 - y / top);
        putf(h, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e7ee\"/>", L, W - R, py, py);
        putf(h, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", L - 8,
             py + 4, health_fmt_count(y, buf, sizeof buf));
    }
    double slot = (W - L - R) / FLOE_HEALTH_NBUCKETS, bw = slot * 0.66;
    for (int i = 0; i < FLOE_HEALTH_NBUCKETS; i++) {
        double v = (double)f->buckets[i];
        double bh = (H - T - B) * (v / top);
        double x = L + slot * i + (slot - bw) / 2, y = H - B - bh;
        putf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\" fill=\"%s\"/>",
             x, y, bw, bh > 0 ? bh : 0, bucket_color[i]);
        double share = f->data_files ? 100.0 * v / (double)f->data_files : 0;
        putf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"600\" "
                "text-anchor=\"middle\">%s",
             x + bw / 2, y - 6, health_fmt_count(v, buf, sizeof buf));
        if (f->data_files)
            putf(h, " <tspan font-weight=\"400\" fill=\"#5b6475\">(%.0f%%)</tspan>", share);
        put(h, "</text>");
        putf(h, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">%s</text>",
             x + bw / 2, H - B + 18, floe_health_bucket_label[i]);
    }
    putf(h, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#9aa3b2\"/>", L, W - R,
         H - B, H - B);
    putf(h, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#5b6475\">"
            "data file size</text>", L + (W - L - R) / 2, H - 12);
    putf(h, "<text transform=\"translate(14 %.0f) rotate(-90)\" font-size=\"12\" "
            "text-anchor=\"middle\" fill=\"#5b6475\">files</text>", T + (H - T - B) / 2);
    put(h, "</svg>");
}

static void chart_partitions(html *h, const floe_health_view *v) {
    size_t n = v->npartitions < TOP_PARTITIONS ? v->npartitions : TOP_PARTITIONS;
    /* L leaves LABEL_MAX_CHARS characters of 11.5 px text (7 px at the widest common
     * ones) left of the axis: a longer label is cut in the middle, never at the edge */
    const double W = 600, L = 8 + 7 * LABEL_MAX_CHARS + 8, R = 60, T = 8, row = 22;
    double H = T + row * (double)n + 34;
    double maxv = 0, step, top;
    for (size_t i = 0; i < n; i++)
        if ((double)v->partitions[i].files.data_files > maxv)
            maxv = (double)v->partitions[i].files.data_files;
    nice_axis(maxv, 4, &top, &step);
    char buf[64];
    putf(h, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"files per partition\">", W, H);
    double plot = W - L - R;
    for (double x = 0; x <= top + 1e-9; x += step) {
        double px = L + plot * x / top;
        putf(h, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#e3e7ee\"/>", px, px,
             T, T + row * (double)n);
        putf(h, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%s</text>", px,
             T + row * (double)n + 16, health_fmt_count(x, buf, sizeof buf));
    }
    for (size_t i = 0; i < n; i++) {
        const floe_health_partition *p = &v->partitions[i];
        double y = T + row * (double)i;
        double small = (double)p->files.small_files, all = (double)p->files.data_files;
        double ws = plot * small / top, wa = plot * all / top;
        put(h, "<g><title>");
        esc(h, p->path[0] ? p->path : "(unpartitioned)");
        putf(h, ": %lld file%s, %lld small</title>", (long long)p->files.data_files,
             health_s(p->files.data_files), (long long)p->files.small_files);
        putf(h, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11.5\" text-anchor=\"end\">", L - 8, y + 15);
        esc_cut_middle(h, p->path[0] ? p->path : "(unpartitioned)", LABEL_MAX_CHARS);
        put(h, "</text>");
        putf(h, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" rx=\"2\" fill=\"#5fae7a\"/>",
             L, y + 3, wa);
        if (ws > 0)
            putf(h, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" rx=\"2\" fill=\"#e8703a\"/>",
                 L, y + 3, ws);
        putf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11.5\" font-weight=\"600\">%s</text></g>",
             L + wa + 6, y + 15, health_fmt_int(p->files.data_files, buf, sizeof buf));
    }
    putf(h, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#5b6475\">"
            "data files</text>", L + plot / 2, H - 2);
    put(h, "</svg>");
}

/* One small line chart of a history series; values < 0 are gaps. */
static void chart_series(html *h, const floe_health_report *r, const char *title, int which,
                         const char *color) {
    const double W = 380, H = 230, L = 58, R = 14, T = 30, B = 40;
    size_t n = r->nhistory;
    double maxv = 0;
    for (size_t i = 0; i < n; i++) {
        const floe_health_history_point *p = &r->history[i];
        double v = which == 0 ? (double)p->manifests : which == 1 ? (double)p->data_files : (double)p->records;
        if ((which != 0 || p->list_read) && v > maxv)
            maxv = v;
    }
    double top, step;
    nice_axis(maxv, 4, &top, &step);
    char buf[64];
    putf(h, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", W, H);
    esc(h, title);
    put(h, " over snapshots\">");
    putf(h, "<text x=\"%.0f\" y=\"16\" font-size=\"13\" font-weight=\"600\">", L - 50);
    esc(h, title);
    put(h, "</text>");
    for (double y = 0; y <= top + 1e-9; y += step) {
        double py = T + (H - T - B) * (1 - y / top);
        putf(h, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e7ee\"/>", L, W - R, py, py);
        putf(h, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", L - 6,
             py + 4, health_fmt_count(y, buf, sizeof buf));
    }
    double plot = W - L - R;
    put(h, "<polyline fill=\"none\" stroke-width=\"2.2\" stroke-linejoin=\"round\" stroke=\"");
    put(h, color);
    put(h, "\" points=\"");
    for (size_t i = 0; i < n; i++) {
        const floe_health_history_point *p = &r->history[i];
        double v = which == 0 ? (double)p->manifests : which == 1 ? (double)p->data_files : (double)p->records;
        if ((which == 0 && !p->list_read) || v < 0)
            continue;
        double x = L + (n > 1 ? plot * (double)i / (double)(n - 1) : plot / 2);
        double y = T + (H - T - B) * (1 - v / top);
        putf(h, "%.1f,%.1f ", x, y);
    }
    put(h, "\"/>");
    if (n <= 40)
        for (size_t i = 0; i < n; i++) {
            const floe_health_history_point *p = &r->history[i];
            double v = which == 0 ? (double)p->manifests : which == 1 ? (double)p->data_files : (double)p->records;
            if ((which == 0 && !p->list_read) || v < 0)
                continue;
            double x = L + (n > 1 ? plot * (double)i / (double)(n - 1) : plot / 2);
            double y = T + (H - T - B) * (1 - v / top);
            putf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>snapshot %lld: %s</title></circle>",
                 x, y, color, (long long)p->snapshot_id, health_fmt_int((int64_t)v, buf, sizeof buf));
        }
    putf(h, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#9aa3b2\"/>", L, W - R,
         H - B, H - B);
    if (n) {
        char d1[40], d2[40];
        health_fmt_time(r->history[0].timestamp_ms, d1, sizeof d1);
        health_fmt_time(r->history[n - 1].timestamp_ms, d2, sizeof d2);
        d1[16] = d2[16] = 0; /* "YYYY-MM-DD HH:MM"; the caption says UTC */
        putf(h, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%s</text>", L, H - B + 16, d1);
        if (n > 1)
            putf(h, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%s</text>",
                 W - R, H - B + 16, d2);
        putf(h, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\" "
                "fill=\"#5b6475\">%zu snapshot%s, oldest to newest (UTC)</text>",
             L + plot / 2, H - 6, n, n == 1 ? "" : "s");
    }
    put(h, "</svg>");
}

typedef struct cmp_metric {
    const char *label;
    double before, after;
    bool bytes;
} cmp_metric;

static void chart_compare(html *h, const floe_health_report *r) {
    const floe_health_view *a = &r->compare, *c = &r->current;
    cmp_metric ms[] = {
        {"data files", (double)a->total.data_files, (double)c->total.data_files, false},
        {"small files", (double)a->total.small_files, (double)c->total.small_files, false},
        {"delete files", (double)(a->total.pos_delete_files + a->total.eq_delete_files +
                                  a->total.dv_count),
         (double)(c->total.pos_delete_files + c->total.eq_delete_files + c->total.dv_count),
         false},
        {"manifests", (double)a->meta.manifests, (double)c->meta.manifests, false},
        {"GET to plan", (double)a->req.plan_get, (double)c->req.plan_get, false},
        {"GET to scan", (double)a->req.scan_get, (double)c->req.scan_get, false},
        {"manifest bytes", (double)a->meta.manifest_bytes, (double)c->meta.manifest_bytes, true},
    };
    size_t n = sizeof ms / sizeof ms[0];
    const double W = 1160, L = 150, R = 260, T = 8, row = 44;
    double H = T + row * (double)n + 8, plot = W - L - R;
    char b1[64], b2[64];
    putf(h, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"before and after\">", W, H);
    for (size_t i = 0; i < n; i++) {
        double top = ms[i].before > ms[i].after ? ms[i].before : ms[i].after;
        if (top <= 0)
            top = 1;
        double y = T + row * (double)i;
        putf(h, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12.5\" text-anchor=\"end\" "
                "font-weight=\"600\">%s</text>", L - 10, y + 22, ms[i].label);
        double wb = plot * ms[i].before / top, wa = plot * ms[i].after / top;
        putf(h, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" rx=\"2\" fill=\"#9aa3b2\"/>",
             L, y + 4, wb);
        putf(h, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"15\" rx=\"2\" fill=\"#2f6fed\"/>",
             L, y + 21, wa);
        const char *fb = ms[i].bytes ? health_fmt_bytes(ms[i].before, b1, sizeof b1)
                                     : health_fmt_int((int64_t)ms[i].before, b1, sizeof b1);
        const char *fa = ms[i].bytes ? health_fmt_bytes(ms[i].after, b2, sizeof b2)
                                     : health_fmt_int((int64_t)ms[i].after, b2, sizeof b2);
        putf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11.5\" fill=\"#5b6475\">%s</text>",
             L + wb + 6, y + 16, fb);
        putf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11.5\" font-weight=\"600\">%s", L + wa + 6,
             y + 33, fa);
        if (ms[i].before > 0) {
            double pct = 100.0 * (ms[i].after - ms[i].before) / ms[i].before;
            putf(h, " <tspan fill=\"%s\">(%+.0f%%)</tspan>",
                 pct < 0 ? "#2f9e6e" : pct > 0 ? "#d64545" : "#5b6475", pct);
        }
        put(h, "</text>");
    }
    put(h, "</svg>");
}

/* ---------------------------------------------------------------------------------------
 * Page
 * ------------------------------------------------------------------------------------- */
static void card(html *h, const char *label, const char *value, const char *note) {
    put(h, "<div class=\"card\"><div class=\"l\">");
    esc(h, label);
    put(h, "</div><div class=\"v\">");
    esc(h, value);
    put(h, "</div><div class=\"n\">");
    esc(h, note);
    put(h, "</div></div>");
}

static void detail_row(html *h, const char *label, const char *cur, const char *cmp, bool with_cmp) {
    put(h, "<tr><td>");
    esc(h, label);
    put(h, "</td><td class=\"num\">");
    esc(h, cur);
    put(h, "</td>");
    if (with_cmp) {
        put(h, "<td class=\"num\">");
        esc(h, cmp);
        put(h, "</td>");
    }
    put(h, "</tr>");
}

static void details(html *h, const floe_health_report *r) {
    const floe_health_view *vs[2] = {&r->current, r->has_compare ? &r->compare : NULL};
    bool wc = r->has_compare;
    char a[64], c[64], t[64];
    put(h, "<section class=\"panel\"><h2>All figures</h2><table><tr><th>figure</th><th class=\"num\">");
    if (wc)
        putf(h, "current (%lld)</th><th class=\"num\">compare (%lld)</th></tr>",
             (long long)r->current.snapshot_id, (long long)r->compare.snapshot_id);
    else
        put(h, "value</th></tr>");
#define DROW(label, fmt_expr)                                                          \
    do {                                                                               \
        const floe_health_view *v = vs[0];                                             \
        snprintf(a, sizeof a, "%s", (fmt_expr));                                       \
        if (wc) {                                                                      \
            v = vs[1];                                                                 \
            snprintf(c, sizeof c, "%s", (fmt_expr));                                   \
        } else {                                                                       \
            c[0] = 0;                                                                  \
        }                                                                              \
        detail_row(h, label, a, c, wc);                                                \
    } while (0)
    DROW("data files", health_fmt_int(v->total.data_files, t, sizeof t));
    DROW("data size", health_fmt_bytes((double)v->total.data_bytes, t, sizeof t));
    DROW("records", health_fmt_int(v->total.records, t, sizeof t));
    DROW("average data file", health_fmt_bytes(v->total.data_files ? (double)v->total.data_bytes / (double)v->total.data_files : 0, t, sizeof t));
    DROW("files under the rewrite minimum", health_fmt_int(v->total.small_files, t, sizeof t));
    DROW("partitions", health_fmt_int((int64_t)v->npartitions, t, sizeof t));
    DROW("position delete files", health_fmt_int(v->total.pos_delete_files, t, sizeof t));
    DROW("position delete bytes", health_fmt_bytes((double)v->total.pos_delete_bytes, t, sizeof t));
    DROW("equality delete files", health_fmt_int(v->total.eq_delete_files, t, sizeof t));
    DROW("equality delete bytes", health_fmt_bytes((double)v->total.eq_delete_bytes, t, sizeof t));
    DROW("deletion vectors", health_fmt_int(v->total.dv_count, t, sizeof t));
    DROW("manifests", health_fmt_int(v->meta.manifests, t, sizeof t));
    DROW("manifest bytes", health_fmt_bytes((double)v->meta.manifest_bytes, t, sizeof t));
    DROW("manifest list", health_fmt_bytes((double)v->meta.manifest_list_bytes, t, sizeof t));
    DROW("metadata file", health_fmt_bytes((double)v->meta.metadata_json_bytes, t, sizeof t));
    DROW("snapshots", health_fmt_int(v->meta.snapshots, t, sizeof t));
    DROW("oldest snapshot age", v->meta.snapshots ? health_fmt_age(v->meta.oldest_age_ms, t, sizeof t) : "-");
    DROW("GET to plan a full scan", health_fmt_int(v->req.plan_get, t, sizeof t));
    DROW("GET to scan the table", health_fmt_int(v->req.scan_get, t, sizeof t));
    DROW("LIST per query", health_fmt_int(v->req.plan_list, t, sizeof t));
    DROW("GET per month (full scans)", health_fmt_count(v->req.monthly_get, t, sizeof t));
    DROW("request cost per month", health_fmt_money(v->req.monthly_cost, t, sizeof t));
    DROW("point query: manifests read", health_fmt_int(v->req.point_manifests, t, sizeof t));
    DROW("point query: files selected", health_fmt_int(v->req.point_files, t, sizeof t));
    DROW("point query: GET", health_fmt_int(v->req.point_plan_get + v->req.point_scan_get, t, sizeof t));
    DROW("planning, full scan (median)", v->timing.runs ? health_fmt_ms(v->timing.full_ns, t, sizeof t) : "-");
    DROW("planning, point query (median)", v->timing.runs && v->point_filter ? health_fmt_ms(v->timing.point_ns, t, sizeof t) : "-");
#undef DROW
    snprintf(a, sizeof a, "%lld", (long long)r->current.meta.manifest_lists);
    detail_row(h, "manifest lists (all snapshots)", a, "", wc);
    detail_row(h, "manifest list bytes (all snapshots)",
               health_fmt_bytes((double)r->current.meta.all_manifest_list_bytes, t, sizeof t), "", wc);
    snprintf(a, sizeof a, "%lld", (long long)r->current.meta.metadata_log);
    detail_row(h, "metadata log entries", a, "", wc);
    put(h, "</table></section>");
}

/* Churn over the window: what compaction rewrote, what the disk holds. */
static void churn_panel(html *h, const floe_health_report *r) {
    const floe_health_churn *ch = &r->churn;
    char a[64], t[64];
    put(h, "<section class=\"panel\"><h2>Churn</h2>");
    putf(h, "<p class=\"note\">Snapshots of the last %s still in the metadata (since %s).</p>",
         health_fmt_age(ch->window_ms, t, sizeof t), health_fmt_time(ch->from_ms, a, sizeof a));
    put(h, "<table><tr><th>figure</th><th class=\"num\">value</th></tr>");
    detail_row(h, "writer commits", health_fmt_int(ch->writer_commits, t, sizeof t), "", false);
    detail_row(h, "bytes appended", health_fmt_bytes((double)ch->bytes_appended, t, sizeof t), "",
               false);
    detail_row(h, "rewrite commits", health_fmt_int(ch->rewrite_commits, t, sizeof t), "", false);
    detail_row(h, "bytes rewritten", health_fmt_bytes((double)ch->bytes_rewritten, t, sizeof t),
               "", false);
    if (ch->write_amplification >= 0)
        snprintf(a, sizeof a, "%.2fx", ch->write_amplification);
    else
        snprintf(a, sizeof a, "-");
    detail_row(h, "write amplification (rewritten / appended)", a, "", false);
    detail_row(h, "live data and delete files", health_fmt_bytes((double)ch->live_bytes, t, sizeof t),
               "", false);
    if (ch->live_outside_files)
        detail_row(h, "of those outside the table's folders (not in the amplification)",
                   health_fmt_bytes((double)ch->live_outside_bytes, t, sizeof t), "", false);
    if (ch->listed) {
        detail_row(h, "data on disk", health_fmt_bytes((double)ch->disk_data_bytes, t, sizeof t),
                   "", false);
        detail_row(h, "metadata on disk",
                   health_fmt_bytes((double)ch->disk_metadata_bytes, t, sizeof t), "", false);
        if (ch->storage_amplification >= 0)
            snprintf(a, sizeof a, "%.2fx", ch->storage_amplification);
        else
            snprintf(a, sizeof a, "-");
        detail_row(h, "storage amplification (on disk / live)", a, "", false);
    } else {
        detail_row(h, "bytes on disk", ch->listing_error ? ch->listing_error : "not listed", "",
                   false);
    }
    put(h, "</table></section>");
}

int floe_health_report_html(const floe_health_report *r, floe_buf *out, floe_error *err) {
    html hh = {.b = out};
    html *h = &hh;
    const floe_health_view *v = &r->current;
    const floe_health_files *f = &v->total;
    char b1[64], b2[64], b3[64];

    put(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
           "<title>floe health: ");
    esc(h, r->table_ref);
    put(h, "</title><style>");
    put(h, css);
    put(h, "</style></head><body><main>");

    /* Header. */
    put(h, "<header><div class=\"kicker\">floe health report</div><h1>");
    esc(h, r->table_ref);
    put(h, "</h1><div class=\"sub\">");
    if (v->has_snapshot)
        putf(h, "snapshot %lld of %s &middot; ", (long long)v->snapshot_id,
             health_fmt_time(v->timestamp_ms, b1, sizeof b1));
    else
        put(h, "no snapshot yet &middot; ");
    putf(h, "format v%d &middot; report generated %s<br>metadata <code>", r->format_version,
         health_fmt_time(r->generated_ms, b2, sizeof b2));
    esc(h, r->metadata_location);
    put(h, "</code></div></header>");

    /* Headline sentence. Small files are a problem where a partition holds more of them
     * than its data needs (fragmented_files): a small table in a few small files is
     * healthy, and is not headlined in red. */
    double small_share = f->data_files ? 100.0 * (double)f->small_files / (double)f->data_files : 0;
    double tiny_share = f->data_files ? 100.0 * (double)f->buckets[0] / (double)f->data_files : 0;
    double frag_share =
        f->data_files ? 100.0 * (double)f->fragmented_files / (double)f->data_files : 0;
    put(h, "<p class=\"headline\">");
    putf(h, "%s data file%s", health_fmt_int(f->data_files, b1, sizeof b1),
         health_s(f->data_files));
    if (f->data_files && frag_share >= 50) {
        if (tiny_share >= 50)
            putf(h, ", <span class=\"hl\">%.0f%% under 1 MB</span>", tiny_share);
        else
            putf(h, ", <span class=\"hl\">%.0f%% under the %.4g MB rewrite minimum</span>",
                 small_share, (double)r->min_file_size / 1048576.0);
    } else if (f->data_files && f->small_files > f->fragmented_files) {
        putf(h, ", <span class=\"good\">%.0f%% under the %.4g MB rewrite minimum, but %s "
                "holds more files than its data needs</span>", small_share,
             (double)r->min_file_size / 1048576.0,
             f->fragmented_files ? "most of the table's partitions" : "no partition");
    } else if (f->data_files) {
        putf(h, ", <span class=\"%s\">%.0f%% under the %.4g MB rewrite minimum</span>",
             small_share >= 50 ? "hl" : "good", small_share, (double)r->min_file_size / 1048576.0);
    }
    putf(h, ", ~%s GET requests/month at %g full scans/day (%s).",
         health_fmt_count(v->req.monthly_get, b2, sizeof b2), r->opts.queries_per_day,
         health_fmt_money(v->req.monthly_cost, b3, sizeof b3));
    put(h, "</p>");

    /* Cards. */
    put(h, "<div class=\"cards\">");
    snprintf(b3, sizeof b3, "%s in %s partition%s", health_fmt_bytes((double)f->data_bytes, b2, sizeof b2),
             health_fmt_int((int64_t)v->npartitions, b1, sizeof b1), v->npartitions == 1 ? "" : "s");
    card(h, "data files", health_fmt_int(f->data_files, b1, sizeof b1), b3);
    snprintf(b1, sizeof b1, "%.0f%%", frag_share);
    snprintf(b3, sizeof b3, "of the files; %s file%s under %.4g MB in all",
             health_fmt_int(f->small_files, b2, sizeof b2), health_s(f->small_files),
             (double)r->min_file_size / 1048576.0);
    card(h, "small files to rewrite", b1, b3);
    snprintf(b3, sizeof b3, "%s per month", health_fmt_money(v->req.monthly_cost, b2, sizeof b2));
    card(h, "GET requests / month", health_fmt_count(v->req.monthly_get, b1, sizeof b1), b3);
    snprintf(b3, sizeof b3, "plan %s + scan %s", health_fmt_int(v->req.plan_get, b1, sizeof b1),
             health_fmt_int(v->req.scan_get, b2, sizeof b2));
    card(h, "GET per full scan", health_fmt_int(v->req.plan_get + v->req.scan_get, b1, sizeof b1), b3);
    if (v->timing.runs) {
        if (v->point_filter)
            snprintf(b3, sizeof b3, "point query %s", health_fmt_ms(v->timing.point_ns, b2, sizeof b2));
        else
            snprintf(b3, sizeof b3, "median of %d run%s", v->timing.runs,
                     health_s(v->timing.runs));
        card(h, "planning, full scan", health_fmt_ms(v->timing.full_ns, b1, sizeof b1), b3);
    } else {
        card(h, "planning, full scan", "-", "not measured");
    }
    snprintf(b3, sizeof b3, "%s snapshot%s, %s", health_fmt_int(v->meta.snapshots, b2, sizeof b2),
             health_s(v->meta.snapshots),
             health_fmt_bytes((double)v->meta.manifest_bytes, b1, sizeof b1));
    card(h, "manifests", health_fmt_int(v->meta.manifests, b1, sizeof b1), b3);
    put(h, "</div>");

    /* Histogram and partitions. */
    put(h, "<div class=\"grid\"><section class=\"panel\"><h2>File-size histogram</h2>");
    putf(h, "<p class=\"note\">Data files by size. Iceberg rewrites files under %.4g MB (75%% of "
            "the %.4g MB target); every file costs at least two GETs per scan.</p>",
         (double)r->min_file_size / 1048576.0, (double)r->target_file_size / 1048576.0);
    chart_histogram(h, f);
    put(h, "</section><section class=\"panel\"><h2>Files per partition</h2>");
    if (v->npartitions) {
        putf(h, "<p class=\"note\">The %zu partition%s with the most data files, of %zu.</p>",
             v->npartitions < TOP_PARTITIONS ? v->npartitions : (size_t)TOP_PARTITIONS,
             v->npartitions == 1 ? "" : "s", v->npartitions);
        putf(h, "<div class=\"legend\"><span><span class=\"sw\" style=\"background:#e8703a\"></span>"
                "under %.4g MB</span><span><span class=\"sw\" style=\"background:#5fae7a\"></span>"
                "other files</span></div>", (double)r->min_file_size / 1048576.0);
        chart_partitions(h, v);
    } else {
        put(h, "<p class=\"note\">No data files.</p>");
    }
    put(h, "</section></div>");

    /* Growth. */
    put(h, "<section class=\"panel\"><h2>Metadata growth over snapshots</h2>"
           "<p class=\"note\">From each snapshot's manifest list (manifests, live data files "
           "and records it reaches), falling back to the snapshot summary.</p>");
    if (r->nhistory) {
        put(h, "<div style=\"display:grid;grid-template-columns:repeat(3,1fr);gap:12px\"><div>");
        chart_series(h, r, "manifests", 0, "#2f6fed");
        put(h, "</div><div>");
        chart_series(h, r, "data files", 1, "#e8703a");
        put(h, "</div><div>");
        chart_series(h, r, "records", 2, "#2f9e6e");
        put(h, "</div></div>");
    } else {
        put(h, "<p class=\"note\">No snapshots.</p>");
    }
    put(h, "</section>");

    /* Before / after. */
    if (r->has_compare) {
        put(h, "<section class=\"panel\"><h2>Before and after</h2>");
        putf(h, "<p class=\"note\">Snapshot %lld (grey) against snapshot %lld (blue).</p>",
             (long long)r->compare.snapshot_id, (long long)r->current.snapshot_id);
        put(h, "<div class=\"legend\"><span><span class=\"sw\" style=\"background:#9aa3b2\"></span>");
        putf(h, "compare %lld</span><span><span class=\"sw\" style=\"background:#2f6fed\"></span>"
                "current %lld</span></div>",
             (long long)r->compare.snapshot_id, (long long)r->current.snapshot_id);
        chart_compare(h, r);
        put(h, "</section>");
    }

    /* Recommendations. */
    put(h, "<section class=\"panel\"><h2>Recommendations</h2>");
    if (r->nrecs == 0) {
        put(h, "<p class=\"note good\">Nothing to do: no partition has enough small files to "
               "rewrite, manifests are compact and snapshots are within the table's expiry "
               "settings.</p>");
    } else {
        put(h, "<p class=\"note\">Ordered by the GET requests they save per month, then by the "
               "metadata bytes they remove.</p><table><tr><th>#</th><th>command</th>"
               "<th class=\"num\">GET saved / month</th><th class=\"num\">$ / month</th>"
               "<th class=\"num\">metadata saved</th><th class=\"num\">before &rarr; after</th></tr>");
        for (size_t i = 0; i < r->nrecs && i < TOP_RECS; i++) {
            const floe_health_rec *x = &r->recs[i];
            putf(h, "<tr><td>%zu</td><td><code>", i + 1);
            esc(h, x->command);
            put(h, "</code><div class=\"why\">");
            esc(h, x->reason);
            putf(h, "</div></td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
                 x->monthly_requests_saved > 0 ? health_fmt_count(x->monthly_requests_saved, b1, sizeof b1) : "-",
                 x->monthly_cost_saved > 0 ? health_fmt_money(x->monthly_cost_saved, b2, sizeof b2) : "-");
            putf(h, "<td class=\"num\">%s</td>",
                 x->metadata_bytes_saved > 0 ? health_fmt_bytes((double)x->metadata_bytes_saved, b1, sizeof b1) : "-");
            putf(h, "<td class=\"num\">%s &rarr; %s %s</td></tr>", health_fmt_int(x->files_before, b1, sizeof b1),
                 health_fmt_int(x->files_after, b2, sizeof b2),
                 x->kind == FLOE_HEALTH_REC_EXPIRE ? "snapshots"
                 : x->kind == FLOE_HEALTH_REC_REWRITE_MANIFESTS ? "manifests"
                 : x->kind == FLOE_HEALTH_REC_REWRITE_DELETES ? "delete files" : "files");
        }
        put(h, "</table>");
        if (r->nrecs > TOP_RECS)
            putf(h, "<p class=\"note\">%zu more in <code>floe health --json</code>.</p>", r->nrecs - TOP_RECS);
    }
    put(h, "</section>");

    churn_panel(h, r);
    details(h, r);

    put(h, "<footer><p><b>Request model.</b> ");
    esc(h, health_request_model);
    putf(h, ". Prices per 1000 requests: GET $%g, LIST $%g, PUT $%g (S3 Standard list prices "
            "unless given). Monthly figures assume %g full-table scans a day for 30 days. ",
         r->opts.price_get, r->opts.price_list, r->opts.price_put, r->opts.queries_per_day);
    if (v->point_filter) {
        put(h, "Point query: <code>");
        esc(h, v->point_filter);
        put(h, "</code>. ");
    }
    if (v->planning_error) {
        put(h, "The scan planner refused the table, so planning was not timed: ");
        esc(h, v->planning_error);
        put(h, ". ");
    }
    putf(h, "Planning times are the median of %d run%s of floe's scan planner from a cold start "
            "(metadata file read and parsed each run).</p>"
            "<p>Generated by floe %s. This page is self-contained: no scripts, no network.</p>"
            "</footer></main></body></html>\n",
         r->opts.timing_runs, health_s(r->opts.timing_runs), FLOE_VERSION_STRING);
    if (h->rc < 0)
        return floe_error_set(err, h->rc, "health: rendering HTML: %s", floe_strerror(h->rc));
    return 0;
}
