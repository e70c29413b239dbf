/*
 * local.c - the local-filesystem FileIO backend.
 *
 * An output is written to a temporary sibling ("<name>.floe-tmp-<pid>-<n>") and published
 * at close by rename (or by link() when the caller asked for create-if-absent, which is
 * atomic and fails if the name exists). With fsync on, the file is fsynced before it is
 * published and its directory after, so a published file survives a crash. An aborted or
 * crashed output leaves at most a temporary file, never a partial file under the real
 * name.
 *
 * Direct outputs (floe_output_options.direct) gather the bytes in aligned blocks of
 * DIRECT_BLOCK bytes (1 MiB, see io_internal.h) and write each full block with O_DIRECT, at an offset that is a
 * multiple of the block, so large files skip the copy into the page cache (on a virtual
 * machine that copy, and the page allocation behind it, cost as much as compressing the
 * data). An O_DIRECT write waits for the device, so a full block is handed to POSIX AIO
 * (aio_write) and the caller fills the second block meanwhile; it waits for the block in
 * flight only when the next one is full, or at close or abort (the buffer must outlive
 * the write). An asynchronous write's error is thus reported by the next write, close
 * or abort-free path, never lost. The last, partial block goes through the page cache
 * (O_DIRECT is switched off first), so files smaller than a block never touch O_DIRECT.
 * A file system that refuses O_DIRECT (fcntl or the write fails with EINVAL) gets
 * buffered writes instead: same bytes, the choice is never visible in the file. Every
 * write names its offset (pwrite), as the block in flight does not move a file position.
 */
#include <aio.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "floe/mapguard.h"
#include "io_internal.h"

#define OUT_BUF_SIZE (1u << 20)
/* Direct outputs: bytes per O_DIRECT write, and the alignment of its buffer (a multiple
 * of every logical block size in use, and of the page size). */
#define DIRECT_BLOCK FLOE_IO_DIRECT_BLOCK
#define DIRECT_ALIGN ((size_t)4096)

/* The error is already set by the expression; record it and unwind. */
#define FLOE_FAIL_RC(expr)                                                             \
    do {                                                                               \
        rc = (expr);                                                                   \
        goto done;                                                                     \
    } while (0)

typedef struct floe_local_output floe_local_output;
typedef struct floe_local_input floe_local_input;

struct floe_local_output {
    floe_io *io;
    char *path;
    char *tmp_path;
    int fd;
    floe_output_options opts;
    int64_t written;
    uint8_t *buf;             /* the block being filled */
    size_t buf_len;
    size_t buf_cap;           /* OUT_BUF_SIZE, or DIRECT_BLOCK for a direct output */
    uint8_t *buf_alloc;       /* what floe_malloc returned (blocks are aligned inside it) */
    uint8_t *blocks[2];       /* direct: the two aligned blocks; buf is one of them */
    bool direct;              /* full blocks still go out with O_DIRECT */
    bool direct_on;           /* O_DIRECT is set on fd */
    bool in_flight;           /* direct: aio holds the other block */
    struct aiocb aio;         /* ... this write */
    int faulted;              /* errno of an injected fault standing for that write */
    int64_t fd_written;       /* bytes handed to the kernel (or to aio) */
    int64_t writeback_from;   /* writeback started for the bytes before this */
};

struct floe_local_input {
    floe_io *io;
    char *uri;
    int fd;
    int64_t size;  /* at open (fstat); the view below covers exactly this many bytes */
    uint8_t *map;  /* local_input_mmap's view, NULL until mapped */
    floe_map_guard *guard; /* map's SIGBUS guard */
};

static _Atomic unsigned tmp_seq;

static int mkdirs_path(char *path, floe_error *err) {
    /* the folder itself first: it exists, or only it is missing (one call, not one a
     * component: the sealer makes a folder for each of thousands of partitions) */
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    /* create every missing component of path (a directory) */
    size_t n = strlen(path);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            int rc = floe_error_errno(err, e, "mkdir %s", path);
            path[i] = c;
            return rc;
        }
        path[i] = c;
    }
    return 0;
}

static int mkdirs_parent(const char *path, floe_error *err) {
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    char *dir = floe_strndup(path, (size_t)(slash - path));
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = mkdirs_path(dir, err);
    floe_free(dir);
    return rc;
}

static int fsync_dir_of(floe_io *io, const char *path, floe_error *err) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? floe_strndup(path, slash == path ? 1 : (size_t)(slash - path))
                      : floe_strdup(".");
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || floe_io_faulted(io, FLOE_IO_FAULT_FSYNC) || fsync(fd) != 0)
        rc = floe_error_errno(err, errno, "fsync directory %s", dir);
    if (fd >= 0)
        close(fd);
    floe_free(dir);
    return rc;
}

static void local_output_abort(void *vo);

static int local_output_open(floe_io *io, const char *uri, const floe_output_options *opts,
                             void **out, floe_error *err) {
    floe_local_output *o = floe_calloc(1, sizeof *o);
    if (!o)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    o->io = io;
    o->fd = -1;
    if (opts)
        o->opts = *opts;
    else
        o->opts.fsync = true;
    int rc = 0;
    o->path = floe_io_local_path(uri);
#ifdef O_DIRECT
    o->direct = o->opts.direct;
#endif
    o->buf_cap = o->direct ? DIRECT_BLOCK : OUT_BUF_SIZE;
    /* direct: two blocks in one huge page (the output's blocks are fresh memory: in 4 KiB
     * pages a fault each 4 KiB of them) */
    o->buf_alloc = o->direct ? floe_alloc_huge(2 * DIRECT_BLOCK) : floe_malloc(o->buf_cap);
    if (o->buf_alloc && o->direct) {
        o->blocks[0] = o->buf_alloc; /* 2 MiB aligned, a multiple of DIRECT_ALIGN */
        o->blocks[1] = o->blocks[0] + DIRECT_BLOCK;
    }
    o->buf = o->direct ? o->blocks[0] : o->buf_alloc;
    if (!o->path || !o->buf_alloc)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    o->tmp_path = floe_asprintf("%s.floe-tmp-%ld-%u", o->path, (long)getpid(),
                                atomic_fetch_add(&tmp_seq, 1));
    if (!o->tmp_path)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(mkdirs_parent(o->path, err));
    if (o->opts.no_overwrite && access(o->path, F_OK) == 0)
        FLOE_FAIL(err, FLOE_EEXISTS, "%s: already exists", o->path);
    o->fd = floe_io_faulted(o->io, FLOE_IO_FAULT_OPEN)
                ? -1
                : open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (o->fd < 0)
        FLOE_FAIL_RC(floe_error_errno(err, errno, "create %s", o->tmp_path));
    *out = o;
    return 0;
done:
    local_output_abort(o);
    return rc;
}

/* With fsync on, close waits until every page of the file is on disk: start writing
 * them back as they are written, in the background, so that the wait at close is only
 * for the last few MiB (a large file would otherwise be written out all at close). */
#define WRITEBACK_STEP ((int64_t)8 << 20)
static void start_writeback(floe_local_output *o) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    if (o->opts.fsync && !o->direct_on && o->fd_written - o->writeback_from >= WRITEBACK_STEP) {
        (void)sync_file_range(o->fd, o->writeback_from, o->fd_written - o->writeback_from,
                              SYNC_FILE_RANGE_WRITE);
        o->writeback_from = o->fd_written;
    }
#else
    (void)o;
#endif
}

/* Switch O_DIRECT on or off for the writes that follow. */
static int set_direct(floe_local_output *o, bool on) {
#ifdef O_DIRECT
    int fl = fcntl(o->fd, F_GETFL);
    if (fl < 0 || fcntl(o->fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) != 0)
        return -1;
    o->direct_on = on;
    return 0;
#else
    (void)o;
    (void)on;
    errno = EINVAL;
    return -1;
#endif
}

/* Write n bytes at offset off (already counted in fd_written). */
static int pwrite_fully(floe_local_output *o, const uint8_t *p, size_t n, int64_t off,
                        floe_error *err) {
    while (n > 0) {
        ssize_t w = floe_io_faulted(o->io, FLOE_IO_FAULT_WRITE) ? -1 : pwrite(o->fd, p, n, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            /* O_DIRECT refused (alignment rules we do not meet, or a short direct write
             * left an unaligned rest): write through the page cache from here on */
            if (errno == EINVAL && o->direct_on && set_direct(o, false) == 0) {
                o->direct = false;
                continue;
            }
            return floe_error_errno(err, errno, "write %s", o->path);
        }
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

static int write_fully(floe_local_output *o, const uint8_t *p, size_t n, floe_error *err) {
    int64_t off = o->fd_written;
    o->fd_written += (int64_t)n;
    FLOE_FORWARD_IF_ERROR(pwrite_fully(o, p, n, off, err));
    start_writeback(o);
    return 0;
}

/* Wait for the block in flight, if any; a failed or short asynchronous write is finished
 * (or reported) here, synchronously. */
static int wait_in_flight(floe_local_output *o, floe_error *err) {
    if (!o->in_flight)
        return 0;
    const struct aiocb *list[1] = {&o->aio};
    int e = o->faulted;
    ssize_t got = -1;
    if (!e) {
        while ((e = aio_error(&o->aio)) == EINPROGRESS)
            (void)aio_suspend(list, 1, NULL); /* EINTR or done: look again */
        got = aio_return(&o->aio);
    }
    o->in_flight = false;
    o->faulted = 0;
    if (e == 0 && got == (ssize_t)o->aio.aio_nbytes)
        return 0;
    size_t done = e == 0 && got > 0 ? (size_t)got : 0;
    if (e != 0 && e != EINVAL)
        return floe_error_errno(err, e, "write %s", o->path);
    if (o->direct_on && set_direct(o, false) != 0) /* refused, or a short direct write */
        return floe_error_errno(err, errno, "write %s: fcntl", o->path);
    o->direct = false;
    return pwrite_fully(o, (const uint8_t *)o->aio.aio_buf + done, o->aio.aio_nbytes - done,
                        (int64_t)o->aio.aio_offset + (int64_t)done, err);
}

/* Hand the full direct block to aio and switch to the other block. */
static int submit_block(floe_local_output *o, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(wait_in_flight(o, err));
    if (o->direct && !o->direct_on && set_direct(o, true) != 0)
        o->direct = false; /* the file system has no O_DIRECT: buffered writes */
    if (!o->direct) {
        int rc = write_fully(o, o->buf, o->buf_len, err);
        o->buf_len = 0;
        return rc;
    }
    memset(&o->aio, 0, sizeof o->aio);
    o->aio.aio_fildes = o->fd;
    o->aio.aio_buf = o->buf;
    o->aio.aio_nbytes = o->buf_len;
    o->aio.aio_offset = (off_t)o->fd_written;
    o->aio.aio_sigevent.sigev_notify = SIGEV_NONE;
    o->fd_written += (int64_t)o->buf_len;
    if (floe_io_faulted(o->io, FLOE_IO_FAULT_WRITE)) {
        o->faulted = errno; /* tests: the write fails as aio would report it, later */
    } else if (aio_write(&o->aio) != 0) { /* no aio (resources): write it now */
        int rc = pwrite_fully(o, o->buf, o->buf_len, (int64_t)o->aio.aio_offset, err);
        o->buf_len = 0;
        return rc;
    }
    o->in_flight = true;
    o->buf = o->buf == o->blocks[0] ? o->blocks[1] : o->blocks[0];
    o->buf_len = 0;
    return 0;
}

static int flush_buf(floe_local_output *o, floe_error *err) {
    FLOE_FORWARD_IF_ERROR(wait_in_flight(o, err));
    if (o->buf_len == 0)
        return 0;
    if (o->direct_on && o->buf_len != DIRECT_BLOCK && set_direct(o, false) != 0)
        return floe_error_errno(err, errno, "write %s: fcntl", o->path);
    int rc = write_fully(o, o->buf, o->buf_len, err);
    o->buf_len = 0;
    return rc;
}

/* A direct output: every byte goes through the aligned block, which is written whenever
 * it is full (so each O_DIRECT write starts at a multiple of DIRECT_BLOCK). */
static int write_direct(floe_local_output *o, const uint8_t *b, size_t n, floe_error *err) {
    while (n > 0) {
        size_t k = o->buf_cap - o->buf_len < n ? o->buf_cap - o->buf_len : n;
        memcpy(o->buf + o->buf_len, b, k);
        o->buf_len += k;
        o->written += (int64_t)k;
        b += k;
        n -= k;
        if (o->buf_len == o->buf_cap)
            FLOE_FORWARD_IF_ERROR(submit_block(o, err));
    }
    return 0;
}

static int local_output_write(void *vo, const void *p, size_t n, floe_error *err) {
    floe_local_output *o = vo;
    const uint8_t *b = p;
    if (o->blocks[0]) /* a direct output, even once its file system refused O_DIRECT */
        return write_direct(o, b, n, err);
    if (n >= OUT_BUF_SIZE) {
        FLOE_FORWARD_IF_ERROR(flush_buf(o, err));
        FLOE_FORWARD_IF_ERROR(write_fully(o, b, n, err));
    } else {
        if (o->buf_len + n > OUT_BUF_SIZE)
            FLOE_FORWARD_IF_ERROR(flush_buf(o, err));
        memcpy(o->buf + o->buf_len, b, n);
        o->buf_len += n;
    }
    o->written += (int64_t)n;
    return 0;
}

static int64_t local_output_tell(const void *vo) {
    const floe_local_output *o = vo;
    return o->written;
}

static int local_output_close(void *vo, floe_error *err) {
    floe_local_output *o = vo;
    int rc = 0;
    FLOE_CHECK(flush_buf(o, err));
    if (o->opts.fsync && (floe_io_faulted(o->io, FLOE_IO_FAULT_FSYNC) || fsync(o->fd) != 0))
        FLOE_FAIL_RC(floe_error_errno(err, errno, "fsync %s", o->path));
    if (close(o->fd) != 0) {
        o->fd = -1;
        FLOE_FAIL_RC(floe_error_errno(err, errno, "close %s", o->path));
    }
    o->fd = -1;
    if (o->opts.no_overwrite) {
        if (floe_io_faulted(o->io, FLOE_IO_FAULT_RENAME) || link(o->tmp_path, o->path) != 0) {
            if (errno == EEXIST)
                FLOE_FAIL(err, FLOE_EEXISTS, "%s: already exists", o->path);
            FLOE_FAIL_RC(floe_error_errno(err, errno, "link %s", o->path));
        }
        unlink(o->tmp_path);
    } else if (floe_io_faulted(o->io, FLOE_IO_FAULT_RENAME) || rename(o->tmp_path, o->path) != 0) {
        FLOE_FAIL_RC(floe_error_errno(err, errno, "rename to %s", o->path));
    }
    floe_io_count(o->io, FLOE_IO_PUT, o->written);
    if (o->opts.fsync)
        rc = fsync_dir_of(o->io, o->path, err);
    floe_free(o->tmp_path);
    o->tmp_path = NULL;
done:
    local_output_abort(o);
    return rc;
}

static void local_output_abort(void *vo) {
    floe_local_output *o = vo;
    if (!o)
        return;
    if (o->in_flight && !o->faulted) { /* the block must outlive its write: wait */
        const struct aiocb *list[1] = {&o->aio};
        while (aio_error(&o->aio) == EINPROGRESS)
            (void)aio_suspend(list, 1, NULL);
        (void)aio_return(&o->aio); /* the result is moot: the file is removed */
    }
    o->in_flight = false;
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp_path)
        unlink(o->tmp_path);
    floe_free(o->tmp_path);
    floe_free(o->path);
    floe_free(o->buf_alloc);
    floe_free(o);
}

static void local_input_close(void *vin);

static int local_input_open(floe_io *io, const char *uri, void **out, floe_error *err) {
    floe_local_input *in = floe_calloc(1, sizeof *in);
    if (!in)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    in->io = io;
    int rc = 0;
    in->fd = -1;
    char *path = floe_io_local_path(uri);
    in->uri = floe_strdup(uri);
    if (!path || !in->uri)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    in->fd = floe_io_faulted(in->io, FLOE_IO_FAULT_OPEN) ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0)
        FLOE_FAIL_RC(floe_error_errno(err, errno, "open %s", path));
    struct stat st;
    if (fstat(in->fd, &st) != 0)
        FLOE_FAIL_RC(floe_error_errno(err, errno, "stat %s", path));
    if (S_ISDIR(st.st_mode))
        FLOE_FAIL(err, FLOE_EINVALID, "%s: is a directory", path);
    in->size = st.st_size;
    floe_io_count(in->io, FLOE_IO_HEAD, 0);
    floe_free(path);
    *out = in;
    return 0;
done:
    floe_free(path);
    local_input_close(in);
    return rc;
}

static int64_t local_input_size(const void *vin) {
    const floe_local_input *in = vin;
    return in->size;
}

static const char *local_input_uri(const void *vin) {
    const floe_local_input *in = vin;
    return in->uri;
}

static int local_input_read_at(void *vin, int64_t off, void *buf, size_t n,
                               floe_error *err) {
    floe_local_input *in = vin;
    if (off < 0 || off > in->size || (int64_t)n > in->size - off)
        return floe_error_at(err, FLOE_ECORRUPT, off,
                             "%s: unexpected end of file (read of %zu bytes at offset %lld, "
                             "file has %lld)",
                             in->uri, n, (long long)off, (long long)in->size);
    uint8_t *b = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t r = floe_io_faulted(in->io, FLOE_IO_FAULT_READ)
                        ? -1
                        : pread(in->fd, b + done, n - done, (off_t)(off + (int64_t)done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return floe_error_errno(err, errno, "read %s", in->uri);
        }
        if (r == 0)
            return floe_error_at(err, FLOE_ECORRUPT, off + (int64_t)done,
                                 "%s: unexpected end of file", in->uri);
        done += (size_t)r;
    }
    floe_io_count(in->io, FLOE_IO_GET, (int64_t)n);
    return 0;
}

static int local_input_mmap(void *vin, const uint8_t **out, floe_error *err) {
    floe_local_input *in = vin;
    if (in->map) {
        *out = in->map;
        return 0;
    }
    if (in->size <= 0 || (uint64_t)in->size > SIZE_MAX)
        return 1;
    if (!floe_map_guard_installed())
        return 1; /* unguarded, a file cut short would raise SIGBUS: read it instead */
    if (floe_io_faulted(in->io, FLOE_IO_FAULT_READ))
        return floe_error_errno(err, errno, "read %s", in->uri);
    void *p = mmap(NULL, (size_t)in->size, PROT_READ, MAP_SHARED, in->fd, 0);
    if (p == MAP_FAILED)
        return 1; /* pipes, some special or network filesystems: read them instead */
    floe_map_guard *g = NULL;
    if (floe_map_guard_add(p, (size_t)in->size, &g, NULL) < 0) {
        munmap(p, (size_t)in->size); /* every guard slot taken: read instead */
        return 1;
    }
    in->map = p;
    in->guard = g;
    *out = in->map;
    return 0;
}

static bool local_input_mmap_shrank(const void *vin) {
    const floe_local_input *in = vin;
    return in->map && floe_map_guard_hit(in->guard);
}

static void local_input_mmap_release(void *vin, int64_t off, size_t n) {
    floe_local_input *in = vin;
    if (!in->map || off < 0 || off > in->size || (int64_t)n > in->size - off)
        return;
    /* Every page the range touches, rounded out to 2 MiB of the file: a read fault on a
     * file mapping maps more than the page it needs. The fault-around window
     * (fault_around_bytes, 64 KiB by default) maps the cached pages around it, and a
     * page of a large folio (readahead of a file not yet cached builds folios of up to
     * 2 MiB, the PMD size, on ext4 and xfs) maps that folio's other pages too. Folios
     * are aligned in the file, so the rounding is on file offsets. Released by nobody,
     * those leftovers add up over a file's thousands of pages (one view per page and
     * column of every slice) to tens of MiB of RSS: rounded to 64 KiB, re-encoding
     * floe's own files of 128 MiB row groups still kept 39 MiB of them mapped when the
     * input was not in the page cache, about none at 2 MiB. The view is read-only and
     * never written, so a page still in use by a neighbouring view is just faulted in
     * again from the page cache. */
    const uint64_t win = (uint64_t)2 << 20;
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t ps = pg > 0 && (uint64_t)pg > win ? (uint64_t)pg : win;
    uint64_t lo = (uint64_t)off & ~(ps - 1);
    uint64_t hi = ((uint64_t)off + n + ps - 1) & ~(ps - 1);
    if (hi > (uint64_t)in->size)
        hi = (uint64_t)in->size; /* madvise rounds a partial last page up */
    if (hi > lo)
        (void)madvise(in->map + lo, (size_t)(hi - lo), MADV_DONTNEED);
}

static void local_input_mmap_prefault(void *vin, int64_t off, size_t n) {
    floe_local_input *in = vin;
#ifdef MADV_POPULATE_READ
    if (!in->map || off < 0 || off > in->size || (int64_t)n > in->size - off || n == 0)
        return;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t ps = pg > 0 ? (uintptr_t)pg : 4096;
    uintptr_t lo = (uintptr_t)(in->map + off) & ~(ps - 1);
    /* Failure leaves the pages to fault in as usual; past a shrunken file's end it is
     * EFAULT here (no SIGBUS), and the reads that follow meet the guard. */
    (void)madvise((void *)lo, (uintptr_t)(in->map + off) + n - lo, MADV_POPULATE_READ);
#else
    (void)in;
    (void)off;
    (void)n;
#endif
}

static void local_input_close(void *vin) {
    floe_local_input *in = vin;
    if (!in)
        return;
    if (in->map) {
        floe_map_guard_remove(in->guard);
        munmap(in->map, (size_t)in->size);
    }
    if (in->fd >= 0)
        close(in->fd);
    floe_free(in->uri);
    floe_free(in);
}

static int local_exists(floe_io *io, const char *uri, bool *exists, floe_error *err) {
    char *path = floe_io_local_path(uri);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    struct stat st;
    int rc = 0;
    floe_io_count(io, FLOE_IO_HEAD, 0);
    if (stat(path, &st) == 0)
        *exists = true;
    else if (errno == ENOENT || errno == ENOTDIR)
        *exists = false;
    else
        rc = floe_error_errno(err, errno, "stat %s", path);
    floe_free(path);
    return rc;
}

static int local_delete(floe_io *io, const char *uri, floe_error *err) {
    /* no allocation here: deletes are how failed operations clean up, also after an
     * allocation failure */
    const char *path = floe_io_local_path_ref(uri);
    int rc = 0;
    floe_io_count(io, FLOE_IO_DELETE, 0);
    if (unlink(path) != 0 && errno != ENOENT)
        rc = floe_error_errno(err, errno, "delete %s", path);
    return rc;
}

static int local_mkdirs(floe_io *io, const char *uri, floe_error *err) {
    (void)io;
    char *path = floe_io_local_path(uri);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = mkdirs_path(path, err);
    floe_free(path);
    return rc;
}

static int list_dir(floe_io *io, const char *dir, const char *uri_prefix,
                    int (*fn)(void *ctx, const floe_io_entry *e), void *ctx, int depth,
                    floe_error *err) {
    if (depth > 64)
        return floe_error_set(err, FLOE_ELIMIT, "%s: directory nesting too deep", dir);
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT && depth == 0)
            return 0;
        return floe_error_errno(err, errno, "list %s", dir);
    }
    floe_io_count(io, FLOE_IO_LIST, 0);
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *path = floe_asprintf("%s/%s", dir, de->d_name);
        char *uri = floe_asprintf("%s/%s", uri_prefix, de->d_name);
        if (!path || !uri) {
            floe_free(path);
            floe_free(uri);
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            break;
        }
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                rc = list_dir(io, path, uri, fn, ctx, depth + 1, err);
            } else if (S_ISREG(st.st_mode)) {
                floe_io_entry e = {uri, st.st_size,
                                   (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000};
                if (fn(ctx, &e) != 0)
                    rc = 1;
            }
        }
        floe_free(path);
        floe_free(uri);
        if (rc != 0)
            break;
    }
    closedir(d);
    return rc; /* 1: fn stopped the listing, in this folder or one below */
}

static int local_list(floe_io *io, const char *prefix,
                      int (*fn)(void *ctx, const floe_io_entry *e), void *ctx,
                      floe_error *err) {
    char *path = floe_io_local_path(prefix);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    size_t pl = strlen(path), ul = strlen(prefix);
    while (pl > 1 && path[pl - 1] == '/')
        path[--pl] = '\0';
    char *uprefix = floe_strndup(prefix, ul);
    while (ul > 1 && uprefix && uprefix[ul - 1] == '/')
        uprefix[--ul] = '\0';
    int rc = uprefix ? list_dir(io, path, uprefix, fn, ctx, 0, err)
                     : floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(uprefix);
    floe_free(path);
    return rc < 0 ? rc : 0;
}

/* ---- durability for many files at once (floe_io_syncer) ---- */

struct floe_local_syncer {
    floe_io *io;
    int fd;       /* the folder: its file system's write-back errors are seen from here */
    dev_t dev;
    size_t min_batch;
};

/* syncfs(2) reports write-back errors since Linux 5.8; before, it returned 0 always. */
static bool syncfs_reports_errors(void) {
#ifdef __linux__
    static _Atomic int known; /* 0 unknown, 1 yes, 2 no */
    int k = atomic_load(&known);
    if (k == 0) {
        struct utsname u;
        int major = 0, minor = 0;
        k = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
                    (major > 5 || (major == 5 && minor >= 8))
                ? 1
                : 2;
        atomic_store(&known, k);
    }
    return k == 1;
#else
    return false;
#endif
}

int floe_local_syncer_open(floe_io *io, const char *uri, size_t min_batch,
                           floe_local_syncer **out, floe_error *err) {
    char *path = floe_io_local_path(uri);
    if (!path)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = mkdirs_path(path, err);
    int fd = rc < 0 ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (rc == 0 && (fd < 0 || fstat(fd, &st) != 0))
        rc = floe_error_errno(err, errno, "open %s", path);
    floe_local_syncer *sy = rc < 0 ? NULL : floe_calloc(1, sizeof *sy);
    if (rc == 0 && !sy)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_free(path);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    sy->io = io;
    sy->fd = fd;
    sy->dev = st.st_dev;
    sy->min_batch = min_batch;
    *out = sy;
    return 0;
}

static int fsync_path(floe_io *io, const char *path, floe_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = 0;
    if (fd < 0 || floe_io_faulted(io, FLOE_IO_FAULT_FSYNC) || fsync(fd) != 0)
        rc = floe_error_errno(err, errno, "fsync %s", path);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The length of path's folder part (up to its last '/'), 0 when it has none. */
static size_t dir_len(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

int floe_local_syncer_sync(floe_local_syncer *sy, const char *const *uris, size_t n,
                           floe_error *err) {
    bool whole = n >= sy->min_batch && syncfs_reports_errors();
    const char *last_dir = NULL;
    size_t last_len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *path = floe_io_local_path_ref(uris[i]);
        if (!path)
            return floe_error_set(err, FLOE_EINVALID, "%s: not a local file", uris[i]);
        struct stat st;
        if (whole && stat(path, &st) == 0 && st.st_dev == sy->dev)
            continue; /* the syncfs below covers it */
        FLOE_FORWARD_IF_ERROR(fsync_path(sy->io, path, err));
        size_t dl = dir_len(path);
        if (last_dir && dl == last_len && !memcmp(path, last_dir, dl))
            continue;
        FLOE_FORWARD_IF_ERROR(fsync_dir_of(sy->io, path, err));
        last_dir = path;
        last_len = dl;
    }
#ifdef __linux__
    if (whole && (floe_io_faulted(sy->io, FLOE_IO_FAULT_FSYNC) || syncfs(sy->fd) != 0))
        return floe_error_errno(err, errno, "syncfs (%zu files)", n);
#endif
    return 0;
}

void floe_local_syncer_close(floe_local_syncer *sy) {
    if (!sy)
        return;
    close(sy->fd);
    floe_free(sy);
}

const floe_io_backend floe_local_backend = {
    .output_open = local_output_open,
    .output_write = local_output_write,
    .output_tell = local_output_tell,
    .output_close = local_output_close,
    .output_abort = local_output_abort,
    .input_open = local_input_open,
    .input_size = local_input_size,
    .input_uri = local_input_uri,
    .input_read_at = local_input_read_at,
    .input_mmap = local_input_mmap,
    .input_mmap_shrank = local_input_mmap_shrank,
    .input_mmap_release = local_input_mmap_release,
    .input_mmap_prefault = local_input_mmap_prefault,
    .input_close = local_input_close,
    .exists = local_exists,
    .remove = local_delete,
    .mkdirs = local_mkdirs,
    .list = local_list,
};
