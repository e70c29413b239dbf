#!/usr/bin/env node
// geo_oracle.mjs - independent checks for geometry / geography / unknown columns
// (tests/integration/geo_unknown.sh).
//
//   geo_oracle.mjs bounds --metadata META.json
//        every live data file of the current snapshot (manifests read by avsc): one line
//        per file and field id with bounds, "FILE ID lower=HEX upper=HEX", sorted by id;
//        "FILE none" for a file without bounds.
//   geo_oracle.mjs wkb-bbox HEX...
//        the bounding box of the WKB values (ISO or extended WKB, either byte order), in
//        the manifest bound form (x:y[:z][:m] little-endian doubles, NaN for a missing z
//        before m): "lower=HEX upper=HEX", or "none" when x or y has no value.
//   geo_oracle.mjs parquet FILE.parquet
//        DuckDB reads the file: its columns' types as DuckDB names them (one line each,
//        "name TYPE"), then every row as JSON, blobs as lowercase hex, a geometry column
//        as DuckDB's WKB (little-endian: DuckDB re-encodes big-endian input) and its WKT
//        (NAME_wkt).
//   geo_oracle.mjs stats FILE.parquet
//        the GeospatialStatistics of every GEOMETRY / GEOGRAPHY column chunk, one line per
//        reader and chunk, "READER RG PATH bbox=XMIN,XMAX,YMIN,YMAX[ z=ZMIN,ZMAX][ m=MMIN,
//        MMAX] types=CODE,..." ("bbox=none" without a box, "none" without statistics):
//        READER "hyparquet" and "duckdb" (parquet_metadata) read the footer; "values"
//        computes what the chunk's values call for (read by hyparquet, walked by the WKB
//        reader below): their box and ISO type codes, for GEOGRAPHY a box only when no
//        value has an edge (LineString, Polygon) and the points lie in [-180, 180] x
//        [-90, 90] (Geospatial.md), nothing for a chunk without values.
import fs from 'node:fs'
import { liveDataFiles, localPath } from './lib/avro_read.mjs'
import { DuckDBInstance } from '@duckdb/node-api'
import { UsageError, parseArgs, runMain, toHex } from './lib/canon.mjs'

const USAGE = 'usage: geo_oracle.mjs bounds --metadata META | wkb-bbox HEX... | parquet FILE | stats FILE\n'

async function bounds(metaPath) {
  for (const df of await liveDataFiles(metaPath)) {
    const name = localPath(df.file_path).split('/').pop()
    const lower = new Map(), upper = new Map()
    for (const kv of df.lower_bounds || []) lower.set(kv.key, kv.value)
    for (const kv of df.upper_bounds || []) upper.set(kv.key, kv.value)
    const ids = [...new Set([...lower.keys(), ...upper.keys()])].sort((a, b) => a - b)
    if (!ids.length) process.stdout.write(`${name} none\n`)
    for (const id of ids) {
      const lo = lower.has(id) ? toHex(lower.get(id)) : '-'
      const hi = upper.has(id) ? toHex(upper.get(id)) : '-'
      process.stdout.write(`${name} ${id} lower=${lo} upper=${hi}\n`)
    }
  }
  return 0
}

// A WKB reader written from OGC Simple Features (ISO dimension codes 1000/2000/3000 and
// the EWKB Z/M flags), kept apart from floe's own.
function wkbPoints(buf, visit, typeOf = () => {}) {
  let off = 0
  function geom(depth) {
    if (depth > 32) throw new Error('WKB nests too deeply')
    const le = buf[off] === 1
    off += 1
    const u32 = () => { const v = le ? buf.readUInt32LE(off) : buf.readUInt32BE(off); off += 4; return v }
    const f64 = () => { const v = le ? buf.readDoubleLE(off) : buf.readDoubleBE(off); off += 8; return v }
    let code = u32()
    let hasZ = false, hasM = false
    if (code & 0x80000000) hasZ = true
    if (code & 0x40000000) hasM = true
    if (code & 0x20000000) off += 4 // EWKB SRID
    code &= 0x0fffffff
    const dim = Math.floor(code / 1000)
    if (dim === 1 || dim === 3) hasZ = true
    if (dim === 2 || dim === 3) hasM = true
    const kind = code % 1000
    typeOf(depth, kind + (hasZ ? 1000 : 0) + (hasM ? 2000 : 0))
    const point = () => {
      const x = f64(), y = f64()
      const z = hasZ ? f64() : NaN
      const m = hasM ? f64() : NaN
      visit(x, y, z, m)
    }
    const points = () => { const n = u32(); for (let i = 0; i < n; i++) point() }
    if (kind === 1) point()
    else if (kind === 2) points()
    else if (kind === 3) { const r = u32(); for (let i = 0; i < r; i++) points() }
    else if (kind >= 4 && kind <= 7) { const n = u32(); for (let i = 0; i < n; i++) geom(depth + 1) }
    else throw new Error(`WKB type ${code}`)
  }
  geom(0)
}

function wkbBbox(hexes) {
  const lo = [Infinity, Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity, -Infinity]
  for (const h of hexes) {
    wkbPoints(Buffer.from(h, 'hex'), (...c) => {
      c.forEach((v, i) => {
        if (Number.isNaN(v)) return
        lo[i] = Math.min(lo[i], v)
        hi[i] = Math.max(hi[i], v)
      })
    })
  }
  if (lo[0] === Infinity || lo[1] === Infinity) return 'none'
  const enc = (v) => {
    const hasZ = v[2] !== Infinity && v[2] !== -Infinity
    const hasM = v[3] !== Infinity && v[3] !== -Infinity
    const out = [v[0], v[1]]
    if (hasZ || hasM) out.push(hasZ ? v[2] : NaN)
    if (hasM) out.push(v[3])
    const b = Buffer.alloc(out.length * 8)
    out.forEach((x, i) => b.writeDoubleLE(x, i * 8))
    return b.toString('hex')
  }
  return `lower=${enc(lo)} upper=${enc(hi)}`
}

async function parquet(file) {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const conn = await instance.connect()
  const lit = "'" + file.replace(/'/g, "''") + "'"
  const desc = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${lit})`)).getRowObjects()
  for (const r of desc) process.stdout.write(`${r.column_name} ${r.column_type}\n`)
  // geometry columns as their WKB (ST_AsWKB is in DuckDB's core; a cast to BLOB is not)
  const sel = desc.map((r) => {
    const c = '"' + r.column_name.replace(/"/g, '""') + '"'
    if (!/^(GEOMETRY|GEOGRAPHY)/.test(r.column_type)) return c
    const t = '"' + (r.column_name + '_wkt').replace(/"/g, '""') + '"'
    return `ST_AsWKB(${c}) AS ${c}, ST_AsText(${c}) AS ${t}`
  })
  const rows = (await conn.runAndReadAll(`SELECT ${sel.join(', ')} FROM read_parquet(${lit})`)).getRowObjects()
  for (const row of rows) {
    const o = {}
    for (const [k, v] of Object.entries(row)) {
      if (v && typeof v === 'object' && v.bytes) o[k] = toHex(Buffer.from(v.bytes))
      else if (typeof v === 'bigint') o[k] = Number(v)
      else o[k] = v === undefined ? null : v
    }
    process.stdout.write(JSON.stringify(o) + '\n')
  }
  return 0
}

function fmtStats(box, types) {
  if (!box && !types) return 'none'
  const f = (v) => String(v)
  let b = 'bbox=none'
  if (box) {
    b = `bbox=${[box.xmin, box.xmax, box.ymin, box.ymax].map(f).join(',')}`
    if (box.zmin !== undefined && box.zmin !== null) b += ` z=${f(box.zmin)},${f(box.zmax)}`
    if (box.mmin !== undefined && box.mmin !== null) b += ` m=${f(box.mmin)},${f(box.mmax)}`
  }
  return `${b} types=${(types || []).map(Number).sort((a, c) => a - c).join(',')}`
}

// What a chunk's values call for (see the usage above).
function expectedStats(values, geography) {
  const lo = [Infinity, Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity, -Infinity]
  const types = new Set()
  let edges = false, n = 0
  for (const v of values) {
    if (v === null || v === undefined) continue
    n++
    wkbPoints(Buffer.from(v), (...c) => {
      c.forEach((x, i) => {
        if (Number.isNaN(x)) return
        lo[i] = Math.min(lo[i], x)
        hi[i] = Math.max(hi[i], x)
      })
    }, (depth, code) => {
      if (depth === 0) types.add(code)
      if (code % 1000 === 2 || code % 1000 === 3) edges = true
    })
  }
  if (!n) return 'none'
  let box = null
  if (lo[0] !== Infinity && lo[1] !== Infinity) {
    box = { xmin: lo[0], xmax: hi[0], ymin: lo[1], ymax: hi[1] }
    if (lo[2] !== Infinity) Object.assign(box, { zmin: lo[2], zmax: hi[2] })
    if (lo[3] !== Infinity) Object.assign(box, { mmin: lo[3], mmax: hi[3] })
    if (geography && (edges || lo[0] < -180 || hi[0] > 180 || lo[1] < -90 || hi[1] > 90)) box = null
  }
  return fmtStats(box, [...types])
}

// DuckDB's geo_types names ("point", "linestring z", ...) as ISO codes.
const KINDS = ['point', 'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon', 'geometrycollection']
function duckTypeCode(t) {
  const [kind, dim] = String(t).toLowerCase().split(/[\s_]+/)
  const k = KINDS.indexOf(kind)
  if (k < 0) throw new Error(`DuckDB geo type ${t}`)
  return k + 1 + ({ z: 1000, m: 2000, zm: 3000 }[dim] || 0)
}

async function stats(file) {
  const { parquetMetadata, parquetReadObjects } = await import('hyparquet')
  const { compressors } = await import('hyparquet-compressors')
  const buf = fs.readFileSync(file)
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const md = parquetMetadata(ab, { geoparquet: false })
  const geo = new Map() // path -> logical type
  const walk = (i, prefix) => { // schema elements depth first: returns the next index
    const el = md.schema[i]
    const path = prefix === null ? '' : prefix ? `${prefix}.${el.name}` : el.name
    let j = i + 1
    for (let k = 0; k < (el.num_children || 0); k++) j = walk(j, path)
    const t = el.logical_type?.type
    if (!el.num_children && (t === 'GEOMETRY' || t === 'GEOGRAPHY')) geo.set(path, t)
    return j
  }
  walk(0, null)
  const raw = (b) => b
  const parsers = { geometryFromBytes: raw, geographyFromBytes: raw }
  const out = []
  let rowStart = 0
  for (const [g, rg] of md.row_groups.entries()) {
    const rowEnd = rowStart + Number(rg.num_rows)
    for (const cc of rg.columns) {
      const path = cc.meta_data.path_in_schema.join('.')
      if (!geo.has(path)) continue
      const gs = cc.meta_data.geospatial_statistics
      out.push(`hyparquet ${g} ${path} ${gs ? fmtStats(gs.bbox, gs.geospatial_types) : 'none'}`)
      const top = path.split('.')[0]
      const rows = await parquetReadObjects({ file: ab, metadata: md, compressors, columns: [top], rowStart, rowEnd, parsers })
      const vals = rows.map((r) => path.split('.').reduce((o, k) => (o === null || o === undefined ? null : o[k]), r))
      out.push(`values ${g} ${path} ${expectedStats(vals, geo.get(path) === 'GEOGRAPHY')}`)
    }
    rowStart = rowEnd
  }
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const conn = await instance.connect()
  const lit = "'" + file.replace(/'/g, "''") + "'"
  const rows = (await conn.runAndReadAll(`SELECT row_group_id, path_in_schema, geo_bbox, geo_types FROM parquet_metadata(${lit}) ORDER BY row_group_id, column_id`)).getRowObjects()
  for (const r of rows) {
    const path = String(r.path_in_schema).split(', ').join('.')
    if (!geo.has(path)) continue
    const box = r.geo_bbox && r.geo_bbox.entries ? r.geo_bbox.entries : null
    const types = r.geo_types && r.geo_types.items ? r.geo_types.items.map(duckTypeCode) : null
    const hasBox = box && box.xmin !== null && box.xmin !== undefined
    out.push(`duckdb ${Number(r.row_group_id)} ${path} ${!hasBox && !types ? 'none' : fmtStats(hasBox ? box : null, types)}`)
  }
  process.stdout.write(out.join('\n') + '\n')
  return 0
}

async function main() {
  const { pos, opts } = parseArgs(process.argv.slice(2), { metadata: 1 })
  const cmd = pos[0]
  if (cmd === 'bounds') {
    if (!opts.metadata) throw new UsageError('bounds needs --metadata')
    return bounds(opts.metadata)
  }
  if (cmd === 'wkb-bbox') {
    process.stdout.write(wkbBbox(pos.slice(1)) + '\n')
    return 0
  }
  if (cmd === 'parquet' && pos.length === 2) return parquet(pos[1])
  if (cmd === 'stats' && pos.length === 2) return stats(pos[1])
  throw new UsageError('unknown command')
}

runMain(main, USAGE)
