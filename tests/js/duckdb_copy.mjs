#!/usr/bin/env node
// duckdb_copy.mjs --schema SCHEMA.json [--row-group-size N] [--compression C]
//                 [--skip-lines FILE] IN.ndjson OUT.parquet
//
// DuckDB as an independent writer: reads NDJSON with the column types derived from an
// Iceberg schema and writes Parquet carrying the schema's field ids (COPY ... FIELD_IDS).
// Used to prove the oracle chain (tests/integration/oracles_selftest.sh) and as a peer
// writer. Rows keep input order (one thread, insertion order preserved).
//
// Type mapping: uuid -> UUID, timestamptz -> TIMESTAMPTZ, timestamp_ns -> TIMESTAMP_NS,
// decimal -> DECIMAL(P,S), fixed/binary -> BLOB decoded from base64 (top-level columns
// only: DuckDB has no base64 decoding inside nested values), time -> TIME, map -> MAP.
// timestamptz_ns has no DuckDB type and is refused.

import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, parseSchema, runMain } from './lib/canon.mjs'

const USAGE = 'usage: duckdb_copy.mjs --schema SCHEMA.json [--row-group-size N] ' +
  '[--compression C] [--skip-lines FILE] IN.ndjson OUT.parquet\n'

function q(name) {
  return '"' + name.replace(/"/g, '""') + '"'
}
function lit(s) {
  return "'" + String(s).replace(/'/g, "''") + "'"
}

// DuckDB type text for an Iceberg type; `top` = binary may be read as VARCHAR first.
function duckType(t, top) {
  switch (t.type) {
    case 'boolean': return 'BOOLEAN'
    case 'int': return 'INTEGER'
    case 'long': return 'BIGINT'
    case 'float': return 'FLOAT'
    case 'double': return 'DOUBLE'
    case 'decimal': return `DECIMAL(${t.precision},${t.scale})`
    case 'date': return 'DATE'
    case 'time': return 'TIME'
    case 'timestamp': return 'TIMESTAMP'
    case 'timestamptz': return 'TIMESTAMPTZ'
    case 'timestamp_ns': return 'TIMESTAMP_NS'
    case 'string': return 'VARCHAR'
    case 'uuid': return 'UUID'
    case 'fixed':
    case 'binary':
      if (!top) throw new Error('binary/fixed inside nested types is not supported')
      return 'VARCHAR'
    case 'struct':
      return `STRUCT(${t.fields.map((f) => `${q(f.name)} ${duckType(f.type, false)}`).join(', ')})`
    case 'list': return `${duckType(t.element.type, false)}[]`
    case 'map': return `MAP(${duckType(t.key.type, false)}, ${duckType(t.value.type, false)})`
    default: throw new Error(`type ${t.type} has no DuckDB equivalent here`)
  }
}

// FIELD_IDS value: {name: id} for primitives, {__duckdb_field_id: id, child: ...} nested.
function fieldIds(fields) {
  const parts = fields.map((f) => `${q(f.name)}: ${nestedIds(f)}`)
  return `{${parts.join(', ')}}`
}
function nestedIds(f) {
  const t = f.type
  if (t.type === 'struct') {
    return `{__duckdb_field_id: ${f.id}, ${t.fields.map((c) => `${q(c.name)}: ${nestedIds(c)}`).join(', ')}}`
  }
  if (t.type === 'list') return `{__duckdb_field_id: ${f.id}, element: ${nestedIds(t.element)}}`
  if (t.type === 'map') {
    return `{__duckdb_field_id: ${f.id}, key: ${nestedIds(t.key)}, value: ${nestedIds(t.value)}}`
  }
  return String(f.id)
}

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), {
    schema: 'value', 'row-group-size': 'value', compression: 'value', 'skip-lines': 'value', help: 'flag',
  })
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  if (!opts.schema || pos.length !== 2) throw new UsageError('need --schema, IN and OUT')
  const schema = parseSchema(JSON.parse(readFileSync(opts.schema, 'utf8')))
  let [input, output] = pos
  let tmp = null
  if (opts['skip-lines']) {
    // Drop the listed lines (plain line numbers) into a temporary copy.
    const skip = new Set(readFileSync(opts['skip-lines'], 'utf8').split('\n').filter((s) => s.trim()).map(Number))
    const lines = readFileSync(input, 'utf8').split('\n')
    if (lines[lines.length - 1] === '') lines.pop()
    tmp = mkdtempSync(join(tmpdir(), 'floe-duckcopy-'))
    input = join(tmp, 'in.ndjson')
    writeFileSync(input, lines.filter((_, i) => !skip.has(i + 1)).map((l) => l + '\n').join(''))
  }
  try {
    const columns = schema.fields.map((f) => `${q(f.name)}: ${lit(duckType(f.type, true))}`).join(', ')
    const select = schema.fields.map((f) => {
      if (f.type.type === 'binary' || f.type.type === 'fixed') return `from_base64(${q(f.name)}) AS ${q(f.name)}`
      return q(f.name)
    }).join(', ')
    const rg = opts['row-group-size'] ? `, ROW_GROUP_SIZE ${Number(opts['row-group-size'])}` : ''
    const comp = opts.compression ? `, COMPRESSION ${lit(opts.compression)}` : ''
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
    const conn = await instance.connect()
    await conn.run('SET preserve_insertion_order = true')
    await conn.run(`COPY (SELECT ${select} FROM read_json(${lit(input)}, format = 'newline_delimited', ` +
      `columns = {${columns}})) TO ${lit(output)} (FORMAT parquet, FIELD_IDS ${fieldIds(schema.fields)}${rg}${comp})`)
    conn.closeSync?.()
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  }
  return 0
}

runMain(main, USAGE)
