// A vehicle's services, through the router's /v1/vehicles API: its mission on a plan view (items,
// fence, rally points on a scaled grid), its onboard logs with a download's progress, its
// parameters to search and edit, and actions (arm, disarm, mode, takeoff, land, RTL), each
// behind a confirmation. Reading needs nothing; what changes the vehicle needs the token, and
// without one the panel is read-only. Uses page.js's helpers ($).
'use strict'

const svc = { system: null, params: {}, canChange: false, tiles: null, plan: null, modes: null }
const tileImages = new Map() // by URL: the map tiles asked for, drawn once loaded
// The modes a vehicle can be put in, by firmware: MAV_CMD_DO_SET_MODE's params after the first
// (MAV_MODE_FLAG_CUSTOM_MODE_ENABLED): ArduPilot's mode number; PX4's main mode and sub mode.
const MODES = {
  copter: { STABILIZE: [0], ACRO: [1], ALT_HOLD: [2], AUTO: [3], GUIDED: [4], LOITER: [5], RTL: [6], CIRCLE: [7], LAND: [9], POSHOLD: [16], BRAKE: [17], SMART_RTL: [21] },
  plane: { MANUAL: [0], CIRCLE: [1], STABILIZE: [2], ACRO: [4], FBWA: [5], FBWB: [6], CRUISE: [7], AUTO: [10], RTL: [11], LOITER: [12], TAKEOFF: [13], GUIDED: [15], QHOVER: [18], QLOITER: [19], QLAND: [20], QRTL: [21] },
  rover: { MANUAL: [0], ACRO: [1], STEERING: [3], HOLD: [4], LOITER: [5], AUTO: [10], RTL: [11], SMART_RTL: [12], GUIDED: [15] },
  sub: { STABILIZE: [0], ACRO: [1], ALT_HOLD: [2], AUTO: [3], GUIDED: [4], CIRCLE: [7], SURFACE: [9], POSHOLD: [16], MANUAL: [19] },
  px4: { MANUAL: [1], ALTITUDE: [2], POSITION: [3], MISSION: [4, 4], HOLD: [4, 3], TAKEOFF: [4, 2], LAND: [4, 6], RETURN: [4, 5], ACRO: [5], OFFBOARD: [6], STABILIZED: [7] },
}
// Which table a vehicle (as /api/v1/systems says it) takes, or none.
function modesOf (v) {
  if (!v) return null
  if (v.autopilot === 'PX4') return MODES.px4
  if (v.autopilot !== 'ArduPilot') return null
  const type = v.type || ''
  if (/wing|VTOL/i.test(type)) return MODES.plane
  if (/rover|boat/i.test(type)) return MODES.rover
  if (/submarine/i.test(type)) return MODES.sub
  if (/rotor|copter|coaxial|helicopter/i.test(type)) return MODES.copter
  return null
}

const token = () => sessionStorage.getItem('mavswitch-token')
const base = () => `/v1/vehicles/${svc.system}/1`

async function api (method, path, body) {
  const headers = {}
  if (token()) headers.Authorization = 'Bearer ' + token()
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const r = await fetch(base() + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' })
  const text = await r.text()
  let json = null
  try { json = JSON.parse(text) } catch {}
  if (r.status === 401) {
    sessionStorage.removeItem('mavswitch-token')
    access()
  }
  if (!r.ok) throw new Error((json && json.error) || `HTTP ${r.status}`)
  return json
}

function say (id, text, bad) {
  const p = $(id)
  p.textContent = text
  p.className = 'said' + (bad ? ' bad' : '')
}

// Read-only without the token: what changes the vehicle is shown but cannot be pressed.
function access () {
  svc.canChange = !!token()
  $('svc-access').textContent = svc.canChange ? 'changes allowed (token given)' : 'read-only: changes need the token'
  $('unlock').hidden = svc.canChange
  for (const b of document.querySelectorAll('#services .change')) b.disabled = !svc.canChange
}

// The vehicles to choose from: systems whose autopilot (component 1) is heard.
function refreshVehicles () {
  const select = $('svc-vehicle')
  const systems = (window.lastSystems || []).filter((s) => s.component === 1 && s.autopilot && s.autopilot !== 'none')
  const values = systems.map((s) => String(s.system))
  if (values.join() !== [...select.options].map((o) => o.value).join()) {
    const chosen = select.value
    select.replaceChildren(...systems.map((s) => new Option(`${s.vehicle || 'System ' + s.system} (${s.system})`, s.system)))
    if (values.includes(chosen)) select.value = chosen
  }
  svc.system = select.value || null
  $('services').hidden = !svc.system
  const modes = modesOf(systems.find((s) => String(s.system) === svc.system))
  if (modes !== svc.modes) {
    svc.modes = modes
    $('mode').replaceChildren(...Object.keys(modes || {}).map((m) => new Option(m, m)))
  }
  $('mode-row').hidden = !modes
}

// What the vehicle asks to be confirmed: a <dialog>, answered true or false.
function confirmAction (text) {
  const d = $('confirm')
  $('confirm-text').textContent = text
  d.returnValue = ''
  d.showModal()
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }))
}

// Web Mercator's tile (x, y) at zoom z for a point, and a tile corner's point back.
const tileOf = (lat, lon, z) => {
  const n = 2 ** z
  const r = lat * Math.PI / 180
  return [(lon + 180) / 360 * n, (1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2 * n]
}
const cornerOf = (x, y, z) => {
  const n = 2 ** z
  return [Math.atan(Math.sinh(Math.PI * (1 - 2 * y / n))) * 180 / Math.PI, x / n * 360 - 180]
}

// The map's tiles ([Http] MapTiles) under the plan, each about 256 pixels wide; at most 64.
function drawTiles (g, w, h, k, scale, cx, cy, px, ratio) {
  const z = Math.max(0, Math.min(19, Math.round(Math.log2(360 * k * scale / (256 * ratio)))))
  const lonAt = (x) => ((x - w / 2) / scale + cx) / k
  const latAt = (y) => cy - (y - h / 2) / scale
  const [x0, y0] = tileOf(latAt(0), lonAt(0), z).map(Math.floor)
  const [x1, y1] = tileOf(latAt(h), lonAt(w), z).map(Math.floor)
  if ((x1 - x0 + 1) * (y1 - y0 + 1) > 64) return
  for (let x = x0; x <= x1; ++x) {
    for (let y = y0; y <= y1; ++y) {
      const url = svc.tiles.replace('{z}', z).replace('{x}', x).replace('{y}', y).replace('{s}', 'abc'[(x + y) % 3])
      let img = tileImages.get(url)
      if (!img) {
        img = new Image()
        img.crossOrigin = 'anonymous' // drawn without tainting the canvas, where the server allows it
        img.addEventListener('load', () => svc.plan && drawPlan(svc.plan), { once: true })
        img.src = url
        tileImages.set(url, img)
      }
      if (!img.complete || !img.naturalWidth) continue
      const [ax, ay] = px(cornerOf(x, y, z))
      const [bx, by] = px(cornerOf(x + 1, y + 1, z))
      g.drawImage(img, ax, ay, bx - ax, by - ay)
    }
  }
}

// The mission, fence and rally points on a grid scaled to fit them (north up, metres even),
// over the map's tiles where [Http] MapTiles names a tile server.
function drawPlan (plan) {
  svc.plan = plan
  const canvas = $('plan')
  const ratio = window.devicePixelRatio || 1
  const w = (canvas.width = canvas.clientWidth * ratio)
  const h = (canvas.height = canvas.clientHeight * ratio)
  const g = canvas.getContext('2d')
  g.clearRect(0, 0, w, h)
  const items = (plan.mission?.items || []).filter((i) => i.params && (i.params[4] || i.params[5]))
  const path = items.map((i) => [i.params[4], i.params[5]])
  // Home, where it is set (a vehicle without a GPS fix says 0, 0) and near the plan (one far
  // away would shrink the plan to a dot).
  let home = plan.mission?.plannedHomePosition
  if (home && !home[0] && !home[1]) home = null
  const polygons = (plan.geoFence?.polygons || []).map((p) => p.polygon)
  const circles = (plan.geoFence?.circles || []).map((c) => c.circle)
  const rally = (plan.rallyPoints?.points || []).map((p) => [p[0], p[1]])
  const all = [...path, ...polygons.flat(), ...circles.map((c) => c.center), ...rally]
  if (home && all.length) {
    const [lat, lon] = [all.reduce((a, p) => a + p[0], 0) / all.length, all.reduce((a, p) => a + p[1], 0) / all.length]
    if (Math.hypot(home[0] - lat, (home[1] - lon) * Math.cos(lat * Math.PI / 180)) > 0.1) home = null // about 11 km
  }
  if (home) all.push([home[0], home[1]])
  if (!all.length) return
  const lat0 = all.reduce((a, p) => a + p[0], 0) / all.length
  const k = Math.cos(lat0 * Math.PI / 180)
  const xs = all.map((p) => p[1] * k)
  const ys = all.map((p) => p[0])
  const pad = 12 * ratio
  const span = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys), 1e-5)
  const scale = Math.min(w - 2 * pad, h - 2 * pad) / span
  const cx = (Math.max(...xs) + Math.min(...xs)) / 2
  const cy = (Math.max(...ys) + Math.min(...ys)) / 2
  const px = (p) => [w / 2 + (p[1] * k - cx) * scale, h / 2 - (p[0] - cy) * scale]
  if (svc.tiles) drawTiles(g, w, h, k, scale, cx, cy, px, ratio)
  // The grid: a line each tenth of the span.
  g.strokeStyle = '#8883'
  g.lineWidth = ratio
  for (let i = 1; i < 10; ++i) {
    g.beginPath(); g.moveTo((w * i) / 10, 0); g.lineTo((w * i) / 10, h); g.stroke()
    g.beginPath(); g.moveTo(0, (h * i) / 10); g.lineTo(w, (h * i) / 10); g.stroke()
  }
  g.strokeStyle = '#d33'
  for (const poly of polygons) {
    g.beginPath()
    poly.forEach((p, i) => (i ? g.lineTo(...px(p)) : g.moveTo(...px(p))))
    g.closePath()
    g.stroke()
  }
  for (const c of circles) {
    const [x, y] = px(c.center)
    g.beginPath()
    g.arc(x, y, (c.radius / 111320) * scale, 0, 2 * Math.PI)
    g.stroke()
  }
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent') || '#2a7de1'
  g.strokeStyle = g.fillStyle = accent
  g.beginPath()
  path.forEach((p, i) => (i ? g.lineTo(...px(p)) : g.moveTo(...px(p))))
  g.stroke()
  for (const p of path) { const [x, y] = px(p); g.fillRect(x - 2 * ratio, y - 2 * ratio, 4 * ratio, 4 * ratio) }
  g.fillStyle = '#c80'
  for (const p of rally) { const [x, y] = px(p); g.beginPath(); g.arc(x, y, 4 * ratio, 0, 2 * Math.PI); g.fill() }
  if (home) { const [x, y] = px(home); g.fillStyle = '#2a9d4a'; g.fillRect(x - 4 * ratio, y - 4 * ratio, 8 * ratio, 8 * ratio) }
}

async function readMission () {
  say('mission-said', 'reading…')
  try {
    const plan = await api('GET', '/mission')
    drawPlan(plan)
    const items = plan.mission?.items || []
    const body = $('mission-items').tBodies[0]
    body.replaceChildren()
    items.forEach((i, n) => {
      const row = body.insertRow()
      for (const v of [n + 1, i.command, i.frame, ...(i.params || []).slice(4, 7).map((x) => (x === null ? '—' : +x.toFixed(7)))]) row.insertCell().textContent = v
    })
    const fence = (plan.geoFence?.polygons || []).length + (plan.geoFence?.circles || []).length
    say('mission-said', `${items.length} items · ${fence} fence shapes · ${(plan.rallyPoints?.points || []).length} rally points`)
  } catch (e) { say('mission-said', e.message, true) }
}

async function clearMission () {
  if (!(await confirmAction(`Clear the mission of system ${svc.system}? The vehicle forgets it.`))) return
  try {
    const r = await api('DELETE', '/mission')
    say('mission-said', 'cleared: ' + r.lists.mission.result)
  } catch (e) { say('mission-said', e.message, true) }
}

async function listLogs () {
  say('logs-said', 'listing…')
  try {
    const { logs } = await api('GET', '/logs')
    const body = $('logs').tBodies[0]
    body.replaceChildren()
    for (const l of logs) {
      const row = body.insertRow()
      row.dataset.id = l.id
      row.insertCell().textContent = l.id
      row.insertCell().textContent = (l.size / 1024).toFixed(0) + ' KiB'
      row.insertCell().textContent = l.time_utc ? new Date(l.time_utc * 1000).toISOString().replace('T', ' ').slice(0, 19) : '—'
      const cell = row.insertCell()
      const button = document.createElement('button')
      button.textContent = 'Download'
      button.addEventListener('click', () => downloadLog(l, cell))
      cell.append(button)
    }
    say('logs-said', logs.length ? `${logs.length} logs` : 'no logs on the vehicle')
  } catch (e) { say('logs-said', e.message, true) }
}

// A log read as it comes, its progress shown, then offered as a file.
async function downloadLog (log, cell) {
  const progress = document.createElement('progress')
  progress.max = log.size
  progress.value = 0
  cell.replaceChildren(progress)
  try {
    const headers = token() ? { Authorization: 'Bearer ' + token() } : {}
    const r = await fetch(`${base()}/logs/${log.id}`, { headers, cache: 'no-store' })
    if (!r.ok) throw new Error(`HTTP ${r.status}`)
    // Its size now (a log being written has grown since it was listed).
    progress.max = Number(r.headers.get('Content-Length')) || log.size
    const reader = r.body.getReader()
    const parts = []
    let got = 0
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      parts.push(value)
      got += value.length
      progress.value = got
    }
    const a = document.createElement('a')
    a.href = URL.createObjectURL(new Blob(parts))
    a.download = `log-${log.id}.bin`
    a.textContent = `Save (${(got / 1024).toFixed(0)} KiB)`
    a.dataset.size = got
    cell.append(' ', a)
  } catch (e) { cell.append(' ' + e.message) }
}

async function loadParams () {
  say('params-said', 'loading… (a thousand or more take a few seconds)')
  try {
    const p = await api('GET', '/parameters')
    svc.params = p.parameters
    showParams()
    say('params-said', `${Object.keys(p.parameters).length} parameters${p.complete ? '' : ' (some missing)'}`)
  } catch (e) { say('params-said', e.message, true) }
}

function showParams () {
  const term = $('params-search').value.trim().toUpperCase()
  const body = $('params').tBodies[0]
  body.replaceChildren()
  const names = Object.keys(svc.params).filter((n) => !term || n.includes(term)).sort().slice(0, 200)
  for (const name of names) {
    const row = body.insertRow()
    row.dataset.name = name
    row.insertCell().textContent = name
    const value = row.insertCell()
    value.className = 'num'
    value.textContent = svc.params[name].value
    const edit = row.insertCell()
    const button = document.createElement('button')
    button.textContent = 'Edit'
    button.className = 'change'
    button.disabled = !svc.canChange
    button.addEventListener('click', () => editParam(name, value))
    edit.append(button)
  }
}

function editParam (name, cell) {
  const input = document.createElement('input')
  input.value = svc.params[name].value
  input.size = 10
  cell.replaceChildren(input)
  input.focus()
  input.addEventListener('keydown', async (e) => {
    if (e.key === 'Escape') { cell.textContent = svc.params[name].value; return }
    if (e.key !== 'Enter') return
    const v = Number(input.value)
    if (!isFinite(v)) { input.setCustomValidity('a number'); input.reportValidity(); return }
    try {
      const r = await api('PUT', `/parameters/${name}`, { value: v })
      svc.params[name].value = r.value
      cell.textContent = r.value
      say('params-said', `${name} is now ${r.value}`)
    } catch (err) { say('params-said', `${name}: ${err.message}`, true); cell.textContent = svc.params[name].value }
  })
}

// A command by name, its params, once confirmed: the vehicle's COMMAND_ACK shown.
async function act (label, command, params) {
  if (!(await confirmAction(`${label} system ${svc.system}? This commands the vehicle.`))) {
    say('action-said', `${label}: not sent`)
    return
  }
  say('action-said', `${label}: sent…`)
  try {
    const r = await api('POST', '/command', { command, params })
    say('action-said', `${label}: ${r.result}`, r.result !== 'MAV_RESULT_ACCEPTED')
  } catch (e) { say('action-said', `${label}: ${e.message}`, true) }
}

$('svc-vehicle').addEventListener('change', refreshVehicles)
$('mission-read').addEventListener('click', readMission)
$('mission-clear').addEventListener('click', clearMission)
$('logs-list').addEventListener('click', listLogs)
$('params-load').addEventListener('click', loadParams)
$('params-search').addEventListener('input', showParams)
$('act-arm').addEventListener('click', () => act('Arm', 'MAV_CMD_COMPONENT_ARM_DISARM', [1]))
$('act-disarm').addEventListener('click', () => act('Disarm', 'MAV_CMD_COMPONENT_ARM_DISARM', [0]))
$('act-takeoff').addEventListener('click', () => act(`Take off to ${$('takeoff-alt').value} m`, 'MAV_CMD_NAV_TAKEOFF', [0, 0, 0, 0, 0, 0, Number($('takeoff-alt').value)]))
$('act-land').addEventListener('click', () => act('Land', 'MAV_CMD_NAV_LAND', []))
$('act-rtl').addEventListener('click', () => act('Return to launch', 'MAV_CMD_NAV_RETURN_TO_LAUNCH', []))
$('act-mode').addEventListener('click', () => act(`Mode ${$('mode').value} for`, 'MAV_CMD_DO_SET_MODE', [1, ...svc.modes[$('mode').value]]))
$('unlock').addEventListener('submit', (e) => {
  e.preventDefault()
  sessionStorage.setItem('mavswitch-token', $('svc-token').value)
  $('svc-token').value = ''
  access()
})
access()
fetch('/api/v1', { cache: 'no-store' }).then((r) => r.json()).then((index) => { svc.tiles = index.map_tiles || null }).catch(() => {})
refreshVehicles()
setInterval(refreshVehicles, 1000)
