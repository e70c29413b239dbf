/*
 * test_s3_io.c - the S3 FileIO backend end to end, through floe/io.h, against servers the
 * test starts on loopback (node, tests/js):
 *   - s3_sigcheck_server.mjs: verifies every SigV4 signature, so keys with '=', spaces and
 *     UTF-8 are signed right or the request fails with 403
 *   - s3rver_start.mjs: s3rver from npm, an independent S3 implementation
 *   - s3_fault_proxy.mjs in front of the signature-checking server: 503 bursts, dropped
 *     connections, answers lost after the request was applied, truncated bodies, slow
 *     answers. Every operation must end correct or with a clean error, never with a
 *     partial object.
 * Servers get a pipe as stdin and exit when it closes, so a crashed test leaves none.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/manifest.h"
#include "floe/scan.h"
#include "floe/rewrite.h"
#include "floe/table.h"
#include "floe/append.h"
#include "harness.h"
#include "io/s3_internal.h"

extern char **environ;

#define AK "AKIDFLOETEST"
#define SK "floe-test-secret"
#define MIB (1024 * 1024)

typedef struct server {
    pid_t pid;
    int lifeline; /* write end of the server's stdin */
    int port;
} server;

static server sig_srv, tok_srv, s3rver_srv, proxy_srv;

static int server_start(server *s, const char *script, const char *const *extra) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", harness_source_path("tests/js"), script);
    const char *argv[24];
    int n = 0;
    argv[n++] = "node";
    argv[n++] = path;
    for (int i = 0; extra && extra[i] && n < 21; i++)
        argv[n++] = extra[i];
    argv[n++] = "--lifeline";
    argv[n] = NULL;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int rc = posix_spawnp(&s->pid, "node", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    s->lifeline = in[1];
    char line[256];
    size_t len = 0;
    while (len < sizeof line - 1) {
        ssize_t r = read(out[0], line + len, 1);
        if (r <= 0)
            break;
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    close(out[0]);
    const char *p = strstr(line, "\"port\":");
    s->port = p ? atoi(p + 7) : 0;
    return s->port > 0 ? 0 : -1;
}

static void server_stop(server *s) {
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGTERM);
    close(s->lifeline);
    int st;
    waitpid(s->pid, &st, 0);
    s->pid = 0;
}

/* Plain HTTP to a server's admin endpoint; returns parsed JSON or NULL. */
static size_t collect(char *p, size_t size, size_t n, void *u) {
    floe_buf_append(u, p, size * n);
    return size * n;
}

static json_t *admin(int port, const char *path, const char *post_body) {
    CURL *h = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    floe_buf b;
    floe_buf_init(&b, 0);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    if (post_body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post_body);
    CURLcode cc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    json_t *j = NULL;
    if (cc == CURLE_OK && b.len > 0)
        j = json_loadb((const char *)b.data, b.len, 0, NULL);
    floe_buf_free(&b);
    return j;
}

static int pending_uploads(void) {
    json_t *j = admin(sig_srv.port, "/__admin/stats", NULL);
    int n = j ? (int)json_array_size(json_object_get(j, "pendingUploads")) : -1;
    json_decref(j);
    return n;
}

static int sig_failures(void) {
    json_t *j = admin(sig_srv.port, "/__admin/stats", NULL);
    int n = j ? (int)json_integer_value(json_object_get(j, "sigFailures")) : -1;
    json_decref(j);
    return n;
}

static void faults(const char *rules_json) {
    json_t *j = admin(proxy_srv.port, "/__fault", rules_json);
    json_decref(j);
}

static int injected(const char *mode) {
    json_t *j = admin(proxy_srv.port, "/__fault/stats", NULL);
    int n = j ? (int)json_integer_value(json_object_get(json_object_get(j, "injected"), mode))
              : -1;
    json_decref(j);
    return n;
}

/* The context the tests use, rebuilt from the environment by reset_io. */
static floe_io *io;

static void reset_io(void) {
    floe_io_free(io);
    io = NULL;
    floe_io_options o;
    floe_io_options_init(&o);
    floe_error err;
    int rc = floe_io_options_from_env(&o, harness_getenv, NULL, &err);
    if (rc == 0)
        rc = floe_io_new(&o, &io, &err);
    floe_io_options_free(&o);
    if (rc < 0)
        fprintf(stderr, "I/O context: %s\n", err.msg);
}

/* Point the backend at a server. */
static void use(int port, const char *ak, const char *sk) {
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    setenv("AWS_ENDPOINT_URL_S3", ep, 1);
    setenv("AWS_ACCESS_KEY_ID", ak, 1);
    setenv("AWS_SECRET_ACCESS_KEY", sk, 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("FLOE_S3_PART_SIZE", "5MiB", 1);
    setenv("FLOE_S3_RETRY_BASE_MS", "5", 1);
    setenv("FLOE_S3_RETRY_MAX_MS", "40", 1);
    setenv("FLOE_S3_MAX_ATTEMPTS", "6", 1);
    setenv("FLOE_S3_TIMEOUT_MS", "20000", 1);
    unsetenv("AWS_SESSION_TOKEN");
    unsetenv("FLOE_S3_LIST_MAX_KEYS");
    reset_io();
}

static uint8_t *pattern(size_t n, uint32_t seed) {
    uint8_t *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
    return p;
}

/* Write data to uri in uneven chunks; returns the close result. */
static int write_chunked(const char *uri, const uint8_t *data, size_t n, bool no_overwrite,
                         floe_error *err) {
    floe_output_options o = {.fsync = false, .no_overwrite = no_overwrite};
    floe_output *out;
    int rc = floe_output_open(io, uri, &o, &out, err);
    if (rc < 0)
        return rc;
    size_t off = 0, step = 777777;
    while (off < n) {
        size_t take = n - off < step ? n - off : step;
        if ((rc = floe_output_write(out, data + off, take, err)) < 0) {
            floe_output_abort(out);
            return rc;
        }
        off += take;
    }
    return floe_output_close(out, err);
}

/* The object at uri equals data[0..n). */
static bool object_equals(const char *uri, const uint8_t *data, size_t n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_error err;
    int rc = floe_io_read_all(io, uri, 64 * MIB, &b, &err);
    bool eq = rc == 0 && b.len == n && (n == 0 || memcmp(b.data, data, n) == 0);
    if (rc < 0)
        fprintf(stderr, "read_all %s: %s\n", uri, err.msg);
    floe_buf_free(&b);
    return eq;
}

static bool object_exists(const char *uri) {
    bool ex = true;
    floe_error err;
    if (floe_io_exists(io, uri, &ex, &err) < 0)
        return true;
    return ex;
}

/* ---------------------------------------------------------------------------------------
 * Against the signature-checking server.
 * ------------------------------------------------------------------------------------- */
TEST(test_roundtrip_odd_keys) {
    use(sig_srv.port, AK, SK);
    const char *uri = "s3://bkt/t/id_bucket=0/ts_day=2026-10-06/a b \xc3\xbc\xe2\x82\xac~(1).bin";
    size_t n = 300 * 1000;
    uint8_t *data = pattern(n, 1);
    floe_error err;
    floe_io_stats_reset(io);
    REQUIRE_OK(floe_io_write_all(io, uri, data, n, NULL, &err), err);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.put_requests, 1);
    CHECK_EQ_INT(st.bytes_written, (int64_t)n);
    CHECK(object_exists(uri));

    floe_input *in;
    REQUIRE_OK(floe_input_open(io, uri, &in, &err), err);
    CHECK_EQ_INT(floe_input_size(in), (int64_t)n);
    CHECK_EQ_STR(floe_input_uri(in), uri);
    uint8_t buf[5000];
    floe_io_stats_reset(io);
    /* footer first: the tail window comes in one request, later tail reads are free */
    CHECK_OK(floe_input_read_at(in, (int64_t)n - 8, buf, 8, &err), err);
    CHECK_EQ_MEM(buf, data + n - 8, 8);
    CHECK_OK(floe_input_read_at(in, (int64_t)n - 3000, buf, 2000, &err), err);
    CHECK_EQ_MEM(buf, data + n - 3000, 2000);
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.get_requests, 1);
    CHECK_OK(floe_input_read_at(in, 100000, buf, 5000, &err), err);
    CHECK_EQ_MEM(buf, data + 100000, 5000);
    CHECK_OK(floe_input_read_at(in, 0, buf, 1, &err), err);
    CHECK_EQ_INT(buf[0], data[0]);
    /* a large read goes straight into the caller's buffer */
    uint8_t *big = malloc(n);
    CHECK_OK(floe_input_read_at(in, 0, big, n, &err), err);
    CHECK(memcmp(big, data, n) == 0);
    free(big);
    CHECK_EQ_INT(floe_input_read_at(in, (int64_t)n - 2, buf, 8, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "a b") != NULL);
    floe_input_close(in);
    CHECK(object_equals(uri, data, n));
    /* empty objects are objects */
    REQUIRE_OK(floe_io_write_all(io, "s3://bkt/t/empty", "", 0, NULL, &err), err);
    CHECK(object_equals("s3://bkt/t/empty", data, 0));
    CHECK_EQ_INT(sig_failures(), 0);
    free(data);
}

TEST(test_multipart_20mib) {
    use(sig_srv.port, AK, SK);
    const char *uri = "s3://bkt/mp/ts_day=2026-10-06/big file.parquet";
    size_t n = 20 * MIB;
    uint8_t *data = pattern(n, 2);
    floe_error err;
    floe_io_stats_reset(io);
    REQUIRE_OK(write_chunked(uri, data, n, false, &err), err);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    /* CreateMultipartUpload + 4 parts + CompleteMultipartUpload */
    CHECK_EQ_INT(st.put_requests, 6);
    CHECK(st.bytes_written >= (int64_t)n);
    CHECK(object_equals(uri, data, n));
    floe_input *in;
    REQUIRE_OK(floe_input_open(io, uri, &in, &err), err);
    uint8_t buf[64];
    CHECK_OK(floe_input_read_at(in, 5 * MIB - 32, buf, 64, &err), err); /* across parts */
    CHECK_EQ_MEM(buf, data + 5 * MIB - 32, 64);
    floe_input_close(in);
    CHECK_EQ_INT(pending_uploads(), 0);
    /* one byte over one part: two parts, the second of one byte */
    REQUIRE_OK(write_chunked("s3://bkt/mp/five-plus-one", data, 5 * MIB + 1, false, &err), err);
    CHECK(object_equals("s3://bkt/mp/five-plus-one", data, 5 * MIB + 1));
    /* exactly one part: a single PUT */
    floe_io_stats_reset(io);
    REQUIRE_OK(write_chunked("s3://bkt/mp/five", data, 5 * MIB, false, &err), err);
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.put_requests, 1);
    CHECK_EQ_INT(sig_failures(), 0);
    free(data);
}

TEST(test_abort_leaves_nothing) {
    use(sig_srv.port, AK, SK);
    size_t n = 11 * MIB;
    uint8_t *data = pattern(n, 3);
    floe_error err;
    floe_output *o;
    REQUIRE_OK(floe_output_open(io, "s3://bkt/abort/x", NULL, &o, &err), err);
    REQUIRE_OK(floe_output_write(o, data, n, &err), err);
    CHECK_EQ_INT(floe_output_tell(o), (int64_t)n);
    CHECK_EQ_INT(pending_uploads(), 1); /* parts are out */
    floe_output_abort(o);
    CHECK(!object_exists("s3://bkt/abort/x"));
    CHECK_EQ_INT(pending_uploads(), 0);
    REQUIRE_OK(floe_output_open(io, "s3://bkt/abort/small", NULL, &o, &err), err);
    REQUIRE_OK(floe_output_write(o, data, 10, &err), err);
    floe_output_abort(o);
    CHECK(!object_exists("s3://bkt/abort/small"));
    floe_output_abort(NULL);
    free(data);
}

TEST(test_create_if_absent) {
    use(sig_srv.port, AK, SK);
    const char *uri = "s3://bkt/cia/v1.metadata.json";
    floe_output_options o = {.fsync = false, .no_overwrite = true};
    floe_error err;
    REQUIRE_OK(floe_io_write_all(io, uri, "first", 5, &o, &err), err);
    CHECK_EQ_INT(floe_io_write_all(io, uri, "second", 6, &o, &err), FLOE_EEXISTS);
    CHECK(strstr(err.msg, "v1.metadata.json") != NULL);
    CHECK(object_equals(uri, (const uint8_t *)"first", 5));
    /* multipart with create-if-absent: refused at Complete, upload aborted */
    size_t n = 6 * MIB;
    uint8_t *data = pattern(n, 4);
    CHECK_EQ_INT(write_chunked(uri, data, n, true, &err), FLOE_EEXISTS);
    CHECK(object_equals(uri, (const uint8_t *)"first", 5));
    CHECK_EQ_INT(pending_uploads(), 0);
    REQUIRE_OK(write_chunked("s3://bkt/cia/new-big", data, n, true, &err), err);
    CHECK(object_equals("s3://bkt/cia/new-big", data, n));
    /* overwriting without the option is fine */
    REQUIRE_OK(floe_io_write_all(io, uri, "third", 5, NULL, &err), err);
    CHECK(object_equals(uri, (const uint8_t *)"third", 5));
    free(data);
}

typedef struct listing {
    int n;
    int64_t bytes;
    int64_t min_mtime, max_mtime;
    char *uris[64];
    int stop_after;
} listing;

static int on_entry(void *ctx, const floe_io_entry *e) {
    listing *l = ctx;
    if (l->n < 64)
        l->uris[l->n] = floe_strdup(e->uri);
    l->n++;
    l->bytes += e->size;
    if (l->min_mtime == 0 || e->mtime_ms < l->min_mtime)
        l->min_mtime = e->mtime_ms;
    if (e->mtime_ms > l->max_mtime)
        l->max_mtime = e->mtime_ms;
    return l->stop_after && l->n >= l->stop_after;
}

static void listing_free(listing *l) {
    for (int i = 0; i < l->n && i < 64; i++)
        floe_free(l->uris[i]);
}

/* 25 objects under prefix/p=1/, one deeper, one sibling that must not be listed. */
static void make_list_fixture(const char *bucket, floe_error *err) {
    for (int i = 0; i < 25; i++) {
        char *uri = floe_asprintf("s3://%s/ls/p=1/k%02d a.bin", bucket, i);
        CHECK_OK(floe_io_write_all(io, uri, "0123456789", (size_t)(i % 10 + 1), NULL, err), *err);
        floe_free(uri);
    }
    char *deep = floe_asprintf("s3://%s/ls/sub/deep/x", bucket);
    char *sib = floe_asprintf("s3://%s/lsx/other", bucket);
    CHECK_OK(floe_io_write_all(io, deep, "xyz", 3, NULL, err), *err);
    CHECK_OK(floe_io_write_all(io, sib, "no", 2, NULL, err), *err);
    floe_free(deep);
    floe_free(sib);
}

/* exact: the server is ours and never fails by itself (s3rver's DeleteObjects sometimes
 * answers 500 when it removes many files at once, which floe then retries). */
static void check_list_and_delete(const char *bucket, bool exact) {
    floe_error err;
    setenv("FLOE_S3_LIST_MAX_KEYS", "7", 1);
    reset_io();
    make_list_fixture(bucket, &err);
    char *prefix = floe_asprintf("s3://%s/ls", bucket);
    listing l;
    memset(&l, 0, sizeof l);
    floe_io_stats_reset(io);
    int64_t now = floe_wall_ms();
    REQUIRE_OK(floe_io_list(io, prefix, on_entry, &l, &err), err);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(l.n, 26);
    int64_t want_bytes = 3;
    for (int i = 0; i < 25; i++)
        want_bytes += i % 10 + 1;
    CHECK_EQ_INT(l.bytes, want_bytes);
    CHECK_EQ_INT(st.list_requests, 4); /* 26 keys, 7 per page */
    CHECK(l.min_mtime > now - 120000 && l.max_mtime < now + 120000);
    for (int i = 0; i < l.n && i < 64; i++)
        CHECK(strncmp(l.uris[i], prefix, strlen(prefix)) == 0 && strstr(l.uris[i], "lsx") == NULL);
    /* stopping early is not an error */
    listing stop;
    memset(&stop, 0, sizeof stop);
    stop.stop_after = 9;
    CHECK_OK(floe_io_list(io, prefix, on_entry, &stop, &err), err);
    CHECK_EQ_INT(stop.n, 9);
    listing_free(&stop);
    /* batched delete: one request for all 26, missing keys are fine */
    const char *uris[64];
    for (int i = 0; i < l.n; i++)
        uris[i] = l.uris[i];
    char *missing = floe_asprintf("s3://%s/ls/never-existed", bucket);
    uris[l.n] = missing;
    floe_io_stats_reset(io);
    REQUIRE_OK(floe_io_delete_many(io, uris, (size_t)l.n + 1, &err), err);
    floe_io_stats_get(io, &st);
    if (exact)
        CHECK_EQ_INT(st.delete_requests, 1);
    else
        CHECK(st.delete_requests >= 1 && st.delete_requests <= 3);
    listing after;
    memset(&after, 0, sizeof after);
    CHECK_OK(floe_io_list(io, prefix, on_entry, &after, &err), err);
    CHECK_EQ_INT(after.n, 0);
    listing_free(&after);
    char *sib = floe_asprintf("s3://%s/lsx/other", bucket);
    CHECK(object_exists(sib));
    CHECK_OK(floe_io_delete(io, sib, &err), err);
    CHECK(!object_exists(sib));
    CHECK_OK(floe_io_delete(io, sib, &err), err); /* again: missing is not an error */
    floe_free(sib);
    floe_free(missing);
    floe_free(prefix);
    listing_free(&l);
    unsetenv("FLOE_S3_LIST_MAX_KEYS");
    reset_io();
}

TEST(test_list_paginated_and_delete_many) {
    use(sig_srv.port, AK, SK);
    check_list_and_delete("bkt", true);
    CHECK_EQ_INT(sig_failures(), 0);
}

TEST(test_missing_and_refused) {
    use(sig_srv.port, AK, SK);
    floe_error err;
    floe_input *in;
    CHECK_EQ_INT(floe_input_open(io, "s3://bkt/nope/x.parquet", &in, &err), FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "s3://bkt/nope/x.parquet") && strstr(err.msg, "404"));
    CHECK(!object_exists("s3://bkt/nope/x.parquet"));
    CHECK_EQ_INT(floe_input_open(io, "s3://nobucket/x", &in, &err), FLOE_ENOTFOUND);
    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK_EQ_INT(floe_io_read_all(io, "s3://bkt", 0, &b, &err), FLOE_EINVALID);
    floe_buf_free(&b);
    /* a wrong secret: refused, not retried, and the message says why and where */
    use(sig_srv.port, AK, "wrong-secret");
    floe_io_stats_reset(io);
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/auth/k=1", "x", 1, NULL, &err), FLOE_EAUTH);
    CHECK(strstr(err.msg, "SignatureDoesNotMatch") && strstr(err.msg, "s3://bkt/auth/k=1"));
    CHECK_EQ_INT(err.sys, 403);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.put_requests, 1);
    /* no credentials at all */
    use(sig_srv.port, AK, SK);
    unsetenv("AWS_ACCESS_KEY_ID");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
    reset_io();
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/auth/x", "x", 1, NULL, &err), FLOE_EAUTH);
    CHECK(strstr(err.msg, "credentials") != NULL);
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
    unsetenv("AWS_CONFIG_FILE");
}

TEST(test_session_token) {
    use(tok_srv.port, AK, SK);
    floe_error err;
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/tok", "x", 1, NULL, &err), FLOE_EAUTH);
    setenv("AWS_SESSION_TOKEN", "FQoGZXIvYXdzEXAMPLE/token+with=chars", 1);
    reset_io();
    CHECK_OK(floe_io_write_all(io, "s3://bkt/tok", "x", 1, NULL, &err), err);
    CHECK(object_equals("s3://bkt/tok", (const uint8_t *)"x", 1));
    unsetenv("AWS_SESSION_TOKEN");
}

/* ---------------------------------------------------------------------------------------
 * Against s3rver.
 * ------------------------------------------------------------------------------------- */
TEST(test_s3rver) {
    use(s3rver_srv.port, "S3RVER", "S3RVER");
    floe_error err;
    size_t n = 200 * 1000;
    uint8_t *data = pattern(n, 5);
    const char *uri = "s3a://bkt/t/id_bucket=3/a b.bin";
    REQUIRE_OK(floe_io_write_all(io, uri, data, n, NULL, &err), err);
    CHECK(object_equals(uri, data, n));
    floe_input *in;
    REQUIRE_OK(floe_input_open(io, uri, &in, &err), err);
    uint8_t buf[100];
    CHECK_OK(floe_input_read_at(in, 1234, buf, 100, &err), err);
    CHECK_EQ_MEM(buf, data + 1234, 100);
    floe_input_close(in);
    free(data);
    size_t big = 20 * MIB;
    data = pattern(big, 6);
    REQUIRE_OK(write_chunked("s3://bkt/mp/big", data, big, false, &err), err);
    CHECK(object_equals("s3://bkt/mp/big", data, big));
    floe_output *o;
    REQUIRE_OK(floe_output_open(io, "s3://bkt/mp/aborted", NULL, &o, &err), err);
    CHECK_OK(floe_output_write(o, data, 11 * MIB, &err), err);
    floe_output_abort(o);
    CHECK(!object_exists("s3://bkt/mp/aborted"));
    free(data);
    check_list_and_delete("bkt", false);
}

/* ---------------------------------------------------------------------------------------
 * Through the fault proxy (in front of the signature-checking server).
 * ------------------------------------------------------------------------------------- */
TEST(test_faults_retried) {
    use(proxy_srv.port, AK, SK);
    floe_error err;
    size_t n = 400 * 1000;
    uint8_t *data = pattern(n, 7);
    /* a burst of 503 SlowDown on PUT */
    faults("[{\"mode\":\"503\",\"count\":3,\"method\":\"PUT\"}]");
    floe_io_stats_reset(io);
    REQUIRE_OK(floe_io_write_all(io, "s3://bkt/f/slowdown", data, n, NULL, &err), err);
    CHECK_EQ_INT(injected("503"), 3);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.put_requests, 4); /* every attempt is a request */
    CHECK(object_equals("s3://bkt/f/slowdown", data, n));
    /* dropped connections, then truncated bodies, on GET */
    faults("[{\"mode\":\"drop\",\"count\":2,\"method\":\"GET\"},"
           "{\"mode\":\"truncate\",\"count\":2,\"method\":\"GET\"}]");
    CHECK(object_equals("s3://bkt/f/slowdown", data, n));
    CHECK_EQ_INT(injected("drop"), 2);
    CHECK_EQ_INT(injected("truncate"), 2);
    /* truncated ranged reads through floe_input */
    floe_input *in;
    REQUIRE_OK(floe_input_open(io, "s3://bkt/f/slowdown", &in, &err), err);
    faults("[{\"mode\":\"truncate\",\"count\":2,\"method\":\"GET\"}]");
    uint8_t buf[3000];
    CHECK_OK(floe_input_read_at(in, 1000, buf, 3000, &err), err);
    CHECK_EQ_MEM(buf, data + 1000, 3000);
    CHECK_EQ_INT(injected("truncate"), 2);
    floe_input_close(in);
    /* a slow answer past the timeout is retried */
    setenv("FLOE_S3_TIMEOUT_MS", "400", 1);
    reset_io();
    faults("[{\"mode\":\"slow\",\"count\":1,\"method\":\"HEAD\",\"ms\":1500}]");
    CHECK(object_exists("s3://bkt/f/slowdown"));
    CHECK_EQ_INT(injected("slow"), 1);
    setenv("FLOE_S3_TIMEOUT_MS", "20000", 1);
    reset_io();
    /* 500s on UploadPart, a drop on CreateMultipartUpload, a truncated Complete answer */
    size_t big = 11 * MIB;
    uint8_t *bigdata = pattern(big, 8);
    faults("[{\"mode\":\"500\",\"count\":2,\"match\":\"partNumber\"},"
           "{\"mode\":\"drop\",\"count\":1,\"match\":\"uploads\"},"
           "{\"mode\":\"truncate\",\"count\":1,\"method\":\"POST\",\"match\":\"uploadId\"}]");
    REQUIRE_OK(write_chunked("s3://bkt/f/mp", bigdata, big, false, &err), err);
    CHECK_EQ_INT(injected("500"), 2);
    CHECK_EQ_INT(injected("drop"), 1);
    CHECK(object_equals("s3://bkt/f/mp", bigdata, big));
    /* lost answer to CompleteMultipartUpload: the retry finds no upload, the ETag proves
     * the object is ours */
    faults("[{\"mode\":\"drop_after\",\"count\":1,\"method\":\"POST\",\"match\":\"uploadId\"}]");
    REQUIRE_OK(write_chunked("s3://bkt/f/mp-lost", bigdata, big, false, &err), err);
    CHECK_EQ_INT(injected("drop_after"), 1);
    CHECK(object_equals("s3://bkt/f/mp-lost", bigdata, big));
    /* truncated and dropped list pages, and a dropped DeleteObjects */
    setenv("FLOE_S3_LIST_MAX_KEYS", "7", 1);
    reset_io();
    make_list_fixture("bkt", &err);
    faults("[{\"mode\":\"truncate\",\"count\":2,\"match\":\"list-type\"},"
           "{\"mode\":\"drop\",\"count\":1,\"match\":\"list-type\"},"
           "{\"mode\":\"drop\",\"count\":1,\"match\":\"?delete\"}]");
    listing l;
    memset(&l, 0, sizeof l);
    REQUIRE_OK(floe_io_list(io, "s3://bkt/ls", on_entry, &l, &err), err);
    CHECK_EQ_INT(l.n, 26);
    CHECK_EQ_INT(injected("truncate"), 2);
    const char *uris[64];
    for (int i = 0; i < l.n && i < 64; i++)
        uris[i] = l.uris[i];
    REQUIRE_OK(floe_io_delete_many(io, uris, (size_t)l.n, &err), err);
    CHECK_EQ_INT(injected("drop"), 2);
    listing_free(&l);
    memset(&l, 0, sizeof l);
    CHECK_OK(floe_io_list(io, "s3://bkt/ls", on_entry, &l, &err), err);
    CHECK_EQ_INT(l.n, 0);
    listing_free(&l);
    unsetenv("FLOE_S3_LIST_MAX_KEYS");
    reset_io();
    CHECK_EQ_INT(pending_uploads(), 0);
    faults("[]");
    free(data);
    free(bigdata);
}

TEST(test_faults_clean_errors) {
    use(proxy_srv.port, AK, SK);
    floe_error err;
    /* more 503s than attempts: a clean error naming the key, the status and the code */
    setenv("FLOE_S3_MAX_ATTEMPTS", "3", 1);
    reset_io();
    faults("[{\"mode\":\"503\",\"count\":10,\"method\":\"PUT\"}]");
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/e/never", "abc", 3, NULL, &err), FLOE_EIO);
    CHECK(strstr(err.msg, "s3://bkt/e/never") && strstr(err.msg, "503") &&
          strstr(err.msg, "SlowDown") && strstr(err.msg, "3 attempts"));
    CHECK_EQ_INT(err.sys, 503);
    CHECK_EQ_INT(injected("503"), 3);
    faults("[]");
    CHECK(!object_exists("s3://bkt/e/never"));
    setenv("FLOE_S3_MAX_ATTEMPTS", "6", 1);
    reset_io();

    /* create-if-absent whose first answer is lost after the server applied it: the retry's
     * 412 might be our own object, so the state is unknown, never "already exists" */
    floe_output_options cia = {.fsync = false, .no_overwrite = true};
    faults("[{\"mode\":\"drop_after\",\"count\":1,\"method\":\"PUT\"}]");
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/e/commit-1", "meta", 4, &cia, &err),
                 FLOE_EUNKNOWN_STATE);
    CHECK(strstr(err.msg, "commit-1") != NULL);
    CHECK(object_equals("s3://bkt/e/commit-1", (const uint8_t *)"meta", 4));
    faults("[{\"mode\":\"500_after\",\"count\":1,\"method\":\"PUT\"}]");
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/e/commit-2", "meta", 4, &cia, &err),
                 FLOE_EUNKNOWN_STATE);
    /* a SlowDown is known not to have been applied: a later 412 is a plain conflict */
    faults("[{\"mode\":\"503\",\"count\":1,\"method\":\"PUT\"}]");
    CHECK_EQ_INT(floe_io_write_all(io, "s3://bkt/e/commit-2", "other", 5, &cia, &err),
                 FLOE_EEXISTS);
    CHECK(object_equals("s3://bkt/e/commit-2", (const uint8_t *)"meta", 4));
    /* the same for a multipart create-if-absent */
    size_t big = 6 * MIB;
    uint8_t *bigdata = pattern(big, 9);
    faults("[{\"mode\":\"drop_after\",\"count\":1,\"method\":\"POST\",\"match\":\"uploadId\"}]");
    CHECK_EQ_INT(write_chunked("s3://bkt/e/commit-3", bigdata, big, true, &err),
                 FLOE_EUNKNOWN_STATE);
    CHECK(object_equals("s3://bkt/e/commit-3", bigdata, big));
    /* a non-retryable failure at Complete: the upload is aborted, nothing is published */
    faults("[{\"mode\":\"400\",\"count\":1,\"method\":\"POST\",\"match\":\"uploadId\"}]");
    CHECK_EQ_INT(write_chunked("s3://bkt/e/refused", bigdata, big, false, &err), FLOE_EINVALID);
    CHECK(!object_exists("s3://bkt/e/refused"));
    CHECK_EQ_INT(pending_uploads(), 0);
    faults("[]");
    free(bigdata);
}

/* Mixed faults over a series of writes: each write ends published whole or not at all. */
TEST(test_faults_never_corrupt) {
    use(proxy_srv.port, AK, SK);
    setenv("FLOE_S3_MAX_ATTEMPTS", "3", 1);
    reset_io();
    floe_error err;
    int ok = 0, failed = 0;
    for (int round = 0; round < 12; round++) {
        size_t n = (round % 3 == 0) ? 5 * MIB + 4096 * (size_t)round : 10000 + 997 * (size_t)round;
        uint8_t *data = pattern(n, 100 + (uint32_t)round);
        char uri[64];
        snprintf(uri, sizeof uri, "s3://bkt/mix/obj-%02d", round);
        /* a different storm each round; some rounds outlast the attempts */
        const char *storms[] = {
            "[{\"mode\":\"503\",\"count\":2},"
            "{\"mode\":\"truncate\",\"count\":1,\"method\":\"GET\"}]",
            "[{\"mode\":\"drop\",\"count\":5}]",
            "[{\"mode\":\"drop_after\",\"count\":1,\"method\":\"PUT\"},"
            "{\"mode\":\"503\",\"count\":1}]",
            "[{\"mode\":\"500\",\"count\":4,\"match\":\"partNumber\"}]",
            "[{\"mode\":\"truncate\",\"count\":3}]",
            "[{\"mode\":\"500_after\",\"count\":1},{\"mode\":\"drop\",\"count\":1}]",
        };
        faults(storms[round % 6]);
        int rc = write_chunked(uri, data, n, false, &err);
        faults("[]");
        if (rc == 0) {
            ok++;
            CHECK(object_equals(uri, data, n));
        } else {
            failed++;
            CHECK(rc == FLOE_EIO || rc == FLOE_ETIMEOUT || rc == FLOE_EUNKNOWN_STATE);
            CHECK(strstr(err.msg, uri) != NULL);
            /* absent, or complete (an applied attempt whose answer was lost) */
            CHECK(!object_exists(uri) || object_equals(uri, data, n));
        }
        free(data);
    }
    CHECK(ok > 0);
    CHECK_EQ_INT(pending_uploads(), 0);
    setenv("FLOE_S3_MAX_ATTEMPTS", "6", 1);
    reset_io();
}

/* ---------------------------------------------------------------------------------------
 * Two I/O contexts in one process: two signature-checking servers with different keys,
 * one table on each, rewritten at the same time from two threads.
 * ------------------------------------------------------------------------------------- */
#define AK2 "AKIDSECONDSTORE"
#define SK2 "second-store-secret"

static server sig2_srv;

static floe_io *static_io(int port, const char *ak, const char *sk) {
    floe_io_options o;
    floe_io_options_init(&o);
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    floe_error err;
    floe_io *out = NULL;
    if (floe_io_options_set(&o.s3.endpoint, ep, &err) < 0 ||
        floe_io_options_set(&o.s3.access_key, ak, &err) < 0 ||
        floe_io_options_set(&o.s3.secret_key, sk, &err) < 0) {
        floe_io_options_free(&o);
        harness_fail(__FILE__, __LINE__, "options: %s", err.msg);
        return NULL;
    }
    o.s3.credentials = FLOE_IO_CREDS_STATIC;
    o.retry.max_attempts = 3;
    o.retry.base_delay_ms = 5;
    o.retry.max_delay_ms = 40;
    if (floe_io_new(&o, &out, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "floe_io_new: %s", err.msg);
        out = NULL;
    }
    floe_io_options_free(&o);
    return out;
}

static const char *TWO_SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"}]}";

typedef struct store_side {
    floe_io *io;
    floe_catalog *cat;
    floe_table *t;
    int rc;
    floe_rewrite_result r;
    floe_error err;
} store_side;

/* ns.t in a SQLite catalog whose warehouse is s3://bkt/<tag>, with nfiles appended files
 * (one commit, so one manifest, each). */
static void side_open(store_side *s, const char *dir, const char *tag, int nfiles) {
    char db[4200], wh[64];
    snprintf(db, sizeof db, "%s/%s.db", dir, tag);
    snprintf(wh, sizeof wh, "s3://bkt/%s", tag);
    floe_error err;
    REQUIRE_OK(floe_catalog_open_sqlite(s->io, db, "default", wh, &s->cat, &err), err);
    REQUIRE(floe_catalog_io(s->cat) == s->io);
    REQUIRE_OK(floe_catalog_create_namespace(s->cat, "ns", NULL, NULL, 0, &err), err);
    REQUIRE_OK(floe_table_create(s->cat, "ns", "t", TWO_SCHEMA, NULL, &s->t, &err), err);
    for (int k = 0; k < nfiles; k++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/%s-%d.ndjson", dir, tag, k);
        floe_buf b;
        floe_buf_init(&b, 0);
        for (int i = 0; i < 100; i++)
            floe_buf_printf(&b, "{\"id\":%d,\"name\":\"%s-%d\"}\n", k * 100 + i, tag, i);
        REQUIRE(harness_write_file(path, b.data, b.len) == 0);
        floe_buf_free(&b);
        const char *in[1] = {path};
        floe_table_append_options o;
        floe_table_append_options_init(&o);
        o.fsync = false;
        floe_table_append_result r;
        memset(&r, 0, sizeof r);
        REQUIRE_OK(floe_table_append_files(s->t, in, 1, &o, &r, &err), err);
        floe_table_append_result_reset(&r);
    }
}

static void *side_rewrite(void *arg) {
    store_side *s = arg;
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.min_input_files = 2;
    o.fsync = false;
    floe_error_clear(&s->err);
    s->rc = floe_rewrite(s->t, &o, &s->r, &s->err);
    return NULL;
}

static void side_close(store_side *s) {
    floe_table_close(s->t);
    floe_catalog_close(s->cat);
    floe_io_free(s->io);
}

static int count_entry(void *ctx, const floe_io_entry *e) {
    (void)e;
    (*(int64_t *)ctx)++;
    return 0;
}

static int64_t sig_stat(int port, const char *name) {
    json_t *j = admin(port, "/__admin/stats", NULL);
    int64_t n = j ? (int64_t)json_integer_value(json_object_get(j, name)) : -1;
    json_decref(j);
    return n;
}

static int sig_failures_of(int port) { return (int)sig_stat(port, "sigFailures"); }

TEST(test_two_contexts_two_stores) {
    /* nothing from the environment: each context says where it goes and who it is */
    unsetenv("AWS_ENDPOINT_URL_S3");
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    int fail_a = sig_failures_of(sig_srv.port), fail_b = sig_failures_of(sig2_srv.port);
    store_side a = {.io = static_io(sig_srv.port, AK, SK)};
    store_side b = {.io = static_io(sig2_srv.port, AK2, SK2)};
    REQUIRE(a.io && b.io);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", harness_tmpdir());
    side_open(&a, dir, "alpha", 3);
    side_open(&b, dir, "beta", 3);
    floe_io_stats sa, sb;
    floe_io_stats_get(a.io, &sa);
    floe_io_stats_get(b.io, &sb);
    CHECK(sa.put_requests > 0 && sb.put_requests > 0);

    pthread_t ta, tb;
    REQUIRE(pthread_create(&ta, NULL, side_rewrite, &a) == 0);
    REQUIRE(pthread_create(&tb, NULL, side_rewrite, &b) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK_OK(a.rc, a.err);
    CHECK_OK(b.rc, b.err);
    CHECK_EQ_INT(a.r.rewritten_data_files_count, 3);
    CHECK_EQ_INT(b.r.rewritten_data_files_count, 3);
    CHECK_EQ_INT(a.r.added_data_files_count, 1);
    CHECK_EQ_INT(b.r.added_data_files_count, 1);
    /* every request reached its own store signed with its own keys */
    CHECK_EQ_INT(sig_failures_of(sig_srv.port), fail_a);
    CHECK_EQ_INT(sig_failures_of(sig2_srv.port), fail_b);
    /* each store holds only its own table */
    bool ex = true;
    floe_error err;
    REQUIRE_OK(floe_io_exists(a.io, "s3://bkt/beta/ns/t/metadata/version-hint.text", &ex, &err),
               err);
    CHECK(!ex);

    /* a wrong key on one context fails that context only, while the other keeps working */
    store_side bad = {.io = static_io(sig2_srv.port, AK2, "not-the-secret")};
    REQUIRE(bad.io);
    floe_table *bt = NULL;
    floe_catalog *bc = NULL;
    char db[4200];
    snprintf(db, sizeof db, "%s/beta.db", dir);
    REQUIRE_OK(floe_catalog_open_sqlite(bad.io, db, "default", "s3://bkt/beta", &bc, &err), err);
    int rc = floe_table_load(bc, "ns", "t", &bt, &err);
    CHECK(rc < 0);
    if (rc < 0 && !strstr(err.msg, "s3://bkt/beta/"))
        harness_fail(__FILE__, __LINE__, "load with the wrong key: %s", err.msg);
    floe_table_close(bt);
    floe_catalog_close(bc);
    floe_io_free(bad.io);
    CHECK(sig_failures_of(sig2_srv.port) > fail_b);
    int64_t listed = 0;
    REQUIRE_OK(floe_io_list(a.io, "s3://bkt/alpha", count_entry, &listed, &err), err);
    CHECK(listed > 0);
    listed = 0;
    REQUIRE_OK(floe_io_list(b.io, "s3://bkt/beta", count_entry, &listed, &err), err);
    CHECK(listed > 0);
    CHECK_EQ_INT(sig_failures_of(sig_srv.port), fail_a);
    side_close(&a);
    side_close(&b);
}

/* ---------------------------------------------------------------------------------------
 * Sequential inputs (manifests, manifest lists): the size comes with the first window's
 * GET, no HEAD.
 * ------------------------------------------------------------------------------------- */
static void check_sequential(const char *uri, size_t n, uint32_t seed, int64_t heads) {
    uint8_t *data = pattern(n, seed);
    floe_error err;
    REQUIRE_OK(floe_io_write_all(io, uri, data, n, NULL, &err), err);
    floe_io_stats_reset(io);
    floe_input *in = NULL;
    REQUIRE_OK(floe_input_open_sequential(io, uri, &in, &err), err);
    CHECK_EQ_INT(floe_input_size(in), (int64_t)n);
    floe_io_stats st;
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.head_requests, heads);
    CHECK_EQ_INT(st.get_requests, 1); /* the window (416 for an empty object) */
    uint8_t *back = malloc(n ? n : 1);
    size_t first = n < 1000 ? n : 1000;
    CHECK_OK(floe_input_read_at(in, 0, back, first, &err), err);
    CHECK(first == 0 || memcmp(back, data, first) == 0);
    floe_io_stats_get(io, &st);
    CHECK_EQ_INT(st.get_requests, 1); /* the window is kept: no second GET */
    CHECK_OK(floe_input_read_at(in, 0, back, n, &err), err);
    CHECK(n == 0 || memcmp(back, data, n) == 0);
    if (n > 10) { /* a read past the window, at the end */
        CHECK_OK(floe_input_read_at(in, (int64_t)n - 10, back, 10, &err), err);
        CHECK_EQ_MEM(back, data + n - 10, 10);
    }
    CHECK(floe_input_read_at(in, (int64_t)n, back, 1, &err) < 0); /* past the end */
    floe_input_close(in);
    free(back);
    free(data);
}

TEST(test_open_sequential) {
    use(sig_srv.port, AK, SK);
    check_sequential("s3://bkt/seq/small.avro", 4321, 31, 0);
    check_sequential("s3://bkt/seq/window.avro", 256 * 1024, 32, 0);
    check_sequential("s3://bkt/seq/large.avro", 700 * 1000, 33, 0);
    check_sequential("s3://bkt/seq/empty.avro", 0, 34, 1); /* 416: HEAD tells 0 */
    floe_input *in = NULL;
    floe_error err;
    CHECK_EQ_INT(floe_input_open_sequential(io, "s3://bkt/seq/absent.avro", &in, &err),
                 FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "s3://bkt/seq/absent.avro") != NULL);
    /* an independent implementation */
    use(s3rver_srv.port, "S3RVER", "S3RVER");
    check_sequential("s3://bkt/seq/small.avro", 4321, 35, 0);
    check_sequential("s3://bkt/seq/large.avro", 700 * 1000, 36, 0);
}

/* ---------------------------------------------------------------------------------------
 * Scan planning over S3 (issue 22): manifests fetched by several threads over reused
 * connections, one GET each, the plan and its errors the same as one at a time.
 * ------------------------------------------------------------------------------------- */
#define PLAN_MANIFESTS 40

/* The plan of t with n manifest threads as text (or the error), and the requests made. */
static char *plan_over(floe_table *t, floe_io *pio, int n, floe_io_stats *st, int *rc,
                       floe_error *err) {
    floe_scan_options so = {.manifest_threads = n};
    floe_scan_plan *p = NULL;
    floe_io_stats_reset(pio);
    floe_error_clear(err);
    *rc = floe_scan_plan_files(t, &so, &p, err);
    floe_io_stats_get(pio, st);
    if (*rc < 0)
        return floe_strdup(err->msg);
    floe_buf b;
    floe_buf_init(&b, 0);
    for (size_t i = 0; i < p->ntasks; i++)
        floe_buf_printf(&b, "%s %" PRId64 " %zu\n", p->tasks[i].file->file_path,
                        p->tasks[i].data_sequence_number, p->tasks[i].ndeletes);
    floe_buf_append(&b, "", 1);
    floe_scan_plan_free(p);
    return (char *)b.data;
}

/* Threads of this process now (/proc/self/status), -1 when it cannot tell. */
static int threads_now(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Threads:", 8))
            n = atoi(line + 8);
    fclose(f);
    return n;
}

typedef struct stream_seen {
    floe_buf b;
    int threads_max;
} stream_seen;

static int stream_task(void *ctx, const floe_scan_task *t, floe_error *err) {
    (void)err;
    stream_seen *s = ctx;
    int n = threads_now();
    if (n > s->threads_max)
        s->threads_max = n;
    floe_buf_printf(&s->b, "%s\n", t->file->file_path);
    return 0;
}

TEST(test_plan_over_s3) {
    unsetenv("AWS_ENDPOINT_URL_S3");
    store_side s = {.io = static_io(sig_srv.port, AK, SK)};
    REQUIRE(s.io);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", harness_tmpdir());
    side_open(&s, dir, "plan", PLAN_MANIFESTS);
    floe_error err;
    floe_io_stats st;
    int rc;
    char *one = plan_over(s.t, s.io, 1, &st, &rc, &err);
    CHECK_OK(rc, err);
    /* one GET for the list and one per manifest, no HEAD */
    CHECK_EQ_INT(st.get_requests, PLAN_MANIFESTS + 1);
    CHECK_EQ_INT(st.head_requests, 0);
    size_t lines = 0;
    for (const char *c = one; *c; c++)
        lines += *c == '\n';
    CHECK_EQ_INT(lines, PLAN_MANIFESTS);
    int threads[] = {16, 16, 0};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        int64_t conns = sig_stat(sig_srv.port, "connections");
        char *many = plan_over(s.t, s.io, threads[i], &st, &rc, &err);
        CHECK_OK(rc, err);
        CHECK_EQ_STR(many, one);
        CHECK_EQ_INT(st.get_requests, PLAN_MANIFESTS + 1);
        CHECK_EQ_INT(st.head_requests, 0);
        /* connections are kept for the next request: at most one per thread is opened,
         * and a second plan with as many threads finds them all open (libcurl's default
         * cache of 5 closed the others after each request) */
        int64_t opened = sig_stat(sig_srv.port, "connections") - conns;
        /* default: up to 64 GETs in flight, here one per manifest */
        int64_t most = i == 1 ? 1 : (threads[i] ? threads[i] : PLAN_MANIFESTS) + 1;
        if (opened > most)
            harness_fail(__FILE__, __LINE__, "plan %zu (%d threads): %" PRId64 " connections "
                         "opened for %" PRId64 " requests, at most %" PRId64 " expected", i,
                         threads[i], opened, st.get_requests, most);
        free(many);
    }

    /* the requests wait on one fetch thread, not a thread each: the planner and that
     * thread while the plan streams (16 and 17 threads before, with 16 and 32 of them) */
    int with_threads[] = {16, 0};
    for (size_t i = 0; i < sizeof with_threads / sizeof with_threads[0]; i++) {
        stream_seen seen = {.threads_max = 0};
        floe_buf_init(&seen.b, 0);
        int before = threads_now();
        floe_scan_options so = {.manifest_threads = with_threads[i]};
        floe_scan_plan *p = NULL;
        floe_error_clear(&err);
        CHECK_OK(floe_scan_plan_stream(s.t, &so, stream_task, &seen, &p, &err), err);
        floe_scan_plan_free(p);
        if (before < 0 || seen.threads_max > before + 1)
            harness_fail(__FILE__, __LINE__, "manifest_threads %d: %d threads while planning "
                         "(%d before): one fetch thread expected", with_threads[i],
                         seen.threads_max, before);
        /* the same files in the same order as one manifest at a time */
        floe_buf_append(&seen.b, "", 1);
        floe_buf paths;
        floe_buf_init(&paths, 0);
        for (const char *c = one; *c;) {
            const char *sp = strchr(c, ' '), *nl = strchr(c, '\n');
            floe_buf_append(&paths, c, (size_t)(sp - c));
            floe_buf_append(&paths, "\n", 1);
            c = nl + 1;
        }
        floe_buf_append(&paths, "", 1);
        CHECK_EQ_STR((const char *)seen.b.data, (const char *)paths.data);
        floe_buf_free(&paths);
        floe_buf_free(&seen.b);
    }

    /* one manifest's GET fails: the plan's error names it, with any number of threads */
    store_side f = {.io = static_io(proxy_srv.port, AK, SK)};
    REQUIRE(f.io);
    char db[4200];
    snprintf(db, sizeof db, "%s/plan.db", dir);
    REQUIRE_OK(floe_catalog_open_sqlite(f.io, db, "default", "s3://bkt/plan", &f.cat, &err), err);
    REQUIRE_OK(floe_table_load(f.cat, "ns", "t", &f.t, &err), err);
    const floe_snapshot *sn = floe_table_metadata_current_snapshot(floe_table_metadata_get(f.t));
    REQUIRE(sn && sn->manifest_list);
    char *list_uri = NULL;
    REQUIRE_OK(floe_table_resolve_path(f.t, sn->manifest_list, &list_uri, &err), err);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    REQUIRE_OK(floe_manifest_list_read(f.io, list_uri, NULL, &a, &ml, &err), err);
    REQUIRE(ml.nfiles == PLAN_MANIFESTS);
    const char *bad = ml.files[PLAN_MANIFESTS / 2].manifest_path;
    const char *base = strrchr(bad, '/') ? strrchr(bad, '/') + 1 : bad;
    char rule[512];
    snprintf(rule, sizeof rule, "[{\"mode\":\"400\",\"count\":100,\"method\":\"GET\","
             "\"match\":\"%s\"}]", base);
    int with[] = {1, 16, 0};
    for (size_t i = 0; i < sizeof with / sizeof with[0]; i++) {
        faults(rule);
        char *msg = plan_over(f.t, f.io, with[i], &st, &rc, &err);
        CHECK_EQ_INT(rc, FLOE_EINVALID);
        if (!strstr(msg, base) || !strstr(msg, "HTTP 400"))
            harness_fail(__FILE__, __LINE__, "%d threads: the error does not name %s: %s",
                         with[i], base, msg);
        /* with threads, the fetch thread's one attempt failed and the manifest was read
         * again the ordinary way, whose error this is */
        CHECK_EQ_INT(injected("400"), with[i] == 1 ? 1 : 2);
        free(msg);
    }
    /* a GET that fails once (a 500, a truncated body): the manifest is read again, the
     * plan is the same */
    const char *once[] = {"500", "truncate"};
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++) {
        snprintf(rule, sizeof rule, "[{\"mode\":\"%s\",\"count\":1,\"method\":\"GET\","
                 "\"match\":\"%s\"}]", once[i], base);
        faults(rule);
        int before = injected(once[i]);
        char *again = plan_over(f.t, f.io, 0, &st, &rc, &err);
        CHECK_OK(rc, err);
        CHECK_EQ_STR(again, one);
        CHECK_EQ_INT(injected(once[i]) - (before > 0 ? before : 0), 1);
        CHECK_EQ_INT(st.get_requests, PLAN_MANIFESTS + 2);
        free(again);
    }
    faults("[]");
    char *after = plan_over(f.t, f.io, 0, &st, &rc, &err);
    CHECK_OK(rc, err);
    CHECK_EQ_STR(after, one);
    free(after);
    floe_arena_reset(&a);
    floe_free(list_uri);
    free(one);
    side_close(&f);
    side_close(&s);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *sig_args[] = {"--access-key", AK, "--secret", SK, "--bucket", "bkt", NULL};
    const char *tok_args[] = {"--access-key", AK, "--secret", SK, "--bucket", "bkt", "--token",
                              "FQoGZXIvYXdzEXAMPLE/token+with=chars", NULL};
    const char *s3rver_args[] = {"--bucket", "bkt", NULL};
    if (server_start(&sig_srv, "s3_sigcheck_server.mjs", sig_args) < 0 ||
        server_start(&tok_srv, "s3_sigcheck_server.mjs", tok_args) < 0 ||
        server_start(&s3rver_srv, "s3rver_start.mjs", s3rver_args) < 0) {
        fprintf(stderr, "test_s3_io: cannot start the S3 test servers (node and tests/js "
                        "node_modules are needed: scripts/setup --test)\n");
        server_stop(&sig_srv);
        server_stop(&tok_srv);
        server_stop(&s3rver_srv);
        return 1;
    }
    const char *sig2_args[] = {"--access-key", AK2, "--secret", SK2, "--bucket", "bkt", NULL};
    if (server_start(&sig2_srv, "s3_sigcheck_server.mjs", sig2_args) < 0) {
        fprintf(stderr, "test_s3_io: cannot start the second S3 test server\n");
        return 1;
    }
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", sig_srv.port);
    const char *proxy_args[] = {"--target", target, NULL};
    if (server_start(&proxy_srv, "s3_fault_proxy.mjs", proxy_args) < 0) {
        fprintf(stderr, "test_s3_io: cannot start the fault proxy\n");
        return 1;
    }
    RUN(test_roundtrip_odd_keys);
    RUN(test_multipart_20mib);
    RUN(test_abort_leaves_nothing);
    RUN(test_create_if_absent);
    RUN(test_list_paginated_and_delete_many);
    RUN(test_missing_and_refused);
    RUN(test_session_token);
    RUN(test_s3rver);
    RUN(test_faults_retried);
    RUN(test_faults_clean_errors);
    RUN(test_faults_never_corrupt);
    RUN(test_two_contexts_two_stores);
    RUN(test_open_sequential);
    RUN(test_plan_over_s3);
    server_stop(&sig2_srv);
    server_stop(&proxy_srv);
    server_stop(&sig_srv);
    server_stop(&tok_srv);
    server_stop(&s3rver_srv);
    return harness_finish();
}
