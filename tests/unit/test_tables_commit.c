/*
 * test_tables_commit.c - floe_tables_commit: a commit to several tables of one SQLite
 * catalog moves every pointer or none (the REST server's transactions/commit).
 *
 *   - both tables change: both pointers move, each table holds its change;
 *   - apply fails on the second table: neither pointer moves, and no metadata file of
 *     the attempt is left in either metadata folder, *failed names the table;
 *   - another handle commits to the first table between apply and the swaps (the race
 *     hook): the transaction rolls back whole, the attempt runs again on fresh metadata
 *     of both tables and wins; the other writer's change is kept;
 *   - the same table twice, and a transaction already open, are refused.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "floe/sql.h"
#include "harness.h"
#include "harness_table.h"
#include "table/commit_testing.h"

static const char *SCHEMA = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                            "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}";

static const floe_kv PROPS[] = {
    {"commit.retry.num-retries", "3"},
    {"commit.retry.min-wait-ms", "1"},
    {"commit.retry.max-wait-ms", "5"},
};

typedef struct change {
    const char *key, *value; /* the property set */
    int fail;                /* apply returns this when non-zero */
    int calls;
} change;

static int apply(void *ctx, floe_metadata_builder *b, floe_error *err) {
    change *c = ctx;
    c->calls++;
    if (c->fail)
        return floe_error_set(err, c->fail, "refused by the test");
    return floe_metadata_builder_set_property(b, c->key, c->value, err);
}

static const char *prop(floe_table *t, const char *key) {
    floe_error err;
    REQUIRE_OK(floe_table_refresh(t, &err), err);
    const floe_table_metadata *m = floe_table_metadata_get(t);
    for (size_t i = 0; i < m->n_properties; i++)
        if (!strcmp(m->properties[i].key, key))
            return m->properties[i].value;
    return NULL;
}

static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

typedef struct two {
    harness_table e;
    floe_table *b; /* ns.b; ns.a is e.t */
    char dir_a[4300], dir_b[4300];
} two;

static void setup(two *w) {
    harness_table_open(&w->e, "a", SCHEMA, NULL, NULL, PROPS, sizeof PROPS / sizeof PROPS[0]);
    floe_error err;
    floe_table_create_options o = {.props = PROPS, .nprops = sizeof PROPS / sizeof PROPS[0]};
    REQUIRE_OK(floe_table_create(w->e.cat, "ns", "b", SCHEMA, &o, &w->b, &err), err);
    snprintf(w->dir_a, sizeof w->dir_a, "%s/wh/ns/a/metadata", w->e.dir);
    snprintf(w->dir_b, sizeof w->dir_b, "%s/wh/ns/b/metadata", w->e.dir);
    REQUIRE(count_files(w->dir_a) == 1 && count_files(w->dir_b) == 1);
}

static void teardown(two *w) {
    floe_table_commit_set_race(NULL, NULL);
    floe_table_close(w->b);
    harness_table_close(&w->e);
}

TEST(both_move) {
    two w;
    setup(&w);
    change ca = {"k", "a1", 0, 0}, cb = {"k", "b1", 0, 0};
    floe_table *ts[2] = {w.e.t, w.b};
    void *ctxs[2] = {&ca, &cb};
    size_t failed = 0;
    floe_error err;
    CHECK_OK(floe_tables_commit(ts, 2, apply, ctxs, &failed, &err), err);
    CHECK(failed == SIZE_MAX);
    CHECK_EQ_STR(prop(w.e.t, "k"), "a1");
    CHECK_EQ_STR(prop(w.b, "k"), "b1");
    CHECK_EQ_INT(count_files(w.dir_a), 2);
    CHECK_EQ_INT(count_files(w.dir_b), 2);
    teardown(&w);
}

TEST(none_moves_when_one_fails) {
    two w;
    setup(&w);
    change ca = {"k", "a1", 0, 0}, cb = {"k", "b1", FLOE_EINVALID, 0};
    floe_table *ts[2] = {w.e.t, w.b};
    void *ctxs[2] = {&ca, &cb};
    char *pa = floe_strdup(floe_table_metadata_location(w.e.t));
    char *pb = floe_strdup(floe_table_metadata_location(w.b));
    size_t failed = 0;
    floe_error err;
    CHECK_EQ_INT(floe_tables_commit(ts, 2, apply, ctxs, &failed, &err), FLOE_EINVALID);
    CHECK(failed == 1);
    CHECK(prop(w.e.t, "k") == NULL);
    CHECK(prop(w.b, "k") == NULL);
    CHECK_EQ_STR(floe_table_metadata_location(w.e.t), pa);
    CHECK_EQ_STR(floe_table_metadata_location(w.b), pb);
    CHECK_EQ_INT(count_files(w.dir_a), 1);
    CHECK_EQ_INT(count_files(w.dir_b), 1);
    floe_free(pa);
    floe_free(pb);
    teardown(&w);
}

typedef struct race {
    floe_table *target; /* the attempt's table after which the other writer commits */
    floe_table *other;  /* the other writer's handle on ns.a */
    int fired;
} race;

static int set_w(void *ctx, floe_metadata_builder *b, floe_error *err) {
    (void)ctx;
    return floe_metadata_builder_set_property(b, "w", "1", err);
}

static void on_race(void *ctx, floe_table *t) {
    race *r = ctx;
    if (t != r->target || r->fired++)
        return;
    floe_error err;
    CHECK_OK(floe_table_commit(r->other, set_w, NULL, &err), err);
}

TEST(lost_swap_rolls_back_and_retries) {
    two w;
    setup(&w);
    floe_catalog *cat2 = NULL;
    floe_table *other = NULL;
    char db[4400], wh[4400];
    snprintf(db, sizeof db, "%s/catalog.db", w.e.dir);
    snprintf(wh, sizeof wh, "%s/wh", w.e.dir);
    floe_error err;
    REQUIRE_OK(floe_catalog_open_sqlite(NULL, db, "default", wh, &cat2, &err), err);
    REQUIRE_OK(floe_table_load(cat2, "ns", "a", &other, &err), err);
    race r = {w.b, other, 0};
    floe_table_commit_set_race(on_race, &r);
    change ca = {"k", "a1", 0, 0}, cb = {"k", "b1", 0, 0};
    floe_table *ts[2] = {w.e.t, w.b};
    void *ctxs[2] = {&ca, &cb};
    CHECK_OK(floe_tables_commit(ts, 2, apply, ctxs, NULL, &err), err);
    CHECK_EQ_INT(ca.calls, 2); /* the first attempt lost a's swap: both applied again */
    CHECK_EQ_INT(cb.calls, 2);
    CHECK_EQ_STR(prop(w.e.t, "k"), "a1");
    CHECK_EQ_STR(prop(w.e.t, "w"), "1");
    CHECK_EQ_STR(prop(w.b, "k"), "b1");
    /* a: created, the other writer's, ours; b: created, ours (the lost attempt's files gone) */
    CHECK_EQ_INT(count_files(w.dir_a), 3);
    CHECK_EQ_INT(count_files(w.dir_b), 2);
    floe_table_commit_set_race(NULL, NULL);
    floe_table_close(other);
    floe_catalog_close(cat2);
    teardown(&w);
}

TEST(refusals) {
    two w;
    setup(&w);
    change ca = {"k", "a1", 0, 0};
    floe_table *ts[2] = {w.e.t, w.e.t};
    void *ctxs[2] = {&ca, &ca};
    floe_error err;
    CHECK_EQ_INT(floe_tables_commit(ts, 2, apply, ctxs, NULL, &err), FLOE_EINVALID);
    CHECK(strstr(err.msg, "twice") != NULL);
    floe_sql *db = floe_catalog_sql(w.e.cat);
    REQUIRE(db != NULL);
    REQUIRE_OK(floe_sql_begin(db, &err), err);
    CHECK_EQ_INT(floe_tables_commit(ts, 1, apply, ctxs, NULL, &err), FLOE_EINVALID);
    floe_sql_rollback(db);
    CHECK_EQ_INT(ca.calls, 0);
    teardown(&w);
}

int main(void) {
    RUN(both_move);
    RUN(none_moves_when_one_fails);
    RUN(lost_swap_rolls_back_and_retries);
    RUN(refusals);
    return harness_finish();
}
