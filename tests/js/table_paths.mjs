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
import avro from 'avsc'
import { snappyUncompress } from 'hyparquet'
import { decompress as zstdDecompress } from 'fzstd'

const local = (p) => (p.startsWith('file://') ? p.slice(7) : p.startsWith('file:') ? p.slice(5) : p)

function readUvarint(buf) {
  let result = 0
  let shift = 0
  for (let i = 0; i < buf.length && i < 5; i++) {
    const b = buf[i]
    result += (b & 0x7f) * 2 ** shift
    if (!(b & 0x80)) return result
    shift += 7
  }
  throw new Error('bad snappy length')
}

const codecs = {
  null: (buf, cb) => cb(null, buf),
  deflate: zlib.inflateRaw,
  snappy: (buf, cb) => {
    try {
      const body = buf.subarray(0, buf.length - 4)
      const out = new Uint8Array(readUvarint(body))
      snappyUncompress(body, out)
      cb(null, Buffer.from(out))
    } catch (e) {
      cb(e)
    }
  },
  zstandard: (buf, cb) => {
    try {
      cb(null, Buffer.from(zstdDecompress(buf)))
    } catch (e) {
      cb(e)
    }
  },
}

// Longs as BigInt: snapshot ids go past 2^53, where avsc's default long refuses them.
const longType = avro.types.LongType.__with({
  fromBuffer: (buf) => buf.readBigInt64LE(),
  toBuffer: (n) => {
    const buf = Buffer.alloc(8)
    buf.writeBigInt64LE(BigInt(n))
    return buf
  },
  fromJSON: (n) => BigInt(n),
  toJSON: (n) => Number(n),
  isValid: (n) => typeof n === 'bigint',
  compare: (a, b) => (a === b ? 0 : a < b ? -1 : 1),
})
const typeHook = (schema) =>
  schema === 'long' || (schema && typeof schema === 'object' && schema.type === 'long') ? longType : undefined

function records(file) {
  return new Promise((resolve, reject) => {
    const out = []
    avro
      .createFileDecoder(local(file), {
        codecs,
        parseHook: (s) => avro.Type.forSchema(s, { wrapUnions: false, typeHook }),
      })
      .on('data', (r) => out.push(r))
      .on('end', () => resolve(out))
      .on('error', reject)
  })
}

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
