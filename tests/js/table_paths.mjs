#!/usr/bin/env node
// table_paths.mjs METADATA_FILE - every path an Iceberg table's current metadata records,
// one per line as "<kind> <path>", read with avsc (an independent Avro implementation):
//   location, metadata-log (each previous metadata file), manifest-list (each snapshot's),
//   manifest (each list's manifest_path), file (each manifest entry's data_file.file_path).
// METADATA_FILE may be a file:// URI. Recorded paths are opened as they are (file:// URIs
// and plain paths; a relative path against the working folder): the caller checks what
// they look like. Used by tests/integration/locations.sh.
import fs from 'node:fs'
import zlib from 'node:zlib'
import { readRecords } from './lib/avro_read.mjs'

const local = (p) => (p.startsWith('file://') ? p.slice(7) : p.startsWith('file:') ? p.slice(5) : p)

const records = (file) => readRecords(local(file))

const [, , metaFile] = process.argv
if (!metaFile) {
  process.stderr.write('usage: table_paths.mjs METADATA_FILE\n')
  process.exit(2)
}
let text = fs.readFileSync(local(metaFile))
if (text[0] === 0x1f && text[1] === 0x8b) text = zlib.gunzipSync(text)
const m = JSON.parse(text.toString('utf8'))
const lines = [`location ${m.location}`]
for (const e of m['metadata-log'] || []) lines.push(`metadata-log ${e['metadata-file']}`)
const manifests = new Set()
for (const s of m.snapshots || []) {
  lines.push(`manifest-list ${s['manifest-list']}`)
  for (const r of await records(s['manifest-list'])) manifests.add(r.manifest_path)
}
for (const mp of manifests) {
  lines.push(`manifest ${mp}`)
  for (const r of await records(mp)) lines.push(`file ${r.data_file.file_path}`)
}
process.stdout.write(lines.join('\n') + '\n')
