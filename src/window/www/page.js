// The status page: the router's live state from /api/v1/events (server-sent events, read
// with fetch so that a token can go with it), as tables and a plot per link of its frame rate
// over the last 15 minutes: the router's own history of them (/api/v1/history) when the page
// opens, then the difference of two successive states each second.
'use strict'

const HISTORY = 900 // samples, one a second
const linkHistory = new Map() // link name -> [frames a second]
let previous = null // the last state, and when the router took it (ms)

const $ = (id) => document.getElementById(id)
const number = (v) => (Math.abs(v) >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : Math.abs(v) >= 1e4 ? (v / 1e3).toFixed(1) + 'k' : String(Math.round(v)))
const dropped = (link) => Object.values(link.dropped).reduce((a, b) => a + b, 0)
// The causes with a count, as 'queue full 3, paced telemetry 120'.
const causes = (link) => Object.entries(link.dropped).filter(([, n]) => n > 0)
  .map(([cause, n]) => cause.replace(/_/g, ' ') + ' ' + number(n)).join(', ')

// A cell, labelled with its column's heading (a phone shows each link as a card of labels).
function cell (row, text, cls) {
  const td = row.insertCell()
  td.textContent = text
  if (cls) td.className = cls
  const heading = row.closest('table').tHead.rows[0].cells[td.cellIndex]
  if (heading) td.dataset.label = heading.textContent
  return td
}

// A line of `samples` (the newest at the right, `span` samples across) with its scale: the
// top and bottom values written at the left, in `unit`. From zero unless `fromMin`.
function plot (canvas, samples, { span = HISTORY, unit = '', fromMin = false } = {}) {
  const ratio = window.devicePixelRatio || 1
  const w = canvas.clientWidth * ratio
  const h = canvas.clientHeight * ratio
  canvas.width = w
  canvas.height = h
  const g = canvas.getContext('2d')
  g.clearRect(0, 0, w, h)
  if (samples.length < 2) return
  // The first minute's worth at first, widening to `span` as history grows.
  const across = Math.min(span, Math.max(Math.min(60, span), samples.length)) - 1
  let top = Math.max(...samples)
  let bottom = fromMin ? Math.min(...samples) : Math.min(0, ...samples)
  if (top === bottom) { top += 1; bottom -= fromMin ? 1 : 0 }
  const x = (i) => w - (samples.length - 1 - i) * (w / across)
  const y = (v) => h - 1 - ((v - bottom) / (top - bottom)) * (h - 2)
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent') || '#2a7de1'
  g.fillStyle = g.strokeStyle = accent
  g.lineWidth = ratio
  g.beginPath()
  samples.forEach((v, i) => (i === 0 ? g.moveTo(x(i), y(v)) : g.lineTo(x(i), y(v))))
  g.stroke()
  g.globalAlpha = 0.15
  g.lineTo(x(samples.length - 1), h)
  g.lineTo(x(0), h)
  g.fill()
  g.globalAlpha = 0.8
  g.fillStyle = getComputedStyle(document.body).color
  g.font = `${10 * ratio}px system-ui, sans-serif`
  g.textBaseline = 'top'
  g.fillText(scale(top) + (unit ? ' ' + unit : ''), 2 * ratio, 1)
  g.textBaseline = 'bottom'
  g.fillText(scale(bottom), 2 * ratio, h)
  g.globalAlpha = 1
}

// A plot's scale value: short, as 1.2k or 0.0031.
const scale = (v) => (Math.abs(v) >= 1e4 ? number(v) : Math.abs(v) >= 10 || v === 0 ? String(Math.round(v)) : v.toPrecision(2))

function show (state, at) {
  const seconds = previous ? (at - previous.at) / 1000 : 0
  const before = new Map((previous ? previous.state.links : []).map((l) => [l.name, l]))
  const rate = (link, key) => {
    const old = before.get(link.name)
    return old && seconds > 0 ? Math.max(0, (link[key] - old[key]) / seconds) : 0
  }
  const body = $('links').tBodies[0]
  body.replaceChildren()
  for (const link of state.links) {
    const rx = rate(link, 'rx_frames')
    const tx = rate(link, 'tx_frames')
    const samples = linkHistory.get(link.name) || []
    if (previous) samples.push(rx + tx)
    if (samples.length > HISTORY) samples.shift()
    linkHistory.set(link.name, samples)
    const row = body.insertRow()
    row.dataset.link = link.name
    const name = cell(row, link.name, 'name')
    if (link.radio) {  // RADIO_STATUS: this end / the far end of the air
      const r = link.radio
      const air = document.createElement('small')
      air.className = 'radio'
      air.textContent = `radio RSSI ${r.rssi}/${r.remote_rssi}, noise ${r.noise}/${r.remote_noise}, ` +
        `rx errors ${r.rx_errors}, fixed ${r.fixed}, tx buffer ${r.tx_buffer_percent}%`
      name.append(air)
    }
    cell(row, number(rx), 'num rx')
    cell(row, number(tx), 'num tx')
    cell(row, number(rate(link, 'rx_bytes')), 'num wide')
    cell(row, number(rate(link, 'tx_bytes')), 'num wide')
    const drops = cell(row, number(dropped(link)), 'num dropped')
    if (causes(link)) {
      const why = document.createElement('small')
      why.className = 'causes'
      why.textContent = causes(link)
      drops.append(why)
    }
    cell(row, number(link.crc_errors), 'num wide')
    // Lost on the way: gaps in its sources' sequence numbers (a wire), or in the fabric's own count.
    const lost = cell(row, number(link.sequence_lost + (link.lost_on_fabric || 0)), 'num lost')
    if (link.lost_on_fabric) {
      const where = document.createElement('small')
      where.className = 'causes'
      where.textContent = 'on the fabric'
      lost.append(where)
    }
    cell(row, number(link.queued_bytes), 'num wide')
    const canvas = document.createElement('canvas')
    cell(row, '', 'plot').append(canvas)
    plot(canvas, samples, { unit: 'f/s' })
  }
  for (const name of linkHistory.keys()) {
    if (!state.links.some((l) => l.name === name)) linkHistory.delete(name)
  }
  for (const endpoint of state.waiting || []) {  // open, with no peer or connection yet
    const row = body.insertRow()
    row.className = 'waiting'
    row.dataset.endpoint = endpoint.endpoint
    const name = cell(row, endpoint.endpoint || endpoint.kind, 'name')
    const what = document.createElement('small')
    what.className = 'causes'
    what.textContent = `${endpoint.description}: no link up yet`
    name.append(what)
    for (let i = 1; i < row.closest('table').tHead.rows[0].cells.length; ++i) cell(row, '', '')
  }
  $('no-links').hidden = state.links.length + (state.waiting || []).length > 0

  const systems = $('systems').tBodies[0]
  systems.replaceChildren()
  for (const s of state.systems) {
    const row = systems.insertRow()
    row.dataset.system = s.system + '/' + s.component
    cell(row, s.vehicle || '', 'vehicle')
    cell(row, String(s.system), 'num')
    cell(row, String(s.component), 'num')
    cell(row, s.type || s.name || '', 'type')
    cell(row, s.autopilot || '', 'wide')
    cell(row, s.mode || '', 'mode')
    cell(row, s.armed === undefined ? '' : s.armed ? 'ARMED' : 'disarmed', s.armed ? 'armed' : '')
    cell(row, s.heard_ms_ago === undefined ? '' : (s.heard_ms_ago / 1000).toFixed(1) + ' s', 'num')
    cell(row, s.links.join(', '), 'wide')
  }
  $('no-systems').hidden = state.systems.length > 0
  window.lastSystems = state.systems // the inspector names components with them
  $('routed').textContent = number(state.routed) + ' frames routed'
  previous = { state, at }
}

function status (text, cls) {
  const s = $('state')
  s.textContent = text
  s.className = 'state ' + (cls || '')
}

// Each link's last 15 minutes as the router kept them (frames in and out a second).
async function loadHistory (headers) {
  try {
    const r = await fetch('/api/v1/history', { headers, cache: 'no-store' })
    if (!r.ok) return
    for (const l of (await r.json()).links) linkHistory.set(l.name, l.rx_frames.map((rx, i) => rx + l.tx_frames[i]).slice(-HISTORY))
  } catch {}
}

async function follow () {
  const token = sessionStorage.getItem('mavswitch-token')
  const headers = token ? { Authorization: 'Bearer ' + token } : {}
  if (!previous) await loadHistory(headers)
  const response = await fetch('/api/v1/events', { headers, cache: 'no-store' })
  if (response.status === 401) {
    $('login').hidden = false
    status('needs the token', 'lost')
    return false
  }
  if (!response.ok) throw new Error('HTTP ' + response.status)
  $('login').hidden = true
  status('live', 'live')
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the router closed the stream')
    text += decoder.decode(value, { stream: true })
    let end
    while ((end = text.indexOf('\n\n')) >= 0) {
      const event = text.slice(0, end)
      text = text.slice(end + 2)
      if (!event.startsWith('data: ')) continue
      const state = JSON.parse(event.slice(6))
      // Rates over the router's own time between its snapshots, not over when they arrived: an
      // event that repeats the last snapshot (the router was late with the next) changes nothing.
      if (!previous || state.at_ms !== previous.state.at_ms) show(state, state.at_ms)
    }
  }
}

// Follows the stream; when it breaks (the router restarted), tries again every two seconds.
async function run () {
  for (;;) {
    try {
      if (!(await follow())) return
    } catch (e) {
      status('reconnecting (' + e.message + ')', 'lost')
    }
    previous = null
    await new Promise((resolve) => setTimeout(resolve, 2000))
  }
}

$('login').addEventListener('submit', (e) => {
  e.preventDefault()
  sessionStorage.setItem('mavswitch-token', $('token').value)
  run()
})
run()
