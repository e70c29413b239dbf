/*
 * line_reader.c - NDJSON input as chunks of whole lines (see floe/input.h).
 *
 * Layers: raw bytes (read(2)) -> decompressor (none, gzip with concatenated members, zstd
 * frames, or LZ4 frames: floe serve's landing files) -> line splitter. The splitter keeps
 * a carry buffer holding the partial last line of the previous read; a chunk is cut at
 * the last '\n' once it holds at least chunk_size bytes. A line that grows past max_record
 * is switched to "oversize" mode: what is buffered goes to the callback, and the rest of
 * the line streams through it until its '\n'.
 *
 * Map mode (opts.map, a plain regular file): the file is mapped once and chunks are
 * windows of the mapping, so the bytes are never copied by read(2) or by us, and lines
 * are not scanned one by one: a chunk ends at the first '\n' from chunk_size bytes on
 * (the same boundary read mode picks). Line numbers are not counted here (that would be
 * one more pass over every byte): a chunk that directly follows the previous one has
 * first_line 0 and the consumer, which counts the lines it shreds, numbers it; only
 * after a streamed oversized line does the reader count (lazily, from where it last
 * counted) to give that line and the next chunk their numbers. Each chunk holds a
 * reference on the mapping, so chunks outlive the reader; releasing a chunk drops its
 * pages from the process (they stay in the page cache), which keeps the resident set to
 * the chunks in flight whatever the file size.
 *
 * Memory input (opts.mem): the caller's bytes in map mode, a borrowed floe_input_map
 * (never unmapped, no page advised: the caller owns and populates them), never sniffed
 * for compression.
 */
#include "floe/input.h"

#include "floe/io.h"
#include "io/io_faults.h"
#include "codec/zstream.h"
#include "floe/mapguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RAW_BUF (256u * 1024)
#define READ_AHEAD (64u * 1024)

#define OVERSIZE_PIECE ((size_t)1 << 20)

enum comp { COMP_NONE, COMP_GZIP, COMP_ZSTD, COMP_LZ4 };

/* A mapped input file, shared by the reader and the chunks it handed out. */
struct floe_input_map {
    uint8_t *base;
    size_t len;
    atomic_int refs;
    floe_map_guard *guard; /* a file that shrinks reads zeros and sets the guard's flag */
    bool borrowed;         /* the caller's memory (opts.mem): never unmapped nor advised */
};

static void map_unref(floe_input_map *m) {
    if (m && atomic_fetch_sub(&m->refs, 1) == 1) {
        floe_map_guard_remove(m->guard);
        if (!m->borrowed)
            munmap(m->base, m->len);
        floe_free(m);
    }
}

bool floe_chunk_input_shrank(const floe_chunk *c) {
    return c && c->map && floe_map_guard_hit(c->map->guard);
}

void floe_chunk_release(floe_chunk *c) {
    if (!c || !c->map)
        return;
    floe_input_map *m = c->map;
    if (c->len && !m->borrowed) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        size_t lo = (size_t)(c->bytes - m->base) / pg * pg;
        size_t hi = (size_t)(c->bytes - m->base) + c->len;
        hi = hi + pg - 1 < m->len ? (hi + pg - 1) / pg * pg : m->len;
        /* read-only private mapping never written: a later touch refaults the file */
        madvise(m->base + lo, hi - lo, MADV_DONTNEED);
    }
    c->map = NULL;
    c->bytes = NULL;
    c->len = 0;
    map_unref(m);
}

struct floe_line_reader {
    char *source;
    int fd;
    bool own_fd;
    floe_line_reader_options opts;
    enum comp comp;
    floe_zstream *dz;      /* gzip, zstd, lz4 */
    uint8_t *raw;          /* compressed input buffer */
    size_t raw_len, raw_pos;
    bool raw_eof;
    bool out_eof;
    floe_buf carry;        /* decompressed bytes not yet handed out */
    size_t carry_pos;      /* start of unconsumed bytes in carry */
    int64_t line_no;       /* line number of carry[carry_pos] */
    int64_t offset;        /* decompressed offset of carry[carry_pos] */
    int64_t bytes_in, bytes_out;
    int64_t oversized;
    int64_t seq;
    size_t scanned;        /* bytes of complete lines checked from carry_pos on */
    int64_t scanned_lines; /* lines in them */
    bool in_oversize;      /* streaming the tail of an oversized line */
    bool over_cr;          /* a '\r' that ended the last piece, held back: the record's
                            * own byte only if more than its newline follows */
    int64_t over_line, over_offset, over_len;
    /* map mode */
    floe_input_map *map;
    size_t mpos;           /* start of the next chunk */
    size_t counted_pos;    /* lines are counted up to here... */
    int64_t counted_lines; /* ...and there are this many before it */
    int64_t next_first_line; /* the next chunk's first line when known, else 0 */
    bool mem_final;        /* growing memory input: mem_more said it is complete */
};

/* read(2) into dst, retrying on EINTR; *got = 0 at end of input. */
static int read_some(floe_line_reader *r, uint8_t *dst, size_t room, size_t *got,
                     floe_error *err) {
    for (;;) {
        int fault = floe_io_fault_hit(r->opts.io, FLOE_IO_FAULT_READ); /* tests only */
        ssize_t n = fault ? (errno = fault, -1) : read(r->fd, dst, room);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return floe_error_errno(err, errno, "read %s", r->source);
        }
        r->bytes_in += n;
        *got = (size_t)n;
        return 0;
    }
}

static int fill_raw(floe_line_reader *r, floe_error *err) {
    if (r->raw_pos < r->raw_len || r->raw_eof)
        return 0;
    size_t n;
    FLOE_FORWARD_IF_ERROR(read_some(r, r->raw, RAW_BUF, &n, err));
    r->raw_len = n;
    r->raw_pos = 0;
    if (n == 0)
        r->raw_eof = true;
    return 0;
}

/* Append up to `want` decompressed bytes to carry. Sets out_eof at the end. The carry
 * (which hand_out trades with the chunks) is grown to exactly a chunk and its read-ahead:
 * doubling made every chunk's buffer twice that (two threads at a row group of 4 MB:
 * 7 buffers of 8 MiB, in huge pages mostly resident); only a line that crosses the
 * chunk's end past the read-ahead grows it further, by doubling. */
static int decompress_more(floe_line_reader *r, size_t want, floe_error *err) {
    int rc;
    bool exact = r->carry.len + want <= r->opts.chunk_size + READ_AHEAD;
    if ((rc = exact ? floe_buf_reserve_exact(&r->carry, want)
                    : floe_buf_reserve(&r->carry, want)) < 0)
        return floe_error_set(err, rc, "%s: out of memory", r->source);
    size_t produced = 0;
    while (produced == 0 && !r->out_eof) {
        uint8_t *dst = r->carry.data + r->carry.len;
        size_t room = want;
        if (r->comp == COMP_NONE) {
            if (r->raw_pos < r->raw_len) { /* what the format sniffing read */
                size_t n = r->raw_len - r->raw_pos;
                if (n > room)
                    n = room;
                memcpy(dst, r->raw + r->raw_pos, n);
                r->raw_pos += n;
                produced = n;
            } else if (r->raw_eof) {
                r->out_eof = true;
            } else { /* plain input goes straight into carry: no staging copy */
                FLOE_FORWARD_IF_ERROR(read_some(r, dst, room, &produced, err));
                if (produced == 0)
                    r->raw_eof = r->out_eof = true;
            }
            continue;
        }
        FLOE_FORWARD_IF_ERROR(fill_raw(r, err));
        if (r->raw_eof && r->raw_pos >= r->raw_len) {
            /* input ended: clean only between gzip members or frames */
            if (!floe_zstream_complete(r->dz)) {
                if (r->comp == COMP_GZIP)
                    return floe_error_at(err, FLOE_ECORRUPT, r->bytes_in,
                                         "%s: gzip stream ends in the middle of a member",
                                         r->source);
                return floe_error_at(err, FLOE_ECORRUPT, r->bytes_in, "%s: %s stream is truncated",
                                     r->source, floe_zstream_name(r->dz));
            }
            r->out_eof = true;
            break;
        }
        size_t used = 0;
        floe_error zerr;
        floe_error_clear(&zerr);
        int zrc = floe_zstream_decode(r->dz, r->raw + r->raw_pos, r->raw_len - r->raw_pos, &used,
                                      dst, room, &produced, &zerr);
        if (zrc < 0) {
            /* "<codec>: <detail>" from the decoder */
            const char *name = floe_zstream_name(r->dz);
            size_t nl = strlen(name);
            if (zrc == FLOE_ECORRUPT && !strncmp(zerr.msg, name, nl) && zerr.msg[nl] == ':')
                return floe_error_at(err, zrc, r->bytes_in, "%s: bad %s data:%s", r->source,
                                     name, zerr.msg + nl + 1);
            return floe_error_at(err, zrc, r->bytes_in, "%s: %s", r->source, zerr.msg);
        }
        r->raw_pos += used;
    }
    r->carry.len += produced;
    r->bytes_out += (int64_t)produced;
    return 0;
}

/* Map mode: map a plain regular file. Anything else (compressed, empty, not regular, no
 * SIGBUS handler for guarded mappings, or mmap failing) stays with read(2); nothing has been read yet either way. Mapping counts
 * as reading the file for the fault-injection hook. */
static int try_map(floe_line_reader *r, floe_error *err) {
    struct stat st;
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2)
        return 0;
    if (!floe_map_guard_installed())
        return 0; /* unguarded, a file cut short would raise SIGBUS: read it instead */
    int fault = floe_io_fault_hit(r->opts.io, FLOE_IO_FAULT_READ); /* tests only */
    if (fault)
        return floe_error_errno(err, fault, "read %s", r->source);
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, r->fd, 0);
    if (m == MAP_FAILED)
        return 0;
    /* guarded before the first touch: the file may shrink at any time */
    floe_map_guard *g = NULL;
    if (floe_map_guard_add(m, len, &g, NULL) < 0) {
        munmap(m, len);
        return 0;
    }
    const uint8_t *b = m;
    floe_input_map *im = NULL;
    if ((len >= 2 && b[0] == 0x1f && b[1] == 0x8b) ||
        (len >= 4 && floe_load_le32(b) == 0xFD2FB528u) ||
        (len >= 4 && floe_load_le32(b) == 0x184D2204u) || /* gzip, zstd, LZ4: decoded */
        !(im = floe_malloc(sizeof *im))) {
        floe_map_guard_remove(g);
        munmap(m, len);
        return 0;
    }
    im->guard = g;
    im->borrowed = false;
    im->base = m;
    im->len = len;
    atomic_init(&im->refs, 1);
    madvise(m, len, MADV_SEQUENTIAL);
    r->map = im;
    r->next_first_line = 1;
    return 0;
}

int floe_line_reader_open(const char *path, const floe_line_reader_options *opts,
                          floe_line_reader **out, floe_error *err) {
    floe_line_reader *r = floe_calloc(1, sizeof *r);
    if (!r)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    r->fd = -1;
    if (opts)
        r->opts = *opts;
    if (!r->opts.chunk_size)
        r->opts.chunk_size = 4u << 20;
    if (!r->opts.max_record)
        r->opts.max_record = 1u << 20;
    r->line_no = 1;
    floe_buf_init(&r->carry, 0);
    bool is_stdin = !strcmp(path, "-");
    r->source = floe_strdup(is_stdin && !r->opts.mem ? "<stdin>" : path);
    if (r->opts.mem) {
        /* memory input: plain lines as they are (whatever their first bytes), map mode */
        if (!r->source || !(r->map = floe_calloc(1, sizeof *r->map)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        r->map->base = (uint8_t *)(uintptr_t)r->opts.mem;
        r->map->len = r->opts.mem_len;
        r->map->borrowed = true;
        atomic_init(&r->map->refs, 1);
        r->next_first_line = 1;
        *out = r;
        return 0;
    }
    r->raw = floe_malloc(RAW_BUF);
    if (!r->source || !r->raw)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (is_stdin) {
        r->fd = STDIN_FILENO;
    } else {
        int fault = floe_io_fault_hit(r->opts.io, FLOE_IO_FAULT_OPEN); /* tests only */
        r->fd = fault ? (errno = fault, -1) : open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            rc = floe_error_errno(err, errno, "open %s", path);
            goto done;
        }
        r->own_fd = true;
        if (r->opts.map)
            FLOE_CHECK(try_map(r, err));
        if (r->map) {
            *out = r;
            return 0;
        }
    }
    FLOE_CHECK(fill_raw(r, err));
    /* sniff: gzip 1f 8b, zstd 28 b5 2f fd, lz4 04 22 4d 18 (fewer bytes than a magic:
     * plain) */
    if (r->raw_len >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b)
        r->comp = COMP_GZIP;
    else if (r->raw_len >= 4 && floe_load_le32(r->raw) == 0xFD2FB528u)
        r->comp = COMP_ZSTD;
    else if (r->raw_len >= 4 && floe_load_le32(r->raw) == 0x184D2204u)
        r->comp = COMP_LZ4; /* LZ4 frames: window 64 KiB, blocks up to 4 MiB by the format */
    if (r->comp != COMP_NONE) {
        /* the window a hostile zstd stream may ask for is bounded (128 MiB) */
        floe_zstream_options zo = {.kind = r->comp == COMP_GZIP   ? FLOE_ZSTREAM_GZIP
                                           : r->comp == COMP_ZSTD ? FLOE_ZSTREAM_ZSTD
                                                                  : FLOE_ZSTREAM_LZ4,
                                   .zstd_window_log_max = 27};
        floe_error zerr;
        floe_error_clear(&zerr);
        if (floe_zstream_new(&zo, &r->dz, &zerr) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "%s: cannot start %s decoder", r->source,
                      r->comp == COMP_GZIP ? "gzip" : r->comp == COMP_ZSTD ? "zstd" : "lz4");
    }
    *out = r;
    return 0;
done:
    floe_line_reader_close(r);
    return rc;
}

static void compact_carry(floe_line_reader *r) {
    if (r->carry_pos == 0)
        return;
    size_t rest = r->carry.len - r->carry_pos;
    memmove(r->carry.data, r->carry.data + r->carry_pos, rest);
    r->carry.len = rest;
    r->carry_pos = 0;
}

/* Stream the rest of an oversized line to the callback until its newline. */
/* The length of the record on a line of n bytes at p (its newline not counted): a '\r'
 * that ends the line is not the record's (floe/json.h: the shredder ignores it), so a
 * record of max_record bytes is kept whether its line ends in "\n" or "\r\n". */
static inline size_t record_len(const uint8_t *p, size_t n) {
    return n && p[n - 1] == '\r' ? n - 1 : n;
}

static int drain_oversize(floe_line_reader *r, floe_error *err) {
    static const uint8_t cr = '\r';
    while (r->in_oversize) {
        if (r->carry_pos >= r->carry.len) {
            r->carry.len = r->carry_pos = 0;
            FLOE_FORWARD_IF_ERROR(decompress_more(r, RAW_BUF, err));
            if (r->carry.len == 0) { /* end of input ends the line (a held '\r' with it) */
                r->in_oversize = false;
                r->over_cr = false;
                if (r->opts.oversize(r->opts.oversize_ctx, r->source, r->over_line,
                                     r->over_offset, NULL, 0, false, true, r->over_len))
                    return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
                break;
            }
        }
        const uint8_t *p = r->carry.data + r->carry_pos;
        size_t n = r->carry.len - r->carry_pos;
        const uint8_t *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        bool last = nl != NULL;
        if (r->over_cr && take > 0) { /* bytes follow the held '\r': it was the record's */
            r->over_len++;
            if (r->opts.oversize(r->opts.oversize_ctx, r->source, r->over_line,
                                 r->over_offset, &cr, 1, false, false, r->over_len))
                return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
        }
        r->over_cr = false;
        size_t emit = take;
        if (emit && p[emit - 1] == '\r') { /* before the newline: not the record's */
            emit--;
            r->over_cr = !last;
        }
        r->over_len += (int64_t)emit;
        if (r->opts.oversize(r->opts.oversize_ctx, r->source, r->over_line, r->over_offset, p,
                             emit, false, last, r->over_len))
            return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
        r->carry_pos += take + (last ? 1 : 0);
        r->offset += (int64_t)(take + (last ? 1 : 0));
        if (last) {
            r->in_oversize = false;
            r->line_no++;
        }
    }
    return 0;
}

/* Hand out the complete lines scanned so far (carry[carry_pos, +scanned)). When they start
 * the carry buffer and the chunk is empty, the buffers trade places: the chunk takes the
 * carry's storage as is and only the unscanned tail (a partial line and the read-ahead)
 * is copied into the chunk's old storage, which becomes the carry. So the bulk of the
 * input is copied once, by read(2) or the decompressor, never by us. */
static int hand_out(floe_line_reader *r, floe_chunk *chunk, floe_error *err) {
    int rc;
    chunk->first_line = r->line_no;
    chunk->first_offset = r->offset;
    size_t take = r->scanned;
    if (r->carry_pos == 0 && chunk->data.len == 0) {
        size_t rest = r->carry.len - take;
        floe_buf spare = chunk->data;
        if ((rc = floe_buf_reserve(&spare, rest)) < 0) {
            chunk->data = spare;
            return floe_error_set(err, rc, "%s: out of memory", r->source);
        }
        if (rest)
            memcpy(spare.data, r->carry.data + take, rest);
        spare.len = rest;
        chunk->data = r->carry;
        chunk->data.len = take;
        r->carry = spare;
    } else {
        if ((rc = floe_buf_append(&chunk->data, r->carry.data + r->carry_pos, take)) < 0)
            return floe_error_set(err, rc, "%s: out of memory", r->source);
        r->carry_pos += take;
    }
    r->line_no += r->scanned_lines;
    r->offset += (int64_t)take;
    r->scanned = 0;
    r->scanned_lines = 0;
    return 1;
}

static int next_read(floe_line_reader *r, floe_chunk *chunk, floe_error *err) {
    floe_buf_reset(&chunk->data);
    chunk->seq = r->seq++;
    chunk->first_line = r->line_no;
    chunk->first_offset = r->offset;
    for (;;) {
        if (r->in_oversize)
            FLOE_FORWARD_IF_ERROR(drain_oversize(r, err));
        /* extend the scan over the complete lines in carry (carry.data is NULL until the
         * first bytes arrive, and NULL + 0 is undefined); lines stay in place until a
         * chunk's worth is scanned */
        const uint8_t *p = r->carry.data ? r->carry.data + r->carry_pos : NULL;
        size_t n = r->carry.len - r->carry_pos;
        while (r->scanned < n) {
            const uint8_t *nl = memchr(p + r->scanned, '\n', n - r->scanned);
            if (!nl)
                break;
            size_t line_len = (size_t)(nl - (p + r->scanned));
            if (record_len(p + r->scanned, line_len) > r->opts.max_record) {
                /* hand out what precedes, then stream this line to the callback */
                if (r->scanned > 0)
                    return hand_out(r, chunk, err);
                if (!r->opts.oversize)
                    return floe_error_at(err, FLOE_ELIMIT, r->offset,
                                         "%s: line %lld: record of %zu bytes exceeds the limit "
                                         "of %zu bytes",
                                         r->source, (long long)r->line_no, line_len,
                                         r->opts.max_record);
                r->oversized++;
                size_t rec = record_len(p, line_len);
                if (r->opts.oversize(r->opts.oversize_ctx, r->source, r->line_no, r->offset, p,
                                     rec, true, true, (int64_t)rec))
                    return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
                r->carry_pos += line_len + 1;
                r->offset += (int64_t)line_len + 1;
                r->line_no++;
                p = r->carry.data + r->carry_pos;
                n = r->carry.len - r->carry_pos;
                continue;
            }
            r->scanned += line_len + 1;
            r->scanned_lines++;
            if (r->scanned >= r->opts.chunk_size)
                return hand_out(r, chunk, err);
        }
        /* the unterminated tail: oversized already? (a '\r' ending it may be the one
         * before the newline: then a byte more decides) */
        size_t tail = n - r->scanned;
        /* (p is NULL while the carry is empty: record_len only on a tail that has bytes) */
        if (tail > r->opts.max_record && record_len(p + r->scanned, tail) > r->opts.max_record) {
            if (r->scanned > 0)
                return hand_out(r, chunk, err);
            if (!r->opts.oversize)
                return floe_error_at(err, FLOE_ELIMIT, r->offset,
                                     "%s: line %lld: record exceeds the limit of %zu bytes",
                                     r->source, (long long)r->line_no, r->opts.max_record);
            r->oversized++;
            r->in_oversize = true;
            r->over_line = r->line_no;
            r->over_offset = r->offset;
            size_t emit = record_len(p, tail);
            r->over_cr = emit < tail;
            r->over_len = (int64_t)emit;
            if (r->opts.oversize(r->opts.oversize_ctx, r->source, r->line_no, r->offset, p,
                                 emit, true, false, r->over_len))
                return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
            r->offset += (int64_t)tail;
            r->carry_pos = r->carry.len;
            compact_carry(r);
            continue;
        }
        if (r->out_eof) {
            if (tail > 0) { /* last line without '\n' */
                r->scanned += tail;
                r->scanned_lines++;
            }
            return r->scanned > 0 ? hand_out(r, chunk, err) : 0;
        }
        /* read more, straight into carry: enough to complete a chunk plus some read-ahead
         * for the line that crosses the chunk boundary */
        compact_carry(r);
        size_t have = r->carry.len;
        size_t want = r->opts.chunk_size + READ_AHEAD > have
                          ? r->opts.chunk_size + READ_AHEAD - have
                          : READ_AHEAD;
        FLOE_FORWARD_IF_ERROR(decompress_more(r, want, err));
    }
}

/* Map mode: the line number of the line that starts at pos (counting lazily). */
static int64_t line_at(floe_line_reader *r, size_t pos) {
    const uint8_t *b = r->map->base;
    size_t i = r->counted_pos;
    int64_t n = r->counted_lines;
    while (i < pos) {
        const uint8_t *nl = memchr(b + i, '\n', pos - i);
        if (!nl)
            break;
        n++;
        i = (size_t)(nl - b) + 1;
    }
    r->counted_pos = pos;
    r->counted_lines = n;
    return n + 1;
}

/* Map mode: whether the file shrank under the mapping (what was scanned read zeros). */
static int check_shrank(floe_line_reader *r, size_t pos, floe_error *err) {
    if (!floe_map_guard_hit(r->map->guard))
        return 0;
    return floe_error_at(err, FLOE_EIO, (int64_t)pos,
                         "%s: the file shrank, or a read of it failed, while it was mapped", r->source);
}

/* Map mode: stream the oversized line at mpos to the callback, in pieces, dropping each
 * piece's pages once passed on. */
static int stream_mapped_oversize(floe_line_reader *r, size_t nl_or_end, floe_error *err) {
    const uint8_t *b = r->map->base;
    size_t start = r->mpos, size = r->map->len;
    int64_t line = line_at(r, start);
    size_t cend = start + record_len(b + start, nl_or_end - start); /* without its '\r' */
    size_t total = cend - start;
    if (!r->opts.oversize)
        return floe_error_at(err, FLOE_ELIMIT, (int64_t)start,
                             "%s: line %lld: record of %zu bytes exceeds the limit of %zu bytes",
                             r->source, (long long)line, total, r->opts.max_record);
    r->oversized++;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t at = start; at == start || at < cend;) {
        size_t n = cend - at < OVERSIZE_PIECE ? cend - at : OVERSIZE_PIECE;
        bool first = at == start, last = at + n == cend;
        FLOE_FORWARD_IF_ERROR(check_shrank(r, at, err));
        if (r->opts.oversize(r->opts.oversize_ctx, r->source, line, (int64_t)start, b + at, n,
                             first, last, (int64_t)total))
            return floe_error_set(err, FLOE_ECANCELLED, "%s: cancelled", r->source);
        size_t lo = at / pg * pg, hi = (at + n) / pg * pg;
        if (hi > lo && !r->map->borrowed)
            madvise(r->map->base + lo, hi - lo, MADV_DONTNEED);
        at += n;
        if (n == 0)
            break;
    }
    size_t next = nl_or_end < size ? nl_or_end + 1 : size;
    r->bytes_in += (int64_t)(next - start);
    r->bytes_out += (int64_t)(next - start);
    r->mpos = next;
    r->counted_pos = next;
    r->counted_lines = line;
    r->next_first_line = line + 1;
    return 0;
}

/* Map mode: the next chunk is a window [mpos, end) of the mapping. */
static int next_mapped(floe_line_reader *r, floe_chunk *chunk, floe_error *err) {
    const uint8_t *b = r->map->base;
    size_t cs = r->opts.chunk_size, maxrec = r->opts.max_record;
    for (;;) {
        size_t pos = r->mpos;
        if (r->opts.mem_more && !r->mem_final) {
            /* growing memory input: a whole chunk from pos on, or the end of the input */
            bool fin = false;
            int64_t have = r->opts.mem_more(r->opts.mem_more_ctx, pos + cs + 1, &fin);
            if (have < 0)
                return floe_error_set(err, (int)have, "%s: input given up", r->source);
            if ((size_t)have > r->map->len)
                r->map->len = (size_t)have;
            r->mem_final = fin;
        }
        size_t size = r->map->len;
        if (pos >= size)
            return 0;
        size_t end;
        if (size - pos <= cs) {
            end = size;
            /* a last line longer than the limit that starts the window is streamed, as
             * read mode would (one inside the window is left to the consumer) */
            if (record_len(b + pos, size - pos) > maxrec && !memchr(b + pos, '\n', size - pos)) {
                FLOE_FORWARD_IF_ERROR(stream_mapped_oversize(r, size, err));
                continue;
            }
        } else {
            /* the line holding byte pos + cs - 1 ends the chunk; check its length */
            size_t from = pos + cs - 1;
            const uint8_t *ls = memrchr(b + pos, '\n', from - pos);
            size_t start = ls ? (size_t)(ls - b) + 1 : pos;
            size_t room = size - from;
            /* a line whose record (without a '\r' before the newline) has at most maxrec
             * bytes has its newline within maxrec + 1 bytes of start */
            size_t span = from - start;
            size_t limit = span < maxrec + 2 ? maxrec + 2 - span : 0;
            const uint8_t *nl = limit ? memchr(b + from, '\n', room < limit ? room : limit) : NULL;
            bool over = nl ? record_len(b + start, (size_t)(nl - b) - start) > maxrec
                           : room > limit || record_len(b + start, size - start) > maxrec;
            if (over) {
                /* that line is oversized: end the chunk before it, or stream it */
                if (start > pos) {
                    end = start;
                } else {
                    const uint8_t *e = memchr(b + from, '\n', room);
                    FLOE_FORWARD_IF_ERROR(
                        stream_mapped_oversize(r, e ? (size_t)(e - b) : size, err));
                    continue;
                }
            } else {
                end = nl ? (size_t)(nl - b) + 1 : size;
            }
        }
        FLOE_FORWARD_IF_ERROR(check_shrank(r, pos, err));
        floe_chunk_release(chunk);
#ifdef MADV_POPULATE_READ
        if (!r->map->borrowed) {
            /* map the window's pages in one call: faulting them in one by one (16 at a
             * time with the kernel's fault-around) was 18% of an iot convert's page
             * faults. A failure (an old kernel; past the end of a file that shrank) leaves
             * them to fault in as before; the guard reports a shrunken file. */
            size_t pg = (size_t)sysconf(_SC_PAGESIZE), lo = pos / pg * pg;
            (void)madvise(r->map->base + lo, end - lo, MADV_POPULATE_READ);
        }
#endif
        chunk->bytes = b + pos;
        chunk->len = end - pos;
        chunk->first_offset = (int64_t)pos;
        chunk->first_line = r->next_first_line;
        chunk->seq = r->seq++;
        atomic_fetch_add(&r->map->refs, 1);
        chunk->map = r->map;
        r->next_first_line = 0;
        r->bytes_in += (int64_t)(end - pos);
        r->bytes_out += (int64_t)(end - pos);
        r->mpos = end;
        return 1;
    }
}

int floe_line_reader_next(floe_line_reader *r, floe_chunk *chunk, floe_error *err) {
    if (r->map) {
        floe_chunk_release(chunk);
        return next_mapped(r, chunk, err);
    }
    chunk->map = NULL; /* read mode leaves it untouched otherwise (callers may not zero it) */
    int rc = next_read(r, chunk, err);
    if (rc > 0) {
        chunk->bytes = chunk->data.data;
        chunk->len = chunk->data.len;
    }
    return rc;
}

bool floe_line_reader_mapped(const floe_line_reader *r) { return r->map != NULL; }

const char *floe_line_reader_source(const floe_line_reader *r) { return r->source; }
int64_t floe_line_reader_bytes_in(const floe_line_reader *r) { return r->bytes_in; }
int64_t floe_line_reader_input_pos(const floe_line_reader *r) {
    return r->map ? (int64_t)r->mpos : r->bytes_in;
}
int64_t floe_line_reader_bytes_out(const floe_line_reader *r) { return r->bytes_out; }
int64_t floe_line_reader_oversized(const floe_line_reader *r) { return r->oversized; }

void floe_line_reader_close(floe_line_reader *r) {
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    floe_zstream_free(r->dz);
    map_unref(r->map);
    floe_buf_free(&r->carry);
    floe_free(r->raw);
    floe_free(r->source);
    floe_free(r);
}
