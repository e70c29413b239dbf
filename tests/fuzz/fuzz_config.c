/*
 * fuzz_config.c - libFuzzer target for the catalog configuration parsers
 * (src/catalog/config.c): .pyiceberg.yaml and the floe config file, each asked for the
 * default catalog and for a named one. Errors are expected; crashes, leaks and sanitizer
 * reports are not. A catalog entry that parses has a name (type, uri and warehouse may
 * be left to the loader's defaults).
 *
 * Seeds: tests/fuzz/seeds/fuzz_config/.
 */
#include <stdio.h>
#include <string.h>

#include "floe/catalog.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[] = {NULL, "default", "local", "floe"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        floe_catalog_config cfg;
        memset(&cfg, 0, sizeof cfg);
        floe_error err;
        if (floe_catalog_config_from_pyiceberg_yaml((const char *)data, size, names[i], &cfg,
                                                    &err) == 0) {
            check(cfg.name != NULL);
            floe_catalog_config_reset(&cfg);
        }
        memset(&cfg, 0, sizeof cfg);
        if (floe_catalog_config_from_floe_conf((const char *)data, size, names[i], &cfg,
                                               &err) == 0) {
            check(cfg.name != NULL);
            floe_catalog_config_reset(&cfg);
        }
    }
    return 0;
}
