// A member's group keys (docs/group-encryption.md). An encrypted group's
// memories rest sealed with a key the group shares, and the relay shows
// their text to nobody: the relay's agent sends each member the keys in
// NIP-17 gift wraps, and this page opens them with the logged-in key
// (the extension's nip44, or the session key), checks them as the
// document says, and keeps them in this page's memory only, gone on
// reload or logout like the key itself.

import { RelayConn } from './api.js'

const NT = window.NostrTools

const PAGE = 500 // the relay clamps larger limits
const MAX_PAGES = 50
const MIN_RELOAD_MS = 10000 // a missing version reads the deliveries again at most this often
const HEX64 = /^[0-9a-f]{64}$/
const VERSION = /^[1-9][0-9]*$/

// one keyring per signer: the debug view's "as another key" never sees
// the logged-in key's keys, nor the other way round
const rings = new WeakMap()

// keyringFor is reader's keyring (reader: {signer, conn?}); agent is the
// relay's agent key, pinned when the page logged in (GET /api/v1/health).
export function keyringFor(reader, agent) {
  let ring = rings.get(reader.signer)
  if (!ring) {
    ring = new Keyring(reader.signer, agent, reader.conn)
    rings.set(reader.signer, ring)
  }
  return ring
}

// sealOf reads a group seal's markers as snowclaw.GroupSealOf does: a kind
// 30078 memory item or group record with exactly one
// ["encrypted","nip44-group"], one h tag, no p tag and one
// ["snow:key-version", n]. Anything else is not opened.
export function sealOf(evt) {
  if (!evt || evt.kind !== 30078 || !Array.isArray(evt.tags)) return null
  const all = (k) => evt.tags.filter((t) => t[0] === k)
  const d = (all('d')[0] || [])[1] || ''
  if (!d.startsWith('snow:memory:') && !d.startsWith('snowclaw:memory:group:')) return null
  const enc = all('encrypted'), h = all('h'), ver = all('snow:key-version')
  if (enc.length !== 1 || enc[0][1] !== 'nip44-group' || all('p').length) return null
  if (h.length !== 1 || !h[0][1] || ver.length !== 1 || !VERSION.test(ver[0][1] || '')) return null
  return { group: h[0][1], version: parseInt(ver[0][1], 10) }
}

class Keyring {
  constructor(signer, agent, conn) {
    this.signer = signer
    this.agent = agent
    this.conn = conn
    this.keys = new Map() // group → Map(version → conversation key)
    this.loadedAt = 0
    this.loading = null
    this.refused = 0 // deliveries not trusted
  }

  // ensure reads the deliveries once, or again when force says so; calls
  // that overlap share one read
  ensure(force = false) {
    if (this.loading) return this.loading
    if (this.loadedAt && !force) return Promise.resolve()
    this.loading = this.load().finally(() => { this.loading = null })
    return this.loading
  }

  async load() {
    this.loadedAt = Date.now()
    if (!this.agent || typeof this.signer.decrypt !== 'function') return // nothing could be checked or opened
    const conn = this.conn || new RelayConn(this.signer)
    try {
      const filter = { kinds: [1059], '#p': [this.signer.pubkey], limit: PAGE }
      const seen = new Set()
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await conn.req([filter])
        if (r.closed) break
        let fresh = 0
        let oldest = Infinity
        for (const wrap of r.events) {
          if (seen.has(wrap.id)) continue
          seen.add(wrap.id)
          fresh++
          oldest = Math.min(oldest, wrap.created_at)
          await this.take(wrap)
        }
        if (!fresh) break
        // inclusive: wraps sharing the oldest time are read again, not skipped
        filter.until = oldest
      }
    } finally {
      if (conn !== this.conn) conn.close()
    }
  }

  // take keeps the keys of one gift wrap that passes "What a client must
  // check": the seal's signer wrote the rumor (NIP-17), that signer is the
  // pinned agent, each secret belongs to its public key, and the current
  // version is among them.
  async take(wrap) {
    const me = this.signer.pubkey
    const refuse = () => { this.refused++ }
    if (wrap.kind !== 1059 || !wrap.tags.some((t) => t[0] === 'p' && t[1] === me) || !NT.verifyEvent(wrap)) return refuse()
    let seal, rumor
    try { seal = JSON.parse(await this.signer.decrypt(wrap.pubkey, wrap.content)) } catch { return refuse() }
    if (!seal || seal.kind !== 13 || !NT.verifyEvent(seal)) return refuse()
    try { rumor = JSON.parse(await this.signer.decrypt(seal.pubkey, seal.content)) } catch { return refuse() }
    if (!rumor || rumor.pubkey !== seal.pubkey || !Array.isArray(rumor.tags)) return refuse() // impersonation
    if (rumor.kind !== 14 || !rumor.tags.some((t) => t[0] === 'snow:group-key')) return // another private message
    if (rumor.id && NT.getEventHash(rumor) !== rumor.id) return refuse()
    if (seal.pubkey !== this.agent) return refuse() // anyone can wrap a message claiming to carry a key
    let m
    try { m = JSON.parse(rumor.content) } catch { return refuse() }
    if (!m || m.type !== 'snow:group-key' || typeof m.group !== 'string' || !m.group || !Array.isArray(m.keys) || !m.keys.length) return refuse()
    for (const k of m.keys) {
      if (!k || !Number.isInteger(k.version) || k.version <= 0 || !HEX64.test(k.secret || '') || !HEX64.test(k.pubkey || '')) return refuse()
      if (NT.getPublicKey(NT.utils.hexToBytes(k.secret)) !== k.pubkey) return refuse()
    }
    if (!m.keys.some((k) => k.version === m.current)) return refuse()
    let versions = this.keys.get(m.group)
    if (!versions) this.keys.set(m.group, versions = new Map())
    for (const k of m.keys) {
      // the group's conversation key: NIP-44 between its secret and its own public half
      versions.set(k.version, NT.nip44.getConversationKey(NT.utils.hexToBytes(k.secret), k.pubkey))
    }
  }

  conversationKey(group, version) {
    const versions = this.keys.get(group)
    return versions ? versions.get(version) : undefined
  }

  // open returns evt's plain content, or null when this key holds no key
  // that opens it. A version it lacks reads the deliveries again (a
  // rotation since the last read), at most every MIN_RELOAD_MS.
  async open(evt) {
    const seal = sealOf(evt)
    if (!seal) return null
    await this.ensure()
    let ck = this.conversationKey(seal.group, seal.version)
    if (!ck && Date.now() - this.loadedAt >= MIN_RELOAD_MS) {
      await this.ensure(true)
      ck = this.conversationKey(seal.group, seal.version)
    }
    if (!ck) return null
    try { return NT.nip44.decrypt(evt.content, ck) } catch { return null }
  }
}

// openGroupMemories opens the group-sealed memories among items (views
// whose text the relay withheld) with reader's keys and returns their
// plain content by id. Views without their event (a listing, a history)
// have it fetched over the websocket in one request; the relay serves it
// to the group's members only.
export async function openGroupMemories(reader, agent, items) {
  const plain = new Map()
  if (!items.length || !reader.signer) return plain
  const ring = keyringFor(reader, agent)
  const events = new Map(items.filter((m) => m.event).map((m) => [m.id, m.event]))
  const missing = [...new Set(items.filter((m) => !events.has(m.id)).map((m) => m.id))]
  if (missing.length) {
    const conn = reader.conn || new RelayConn(reader.signer)
    try {
      const r = await conn.req([{ ids: missing, limit: missing.length }])
      for (const e of r.events) if (missing.includes(e.id) && NT.verifyEvent(e)) events.set(e.id, e)
    } catch { /* they stay unreadable, as the relay sent them */ } finally {
      if (conn !== reader.conn) conn.close()
    }
  }
  for (const [id, evt] of events) {
    if (evt.id !== id) continue
    const text = await ring.open(evt).catch(() => null)
    if (text !== null) plain.set(id, text)
  }
  return plain
}
