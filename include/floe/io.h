/*
 * floe/io.h - FileIO: reading and writing files by URI, local or object storage.
 *
 * URIs: a plain path, file:///abs/path, or file:relative (local); s3://bucket/key (also
 * s3a://, s3n://: object storage, set-up in docs/S3.md). Outputs are written sequentially
 * and become visible at floe_output_close(); an aborted output leaves nothing behind.
 * Inputs are random access (pread / ranged GET).
 *
 * Every function counts its requests (floe_io_stats) so commands can report them.
 *
 * Ownership and threads: a floe_input or floe_output is owned by its opener until
 * floe_input_close / floe_output_close (or _abort); buffers filled by reads are the
 * caller's. One thread at a time per handle; separate handles may be used concurrently.
 */
#ifndef FLOE_IO_H
#define FLOE_IO_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

FLOE_API_BEGIN

typedef struct floe_output floe_output;
typedef struct floe_input floe_input;

typedef struct floe_output_options {
    bool fsync;          /* fsync file (and directory for new files) at close; default true */
    bool no_overwrite;   /* fail with FLOE_EEXISTS if the target exists (atomic create) */
    bool direct;         /* a large output nobody reads back soon: local files write whole
                            8 MiB blocks past the page cache (O_DIRECT) where the file
                            system allows it, the rest through it as usual; object storage
                            ignores it. Same bytes either way. */
} floe_output_options;

/* Open uri for writing; missing parent folders are created. opts may be NULL. */
int floe_output_open(const char *uri, const floe_output_options *opts, floe_output **out,
                     floe_error *err);
int floe_output_write(floe_output *o, const void *p, size_t n, floe_error *err);
/* Bytes written so far. */
int64_t floe_output_tell(const floe_output *o);
/* Flush, sync (per options) and publish; frees o in every case. */
int floe_output_close(floe_output *o, floe_error *err);
/* Discard: nothing is left at the uri; frees o. Accepts NULL. */
void floe_output_abort(floe_output *o);

int floe_input_open(const char *uri, floe_input **out, floe_error *err);
int64_t floe_input_size(const floe_input *in);
const char *floe_input_uri(const floe_input *in);
/* Read exactly n bytes at off; short reads are FLOE_ECORRUPT ("unexpected end of file"). */
int floe_input_read_at(floe_input *in, int64_t off, void *buf, size_t n, floe_error *err);
void floe_input_close(floe_input *in);

/* A read-only view of the whole input in memory (mmap of a local file), so readers can
 * decode from the page cache without copying. Returns 0 and *out (valid until
 * floe_input_close; floe_input_size bytes), 1 when the input cannot be mapped (object
 * storage, an empty or special file, mmap refused, or no floe_map_guard slot left): use
 * floe_input_read_at then. Negative on an injected read fault (mapping counts as one read
 * of FLOE_IO_FAULT_READ). Mapping twice returns the same view.
 *
 * The view is guarded (floe/mapguard.h): if the file shrinks after it was opened, reads
 * past its new end see zeros instead of raising SIGBUS, and floe_input_mmap_shrank turns
 * true. Check it after reading from the view, before trusting what was read. */
int floe_input_mmap(floe_input *in, const uint8_t **out, floe_error *err);
/* True once a read of the view went past the file's end (it shrank): what was read from
 * the view since the file shrank is zeros, not the file. */
bool floe_input_mmap_shrank(const floe_input *in);
/* The caller is done with [off, off+n) of the view for now: its pages leave the process's
 * resident set (they stay in the page cache), and so do the others of the 2 MiB-aligned
 * blocks of the file it touches (what a fault may have mapped around it). A hint; no-op
 * for unmapped inputs. */
void floe_input_mmap_release(floe_input *in, int64_t off, size_t n);
/* The caller is about to read all of [off, off+n) of the view: map its pages now, in one
 * call, rather than one page fault per few pages as they are touched. A hint; no-op for
 * unmapped inputs and where the system cannot (Linux before 5.14). */
void floe_input_mmap_prefault(floe_input *in, int64_t off, size_t n);

/* Whole-file helpers. read_all refuses files larger than max (FLOE_ELIMIT). */
int floe_io_read_all(const char *uri, size_t max, floe_buf *out, floe_error *err);
int floe_io_write_all(const char *uri, const void *p, size_t n,
                      const floe_output_options *opts, floe_error *err);

/* On object storage only objects exist: a prefix ("folder") with objects under it does not. */
int floe_io_exists(const char *uri, bool *exists, floe_error *err);
int floe_io_delete(const char *uri, floe_error *err); /* missing is not an error */
/* Delete n files (missing ones are not errors). On object storage consecutive keys of one
 * bucket go in batches of up to 1000 per request (S3 DeleteObjects); locally one by one.
 * Stops at the first failure; files before it are deleted, files after it may not be. */
int floe_io_delete_many(const char *const *uris, size_t n, floe_error *err);
int floe_io_mkdirs(const char *uri, floe_error *err);

typedef struct floe_io_entry {
    const char *uri;    /* full uri */
    int64_t size;
    int64_t mtime_ms;
} floe_io_entry;
/* List every file under prefix (recursive). fn returns non-zero to stop. */
int floe_io_list(const char *prefix, int (*fn)(void *ctx, const floe_io_entry *e), void *ctx,
                 floe_error *err);

typedef struct floe_io_stats {
    int64_t get_requests, put_requests, list_requests, delete_requests, head_requests;
    int64_t bytes_read, bytes_written;
} floe_io_stats;
/* Process-wide counters (atomic). */
void floe_io_stats_get(floe_io_stats *out);
void floe_io_stats_reset(void);

/* Join a base uri and a relative path with one '/'. Caller frees. */
char *floe_io_join(const char *base, const char *rel);
/* Local filesystem path of a local uri (file://, file:, plain); NULL for remote. Caller
 * frees. */
char *floe_io_local_path(const char *uri);

/* ---------------------------------------------------------------------------------------
 * Locations. Iceberg records locations as absolute URIs; these turn what a user typed or
 * an older writer recorded into that form, and compare locations whatever their spelling.
 * ------------------------------------------------------------------------------------- */

/* True for a location with a scheme other than file: (s3://, gs://, ...): it is absolute
 * as it is. */
bool floe_io_uri_has_remote_scheme(const char *uri);
/* True for a local location that is not absolute: "rel/x", "./x", "file:rel", and
 * "file://rel" (how some writers record relative paths; "rel" is not a host). */
bool floe_io_uri_is_relative(const char *uri);
/* The absolute URI of a location. A location with a remote scheme is kept as it is (a
 * trailing '/' dropped). A local one (a plain path, file:/abs, file:///abs,
 * file://localhost/abs, or a relative one, resolved against base when base is given,
 * else against the working folder) becomes file:///<path> with repeated '/', "." and
 * ".." segments removed lexically (symlinks are not followed; the path need not exist)
 * and no trailing '/'. Characters are kept as they are, not percent-encoded: PyIceberg
 * and Iceberg Java record and read local paths that way. base, when given, is a local
 * location itself. Caller frees *out. FLOE_EIO when the working folder is unknown. */
int floe_io_uri_absolute(const char *uri, const char *base, char **out, floe_error *err);
/* A key that is equal for two spellings of one location: scheme lower-case, s3a and s3n
 * taken as s3, local locations as their absolute file:/// form (relative ones against
 * the working folder), no trailing '/'. NULL on OOM. Caller frees. */
char *floe_io_uri_key(const char *uri);
/* True when location `uri` is `prefix` itself or lies under it (at a '/' boundary),
 * comparing keys. */
bool floe_io_uri_within(const char *uri, const char *prefix);

/* ---------------------------------------------------------------------------------------
 * Fault injection, for tests (tests/unit/fault.h builds loops on it). Process-wide and
 * thread-safe; costs two relaxed atomics per system call when unused.
 * ------------------------------------------------------------------------------------- */
typedef enum floe_io_fault_kind {
    FLOE_IO_FAULT_OPEN = 0, /* opening an input; creating an output's temporary file */
    FLOE_IO_FAULT_READ,     /* each read(2)/pread(2) of an input */
    FLOE_IO_FAULT_WRITE,    /* each write(2) of an output */
    FLOE_IO_FAULT_FSYNC,    /* fsync of an output and of its directory */
    FLOE_IO_FAULT_RENAME,   /* publishing an output: rename(2), or link(2) for no_overwrite */
    FLOE_IO_FAULT_NKINDS
} floe_io_fault_kind;

/* From now on the nth operation of kind (1-based) and every later one fail with errnum
 * (EIO when 0; not EINTR), like a disk that filled up or broke. nth = 0 disables the
 * kind. Resets the kind's counter. */
void floe_io_fault_inject(floe_io_fault_kind kind, uint64_t nth, int errnum);
/* The same, but only the nth operation fails (a refusal, not a broken disk). */
void floe_io_fault_inject_once(floe_io_fault_kind kind, uint64_t nth, int errnum);
/* Disable every kind and reset every counter. */
void floe_io_fault_clear(void);
/* Operations of kind seen since its last inject or clear (failed ones included). */
uint64_t floe_io_fault_count(floe_io_fault_kind kind);
/* For code that makes its own system calls (the FileIO backends, the line reader): count
 * one operation of kind; returns the errno to fail it with, or 0 to go ahead. */
int floe_io_fault_hit(floe_io_fault_kind kind);

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
