/* harness_serve.c - see harness_serve.h. */
#include "harness_serve.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "floe/append.h"
#include "floe/maint.h"
#include "floe/scan.h"
#include "floe/table.h"
#include "harness.h"

const char hs_schema_json[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
    "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"name\",\"required\":false,"
    "\"type\":\"string\"}]}";

size_t hs_collect(char *p, size_t sz, size_t n, void *ctx) {
    floe_buf_append(ctx, p, sz * n);
    return sz * n;
}

typedef struct header_ctx {
    long retry_after;
} header_ctx;

static size_t on_header(char *p, size_t sz, size_t n, void *ctx) {
    header_ctx *h = ctx;
    size_t len = sz * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12))
        h->retry_after = strtol(p + 12, NULL, 10);
    return len;
}

long hs_post(uint16_t port, const char *table, const char *body, const char *key,
             char **answer, long *retry_after) {
    floe_buf out;
    floe_buf_init(&out, 0);
    header_ctx hc = {-1};
    CURL *c = curl_easy_init();
    char url[256], keyh[300];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/tables/%s/events", port, table);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    if (key) {
        snprintf(keyh, sizeof keyh, "Idempotency-Key: %s", key);
        h = curl_slist_append(h, keyh);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, hs_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hc);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    floe_buf_append_byte(&out, 0);
    if (answer) {
        size_t len;
        *answer = floe_buf_detach(&out, &len);
    }
    floe_buf_free(&out);
    if (retry_after)
        *retry_after = hc.retry_after;
    return code;
}

char *hs_ids_body(int from, int to, const char *const *names, int nnames) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = from; i <= to; i++)
        floe_buf_printf(&b, "{\"id\":%d,\"name\":\"%s\"}\n", i, names[i % nnames]);
    floe_buf_append_byte(&b, 0);
    size_t len;
    return floe_buf_detach(&b, &len);
}

long hs_post_ids(uint16_t port, const char *table, int from, int to,
                 const char *const *names, int nnames) {
    char *body = hs_ids_body(from, to, names, nnames);
    long code = hs_post(port, table, body, NULL, NULL, NULL);
    floe_free(body);
    return code;
}

typedef struct id_counts {
    int *counts;
    int cap;
    int64_t rows;
} id_counts;

static int count_row(void *ctx, const void *p, size_t n) {
    id_counts *ic = ctx;
    const char *s = p, *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *stop = nl ? nl : end;
        const char *k = s;
        while (k + 5 < stop && memcmp(k, "\"id\":", 5))
            k++;
        if (k + 5 < stop) {
            long id = strtol(k + 5, NULL, 10);
            if (id >= 0 && id < ic->cap)
                ic->counts[id]++;
            ic->rows++;
        }
        s = nl ? nl + 1 : end;
    }
    return 0;
}

int64_t hs_count_ids(floe_catalog *cat, const char *ns, const char *name, int *counts,
                     int cap) {
    floe_table *t = NULL;
    floe_scan_plan *plan = NULL;
    floe_error err;
    id_counts ic = {counts, cap, 0};
    memset(counts, 0, (size_t)cap * sizeof *counts);
    if (floe_table_load(cat, ns, name, &t, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "load %s.%s: %s", ns, name, err.msg);
        return -1;
    }
    const floe_table_metadata *m = floe_table_metadata_get(t);
    int rc = 0;
    if (floe_table_metadata_current_snapshot(m)) {
        floe_scan_options so;
        memset(&so, 0, sizeof so);
        floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_NDJSON, .limit = -1};
        rc = floe_scan_plan_files(t, &so, &plan, &err);
        if (rc == 0)
            rc = floe_scan_read(t, plan, &ro, count_row, &ic, NULL, &err);
    }
    floe_scan_plan_free(plan);
    floe_table_close(t);
    if (rc != 0) {
        harness_fail(__FILE__, __LINE__, "scan %s.%s: %s", ns, name, err.msg);
        return -1;
    }
    return ic.rows;
}

int64_t hs_count_ids_sqlite(const char *catalog_db, const char *wh, const char *ns,
                            const char *name, int *counts, int cap) {
    floe_catalog *cat = NULL;
    floe_error err;
    if (floe_catalog_open_sqlite(NULL, catalog_db, "default", wh, &cat, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "catalog %s: %s", catalog_db, err.msg);
        return -1;
    }
    int64_t n = hs_count_ids(cat, ns, name, counts, cap);
    floe_catalog_close(cat);
    return n;
}

void hs_append_and_expire(floe_catalog *cat, const char *ns, const char *name) {
    floe_table *t = NULL;
    floe_append *a = NULL;
    floe_append_result res;
    memset(&res, 0, sizeof res);
    floe_expire_options eo;
    floe_expire_options_init(&eo);
    eo.older_than_ms = floe_wall_ms() + 1000;
    eo.retain_last = 1;
    floe_expire_result er;
    memset(&er, 0, sizeof er);
    floe_error err;
    int rc = floe_table_load(cat, ns, name, &t, &err);
    if (rc == 0)
        rc = floe_append_new(t, &a, &err);
    if (rc == 0)
        rc = floe_append_commit(a, &res, &err);
    if (rc == 0)
        rc = floe_maint_expire(t, &eo, &er, &err);
    if (rc != 0)
        harness_fail(__FILE__, __LINE__, "append and expire %s.%s: %s", ns, name, err.msg);
    else if (floe_table_metadata_get(t)->n_snapshots != 1)
        harness_fail(__FILE__, __LINE__, "%s.%s: %zu snapshots after expiry", ns, name,
                     floe_table_metadata_get(t)->n_snapshots);
    floe_expire_result_reset(&er);
    floe_append_result_reset(&res);
    floe_append_free(a);
    floe_table_close(t);
}

void hs_append_and_expire_sqlite(const char *catalog_db, const char *wh, const char *ns,
                                 const char *name) {
    floe_catalog *cat = NULL;
    floe_error err;
    if (floe_catalog_open_sqlite(NULL, catalog_db, "default", wh, &cat, &err) != 0) {
        harness_fail(__FILE__, __LINE__, "catalog %s: %s", catalog_db, err.msg);
        return;
    }
    hs_append_and_expire(cat, ns, name);
    floe_catalog_close(cat);
}

bool hs_check_once(const int *counts, int64_t rows, int n) {
    for (int id = 1; id <= n; id++)
        if (counts[id] != 1) {
            harness_fail(__FILE__, __LINE__, "event %d is in the table %d times (%lld rows)",
                         id, counts[id], (long long)rows);
            return false;
        }
    if (rows != n) {
        harness_fail(__FILE__, __LINE__, "%lld rows, %d expected", (long long)rows, n);
        return false;
    }
    return true;
}

static int state_row(void *ctx, const char *const *cols, size_t n, floe_error *err) {
    (void)err;
    hs_states *st = ctx;
    if (n < 2 || !cols[0])
        return 0;
    if (!strcmp(cols[0], "committed"))
        st->committed++;
    else if (!strcmp(cols[0], "compacting"))
        st->compacting++;
    else if (!strcmp(cols[0], "pending"))
        st->pending++;
    else
        st->other++;
    st->with_snapshot += cols[1] != NULL;
    return 0;
}

hs_states hs_landing_states(floe_sql *db, const char *table) {
    hs_states st;
    memset(&st, 0, sizeof st);
    floe_error err;
    const char *p[] = {table};
    if (floe_sql_query(db, "SELECT state, snapshot_id FROM landing_files WHERE kind=1 AND "
                       "tbl=?", p, 1, state_row, &st, &err) != 0)
        harness_fail(__FILE__, __LINE__, "landing index: %s", err.msg);
    return st;
}

void hs_server_config(floe_server_config *c, const char *dir, const char *wh,
                      const char *server_extra, const char *table_extra) {
    char schema[4300], text[9000];
    floe_server_config_init(c);
    snprintf(schema, sizeof schema, "%s/schema.json", dir);
    harness_write_file(schema, hs_schema_json, strlen(hs_schema_json));
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncompact = false\n%s"
             "[table shop.t]\nschema = %s\n%s", wh, server_extra, schema, table_extra);
    floe_error err;
    if (floe_server_config_parse(c, text, strlen(text), "test", &err) != 0)
        harness_fail(__FILE__, __LINE__, "config: %s", err.msg);
}

/* The sum of a metric's samples in the server's /metrics. */
long long hs_metric(uint16_t port, const char *name) {
    floe_buf out;
    floe_buf_init(&out, 0);
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, hs_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    long long sum = 0;
    if (curl_easy_perform(c) == CURLE_OK && floe_buf_append_byte(&out, 0) == 0) {
        size_t nl = strlen(name);
        for (const char *l = (const char *)out.data; l && *l;) {
            if (!strncmp(l, name, nl) && (l[nl] == '{' || l[nl] == ' ')) {
                const char *sp = strchr(l, ' ');
                if (sp)
                    sum += strtoll(sp + 1, NULL, 10);
            }
            l = strchr(l, '\n');
            l = l ? l + 1 : NULL;
        }
    }
    curl_easy_cleanup(c);
    floe_buf_free(&out);
    return sum;
}

bool hs_wait_metric(uint16_t port, const char *name, long long want) {
    for (int i = 0; i < 600; i++) {
        if (hs_metric(port, name) >= want)
            return true;
        usleep(100000);
    }
    return false;
}
