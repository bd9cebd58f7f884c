// Debug view: run a search exactly as the relay ranks it for a reader,
// with the score breakdown of every result (explain). The reader is the
// logged-in key, or an agent's key typed here to see the world as that
// agent does; that key is used for this search only and kept nowhere.

import { RelayConn, call, query } from './api.js'
import { sessionSigner } from './auth.js'
import { count, empty, field, fill, h, idChip, npub, num, short, status, topic as topicEl } from './dom.js'
import { readable, shownText, viewOfHit } from './memview.js'
import { person } from './names.js'

const COLUMNS = [
  ['bm25_rank', 'BM25 rank', 0], ['bm25_score', 'BM25 score', 3], ['vector_rank', 'vector rank', 0],
  ['vector_score', 'vector score', 3], ['fused', 'fused', 4], ['trust', 'trust', 3], ['confidence', 'confidence', 3],
  ['recency', 'recency', 3], ['length', 'length', 3], ['final', 'final', 4],
]

export function mount(root, ctx) {
  const q = h('input', { type: 'search', name: 'q', autocomplete: 'off', placeholder: 'what the agent would search for' })
  const limit = h('input', { type: 'number', name: 'limit', min: '1', max: '100', value: '20' })
  const asKey = h('input', { type: 'password', name: 'as', autocomplete: 'off', placeholder: 'nsec1… (optional)' })
  const via = h('select', { name: 'via' }, h('option', { value: 'http' }, 'HTTP API'), h('option', { value: 'ws' }, 'websocket (NIP-50 REQ)'))
  const st = status()
  const body = h('tbody')
  const table = h('table', { class: 'explain', id: 'explain', hidden: true },
    h('caption', {}, 'Ranking breakdown, best first: final = fused × trust × confidence × recency × length'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'memory'),
      COLUMNS.map(([, name]) => h('th', { scope: 'col', class: 'num' }, name)), h('th', { scope: 'col' }, 'conflicts with'))),
    body)
  const none = h('div', { id: 'explain-empty' })
  const intro = () => empty('Explain a search.',
    'Type what an agent would search for and press Explain. Each result shows why it ranks where it does: its BM25 (words) and vector (meaning) ranks and scores, their fusion, and the factors that multiply it — the source\'s trust, the memory\'s confidence, its recency and its length.',
    'Search as another key (an agent\'s nsec) to see exactly what that key finds; the key is used for that one search and kept nowhere.')

  async function run(ev) {
    ev.preventDefault()
    if (!q.value.trim()) return ctx.error(new Error('Type a query to explain.'))
    let signer = ctx.signer
    try {
      if (asKey.value.trim()) signer = sessionSigner(asKey.value)
    } catch (err) { return ctx.error(err) }
    fill(body)
    fill(none)
    table.hidden = true
    st.textContent = `Searching as ${short(npub(signer.pubkey))}…`
    try {
      const res = await explainSearch(ctx, signer, q.value, parseInt(limit.value, 10) || 20, via.value)
      // read as the key searched: what it may read, the way every view does
      const asSigner = (method, path, payload) => call(signer, method, path, payload)
      const views = await readable({ api: asSigner, signer, conn: signer === ctx.signer ? ctx.conn : undefined }, ctx.agent, res.map(viewOfHit))
      fill(body, res.map((hit, i) => row(views[i], hit.explain || {}, i)))
      table.hidden = !res.length
      if (!res.length) {
        fill(none, empty(`No result for “${q.value}”.`,
          'Nothing this key may read passed the relevance floor: no memory shares a word with the query, and none is close enough in meaning. Try other words, or search as another key.'))
      }
      st.textContent = `${count(res.length, 'result', 'results')} for “${q.value}” as ${signer === ctx.signer ? 'you' : short(npub(signer.pubkey))}.`
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  function row(m, x, i) {
    return h('tr', { dataset: { id: m.id } },
      h('td', { class: 'num' }, String(i + 1)),
      h('td', { class: 'memcell' }, topicEl(m.topic, 'strong'), ' ', h('span', { class: `tier tier-${m.tier}` }, m.tier), h('br'),
        h('span', { class: m.text || m.context ? 'mtext' : 'mtext unreadable' }, shownText(m)), h('br'),
        h('small', {}, 'source ', person(m.source), m.model ? ` · ${m.model}` : '', ' · ', idChip(m.id)),
        x.origin && x.origin !== 'local' ? h('span', { class: 'badge warn', title: `found on ${x.origin} (remote trust ${x.remote_trust}), not stored here` }, `remote: ${x.origin}`) : null),
      COLUMNS.map(([k, , digits]) => h('td', { class: 'num', dataset: { col: k } }, digits === 0 ? (x[k] ? String(x[k]) : '–') : num(x[k], digits))),
      h('td', { class: 'conflicts-with' }, (x.conflicts_with || []).map((id) => h('span', { class: 'mid', title: id, dataset: { fullId: id } }, id.slice(0, 8) + '…'))))
  }

  fill(root,
    h('h2', {}, 'Debug: how the relay ranks a search'),
    h('form', { class: 'row', onsubmit: run, 'aria-label': 'Explain a search' },
      field('Query', q), field('Limit', limit),
      field('Search as another key', asKey, 'kept in this page for this search only'), field('Through', via),
      h('button', { type: 'submit', class: 'primary' }, 'Explain')),
    st, none, table)
  fill(none, intro())
  return { show: () => q.focus() }
}

// explainSearch asks the HTTP API (explain=1), or sends the NIP-50 REQ
// another agent would send, with explain:true: the relay then adds the
// breakdown in a NOTICE before EOSE.
async function explainSearch(ctx, signer, text, limit, via) {
  if (via === 'http') {
    const res = await call(signer, 'GET', '/api/v1/search' + query({ q: text, limit, explain: true }))
    return res.results || []
  }
  const conn = signer === ctx.signer ? ctx.conn : new RelayConn(signer)
  try {
    const r = await conn.req([{ search: `${text} explain:true`, limit }])
    if (r.closed) throw new Error(r.closed)
    const rows = new Map((r.explain || []).map((x) => [x.id, x]))
    return r.events.map((event) => ({ event, explain: rows.get(event.id) }))
  } finally {
    if (conn !== ctx.conn) conn.close()
  }
}
