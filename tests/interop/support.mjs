// What the node tests share: a tally of checks, and free ports on loopback.
import dgram from 'node:dgram'
import net from 'node:net'

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
