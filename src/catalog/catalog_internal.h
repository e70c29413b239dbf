/*
 * catalog_internal.h - the catalog vtable and what the stores share. Private to
 * src/catalog.
 */
#ifndef FLOE_CATALOG_INTERNAL_H
#define FLOE_CATALOG_INTERNAL_H

#include <pthread.h>

#include "floe/catalog.h"

/* The longest namespace, table name or property key the SQL stores accept
 * (VARCHAR(255) in PyIceberg's and Java's DDL), and the longest location or value
 * (VARCHAR(1000)). Enforced for every store so tables move between stores. */
#define FLOE_CATALOG_NAME_MAX 255
#define FLOE_CATALOG_VALUE_MAX 1000

/* The index of the first byte of s[0..n) that may not go into an HTTP header line - a
 * control character (below 0x20, or 0x7f: CR and LF would start a header of their own) -
 * or n when there is none. REST catalog tokens and header.* values are held to it. */
size_t floe_rest_control_at(const char *s, size_t n);

typedef struct floe_catalog_ops {
    const char *type;
    bool swap_by_create;
    /* A swap call that has returned leaves nothing in flight (local stores): reading the
     * pointer afterwards tells its outcome for good. A networked store where a lost
     * connection can leave a transaction running must say false. */
    bool swap_outcome_final;
    int (*list_namespaces)(floe_catalog *c, const char *parent, floe_strlist *out,
                           floe_error *err);
    int (*namespace_exists)(floe_catalog *c, const char *ns, bool *exists, floe_error *err);
    int (*create_namespace)(floe_catalog *c, const char *ns, const char *const *keys,
                            const char *const *values, size_t n, floe_error *err);
    int (*drop_namespace)(floe_catalog *c, const char *ns, floe_error *err);
    int (*load_namespace_properties)(floe_catalog *c, const char *ns, floe_strlist *keys,
                                     floe_strlist *values, floe_error *err);
    int (*update_namespace_properties)(floe_catalog *c, const char *ns,
                                       const char *const *removals, size_t nrem,
                                       const char *const *keys, const char *const *values,
                                       size_t n, floe_error *err);
    int (*list_tables)(floe_catalog *c, const char *ns, floe_strlist *names, floe_error *err);
    int (*load_table)(floe_catalog *c, const char *ns, const char *name, char **location,
                      floe_error *err);
    /* floe_catalog_each_table in one pass; NULL: namespaces walked, each table loaded */
    int (*each_table)(floe_catalog *c, floe_catalog_table_fn fn, void *ctx, floe_error *err);
    int (*new_metadata_location)(floe_catalog *c, const char *metadata_dir,
                                 const char *base, bool gzip, char **out, floe_error *err);
    int (*register_table)(floe_catalog *c, const char *ns, const char *name,
                          const char *metadata_location, floe_error *err);
    int (*rename_table)(floe_catalog *c, const char *ns, const char *name, const char *to_ns,
                        const char *to_name, floe_error *err);
    int (*drop_table)(floe_catalog *c, const char *ns, const char *name, floe_error *err);
    /* floe_catalog_drop_table_at; NULL for stores that cannot drop conditionally (rest) */
    int (*drop_table_at)(floe_catalog *c, const char *ns, const char *name,
                         const char *expected, floe_error *err);
    /* Stores whose server deletes a dropped table's files when asked (rest:
     * purgeRequested=true); NULL for the others, whose callers purge. */
    int (*drop_table_purge)(floe_catalog *c, const char *ns, const char *name, floe_error *err);
    int (*swap)(floe_catalog *c, const char *ns, const char *name, const char *expected,
                const char *new_location, floe_error *err);
    /* Stores that commit by sending the change (rest); NULL for pointer-swap stores,
     * whose swap is then the only commit. check_commit may be NULL. */
    int (*commit_changes)(floe_catalog *c, const char *ns, const char *name,
                          const char *base_json, const char *new_json, char **location,
                          char **metadata_json, floe_error *err);
    int (*check_commit)(floe_catalog *c, floe_error *err);
    /* floe_catalog_ping: one cheap exchange with the store's server or database. */
    int (*ping)(floe_catalog *c, floe_error *err);
    /* Stores that create tables on their server from the first metadata document (rest);
     * NULL for the others, where the writer writes the file and registers it. */
    int (*create_table)(floe_catalog *c, const char *ns, const char *name,
                        const char *metadata_json, char **location, char **metadata_out,
                        floe_error *err);
    /* The I/O context of a loaded table when the store gives it its own (rest: vended
     * credentials), else NULL; may be NULL itself. */
    floe_io *(*table_io)(floe_catalog *c, const char *ns, const char *name);
    void (*close)(floe_catalog *c);
} floe_catalog_ops;

struct floe_catalog {
    floe_io *io;     /* borrowed; the default context when opened with NULL */
    const floe_catalog_ops *ops;
    char *name;      /* catalog_name */
    char *warehouse; /* where new tables go */
    void *impl;      /* store state */
    char *moved_from; /* the warehouse the catalog recorded, when it is not `warehouse`
                         and tables still lie there (floe_catalog_moved_from) */
    bool swap_outcome_final; /* from ops; a store may lower it per connection */
    bool no_location_root;   /* rest: the warehouse is a name, not where tables go */
    pthread_mutex_t *commit_gate; /* floe_catalog_set_commit_gate; not owned */
    size_t max_metadata_bytes;    /* floe_catalog_set_max_metadata_bytes; 0: no cap */
    char *lease_db;  /* database of commit leases (floe_sql_open form); NULL: none */
    floe_sql_options sql_opts; /* options of its connections (and of lease_db's) */
    int test_commit_pause_ms;  /* filesystem: floe_catalog_config's, tests only */
    struct floe_lease_store *commit_leases; /* floe_catalog_commit_leases, opened lazily */
    bool commit_leases_failed;              /* the open failed once: not tried again */
};

/* Where floe_catalog_commit_leases opens its store (copied); NULL for none. */
int floe_catalog_set_lease_db(floe_catalog *c, const char *uri, floe_error *err);

/* Allocate a catalog shell (name and warehouse copied). */
int floe_catalog_alloc(const floe_catalog_ops *ops, const char *name, const char *warehouse,
                       floe_catalog **out, floe_error *err);

/* Namespace levels joined with '/' ("a.b" -> "a/b"), after validation. Caller frees. */
char *floe_catalog_ns_path(const char *ns);

/* SQL stores: compare the warehouse the catalog recorded with c->warehouse; record it
 * when there is none (or no table is left under the old one), else set c->moved_from. */
int floe_sql_catalog_note_warehouse(floe_catalog *c, floe_error *err);

/* "<metadata_dir>/<NNNNN>-<uuid>[.gz].metadata.json" for the SQL stores. */
int floe_catalog_uuid_metadata_location(const char *metadata_dir, const char *base,
                                        bool gzip, char **out, floe_error *err);

#endif
