// canon.mjs - the canonical NDJSON form that floe's test oracles print, and the Iceberg
// schema model that drives it. Every reader (read_parquet.mjs) and canon_ndjson.mjs
// produce this form; the C side (floe's own readers in tests) produces it too, so two
// outputs can be compared as text, line by line.
//
// CANONICAL FORM (one JSON object per row, one row per line, no spaces):
//   - object keys in schema order; every schema field present (null when absent);
//     fields the schema does not name are dropped.
//   - null                    -> null
//   - boolean                 -> true / false
//   - int, long               -> JSON integer, exact (64-bit values printed in full)
//   - float, double           -> JSON number printed as JavaScript's String(Number): the
//                                shortest digits that round-trip, exponent form "1e+21" /
//                                "1e-7" outside [1e-7, 1e21). A float is first widened to
//                                the double it denotes (Math.fround), then printed the same
//                                way (0.1f -> 0.10000000149011612).
//                                NaN, Infinity, -Infinity -> the strings "NaN", "Infinity",
//                                "-Infinity"; negative zero -> -0 (JSON number).
//   - decimal(P,S)            -> string with exactly S fraction digits ("-0.50", "12.00");
//                                S = 0 -> no point ("42").
//   - date                    -> "YYYY-MM-DD"
//   - time                    -> "HH:MM:SS.ffffff"
//   - timestamp               -> "YYYY-MM-DDTHH:MM:SS.ffffff"      (UTC wall clock)
//   - timestamptz             -> "YYYY-MM-DDTHH:MM:SS.ffffffZ"
//   - timestamp_ns(tz)        -> same with 9 fraction digits
//     Years 0..9999 use 4 digits; others "+YYYYYY" / "-YYYYYY" (ISO 8601 expanded).
//   - string                  -> JSON string as JSON.stringify writes it (escapes only
//                                ", \, and U+0000..U+001F: \b \f \n \r \t, others \u00xx
//                                lowercase; lone surrogates as \udxxx; the rest raw UTF-8)
//   - uuid                    -> "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" lowercase
//   - fixed(L), binary        -> lowercase hex string
//   - struct                  -> object, keys in schema order
//   - list                    -> array
//   - map                     -> array of [key, value] pairs sorted by the canonical JSON
//                                text of the key (code-unit order). Sorted, not file order,
//                                because hyparquet hands maps over as JS objects.
//
// Readers hand values to canonValue() in a reader-neutral intermediate form (numbers,
// bigints, strings, Uint8Array, and the small classes below); canonValue() checks them
// against the schema type and throws an Error naming the field path on a mismatch.

export class TsValue {
  // value: bigint in `unit` ('ms' | 'us' | 'ns'); tz: true/false, or null when unknown.
  constructor(value, unit, tz) {
    this.value = BigInt(value)
    this.unit = unit
    this.tz = tz
  }
  // Also the key text when a reader turns a map into a JS object (see mapKeyFromText).
  toString() {
    return `${this.value}${this.unit}`
  }
}

export class DateValue {
  constructor(days) {
    this.days = Number(days)
  }
  toString() {
    return `${this.days}d`
  }
}

export class TimeValue {
  // micros since midnight (bigint)
  constructor(micros) {
    this.micros = BigInt(micros)
  }
  toString() {
    return `${this.micros}us`
  }
}

export class DecimalValue {
  constructor(unscaled, scale) {
    this.unscaled = BigInt(unscaled)
    this.scale = scale
  }
  toString() {
    return fmtDecimal(this.unscaled, this.scale)
  }
}

// ---------------------------------------------------------------------------------------
// Schema model
// ---------------------------------------------------------------------------------------

// Parse an Iceberg type (string or object) into {type, ...}.
export function parseType(t, where = 'schema') {
  if (typeof t === 'string') {
    let m
    if ((m = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t))) {
      return { type: 'decimal', precision: +m[1], scale: +m[2] }
    }
    if ((m = /^fixed\[\s*(\d+)\s*\]$/.exec(t))) return { type: 'fixed', length: +m[1] }
    const prim = ['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp',
      'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'binary']
    if (prim.includes(t)) return { type: t }
    throw new Error(`${where}: unknown type '${t}'`)
  }
  if (!t || typeof t !== 'object') throw new Error(`${where}: bad type`)
  if (t.type === 'struct') {
    return { type: 'struct', fields: (t.fields || []).map((f) => parseField(f, where)) }
  }
  if (t.type === 'list') {
    return {
      type: 'list',
      element: { id: t['element-id'], name: 'element', required: !!t['element-required'],
        type: parseType(t.element, `${where}.element`) },
    }
  }
  if (t.type === 'map') {
    return {
      type: 'map',
      key: { id: t['key-id'], name: 'key', required: true, type: parseType(t.key, `${where}.key`) },
      value: { id: t['value-id'], name: 'value', required: !!t['value-required'],
        type: parseType(t.value, `${where}.value`) },
    }
  }
  throw new Error(`${where}: unknown type ${JSON.stringify(t)}`)
}

function parseField(f, where) {
  const path = `${where}.${f.name}`
  return { id: f.id, name: f.name, required: !!f.required, type: parseType(f.type, path) }
}

// Accepts an Iceberg schema object, or a table-metadata document (current schema).
export function parseSchema(json) {
  let s = json
  if (s && Array.isArray(s.schemas)) {
    const id = s['current-schema-id']
    s = s.schemas.find((x) => x['schema-id'] === id) || s.schemas[s.schemas.length - 1]
  } else if (s && s.schema && !s.fields) {
    s = s.schema
  }
  if (!s || s.type !== 'struct' || !Array.isArray(s.fields)) {
    throw new Error('schema: expected an Iceberg struct schema')
  }
  return parseType(s, '')
}

// ---------------------------------------------------------------------------------------
// Formatting helpers
// ---------------------------------------------------------------------------------------

function floorDiv(a, b) {
  const q = a / b
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q
}

function pad(n, w) {
  return String(n).padStart(w, '0')
}

// days since 1970-01-01 -> [y, m, d], proleptic Gregorian (400-year era arithmetic)
function civilFromDays(days) {
  let z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) -
    Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d]
}

export function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

function fmtYear(y) {
  if (y >= 0 && y <= 9999) return pad(y, 4)
  return (y < 0 ? '-' : '+') + pad(Math.abs(y), 6)
}

export function fmtDate(days) {
  const [y, m, d] = civilFromDays(days)
  return `${fmtYear(y)}-${pad(m, 2)}-${pad(d, 2)}`
}

// micros (bigint) since midnight
export function fmtTime(micros) {
  const us = BigInt(micros)
  const sec = us / 1000000n
  const frac = us % 1000000n
  const h = sec / 3600n
  const mi = (sec / 60n) % 60n
  const s = sec % 60n
  return `${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(frac, 6)}`
}

// value (bigint) in units of 10^-digits seconds since the epoch
export function fmtTimestamp(value, tz, digits = 6) {
  const perSec = 10n ** BigInt(digits)
  const v = BigInt(value)
  const sec = floorDiv(v, perSec)
  const frac = v - sec * perSec
  const days = floorDiv(sec, 86400n)
  const sod = sec - days * 86400n
  const date = fmtDate(Number(days))
  const h = sod / 3600n
  const mi = (sod / 60n) % 60n
  const s = sod % 60n
  return `${date}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(frac, digits)}${tz ? 'Z' : ''}`
}

export function fmtDecimal(unscaled, scale) {
  const v = BigInt(unscaled)
  const neg = v < 0n
  let digits = (neg ? -v : v).toString()
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0')
    digits = digits.slice(0, digits.length - scale) + '.' + digits.slice(digits.length - scale)
  }
  return (neg ? '-' : '') + digits
}

export function toHex(bytes) {
  let s = ''
  for (const b of bytes) s += (b < 16 ? '0' : '') + b.toString(16)
  return s
}

export function fmtUuidBytes(bytes) {
  const h = toHex(bytes)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

// Convert a TsValue to the given unit ('us' or 'ns'), exactly. A ns value shown as us
// loses its sub-microsecond part only if that part is zero; otherwise that is an error.
export function toMicros(ts, unit) {
  const mul = { ms: 1000000n, us: 1000n, ns: 1n }
  const ns = ts.value * mul[ts.unit]
  if (unit === 'ns') return ns
  if (ns % 1000n !== 0n) throw new Error('timestamp has sub-microsecond digits')
  return ns / 1000n
}

// ---------------------------------------------------------------------------------------
// Intermediate value -> canonical value
// ---------------------------------------------------------------------------------------

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const INT32_MIN = -(2n ** 31n)
const INT32_MAX = 2n ** 31n - 1n
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function bad(path, type, v) {
  let shown
  try {
    shown = typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `bytes[${v.length}]`
      : v && v.constructor && v.constructor.name !== 'Object' && typeof v === 'object'
        ? `${v.constructor.name} ${String(v)}` : JSON.stringify(v)
  } catch {
    shown = String(v)
  }
  return new Error(`${path || '<row>'}: ${type} expected, reader gave ${shown}`)
}

function isInt(v) {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))
}

// t: parsed type; v: intermediate value; path for messages. opts.mapKeyText: when the
// reader hands maps as objects, the key arrives as a string and is converted back here.
export function canonValue(t, v, path) {
  if (v === null || v === undefined) return null
  switch (t.type) {
    case 'boolean':
      if (typeof v !== 'boolean') throw bad(path, 'boolean', v)
      return v
    case 'int':
    case 'long': {
      if (!isInt(v)) throw bad(path, t.type, v)
      const b = BigInt(v)
      const [lo, hi] = t.type === 'int' ? [INT32_MIN, INT32_MAX] : [INT64_MIN, INT64_MAX]
      if (b < lo || b > hi) throw bad(path, t.type, v)
      return b
    }
    case 'float':
      if (typeof v !== 'number') throw bad(path, 'float', v)
      return new CanonFloat(Math.fround(v))
    case 'double':
      if (typeof v !== 'number') throw bad(path, 'double', v)
      return new CanonFloat(v)
    case 'decimal':
      if (v instanceof DecimalValue) {
        if (v.scale !== t.scale) throw new Error(`${path}: decimal scale ${v.scale} != ${t.scale}`)
        return fmtDecimal(v.unscaled, t.scale)
      }
      if (typeof v === 'bigint') return fmtDecimal(v, t.scale) // raw unscaled integer
      if (typeof v === 'number' && t.precision <= 15) return v.toFixed(t.scale)
      throw bad(path, 'decimal', v)
    case 'date':
      if (v instanceof DateValue) return fmtDate(v.days)
      throw bad(path, 'date', v)
    case 'time':
      if (v instanceof TimeValue) return fmtTime(v.micros)
      throw bad(path, 'time', v)
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      if (!(v instanceof TsValue)) throw bad(path, t.type, v)
      const wantTz = t.type.startsWith('timestamptz')
      if (v.tz !== null && v.tz !== undefined && v.tz !== wantTz) {
        throw new Error(`${path}: ${t.type} expected, file has a timestamp ` +
          `${v.tz ? 'adjusted to UTC' : 'without zone'}`)
      }
      const ns = t.type.endsWith('_ns')
      return fmtTimestamp(toMicros(v, ns ? 'ns' : 'us'), wantTz, ns ? 9 : 6)
    }
    case 'string':
      if (typeof v !== 'string') throw bad(path, 'string', v)
      return v
    case 'uuid':
      if (typeof v === 'string' && UUID_RE.test(v)) return v.toLowerCase()
      if (v instanceof Uint8Array && v.length === 16) return fmtUuidBytes(v)
      throw bad(path, 'uuid', v)
    case 'fixed':
      if (v instanceof Uint8Array && v.length === t.length) return toHex(v)
      throw bad(path, `fixed[${t.length}]`, v)
    case 'binary':
      if (v instanceof Uint8Array) return toHex(v)
      throw bad(path, 'binary', v)
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) throw bad(path, 'struct', v)
      return canonStruct(t, v, path)
    }
    case 'list': {
      if (!Array.isArray(v)) throw bad(path, 'list', v)
      return v.map((x, i) => canonChild(t.element, x, `${path}[${i}]`))
    }
    case 'map': {
      let pairs
      if (Array.isArray(v)) {
        pairs = v.map(([k, x], i) => [canonChild(t.key, k, `${path}{key ${i}}`),
          canonChild(t.value, x, `${path}{value ${i}}`)])
      } else if (typeof v === 'object') {
        pairs = Object.keys(v).map((k) => [canonChild(t.key, mapKeyFromText(t.key.type, k, path), `${path}.key`),
          canonChild(t.value, v[k], `${path}[${k}]`)])
      } else {
        throw bad(path, 'map', v)
      }
      return sortPairs(pairs)
    }
    default:
      throw new Error(`${path}: unsupported type ${t.type}`)
  }
}

export function sortPairs(pairs) {
  const keyed = pairs.map((p) => [serialize(p[0]), p])
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return keyed.map((x) => x[1])
}

// A map that reached us as a JS object: the key is its String() form.
function mapKeyFromText(t, k, path) {
  switch (t.type) {
    case 'string':
    case 'uuid':
      return k
    case 'int':
    case 'long':
      if (!/^-?\d+$/.test(k)) throw new Error(`${path}: map key '${k}' is not an integer`)
      return BigInt(k)
    case 'boolean':
      return k === 'true'
    case 'float':
    case 'double':
      return Number(k)
    case 'binary':
    case 'fixed':
      return k === '' ? new Uint8Array(0) : Uint8Array.from(k.split(',').map(Number))
    case 'date': {
      const m = /^(-?\d+)d$/.exec(k)
      if (m) return new DateValue(+m[1])
      break
    }
    case 'time': {
      const m = /^(\d+)us$/.exec(k)
      if (m) return new TimeValue(BigInt(m[1]))
      break
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const m = /^(-?\d+)(ms|us|ns)$/.exec(k)
      if (m) return new TsValue(BigInt(m[1]), m[2], null)
      break
    }
    default:
      break
  }
  throw new Error(`${path}: map key '${k}' of type ${t.type} cannot be recovered from this reader`)
}

function canonChild(f, v, path) {
  const c = canonValue(f.type, v, path)
  if (c === null && f.required) throw new Error(`${path}: required value is null`)
  return c
}

export function canonStruct(t, obj, path = '') {
  const out = {}
  for (const f of t.fields) {
    const p = path ? `${path}.${f.name}` : f.name
    out[f.name] = canonChild(f, obj[f.name], p)
  }
  return out
}

// A double or float in canonical form (kept apart from bigints and strings so the
// serializer knows to print it as a number).
export class CanonFloat {
  constructor(n) {
    this.n = n
  }
}

// ---------------------------------------------------------------------------------------
// Serializer
// ---------------------------------------------------------------------------------------

export function serialize(v) {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'string') return JSON.stringify(v)
  if (v instanceof CanonFloat) {
    const n = v.n
    if (Number.isNaN(n)) return '"NaN"'
    if (n === Infinity) return '"Infinity"'
    if (n === -Infinity) return '"-Infinity"'
    if (Object.is(n, -0)) return '-0'
    return String(n)
  }
  if (typeof v === 'number') throw new Error('internal: bare number in canonical value')
  if (Array.isArray(v)) return '[' + v.map(serialize).join(',') + ']'
  let s = '{'
  let first = true
  for (const k of Object.keys(v)) {
    if (!first) s += ','
    first = false
    s += JSON.stringify(k) + ':' + serialize(v[k])
  }
  return s + '}'
}

// Canonical line of one row (obj: top-level field name -> intermediate value).
export function canonRow(schema, obj) {
  return serialize(canonStruct(schema, obj))
}

// ---------------------------------------------------------------------------------------
// Output: buffered writes to stdout (synchronous for files and pipes on Linux).
// ---------------------------------------------------------------------------------------
export class LineWriter {
  constructor() {
    this.parts = []
    this.size = 0
  }
  line(s) {
    this.parts.push(s, '\n')
    this.size += s.length + 1
    if (this.size >= 1 << 20) this.flush()
  }
  flush() {
    if (this.parts.length) process.stdout.write(this.parts.join(''))
    this.parts = []
    this.size = 0
  }
}

// Minimal argv parser: --name value, --flag, positional arguments.
export function parseArgs(argv, spec) {
  const opts = {}
  const pos = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a.startsWith('--') && a.length > 2) {
      const name = a.slice(2)
      if (!(name in spec)) throw new UsageError(`unknown option ${a}`)
      if (spec[name] === 'flag') {
        opts[name] = true
      } else {
        if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`)
        const val = argv[++i]
        if (spec[name] === 'list') (opts[name] ||= []).push(val)
        else opts[name] = val
      }
    } else {
      pos.push(a)
    }
  }
  return { opts, pos }
}

export class UsageError extends Error {}

// Run main(), mapping errors to exit codes: usage 2, anything else 1. A reader that
// closes stdout early (`| grep -q`, `| head`) ends the script quietly with 0, as it would
// a C tool that ignores SIGPIPE, instead of an unhandled EPIPE that fails the pipeline.
export async function runMain(main, usage) {
  process.stdout.on('error', (e) => {
    if (e && e.code === 'EPIPE') process.exit(0)
    throw e
  })
  try {
    const rc = await main()
    process.exitCode = rc || 0
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n${usage}`)
      process.exitCode = 2
    } else {
      const detail = process.env.FLOE_JS_DEBUG && e && e.stack ? e.stack : e && e.message ? e.message : e
      process.stderr.write(`error: ${detail}\n`)
      process.exitCode = 1
    }
  }
}
