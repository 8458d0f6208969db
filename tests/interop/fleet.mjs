// The fleet fabric against another NATS client: a cloud service written with the npm `nats`
// package and node-mavlink, beside mavswitchd on a nats-server (Debian's) the test starts. It
// subscribes by vehicle and by message and decodes the frames, and commands a vehicle through
// the router by publishing to its subject; the acknowledgement comes back on the service's.
// Usage: node fleet.mjs MAVSWITCHD   (exits 77, skipped, without nats-server)
import { spawn, spawnSync } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { connect } from 'nats'
import { MavLinkProtocolV2, common, minimal } from 'node-mavlink'
import { decode, freePort, parser, sleep, tally, until } from './support.mjs'

const [daemon] = process.argv.slice(2)
const server = spawnSync('sh', ['-c', 'command -v nats-server']).stdout.toString().trim()
if (!server) {
  console.log('SKIP: nats-server (Debian\'s nats-server package) not installed')
  process.exit(77)
}
const t = tally()
const check = t.check

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-fleet-'))
const natsPort = await freePort('tcp')
const vehiclePort = await freePort('udp')
const nats = spawn(server, ['-a', '127.0.0.1', '-p', String(natsPort)], { stdio: 'ignore' })
const conf = path.join(scratch, 'main.conf')
fs.writeFileSync(conf, `[General]\nTcpServerPort = 0\n[UdpEndpoint vehicles]\nMode = Server\nAddress = 127.0.0.1\nPort = ${vehiclePort}\n` +
  `[NatsEndpoint fleet]\nUrl = nats://127.0.0.1:${natsPort}\n`)
const router = spawn(daemon, ['-c', conf, '--http=0'], { stdio: ['ignore', 'ignore', 'pipe'] })
router.log = ''
router.stderr.on('data', (b) => { router.log += b })

// Two vehicles behind the router (1/1 and 2/1), each on its own UDP socket; vehicle 1 answers
// every COMMAND_LONG with a COMMAND_ACK.
const vehicles = {}
for (const sys of [1, 2]) {
  const s = dgram.createSocket('udp4')
  await new Promise((resolve) => s.bind(0, '127.0.0.1', resolve))
  const proto = new MavLinkProtocolV2(sys, 1)
  const v = { socket: s, seq: 0, commands: [] }
  v.send = (m) => s.send(proto.serialize(m, v.seq++ & 255), vehiclePort, '127.0.0.1')
  s.on('message', parser((p) => {
    if (p.header.msgid !== common.CommandLong.MSG_ID) return
    const c = decode(p)
    v.commands.push(c.command)
    const ack = new common.CommandAck()
    ack.command = c.command
    ack.targetSystem = p.header.sysid
    ack.targetComponent = p.header.compid
    v.send(ack)
  }))
  vehicles[sys] = v
}
const heartbeat = new minimal.Heartbeat()
heartbeat.type = minimal.MavType.QUADROTOR
heartbeat.autopilot = minimal.MavAutopilot.PX4
const timer = setInterval(() => {
  for (const sys of [1, 2]) {
    vehicles[sys].send(heartbeat)
    const position = new common.GlobalPositionInt()
    position.lat = 473977420 + sys
    vehicles[sys].send(position)
  }
}, 50)

let nc
try {
  for (let i = 0; i < 50 && !nc; i++) { try { nc = await connect({ servers: `127.0.0.1:${natsPort}` }) } catch { await sleep(100) } }
  check(!!nc, 'the npm nats client connects to the server')
  // By vehicle: everything vehicle 1 broadcasts. By message: every vehicle's HEARTBEAT.
  const seen = { byVehicle: [], byMessage: [], acks: [] }
  const follow = (subject, into) => {
    const sub = nc.subscribe(subject)
    ;(async () => {
      for await (const m of sub) parser((p) => into.push({ subject: m.subject, sys: p.header.sysid, id: p.header.msgid, data: decode(p) }))(Buffer.from(m.data))
    })()
  }
  follow('mavlink.from.1.>', seen.byVehicle)
  follow('mavlink.from.*.*.HEARTBEAT', seen.byMessage)
  follow('mavlink.to.255.>', seen.acks)
  check(await until(() => seen.byVehicle.some((f) => f.id === common.GlobalPositionInt.MSG_ID)),
    'by vehicle: vehicle 1\'s GLOBAL_POSITION_INT arrives and decodes')
  const position = seen.byVehicle.find((f) => f.id === common.GlobalPositionInt.MSG_ID)
  check(position && position.data.lat === 473977421 && position.subject === 'mavlink.from.1.1.GLOBAL_POSITION_INT',
    `its subject and fields (${position && position.subject}, lat ${position && position.data.lat})`)
  check(seen.byVehicle.every((f) => f.sys === 1), 'by vehicle: nothing of vehicle 2')
  check(await until(() => seen.byMessage.some((f) => f.sys === 1) && seen.byMessage.some((f) => f.sys === 2)),
    'by message: both vehicles\' HEARTBEATs')
  check(seen.byMessage.every((f) => f.id === minimal.Heartbeat.MSG_ID && f.data.autopilot === minimal.MavAutopilot.PX4),
    'and only HEARTBEATs, decoded')

  // The cloud commands vehicle 1 through the router, as a ground station 255/190.
  const gcs = new MavLinkProtocolV2(255, 190)
  const command = new common.CommandLong()
  command.targetSystem = 1
  command.targetComponent = 1
  command.command = 400
  let sent = 0
  check(await until(() => {
    if (!vehicles[1].commands.length) nc.publish('mavlink.to.1.1.COMMAND_LONG', gcs.serialize(command, sent++ & 255))
    return vehicles[1].commands.includes(400)
  }), 'a COMMAND_LONG published to mavlink.to.1.1 reaches vehicle 1')
  check(!vehicles[2].commands.length, 'and not vehicle 2')
  check(await until(() => seen.acks.some((f) => f.id === common.CommandAck.MSG_ID && f.sys === 1 && f.data.command === 400)),
    'its COMMAND_ACK comes back on mavlink.to.255.190')
} finally {
  clearInterval(timer)
  if (nc) await nc.close()
  for (const v of Object.values(vehicles)) v.socket.close()
  router.kill('SIGTERM')
  nats.kill('SIGTERM')
  fs.rmSync(scratch, { recursive: true, force: true })
}
if (t.failed) console.log(router.log)
t.done('fleet')
