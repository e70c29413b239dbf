#!/usr/bin/env node
// canon_ndjson.mjs --schema SCHEMA.json [--skip-lines FILE] FILE...
//
// Turns NDJSON input records into the canonical NDJSON form (see lib/canon.mjs), applying
// the coercions floe applies when it shreds JSON into columns. It is fed valid records
// only: a record that does not fit the schema is an error (exit 1, naming file:line and
// field), except the lines listed in --skip-lines. Blank lines are skipped and counted.
//
// --skip-lines FILE: one entry per line, either a line number (1-based, applies to every
// input) or "SUFFIX:LINE" (applies to inputs whose path ends with SUFFIX), which is what
// `floe gen --malformed-lines` writes.
//
// Coercion rules: the ones floe's shredder documents in include/floe/json.h, restated
// here (keep the two in step). Anything not listed is an error.
//   boolean      true / false
//   int, long    JSON numbers whose value is an integer (42, 1e3, 1.0, 1.50e2), in range
//   float,double JSON numbers (overflow to infinity is an error); the strings "NaN",
//                "Infinity", "-Infinity"
//   decimal(P,S) JSON number or numeric string, exact (from the source text); extra
//                fraction digits only if they are zeros; at most P digits after scaling
//   date         "YYYY-MM-DD", or a JSON integer (days since 1970-01-01)
//   time         "HH:MM:SS[.f{1,9}]" (digits past the 6th truncated), or a JSON integer
//                (microseconds since midnight)
//   timestamp    "YYYY-MM-DD(T|t| )HH:MM[:SS[.f{1,9}]]" with no zone designator ('Z' or an
//                offset is an error)
//   timestamptz  the same with 'Z', +hh:mm, +hhmm or +hh (converted to UTC); no zone = UTC
//                all four timestamp types: fraction digits past the precision truncated
//                (toward negative infinity); second 60 is an error; a JSON integer is the
//                stored value (micros, or nanos for *_ns)
//   string       JSON string (lone surrogates are an error)
//   uuid         "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", any case
//   binary       base64 (RFC 4648 standard alphabet, padding optional); fixed(L) exactly
//                L bytes
//   struct       JSON object; missing keys are null; unknown keys are ignored
//   list         JSON array
//   map          JSON object; keys converted from their text by the string rules above
//                (int/long keys as decimal integers)
//   null / missing -> null; an error for a required field, a required list element or a
//                required map value
//   A key repeated within one object is an error (floe rejects such records).

import { readFileSync } from 'node:fs'
import {
  CanonFloat, LineWriter, UsageError, daysFromCivil, fmtDate, fmtDecimal, fmtTime,
  fmtTimestamp, parseArgs, parseSchema, runMain, serialize, sortPairs, toHex,
} from './lib/canon.mjs'
import { JsonNumber, parseExact } from './lib/json_exact.mjs'

const USAGE = 'usage: canon_ndjson.mjs --schema SCHEMA.json [--skip-lines FILE] FILE...\n'

class CoerceError extends Error {}

function fail(path, msg) {
  throw new CoerceError(`${path}: ${msg}`)
}

const TS_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/

function parseTimestamp(s, path, tz, digits) {
  const m = TS_RE.exec(s)
  if (!m) fail(path, `bad timestamp '${s}'`)
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map((x) => (x === undefined ? 0 : +x))
  checkDate(y, mo, d, path, s)
  if (h > 23 || mi > 59 || se > 59) fail(path, `bad time of day in '${s}'`)
  const frac = (m[7] || '').slice(0, digits).padEnd(digits, '0')
  let offsetSec = 0
  const off = m[8]
  if (off && !tz) fail(path, `zone designator on a timestamp without zone: '${s}'`)
  if (off && off !== 'Z') {
    const sign = off[0] === '-' ? -1 : 1
    const oh = +off.slice(1, 3)
    const om = off.length > 3 ? +off.slice(-2) : 0
    if (oh > 23 || om > 59) fail(path, `bad offset in '${s}'`)
    offsetSec = sign * (oh * 3600 + om * 60)
  }
  const days = BigInt(daysFromCivil(y, mo, d))
  const sec = days * 86400n + BigInt(h * 3600 + mi * 60 + se - offsetSec)
  return fmtTimestamp(sec * 10n ** BigInt(digits) + BigInt(frac), tz, digits)
}

// Exact integer value of a JSON number's text, or null if it has a fractional part.
function exactInteger(text) {
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  let digits = m[2] + (m[3] || '')
  const exp = (m[4] ? parseInt(m[4], 10) : 0) - (m[3] ? m[3].length : 0)
  let v
  if (exp >= 0) {
    if (exp > 400) return /[1-9]/.test(digits) ? 10n ** 400n : 0n // far out of any range
    v = BigInt(digits) * 10n ** BigInt(exp)
  } else {
    const keep = digits.length + exp
    if (/[1-9]/.test(digits.slice(Math.max(0, keep)))) return null
    v = keep > 0 ? BigInt(digits.slice(0, keep)) : 0n
  }
  return m[1] ? -v : v
}

function checkDate(y, mo, d, path, s) {
  if (mo < 1 || mo > 12 || d < 1 || d > 31) fail(path, `bad date '${s}'`)
  if (fmtDate(daysFromCivil(y, mo, d)) !== `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`) {
    fail(path, `no such day '${s}'`)
  }
}

function parseDecimal(text, t, path) {
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m) fail(path, `bad decimal '${text}'`)
  let digits = m[2] + (m[3] || '')
  let exp = (m[4] ? parseInt(m[4], 10) : 0) - (m[3] ? m[3].length : 0)
  // value = digits * 10^exp; bring it to scale t.scale exactly
  let shift = exp + t.scale
  if (shift < 0) {
    const dropped = digits.slice(digits.length + shift)
    if (/[1-9]/.test(dropped) || digits.length + shift < 0 && /[1-9]/.test(digits)) {
      fail(path, `'${text}' has more than ${t.scale} fraction digits`)
    }
    digits = digits.slice(0, Math.max(0, digits.length + shift)) || '0'
    shift = 0
  }
  let unscaled = BigInt(digits) * 10n ** BigInt(shift)
  const abs = unscaled < 0n ? -unscaled : unscaled
  if (abs.toString().length > t.precision) fail(path, `'${text}' exceeds precision ${t.precision}`)
  if (m[1]) unscaled = -unscaled
  return fmtDecimal(unscaled, t.scale)
}

function decodeBase64(s, path) {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/.test(s)) {
    fail(path, 'bad base64')
  }
  return new Uint8Array(Buffer.from(s, 'base64'))
}

function coerce(t, v, path) {
  if (v === null || v === undefined) return null
  const num = v instanceof JsonNumber
  switch (t.type) {
    case 'boolean':
      if (typeof v !== 'boolean') fail(path, 'boolean expected')
      return v
    case 'int':
    case 'long': {
      if (!num) fail(path, `${t.type} expected`)
      const b = exactInteger(v.text)
      if (b === null) fail(path, `${v.text} is not an integer`)
      const bits = t.type === 'int' ? 31n : 63n
      if (b < -(2n ** bits) || b >= 2n ** bits) fail(path, `${v.text} out of ${t.type} range`)
      return b
    }
    case 'float':
    case 'double': {
      let n
      if (num) {
        n = Number(v.text)
        if (!Number.isFinite(t.type === 'float' ? Math.fround(n) : n)) fail(path, `${v.text} overflows ${t.type}`)
      } else if (v === 'NaN') n = NaN
      else if (v === 'Infinity') n = Infinity
      else if (v === '-Infinity') n = -Infinity
      else fail(path, `${t.type} expected`)
      return new CanonFloat(t.type === 'float' ? Math.fround(n) : n)
    }
    case 'decimal':
      if (num) return parseDecimal(v.text, t, path)
      if (typeof v === 'string') return parseDecimal(v, t, path)
      return fail(path, 'decimal expected')
    case 'date': {
      if (num) {
        const days = exactInteger(v.text)
        if (days === null || days < -719528n || days > 2932896n) fail(path, `bad date ${v.text}`)
        return fmtDate(Number(days))
      }
      const m = typeof v === 'string' && /^(\d{4})-(\d{2})-(\d{2})$/.exec(v)
      if (!m) fail(path, 'date "YYYY-MM-DD" expected')
      checkDate(+m[1], +m[2], +m[3], path, v)
      return fmtDate(daysFromCivil(+m[1], +m[2], +m[3]))
    }
    case 'time': {
      if (num) {
        const us = exactInteger(v.text)
        if (us === null || us < 0n || us >= 86400000000n) fail(path, `bad time ${v.text}`)
        return fmtTime(us)
      }
      const m = typeof v === 'string' && /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/.exec(v)
      if (!m) fail(path, 'time "HH:MM:SS[.f]" expected')
      const [h, mi, s] = [+m[1], +m[2], +m[3]]
      if (h > 23 || mi > 59 || s > 59) fail(path, `bad time '${v}'`)
      const us = BigInt((h * 3600 + mi * 60 + s)) * 1000000n + BigInt((m[4] || '').slice(0, 6).padEnd(6, '0'))
      return fmtTime(us)
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (num) {
        const stored = exactInteger(v.text)
        if (stored === null || stored < -(2n ** 63n) || stored >= 2n ** 63n) fail(path, `bad ${t.type} ${v.text}`)
        return fmtTimestamp(stored, t.type.startsWith('timestamptz'), t.type.endsWith('_ns') ? 9 : 6)
      }
      if (typeof v !== 'string') fail(path, `${t.type} expected (an ISO 8601 string)`)
      return parseTimestamp(v, path, t.type.startsWith('timestamptz'), t.type.endsWith('_ns') ? 9 : 6)
    case 'string':
      if (typeof v !== 'string') fail(path, 'string expected')
      if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(v)) fail(path, 'lone surrogate')
      return v
    case 'uuid':
      if (typeof v !== 'string' || !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(v)) {
        fail(path, 'uuid expected')
      }
      return v.toLowerCase()
    case 'binary':
    case 'fixed': {
      if (typeof v !== 'string') fail(path, 'base64 string expected')
      const b = decodeBase64(v, path)
      if (t.type === 'fixed' && b.length !== t.length) fail(path, `fixed[${t.length}] got ${b.length} bytes`)
      return toHex(b)
    }
    case 'struct':
      if (typeof v !== 'object' || Array.isArray(v) || num) fail(path, 'object expected')
      return coerceStruct(t, v, path)
    case 'list':
      if (!Array.isArray(v)) fail(path, 'array expected')
      return v.map((x, i) => coerceField(t.element, x, `${path}[${i}]`))
    case 'map': {
      if (typeof v !== 'object' || Array.isArray(v) || num) fail(path, 'object expected')
      const pairs = Object.keys(v).map((k) => {
        let key
        const kt = t.key.type.type
        if (kt === 'int' || kt === 'long') {
          if (!/^-?\d+$/.test(k)) fail(path, `map key '${k}' is not an integer`)
          key = coerce(t.key.type, new JsonNumber(k), `${path}.key`)
        } else if (kt === 'decimal') {
          key = parseDecimal(k, t.key.type, `${path}.key`)
        } else {
          key = coerce(t.key.type, k, `${path}.key`)
        }
        return [key, coerceField(t.value, v[k], `${path}[${k}]`)]
      })
      return sortPairs(pairs)
    }
    default:
      return fail(path, `unsupported type ${t.type}`)
  }
}

function coerceField(f, v, path) {
  const c = coerce(f.type, v, path)
  if (c === null && f.required) fail(path, 'required value is missing or null')
  return c
}

function coerceStruct(t, obj, path) {
  const out = {}
  for (const f of t.fields) out[f.name] = coerceField(f, obj[f.name], path ? `${path}.${f.name}` : f.name)
  return out
}

function loadSkips(file) {
  const all = new Set()
  const bySuffix = []
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const s = raw.trim()
    if (!s) continue
    const m = /^(?:(.*):)?(\d+)$/.exec(s)
    if (!m) throw new UsageError(`--skip-lines: bad entry '${s}'`)
    if (m[1] === undefined) all.add(+m[2])
    else bySuffix.push([m[1], +m[2]])
  }
  return (path) => {
    const set = new Set(all)
    for (const [suffix, line] of bySuffix) if (path.endsWith(suffix)) set.add(line)
    return set
  }
}

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), { schema: 'value', 'skip-lines': 'value', help: 'flag' })
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  if (!opts.schema || pos.length === 0) throw new UsageError('need --schema and at least one FILE')
  const schema = parseSchema(JSON.parse(readFileSync(opts.schema, 'utf8')))
  const skipsFor = opts['skip-lines'] ? loadSkips(opts['skip-lines']) : () => new Set()
  const out = new LineWriter()
  for (const file of pos) {
    const skips = skipsFor(file)
    const lines = readFileSync(file, 'utf8').split('\n')
    if (lines.length && lines[lines.length - 1] === '') lines.pop()
    for (let i = 0; i < lines.length; i++) {
      const lineNo = i + 1
      if (skips.has(lineNo) || lines[i].trim() === '') continue
      try {
        const rec = parseExact(lines[i])
        if (!rec || typeof rec !== 'object' || Array.isArray(rec) || rec instanceof JsonNumber) {
          throw new CoerceError('record is not a JSON object')
        }
        out.line(serialize(coerceStruct(schema, rec, '')))
      } catch (e) {
        if (e instanceof CoerceError || e instanceof SyntaxError) {
          out.flush()
          throw new Error(`${file}:${lineNo}: ${e.message}`)
        }
        throw e
      }
    }
  }
  out.flush()
  return 0
}

runMain(main, USAGE)
