// mavswitchd between two node-mavlink peers: a vehicle on UDP and a ground station on TCP.
// The GCS sees the vehicle's heartbeat, sends COMMAND_LONG (plain, then signed) and gets the
// COMMAND_ACKs; the vehicle verifies the signed command's signature (forwarded byte for byte).
// Usage: node router_interop.mjs MAVSWITCHD
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import net from 'node:net'
import { Readable } from 'node:stream'
import {
  MavLinkPacketParser, MavLinkPacketSignature, MavLinkPacketSplitter, MavLinkProtocolV2, minimal, common,
} from 'node-mavlink'
import { freePort, tally } from './support.mjs'

const [daemon] = process.argv.slice(2)
const REGISTRY = { ...minimal.REGISTRY, ...common.REGISTRY }
const key = MavLinkPacketSignature.key('router interop')
const t = tally()
const check = t.check

const decode = (packet) => {
  const clazz = REGISTRY[packet.header.msgid]
  return clazz ? packet.protocol.data(packet.payload, clazz) : null
}
// Parses a byte stream (or datagrams) into node-mavlink packets.
const parser = (onPacket) => {
  const input = new Readable({ read() {} })
  input.pipe(new MavLinkPacketSplitter()).pipe(new MavLinkPacketParser()).on('data', onPacket)
  return (bytes) => input.push(bytes)
}

const udpPort = await freePort('udp')
const tcpPort = await freePort('tcp')
const router = spawn(daemon, ['-t', String(tcpPort), '--http=0', `127.0.0.1:${udpPort}`], { stdio: ['ignore', 'ignore', 'pipe'] })
let routerLog = ''
router.stderr.on('data', (d) => { routerLog += d })

// --- the vehicle: system 1, component 1, on UDP -------------------------------------------
const vehicle = dgram.createSocket('udp4')
const vehicleProtocol = new MavLinkProtocolV2(1, 1)
let vehicleSeq = 0
const vehicleSend = (msg) => vehicle.send(vehicleProtocol.serialize(msg, vehicleSeq++ & 255), udpPort, '127.0.0.1')
let signedCommandVerified = false
vehicle.on('message', parser((packet) => {
  const data = decode(packet)
  if (packet.header.msgid !== common.CommandLong.MSG_ID) return
  if (packet.signature) signedCommandVerified = packet.signature.matches(key)
  const ack = new common.CommandAck()
  ack.command = data.command
  ack.result = 0
  ack.targetSystem = packet.header.sysid
  ack.targetComponent = packet.header.compid
  vehicleSend(ack)
}))
vehicle.bind(0, '127.0.0.1')
const heartbeat = () => {
  const hb = new minimal.Heartbeat()
  hb.type = 2
  hb.autopilot = 3
  hb.mavlinkVersion = 3
  return hb
}
const vehicleTimer = setInterval(() => vehicleSend(heartbeat()), 100)

// --- the ground station: system 255, component 190, on TCP --------------------------------
const acks = []
let sawVehicle = false
const gcsProtocol = new MavLinkProtocolV2(255, 190)
const gcsSigned = new MavLinkProtocolV2(255, 190, MavLinkProtocolV2.IFLAG_SIGNED)
let gcsSeq = 0
const connectGcs = () => new Promise((resolve) => {
  const attempt = (left) => {
    const s = net.connect(tcpPort, '127.0.0.1', () => resolve(s))
    s.on('error', () => { if (left > 0) setTimeout(() => attempt(left - 1), 100); else resolve(null) })
  }
  attempt(50)
})
const gcs = await connectGcs()
check(gcs !== null, 'GCS connects to the TCP server')
gcs?.on('data', parser((packet) => {
  if (packet.header.msgid === minimal.Heartbeat.MSG_ID && packet.header.sysid === 1) sawVehicle = true
  if (packet.header.msgid === common.CommandAck.MSG_ID) acks.push(decode(packet))
}))
const command = (id) => {
  const c = new common.CommandLong()
  c.targetSystem = 1
  c.targetComponent = 1
  c.command = id
  return c
}
const gcsTimer = setInterval(() => gcs?.write(gcsProtocol.serialize(heartbeat(), gcsSeq++ & 255)), 100)

const until = (pred, ms) => new Promise((resolve) => {
  const start = Date.now()
  const poll = () => (pred() ? resolve(true) : Date.now() - start > ms ? resolve(false) : setTimeout(poll, 20))
  poll()
})

check(await until(() => sawVehicle, 5000), 'the GCS hears the vehicle heartbeat through the router')
// The vehicle learns of the GCS from its heartbeats; give the route a moment to exist.
await until(() => false, 300)
gcs?.write(gcsProtocol.serialize(command(400), gcsSeq++ & 255))
check(await until(() => acks.some(a => a.command === 400), 5000), 'COMMAND_ACK for the plain COMMAND_LONG')
gcs?.write(gcsSigned.sign(gcsSigned.serialize(command(246), gcsSeq++ & 255), 7, key))
check(await until(() => acks.some(a => a.command === 246), 5000), 'COMMAND_ACK for the signed COMMAND_LONG')
check(signedCommandVerified, 'the signed command reached the vehicle with a valid signature')
check(acks.every(a => a.targetSystem === 255), 'acks are addressed to the GCS')

clearInterval(vehicleTimer)
clearInterval(gcsTimer)
gcs?.destroy()
vehicle.close()
router.kill('SIGTERM')
const code = await new Promise((resolve) => router.on('exit', (c) => resolve(c)))
check(code === 0, `mavswitchd exits cleanly on SIGTERM (exit ${code})`)
if (t.failed) console.log(routerLog)
t.done('router_interop')
