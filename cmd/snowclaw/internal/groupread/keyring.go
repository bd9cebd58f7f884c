// Package groupread opens encrypted group memories for a member's own
// client, as docs/group-encryption.md tells any client to: it reads the
// key deliveries addressed to the member (NIP-17 gift wraps), trusts
// only those the relay's agent wrote (its key learnt once from GET
// /api/v1/health and pinned), keeps the keys in memory only, and opens
// group-sealed memories with them. The CLI's search and `snowclaw mcp`
// read through it, so there is one client-side rule for both.
//
// The relay serves a group's sealed memories to its members only; a
// removed member no longer gets them, and could not open what was sealed
// after the removal with the keys they kept anyway.
package groupread

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// Fetch runs one REQ to its end as the member (authenticated with NIP-42,
// since gift wraps and group memories are read by their readers only).
type Fetch func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error)

// Limits of one Load: gift wraps are read newest first in pages, each
// opened (two NIP-44 decryptions), until a page brings nothing new.
const (
	pageSize = 500 // the relay clamps larger limits (policies.DefaultLimits)
	maxPages = 50
)

// MinReload is how long after a Load a memory sealed with a version the
// keyring lacks makes it read its deliveries again (a rotation since).
const MinReload = 10 * time.Second

// Keyring is one member's group keys.
type Keyring struct {
	secret string // hex
	me     string
	agent  func(ctx context.Context) (string, error)
	fetch  Fetch

	mu       sync.Mutex
	pinned   string                               // the agent's key, once learnt
	keys     map[string]map[int]snowclaw.GroupKey // group → version → key
	loadedAt time.Time
	refused  int // deliveries not trusted: not the agent's, forged, malformed
}

// NewKeyring holds the keys sent to secret's owner. agent tells the
// relay's agent key (AgentOf), asked once on the first Load; fetch reads
// the relay as the member.
func NewKeyring(secret string, agent func(ctx context.Context) (string, error), fetch Fetch) (*Keyring, error) {
	me, err := nostr.GetPublicKey(secret)
	if err != nil || secret == "" {
		return nil, errors.New("groupread: a valid secret key is needed")
	}
	return &Keyring{secret: secret, me: me, agent: agent, fetch: fetch, keys: map[string]map[int]snowclaw.GroupKey{}}, nil
}

// Load reads every gift wrap addressed to the member and keeps the group
// keys among them that pass the checks of docs/group-encryption.md
// ("What a client must check"): the seal's signer is the rumor's author
// (privmsg.Unwrap), that author is the pinned agent, every secret belongs
// to its public key and the current version is among them
// (snowclaw.ParseGroupKeyMessage). Anything else is counted and ignored.
func (k *Keyring) Load(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.load(ctx)
}

func (k *Keyring) load(ctx context.Context) error {
	k.loadedAt = time.Now()
	if k.pinned == "" {
		agent, err := k.agent(ctx)
		if err != nil {
			return fmt.Errorf("learning the relay's agent key: %w", err)
		}
		if !nostr.IsValid32ByteHex(agent) {
			return fmt.Errorf("the relay names no valid agent key (%q)", agent)
		}
		k.pinned = agent
	}
	f := nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {k.me}}, Limit: pageSize}
	seen := map[string]bool{}
	for range maxPages {
		evs, err := k.fetch(ctx, f)
		if err != nil {
			return fmt.Errorf("reading key deliveries: %w", err)
		}
		fresh := 0
		oldest := nostr.Timestamp(1<<62 - 1)
		for _, w := range evs {
			if seen[w.ID] {
				continue
			}
			seen[w.ID] = true
			fresh++
			oldest = min(oldest, w.CreatedAt)
			k.take(ctx, w)
		}
		if fresh == 0 {
			break
		}
		// inclusive: wraps sharing the oldest time are not skipped; the
		// ones already read do not count as new
		f.Until = &oldest
	}
	return nil
}

// take keeps the keys of one gift wrap, if it is a trusted delivery.
func (k *Keyring) take(ctx context.Context, w *nostr.Event) {
	msg, err := privmsg.Unwrap(ctx, w, k.secret)
	if errors.Is(err, privmsg.ErrUnsupportedKind) {
		return // another kind of private message
	}
	if err != nil {
		k.refused++
		return
	}
	if len(msg.Tags.Find(snowclaw.GroupKeyMessageType)) == 0 {
		return // a chat message, not a key
	}
	m, err := snowclaw.ParseGroupKeyMessage(msg.From, msg.Content, k.pinned)
	if err != nil {
		k.refused++
		return
	}
	vs := k.keys[m.Group]
	if vs == nil {
		vs = map[int]snowclaw.GroupKey{}
		k.keys[m.Group] = vs
	}
	for _, key := range m.Keys {
		vs[key.Version] = key
	}
}

// KeyOf is group g's key of version v, as far as the member was sent it.
func (k *Keyring) KeyOf(g string, v int) (snowclaw.GroupKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.keys[g][v]
	return key, ok
}

// Versions lists the key versions held for group g (tests, diagnostics).
func (k *Keyring) Versions(g string) []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []int
	for v := range k.keys[g] {
		out = append(out, v)
	}
	return out
}

// Refused is how many deliveries were not trusted.
func (k *Keyring) Refused() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.refused
}

// Open returns the plain content of a group-sealed event. The deliveries
// are read on first use, and again when the event's version is missing
// and the last read is older than MinReload (a key rotated since). An
// event sealed with a key the member was never sent stays closed:
// snowclaw.ErrNoGroupKey.
func (k *Keyring) Open(ctx context.Context, evt *snowclaw.Event) (string, error) {
	g, v, err := snowclaw.GroupSealOf(evt)
	if err != nil {
		return "", fmt.Errorf("%w: %v", snowclaw.ErrDecrypt, err)
	}
	k.mu.Lock()
	_, have := k.keys[g][v]
	if !have && (k.loadedAt.IsZero() || time.Since(k.loadedAt) >= MinReload) {
		err = k.load(ctx)
	}
	k.mu.Unlock()
	plain, oerr := snowclaw.OpenGroup(evt, k.KeyOf)
	if oerr != nil && err != nil {
		return "", errors.Join(oerr, err)
	}
	return plain, oerr
}
