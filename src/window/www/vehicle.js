// The vehicle cards: what an operator looks at first, from the mavlink2rest tree that
// inspector.js polls (each message's newest fields) and the router's own history (the track of
// the last 15 minutes, /api/v1/history, loaded once, then extended by each position that comes).
// Uses page.js's helpers ($, plot).
'use strict'

const TRACK_SECONDS = 900
const tracks = new Map() // system -> [[unix_ms, lat, lon, relative_alt_m]], oldest first
const nameOf = (v) => (v && typeof v === 'object' && 'type' in v ? v.type : v)
const flags = (v) => new Set(String(nameOf(v) || '').split(' | ').filter(Boolean))
const RAD = Math.PI / 180
const EARTH = 6371000

// Metres and degrees from a to b ([lat, lon] in degrees): near enough for a vehicle's field.
function distanceBearing (a, b) {
  const dLat = (b[0] - a[0]) * RAD
  const dLon = (b[1] - a[1]) * RAD * Math.cos(((a[0] + b[0]) / 2) * RAD)
  return { metres: Math.hypot(dLat, dLon) * EARTH, degrees: (Math.atan2(dLon, dLat) / RAD + 360) % 360 }
}

const duration = (ms) => {
  const s = Math.floor(ms / 1000)
  return s >= 3600 ? `${Math.floor(s / 3600)} h ${Math.floor(s / 60) % 60} min` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}
const fixed = (v, digits, unit) => (typeof v === 'number' && isFinite(v) ? v.toFixed(digits) + (unit ? ' ' + unit : '') : '—')

// The router's track of each vehicle, before the page opened.
async function loadTracks (headers) {
  try {
    const r = await fetch('/api/v1/history', { headers, cache: 'no-store' })
    if (!r.ok) return null
    const h = await r.json()
    for (const t of h.tracks) tracks.set(t.system, t.points)
    return h
  } catch { return null }
}

function extendTrack (system, pos) {
  const track = tracks.get(system) || []
  const now = Date.now()
  if (!track.length || now - track[track.length - 1][0] >= 1000) {
    track.push([now, pos.lat / 1e7, pos.lon / 1e7, pos.relative_alt / 1000])
    while (track.length && now - track[0][0] > TRACK_SECONDS * 1000) track.shift()
  }
  tracks.set(system, track)
}

// An attitude indicator: sky and ground split by the horizon, rolled and pitched (10° a tick).
function drawAttitude (canvas, att, heading) {
  const ratio = window.devicePixelRatio || 1
  const w = (canvas.width = canvas.clientWidth * ratio)
  const h = (canvas.height = canvas.clientHeight * ratio)
  const g = canvas.getContext('2d')
  const r = Math.min(w, h) / 2 - ratio
  g.save()
  g.translate(w / 2, h / 2)
  g.beginPath()
  g.arc(0, 0, r, 0, 2 * Math.PI)
  g.clip()
  const pitchPx = (att.pitch / RAD) * (r / 45) // 45° from the middle to the edge
  g.rotate(-att.roll)
  g.fillStyle = '#3b7dd8'
  g.fillRect(-2 * r, -2 * r + pitchPx, 4 * r, 2 * r)
  g.fillStyle = '#8a5a2b'
  g.fillRect(-2 * r, pitchPx, 4 * r, 2 * r)
  g.strokeStyle = '#fff'
  g.lineWidth = ratio
  for (let d = -30; d <= 30; d += 10) {
    const y = pitchPx - d * (r / 45)
    const half = d === 0 ? 2 * r : r * 0.25
    g.beginPath()
    g.moveTo(-half, y)
    g.lineTo(half, y)
    g.stroke()
  }
  g.restore()
  // The aircraft: fixed.
  g.strokeStyle = '#fc0'
  g.lineWidth = 3 * ratio
  g.beginPath()
  g.moveTo(w / 2 - r * 0.5, h / 2)
  g.lineTo(w / 2 - r * 0.15, h / 2)
  g.moveTo(w / 2 + r * 0.15, h / 2)
  g.lineTo(w / 2 + r * 0.5, h / 2)
  g.stroke()
  g.fillStyle = '#fff'
  g.font = `${11 * ratio}px system-ui, sans-serif`
  g.textAlign = 'center'
  g.fillText(typeof heading === 'number' ? `${Math.round(heading)}°` : '', w / 2, h - 4 * ratio)
}

// The track on a scaled plot (north up, metres equal both ways), home as a square, the vehicle
// as a dot, with its scale.
function drawTrack (canvas, track, home) {
  const ratio = window.devicePixelRatio || 1
  const w = (canvas.width = canvas.clientWidth * ratio)
  const h = (canvas.height = canvas.clientHeight * ratio)
  const g = canvas.getContext('2d')
  g.clearRect(0, 0, w, h)
  const points = track.map((p) => [p[1], p[2]])
  if (home) points.push(home)
  if (!points.length) return
  const lat0 = points[0][0]
  const xy = (p) => [(p[1] - points[0][1]) * RAD * Math.cos(lat0 * RAD) * EARTH, (p[0] - lat0) * RAD * EARTH]
  const all = points.map(xy)
  const xs = all.map((p) => p[0])
  const ys = all.map((p) => p[1])
  const span = Math.max(20, Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) * 1.15
  const cx = (Math.max(...xs) + Math.min(...xs)) / 2
  const cy = (Math.max(...ys) + Math.min(...ys)) / 2
  const scale = (Math.min(w, h) - 8 * ratio) / span
  const px = (p) => { const [x, y] = xy(p); return [w / 2 + (x - cx) * scale, h / 2 - (y - cy) * scale] }
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent') || '#2a7de1'
  g.strokeStyle = accent
  g.lineWidth = 1.5 * ratio
  g.beginPath()
  track.forEach((p, i) => { const [x, y] = px([p[1], p[2]]); i ? g.lineTo(x, y) : g.moveTo(x, y) })
  g.stroke()
  if (home) {
    const [x, y] = px(home)
    g.fillStyle = '#2a9d4a'
    g.fillRect(x - 3 * ratio, y - 3 * ratio, 6 * ratio, 6 * ratio)
  }
  if (track.length) {
    const [x, y] = px([track[track.length - 1][1], track[track.length - 1][2]])
    g.fillStyle = '#d33'
    g.beginPath()
    g.arc(x, y, 3.5 * ratio, 0, 2 * Math.PI)
    g.fill()
  }
  // The scale: a round length about a quarter of the width.
  const metres = span / 4
  const round = [1, 2, 5].map((m) => m * 10 ** Math.floor(Math.log10(metres))).filter((m) => m <= metres).pop() || 1
  g.fillStyle = g.strokeStyle = getComputedStyle(document.body).color
  g.lineWidth = ratio
  g.beginPath()
  g.moveTo(4 * ratio, h - 4 * ratio)
  g.lineTo(4 * ratio + round * scale, h - 4 * ratio)
  g.stroke()
  g.font = `${10 * ratio}px system-ui, sans-serif`
  g.fillText(round >= 1000 ? `${round / 1000} km` : `${round} m`, 4 * ratio, h - 7 * ratio)
  g.textAlign = 'right'
  g.fillText('N↑', w - 3 * ratio, 11 * ratio)
}

// What SYS_STATUS and EKF_STATUS_REPORT say of the vehicle's health: 'ok', or what is not.
function health (sys, ekf) {
  const out = {}
  if (sys) {
    const enabled = flags(sys.onboard_control_sensors_enabled)
    const healthy = flags(sys.onboard_control_sensors_health)
    const present = flags(sys.onboard_control_sensors_present)
    const bad = [...enabled].filter((f) => !healthy.has(f) && f !== 'MAV_SYS_STATUS_PREARM_CHECK')
      .map((f) => f.replace('MAV_SYS_STATUS_SENSOR_', '').replace('MAV_SYS_STATUS_', '').toLowerCase().replace(/_/g, ' '))
    out.sensors = bad.length ? 'unhealthy: ' + bad.join(', ') : 'ok'
    if (present.has('MAV_SYS_STATUS_PREARM_CHECK')) out.prearm = healthy.has('MAV_SYS_STATUS_PREARM_CHECK') ? 'pass' : 'FAIL'
  }
  if (ekf) {
    const f = flags(ekf.flags)
    const variances = ['velocity_variance', 'pos_horiz_variance', 'pos_vert_variance', 'compass_variance', 'terrain_alt_variance']
    const worst = Math.max(...variances.map((k) => ekf[k]).filter((v) => typeof v === 'number'))
    const good = !f.has('EKF_UNINITIALIZED') && ['EKF_ATTITUDE', 'EKF_VELOCITY_HORIZ', 'EKF_POS_HORIZ_ABS'].every((x) => f.has(x))
    out.ekf = `${good && worst < 0.8 ? 'ok' : 'BAD'} · worst variance ${fixed(worst, 2)}`
  } else if (sys) {
    const healthy = flags(sys.onboard_control_sensors_health)
    const enabled = flags(sys.onboard_control_sensors_enabled)
    if (enabled.has('MAV_SYS_STATUS_AHRS')) out.ekf = healthy.has('MAV_SYS_STATUS_AHRS') ? 'ok (AHRS)' : 'BAD (AHRS)'
  }
  return out
}

// The card of each vehicle (a system whose autopilot sends HEARTBEAT): its name, state, flight
// basics, health, track and what it said.
function showVehicles (tree, systems, statusLines) {
  const cards = $('vehicles')
  const seen = new Set()
  for (const v of Object.values(tree.vehicles)) {
    const m = v.components['1']?.messages
    const hb = m?.HEARTBEAT?.message
    if (!hb || nameOf(hb.autopilot) === 'MAV_AUTOPILOT_INVALID') continue
    seen.add(String(v.id))
    const system = systems.find((s) => s.system === v.id && s.component === 1) || {}
    const get = (name) => m[name]?.message
    const sys = get('SYS_STATUS')
    const gps = get('GPS_RAW_INT')
    const pos = get('GLOBAL_POSITION_INT')
    const hud = get('VFR_HUD')
    const att = get('ATTITUDE')
    const home = get('HOME_POSITION')
    const battery = get('BATTERY_STATUS')
    if (pos && (pos.lat || pos.lon)) extendTrack(v.id, pos)
    let card = cards.querySelector(`.card[data-system="${v.id}"]`)
    if (!card) {
      card = document.createElement('article')
      card.className = 'card'
      card.dataset.system = v.id
      card.innerHTML = '<h3></h3><div class="gauges"><canvas class="attitude"></canvas><canvas class="track"></canvas></div>' +
        '<div class="facts"></div><ul class="statustext"></ul>'
      cards.append(card)
    }
    const type = system.type || nameOf(hb.mavtype).replace('MAV_TYPE_', '').toLowerCase()
    card.querySelector('h3').textContent = system.vehicle ? `${system.vehicle} · ${type} · system ${v.id}` : `System ${v.id} · ${type}`
    const facts = card.querySelector('.facts')
    facts.replaceChildren()
    const line = (label, value, cls) => {
      const row = document.createElement('div')
      row.className = 'fact ' + (cls || '')
      row.dataset.fact = label.toLowerCase()
      row.innerHTML = '<span class="label"></span><span class="value"></span>'
      row.firstChild.textContent = label
      row.lastChild.textContent = value
      facts.append(row)
    }
    const armed = /SAFETY_ARMED/.test(nameOf(hb.base_mode))
    line('Mode', system.mode || '—')
    line('Armed', armed ? `ARMED${system.armed_ms !== undefined ? ' · ' + duration(system.armed_ms) + ' in flight' : ''}` : 'disarmed', armed ? 'armed' : '')
    const heading = hud ? hud.heading : pos && pos.hdg !== 65535 ? pos.hdg / 100 : att ? ((att.yaw / RAD) + 360) % 360 : undefined
    line('Heading', typeof heading === 'number' ? Math.round(heading) + '°' : '—')
    const ground = hud ? hud.groundspeed : pos ? Math.hypot(pos.vx, pos.vy) / 100 : undefined
    line('Speed', `${fixed(ground, 1, 'm/s')} ground · ${fixed(hud && hud.airspeed, 1, 'm/s')} air`)
    line('Altitude', `${fixed(pos && pos.relative_alt / 1000, 1, 'm')} rel · ${fixed(pos && pos.alt / 1000, 1, 'm')} MSL`)
    line('Climb', fixed(hud ? hud.climb : pos ? -pos.vz / 100 : undefined, 1, 'm/s'))
    const here = pos && (pos.lat || pos.lon) ? [pos.lat / 1e7, pos.lon / 1e7] : null
    const homeAt = home ? [home.latitude / 1e7, home.longitude / 1e7] : null
    if (here && homeAt) {
      const { metres, degrees } = distanceBearing(homeAt, here)
      line('Home', `${fixed(metres, 0, 'm')} · bearing ${Math.round((degrees + 180) % 360)}° to home`)
    } else line('Home', homeAt ? '—' : 'not heard (HOME_POSITION)')
    line('Position', here ? `${here[0].toFixed(6)}, ${here[1].toFixed(6)}` : '—')
    line('GPS', gps ? `${nameOf(gps.fix_type).replace('GPS_FIX_TYPE_', '')} · ${gps.satellites_visible} sats${gps.eph !== 65535 ? ' · HDOP ' + (gps.eph / 100).toFixed(1) : ''}` : '—')
    if (sys || battery) {
      const current = sys && sys.current_battery >= 0 ? sys.current_battery / 100 : undefined
      const remaining = sys && sys.battery_remaining >= 0 ? sys.battery_remaining + ' %' : '—'
      const left = battery && battery.time_remaining > 0 ? ' · ' + duration(battery.time_remaining * 1000) + ' left' : ''
      line('Battery', `${remaining} · ${fixed(sys && sys.voltage_battery / 1000, 2, 'V')} · ${fixed(current, 1, 'A')}${left}`)
    } else line('Battery', '—')
    const h = health(sys, get('EKF_STATUS_REPORT'))
    if (h.ekf) line('EKF', h.ekf, /BAD/.test(h.ekf) ? 'bad' : '')
    if (h.prearm) line('Pre-arm', h.prearm, h.prearm === 'FAIL' ? 'bad' : '')
    if (h.sensors) line('Sensors', h.sensors, h.sensors === 'ok' ? '' : 'bad')
    drawAttitude(card.querySelector('canvas.attitude'), att || { roll: 0, pitch: 0 }, heading)
    drawTrack(card.querySelector('canvas.track'), tracks.get(v.id) || [], homeAt)
    const said = card.querySelector('.statustext')
    said.replaceChildren()
    for (const l of statusLines.get(v.id) || []) {
      const item = document.createElement('li')
      item.textContent = l.text
      item.className = `severity-${l.severity}`
      said.append(item)
    }
  }
  for (const card of [...cards.children]) if (!seen.has(card.dataset.system)) card.remove()
  $('no-vehicles').hidden = cards.children.length > 0
}
