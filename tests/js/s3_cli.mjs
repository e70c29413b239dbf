#!/usr/bin/env node
// s3_cli.mjs - a minimal signed S3 client for tests, independent of floe's own S3 code.
//
//   node s3_cli.mjs ls BUCKET [PREFIX]      every key under PREFIX, one a line (sorted)
//   node s3_cli.mjs put BUCKET KEY FILE     PutObject with FILE's bytes
//   node s3_cli.mjs put-tree BUCKET PREFIX DIR   every file under DIR to PREFIX/its path
//                                           (16 requests at a time)
//
// Endpoint and credentials from AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION (default us-east-1). Path-style addressing, AWS
// Signature Version 4 with the payload hash signed. Exits 1 on any non-2xx answer.

import { createHash, createHmac } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'

const env = process.env
const endpoint = new URL(env.AWS_ENDPOINT_URL_S3 || 'http://127.0.0.1:9000')
const region = env.AWS_REGION || 'us-east-1'
const sha256 = (b) => createHash('sha256').update(b).digest('hex')
const hmac = (k, s) => createHmac('sha256', k).update(s).digest()
// RFC 3986 unreserved characters stay; everything else is percent-encoded (SigV4 rules).
const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())

async function request(method, bucket, key, query, body) {
  const path = '/' + enc(bucket) + (key ? '/' + key.split('/').map(enc).join('/') : '')
  const qs = Object.keys(query).sort().map((k) => `${enc(k)}=${enc(query[k])}`).join('&')
  const payload = body || Buffer.alloc(0)
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '')
  const date8 = amzDate.slice(0, 8)
  const headers = { host: endpoint.host, 'x-amz-content-sha256': sha256(payload), 'x-amz-date': amzDate }
  const names = Object.keys(headers).sort()
  const canonHeaders = names.map((n) => `${n}:${headers[n]}\n`).join('')
  const creq = [method, path, qs, canonHeaders, names.join(';'), headers['x-amz-content-sha256']].join('\n')
  const scope = `${date8}/${region}/s3/aws4_request`
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(creq)].join('\n')
  let k = hmac('AWS4' + env.AWS_SECRET_ACCESS_KEY, date8)
  k = hmac(hmac(hmac(k, region), 's3'), 'aws4_request')
  const auth = `AWS4-HMAC-SHA256 Credential=${env.AWS_ACCESS_KEY_ID}/${scope}, SignedHeaders=${names.join(';')}, Signature=${hmac(k, sts).toString('hex')}`
  const res = await fetch(`${endpoint.origin}${path}${qs ? '?' + qs : ''}`, {
    method, headers: { ...headers, authorization: auth }, body: body || undefined,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text
}

const unxml = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&')

const [cmd, bucket, a, b] = process.argv.slice(2)
try {
  if (cmd === 'ls' && bucket) {
    const keys = []
    let token
    do {
      const q = { 'list-type': '2', prefix: a || '' }
      if (token) q['continuation-token'] = token
      const xml = await request('GET', bucket, '', q)
      for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(unxml(m[1]))
      const t = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml) && t ? unxml(t[1]) : undefined
    } while (token)
    keys.sort()
    for (const k of keys) console.log(k)
  } else if (cmd === 'put' && bucket && a && b) {
    await request('PUT', bucket, a, {}, readFileSync(b))
  } else if (cmd === 'put-tree' && bucket && a && b) {
    const files = readdirSync(b, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile()).map((d) => join(d.parentPath ?? d.path, d.name))
    let next = 0
    const worker = async () => {
      while (next < files.length) {
        const f = files[next++]
        await request('PUT', bucket, `${a.replace(/\/$/, '')}/${relative(b, f)}`, {}, readFileSync(f))
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
  } else {
    console.error('usage: s3_cli.mjs ls BUCKET [PREFIX] | put BUCKET KEY FILE | put-tree BUCKET PREFIX DIR')
    process.exit(2)
  }
} catch (e) {
  console.error(`s3_cli: ${e.message}`)
  process.exit(1)
}
