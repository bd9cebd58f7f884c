// The relay child process every test file here runs: `snowclaw serve` on
// a free port with a fresh data directory, and the one timeout scale.
// Not a test file itself (node --test picks *.test.js).

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

// Every wait in the suite is on this one scale (README "Tests").
export const SCALE = Number(process.env.SNOWCLAW_TEST_TIMEOUT_SCALE) > 0 ? Number(process.env.SNOWCLAW_TEST_TIMEOUT_SCALE) : 1
export const STEP_MS = 5000 * SCALE // any single relay answer; the relay is local

export const now = () => Math.floor(Date.now() / 1000)

export function withTimeout(promise, ms, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// startRelay runs the binary on a free port with a fresh data dir and the
// given owner, and resolves once it has printed its URL (the pattern of
// both test files).
export function startRelay(bin, ownerHex) {
  const dataDir = mkdtempSync(join(tmpdir(), 'snowclaw-node-test-'))
  // The relay refuses unknown SNOWCLAW_* variables (SNOWCLAW_BIN and
  // SNOWCLAW_TEST_TIMEOUT_SCALE are two), and known ones would change its
  // config under the test: pass none.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SNOWCLAW_')))
  const child = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, '--owner', ownerHex], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = '' // kept for the start-up failure message
  child.stderr.on('data', (chunk) => { log += chunk })
  const url = new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout })
    lines.on('line', (line) => {
      const m = line.match(/^snowclaw relay listening on (ws:\/\/\S+)$/)
      if (m) resolve(m[1])
    })
    child.on('error', reject)
    child.on('exit', (code, signal) =>
      reject(new Error(`relay exited before listening (code ${code}, signal ${signal}):\n${log}`)))
  })
  return { child, dataDir, url: withTimeout(url, 15000 * SCALE, 'relay start-up') }
}

export async function stopRelay({ child, dataDir }) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    // graceful shutdown waits up to 5 s for clients; do not wait longer
    await withTimeout(exited, 8000 * SCALE, 'relay shutdown').catch(() => child.kill('SIGKILL'))
  }
  rmSync(dataDir, { recursive: true, force: true })
}
