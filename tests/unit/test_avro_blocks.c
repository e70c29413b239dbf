/*
 * test_avro_blocks.c - Avro arrays and maps split into many blocks (Avro 1.11 "Binary
 * Encoding": "Arrays are encoded as a series of blocks"). A writer may put every item in
 * a block of its own; reading such a value must cost memory and time linear in its
 * items, in the generic reader (src/avro), in manifest lists (which it reads) and in the
 * streaming manifest decoder (src/iceberg/manifest_fast.c).
 *
 * Each file is one record holding N one-item blocks, sized 8, 16 and 32 KB. Each is read
 * in a forked child whose peak resident set is measured (harness_child_peak_kib); the
 * child also checks every item it read, in order.
 */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "floe/avro.h"
#include "floe/manifest.h"
#include "harness.h"
#include "iceberg/manifest_fast.h"

static const uint8_t test_sync[16] = "blocks-test-sync";

/* Peak resident growth allowed for reading one of these files (KiB). Linear decoding
 * takes well under 10 MiB even under ASan; copying every earlier item at each block took
 * 190 MB at 8 KB and 3 GB at 32 KB. */
#define PEAK_LIMIT_KIB (48 * 1024)

typedef void (*item_fn)(floe_buf *b, size_t i);

/* One record: head[0..nhead), then an array or map of one-item blocks (item(b, i) encodes
 * item i) until the file reaches about `size` bytes, then the end of the array and tail.
 * Returns the number of items. */
static size_t one_item_blocks(const char *schema_json, const floe_avro_meta *meta,
                              size_t nmeta, const uint8_t *head, size_t nhead, item_fn item,
                              const uint8_t *tail, size_t ntail, size_t size, floe_buf *out) {
    floe_avro_schema *s = NULL;
    floe_error err;
    floe_buf_init(out, 0);
    if (floe_avro_schema_parse(schema_json, strlen(schema_json), &s, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
        return 0;
    }
    floe_avro_writer_options wo = {.sync = test_sync, .meta = meta, .n_meta = nmeta};
    floe_avro_writer *w = NULL;
    if (floe_avro_writer_open(s, &wo, out, &w, &err) < 0 ||
        floe_avro_writer_close(w, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "header: %s", err.msg);
        floe_avro_schema_free(s);
        return 0;
    }
    floe_avro_schema_free(s);
    floe_buf data;
    floe_buf_init(&data, 0);
    floe_buf_append(&data, head, nhead);
    size_t n = 0;
    while (out->len + data.len + 40 < size) {
        floe_avro_encode_long(&data, 1);
        item(&data, n++);
    }
    floe_avro_encode_long(&data, 0);
    floe_buf_append(&data, tail, ntail);
    floe_avro_encode_long(out, 1); /* records in the block */
    floe_avro_encode_long(out, (int64_t)data.len);
    floe_buf_append(out, data.data, data.len);
    floe_buf_append(out, test_sync, 16);
    floe_buf_free(&data);
    return n;
}

typedef struct case_in {
    const floe_buf *file;
    size_t n;
    bool generic; /* manifests: the value-tree decoder instead of the streaming one */
} case_in;

/* Run read(c) in a child for files of 8, 16 and 32 KB built by make. */
static void each_size(size_t (*make)(size_t size, floe_buf *out), int (*read)(void *),
                      bool generic, const char *what) {
    static const size_t kib[] = {8, 16, 32};
    for (size_t k = 0; k < sizeof kib / sizeof kib[0]; k++) {
        floe_buf f;
        size_t n = make(kib[k] * 1024, &f);
        if (n < kib[k] * 1024 / 16) {
            floe_buf_free(&f);
            harness_fail(__FILE__, __LINE__, "%s: only %zu items", what, n);
            return;
        }
        case_in c = {&f, n, generic};
        long long peak = -1;
        int rc = harness_child_peak_kib(read, &c, PEAK_LIMIT_KIB, &peak);
        printf("  %s, %zu KB, %zu one-item blocks: peak +%lld KiB\n", what, kib[k], n, peak);
        CHECK_EQ_INT(rc, 0);
        if (peak > PEAK_LIMIT_KIB)
            harness_fail(__FILE__, __LINE__, "%s, %zu KB: peak +%lld KiB, over %d KiB", what,
                         kib[k], peak, PEAK_LIMIT_KIB);
        floe_buf_free(&f);
        if (peak > PEAK_LIMIT_KIB)
            return; /* larger files only cost more */
    }
}

/* ---- the generic reader: arrays, maps, arrays of arrays --------------------------------- */

/* Item i of an array: a one-byte long, so an 8 KB file holds 4000 one-item blocks. */
static int64_t small(size_t i) { return (int64_t)(i % 64); }

static void long_item(floe_buf *b, size_t i) { floe_avro_encode_long(b, small(i)); }

static void map_item(floe_buf *b, size_t i) {
    char key[24];
    int kl = snprintf(key, sizeof key, "%zu", i);
    floe_avro_encode_bytes(b, key, (size_t)kl);
    floe_avro_encode_long(b, (int64_t)i);
}

/* An inner array of two one-item blocks: [small(i), -small(i)]. */
static void nested_item(floe_buf *b, size_t i) {
    floe_avro_encode_long(b, 1);
    floe_avro_encode_long(b, small(i));
    floe_avro_encode_long(b, 1);
    floe_avro_encode_long(b, -small(i));
    floe_avro_encode_long(b, 0);
}

static const uint8_t tail_7[] = {0x0e}; /* long 7 after the container */

static size_t make_array(size_t size, floe_buf *out) {
    return one_item_blocks("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                           "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"long\"}},"
                           "{\"name\":\"t\",\"type\":\"long\"}]}",
                           NULL, 0, NULL, 0, long_item, tail_7, 1, size, out);
}

static size_t make_map(size_t size, floe_buf *out) {
    return one_item_blocks("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                           "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
                           "{\"name\":\"t\",\"type\":\"long\"}]}",
                           NULL, 0, NULL, 0, map_item, tail_7, 1, size, out);
}

static size_t make_nested(size_t size, floe_buf *out) {
    return one_item_blocks("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                           "{\"name\":\"aa\",\"type\":{\"type\":\"array\",\"items\":"
                           "{\"type\":\"array\",\"items\":\"long\"}}},"
                           "{\"name\":\"t\",\"type\":\"long\"}]}",
                           NULL, 0, NULL, 0, nested_item, tail_7, 1, size, out);
}

/* Read the one record; check the container field against the items written. */
static int read_generic(void *arg) {
    const case_in *c = arg;
    floe_avro_reader *r = NULL;
    floe_error err;
    if (floe_avro_reader_open_mem(c->file->data, c->file->len, NULL, &r, &err) < 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    int bad = 1;
    const floe_avro_value *v;
    if (floe_avro_reader_next(r, &v, &err) != 1) {
        fprintf(stderr, "next: %s\n", err.msg);
        goto done;
    }
    const floe_avro_value *x = &v->u.list.items[0];
    if (v->u.list.items[1].u.l != 7)
        goto done;
    if (x->type == FLOE_AVRO_MAP) {
        if (x->u.map.n != c->n)
            goto done;
        for (size_t i = 0; i < c->n; i++) {
            char key[24];
            snprintf(key, sizeof key, "%zu", i);
            const floe_avro_map_entry *e = &x->u.map.entries[i];
            if (strcmp(e->key, key) != 0 || e->value.u.l != (int64_t)i)
                goto done;
        }
    } else {
        if (x->type != FLOE_AVRO_ARRAY || x->u.list.n != c->n)
            goto done;
        for (size_t i = 0; i < c->n; i++) {
            const floe_avro_value *it = &x->u.list.items[i];
            if (it->type == FLOE_AVRO_ARRAY) {
                if (it->u.list.n != 2 || it->u.list.items[0].u.l != small(i) ||
                    it->u.list.items[1].u.l != -small(i))
                    goto done;
            } else if (it->u.l != small(i)) {
                goto done;
            }
        }
    }
    bad = floe_avro_reader_next(r, &v, &err) == 0 ? 0 : 1;
done:
    if (bad)
        fprintf(stderr, "read_generic: wrong values\n");
    floe_avro_reader_close(r);
    return bad;
}

TEST(avro_array_of_one_item_blocks) { each_size(make_array, read_generic, false, "array"); }
TEST(avro_map_of_one_item_blocks) { each_size(make_map, read_generic, false, "map"); }
TEST(avro_nested_arrays_of_one_item_blocks) {
    each_size(make_nested, read_generic, false, "array of arrays");
}

/* ---- manifest lists ------------------------------------------------------------------- */

/* partitions: field_summary records {contains_null}: i odd. */
static void summary_item(floe_buf *b, size_t i) { floe_avro_encode_bool(b, i & 1); }

static size_t make_list(size_t size, floe_buf *out) {
    floe_buf head;
    floe_buf_init(&head, 0);
    floe_avro_encode_bytes(&head, "s3://b/m.avro", 13);
    floe_avro_encode_long(&head, 4096); /* manifest_length */
    floe_avro_encode_long(&head, 0);    /* partition_spec_id */
    size_t n = one_item_blocks(
        "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
        "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
        "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
        "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
        "{\"name\":\"partitions\",\"field-id\":507,\"type\":{\"type\":\"array\",\"items\":"
        "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
        "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509}]}}}]}",
        NULL, 0, head.data, head.len, summary_item, NULL, 0, size, out);
    floe_buf_free(&head);
    return n;
}

static int read_list(void *arg) {
    const case_in *c = arg;
    floe_arena a;
    floe_arena_init(&a, 0);
    floe_manifest_list l;
    floe_error err;
    int bad = 1;
    if (floe_manifest_list_read_mem(c->file->data, c->file->len, "list", NULL, &a, &l,
                                    &err) < 0) {
        fprintf(stderr, "manifest list: %s\n", err.msg);
        goto done;
    }
    if (l.nfiles != 1 || l.files[0].npartitions != c->n)
        goto done;
    for (size_t i = 0; i < c->n; i++)
        if (l.files[0].partitions[i].contains_null != (bool)(i & 1))
            goto done;
    bad = 0;
done:
    floe_arena_reset(&a);
    return bad;
}

TEST(manifest_list_partitions_of_one_item_blocks) {
    each_size(make_list, read_list, false, "manifest list partitions");
}

/* ---- manifests: both decoders --------------------------------------------------------- */

/* column_sizes items {key: i, value: 10 i}. */
static void count_item(floe_buf *b, size_t i) {
    floe_avro_encode_long(b, (int64_t)i);
    floe_avro_encode_long(b, 10 * (int64_t)i);
}

static const char ICEBERG_SCHEMA[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}";
static const floe_avro_meta manifest_meta[] = {
    {"schema", ICEBERG_SCHEMA, sizeof ICEBERG_SCHEMA - 1},
    {"partition-spec", "[]", 2},
    {"partition-spec-id", "0", 1},
    {"format-version", "1", 1},
};

static size_t make_manifest(size_t size, floe_buf *out) {
    floe_buf head;
    floe_buf_init(&head, 0);
    floe_avro_encode_long(&head, 1); /* status */
    floe_avro_encode_bytes(&head, "s3://b/x.parquet", 16);
    floe_avro_encode_bytes(&head, "PARQUET", 7);
    floe_avro_encode_long(&head, 7);   /* record_count */
    floe_avro_encode_long(&head, 700); /* file_size_in_bytes */
    size_t n = one_item_blocks(
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
        "\"fields\":["
        "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
        "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
        "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
        "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
        "{\"name\":\"column_sizes\",\"field-id\":108,\"type\":{\"type\":\"array\",\"items\":"
        "{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":["
        "{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},"
        "{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]}}}]}}]}",
        manifest_meta, sizeof manifest_meta / sizeof manifest_meta[0], head.data, head.len,
        count_item, NULL, 0, size, out);
    floe_buf_free(&head);
    return n;
}

static int read_manifest(void *arg) {
    const case_in *c = arg;
    floe_manifest_reader *r = NULL;
    floe_error err;
    if (floe_manifest_reader_open_mem(c->file->data, c->file->len, "m", NULL, &r, &err) < 0) {
        fprintf(stderr, "manifest: %s\n", err.msg);
        return 1;
    }
    int bad = 1;
    if (c->generic)
        floe_mf_reader_force_generic(r);
    else if (!floe_mf_reader_is_fast(r))
        goto done;
    const floe_manifest_entry *e;
    if (floe_manifest_reader_next(r, &e, &err) != 1) {
        fprintf(stderr, "manifest entry: %s\n", err.msg);
        goto done;
    }
    const floe_count_map *m = &e->file.column_sizes;
    if (!m->present || m->n != c->n)
        goto done;
    for (size_t i = 0; i < c->n; i++)
        if (m->items[i].field_id != (int32_t)i || m->items[i].value != 10 * (int64_t)i)
            goto done;
    bad = floe_manifest_reader_next(r, &e, &err) == 0 ? 0 : 1;
done:
    floe_manifest_reader_close(r);
    return bad;
}

TEST(manifest_metrics_of_one_item_blocks) {
    each_size(make_manifest, read_manifest, false, "manifest column_sizes (streaming)");
    each_size(make_manifest, read_manifest, true, "manifest column_sizes (generic)");
}

/* ---- the cap on a block's decoded values ---------------------------------------------- */

/* Past max_values_bytes a block fails with FLOE_ELIMIT naming the cap; under it, or with
 * the default, the same file reads. */
TEST(values_cap) {
    floe_buf f;
    size_t n = make_array(8 * 1024, &f);
    REQUIRE(n > 1000);
    floe_avro_reader_options o = {.max_values_bytes = 16 * 1024};
    floe_avro_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_avro_reader_open_mem(f.data, f.len, &o, &r, &err), err);
    const floe_avro_value *v;
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), FLOE_ELIMIT);
    CHECK(strstr(err.msg, "16384 bytes of values") != NULL);
    CHECK(strstr(err.msg, "block 1") != NULL);
    floe_avro_reader_close(r);
    o.max_values_bytes = 4 << 20;
    REQUIRE_OK(floe_avro_reader_open_mem(f.data, f.len, &o, &r, &err), err);
    CHECK_EQ_INT(floe_avro_reader_next(r, &v, &err), 1);
    CHECK_EQ_INT(v->u.list.items[0].u.list.n, n);
    floe_avro_reader_close(r);
    case_in c = {&f, n, false};
    CHECK_EQ_INT(read_generic(&c), 0);
    floe_buf_free(&f);
}

/* ---- a manifest of many dense blocks: the cap on what one file decodes to ------------- */

static const char DENSE_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
    "\"fields\":["
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
    "{\"name\":\"column_sizes\",\"field-id\":108,\"type\":{\"type\":\"array\",\"items\":"
    "{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":["
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},"
    "{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]}}}]}}]}";

#define DENSE_DECODED (48u << 20) /* what the file's blocks decode to */
#define DENSE_CAP (8u << 20)      /* the cap the readers are given */
/* Peak resident growth allowed for reading up to the cap and keeping every entry (KiB):
 * 60 MiB is needed. Under AddressSanitizer freed memory stays resident in its quarantine
 * (256 MiB by default), and the generic decoder frees a block's value tree per block;
 * the shadow of what is resident adds an eighth ((128 + 256) / 8 = 48 MiB): without it
 * the generic decoder, at 380-384 MiB, failed a CI run (peak +393,340 KiB). */
#if defined(__SANITIZE_ADDRESS__)
#define DENSE_QUARANTINE_KIB ((256 + 48) * 1024)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DENSE_QUARANTINE_KIB ((256 + 48) * 1024)
#endif
#endif
#ifndef DENSE_QUARANTINE_KIB
#define DENSE_QUARANTINE_KIB 0
#endif
#define DENSE_PEAK_KIB (128 * 1024 + DENSE_QUARANTINE_KIB)

/* The same entry (a path and 16 column sizes) again and again in deflate blocks of about
 * 1 MiB: 48 MiB of records in a file of well under 1 MiB. Returns the entries. */
static size_t make_dense_manifest(floe_buf *out) {
    floe_avro_schema *s = NULL;
    floe_error err;
    floe_buf_init(out, 0);
    if (floe_avro_schema_parse(DENSE_SCHEMA, sizeof DENSE_SCHEMA - 1, &s, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
        return 0;
    }
    floe_buf e;
    floe_buf_init(&e, 0);
    static const char path[] = "s3://bucket/warehouse/db/t/data/00000-0-dense.parquet";
    floe_avro_encode_long(&e, 1);
    floe_avro_encode_bytes(&e, path, sizeof path - 1);
    floe_avro_encode_bytes(&e, "PARQUET", 7);
    floe_avro_encode_long(&e, 1000);
    floe_avro_encode_long(&e, 123456);
    floe_avro_encode_long(&e, 16);
    for (int i = 1; i <= 16; i++)
        count_item(&e, (size_t)i);
    floe_avro_encode_long(&e, 0);
    floe_avro_writer_options wo = {.codec = FLOE_CODEC_DEFLATE, .block_size = 1 << 20,
                                   .sync = test_sync, .meta = manifest_meta,
                                   .n_meta = sizeof manifest_meta / sizeof manifest_meta[0]};
    floe_avro_writer *w = NULL;
    size_t n = 0;
    if (floe_avro_writer_open(s, &wo, out, &w, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "open: %s", err.msg);
    } else {
        for (; n * e.len < DENSE_DECODED; n++)
            if (floe_avro_writer_append_encoded(w, e.data, e.len, &err) < 0)
                break;
        if (floe_avro_writer_close(w, &err) < 0)
            harness_fail(__FILE__, __LINE__, "close: %s", err.msg);
    }
    floe_buf_free(&e);
    floe_avro_schema_free(s);
    return n;
}

typedef struct dense_in {
    const floe_buf *file;
    bool generic;
    uint64_t cap;    /* options.max_bytes (0: the process-wide default) */
} dense_in;

/* Read the manifest keeping a copy of every data file, as a scan plan does: 0 when the
 * read stops with FLOE_ELIMIT naming the file and the cap. */
static int read_dense(void *arg) {
    const dense_in *d = arg;
    floe_manifest_read_options o = {.max_bytes = d->cap};
    floe_manifest_reader *r = NULL;
    floe_error err;
    if (floe_manifest_reader_open_mem(d->file->data, d->file->len, "dense-m0.avro", &o, &r,
                                      &err) < 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    if (d->generic)
        floe_mf_reader_force_generic(r);
    floe_arena kept;
    floe_arena_init(&kept, 1 << 20);
    const floe_manifest_entry *e;
    int rc;
    size_t n = 0;
    while ((rc = floe_manifest_reader_next(r, &e, &err)) == 1) {
        floe_data_file copy;
        if (floe_data_file_copy(&e->file, &kept, &copy, &err) < 0)
            break;
        n++;
    }
    char cap[32];
    snprintf(cap, sizeof cap, "%u bytes", DENSE_CAP);
    int bad = !(rc == FLOE_ELIMIT && strstr(err.msg, "dense-m0.avro") && strstr(err.msg, cap) &&
                strstr(err.msg, "FLOE_MANIFEST_MAX_BYTES"));
    if (bad)
        fprintf(stderr, "after %zu entries: rc %d: %s\n", n, rc, rc < 0 ? err.msg : "");
    floe_arena_reset(&kept);
    floe_manifest_reader_close(r);
    return bad;
}

/* Both decoders stop at the cap with an error naming the file and the cap, and the
 * memory a reader that keeps every entry needs stays near what the cap allows (reading
 * all 48 MiB takes six times as much); under the cap the same file reads in full. */
TEST(manifest_decoded_bytes_cap) {
    floe_buf f;
    size_t n = make_dense_manifest(&f);
    REQUIRE(n > 100000 && f.len < DENSE_DECODED / 32);
    for (int g = 0; g < 2; g++) {
        for (int by_default = 0; by_default < 2; by_default++) {
            dense_in d = {&f, g == 1, by_default ? 0 : DENSE_CAP};
            floe_manifest_set_max_bytes(by_default ? DENSE_CAP : 0);
            long long peak = -1;
            int rc = harness_child_peak_kib(read_dense, &d, DENSE_PEAK_KIB, &peak);
            printf("  %s decoder, cap %s: peak +%lld KiB\n", g ? "generic" : "streaming",
                   by_default ? "by default" : "in the options", peak);
            CHECK_EQ_INT(rc, 0);
            CHECK(peak >= 0 && peak < DENSE_PEAK_KIB);
        }
    }
    floe_manifest_set_max_bytes(0);
    floe_manifest_read_options o = {.max_bytes = DENSE_DECODED + (16u << 20)};
    floe_manifest_reader *r = NULL;
    floe_error err;
    REQUIRE_OK(floe_manifest_reader_open_mem(f.data, f.len, "dense-m0.avro", &o, &r, &err), err);
    const floe_manifest_entry *e;
    size_t got = 0;
    int rc;
    while ((rc = floe_manifest_reader_next(r, &e, &err)) == 1)
        got++;
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(got, n);
    floe_manifest_reader_close(r);
    floe_buf_free(&f);
}

/* A deflate block that inflates past max_block_bytes is refused naming the cap (it said
 * "out of memory"); one that inflates to exactly the cap reads. */
TEST(deflate_block_cap) {
    floe_avro_schema *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_avro_schema_parse("\"bytes\"", 7, &s, &err), err);
    size_t len = (1u << 20) - 4; /* encoded: a 3-byte length, then the bytes */
    uint8_t *zeros = calloc(1, len);
    REQUIRE(zeros);
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_avro_writer_options wo = {.codec = FLOE_CODEC_DEFLATE, .block_size = 4 << 20,
                                   .sync = test_sync};
    floe_avro_writer *w = NULL;
    floe_buf rec;
    floe_buf_init(&rec, 0);
    floe_avro_encode_bytes(&rec, zeros, len);
    REQUIRE(rec.len == len + 3);
    REQUIRE_OK(floe_avro_writer_open(s, &wo, &f, &w, &err), err);
    REQUIRE_OK(floe_avro_writer_append_encoded(w, rec.data, rec.len, &err), err);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    const size_t caps[] = {256 * 1024, rec.len - 1, rec.len};
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
        size_t cap = caps[k];
        floe_avro_reader_options o = {.max_block_bytes = cap, .name = "bomb.avro"};
        floe_avro_reader *r = NULL;
        REQUIRE_OK(floe_avro_reader_open_mem(f.data, f.len, &o, &r, &err), err);
        const floe_avro_value *v;
        int rc = floe_avro_reader_next(r, &v, &err);
        if (cap < rec.len) {
            char want[64];
            snprintf(want, sizeof want, "past %zu bytes", cap);
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            CHECK(strstr(err.msg, want) != NULL);
            CHECK(strstr(err.msg, "bomb.avro") != NULL);
            CHECK(strstr(err.msg, "out of memory") == NULL);
        } else {
            CHECK_EQ_INT(rc, 1);
            CHECK_EQ_INT(v->u.bytes.n, len);
        }
        floe_avro_reader_close(r);
    }
    floe_buf_free(&rec);
    floe_buf_free(&f);
    free(zeros);
    floe_avro_schema_free(s);
}

/* A header with more metadata entries than the cap is refused naming the cap. */
TEST(header_entries_cap) {
    enum { N = 5000 };
    static floe_avro_meta meta[N];
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        meta[i] = (floe_avro_meta){keys[i], "v", 1};
    }
    floe_avro_schema *s = NULL;
    floe_error err;
    REQUIRE_OK(floe_avro_schema_parse("\"long\"", 6, &s, &err), err);
    floe_buf f;
    floe_buf_init(&f, 0);
    floe_avro_writer_options wo = {.sync = test_sync, .meta = meta, .n_meta = N};
    floe_avro_writer *w = NULL;
    REQUIRE_OK(floe_avro_writer_open(s, &wo, &f, &w, &err), err);
    REQUIRE_OK(floe_avro_writer_close(w, &err), err);
    floe_avro_reader_options o = {.name = "keys.avro"};
    floe_avro_reader *r = NULL;
    CHECK_EQ_INT(floe_avro_reader_open_mem(f.data, f.len, &o, &r, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "past the cap of 4096 entries") != NULL);
    CHECK(strstr(err.msg, "keys.avro") != NULL);
    floe_avro_reader_close(r);
    floe_buf_free(&f);
    floe_avro_schema_free(s);
}

/* A deflate file of one "bytes" record whose block is `stream` (raw deflate, as the file
 * has it: trailing bytes and all). */
static void deflate_file(const uint8_t *stream, size_t n, floe_buf *out) {
    floe_avro_schema *s = NULL;
    floe_error err;
    floe_buf_init(out, 0);
    if (floe_avro_schema_parse("\"bytes\"", 7, &s, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "schema: %s", err.msg);
        return;
    }
    floe_avro_writer_options wo = {.codec = FLOE_CODEC_DEFLATE, .sync = test_sync};
    floe_avro_writer *w = NULL;
    if (floe_avro_writer_open(s, &wo, out, &w, &err) < 0 ||
        floe_avro_writer_close(w, &err) < 0)
        harness_fail(__FILE__, __LINE__, "header: %s", err.msg);
    floe_avro_schema_free(s);
    floe_avro_encode_long(out, 1);
    floe_avro_encode_long(out, (int64_t)n);
    floe_buf_append(out, stream, n);
    floe_buf_append(out, test_sync, 16);
}

/* The one record of f: 1 and its bytes in *got (freshly allocated), or the error. */
static int read_one_bytes(const floe_buf *f, size_t cap, uint8_t **got, size_t *n,
                          floe_error *err) {
    floe_avro_reader_options o = {.max_block_bytes = cap, .name = "d.avro"};
    floe_avro_reader *r = NULL;
    int rc = floe_avro_reader_open_mem(f->data, f->len, &o, &r, err);
    if (rc < 0)
        return rc;
    const floe_avro_value *v;
    rc = floe_avro_reader_next(r, &v, err);
    if (rc == 1) {
        *n = v->u.bytes.n;
        *got = malloc(*n ? *n : 1);
        memcpy(*got, v->u.bytes.p, *n);
    }
    floe_avro_reader_close(r);
    return rc;
}

/* Deflate blocks inflated in one call: bytes after the end of the stream are ignored (the
 * Adler-32 leftovers PyIceberg writes); a block larger than the first guess of the output
 * buffer (64 KiB, 4 x its input) reads whole; a stream cut short, or with a bad block
 * type, is a corrupt file. */
TEST(deflate_block_one_call) {
    /* 300 KB of text that compresses ~100:1, so the output passes 4 x input and 64 KiB */
    size_t len = 300 * 1000;
    floe_buf rec;
    floe_buf_init(&rec, 0);
    uint8_t *raw = malloc(len);
    REQUIRE(raw);
    for (size_t i = 0; i < len; i++)
        raw[i] = (uint8_t)("deflate-block-"[i % 14] + (i / 4096) % 3);
    floe_avro_encode_bytes(&rec, raw, len);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    REQUIRE(c);
    size_t bound = libdeflate_deflate_compress_bound(c, rec.len);
    uint8_t *z = malloc(bound + 3);
    REQUIRE(z);
    size_t zn = libdeflate_deflate_compress(c, rec.data, rec.len, z, bound);
    libdeflate_free_compressor(c);
    REQUIRE(zn > 0 && zn * 4 < rec.len);
    const struct {
        size_t n;     /* bytes of the stream the block holds */
        size_t extra; /* bytes after them */
        bool ok;
    } cases[] = {{zn, 0, true}, {zn, 3, true}, {zn - 1, 0, false}, {zn / 2, 0, false},
                 {1, 0, false}};
    memset(z + zn, 0x5a, 3);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        floe_buf f;
        deflate_file(z, cases[k].n + cases[k].extra, &f);
        uint8_t *got = NULL;
        size_t n = 0;
        floe_error err;
        floe_error_clear(&err);
        int rc = read_one_bytes(&f, 0, &got, &n, &err);
        if (cases[k].ok) {
            CHECK_EQ_INT(rc, 1);
            CHECK_EQ_INT(n, len);
            CHECK(got && !memcmp(got, raw, len));
        } else {
            CHECK_EQ_INT(rc, FLOE_ECORRUPT);
            CHECK(strstr(err.msg, "d.avro") != NULL);
        }
        free(got);
        floe_buf_free(&f);
    }
    /* block type 3 (reserved) in the first header */
    uint8_t bad[] = {0x07, 0x00, 0x00};
    floe_buf f;
    deflate_file(bad, sizeof bad, &f);
    uint8_t *got = NULL;
    size_t n = 0;
    floe_error err;
    CHECK_EQ_INT(read_one_bytes(&f, 0, &got, &n, &err), FLOE_ECORRUPT);
    free(got);
    floe_buf_free(&f);
    free(z);
    free(raw);
    floe_buf_free(&rec);
}

int main(void) {
    RUN(avro_array_of_one_item_blocks);
    RUN(avro_map_of_one_item_blocks);
    RUN(avro_nested_arrays_of_one_item_blocks);
    RUN(manifest_list_partitions_of_one_item_blocks);
    RUN(manifest_metrics_of_one_item_blocks);
    RUN(values_cap);
    RUN(manifest_decoded_bytes_cap);
    RUN(deflate_block_cap);
    RUN(deflate_block_one_call);
    RUN(header_entries_cap);
    return harness_finish();
}
