#!/usr/bin/env node
// lineage_oracle.mjs - format v3 row lineage of a table's current snapshot, derived from
// the spec ("Row Lineage", "First Row ID Inheritance", "First Row ID Assignment") by
// independent readers: avsc for the manifest list and manifests, DuckDB for the data
// files. Used by tests/integration/row_lineage.sh to check what floe scan prints and what
// floe wrote.
//
//   node lineage_oracle.mjs METADATA.json KEYCOL
//
// Prints one NDJSON line per live row, {KEYCOL, _row_id, _last_updated_sequence_number},
// ordered by KEYCOL then _row_id: a row's stored values where not null, else _row_id =
// the file's first_row_id + its position and the sequence number = the file's data
// sequence number; both null for a file without first_row_id. Fails (exit 1) when the
// metadata breaks a rule: a data manifest of the snapshot without first_row_id, a
// snapshot whose first-row-id + added-rows passes next-row-id, manifests assigned
// overlapping id ranges, or two live rows with the same _row_id. (Tables with delete
// files are not handled: positions would need them.)
import fs from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'
import { readRecords } from './lib/avro_read.mjs'
import { UsageError, parseArgs, runMain } from './lib/canon.mjs'

const local = (p) => p.replace(/^file:\/\//, '')
const num = (v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? v : BigInt(v))

function fail(msg) {
  throw new Error(msg)
}

async function main() {
  const { pos } = parseArgs(process.argv.slice(2), {})
  if (pos.length !== 2) throw new UsageError('need METADATA.json and KEYCOL')
  const [mdPath, key] = pos
  const md = JSON.parse(fs.readFileSync(mdPath, 'utf8'))
  if (md['format-version'] !== 3) fail(`format-version ${md['format-version']}, not 3`)
  const next = num(md['next-row-id'])
  if (next === null) fail('no next-row-id')
  for (const s of md.snapshots || []) {
    const f = num(s['first-row-id'])
    const a = num(s['added-rows'])
    if (f !== null && (a === null || f + a > next))
      fail(`snapshot ${s['snapshot-id']}: first-row-id ${f} + added-rows ${a} > next-row-id ${next}`)
  }
  const cur = (md.snapshots || []).find((s) => BigInt(s['snapshot-id']) === BigInt(md['current-snapshot-id']))
  if (!cur) return 0
  const lineaged = cur['first-row-id'] !== undefined && cur['first-row-id'] !== null
  const list = await readRecords(local(cur['manifest-list']))
  const ranges = []
  const files = []
  for (const m of list) {
    if (Number(m.content) !== 0) continue
    const mfr = num(m.first_row_id)
    if (lineaged && mfr === null) fail(`${m.manifest_path}: data manifest without first_row_id`)
    const entries = await readRecords(local(m.manifest_path))
    let nextId = mfr
    let span = 0n
    for (const e of entries) {
      const st = Number(e.status)
      const df = e.data_file
      let fr = num(df.first_row_id)
      if (st !== 2 && fr === null && nextId !== null) {
        fr = nextId
        nextId += num(df.record_count)
        span += num(df.record_count)
      }
      if (st === 2) continue
      const seq = num(e.sequence_number) ?? (st === 1 ? num(m.sequence_number) : null)
      files.push({ path: local(df.file_path), first: fr, seq })
    }
    if (mfr !== null && span > 0n) ranges.push([mfr, mfr + span, m.manifest_path])
  }
  ranges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
  for (let i = 1; i < ranges.length; i++)
    if (ranges[i][0] < ranges[i - 1][1])
      fail(`manifests ${ranges[i - 1][2]} and ${ranges[i][2]}: overlapping row id ranges`)

  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  const out = []
  for (const f of files) {
    const q = (s) => "'" + s.replace(/'/g, "''") + "'"
    const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${q(f.path)})`))
      .getRowObjects()
      .map((r) => r.column_name)
    const rid = cols.includes('_row_id') ? '_row_id' : 'NULL'
    const lus = cols.includes('_last_updated_sequence_number') ? '_last_updated_sequence_number' : 'NULL'
    const r = await conn.runAndReadAll(
      `SELECT ${key}::VARCHAR AS k, ${rid}::BIGINT AS rid, ${lus}::BIGINT AS lus, file_row_number AS pos ` +
        `FROM read_parquet(${q(f.path)}, file_row_number = true) ORDER BY pos`)
    for (const row of r.getRowObjects()) {
      let rowId = null
      let seq = null
      if (f.first !== null) {
        rowId = row.rid !== null ? BigInt(row.rid) : f.first + BigInt(row.pos)
        seq = row.lus !== null ? BigInt(row.lus) : f.seq
      }
      out.push({ k: row.k, rowId, seq })
    }
  }
  const seen = new Set()
  for (const o of out) {
    if (o.rowId === null) continue
    if (seen.has(o.rowId)) fail(`_row_id ${o.rowId} given to two live rows`)
    seen.add(o.rowId)
  }
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0)
  out.sort((a, b) => cmp(a.k, b.k) || cmp(a.rowId ?? -1n, b.rowId ?? -1n))
  for (const o of out)
    process.stdout.write(`{"${key}":"${o.k}","_row_id":${o.rowId ?? 'null'},` +
      `"_last_updated_sequence_number":${o.seq ?? 'null'}}\n`)
  return 0
}

runMain(main, 'usage: lineage_oracle.mjs METADATA.json KEYCOL\n')
