/*
 * test_manifest_fast.c - the streaming manifest-entry decoder (src/iceberg/manifest_fast.c)
 * against the generic value-tree path, entry for entry: every manifest under the shared
 * conformance tables (Spark, Java, PyIceberg, DuckDB and others as written), the same
 * manifests re-encoded without compression and then truncated and bit-flipped (so the
 * hostile bytes reach the decoders instead of stopping at the codec), and shapes the
 * streaming path leaves to the generic one.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "floe/avro.h"
#include "floe/manifest.h"
#include "harness.h"
#include "iceberg/manifest_fast.h"

typedef struct avro_list {
    char **paths;
    size_t n, cap;
} avro_list;

static void collect(const char *dir, avro_list *l) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            collect(p, l);
            free(p);
        } else if (n > 6 && strcmp(p + strlen(p) - 5, ".avro") == 0) {
            if (l->n == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 64;
                l->paths = realloc(l->paths, l->cap * sizeof *l->paths);
            }
            l->paths[l->n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
}

static void list_free(avro_list *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
}

/* Re-encode an Avro container without compression, schema and metadata kept. */
static int uncompressed_copy(const uint8_t *p, size_t n, floe_buf *out) {
    floe_avro_reader *r = NULL;
    floe_avro_writer *w = NULL;
    floe_error err;
    int rc = -1;
    floe_avro_meta meta[64];
    size_t nmeta = 0;
    if (floe_avro_reader_open_mem(p, n, NULL, &r, &err) < 0)
        return -1;
    for (size_t i = 0; i < floe_avro_reader_meta_count(r) && nmeta < 64; i++) {
        const char *k;
        const void *v;
        size_t len;
        floe_avro_reader_meta_at(r, i, &k, &v, &len);
        if (strncmp(k, "avro.", 5) != 0)
            meta[nmeta++] = (floe_avro_meta){k, v, len};
    }
    static const uint8_t sync[16] = "fastpath-sync-16";
    floe_avro_writer_options o = {.codec = FLOE_CODEC_UNCOMPRESSED, .sync = sync,
                                  .meta = meta, .n_meta = nmeta, .block_records = 7};
    if (floe_avro_writer_open(floe_avro_reader_writer_schema(r), &o, out, &w, &err) < 0)
        goto done;
    const floe_avro_value *v;
    int k;
    while ((k = floe_avro_reader_next(r, &v, &err)) == 1)
        if (floe_avro_writer_append(w, v, &err) < 0)
            goto done;
    if (k < 0)
        goto done;
    rc = floe_avro_writer_close(w, &err);
    w = NULL;
done:
    floe_avro_writer_abort(w);
    floe_avro_reader_close(r);
    return rc;
}

/* Every manifest in the conformance tables: the streaming path is used and gives exactly
 * the generic path's entries. */
TEST(conformance_same_entries) {
    const char *root = harness_conformance("iceberg");
    avro_list l = {0};
    collect(root, &l);
    REQUIRE(l.n > 0);
    size_t manifests = 0, fast = 0;
    int64_t entries = 0;
    for (size_t i = 0; i < l.n; i++) {
        size_t n;
        char *p = harness_read_file(l.paths[i], &n);
        REQUIRE(p);
        floe_mf_diff d;
        floe_mf_differential(p, n, &d);
        if (d.opened && strstr(l.paths[i], "/482c51b1-71ea-4508-b282-e2d753a5ef36-m0.avro")) {
            /* a snapshot id past the signed 64-bit range: both decoders refuse it */
            if (d.generic_rc != FLOE_ECORRUPT || d.fast_rc != FLOE_ECORRUPT || d.mismatch)
                harness_fail(__FILE__, __LINE__, "%s: generic %d, streaming %d, %s", l.paths[i],
                             d.generic_rc, d.fast_rc, d.why);
            free(p);
            continue;
        }
        if (d.opened) {
            manifests++;
            fast += d.fast;
            entries += d.entries;
            if (!d.fast)
                harness_fail(__FILE__, __LINE__, "%s: read by the generic path only",
                             l.paths[i]);
            if (d.mismatch)
                harness_fail(__FILE__, __LINE__, "%s: %s", l.paths[i], d.why);
            CHECK_EQ_INT(d.generic_rc, d.fast_rc);

            /* the same file without compression, in small blocks */
            floe_buf u;
            floe_buf_init(&u, 0);
            if (uncompressed_copy((const uint8_t *)p, n, &u) == 0) {
                floe_mf_diff d2;
                floe_mf_differential(u.data, u.len, &d2);
                CHECK(d2.opened && d2.fast && !d2.mismatch);
                CHECK_EQ_INT(d2.entries, d.entries);
            } else {
                harness_fail(__FILE__, __LINE__, "%s: cannot re-encode", l.paths[i]);
            }
            floe_buf_free(&u);
        }
        free(p);
    }
    printf("  %zu manifests (%zu on the streaming path), %lld entries compared\n", manifests,
           fast, (long long)entries);
    /* INDEX.md lists dozens of tables: a handful would mean the walk went wrong */
    CHECK(manifests >= 20);
    CHECK(entries >= 40);
    list_free(&l);
}

/* Hostile bytes: truncations and flips of uncompressed manifests never crash either path
 * (ASan watches), and wherever both return an entry they return the same one; the
 * streaming path never refuses an entry the generic path reads. */
TEST(hostile_bytes_agree) {
    const char *root = harness_conformance("iceberg");
    avro_list l = {0};
    collect(root, &l);
    uint64_t seed = 0x9e3779b97f4a7c15u;
    size_t tried = 0, both_ok = 0;
    for (size_t i = 0; i < l.n; i++) {
        size_t n;
        char *p = harness_read_file(l.paths[i], &n);
        REQUIRE(p);
        floe_mf_diff d;
        floe_mf_differential(p, n, &d);
        floe_buf u;
        floe_buf_init(&u, 0);
        if (d.opened && uncompressed_copy((const uint8_t *)p, n, &u) == 0) {
            uint8_t *m = malloc(u.len);
            REQUIRE(m);
            for (int t = 0; t < 80; t++) {
                memcpy(m, u.data, u.len);
                size_t len = u.len;
                if (t % 4 == 0) {
                    len = (size_t)(harness_xorshift64(&seed) % u.len);
                } else {
                    /* flip 1-3 bytes after the header's first 64 bytes */
                    int flips = 1 + (int)(harness_xorshift64(&seed) % 3);
                    for (int k = 0; k < flips && u.len > 64; k++)
                        m[64 + harness_xorshift64(&seed) % (u.len - 64)] ^=
                            (uint8_t)(1u << (harness_xorshift64(&seed) % 8));
                }
                /* an exact-size copy, so an over-read is an ASan report */
                uint8_t *x = malloc(len ? len : 1);
                memcpy(x, m, len);
                floe_mf_diff h;
                floe_mf_differential(x, len, &h);
                if (h.mismatch)
                    harness_fail(__FILE__, __LINE__, "%s mutation %d: %s", l.paths[i], t,
                                 h.why);
                both_ok += h.entries > 0;
                tried++;
                free(x);
            }
            free(m);
        }
        floe_buf_free(&u);
        free(p);
    }
    printf("  %zu mutated manifests, %zu with entries both paths read\n", tried, both_ok);
    CHECK(tried >= 1000);
    CHECK(both_ok > 0);
    list_free(&l);
}

/* A one-entry manifest of the given data_file schema fields: file_path, file_format,
 * record_count, file_size_in_bytes and then `extra` (one more field, field id 109,
 * value_counts), whose value is set by fill. */
static void one_entry(const char *extra, void (*fill)(floe_avro_value *, floe_arena *),
                      floe_buf *out) {
    char schema[2048];
    snprintf(schema, sizeof schema,
             "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
             "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
             "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\","
             "\"name\":\"r2\",\"fields\":["
             "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
             "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
             "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
             "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
             "{\"name\":\"value_counts\",\"type\":%s,\"field-id\":109}]}}]}",
             extra);
    floe_error err;
    floe_avro_schema *s = NULL;
    REQUIRE(floe_avro_schema_parse(schema, strlen(schema), &s, &err) == 0);
    floe_avro_writer *w = NULL;
    REQUIRE(floe_avro_writer_open(s, NULL, out, &w, &err) == 0);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_avro_value rec, *df;
    REQUIRE(floe_avro_set_record(&rec, &a, 2) == 0);
    floe_avro_set_int(&rec.u.list.items[0], 1);
    df = &rec.u.list.items[1];
    REQUIRE(floe_avro_set_record(df, &a, 5) == 0);
    floe_avro_set_string(&df->u.list.items[0], "s3://b/x.parquet");
    floe_avro_set_string(&df->u.list.items[1], "PARQUET");
    floe_avro_set_long(&df->u.list.items[2], 7);
    floe_avro_set_long(&df->u.list.items[3], 700);
    fill(&df->u.list.items[4], &a);
    CHECK(floe_avro_writer_append(w, &rec, &err) == 0);
    CHECK(floe_avro_writer_close(w, &err) == 0);
    floe_arena_reset(&a);
    floe_avro_schema_free(s);
}

static void fill_avro_map(floe_avro_value *v, floe_arena *a) {
    if (floe_avro_set_map(v, a, 1) < 0)
        return;
    v->u.map.entries[0].key = "3";
    v->u.map.entries[0].key_len = 1;
    floe_avro_set_long(&v->u.map.entries[0].value, 5);
    floe_avro_set_branch(v, 1);
}

static void fill_empty_array(floe_avro_value *v, floe_arena *a) {
    (void)floe_avro_set_array(v, a, 0);
}

/* Metric maps written as Avro maps (string keys) are read by the streaming path too. */
TEST(avro_map_metrics) {
    floe_buf out;
    floe_buf_init(&out, 0);
    one_entry("[\"null\",{\"type\":\"map\",\"values\":\"long\"}]", fill_avro_map, &out);
    floe_error err;
    floe_manifest_reader *r = NULL;
    REQUIRE(floe_manifest_reader_open_mem(out.data, out.len, "map.avro", NULL, &r, &err) == 0);
    CHECK(floe_mf_reader_is_fast(r));
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_STR(e->file.file_path, "s3://b/x.parquet");
    CHECK(e->file.value_counts.present && e->file.value_counts.n == 1);
    CHECK_EQ_INT(e->file.value_counts.items[0].field_id, 3);
    CHECK_EQ_INT(e->file.value_counts.items[0].value, 5);
    CHECK_EQ_INT(floe_manifest_reader_next(r, &e, &err), 0);
    floe_manifest_reader_close(r);

    floe_mf_diff d;
    floe_mf_differential(out.data, out.len, &d);
    CHECK(d.opened && d.fast && !d.mismatch && d.entries == 1);
    floe_buf_free(&out);
}

/* A shape the streaming path leaves alone (map items of three fields) goes to the
 * generic path, which reads the file as before. */
TEST(odd_shape_falls_back) {
    floe_buf out;
    floe_buf_init(&out, 0);
    one_entry("{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"kv3\","
              "\"fields\":[{\"name\":\"key\",\"type\":\"int\"},"
              "{\"name\":\"value\",\"type\":\"long\"},"
              "{\"name\":\"extra\",\"type\":\"long\"}]}}",
              fill_empty_array, &out);
    floe_error err;
    floe_manifest_reader *r = NULL;
    REQUIRE(floe_manifest_reader_open_mem(out.data, out.len, "kv3.avro", NULL, &r, &err) == 0);
    CHECK(!floe_mf_reader_is_fast(r));
    const floe_manifest_entry *e;
    REQUIRE(floe_manifest_reader_next(r, &e, &err) == 1);
    CHECK_EQ_INT(e->file.record_count, 7);
    CHECK(e->file.value_counts.present && e->file.value_counts.n == 0);
    floe_manifest_reader_close(r);
    floe_mf_diff d;
    floe_mf_differential(out.data, out.len, &d);
    CHECK(d.opened && !d.fast && !d.mismatch && d.entries == 1);
    floe_buf_free(&out);
}

/* The comparison itself notices a difference (or the tests above could not fail). */
TEST(diff_notices) {
    floe_value pa = floe_value_int(1), pb = floe_value_int(2);
    floe_manifest_entry a = {.status = FLOE_ENTRY_ADDED};
    a.file.file_path = "x";
    a.file.file_format = "parquet";
    a.file.partition = &pa;
    a.file.npartition = 1;
    floe_manifest_entry b = a;
    char why[64];
    CHECK_EQ_INT(floe_mf_entry_diff(&a, &b, why, sizeof why), 0);
    b.file.partition = &pb;
    CHECK_EQ_INT(floe_mf_entry_diff(&a, &b, why, sizeof why), 1);
    CHECK_EQ_STR(why, "partition differs");
    b = a;
    floe_column_count c1 = {5, 10}, c2 = {5, 11};
    a.file.value_counts = (floe_count_map){.present = true, .items = &c1, .n = 1};
    b.file.value_counts = (floe_count_map){.present = true, .items = &c2, .n = 1};
    CHECK_EQ_INT(floe_mf_entry_diff(&a, &b, why, sizeof why), 1);
    CHECK_EQ_STR(why, "value_counts differs");
}

/* Every manifest list in the conformance tables (and their uncompressed, truncated and
 * bit-flipped copies): the streaming list decoder reads what the generic one reads, record
 * for record, and never refuses a list the generic one reads. */
TEST(lists_same_files) {
    const char *root = harness_conformance("iceberg");
    avro_list l = {0};
    collect(root, &l);
    REQUIRE(l.n > 0);
    size_t lists = 0, files = 0, mutated = 0;
    uint64_t seed = 0x2545f4914f6cdd1du;
    for (size_t i = 0; i < l.n; i++) {
        size_t n;
        char *p = harness_read_file(l.paths[i], &n);
        REQUIRE(p);
        floe_ml_diff d;
        floe_ml_differential(p, n, &d);
        if (d.generic_rc == 0) {
            lists++;
            files += d.files;
            if (!d.fast)
                harness_fail(__FILE__, __LINE__, "%s: read by the generic path only",
                             l.paths[i]);
            if (d.mismatch)
                harness_fail(__FILE__, __LINE__, "%s: %s", l.paths[i], d.why);
            floe_buf u;
            floe_buf_init(&u, 0);
            REQUIRE(uncompressed_copy((const uint8_t *)p, n, &u) == 0);
            floe_ml_diff d2;
            floe_ml_differential(u.data, u.len, &d2);
            CHECK(d2.generic_rc == 0 && d2.fast && !d2.mismatch);
            CHECK_EQ_INT(d2.files, d.files);
            for (int t = 0; t < 40 && u.len > 64; t++, mutated++) {
                size_t len = u.len;
                uint8_t *x = malloc(len);
                memcpy(x, u.data, len);
                if (t % 4 == 0)
                    len = (size_t)(harness_xorshift64(&seed) % u.len);
                else
                    x[64 + harness_xorshift64(&seed) % (u.len - 64)] ^=
                        (uint8_t)(1u << (harness_xorshift64(&seed) % 8));
                floe_ml_diff h;
                floe_ml_differential(x, len, &h);
                if (h.mismatch)
                    harness_fail(__FILE__, __LINE__, "%s mutation %d: %s", l.paths[i], t,
                                 h.why);
                free(x);
            }
            floe_buf_free(&u);
        } else {
            CHECK(!d.mismatch);
        }
        free(p);
    }
    printf("  %zu manifest lists, %zu manifest_file records compared, %zu mutations\n", lists,
           files, mutated);
    CHECK(lists >= 20);
    CHECK(files >= 20);
    list_free(&l);
}

/* Lists floe writes (v1, v2, v3 schemas; summaries with and without bounds and NaN flags,
 * several blocks): both decoders give the same records. */
TEST(lists_floe_writes) {
    floe_field_summary sums[3] = {
        {.contains_null = true},
        {.contains_null = false, .has_contains_nan = true, .contains_nan = true,
         .has_lower = true, .lower_bound = (const uint8_t *)"\x01\0\0\0", .lower_len = 4,
         .has_upper = true, .upper_bound = (const uint8_t *)"\x09\0\0\0", .upper_len = 4},
        {.contains_null = false, .has_lower = true, .lower_bound = (const uint8_t *)"",
         .lower_len = 0},
    };
    enum { NF = 3000 };
    floe_manifest_file *mfs = calloc(NF, sizeof *mfs);
    char(*paths)[64] = calloc(NF, sizeof *paths);
    REQUIRE(mfs && paths);
    for (size_t i = 0; i < NF; i++) {
        snprintf(paths[i], sizeof paths[i], "s3://b/t/metadata/m%05zu.avro", i);
        floe_manifest_file *m = &mfs[i];
        m->manifest_path = paths[i];
        m->manifest_length = 1000 + (int64_t)i;
        m->partition_spec_id = (int32_t)(i % 3);
        m->content = i % 7 == 0 ? FLOE_MANIFEST_DELETES : FLOE_MANIFEST_DATA;
        m->sequence_number = m->min_sequence_number = 1 + (int64_t)(i % 5);
        m->has_added_snapshot_id = true;
        m->added_snapshot_id = 77;
        m->added_files_count = (int64_t)i;
        m->existing_files_count = m->deleted_files_count = 1;
        m->added_rows_count = m->existing_rows_count = m->deleted_rows_count = 2;
        m->has_partitions = i % 4 != 0;
        m->partitions = sums;
        m->npartitions = i % 4;
    }
    for (int fv = 1; fv <= 2; fv++) {
        char lpath[512];
        snprintf(lpath, sizeof lpath, "%s/list-fast-v%d.avro", harness_tmpdir(), fv);
        floe_manifest_list_write_options lo;
        floe_manifest_list_write_options_init(&lo);
        lo.snapshot_id = 77;
        lo.sequence_number = 9;
        lo.format_version = fv;
        floe_error err;
        floe_error_clear(&err);
        if (floe_manifest_list_write(NULL, lpath, &lo, mfs, NF, NULL, NULL, &err) < 0) {
            harness_fail(__FILE__, __LINE__, "v%d: %s", fv, err.msg);
            continue;
        }
        size_t n;
        char *p = harness_read_file(lpath, &n);
        REQUIRE(p);
        floe_ml_diff d;
        floe_ml_differential(p, n, &d);
        CHECK(d.fast);
        CHECK_EQ_INT(d.generic_rc, 0);
        CHECK_EQ_INT(d.fast_rc, 0);
        if (d.mismatch)
            harness_fail(__FILE__, __LINE__, "v%d: %s", fv, d.why);
        CHECK_EQ_INT(d.files, NF);
        free(p);
    }
    free(mfs);
    free(paths);
}

/* A one-record list. */
TEST(list_diff_notices) {
    floe_manifest_file m = {.manifest_path = "s3://b/m.avro", .manifest_length = 10};
    char path[512];
    snprintf(path, sizeof path, "%s/list-one.avro", harness_tmpdir());
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = 5;
    lo.sequence_number = 1;
    m.sequence_number = m.min_sequence_number = 1;
    m.has_added_snapshot_id = true;
    m.added_snapshot_id = 5;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE(floe_manifest_list_write(NULL, path, &lo, &m, 1, NULL, NULL, &err) == 0);
    size_t n;
    char *p = harness_read_file(path, &n);
    REQUIRE(p);
    floe_ml_diff d;
    floe_ml_differential(p, n, &d);
    CHECK(d.fast && !d.mismatch);
    CHECK_EQ_INT(d.files, 1);
    free(p);
}

int main(void) {
    RUN(conformance_same_entries);
    RUN(hostile_bytes_agree);
    RUN(avro_map_metrics);
    RUN(odd_shape_falls_back);
    RUN(diff_notices);
    RUN(lists_same_files);
    RUN(lists_floe_writes);
    RUN(list_diff_notices);
    return harness_finish();
}
