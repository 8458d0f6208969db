// The in-process API against a vehicle nobody here wrote: a node-mavlink vehicle on UDP, and
// the example programs (a mavswitch::Component each) talking to it through their own router.
// Usage: node api_interop.mjs COMMAND_SENDER TELEMETRY_PRINTER
import { execFile } from 'node:child_process'
import dgram from 'node:dgram'
import { Readable } from 'node:stream'
import { MavLinkPacketParser, MavLinkPacketSplitter, MavLinkProtocolV2, minimal, common } from 'node-mavlink'

const [commandSender, telemetryPrinter] = process.argv.slice(2)
const REGISTRY = { ...minimal.REGISTRY, ...common.REGISTRY }
let passed = 0
let failed = 0
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log('FAIL', what) } }

// --- the vehicle: system 1, component 1; talks to whoever talks to it ---------------------
const vehicle = dgram.createSocket('udp4')
const protocol = new MavLinkProtocolV2(1, 1)
let seq = 0
const peers = new Map()
const send = (msg) => {
  const bytes = protocol.serialize(msg, seq++ & 255)
  for (const { address, port } of peers.values()) vehicle.send(bytes, port, address)
}
const commandsSeen = []
vehicle.on('message', (bytes, from) => {
  peers.set(`${from.address}:${from.port}`, from)
  const input = new Readable({ read() {} })
  input.pipe(new MavLinkPacketSplitter()).pipe(new MavLinkPacketParser()).on('data', (packet) => {
    if (packet.header.msgid !== common.CommandLong.MSG_ID) return
    const c = packet.protocol.data(packet.payload, REGISTRY[packet.header.msgid])
    commandsSeen.push(c)
    const ack = new common.CommandAck()
    ack.command = c.command
    ack.result = c.command === 400 && c._param1 === 1 ? 0 : 4  // ACCEPTED, else FAILED
    ack.targetSystem = packet.header.sysid
    ack.targetComponent = packet.header.compid
    send(ack)
  })
  input.push(bytes)
  input.push(null)
})
await new Promise((resolve) => vehicle.bind(0, '127.0.0.1', resolve))
const port = vehicle.address().port
let t = 0
const telemetry = setInterval(() => {
  const hb = new minimal.Heartbeat()
  hb.type = 2
  hb.autopilot = 3
  hb.mavlinkVersion = 3
  send(hb)
  const att = new common.Attitude()
  att.timeBootMs = (t += 50)
  att.roll = 0.25
  send(att)
  const pos = new common.GlobalPositionInt()
  pos.timeBootMs = t
  pos.lat = 473977420
  pos.lon = 85455940
  pos.alt = 488000
  send(pos)
}, 50)

const run = (program, args) => new Promise((resolve) => {
  execFile(program, args, { timeout: 20000 }, (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }))
})

const sent = await run(commandSender, ['--udp-client', `127.0.0.1:${port}`, '--target', '1', '--command', '400', '--param1', '1'])
check(sent.code === 0, `command_sender exits 0 (got ${sent.code}: ${sent.stderr.trim()})`)
check(sent.stdout.includes('COMMAND_ACK command 400 result 0'), `command_sender reports the ack (${sent.stdout.trim()})`)
check(commandsSeen.some(c => c.command === 400 && c._param1 === 1 && c.targetSystem === 1), 'the vehicle got COMMAND_LONG 400 with param1 1')

const printed = await run(telemetryPrinter, ['--udp-client', `127.0.0.1:${port}`, '--count', '6'])
check(printed.code === 0, `telemetry_printer exits 0 (got ${printed.code}: ${printed.stderr.trim()})`)
check(/ATTITUDE t=\d+ ms roll=0\.250/.test(printed.stdout), 'ATTITUDE decoded by the typed subscriber')
check(printed.stdout.includes('GLOBAL_POSITION_INT lat=47.3977420 lon=8.5455940 alt=488.00 m'), 'GLOBAL_POSITION_INT decoded')

clearInterval(telemetry)
vehicle.close()
console.log(`api_interop: ${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
