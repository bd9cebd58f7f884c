// Memory explorer: browse by tier, topic, source agent and group, search
// with the relay's hybrid (BM25 + vector) ranking, provenance of every
// memory, and its version history with word diffs. Everything shown is
// what the relay lets the logged-in key read.

import { query } from './api.js'
import { renderDiff } from './diff.js'
import { count, empty, field, fill, h, idChip, status, topic as topicEl, when } from './dom.js'
import { readable, shownText, viewOfHit } from './memview.js'
import { person } from './names.js'

// memoryCard shows one memory with its provenance. opts.actions are extra
// buttons; opts.filter(kind, value) makes topic, source and group clickable.
export function memoryCard(m, opts = {}) {
  const link = (kind, value, label) => opts.filter
    ? h('button', { type: 'button', class: 'link', title: `Show memories with ${kind} ${value}`, onclick: () => opts.filter(kind, value) }, label)
    : h('span', { title: value }, label)
  return h('li', { class: 'memory', dataset: { id: m.id } },
    h('div', { class: 'mhead' },
      h('span', { class: `tier tier-${m.tier}` }, m.tier || '?'), ' ',
      link('topic', m.topic, topicEl(m.topic)),
      m.version ? h('span', { class: 'badge' }, `v${m.version}`) : null,
      m.sealed ? h('span', { class: 'badge', title: 'sealed with the group\'s key; opened in this page with the key the relay\'s agent sent you' }, 'group key') : null,
      m.superseded_by && m.superseded_by.length ? h('span', { class: 'badge warn' }, 'superseded') : null),
    h('p', { class: m.text || m.context ? 'mtext' : 'mtext unreadable' }, shownText(m)),
    m.detail ? h('p', { class: 'detail' }, m.detail) : null,
    h('p', { class: 'prov' },
      'source ', link('source', m.source, person(m.source)),
      m.learnt_from ? [' · learnt from ', person(m.learnt_from)] : null,
      m.person ? [' · about ', person(m.person)] : null,
      m.model ? [' · model ', h('span', { class: 'model' }, m.model)] : null,
      ' · ', h('time', { datetime: new Date(m.created_at * 1000).toISOString() }, when(m.created_at)),
      m.confidence ? ` · confidence ${m.confidence}` : null,
      m.group ? [' · group ', link('group', m.group, m.group)] : null,
      m.tags && m.tags.length ? ` · #${m.tags.join(' #')}` : null,
      ' · ', idChip(m.id)),
    opts.actions ? h('div', { class: 'actions' }, opts.actions) : null)
}

export function mount(root, ctx) {
  const q = h('input', { type: 'search', name: 'q', placeholder: 'e.g. deploy tier:group t:rust', autocomplete: 'off' })
  const tier = h('select', { name: 'tier' }, ['', 'public', 'group', 'private', 'internal'].map((t) => h('option', { value: t }, t || 'any')))
  const topic = h('input', { name: 'topic', placeholder: 'project/apollo' })
  const source = h('input', { name: 'source', placeholder: 'npub1…' })
  const group = h('input', { name: 'group', list: 'group-ids' })
  const groups = h('datalist', { id: 'group-ids' })
  const superseded = h('input', { type: 'checkbox', name: 'include_superseded', id: 'include-superseded' })
  const st = status()
  const list = h('ul', { class: 'memories', id: 'memory-list', 'aria-label': 'Memories' })
  const none = h('div', { id: 'memory-empty' })
  const detail = h('section', { class: 'detail-pane', id: 'memory-detail', 'aria-label': 'Version history', 'aria-live': 'polite' })
  // the list takes the page's width until a history is open beside it
  const split = h('div', { class: 'split' }, h('div', {}, none, list), detail)
  const closeDetail = () => { fill(detail); split.classList.remove('with-detail') }

  const filter = (kind, value) => {
    for (const c of [tier, topic, source, group]) c.value = ''
    ;({ topic, source, group })[kind].value = value
    browse()
  }
  const clearFilters = () => {
    for (const c of [q, tier, topic, source, group]) c.value = ''
    superseded.checked = false
    browse()
  }
  const show = async (items, what, nothing) => {
    await readable(ctx, ctx.agent, items)
    fill(none, items.length ? null : nothing())
    fill(list, items.map((m) => memoryCard(m, {
      filter,
      actions: m.isMemory === false ? null : h('button', { type: 'button', onclick: () => history(m.id) }, 'History'),
    })))
    st.textContent = `${count(items.length, 'memory', 'memories')} ${what}`
  }

  async function search(ev) {
    ev.preventDefault()
    if (!q.value.trim()) return ctx.error(new Error('Type something to search for.'))
    st.textContent = 'Searching…'
    try {
      const res = await ctx.api('GET', '/api/v1/search' + query({ q: q.value, limit: 50 }))
      const items = (res.results || []).map(viewOfHit)
      const text = q.value
      await show(items, `match “${text}”, best first`, () => empty(`Nothing matches “${text}”.`,
        'Search finds words and their meaning among the memories you may read. Try fewer or other words, or drop an extension such as tier: or group:.',
        h('button', { type: 'button', onclick: clearFilters }, 'List every memory instead')))
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  async function browse(ev) {
    if (ev) ev.preventDefault()
    st.textContent = 'Loading…'
    const params = { tier: tier.value, topic: topic.value.trim(), source: source.value.trim(), group: group.value.trim(), include_superseded: superseded.checked, limit: 100 }
    try {
      const res = await ctx.api('GET', '/api/v1/memories' + query(params))
      const filtered = params.tier || params.topic || params.source || params.group
      await show(res.memories || [], 'listed, newest first', () => filtered
        ? empty('No memories match these filters.', 'Clear a filter, or tick “old versions too” to list replaced versions as well.',
          h('button', { type: 'button', onclick: clearFilters }, 'Clear the filters'))
        : empty('No memories yet.',
          'This relay holds no memory you may read. To store the first one:',
          h('ul', {},
            h('li', {}, 'connect an agent or an MCP host (Claude, Cursor…) to this relay and let it call ', h('code', {}, 'memory_store'), ';'),
            h('li', {}, 'or send ', h('code', {}, 'POST /api/v1/memories'), ' with ', h('code', {}, '{"text": "…"}'), ' signed with your key (NIP-98);'),
            h('li', {}, 'or talk in a group the relay\'s agent belongs to: it learns from the conversation.')),
          'Private memories of other people, and those of groups you are not in, are never listed to you.'))
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  async function history(id) {
    split.classList.add('with-detail')
    fill(detail, h('p', {}, 'Loading history…'))
    try {
      const d = await ctx.api('GET', `/api/v1/memories/${encodeURIComponent(id)}`)
      const seen = new Set()
      const versions = [...(d.superseded_by || []), d.memory, ...(d.history || [])]
        .filter((m) => m && !seen.has(m.id) && seen.add(m.id))
        .sort((a, b) => b.created_at - a.created_at || (b.version || 0) - (a.version || 0))
      await readable(ctx, ctx.agent, versions)
      const full = (m) => [shownText(m), m.detail].filter(Boolean).join('\n')
      fill(detail,
        h('div', { class: 'detail-head' }, h('h3', {}, 'History of ', topicEl(d.memory.topic)),
          h('button', { type: 'button', onclick: closeDetail, 'aria-label': 'Close the history' }, 'Close')),
        h('p', { class: 'hint' }, `${versions.length} ${versions.length === 1 ? 'version' : 'versions'}, newest first; each shows what changed from the one before.`),
        h('ol', { class: 'versions' }, versions.map((m, i) => h('li', { class: m.id === id ? 'version selected' : 'version', dataset: { id: m.id } },
          h('h4', {}, `${m.version ? 'v' + m.version : 'version'} · ${when(m.created_at)}`, i === 0 ? ' (current)' : ' (superseded)'),
          h('p', { class: 'prov' }, topicEl(m.topic), ' · source ', person(m.source), m.model ? ` · ${m.model}` : '', m.confidence ? ` · confidence ${m.confidence}` : '', ' · ', idChip(m.id)),
          versions[i + 1] ? [h('p', { class: 'hint' }, 'Changes from the previous version:'), renderDiff(full(versions[i + 1]), full(m))] : h('p', { class: 'mtext' }, full(m))))))
    } catch (err) { closeDetail(); ctx.error(err) }
  }

  async function loadGroups() {
    try {
      const r = await ctx.conn.req([{ kinds: [39000], limit: 200 }])
      fill(groups, r.events.map((e) => {
        const d = (e.tags.find((t) => t[0] === 'd') || [])[1] || ''
        const name = (e.tags.find((t) => t[0] === 'name') || [])[1]
        return h('option', { value: d }, name && name !== d ? name : null)
      }))
    } catch { /* the group list is a convenience; browsing works without it */ }
  }

  fill(root,
    h('h2', {}, 'Memories'),
    h('form', { role: 'search', class: 'row', onsubmit: search },
      field('Search (full text and meaning)', q, 'extensions: tier: t: source: model: group: since: min_confidence: include:superseded'),
      h('button', { type: 'submit', class: 'primary' }, 'Search')),
    h('form', { class: 'row', onsubmit: browse, 'aria-label': 'Browse memories' },
      field('Tier', tier), field('Topic prefix', topic), field('Source agent', source), field('Group', group), groups,
      h('div', { class: 'field check' }, superseded, h('label', { for: superseded.id }, 'old versions too')),
      h('button', { type: 'submit', class: 'primary' }, 'List')),
    st,
    split)
  return { show: () => { if (!list.children.length) { browse(); loadGroups() } }, search: (text) => { q.value = text; search(new Event('submit')) } }
}
