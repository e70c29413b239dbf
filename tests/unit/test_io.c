/* test_io.c - the local FileIO backend: publish on close, abort, create-if-absent, list,
 * direct outputs, releasing parts of a mapped input. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floe/io.h"
#include "harness.h"
#include "io/io_faults.h"
#include "io/io_internal.h"

static int count_entries(void *ctx, const floe_io_entry *e) {
    (void)e;
    (*(int *)ctx)++;
    return 0;
}

TEST(test_write_read_roundtrip) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    char *uri = floe_asprintf("file://%s/a/b/c.bin", dir);
    floe_output *o;
    REQUIRE_OK(floe_output_open(NULL, uri, NULL, &o, &err), err);
    CHECK_OK(floe_output_write(o, "hello ", 6, &err), err);
    char big[3 << 20];
    memset(big, 'x', sizeof big);
    CHECK_OK(floe_output_write(o, big, sizeof big, &err), err);
    CHECK_EQ_INT(floe_output_tell(o), 6 + (int64_t)sizeof big);
    /* not visible before close */
    bool ex = true;
    CHECK_OK(floe_io_exists(NULL, uri, &ex, &err), err);
    CHECK(!ex);
    REQUIRE_OK(floe_output_close(o, &err), err);
    CHECK_OK(floe_io_exists(NULL, uri, &ex, &err), err);
    CHECK(ex);

    floe_input *in;
    REQUIRE_OK(floe_input_open(NULL, uri, &in, &err), err);
    CHECK_EQ_INT(floe_input_size(in), 6 + (int64_t)sizeof big);
    char head[6];
    CHECK_OK(floe_input_read_at(in, 0, head, 6, &err), err);
    CHECK_EQ_MEM(head, "hello ", 6);
    /* reading past the end is a corruption error naming the file */
    CHECK_EQ_INT(floe_input_read_at(in, floe_input_size(in) - 2, head, 6, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "c.bin") != NULL);
    floe_input_close(in);
    floe_free(uri);
}

TEST(test_abort_leaves_nothing) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    char *uri = floe_asprintf("%s/x.parquet", dir);
    floe_output *o;
    REQUIRE_OK(floe_output_open(NULL, uri, NULL, &o, &err), err);
    CHECK_OK(floe_output_write(o, "abc", 3, &err), err);
    floe_output_abort(o);
    int n = 0;
    CHECK_OK(floe_io_list(NULL, dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 0);
    floe_free(uri);
}

TEST(test_no_overwrite) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    char *uri = floe_asprintf("%s/v1.metadata.json", dir);
    floe_output_options opts = {.fsync = true, .no_overwrite = true};
    CHECK_OK(floe_io_write_all(NULL, uri, "{}", 2, &opts, &err), err);
    CHECK_EQ_INT(floe_io_write_all(NULL, uri, "{1}", 3, &opts, &err), FLOE_EEXISTS);
    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK_OK(floe_io_read_all(NULL, uri, 100, &b, &err), err);
    CHECK_EQ_INT(b.len, 2);
    CHECK_EQ_INT(floe_io_read_all(NULL, uri, 1, &b, &err), FLOE_ELIMIT);
    floe_buf_free(&b);
    int n = 0;
    CHECK_OK(floe_io_list(NULL, dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 1); /* no temporary left behind */
    CHECK_OK(floe_io_delete(NULL, uri, &err), err);
    CHECK_OK(floe_io_delete(NULL, uri, &err), err); /* missing is fine */
    floe_free(uri);
}

TEST(test_paths) {
    char *p = floe_io_local_path("file:///tmp/x");
    CHECK_EQ_STR(p, "/tmp/x");
    floe_free(p);
    p = floe_io_local_path("file://data/persistent/t");
    CHECK_EQ_STR(p, "data/persistent/t");
    floe_free(p);
    CHECK(floe_io_local_path("s3://bucket/key") == NULL);
    p = floe_io_join("s3://b/t/", "/data/x.parquet");
    CHECK_EQ_STR(p, "s3://b/t/data/x.parquet");
    floe_free(p);
}

static void check_abs(const char *uri, const char *base, const char *want) {
    char *out = NULL;
    floe_error err;
    floe_error_clear(&err);
    int rc = floe_io_uri_absolute(uri, base, &out, &err);
    if (rc != 0 || strcmp(out, want))
        harness_fail(__FILE__, __LINE__, "absolute(%s, %s) = %s (%s), want %s", uri,
                     base ? base : "-", out ? out : "error", err.msg, want);
    floe_free(out);
}

TEST(test_locations_absolute) {
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd) != NULL);
    char want[4200];
    check_abs("/tmp/wh", NULL, "file:///tmp/wh");
    check_abs("file:///tmp/wh/", NULL, "file:///tmp/wh");
    check_abs("file:/tmp//wh/./x/../y", NULL, "file:///tmp/wh/y");
    check_abs("file://localhost/tmp/wh", NULL, "file:///tmp/wh");
    check_abs("/../..", NULL, "file:///");
    snprintf(want, sizeof want, "file://%s/warehouse/demo", cwd);
    check_abs("warehouse/demo", NULL, want);
    check_abs("./warehouse/demo/", NULL, want);
    check_abs("file:warehouse/demo", NULL, want);
    check_abs("file://warehouse/demo", NULL, want);
    /* against a base; characters kept as they are (no percent-encoding either way) */
    check_abs("data/t", "/srv/wh", "file:///srv/wh/data/t");
    check_abs("../other/t", "file:///srv/wh", "file:///srv/other/t");
    check_abs("a b/%41/\xc3\xa9", "/srv", "file:///srv/a b/%41/\xc3\xa9");
    check_abs("data/t", "s3://bucket/wh", "s3://bucket/wh/data/t");
    /* remote locations stay as they are */
    check_abs("s3://bucket/wh/", NULL, "s3://bucket/wh");
    check_abs("s3a://bucket/a/../b", NULL, "s3a://bucket/a/../b");
    check_abs("gs://b/x", NULL, "gs://b/x");
    CHECK(floe_io_uri_is_relative("warehouse"));
    CHECK(floe_io_uri_is_relative("file://data/persistent"));
    CHECK(!floe_io_uri_is_relative("file:///data"));
    CHECK(!floe_io_uri_is_relative("s3://b/k"));
    CHECK(floe_io_uri_has_remote_scheme("S3A://b/k"));
    CHECK(!floe_io_uri_has_remote_scheme("file:/x"));
}

TEST(test_locations_within) {
    CHECK(floe_io_uri_within("file:///wh/a/b", "/wh/a"));
    CHECK(floe_io_uri_within("/wh/a", "file:/wh/a/"));
    CHECK(!floe_io_uri_within("/wh/ab", "/wh/a"));
    CHECK(!floe_io_uri_within("/wh/a", "/wh/a/b"));
    CHECK(floe_io_uri_within("s3a://b/wh/t/data", "s3://b/wh/t"));
    CHECK(!floe_io_uri_within("s3://c/wh/t", "s3://b/wh"));
    CHECK(!floe_io_uri_within("s3://b/wh/t", "/b/wh"));
    CHECK(floe_io_uri_within("/anything", "/"));
    CHECK(floe_io_uri_within("/wh/a/../b/x", "/wh/b"));
}

TEST(test_missing_file) {
    floe_error err;
    floe_input *in = NULL;
    CHECK_EQ_INT(floe_input_open(NULL, "/nonexistent/floe/file", &in, &err), FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "/nonexistent/floe/file") != NULL);
    CHECK(in == NULL);
}

/* Pages of the first n bytes of path that are in the page cache. */
static size_t resident_pages(const char *path, size_t n) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return (size_t)-1;
    void *m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return (size_t)-1;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), np = (n + pg - 1) / pg, res = 0;
    unsigned char *vec = malloc(np);
    if (vec && mincore(m, n, vec) == 0)
        for (size_t i = 0; i < np; i++)
            res += vec[i] & 1;
    else
        res = (size_t)-1;
    free(vec);
    munmap(m, n);
    return res;
}

/* Write len pattern bytes to uri in uneven pieces (1 byte up to several MiB), so blocks
 * fill across write calls and inside them. */
static void write_pattern(const char *uri, size_t len, const floe_output_options *opts,
                          uint8_t *pat) {
    floe_error err;
    floe_error_clear(&err);
    for (size_t i = 0; i < len; i++)
        pat[i] = (uint8_t)(i * 2654435761u >> 13);
    floe_output *o;
    REQUIRE_OK(floe_output_open(NULL, uri, opts, &o, &err), err);
    static const size_t pieces[] = {1, 7, 4096, (1u << 20) + 3, 5u << 20, 333, 9u << 20, 12345};
    size_t off = 0;
    for (size_t k = 0; off < len; k++) {
        size_t n = pieces[k % (sizeof pieces / sizeof pieces[0])];
        if (n > len - off)
            n = len - off;
        CHECK_OK(floe_output_write(o, pat + off, n, &err), err);
        off += n;
    }
    CHECK_EQ_INT(floe_output_tell(o), (int64_t)len);
    REQUIRE_OK(floe_output_close(o, &err), err);
}

/* The file at uri holds exactly pat[0..len). */
static void check_bytes(const char *uri, const uint8_t *pat, size_t len) {
    size_t n = 0;
    char *got = harness_read_file(uri, &n);
    REQUIRE(got != NULL);
    CHECK_EQ_INT(n, len);
    CHECK(n == len && memcmp(got, pat, len) == 0);
    free(got);
}

/* A direct output holds the same bytes as a buffered one, whole blocks bypass the page
 * cache (where the file system takes O_DIRECT), and a small one is written as usual. */
TEST(test_direct_output) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    const size_t block = FLOE_IO_DIRECT_BLOCK, len = 2 * block + 777777 % block;
    uint8_t *pat = malloc(len);
    REQUIRE(pat != NULL);
    floe_output_options direct = {.fsync = true, .direct = true};
    floe_output_options buffered = {.fsync = true};
    char *d_uri = floe_asprintf("%s/direct.bin", dir);
    char *b_uri = floe_asprintf("%s/buffered.bin", dir);
    char *s_uri = floe_asprintf("%s/small.bin", dir);
    write_pattern(d_uri, len, &direct, pat);
    write_pattern(b_uri, len, &buffered, pat);

    /* does this file system take O_DIRECT at all? */
    char *probe = floe_asprintf("%s/probe", dir);
    int pfd = open(probe, O_WRONLY | O_CREAT | O_DIRECT, 0600);
    bool has_direct = pfd >= 0;
    if (pfd >= 0)
        close(pfd);
    unlink(probe);
    floe_free(probe);
    size_t pages = 2 * block / (size_t)sysconf(_SC_PAGESIZE);
    size_t d_res = resident_pages(d_uri, 2 * block), b_res = resident_pages(b_uri, 2 * block);
    CHECK(b_res > pages / 2); /* just written through the page cache */
    if (has_direct)
        CHECK(d_res < pages / 16);
    else
        fprintf(stderr, "  (no O_DIRECT in %s: page cache residency not checked)\n", dir);

    check_bytes(d_uri, pat, len);

    /* smaller than a block: never direct, same bytes */
    write_pattern(s_uri, 100000, &direct, pat);
    check_bytes(s_uri, pat, 100000);
    int count = 0;
    CHECK_OK(floe_io_list(NULL, dir, count_entries, &count, &err), err);
    CHECK_EQ_INT(count, 3); /* no temporaries left */
    floe_free(d_uri);
    floe_free(b_uri);
    floe_free(s_uri);
    free(pat);
}

/* A failed direct write is an error naming the file, and the aborted output leaves
 * nothing behind. Full blocks are written asynchronously, so the failure of the second
 * block is reported by the write that fills the third one (or by close, see below). */
TEST(test_direct_output_write_fault) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    char *uri = floe_asprintf("%s/x.parquet", dir);
    const size_t block = FLOE_IO_DIRECT_BLOCK, piece = block + block / 8;
    size_t len = 3 * piece;
    uint8_t *p = calloc(1, len);
    REQUIRE(p != NULL);
    floe_output_options direct = {.fsync = true, .direct = true};
    floe_output *o;
    REQUIRE_OK(floe_output_open(NULL, uri, &direct, &o, &err), err);
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_WRITE, 2, ENOSPC);
    CHECK_OK(floe_output_write(o, p, piece, &err), err); /* block 1 */
    CHECK_OK(floe_output_write(o, p, piece, &err), err); /* block 2: fails */
    CHECK_EQ_INT(floe_output_write(o, p, piece, &err), FLOE_ENOSPACE);
    CHECK(strstr(err.msg, "x.parquet") != NULL);
    floe_io_fault_clear(NULL);
    floe_output_abort(o);
    int n = 0;
    CHECK_OK(floe_io_list(NULL, dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 0);

    /* the failure of the last full block surfaces at close, and nothing is published */
    REQUIRE_OK(floe_output_open(NULL, uri, &direct, &o, &err), err);
    floe_io_fault_inject(NULL, FLOE_IO_FAULT_WRITE, 1, EIO);
    CHECK_OK(floe_output_write(o, p, block, &err), err);
    CHECK_EQ_INT(floe_output_close(o, &err), FLOE_EIO);
    CHECK(strstr(err.msg, "x.parquet") != NULL);
    floe_io_fault_clear(NULL);
    n = 0;
    CHECK_OK(floe_io_list(NULL, dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 0);
    floe_free(uri);
    free(p);
}

/* A direct block write refused with EINVAL after the open (a file system that takes
 * O_DIRECT but not these writes) is redone through the page cache: same bytes, no
 * error, and the rest of the file is written buffered. */
TEST(test_direct_output_refused_write) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    const size_t len = 3 * FLOE_IO_DIRECT_BLOCK + 4321;
    uint8_t *pat = malloc(len);
    REQUIRE(pat != NULL);
    char *uri = floe_asprintf("%s/refused.bin", dir);
    floe_output_options direct = {.fsync = true, .direct = true};
    floe_io_fault_inject_once(NULL, FLOE_IO_FAULT_WRITE, 2, EINVAL); /* the second block */
    write_pattern(uri, len, &direct, pat);
    floe_io_fault_clear(NULL);
    check_bytes(uri, pat, len);
    floe_free(uri);
    free(pat);
}

/* Resident bytes of this process's mapping that starts at addr (/proc/self/smaps), or -1. */
static long long mapping_rss(const void *addr) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    bool in = false;
    long long rss = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            in = (uintptr_t)lo == (uintptr_t)addr;
            continue;
        }
        long long kb;
        if (in && sscanf(line, "Rss: %lld kB", &kb) == 1) {
            rss = kb * 1024;
            break;
        }
    }
    fclose(f);
    return rss;
}

/* Releasing a range of a mapped input drops every page of the 2 MiB blocks of the file it
 * touches (a fault maps a large folio, or the fault-around window, beyond the range it
 * needs) and nothing else; the view still reads the file afterwards. */
TEST(test_mmap_release_whole_blocks) {
    floe_error err;
    floe_error_clear(&err);
    const size_t mib = (size_t)1 << 20, len = 8 * mib;
    uint8_t *pat = malloc(len);
    REQUIRE(pat != NULL);
    char *uri = floe_asprintf("%s/mapped.bin", harness_tmpdir());
    floe_output_options opts = {.fsync = false};
    write_pattern(uri, len, &opts, pat);
    floe_input *in = NULL;
    REQUIRE_OK(floe_input_open(NULL, uri, &in, &err), err);
    const uint8_t *m = NULL;
    REQUIRE_OK(floe_input_mmap(in, &m, &err), err);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i += pg)
        sum += ((const volatile uint8_t *)m)[i];
    (void)sum;
    long long all = mapping_rss(m);
    REQUIRE(all >= 0);
    CHECK(all == (long long)len);
    /* 10,000 bytes inside [2, 4) MiB: that whole block goes */
    floe_input_mmap_release(in, (int64_t)(2 * mib + 5000), 10000);
    CHECK_EQ_INT(mapping_rss(m), (long long)(6 * mib));
    /* a range across the boundary at 6 MiB: both blocks around it go */
    floe_input_mmap_release(in, (int64_t)(6 * mib - 100), 200);
    CHECK_EQ_INT(mapping_rss(m), (long long)(2 * mib));
    /* released pages read the file again */
    CHECK(m[2 * mib + 5000] == pat[2 * mib + 5000] && m[len - 1] == pat[len - 1]);
    CHECK(!floe_input_mmap_shrank(in));
    floe_input_close(in);
    floe_free(uri);
    free(pat);
}

/* S3 credentials go into HTTP headers: one holding a CR or LF (a stray line break in a
 * variable or a property, or one a server put there) would start a header of its own. They
 * are refused with the name of the variable or property, never the value. */
static const char *const *cred_env;

static const char *cred_lookup(void *ctx, const char *name) {
    (void)ctx;
    for (size_t i = 0; cred_env[i]; i += 2)
        if (!strcmp(cred_env[i], name))
            return cred_env[i + 1];
    if (!strcmp(name, "AWS_CONFIG_FILE") || !strcmp(name, "AWS_SHARED_CREDENTIALS_FILE"))
        return "/nonexistent";
    return NULL;
}

static void env_refused(const char *const *env, const char *name) {
    floe_io_options o;
    floe_io_options_init(&o);
    floe_error err;
    floe_error_clear(&err);
    cred_env = env;
    CHECK_EQ_INT(floe_io_options_from_env(&o, cred_lookup, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, name) != NULL && strstr(err.msg, "control character") != NULL);
    CHECK(strstr(err.msg, "s3kr1t") == NULL); /* no value */
    floe_io_options_free(&o);
}

TEST(test_s3_credentials_control_chars) {
    const char *tok[] = {"AWS_ACCESS_KEY_ID", "AK", "AWS_SECRET_ACCESS_KEY", "s3kr1t",
                         "AWS_SESSION_TOKEN", "tok\r\nx-amz-injected: 1", NULL};
    env_refused(tok, "AWS_SESSION_TOKEN");
    const char *ak[] = {"AWS_ACCESS_KEY_ID", "AK\n", "AWS_SECRET_ACCESS_KEY", "s3kr1t", NULL};
    env_refused(ak, "AWS_ACCESS_KEY_ID");
    const char *sk[] = {"AWS_ACCESS_KEY_ID", "AK", "AWS_SECRET_ACCESS_KEY", "s3kr1t\x7f", NULL};
    env_refused(sk, "AWS_SECRET_ACCESS_KEY");
    const char *fine[] = {"AWS_ACCESS_KEY_ID", "AK", "AWS_SECRET_ACCESS_KEY", "s3kr1t",
                          "AWS_SESSION_TOKEN", "FQoGZXIvYXdz/token+with=chars", NULL};
    floe_io_options o;
    floe_io_options_init(&o);
    floe_error err;
    floe_error_clear(&err);
    cred_env = fine;
    CHECK_OK(floe_io_options_from_env(&o, cred_lookup, NULL, &err), err);
    /* the same as catalog properties (s3.session-token: vended or configured) */
    floe_s3_properties p = {0};
    const char *v = "tok\nx-amz-injected: 1";
    REQUIRE(floe_s3_properties_take(&p, "s3.session-token", 16, v, strlen(v), &err) == 1);
    CHECK_EQ_INT(floe_io_options_apply_s3(&o, &p, "catalog lake", &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "catalog lake: s3.session-token holds a control character") != NULL);
    floe_s3_properties_reset(&p);
    floe_io_options_free(&o);
    /* a profile in a credentials file */
    char *cred = floe_asprintf("%s/credentials", harness_tmpdir());
    FILE *f = fopen(cred, "w");
    REQUIRE(f != NULL);
    fputs("[default]\naws_access_key_id = AK\naws_secret_access_key = s3kr1t\n"
          "aws_session_token = a\rb\n", f);
    fclose(f);
    const char *prof[] = {"AWS_SHARED_CREDENTIALS_FILE", cred, NULL};
    env_refused(prof, "aws_session_token");
    floe_free(cred);
}

int main(void) {
    RUN(test_write_read_roundtrip);
    RUN(test_abort_leaves_nothing);
    RUN(test_no_overwrite);
    RUN(test_paths);
    RUN(test_locations_absolute);
    RUN(test_locations_within);
    RUN(test_missing_file);
    RUN(test_direct_output);
    RUN(test_direct_output_write_fault);
    RUN(test_direct_output_refused_write);
    RUN(test_mmap_release_whole_blocks);
    RUN(test_s3_credentials_control_chars);
    return harness_finish();
}
