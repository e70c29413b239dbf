#!/usr/bin/env node
// large_map_file.mjs OUT.parquet KEY_BYTES [CODEC]
//
// DuckDB writes the shape of parquet-testing's large_string_map.brotli.parquet (pyarrow:
// MAP(STRING, INT32), two rows, each one entry whose key is KEY_BYTES 'a' and whose value
// is 1) with a key of the given size, so a test can make pages larger than a reader cap
// it sets. CODEC is a DuckDB COMPRESSION name (default brotli). One thread.

import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, runMain } from './lib/canon.mjs'

const USAGE = 'usage: large_map_file.mjs OUT.parquet KEY_BYTES [CODEC]\n'

await runMain(async () => {
  const [out, bytes, codec = 'brotli'] = process.argv.slice(2)
  const n = Number(bytes)
  if (!out || !Number.isInteger(n) || n < 1 || !/^[a-z0-9_]+$/.test(codec)) {
    throw new UsageError('OUT.parquet, a positive KEY_BYTES and a codec name are needed')
  }
  const db = await DuckDBInstance.create(':memory:', { threads: '1' })
  const c = await db.connect()
  await c.run(`COPY (SELECT MAP([repeat('a', ${n})], [1::INTEGER]) AS arr FROM range(2))
               TO '${out.replace(/'/g, "''")}' (FORMAT parquet, COMPRESSION ${codec})`)
}, USAGE)
