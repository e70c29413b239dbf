#!/usr/bin/env node
// s3_sigcheck_server.mjs - a small in-memory S3 server that verifies every request's AWS
// Signature Version 4, for floe's tests (s3rver checks no V4 signatures).
//
//   node s3_sigcheck_server.mjs [--port 0] [--host 127.0.0.1] [--access-key AK]
//        [--secret SK] [--region us-east-1] [--token TOKEN] [--bucket NAME]... [--lifeline]
//        [--latency-ms MIN[-MAX]] [--bandwidth-mbps N]
//
// Prints one JSON line {"port": N} on stdout when listening; stops on SIGTERM, or when stdin
// closes with --lifeline (so a test that dies takes its server with it). Path-style
// addressing only (/bucket/key).
//
// For each request the server recomputes the canonical request on its own from what came
// over the wire: the path is percent-decoded per segment and re-encoded (so a client that
// encodes "=" or " " differently from what it signed is caught), the query is decoded,
// re-encoded and sorted, the signed headers are taken from SignedHeaders (host and every
// x-amz-* header sent must be among them), and x-amz-content-sha256 must equal the SHA-256
// of the body actually received. A mismatch is 403 SignatureDoesNotMatch.
//
// Operations: PutObject (If-None-Match: *), GetObject (Range), HeadObject, DeleteObject,
// ListObjectsV2 (prefix, max-keys, continuation-token), DeleteObjects (Content-MD5
// checked), CreateMultipartUpload, UploadPart, CompleteMultipartUpload (If-None-Match: *,
// parts >= 5 MiB but the last), AbortMultipartUpload, ListMultipartUploads. As AWS does,
// a key longer than 1024 bytes is refused (400 KeyTooLongError).
// A realistic object store for benchmarks (bench/scale): --latency-ms delays every S3 answer
// (not /__admin) by a time drawn uniformly from MIN..MAX ms after its request was read, as a
// store's first-byte latency; --bandwidth-mbps caps the bytes moved (request body plus
// answer body) at N megabytes (10^6 bytes) per second per connection: the answer leaves
// bytes / N us later on top of the latency (an S3 connection's throughput is capped, more
// connections move more). Waiting costs no CPU (a timer). Both off by default.
// GET /__admin/stats (unsigned) returns counters as JSON (requests, sigFailures, connections
// accepted, byOp, inFlightMax: the most S3 requests between arrival and answer at once;
// ?reset-in-flight=1 starts that one again from the requests in flight now);
// GET /__admin/object?bucket=B&key=K
// the raw bytes of an object.

import { createHash, createHmac, randomBytes } from 'node:crypto'
import http from 'node:http'

const args = process.argv.slice(2)
const opt = { latMin: 0, latMax: 0, bw: 0, port: 0, host: '127.0.0.1', accessKey: 'AKIDFLOETEST', secret: 'floe-test-secret', region: 'us-east-1', token: null, buckets: [] }
for (let i = 0; i < args.length; i++) {
  const a = args[i], v = args[i + 1]
  if (a === '--port') opt.port = Number(v), i++
  else if (a === '--host') opt.host = v, i++
  else if (a === '--access-key') opt.accessKey = v, i++
  else if (a === '--secret') opt.secret = v, i++
  else if (a === '--region') opt.region = v, i++
  else if (a === '--token') opt.token = v, i++
  else if (a === '--bucket') opt.buckets.push(v), i++
  else if (a === '--lifeline') opt.lifeline = true
  else if (a === '--latency-ms') {
    const m = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?$/.exec(v || '')
    if (!m) { console.error(`--latency-ms: expected MIN or MIN-MAX, got ${v}`); process.exit(2) }
    opt.latMin = Number(m[1]); opt.latMax = m[2] === undefined ? opt.latMin : Number(m[2]); i++
    if (opt.latMax < opt.latMin) { console.error('--latency-ms: MAX below MIN'); process.exit(2) }
  } else if (a === '--bandwidth-mbps') {
    opt.bw = Number(v); i++
    if (!(opt.bw > 0)) { console.error(`--bandwidth-mbps: expected a positive number, got ${v}`); process.exit(2) }
  }
  else { console.error(`unknown argument ${a}`); process.exit(2) }
}

const MIN_PART = 5 * 1024 * 1024
const buckets = new Map() // name -> Map(key -> {data, etag, mtime})
for (const b of opt.buckets) buckets.set(b, new Map())
const uploads = new Map() // id -> {bucket, key, parts: Map(n -> {data, etag})}
const stats = { requests: 0, sigFailures: 0, connections: 0, byOp: {}, inFlightMax: 0 }
let inFlight = 0

const sha256 = (b) => createHash('sha256').update(b).digest('hex')
const md5hex = (b) => createHash('md5').update(b).digest('hex')
const hmac = (k, s) => createHmac('sha256', k).update(s).digest()

// RFC 3986 encoding as SigV4 wants it: unreserved kept, every other UTF-8 byte %XX.
function awsEncode(s, keepSlash) {
  let out = ''
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) out += c
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0')
  }
  return out
}

function xmlEscape(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
function xmlUnescape(s) {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);/g, (_, d) => String.fromCodePoint(parseInt(d, 10)))
    .replace(/&amp;/g, '&')
}

function sendXml(res, status, body, headers = {}) {
  const buf = Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n' + body)
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': buf.length, 'x-amz-request-id': randomBytes(8).toString('hex'), ...headers })
  res.end(buf)
}
function sendError(res, status, code, message, extra = '') {
  sendXml(res, status, `<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>${extra}</Error>`)
}

// Returns null when the signature is right, else a reason.
function checkSignature(req, rawPath, rawQuery, body) {
  const auth = req.headers['authorization']
  if (!auth) return 'no Authorization header'
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;\-]+), ?Signature=([0-9a-f]{64})$/.exec(auth)
  if (!m) return `malformed Authorization: ${auth}`
  const [, ak, date8, region, service, signedHeaders, signature] = m
  if (ak !== opt.accessKey) return `unknown access key ${ak}`
  if (region !== opt.region || service !== 's3') return `bad scope ${region}/${service}`
  const amzDate = req.headers['x-amz-date']
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date8) return 'bad x-amz-date'
  const t = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15))
  if (Math.abs(Date.now() - t) > 15 * 60 * 1000) return 'request time too skewed'
  const payload = req.headers['x-amz-content-sha256']
  if (!payload) return 'missing x-amz-content-sha256'
  if (payload !== 'UNSIGNED-PAYLOAD' && payload !== sha256(body)) return 'x-amz-content-sha256 does not match the body'
  const names = signedHeaders.split(';')
  if (!names.includes('host')) return 'host is not signed'
  for (const h of Object.keys(req.headers)) {
    if (h.startsWith('x-amz-') && !names.includes(h)) return `${h} is sent but not signed`
  }
  if (opt.token !== null) {
    if (req.headers['x-amz-security-token'] !== opt.token) return 'missing or wrong session token'
  }
  // canonical URI: decode each segment, encode again
  let canonPath
  try {
    canonPath = rawPath.split('/').map((seg) => awsEncode(decodeURIComponent(seg), false)).join('/')
  } catch { return 'undecodable path' }
  if (canonPath !== rawPath) return `path not canonically encoded: ${rawPath} (expected ${canonPath})`
  // canonical query
  const pairs = rawQuery === '' ? [] : rawQuery.split('&').map((p) => {
    const i = p.indexOf('=')
    const k = i < 0 ? p : p.slice(0, i), v = i < 0 ? '' : p.slice(i + 1)
    return [awsEncode(decodeURIComponent(k), false), awsEncode(decodeURIComponent(v), false)]
  })
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
  const canonQuery = pairs.map(([k, v]) => `${k}=${v}`).join('&')
  const canonHeaders = names.map((n) => {
    const v = req.headers[n]
    if (v === undefined) return null
    return `${n}:${String(v).trim().replace(/\s+/g, ' ')}\n`
  })
  if (canonHeaders.includes(null)) return 'a signed header is missing'
  const creq = [req.method, rawPath, canonQuery, canonHeaders.join(''), signedHeaders, payload].join('\n')
  const sts = ['AWS4-HMAC-SHA256', amzDate, `${date8}/${region}/s3/aws4_request`, sha256(creq)].join('\n')
  let k = hmac('AWS4' + opt.secret, date8)
  k = hmac(k, region)
  k = hmac(k, 's3')
  k = hmac(k, 'aws4_request')
  const want = createHmac('sha256', k).update(sts).digest('hex')
  if (want !== signature) return `signature mismatch; canonical request was:\n${creq}`
  return null
}

function count(op) { stats.byOp[op] = (stats.byOp[op] || 0) + 1 }

function listObjects(res, bucketName, objects, q) {
  const prefix = q.get('prefix') || ''
  let maxKeys = q.has('max-keys') ? Number(q.get('max-keys')) : 1000
  if (!Number.isInteger(maxKeys) || maxKeys < 0) return sendError(res, 400, 'InvalidArgument', 'bad max-keys')
  maxKeys = Math.min(maxKeys, 1000)
  const token = q.get('continuation-token')
  const after = token ? Buffer.from(token, 'base64').toString('utf8') : (q.get('start-after') || '')
  const keys = [...objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort()
  const page = keys.slice(0, maxKeys)
  const truncated = keys.length > page.length
  let body = `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${xmlEscape(bucketName)}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${truncated}</IsTruncated>`
  if (token) body += `<ContinuationToken>${xmlEscape(token)}</ContinuationToken>`
  if (truncated) body += `<NextContinuationToken>${Buffer.from(page[page.length - 1]).toString('base64')}</NextContinuationToken>`
  for (const k of page) {
    const o = objects.get(k)
    body += `<Contents><Key>${xmlEscape(k)}</Key><LastModified>${o.mtime.toISOString()}</LastModified><ETag>${xmlEscape(o.etag)}</ETag><Size>${o.data.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`
  }
  sendXml(res, 200, body + '</ListBucketResult>')
}

function handle(req, res, body) {
  stats.requests++
  const url = req.url
  const qi = url.indexOf('?')
  const rawPath = qi < 0 ? url : url.slice(0, qi)
  const rawQuery = qi < 0 ? '' : url.slice(qi + 1)
  if (rawPath === '/__admin/stats') {
    if (new URLSearchParams(rawQuery).get('reset-in-flight') === '1') stats.inFlightMax = inFlight
    const pending = [...uploads.values()].map((u) => `${u.bucket}/${u.key}`)
    const objects = {}
    for (const [b, m] of buckets) objects[b] = m.size
    const out = Buffer.from(JSON.stringify({ ...stats, pendingUploads: pending, objects }))
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': out.length })
    return res.end(out)
  }
  if (rawPath === '/__admin/object') { // raw bytes of bucket/key, for byte comparisons
    const q = new URLSearchParams(rawQuery)
    const o = buckets.get(q.get('bucket'))?.get(q.get('key'))
    if (!o) { res.writeHead(404); return res.end() }
    res.writeHead(200, { 'Content-Length': o.data.length })
    return res.end(o.data)
  }
  const why = checkSignature(req, rawPath, rawQuery, body)
  if (why) {
    stats.sigFailures++
    if (process.env.SIGCHECK_VERBOSE) console.error(`sigcheck: ${req.method} ${url}: ${why}`)
    return sendError(res, 403, 'SignatureDoesNotMatch', why)
  }
  const q = new URLSearchParams(rawQuery)
  const segs = rawPath.split('/')
  const bucketName = decodeURIComponent(segs[1] || '')
  const key = segs.slice(2).map(decodeURIComponent).join('/')
  const objects = buckets.get(bucketName)
  if (!objects) return sendError(res, 404, 'NoSuchBucket', `no bucket ${bucketName}`)
  const m = req.method
  // AWS: object keys are at most 1024 bytes of UTF-8
  if (Buffer.byteLength(key, 'utf8') > 1024 && (m === 'PUT' || m === 'POST')) {
    return sendError(res, 400, 'KeyTooLongError', 'Your key is too long')
  }

  if (key === '') {
    if (m === 'GET' && q.get('list-type') === '2') { count('ListObjectsV2'); return listObjects(res, bucketName, objects, q) }
    if (m === 'GET' && q.has('uploads')) {
      count('ListMultipartUploads')
      let b = `<ListMultipartUploadsResult><Bucket>${xmlEscape(bucketName)}</Bucket>`
      for (const [id, u] of uploads) if (u.bucket === bucketName) b += `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${id}</UploadId></Upload>`
      return sendXml(res, 200, b + '</ListMultipartUploadsResult>')
    }
    if (m === 'POST' && q.has('delete')) {
      count('DeleteObjects')
      const md5 = req.headers['content-md5']
      if (!md5 || md5 !== createHash('md5').update(body).digest('base64')) return sendError(res, 400, 'InvalidDigest', 'Content-MD5 missing or wrong')
      const text = body.toString('utf8')
      const keys = [...text.matchAll(/<Object>\s*<Key>([\s\S]*?)<\/Key>/g)].map((x) => xmlUnescape(x[1]))
      if (keys.length > 1000) return sendError(res, 400, 'MalformedXML', 'more than 1000 keys')
      for (const k of keys) objects.delete(k)
      const quiet = /<Quiet>true<\/Quiet>/.test(text)
      let b = '<DeleteResult>'
      if (!quiet) for (const k of keys) b += `<Deleted><Key>${xmlEscape(k)}</Key></Deleted>`
      return sendXml(res, 200, b + '</DeleteResult>')
    }
    return sendError(res, 400, 'NotImplemented', `bucket operation ${m} ${rawQuery}`)
  }

  if (m === 'POST' && q.has('uploads')) {
    count('CreateMultipartUpload')
    const id = randomBytes(12).toString('hex')
    uploads.set(id, { bucket: bucketName, key, parts: new Map() })
    return sendXml(res, 200, `<InitiateMultipartUploadResult><Bucket>${xmlEscape(bucketName)}</Bucket><Key>${xmlEscape(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`)
  }
  if (q.has('uploadId')) {
    const id = q.get('uploadId')
    const u = uploads.get(id)
    if (!u || u.bucket !== bucketName || u.key !== key) return sendError(res, 404, 'NoSuchUpload', `no upload ${id}`)
    if (m === 'PUT' && q.has('partNumber')) {
      count('UploadPart')
      const n = Number(q.get('partNumber'))
      if (!Number.isInteger(n) || n < 1 || n > 10000) return sendError(res, 400, 'InvalidArgument', 'bad partNumber')
      const etag = `"${md5hex(body)}"`
      u.parts.set(n, { data: body, etag })
      res.writeHead(200, { ETag: etag, 'Content-Length': 0 })
      return res.end()
    }
    if (m === 'DELETE') {
      count('AbortMultipartUpload')
      uploads.delete(id)
      res.writeHead(204)
      return res.end()
    }
    if (m === 'POST') {
      count('CompleteMultipartUpload')
      const text = body.toString('utf8')
      const parts = [...text.matchAll(/<Part>\s*<PartNumber>(\d+)<\/PartNumber>\s*<ETag>([\s\S]*?)<\/ETag>\s*<\/Part>/g)].map((x) => [Number(x[1]), xmlUnescape(x[2])])
      if (parts.length === 0) return sendError(res, 400, 'MalformedXML', 'no parts')
      const datas = []
      let prev = 0
      for (let i = 0; i < parts.length; i++) {
        const [n, etag] = parts[i]
        const p = u.parts.get(n)
        if (n <= prev) return sendError(res, 400, 'InvalidPartOrder', 'parts out of order')
        prev = n
        if (!p || p.etag !== etag) return sendError(res, 400, 'InvalidPart', `part ${n} missing or etag differs`)
        if (i < parts.length - 1 && p.data.length < MIN_PART) return sendError(res, 400, 'EntityTooSmall', `part ${n} is ${p.data.length} bytes`)
        datas.push(p.data)
      }
      if (req.headers['if-none-match'] === '*' && objects.has(key)) {
        return sendError(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold')
      }
      const md5s = Buffer.concat(datas.map((d) => createHash('md5').update(d).digest()))
      const etag = `"${md5hex(md5s)}-${datas.length}"`
      objects.set(key, { data: Buffer.concat(datas), etag, mtime: new Date() })
      uploads.delete(id)
      return sendXml(res, 200, `<CompleteMultipartUploadResult><Bucket>${xmlEscape(bucketName)}</Bucket><Key>${xmlEscape(key)}</Key><ETag>${xmlEscape(etag)}</ETag></CompleteMultipartUploadResult>`)
    }
    return sendError(res, 400, 'NotImplemented', `upload operation ${m}`)
  }
  if (m === 'PUT') {
    count('PutObject')
    if (req.headers['if-none-match'] === '*' && objects.has(key)) {
      return sendError(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold')
    }
    const etag = `"${md5hex(body)}"`
    objects.set(key, { data: body, etag, mtime: new Date() })
    res.writeHead(200, { ETag: etag, 'Content-Length': 0 })
    return res.end()
  }
  if (m === 'DELETE') {
    count('DeleteObject')
    objects.delete(key)
    res.writeHead(204)
    return res.end()
  }
  if (m === 'GET' || m === 'HEAD') {
    count(m === 'GET' ? 'GetObject' : 'HeadObject')
    const o = objects.get(key)
    if (!o) {
      if (m === 'HEAD') { res.writeHead(404, { 'Content-Length': 0 }); return res.end() }
      return sendError(res, 404, 'NoSuchKey', 'The specified key does not exist.', `<Key>${xmlEscape(key)}</Key>`)
    }
    const headers = { ETag: o.etag, 'Last-Modified': o.mtime.toUTCString(), 'Accept-Ranges': 'bytes' }
    const range = req.headers['range']
    if (m === 'GET' && range) {
      const r = /^bytes=(\d+)-(\d+)$/.exec(range)
      if (!r) return sendError(res, 400, 'InvalidArgument', `unsupported range ${range}`)
      const a = Number(r[1]), b = Math.min(Number(r[2]), o.data.length - 1)
      if (a > b || a >= o.data.length) return sendError(res, 416, 'InvalidRange', 'The requested range is not satisfiable')
      const slice = o.data.subarray(a, b + 1)
      res.writeHead(206, { ...headers, 'Content-Range': `bytes ${a}-${b}/${o.data.length}`, 'Content-Length': slice.length })
      return res.end(slice)
    }
    res.writeHead(200, { ...headers, 'Content-Length': o.data.length })
    return res.end(m === 'HEAD' ? undefined : o.data)
  }
  return sendError(res, 405, 'MethodNotAllowed', m)
}

// The delay of one answer (--latency-ms, --bandwidth-mbps): latency plus the bytes moved
// over the capped bandwidth. res.end is held back until then (writeHead sends nothing
// before it).
function delayed(res, reqBytes) {
  const end = res.end.bind(res)
  res.end = (data, ...rest) => {
    let ms = opt.latMin + Math.random() * (opt.latMax - opt.latMin)
    if (opt.bw) ms += (reqBytes + (data ? data.length : 0)) / (opt.bw * 1000)
    setTimeout(() => end(data, ...rest), ms)
    return res
  }
}

const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    if (!req.url.startsWith('/__admin/')) {
      if (opt.latMax || opt.bw) delayed(res, body.length)
      if (++inFlight > stats.inFlightMax) stats.inFlightMax = inFlight
      res.on('close', () => { inFlight-- })
    }
    try { handle(req, res, body) } catch (e) {
      console.error(e)
      if (!res.headersSent) sendError(res, 500, 'InternalError', String(e))
    }
  })
  req.on('error', () => {})
})
server.keepAliveTimeout = 30000
server.on('connection', () => { stats.connections++ })
server.listen(opt.port, opt.host, () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n')
})
const stop = () => { server.close(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
if (opt.lifeline) {
  process.stdin.on('end', stop)
  process.stdin.resume()
}
