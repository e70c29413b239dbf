/* test_thrift.c - compact protocol: hand vectors, skipping, hostile input. */
#include "floe/common.h"
#include "harness.h"
#include "parquet/metadata.h"
#include "thrift/thrift.h"

static floe_buf enc_buf;

static void enc_reset(floe_thrift_writer *w) {
    floe_buf_free(&enc_buf);
    floe_buf_init(&enc_buf, 0);
    floe_thrift_writer_init(w, &enc_buf);
}

TEST(test_field_deltas_and_long_ids) {
    floe_thrift_writer w;
    enc_reset(&w);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, 5);     /* delta 1: 0x15, zigzag(5)=10 */
    floe_thrift_field_i32(&w, 16, -1);   /* delta 15: 0xF5, zigzag(-1)=1 */
    floe_thrift_field_i32(&w, 40, 0);    /* delta 24: long form 0x05 + zigzag(40)=80 */
    floe_thrift_field_i64(&w, 3, 64);    /* negative delta: long form 0x06 + 6, zz(64)=128 */
    floe_thrift_field_i16(&w, -2, 7);    /* negative id: 0x04 + zz(-2)=3 */
    floe_thrift_struct_end(&w);
    REQUIRE(floe_thrift_writer_finish(&w) == 0);
    const uint8_t want[] = {0x15, 10, 0xF5, 1, 0x05, 80, 0, 0x06, 6, 0x80, 0x01,
                            0x04, 3, 14, 0x00};
    CHECK_EQ_INT(enc_buf.len, sizeof want);
    CHECK_EQ_MEM(enc_buf.data, want, sizeof want);

    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    floe_thrift_reader_init(&r, enc_buf.data, enc_buf.len, &err);
    floe_thrift_type t;
    int16_t id;
    int32_t v32;
    int64_t v64;
    int16_t v16;
    REQUIRE_OK(floe_thrift_read_struct_begin(&r), err);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK(t == FLOE_THRIFT_I32 && id == 1);
    REQUIRE_OK(floe_thrift_read_i32(&r, &v32), err);
    CHECK_EQ_INT(v32, 5);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK(t == FLOE_THRIFT_I32 && id == 16);
    REQUIRE_OK(floe_thrift_read_i32(&r, &v32), err);
    CHECK_EQ_INT(v32, -1);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK_EQ_INT(id, 40);
    REQUIRE_OK(floe_thrift_read_i32(&r, &v32), err);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK(t == FLOE_THRIFT_I64 && id == 3);
    REQUIRE_OK(floe_thrift_read_i64(&r, &v64), err);
    CHECK_EQ_INT(v64, 64);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK(t == FLOE_THRIFT_I16 && id == -2);
    REQUIRE_OK(floe_thrift_read_i16(&r, &v16), err);
    CHECK_EQ_INT(v16, 7);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    CHECK(t == FLOE_THRIFT_STOP);
    REQUIRE_OK(floe_thrift_read_struct_end(&r), err);
    CHECK_EQ_INT(r.pos, enc_buf.len);
}

TEST(test_bool_folding_and_zigzag) {
    floe_thrift_writer w;
    enc_reset(&w);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_bool(&w, 1, true);
    floe_thrift_field_bool(&w, 2, false);
    floe_thrift_field_i64(&w, 3, INT64_MIN);
    floe_thrift_field_i64(&w, 4, INT64_MAX);
    floe_thrift_field_double(&w, 5, -0.0);
    floe_thrift_struct_end(&w);
    REQUIRE(floe_thrift_writer_finish(&w) == 0);
    CHECK_EQ_INT(enc_buf.data[0], 0x11);
    CHECK_EQ_INT(enc_buf.data[1], 0x12);
    /* zigzag(INT64_MIN) = 2^64-1: ten bytes 0xFF..0x01 */
    CHECK_EQ_INT(enc_buf.data[2], 0x16);
    for (int i = 0; i < 9; i++)
        CHECK_EQ_INT(enc_buf.data[3 + i], 0xFF);
    CHECK_EQ_INT(enc_buf.data[12], 0x01);

    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    floe_thrift_reader_init(&r, enc_buf.data, enc_buf.len, &err);
    floe_thrift_type t;
    int16_t id;
    bool b;
    int64_t v;
    double dv;
    REQUIRE_OK(floe_thrift_read_struct_begin(&r), err);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    REQUIRE_OK(floe_thrift_read_bool(&r, &b), err);
    CHECK(b == true && id == 1);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    REQUIRE_OK(floe_thrift_read_bool(&r, &b), err);
    CHECK(b == false && id == 2);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    REQUIRE_OK(floe_thrift_read_i64(&r, &v), err);
    CHECK(v == INT64_MIN);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    REQUIRE_OK(floe_thrift_read_i64(&r, &v), err);
    CHECK(v == INT64_MAX);
    REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
    REQUIRE_OK(floe_thrift_read_double(&r, &dv), err);
    CHECK(dv == 0.0 && __builtin_signbit(dv));
    /* i32 out of range is corrupt */
    const uint8_t big[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
    floe_thrift_reader_init(&r, big, sizeof big, &err);
    int32_t v32;
    CHECK_EQ_INT(floe_thrift_read_i32(&r, &v32), FLOE_ECORRUPT);
}

TEST(test_list_long_form_and_bool_elements) {
    floe_thrift_writer w;
    enc_reset(&w);
    floe_thrift_list_begin(&w, FLOE_THRIFT_I32, 14);
    CHECK_EQ_INT(enc_buf.data[0], 0xE5);
    floe_thrift_list_begin(&w, FLOE_THRIFT_I32, 15);
    CHECK_EQ_INT(enc_buf.data[1], 0xF5);
    CHECK_EQ_INT(enc_buf.data[2], 15);
    floe_thrift_list_begin(&w, FLOE_THRIFT_BINARY, 300);
    CHECK_EQ_INT(enc_buf.data[3], 0xF8);
    CHECK_EQ_INT(enc_buf.data[4], 0xAC);
    CHECK_EQ_INT(enc_buf.data[5], 0x02);
    floe_thrift_map_begin(&w, FLOE_THRIFT_BINARY, FLOE_THRIFT_I32, 0);
    CHECK_EQ_INT(enc_buf.data[6], 0x00);
    floe_thrift_map_begin(&w, FLOE_THRIFT_BINARY, FLOE_THRIFT_I32, 2);
    CHECK_EQ_INT(enc_buf.data[7], 2);
    CHECK_EQ_INT(enc_buf.data[8], 0x85);

    /* list<bool> of 20: long form, one byte per element; both element type ids read */
    uint8_t in[2 + 20];
    in[0] = 0xF2;
    in[1] = 20;
    for (int i = 0; i < 20; i++)
        in[2 + i] = (uint8_t)(i % 3 == 0 ? 1 : (i % 2 ? 0 : 2));
    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    floe_thrift_reader_init(&r, in, sizeof in, &err);
    floe_thrift_type et;
    size_t n;
    REQUIRE_OK(floe_thrift_read_list_begin(&r, &et, &n), err);
    CHECK(et == FLOE_THRIFT_TRUE);
    CHECK_EQ_INT(n, 20);
    for (int i = 0; i < 20; i++) {
        bool b;
        REQUIRE_OK(floe_thrift_read_bool(&r, &b), err);
        CHECK(b == (i % 3 == 0));
    }
    CHECK_EQ_INT(r.pos, sizeof in);
}

TEST(test_skip_unknown_nested) {
    /* struct { 1: i32 7; 2: struct { 1: list<struct{1: binary "ab"; 2: bool}>, 3: map<i32,
     * double>{1: 2.5}, 4: set<bool>{true} , 5: i8 } ; 6: i32 9 } -- we read 1 and 6 only */
    floe_thrift_writer w;
    enc_reset(&w);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, 7);
    floe_thrift_field_struct_begin(&w, 2);
    floe_thrift_field_list_begin(&w, 1, FLOE_THRIFT_STRUCT, 2);
    for (int i = 0; i < 2; i++) {
        floe_thrift_struct_begin(&w);
        floe_thrift_field_binary(&w, 1, "ab", 2);
        floe_thrift_field_bool(&w, 2, i == 0);
        floe_thrift_struct_end(&w);
    }
    floe_thrift_field_begin(&w, FLOE_THRIFT_MAP, 3);
    floe_thrift_map_begin(&w, FLOE_THRIFT_I32, FLOE_THRIFT_DOUBLE, 1);
    floe_thrift_write_i32(&w, 1);
    floe_thrift_write_double(&w, 2.5);
    floe_thrift_field_begin(&w, FLOE_THRIFT_SET, 4);
    floe_thrift_list_begin(&w, FLOE_THRIFT_BOOL_ELEM, 1);
    floe_thrift_write_bool(&w, true);
    floe_thrift_field_byte(&w, 5, -3);
    floe_thrift_struct_end(&w);
    floe_thrift_field_i32(&w, 6, 9);
    floe_thrift_struct_end(&w);
    REQUIRE(floe_thrift_writer_finish(&w) == 0);

    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    floe_thrift_reader_init(&r, enc_buf.data, enc_buf.len, &err);
    floe_thrift_type t;
    int16_t id;
    int32_t a = 0, b = 0;
    REQUIRE_OK(floe_thrift_read_struct_begin(&r), err);
    for (;;) {
        REQUIRE_OK(floe_thrift_read_field(&r, &t, &id), err);
        if (t == FLOE_THRIFT_STOP)
            break;
        if (id == 1)
            REQUIRE_OK(floe_thrift_read_i32(&r, &a), err);
        else if (id == 6)
            REQUIRE_OK(floe_thrift_read_i32(&r, &b), err);
        else
            REQUIRE_OK(floe_thrift_skip(&r, t), err);
    }
    CHECK_EQ_INT(a, 7);
    CHECK_EQ_INT(b, 9);
    CHECK_EQ_INT(r.pos, enc_buf.len);

    /* every truncation of it fails cleanly with CORRUPT */
    for (size_t cut = 0; cut < enc_buf.len; cut++) {
        floe_thrift_reader_init(&r, enc_buf.data, cut, &err);
        int rc = floe_thrift_skip(&r, FLOE_THRIFT_STRUCT);
        CHECK_EQ_INT(rc, FLOE_ECORRUPT);
    }
}

TEST(test_truncated_and_hostile_sizes) {
    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    const uint8_t *p;
    size_t n;
    /* binary claiming 100 bytes with 3 left */
    const uint8_t b1[] = {100, 'a', 'b', 'c'};
    floe_thrift_reader_init(&r, b1, sizeof b1, &err);
    r.what = "footer";
    CHECK_EQ_INT(floe_thrift_read_binary(&r, &p, &n), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "footer") != NULL);
    CHECK(strstr(err.msg, "past end") != NULL);
    /* list claiming 2^31-1 elements */
    const uint8_t l1[] = {0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0};
    floe_thrift_type et;
    floe_thrift_reader_init(&r, l1, sizeof l1, &err);
    CHECK_EQ_INT(floe_thrift_read_list_begin(&r, &et, &n), FLOE_ECORRUPT);
    /* list over the cap even when bytes remain */
    uint8_t l2[64] = {0xF5, 40};
    floe_thrift_reader_init(&r, l2, sizeof l2, &err);
    r.max_collection = 10;
    CHECK_EQ_INT(floe_thrift_read_list_begin(&r, &et, &n), FLOE_ECORRUPT);
    /* overlong varint */
    const uint8_t v1[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    int64_t v;
    floe_thrift_reader_init(&r, v1, sizeof v1, &err);
    CHECK_EQ_INT(floe_thrift_read_i64(&r, &v), FLOE_ECORRUPT);
    /* unknown field type 14 */
    const uint8_t f1[] = {0x1E, 0};
    floe_thrift_reader_init(&r, f1, sizeof f1, &err);
    CHECK_EQ_INT(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
    /* error offsets include the base offset */
    floe_thrift_reader_init(&r, b1, sizeof b1, &err);
    r.base_offset = 1000;
    CHECK_EQ_INT(floe_thrift_read_binary(&r, &p, &n), FLOE_ECORRUPT);
    CHECK_EQ_INT(err.offset, 1001);
}

TEST(test_depth_cap) {
    /* 200 nested structs (field 1 of type struct each): must fail, not recurse forever */
    uint8_t deep[202];
    for (int i = 0; i < 200; i++)
        deep[i] = 0x1C;
    deep[200] = 0;
    deep[201] = 0;
    floe_thrift_reader r;
    floe_error err;
    floe_error_clear(&err);
    floe_thrift_reader_init(&r, deep, sizeof deep, &err);
    CHECK_EQ_INT(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "nesting") != NULL);
    /* nested lists count too */
    uint8_t deepl[200];
    for (int i = 0; i < 199; i++)
        deepl[i] = 0x19; /* list of 1 list */
    deepl[199] = 0x00;
    floe_thrift_reader_init(&r, deepl, sizeof deepl, &err);
    CHECK_EQ_INT(floe_thrift_skip(&r, FLOE_THRIFT_LIST), FLOE_ECORRUPT);
    /* writer refuses too */
    floe_thrift_writer w;
    enc_reset(&w);
    for (int i = 0; i < FLOE_THRIFT_MAX_DEPTH + 1; i++)
        floe_thrift_struct_begin(&w);
    CHECK_EQ_INT(floe_thrift_writer_finish(&w), FLOE_EINTERNAL);
}

/* Metadata round trip through the generic codec. */
TEST(test_metadata_roundtrip) {
    floe_pq_schema_element schema[2];
    memset(schema, 0, sizeof schema);
    schema[0].name = "table";
    schema[0].has_num_children = true;
    schema[0].num_children = 1;
    schema[1].name = "ts";
    schema[1].has_type = true;
    schema[1].type = FLOE_PQ_INT64;
    schema[1].has_repetition_type = true;
    schema[1].repetition_type = FLOE_PQ_OPTIONAL;
    schema[1].has_field_id = true;
    schema[1].field_id = 42;
    schema[1].has_logical_type = true;
    schema[1].logical_type.kind = FLOE_PQ_LT_TIMESTAMP;
    schema[1].logical_type.is_adjusted_to_utc = true;
    schema[1].logical_type.time_unit = FLOE_PQ_MICROS;
    int32_t encs[] = {FLOE_PQ_ENC_PLAIN, FLOE_PQ_ENC_RLE};
    const char *path[] = {"ts"};
    uint8_t minv[8] = {1}, maxv[8] = {9};
    floe_pq_column_chunk cc;
    memset(&cc, 0, sizeof cc);
    cc.has_meta_data = true;
    cc.meta_data.type = FLOE_PQ_INT64;
    cc.meta_data.encodings = encs;
    cc.meta_data.n_encodings = 2;
    cc.meta_data.path_in_schema = path;
    cc.meta_data.n_path = 1;
    cc.meta_data.codec = 1;
    cc.meta_data.num_values = 3;
    cc.meta_data.data_page_offset = 4;
    cc.meta_data.has_statistics = true;
    cc.meta_data.statistics.has_min_value = true;
    cc.meta_data.statistics.min_value = (floe_pq_bytes){minv, 8};
    cc.meta_data.statistics.has_max_value = true;
    cc.meta_data.statistics.max_value = (floe_pq_bytes){maxv, 8};
    cc.meta_data.statistics.has_is_max_value_exact = true;
    cc.meta_data.statistics.is_max_value_exact = true;
    floe_pq_row_group rg;
    memset(&rg, 0, sizeof rg);
    rg.columns = &cc;
    rg.n_columns = 1;
    rg.num_rows = 3;
    rg.has_ordinal = true;
    rg.ordinal = 0;
    int orders[] = {FLOE_PQ_ORDER_TYPE_DEFINED};
    floe_pq_key_value kv = {"iceberg.schema", "{}", 2};
    floe_pq_file_metadata md;
    memset(&md, 0, sizeof md);
    md.version = 1;
    md.schema = schema;
    md.n_schema = 2;
    md.num_rows = 3;
    md.row_groups = &rg;
    md.n_row_groups = 1;
    md.key_value_metadata = &kv;
    md.n_kv = 1;
    md.created_by = "floe";
    md.column_orders = orders;
    md.n_column_orders = 1;
    floe_error err;
    floe_error_clear(&err);
    floe_buf out;
    floe_buf_init(&out, 0);
    REQUIRE_OK(floe_pq_file_metadata_encode(&md, &out, &err), err);

    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_pq_file_metadata back;
    REQUIRE_OK(floe_pq_file_metadata_decode(out.data, out.len, 0, &a, &back, &err), err);
    CHECK_EQ_INT(back.n_schema, 2);
    CHECK_EQ_STR(back.schema[1].name, "ts");
    CHECK_EQ_INT(back.schema[1].field_id, 42);
    CHECK_EQ_INT(back.schema[1].logical_type.kind, FLOE_PQ_LT_TIMESTAMP);
    CHECK_EQ_INT(back.schema[1].logical_type.time_unit, FLOE_PQ_MICROS);
    CHECK(back.schema[1].logical_type.is_adjusted_to_utc);
    CHECK_EQ_INT(back.row_groups[0].columns[0].meta_data.n_encodings, 2);
    CHECK_EQ_STR(back.row_groups[0].columns[0].meta_data.path_in_schema[0], "ts");
    CHECK_EQ_INT(back.row_groups[0].columns[0].meta_data.statistics.min_value.p[0], 1);
    CHECK(back.row_groups[0].columns[0].meta_data.statistics.is_max_value_exact);
    CHECK_EQ_STR(back.key_value_metadata[0].key, "iceberg.schema");
    CHECK_EQ_STR(back.created_by, "floe");
    CHECK_EQ_INT(back.column_orders[0], FLOE_PQ_ORDER_TYPE_DEFINED);
    CHECK_OK(floe_pq_file_metadata_check_encryption(&back, &err), err);

    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < out.len; cut++) {
        floe_arena_reset(&a);
        CHECK(floe_pq_file_metadata_decode(out.data, cut, 0, &a, &back, &err) < 0);
    }
    /* a required field missing: drop num_rows by re-encoding without row groups list */
    floe_arena_reset(&a);
    floe_buf_free(&out);
    floe_buf_init(&out, 0);
    floe_thrift_writer w;
    floe_thrift_writer_init(&w, &out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, 1);
    floe_thrift_field_list_begin(&w, 2, FLOE_THRIFT_STRUCT, 0);
    floe_thrift_field_list_begin(&w, 4, FLOE_THRIFT_STRUCT, 0);
    floe_thrift_field_binary(&w, 8, "x", 1); /* encryption_algorithm (wrong type: detected) */
    floe_thrift_struct_end(&w);
    REQUIRE(floe_thrift_writer_finish(&w) == 0);
    CHECK_EQ_INT(floe_pq_file_metadata_decode(out.data, out.len, 0, &a, &back, &err),
                 FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "num_rows") != NULL);

    /* encryption detected */
    floe_buf_reset(&out);
    floe_thrift_writer_init(&w, &out);
    floe_thrift_struct_begin(&w);
    floe_thrift_field_i32(&w, 1, 1);
    floe_thrift_field_list_begin(&w, 2, FLOE_THRIFT_STRUCT, 0);
    floe_thrift_field_i64(&w, 3, 0);
    floe_thrift_field_list_begin(&w, 4, FLOE_THRIFT_STRUCT, 0);
    floe_thrift_field_struct_begin(&w, 8);
    floe_thrift_field_empty_struct(&w, 1);
    floe_thrift_struct_end(&w);
    floe_thrift_struct_end(&w);
    REQUIRE(floe_thrift_writer_finish(&w) == 0);
    REQUIRE_OK(floe_pq_file_metadata_decode(out.data, out.len, 0, &a, &back, &err), err);
    CHECK_EQ_INT(floe_pq_file_metadata_check_encryption(&back, &err), FLOE_EENCRYPTED);

    floe_arena_reset(&a);
    floe_buf_free(&out);
}

TEST(test_page_header_and_index_roundtrip) {
    floe_pq_page_header ph;
    memset(&ph, 0, sizeof ph);
    ph.type = FLOE_PQ_DATA_PAGE;
    ph.uncompressed_page_size = 100;
    ph.compressed_page_size = 50;
    ph.has_crc = true;
    ph.crc = -5;
    ph.has_data_page_header = true;
    ph.data_page_header.num_values = 10;
    ph.data_page_header.encoding = FLOE_PQ_ENC_RLE_DICTIONARY;
    ph.data_page_header.definition_level_encoding = FLOE_PQ_ENC_RLE;
    ph.data_page_header.repetition_level_encoding = FLOE_PQ_ENC_RLE;
    floe_error err;
    floe_error_clear(&err);
    floe_buf out;
    floe_buf_init(&out, 0);
    REQUIRE_OK(floe_pq_page_header_encode(&ph, &out, &err), err);
    size_t hdr_len = out.len;
    REQUIRE_OK(floe_buf_append(&out, "tail", 4), err);
    floe_pq_page_header back;
    size_t used = 0;
    REQUIRE_OK(floe_pq_page_header_decode(out.data, out.len, 0, &back, &used, &err), err);
    CHECK_EQ_INT(used, hdr_len);
    CHECK_EQ_INT(back.crc, -5);
    CHECK_EQ_INT(back.data_page_header.num_values, 10);
    CHECK_EQ_INT(back.data_page_header.encoding, FLOE_PQ_ENC_RLE_DICTIONARY);

    bool nulls[3] = {false, true, false};
    floe_pq_bytes mins[3] = {{(const uint8_t *)"a", 1}, {NULL, 0}, {(const uint8_t *)"c", 1}};
    floe_pq_bytes maxs[3] = {{(const uint8_t *)"b", 1}, {NULL, 0}, {(const uint8_t *)"d", 1}};
    int64_t nc[3] = {0, 5, 1};
    floe_pq_column_index ci;
    memset(&ci, 0, sizeof ci);
    ci.null_pages = nulls;
    ci.n_pages = 3;
    ci.min_values = mins;
    ci.max_values = maxs;
    ci.boundary_order = FLOE_PQ_ASCENDING;
    ci.null_counts = nc;
    ci.n_null_counts = 3;
    floe_buf_reset(&out);
    REQUIRE_OK(floe_pq_column_index_encode(&ci, &out, &err), err);
    floe_arena a;
    floe_arena_init(&a, 1024);
    floe_pq_column_index cb;
    REQUIRE_OK(floe_pq_column_index_decode(out.data, out.len, 0, &a, &cb, &err), err);
    CHECK_EQ_INT(cb.n_pages, 3);
    CHECK(!cb.null_pages[0] && cb.null_pages[1] && !cb.null_pages[2]);
    CHECK_EQ_INT(cb.max_values[2].p[0], 'd');
    CHECK_EQ_INT(cb.null_counts[1], 5);
    CHECK_EQ_INT(cb.boundary_order, FLOE_PQ_ASCENDING);

    floe_pq_page_location locs[2] = {{4, 100, 0}, {104, 50, 20000}};
    floe_pq_offset_index oi = {locs, 2, NULL, 0};
    floe_buf_reset(&out);
    REQUIRE_OK(floe_pq_offset_index_encode(&oi, &out, &err), err);
    floe_pq_offset_index ob;
    REQUIRE_OK(floe_pq_offset_index_decode(out.data, out.len, 0, &a, &ob, &err), err);
    CHECK_EQ_INT(ob.n_pages, 2);
    CHECK_EQ_INT(ob.page_locations[1].first_row_index, 20000);
    CHECK_EQ_INT(ob.page_locations[1].offset, 104);
    floe_arena_reset(&a);
    floe_buf_free(&out);
}

int main(void) {
    floe_buf_init(&enc_buf, 0);
    RUN(test_field_deltas_and_long_ids);
    RUN(test_bool_folding_and_zigzag);
    RUN(test_list_long_form_and_bool_elements);
    RUN(test_skip_unknown_nested);
    RUN(test_truncated_and_hostile_sizes);
    RUN(test_depth_cap);
    RUN(test_metadata_roundtrip);
    RUN(test_page_header_and_index_roundtrip);
    floe_buf_free(&enc_buf);
    return harness_finish();
}
