// manifest_check.mjs - avsc (an independent Avro implementation) as an oracle for the
// Iceberg manifests and manifest lists floe writes. Used by
// tests/integration/manifest_avsc.sh and format_v1.sh.
//
//   node manifest_check.mjs [--format-version=N] <avsc-dir> <file>...
//
// For each file: the header keys the spec requires (manifests: schema, schema-id,
// partition-spec, partition-spec-id, format-version "2", content; lists: snapshot-id,
// parent-snapshot-id, sequence-number, format-version "2"); the writer's Avro schema equal
// to the spec's v2 schema (<avsc-dir>/manifest_entry_v2.avsc, manifest_list_v2.avsc) with
// every field id, type, optionality and map key/value id, the partition struct checked
// against the header's partition-spec; then every record decoded by avsc with the spec
// schema as the reader schema. Files whose header says format-version "1" are checked
// against the v1 schemas (*_v1.avsc: no content or sequence-number header keys; every
// field written is the spec's, every required one present; schema-id optional).
// --format-version=N fails files of another version. Prints "ok <kind> <records> <file>"
// per file; exits 1 on the first failure.
import fs from 'node:fs'
import path from 'node:path'
import avro from 'avsc'
import { codecs, typeHook } from './lib/avro_read.mjs'

function fail(file, msg) {
  process.stderr.write(`FAIL ${file}: ${msg}\n`)
  process.exit(1)
}

// Drop what does not change the meaning (docs), then compare as sorted-key JSON.
function canon(s) {
  if (Array.isArray(s)) return s.map(canon)
  if (s && typeof s === 'object') {
    const o = {}
    for (const k of Object.keys(s).sort()) if (k !== 'doc') o[k] = canon(s[k])
    return o
  }
  return s
}

// Walk both schemas and report the first difference with its path.
function diff(a, b, where) {
  const ca = JSON.stringify(canon(a))
  const cb = JSON.stringify(canon(b))
  if (ca === cb) return null
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (k === 'doc') continue
      if (k === 'fields' && Array.isArray(a.fields) && Array.isArray(b.fields)) {
        if (a.fields.length !== b.fields.length)
          return `${where}: ${a.fields.length} fields, spec has ${b.fields.length}`
        for (let i = 0; i < a.fields.length; i++) {
          const d = diff(a.fields[i], b.fields[i], `${where}.${b.fields[i].name}`)
          if (d) return d
        }
        continue
      }
      const d = diff(a[k], b[k], `${where}/${k}`)
      if (d) return d
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], b[i], `${where}[${i}]`)
      if (d) return d
    }
  }
  return `${where}: ${ca} != spec ${cb}`
}

// Every field of record w is the field of spec record s with its name (compared as diff()
// does, nested records alike); every field of s that is not optional is in w.
function subset(w, s, where) {
  const optional = (f) => Array.isArray(f.type) && f.type[0] === 'null'
  for (const f of w.fields) {
    const g = s.fields.find((x) => x.name === f.name)
    if (!g) return `${where}.${f.name}: not a field of the spec`
    const rec = (t) => t && typeof t === 'object' && !Array.isArray(t) && t.type === 'record'
    const d = rec(f.type) && rec(g.type)
      ? (f['field-id'] !== g['field-id'] ? `${where}.${f.name}: field-id` : subset(f.type, g.type, `${where}.${f.name}`))
      : diff(f, g, `${where}.${f.name}`)
    if (d) return d
  }
  for (const g of s.fields)
    if (!optional(g) && !w.fields.some((f) => f.name === g.name)) return `${where}: lacks required ${g.name}`
  return null
}

function header(file) {
  return new Promise((resolve, reject) => {
    const dec = avro.createFileDecoder(file, { codecs, parseHook: () => avro.Type.forSchema('null') })
    dec.on('metadata', (type, codec, hdr) => {
      const meta = {}
      for (const k of Object.keys(hdr.meta)) meta[k] = hdr.meta[k].toString('utf8')
      dec.destroy()
      resolve({ codec, meta })
    })
    dec.on('error', reject)
  })
}

function decodeAll(file, readerSchema) {
  return new Promise((resolve, reject) => {
    const records = []
    const dec = avro.createFileDecoder(file, {
      codecs,
      parseHook: (writer) => {
        const w = avro.Type.forSchema(writer, { wrapUnions: false, typeHook })
        const r = avro.Type.forSchema(readerSchema, { wrapUnions: false, typeHook })
        // resolution by avsc: every spec field must be readable from the writer's
        return r.createResolver(w) && w
      },
    })
    dec.on('data', (r) => records.push(r))
    dec.on('error', reject)
    dec.on('end', () => resolve(records))
  })
}

async function check(dir, file) {
  const { meta } = await header(file)
  const writer = JSON.parse(meta['avro.schema'])
  const isManifest = 'partition-spec' in meta || writer.name === 'manifest_entry'
  const fv = meta['format-version']
  if (fv !== '2' && fv !== '1') fail(file, `format-version ${fv}`)
  if (expectVersion !== null && fv !== expectVersion)
    fail(file, `format-version ${fv}, expected ${expectVersion}`)
  let spec
  if (isManifest) {
    const keys = ['schema', 'partition-spec', 'partition-spec-id']
    for (const k of fv === '2' ? [...keys, 'schema-id', 'content'] : keys)
      if (!(k in meta)) fail(file, `header lacks ${k}`)
    if (fv === '2' && !['data', 'deletes'].includes(meta.content)) fail(file, `content ${meta.content}`)
    if (fv === '1' && 'content' in meta) fail(file, 'a v1 manifest has no content header')
    const schema = JSON.parse(meta.schema)
    if (schema.type !== 'struct' || ('schema-id' in meta && String(schema['schema-id']) !== meta['schema-id']))
      fail(file, 'header schema / schema-id disagree')
    const pspec = JSON.parse(meta['partition-spec'])
    if (!Array.isArray(pspec)) fail(file, 'partition-spec is not the fields array')
    spec = JSON.parse(fs.readFileSync(path.join(dir, `manifest_entry_v${fv}.avsc`), 'utf8'))
    delete spec.doc
    // the partition struct: one optional field per partition field, ids from the spec
    const df = writer.fields.find((f) => f.name === 'data_file')
    const part = df && df.type.fields.find((f) => f.name === 'partition')
    if (!part || part.type.name !== 'r102') fail(file, 'no partition record r102')
    const pf = part.type.fields
    if (pf.length !== pspec.length) fail(file, `${pf.length} partition fields, spec has ${pspec.length}`)
    pf.forEach((f, i) => {
      if (f['field-id'] !== pspec[i]['field-id']) fail(file, `partition field ${i}: id ${f['field-id']} != ${pspec[i]['field-id']}`)
      if (!Array.isArray(f.type) || f.type[0] !== 'null' || f.default !== null)
        fail(file, `partition field ${f.name} is not optional with default null`)
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(f.name)) fail(file, `bad Avro name ${f.name}`)
    })
    const sdf = spec.fields.find((f) => f.name === 'data_file')
    sdf.type.fields.find((f) => f.name === 'partition').type = part.type
  } else {
    for (const k of ['snapshot-id', 'parent-snapshot-id', ...(fv === '2' ? ['sequence-number'] : [])])
      if (!(k in meta)) fail(file, `header lacks ${k}`)
    if (fv === '1' && 'sequence-number' in meta) fail(file, 'a v1 list has no sequence-number')
    spec = JSON.parse(fs.readFileSync(path.join(dir, `manifest_list_v${fv}.avsc`), 'utf8'))
    delete spec.doc
  }
  // v2: the writer's schema is the spec's; v1 (whose spec keeps deprecated optional
  // fields writers leave out): every field written is the spec's, every required one is there
  const d = fv === '2' ? diff(writer, spec, writer.name) : subset(writer, spec, writer.name)
  if (d) fail(file, `schema differs from the spec: ${d}`)
  const records = await decodeAll(file, spec)
  process.stdout.write(`ok ${isManifest ? 'manifest' : 'list'} ${records.length} ${file}\n`)
}

const argv = process.argv.slice(2)
let expectVersion = null
if (argv[0] && argv[0].startsWith('--format-version=')) expectVersion = argv.shift().split('=')[1]
const [dir, ...files] = argv
if (!dir || files.length === 0) {
  process.stderr.write('usage: manifest_check.mjs <avsc-dir> <file>...\n')
  process.exit(2)
}
for (const f of files) {
  try {
    await check(dir, f)
  } catch (e) {
    fail(f, String(e && e.message ? e.message : e))
  }
}
