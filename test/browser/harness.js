// Test harness for the web UI: the real snowclaw binary on a free port,
// nostr-tools clients to seed it over websocket and the HTTP API, and
// headless Chromium pages with a NIP-07 provider backed by a key held in
// this node process.

import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

import WebSocket from 'ws'
import { chromium } from 'playwright-core'
import { finalizeEvent, getPublicKey } from 'nostr-tools/pure'
import * as nip44 from 'nostr-tools/nip44'
import { npubEncode } from 'nostr-tools/nip19'
import { hashPayload } from 'nostr-tools/nip98'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'

useWebSocketImplementation(WebSocket)

export const STEP_MS = 8000
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'

export const now = () => Math.floor(Date.now() / 1000)

export function withTimeout(promise, ms, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function sign(sk, kind, tags, content = '', createdAt = now()) {
  return finalizeEvent({ kind, tags, content, created_at: createdAt }, sk)
}

// buildBinary compiles cmd/snowclaw into a temp dir, unless SNOWCLAW_BIN
// names one already built (.ci/run builds it once for every client test).
export function buildBinary() {
  if (process.env.SNOWCLAW_BIN) return { bin: process.env.SNOWCLAW_BIN, dir: null }
  const dir = mkdtempSync(join(tmpdir(), 'snowclaw-ui-bin-'))
  const bin = join(dir, 'snowclaw')
  execFileSync('go', ['build', '-o', bin, './cmd/snowclaw'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  return { bin, dir }
}

// startRelay runs `snowclaw serve` on a free port with a fresh data dir
// and resolves with its ws:// and http:// base URLs once it listens.
// config is SNOWCLAW_* settings for this relay alone.
export async function startRelay(bin, ownerHex, config = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'snowclaw-ui-data-'))
  // the relay refuses unknown SNOWCLAW_* variables and known ones would
  // change its config under the test: pass only the test's own
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SNOWCLAW_'))), ...config }
  const child = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, '--owner', ownerHex], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stderr.on('data', (chunk) => { log += chunk })
  const url = new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/^snowclaw relay listening on (ws:\/\/\S+)$/)
      if (m) resolve(m[1])
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => reject(new Error(`relay exited before listening (code ${code}, signal ${signal}):\n${log}`)))
  })
  const ws = await withTimeout(url, 20000, 'relay start-up')
  return { child, dataDir, ws, http: ws.replace(/^ws/, 'http'), log: () => log }
}

export async function stopRelay(server) {
  if (!server) return
  const { child, dataDir } = server
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await withTimeout(exited, 8000, 'relay shutdown').catch(() => child.kill('SIGKILL'))
  }
  rmSync(dataDir, { recursive: true, force: true })
}

// connect opens a nostr-tools connection authenticated as sk (NIP-42).
export async function connect(url, sk) {
  const relay = new Relay(url)
  const signer = async (template) => finalizeEvent(template, sk)
  const authed = new Promise((resolve, reject) => {
    relay.onauth = async (template) => {
      setImmediate(() => relay.auth(signer).then(resolve, reject))
      return signer(template)
    }
  })
  await withTimeout(relay.connect(), STEP_MS, 'connect')
  await withTimeout(authed, STEP_MS, 'NIP-42 authentication')
  return relay
}

export function publish(relay, evt, what) {
  return withTimeout(relay.publish(evt), STEP_MS, `publish ${what || 'kind ' + evt.kind}`)
}

// memory builds a kind 30078 memory item (docs/events.md).
export function memory(sk, topic, summary, { tier = 'public', model, confidence = 0.8, source, tags = [], detail, createdAt } = {}) {
  const t = [['d', `snow:memory:${topic}`], ['snow:tier', tier], ['snow:confidence', String(confidence)],
    ['snow:source', source || npubEncode(getPublicKey(sk))], ...tags]
  if (model) t.push(['snow:model', model])
  const content = JSON.stringify(detail ? { summary, detail } : { summary })
  return sign(sk, 30078, t, content, createdAt)
}

// api calls the HTTP API signed by sk (NIP-98) and returns {status, body}.
export async function api(base, sk, method, path, payload) {
  const url = base + path
  const tags = [['u', url], ['method', method], ['nonce', randomBytes(8).toString('hex')]]
  const init = { method, headers: {} }
  if (payload !== undefined) {
    tags.push(['payload', hashPayload(payload)])
    init.body = JSON.stringify(payload)
    init.headers['Content-Type'] = 'application/json'
  }
  const auth = sign(sk, 27235, tags)
  init.headers.Authorization = 'Nostr ' + Buffer.from(JSON.stringify(auth)).toString('base64')
  const res = await fetch(url, init)
  const text = await res.text()
  let body = text
  try { body = JSON.parse(text) } catch { /* not JSON */ }
  return { status: res.status, body }
}

// launch starts headless Chromium. Playwright gives every launch a fresh
// temporary --user-data-dir of its own (it refuses one in args).
export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

// withExtension opens a context whose pages carry window.nostr (NIP-07)
// backed by sk in this process: the page never sees the secret.
export async function withExtension(browser, sk, options = {}) {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 }, ...options })
  const pk = getPublicKey(sk)
  await context.exposeFunction('__nip07', (op, a, b) => {
    switch (op) {
      case 'getPublicKey': return pk
      case 'signEvent': return { ...finalizeEvent({ kind: a.kind, tags: a.tags, content: a.content, created_at: a.created_at }, sk) }
      case 'nip44.encrypt': return nip44.encrypt(b, nip44.getConversationKey(sk, a))
      case 'nip44.decrypt': return nip44.decrypt(b, nip44.getConversationKey(sk, a))
    }
    throw new Error(`unknown NIP-07 call ${op}`)
  })
  await context.addInitScript(() => {
    const call = (op, a, b) => window.__nip07(op, a, b)
    window.nostr = {
      getPublicKey: () => call('getPublicKey'),
      signEvent: (t) => call('signEvent', t),
      nip44: { encrypt: (peer, text) => call('nip44.encrypt', peer, text), decrypt: (peer, ct) => call('nip44.decrypt', peer, ct) },
    }
  })
  return context
}

// watch collects what goes wrong in a page: uncaught errors, console
// errors (CSP violations among them) and the UI's own error box is read
// by the tests.
export function watch(page) {
  const problems = []
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`) })
  return problems
}

export const screenshotDir = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')
