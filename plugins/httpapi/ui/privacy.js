// The person's own page (docs/privacy.md): their private memories, export as JSON
// or markdown, forget by id or by query (preview, then confirm with the
// relay's token), freeze, the audit trail, and destroy (confirmed with its
// token). The relay acts on the logged-in key's own data only.

import { query } from './api.js'
import { memoryCard } from './explorer.js'
import { count, download, field, fill, h, npub, status } from './dom.js'
import { readable } from './memview.js'

export function mount(root, ctx) {
  const st = status()
  const list = h('ul', { class: 'memories', id: 'private-list', 'aria-label': 'Your private memories' })
  const summary = h('p', { id: 'export-summary' })
  const forgetQ = h('input', { name: 'query', placeholder: 'words the memories to forget contain', autocomplete: 'off' })
  const preview = h('div', { id: 'forget-preview', 'aria-live': 'polite' })
  const destroyBox = h('div', { id: 'destroy-box', 'aria-live': 'polite' })
  const audit = h('ol', { id: 'audit' })
  const stem = `snowclaw-export-${npub(ctx.signer.pubkey).slice(0, 16)}`

  async function loadPrivate() {
    try {
      const res = await ctx.api('GET', '/api/v1/memories' + query({ tier: 'private', limit: 200 }))
      const items = await readable(ctx, ctx.agent, res.memories || [])
      fill(list, items.map((m) => memoryCard(m, {
        actions: h('button', { type: 'button', onclick: () => forgetIDs([m.id]) }, 'Forget this'),
      })))
      if (!items.length) fill(list, h('li', { class: 'hint' }, 'No private memories about you.'))
    } catch (err) { ctx.error(err) }
  }

  async function exportAs(format) {
    st.textContent = `Exporting (${format})…`
    try {
      const text = await ctx.api('GET', '/api/v1/export' + query({ format }), undefined, { text: true })
      if (format === 'json') {
        const x = JSON.parse(text)
        const cats = Object.entries(x.categories || {}).map(([k, c]) => `${k}: ${c.count}`)
        summary.textContent = `Export of ${x.user_id}: ${x.record_count} records${cats.length ? ' (' + cats.join(', ') + ')' : ''}, made ${x.exported_at}.`
        download(stem + '.json', text, 'application/json')
      } else {
        download(stem + '.md', text, 'text/markdown')
      }
      st.textContent = `Export downloaded as ${format === 'json' ? 'JSON' : 'markdown'}.`
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  async function forgetIDs(ids) {
    if (!window.confirm(`Forget ${count(ids.length, 'memory', 'memories')} for good? This cannot be undone.`)) return
    try {
      const res = await ctx.api('POST', '/api/v1/privacy/forget', { ids })
      st.textContent = res.message || `Forgot ${res.deleted}.`
      loadPrivate()
    } catch (err) { ctx.error(err) }
  }

  // forgetQuery asks for a preview first: the relay lists the matches and
  // a token; only the same query with that token removes exactly those.
  async function forgetQuery(ev) {
    ev.preventDefault()
    const text = forgetQ.value.trim()
    if (!text) return ctx.error(new Error('Type what the memories to forget are about.'))
    try {
      const res = await ctx.api('POST', '/api/v1/privacy/forget', { query: text })
      const matches = res.matches || []
      fill(preview,
        h('p', {}, res.message || `${count(matches.length, 'memory matches', 'memories match')}.`),
        h('ul', { class: 'matches' }, matches.map((m) => h('li', { dataset: { id: m.id } }, h('strong', {}, m.topic || ''), ' ', m.text))),
        res.token && matches.length ? h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            try {
              const done = await ctx.api('POST', '/api/v1/privacy/forget', { query: text, token: res.token })
              fill(preview, h('p', {}, done.message || `Forgot ${done.deleted}.`))
              loadPrivate()
            } catch (err) { ctx.error(err) }
          },
        }, `Forget these ${matches.length}`) : null)
    } catch (err) { ctx.error(err) }
  }

  async function destroy() {
    try {
      const res = await ctx.api('POST', '/api/v1/privacy/destroy', {})
      const ok = h('input', { type: 'checkbox', id: 'destroy-sure' })
      const go = h('button', {
        type: 'button', class: 'danger', disabled: true,
        onclick: async () => {
          try {
            const done = await ctx.api('POST', '/api/v1/privacy/destroy', { token: res.token })
            fill(destroyBox, h('p', {}, done.message))
            loadPrivate()
          } catch (err) { ctx.error(err) }
        },
      }, 'Destroy everything now')
      ok.addEventListener('change', () => { go.disabled = !ok.checked })
      fill(destroyBox, h('p', {}, res.message), h('div', { class: 'field check' }, ok, h('label', { for: ok.id }, 'I understand this is irreversible')), go)
    } catch (err) { ctx.error(err) }
  }

  async function freeze(on) {
    try {
      await ctx.api('POST', on ? '/api/v1/privacy/freeze' : '/api/v1/privacy/unfreeze', {})
      st.textContent = on ? 'Frozen: the agent stops learning about you until you unfreeze.' : 'Unfrozen: the agent learns from your messages again.'
    } catch (err) { ctx.error(err) }
  }

  async function loadAudit() {
    try {
      const recs = await ctx.api('GET', '/api/v1/privacy/audit')
      fill(audit, (Array.isArray(recs) ? recs : []).map((r) => h('li', {},
        `${r.time} ${r.op}${r.selector ? ' by ' + r.selector : ''}: ${r.count} via ${r.via || '?'}${r.note ? ' (' + r.note + ')' : ''}`)))
      if (!audit.children.length) fill(audit, h('li', {}, 'Nothing recorded yet.'))
    } catch (err) { ctx.error(err) }
  }

  fill(root,
    h('h2', {}, 'Your privacy'),
    st,
    h('h3', {}, 'Your private memories'),
    list,
    h('h3', {}, 'Export everything about you'),
    h('div', { class: 'row' },
      h('button', { type: 'button', onclick: () => exportAs('json') }, 'Download JSON'),
      h('button', { type: 'button', onclick: () => exportAs('markdown') }, 'Download markdown')),
    summary,
    h('h3', {}, 'Forget by query'),
    h('form', { class: 'row', onsubmit: forgetQuery }, field('Forget memories matching', forgetQ), h('button', { type: 'submit', class: 'primary' }, 'Preview')),
    preview,
    h('h3', {}, 'Restrict processing'),
    h('div', { class: 'row' },
      h('button', { type: 'button', onclick: () => freeze(true) }, 'Freeze'),
      h('button', { type: 'button', onclick: () => freeze(false) }, 'Unfreeze')),
    h('h3', {}, 'Audit trail'),
    h('button', { type: 'button', onclick: loadAudit }, 'Show audit trail'),
    audit,
    h('h3', {}, 'Destroy all your data'),
    h('button', { type: 'button', class: 'danger', onclick: destroy }, 'Destroy…'),
    destroyBox)
  return { show: () => loadPrivate() }
}
