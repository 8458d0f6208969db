// The MAVLink inspector, from the mavlink2rest API on this same server: the tree once a second
// (/v1/mavlink: every message's newest fields and its rate), which vehicle.js's cards read too,
// the chosen message live over a WebSocket (/v1/ws/mavlink, at most 25 a second) for its plot,
// and each vehicle's STATUSTEXT lines as they come. Uses page.js's helpers ($, cell, plot, number).
'use strict'

const PLOT_SECONDS = 30
const STATUS_LINES = 5
let tree = { vehicles: {} }
let chosen = null // { sys, comp, name }: the message whose fields and plot are open
let plotted = [] // the chosen field's values over the last PLOT_SECONDS
let plotTimes = [] // when each came
let live = null // the chosen message's WebSocket
const statusLines = new Map() // system -> [{ severity: 2, text: 'CRITICAL: ...' }], newest first
const detail = $('detail') // the chosen message's fields and plot: opened under its row
const SEVERITIES = ['EMERGENCY', 'ALERT', 'CRITICAL', 'ERROR', 'WARNING', 'NOTICE', 'INFO', 'DEBUG']

const auth = () => {
  const token = sessionStorage.getItem('mavswitch-token')
  return { headers: token ? { Authorization: 'Bearer ' + token } : {}, query: token ? '&token=' + encodeURIComponent(token) : '' }
}
const socketUrl = (query) => (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/ws/mavlink?' + query + auth().query
const components = () => Object.values(tree.vehicles).flatMap((v) => Object.values(v.components).map((c) => ({ sys: v.id, comp: c.id, messages: c.messages })))

// A field's value as text: enum names without their common prefix, numbers rounded for reading.
function text (v) {
  v = nameOf(v)
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(4).replace(/\.?0+$/, '')
  if (Array.isArray(v)) return '[' + v.slice(0, 4).map(text).join(', ') + (v.length > 4 ? ', …' : '') + ']'
  if (v === '') return '(none)' // a bitmask with no flag set
  return v === null ? 'NaN' : String(v)
}

function showComponents () {
  const select = $('component')
  const all = components()
  const wanted = select.value
  const names = all.map((c) => `${c.sys}/${c.comp}`)
  if (names.join() !== [...select.options].map((o) => o.value).join()) {
    select.replaceChildren(...all.map((c) => {
      const o = document.createElement('option')
      o.value = `${c.sys}/${c.comp}`
      const named = (window.lastSystems || []).find((s) => s.system === c.sys && s.component === c.comp)
      const what = named && (named.vehicle || named.name || named.type)
      o.textContent = `${c.sys}/${c.comp}` + (what ? ' · ' + what : '')
      return o
    }))
    if (names.includes(wanted)) select.value = wanted
  }
}

function showMessages () {
  const [sys, comp] = ($('component').value || '0/0').split('/').map(Number)
  const c = components().find((x) => x.sys === sys && x.comp === comp)
  const search = $('search').value.trim().toUpperCase()
  const body = $('messages').tBodies[0]
  $('messages').after(detail) // kept while the rows are made again
  body.replaceChildren()
  const names = c ? Object.keys(c.messages).sort() : []
  for (const name of names) {
    const { message, status } = c.messages[name]
    const fields = Object.entries(message).filter(([k]) => k !== 'type')
    if (search && !name.includes(search) && !fields.some(([k]) => k.toUpperCase().includes(search))) continue
    const row = body.insertRow()
    row.dataset.message = name
    if (chosen && chosen.name === name && chosen.sys === sys && chosen.comp === comp) row.className = 'chosen'
    cell(row, name, 'name')
    cell(row, status.time.frequency.toFixed(1), 'num')
    cell(row, fields.map(([k, v]) => k + ' ' + text(v)).join(', '), 'fields')
    row.addEventListener('click', () => choose(sys, comp, name))
    if (row.className === 'chosen') { // its detail right under it, not below every row
      const under = body.insertRow()
      under.className = 'detail-row'
      const all = under.insertCell()
      all.colSpan = 3
      all.append(detail)
    }
  }
  $('no-messages').hidden = body.rows.length > 0
  if (chosen) showDetail()
}

function showDetail () {
  const c = components().find((x) => x.sys === chosen.sys && x.comp === chosen.comp)
  const m = c?.messages[chosen.name]?.message
  if (!m) return
  const body = $('fields').tBodies[0]
  body.replaceChildren()
  for (const [k, v] of Object.entries(m)) {
    if (k === 'type') continue
    const row = body.insertRow()
    row.insertCell().textContent = k
    row.insertCell().textContent = typeof nameOf(v) === 'number' ? String(nameOf(v)) : text(v)
  }
  const select = $('field')
  const numeric = Object.entries(m).filter(([, v]) => typeof v === 'number').map(([k]) => k)
  if (numeric.join() !== [...select.options].map((o) => o.value).join()) {
    select.replaceChildren(...numeric.map((k) => Object.assign(document.createElement('option'), { value: k, textContent: k })))
  }
}

// Opens a message: its fields, and the plot of one of them from its live stream.
function choose (sys, comp, name) {
  chosen = { sys, comp, name }
  plotted = []
  plotTimes = []
  detail.hidden = false
  $('detail-name').textContent = `${name} from ${sys}/${comp}`
  $('field').replaceChildren()
  if (live) live.close()
  live = new WebSocket(socketUrl(`filter=^${name}$&system=${sys}&component=${comp}&rate=25`))
  live.onmessage = (e) => {
    const m = JSON.parse(e.data).message
    const v = m && m[$('field').value]
    if (typeof v !== 'number') return
    const now = performance.now()
    plotted.push(v)
    plotTimes.push(now)
    while (now - plotTimes[0] > PLOT_SECONDS * 1000) { plotTimes.shift(); plotted.shift() }
  }
  showMessages()
}

// What the vehicles said before the page opened (the router keeps each one's last lines), then
// what they say from now on.
async function loadStatusText () {
  try {
    const r = await fetch('/api/v1/statustext', { headers: auth().headers, cache: 'no-store' })
    if (r.ok) {
      for (const { system, lines } of (await r.json()).systems) {
        statusLines.set(system, lines.slice(-STATUS_LINES).reverse()
          .map((l) => ({ severity: l.severity, text: `${l.severity_name}: ${l.text}` })))
      }
    }
  } catch {}
  listenStatusText()
}

function listenStatusText () {
  const ws = new WebSocket(socketUrl('filter=^STATUSTEXT$'))
  ws.onmessage = (e) => {
    const { header, message } = JSON.parse(e.data)
    const lines = statusLines.get(header.system_id) || []
    const severity = nameOf(message.severity).replace('MAV_SEVERITY_', '')
    lines.unshift({ severity: SEVERITIES.indexOf(severity), text: severity + ': ' + message.text })
    statusLines.set(header.system_id, lines.slice(0, STATUS_LINES))
  }
  ws.onclose = () => setTimeout(listenStatusText, 2000)
}

async function pollTree () {
  try {
    const r = await fetch('/v1/mavlink', { headers: auth().headers, cache: 'no-store' })
    if (r.ok) {
      tree = await r.json()
      showVehicles(tree, window.lastSystems || [], statusLines)
      showComponents()
      showMessages()
    }
  } catch {}
  setTimeout(pollTree, 1000)
}

function drawHistory () {
  if (chosen && !detail.hidden) {
    plot($('history'), plotted, { span: Math.max(plotted.length, 2), fromMin: true, unit: $('field').value + ', last ' + PLOT_SECONDS + ' s' })
  }
}

$('component').addEventListener('change', showMessages)
$('search').addEventListener('input', showMessages)
$('field').addEventListener('change', () => { plotted = []; plotTimes = [] })
loadTracks(auth().headers).then(pollTree)
loadStatusText()
setInterval(drawHistory, 200)
