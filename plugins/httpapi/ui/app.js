// The Snowclaw memory UI: login, tabs, and the context every view gets
// (signer, websocket, signed API calls, owner, error display). The key is
// held in this page's memory only; logging out reloads the page, which
// drops it.

import { RelayConn, call } from './api.js'
import { extensionSigner, sessionSigner } from './auth.js'
import { fill, h, toHex } from './dom.js'
import { person, useConnection } from './names.js'
import * as agents from './agents.js'
import * as conflicts from './conflicts.js'
import * as debug from './debug.js'
import * as explorer from './explorer.js'
import * as groups from './groups.js'
import * as keys from './keys.js'
import * as owner from './owner.js'
import * as privacy from './privacy.js'

// [id, tab title, module, who gets it]: the owner's view for the owner,
// "My groups" for everyone else (the owner's view lists every group)
const ALL_VIEWS = [
  ['explorer', 'Memories', explorer],
  ['groups', 'My groups', groups, (ctx) => !ctx.isOwner],
  ['agents', 'Agents', agents],
  ['conflicts', 'Conflicts', conflicts],
  ['keys', 'Group keys', keys],
  ['debug', 'Debug', debug],
  ['privacy', 'My privacy', privacy],
  ['owner', 'Owner', owner, (ctx) => ctx.isOwner],
]

// what the header says the page signs with, by signer kind (auth.js)
const SIGNED_WITH = {
  extension: 'your browser extension',
  session: 'a new session key (memory only)',
  nsec: 'nsec (your secret key), held in this page\'s memory only',
  hex: 'hex secret key (your secret key), held in this page\'s memory only',
}

const $ = (id) => document.getElementById(id)
const errorBox = $('error')

function showError(err) {
  const msg = (err && err.message) || String(err)
  fill(errorBox, h('span', {}, msg), ' ', h('button', { type: 'button', class: 'link', onclick: clearError }, 'dismiss'))
  errorBox.hidden = false
}

function clearError() {
  errorBox.hidden = true
  errorBox.replaceChildren()
}

window.addEventListener('unhandledrejection', (e) => showError(e.reason))
// a new action clears the last one's error (capture: before its handlers)
document.addEventListener('submit', clearError, true)
document.addEventListener('click', (e) => { if (e.target.closest('button')) clearError() }, true)

// relayFacts reads who owns the relay and which key is its agent: the
// health endpoint when present, else the NIP-11 document (owner only).
async function relayFacts() {
  const get = (path, headers) => fetch(path, { headers, cache: 'no-store' }).then((r) => (r.ok ? r.json() : {})).catch(() => ({}))
  const [health, info] = await Promise.all([get('/api/v1/health'), get('/', { Accept: 'application/nostr+json' })])
  return { owner: toHex(health.owner) || toHex(info.pubkey), agent: toHex(health.agent), relay: toHex(health.relay) || toHex(info.self), name: info.name || 'snowclaw' }
}

let loggingIn = false

async function login(makeSigner) {
  if (loggingIn) return // one identity per page: a second click waits for the first
  loggingIn = true
  clearError()
  let signer
  try {
    signer = await makeSigner()
  } catch (err) {
    loggingIn = false
    return showError(err)
  }
  const facts = await relayFacts()
  const conn = new RelayConn(signer)
  useConnection(conn)
  try {
    await conn.ready()
    if (conn.authError) showError(new Error(`Websocket: ${conn.authError}. Over it, only public data can be shown.`))
  } catch (err) {
    showError(new Error(`Websocket: ${err.message}. Searching and listing still work over HTTP.`))
  }
  const ctx = {
    signer, conn, owner: facts.owner, agent: facts.agent, relay: facts.relay,
    isOwner: !!facts.owner && facts.owner === signer.pubkey,
    api: (method, path, payload, opts) => call(signer, method, path, payload, opts),
    error: showError,
  }
  start(ctx, facts)
}

function start(ctx, facts) {
  $('login').hidden = true
  fill($('who'),
    h('span', { id: 'me', dataset: { pubkey: ctx.signer.pubkey } }, 'Logged in as ', person(ctx.signer.pubkey)),
    ` with ${SIGNED_WITH[ctx.signer.kind] || 'a key'}`,
    ctx.isOwner ? h('span', { class: 'badge' }, 'owner') : null,
    ` · relay ${facts.name}`)
  $('logout').hidden = false
  const tabs = $('tabs')
  const panels = {}
  const VIEWS = ALL_VIEWS.filter(([, , , who]) => !who || who(ctx))
  for (const [id, title, view] of VIEWS) {
    const panel = h('section', { id: `view-${id}`, role: 'tabpanel', 'aria-labelledby': `tab-${id}`, hidden: true })
    $('views').append(panel)
    panels[id] = { panel, view: view.mount(panel, ctx) }
    tabs.append(h('button', { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `view-${id}`, 'aria-selected': 'false', onclick: () => select(id) }, title))
  }
  tabs.hidden = false
  tabs.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return
    const ids = VIEWS.map((v) => v[0])
    const at = ids.indexOf(current)
    select(ids[(at + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length])
    $(`tab-${current}`).focus()
  })
  let current = ''
  function select(id) {
    if (!panels[id]) id = 'explorer'
    current = id
    clearError()
    for (const [pid, p] of Object.entries(panels)) {
      p.panel.hidden = pid !== id
      const tab = $(`tab-${pid}`)
      tab.setAttribute('aria-selected', String(pid === id))
      tab.tabIndex = pid === id ? 0 : -1
    }
    if (location.hash !== '#' + id) history.replaceState(null, '', '#' + id)
    panels[id].view.show()
  }
  select(location.hash.slice(1))
}

$('login-ext').addEventListener('click', () => login(extensionSigner))
$('login-session').addEventListener('click', () => login(() => sessionSigner()))
$('login-key').addEventListener('submit', (e) => {
  e.preventDefault()
  const input = $('nsec')
  const secret = input.value
  input.value = '' // the key lives on only inside the signer's closure
  login(() => sessionSigner(secret))
})
$('logout').addEventListener('click', () => location.replace(location.pathname))
