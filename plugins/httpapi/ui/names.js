// People and agents by the name in their kind 0 profile (display_name,
// else name), with the npub on hover, and a short npub while no name is
// known. A profile is anybody's text: it reaches the page only as a text
// node (dom.js h), stripped of control and bidirectional-override
// characters (which could make one name read as another) and cut short.

import { h, npub, short, toHex } from './dom.js'

const MAX_NAME = 48
const CHUNK = 50 // authors per REQ, well under the relay's filter limit

let conn = null
const known = new Map() // hex → name ('' = asked, none)
const wanted = new Set()
let timer = null

// useConnection names the websocket profiles are read over.
export function useConnection(c) { conn = c }

// profileName is the name a kind 0 content gives, cleaned, or ''.
export function profileName(content) {
  let p
  try { p = JSON.parse(content) } catch { return '' }
  if (!p || typeof p !== 'object') return ''
  return cleanName([p.display_name, p.displayName, p.name].find((x) => typeof x === 'string' && x.trim()))
}

// cleanName drops C0/C1 controls, zero-width marks and bidirectional
// embeddings, overrides and isolates from a name, and cuts it short.
export function cleanName(raw) {
  if (typeof raw !== 'string') return ''
  const clean = raw.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '').trim()
  return clean.length > MAX_NAME ? clean.slice(0, MAX_NAME - 1) + '…' : clean
}

// person is an element naming key (hex or npub); it shows the name once
// the profile has been read. Anything that is not a key is shown as is.
export function person(key, attrs = {}) {
  const hex = toHex(key)
  if (!hex) return h('span', { class: 'person', title: key || '' }, short(key || ''))
  const np = npub(hex)
  const el = h('span', { class: 'person', title: np, dataset: { person: hex }, ...attrs }, known.get(hex) || short(np))
  if (!known.has(hex)) {
    wanted.add(hex)
    if (!timer) timer = setTimeout(lookup, 0)
  }
  return el
}

// nameOf is the known name of key, or its short npub.
export function nameOf(key) {
  const hex = toHex(key)
  return (hex && known.get(hex)) || short(npub(key))
}

// lookup reads the profiles asked for since the last one, newest
// version per author, and renames every element showing them.
async function lookup() {
  timer = null
  const keys = [...wanted].filter((k) => !known.has(k))
  wanted.clear()
  if (!conn) return
  for (let i = 0; i < keys.length; i += CHUNK) {
    const chunk = keys.slice(i, i + CHUNK)
    for (const k of chunk) known.set(k, '')
    let r
    try { r = await conn.req([{ kinds: [0], authors: chunk }]) } catch { continue }
    const newest = new Map()
    for (const e of r.events || []) {
      if (e.kind !== 0 || !chunk.includes(e.pubkey)) continue
      if (!newest.has(e.pubkey) || newest.get(e.pubkey).created_at < e.created_at) newest.set(e.pubkey, e)
    }
    for (const [pk, e] of newest) {
      const name = profileName(e.content)
      if (!name) continue
      known.set(pk, name)
      for (const el of document.querySelectorAll(`[data-person="${pk}"]`)) el.textContent = name
    }
  }
}
