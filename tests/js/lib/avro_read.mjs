// avro_read.mjs - what the avsc-based oracles share for reading Avro container files:
// the block codecs Iceberg writers use (null, deflate, snappy with its CRC, zstandard) and
// longs as BigInt (avsc's default long refuses values past 2^53).
import fs from 'node:fs'
import zlib from 'node:zlib'
import avro from 'avsc'
import { snappyUncompress } from 'hyparquet'
import { decompress as zstdDecompress } from 'fzstd'

export const longType = avro.types.LongType.__with({
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

export const typeHook = (schema) =>
  schema === 'long' || (schema && typeof schema === 'object' && schema.type === 'long')
    ? longType
    : undefined

function readUvarint(buf) {
  let result = 0
  let shift = 0
  for (let i = 0; i < buf.length && i < 5; i++) {
    result += (buf[i] & 0x7f) * 2 ** shift
    if (!(buf[i] & 0x80)) return result
    shift += 7
  }
  throw new Error('bad snappy length')
}

export const codecs = {
  null: (buf, cb) => cb(null, buf),
  deflate: zlib.inflateRaw,
  snappy: (buf, cb) => {
    try {
      const body = buf.subarray(0, buf.length - 4)
      const out = new Uint8Array(readUvarint(body))
      snappyUncompress(body, out)
      if (zlib.crc32(out) !== buf.readUInt32BE(buf.length - 4)) throw new Error('snappy CRC mismatch')
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

// Every record of an Avro container file (a local path), longs as BigInt.
export function readRecords(file) {
  return new Promise((resolve, reject) => {
    const out = []
    avro
      .createFileDecoder(file, {
        codecs,
        parseHook: (w) => avro.Type.forSchema(w, { wrapUnions: false, typeHook }),
      })
      .on('data', (r) => out.push(r))
      .on('end', () => resolve(out))
      .on('error', reject)
  })
}

// A local path for a table location (file:// URIs as floe records them).
export function localPath(p) {
  return p.startsWith('file://') ? p.slice(7) : p
}

// The data_file of every live entry (status not DELETED) of the data manifests of the
// current snapshot of the table whose metadata JSON is at metaPath.
export async function liveDataFiles(metaPath) {
  const meta = JSON.parse(fs.readFileSync(metaPath, 'utf8'))
  const snap = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id'])
  if (!snap) throw new Error('no current snapshot')
  const out = []
  for (const m of await readRecords(localPath(snap['manifest-list']))) {
    if (m.content !== undefined && m.content !== 0) continue
    for (const e of await readRecords(localPath(m.manifest_path)))
      if (e.status !== 2) out.push(e.data_file)
  }
  return out
}
