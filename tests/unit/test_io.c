/* test_io.c - the local FileIO backend: publish on close, abort, create-if-absent, list. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floe/io.h"
#include "harness.h"

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
    REQUIRE_OK(floe_output_open(uri, NULL, &o, &err), err);
    CHECK_OK(floe_output_write(o, "hello ", 6, &err), err);
    char big[3 << 20];
    memset(big, 'x', sizeof big);
    CHECK_OK(floe_output_write(o, big, sizeof big, &err), err);
    CHECK_EQ_INT(floe_output_tell(o), 6 + (int64_t)sizeof big);
    /* not visible before close */
    bool ex = true;
    CHECK_OK(floe_io_exists(uri, &ex, &err), err);
    CHECK(!ex);
    REQUIRE_OK(floe_output_close(o, &err), err);
    CHECK_OK(floe_io_exists(uri, &ex, &err), err);
    CHECK(ex);

    floe_input *in;
    REQUIRE_OK(floe_input_open(uri, &in, &err), err);
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
    REQUIRE_OK(floe_output_open(uri, NULL, &o, &err), err);
    CHECK_OK(floe_output_write(o, "abc", 3, &err), err);
    floe_output_abort(o);
    int n = 0;
    CHECK_OK(floe_io_list(dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 0);
    floe_free(uri);
}

TEST(test_no_overwrite) {
    floe_error err;
    floe_error_clear(&err);
    const char *dir = harness_tmpdir();
    char *uri = floe_asprintf("%s/v1.metadata.json", dir);
    floe_output_options opts = {.fsync = true, .no_overwrite = true};
    CHECK_OK(floe_io_write_all(uri, "{}", 2, &opts, &err), err);
    CHECK_EQ_INT(floe_io_write_all(uri, "{1}", 3, &opts, &err), FLOE_EEXISTS);
    floe_buf b;
    floe_buf_init(&b, 0);
    CHECK_OK(floe_io_read_all(uri, 100, &b, &err), err);
    CHECK_EQ_INT(b.len, 2);
    CHECK_EQ_INT(floe_io_read_all(uri, 1, &b, &err), FLOE_ELIMIT);
    floe_buf_free(&b);
    int n = 0;
    CHECK_OK(floe_io_list(dir, count_entries, &n, &err), err);
    CHECK_EQ_INT(n, 1); /* no temporary left behind */
    CHECK_OK(floe_io_delete(uri, &err), err);
    CHECK_OK(floe_io_delete(uri, &err), err); /* missing is fine */
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

TEST(test_missing_file) {
    floe_error err;
    floe_input *in = NULL;
    CHECK_EQ_INT(floe_input_open("/nonexistent/floe/file", &in, &err), FLOE_ENOTFOUND);
    CHECK(strstr(err.msg, "/nonexistent/floe/file") != NULL);
    CHECK(in == NULL);
}

int main(void) {
    RUN(test_write_read_roundtrip);
    RUN(test_abort_leaves_nothing);
    RUN(test_no_overwrite);
    RUN(test_paths);
    RUN(test_missing_file);
    return harness_finish();
}
