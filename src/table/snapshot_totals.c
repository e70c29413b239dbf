/*
 * snapshot_totals.c - the "total-*" fields of a snapshot summary: read from a summary,
 * summed over a snapshot's manifests, and carried to the next snapshot.
 *
 * Spec: format/spec.md "Snapshots" (summary; optional fields total-records,
 * total-files-size, total-data-files, total-delete-files, total-position-deletes,
 * total-equality-deletes), "Manifests" (status: ADDED and EXISTING entries are live).
 *
 * Invariants:
 *   - total-files-size counts every live file, data and delete, as added-files-size and
 *     removed-files-size count them.
 *   - A parent's totals are used only when all six are recorded; anything less (another
 *     writer's summary without them) is recomputed from the parent's manifests, so a
 *     snapshot floe writes always records all six.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "floe/manifest.h"
#include "floe/table.h"

const char *const floe_snapshot_total_keys[6] = {
    "total-records",      "total-files-size",       "total-data-files",
    "total-delete-files", "total-position-deletes", "total-equality-deletes"};

static int64_t *field(floe_snapshot_totals *t, int k) {
    int64_t *f[6] = {&t->records,      &t->files_size,       &t->data_files,
                     &t->delete_files, &t->position_deletes, &t->equality_deletes};
    return f[k];
}

bool floe_snapshot_totals_from_summary(const floe_snapshot *s, floe_snapshot_totals *out) {
    if (!s)
        return false;
    floe_snapshot_totals t;
    memset(&t, 0, sizeof t);
    for (int k = 0; k < 6; k++) {
        const char *v = NULL;
        for (size_t i = 0; i < s->n_summary && !v; i++)
            if (!strcmp(s->summary[i].key, floe_snapshot_total_keys[k]))
                v = s->summary[i].value;
        if (!v || *v < '0' || *v > '9')
            return false;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (*end || x < 0)
            return false;
        *field(&t, k) = (int64_t)x;
    }
    *out = t;
    return true;
}

int floe_table_manifest_totals(const floe_table *t, const floe_manifest_file *files, size_t n,
                               floe_snapshot_totals *out, floe_error *err) {
    floe_snapshot_totals s;
    memset(&s, 0, sizeof s);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *path = NULL;
        floe_manifest_reader *r = NULL;
        floe_manifest_read_options o = {.manifest = &files[i], .allow_deletion_vectors = true};
        rc = floe_table_resolve_path(t, files[i].manifest_path, &path, err);
        if (rc == 0)
            rc = floe_manifest_reader_open(floe_table_io(t), path, &o, &r, err);
        const floe_manifest_entry *e;
        while (rc == 0 && (rc = floe_manifest_reader_next(r, &e, err)) == 1) {
            rc = 0;
            if (e->status == FLOE_ENTRY_DELETED)
                continue;
            s.files_size += e->file.file_size_in_bytes;
            if (e->file.content == FLOE_CONTENT_DATA) {
                s.data_files++;
                s.records += e->file.record_count;
            } else {
                s.delete_files++;
                if (e->file.content == FLOE_CONTENT_EQUALITY_DELETES)
                    s.equality_deletes += e->file.record_count;
                else
                    s.position_deletes += e->file.record_count;
            }
        }
        floe_manifest_reader_close(r);
        floe_free(path);
    }
    if (rc < 0)
        return rc;
    *out = s;
    return 0;
}

int64_t floe_snapshot_total(const floe_snapshot_totals *t, int k) {
    return *field((floe_snapshot_totals *)t, k);
}

static bool add(const floe_snapshot_totals *base, const floe_snapshot_totals *delta,
                floe_snapshot_totals *out) {
    for (int k = 0; k < 6; k++) {
        int64_t v = floe_snapshot_total(base, k) + floe_snapshot_total(delta, k);
        if (v < 0)
            return false;
        *field(out, k) = v;
    }
    return true;
}

int floe_table_next_totals(const floe_table *t, const floe_snapshot *parent,
                           const floe_manifest_file *parent_files, size_t n,
                           const floe_snapshot_totals *delta, floe_snapshot_totals *out,
                           floe_error *err) {
    floe_snapshot_totals base;
    memset(&base, 0, sizeof base);
    if (!parent)
        return add(&base, delta, out)
                   ? 0
                   : floe_error_set(err, FLOE_EINVALID, "a first snapshot cannot remove files");
    if (floe_snapshot_totals_from_summary(parent, &base) && add(&base, delta, out))
        return 0;
    /* no totals recorded, or ones the change would take below zero: count them */
    FLOE_FORWARD_IF_ERROR(floe_table_manifest_totals(t, parent_files, n, &base, err));
    if (!add(&base, delta, out))
        return floe_error_set(err, FLOE_ECORRUPT,
                              "snapshot %" PRId64 ": the change removes more than its "
                              "manifests hold", parent->snapshot_id);
    return 0;
}
