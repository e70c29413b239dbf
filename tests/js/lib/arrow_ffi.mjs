// arrow_ffi.mjs - reads Arrow arrays exported through the Arrow C Data Interface from
// parquet-wasm's WebAssembly memory (wasm32: pointers are 4 bytes, int64 fields 8-byte
// aligned), so the parquet-wasm oracle needs no Arrow JS library. Values come back in the
// intermediate form of canon.mjs.
//
// Struct layouts on wasm32 (CDataInterface.html "Structure definitions"):
//   ArrowSchema { format*@0, name*@4, metadata*@8, flags i64@16, n_children i64@24,
//                 children**@32, dictionary*@36, release@40, private@44 }
//   ArrowArray  { length i64@0, null_count i64@8, offset i64@16, n_buffers i64@24,
//                 n_children i64@32, buffers**@40, children**@44, dictionary*@48,
//                 release@52, private@56 }

import { DateValue, DecimalValue, TimeValue, TsValue } from './canon.mjs'

export class WasmView {
  constructor(memory) {
    this.memory = memory
  }
  get dv() {
    // The memory may grow between calls; always view the current buffer.
    if (!this._dv || this._dv.buffer !== this.memory.buffer) this._dv = new DataView(this.memory.buffer)
    return this._dv
  }
  u32(p) {
    return this.dv.getUint32(p, true)
  }
  i64(p) {
    return Number(this.dv.getBigInt64(p, true))
  }
  cstr(p) {
    if (!p) return null
    const bytes = new Uint8Array(this.memory.buffer)
    let e = p
    while (bytes[e]) e++
    return new TextDecoder().decode(bytes.subarray(p, e))
  }
  bytes(p, n) {
    return new Uint8Array(this.memory.buffer, p, n).slice()
  }
}

export function readSchema(w, p) {
  const n = w.i64(p + 24)
  const childrenPtr = w.u32(p + 32)
  const children = []
  for (let i = 0; i < n; i++) children.push(readSchema(w, w.u32(childrenPtr + 4 * i)))
  const dict = w.u32(p + 36)
  return {
    format: w.cstr(w.u32(p)),
    name: w.cstr(w.u32(p + 4)),
    flags: w.i64(p + 16),
    children,
    dictionary: dict ? readSchema(w, dict) : null,
  }
}

function readArrayHeader(w, p) {
  const nBuffers = w.i64(p + 24)
  const nChildren = w.i64(p + 32)
  const buffersPtr = w.u32(p + 40)
  const childrenPtr = w.u32(p + 44)
  const buffers = []
  for (let i = 0; i < nBuffers; i++) buffers.push(w.u32(buffersPtr + 4 * i))
  const children = []
  for (let i = 0; i < nChildren; i++) children.push(w.u32(childrenPtr + 4 * i))
  return {
    length: w.i64(p),
    nullCount: w.i64(p + 8),
    offset: w.i64(p + 16),
    buffers,
    children,
    dictionary: w.u32(p + 48),
  }
}

function bit(w, ptr, i) {
  return (w.dv.getUint8(ptr + (i >> 3)) >> (i & 7)) & 1
}

// Decode array at pointer p with schema s: returns a JS array of `length` values (null
// where invalid), honouring the array's offset.
export function decodeArray(w, s, p) {
  const a = readArrayHeader(w, p)
  const { length, offset } = a
  const valid = (i) => !a.buffers[0] || a.nullCount === 0 || bit(w, a.buffers[0], offset + i)
  const out = new Array(length)

  if (s.dictionary) {
    const dict = decodeArray(w, s.dictionary, a.dictionary)
    const idx = decodeFixed(w, s.format, a, valid)
    for (let i = 0; i < length; i++) out[i] = idx[i] === null ? null : dict[Number(idx[i])]
    return out
  }

  const f = s.format
  if (f === '+s') {
    const kids = s.children.map((cs, j) => decodeArray(w, cs, a.children[j]))
    for (let i = 0; i < length; i++) {
      if (!valid(i)) {
        out[i] = null
        continue
      }
      const o = {}
      s.children.forEach((cs, j) => {
        o[cs.name] = kids[j][offset + i]
      })
      out[i] = o
    }
    return out
  }
  if (f === '+l' || f === '+L' || f === '+m') {
    const child = decodeArray(w, s.children[0], a.children[0])
    const large = f === '+L'
    const off = (i) => (large ? w.i64(a.buffers[1] + 8 * i) : w.dv.getInt32(a.buffers[1] + 4 * i, true))
    for (let i = 0; i < length; i++) {
      if (!valid(i)) {
        out[i] = null
        continue
      }
      const items = child.slice(off(offset + i), off(offset + i + 1))
      // map entries are structs {key, value} (names vary): turn them into [k, v] pairs
      out[i] = f === '+m' ? items.map((e) => {
        const names = s.children[0].children.map((c) => c.name)
        return [e[names[0]], e[names[1]]]
      }) : items
    }
    return out
  }
  if (f.startsWith('+w:')) {
    const n = +f.slice(3)
    const child = decodeArray(w, s.children[0], a.children[0])
    for (let i = 0; i < length; i++) out[i] = valid(i) ? child.slice((offset + i) * n, (offset + i + 1) * n) : null
    return out
  }
  if (f === 'u' || f === 'z' || f === 'U' || f === 'Z') {
    const large = f === 'U' || f === 'Z'
    const off = (i) => (large ? w.i64(a.buffers[1] + 8 * i) : w.dv.getInt32(a.buffers[1] + 4 * i, true))
    const dec = new TextDecoder('utf-8', { fatal: true })
    for (let i = 0; i < length; i++) {
      if (!valid(i)) {
        out[i] = null
        continue
      }
      const start = off(offset + i)
      const b = w.bytes(a.buffers[2] + start, off(offset + i + 1) - start)
      out[i] = f === 'u' || f === 'U' ? dec.decode(b) : b
    }
    return out
  }
  if (f === 'vu' || f === 'vz') {
    const dec = new TextDecoder('utf-8', { fatal: true })
    for (let i = 0; i < length; i++) {
      if (!valid(i)) {
        out[i] = null
        continue
      }
      const v = a.buffers[1] + 16 * (offset + i)
      const len = w.dv.getInt32(v, true)
      let b
      if (len <= 12) b = w.bytes(v + 4, len)
      else b = w.bytes(a.buffers[2 + w.dv.getInt32(v + 8, true)] + w.dv.getInt32(v + 12, true), len)
      out[i] = f === 'vu' ? dec.decode(b) : b
    }
    return out
  }
  if (f.startsWith('w:')) {
    const n = +f.slice(2)
    for (let i = 0; i < length; i++) out[i] = valid(i) ? w.bytes(a.buffers[1] + n * (offset + i), n) : null
    return out
  }
  if (f.startsWith('d:')) {
    const [, scale, bits = '128'] = f.slice(2).split(',').map(Number).concat([])
    const width = Number(bits) / 8
    for (let i = 0; i < length; i++) {
      if (!valid(i)) {
        out[i] = null
        continue
      }
      const base = a.buffers[1] + width * (offset + i)
      let v = 0n
      for (let k = width - 1; k >= 0; k--) v = (v << 8n) | BigInt(w.dv.getUint8(base + k))
      if (v >= 1n << BigInt(width * 8 - 1)) v -= 1n << BigInt(width * 8)
      out[i] = new DecimalValue(v, scale)
    }
    return out
  }
  return decodeFixed(w, f, a, valid)
}

// Fixed-width primitives (also dictionary indices).
function decodeFixed(w, f, a, valid) {
  const { length, offset } = a
  const out = new Array(length)
  const data = a.buffers[1]
  const dv = w.dv
  let get
  switch (f) {
    case 'n': return out.fill(null)
    case 'b': get = (i) => bit(w, data, i) === 1; break
    case 'c': get = (i) => dv.getInt8(data + i); break
    case 'C': get = (i) => dv.getUint8(data + i); break
    case 's': get = (i) => dv.getInt16(data + 2 * i, true); break
    case 'S': get = (i) => dv.getUint16(data + 2 * i, true); break
    case 'i': get = (i) => dv.getInt32(data + 4 * i, true); break
    case 'I': get = (i) => dv.getUint32(data + 4 * i, true); break
    case 'l': get = (i) => dv.getBigInt64(data + 8 * i, true); break
    case 'L': get = (i) => dv.getBigUint64(data + 8 * i, true); break
    case 'f': get = (i) => dv.getFloat32(data + 4 * i, true); break
    case 'g': get = (i) => dv.getFloat64(data + 8 * i, true); break
    case 'tdD': get = (i) => new DateValue(dv.getInt32(data + 4 * i, true)); break
    case 'tdm': get = (i) => new DateValue(Number(dv.getBigInt64(data + 8 * i, true) / 86400000n)); break
    case 'tts': get = (i) => new TimeValue(BigInt(dv.getInt32(data + 4 * i, true)) * 1000000n); break
    case 'ttm': get = (i) => new TimeValue(BigInt(dv.getInt32(data + 4 * i, true)) * 1000n); break
    case 'ttu': get = (i) => new TimeValue(dv.getBigInt64(data + 8 * i, true)); break
    case 'ttn': get = (i) => new TimeValue(dv.getBigInt64(data + 8 * i, true) / 1000n); break
    default: {
      const m = /^ts([smun]):(.*)$/.exec(f)
      if (!m) throw new Error(`parquet-wasm: Arrow format '${f}' not supported`)
      const tz = m[2] !== ''
      const unit = { s: 'ms', m: 'ms', u: 'us', n: 'ns' }[m[1]]
      const mul = m[1] === 's' ? 1000n : 1n
      get = (i) => new TsValue(dv.getBigInt64(data + 8 * i, true) * mul, unit, tz)
    }
  }
  for (let i = 0; i < length; i++) out[i] = valid(i) ? get(offset + i) : null
  return out
}
