/*
 * avro_writer.c - Avro object container writer (Avro 1.11 "Object Container Files").
 *
 * File = magic "Obj\x01", header metadata as a map<bytes> (avro.schema, avro.codec, then
 * the caller's keys, e.g. Iceberg's schema / partition-spec / format-version / content),
 * the 16-byte sync marker, then blocks: record count (long), byte size after the codec
 * (long), the records, the sync marker.
 *
 * States: open (header already in out) -> appending (records gather in `block`, flushed
 * as one block whenever block_size bytes or block_records records are buffered) ->
 * closed (last block flushed, writer freed). A failed append leaves the block as it was
 * before that record, so the caller may go on or abort.
 */
#include "avro_internal.h"

#include <sys/random.h>
#include <time.h>

struct floe_avro_writer {
    const floe_avro_node *root;
    floe_buf *out;
    floe_codec codec;
    int level;
    size_t block_size;
    size_t block_records;
    uint8_t sync[FLOE_AVRO_SYNC_SIZE];
    floe_buf block;      /* uncompressed records of the open block */
    floe_buf comp;       /* codec output scratch */
    int64_t block_count; /* records in `block` */
    int64_t total;       /* records appended */
    floe_codec_ctx *cctx;
};

const char *floe_avro_codec_avro_name(floe_codec c) {
    switch (c) {
    case FLOE_CODEC_UNCOMPRESSED:
        return "null";
    case FLOE_CODEC_DEFLATE:
        return "deflate";
    case FLOE_CODEC_SNAPPY:
        return "snappy";
    case FLOE_CODEC_ZSTD:
        return "zstandard";
    default:
        return NULL;
    }
}

int floe_avro_codec_from_avro_name(const char *name, size_t len, floe_codec *out) {
    static const struct {
        const char *name;
        floe_codec codec;
    } names[] = {{"null", FLOE_CODEC_UNCOMPRESSED}, {"deflate", FLOE_CODEC_DEFLATE},
                 {"snappy", FLOE_CODEC_SNAPPY},     {"zstandard", FLOE_CODEC_ZSTD},
                 {"zstd", FLOE_CODEC_ZSTD}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) {
            *out = names[i].codec;
            return 0;
        }
    return FLOE_EUNSUPPORTED;
}

static void random_sync(uint8_t *sync) {
    size_t got = 0;
    while (got < FLOE_AVRO_SYNC_SIZE) {
        ssize_t k = getrandom(sync + got, FLOE_AVRO_SYNC_SIZE - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got < FLOE_AVRO_SYNC_SIZE) {
        /* No entropy source: the marker only has to be unlikely to appear in the data. */
        uint64_t x = (uint64_t)floe_now_ns() ^ ((uint64_t)(uintptr_t)sync << 17);
        for (size_t i = got; i < FLOE_AVRO_SYNC_SIZE; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            sync[i] = (uint8_t)(x >> 24);
        }
    }
}

static int meta_entry(floe_buf *out, const char *key, const void *val, size_t n) {
    int rc = floe_avro_encode_bytes(out, key, strlen(key));
    return rc < 0 ? rc : floe_avro_encode_bytes(out, val, n);
}

int floe_avro_writer_open(const floe_avro_schema *schema, const floe_avro_writer_options *opts,
                          floe_buf *out, floe_avro_writer **wout, floe_error *err) {
    static const floe_avro_writer_options defaults = {0};
    int rc = 0;
    floe_buf schema_json;
    floe_buf_init(&schema_json, 0);
    if (!opts)
        opts = &defaults;
    const char *codec_name = floe_avro_codec_avro_name(opts->codec);
    if (!codec_name)
        return floe_error_set(err, FLOE_EUNSUPPORTED, "avro writer: codec %s is not an Avro "
                              "codec", floe_codec_name(opts->codec));
    for (size_t i = 0; i < opts->n_meta; i++)
        if (!opts->meta[i].key || strncmp(opts->meta[i].key, "avro.", 5) == 0)
            return floe_error_set(err, FLOE_EINVALID, "avro writer: metadata key %s is "
                                  "reserved", opts->meta[i].key ? opts->meta[i].key : "(null)");
    floe_avro_writer *w = floe_calloc(1, sizeof *w);
    if (!w)
        return floe_error_set(err, FLOE_ENOMEM, "avro writer: out of memory");
    w->root = floe_avro_schema_root(schema);
    w->out = out;
    w->codec = opts->codec;
    w->level = opts->level;
    w->block_size = opts->block_size ? opts->block_size : 64 * 1024;
    w->block_records = opts->block_records;
    floe_buf_init(&w->block, 0);
    floe_buf_init(&w->comp, 0);
    if (opts->sync)
        memcpy(w->sync, opts->sync, FLOE_AVRO_SYNC_SIZE);
    else
        random_sync(w->sync);
    if (w->codec != FLOE_CODEC_UNCOMPRESSED && !(w->cctx = floe_codec_ctx_new()))
        FLOE_FAIL(err, FLOE_ENOMEM, "avro writer: out of memory");

    FLOE_CHECK(floe_avro_schema_to_json(schema, &schema_json, err));
    size_t start = out->len;
    int brc = floe_buf_append(out, FLOE_AVRO_MAGIC, 4);
    if (brc == 0)
        brc = floe_avro_encode_long(out, (int64_t)(2 + opts->n_meta));
    if (brc == 0)
        brc = meta_entry(out, "avro.schema", schema_json.data, schema_json.len);
    if (brc == 0)
        brc = meta_entry(out, "avro.codec", codec_name, strlen(codec_name));
    for (size_t i = 0; brc == 0 && i < opts->n_meta; i++)
        brc = meta_entry(out, opts->meta[i].key, opts->meta[i].value, opts->meta[i].value_len);
    if (brc == 0)
        brc = floe_avro_encode_long(out, 0);
    if (brc == 0)
        brc = floe_buf_append(out, w->sync, FLOE_AVRO_SYNC_SIZE);
    if (brc < 0) {
        floe_buf_truncate(out, start);
        FLOE_FAIL(err, brc, "avro writer: header: %s", floe_strerror(brc));
    }
done:
    floe_buf_free(&schema_json);
    if (rc < 0) {
        floe_avro_writer_abort(w);
        return rc;
    }
    *wout = w;
    return 0;
}

int floe_avro_writer_flush(floe_avro_writer *w, floe_error *err) {
    int rc = 0;
    if (w->block_count == 0)
        return 0;
    const uint8_t *data = w->block.data;
    size_t n = w->block.len;
    if (w->codec != FLOE_CODEC_UNCOMPRESSED) {
        floe_buf_reset(&w->comp);
        rc = floe_codec_compress(w->cctx, w->codec, w->level, w->block.data, w->block.len,
                                 &w->comp, err);
        if (rc < 0) {
            floe_error_prefix(err, "avro writer: block %lld: ", (long long)w->total);
            return rc;
        }
        if (w->codec == FLOE_CODEC_SNAPPY) {
            /* Avro's snappy: the compressed block, then the big-endian CRC-32 of the
             * uncompressed data. */
            uint32_t crc = floe_crc32(0, w->block.data, w->block.len);
            uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                             (uint8_t)crc};
            if ((rc = floe_buf_append(&w->comp, be, 4)) < 0)
                return floe_error_set(err, rc, "avro writer: %s", floe_strerror(rc));
        }
        data = w->comp.data;
        n = w->comp.len;
    }
    size_t start = w->out->len;
    rc = floe_avro_encode_long(w->out, w->block_count);
    if (rc == 0)
        rc = floe_avro_encode_long(w->out, (int64_t)n);
    if (rc == 0 && n)
        rc = floe_buf_append(w->out, data, n);
    if (rc == 0)
        rc = floe_buf_append(w->out, w->sync, FLOE_AVRO_SYNC_SIZE);
    if (rc < 0) {
        floe_buf_truncate(w->out, start);
        return floe_error_set(err, rc, "avro writer: block: %s", floe_strerror(rc));
    }
    floe_buf_reset(&w->block);
    w->block_count = 0;
    return 0;
}

static int after_append(floe_avro_writer *w, floe_error *err) {
    w->block_count++;
    w->total++;
    if (w->block.len >= w->block_size ||
        (w->block_records && (size_t)w->block_count >= w->block_records))
        return floe_avro_writer_flush(w, err);
    return 0;
}

int floe_avro_writer_append(floe_avro_writer *w, const floe_avro_value *v, floe_error *err) {
    size_t mark = w->block.len;
    int rc = floe_avro_value_encode(w->root, v, &w->block, err);
    if (rc < 0) {
        floe_buf_truncate(&w->block, mark);
        floe_error_prefix(err, "avro writer: record %lld: ", (long long)w->total);
        return rc;
    }
    return after_append(w, err);
}

int floe_avro_writer_append_encoded(floe_avro_writer *w, const void *datum, size_t n,
                                    floe_error *err) {
    int rc = n ? floe_buf_append(&w->block, datum, n) : 0;
    if (rc < 0)
        return floe_error_set(err, rc, "avro writer: %s", floe_strerror(rc));
    return after_append(w, err);
}

int64_t floe_avro_writer_records(const floe_avro_writer *w) {
    return w->total;
}

int floe_avro_writer_close(floe_avro_writer *w, floe_error *err) {
    int rc = floe_avro_writer_flush(w, err);
    floe_avro_writer_abort(w);
    return rc;
}

void floe_avro_writer_abort(floe_avro_writer *w) {
    if (!w)
        return;
    floe_buf_free(&w->block);
    floe_buf_free(&w->comp);
    floe_codec_ctx_free(w->cctx);
    floe_free(w);
}

int floe_avro_write_uri(floe_io *io, const char *uri, const floe_buf *file, const floe_output_options *opts,
                        floe_error *err) {
    return floe_io_write_all(io, uri, file->data, file->len, opts, err);
}
