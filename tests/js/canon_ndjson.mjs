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
// Coercion rules (JSON value -> Iceberg type). Anything not listed is an error; where
// floe's rule was not settled when this was written, the oracle refuses rather than guess:
//   boolean      true / false
//   int, long    JSON integer literal (no fraction, no exponent) within range
//   float,double any JSON number; the strings "NaN", "Infinity", "-Infinity"
//   decimal(P,S) JSON number or numeric string, exact (from the source text); at most S
//                fraction digits (more is an error, not rounded); at most P digits in all
//   date         "YYYY-MM-DD"
//   time         "HH:MM[:SS[.f{1,6}]]"
//   timestamptz  "YYYY-MM-DD[T| ]HH:MM[:SS[.f{1,9}]][Z|±HH:MM|±HHMM|±HH]" -> UTC; no
//                offset means UTC; a bare date "YYYY-MM-DD" is midnight UTC; digits past
//                microseconds must be zero
//   timestamp    the same forms without an offset ("Z" allowed: it names UTC); a
//                non-zero offset is an error (ambiguous for a zone-less timestamp)
//   *_ns         as above with up to 9 fraction digits kept
//   string       JSON string
//   uuid         "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", any case
//   binary       base64 string (RFC 4648, padded); fixed(L) the same, exactly L bytes
//   struct       JSON object; missing keys are null; unknown keys are ignored
//   list         JSON array
//   map          JSON object (keys: string; int/long from integer text; others error)
//   null / missing -> null; an error for a required field or a required list element

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

const TS_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/

function parseTimestamp(s, path, tz, digits) {
  const m = TS_RE.exec(s)
  if (!m) fail(path, `bad timestamp '${s}'`)
  const [y, mo, d, h = 0, mi = 0, se = 0] = m.slice(1, 7).map((x) => (x === undefined ? 0 : +x))
  checkDate(y, mo, d, path, s)
  if (h > 23 || mi > 59 || se > 59) fail(path, `bad time of day in '${s}'`)
  let frac = m[7] || ''
  if (frac.length > digits) {
    if (/[1-9]/.test(frac.slice(digits))) fail(path, `'${s}' has more precision than ${digits} digits`)
    frac = frac.slice(0, digits)
  }
  frac = frac.padEnd(digits, '0')
  let offsetSec = 0
  const off = m[8]
  if (off && off !== 'Z' && off !== 'z') {
    const sign = off[0] === '-' ? -1 : 1
    const oh = +off.slice(1, 3)
    const om = off.length > 3 ? +off.slice(-2) : 0
    if (oh > 23 || om > 59) fail(path, `bad offset in '${s}'`)
    offsetSec = sign * (oh * 3600 + om * 60)
    if (!tz && offsetSec !== 0) fail(path, `offset on a timestamp without zone: '${s}'`)
  }
  const days = BigInt(daysFromCivil(y, mo, d))
  const sec = days * 86400n + BigInt(h * 3600 + mi * 60 + se - offsetSec)
  return fmtTimestamp(sec * 10n ** BigInt(digits) + BigInt(frac || '0'), tz, digits)
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
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) {
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
      if (!num || !v.isInteger()) fail(path, `${t.type} expected (an integer literal)`)
      const b = BigInt(v.text)
      const bits = t.type === 'int' ? 31n : 63n
      if (b < -(2n ** bits) || b >= 2n ** bits) fail(path, `${v.text} out of ${t.type} range`)
      return b
    }
    case 'float':
    case 'double': {
      let n
      if (num) n = Number(v.text)
      else if (v === 'NaN') n = NaN
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
      const m = typeof v === 'string' && /^(\d{4})-(\d{2})-(\d{2})$/.exec(v)
      if (!m) fail(path, 'date "YYYY-MM-DD" expected')
      checkDate(+m[1], +m[2], +m[3], path, v)
      return fmtDate(daysFromCivil(+m[1], +m[2], +m[3]))
    }
    case 'time': {
      const m = typeof v === 'string' && /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/.exec(v)
      if (!m) fail(path, 'time "HH:MM:SS[.ffffff]" expected')
      const [h, mi, s] = [+m[1], +m[2], +(m[3] || 0)]
      if (h > 23 || mi > 59 || s > 59) fail(path, `bad time '${v}'`)
      const us = BigInt((h * 3600 + mi * 60 + s)) * 1000000n + BigInt((m[4] || '').padEnd(6, '0'))
      return fmtTime(us)
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof v !== 'string') fail(path, `${t.type} expected (an ISO 8601 string)`)
      return parseTimestamp(v, path, t.type.startsWith('timestamptz'), t.type.endsWith('_ns') ? 9 : 6)
    case 'string':
      if (typeof v !== 'string') fail(path, 'string expected')
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
        if (t.key.type.type === 'string') key = k
        else if ((t.key.type.type === 'int' || t.key.type.type === 'long') && /^-?\d+$/.test(k)) {
          key = coerce(t.key.type, new JsonNumber(k), `${path}.key`)
        } else fail(path, `map key '${k}' cannot become ${t.key.type.type}`)
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
