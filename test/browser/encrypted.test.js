// The encrypted group tier in the web UI, in headless Chromium against a
// real `snowclaw serve`: members read a group's sealed memories in plain
// (list, search, history, conflicts, the debug view), with the keys the
// relay's agent sent them, through the NIP-07 extension and through a
// key typed into the page; a removed member reads nothing written after
// the removal; the owner sees each group's key version and deliveries.
//
// The members' own memories are written by a client made from
// docs/group-encryption.md alone, with nostr-tools: it unwraps its gift
// wraps, checks them, and seals with NIP-44 under the group key.
//
//   cd test/browser && npm ci && node --test

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

import { finalizeEvent, generateSecretKey, getEventHash, getPublicKey, verifyEvent } from 'nostr-tools/pure'
import { npubEncode, nsecEncode } from 'nostr-tools/nip19'
import * as nip44 from 'nostr-tools/nip44'

import {
  STEP_MS, buildBinary, connect, launch, publish, screenshotDir, sign,
  startRelay, stopRelay, watch, withExtension, withTimeout,
} from './harness.js'

const keys = () => { const sk = generateSecretKey(); return { sk, pk: getPublicKey(sk), npub: npubEncode(getPublicKey(sk)) } }
const bytes = (hex) => Uint8Array.from(Buffer.from(hex, 'hex'))

// query runs one REQ to EOSE.
function query(relay, filter) {
  return withTimeout(new Promise((resolve) => {
    const got = []
    relay.subscribe([filter], { onevent: (e) => got.push(e), oneose: () => resolve(got), eoseTimeout: STEP_MS })
  }), STEP_MS, `REQ ${JSON.stringify(filter)}`)
}

// groupKeys is a member's client from the document: every gift wrap to
// the member is unwrapped, and only a delivery whose seal the pinned
// agent signed, whose rumor names that author, whose secrets derive their
// public keys and whose current version is among them is kept.
async function groupKeys(relay, who, agent, group) {
  const out = new Map()
  for (const wrap of await query(relay, { kinds: [1059], '#p': [who.pk] })) {
    try {
      if (!verifyEvent(wrap)) continue
      const seal = JSON.parse(nip44.decrypt(wrap.content, nip44.getConversationKey(who.sk, wrap.pubkey)))
      if (seal.kind !== 13 || !verifyEvent(seal) || seal.pubkey !== agent) continue
      const rumor = JSON.parse(nip44.decrypt(seal.content, nip44.getConversationKey(who.sk, seal.pubkey)))
      if (rumor.pubkey !== seal.pubkey || rumor.kind !== 14 || (rumor.id && rumor.id !== getEventHash(rumor))) continue
      const m = JSON.parse(rumor.content)
      if (m.type !== 'snow:group-key' || m.group !== group || !m.keys.some((k) => k.version === m.current)) continue
      for (const k of m.keys) {
        if (getPublicKey(bytes(k.secret)) === k.pubkey) out.set(k.version, k)
      }
    } catch { /* not a delivery for this key */ }
  }
  return out
}

// sealed is a group memory sealed with key k: NIP-44 under the
// conversation key of the group secret and its own public key.
function sealed(who, group, k, topic, summary, { tags = [], createdAt } = {}) {
  const content = nip44.encrypt(JSON.stringify({ summary }), nip44.getConversationKey(bytes(k.secret), k.pubkey))
  return sign(who.sk, 30078, [['d', `snow:memory:${topic}`], ['h', group], ['encrypted', 'nip44-group'], ['snow:key-version', String(k.version)],
    ['snow:source', npubEncode(who.pk)], ...tags], content, createdAt)
}

// forgedDelivery is a gift wrap to `to` whose seal mallory signs, around
// a rumor that claims author `claims` and carries a key of mallory's for
// version 1 of group. The wrap is dated before any real one (NIP-59 dates
// wraps up to two days back), so a client that took it would read it last
// and let it replace the real key.
function forgedDelivery(mallory, claims, to, group) {
  const fake = generateSecretKey()
  const rumor = { pubkey: claims, created_at: Math.floor(Date.now() / 1000), kind: 14, tags: [['p', to], ['snow:group-key', group]],
    content: JSON.stringify({ type: 'snow:group-key', group, current: 1, keys: [{ version: 1, secret: Buffer.from(fake).toString('hex'), pubkey: getPublicKey(fake) }] }) }
  rumor.id = getEventHash(rumor)
  const seal = finalizeEvent({ kind: 13, created_at: rumor.created_at, tags: [], content: nip44.encrypt(JSON.stringify(rumor), nip44.getConversationKey(mallory.sk, to)) }, mallory.sk)
  const eph = generateSecretKey()
  return finalizeEvent({ kind: 1059, created_at: rumor.created_at - 3 * 86400, tags: [['p', to]],
    content: nip44.encrypt(JSON.stringify(seal), nip44.getConversationKey(eph, to)) }, eph)
}

describe('encrypted group memories in the web UI', { timeout: 600000 }, () => {
  const owner = keys()
  const dave = keys() // a member, through the NIP-07 extension
  const erin = keys() // a member, through a key typed into the page; removed later
  const group = 'vault'
  const ibex = 'at the front desk' // only the vault access memories say it
  const narwhal = 'kestrel-4471' // only the memory written after erin's removal
  const lunch = 'on Fridays'

  let built
  let server
  let browser
  let agent
  const relays = []
  const seeded = {}
  let daveWS
  let erinKeys

  before(async () => {
    mkdirSync(screenshotDir, { recursive: true })
    built = buildBinary()
    server = await startRelay(built.bin, owner.pk)
    browser = await launch()
    // the agent's key, learnt once and pinned, as the document says
    agent = (await (await fetch(server.http + '/api/v1/health')).json()).agent
    assert.match(agent, /^[0-9a-f]{64}$/)

    const ownerWS = await connect(server.ws, owner.sk)
    daveWS = await connect(server.ws, dave.sk)
    const erinWS = await connect(server.ws, erin.sk)
    relays.push(ownerWS, daveWS, erinWS)
    await publish(ownerWS, sign(owner.sk, 0, [], JSON.stringify({ name: 'sam', display_name: 'Sam Rivera' })), 'owner profile')
    await publish(ownerWS, sign(owner.sk, 9007, [['h', group], ['name', 'Vault']]), 'create group')
    await publish(daveWS, sign(dave.sk, 9021, [['h', group]]), 'dave joins')
    await publish(erinWS, sign(erin.sk, 9021, [['h', group]]), 'erin joins')
    await publish(ownerWS, sign(owner.sk, 9002, [['h', group], ['encrypted']]), 'encryption on')
    await publish(daveWS, sign(dave.sk, 0, [], JSON.stringify({ name: 'dave', display_name: 'Dave Mensah' })), 'dave profile')
    await publish(erinWS, sign(erin.sk, 0, [], JSON.stringify({ name: 'erin', display_name: 'Erin Walsh' })), 'erin profile')

    const daveKeys = await groupKeys(daveWS, dave, agent, group)
    erinKeys = await groupKeys(erinWS, erin, agent, group)
    assert.ok(daveKeys.get(1) && erinKeys.get(1), 'dave and erin were sent version 1')
    assert.equal(daveKeys.get(1).secret, erinKeys.get(1).secret)

    // two versions of one memory, and two members disagreeing on a topic
    const t0 = Math.floor(Date.now() / 1000) - 60
    seeded.v1 = sealed(dave, group, daveKeys.get(1), 'vault/access', `The vault opens with the brass key ${ibex}`, { tags: [['snow:version', '1']], createdAt: t0 })
    seeded.v2 = sealed(dave, group, daveKeys.get(1), 'vault/access-v2', `The vault opens with the silver key and a PIN ${ibex}`,
      { tags: [['snow:version', '2'], ['snow:supersedes', seeded.v1.id]], createdAt: t0 + 30 })
    seeded.lunchDave = sealed(dave, group, daveKeys.get(1), 'vault/lunch', `The vault team lunches on pizza ${lunch}`)
    seeded.lunchErin = sealed(erin, group, erinKeys.get(1), 'vault/lunch', `The vault team lunches on sushi ${lunch}`)
    for (const [ws, evt] of [[daveWS, seeded.v1], [daveWS, seeded.v2], [daveWS, seeded.lunchDave], [erinWS, seeded.lunchErin]]) {
      await publish(ws, evt, `sealed ${evt.tags[0][1]}`)
    }

    // mallory hands dave keys of her own: one signed as herself, one whose
    // rumor claims to be the agent's; his page must take neither
    const mallory = keys()
    const malloryWS = await connect(server.ws, mallory.sk)
    relays.push(malloryWS)
    await publish(malloryWS, forgedDelivery(mallory, mallory.pk, dave.pk, group), 'a delivery from mallory')
    await publish(malloryWS, forgedDelivery(mallory, agent, dave.pk, group), 'a delivery impersonating the agent')
  })

  after(async () => {
    for (const r of relays) r.close()
    if (browser) await browser.close()
    await stopRelay(server)
    if (built && built.dir) rmSync(built.dir, { recursive: true, force: true })
  })

  // logIn opens the UI as who: through the injected extension, or with
  // the key typed into the login form (a session key held by the page).
  async function logIn(who, { typed = false } = {}) {
    const context = typed ? await browser.newContext({ viewport: { width: 1280, height: 900 } }) : await withExtension(browser, who.sk)
    const page = await context.newPage()
    const problems = watch(page)
    await page.goto(server.http + '/ui/')
    if (typed) {
      await page.getByLabel('Or a secret key (nsec or hex)').fill(nsecEncode(who.sk))
      await page.getByRole('button', { name: 'Log in with this key' }).click()
    } else {
      await page.getByRole('button', { name: 'Log in with a browser extension (NIP-07)' }).click()
    }
    await page.locator('#me').waitFor()
    assert.equal(await page.locator('#me').getAttribute('data-pubkey'), who.pk)
    return { context, page, problems }
  }

  function noPageErrors(problems) {
    const bad = problems.filter((p) => p.startsWith('page error') || /Content Security Policy|Refused to/.test(p))
    assert.deepEqual(bad, [])
  }

  async function search(page, text) {
    await page.getByRole('tab', { name: 'Memories' }).click()
    await page.getByLabel('Search (full text and meaning)').fill(text)
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.locator('#view-explorer .status', { hasText: `“${text}”` }).waitFor({ timeout: STEP_MS })
    return page.locator('#memory-list li.memory').evaluateAll((els) => els.map((e) => ({ id: e.dataset.id, text: e.querySelector('.mtext').textContent })))
  }

  async function explain(page, text, via) {
    await page.getByRole('tab', { name: 'Debug' }).click()
    const form = page.getByRole('form', { name: 'Explain a search' })
    await form.getByLabel('Query').fill(text)
    await form.getByLabel('Through').selectOption({ label: via })
    await form.getByRole('button', { name: 'Explain' }).click()
    await page.locator('#view-debug .status', { hasText: ` for “${text}” as ` }).waitFor({ timeout: STEP_MS }).catch(async (e) => {
      throw new Error(`explaining ${text} via ${via}: ${e.message.split('\n')[0]}; the view says ${JSON.stringify(await page.locator('#view-debug .status').textContent())}, the page ${JSON.stringify(await page.locator('#error').textContent())}`)
    })
    return page.locator('#explain tbody tr').evaluateAll((rows) => rows.map((r) => ({ id: r.dataset.id, text: r.querySelector('.mtext').textContent })))
  }

  it('opens the group\'s sealed memories for a member, with the agent\'s keys only: list, search, history, debug and conflicts', async () => {
    const { context, page, problems } = await logIn(dave)
    try {
      const want = `The vault opens with the silver key and a PIN ${ibex}`
      const card = page.locator(`#memory-list li[data-id="${seeded.v2.id}"] .mtext`)
      await card.filter({ hasText: want }).waitFor({ timeout: STEP_MS })

      const hits = await search(page, `silver key PIN ${ibex}`)
      const hit = hits.find((x) => x.id === seeded.v2.id)
      assert.ok(hit, `the sealed memory is a search hit: ${JSON.stringify(hits)}`)
      assert.equal(hit.text, want)
      assert.ok(!hits.some((x) => /encrypted: this key cannot read it/.test(x.text)), `unreadable hits: ${JSON.stringify(hits)}`)
      await page.screenshot({ path: join(screenshotDir, 'group-encrypted-search.png'), fullPage: true })

      // its history: both versions opened, with the word diff
      await page.locator(`#memory-list li[data-id="${seeded.v2.id}"]`).getByRole('button', { name: 'History' }).click()
      const versions = page.locator('#memory-detail li.version')
      await versions.nth(1).waitFor({ timeout: STEP_MS })
      assert.deepEqual(await versions.evaluateAll((els) => els.map((e) => e.dataset.id)), [seeded.v2.id, seeded.v1.id])
      assert.match(await versions.nth(1).textContent(), new RegExp(`The vault opens with the brass key ${ibex}`))
      const diff = versions.first().locator('.diff')
      assert.match((await diff.locator('del').allTextContents()).join('|'), /brass/)
      assert.match((await diff.locator('ins').allTextContents()).join('|'), /silver/)
      await page.screenshot({ path: join(screenshotDir, 'group-encrypted-history.png'), fullPage: true })

      // the debug view, over HTTP and as a NIP-50 REQ
      for (const via of ['HTTP API', 'websocket (NIP-50 REQ)']) {
        const row = (await explain(page, `silver key PIN ${ibex}`, via)).find((r) => r.id === seeded.v2.id)
        assert.ok(row, `explained via ${via}`)
        assert.equal(row.text, want, `debug via ${via}`)
      }

      // two members disagree on a topic: the conflict shows both in plain
      await page.getByRole('tab', { name: 'Conflicts' }).click()
      const conflict = page.locator('#conflict-list article[data-topic="vault/lunch"]')
      await conflict.waitFor({ timeout: STEP_MS })
      assert.match(await conflict.textContent(), /pizza/)
      assert.match(await conflict.textContent(), /sushi/)
      assert.doesNotMatch(await conflict.textContent(), /cannot read/)
      noPageErrors(problems)
    } finally { await context.close() }

    // erin, with her key typed into the page, reads them too
    const typed = await logIn(erin, { typed: true })
    try {
      const hits = await search(typed.page, `silver key PIN ${ibex}`)
      assert.equal((hits.find((x) => x.id === seeded.v2.id) || {}).text, `The vault opens with the silver key and a PIN ${ibex}`)
      noPageErrors(typed.problems)
    } finally { await typed.context.close() }
  })

  it('shows a removed member nothing written after the removal, which her keys cannot open', async () => {
    const ownerWS = relays[0]
    await publish(ownerWS, sign(owner.sk, 9001, [['h', group], ['p', erin.pk]]), 'erin removed')
    const daveKeys = await groupKeys(daveWS, dave, agent, group)
    assert.ok(daveKeys.get(2), 'dave was sent version 2 after the removal')
    seeded.after = sealed(dave, group, daveKeys.get(2), 'vault/code', `The new vault code is ${narwhal}`)
    await publish(daveWS, seeded.after, 'sealed after the removal')

    // the keys erin kept do not open it
    for (const k of erinKeys.values()) {
      assert.throws(() => nip44.decrypt(seeded.after.content, nip44.getConversationKey(bytes(k.secret), k.pubkey)), `erin's version ${k.version} opens it`)
    }
    const { context, page, problems } = await logIn(erin, { typed: true })
    try {
      const hits = await search(page, `new vault code ${narwhal}`)
      assert.ok(!hits.some((x) => x.id === seeded.after.id), 'the memory written after the removal is found by erin')
      assert.doesNotMatch(await page.locator('#memory-list').textContent(), new RegExp(narwhal))
      const form = page.getByRole('form', { name: 'Browse memories' })
      await form.getByLabel('Group').fill(group)
      await form.getByRole('button', { name: 'List' }).click()
      await page.locator('#view-explorer .status', { hasText: 'listed' }).waitFor({ timeout: STEP_MS })
      // the read rule still gives an author her own memory; nothing else
      const listed = await page.locator('#memory-list li.memory').evaluateAll((els) => els.map((e) => e.dataset.id))
      assert.deepEqual(listed, [seeded.lunchErin.id], 'the group\'s memories listed to a removed member')
      await page.screenshot({ path: join(screenshotDir, 'group-encrypted-removed.png'), fullPage: true })
      assert.ok(!(await explain(page, narwhal, 'websocket (NIP-50 REQ)')).some((r) => r.id === seeded.after.id))
      noPageErrors(problems)
    } finally { await context.close() }

    // dave reads it in plain: his page reads the new key when it meets version 2
    const d = await logIn(dave)
    try {
      const hit = (await search(d.page, `new vault code ${narwhal}`)).find((x) => x.id === seeded.after.id)
      assert.equal(hit && hit.text, `The new vault code is ${narwhal}`)
      noPageErrors(d.problems)
    } finally { await d.context.close() }
  })

  it('shows the owner each encrypted group\'s key version and who holds it, and no key', async () => {
    const { context, page, problems } = await logIn(owner)
    try {
      await page.getByRole('tab', { name: 'Group keys' }).click()
      const article = page.locator(`#group-keys article[data-group="${group}"]`)
      await article.waitFor({ timeout: STEP_MS })
      assert.match(await article.textContent(), /key version 2 of 2/)
      const states = await article.locator('tbody tr').evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.dataset.pubkey, r.dataset.state])))
      assert.equal(states[dave.pk], 'delivered')
      assert.equal(states[erin.pk], undefined, 'a removed member is listed')
      const text = await page.locator('#view-keys').textContent()
      const daveKeys = await groupKeys(daveWS, dave, agent, group)
      for (const k of daveKeys.values()) {
        assert.ok(!text.includes(k.secret) && !text.includes(k.pubkey), 'key material on the page')
      }
      await page.screenshot({ path: join(screenshotDir, 'group-keys.png'), fullPage: true })
      noPageErrors(problems)
    } finally { await context.close() }

    // a member who is no admin sees none
    const d = await logIn(dave)
    try {
      await d.page.getByRole('tab', { name: 'Group keys' }).click()
      await d.page.locator('#group-keys .hint', { hasText: 'You manage no encrypted group' }).waitFor({ timeout: STEP_MS })
      assert.equal(await d.page.locator('#group-keys article').count(), 0)
      noPageErrors(d.problems)
    } finally { await d.context.close() }
  })
})
