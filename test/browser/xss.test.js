// Hostile text in the web UI, in headless Chromium against a real
// `snowclaw serve`: markup in a profile name, a group's name and about, a
// memory's topic and text, a chat message the agent hears and a note on
// the agent's record must reach every view as the text it is, and run
// nothing. No screenshots here: the committed ones show realistic data.
//
//   cd test/browser && npm ci && node --test xss.test.js

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'

import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { npubEncode } from 'nostr-tools/nip19'

import {
  STEP_MS, api, buildBinary, connect, launch, memory, publish, sign,
  startRelay, stopRelay, watch, withExtension,
} from './harness.js'

const keys = () => { const sk = generateSecretKey(); return { sk, pk: getPublicKey(sk), npub: npubEncode(getPublicKey(sk)) } }

describe('hostile text in the web UI', { timeout: 600000 }, () => {
  const owner = keys()
  const alice = keys() // a member of the lounge
  const mallory = keys() // writes markup everywhere she can
  const evilName = '<img src=x onerror="window.__xss=1">'
  const evilGroup = '<img src=x onerror="window.__xss=2">'
  const evilAbout = '<script>window.__xss=3</script>'
  const evilTopic = 'notes/<svg onload="window.__xss=4">'
  const evilText = '<iframe src="javascript:window.__xss=5"></iframe> migration notes'
  const evilNote = '<b onmouseover="window.__xss=6">bold</b>'
  let built
  let server
  let browser
  const relays = []
  const seeded = {}

  before(async () => {
    built = buildBinary()
    server = await startRelay(built.bin, owner.pk)
    browser = await launch()
    const ws = {}
    for (const [name, who] of Object.entries({ owner, alice, mallory })) {
      ws[name] = await connect(server.ws, who.sk)
      relays.push(ws[name])
    }
    await publish(ws.mallory, sign(mallory.sk, 0, [], JSON.stringify({ name: evilName, display_name: evilName })), 'mallory profile')
    await publish(ws.owner, sign(owner.sk, 9007, [['h', 'lounge'], ['name', 'Lounge']]), 'create the lounge')
    await publish(ws.alice, sign(alice.sk, 9021, [['h', 'lounge']]), 'alice joins')
    await publish(ws.mallory, sign(mallory.sk, 9021, [['h', 'lounge']]), 'mallory joins')
    await publish(ws.owner, sign(owner.sk, 9000, [['h', 'lounge'], ['p', mallory.pk, 'admin']]), 'mallory made admin')
    await publish(ws.mallory, sign(mallory.sk, 9002, [['h', 'lounge'], ['name', evilGroup], ['about', evilAbout]]), 'mallory renames the lounge')
    await publish(ws.mallory, sign(mallory.sk, 9, [['h', 'lounge']], evilText), 'mallory chats')
    seeded.memory = memory(mallory.sk, evilTopic, evilText)
    await publish(ws.mallory, seeded.memory, 'mallory memory')
    const note = await api(server.http, owner.sk, 'POST', `/api/v1/agent/memory/${mallory.npub}`, { note: evilNote, prefs: { [evilNote]: evilNote } })
    assert.equal(note.status, 200, JSON.stringify(note.body))
  })

  after(async () => {
    for (const r of relays) r.close()
    if (browser) await browser.close()
    await stopRelay(server)
    if (built && built.dir) rmSync(built.dir, { recursive: true, force: true })
  })

  async function open(who) {
    const context = await withExtension(browser, who.sk)
    const page = await context.newPage()
    const problems = watch(page)
    await page.goto(server.http + '/ui/')
    await page.getByRole('button', { name: 'Log in with a browser extension (NIP-07)' }).click()
    await page.locator('#me').waitFor()
    return { context, page, problems }
  }

  // inert: nothing the relay sent became an element or ran
  async function inert(page) {
    assert.equal(await page.locator('main img, main svg, main script, main iframe, header img').count(), 0, 'hostile text became markup')
    assert.equal(await page.locator('main b').count(), 0, 'a note became markup')
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'hostile text ran script')
  }

  function noPageErrors(problems) {
    const bad = problems.filter((p) => p.startsWith('page error') || /Content Security Policy|Refused to/.test(p))
    assert.deepEqual(bad, [])
  }

  it('shows markup in a name, a topic and a memory as text in Memories', async () => {
    const { context, page, problems } = await open(alice)
    try {
      const card = page.locator(`#memory-list li[data-id="${seeded.memory.id}"]`)
      await card.waitFor({ timeout: STEP_MS })
      await card.locator('.prov .person', { hasText: '<img' }).waitFor({ timeout: STEP_MS })
      assert.equal(await card.locator('.prov .person').textContent(), evilName)
      assert.equal(await card.locator('.prov .person').getAttribute('title'), mallory.npub)
      assert.equal(await card.locator('.mhead .topic').getAttribute('title'), evilTopic)
      assert.equal(await card.locator('.mhead .topic').textContent(), evilTopic)
      assert.equal(await card.locator('.mtext').textContent(), evilText)
      await inert(page)
      noPageErrors(problems)
    } finally { await context.close() }
  })

  it('shows a group\'s hostile name and about as text to its members and the owner', async () => {
    const asAlice = await open(alice)
    try {
      await asAlice.page.getByRole('tab', { name: 'My groups' }).click()
      const g = asAlice.page.locator('#my-groups article.group[data-group="lounge"]')
      await g.waitFor({ timeout: STEP_MS })
      assert.equal(await g.locator('.group-name').textContent(), evilGroup)
      assert.equal(await g.locator('.about').textContent(), evilAbout)
      await g.locator(`tr[data-pubkey="${mallory.pk}"] .person`, { hasText: '<img' }).waitFor({ timeout: STEP_MS })
      await inert(asAlice.page)
      noPageErrors(asAlice.problems)
    } finally { await asAlice.context.close() }

    const { context, page, problems } = await open(owner)
    try {
      await page.getByRole('tab', { name: 'Owner' }).click()
      const g = page.locator('#all-groups article.group[data-group="lounge"]')
      await g.waitFor({ timeout: STEP_MS })
      assert.equal(await g.locator('.group-name').textContent(), evilGroup)
      // the agent's record of mallory: her name, what she said, the owner's note
      const row = page.locator(`#people tr[data-npub="${mallory.npub}"]`)
      await row.waitFor({ timeout: STEP_MS })
      await row.locator('.person', { hasText: '<img' }).waitFor({ timeout: STEP_MS })
      await row.getByRole('button', { name: 'Show record' }).click()
      const record = page.locator(`#people .record-body[data-npub="${mallory.npub}"]`)
      await record.waitFor({ timeout: STEP_MS })
      assert.match(await record.textContent(), /<b onmouseover="window.__xss=6">bold<\/b>: <b onmouseover/)
      assert.match(await record.textContent(), new RegExp(evilName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      await inert(page)
      noPageErrors(problems)
    } finally { await context.close() }
  })
})
