// The page's two channels to the relay it is served from: the HTTP API
// (docs/api.md), each request NIP-98 signed, and one websocket (NIP-01),
// authenticated with NIP-42 when the relay asks. Both act as the signer.

import { authEvent, httpAuth } from './auth.js'

const STEP_MS = 10000 // one relay answer; the relay is the page's own server

// ApiError carries the relay's message (with its NIP-01 prefix) and the
// HTTP status.
export class ApiError extends Error {
  constructor(message, status = 0) {
    super(message)
    this.status = status
  }
}

// query builds "?a=1&b=2" from the non-empty values.
export function query(params) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v !== '' && v !== undefined && v !== null && v !== false) q.set(k, v === true ? '1' : String(v))
  }
  const s = q.toString()
  return s ? '?' + s : ''
}

// call sends one signed request. payload (an object) becomes the JSON
// body; with text the raw answer is returned instead of parsed JSON.
export async function call(signer, method, path, payload, { text = false } = {}) {
  // the URL signed is the URL fetched, byte for byte (NIP-98 u tag)
  const url = new URL(path, location.origin).href
  const headers = { Authorization: await httpAuth(signer, url, method, payload) }
  let body
  if (payload !== undefined) {
    body = JSON.stringify(payload)
    headers['Content-Type'] = 'application/json'
  }
  let res
  try {
    res = await fetch(url, { method, headers, body, cache: 'no-store', credentials: 'omit' })
  } catch (err) {
    throw new ApiError(`${method} ${path}: the relay did not answer (${err.message})`)
  }
  const raw = await res.text()
  if (!res.ok) {
    let msg = raw.trim()
    let json = false
    try { msg = JSON.parse(raw).error || msg; json = true } catch { /* plain text error */ }
    // Go's mux answers an unknown route with plain "404 page not found"
    // (or 405 for a path known under another method)
    const missing = !json && (res.status === 404 || res.status === 405)
    if (missing) throw new ApiError(`${method} ${path.split('?')[0]}: this relay does not offer that endpoint (HTTP ${res.status})`, res.status)
    throw new ApiError(`${msg || 'error: no message'} (HTTP ${res.status} on ${method} ${path.split('?')[0]})`, res.status)
  }
  if (text) return raw
  try {
    return JSON.parse(raw)
  } catch {
    throw new ApiError(`${method} ${path}: the answer is not JSON`, res.status)
  }
}

// wsURL is the relay's own websocket address (NIP-42 auth events name it).
export function wsURL() {
  return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host
}

// RelayConn is a minimal NIP-01 client: REQ to EOSE or CLOSED, EVENT to OK.
// It answers the relay's AUTH challenge with the signer and waits for the
// relay's OK before sending anything, so every answer is for that key.
// The relay sends its challenge when something needs it, not on connect
// (a quiet client gets it after half a second), so RelayConn asks for it
// at once with a read that needs it: the signer's own gift wraps, limit
// 0, refused auth-required after the challenge (docs/access.md).
export class RelayConn {
  constructor(signer, url = wsURL()) {
    this.signer = signer
    this.url = url
    this.subs = new Map()
    this.oks = new Map()
    this.seq = 0
    this.authed = false
    this.authError = ''
    this.opening = null
  }

  ready() {
    if (!this.opening) this.opening = this.open()
    return this.opening
  }

  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url)
      this.ws = ws
      // a relay that sends no challenge serves public data only
      let waitAuth = null
      ws.onopen = () => {
        waitAuth = setTimeout(() => resolve(this), 2000)
        if (this.signer && this.signer.pubkey) {
          ws.send(JSON.stringify(['REQ', 'ask-auth', { kinds: [1059], '#p': [this.signer.pubkey], limit: 0 }]))
        }
      }
      ws.onerror = () => reject(new Error(`could not connect to the relay at ${this.url}`))
      ws.onclose = () => {
        clearTimeout(waitAuth)
        this.opening = null
        this.authed = false
        for (const s of this.subs.values()) s.done({ closed: 'error: the connection to the relay closed' })
        for (const p of this.oks.values()) p(false, 'error: the connection to the relay closed')
        this.subs.clear()
        this.oks.clear()
        reject(new Error('the relay closed the connection'))
      }
      ws.onmessage = (m) => {
        let msg
        try { msg = JSON.parse(m.data) } catch { return }
        if (msg[0] === 'AUTH') {
          clearTimeout(waitAuth)
          // a failed auth leaves a working, anonymous connection: public
          // data still reads, and authError says why nothing else does
          const anonymous = (why) => { this.authError = why; resolve(this) }
          authEvent(this.signer, this.url, msg[1]).then((evt) => {
            this.oks.set(evt.id, (ok, why) => {
              if (!ok) return anonymous(`the relay refused authentication: ${why}`)
              this.authed = true
              resolve(this)
            })
            ws.send(JSON.stringify(['AUTH', evt]))
          }, (err) => anonymous(`signing the relay's auth challenge failed: ${err.message}`))
          return
        }
        this.dispatch(msg)
      }
    })
  }

  dispatch([type, a, b, c]) {
    const sub = this.subs.get(a)
    switch (type) {
      case 'EVENT': if (sub) sub.events.push(b); break
      case 'EOSE': if (sub) sub.done({ closed: null }); break
      case 'CLOSED': if (sub) sub.done({ closed: b || 'closed' }); break
      case 'OK': { const p = this.oks.get(a); if (p) { this.oks.delete(a); p(b, c) } break }
      case 'NOTICE': {
        // the relay's explain breakdown of a search arrives as a NOTICE
        let body
        try { body = JSON.parse(a) } catch { break }
        const s = body && this.subs.get(body.explain)
        if (s) s.explain = body.results
        break
      }
    }
  }

  // req runs one subscription to its end: {events, closed, explain}.
  async req(filters, timeout = STEP_MS) {
    await this.ready()
    const id = 'ui' + (++this.seq)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.subs.delete(id)
        reject(new Error(`the relay did not finish the request in ${timeout / 1000} s`))
      }, timeout)
      const sub = {
        events: [],
        explain: null,
        done: ({ closed }) => {
          clearTimeout(timer)
          this.subs.delete(id)
          if (!closed && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(['CLOSE', id]))
          resolve({ events: sub.events, closed, explain: sub.explain })
        },
      }
      this.subs.set(id, sub)
      this.ws.send(JSON.stringify(['REQ', id, ...filters]))
    })
  }

  // publish sends a signed event and resolves on OK true; OK false rejects
  // with the relay's reason.
  async publish(evt, timeout = STEP_MS) {
    await this.ready()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.oks.delete(evt.id)
        reject(new Error(`the relay did not answer the publish in ${timeout / 1000} s`))
      }, timeout)
      this.oks.set(evt.id, (ok, why) => {
        clearTimeout(timer)
        if (ok) resolve(why)
        else reject(new Error(why || 'error: refused without a reason'))
      })
      this.ws.send(JSON.stringify(['EVENT', evt]))
    })
  }

  close() {
    if (this.ws) this.ws.close()
  }
}
