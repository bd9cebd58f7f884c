package policies

import (
	"regexp"
	"strings"
	"sync"

	"github.com/snowclaw/snowclaw"
)

// Replacements written in place of secrets. They are plain words in brackets
// so a model reading them understands that something was removed on purpose.
const (
	RedactedNsec      = "[redacted nsec]"
	RedactedNcryptsec = "[redacted ncryptsec]"
)

// secretPattern finds bech32-encoded secret keys (NIP-19 nsec, NIP-49
// ncryptsec). No word boundary is required on purpose: a key pasted inside a
// URL or glued to other text must go too. At least 10 data characters are
// required so that a mere mention of the word "nsec1" in a discussion about
// keys survives.
var secretPattern = regexp.MustCompile(`(?i)(ncryptsec1|nsec1)[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{10,}`)

// KeyFilter sanitizes text before the agent stores it in a ring buffer or
// shows it to a model, and before the search index keeps it (docs/design.md
// "The agent"). A 64-character hex string looks exactly like a hex secret key, and
// nothing in the text tells a public key from a secret one, so only keys the agent already knows as public (its own, the
// owner's, configured ones, group members it has seen) pass unchanged.
type KeyFilter struct {
	mu    sync.RWMutex
	known map[string]struct{}
}

// Sanitized is the result of KeyFilter.Sanitize; the counts let the caller
// log or warn the sender without ever logging the secret itself.
type Sanitized struct {
	Text         string
	RedactedNsec int // nsec1… and ncryptsec1… strings removed
	FlaggedHex   int // unknown 64-char hex strings shortened
}

// NewKeyFilter returns a filter that lets the given public keys through.
// Keys may be hex or npub; anything that is not a valid public key is
// ignored, since letting an arbitrary value through would defeat the filter.
func NewKeyFilter(known ...string) *KeyFilter {
	f := &KeyFilter{known: make(map[string]struct{})}
	f.Know(known...)
	return f
}

// Know adds public keys (hex or npub) that pass unchanged. It is safe to call
// while other goroutines call Sanitize.
func (f *KeyFilter) Know(keys ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if hex, err := snowclaw.ParsePubkey(k); err == nil {
			f.known[hex] = struct{}{}
		}
	}
}

func (f *KeyFilter) isKnown(hex string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.known[strings.ToLower(hex)]
	return ok
}

// Sanitize redacts bech32 secret keys and flags unknown 64-char hex strings.
// Nothing else in the text changes, so sanitized text can be shown to people
// as well as to models.
func (f *KeyFilter) Sanitize(s string) Sanitized {
	var out Sanitized
	// Secrets go first: their bech32 data can contain hex-looking runs, and
	// a redacted secret must not be reported a second time as hex.
	if mayHoldSecret(s) {
		s = secretPattern.ReplaceAllStringFunc(s, func(m string) string {
			out.RedactedNsec++
			if strings.HasPrefix(strings.ToLower(m), "ncryptsec1") {
				return RedactedNcryptsec
			}
			return RedactedNsec
		})
	}
	out.Text = f.flagHex(s, &out.FlaggedHex)
	return out
}

// mayHoldSecret is false when secretPattern cannot match s: every match
// holds "ec1" in some case ((?i) folds e and c to E and C only; it is s
// that also matches ſ). The regexp tries every position of a text with no
// literal to anchor on, which made it most of the cost of sanitising a
// chat message (every message is sanitised twice: agent and index).
func mayHoldSecret(s string) bool {
	for i := strings.IndexByte(s, '1'); i >= 0; {
		if i >= 2 && s[i-1]|0x20 == 'c' && s[i-2]|0x20 == 'e' {
			return true
		}
		j := strings.IndexByte(s[i+1:], '1')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// flagHex replaces every maximal run of exactly 64 hex digits that is not a
// known public key. Longer runs (signatures, concatenated ids) and shorter
// ones are left alone: the rule is about things shaped like one key.
func (f *KeyFilter) flagHex(s string, flagged *int) string {
	var b strings.Builder
	last := 0 // s[last:start] has not been copied yet
	for i := 0; i < len(s); {
		if !isHexDigit(s[i]) {
			i++
			continue
		}
		start := i
		for i < len(s) && isHexDigit(s[i]) {
			i++
		}
		if i-start != 64 || f.isKnown(s[start:i]) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString("[unverified hex ")
		b.WriteString(s[start : start+8])
		b.WriteString("…]")
		last = i
		*flagged++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
