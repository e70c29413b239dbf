#!/usr/bin/env node
// variant_json.mjs --column NAME EXPECT.ndjson FILE.parquet...
//
// DuckDB (an independent reader of Parquet VARIANT) reads column NAME of the files, each
// value cast to JSON, with the row's `id`, and compares them with EXPECT.ndjson (one
// {"id": .., NAME: ..} object a line): the same ids, and for each id a value equal as
// JSON (object key order and number spelling aside: 1.50 equals 1.5). Prints
// "<rows> rows agree" or the first difference (exit 1).
import { DuckDBInstance } from '@duckdb/node-api'
import { readFileSync } from 'node:fs'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

// DuckDB 1.5 prints a variant decimal below 1 without its leading zero (0.000001 as
// .000001), which is not JSON: put the zero back, outside strings only.
function leadingZeros(t) {
  let out = '', inStr = false
  for (let i = 0; i < t.length; i++) {
    const c = t[i]
    if (inStr) {
      out += c
      if (c === '\\') out += t[++i]
      else if (c === '"') inStr = false
    } else {
      if (c === '"') inStr = true
      if (c === '.' && !/[0-9]/.test(t[i - 1] || '')) out += '0'
      out += c
    }
  }
  return out
}

function equal(a, b) {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a), kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]))
}

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), { column: 'string' })
  if (!opts.column || pos.length < 2) throw new UsageError('need --column, EXPECT and FILE')
  const col = opts.column
  const expect = new Map()
  for (const line of readFileSync(pos[0], 'utf8').split('\n')) {
    if (!line.trim()) continue
    const o = JSON.parse(line)
    expect.set(String(o.id), o[col] === undefined ? null : o[col])
  }
  const files = pos.slice(1).map((f) => "'" + f.replace(/'/g, "''") + "'").join(', ')
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  const q = `SELECT id::VARCHAR AS id, "${col.replace(/"/g, '""')}"::JSON::VARCHAR AS j ` +
    `FROM read_parquet([${files}])`
  const rows = (await conn.runAndReadAll(q)).getRowObjects()
  if (rows.length !== expect.size) {
    process.stderr.write(`DuckDB read ${rows.length} rows, expected ${expect.size}\n`)
    return 1
  }
  for (const r of rows) {
    if (!expect.has(r.id)) {
      process.stderr.write(`DuckDB read id ${r.id}, not expected\n`)
      return 1
    }
    const got = r.j === null ? null : JSON.parse(leadingZeros(r.j))
    if (!equal(got, expect.get(r.id))) {
      process.stderr.write(`id ${r.id}: DuckDB ${r.j}, expected ${JSON.stringify(expect.get(r.id))}\n`)
      return 1
    }
  }
  process.stdout.write(`${rows.length} rows agree\n`)
  return 0
}

runMain(main, 'usage: variant_json.mjs --column NAME EXPECT.ndjson FILE.parquet...\n')
