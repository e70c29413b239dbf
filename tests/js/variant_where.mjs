#!/usr/bin/env node
// variant_where.mjs CASES.tsv
//
// DuckDB (an independent reader of Parquet VARIANT) answers filters on paths inside a
// variant column. Each line of CASES.tsv is `FILES<TAB>WHERE<TAB>IDS`: FILES a
// comma-separated list of Parquet files, WHERE a DuckDB condition, IDS a file holding the
// ids floe selected (one {"id": N} object a line, from `floe scan --columns id`). For
// each line DuckDB runs `SELECT id FROM read_parquet([FILES]) WHERE (WHERE)`; the sorted
// ids must be the same as floe's, row for row. Prints "<cases> cases agree" or the first
// difference (exit 1).
import { DuckDBInstance } from '@duckdb/node-api'
import { readFileSync } from 'node:fs'
import { UsageError, runMain } from './lib/canon.mjs'

const sorted = (ids) => ids.map(String).sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : 1))

async function main() {
  const args = process.argv.slice(2)
  if (args.length !== 1) throw new UsageError('need CASES.tsv')
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  let n = 0
  for (const line of readFileSync(args[0], 'utf8').split('\n')) {
    if (!line.trim()) continue
    const [files, where, idsPath] = line.split('\t')
    const list = files.split(',').map((f) => "'" + f.replace(/'/g, "''") + "'").join(', ')
    const q = `SELECT id::VARCHAR AS id FROM read_parquet([${list}]) WHERE (${where})`
    let rows
    try {
      rows = (await conn.runAndReadAll(q)).getRowObjects()
    } catch (e) {
      process.stderr.write(`DuckDB: ${q}: ${e.message.split('\n')[0]}\n`)
      return 1
    }
    const duck = sorted(rows.map((r) => r.id))
    const floe = sorted(readFileSync(idsPath, 'utf8').split('\n').filter((l) => l.trim())
      .map((l) => JSON.parse(l).id))
    if (duck.join(',') !== floe.join(',')) {
      process.stderr.write(`${files}: WHERE ${where}\n  DuckDB [${duck}]\n  floe   [${floe}]\n`)
      return 1
    }
    n++
  }
  process.stdout.write(`${n} cases agree\n`)
  return 0
}

runMain(main, 'usage: variant_where.mjs CASES.tsv\n')
