// mavlink2rest's API on mavswitchd's window, used as its README tells a user to (node's fetch and
// the npm ws client, nothing of ours), against a node-mavlink vehicle behind the router: the
// tree and a node of it by pointer, the helper, /info, a WebSocket filtered by name, system,
// component and rate, the README's arm example (the vehicle gets COMMAND_LONG 400 from 255/240),
// the same over the WebSocket, and bad input (malformed JSON, unknown names, wrong types, a huge
// body, a flood of sends) answered with errors while routing goes on. Then a TokenFile: sending
// needs the token.
// Usage: node rest_api.mjs MAVSWITCHD
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MavLinkProtocolV2, common, minimal } from 'node-mavlink'
import WebSocket from 'ws'
import { decode, freePort, parser, tally, until } from './support.mjs'

const [daemon] = process.argv.slice(2)
const t = tally()
const check = t.check

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-rest-'))
const tokenFile = path.join(scratch, 'token')
const token = 'rest-api-test-token-0123456789'
fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 })
const vehiclePort = await freePort('udp')
const gcsPort = await freePort('udp')
const httpPort = await freePort('tcp')
const conf = path.join(scratch, 'main.conf')
function startDaemon (http = '') {
  fs.writeFileSync(conf, `[General]\nTcpServerPort = 0\nMessageRates = false\n[Http]\nAddress = 127.0.0.1\nPort = ${httpPort}\n${http}` +
    `[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = ${vehiclePort}\n` +
    `[UdpEndpoint gcs]\nMode = Server\nAddress = 127.0.0.1\nPort = ${gcsPort}\n`)
  const d = spawn(daemon, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] })
  d.log = ''
  d.stderr.on('data', (b) => { d.log += b })
  d.stdout.on('data', (b) => { d.log += b })
  return d
}

// Two vehicles (1/1 and 2/1) on one socket each: HEARTBEAT at 1 Hz, ATTITUDE at 50 Hz with a
// roll that changes; vehicle 1 records the COMMAND_LONGs it gets.
const commands = []
const param1 = (c) => c.data.param1 ?? c.data._param1 // node-mavlink keeps it as _param1
function vehicle (sysid) {
  const socket = dgram.createSocket('udp4')
  const protocol = new MavLinkProtocolV2(sysid, 1)
  let seq = 0
  socket.send1 = (m) => socket.send(protocol.serialize(m, seq++ & 255), vehiclePort, '127.0.0.1')
  socket.on('message', parser((p) => {
    if (p.header.msgid === common.CommandLong.MSG_ID && sysid === 1) {
      const c = decode(p)
      commands.push({ sys: p.header.sysid, comp: p.header.compid, data: c })
      // 31000: under way, then done 1.5 s later; 31001: the first try is lost; the rest: accepted.
      const ack = (result, progress = 0) => {
        const a = new common.CommandAck()
        a.command = c.command
        a.result = result
        a.progress = progress
        a.targetSystem = p.header.sysid
        a.targetComponent = p.header.compid
        socket.send1(a)
      }
      if (c.command === 31000) {
        ack(5, 10) // MAV_RESULT_IN_PROGRESS
        setTimeout(() => ack(0), 1500)
      } else if (c.command === 31001 && c.confirmation === 0) {
        // lost
      } else {
        ack(c.command === 31002 ? 4 : 0) // 4: MAV_RESULT_FAILED
      }
    }
  }))
  return socket
}
const vehicles = [vehicle(1), vehicle(2)]
await Promise.all(vehicles.map((v) => new Promise((resolve) => v.bind(0, '127.0.0.1', resolve))))
const heartbeat = new minimal.Heartbeat()
heartbeat.type = 2 // MAV_TYPE_QUADROTOR
heartbeat.autopilot = 3 // MAV_AUTOPILOT_ARDUPILOTMEGA
heartbeat.baseMode = 128 | 1 // SAFETY_ARMED | CUSTOM_MODE_ENABLED
heartbeat.customMode = 4
heartbeat.systemStatus = 4
let tick = 0
const vehicleTimer = setInterval(() => {
  tick++
  for (const v of vehicles) {
    const a = new common.Attitude()
    a.timeBootMs = tick * 20
    a.roll = Math.sin(tick / 10)
    v.send1(a)
    if (tick % 50 === 1) v.send1(heartbeat)
  }
}, 20)

// A UDP ground station, to show routing goes on whatever the API is sent.
const gcs = dgram.createSocket('udp4')
await new Promise((resolve) => gcs.bind(0, '127.0.0.1', resolve))
let gcsAttitudes = 0
gcs.on('message', parser((p) => { if (p.header.msgid === common.Attitude.MSG_ID) gcsAttitudes++ }))
const gcsProtocol = new MavLinkProtocolV2(255, 190)
const gcsTimer = setInterval(() => gcs.send(gcsProtocol.serialize(heartbeat, 0), gcsPort, '127.0.0.1'), 500)

const base = `http://127.0.0.1:${httpPort}`
const get = async (p, headers = {}) => {
  const r = await fetch(base + p, { headers })
  const text = await r.text()
  let json = null
  try { json = JSON.parse(text) } catch {}
  return { status: r.status, text, json }
}
const post = async (p, body, headers = {}) => {
  const r = await fetch(base + p, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body })
  const text = await r.text()
  let json = null
  try { json = JSON.parse(text) } catch {}
  return { status: r.status, text, json }
}
// A WebSocket client: the JSON texts it receives.
function socket (query = '', options = {}) {
  const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/v1/ws/mavlink${query}`, options)
  ws.got = []
  ws.status = 0
  ws.on('message', (data, binary) => { if (!binary) ws.got.push(JSON.parse(data.toString())) })
  ws.opened = new Promise((resolve) => {
    ws.on('open', () => resolve(true))
    ws.on('error', () => resolve(false))
    ws.on('unexpected-response', (request, response) => { ws.status = response.statusCode; request.destroy(); resolve(false) })
  })
  return ws
}

// The README's arm example, as given there.
const arm = JSON.stringify({
  header: { system_id: 255, component_id: 240, sequence: 0 },
  message: {
    type: 'COMMAND_LONG',
    param1: 1.0,
    param2: 0.0, param3: 0.0, param4: 0.0, param5: 0.0, param6: 0.0, param7: 0.0,
    command: { type: 'MAV_CMD_COMPONENT_ARM_DISARM' },
    target_system: 1,
    target_component: 1,
    confirmation: 1,
  },
})

let router = startDaemon()
try {
  const heard = await until(async () => {
    try { return (await get('/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT')).status === 200 } catch { return false }
  })
  check(heard, 'the tree has vehicle 1\'s HEARTBEAT')
  const tree = await get('/v1/mavlink')
  check(tree.status === 200 && tree.json?.vehicles?.['1']?.id === 1 && tree.json.vehicles['1'].components['1'].id === 1,
    'GET /v1/mavlink: {"vehicles":{"1":{"id":1,"components":{"1":{"id":1,...')
  const hb = tree.json?.vehicles?.['1']?.components?.['1']?.messages?.HEARTBEAT
  check(hb?.message?.type === 'HEARTBEAT' && hb.message.mavtype?.type === 'MAV_TYPE_QUADROTOR' &&
    hb.message.autopilot?.type === 'MAV_AUTOPILOT_ARDUPILOTMEGA', 'HEARTBEAT: its type as mavtype, enums as {"type": NAME}')
  check(hb?.message?.base_mode === 'MAV_MODE_FLAG_SAFETY_ARMED | MAV_MODE_FLAG_CUSTOM_MODE_ENABLED' ||
    hb?.message?.base_mode === 'MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | MAV_MODE_FLAG_SAFETY_ARMED',
  `a bitmask as its flags joined by " | " (${hb?.message?.base_mode})`)
  const time = hb?.status?.time
  check(time && Number.isInteger(time.counter) && time.counter >= 1 && !Number.isNaN(Date.parse(time.first_update)) &&
    !Number.isNaN(Date.parse(time.last_update)) && typeof time.frequency === 'number',
  'status.time: counter, first_update and last_update (ISO-8601), frequency')
  check(tree.json?.vehicles?.['2']?.components?.['1']?.messages?.ATTITUDE !== undefined, 'vehicle 2 is in the tree too')
  // The frequency of a 50 Hz stream, once it has run long enough to say.
  let f = null
  check(await until(async () => {
    f = (await get('/v1/mavlink/vehicles/1/components/1/messages/ATTITUDE')).json?.status?.time?.frequency
    return f > 35 && f < 65
  }, 10000), `ATTITUDE's frequency is about 50 Hz (${f})`)
  const roll1 = (await get('/v1/mavlink/vehicles/1/components/1/messages/ATTITUDE/message/roll')).json
  let roll2 = roll1
  await until(async () => (roll2 = (await get('/v1/mavlink/vehicles/1/components/1/messages/ATTITUDE/message/roll')).json) !== roll1, 5000)
  check(typeof roll1 === 'number' && typeof roll2 === 'number' && roll1 !== roll2, `a pointer to a field: the roll, changing (${roll1}, ${roll2})`)
  const last = await get('/v1/mavlink/vehicles/1/components/1/messages/ATTITUDE/status/time/last_update')
  check(last.status === 200 && typeof last.json === 'string' && !Number.isNaN(Date.parse(last.json)), 'a pointer to last_update: a time')
  const missing = await get('/v1/mavlink/vehicles/9/components/1')
  check(missing.status === 404 && /vehicles\/9/.test(missing.text), 'a path that is not there: 404 naming it')

  const helper = await get('/v1/helper/mavlink?name=COMMAND_LONG')
  check(helper.status === 200 && helper.json?.header?.system_id === 255 && helper.json.message.type === 'COMMAND_LONG' &&
    helper.json.message.command?.type !== undefined && helper.json.message.param1 === 0, 'the helper: COMMAND_LONG\'s template')
  const hbHelper = await get('/v1/helper/mavlink?name=HEARTBEAT')
  check(hbHelper.json?.message?.mavlink_version === 3, 'HEARTBEAT\'s template has mavlink_version 3')
  check((await get('/v1/helper/mavlink?name=NOT_A_MESSAGE')).status === 404, 'the helper of an unknown name: 404')
  const info = await get('/info')
  check(info.status === 200 && info.json?.version === 0 && info.json?.service?.name === 'mavswitch' &&
    typeof info.json.service.version === 'string' && /^([0-9a-f]{40}|unknown)$/.test(info.json.service.sha) &&
    /^(\d{4}-\d\d-\d\dT|unknown)/.test(info.json.service.build_date),
  `/info: service, version, sha and build date (${JSON.stringify(info.json?.service)})`)

  // WebSockets: by name, by system, with a rate; one that wants everything.
  const byName = socket('?filter=^HEART')
  const bySystem = socket('?filter=ATTITUDE&system=2&component=1')
  const slow = socket('?filter=ATTITUDE&system=1&rate=5')
  const all = socket()
  check((await byName.opened) && (await bySystem.opened) && (await slow.opened) && (await all.opened), 'four WebSocket clients open')
  const openedAt = Date.now()
  await until(() => byName.got.length >= 2 && bySystem.got.length >= 50, 5000)
  check(byName.got.length >= 2 && byName.got.every((m) => m.message.type === 'HEARTBEAT'), '?filter=^HEART: HEARTBEATs only')
  check(byName.got[0]?.header?.system_id !== undefined && byName.got[0]?.header?.sequence !== undefined,
    'each with its header (system_id, component_id, sequence)')
  check(bySystem.got.length >= 50 && bySystem.got.every((m) => m.header.system_id === 2 && m.message.type === 'ATTITUDE'),
    '?system=2&component=1: vehicle 2\'s ATTITUDE only')
  await until(() => Date.now() - openedAt > 3000, 4000)
  const seconds = (Date.now() - openedAt) / 1000
  const slowRate = slow.got.length / seconds
  check(slowRate > 3.5 && slowRate < 6.5, `?rate=5: about 5 a second of a 50 Hz stream (${slowRate.toFixed(1)})`)
  check(all.got.some((m) => m.message.type === 'HEARTBEAT') && all.got.some((m) => m.message.type === 'ATTITUDE'),
    'no filter: every message')
  const badFilter = socket('?filter=(')
  check(!(await badFilter.opened) && badFilter.status === 400, 'a filter that is not a regular expression: 400')
  // A pattern a backtracking engine takes for ever over a message's name: matched at once.
  const nested = socket('?filter=' + encodeURIComponent('^(.*)*(.*)*(.*)*(.*)*(.*)*[0-9]$'))
  const nestedAt = Date.now()
  check((await nested.opened) && Date.now() - nestedAt < 2000, `a pathological filter opens at once (${Date.now() - nestedAt} ms)`)
  const afterNested = all.got.length
  check(await until(() => all.got.length > afterNested + 10, 3000), 'and the window serves the others meanwhile')
  nested.close()
  const rustSyntax = socket('?filter=' + encodeURIComponent('^(?:ATTITUDE|GPS_RAW_INT)$'))
  check(await rustSyntax.opened, 'the regex crate\'s syntax (mavlink2rest\'s) is taken')
  check(await until(() => rustSyntax.got.length >= 5, 3000) && rustSyntax.got.every((m) => m.message.type === 'ATTITUDE'),
    `it filters as the regex crate would (${rustSyntax.got.length} ATTITUDE)`)
  rustSyntax.close()

  // The README's arm example: COMMAND_LONG 400 from 255/240 reaches vehicle 1.
  const armed = await post('/v1/mavlink', arm)
  check(armed.status === 200, `POST /v1/mavlink of the README's arm example: 200 (${armed.status} ${armed.text.trim()})`)
  check(await until(() => commands.some((c) => c.data.command === 400 && c.sys === 255 && c.comp === 240 &&
    param1(c) === 1 && c.data.confirmation === 1)), 'the vehicle receives COMMAND_LONG 400 from 255/240, param1 1')
  // The same over a WebSocket: the client sends the JSON, the vehicle gets the command.
  all.send(arm.replace('"param1":1', '"param1":0'))
  check(await until(() => commands.some((c) => c.data.command === 400 && param1(c) === 0)),
    'a WebSocket client sends the disarm: the vehicle receives it')

  // Bad input: an error that names what is wrong, nothing sent.
  const before = commands.length
  const bad = [
    ['{"header":', 'malformed JSON', /not JSON/],
    [JSON.stringify({ message: { type: 'NO_SUCH_MESSAGE' } }), 'an unknown type', /NO_SUCH_MESSAGE/],
    [arm.replace('"param2"', '"param_two"'), 'an unknown field', /param_two/],
    [arm.replace('MAV_CMD_COMPONENT_ARM_DISARM', 'MAV_CMD_NOT_A_COMMAND'), 'an unknown enum name', /MAV_CMD_NOT_A_COMMAND/],
    [arm.replace('"target_system":1', '"target_system":"one"'), 'a string for a number', /target_system/],
    [arm.replace('"target_system":1', '"target_system":300'), 'a number out of range', /target_system.*300|300.*target_system/],
  ]
  for (const [body, what, names] of bad) {
    const r = await post('/v1/mavlink', body)
    check(r.status === 400 && names.test(r.text), `${what}: 400 that says so (${r.status} ${r.text.trim()})`)
  }
  const huge = await post('/v1/mavlink', '{"header":{},"message":{"type":"' + 'A'.repeat(100 * 1024) + '"}}')
  check(huge.status === 413, `a huge body: 413 (${huge.status})`)
  // A good one after them: once it is at the vehicle, whatever they sent would be there before it.
  const good = await post('/v1/mavlink', arm.replace('MAV_CMD_COMPONENT_ARM_DISARM', 'MAV_CMD_DO_SET_HOME'))
  check(good.status === 200 && await until(() => commands.length > before), 'a good one after them reaches the vehicle')
  check(commands.length === before + 1 && commands[before].data.command === 179, 'none of the bad ones sent anything')

  // A flood: 10,000 sends in a second from one WebSocket client, half of them malformed.
  const gcsBefore = gcsAttitudes
  const answers = all.got.length
  const flood = Date.now()
  for (let i = 0; i < 10000; i++) {
    all.send(i % 2 ? '{bad' : JSON.stringify({ header: { system_id: 255, component_id: 240 }, message: { type: 'HEARTBEAT', mavtype: { type: 'MAV_TYPE_GCS' } } }))
  }
  check(Date.now() - flood < 5000, 'the client sent 10,000 messages')
  check(await until(() => all.got.some((m, i) => i >= answers && m.error && /not JSON/.test(m.error))),
    'the malformed ones are answered with an error')
  check(await until(() => gcsAttitudes - gcsBefore > 40, 5000), `routing went on meanwhile (${gcsAttitudes - gcsBefore} ATTITUDEs to the ground station)`)
  check((await get('/v1/mavlink/vehicles/1/components/1/messages/ATTITUDE')).status === 200, 'the API still answers')
  for (const ws of [byName, bySystem, slow, all]) ws.close()

  // Commands by MAVLink's command protocol, answered with the COMMAND_ACK's result by name.
  const command = async (body, sys = 1) => post(`/v1/vehicles/${sys}/1/command`, JSON.stringify(body))
  const armCommand = await command({ command: 'MAV_CMD_COMPONENT_ARM_DISARM', params: [1] })
  check(armCommand.status === 200 && armCommand.json?.result === 'MAV_RESULT_ACCEPTED' && armCommand.json.attempts === 1,
    `POST /v1/vehicles/1/1/command by name: ACCEPTED at once (${armCommand.text.trim()})`)
  const sentBefore = commands.filter((c) => c.data.command === 31000).length
  const started = Date.now()
  const underWay = await command({ command: 31000 })
  check(underWay.status === 200 && underWay.json?.result === 'MAV_RESULT_ACCEPTED' && Date.now() - started >= 1400,
    `IN_PROGRESS, then the final ACCEPTED it waited for (${underWay.text.trim()})`)
  check(commands.filter((c) => c.data.command === 31000).length === sentBefore + 1, 'not sent again once under way')
  const lost = await command({ command: 31001, param1: 2 })
  check(lost.status === 200 && lost.json?.attempts === 2 && lost.json.result === 'MAV_RESULT_ACCEPTED',
    `a lost first try: sent again, answered (${lost.text.trim()})`)
  check(commands.some((c) => c.data.command === 31001 && c.data.confirmation === 1), 'the second try says confirmation 1')
  const failed = await command({ command: 31002 })
  check(failed.json?.result === 'MAV_RESULT_FAILED', `a refusal is answered by name (${failed.text.trim()})`)
  const badCommand = await command({ command: 'MAV_CMD_NOT_ONE' })
  check(badCommand.status === 400 && /MAV_CMD_NOT_ONE/.test(badCommand.text), 'an unknown command name: 400 naming it')
  const notFound = await get('/v1/vehicles/1/1/nothing')
  check(notFound.status === 404, 'an unknown vehicle path: 404')

  // With a TokenFile: reads stay open on loopback, sending needs the token.
  router.kill('SIGTERM')
  await new Promise((resolve) => router.on('exit', resolve))
  router = startDaemon(`TokenFile = ${tokenFile}\n`)
  check(await until(async () => {
    try { return (await get('/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT')).status === 200 } catch { return false }
  }), 'with a TokenFile: the tree is read without it (loopback)')
  const n = commands.length
  const noToken = await post('/v1/mavlink', arm)
  check(noToken.status === 401, `POST without the token: 401 (${noToken.status})`)
  const commandNoToken = await post('/v1/vehicles/1/1/command', '{"command":400}')
  check(commandNoToken.status === 401, `a command without the token: 401 (${commandNoToken.status})`)
  const withToken = await post('/v1/mavlink', arm, { Authorization: `Bearer ${token}` })
  check(withToken.status === 200, `POST with the token: 200 (${withToken.status})`)
  check(await until(() => commands.length > n) && commands.length === n + 1, 'only the one with the token reached the vehicle')
  const reader = socket('?filter=HEARTBEAT')
  check(await reader.opened, 'a WebSocket without the token opens (it reads)')
  const readerAnswers = reader.got.length
  reader.send(arm)
  check(await until(() => reader.got.slice(readerAnswers).some((m) => m.error && /token/.test(m.error))),
    'but what it sends is refused, saying it needs the token')
  const writer = socket(`?filter=HEARTBEAT&token=${token}`)
  check(await writer.opened, 'one with ?token= opens')
  writer.send(arm)
  check(await until(() => commands.length === n + 2), 'and what it sends reaches the vehicle')
  reader.close()
  writer.close()
  // The frames the window made (each POST at sequence 0, beside the commands it numbered itself)
  // came from this process: no gap in their numbers is a loss.
  const allLinks = (await get('/api/v1/links')).json.links
  const own = allLinks.filter((l) => l.kind === 'component')
  check(own.length > 0 && own.every((l) => l.sequence_lost === 0),
    `the window's own links count no sequence loss (${own.map((l) => `${l.name}: ${l.sequence_lost}`).join(', ')})`)

  // VehicleData = false: the window without it (no frame kept, nothing decoded).
  router.kill('SIGTERM')
  await new Promise((resolve) => router.on('exit', resolve))
  router = startDaemon('VehicleData = false\n')
  const off = await until(async () => { try { return await get('/v1/mavlink') } catch { return null } })
  check(off?.status === 404 && /off/.test(off.text), `VehicleData = false: /v1/mavlink is 404, saying it is off (${off?.status})`)
  check((await get('/api/v1/links')).status === 200, 'and the rest of the window answers')
} finally {
  clearInterval(vehicleTimer)
  clearInterval(gcsTimer)
  for (const v of vehicles) v.close()
  gcs.close()
  router.kill('SIGTERM')
  fs.rmSync(scratch, { recursive: true, force: true })
}
if (t.failed) console.log(router.log)
t.done('rest_api')
