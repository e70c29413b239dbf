#!/usr/bin/env node
// read_parquet.mjs --reader duckdb|hyparquet|parquet-wasm [--schema SCHEMA.json] [--out-dir DIR] FILE...
//
// Prints the rows of Parquet files as canonical NDJSON (lib/canon.mjs), one row per line,
// files in the order given, rows in file order. With --out-dir, each FILE's rows go to
// DIR/<its name less .parquet>.oracle instead, or, when it cannot be read, the error to
// DIR/<name>.oerr and the next file is read (exit 1 if any failed): one process, and one
// load of the reader, for many files checked one by one. Three independent readers:
//   duckdb        @duckdb/node-api (C++), read_parquet() with insertion order kept
//   hyparquet     pure JavaScript
//   parquet-wasm  arrow-rs compiled to WebAssembly, values taken over the Arrow C Data
//                 Interface (lib/arrow_ffi.mjs)
//
// The schema (an Iceberg schema, or table metadata) says how to canonicalise each column;
// columns are matched by name, a column missing from the file reads as null. Without
// --schema, the file's "iceberg.schema" key-value metadata is used if present, else a
// schema derived from the Parquet schema. A value whose type does not match the schema
// (say a timestamp without zone where timestamptz is expected) is an error: exit 1.
//
// Reader notes:
//   - hyparquet: read with utf8:false (only STRING/UTF8-annotated columns become text),
//     custom parsers keep timestamps and dates exact (its defaults round to milliseconds);
//     DECIMALs with precision > 15 are read raw (its default goes through a double);
//     maps arrive as JS objects, so map keys are recovered from their String() form.
//   - duckdb: values arrive as DuckDB value classes; TIMESTAMPTZ vs TIMESTAMP tells
//     whether the file marked the column adjusted to UTC.

import { readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import {
  DateValue, DecimalValue, LineWriter, TimeValue, TsValue, UsageError, canonRow, parseArgs,
  parseSchema, runMain,
} from './lib/canon.mjs'

const USAGE = 'usage: read_parquet.mjs --reader duckdb|hyparquet|parquet-wasm [--schema SCHEMA.json] [--out-dir DIR] FILE...\n'

// ---------------------------------------------------------------------------------------
// Schema from the file (no --schema)
// ---------------------------------------------------------------------------------------
async function schemaFromFile(file) {
  const { parquetMetadata, parquetSchema } = await import('hyparquet')
  const buf = readFileSync(file)
  const meta = parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))
  const kv = (meta.key_value_metadata || []).find((e) => e.key === 'iceberg.schema')
  if (kv && kv.value) return parseSchema(JSON.parse(kv.value))
  const tree = parquetSchema(meta)
  let nextId = 1000000
  const field = (node) => {
    const e = node.element
    return { id: e.field_id ?? nextId++, name: e.name, required: e.repetition_type === 'REQUIRED', type: typeOf(node) }
  }
  const typeOf = (node) => {
    const e = node.element
    const lt = e.logical_type
    const ct = e.converted_type
    if (node.children.length) {
      if (ct === 'LIST' || lt?.type === 'LIST') {
        const rep = node.children[0]
        const el = rep.children.length === 1 ? rep.children[0] : rep
        const f = field(el)
        return { type: 'list', element: { ...f, name: 'element' } }
      }
      if (ct === 'MAP' || ct === 'MAP_KEY_VALUE' || lt?.type === 'MAP') {
        const kvn = node.children[0]
        return { type: 'map', key: { ...field(kvn.children[0]), name: 'key' }, value: { ...field(kvn.children[1]), name: 'value' } }
      }
      return { type: 'struct', fields: node.children.map(field) }
    }
    if (ct === 'DECIMAL' || lt?.type === 'DECIMAL') return { type: 'decimal', precision: e.precision, scale: e.scale ?? 0 }
    switch (e.type) {
      case 'BOOLEAN': return { type: 'boolean' }
      case 'INT32':
        if (ct === 'DATE' || lt?.type === 'DATE') return { type: 'date' }
        if (ct === 'TIME_MILLIS') return { type: 'time' }
        return { type: 'int' }
      case 'INT64':
        if (lt?.type === 'TIMESTAMP') return { type: `timestamp${lt.isAdjustedToUTC ? 'tz' : ''}${lt.unit === 'NANOS' ? '_ns' : ''}` }
        if (ct === 'TIMESTAMP_MICROS' || ct === 'TIMESTAMP_MILLIS') return { type: 'timestamptz' }
        if (lt?.type === 'TIME' || ct === 'TIME_MICROS') return { type: 'time' }
        return { type: 'long' }
      case 'INT96': return { type: 'timestamp_ns' }
      case 'FLOAT': return { type: 'float' }
      case 'DOUBLE': return { type: 'double' }
      case 'BYTE_ARRAY':
        if (ct === 'UTF8' || ct === 'ENUM' || ct === 'JSON' || lt?.type === 'STRING' || lt?.type === 'ENUM' || lt?.type === 'JSON') return { type: 'string' }
        return { type: 'binary' }
      case 'FIXED_LEN_BYTE_ARRAY':
        if (lt?.type === 'UUID') return { type: 'uuid' }
        return { type: 'fixed', length: e.type_length }
      default: throw new Error(`${file}: cannot derive a type for ${e.name}`)
    }
  }
  return { type: 'struct', fields: tree.children.map(field) }
}

// ---------------------------------------------------------------------------------------
// DuckDB
// ---------------------------------------------------------------------------------------
async function readDuckdb(files, getSchema, out) {
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const conn = await instance.connect()
  await conn.run('SET preserve_insertion_order = true')
  for (const file of files) {
    const schema = await getSchema(file)
    const result = await conn.stream(`SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`)
    for await (const rows of result.yieldRowObjects()) {
      for (const r of rows) {
        const o = {}
        for (const k of Object.keys(r)) o[k] = fromDuck(r[k])
        out.line(canonRow(schema, o))
      }
    }
  }
}

function fromDuck(v) {
  if (v === null || v === undefined) return null
  if (typeof v !== 'object') return v
  const name = v.constructor && v.constructor.name
  switch (name) {
    case 'DuckDBTimestampTZValue': return new TsValue(v.micros, 'us', true)
    case 'DuckDBTimestampValue': return new TsValue(v.micros, 'us', false)
    case 'DuckDBTimestampMillisecondsValue': return new TsValue(v.millis, 'ms', false)
    case 'DuckDBTimestampSecondsValue': return new TsValue(v.seconds * 1000n, 'ms', false)
    case 'DuckDBTimestampNanosecondsValue': return new TsValue(v.nanos, 'ns', false)
    case 'DuckDBDateValue': return new DateValue(v.days)
    case 'DuckDBTimeValue': return new TimeValue(v.micros)
    case 'DuckDBDecimalValue': return new DecimalValue(v.value, v.scale)
    case 'DuckDBUUIDValue': return v.toString()
    case 'DuckDBBlobValue': return v.bytes
    case 'DuckDBListValue':
    case 'DuckDBArrayValue': return v.items.map(fromDuck)
    case 'DuckDBStructValue': {
      const o = {}
      for (const [k, x] of Object.entries(v.entries)) o[k] = fromDuck(x)
      return o
    }
    case 'DuckDBMapValue': return v.entries.map((e) => [fromDuck(e.key), fromDuck(e.value)])
    default: throw new Error(`duckdb: unexpected value class ${name}: ${v}`)
  }
}

// ---------------------------------------------------------------------------------------
// hyparquet
// ---------------------------------------------------------------------------------------
async function readHyparquet(files, getSchema, out) {
  const { parquetMetadata, parquetReadObjects } = await import('hyparquet')
  const { compressors } = await import('hyparquet-compressors')
  const parsers = {
    timestampFromMilliseconds: (v) => new TsValue(BigInt(v), 'ms', null),
    timestampFromMicroseconds: (v) => new TsValue(BigInt(v), 'us', null),
    timestampFromNanoseconds: (v) => new TsValue(BigInt(v), 'ns', null),
    dateFromDays: (v) => new DateValue(v),
  }
  for (const file of files) {
    const schema = await getSchema(file)
    const buf = readFileSync(file)
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
    const metadata = parquetMetadata(ab)
    // Wide decimals: drop the annotation so hyparquet hands over the raw integer/bytes.
    const rawDecimal = new Set()
    metadata.schema.forEach((e, i) => {
      if ((e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL') && (e.precision ?? 0) > 15) {
        rawDecimal.add(e.name)
        metadata.schema[i] = { ...e, converted_type: undefined, logical_type: undefined }
      }
    })
    const types = leafTypes(metadata)
    let rowStart = 0
    for (const rg of metadata.row_groups) {
      const n = Number(rg.num_rows)
      if (n === 0) continue
      const rows = await parquetReadObjects({
        file: ab, metadata, compressors, parsers, utf8: false, rowStart, rowEnd: rowStart + n,
      })
      for (const r of rows) out.line(canonRow(schema, fixHyparquet(r, schema, types)))
      rowStart += n
    }
  }
}

// Parquet leaf schema elements keyed by dotted Parquet path (timestamps' UTC flag).
function leafTypes(metadata) {
  const map = new Map()
  const walk = (start, prefix) => {
    let i = start
    const e = metadata.schema[i]
    const path = prefix === null ? [] : [...prefix, e.name]
    i++
    for (let c = 0; c < (e.num_children || 0); c++) i = walk(i, path)
    if (!e.num_children) map.set(path.join('.'), e)
    return i
  }
  walk(0, null)
  return map
}

// Turns hyparquet's raw outputs into intermediate values, guided by the Iceberg type.
// ppath is the dotted Parquet path for fields outside lists and maps (null inside them),
// used to learn a timestamp's isAdjustedToUTC, which hyparquet's values do not carry.
function fixHyparquet(row, schema, types) {
  const fix = (t, v, ppath) => {
    if (v === null || v === undefined) return null
    switch (t.type) {
      case 'time':
        if (typeof v === 'bigint') return new TimeValue(v)
        if (typeof v === 'number') return new TimeValue(BigInt(v) * 1000n) // TIME_MILLIS
        return v
      case 'timestamp':
      case 'timestamptz':
      case 'timestamp_ns':
      case 'timestamptz_ns': {
        const e = ppath && types.get(ppath)
        if (v instanceof TsValue && e) {
          const lt = e.logical_type
          const tz = lt?.type === 'TIMESTAMP' ? !!lt.isAdjustedToUTC
            : (e.converted_type === 'TIMESTAMP_MICROS' || e.converted_type === 'TIMESTAMP_MILLIS') ? true : null
          return new TsValue(v.value, v.unit, tz)
        }
        return v
      }
      case 'decimal':
        if (v instanceof Uint8Array) return new DecimalValue(signedBE(v), t.scale)
        if (typeof v === 'bigint') return new DecimalValue(v, t.scale)
        if (typeof v === 'number' && t.precision > 15) return new DecimalValue(BigInt(v), t.scale)
        return v
      case 'struct': {
        if (typeof v !== 'object') return v
        const o = {}
        for (const f of t.fields) o[f.name] = fix(f.type, v[f.name], ppath && `${ppath}.${f.name}`)
        return o
      }
      case 'list':
        return Array.isArray(v) ? v.map((x) => fix(t.element.type, x, null)) : v
      case 'map':
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          const o = {}
          for (const k of Object.keys(v)) o[k] = fix(t.value.type, v[k], null)
          return o
        }
        return v
      default:
        return v
    }
  }
  const o = {}
  for (const f of schema.fields) o[f.name] = fix(f.type, row[f.name], f.name)
  return o
}

function signedBE(bytes) {
  let v = 0n
  for (const b of bytes) v = (v << 8n) | BigInt(b)
  if (bytes.length && bytes[0] & 0x80) v -= 1n << BigInt(8 * bytes.length)
  return v
}

// ---------------------------------------------------------------------------------------
// parquet-wasm
// ---------------------------------------------------------------------------------------
async function readParquetWasm(files, getSchema, out) {
  const pw = await import('parquet-wasm')
  const { WasmView, readSchema, decodeArray } = await import('./lib/arrow_ffi.mjs')
  const w = new WasmView(pw.wasmMemory())
  for (const file of files) {
    const schema = await getSchema(file)
    const table = pw.readParquet(new Uint8Array(readFileSync(file)))
    const stream = table.intoFFI()
    try {
      const top = readSchema(w, stream.schemaAddr())
      for (let b = 0; b < stream.numArrays(); b++) {
        const rows = decodeArray(w, top, stream.arrayAddr(b))
        for (const r of rows) out.line(canonRow(schema, r))
      }
    } finally {
      stream.free()
    }
  }
}

const READERS = { duckdb: readDuckdb, hyparquet: readHyparquet, 'parquet-wasm': readParquetWasm }

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), {
    reader: 'value', schema: 'value', 'out-dir': 'value', help: 'flag',
  })
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const read = READERS[opts.reader]
  if (!read) throw new UsageError(`--reader must be one of ${Object.keys(READERS).join(', ')}`)
  if (pos.length === 0) throw new UsageError('no FILE given')
  const fixed = opts.schema ? parseSchema(JSON.parse(readFileSync(opts.schema, 'utf8'))) : null
  const getSchema = async (file) => fixed || schemaFromFile(file)
  if (opts['out-dir']) {
    let failed = 0
    for (const file of pos) {
      const base = join(opts['out-dir'], basename(file, '.parquet'))
      const lines = []
      try {
        await read([file], getSchema, { line: (s) => lines.push(s, '\n'), flush: () => {} })
        writeFileSync(`${base}.oracle`, lines.join(''))
      } catch (e) {
        writeFileSync(`${base}.oerr`, `error: ${e && e.message ? e.message : e}\n`)
        failed++
      }
    }
    return failed ? 1 : 0
  }
  const out = new LineWriter()
  try {
    await read(pos, getSchema, out)
  } finally {
    out.flush()
  }
  return 0
}

runMain(main, USAGE)
