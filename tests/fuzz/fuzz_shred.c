/* fuzz_shred.c - the NDJSON shredder (lines and array bodies) on arbitrary bytes.
 * Checks, beyond the sanitizers: every column holds exactly one row's worth of slots per
 * accepted record, and accepted + rejected equals the records seen. */
#include <stdlib.h>
#include <string.h>

#include "floe/json.h"

static const char *SCHEMA_JSON =
    "{\"type\":\"struct\",\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":4,\"name\":\"d\",\"required\":false,\"type\":\"decimal(20,3)\"},"
    "{\"id\":5,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":6,\"name\":\"b\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":7,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":8,"
    "\"element-required\":false,\"element\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":9,\"name\":\"a\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":10,"
    "\"element-required\":true,\"element\":\"int\"}}]}}},"
    "{\"id\":11,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":12,"
    "\"key\":\"string\",\"value-id\":13,\"value-required\":false,\"value\":\"double\"}},"
    "{\"id\":14,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    /* the remaining types, so every coercion rule in floe/json.h is reachable */
    "{\"id\":15,\"name\":\"bo\",\"required\":false,\"type\":\"boolean\"},"
    "{\"id\":16,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":17,\"name\":\"db\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":18,\"name\":\"d9\",\"required\":false,\"type\":\"decimal(9,2)\"},"
    "{\"id\":19,\"name\":\"d38\",\"required\":false,\"type\":\"decimal(38,10)\"},"
    "{\"id\":20,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":21,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":22,\"name\":\"tsl\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":23,\"name\":\"tsn\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":24,\"name\":\"tszn\",\"required\":false,\"type\":\"timestamptz_ns\"},"
    "{\"id\":25,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[4]\"},"
    "{\"id\":26,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":27,\"name\":\"os\",\"required\":true,\"type\":\"string\"},"
    "{\"id\":28,\"name\":\"mm\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":29,"
    "\"key\":\"int\",\"value-id\":30,\"value-required\":true,\"value\":{\"type\":\"list\","
    "\"element-id\":31,\"element-required\":false,\"element\":\"date\"}}}]}},"
    "{\"id\":32,\"name\":\"v\",\"required\":false,\"type\":\"variant\"},"
    "{\"id\":33,\"name\":\"lv\",\"required\":false,\"type\":{\"type\":\"list\","
    "\"element-id\":34,\"element-required\":true,\"element\":\"variant\"}}]}";

static floe_schema *schema;

static void check_rows(const floe_batch *b) {
    for (size_t c = 0; c < b->ncols; c++) {
        size_t rows = 0;
        for (size_t i = 0; i < b->cols[c].nlevels; i++)
            rows += !b->cols[c].max_rep || b->cols[c].rep[i] == 0;
        if (rows != b->nrows)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    floe_error err;
    if (!schema && floe_schema_parse(SCHEMA_JSON, strlen(SCHEMA_JSON), &schema, &err) < 0)
        abort();
    /* every other input: the timestamps are hour() partition sources (their integers'
     * hours must fit an int), the nanosecond ones too (where every integer fits) */
    static const int32_t hours[] = {3, 22, 23, 24};
    floe_shred_options opt = {.unknown = (floe_unknown_policy)(size % 3), .max_depth = 16,
                              .hour_sources = size % 2 ? hours : NULL,
                              .nhour_sources = size % 2 ? 4 : 0};
    floe_shredder *sh;
    floe_batch b;
    if (floe_shredder_new(schema, &opt, &sh, &err) < 0 || floe_batch_init(&b, schema) < 0)
        abort();
    if (floe_shredder_feed(sh, data, size, "fuzz", 1, 0, &b, NULL, NULL, &err) < 0)
        abort();
    check_rows(&b);
    floe_shred_stats st;
    floe_shredder_stats(sh, &st);
    if (st.records_accepted != b.nrows)
        abort();
    FLOE_IGNORE_RESULT(floe_shredder_feed_array(sh, data, size, "fuzz", 0, &b, NULL, NULL, &err));
    check_rows(&b);
    floe_batch_free(&b);
    floe_shredder_free(sh);
    return 0;
}
