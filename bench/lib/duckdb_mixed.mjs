// DuckDB's merge-on-read of a table with position and equality deletes (bench/rewrite_mixed):
//   node bench/lib/duckdb_mixed.mjs apply PLAN.json EQ.log OUT.parquet
//     reads the plan's data files, drops the rows its position delete files name
//     (file_path = the data file's recorded path, pos = file_row_number; every position
//     delete of this table was committed after the data file it names, so it applies) and
//     the rows an equality delete file with a higher sequence number holds (spec "Scan
//     Planning"; unpartitioned table), and writes the live rows to OUT.parquet (ZSTD);
//     prints {"seconds", "rows"}.
//   node bench/lib/duckdb_mixed.mjs check PLAN.json EQ.log REF.parquet
//     the live rows of the plan (the same merge-on-read) against REF.parquet, as
//     multisets: prints {"rows", "missing", "extra", "deleted"} (missing and extra 0 when
//     equal row for row; deleted: rows a delete file still removes, 0 after a rewrite).
//     A rewritten file has the sequence number the rewrite started from, which the last
//     position delete file shares: the plan may still pair it with the new file when
//     that file's path is inside its path bounds, and it deletes none of its rows.
// PLAN.json is `floe scan --plan --json`, EQ.log mixed_gen's "<file> <sequence number>" lines.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');
const [mode, planFile, arg2, arg3] = process.argv.slice(2);
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await db.connect();
const cols = 'id, v, f, d, x, s';
const list = (paths) => '[' + paths.map(q).join(',') + ']';
const one = async (sql) => (await (await con.run(sql)).getRows())[0][0];

// The SQL of the plan's live rows (tables ds and es created here).
async function live(eqs) {
  const pos = [...new Set(plan.files.flatMap((f) => f.deletes)
    .filter((d) => d.content === 'position').map((d) => d.local_path))];
  await con.run('CREATE TABLE ds(path VARCHAR, rec VARCHAR, seq BIGINT)');
  await con.run('INSERT INTO ds VALUES ' + plan.files.map((f) =>
    `(${q(f.local_path)}, ${q(f.path)}, ${f.sequence_number})`).join(','));
  await con.run('CREATE TABLE es(path VARCHAR, seq BIGINT)');
  if (eqs.length)
    await con.run('INSERT INTO es VALUES ' + eqs.map(([p, s]) => `(${q(p)}, ${Number(s)})`).join(','));
  const eqRows = eqs.length
    ? `SELECT r.id, max(es.seq) AS seq FROM read_parquet(${list(eqs.map(([p]) => p))}, filename=true) r
       JOIN es ON r.filename = es.path GROUP BY r.id`
    : 'SELECT NULL::BIGINT AS id, NULL::BIGINT AS seq WHERE false';
  const posRows = pos.length
    ? `SELECT file_path, pos FROM read_parquet(${list(pos)})`
    : 'SELECT NULL::VARCHAR AS file_path, NULL::BIGINT AS pos WHERE false';
  return `
    WITH d AS (SELECT r.*, ds.rec, ds.seq FROM read_parquet(${list(plan.files.map((f) => f.local_path))},
                 filename=true, file_row_number=true) r JOIN ds ON r.filename = ds.path),
         e AS (${eqRows}),
         p AS (${posRows})
    SELECT ${cols} FROM d
    WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.file_path = d.rec AND p.pos = d.file_row_number)
      AND NOT EXISTS (SELECT 1 FROM e WHERE e.id = d.id AND e.seq > d.seq)`;
}
const eqs = readFileSync(arg2, 'utf8').trim().split('\n').filter((l) => l).map((l) => l.split(' '));

if (mode === 'apply') {
  const t0 = process.hrtime.bigint();
  await con.run(`COPY (${await live(eqs)}) TO ${q(arg3)} (FORMAT parquet, COMPRESSION zstd)`);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const rows = Number(await one(`SELECT count(*) FROM read_parquet(${q(arg3)})`));
  console.log(JSON.stringify({ seconds, rows }));
} else if (mode === 'check') {
  const got = `SELECT * FROM (${await live(eqs)})`;
  const all = `SELECT ${cols} FROM read_parquet(${list(plan.files.map((f) => f.local_path))})`;
  const ref = `SELECT ${cols} FROM read_parquet(${q(arg3)})`;
  const rows = Number(await one(`SELECT count(*) FROM (${got})`));
  const deleted = Number(await one(`SELECT count(*) FROM (${all})`)) - rows;
  const missing = Number(await one(`SELECT count(*) FROM (${ref} EXCEPT ALL ${got})`));
  const extra = Number(await one(`SELECT count(*) FROM (${got} EXCEPT ALL ${ref})`));
  console.log(JSON.stringify({ rows, missing, extra, deleted }));
} else {
  throw new Error('usage: duckdb_mixed.mjs apply PLAN EQ.log OUT | check PLAN REF');
}
