/*
 * fuzz_thrift.c - libFuzzer target for the Thrift compact-protocol reader (src/thrift) and
 * the Parquet structures decoded with it (src/parquet/metadata.c): FileMetaData (the
 * footer), PageHeader, ColumnIndex and OffsetIndex.
 *
 * Every input is tried as each structure from its first byte, and walked generically with
 * floe_thrift_skip. When it looks like a whole Parquet file ("PAR1" ... len "PAR1", as the
 * conformance seeds are), its real footer, first page header and page indexes are decoded
 * too. A footer that decodes is encoded again and decoded again; the second encoding must
 * equal the first (the codec is idempotent on what it keeps). Errors are expected;
 * crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_thrift/ and the parquet-testing files (targets.conf).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/common.h"
#include "parquet/metadata.h"
#include "thrift/thrift.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ARENA_CAP (64u << 20) /* what a reader gives a footer arena */

static void footer(const uint8_t *p, size_t n, int64_t base) {
    floe_arena a, a2;
    floe_arena_init(&a, 1 << 16);
    floe_arena_init(&a2, 1 << 16);
    a.cap = a2.cap = ARENA_CAP;
    floe_pq_file_metadata md, md2;
    floe_error err;
    if (floe_pq_file_metadata_decode(p, n, base, &a, &md, &err) == 0) {
        (void)floe_pq_file_metadata_check_encryption(&md, &err);
        floe_buf e1, e2;
        floe_buf_init(&e1, 256u << 20);
        floe_buf_init(&e2, 256u << 20);
        if (floe_pq_file_metadata_encode(&md, &e1, &err) == 0) {
            check(floe_pq_file_metadata_decode(e1.data, e1.len, 0, &a2, &md2, &err) == 0);
            check(floe_pq_file_metadata_encode(&md2, &e2, &err) == 0);
            check(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
        }
        floe_buf_free(&e1);
        floe_buf_free(&e2);
    }
    floe_arena_reset(&a);
    floe_arena_reset(&a2);
}

static void page_header(const uint8_t *p, size_t n, int64_t base) {
    floe_pq_page_header ph;
    size_t used = 0;
    floe_error err;
    if (floe_pq_page_header_decode(p, n, base, &ph, &used, &err) == 0) {
        check(used <= n);
        floe_buf e;
        floe_buf_init(&e, 1u << 20);
        (void)floe_pq_page_header_encode(&ph, &e, &err);
        floe_buf_free(&e);
    }
}

static void page_indexes(const uint8_t *p, size_t n, int64_t base) {
    floe_arena a;
    floe_arena_init(&a, 1 << 14);
    a.cap = ARENA_CAP;
    floe_pq_column_index ci;
    floe_pq_offset_index oi;
    floe_error err;
    floe_buf e;
    floe_buf_init(&e, 64u << 20);
    if (floe_pq_column_index_decode(p, n, base, &a, &ci, &err) == 0)
        (void)floe_pq_column_index_encode(&ci, &e, &err);
    e.len = 0;
    if (floe_pq_offset_index_decode(p, n, base, &a, &oi, &err) == 0)
        (void)floe_pq_offset_index_encode(&oi, &e, &err);
    floe_buf_free(&e);
    floe_arena_reset(&a);
}

/* A region [off, off+len) of the file, if it lies inside it. */
static bool region(size_t size, int64_t off, int64_t len, size_t *o, size_t *l) {
    if (off < 0 || len < 0 || (uint64_t)off > size || (uint64_t)len > size - (uint64_t)off)
        return false;
    *o = (size_t)off;
    *l = (size_t)len;
    return true;
}

static void parquet_file(const uint8_t *data, size_t size) {
    if (size < 12 || memcmp(data, "PAR1", 4) != 0 || memcmp(data + size - 4, "PAR1", 4) != 0)
        return;
    uint32_t flen = floe_load_le32(data + size - 8);
    if (flen > size - 12)
        return;
    size_t fstart = size - 8 - flen;
    footer(data + fstart, flen, (int64_t)fstart);
    page_header(data + 4, fstart - 4, 4);

    floe_arena a;
    floe_arena_init(&a, 1 << 16);
    a.cap = ARENA_CAP;
    floe_pq_file_metadata md;
    if (floe_pq_file_metadata_decode(data + fstart, flen, (int64_t)fstart, &a, &md, NULL) == 0) {
        for (size_t g = 0; g < md.n_row_groups && g < 16; g++)
            for (size_t c = 0; c < md.row_groups[g].n_columns && c < 64; c++) {
                const floe_pq_column_chunk *cc = &md.row_groups[g].columns[c];
                size_t o, l;
                if (cc->has_column_index &&
                    region(size, cc->column_index_offset, cc->column_index_length, &o, &l))
                    page_indexes(data + o, l, (int64_t)o);
                if (cc->has_offset_index &&
                    region(size, cc->offset_index_offset, cc->offset_index_length, &o, &l))
                    page_indexes(data + o, l, (int64_t)o);
                if (cc->has_meta_data &&
                    region(size, cc->meta_data.data_page_offset, 1, &o, &l))
                    page_header(data + o, size - o, (int64_t)o);
            }
    }
    floe_arena_reset(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the generic walker: one struct, with small caps so hostile sizes fail fast */
    floe_thrift_reader r;
    floe_error err;
    floe_thrift_reader_init(&r, data, size, &err);
    r.max_collection = 1u << 16;
    r.max_binary = 1u << 20;
    r.what = "fuzz";
    if (floe_thrift_skip(&r, FLOE_THRIFT_STRUCT) == 0)
        check(r.pos <= size);

    footer(data, size, 0);
    page_header(data, size, 0);
    page_indexes(data, size, 0);
    parquet_file(data, size);
    return 0;
}
