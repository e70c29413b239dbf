/*
 * rewrite_plan.c - planning a rewrite: options, Iceberg's bin-pack file selection,
 * grouping and group filtering, expected output counts, and the plan of a table.
 *
 * Facts from Iceberg Java (core, org.apache.iceberg.actions): SizeBasedFileRewritePlanner
 * (size thresholds, expectedOutputFiles, inputSplitSize, writeMaxFileSize, the group
 * predicates), BinPackRewriteFilePlanner (delete-file and delete-ratio thresholds,
 * grouping by partition with files of other specs pooled as "unpartitioned",
 * max-files-to-rewrite, job order), util.BinPacking.ListPacker with look-back 1 (a
 * sequential packer: a file that does not fit closes the open group).
 *
 * Invariants:
 *   P1. The planner is pure over (partition, size, record count, deletes): the same table
 *       state and options always give the same groups in the same order.
 *   P2. Every pointer in a plan lives in the plan (its arena, its scan plan).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "floe/append.h"
#include "floe/io.h"
#include "floe/scan.h"
#include "iceberg/scan_internal.h"
#include "rewrite_internal.h"

#define DEFAULT_TARGET (512LL * 1024 * 1024)
#define DEFAULT_MAX_GROUP (100LL * 1024 * 1024 * 1024)
#define SPLIT_OVERHEAD (5LL * 1024)

/* ---------------------------------------------------------------------------------------
 * options
 * ------------------------------------------------------------------------------------- */

void floe_rewrite_options_init(floe_rewrite_options *o) {
    memset(o, 0, sizeof *o);
    o->target_file_size = 0;
    o->min_file_size = -1;
    o->max_file_size = -1;
    o->min_input_files = 5;
    o->max_file_group_size = DEFAULT_MAX_GROUP;
    o->max_files_to_rewrite = 0;
    o->delete_file_threshold = INT32_MAX;
    o->delete_ratio_threshold = 0.3;
    o->partial_max_commits = 10;
    o->partial_max_failed_commits = -1;
    o->max_concurrent_groups = 5;
    o->job_order = FLOE_RW_ORDER_NONE;
    o->use_starting_sequence_number = true;
    o->output_spec_id = -1;
    o->planner = FLOE_RW_PLANNER_BINPACK;
    o->tier_fanout = 5;
    o->max_partition_files = 10;
    o->cold_partition_age_ms = 3600000;
    o->strategy = FLOE_RW_BINPACK;
    o->fast_copy = -1;
    o->page_carry = true;
    o->fsync = true;
}

static bool parse_bool(const char *s, bool *out) {
    if (!strcasecmp(s, "true") || !strcmp(s, "1")) {
        *out = true;
        return true;
    }
    if (!strcasecmp(s, "false") || !strcmp(s, "0")) {
        *out = false;
        return true;
    }
    return false;
}

int floe_rewrite_option_set(floe_rewrite_options *o, const char *key, const char *value,
                            floe_error *err) {
    int64_t v = 0;
    bool b = false;
#define NEED_INT()                                                                     \
    FLOE_RETURN_ERROR_IF(!floe_parse_i64_cstr(value, &v), err, FLOE_EINVALID,                    \
                         "option %s=%s: expected an integer", key, value)
#define NEED_BOOL()                                                                    \
    FLOE_RETURN_ERROR_IF(!parse_bool(value, &b), err, FLOE_EINVALID,                   \
                         "option %s=%s: expected true or false", key, value)
    if (!strcmp(key, FLOE_RW_TARGET_FILE_SIZE)) {
        NEED_INT();
        o->target_file_size = v;
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
    } else if (!strcmp(key, FLOE_RW_MIN_FILE_SIZE)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 0",
                             key, value);
        o->min_file_size = v;
    } else if (!strcmp(key, FLOE_RW_MAX_FILE_SIZE)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
        o->max_file_size = v;
    } else if (!strcmp(key, FLOE_RW_MIN_INPUT_FILES)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
        o->min_input_files = v;
    } else if (!strcmp(key, FLOE_RW_REWRITE_ALL)) {
        NEED_BOOL();
        o->rewrite_all = b;
    } else if (!strcmp(key, FLOE_RW_MAX_GROUP_SIZE)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
        o->max_file_group_size = v;
    } else if (!strcmp(key, FLOE_RW_MAX_FILES)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID,
                             "Cannot set %s to %s, the value must be positive integer.", key,
                             value);
        o->max_files_to_rewrite = v;
    } else if (!strcmp(key, FLOE_RW_DELETE_FILE_THRESHOLD)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 0",
                             key, value);
        o->delete_file_threshold = v;
    } else if (!strcmp(key, FLOE_RW_DELETE_RATIO)) {
        char *end;
        double d = strtod(value, &end);
        FLOE_RETURN_ERROR_IF(end == value || *end || !(d > 0) || d > 1, err, FLOE_EINVALID,
                             "'%s' is set to %s but must be > 0 and <= 1", key, value);
        o->delete_ratio_threshold = d;
    } else if (!strcmp(key, FLOE_RW_PARTIAL)) {
        NEED_BOOL();
        o->partial_progress = b;
    } else if (!strcmp(key, FLOE_RW_PARTIAL_MAX_COMMITS)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 1, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 1",
                             key, value);
        o->partial_max_commits = v;
    } else if (!strcmp(key, FLOE_RW_PARTIAL_MAX_FAILED)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 0",
                             key, value);
        o->partial_max_failed_commits = v;
    } else if (!strcmp(key, FLOE_RW_MAX_CONCURRENT)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 1, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 1",
                             key, value);
        o->max_concurrent_groups = v;
    } else if (!strcmp(key, FLOE_RW_JOB_ORDER)) {
        if (!strcasecmp(value, "none"))
            o->job_order = FLOE_RW_ORDER_NONE;
        else if (!strcasecmp(value, "bytes-asc"))
            o->job_order = FLOE_RW_ORDER_BYTES_ASC;
        else if (!strcasecmp(value, "bytes-desc"))
            o->job_order = FLOE_RW_ORDER_BYTES_DESC;
        else if (!strcasecmp(value, "files-asc"))
            o->job_order = FLOE_RW_ORDER_FILES_ASC;
        else if (!strcasecmp(value, "files-desc"))
            o->job_order = FLOE_RW_ORDER_FILES_DESC;
        else
            return floe_error_set(err, FLOE_EINVALID,
                                  "Invalid rewrite job order name: %s (none, bytes-asc, "
                                  "bytes-desc, files-asc, files-desc)", value);
    } else if (!strcmp(key, FLOE_RW_USE_START_SEQ)) {
        NEED_BOOL();
        o->use_starting_sequence_number = b;
    } else if (!strcmp(key, FLOE_RW_REMOVE_DANGLING)) {
        NEED_BOOL();
        o->remove_dangling_deletes = b;
    } else if (!strcmp(key, FLOE_RW_OUTPUT_SPEC)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0 || v > INT32_MAX, err, FLOE_EINVALID,
                             "option %s=%s: not a spec id", key, value);
        o->output_spec_id = (int32_t)v;
    } else if (!strcmp(key, FLOE_RW_FORMAT_VERSION)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v != 1 && v != 2, err, FLOE_EINVALID,
                             "option %s=%s: floe writes format versions 1 and 2", key, value);
        o->format_version = (int)v;
    } else if (!strcmp(key, FLOE_RW_PLANNER)) {
        if (!strcasecmp(value, "bin-pack") || !strcasecmp(value, "binpack"))
            o->planner = FLOE_RW_PLANNER_BINPACK;
        else if (!strcasecmp(value, "generational"))
            o->planner = FLOE_RW_PLANNER_GENERATIONAL;
        else
            return floe_error_set(err, FLOE_EINVALID,
                                  "option %s=%s: expected bin-pack or generational", key,
                                  value);
    } else if (!strcmp(key, FLOE_RW_TIER_FANOUT)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 2 || v > 1000, err, FLOE_EINVALID,
                             "'%s' is set to %s but must be 2..1000", key, value);
        o->tier_fanout = v;
    } else if (!strcmp(key, FLOE_RW_MAX_PARTITION_FILES)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 2, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 2",
                             key, value);
        o->max_partition_files = v;
    } else if (!strcmp(key, FLOE_RW_COLD_PARTITION_AGE)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0, err, FLOE_EINVALID, "'%s' is set to %s but must be >= 0",
                             key, value);
        o->cold_partition_age_ms = v;
    } else if (!strcmp(key, FLOE_RW_THREADS)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 0 || v > 1024, err, FLOE_EINVALID,
                             "option %s=%s: expected 0..1024", key, value);
        o->threads = (int)v;
    } else if (!strcmp(key, FLOE_RW_FAST_COPY)) {
        if (!strcasecmp(value, "auto")) {
            o->fast_copy = -1;
        } else {
            NEED_BOOL();
            o->fast_copy = b;
        }
    } else if (!strcmp(key, FLOE_RW_PAGE_CARRY)) {
        NEED_BOOL();
        o->page_carry = b;
    } else if (!strcmp(key, FLOE_RW_SORT_BUFFER)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
        o->sort_buffer_bytes = v;
    } else if (!strcmp(key, FLOE_RW_EQ_DELETE_BUFFER)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v <= 0, err, FLOE_EINVALID, "'%s' is set to %s but must be > 0",
                             key, value);
        o->eq_delete_buffer_bytes = v;
    } else if (!strcmp(key, FLOE_RW_ZORDER_VAR_LEN)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 1, err, FLOE_EINVALID,
                             "Cannot use less than 1 byte for variable length types with "
                             "zOrder, '%s' was set to %s", key, value);
        FLOE_RETURN_ERROR_IF(v > INT32_MAX, err, FLOE_EINVALID,
                             "'%s' is set to %s, more than the largest value, %d", key, value,
                             INT32_MAX);
        o->zorder_var_length_contribution = v;
    } else if (!strcmp(key, FLOE_RW_ZORDER_MAX_OUTPUT)) {
        NEED_INT();
        FLOE_RETURN_ERROR_IF(v < 1, err, FLOE_EINVALID,
                             "Cannot have the interleaved ZOrder value use less than 1 byte, "
                             "'%s' was set to %s", key, value);
        FLOE_RETURN_ERROR_IF(v > INT32_MAX, err, FLOE_EINVALID,
                             "'%s' is set to %s, more than the largest value, %d", key, value,
                             INT32_MAX);
        o->zorder_max_output_size = v;
    } else {
        return floe_error_set(err, FLOE_EINVALID, "unknown rewrite option '%s'", key);
    }
#undef NEED_INT
#undef NEED_BOOL
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * the pure planner
 * ------------------------------------------------------------------------------------- */

int floe_rewrite_limits_resolve(const floe_rewrite_options *o, int64_t table_target,
                                floe_rewrite_limits *out, floe_error *err) {
    floe_rewrite_limits l = {0};
    l.target = o->target_file_size > 0 ? o->target_file_size
                                       : (table_target > 0 ? table_target : DEFAULT_TARGET);
    l.min = o->min_file_size >= 0 ? o->min_file_size : (int64_t)((double)l.target * 0.75);
    l.max = o->max_file_size >= 0 ? o->max_file_size : (int64_t)((double)l.target * 1.80);
    FLOE_RETURN_ERROR_IF(l.min < 0, err, FLOE_EINVALID, "'%s' is set to %" PRId64
                         " but must be >= 0", FLOE_RW_MIN_FILE_SIZE, l.min);
    FLOE_RETURN_ERROR_IF(!(l.target > l.min), err, FLOE_EINVALID,
                         "'%s' (%" PRId64 ") must be > '%s' (%" PRId64 "), all new files "
                         "will be smaller than the min threshold",
                         FLOE_RW_TARGET_FILE_SIZE, l.target, FLOE_RW_MIN_FILE_SIZE, l.min);
    FLOE_RETURN_ERROR_IF(!(l.target < l.max), err, FLOE_EINVALID,
                         "'%s' (%" PRId64 ") must be < '%s' (%" PRId64 "), all new files "
                         "will be larger than the max threshold",
                         FLOE_RW_TARGET_FILE_SIZE, l.target, FLOE_RW_MAX_FILE_SIZE, l.max);
    FLOE_RETURN_ERROR_IF(o->min_input_files <= 0, err, FLOE_EINVALID,
                         "'%s' must be > 0", FLOE_RW_MIN_INPUT_FILES);
    FLOE_RETURN_ERROR_IF(o->max_file_group_size <= 0, err, FLOE_EINVALID,
                         "'%s' must be > 0", FLOE_RW_MAX_GROUP_SIZE);
    FLOE_RETURN_ERROR_IF(!(o->delete_ratio_threshold > 0) || o->delete_ratio_threshold > 1,
                         err, FLOE_EINVALID, "'%s' must be > 0 and <= 1",
                         FLOE_RW_DELETE_RATIO);
    l.min_input_files = o->min_input_files;
    l.rewrite_all = o->rewrite_all;
    l.max_group_size = o->max_file_group_size;
    l.delete_file_threshold = o->delete_file_threshold;
    l.delete_ratio_threshold = o->delete_ratio_threshold;
    FLOE_RETURN_ERROR_IF(o->tier_fanout < 2, err, FLOE_EINVALID, "'%s' must be >= 2",
                         FLOE_RW_TIER_FANOUT);
    FLOE_RETURN_ERROR_IF(o->max_partition_files < 2, err, FLOE_EINVALID, "'%s' must be >= 2",
                         FLOE_RW_MAX_PARTITION_FILES);
    l.tier_fanout = o->tier_fanout;
    l.max_partition_files = o->max_partition_files;
    *out = l;
    return 0;
}

int64_t floe_rewrite_write_max_file_size(const floe_rewrite_limits *l) {
    return (int64_t)((double)l->target + (double)(l->max - l->target) * 0.5);
}

int64_t floe_rewrite_expected_output_files(const floe_rewrite_limits *l, int64_t input_size) {
    if (input_size < l->target)
        return 1;
    int64_t with_rem = input_size / l->target + (input_size % l->target ? 1 : 0);
    int64_t without_rem = input_size / l->target;
    int64_t avg_without = input_size / without_rem;
    double write_max = (double)floe_rewrite_write_max_file_size(l);
    double limit = 1.1 * (double)l->target;
    if (write_max < limit)
        limit = write_max;
    if (input_size % l->target > l->min)
        return with_rem; /* the remainder makes a file of a valid size */
    if ((double)avg_without < limit)
        return without_rem; /* spread the remainder: files stay within 10% of target */
    return with_rem;
}

int64_t floe_rewrite_split_size(const floe_rewrite_limits *l, int64_t input_size) {
    int64_t est = input_size / floe_rewrite_expected_output_files(l, input_size) + SPLIT_OVERHEAD;
    if (est < l->target)
        return l->target;
    int64_t wm = floe_rewrite_write_max_file_size(l);
    return est < wm ? est : wm;
}

static bool outside_range(const floe_rewrite_limits *l, const floe_rewrite_candidate *c) {
    return c->size < l->min || c->size > l->max;
}

static bool too_many_deletes(const floe_rewrite_limits *l, const floe_rewrite_candidate *c) {
    return c->delete_files >= l->delete_file_threshold;
}

static bool too_high_delete_ratio(const floe_rewrite_limits *l,
                                  const floe_rewrite_candidate *c) {
    if (c->delete_files <= 0)
        return false;
    double deleted = (double)(c->file_scoped_delete_records < c->record_count
                                  ? c->file_scoped_delete_records
                                  : c->record_count);
    if (c->record_count <= 0)
        return deleted > 0; /* x/0 is +inf in Java; 0/0 is NaN, never >= */
    return deleted / (double)c->record_count >= l->delete_ratio_threshold;
}

int floe_rewrite_pack_partition(const floe_rewrite_limits *l,
                                const floe_rewrite_candidate *c, size_t n, int **group_of,
                                size_t *ngroups, floe_error *err) {
    int *g = floe_malloc((n ? n : 1) * sizeof *g);
    FLOE_RETURN_ERROR_IF(!g, err, FLOE_ENOMEM, "out of memory");
    /* pack: one open group; a file that does not fit closes it (look-back 1) */
    int bins = 0;
    int64_t weight = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        g[i] = -1;
        if (!l->rewrite_all && !outside_range(l, &c[i]) && !too_many_deletes(l, &c[i]) &&
            !too_high_delete_ratio(l, &c[i]))
            continue;
        if (open && weight + c[i].size <= l->max_group_size) {
            weight += c[i].size;
        } else {
            bins++;
            weight = c[i].size;
            open = true;
        }
        g[i] = bins - 1;
    }
    /* filter groups (rewrite-all keeps every group, as Iceberg releases do) */
    int *keep = floe_calloc(bins ? (size_t)bins : 1, sizeof *keep);
    if (!keep) {
        floe_free(g);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    for (int b = 0; b < bins; b++) {
        int64_t files = 0, size = 0;
        bool dels = false;
        for (size_t i = 0; i < n; i++) {
            if (g[i] != b)
                continue;
            files++;
            size += c[i].size;
            dels |= too_many_deletes(l, &c[i]) || too_high_delete_ratio(l, &c[i]);
        }
        bool enough_files = files > 1 && files >= l->min_input_files;
        bool enough_content = files > 1 && size > l->target;
        bool too_much = size > l->max;
        keep[b] = l->rewrite_all || enough_files || enough_content || too_much || dels;
    }
    int next = 0;
    int *renum = floe_malloc((bins ? (size_t)bins : 1) * sizeof *renum);
    if (!renum) {
        floe_free(g);
        floe_free(keep);
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    }
    for (int b = 0; b < bins; b++)
        renum[b] = keep[b] ? next++ : -1;
    for (size_t i = 0; i < n; i++)
        if (g[i] >= 0)
            g[i] = renum[g[i]];
    floe_free(keep);
    floe_free(renum);
    *group_of = g;
    *ngroups = (size_t)next;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * the generational planner
 * ------------------------------------------------------------------------------------- */

int floe_rewrite_tier_of(const floe_rewrite_limits *l, int64_t size) {
    if (size >= l->min)
        return -1;
    int64_t f = l->tier_fanout >= 2 ? l->tier_fanout : 2;
    int tier = 0;
    /* tier k holds [min / F^(k+1), min / F^k) */
    for (int64_t lower = l->min / f; size < lower && lower > 0; lower /= f)
        tier++;
    return tier;
}

int floe_rewrite_tier_partition(const floe_rewrite_limits *l, const floe_rewrite_candidate *c,
                                size_t n, bool cold, int **group_of, size_t *ngroups,
                                floe_error *err) {
    if (cold)
        return floe_rewrite_pack_partition(l, c, n, group_of, ngroups, err);
    int *g = floe_malloc((n ? n : 1) * sizeof *g);
    int *tier = floe_malloc((n ? n : 1) * sizeof *tier);
    int rc = 0;
    if (!g || !tier)
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    /* forced: what bin-pack would rewrite whatever the tiers say (oversized files, files
     * with too many deletes); the rest under the minimum is tiered */
    int top = -1; /* largest tier number present */
    bool forced_small = false;
    for (size_t i = 0; i < n; i++) {
        g[i] = -1;
        bool forced = c[i].size > l->max || too_many_deletes(l, &c[i]) ||
                      too_high_delete_ratio(l, &c[i]);
        tier[i] = forced && c[i].size >= l->min ? -2 : floe_rewrite_tier_of(l, c[i].size);
        if (forced && tier[i] >= 0)
            forced_small = true;
        if (tier[i] > top)
            top = tier[i];
    }
    /* count and bytes per tier */
    size_t nt = (size_t)(top + 1);
    int64_t *cnt = floe_calloc(nt ? nt : 1, sizeof *cnt);
    int64_t *bytes = floe_calloc(nt ? nt : 1, sizeof *bytes);
    if (!cnt || !bytes) {
        floe_free(cnt);
        floe_free(bytes);
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (tier[i] >= 0) {
            cnt[tier[i]]++;
            bytes[tier[i]] += c[i].size;
        }
    /* From the smallest files up: tier k joins the group when it is full by itself, or
     * when the merge of everything smaller lands in it and completes it, or lands above
     * it. `upto` ends as the largest tier (smallest number) the group reaches; the group
     * is every tiered file of that tier or a smaller one. */
    const int64_t f = l->tier_fanout;
    int upto = -1;
    int64_t below = 0; /* bytes of the tiers below k */
    bool paying = false; /* the merge of everything below k is worth doing */
    for (int k = top; k >= 0; k--) {
        bool join = cnt[k] >= f;
        if (!join && paying) {
            int lands = floe_rewrite_tier_of(l, below);
            join = lands < k || (lands == k && cnt[k] + 1 >= f);
        }
        if (join) {
            upto = k;
            paying = true;
        } else if (paying) {
            break; /* the output waits in tier `lands` for its peers */
        }
        below += bytes[k];
    }
    if (upto < 0 && forced_small)
        upto = top; /* the forced small files carry every file of their size and smaller */
    if (upto >= 0 && forced_small) {
        for (size_t i = 0; i < n; i++)
            if (tier[i] >= 0 && tier[i] < upto && (c[i].size > l->max ||
                                                   too_many_deletes(l, &c[i]) ||
                                                   too_high_delete_ratio(l, &c[i])))
                upto = tier[i];
    }
    /* the partition keeps at most max_partition_files files under the minimum */
    for (;;) {
        int64_t left = 0;
        for (int k = 0; k < (upto >= 0 ? upto : (int)nt); k++)
            left += cnt[k];
        int64_t after = left + (upto >= 0 ? 1 : 0);
        if (after <= l->max_partition_files || upto == 0 || nt == 0)
            break;
        upto = upto < 0 ? top : upto - 1;
        while (upto > 0 && cnt[upto] == 0)
            upto--;
    }
    floe_free(cnt);
    floe_free(bytes);
    size_t groups = 0;
    size_t in_tier_group = 0;
    if (upto >= 0)
        for (size_t i = 0; i < n; i++)
            if (tier[i] >= upto) {
                g[i] = 0;
                in_tier_group++;
            }
    if (in_tier_group >= 2 || (in_tier_group == 1 && forced_small))
        groups = 1;
    else
        for (size_t i = 0; i < n; i++)
            g[i] = -1;
    /* oversized and delete-heavy large files: bin-packed into groups of their own */
    int64_t weight = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (tier[i] != -2)
            continue;
        if (open && weight + c[i].size <= l->max_group_size) {
            weight += c[i].size;
        } else {
            groups++;
            weight = c[i].size;
            open = true;
        }
        g[i] = (int)groups - 1;
    }
    *group_of = g;
    g = NULL;
    *ngroups = groups;
done:
    floe_free(g);
    floe_free(tier);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * planning a table
 * ------------------------------------------------------------------------------------- */

const floe_partition_spec *rw_plan_spec(const floe_rewrite_plan *p, int32_t spec_id) {
    for (size_t i = 0; i < p->priv->nspecs; i++)
        if (p->priv->spec_ids[i] == spec_id)
            return p->priv->specs[i];
    return NULL;
}

const floe_schema *rw_plan_spec_schema(const floe_rewrite_plan *p, int32_t spec_id) {
    for (size_t i = 0; i < p->priv->nspecs; i++)
        if (p->priv->spec_ids[i] == spec_id)
            return p->priv->spec_schemas[i];
    return NULL;
}

void floe_rewrite_plan_free(floe_rewrite_plan *p) {
    if (!p)
        return;
    if (p->priv) {
        floe_scan_plan_free(p->priv->scan);
        floe_arena_reset(&p->priv->arena);
        for (size_t i = 0; i < p->priv->nspecs; i++) {
            floe_partition_spec_free(p->priv->specs[i]);
            floe_schema_free(p->priv->spec_schemas[i]);
        }
        floe_free(p->priv->specs);
        floe_free(p->priv->spec_schemas);
        floe_free(p->priv->spec_ids);
        floe_sort_order_free(p->priv->sort);
        floe_sort_order_free(p->priv->own_sort);
        rw_zorder_free(p->priv->zorder);
        floe_schema_free(p->priv->schema);
        floe_schema_free(p->priv->table_schema);
        floe_free(p->priv->name_mapping);
        floe_free(p->priv->data_dir_rec);
        floe_free(p->priv->data_dir_phys);
        floe_metrics_config_free(p->priv->metrics);
        floe_free(p->priv);
    }
    floe_free(p->groups);
    floe_free(p);
}

/* Binary key of a partition: spec id + per value a null flag and Appendix D bytes. */
static int partition_key(int32_t spec_id, const floe_value *v, size_t n, floe_buf *out,
                         floe_error *err) {
    floe_buf_reset(out);
    FLOE_FORWARD_IF_ERROR(floe_buf_append(out, &spec_id, sizeof spec_id) < 0
                              ? floe_error_set(err, FLOE_ENOMEM, "out of memory")
                              : 0);
    for (size_t i = 0; i < n; i++) {
        size_t at = out->len;
        uint32_t len = 0;
        if (floe_buf_append_byte(out, v[i].is_null ? 0 : 1) < 0 ||
            floe_buf_append(out, &len, sizeof len) < 0)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        if (!v[i].is_null) {
            FLOE_FORWARD_IF_ERROR(floe_value_to_binary(&v[i], out, err));
            len = (uint32_t)(out->len - at - 1 - sizeof len);
            memcpy(out->data + at + 1, &len, sizeof len);
        }
    }
    return 0;
}

typedef struct part_bucket {
    char *key;
    size_t keylen;
    int32_t spec_id;             /* -1: files of other specs pooled */
    const floe_scan_task *first;
    size_t *tasks;
    size_t ntasks, cap;
} part_bucket;

static int cmp_groups(const void *a, const void *b, floe_rewrite_job_order order) {
    const floe_rewrite_group *x = a, *y = b;
    int c = 0;
    switch (order) {
    case FLOE_RW_ORDER_BYTES_ASC:
        c = (x->input_bytes > y->input_bytes) - (x->input_bytes < y->input_bytes);
        break;
    case FLOE_RW_ORDER_BYTES_DESC:
        c = (x->input_bytes < y->input_bytes) - (x->input_bytes > y->input_bytes);
        break;
    case FLOE_RW_ORDER_FILES_ASC:
        c = (x->ninputs > y->ninputs) - (x->ninputs < y->ninputs);
        break;
    case FLOE_RW_ORDER_FILES_DESC:
        c = (x->ninputs < y->ninputs) - (x->ninputs > y->ninputs);
        break;
    default:
        break;
    }
    /* stable: equal groups keep planning order */
    return c ? c : (x->global_index > y->global_index) - (x->global_index < y->global_index);
}

static int cmp_groups_r(const void *a, const void *b, void *ctx) {
    return cmp_groups(a, b, *(const floe_rewrite_job_order *)ctx);
}

/* When the data of sequence number seq was committed: its snapshot's timestamp, else
 * (that snapshot expired) estimated from the commit rate of the snapshots still there;
 * -1 when it cannot be told. */
static int64_t committed_ms(const floe_table_metadata *m, int64_t seq) {
    const floe_snapshot *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const floe_snapshot *s = &m->snapshots[i];
        if (s->sequence_number == seq)
            return s->timestamp_ms;
        if (!lo || s->sequence_number < lo->sequence_number)
            lo = s;
        if (!hi || s->sequence_number > hi->sequence_number)
            hi = s;
    }
    if (!lo || lo == hi || hi->sequence_number <= lo->sequence_number || seq > lo->sequence_number)
        return -1;
    double ms_per_commit = (double)(hi->timestamp_ms - lo->timestamp_ms) /
                           (double)(hi->sequence_number - lo->sequence_number);
    return lo->timestamp_ms - (int64_t)(ms_per_commit * (double)(lo->sequence_number - seq));
}

static int load_specs(floe_rewrite_plan *p, const floe_table_metadata *m, floe_error *err) {
    floe_rewrite_plan_priv *pv = p->priv;
    pv->specs = floe_calloc(m->n_specs ? m->n_specs : 1, sizeof *pv->specs);
    pv->spec_ids = floe_calloc(m->n_specs ? m->n_specs : 1, sizeof *pv->spec_ids);
    pv->spec_schemas = floe_calloc(m->n_specs ? m->n_specs : 1, sizeof *pv->spec_schemas);
    FLOE_RETURN_ERROR_IF(!pv->specs || !pv->spec_ids || !pv->spec_schemas, err, FLOE_ENOMEM,
                         "out of memory");
    for (size_t i = 0; i < m->n_specs; i++) {
        floe_partition_spec *s = NULL;
        floe_schema *older = NULL;
        floe_error e2;
        floe_error_clear(&e2);
        int rc = floe_partition_spec_parse_json(m->specs[i].json, strlen(m->specs[i].json),
                                                pv->schema, &s, &e2);
        if (rc < 0 && rc != FLOE_ENOMEM) /* a source column was dropped since */
            rc = floe_table_metadata_bind_spec(m, m->specs[i].spec_id, &older, &s, &e2);
        if (rc == FLOE_ENOMEM)
            return floe_error_set(err, rc, "out of memory");
        if (rc < 0)
            s = NULL; /* binds to no schema of the table */
        pv->specs[pv->nspecs] = s;
        pv->spec_schemas[pv->nspecs] = older;
        pv->spec_ids[pv->nspecs++] = m->specs[i].spec_id;
    }
    return 0;
}

static int plan_sort(const floe_rewrite_options *o, floe_rewrite_plan *p, floe_error *err);

/* The schema rows of a format v3 table are rewritten with: the table's, plus the row
 * lineage columns (spec "Row Lineage": a row moved to another file keeps its _row_id and
 * _last_updated_sequence_number, written into the new file). A table column already
 * named like one is refused: the copy would be ambiguous. */
static int lineage_schema(const char *table_json, floe_schema **out, floe_error *err) {
    json_error_t je;
    json_t *doc = json_loads(table_json, 0, &je);
    json_t *fields = doc ? json_object_get(doc, "fields") : NULL;
    char *text = NULL;
    int rc = 0;
    if (!json_is_array(fields))
        FLOE_FAIL(err, FLOE_ECORRUPT, "current schema: not a struct with fields");
    for (size_t i = 0; i < json_array_size(fields); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(fields, i), "name"));
        if (name && floe_lineage_column(name))
            FLOE_FAIL(err, FLOE_EUNSUPPORTED, "the table has a column named %s, which format "
                      "v3 reserves for row lineage", name);
    }
    if (json_array_append_new(fields, json_pack("{s:i, s:s, s:b, s:s}", "id",
                                                FLOE_LINEAGE_ROW_ID_FIELD, "name",
                                                FLOE_LINEAGE_ROW_ID, "required", 0, "type",
                                                "long")) != 0 ||
        json_array_append_new(fields, json_pack("{s:i, s:s, s:b, s:s}", "id",
                                                FLOE_LINEAGE_SEQ_FIELD, "name",
                                                FLOE_LINEAGE_SEQ, "required", 0, "type",
                                                "long")) != 0 ||
        !(text = json_dumps(doc, JSON_COMPACT)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    FLOE_CHECK(floe_schema_parse(text, strlen(text), out, err));
done:
    free(text);
    json_decref(doc);
    return rc;
}

int rw_plan_setup(floe_table *t, const floe_rewrite_options *o, floe_rewrite_plan *p,
                  floe_error *err) {
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_rewrite_plan_priv *pv = p->priv;
    int rc = 0;
    const floe_metadata_schema *ms = floe_table_metadata_current_schema(m);
    if (!ms)
        FLOE_FAIL(err, FLOE_ECORRUPT, "table metadata without a current schema");
    FLOE_CHECK(floe_schema_parse(ms->json, strlen(ms->json), &pv->schema, err));
    FLOE_CHECK(floe_schema_check_defaults(pv->schema, err));
    if (m->format_version >= 3) {
        pv->table_schema = pv->schema;
        pv->schema = NULL;
        FLOE_CHECK(lineage_schema(ms->json, &pv->schema, err));
    }
    FLOE_CHECK(load_specs(p, m, err));
    p->output_spec_id = o->output_spec_id >= 0 ? o->output_spec_id : m->default_spec_id;
    if (!floe_table_metadata_spec(m, p->output_spec_id))
        FLOE_FAIL(err, FLOE_EINVALID,
                  "Cannot use output spec id %d because the table does not contain a "
                  "reference to this spec-id.",
                  p->output_spec_id);
    if (!rw_plan_spec(p, p->output_spec_id))
        FLOE_FAIL(err, FLOE_EINVALID,
                  "output spec %d binds to none of the table's schemas", p->output_spec_id);
    {
        const char *nm = floe_table_metadata_property(m, "schema.name-mapping.default");
        if (nm && !(pv->name_mapping = floe_strdup(nm)))
            FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m->n_sort_orders; i++) {
        const floe_metadata_sort_order *so = &m->sort_orders[i];
        if (so->order_id != m->default_sort_order_id || so->order_id == 0)
            continue;
        FLOE_CHECK(floe_sort_order_parse_json(so->json, strlen(so->json), pv->schema,
                                              &pv->sort, err));
    }
    FLOE_CHECK(plan_sort(o, p, err));
    FLOE_CHECK(floe_table_parquet_options(m, &pv->write, err));
    FLOE_CHECK(floe_rewrite_limits_resolve(o, pv->write.target_file_size, &p->limits, err));
    FLOE_CHECK(floe_table_data_dir(t, &pv->data_dir_rec, err));
    FLOE_CHECK(floe_table_resolve_path(t, pv->data_dir_rec, &pv->data_dir_phys, err));
    FLOE_CHECK(floe_metrics_config_new(m->properties, m->n_properties, pv->schema, pv->sort,
                                       &pv->metrics, err));
done:
    return rc;
}

/* What strategy SORT sorts by (priv->order or priv->zorder), and the options only a sort
 * or a z-order takes refused elsewhere. */
static int plan_sort(const floe_rewrite_options *o, floe_rewrite_plan *p, floe_error *err) {
    struct floe_rewrite_plan_priv *pv = p->priv;
    bool zorder = o->sort_order && rw_is_zorder(o->sort_order);
    if (o->strategy != FLOE_RW_SORT && (o->sort_order || o->sort_buffer_bytes))
        return floe_error_set(err, FLOE_EINVALID, "%s: only with strategy sort",
                              o->sort_order ? "a sort order" : FLOE_RW_SORT_BUFFER);
    if (!zorder && (o->zorder_var_length_contribution || o->zorder_max_output_size))
        return floe_error_set(err, FLOE_EINVALID,
                              "Cannot use options [%s], they are not supported by the action "
                              "or the rewriter (only by a zorder(...) sort order)",
                              o->zorder_var_length_contribution ? FLOE_RW_ZORDER_VAR_LEN
                                                                : FLOE_RW_ZORDER_MAX_OUTPUT);
    if (o->strategy != FLOE_RW_SORT)
        return 0;
    if (zorder)
        return rw_zorder_parse(o->sort_order, pv->schema, rw_plan_spec(p, p->output_spec_id),
                               o->zorder_var_length_contribution, o->zorder_max_output_size,
                               &pv->zorder, err);
    if (o->sort_order) {
        /* a sort order that does not parse or names no column is the caller's: invalid */
        if (floe_sort_order_parse(pv->schema, o->sort_order, 0, &pv->own_sort, err) < 0)
            return err->code == FLOE_ENOMEM ? err->code : (err->code = FLOE_EINVALID);
        FLOE_RETURN_ERROR_IF(pv->own_sort->nfields == 0, err, FLOE_EINVALID,
                             "sort order '%s': no column to sort by", o->sort_order);
        pv->order = pv->own_sort;
        return 0;
    }
    FLOE_RETURN_ERROR_IF(!pv->sort || pv->sort->nfields == 0, err, FLOE_EINVALID,
                         "--strategy sort: the table has no sort order (set one with floe "
                         "table sort-order NS.NAME set \"col [ASC|DESC], ...\", or give "
                         "--sort-order)");
    pv->order = pv->sort;
    return 0;
}

/* The plan's sequence number: the snapshot's, but never below what its files carry (a
 * snapshot without "sequence-number", hand-made v2 metadata, reads as 0). */
static void plan_sequence_number(floe_rewrite_plan *p, const floe_table_metadata *m,
                                 const floe_scan_plan *sp) {
    if (sp->snapshot_id >= 0) {
        const floe_snapshot *s = floe_table_metadata_snapshot(m, sp->snapshot_id);
        p->sequence_number = s ? s->sequence_number : 0;
    }
    for (size_t i = 0; i < sp->ntasks; i++) {
        const floe_scan_task *tk = &sp->tasks[i];
        if (tk->data_sequence_number > p->sequence_number)
            p->sequence_number = tk->data_sequence_number;
        for (size_t d = 0; d < tk->ndeletes; d++)
            if (tk->delete_sequence_numbers && tk->delete_sequence_numbers[d] > p->sequence_number)
                p->sequence_number = tk->delete_sequence_numbers[d];
    }
}

typedef struct bucket_set {
    part_bucket *b;
    size_t n, cap;
} bucket_set;

/* Group the scan's tasks by partition (by the values of their tuples, whatever schema
 * the spec binds to), in the order partitions first appear; files of other specs than
 * the output's are pooled in one bucket, or left out (p->files_left_out) when a source
 * column of the output spec has been dropped: their rows no longer have the values that
 * spec's partitions are made of. */
static int bucket_tasks(floe_rewrite_plan *p, const floe_scan_plan *sp, bucket_set *bs,
                        floe_error *err) {
    int rc = 0;
    floe_buf key;
    floe_buf_init(&key, 0);
    bool pool = !rw_plan_spec_schema(p, p->output_spec_id);
    for (size_t i = 0; i < sp->ntasks; i++) {
        const floe_scan_task *tk = &sp->tasks[i];
        bool same = tk->spec_id == p->output_spec_id;
        if (!same && !pool) {
            p->files_left_out++;
            continue;
        }
        int32_t sid = same ? tk->spec_id : -1;
        FLOE_CHECK(partition_key(sid, same ? tk->file->partition : NULL,
                                 same ? tk->file->npartition : 0, &key, err));
        part_bucket *b = NULL;
        for (size_t k = 0; k < bs->n && !b; k++)
            if (bs->b[k].keylen == key.len && !memcmp(bs->b[k].key, key.data, key.len))
                b = &bs->b[k];
        if (!b) {
            if (bs->n == bs->cap) {
                size_t nc = bs->cap ? bs->cap * 2 : 16;
                part_bucket *nb = floe_realloc(bs->b, nc * sizeof *nb);
                if (!nb)
                    FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
                bs->b = nb;
                bs->cap = nc;
            }
            b = &bs->b[bs->n++];
            memset(b, 0, sizeof *b);
            b->key = floe_arena_memdup(&p->priv->arena, key.data, key.len ? key.len : 1);
            if (!b->key)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            b->keylen = key.len;
            b->spec_id = sid;
            b->first = tk;
        }
        if (b->ntasks == b->cap) {
            size_t nc = b->cap ? b->cap * 2 : 16;
            size_t *nt = floe_realloc(b->tasks, nc * sizeof *nt);
            if (!nt)
                FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
            b->tasks = nt;
            b->cap = nc;
        }
        b->tasks[b->ntasks++] = i;
    }
done:
    floe_buf_free(&key);
    return rc;
}

/* What planning the partitions one after the other shares. */
typedef struct plan_state {
    floe_table *t;
    const floe_rewrite_options *o;
    floe_rewrite_plan *p;
    const floe_table_metadata *m;
    const floe_scan_plan *sp;
    size_t gcap;
    int global;                        /* groups numbered so far */
    int64_t files_left;                /* max_files_to_rewrite still allowed */
    int64_t now;
    floe_rewrite_candidate *cand;      /* the current partition's files */
    int *group_of;                     /* ... and the group of each */
    floe_buf text;
    /* delete files' URIs resolved so far (delete_uri): by the plan's entry */
    floe_hashset uris;
    const floe_data_file **uri_file;
    const char **uri_text;
    size_t nuris, uri_cap;
} plan_state;

/* Select and pack the files of partition b into groups: ps->group_of[k] for each, *ng
 * groups. */
static int partition_groups(plan_state *ps, const part_bucket *b, size_t *ng,
                            floe_error *err) {
    const floe_scan_plan *sp = ps->sp;
    const floe_rewrite_options *o = ps->o;
    floe_free(ps->cand);
    ps->cand = floe_calloc(b->ntasks ? b->ntasks : 1, sizeof *ps->cand);
    if (!ps->cand)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    floe_rewrite_candidate *cand = ps->cand;
    for (size_t k = 0; k < b->ntasks; k++) {
        const floe_scan_task *tk = &sp->tasks[b->tasks[k]];
        cand[k].size = tk->file->file_size_in_bytes;
        cand[k].record_count = tk->file->record_count;
        cand[k].delete_files = (int64_t)tk->ndeletes;
        for (size_t d = 0; d < tk->ndeletes; d++) {
            const char *path;
            size_t len;
            if (floe_pos_delete_scoped(tk->deletes[d], &path, &len))
                cand[k].file_scoped_delete_records += tk->deletes[d]->record_count;
        }
    }
    *ng = 0;
    floe_free(ps->group_of);
    ps->group_of = NULL;
    if (o->planner == FLOE_RW_PLANNER_GENERATIONAL) {
        int64_t newest = -1;
        for (size_t k = 0; k < b->ntasks; k++)
            if (sp->tasks[b->tasks[k]].data_sequence_number > newest)
                newest = sp->tasks[b->tasks[k]].data_sequence_number;
        int64_t at = committed_ms(ps->m, newest);
        bool cold = at >= 0 && ps->now - at > o->cold_partition_age_ms;
        return floe_rewrite_tier_partition(&ps->p->limits, cand, b->ntasks, cold,
                                           &ps->group_of, ng, err);
    }
    return floe_rewrite_pack_partition(&ps->p->limits, cand, b->ntasks, &ps->group_of, ng,
                                       err);
}

/* Partition b's text for display (in the plan's arena). */
static int partition_text(plan_state *ps, const part_bucket *b, const char **out,
                          floe_error *err) {
    *out = "";
    if (b->spec_id >= 0 && b->first->spec && b->first->file->npartition) {
        floe_buf_reset(&ps->text);
        FLOE_FORWARD_IF_ERROR(floe_partition_spec_path(b->first->spec, b->first->file->partition,
                                                       &ps->text, err));
        if (!(*out = floe_arena_strndup(&ps->p->priv->arena, (const char *)ps->text.data,
                                        ps->text.len)))
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    } else if (b->spec_id < 0) {
        *out = "(files of other specs, pooled)";
    }
    return 0;
}

/* The URI of delete file df (the scan plan's entry), resolved once: a delete file applies
 * to many data files (an upsert stream's equality deletes to every older one), and each
 * of their inputs names it. */
static int delete_uri(plan_state *ps, const floe_data_file *df, const char **out,
                      floe_error *err) {
    uint64_t h = floe_hash64(&df, sizeof df);
    size_t pos = 0;
    const int64_t *at;
    while ((at = floe_hashset_next(&ps->uris, h, &pos)))
        if (ps->uri_file[*at] == df) {
            *out = ps->uri_text[*at];
            return 0;
        }
    if (ps->nuris == ps->uri_cap) {
        size_t nc = ps->uri_cap ? ps->uri_cap * 2 : 64;
        const floe_data_file **nf = floe_realloc(ps->uri_file, nc * sizeof *nf);
        if (nf)
            ps->uri_file = nf;
        const char **nt = nf ? floe_realloc(ps->uri_text, nc * sizeof *nt) : NULL;
        if (!nt)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        ps->uri_text = nt;
        ps->uri_cap = nc;
    }
    char *u = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(ps->t, df->file_path, &u, err));
    const char *text = floe_arena_strdup(&ps->p->priv->arena, u);
    floe_free(u);
    if (!text || floe_hashset_add(&ps->uris, h, (int64_t)ps->nuris) < 0)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    ps->uri_file[ps->nuris] = df;
    ps->uri_text[ps->nuris++] = text;
    *out = text;
    return 0;
}

/* One input of a group: the task's file and deletes, with their URIs resolved. */
static int group_input(plan_state *ps, const floe_scan_task *tk, floe_rewrite_input *in,
                       floe_error *err) {
    floe_arena *arena = &ps->p->priv->arena;
    in->file = tk->file;
    in->spec_id = tk->spec_id;
    in->spec = tk->spec;
    in->data_sequence_number = tk->data_sequence_number;
    in->deletes = tk->deletes;
    in->delete_sequence_numbers = tk->delete_sequence_numbers;
    in->ndeletes = tk->ndeletes;
    char *u = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(ps->t, tk->file->file_path, &u, err));
    in->uri = floe_arena_strdup(arena, u);
    floe_free(u);
    in->delete_uris = floe_arena_alloc(arena, (tk->ndeletes + 1) * sizeof *in->delete_uris);
    if (!in->uri || !in->delete_uris)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    for (size_t d = 0; d < tk->ndeletes; d++)
        FLOE_FORWARD_IF_ERROR(delete_uri(ps, tk->deletes[d], &in->delete_uris[d], err));
    return 0;
}

/* Group gi of partition b joins the plan, cut to the files max_files_to_rewrite still
 * allows (none: it is counted and left out). */
static int add_group(plan_state *ps, const part_bucket *b, size_t gi, const char *ptext,
                     floe_error *err) {
    floe_rewrite_plan *p = ps->p;
    const int *group_of = ps->group_of;
    p->total_groups++;
    size_t cnt = 0;
    int64_t bytes_full = 0;
    for (size_t k = 0; k < b->ntasks; k++)
        if (group_of[k] == (int)gi) {
            cnt++;
            bytes_full += ps->cand[k].size;
        }
    if (ps->files_left <= 0)
        return 0;
    size_t take = (int64_t)cnt < ps->files_left ? cnt : (size_t)ps->files_left;
    if (ps->o->max_files_to_rewrite > 0)
        ps->files_left -= (int64_t)take;
    if (p->ngroups == ps->gcap) {
        size_t nc = ps->gcap ? ps->gcap * 2 : 16;
        floe_rewrite_group *ngp = floe_realloc(p->groups, nc * sizeof *ngp);
        if (!ngp)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        p->groups = ngp;
        ps->gcap = nc;
    }
    floe_rewrite_group *g = &p->groups[p->ngroups++];
    memset(g, 0, sizeof *g);
    g->global_index = ++ps->global;
    g->partition_index = (int)gi + 1;
    g->spec_id = b->spec_id;
    if (b->spec_id >= 0) {
        g->partition = b->first->file->partition;
        g->npartition = b->first->file->npartition;
    }
    g->partition_text = ptext;
    g->inputs = floe_arena_alloc(&p->priv->arena, take * sizeof *g->inputs + 1);
    if (!g->inputs)
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    /* Iceberg computes the sizes from the whole group even when cut */
    g->expected_output_files = floe_rewrite_expected_output_files(&p->limits, bytes_full);
    g->split_size = floe_rewrite_split_size(&p->limits, bytes_full);
    g->max_output_file_size = floe_rewrite_write_max_file_size(&p->limits);
    for (size_t k = 0; k < b->ntasks && g->ninputs < take; k++) {
        if (group_of[k] != (int)gi)
            continue;
        const floe_scan_task *tk = &ps->sp->tasks[b->tasks[k]];
        FLOE_FORWARD_IF_ERROR(group_input(ps, tk, &g->inputs[g->ninputs++], err));
        g->input_bytes += tk->file->file_size_in_bytes;
        g->input_records += tk->file->record_count;
    }
    return 0;
}

int floe_rewrite_options_check(floe_table *t, const floe_rewrite_options *o,
                               floe_error *err) {
    floe_rewrite_plan *p = floe_calloc(1, sizeof *p);
    int rc = 0;
    if (!p || !(p->priv = floe_calloc(1, sizeof *p->priv)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_arena_init(&p->priv->arena, 4096);
    rc = rw_plan_setup(t, o, p, err);
done:
    floe_rewrite_plan_free(p);
    return rc;
}

int floe_rewrite_plan_new(floe_table *t, const floe_rewrite_options *o,
                          floe_rewrite_plan **out, floe_error *err) {
    int64_t t0 = floe_now_ns();
    const floe_table_metadata *m = floe_table_metadata_get(t);
    floe_rewrite_plan *p = floe_calloc(1, sizeof *p);
    bucket_set bs = {0};
    plan_state ps;
    memset(&ps, 0, sizeof ps);
    floe_buf_init(&ps.text, 0);
    int rc = 0;
    if (!p || !(p->priv = floe_calloc(1, sizeof *p->priv)))
        FLOE_FAIL(err, FLOE_ENOMEM, "out of memory");
    floe_rewrite_plan_priv *pv = p->priv;
    floe_arena_init(&pv->arena, 64 * 1024);
    p->snapshot_id = -1;

    FLOE_CHECK(rw_plan_setup(t, o, p, err));

    floe_scan_options so = {.where = o->where};
    FLOE_CHECK(floe_scan_plan_files(t, &so, &pv->scan, err));
    const floe_scan_plan *sp = pv->scan;
    p->snapshot_id = sp->snapshot_id;
    plan_sequence_number(p, m, sp);
    pv->start_sequence_number = p->sequence_number;
    p->data_files = (int64_t)sp->ntasks;
    FLOE_CHECK(bucket_tasks(p, sp, &bs, err));

    /* per partition: select, pack, filter; collect groups in planning order */
    ps.t = t;
    ps.o = o;
    ps.p = p;
    ps.m = m;
    ps.sp = sp;
    ps.files_left = o->max_files_to_rewrite > 0 ? o->max_files_to_rewrite : INT64_MAX;
    ps.now = o->now_ms > 0 ? o->now_ms : floe_wall_ms();
    for (size_t bi = 0; bi < bs.n; bi++) {
        const part_bucket *b = &bs.b[bi];
        size_t ng = 0;
        FLOE_CHECK(partition_groups(&ps, b, &ng, err));
        if (ng == 0)
            continue;
        p->partitions++;
        const char *ptext;
        FLOE_CHECK(partition_text(&ps, b, &ptext, err));
        for (size_t gi = 0; gi < ng; gi++)
            FLOE_CHECK(add_group(&ps, b, gi, ptext, err));
    }
    if (o->job_order != FLOE_RW_ORDER_NONE && p->ngroups > 1) {
        floe_rewrite_job_order order = o->job_order;
        qsort_r(p->groups, p->ngroups, sizeof *p->groups, cmp_groups_r, &order);
    }
    p->plan_ms = (double)(floe_now_ns() - t0) / 1e6;
done:
    for (size_t i = 0; i < bs.n; i++)
        floe_free(bs.b[i].tasks);
    floe_free(bs.b);
    floe_free(ps.cand);
    floe_free(ps.group_of);
    floe_buf_free(&ps.text);
    floe_hashset_free(&ps.uris);
    floe_free(ps.uri_file);
    floe_free(ps.uri_text);
    if (rc < 0) {
        floe_rewrite_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
