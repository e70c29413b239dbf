// DuckDB applies an upsert table's equality deletes itself (bench/rewrite_deletes):
//   node bench/lib/duckdb_upsert.mjs PLAN.json EQ.log OUT.csv
// PLAN.json is `floe scan --plan --json` (data files and their data sequence numbers),
// EQ.log the generator's "<equality delete file> <sequence number>" lines. A data file's
// row is live unless an equality delete file with a higher sequence number holds its id
// (spec "Scan Planning"; the table is unpartitioned). Writes the live rows as CSV
// "id,v,s" ordered by id, v; prints one JSON line with the timing.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');
const [planFile, logFile, out] = process.argv.slice(2);
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const eqs = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => l.split(' '));
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await db.connect();
const t0 = process.hrtime.bigint();
await con.run('CREATE TABLE ds(path VARCHAR, seq BIGINT)');
await con.run('CREATE TABLE es(path VARCHAR, seq BIGINT)');
await con.run('INSERT INTO ds VALUES ' +
  plan.files.map((f) => `(${q(f.local_path)}, ${f.sequence_number})`).join(','));
await con.run('INSERT INTO es VALUES ' + eqs.map(([p, s]) => `(${q(p)}, ${Number(s)})`).join(','));
const dlist = '[' + plan.files.map((f) => q(f.local_path)).join(',') + ']';
const elist = '[' + eqs.map(([p]) => q(p)).join(',') + ']';
await con.run(`COPY (
  WITH d AS (SELECT r.id, r.v, r.s, ds.seq FROM read_parquet(${dlist}, filename=true) r
             JOIN ds ON r.filename = ds.path),
       e AS (SELECT r.id, max(es.seq) AS seq FROM read_parquet(${elist}, filename=true) r
             JOIN es ON r.filename = es.path GROUP BY r.id)
  SELECT d.id, d.v, d.s FROM d LEFT JOIN e ON d.id = e.id
  WHERE e.seq IS NULL OR e.seq <= d.seq ORDER BY d.id, d.v
) TO ${q(out)} (FORMAT csv, HEADER false)`);
console.log(JSON.stringify({ seconds: Number(process.hrtime.bigint() - t0) / 1e9 }));
