// Writes NDJSON events as many small Parquet files with Iceberg field ids, the way a
// streaming writer leaves a table: the input for bench/compact.
//   node bench/lib/duckdb_split.mjs SCHEMA.json IN.ndjson OUT_DIR ROWS_PER_FILE CODEC
// Files are OUT_DIR/part-NNNNN.parquet, one row group each, rows in input order.
import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readJsonColumns } from './duckdb_types.mjs';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');

const [schemaPath, input, outDir, rowsPerFile, codec] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const s = schema.schema ?? schema;
const q = (n) => '"' + n.replace(/"/g, '""') + '"';
function nestedIds(f) {
  const t = f.type;
  if (t.type === 'struct')
    return `{__duckdb_field_id: ${f.id}, ${t.fields.map((c) => `${q(c.name)}: ${nestedIds(c)}`).join(', ')}}`;
  if (t.type === 'list') return `{__duckdb_field_id: ${f.id}, element: ${nestedIds({ id: t['element-id'], type: t.element })}}`;
  if (t.type === 'map')
    return `{__duckdb_field_id: ${f.id}, key: ${nestedIds({ id: t['key-id'], type: t.key })}, value: ${nestedIds({ id: t['value-id'], type: t.value })}}`;
  return String(f.id);
}
const ids = `{${s.fields.map((f) => `${q(f.name)}: ${nestedIds(f)}`).join(', ')}}`;
mkdirSync(outDir, { recursive: true });
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await db.connect();
await con.run('SET preserve_insertion_order = true');
await con.run(`CREATE TABLE ev AS SELECT * FROM read_json('${input}', format = 'newline_delimited', ` +
  `columns = ${readJsonColumns(s)})`);
const total = Number((await con.runAndReadAll('SELECT count(*) FROM ev')).getRows()[0][0]);
const n = Number(rowsPerFile);
let k = 0;
for (let off = 0; off < total; off += n, k++) {
  const name = `${outDir}/part-${String(k).padStart(5, '0')}.parquet`;
  await con.run(`COPY (SELECT * FROM ev WHERE rowid >= ${off} AND rowid < ${off + n}) TO '${name}' ` +
    `(FORMAT parquet, COMPRESSION ${codec}, FIELD_IDS ${ids}, ROW_GROUP_SIZE ${n})`);
}
console.log(JSON.stringify({ files: k, rows: total }));
