/*
 * kafka.c - [source kafka NAME]: Kafka topics consumed into Iceberg tables, exactly once,
 * with Kafka's consumer groups spreading the topic partitions over floe nodes.
 *
 * One thread per source polls a librdkafka consumer (group `group.id`, auto-commit off).
 * Each message is split into records (format json: the message is one object; ndjson:
 * one object per line; array: a JSON array of objects), the configured metadata columns
 * (key, headers, timestamp, topic, partition, offset) are written into each object, and
 * the records go to the spool of their target table (fixed, or `{topic}` in the table
 * name): NDJSON in an anonymous memory file (memfd), which the conversion reads as a
 * file. Nothing here is durable: Kafka is the log, the table's offsets say where to
 * resume; the spools' bytes are the buffered memory that max_buffered_bytes bounds.
 *
 * Commit of a table (its interval's first record is commit_interval old, and so is the
 * end of the table's last commit, so snapshots are commit_interval apart; or a rebalance
 * revokes partitions, or the server flushes or stops, or the interval holds commit_bytes
 * when that is set: no default, or its staged segments' file records hold half of
 * max_buffered_bytes: staged_pack), see "Staging" below for what an interval is: the spool goes
 * through the convert pipeline (floe/convert.h: the shredder, partitioned routing, large
 * Snappy Parquet files) exactly as landing compaction does (compactor.c's srv_job_table
 * and srv_files), the rejected records are written to the quarantine with their topic,
 * partition and offset, and one Iceberg append commits the files together with, for each
 * topic-partition of the batch, the table property
 *
 *     floe.kafka.<group>.<topic>.<partition> = the next offset to consume
 *
 * (and floe.kafka.offsets in the snapshot summary, for people reading the history), and
 * the property floe.kafka-group.<group> registering the group as a writer of the table.
 * Properties are kept by every commit (expiry, rewrite, other appends), so the offsets
 * survive snapshot expiry. The append's check, run on the metadata every attempt starts
 * from, requires each of those properties to still hold the value this consumer resumed
 * from or last wrote: a conflict with another group member (other partitions) retries and
 * merges; a partition some other consumer committed meanwhile (a zombie that lost the
 * partition, or this one after a lost commit) fences the commit: nothing is committed,
 * the spool is dropped and every partition of the table seeks back to the table's offset.
 *
 * The keys are unambiguous within a group (the partition is the last part, an integer;
 * topic names hold [a-zA-Z0-9._-]), not across groups writing one table when one group id
 * extends the other by a '.'-separated part: group a.b's topic c and group a's topic b.c
 * both make floe.kafka.a.b.c.<partition>. The key format stays (a node of an earlier
 * version of the group, in a rolling upgrade, reads it); instead every commit registers
 * its group (floe.kafka-group.<group>: the group id is the whole rest of the key), and a
 * group refuses a table registering such another group (group_conflict): at the commit,
 * in the same check as the fence (so two such groups committing at once cannot both
 * pass: the second's attempt starts from metadata holding the first's registration),
 * and wherever the table's offsets are read (assignment, seeking back). The refused
 * commit fails (the batch is kept and retried, nothing acknowledged to Kafka), the
 * refused assignment takes no partition; both log an error naming the two groups and the
 * table and count in floe_kafka_group_refused_total. A table's groups are known from
 * their first commit with this registry on: groups that wrote it only before are not.
 *
 *   assigned (seek to the table's offset) --messages--> buffered (spool)
 *     --commit ok--> committed (Kafka's committed offset updated afterwards, for lag
 *                    monitoring only)
 *     --fenced / unknown outcome--> dropped: seek to the table's offset, consume again
 *     --failure--> kept, retried after a back-off; once the failing tables hold half of
 *                  max_buffered_bytes, the partitions feeding them pause until they commit
 *   revoked (rebalance): committed first; if that fails, dropped (the next owner resumes
 *                        from the table's offset): never both.
 *
 * Pipelining: a table's batch that is due is sealed (seal(): its spool, and each
 * partition's first offset, the offset its fence expects and its position, as they are
 * at that moment) and committed on a thread of its own (commit_batch), while the consumer
 * thread goes on taking messages into the table's next, open batch. The commit writes the
 * positions of the seal, so the offsets in the table always end exactly where the events
 * in it end; what was taken since is in the open batch, consumed again after a crash.
 * One batch of the source commits at a time, and a table's open batch is sealed only
 * once its sealed one is gone, so each commit's fence expects the offsets the commit
 * before it wrote. Its outcome is applied on the consumer thread (finish()): committed,
 * the partitions' offsets become the seal's; fenced or unknown, the sealed and the open
 * batch are dropped and the partitions seek back to the table's offsets; failed, the
 * sealed batch is kept and retried (the open one keeps growing, under the budget). A
 * rebalance, a flush and the stop first wait for the batch committing (drain()), so a
 * revoked partition's batch is committed while the partition is still this consumer's,
 * or dropped, before the callback returns; at max_buffered_bytes the consumer waits too.
 *
 * Staging (one snapshot per table per interval, within the memory budget): a table's
 * uncommitted content is its interval: staged segments (batches already converted into
 * data files, their spool freed), the sealed batch and the open batch. The open batch is
 * sealed for memory when it holds half of max_buffered_bytes or the source holds all of
 * it; when the table's commit is not due then and its commits are not failing
 * (failures == 0), the sealed batch is a stage job (kf_batch.stage), dispatched like a
 * commit: commit_batch converts it (ahead or not) and writes its rejects into pending
 * quarantine files named with the interval's id and expected offsets, and appends
 * nothing; finish() moves its files, partition offsets and pending files to the table's
 * staged list and frees its spool. The commit of the interval (a commit job) takes the
 * staged segments (interval_take), converts the last sealed batch (perhaps empty) and
 * appends every segment's files with its own in ONE append, with for each partition the
 * fence's expected offset (the same in every segment: nothing of the table commits within
 * an interval), its first segment's first offset, its last segment's next offset and
 * floor, and the interval's id as the batch id; committed, every segment's pending
 * quarantine file is published. Fenced or of unknown outcome, the whole interval is
 * dropped (its staged files deleted unless the outcome is unknown) and consumed again;
 * failed, kept and retried. A failing table stages nothing: its open batch grows to half
 * the budget, then its partitions pause, as above. Staged files are in no snapshot until
 * the commit, and floe orphans may delete unreferenced files an hour old: an interval
 * holding staged segments is due 15 min after its first record at the latest (whatever
 * commit_interval), and one whose commit still fails 45 min after it is dropped
 * (KF_STAGED_DROP_MS). A crash leaves the interval's staged files in the table's
 * location, in no snapshot (orphans, which floe orphans removes), and its pending
 * quarantine files, settled as below.
 *
 * The quarantine of a topic-partition's batch (or staged segment) is one file, named by
 * the offset of the batch's first message and its interval's id (two groups' names,
 * which can read the same with '-' in a group id or a topic, never meet), published only
 * once the interval is committed: written under a pending name carrying the interval's id
 * (which the commit also writes, per partition, as
 * floe.kafka-batch.<group>.<topic>.<partition>) and the offset its fence expects, and
 * renamed after the commit. A fenced or failed commit deletes its
 * pending files; one that outlives its writer (a crash between commit and rename, or an
 * unknown outcome) is settled from the table before the partition is consumed or
 * committed again: the table names its batch = published; the table's offset is past
 * where it starts = deleted (never committed, and never can be). So every rejected record
 * is in the quarantine once, like every accepted one in the table (see settle()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <jansson.h>
#include "common/lazy_kafka.h"

#include "floe/append.h"
#include "floe/convert.h"
#include "floe/io.h"
#include "floe/quarantine.h"
#include "floe/table_metadata.h"
#include "common/keyset.h"
#include "server_internal.h"

enum { FMT_JSON, FMT_NDJSON, FMT_ARRAY };
enum { COL_KEY, COL_HEADERS, COL_TIMESTAMP, COL_TOPIC, COL_PARTITION, COL_OFFSET, NCOLS };
static const char *const col_keys[NCOLS] = {"column.key", "column.headers",
                                            "column.timestamp", "column.topic",
                                            "column.partition", "column.offset"};

/* One spool line: where it is and where it came from. */
typedef struct kf_line {
    int64_t at;             /* byte offset of the line in the spool */
    int64_t offset;         /* Kafka offset of its message */
    uint32_t part;          /* index into srv_kafka.parts */
    uint32_t lead;          /* bytes up to and with its '{' */
    uint32_t prefix;        /* bytes of metadata columns written after them */
} kf_line;

/* A record quarantined before the conversion (a message that is not one of the format's
 * shapes, or an empty one). */
typedef struct kf_qrec {
    uint32_t part;
    int64_t offset;
    char *reason;
    uint8_t *rec;
    size_t n;
} kf_qrec;

struct kf_batch;
struct kf_ahead;

typedef struct kf_table {
    char *name;
    int fd;                 /* the spool: an anonymous memory file (memfd), -1 = none yet */
    floe_buf wbuf;          /* spool bytes not yet written */
    int64_t bytes;          /* spool bytes (written + wbuf) */
    kf_line *lines;
    size_t nlines, lines_cap;
    kf_qrec *qrecs;
    size_t nq, q_cap;
    int64_t qbytes;         /* the records of qrecs: buffered like the spool's */
    int64_t first_ns;       /* when the batch's first message arrived (0 = empty batch) */
    int64_t retry_at_ns;    /* after a failed commit */
    int failures;
    char *refused;          /* routed by a field: why the table cannot take records (it
                               does not exist and is neither configured nor auto_create) */
    struct kf_batch *sealed; /* the batch sealed for a commit: converting and committing
                               (srv_kafka.inflight), or kept after a failed commit; the
                               batch above (the open one) is sealed only once it is gone */
    kf_line *spare_lines;   /* a committed batch's line array, for the next open batch */
    size_t spare_cap;
    struct kf_ahead *ahead; /* the open batch converting while it is taken, or NULL */
    bool ahead_tried;       /* one was started for the open batch (not again) */
    /* the interval (see "Staging" at the top): its staged segments, converted and not
     * yet committed, its id and when its first record arrived */
    struct kf_batch **staged;
    size_t nstaged, staged_cap;
    int64_t staged_bytes;   /* their input bytes */
    int64_t staged_meta;    /* the memory their file records hold (staged_pack) */
    char iid[37];           /* "" = no interval sealed from yet */
    int64_t interval_ns;    /* its first staged segment's first record (0 = none staged) */
    int64_t committed_ns;   /* when its last commit ended (0: none yet): the next interval
                               is due commit_interval after it at the earliest */
} kf_table;

/* Tables one source may route to by a field; records naming more go to the quarantine. */
enum { KF_MAX_ROUTED_TABLES = 1000 };

/* A partition's share of one table's batch. */
typedef struct kf_pt {
    uint32_t tbl;           /* index into srv_kafka.tables */
    int64_t first;          /* offset of the open batch's first message taken into the
                               table (-1: none since the table's last seal) */
    int64_t sealed_first;   /* the same of the table's staged segments and sealed batch
                               (-1: none) */
    int64_t committed;      /* the table's offset of the partition (-1: none) */
    int64_t bytes;          /* spool bytes of the batch from this partition */
} kf_pt;

typedef struct kf_part {
    char *topic;
    int32_t partition;
    bool assigned;
    bool paused;
    kf_pt *pts;             /* the tables it went to since its assignment (routed by topic:
                               the one table, from the assignment on) */
    size_t npts, pts_cap;
    _Atomic int64_t committed; /* where it resumes: the table's offset (routed by a field:
                                  the lowest offset not committed in every table) */
    _Atomic int64_t next;      /* offset after the last message taken (-1: none yet) */
    _Atomic int64_t high;      /* the partition's high watermark, as last seen */
} kf_part;

typedef struct srv_kafka {
    floe_server *s;
    char *name;
    char *group;
    char *table;            /* target; "{topic}" and "{field:NAME}" are replaced */
    char *route_field;      /* NAME of {field:NAME}, or NULL (routed by topic) */
    int format;
    char *cols[NCOLS];      /* column names of the metadata, NULL = not written */
    int64_t commit_bytes, commit_interval_ms, max_buffered;
    char *spool_dir;
    rd_kafka_t *rk;
    struct kf_batch *inflight; /* the sealed batch being committed on its own thread */
    uint32_t next_table;    /* where commit_due looks first (round robin) */
    int64_t test_pause_ms;  /* tests: each commit waits this long before its append */
    int64_t staged_due_ms, staged_drop_ms; /* KF_STAGED_DUE_MS, KF_STAGED_DROP_MS */
    int64_t test_ahead;     /* tests: converting ahead from this many bytes, in chunks of
                               them (0: KF_AHEAD_START, the pipeline's chunks) */
    bool sticky;            /* the strategy is cooperative-sticky (see sticky_wait) */
    bool convert_ahead;     /* open batches convert while they are taken (kf_ahead) */
    _Atomic int naheads;    /* kf_ahead alive */
    _Atomic bool assigned_once; /* an assignment came (the assignor's state is set) */
    bool keep_rk;           /* rk is closed, not destroyed (see the end of kafka_main) */
    pthread_t thr;
    bool started;
    _Atomic bool stop;
    /* a committed batch's quarantine file could not be published (left pending): the
     * consumer settles the tables' pending files again (resettle) */
    _Atomic bool unsettled;
    int64_t resettle_ns;

    pthread_mutex_t mu;     /* parts and tables arrays (metrics read them) */
    kf_part **parts;
    size_t nparts, parts_cap;
    size_t last_part;       /* index of the partition of the last message taken */
    kf_table *tables;
    size_t ntables;

    /* flush requests from other threads */
    pthread_cond_t cv;
    uint64_t flush_gen, flush_done;
    int flush_rc;
    char flush_err[FLOE_ERROR_MSG_MAX];

    _Atomic uint64_t consumed, committed_rows, quarantined, commits, commit_failures,
        fenced, rebalances, commit_us, revoked_dropped, skipped, pauses, pipelined, overlapped,
        ahead, refused, staged_segments;
    _Atomic int64_t buffered, buffered_peak, paused_parts, staged_bytes;
} srv_kafka;

/* A partition's share of a sealed batch, as it was when the batch was sealed. */
typedef struct kf_bpart {
    size_t pidx;            /* index into srv_kafka.parts (kf_line.part, kf_qrec.part) */
    int64_t first;          /* offset of the batch's first message of the partition */
    int64_t expect;         /* the table's offset the batch's fence expects (-1: none) */
    int64_t next;           /* the offset after the batch's last message of it: the
                               table's offset once the batch is committed */
    int64_t floor;          /* routed by a field: part_floor at the seal */
} kf_bpart;

/* A batch's pending quarantine file of one partition: published after the commit. */
typedef struct kf_qfile {
    char *tmp, *final;
    int64_t n;
} kf_qfile;

typedef struct kf_qfiles {
    kf_qfile *f;
    size_t n;
} kf_qfiles;

/* A table's batch sealed for its commit (see "Pipelining" at the top): the spool and each
 * partition's offsets as they were at the seal; messages taken after it go to the table's
 * next (open) batch. Committed by commit_batch, on its own thread (srv_kafka.inflight)
 * or on the consumer thread; its outcome applied by finish() on the consumer thread. */
typedef struct kf_batch {
    srv_kafka *k;
    uint32_t tbl;
    char *table;            /* the table's name (the worker does not read k->tables) */
    int fd;                 /* the spool (memfd), -1 = none */
    int64_t bytes;
    kf_line *lines;
    size_t nlines, lines_cap;
    kf_qrec *qrecs;
    size_t nq;
    int64_t qbytes;
    kf_part **ps;           /* the batch's partitions (topic and number: never change) */
    kf_bpart *bp;
    size_t n;
    struct kf_ahead *ahead; /* its conversion so far (the open batch's, see kf_ahead) */
    char iid[37];           /* its interval's id: its quarantine's, the commit's batch id */
    bool stage;             /* a stage job: converted, its rejects pending, not appended */
    /* a commit job: the interval's staged segments (committed with it, in one append),
     * and each partition's share of the whole interval (first: its first segment's,
     * next and floor: its last's; expect: the same in all of them) */
    struct kf_batch **segs;
    size_t nsegs;
    kf_part **ups;
    kf_bpart *ubp;
    size_t un;
    bool mismatch;          /* segments expecting different offsets (never: nothing of
                               the table commits within an interval) */
    bool files_kept;        /* the commit's outcome is unknown: the files stay */
    bool respec;            /* dropped: its files were written under two partition specs */
    int32_t spec_id;        /* staged: the partition spec its files were written under */
    int64_t interval_ns;    /* a commit job: its interval's first staged record (0: none
                               staged; see KF_STAGED_DROP_MS) */
    /* staged (a stage job done; its spool freed): its files, their job settings, its
     * pending quarantine files, its rows and input bytes */
    srv_job_table sjt;
    srv_files sfc;
    kf_qfiles sqf;
    int64_t rows, in_bytes;
    int64_t meta_bytes;     /* the memory its file records hold (staged_pack) */
    int rc;                 /* the commit's outcome (commit_batch) */
    bool refused;           /* the table registers a group whose keys can be ours */
    floe_error err;
    pthread_t thr;
    bool thread;            /* committing on thr */
    _Atomic bool done;      /* commit_batch returned */
} kf_batch;

/* converting ahead (see kf_ahead): at most KF_MAX_AHEAD per source, started once the
 * open batch's spool holds KF_AHEAD_START bytes */
enum { KF_MAX_AHEAD = 2, KF_AHEAD_START = 1 << 20 };

/* Staged files are in no snapshot until their interval commits, and floe orphans deletes
 * unreferenced files an hour old (its least age without --force, in the CLI and in floe
 * serve's maintenance): no staged file may reach that age while this process can still
 * commit it. So an interval holding staged segments is due KF_STAGED_DUE_MS after its
 * first record at the latest, whatever commit_interval, and one whose commit still fails
 * KF_STAGED_DROP_MS after it is dropped (its staged files deleted, consumed again). Tests
 * shorten both (FLOE_TEST_KAFKA_STAGED_AGE_MS: due after it, dropped after three times it). */
enum { KF_STAGED_DUE_MS = 15 * 60 * 1000, KF_STAGED_DROP_MS = 45 * 60 * 1000 };
static void ahead_start(srv_kafka *k, kf_table *t);
static void ahead_free(srv_kafka *k, struct kf_ahead *a, bool delete_files);
static void ahead_publish(struct kf_ahead *a, int64_t bytes);

/* ---- configuration ----------------------------------------------------------------- */

static const char *src_get(const floe_server_source_config *src, const char *k) {
    for (size_t i = 0; i < src->n; i++)
        if (!strcmp(src->keys[i], k))
            return src->values[i];
    return NULL;
}

static bool parse_size(const char *v, int64_t *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || d < 0)
        return false;
    while (*end == ' ')
        end++;
    double m = 1;
    if (!strcasecmp(end, "") || !strcasecmp(end, "b"))
        m = 1;
    else if (!strcasecmp(end, "kb") || !strcasecmp(end, "k"))
        m = 1e3;
    else if (!strcasecmp(end, "kib"))
        m = 1024;
    else if (!strcasecmp(end, "mb") || !strcasecmp(end, "m"))
        m = 1e6;
    else if (!strcasecmp(end, "mib"))
        m = 1048576;
    else if (!strcasecmp(end, "gb") || !strcasecmp(end, "g"))
        m = 1e9;
    else if (!strcasecmp(end, "gib"))
        m = 1073741824.0;
    else
        return false;
    if (d * m > 1e15)
        return false;
    *out = (int64_t)(d * m);
    return true;
}

static bool parse_ms(const char *v, int64_t *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || d < 0)
        return false;
    double m = 1000;
    if (!strcmp(end, "ms"))
        m = 1;
    else if (!strcmp(end, "s") || !*end)
        m = 1000;
    else if (!strcmp(end, "m"))
        m = 60000;
    else if (!strcmp(end, "h"))
        m = 3600000;
    else
        return false;
    if (d * m > 1e12)
        return false;
    *out = (int64_t)(d * m);
    return true;
}

/* The table name of template t with {topic} replaced by topic (characters a table name
 * cannot hold become '_') and {field:NAME} by value (as it is). */
static char *expand_table(const char *t, const char *topic, const char *value) {
    floe_buf b;
    floe_buf_init(&b, 0);
    int rc = 0;
    for (const char *c = t; *c && rc == 0;) {
        if (!strncmp(c, "{topic}", 7)) {
            for (const char *x = topic; *x && rc == 0; x++) {
                bool ok = (*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z') ||
                          (*x >= '0' && *x <= '9') || *x == '-';
                rc = floe_buf_append_byte(&b, ok ? (uint8_t)*x : '_');
            }
            c += 7;
        } else if (!strncmp(c, "{field:", 7) && strchr(c, '}')) {
            rc = floe_buf_append(&b, value, strlen(value));
            c = strchr(c, '}') + 1;
        } else {
            rc = floe_buf_append_byte(&b, (uint8_t)*c++);
        }
    }
    if (rc < 0 || floe_buf_append_byte(&b, 0) < 0) {
        floe_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* The NAME of the template's {field:NAME}, or NULL. */
static char *template_field(const char *t) {
    const char *f = strstr(t, "{field:");
    const char *end = f ? strchr(f, '}') : NULL;
    return end ? floe_strndup(f + 7, (size_t)(end - f - 7)) : NULL;
}

/* A table template: namespace.table, where {topic} stands for the topic's name and one
 * {field:NAME} (in the table's own name, after the last dot) for the value of the record's
 * top-level member NAME. */
static bool template_ok(const char *t, char **why) {
    const char *f = strstr(t, "{field:");
    if (f) {
        const char *end = strchr(f, '}');
        const char *name = f + 7;
        if (!end || end == name) {
            *why = floe_strdup("{field:NAME} names the record's member");
            return false;
        }
        for (const char *c = name; c < end; c++)
            if (*c == '{' || *c == '"' || *c == '\\' || (unsigned char)*c < 0x20) {
                *why = floe_strdup("{field:NAME}: NAME is a member name without braces, "
                                   "quotes or backslashes");
                return false;
            }
        if (strstr(end, "{field:")) {
            *why = floe_strdup("one {field:NAME} at most");
            return false;
        }
        const char *dot = strrchr(t, '.');
        if (!dot || dot > f) {
            *why = floe_strdup("{field:NAME} goes in the table's name, after the namespace "
                               "(e.g. ns.{field:event_type} or ns.events_{field:kind})");
            return false;
        }
    }
    char *probe = expand_table(t, "x", "x");
    bool ok = probe && srv_valid_table_name(probe);
    floe_free(probe);
    if (!ok)
        *why = floe_strdup("namespace.table, where {topic} stands for the topic's name and "
                           "{field:NAME} for the value of the record's member NAME");
    return ok;
}

/* Why group id g cannot be used, or NULL: it is a part of table property keys (no '=' or
 * ',', which floe table properties set/unset read as separators) and of quarantine file
 * names (.kafka-<group>/ and kafka-<group>-...: no '/', and short enough for a name);
 * control characters are refused everywhere. "." and ".." are file names only alone,
 * never here. */
static const char *group_why(const char *g) {
    if (!*g)
        return "empty";
    if (strlen(g) > 200)
        return "longer than 200 bytes (it is part of file names in the quarantine)";
    for (const char *c = g; *c; c++)
        if (*c == '=' || *c == ',' || *c == '/' || (unsigned char)*c < 0x20 || *c == 0x7f)
            return "no '=', ',', '/' or control characters";
    return NULL;
}

/* Every key of the section is known and its value well formed; kafka.* keys are handed
 * to librdkafka, which judges them when the consumer is made. */
int srv_kafka_check(const floe_server_source_config *src, floe_error *err) {
    static const char *const known[] = {"bootstrap.servers", "topics", "group.id", "table",
                                        "format", "commit_bytes", "commit_interval",
                                        "max_buffered_bytes", "convert_ahead"};
    for (size_t i = 0; i < src->n; i++) {
        const char *k = src->keys[i], *v = src->values[i];
        bool ok = !strncmp(k, "kafka.", 6) && k[6];
        for (size_t j = 0; !ok && j < sizeof known / sizeof *known; j++)
            ok = !strcmp(k, known[j]);
        for (size_t j = 0; !ok && j < NCOLS; j++)
            ok = !strcmp(k, col_keys[j]);
        if (!ok)
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: unknown key '%s'",
                                  src->name, k);
        int64_t x;
        if ((!strcmp(k, "commit_bytes") || !strcmp(k, "max_buffered_bytes")) &&
            (!parse_size(v, &x) || x < 1024))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: %s: a size of at "
                                  "least 1KiB (e.g. 128MB)", src->name, k);
        if (!strcmp(k, "commit_interval") && (!parse_ms(v, &x) || x < 10))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: commit_interval: "
                                  "a duration (e.g. 10s, 500ms)", src->name);
        if (!strcmp(k, "convert_ahead") && strcmp(v, "true") && strcmp(v, "false"))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: convert_ahead: "
                                  "true or false", src->name);
        if (!strcmp(k, "group.id") && group_why(v))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: group.id '%s': %s",
                                  src->name, v, group_why(v));
        if (!strcmp(k, "format") && strcmp(v, "json") && strcmp(v, "ndjson") &&
            strcmp(v, "array"))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: format: json, "
                                  "ndjson or array", src->name);
        for (size_t j = 0; j < NCOLS; j++)
            if (!strcmp(k, col_keys[j]) && !*v)
                return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: %s: a column "
                                      "name", src->name, k);
    }
    const char *need[] = {"bootstrap.servers", "topics", "table"};
    for (size_t j = 0; j < 3; j++)
        if (!src_get(src, need[j]) || !*src_get(src, need[j]))
            return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: %s is required",
                                  src->name, need[j]);
    const char *t = src_get(src, "table");
    char *why = NULL;
    if (!template_ok(t, &why)) {
        int rc = floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: table '%s': %s",
                                src->name, t, why ? why : "out of memory");
        floe_free(why);
        return rc;
    }
    return 0;
}

/* ---- partitions and tables ------------------------------------------------------- */

static int table_index(srv_kafka *k, const char *name, uint32_t *out, floe_error *err) {
    for (size_t i = 0; i < k->ntables; i++)
        if (!strcmp(k->tables[i].name, name)) {
            *out = (uint32_t)i;
            return 0;
        }
    if (k->route_field && k->ntables >= KF_MAX_ROUTED_TABLES)
        return floe_error_set(err, FLOE_ELIMIT, "the source routes to %d tables already",
                              (int)KF_MAX_ROUTED_TABLES);
    if (!srv_valid_table_name(name))
        return floe_error_set(err, FLOE_EINVALID, "source %s: '%s' is not a table name",
                              k->name, name);
    kf_table *nt = floe_realloc(k->tables, (k->ntables + 1) * sizeof *nt);
    if (!nt)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_lock(&k->mu);
    k->tables = nt;
    pthread_mutex_unlock(&k->mu);
    kf_table *t = &nt[k->ntables];
    memset(t, 0, sizeof *t);
    t->fd = -1;
    floe_buf_init(&t->wbuf, 0);
    t->name = floe_strdup(name);
    if (!t->name)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_lock(&k->mu);
    *out = (uint32_t)k->ntables++;
    pthread_mutex_unlock(&k->mu);
    return 0;
}

static kf_part *part_find(srv_kafka *k, const char *topic, int32_t partition, size_t *idx) {
    for (size_t i = 0; i < k->nparts; i++)
        if (k->parts[i]->partition == partition && !strcmp(k->parts[i]->topic, topic)) {
            if (idx)
                *idx = i;
            return k->parts[i];
        }
    return NULL;
}

static int part_get(srv_kafka *k, const char *topic, int32_t partition, kf_part **out,
                    floe_error *err) {
    kf_part *p = part_find(k, topic, partition, NULL);
    if (p) {
        *out = p;
        return 0;
    }
    if (!(p = floe_calloc(1, sizeof *p)) || !(p->topic = floe_strdup(topic))) {
        floe_free(p);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    p->partition = partition;
    atomic_store(&p->committed, -1);
    atomic_store(&p->next, -1);
    atomic_store(&p->high, -1);
    pthread_mutex_lock(&k->mu);
    if (k->nparts == k->parts_cap) {
        size_t nc = k->parts_cap ? k->parts_cap * 2 : 16;
        kf_part **np = floe_realloc(k->parts, nc * sizeof *np);
        if (!np) {
            pthread_mutex_unlock(&k->mu);
            floe_free(p->topic);
            floe_free(p);
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        }
        k->parts = np;
        k->parts_cap = nc;
    }
    k->parts[k->nparts++] = p;
    pthread_mutex_unlock(&k->mu);
    *out = p;
    return 0;
}

static kf_pt *pt_find(kf_part *p, uint32_t ti) {
    for (size_t i = 0; i < p->npts; i++)
        if (p->pts[i].tbl == ti)
            return &p->pts[i];
    return NULL;
}

static kf_pt *pt_add(kf_part *p, uint32_t ti, int64_t committed) {
    if (p->npts == p->pts_cap) {
        size_t nc = p->pts_cap ? p->pts_cap * 2 : 4;
        kf_pt *np = floe_realloc(p->pts, nc * sizeof *np);
        if (!np)
            return NULL;
        p->pts = np;
        p->pts_cap = nc;
    }
    kf_pt *pt = &p->pts[p->npts++];
    pt->tbl = ti;
    pt->first = -1;
    pt->sealed_first = -1;
    pt->committed = committed;
    pt->bytes = 0;
    return pt;
}

/* The lowest offset of p not yet committed to every table, with table `except` taken as
 * committed up to p's position (the floor written with its commit): the first offset of
 * every other table's batches from p, sealed (perhaps committing now) or open. */
static int64_t part_floor(const kf_part *p, uint32_t except) {
    int64_t f = atomic_load(&p->next);
    for (size_t i = 0; i < p->npts; i++) {
        const kf_pt *pt = &p->pts[i];
        if (pt->tbl == except)
            continue;
        if (pt->first >= 0 && pt->first < f)
            f = pt->first;
        if (pt->sealed_first >= 0 && pt->sealed_first < f)
            f = pt->sealed_first;
    }
    return f;
}

/* The table property holding a partition's offset for this source's group (unambiguous
 * across the groups a table registers: see group_conflict). */
static char *offset_key(const srv_kafka *k, const kf_part *p) {
    return floe_asprintf("floe.kafka.%s.%s.%d", k->group, p->topic, (int)p->partition);
}

/* Routed by a field: the partition's floor (every message before it is committed in the
 * table it went to), written with each commit of any table taking the partition. */
static char *floor_key(const srv_kafka *k, const kf_part *p) {
    return floe_asprintf("floe.kafka.%s.%s.%d.floor", k->group, p->topic, (int)p->partition);
}

static int64_t prop_offset(const floe_table_metadata *m, const char *key) {
    int64_t x;
    return m && floe_parse_i64_cstr(floe_table_metadata_property(m, key), &x) && x >= 0 ? x
                                                                                     : -1;
}

/* The table property naming the last batch committed from a partition for this source's
 * group (the id its quarantine files in the pending folder carry). */
static char *batch_key(const srv_kafka *k, const kf_part *p) {
    return floe_asprintf("floe.kafka-batch.%s.%s.%d", k->group, p->topic, (int)p->partition);
}

/* The table property registering a consumer group as one writing the table: the prefix
 * and the group id, the whole rest of the key (any group id reads back as it is). */
#define KF_GROUP_KEY "floe.kafka-group."

static char *group_key(const srv_kafka *k) {
    return floe_asprintf(KF_GROUP_KEY "%s", k->group);
}

/* g is h followed by '.' and more. */
static bool dot_extends(const char *g, const char *h) {
    size_t n = strlen(h);
    return !strncmp(g, h, n) && g[n] == '.';
}

/* FLOE_EINVALID when table m (named table) registers a group other than this source's
 * whose keys can be this group's: one id is the other followed by '.' and more (group a.b
 * with topic c and group a with topic b.c both write floe.kafka.a.b.c.<partition>). The
 * registrations of groups that wrote the table only before floe registered groups are not
 * there, and their offset keys cannot be told from ours (is floe.kafka.a.b.c.0 group a's
 * topic b.c or group a.b's topic c?): such a table is not refused. */
static int group_conflict(const srv_kafka *k, const char *table, const floe_table_metadata *m,
                          floe_error *err) {
    size_t pre = sizeof KF_GROUP_KEY - 1;
    for (size_t i = 0; m && i < m->n_properties; i++) {
        const char *key = m->properties[i].key, *g = key + pre;
        if (strncmp(key, KF_GROUP_KEY, pre) || (!dot_extends(g, k->group) &&
                                                 !dot_extends(k->group, g)))
            continue;
        return floe_error_set(err, FLOE_EINVALID, "consumer group '%s' refuses table %s, "
                              "which consumer group '%s' writes too: the groups' offset "
                              "properties (floe.kafka.<group>.<topic>.<partition>) can be the "
                              "same key (one group id is the other followed by '.'); give "
                              "one of them another group.id or table", k->group, table, g);
    }
    return 0;
}

/* ---- the quarantine of a batch: pending until committed --------------------------------
 *
 * A batch's rejects are written, per partition, to
 *     <quarantine>/<table>/.kafka-<group>/<topic>+<partition>+<first>+<start>+<batch>.ndjson
 * (first: the batch's first offset, which names the published file; start: the table's
 * offset the batch's fence expects; batch: the id of its interval, which the interval's
 * commit writes to batch_key: a staged segment's file carries it too), and
 * renamed to <quarantine>/<table>/kafka-<group>-<topic>-<partition>-<first>-<batch>.ndjson
 * only once the commit succeeded (the batch's id, a random UUID, keeps apart the names of
 * two groups that read the same, such as group a-b's topic c and group a's topic b-c;
 * settle() publishes a file under the name its commit would have given it). settle()
 * decides every pending file of a partition from the table: its batch is the table's last
 * for the partition = committed (published); the table's offset is past its start = never
 * committed, nor can it ever be (the fence wants the start), so it is deleted; else its
 * commit may still come (left). */

/* A group id or topic as a part of a file name, of at most max bytes (max > 40): s itself
 * when it fits, else its first bytes (cut between UTF-8 characters) followed by '~' and
 * 32 hex digits of two 64-bit hashes of the whole of s. Group ids of 200 bytes and topics
 * of 249 make names longer than a file name can be (255 bytes): their quarantine files
 * could not be created, or published after the commit. No topic holds '~': a cut topic
 * never reads as another topic. */
static char *name_part(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max)
        return floe_strdup(s);
    size_t cut = max - 33;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    uint64_t h1 = floe_mix64(floe_fnv1a(s, n, FLOE_FNV1A_SEED));
    uint64_t h2 = floe_mix64(floe_fnv1a(s, n, FLOE_FNV1A_SEED ^ 0x9e3779b97f4a7c15ull) + n);
    return floe_asprintf("%.*s~%016llx%016llx", (int)cut, s, (unsigned long long)h1,
                         (unsigned long long)h2);
}

/* The group id and topic as parts of a file name, together at most room bytes (room >
 * 80): both as they are when they fit, else the group in at most half of it. */
static int name_parts(const char *group, const char *topic, size_t room, char **g, char **t) {
    size_t gn = strlen(group);
    *g = name_part(group, gn + strlen(topic) <= room ? gn : gn < room / 2 ? gn : room / 2);
    *t = *g ? name_part(topic, room - strlen(*g)) : NULL;
    if (*t)
        return 0;
    floe_free(*g);
    *g = NULL;
    return FLOE_ENOMEM;
}

/* The longest topic part of a pending file's name: with the partition, two offsets, the
 * batch's id, '.ndjson' and the writer's temporary suffix, within 255 bytes. */
#define KF_PENDING_TOPIC 100

static char *pending_dir(const srv_kafka *k, const char *table) {
    return floe_asprintf("%s/%s/.kafka-%s", k->s->quarantine_root, table, k->group);
}

/* topic: the topic's name, or its part of a pending file's name (the same name: a topic
 * is cut first as in a pending name, which a cut part already is). */
static char *published_name(const srv_kafka *k, const char *table, const char *topic,
                            int partition, int64_t first, const char *batch) {
    char *g = NULL, *t = NULL, *r = NULL, *pt = name_part(topic, KF_PENDING_TOPIC);
    if (pt && name_parts(k->group, pt, 150, &g, &t) == 0)
        r = floe_asprintf("%s/%s/kafka-%s-%s-%d-%lld-%s.ndjson", k->s->quarantine_root, table,
                          g, t, partition, (long long)first, batch);
    floe_free(pt);
    floe_free(g);
    floe_free(t);
    return r;
}

/* The name of partition p's pending quarantine file of a batch in folder dir. */
static char *pending_name(const char *dir, const kf_part *p, int64_t first, int64_t start,
                          const char *batch) {
    char *t = name_part(p->topic, KF_PENDING_TOPIC);
    char *r = t ? floe_asprintf("%s/%s+%d+%lld+%lld+%s.ndjson", dir, t, (int)p->partition,
                                (long long)first, (long long)start, batch)
                : NULL;
    floe_free(t);
    return r;
}

/* A pending file's name taken apart (topic names hold no '+'); false when it is not one. */
typedef struct kf_pending {
    char topic[256];
    int32_t partition;
    int64_t first, start;
    char batch[64];
} kf_pending;

static bool pending_parse(const char *name, kf_pending *out) {
    size_t n = strlen(name);
    if (n < 8 || strcmp(name + n - 7, ".ndjson"))
        return false;
    char buf[512];
    if (n - 7 >= sizeof buf)
        return false;
    memcpy(buf, name, n - 7);
    buf[n - 7] = 0;
    char *f[5];
    char *cur = buf;
    for (int i = 0; i < 5; i++) {
        f[i] = cur;
        char *plus = strchr(cur, '+');
        if (i < 4 && !plus)
            return false;
        if (i == 4 && plus)
            return false;
        if (plus) {
            *plus = 0;
            cur = plus + 1;
        }
    }
    int64_t part;
    if (!floe_parse_i64_cstr(f[1], &part) || part < 0 || part > INT32_MAX ||
        !floe_parse_i64_cstr(f[2], &out->first) || !floe_parse_i64_cstr(f[3], &out->start) ||
        strlen(f[0]) >= sizeof out->topic || strlen(f[4]) >= sizeof out->batch || !f[4][0])
        return false;
    out->partition = (int32_t)part;
    snprintf(out->topic, sizeof out->topic, "%s", f[0]);
    snprintf(out->batch, sizeof out->batch, "%s", f[4]);
    return true;
}

/* Publish (rename into the quarantine) a pending file whose batch is committed: 0, also
 * when it is gone (another member's settle() published it). */
static int pending_publish(const char *tmp, const char *final, floe_error *err) {
    if (rename(tmp, final) < 0 && errno != ENOENT)
        return floe_error_set(err, FLOE_EIO, "publishing the quarantine %s: %s", final,
                              strerror(errno));
    return 0;
}

/* Settle the pending quarantine files of partitions ps in table from its metadata m (see
 * above). Fails only when a committed batch's file cannot be published. */
static int settle(srv_kafka *k, const char *table, const floe_table_metadata *m,
                  kf_part **ps, size_t n, floe_error *err) {
    char *dir = pending_dir(k, table);
    if (!dir)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    DIR *d = opendir(dir);
    if (!d) {
        floe_free(dir);
        return 0; /* nothing pending */
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        kf_pending pe;
        if (!pending_parse(de->d_name, &pe))
            continue;
        kf_part *p = NULL;
        for (size_t i = 0; i < n && !p && rc == 0; i++) {
            char *t = ps[i]->partition == pe.partition
                          ? name_part(ps[i]->topic, KF_PENDING_TOPIC) : NULL;
            if (ps[i]->partition == pe.partition && !t)
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            else if (t && !strcmp(t, pe.topic))
                p = ps[i];
            floe_free(t);
        }
        if (!p)
            continue;
        char *ok = offset_key(k, p), *bk = batch_key(k, p);
        char *tmp = floe_asprintf("%s/%s", dir, de->d_name);
        char *final = published_name(k, table, pe.topic, pe.partition, pe.first, pe.batch);
        if (!ok || !bk || !tmp || !final) {
            rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
        } else {
            const char *last = floe_table_metadata_property(m, bk);
            if (last && !strcmp(last, pe.batch)) {
                rc = pending_publish(tmp, final, err);
                if (rc == 0)
                    floe_log(FLOE_LOG_INFO, "kafka %s: %s: published the quarantine of "
                             "committed batch %s (%s/%d from offset %lld)", k->name, table,
                             pe.batch, pe.topic, (int)pe.partition, (long long)pe.first);
            } else if (prop_offset(m, ok) > pe.start) {
                unlink(tmp); /* a batch that was never committed: its records are
                                consumed again, or are in another batch's quarantine */
            }
        }
        floe_free(ok);
        floe_free(bk);
        floe_free(tmp);
        floe_free(final);
    }
    closedir(d);
    floe_free(dir);
    return rc;
}

/* The table's offsets of the given partitions (their floors with floors): -1 where it has
 * none, or when the table does not exist (*exists false, when asked). Settles the
 * partitions' pending quarantine files on the way. FLOE_EINVALID (counted in
 * k->refused) when the table registers a group whose keys can be ours (group_conflict). */
static int table_offsets(srv_kafka *k, const char *table, kf_part **ps, size_t n,
                         bool floors, int64_t *out, bool *exists, floe_error *err) {
    floe_server *s = k->s;
    for (size_t i = 0; i < n; i++)
        out[i] = -1;
    if (exists)
        *exists = false;
    const char *dot = strrchr(table, '.');
    char *ns = floe_strndup(table, (size_t)(dot - table));
    if (!ns)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_table *ft = NULL;
    pthread_mutex_lock(&s->cat_mu);
    int rc = floe_table_load(s->catalog, ns, dot + 1, &ft, err);
    if (rc == 0) {
        if (exists)
            *exists = true;
        const floe_table_metadata *m = floe_table_metadata_get(ft);
        if ((rc = group_conflict(k, table, m, err)) < 0)
            atomic_fetch_add(&k->refused, 1);
        for (size_t i = 0; i < n && rc == 0; i++) {
            char *key = floors ? floor_key(k, ps[i]) : offset_key(k, ps[i]);
            if (!key)
                rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
            else
                out[i] = prop_offset(m, key);
            floe_free(key);
        }
        if (rc == 0)
            rc = settle(k, table, m, ps, n, err);
    } else if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(err);
        rc = 0;
    }
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    floe_free(ns);
    return rc;
}

/* Routed by a field: where the partitions of one topic resume, the highest floor any of
 * the topic's routed tables holds (the namespace's tables the template can name). */
static int field_resume(srv_kafka *k, const char *topic, kf_part **ps, size_t n,
                        int64_t *out, floe_error *err) {
    for (size_t i = 0; i < n; i++)
        out[i] = -1;
    char *probe = expand_table(k->table, topic, "\x01");
    int64_t *one = floe_calloc(n ? n : 1, sizeof *one);
    floe_strlist names = {0};
    int rc = 0;
    if (!probe || !one)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    char *dot = strrchr(probe, '.');
    *dot = 0;
    const char *tname = dot + 1, *mark = strchr(tname, '\x01');
    size_t pre = (size_t)(mark - tname), suf = strlen(mark + 1);
    pthread_mutex_lock(&k->s->cat_mu);
    rc = floe_catalog_list_tables(k->s->catalog, probe, &names, err);
    pthread_mutex_unlock(&k->s->cat_mu);
    if (rc == FLOE_ENOTFOUND) {
        floe_error_clear(err);
        rc = 0;
    }
    for (size_t j = 0; j < names.n && rc == 0; j++) {
        const char *nm = names.items[j];
        size_t len = strlen(nm);
        if (len <= pre + suf || strncmp(nm, tname, pre) || strcmp(nm + len - suf, mark + 1))
            continue;
        char *full = floe_asprintf("%s.%s", probe, nm);
        if (!full)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        rc = table_offsets(k, full, ps, n, true, one, NULL, err);
        floe_free(full);
        for (size_t i = 0; i < n && rc == 0; i++)
            if (one[i] > out[i])
                out[i] = one[i];
    }
done:
    floe_strlist_free(&names);
    floe_free(probe);
    floe_free(one);
    return rc;
}

/* Where partitions resume (-1: nothing of theirs was ever committed): routed by topic, the
 * offset in the topic's table; routed by a field, field_resume. */
static int resume_offsets(srv_kafka *k, kf_part **ps, size_t n, int64_t *out,
                          floe_error *err) {
    kf_part **sub = floe_calloc(n ? n : 1, sizeof *sub);
    int64_t *so = floe_calloc(n ? n : 1, sizeof *so);
    bool *done_ = floe_calloc(n ? n : 1, sizeof *done_);
    int rc = 0;
    if (!sub || !so || !done_)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (done_[i])
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!done_[j] && !strcmp(ps[j]->topic, ps[i]->topic))
                sub[m++] = ps[j];
        if (k->route_field) {
            FLOE_CHECK(field_resume(k, ps[i]->topic, sub, m, so, err));
        } else {
            char *tn = expand_table(k->table, ps[i]->topic, "");
            if (!tn)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            rc = table_offsets(k, tn, sub, m, false, so, NULL, err);
            floe_free(tn);
            if (rc < 0)
                goto done;
        }
        for (size_t j = i, x = 0; j < n; j++)
            if (!done_[j] && x < m && ps[j] == sub[x]) {
                out[j] = so[x++];
                done_[j] = true;
            }
    }
done:
    floe_free(sub);
    floe_free(so);
    floe_free(done_);
    return rc;
}

/* ---- the spool -------------------------------------------------------------------- */

static void qrecs_free(kf_qrec *q, size_t n) {
    for (size_t i = 0; i < n; i++) {
        floe_free(q[i].reason);
        floe_free(q[i].rec);
    }
}

static void qfiles_free(kf_qfiles *q, bool keep);

/* Frees the spool of batch b and the memory it held (a staged batch keeps its files
 * only); its line array is kept for the table's next batch. */
static void batch_unspool(srv_kafka *k, kf_batch *b) {
    kf_table *t = &k->tables[b->tbl];
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
    atomic_fetch_sub(&k->buffered, b->bytes + b->qbytes);
    b->bytes = b->qbytes = 0;
    if (!t->spare_lines && b->lines) {
        t->spare_lines = b->lines;
        t->spare_cap = b->lines_cap;
    } else {
        floe_free(b->lines);
    }
    b->lines = NULL;
    b->nlines = b->lines_cap = 0;
    qrecs_free(b->qrecs, b->nq);
    floe_free(b->qrecs);
    b->qrecs = NULL;
    b->nq = 0;
}

static void batch_free(srv_kafka *k, kf_batch *b);

/* Frees staged segment s: its files and pending quarantine files are deleted (never
 * committed) unless keep (committed, or of unknown outcome: settle() decides). */
static void staged_free(srv_kafka *k, kf_batch *s, bool keep) {
    if (!keep)
        srv_files_delete(k->s->cfg.io, &s->sfc);
    qfiles_free(&s->sqf, keep);
    atomic_fetch_sub(&k->staged_bytes, s->in_bytes);
    batch_free(k, s);
}

/* Frees sealed batch b (not committing) and the memory it held, with the staged segments
 * of its interval it commits (their files deleted unless the outcome is unknown). */
static void batch_free(srv_kafka *k, kf_batch *b) {
    if (!b)
        return;
    ahead_free(k, b->ahead, true); /* not committed: its files go */
    b->ahead = NULL;
    batch_unspool(k, b);
    for (size_t i = 0; i < b->nsegs; i++)
        staged_free(k, b->segs[i], b->files_kept);
    srv_files_free(&b->sfc);
    srv_job_table_free(&b->sjt);
    floe_free(b->segs);
    floe_free(b->ups);
    floe_free(b->ubp);
    floe_free(b->ps);
    floe_free(b->bp);
    floe_free(b->table);
    floe_free(b);
}

/* Drops table ti's open batch, and its sealed one unless that is committing now. */
static void batch_reset(srv_kafka *k, uint32_t ti) {
    kf_table *t = &k->tables[ti];
    bool drop_sealed = t->sealed && t->sealed != k->inflight;
    bool drop_staged = drop_sealed || !t->sealed; /* sealed_first: staged and sealed */
    for (size_t i = 0; i < k->nparts; i++) {
        kf_pt *pt = pt_find(k->parts[i], ti);
        if (pt) {
            pt->first = -1;
            pt->bytes = 0;
            if (drop_staged)
                pt->sealed_first = -1;
        }
    }
    if (drop_sealed) {
        batch_free(k, t->sealed);
        t->sealed = NULL;
    }
    if (!t->sealed) { /* the interval's staged segments: never committed */
        for (size_t i = 0; i < t->nstaged; i++)
            staged_free(k, t->staged[i], false);
        t->nstaged = 0;
        t->staged_bytes = 0;
        t->staged_meta = 0;
        t->iid[0] = 0;
        t->interval_ns = 0;
    }
    ahead_free(k, t->ahead, true);
    t->ahead = NULL;
    t->ahead_tried = false;
    if (t->fd >= 0) {
        close(t->fd); /* frees the memory */
        t->fd = -1;
    }
    floe_buf_reset(&t->wbuf);
    if (t->wbuf.cap > (4u << 20))
        floe_buf_free(&t->wbuf);
    atomic_fetch_sub(&k->buffered, t->bytes + t->qbytes);
    t->bytes = 0;
    t->nlines = 0;
    qrecs_free(t->qrecs, t->nq);
    t->nq = 0;
    t->qbytes = 0;
    t->first_ns = 0;
}

/* The write buffer into the spool (write(2) into a memory file costs a copy; writing
 * through a shared mapping of it costs a page fault per page, several times more). */
static int spool_flush(kf_table *t, floe_error *err) {
    if (t->wbuf.len == 0)
        return 0;
    if (t->fd < 0 && (t->fd = memfd_create("floe-kafka-spool", MFD_CLOEXEC)) < 0)
        return floe_error_set(err, FLOE_EIO, "kafka spool of %s: %s", t->name, strerror(errno));
    for (size_t w = 0; w < t->wbuf.len;) {
        ssize_t r = write(t->fd, t->wbuf.data + w, t->wbuf.len - w);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return floe_error_set(err, FLOE_EIO, "kafka spool of %s: %s", t->name,
                                  strerror(errno));
        w += (size_t)r;
    }
    floe_buf_reset(&t->wbuf);
    if (t->ahead)
        ahead_publish(t->ahead, t->bytes); /* whole lines, all written */
    return 0;
}

static int qrec_add(srv_kafka *k, kf_table *t, uint32_t part, int64_t offset,
                    const char *reason, const uint8_t *p, size_t n) {
    if (t->nq == t->q_cap) {
        size_t nc = t->q_cap ? t->q_cap * 2 : 16;
        kf_qrec *nq = floe_realloc(t->qrecs, nc * sizeof *nq);
        if (!nq)
            return FLOE_ENOMEM;
        t->qrecs = nq;
        t->q_cap = nc;
    }
    kf_qrec *q = &t->qrecs[t->nq];
    q->part = part;
    q->offset = offset;
    q->reason = floe_strdup(reason);
    q->rec = floe_malloc(n ? n : 1);
    q->n = n;
    if (!q->reason || !q->rec) {
        floe_free(q->reason);
        floe_free(q->rec);
        return FLOE_ENOMEM;
    }
    if (n)
        memcpy(q->rec, p, n);
    t->nq++;
    t->qbytes += (int64_t)n;
    atomic_fetch_add(&k->buffered, (int64_t)n);
    return 0;
}

/* The metadata columns of a message, as JSON members each followed by ','. */
static int meta_prefix(const srv_kafka *k, const rd_kafka_message_t *m, const char *topic,
                       floe_buf *b) {
    floe_buf_reset(b);
    if (k->cols[COL_KEY]) {
        if (floe_buf_printf(b, "\"%s\":", k->cols[COL_KEY]) < 0)
            return FLOE_ENOMEM;
        int rc;
        if (!m->key)
            rc = floe_buf_printf(b, "null");
        else if (floe_utf8_valid(m->key, m->key_len))
            rc = floe_json_append_string(b, m->key, m->key_len);
        else if ((rc = floe_buf_append_byte(b, '"')) == 0 &&
                 (rc = floe_base64_append(b, m->key, m->key_len)) == 0)
            rc = floe_buf_append_byte(b, '"');
        if (rc < 0 || floe_buf_append_byte(b, ',') < 0)
            return FLOE_ENOMEM;
    }
    if (k->cols[COL_HEADERS]) {
        if (floe_buf_printf(b, "\"%s\":{", k->cols[COL_HEADERS]) < 0)
            return FLOE_ENOMEM;
        rd_kafka_headers_t *h = NULL;
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h) {
            const char *name;
            const void *val;
            size_t vn;
            for (size_t i = 0; !rd_kafka_header_get_all(h, i, &name, &val, &vn); i++) {
                if ((i && floe_buf_append_byte(b, ',') < 0) ||
                    floe_json_append_string(b, (const uint8_t *)name, strlen(name)) < 0 ||
                    floe_buf_append_byte(b, ':') < 0)
                    return FLOE_ENOMEM;
                int rc;
                if (!val)
                    rc = floe_buf_printf(b, "null");
                else if (floe_utf8_valid(val, vn))
                    rc = floe_json_append_string(b, val, vn);
                else if ((rc = floe_buf_append_byte(b, '"')) == 0 &&
                         (rc = floe_base64_append(b, val, vn)) == 0)
                    rc = floe_buf_append_byte(b, '"');
                if (rc < 0)
                    return FLOE_ENOMEM;
            }
        }
        if (floe_buf_printf(b, "},") < 0)
            return FLOE_ENOMEM;
    }
    if (k->cols[COL_TIMESTAMP]) {
        rd_kafka_timestamp_type_t tt;
        int64_t ts = rd_kafka_message_timestamp(m, &tt);
        int rc;
        if (ts < 0) {
            rc = floe_buf_printf(b, "\"%s\":null,", k->cols[COL_TIMESTAMP]);
        } else {
            time_t sec = (time_t)(ts / 1000);
            struct tm tm;
            gmtime_r(&sec, &tm);
            rc = floe_buf_printf(b, "\"%s\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",",
                                 k->cols[COL_TIMESTAMP], tm.tm_year + 1900, tm.tm_mon + 1,
                                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                                 (int)(ts % 1000));
        }
        if (rc < 0)
            return FLOE_ENOMEM;
    }
    if (k->cols[COL_TOPIC] &&
        (floe_buf_printf(b, "\"%s\":", k->cols[COL_TOPIC]) < 0 ||
         floe_json_append_string(b, (const uint8_t *)topic, strlen(topic)) < 0 ||
         floe_buf_append_byte(b, ',') < 0))
        return FLOE_ENOMEM;
    if (k->cols[COL_PARTITION] &&
        floe_buf_printf(b, "\"%s\":%d,", k->cols[COL_PARTITION], (int)m->partition) < 0)
        return FLOE_ENOMEM;
    if (k->cols[COL_OFFSET] &&
        floe_buf_printf(b, "\"%s\":%lld,", k->cols[COL_OFFSET], (long long)m->offset) < 0)
        return FLOE_ENOMEM;
    return 0;
}

static bool is_ws(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Each '\n' and '\r' of p[0..n) becomes a space (memchr: most records have none). */
static void blank_newlines(uint8_t *p, size_t n) {
    static const int nl[] = {'\n', '\r'};
    for (size_t k = 0; k < 2; k++)
        for (uint8_t *x = p; (x = memchr(x, nl[k], (size_t)(p + n - x))) != NULL; x++)
            *x = ' ';
}

/* One record r[0..n) (not blank) into the table's spool: up to its '{', the metadata
 * members, the rest of the object; newlines inside (whitespace between the tokens of a
 * pretty-printed object) become spaces. A record that is not an object goes as it is: the
 * conversion rejects it. */
static int spool_record(kf_table *t, uint32_t part, int64_t offset, const floe_buf *meta,
                        const uint8_t *r, size_t n) {
    if (t->nlines == t->lines_cap) {
        size_t nc = t->lines_cap ? t->lines_cap * 2 : 4096;
        kf_line *nl = floe_realloc(t->lines, nc * sizeof *nl);
        if (!nl)
            return FLOE_ENOMEM;
        t->lines = nl;
        t->lines_cap = nc;
    }
    size_t lead = 0;
    while (lead < n && is_ws(r[lead]))
        lead++;
    bool obj = lead < n && r[lead] == '{';
    lead++;
    size_t body = lead;
    while (obj && body < n && is_ws(r[body]))
        body++;
    bool empty_obj = obj && body < n && r[body] == '}';
    size_t pre = obj && meta->len ? meta->len - (empty_obj ? 1 : 0) : 0;
    kf_line *L = &t->lines[t->nlines];
    L->at = t->bytes;
    L->offset = offset;
    L->part = part;
    L->lead = (uint32_t)(pre ? lead : 0);
    L->prefix = (uint32_t)pre;
    size_t at = t->wbuf.len;
    if (floe_buf_reserve(&t->wbuf, n + pre + 1) < 0)
        return FLOE_ENOMEM;
    if (pre) {
        floe_buf_append(&t->wbuf, r, lead);
        floe_buf_append(&t->wbuf, meta->data, pre);
        floe_buf_append(&t->wbuf, r + lead, n - lead);
    } else {
        floe_buf_append(&t->wbuf, r, n);
    }
    blank_newlines(t->wbuf.data + at, t->wbuf.len - at);
    floe_buf_append_byte(&t->wbuf, '\n');
    t->bytes += (int64_t)(n + pre + 1);
    t->nlines++;
    return 0;
}

typedef struct span_sink {
    size_t *spans;
    size_t n, max;
} span_sink;

static int span_put(void *ctx, size_t start, size_t end) {
    span_sink *k = ctx;
    if (k->n == k->max)
        return FLOE_ELIMIT;
    k->spans[2 * k->n] = start;
    k->spans[2 * k->n + 1] = end;
    k->n++;
    return 0;
}

/* The top-level elements of a JSON array p[0..n): their spans; false when p is not an
 * array whose elements can be told apart (the message is then quarantined whole). The
 * elements themselves are judged by the conversion. */
static bool array_elements(const uint8_t *p, size_t n, size_t *spans, size_t *nspans,
                           size_t max_spans) {
    size_t i = 0;
    while (i < n && is_ws(p[i]))
        i++;
    if (i == n || p[i] != '[')
        return false;
    span_sink k = {spans, 0, max_spans};
    size_t end = n;
    if (srv_json_array_elements(p, i + 1, n, span_put, &k, &end) != 1)
        return false;
    while (end < n && is_ws(p[end]))
        end++;
    *nspans = k.n;
    return end == n;
}

typedef struct kf_scratch {
    floe_buf meta;
    size_t *spans;
    size_t spans_cap;
    /* routed by a field: the message's records that name no usable table */
    floe_quarantine *uq;
    char *uq_tmp, *uq_final;
    int64_t uq_n;
} kf_scratch;

/* Routed by a field: records naming no usable table are quarantined at once, those of one
 * message in one file named by the message (written again, the same, when the message is
 * consumed again), <quarantine>/kafka-unrouted/<source>/<group>+<topic>+<partition>+<offset>:
 * a topic name holds no '+', so the name read from the right is one group's message even
 * when two servers' sources share the name (with '-', group a-b's topic c and group a's
 * topic b-c named the same file, and the second message replaced the first's records). */
static int unrouted_add(srv_kafka *k, kf_scratch *sc, const char *topic,
                        const rd_kafka_message_t *m, const char *reason, const uint8_t *r,
                        size_t n, floe_error *err) {
    if (!sc->uq) {
        char *dir = floe_asprintf("%s/kafka-unrouted/%s", k->s->quarantine_root, k->name);
        if (!dir)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        char *g = NULL, *t = NULL;
        if (name_parts(k->group, topic, 150, &g, &t) == 0)
            sc->uq_final = floe_asprintf("%s/%s+%s+%d+%lld.ndjson", dir, g, t,
                                         (int)m->partition, (long long)m->offset);
        floe_free(g);
        floe_free(t);
        sc->uq_tmp = sc->uq_final ? floe_asprintf("%s.tmp", sc->uq_final) : NULL;
        int rc = sc->uq_tmp ? floe_io_mkdirs(k->s->cfg.io, dir, err)
                            : floe_error_set(err, FLOE_ENOMEM, "out of memory");
        floe_free(dir);
        if (rc == 0)
            rc = floe_quarantine_open(k->s->cfg.io, sc->uq_tmp, &sc->uq, err);
        if (rc < 0)
            return rc;
    }
    char source[300];
    snprintf(source, sizeof source, "kafka:%s/%d", topic, (int)m->partition);
    sc->uq_n++;
    return floe_quarantine_add(sc->uq, source, 0, m->offset, reason, r ? r : (const uint8_t *)"",
                               n, err);
}

/* The message's unrouted records published (ok) or abandoned. */
static int unrouted_end(srv_kafka *k, kf_scratch *sc, bool ok, floe_error *err) {
    int rc = 0;
    if (sc->uq) {
        rc = floe_quarantine_close(sc->uq, ok ? err : NULL);
        if (ok && rc == 0 && rename(sc->uq_tmp, sc->uq_final) < 0)
            rc = floe_error_set(err, FLOE_EIO, "rename %s: %s", sc->uq_tmp, strerror(errno));
        if (!ok || rc < 0)
            unlink(sc->uq_tmp);
        else
            atomic_fetch_add(&k->quarantined, (uint64_t)sc->uq_n);
    }
    sc->uq = NULL;
    floe_free(sc->uq_tmp);
    floe_free(sc->uq_final);
    sc->uq_tmp = sc->uq_final = NULL;
    sc->uq_n = 0;
    return rc;
}

/* Routed by a field: the value naming record r[0..n)'s table (a string, or an integer as
 * written), or NULL with the reason in why. */
static char *route_value(const srv_kafka *k, const uint8_t *r, size_t n, char *why,
                         size_t whyn) {
    json_error_t je;
    json_t *j = json_loadb((const char *)r, n, JSON_ALLOW_NUL, &je); /* "a\u0000b" is JSON */
    json_t *x = j && json_is_object(j) ? json_object_get(j, k->route_field) : NULL;
    char *v = NULL;
    if (!j || !json_is_object(j))
        snprintf(why, whyn, "not a JSON object (its table is named by its member '%s')",
                 k->route_field);
    else if (!x || json_is_null(x))
        snprintf(why, whyn, "no member '%s' to name its table", k->route_field);
    else if (json_is_string(x) && strlen(json_string_value(x)) == json_string_length(x))
        v = floe_strdup(json_string_value(x));
    else if (json_is_integer(x))
        v = floe_asprintf("%lld", (long long)json_integer_value(x));
    else
        snprintf(why, whyn, "member '%s' (naming its table) is not a string or an integer",
                 k->route_field);
    if (v && !*v) {
        snprintf(why, whyn, "member '%s' (naming its table) is empty", k->route_field);
        floe_free(v);
        v = NULL;
    }
    json_decref(j);
    return v;
}

/* Routed by a field: the partition's share of record r's table, NULL (why says why) when
 * the record names no table that can take it. */
static int route_record(srv_kafka *k, kf_part *p, const char *topic, const uint8_t *r,
                        size_t n, kf_pt **out, char *why, size_t whyn, floe_error *err) {
    floe_server *s = k->s;
    *out = NULL;
    char *v = route_value(k, r, n, why, whyn);
    if (!v)
        return 0;
    char *name = strchr(v, '.') ? NULL : expand_table(k->table, topic, v);
    int rc = 0;
    uint32_t ti = 0;
    if (!name || !srv_valid_table_name(name)) {
        /* the record itself goes to the quarantine: the reason quotes at most 100 bytes
         * of the value and says so when it quotes less than the whole */
        size_t vn = strlen(v);
        char more[64] = "";
        if (vn > 100)
            snprintf(more, sizeof more, " (its first 100 of %zu bytes)", vn);
        snprintf(why, whyn, "%s = '%.100s'%s does not make a table name from '%s' (letters, "
                 "digits, '_' and '-')", k->route_field, v, more, k->table);
        goto done;
    }
    rc = table_index(k, name, &ti, err);
    if (rc == FLOE_ELIMIT) {
        snprintf(why, whyn, "%.200s: more than %d tables routed by one source", name,
                 (int)KF_MAX_ROUTED_TABLES);
        floe_error_clear(err);
        rc = 0;
        goto done;
    }
    if (rc < 0)
        goto done;
    kf_table *t = &k->tables[ti];
    kf_pt *pt = pt_find(p, ti);
    if (!pt && !t->refused) {
        int64_t off = -1;
        bool exists = false;
        if ((rc = table_offsets(k, name, &p, 1, false, &off, &exists, err)) < 0)
            goto done;
        floe_server_table_config tc;
        pthread_mutex_lock(&s->cfg_mu);
        floe_server_table_settings(&s->cfg, name, &tc);
        bool known = exists || tc.name || s->cfg.auto_create;
        pthread_mutex_unlock(&s->cfg_mu);
        if (!known) {
            if (!(t->refused = floe_asprintf("no table %s (not in the catalog, not configured, "
                                             "auto_create off)", name)))
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        } else if (!(pt = pt_add(p, ti, off))) {
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
    }
    if (t->refused)
        snprintf(why, whyn, "%s", t->refused);
    *out = pt;
done:
    floe_free(v);
    floe_free(name);
    return rc;
}

/* A record r[0..n) whose line breaks the spool cannot blank into spaces: one inside a
 * string (not JSON, where a string escapes them; blanked, it would be a valid record of
 * other content), or any in a record that is not an object (rejected anyway; blanked, the
 * quarantine would not hold its bytes). The reason it goes to the quarantine, or NULL. */
static const char *line_breaks(const uint8_t *r, size_t n) {
    if (!memchr(r, '\n', n) && !memchr(r, '\r', n))
        return NULL;
    size_t i = 0;
    while (i < n && is_ws(r[i]))
        i++;
    if (i == n || r[i] != '{')
        return "type_mismatch: record must be a JSON object (a record with line breaks)";
    for (bool in = false; i < n; i++) {
        if (!in)
            in = r[i] == '"';
        else if (r[i] == '\\')
            i++;
        else if (r[i] == '"')
            in = false;
        else if (r[i] == '\n' || r[i] == '\r')
            return "malformed_json: a line break not escaped in a string";
    }
    return NULL;
}

/* One record r[0..n) of message m into its table's spool. */
static int take_record(srv_kafka *k, kf_scratch *sc, kf_part *p, uint32_t pi,
                       const rd_kafka_message_t *m, const char *topic, const uint8_t *r,
                       size_t n, floe_error *err) {
    kf_pt *pt = &p->pts[0];
    if (k->route_field) {
        char why[512];
        FLOE_FORWARD_IF_ERROR(route_record(k, p, topic, r, n, &pt, why, sizeof why, err));
        if (!pt)
            return unrouted_add(k, sc, topic, m, why, r, n, err);
        if (m->offset < pt->committed)
            return 0; /* consumed again from the partition's floor: the table has it */
    }
    kf_table *t = &k->tables[pt->tbl];
    if (pt->first < 0)
        pt->first = m->offset;
    if (t->first_ns == 0)
        t->first_ns = floe_now_ns();
    const char *why = line_breaks(r, n);
    if (why)
        return qrec_add(k, t, pi, m->offset, why, r, n) < 0
                   ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                   : 0;
    int64_t before = t->bytes;
    if (spool_record(t, pi, m->offset, &sc->meta, r, n) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pt->bytes += t->bytes - before;
    atomic_fetch_add(&k->buffered, t->bytes - before);
    return 0;
}

/* A message that is not of the format (or empty), quarantined whole. */
static int take_whole(srv_kafka *k, kf_scratch *sc, kf_part *p, uint32_t pi,
                      const rd_kafka_message_t *m, const char *topic, const char *reason,
                      floe_error *err) {
    if (k->route_field)
        return unrouted_add(k, sc, topic, m, reason, m->payload, m->len, err);
    kf_pt *pt = &p->pts[0];
    if (pt->first < 0)
        pt->first = m->offset;
    if (k->tables[pt->tbl].first_ns == 0)
        k->tables[pt->tbl].first_ns = floe_now_ns();
    if (qrec_add(k, &k->tables[pt->tbl], pi, m->offset, reason,
                 m->payload ? m->payload : (const uint8_t *)"", m->len) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* Take one message: its records into their tables' spools. */
static int take_message(srv_kafka *k, kf_scratch *sc, const rd_kafka_message_t *m,
                        floe_error *err) {
    const char *topic = rd_kafka_topic_name(m->rkt);
    /* a fetched batch is one partition's run of messages: the last one's part first */
    size_t pi = k->last_part;
    kf_part *p = pi < k->nparts ? k->parts[pi] : NULL;
    if (!p || p->partition != m->partition || strcmp(p->topic, topic)) {
        p = part_find(k, topic, m->partition, &pi);
        k->last_part = pi;
    }
    if (!p || !p->assigned || (!k->route_field && p->npts == 0))
        return 0; /* a message of a partition no longer ours, still in the queue */
    int64_t next = atomic_load(&p->next);
    if (next >= 0 && m->offset < next) {
        atomic_fetch_add(&k->skipped, 1); /* before the position (a seek in flight) */
        return 0;
    }
    if (!k->route_field && p->pts[0].first < 0)
        p->pts[0].first = m->offset; /* the batch holds the message even with no record */
    const uint8_t *pl = m->payload;
    size_t n = m->len;
    FLOE_FORWARD_IF_ERROR(meta_prefix(k, m, topic, &sc->meta) < 0
                              ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                              : 0);
    int rc = 0;
    size_t a = 0;
    while (a < n && is_ws(pl[a]))
        a++;
    size_t e = n;
    while (e > a && is_ws(pl[e - 1]))
        e--;
    if (a == e) {
        rc = take_whole(k, sc, p, (uint32_t)pi, m, topic, "empty message", err);
    } else if (k->format == FMT_JSON) {
        rc = take_record(k, sc, p, (uint32_t)pi, m, topic, pl, n, err);
    } else if (k->format == FMT_NDJSON) {
        size_t i = 0;
        while (i < n && rc == 0) {
            const uint8_t *nl = memchr(pl + i, '\n', n - i);
            size_t le = nl ? (size_t)(nl - pl) : n, ls = i;
            i = le + 1;
            if (le > ls && pl[le - 1] == '\r')
                le--;
            bool blank = true;
            for (size_t x = ls; x < le && blank; x++)
                blank = is_ws(pl[x]);
            if (!blank)
                rc = take_record(k, sc, p, (uint32_t)pi, m, topic, pl + ls, le - ls, err);
        }
    } else {
        size_t max = n / 2 + 1, ns = 0;
        if (sc->spans_cap < 2 * max) {
            size_t *nsp = floe_realloc(sc->spans, 2 * max * sizeof *nsp);
            if (!nsp)
                return floe_error_set(err, FLOE_ENOMEM, "out of memory");
            sc->spans = nsp;
            sc->spans_cap = 2 * max;
        }
        if (!array_elements(pl, n, sc->spans, &ns, max)) {
            rc = take_whole(k, sc, p, (uint32_t)pi, m, topic,
                            "not a JSON array (format = array)", err);
        } else {
            for (size_t j = 0; j < ns && rc == 0; j++)
                rc = take_record(k, sc, p, (uint32_t)pi, m, topic, pl + sc->spans[2 * j],
                                 sc->spans[2 * j + 1] - sc->spans[2 * j], err);
        }
    }
    int rc2 = unrouted_end(k, sc, rc == 0, rc == 0 ? err : NULL);
    if (rc == 0)
        rc = rc2;
    if (rc < 0)
        return rc;
    atomic_store(&p->next, m->offset + 1);
    atomic_fetch_add(&k->consumed, 1);
    if (k->inflight)
        atomic_fetch_add(&k->overlapped, 1);
    int64_t b = atomic_load(&k->buffered);
    if (b > atomic_load(&k->buffered_peak))
        atomic_store(&k->buffered_peak, b);
    for (size_t i = 0; i < p->npts; i++) {
        kf_table *t = &k->tables[p->pts[i].tbl];
        if (t->wbuf.len >= (k->test_ahead ? (size_t)k->test_ahead : (1u << 20))) {
            FLOE_FORWARD_IF_ERROR(spool_flush(t, err));
            if (k->convert_ahead && !t->ahead && !t->ahead_tried && t->fd >= 0 &&
                t->bytes >= (k->test_ahead ? k->test_ahead : KF_AHEAD_START))
                ahead_start(k, t);
        }
    }
    return 0;
}

/* ---- commit ------------------------------------------------------------------------ */

typedef struct fence {
    const srv_kafka *k;
    const char *table;
    char **keys;
    int64_t *expect;
    size_t n;
    bool refused;           /* group_conflict refused the table */
} fence;

/* floe_append_check_fn: the table registers no group whose keys can be ours (else
 * refused, FLOE_EINVALID: see group_conflict), and every partition's offset in the table
 * is still the one this batch starts from (else another consumer committed it: fenced). */
static int fence_check(void *ctx, const floe_table_metadata *base, floe_error *err) {
    fence *f = ctx;
    int rc = group_conflict(f->k, f->table, base, err);
    if (rc < 0) {
        f->refused = true;
        return rc;
    }
    for (size_t i = 0; i < f->n; i++) {
        int64_t have = prop_offset(base, f->keys[i]);
        if (have != f->expect[i])
            return floe_error_set(err, FLOE_ECANCELLED, "%s is %lld in the table, this "
                                  "consumer resumed from %lld: another consumer committed "
                                  "the partition", f->keys[i], (long long)have,
                                  (long long)f->expect[i]);
    }
    return 0;
}

static void kafka_commit_offsets(srv_kafka *k, const kf_batch *b) {
    if (b->un == 0)
        return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)b->un);
    if (!l)
        return;
    for (size_t i = 0; i < b->un; i++)
        rd_kafka_topic_partition_list_add(l, b->ups[i]->topic, b->ups[i]->partition)->offset =
            atomic_load(&b->ups[i]->committed);
    /* lag monitoring only: the table holds the offsets that count */
    rd_kafka_commit(k->rk, l, 1);
    rd_kafka_topic_partition_list_destroy(l);
}

/* Seek partitions back after a dropped batch of table ti: routed by topic, the table's
 * partitions to the table's offsets; routed by a field, every table's batch is dropped
 * and every partition goes back to its floor (resume_offsets, as at an assignment). When
 * the tables cannot be read now, to where the dropped batches started (a fenced batch is
 * then consumed again and fenced again, until the table can be read). */
static void reseek(srv_kafka *k, uint32_t ti) {
    size_t n = 0;
    kf_part **ps = floe_calloc(k->nparts ? k->nparts : 1, sizeof *ps);
    int64_t *off = floe_calloc(k->nparts ? k->nparts : 1, sizeof *off);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
    if (!ps || !off || !l) {
        /* cannot even say where to go: leave the group's session to end */
        floe_log(FLOE_LOG_ERROR, "kafka %s: out of memory seeking back: stopping", k->name);
        atomic_store(&k->stop, true);
        goto done;
    }
    for (size_t i = 0; i < k->nparts; i++)
        if (k->parts[i]->assigned && (k->route_field || (k->parts[i]->npts &&
                                                         k->parts[i]->pts[0].tbl == ti)))
            ps[n++] = k->parts[i];
    /* where the dropped batches started, before they are dropped */
    for (size_t i = 0; i < n; i++) {
        kf_part *p = ps[i];
        int64_t from = atomic_load(&p->committed);
        for (size_t j = 0; j < p->npts; j++) {
            const kf_pt *pt = &p->pts[j];
            if (pt->committed >= 0 && (from < 0 || pt->committed < from))
                from = pt->committed;
            if (pt->first >= 0 && (from < 0 || pt->first < from))
                from = pt->first;
            if (pt->sealed_first >= 0 && (from < 0 || pt->sealed_first < from))
                from = pt->sealed_first;
        }
        off[i] = from;
    }
    for (uint32_t i = 0; i < k->ntables; i++)
        if (i == ti || k->route_field)
            batch_reset(k, i);
    floe_error err;
    floe_error_clear(&err);
    int64_t *table_off = floe_calloc(n ? n : 1, sizeof *table_off);
    bool known = table_off && resume_offsets(k, ps, n, table_off, &err) == 0;
    if (!known)
        floe_log(FLOE_LOG_WARN, "kafka %s: reading the tables' offsets: %s (seeking to the "
                 "dropped batches' start)", k->name, table_off ? err.msg : "out of memory");
    for (size_t i = 0; i < n; i++) {
        kf_part *p = ps[i];
        int64_t from = known && table_off[i] >= 0 ? table_off[i] : off[i];
        if (known)
            atomic_store(&p->committed, table_off[i]);
        if (k->route_field) {
            p->npts = 0; /* the tables' offsets are read again as records reach them */
        } else if (known) {
            p->pts[0].committed = table_off[i];
        }
        atomic_store(&p->next, from);
        if (from >= 0)
            rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = from;
    }
    floe_free(table_off);
    if (l->cnt) {
        rd_kafka_error_t *e = rd_kafka_seek_partitions(k->rk, l, 10000);
        if (e) {
            floe_log(FLOE_LOG_WARN, "kafka %s: seek: %s", k->name, rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
    }
done:
    if (l)
        rd_kafka_topic_partition_list_destroy(l);
    floe_free(ps);
    floe_free(off);
}

/* Adds partition share x of partition p to commit job b's shares of its interval. */
static void interval_add(kf_batch *b, kf_part *p, const kf_bpart *x) {
    for (size_t j = 0; j < b->un; j++)
        if (b->ups[j] == p) {
            if (b->ubp[j].expect != x->expect)
                b->mismatch = true;
            b->ubp[j].next = x->next;
            b->ubp[j].floor = x->floor; /* the latest segment's: see the top */
            return;
        }
    b->ups[b->un] = p;
    b->ubp[b->un++] = *x;
}

/* Makes sealed batch b of table t the commit of its interval: it takes the table's staged
 * segments and the interval's shares of every partition of them and of b; the table's
 * next records start the next interval. */
static int interval_take(kf_table *t, kf_batch *b, floe_error *err) {
    size_t cap = b->n;
    for (size_t i = 0; i < t->nstaged; i++)
        cap += t->staged[i]->n;
    if (!(b->ups = floe_calloc(cap ? cap : 1, sizeof *b->ups)) ||
        !(b->ubp = floe_calloc(cap ? cap : 1, sizeof *b->ubp))) {
        floe_free(b->ups);
        b->ups = NULL;
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    b->un = 0;
    for (size_t i = 0; i < t->nstaged; i++)
        for (size_t j = 0; j < t->staged[i]->n; j++)
            interval_add(b, t->staged[i]->ps[j], &t->staged[i]->bp[j]);
    for (size_t j = 0; j < b->n; j++)
        interval_add(b, b->ps[j], &b->bp[j]);
    b->segs = t->staged;
    b->nsegs = t->nstaged;
    b->interval_ns = t->interval_ns;
    b->stage = false;
    t->staged = NULL;
    t->nstaged = t->staged_cap = 0;
    t->staged_bytes = 0;
    t->staged_meta = 0;
    t->iid[0] = 0;
    t->interval_ns = 0;
    return 0;
}

/* Seals table ti's open batch (*out NULL: nothing to commit): the spool, its lines and
 * rejects, and for each assigned partition holding records of it, its first offset, the
 * table's offset its fence expects, its position (the offset the commit writes) and its
 * floor, as they are now; the table starts a new open batch. stage: to be staged (see
 * "Staging" at the top), else committed with the interval's staged segments (then sealed
 * even when the open batch is empty). Consumer thread; the table has no sealed batch. */
static int seal(srv_kafka *k, uint32_t ti, bool stage, kf_batch **out, floe_error *err) {
    kf_table *t = &k->tables[ti];
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < k->nparts; i++) {
        kf_pt *pt = pt_find(k->parts[i], ti);
        if (k->parts[i]->assigned && pt && pt->first >= 0)
            n++;
    }
    if (n == 0 && t->nlines == 0 && t->nq == 0 && (stage || t->nstaged == 0))
        return 0;
    if (stage && t->nstaged == t->staged_cap) { /* its place once staged (finish) */
        size_t nc = t->staged_cap ? t->staged_cap * 2 : 8;
        kf_batch **ns = floe_realloc(t->staged, nc * sizeof *ns);
        if (!ns)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        t->staged = ns;
        t->staged_cap = nc;
    }
    FLOE_FORWARD_IF_ERROR(spool_flush(t, err));
    kf_batch *b = floe_calloc(1, sizeof *b);
    if (!b || !(b->table = floe_strdup(t->name)) ||
        !(b->ps = floe_calloc(n ? n : 1, sizeof *b->ps)) ||
        !(b->bp = floe_calloc(n ? n : 1, sizeof *b->bp))) {
        if (b) {
            floe_free(b->table);
            floe_free(b->ps);
            floe_free(b);
        }
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    b->k = k;
    b->tbl = ti;
    b->fd = -1;
    srv_files_init(&b->sfc, &b->sjt);
    if (!t->iid[0])
        floe_uuid4(t->iid);
    memcpy(b->iid, t->iid, sizeof b->iid);
    for (size_t i = 0; i < k->nparts; i++) {
        kf_part *p = k->parts[i];
        kf_pt *pt = pt_find(p, ti);
        if (!p->assigned || !pt || pt->first < 0)
            continue;
        kf_bpart *x = &b->bp[b->n];
        x->pidx = i;
        x->first = pt->first;
        x->expect = pt->committed;
        x->next = atomic_load(&p->next);
        x->floor = part_floor(p, ti);
        b->ps[b->n++] = p;
    }
    if (!stage && interval_take(t, b, err) < 0) {
        batch_free(k, b);
        return FLOE_ENOMEM;
    }
    if (stage && !t->interval_ns)
        t->interval_ns = t->first_ns;
    b->stage = stage;
    for (size_t i = 0; i < b->n; i++) {
        kf_pt *pt = pt_find(b->ps[i], ti);
        if (pt->sealed_first < 0) /* else the interval's staged segments' first */
            pt->sealed_first = pt->first;
        pt->first = -1;
        pt->bytes = 0;
    }
    b->fd = t->fd;
    b->bytes = t->bytes;
    b->lines = t->lines;
    b->nlines = t->nlines;
    b->lines_cap = t->lines_cap;
    b->qrecs = t->qrecs;
    b->nq = t->nq;
    b->qbytes = t->qbytes;
    t->fd = -1;
    t->bytes = 0;
    t->lines = t->spare_lines;
    t->lines_cap = t->spare_cap;
    t->spare_lines = NULL;
    t->spare_cap = 0;
    t->nlines = 0;
    t->qrecs = NULL;
    t->nq = t->q_cap = 0;
    t->qbytes = 0;
    t->first_ns = 0;
    b->ahead = t->ahead;
    t->ahead = NULL;
    t->ahead_tried = false;
    t->sealed = b;
    *out = b;
    return 0;
}

/* The rejected records of the batch, by partition, into the quarantine (see the top). */
typedef struct qitem {
    uint32_t part;
    int64_t offset;
    char *reason;
    const uint8_t *rec;     /* into the spool map or a qrec */
    size_t n;
    bool owned_rec;
    uint8_t *own;
} qitem;

static int qitem_cmp(const void *a, const void *b) {
    const qitem *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}


/* Deletes the pending files (the batch is not committed) unless keep, and frees. */
static void qfiles_free(kf_qfiles *q, bool keep) {
    for (size_t i = 0; i < q->n; i++) {
        if (!keep)
            unlink(q->f[i].tmp);
        floe_free(q->f[i].tmp);
        floe_free(q->f[i].final);
    }
    floe_free(q->f);
    memset(q, 0, sizeof *q);
}

/* The batch's rejects, by partition, into pending files (see settle()) listed in qf. */
static int write_quarantine(srv_kafka *k, const kf_batch *t, const char *tmp_q,
                            const uint8_t *map, size_t mapn, const char *batch,
                            kf_qfiles *qf, floe_error *err) {
    qitem *items = NULL;
    size_t ni = 0, cap = 0;
    floe_buf line;
    floe_buf_init(&line, 0);
    char *dir = NULL;
    int rc = 0;
    /* the conversion's rejects: its quarantine lines name the spool line */
    FILE *f = fopen(tmp_q, "re");
    if (f) {
        char *buf = NULL;
        size_t bcap = 0;
        ssize_t got;
        while ((got = getline(&buf, &bcap, f)) > 0) {
            /* a record holding U+0000 is written with \u0000 in it */
            json_error_t je;
            json_t *j = json_loadb(buf, (size_t)got, JSON_ALLOW_NUL, &je);
            if (!j) {
                /* never drop a rejected record: its offset is committed with the batch */
                free(buf);
                fclose(f);
                FLOE_FAIL(err, FLOE_ECORRUPT, "%s: %s", tmp_q, je.text);
            }
            json_int_t ln = json_integer_value(json_object_get(j, "line"));
            const char *reason = json_string_value(json_object_get(j, "reason"));
            if (ln >= 1 && (size_t)ln <= t->nlines) {
                if (ni == cap) {
                    cap = cap ? cap * 2 : 64;
                    qitem *nit = floe_realloc(items, cap * sizeof *nit);
                    if (!nit) {
                        json_decref(j);
                        free(buf);
                        fclose(f);
                        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                    }
                    items = nit;
                }
                const kf_line *L = &t->lines[ln - 1];
                int64_t end = (size_t)ln < t->nlines ? t->lines[ln].at : (int64_t)mapn;
                qitem *q = &items[ni++];
                memset(q, 0, sizeof *q);
                q->part = L->part;
                q->offset = L->offset;
                q->reason = floe_strdup(reason ? reason : "rejected");
                /* the record as the message held it: without the metadata members */
                size_t len = (size_t)(end - L->at - 1);
                if (L->prefix) {
                    q->own = floe_malloc(len - L->prefix);
                    if (q->own) {
                        memcpy(q->own, map + L->at, L->lead);
                        memcpy(q->own + L->lead, map + L->at + L->lead + L->prefix,
                               len - L->lead - L->prefix);
                    }
                    q->rec = q->own;
                    q->n = len - L->prefix;
                } else {
                    q->rec = map + L->at;
                    q->n = len;
                }
                if (!q->reason || !q->rec) {
                    json_decref(j);
                    free(buf);
                    fclose(f);
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                }
            }
            json_decref(j);
        }
        free(buf); /* getline's */
        fclose(f);
    }
    for (size_t i = 0; i < t->nq; i++) {
        if (ni == cap) {
            cap = cap ? cap * 2 : 64;
            qitem *nit = floe_realloc(items, cap * sizeof *nit);
            if (!nit)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            items = nit;
        }
        qitem *q = &items[ni++];
        memset(q, 0, sizeof *q);
        q->part = t->qrecs[i].part;
        q->offset = t->qrecs[i].offset;
        q->reason = floe_strdup(t->qrecs[i].reason);
        q->rec = t->qrecs[i].rec;
        q->n = t->qrecs[i].n;
        if (!q->reason)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (ni)
        qsort(items, ni, sizeof *items, qitem_cmp);
    if (ni && !(qf->f = floe_calloc(t->n, sizeof *qf->f)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (ni && !(dir = pending_dir(k, t->table)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (ni)
        FLOE_CHECK(floe_io_mkdirs(k->s->cfg.io, dir, err));
    size_t at = 0;
    for (size_t j = 0; j < t->n && at < ni; j++) {
        kf_part *p = t->ps[j];
        size_t pi = t->bp[j].pidx;
        while (at < ni && items[at].part < pi)
            at++;
        size_t from = at;
        while (at < ni && items[at].part == pi)
            at++;
        if (at == from)
            continue;
        kf_qfile *qo = &qf->f[qf->n];
        qo->final = published_name(k, t->table, p->topic, (int)p->partition, t->bp[j].first,
                                   batch);
        qo->tmp = pending_name(dir, p, t->bp[j].first, t->bp[j].expect, batch);
        char *source = floe_asprintf("kafka:%s/%d", p->topic, (int)p->partition);
        if (!qo->final || !qo->tmp || !source) {
            floe_free(qo->final);
            floe_free(qo->tmp);
            floe_free(source);
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        }
        qf->n++;
        qo->n = (int64_t)(at - from);
        floe_quarantine *q = NULL;
        rc = floe_quarantine_open(k->s->cfg.io, qo->tmp, &q, err);
        for (size_t i = from; i < at && rc == 0; i++)
            rc = floe_quarantine_add(q, source, 0, items[i].offset, items[i].reason,
                                     items[i].rec, items[i].n, err);
        if (q) {
            int c2 = floe_quarantine_close(q, rc < 0 ? NULL : err);
            if (rc == 0)
                rc = c2;
        }
        floe_free(source);
        if (rc < 0)
            goto done;
    }
done:
    for (size_t i = 0; i < ni; i++) {
        floe_free(items[i].reason);
        floe_free(items[i].own);
    }
    floe_free(items);
    floe_free(dir);
    floe_buf_free(&line);
    return rc;
}

/* Convert table t's spool into Parquet files under the job's folder (named with prefix;
 * rejected records to tmp_q), listed in fc; on failure the files written are deleted. */
static int convert_spool(srv_kafka *k, const char *table, const uint8_t *map, size_t mapn,
                         int64_t (*more)(void *, size_t, bool *), void *more_ctx,
                         const srv_job_table *jt, floe_schema_mode mode, const char *prefix,
                         const char *tmp_q, srv_files *fc, floe_convert_result *res,
                         floe_error *err) {
    floe_server *s = k->s;
    floe_convert_options co;
    floe_convert_options_init(&co);
    co.io = s->cfg.io;
    co.schema = jt->schema;
    co.write = jt->write;
    co.threads = 2; /* both cores (the consumer takes the next batch meanwhile) */
    co.shred.max_record = (size_t)s->cfg.max_record;
    /* evolve: the table took the spool's new fields before this; a field it could not
     * take (an empty key, a value of no type) sends its record to the quarantine with the
     * reason rather than being dropped from it */
    co.shred.unknown = mode == FLOE_SCHEMA_IGNORE ? FLOE_UNKNOWN_IGNORE : FLOE_UNKNOWN_REJECT;
    co.out_dir = jt->phys_dir;
    co.file_prefix = prefix;
    co.spec = jt->spec->nfields ? jt->spec : NULL;
    co.quarantine_uri = tmp_q;
    co.on_file = srv_files_on_file;
    co.on_file_ctx = fc;
    /* the spool, read in place through the commit's mapping of it: plain NDJSON whatever
     * its first bytes (a record starting with gzip's magic is a record, not a compressed
     * spool) */
    co.input_mem = map;
    co.input_mem_len = mapn;
    co.input_mem_more = more; /* converting ahead: the spool is still growing */
    co.input_mem_more_ctx = more_ctx;
    if (more && k->test_ahead)
        co.chunk_size = (size_t)k->test_ahead;
    char *inp = floe_asprintf("kafka spool of %s", table);
    if (!inp)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    int rc = floe_convert((const char *const *)&inp, 1, &co, res, err);
    floe_free(inp);
    if (rc < 0)
        srv_files_delete(s->cfg.io, fc);
    return rc;
}

/* Deletes the reject files (<table>-<batch id>.rejects, or its .floe-tmp-* while it is
 * written) a process that ended without freeing its batches left in the source's spool
 * folder: each belongs to a batch of that process (converting ahead, one is written for as
 * long as its open batch is taken), none to this one's. */
static void spool_dir_clean(srv_kafka *k) {
    DIR *d = opendir(k->spool_dir);
    if (!d)
        return;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *x = strstr(de->d_name, ".rejects");
        if (!x || x == de->d_name || (x[8] && strncmp(x + 8, ".floe-tmp-", 10)))
            continue;
        char *path = floe_asprintf("%s/%s", k->spool_dir, de->d_name);
        if (path && unlink(path) == 0)
            n++;
        floe_free(path);
    }
    closedir(d);
    if (n)
        floe_log(FLOE_LOG_INFO, "kafka %s: deleted %d reject files of batches a previous "
                 "process left in %s", k->name, n, k->spool_dir);
}

/* What a batch's conversion needs (commit_batch, ahead_main): the table (made from the
 * spool's first MiB if it is new; in evolve mode, its schema first evolved from the whole
 * spool, unless ahead: then FLOE_ECANCELLED, converted at the commit), its job settings
 * (*jt), its schema mode, the conversion's id and the names of its rejects and of its files
 * (*tmp_q, *prefix: the caller frees them). A table registering a group whose keys can be
 * ours is refused here already (*refused, when asked), before any conversion. */
static int batch_job(srv_kafka *k, const char *table, const uint8_t *map, size_t mapn,
                     bool ahead, srv_job_table *jt, floe_schema_mode *mode, char uuid[37],
                     char **tmp_q, char **prefix, bool *refused, floe_error *err) {
    floe_server *s = k->s;
    floe_table *ft = NULL;
    srv_table *st = NULL;
    FLOE_FORWARD_IF_ERROR(srv_table_get(s, table, map, mapn < (1u << 20) ? mapn : (1u << 20),
                                        &st, err));
    *mode = srv_table_mode(s, st);
    if (*mode == FLOE_SCHEMA_EVOLVE && ahead)
        return floe_error_set(err, FLOE_ECANCELLED, "evolve mode: converted at the commit");
    if (*mode == FLOE_SCHEMA_EVOLVE && mapn) {
        floe_error e2;
        floe_error_clear(&e2);
        if (srv_table_evolve(s, st, map, mapn, false, &e2) < 0)
            floe_log(FLOE_LOG_WARN, "kafka %s: table %s: schema evolution failed: %s",
                     k->name, table, e2.msg);
    }
    int64_t target = srv_configured_target(s, table);
    const char *dot = strrchr(table, '.');
    char *ns = floe_strndup(table, (size_t)(dot - table));
    if (!ns)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_lock(&s->cat_mu);
    int rc = floe_table_load(s->catalog, ns, dot + 1, &ft, err);
    if (rc == 0 && (rc = group_conflict(k, table, floe_table_metadata_get(ft), err)) < 0 &&
        refused)
        *refused = true;
    if (rc == 0)
        rc = srv_job_table_read(st, ft, target, jt, err);
    floe_table_close(ft);
    pthread_mutex_unlock(&s->cat_mu);
    floe_free(ns);
    FLOE_FORWARD_IF_ERROR(rc);
    floe_uuid4(uuid); /* the conversion's id (its files' and rejects' names) */
    *tmp_q = floe_asprintf("%s/%s-%s.rejects", k->spool_dir, table, uuid);
    *prefix = floe_asprintf("kafka-%s-%.8s", k->name, uuid);
    if (!*tmp_q || !*prefix)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return 0;
}

/* ---- converting ahead ------------------------------------------------------------- */

/* A table's open batch converting while it is taken: once its spool holds its first
 * MiB, a thread of its own runs the batch's conversion (the commit's first half: the
 * table's job settings, convert_spool) over the spool as it grows, reading it through a
 * mapping reserved for all it may hold and waiting for each next chunk's bytes
 * (floe/input.h, growing memory input); the consumer thread publishes the written length
 * after each write into the spool. The seal hands it to the batch, and the commit tells
 * it where the spool ends, waits for the rest of the conversion and appends its files,
 * instead of converting the whole batch then. The files are the same (the chunks are cut
 * as from the whole spool), so the batch's content, its offsets and the fence are as
 * without it. A batch dropped (fenced, re-sought, revoked) cancels it and deletes its
 * files; one that cannot convert ahead (evolve mode, which changes the schema from the
 * whole spool first; a failure; more bytes than reserved) converts at the commit as
 * before. At most two per source at a time (the sealed batch's and the open one's). */
typedef struct kf_ahead {
    srv_kafka *k;
    char *table;
    uint8_t *map;           /* the spool, mapped for reserve bytes */
    size_t reserve;
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t avail;           /* spool bytes written (whole lines) */
    bool final, cancel, joined;
    bool converted;         /* the conversion wrote its files (even if cancelled after) */
    /* the conversion's outcome (the thread's until joined) */
    int rc;                 /* 0 = converted */
    floe_error err;
    srv_job_table jt;
    srv_files fc;
    floe_convert_result res;
    char uuid[37];          /* the conversion's id */
    char *tmp_q, *prefix;
} kf_ahead;

static void ahead_publish(kf_ahead *a, int64_t bytes) {
    pthread_mutex_lock(&a->mu);
    if ((size_t)bytes > a->reserve)
        a->cancel = true; /* past the mapping: converted at the commit instead */
    else
        a->avail = (size_t)bytes;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* floe_line_reader mem_more: the spool's bytes once a chunk's worth is written, or the
 * batch is sealed (final), or cancelled. */
static int64_t ahead_more(void *ctx, size_t want, bool *final) {
    kf_ahead *a = ctx;
    pthread_mutex_lock(&a->mu);
    while (!a->cancel && !a->final && a->avail < want)
        pthread_cond_wait(&a->cv, &a->mu);
    int64_t r = a->cancel ? FLOE_ECANCELLED : (int64_t)a->avail;
    *final = a->final;
    pthread_mutex_unlock(&a->mu);
    return r;
}

static void *ahead_main(void *arg) {
    kf_ahead *a = arg;
    srv_thread_name("kafka-ahead");
    pthread_mutex_lock(&a->mu);
    size_t have = a->avail;
    pthread_mutex_unlock(&a->mu);
    floe_schema_mode mode;
    int rc = batch_job(a->k, a->table, a->map, have, true, &a->jt, &mode, a->uuid, &a->tmp_q,
                       &a->prefix, NULL, &a->err);
    if (rc == 0)
        rc = convert_spool(a->k, a->table, a->map, have, ahead_more, a, &a->jt, mode,
                           a->prefix, a->tmp_q, &a->fc, &a->res, &a->err);
    a->rc = rc;
    a->converted = rc == 0;
    return NULL;
}

/* Starts table t's conversion ahead (consumer thread; t's spool is written: t->fd). Not
 * in evolve mode, which converts at the commit (its configuration says so: no thread
 * started to find it out; batch_job checks again, for a reload meanwhile). */
static void ahead_start(srv_kafka *k, kf_table *t) {
    t->ahead_tried = true;
    if (atomic_load(&k->naheads) >= KF_MAX_AHEAD ||
        srv_table_mode_named(k->s, t->name) == FLOE_SCHEMA_EVOLVE)
        return;
    kf_ahead *a = floe_calloc(1, sizeof *a);
    if (!a)
        return;
    a->k = k;
    a->reserve = (size_t)(k->commit_bytes + k->max_buffered) + ((size_t)1 << 30);
    a->map = mmap(NULL, a->reserve, PROT_READ, MAP_SHARED, t->fd, 0);
    if (a->map == MAP_FAILED || !(a->table = floe_strdup(t->name))) {
        if (a->map != MAP_FAILED)
            munmap(a->map, a->reserve);
        floe_free(a);
        return;
    }
    a->avail = (size_t)t->bytes;
    srv_files_init(&a->fc, &a->jt);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->thr, NULL, ahead_main, a) != 0) {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        srv_files_free(&a->fc);
        munmap(a->map, a->reserve);
        floe_free(a->table);
        floe_free(a);
        return;
    }
    atomic_fetch_add(&k->naheads, 1);
    t->ahead = a;
}

/* Ends a's conversion: the spool is bytes long (final), or it is cancelled; waits for it. */
static void ahead_join(kf_ahead *a, bool cancel, int64_t bytes) {
    if (a->joined)
        return;
    pthread_mutex_lock(&a->mu);
    if (cancel || (size_t)bytes > a->reserve) { /* or past the mapping: at the commit */
        a->cancel = true;
    } else {
        a->avail = (size_t)bytes;
        a->final = true;
    }
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thr, NULL);
    a->joined = true;
    if (a->cancel && a->rc == 0) /* finished before it saw the cancel: not the batch's */
        a->rc = FLOE_ECANCELLED;
}

/* Frees a (cancelled first if still converting); delete_files: the files it wrote go
 * (not committed). */
static void ahead_free(srv_kafka *k, kf_ahead *a, bool delete_files) {
    if (!a)
        return;
    ahead_join(a, true, 0);
    if (delete_files && a->converted) /* a failed conversion deleted its own */
        srv_files_delete(k->s->cfg.io, &a->fc);
    if (a->tmp_q)
        unlink(a->tmp_q);
    srv_files_free(&a->fc);
    srv_job_table_free(&a->jt);
    floe_convert_result_free(&a->res);
    munmap(a->map, a->reserve);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    floe_free(a->tmp_q);
    floe_free(a->prefix);
    floe_free(a->table);
    floe_free(a);
    atomic_fetch_sub(&k->naheads, 1);
}

/* Packs staged segment b to what its interval's commit needs: its files' records, copied
 * into an arena of small blocks (the conversion's is of 64 KiB blocks, mostly unused),
 * and of its job settings only what deletes its files (the schema, spec and metrics
 * settings freed). A small max_buffered_bytes stages hundreds of segments an interval:
 * at 2 MB, 726 segments held 60 MB unpacked (kadv52). */
static int staged_pack(kf_batch *b, floe_error *err) {
    srv_files *f = &b->sfc;
    floe_arena na;
    floe_arena_init(&na, 4096);
    floe_data_file *nf = floe_calloc(f->n ? f->n : 1, sizeof *nf);
    if (!nf)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < f->n; i++)
        if (floe_data_file_copy(&f->files[i], &na, &nf[i], err) < 0) {
            floe_arena_reset(&na);
            floe_free(nf);
            return FLOE_ENOMEM;
        }
    floe_arena_reset(&f->arena);
    floe_free(f->files);
    f->arena = na;
    f->files = nf;
    f->cap = f->n ? f->n : 1;
    b->meta_bytes = (int64_t)(na.total + f->cap * sizeof *nf + sizeof *b +
                              b->n * (sizeof *b->ps + sizeof *b->bp));
    floe_schema_free(b->sjt.schema);
    floe_partition_spec_free(b->sjt.spec);
    floe_metrics_config_free(b->sjt.metrics);
    b->sjt.schema = NULL;
    b->sjt.spec = NULL;
    b->sjt.metrics = NULL;
    return 0;
}

/* One append to ft: the interval's files (its staged segments' and commit job bp's,
 * fc), each partition's next offset (and floor) and the interval's id (batch_key) as
 * table properties, the group's registration (group_key), the offsets in the snapshot
 * summary, under the fence that every partition's offset in the table is still the one
 * the interval starts from and that the table registers no group whose keys can be ours
 * (*refused when it does), in the partition spec the files were written under
 * (*spec_changed, FLOE_ECANCELLED: under two, dropped). *files_kept: the commit's outcome
 * is unknown, so the files must stay. */
static int append_batch(srv_kafka *k, floe_table *ft, const srv_files *fc,
                        const kf_batch *bp, const char *batch, floe_append_result *ares,
                        bool *files_kept, bool *refused, bool *spec_changed,
                        floe_error *err) {
    fence fe = {.k = k, .table = bp->table};
    size_t un = bp->un;
    kf_part *const *ups = bp->ups;
    const kf_bpart *ubp = bp->ubp;
    char *gk = NULL;
    floe_append *a = NULL;
    floe_buf summary;
    floe_buf_init(&summary, 0);
    int rc = 0;
    if (!(fe.keys = floe_calloc(un ? un : 1, sizeof *fe.keys)) ||
        !(fe.expect = floe_calloc(un ? un : 1, sizeof *fe.expect)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (floe_buf_printf(&summary, "{") < 0)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* the files go into the manifest of the partition spec they were written under (the
     * table's default when their conversion began), not the default at the commit, which
     * the table's owner may have changed since: day(ts) values under hour(ts) would prune
     * them from queries they match. One append has one spec: an interval whose segments
     * were written under two is dropped and consumed again (by the current spec) */
    int32_t spec_id = -1;
    for (size_t j = 0; j <= bp->nsegs; j++) {
        size_t nx = j < bp->nsegs ? bp->segs[j]->sfc.n : fc->n;
        int32_t x = j < bp->nsegs ? bp->segs[j]->spec_id : fc->jt->spec->spec_id;
        if (!nx)
            continue;
        if (spec_id >= 0 && x != spec_id) {
            *spec_changed = true;
            FLOE_FAIL(err, FLOE_ECANCELLED, "the interval's files were written under partition "
                      "specs %d and %d (the table's spec changed): consumed again", (int)spec_id,
                      (int)x);
        }
        spec_id = x;
    }
    FLOE_CHECK(floe_append_new(ft, &a, err));
    if (spec_id >= 0)
        FLOE_CHECK(floe_append_set_spec(a, spec_id, err));
    for (size_t j = 0; j < bp->nsegs; j++)
        for (size_t i = 0; i < bp->segs[j]->sfc.n; i++)
            FLOE_CHECK(floe_append_add_file(a, &bp->segs[j]->sfc.files[i], err));
    for (size_t i = 0; i < fc->n; i++)
        FLOE_CHECK(floe_append_add_file(a, &fc->files[i], err));
    for (size_t i = 0; i < un; i++) {
        kf_part *p = ups[i];
        char v[24];
        if (!(fe.keys[i] = offset_key(k, p)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        fe.expect[i] = ubp[i].expect;
        fe.n++;
        FLOE_CHECK(floe_append_set_property(a, fe.keys[i], srv_i64(v, ubp[i].next), err));
        char *bk = batch_key(k, p);
        if (!bk)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
        rc = floe_append_set_property(a, bk, batch, err);
        floe_free(bk);
        if (rc < 0)
            goto done;
        if (k->route_field) {
            char *fk = floor_key(k, p);
            if (!fk)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            rc = floe_append_set_property(a, fk, srv_i64(v, ubp[i].floor), err);
            floe_free(fk);
            if (rc < 0)
                goto done;
        }
        if (floe_buf_printf(&summary, "%s", i ? "," : "") < 0 ||
            floe_json_append_string(&summary, (const uint8_t *)p->topic, strlen(p->topic)) < 0 ||
            floe_buf_printf(&summary, ":[%d,%lld,%lld]", (int)p->partition,
                            (long long)ubp[i].first, (long long)ubp[i].next) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    if (floe_buf_printf(&summary, "}") < 0 || floe_buf_append_byte(&summary, 0) < 0 ||
        !(gk = group_key(k)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* registered with every commit (the value says nothing; the key is the registration) */
    FLOE_CHECK(floe_append_set_property(a, gk, "1", err));
    FLOE_CHECK(floe_append_set_summary(a, "floe.kafka.group", k->group, err));
    FLOE_CHECK(floe_append_set_summary(a, "floe.kafka.offsets", (const char *)summary.data,
                                       err));
    FLOE_CHECK(floe_append_set_summary(a, "floe.node", k->s->node, err));
    floe_append_set_check(a, fence_check, &fe);
    rc = floe_append_commit(a, ares, err);
    if (rc == FLOE_EUNKNOWN_STATE)
        *files_kept = true; /* I3: the swap may have happened */
    *refused = rc < 0 && fe.refused;
done:
    floe_append_free(a);
    floe_free(gk);
    for (size_t i = 0; i < fe.n; i++)
        floe_free(fe.keys[i]);
    floe_free(fe.keys);
    floe_free(fe.expect);
    floe_buf_free(&summary);
    return rc;
}

/* Commit sealed batch b (see the top): read the table's job settings (evolving its schema
 * first in evolve mode), convert the spool, quarantine what was rejected, append the
 * files and the offsets in one commit, with the files of the interval's staged segments
 * b takes; a stage job (b->stage) ends before the append, its files and its pending
 * quarantine files kept in b (see "Staging" at the top). Sets b->rc (0 = committed, or
 * staged) and b->err. Runs on the
 * batch's own thread while the consumer takes the next batch, or on the consumer thread:
 * it reads only b, the partitions' names and the server's shared state (catalog under
 * cat_mu, srv_table), and changes nothing of the source but its counters. */
static void commit_batch(srv_kafka *k, kf_batch *b) {
    floe_server *s = k->s;
    floe_error *err = &b->err;
    floe_error_clear(err);
    int64_t t0 = floe_now_ns();
    srv_job_table jt0;
    memset(&jt0, 0, sizeof jt0);
    srv_files fc0;
    srv_files_init(&fc0, &jt0);
    floe_convert_result res0;
    memset(&res0, 0, sizeof res0);
    /* the conversion's: converted ahead (kf_ahead), or here */
    srv_files *fc = &fc0;
    floe_convert_result *res = &res0;
    floe_table *ft = NULL;
    floe_append_result ares;
    memset(&ares, 0, sizeof ares);
    uint8_t *map = NULL;
    size_t mapn = 0;
    char *tmp_q = NULL, *prefix = NULL, *ns = NULL;
    char uuid[37]; /* the conversion's id (its files' and rejects' names) */
    bool locked = false, files_kept = false;
    int64_t nquar = 0;
    kf_qfiles qf = {0};
    int rc = 0;
    kf_ahead *a = b->ahead;
    b->ahead = NULL; /* this commit's now (a retry converts here) */
    b->refused = false;
    b->respec = false;
    if (b->mismatch) { /* never: dropped and consumed again, like a fenced batch */
        ahead_free(k, a, true);
        a = NULL;
        FLOE_FAIL(err, FLOE_ECANCELLED, "the interval's segments expect different offsets");
    }
    if (a) {
        ahead_join(a, false, b->bytes); /* the rest of the spool, then its end */
        if (a->rc < 0) {
            floe_log(FLOE_LOG_DEBUG, "kafka %s: %s: not converted ahead: %s", k->name,
                     b->table, a->err.msg);
            ahead_free(k, a, true); /* files only if cancelled once converted */
            a = NULL;
        }
    }
    if (a) { /* its files are this commit's from here on */
        fc = &a->fc;
        res = &a->res;
        tmp_q = a->tmp_q;
        prefix = a->prefix;
    }
    if (b->bytes > 0) {
        map = mmap(NULL, (size_t)b->bytes, PROT_READ, MAP_SHARED, b->fd, 0);
        if (map == MAP_FAILED) {
            map = NULL;
            FLOE_FAIL(err, FLOE_EIO, "kafka spool of %s: mmap: %s", b->table, strerror(errno));
        }
        mapn = (size_t)b->bytes;
#ifdef MADV_POPULATE_READ
        /* the memory file's pages mapped in one call, not a fault each as they are read
         * (converted ahead, only the quarantine's records are read) */
        if (!a)
            (void)madvise(map, mapn, MADV_POPULATE_READ);
#endif
    }
    const char *dot = strrchr(b->table, '.');
    if (!(ns = floe_strndup(b->table, (size_t)(dot - b->table))))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (!a) {
        floe_schema_mode mode;
        FLOE_CHECK(batch_job(k, b->table, map, mapn, false, &jt0, &mode, uuid, &tmp_q, &prefix,
                             &b->refused, err));
        if (b->nlines) /* convert the spool */
            FLOE_CHECK(convert_spool(k, b->table, map, mapn, NULL, NULL, &jt0, mode, prefix,
                                     tmp_q, &fc0, &res0, err));
    }
    FLOE_CHECK(write_quarantine(k, b, tmp_q, map, mapn, b->iid, &qf, err));
    if (b->stage) {
        /* staged: its files, their job settings and its pending quarantine stay in b */
        srv_job_table *jt = a ? &a->jt : &jt0;
        b->sjt = *jt;
        b->spec_id = jt->spec->spec_id;
        memset(jt, 0, sizeof *jt);
        b->sfc = *fc;
        b->sfc.jt = &b->sjt;
        srv_files_init(fc, jt);
        FLOE_CHECK(staged_pack(b, err));
        b->sqf = qf;
        memset(&qf, 0, sizeof qf);
        b->rows = res->records_out;
        atomic_fetch_add(&k->commit_us, (uint64_t)((floe_now_ns() - t0) / 1000));
        floe_log(FLOE_LOG_DEBUG, "kafka %s: %s: staged %lld rows of %zu partitions in %zu "
                 "files (interval %s)%s", k->name, b->table, (long long)b->rows, b->n,
                 b->sfc.n, b->iid, a ? " (converted ahead)" : "");
        goto done;
    }
    if (k->test_pause_ms > 0)
        usleep((useconds_t)(k->test_pause_ms * 1000));

    /* one append: the files and the offsets; the partitions' pending quarantine files
     * settled first, so that a committed batch's is published before its id goes */
    pthread_mutex_lock(&s->cat_mu);
    locked = true;
    FLOE_CHECK(floe_table_load(s->catalog, ns, dot + 1, &ft, err));
    /* refused before settle() reads offsets and batch ids that may be another group's */
    if ((rc = group_conflict(k, b->table, floe_table_metadata_get(ft), err)) < 0) {
        b->refused = true;
        goto done;
    }
    FLOE_CHECK(settle(k, b->table, floe_table_metadata_get(ft), b->ups, b->un, err));
    FLOE_CHECK(append_batch(k, ft, fc, b, b->iid, &ares, &files_kept, &b->refused,
                            &b->respec, err));
    /* committed: the quarantine files are published (one that cannot be stays pending,
     * and is published by the next settle(): the consumer's resettle() a second later,
     * before the partition's next commit, or at its next assignment); their records count
     * as quarantined either way: the commit decided it */
    int64_t rows = res->records_out;
    for (size_t j = 0; j <= b->nsegs; j++) {
        const kf_qfiles *q = j < b->nsegs ? &b->segs[j]->sqf : &qf;
        for (size_t i = 0; i < q->n; i++) {
            floe_error e2;
            floe_error_clear(&e2);
            if (pending_publish(q->f[i].tmp, q->f[i].final, &e2) < 0) {
                floe_log(FLOE_LOG_ERROR, "kafka %s: %s: %s (left pending)", k->name,
                         b->table, e2.msg);
                atomic_store(&k->unsettled, true);
            }
            nquar += q->f[i].n;
        }
        if (j < b->nsegs)
            rows += b->segs[j]->rows;
    }
    atomic_fetch_add(&s->m.commits, 1);
    atomic_fetch_add(&s->m.events_committed, (uint64_t)rows);
    atomic_fetch_add(&k->committed_rows, (uint64_t)rows);
    atomic_fetch_add(&k->quarantined, (uint64_t)nquar);
    atomic_fetch_add(&k->commits, 1);
    if (a)
        atomic_fetch_add(&k->ahead, 1);
    atomic_fetch_add(&k->commit_us, (uint64_t)((floe_now_ns() - t0) / 1000));
    floe_log(FLOE_LOG_INFO, "kafka %s: %s: committed %lld rows (%lld quarantined) of %zu "
             "partitions, %zu staged segments and one sealed, in snapshot %lld%s%s", k->name,
             b->table, (long long)rows, (long long)nquar, b->un, b->nsegs,
             (long long)ares.snapshot_id, b->thread ? " (pipelined)" : "",
             a ? " (converted ahead)" : "");
done:
    if (locked)
        pthread_mutex_unlock(&s->cat_mu);
    floe_table_close(ft);
    b->files_kept = files_kept;
    if (rc < 0 && !files_kept)
        srv_files_delete(s->cfg.io, fc);
    if (map)
        munmap(map, mapn);
    if (tmp_q)
        unlink(tmp_q);
    /* not committed: the pending files go; of unknown outcome, settle() decides */
    qfiles_free(&qf, rc == 0 || rc == FLOE_EUNKNOWN_STATE);
    floe_append_result_reset(&ares);
    srv_files_free(&fc0);
    srv_job_table_free(&jt0);
    floe_convert_result_free(&res0);
    if (a) {
        ahead_free(k, a, false); /* its files: committed, kept, or deleted above */
    } else {
        floe_free(tmp_q);
        floe_free(prefix);
    }
    floe_free(ns);
    b->rc = rc;
}

static void *commit_thread(void *arg) {
    kf_batch *b = arg;
    srv_thread_name("kafka-commit");
    commit_batch(b->k, b);
    atomic_store(&b->done, true);
    return NULL;
}

/* The bytes table t holds: its open batch and its sealed one. */
static int64_t table_bytes(const kf_table *t) {
    return t->bytes + t->qbytes + (t->sealed ? t->sealed->bytes + t->sealed->qbytes : 0);
}

/* Table t's commit failed and its batch is kept: retried after a back-off that doubles
 * with each failure in a row (200 ms, 400 ms, ... 6.4 s). */
static void retry_later(kf_table *t) {
    t->failures++;
    t->retry_at_ns = floe_now_ns() + (100LL << (t->failures < 6 ? t->failures : 6)) * 1000000;
}

/* Applies the outcome of sealed batch b of table ti (consumer thread; b is no longer
 * committing). Committed: the partitions' offsets are the ones the batch wrote (their
 * positions at the seal, not now: what was taken since is in the open batch), Kafka's
 * committed offsets follow (lag monitoring) and b is freed. Fenced or of unknown outcome:
 * b and the table's open batch are dropped (*dropped) and the partitions seek back to the
 * table's offsets (reseek). Otherwise b is kept, retried after a back-off, unless the
 * table's open batch grew meanwhile to more than half of the budget with it: then both
 * are dropped the same way (the next attempt after the back-off). */
static void finish(srv_kafka *k, kf_batch *b, bool *dropped) {
    uint32_t ti = b->tbl;
    kf_table *t = &k->tables[ti];
    *dropped = false;
    if (k->inflight == b)
        k->inflight = NULL;
    if (b->rc == 0 && b->stage) {
        /* staged: its spool's memory is freed, its files wait for the interval's commit
         * (its partitions' sealed_first stays: they are not committed) */
        t->sealed = NULL;
        b->in_bytes = b->bytes + b->qbytes;
        batch_unspool(k, b);
        t->staged[t->nstaged++] = b; /* its place was made by seal() */
        t->staged_bytes += b->in_bytes;
        t->staged_meta += b->meta_bytes;
        atomic_fetch_add(&k->staged_bytes, b->in_bytes);
        atomic_fetch_add(&k->staged_segments, 1);
        return;
    }
    if (b->rc == 0) {
        for (size_t i = 0; i < b->un; i++) {
            kf_pt *pt = pt_find(b->ups[i], ti);
            if (pt) {
                pt->committed = b->ubp[i].next;
                pt->sealed_first = -1;
            }
            atomic_store(&b->ups[i]->committed, k->route_field ? b->ubp[i].floor
                                                               : b->ubp[i].next);
        }
        kafka_commit_offsets(k, b);
        t->sealed = NULL;
        for (size_t i = 0; i < b->nsegs; i++)
            staged_free(k, b->segs[i], true); /* committed */
        b->nsegs = 0;
        batch_free(k, b);
        t->failures = 0;
        t->retry_at_ns = 0;
        t->committed_ns = floe_now_ns();
        return;
    }
    atomic_fetch_add(&k->commit_failures, 1);
    atomic_fetch_add(&k->s->m.commit_failures, 1);
    if (b->rc == FLOE_ECANCELLED || b->rc == FLOE_EUNKNOWN_STATE) {
        /* fenced, or the outcome is unknown: the table says where to resume; b and
         * what was taken after it are consumed again from there */
        floe_log(FLOE_LOG_WARN, "kafka %s: %s: commit failed (batch dropped, consumed "
                 "again from the table's offsets): %s", k->name, t->name, b->err.msg);
        if (b->rc == FLOE_ECANCELLED && !b->respec)
            atomic_fetch_add(&k->fenced, 1);
        *dropped = true;
        reseek(k, ti); /* drops b with the table's batches */
        return;
    }
    if (b->refused)
        atomic_fetch_add(&k->refused, 1);
    retry_later(t);
    if (t->bytes + t->qbytes > 0 && table_bytes(t) * 2 > k->max_buffered) {
        /* its open batch grew while b committed: kept, the table would hold more than
         * half of the budget, so both go and are consumed again from the table's offsets
         * at once (the next attempt after the back-off; a failing table holds half of the
         * budget at most) */
        floe_log(b->refused ? FLOE_LOG_ERROR : FLOE_LOG_WARN, "kafka %s: %s: commit failed "
                 "(batch dropped, consumed again from the table's offsets: %lld bytes held): "
                 "%s", k->name, t->name, (long long)table_bytes(t), b->err.msg);
        *dropped = true;
        reseek(k, ti);
        return;
    }
    if (b->nsegs && floe_now_ns() - b->interval_ns >= k->staged_drop_ms * 1000000) {
        /* its staged files near the age at which floe orphans may delete them: they go,
         * and their events are consumed again (see KF_STAGED_DROP_MS) */
        floe_log(FLOE_LOG_ERROR, "kafka %s: %s: commit failed (batch dropped, consumed again "
                 "from the table's offsets: its %zu staged segments are %lld s old): %s",
                 k->name, t->name, b->nsegs,
                 (long long)((floe_now_ns() - b->interval_ns) / 1000000000), b->err.msg);
        *dropped = true;
        reseek(k, ti);
        return;
    }
    floe_log(b->refused ? FLOE_LOG_ERROR : FLOE_LOG_WARN, "kafka %s: %s: commit failed (kept, "
             "retried): %s", k->name, t->name, b->err.msg);
    atomic_store(&b->done, false);
}

/* Commits sealed batch b on its own thread (the consumer goes on taking messages into the
 * table's open batch); on the consumer thread when no thread can be made. */
static void dispatch(srv_kafka *k, kf_batch *b) {
    k->inflight = b;
    atomic_store(&b->done, false);
    b->thread = true; /* before the thread reads it */
    if (pthread_create(&b->thr, NULL, commit_thread, b) != 0) {
        b->thread = false;
        commit_batch(k, b);
        atomic_store(&b->done, true);
    }
}

/* Waits for the batch committing on its own thread, if any, and applies its outcome: < 0
 * (in err) when it was not committed and was dropped (consumed again) other than for a
 * fence (another member committed its partitions): a flush must not say it committed. */
static int drain_rc(srv_kafka *k, floe_error *err) {
    kf_batch *b = k->inflight;
    if (!b)
        return 0;
    if (b->thread)
        pthread_join(b->thr, NULL);
    b->thread = false;
    int rc = b->rc;
    if (rc < 0 && rc != FLOE_ECANCELLED && err)
        *err = b->err; /* b may be freed by finish */
    bool dropped;
    finish(k, b, &dropped);
    return dropped && rc != FLOE_ECANCELLED ? rc : 0;
}

static void drain(srv_kafka *k) {
    (void)drain_rc(k, NULL);
}

/* The same when its commit has returned (never waits). */
static void poll_inflight(srv_kafka *k) {
    if (k->inflight && atomic_load(&k->inflight->done))
        drain(k);
}

/* Commit table ti's batches now, on the consumer thread (a revocation, a flush, the
 * stop): the batch committing on its own thread first (whichever table's), then the
 * table's sealed batch kept after a failure, then its open batch. 0 = committed or
 * nothing to do; < 0 = not committed: *dropped says whether the batches were dropped
 * (the partitions seek back to the table's offsets) or kept for a retry. */
static int commit_table(srv_kafka *k, uint32_t ti, bool *dropped, floe_error *err) {
    kf_table *t = &k->tables[ti];
    *dropped = false;
    drain(k);
    for (int round = 0; round < 2; round++) {
        kf_batch *b = t->sealed;
        bool held = b != NULL;
        if (b && b->stage && interval_take(t, b, err) < 0) {
            retry_later(t);
            return FLOE_ENOMEM;
        }
        if (!b) {
            int rc = seal(k, ti, false, &b, err);
            if (rc < 0) {
                retry_later(t);
                return rc;
            }
            if (!b)
                return 0;
        }
        commit_batch(k, b);
        int rc = b->rc;
        if (rc < 0)
            *err = b->err;
        finish(k, b, dropped);
        if (rc < 0)
            return rc;
        if (!held)
            return 0;
    }
    return 0;
}

/* Fetching paused per partition (memory bound, max_buffered_bytes). A table's batch is
 * sealed when it is due, when it holds half of the budget, or when the total reaches
 * the budget, and committed or staged (its memory freed; a failing table does not stage),
 * so buffered bytes stay only in tables whose commit failed (kept, retried
 * after a back-off), each holding half of the budget at most (and one message). The
 * partitions feeding those tables pause once the failing tables hold half of the budget,
 * and the others keep flowing, their tables committing in batches of the other half;
 * when the failing tables hold the whole budget (two of them, each at its half), every
 * partition pauses. A partition resumes when its tables commit again. While a table's
 * sealed batch commits (pipelining), nothing pauses for it: its open batch keeps growing,
 * under the budget (at it, the consumer waits for the commit, commit_due); a commit that
 * fails while its table holds more than half of the budget drops the table's batches
 * (finish), so a failing table still holds half of the budget at most. */
static void update_pauses(srv_kafka *k) {
    int64_t failing = 0;
    for (size_t i = 0; i < k->ntables; i++)
        if (k->tables[i].failures)
            failing += table_bytes(&k->tables[i]);
    bool hold = failing * 2 >= k->max_buffered ||
                atomic_load(&k->buffered) >= k->max_buffered;
    bool all = failing >= k->max_buffered;
    rd_kafka_topic_partition_list_t *pl = NULL, *rl = NULL;
    int64_t npaused = 0;
    for (size_t i = 0; i < k->nparts; i++) {
        kf_part *p = k->parts[i];
        if (!p->assigned)
            continue;
        bool want = all;
        for (size_t j = 0; j < p->npts && !want; j++)
            want = hold && k->tables[p->pts[j].tbl].failures > 0;
        /* a paused partition waits until its tables committed, not just for room */
        for (size_t j = 0; j < p->npts && p->paused && !want; j++)
            want = k->tables[p->pts[j].tbl].failures > 0 &&
                   table_bytes(&k->tables[p->pts[j].tbl]) > 0;
        npaused += want;
        if (want == p->paused)
            continue;
        rd_kafka_topic_partition_list_t **l = want ? &pl : &rl;
        if (!*l && !(*l = rd_kafka_topic_partition_list_new(16)))
            continue;
        rd_kafka_topic_partition_list_add(*l, p->topic, p->partition);
        p->paused = want;
    }
    atomic_store(&k->paused_parts, npaused);
    if (pl) {
        rd_kafka_pause_partitions(k->rk, pl);
        atomic_fetch_add(&k->pauses, (uint64_t)pl->cnt);
        floe_log(FLOE_LOG_INFO, "kafka %s: fetching paused on %d partitions (%lld bytes "
                 "buffered, %lld in tables failing to commit)", k->name, pl->cnt,
                 (long long)atomic_load(&k->buffered), (long long)failing);
        rd_kafka_topic_partition_list_destroy(pl);
    }
    if (rl) {
        rd_kafka_resume_partitions(k->rk, rl);
        floe_log(FLOE_LOG_INFO, "kafka %s: fetching resumed on %d partitions (%lld bytes "
                 "buffered)", k->name, rl->cnt, (long long)atomic_load(&k->buffered));
        rd_kafka_topic_partition_list_destroy(rl);
    }
}

/* Commit every table that is due (all of them with force), and stage the open batch of a
 * table that is not but holds half of the budget, or any batch when the budget is reached
 * (see "Staging" at the top; a table whose commits fail commits it instead). Without
 * force, one batch at a time commits or stages on its own thread while the consumer goes
 * on taking messages: a table's open batch is sealed and dispatched there once the batch
 * before it (of any table) is done, a kept batch once its back-off ends; at the budget,
 * the consumer waits for the batch in flight (so the memory stays bounded). With force,
 * every table's batches and staged segments are committed before it returns. */
static int commit_due(srv_kafka *k, bool force, floe_error *err) {
    int first_rc = 0;
    if (force) {
        floe_error e1;
        floe_error_clear(&e1);
        if ((first_rc = drain_rc(k, &e1)) < 0 && err)
            *err = e1;
        for (uint32_t i = 0; i < k->ntables; i++) {
            bool dropped;
            floe_error e2;
            floe_error_clear(&e2);
            int rc = commit_table(k, i, &dropped, &e2);
            if (rc < 0 && first_rc == 0) {
                first_rc = rc;
                if (err)
                    *err = e2;
            }
        }
        update_pauses(k);
        return first_rc;
    }
    poll_inflight(k);
    for (uint32_t n = 0; n < k->ntables;) {
        /* at the budget, the batch committing ends first (memory bound) */
        if (k->inflight && atomic_load(&k->buffered) >= k->max_buffered)
            drain(k);
        if (k->inflight)
            break;
        int64_t now = floe_now_ns();
        bool over = atomic_load(&k->buffered) >= k->max_buffered;
        /* round robin from the table after the last one committed */
        uint32_t i = (uint32_t)((k->next_table + n++) % k->ntables);
        kf_table *t = &k->tables[i];
        kf_batch *b = t->sealed;
        floe_error e2;
        floe_error_clear(&e2);
        if (b) {
            if (t->retry_at_ns > now)
                continue;
            /* a kept stage job (its table is failing): committed with the interval */
            if (b->stage && interval_take(t, b, &e2) < 0) {
                retry_later(t);
                continue;
            }
        } else {
            int64_t held = t->bytes + t->qbytes; /* the open batch's */
            int64_t start = t->interval_ns ? t->interval_ns : t->first_ns;
            /* memory: the open batch is sealed, and staged unless the commit is due */
            bool mem = (over && held) || held * 2 >= k->max_buffered;
            /* due: the interval's age or commit_bytes, or its staged segments' file
             * records hold half of the budget (only a small one: see staged_pack) */
            bool due = (k->commit_bytes > 0 && t->staged_bytes + held >= k->commit_bytes) ||
                       (start && now - start >= k->commit_interval_ms * 1000000 &&
                        now - t->committed_ns >= k->commit_interval_ms * 1000000) ||
                       (t->interval_ns && now - t->interval_ns >= k->staged_due_ms * 1000000) ||
                       t->staged_meta * 2 >= k->max_buffered;
            if ((!due && !mem) || t->retry_at_ns > now)
                continue;
            int rc = seal(k, i, !due && t->failures == 0, &b, &e2);
            if (rc < 0) {
                floe_log(FLOE_LOG_WARN, "kafka %s: %s: commit failed (kept, retried): %s",
                         k->name, t->name, e2.msg);
                retry_later(t);
                if (first_rc == 0) {
                    first_rc = rc;
                    if (err)
                        *err = e2;
                }
                continue;
            }
            if (!b)
                continue;
        }
        k->next_table = i + 1;
        n = 0;
        if (!b->stage)
            atomic_fetch_add(&k->pipelined, 1);
        dispatch(k, b);
    }
    update_pauses(k);
    return first_rc;
}

/* ---- rebalances ---------------------------------------------------------------------- */

/* The group's protocol is cooperative (NULL while no protocol is agreed, e.g. in the
 * revocation made by rd_kafka_consumer_close: eager, the whole assignment goes). */
static bool cooperative(srv_kafka *k) {
    const char *p = rd_kafka_rebalance_protocol(k->rk);
    return p && !strcmp(p, "COOPERATIVE");
}

static void on_assign(srv_kafka *k, rd_kafka_topic_partition_list_t *l) {
    atomic_store(&k->assigned_once, true);
    drain(k); /* no batch commits across a rebalance */
    floe_error err;
    floe_error_clear(&err);
    kf_part **ps = floe_calloc((size_t)l->cnt + 1, sizeof *ps);
    int64_t *off = floe_calloc((size_t)l->cnt + 1, sizeof *off);
    uint32_t *tis = floe_calloc((size_t)l->cnt + 1, sizeof *tis);
    bool ok = ps && off && tis;
    for (int i = 0; ok && i < l->cnt; i++)
        ok = part_get(k, l->elems[i].topic, l->elems[i].partition, &ps[i], &err) == 0;
    for (int i = 0; ok && i < l->cnt && !k->route_field; i++) {
        char *tn = expand_table(k->table, ps[i]->topic, "");
        ok = tn && table_index(k, tn, &tis[i], &err) == 0;
        floe_free(tn);
    }
    /* the tables' offsets (retried: resuming from anything else could take a message
     * twice); a table registering a group whose keys can be ours refuses the assignment
     * (group_conflict), for good */
    uint64_t refused = atomic_load(&k->refused);
    for (int tries = 0; ok; tries++) {
        if (resume_offsets(k, ps, (size_t)l->cnt, off, &err) == 0)
            break;
        if (atomic_load(&k->refused) != refused) {
            ok = false;
            break;
        }
        floe_log(FLOE_LOG_WARN, "kafka %s: reading the tables' offsets: %s (retrying)",
                 k->name, err.msg);
        floe_error_clear(&err);
        if (atomic_load(&k->stop) && tries > 3) {
            ok = false;
            break;
        }
        usleep(200000);
    }
    for (int i = 0; ok && i < l->cnt; i++) {
        ps[i]->npts = 0;
        if (!k->route_field && !pt_add(ps[i], tis[i], off[i]))
            ok = false;
    }
    if (!ok) {
        floe_log(FLOE_LOG_ERROR, "kafka %s: assignment: %s", k->name,
                 err.msg[0] ? err.msg : "out of memory");
        floe_free(ps);
        floe_free(off);
        floe_free(tis);
        return; /* not assigned: the group's session ends and the partitions move on */
    }
    for (int i = 0; i < l->cnt; i++) {
        kf_part *p = ps[i];
        p->assigned = true;
        p->paused = false;
        atomic_store(&p->committed, off[i]);
        atomic_store(&p->next, off[i]);
        /* no offset in the table: nothing of the partition was ever committed to it; start
         * where the consumer's auto.offset.reset says (earliest unless configured) */
        l->elems[i].offset = off[i] >= 0 ? off[i] : RD_KAFKA_OFFSET_INVALID;
        floe_log(FLOE_LOG_INFO, "kafka %s: assigned %s/%d from offset %lld (the table's)",
                 k->name, p->topic, (int)p->partition, (long long)off[i]);
    }
    floe_free(ps);
    floe_free(off);
    floe_free(tis);
    if (cooperative(k)) {
        rd_kafka_error_t *e = rd_kafka_incremental_assign(k->rk, l);
        if (e) {
            floe_log(FLOE_LOG_ERROR, "kafka %s: assign: %s", k->name, rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
    } else {
        rd_kafka_assign(k->rk, l);
    }
    rd_kafka_resume_partitions(k->rk, l); /* a pause of an earlier assignment ends */
}

static void on_revoke(srv_kafka *k, rd_kafka_topic_partition_list_t *l, bool lost) {
    /* The batch committing on its own thread ends first, while the partitions are still
     * this consumer's (the group waits for this callback): committed under the fence, or
     * dropped and its partitions sought back to the table's offsets. */
    if (k->inflight) {
        floe_log(FLOE_LOG_INFO, "kafka %s: %s: a rebalance waits for the batch committing",
                 k->name, k->inflight->table);
        drain(k);
    }
    /* Commit the batches holding the revoked partitions' records before they go; when
     * that fails the batch is dropped and the next owner consumes it again. */
    for (uint32_t ti = 0; ti < k->ntables; ti++) {
        bool involved = false;
        for (int i = 0; i < l->cnt && !involved; i++) {
            kf_part *p = part_find(k, l->elems[i].topic, l->elems[i].partition, NULL);
            kf_pt *pt = p ? pt_find(p, ti) : NULL;
            involved = pt && (pt->first >= 0 || pt->sealed_first >= 0);
        }
        if (!involved)
            continue;
        bool dropped = false;
        floe_error err;
        floe_error_clear(&err);
        int rc = commit_table(k, ti, &dropped, &err);
        if (rc < 0 && !dropped) {
            floe_log(FLOE_LOG_WARN, "kafka %s: %s: commit at revocation failed: %s; the "
                     "batch is dropped (the next owner consumes it from the table's offsets)",
                     k->name, k->tables[ti].name, err.msg);
            atomic_fetch_add(&k->revoked_dropped, 1);
            for (int i = 0; i < l->cnt; i++) {
                kf_part *p = part_find(k, l->elems[i].topic, l->elems[i].partition, NULL);
                if (p)
                    p->assigned = false;
            }
            reseek(k, ti);
        }
    }
    for (int i = 0; i < l->cnt; i++) {
        kf_part *p = part_find(k, l->elems[i].topic, l->elems[i].partition, NULL);
        if (p) {
            p->assigned = false;
            p->paused = false;
            p->npts = 0;
        }
    }
    bool coop = cooperative(k);
    floe_log(FLOE_LOG_INFO, "kafka %s: %d partitions %s (%s)", k->name, l->cnt,
             lost ? "lost" : "revoked", coop ? "incremental" : "the whole assignment");
    if (coop) {
        rd_kafka_error_t *e = rd_kafka_incremental_unassign(k->rk, l);
        if (e)
            rd_kafka_error_destroy(e);
    } else {
        rd_kafka_assign(k->rk, NULL);
    }
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t e,
                         rd_kafka_topic_partition_list_t *l, void *opaque) {
    (void)rk;
    srv_kafka *k = opaque;
    atomic_fetch_add(&k->rebalances, 1);
    if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
        on_assign(k, l);
    else
        on_revoke(k, l, rd_kafka_assignment_lost(k->rk));
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    floe_log(level <= 3 ? FLOE_LOG_ERROR : level <= 4 ? FLOE_LOG_WARN
             : level <= 6 ? FLOE_LOG_INFO : FLOE_LOG_DEBUG, "kafka: %s: %s", fac, buf);
}

/* ---- the consumer thread ------------------------------------------------------------ */

/* librdkafka before 2.3.0 (its issue 4312, Debian 12 has 2.0.2): a consumer of the
 * cooperative-sticky assignor destroyed after its first JoinGroup answer (which chooses
 * the assignor) and before its first assignment (which creates the assignor's state)
 * aborts in rd_kafka_destroy (rd_kafka_sticky_assignor_state_destroy asserts the state).
 * So a stopping consumer whose group has chosen the assignor waits for that assignment
 * (serving the rebalance; messages are not taken), 15 s at most; one that still has none
 * when it leaves the group (the wait ran out, or the answer came between the check and
 * the close) keeps its handle until the process exits instead of destroying it. */
static void sticky_wait(srv_kafka *k) {
    for (int i = 0; i < 150 && !atomic_load(&k->assigned_once); i++) {
        const char *p = rd_kafka_rebalance_protocol(k->rk);
        if (!p || strcmp(p, "COOPERATIVE"))
            break; /* no JoinGroup answer yet: none will be handled once closing */
        if (i == 0)
            floe_log(FLOE_LOG_INFO, "kafka %s: waiting for the first assignment before "
                     "leaving the group", k->name);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, 100);
        if (m)
            rd_kafka_message_destroy(m);
    }
}

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static rd_kafka_t **kept_rk; /* closed handles not destroyed (kafka_main), reachable till exit */
static size_t nkept_rk;

static void keep_handle(rd_kafka_t *rk) {
    pthread_mutex_lock(&kept_mu);
    rd_kafka_t **n = floe_realloc(kept_rk, (nkept_rk + 1) * sizeof *n);
    if (n) {
        kept_rk = n;
        kept_rk[nkept_rk++] = rk;
    }
    pthread_mutex_unlock(&kept_mu);
}

/* The budget wants commit_due after this message: the source holds max_buffered_bytes
 * (the consumer waits for the batch committing), or half of it and no batch is committing
 * (a table may be due for its size). While one commits under the budget, the clock's
 * checks (every 64 messages, every 50 ms) are enough. */
static bool budget_due(srv_kafka *k) {
    int64_t b = atomic_load(&k->buffered);
    return b >= k->max_buffered ||
           (b * 2 >= k->max_buffered && (!k->inflight || atomic_load(&k->inflight->done)));
}

/* Publishes the quarantine files of committed batches left pending (their rename failed
 * after the commit): settle() each table's pending files of the assigned partitions, as
 * the partition's next commit or assignment would, but without waiting for either (a
 * partition that receives nothing more has neither). Consumer thread, while unsettled;
 * again a second later when a table cannot be read or a file still not be published. */
static void resettle(srv_kafka *k, int64_t now) {
    if (!atomic_load(&k->unsettled) || now < k->resettle_ns)
        return;
    atomic_store(&k->unsettled, false);
    kf_part **ps = floe_calloc(k->nparts ? k->nparts : 1, sizeof *ps);
    int64_t *off = floe_calloc(k->nparts ? k->nparts : 1, sizeof *off);
    for (uint32_t ti = 0; ti < k->ntables && ps && off; ti++) {
        size_t n = 0;
        for (size_t i = 0; i < k->nparts; i++)
            if (k->parts[i]->assigned && pt_find(k->parts[i], ti))
                ps[n++] = k->parts[i];
        floe_error err;
        floe_error_clear(&err);
        if (n && table_offsets(k, k->tables[ti].name, ps, n, false, off, NULL, &err) < 0) {
            floe_log(FLOE_LOG_WARN, "kafka %s: %s: publishing the quarantine left pending: "
                     "%s (again in 1 s)", k->name, k->tables[ti].name, err.msg);
            atomic_store(&k->unsettled, true);
        }
    }
    if (!ps || !off)
        atomic_store(&k->unsettled, true);
    k->resettle_ns = now + 1000000000;
    floe_free(ps);
    floe_free(off);
}

static void *kafka_main(void *arg) {
    srv_kafka *k = arg;
    char tn[16];
    snprintf(tn, sizeof tn, "kafka-%.9s", k->name);
    srv_thread_name(tn);
    kf_scratch sc;
    memset(&sc, 0, sizeof sc);
    floe_buf_init(&sc.meta, 0);
    uint64_t seen_gen = 0;
    int64_t last_check = 0, last_marks = 0;
    unsigned taken = 0; /* messages since the clock and the flush requests were read */
    while (!atomic_load(&k->stop)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, 100);
        if (m) {
            if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                floe_error err;
                floe_error_clear(&err);
                if (take_message(k, &sc, m, &err) < 0) {
                    floe_log(FLOE_LOG_ERROR, "kafka %s: %s", k->name, err.msg);
                    /* the message is not taken: consume it again from the table's offset */
                    drain(k);
                    size_t pi;
                    kf_part *p = part_find(k, rd_kafka_topic_name(m->rkt), m->partition, &pi);
                    if (p && p->npts)
                        reseek(k, p->pts[0].tbl);
                    else if (p && k->route_field)
                        reseek(k, 0);
                }
            } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                floe_log(FLOE_LOG_WARN, "kafka %s: %s", k->name, rd_kafka_message_errstr(m));
            }
            rd_kafka_message_destroy(m);
        }
        /* while messages flow, the clock and the flush requests are read every 64 of them
         * (the budget after each, when budget_due) */
        if (m && ++taken < 64 && !budget_due(k))
            continue;
        taken = 0;
        int64_t now = floe_now_ns();
        pthread_mutex_lock(&k->mu);
        uint64_t want = k->flush_gen;
        pthread_mutex_unlock(&k->mu);
        if (want != seen_gen) {
            floe_error err;
            floe_error_clear(&err);
            int rc = commit_due(k, true, &err);
            pthread_mutex_lock(&k->mu);
            k->flush_done = want;
            k->flush_rc = rc;
            snprintf(k->flush_err, sizeof k->flush_err, "%s", err.msg);
            pthread_cond_broadcast(&k->cv);
            pthread_mutex_unlock(&k->mu);
            seen_gen = want;
        } else if (!m || now - last_check > 50000000 || budget_due(k)) {
            commit_due(k, false, NULL);
            resettle(k, now);
            last_check = now;
        }
        /* lag: the high watermarks librdkafka last saw, every second */
        if (now - last_marks >= 1000000000) {
            last_marks = now;
            for (size_t i = 0; i < k->nparts; i++) {
                int64_t lo, hi;
                kf_part *p = k->parts[i];
                if (p->assigned &&
                    rd_kafka_get_watermark_offsets(k->rk, p->topic, p->partition, &lo, &hi) ==
                        RD_KAFKA_RESP_ERR_NO_ERROR && hi >= 0)
                    atomic_store(&p->high, hi);
            }
        }
    }
    /* stopping: commit what is held, then leave the group (the revocation commits
     * nothing more) */
    commit_due(k, true, NULL);
    k->resettle_ns = 0;
    resettle(k, floe_now_ns());
    if (k->sticky)
        sticky_wait(k);
    rd_kafka_consumer_close(k->rk);
    if (k->sticky && !atomic_load(&k->assigned_once))
        floe_log(FLOE_LOG_INFO, "kafka %s: left the group before its first assignment",
                 k->name);
    /* A consumer that ran is closed (it has left the group) but never destroyed: besides
     * the cooperative-sticky case above, librdkafka 2.0.2 can abort while destroying one,
     * when a broker thread failing for the destruction drops another broker's last
     * reference (rd_kafka_broker_destroy_final asserts it runs on that broker's own
     * thread; librdkafka issue 3608, open). Its threads and memory end with the process. */
    k->keep_rk = true;
    pthread_mutex_lock(&k->mu);
    k->flush_done = k->flush_gen;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    unrouted_end(k, &sc, false, NULL);
    floe_buf_free(&sc.meta);
    floe_free(sc.spans);
    return NULL;
}

/* ---- open / close ------------------------------------------------------------------- */

static void kafka_free(srv_kafka *k) {
    if (!k)
        return;
    if (k->inflight) { /* not committed: the thread ended it (kafka_main drains) */
        if (k->inflight->thread)
            pthread_join(k->inflight->thr, NULL);
        k->inflight = NULL; /* batch_reset drops it */
    }
    if (k->rk && k->keep_rk)
        keep_handle(k->rk);
    else if (k->rk)
        rd_kafka_destroy(k->rk);
    for (size_t i = 0; i < k->ntables; i++) {
        batch_reset(k, (uint32_t)i);
        floe_buf_free(&k->tables[i].wbuf);
        floe_free(k->tables[i].lines);
        floe_free(k->tables[i].spare_lines);
        floe_free(k->tables[i].qrecs);
        floe_free(k->tables[i].staged);
        floe_free(k->tables[i].name);
        floe_free(k->tables[i].refused);
    }
    floe_free(k->tables);
    for (size_t i = 0; i < k->nparts; i++) {
        floe_free(k->parts[i]->topic);
        floe_free(k->parts[i]->pts);
        floe_free(k->parts[i]);
    }
    floe_free(k->parts);
    for (int i = 0; i < NCOLS; i++)
        floe_free(k->cols[i]);
    if (k->spool_dir)
        rmdir(k->spool_dir);
    floe_free(k->spool_dir);
    floe_free(k->name);
    floe_free(k->group);
    floe_free(k->table);
    floe_free(k->route_field);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    floe_free(k);
}

static int conf_set(rd_kafka_conf_t *c, const char *src, const char *key, const char *v,
                    floe_error *err) {
    char es[512];
    if (rd_kafka_conf_set(c, key, v, es, sizeof es) != RD_KAFKA_CONF_OK)
        return floe_error_set(err, FLOE_EINVALID, "[source kafka %s]: %s: %s", src, key, es);
    return 0;
}

static int kafka_open(floe_server *s, const floe_server_source_config *src, srv_kafka **out,
                      floe_error *err) {
    int rc = 0;
    rd_kafka_conf_t *conf = NULL;
    rd_kafka_topic_partition_list_t *topics = NULL;
    char *tl = NULL;
    srv_kafka *k = floe_calloc(1, sizeof *k);
    if (!k)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->s = s;
    const char *v;
    k->name = floe_strdup(src->name);
    k->group = floe_strdup((v = src_get(src, "group.id")) ? v : src->name);
    k->table = floe_strdup(src_get(src, "table"));
    if (k->table && strstr(k->table, "{field:") && !(k->route_field = template_field(k->table)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    k->spool_dir = floe_asprintf("%s/kafka-%s", s->wal_dir, src->name);
    if (!k->name || !k->group || !k->table || !k->spool_dir)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    if (group_why(k->group))
        FLOE_FAIL(err, FLOE_EINVALID, "[source kafka %s]: group.id '%s': %s", src->name,
                  k->group, group_why(k->group));
    v = src_get(src, "format");
    k->format = !v || !strcmp(v, "json") ? FMT_JSON : !strcmp(v, "ndjson") ? FMT_NDJSON
                                                                           : FMT_ARRAY;
    for (int i = 0; i < NCOLS; i++)
        if ((v = src_get(src, col_keys[i])) && !(k->cols[i] = floe_strdup(v)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    k->commit_bytes = 0; /* none: committed on the interval (staging bounds the memory) */
    k->commit_interval_ms = 60000;
    k->max_buffered = 256LL << 20;
    k->test_pause_ms = s->cfg.kafka_test_commit_pause_ms;
    k->staged_due_ms = s->cfg.kafka_test_staged_age_ms ? s->cfg.kafka_test_staged_age_ms
                                                       : KF_STAGED_DUE_MS;
    k->staged_drop_ms = s->cfg.kafka_test_staged_age_ms ? 3 * s->cfg.kafka_test_staged_age_ms
                                                        : KF_STAGED_DROP_MS;
    k->test_ahead = s->cfg.kafka_test_ahead_bytes;
    if ((v = src_get(src, "commit_bytes")))
        parse_size(v, &k->commit_bytes);
    if ((v = src_get(src, "commit_interval")))
        parse_ms(v, &k->commit_interval_ms);
    if ((v = src_get(src, "max_buffered_bytes")))
        parse_size(v, &k->max_buffered);
    k->convert_ahead = !(v = src_get(src, "convert_ahead")) || strcmp(v, "false");
    FLOE_CHECK(floe_io_mkdirs(s->cfg.io, k->spool_dir, err));
    spool_dir_clean(k); /* a killed process's batches are gone with it */

    conf = rd_kafka_conf_new();
    FLOE_CHECK(conf_set(conf, src->name, "bootstrap.servers", src_get(src, "bootstrap.servers"),
                        err));
    FLOE_CHECK(conf_set(conf, src->name, "group.id", k->group, err));
    FLOE_CHECK(conf_set(conf, src->name, "enable.auto.commit", "false", err));
    FLOE_CHECK(conf_set(conf, src->name, "enable.auto.offset.store", "false", err));
    FLOE_CHECK(conf_set(conf, src->name, "auto.offset.reset", "earliest", err));
    /* eager roundrobin by default; kafka.partition.assignment.strategy chooses another
     * (both protocols are handled by rebalance_cb; cooperative-sticky with sticky_wait) */
    FLOE_CHECK(conf_set(conf, src->name, "partition.assignment.strategy", "roundrobin", err));
    /* librdkafka's prefetch (its consumer queue): 256 MiB, with no message-count limit
     * below that. A broker thread whose partitions stopped fetching because the queue
     * was full looks at them again only on its next wake-up, up to a second later in
     * librdkafka 2.0.2 (nothing wakes it when the queue drains), so a consumer faster than
     * the prefetch per second waits on it: with 16 MiB the mock's 1,000,000 events took
     * 9 s to take, with 256 MiB 1.2 s (bench/RESULTS.md, Kafka). kafka.queued.* sets
     * others. */
    FLOE_CHECK(conf_set(conf, src->name, "queued.max.messages.kbytes", "262144", err));
    FLOE_CHECK(conf_set(conf, src->name, "queued.min.messages", "1000000", err));
    FLOE_CHECK(conf_set(conf, src->name, "client.id", s->node, err));
    for (size_t i = 0; i < src->n; i++)
        if (!strncmp(src->keys[i], "kafka.", 6)) {
            const char *key = src->keys[i] + 6;
            if (!strcmp(key, "enable.auto.commit") || !strcmp(key, "group.id") ||
                !strcmp(key, "enable.auto.offset.store"))
                FLOE_FAIL(err, FLOE_EINVALID, "[source kafka %s]: kafka.%s is floe's own "
                          "(offsets are committed with the table)", src->name, key);
            FLOE_CHECK(conf_set(conf, src->name, key, src->values[i], err));
            if (!strcmp(key, "partition.assignment.strategy"))
                k->sticky = strstr(src->values[i], "cooperative-sticky") != NULL;
        }
    rd_kafka_conf_set_opaque(conf, k);
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_log_cb(conf, log_cb);
    char es[512];
    k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, es, sizeof es);
    if (!k->rk)
        FLOE_FAIL(err, FLOE_EINVALID, "[source kafka %s]: %s", src->name, es);
    conf = NULL; /* the handle's now */
    rd_kafka_poll_set_consumer(k->rk);
    if (!(tl = floe_strdup(src_get(src, "topics"))))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    topics = rd_kafka_topic_partition_list_new(4);
    for (char *save = NULL, *tok = strtok_r(tl, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save))
        rd_kafka_topic_partition_list_add(topics, tok, RD_KAFKA_PARTITION_UA);
    if (topics->cnt == 0)
        FLOE_FAIL(err, FLOE_EINVALID, "[source kafka %s]: topics: none named", src->name);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(k->rk, topics);
    if (e)
        FLOE_FAIL(err, FLOE_EINVALID, "[source kafka %s]: subscribe: %s", src->name,
                  rd_kafka_err2str(e));
    *out = k;
    k = NULL;
done:
    if (conf)
        rd_kafka_conf_destroy(conf);
    if (topics)
        rd_kafka_topic_partition_list_destroy(topics);
    floe_free(tl);
    kafka_free(k);
    return rc;
}

/* glibc malloc settings of floe_server_tune_malloc_kafka */
#define KF_MMAP_THRESHOLD (32 << 20) /* glibc's largest: blocks up to it come from the heap */
#define KF_TRIM_THRESHOLD (1 << 30)  /* free heap top kept for the next commit */

/* Each commit converts its spool with new shredders, batches and Parquet writers, whose
 * buffers grow from nothing (dictionaries, column chunks, pages) and are freed at the
 * commit's end; librdkafka's threads allocate and free their fetch buffers likewise. With
 * glibc's defaults (and the rewrite's thresholds, floe_rewrite_tune_malloc: blocks of
 * 2 MiB and more mapped, unmapped when freed) that memory goes back to the kernel and
 * every commit faults it in again, page by page: on the 2-core VM of bench/kafka ~80,000
 * page faults per 300,000 events and ~25% of the server's CPU. Kept resident instead
 * (one arena per core, so the next commit's new threads take the arenas the last ones
 * filled; blocks up to 32 MiB from the heap; up to 1 GiB of free heap top not trimmed),
 * the next commit reuses it: ~30% fewer faults and ~20% less CPU per event in the same
 * runs (bench/RESULTS.md, Kafka). The price: the resident set stays near the largest
 * commit's peak, and the process's rewrites (in-process maintenance) run with these
 * thresholds too. */
bool floe_server_tune_malloc_kafka(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX) && defined(M_MMAP_THRESHOLD) && \
    defined(M_TRIM_THRESHOLD)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return mallopt(M_ARENA_MAX, n < 1 ? 1 : n > 64 ? 64 : (int)n) == 1 &&
           mallopt(M_MMAP_THRESHOLD, KF_MMAP_THRESHOLD) == 1 &&
           mallopt(M_TRIM_THRESHOLD, KF_TRIM_THRESHOLD) == 1;
#else
    return false;
#endif
}

int srv_kafka_start(floe_server *s, floe_error *err) {
    if (s->cfg.nsources == 0)
        return 0;
    srv_kafka_stop(s); /* what an earlier, failed try started */
    /* librdkafka first: every other function here runs on a source this started */
    if (!floe_lazy_kafka(err))
        return err ? err->code : FLOE_EUNSUPPORTED;
    if (!(s->kafka = floe_calloc(s->cfg.nsources, sizeof *s->kafka)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->cfg.nsources; i++) {
        srv_kafka *k = NULL;
        FLOE_FORWARD_IF_ERROR(kafka_open(s, &s->cfg.sources[i], &k, err));
        s->kafka[s->nkafka++] = k;
        if (pthread_create(&k->thr, NULL, kafka_main, k) != 0)
            return floe_error_set(err, FLOE_EINTERNAL, "kafka %s: cannot start its thread",
                                  k->name);
        k->started = true;
    }
    return 0;
}

void srv_kafka_stop(floe_server *s) {
    for (size_t i = 0; i < s->nkafka; i++) {
        srv_kafka *k = s->kafka[i];
        atomic_store(&k->stop, true);
        if (k->started)
            pthread_join(k->thr, NULL);
        kafka_free(k);
    }
    floe_free(s->kafka);
    s->kafka = NULL;
    s->nkafka = 0;
}

int srv_kafka_flush(floe_server *s, floe_error *err) {
    int rc = 0;
    for (size_t i = 0; i < s->nkafka && rc == 0; i++) {
        srv_kafka *k = s->kafka[i];
        pthread_mutex_lock(&k->mu);
        uint64_t gen = ++k->flush_gen;
        while (k->flush_done < gen && !atomic_load(&k->stop))
            pthread_cond_wait(&k->cv, &k->mu);
        if (k->flush_done >= gen && k->flush_rc < 0)
            rc = floe_error_set(err, k->flush_rc, "kafka %s: %s", k->name, k->flush_err);
        pthread_mutex_unlock(&k->mu);
    }
    return rc;
}

void srv_kafka_metrics(floe_server *s, floe_buf *b) {
    if (s->nkafka == 0)
        return;
    static const struct {
        const char *name, *type, *help;
        size_t off;
    } ctr[] = {
        {"floe_kafka_consumed_total", "counter", "Kafka messages taken",
         offsetof(srv_kafka, consumed)},
        {"floe_kafka_committed_total", "counter", "rows committed from Kafka messages",
         offsetof(srv_kafka, committed_rows)},
        {"floe_kafka_quarantined_total", "counter", "Kafka records quarantined",
         offsetof(srv_kafka, quarantined)},
        {"floe_kafka_commits_total", "counter", "table commits carrying Kafka offsets",
         offsetof(srv_kafka, commits)},
        {"floe_kafka_commit_failures_total", "counter", "commits that failed",
         offsetof(srv_kafka, commit_failures)},
        {"floe_kafka_fenced_total", "counter",
         "commits refused: another consumer had committed the partition",
         offsetof(srv_kafka, fenced)},
        {"floe_kafka_group_refused_total", "counter",
         "commits and assignments refused: the table registers a consumer group whose "
         "offset properties can be this group's (one id is the other followed by '.')",
         offsetof(srv_kafka, refused)},
        {"floe_kafka_rebalances_total", "counter", "assignments and revocations",
         offsetof(srv_kafka, rebalances)},
        {"floe_kafka_skipped_total", "counter",
         "messages delivered before the partition's position (after a seek), not taken",
         offsetof(srv_kafka, skipped)},
        {"floe_kafka_revoked_dropped_total", "counter",
         "batches dropped at a revocation because their commit failed",
         offsetof(srv_kafka, revoked_dropped)},
        {"floe_kafka_pauses_total", "counter",
         "partitions paused (tables failing to commit hold half of max_buffered_bytes)",
         offsetof(srv_kafka, pauses)},
        {"floe_kafka_commits_pipelined_total", "counter",
         "commits run on their own thread while the consumer took the next batch",
         offsetof(srv_kafka, pipelined)},
        {"floe_kafka_consumed_while_committing_total", "counter",
         "Kafka messages taken while a batch committed on its own thread",
         offsetof(srv_kafka, overlapped)},
        {"floe_kafka_commits_converted_ahead_total", "counter",
         "commits whose batch was converted while it was taken",
         offsetof(srv_kafka, ahead)},
        {"floe_kafka_staged_segments_total", "counter",
         "segments of a table's interval converted (their memory freed) before its commit",
         offsetof(srv_kafka, staged_segments)},
        {"floe_kafka_commit_seconds_sum", "counter", "time spent committing",
         offsetof(srv_kafka, commit_us)},
    };
    for (size_t c = 0; c < sizeof ctr / sizeof *ctr; c++) {
        floe_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", ctr[c].name, ctr[c].help,
                        ctr[c].name, ctr[c].type);
        for (size_t i = 0; i < s->nkafka; i++) {
            const _Atomic uint64_t *v =
                (const _Atomic uint64_t *)((const char *)s->kafka[i] + ctr[c].off);
            uint64_t x = atomic_load(v);
            if (ctr[c].off == offsetof(srv_kafka, commit_us))
                floe_buf_printf(b, "%s{source=\"%s\"} %.6f\n", ctr[c].name, s->kafka[i]->name,
                                (double)x / 1e6);
            else
                floe_buf_printf(b, "%s{source=\"%s\"} %llu\n", ctr[c].name, s->kafka[i]->name,
                                (unsigned long long)x);
        }
    }
    floe_buf_printf(b, "# HELP floe_kafka_commit_seconds_count commits timed\n"
                       "# TYPE floe_kafka_commit_seconds_count counter\n");
    for (size_t i = 0; i < s->nkafka; i++)
        floe_buf_printf(b, "floe_kafka_commit_seconds_count{source=\"%s\"} %llu\n",
                        s->kafka[i]->name,
                        (unsigned long long)atomic_load(&s->kafka[i]->commits));
    floe_buf_printf(b, "# HELP floe_kafka_buffered_bytes spooled, not yet committed\n"
                       "# TYPE floe_kafka_buffered_bytes gauge\n");
    for (size_t i = 0; i < s->nkafka; i++)
        floe_buf_printf(b, "floe_kafka_buffered_bytes{source=\"%s\"} %lld\n",
                        s->kafka[i]->name, (long long)atomic_load(&s->kafka[i]->buffered));
    floe_buf_printf(b, "# HELP floe_kafka_buffered_peak_bytes the most spooled at once\n"
                       "# TYPE floe_kafka_buffered_peak_bytes gauge\n");
    for (size_t i = 0; i < s->nkafka; i++)
        floe_buf_printf(b, "floe_kafka_buffered_peak_bytes{source=\"%s\"} %lld\n",
                        s->kafka[i]->name,
                        (long long)atomic_load(&s->kafka[i]->buffered_peak));
    floe_buf_printf(b, "# HELP floe_kafka_staged_bytes input bytes of staged segments not "
                       "yet committed\n# TYPE floe_kafka_staged_bytes gauge\n");
    for (size_t i = 0; i < s->nkafka; i++)
        floe_buf_printf(b, "floe_kafka_staged_bytes{source=\"%s\"} %lld\n",
                        s->kafka[i]->name, (long long)atomic_load(&s->kafka[i]->staged_bytes));
    floe_buf_printf(b, "# HELP floe_kafka_paused_partitions partitions whose fetching is "
                       "paused\n# TYPE floe_kafka_paused_partitions gauge\n");
    for (size_t i = 0; i < s->nkafka; i++)
        floe_buf_printf(b, "floe_kafka_paused_partitions{source=\"%s\"} %lld\n",
                        s->kafka[i]->name, (long long)atomic_load(&s->kafka[i]->paused_parts));
    floe_buf_printf(b, "# HELP floe_kafka_lag messages of the partition not yet committed to "
                       "the table (high watermark - the table's offset)\n"
                       "# TYPE floe_kafka_lag gauge\n");
    for (size_t i = 0; i < s->nkafka; i++) {
        srv_kafka *k = s->kafka[i];
        pthread_mutex_lock(&k->mu);
        for (size_t j = 0; j < k->nparts; j++) {
            const kf_part *p = k->parts[j];
            int64_t hi = atomic_load(&p->high), c = atomic_load(&p->committed);
            if (!p->assigned || hi < 0)
                continue;
            floe_buf_printf(b, "floe_kafka_lag{source=\"%s\",topic=\"%s\",partition=\"%d\"} "
                            "%lld\n", k->name, p->topic, (int)p->partition,
                            (long long)(hi - (c > 0 ? c : 0)));
        }
        pthread_mutex_unlock(&k->mu);
    }
}
