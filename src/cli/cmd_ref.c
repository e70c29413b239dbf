/*
 * cmd_ref.c - managing a table's snapshots and refs: `floe snapshots rollback|set-current|
 * cherrypick`, `floe ref list|create|replace|drop|fast-forward` and `floe history`.
 *
 * Spec: format/spec.md "Snapshots", "Snapshot References" (branches and tags, with
 * min-snapshots-to-keep and max-snapshot-age-ms for branches, max-ref-age-ms for every
 * ref but main) and "Snapshot Retention Policy" (floe expire applies them). The main
 * branch is the table's current snapshot: moving it also sets current-snapshot-id and
 * appends to the snapshot-log, which `floe history` shows.
 *
 * Every change is one commit through floe_table_commit; its apply function re-checks the
 * change against the metadata it is given (each retry sees fresher metadata), so a
 * rollback never lands on a snapshot that stopped being an ancestor of main, and a
 * change already in place commits nothing.
 *
 * cherrypick (Iceberg's cherrypick_snapshot): an append snapshot whose parent is main's
 * head is fast-forwarded to (main now points at it); any other append snapshot has its
 * added data files appended to main as a new snapshot whose summary records
 * source-snapshot-id. A snapshot already in main's history, or already cherry-picked into
 * it, is refused, and so is one that added a file main already has live (picked before
 * under another snapshot's id, or appended to main too): its rows would count twice.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/append.h"
#include "floe/manifest.h"
#include "floe/scan.h"
#include "table_args.h"

/* Whether `id` is `head` or one of its ancestors in m. */
static bool is_ancestor(const floe_table_metadata *m, int64_t id, int64_t head) {
    const floe_snapshot *s = floe_table_metadata_snapshot(m, head);
    for (size_t steps = 0; s && steps <= m->n_snapshots; steps++) {
        if (s->snapshot_id == id)
            return true;
        s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
    }
    return false;
}

/* ---------------------------------------------------------------------------------------
 * floe snapshots rollback | set-current
 * ------------------------------------------------------------------------------------- */

typedef struct set_main {
    bool rollback;    /* the target must be an ancestor of main */
    bool by_time;     /* rollback --to TIME */
    int64_t time_ms;
    int64_t id;       /* target (by_time: resolved on each attempt) */
    int64_t from;     /* main before (out) */
    bool changed;     /* out: the last attempt moved main */
} set_main;

/* The newest ancestor of main made at or before t (as floe scan --as-of reads it). */
static int64_t ancestor_at(const floe_table_metadata *m, int64_t t) {
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    for (size_t steps = 0; s && steps <= m->n_snapshots; steps++) {
        if (s->timestamp_ms <= t)
            return s->snapshot_id;
        s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
    }
    return -1;
}

static int set_main_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    set_main *sm = ctx;
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    sm->from = m->current_snapshot_id;
    sm->changed = false;
    if (sm->by_time) {
        char tb[48];
        floe_scan_format_time(sm->time_ms, tb, sizeof tb);
        sm->id = ancestor_at(m, sm->time_ms);
        if (sm->id == -1 && !floe_table_metadata_current_snapshot(m))
            return floe_error_set(err, FLOE_EINVALID, "the table has no current snapshot");
        if (sm->id == -1)
            return floe_error_set(err, FLOE_ENOTFOUND,
                                  "no snapshot of main's history was made at or before %s "
                                  "(or it has expired)", tb);
    }
    if (!floe_table_metadata_snapshot(m, sm->id))
        return floe_error_set(err, FLOE_ENOTFOUND, "snapshot %" PRId64 " does not exist",
                              sm->id);
    if (sm->rollback && !is_ancestor(m, sm->id, m->current_snapshot_id))
        return floe_error_set(err, FLOE_EINVALID,
                              "snapshot %" PRId64 " is not an ancestor of the current snapshot "
                              "%" PRId64 ": use floe snapshots set-current to move to it",
                              sm->id, m->current_snapshot_id);
    if (sm->id == m->current_snapshot_id)
        return FLOE_COMMIT_NOOP;
    sm->changed = true;
    return floe_metadata_builder_set_ref(b, "main", sm->id, false, err);
}

/* ---------------------------------------------------------------------------------------
 * floe snapshots cherrypick
 * ------------------------------------------------------------------------------------- */

typedef struct pick {
    floe_table *t;
    int64_t id;
    int64_t parent;
    bool fast_forward;
    char **staged;      /* the picked files, resolved, sorted (strcmp) */
    size_t nstaged;
    bool live_checked;  /* main's head live_head was checked against staged */
    int64_t live_head;
    char *live_found;   /* the recorded path of a picked file main already has */
} pick;

static int cmp_str(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void pick_reset(pick *p) {
    for (size_t i = 0; i < p->nstaged; i++)
        floe_free(p->staged[i]);
    floe_free(p->staged);
    floe_free(p->live_found);
}

/* floe_scan_task_fn over main's live files: stop at the first one that is picked. */
static int live_task(void *ctx, const floe_scan_task *task, floe_error *err) {
    pick *p = ctx;
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(p->t, task->file->file_path, &uri, err));
    bool hit = bsearch(&uri, p->staged, p->nstaged, sizeof *p->staged, cmp_str) != NULL;
    floe_free(uri);
    if (!hit)
        return 0;
    if (!(p->live_found = floe_strdup(task->file->file_path)))
        return floe_error_set(err, FLOE_ENOMEM, "out of memory");
    return FLOE_EEXISTS; /* pick_live says it */
}

/* Refuse a pick whose files main's head in m already has live (a snapshot picked before
 * under another id, such as an earlier pick's own snapshot, or files appended to main as
 * well as to the branch): appending them again would count their rows twice. Each head is
 * scanned once; a retry on a moved main scans the new head. */
static int pick_live(pick *p, const floe_table_metadata *m, floe_error *err) {
    if (!p->nstaged || !floe_table_metadata_current_snapshot(m) ||
        (p->live_checked && p->live_head == m->current_snapshot_id))
        return 0;
    floe_scan_options so = {.has_snapshot_id = true, .snapshot_id = m->current_snapshot_id};
    floe_scan_plan *plan = NULL;
    int rc = floe_scan_plan_stream(p->t, &so, live_task, p, &plan, err);
    floe_scan_plan_free(plan);
    if (p->live_found) {
        floe_error_clear(err);
        rc = floe_error_set(err, FLOE_EEXISTS,
                            "snapshot %" PRId64 " added %s, which is already a live data file "
                            "of main (snapshot %" PRId64 "): picking it would count its rows "
                            "twice; cherrypick refused", p->id, p->live_found,
                            m->current_snapshot_id);
        floe_free(p->live_found);
        p->live_found = NULL;
        return rc;
    }
    if (rc < 0) {
        floe_error_prefix(err, "checking main's files for the picked ones: ");
        return rc;
    }
    p->live_checked = true;
    p->live_head = m->current_snapshot_id;
    return 0;
}

/* Refuse a snapshot already in main's history or cherry-picked into it, and one whose
 * place in main's history cannot be told: main's walk back ends at an expired snapshot
 * before reaching the candidate's parent or anything older than the candidate (expiry of
 * the snapshots between keeps a tagged one that main once held). */
static int pick_check(void *ctx, const floe_table_metadata *m, floe_error *err) {
    pick *p = ctx;
    const floe_snapshot *cand = floe_table_metadata_snapshot(m, p->id);
    const floe_snapshot *a = floe_table_metadata_current_snapshot(m);
    for (size_t steps = 0; a && steps <= m->n_snapshots; steps++) {
        if (a->snapshot_id == p->id)
            return floe_error_set(err, FLOE_EEXISTS,
                                  "snapshot %" PRId64 " is already in the current snapshot's "
                                  "history", p->id);
        if (!cand || (cand->has_parent && a->snapshot_id == cand->parent_snapshot_id) ||
            a->timestamp_ms < cand->timestamp_ms)
            break; /* main passed where the candidate would stand: it is not there */
        if (!a->has_parent)
            break;
        const floe_snapshot *up = floe_table_metadata_snapshot(m, a->parent_snapshot_id);
        if (!up)
            return floe_error_set(err, FLOE_EINVALID,
                                  "snapshot %" PRId64 " may already be in main's history: main's "
                                  "history before snapshot %" PRId64 " has expired, so it cannot "
                                  "be told; cherrypick refused", p->id, a->snapshot_id);
        a = up;
    }
    char want[24];
    snprintf(want, sizeof want, "%" PRId64, p->id);
    const floe_snapshot *s = floe_table_metadata_current_snapshot(m);
    for (size_t steps = 0; s && steps <= m->n_snapshots; steps++) {
        const char *src = cli_summary_value(s, "source-snapshot-id");
        if (src && !strcmp(src, want))
            return floe_error_set(err, FLOE_EEXISTS,
                                  "snapshot %" PRId64 " was already cherry-picked as %" PRId64,
                                  p->id, s->snapshot_id);
        s = s->has_parent ? floe_table_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
    }
    return pick_live(p, m, err);
}

static int pick_fast_forward_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    const pick *p = ctx;
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    FLOE_FORWARD_IF_ERROR(pick_check(ctx, m, err));
    if (m->current_snapshot_id != p->parent)
        return floe_error_set(err, FLOE_EINVALID,
                              "main moved while cherry-picking %" PRId64 ": run it again",
                              p->id);
    return floe_metadata_builder_set_ref(b, "main", p->id, false, err);
}

/* Remember a picked file (resolved) for pick_live. */
static int pick_stage(pick *p, const char *recorded, floe_error *err) {
    if ((p->nstaged & (p->nstaged - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
        char **grown = floe_realloc(p->staged, (p->nstaged ? 2 * p->nstaged : 1) *
                                                   sizeof *grown);
        if (!grown)
            return floe_error_set(err, FLOE_ENOMEM, "out of memory");
        p->staged = grown;
    }
    char *uri = NULL;
    FLOE_FORWARD_IF_ERROR(floe_table_resolve_path(p->t, recorded, &uri, err));
    p->staged[p->nstaged++] = uri;
    return 0;
}

/* Stage the data files snapshot s added (its own manifests' ADDED entries), under the
 * partition spec they were written with (an older one than the table's is kept: the
 * files' partition tuples are of that spec); p keeps their paths. */
static int stage_added_files(floe_table *t, const floe_snapshot *s, floe_append *a, pick *p,
                             int64_t *nfiles, floe_error *err) {
    floe_arena arena;
    bool has_spec = false;
    int32_t spec_id = 0;
    floe_arena_init(&arena, 64 * 1024);
    floe_manifest_list l = {0};
    char *uri = NULL;
    int rc = 0;
    if (!s->manifest_list)
        FLOE_FAIL(err, FLOE_EUNSUPPORTED, "snapshot %" PRId64 " has no manifest list",
                  s->snapshot_id);
    FLOE_CHECK(floe_table_resolve_path(t, s->manifest_list, &uri, err));
    FLOE_CHECK(floe_manifest_list_read(floe_table_io(t), uri, NULL, &arena, &l, err));
    for (size_t k = 0; k < l.nfiles; k++) {
        const floe_manifest_file *mf = &l.files[k];
        if (!mf->has_added_snapshot_id || mf->added_snapshot_id != s->snapshot_id)
            continue;
        if (mf->content != FLOE_MANIFEST_DATA)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "snapshot %" PRId64 " added delete files: only appends of data files "
                      "can be cherry-picked", s->snapshot_id);
        if (has_spec && mf->partition_spec_id != spec_id)
            FLOE_FAIL(err, FLOE_EUNSUPPORTED,
                      "snapshot %" PRId64 " added files of partition specs %d and %d: one "
                      "cherrypick commits one spec", s->snapshot_id, (int)spec_id,
                      (int)mf->partition_spec_id);
        if (!has_spec) {
            has_spec = true;
            spec_id = mf->partition_spec_id;
            FLOE_CHECK(floe_append_set_spec(a, spec_id, err));
        }
        floe_manifest_reader *r = NULL;
        floe_free(uri);
        uri = NULL;
        FLOE_CHECK(floe_table_resolve_path(t, mf->manifest_path, &uri, err));
        floe_manifest_read_options ro = {.manifest = mf};
        FLOE_CHECK(floe_manifest_reader_open(floe_table_io(t), uri, &ro, &r, err));
        const floe_manifest_entry *e;
        while ((rc = floe_manifest_reader_next(r, &e, err)) == 1) {
            if (e->status != FLOE_ENTRY_ADDED || !e->has_snapshot_id ||
                e->snapshot_id != s->snapshot_id)
                continue;
            if ((rc = floe_append_add_file(a, &e->file, err)) < 0 ||
                (rc = pick_stage(p, e->file.file_path, err)) < 0)
                break;
            (*nfiles)++;
        }
        floe_manifest_reader_close(r);
        if (rc < 0)
            goto done;
        rc = 0;
    }
done:
    floe_free(uri);
    floe_arena_reset(&arena);
    return rc;
}

static int snapshots_cherrypick(floe_table *t, int64_t id, const char *ident, bool json) {
    floe_error err;
    floe_error_clear(&err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    const floe_snapshot *s = floe_table_metadata_snapshot(m, id);
    pick p = {.t = t, .id = id};
    floe_append *a = NULL;
    floe_append_result res = {0};
    int64_t nfiles = 0;
    int code = FLOE_EXIT_OK;
    if (!s) {
        floe_error_set(&err, FLOE_ENOTFOUND, "snapshot %" PRId64 " does not exist", id);
        goto fail;
    }
    if (!s->operation || strcmp(s->operation, "append")) {
        floe_error_set(&err, FLOE_EUNSUPPORTED,
                       "snapshot %" PRId64 " is a%s %s: cherrypick takes append snapshots", id,
                       s->operation && s->operation[0] == 'o' ? "n" : "",
                       s->operation ? s->operation : "snapshot without an operation");
        goto fail;
    }
    if (pick_check(&p, m, &err) < 0)
        goto fail;
    p.parent = s->has_parent ? s->parent_snapshot_id : -1;
    if (s->has_parent && s->parent_snapshot_id == m->current_snapshot_id) {
        p.fast_forward = true;
        if (floe_table_commit(t, pick_fast_forward_apply, &p, &err) < 0)
            goto fail;
        res.snapshot_id = id;
    } else {
        char src[24];
        snprintf(src, sizeof src, "%" PRId64, id);
        if (floe_append_new(t, &a, &err) < 0 ||
            stage_added_files(t, s, a, &p, &nfiles, &err) < 0)
            goto fail;
        if (nfiles == 0) {
            floe_error_set(&err, FLOE_EINVALID, "snapshot %" PRId64 " added no data files", id);
            goto fail;
        }
        qsort(p.staged, p.nstaged, sizeof *p.staged, cmp_str);
        floe_append_set_check(a, pick_check, &p);
        if (floe_append_set_summary(a, "source-snapshot-id", src, &err) < 0 ||
            floe_append_commit(a, &res, &err) < 0)
            goto fail;
    }
    if (json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        printf(",\"cherrypicked\":%" PRId64 ",\"fast_forward\":%s,\"snapshot_id\":%" PRId64
               ",\"added_files\":%" PRId64 ",\"added_records\":%" PRId64 "}\n",
               id, p.fast_forward ? "true" : "false", res.snapshot_id,
               p.fast_forward ? 0 : res.added_files, p.fast_forward ? 0 : res.added_records);
    } else if (p.fast_forward) {
        printf("%s: main fast-forwarded to snapshot %" PRId64 "\n", ident, id);
    } else {
        printf("%s: cherry-picked snapshot %" PRId64 " as snapshot %" PRId64 " (%" PRId64
               " files, %" PRId64 " records)\n",
               ident, id, res.snapshot_id, res.added_files, res.added_records);
    }
    goto out;
fail:
    code = cli_fail(&err);
out:
    floe_append_result_reset(&res);
    floe_append_free(a);
    pick_reset(&p);
    return code;
}

static void snapshots_actions_usage(FILE *out) {
    fprintf(out,
            "usage: floe snapshots TABLE [--json]            list the snapshots\n"
            "       floe snapshots rollback NS.NAME --to SNAPSHOT|TIME\n"
            "       floe snapshots set-current NS.NAME SNAPSHOT|REF\n"
            "       floe snapshots cherrypick NS.NAME SNAPSHOT\n"
            "       [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "rollback     main goes back to SNAPSHOT, which must be an ancestor of the current\n"
            "             snapshot, or to the newest ancestor made at or before TIME (an ISO\n"
            "             time such as 2026-10-06T12:00:00Z, a date, or epoch milliseconds;\n"
            "             a number that is a snapshot id of the table means that snapshot)\n"
            "set-current  main points at any snapshot of the table (or a ref's snapshot)\n"
            "cherrypick   an append snapshot that is not in main's history (a staged one, or\n"
            "             one on a branch) is applied to main: fast-forward when its parent\n"
            "             is main's head, else its added files are appended as a new snapshot\n"
            "             whose summary has source-snapshot-id; refused when main already\n"
            "             has one of the files it added (its rows would count twice)\n");
}

static bool is_number(const char *s) {
    int64_t v;
    return floe_parse_i64_cstr(s, &v);
}

/* floe snapshots rollback|set-current|cherrypick ... (argv[0] is the action) */
int cli_snapshots_action(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *action = argv[0], *ident = NULL, *target = NULL, *to_arg = NULL;
    for (int i = 1; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0)
            return cli_usage("snapshots", "%s needs a value", argv[i]);
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            snapshots_actions_usage(stdout);
            return FLOE_EXIT_OK;
        }
        if (!strcmp(argv[i], "--to") && !strcmp(action, "rollback")) {
            if (i + 1 >= argc)
                return cli_usage("snapshots", "--to needs a value");
            to_arg = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] && !(ident && is_number(argv[i]))) {
            /* snapshot ids may be negative: a number after the table is the snapshot */
            return cli_usage("snapshots", "%s: unknown option %s", action, argv[i]);
        } else if (!ident) {
            ident = argv[i];
        } else if (!target && strcmp(action, "rollback")) {
            target = argv[i];
        } else {
            return cli_usage("snapshots", "%s: unexpected %s", action, argv[i]);
        }
    }
    if (!ident)
        return cli_usage("snapshots", "%s: which table (NS.NAME)?", action);
    if (!strcmp(action, "rollback") ? !to_arg : !target)
        return cli_usage("snapshots", "%s needs %s", action,
                         !strcmp(action, "rollback") ? "--to SNAPSHOT|TIME" : "a SNAPSHOT");
    if (to.relocate)
        return cli_usage("snapshots", "%s: unknown option --relocate", action);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int code = cli_open_table_or_fail(ident, &to, true, &c, &t);
    if (code != FLOE_EXIT_OK)
        goto out;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    set_main sm = {.rollback = !strcmp(action, "rollback")};
    const char *arg = sm.rollback ? to_arg : target;
    int64_t id;
    bool is_id = cli_parse_id(arg, &id) && floe_table_metadata_snapshot(m, id);
    if (!strcmp(action, "cherrypick")) {
        if (!cli_parse_id(arg, &id)) {
            code = cli_usage("snapshots", "cherrypick: %s is not a snapshot id", arg);
            goto out;
        }
        code = snapshots_cherrypick(t, id, ident, to.json);
        goto out;
    }
    if (strcmp(action, "rollback") && strcmp(action, "set-current")) {
        code = cli_usage("snapshots", "unknown action %s", action);
        goto out;
    }
    if (is_id) {
        sm.id = id;
    } else if (sm.rollback) {
        if (floe_scan_parse_time(arg, &sm.time_ms, &err) < 0) {
            code = cli_usage("snapshots", "rollback --to %s: neither a snapshot of the table "
                             "nor a time", arg);
            goto out;
        }
        sm.by_time = true;
    } else {
        const floe_snapshot_ref *ref = floe_table_metadata_ref(m, arg);
        if (ref) {
            sm.id = ref->snapshot_id;
        } else if (cli_parse_id(arg, &id)) {
            sm.id = id; /* reported as missing by the commit */
        } else {
            floe_error_set(&err, FLOE_ENOTFOUND, "%s is neither a snapshot id nor a ref of %s",
                           arg, ident);
            code = cli_fail(&err);
            goto out;
        }
    }
    if (floe_table_commit(t, set_main_apply, &sm, &err) < 0) {
        code = cli_fail(&err);
        goto out;
    }
    if (to.json) {
        printf("{\"table\":");
        cli_json_str(stdout, ident);
        printf(",\"previous_snapshot_id\":%" PRId64 ",\"current_snapshot_id\":%" PRId64
               ",\"changed\":%s}\n",
               sm.from, sm.id, sm.changed ? "true" : "false");
    } else if (sm.changed) {
        printf("%s: current snapshot %" PRId64 " (was %" PRId64 ")\n", ident, sm.id, sm.from);
    } else {
        printf("%s: snapshot %" PRId64 " is already current: nothing to do\n", ident, sm.id);
    }
out:
    cli_close_table(c, t);
    return code;
}

/* ---------------------------------------------------------------------------------------
 * floe ref
 * ------------------------------------------------------------------------------------- */

#define RET_KEEP (-2) /* option not given: keep the ref's value */

typedef enum ref_op { REF_CREATE, REF_REPLACE, REF_DROP, REF_FAST_FORWARD } ref_op;

typedef struct ref_change {
    ref_op op;
    const char *name;
    bool tag;
    bool has_snapshot;
    int64_t snapshot_id;    /* --snapshot, or resolved (out) */
    const char *to_ref;     /* fast-forward target */
    int64_t min_keep, max_snap_age, max_ref_age; /* RET_KEEP, -1 (unset) or a value */
    int64_t from;           /* the ref's snapshot before (-1 when new) */
    bool changed;           /* out: the last attempt changed the ref */
} ref_change;

static int64_t keep_or(int64_t given, int64_t cur) { return given == RET_KEEP ? cur : given; }

static int ref_apply_once(ref_change *rc, floe_metadata_builder *b, floe_error *err);

static int ref_apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    ref_change *rc = ctx;
    int r = ref_apply_once(rc, b, err);
    rc->changed = r == 0;
    return r;
}

static int ref_apply_once(ref_change *rc, floe_metadata_builder *b, floe_error *err) {
    const floe_table_metadata *m = floe_metadata_builder_base(b);
    const floe_snapshot_ref *ref = floe_table_metadata_ref(m, rc->name);
    rc->from = ref ? ref->snapshot_id : -1;
    switch (rc->op) {
    case REF_DROP:
        if (!ref)
            return floe_error_set(err, FLOE_ENOTFOUND, "no branch or tag named %s", rc->name);
        /* (the builder takes main away, as a replace transaction does: not a thing to do
         * by hand - the table would read as empty) */
        if (!strcmp(rc->name, "main"))
            return floe_error_set(err, FLOE_EINVALID, "the main branch cannot be dropped");
        return floe_metadata_builder_remove_ref(b, rc->name, err);
    case REF_FAST_FORWARD: {
        const floe_snapshot_ref *to = floe_table_metadata_ref(m, rc->to_ref);
        if (!ref)
            return floe_error_set(err, FLOE_ENOTFOUND, "no branch named %s", rc->name);
        if (ref->is_tag)
            return floe_error_set(err, FLOE_EINVALID, "%s is a tag: only a branch is "
                                  "fast-forwarded (floe ref replace moves a tag)", rc->name);
        if (!to)
            return floe_error_set(err, FLOE_ENOTFOUND, "no branch or tag named %s", rc->to_ref);
        rc->snapshot_id = to->snapshot_id;
        if (to->snapshot_id == ref->snapshot_id)
            return FLOE_COMMIT_NOOP;
        if (!is_ancestor(m, ref->snapshot_id, to->snapshot_id))
            return floe_error_set(err, FLOE_EINVALID,
                                  "%s cannot be fast-forwarded to %s: its head %" PRId64
                                  " is not an ancestor of %" PRId64,
                                  rc->name, rc->to_ref, ref->snapshot_id, to->snapshot_id);
        return floe_metadata_builder_set_ref(b, rc->name, to->snapshot_id, false, err);
    }
    case REF_CREATE:
        if (ref)
            return floe_error_set(err, FLOE_EEXISTS, "%s already exists (a %s): use floe ref "
                                  "replace", rc->name, ref->is_tag ? "tag" : "branch");
        if (!rc->has_snapshot) {
            if (m->current_snapshot_id == -1)
                return floe_error_set(err, FLOE_EINVALID,
                                      "the table has no snapshot yet: nothing to point %s at",
                                      rc->name);
            rc->snapshot_id = m->current_snapshot_id;
        }
        break;
    case REF_REPLACE:
        if (!ref)
            return floe_error_set(err, FLOE_ENOTFOUND, "no branch or tag named %s: use floe "
                                  "ref create", rc->name);
        rc->tag = ref->is_tag;
        if (!rc->has_snapshot)
            rc->snapshot_id = ref->snapshot_id;
        break;
    }
    floe_ref_retention r = {
        .min_snapshots_to_keep =
            (int32_t)keep_or(rc->min_keep, ref ? ref->min_snapshots_to_keep : -1),
        .max_snapshot_age_ms = keep_or(rc->max_snap_age, ref ? ref->max_snapshot_age_ms : -1),
        .max_ref_age_ms = keep_or(rc->max_ref_age, ref ? ref->max_ref_age_ms : -1),
    };
    if (ref && ref->snapshot_id == rc->snapshot_id &&
        r.min_snapshots_to_keep == ref->min_snapshots_to_keep &&
        r.max_snapshot_age_ms == ref->max_snapshot_age_ms &&
        r.max_ref_age_ms == ref->max_ref_age_ms)
        return FLOE_COMMIT_NOOP;
    FLOE_FORWARD_IF_ERROR(
        floe_metadata_builder_set_ref(b, rc->name, rc->snapshot_id, rc->tag, err));
    return floe_metadata_builder_set_ref_retention(b, rc->name, &r, err);
}

static void print_ref_json(const floe_snapshot_ref *r) {
    printf("{\"name\":");
    cli_json_str(stdout, r->name);
    printf(",\"type\":\"%s\",\"snapshot_id\":%" PRId64, r->is_tag ? "tag" : "branch",
           r->snapshot_id);
    if (r->min_snapshots_to_keep >= 0)
        printf(",\"min_snapshots_to_keep\":%d", (int)r->min_snapshots_to_keep);
    if (r->max_snapshot_age_ms >= 0)
        printf(",\"max_snapshot_age_ms\":%" PRId64, r->max_snapshot_age_ms);
    if (r->max_ref_age_ms >= 0)
        printf(",\"max_ref_age_ms\":%" PRId64, r->max_ref_age_ms);
    printf("}");
}

static void print_ref_text(const floe_snapshot_ref *r) {
    char ret[160] = "";
    size_t n = 0;
    if (r->min_snapshots_to_keep >= 0)
        n += (size_t)snprintf(ret + n, sizeof ret - n, "  min-snapshots-to-keep=%d",
                              (int)r->min_snapshots_to_keep);
    if (r->max_snapshot_age_ms >= 0 && n < sizeof ret)
        n += (size_t)snprintf(ret + n, sizeof ret - n, "  max-snapshot-age-ms=%" PRId64,
                              r->max_snapshot_age_ms);
    if (r->max_ref_age_ms >= 0 && n < sizeof ret)
        snprintf(ret + n, sizeof ret - n, "  max-ref-age-ms=%" PRId64, r->max_ref_age_ms);
    cli_print_padded(stdout, r->name, 20);
    /* no padding after the last column: lines end without spaces */
    printf(" %-6s %-*" PRId64 "%s\n", r->is_tag ? "tag" : "branch", ret[0] ? 20 : 0,
           r->snapshot_id, ret);
}

static void ref_usage(FILE *out) {
    fprintf(out,
            "usage: floe ref list TABLE\n"
            "       floe ref create NS.NAME REF [--tag] [--snapshot ID] [RETENTION]\n"
            "       floe ref replace NS.NAME REF [--snapshot ID] [RETENTION]\n"
            "       floe ref drop NS.NAME REF\n"
            "       floe ref fast-forward NS.NAME BRANCH TO\n"
            "       [--json] [--catalog NAME] [--config FILE]\n"
            "\n"
            "Branches and tags (Iceberg snapshot references). create makes a branch (a tag\n"
            "with --tag) at the current snapshot or --snapshot ID (a new REF is not all\n"
            "digits: it would read as a snapshot id); replace moves a ref and/or\n"
            "changes its retention; fast-forward moves BRANCH to the snapshot of ref TO when\n"
            "BRANCH's head is an ancestor of it (main included: publishes an audited branch).\n"
            "\n"
            "RETENTION, honoured by floe expire (an age is whole milliseconds, or a whole\n"
            "number of ms, s, m, h or d such as 7d or 12h; \"none\" removes the setting so\n"
            "the table property applies):\n"
            "  --max-ref-age-ms AGE          the ref itself expires when its snapshot is\n"
            "                                older (not for main)\n"
            "  --min-snapshots-to-keep N     branches: keep at least N snapshots of its history\n"
            "  --max-snapshot-age-ms AGE     branches: keep the history younger than AGE\n");
}

static bool parse_age(const char *s, int64_t *out) {
    if (!strcmp(s, "none")) {
        *out = -1;
        return true;
    }
    int64_t v;
    if (!floe_parse_duration_exact(s, 1, &v) || v <= 0)
        return false;
    *out = v;
    return true;
}

/* The options of floe ref that take a value, each at most once. */
static const char *const ref_valued[] = {"--snapshot", "--min-snapshots-to-keep",
                                         "--max-snapshot-age-ms", "--max-ref-age-ms"};
#define REF_VALUED (sizeof ref_valued / sizeof ref_valued[0])

static int once_idx(const char *a) {
    for (size_t k = 0; k < REF_VALUED; k++)
        if (!strcmp(a, ref_valued[k]))
            return (int)k;
    return -1;
}

int floe_cmd_ref(int argc, char **argv) {
    cli_table_opts to = {0};
    const char *pos[4] = {0};
    int npos = 0;
    ref_change rc = {.min_keep = RET_KEEP, .max_snap_age = RET_KEEP, .max_ref_age = RET_KEEP};
    bool retention_given = false;
    int given[REF_VALUED] = {0};
    for (int i = 1; i < argc; i++) {
        int r = cli_table_opt(argc, argv, &i, &to);
        if (r < 0)
            return cli_usage("ref", "%s needs a value", argv[i]);
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            ref_usage(stdout);
            return FLOE_EXIT_OK;
        }
        bool v = i + 1 < argc;
        if (!strcmp(a, "--tag")) {
            rc.tag = true;
        } else if (v && once_idx(a) >= 0 && given[once_idx(a)]++) {
            return cli_usage("ref", "%s given twice", a); /* not the last silently */
        } else if (!strcmp(a, "--snapshot") && v) {
            if (!cli_parse_id(argv[++i], &rc.snapshot_id))
                return cli_usage("ref", "--snapshot wants an id (a signed 64-bit integer)");
            rc.has_snapshot = true;
        } else if (!strcmp(a, "--min-snapshots-to-keep") && v) {
            const char *s = argv[++i];
            if (!strcmp(s, "none"))
                rc.min_keep = -1;
            else if (!cli_parse_int(s, &rc.min_keep) || rc.min_keep < 1 || rc.min_keep > INT32_MAX)
                return cli_usage("ref", "--min-snapshots-to-keep wants a number >= 1 or none");
            retention_given = true;
        } else if (!strcmp(a, "--max-snapshot-age-ms") && v) {
            if (!parse_age(argv[++i], &rc.max_snap_age))
                return cli_usage("ref", "--max-snapshot-age-ms %s: not a positive age or none",
                                 argv[i]);
            retention_given = true;
        } else if (!strcmp(a, "--max-ref-age-ms") && v) {
            if (!parse_age(argv[++i], &rc.max_ref_age))
                return cli_usage("ref", "--max-ref-age-ms %s: not a positive age or none",
                                 argv[i]);
            retention_given = true;
        } else if (a[0] == '-' && a[1]) {
            if (once_idx(a) >= 0)
                return cli_usage("ref", "%s needs a value", a);
            return cli_usage("ref", "unknown option %s", a);
        } else if (npos < 4) {
            pos[npos++] = a;
        } else {
            return cli_usage("ref", "unexpected %s", a);
        }
    }
    const char *action = npos ? pos[0] : NULL;
    if (!action) {
        if (argc > 1) /* options but no action: one line (a JSON error under --json) */
            return cli_usage("ref", "no action given (list, create, replace, drop or "
                             "fast-forward)");
        ref_usage(stderr);
        return FLOE_EXIT_USAGE;
    }
    if (to.relocate)
        return cli_usage("ref", "unknown option --relocate");
    bool list = !strcmp(action, "list");
    if (list ? npos != 2
             : !strcmp(action, "fast-forward") ? npos != 4
             : (strcmp(action, "create") && strcmp(action, "replace") && strcmp(action, "drop")) ||
                   npos != 3)
        return cli_usage("ref", "%s: unknown action or wrong arguments", action);
    if ((rc.tag && strcmp(action, "create")) ||
        (rc.has_snapshot && strcmp(action, "create") && strcmp(action, "replace")) ||
        (retention_given && strcmp(action, "create") && strcmp(action, "replace")))
        return cli_usage("ref", "%s: --tag is for create; --snapshot and retention are for "
                         "create and replace", action);
    /* a new ref's name shows in every listing: no terminal escapes or line breaks (a ref
     * another engine named so can still be replaced, dropped and written to) */
    if (!strcmp(action, "create") && (!*pos[2] || cli_has_control(pos[2])))
        return cli_usage("ref", "create: a ref name must be non-empty, without control "
                         "characters");
    /* floe snapshots set-current takes a word as a snapshot id before a ref name: a new
     * ref named like an id would make one word mean two snapshots (one another engine
     * named so is still read, replaced and dropped) */
    int64_t as_id;
    if (!strcmp(action, "create") &&
        (cli_parse_id(pos[2], &as_id) || strspn(pos[2], "0123456789") == strlen(pos[2])))
        return cli_usage("ref", "create: the ref name %s reads as a snapshot id (floe "
                         "snapshots set-current would take it for one): a ref name needs a "
                         "character other than digits", pos[2]);
    if (!list && !floe_utf8_valid((const uint8_t *)pos[2], strlen(pos[2])))
        return cli_usage("ref", "%s: the ref name is not valid UTF-8", action);
    floe_error err;
    floe_error_clear(&err);
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int code = cli_open_table_or_fail(pos[1], &to, !list, &c, &t);
    if (code != FLOE_EXIT_OK)
        goto out;
    if (list) {
        const floe_table_metadata *m = floe_table_metadata_get(t);
        if (to.json)
            printf("[");
        else
            printf("%-20s %-6s %-20s  retention\n", "ref", "type", "snapshot");
        for (size_t i = 0; i < m->n_refs; i++) {
            if (to.json) {
                printf("%s", i ? "," : "");
                print_ref_json(&m->refs[i]);
            } else {
                print_ref_text(&m->refs[i]);
            }
        }
        if (to.json)
            printf("]\n");
        goto out;
    }
    /* retention that cannot apply to the ref (as opened) is a bad option, as its value
     * would be; the commit checks it again on the metadata it commits on */
    const floe_snapshot_ref *old = floe_table_metadata_ref(floe_table_metadata_get(t), pos[2]);
    bool is_tag = !strcmp(action, "create") ? rc.tag : old && old->is_tag;
    if (is_tag && (rc.min_keep > 0 || rc.max_snap_age > 0)) {
        code = cli_usage("ref", "%s: %s is a tag: --min-snapshots-to-keep and "
                         "--max-snapshot-age-ms are for branches only", action, pos[2]);
        goto out;
    }
    if (!strcmp(pos[2], "main") && rc.max_ref_age > 0) {
        code = cli_usage("ref", "%s: --max-ref-age-ms is not for the main branch, which never "
                         "expires", action);
        goto out;
    }
    rc.name = pos[2];
    rc.op = !strcmp(action, "create")    ? REF_CREATE
            : !strcmp(action, "replace") ? REF_REPLACE
            : !strcmp(action, "drop")    ? REF_DROP
                                         : REF_FAST_FORWARD;
    rc.to_ref = npos == 4 ? pos[3] : NULL;
    if (floe_table_commit(t, ref_apply, &rc, &err) < 0) {
        code = cli_fail(&err);
        goto out;
    }
    const floe_snapshot_ref *now = floe_table_metadata_ref(floe_table_metadata_get(t), rc.name);
    if (to.json) {
        printf("{\"table\":");
        cli_json_str(stdout, pos[1]);
        printf(",\"action\":\"%s\",\"changed\":%s,\"previous_snapshot_id\":", action,
               rc.changed ? "true" : "false");
        if (rc.from == -1)
            printf("null");
        else
            printf("%" PRId64, rc.from);
        printf(",\"ref\":");
        if (now)
            print_ref_json(now);
        else
            printf("null");
        printf("}\n");
    } else if (rc.op == REF_DROP) {
        fputs("dropped ", stdout);
        cli_print_text(stdout, rc.name);
        printf(" (it was at snapshot %" PRId64 ")\n", rc.from);
    } else if (!rc.changed) {
        cli_print_text(stdout, rc.name);
        printf(": nothing to change\n");
    } else if (now) {
        print_ref_text(now);
    }
out:
    cli_close_table(c, t);
    return code;
}

/* ---------------------------------------------------------------------------------------
 * floe history
 * ------------------------------------------------------------------------------------- */

/* The summary entries that say what an operation did. */
static bool is_change_key(const char *k) {
    static const char *const prefixes[] = {"added-", "deleted-", "removed-", "changed-",
                                           "replace-", "source-snapshot-id", "total-records"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(k, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

int floe_cmd_history(int argc, char **argv) {
    cli_table_opts to = {0};
    floe_catalog *c = NULL;
    floe_table *t = NULL;
    int code = cli_one_table_open(
        argc, argv, "history",
        "usage: floe history TABLE [--json] [--catalog NAME] [--config FILE]\n"
        "\nThe table's snapshot log, oldest first: when each snapshot became current,\n"
        "its parent, whether it is still an ancestor of the current snapshot (not so\n"
        "after a rollback), its operation and what it changed (its summary).\n",
        &to, &c, &t);
    if (code >= 0)
        return code;
    const floe_table_metadata *m = floe_table_metadata_get(t);
    if (to.json)
        printf("[");
    else
        printf("%-24s %-20s %-20s %-8s %-10s %s\n", "made current at", "snapshot", "parent",
               "ancestor", "operation", "changes");
    for (size_t i = 0; i < m->n_snapshot_log; i++) {
        const floe_snapshot_log_entry *e = &m->snapshot_log[i];
        const floe_snapshot *s = floe_table_metadata_snapshot(m, e->snapshot_id);
        bool anc = is_ancestor(m, e->snapshot_id, m->current_snapshot_id);
        char tb[48];
        floe_scan_format_time(e->timestamp_ms, tb, sizeof tb);
        if (to.json) {
            printf("%s{\"made_current_at\":\"%s\",\"made_current_at_ms\":%" PRId64
                   ",\"snapshot_id\":%" PRId64 ",\"parent_snapshot_id\":",
                   i ? "," : "", tb, e->timestamp_ms, e->snapshot_id);
            if (s && s->has_parent)
                printf("%" PRId64, s->parent_snapshot_id);
            else
                printf("null");
            printf(",\"is_current_ancestor\":%s,\"expired\":%s,\"operation\":",
                   anc ? "true" : "false", s ? "false" : "true");
            if (s && s->operation)
                cli_json_str(stdout, s->operation);
            else
                printf("null");
            printf(",\"summary\":");
            if (s)
                cli_print_kv_json(s->summary, s->n_summary);
            else
                printf("{}");
            printf("}");
        } else {
            char parent[24] = "-";
            if (s && s->has_parent)
                snprintf(parent, sizeof parent, "%" PRId64, s->parent_snapshot_id);
            printf("%-24s %-20" PRId64 " %-20s %-8s ", tb, e->snapshot_id, parent,
                   anc ? "yes" : "no");
            cli_print_padded(stdout, s ? (s->operation ? s->operation : "?") : "(expired)", 10);
            const char *sep = " ";
            for (size_t k = 0; s && k < s->n_summary; k++) {
                if (!is_change_key(s->summary[k].key))
                    continue;
                fputs(sep, stdout);
                cli_print_text(stdout, s->summary[k].key);
                putchar('=');
                cli_print_text(stdout, s->summary[k].value ? s->summary[k].value : "");
                sep = ", ";
            }
            printf("\n");
        }
    }
    if (to.json)
        printf("]\n");
    cli_close_table(c, t);
    return FLOE_EXIT_OK;
}
