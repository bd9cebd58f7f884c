// Agent directory and the owner's source preference list. The list is
// owner-signed dynamic config: the key source_preference (npubs, most
// trusted first) in the JSON content of kind 30078 d=snowclaw:config:global,
// published over the websocket; the relay applies it to ranking at once.

import { count, field, fill, h, npub, short, status, toHex } from './dom.js'
import { cleanName, nameOf, person } from './names.js'

const CONFIG_D = 'snowclaw:config:global'

export function mount(root, ctx) {
  const st = status()
  const table = h('tbody')
  const pref = [] // npubs (or group:<id>), most trusted first
  const names = new Map() // hex → agent name
  const prefList = h('ol', { class: 'preference', id: 'preference', 'aria-label': 'Source preference, most trusted first' })
  const addInput = h('input', { placeholder: 'npub1… or group:<id>', autocomplete: 'off' })
  const saveBtn = h('button', { type: 'button', class: 'primary', onclick: () => save().catch(ctx.error) }, 'Save trust order')
  const inEffect = h('pre', { class: 'trust', 'aria-label': 'Trust configuration in effect' })
  let dragFrom = -1

  const label = (entry) => {
    const name = names.get(entry.startsWith('group:') ? entry : toHex(entry))
    return name ? `${name} (${short(entry)})` : entry.startsWith('group:') ? entry : nameOf(entry)
  }
  const move = (from, to) => {
    if (from < 0 || to < 0 || from >= pref.length || to >= pref.length || from === to) return
    const [x] = pref.splice(from, 1)
    pref.splice(to, 0, x)
    renderPref()
    st.textContent = `Moved ${label(x)} to position ${to + 1}. Save to apply.`
  }
  const add = (entry) => {
    entry = entry.trim()
    if (!entry) return
    const key = entry.startsWith('group:') ? entry : npub(entry)
    if (!key.startsWith('group:') && !toHex(key)) return ctx.error(new Error(`“${entry}” is neither an npub, a hex key nor group:<id>.`))
    if (pref.includes(key)) return ctx.error(new Error(`${label(key)} is already in the list.`))
    pref.push(key)
    renderPref()
    renderAgents(lastAgents)
  }

  // only the owner can save the order, so only the owner gets controls
  // to change it; others see the order in effect
  function renderPref() {
    const edit = ctx.isOwner
    fill(prefList, pref.map((entry, i) => h('li', {
      draggable: edit ? 'true' : false, dataset: { entry }, title: entry, class: edit ? 'editable' : false,
      ondragstart: edit ? (e) => { dragFrom = i; e.dataTransfer.effectAllowed = 'move'; e.dataTransfer.setData('text/plain', entry) } : null,
      ondragover: edit ? (e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'move' } : null,
      ondrop: edit ? (e) => { e.preventDefault(); move(dragFrom, i) } : null,
    },
    edit ? h('span', { class: 'handle', 'aria-hidden': 'true' }, '⠿') : h('span', { class: 'handle' }, `${i + 1}.`),
    h('span', { class: 'entry' }, label(entry)),
    edit ? [
      h('button', { type: 'button', class: 'icon', 'aria-label': `Move ${label(entry)} up`, disabled: i === 0, onclick: () => move(i, i - 1) }, '↑'),
      h('button', { type: 'button', class: 'icon', 'aria-label': `Move ${label(entry)} down`, disabled: i === pref.length - 1, onclick: () => move(i, i + 1) }, '↓'),
      h('button', { type: 'button', class: 'icon', 'aria-label': `Remove ${label(entry)}`, onclick: () => { pref.splice(i, 1); renderPref(); renderAgents(lastAgents) } }, '✕'),
    ] : null)))
    if (!pref.length) fill(prefList, h('li', { class: 'hint' }, 'No sources ranked: every source is trusted alike.'))
  }

  let lastAgents = []
  function renderAgents(agents) {
    lastAgents = agents
    fill(table, agents.map((a) => {
      const key = npub(a.npub || a.pubkey)
      const caps = Array.isArray(a.capabilities) ? a.capabilities.join(', ') : (a.capabilities || '')
      return h('tr', { dataset: { pubkey: toHex(key) } },
        h('th', { scope: 'row', title: a.about || '' }, cleanName(a.name) ? h('span', { class: 'agent-name', title: key }, cleanName(a.name)) : person(key), a.is_self ? h('span', { class: 'badge' }, 'this relay') : null,
          a.origin ? h('span', { class: 'badge warn', title: 'profile found on a remote relay, not stored here' }, `remote: ${a.origin}`) : null,
          h('br'), h('small', { class: 'mid', title: key }, short(key))),
        h('td', {}, a.model || ''),
        h('td', {}, caps),
        h('td', {}, a.operator ? person(a.operator) : ''),
        h('td', { class: 'num', title: typeof a.model_weight === 'number' ? `model factor ${a.model_weight}` : '' }, typeof a.trust === 'number' ? a.trust.toFixed(2) : ''),
        ctx.isOwner ? h('td', {}, h('button', { type: 'button', disabled: pref.includes(key), onclick: () => add(key) }, pref.includes(key) ? 'In the trust list' : 'Add to trust list')) : null)
    }))
  }

  async function load() {
    st.textContent = 'Loading agents…'
    try {
      const res = await ctx.api('GET', '/api/v1/agents')
      const agents = res.agents || []
      for (const a of agents) names.set(toHex(a.npub || a.pubkey), cleanName(a.name))
      // entries are {source, weight, name}; plain strings are accepted too
      const entries = (res.preference || []).map((p) => (typeof p === 'string' ? { source: p } : p))
      for (const e of entries) if (cleanName(e.name)) names.set(e.source.startsWith('group:') ? e.source : toHex(e.source), cleanName(e.name))
      pref.splice(0, pref.length, ...entries.map((e) => (e.source.startsWith('group:') ? e.source : npub(e.source))))
      renderPref()
      renderAgents(agents)
      st.textContent = `${agents.length} ${agents.length === 1 ? 'agent' : 'agents'} known to this relay.`
    } catch (err) { st.textContent = ''; ctx.error(err) }
    ctx.api('GET', '/api/v1/trust').then((t) => { inEffect.textContent = JSON.stringify(t, null, 2) }, () => { inEffect.textContent = '' })
  }

  // save reads the current global config, keeps its other keys and tags,
  // sets source_preference and publishes it signed by the owner.
  async function save() {
    if (!ctx.isOwner) throw new Error('restricted: only the relay owner may change the trust order; the relay refuses config events from other keys.')
    st.textContent = 'Saving…'
    const r = await ctx.conn.req([{ kinds: [30078], authors: [ctx.owner], '#d': [CONFIG_D], limit: 1 }])
    if (r.closed) throw new Error(`reading the current config: ${r.closed}`)
    const cur = r.events.sort((a, b) => b.created_at - a.created_at)[0]
    let content = {}
    if (cur && cur.content.trim()) {
      try { content = JSON.parse(cur.content) } catch { content = null }
      if (!content || typeof content !== 'object' || Array.isArray(content)) {
        throw new Error('invalid: the current global config is not a JSON object; fix it with `snowclaw config` before saving here, so nothing in it is lost.')
      }
    }
    content.source_preference = pref.slice()
    const tags = [['d', CONFIG_D], ...(cur ? cur.tags.filter((t) => t[0] !== 'd' && t[0] !== 'source_preference') : [])]
    // newer than the stored version, or the relay keeps that one
    const createdAt = Math.max(Math.floor(Date.now() / 1000), cur ? cur.created_at + 1 : 0)
    const evt = await ctx.signer.sign({ kind: 30078, created_at: createdAt, tags, content: JSON.stringify(content) })
    await ctx.conn.publish(evt)
    await load()
    st.textContent = `Saved: ${count(pref.length, 'source', 'sources')} in order, applied to ranking now.`
  }

  fill(root,
    h('h2', {}, 'Agents'),
    st,
    h('table', { class: 'agents', id: 'agents' },
      h('caption', {}, 'Agents from their kind 0 profiles'),
      h('thead', {}, h('tr', {}, ['Agent', 'Model', 'Capabilities', 'Operator', 'Trust', ...(ctx.isOwner ? [''] : [])].map((c) => h('th', { scope: 'col' }, c)))),
      table),
    h('h3', {}, 'Source preference (most trusted first)'),
    ctx.isOwner
      ? h('p', { class: 'hint' }, 'Drag entries, or use the arrow buttons, to reorder. Saving publishes owner-signed config; ranking follows at once.')
      : h('p', { class: 'hint' }, 'The order the relay owner set; only the owner can change it.'),
    prefList,
    ctx.isOwner ? h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); add(addInput.value); addInput.value = '' } },
      field('Add a source', addInput), h('button', { type: 'submit' }, 'Add')) : null,
    ctx.isOwner ? saveBtn : null,
    h('details', {}, h('summary', {}, 'Trust in effect'), inEffect))
  return { show: () => { if (!lastAgents.length) load() } }
}
