// The relay owner's view: the relay's health, the agent's status, the
// remote relays, every group and the people the agent knows. It is shown
// when the logged-in key is the relay's owner, and every figure in it
// comes from a route the relay answers for the owner alone (GET
// /api/v1/status, /api/v1/agent/…) or from what the read rule serves the
// owner's key: a page that merely believes it is the owner's gets
// "restricted:" in each section and no data.

import { ApiError } from './api.js'
import { ago, bytes, count, duration, empty, fill, h, npub, status, topic as topicEl, when } from './dom.js'
import { loadGroups, renderGroup } from './groups.js'
import { person } from './names.js'

const EAGER_RECORDS = 25 // people whose record is read at once; the rest on demand

export function mount(root, ctx) {
  const sections = {
    health: part('owner-health', 'Relay health'),
    agent: part('owner-agent', 'Agent'),
    remotes: part('owner-remotes', 'Remote relays'),
    groups: part('owner-groups', 'Groups'),
    people: part('owner-people', 'People the agent knows'),
  }

  async function load() {
    await Promise.all([loadStatus(), loadAgent(), loadGroupsPart(), loadPeople()])
  }

  // loadStatus fills the health and remotes sections from one report
  async function loadStatus() {
    const s = sections.health
    s.busy('Reading the relay\'s status…')
    sections.remotes.busy('Reading the remote relays…')
    try {
      const [hl, st] = await Promise.all([ctx.api('GET', '/api/v1/health'), ctx.api('GET', '/api/v1/status')])
      const disk = st.disk || {}
      const ix = st.index || {}
      const load = ix.loading
      s.show(facts([
        ['status', 'Status', hl.status === 'ok' ? 'ok' : hl.status, hl.status === 'ok' ? 'ok' : 'warn'],
        ['version', 'Version', st.version || hl.version],
        ['connections', 'Open connections', String(st.connections)],
        ['disk', 'Disk', disk.error ? `not measured: ${disk.error}` : `${bytes(disk.free_bytes)} free`
          + (disk.reserve_bytes ? ` · writes stop below ${bytes(disk.reserve_bytes)}` : ' · no reserve set ([store] min_free_mb)'), disk.full ? 'bad' : ''],
        disk.full ? ['disk-full', 'Writes', 'refused: the disk is below its reserve', 'bad'] : null,
        ['index', 'Search index', !ix.enabled ? 'off ([search] enabled = false)'
          : `${ix.status}${ix.rebuilding ? ', rebuilding after damage' : ''} · ${count(ix.docs, 'document', 'documents')}`
          + (load ? ` · ${load.step}${load.percent !== undefined ? ` ${load.percent}%` : ''}${load.error ? `: ${load.error}` : ''}` : ''),
        ix.enabled && ix.status === 'ready' && !ix.rebuilding ? 'ok' : 'warn'],
        ['feed', 'Change log', st.feed
          ? `${st.feed.stopped ? 'stopped: restart this instance' : `${st.feed.entries} entries, ${st.feed.seconds.toFixed(1)} s behind`} (position ${st.feed.position} of ${st.feed.head})`
          : 'not shared: this relay is alone on its store', st.feed && (st.feed.stopped || st.feed.seconds >= 2) ? 'bad' : ''],
      ]))
      renderRemotes(st.remotes || [])
    } catch (err) { s.fail(err); sections.remotes.fail(err) }
  }

  async function loadAgent() {
    const s = sections.agent
    s.busy('Reading the agent\'s status…')
    try {
      const [stats, learning] = await Promise.all([ctx.api('GET', '/api/v1/agent/stats'), ctx.api('GET', '/api/v1/agent/learning')])
      const l = stats.learning || {}
      const sum = learning.last_summary
      s.show(facts([
        ['model', 'Model', learning.model || 'none', learning.model ? '' : 'warn'],
        learning.why ? ['why', 'Learning', `off: ${learning.why}`, 'warn'] : ['learning', 'Learning', `on · batches of ${learning.batch_size} messages after ${duration(learning.debounce)} of quiet`],
        ['queue', 'Queue', `${stats.queue_depth} of ${stats.queue_cap} waiting · ${stats.handled} handled · ${stats.dropped} dropped`, stats.dropped ? 'warn' : ''],
        ['replies', 'Replies', `${stats.replies} · ${count(stats.llm_errors, 'model error', 'model errors')}`, stats.llm_errors ? 'warn' : ''],
        ['records', 'Records written', `${stats.flushed} · ${count(stats.flush_errors, 'failure', 'failures')}`, stats.flush_errors ? 'bad' : ''],
        ['calls', 'Learning calls', `${l.calls || 0} (at most ${learning.calls_per_hour} an hour) · ${l.skipped_budget || 0} skipped for the budget · ${l.errors || 0} failed`],
        ['cost', 'Tokens', `${(l.prompt_tokens || 0).toLocaleString('en')} prompt · ${(l.output_tokens || 0).toLocaleString('en')} output`],
        ['learnt', 'Learnt', `${l.added || 0} added · ${l.updated || 0} updated · ${l.ignored || 0} ignored · ${count(l.pending || 0, 'message', 'messages')} waiting`],
        ['items', 'Memory items', `${learning.items} · consolidated ${count(l.compactions || 0, 'time', 'times')} (${learning.compact_every === 'never (memory compact only)' ? 'on demand only' : `every ${duration(learning.compact_every)}`})`],
      ]),
      h('h4', {}, 'Last weekly summary'),
      sum
        ? h('div', { class: 'summary', id: 'last-summary' },
          h('p', { class: 'prov' }, topicEl(sum.topic), ` · ${when(sum.created_at)} · `, sum.group ? ['group ', sum.group] : sum.person ? ['private, with ', person(sum.person)] : sum.tier),
          h('p', { class: 'mtext' }, sum.text))
        : empty('No weekly summary yet.', `The agent summarizes each conversation's weeks once they are older than ${duration(learning.summary_after)}, or sooner when a conversation passes ${Number(learning.summary_tokens || 0).toLocaleString('en')} tokens${learning.model ? '' : '; it needs a model to do so'}.`))
    } catch (err) {
      if (err instanceof ApiError && err.status === 503) return s.show(empty(/agent is off/.test(err.message) ? 'The agent is off on this relay.' : 'The agent runs on another instance.', err.message))
      s.fail(err)
    }
  }

  function renderRemotes(remotes) {
    const s = sections.remotes
    if (!remotes.length) {
      return s.show(empty('No remote relays.',
        'A search with include:remote asks the relays listed under [memory.remote] too, for their public memories, ranked with this relay\'s own and weighed by the trust you give each: relays = { "wss://memory.example" = 0.8 }.'))
    }
    s.show(h('table', { class: 'remotes', id: 'remotes' },
      h('thead', {}, h('tr', {}, ['relay', 'trust', 'health', 'NIP-50', 'last answer', 'requests'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, remotes.map((r) => h('tr', { dataset: { url: r.url, state: r.state } },
        h('td', { class: 'mid' }, r.url),
        h('td', { class: 'num' }, r.trust.toFixed(2)),
        h('td', {}, h('span', { class: `badge ${r.state === 'ok' ? 'good' : r.state === 'failing' ? 'warn' : 'off'}` }, r.state === 'unasked' ? 'not asked yet' : r.state),
          r.state === 'failing' ? h('div', { class: 'why' }, r.last_error, r.resting_until ? ` · asked again ${when(r.resting_until).slice(11)}` : '') : null),
        h('td', {}, r.nip50 === undefined ? '–' : r.nip50 ? 'yes' : 'no (t tags)'),
        h('td', {}, r.last_ok ? `${ago(r.last_ok)}${r.last_seconds ? ` in ${r.last_seconds < 1 ? `${Math.max(1, Math.round(r.last_seconds * 1000))} ms` : `${r.last_seconds.toFixed(1)} s`}` : ''}` : 'never'),
        h('td', { class: 'num' }, `${r.requests}${r.failures ? ` (${r.failures} failed)` : ''}`))))),
    h('p', { class: 'hint' }, 'A remote is asked only by searches with include:remote; its health is what the last of them found.'))
  }

  async function loadGroupsPart() {
    const s = sections.groups
    s.busy('Reading the groups…')
    try {
      const groups = await loadGroups(ctx)
      s.show(groups.length
        ? h('div', { class: 'groups', id: 'all-groups' }, groups.map((g) => renderGroup(g, ctx)))
        : empty('No groups yet.', 'Create one from a Nostr client that speaks NIP-29 (kind 9007), as the owner or a key listed in [groups] creators; members then join it, and the agent remembers its conversation.'),
      groups.length ? h('p', { class: 'hint' }, `${count(groups.length, 'group', 'groups')}; hidden ones are shown to you as the owner.`) : null)
    } catch (err) { s.fail(err) }
  }

  async function loadPeople() {
    const s = sections.people
    s.busy('Reading the agent\'s records…')
    try {
      const listing = await ctx.api('GET', '/api/v1/agent/memory')
      const npubs = listing.npubs || []
      if (!npubs.length) {
        return s.show(empty('The agent knows nobody yet.',
          'It starts a record of a person when they write in a group it is in or message it in private. You can add a note yourself: snowclaw memory set npub1… --note "…".'))
      }
      const rows = new Map()
      const tbody = h('tbody')
      for (const np of npubs) {
        const row = { np, tr: h('tr', { dataset: { npub: np } }), detail: h('tr', { class: 'record', hidden: true }), snap: null }
        rows.set(np, row)
        renderPerson(row)
        tbody.append(row.tr, row.detail)
      }
      s.show(h('table', { class: 'people', id: 'people' },
        h('thead', {}, h('tr', {}, ['person', 'first seen', 'last seen', 'notes', 'memories', ''].map((c) => h('th', { scope: 'col' }, c)))),
        tbody),
      h('p', { class: 'hint' }, `${count(npubs.length, 'person', 'people')} with a record; ${listing.items} memory items, ${count(listing.lessons || 0, 'lesson', 'lessons')}. The record is what the agent holds about them and shows in its prompts; they can export, correct or erase it from their privacy page.`))
      await Promise.all(npubs.slice(0, EAGER_RECORDS).map((np) => readRecord(rows.get(np))))
      // the people heard from most recently first
      const order = [...rows.values()].sort((a, b) => lastSeen(b) - lastSeen(a))
      for (const r of order) tbody.append(r.tr, r.detail)
    } catch (err) {
      if (err instanceof ApiError && err.status === 503) return s.show(empty('No records: the agent is not running here.', err.message))
      s.fail(err)
    }
  }

  const lastSeen = (r) => (r.snap && r.snap.npub ? r.snap.npub.last_interaction : 0)

  async function readRecord(row) {
    try {
      row.snap = await ctx.api('GET', `/api/v1/agent/memory/${encodeURIComponent(row.np)}`)
      row.error = ''
    } catch (err) { row.error = err.message }
    renderPerson(row)
  }

  function renderPerson(row) {
    const n = row.snap && row.snap.npub
    const notes = n ? (n.notes || []).length + (n.owner_notes || []).length + facetNotes(n) : null
    fill(row.tr,
      h('td', {}, person(row.np), n && n.is_owner ? h('span', { class: 'badge' }, 'relay owner') : null),
      h('td', {}, n ? [when(n.first_seen).slice(0, 10), n.first_seen_group ? [' in ', h('span', { class: 'mid' }, n.first_seen_group)] : ''] : ''),
      h('td', {}, n ? ago(n.last_interaction) : ''),
      h('td', { class: 'num' }, notes === null ? '' : String(notes)),
      h('td', { class: 'num' }, row.snap ? String((row.snap.items || []).length) : ''),
      h('td', {}, row.error ? h('span', { class: 'why' }, row.error) : h('button', {
        type: 'button', 'aria-expanded': String(!row.detail.hidden),
        onclick: async () => {
          if (!row.detail.hidden) { row.detail.hidden = true; return renderPerson(row) }
          if (!row.snap) await readRecord(row)
          if (!row.snap) return
          fill(row.detail, h('td', { colspan: '6' }, renderRecord(row.np, row.snap)))
          row.detail.hidden = false
          renderPerson(row)
        },
      }, row.detail.hidden ? 'Show record' : 'Hide record')))
  }

  function renderRecord(np, snap) {
    const n = snap.npub || {}
    const list = (xs) => (xs && xs.length ? h('ul', {}, xs.map((x) => h('li', {}, x))) : h('p', { class: 'hint' }, 'none'))
    const prefs = (p) => Object.entries(p || {}).map(([k, v]) => `${k}: ${v}`)
    const facets = Object.entries(n.groups || {})
    return h('div', { class: 'record-body', dataset: { npub: np } },
      h('p', { class: 'prov' }, npub(np), ' · names seen: ', (n.display_names || []).map((d) => d[0]).join(', ') || 'none'),
      h('div', { class: 'record-grid' },
        h('div', {}, h('h4', {}, 'Notes'), list(n.notes)),
        h('div', {}, h('h4', {}, 'Your notes'), list(n.owner_notes)),
        h('div', {}, h('h4', {}, 'Preferences'), list(prefs(n.preferences))),
        n.private ? h('div', {}, h('h4', {}, 'Learnt in private'), list([...(n.private.notes || []), ...prefs(n.private.preferences)])) : null,
        facets.map(([g, f]) => h('div', {}, h('h4', {}, `Learnt in ${g}`), list([...(f.notes || []), ...prefs(f.preferences)])))),
      h('h4', {}, `Memories about them (${(snap.items || []).length})`),
      (snap.items || []).length
        ? h('ul', { class: 'record-items' }, snap.items.map((it) => h('li', { dataset: { id: it.id } },
          h('span', { class: `tier tier-${it.tier}` }, it.tier), ' ', topicEl(it.topic), ' ', h('span', { class: 'mtext' }, it.text))))
        : h('p', { class: 'hint' }, 'none'),
      h('p', { class: 'hint' }, `${count((snap.history || []).length, 'message', 'messages')} of theirs in the agent's private conversation buffer.`))
  }

  fill(root,
    h('h2', {}, 'Owner'),
    h('p', { class: 'hint' }, 'Your relay at a glance. The relay answers these figures to its owner\'s key alone, and checks that on every request.'),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: load }, 'Refresh')),
    h('div', { class: 'owner-grid' }, sections.health.el, sections.agent.el),
    sections.remotes.el, sections.groups.el, sections.people.el)
  let loaded = false
  return { show: () => { if (!loaded) { loaded = true; load() } } }
}

function facetNotes(n) {
  let k = n.private ? (n.private.notes || []).length : 0
  for (const f of Object.values(n.groups || {})) k += (f.notes || []).length
  return k
}

// part is one section of the view with its own progress and error, so a
// refused or failing route leaves the others standing.
function part(id, title) {
  const body = h('div', { class: 'part-body' })
  const st = status()
  const el = h('section', { class: 'panel', id, 'aria-labelledby': `${id}-title` }, h('h3', { id: `${id}-title` }, title), st, body)
  return {
    el,
    busy: (what) => { st.textContent = what },
    show: (...children) => { st.textContent = ''; fill(body, ...children) },
    fail: (err) => { st.textContent = ''; fill(body, h('p', { class: 'refused', role: 'alert' }, err.message || String(err))) },
  }
}

// facts is a list of labelled figures; tone marks the ones to look at.
function facts(rows) {
  return h('dl', { class: 'facts' }, rows.filter(Boolean).map(([key, label, value, tone]) => [
    h('dt', {}, label),
    h('dd', { dataset: { fact: key }, class: tone ? `tone-${tone}` : false }, value),
  ]))
}
