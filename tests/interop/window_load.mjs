// The operator's window under load, with the npm `ws` client: 1,000 WebSocket ground stations on
// one router, each hearing the vehicle, cost no thread each (the daemon's thread count is the
// same idle and with them; RSS per client is printed); a client that stops reading fills only
// its own queue. Then 2,000 slowloris HTTP connections, and (with a Certificate) 1,000 TLS
// connections that never finish their handshake: routing goes on, /metrics answers a
// well-behaved client within a second, and the slow connections are timed out.
// Usage: node window_load.mjs MAVSWITCHD          (CLIENTS=N for another count)
import { spawn, spawnSync } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { MavLinkProtocolV2, common, minimal } from 'node-mavlink'
import WebSocket from 'ws'
import { freePort, makeCertificate, sleep, tally, until } from './support.mjs'

const [daemon] = process.argv.slice(2)
const clients = Number(process.env.CLIENTS || 1000)
// Some 3,000 sockets at once: this process's descriptor limit must allow them (node cannot raise it).
const limit = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim())
if (limit < 4096) {
  console.log(`SKIP: the descriptor limit is ${limit}; this test needs 4096 (ulimit -n 4096)`)
  process.exit(77)
}
const t = tally()
const check = t.check
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-load-'))
const udpPort = await freePort('udp')
const httpPort = await freePort('tcp')

function startDaemon (http = '') {
  const conf = path.join(scratch, 'main.conf')
  fs.writeFileSync(conf, `[General]\nTcpServerPort = 0\n[Http]\nAddress = 127.0.0.1\nPort = ${httpPort}\n${http}` +
    `[UdpEndpoint peers]\nMode = Server\nAddress = 127.0.0.1\nPort = ${udpPort}\n` +
    `[WebSocketEndpoint gcs]\n${process.env.MAX_CLIENTS ? `MaxClients = ${process.env.MAX_CLIENTS}\n` : ''}`)
  const d = spawn(daemon, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  d.log = ''
  d.stderr.on('data', (b) => { d.log += b })
  d.exited = new Promise((resolve) => d.on('exit', resolve))
  return d
}
const status = (pid) => {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return { threads: Number(/Threads:\s+(\d+)/.exec(text)[1]), rssKiB: Number(/VmRSS:\s+(\d+)/.exec(text)[1]) }
}
// Its status once the RSS has held still for five looks in a row (100 ms), 5 s at most.
const settled = async (pid) => {
  let last = null
  let still = 0
  return until(() => {
    const now = status(pid)
    still = last && now.rssKiB === last.rssKiB && now.threads === last.threads ? still + 1 : 0
    last = now
    return still >= 5 && now
  }, 5000).then((s) => s || last)
}

// The vehicle (1/1) and a UDP ground station (255/190) on the router's UDP server.
const vehicle = dgram.createSocket('udp4')
await new Promise((resolve) => vehicle.bind(0, '127.0.0.1', resolve))
const fromVehicle = new MavLinkProtocolV2(1, 1)
let vseq = 0
const vsend = (m) => vehicle.send(fromVehicle.serialize(m, vseq++ & 255), udpPort, '127.0.0.1')
const heartbeat = new minimal.Heartbeat()
heartbeat.type = 2
heartbeat.autopilot = 3
const vehicleTimer = setInterval(() => vsend(heartbeat), 50)
const udpGcs = dgram.createSocket('udp4')
await new Promise((resolve) => udpGcs.bind(0, '127.0.0.1', resolve))
udpGcs.heard = 0
udpGcs.on('message', () => { udpGcs.heard++ })
const gcsHello = () => udpGcs.send(new MavLinkProtocolV2(255, 190).serialize(heartbeat, 0), udpPort, '127.0.0.1')
// A HEARTBEAT a second, as a real ground station sends: the UDP server forgets a peer silent for
// 30 s, and a run under ThreadSanitizer on a busy machine outlasts that.
const gcsTimer = setInterval(gcsHello, 1000)
// Routing goes on: the UDP ground station hears the vehicle (a HEARTBEAT every 50 ms) within 3 s,
// a bound a busy machine running this under ThreadSanitizer meets.
const routing = async () => { const before = udpGcs.heard; return until(() => udpGcs.heard > before, 3000) }

// /metrics for a well-behaved client: its status and how long it took, in ms.
async function probe (ca) {
  const start = Date.now()
  try {
    if (ca) {
      const code = await new Promise((resolve, reject) => {
        const req = https.get(`https://127.0.0.1:${httpPort}/metrics`, { ca, timeout: 5000 }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode))
        })
        req.on('error', reject)
        req.on('timeout', () => req.destroy(new Error('timeout')))
      })
      return { code, ms: Date.now() - start }
    }
    const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { signal: AbortSignal.timeout(5000) })
    await res.text()
    return { code: res.status, ms: Date.now() - start }
  } catch (e) {
    return { code: 0, ms: Date.now() - start, error: e.message }
  }
}
// A second in a release build. A sanitized build (MAVSWITCH_SANITIZED, set by CMake) runs several
// times slower on a busy machine and is here for races and memory, so it gets three.
const bound = process.env.MAVSWITCH_SANITIZED ? 3000 : 1000
async function probes (ca, what) {
  const got = []
  for (let i = 0; i < 16; i++) got.push(await probe(ca))
  const slowest = Math.max(...got.map((p) => p.ms))
  check(got.every((p) => p.code === 200) && slowest < bound,
    `${what}: /metrics answers 16 of 16 within ${bound} ms (slowest ${slowest} ms; ${JSON.stringify(got.filter((p) => p.code !== 200))})`)
}

// Connections that each open and then say too little: `hello` once, then `drip` every second.
async function slowCrowd (n, hello, drip) {
  const crowd = []
  for (let i = 0; i < n; i++) {
    const s = net.connect(httpPort, '127.0.0.1')
    s.closedByServer = false
    s.on('error', () => {})
    s.on('close', () => { s.closedByServer = true })
    s.on('connect', () => { if (hello) s.write(hello) })
    crowd.push(s)
    if (i % 200 === 199) await until(() => crowd.every((c) => !c.connecting || c.closedByServer), 5000) // a batch the listen queue takes
  }
  await until(() => crowd.every((c) => !c.connecting || c.closedByServer), 5000)
  const timer = drip ? setInterval(() => crowd.forEach((s) => { if (!s.closedByServer) s.write(drip) }), 1000) : null
  return { crowd, stop: () => { if (timer) clearInterval(timer); crowd.forEach((s) => s.destroy()) } }
}

let router = startDaemon()
try {
  check(await until(async () => (await probe()).code === 200), 'the router answers')
  gcsHello()
  check(await until(() => udpGcs.heard > 0), 'the UDP ground station hears the vehicle')
  const idle = await settled(router.pid)

  // Ground stations, in batches so that the listen queue takes them.
  const stations = []
  for (let i = 0; i < clients; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/mavlink/gcs`)
    ws.binaryType = 'nodebuffer'
    ws.heard = 0
    ws.on('message', () => { ws.heard++ })
    ws.on('error', () => {})
    stations.push(ws)
    if (i % 100 === 99) await until(() => stations.every((w) => w.readyState !== WebSocket.CONNECTING), 10000) // a batch at a time
  }
  const allHear = await until(() => stations.every((w) => w.heard > 0), 30000)
  check(allHear, `${clients} WebSocket clients each hear the vehicle (${stations.filter((w) => w.heard > 0).length} do)`)
  const loaded = await settled(router.pid)
  const perClient = ((loaded.rssKiB - idle.rssKiB) * 1024) / clients
  console.log(`threads idle ${idle.threads}, with ${clients} WebSocket clients ${loaded.threads}; ` +
    `RSS idle ${idle.rssKiB} KiB, with them ${loaded.rssKiB} KiB: ${Math.round(perClient)} B a client`)
  check(loaded.threads === idle.threads, `the thread count does not grow with the clients (${idle.threads} -> ${loaded.threads})`)
  check(await routing(), 'routing goes on with them')

  // One client stops reading; the vehicle floods. Its queue overflows (dropped, counted); every
  // other client still hears the vehicle.
  const stalled = stations[0]
  stalled._socket.pause()
  const stalledPeer = `127.0.0.1:${stalled._socket.localPort}`
  const links = async () => (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/links`)).json()).links
  const queueFull = async () => {
    const link = (await links()).find((l) => l.endpoint === 'gcs' && l.peer === stalledPeer)
    return link ? link.dropped.queue_full : 0
  }
  const attitude = new common.Attitude()
  let dropped = 0
  for (let burst = 0; burst < 40 && dropped === 0; burst++) {
    for (let i = 0; i < 2000; i++) vsend(attitude)
    dropped = await until(queueFull, 200) // the router's count, once it has taken the burst
  }
  check(dropped > 0, `the client that stopped reading overflows its own queue (${dropped} dropped)`)
  const marks = stations.map((w) => w.heard)
  check(await until(() => stations.every((w, i) => i === 0 || w.heard > marks[i] + 2), 10000),
    'every other client goes on hearing the vehicle')
  stations.forEach((w) => w.terminate())
  check(await until(async () => (await links()).every((l) => l.endpoint !== 'gcs'), 10000), 'the clients gone, their links are gone')

  // 2,000 slowloris connections: a request line and then a header line a second, never the end.
  const slow = await slowCrowd(2000, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n')
  await probes(undefined, 'with 2,000 slowloris connections')
  check(await routing(), 'routing goes on under them')
  check(await until(() => slow.crowd.every((s) => s.closedByServer), 15000),
    `the slow connections are timed out (${slow.crowd.filter((s) => s.closedByServer).length} of 2000)`)
  slow.stop()

  // 1,000 TLS connections that never finish their handshake (with a Certificate).
  const certificate = makeCertificate(scratch)
  if (!certificate) {
    console.log('SKIP TLS: no openssl (Debian\'s openssl package) to make a certificate')
  } else {
    const { pem, cert } = certificate
    router.kill('SIGTERM')
    await router.exited
    router = startDaemon(`Certificate = ${pem}\n`)
    const ca = fs.readFileSync(cert)
    check(await until(async () => (await probe(ca)).code === 200), 'the router answers over TLS')
    gcsHello()
    // A TLS record header that announces a ClientHello and never sends it.
    const stuck = await slowCrowd(1000, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), null)
    await probes(ca, 'with 1,000 TLS handshakes stuck')
    check(await routing(), 'routing goes on under them')
    check(await until(() => stuck.crowd.every((s) => s.closedByServer), 15000),
      `the stuck handshakes are timed out (${stuck.crowd.filter((s) => s.closedByServer).length} of 1000)`)
    stuck.stop()
  }
  check(router.exitCode === null, 'the router runs on')
} finally {
  clearInterval(vehicleTimer)
  clearInterval(gcsTimer)
  router.kill('SIGTERM')
  const code = await Promise.race([router.exited, sleep(5000).then(() => 'hung')])
  check(code === 0, `the router stops cleanly (${code})`)
  if (t.failed) console.log(router.log.slice(-3000))
  vehicle.close()
  udpGcs.close()
  fs.rmSync(scratch, { recursive: true, force: true })
}
t.done('window load')
