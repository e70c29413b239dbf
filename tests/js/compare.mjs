#!/usr/bin/env node
// compare.mjs A.ndjson B.ndjson [--sort-key PATH] [--max-diffs N]
//
// Compares two canonical NDJSON files (lib/canon.mjs). Without --sort-key, row i of A
// must equal row i of B as text. With --sort-key (a dotted field path such as event_id),
// both files are compared as multisets: rows are ordered by the key's canonical text,
// then by the whole line. Prints the first differences (row numbers, and for two rows
// that differ, the first differing field) and exits 1 on any mismatch, 0 when equal,
// 2 on usage errors.

import { readFileSync } from 'node:fs'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

const USAGE = 'usage: compare.mjs A.ndjson B.ndjson [--sort-key PATH] [--max-diffs N]\n'

function readLines(file) {
  const lines = readFileSync(file, 'utf8').split('\n')
  if (lines.length && lines[lines.length - 1] === '') lines.pop()
  return lines.map((text, i) => ({ text, row: i + 1 }))
}

function keyOf(text, path) {
  let v = JSON.parse(text)
  for (const p of path) v = v == null ? undefined : v[p]
  return v === undefined ? '' : JSON.stringify(v)
}

// The first field where two canonical rows differ, for the message.
function firstFieldDiff(a, b) {
  let x, y
  try {
    x = JSON.parse(a)
    y = JSON.parse(b)
  } catch {
    return ''
  }
  const walk = (p, u, v) => {
    if (JSON.stringify(u) === JSON.stringify(v)) return null
    if (u && v && typeof u === 'object' && typeof v === 'object' && Array.isArray(u) === Array.isArray(v)) {
      const keys = Array.isArray(u) ? [...Array(Math.max(u.length, v.length)).keys()] : [...new Set([...Object.keys(u), ...Object.keys(v)])]
      for (const k of keys) {
        const r = walk(p ? `${p}.${k}` : String(k), u[k], v[k])
        if (r) return r
      }
    }
    return `${p || '<row>'}: ${JSON.stringify(u)} != ${JSON.stringify(v)}`
  }
  return walk('', x, y) || ''
}

function clip(s) {
  return s.length > 300 ? s.slice(0, 300) + '...' : s
}

async function main() {
  const { opts, pos } = parseArgs(process.argv.slice(2), { 'sort-key': 'value', 'max-diffs': 'value', help: 'flag' })
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  if (pos.length !== 2) throw new UsageError('need two files')
  const maxDiffs = opts['max-diffs'] ? Number(opts['max-diffs']) : 10
  let a = readLines(pos[0])
  let b = readLines(pos[1])
  if (opts['sort-key']) {
    const path = opts['sort-key'].split('.')
    const sort = (rows) => rows.map((r) => ({ ...r, key: keyOf(r.text, path) }))
      .sort((u, v) => (u.key < v.key ? -1 : u.key > v.key ? 1 : u.text < v.text ? -1 : u.text > v.text ? 1 : 0))
    a = sort(a)
    b = sort(b)
  }
  let diffs = 0
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a[i]
    const y = b[i]
    if (x && y && x.text === y.text) continue
    diffs++
    if (diffs <= maxDiffs) {
      if (!x) process.stdout.write(`only in B (row ${y.row}): ${clip(y.text)}\n`)
      else if (!y) process.stdout.write(`only in A (row ${x.row}): ${clip(x.text)}\n`)
      else {
        process.stdout.write(`A row ${x.row} != B row ${y.row}: ${firstFieldDiff(x.text, y.text)}\n`)
        process.stdout.write(`  A: ${clip(x.text)}\n  B: ${clip(y.text)}\n`)
      }
    }
  }
  if (diffs) {
    process.stdout.write(`${pos[0]} (${a.length} rows) and ${pos[1]} (${b.length} rows): ${diffs} differences\n`)
    return 1
  }
  return 0
}

runMain(main, USAGE)
