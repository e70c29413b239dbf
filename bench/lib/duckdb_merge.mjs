// The DuckDB peer of `floe rewrite`: merge Parquet files into one with the same codec.
//   node bench/lib/duckdb_merge.mjs LIST_FILE OUT.parquet THREADS CODEC
//   node bench/lib/duckdb_merge.mjs --count LIST_FILE      (filtered COUNT(*) timing)
// Prints one JSON line with the timing.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');
const args = process.argv.slice(2);
const count = args[0] === '--count';
const [listFile, out, threads, codec] = count ? args.slice(1) : args;
const files = readFileSync(listFile, 'utf8').trim().split('\n');
const list = '[' + files.map((f) => `'${f}'`).join(', ') + ']';
const db = await DuckDBInstance.create(':memory:', { threads: String(count ? 2 : threads) });
const con = await db.connect();
const t0 = process.hrtime.bigint();
if (count) {
  // a selective query: one event type, a user range
  const r = await con.runAndReadAll(`SELECT count(*) FROM read_parquet(${list}) ` +
    `WHERE event_type = 'purchase' AND user_id BETWEEN 1000 AND 2000`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ seconds: secs, count: Number(r.getRows()[0][0]) }));
} else {
  await con.run(`COPY (SELECT * FROM read_parquet(${list})) TO '${out}' (FORMAT parquet, COMPRESSION ${codec})`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ seconds: secs }));
}
