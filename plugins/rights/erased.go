package rights

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Erased is the list of what a forget or destroy removed, kept so the relay
// refuses to store it again: a client that still holds a copy, a sync from
// another relay or a reindex from a backup would otherwise bring it back.
// It is safe for concurrent use.
//
// The file holds one entry per line:
//
//	id <event id>
//	addr <sha256 of "kind:pubkey:d"> <unix time of the erasure>
//	author <sha256 of pubkey> <unix time of the erasure>
//
// Addresses and authors are hashed because a d tag like
// snowclaw:memory:npub:<npub> names the person, and the list exists to not
// keep anything about them. A hash cannot be read back, though whoever holds
// the file and guesses an address can still confirm the guess. Event ids
// are hashes already.
type Erased struct {
	mu      sync.RWMutex
	file    Journal
	ids     map[string]bool
	addrs   map[string]int64 // address hash → erased at (unix)
	authors map[string]int64 // pubkey hash → erased at (unix)
	now     func() time.Time
}

// OpenErased opens (or creates, owner-only) the list at path and loads it.
func OpenErased(path string) (*Erased, error) { return OpenErasedOn(FileJournal(path)) }

// OpenErasedOn opens the erasure list kept in j.
func OpenErasedOn(j Journal) (*Erased, error) {
	e := &Erased{ids: map[string]bool{}, addrs: map[string]int64{}, authors: map[string]int64{}, now: time.Now}
	if err := j.Open(e.applyLine); err != nil {
		return nil, fmt.Errorf("erasure list: %w", err)
	}
	e.mu.Lock()
	e.file = j
	e.mu.Unlock()
	return e, nil
}

// applyLine adds a stored entry (at open, or appended by another instance).
func (e *Erased) applyLine(line []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.parseLine(line)
}

func (e *Erased) parseLine(line []byte) error {
	f := strings.Fields(strings.ToLower(string(line)))
	if len(f) < 2 || len(f[1]) != 64 || !isHex(f[1]) {
		return errors.New("want \"<id|addr|author> <64 hex> [time]\"")
	}
	switch {
	case f[0] == "id" && len(f) == 2:
		e.ids[f[1]] = true
		return nil
	case (f[0] == "addr" || f[0] == "author") && len(f) == 3:
		at, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad time %q", f[2])
		}
		m := e.addrs
		if f[0] == "author" {
			m = e.authors
		}
		m[f[1]] = max(m[f[1]], at)
		return nil
	}
	return fmt.Errorf("unknown entry %q", f[0])
}

// AddIDs records erased event ids (64 hex). Nothing is written unless all
// are valid.
func (e *Erased) AddIDs(ids ...string) error {
	lines := make([]string, 0, len(ids))
	for _, id := range ids {
		id = strings.ToLower(strings.TrimSpace(id))
		if len(id) != 64 || !isHex(id) {
			return fmt.Errorf("erasure list: %.16q is not a 64-character hex event id", id)
		}
		lines = append(lines, id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out [][]byte
	seen := map[string]bool{}
	for _, id := range lines {
		if !e.ids[id] && !seen[id] {
			seen[id] = true
			out = append(out, []byte("id "+id))
		}
	}
	if err := e.write(out); err != nil {
		return err
	}
	for id := range seen {
		e.ids[id] = true
	}
	return nil
}

// AddAddresses records erased replaceable or addressable events by their
// address "kind:pubkey:d" (pubkey as hex or npub). Only versions created at
// or before now are blocked, so the agent may later write a new record
// under the same address; see ErasedAt.
func (e *Erased) AddAddresses(addrs ...string) error {
	hashes := make([]string, 0, len(addrs))
	for _, a := range addrs {
		h, err := addressHash(a)
		if err != nil {
			return fmt.Errorf("erasure list: %w", err)
		}
		hashes = append(hashes, h)
	}
	return e.addTimed("addr", e.addrs, hashes)
}

// AddAuthors records people (hex or npub) whose every event created at or
// before now is erased: after a destroy, copies of their old messages held
// elsewhere cannot be stored again, while what they write afterwards is
// accepted.
func (e *Erased) AddAuthors(pubkeys ...string) error {
	hashes := make([]string, 0, len(pubkeys))
	for _, p := range pubkeys {
		pk, err := snowclaw.ParsePubkey(p)
		if err != nil {
			return fmt.Errorf("erasure list: %w", err)
		}
		hashes = append(hashes, sha256Hex(pk))
	}
	return e.addTimed("author", e.authors, hashes)
}

func (e *Erased) addTimed(label string, m map[string]int64, hashes []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	at := e.now().Unix()
	var out [][]byte
	seen := map[string]bool{}
	for _, h := range hashes {
		// A later erasure of the same address moves its time forward; an
		// earlier one cannot unblock versions a later one covered.
		if m[h] < at && !seen[h] {
			seen[h] = true
			out = append(out, []byte(label+" "+h+" "+strconv.FormatInt(at, 10)))
		}
	}
	if err := e.write(out); err != nil {
		return err
	}
	for _, h := range hashes {
		m[h] = max(m[h], at)
	}
	return nil
}

func (e *Erased) write(lines [][]byte) error {
	if e.file == nil {
		return errors.New("erasure list: closed")
	}
	if err := e.file.Append(lines...); err != nil {
		return fmt.Errorf("erasure list: %w", err)
	}
	return nil
}

// ErasedAt reports when the address "kind:pubkey:d" was last erased. A new
// record written there must have a created_at after this time, or Blocks
// refuses it as one of the erased versions.
func (e *Erased) ErasedAt(addr string) (time.Time, bool) {
	h, err := addressHash(addr)
	if err != nil {
		return time.Time{}, false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	at, ok := e.addrs[h]
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(at, 0).UTC(), true
}

// Blocks reports whether evt must not be stored: its id was erased, its
// address was erased and this version is not newer than the erasure, or its
// author was erased and it was created before that.
func (e *Erased) Blocks(evt *snowclaw.Event) bool {
	if evt == nil {
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.ids[strings.ToLower(evt.ID)] {
		return true
	}
	created := int64(evt.CreatedAt)
	if len(e.addrs) > 0 && (nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind)) {
		d := ""
		if nostr.IsAddressableKind(evt.Kind) {
			d = evt.D
		}
		if at, ok := e.addrs[sha256Hex(snowclaw.Address(evt.Kind, strings.ToLower(evt.PubKey), d))]; ok && created <= at {
			return true
		}
	}
	if len(e.authors) > 0 {
		if at, ok := e.authors[sha256Hex(strings.ToLower(evt.PubKey))]; ok && created <= at {
			return true
		}
	}
	return false
}

// Len is the number of entries: ids, addresses and authors.
func (e *Erased) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.ids) + len(e.addrs) + len(e.authors)
}

// Close closes the file; later additions fail, Blocks keeps answering.
func (e *Erased) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file == nil {
		return nil
	}
	err := e.file.Close()
	e.file = nil
	return err
}

// addressHash parses "kind:pubkey:d" and hashes its canonical form, so the
// same address written with an npub or upper-case hex hashes alike. The d
// tag may itself contain colons.
func addressHash(addr string) (string, error) {
	k, rest, ok1 := strings.Cut(strings.TrimSpace(addr), ":")
	pk, d, ok2 := strings.Cut(rest, ":")
	kind, err := strconv.Atoi(k)
	if !ok1 || !ok2 || err != nil || kind < 0 {
		return "", errors.New("an address is \"kind:pubkey:d\"")
	}
	pub, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return "", fmt.Errorf("address: %w", err)
	}
	return sha256Hex(snowclaw.Address(kind, pub, d)), nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
