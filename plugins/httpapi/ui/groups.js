// Groups (NIP-29) as the relay publishes them: its own key signs each
// group's metadata (39000: name and flags), the holders of roles (39001)
// and the members (39002). They are read over the websocket, so the
// relay's read rule decides what this key gets: the owner every group,
// hidden ones included; anyone else the groups that are not hidden and
// the hidden ones they are in. The owner's view lists every group; the
// "My groups" view only those that list the key as a member. The key
// version of an encrypted group comes from GET /api/v1/groups/keys, which
// answers the owner for every group and an admin for theirs.

import { count, empty, fill, h, status, when } from './dom.js'
import { person } from './names.js'

const CHUNK = 150 // group ids per REQ: three events each stay under the relay's limit of 500
const MAX_SHOWN = 50 // members listed before "and N more"

// loadGroups reads the groups; mine: only those listing this key as a
// member (the relay lists the first members by public key when a group
// outgrows one event, so a member of a huge group may be missing there).
export async function loadGroups(ctx, { mine = false } = {}) {
  const relay = ctx.relay ? { authors: [ctx.relay] } : {}
  const req = async (filters) => {
    const r = await ctx.conn.req(filters)
    if (r.closed) throw new Error(`reading the groups: ${r.closed}`)
    return r.events
  }
  const newest = new Map() // kind:d → event
  const keep = (events) => {
    for (const e of events) {
      const d = dTag(e)
      if (!d || (ctx.relay && e.pubkey !== ctx.relay)) continue
      const k = `${e.kind}:${d}`
      if (!newest.has(k) || newest.get(k).created_at < e.created_at) newest.set(k, e)
    }
  }
  let ids
  if (mine) {
    keep(await req([{ kinds: [39002], '#p': [ctx.signer.pubkey], limit: 500, ...relay }]))
    ids = [...newest.values()].filter((e) => e.kind === 39002 && e.tags.some((t) => t[0] === 'p' && t[1] === ctx.signer.pubkey)).map(dTag)
  } else {
    keep(await req([{ kinds: [39000], limit: 500, ...relay }]))
    ids = [...newest.values()].filter((e) => e.kind === 39000).map(dTag)
  }
  for (let i = 0; i < ids.length; i += CHUNK) {
    keep(await req([{ kinds: [39000, 39001, 39002], '#d': ids.slice(i, i + CHUNK), limit: 3 * CHUNK, ...relay }]))
  }
  const keys = new Map()
  try {
    const res = await ctx.api('GET', '/api/v1/groups/keys')
    for (const g of res.groups || []) keys.set(g.group, g)
  } catch { /* key versions are shown where the relay answers them */ }
  return [...new Set(ids)].filter((id) => newest.has(`39000:${id}`)).map((id) => {
    const meta = newest.get(`39000:${id}`)
    const admins = newest.get(`39001:${id}`)
    const members = newest.get(`39002:${id}`)
    const has = (name) => meta.tags.some((t) => t[0] === name)
    const roles = new Map()
    for (const t of (admins ? admins.tags : [])) if (t[0] === 'p' && t[1]) roles.set(t[1], t.slice(2).filter(Boolean))
    const people = members ? members.tags.filter((t) => t[0] === 'p' && t[1]).map((t) => t[1]) : []
    for (const pk of roles.keys()) if (!people.includes(pk)) people.push(pk)
    return {
      id, name: tag(meta, 'name') || id, about: tag(meta, 'about'),
      flags: { private: has('private'), closed: has('closed'), hidden: has('hidden'), encrypted: has('encrypted') },
      members: people, roles, updated: meta.created_at,
      partial: members && /\(the first \d+ of \d+/.test(members.content) ? members.content : '',
      key: keys.get(id),
    }
  }).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
}

function dTag(e) { return tag(e, 'd') }
function tag(e, name) { return (e.tags.find((t) => t[0] === name) || [])[1] || '' }

const FLAGS = [
  ['private', 'private', 'public', 'only members read its messages'],
  ['closed', 'closed', 'open', 'joining takes an invite code'],
  ['hidden', 'hidden', null, 'only members learn that it exists'],
  ['encrypted', 'encrypted', null, 'its memories are sealed with a key the agent hands to each member'],
]

// renderGroup is one group: its flags, key version and members with roles.
export function renderGroup(g, ctx) {
  const holders = g.key ? new Map((g.key.members || []).map((m) => [m.pubkey, m.state])) : null
  const sorted = [...g.members].sort((a, b) => (g.roles.has(b) - g.roles.has(a)) || a.localeCompare(b))
  const shown = sorted.slice(0, MAX_SHOWN)
  let key = null
  if (g.key) {
    const delivered = (g.key.members || []).filter((m) => m.state === 'delivered').length
    key = g.key.version ? `key version ${g.key.version} · ${delivered} of ${count((g.key.members || []).length, 'member holds', 'members hold')} it` : 'no key made yet'
  } else if (g.flags.encrypted) {
    key = 'key version: shown to the owner and the group\'s admins'
  }
  return h('article', { class: 'group', dataset: { group: g.id } },
    h('h3', {}, h('span', { class: 'group-name' }, g.name), g.name !== g.id ? h('small', { class: 'mid' }, ` ${g.id}`) : null),
    h('p', { class: 'flags' }, FLAGS.map(([k, on, off, why]) => g.flags[k]
      ? h('span', { class: 'badge', title: why, dataset: { flag: k } }, on)
      : off ? h('span', { class: 'badge off', title: `not ${on}` }, off) : null)),
    g.about ? h('p', { class: 'about' }, g.about) : null,
    h('p', { class: 'prov' }, count(g.members.length, 'member', 'members'), key ? ` · ${key}` : '', g.updated ? ` · metadata of ${when(g.updated)}` : ''),
    g.partial ? h('p', { class: 'hint' }, `The relay lists ${g.partial.replace(/^members of group \S+ /, '')}.`) : null,
    h('table', { class: 'members' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'member'), h('th', { scope: 'col' }, 'roles'), holders ? h('th', { scope: 'col' }, `key v${g.key.version || '–'}`) : null)),
      h('tbody', {}, shown.map((pk) => h('tr', { dataset: { pubkey: pk } },
        h('td', {}, person(pk), pk === ctx.signer.pubkey ? h('span', { class: 'badge' }, 'you') : null, pk === ctx.owner ? h('span', { class: 'badge' }, 'relay owner') : null),
        h('td', { class: 'roles' }, (g.roles.get(pk) || []).join(', ') || 'member'),
        holders ? h('td', {}, holders.get(pk) || '–') : null)))),
    sorted.length > shown.length ? h('p', { class: 'hint' }, `and ${sorted.length - shown.length} more`) : null)
}

// mount is "My groups": the groups this key is a member of.
export function mount(root, ctx) {
  const st = status()
  const list = h('div', { class: 'groups', id: 'my-groups' })
  async function load() {
    st.textContent = 'Loading your groups…'
    try {
      const groups = await loadGroups(ctx, { mine: true })
      fill(list, groups.length ? groups.map((g) => renderGroup(g, ctx)) : empty('You are in no group on this relay.',
        'A group is a NIP-29 chat room on this relay: its members share group memories, and the relay\'s agent remembers the conversation for them. Join an open group from a Nostr client that speaks NIP-29, or ask a group\'s admin for an invite code to a closed one.'))
      st.textContent = groups.length ? `You are a member of ${count(groups.length, 'group', 'groups')}.` : ''
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }
  fill(root,
    h('h2', {}, 'My groups'),
    h('p', { class: 'hint' }, 'The groups you are a member of, with their members and roles as the relay publishes them.'),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: load }, 'Refresh')),
    st, list)
  return { show: () => load() }
}
