// Package privmsg sends and receives NIP-17 private messages: a kind 14
// chat rumor, sealed (kind 13, NIP-44 encrypted and signed by the author)
// and gift-wrapped (kind 1059, encrypted again and signed by a one-time
// key), as NIP-59 describes. The relay only ever sees the wrap: who wrote
// to whom and what is known to the two parties alone.
//
// The agent uses it to answer people who write to it privately. Unwrap is
// strict because the agent acts on what a message claims about its
// author: a rumor whose author is not the seal's signer is refused.
package privmsg

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// KindChat is the kind of a NIP-17 chat message rumor.
const KindChat = nostr.KindDirectMessage // 14

// Message is a private message after unwrapping.
type Message struct {
	// From is the author's public key (hex): the rumor's pubkey, which
	// Unwrap has checked is the key that signed the seal.
	From string
	// To are the recipients named by the rumor's p tags.
	To []string
	// Content is the plain text.
	Content string
	// Kind is the rumor's kind, 14.
	Kind int
	// ID is the rumor's id, the one a reply refers to in an e tag.
	ID string
	// CreatedAt is the rumor's time, the real one (the seal's and the
	// wrap's are randomised).
	CreatedAt nostr.Timestamp
	// Tags are the rumor's tags, p tags included.
	Tags nostr.Tags
	// WrapID is the id of the kind 1059 event it arrived in.
	WrapID string
}

// Errors that Unwrap's errors match with errors.Is.
var (
	// ErrNotForUs: the wrap's p tag names someone else.
	ErrNotForUs = errors.New("gift wrap not addressed to this key")
	// ErrInvalid: the wrap, seal or rumor is malformed, tampered with or
	// cannot be decrypted with this key.
	ErrInvalid = errors.New("invalid gift wrap")
	// ErrImpersonation: the rumor claims an author other than the seal's
	// signer, so anyone could have written it.
	ErrImpersonation = errors.New("rumor author is not the seal signer")
	// ErrUnsupportedKind: the rumor is valid but not a kind 14 chat.
	ErrUnsupportedKind = errors.New("unsupported rumor kind")
	// ErrTooLong (from Wrap): the content does not fit in a gift wrap.
	ErrTooLong = errors.New("message too long for a gift wrap")
)

// secp256k1's group order: a secret key must be below it and non-zero.
const curveOrder = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"

// keyPair checks a hex secret key and derives its public key. Errors never
// quote the secret, since they end up in logs (go-nostr's own do).
func keyPair(secret string) (sk, pk string, err error) {
	sk = strings.ToLower(strings.TrimSpace(secret))
	if len(sk) != 64 {
		return "", "", fmt.Errorf("privmsg: secret key must be 64 hex characters, got %d", len(sk))
	}
	if _, err := hex.DecodeString(sk); err != nil {
		return "", "", errors.New("privmsg: secret key is not hex")
	}
	if sk == strings.Repeat("0", 64) || sk >= curveOrder {
		return "", "", errors.New("privmsg: secret key is out of range for secp256k1")
	}
	pk, err = nostr.GetPublicKey(sk)
	if err != nil {
		return "", "", errors.New("privmsg: cannot derive the public key of the secret key")
	}
	return sk, pk, nil
}

// pTags returns the values of the p tags, in order.
func pTags(tags nostr.Tags) []string {
	var out []string
	for _, t := range tags {
		if len(t) >= 2 && t[0] == "p" {
			out = append(out, t[1])
		}
	}
	return out
}

// invalid wraps a reason as ErrInvalid.
func invalid(format string, args ...any) error {
	return fmt.Errorf("privmsg: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
