#!/usr/bin/env node
// projection_check.mjs --floe BIN [--oracle ROWS.ndjson] [--pairs shared|none] FILE.parquet
//
// A projection prints what the full read prints for the columns it selects: for every
// node of the file's schema (each leaf and each group, as `floe cat --columns PATH`) and
// every pair of leaves under one top-level field, the projected rows must equal the full
// read with everything else pruned away: single selections in NDJSON, canonical form and
// CSV, pairs in canonical form.
//
// The full read the projections are compared with is floe's own NDJSON read (maps with
// string keys as objects, other maps as {"key","value"} entries) and, with --oracle, the
// canonical rows an independent reader printed for the whole file (tests/js/
// read_parquet.mjs; maps as sorted [key, value] pairs): canonical projections are checked
// against the oracle's rows pruned, so they do not depend on floe's own full read.
//
// Pruning: a struct keeps the fields with a selected leaf below them; a list keeps its
// elements, each pruned; a map keeps its keys (a map's values are printed by key, so
// selecting anything of a map reads its keys) and its values pruned, or null when
// nothing of the value is selected. The schema's shape (which group is a list, a map,
// a struct; which node is a list's element) follows the Parquet LogicalTypes rules,
// taken from `floe inspect --json`.
//
// Exit 0 when every projection matches, 1 with the first differences otherwise.

import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

const USAGE = 'usage: projection_check.mjs --floe BIN [--oracle ROWS.ndjson] [--pairs shared|none] FILE\n'

// ---- JSON with order and number text kept -----------------------------------------------
// Values: null, true, false, {num: text}, string, {arr: [...]}, {obj: [[key, value], ...]}.
function parse(text) {
  let i = 0
  const fail = (m) => { throw new SyntaxError(`${m} at ${i}: ${text.slice(0, 200)}`) }
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++ }
  const str = () => {
    const m = /"(?:[^"\\]|\\.)*"/y
    m.lastIndex = i
    const r = m.exec(text)
    if (!r) fail('bad string')
    i += r[0].length
    return JSON.parse(r[0])
  }
  const value = () => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      const obj = []
      ws()
      if (text[i] === '}') { i++; return { obj } }
      for (;;) {
        ws()
        const k = str()
        ws()
        if (text[i++] !== ':') fail('missing :')
        obj.push([k, value()])
        ws()
        if (text[i] === ',') { i++; continue }
        if (text[i++] === '}') return { obj }
        fail('bad object')
      }
    }
    if (c === '[') {
      i++
      const arr = []
      ws()
      if (text[i] === ']') { i++; return { arr } }
      for (;;) {
        arr.push(value())
        ws()
        if (text[i] === ',') { i++; continue }
        if (text[i++] === ']') return { arr }
        fail('bad array')
      }
    }
    if (c === '"') return str()
    for (const [w, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(w, i)) { i += w.length; return v }
    }
    const m = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y
    m.lastIndex = i
    const r = m.exec(text)
    if (!r) fail('bad value')
    i += r[0].length
    return { num: r[0] }
  }
  const v = value()
  ws()
  if (i !== text.length) fail('trailing text')
  return v
}

function show(v) {
  if (v === null || typeof v === 'boolean') return String(v)
  if (typeof v === 'string') return JSON.stringify(v)
  if ('num' in v) return v.num
  if ('arr' in v) return `[${v.arr.map(show).join(',')}]`
  return `{${v.obj.map(([k, x]) => `${JSON.stringify(k)}:${show(x)}`).join(',')}}`
}

// ---- the schema's shape ------------------------------------------------------------------
// Mirrors the reading rules: a bare repeated field is a list of required elements; a
// LIST/MAP group whose single child is repeated is a list (LIST, or a repeated leaf or
// empty group) or a map (a repeated group of fields: key first); anything else a struct.
function shape(nd, asElement = false) {
  const leaf = nd.column !== undefined
  if (nd.repetition === 'repeated' && !asElement) return { kind: 'list', node: nd, element: shape(nd, true) }
  if (leaf) return { kind: 'leaf', node: nd }
  const ann = / (LIST|MAP|MAP_KEY_VALUE)\b/.exec(nd.type || '')
  const kids = nd.children || []
  if (ann && kids.length === 1 && kids[0].repetition === 'repeated') {
    const rep = kids[0]
    const repKids = rep.children || []
    if (ann[1] === 'LIST' || rep.column !== undefined || repKids.length === 0) {
      let el = repKids.length === 1 ? repKids[0] : rep
      if (rep.column !== undefined || rep.name === 'array' || rep.name === `${nd.name}_tuple`) el = rep
      return { kind: 'list', node: nd, element: shape(el, el === rep) }
    }
    return { kind: 'map', node: nd, key: shape(repKids[0]), value: repKids[1] ? shape(repKids[1]) : null }
  }
  return { kind: 'struct', node: nd, fields: kids.map((k) => ({ name: k.name, shape: shape(k) })) }
}

function leavesOf(sh, out = new Set()) {
  switch (sh.kind) {
    case 'leaf': out.add(sh.node.column); break
    case 'list': leavesOf(sh.element, out); break
    case 'map': leavesOf(sh.key, out); if (sh.value) leavesOf(sh.value, out); break
    default: for (const f of sh.fields) leavesOf(f.shape, out)
  }
  return out
}
const anySelected = (sh, sel) => [...leavesOf(sh)].some((c) => sel.has(c))

// The full value v (of shape sh) with only the selected leaves kept.
function prune(v, sh, sel, form) {
  if (v === null) return null
  switch (sh.kind) {
    case 'leaf': return v
    case 'list': return { arr: v.arr.map((e) => prune(e, sh.element, sel, form)) }
    case 'map': {
      const keepValue = sh.value && anySelected(sh.value, sel)
      const pv = (x) => (keepValue ? prune(x, sh.value, sel, form) : null)
      if ('obj' in v) return { obj: v.obj.map(([k, x]) => [k, pv(x)]) }
      if (form === 'canonical') return { arr: v.arr.map((p) => ({ arr: [p.arr[0], pv(p.arr[1])] })) }
      return { arr: v.arr.map((e) => ({ obj: e.obj.map(([k, x]) => [k, k === 'value' ? pv(x) : x]) })) }
    }
    default: {
      const obj = []
      for (const f of sh.fields) {
        if (!anySelected(f.shape, sel)) continue
        const m = v.obj.find(([k]) => k === f.name)
        if (!m) throw new Error(`field ${f.name} missing from ${show(v).slice(0, 200)}`)
        obj.push([f.name, prune(m[1], f.shape, sel, form)])
      }
      return { obj }
    }
  }
}

// Columns a selection reads: the leaves under the selected nodes, plus the keys of every
// map with anything selected.
function closeOverKeys(sh, sel) {
  if (sh.kind === 'map' && anySelected(sh, sel)) for (const c of leavesOf(sh.key)) sel.add(c)
  if (sh.kind === 'list') closeOverKeys(sh.element, sel)
  if (sh.kind === 'map') { closeOverKeys(sh.key, sel); if (sh.value) closeOverKeys(sh.value, sel) }
  if (sh.kind === 'struct') for (const f of sh.fields) closeOverKeys(f.shape, sel)
  return sel
}

// ---- CSV -------------------------------------------------------------------------------
function csvRecords(text) {
  const rows = []
  let row = [], field = '', i = 0, quoted = false
  while (i < text.length) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue }
      if (c === '"') { quoted = false; i++; continue }
      field += c; i++; continue
    }
    if (c === '"') { quoted = true; i++; continue }
    if (c === ',') { row.push(field); field = ''; i++; continue }
    if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; continue }
    field += c; i++
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row) }
  return rows
}

// CSV text of one top-level value: empty for null, a string's text, JSON otherwise.
function csvCell(v, sh) {
  if (v === null) return ''
  if (sh.kind === 'leaf' && typeof v === 'string') {
    const j = JSON.stringify(v)
    if (!j.slice(1, -1).includes('\\')) return v
  }
  return show(v)
}

async function main() {
  const { opts, pos: rest } = parseArgs(process.argv.slice(2), { floe: 'string', oracle: 'string', pairs: 'string' })
  if (!opts.floe || rest.length !== 1) throw new UsageError('need --floe and one FILE')
  const file = rest[0]
  const floe = (...args) => execFileSync(opts.floe, args, { maxBuffer: 1 << 30, encoding: 'utf8' })
  const meta = JSON.parse(floe('inspect', '--json', file))
  const root = shape(meta.schema)
  const lines = (t) => t.split('\n').filter((l) => l !== '')

  // every node with its dotted path
  const nodes = []
  const walk = (nd, path) => {
    for (const c of nd.children || []) {
      const p = path ? `${path}.${c.name}` : c.name
      nodes.push({ path: p, node: c })
      walk(c, p)
    }
  }
  walk(meta.schema, '')
  if (nodes.some((n) => n.node.name.includes('.') || n.node.name.includes(','))) {
    console.log(`${file}: skipped (a name holds '.' or ',')`)
    return 0
  }
  const colsOf = (nd) => {
    const s = new Set()
    const rec = (x) => { if (x.column !== undefined) s.add(x.column); for (const c of x.children || []) rec(c) }
    rec(nd)
    return s
  }

  const full = { ndjson: lines(floe('cat', file)).map(parse) }
  full.canonical = opts.oracle
    ? lines(readFileSync(opts.oracle, 'utf8')).map(parse)
    : lines(floe('cat', '--canonical', file)).map(parse)
  const leaves = nodes.filter((n) => n.node.column !== undefined)
  const selections = nodes.map((n) => [n])
  // Pairs of leaves under one top-level field: the ones whose levels interleave in one
  // assembled value (every pair, across fields too, is run in-process by test_pq_reader).
  const top = (p) => p.path.split('.')[0]
  if ((opts.pairs || 'shared') === 'shared')
    for (let i = 0; i < leaves.length; i++)
      for (let j = i + 1; j < leaves.length; j++)
        if (top(leaves[i]) === top(leaves[j])) selections.push([leaves[i], leaves[j]])

  let checked = 0, bad = 0
  const report = (what, msg) => {
    bad++
    if (bad <= 10) console.error(`${file}: --columns ${what}: ${msg}`)
  }
  for (const picked of selections) {
    const sel = new Set()
    for (const p of picked) for (const c of colsOf(p.node)) sel.add(c)
    closeOverKeys(root, sel)
    const cols = picked.map((p) => p.path).join(',')
    // pairs in canonical form only (the shapes NDJSON adds are covered by the singles)
    for (const form of picked.length === 1 ? ['ndjson', 'canonical'] : ['canonical']) {
      const got = lines(floe('cat', file, '--columns', cols, ...(form === 'canonical' ? ['--canonical'] : [])))
      const want = full[form].map((row) => show(prune(row, root, sel, form)))
      if (got.length !== want.length) { report(cols, `${form}: ${got.length} rows, want ${want.length}`); continue }
      for (let r = 0; r < got.length; r++) {
        const g = show(parse(got[r]))
        if (g !== want[r]) { report(cols, `${form} row ${r + 1}: got ${g.slice(0, 300)}\n  want ${want[r].slice(0, 300)}`); break }
      }
      checked++
    }
    if (picked.length === 1) {
      const recs = csvRecords(floe('cat', file, '--columns', cols, '--format', 'csv'))
      const tops = root.fields.filter((f) => anySelected(f.shape, sel))
      const header = tops.map((f) => f.name)
      if (JSON.stringify(recs[0]) !== JSON.stringify(header)) report(cols, `csv header ${recs[0]}`)
      for (let r = 0; r < full.ndjson.length; r++) {
        const pr = prune(full.ndjson[r], root, sel, 'ndjson')
        const want = tops.map((f, k) => csvCell(pr.obj[k][1], f.shape))
        if (JSON.stringify(recs[r + 1]) !== JSON.stringify(want)) {
          report(cols, `csv row ${r + 1}: got ${JSON.stringify(recs[r + 1]).slice(0, 300)}\n  want ${JSON.stringify(want).slice(0, 300)}`)
          break
        }
      }
      if (recs.length !== full.ndjson.length + 1) report(cols, `csv: ${recs.length - 1} rows`)
      checked++
    }
  }
  if (bad) {
    console.error(`${file}: ${bad} of ${checked} projections differ`)
    return 1
  }
  console.log(`${file}: ${checked} projections (${selections.length} selections) match`)
  return 0
}

runMain(main, USAGE)
