// The DuckDB peer of bench/read: one query that decodes every column of the given Parquet
// file(s) (max of each column, so nothing is skipped), on a given number of threads.
// Prints one JSON line with the query's own seconds (DuckDB start-up excluded).
//   node bench/lib/duckdb_read.mjs PATH_OR_GLOB THREADS
//   node bench/lib/duckdb_read.mjs --write-many DIR FILES ROWS_PER_FILE
//   node bench/lib/duckdb_read.mjs --write-one FILE ROWS
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');

// ints, longs, doubles, low- and high-cardinality strings, timestamps, a decimal and a
// nullable column: the shape bench/read has always used
const select = (lo, hi) => `SELECT i::BIGINT AS id, (i % 1000)::INTEGER AS small,
    (hash(i) >> 1)::BIGINT AS h, (i * 0.37)::DOUBLE AS d,
    'kind_' || (i % 17)::VARCHAR AS kind, md5(i::VARCHAR) AS text,
    TIMESTAMP '2026-01-01' + to_microseconds(i * 1000) AS ts,
    (i % 100000 / 100.0)::DECIMAL(12,2) AS amount,
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END AS maybe
  FROM range(${lo}, ${hi}) t(i)`;

const args = process.argv.slice(2);
if (args[0] === '--write-one') {
  const [, file, rows] = args;
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const c = await db.connect();
  await c.run(`COPY (${select(0, Number(rows))}) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`);
} else if (args[0] === '--write-many') {
  const [, dir, files, rows] = args;
  mkdirSync(dir, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const c = await db.connect();
  const n = Number(files), r = Number(rows);
  for (let k = 0; k < n; k++) {
    const name = `${dir}/part-${String(k).padStart(5, '0')}.parquet`;
    await c.run(`COPY (${select(k * r, (k + 1) * r)}) TO '${name}' (FORMAT parquet, COMPRESSION zstd)`);
  }
} else {
  const [path, threads] = args;
  const db = await DuckDBInstance.create(':memory:', { threads: String(threads ?? 1) });
  const c = await db.connect();
  const t0 = process.hrtime.bigint();
  await c.runAndReadAll(`SELECT count(*), max(id), max(small), max(h), max(d), max(kind), max(text),
    max(ts), max(amount), max(maybe) FROM read_parquet('${path}')`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ seconds: secs }));
}
