package snowclaw

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// ParsePubkey accepts an npub or a 64-char hex public key and returns the
// lowercase hex form.
func ParsePubkey(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "npub1") {
		prefix, v, err := nip19.Decode(s)
		if err != nil || prefix != "npub" {
			return "", fmt.Errorf("%q is not a valid npub: %v", s, err)
		}
		return v.(string), nil
	}
	if len(s) != 64 {
		return "", fmt.Errorf("%q is not a public key: want an npub1… or 64 hex characters", s)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("%q is not a public key: not hex", s)
	}
	return strings.ToLower(s), nil
}

// ParseSecret accepts an nsec or a 64-char hex secret key and returns hex.
func ParseSecret(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "nsec1") {
		prefix, v, err := nip19.Decode(s)
		if err != nil || prefix != "nsec" {
			return "", fmt.Errorf("not a valid nsec: %v", err)
		}
		return v.(string), nil
	}
	if len(s) != 64 {
		return "", fmt.Errorf("not a secret key: want an nsec1… or 64 hex characters")
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("not a secret key: not hex")
	}
	return strings.ToLower(s), nil
}

// NpubMatches reports whether a d-tag subject names this hex pubkey in any
// of the accepted forms: bech32 npub (canonical), full hex, or the legacy
// 32-char hex prefix (docs/events.md).
func NpubMatches(subject, pubkeyHex string) bool {
	if subject == "" || pubkeyHex == "" {
		return false
	}
	if strings.HasPrefix(subject, "npub1") {
		pk, err := ParsePubkey(subject)
		return err == nil && pk == pubkeyHex
	}
	s := strings.ToLower(subject)
	if len(s) == 64 {
		return s == pubkeyHex
	}
	return len(s) == 32 && strings.HasPrefix(pubkeyHex, s)
}

// NpubOf shows a key (hex or npub) as its npub; anything that is not a key
// is returned as given, so display code never loses a value it cannot parse.
func NpubOf(s string) string {
	pk, err := ParsePubkey(s)
	if err != nil {
		return s
	}
	if npub, err := nip19.EncodePublicKey(pk); err == nil {
		return npub
	}
	return s
}
