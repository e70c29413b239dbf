/*
 * floe/floe.h - all of libfloe's public API in one include.
 *
 * Link with `pkg-config --cflags --libs floe` (shared) or `pkg-config --static --cflags
 * --libs floe` (static); examples/ shows three small programs. The library exports
 * exactly what these headers declare between FLOE_API_BEGIN and FLOE_API_END; each
 * header says who owns what its calls return and which calls may run concurrently.
 */
#ifndef FLOE_FLOE_H
#define FLOE_FLOE_H

#include "floe/append.h"
#include "floe/auth.h"
#include "floe/avro.h"
#include "floe/catalog.h"
#include "floe/codec.h"
#include "floe/column.h"
#include "floe/common.h"
#include "floe/convert.h"
#include "floe/defaults.h"
#include "floe/delete.h"
#include "floe/gen.h"
#include "floe/health.h"
#include "floe/input.h"
#include "floe/io.h"
#include "floe/json.h"
#include "floe/lease.h"
#include "floe/maint.h"
#include "floe/manifest.h"
#include "floe/mapguard.h"
#include "floe/parquet.h"
#include "floe/parquet_copy.h"
#include "floe/parquet_reader.h"
#include "floe/partition.h"
#include "floe/quarantine.h"
#include "floe/rest_server.h"
#include "floe/rewrite.h"
#include "floe/scan.h"
#include "floe/schema.h"
#include "floe/server.h"
#include "floe/sql.h"
#include "floe/table.h"
#include "floe/table_metadata.h"

#endif
