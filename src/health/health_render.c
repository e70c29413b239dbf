/*
 * health_render.c - the text and JSON renderings of a health report, and the number
 * formatting and quoting shared with the HTML page.
 *
 * JSON layout (stable; tests check it):
 *   {"table","metadata_location","table_location","format_version","generated_ms",
 *    "settings":{"target_file_size","min_file_size","min_input_files","row_group_size",
 *                "manifest_target_size","queries_per_day","price_get_per_1000",
 *                "price_list_per_1000","price_put_per_1000","timing_runs",
 *                "request_model","buckets":[{"label","lower"}...]},
 *    "current":VIEW, "compare":VIEW|null, "history":[...], "recommendations":[...],
 *    "churn":{"window_ms","from_ms","to_ms","writer_commits","rewrite_commits",
 *             "bytes_appended","bytes_rewritten","write_amplification"|null,"live_bytes",
 *             "live_outside_files","live_outside_bytes",
 *             "listed","listing_error","disk_data_files","disk_data_bytes",
 *             "disk_metadata_files","disk_metadata_bytes","storage_amplification"|null}}
 *   VIEW = {"snapshot_id","timestamp_ms","sequence_number","files":FILES,
 *           "partition_count","partitions":[{"spec_id","path","where","files":FILES}],
 *           "metadata":{...},"requests":{...},"planning":{...},"point_filter"}
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "health_internal.h"

const char health_request_model[] =
    "plan = 1 GET metadata file + 1 GET manifest list + 1 GET per manifest read; "
    "scan = per data or delete file 1 GET footer + 1 GET per row group (column chunks of "
    "a row group fetched in one ranged GET); no LIST for catalog tables";

const char *health_rec_kind_name(floe_health_rec_kind k) {
    switch (k) {
    case FLOE_HEALTH_REC_REWRITE_PARTITION: return "rewrite-partition";
    case FLOE_HEALTH_REC_REWRITE_TABLE: return "rewrite-table";
    case FLOE_HEALTH_REC_REWRITE_MANIFESTS: return "rewrite-manifests";
    case FLOE_HEALTH_REC_EXPIRE: return "expire";
    case FLOE_HEALTH_REC_REWRITE_DELETES: return "rewrite-deletes";
    }
    return "unknown";
}

const char *health_fmt_int(int64_t v, char *buf, size_t n) {
    char tmp[32];
    unsigned long long u = v < 0 ? (unsigned long long)(-(v + 1)) + 1 : (unsigned long long)v;
    int len = snprintf(tmp, sizeof tmp, "%llu", u);
    size_t o = 0;
    if (v < 0 && o + 1 < n)
        buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < n; i++) {
        if (i && (len - i) % 3 == 0 && o + 1 < n)
            buf[o++] = ',';
        if (o + 1 < n)
            buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

const char *health_fmt_count(double v, char *buf, size_t n) {
    if (v >= 1e12)
        snprintf(buf, n, "%.1f T", v / 1e12);
    else if (v >= 1e9)
        snprintf(buf, n, "%.1f B", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, n, "%.1f M", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, n, "%.1f K", v / 1e3);
    else
        health_fmt_int((int64_t)llround(v), buf, n);
    return buf;
}

const char *health_fmt_bytes(double v, char *buf, size_t n) {
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, u ? (v < 10 ? "%.2f %s" : "%.1f %s") : "%.0f %s", v, units[u]);
    return buf;
}

const char *health_fmt_ms(int64_t ns, char *buf, size_t n) {
    double ms = (double)ns / 1e6;
    snprintf(buf, n, ms < 10 ? "%.2f ms" : ms < 1000 ? "%.1f ms" : "%.0f ms", ms);
    return buf;
}

const char *health_fmt_age(int64_t ms, char *buf, size_t n) {
    double s = (double)ms / 1000.0;
    if (s < 120)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.0f min", s / 60);
    else if (s < 172800)
        snprintf(buf, n, "%.1f h", s / 3600);
    else
        snprintf(buf, n, "%.1f days", s / 86400);
    return buf;
}

const char *health_fmt_time(int64_t ms, char *buf, size_t n) {
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000;
    int64_t y;
    unsigned mo, d;
    floe_civil_from_days(days, &y, &mo, &d);
    snprintf(buf, n, "%04lld-%02u-%02u %02d:%02d UTC", (long long)y, mo, d,
             (int)(rem / 3600000), (int)(rem / 60000 % 60));
    return buf;
}

const char *health_fmt_money(double usd, char *buf, size_t n) {
    if (usd >= 100)
        snprintf(buf, n, "$%.0f", usd);
    else if (usd >= 1)
        snprintf(buf, n, "$%.2f", usd);
    else if (usd >= 0.01)
        snprintf(buf, n, "$%.2f", usd);
    else
        snprintf(buf, n, "$%.4f", usd);
    return buf;
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7F; }

int floe_health_html_escape(floe_buf *out, const char *s) {
    int rc = 0;
    for (const char *p = s ? s : ""; rc == 0 && *p; p++) {
        switch (*p) {
        case '&': rc = floe_buf_append(out, "&amp;", 5); break;
        case '<': rc = floe_buf_append(out, "&lt;", 4); break;
        case '>': rc = floe_buf_append(out, "&gt;", 4); break;
        case '"': rc = floe_buf_append(out, "&quot;", 6); break;
        case '\'': rc = floe_buf_append(out, "&#39;", 5); break;
        case '\n':
        case '\t': rc = floe_buf_append_byte(out, (uint8_t)*p); break;
        default: /* other control characters (invalid in HTML) shown as the text shows them */
            rc = is_control((unsigned char)*p) ? floe_buf_printf(out, "\\x%02x", (unsigned char)*p)
                                               : floe_buf_append_byte(out, (uint8_t)*p);
            break;
        }
    }
    return rc;
}

int floe_health_shell_quote(floe_buf *out, const char *s) {
    bool plain = *s != 0, dq_ok = true, control = false;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              strchr("_./:=@%+,-", ch)))
            plain = false;
        if (strchr("\"\\$`!", ch) || (unsigned char)ch < 0x20)
            dq_ok = false;
        control = control || is_control((unsigned char)ch);
    }
    if (plain)
        return floe_buf_printf(out, "%s", s);
    if (dq_ok && !control)
        return floe_buf_printf(out, "\"%s\"", s);
    if (control) { /* $'...': the command stays one line and copyable, the terminal safe */
        int rc = floe_buf_append(out, "$'", 2);
        for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++)
            rc = is_control(*p)                ? floe_buf_printf(out, "\\x%02x", *p)
                 : *p == '\'' || *p == '\\' ? floe_buf_printf(out, "\\%c", *p)
                                              : floe_buf_append_byte(out, *p);
        return rc ? rc : floe_buf_append_byte(out, '\'');
    }
    int rc = floe_buf_append_byte(out, '\'');
    for (const char *p = s; rc == 0 && *p; p++)
        rc = *p == '\'' ? floe_buf_append(out, "'\\''", 4) : floe_buf_append_byte(out, (uint8_t)*p);
    return rc ? rc : floe_buf_append_byte(out, '\'');
}

/* ---------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------- */
static int jstr(floe_buf *b, const char *s) {
    return s ? floe_json_append_cstr(b, s) : floe_buf_append(b, "null", 4);
}

static int jnum(floe_buf *b, double v) {
    if (!isfinite(v))
        return floe_buf_append(b, "null", 4);
    return floe_buf_printf(b, "%.6g", v);
}

static int json_files(floe_buf *b, const floe_health_files *f) {
    int rc = floe_buf_printf(b,
                             "{\"data_files\":%lld,\"data_bytes\":%lld,\"records\":%lld,"
                             "\"row_groups\":%lld,\"small_files\":%lld,\"small_bytes\":%lld,"
                             "\"fragmented_files\":%lld,\"fragmented_bytes\":%lld,"
                             "\"small_share\":",
                             (long long)f->data_files, (long long)f->data_bytes,
                             (long long)f->records, (long long)f->row_groups,
                             (long long)f->small_files, (long long)f->small_bytes,
                             (long long)f->fragmented_files, (long long)f->fragmented_bytes);
    if (rc == 0)
        rc = jnum(b, f->data_files ? (double)f->small_files / (double)f->data_files : 0);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"histogram\":[");
    for (int i = 0; rc == 0 && i < FLOE_HEALTH_NBUCKETS; i++)
        rc = floe_buf_printf(b, "%s{\"label\":\"%s\",\"files\":%lld,\"bytes\":%lld}", i ? "," : "",
                             floe_health_bucket_label[i], (long long)f->buckets[i],
                             (long long)f->bucket_bytes[i]);
    if (rc == 0)
        rc = floe_buf_printf(b,
                             "],\"delete_files\":{\"position\":{\"files\":%lld,\"bytes\":%lld,"
                             "\"records\":%lld},\"equality\":{\"files\":%lld,\"bytes\":%lld,"
                             "\"records\":%lld},\"deletion_vectors\":{\"count\":%lld,"
                             "\"bytes\":%lld,\"records\":%lld}}}",
                             (long long)f->pos_delete_files, (long long)f->pos_delete_bytes,
                             (long long)f->pos_delete_records, (long long)f->eq_delete_files,
                             (long long)f->eq_delete_bytes, (long long)f->eq_delete_records,
                             (long long)f->dv_count, (long long)f->dv_bytes,
                             (long long)f->dv_records);
    return rc;
}

static int json_view(floe_buf *b, const floe_health_view *v) {
    int rc = 0;
    if (v->has_snapshot)
        rc = floe_buf_printf(b, "{\"snapshot_id\":%lld,\"timestamp_ms\":%lld,\"sequence_number\":%lld,",
                             (long long)v->snapshot_id, (long long)v->timestamp_ms,
                             (long long)v->sequence_number);
    else
        rc = floe_buf_printf(b, "{\"snapshot_id\":null,\"timestamp_ms\":null,\"sequence_number\":null,");
    if (rc == 0)
        rc = floe_buf_printf(b, "\"files\":");
    if (rc == 0)
        rc = json_files(b, &v->total);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"partition_count\":%zu,\"partitions\":[", v->npartitions);
    for (size_t i = 0; rc == 0 && i < v->npartitions; i++) {
        const floe_health_partition *p = &v->partitions[i];
        rc = floe_buf_printf(b, "%s{\"spec_id\":%d,\"path\":", i ? "," : "", (int)p->spec_id);
        if (rc == 0)
            rc = jstr(b, p->path);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"where\":");
        if (rc == 0)
            rc = jstr(b, p->where);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"files\":");
        if (rc == 0)
            rc = json_files(b, &p->files);
        if (rc == 0)
            rc = floe_buf_append_byte(b, '}');
    }
    const floe_health_metadata *m = &v->meta;
    if (rc == 0)
        rc = floe_buf_printf(
            b,
            "],\"metadata\":{\"manifests\":%lld,\"manifest_bytes\":%lld,\"data_manifests\":%lld,"
            "\"delete_manifests\":%lld,\"manifest_entries\":%lld,\"ideal_manifests\":%lld,"
            "\"manifest_list_bytes\":%lld,\"manifest_lists\":%lld,\"all_manifest_list_bytes\":%lld,"
            "\"metadata_json_bytes\":%lld,\"snapshots\":%lld,\"oldest_snapshot_ms\":%lld,"
            "\"oldest_snapshot_age_ms\":%lld,\"metadata_log\":%lld},",
            (long long)m->manifests, (long long)m->manifest_bytes, (long long)m->data_manifests,
            (long long)m->delete_manifests, (long long)m->manifest_entries,
            (long long)m->ideal_manifests, (long long)m->manifest_list_bytes,
            (long long)m->manifest_lists, (long long)m->all_manifest_list_bytes,
            (long long)m->metadata_json_bytes, (long long)m->snapshots,
            (long long)m->oldest_snapshot_ms, (long long)m->oldest_age_ms,
            (long long)m->metadata_log);
    const floe_health_requests *q = &v->req;
    if (rc == 0)
        rc = floe_buf_printf(b,
                             "\"requests\":{\"full_scan\":{\"plan_get\":%lld,\"plan_list\":%lld,"
                             "\"scan_get\":%lld,\"total_get\":%lld,\"monthly_get\":",
                             (long long)q->plan_get, (long long)q->plan_list,
                             (long long)q->scan_get, (long long)(q->plan_get + q->scan_get));
    if (rc == 0)
        rc = jnum(b, q->monthly_get);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"monthly_list\":");
    if (rc == 0)
        rc = jnum(b, q->monthly_list);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"monthly_cost_usd\":");
    if (rc == 0)
        rc = jnum(b, q->monthly_cost);
    if (rc == 0)
        rc = floe_buf_printf(b,
                             "},\"point_query\":{\"filter\":");
    if (rc == 0)
        rc = jstr(b, v->point_filter);
    if (rc == 0)
        rc = floe_buf_printf(b,
                             ",\"manifests_read\":%lld,\"data_files\":%lld,\"plan_get\":%lld,"
                             "\"scan_get\":%lld,\"total_get\":%lld,\"monthly_get\":",
                             (long long)q->point_manifests, (long long)q->point_files,
                             (long long)q->point_plan_get, (long long)q->point_scan_get,
                             (long long)(q->point_plan_get + q->point_scan_get));
    if (rc == 0)
        rc = jnum(b, q->point_monthly_get);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"monthly_cost_usd\":");
    if (rc == 0)
        rc = jnum(b, q->point_monthly_cost);
    const floe_health_timing *t = &v->timing;
    if (rc == 0)
        rc = floe_buf_printf(b,
                             "}},\"planning\":{\"runs\":%d,\"full_scan_ms\":%.3f,"
                             "\"full_scan_min_ms\":%.3f,\"full_scan_max_ms\":%.3f,"
                             "\"point_query_ms\":%.3f,\"point_query_min_ms\":%.3f,"
                             "\"point_query_max_ms\":%.3f,\"error\":",
                             t->runs, (double)t->full_ns / 1e6, (double)t->full_min_ns / 1e6,
                             (double)t->full_max_ns / 1e6, (double)t->point_ns / 1e6,
                             (double)t->point_min_ns / 1e6, (double)t->point_max_ns / 1e6);
    if (rc == 0)
        rc = jstr(b, v->planning_error);
    if (rc == 0)
        rc = floe_buf_printf(b, "}}");
    return rc;
}

int floe_health_report_json(const floe_health_report *r, floe_buf *b, floe_error *err) {
    int rc = floe_buf_printf(b, "{\"table\":");
    if (rc == 0)
        rc = jstr(b, r->table_ref);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"metadata_location\":");
    if (rc == 0)
        rc = jstr(b, r->metadata_location);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"table_location\":");
    if (rc == 0)
        rc = jstr(b, r->table_location);
    if (rc == 0)
        rc = floe_buf_printf(
            b,
            ",\"format_version\":%d,\"generated_ms\":%lld,\"settings\":{\"target_file_size\":%lld,"
            "\"min_file_size\":%lld,\"min_input_files\":%lld,\"row_group_size\":%lld,"
            "\"manifest_target_size\":%lld,\"queries_per_day\":",
            r->format_version, (long long)r->generated_ms, (long long)r->target_file_size,
            (long long)r->min_file_size, (long long)r->min_input_files,
            (long long)r->row_group_size, (long long)r->manifest_target_size);
    if (rc == 0)
        rc = jnum(b, r->opts.queries_per_day);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"price_get_per_1000\":");
    if (rc == 0)
        rc = jnum(b, r->opts.price_get);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"price_list_per_1000\":");
    if (rc == 0)
        rc = jnum(b, r->opts.price_list);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"price_put_per_1000\":");
    if (rc == 0)
        rc = jnum(b, r->opts.price_put);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"timing_runs\":%d,\"request_model\":", r->opts.timing_runs);
    if (rc == 0)
        rc = jstr(b, health_request_model);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"buckets\":[");
    for (int i = 0; rc == 0 && i < FLOE_HEALTH_NBUCKETS; i++)
        rc = floe_buf_printf(b, "%s{\"label\":\"%s\",\"lower\":%lld}", i ? "," : "",
                             floe_health_bucket_label[i], (long long)floe_health_bucket_lower[i]);
    if (rc == 0)
        rc = floe_buf_printf(b, "]},\"current\":");
    if (rc == 0)
        rc = json_view(b, &r->current);
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"compare\":");
    if (rc == 0)
        rc = r->has_compare ? json_view(b, &r->compare) : floe_buf_printf(b, "null");
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"history\":[");
    for (size_t i = 0; rc == 0 && i < r->nhistory; i++) {
        const floe_health_history_point *h = &r->history[i];
        rc = floe_buf_printf(b, "%s{\"snapshot_id\":%lld,\"timestamp_ms\":%lld,\"sequence_number\":%lld,"
                             "\"operation\":",
                             i ? "," : "", (long long)h->snapshot_id, (long long)h->timestamp_ms,
                             (long long)h->sequence_number);
        if (rc == 0)
            rc = jstr(b, h->operation);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"list_read\":%s,\"manifests\":%lld,\"manifest_bytes\":%lld,"
                                 "\"data_files\":%lld,\"records\":%lld,\"delete_files\":%lld}",
                                 h->list_read ? "true" : "false", (long long)h->manifests,
                                 (long long)h->manifest_bytes, (long long)h->data_files,
                                 (long long)h->records, (long long)h->delete_files);
    }
    if (rc == 0)
        rc = floe_buf_printf(b, "],\"recommendations\":[");
    for (size_t i = 0; rc == 0 && i < r->nrecs; i++) {
        const floe_health_rec *x = &r->recs[i];
        rc = floe_buf_printf(b, "%s{\"kind\":\"%s\",\"command\":", i ? "," : "",
                             health_rec_kind_name(x->kind));
        if (rc == 0)
            rc = jstr(b, x->command);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"reason\":");
        if (rc == 0)
            rc = jstr(b, x->reason);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"partition\":");
        if (rc == 0)
            rc = jstr(b, x->partition);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"requests_saved_per_scan\":%lld,\"monthly_requests_saved\":",
                                 (long long)x->requests_saved);
        if (rc == 0)
            rc = jnum(b, x->monthly_requests_saved);
        if (rc == 0)
            rc = floe_buf_printf(b, ",\"monthly_cost_saved_usd\":");
        if (rc == 0)
            rc = jnum(b, x->monthly_cost_saved);
        if (rc == 0)
            rc = floe_buf_printf(b,
                                 ",\"metadata_bytes_saved\":%lld,\"before\":%lld,\"after\":%lld,"
                                 "\"one_off_get\":%lld,\"one_off_put\":%lld}",
                                 (long long)x->metadata_bytes_saved, (long long)x->files_before,
                                 (long long)x->files_after, (long long)x->one_off_get,
                                 (long long)x->one_off_put);
    }
    const floe_health_churn *ch = &r->churn;
    if (rc == 0)
        rc = floe_buf_printf(b,
                             "],\"churn\":{\"window_ms\":%lld,\"from_ms\":%lld,\"to_ms\":%lld,"
                             "\"writer_commits\":%lld,\"rewrite_commits\":%lld,"
                             "\"bytes_appended\":%lld,\"bytes_rewritten\":%lld,"
                             "\"write_amplification\":",
                             (long long)ch->window_ms, (long long)ch->from_ms,
                             (long long)ch->to_ms, (long long)ch->writer_commits,
                             (long long)ch->rewrite_commits, (long long)ch->bytes_appended,
                             (long long)ch->bytes_rewritten);
    if (rc == 0)
        rc = ch->write_amplification >= 0 ? jnum(b, ch->write_amplification)
                                          : floe_buf_printf(b, "null");
    if (rc == 0)
        rc = floe_buf_printf(b, ",\"live_bytes\":%lld,\"live_outside_files\":%lld,"
                             "\"live_outside_bytes\":%lld,\"listed\":%s,\"listing_error\":",
                             (long long)ch->live_bytes, (long long)ch->live_outside_files,
                             (long long)ch->live_outside_bytes, ch->listed ? "true" : "false");
    if (rc == 0)
        rc = jstr(b, ch->listing_error);
    if (rc == 0)
        rc = floe_buf_printf(b,
                             ",\"disk_data_files\":%lld,\"disk_data_bytes\":%lld,"
                             "\"disk_metadata_files\":%lld,\"disk_metadata_bytes\":%lld,"
                             "\"storage_amplification\":",
                             (long long)ch->disk_data_files, (long long)ch->disk_data_bytes,
                             (long long)ch->disk_metadata_files,
                             (long long)ch->disk_metadata_bytes);
    if (rc == 0)
        rc = ch->storage_amplification >= 0 ? jnum(b, ch->storage_amplification)
                                            : floe_buf_printf(b, "null");
    if (rc == 0)
        rc = floe_buf_printf(b, "}}\n");
    if (rc < 0)
        return floe_error_set(err, rc, "health: rendering JSON: %s", floe_strerror(rc));
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Text
 * ------------------------------------------------------------------------------------- */
#define TEXT_TOP_PARTITIONS 15
#define TEXT_TOP_RECS 15

static int text_view_column(floe_buf *b, const char *label, const char *cur, const char *cmp,
                            bool with_cmp) {
    if (with_cmp)
        return floe_buf_printf(b, "  %-34s %18s   %18s\n", label, cur, cmp);
    return floe_buf_printf(b, "  %-34s %s\n", label, cur);
}

#define ROW(label, expr)                                                                  \
    do {                                                                                  \
        char a_[96], c_[96];                                                              \
        const floe_health_view *v = &r->current;                                          \
        const char *x_ = (expr);                                                          \
        snprintf(a_, sizeof a_, "%s", x_);                                                \
        if (r->has_compare) {                                                             \
            v = &r->compare;                                                              \
            x_ = (expr);                                                                  \
            snprintf(c_, sizeof c_, "%s", x_);                                            \
        } else {                                                                          \
            c_[0] = 0;                                                                    \
        }                                                                                 \
        if (rc == 0)                                                                      \
            rc = text_view_column(b, label, a_, c_, r->has_compare);                      \
    } while (0)

/* prefix, s with control characters as \xHH (names, paths and values from metadata another
 * engine may have written: no terminal escapes, no forged lines), then suffix. */
static int text_str(floe_buf *b, const char *prefix, const char *s, const char *suffix) {
    int rc = floe_buf_printf(b, "%s", prefix);
    for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++)
        rc = is_control(*p) ? floe_buf_printf(b, "\\x%02x", *p) : floe_buf_append_byte(b, *p);
    return rc ? rc : floe_buf_printf(b, "%s", suffix);
}

int floe_health_report_text(const floe_health_report *r, floe_buf *b, floe_error *err) {
    int rc = 0;
    char t1[64], t2[64];
    const floe_health_view *cur = &r->current;
    rc = text_str(b, "table      ", r->table_ref, "\n");
    if (rc == 0)
        rc = text_str(b, "metadata   ", r->metadata_location, "\n");
    if (rc == 0 && cur->has_snapshot)
        rc = floe_buf_printf(b, "snapshot   %lld (%s)\n", (long long)cur->snapshot_id,
                             health_fmt_time(cur->timestamp_ms, t1, sizeof t1));
    else if (rc == 0)
        rc = floe_buf_printf(b, "snapshot   none (the table is empty)\n");
    if (rc == 0 && r->has_compare)
        rc = floe_buf_printf(b, "compare    %lld (%s)\n", (long long)r->compare.snapshot_id,
                             health_fmt_time(r->compare.timestamp_ms, t2, sizeof t2));
    if (rc == 0)
        rc = floe_buf_printf(b, "\n");
    if (rc == 0 && r->has_compare)
        rc = floe_buf_printf(b, "  %-34s %18s   %18s\n", "", "current", "compare");

    char buf[96]; /* a count and a formatted t1 */
    if (rc == 0)
        rc = floe_buf_printf(b, "data files\n");
    ROW("files", health_fmt_int(v->total.data_files, buf, sizeof buf));
    ROW("size", health_fmt_bytes((double)v->total.data_bytes, buf, sizeof buf));
    ROW("records", health_fmt_int(v->total.records, buf, sizeof buf));
    ROW("average file", health_fmt_bytes(v->total.data_files ? (double)v->total.data_bytes /
                                                                  (double)v->total.data_files : 0,
                                         buf, sizeof buf));
    for (int k = 0; k < FLOE_HEALTH_NBUCKETS; k++) {
        char label[64];
        snprintf(label, sizeof label, "  %s", floe_health_bucket_label[k]);
        ROW(label, (snprintf(buf, sizeof buf, "%lld (%.0f%%)", (long long)v->total.buckets[k],
                             v->total.data_files ? 100.0 * (double)v->total.buckets[k] /
                                                       (double)v->total.data_files : 0.0),
                    buf));
    }
    {
        char label[80];
        snprintf(label, sizeof label, "under rewrite minimum (%.4g MB)",
                 (double)r->min_file_size / 1048576.0);
        ROW(label, (snprintf(buf, sizeof buf, "%lld (%.0f%%)", (long long)v->total.small_files,
                             v->total.data_files ? 100.0 * (double)v->total.small_files /
                                                       (double)v->total.data_files : 0.0),
                    buf));
    }
    ROW("  in fragmented partitions", (snprintf(buf, sizeof buf, "%lld (%.0f%%)",
                                                (long long)v->total.fragmented_files,
                                                v->total.data_files
                                                    ? 100.0 * (double)v->total.fragmented_files /
                                                          (double)v->total.data_files
                                                    : 0.0),
                                       buf));
    ROW("partitions", health_fmt_int((int64_t)v->npartitions, buf, sizeof buf));
    if (rc == 0)
        rc = floe_buf_printf(b, "delete files\n");
    ROW("position deletes", (snprintf(buf, sizeof buf, "%lld (%s)", (long long)v->total.pos_delete_files,
                                      health_fmt_bytes((double)v->total.pos_delete_bytes, t1, sizeof t1)),
                             buf));
    ROW("equality deletes", (snprintf(buf, sizeof buf, "%lld (%s)", (long long)v->total.eq_delete_files,
                                      health_fmt_bytes((double)v->total.eq_delete_bytes, t1, sizeof t1)),
                             buf));
    ROW("deletion vectors", (snprintf(buf, sizeof buf, "%lld (%s, %lld rows)",
                                      (long long)v->total.dv_count,
                                      health_fmt_bytes((double)v->total.dv_bytes, t1, sizeof t1),
                                      (long long)v->total.dv_records),
                             buf));
    if (rc == 0)
        rc = floe_buf_printf(b, "metadata\n");
    ROW("manifests", (snprintf(buf, sizeof buf, "%lld (%s)", (long long)v->meta.manifests,
                               health_fmt_bytes((double)v->meta.manifest_bytes, t1, sizeof t1)),
                      buf));
    ROW("manifest list", health_fmt_bytes((double)v->meta.manifest_list_bytes, buf, sizeof buf));
    ROW("metadata file", health_fmt_bytes((double)v->meta.metadata_json_bytes, buf, sizeof buf));
    ROW("snapshots", health_fmt_int(v->meta.snapshots, buf, sizeof buf));
    ROW("oldest snapshot", v->meta.snapshots ? health_fmt_age(v->meta.oldest_age_ms, buf, sizeof buf) : "-");
    if (rc == 0)
        rc = floe_buf_printf(b, "  %-34s %lld (%s)\n", "manifest lists (all snapshots)",
                             (long long)cur->meta.manifest_lists,
                             health_fmt_bytes((double)cur->meta.all_manifest_list_bytes, t1, sizeof t1));
    if (rc == 0)
        rc = floe_buf_printf(b, "  %-34s %lld\n", "metadata log entries", (long long)cur->meta.metadata_log);
    if (rc == 0)
        rc = floe_buf_printf(b, "requests per full scan\n");
    ROW("plan (GET)", health_fmt_int(v->req.plan_get, buf, sizeof buf));
    ROW("scan (GET)", health_fmt_int(v->req.scan_get, buf, sizeof buf));
    ROW("LIST", health_fmt_int(v->req.plan_list, buf, sizeof buf));
    {
        char label[80];
        snprintf(label, sizeof label, "GET per month (%g scans/day)", r->opts.queries_per_day);
        ROW(label, health_fmt_count(v->req.monthly_get, buf, sizeof buf));
    }
    ROW("request cost per month", health_fmt_money(v->req.monthly_cost, buf, sizeof buf));
    if (rc == 0)
        rc = text_str(b, "point query: ",
                      cur->point_filter ? cur->point_filter : "(none: no column to filter on)",
                      "\n");
    ROW("manifests read", health_fmt_int(v->req.point_manifests, buf, sizeof buf));
    ROW("data files selected", health_fmt_int(v->req.point_files, buf, sizeof buf));
    ROW("GET (plan + scan)", health_fmt_int(v->req.point_plan_get + v->req.point_scan_get, buf, sizeof buf));
    if (rc == 0)
        rc = floe_buf_printf(b, "planning time (floe's scan planner, median of %d run%s)\n",
                             cur->timing.runs, health_s(cur->timing.runs));
    if (rc == 0 && cur->planning_error)
        rc = text_str(b, "  the planner refused the table: ", cur->planning_error, "\n");
    ROW("full scan", v->timing.runs ? health_fmt_ms(v->timing.full_ns, buf, sizeof buf) : "not measured");
    ROW("point query", v->timing.runs && v->point_filter ? health_fmt_ms(v->timing.point_ns, buf, sizeof buf)
                                                         : "not measured");
    {
        const floe_health_churn *ch = &r->churn;
        if (rc == 0)
            rc = floe_buf_printf(b, "churn (snapshots of the last %s still kept, since %s)\n",
                                 health_fmt_age(ch->window_ms, t1, sizeof t1),
                                 health_fmt_time(ch->from_ms, t2, sizeof t2));
        if (rc == 0)
            rc = floe_buf_printf(b, "  %-34s %lld commit%s, %s\n", "appended",
                                 (long long)ch->writer_commits, health_s(ch->writer_commits),
                                 health_fmt_bytes((double)ch->bytes_appended, t1, sizeof t1));
        if (rc == 0)
            rc = floe_buf_printf(b, "  %-34s %lld commit%s, %s\n", "rewritten (replace)",
                                 (long long)ch->rewrite_commits, health_s(ch->rewrite_commits),
                                 health_fmt_bytes((double)ch->bytes_rewritten, t1, sizeof t1));
        if (rc == 0 && ch->write_amplification >= 0)
            rc = floe_buf_printf(b, "  %-34s %.2fx\n", "write amplification",
                                 ch->write_amplification);
        if (rc == 0)
            rc = floe_buf_printf(b, "  %-34s %s\n", "live data and delete files",
                                 health_fmt_bytes((double)ch->live_bytes, t1, sizeof t1));
        if (rc == 0 && ch->live_outside_files)
            rc = floe_buf_printf(b, "  %-34s %s in %lld file%s (not counted in the "
                                 "amplification)\n", "  of those outside the table",
                                 health_fmt_bytes((double)ch->live_outside_bytes, t1, sizeof t1),
                                 (long long)ch->live_outside_files,
                                 health_s(ch->live_outside_files));
        if (rc == 0 && ch->listed)
            rc = floe_buf_printf(b, "  %-34s %s in %lld file%s (metadata %s in %lld)\n",
                                 "on disk", health_fmt_bytes((double)ch->disk_data_bytes, t1, sizeof t1),
                                 (long long)ch->disk_data_files, health_s(ch->disk_data_files),
                                 health_fmt_bytes((double)ch->disk_metadata_bytes, t2, sizeof t2),
                                 (long long)ch->disk_metadata_files);
        if (rc == 0 && ch->listed && ch->storage_amplification >= 0)
            rc = floe_buf_printf(b, "  %-34s %.2fx\n", "storage amplification (disk / live)",
                                 ch->storage_amplification);
        else if (rc == 0 && ch->listed)
            rc = floe_buf_printf(b, "  %-34s -  (no live file in the table's folders)\n",
                                 "storage amplification (disk / live)");
        if (rc == 0 && !ch->listed)
            rc = floe_buf_printf(b, "  %-34s ", "on disk");
        if (rc == 0 && !ch->listed)
            rc = text_str(b, "", ch->listing_error ? ch->listing_error : "not listed (--no-listing)",
                          "\n");
    }
    if (rc == 0)
        rc = floe_buf_printf(b, "\nrequest model: %s; prices per 1000: GET $%g, LIST $%g, PUT $%g\n",
                             health_request_model, r->opts.price_get, r->opts.price_list,
                             r->opts.price_put);

    if (rc == 0 && cur->npartitions > 1) {
        if (cur->npartitions > TEXT_TOP_PARTITIONS)
            rc = floe_buf_printf(b, "\npartitions by data files (top %d of %zu)\n",
                                 TEXT_TOP_PARTITIONS, cur->npartitions);
        else
            rc = floe_buf_printf(b, "\npartitions by data files (%zu)\n", cur->npartitions);
        if (rc == 0)
            rc = floe_buf_printf(b, "  %8s %8s %12s %8s  %s\n", "files", "small", "size", "deletes", "partition");
        for (size_t i = 0; rc == 0 && i < cur->npartitions && i < TEXT_TOP_PARTITIONS; i++) {
            const floe_health_partition *p = &cur->partitions[i];
            rc = floe_buf_printf(b, "  %8lld %8lld %12s %8lld", (long long)p->files.data_files,
                                 (long long)p->files.small_files,
                                 health_fmt_bytes((double)p->files.data_bytes, t1, sizeof t1),
                                 (long long)(p->files.pos_delete_files + p->files.eq_delete_files));
            if (rc == 0)
                rc = text_str(b, "  ", p->path[0] ? p->path : "(unpartitioned)", "\n");
        }
    }
    if (rc == 0)
        rc = floe_buf_printf(b, "\nrecommendations%s\n", r->nrecs ? " (most requests saved first)" : ": none, the table is in good shape");
    for (size_t i = 0; rc == 0 && i < r->nrecs && i < TEXT_TOP_RECS; i++) {
        const floe_health_rec *x = &r->recs[i];
        rc = floe_buf_printf(b, "  %zu. ", i + 1);
        if (rc == 0)
            rc = text_str(b, "", x->command, "\n");
        if (rc == 0)
            rc = text_str(b, "     ", x->reason, "\n");
        if (rc == 0 && x->monthly_requests_saved > 0)
            rc = floe_buf_printf(b, "     saves ~%s GET/month (%s)\n",
                                 health_fmt_count(x->monthly_requests_saved, t1, sizeof t1),
                                 health_fmt_money(x->monthly_cost_saved, t2, sizeof t2));
        if (rc == 0 && x->metadata_bytes_saved > 0)
            rc = floe_buf_printf(b, "     metadata saved ~%s\n",
                                 health_fmt_bytes((double)x->metadata_bytes_saved, t1, sizeof t1));
    }
    if (rc == 0 && r->nrecs > TEXT_TOP_RECS)
        rc = floe_buf_printf(b, "  ... %zu more (see --json)\n", r->nrecs - TEXT_TOP_RECS);
    if (rc < 0)
        return floe_error_set(err, rc, "health: rendering text: %s", floe_strerror(rc));
    return 0;
}
