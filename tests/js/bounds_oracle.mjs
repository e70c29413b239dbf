#!/usr/bin/env node
// bounds_oracle.mjs - test data and an independent check of the column bounds an Iceberg
// table's manifests promise (tests/integration/bounds_differential.sh).
//
//   bounds_oracle.mjs schema                              the Iceberg schema of `gen` rows
//   bounds_oracle.mjs gen --seed S --rows N [--start K]   NDJSON rows in floe's input form
//   bounds_oracle.mjs arrow IN.parquet OUT.parquet [--row-group-size N] [--no-stats]
//        parquet-wasm (arrow-rs) reads IN and writes OUT with its own writer: N rows per
//        row group, statistics per page (the default) or none at all
//   bounds_oracle.mjs check --metadata META.json [--mode full|truncate16] [--min-files N]
//        every live data file of the table's current snapshot, read by DuckDB: for each
//        column with bounds in the manifest (read here by avsc), lower == DuckDB's min and
//        upper == its max over the non-null, non-NaN values (truncate16: strings and
//        binary cut to 16 code points / bytes as Iceberg truncates them, the upper bound
//        incremented); null counts == DuckDB's, NaN counts too where recorded; every
//        column DuckDB sees a value in must have bounds unless the mode leaves them out.
//        Prints one line per file, exits 1 on the first difference. timestamp_ns bounds are
//        compared in nanoseconds; timestamptz_ns columns are skipped (DuckDB reads them
//        in microseconds).
//
// Rows of `gen`: ids rising with the row number (negative first), timestamps rising with
// them (from 1969 on), and the rest random: nulls, NaN, -0.0 and 0.0, infinities, the
// int extremes, strings with non-ASCII and some longer than 64 bytes, decimals of two
// precisions, uuids, binary, a struct, a list.
import fs from 'node:fs'
import { readRecords } from './lib/avro_read.mjs'
import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, runMain, toHex, fmtUuidBytes } from './lib/canon.mjs'

const USAGE = 'usage: bounds_oracle.mjs schema | gen --seed S --rows N [--start K] |\n' +
  '  arrow IN OUT [--row-group-size N] [--no-stats] | check --metadata META [--mode M]\n'

const SCHEMA = {
  type: 'struct', 'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'i', required: false, type: 'int' },
    { id: 3, name: 'd', required: false, type: 'double' },
    { id: 4, name: 'f', required: false, type: 'float' },
    { id: 5, name: 's', required: false, type: 'string' },
    { id: 6, name: 'ts', required: false, type: 'timestamptz' },
    { id: 7, name: 'dt', required: false, type: 'date' },
    { id: 8, name: 'dec', required: false, type: 'decimal(10, 2)' },
    { id: 9, name: 'dec38', required: false, type: 'decimal(38, 6)' },
    { id: 10, name: 'b', required: false, type: 'boolean' },
    { id: 11, name: 'u', required: false, type: 'uuid' },
    { id: 12, name: 'bin', required: false, type: 'binary' },
    { id: 13, name: 'st', required: false, type: { type: 'struct', fields: [
      { id: 14, name: 'x', required: false, type: 'long' },
      { id: 15, name: 'y', required: false, type: 'string' }] } },
    { id: 16, name: 'tags', required: false, type: { type: 'list', 'element-id': 17, element: 'string', 'element-required': false } },
    { id: 18, name: 't', required: false, type: 'timestamp' },
  ],
}

// ---- gen ---------------------------------------------------------------------------------

function rng(seed) {
  let s = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n
  return () => {
    s ^= (s << 13n) & 0xffffffffffffffffn
    s ^= s >> 7n
    s ^= (s << 17n) & 0xffffffffffffffffn
    return Number(s & 0xffffffffn) / 4294967296
  }
}

const ALPHA = ['a', 'b', 'c', 'x', 'y', 'z', 'A', 'Z', '0', '9', ' ', "'", '"', 'é', 'ß', 'ø', '中', '文', '😀', '~', '\u007f']

function gen(seed, rows, start) {
  const r = rng(seed)
  const pick = (a) => a[Math.floor(r() * a.length)]
  const str = (maxLen) => {
    let n = Math.floor(r() * maxLen)
    let s = ''
    while (n-- > 0) s += pick(ALPHA)
    return s
  }
  const maybe = (p, f) => (r() < p ? null : f())
  const out = []
  const t0 = -86400 * 400 // 1968-11-27
  for (let k = 0; k < rows; k++) {
    const n = start + k
    const id = BigInt(n) * 7n - 30000n
    const o = { id: id.toString() }
    o.i = maybe(0.1, () => (r() < 0.02 ? pick([-2147483648, 2147483647]) : Math.floor(r() * 2001) - 1000))
    o.d = maybe(0.1, () => {
      const x = r()
      if (x < 0.04) return 'NaN'
      if (x < 0.06) return pick(['Infinity', '-Infinity'])
      if (x < 0.10) return pick([0, -0.0])
      return (r() - 0.5) * 2e6
    })
    if (o.d === 0 && Object.is(o.d, -0)) o.d = '-0.0'
    o.f = maybe(0.1, () => {
      const x = r()
      if (x < 0.04) return 'NaN'
      if (x < 0.08) return pick([0, 1.5, -1.5])
      return Math.fround((r() - 0.5) * 2000)
    })
    // long strings (past 64 bytes, where writers truncate statistics) hold the maximum
    o.s = maybe(0.1, () => (r() < 0.1 ? '😀'.repeat(17) + str(10) + 'x'.repeat(30) : str(8)))
    const sec = t0 + Math.floor(n * 37 + r() * 30)
    const us = Math.floor(r() * 1e6)
    const iso = (s, u) => new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, '') + '.' + String(u).padStart(6, '0')
    o.ts = maybe(0.05, () => iso(sec, us) + 'Z')
    o.dt = maybe(0.1, () => new Date((sec + Math.floor((r() - 0.5) * 86400 * 30)) * 1000).toISOString().slice(0, 10))
    o.dec = maybe(0.1, () => {
      const c = BigInt(Math.floor((r() - 0.5) * 2e9))
      const neg = c < 0n
      const a = neg ? -c : c
      return (neg ? '-' : '') + (a / 100n).toString() + '.' + (a % 100n).toString().padStart(2, '0')
    })
    o.dec38 = maybe(0.1, () => {
      let digits = String(Math.floor(r() * 9) + 1)
      const len = Math.floor(r() * 30)
      for (let j = 0; j < len; j++) digits += String(Math.floor(r() * 10))
      let frac = ''
      for (let j = 0; j < 6; j++) frac += String(Math.floor(r() * 10))
      return (r() < 0.5 ? '-' : '') + digits + '.' + frac
    })
    o.b = maybe(0.2, () => r() < 0.5)
    o.u = maybe(0.1, () => {
      let h = ''
      for (let j = 0; j < 32; j++) h += '0123456789abcdef'[Math.floor(r() * 16)]
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    })
    o.bin = maybe(0.1, () => {
      const b = Buffer.alloc(Math.floor(r() * 9))
      for (let j = 0; j < b.length; j++) b[j] = Math.floor(r() * 256)
      return b.toString('base64')
    })
    o.st = maybe(0.1, () => ({ x: maybe(0.1, () => String((n % 13) - 6)), y: maybe(0.2, () => str(5)) }))
    o.tags = maybe(0.2, () => Array.from({ length: Math.floor(r() * 4) }, () => str(4)))
    o.t = maybe(0.1, () => iso(sec + 3600, us))
    let line = JSON.stringify(o)
    line = line.replace(/"id":"(-?\d+)"/, '"id":$1').replace(/"x":"(-?\d+)"/, '"x":$1')
      .replace(/"d":"-0\.0"/, '"d":-0.0')
    out.push(line)
  }
  return out.join('\n') + '\n'
}

// ---- arrow-rs ----------------------------------------------------------------------------

async function arrow(input, output, rowGroup, noStats) {
  const pw = await import('parquet-wasm')
  const table = pw.readParquet(fs.readFileSync(input))
  let b = new pw.WriterPropertiesBuilder()
  if (rowGroup) b = b.setMaxRowGroupSize(rowGroup)
  if (noStats) b = b.setStatisticsEnabled(pw.EnabledStatistics.None)
  fs.writeFileSync(output, pw.writeParquet(table, b.build()))
}

// ---- manifests ----------------------------------------------------------------------------

const readAvro = readRecords

function localPath(p) {
  return p.startsWith('file://') ? p.slice(7) : p
}

// ---- values --------------------------------------------------------------------------------

function typeOf(t) {
  if (typeof t === 'string') {
    const m = /^decimal\((\d+),\s*(\d+)\)$/.exec(t)
    if (m) return { type: 'decimal', precision: Number(m[1]), scale: Number(m[2]) }
    return { type: t }
  }
  return t
}

// Primitive columns outside lists and maps: [{id, path: [names], type}]
function leaves(fields, prefix = []) {
  const out = []
  for (const f of fields) {
    const t = typeOf(f.type)
    if (t.type === 'struct') out.push(...leaves(t.fields, [...prefix, f.name]))
    else if (t.type !== 'list' && t.type !== 'map') out.push({ id: f.id, path: [...prefix, f.name], type: t })
  }
  return out
}

// A manifest bound (Appendix D) as a comparable text.
function decodeBound(t, b) {
  switch (t.type) {
    case 'boolean': return String(b[0] ? 1 : 0)
    case 'int': case 'date': return String(b.readInt32LE(0))
    case 'long': case 'time': case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns':
      return (b.length === 4 ? BigInt(b.readInt32LE(0)) : b.readBigInt64LE(0)).toString()
    case 'float': return String(b.length === 4 ? b.readFloatLE(0) : b.readDoubleLE(0))
    case 'double': return String(b.length === 4 ? b.readFloatLE(0) : b.readDoubleLE(0))
    case 'decimal': {
      let v = 0n
      for (const x of b) v = (v << 8n) | BigInt(x)
      if (b.length && b[0] & 0x80) v -= 1n << BigInt(8 * b.length)
      return v.toString()
    }
    case 'string': return b.toString('utf8')
    case 'uuid': return fmtUuidBytes(b)
    default: return toHex(b)
  }
}

// SQL giving DuckDB's min or max of a column as the same text. blob: DuckDB reads the
// column as BLOB (a uuid stored as fixed[16] without the annotation).
function duckExpr(t, col, agg, blob) {
  const v = `${agg}(${col})`
  switch (t.type) {
    case 'boolean': return `CAST(${v} AS INTEGER)::VARCHAR`
    case 'int': case 'long': return `${v}::VARCHAR`
    case 'date': return `(${v} - DATE '1970-01-01')::VARCHAR`
    case 'timestamp': case 'timestamptz': return `epoch_us(${v})::VARCHAR`
    case 'timestamp_ns': return `epoch_ns(${v})::VARCHAR`
    case 'float': case 'double': return `${agg}(${col}) FILTER (WHERE NOT isnan(${col}))`
    case 'decimal': return `CAST(replace(${v}::VARCHAR, '.', '') AS HUGEINT)::VARCHAR`
    case 'string': return v
    case 'uuid': return blob ? `lower(hex(${v}))` : `${v}::VARCHAR`
    default: return `lower(hex(${v}))`
  }
}

// Iceberg's truncation of a lower / upper bound to n code points (strings) or bytes.
function truncLower(t, s) {
  if (t.type === 'string') return [...s].slice(0, 16).join('')
  return s.length > 32 ? s.slice(0, 32) : s
}
function truncUpper(t, s) {
  if (t.type === 'string') {
    const cps = [...s]
    if (cps.length <= 16) return s
    const cut = cps.slice(0, 16).map((c) => c.codePointAt(0))
    for (let i = cut.length - 1; i >= 0; i--) {
      let c = cut[i] + 1
      if (c === 0xd800) c = 0xe000
      if (c <= 0x10ffff) {
        cut.length = i
        cut.push(c)
        return String.fromCodePoint(...cut)
      }
    }
    return null
  }
  if (s.length <= 32) return s
  const bytes = Buffer.from(s.slice(0, 32), 'hex')
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] !== 0xff) {
      bytes[i]++
      return toHex(bytes.subarray(0, i + 1))
    }
  }
  return null
}

function sameNumber(t, a, b) {
  if (t.type !== 'float' && t.type !== 'double') return a === b
  const x = Number(a), y = Number(b)
  if (t.type === 'float') return Math.fround(x) === Math.fround(y)
  return x === y // -0 === 0: zero bounds are widened to -0.0 / +0.0
}

async function check(metaPath, mode, minFiles) {
  const meta = JSON.parse(fs.readFileSync(metaPath, 'utf8'))
  const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id'])
  const cols = leaves(schema.fields)
  const snap = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id'])
  if (!snap) throw new Error('no current snapshot')
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const conn = await instance.connect()
  const files = []
  for (const m of await readAvro(localPath(snap['manifest-list']))) {
    if (m.content !== undefined && m.content !== 0) continue
    for (const e of await readAvro(localPath(m.manifest_path))) {
      if (e.status === 2) continue
      files.push(e.data_file)
    }
  }
  if (files.length < minFiles) throw new Error(`${files.length} data files, expected at least ${minFiles}`)
  let nbounds = 0
  for (const df of files) {
    const path = localPath(df.file_path)
    const lower = new Map(), upper = new Map(), nulls = new Map(), nans = new Map()
    for (const kv of df.lower_bounds || []) lower.set(kv.key, kv.value)
    for (const kv of df.upper_bounds || []) upper.set(kv.key, kv.value)
    for (const kv of df.null_value_counts || []) nulls.set(kv.key, kv.value)
    for (const kv of df.nan_value_counts || []) nans.set(kv.key, kv.value)
    const lit = "'" + path.replace(/'/g, "''") + "'"
    const desc = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${lit})`)).getRowObjects()
    const have = new Set(desc.map((r) => r.column_name))
    const blobs = new Set(desc.filter((r) => r.column_type === 'BLOB').map((r) => r.column_name))
    const sel = []
    const present = []
    for (const c of cols) {
      if (!have.has(c.path[0])) continue
      // DuckDB has no nanosecond type with zone: it reads such a column in microseconds
      if (c.type.type === 'timestamptz_ns') continue
      const col = c.path.map((p) => '"' + p.replace(/"/g, '""') + '"').join('.')
      present.push(c)
      const blob = c.path.length === 1 && blobs.has(c.path[0])
      sel.push(`${duckExpr(c.type, col, 'min', blob)}`, `${duckExpr(c.type, col, 'max', blob)}`,
        `(count(*) - count(${col}))::VARCHAR`,
        c.type.type === 'float' || c.type.type === 'double' ? `(count(*) FILTER (WHERE isnan(${col})))::VARCHAR` : 'NULL')
    }
    const row = (await conn.runAndReadAll(`SELECT ${sel.join(', ')} FROM read_parquet(${lit})`)).getRows()[0]
    for (let k = 0; k < present.length; k++) {
      const c = present[k]
      const name = c.path.join('.')
      const fail = (msg) => { throw new Error(`${path}: column ${name}: ${msg}`) }
      let [mn, mx, nn, nan] = row.slice(4 * k, 4 * k + 4)
      const num = c.type.type === 'float' || c.type.type === 'double'
      if (num && mn !== null) {
        mn = String(mn)
        mx = String(mx)
      }
      const asUuid = (h) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
      if (c.type.type === 'uuid' && mn !== null && !mn.includes('-')) {
        mn = asUuid(mn)
        mx = asUuid(mx)
      }
      if (nulls.has(c.id) && String(nulls.get(c.id)) !== nn) fail(`null count ${nulls.get(c.id)}, DuckDB ${nn}`)
      if (nans.has(c.id) && String(nans.get(c.id)) !== nan) fail(`NaN count ${nans.get(c.id)}, DuckDB ${nan}`)
      const lo = lower.get(c.id), hi = upper.get(c.id)
      if (mn === null) {
        if (lo || hi) fail(`bounds for a column without a value`)
        continue
      }
      let wantLo = mn, wantHi = mx
      if (mode === 'truncate16' && (c.type.type === 'string' || c.type.type === 'binary')) {
        wantLo = truncLower(c.type, mn)
        wantHi = truncUpper(c.type, mx)
      }
      if (!lo) fail(`no lower bound (DuckDB min ${mn})`)
      if (!hi && wantHi !== null) fail(`no upper bound (DuckDB max ${mx})`)
      const gotLo = decodeBound(c.type, lo)
      if (!sameNumber(c.type, gotLo, wantLo)) fail(`lower bound ${gotLo}, DuckDB min ${wantLo}`)
      if (hi) {
        const gotHi = decodeBound(c.type, hi)
        if (!sameNumber(c.type, gotHi, wantHi)) fail(`upper bound ${gotHi}, DuckDB max ${wantHi}`)
      }
      nbounds++
    }
    process.stdout.write(`ok ${path} ${df.record_count} rows\n`)
  }
  process.stdout.write(`checked ${files.length} files, ${nbounds} column bounds\n`)
}

async function main() {
  const argv = process.argv.slice(2)
  const cmd = argv.shift()
  const { opts, pos } = parseArgs(argv, {
    seed: 'value', rows: 'value', start: 'value', 'row-group-size': 'value', 'no-stats': 'flag',
    metadata: 'value', mode: 'value', 'min-files': 'value', help: 'flag',
  })
  if (opts.help || !cmd) {
    process.stdout.write(USAGE)
    return cmd ? 0 : 2
  }
  switch (cmd) {
    case 'schema': process.stdout.write(JSON.stringify(SCHEMA) + '\n'); return 0
    case 'gen':
      process.stdout.write(gen(Number(opts.seed || 1), Number(opts.rows || 1000), Number(opts.start || 0)))
      return 0
    case 'arrow':
      if (pos.length !== 2) throw new UsageError('arrow IN OUT')
      await arrow(pos[0], pos[1], opts['row-group-size'] ? Number(opts['row-group-size']) : 0, !!opts['no-stats'])
      return 0
    case 'check':
      if (!opts.metadata) throw new UsageError('check --metadata META.json')
      await check(opts.metadata, opts.mode || 'full', Number(opts['min-files'] || 1))
      return 0
    default: throw new UsageError(`unknown command ${cmd}`)
  }
}

runMain(main, USAGE)
