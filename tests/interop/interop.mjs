// Interop between mavswitch and node-mavlink, an independent MAVLink implementation:
//  1. node-mavlink encodes random messages (v1, v2, zero-truncated, signed); `mavswitch dump --json`
//     must decode every field to the same value;
//  2. mavswitch encodes random messages (interop_encode); node-mavlink must validate every frame
//     and decode every field to the values mavswitch encoded;
//  3. node-mavlink's own parser counts the same frames in the captures as mavswitch's tests do.
// Usage: node interop.mjs MAVSWITCH_TOOL INTEROP_ENCODE CAPTURES_DIR
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import {
  MavLinkPacketParser, MavLinkPacketSignature, MavLinkPacketSplitter, MavLinkProtocolV1, MavLinkProtocolV2,
  minimal, standard, common, ardupilotmega, uavionix, icarous,
} from 'node-mavlink'
import { MSG_ID_MAGIC_NUMBER } from 'mavlink-mappings'

const [tool, encoder, captures, definitions] = process.argv.slice(2)
const work = mkdtempSync(join(tmpdir(), 'mavswitch-interop-'))
let passed = 0
let failed = 0
const fail = (what) => { failed++; if (failed <= 20) console.log('FAIL', what) }

// The modules that make up mavswitch's built-in dialect (ardupilotmega and what it includes).
const REGISTRY = { ...minimal.REGISTRY, ...standard.REGISTRY, ...common.REGISTRY, ...uavionix.REGISTRY,
  ...icarous.REGISTRY, ...ardupilotmega.REGISTRY }

// Messages both sides define identically (name, CRC_EXTRA, length): the ones to exchange.
const ours = new Map()
for (const line of execFileSync(tool, ['dialect', join(definitions, 'ardupilotmega.xml')],
  { encoding: 'utf8' }).trim().split('\n')) {
  const [id, name, crc, , max] = line.split(' ')
  ours.set(Number(id), { name, crc: Number(crc), max: Number(max) })
}
const shared = Object.values(REGISTRY).filter(c => {
  const o = ours.get(c.MSG_ID)
  return o && o.name === c.MSG_NAME && o.crc === c.MAGIC_NUMBER && o.max === c.PAYLOAD_LENGTH &&
    MSG_ID_MAGIC_NUMBER[c.MSG_ID] === c.MAGIC_NUMBER
})
if (shared.length < 250) fail(`only ${shared.length} messages in common with node-mavlink`)

// --- random values, per node-mavlink field type ---------------------------------------------
let seed = 12345
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)
const INT_RANGE = { int8_t: [-128, 127], uint8_t: [0, 255], uint8_t_mavlink_version: [0, 255], int16_t: [-32768, 32767],
  uint16_t: [0, 65535], int32_t: [-(2 ** 31), 2 ** 31 - 1], uint32_t: [0, 2 ** 32 - 1] }
function scalar(type, sparse) {
  if (sparse && rand() < 0.67) return type.endsWith('64_t') ? 0n : (type === 'char' ? '' : 0)
  if (type === 'float') return Math.fround((rand() - 0.5) * 2e6)
  if (type === 'double') return (rand() - 0.5) * 2e12
  if (type === 'uint64_t') return (BigInt(Math.floor(rand() * 2 ** 32)) << 32n) | BigInt(Math.floor(rand() * 2 ** 32))
  if (type === 'int64_t') return BigInt.asIntN(64, (BigInt(Math.floor(rand() * 2 ** 32)) << 32n) | BigInt(Math.floor(rand() * 2 ** 32)))
  const [lo, hi] = INT_RANGE[type]
  return lo + Math.floor(rand() * (hi - lo + 1))
}
function value(field, sparse) {
  const base = field.type.replace('[]', '')
  if (!field.type.endsWith('[]')) return scalar(base, sparse)
  if (base === 'char') {
    const n = sparse ? 0 : Math.floor(rand() * (field.length + 1))
    return Array.from({ length: n }, () => String.fromCharCode(33 + Math.floor(rand() * 94))).join('')
  }
  return Array.from({ length: field.length }, () => scalar(base, sparse))
}

// --- comparing a node-mavlink value with one from mavswitch's JSON ----------------------------
function same(field, theirs, mine) {
  const base = field.type.replace('[]', '')
  if (field.type.endsWith('[]') && base !== 'char') {
    return Array.isArray(mine) && mine.length === theirs.length && theirs.every((t, i) => same({ type: base }, t, mine[i]))
  }
  if (typeof theirs === 'bigint') return BigInt(String(mine)) === theirs
  if (base === 'float') return mine === null ? Number.isNaN(theirs) : Math.fround(mine) === Math.fround(theirs)
  return mine === theirs
}
// JSON numbers beyond 2^53 lose precision in JS: read long integers as strings.
const parseExact = (line) => JSON.parse(line.replace(/([:\[,])(-?\d{16,})(?=[,\]}])/g, '$1"$2"'))

function compareFields(where, clazz, theirs, mineFields) {
  for (const field of clazz.FIELDS) {
    if (!(field.source in mineFields)) return fail(`${where}: field ${field.source} missing`), false
    if (!same(field, theirs[field.name], mineFields[field.source])) {
      return fail(`${where}: ${clazz.MSG_NAME}.${field.source}: node-mavlink ${String(theirs[field.name])}, mavswitch ${JSON.stringify(mineFields[field.source])}`), false
    }
  }
  return true
}

// --- 1. node-mavlink encodes, mavswitch decodes ------------------------------------------------
{
  const key = MavLinkPacketSignature.key('interop secret')
  const frames = []
  const sent = []
  let seq = 0
  for (const clazz of shared) {
    for (const variant of ['v2', 'v2-sparse', 'v2-signed', 'v1']) {
      if (variant === 'v1' && clazz.MSG_ID >= 256) continue
      const msg = new clazz()
      for (const field of clazz.FIELDS) msg[field.name] = value(field, variant === 'v2-sparse')
      // node-mavlink signs a frame whose signed flag was set before serializing (it is under the CRC).
      const protocol = variant === 'v1' ? new MavLinkProtocolV1(7, 200)
        : new MavLinkProtocolV2(7, 200, variant === 'v2-signed' ? MavLinkProtocolV2.IFLAG_SIGNED : 0)
      let buffer = protocol.serialize(msg, seq++ & 0xff)
      if (variant === 'v2-signed') buffer = protocol.sign(buffer, 3, key, 1_700_000_000_000 + seq)
      frames.push(buffer)
      sent.push({ clazz, msg, variant })
    }
  }
  const file = join(work, 'from-node.bin')
  writeFileSync(file, Buffer.concat(frames))
  const lines = execFileSync(tool, ['dump', '--json', file], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] })
    .trim().split('\n')
  if (lines.length !== sent.length) fail(`node -> mavswitch: ${sent.length} frames sent, ${lines.length} decoded`)
  sent.forEach(({ clazz, msg, variant }, i) => {
    const mine = parseExact(lines[i] ?? '{}')
    const where = `node -> mavswitch frame ${i} (${variant})`
    if (mine.msgid !== clazz.MSG_ID || mine.version !== (variant === 'v1' ? 1 : 2) || mine.signed !== (variant === 'v2-signed')) {
      return fail(`${where}: header ${lines[i]}`)
    }
    if (compareFields(where, clazz, msg, mine.fields)) passed++
  })
}

// --- 2. mavswitch encodes, node-mavlink decodes ------------------------------------------------
{
  const ids = join(work, 'ids.txt')
  const file = join(work, 'from-mavswitch.bin')
  const expectedFile = join(work, 'expected.jsonl')
  writeFileSync(ids, shared.map(c => c.MSG_ID).join('\n'))
  execFileSync(encoder, [ids, file, expectedFile], { stdio: 'ignore' })
  const expected = readFileSync(expectedFile, 'utf8').trim().split('\n').map(parseExact)
  const packets = await new Promise((resolve, reject) => {
    const out = []
    const splitter = new MavLinkPacketSplitter({}, { onCrcError: () => fail('mavswitch -> node: CRC error in node-mavlink') })
    Readable.from([readFileSync(file)]).pipe(splitter).pipe(new MavLinkPacketParser())
      .on('data', p => out.push(p)).on('end', () => resolve(out)).on('error', reject)
  })
  if (packets.length !== expected.length) fail(`mavswitch -> node: ${expected.length} frames encoded, ${packets.length} parsed`)
  packets.forEach((packet, i) => {
    const want = expected[i]
    const clazz = REGISTRY[packet.header.msgid]
    const where = `mavswitch -> node frame ${i} (v${want?.version})`
    if (!want || !clazz || packet.header.msgid !== want.msgid) {
      return fail(`${where}: unexpected message ${packet.header.msgid}`)
    }
    const data = packet.protocol.data(packet.payload, clazz)
    if (compareFields(where, clazz, data, want.fields)) passed++
  })
}

// --- 3. the captures, delimited by node-mavlink's own parser -----------------------------------
// node-mavlink's tables predate LINK_NODE_STATUS (8) and CURRENT_EVENT_SEQUENCE (411): it delimits
// those frames too but counts them as unknown instead of handing them out.
for (const [name, frames] of [['mavlink-v2-3412-packets.bin', 3412], ['GH-5.bin', 138]]) {
  const { valid, unknown, crcErrors } = await new Promise((resolve) => {
    let n = 0
    let crc = 0
    const splitter = new MavLinkPacketSplitter({}, { onCrcError: () => crc++ })
    Readable.from([readFileSync(join(captures, name))]).pipe(splitter)
      .on('data', () => n++).on('end', () => resolve({ valid: n, unknown: splitter.unknownPackagesCount, crcErrors: crc }))
  })
  if (valid + unknown === frames && crcErrors === 0) passed++
  else fail(`node-mavlink finds ${valid} valid + ${unknown} unknown frames (${crcErrors} CRC errors) in ${name}, mavswitch ${frames}`)
}

rmSync(work, { recursive: true, force: true })
console.log(`interop: ${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
