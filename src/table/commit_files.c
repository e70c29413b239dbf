/*
 * commit_files.c - the files a commit path wrote, and their removal when the commit did
 * not take them (commit_files.h).
 */
#include <string.h>

#include "commit_files.h"
#include "floe/io.h"

int floe_commit_files_track(floe_commit_files *f, const char *path, floe_error *err) {
    return floe_strlist_push(&f->written, path, err);
}

static bool listed(const floe_strlist *l, const char *path) {
    for (size_t i = 0; l && i < l->n; i++)
        if (!strcmp(l->items[i], path))
            return true;
    return false;
}

void floe_commit_files_delete_at(const floe_table *t, const char *const *uris, size_t n,
                                 const char *who) {
    if (n == 0)
        return;
    floe_table_confinement *conf = NULL;
    floe_error e;
    floe_error_clear(&e);
    if (floe_table_confinement_open(t, &conf, &e) < 0) {
        floe_log(FLOE_LOG_WARN, "%s: %s; the files it wrote are kept", who, e.msg);
        return;
    }
    floe_table_confinement_delete(conf, floe_table_io(t), uris, n, who);
    const char *report = floe_table_confinement_report(conf);
    if (report)
        floe_log(FLOE_LOG_WARN, "%s: %s", who, report);
    floe_table_confinement_free(conf);
}

void floe_commit_files_delete(const floe_table *t, const floe_strlist *written,
                              const floe_strlist *keep, const char *who) {
    floe_strlist phys = {0};
    floe_error e;
    for (size_t i = 0; i < written->n; i++) {
        const char *p = written->items[i];
        if (listed(keep, p))
            continue;
        char *at = NULL;
        floe_error_clear(&e);
        int rc = floe_table_resolve_path(t, p, &at, &e);
        if (rc < 0 && rc != FLOE_ENOMEM)
            continue; /* not a path of the table: not deleted */
        if (rc == 0)
            rc = floe_strlist_push(&phys, at, &e);
        floe_free(at);
        if (rc < 0) {
            floe_log(FLOE_LOG_WARN, "%s: %s; the files it wrote from %s on are kept", who,
                     e.msg, p);
            break;
        }
    }
    /* what this run wrote, but where the table's write paths said: only inside the
     * table's own folders (floe/table.h, "Confinement") */
    floe_commit_files_delete_at(t, (const char *const *)phys.items, phys.n, who);
    floe_strlist_free(&phys);
}

void floe_commit_files_cleanup(const floe_commit_files *f, const floe_table *t, bool keep_refs,
                               const char *who) {
    floe_commit_files_delete(t, &f->written, keep_refs ? &f->refs : NULL, who);
}

void floe_commit_files_free(floe_commit_files *f) {
    floe_strlist_free(&f->written);
    floe_strlist_free(&f->refs);
}
