/*
 * test_rewrite.c - floe rewrite: the bin-pack planner against Iceberg's rules on crafted
 * size distributions, and end-to-end rewrites of small tables (partitioned and not,
 * nested columns and nulls, sort strategy) with concurrent commits that remove inputs
 * or add deletes while the rewrite runs.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/catalog.h"
#include "floe/io.h"
#include "floe/maint.h"
#include "floe/manifest.h"
#include "floe/parquet.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "harness.h"
#include "harness_table.h"
#include "table/commit_testing.h"

#define MB (1024LL * 1024)

static floe_rewrite_limits limits(int64_t target) {
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    o.target_file_size = target;
    floe_rewrite_limits l;
    floe_error err;
    if (floe_rewrite_limits_resolve(&o, 0, &l, &err) < 0)
        harness_fail(__FILE__, __LINE__, "limits: %s", err.msg);
    return l;
}

/* group index per file, -1 = not rewritten */
static size_t pack(const floe_rewrite_limits *l, const floe_rewrite_candidate *c, size_t n,
                   int *out) {
    int *g = NULL;
    size_t ng = 0;
    floe_error err;
    if (floe_rewrite_pack_partition(l, c, n, &g, &ng, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "pack: %s", err.msg);
        return 0;
    }
    memcpy(out, g, n * sizeof *out);
    floe_free(g);
    return ng;
}

TEST(test_options) {
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    floe_error err;
    CHECK_EQ_INT(o.min_input_files, 5);
    CHECK_EQ_INT(o.max_file_group_size, 100LL * 1024 * 1024 * 1024);
    CHECK_EQ_INT(o.max_concurrent_groups, 5);
    CHECK_EQ_INT(o.partial_max_commits, 10);
    CHECK(o.use_starting_sequence_number);
    CHECK(!o.rewrite_all && !o.partial_progress && !o.remove_dangling_deletes);
    CHECK(o.delete_ratio_threshold == 0.3);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "min-input-files", "2", &err), 0);
    CHECK_EQ_INT(o.min_input_files, 2);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "rewrite-job-order", "bytes-desc", &err), 0);
    CHECK_EQ_INT(o.job_order, FLOE_RW_ORDER_BYTES_DESC);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "rewrite-job-order", "sideways", &err),
                 FLOE_EINVALID);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "min-input-files", "0", &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "delete-ratio-threshold", "1.5", &err),
                 FLOE_EINVALID);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "no-such-option", "1", &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "no-such-option") != NULL);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "partial-progress.enabled", "true", &err), 0);
    CHECK(o.partial_progress);

    /* defaults: 75% / 180% of the table's target; 512 MiB without one */
    floe_rewrite_options_init(&o);
    floe_rewrite_limits l;
    CHECK_EQ_INT(floe_rewrite_limits_resolve(&o, 0, &l, &err), 0);
    CHECK_EQ_INT(l.target, 512 * MB);
    CHECK_EQ_INT(l.min, 384 * MB);
    CHECK_EQ_INT(l.max, (int64_t)(512.0 * MB * 1.8));
    CHECK_EQ_INT(floe_rewrite_limits_resolve(&o, 100 * MB, &l, &err), 0);
    CHECK_EQ_INT(l.target, 100 * MB);
    CHECK_EQ_INT(l.min, 75 * MB);
    CHECK_EQ_INT(l.max, 180 * MB);
    /* target must sit strictly between min and max */
    o.target_file_size = 100;
    o.min_file_size = 100;
    CHECK_EQ_INT(floe_rewrite_limits_resolve(&o, 0, &l, &err), FLOE_EINVALID);
    o.min_file_size = -1;
    o.max_file_size = 100;
    CHECK_EQ_INT(floe_rewrite_limits_resolve(&o, 0, &l, &err), FLOE_EINVALID);
}

TEST(test_band_edges) {
    floe_rewrite_limits l = limits(100 * MB); /* min 75 MB, max 180 MB */
    l.min_input_files = 1;
    floe_rewrite_candidate c[5] = {
        {.size = 75 * MB - 1}, {.size = 75 * MB}, {.size = 180 * MB},
        {.size = 180 * MB + 1}, {.size = 100 * MB}};
    int g[5];
    size_t ng = pack(&l, c, 5, g);
    /* only the files strictly outside [min, max] are candidates; together they exceed
     * the target, so their group is kept */
    CHECK_EQ_INT(ng, 1);
    CHECK_EQ_INT(g[0], 0);
    CHECK_EQ_INT(g[1], -1);
    CHECK_EQ_INT(g[2], -1);
    CHECK_EQ_INT(g[3], 0);
    CHECK_EQ_INT(g[4], -1);
    /* rewrite-all takes every file */
    l.rewrite_all = true;
    ng = pack(&l, c, 5, g);
    CHECK_EQ_INT(ng, 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(g[i], 0);
}

TEST(test_min_input_files) {
    floe_rewrite_limits l = limits(100 * MB);
    floe_rewrite_candidate c[5];
    for (int i = 0; i < 5; i++)
        c[i] = (floe_rewrite_candidate){.size = 10 * MB, .record_count = 100};
    int g[5];
    /* 4 small files: not enough files, not enough content -> nothing */
    CHECK_EQ_INT(pack(&l, c, 4, g), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(g[i], -1);
    /* 5 files reach min-input-files */
    CHECK_EQ_INT(pack(&l, c, 5, g), 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(g[i], 0);
    /* min-input-files 1 still needs two files (group.size() > 1) unless content is
     * too large */
    l.min_input_files = 1;
    CHECK_EQ_INT(pack(&l, c, 1, g), 0);
    floe_rewrite_candidate big = {.size = 200 * MB};
    CHECK_EQ_INT(pack(&l, &big, 1, g), 1); /* too much content: > max */
    /* enough content: 2 files whose sum exceeds the target */
    l.min_input_files = 5;
    floe_rewrite_candidate two[2] = {{.size = 60 * MB}, {.size = 50 * MB}};
    CHECK_EQ_INT(pack(&l, two, 2, g), 1);
    floe_rewrite_candidate two_small[2] = {{.size = 50 * MB}, {.size = 50 * MB}};
    CHECK_EQ_INT(pack(&l, two_small, 2, g), 0); /* 100 MB is not > target */
}

TEST(test_group_splitting) {
    floe_rewrite_limits l = limits(100 * MB);
    l.max_group_size = 100 * MB;
    l.min_input_files = 2;
    floe_rewrite_candidate c[5] = {{.size = 60 * MB}, {.size = 50 * MB}, {.size = 30 * MB},
                                   {.size = 70 * MB}, {.size = 20 * MB}};
    int g[5];
    /* sequential packing, one open group: [60] [50 30] [70 20]; [60] alone is dropped */
    size_t ng = pack(&l, c, 5, g);
    CHECK_EQ_INT(ng, 2);
    CHECK_EQ_INT(g[0], -1);
    CHECK_EQ_INT(g[1], 0);
    CHECK_EQ_INT(g[2], 0);
    CHECK_EQ_INT(g[3], 1);
    CHECK_EQ_INT(g[4], 1);
    /* a file larger than the group limit gets a group of its own */
    floe_rewrite_candidate d[3] = {{.size = 10 * MB}, {.size = 250 * MB}, {.size = 10 * MB}};
    ng = pack(&l, d, 3, g);
    CHECK_EQ_INT(ng, 1); /* [10] dropped, [250] too much content, [10] dropped */
    CHECK_EQ_INT(g[1], 0);
    CHECK_EQ_INT(g[0], -1);
    CHECK_EQ_INT(g[2], -1);
}

TEST(test_deletes_select) {
    floe_rewrite_limits l = limits(100 * MB);
    /* a well-sized file with a file-scoped delete of 30% of its rows */
    floe_rewrite_candidate c = {.size = 100 * MB, .record_count = 10, .delete_files = 1,
                                .file_scoped_delete_records = 3};
    int g[1];
    CHECK_EQ_INT(pack(&l, &c, 1, g), 1);
    c.file_scoped_delete_records = 2; /* 20% < 0.3 */
    CHECK_EQ_INT(pack(&l, &c, 1, g), 0);
    /* delete-file-threshold: enough delete files of any kind */
    l.delete_file_threshold = 1;
    CHECK_EQ_INT(pack(&l, &c, 1, g), 1);
    c.delete_files = 0;
    CHECK_EQ_INT(pack(&l, &c, 1, g), 0);
}

TEST(test_expected_outputs) {
    floe_rewrite_limits l = limits(100 * MB); /* writeMax = 140 MB */
    CHECK_EQ_INT(floe_rewrite_write_max_file_size(&l), 140 * MB);
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 50 * MB), 1);
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 100 * MB), 1);
    /* remainder 80 MB > min 75 MB: a file of its own */
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 180 * MB), 2);
    /* remainder 70 MB <= min; spread: 170 MB per file is not < 110 MB: keep it */
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 170 * MB), 2);
    /* remainder 9 MB; spread over 2 files: 104.5 MB < 110 MB: round down */
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 209 * MB), 2);
    /* remainder 21 MB; 110.5 MB is not < 110 MB: round up */
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 221 * MB), 3);
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 1000 * MB), 10);
    /* 75 MB left is not > min; spread over 10 files: 107.5 MB < 110 MB: round down */
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 1075 * MB), 10);
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&l, 1076 * MB), 11); /* 76 MB > min */
    /* split size: input / expected + 5 KB, at least the target, at most writeMax */
    CHECK_EQ_INT(floe_rewrite_split_size(&l, 50 * MB), 100 * MB);
    CHECK_EQ_INT(floe_rewrite_split_size(&l, 209 * MB), 209 * MB / 2 + 5 * 1024);
    CHECK_EQ_INT(floe_rewrite_split_size(&l, 170 * MB), 100 * MB);
    /* 512 MB default: 10,000 x 100 KB = 976.6 MB -> 2 files */
    floe_rewrite_limits d = limits(512 * MB);
    CHECK_EQ_INT(floe_rewrite_expected_output_files(&d, 10000LL * 100 * 1024), 2);
}

/* ---------------------------------------------------------------------------------------
 * the generational planner
 * ------------------------------------------------------------------------------------- */

#define KB 1024LL

/* target 100 MB: min 75 MB; fanout 5: tier 0 [15 MB, 75 MB), 1 [3 MB, 15 MB),
 * 2 [600 KB, 3 MB), 3 [120 KB, 600 KB), 4 [24 KB, 120 KB) */
static floe_rewrite_limits tier_limits(int64_t fanout, int64_t max_files) {
    floe_rewrite_limits l = limits(100 * MB);
    l.tier_fanout = fanout;
    l.max_partition_files = max_files;
    return l;
}

static size_t tier_plan(const floe_rewrite_limits *l, const floe_rewrite_candidate *c,
                        size_t n, bool cold, int *out) {
    int *g = NULL;
    size_t ng = 0;
    floe_error err;
    if (floe_rewrite_tier_partition(l, c, n, cold, &g, &ng, &err) < 0) {
        harness_fail(__FILE__, __LINE__, "tier: %s", err.msg);
        return 0;
    }
    memcpy(out, g, n * sizeof *out);
    floe_free(g);
    return ng;
}

TEST(test_tier_bounds) {
    floe_rewrite_limits l = tier_limits(5, 10);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 75 * MB), -1);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 75 * MB - 1), 0);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 15 * MB), 0);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 15 * MB - 1), 1);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 3 * MB), 1);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 3 * MB - 1), 2);
    CHECK_EQ_INT(floe_rewrite_tier_of(&l, 100 * KB), 4);
    CHECK(floe_rewrite_tier_of(&l, 1) > floe_rewrite_tier_of(&l, 100 * KB));
    /* options: names, bounds */
    floe_rewrite_options o;
    floe_rewrite_options_init(&o);
    CHECK_EQ_INT(o.planner, FLOE_RW_PLANNER_BINPACK); /* floe rewrite stays Iceberg's */
    floe_error err;
    REQUIRE_OK(floe_rewrite_option_set(&o, "planner", "generational", &err), err);
    CHECK_EQ_INT(o.planner, FLOE_RW_PLANNER_GENERATIONAL);
    REQUIRE_OK(floe_rewrite_option_set(&o, "tier-fanout", "8", &err), err);
    REQUIRE_OK(floe_rewrite_option_set(&o, "max-files-per-partition", "6", &err), err);
    REQUIRE_OK(floe_rewrite_option_set(&o, "cold-partition-age-ms", "60000", &err), err);
    CHECK_EQ_INT(o.tier_fanout, 8);
    CHECK_EQ_INT(o.max_partition_files, 6);
    CHECK_EQ_INT(o.cold_partition_age_ms, 60000);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "tier-fanout", "1", &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "planner", "lsm", &err), FLOE_EINVALID);
    CHECK_EQ_INT(floe_rewrite_option_set(&o, "max-files-per-partition", "1", &err),
                 FLOE_EINVALID);
}

TEST(test_tier_choices) {
    floe_rewrite_limits l = tier_limits(5, 100);
    floe_rewrite_candidate c[16];
    int g[16];
    /* four small files: a tier is merged only once it holds `fanout` files */
    for (int i = 0; i < 4; i++)
        c[i] = (floe_rewrite_candidate){.size = 100 * KB, .record_count = 10};
    CHECK_EQ_INT(tier_plan(&l, c, 4, false, g), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(g[i], -1);
    /* the fifth completes tier 4: the five become one file (of tier 3) */
    c[4] = c[0];
    CHECK_EQ_INT(tier_plan(&l, c, 5, false, g), 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(g[i], 0);
    /* a big file below the minimum (tier 0) is not read again for small files: it waits
     * for fanout - 1 peers of its own tier */
    c[5] = (floe_rewrite_candidate){.size = 60 * MB, .record_count = 1000};
    CHECK_EQ_INT(tier_plan(&l, c, 6, false, g), 1);
    CHECK_EQ_INT(g[5], -1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(g[i], 0);
    /* ... and files of min-file-size or more are done */
    c[5].size = 80 * MB;
    CHECK_EQ_INT(tier_plan(&l, c, 6, false, g), 1);
    CHECK_EQ_INT(g[5], -1);
    /* cascade: tier 3 holds 4 files; merging a full tier 4 lands a fifth there, so tier
     * 3 joins the same group instead of being read again next time */
    floe_rewrite_candidate d[9];
    for (int i = 0; i < 4; i++)
        d[i] = (floe_rewrite_candidate){.size = 500 * KB};
    for (int i = 4; i < 9; i++)
        d[i] = (floe_rewrite_candidate){.size = 100 * KB};
    CHECK_EQ_INT(tier_plan(&l, d, 9, false, g), 1);
    for (int i = 0; i < 9; i++)
        CHECK_EQ_INT(g[i], 0);
    /* with only 3 files in tier 3 the output waits there: tier 3 stays */
    CHECK_EQ_INT(tier_plan(&l, d + 1, 8, false, g), 1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(g[i], -1);
    for (int i = 3; i < 8; i++)
        CHECK_EQ_INT(g[i], 0);
    /* a merge whose output is larger than the next tier takes that tier along: 15 small
     * files of 250 KB (3.75 MB, tier 1) fold the lone 1 MB file of tier 2 in */
    floe_rewrite_candidate e[16];
    for (int i = 0; i < 15; i++)
        e[i] = (floe_rewrite_candidate){.size = 250 * KB};
    e[15] = (floe_rewrite_candidate){.size = 1 * MB};
    CHECK_EQ_INT(tier_plan(&l, e, 16, false, g), 1);
    for (int i = 0; i < 16; i++)
        CHECK_EQ_INT(g[i], 0);
    /* a full tier above non-full ones: merged, with every smaller file */
    floe_rewrite_candidate f[8];
    for (int i = 0; i < 5; i++)
        f[i] = (floe_rewrite_candidate){.size = 5 * MB};
    f[5] = (floe_rewrite_candidate){.size = 100 * KB};
    f[6] = (floe_rewrite_candidate){.size = 700 * KB};
    f[7] = (floe_rewrite_candidate){.size = 40 * MB};
    CHECK_EQ_INT(tier_plan(&l, f, 8, false, g), 1);
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(g[i], 0);
    CHECK_EQ_INT(g[7], -1);
}

TEST(test_tier_cap_cold_forced) {
    /* one file in each of tiers 0..3 and 4 in tier 4: no tier is full, but the partition
     * holds 8 files; with max-files-per-partition 5 the smallest tiers merge until at
     * most 5 files remain (tier 4 -> one file) */
    floe_rewrite_limits l = tier_limits(5, 5);
    floe_rewrite_candidate c[8] = {{.size = 20 * MB}, {.size = 5 * MB}, {.size = 1 * MB},
                                   {.size = 200 * KB}, {.size = 50 * KB}, {.size = 50 * KB},
                                   {.size = 50 * KB}, {.size = 50 * KB}};
    int g[8];
    CHECK_EQ_INT(tier_plan(&l, c, 8, false, g), 1);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(g[i], -1);
    for (int i = 4; i < 8; i++)
        CHECK_EQ_INT(g[i], 0);
    /* at most 3: tiers 3 and 2 join (1 MB + 200 KB + 4 x 50 KB -> one file) */
    l.max_partition_files = 3;
    CHECK_EQ_INT(tier_plan(&l, c, 8, false, g), 1);
    CHECK_EQ_INT(g[0], -1);
    CHECK_EQ_INT(g[1], -1);
    for (int i = 2; i < 8; i++)
        CHECK_EQ_INT(g[i], 0);
    /* with room for all of them nothing happens */
    l.max_partition_files = 8;
    CHECK_EQ_INT(tier_plan(&l, c, 8, false, g), 0);
    /* a cold partition gets Iceberg's bin-pack: every file under the minimum, once
     * min-input-files (5) of them exist */
    CHECK_EQ_INT(tier_plan(&l, c, 8, true, g), 1);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(g[i], 0);
    CHECK_EQ_INT(tier_plan(&l, c, 4, true, g), 0);
    /* forced: an oversized file is split on its own group; a small file with too many
     * deletes is rewritten with every file of its tier and below */
    floe_rewrite_candidate d[4] = {{.size = 300 * MB},
                                   {.size = 1 * MB, .record_count = 10, .delete_files = 1,
                                    .file_scoped_delete_records = 5},
                                   {.size = 100 * KB},
                                   {.size = 5 * MB}};
    CHECK_EQ_INT(tier_plan(&l, d, 4, false, g), 2);
    CHECK_EQ_INT(g[1], 0);
    CHECK_EQ_INT(g[2], 0);
    CHECK_EQ_INT(g[3], -1);
    CHECK_EQ_INT(g[0], 1);
}

/* Commits of equal small files into one partition, the planner run after each: every
 * byte is rewritten about log_F(bytes / commit) times - not once per run, as bin-pack
 * does while the partition stays under the minimum - and the partition keeps few files
 * under the minimum (*max_live, counted before each run). */
static void tier_stream(int64_t fanout, int64_t max_files, int commits, double *amp,
                        int *max_live) {
    floe_rewrite_limits l = tier_limits(fanout, max_files);
    floe_rewrite_candidate *c = floe_calloc((size_t)commits + 1, sizeof *c);
    int *g = floe_calloc((size_t)commits + 1, sizeof *g);
    size_t n = 0;
    int64_t appended = 0, rewritten = 0;
    *max_live = 0;
    for (int i = 0; i < commits; i++) {
        c[n++] = (floe_rewrite_candidate){.size = 80 * KB, .record_count = 100};
        appended += 80 * KB;
        int small = 0; /* files under the minimum (larger ones are done) */
        for (size_t k = 0; k < n; k++)
            small += c[k].size < l.min;
        if (small > *max_live)
            *max_live = small;
        size_t ng = tier_plan(&l, c, n, false, g);
        if (!ng)
            continue;
        floe_rewrite_candidate merged = {0};
        size_t keep = 0;
        for (size_t k = 0; k < n; k++) {
            if (g[k] == 0) {
                merged.size += c[k].size;
                merged.record_count += c[k].record_count;
            } else {
                c[keep++] = c[k];
            }
        }
        rewritten += merged.size;
        c[keep++] = merged;
        n = keep;
    }
    *amp = (double)rewritten / (double)appended;
    floe_free(c);
    floe_free(g);
}

TEST(test_tier_write_amplification) {
    double amp;
    int live;
    /* 900 commits (30 minutes at one every 2 s) of 80 KB: 72 MB, never the minimum */
    tier_stream(5, 10, 900, &amp, &live);
    printf("# generational, fanout 5, 900 commits: %.2fx rewritten, <= %d files\n", amp,
                 live);
    CHECK(amp <= 3.5);
    CHECK(live <= 11); /* max-files-per-partition + the commit that just arrived */
    /* four times the commits: one more tier, not four times the rewriting */
    double amp4;
    tier_stream(5, 10, 3600, &amp4, &live);
    printf("# generational, fanout 5, 3600 commits: %.2fx rewritten, <= %d files\n", amp4,
                 live);
    CHECK(amp4 <= amp + 1.5);
    CHECK(live <= 11);
}

/* ---------------------------------------------------------------------------------------
 * end to end
 * ------------------------------------------------------------------------------------- */

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"kind\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":4,\"name\":\"tags\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":5,"
    "\"element\":\"string\",\"element-required\":false}},"
    "{\"id\":6,\"name\":\"info\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":7,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":8,\"name\":\"b\",\"required\":false,\"type\":\"double\"}]}},"
    "{\"id\":9,\"name\":\"attrs\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":10,"
    "\"key\":\"string\",\"value-id\":11,\"value\":\"long\",\"value-required\":false}}]}";

typedef harness_table env;

static void env_open(env *e, const char *spec, const char *sort, const char *name) {
    floe_kv props[1] = {{"write.parquet.compression-codec", "snappy"}};
    harness_table_open(e, name, SCHEMA, spec, sort, props, 1);
}

static void env_close(env *e) { harness_table_close(e); }

/* Append one NDJSON file of n rows (ids from base), with nulls, empty and missing
 * nested values. */
static void append_rows(env *e, int64_t base, int n) {
    floe_buf b;
    floe_buf_init(&b, 0);
    for (int i = 0; i < n; i++) {
        int64_t id = base + i;
        floe_buf_printf(&b, "{\"id\":%lld,\"kind\":\"%s\"", (long long)id,
                        id % 3 == 0 ? "a" : (id % 3 == 1 ? "b" : "c"));
        if (id % 4)
            floe_buf_printf(&b, ",\"name\":\"n%lld\"", (long long)(id * 7919 % 1000));
        if (id % 5 == 1)
            floe_buf_printf(&b, ",\"tags\":[]");
        else if (id % 5 == 2)
            floe_buf_printf(&b, ",\"tags\":[\"x\",null,\"y%lld\"]", (long long)id);
        if (id % 6 == 1)
            floe_buf_printf(&b, ",\"info\":{\"a\":%lld}", (long long)id);
        else if (id % 6 == 2)
            floe_buf_printf(&b, ",\"info\":{\"a\":null,\"b\":%lld.5}", (long long)id);
        if (id % 7 == 3)
            floe_buf_printf(&b, ",\"attrs\":{\"k\":%lld,\"z\":null}", (long long)id);
        floe_buf_printf(&b, "}\n");
    }
    harness_table_append_ndjson(e, base, &b);
    floe_buf_free(&b);
}

static int64_t live_files(floe_table *t, int64_t *deletes) {
    floe_error err;
    floe_scan_plan *p = NULL;
    if (floe_table_refresh(t, &err) < 0)
        harness_fail(__FILE__, __LINE__, "refresh: %s", err.msg);
    if (floe_scan_plan_files(t, NULL, &p, &err) < 0)
        return -1;
    int64_t n = (int64_t)p->ntasks;
    if (deletes)
        *deletes = p->stats.delete_files;
    floe_scan_plan_free(p);
    return n;
}

static void rewrite_opts(floe_rewrite_options *o, int threads) {
    floe_rewrite_options_init(o);
    o->target_file_size = 4 * MB;
    o->min_input_files = 2;
    o->threads = threads;
    o->fsync = false;
}

static void roundtrip(const char *spec, int threads) {
    env e;
    env_open(&e, spec, NULL, "t");
    for (int k = 0; k < 6; k++)
        append_rows(&e, k * 1000, 300 + k * 10);
    int64_t before_n = 0, after_n = 0;
    char *before = harness_table_rows(e.t, &before_n);
    int64_t files_before = live_files(e.t, NULL);
    CHECK(files_before >= 6);
    floe_rewrite_options o;
    rewrite_opts(&o, threads);
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.rewritten_data_files_count, files_before);
    CHECK_EQ_INT(r.failed_data_files_count, 0);
    CHECK_EQ_INT(r.records_written, before_n);
    CHECK(r.commits == 1);
    char *after = harness_table_rows(e.t, &after_n);
    CHECK_EQ_INT(after_n, before_n);
    CHECK(before && after && !strcmp(before, after));
    int64_t files_after = live_files(e.t, NULL);
    CHECK_EQ_INT(files_after, r.added_data_files_count);
    CHECK(files_after < files_before);
    /* the snapshot is a replace with Iceberg's summary fields */
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    REQUIRE(s && s->operation);
    CHECK_EQ_STR(s->operation, "replace");
    bool saw_total = false;
    for (size_t i = 0; i < s->n_summary; i++)
        if (!strcmp(s->summary[i].key, "total-records")) {
            saw_total = true;
            CHECK_EQ_INT(atoll(s->summary[i].value), before_n);
        }
    CHECK(saw_total);
    harness_check_summary_totals(e.t);
    /* a second rewrite finds nothing to do: every file is one group's only output */
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_planned, 0);
    free(before);
    free(after);
    env_close(&e);
}

TEST(test_roundtrip_unpartitioned) { roundtrip(NULL, 1); }
TEST(test_roundtrip_partitioned) {
    roundtrip("{\"fields\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"kind\"}]}", 4);
}

TEST(test_sort_strategy) {
    env e;
    env_open(&e, NULL, "{\"fields\":[{\"source-id\":3,\"transform\":\"identity\","
                       "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}", "s");
    for (int k = 0; k < 3; k++)
        append_rows(&e, k * 1000, 200);
    int64_t n0, n1;
    char *before = harness_table_rows(e.t, &n0);
    floe_rewrite_options o;
    rewrite_opts(&o, 2);
    o.strategy = FLOE_RW_SORT;
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.added_data_files_count, 1);
    char *after = harness_table_rows(e.t, &n1);
    CHECK(before && after && !strcmp(before, after));
    /* the output file is sorted by name, nulls first */
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &p, &err), err);
    REQUIRE(p->ntasks == 1);
    char *uri = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, p->tasks[0].file->file_path, &uri, &err), err);
    CHECK(p->tasks[0].file->has_sort_order_id);
    floe_pq_reader *rd = NULL;
    REQUIRE_OK(floe_pq_reader_open(NULL, uri, NULL, &rd, &err), err);
    const char *sel[1] = {"name"};
    REQUIRE_OK(floe_pq_reader_select_paths(rd, sel, 1, &err), err);
    const floe_pq_rowset *rs;
    bool sorted = true, seen_value = false;
    const uint8_t *prev = NULL;
    size_t prevn = 0;
    while (floe_pq_reader_next(rd, &rs, &err) == 1) {
        const floe_colbuf *c = &rs->cols[0];
        size_t v = 0;
        for (size_t i = 0; i < c->nlevels; i++) {
            if (c->def[i] < c->max_def) {
                sorted &= !seen_value; /* a null after a value */
                continue;
            }
            const uint8_t *s = c->values + c->offsets[v];
            size_t sn = c->offsets[v + 1] - c->offsets[v];
            v++;
            if (prev) {
                size_t m = sn < prevn ? sn : prevn;
                int cmp = memcmp(prev, s, m);
                sorted &= cmp < 0 || (cmp == 0 && prevn <= sn);
            }
            prev = s;
            prevn = sn;
            seen_value = true;
        }
    }
    CHECK(sorted);
    floe_pq_reader_close(rd);
    floe_free(uri);
    floe_scan_plan_free(p);
    free(before);
    free(after);
    env_close(&e);
}

/* A concurrent rewrite commits first: the plan's inputs are gone, its groups fail, the
 * table stays as the winner left it and the loser's outputs are deleted. */
TEST(test_concurrent_removal) {
    env e;
    env_open(&e, NULL, NULL, "c");
    for (int k = 0; k < 4; k++)
        append_rows(&e, k * 1000, 100);
    int64_t n0, n1;
    char *before = harness_table_rows(e.t, &n0);
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    floe_rewrite_plan *slow = NULL;
    floe_error err;
    REQUIRE_OK(floe_rewrite_plan_new(e.t, &o, &slow, &err), err);
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err); /* the winner */
    CHECK_EQ_INT(r.groups_committed, 1);
    append_rows(&e, 9000, 50); /* an append in between never conflicts */
    REQUIRE_OK(floe_rewrite_execute(e.t, slow, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_committed, 0);
    CHECK_EQ_INT(r.failed_data_files_count, 4);
    CHECK(strstr(r.first_failure, "no longer live") != NULL);
    CHECK_EQ_INT(r.commits, 0);
    char *after = harness_table_rows(e.t, &n1);
    CHECK_EQ_INT(n1, n0 + 50);
    /* the data folder holds the winner's output, the append's file and the originals */
    CHECK_EQ_INT(live_files(e.t, NULL), 2);
    floe_rewrite_plan_free(slow);
    free(before);
    free(after);
    env_close(&e);
}

/* Data manifests in the current snapshot's list. */
static int64_t current_manifests(floe_table *t) {
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(t));
    if (!s || !s->manifest_list)
        return -1;
    char *uri = NULL;
    floe_error err;
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    floe_manifest_list_read_options ro = {0};
    int64_t n = -1;
    if (floe_table_resolve_path(t, s->manifest_list, &uri, &err) == 0 &&
        floe_manifest_list_read(NULL, uri, &ro, &a, &ml, &err) == 0)
        n = (int64_t)ml.nfiles;
    floe_free(uri);
    floe_arena_reset(&a);
    return n;
}

/* The manifests holding replaced files are rewritten into one (per content and spec, up
 * to commit.manifest.target-size-bytes), not one each: compaction every few seconds must
 * not multiply manifests. */
TEST(test_rewritten_manifests_combined) {
    env e;
    env_open(&e, NULL, NULL, "m");
    for (int k = 0; k < 5; k++)
        append_rows(&e, k * 1000, 40);
    CHECK_EQ_INT(current_manifests(e.t), 5);
    int64_t n0 = 0, n1 = 0;
    char *before = harness_table_rows(e.t, &n0);
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    o.max_files_to_rewrite = 4; /* the fifth file and its manifest stay as they are */
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.rewritten_data_files_count, 4);
    /* the outputs' manifest, one for the four rewritten, the untouched one */
    CHECK_EQ_INT(current_manifests(e.t), 3);
    char *after = harness_table_rows(e.t, &n1);
    CHECK_EQ_INT(n1, n0);
    CHECK(before && after && !strcmp(before, after));
    CHECK_EQ_INT(live_files(e.t, NULL), 2);
    free(before);
    free(after);
    env_close(&e);
}

/* A commit that loses a race is re-applied: the result counts both attempts and the
 * conflict, which `floe rewrite --json` and the maintenance run log report. */
TEST(test_attempts_counted) {
    env e;
    env_open(&e, NULL, NULL, "a");
    for (int k = 0; k < 3; k++)
        append_rows(&e, k * 1000, 50);
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    floe_commit_fault f = {.nth_swap = 1, .code = FLOE_ECONFLICT};
    floe_table_commit_inject(&f);
    floe_rewrite_result r;
    floe_error err;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    floe_table_commit_inject(NULL);
    CHECK_EQ_INT(r.commits, 1);
    CHECK_EQ_INT(r.attempts, 2);
    CHECK_EQ_INT(r.conflicts, 1);
    CHECK(r.bytes_read > 0);
    CHECK_EQ_INT(r.rewritten_data_files_count, 3);
    env_close(&e);
}

/* Metadata files (*.metadata.json) in the table's metadata folder. */
static int count_metadata_files(const char *table_root) {
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/metadata", table_root);
    char *local = floe_io_local_path(dir);
    DIR *d = local ? opendir(local) : NULL;
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        n += len > 14 && !strcmp(de->d_name + len - 14, ".metadata.json");
    }
    if (d)
        closedir(d);
    floe_free(local);
    return n;
}

/* A table opened by path is committed Hadoop-style: write.metadata.delete-after-commit
 * holds there too, and a handle whose base is no longer the newest file conflicts and
 * re-validates instead of committing on the stale base (which dropped the other commit). */
TEST(test_path_commit_cleanup_and_stale_base) {
    env e;
    floe_kv props[] = {{"write.parquet.compression-codec", "snappy"},
                       {"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "2"}};
    harness_table_open(&e, "p", SCHEMA, NULL, NULL, props, 3);
    for (int k = 0; k < 5; k++)
        append_rows(&e, k * 1000, 120);
    int64_t n0 = 0, n1 = 0;
    char *before = harness_table_rows(e.t, &n0);
    char root[4300];
    snprintf(root, sizeof root, "%s", floe_table_root(e.t));
    CHECK_EQ_INT(count_metadata_files(root), 3); /* the catalog's commits cleaned up */
    floe_table *p1 = NULL, *p2 = NULL;
    floe_error err;
    floe_error_clear(&err);
    REQUIRE_OK(floe_table_open_path(root, NULL, &p1, &err), err);
    REQUIRE_OK(floe_table_open_path(root, NULL, &p2, &err), err);
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    floe_rewrite_plan *slow = NULL;
    REQUIRE_OK(floe_rewrite_plan_new(p2, &o, &slow, &err), err);
    /* a manifest whose uuid starts with digits is not a metadata version */
    char stray[4400];
    snprintf(stray, sizeof stray, "%s/metadata/99999999-0000-m1.avro", root);
    REQUIRE(harness_write_file(stray, "x", 1) == 0);
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite(p1, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_committed, 1);
    CHECK_EQ_INT(r.rewritten_data_files_count, 5);
    CHECK_EQ_INT(count_metadata_files(root), 3);
    /* p2 still stands on the file before p1's commit */
    REQUIRE_OK(floe_rewrite_execute(p2, slow, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_committed, 0);
    CHECK_EQ_INT(r.failed_data_files_count, 5);
    CHECK(strstr(r.first_failure, "no longer live") != NULL);
    floe_table *now = NULL;
    REQUIRE_OK(floe_table_open_path(root, NULL, &now, &err), err);
    char *after = harness_table_rows(now, &n1);
    CHECK_EQ_INT(n1, n0);
    CHECK(before && after && !strcmp(before, after));
    CHECK_EQ_INT(live_files(now, NULL), 1);
    CHECK_EQ_INT(count_metadata_files(root), 3);
    floe_rewrite_plan_free(slow);
    floe_table_close(now);
    floe_table_close(p1);
    floe_table_close(p2);
    free(before);
    free(after);
    env_close(&e);
}

/* Commit a position delete of row `pos` of data file `df` (as another writer would). */
typedef struct del_commit {
    env *e;
    floe_data_file del;
    const floe_partition_spec *spec;
    const floe_schema *schema;
} del_commit;

static int apply_delete(void *ctx, floe_metadata_builder *b, floe_error *err) {
    del_commit *d = ctx;
    const floe_table_metadata *base = floe_metadata_builder_base(b);
    const floe_snapshot *head = floe_table_metadata_current_snapshot(base);
    floe_arena a;
    floe_arena_init(&a, 4096);
    int rc = 0;
    char *src = NULL, *mpath = NULL, *lpath = NULL;
    floe_manifest_list bl = {0};
    floe_manifest_writer *w = NULL;
    FLOE_CHECK(floe_table_resolve_path(d->e->t, head->manifest_list, &src, err));
    floe_manifest_list_read_options lo = {.has_snapshot_id = true, .snapshot_id = head->snapshot_id};
    FLOE_CHECK(floe_manifest_list_read(NULL, src, &lo, &a, &bl, err));
    int64_t sid = floe_metadata_new_snapshot_id();
    mpath = floe_asprintf("%s/wh/ns/m-%lld-delete.avro", d->e->dir, (long long)sid);
    lpath = floe_asprintf("%s/wh/ns/snap-%lld-delete.avro", d->e->dir, (long long)sid);
    floe_manifest_write_options wo;
    floe_manifest_write_options_init(&wo);
    wo.content = FLOE_MANIFEST_DELETES;
    wo.schema = d->schema;
    wo.spec = d->spec;
    wo.has_snapshot_id = true;
    wo.snapshot_id = sid;
    FLOE_CHECK(floe_manifest_writer_open(NULL, mpath, &wo, &w, err));
    FLOE_CHECK(floe_manifest_writer_add(w, &d->del, -1, err));
    floe_manifest_file *files = floe_arena_alloc(&a, (bl.nfiles + 1) * sizeof *files);
    rc = floe_manifest_writer_close(w, NULL, &a, &files[0], err);
    w = NULL;
    if (rc < 0)
        goto done;
    for (size_t i = 0; i < bl.nfiles; i++)
        files[i + 1] = bl.files[i];
    floe_manifest_list_write_options lw;
    floe_manifest_list_write_options_init(&lw);
    lw.snapshot_id = sid;
    lw.has_parent = true;
    lw.parent_snapshot_id = head->snapshot_id;
    lw.sequence_number = floe_metadata_builder_next_sequence_number(b);
    FLOE_CHECK(floe_manifest_list_write(NULL, lpath, &lw, files, bl.nfiles + 1, NULL, NULL, err));
    floe_snapshot_new sn = {.snapshot_id = sid, .operation = "delete", .manifest_list = lpath,
                            .schema_id = -1};
    FLOE_CHECK(floe_metadata_builder_add_snapshot(b, &sn, NULL, NULL, err));
done:
    floe_manifest_writer_abort(w);
    floe_free(src);
    floe_free(mpath);
    floe_free(lpath);
    floe_arena_reset(&a);
    return rc;
}

/* Commit one position delete file of the rows (tasks[i]'s data file, pos[i]), in that
 * order (all in tasks[0]'s partition). */
static void commit_position_deletes(env *e, const floe_scan_task *const *tasks,
                                    const int64_t *pos, size_t n) {
    floe_error err;
    const char *sj = "{\"type\":\"struct\",\"fields\":["
                     "{\"id\":2147483546,\"name\":\"file_path\",\"required\":true,\"type\":\"string\"},"
                     "{\"id\":2147483545,\"name\":\"pos\",\"required\":true,\"type\":\"long\"}]}";
    floe_schema *ds = NULL, *ts = NULL;
    REQUIRE_OK(floe_schema_parse(sj, strlen(sj), &ds, &err), err);
    REQUIRE_OK(floe_schema_parse(SCHEMA, strlen(SCHEMA), &ts, &err), err);
    floe_batch b;
    REQUIRE(floe_batch_init(&b, ds) == 0);
    for (size_t i = 0; i < n; i++) {
        const char *path = tasks[i]->file->file_path;
        REQUIRE(floe_colbuf_push_value(&b.cols[0], 0, path, strlen(path)) == 0);
        REQUIRE(floe_colbuf_push_value(&b.cols[1], 0, &pos[i], 8) == 0);
    }
    b.nrows = n;
    char out[4300];
    snprintf(out, sizeof out, "%s/wh/ns/pos-delete-%lld-%zu.parquet", e->dir, (long long)pos[0],
             n);
    floe_pq_writer *w = NULL;
    REQUIRE_OK(floe_pq_writer_open(NULL, out, ds, NULL, &w, &err), err);
    REQUIRE_OK(floe_pq_writer_write_batch(w, &b, &err), err);
    floe_pq_file_info fi;
    REQUIRE_OK(floe_pq_writer_close(w, &fi, &err), err);
    floe_arena a;
    floe_arena_init(&a, 4096);
    del_commit d = {.e = e, .spec = tasks[0]->spec, .schema = ts};
    memset(&d.del, 0, sizeof d.del);
    /* file_path bounds whole, as floe delete records them */
    const floe_kv full = {"write.metadata.metrics.default", "full"};
    floe_metrics_config *mc = NULL;
    REQUIRE_OK(floe_metrics_config_new(&full, 1, ds, NULL, &mc, &err), err);
    REQUIRE_OK(floe_data_file_from_parquet(&fi, mc, &a, &d.del, &err), err);
    floe_metrics_config_free(mc);
    d.del.content = FLOE_CONTENT_POSITION_DELETES;
    d.del.file_path = out;
    d.del.partition = tasks[0]->file->partition;
    d.del.npartition = tasks[0]->file->npartition;
    REQUIRE_OK(floe_table_commit(e->t, apply_delete, &d, &err), err);
    floe_pq_file_info_free(&fi);
    floe_arena_reset(&a);
    floe_batch_free(&b);
    floe_schema_free(ds);
    floe_schema_free(ts);
}

static void commit_position_delete(env *e, const floe_scan_task *task, int64_t pos) {
    commit_position_deletes(e, &task, &pos, 1);
}

/* A position delete file whose rows are neither sorted nor grouped by data file (the spec
 * asks for sorted files; not every writer does so), one row named twice: the rewrite
 * deletes each row it names once, and the table reads as the scan read it before. */
TEST(test_unsorted_position_deletes) {
    env e;
    env_open(&e, NULL, NULL, "u");
    append_rows(&e, 0, 50);
    append_rows(&e, 1000, 50);
    floe_error err;
    floe_scan_plan *sp = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &sp, &err), err);
    REQUIRE(sp->ntasks == 2);
    const floe_scan_task *t0 = &sp->tasks[0], *t1 = &sp->tasks[1];
    const floe_scan_task *tasks[] = {t1, t0, t1, t0, t0, t1, t0};
    const int64_t pos[] = {7, 3, 1, 40, 3, 49, 0};
    commit_position_deletes(&e, tasks, pos, 7);
    floe_scan_plan_free(sp);
    int64_t n0, n1;
    char *before = harness_table_rows(e.t, &n0);
    CHECK_EQ_INT(n0, 100 - 6);
    floe_rewrite_options o;
    rewrite_opts(&o, 2);
    o.rewrite_all = true;
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.failed_data_files_count, 0);
    CHECK_EQ_INT(r.records_deleted, 6);
    char *after = harness_table_rows(e.t, &n1);
    CHECK_EQ_INT(n1, n0);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    env_close(&e);
}

/* Rows of t's current snapshot (canonical, sorted), planned with or without pruning (a
 * position delete file's file_path bounds are metrics: no_metrics_pruning pairs it with
 * every data file of its partition); *pairs: the delete files paired over all files. */
static char *rows_planned(floe_table *t, bool prune, int64_t *nrows, size_t *pairs) {
    floe_error err;
    floe_scan_options so = {.no_metrics_pruning = !prune};
    floe_scan_plan *p = NULL;
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    REQUIRE_OK(floe_scan_plan_files(t, &so, &p, &err), err);
    *pairs = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        *pairs += p->tasks[i].ndeletes;
    floe_buf b;
    floe_buf_init(&b, 0);
    floe_scan_read_options ro = {.format = FLOE_PQ_ROWS_CANONICAL, .limit = -1};
    REQUIRE_OK(floe_scan_read(t, p, &ro, harness_buf_sink, &b, NULL, &err), err);
    floe_scan_plan_free(p);
    floe_buf_append_byte(&b, 0);
    char *rows = harness_sorted_lines((char *)b.data, nrows);
    floe_buf_free(&b);
    return rows;
}

static int cmp_task_path(const void *a, const void *b) {
    const floe_scan_task *x = *(const floe_scan_task *const *)a;
    const floe_scan_task *y = *(const floe_scan_task *const *)b;
    return strcmp(x->file->file_path, y->file->file_path);
}

/* Position delete files that span several data files (one per pair of files, as `floe
 * delete` writes them on v2): the planners pair a data file only with the delete files
 * whose file_path bounds hold its path (floe_pos_delete_excludes, one rule for the scan,
 * the rewrite plan and the rewrite commit). Differential: the rows read with that
 * pruning, without it, and after a rewrite planned with it are the same rows, and the
 * pruning did leave delete files out. */
TEST(test_position_delete_path_pruning) {
    env e;
    env_open(&e, NULL, NULL, "pp");
    for (int k = 0; k < 6; k++)
        append_rows(&e, k * 1000, 40);
    floe_error err;
    floe_scan_plan *sp = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &sp, &err), err);
    REQUIRE(sp->ntasks == 6);
    const floe_scan_task *by_path[6];
    for (size_t i = 0; i < 6; i++)
        by_path[i] = &sp->tasks[i];
    qsort(by_path, 6, sizeof *by_path, cmp_task_path);
    /* pairs of neighbours in path order (narrow bounds), and the two ends (bounds over
     * every file); each deletes two rows of each of its files */
    const int pairs[][2] = {{0, 1}, {2, 3}, {4, 5}, {1, 2}, {0, 5}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const floe_scan_task *tasks[4] = {by_path[pairs[k][0]], by_path[pairs[k][0]],
                                          by_path[pairs[k][1]], by_path[pairs[k][1]]};
        int64_t pos[4] = {(int64_t)k * 3, (int64_t)k * 3 + 1, (int64_t)k * 5,
                          (int64_t)k * 5 + 2};
        commit_position_deletes(&e, tasks, pos, 4);
    }
    floe_scan_plan_free(sp);
    int64_t n_pruned, n_all, n_after;
    size_t pairs_pruned, pairs_all, pairs_after;
    char *pruned = rows_planned(e.t, true, &n_pruned, &pairs_pruned);
    char *all = rows_planned(e.t, false, &n_all, &pairs_all);
    CHECK_EQ_INT(n_all, 240 - 5 * 4);
    CHECK_EQ_INT(n_pruned, n_all);
    CHECK(pruned && all && !strcmp(pruned, all));
    CHECK_EQ_INT(pairs_all, 6 * 5);     /* unpruned: every delete file with every file */
    CHECK(pairs_pruned < pairs_all);    /* the narrow pairs left out elsewhere */
    CHECK(pairs_pruned >= 6 + 2 * 4);   /* each file: the wide one, and its own pairs */
    floe_rewrite_options o;
    rewrite_opts(&o, 2);
    o.rewrite_all = true;
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.failed_data_files_count, 0);
    CHECK_EQ_INT(r.records_deleted, 20);
    char *after = rows_planned(e.t, true, &n_after, &pairs_after);
    CHECK_EQ_INT(n_after, n_all);
    CHECK(after && all && !strcmp(after, all));
    free(pruned);
    free(all);
    free(after);
    env_close(&e);
}

/* A concurrent delete on a file being rewritten: that group fails, the table stays
 * correct (the deleted row gone), the outputs are deleted. A rewrite after that applies
 * the delete and drops the dangling delete file. */
TEST(test_concurrent_delete) {
    env e;
    env_open(&e, "{\"fields\":[{\"source-id\":2,\"transform\":\"identity\",\"name\":\"kind\"}]}",
             NULL, "d");
    for (int k = 0; k < 3; k++)
        append_rows(&e, k * 1000, 60);
    int64_t n0, n1, n2;
    char *before = harness_table_rows(e.t, &n0);
    floe_rewrite_options o;
    rewrite_opts(&o, 2);
    floe_rewrite_plan *plan = NULL;
    floe_error err;
    REQUIRE_OK(floe_rewrite_plan_new(e.t, &o, &plan, &err), err);
    CHECK_EQ_INT(plan->ngroups, 3); /* one per kind */
    /* delete row 0 of the first input of group 1 */
    floe_scan_plan *sp = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &sp, &err), err);
    const floe_scan_task *victim = NULL;
    for (size_t i = 0; i < sp->ntasks; i++)
        if (!strcmp(sp->tasks[i].file->file_path, plan->groups[0].inputs[0].file->file_path))
            victim = &sp->tasks[i];
    REQUIRE(victim != NULL);
    commit_position_delete(&e, victim, 0);
    floe_scan_plan_free(sp);
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite_execute(e.t, plan, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_committed, 2);
    CHECK_EQ_INT(r.groups_failed, 1);
    CHECK(strstr(r.first_failure, "added deletes") != NULL);
    /* the delete file stays live: its bytes count in total-files-size */
    harness_check_summary_totals(e.t);
    char *after = harness_table_rows(e.t, &n1);
    CHECK_EQ_INT(n1, n0 - 1);
    floe_rewrite_plan_free(plan);
    /* now rewrite with the delete applied and removed */
    rewrite_opts(&o, 2);
    o.remove_dangling_deletes = true;
    o.rewrite_all = true;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.failed_data_files_count, 0);
    CHECK_EQ_INT(r.records_deleted, 1);
    CHECK_EQ_INT(r.removed_delete_files_count, 1);
    harness_check_summary_totals(e.t);
    char *again = harness_table_rows(e.t, &n2);
    CHECK_EQ_INT(n2, n1);
    CHECK(after && again && !strcmp(after, again));
    int64_t dels = -1;
    live_files(e.t, &dels);
    CHECK_EQ_INT(dels, 0);
    free(before);
    free(after);
    free(again);
    env_close(&e);
}

/* A snapshot another writer committed without summary totals (the position delete
 * below): the next floe snapshots still record all six, counted from the manifests,
 * whether they change the live files (append, rewrite) or not (rewrite-manifests). */
TEST(test_totals_after_foreign_snapshot) {
    env e;
    env_open(&e, NULL, NULL, "f");
    for (int k = 0; k < 2; k++)
        append_rows(&e, k * 1000, 40);
    floe_error err;
    floe_scan_plan *sp = NULL;
    REQUIRE_OK(floe_scan_plan_files(e.t, NULL, &sp, &err), err);
    REQUIRE(sp->ntasks > 0);
    commit_position_delete(&e, &sp->tasks[0], 3);
    floe_scan_plan_free(sp);
    floe_rewrite_manifests_options mo;
    floe_rewrite_manifests_options_init(&mo);
    mo.target_size_bytes = 1; /* one manifest per content */
    floe_rewrite_manifests_result mr;
    REQUIRE_OK(floe_maint_rewrite_manifests(e.t, &mo, &mr, &err), err);
    CHECK(mr.snapshot_id != 0);
    harness_check_summary_totals(e.t);
    append_rows(&e, 5000, 30); /* checks the append's totals itself */
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    o.rewrite_all = true;
    floe_rewrite_result r;
    REQUIRE_OK(floe_rewrite(e.t, &o, &r, &err), err);
    CHECK_EQ_INT(r.groups_failed, 0);
    harness_check_summary_totals(e.t);
    env_close(&e);
}

/* A snapshot naming a data file live twice (a copied manifest in its list, as another
 * writer could leave it) is refused by planning: a scan would return its rows twice and a
 * rewrite would write them twice, for good. */
TEST(test_file_live_twice_refused) {
    env e;
    env_open(&e, NULL, NULL, "twice");
    append_rows(&e, 0, 50);
    append_rows(&e, 1000, 60);
    floe_error err;
    const floe_snapshot *s = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    REQUIRE(s && s->manifest_list);
    int64_t snap = s->snapshot_id;
    char *list_uri = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, s->manifest_list, &list_uri, &err), err);
    floe_arena a;
    floe_arena_init(&a, 4096);
    floe_manifest_list ml;
    REQUIRE_OK(floe_manifest_list_read(floe_table_io(e.t), list_uri, NULL, &a, &ml, &err), err);
    REQUIRE(ml.nfiles >= 1);
    /* a copy of the first manifest under another name, listed beside the original */
    floe_buf m;
    floe_buf_init(&m, 0);
    char *src = NULL;
    REQUIRE_OK(floe_table_resolve_path(e.t, ml.files[0].manifest_path, &src, &err), err);
    REQUIRE_OK(floe_io_read_all(floe_table_io(e.t), src, 64 << 20, &m, &err), err);
    char copy[4200];
    snprintf(copy, sizeof copy, "%s-copy.avro", src);
    REQUIRE_OK(floe_io_write_all(floe_table_io(e.t), copy, m.data, m.len, NULL, &err), err);
    floe_manifest_file *files = floe_arena_alloc(&a, (ml.nfiles + 1) * sizeof *files);
    REQUIRE(files);
    memcpy(files, ml.files, ml.nfiles * sizeof *files);
    files[ml.nfiles] = ml.files[0];
    files[ml.nfiles].manifest_path = copy;
    floe_manifest_list_write_options lo;
    floe_manifest_list_write_options_init(&lo);
    lo.snapshot_id = snap;
    lo.sequence_number = s->sequence_number;
    lo.has_parent = s->has_parent;
    lo.parent_snapshot_id = s->parent_snapshot_id;
    REQUIRE_OK(floe_manifest_list_write(floe_table_io(e.t), list_uri, &lo, files, ml.nfiles + 1,
                                        NULL, NULL, &err), err);

    floe_scan_plan *sp = NULL;
    CHECK_EQ_INT(floe_scan_plan_files(e.t, NULL, &sp, &err), FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "is live in two manifest entries") != NULL);
    CHECK(strstr(err.msg, copy) != NULL);
    floe_rewrite_options o;
    rewrite_opts(&o, 1);
    o.rewrite_all = true;
    floe_rewrite_result r;
    CHECK_EQ_INT(floe_rewrite(e.t, &o, &r, &err), FLOE_ECORRUPT);
    REQUIRE_OK(floe_table_refresh(e.t, &err), err);
    s = floe_table_metadata_current_snapshot(floe_table_metadata_get(e.t));
    CHECK(s && s->snapshot_id == snap); /* nothing committed */
    floe_buf_free(&m);
    floe_free(src);
    floe_free(list_uri);
    floe_arena_reset(&a);
    env_close(&e);
}

int main(void) {
    RUN(test_options);
    RUN(test_band_edges);
    RUN(test_min_input_files);
    RUN(test_group_splitting);
    RUN(test_deletes_select);
    RUN(test_expected_outputs);
    RUN(test_tier_bounds);
    RUN(test_tier_choices);
    RUN(test_tier_cap_cold_forced);
    RUN(test_tier_write_amplification);
    RUN(test_roundtrip_unpartitioned);
    RUN(test_roundtrip_partitioned);
    RUN(test_sort_strategy);
    RUN(test_concurrent_removal);
    RUN(test_concurrent_delete);
    RUN(test_unsorted_position_deletes);
    RUN(test_position_delete_path_pruning);
    RUN(test_path_commit_cleanup_and_stale_base);
    RUN(test_attempts_counted);
    RUN(test_rewritten_manifests_combined);
    RUN(test_totals_after_foreign_snapshot);
    RUN(test_file_live_twice_refused);
    return harness_finish();
}
