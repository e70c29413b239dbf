/*
 * fuzz_line_reader.c - libFuzzer target for the NDJSON line reader (src/convert/
 * line_reader.c): compression sniffing, gzip (concatenated members) and zstd decoding,
 * chunking at line boundaries and the streaming of oversized lines.
 *
 * The input becomes a file in memory (memfd, read through /proc/self/fd/N, so the real
 * open/read path runs) and is read with small chunk and record limits derived from its
 * size. Checked: every chunk ends at a line end (except the input's last line), stays
 * within chunk_size + max_record, and comes in offset order; chunks and oversized lines together
 * account for every decompressed byte (an oversized record goes out without the '\r' that
 * ends its line: counted from the input, or at most one a line when it was compressed); and for uncompressed input each chunk and each
 * oversized piece is exactly the input at the offset it claims, on the line it claims.
 * Errors are expected; crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_line_reader/ (plain, gzip, zstd) and the NDJSON files in
 * tests/data.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "floe/input.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct over_state {
    const uint8_t *input; /* NULL when compressed (no offsets to compare against) */
    size_t size;
    bool open;
    int64_t off, len;
    int64_t covered;      /* bytes of oversized lines, terminators included */
    int64_t nlines;       /* oversized lines (compressed input: each may drop one '\r') */
} over_state;

static int on_oversize(void *ctx, const char *source, int64_t line, int64_t offset,
                       const uint8_t *p, size_t n, bool first, bool last, int64_t total_len) {
    over_state *st = ctx;
    (void)source;
    (void)line;
    if (first) {
        check(!st->open);
        st->open = true;
        st->off = offset;
        st->len = 0;
    }
    check(st->open);
    if (st->input && n) {
        check(st->off >= 0 && (uint64_t)(st->off + st->len) + n <= st->size);
        check(memcmp(st->input + st->off + st->len, p, n) == 0);
    }
    st->len += (int64_t)n;
    check(total_len == st->len);
    if (last) {
        st->open = false;
        st->nlines++;
        /* the record goes out without a '\r' ending its line (before the newline or the
         * end of input): count that byte where the input shows it */
        int64_t end = st->off + st->len;
        if (st->input && end >= 0 && (uint64_t)end < st->size && st->input[end] == '\r')
            st->covered++;
        st->covered += st->len + (p != NULL ? 1 : 0); /* p == NULL: ended by end of input */
    }
    return 0;
}

static int64_t lines_before(const uint8_t *p, size_t n) {
    int64_t k = 1;
    for (size_t i = 0; i < n; i++)
        k += p[i] == '\n';
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz_line_reader", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return 0;
        }
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    bool compressed = (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
                      (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f &&
                       data[3] == 0xfd);
    over_state st = {.input = compressed ? NULL : data, .size = size};
    floe_line_reader_options opts = {.chunk_size = 16 + (size % 97) * 7,
                                     .max_record = 8 + (size % 13) * 5,
                                     .oversize = on_oversize,
                                     .oversize_ctx = &st};
    floe_line_reader *r = NULL;
    floe_error err;
    if (floe_line_reader_open(path, &opts, &r, &err) == 0) {
        floe_chunk ch;
        floe_buf_init(&ch.data, 0);
        int64_t covered = 0, last_off = -1;
        bool ended_unterminated = false;
        int rc;
        while ((rc = floe_line_reader_next(r, &ch, &err)) == 1) {
            check(!ended_unterminated); /* only the very last line may lack its '\n' */
            check(ch.data.len > 0 && ch.data.len <= opts.chunk_size + opts.max_record + 1);
            check(ch.first_offset > last_off);
            last_off = ch.first_offset;
            if (ch.data.data[ch.data.len - 1] != '\n')
                ended_unterminated = true;
            if (st.input) {
                check((uint64_t)ch.first_offset + ch.data.len <= size);
                check(memcmp(data + ch.first_offset, ch.data.data, ch.data.len) == 0);
                check(ch.first_line == lines_before(data, (size_t)ch.first_offset));
            }
            covered += (int64_t)ch.data.len;
        }
        if (rc == 0) {
            check(!st.open);
            int64_t out = floe_line_reader_bytes_out(r);
            if (st.input)
                check(covered + st.covered == out);
            else /* decompressed: the dropped '\r's are not known, at most one a line */
                check(covered + st.covered <= out && out - (covered + st.covered) <= st.nlines);
            if (st.input)
                check(floe_line_reader_bytes_out(r) == (int64_t)size);
        }
        floe_buf_free(&ch.data);
        floe_line_reader_close(r);
    }
    close(fd);
    return 0;
}
