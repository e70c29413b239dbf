#!/usr/bin/env node
// duckdb_rows.mjs FILE.parquet...
//
// DuckDB (an independent Parquet reader) reads the files as one table and prints
// "<rows> <checksum>": the row count and the sum of every row's hash (independent of row
// order and file boundaries), so two sets of files holding the same rows print the same.
import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

async function main() {
  const { pos } = parseArgs(process.argv.slice(2), {})
  if (pos.length === 0) throw new UsageError('need at least one FILE')
  const files = pos.map((f) => "'" + f.replace(/'/g, "''") + "'").join(', ')
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  const r = await conn.runAndReadAll(
    `SELECT count(*)::VARCHAR AS n, coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR AS h FROM read_parquet([${files}]) t`)
  const row = r.getRowObjects()[0]
  process.stdout.write(`${row.n} ${row.h}\n`)
  return 0
}

runMain(main, 'usage: duckdb_rows.mjs FILE.parquet...\n')
