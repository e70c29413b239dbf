#!/usr/bin/env node
// s3rver_start.mjs - start s3rver (an S3 server from npm, test oracle only) on loopback with
// a random port and a temporary folder, for floe's S3 tests.
//
//   node s3rver_start.mjs [--port 0] [--bucket NAME]... [--dir PATH] [--lifeline]
//
// Prints {"port": N, "dir": PATH} when listening. s3rver accepts the access key "S3RVER"
// with secret "S3RVER" and checks no V4 signatures (s3_sigcheck_server.mjs does). Stops on
// SIGTERM, or when stdin closes with --lifeline, and removes its folder unless --dir was
// given.

import { spawn } from 'node:child_process'
import { createCipheriv } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its
// legacy provider: without it every second page is a 500. Run again with the provider.
let desOk = true
try { createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8)) } catch { desOk = false }
if (!desOk && !process.execArgv.includes('--openssl-legacy-provider')) {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' })
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => child.kill(sig))
  child.on('exit', (code) => process.exit(code ?? 1))
} else {
  await main()
}

async function main() {
const { default: S3rver } = await import('s3rver')

const args = process.argv.slice(2)
let port = 0, dir = null, lifeline = false
const buckets = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--port') port = Number(args[++i])
  else if (args[i] === '--bucket') buckets.push(args[++i])
  else if (args[i] === '--dir') dir = args[++i]
  else if (args[i] === '--lifeline') lifeline = true
  else { console.error(`unknown argument ${args[i]}`); process.exit(2) }
}
const ownDir = !dir
if (!dir) dir = mkdtempSync(join(tmpdir(), 'floe-s3rver-'))

const server = new S3rver({
  address: '127.0.0.1',
  port,
  silent: true,
  directory: dir,
  configureBuckets: buckets.map((name) => ({ name })),
})
const addr = await server.run()
process.stdout.write(JSON.stringify({ port: addr.port, dir }) + '\n')

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  // s3rver's close waits for idle keep-alive sockets: give it a moment, no more
  setTimeout(() => { if (ownDir) rmSync(dir, { recursive: true, force: true }); process.exit(0) }, 300)
  try { await server.close() } catch {}
  if (ownDir) rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
if (lifeline) {
  process.stdin.on('end', stop)
  process.stdin.resume()
}
}
