// dv_oracle.mjs - deletion vectors (Iceberg v3, Puffin deletion-vector-v1) made and read by an
// independent Roaring implementation: the `roaring` package (CRoaring's port for Node).
//
//   node dv_oracle.mjs read FILE.puffin
//       every blob of the Puffin file, checked (magic, length, CRC-32) and decoded with
//       RoaringBitmap32.deserialize(portable) per 32-bit key: one JSON line per blob,
//       {"offset","length","referenced","positions":[...]}
//   node dv_oracle.mjs bitmap-read FILE...
//       bare portable 64-bit Roaring bitmaps: the positions of each as a JSON list, one line
//       per file
//   node dv_oracle.mjs bitmap-write PREFIX LISTS_JSON
//       each list of positions in LISTS_JSON as a portable 64-bit bitmap, run-optimized,
//       in PREFIX<i>.bin
// Any JSON argument may be @FILE: the JSON is read from FILE.
//   node dv_oracle.mjs puffin-write FILE BLOBS_JSON
//       a Puffin file of deletion vectors: BLOBS_JSON is [{"referenced","positions"}...]
//   node dv_oracle.mjs table TABLE_DIR POSITIONS_JSON [PUFFIN OFFSET LENGTH]
//       turn a copy of the legacy_bare_deletion_vector conformance table into a valid v3
//       table: without PUFFIN, write its .puffin anew as a Puffin container holding one
//       deletion vector of POSITIONS for the table's data file; with PUFFIN (a file some
//       other writer made in place of that .puffin, the DV at OFFSET, LENGTH), use that.
//       Then the delete manifest's entry gets content_offset / content_size_in_bytes /
//       file_size_in_bytes / record_count, and the manifest list the manifest's new length.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import avro from 'avsc'
import roaring from 'roaring'
import { codecs, typeHook } from './lib/avro_read.mjs'

const { RoaringBitmap32 } = roaring
const MAGIC = Buffer.from([0xd1, 0xd3, 0x39, 0x64])

function bitmapRead(buf) {
  const n = Number(buf.readBigUInt64LE(0))
  let at = 8
  const out = []
  for (let i = 0; i < n; i++) {
    const key = buf.readUInt32LE(at)
    at += 4
    const rest = buf.subarray(at)
    const bm = RoaringBitmap32.deserialize(rest, 'portable')
    at += bm.getSerializationSizeInBytes('portable')
    for (const v of bm.toArray()) out.push(key * 2 ** 32 + v)
  }
  if (at !== buf.length) throw new Error(`bitmap: ${buf.length - at} bytes after its end`)
  return out
}

function bitmapWrite(positions) {
  const groups = new Map()
  for (const p of positions) {
    const key = Math.floor(p / 2 ** 32)
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(p - key * 2 ** 32)
  }
  const keys = [...groups.keys()].sort((a, b) => a - b)
  const parts = []
  const count = Buffer.alloc(8)
  count.writeBigUInt64LE(BigInt(keys.length))
  parts.push(count)
  for (const k of keys) {
    const kb = Buffer.alloc(4)
    kb.writeUInt32LE(k)
    const bm = new RoaringBitmap32(groups.get(k))
    bm.runOptimize()
    parts.push(kb, bm.serialize('portable'))
  }
  return Buffer.concat(parts)
}

function blob(positions) {
  const body = Buffer.concat([MAGIC, bitmapWrite(positions)])
  const len = Buffer.alloc(4)
  len.writeUInt32BE(body.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(body))
  return Buffer.concat([len, body, crc])
}

function puffin(blobs) {
  const parts = [Buffer.from('PFA1')]
  let at = 4
  const meta = []
  for (const { referenced, positions } of blobs) {
    const b = blob(positions)
    meta.push({
      type: 'deletion-vector-v1', fields: [2147483645], 'snapshot-id': -1,
      'sequence-number': -1, offset: at, length: b.length,
      properties: { 'referenced-data-file': referenced, cardinality: String(positions.length) },
    })
    parts.push(b)
    at += b.length
  }
  const payload = Buffer.from(JSON.stringify({ blobs: meta, properties: { 'created-by': 'dv_oracle.mjs (roaring npm)' } }))
  const tail = Buffer.alloc(12)
  tail.writeInt32LE(payload.length, 0)
  tail.write('PFA1', 8)
  parts.push(Buffer.from('PFA1'), payload, tail)
  return { bytes: Buffer.concat(parts), meta }
}

function puffinRead(buf) {
  if (buf.subarray(0, 4).toString() !== 'PFA1') throw new Error('no PFA1 magic at byte 0')
  if (buf.subarray(buf.length - 4).toString() !== 'PFA1') throw new Error('no PFA1 magic at the end')
  const size = buf.readInt32LE(buf.length - 12)
  if (buf[buf.length - 8] & 1) throw new Error('compressed footer')
  const payload = JSON.parse(buf.subarray(buf.length - 12 - size, buf.length - 12).toString())
  return payload.blobs.map((b) => {
    const raw = buf.subarray(b.offset, b.offset + b.length)
    const len = raw.readUInt32BE(0)
    if (len + 8 !== raw.length) throw new Error('length field')
    const body = raw.subarray(4, 4 + len)
    if (!body.subarray(0, 4).equals(MAGIC)) throw new Error('magic')
    if (zlib.crc32(body) !== raw.readUInt32BE(4 + len)) throw new Error('crc')
    const positions = bitmapRead(body.subarray(4))
    if (b.properties && b.properties.cardinality !== String(positions.length)) throw new Error('cardinality')
    return { offset: b.offset, length: b.length, referenced: b.properties && b.properties['referenced-data-file'], positions }
  })
}

function readAvro(file) {
  return new Promise((resolve, reject) => {
    const records = []
    let type
    let codec
    const meta = {}
    let schema
    avro
      .createFileDecoder(file, {
        codecs,
        parseHook: (w) => avro.Type.forSchema(w, { wrapUnions: false, typeHook }),
      })
      .on('metadata', (t, c, header) => {
        type = t
        codec = c
        for (const k of Object.keys(header.meta)) if (!k.startsWith('avro.')) meta[k] = header.meta[k]
        schema = JSON.parse(header.meta['avro.schema'].toString())
      })
      .on('data', (r) => records.push(r))
      .on('end', () => resolve({ type, schema, codec, meta, records }))
      .on('error', reject)
  })
}

function writeAvro(file, { type, schema, codec, meta, records }) {
  return new Promise((resolve, reject) => {
    const enc = new avro.streams.BlockEncoder(type, {
      codec,
      codecs: { null: (b, cb) => cb(null, b), deflate: zlib.deflateRaw },
      metadata: meta,
    })
    // the header keeps the writer's schema text as it was (avsc's own rendering of a
    // parsed type drops the Iceberg field ids); values are written with the parsed type
    enc._schema = schema
    const out = fs.createWriteStream(file)
    enc.pipe(out)
    out.on('finish', resolve)
    enc.on('error', reject)
    for (const r of records) enc.write(r)
    enc.end()
  })
}

async function table(dir, positions, given) {
  const md = path.join(dir, 'metadata')
  const delManifest = path.join(md, 'legacy-bare-deletion-vector-m0.avro')
  const list = path.join(md, 'snap-legacy-bare-deletion-vector.avro')
  const puffinPath = path.join(dir, 'data', 'legacy-bare-deletion-vector.puffin')
  const m = await readAvro(delManifest)
  if (m.records.length !== 1) throw new Error('expected one delete entry')
  const df = m.records[0].data_file
  let offset, length, card
  if (given) {
    fs.copyFileSync(given.file, puffinPath)
    offset = given.offset
    length = given.length
    card = positions.length
  } else {
    const p = puffin([{ referenced: df.referenced_data_file, positions }])
    fs.writeFileSync(puffinPath, p.bytes)
    offset = p.meta[0].offset
    length = p.meta[0].length
    card = positions.length
  }
  df.content_offset = BigInt(offset)
  df.content_size_in_bytes = BigInt(length)
  df.file_size_in_bytes = BigInt(fs.statSync(puffinPath).size)
  df.record_count = BigInt(card)
  await writeAvro(delManifest, m)
  const l = await readAvro(list)
  for (const r of l.records)
    if (r.manifest_path.endsWith('legacy-bare-deletion-vector-m0.avro'))
      r.manifest_length = BigInt(fs.statSync(delManifest).size)
  await writeAvro(list, l)
  process.stdout.write(JSON.stringify({ referenced: df.referenced_data_file, offset, length }) + '\n')
}

async function main() {
  const [mode, ...raw] = process.argv.slice(2)
  const args = raw.map((a) => (a.startsWith('@') ? fs.readFileSync(a.slice(1), 'utf8') : a))
  if (mode === 'read') {
    for (const b of puffinRead(fs.readFileSync(args[0]))) process.stdout.write(JSON.stringify(b) + '\n')
  } else if (mode === 'bitmap-read') {
    for (const f of args) process.stdout.write(JSON.stringify(bitmapRead(fs.readFileSync(f))) + '\n')
  } else if (mode === 'bitmap-write') {
    JSON.parse(args[1]).forEach((l, i) => fs.writeFileSync(`${args[0]}${i}.bin`, bitmapWrite(l)))
  } else if (mode === 'puffin-write') {
    fs.writeFileSync(args[0], puffin(JSON.parse(args[1])).bytes)
  } else if (mode === 'table') {
    const given = args[2] ? { file: args[2], offset: Number(args[3]), length: Number(args[4]) } : null
    await table(args[0], JSON.parse(args[1]), given)
  } else {
    process.stderr.write('usage: see the head of dv_oracle.mjs\n')
    process.exit(2)
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n')
  process.exit(1)
})
