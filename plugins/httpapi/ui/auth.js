// Who the page acts as. A signer is {pubkey, kind, sign(template), decrypt?}:
// a NIP-07 browser extension, or a session key that lives in this tab's
// memory only (never in localStorage, cookies or the URL) and is gone on
// reload. Every read the relay answers is decided by this key: NIP-42 on
// the websocket, NIP-98 on HTTP.

const NT = window.NostrTools

const now = () => Math.floor(Date.now() / 1000)

// extensionSigner logs in through window.nostr (NIP-07).
export async function extensionSigner() {
  const ext = window.nostr
  if (!ext || typeof ext.getPublicKey !== 'function' || typeof ext.signEvent !== 'function') {
    throw new Error('No NIP-07 extension found (window.nostr is missing). Install one, or use a session key.')
  }
  const pubkey = await ext.getPublicKey()
  if (!/^[0-9a-f]{64}$/.test(pubkey || '')) throw new Error('The extension returned no valid public key.')
  return {
    pubkey,
    kind: 'extension',
    sign: async (template) => {
      const evt = await ext.signEvent(template)
      if (!evt || evt.pubkey !== pubkey || !NT.verifyEvent(evt)) throw new Error('The extension returned an invalid signature.')
      return evt
    },
    decrypt: ext.nip44 && typeof ext.nip44.decrypt === 'function' ? (peer, ct) => ext.nip44.decrypt(peer, ct) : null,
  }
}

// sessionSigner signs with a key held in memory: a new one when secret is
// empty, else the nsec or hex given (the debug view's "as this agent").
export function sessionSigner(secret) {
  const sk = parseSecret(secret)
  return {
    pubkey: NT.getPublicKey(sk),
    // what the header says the page signs with: a typed key is the
    // person's own secret, not a throwaway session key
    kind: !secret ? 'session' : secret.trim().startsWith('nsec1') ? 'nsec' : 'hex',
    sign: async (template) => NT.finalizeEvent(template, sk),
    decrypt: async (peer, ct) => NT.nip44.decrypt(ct, NT.nip44.getConversationKey(sk, peer)),
  }
}

function parseSecret(secret) {
  secret = (secret || '').trim()
  if (!secret) return NT.generateSecretKey()
  if (secret.startsWith('nsec1')) {
    let d
    try { d = NT.nip19.decode(secret) } catch { throw new Error('That nsec is not valid (bad checksum or length).') }
    if (d.type !== 'nsec') throw new Error('Expected an nsec.')
    return d.data
  }
  if (/^[0-9a-f]{64}$/i.test(secret)) return NT.utils.hexToBytes(secret.toLowerCase())
  throw new Error('A secret key is an nsec1… or 64 hex characters.')
}

// authEvent answers a relay's NIP-42 challenge.
export function authEvent(signer, relayURL, challenge) {
  return signer.sign({ kind: 22242, created_at: now(), content: '', tags: [['relay', relayURL], ['challenge', challenge]] })
}

// httpAuth is the NIP-98 Authorization header for one request. payload is
// the object whose JSON.stringify is the body: hashPayload hashes exactly
// that string for the payload tag.
export async function httpAuth(signer, url, method, payload) {
  // the relay takes each event id once: a nonce keeps two identical
  // requests within one second apart
  const tags = [['u', url], ['method', method], ['nonce', nonce()]]
  if (payload !== undefined) tags.push(['payload', NT.nip98.hashPayload(payload)])
  const evt = await signer.sign({ kind: 27235, created_at: now(), content: '', tags })
  return 'Nostr ' + base64(JSON.stringify(evt))
}

function nonce() {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), b => b.toString(16).padStart(2, '0')).join('')
}

function base64(text) {
  let bin = ''
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b)
  return btoa(bin)
}
