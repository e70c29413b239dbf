#!/usr/bin/env node
// rest_client.mjs URL PHASE [ARGS] - drives `floe catalog serve` with iceberg-js
// (supabase/iceberg-js, an independent client of the Iceberg REST catalog protocol) for
// tests/integration/rest_server.sh, asserting what each answer must be. Phases:
//
//   namespaces          create (with properties, multi-level), list (top, parent,
//                       pages of 2), exists, load, update properties, drop
//   create SCHEMA_FILE  namespace db, table db.events with the schema floe gen writes
//                       (partitioned by event_type), and table db.gone
//   tables              list, load (ETag, If-None-Match -> 304), exists, rename
//                       db.gone -> db.renamed, load of the old name -> 404, drop
//                       db.renamed (files kept), register its metadata as
//                       db.registered, errors; a staged create (stage-create, then
//                       the commit with assert-create that builds the table)
//   commit              on db.events (which floe append has given a snapshot): a root
//                       snapshot 1001 over the current manifest list made main; two
//                       clients race an add-snapshot + set-snapshot-ref main behind
//                       assert-ref-snapshot-id main=1001: exactly one wins, the other
//                       gets 409 CommitFailedException; failed requirements of every
//                       kind -> 409; unknown update/requirement -> 400
//
// Snapshot ids floe makes are random 63-bit numbers, which JavaScript numbers cannot hold
// exactly, so the snapshots this script asserts on get small ids of its own.
import assert from 'node:assert/strict'
import { copyFileSync, readFileSync, unlinkSync } from 'node:fs'
import { IcebergRestCatalog } from 'iceberg-js'

const [url, phase, arg] = process.argv.slice(2)
if (!url || !phase) {
  process.stderr.write('usage: rest_client.mjs URL PHASE [ARG]\n')
  process.exit(2)
}
const cat = () => new IcebergRestCatalog({ baseUrl: url, auth: { type: 'none' } })
const c = cat()
const db = { namespace: ['db'] }

// The IcebergError a call must throw: status and spec error type.
async function fails(promise, status, type) {
  try {
    await promise
  } catch (e) {
    assert.equal(e.status, status, `status: ${e.message}`)
    if (type) assert.equal(e.icebergType, type, `type: ${e.message}`)
    return e
  }
  assert.fail(`expected ${status} ${type ?? ''}, the call succeeded`)
}

async function namespaces() {
  await c.createNamespace({ namespace: ['ns1'] }, { properties: { owner: 'alice', keep: 'k' } })
  await c.createNamespace({ namespace: ['ns1', 'child'] })
  await fails(c.createNamespace({ namespace: ['ns1'] }), 409, 'AlreadyExistsException')
  for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await c.createNamespace({ namespace: [n] })

  const top = await c.listNamespaces()
  assert.deepEqual(top.namespaces.map((n) => n.namespace),
    [['ns1'], ['p1'], ['p2'], ['p3'], ['p4'], ['p5']])
  const kids = await c.listNamespaces({ parent: { namespace: ['ns1'] } })
  assert.deepEqual(kids.namespaces.map((n) => n.namespace), [['ns1', 'child']])
  await fails(c.listNamespaces({ parent: { namespace: ['nope'] } }), 404, 'NoSuchNamespaceException')

  // pages of two: every namespace once, in order, and the last page without a token
  const seen = []
  let token
  let pages = 0
  do {
    const page = await c.listNamespaces({ pageSize: 2, pageToken: token })
    assert.ok(page.namespaces.length <= 2)
    seen.push(...page.namespaces.map((n) => n.namespace.join('.')))
    token = page.nextPageToken ?? undefined
    pages++
  } while (token)
  assert.deepEqual(seen, ['ns1', 'p1', 'p2', 'p3', 'p4', 'p5'])
  assert.equal(pages, 3)

  assert.equal(await c.namespaceExists({ namespace: ['ns1', 'child'] }), true)
  assert.equal(await c.namespaceExists({ namespace: ['nope'] }), false)
  const meta = await c.loadNamespaceMetadata({ namespace: ['ns1'] })
  assert.equal(meta.properties.owner, 'alice')
  await fails(c.loadNamespaceMetadata({ namespace: ['nope'] }), 404, 'NoSuchNamespaceException')

  const up = await c.updateNamespaceProperties({ namespace: ['ns1'] },
    { updates: { owner: 'bob', team: 'x' }, removals: ['keep', 'never-set'] })
  assert.deepEqual([...up.updated].sort(), ['owner', 'team'])
  assert.deepEqual(up.removed, ['keep'])
  assert.deepEqual(up.missing, ['never-set'])
  const after = await c.loadNamespaceMetadata({ namespace: ['ns1'] })
  assert.equal(after.properties.owner, 'bob')
  assert.equal(after.properties.keep, undefined)
  await fails(c.updateNamespaceProperties({ namespace: ['ns1'] },
    { updates: { a: '1' }, removals: ['a'] }), 422, 'UnprocessableEntityException')

  await fails(c.dropNamespace({ namespace: ['ns1'] }), 409, 'NamespaceNotEmptyException')
  await c.dropNamespace({ namespace: ['ns1', 'child'] })
  await c.dropNamespace({ namespace: ['ns1'] })
  await fails(c.dropNamespace({ namespace: ['ns1'] }), 404, 'NoSuchNamespaceException')
  for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await c.dropNamespace({ namespace: [n] })
  assert.deepEqual((await c.listNamespaces()).namespaces, [])
}

async function create(schemaFile) {
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8'))
  await c.createNamespace(db)
  const typeField = schema.fields.find((f) => f.name === 'event_type')
  const m = await c.createTable(db, {
    name: 'events',
    schema,
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': typeField.id, transform: 'identity', name: 'event_type' }] },
    properties: { 'created-by': 'iceberg-js' },
  })
  assert.equal(m['format-version'], 2)
  assert.equal(m.properties['created-by'], 'iceberg-js')
  assert.equal(m['partition-specs'][0].fields[0].name, 'event_type')
  await fails(c.createTable(db, { name: 'events', schema }), 409, 'AlreadyExistsException')
  await fails(c.createTable({ namespace: ['nope'] }, { name: 'x', schema }), 404,
    'NoSuchNamespaceException')
  await c.createTable(db, { name: 'gone', schema })
}

async function tables() {
  const list = await c.listTables(db)
  assert.deepEqual(list.identifiers.map((i) => i.name), ['events', 'gone'])
  const page = await c.listTables(db, { pageSize: 1 })
  assert.deepEqual(page.identifiers.map((i) => i.name), ['events'])
  assert.ok(page.nextPageToken)
  const page2 = await c.listTables(db, { pageSize: 1, pageToken: page.nextPageToken })
  assert.deepEqual(page2.identifiers.map((i) => i.name), ['gone'])
  assert.equal(page2.nextPageToken ?? null, null)
  await fails(c.listTables({ namespace: ['nope'] }), 404, 'NoSuchNamespaceException')

  const id = { namespace: ['db'], name: 'events' }
  const first = await c.loadTableResult(id)
  assert.ok(first.etag, 'no ETag on load')
  assert.ok(first['metadata-location'].startsWith('file:///'))
  assert.equal(await c.loadTableResult(id, { ifNoneMatch: first.etag }), null, 'no 304')
  assert.equal(await c.tableExists(id), true)
  assert.equal(await c.tableExists({ namespace: ['db'], name: 'nope' }), false)
  await fails(c.loadTable({ namespace: ['db'], name: 'nope' }), 404, 'NoSuchTableException')

  const gone = { namespace: ['db'], name: 'gone' }
  const renamed = { namespace: ['db'], name: 'renamed' }
  await c.renameTable({ source: gone, destination: renamed })
  await fails(c.loadTable(gone), 404, 'NoSuchTableException')
  await fails(c.renameTable({ source: gone, destination: renamed }), 404, 'NoSuchTableException')
  await fails(c.renameTable({ source: renamed, destination: id }), 409, 'AlreadyExistsException')
  const r = await c.loadTableResult(renamed)

  // forget db.renamed (its files stay) and register its metadata file again
  await c.dropTable(renamed, { purge: false })
  await fails(c.dropTable(renamed), 404, 'NoSuchTableException')
  const reg = await c.registerTableResult(db, { name: 'registered', 'metadata-location': r['metadata-location'] })
  assert.equal(reg['metadata-location'], r['metadata-location'])
  assert.equal(reg.metadata['table-uuid'], r.metadata['table-uuid'])
  await fails(c.registerTable(db, { name: 'registered', 'metadata-location': r['metadata-location'] }),
    409, 'AlreadyExistsException')
  await fails(c.registerTable({ namespace: ['nope'] }, { name: 'x', 'metadata-location': r['metadata-location'] }),
    404, 'NoSuchNamespaceException')
  assert.ok(await c.tableExists({ namespace: ['db'], name: 'registered' }))

  // a staged create: metadata first, nothing in the catalog until the commit
  const staged = { namespace: ['db'], name: 'staged' }
  const sm = await c.createTable(db, { name: 'staged', 'stage-create': true, schema: r.metadata.schemas[0], properties: { s: '1' } })
  assert.equal(await c.tableExists(staged), false)
  const build = {
    requirements: [{ type: 'assert-create' }],
    updates: [
      { action: 'assign-uuid', uuid: sm['table-uuid'] },
      { action: 'upgrade-format-version', 'format-version': 2 },
      { action: 'add-schema', schema: sm.schemas[0] },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: sm['partition-specs'][0] },
      { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': sm['sort-orders'][0] },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-location', location: sm.location },
      { action: 'set-properties', updates: sm.properties },
    ],
  }
  const created = await c.commitTable(staged, build)
  assert.equal(created.metadata['table-uuid'], sm['table-uuid'])
  assert.equal(created.metadata.properties.s, '1')
  assert.ok(created['metadata-location'])
  const loaded = await c.loadTable(staged)
  assert.equal(loaded['table-uuid'], sm['table-uuid'])
  assert.equal(loaded.location, sm.location)
  await fails(c.commitTable(staged, build), 409, 'CommitFailedException')
  await fails(c.commitTable({ namespace: ['db'], name: 'unbuilt' }, { requirements: [{ type: 'assert-create' }], updates: [] }),
    400, 'BadRequestException')
  assert.equal(await c.tableExists({ namespace: ['db'], name: 'unbuilt' }), false)
  await c.dropTable(staged, { purge: true })
}

// An add-snapshot + set-snapshot-ref main commit guarded by main's snapshot. The new
// snapshot's manifest list is a copy of manifestList (a local file: URI) of its own: the
// server refuses a list another snapshot has.
function moveMain(expect, id, seq, manifestList, parent) {
  const own = manifestList.replace(/\.avro$/, `-copy${id}.avro`)
  copyFileSync(new URL(manifestList), new URL(own))
  const snapshot = {
    'snapshot-id': id, 'sequence-number': seq, 'timestamp-ms': Date.now(),
    'manifest-list': own, summary: { operation: 'append', 'test.writer': `s${id}` },
    'schema-id': 0,
  }
  if (parent !== undefined) snapshot['parent-snapshot-id'] = parent
  return {
    requirements: expect === undefined ? [] : [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': expect }],
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ],
  }
}

async function commit() {
  const id = { namespace: ['db'], name: 'events' }
  const base = await c.loadTable(id)
  const cur = base.snapshots.find((s) => s['manifest-list'] && base['current-snapshot-id'] != null)
  assert.ok(cur, 'db.events has no snapshot: floe append did not show through REST')
  const ml = base.snapshots[base.snapshots.length - 1]['manifest-list']
  const seq = base['last-sequence-number']

  // a root snapshot with an id JavaScript can hold, over the appended data
  const root = await c.commitTable(id, {
    requirements: [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }],
    updates: moveMain(undefined, 1001, seq + 1, ml).updates,
  })
  assert.equal(root.metadata['current-snapshot-id'], 1001)
  assert.equal(root.metadata.refs.main['snapshot-id'], 1001)

  // the race: two clients, same base, one wins
  const a = cat()
  const b = cat()
  const results = await Promise.allSettled([
    a.commitTable(id, moveMain(1001, 2001, seq + 2, ml, 1001)),
    b.commitTable(id, moveMain(1001, 2002, seq + 2, ml, 1001)),
  ])
  const won = results.filter((x) => x.status === 'fulfilled')
  const lost = results.filter((x) => x.status === 'rejected')
  assert.equal(won.length, 1, `winners: ${JSON.stringify(results.map((x) => x.status))}`)
  assert.equal(lost.length, 1)
  assert.equal(lost[0].reason.status, 409, lost[0].reason.message)
  assert.equal(lost[0].reason.icebergType, 'CommitFailedException')
  const winner = won[0].value.metadata['current-snapshot-id']
  assert.ok(winner === 2001 || winner === 2002)
  // the losing commit's manifest list is no file of the table: the purge at the end would
  // rightly leave it
  unlinkSync(new URL(ml.replace(/\.avro$/, `-copy${winner === 2001 ? 2002 : 2001}.avro`)))
  const now = await c.loadTable(id)
  assert.equal(now['current-snapshot-id'], winner)
  assert.equal(now.snapshots.filter((s) => s['snapshot-id'] === 2001 || s['snapshot-id'] === 2002).length, 1)

  // every requirement kind, failing
  const bad = [
    { type: 'assert-create' },
    { type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1001 },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': now['last-column-id'] + 1 },
    { type: 'assert-current-schema-id', 'current-schema-id': 7 },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1 },
    { type: 'assert-default-spec-id', 'default-spec-id': 3 },
    { type: 'assert-default-sort-order-id', 'default-sort-order-id': 9 },
  ]
  for (const req of bad) {
    await fails(c.commitTable(id, { requirements: [req], updates: [{ action: 'set-properties', updates: { x: '1' } }] }),
      409, 'CommitFailedException')
  }
  // and holding: schema, spec, sort order, properties, statistics, refs in one commit
  const good = [
    { type: 'assert-table-uuid', uuid: now['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': winner },
    { type: 'assert-ref-snapshot-id', ref: 'never', 'snapshot-id': null },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': now['last-column-id'] },
    { type: 'assert-current-schema-id', 'current-schema-id': now['current-schema-id'] },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': now['last-partition-id'] },
    { type: 'assert-default-spec-id', 'default-spec-id': now['default-spec-id'] },
    { type: 'assert-default-sort-order-id', 'default-sort-order-id': now['default-sort-order-id'] },
  ]
  const schema = structuredClone(now.schemas.find((s) => s['schema-id'] === now['current-schema-id']))
  const newId = now['last-column-id'] + 1
  schema.fields.push({ id: newId, name: 'note', type: 'string', required: false })
  delete schema['schema-id']
  const done = await c.commitTable(id, {
    requirements: good,
    updates: [
      { action: 'add-schema', schema },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: { fields: [{ 'source-id': newId, transform: 'identity', name: 'note' }] } },
      { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': { 'order-id': 1, fields: [{ 'source-id': newId, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] } },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-properties', updates: { 'rest.test': 'yes', gone: 'soon' } },
      { action: 'remove-properties', removals: ['gone'] },
      { action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'tag', 'snapshot-id': 1001, 'max-ref-age-ms': 86400000 },
      { action: 'set-statistics', statistics: { 'snapshot-id': winner, 'statistics-path': `${now.location}/metadata/stats.puffin`, 'file-size-in-bytes': 10, 'file-footer-size-in-bytes': 4, 'blob-metadata': [] } },
    ],
  })
  const m = done.metadata
  assert.equal(m['last-column-id'], newId)
  assert.equal(m['current-schema-id'], Math.max(...m.schemas.map((s) => s['schema-id'])))
  assert.equal(m['partition-specs'].find((s) => s['spec-id'] === m['default-spec-id']).fields[0].name, 'note')
  assert.equal(m['sort-orders'].find((s) => s['order-id'] === m['default-sort-order-id']).fields[0]['source-id'], newId)
  assert.equal(m.properties['rest.test'], 'yes')
  assert.equal(m.properties.gone, undefined)
  assert.equal(m.refs.audit.type, 'tag')
  assert.equal(m.refs.audit['max-ref-age-ms'], 86400000)
  assert.equal(m.statistics.length, 1)
  // and undone: floe scan reads the table with its first schema and spec
  await c.commitTable(id, {
    requirements: [],
    updates: [
      { action: 'remove-statistics', 'snapshot-id': winner },
      { action: 'remove-snapshot-ref', 'ref-name': 'audit' },
      { action: 'set-current-schema', 'schema-id': now['current-schema-id'] },
      { action: 'set-default-spec', 'spec-id': now['default-spec-id'] },
      { action: 'set-default-sort-order', 'sort-order-id': 0 },
    ],
  })

  await fails(c.commitTable(id, { requirements: [], updates: [{ action: 'no-such-update' }] }), 400,
    'BadRequestException')
  await fails(c.commitTable(id, { requirements: [{ type: 'assert-nothing' }], updates: [] }), 400,
    'BadRequestException')
  await fails(c.commitTable(id, { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': 99 }] }),
    400, 'BadRequestException')
  await fails(c.commitTable({ namespace: ['db'], name: 'nope' }, { requirements: [], updates: [] }), 404,
    'NoSuchTableException')
}

const phases = { namespaces, create: () => create(arg), tables, commit }
if (!phases[phase]) {
  process.stderr.write(`rest_client.mjs: unknown phase ${phase}\n`)
  process.exit(2)
}
try {
  await phases[phase]()
  process.stdout.write(`rest_client ${phase}: ok\n`)
} catch (e) {
  process.stderr.write(`rest_client ${phase}: ${e.stack ?? e}\n`)
  process.exit(1)
}
