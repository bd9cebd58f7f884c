// An independent client's view of the relay: nostr-tools over ws, against
// a real `snowclaw serve` child process. It checks NIP-42 auth, NIP-29 group
// creation and joins, live delivery of group chat, and the refusals a
// non-member and an anonymous reader get (docs/access.md).
//
//   SNOWCLAW_BIN=/path/to/snowclaw node --test
//
// The binary is built by the caller (.ci/run); this test builds nothing.

import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'

import WebSocket from 'ws'
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'

import { STEP_MS, now, startRelay, stopRelay, withTimeout } from './relay.js'

useWebSocketImplementation(WebSocket)

const BIN = process.env.SNOWCLAW_BIN

function sign(sk, kind, tags, content = '') {
  return finalizeEvent({ kind, tags, content, created_at: now() }, sk)
}

// connect opens a nostr-tools relay connection. With a secret key it also
// answers the AUTH challenge the relay sends on connect and resolves only
// once the relay has accepted the authentication (OK true).
async function connect(url, sk) {
  const relay = new Relay(url)
  if (!sk) {
    await withTimeout(relay.connect(), STEP_MS, 'connect')
    return relay
  }
  const signer = async (template) => finalizeEvent(template, sk)
  const authed = new Promise((resolve, reject) => {
    relay.onauth = async (template) => {
      // nostr-tools calls onauth when the challenge arrives and keeps the
      // pending auth; auth() hands back that same promise, which settles
      // on the relay's OK.
      setImmediate(() => relay.auth(signer).then(resolve, reject))
      return signer(template)
    }
  })
  await withTimeout(relay.connect(), STEP_MS, 'connect')
  await withTimeout(authed, STEP_MS, 'NIP-42 authentication')
  return relay
}

// request sends one REQ and resolves with how the relay answered: the
// stored events and either EOSE or the CLOSED reason.
function request(relay, filters) {
  return withTimeout(new Promise((resolve) => {
    const events = []
    let sub = null
    const settle = (outcome) => {
      resolve({ events, ...outcome })
      if (sub && !outcome.closed) sub.close()
    }
    sub = relay.subscribe(filters, {
      onevent: (evt) => events.push(evt),
      oneose: () => settle({ eose: true, closed: null }),
      onclose: (reason) => settle({ eose: false, closed: reason }),
      // later than our own timeout, so that oneose means a real EOSE
      eoseTimeout: STEP_MS + 1000,
    })
  }), STEP_MS, `REQ ${JSON.stringify(filters)}`)
}

describe('snowclaw relay seen from nostr-tools', { timeout: 55000 }, () => {
  const ownerSk = generateSecretKey()
  const aliceSk = generateSecretKey() // joins the chat group
  const bobSk = generateSecretKey() // joins too, and talks
  const alice = getPublicKey(aliceSk)
  const bob = getPublicKey(bobSk)
  const suffix = Math.random().toString(36).slice(2, 8)
  const chat = `chat-${suffix}`
  const other = `other-${suffix}`

  let server
  let url
  const open = []
  const track = (relay) => { open.push(relay); return relay }

  before(async () => {
    if (!BIN) {
      throw new Error('SNOWCLAW_BIN is not set: build the relay (go build -o /tmp/snowclaw ./cmd/snowclaw) and run SNOWCLAW_BIN=/tmp/snowclaw node --test')
    }
    server = startRelay(BIN, getPublicKey(ownerSk))
    url = await server.url
  })

  after(async () => {
    for (const relay of open) relay.close()
    if (server) await stopRelay(server)
  })

  it('lets the owner create two groups (kind 9007)', async () => {
    const owner = track(await connect(url, ownerSk))
    for (const id of [chat, other]) {
      // publish resolves on OK true and rejects with the reason on OK false
      await withTimeout(owner.publish(sign(ownerSk, 9007, [['h', id], ['name', id]])), STEP_MS, `create ${id}`)
    }
    // the rest of this file relies on the defaults: private and open
    const meta = await request(owner, [{ kinds: [39000], '#d': [chat] }])
    assert.equal(meta.closed, null)
    assert.equal(meta.events.length, 1, 'one relay-signed 39000 for the new group')
    const flags = meta.events[0].tags.filter((t) => t.length === 1).map((t) => t[0])
    assert.ok(flags.includes('private'), `flags ${flags}`)
    assert.ok(flags.includes('open'), `flags ${flags}`)
    assert.ok(!flags.includes('closed'), `flags ${flags}`)
  })

  it('refuses group creation by someone who is not the owner', async () => {
    const relay = track(await connect(url, aliceSk))
    await assert.rejects(
      relay.publish(sign(aliceSk, 9007, [['h', `mine-${suffix}`]])),
      { message: /^restricted: / },
    )
  })

  it('accepts joins to an open group and delivers chat live to members', async () => {
    const aliceRelay = track(await connect(url, aliceSk))
    const bobRelay = track(await connect(url, bobSk))

    // OK true: publish resolves; OK false would reject with the reason
    await withTimeout(aliceRelay.publish(sign(aliceSk, 9021, [['h', chat]])), STEP_MS, 'alice join')
    await withTimeout(bobRelay.publish(sign(bobSk, 9021, [['h', chat]])), STEP_MS, 'bob join')

    // the relay answers a join with its own put-user (9000) naming the member
    const puts = await request(aliceRelay, [{ kinds: [9000], '#h': [chat], '#p': [alice] }])
    assert.equal(puts.closed, null)
    assert.equal(puts.events.length, 1, 'one relay-signed put-user for alice')

    const content = `hello from bob ${suffix}`
    let seen
    const arrived = new Promise((resolve) => { seen = resolve })
    const received = []
    const subscribed = new Promise((resolve, reject) => {
      aliceRelay.subscribe([{ kinds: [9], '#h': [chat] }], {
        onevent: (evt) => { received.push(evt); seen(evt) },
        oneose: resolve,
        onclose: (reason) => reject(new Error(`subscription CLOSED: ${reason}`)),
        eoseTimeout: STEP_MS + 1000,
      })
    })
    await withTimeout(subscribed, STEP_MS, 'EOSE on the chat subscription')
    assert.equal(received.length, 0, 'nothing stored in the new group yet')

    const msg = sign(bobSk, 9, [['h', chat]], content)
    await withTimeout(bobRelay.publish(msg), STEP_MS, 'bob message')

    const evt = await withTimeout(arrived, STEP_MS, 'live delivery of bob\'s message to alice')
    assert.equal(evt.id, msg.id)
    assert.equal(evt.kind, 9)
    assert.equal(evt.pubkey, bob)
    assert.equal(evt.content, content)
    assert.deepEqual(evt.tags, [['h', chat]])

    // a member also gets it back from storage
    const stored = await request(aliceRelay, [{ kinds: [9], '#h': [chat] }])
    assert.equal(stored.closed, null)
    assert.deepEqual(stored.events.map((e) => e.content), [content])
  })

  it('refuses a member of one group on another private group', async () => {
    const relay = track(await connect(url, aliceSk))

    await assert.rejects(
      relay.publish(sign(aliceSk, 9, [['h', other]], 'let me in')),
      { message: /^restricted: / },
    )

    const res = await request(relay, [{ kinds: [9], '#h': [other] }])
    assert.equal(res.eose, false, 'REQ must not run to EOSE')
    assert.match(res.closed ?? '', /^restricted: /)
    assert.equal(res.events.length, 0)
  })

  it('tells an unauthenticated reader to authenticate', async () => {
    const anon = track(await connect(url))
    const res = await request(anon, [{ '#h': [chat] }])
    assert.equal(res.eose, false, 'REQ must not run to EOSE')
    assert.match(res.closed ?? '', /^auth-required: /)
    assert.equal(res.events.length, 0)
  })

  it('never hands private group chat to non-members on unscoped filters', async () => {
    // A filter without #h is accepted, so only the per-event read rule
    // stands between these readers and the chat (stored and live).
    const anon = track(await connect(url))
    const outsiderSk = generateSecretKey()
    const outsider = track(await connect(url, outsiderSk))
    const bobRelay = track(await connect(url, bobSk))

    for (const reader of [anon, outsider]) {
      const res = await request(reader, [{ kinds: [9] }])
      assert.equal(res.closed, null)
      assert.deepEqual(res.events, [], 'stored group chat leaked')
    }

    const leaked = []
    for (const reader of [anon, outsider]) {
      await withTimeout(new Promise((resolve, reject) => {
        reader.subscribe([{ kinds: [9] }], {
          onevent: (evt) => leaked.push(evt),
          oneose: resolve,
          onclose: (reason) => reject(new Error(`CLOSED: ${reason}`)),
          eoseTimeout: STEP_MS + 1000,
        })
      }), STEP_MS, 'EOSE on the unscoped subscription')
    }
    // a subscriber that may read it proves the broadcast happened
    const member = track(await connect(url, aliceSk))
    let delivered
    await withTimeout(new Promise((resolve, reject) => {
      delivered = new Promise((got) => {
        member.subscribe([{ kinds: [9], '#h': [chat] }], {
          onevent: (evt) => { if (evt.content === 'second') got(evt) },
          oneose: resolve,
          onclose: (reason) => reject(new Error(`CLOSED: ${reason}`)),
          eoseTimeout: STEP_MS + 1000,
        })
      })
    }), STEP_MS, 'EOSE on the member subscription')
    await withTimeout(bobRelay.publish(sign(bobSk, 9, [['h', chat]], 'second')), STEP_MS, 'bob second message')
    await withTimeout(delivered, STEP_MS, 'live delivery to a member')
    // give the relay the same moment to (wrongly) reach the others
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.deepEqual(leaked, [], 'live group chat leaked to a non-member')
  })
})
