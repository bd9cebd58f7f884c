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
