// The status page in a real browser: Debian's chromium, driven by puppeteer-core, against
// mavswitchd with a node-mavlink vehicle streaming through it. The page loads nothing from
// elsewhere, shows the links with their live rates and plots, the systems heard, fits a phone's
// screen, and asks for the token when the router wants one.
// Usage: node page.mjs MAVSWITCHD [SCREENSHOT_DIR]   (exit 77: skipped, chromium missing)
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MavLinkProtocolV2, ardupilotmega, common, minimal } from 'node-mavlink'
import puppeteer from 'puppeteer-core'
import { freePort, tally, until } from './support.mjs'

const [daemon, shots] = process.argv.slice(2)  // the screenshots are kept in `shots` (a test artifact)
if (shots) fs.mkdirSync(shots, { recursive: true })
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p))
if (!chromium) {
  console.log('SKIP: chromium is not installed (Debian package chromium; scripts/setup.sh --tests)')
  process.exit(77)
}
const t = tally()
const check = t.check

const vehiclePort = await freePort('udp')
const gcsPort = await freePort('udp')
const httpPort = await freePort('tcp')
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-page-'))
const tokenFile = path.join(scratch, 'token')
fs.writeFileSync(tokenFile, 'page-test-token-0123456789abcdef\n', { mode: 0o600 })

function startDaemon (listen, extra = []) {
  const d = spawn(daemon, ['-t', '0', '--http', `${listen}:${httpPort}`, ...extra,
    `127.0.0.1:${vehiclePort}`, `127.0.0.1:${gcsPort}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  d.stderr.on('data', () => {})
  return d
}

// A vehicle (1/1) streaming HEARTBEAT at 1 Hz and ATTITUDE at 50 Hz, and a ground station.
const vehicle = dgram.createSocket('udp4')
const gcs = dgram.createSocket('udp4')
await new Promise((resolve) => vehicle.bind(0, '127.0.0.1', resolve))
await new Promise((resolve) => gcs.bind(0, '127.0.0.1', resolve))
const fromVehicle = new MavLinkProtocolV2(1, 1)
const fromGcs = new MavLinkProtocolV2(255, 190)
let seq = 0
let gcsSeq = 0
// When each ATTITUDE went: a busy machine's timer sends fewer than 50 a second, and the
// inspector must show what was sent, not what was meant.
const attitudeSent = []
const sentRate = (seconds) => attitudeSent.filter((t) => t > Date.now() - seconds * 1000).length / seconds
const heartbeat = new minimal.Heartbeat()
heartbeat.type = minimal.MavType.QUADROTOR
heartbeat.autopilot = minimal.MavAutopilot.ARDUPILOTMEGA
heartbeat.baseMode = 1 | 128 // custom mode, armed
heartbeat.customMode = 4 // ArduCopter GUIDED
// Once a second too: what the vehicle card shows (battery, GPS, position, a STATUSTEXT line).
const sysStatus = new common.SysStatus()
sysStatus.batteryRemaining = 76
sysStatus.voltageBattery = 15800
sysStatus.currentBattery = 1230 // 12.3 A
// Gyro, accelerometer, GPS and the pre-arm check present and enabled; the compass not healthy.
const GYRO = 1; const ACCEL = 2; const MAG = 4; const GPS = 32; const PREARM = 0x10000000
sysStatus.onboardControlSensorsPresent = sysStatus.onboardControlSensorsEnabled = GYRO | ACCEL | MAG | GPS | PREARM
sysStatus.onboardControlSensorsHealth = GYRO | ACCEL | GPS | PREARM
const gpsRaw = new common.GpsRawInt()
gpsRaw.fixType = 3 // GPS_FIX_TYPE_3D_FIX
gpsRaw.satellitesVisible = 12
gpsRaw.eph = 80 // HDOP 0.8
// Flying north-east from home at 5 m/s, 12.5 m up: the track grows a point a second.
const position = new common.GlobalPositionInt()
position.lat = 473977420
position.lon = 85455940
position.alt = 500500 // 500.5 m above sea level
position.relativeAlt = 12500
const home = new common.HomePosition()
home.latitude = 473977420
home.longitude = 85455940
home.altitude = 488000
const hud = new common.VfrHud()
hud.groundspeed = 5.0
hud.airspeed = 6.5
hud.heading = 45
hud.alt = 500.5
hud.climb = 0.4
const battery = new common.BatteryStatus()
battery.timeRemaining = 754 // s
battery.voltages = new Array(10).fill(65535)
const ekf = new ardupilotmega.EkfStatusReport()
ekf.flags = 1 | 2 | 8 | 16 // attitude, velocity horizontal, position horizontal relative and absolute
ekf.velocityVariance = 0.1
ekf.posHorizVariance = 0.05
ekf.posVertVariance = 0.07
ekf.compassVariance = 0.2
ekf.terrainAltVariance = 0
// The vehicle's telemetry radio, as a SiK radio reports itself (system 51, component 68).
const fromRadio = new MavLinkProtocolV2(51, 68)
const radioStatus = new common.RadioStatus()
radioStatus.rssi = 180
radioStatus.remrssi = 175
radioStatus.noise = 40
radioStatus.remnoise = 38
radioStatus.rxerrors = 3
radioStatus.fixed = 1
radioStatus.txbuf = 95
let radioSeq = 0
const said = new common.StatusText()
said.severity = 6 // MAV_SEVERITY_INFO
said.text = 'EKF3 IMU0 is using GPS'
const stream = setInterval(() => {
  const attitude = new common.Attitude()
  attitude.timeBootMs = Date.now() % 1e9
  attitude.roll = Math.sin(Date.now() / 500)
  attitude.pitch = 0.1
  attitude.yaw = Math.PI / 4
  vehicle.send(fromVehicle.serialize(attitude, seq++ & 255), vehiclePort, '127.0.0.1')
  attitudeSent.push(Date.now())
  if (attitudeSent.length > 500) attitudeSent.splice(0, 250)
  if (seq % 50 === 0) {
    position.lat += 320 // about 3.5 m north and east a second
    position.lon += 480
    for (const m of [sysStatus, gpsRaw, position, home, hud, battery, ekf, said]) vehicle.send(fromVehicle.serialize(m, seq++ & 255), vehiclePort, '127.0.0.1')
    vehicle.send(fromVehicle.serialize(heartbeat, seq++ & 255), vehiclePort, '127.0.0.1')
    vehicle.send(fromRadio.serialize(radioStatus, radioSeq++ & 255), vehiclePort, '127.0.0.1')
    gcs.send(fromGcs.serialize(heartbeat, gcsSeq++ & 255), gcsPort, '127.0.0.1')
  }
}, 20)

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
})
// A third link, limited to 5 ATTITUDE a second: its drops show by cause.
const limited = dgram.createSocket('udp4')
await new Promise((resolve) => limited.bind(0, '127.0.0.1', resolve))
const limitedConf = path.join(scratch, 'limited.conf')
// And a UDP server nobody sends to: listed all the same.
const quietPort = await freePort('udp')
fs.writeFileSync(limitedConf, `[UdpEndpoint limited]\nMode = Normal\nAddress = 127.0.0.1\nPort = ${limited.address().port}\nRateLimitOut = ATTITUDE:5\n` +
  `[UdpEndpoint quiet]\nMode = Server\nAddress = 127.0.0.1\nPort = ${quietPort}\n`)
let router = startDaemon('127.0.0.1', ['-c', limitedConf])
try {
  const page = await browser.newPage()
  const errors = []
  const elsewhere = []
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  page.on('pageerror', (e) => errors.push(e.message))
  // data: URLs come from the page itself (a canvas read back, say), not from another server.
  page.on('request', (r) => {
    const url = r.url()
    if (!url.startsWith(`http://127.0.0.1:${httpPort}/`) && !url.startsWith('data:')) elsewhere.push(url)
  })
  // How many pixels of the canvas at `selector` are drawn on.
  const ink = (selector) => page.evaluate((sel) => {
    const c = document.querySelector(sel)
    if (!c || c.width === 0) return 0
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
    let n = 0
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++
    return n
  }, selector)
  await page.setViewport({ width: 1280, height: 800 })
  await until(async () => { try { return (await page.goto(`http://127.0.0.1:${httpPort}/`)).ok() } catch { return false } })

  // The vehicle's link shows its live rate (about 50 frames a second in).
  const vehicleRx = async () => page.evaluate((port) => {
    const row = [...document.querySelectorAll('#links tbody tr[data-link]')].find((r) => r.dataset.link.startsWith('udp-server:'))
    return row ? Number(row.querySelector('.rx').textContent) : -1
  }, vehiclePort)
  const rx = await until(async () => { const v = await vehicleRx(); return v >= 30 ? v : 0 })
  check(rx >= 30 && rx <= 80, `the vehicle's link shows ~50 frames/s in (${rx})`)
  check(await page.$eval('#state', (s) => s.textContent) === 'live', 'the page says it is live')
  const routed = () => page.$eval('#routed', (s) => Number(s.textContent.split(' ')[0].replace('k', 'e3').replace('M', 'e6')))
  const firstCount = await routed()
  const later = await until(async () => { const n = await routed(); return n > firstCount ? n : 0 })
  check(later > firstCount, `its numbers change as traffic flows (${firstCount} then ${later} frames routed)`)
  const systems = await until(() => page.$$eval('#systems tbody tr', (rows) => rows.map((r) => r.dataset.system).join(' ')).then((s) => s.includes('1/1') && s.includes('255/190') ? s : ''))
  check(systems, `the systems heard: the vehicle and the ground station (${systems})`)
  const vehicleRow = await page.$eval('#systems tbody tr[data-system="1/1"]', (r) => [...r.cells].map((c) => c.textContent).join('|'))
  check(/quadrotor\|ArduPilot\|GUIDED\|ARMED\|\d+\.\d s/.test(vehicleRow), `the vehicle's type, autopilot, mode, armed, last heard (${vehicleRow})`)
  const why = await until(() => page.evaluate(() => {
    const row = document.querySelector('#links tbody tr[data-link^="limited"]')
    const c = row && row.querySelector('.dropped .causes')
    return c ? c.textContent : ''
  }).then((t) => /rate limited out \d+/.test(t) ? t : ''))
  check(why, `drops are shown by cause (${why})`)
  const air = await until(() => page.evaluate(() => {
    const row = [...document.querySelectorAll('#links tbody tr[data-link]')].find((r) => r.dataset.link.startsWith('udp-server:'))
    const r = row && row.querySelector('.name .radio')
    return r ? r.textContent : ''
  }))
  check(/RSSI 180\/175, noise 40\/38, rx errors 3/.test(air), `the vehicle's link shows its radio (${air})`)
  const quiet = await until(() => page.evaluate(() => {
    const row = document.querySelector('#links tbody tr.waiting[data-endpoint="quiet"]')
    return row ? row.textContent : ''
  }))
  check(/quiet.*no link up yet/.test(quiet), `an endpoint with no peer is listed (${quiet})`)
  // A second vehicle says one thing, once, before a page opens: the page opened after shows it,
  // coloured by its severity (the router kept it).
  const second = new MavLinkProtocolV2(2, 1)
  const preArm = new common.StatusText()
  preArm.severity = 2 // MAV_SEVERITY_CRITICAL
  preArm.text = 'PreArm: Compass not calibrated'
  vehicle.send(second.serialize(heartbeat, 0), vehiclePort, '127.0.0.1')
  vehicle.send(second.serialize(preArm, 1), vehiclePort, '127.0.0.1')
  const keptByRouter = await until(async () => {
    const r = await fetch(`http://127.0.0.1:${httpPort}/api/v1/statustext`)
    return (await r.json()).systems.some((s) => s.system === 2)
  })
  check(keptByRouter, 'the router keeps what vehicle 2 said')
  const fresh = await browser.newPage()
  await fresh.goto(`http://127.0.0.1:${httpPort}/`)
  const said2 = await until(() => fresh.evaluate(() => {
    const li = document.querySelector('#vehicles .card[data-system="2"] .statustext li')
    return li ? `${li.className} ${li.textContent}` : ''
  }))
  check(said2 === 'severity-2 CRITICAL: PreArm: Compass not calibrated', `a page opened later shows it at once (${said2})`)
  // The router's history, on the page just opened: each link's seconds and the vehicle's track
  // from before it opened, at once (the vehicle has flown for several seconds by now).
  await until(() => fetch(`http://127.0.0.1:${httpPort}/api/v1/history`).then((r) => r.json())
    .then((h) => h.tracks.some((t) => t.system === 1 && t.points.length >= 5)))
  const loaded = await until(() => fresh.evaluate(() => {
    const link = [...linkHistory.values()].reduce((a, b) => Math.max(a, b.length), 0)
    const track = (tracks.get(1) || []).length
    return link >= 5 && track >= 5 ? { link, track } : null
  }), 3000)
  check(loaded, `a page just opened has the router's history: link seconds and track points (${JSON.stringify(loaded)})`)
  if (shots) await fresh.screenshot({ path: path.join(shots, 'history-fresh-page.png') })
  await fresh.close()
  // Its plot is drawn once a few seconds of history have come (one sample a second).
  const drawn = () => ink('#links tbody tr[data-link] canvas')
  const pixels = await until(async () => { const n = await drawn(); return n > 20 ? n : 0 }, 10000)
  check(pixels > 20, `the link's plot is drawn (${pixels} pixels)`)
  if (shots) await page.screenshot({ path: path.join(shots, 'status-desktop.png') })

  // The vehicle card: mode, armed, battery, GPS, position, what it said.
  const card = await until(() => page.evaluate(() => {
    const c = document.querySelector('#vehicles .card[data-system="1"]')
    return c && /STATUSTEXT|EKF3/.test(c.textContent) ? c.textContent : ''
  }))
  const fact = (name) => page.evaluate((n) => {
    const f = document.querySelector(`#vehicles .card[data-system="1"] .fact[data-fact="${n}"] .value`)
    return f ? f.textContent : ''
  }, name)
  check(/GUIDED/.test(card) && /INFO: EKF3 IMU0 is using GPS/.test(card), `the vehicle card: mode and STATUSTEXT (${card})`)
  check(/^ARMED · \d+:\d\d in flight$/.test(await fact('armed')), `armed, and for how long (${await fact('armed')})`)
  check(await fact('heading') === '45°', `heading (${await fact('heading')})`)
  check(await fact('speed') === '5.0 m/s ground · 6.5 m/s air', `ground and air speed (${await fact('speed')})`)
  check(await fact('altitude') === '12.5 m rel · 500.5 m MSL', `altitude above home and sea level (${await fact('altitude')})`)
  check(await fact('climb') === '0.4 m/s', `climb (${await fact('climb')})`)
  check(/^\d+ m · bearing 2\d\d° to home$/.test(await fact('home')), `distance and bearing home (south-west) (${await fact('home')})`)
  check(await fact('gps') === '3D_FIX · 12 sats · HDOP 0.8', `GPS fix, satellites, HDOP (${await fact('gps')})`)
  check(await fact('battery') === '76 % · 15.80 V · 12.3 A · 12:34 left', `battery (${await fact('battery')})`)
  check(/^ok · worst variance 0\.20$/.test(await fact('ekf')), `the EKF's health (${await fact('ekf')})`)
  check(await fact('pre-arm') === 'pass', `pre-arm checks (${await fact('pre-arm')})`)
  check(await fact('sensors') === 'unhealthy: 3d mag', `the sensor SYS_STATUS says is not healthy (${await fact('sensors')})`)
  const attitudeInk = await until(async () => { const n = await ink('#vehicles .card[data-system="1"] canvas.attitude'); return n > 1000 ? n : 0 })
  check(attitudeInk > 1000, `the attitude indicator is drawn (${attitudeInk} pixels)`)
  const trackInk = await until(async () => { const n = await ink('#vehicles .card[data-system="1"] canvas.track'); return n > 50 ? n : 0 })
  check(trackInk > 50, `the track is drawn on its scaled plot (${trackInk} pixels)`)
  // The inspector: the vehicle's messages with their rates and newest fields, live.
  const attitudeRow = () => page.evaluate(() => {
    const row = document.querySelector('#messages tbody tr[data-message="ATTITUDE"]')
    return row ? [...row.cells].map((c) => c.textContent) : null
  })
  const first = await until(attitudeRow)
  const sent = sentRate(3)
  check(first && sent > 5 && Math.abs(Number(first[1]) - sent) < 0.35 * sent,
    `the inspector lists ATTITUDE at the rate it was sent (${first && first[1]} Hz shown, ${sent.toFixed(1)} Hz sent)`)
  const changed = await until(async () => { const now = await attitudeRow(); return now && now[2] !== first[2] ? now : null })
  check(changed && /roll/.test(changed[2]), `its fields change live (${first && first[2]} then ${changed && changed[2]})`)
  await page.type('#search', 'gps')
  const found = await until(() => page.$$eval('#messages tbody tr', (rows) => rows.map((r) => r.dataset.message))
    .then((names) => names.length > 0 && names.every((n) => /GPS/.test(n) || n === 'GLOBAL_POSITION_INT' || n === 'SYS_STATUS') ? names : null))
  check(found && found.includes('GPS_RAW_INT') && !found.includes('ATTITUDE'), `searching "gps" keeps the GPS messages (${found})`)
  await page.$eval('#search', (i) => { i.value = ''; i.dispatchEvent(new Event('input')) })
  await until(() => page.$('#messages tbody tr[data-message="ATTITUDE"]'))
  await page.click('#messages tbody tr[data-message="ATTITUDE"]')
  await until(() => page.$$eval('#field option', (o) => o.length > 0))
  await page.select('#field', 'roll')
  const historyDrawn = () => ink('#history')
  const historyPixels = await until(async () => { const n = await historyDrawn(); return n > 200 ? n : 0 })
  check(historyPixels > 200, `a message clicked: its history plotted with its scale (${historyPixels} pixels)`)
  const gap = await page.evaluate(() => {
    const row = document.querySelector('#messages tbody tr[data-message="ATTITUDE"]')
    return document.getElementById('detail').getBoundingClientRect().top - row.getBoundingClientRect().bottom
  })
  check(gap >= 0 && gap < 20, `its plot opens right under its row, not below every row (${gap} px)`)
  const fieldRows = await page.$$eval('#fields tr', (r) => r.map((x) => x.textContent).join(' '))
  check(/roll/.test(fieldRows) && /time_boot_ms/.test(fieldRows), 'and its newest fields listed')
  // The router's own component, once it has sent (a command here), is named, not a blank row.
  fetch(`http://127.0.0.1:${httpPort}/v1/vehicles/1/1/command`, { method: 'POST', body: '{"command":"MAV_CMD_REQUEST_MESSAGE","params":[148]}' }).catch(() => {})
  const own = await until(() => page.evaluate(() => {
    const row = [...document.querySelectorAll('#systems tbody tr')].find((r) => /mavswitch/.test(r.textContent))
    return row ? row.textContent : ''
  }))
  check(/mavswitch: the router/.test(own), `the router's own component is named (${own})`)
  if (shots) await page.screenshot({ path: path.join(shots, 'inspector-desktop.png'), fullPage: true })

  // A phone (the page loads again): no sideways scrolling, the name, rates and plot still there.
  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true })
  const phonePixels = await until(async () => { const n = await drawn(); return n > 20 ? n : 0 })
  check(phonePixels > 20, `on a phone the plot is drawn (${phonePixels} pixels)`)
  await until(() => page.$$eval('#messages tbody tr', (r) => r.length > 3))
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)
  check(fits, 'the page fits a 390-pixel-wide phone screen, the inspector and systems too')
  const visible = await page.evaluate(() => {
    const row = document.querySelector('#links tbody tr[data-link]')
    const shown = (sel) => { const e = row && row.querySelector(sel); return !!e && e.getBoundingClientRect().width > 0 }
    return shown('.name') && shown('.rx') && shown('.tx') && shown('canvas')
  })
  check(visible, "on a phone: the link's name, rates and plot are shown")
  const cardFits = await page.evaluate(() => [...document.querySelectorAll('.card, #messages, #detail, #systems')]
    .every((e) => e.getBoundingClientRect().right <= window.innerWidth + 1))
  check(cardFits, 'on a phone: the vehicle card, the inspector and the plot fit')
  if (shots) await page.screenshot({ path: path.join(shots, 'status-phone.png'), fullPage: true })
  check(errors.length === 0, `no errors in the page (${errors.join('; ')})`)
  check(elsewhere.length === 0, `nothing loaded from elsewhere (${elsewhere.join(', ')})`)
  await page.close()

  // A router that wants its token (it listens beyond loopback): the page asks, then shows.
  router.kill('SIGTERM')
  await new Promise((resolve) => router.on('exit', resolve))
  router = startDaemon('0.0.0.0', ['-c', writeConf()])
  const locked = await browser.newPage()
  await until(async () => { try { return (await locked.goto(`http://127.0.0.1:${httpPort}/`)).ok() } catch { return false } })
  // A look at the page that a navigation under way (the login reloads it) counts as "not yet".
  const look = (f) => async () => { try { return await f() } catch { return false } }
  const asked = await until(look(() => locked.$eval('#login', (f) => !f.hidden)))
  check(asked, 'the page asks for the token')
  await locked.type('#token', 'page-test-token-0123456789abcdef')
  await locked.click('#login button')
  const live = await until(look(() => locked.$eval('#state', (s) => s.textContent === 'live')))
  check(live, 'with the token the page is live')
  const rows = await until(look(() => locked.$$eval('#links tbody tr[data-link]', (r) => (r.length >= 2 ? r.length : 0))))
  check(rows >= 2, `with the token the links show (${rows})`)
  await locked.close()
} finally {
  clearInterval(stream)
  router.kill('SIGTERM')
  await browser.close()
  vehicle.close()
  limited.close()
  gcs.close()
  fs.rmSync(scratch, { recursive: true, force: true })
}

function writeConf () {
  const conf = path.join(scratch, 'http.conf')
  fs.writeFileSync(conf, `[Http]\nTokenFile = ${tokenFile}\n`)
  return conf
}

t.done('page')
