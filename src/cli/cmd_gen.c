/*
 * cmd_gen.c - `floe gen`: write deterministic synthetic events as NDJSON.
 *
 * Output goes to stdout, to one file (-o), or spread over many small files per event type
 * (--out-dir DIR --files-per-partition N -> DIR/event_type=<type>/part-NNNNN.ndjson).
 * For the spread layout every partition's events are cut into N contiguous runs, one per
 * file, so each file covers a time range as a landing file would. That needs the number
 * of events per partition up front: a first pass runs the generator without writing
 * (generation is cheap, and the second pass reproduces it exactly).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli.h"
#include "floe/gen.h"

#define FLUSH_AT (1u << 20)       /* single output: write in 1 MiB pieces */
#define PART_FLUSH_AT (64u << 10) /* spread output: per-partition buffer */

static void gen_help(FILE *out) {
    fprintf(out,
            "usage: floe gen [OPTIONS]\n"
            "\n"
            "Writes deterministic synthetic clickstream events as NDJSON. The same options\n"
            "always give the same bytes.\n"
            "\n"
            "  --seed N                 random seed (default 1)\n"
            "  --count N                number of events (default 1000)\n"
            "  --bytes SIZE             stop after the line that reaches SIZE bytes (e.g. 1GB)\n"
            "  --start TIME             nominal time of the first event, ISO 8601\n"
            "                           (default 2026-10-06T00:00:00Z)\n"
            "  --rate R                 events per second of event time (default 1000)\n"
            "  --jitter-ms MS           how late events may arrive (default 2000)\n"
            "  --partitions K           number of event types used, 1..%d (default 8)\n"
            "  -o, --output FILE        write to FILE instead of stdout\n"
            "  --out-dir DIR            write DIR/event_type=<type>/part-NNNNN.ndjson\n"
            "  --files-per-partition N  files per event type with --out-dir (default 1)\n"
            "  --schema-out FILE        write the events' Iceberg schema JSON ('-' = stdout);\n"
            "                           without --count/--bytes nothing else is generated\n"
            "  --malformed-rate R       fraction 0..1 of malformed lines (bad JSON, wrong\n"
            "                           types, missing required fields)\n"
            "  --malformed-lines FILE   list the malformed lines: a line number per line, or\n"
            "                           'relative/path:line' with --out-dir\n"
            "  --json                   print the summary as JSON\n"
            "  -h, --help               this help\n"
            "\n"
            "A summary (events, bytes, malformed, files) goes to stdout when the data goes\n"
            "to files; with the data on stdout only --json prints it, to stderr.\n",
            FLOE_GEN_MAX_PARTITIONS);
}

typedef struct gen_args {
    floe_gen_opts opts;
    int64_t count;      /* -1: not given */
    int64_t bytes;      /* -1: not given */
    const char *output;
    const char *out_dir;
    int64_t files_per_partition;
    const char *schema_out;
    const char *malformed_lines;
    bool json;
} gen_args;

typedef struct gen_summary {
    int64_t events;
    int64_t bytes;
    int64_t malformed;
    int64_t files;
} gen_summary;

static int write_all(FILE *f, const void *p, size_t n, const char *path, floe_error *err) {
    if (n && fwrite(p, 1, n, f) != n)
        return floe_error_errno(err, errno, "gen: write %s", path);
    return 0;
}

static int write_schema(const char *path, floe_error *err) {
    const char *json = floe_gen_schema_json();
    if (!strcmp(path, "-"))
        return write_all(stdout, json, strlen(json), "stdout", err);
    FILE *f = fopen(path, "wb");
    if (!f)
        return floe_error_errno(err, errno, "gen: open %s", path);
    int rc = write_all(f, json, strlen(json), path, err);
    if (fclose(f) != 0 && rc == 0)
        rc = floe_error_errno(err, errno, "gen: close %s", path);
    return rc;
}

/* True once the run has produced what was asked for. */
static bool gen_done(const gen_args *a, int64_t events, int64_t bytes) {
    if (a->bytes >= 0)
        return bytes >= a->bytes;
    return events >= a->count;
}

/* ---------------------------------------------------------------------------------------
 * One output stream (stdout or -o FILE).
 * ------------------------------------------------------------------------------------- */
static int gen_single(const gen_args *a, FILE *lines, gen_summary *sum, floe_error *err) {
    int rc = 0;
    floe_gen *g = NULL;
    floe_buf buf;
    floe_buf_init(&buf, 0);
    FILE *f = stdout;
    const char *path = a->output ? a->output : "stdout";
    if (a->output && !(f = fopen(a->output, "wb"))) {
        rc = floe_error_errno(err, errno, "gen: open %s", a->output);
        goto done;
    }
    FLOE_CHECK(floe_gen_new(&a->opts, &g, err));
    gen_summary s = {0, 0, 0, a->output ? 1 : 0};
    while (!gen_done(a, s.events, s.bytes)) {
        size_t before = buf.len;
        floe_gen_event_info info;
        FLOE_CHECK(floe_gen_next(g, &buf, &info, err));
        s.events++;
        s.bytes += (int64_t)(buf.len - before);
        if (info.malformed != FLOE_GEN_OK) {
            s.malformed++;
            if (lines)
                fprintf(lines, "%" PRId64 "\n", s.events);
        }
        if (buf.len >= FLUSH_AT) {
            FLOE_CHECK(write_all(f, buf.data, buf.len, path, err));
            floe_buf_reset(&buf);
        }
    }
    FLOE_CHECK(write_all(f, buf.data, buf.len, path, err));
    if (fflush(f) != 0) {
        rc = floe_error_errno(err, errno, "gen: write %s", path);
        goto done;
    }
    *sum = s;
done:
    if (f && f != stdout && fclose(f) != 0 && rc == 0)
        rc = floe_error_errno(err, errno, "gen: close %s", path);
    floe_gen_free(g);
    floe_buf_free(&buf);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Spread output: DIR/event_type=<type>/part-NNNNN.ndjson.
 * ------------------------------------------------------------------------------------- */
typedef struct part_out {
    floe_buf buf;
    int64_t total;    /* events of this partition in the whole run (first pass) */
    int64_t seen;     /* events written so far */
    int64_t file;     /* index of the file being filled, -1 before the first */
    int64_t line;     /* lines in the current file */
    char *dir;        /* DIR/event_type=<type> */
} part_out;

static int make_dir(const char *path, floe_error *err) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return floe_error_errno(err, errno, "gen: mkdir %s", path);
    return 0;
}

static char *part_path(const part_out *po, int64_t file) {
    return floe_asprintf("%s/part-%05" PRId64 ".ndjson", po->dir, file);
}

/* Append the partition's buffer to its current file. `create` truncates first. */
static int part_flush(part_out *po, bool create, floe_error *err) {
    int rc = 0;
    char *path = part_path(po, po->file);
    FILE *f = NULL;
    if (!path)
        FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
    f = fopen(path, create ? "wb" : "ab");
    if (!f) {
        rc = floe_error_errno(err, errno, "gen: open %s", path);
        goto done;
    }
    FLOE_CHECK(write_all(f, po->buf.data, po->buf.len, path, err));
    floe_buf_reset(&po->buf);
done:
    if (f && fclose(f) != 0 && rc == 0)
        rc = floe_error_errno(err, errno, "gen: close %s", path);
    floe_free(path);
    return rc;
}

static int gen_spread(const gen_args *a, FILE *lines, gen_summary *sum, floe_error *err) {
    int rc = 0;
    floe_gen *g = NULL;
    part_out *parts = NULL;
    size_t k = (size_t)a->opts.partitions;
    floe_buf scratch;
    floe_buf_init(&scratch, 0);
    gen_summary s = {0, 0, 0, 0};

    parts = floe_calloc(k, sizeof *parts);
    if (!parts)
        FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
    for (size_t i = 0; i < k; i++)
        floe_buf_init(&parts[i].buf, 0);

    /* Pass 1: how many events, and how many per partition. */
    FLOE_CHECK(floe_gen_new(&a->opts, &g, err));
    int64_t events = 0, bytes = 0;
    while (!gen_done(a, events, bytes)) {
        floe_gen_event_info info;
        floe_buf_reset(&scratch);
        FLOE_CHECK(floe_gen_next(g, &scratch, &info, err));
        events++;
        bytes += (int64_t)scratch.len;
        parts[info.partition].total++;
    }
    floe_gen_free(g);
    g = NULL;

    FLOE_CHECK(make_dir(a->out_dir, err));
    FLOE_CHECK(floe_gen_new(&a->opts, &g, err));
    for (size_t i = 0; i < k; i++) {
        parts[i].file = -1;
        parts[i].dir =
            floe_asprintf("%s/event_type=%s", a->out_dir, floe_gen_partition_name(g, (int32_t)i));
        if (!parts[i].dir)
            FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
        if (parts[i].total > 0)
            FLOE_CHECK(make_dir(parts[i].dir, err));
    }

    /* Pass 2: the same events again, now written. */
    int64_t nfiles = a->files_per_partition;
    for (int64_t e = 0; e < events; e++) {
        floe_gen_event_info info;
        floe_buf_reset(&scratch);
        FLOE_CHECK(floe_gen_next(g, &scratch, &info, err));
        part_out *po = &parts[info.partition];
        /* j-th of total events goes to file floor(j * nfiles / total): contiguous runs. */
        int64_t file = (int64_t)((unsigned __int128)po->seen * (unsigned __int128)nfiles /
                                 (unsigned __int128)po->total);
        if (file != po->file) {
            if (po->file >= 0)
                FLOE_CHECK(part_flush(po, false, err));
            po->file = file;
            po->line = 0;
            s.files++;
            /* A new file starts empty even if a stale one exists from an earlier run. */
            FLOE_CHECK(part_flush(po, true, err));
        }
        if (floe_buf_append(&po->buf, scratch.data, scratch.len) < 0)
            FLOE_FAIL(err, FLOE_ENOMEM, "gen: out of memory");
        po->seen++;
        po->line++;
        s.events++;
        s.bytes += (int64_t)scratch.len;
        if (info.malformed != FLOE_GEN_OK) {
            s.malformed++;
            if (lines)
                fprintf(lines, "event_type=%s/part-%05" PRId64 ".ndjson:%" PRId64 "\n",
                        floe_gen_partition_name(g, info.partition), po->file, po->line);
        }
        if (po->buf.len >= PART_FLUSH_AT)
            FLOE_CHECK(part_flush(po, false, err));
    }
    for (size_t i = 0; i < k; i++)
        if (parts[i].file >= 0 && parts[i].buf.len)
            FLOE_CHECK(part_flush(&parts[i], false, err));
    *sum = s;
done:
    if (parts) {
        for (size_t i = 0; i < k; i++) {
            floe_buf_free(&parts[i].buf);
            floe_free(parts[i].dir);
        }
        floe_free(parts);
    }
    floe_buf_free(&scratch);
    floe_gen_free(g);
    return rc;
}

static bool parse_double(const char *s, double *out) {
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

int floe_cmd_gen(int argc, char **argv) {
    gen_args a;
    memset(&a, 0, sizeof a);
    floe_gen_opts_default(&a.opts);
    a.count = -1;
    a.bytes = -1;
    a.files_per_partition = -1;
    floe_error err;
    floe_error_clear(&err);

    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t iv;
        double dv;
#define NEED_VAL()                                                                     \
    do {                                                                               \
        if (!val)                                                                      \
            return cli_usage("gen", "%s needs a value", opt);                          \
        i++;                                                                           \
    } while (0)
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            gen_help(stdout);
            return FLOE_EXIT_OK;
        } else if (!strcmp(opt, "--json")) {
            a.json = true;
        } else if (!strcmp(opt, "--seed")) {
            NEED_VAL();
            char *end;
            errno = 0;
            unsigned long long sv = strtoull(val, &end, 0);
            if (!*val || *end || errno || *val == '-')
                return cli_usage("gen", "bad --seed '%s'", val);
            a.opts.seed = sv;
        } else if (!strcmp(opt, "--count")) {
            NEED_VAL();
            if (!cli_parse_int(val, &iv))
                return cli_usage("gen", "bad --count '%s'", val);
            a.count = iv;
        } else if (!strcmp(opt, "--bytes")) {
            NEED_VAL();
            if (!floe_parse_size(val, &iv))
                return cli_usage("gen", "bad --bytes '%s'", val);
            a.bytes = iv;
        } else if (!strcmp(opt, "--start")) {
            NEED_VAL();
            if (floe_gen_parse_time(val, &a.opts.start_us, &err) < 0)
                return cli_usage("gen", "%s", err.msg);
        } else if (!strcmp(opt, "--rate")) {
            NEED_VAL();
            if (!parse_double(val, &dv) || !(dv >= 1e-3 && dv <= 1e9))
                return cli_usage("gen", "bad --rate '%s' (0.001..1e9)", val);
            a.opts.rate = dv;
        } else if (!strcmp(opt, "--jitter-ms")) {
            NEED_VAL();
            if (!cli_parse_int(val, &iv) || iv > 86400000)
                return cli_usage("gen", "bad --jitter-ms '%s' (0..86400000)", val);
            a.opts.jitter_us = iv * 1000;
        } else if (!strcmp(opt, "--partitions")) {
            NEED_VAL();
            if (!cli_parse_int(val, &iv) || iv < 1 || iv > FLOE_GEN_MAX_PARTITIONS)
                return cli_usage("gen", "bad --partitions '%s' (1..%d)", val,
                                 FLOE_GEN_MAX_PARTITIONS);
            a.opts.partitions = (int32_t)iv;
        } else if (!strcmp(opt, "-o") || !strcmp(opt, "--output")) {
            NEED_VAL();
            a.output = val;
        } else if (!strcmp(opt, "--out-dir")) {
            NEED_VAL();
            a.out_dir = val;
        } else if (!strcmp(opt, "--files-per-partition")) {
            NEED_VAL();
            if (!cli_parse_int(val, &iv) || iv < 1 || iv > 100000)
                return cli_usage("gen", "bad --files-per-partition '%s' (1..100000)", val);
            a.files_per_partition = iv;
        } else if (!strcmp(opt, "--schema-out")) {
            NEED_VAL();
            a.schema_out = val;
        } else if (!strcmp(opt, "--malformed-rate")) {
            NEED_VAL();
            if (!parse_double(val, &dv) || !(dv >= 0 && dv <= 1))
                return cli_usage("gen", "bad --malformed-rate '%s' (0..1)", val);
            a.opts.malformed_rate = dv;
        } else if (!strcmp(opt, "--malformed-lines")) {
            NEED_VAL();
            a.malformed_lines = val;
        } else {
            return cli_usage("gen", "unknown option '%s'", opt);
        }
#undef NEED_VAL
    }
    if (a.count >= 0 && a.bytes >= 0)
        return cli_usage("gen", "give --count or --bytes, not both");
    if (a.output && a.out_dir)
        return cli_usage("gen", "give -o or --out-dir, not both");
    if (a.files_per_partition >= 0 && !a.out_dir)
        return cli_usage("gen", "--files-per-partition needs --out-dir");
    if (a.files_per_partition < 0)
        a.files_per_partition = 1;

    if (a.schema_out) {
        if (write_schema(a.schema_out, &err) < 0)
            return cli_fail(&err);
        if (a.count < 0 && a.bytes < 0)
            return FLOE_EXIT_OK;
    }
    if (a.count < 0 && a.bytes < 0)
        a.count = 1000;
    if (a.schema_out && !strcmp(a.schema_out, "-") && !a.output && !a.out_dir)
        return cli_usage("gen", "--schema-out - and events cannot both go to stdout");

    FILE *lines = NULL;
    if (a.malformed_lines && !(lines = fopen(a.malformed_lines, "w"))) {
        floe_error_errno(&err, errno, "gen: open %s", a.malformed_lines);
        return cli_fail(&err);
    }
    gen_summary sum = {0, 0, 0, 0};
    int rc = a.out_dir ? gen_spread(&a, lines, &sum, &err) : gen_single(&a, lines, &sum, &err);
    if (lines && fclose(lines) != 0 && rc == 0)
        rc = floe_error_errno(&err, errno, "gen: close %s", a.malformed_lines);
    if (rc < 0)
        return cli_fail(&err);

    FILE *out = (a.output || a.out_dir) ? stdout : stderr;
    if (a.json)
        fprintf(out,
                "{\"events\":%" PRId64 ",\"bytes\":%" PRId64 ",\"malformed\":%" PRId64
                ",\"files\":%" PRId64 "}\n",
                sum.events, sum.bytes, sum.malformed, sum.files);
    else if (out == stdout)
        fprintf(out, "gen: %" PRId64 " events, %" PRId64 " bytes, %" PRId64
                     " malformed, %" PRId64 " files\n",
                sum.events, sum.bytes, sum.malformed, sum.files);
    return FLOE_EXIT_OK;
}
