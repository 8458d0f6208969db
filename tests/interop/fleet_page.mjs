// The operator's page on a fleet: three ArduPilot SITL copters, each system 1 behind its own
// mavswitchd (Vehicle = copter-N) on a nats-server, and a ground mavswitchd that takes them as
// 11, 12 and 13 (Vehicles = copter-1:11, ...). In Debian's chromium the page names each vehicle
// and, once copter-2 has taken off through the HTTP API, shows its card mid-flight.
// Usage: node fleet_page.mjs MAVSWITCHD SITL_START_SH [SCREENSHOT_DIR]   (exit 77: skipped)
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import puppeteer from 'puppeteer-core'
import { freePort, processes, skipUnless, tally, until } from './support.mjs'

const [daemon, sitlStart, shots] = process.argv.slice(2)
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p))
const natsServer = spawnSync('sh', ['-c', 'command -v nats-server']).stdout.toString().trim()
skipUnless([[!chromium, 'chromium is not installed (Debian package chromium)'],
  [!natsServer, 'nats-server (Debian package nats-server) is not installed'],
  [!sitlStart || !fs.existsSync(sitlStart), '../shared/sitl is not here: the fleet page test flies ArduPilot SITL']])
if (shots) fs.mkdirSync(shots, { recursive: true })
const t = tally()
const check = t.check
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-fleet-page-'))
const token = 'fleet-page-token-0123456789abcdef'
fs.writeFileSync(path.join(scratch, 'token'), token + '\n', { mode: 0o600 })
const natsPort = await freePort('tcp')
const httpPort = await freePort('tcp')
const { start, stop } = processes()
const conf = (name, text) => { const f = path.join(scratch, name); fs.writeFileSync(f, text); return f }

start(natsServer, ['-a', '127.0.0.1', '-p', String(natsPort)])
const url = `nats://127.0.0.1:${natsPort}`
// SITL instances 11-13 (TCP 5870, 5880, 5890): the e2e tests use 7-9.
for (const k of [1, 2, 3]) {
  const instance = 10 + k
  start('bash', [sitlStart, String(instance), path.join(scratch, `sitl${k}`)], { SITL_DEFAULTS: conf(`none${k}.parm`, '') })
  start(daemon, ['-c', conf(`copter-${k}.conf`, `[General]\nTcpServerPort = 0\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\n` +
    `Port = ${5760 + 10 * instance}\n[NatsEndpoint fleet]\nUrl = ${url}\nVehicle = copter-${k}\n`), '--http', '0'])
}
start(daemon, ['-c', conf('ground.conf', `[General]\nTcpServerPort = 0\n[NatsEndpoint fleet]\nUrl = ${url}\n` +
  `Vehicles = copter-1:11, copter-2:12, copter-3:13\n[Http]\nTokenFile = ${path.join(scratch, 'token')}\n`),
'--http', `127.0.0.1:${httpPort}`])

const api = async (method, p, body) => {
  try {
    const r = await fetch(`http://127.0.0.1:${httpPort}${p}`, {
      method, body: body && JSON.stringify(body), headers: { Authorization: 'Bearer ' + token },
    })
    return { status: r.status, json: await r.json().catch(() => null) }
  } catch { return { status: 0, json: null } }
}
const command = (sys, name, params) => api('POST', `/v1/vehicles/${sys}/1/command`, { command: name, params })

const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
try {
  // The three, by name, in the ground router's systems.
  const named = await until(async () => {
    const r = await api('GET', '/api/v1/systems')
    const v = (r.json?.systems || []).filter((s) => s.component === 1 && s.type).map((s) => `${s.system}=${s.vehicle}`)
    return v.length === 3 ? v.join(' ') : ''
  }, 60000)
  check(named === '11=copter-1 12=copter-2 13=copter-3', `the ground router names the three copters (${named})`)
  // Their telemetry at 4 Hz (as a ground station asks), home as soon as it is set.
  for (const sys of [11, 12, 13]) {
    await api('POST', '/v1/mavlink', { header: { system_id: 255, component_id: 190, sequence: 0 },
      message: { type: 'REQUEST_DATA_STREAM', target_system: sys, target_component: 1, req_stream_id: 0, req_message_rate: 4, start_stop: 1 } })
  }
  const page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 800 })
  page.on('dialog', (d) => d.accept())
  await page.goto(`http://127.0.0.1:${httpPort}/`)
  await page.evaluate((tok) => sessionStorage.setItem('mavswitch-token', tok), token)
  await page.goto(`http://127.0.0.1:${httpPort}/`)
  const titles = await until(() => page.$$eval('#vehicles .card h3', (h) => h.map((x) => x.textContent).sort().join(' | '))
    .then((s) => (s.split('copter-').length === 4 ? s : '')), 30000)
  check(/^copter-1 · quadrotor · system 11 \| copter-2 · quadrotor · system 12 \| copter-3 · quadrotor · system 13$/.test(titles),
    `the page names each card (${titles})`)
  const rows = await page.$$eval('#systems tbody tr', (r) => r.map((x) => x.cells[0].textContent).filter(Boolean).sort().join(' '))
  check(rows === 'copter-1 copter-2 copter-3', `and each row of the systems table (${rows})`)
  if (shots) await page.screenshot({ path: path.join(shots, 'fleet-desktop.png'), fullPage: true })

  const fact = (name) => page.evaluate((n) => {
    const f = document.querySelector(`#vehicles .card[data-system="12"] .fact[data-fact="${n}"] .value`)
    return f ? f.textContent : ''
  }, name)
  // copter-2 flies: GUIDED, armed once its EKF lets it (about 40 s after boot), up to 15 m. As an
  // operator would, once a second: GUIDED asked while the card does not show it (ArduPilot says
  // MAV_RESULT_FAILED until it has a position), then arming while it is disarmed, then the
  // takeoff, until the vehicle takes it. A vehicle that falls back (a slow SITL disarms, or leaves
  // GUIDED) is asked again from where it is; SITL's EKF, not the router, decides when.
  const asked = { guided: '', armed: '', takeoff: null }
  const flying = await until(async () => {
    if (!/GUIDED/.test(await fact('mode'))) {
      const r = await command(12, 'MAV_CMD_DO_SET_MODE', [1, 4])
      if (r.json?.result === 'MAV_RESULT_ACCEPTED') asked.guided = 'accepted'
      return false
    }
    if (!/^ARMED/.test(await fact('armed'))) {
      const r = await command(12, 'MAV_CMD_COMPONENT_ARM_DISARM', [1])
      if (r.json?.result === 'MAV_RESULT_ACCEPTED') asked.armed = 'accepted'
      return false
    }
    asked.takeoff = await command(12, 'MAV_CMD_NAV_TAKEOFF', [0, 0, 0, 0, 0, 0, 15])
    return asked.takeoff.json?.result === 'MAV_RESULT_ACCEPTED'
  }, 150000, 1000)
  check(asked.guided === 'accepted', `copter-2 in GUIDED through the API (${await fact('mode')})`)
  check(asked.armed === 'accepted', 'copter-2 armed through the API')
  check(flying, `took off (${JSON.stringify(asked.takeoff?.json)})`)
  const up = await until(async () => { const a = await fact('altitude'); return parseFloat(a) >= 8 ? a : '' }, 60000)
  check(up, `the card shows it climbing (${up})`)
  check(/^ARMED · \d+:\d\d in flight$/.test(await fact('armed')), `armed, and for how long (${await fact('armed')})`)
  check(/GUIDED/.test(await fact('mode')), `in GUIDED (${await fact('mode')})`)
  check(/\d+\.\d m\/s ground/.test(await fact('speed')) && /^-?\d+\.\d m\/s$/.test(await fact('climb')),
    `speeds and climb (${await fact('speed')}; ${await fact('climb')})`)
  check(/sats/.test(await fact('gps')) && /V/.test(await fact('battery')), `GPS and battery (${await fact('gps')}; ${await fact('battery')})`)
  check(/^(ok|BAD)/.test(await fact('ekf')), `the EKF's health (${await fact('ekf')})`)
  if (shots) {
    await page.screenshot({ path: path.join(shots, 'fleet-mid-flight-desktop.png'), fullPage: true })
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true })
    await until(() => page.$('#vehicles .card[data-system="12"]'))
    const card = await page.$('#vehicles .card[data-system="12"]')
    await card.screenshot({ path: path.join(shots, 'fleet-mid-flight-phone-card.png') })
    await page.screenshot({ path: path.join(shots, 'fleet-phone.png'), fullPage: true })
  }
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)
  check(fits, 'the fleet page fits a 390-pixel-wide phone screen')
  await command(12, 'MAV_CMD_NAV_LAND', [0, 0, 0, 0, 0, 0, 0])
} finally {
  await browser.close()
  await stop()
  fs.rmSync(scratch, { recursive: true, force: true })
}
t.done('fleet page')
