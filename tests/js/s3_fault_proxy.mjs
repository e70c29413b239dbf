#!/usr/bin/env node
// s3_fault_proxy.mjs - an HTTP proxy that sits between floe and an S3 server and breaks
// requests on command, to test floe's retries.
//
//   node s3_fault_proxy.mjs --target 127.0.0.1:PORT [--port 0] [--lifeline]
//
// Prints {"port": N} when listening. Requests are forwarded unchanged (Host header
// included, so signatures stay valid) unless a fault rule matches. Rules are set with
//   POST /__fault   body: JSON [{"mode": M, "count": N, "method": "PUT", "match": "uploadId",
//                                "ms": 2000}, ...]   (replaces all rules)
//   GET  /__fault/stats  -> {"injected": {mode: n}, "forwarded": n}
// A rule applies to the next `count` requests whose method and URL substring match.
// Modes:
//   503         answer 503 SlowDown (with Retry-After: 0) without forwarding
//   500         answer 500 InternalError without forwarding
//   drop        close the connection without forwarding (the request never arrived)
//   drop_after  forward, wait for the answer, then close the connection without sending
//               it (the request was applied; the client cannot know)
//   500_after   forward, then answer 500 InternalError instead of the real answer
//   truncate    forward, send the real headers and half of the body, then close
//   slow        wait `ms` before forwarding
//   400         answer 400 InvalidRequest without forwarding (a non-retryable failure)

import http from 'node:http'

const args = process.argv.slice(2)
let port = 0, target = null, lifeline = false
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--port') port = Number(args[++i])
  else if (args[i] === '--target') target = args[++i]
  else if (args[i] === '--lifeline') lifeline = true
  else { console.error(`unknown argument ${args[i]}`); process.exit(2) }
}
if (!target) { console.error('--target host:port is required'); process.exit(2) }
const [thost, tport] = target.split(':')

let rules = []
const stats = { injected: {}, forwarded: 0 }

function takeRule(req) {
  for (const r of rules) {
    if (r.count <= 0) continue
    if (r.method && r.method !== req.method) continue
    if (r.match && !req.url.includes(r.match)) continue
    if (r.notMatch && req.url.includes(r.notMatch)) continue
    r.count--
    stats.injected[r.mode] = (stats.injected[r.mode] || 0) + 1
    return r
  }
  return null
}

function xmlError(res, status, code, headers = {}) {
  const body = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>injected by s3_fault_proxy</Message></Error>`)
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': body.length, ...headers })
  res.end(body)
}

function forward(req, body, onResponse) {
  stats.forwarded++
  const up = http.request({ host: thost, port: Number(tport), method: req.method, path: req.url, headers: req.headers }, (ures) => {
    const chunks = []
    ures.on('data', (c) => chunks.push(c))
    ures.on('end', () => onResponse(ures, Buffer.concat(chunks)))
  })
  up.on('error', (e) => onResponse(null, Buffer.from(String(e))))
  up.end(body)
}

function reply(req, res, ures, data) {
  if (!ures) return xmlError(res, 502, 'BadGateway')
  const headers = { ...ures.headers }
  delete headers['transfer-encoding']
  delete headers['connection']
  delete headers['keep-alive']
  // a HEAD answer keeps the object's length; others carry exactly the bytes we have
  if (req.method !== 'HEAD' && ures.statusCode !== 204 && ures.statusCode !== 304) headers['content-length'] = data.length
  res.writeHead(ures.statusCode, headers)
  res.end(data)
}

const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('error', () => {})
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    if (req.url === '/__fault' && req.method === 'POST') {
      rules = JSON.parse(body.toString('utf8'))
      for (const r of rules) r.count = r.count ?? 1
      stats.injected = {}
      stats.forwarded = 0
      res.writeHead(204)
      return res.end()
    }
    if (req.url === '/__fault/stats') {
      const out = Buffer.from(JSON.stringify({ ...stats, pending: rules.reduce((n, r) => n + r.count, 0) }))
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': out.length })
      return res.end(out)
    }
    const rule = takeRule(req)
    const mode = rule ? rule.mode : null
    switch (mode) {
      case '503': return xmlError(res, 503, 'SlowDown', { 'Retry-After': '0' })
      case '500': return xmlError(res, 500, 'InternalError')
      case '400': return xmlError(res, 400, 'InvalidRequest')
      case 'drop': return req.socket.destroy()
      case 'drop_after': return forward(req, body, () => req.socket.destroy())
      case '500_after': return forward(req, body, () => xmlError(res, 500, 'InternalError'))
      case 'truncate':
        return forward(req, body, (ures, data) => {
          if (!ures || data.length < 2) return req.socket.destroy()
          const headers = { ...ures.headers }
          delete headers['transfer-encoding']
          headers['content-length'] = data.length
          res.writeHead(ures.statusCode, headers)
          res.write(data.subarray(0, data.length >> 1), () => setTimeout(() => req.socket.destroy(), 20))
        })
      case 'slow': return setTimeout(() => forward(req, body, (ures, data) => reply(req, res, ures, data)), rule.ms ?? 2000)
      default: return forward(req, body, (ures, data) => reply(req, res, ures, data))
    }
  })
})
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n')
})
const stop = () => { server.close(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
if (lifeline) {
  process.stdin.on('end', stop)
  process.stdin.resume()
}
