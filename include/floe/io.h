/*
 * floe/io.h - FileIO: reading and writing files by URI, local or object storage.
 *
 * URIs: a plain path, file:///abs/path, or file:relative (local); s3://bucket/key (also
 * s3a://, s3n://: object storage, set-up in docs/S3.md). Outputs are written sequentially
 * and become visible at floe_output_close(); an aborted output leaves nothing behind.
 * Inputs are random access (pread / ranged GET).
 *
 * Every operation goes through an I/O context (floe_io): it selects the backend by the
 * URI's scheme (a table of operations per scheme: "file" and plain paths; "s3", "s3a", "s3n"),
 * holds the object-storage settings (endpoint, region, addressing, credentials, retry
 * policy), counts the requests made through it (floe_io_stats) and carries its own fault
 * hooks (for tests: src/io/io_faults.h, not installed). Two contexts in one process are independent: each table, catalog, reader or
 * writer uses the context it was opened with. A NULL context means the built-in default:
 * local files, and object storage on AWS with no credentials (every remote request then
 * fails with FLOE_EAUTH naming the URI, unless anonymous access is set) - an embedder
 * that reads s3:// passes its own context. The library never reads the process
 * environment or a configuration file by itself; floe_io_options_from_env reads settings
 * through a lookup function the caller passes (the floe command passes getenv).
 *
 * Ownership and threads: a floe_input or floe_output is owned by its opener until
 * floe_input_close / floe_output_close (or _abort); buffers filled by reads are the
 * caller's. One thread at a time per handle; separate handles may be used concurrently.
 * A context outlives everything opened with it (catalogs, tables, readers,
 * writers, servers borrow it). A context is safe for concurrent use by threads.
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
typedef struct floe_io floe_io;

/* ---------------------------------------------------------------------------------------
 * The I/O context.
 * ------------------------------------------------------------------------------------- */

/* Credentials for one object-storage request. A credentials callback fills the strings
 * with memory from floe_malloc/floe_strdup; floe frees them. session_token may stay NULL. */
typedef struct floe_io_credentials {
    char *access_key, *secret_key, *session_token;
} floe_io_credentials;

/* Called before every object-storage request (each retry too) with the URI it is for, so
 * a catalog can vend credentials per table and refresh them before they expire. It
 * caches what it hands out itself; it may be called from several threads at once.
 * Returns 0 and fills *out, or a negative floe code with err set (the request fails with
 * it). */
typedef int (*floe_io_credentials_fn)(void *ctx, const char *uri, floe_io_credentials *out,
                                      floe_error *err);

typedef enum floe_io_credentials_source {
    FLOE_IO_CREDS_NONE = 0, /* none: requests fail with FLOE_EAUTH (or go unsigned when
                               anonymous) */
    FLOE_IO_CREDS_STATIC,   /* access_key, secret_key, session_token */
    FLOE_IO_CREDS_PROFILE,  /* profile (NULL: "default") from credentials_file, else from
                               config_file (AWS shared-file syntax), read by floe_io_new */
    FLOE_IO_CREDS_CALLBACK  /* credentials_fn(credentials_ctx, uri) before each request */
} floe_io_credentials_source;

typedef enum floe_io_s3_addressing {
    FLOE_IO_S3_ADDRESSING_AUTO = 0, /* path style with a custom endpoint, else virtual */
    FLOE_IO_S3_ADDRESSING_PATH,     /* http://host/bucket/key */
    FLOE_IO_S3_ADDRESSING_VIRTUAL   /* http://bucket.host/key (dotted buckets: path) */
} floe_io_s3_addressing;

/* Settings of a context. Strings are owned by the options (floe_malloc'd: set them with
 * floe_io_options_set) and copied by floe_io_new, so the options can be freed once the
 * context exists. */
typedef struct floe_io_options {
    struct {
        char *endpoint; /* http[s]://host[:port] of an S3-compatible store; NULL: AWS */
        char *region;   /* NULL: us-east-1 */
        floe_io_s3_addressing addressing;
        floe_io_credentials_source credentials;
        char *access_key, *secret_key, *session_token;  /* FLOE_IO_CREDS_STATIC */
        char *profile, *credentials_file, *config_file; /* FLOE_IO_CREDS_PROFILE */
        floe_io_credentials_fn credentials_fn;          /* FLOE_IO_CREDS_CALLBACK */
        void *credentials_ctx;
        bool anonymous;        /* send no signature (public buckets) */
        bool unsigned_payload; /* x-amz-content-sha256: UNSIGNED-PAYLOAD for bodies */
        size_t part_size;      /* multipart part size, 5 MiB..5 GiB; default 8 MiB */
        int list_page_size;    /* max-keys per ListObjectsV2 page, 1..1000; default 1000 */
    } s3;
    /* Retry policy of remote requests: exponential backoff with full jitter. */
    struct {
        int max_attempts;           /* per request, 1..100; default 10 */
        int64_t budget_ms;          /* total time per request with its retries; 120 s */
        int64_t base_delay_ms;      /* first backoff cap; 100 ms */
        int64_t max_delay_ms;       /* largest backoff cap; 20 s */
        int64_t timeout_ms;         /* one attempt; 300 s */
        int64_t connect_timeout_ms; /* 10 s */
    } retry;
} floe_io_options;

/* The defaults above (no endpoint, no credentials). */
void floe_io_options_init(floe_io_options *o);
/* Free the strings of o and reset it to the defaults. Accepts NULL. */
void floe_io_options_free(floe_io_options *o);
/* Replace the string *field with a copy of value (NULL clears it). FLOE_ENOMEM. */
int floe_io_options_set(char **field, const char *value, floe_error *err);

/* The S3 properties of a configuration file entry (a catalog of floe.conf or
 * .pyiceberg.yaml, floe serve's [server] section) under PyIceberg's names: s3.endpoint,
 * s3.region, s3.access-key-id, s3.secret-access-key, s3.session-token,
 * s3.force-virtual-addressing. Owned strings as the file gave them, NULL when absent. */
typedef struct floe_s3_properties {
    char *endpoint, *region, *access_key_id, *secret_access_key, *session_token;
    char *force_virtual_addressing;
} floe_s3_properties;

/* Free the strings of p and clear it. Accepts NULL. */
void floe_s3_properties_reset(floe_s3_properties *p);
/* Take key = value (klen and vlen bytes) into p when key is one of the names above: 1 when
 * taken, 0 when key is not an S3 property (p unchanged), FLOE_ENOMEM. */
int floe_s3_properties_take(floe_s3_properties *p, const char *key, size_t klen, const char *v,
                            size_t vlen, floe_error *err) FLOE_NODISCARD;
/* Apply p over o: each property p has replaces o's setting; the key pair (with the session
 * token) makes the credentials static; one half of a pair replaces that half of a static
 * pair o already has. source names the file in errors. FLOE_EINVALID: half a pair with no
 * pair to complete, s3.force-virtual-addressing other than true/false (also True, False,
 * 1, 0); FLOE_ENOMEM. */
int floe_io_options_apply_s3(floe_io_options *o, const floe_s3_properties *p, const char *source,
                             floe_error *err) FLOE_NODISCARD;

/* A setting by name, as the environment would hold it; NULL when unset. */
typedef const char *(*floe_io_lookup_fn)(void *ctx, const char *name);

/* Fill o from settings named as in the AWS conventions and floe's own FLOE_S3_* names
 * (docs/S3.md has the table), read through lookup: AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the profile AWS_PROFILE in
 * AWS_SHARED_CREDENTIALS_FILE or AWS_CONFIG_FILE (default ~/.aws/ under HOME); region,
 * endpoint and addressing likewise; FLOE_S3_ANONYMOUS, FLOE_S3_UNSIGNED_PAYLOAD,
 * FLOE_S3_PART_SIZE, FLOE_S3_LIST_MAX_KEYS and the FLOE_S3_RETRY_* / *_TIMEOUT_MS knobs.
 * Settings the lookup does not have keep their value in o. FLOE_EINVALID names a bad
 * setting. The floe command passes getenv; the library calls no getenv of its own. */
int floe_io_options_from_env(floe_io_options *o, floe_io_lookup_fn lookup, void *lookup_ctx,
                             floe_error *err);

/* A context with options (NULL: the defaults). FLOE_EINVALID names a bad setting (an
 * endpoint that is not http[s]://host, a profile without keys). Free with floe_io_free
 * after everything opened with it is closed. */
int floe_io_new(const floe_io_options *opts, floe_io **out, floe_error *err);
void floe_io_free(floe_io *io);
/* The built-in default context that NULL stands for (never freed). */
floe_io *floe_io_default(void);

/* The credentials io signs an object-storage request for uri with: its static or profile
 * keys, or what its callback answers for uri. Copies in *out (free them with
 * floe_io_credentials_reset). FLOE_EAUTH when io has none (or is anonymous). Other
 * protocols that take "the S3 credentials" (a REST catalog's SigV4 requests) use this. */
int floe_io_s3_credentials(floe_io *io, const char *uri, floe_io_credentials *out,
                           floe_error *err) FLOE_NODISCARD;
/* Free the strings of c and clear it. Accepts NULL. */
void floe_io_credentials_reset(floe_io_credentials *c);
/* The S3 region of io (us-east-1 unless set); valid while io lives. */
const char *floe_io_s3_region(floe_io *io);

/* A new context with io's object-storage settings (endpoint, region, addressing, payload
 * signing, part and page sizes, retry policy), except: endpoint and region, when not
 * NULL, replace io's; addressing PATH or VIRTUAL replaces io's, AUTO keeps it (and a new
 * endpoint where io had none is addressed path style); the credentials come from
 * fn(ctx, uri) before each request. Its counters and fault hooks start afresh. A catalog
 * that vends per-table credentials builds each table's context so. Free with
 * floe_io_free. FLOE_EINVALID for a bad endpoint. */
int floe_io_new_derived(floe_io *io, const char *endpoint, const char *region,
                        floe_io_s3_addressing addressing, floe_io_credentials_fn fn, void *ctx,
                        floe_io **out, floe_error *err) FLOE_NODISCARD;

typedef struct floe_output_options {
    bool fsync;          /* fsync file (and directory for new files) at close; default true */
    bool no_overwrite;   /* fail with FLOE_EEXISTS if the target exists (atomic create) */
    bool direct;         /* a large output nobody reads back soon: local files write whole
                            1 MiB blocks past the page cache (O_DIRECT) where the file
                            system allows it, the rest through it as usual; object storage
                            ignores it. Same bytes either way. */
} floe_output_options;

/* Open uri for writing; missing parent folders are created. opts may be NULL. io: the
 * context (NULL: the default), as in every function below that takes one. */
int floe_output_open(floe_io *io, const char *uri, const floe_output_options *opts, floe_output **out,
                     floe_error *err);
int floe_output_write(floe_output *o, const void *p, size_t n, floe_error *err);
/* Bytes written so far. */
int64_t floe_output_tell(const floe_output *o);
/* Flush, sync (per options) and publish; frees o in every case. */
int floe_output_close(floe_output *o, floe_error *err);
/* Discard: nothing is left at the uri; frees o. Accepts NULL. */
void floe_output_abort(floe_output *o);

int floe_input_open(floe_io *io, const char *uri, floe_input **out, floe_error *err);
/* floe_input_open for a reader that starts at the beginning (Avro: manifests and manifest
 * lists). Object storage learns the size from a GET of the first read-ahead window (256
 * KiB, kept for the reads) instead of a HEAD request, so a small object costs one request,
 * not two. Local files: the same as floe_input_open. */
int floe_input_open_sequential(floe_io *io, const char *uri, floe_input **out,
                               floe_error *err);
/* ---- Whole objects, fetched concurrently by one thread (object storage) ----
 * A fetcher keeps up to `inflight` GETs of whole objects going at once on the thread that
 * calls floe_io_fetch_next (libcurl's multi interface: no thread per request). Each object
 * gets one attempt: an error answer, a transport error or a body longer than its max comes
 * back as not fetched (ok false), and the caller reads that object the ordinary way
 * (floe_input_open_sequential), whose retries and error messages apply. Not thread-safe,
 * except floe_io_fetch_wakeup. */
typedef struct floe_io_fetcher floe_io_fetcher;
typedef struct floe_io_fetched {
    void *tag;           /* as given to floe_io_fetch_add */
    bool ok;             /* the whole object is in data[0..len) */
    uint8_t *data;       /* the caller's (floe_free); NULL when not ok */
    size_t len;
} floe_io_fetched;
/* 0 and *out; 1 when uri's backend has none (local files: read them directly). */
int floe_io_fetcher_new(floe_io *io, const char *uri, size_t inflight, floe_io_fetcher **out,
                        floe_error *err);
/* Start a GET of uri (at most max bytes; 0: no object is fetched, the caller reads it).
 * Transfers beyond `inflight` wait in order. FLOE_ENOMEM and bad uris fail here. */
int floe_io_fetch_add(floe_io_fetcher *f, const char *uri, size_t max, void *tag,
                      floe_error *err);
/* Objects added and not yet returned by floe_io_fetch_next. */
size_t floe_io_fetch_pending(const floe_io_fetcher *f);
/* Run the transfers until one ends (1, *out filled), wait_ms has passed or another thread
 * called floe_io_fetch_wakeup (0). */
int floe_io_fetch_next(floe_io_fetcher *f, int wait_ms, floe_io_fetched *out);
/* Any thread: make a floe_io_fetch_next that waits return now. */
void floe_io_fetch_wakeup(floe_io_fetcher *f);
/* Abandons the transfers left. Accepts NULL. */
void floe_io_fetcher_free(floe_io_fetcher *f);

int64_t floe_input_size(const floe_input *in);
const char *floe_input_uri(const floe_input *in);
/* Read exactly n bytes at off; short reads are FLOE_ECORRUPT ("unexpected end of file"). */
int floe_input_read_at(floe_input *in, int64_t off, void *buf, size_t n, floe_error *err);
void floe_input_close(floe_input *in);

/* A read-only view of the whole input in memory (mmap of a local file), so readers can
 * decode from the page cache without copying. Returns 0 and *out (valid until
 * floe_input_close; floe_input_size bytes), 1 when the input cannot be mapped (object
 * storage, an empty or special file, mmap refused, no floe_map_guard slot left, or no
 * SIGBUS handler installed: floe_map_guard_install): use
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
int floe_io_read_all(floe_io *io, const char *uri, size_t max, floe_buf *out, floe_error *err);
int floe_io_write_all(floe_io *io, const char *uri, const void *p, size_t n,
                      const floe_output_options *opts, floe_error *err);

/* On object storage only objects exist: a prefix ("folder") with objects under it does not. */
int floe_io_exists(floe_io *io, const char *uri, bool *exists, floe_error *err);
int floe_io_delete(floe_io *io, const char *uri, floe_error *err); /* missing is not an error */
/* Delete n files (missing ones are not errors). On object storage consecutive keys of one
 * bucket go in batches of up to 1000 per request (S3 DeleteObjects); locally one by one.
 * Stops at the first failure; files before it are deleted, files after it may not be. */
int floe_io_delete_many(floe_io *io, const char *const *uris, size_t n, floe_error *err);
int floe_io_mkdirs(floe_io *io, const char *uri, floe_error *err);

/* Durability for many files at once. A writer of many small files (floe serve's sealer:
 * thousands of one-record landing files a round) writes them with
 * floe_output_options.fsync off and makes them durable together: a fsync of each file
 * and of its folder was two device flushes a file. floe_io_syncer_open(io, uri, &sy) is
 * called BEFORE the files are written, for files under the folder uri (made when
 * missing); floe_io_syncer_sync(sy, uris, n) then makes the files at uris durable, data
 * and names (the folder entries, folders made for them included), or fails. Locally, on
 * Linux 5.8 or later and for min_batch files or more, that is one syncfs(2) of the file
 * system the folder is on (each file on another file system is fsynced on its own, with
 * its folder): it writes back and flushes the whole file system, and reports any
 * write-back error on it since the syncer was opened (a false alarm at worst: the caller
 * writes again). Otherwise, each file and each of their folders is fsynced (the folders
 * of consecutive files in the same folder once). Object storage: nothing to do (an object
 * is durable once its PUT is answered); sy is then NULL. The fsync fault kind of io fails
 * either. Free with floe_io_syncer_close (accepts NULL). */
typedef struct floe_io_syncer floe_io_syncer;
int floe_io_syncer_open(floe_io *io, const char *uri, size_t min_batch, floe_io_syncer **out,
                        floe_error *err) FLOE_NODISCARD;
int floe_io_syncer_sync(floe_io_syncer *sy, const char *const *uris, size_t n,
                        floe_error *err) FLOE_NODISCARD;
void floe_io_syncer_close(floe_io_syncer *sy);

typedef struct floe_io_entry {
    const char *uri;    /* full uri */
    int64_t size;
    int64_t mtime_ms;
} floe_io_entry;
/* List every file under prefix (recursive). fn returns non-zero to stop. */
int floe_io_list(floe_io *io, const char *prefix, int (*fn)(void *ctx, const floe_io_entry *e), void *ctx,
                 floe_error *err);

typedef struct floe_io_stats {
    int64_t get_requests, put_requests, list_requests, delete_requests, head_requests;
    int64_t bytes_read, bytes_written;
} floe_io_stats;
/* The requests made through io so far (atomic counters of the context). */
void floe_io_stats_get(floe_io *io, floe_io_stats *out);
void floe_io_stats_reset(floe_io *io);

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

FLOE_API_END

#ifdef __cplusplus
}
#endif
#endif
