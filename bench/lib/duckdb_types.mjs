// Iceberg schema JSON -> DuckDB column types, so DuckDB peers read NDJSON with the same
// explicit schema floe uses (no sampling, no inference).
export function duckdbType(t) {
  if (typeof t === 'string') {
    const dec = /^decimal\((\d+),\s*(\d+)\)$/.exec(t);
    if (dec) return `DECIMAL(${dec[1]},${dec[2]})`;
    if (/^fixed\[\d+\]$/.test(t)) return 'BLOB';
    switch (t) {
      case 'boolean': return 'BOOLEAN';
      case 'int': return 'INTEGER';
      case 'long': return 'BIGINT';
      case 'float': return 'FLOAT';
      case 'double': return 'DOUBLE';
      case 'date': return 'DATE';
      case 'time': return 'TIME';
      case 'timestamp': return 'TIMESTAMP';
      case 'timestamptz': return 'TIMESTAMPTZ';
      case 'timestamp_ns': return 'TIMESTAMP_NS';
      case 'timestamptz_ns': return 'TIMESTAMPTZ';
      case 'string': return 'VARCHAR';
      case 'uuid': return 'UUID';
      case 'binary': return 'BLOB';
      default: throw new Error(`no DuckDB type for ${t}`);
    }
  }
  if (t.type === 'struct')
    return `STRUCT(${t.fields.map((f) => `"${f.name}" ${duckdbType(f.type)}`).join(', ')})`;
  if (t.type === 'list') return `${duckdbType(t.element)}[]`;
  if (t.type === 'map') return `MAP(${duckdbType(t.key)}, ${duckdbType(t.value)})`;
  throw new Error(`unknown type ${JSON.stringify(t)}`);
}

// The `columns = {...}` argument of read_json for a schema.
export function readJsonColumns(schema) {
  return '{' + schema.fields.map((f) => `'${f.name}': '${duckdbType(f.type)}'`).join(', ') + '}';
}
