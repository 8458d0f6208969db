// What the node tests share: a tally of checks, free ports on loopback, bounded waits, and
// node-mavlink's parser over bytes that arrive in pieces.
import dgram from 'node:dgram'
import net from 'node:net'
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

// A port nothing listens on now, of 'udp' or 'tcp'.
export const freePort = (kind) => new Promise((resolve) => {
  if (kind === 'udp') {
    const s = dgram.createSocket('udp4')
    s.bind(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) })
  } else {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) })
  }
})

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Until pred() (sync or async) is truthy, looked at every 20 ms, for at most `ms`; its last value.
export const until = async (pred, ms = 10000) => {
  const end = Date.now() + ms
  for (;;) {
    const v = await pred()
    if (v || Date.now() > end) return v
    await sleep(20)
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
