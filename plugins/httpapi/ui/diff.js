// Word-level diff between two versions of a memory: the longest common
// subsequence of words, whitespace kept with the word before it so the
// rendered text reads naturally.

import { h } from './dom.js'

// Above this many words per side the quadratic table is not worth it: the
// versions are shown as replaced whole.
const MAX_WORDS = 3000

export function words(text) {
  return (text || '').match(/\S+\s*|\s+/g) || []
}

// diffWords returns [{op: 'same'|'del'|'ins', text}], adjacent runs merged.
export function diffWords(before, after) {
  const a = words(before)
  const b = words(after)
  if (a.length > MAX_WORDS || b.length > MAX_WORDS) {
    return merge([...a.map((t) => ({ op: 'del', text: t })), ...b.map((t) => ({ op: 'ins', text: t }))])
  }
  const key = (t) => t.trim()
  // lcs[i][j] = length of the LCS of a[i:] and b[j:]
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = key(a[i]) === key(b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
    }
  }
  const out = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (key(a[i]) === key(b[j])) { out.push({ op: 'same', text: b[j] }); i++; j++ }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: 'del', text: a[i++] })
    else out.push({ op: 'ins', text: b[j++] })
  }
  while (i < a.length) out.push({ op: 'del', text: a[i++] })
  while (j < b.length) out.push({ op: 'ins', text: b[j++] })
  return merge(out)
}

function merge(parts) {
  const out = []
  for (const p of parts) {
    const last = out[out.length - 1]
    if (last && last.op === p.op) last.text += p.text
    else out.push({ ...p })
  }
  return out
}

// renderDiff shows a diff with <del> and <ins>, which screen readers
// announce as deleted and inserted text.
export function renderDiff(before, after) {
  const parts = diffWords(before, after)
  return h('p', { class: 'diff' }, parts.map((p, i) => [
    p.op === 'same' ? p.text : h(p.op, { title: p.op === 'del' ? 'removed' : 'added' }, p.text),
    // a replaced last word has no space after it: keep the two apart
    p.op === 'del' && parts[i + 1]?.op === 'ins' && !/\s$/.test(p.text) ? ' ' : null,
  ]))
}
