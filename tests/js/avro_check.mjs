// avro_check.mjs - avsc (an independent Avro implementation) as an oracle for floe's Avro
// container codec. Used by tests/unit/test_avro.c.
//
//   node avro_check.mjs read <file>          prints {"codec", "meta", "count", "records"}
//   node avro_check.mjs count <file>...      prints "<count>\t<file>" or "error\t<file>\t<msg>"
//   node avro_check.mjs write <file> <codec> writes a fixed test file (codec: null, deflate,
//                                            snappy) and prints {"records": [...]}
//
// JSON conventions (shared with floe_avro_value_to_json): longs as exact integers, bytes and
// fixed as lowercase hex, enums as symbols, unions unwrapped, NaN/Infinity as strings.
import fs from 'node:fs'
import zlib from 'node:zlib'
import avro from 'avsc'
import { ByteWriter } from 'hyparquet-writer'
import { snappyCompress } from 'hyparquet-writer/src/snappy.js'
import { codecs, longType } from './lib/avro_read.mjs'

const typeOpts = () => ({
  wrapUnions: false,
  typeHook: (schema) => {
    if (schema === 'long' || (schema && typeof schema === 'object' && schema.type === 'long')) {
      return longType
    }
    return undefined
  },
})


const writeCodecs = {
  null: (buf, cb) => cb(null, buf),
  deflate: zlib.deflateRaw,
  snappy: (buf, cb) => {
    const w = new ByteWriter()
    snappyCompress(w, new Uint8Array(buf))
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(buf))
    cb(null, Buffer.concat([Buffer.from(w.getBuffer()), crc]))
  },
}

function canon(v) {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '"NaN"'
    if (v === Infinity) return '"Infinity"'
    if (v === -Infinity) return '"-Infinity"'
    return JSON.stringify(v)
  }
  if (typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v)
  if (Buffer.isBuffer(v)) return JSON.stringify(v.toString('hex'))
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']'
  return '{' + Object.keys(v).map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}'
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const records = []
    let meta = {}
    let codec = null
    const dec = avro.createFileDecoder(file, {
      codecs,
      parseHook: (schema) => avro.Type.forSchema(schema, typeOpts()),
    })
    dec.on('metadata', (type, c, header) => {
      codec = c
      for (const k of Object.keys(header.meta)) {
        if (k !== 'avro.schema') meta[k] = header.meta[k].toString('utf8')
      }
    })
    dec.on('data', (r) => records.push(r))
    dec.on('error', reject)
    dec.on('end', () => resolve({ codec, meta, records }))
  })
}

function testSchema() {
  return {
    type: 'record',
    name: 'interop',
    namespace: 'floe.test',
    fields: [
      { name: 'b', type: 'boolean' },
      { name: 'i', type: 'int' },
      { name: 'l', type: 'long' },
      { name: 'f', type: 'float' },
      { name: 'd', type: 'double' },
      { name: 's', type: 'string' },
      { name: 'by', type: 'bytes' },
      { name: 'fx', type: { type: 'fixed', name: 'f4', size: 4 } },
      { name: 'e', type: { type: 'enum', name: 'color', symbols: ['RED', 'GREEN', 'BLUE'] } },
      { name: 'arr', type: { type: 'array', items: 'long' } },
      { name: 'm', type: { type: 'map', values: ['null', 'string'] } },
      { name: 'opt', type: ['null', 'long'], default: null },
      {
        name: 'sub',
        type: ['null', {
          type: 'record',
          name: 'sub',
          fields: [
            { name: 'x', type: 'int' },
            { name: 'tags', type: { type: 'array', items: 'string' } },
          ],
        }],
      },
      { name: 'n', type: 'null' },
    ],
  }
}

function testRecord(i) {
  const m = {}
  for (let k = 0; k < i % 4; k++) m['k' + k] = k % 2 ? null : 'v' + i + '_' + k
  return {
    b: i % 3 === 0,
    i: (i * 7919) % 100000 - 50000,
    l: BigInt(i) * 1234567890123457n - 4611686018427387904n,
    f: i / 8,
    d: i * 1.0e-3 - 7.25e10,
    s: 'row ' + i + ' é\u00e4\u4e2d',
    by: Buffer.from([i & 255, (i >> 8) & 255, 0, 255]),
    fx: Buffer.from([1, 2, 3, i & 255]),
    e: ['RED', 'GREEN', 'BLUE'][i % 3],
    arr: Array.from({ length: i % 5 }, (_, k) => BigInt(k) - 2n ** 40n),
    m,
    opt: i % 2 ? BigInt(i) : null,
    sub: i % 3 === 1 ? null : { x: i, tags: Array.from({ length: i % 3 }, (_, k) => 't' + k) },
    n: null,
  }
}

async function main() {
  const [mode, ...args] = process.argv.slice(2)
  if (mode === 'read') {
    const { codec, meta, records } = await readFile(args[0])
    process.stdout.write(
      '{"codec":' + JSON.stringify(codec) + ',"meta":' + JSON.stringify(meta) +
      ',"count":' + records.length + ',"records":[' + records.map(canon).join(',\n') + ']}\n')
  } else if (mode === 'count') {
    for (const file of args) {
      try {
        const { records } = await readFile(file)
        process.stdout.write(records.length + '\t' + file + '\n')
      } catch (e) {
        process.stdout.write('error\t' + file + '\t' + String(e.message).replace(/\s+/g, ' ') + '\n')
      }
    }
  } else if (mode === 'write') {
    const [file, codec] = args
    const type = avro.Type.forSchema(testSchema(), typeOpts())
    const records = Array.from({ length: 300 }, (_, i) => testRecord(i))
    await new Promise((resolve, reject) => {
      const enc = new avro.streams.BlockEncoder(type, {
        codec,
        codecs: writeCodecs,
        blockSize: 2048,
        metadata: { 'floe.origin': Buffer.from('avsc') },
      })
      const out = fs.createWriteStream(file)
      enc.pipe(out)
      out.on('finish', resolve)
      enc.on('error', reject)
      for (const r of records) enc.write(r)
      enc.end()
    })
    process.stdout.write('{"records":[' + records.map(canon).join(',\n') + ']}\n')
  } else {
    process.stderr.write('usage: avro_check.mjs read <file> | count <file>... | write <file> <codec>\n')
    process.exit(2)
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n')
  process.exit(1)
})
