// Small DOM helpers shared by the views. Everything the relay returns is
// untrusted text: it only ever reaches the page through textContent, never
// innerHTML.

const NT = window.NostrTools

// h builds an element: h('button', {class: 'x', onclick: f}, 'text', child).
// Attributes starting with "on" become listeners; false/null are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v)
    else if (k === 'class') el.className = v
    else if (k === 'dataset') Object.assign(el.dataset, v)
    else if (v === true) el.setAttribute(k, '')
    else el.setAttribute(k, String(v))
  }
  append(el, children)
  return el
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue
    el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
}

// fill replaces an element's children.
export function fill(el, ...children) {
  el.replaceChildren()
  append(el, children)
  return el
}

// field is a labelled form control.
export function field(label, control, hint) {
  if (!control.id) control.id = 'f-' + Math.random().toString(36).slice(2, 9)
  return h('div', { class: 'field' },
    h('label', { for: control.id }, label), control,
    hint ? h('small', { class: 'hint' }, hint) : null)
}

// status is a polite live region a view writes its progress and results to.
export function status() {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' })
}

// toHex accepts an npub or 64-char hex and returns hex ("" when neither).
export function toHex(key) {
  key = (key || '').trim()
  if (/^[0-9a-f]{64}$/i.test(key)) return key.toLowerCase()
  if (key.startsWith('npub1')) {
    try {
      const d = NT.nip19.decode(key)
      if (d.type === 'npub') return d.data
    } catch { /* not an npub */ }
  }
  return ''
}

// npub turns a hex key into its npub; anything else is returned as is.
export function npub(key) {
  const hex = toHex(key)
  return hex ? NT.nip19.npubEncode(hex) : (key || '')
}

// short abbreviates an npub or id for display (the full value goes in a title).
export function short(s) {
  s = s || ''
  return s.length > 20 ? s.slice(0, 12) + '…' + s.slice(-6) : s
}

export function when(ts) {
  if (!ts) return ''
  return new Date(ts * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
}

// count says "1 memory", "3 memories": the number with the noun agreeing.
export function count(n, one, many) {
  return `${n} ${n === 1 ? one : many}`
}

export function num(x, digits = 3) {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–'
}

// download hands the browser a file made in the page.
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = h('a', { href: url, download: name, hidden: true })
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10000)
}

// idChip shows an event id shortened, the whole id on hover and a button
// that copies it.
export function idChip(id) {
  id = id || ''
  const copy = h('button', { type: 'button', class: 'copy', title: 'Copy the full id', 'aria-label': `Copy id ${id}` }, 'copy')
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(id)
      copy.textContent = 'copied'
    } catch {
      // no clipboard permission: select the id so the user can copy it
      const r = document.createRange()
      r.selectNodeContents(text)
      getSelection().removeAllRanges()
      getSelection().addRange(r)
      copy.textContent = 'selected'
    }
    setTimeout(() => { copy.textContent = 'copy' }, 1500)
  })
  const text = h('span', { class: 'idtext', title: id }, id.length > 16 ? id.slice(0, 10) + '…' + id.slice(-4) : id)
  return h('span', { class: 'mid', dataset: { fullId: id } }, 'id ', text, ' ', copy)
}

// empty is what a view shows where it has nothing to list: what that
// means, and what the person can do about it (lines: text or elements).
export function empty(title, ...lines) {
  return h('div', { class: 'empty', role: 'note' },
    h('p', { class: 'empty-title' }, title),
    lines.filter(Boolean).map((l) => (l instanceof Node ? l : h('p', {}, l))))
}

const NPUB_IN_TEXT = /npub1[02-9ac-hj-np-z]{58}/g
const HEX_IN_TEXT = /\b[0-9a-f]{64}\b/g
const MAX_TOPIC = 60

// topicText shortens what makes a topic long: each npub or 64-hex key in
// it, then the middle of what is still too long.
export function topicText(topic) {
  let s = String(topic || '').replace(NPUB_IN_TEXT, (k) => k.slice(0, 10) + '…' + k.slice(-4)).replace(HEX_IN_TEXT, (k) => k.slice(0, 8) + '…' + k.slice(-4))
  if (s.length > MAX_TOPIC) s = s.slice(0, MAX_TOPIC - 21) + '…' + s.slice(-20)
  return s
}

// topic is a topic as every view shows it: shortened, the whole on hover.
export function topic(t, tag = 'span', attrs = {}) {
  return h(tag, { class: 'topic', title: t || '', ...attrs }, topicText(t))
}

// bytes says a size in the largest binary unit under 1024.
export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '–'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++ }
  return `${i ? n.toFixed(1) : n} ${units[i]}`
}

// ago says how long before now a unix time was, roughly.
export function ago(ts, now = Date.now() / 1000) {
  if (!ts) return 'never'
  const d = Math.max(0, Math.round(now - ts))
  if (d < 60) return `${d} s ago`
  if (d < 3600) return `${Math.round(d / 60)} min ago`
  if (d < 86400) return `${Math.round(d / 3600)} h ago`
  return `${Math.round(d / 86400)} days ago`
}

// duration says a Go duration ("168h0m0s", "1m30s", "500ms") the way a
// person would; anything else is returned as is.
export function duration(d) {
  const m = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?$/.exec(String(d || ''))
  if (!m || !d) return String(d || '')
  const secs = (+m[1] || 0) * 3600 + (+m[2] || 0) * 60 + (+m[3] || 0) + (+m[4] || 0) / 1000
  const unit = (n, one, many) => `${+n.toFixed(1)} ${n === 1 ? one : many}`
  if (secs >= 86400 && secs % 86400 === 0) return unit(secs / 86400, 'day', 'days')
  if (secs >= 3600) return unit(secs / 3600, 'hour', 'hours')
  if (secs >= 60) return unit(secs / 60, 'minute', 'minutes')
  if (secs >= 1) return unit(secs, 'second', 'seconds')
  return `${Math.round(secs * 1000)} ms`
}
