// The relay child process and the two client libraries of interop.test.js:
// welshman (what Flotilla is built on) and NDK (what NDK-based clients such
// as Chachi are built on), each wired the way those clients wire it, over
// `ws` in Node. Not a test file itself (node --test picks *.test.js).

import WebSocket from 'ws'
import { getPubkey, makeSecret, readRoomMeta, ROOM_META } from '@welshman/util'
import {
  AuthStateEvent,
  AuthStatus,
  Pool,
  Socket,
  SocketStatus,
  defaultSocketPolicies,
  makeSocketPolicyAuth,
  publish,
  request,
} from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import NDK, { NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'

// NDK opens its sockets with the global WebSocket, which Node 20 lacks;
// welshman goes through isomorphic-ws, which is `ws` in Node.
globalThis.WebSocket ??= WebSocket

// Both libraries leave timers armed that a browser tab never notices but
// that keep a Node process alive: every welshman Nip01Signer.sign arms a
// 30 s "Signing timed out" timer it never clears (signer/src/util.js
// signWithOptions), every publishOne one for its timeout, and each NDKRelay
// re-arms its updateValidationRatio timer every 30 s for ever. The timers
// the process arms are noted here, so that releaseTimers can let them go
// (unref) once every client is closed: the test file then exits when it is
// done instead of never.
const armed = new Set()
for (const name of ['setTimeout', 'setInterval']) {
  const arm = globalThis[name]
  globalThis[name] = function (...args) {
    const timer = arm.apply(this, args)
    armed.add(timer)
    return timer
  }
}
export function releaseTimers() {
  for (const timer of armed) timer.unref?.()
  armed.clear()
}

export { SCALE, STEP_MS, now, withTimeout, startRelay, stopRelay } from './relay.js'
import { SCALE, STEP_MS, withTimeout } from './relay.js'

export function newKey() {
  const secret = makeSecret()
  return { secret, pubkey: getPubkey(secret) }
}

// WelshmanUser is one person on @welshman/net with a pool of its own, as a
// logged-in Flotilla user is: the default socket policies plus an auth
// policy that signs the relay's challenge (Flotilla's authPolicy signs on
// its space relays). Without a secret it is an anonymous Flotilla visitor:
// the default policies and no auth policy (Flotilla's shouldAuth answers
// false without a pubkey).
export class WelshmanUser {
  constructor(url, secret) {
    this.url = url
    this.signer = secret ? Nip01Signer.fromSecret(secret) : null
    this.pubkey = secret ? getPubkey(secret) : null
    const policies = [...defaultSocketPolicies]
    if (this.signer) {
      policies.push(makeSocketPolicyAuth({ sign: (template) => this.signer.sign(template), shouldAuth: () => true }))
    }
    this.pool = new Pool({ makeSocket: (u) => new Socket(u, policies) })
    this.context = { pool: this.pool }
  }

  get socket() {
    return this.pool.get(this.url)
  }

  // ready opens the socket and, for a signed-in user, resolves once the
  // relay has accepted the NIP-42 authentication, so that what follows is
  // answered for this person.
  async ready() {
    const socket = this.socket
    socket.attemptToOpen()
    if (!this.signer) {
      if (socket.status === SocketStatus.Open) return
      await withTimeout(new Promise((resolve) => {
        const onStatus = (status) => {
          if (status === SocketStatus.Open) { socket.off('status', onStatus); resolve() }
        }
        socket.on('status', onStatus)
      }), STEP_MS, 'welshman socket open')
      return
    }
    if (socket.auth.status === AuthStatus.Ok) return
    await withTimeout(new Promise((resolve, reject) => {
      const onStatus = (status) => {
        if (status === AuthStatus.Ok) {
          socket.auth.off(AuthStateEvent.Status, onStatus)
          resolve()
        } else if (status === AuthStatus.Forbidden || status === AuthStatus.DeniedSignature) {
          socket.auth.off(AuthStateEvent.Status, onStatus)
          reject(new Error(`NIP-42 auth ${status}: ${socket.auth.details}`))
        }
      }
      socket.auth.on(AuthStateEvent.Status, onStatus)
      onStatus(socket.auth.status)
    }), STEP_MS, 'welshman NIP-42 authentication')
  }

  // send signs a template (as built by @welshman/util) and publishes it
  // with @welshman/net; it resolves with the relay's OK as welshman reports
  // it.
  async send(template) {
    await this.ready()
    const event = await this.signer.sign(template)
    const results = await publish({ event, relays: [this.url], context: this.context, timeout: STEP_MS })
    const result = Object.values(results)[0]
    if (result.status === 'timeout' || result.status === 'aborted') {
      throw new Error(`no OK for kind ${event.kind} ${JSON.stringify(event.tags)}: ${result.status}`)
    }
    return { ok: result.status === 'success', message: result.detail ?? '', event }
  }

  // fetch is a @welshman/net request that closes on EOSE; it resolves with
  // the events and whether EOSE was reached before the bound. Each filter
  // is its own REQ, as welshman sends them.
  async fetch(filters, { bound = STEP_MS, ready = true } = {}) {
    if (ready) await this.ready()
    let eose = false
    const closed = []
    const events = await request({
      relays: [this.url],
      filters,
      context: this.context,
      autoClose: true,
      signal: AbortSignal.timeout(bound),
      onEose: () => { eose = true },
      onClosed: (reason) => closed.push(reason),
    })
    return { events, eose, closed }
  }

  // fetchOne fetches a replaceable or addressable event of a group and
  // fails unless the relay answered with EOSE and at most one version.
  async fetchOne(kind, h) {
    const res = await this.fetch([{ kinds: [kind], '#d': [h] }])
    if (!res.eose) throw new Error(`no EOSE for kind ${kind} of ${h} (CLOSED: ${res.closed.join('; ')})`)
    if (res.events.length > 1) throw new Error(`${res.events.length} versions of kind ${kind} of ${h}`)
    return res.events[0] ?? null
  }

  // room is what Flotilla holds for a group: welshman's readRoomMeta of
  // its 39000 (roomsByUrl in Flotilla's src/app/core/state.ts), or null.
  async room(h) {
    const event = await this.fetchOne(ROOM_META, h)
    return event ? readRoomMeta(event) : null
  }

  close() {
    this.pool.clear()
  }
}

// NdkUser is one person on NDK, connected to this relay only (no outbox
// pool, no user relays: nothing leaves the machine) and signing the
// relay's NIP-42 challenge with NDK's signIn policy.
export class NdkUser {
  constructor(url, secret) {
    this.url = url
    this.ndk = new NDK({
      explicitRelayUrls: [url],
      signer: secret ? new NDKPrivateKeySigner(secret) : undefined,
      enableOutboxModel: false,
      autoConnectUserRelays: false,
    })
    this.signed = Boolean(secret)
    if (secret) this.ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk: this.ndk })
    this.relaySet = NDKRelaySet.fromRelayUrls([url], this.ndk)
  }

  async connect() {
    const authed = new Promise((resolve) => this.ndk.pool.once('relay:authed', resolve))
    await withTimeout(this.ndk.connect(STEP_MS), STEP_MS, 'NDK connect')
    if (this.signed) await withTimeout(authed, STEP_MS, 'NDK NIP-42 authentication')
    return this
  }

  close() {
    for (const relay of this.ndk.pool.relays.values()) relay.disconnect()
  }
}
