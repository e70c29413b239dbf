#!/usr/bin/env node
// duckdb_meta.mjs FILE.parquet
//
// Prints what DuckDB sees in a Parquet file's footer, as one JSON document:
//   { "file":     parquet_file_metadata rows (created_by, num_rows, row groups, version),
//     "metadata": parquet_metadata rows (one per row group x column: stats, encodings,
//                 codec, offsets, sizes),
//     "schema":   parquet_schema rows (names, types, repetition, converted and logical
//                 types, field_id, precision/scale),
//     "kv":       parquet_kv_metadata rows as {key, value} text }
// BIGINT values that fit in 2^53 print as numbers, larger ones as strings; BLOBs print as
// UTF-8 text when they are valid UTF-8, else as lowercase hex prefixed "0x".

import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, runMain, toHex } from './lib/canon.mjs'

const USAGE = 'usage: duckdb_meta.mjs FILE.parquet\n'

function plain(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()
  if (typeof v !== 'object') return v
  if (v.bytes instanceof Uint8Array) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(v.bytes)
    } catch {
      return '0x' + toHex(v.bytes)
    }
  }
  if (Array.isArray(v.items)) return v.items.map(plain)
  if (v.entries && !Array.isArray(v.entries)) {
    const o = {}
    for (const [k, x] of Object.entries(v.entries)) o[k] = plain(x)
    return o
  }
  if (Array.isArray(v.entries)) return v.entries.map((e) => [plain(e.key), plain(e.value)])
  return String(v)
}

async function rows(conn, sql) {
  const reader = await conn.runAndReadAll(sql)
  return reader.getRowObjects().map((r) => {
    const o = {}
    for (const [k, v] of Object.entries(r)) o[k] = plain(v)
    return o
  })
}

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), { help: 'flag' })
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  if (pos.length !== 1) throw new UsageError('need exactly one FILE')
  const file = "'" + pos[0].replace(/'/g, "''") + "'"
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  const out = {
    file: await rows(conn, `SELECT * FROM parquet_file_metadata(${file})`),
    metadata: await rows(conn, `SELECT * FROM parquet_metadata(${file})`),
    schema: await rows(conn, `SELECT * FROM parquet_schema(${file})`),
    kv: await rows(conn, `SELECT * FROM parquet_kv_metadata(${file})`),
  }
  process.stdout.write(JSON.stringify(out, null, 1) + '\n')
  return 0
}

runMain(main, USAGE)
