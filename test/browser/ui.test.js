// The web UI (/ui/) in headless Chromium against a real `snowclaw serve`:
// login through an injected NIP-07 provider and with a session key, search,
// version history with its diff, the owner's trust order changing the
// ranking the debug view explains, conflicts, the export download, and a
// second identity that must not see another's group or private memories.
// The data is what a small team's relay holds, since the screenshots show
// it; hostile data (markup in names and topics) is xss.test.js's, which
// takes no screenshots.
//
//   cd test/browser && npm ci && node --test
//
// SNOWCLAW_BIN=/path/to/snowclaw skips the build; CHROMIUM overrides
// /usr/bin/chromium.

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { decode as nip19decode, npubEncode, nsecEncode } from 'nostr-tools/nip19'
import * as nip44 from 'nostr-tools/nip44'

import {
  STEP_MS, api, buildBinary, connect, launch, memory, publish, screenshotDir, sign,
  startRelay, stopRelay, watch, withExtension, withTimeout,
} from './harness.js'

const keys = () => { const sk = generateSecretKey(); return { sk, pk: getPublicKey(sk), npub: npubEncode(getPublicKey(sk)) } }

describe('snowclaw web UI in Chromium', { timeout: 600000 }, () => {
  const owner = keys()
  const alice = keys() // group member with private memories
  const agentA = keys() // "studio" agent
  const agentB = keys() // "laptop" agent
  const group = 'core'
  const thursday = 'thursday' // a word only the group memory has
  const kigali = 'kigali' // a word only alice's private memory has
  const mentors = 'mentors' // a word only the agent's record of alice has
  const model = 'anthropic/claude-sonnet-4'

  let built
  let server
  let browser
  const relays = []
  const seeded = {}

  before(async () => {
    mkdirSync(screenshotDir, { recursive: true })
    built = buildBinary()
    server = await startRelay(built.bin, owner.pk)
    browser = await launch()

    const ownerWS = await connect(server.ws, owner.sk)
    const aliceWS = await connect(server.ws, alice.sk)
    const aWS = await connect(server.ws, agentA.sk)
    const bWS = await connect(server.ws, agentB.sk)
    relays.push(ownerWS, aliceWS, aWS, bWS)

    // owner config the trust save must keep, and a private open group
    await publish(ownerWS, sign(owner.sk, 30078, [['d', 'snowclaw:config:global']], JSON.stringify({ respond_mode: 'mention', context_history: 30 }), Math.floor(Date.now() / 1000) - 5))
    await publish(ownerWS, sign(owner.sk, 9007, [['h', group], ['name', 'Core team']]), 'create group')
    await publish(aliceWS, sign(alice.sk, 9021, [['h', group]]), 'alice joins')

    // two agent profiles and their memories
    for (const [who, ws, name] of [[agentA, aWS, 'snow-studio'], [agentB, bWS, 'snow-laptop']]) {
      const profile = { name, about: `Snowclaw instance on ${name}`, 'snow:model': model, 'snow:version': '0.1.0', 'snow:capabilities': ['memory', 'code'], 'snow:operator': owner.npub }
      await publish(ws, sign(who.sk, 0, [], JSON.stringify(profile)), `${name} profile`)
    }
    seeded.deployA = await publishMemory(aWS, memory(agentA.sk, 'deploy/alpha-studio', 'Deploy the alpha cluster with a blue green rollout and canary checks', { model }))
    seeded.deployB = await publishMemory(bWS, memory(agentB.sk, 'deploy/alpha-laptop', 'Deploy the alpha cluster with a blue green rollout and canary probes', { model }))
    seeded.dbA = await publishMemory(aWS, memory(agentA.sk, 'db/engine', 'The primary database engine is postgres', { model }))
    seeded.dbB = await publishMemory(bWS, memory(agentB.sk, 'db/engine', 'The primary database engine is mysql', { model }))

    // a two-version supersedes chain by alice
    const t0 = Math.floor(Date.now() / 1000) - 60
    seeded.v1 = await publishMemory(aliceWS, memory(alice.sk, 'project/apollo/storage', 'Apollo keeps its data in postgres 15 on one node', { tags: [['snow:version', '1'], ['t', 'apollo']], createdAt: t0 }))
    seeded.v2 = await publishMemory(aliceWS, memory(alice.sk, 'project/apollo/storage-v2', 'Apollo keeps its data in postgres 16 on two nodes with nightly backups',
      { tags: [['snow:version', '2'], ['snow:supersedes', seeded.v1.id], ['t', 'apollo']], createdAt: t0 + 30 }))

    // a group memory and a private memory of alice's
    seeded.groupMem = await publishMemory(aliceWS, memory(alice.sk, `group/${group}/ship-day`, 'The core team ships on Thursday after the release review', { tier: 'group', tags: [['h', group]] }))
    const stored = await api(server.http, alice.sk, 'POST', '/api/v1/memories', { text: 'Alice takes her coffee as a dark roast from Kigali', topic: 'preferences/coffee', tier: 'private' })
    assert.equal(stored.status, 201, `private memory via the API: ${JSON.stringify(stored.body)}`)
    seeded.privateMem = stored.body.memory
    assert.equal(seeded.privateMem.tier, 'private')

    // names from kind 0, and a topic made long by the npub in it
    await publish(aliceWS, sign(alice.sk, 0, [], JSON.stringify({ name: 'alice', display_name: 'Alice Liddell' })), 'alice profile')
    await publish(ownerWS, sign(owner.sk, 0, [], JSON.stringify({ name: 'sam', display_name: 'Sam Rivera' })), 'owner profile')
    seeded.hours = await publishMemory(aliceWS, memory(alice.sk, `people/${alice.npub}/working-hours`, 'Alice works from London and is online from 08:00 to 16:00 UTC'))

    // the agent's record of alice, sealed to her: a search hit that is not
    // a memory item, which the list once called unreadable while the debug
    // view opened it
    const raw = readFileSync(join(server.dataDir, 'agent.key'), 'utf8').trim()
    const agentSk = raw.startsWith('nsec1') ? nip19decode(raw).data : Uint8Array.from(Buffer.from(raw, 'hex'))
    const agentWS = await connect(server.ws, agentSk)
    relays.push(agentWS)
    const sealed = nip44.encrypt(JSON.stringify({ summary: 'Alice mentors the platform team' }), nip44.getConversationKey(agentSk, alice.pk))
    seeded.record = sign(agentSk, 30078, [['d', `snowclaw:memory:npub:${alice.npub}`], ['p', alice.pk], ['encrypted', 'nip44']], sealed)
    await publish(agentWS, seeded.record, 'agent record of alice')
  })

  after(async () => {
    for (const r of relays) r.close()
    if (browser) await browser.close()
    await stopRelay(server)
    if (built && built.dir) rmSync(built.dir, { recursive: true, force: true })
  })

  async function publishMemory(ws, evt) {
    await publish(ws, evt, `memory ${evt.tags[0][1]}`)
    return evt
  }

  // open logs a page in as sk through the injected extension.
  async function open(sk, options) {
    const context = await withExtension(browser, sk, options)
    const page = await context.newPage()
    const problems = watch(page)
    await page.goto(server.http + '/')
    assert.match(page.url(), /\/ui\/$/, 'a browser asking for / is sent to the UI')
    await page.getByRole('button', { name: 'Log in with a browser extension (NIP-07)' }).click()
    await page.locator('#me').waitFor()
    return { context, page, problems }
  }

  // noPageErrors fails on script errors and CSP violations.
  function noPageErrors(problems) {
    const bad = problems.filter((p) => p.startsWith('page error') || /Content Security Policy|Refused to/.test(p))
    assert.deepEqual(bad, [])
  }

  async function errorText(page) {
    return (await page.locator('#error').isVisible()) ? page.locator('#error').textContent() : ''
  }

  // settle waits for what an action should show, failing at once with
  // the page's own error message when it shows one instead.
  async function settle(page, locator, what) {
    const err = page.locator('#error')
    await Promise.race([
      locator.waitFor({ timeout: STEP_MS }).catch(async (e) => {
        const said = await page.locator('[role=tabpanel]:not([hidden]) .status').allTextContents()
        throw new Error(`${what}: ${e.message.split('\n')[0]}; the view says ${JSON.stringify(said)}`)
      }),
      err.waitFor({ state: 'visible', timeout: STEP_MS + 1000 }).then(async () => {
        throw new Error(`${what}: the page says ${await err.textContent()}`)
      }, () => {}),
    ])
  }

  async function tab(page, name) {
    await page.getByRole('tab', { name }).click()
  }

  async function explain(page, text, via = 'HTTP API') {
    await tab(page, 'Debug')
    const form = page.getByRole('form', { name: 'Explain a search' })
    await form.getByLabel('Query').fill(text)
    await form.getByLabel('Through').selectOption({ label: via })
    await form.getByRole('button', { name: 'Explain' }).click()
    await settle(page, page.locator('#view-debug .status', { hasText: ` for “${text}” as ` }), `explaining ${text}`)
    return page.locator('#explain tbody tr').evaluateAll((rows) => rows.map((r) => ({
      id: r.dataset.id,
      text: r.querySelector('.mtext').textContent,
      cols: Object.fromEntries([...r.querySelectorAll('td[data-col]')].map((td) => [td.dataset.col, td.textContent])),
    })))
  }

  it('logs in with the NIP-07 provider and searches what alice may read', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      assert.equal(await page.locator('#me').getAttribute('data-pubkey'), alice.pk)
      // the listing shows her group memory and the current apollo version
      await page.locator(`#memory-list li[data-id="${seeded.groupMem.id}"]`).waitFor({ timeout: STEP_MS })
      await page.locator(`#memory-list li[data-id="${seeded.v2.id}"]`).waitFor()
      assert.equal(await page.locator(`#memory-list li[data-id="${seeded.v1.id}"]`).count(), 0, 'the superseded version is not listed by default')

      await page.getByLabel('Search (full text and meaning)').fill('alpha cluster rollout')
      await page.getByRole('button', { name: 'Search', exact: true }).click()
      await page.locator(`#memory-list li[data-id="${seeded.deployA.id}"]`).waitFor({ timeout: STEP_MS })
      const ids = await page.locator('#memory-list li.memory').evaluateAll((els) => els.map((e) => e.dataset.id))
      assert.ok(ids.includes(seeded.deployB.id), `both deploy memories found: ${ids}`)
      const card = page.locator(`#memory-list li[data-id="${seeded.deployA.id}"]`)
      assert.match(await card.textContent(), /blue green rollout and canary checks/)
      assert.match(await card.locator('.model').textContent(), new RegExp(model))
      assert.equal(await errorText(page), '')
      await page.screenshot({ path: join(screenshotDir, 'explorer-search.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows a memory\'s version history with a word diff', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      const card = page.locator(`#memory-list li[data-id="${seeded.v2.id}"]`)
      await card.waitFor({ timeout: STEP_MS })
      await card.getByRole('button', { name: 'History' }).click()
      const versions = page.locator('#memory-detail li.version')
      await versions.nth(1).waitFor({ timeout: STEP_MS })
      assert.deepEqual(await versions.evaluateAll((els) => els.map((e) => e.dataset.id)), [seeded.v2.id, seeded.v1.id])
      const diff = versions.first().locator('.diff')
      const removed = (await diff.locator('del').allTextContents()).join('|')
      const added = (await diff.locator('ins').allTextContents()).join('|')
      assert.match(removed, /15/)
      assert.match(removed, /one node/)
      assert.match(added, /16/)
      assert.match(added, /nightly backups/)
      assert.doesNotMatch(removed + added, /Apollo keeps its data/, 'unchanged words are not marked')
      assert.match(await versions.nth(1).textContent(), /postgres 15 on one node/)
      await page.screenshot({ path: join(screenshotDir, 'explorer-history.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('lets the owner reorder trust, which reorders the explained ranking', async () => {
    const { context, page, problems } = await open(owner.sk)
    try {
      await tab(page, 'Agents')
      const rowA = page.locator(`#agents tr[data-pubkey="${agentA.pk}"]`)
      const rowB = page.locator(`#agents tr[data-pubkey="${agentB.pk}"]`)
      await rowA.waitFor({ timeout: STEP_MS })
      assert.match(await rowA.textContent(), /snow-studio/)
      assert.match(await rowA.textContent(), new RegExp(model))
      assert.match(await rowB.textContent(), /memory, code/)

      const prefOrder = () => page.locator('#preference li').evaluateAll((els) => els.map((e) => e.dataset.entry))
      const saved = async () => {
        await page.getByRole('button', { name: 'Save trust order' }).click()
        await settle(page, page.locator('#view-agents .status', { hasText: 'Saved' }), 'saving the trust order')
      }
      await rowA.getByRole('button', { name: 'Add to trust list' }).click()
      await rowB.getByRole('button', { name: 'Add to trust list' }).click()
      assert.deepEqual(await prefOrder(), [agentA.npub, agentB.npub])
      await saved()

      let rows = await explain(page, 'alpha cluster rollout')
      const order1 = rows.map((r) => r.id).filter((id) => id === seeded.deployA.id || id === seeded.deployB.id)
      assert.deepEqual(order1, [seeded.deployA.id, seeded.deployB.id], 'studio first while it is trusted most')
      const trust = (rs, id) => parseFloat(rs.find((r) => r.id === id).cols.trust)
      assert.ok(trust(rows, seeded.deployA.id) > trust(rows, seeded.deployB.id), `trust A ${trust(rows, seeded.deployA.id)} > B ${trust(rows, seeded.deployB.id)}`)
      await page.screenshot({ path: join(screenshotDir, 'debug-explain.png'), fullPage: true })

      // laptop first: by drag and drop, then the same with the buttons
      await tab(page, 'Agents')
      const entry = (who) => page.locator(`#preference li[data-entry="${who.npub}"]`)
      await entry(agentB).dragTo(entry(agentA))
      assert.deepEqual(await prefOrder(), [agentB.npub, agentA.npub], 'after dragging laptop onto studio')
      await page.getByRole('button', { name: /^Move snow-laptop .* down$/ }).click()
      assert.deepEqual(await prefOrder(), [agentA.npub, agentB.npub], 'after moving laptop down')
      await page.getByRole('button', { name: /^Move snow-laptop .* up$/ }).click()
      assert.deepEqual(await prefOrder(), [agentB.npub, agentA.npub], 'after moving laptop up')
      await saved()
      await page.screenshot({ path: join(screenshotDir, 'agents.png'), fullPage: true })

      rows = await explain(page, 'alpha cluster rollout')
      const order2 = rows.map((r) => r.id).filter((id) => id === seeded.deployA.id || id === seeded.deployB.id)
      assert.deepEqual(order2, [seeded.deployB.id, seeded.deployA.id], 'laptop first after the reorder')

      // the saved config kept the owner's other keys
      const cfg = await withTimeout(new Promise((resolve) => {
        const got = []
        relays[0].subscribe([{ kinds: [30078], authors: [owner.pk], '#d': ['snowclaw:config:global'] }], {
          onevent: (e) => got.push(e), oneose: () => resolve(got), eoseTimeout: STEP_MS,
        })
      }), STEP_MS, 'reading the global config')
      assert.equal(cfg.length, 1)
      assert.deepEqual(JSON.parse(cfg[0].content), { respond_mode: 'mention', context_history: 30, source_preference: [agentB.npub, agentA.npub] })
      assert.equal(await errorText(page), '')
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows people by their kind 0 name and long topics shortened, each whole on hover', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      await page.locator('#me .person', { hasText: 'Alice Liddell' }).waitFor({ timeout: STEP_MS })
      assert.equal(await page.locator('#me .person').getAttribute('title'), alice.npub)
      const own = page.locator(`#memory-list li[data-id="${seeded.v2.id}"] .prov .person`)
      await page.locator(`#memory-list li[data-id="${seeded.v2.id}"] .prov .person`, { hasText: 'Alice Liddell' }).waitFor({ timeout: STEP_MS })
      assert.equal(await own.getAttribute('title'), alice.npub)

      // a topic with a whole npub in it is shortened, the whole on hover
      const card = page.locator(`#memory-list li[data-id="${seeded.hours.id}"]`)
      await card.waitFor({ timeout: STEP_MS })
      const topic = card.locator('.mhead .topic')
      const full = `people/${alice.npub}/working-hours`
      assert.equal(await topic.getAttribute('title'), full)
      const shown = await topic.textContent()
      assert.ok(shown.length < 40 && shown.startsWith('people/npub1') && shown.endsWith('/working-hours') && shown.includes('…'), `topic shown as ${shown}`)
      const fits = await card.evaluate((el) => el.scrollWidth <= el.clientWidth)
      assert.ok(fits, 'the card overflows')

      // a long id is shortened, whole on hover, with a copy button
      const id = card.locator('.mid')
      assert.equal(await id.getAttribute('data-full-id'), seeded.hours.id)
      assert.ok((await id.locator('.idtext').textContent()).length < 20)
      assert.equal(await id.locator('.idtext').getAttribute('title'), seeded.hours.id)
      // the list uses the page's width: cards side by side while no history is open
      const widths = await page.locator('#memory-list').evaluate((el) => [el.getBoundingClientRect().width, document.querySelector('main').getBoundingClientRect().width])
      assert.ok(widths[0] > widths[1] * 0.9, `memory list ${widths[0]}px of ${widths[1]}px`)
      await page.screenshot({ path: join(screenshotDir, 'explorer-list.png') })
      await id.getByRole('button', { name: /^Copy id/ }).click()
      await id.getByRole('button', { name: /^Copy id/, hasText: /copied|selected/ }).waitFor({ timeout: STEP_MS })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('reads a record the same way in Memories and in Debug', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      const want = /Alice mentors the platform team/
      await page.getByLabel('Search (full text and meaning)').fill(mentors)
      await page.getByRole('button', { name: 'Search', exact: true }).click()
      const card = page.locator(`#memory-list li[data-id="${seeded.record.id}"]`)
      await card.waitFor({ timeout: STEP_MS })
      assert.match(await card.locator('.mtext').textContent(), want, 'Memories reads the agent\'s record of alice')
      const mine = page.locator(`#memory-list li[data-id="${seeded.privateMem.id}"]`)
      for (const via of ['HTTP API', 'websocket (NIP-50 REQ)']) {
        const rows = await explain(page, mentors, via)
        const row = rows.find((r) => r.id === seeded.record.id)
        assert.ok(row, `the record explained via ${via}`)
        assert.match(row.text, want, `Debug via ${via}`)
      }
      // alice's private memory too: the same text in both views
      await tab(page, 'Memories')
      await page.getByLabel('Search (full text and meaning)').fill(`dark roast ${kigali}`)
      await page.getByRole('button', { name: 'Search', exact: true }).click()
      await mine.waitFor({ timeout: STEP_MS })
      const listed = await mine.locator('.mtext').textContent()
      const overWS = (await explain(page, `dark roast ${kigali}`, 'websocket (NIP-50 REQ)')).find((r) => r.id === seeded.privateMem.id)
      assert.equal(overWS.text, listed)
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('offers the trust list controls only to the owner, who alone can save them', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      await tab(page, 'Agents')
      await page.locator(`#agents tr[data-pubkey="${agentA.pk}"]`).waitFor({ timeout: STEP_MS })
      assert.equal(await page.getByRole('button', { name: 'Add to trust list' }).count(), 0)
      assert.equal(await page.getByRole('button', { name: 'Save trust order' }).count(), 0)
      assert.equal(await page.getByRole('button', { name: /^Move / }).count(), 0)
      await page.screenshot({ path: join(screenshotDir, 'agents-member.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('follows the system\'s dark mode', async () => {
    const { context, page, problems } = await open(owner.sk, { colorScheme: 'dark' })
    try {
      await page.locator(`#memory-list li[data-id="${seeded.deployA.id}"]`).waitFor({ timeout: STEP_MS })
      const [bg, fg] = await page.evaluate(() => { const s = getComputedStyle(document.body); return [s.backgroundColor, s.color] })
      const lum = (c) => { const [r, g, b] = c.match(/\d+/g).map(Number); return 0.2126 * r + 0.7152 * g + 0.0722 * b }
      assert.ok(lum(bg) < 60 && lum(fg) > 180, `dark mode: background ${bg}, text ${fg}`)
      await page.screenshot({ path: join(screenshotDir, 'dark-explorer.png') })
      await tab(page, 'Agents')
      await page.locator(`#agents tr[data-pubkey="${agentA.pk}"]`).waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'dark-agents.png'), fullPage: true })
      await tab(page, 'Conflicts')
      await page.locator('#conflict-list article').first().waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'dark-conflicts.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('explains every ranking factor of a search in the debug view', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      const rows = await explain(page, 'apollo nightly backups')
      assert.equal(rows[0].id, seeded.v2.id, `the current apollo version ranks first: ${JSON.stringify(rows, null, 1)}`)
      assert.ok(!rows.some((r) => r.id === seeded.v1.id), 'the superseded version is hidden')
      const x = rows[0].cols
      assert.ok(parseInt(x.bm25_rank, 10) >= 1, `bm25 rank ${x.bm25_rank}`)
      for (const k of ['bm25_score', 'fused', 'trust', 'confidence', 'recency', 'length', 'final']) {
        assert.ok(parseFloat(x[k]) > 0, `${k} = ${x[k]}`)
      }
      assert.ok(parseFloat(x.vector_score) > 0 || x.vector_rank === '–', `vector ${x.vector_rank}/${x.vector_score}`)
      const finals = rows.map((r) => parseFloat(r.cols.final))
      assert.deepEqual(finals, [...finals].sort((a, b) => b - a), 'rows in descending final score')

      // the same search as a NIP-50 REQ ranks and explains the same
      const overWS = await explain(page, 'apollo nightly backups', 'websocket (NIP-50 REQ)')
      assert.deepEqual(overWS.map((r) => [r.id, r.cols.final]), rows.map((r) => [r.id, r.cols.final]))
      assert.match(overWS[0].text, /nightly backups/)

      // over the websocket a private memory arrives encrypted; the page
      // decrypts it with the extension's nip44 (the agent is the peer)
      const mine = (await explain(page, `dark roast ${kigali}`, 'websocket (NIP-50 REQ)')).find((r) => r.id === seeded.privateMem.id)
      assert.ok(mine, 'alice\'s private memory found over NIP-50')
      assert.match(mine.text, /Alice takes her coffee as a dark roast from Kigali/)

      // with the conflicts column filled, the table still fits a 1280 px window
      const db = await explain(page, 'primary database engine')
      assert.ok(db.some((r) => r.id === seeded.dbA.id) && db.some((r) => r.id === seeded.dbB.id), 'both database memories explained')
      assert.ok(await page.locator('#explain td.conflicts-with .mid').count() >= 2, 'the conflicts are listed')
      const fit = await page.evaluate(() => ({
        table: document.querySelector('#explain').getBoundingClientRect().right,
        main: document.querySelector('main').getBoundingClientRect().right,
        page: document.documentElement.scrollWidth,
        window: window.innerWidth,
      }))
      assert.equal(fit.window, 1280)
      assert.ok(fit.table <= fit.main && fit.page <= fit.window, `the table overflows: ${JSON.stringify(fit)}`)
      await page.screenshot({ path: join(screenshotDir, 'debug-explain-conflicts.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows conflicting memories side by side and lets the owner flag them', async () => {
    const { context, page, problems } = await open(owner.sk)
    try {
      await tab(page, 'Conflicts')
      const conflict = page.locator('#conflict-list article[data-topic="db/engine"]')
      await conflict.waitFor({ timeout: STEP_MS })
      const ids = await conflict.locator('li.memory').evaluateAll((els) => els.map((e) => e.dataset.id).sort())
      assert.deepEqual(ids, [seeded.dbA.id, seeded.dbB.id].sort())
      assert.match(await conflict.textContent(), /postgres/)
      assert.match(await conflict.textContent(), /mysql/)
      await conflict.getByRole('button', { name: 'Flag for review' }).click()
      await page.locator('#conflict-list article[data-topic="db/engine"] .badge.warn', { hasText: 'flagged for review' }).waitFor({ timeout: STEP_MS })
      await page.screenshot({ path: join(screenshotDir, 'conflicts.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('exports the person\'s own data as JSON and markdown', async () => {
    const { context, page, problems } = await open(alice.sk)
    try {
      await tab(page, 'My privacy')
      const mine = page.locator(`#private-list li[data-id="${seeded.privateMem.id}"]`)
      await mine.waitFor({ timeout: STEP_MS })
      assert.match(await mine.textContent(), /Kigali/)

      const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download JSON' }).click()])
      const exported = JSON.parse(readFileSync(await json.path(), 'utf8'))
      assert.equal(exported.user_id, alice.npub)
      assert.match(JSON.stringify(exported), /Kigali/)
      assert.match(await page.locator('#export-summary').textContent(), new RegExp(`Export of ${alice.npub}`))

      const [md] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download markdown' }).click()])
      assert.match(md.suggestedFilename(), /\.md$/)
      assert.match(readFileSync(await md.path(), 'utf8'), /Kigali/)
      await page.screenshot({ path: join(screenshotDir, 'privacy.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('forgets by id and by query after the preview, and destroys with the token', async () => {
    const carol = keys()
    for (const text of ['Carol drinks green tea every morning', 'Carol rides a red bicycle to work', 'Carol keeps a cat named Miso']) {
      const res = await api(server.http, carol.sk, 'POST', '/api/v1/memories', { text, topic: 'carol/facts', tier: 'private' })
      assert.equal(res.status, 201, JSON.stringify(res.body))
    }
    const { context, page, problems } = await open(carol.sk)
    try {
      await tab(page, 'My privacy')
      const items = page.locator('#private-list li.memory')
      await items.nth(2).waitFor({ timeout: STEP_MS })
      const texts = () => items.locator('.mtext').allTextContents()

      // by id, after the browser's confirmation dialog
      page.once('dialog', (d) => d.accept())
      await items.filter({ hasText: 'red bicycle' }).getByRole('button', { name: 'Forget this' }).click()
      await settle(page, page.locator('#view-privacy .status', { hasText: 'forgot 1' }), 'forget by id')
      await page.waitForFunction(() => document.querySelectorAll('#private-list li.memory').length === 2)
      assert.doesNotMatch((await texts()).join('|'), /bicycle/)

      // by query: the preview lists the match and nothing is gone yet
      await page.getByLabel('Forget memories matching').fill('green tea')
      await page.getByRole('button', { name: 'Preview' }).click()
      const preview = page.locator('#forget-preview')
      await settle(page, preview.getByRole('button', { name: /^Forget these/ }), 'forget preview')
      assert.match(await preview.textContent(), /green tea/)
      assert.doesNotMatch(await preview.textContent(), /Miso/)
      assert.equal(await items.count(), 2, 'a preview forgets nothing')
      await preview.getByRole('button', { name: /^Forget these/ }).click()
      await settle(page, preview.getByText(/forgot 1/), 'forget confirmed')
      await page.waitForFunction(() => document.querySelectorAll('#private-list li.memory').length === 1)
      assert.match((await texts()).join('|'), /Miso/)

      // destroy: the first click only says what would go
      await page.getByRole('button', { name: 'Destroy…' }).click()
      const box = page.locator('#destroy-box')
      await settle(page, box.getByText(/irreversibly/), 'destroy preview')
      const go = box.getByRole('button', { name: 'Destroy everything now' })
      assert.ok(await go.isDisabled(), 'destroy needs the acknowledgement first')
      await box.getByLabel('I understand this is irreversible').check()
      await go.click()
      await settle(page, box.getByText(/^destroyed:/), 'destroy')
      await page.locator('#private-list li.hint', { hasText: 'No private memories' }).waitFor({ timeout: STEP_MS })
      const after = await api(server.http, carol.sk, 'GET', '/api/v1/memories?tier=private')
      assert.deepEqual(after.body.memories, [], 'the relay still holds carol\'s memories')
      await page.screenshot({ path: join(screenshotDir, 'privacy-forget-destroy.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows a second identity neither the group memories nor alice\'s private ones', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const problems = watch(page)
    try {
      await page.goto(server.http + '/ui/')
      await page.screenshot({ path: join(screenshotDir, 'login.png') })
      // no extension in this browser: the page says so and stays usable
      await page.getByRole('button', { name: 'Log in with a browser extension (NIP-07)' }).click()
      await page.getByRole('alert').filter({ hasText: 'No NIP-07 extension found' }).waitFor({ timeout: STEP_MS })
      await page.getByRole('button', { name: 'Use a new session key' }).click()
      await page.locator('#me').waitFor()
      const bob = await page.locator('#me').getAttribute('data-pubkey')
      assert.match(bob, /^[0-9a-f]{64}$/)
      assert.notEqual(bob, alice.pk)
      // the session key is kept nowhere the browser persists
      assert.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [0, 0, ''])

      // the listing shows public memories, not the group's
      await page.locator(`#memory-list li[data-id="${seeded.deployA.id}"]`).waitFor({ timeout: STEP_MS })
      const listed = await page.locator('#memory-list li.memory').evaluateAll((els) => els.map((e) => e.dataset.id))
      assert.ok(!listed.includes(seeded.groupMem.id), 'group memory listed to a non-member')
      assert.ok(!listed.includes(seeded.privateMem.id), 'alice\'s private memory listed to bob')

      const search = async (text) => {
        await page.getByLabel('Search (full text and meaning)').fill(text)
        await page.getByRole('button', { name: 'Search', exact: true }).click()
        await page.locator('#view-explorer .status', { hasText: `“${text}”` }).waitFor({ timeout: STEP_MS })
        return page.locator('#memory-list li.memory').evaluateAll((els) => els.map((e) => e.dataset.id))
      }
      // semantic search always finds something near; never these
      assert.ok(!(await search(thursday)).includes(seeded.groupMem.id), 'group memory found by a non-member')
      assert.ok(!(await search(kigali)).includes(seeded.privateMem.id), 'private memory found by another person')
      assert.doesNotMatch(await page.locator('#memory-list').textContent(), /thursday|kigali/i)
      assert.ok((await search('alpha cluster rollout')).includes(seeded.deployA.id), 'public memories are found')
      await page.screenshot({ path: join(screenshotDir, 'explorer-other-identity.png'), fullPage: true })

      // browsing by the group and the private tier shows nothing either
      const form = page.getByRole('form', { name: 'Browse memories' })
      await form.getByLabel('Group').fill(group)
      await form.getByRole('button', { name: 'List' }).click()
      await page.locator('#view-explorer .status', { hasText: 'listed' }).waitFor({ timeout: STEP_MS })
      assert.equal(await page.locator('#memory-list li.memory').count(), 0)

      await tab(page, 'My privacy')
      await page.locator('#private-list li').first().waitFor({ timeout: STEP_MS })
      assert.equal(await page.locator(`#private-list li[data-id="${seeded.privateMem.id}"]`).count(), 0)
      assert.doesNotMatch(await page.locator('#private-list').textContent(), /kigali/i)

      // the debug view sees the world as another key only when given it
      assert.ok(!(await explain(page, thursday)).some((r) => r.id === seeded.groupMem.id), 'group memory explained to a non-member')
      const asKey = page.getByLabel('Search as another key')
      await asKey.fill('nsec1notakey')
      await page.getByRole('button', { name: 'Explain' }).click()
      await page.locator('#error', { hasText: 'nsec' }).waitFor({ timeout: STEP_MS })
      await asKey.fill(nsecEncode(alice.sk))
      const asAlice = await explain(page, thursday)
      assert.equal(asAlice[0].id, seeded.groupMem.id, 'as alice the group memory ranks first')
      assert.match(await page.locator('#view-debug .status').textContent(), /as npub1/)
      noPageErrors(problems)
    } finally { await context.close() }
  })
})
