/*
 * fileio.c - I/O contexts: the scheme table that picks a backend per URI, request
 * counters, the default context; path helpers.
 *
 * Schemes: plain paths, file:///abs, file:rel and file://rel (the last is how some
 * writers record relative locations; read literally, "rel" would be a host) go to the
 * local backend (local.c). s3://, s3a://, s3n:// are object storage (s3.c).
 */
#include "floe/io.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io_internal.h"

/* ---------------------------------------------------------------------------------------
 * Contexts
 * ------------------------------------------------------------------------------------- */

static void add_scheme(floe_io *io, const char *name, const floe_io_backend *backend) {
    io->schemes[io->n_schemes++] = (floe_io_scheme){name, backend};
}

int floe_io_new(const floe_io_options *opts, floe_io **out, floe_error *err) {
    floe_io_options defaults;
    floe_io_options_init(&defaults);
    floe_io *io = floe_calloc(1, sizeof *io);
    if (!io)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_s3_config_from_options(opts ? opts : &defaults, &io->s3, err);
    if (rc < 0) {
        floe_free(io);
        return rc;
    }
    add_scheme(io, "s3", &floe_s3_backend);
    add_scheme(io, "s3a", &floe_s3_backend);
    add_scheme(io, "s3n", &floe_s3_backend);
    *out = io;
    return 0;
}

void floe_io_free(floe_io *io) {
    if (!io || io == floe_io_default())
        return;
    floe_s3_config_free(&io->s3);
    floe_free(io);
}

int floe_io_new_derived(floe_io *io, const char *endpoint, const char *region,
                        floe_io_s3_addressing addressing, floe_io_credentials_fn fn, void *ctx,
                        floe_io **out, floe_error *err) {
    const floe_s3_config *b = &floe_io_resolve(io)->s3;
    floe_io_options o;
    floe_io_options_init(&o);
    int rc = 0;
    FLOE_CHECK(floe_io_options_set(&o.s3.endpoint, endpoint ? endpoint : b->endpoint, err));
    FLOE_CHECK(floe_io_options_set(&o.s3.region, region ? region : b->region, err));
    o.s3.addressing = addressing != FLOE_IO_S3_ADDRESSING_AUTO ? addressing
                      : b->path_style || (endpoint && !b->endpoint)
                          ? FLOE_IO_S3_ADDRESSING_PATH
                          : FLOE_IO_S3_ADDRESSING_VIRTUAL;
    o.s3.credentials = FLOE_IO_CREDS_CALLBACK;
    o.s3.credentials_fn = fn;
    o.s3.credentials_ctx = ctx;
    o.s3.unsigned_payload = b->unsigned_payload;
    o.s3.part_size = b->part_size;
    o.s3.list_page_size = b->list_page_size;
    o.retry.max_attempts = b->max_attempts;
    o.retry.budget_ms = b->retry_budget_ms;
    o.retry.base_delay_ms = b->base_delay_ms;
    o.retry.max_delay_ms = b->max_delay_ms;
    o.retry.timeout_ms = b->timeout_ms;
    o.retry.connect_timeout_ms = b->connect_timeout_ms;
    rc = floe_io_new(&o, out, err);
done:
    floe_io_options_free(&o);
    return rc;
}

int floe_io_s3_credentials(floe_io *io, const char *uri, floe_io_credentials *out,
                           floe_error *err) {
    const floe_s3_config *c = &floe_io_resolve(io)->s3;
    memset(out, 0, sizeof *out);
    if (c->anonymous)
        return floe_error_set(err, FLOE_EAUTH, "%s: the S3 settings are anonymous (no keys to "
                              "sign with)", uri);
    if (c->credentials_fn) {
        int rc = c->credentials_fn(c->credentials_ctx, uri, out, err);
        if (rc < 0 || (out->access_key && out->secret_key))
            return rc;
        floe_io_credentials_reset(out);
        return floe_error_set(err, FLOE_EAUTH, "%s: the credentials callback returned no keys",
                              uri);
    }
    if (!c->access_key || !c->secret_key)
        return floe_error_set(err, FLOE_EAUTH,
                              "%s: no AWS credentials (set AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials)", uri);
    out->access_key = floe_strdup(c->access_key);
    out->secret_key = floe_strdup(c->secret_key);
    out->session_token = c->session_token ? floe_strdup(c->session_token) : NULL;
    if (!out->access_key || !out->secret_key || (c->session_token && !out->session_token)) {
        floe_io_credentials_reset(out);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    return 0;
}

void floe_io_credentials_reset(floe_io_credentials *c) {
    if (!c)
        return;
    floe_free(c->access_key);
    floe_free(c->secret_key);
    floe_free(c->session_token);
    memset(c, 0, sizeof *c);
}

const char *floe_io_s3_region(floe_io *io) { return floe_io_resolve(io)->s3.region; }

/* The default context is static, so it exists without an allocation that could fail. */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static floe_io default_io;
static char default_region[] = "us-east-1";

static void default_init(void) {
    floe_io_options o;
    floe_io_options_init(&o);
    floe_s3_config *c = &default_io.s3;
    c->region = default_region;
    c->part_size = o.s3.part_size;
    c->list_page_size = o.s3.list_page_size;
    c->max_attempts = o.retry.max_attempts;
    c->retry_budget_ms = o.retry.budget_ms;
    c->base_delay_ms = o.retry.base_delay_ms;
    c->max_delay_ms = o.retry.max_delay_ms;
    c->timeout_ms = o.retry.timeout_ms;
    c->connect_timeout_ms = o.retry.connect_timeout_ms;
    add_scheme(&default_io, "s3", &floe_s3_backend);
    add_scheme(&default_io, "s3a", &floe_s3_backend);
    add_scheme(&default_io, "s3n", &floe_s3_backend);
}

floe_io *floe_io_default(void) {
    pthread_once(&default_once, default_init);
    return &default_io;
}

floe_io *floe_io_resolve(floe_io *io) { return io ? io : floe_io_default(); }

/* The backend of uri's scheme: a scheme of the context's table, else local files. */
static const floe_io_backend *backend_of(floe_io *io, const char *uri) {
    const char *colon = strstr(uri, "://");
    if (colon) {
        size_t n = (size_t)(colon - uri);
        for (size_t i = 0; i < io->n_schemes; i++)
            if (strlen(io->schemes[i].name) == n && !strncmp(uri, io->schemes[i].name, n))
                return io->schemes[i].backend;
    }
    return &floe_local_backend;
}

void floe_io_count(floe_io *io, int kind, int64_t bytes) {
    if (kind < 0 || kind >= FLOE_IO_NCOUNTERS)
        return;
    atomic_fetch_add(&io->requests[kind], 1);
    if (kind == FLOE_IO_GET)
        atomic_fetch_add(&io->bytes_read, bytes);
    else if (kind == FLOE_IO_PUT)
        atomic_fetch_add(&io->bytes_written, bytes);
}

void floe_io_stats_get(floe_io *io, floe_io_stats *out) {
    io = floe_io_resolve(io);
    out->get_requests = atomic_load(&io->requests[FLOE_IO_GET]);
    out->put_requests = atomic_load(&io->requests[FLOE_IO_PUT]);
    out->list_requests = atomic_load(&io->requests[FLOE_IO_LIST]);
    out->delete_requests = atomic_load(&io->requests[FLOE_IO_DELETE]);
    out->head_requests = atomic_load(&io->requests[FLOE_IO_HEAD]);
    out->bytes_read = atomic_load(&io->bytes_read);
    out->bytes_written = atomic_load(&io->bytes_written);
}

void floe_io_stats_reset(floe_io *io) {
    io = floe_io_resolve(io);
    for (int k = 0; k < FLOE_IO_NCOUNTERS; k++)
        atomic_store(&io->requests[k], 0);
    atomic_store(&io->bytes_read, 0);
    atomic_store(&io->bytes_written, 0);
}

bool floe_io_is_remote(const char *uri) {
    return !strncmp(uri, "s3://", 5) || !strncmp(uri, "s3a://", 6) ||
           !strncmp(uri, "s3n://", 6);
}

const char *floe_io_local_path_ref(const char *uri) {
    if (floe_io_is_remote(uri))
        return NULL;
    if (!strncmp(uri, "file://", 7)) {
        const char *p = uri + 7;
        /* file:///abs -> /abs; file://localhost/abs -> /abs; file://rel -> rel */
        if (!strncmp(p, "localhost/", 10))
            p += 9;
        return p;
    }
    if (!strncmp(uri, "file:", 5))
        return uri + 5;
    return uri;
}

char *floe_io_local_path(const char *uri) {
    const char *p = floe_io_local_path_ref(uri);
    return p ? floe_strdup(p) : NULL;
}

char *floe_io_join(const char *base, const char *rel) {
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    while (*rel == '/')
        rel++;
    if (bl == 0)
        return floe_strdup(rel);
    return floe_asprintf("%.*s/%s", (int)bl, base, rel);
}

/* ---------------------------------------------------------------------------------------
 * locations
 * ------------------------------------------------------------------------------------- */

/* Length of "scheme" in "scheme:..." (RFC 3986: a letter, then letters, digits, + - .);
 * 0 when uri has no scheme. A one-letter scheme is taken as none. */
static size_t scheme_len(const char *uri) {
    const char *p = uri;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return *p == ':' && p - uri > 1 ? (size_t)(p - uri) : 0;
}

static bool is_file_scheme(const char *uri, size_t n) {
    return n == 4 && !strncasecmp(uri, "file", 4);
}

bool floe_io_uri_has_remote_scheme(const char *uri) {
    size_t n = scheme_len(uri);
    return n > 0 && !is_file_scheme(uri, n);
}

/* The path part of a local location (a suffix of uri), and whether it is absolute. */
static const char *local_part(const char *uri, bool *absolute) {
    const char *p = uri;
    if (is_file_scheme(uri, scheme_len(uri))) {
        p = uri + 5;
        if (!strncmp(p, "//", 2)) {
            p += 2;
            if (!strncasecmp(p, "localhost/", 10))
                p += 9;
            /* file:///abs keeps its '/'; file://rel stays relative */
        }
    }
    *absolute = *p == '/';
    return p;
}

bool floe_io_uri_is_relative(const char *uri) {
    if (floe_io_uri_has_remote_scheme(uri))
        return false;
    bool absolute;
    local_part(uri, &absolute);
    return !absolute;
}

/* Append the segments of path to out (a buffer holding an absolute path, at least "/"),
 * dropping empty and "." segments and letting ".." remove the last one. */
static void push_segments(char *out, size_t *len, const char *path) {
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (*len > 1 && out[*len - 1] != '/')
                (*len)--;
            if (*len > 1)
                (*len)--; /* the '/' before the removed segment */
        } else {
            if (out[*len - 1] != '/')
                out[(*len)++] = '/';
            memcpy(out + *len, p, n);
            *len += n;
        }
        out[*len] = '\0';
        p = e;
    }
}

int floe_io_uri_absolute(const char *uri, const char *base, char **out, floe_error *err) {
    if (!uri || !*uri)
        return floe_error_set(err, FLOE_EINVALID, "empty location");
    if (floe_io_uri_has_remote_scheme(uri)) {
        size_t n = strlen(uri);
        while (n > 0 && uri[n - 1] == '/' && uri[n - 2] != '/')
            n--;
        char *copy = floe_strndup(uri, n);
        if (!copy)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        *out = copy;
        return 0;
    }
    bool absolute;
    const char *path = local_part(uri, &absolute);
    char *anchor = NULL;
    if (!absolute) {
        if (base) {
            int rc = floe_io_uri_absolute(base, NULL, &anchor, err);
            if (rc < 0)
                return rc;
            if (floe_io_uri_has_remote_scheme(anchor)) {
                char *joined = floe_io_join(anchor, path);
                floe_free(anchor);
                if (!joined)
                    return floe_error_set(err, FLOE_ENOMEM, "out of memory");
                rc = floe_io_uri_absolute(joined, NULL, out, err);
                floe_free(joined);
                return rc;
            }
        } else {
            char cwd[4096];
            if (!getcwd(cwd, sizeof cwd))
                return floe_error_errno(err, errno, "%s is relative and the working folder "
                                        "is unknown", uri);
            anchor = floe_strdup(cwd);
            if (!anchor)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
    }
    const char *anchor_path = NULL;
    if (anchor) {
        bool a;
        anchor_path = local_part(anchor, &a);
    }
    size_t cap = strlen(path) + (anchor_path ? strlen(anchor_path) : 0) + 16;
    char *buf = floe_malloc(cap);
    if (!buf) {
        floe_free(anchor);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    /* "file://" then the path, whose segments are pushed after its leading '/' */
    memcpy(buf, "file:///", 9);
    size_t plen = 1;
    if (anchor_path)
        push_segments(buf + 7, &plen, anchor_path);
    push_segments(buf + 7, &plen, path);
    floe_free(anchor);
    *out = buf;
    return 0;
}

char *floe_io_uri_key(const char *uri) {
    char *abs = NULL;
    if (floe_io_uri_absolute(uri, NULL, &abs, NULL) < 0)
        return NULL;
    size_t n = scheme_len(abs);
    for (size_t i = 0; i < n; i++)
        if (abs[i] >= 'A' && abs[i] <= 'Z')
            abs[i] = (char)(abs[i] + 32);
    if ((n == 3 && (!strncmp(abs, "s3a", 3) || !strncmp(abs, "s3n", 3))))
        memmove(abs + 2, abs + 3, strlen(abs + 3) + 1); /* "s3a://" -> "s3://" */
    return abs;
}

bool floe_io_uri_within(const char *uri, const char *prefix) {
    char *k = floe_io_uri_key(uri), *pk = floe_io_uri_key(prefix);
    bool yes = false;
    if (k && pk) {
        size_t n = strlen(pk);
        while (n > 0 && pk[n - 1] == '/')
            n--; /* "file:///" itself */
        yes = !strncmp(k, pk, n) && (k[n] == '\0' || k[n] == '/');
    }
    floe_free(k);
    floe_free(pk);
    return yes;
}

/* A public handle wraps one backend object and the operations of its backend. */
struct floe_output {
    const floe_io_backend *be;
    void *obj;
};

struct floe_input {
    const floe_io_backend *be;
    void *obj;
};

int floe_output_open(floe_io *io, const char *uri, const floe_output_options *opts,
                     floe_output **out, floe_error *err) {
    io = floe_io_resolve(io);
    floe_output *o = floe_calloc(1, sizeof *o);
    if (!o)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    o->be = backend_of(io, uri);
    int rc = o->be->output_open(io, uri, opts, &o->obj, err);
    if (rc < 0) {
        floe_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int floe_output_write(floe_output *o, const void *p, size_t n, floe_error *err) {
    return o->be->output_write(o->obj, p, n, err);
}

int64_t floe_output_tell(const floe_output *o) { return o->be->output_tell(o->obj); }

int floe_output_close(floe_output *o, floe_error *err) {
    int rc = o->be->output_close(o->obj, err);
    floe_free(o);
    return rc;
}

void floe_output_abort(floe_output *o) {
    if (!o)
        return;
    o->be->output_abort(o->obj);
    floe_free(o);
}

static int input_open(floe_io *io, const char *uri, bool sequential, floe_input **out,
                      floe_error *err) {
    io = floe_io_resolve(io);
    floe_input *in = floe_calloc(1, sizeof *in);
    if (!in)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    in->be = backend_of(io, uri);
    int rc = sequential && in->be->input_open_sequential
                 ? in->be->input_open_sequential(io, uri, &in->obj, err)
                 : in->be->input_open(io, uri, &in->obj, err);
    if (rc < 0) {
        floe_free(in);
        return rc;
    }
    *out = in;
    return 0;
}

int floe_input_open(floe_io *io, const char *uri, floe_input **out, floe_error *err) {
    return input_open(io, uri, false, out, err);
}

int floe_input_open_sequential(floe_io *io, const char *uri, floe_input **out,
                               floe_error *err) {
    return input_open(io, uri, true, out, err);
}

int floe_io_fetcher_new(floe_io *io, const char *uri, size_t inflight, floe_io_fetcher **out,
                        floe_error *err) {
    io = floe_io_resolve(io);
    if (backend_of(io, uri) != &floe_s3_backend)
        return 1;
    return floe_s3_fetcher_new(io, inflight ? inflight : 1, out, err);
}

int64_t floe_input_size(const floe_input *in) { return in->be->input_size(in->obj); }

const char *floe_input_uri(const floe_input *in) { return in->be->input_uri(in->obj); }

int floe_input_read_at(floe_input *in, int64_t off, void *buf, size_t n, floe_error *err) {
    return in->be->input_read_at(in->obj, off, buf, n, err);
}

int floe_input_mmap(floe_input *in, const uint8_t **out, floe_error *err) {
    return in->be->input_mmap ? in->be->input_mmap(in->obj, out, err) : 1;
}

bool floe_input_mmap_shrank(const floe_input *in) {
    return in->be->input_mmap_shrank && in->be->input_mmap_shrank(in->obj);
}

void floe_input_mmap_release(floe_input *in, int64_t off, size_t n) {
    if (in->be->input_mmap_release)
        in->be->input_mmap_release(in->obj, off, n);
}

void floe_input_mmap_prefault(floe_input *in, int64_t off, size_t n) {
    if (in->be->input_mmap_prefault)
        in->be->input_mmap_prefault(in->obj, off, n);
}

void floe_input_close(floe_input *in) {
    if (!in)
        return;
    in->be->input_close(in->obj);
    floe_free(in);
}

int floe_io_exists(floe_io *io, const char *uri, bool *exists, floe_error *err) {
    io = floe_io_resolve(io);
    return backend_of(io, uri)->exists(io, uri, exists, err);
}

int floe_io_delete(floe_io *io, const char *uri, floe_error *err) {
    io = floe_io_resolve(io);
    return backend_of(io, uri)->remove(io, uri, err);
}

int floe_io_delete_many(floe_io *io, const char *const *uris, size_t n, floe_error *err) {
    io = floe_io_resolve(io);
    size_t i = 0;
    while (i < n) {
        /* runs of one backend go to its batch delete when it has one; others one by one */
        const floe_io_backend *be = backend_of(io, uris[i]);
        size_t j = i + 1;
        while (j < n && backend_of(io, uris[j]) == be)
            j++;
        if (be->remove_many) {
            FLOE_FORWARD_IF_ERROR(be->remove_many(io, uris + i, j - i, err));
        } else {
            for (size_t k = i; k < j; k++)
                FLOE_FORWARD_IF_ERROR(be->remove(io, uris[k], err));
        }
        i = j;
    }
    return 0;
}

int floe_io_mkdirs(floe_io *io, const char *uri, floe_error *err) {
    io = floe_io_resolve(io);
    const floe_io_backend *be = backend_of(io, uri);
    return be->mkdirs ? be->mkdirs(io, uri, err) : 0;
}

struct floe_io_syncer {
    floe_local_syncer *local;
};

int floe_io_syncer_open(floe_io *io, const char *uri, size_t min_batch, floe_io_syncer **out,
                        floe_error *err) {
    io = floe_io_resolve(io);
    *out = NULL;
    if (backend_of(io, uri) != &floe_local_backend)
        return 0; /* objects are durable once written */
    floe_io_syncer *sy = floe_calloc(1, sizeof *sy);
    if (!sy)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_local_syncer_open(io, uri, min_batch, &sy->local, err);
    if (rc < 0) {
        floe_free(sy);
        return rc;
    }
    *out = sy;
    return 0;
}

int floe_io_syncer_sync(floe_io_syncer *sy, const char *const *uris, size_t n,
                        floe_error *err) {
    return sy ? floe_local_syncer_sync(sy->local, uris, n, err) : 0;
}

void floe_io_syncer_close(floe_io_syncer *sy) {
    if (!sy)
        return;
    floe_local_syncer_close(sy->local);
    floe_free(sy);
}

int floe_io_list(floe_io *io, const char *prefix,
                 int (*fn)(void *ctx, const floe_io_entry *e), void *ctx, floe_error *err) {
    io = floe_io_resolve(io);
    return backend_of(io, prefix)->list(io, prefix, fn, ctx, err);
}

int floe_io_read_all(floe_io *io, const char *uri, size_t max, floe_buf *out,
                     floe_error *err) {
    floe_input *in = NULL;
    int rc = floe_input_open(io, uri, &in, err);
    if (rc < 0)
        return rc;
    int64_t size = floe_input_size(in);
    if (max && size > (int64_t)max) {
        floe_input_close(in);
        return floe_error_set(err, FLOE_ELIMIT, "%s: %lld bytes is larger than the limit %zu",
                              uri, (long long)size, max);
    }
    floe_buf_reset(out);
    if ((rc = floe_buf_reserve(out, (size_t)size)) < 0) {
        floe_input_close(in);
        return floe_error_set(err, rc, "%s: cannot buffer %lld bytes", uri, (long long)size);
    }
    rc = floe_input_read_at(in, 0, out->data, (size_t)size, err);
    if (rc == 0) {
        out->len = (size_t)size;
        out->data[out->len] = '\0'; /* reserve kept room for a NUL */
    }
    floe_input_close(in);
    return rc;
}

int floe_io_write_all(floe_io *io, const char *uri, const void *p, size_t n,
                      const floe_output_options *opts, floe_error *err) {
    floe_output *o = NULL;
    int rc = floe_output_open(io, uri, opts, &o, err);
    if (rc < 0)
        return rc;
    if ((rc = floe_output_write(o, p, n, err)) < 0) {
        floe_output_abort(o);
        return rc;
    }
    return floe_output_close(o, err);
}
