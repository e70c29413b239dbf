#!/usr/bin/env node
// openapi_proxy.mjs SPEC TARGET_URL PORT_FILE LOG [PREFIX] - a proxy in front of `floe
// catalog serve` that checks every exchange against the Iceberg REST catalog OpenAPI
// document (tests/data/rest/rest-catalog-open-api.yaml) with Ajv (JSON Schema 2020-12,
// the dialect of OpenAPI 3.1) and passes it on unchanged.
//
// Each exchange is matched to the spec's operation by path template (the {prefix}
// segment optional, as clients omit it when the server gives none) and method, then:
//   - the request: its JSON body against the operation's requestBody schema, its header
//     and query parameters against theirs. A request the spec refuses must be refused by
//     the server too (4xx); answering it 2xx is a violation;
//   - the response: its status must be one the operation lists (or NXX / default), and its
//     JSON body must match that response's schema; 204 and 304 have no body;
//   - a path or method the spec does not have: the answer must be 404 or 405 with an
//     IcebergErrorResponse body.
// One JSON line per exchange goes to LOG: {method, path, status, problems: [...]}; the
// test fails on any line with problems. The proxy listens on a free loopback port, written
// to PORT_FILE.
import http from 'node:http'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { parse as parseYaml } from 'yaml'

const [specPath, target, portFile, logPath, prefix = 'rest'] = process.argv.slice(2)
if (!logPath) {
  process.stderr.write('usage: openapi_proxy.mjs SPEC TARGET_URL PORT_FILE LOG [PREFIX]\n')
  process.exit(2)
}
const spec = parseYaml(readFileSync(specPath, 'utf8'))
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
addFormats.default(ajv)
for (const f of ['int32', 'int64', 'float', 'double']) ajv.addFormat(f, true)
ajv.addSchema(spec, 'spec')

const validators = new Map()
function validator(schema) {
  // schemas are compiled once each; a $ref into the document is resolved against it
  const key = JSON.stringify(schema)
  if (!validators.has(key)) {
    const wrapped = schema.$ref ? { $ref: 'spec' + schema.$ref } : rebase(schema)
    validators.set(key, ajv.compile(wrapped))
  }
  return validators.get(key)
}
// An inline schema's $refs point into the document: make them absolute.
function rebase(s) {
  if (Array.isArray(s)) return s.map(rebase)
  if (s && typeof s === 'object') {
    const o = {}
    for (const [k, v] of Object.entries(s)) o[k] = k === '$ref' && v.startsWith('#') ? 'spec' + v : rebase(v)
    return o
  }
  return s
}
const deref = (o) => (o && o.$ref ? deref(o.$ref.slice(2).split('/').reduce((a, k) => a[k], spec)) : o)

const pfx = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const routes = Object.entries(spec.paths).map(([tpl, item]) => {
  const names = []
  const re = tpl.replace('/v1/{prefix}', `/v1(?:/${pfx})?`).replace(/\{([^}]+)\}/g, (_, n) => {
    names.push(n)
    return '([^/]+)'
  })
  return { tpl, item, names, re: new RegExp(`^${re}$`) }
})

function match(path) {
  // the route with the most literal text wins (tables/rename over {namespace}/...)
  let best = null
  for (const r of routes) {
    const m = r.re.exec(path)
    if (m && (!best || r.tpl.replace(/\{[^}]+\}/g, '').length > best.r.tpl.replace(/\{[^}]+\}/g, '').length))
      best = { r, m }
  }
  return best
}

function errs(v) {
  return (v.errors || []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')
}

function coerce(schema, text) {
  const s = deref(schema) || {}
  // header and query parameters are serialized in the default styles (simple, form):
  // an array is its items separated by commas (OpenAPI 3.1 "Style Values")
  if (s.type === 'array') return text.split(',').map((t) => coerce(s.items, t.trim()))
  if (s.type === 'integer' || s.type === 'number') return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text
  if (s.type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text
  return text
}

// Problems of the request: [] when the spec takes it.
function checkRequest(op, item, url, headers, body) {
  const out = []
  const params = [...(item.parameters || []), ...(op.parameters || [])].map(deref)
  for (const p of params) {
    let v
    if (p.in === 'query') v = url.searchParams.get(p.name) ?? undefined
    else if (p.in === 'header') v = headers[p.name.toLowerCase()]
    else continue
    if (v === undefined) {
      if (p.required) out.push(`${p.in} parameter ${p.name} missing`)
      continue
    }
    const ok = validator(p.schema)
    if (!ok(coerce(p.schema, v))) out.push(`${p.in} parameter ${p.name}=${v}: ${errs(ok)}`)
  }
  const rb = deref(op.requestBody)
  if (rb) {
    const schema = rb.content?.['application/json']?.schema
    let doc
    try {
      doc = JSON.parse(body.toString('utf8'))
    } catch {
      if (rb.required || body.length) out.push('request body is not JSON')
      return out
    }
    if (schema) {
      const ok = validator(schema)
      if (!ok(doc)) out.push(`request body: ${errs(ok)}`)
    }
  }
  return out
}

function checkResponse(op, status, headers, body, method) {
  const out = []
  const rs = op.responses || {}
  const spec = rs[String(status)] ?? rs[`${String(status)[0]}XX`] ?? rs.default
  if (!spec) return [`status ${status} is not a response of ${op.operationId}`]
  const resp = deref(spec)
  const schema = resp.content?.['application/json']?.schema
  if (status === 204 || status === 304 || method === 'HEAD') {
    if (body.length) out.push(`status ${status} with a body`)
    return out
  }
  if (!schema) {
    if (body.length) out.push(`status ${status}: a body where the spec has none`)
    return out
  }
  if (!/^application\/json\b/.test(headers['content-type'] || '')) out.push(`content-type ${headers['content-type']}`)
  let doc
  try {
    doc = JSON.parse(body.toString('utf8'))
  } catch {
    return [...out, `status ${status}: the body is not JSON`]
  }
  const ok = validator(schema)
  if (!ok(doc)) out.push(`response ${status} (${op.operationId}): ${errs(ok)}`)
  return out
}

const errorModel = validator({ $ref: '#/components/schemas/IcebergErrorResponse' })

function check(req, url, reqBody, status, resHeaders, resBody) {
  const m = match(url.pathname)
  const op = m?.r.item[req.method.toLowerCase()]
  if (!op) {
    const problems = []
    if (status !== 404 && status !== 405) problems.push(`no such operation in the spec, answered ${status}`)
    else {
      let doc
      try {
        doc = JSON.parse(resBody.toString('utf8'))
      } catch {}
      if (req.method !== 'HEAD' && !errorModel(doc)) problems.push(`error body: ${errs(errorModel)}`)
    }
    return { operation: null, problems }
  }
  const reqProblems = checkRequest(op, m.r.item, url, req.headers, reqBody)
  const problems = checkResponse(op, status, resHeaders, resBody, req.method)
  if (reqProblems.length && status < 400)
    problems.push(`answered ${status} to a request the spec refuses: ${reqProblems.join('; ')}`)
  return { operation: op.operationId, refused_request: reqProblems, problems }
}

const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const reqBody = Buffer.concat(chunks)
    const headers = { ...req.headers }
    delete headers.host
    const up = http.request(target + req.url, { method: req.method, headers }, (ur) => {
      const rc = []
      ur.on('data', (c) => rc.push(c))
      ur.on('end', () => {
        const resBody = Buffer.concat(rc)
        const url = new URL(req.url, 'http://x')
        let result
        try {
          result = check(req, url, reqBody, ur.statusCode, ur.headers, resBody)
        } catch (e) {
          result = { problems: [`validator failure: ${e.message}`] }
        }
        appendFileSync(logPath, JSON.stringify({ method: req.method, path: req.url, status: ur.statusCode, ...result }) + '\n')
        res.writeHead(ur.statusCode, ur.headers)
        res.end(resBody)
      })
    })
    up.on('error', (e) => {
      appendFileSync(logPath, JSON.stringify({ method: req.method, path: req.url, problems: [`upstream: ${e.message}`] }) + '\n')
      res.writeHead(502)
      res.end()
    })
    up.end(reqBody)
  })
})
server.keepAliveTimeout = 1000
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, `${server.address().port}\n`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
