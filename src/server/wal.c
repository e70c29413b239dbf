/*
 * wal.c - the write-ahead log of `floe serve`: one writer thread, group commit (I1).
 *
 * Requests prepare their frame (compression included) on their own thread and queue it;
 * the writer takes everything queued, stamps frame ids in queue order, writes the frames
 * with one writev, fsyncs once, hands each frame to the landing buffers and only then
 * wakes the requests, which answer. While it fsyncs, the next group gathers.
 *
 * Frame ids grow by one per frame across segments and restarts (the start value is above
 * every id in the WAL and in the landing index), which the replay watermarks rely on.
 *
 * A failed write or fsync (a full disk, an I/O error) makes the WAL refuse every frame
 * (503 + Retry-After; /healthz names it) until it has recovered: the writer thread tries
 * again with a backoff (100 ms doubling to 5 s) to cut the segment back to what the last
 * fsync covered - the frames of the failed batch were refused, so none of them may
 * survive in the file, and what the page cache holds after a failed fsync cannot be
 * trusted - make that durable, and go on in a fresh segment. Once space returns, posts
 * are taken again without a restart. A durable frame that cannot be buffered (out of
 * memory) is different: the WAL then stays closed until a restart replays it.
 * A segment that cannot be rotated (no room for a new one) is written on past
 * wal_segment_size, and the rotation tried again after the next batch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "floe/io.h"
#include "server_internal.h"

static int fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

static int segment_open(floe_server *s, uint64_t segno, floe_error *err) {
    char *p = floe_asprintf("%s/wal-%020llu.log", s->wal_dir, (unsigned long long)segno);
    if (!p)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = floe_error_errno(err, errno, "create %s", p);
        floe_free(p);
        return rc;
    }
    uint8_t h[FLOE_SEGMENT_HEADER];
    floe_segment_header(h, segno);
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h || fsync(fd) != 0 ||
        fsync_dir(s->wal_dir) != 0) {
        int rc = floe_error_errno(err, errno, "write %s", p);
        close(fd);
        unlink(p);
        floe_free(p);
        return rc;
    }
    floe_free(p);
    srv_landing_segment_opened(s, segno);
    if (s->wal.fd >= 0)
        close(s->wal.fd);
    s->wal.fd = fd;
    s->wal.segno = segno;
    s->wal.seg_bytes = FLOE_SEGMENT_HEADER;
    s->wal.synced_bytes = FLOE_SEGMENT_HEADER;
    atomic_store(&s->wal.active_seg, segno);
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Replay one segment into the buffers (apply), or only find its highest frame id; cut a
 * torn or corrupt tail. limit >= 0: read only that many bytes (the segment being written:
 * what its last fsync covered; nothing is cut then). */
static int replay_segment(floe_server *s, uint64_t segno, int64_t limit, bool apply,
                          uint64_t *max_frame, floe_error *err) {
    char *p = floe_asprintf("%s/wal-%020llu.log", s->wal_dir, (unsigned long long)segno);
    if (!p)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = floe_io_read_all(s->cfg.io, p, (size_t)1 << 31, &b, err);
    if (rc < 0)
        goto done;
    if (limit >= 0 && b.len > (size_t)limit)
        b.len = (size_t)limit;
    uint64_t hdr_seg = 0;
    size_t pos = FLOE_SEGMENT_HEADER, good = 0;
    if (!floe_segment_header_ok(b.data, b.len, &hdr_seg) || hdr_seg != segno) {
        floe_log(FLOE_LOG_WARN, "serve: WAL %s: bad segment header, ignoring its contents", p);
        pos = b.len;
    } else {
        good = pos;
    }
    int64_t frames = 0;
    while (pos < b.len) {
        floe_frame_view f;
        size_t used;
        floe_error fe;
        floe_error_clear(&fe);
        if (floe_frame_parse(b.data + pos, b.len - pos, &f, &used, &fe) < 0) {
            floe_log(FLOE_LOG_WARN, "serve: WAL %s: cutting %zu bytes at offset %zu (%s)", p,
                     b.len - pos, pos, fe.msg);
            break;
        }
        if (apply)
            FLOE_CHECK(srv_landing_apply(s, &f, segno, true, err));
        if (f.frame_id > *max_frame)
            *max_frame = f.frame_id;
        pos += used;
        good = pos;
        frames++;
    }
    if (good < b.len && limit < 0) {
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)good) != 0 || fsync(fd) != 0) {
            rc = floe_error_errno(err, errno, "truncate %s", p);
            if (fd >= 0)
                close(fd);
            goto done;
        }
        close(fd);
    }
    srv_landing_segment_opened(s, segno);
    floe_log(FLOE_LOG_INFO, "serve: WAL %s: %s %lld frames", p, apply ? "replayed" : "kept",
             (long long)frames);
done:
    if (rc < 0)
        floe_error_prefix(err, "WAL %s: ", p);
    floe_buf_free(&b);
    floe_free(p);
    return rc;
}

/* The segment numbers in the WAL folder, ascending (floe_malloc'ed). */
static int list_segments(floe_server *s, uint64_t **out, size_t *count, floe_error *err) {
    uint64_t *segs = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    DIR *d = opendir(s->wal_dir);
    if (!d)
        return floe_error_set(err, FLOE_EIO, "open %s: %s", s->wal_dir, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        unsigned long long v;
        char tail[8];
        if (sscanf(de->d_name, "wal-%20llu.%7s", &v, tail) == 2 && !strcmp(tail, "log") &&
            strlen(de->d_name) == 28) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                uint64_t *ns = floe_realloc(segs, cap * sizeof *ns);
                if (!ns)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                segs = ns;
            }
            segs[n++] = v;
        }
    }
    if (n)
        qsort(segs, n, sizeof *segs, cmp_u64);
    *out = segs;
    *count = n;
    segs = NULL;
done:
    closedir(d);
    floe_free(segs);
    return rc;
}

int srv_wal_open(floe_server *s, bool replay, floe_error *err) {
    srv_wal *w = &s->wal;
    w->fd = -1;
    int rc = 0;
    uint64_t *segs = NULL;
    size_t n = 0;
    FLOE_CHECK(floe_io_mkdirs(s->cfg.io, s->wal_dir, err));
    FLOE_CHECK(list_segments(s, &segs, &n, err));
    uint64_t max_frame = replay ? srv_landing_max_frame(s) : 0;
    for (size_t i = 0; i < n; i++)
        FLOE_CHECK(replay_segment(s, segs[i], -1, replay, &max_frame, err));
    w->next_frame_id = max_frame + 1;
    if (!replay) {
        /* The index (which knows the last frame of every landing file) cannot be asked,
         * and sealed segments are deleted: start above any id a counter from 1 can have
         * reached - microseconds since the epoch. srv_wal_catch_up checks it against the
         * index. */
        uint64_t floor = (uint64_t)floe_wall_ms() * 1000;
        if (w->next_frame_id < floor)
            w->next_frame_id = floor;
    }
    w->apply = replay;
    FLOE_CHECK(segment_open(s, n ? segs[n - 1] + 1 : 1, err));
done:
    floe_free(segs);
    return rc;
}

int srv_wal_catch_up(floe_server *s, floe_error *err) {
    srv_wal *w = &s->wal;
    uint64_t *segs = NULL;
    size_t n = 0;
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    w->hold = true;
    while (w->busy)
        pthread_cond_wait(&w->cv_done, &w->mu);
    /* the writer waits: the segments are what they are */
    FLOE_CHECK(list_segments(s, &segs, &n, err));
    uint64_t max_frame = 0;
    for (size_t i = 0; i < n && segs[i] <= w->segno; i++)
        FLOE_CHECK(replay_segment(s, segs[i], segs[i] == w->segno ? w->synced_bytes : -1,
                                  true, &max_frame, err));
    uint64_t indexed = srv_landing_max_frame(s);
    if (indexed >= w->next_frame_id) {
        floe_log(FLOE_LOG_ERROR, "serve: the landing index has frame %llu of this node, above "
                 "the frames taken while it was unreachable (from %llu): the clock went back?",
                 (unsigned long long)indexed, (unsigned long long)w->next_frame_id);
        w->next_frame_id = indexed + 1;
    }
    w->apply = true;
done:
    w->hold = false;
    pthread_cond_broadcast(&w->cv_work);
    pthread_mutex_unlock(&w->mu);
    floe_free(segs);
    return rc;
}

static int wal_recover(floe_server *s, floe_error *err) {
    srv_wal *w = &s->wal;
    struct statvfs vfs;
    if (w->failed == FLOE_ENOSPACE && w->fd >= 0 && fstatvfs(w->fd, &vfs) == 0) {
        /* room for the batch that failed, twice, beyond what cutting it frees: without
         * it the next batch would fail the same way at once */
        int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
        int64_t want = 2 * w->failed_bytes + (64 << 10);
        struct stat st;
        if (fstat(w->fd, &st) == 0 && st.st_size > w->synced_bytes)
            avail += (int64_t)st.st_size - w->synced_bytes; /* what the cut frees */
        if (avail < want)
            return floe_error_set(err, FLOE_ENOSPACE, "waiting for room in %s: %lld bytes "
                                  "free, %lld wanted", s->wal_dir, (long long)avail,
                                  (long long)want);
    }
    if (w->fd >= 0 && (ftruncate(w->fd, (off_t)w->synced_bytes) != 0 || fsync(w->fd) != 0))
        return floe_error_errno(err, errno, "WAL segment %llu: cutting the failed write",
                                (unsigned long long)w->segno);
    w->seg_bytes = w->synced_bytes;
    return segment_open(s, w->segno + 1, err);
}

/* Called with w->mu held: failed, and time for another try? Then try (unlocking while it
 * runs); on success the WAL takes frames again. */
static void wal_try_recover(floe_server *s) {
    srv_wal *w = &s->wal;
    if (!w->failed || w->failed_for_good || w->hold || floe_wall_ms() < w->retry_at_ms)
        return;
    w->busy = true; /* the segments change: srv_wal_catch_up waits */
    pthread_mutex_unlock(&w->mu);
    floe_error e;
    floe_error_clear(&e);
    int rc = wal_recover(s, &e);
    pthread_mutex_lock(&w->mu);
    w->busy = false;
    pthread_cond_broadcast(&w->cv_done);
    if (rc == 0) {
        w->failed = 0;
        w->retry_ms = 0;
        atomic_fetch_add(&s->m.wal_recoveries, 1);
        floe_log(FLOE_LOG_INFO, "serve: WAL writable again (segment %llu)",
                 (unsigned long long)w->segno);
        srv_health_ok(s, SRV_H_WAL);
        return;
    }
    w->retry_ms = w->retry_ms ? (w->retry_ms * 2 > 5000 ? 5000 : w->retry_ms * 2) : 100;
    w->retry_at_ms = floe_wall_ms() + w->retry_ms;
    srv_health_fail(s, SRV_H_WAL, "not writable since a write failed (%s); %s",
                    floe_strerror(w->failed), e.msg);
}

static void *wal_main(void *arg) {
    floe_server *s = arg;
    srv_thread_name("floe-wal");
    srv_wal *w = &s->wal;
    struct iovec *iov = NULL;
    size_t iov_cap = 0;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        wal_try_recover(s);
        while ((!w->head || w->hold) && !w->stop) {
            if (w->hold) {
                pthread_cond_wait(&w->cv_work, &w->mu);
            } else if (w->failed && !w->failed_for_good) { /* wake up for the next try */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                int64_t wait = w->retry_at_ms - floe_wall_ms();
                wait = wait < 1 ? 1 : wait;
                ts.tv_sec += (time_t)(wait / 1000);
                ts.tv_nsec += (long)(wait % 1000) * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&w->cv_work, &w->mu, &ts);
                wal_try_recover(s);
            } else {
                pthread_cond_wait(&w->cv_work, &w->mu);
            }
        }
        if (!w->head && w->stop) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        wal_req *batch = w->head;
        w->head = w->tail = NULL;
        int failed = w->failed;
        bool apply = w->apply;
        w->busy = true;
        pthread_mutex_unlock(&w->mu);

        size_t nreq = 0;
        int64_t bytes = 0, batch_bytes = 0; /* written; queued by the batch */
        for (wal_req *r = batch; r; r = r->next) {
            nreq++;
            batch_bytes += (int64_t)r->frame->len;
        }
        int rc = failed;
        if (rc == 0 && nreq > iov_cap) {
            struct iovec *ni = floe_realloc(iov, nreq * 2 * sizeof *ni);
            if (!ni)
                rc = FLOE_ENOMEM;
            else {
                iov = ni;
                iov_cap = nreq * 2;
            }
        }
        if (rc == 0) {
            uint64_t now = (uint64_t)floe_wall_ms();
            size_t k = 0;
            for (wal_req *r = batch; r; r = r->next) {
                r->frame_id = w->next_frame_id++;
                floe_frame_stamp(r->frame->data, r->frame_id, now);
                iov[k].iov_base = r->frame->data;
                iov[k].iov_len = r->frame->len;
                bytes += (int64_t)r->frame->len;
                k++;
            }
            /* write everything, IOV_MAX at a time, resuming after short writes */
            size_t at = 0;
            while (at < k && rc == 0) {
                int cnt = (int)(k - at > IOV_MAX ? IOV_MAX : k - at);
                ssize_t wr = writev(w->fd, iov + at, cnt);
                if (wr < 0) {
                    if (errno == EINTR)
                        continue;
                    floe_log(FLOE_LOG_ERROR, "serve: WAL write: %s", strerror(errno));
                    rc = errno == ENOSPC ? FLOE_ENOSPACE : FLOE_EIO;
                    break;
                }
                size_t left = (size_t)wr;
                while (at < k && left >= iov[at].iov_len) {
                    left -= iov[at].iov_len;
                    at++;
                }
                if (at < k && left) {
                    iov[at].iov_base = (uint8_t *)iov[at].iov_base + left;
                    iov[at].iov_len -= left;
                }
            }
            if (rc == 0 && fdatasync(w->fd) != 0) {
                floe_log(FLOE_LOG_ERROR, "serve: WAL fsync: %s", strerror(errno));
                rc = errno == ENOSPC ? FLOE_ENOSPACE : FLOE_EIO;
            }
            if (rc < 0 && !failed) {
                srv_health_fail(s, SRV_H_WAL, "not writable: %s (segment %llu); retrying",
                                floe_strerror(rc), (unsigned long long)w->segno);
                atomic_fetch_add(&s->m.wal_failures, 1);
            }
            if (rc == 0) {
                atomic_fetch_add(&s->m.wal_fsyncs, 1);
                atomic_fetch_add(&s->m.wal_frames, nreq);
                atomic_fetch_add(&s->m.wal_bytes, (uint64_t)bytes);
                w->seg_bytes += bytes;
                w->synced_bytes = w->seg_bytes;
                uint64_t seg = w->segno;
                for (wal_req *r = batch; r && rc == 0 && apply; r = r->next) {
                    const uint8_t *h = r->frame->data;
                    floe_frame_view f = {
                        .frame_id = r->frame_id,
                        .time_ms = now,
                        .nsections = (uint32_t)h[6] | ((uint32_t)h[7] << 8),
                        .records = floe_load_le32(h + 16),
                        .raw_len = floe_load_le32(h + 20),
                        .body = h + FLOE_FRAME_HEADER,
                        .body_len = r->frame->len - FLOE_FRAME_HEADER,
                    };
                    floe_error e;
                    floe_error_clear(&e);
                    rc = srv_landing_apply(s, &f, seg, false, &e);
                    if (rc < 0) {
                        floe_log(FLOE_LOG_ERROR, "serve: buffering frame: %s", e.msg);
                        srv_health_fail(s, SRV_H_WAL, "a durable frame could not be buffered "
                                        "(%s): restart the server to replay the WAL", e.msg);
                        atomic_fetch_add(&s->m.wal_failures, 1);
                        pthread_mutex_lock(&w->mu);
                        w->failed_for_good = true;
                        pthread_mutex_unlock(&w->mu);
                    }
                }
                if (rc == 0 && w->seg_bytes >= s->cfg.wal_segment_bytes) {
                    /* the batch is durable whatever happens here: a segment that cannot
                     * be rotated is written on, and rotated after the next batch */
                    floe_error e;
                    floe_error_clear(&e);
                    if (segment_open(s, w->segno + 1, &e) < 0)
                        floe_log(FLOE_LOG_WARN, "serve: WAL rotate (writing on in segment "
                                 "%llu): %s", (unsigned long long)w->segno, e.msg);
                }
            }
        }
        pthread_mutex_lock(&w->mu);
        if (rc < 0 && !w->failed) {
            w->failed = rc;
            w->failed_bytes = bytes;
            w->retry_ms = 100;
            w->retry_at_ms = floe_wall_ms() + w->retry_ms;
        }
        w->busy = false;
        w->queued_bytes -= batch_bytes;
        for (wal_req *r = batch; r;) {
            wal_req *next = r->next;
            r->rc = rc;
            r->done = true;
            r = next;
        }
        pthread_cond_broadcast(&w->cv_done);
        pthread_mutex_unlock(&w->mu);
    }
    floe_free(iov);
    return NULL;
}

int srv_wal_start(floe_server *s, floe_error *err) {
    if (pthread_create(&s->wal.thr, NULL, wal_main, s) != 0)
        return floe_error_set(err, FLOE_EINTERNAL, "cannot start the WAL thread");
    s->wal.thr_started = true;
    return 0;
}

int srv_wal_submit(floe_server *s, wal_req *r) {
    srv_wal *w = &s->wal;
    r->next = NULL;
    r->done = false;
    r->rc = 0;
    pthread_mutex_lock(&w->mu);
    if (w->failed || w->stop) {
        int rc = w->failed ? w->failed : FLOE_ECANCELLED;
        pthread_mutex_unlock(&w->mu);
        return rc;
    }
    if (w->tail)
        w->tail->next = r;
    else
        w->head = r;
    w->tail = r;
    w->queued_bytes += (int64_t)r->frame->len;
    pthread_cond_signal(&w->cv_work);
    while (!r->done)
        pthread_cond_wait(&w->cv_done, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return r->rc;
}

int64_t srv_wal_queued(floe_server *s) {
    pthread_mutex_lock(&s->wal.mu);
    int64_t q = s->wal.queued_bytes;
    pthread_mutex_unlock(&s->wal.mu);
    return q;
}

void srv_wal_stop(floe_server *s) {
    srv_wal *w = &s->wal;
    if (w->thr_started) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->cv_work);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thr, NULL);
        w->thr_started = false;
    }
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
}
