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

static bool referenced(const floe_commit_files *f, const char *path) {
    for (size_t i = 0; i < f->refs.n; i++)
        if (!strcmp(f->refs.items[i], path))
            return true;
    return false;
}

void floe_commit_files_cleanup(const floe_commit_files *f, const floe_table *t, bool keep_refs,
                               const char *who) {
    for (size_t i = 0; i < f->written.n; i++) {
        const char *p = f->written.items[i];
        if (keep_refs && referenced(f, p))
            continue;
        char *phys = NULL;
        floe_error e;
        floe_error_clear(&e);
        if (floe_table_resolve_path(t, p, &phys, &e) == 0 &&
            floe_io_delete(floe_table_io(t), phys, &e) < 0)
            floe_log(FLOE_LOG_WARN, "%s: could not delete %s: %s", who, p, e.msg);
        floe_free(phys);
    }
}

void floe_commit_files_free(floe_commit_files *f) {
    floe_strlist_free(&f->written);
    floe_strlist_free(&f->refs);
}
