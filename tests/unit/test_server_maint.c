/*
 * test_server_maint.c - the [maintain] sections of the floe serve configuration: they
 * become floe_maint_config_parse text with `floe maintain`'s keys; what would be unsafe
 * inside serve (young orphan ages, a second landing compaction) is refused; the example
 * configuration parses and its maintenance settings reach the scheduler's parser.
 */
#include <stdlib.h>
#include <string.h>

#include "floe/maint.h"
#include "floe/server.h"
#include "harness.h"

static int parse(floe_server_config *c, const char *text, floe_error *err) {
    floe_server_config_init(c);
    floe_error_clear(err);
    return floe_server_config_parse(c, text, strlen(text), "t.conf", err);
}

TEST(test_maintain_sections) {
    floe_server_config c;
    floe_error err;
    const char *text = "[server]\n"
                       "maintain = true\n"
                       "[maintain]\n"
                       "start-delay = 2s\n"
                       "tick = 250ms\n"
                       "run-log = /tmp/x.jsonl\n"
                       "expire.interval = 10s\n"
                       "expire.retain-last = 3\n"
                       "[maintain table a.b]\n"
                       "expire.retain-last = 7\n"
                       "orphans.enabled = false\n";
    REQUIRE(parse(&c, text, &err) == 0);
    CHECK(c.maintain);
    CHECK_EQ_INT(c.maint_start_delay_ms, 2000);
    REQUIRE(c.maint_config != NULL);
    REQUIRE(c.maint_run_log != NULL);
    CHECK(!strcmp(c.maint_run_log, "/tmp/x.jsonl"));
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    REQUIRE(floe_maint_config_parse(&mc, c.maint_config, strlen(c.maint_config), "m", &err) ==
            0);
    CHECK_EQ_INT(mc.tick_ms, 250);
    CHECK_EQ_INT(floe_maint_config_job(&mc, "x.y", FLOE_JOB_EXPIRE)->interval_ms, 10000);
    CHECK_EQ_INT(floe_maint_config_job(&mc, "x.y", FLOE_JOB_EXPIRE)->retain_last, 3);
    /* the table section sits on top of [maintain] */
    CHECK_EQ_INT(floe_maint_config_job(&mc, "a.b", FLOE_JOB_EXPIRE)->retain_last, 7);
    CHECK_EQ_INT(floe_maint_config_job(&mc, "a.b", FLOE_JOB_EXPIRE)->interval_ms, 10000);
    CHECK(!floe_maint_config_job(&mc, "a.b", FLOE_JOB_ORPHANS)->enabled);
    CHECK(floe_maint_config_job(&mc, "x.y", FLOE_JOB_ORPHANS)->enabled);
    floe_maint_config_reset(&mc);

    /* reset frees the maintenance text and restores the defaults */
    floe_server_config_reset(&c);
    CHECK(c.maint_config == NULL && c.maint_run_log == NULL && c.maintain);
}

TEST(test_maintain_refusals) {
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"[maintain]\norphans.older-than = 59m\n", "at least 1h"},
        {"[maintain table a.b]\norphans.age = 10s\n", "at least 1h"},
        {"[maintain]\nlanding-compact.interval = 1m\n", "compactor"},
        {"[maintain]\nexpire.retain-last = 0\n", "bad maintenance setting"},
        {"[maintain]\nexpire.colour = red\n", "bad maintenance setting"},
        {"[maintain]\nnosuchjob.interval = 1h\n", "bad maintenance setting"},
        {"[maintain table a.b]\nstart-delay = 1s\n", "[maintain] only"},
        {"[maintain table a.b]\nlease-ttl = 1m\n", "bad maintenance setting"},
        {"[maintain table ../x]\nexpire.interval = 1m\n", "bad table name"},
        {"[server]\nmaintain = maybe\n", "true or false"},
        {"[maintain]\nrewrite-data.options = tier-fanout=1\n", "tier-fanout"},
        {"[maintain table a.b]\nrewrite-data.options = nosuch=1\n", "unknown rewrite option"},
        {"[maintain]\nrewrite-data.planner = lsm\n", "bad maintenance setting"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        floe_server_config c;
        floe_error err;
        int rc = parse(&c, bad[i].text, &err);
        CHECK(rc == FLOE_EINVALID);
        if (!strstr(err.msg, bad[i].needle))
            harness_fail(__FILE__, __LINE__, "%s: message '%s' lacks '%s'", bad[i].text,
                         err.msg, bad[i].needle);
        floe_server_config_reset(&c);
    }
    /* an hour is enough; maintenance can be turned off */
    floe_server_config c;
    floe_error err;
    CHECK(parse(&c, "[maintain]\norphans.older-than = 1h\n[server]\nmaintain = off\n", &err) ==
          0);
    CHECK(!c.maintain);
    floe_server_config_reset(&c);
}

TEST(test_example_config_maintain) {
    floe_server_config c;
    floe_error err;
    const char *ex = floe_server_example_config();
    REQUIRE(strstr(ex, "[maintain]") != NULL);
    REQUIRE(parse(&c, ex, &err) == 0);
    REQUIRE(c.maint_config != NULL);
    CHECK_EQ_INT(c.maint_start_delay_ms, 5 * 60000);
    floe_maint_config mc;
    floe_maint_config_init(&mc);
    REQUIRE(floe_maint_config_parse(&mc, c.maint_config, strlen(c.maint_config), "m", &err) ==
            0);
    CHECK_EQ_INT(floe_maint_config_job(&mc, "analytics.events", FLOE_JOB_EXPIRE)->retain_last,
                 10);
    CHECK_EQ_INT(floe_maint_config_job(&mc, "other.t", FLOE_JOB_ORPHANS)->older_than_ms,
                 3 * FLOE_MAINT_DAY_MS);
    floe_maint_config_reset(&mc);
    floe_server_config_reset(&c);
}

int main(void) {
    RUN(test_maintain_sections);
    RUN(test_maintain_refusals);
    RUN(test_example_config_maintain);
    return harness_finish();
}
