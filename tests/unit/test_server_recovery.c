/* test_server_recovery.c - WAL replay at start: frames go back into the buffers and are
 * sealed, a torn tail is cut, frames already in registered landing files are not landed
 * twice, unregistered landing files are removed, idempotency answers survive. Drives the
 * library server with libcurl on 127.0.0.1 (port 0). */
#include <curl/curl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "floe/input.h"
#include "floe/io.h"
#include "floe/server.h"
#include "harness.h"
#include "server/frame.h"

static char wh[4200];

static void config(floe_server_config *c, const char *dir) {
    static char schema[4300], wal[4300];
    floe_server_config_init(c);
    snprintf(wh, sizeof wh, "%s/wh", dir);
    snprintf(schema, sizeof schema, "%s/schema.json", dir);
    const char *sj = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
                     "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"name\","
                     "\"required\":false,\"type\":\"string\"}]}";
    harness_write_file(schema, sj, strlen(sj));
    char text[9000];
    snprintf(text, sizeof text,
             "[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\n"
             "[table shop.t]\nschema = %s\npartition = name\n", wh, schema);
    floe_error err;
    if (floe_server_config_parse(c, text, strlen(text), "test", &err) != 0)
        harness_fail(__FILE__, __LINE__, "config: %s", err.msg);
    (void)wal;
}

/* A frame: records for partition name=a (NDJSON zstd-compressed, as every WAL before
 * LZ4 became the default: the posts below add LZ4 sections to the same buffer, which the
 * landing buffer re-encodes so its file stays one stream), optional answer. */
static void frame_for(floe_buf *f, uint64_t id, const char *ndjson, const char *key) {
    size_t n = strlen(ndjson), cap = ZSTD_compressBound(n);
    void *z = malloc(cap);
    size_t zl = ZSTD_compress(z, cap, ndjson, n, 1);
    REQUIRE(!ZSTD_isError(zl));
    uint32_t recs = 0;
    for (size_t i = 0; i < n; i++)
        recs += ndjson[i] == '\n';
    REQUIRE(floe_frame_begin(f) == 0);
    const char route[] = "shop.t\0name=a";
    REQUIRE(floe_frame_add_section(f, FLOE_SECTION_RECORDS, 1, route, sizeof route - 1, recs,
                                   (uint32_t)n, z, zl) == 0);
    if (key) {
        char r[64];
        int rl = snprintf(r, sizeof r, "shop.t%c%s", 0, key);
        const char *ans = "\"accepted\":2,\"rejected\":0,\"errors\":[]}";
        REQUIRE(floe_frame_add_section(f, FLOE_SECTION_ANSWER, 0, r, (size_t)rl, 0,
                                       (uint32_t)strlen(ans), ans, strlen(ans)) == 0);
    }
    floe_frame_end(f);
    floe_frame_stamp(f->data, id, (uint64_t)floe_wall_ms());
    free(z);
}

static void write_segment(uint64_t segno, const floe_buf *frames, size_t torn_extra) {
    char p[4400];
    snprintf(p, sizeof p, "%s/_wal/node1", wh);
    floe_io_mkdirs(NULL, p, NULL);
    snprintf(p, sizeof p, "%s/_wal/node1/wal-%020llu.log", wh, (unsigned long long)segno);
    FILE *f = fopen(p, "wb");
    REQUIRE(f);
    uint8_t h[FLOE_SEGMENT_HEADER];
    floe_segment_header(h, segno);
    fwrite(h, 1, sizeof h, f);
    fwrite(frames->data, 1, frames->len, f);
    /* a torn frame: the first bytes of another frame */
    fwrite(frames->data, 1, torn_extra, f);
    fclose(f);
}

/* All records in landing files of shop.t (read as landing compaction reads them: any
 * codec), and how many files. */
static char *landed(int *nfiles) {
    static char buf[1 << 16];
    buf[0] = 0;
    *nfiles = 0;
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/_landing/shop.t/name=a", wh);
    DIR *d = opendir(dir);
    if (!d)
        return buf;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, ".ndjson"))
            continue;
        char p[4700];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        floe_line_reader *r = NULL;
        floe_error err;
        REQUIRE_OK(floe_line_reader_open(p, NULL, &r, &err), err);
        floe_chunk ch;
        memset(&ch, 0, sizeof ch);
        floe_buf_init(&ch.data, 0);
        int rc;
        while ((rc = floe_line_reader_next(r, &ch, &err)) == 1)
            strncat(buf, (const char *)ch.bytes,
                    ch.len < sizeof buf - strlen(buf) - 1 ? ch.len : sizeof buf - strlen(buf) - 1);
        CHECK_OK(rc, err);
        floe_chunk_release(&ch);
        floe_buf_free(&ch.data);
        floe_line_reader_close(r);
        (*nfiles)++;
    }
    closedir(d);
    return buf;
}

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static size_t sink(char *p, size_t sz, size_t n, void *ctx) {
    strncat((char *)ctx, p, sz * n < 4000 ? sz * n : 4000);
    return sz * n;
}

static long post(uint16_t port, const char *body, const char *key, char *resp) {
    CURL *c = curl_easy_init();
    char url[128], kh[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/tables/shop.t/events", port);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    if (key) {
        snprintf(kh, sizeof kh, "Idempotency-Key: %s", key);
        h = curl_slist_append(h, kh);
    }
    resp[0] = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return code;
}

TEST(test_replay_torn_tail_watermark_and_keys) {
    const char *dir = harness_tmpdir();
    floe_server_config cfg;
    config(&cfg, dir);
    floe_error err;
    floe_server *s = NULL;
    /* 1: create the table, stop cleanly */
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    CHECK_OK(floe_server_close(s, &err), err);

    /* 2: a WAL left by a crash: frames 100 and 101, then a torn third frame; and a landing
     * file that never made it into the index */
    floe_buf f1, f2, both;
    floe_buf_init(&f1, 0);
    floe_buf_init(&f2, 0);
    floe_buf_init(&both, 0);
    frame_for(&f1, 100, "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"a\"}\n", "k1");
    frame_for(&f2, 101, "{\"id\":3,\"name\":\"a\"}\n", NULL);
    REQUIRE(floe_buf_append(&both, f1.data, f1.len) == 0);
    REQUIRE(floe_buf_append(&both, f2.data, f2.len) == 0);
    write_segment(7, &both, 30);
    char stray[4500];
    snprintf(stray, sizeof stray, "%s/_landing/shop.t/name=a/node1-0000000099.ndjson.zst", wh);
    REQUIRE_OK(floe_io_write_all(NULL, stray, "junk", 4, NULL, &err), err);
    char other[4500];
    snprintf(other, sizeof other, "%s/_landing/shop.t/name=a/node2-0000000001.ndjson.zst", wh);
    REQUIRE_OK(floe_io_write_all(NULL, other, "other node", 10, NULL, &err), err);

    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    bool ex = true;
    floe_io_exists(NULL, stray, &ex, NULL);
    CHECK(!ex); /* unregistered file of this node removed */
    floe_io_exists(NULL, other, &ex, NULL);
    CHECK(ex);  /* another node's file is not ours to judge */
    floe_io_delete(NULL, other, NULL);
    /* the torn tail was cut: the segment ends after frame 101 */
    char seg[4500];
    snprintf(seg, sizeof seg, "%s/_wal/node1/wal-00000000000000000007.log", wh);
    struct stat st;
    if (stat(seg, &st) == 0)
        CHECK_EQ_INT(st.st_size, FLOE_SEGMENT_HEADER + (int64_t)both.len);
    /* the replayed answer is given to a retry with the same key; nothing stored twice */
    char resp[4096];
    CHECK_EQ_INT(post(floe_server_port(s), "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"a\"}\n",
                      "k1", resp), 200);
    CHECK(strstr(resp, "\"batch_id\":\"node1-100\"") != NULL);
    /* new frames continue after the replayed ids */
    CHECK_EQ_INT(post(floe_server_port(s), "{\"id\":4,\"name\":\"a\"}\n", NULL, resp), 200);
    CHECK(strstr(resp, "\"batch_id\":\"node1-102\"") != NULL);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    int nf = 0;
    char *all = landed(&nf);
    CHECK_EQ_INT(count(all, "\"id\":1,"), 1);
    CHECK_EQ_INT(count(all, "\"id\":3,"), 1);
    CHECK_EQ_INT(count(all, "\"id\":4,"), 1);
    CHECK_OK(floe_server_close(s, &err), err);
    if (stat(seg, &st) == 0)
        harness_fail(__FILE__, __LINE__, "segment 7 still there after a clean close");

    /* 3: the same frames again (as if the segment had survived the seal): they are in a
     * registered landing file already, so replay must skip them */
    write_segment(8, &both, 0);
    REQUIRE_OK(floe_server_open(&cfg, NULL, &s, &err), err);
    CHECK_OK(floe_server_flush(s, false, &err), err);
    int nf2 = 0;
    all = landed(&nf2);
    CHECK_EQ_INT(nf2, nf);
    CHECK_EQ_INT(count(all, "\"id\":1,"), 1);
    /* the key survived the restart through the index */
    CHECK_EQ_INT(post(floe_server_port(s), "{\"id\":9}\n", "k1", resp), 200);
    CHECK(strstr(resp, "\"batch_id\":\"node1-100\"") != NULL);
    CHECK_OK(floe_server_close(s, &err), err);
    floe_buf_free(&f1);
    floe_buf_free(&f2);
    floe_buf_free(&both);
    floe_server_config_reset(&cfg);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    RUN(test_replay_torn_tail_watermark_and_keys);
    curl_global_cleanup();
    return harness_finish();
}
