// Conflict dashboard: memories on one topic from different sources that
// say different things, side by side with their provenance, and new
// versions of a memory learnt from someone else than the version they
// replaced (resolved by supersession: the current one first, the old ones
// marked superseded). The owner resolves one by picking the winner, or
// flags it for human review.

import { query } from './api.js'
import { memoryCard } from './explorer.js'
import { count, empty, field, fill, h, status, topic as topicEl } from './dom.js'
import { readable } from './memview.js'

export function mount(root, ctx) {
  const st = status()
  const topic = h('input', { name: 'topic', placeholder: 'topic prefix (optional)' })
  const list = h('div', { class: 'conflicts', id: 'conflict-list' })

  async function load(ev) {
    if (ev) ev.preventDefault()
    st.textContent = 'Loading conflicts…'
    try {
      const res = await ctx.api('GET', '/api/v1/conflicts' + query({ topic: topic.value.trim() }))
      const conflicts = res.conflicts || []
      await readable(ctx, ctx.agent, conflicts.flatMap((c) => c.memories || []))
      const under = topic.value.trim()
      fill(list, conflicts.length ? conflicts.map(render) : empty(under ? `No conflicts under “${under}”.` : 'No conflicts.',
        'A conflict is a topic on which two sources say different things, or a new version of a memory learnt from someone other than the person the old one came from. None of the memories you can read disagree.',
        ctx.isOwner
          ? 'When one appears it is listed here side by side: pick the memory that should win (the others are kept as history), or flag it for review.'
          : 'When one appears it is listed here side by side; the relay\'s owner decides which one wins.'))
      st.textContent = conflicts.length ? `${count(conflicts.length, 'topic', 'topics')} with conflicting memories.` : ''
    } catch (err) { st.textContent = ''; ctx.error(err) }
  }

  async function resolve(c, body, what) {
    try {
      await ctx.api('POST', '/api/v1/conflicts/resolve', { topic: c.topic, ...body })
      await load()
      st.textContent = `${c.topic}: ${what}.`
    } catch (err) { ctx.error(err) }
  }

  function render(c) {
    // in the order ranking prefers them: the first is what a search puts on top
    const memories = c.memories || []
    return h('article', { class: 'conflict', dataset: { topic: c.topic } },
      h('h3', {}, topicEl(c.topic), c.flagged ? h('span', { class: 'badge warn' }, 'flagged for review') : null,
        c.resolved_by_supersession ? h('span', { class: 'badge' }, 'resolved by a new version') : null),
      h('ul', { class: 'side-by-side' }, memories.map((m, i) => memoryCard(m, {
        actions: [i === 0 ? h('span', { class: 'badge' }, c.resolved_by_supersession ? 'current version' : 'ranked first') : null,
          m.superseded_by && m.superseded_by.length ? h('span', { class: 'badge' }, 'history') : null,
          ctx.isOwner ? h('button', { type: 'button', onclick: () => resolve(c, { winner: m.id }, `kept ${m.id.slice(0, 10)}, the others superseded`) }, 'Pick as winner') : null],
      }))),
      ctx.isOwner
        ? h('button', { type: 'button', onclick: () => resolve(c, { flag: !c.flagged }, c.flagged ? 'flag removed' : 'flagged for review') }, c.flagged ? 'Remove flag' : 'Flag for review')
        : null)
  }

  fill(root,
    h('h2', {}, 'Conflicts'),
    h('form', { class: 'row', onsubmit: load }, field('Topic', topic), h('button', { type: 'submit', class: 'primary' }, 'Show conflicts')),
    ctx.isOwner ? null : h('p', { class: 'hint' }, 'Only the relay owner can resolve conflicts; you see those among memories you can read.'),
    st, list)
  return { show: () => load() }
}
