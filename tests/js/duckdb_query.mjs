#!/usr/bin/env node
// duckdb_query.mjs SQL
//
// DuckDB (an independent reader) runs one query and prints its rows as NDJSON, every
// value as DuckDB's own text (cast to VARCHAR in the query where the exact text matters:
// epoch_ns(ts)::VARCHAR keeps a nanosecond count whole).
import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

async function main() {
  const { pos } = parseArgs(process.argv.slice(2), {})
  if (pos.length !== 1) throw new UsageError('need one SQL query')
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const conn = await instance.connect()
  const r = await conn.runAndReadAll(pos[0])
  for (const row of r.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n')
  return 0
}

runMain(main, 'usage: duckdb_query.mjs SQL\n')
