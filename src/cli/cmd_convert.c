/*
 * cmd_convert.c - `floe convert`: NDJSON files to Parquet files.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "floe/convert.h"
#include "floe/io.h"
#include "floe/quarantine.h"

static const char usage_text[] =
    "usage: floe convert --schema SCHEMA.json [OPTIONS] INPUT... -o DIR\n"
    "\n"
    "Convert NDJSON events (plain, gzip or zstd; '-' for standard input) into Parquet\n"
    "files checked against an Iceberg schema. Rejected records go to the quarantine with\n"
    "their file, line, byte offset and reason; the rest is still converted. When every\n"
    "record is rejected no file is written and convert fails (exit 1) naming the\n"
    "quarantine; input without records writes nothing (exit 0).\n"
    "\n"
    "options:\n"
    "  -s, --schema FILE          Iceberg schema JSON (or a table metadata file)\n"
    "  -o, --output DIR           output folder (files DIR/part-NNNNN.parquet); it must be\n"
    "                             empty or not exist\n"
    "      --overwrite            first delete what an earlier convert wrote into DIR (its\n"
    "                             PREFIX-NNNNN.parquet files and default quarantine; other\n"
    "                             files are kept); refused (exit 2) when DIR holds other\n"
    "                             Parquet files (another prefix's, another writer's)\n"
    "  -c, --compression CODEC    snappy (default), zstd, gzip, lz4_raw, brotli, none\n"
    "      --compression-level N  codec level (zstd 1-22, gzip 1-9, brotli 0-11)\n"
    "      --row-group-size SIZE  target row group size (default 128MB)\n"
    "      --page-size SIZE       target data page size (default 1MB)\n"
    "      --target-file-size SIZE  roll to a new file at this size (default: one file)\n"
    "  -j, --threads N            threads (default and 0: the number of cores; at\n"
    "                             most 64)\n"
    "      --quarantine FILE      where rejected records go\n"
    "                             (default DIR/_quarantine/quarantine.ndjson)\n"
    "      --strict               fail on the first rejected record, leave nothing\n"
    "      --unknown-fields MODE  reject (default) or ignore keys not in the schema\n"
    "      --max-record-size SIZE longest record accepted (default 1MB)\n"
    "      --prefix NAME          output file name prefix (default part)\n"
    "      --variant-shredding SPEC  write these paths inside variant columns shredded,\n"
    "                             e.g. 'payload.user.country:string,payload.n:long'\n"
    "                             (types boolean, int, long, double, string), or\n"
    "                             'auto': each file chooses the fields present in at\n"
    "                             least half its first 10,000 rows with one type\n"
    "  -p, --partition SPEC       write Hive-style partition folders, e.g.\n"
    "                             'event_type, day(ts)' or 'bucket(16, user_id)'\n"
    "      --max-open-files N     partitioned: files open at once (default 64)\n"
    "      --json                 print the summary as JSON\n"
    "  -q, --quiet                no progress line (drawn on standard error only when it\n"
    "                             is a terminal: bytes read of the total, rate, time left)\n"
    "  -h, --help                 this help\n";

/* "out//" and "out/" name the folder "out": file names are joined with one '/'. */
static char *trim_trailing_slashes(const char *dir) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/' && !(n >= 3 && dir[n - 2] == '/' && dir[n - 3] == ':'))
        n--;
    return floe_strndup(dir, n);
}

/* A file an earlier convert into dir wrote: PREFIX-NNNNN.parquet at the top or in partition
 * folders (name=value/...), or the default quarantine. */
static bool convert_output(const char *rel, const char *prefix) {
    if (!strcmp(rel, "_quarantine/quarantine.ndjson"))
        return true;
    const char *base = strrchr(rel, '/');
    for (const char *seg = rel; seg < (base ? base : rel); seg = strchr(seg, '/') + 1) {
        const char *end = strchr(seg, '/');
        const char *eq = memchr(seg, '=', (size_t)(end - seg));
        if (!eq || eq == seg)
            return false;
    }
    base = base ? base + 1 : rel;
    size_t np = strlen(prefix);
    if (strncmp(base, prefix, np) || base[np] != '-')
        return false;
    const char *d = base + np + 1;
    size_t nd = strspn(d, "0123456789");
    return nd >= 5 && !strcmp(d + nd, ".parquet");
}

typedef struct out_listing {
    const char *dir;
    const char *prefix;
    char **own;
    size_t nown, cap;
    size_t nother;
    char *example;
    char *foreign; /* a Parquet file not named as a convert with this prefix names them */
    bool oom;
} out_listing;

/* A Parquet file by its name: .parquet or .parq, in any case. */
static bool parquet_name(const char *rel) {
    const char *dot = strrchr(rel, '.');
    return dot && (!strcasecmp(dot, ".parquet") || !strcasecmp(dot, ".parq"));
}

static int out_entry(void *ctx, const floe_io_entry *e) {
    out_listing *l = ctx;
    size_t nd = strlen(l->dir);
    const char *rel = e->uri;
    if (!strncmp(rel, l->dir, nd) && rel[nd] == '/')
        rel += nd + 1;
    if (!l->example && !(l->example = floe_strdup(e->uri)))
        return l->oom = true;
    if (!convert_output(rel, l->prefix)) {
        l->nother++;
        if (!l->foreign && parquet_name(rel) && !(l->foreign = floe_strdup(e->uri)))
            return l->oom = true;
        return 0;
    }
    if (l->nown == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **p = floe_realloc(l->own, cap * sizeof *p);
        if (!p)
            return l->oom = true;
        l->own = p;
        l->cap = cap;
    }
    if (!(l->own[l->nown] = floe_strdup(e->uri)))
        return l->oom = true;
    l->nown++;
    return 0;
}

/* The output folder holds one run's files: a folder with files in it is refused, or with
 * --overwrite cleared of what a convert with this prefix writes there (other files stay).
 * A Parquet file it did not write under this prefix (another prefix's run, another
 * writer's file) is refused with --overwrite too, *foreign set (a usage error): the new
 * run would mix with it, and deleting it is not convert's to do. */
static int prepare_output(const floe_convert_options *o, bool overwrite, bool *foreign,
                          floe_error *err) {
    out_listing l = {.dir = o->out_dir, .prefix = o->file_prefix ? o->file_prefix : "part"};
    int rc = floe_io_list(cli_io(), o->out_dir, out_entry, &l, err);
    if (rc == 0 && l.oom)
        rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
    if (rc == 0 && l.example && !overwrite)
        rc = floe_error_set(err, FLOE_EEXISTS,
                            "convert: output folder %s is not empty (%zu file%s, e.g. %s); "
                            "give an empty folder, or --overwrite to delete what an earlier "
                            "convert wrote there",
                            o->out_dir, l.nown + l.nother, l.nown + l.nother == 1 ? "" : "s",
                            l.example);
    if (rc == 0 && overwrite && l.foreign) {
        *foreign = true;
        rc = floe_error_set(err, FLOE_EEXISTS,
                            "convert: output folder %s holds Parquet that a convert with "
                            "prefix %s did not write (%s): --overwrite deletes only that "
                            "prefix's files, and this run would mix with it; give another "
                            "folder", o->out_dir, l.prefix, l.foreign);
    }
    if (rc == 0 && overwrite && l.nown)
        rc = floe_io_delete_many(cli_io(), (const char *const *)l.own, l.nown, err);
    for (size_t i = 0; i < l.nown; i++)
        floe_free(l.own[i]);
    floe_free(l.own);
    floe_free(l.example);
    floe_free(l.foreign);
    return rc;
}

typedef struct convert_args {
    floe_convert_options o;
    const char *schema_path, *partition_text;
    bool json, overwrite, quiet;
} convert_args;

#define ARGS_OK (-1)

/* The command line into a (whose options the caller has initialised): ARGS_OK, or the exit
 * code when the command ends here (--help, a usage error). */
static int parse_args(int argc, char **argv, convert_args *a) {
    enum { O_LEVEL = 256, O_RG, O_PAGE, O_TARGET, O_STRICT, O_UNKNOWN, O_MAXREC, O_PREFIX,
           O_JSON, O_MAXOPEN, O_OVERWRITE, O_QUARANTINE, O_SHRED };
    static const struct option longopts[] = {
        {"schema", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"compression", required_argument, NULL, 'c'},
        {"compression-level", required_argument, NULL, O_LEVEL},
        {"row-group-size", required_argument, NULL, O_RG},
        {"page-size", required_argument, NULL, O_PAGE},
        {"target-file-size", required_argument, NULL, O_TARGET},
        {"threads", required_argument, NULL, 'j'},
        {"quarantine", required_argument, NULL, O_QUARANTINE},
        {"strict", no_argument, NULL, O_STRICT},
        {"unknown-fields", required_argument, NULL, O_UNKNOWN},
        {"max-record-size", required_argument, NULL, O_MAXREC},
        {"prefix", required_argument, NULL, O_PREFIX},
        {"partition", required_argument, NULL, 'p'},
        {"max-open-files", required_argument, NULL, O_MAXOPEN},
        {"json", no_argument, NULL, O_JSON},
        {"overwrite", no_argument, NULL, O_OVERWRITE},
        {"variant-shredding", required_argument, NULL, O_SHRED},
        {"quiet", no_argument, NULL, 'q'}, /* -q is --quiet in every command */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    floe_convert_options *o = &a->o;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = ncpu > 0 ? (int)ncpu : 1;
    int64_t v;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":s:o:c:j:qp:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            a->schema_path = optarg;
            break;
        case 'o':
            o->out_dir = optarg;
            break;
        case 'c':
            if (floe_codec_from_name(optarg, &o->write.codec) < 0)
                return cli_usage("convert", "unknown compression '%s'", optarg);
            if (o->write.codec == FLOE_CODEC_LZO || o->write.codec == FLOE_CODEC_LZ4)
                return cli_usage("convert",
                                 "%s can be read but not written (use snappy, zstd, gzip, "
                                 "lz4_raw, brotli or none)",
                                 optarg);
            break;
        case O_LEVEL:
            if (!cli_parse_int(optarg, &v) || v > 22)
                return cli_usage("convert", "bad --compression-level '%s'", optarg);
            o->write.codec_level = (int)v;
            break;
        case O_RG:
            if (!floe_parse_size(optarg, &v) || v < 1024)
                return cli_usage("convert", "bad --row-group-size '%s'", optarg);
            o->write.row_group_size = (size_t)v;
            break;
        case O_PAGE:
            if (!floe_parse_size(optarg, &v) || v < 64)
                return cli_usage("convert", "bad --page-size '%s'", optarg);
            o->write.page_size = (size_t)v;
            break;
        case O_TARGET:
            if (!floe_parse_size(optarg, &v) || v < 1024)
                return cli_usage("convert", "bad --target-file-size '%s'", optarg);
            o->write.target_file_size = v;
            break;
        case 'j':
            if (!cli_parse_threads(optarg, 64, &o->threads))
                return cli_usage("convert", "bad --threads '%s' (0 to 64; 0 = all cores)",
                                 optarg);
            break;
        case O_QUARANTINE:
            o->quarantine_uri = optarg;
            break;
        case O_STRICT:
            o->strict = true;
            break;
        case O_UNKNOWN:
            if (!strcmp(optarg, "reject"))
                o->shred.unknown = FLOE_UNKNOWN_REJECT;
            else if (!strcmp(optarg, "ignore"))
                o->shred.unknown = FLOE_UNKNOWN_IGNORE;
            else
                return cli_usage("convert", "bad --unknown-fields '%s' (reject or ignore)", optarg);
            break;
        case O_MAXREC:
            if (!floe_parse_size(optarg, &v) || v < 16 || v > (1 << 30))
                return cli_usage("convert", "bad --max-record-size '%s'", optarg);
            o->shred.max_record = (size_t)v;
            break;
        case O_PREFIX:
            if (!*optarg || strchr(optarg, '/'))
                return cli_usage("convert", "bad --prefix '%s'", optarg);
            o->file_prefix = optarg;
            break;
        case O_JSON:
            a->json = true;
            break;
        case 'q':
            a->quiet = true;
            break;
        case O_SHRED: {
            floe_error se;
            floe_error_clear(&se);
            if (floe_pq_variant_shredding_check(optarg, &se) < 0)
                return cli_usage("convert", "bad --variant-shredding: %s", se.msg);
            snprintf(o->write.variant_shredding, sizeof o->write.variant_shredding, "%s",
                     optarg);
            break;
        }
        case O_OVERWRITE:
            a->overwrite = true;
            break;
        case 'p':
            a->partition_text = optarg;
            break;
        case O_MAXOPEN:
            if (!cli_parse_int(optarg, &v) || v < 1 || v > 100000)
                return cli_usage("convert", "bad --max-open-files '%s'", optarg);
            o->max_open_files = (size_t)v;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return FLOE_EXIT_OK;
        case ':':
            return cli_usage("convert", "%s needs a value", argv[optind - 1]);
        default:
            return cli_usage("convert", "unknown option %s", argv[optind - 1]);
        }
    }
    if (!a->schema_path)
        return cli_usage("convert", "--schema is required");
    if (!o->out_dir)
        return cli_usage("convert", "-o DIR is required");
    if (optind >= argc)
        return cli_usage("convert", "no input files (use '-' for standard input)");
    floe_error le;
    if (floe_codec_check_level(o->write.codec, o->write.codec_level, &le) < 0)
        return cli_usage("convert", "--compression-level: %s", le.msg);
    return ARGS_OK;
}

/* The result as one JSON object (--json). */
static void report_json(const floe_convert_result *res, const floe_convert_options *o) {
    double mb_in = (double)res->bytes_decompressed / 1e6;
    double secs = res->seconds > 0 ? res->seconds : 1e-9;
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_buf_printf(&b,
                    "{\"records_in\":%lld,\"records_out\":%lld,\"rejected\":%lld,"
                    "\"rejected_by_reason\":{",
                    (long long)res->records_in, (long long)res->records_out,
                    (long long)res->rejected);
    bool first = true;
    for (int i = 1; i < FLOE_REJECT_NREASONS; i++) {
        if (!res->rejected_by_reason[i])
            continue;
        floe_buf_printf(&b, "%s\"%s\":%lld", first ? "" : ",",
                        floe_reject_reason_name((floe_reject_reason)i),
                        (long long)res->rejected_by_reason[i]);
        first = false;
    }
    floe_buf_printf(&b, "},\"quarantine\":");
    if (res->rejected)
        floe_json_append_string(&b, (const uint8_t *)o->quarantine_uri,
                                strlen(o->quarantine_uri));
    else
        floe_buf_printf(&b, "null");
    floe_buf_printf(&b, ",\"files\":[");
    for (int64_t i = 0; i < res->files; i++) {
        if (i)
            floe_buf_append_byte(&b, ',');
        floe_json_append_string(&b, (const uint8_t *)res->file_uris[i],
                                strlen(res->file_uris[i]));
    }
    floe_buf_printf(&b,
                    "],\"bytes_in\":%lld,\"bytes_json\":%lld,\"bytes_out\":%lld,"
                    "\"seconds\":%.6f,\"mb_per_s\":%.2f,\"records_per_s\":%.0f,"
                    "\"threads\":%d}\n",
                    (long long)res->bytes_in, (long long)res->bytes_decompressed,
                    (long long)res->bytes_out, res->seconds, mb_in / secs,
                    (double)res->records_in / secs, o->threads);
    fwrite(b.data, 1, b.len, stdout);
    floe_buf_free(&b);
}

/* The result for a reader. */
static void report_text(const floe_convert_result *res, const floe_convert_options *o) {
    double mb_in = (double)res->bytes_decompressed / 1e6;
    double secs = res->seconds > 0 ? res->seconds : 1e-9;
    char a[32], bb[32];
    printf("converted %lld records into %lld file%s: %lld rows written, %lld rejected\n",
           (long long)res->records_in, (long long)res->files, res->files == 1 ? "" : "s",
           (long long)res->records_out, (long long)res->rejected);
    for (int64_t i = 0; i < res->files; i++)
        printf("  %s\n", res->file_uris[i]);
    if (res->rejected) {
        printf("rejected records are in %s:", o->quarantine_uri);
        for (int i = 1; i < FLOE_REJECT_NREASONS; i++)
            if (res->rejected_by_reason[i])
                printf(" %s %lld", floe_reject_reason_name((floe_reject_reason)i),
                       (long long)res->rejected_by_reason[i]);
        printf("\n");
    }
    printf("%s of JSON -> %s of Parquet (%.1fx) in %.2f s: %.1f MB/s, %.0f records/s, "
           "%d thread%s\n",
           cli_fmt_bytes((double)res->bytes_decompressed, a, sizeof a),
           cli_fmt_bytes((double)res->bytes_out, bb, sizeof bb),
           res->bytes_out ? (double)res->bytes_decompressed / (double)res->bytes_out : 0.0,
           res->seconds, mb_in / secs, (double)res->records_in / secs, o->threads,
           o->threads == 1 ? "" : "s");
}

int floe_cmd_convert(int argc, char **argv) {
    convert_args args = {0};
    floe_convert_options_init(&args.o);
    args.o.io = cli_io();
    int exit_code = parse_args(argc, argv, &args);
    if (exit_code != ARGS_OK)
        return exit_code;
    exit_code = FLOE_EXIT_OK;
    floe_convert_options o = args.o;
    char *out_dir = NULL;

    floe_error err;
    floe_error_clear(&err);
    floe_schema *schema = NULL;
    if (floe_schema_load(args.schema_path, &schema, &err) < 0)
        return cli_fail(&err);
    o.schema = schema;
    floe_partition_spec *spec = NULL;
    if (args.partition_text) {
        if (floe_partition_spec_parse(schema, args.partition_text, 0, 1000, &spec, &err) < 0) {
            floe_schema_free(schema);
            return cli_usage("convert", "bad --partition: %s", err.msg);
        }
        o.spec = spec;
    }
    if (!(out_dir = trim_trailing_slashes(o.out_dir))) {
        floe_partition_spec_free(spec);
        floe_schema_free(schema);
        floe_error_set(&err, FLOE_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    o.out_dir = out_dir;
    bool foreign = false;
    if (prepare_output(&o, args.overwrite, &foreign, &err) < 0) {
        floe_free(out_dir);
        floe_partition_spec_free(spec);
        floe_schema_free(schema);
        return foreign ? cli_usage("convert", "%s", err.msg) : cli_fail(&err);
    }
    /* One output at a time: the files are published and done with (nothing here reads them
     * back), so large ones need not pass through (and crowd) the page cache, and a finished
     * row group is written while the next one fills. Not with partitions: each open file
     * would hold its own direct blocks (2 MiB) and writer thread, and bytes handed to a thread
     * are outside the max_buffered_bytes bound. */
    if (!o.spec) {
        o.write.output.direct = true;
        o.write.write_behind = true;
    }
    char *schema_json = floe_schema_to_json(schema, false);
    floe_pq_kv kv = {"iceberg.schema", schema_json};
    if (schema_json) {
        o.write.kv = &kv;
        o.write.nkv = 1;
    }
    char *qdefault = NULL;
    if (!o.quarantine_uri)
        o.quarantine_uri = qdefault = floe_asprintf("%s/_quarantine/quarantine.ndjson", o.out_dir);

    floe_convert_result res;
    const char *const *inputs = (const char *const *)argv + optind;
    size_t ninputs = (size_t)(argc - optind);
    cli_progress ui;
    int64_t in_size = cli_inputs_size(inputs, ninputs); /* 0: not all plain files */
    cli_progress_init(&ui, "floe convert", in_size, args.quiet || args.json);
    /* the file is done sooner when its last row group is small (floe/convert.h): only
     * where a finished row group is written while the next one fills (write-behind) */
    if (!o.spec)
        o.input_size = in_size;
    o.progress = cli_progress_bytes;
    o.progress_ctx = &ui;
    int rc = floe_convert(inputs, ninputs, &o, &res, &err);
    cli_progress_end(&ui);
    if (rc < 0) {
        exit_code = cli_fail(&err);
        goto done;
    }
    /* nothing usable: a failure naming the quarantine, as floe append's */
    bool none = res.rejected > 0 && res.records_out == 0;
    if (!args.json)
        report_text(&res, &o);
    else if (!none)
        report_json(&res, &o);
    if (none) {
        floe_error_set(&err, FLOE_EINVALID,
                       "all %lld records were rejected; no file was written (the records and "
                       "the reasons are in the quarantine %s)",
                       (long long)res.rejected, o.quarantine_uri);
        exit_code = cli_fail(&err);
    }
    floe_convert_result_free(&res);
done:
    floe_free(out_dir);
    floe_free(qdefault);
    floe_free(schema_json);
    floe_partition_spec_free(spec);
    floe_schema_free(schema);
    return exit_code;
}
