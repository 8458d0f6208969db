// What the node tests share: a tally of checks, free ports on loopback, bounded waits, and
// node-mavlink's parser over bytes that arrive in pieces.
import { spawn, spawnSync } from 'node:child_process'
import dgram from 'node:dgram'
import { appendFileSync, readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { Readable } from 'node:stream'
import { MavLinkPacketParser, MavLinkPacketSplitter, common, minimal } from 'node-mavlink'

// check(ok, what) counts, and says what failed; done(name) prints "N passed, N failed" and exits.
export function tally () {
  let passed = 0
  let failed = 0
  return {
    check (ok, what) { if (ok) passed++; else { failed++; console.log('FAIL', what) } },
    get failed () { return failed },
    done (name) {
      console.log(`${name}: ${passed} passed, ${failed} failed`)
      process.exit(failed ? 1 : 0)
    },
  }
}

// Whether 127.0.0.1:port can be bound now for 'udp' or 'tcp'.
const bindable = (kind, port) => new Promise((resolve) => {
  const s = kind === 'udp' ? dgram.createSocket('udp4') : net.createServer()
  s.once('error', () => resolve(false))
  const close = () => s.close(() => resolve(true))
  if (kind === 'udp') s.bind(port, '127.0.0.1', close)
  else s.listen(port, '127.0.0.1', close)
})

// Ports are chosen below the kernel's ephemeral range, so a socket another peer binds to port 0
// cannot take one before the router binds it; none is handed out twice.
const given = new Set()
const ephemeralStart = () => {
  try { return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) } catch { return 32768 }
}

// A port free now for both UDP and TCP (the argument, 'udp' or 'tcp', says what it is for).
export const freePort = async (kind) => {
  const high = ephemeralStart() - 1
  const low = Math.floor((high + 1) / 2)
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1))
    if (given.has(port) || !(await bindable('udp', port)) || !(await bindable('tcp', port))) continue
    given.add(port)
    return port
  }
  throw new Error(`no free ${kind} port below the ephemeral range after 1000 tries`)
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Until pred() (sync or async) is truthy, looked at every `every` ms, for at most `ms`; its last value.
export const until = async (pred, ms = 10000, every = 20) => {
  const end = Date.now() + ms
  for (;;) {
    const v = await pred()
    if (v || Date.now() > end) return v
    await sleep(every)
  }
}

// Bytes pushed into the returned function come out as node-mavlink packets, one per onPacket.
export const parser = (onPacket) => {
  const input = new Readable({ read () {} })
  input.pipe(new MavLinkPacketSplitter()).pipe(new MavLinkPacketParser()).on('data', onPacket)
  return (bytes) => input.push(bytes)
}

const REGISTRY = { ...minimal.REGISTRY, ...common.REGISTRY }
// A packet's fields (common dialect), or null for a message it does not know.
export const decode = (p) => { const c = REGISTRY[p.header.msgid]; return c ? p.protocol.data(p.payload, c) : null }

// A self-signed certificate for 127.0.0.1 in `dir` (openssl, Debian's): { pem (its chain and key,
// a router's Certificate), cert (what a client trusts) }, or null without openssl.
export function makeCertificate (dir) {
  const pem = path.join(dir, 'server.pem')
  const cert = path.join(dir, 'cert.pem')
  const openssl = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', pem, '-out', cert])
  if (openssl.status !== 0) return null
  appendFileSync(pem, readFileSync(cert))
  return { pem, cert }
}

// Exits 77 (skipped) saying why, for the first of `needs` ([missing, why]) that is missing.
export function skipUnless (needs) {
  for (const [missing, why] of needs) {
    if (missing) {
      console.log('SKIP: ' + why)
      process.exit(77)
    }
  }
}

// The programs a test starts (SITL, routers, servers): their output dropped, all stopped with
// SIGTERM at the end, newest first, and waited for.
export function processes () {
  const children = []
  return {
    start (program, args, env = {}) {
      const c = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } })
      c.stderr.on('data', () => {})
      children.push(c)
      return c
    },
    async stop () {
      for (const c of [...children].reverse()) c.kill('SIGTERM')
      await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((resolve) => c.on('exit', resolve)))))
    },
  }
}
