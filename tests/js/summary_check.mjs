#!/usr/bin/env node
// summary_check.mjs --metadata FILE [--map FROM=TO]... [--list]
//
// Checks the current snapshot's summary totals against its manifests, with avsc (an
// independent Avro implementation) decoding the manifest list and every manifest with the
// schema each file carries. Spec format/spec.md "Snapshots" (optional summary fields):
// total-records (records of live data files), total-files-size (sizes of every live file,
// data and delete), total-data-files, total-delete-files, total-position-deletes and
// total-equality-deletes (records of live delete files of that kind); live means status
// ADDED (1) or EXISTING (0). All six must be present.
//
// Paths recorded in the metadata are mapped onto local files as icebird_read.mjs does:
// the table location (also without a leading "./" or "file://") onto the folder holding
// metadata/, then the longest --map prefix; absolute local paths are used as they are.
// Prints "ok <snapshot-id> <totals>" or "FAIL ..." (exit 1); with --list first
// "data <local path>" for every live data file.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import avro from 'avsc'
import { codecs, typeHook } from './lib/avro_read.mjs'

function records(file) {
  return new Promise((resolve, reject) => {
    const out = []
    const dec = avro.createFileDecoder(file, {
      codecs,
      parseHook: (writer) => avro.Type.forSchema(writer, { wrapUnions: false, typeHook }),
    })
    dec.on('data', (r) => out.push(r))
    dec.on('error', reject)
    dec.on('end', () => resolve(out))
  })
}

function fail(msg) {
  process.stderr.write(`FAIL ${msg}\n`)
  process.stdout.write(`FAIL ${msg}\n`)
  process.exit(1)
}

const args = process.argv.slice(2)
let metaFile = null
let list = false
const maps = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--metadata') metaFile = args[++i]
  else if (args[i] === '--list') list = true
  else if (args[i] === '--map') {
    const m = args[++i]
    const eq = m.indexOf('=')
    maps.push([m.slice(0, eq), path.resolve(m.slice(eq + 1))])
  } else fail(`unknown argument ${args[i]}`)
}
if (!metaFile) fail('usage: summary_check.mjs --metadata FILE [--map FROM=TO]...')
let raw = fs.readFileSync(metaFile)
if (raw[0] === 0x1f && raw[1] === 0x8b) raw = zlib.gunzipSync(raw)
// snapshot ids past 2^53 kept exact: long integers are read as strings
const md = JSON.parse(raw.toString('utf8').replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'))
let root = path.dirname(path.resolve(metaFile))
if (path.basename(root) === 'metadata') root = path.dirname(root)
const loc = String(md.location).replace(/\/+$/, '')
for (const l of new Set([loc, loc.replace(/^\.\//, ''), loc.replace(/^file:\/\//, '')]))
  maps.push([l, root])
maps.sort((a, b) => b[0].length - a[0].length)

function local(p) {
  for (const [from, to] of maps)
    if (p === from || p.startsWith(from + '/')) return to + p.slice(from.length)
  if (p.startsWith('file://')) p = p.slice(7)
  else if (p.startsWith('file:')) p = p.slice(5)
  if (path.isAbsolute(p) && fs.existsSync(p)) return p
  fail(`no mapping for ${p}`)
}

const cur = String(md['current-snapshot-id'])
const snap = (md.snapshots || []).find((s) => String(s['snapshot-id']) === cur)
if (!snap) {
  process.stdout.write('ok no current snapshot\n')
  process.exit(0)
}
if (!snap['manifest-list']) fail(`snapshot ${cur} has no manifest list`)
const keys = ['total-records', 'total-files-size', 'total-data-files', 'total-delete-files',
  'total-position-deletes', 'total-equality-deletes']
const got = Object.fromEntries(keys.map((k) => [k, 0n]))
try {
  for (const mf of await records(local(snap['manifest-list']))) {
    for (const e of await records(local(mf.manifest_path))) {
      if (Number(e.status) === 2) continue
      const f = e.data_file
      const content = f.content === undefined || f.content === null ? 0 : Number(f.content)
      got['total-files-size'] += BigInt(f.file_size_in_bytes)
      if (content === 0) {
        got['total-data-files'] += 1n
        if (list) process.stdout.write(`data ${local(f.file_path)}\n`)
        got['total-records'] += BigInt(f.record_count)
      } else {
        got['total-delete-files'] += 1n
        got[content === 1 ? 'total-position-deletes' : 'total-equality-deletes'] +=
          BigInt(f.record_count)
      }
    }
  }
} catch (e) {
  fail(`snapshot ${cur}: ${e && e.message ? e.message : e}`)
}
const bad = []
for (const k of keys) {
  const v = snap.summary ? snap.summary[k] : undefined
  if (v === undefined || String(v) !== String(got[k]))
    bad.push(`${k} is ${v === undefined ? '(absent)' : v}, the manifests give ${got[k]}`)
}
if (bad.length) fail(`snapshot ${cur} (${snap.summary && snap.summary.operation}): ${bad.join('; ')}`)
process.stdout.write(`ok ${cur} ${keys.map((k) => `${k}=${got[k]}`).join(' ')}\n`)
