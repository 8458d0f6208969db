// MAVLink over WebSocket: mavswitchd's [WebSocketEndpoint] against the npm `ws` client, with
// node-mavlink on both sides. A ground station on a WebSocket hears a UDP vehicle, commands it
// and gets the acknowledgement; the endpoint's filter holds; signing is enforced on the link;
// another site's page is refused; with a TokenFile only the token opens it; and the link shows
// in the router's statistics.
// Usage: node websocket.mjs MAVSWITCHD
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import {
  MavLinkPacketSignature, MavLinkProtocolV2, common, minimal,
} from 'node-mavlink'
import WebSocket from 'ws'
import { decode, freePort, makeCertificate, parser, sleep, tally, until } from './support.mjs'

const [daemon] = process.argv.slice(2)
const t = tally()
const check = t.check

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-ws-'))
const keyPhrase = 'websocket signing'
const key = MavLinkPacketSignature.key(keyPhrase)
const keyFile = path.join(scratch, 'ws.key')
fs.writeFileSync(keyFile, Buffer.from(key).toString('hex') + '\n', { mode: 0o600 })
const tokenFile = path.join(scratch, 'token')
const token = 'websocket-test-token-0123456789'
fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 })

const vehiclePort = await freePort('udp')
const httpPort = await freePort('tcp')
const conf = path.join(scratch, 'main.conf')
const signedSection = `[WebSocketEndpoint signed]\nPath = /mavlink/signed\nSigningKeyFile = ${keyFile}\n`
function writeConf (extra) {
  fs.writeFileSync(conf, `[General]\nTcpServerPort = 0\n[Http]\nAddress = 127.0.0.1\nPort = ${httpPort}\n${extra.http || ''}` +
    `[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = ${vehiclePort}\n` +
    '[WebSocketEndpoint gcs]\nAllowMsgIdOut = 0,77\n' + (extra.websockets ?? signedSection))
}
function startDaemon (extra) {
  writeConf(extra)
  const d = spawn(daemon, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] })
  d.log = ''
  d.out = ''
  d.stderr.on('data', (b) => { d.log += b })
  d.stdout.on('data', (b) => { d.out += b })
  return d
}

// A vehicle (1/1): HEARTBEAT and ATTITUDE, and a COMMAND_ACK for every COMMAND_LONG.
const vehicle = dgram.createSocket('udp4')
await new Promise((resolve) => vehicle.bind(0, '127.0.0.1', resolve))
const fromVehicle = new MavLinkProtocolV2(1, 1)
let vseq = 0
const commands = []
const vsend = (m) => vehicle.send(fromVehicle.serialize(m, vseq++ & 255), vehiclePort, '127.0.0.1')
vehicle.on('message', parser((p) => {
  if (p.header.msgid !== common.CommandLong.MSG_ID) return
  const c = decode(p)
  commands.push({ command: c.command, signed: !!p.signature })
  const ack = new common.CommandAck()
  ack.command = c.command
  ack.targetSystem = p.header.sysid
  ack.targetComponent = p.header.compid
  vsend(ack)
}))
const heartbeat = new minimal.Heartbeat()
heartbeat.type = 2
heartbeat.autopilot = 3
// A second vehicle (2/1) on its own UDP socket: commands for vehicle 1 must never reach it.
const other = dgram.createSocket('udp4')
await new Promise((resolve) => other.bind(0, '127.0.0.1', resolve))
const fromOther = new MavLinkProtocolV2(2, 1)
const otherCommands = []
other.on('message', parser((p) => { if (p.header.msgid === common.CommandLong.MSG_ID) otherCommands.push(decode(p).command) }))
let vehicleBeats = 0
const vehicleTimer = setInterval(() => {
  vsend(heartbeat)
  vehicleBeats++
  vsend(new common.Attitude())
  other.send(fromOther.serialize(heartbeat, vseq & 255), vehiclePort, '127.0.0.1')
}, 50)

// Until the router lists vehicle 1 among the systems heard (a restarted router has not yet).
async function vehicleHeard (headers, origin = `http://127.0.0.1:${httpPort}`, ca = undefined) {
  const get = ca ? (url) => new Promise((resolve, reject) => https.get(url, { headers, ca }, (res) => {
    let body = ''
    res.on('data', (d) => { body += d })
    res.on('end', () => resolve(body))
  }).on('error', reject)) : async (url) => (await fetch(url, { headers })).text()
  return until(async () => {
    try { return (await get(`${origin}/api/v1/systems`)).includes('"system": 1,') } catch { return false }
  })
}

// A WebSocket ground station (255/190): what it hears, by message id.
function groundStation (url, options = {}) {
  const ws = new WebSocket(url, options)
  ws.binaryType = 'nodebuffer'
  ws.heard = []
  ws.refused = false
  ws.status = 0 // the HTTP status of a refusal
  ws.on('message', parser((p) => ws.heard.push({ id: p.header.msgid, sys: p.header.sysid, data: decode(p) })))
  ws.opened = new Promise((resolve) => {
    ws.on('open', () => resolve(true))
    ws.on('close', () => resolve(false))
    ws.on('error', () => { ws.refused = true; resolve(false) })
    // A refusal is an HTTP answer with its status line, not a hang-up.
    ws.on('unexpected-response', (request, response) => {
      ws.refused = true
      ws.status = response.statusCode
      request.destroy()
      resolve(false)
    })
  })
  return ws
}
const fromGcs = new MavLinkProtocolV2(255, 190)
const gcsSigned = new MavLinkProtocolV2(255, 190, MavLinkProtocolV2.IFLAG_SIGNED)
let gseq = 0
const commandLong = (id) => { const c = new common.CommandLong(); c.targetSystem = 1; c.targetComponent = 1; c.command = id; return c }

let router = startDaemon({})
try {
  const base = `ws://127.0.0.1:${httpPort}/mavlink`
  let gcs
  for (let i = 0; i < 50; i++) { gcs = groundStation(`${base}/gcs`); if (await gcs.opened) break; await sleep(100) }
  check(gcs.readyState === WebSocket.OPEN, 'a ground station opens the WebSocket (a program, no Origin)')
  gcs.send(fromGcs.serialize(heartbeat, gseq++ & 255))
  check(await until(() => gcs.heard.some((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 1)), 'it hears the vehicle')
  gcs.send(fromGcs.serialize(commandLong(400), gseq++ & 255))
  check(await until(() => gcs.heard.some((h) => h.id === common.CommandAck.MSG_ID && h.data.command === 400)),
    'its COMMAND_LONG reaches the vehicle and the COMMAND_ACK comes back')
  // The vehicle sends an ATTITUDE after each HEARTBEAT on one socket, and the router keeps a link's
  // order: once three more of its HEARTBEATs are here, the ATTITUDEs between them were not let through.
  const beats = () => gcs.heard.filter((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 1).length
  const beatsNow = beats()
  check(await until(() => beats() >= beatsNow + 3), 'the vehicle is still heard')
  check(!gcs.heard.some((h) => h.id === common.Attitude.MSG_ID), 'AllowMsgIdOut = 0,77: no ATTITUDE on this link')
  check(gcs.heard.some((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 2), 'it hears the second vehicle too')
  check(!otherCommands.includes(400), 'targeted: the command for vehicle 1 never reached vehicle 2')

  // Garbage from a client: counted and skipped; the link and everything else go on.
  gcs.send(Buffer.from('this is no MAVLink at all, \xfd\xfd\xfe garbage'.repeat(20)))
  gcs.send(fromGcs.serialize(commandLong(404), gseq++ & 255))
  check(await until(() => gcs.heard.some((h) => h.id === common.CommandAck.MSG_ID && h.data.command === 404)),
    'after garbage, the next command still goes through')
  const afterGarbage = (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/links`)).json()).links.find((l) => l.endpoint === 'gcs')
  check(afterGarbage && afterGarbage.skipped_bytes > 500, `the garbage is counted (${afterGarbage && afterGarbage.skipped_bytes} bytes skipped)`)

  // The signing endpoint: an unsigned command goes nowhere, a signed one reaches the vehicle.
  const signedGcs = groundStation(`${base}/signed`)
  check(await signedGcs.opened, 'a second endpoint at its own Path')
  signedGcs.send(fromGcs.serialize(commandLong(401), gseq++ & 255))
  signedGcs.send(gcsSigned.sign(gcsSigned.serialize(commandLong(402), gseq++ & 255), 9, key))
  check(await until(() => commands.some((c) => c.command === 402 && c.signed)), 'a signed command passes the signing link')
  // 401 went first on the same link: had it passed, it would have reached the vehicle before 402.
  check(!commands.some((c) => c.command === 401), 'an unsigned command from the signing link is dropped')

  // A client that stops reading fills only its own queue: the overflow is dropped and counted,
  // and the other WebSocket link still hears the vehicle.
  // The kernel's socket buffers take megabytes first: the vehicle floods until the queue overflows
  // (bounded: at most 40 bursts of 5,000 frames).
  signedGcs._socket.pause()
  const dropped = async () => {
    const l = (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/links`)).json()).links.find((x) => x.endpoint === 'signed')
    return l ? l.dropped.queue_full : 0
  }
  const attitude = new common.Attitude()
  let overflow = 0
  for (let burst = 0; burst < 40 && overflow === 0; burst++) {
    for (let i = 0; i < 5000; i++) vsend(attitude)
    overflow = await until(dropped, 100) // the router's count, once it has taken the burst
  }
  check(overflow > 0, `a stalled client's overflow is dropped and counted (${overflow})`)
  const before = gcs.heard.length
  check(await until(() => gcs.heard.length > before + 2), 'meanwhile the other client hears the vehicle')
  signedGcs._socket.resume()

  // Another site's page in the operator's browser: refused.
  const foreign = groundStation(`${base}/gcs`, { origin: 'http://attacker.example' })
  const nowhere = groundStation(`${base}/nothing-here`)
  check(!(await nowhere.opened) && nowhere.status === 404, `a path no endpoint serves: 404 (${nowhere.status})`)
  check(!(await foreign.opened) && foreign.status === 403, `a page of another origin is refused: 403 (${foreign.status})`)

  // The link is in the statistics.
  const links = await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/links`)).json()
  const wsLink = links.links.find((l) => l.endpoint === 'gcs' && l.kind === 'websocket')
  check(wsLink && wsLink.rx_frames >= 2 && wsLink.tx_frames >= 2, `the WebSocket link in /api/v1/links (${JSON.stringify(wsLink)})`)
  const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()
  check(metrics.includes('mavswitch_link_received_frames_total{endpoint="gcs",kind="websocket"}'), 'and in /metrics')

  // SIGUSR1: the WebSocket endpoints and their clients are in the statistics, as every link is.
  router.kill('SIGUSR1')
  check(await until(() => router.out.includes('websocket gcs /mavlink/gcs') &&
    /\n {4}127\.0\.0\.1:\d+: in [1-9]\d* frames/.test(router.out)), `SIGUSR1 lists the WebSocket links:\n${router.out}`)

  // SIGHUP: a WebSocket endpoint gone from the file closes and hangs up on its clients, a new one
  // opens, the unchanged one and its client are not touched.
  const signedClosed = new Promise((resolve) => signedGcs.on('close', () => resolve(true)))
  // The new one shapes its clients as any link is shaped: HEARTBEATs at most 2 a second a source.
  // It takes one client at a time (MaxClients = 1): a second is refused with 503, counted.
  writeConf({ websockets: '[WebSocketEndpoint late]\nPath = /mavlink/late\nRateLimitOut = HEARTBEAT:2\nMaxClients = 1\n' })
  router.kill('SIGHUP')
  check(await Promise.race([signedClosed, sleep(5000).then(() => false)]), 'SIGHUP: the removed endpoint\'s client is hung up')
  check(await until(() => router.log.includes('reload: 1 added, 1 removed, 0 changed')), `the reload says so:\n${router.log}`)
  const late = groundStation(`${base}/late`)
  check(await late.opened, 'the added endpoint takes clients')
  check(await until(() => late.heard.some((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 1)), 'and they hear the vehicle')
  const lateBeats = () => late.heard.filter((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 1).length
  const lateFrom = lateBeats()
  const sentFrom = vehicleBeats
  await until(() => vehicleBeats - sentFrom >= 40, 5000) // 2 s of the vehicle's HEARTBEATs, counted as sent
  const lateLink = (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/links`)).json()).links.find((l) => l.endpoint === 'late')
  check(lateBeats() - lateFrom <= 6 && lateLink && lateLink.dropped.rate_limited_out > 20,
    `RateLimitOut on a WebSocket endpoint: ${lateBeats() - lateFrom} HEARTBEATs in 2 s (${lateLink && lateLink.dropped.rate_limited_out} held back)`)
  const crowded = groundStation(`${base}/late`)
  check(!(await crowded.opened) && crowded.status === 503, `MaxClients = 1: a second client gets 503 (${crowded.status})`)
  router.out = ''
  router.kill('SIGUSR1')
  check(await until(() => router.out.includes('websocket late /mavlink/late (refused 1 clients: MaxClients reached)')),
    `SIGUSR1 counts the refusal:\n${router.out}`)
  check(router.log.includes('refused: MaxClients reached'), 'and the log says it')
  const gone = groundStation(`${base}/signed`)
  check(!(await gone.opened) && gone.status === 404, `the removed one's path is a 404 (${gone.status})`)
  const beatsBefore = beats()
  check(gcs.readyState === WebSocket.OPEN && await until(() => beats() > beatsBefore), 'the unchanged endpoint\'s client stays and hears')
  late.close()
  gcs.close()
  signedGcs.close()

  // With a TokenFile: no token, no link; the token (as a browser gives it, in the URL) opens it.
  router.kill('SIGTERM')
  await new Promise((resolve) => router.on('exit', resolve))
  router = startDaemon({ http: `TokenFile = ${tokenFile}\n` })
  const up = async () => { try { return (await fetch(`http://127.0.0.1:${httpPort}/api/v1`)).ok } catch { return false } }
  for (let i = 0; i < 50 && !(await up()); i++) await sleep(100)
  const locked = groundStation(`${base}/gcs`)
  check(!(await locked.opened) && locked.status === 401, `with a TokenFile, no token: 401 (${locked.status})`)
  const withToken = groundStation(`${base}/gcs?token=${token}`)
  check(await withToken.opened, 'with the token: open')
  // The restarted router routes a command only to a vehicle it has heard (an unknown target is
  // dropped, counted): on a busy machine the first heartbeat can come after the socket opens.
  check(await vehicleHeard({ Authorization: `Bearer ${token}` }), 'the restarted router has heard the vehicle')
  withToken.send(fromGcs.serialize(commandLong(403), gseq++ & 255))
  check(await until(() => withToken.heard.some((h) => h.id === common.CommandAck.MSG_ID && h.data.command === 403)),
    'and it commands the vehicle')
  withToken.close()

  // Through the API (with the token): a WebSocket endpoint opened at run time takes clients and is
  // listed; closed, its clients are hung up.
  const api = (method, p, body) => fetch(`http://127.0.0.1:${httpPort}${p}`,
    { method, body, headers: { Authorization: `Bearer ${token}` } })
  const added = await api('POST', '/api/v1/endpoints', '[WebSocketEndpoint live]\nPath = /mavlink/live\n')
  check(added.status === 201, `POST opens a WebSocket endpoint (${added.status} ${await added.text()})`)
  const listed = await (await api('GET', '/api/v1/endpoints')).json()
  check(listed.endpoints.some((e) => e.name === 'live' && e.kind === 'websocket'), 'it is listed')
  const twice = await api('POST', '/api/v1/endpoints', '[WebSocketEndpoint live]\n')
  check(twice.status === 409, `the same name again: 409 (${twice.status})`)
  const live = groundStation(`${base}/live?token=${token}`)
  check(await live.opened, 'its path takes clients')
  check(await until(() => live.heard.some((h) => h.id === minimal.Heartbeat.MSG_ID && h.sys === 1)), 'they hear the vehicle')
  const liveClosed = new Promise((resolve) => live.on('close', () => resolve(true)))
  const removed = await api('DELETE', '/api/v1/endpoints/live')
  check(removed.status === 200, `DELETE closes it (${removed.status})`)
  check(await Promise.race([liveClosed, sleep(5000).then(() => false)]), 'and hangs up on its client')

  // With a Certificate: wss:// only (libwebsockets on OpenSSL), the certificate checked.
  const certificate = makeCertificate(scratch)
  if (!certificate) {
    console.log('SKIP wss: no openssl (Debian\'s openssl package) to make a certificate')
  } else {
    const { pem, cert } = certificate
    router.kill('SIGTERM')
    await new Promise((resolve) => router.on('exit', resolve))
    router = startDaemon({ http: `TokenFile = ${tokenFile}\nCertificate = ${pem}\n` })
    const ca = fs.readFileSync(cert)
    const wss = `wss://127.0.0.1:${httpPort}/mavlink/gcs?token=${token}`
    let secure
    for (let i = 0; i < 50; i++) { secure = groundStation(wss, { ca }); if (await secure.opened) break; await sleep(100) }
    check(secure.readyState === WebSocket.OPEN, 'with a Certificate: wss:// opens, the certificate checked')
    check(await vehicleHeard({ Authorization: `Bearer ${token}` }, `https://127.0.0.1:${httpPort}`, ca),
      'the restarted router has heard the vehicle')
    secure.send(fromGcs.serialize(commandLong(405), gseq++ & 255))
    check(await until(() => secure.heard.some((h) => h.id === common.CommandAck.MSG_ID && h.data.command === 405)),
      'and it commands the vehicle over TLS')
    secure.close()
    const unchecked = groundStation(wss)
    check(!(await unchecked.opened), 'a client that cannot check the certificate does not connect')
    const plain = groundStation(`${base}/gcs?token=${token}`)
    check(!(await plain.opened), 'plain ws:// gets nothing')
  }
} finally {
  clearInterval(vehicleTimer)
  vehicle.close()
  other.close()
  router.kill('SIGTERM')
  fs.rmSync(scratch, { recursive: true, force: true })
}
if (t.failed) console.log(router.log)
t.done('websocket')
