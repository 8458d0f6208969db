// The page's vehicle services in Debian's chromium against ArduPilot SITL (instance 17, logging
// from boot) behind mavswitchd: without the token the panels read (the mission on its plan view,
// the logs, the parameters) and every change is disabled; with it, a parameter is edited and an
// action asked for behind a confirmation (cancelled: nothing sent; confirmed: the vehicle's
// answer shown). A log downloads with its progress to the last byte. The plan is drawn over map
// tiles from a tile server on loopback ([Http] MapTiles). Screenshots of each.
// Usage: node services_page.mjs MAVSWITCHD SITL_START_SH [SCREENSHOT_DIR]   (exit 77: skipped)
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import puppeteer from 'puppeteer-core'
import { freePort, processes, skipUnless, tally, until } from './support.mjs'

const [daemon, sitlStart, shots] = process.argv.slice(2)
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p))
skipUnless([[!chromium, 'chromium is not installed (Debian package chromium)'],
  [!sitlStart || !fs.existsSync(sitlStart), '../shared/sitl is not here: the services page test uses ArduPilot SITL']])
if (shots) fs.mkdirSync(shots, { recursive: true })
const t = tally()
const check = t.check
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mavswitch-services-page-'))
const token = 'services-page-token-0123456789abcdef'
fs.writeFileSync(path.join(scratch, 'token'), token + '\n', { mode: 0o600 })
fs.writeFileSync(path.join(scratch, 'site.parm'), 'LOG_DISARMED 1\n')
const httpPort = await freePort('tcp')
// The map's tile server: a light grey tile for every z/x/y asked, each asked noted.
const tilesAsked = []
const grey = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGO4cOECAATkAnECaf5bAAAAAElFTkSuQmCC', 'base64')
const tiles = http.createServer((req, res) => {
  tilesAsked.push(req.url)
  res.writeHead(200, { 'Content-Type': 'image/png', 'Access-Control-Allow-Origin': '*' })
  res.end(grey)
})
await new Promise((resolve) => tiles.listen(0, '127.0.0.1', resolve))
const instance = 17
const { start, stop } = processes()
start('bash', [sitlStart, String(instance), path.join(scratch, 'sitl')], { SITL_DEFAULTS: path.join(scratch, 'site.parm') })
const conf = path.join(scratch, 'main.conf')
fs.writeFileSync(conf, `[General]\nTcpServerPort = 0\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\nPort = ${5760 + 10 * instance}\n` +
  `[Http]\nTokenFile = ${path.join(scratch, 'token')}\nMapTiles = http://127.0.0.1:${tiles.address().port}/{z}/{x}/{y}.png\n`)
start(daemon, ['-c', conf, '--http', `127.0.0.1:${httpPort}`])

const api = async (method, p, body) => {
  try {
    const r = await fetch(`http://127.0.0.1:${httpPort}${p}`, { method, body: body && JSON.stringify(body), headers: { Authorization: 'Bearer ' + token } })
    return { status: r.status, json: await r.json().catch(() => null) }
  } catch { return { status: 0, json: null } }
}
const plan = {
  fileType: 'Plan', version: 1, groundStation: 'QGroundControl',
  mission: { version: 2, firmwareType: 3, vehicleType: 2, cruiseSpeed: 15, hoverSpeed: 5, plannedHomePosition: [-35.3632621, 149.1652374, 584],
    items: [{ type: 'SimpleItem', command: 22, frame: 3, autoContinue: true, params: [0, 0, 0, 0, 0, 0, 15] },
      ...[0, 1, 2, 3, 4].map((k) => ({ type: 'SimpleItem', command: 16, frame: 3, autoContinue: true, params: [0, 0, 0, 0, -35.362 + 0.0008 * (k % 2), 149.164 + 0.0006 * k, 20] }))] },
  geoFence: { version: 2, circles: [], polygons: [{ polygon: [[-35.3615, 149.1630], [-35.3615, 149.1680], [-35.3650, 149.1680], [-35.3650, 149.1630]], inclusion: true, version: 1 }] },
  rallyPoints: { version: 2, points: [[-35.3640, 149.1660, 30]] },
}

const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
try {
  const heard = await until(async () => (await api('GET', '/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT')).status === 200, 30000)
  check(heard, 'SITL heard through the router')
  // A mission to read back on the page (ArduPilot answers NO_SPACE until its storage is ready).
  let last = null
  const put = await until(async () => {
    last = await api('PUT', '/v1/vehicles/1/1/mission', plan)
    return last.json?.accepted ? last : null
  }, 60000)
  check(put, `a mission, fence and rally point written through the API (${JSON.stringify(last?.json)})`)

  const page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 900 })
  await page.goto(`http://127.0.0.1:${httpPort}/`)
  // Presses a button as a click event on it, not at its place on the screen: the live sections
  // above redraw every second, and on a busy machine a mouse click can land where the button was.
  const press = (selector) => page.$eval(selector, (b) => b.click())
  await until(() => page.$eval('#services', (s) => !s.hidden).catch(() => false), 20000)
  // No token: read-only.
  check(/read-only/.test(await page.$eval('#svc-access', (e) => e.textContent)), 'without the token the panel says it is read-only')
  check(await page.$$eval('#services .change', (b) => b.length > 0 && b.every((x) => x.disabled)), 'and every change is disabled')

  await press('#mission-read')
  const said = await until(() => page.$eval('#mission-said', (e) => (/items/.test(e.textContent) ? e.textContent : '')), 30000)
  check(/^6 items · 1 fence shapes · 1 rally points$/.test(said), `the mission read on the page (${said})`)
  // Drawn: the fence in red, the path in the accent's blue, the rally point in amber, home in green.
  const drawn = await page.$eval('#plan', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
    const n = { red: 0, blue: 0, green: 0, amber: 0 }
    for (let i = 0; i < d.length; i += 4) {
      const [r, g, b, a] = [d[i], d[i + 1], d[i + 2], d[i + 3]]
      if (a < 200) continue
      if (r > 180 && g < 90 && b < 90) n.red++
      else if (r < 80 && g > 100 && b > 200) n.blue++
      else if (r < 80 && g > 130 && b < 100) n.green++
      else if (r > 180 && g > 100 && g < 160 && b < 60) n.amber++
    }
    return n
  })
  // (Home is drawn once ArduPilot has set it, after its GPS fix: not yet, so soon after boot.)
  check(drawn.red > 20 && drawn.blue > 20 && drawn.amber > 20, `the fence, path and rally point on the plan view (${JSON.stringify(drawn)})`)
  // Under them the map's tiles: asked for the plan's place (Web Mercator at the zoom asked), and drawn.
  const tileOf = (lat, lon, z) => [Math.floor((lon + 180) / 360 * 2 ** z),
    Math.floor((1 - Math.log(Math.tan(lat * Math.PI / 180) + 1 / Math.cos(lat * Math.PI / 180)) / Math.PI) / 2 * 2 ** z)]
  const asked = () => tilesAsked.map((u) => u.match(/^\/(\d+)\/(\d+)\/(\d+)\.png$/)).filter(Boolean).map((m) => m.slice(1).map(Number))
  const covers = await until(() => asked().some(([z, x, y]) => z >= 14 && String(tileOf(-35.363, 149.165, z)) === String([x, y])), 10000)
  check(covers && asked().length <= 64, `the map's tiles for the plan's place asked (${asked.length}: ${tilesAsked.slice(0, 4).join(' ')})`)
  const greyDrawn = await until(() => page.$eval('#plan', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
    let n = 0
    for (let i = 0; i < d.length; i += 4) if (d[i] === 208 && d[i + 1] === 208 && d[i + 2] === 208 && d[i + 3] === 255) n++
    return n > 1000 ? n : 0
  }), 10000)
  check(greyDrawn, `and drawn under the plan (${greyDrawn} tile pixels)`)
  if (shots) await (await page.$('#mission-panel')).screenshot({ path: path.join(shots, 'services-mission.png') })

  // Listed again until the vehicle has one: SITL opens its first log (LOG_DISARMED) as it boots,
  // which a slow machine may not have done by the first ask.
  const listed = async () => {
    await press('#logs-list')
    await until(() => page.$eval('#logs-said', (e) => !/listing/.test(e.textContent)), 20000)
    return page.$$eval('#logs tbody tr', (r) => r.length)
  }
  const logs = await until(listed, 60000, 500)
  check(logs >= 1, `the onboard logs listed (${logs}; the page said "${await page.$eval('#logs-said', (e) => e.textContent)}")`)
  await press('#logs tbody tr:last-child button')
  const saved = await until(() => page.$eval('#logs tbody tr:last-child a', (a) => Number(a.dataset.size)).catch(() => 0), 90000)
  const progress = await page.$eval('#logs tbody tr:last-child progress', (p) => [p.value, p.max])
  check(saved > 0 && progress[0] === progress[1] && saved === progress[1], `a log downloaded with its progress to the end (${saved} bytes; ${progress})`)

  await press('#params-load')
  const loaded = await until(async () => {
    const said = await page.$eval('#params-said', (e) => e.textContent)
    if (/^\d+ parameters/.test(said)) return said
    if (!/loading/.test(said)) await press('#params-load') // it said why not: again, as an operator would
    return ''
  }, 90000)
  check(loaded, `the parameters loaded (${loaded})`)
  await page.type('#params-search', 'WPNAV_SPEED')
  const rows = await page.$$eval('#params tbody tr', (r) => r.map((x) => x.dataset.name))
  check(rows.includes('WPNAV_SPEED') && rows.every((n) => n.includes('WPNAV_SPEED')), `the search finds WPNAV_SPEED (${rows.join(' ')})`)
  check(await page.$eval('#params tbody tr[data-name="WPNAV_SPEED"] button', (b) => b.disabled), 'its edit is disabled without the token')
  if (shots) await page.screenshot({ path: path.join(shots, 'services-read-only.png'), fullPage: true })

  // The token: changes.
  await page.type('#svc-token', token)
  await press('#unlock button')
  check(/changes allowed/.test(await page.$eval('#svc-access', (e) => e.textContent)), 'with the token changes are allowed')
  await press('#params tbody tr[data-name="WPNAV_SPEED"] button')
  await page.$eval('#params tbody tr[data-name="WPNAV_SPEED"] input', (i) => { i.value = '' })
  await page.type('#params tbody tr[data-name="WPNAV_SPEED"] input', '812')
  await page.keyboard.press('Enter')
  await until(() => page.$eval('#params-said', (e) => /now 812/.test(e.textContent)), 20000)
  const back = await api('GET', '/v1/vehicles/1/1/parameters/WPNAV_SPEED')
  check(back.json?.value === 812, `the edit reached the vehicle (${JSON.stringify(back.json)})`)

  // An action: cancelled, nothing is sent; confirmed, the vehicle's answer is shown.
  await press('#act-disarm')
  await until(() => page.$eval('#confirm', (d) => d.open), 5000)
  if (shots) await page.screenshot({ path: path.join(shots, 'services-confirm.png') })
  await (await page.waitForSelector('#confirm button[value="cancel"]', { visible: true, timeout: 10000 })).click()
  check(/not sent/.test(await until(() => page.$eval('#action-said', (e) => e.textContent), 5000)), 'a cancelled action is not sent')
  await press('#act-disarm')
  await until(() => page.$eval('#confirm', (d) => d.open), 5000)
  await (await page.waitForSelector('#confirm-ok', { visible: true, timeout: 10000 })).click()
  const result = await until(() => page.$eval('#action-said', (e) => (/MAV_RESULT/.test(e.textContent) ? e.textContent : '')), 20000)
  check(/^Disarm: MAV_RESULT_ACCEPTED$/.test(result), `a confirmed action shows the vehicle's answer (${result})`)
  // A mode from the copter's own list (a plane's are not offered), set behind the same confirmation.
  const modes = await page.$$eval('#mode option', (o) => o.map((x) => x.value))
  check(modes.includes('ALT_HOLD') && modes.includes('BRAKE') && !modes.includes('FBWA'), `ArduCopter's modes offered (${modes.join(' ')})`)
  await page.select('#mode', 'ALT_HOLD')
  await press('#act-mode')
  await until(() => page.$eval('#confirm', (d) => d.open), 5000)
  await (await page.waitForSelector('#confirm-ok', { visible: true, timeout: 10000 })).click()
  const moded = await until(() => page.$eval('#action-said', (e) => (/^Mode.*MAV_RESULT/.test(e.textContent) ? e.textContent : '')), 20000)
  const customMode = await until(async () => {
    const hb = await api('GET', '/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT')
    return hb.json?.message?.custom_mode === 2 ? 2 : 0
  }, 10000)
  check(/MAV_RESULT_ACCEPTED$/.test(moded) && customMode === 2, `the mode set: ${moded}; its HEARTBEAT says custom_mode ${customMode}`)
  if (shots) await page.screenshot({ path: path.join(shots, 'services-changes.png'), fullPage: true })
  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true }) // (reloads the page)
  await until(() => page.$eval('#services', (s) => !s.hidden).catch(() => false), 20000)
  await press('#mission-read')
  await until(() => page.$eval('#mission-said', (e) => /items/.test(e.textContent)), 30000)
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)
  check(fits, 'the services fit a 390-pixel-wide phone screen')
  if (shots) await page.screenshot({ path: path.join(shots, 'services-phone.png'), fullPage: true })
} finally {
  await browser.close()
  tiles.close()
  await stop()
  fs.rmSync(scratch, { recursive: true, force: true })
}
t.done('services page')
