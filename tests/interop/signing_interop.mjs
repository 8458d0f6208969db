// MAVLink 2 signing between mavswitchd and node-mavlink, configured as a user would:
//  - frames node-mavlink signs pass our verification and go on byte for byte;
//  - frames we sign (a command to the vehicle) pass node-mavlink's verification, also those the
//    vehicle data API sends (mavlink2rest's POST /v1/mavlink);
//  - a tampered or replayed frame is rejected, also after a restart (persisted state).
// Usage: node signing_interop.mjs MAVSWITCHD
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import dgram from 'node:dgram'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { MavLinkPacketParser, MavLinkPacketSignature, MavLinkPacketSplitter, MavLinkProtocolV2, minimal, common } from 'node-mavlink'
import { freePort } from './support.mjs'

const [daemon] = process.argv.slice(2)
let passed = 0
let failed = 0
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log('FAIL', what) } }
const until = (pred, ms) => new Promise((resolve) => {
  const start = Date.now()
  const poll = () => (pred() ? resolve(true) : Date.now() - start > ms ? resolve(false) : setTimeout(poll, 20))
  poll()
})

const passphrase = 'mavswitch signing interop'
const key = MavLinkPacketSignature.key(passphrase)  // SHA-256 of the passphrase, as Mission Planner does
const work = mkdtempSync(join(tmpdir(), 'mavswitch-signing-'))
const keyFile = join(work, 'vehicle.key')
writeFileSync(keyFile, createHash('sha256').update(passphrase).digest('hex') + '\n')
chmodSync(keyFile, 0o600)

const socket = () => new Promise((resolve) => { const s = dgram.createSocket('udp4'); s.bind(0, '127.0.0.1', () => resolve(s)) })
const securePort = await freePort('udp')
const plainPort = await freePort('udp')
const httpPort = await freePort('tcp')
writeFileSync(join(work, 'main.conf'), `[General]
TcpServerPort = 0
SigningStateFile = ${join(work, 'signing.state')}

[Http]
Address = 127.0.0.1
Port = ${httpPort}

[UdpEndpoint vehicle]
Mode = Server
Address = 127.0.0.1
Port = ${securePort}
SigningKeyFile = ${keyFile}
Signing = both
SigningLinkId = 5

[UdpEndpoint gcs]
Mode = Server
Address = 127.0.0.1
Port = ${plainPort}
`)
let log = ''
const start = () => {
  const p = spawn(daemon, ['-c', join(work, 'main.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  p.stderr.on('data', (d) => { log += d })
  return p
}
const stop = (p) => new Promise((resolve) => { p.on('exit', resolve); p.kill('SIGTERM') })
// Waits on what the router says, not on time (a sanitizer build starts slowly): its nth start,
// and its nth sight of the ground station as a peer.
const count = (re) => (log.match(re) || []).length
const started = (n) => until(() => count(/routing with/g) >= n, 10000)
const gcsKnown = (n) => until(() => count(/udp-server gcs [^\n]*new peer/g) >= n, 5000)

// Packets a socket receives, parsed by node-mavlink.
const listen = (s) => {
  const packets = []
  s.on('message', (bytes) => {
    const input = new Readable({ read() {} })
    input.pipe(new MavLinkPacketSplitter()).pipe(new MavLinkPacketParser()).on('data', (p) => packets.push(p))
    input.push(bytes)
    input.push(null)
  })
  return packets
}

const vehicle = await socket()
const gcs = await socket()
const atVehicle = listen(vehicle)
const atGcs = listen(gcs)
const signer = new MavLinkProtocolV2(1, 1, MavLinkProtocolV2.IFLAG_SIGNED)
let seq = 0
let clock = Date.now()
const signedHeartbeat = (customMode) => {
  const hb = new minimal.Heartbeat()
  hb.type = 2
  hb.autopilot = 3
  hb.customMode = customMode
  clock += 1  // node-mavlink timestamps have 1 ms resolution: keep them strictly increasing
  return signer.sign(signer.serialize(hb, seq++ & 255), 1, key, clock)
}
const heardAtGcs = (customMode) => atGcs.some((p) => p.header.msgid === 0 && p.header.sysid === 1 &&
  p.protocol.data(p.payload, minimal.Heartbeat).customMode === customMode)

let router = start()
check(await started(1), 'the router starts')
gcs.send(new MavLinkProtocolV2(255, 190).serialize(new minimal.Heartbeat(), 0), plainPort, '127.0.0.1')
check(await gcsKnown(1), 'the ground station is a peer')

const first = signedHeartbeat(1)
vehicle.send(first, securePort, '127.0.0.1')
check(await until(() => heardAtGcs(1), 3000), 'a frame node-mavlink signed passes verification')
const forwarded = atGcs.find((p) => p.header.sysid === 1)
check(forwarded?.signature?.matches(key) === true, 'it reaches the ground station with its signature intact')

const tampered = Buffer.from(signedHeartbeat(2))
tampered[tampered.length - 1] ^= 0xff
vehicle.send(tampered, securePort, '127.0.0.1')
vehicle.send(first, securePort, '127.0.0.1')  // replay
vehicle.send(new MavLinkProtocolV2(1, 1).serialize(new minimal.Heartbeat(), 9), securePort, '127.0.0.1')  // unsigned
vehicle.send(signedHeartbeat(3), securePort, '127.0.0.1')
check(await until(() => heardAtGcs(3), 3000), 'a later valid frame passes')
check(!heardAtGcs(2), 'the tampered frame is rejected')
check(atGcs.filter((p) => p.header.sysid === 1).length === 2, 'the replayed and the unsigned frames are rejected')

// The ground station commands the vehicle: the router signs it for the vehicle's link.
const cmd = new common.CommandLong()
cmd.targetSystem = 1
cmd.targetComponent = 1
cmd.command = 400
gcs.send(new MavLinkProtocolV2(255, 190).serialize(cmd, 1), plainPort, '127.0.0.1')
check(await until(() => atVehicle.some((p) => p.header.msgid === common.CommandLong.MSG_ID), 3000), 'the command reaches the vehicle')
const command = atVehicle.find((p) => p.header.msgid === common.CommandLong.MSG_ID)
check(command?.signature?.matches(key) === true, 'node-mavlink verifies the signature mavswitch made')
check(command?.signature?.linkId === 5, 'with the configured link id')
const before = command?.signature?.timestamp ?? 0

// The same command through mavlink2rest's API (its README's arm example): the API's frame is
// signed for the vehicle's link as any other.
atVehicle.length = 0
const posted = await fetch(`http://127.0.0.1:${httpPort}/v1/mavlink`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    header: { system_id: 255, component_id: 240, sequence: 0 },
    message: {
      type: 'COMMAND_LONG', param1: 1.0, param2: 0.0, param3: 0.0, param4: 0.0, param5: 0.0, param6: 0.0, param7: 0.0,
      command: { type: 'MAV_CMD_COMPONENT_ARM_DISARM' }, target_system: 1, target_component: 1, confirmation: 1
    }
  })
}).then((r) => r.status).catch((e) => String(e))
check(posted === 200, `the API takes the command (${posted})`)
check(await until(() => atVehicle.some((p) => p.header.msgid === common.CommandLong.MSG_ID), 3000), 'the API\'s command reaches the vehicle')
const fromApi = atVehicle.find((p) => p.header.msgid === common.CommandLong.MSG_ID)
check(fromApi?.header.sysid === 255 && fromApi?.header.compid === 240, 'as from the header the API was given')
check(fromApi?.signature?.matches(key) === true && fromApi?.signature?.linkId === 5,
  'node-mavlink verifies the signature mavswitch made for the API\'s frame')

// Restart: the replay table and the clock survive it.
await stop(router)
router = start()
check(await started(2), 'the router starts again')
gcs.send(new MavLinkProtocolV2(255, 190).serialize(new minimal.Heartbeat(), 2), plainPort, '127.0.0.1')
check(await gcsKnown(2), 'the ground station is a peer again')
atGcs.length = 0
vehicle.send(first, securePort, '127.0.0.1')  // replayed across the restart
vehicle.send(signedHeartbeat(4), securePort, '127.0.0.1')
check(await until(() => heardAtGcs(4), 3000), 'after a restart a fresh frame passes')
check(!heardAtGcs(1), 'after a restart the old frame is still a replay')
atVehicle.length = 0
gcs.send(new MavLinkProtocolV2(255, 190).serialize(cmd, 3), plainPort, '127.0.0.1')
check(await until(() => atVehicle.some((p) => p.header.msgid === common.CommandLong.MSG_ID), 3000), 'commands flow after the restart')
const after = atVehicle.find((p) => p.header.msgid === common.CommandLong.MSG_ID)?.signature?.timestamp ?? 0
check(after > before, `our signing clock went forward across the restart (${before} -> ${after})`)

await stop(router)
vehicle.close()
gcs.close()
rmSync(work, { recursive: true, force: true })
if (failed) console.log(log)
console.log(`signing_interop: ${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
