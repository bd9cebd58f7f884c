// The owner's view of the web UI, the member's "My groups" and the empty
// states, in headless Chromium against real `snowclaw serve` relays: one
// seeded like a small team's relay (groups of every kind, people the
// agent knows, a second snowclaw relay as a healthy remote and a dead
// one), and one fresh with nothing in it.
//
//   cd test/browser && npm ci && node --test owner.test.js

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, rmSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createServer } from 'node:net'
import { join } from 'node:path'

import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { npubEncode, nsecEncode } from 'nostr-tools/nip19'

import {
  STEP_MS, api, buildBinary, connect, launch, memory, publish, screenshotDir, sign,
  startRelay, stopRelay, watch, withExtension, withTimeout,
} from './harness.js'

const keys = () => { const sk = generateSecretKey(); return { sk, pk: getPublicKey(sk), npub: npubEncode(getPublicKey(sk)) } }

// fakeOllama speaks Ollama's chat protocol (as agent/llm/llmtest does in
// Go): Ollama cannot run here, and the agent's status is only worth
// showing with a model behind it. Structured calls are answered by the
// schema they send: a weekly summary, no new memories, no decisions;
// a plain chat with a short reply. Token counts are words.
async function fakeOllama() {
  const calls = []
  const summary = 'Alice confirmed the Apollo release for Thursday once staging was green; Bob took the release notes.'
  const srv = createHttpServer((req, res) => {
    const json = (status, body) => { res.writeHead(status, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(body) + '\n') }
    if (req.method === 'GET' && req.url === '/') { res.writeHead(200); return res.end('Ollama is running') }
    if (req.method === 'GET' && req.url === '/api/version') return json(200, { version: '0.12.6' })
    if (req.method === 'GET' && req.url === '/api/tags') return json(200, { models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest', size: 2019393189 }] })
    if (req.method !== 'POST' || req.url !== '/api/chat') return json(404, { error: '404 page not found' })
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => {
      const body = JSON.parse(raw)
      const props = (body.format && body.format.properties) || {}
      const answer = props.summary ? JSON.stringify({ summary }) : props.memories ? '{"memories":[]}' : props.decisions ? '{"decisions":[]}' : 'Noted.'
      calls.push(Object.keys(props)[0] || 'chat')
      const words = (t) => String(t || '').split(/\s+/).filter(Boolean).length
      json(200, {
        model: body.model, created_at: new Date().toISOString(), message: { role: 'assistant', content: answer }, done: true, done_reason: 'stop',
        total_duration: 1e6, prompt_eval_count: (body.messages || []).reduce((n, m) => n + words(m.content), 0), eval_count: words(answer),
      })
    })
  })
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${srv.address().port}`, calls, summary, close: () => new Promise((resolve) => srv.close(resolve)) }
}

// closedPort is a loopback port nothing listens on: a remote that is down.
async function closedPort() {
  const srv = createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

// ui holds what every test of a relay needs to drive pages on it.
function ui(state) {
  async function open(who, options = {}) {
    const context = await withExtension(state.browser, who.sk, options)
    const page = await context.newPage()
    const problems = watch(page)
    if (options.route) await options.route(page)
    await page.goto(state.server.http + '/ui/')
    await page.getByRole('button', { name: 'Log in with a browser extension (NIP-07)' }).click()
    await page.locator('#me').waitFor()
    return { context, page, problems }
  }
  function noPageErrors(problems) {
    const bad = problems.filter((p) => p.startsWith('page error') || /Content Security Policy|Refused to/.test(p))
    assert.deepEqual(bad, [])
  }
  async function tab(page, name) {
    await page.getByRole('tab', { name, exact: true }).click()
  }
  return { open, noPageErrors, tab }
}

describe('the owner\'s view and the member\'s groups', { timeout: 600000 }, () => {
  const owner = keys()
  const alice = keys() // admin of the core team, in the hidden security group and the vault
  const bob = keys() // member of the core team and of design reviews
  const carol = keys() // member of design reviews
  const dave = keys() // in the security group and the vault
  const state = {}
  const { open, noPageErrors, tab } = ui(state)
  let built
  let remote
  let deadURL
  let ollama
  const relays = []

  before(async () => {
    mkdirSync(screenshotDir, { recursive: true })
    built = buildBinary()
    // the healthy remote is a second snowclaw relay with a public memory
    const remoteOwner = keys()
    remote = await startRelay(built.bin, remoteOwner.pk)
    const rWS = await connect(remote.ws, remoteOwner.sk)
    await publish(rWS, memory(remoteOwner.sk, 'ops/deploy-window', 'Deploys to production happen between 10:00 and 16:00 UTC on weekdays'))
    rWS.close()
    deadURL = `ws://127.0.0.1:${await closedPort()}`
    ollama = await fakeOllama()
    state.server = await startRelay(built.bin, owner.pk, {
      SNOWCLAW_MEMORY_REMOTE_RELAYS: `${remote.ws}=0.8,${deadURL}=0.5`,
      SNOWCLAW_AGENT_LLM: 'ollama', SNOWCLAW_AGENT_OLLAMA_HOST: ollama.url, SNOWCLAW_AGENT_OLLAMA_MODEL: 'llama3.2',
      SNOWCLAW_AGENT_LEARNING_DEBOUNCE: '1s',
      // the conversation below is dated weeks back, as the history of a
      // group moved from another relay is (NIP-29 late publication lifted)
      SNOWCLAW_GROUPS_ACCEPT_MOVED: 'true',
    })
    state.browser = await launch()
    const { server } = state

    const ws = {}
    for (const [name, who] of Object.entries({ owner, alice, bob, carol, dave })) {
      ws[name] = await connect(server.ws, who.sk)
      relays.push(ws[name])
    }
    const profiles = { owner: 'Sam Rivera', alice: 'Alice Liddell', bob: 'Bob Okafor', carol: 'Carol Chen', dave: 'Dave Mensah' }
    for (const [name, shown] of Object.entries(profiles)) {
      const who = { owner, alice, bob, carol, dave }[name]
      await publish(ws[name], sign(who.sk, 0, [], JSON.stringify({ name: shown.split(' ')[0].toLowerCase(), display_name: shown })), `${name} profile`)
    }

    // four groups of every kind: private and open, public, hidden and closed, encrypted
    const create = async (id, tags) => {
      await publish(ws.owner, sign(owner.sk, 9007, [['h', id], ...tags]), `create ${id}`)
    }
    await create('core', [['name', 'Core team'], ['about', 'Release planning for the Apollo service']])
    await create('design', [['name', 'Design reviews'], ['about', 'Mockups and UI reviews, open to everyone'], ['public']])
    await create('security', [['name', 'Security'], ['about', 'Incident response and key rotation'], ['hidden'], ['closed']])
    await create('vault', [['name', 'Vault'], ['about', 'Credentials and recovery codes']])
    await publish(ws.alice, sign(alice.sk, 9021, [['h', 'core']]), 'alice joins core')
    await publish(ws.bob, sign(bob.sk, 9021, [['h', 'core']]), 'bob joins core')
    await publish(ws.owner, sign(owner.sk, 9000, [['h', 'core'], ['p', alice.pk, 'admin']]), 'alice made admin')
    await publish(ws.bob, sign(bob.sk, 9021, [['h', 'design']]), 'bob joins design')
    await publish(ws.carol, sign(carol.sk, 9021, [['h', 'design']]), 'carol joins design')
    for (const [g, who] of [['security', alice], ['security', dave], ['vault', alice], ['vault', dave]]) {
      await publish(ws.owner, sign(owner.sk, 9000, [['h', g], ['p', who.pk]]), `${g}: add member`)
    }
    await publish(ws.owner, sign(owner.sk, 9002, [['h', 'vault'], ['encrypted']]), 'vault encrypted')

    // conversation the agent hears: two weeks ago (old enough for a
    // weekly summary) and this last hour; and memories for the index
    const t0 = Math.floor(Date.now() / 1000) - 3600
    const weeksAgo = Math.floor(Date.now() / 1000) - 15 * 86400
    const said = [
      [alice, 'core', 'Staging for the Apollo release goes up on Monday', weeksAgo - t0],
      [bob, 'core', 'I can take the release notes this time', weeksAgo - t0 + 600],
      [alice, 'core', 'Staging is green; we ship the Apollo release on Thursday', 0],
      [bob, 'core', 'I will write the release notes tonight', 300],
      [carol, 'design', 'The new dashboard mockups are in the shared folder', 900],
      [bob, 'design', 'Looks good, the contrast on the charts needs work', 1200],
      [dave, 'security', 'Rotated the deploy keys after the contractor left', 2400],
    ]
    for (const [who, g, text, dt] of said) {
      const name = Object.entries({ alice, bob, carol, dave }).find(([, k]) => k === who)[0]
      await publish(ws[name], sign(who.sk, 9, [['h', g]], text, t0 + dt), `${name} in ${g}`)
    }
    await publish(ws.alice, memory(alice.sk, 'project/apollo/release', 'The Apollo release ships on Thursday after the staging checks', { tier: 'group', tags: [['h', 'core']] }))
    await publish(ws.carol, memory(carol.sk, 'design/dashboard', 'Dashboard charts use the colour-blind safe palette'))
    // the weekly summary of the old part, written by the model on the owner's compaction
    const compact = await api(server.http, owner.sk, 'POST', '/api/v1/agent/compact', {})
    assert.equal(compact.status, 200, JSON.stringify(compact.body))
    assert.ok(compact.body.summaries >= 1, `no summary written: ${JSON.stringify(compact.body)}`)
    const note = await api(server.http, owner.sk, 'POST', `/api/v1/agent/memory/${alice.npub}`, { note: 'Leads the Apollo release; prefers short answers', prefs: { timezone: 'Europe/London' } })
    assert.equal(note.status, 200, JSON.stringify(note.body))

    // one search that asks the remotes: the live one answers, the dead one fails
    const found = await api(server.http, owner.sk, 'GET', '/api/v1/search?q=deploy%20window&remote=1&explain=1')
    assert.equal(found.status, 200, JSON.stringify(found.body))
    assert.ok(found.body.results.some((r) => r.explain && r.explain.origin === remote.ws), `the remote answered: ${JSON.stringify(found.body.results.map((r) => r.explain))}`)
  })

  after(async () => {
    for (const r of relays) r.close()
    if (state.browser) await state.browser.close()
    await stopRelay(state.server)
    await stopRelay(remote)
    if (ollama) await ollama.close()
    if (built && built.dir) rmSync(built.dir, { recursive: true, force: true })
  })

  const group = (page, root, id) => page.locator(`${root} article.group[data-group="${id}"]`)

  it('shows the owner every group, the agent, the relay\'s health, the remotes and the people the agent knows', async () => {
    const { context, page, problems } = await open(owner, { viewport: { width: 1280, height: 900 } })
    try {
      assert.equal(await page.getByRole('tab', { name: 'My groups' }).count(), 0, 'the owner gets the owner view, not "My groups"')
      await tab(page, 'Owner')

      // every group, the hidden one too, with flags, roles and the key version
      for (const id of ['core', 'design', 'security', 'vault']) await group(page, '#all-groups', id).waitFor({ timeout: STEP_MS })
      const flags = async (id) => (await group(page, '#all-groups', id).locator('[data-flag]').evaluateAll((els) => els.map((e) => e.dataset.flag))).sort()
      assert.deepEqual(await flags('core'), ['private'])
      assert.deepEqual(await flags('design'), [])
      assert.deepEqual(await flags('security'), ['closed', 'hidden', 'private'])
      assert.deepEqual(await flags('vault'), ['encrypted', 'private'])
      const core = group(page, '#all-groups', 'core')
      assert.match(await core.locator('.group-name').textContent(), /^Core team$/)
      assert.equal((await core.locator(`tr[data-pubkey="${alice.pk}"] td.roles`).textContent()).trim(), 'admin')
      assert.equal((await core.locator(`tr[data-pubkey="${bob.pk}"] td.roles`).textContent()).trim(), 'member')
      const vault = group(page, '#all-groups', 'vault')
      await vault.locator('.prov', { hasText: /key version 1/ }).waitFor({ timeout: STEP_MS })
      const members = await group(page, '#all-groups', 'security').locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.pubkey))
      assert.ok(members.includes(alice.pk) && members.includes(dave.pk) && !members.includes(bob.pk), `security members ${members}`)

      // the relay's health and the agent
      const fact = (k) => page.locator(`#owner-health dd[data-fact="${k}"], #owner-agent dd[data-fact="${k}"]`)
      await fact('disk').waitFor({ timeout: STEP_MS })
      assert.match(await fact('disk').textContent(), /free/)
      assert.match(await fact('index').textContent(), /^ready · \d+ documents/)
      assert.match(await fact('feed').textContent(), /not shared/)
      assert.match(await fact('queue').textContent(), /of \d+ waiting/)
      assert.equal(await fact('model').textContent(), 'ollama/llama3.2')
      assert.match(await fact('calls').textContent(), /^[1-9]\d* \(at most 60 an hour\)/)
      assert.match(await fact('cost').textContent(), /^[1-9][\d,]* prompt/)
      const last = page.locator('#last-summary')
      assert.match(await last.locator('.mtext').textContent(), new RegExp(`^Week \\d{4}-W\\d{2}: ${ollama.summary}`))
      assert.match(await last.locator('.topic').getAttribute('title'), /^group\/core\/summary\/\d{4}-W\d{2}/)

      // the remotes: one answered, one failing
      const live = page.locator(`#remotes tr[data-url="${remote.ws}"]`)
      await live.waitFor({ timeout: STEP_MS })
      assert.equal(await live.getAttribute('data-state'), 'ok')
      const dead = page.locator(`#remotes tr[data-url="${deadURL}"]`)
      assert.equal(await dead.getAttribute('data-state'), 'failing')
      assert.match(await dead.textContent(), /refused|connect/i)

      // the people the agent heard, with alice's record opened
      const row = page.locator(`#people tr[data-npub="${alice.npub}"]`)
      await row.waitFor({ timeout: STEP_MS })
      for (const who of [bob, carol, dave]) await page.locator(`#people tr[data-npub="${who.npub}"]`).waitFor({ timeout: STEP_MS })
      await row.getByRole('button', { name: 'Show record' }).click()
      const record = page.locator(`#people .record-body[data-npub="${alice.npub}"]`)
      await record.waitFor({ timeout: STEP_MS })
      assert.match(await record.textContent(), /Leads the Apollo release; prefers short answers/)
      assert.match(await record.textContent(), /timezone: Europe\/London/)
      await page.locator('#owner-people .person', { hasText: 'Alice Liddell' }).first().waitFor({ timeout: STEP_MS })
      assert.equal(await page.locator('#view-owner .refused').count(), 0, await page.locator('#view-owner .refused').allTextContents().then(String))
      await page.screenshot({ path: join(screenshotDir, 'owner.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows a member only the groups she is in', async () => {
    const { context, page, problems } = await open(bob)
    try {
      assert.equal(await page.getByRole('tab', { name: 'Owner' }).count(), 0, 'a member gets no owner view')
      await tab(page, 'My groups')
      await group(page, '#my-groups', 'core').waitFor({ timeout: STEP_MS })
      await group(page, '#my-groups', 'design').waitFor({ timeout: STEP_MS })
      const shown = await page.locator('#my-groups article.group').evaluateAll((els) => els.map((e) => e.dataset.group).sort())
      assert.deepEqual(shown, ['core', 'design'], 'bob sees his two groups and no other')
      assert.doesNotMatch(await page.locator('#view-groups').textContent(), /Security|Vault|Incident response/)
      const core = group(page, '#my-groups', 'core')
      assert.equal((await core.locator(`tr[data-pubkey="${alice.pk}"] td.roles`).textContent()).trim(), 'admin')
      assert.match(await core.locator(`tr[data-pubkey="${bob.pk}"]`).textContent(), /you/)
      await page.locator('#my-groups .person', { hasText: 'Alice Liddell' }).first().waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'groups-member.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }

    // alice, in the hidden group, sees it among hers; as its admin, the core team's key deliveries are hers to see
    const asAlice = await open(alice)
    try {
      await tab(asAlice.page, 'My groups')
      await group(asAlice.page, '#my-groups', 'security').waitFor({ timeout: STEP_MS })
      const shown = await asAlice.page.locator('#my-groups article.group').evaluateAll((els) => els.map((e) => e.dataset.group).sort())
      assert.deepEqual(shown, ['core', 'security', 'vault'])
      noPageErrors(asAlice.problems)
    } finally { await asAlice.context.close() }
  })

  it('refuses the owner\'s data to a member who flips the page into owner mode', async () => {
    const { server } = state
    // over HTTP first: every route the owner view reads refuses bob and the unsigned
    const routes = ['/api/v1/status', '/api/v1/agent/memory', `/api/v1/agent/memory/${alice.npub}`, '/api/v1/agent/items', '/api/v1/agent/stats', '/api/v1/agent/learning']
    for (const path of routes) {
      const asBob = await api(server.http, bob.sk, 'GET', path)
      assert.equal(asBob.status, 403, `${path} as bob: ${JSON.stringify(asBob.body)}`)
      assert.match(asBob.body.error, /^restricted:/)
      const unsigned = await fetch(server.http + path)
      assert.equal(unsigned.status, 401, `${path} unsigned`)
    }
    const owned = await api(server.http, owner.sk, 'GET', '/api/v1/status')
    assert.equal(owned.status, 200, 'the same route answers the owner')

    // then the page: its copy of /api/v1/health names bob the owner
    const claimBob = async (page) => page.route('**/api/v1/health', async (route) => {
      const res = await route.fetch()
      const body = await res.json()
      await route.fulfill({ response: res, json: { ...body, owner: bob.pk } })
    })
    const { context, page, problems } = await open(bob, { route: claimBob })
    try {
      await page.locator('#who .badge', { hasText: 'owner' }).waitFor({ timeout: STEP_MS })
      await tab(page, 'Owner')
      for (const id of ['owner-health', 'owner-agent', 'owner-remotes', 'owner-people']) {
        await page.locator(`#${id} .refused`, { hasText: /^restricted: only the relay's owner/ }).waitFor({ timeout: STEP_MS })
      }
      const view = await page.locator('#view-owner').textContent()
      assert.doesNotMatch(view, /Leads the Apollo release|Europe\/London|free ·|GiB|MiB/, 'owner data reached the page')
      assert.doesNotMatch(view, new RegExp(remote.ws.replace(/[.:/]/g, '\\$&')), 'the remotes reached the page')
      assert.equal(await page.locator('#people').count(), 0)
      // the groups are what the read rule serves bob: never the hidden one
      await group(page, '#all-groups', 'core').waitFor({ timeout: STEP_MS })
      assert.equal(await group(page, '#all-groups', 'security').count(), 0, 'the hidden group reached a non-member')
      assert.doesNotMatch(view, /Incident response/)
      noPageErrors(problems)
    } finally { await context.close() }
  })
})

describe('empty states on a fresh relay', { timeout: 600000 }, () => {
  const owner = keys()
  const state = {}
  const { open, noPageErrors, tab } = ui(state)
  let built

  before(async () => {
    mkdirSync(screenshotDir, { recursive: true })
    built = buildBinary()
    state.server = await startRelay(built.bin, owner.pk)
    state.browser = await launch()
  })

  after(async () => {
    if (state.browser) await state.browser.close()
    await stopRelay(state.server)
    if (built && built.dir) rmSync(built.dir, { recursive: true, force: true })
  })

  it('tells the owner of a fresh relay how to store the first memory', async () => {
    const { context, page, problems } = await open(owner)
    try {
      const none = page.locator('#memory-empty .empty')
      await none.waitFor({ timeout: STEP_MS })
      assert.match(await none.textContent(), /^No memories yet\./)
      assert.match(await none.textContent(), /memory_store/)
      assert.match(await none.textContent(), /POST \/api\/v1\/memories/)
      assert.equal(await page.locator('#memory-list li').count(), 0)
      await page.screenshot({ path: join(screenshotDir, 'empty-memories.png') })

      // a search with no hit says so, and offers the way back
      await page.getByLabel('Search (full text and meaning)').fill('kubernetes ingress')
      await page.getByRole('button', { name: 'Search', exact: true }).click()
      await page.locator('#memory-empty .empty', { hasText: 'Nothing matches “kubernetes ingress”.' }).waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'empty-search.png') })
      await page.getByRole('button', { name: 'List every memory instead' }).click()
      await page.locator('#memory-empty .empty', { hasText: 'No memories yet.' }).waitFor({ timeout: STEP_MS })
      assert.equal(await page.getByLabel('Search (full text and meaning)').inputValue(), '')

      await tab(page, 'Conflicts')
      const noConflicts = page.locator('#conflict-list .empty')
      await noConflicts.waitFor({ timeout: STEP_MS })
      assert.match(await noConflicts.textContent(), /^No conflicts\./)
      assert.match(await noConflicts.textContent(), /pick the memory that should win/)
      await page.screenshot({ path: join(screenshotDir, 'empty-conflicts.png') })

      await tab(page, 'Debug')
      const intro = page.locator('#explain-empty .empty')
      await intro.waitFor({ timeout: STEP_MS })
      assert.match(await intro.textContent(), /^Explain a search\./)
      assert.ok(await page.locator('#explain').isHidden())
      await page.screenshot({ path: join(screenshotDir, 'empty-debug.png') })
      const form = page.getByRole('form', { name: 'Explain a search' })
      await form.getByLabel('Query').fill('kubernetes ingress')
      await form.getByRole('button', { name: 'Explain' }).click()
      await page.locator('#explain-empty .empty', { hasText: 'No result for “kubernetes ingress”.' }).waitFor({ timeout: STEP_MS })

      await tab(page, 'Owner')
      await page.locator('#owner-groups .empty', { hasText: 'No groups yet.' }).waitFor({ timeout: STEP_MS })
      await page.locator('#owner-people .empty', { hasText: 'The agent knows nobody yet.' }).waitFor({ timeout: STEP_MS })
      await page.locator('#owner-remotes .empty', { hasText: 'No remote relays.' }).waitFor({ timeout: STEP_MS })
      await page.locator('#owner-agent .empty', { hasText: 'No weekly summary yet.' }).waitFor({ timeout: STEP_MS })
      await page.locator('#owner-health dd[data-fact="index"]').waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'owner-fresh.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('tells a member in no group how to join one, and names a pasted nsec as the secret key it is', async () => {
    const member = keys()
    const context = await state.browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const problems = watch(page)
    try {
      await page.goto(state.server.http + '/ui/')
      await page.getByLabel('Or a secret key (nsec or hex)').fill(nsecEncode(member.sk))
      await page.getByRole('button', { name: 'Log in with this key' }).click()
      await page.locator('#me').waitFor()
      const who = await page.locator('#who').textContent()
      assert.match(who, /with nsec \(your secret key\)/)
      assert.doesNotMatch(who, /session key/)
      await tab(page, 'My groups')
      const none = page.locator('#my-groups .empty')
      await none.waitFor({ timeout: STEP_MS })
      assert.match(await none.textContent(), /^You are in no group on this relay\./)
      assert.match(await none.textContent(), /invite code/)
      await page.screenshot({ path: join(screenshotDir, 'empty-groups.png') })
      noPageErrors(problems)
    } finally { await context.close() }

    // a new session key is called one
    const c2 = await state.browser.newContext()
    const p2 = await c2.newPage()
    try {
      await p2.goto(state.server.http + '/ui/')
      await p2.getByRole('button', { name: 'Use a new session key' }).click()
      await p2.locator('#me').waitFor()
      assert.match(await p2.locator('#who').textContent(), /with a new session key \(memory only\)/)
    } finally { await c2.close() }
  })
})
