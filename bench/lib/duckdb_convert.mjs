// The DuckDB peer of `floe convert`: NDJSON -> Parquet with the same explicit schema and
// codec, on a given number of threads. Prints one JSON line with the timing.
//   node bench/lib/duckdb_convert.mjs SCHEMA.json OUT.parquet THREADS CODEC IN.ndjson...
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readJsonColumns } from './duckdb_types.mjs';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');

const [schemaPath, out, threads, codec, ...inputs] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const cols = readJsonColumns(schema.schema ?? schema);
const files = '[' + inputs.map((f) => `'${f}'`).join(', ') + ']';
const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await db.connect();
const t0 = process.hrtime.bigint();
await con.run(`COPY (SELECT * FROM read_json(${files}, format = 'newline_delimited', ` +
  `columns = ${cols})) TO '${out}' (FORMAT parquet, COMPRESSION ${codec})`);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ seconds: secs }));
