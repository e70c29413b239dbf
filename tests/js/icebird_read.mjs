#!/usr/bin/env node
// icebird_read.mjs --metadata FILE|file:///FILE [--map FROM=TO]... [--count]
//
// Reads an Iceberg table with icebird (hyparam/icebird, an independent JavaScript reader
// that applies position and equality deletes) and prints its rows as canonical NDJSON
// (lib/canon.mjs) using the table's current schema, one row per line.
//
// icebird fetches everything over HTTP; here fetch is replaced by a local file server:
// a path recorded in the metadata is mapped onto a local folder by the longest matching
// --map prefix (the table `location` maps onto the folder holding metadata/ by default;
// s3a://b/k is seen as https://b.s3.amazonaws.com/k, as icebird translates it). Range
// requests are honoured.
//
// Values: icebird hands hyparquet's default conversions over (timestamps as Date with
// millisecond precision, decimals as numbers, byte arrays possibly as strings); they are
// turned into canonical form here. Timestamps therefore come out with millisecond
// precision: callers compare with --ms applied to the other side (compare_rows.mjs).

import { readFileSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { icebergRead } from 'icebird'
import {
  DateValue, LineWriter, TimeValue, TsValue, UsageError, canonRow, parseArgs, parseSchema,
  runMain,
} from './lib/canon.mjs'

const USAGE = 'usage: icebird_read.mjs --metadata FILE [--map FROM=TO]... [--count]\n'

function s3ToHttps(url) {
  const m = /^s3a?:\/\/([^/]+)(\/.*)$/.exec(url)
  return m ? `https://${m[1]}.s3.amazonaws.com${m[2]}` : url
}

function installFetch(maps) {
  // longest prefix first
  maps.sort((a, b) => b[0].length - a[0].length)
  globalThis.fetch = async (url, init = {}) => {
    const u = String(url)
    let local = null
    for (const [from, to] of maps) {
      if (u === from || u.startsWith(from.endsWith('/') ? from : from + '/')) {
        local = to + u.slice(from.length)
        break
      }
    }
    if (!local) {
      if (u.startsWith('file://')) local = u.slice(7)
      else if (u.startsWith('file:')) local = u.slice(5)
      else if (!/^[a-z]+:\/\//.test(u)) local = u
      else return new Response(`no mapping for ${u}`, { status: 404 })
    }
    let buf
    try {
      buf = readFileSync(local)
    } catch {
      return new Response(`not found: ${local}`, { status: 404 })
    }
    const method = (init.method || 'GET').toUpperCase()
    const headers = new Headers(init.headers)
    if (method === 'HEAD') {
      return new Response(null, { status: 200, headers: { 'content-length': String(buf.length) } })
    }
    const range = headers.get('Range')
    if (range) {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range)
      if (!m) return new Response('bad range', { status: 416 })
      const start = Number(m[1])
      const end = m[2] === '' ? buf.length : Math.min(Number(m[2]) + 1, buf.length)
      return new Response(buf.subarray(start, end), { status: 206 })
    }
    return new Response(buf, { status: 200 })
  }
}

// hyparquet's default values -> the intermediate form canonValue() accepts
function adapt(t, v) {
  if (v === null || v === undefined) return null
  switch (t.type) {
    case 'date':
      if (v instanceof Date) return new DateValue(Math.floor(v.getTime() / 86400000))
      if (typeof v === 'number' || typeof v === 'bigint') return new DateValue(Number(v))
      return v
    case 'time':
      if (typeof v === 'bigint' || typeof v === 'number') return new TimeValue(BigInt(v))
      return v
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (v instanceof Date) return new TsValue(BigInt(v.getTime()), 'ms', null)
      if (typeof v === 'bigint') return new TsValue(v, t.type.endsWith('_ns') ? 'ns' : 'us', null)
      return v
    case 'binary':
    case 'fixed':
      if (typeof v === 'string') return new TextEncoder().encode(v)
      return v
    case 'uuid':
      if (typeof v === 'string' && v.length === 16) {
        return Uint8Array.from(v, (c) => c.charCodeAt(0))
      }
      return v
    case 'int':
    case 'long':
      return v
    case 'decimal':
      if (typeof v === 'number' && t.precision > 15) {
        // hyparquet went through a double: only exact when it is an integer of the scale
        return BigInt(Math.round(v * 10 ** t.scale))
      }
      return v
    case 'struct': {
      const o = {}
      for (const f of t.fields) o[f.name] = adapt(f.type, v[f.name])
      return o
    }
    case 'list':
      return Array.isArray(v) ? v.map((x) => adapt(t.element.type, x)) : v
    case 'map':
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const o = {}
        for (const k of Object.keys(v)) o[k] = adapt(t.value.type, v[k])
        return o
      }
      return v
    default:
      return v
  }
}

async function main() {
  const { opts } = parseArgs(process.argv.slice(2), { metadata: 'value', map: 'list', count: 'flag' })
  if (!opts.metadata) throw new UsageError('--metadata is required')
  // a local metadata file as a path or a file:/// URI (as catalogs record it)
  const metaPath = resolve(opts.metadata.replace(/^file:\/\/(?=\/)/, ''))
  let raw = readFileSync(metaPath)
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = gunzipSync(raw)
  const metadata = JSON.parse(raw.toString('utf8'))
  let root = dirname(metaPath)
  if (root.endsWith('/metadata')) root = dirname(root)
  const maps = []
  for (const m of opts.map || []) {
    const eq = m.indexOf('=')
    if (eq <= 0) throw new UsageError(`--map ${m}: expected FROM=TO`)
    maps.push([m.slice(0, eq), resolve(m.slice(eq + 1))])
  }
  const loc = String(metadata.location).replace(/\/+$/, '')
  maps.push([loc, root])
  if (/^s3a?:\/\//.test(loc)) maps.push([s3ToHttps(loc), root])
  for (const [from, to] of [...maps]) {
    if (/^s3a?:\/\//.test(from)) maps.push([s3ToHttps(from), to])
  }
  try {
    statSync(root)
  } catch {
    throw new Error(`table folder ${root} not found`)
  }
  installFetch(maps)
  const rows = await icebergRead({ tableUrl: loc, metadata })
  if (opts.count) {
    process.stdout.write(`${rows.length}\n`)
    return 0
  }
  const schema = parseSchema(metadata)
  const out = new LineWriter()
  for (const row of rows) {
    const obj = {}
    for (const f of schema.fields) obj[f.name] = adapt(f.type, row[f.name])
    out.line(canonRow(schema, obj))
  }
  out.flush()
  return 0
}

runMain(main, USAGE)
