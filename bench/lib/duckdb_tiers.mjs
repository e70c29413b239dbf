// The DuckDB side of bench/tiers: a filtered query over the files floe planned.
//   node bench/lib/duckdb_tiers.mjs PLAN.json WHERE REPS
// PLAN.json is `floe scan --plan --json` output; its files' local paths go to
// read_parquet. Prints one JSON line: the median seconds of REPS runs (after one warm-up
// run), the files read and the query's result.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');

const [planPath, where, repsArg] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, 'utf8'));
const files = plan.files.map((f) => f.local_path ?? f.path);
if (files.length === 0) throw new Error('the plan has no files');
const list = '[' + files.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ') + ']';
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await db.connect();
const sql = `SELECT count(*) AS n, sum(amount) AS amount FROM read_parquet(${list}) WHERE ${where}`;
const run = async () => {
  const t0 = process.hrtime.bigint();
  const reader = await con.runAndReadAll(sql);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return { secs, row: reader.getRowObjectsJson()[0] };
};
await run(); // warm-up: the page cache and DuckDB's metadata cache, as for a busy table
const times = [];
let row;
for (let i = 0; i < Number(repsArg || 3); i++) {
  const r = await run();
  times.push(r.secs);
  row = r.row;
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ seconds: times[Math.floor(times.length / 2)], files: files.length, result: row }));
