// What a viewer sees of a memory, decided in one place. Every view
// (Memories, Debug, Conflicts, My privacy) passes its items through
// readable(), so a record one view can read is never "encrypted" in
// another (Memories used to say "cannot read" of search hits the API had
// no memory view for, which Debug opened with the key), and decodes
// plain content as the relay does (decodeMemory).

import { npub } from './dom.js'
import { openGroupMemories, sealOf } from './keyring.js'

const MEMORY_PREFIX = 'snow:memory:'

// decodeMemory reads plain memory content as snowclaw.DecodeMemory does:
// a JSON object {summary, detail, context} (no summary: the detail is the
// summary), or anything else as plain text taken as the summary.
export function decodeMemory(content) {
  const trimmed = (content || '').trim()
  if (trimmed.startsWith('{')) {
    try {
      const c = JSON.parse(trimmed)
      if (c && typeof c === 'object' && !Array.isArray(c)) {
        const str = (x) => (typeof x === 'string' ? x : '')
        let [summary, detail] = [str(c.summary), str(c.detail)]
        if (!summary) [summary, detail] = [detail, '']
        return { summary, detail, context: str(c.context) }
      }
    } catch { /* plain text */ }
  }
  return { summary: trimmed, detail: '', context: '' }
}

// viewOfEvent reads the markers of a kind 30078 event that came over the
// websocket the way the API's MemoryView does; an encrypted one has no
// text until readable() asks the relay for it.
export function viewOfEvent(evt) {
  const tag = (k) => (evt.tags.find((t) => t[0] === k) || [])[1]
  const all = (k) => evt.tags.filter((t) => t[0] === k).map((t) => t[1])
  const d = tag('d') || ''
  const encrypted = evt.tags.some((t) => t[0] === 'encrypted')
  const plain = encrypted ? { summary: '', detail: '', context: '' } : decodeMemory(evt.content)
  // the markers decide the tier, as the relay's snowclaw.ReadEvent does:
  // sealed with a group key, it is the group's
  const tier = encrypted ? (tag('p') ? 'private' : sealOf(evt) ? 'group' : 'internal') : tag('h') ? 'group' : 'public'
  return {
    id: evt.id, pubkey: evt.pubkey, created_at: evt.created_at, encrypted,
    topic: d.startsWith(MEMORY_PREFIX) ? d.slice(MEMORY_PREFIX.length) : d || `kind ${evt.kind}`,
    tier, group: tag('h'), person: tier === 'private' ? tag('p') : undefined,
    text: plain.summary, detail: plain.detail, context: plain.context,
    tags: all('t'), source: tag('snow:source') || npub(evt.pubkey), model: tag('snow:model'),
    confidence: parseFloat(tag('snow:confidence')) || 0, version: parseInt(tag('snow:version'), 10) || 0,
    supersedes: all('snow:supersedes'), event: evt, isMemory: d.startsWith(MEMORY_PREFIX),
  }
}

// viewOfHit is what a view shows of a search hit: the relay's memory view
// when it sent one, else the event's markers. A group memory's view keeps
// its sealed event, which readable() opens with the reader's group key.
export function viewOfHit(hit) {
  if (!hit.memory) return viewOfEvent(hit.event)
  return hit.memory.encrypted && hit.memory.tier === 'group' ? { ...hit.memory, event: hit.event } : hit.memory
}

// readable fills in what reader (its signed api, its signer, its
// websocket if it has one) may read of each item, one way for every view:
// the relay's view when it has the text; a group memory sealed with its
// group's key is opened with the keys the agent sent this key
// (keyring.js), the only way to read it; another encrypted memory without
// text is asked of the API for this key (GET /api/v1/memories/{id}); what
// the API does not open (a record that is not a memory item, such as the
// agent's notes about a person, sealed to them) is opened with the key
// itself, NIP-44 with the agent (the key's own records) or the author.
// What is still encrypted, this key cannot read, and every view says so
// in the same words.
export async function readable(reader, agent, items) {
  const sealed = items.filter((m) => m && m.encrypted && m.tier === 'group' && !m.text && !m.context)
  if (sealed.length) {
    const opened = await openGroupMemories(reader, agent, sealed).catch(() => new Map())
    for (const m of sealed) {
      if (!opened.has(m.id)) continue
      const c = decodeMemory(opened.get(m.id))
      Object.assign(m, { text: c.summary, detail: c.detail, context: c.context, encrypted: false, sealed: true })
    }
  }
  await Promise.all(items.map(async (m) => {
    // a view from the API (no raw event) is the relay's answer already
    if (!m || !m.encrypted || m.text || m.context || !m.event || m.tier === 'group') return
    if (m.isMemory !== false) {
      try {
        const d = await reader.api('GET', `/api/v1/memories/${encodeURIComponent(m.id)}`)
        const v = d && d.memory
        if (v && v.id === m.id && !v.encrypted) {
          Object.assign(m, { text: v.text || '', detail: v.detail || '', context: v.context || '', encrypted: false })
          return
        }
      } catch { /* not one this key may get: try its own key below */ }
    }
    const evt = m.event
    const decrypt = reader.signer && reader.signer.decrypt
    if (!evt || !decrypt) return
    const peer = evt.pubkey === reader.signer.pubkey ? agent : evt.pubkey
    if (!peer) return
    try {
      const c = decodeMemory(await decrypt(peer, evt.content))
      Object.assign(m, { text: c.summary, detail: c.detail, context: c.context, encrypted: false })
    } catch { /* not sealed for this key */ }
  }))
  return items
}

// UNREADABLE is what every view shows of a memory its key cannot open.
export const UNREADABLE = '(encrypted: this key cannot read it)'

// shownText is a memory's text as every view shows it.
export function shownText(m) {
  return m.text || m.context || (m.encrypted ? UNREADABLE : '')
}
