#!/usr/bin/env node
// variant_bounds_oracle.mjs - the manifest bounds of a variant column, read without floe
// (tests/integration/variant_shred_prune.sh).
//
//   variant_bounds_oracle.mjs META.json FIELD_ID
//        every live data file of the current snapshot (manifests read by avsc): one line
//        per file, "RECORDS lower JSON" and "RECORDS upper JSON", where JSON maps each
//        normalized path of the bound object to [TYPE, VALUE] (TYPE int8 / int16 / int32 /
//        int64 / double / boolean / string; integers as decimal strings), keys sorted;
//        "RECORDS lower none" when the file has no such bound.
//
// The bound is decoded here from format/spec.md ("Bounds for Variant": the metadata blob
// followed by an object value) and apache/parquet-format VariantEncoding.md, checking
// what a reader may rely on: version 1, the sorted dictionary, the object's ids and
// offsets in range and its keys in order, primitive values only, nothing left over.
import { liveDataFiles } from './lib/avro_read.mjs'

function le(buf, off, w) {
  let v = 0
  for (let i = w - 1; i >= 0; i--) v = v * 256 + buf[off + i]
  return v
}

function decodeMetadata(buf) {
  const h = buf[0]
  if ((h & 0x0f) !== 1) throw new Error(`metadata version ${h & 0x0f}`)
  const sorted = (h >> 4) & 1
  const osz = (h >> 6) + 1
  const n = le(buf, 1, osz)
  const offs = []
  for (let i = 0; i <= n; i++) offs.push(le(buf, 1 + osz * (i + 1), osz))
  const base = 1 + osz * (n + 2)
  const keys = []
  for (let i = 0; i < n; i++) keys.push(buf.subarray(base + offs[i], base + offs[i + 1]))
  for (let i = 1; i < n; i++)
    if (Buffer.compare(keys[i - 1], keys[i]) >= 0) throw new Error('dictionary not sorted')
  if (n && !sorted) throw new Error('sorted_strings not set')
  return { keys: keys.map((k) => k.toString('utf8')), size: base + offs[n] }
}

function decodePrimitive(v) {
  const basic = v[0] & 3
  const t = v[0] >> 2
  if (basic === 1) return [['string', v.subarray(1, 1 + t).toString('utf8')], 1 + t]
  if (basic !== 0) throw new Error(`bound is not a primitive (basic type ${basic})`)
  switch (t) {
    case 1: return [['boolean', true], 1]
    case 2: return [['boolean', false], 1]
    case 3: return [['int8', String(v.readInt8(1))], 2]
    case 4: return [['int16', String(v.readInt16LE(1))], 3]
    case 5: return [['int32', String(v.readInt32LE(1))], 5]
    case 6: return [['int64', String(v.readBigInt64LE(1))], 9]
    case 7: return [['double', v.readDoubleLE(1)], 9]
    case 16: {
      const n = v.readUInt32LE(1)
      return [['string', v.subarray(5, 5 + n).toString('utf8')], 5 + n]
    }
    default: throw new Error(`primitive type ${t} not expected in a bound`)
  }
}

export function decodeBound(buf) {
  const meta = decodeMetadata(buf)
  const v = buf.subarray(meta.size)
  if ((v[0] & 3) !== 2) throw new Error('bound value is not an object')
  const vh = v[0] >> 2
  const large = (vh >> 4) & 1
  const idsz = ((vh >> 2) & 3) + 1
  const osz = (vh & 3) + 1
  const n = le(v, 1, large ? 4 : 1)
  let at = 1 + (large ? 4 : 1)
  const ids = []
  for (let i = 0; i < n; i++, at += idsz) ids.push(le(v, at, idsz))
  const offs = []
  for (let i = 0; i <= n; i++, at += osz) offs.push(le(v, at, osz))
  const out = {}
  let prev = null
  for (let i = 0; i < n; i++) {
    if (ids[i] >= meta.keys.length) throw new Error(`field id ${ids[i]} out of range`)
    const key = meta.keys[ids[i]]
    if (prev !== null && Buffer.compare(Buffer.from(prev), Buffer.from(key)) >= 0)
      throw new Error('object keys not in order')
    prev = key
    const [val, len] = decodePrimitive(v.subarray(at + offs[i]))
    if (offs[i] + len > offs[n]) throw new Error(`value of ${key} overruns the object`)
    out[key] = val
  }
  if (at + offs[n] !== v.length) throw new Error('bytes after the bound object')
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b))))
}

async function main() {
  const [metaPath, idText] = process.argv.slice(2)
  if (!metaPath || !idText) {
    process.stderr.write('usage: variant_bounds_oracle.mjs META.json FIELD_ID\n')
    return 2
  }
  const id = Number(idText)
  for (const df of await liveDataFiles(metaPath)) {
    for (const side of ['lower', 'upper']) {
      const kv = (df[`${side}_bounds`] || []).find((x) => x.key === id)
      const text = kv ? JSON.stringify(decodeBound(Buffer.from(kv.value))) : 'none'
      process.stdout.write(`${df.record_count} ${side} ${text}\n`)
    }
  }
  return 0
}

main().then((rc) => { process.exitCode = rc }, (e) => {
  process.stderr.write(`variant_bounds_oracle: ${e.message}\n`)
  process.exitCode = 1
})
