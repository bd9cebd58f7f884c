// Group keys: for each encrypted group the logged-in key may manage (the
// relay's owner: all; a group's admins: theirs), the current key version
// and which members it was delivered to. The relay answers with no key
// material (GET /api/v1/groups/keys); a delivery that failed shows as
// retrying until the relay has sent it again.

import { count, fill, h, status, when } from './dom.js'
import { person } from './names.js'

const STATES = {
  delivered: ['delivered', 'the current key is stored on the relay for them'],
  retrying: ['retrying', 'a delivery failed; the relay sends every key again until it is stored'],
  waiting: ['waiting', 'not yet among the holders: the relay has not caught up with a change of the group'],
}

export function mount(root, ctx) {
  const st = status()
  const list = h('div', { id: 'group-keys' })

  async function load() {
    st.textContent = 'Loading key deliveries…'
    try {
      const res = await ctx.api('GET', '/api/v1/groups/keys')
      const groups = res.groups || []
      fill(list, groups.length ? groups.map(render) : h('p', { class: 'hint' },
        'You manage no encrypted group. Only the relay\'s owner and a group\'s admins see its key deliveries.'))
      st.textContent = groups.length ? `${count(groups.length, 'encrypted group', 'encrypted groups')}.` : ''
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  function render(g) {
    const members = g.members || []
    const delivered = members.filter((m) => m.state === 'delivered').length
    return h('article', { class: 'conflict groupkeys', dataset: { group: g.group } },
      h('h3', {}, g.group,
        g.encrypted ? h('span', { class: 'badge' }, 'encrypted') : h('span', { class: 'badge warn' }, 'encryption off (keys kept)')),
      h('p', { class: 'prov' }, g.version ? `key version ${g.version} of ${g.versions}` : 'no key made yet',
        g.updated_at ? ` · record updated ${when(g.updated_at)}` : '',
        ` · ${delivered} of ${count(members.length, 'member', 'members')} hold it`),
      h('table', { class: 'keys' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'member'), h('th', { scope: 'col' }, `version ${g.version || '–'}`))),
        h('tbody', {}, members.map((m) => {
          const [label, title] = STATES[m.state] || [m.state, '']
          return h('tr', { dataset: { pubkey: m.pubkey, state: m.state } },
            h('td', {}, person(m.pubkey)),
            h('td', {}, h('span', { class: m.state === 'delivered' ? 'badge' : 'badge warn', title }, label)))
        }))))
  }

  fill(root,
    h('h2', {}, 'Group keys'),
    h('p', { class: 'hint' }, 'Encrypted groups keep their memories sealed with a key the relay\'s agent hands to each member. No key is shown here.'),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: load }, 'Refresh')),
    st, list)
  return { show: () => load() }
}
